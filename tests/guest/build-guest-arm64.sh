#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Assemble the arm64 test guest (the lane arm64) from Debian 12's arm64
# packages, at test time, on this amd64 machine:
#   - the kernel named by linux-image-arm64 (its .deb unpacked, never
#     installed),
#   - vmw_pvrdma.ko cross-built for it by contrib/pvrdma-guest-driver from
#     the same release's source (linux-source-X.Y, arch all) against its
#     arm64 headers (linux-headers-<abi>, unpacked beside the amd64 Kbuild
#     tools and common headers of the same release, which are installed:
#     Debian's own way of building modules for another architecture), with
#     gcc-aarch64-linux-gnu,
#   - an initramfs (cpio newc, gzip) of the arm64 packages of busybox-static,
#     kmod, iproute2, coreutils, rdma-core's user space (ibverbs-utils,
#     rdmacm-utils, ibverbs-providers) and perftest with everything they
#     depend on, tests/guest/linger-qp.c cross-compiled, and
#     tests/guest/init, the same /init as the amd64 guest's.
# Packages come through a private apt for arm64 (scripts/apt-foreign.sh);
# the system's apt and dpkg know nothing of arm64.  qemu-user-static runs
# the arm64 ldconfig and a smoke test of the tools inside the stage.
#
# Usage: build-guest-arm64.sh [outdir]     (default: build/guest-arm64)
# Idempotent, like build-guest.sh: each step is keyed and skipped when done.
# Afterwards <outdir>/vmlinuz, <outdir>/initrd.img and <outdir>/abi name the
# current guest; tests/guest/run-guest.sh boots it with GUEST_DIR=<outdir>
# and QEMU=build/qemu/qemu-system-aarch64.
#
# Environment: GUEST_FORCE=1 rebuilds the initramfs even if its key matches.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
outdir=${1:-$top/build/guest-arm64}
init_script=$here/init
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=../../scripts/apt-foreign.sh
. "$top/scripts/apt-foreign.sh"

say() { printf '[guest-arm64] %s\n' "$*"; }
die() { printf '[guest-arm64] error: %s\n' "$*" >&2; exit 1; }

cross=aarch64-linux-gnu
# The amd64 guest's modules for its data-path scenarios (NVMe over RDMA:
# nvme-rdma, nvmet-rdma and brd); not rxe, NFS or the ACPI button.
modules="configfs ib_core ib_uverbs ib_umad ib_cm iw_cm rdma_cm rdma_ucm vmxnet3 vmw_pvrdma nvme-rdma nvmet-rdma brd"
# arm64 packages in the initramfs, with their dependencies.
user_pkgs=(busybox-static kmod iproute2 coreutils libc-bin ibverbs-utils
           rdmacm-utils ibverbs-providers perftest)
# Dependencies that only maintainer scripts or login need: left out.
skip_pkgs=" debconf cdebconf dpkg adduser passwd install-info tar readline-common
 libpam0g libpam-modules libpam-modules-bin libsemanage2 libsemanage-common
 libsepol2 libnewt0.52 libslang2 libtextwrap1 libdebian-installer4 libaudit1
 libaudit-common libcap-ng0 pci.ids "
# Programs that must run in the guest (checked in the stage under qemu-user).
check_bins=(/usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong /usr/bin/ib_write_bw
            /usr/bin/rping /usr/bin/kmod /usr/bin/ip /usr/bin/stdbuf)
host_pkgs=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static busybox-static cpio kmod gzip
           xz-utils make file)

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
exec 9>"$outdir/.lock"
if ! flock -n 9; then
    say "waiting for another build-guest-arm64.sh on $outdir"
    flock 9
fi

say "checking host packages"
bash "$top/scripts/apt-setup.sh" "${host_pkgs[@]}" ||
    die "could not install the host packages: ${host_pkgs[*]}"
qemu_user=$(command -v qemu-aarch64-static) || die "no qemu-aarch64-static (qemu-user-static)"

foreign_apt_setup "$top" "$outdir/apt" arm64 || die "no private apt for arm64"

# --- kernel ABI ------------------------------------------------------------
# The arm64 kernel named by the private arm64 index, and the arch-independent
# parts of the same release installed on this machine from the system's
# index: the source, the common headers and the Kbuild tools (amd64
# programs, which is what a cross build runs).  The two indexes are fetched
# at different times (the system's at most every 12 hours, scripts/
# apt-setup.sh) and bookworm-security's arm64 builds can trail its amd64
# ones, so they may name different releases for a while.  pick_kernel
# fails then, and is tried once more after both indexes are fetched again.
pick_kernel() {
    local p v
    abi=$(apt-cache "${foreign_apt[@]}" depends linux-image-arm64 2>/dev/null |
          awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { sub(/^linux-image-/, "", $2); print $2; exit }')
    case $abi in
        [0-9]*.[0-9]*-arm64) ;;
        *) say "linux-image-arm64 names no kernel ABI (got '$abi'; see $outdir/apt/update.log)"
           return 1 ;;
    esac
    kver=$(echo "$abi" | cut -d. -f1-2)          # 6.1
    base=${abi%-arm64}                           # 6.1.0-56
    img_ver=$(apt-cache "${foreign_apt[@]}" policy "linux-image-$abi" |
              awk '$1 == "Candidate:" { print $2; exit }')
    say "kernel ABI $abi ($img_ver)"
    say "checking linux-source-$kver, linux-headers-$base-common, linux-kbuild-$kver"
    bash "$top/scripts/apt-setup.sh" "linux-source-$kver=$img_ver" "linux-headers-$base-common=$img_ver" \
        "linux-kbuild-$kver=$img_ver" || {
        say "could not install the release's source, common headers and Kbuild"
        return 1
    }
    for p in "linux-headers-$base-common" "linux-kbuild-$kver"; do
        v=$(dpkg-query -W -f='${Version}' "$p")
        # Kbuild's tools are the release's (6.1.192) whatever the Debian
        # revision, and the archive keeps only its newest: a -3 of
        # bookworm-security beside an arm64 kernel still at -2
        case $p in linux-kbuild-*) [ "${v%-*}" = "${img_ver%-*}" ] && continue ;; esac
        [ "$v" = "$img_ver" ] || {
            say "$p is $v, the arm64 kernel $img_ver"
            return 1
        }
    done
}
if ! pick_kernel; then
    say "fetching the system's and the arm64 package indexes again"
    APT_SETUP_UPDATE=1 bash "$top/scripts/apt-setup.sh" ||
        die "apt-get update of the system's index failed"
    FOREIGN_APT_UPDATE=1 foreign_apt_setup "$top" "$outdir/apt" arm64 ||
        die "no private apt for arm64"
    pick_kernel || die "the arm64 kernel and this machine's linux-headers-$base-common/linux-kbuild-$kver differ (above)"
fi
work=$outdir/$abi
root=$work/root
hdr=$work/headers
mkdir -p "$work"
src_tar=/usr/src/linux-source-$kver.tar.xz

# --- kernel image and headers (arm64 packages, unpacked) --------------------
if [ "$(cat "$work/.stamp-kernel" 2>/dev/null)" != "$img_ver" ]; then
    rm -rf "$root" "$hdr" "$work/dl"
    say "downloading linux-image-$abi and linux-headers-$abi (arm64)"
    foreign_apt_download "$work/dl" "linux-image-$abi" "linux-headers-$abi" ||
        die "apt-get download of the arm64 kernel failed"
    dpkg-deb -x "$work/dl/linux-image-${abi}_"*.deb "$root" || die "dpkg-deb -x of the kernel failed"
    dpkg-deb -x "$work/dl/linux-headers-${abi}_"*.deb "$hdr" || die "dpkg-deb -x of the headers failed"
    [ -f "$root/boot/vmlinuz-$abi" ] || die "linux-image-$abi holds no boot/vmlinuz-$abi"
    # usr/src/linux-headers-<abi>/scripts -> ../../lib/linux-kbuild-X.Y/scripts:
    # the installed amd64 Kbuild tools
    mkdir -p "$hdr/usr/lib"
    ln -sfn "/usr/lib/linux-kbuild-$kver" "$hdr/usr/lib/linux-kbuild-$kver"
    rm -rf "$work/dl"
    echo "$img_ver" >"$work/.stamp-kernel"
else
    say "kernel $abi already unpacked"
fi
hdr_dir=$hdr/usr/src/linux-headers-$abi
[ -f "$hdr_dir/Makefile" ] || die "no $hdr_dir/Makefile"

# --- vmw_pvrdma.ko, cross-built -----------------------------------------------
driver_tool=$top/contrib/pvrdma-guest-driver/pvrdma-guest-driver
ko=$work/vmw_pvrdma/vmw_pvrdma.ko
mod_key="$abi $img_ver $(sha256sum "$driver_tool" | cut -c1-16)"
if [ ! -f "$ko" ] || [ "$(cat "$work/.stamp-vmw_pvrdma" 2>/dev/null)" != "$mod_key" ]; then
    rm -rf "$work/vmw_pvrdma"
    mkdir -p "$work/vmw_pvrdma"
    say "cross-building vmw_pvrdma.ko with $(basename "$driver_tool") (ARCH=arm64 CROSS_COMPILE=$cross-)"
    ARCH=arm64 CROSS_COMPILE=$cross- "$driver_tool" --kernel "$abi" --headers "$hdr_dir" \
        --source "$src_tar" --out "$work/vmw_pvrdma" --no-apt build \
        >"$work/vmw_pvrdma.build.log" 2>&1 || {
        tail -n 30 "$work/vmw_pvrdma.build.log" >&2
        die "$driver_tool build failed (log: $work/vmw_pvrdma.build.log)"
    }
    file "$ko" | grep -q 'ELF 64-bit LSB relocatable, ARM aarch64' ||
        die "$ko is not an arm64 module: $(file "$ko")"
    echo "$mod_key" >"$work/.stamp-vmw_pvrdma"
else
    say "vmw_pvrdma.ko for $abi already built"
fi
# Into the kernel's tree, where depmod and stage_kmods find it.
mkdir -p "$root/lib/modules/$abi/updates"
cp "$ko" "$root/lib/modules/$abi/updates/vmw_pvrdma.ko"
depmod -b "$root" "$abi" || die "depmod -b $root $abi failed"

# --- user space (arm64 packages, unpacked) ----------------------------------
user=$outdir/user
closure=()
skip_pkgs=" $(echo $skip_pkgs) "          # one line, for the match below
for p in $(foreign_apt_closure "${user_pkgs[@]}"); do
    case $skip_pkgs in *" $p "*) continue ;; esac
    closure+=("$p")
done
user_key=$(for p in "${closure[@]}"; do
    printf '%s=%s\n' "$p" "$(apt-cache "${foreign_apt[@]}" policy "$p" | awk '$1 == "Candidate:" { print $2; exit }')"
done)
if [ "$(cat "$user/.stamp" 2>/dev/null)" != "$user_key" ]; then
    rm -rf "$user"
    mkdir -p "$user/root"
    say "downloading ${#closure[@]} arm64 packages: ${closure[*]}"
    foreign_apt_download "$user/dl" "${closure[@]}" || die "apt-get download of the arm64 user space failed"
    for deb in "$user"/dl/*.deb; do
        dpkg-deb -x "$deb" "$user/root" || die "dpkg-deb -x $deb failed"
    done
    rm -rf "$user/dl"
    echo "$user_key" >"$user/.stamp"
else
    say "arm64 user space up to date (${#closure[@]} packages)"
fi

# --- our own guest program ------------------------------------------------------
linger_src=$here/linger-qp.c
linger=$work/linger-qp.so
if [ ! -f "$linger" ] || [ "$linger_src" -nt "$linger" ]; then
    say "cross-compiling $(basename "$linger_src")"
    "$cross-gcc" -O2 -Wall -shared -fPIC -o "$linger" "$linger_src" -ldl ||
        die "could not cross-compile $linger_src"
fi

# --- initramfs -------------------------------------------------------------
initrd_key=$( {
    echo "$abi $img_ver $modules"
    echo "$user_key"
    sha256sum "$init_script" "${BASH_SOURCE[0]}" "$here/lib.sh" "$ko" "$linger" | awk '{print $1}'
} | sha256sum | awk '{print $1}')
initrd=$work/initrd.img
if [ -f "$initrd" ] && [ "$(cat "$work/.stamp-initrd" 2>/dev/null)" = "$initrd_key" ] &&
   [ "${GUEST_FORCE:-0}" != 1 ]; then
    say "initramfs for $abi up to date"
else
    stage=$work/initramfs
    say "assembling the initramfs in $stage"
    stage_skeleton "$stage" || die "could not lay out $stage (needs root for mknod)"
    # The packages' files, / merged into /usr as the skeleton's links say;
    # no documentation.
    for d in bin sbin lib; do
        [ ! -d "$user/root/$d" ] || cp -a "$user/root/$d/." "$stage/usr/$d/" || die "could not copy /$d"
    done
    cp -a "$user/root/usr/." "$stage/usr/" || die "could not copy /usr"
    [ ! -d "$user/root/etc" ] || cp -a "$user/root/etc/." "$stage/etc/"
    rm -rf "$stage"/usr/share/{doc,man,info,locale,lintian,bug,bash-completion}
    install -m 0644 "$linger" "$stage/usr/lib/linger-qp.so"
    # busybox for everything no real tool provides; the host's busybox of
    # the same package lists the applets
    host_busybox=$(command -v busybox) || die "no busybox on the host (busybox-static)"
    stage_busybox "$stage/usr/bin/busybox" "$stage" "$host_busybox" ||
        die "could not put busybox into $stage"
    for a in modprobe insmod rmmod lsmod modinfo depmod; do
        ln -sf ../bin/kmod "$stage/usr/sbin/$a"
    done
    # shellcheck disable=SC2086
    stage_kmods "$root" "$abi" "$stage" "$work/modules.order.guest" $modules ||
        die "could not put the modules into the initramfs"
    sed 's|.*/||; s|\.ko$||' "$work/modules.order.guest" >"$stage/etc/guest-modules"
    printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
        >"$stage/etc/passwd"
    printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$stage/etc/group"
    printf '127.0.0.1 localhost\n10.0.2.15 guest\n' >"$stage/etc/hosts"
    echo guest >"$stage/etc/hostname"
    echo "$abi" >"$stage/etc/guest-abi"
    install -m 0755 "$init_script" "$stage/init"

    # The arm64 ldconfig writes the loader's cache (the multiarch library
    # directories are in ld.so.conf.d, not built into the loader), and
    # every program must then find its libraries: both run under
    # qemu-user, inside the stage.
    cp "$qemu_user" "$stage/qemu-aarch64-static"
    # qemu-user takes options from QEMU_* variables, and make exports
    # QEMU_VERSION (10.0 or 10.2): qemu-aarch64 then printed its version
    # and ran nothing, so every check below failed under make check.
    # Only PATH goes in.
    in_stage() { env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin chroot "$stage" /qemu-aarch64-static "$@"; }
    in_stage /usr/sbin/ldconfig ||
        die "the arm64 ldconfig failed in the stage"
    for p in "${check_bins[@]}" /usr/lib/linger-qp.so; do
        out=$(in_stage /usr/lib/ld-linux-aarch64.so.1 --list "$p" 2>&1) ||
            die "$p does not link inside the initramfs: $out"
        ! echo "$out" | grep -q 'not found' ||
            die "$p misses libraries inside the initramfs: $(echo "$out" | grep 'not found' | tr -s ' \t' ' ')"
    done
    out=$(in_stage /usr/bin/ibv_devinfo --help 2>&1 || true)
    echo "$out" | grep -q '^Usage:' || die "ibv_devinfo does not run inside the stage: $out"
    [ -f "$stage/etc/libibverbs.d/vmw_pvrdma.driver" ] &&
        ls "$stage"/usr/lib/$cross/libibverbs/libvmw_pvrdma-rdmav*.so >/dev/null 2>&1 ||
        die "the stage has no libvmw_pvrdma provider (ibverbs-providers)"
    rm -f "$stage/qemu-aarch64-static"

    say "packing $(du -sh "$stage" | cut -f1) into $initrd"
    pack_initramfs "$stage" "$initrd" || die "cpio/gzip of $stage failed"
    echo "$initrd_key" >"$work/.stamp-initrd"
fi

ln -sfn "$abi/root/boot/vmlinuz-$abi" "$outdir/vmlinuz"
ln -sfn "$abi/initrd.img" "$outdir/initrd.img"
echo "$abi" >"$outdir/abi"
say "ready: $outdir/vmlinuz $outdir/initrd.img ($(du -h "$initrd" | cut -f1), ABI $abi)"
