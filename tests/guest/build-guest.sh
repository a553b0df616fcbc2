#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Assemble the lane-2 test guest from Debian packages, at test time:
#   - a Debian kernel (the ABI named by linux-image-amd64, or $GUEST_KERNEL),
#   - vmw_pvrdma.ko built out of tree from the same kernel release's source
#     (Debian does not enable CONFIG_INFINIBAND_VMWARE_PVRDMA) by
#     contrib/pvrdma-guest-driver, registered with DKMS in the kernel's tree,
#   - an initramfs (cpio newc, gzip) holding busybox-static, the RDMA and
#     vmxnet3 modules, kmod, and the RDMA user space copied from this host
#     with all of its shared libraries; its /init is tests/guest/init,
#   - user space whose packages would start daemons on this host: NFS
#     (nfs-common, nfs-kernel-server, rpcbind) for the NFS-over-RDMA
#     scenario, open-iscsi for iSER: apt-get download'ed and extracted
#     into <outdir>/debs/root, never installed on this host,
#   - tests/bench/doorbell-cost.c, compiled here against the host's
#     libibverbs (make bench's doorbell figures), and
#     tests/guest/linger-qp.c, the preload library that holds a QP's
#     teardown back (init's two-guest ping-pongs; see the file),
#     tests/guest/ucp-pattern.c (against libucx-dev) and
#     tests/guest/mpi-check.c (with mpicc), with Open MPI's mpirun, orted,
#     its components (but PSM's), PMIx's plugins and /etc/openmpi from
#     this host's openmpi-bin (init's ucp_pattern_* and mpi_*).
#
# Usage: build-guest.sh [outdir]        (default: build/guest in the tree)
#
# Idempotent: every step is keyed on the kernel ABI (and the initramfs on a
# hash of its inputs), and skipped when already done.  Afterwards
#   <outdir>/vmlinuz, <outdir>/initrd.img     point at the current guest,
#   <outdir>/abi                              holds the kernel ABI.
#
# Environment:
#   GUEST_KERNEL       the package naming the kernel (default
#                      linux-image-amd64: Debian 12's 6.1; the lane
#                      guest-6.12 uses linux-image-6.12-amd64)
#   GUEST_KERNEL_ABI   use this ABI instead of resolving $GUEST_KERNEL
#   GUEST_MODULES      modules put in the initramfs (with their deps)
#   GUEST_FORCE=1      rebuild the initramfs even if its key matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
outdir=${1:-$top/build/guest}
apt_setup=$top/scripts/apt-setup.sh
init_script=$here/init
# shellcheck source=lib.sh
. "$here/lib.sh"

say() { printf '[guest] %s\n' "$*"; }
die() { printf '[guest] error: %s\n' "$*" >&2; exit 1; }

[ -x "$apt_setup" ] || die "missing $apt_setup (the project's apt helper)"
[ -f "$init_script" ] || die "missing the guest's init script $init_script"

# Modules the guest may load; their dependencies are added automatically.
# vmxnet3 must be bound before vmw_pvrdma probes (the driver pairs with the
# vmxnet3 function 0 of its slot).
# nvme-rdma, nvmet-rdma and brd: the NVMe-oF scenario (host, target, RAM disk).
# button and evdev: the ACPI power button (pvrdma.acpi=1: virsh shutdown in lane libvirt).
# nfsd, nfs, nfsv3, nfsv4 and rpcrdma (svcrdma and xprtrdma): NFS over RDMA.
# ib_isert (LIO's iSER target, with target_core_iblock over brd; its login
# asks the crypto API for crc32c, crc32c_generic), ib_iser (open-iscsi's
# iSER initiator), iscsi_tcp (which iscsiadm wants loaded for a discovery
# over TCP) and sd_mod (the SCSI disk): iSER.
modules=${GUEST_MODULES:-configfs ib_core ib_uverbs ib_umad ib_cm iw_cm rdma_cm rdma_ucm vmxnet3 vmw_pvrdma crc32_generic rdma_rxe nvme-rdma nvmet-rdma brd button evdev nfsd nfs nfsv3 nfsv4 rpcrdma ib_isert target_core_iblock crc32c_generic ib_iser iscsi_tcp sd_mod}

# User space copied into the guest (found in PATH on the host).  dd is
# coreutils' (the NVMe-oF scenario's O_DIRECT I/O wants its aligned buffers).
user_bins=(
    ibv_devinfo ibv_devices ibv_rc_pingpong ibv_uc_pingpong ibv_ud_pingpong
    ibv_srq_pingpong ibv_xsrq_pingpong ibv_asyncwatch
    rping ucmatose udaddy rstream
    rdma_server rdma_client rcopy riostream
    ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw
    ib_send_lat ib_write_lat ib_read_lat ib_atomic_lat
    rdma ip kmod stdbuf
    dd
    ucx_perftest ucx_info
    qperf fi_pingpong fi_info
    mpirun orted
)
# NFS user space (init's nfs_rdma) and open-iscsi (init's iser): not
# installed on this host, which would start an NFS server and iscsid
# here, but downloaded (apt-get download) with the libraries of theirs
# the host lacks, and extracted into <outdir>/debs/root; the programs
# (and dl_files) are copied from that tree.
dl_pkgs=(nfs-common nfs-kernel-server rpcbind open-iscsi)
dl_bins=(/sbin/mount.nfs /sbin/rpcbind /usr/sbin/rpcinfo /usr/sbin/rpc.mountd
         /usr/sbin/exportfs /usr/sbin/rpc.nfsd /usr/sbin/nfsstat
         /sbin/iscsid /sbin/iscsiadm /sbin/iscsi-iname)
dl_files=(/etc/iscsi/iscsid.conf)
# Host packages that provide the above, the tools to assemble the guest,
# and the firmware run-guest.sh hands to QEMU.
host_pkgs=(busybox-static cpio kmod gzip xz-utils make gcc dkms libibverbs-dev
           rdma-core ibverbs-providers ibverbs-utils rdmacm-utils perftest
           iproute2 libc-bin coreutils seabios ipxe-qemu ucx-utils
           libtirpc-common netbase qperf libfabric-bin libucx-dev
           openmpi-bin libopenmpi-dev)

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

# One builder at a time per output directory.
exec 9>"$outdir/.lock"
if ! flock -n 9; then
    say "waiting for another build-guest.sh on $outdir"
    flock 9
fi

# --- host packages ---------------------------------------------------------
say "checking host packages"
"$apt_setup" "${host_pkgs[@]}" ||
    die "could not install the host packages: ${host_pkgs[*]}"

# --- kernel ABI ------------------------------------------------------------
abi=${GUEST_KERNEL_ABI:-}
meta=${GUEST_KERNEL:-linux-image-amd64}
if [ -z "$abi" ]; then
    abi=$(apt-cache depends "$meta" 2>/dev/null |
          awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { sub(/^linux-image-/, "", $2); print $2; exit }' || true)
    [ -n "$abi" ] ||
        die "apt-cache depends $meta names no linux-image-<abi> (run scripts/apt-setup.sh, which runs apt-get update)"
fi
case $abi in
    [0-9]*.[0-9]*-amd64) ;;
    *) die "unexpected kernel ABI '$abi' (want e.g. 6.1.0-NN-amd64 or 6.12.NN+deb12-amd64)" ;;
esac
kver=$(echo "$abi" | cut -d. -f1-2)          # 6.1
src_pkg=linux-source-$kver
src_tar=/usr/src/$src_pkg.tar.xz
say "kernel ABI $abi (source package $src_pkg)"

work=$outdir/$abi
mkdir -p "$work"
root=$work/root

# --- kernel image ----------------------------------------------------------
img_pkg=linux-image-$abi
if [ ! -e "$work/.stamp-kernel" ]; then
    rm -rf "$work/dl" "$root"
    mkdir -p "$work/dl"
    say "downloading $img_pkg"
    (cd "$work/dl" && apt-get download -qq "$img_pkg" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2) ||
        true
    deb=$(ls "$work/dl/${img_pkg}_"*.deb 2>/dev/null | head -1 || true)
    [ -n "$deb" ] || die "apt-get download $img_pkg gave no .deb (is the Debian archive reachable?)"
    say "extracting $(basename "$deb")"
    dpkg-deb -x "$deb" "$root" || die "dpkg-deb -x $deb failed"
    [ -f "$root/boot/vmlinuz-$abi" ] || die "$deb holds no boot/vmlinuz-$abi"
    [ -d "$root/lib/modules/$abi/kernel" ] || die "$deb holds no lib/modules/$abi"
    dpkg-deb -f "$deb" Version >"$work/kernel-version"
    rm -rf "$work/dl"        # 70 MB; the extracted tree is all we need
    touch "$work/.stamp-kernel"
else
    say "kernel $abi already extracted"
fi
img_ver=$(cat "$work/kernel-version")

# --- headers and source ----------------------------------------------------
hdr_pkg=linux-headers-$abi
say "checking $hdr_pkg and $src_pkg"
"$apt_setup" "$hdr_pkg" "$src_pkg" || die "could not install $hdr_pkg / $src_pkg"
src_ver=$(dpkg-query -W -f='${Version}' "$src_pkg" 2>/dev/null || true)
if [ "$src_ver" != "$img_ver" ]; then
    say "$src_pkg is $src_ver but the kernel is $img_ver: installing $src_pkg=$img_ver"
    if "$apt_setup" "$src_pkg=$img_ver"; then
        src_ver=$(dpkg-query -W -f='${Version}' "$src_pkg")
    else
        say "warning: $src_pkg=$img_ver is not available; building vmw_pvrdma from $src_ver"
    fi
fi
hdr_dir=/usr/src/linux-headers-$abi
[ -f "$hdr_dir/Makefile" ] || die "$hdr_dir/Makefile missing after installing $hdr_pkg"
[ -f "$src_tar" ] || die "$src_tar missing after installing $src_pkg"

# --- vmw_pvrdma.ko ---------------------------------------------------------
# Built and installed into the kernel's tree by the tool users run in their
# guests (contrib/pvrdma-guest-driver), with DKMS as in a guest that has it,
# so that every run of the lane tests it.
driver_tool=$top/contrib/pvrdma-guest-driver/pvrdma-guest-driver
# (vmw_pvrdma.ko, or .ko.xz where the kernel compresses its modules: 6.12)
installed_ko() {
    ls "$root/lib/modules/$abi/updates/dkms/vmw_pvrdma.ko"* 2>/dev/null | head -1
}
ko=$(installed_ko || true)
mod_key="$abi $src_ver $(sha256sum "$driver_tool" | cut -c1-16)"
if [ -z "$ko" ] || [ "$(cat "$work/.stamp-vmw_pvrdma" 2>/dev/null)" != "$mod_key" ]; then
    driver() {
        "$driver_tool" --kernel "$abi" --headers "$hdr_dir" --source "$src_tar" \
            --root "$root" --dkms --no-apt "$@"
    }
    rm -f "$root/lib/modules/$abi/extra/vmw_pvrdma.ko"   # the layout before
    say "building and installing vmw_pvrdma.ko with $(basename "$driver_tool")"
    driver remove >"$work/vmw_pvrdma.build.log" 2>&1 &&
        driver install >>"$work/vmw_pvrdma.build.log" 2>&1 || {
        tail -n 30 "$work/vmw_pvrdma.build.log" >&2
        die "$driver_tool failed (full log: $work/vmw_pvrdma.build.log)"
    }
    ko=$(installed_ko) || die "$driver_tool installed no vmw_pvrdma.ko in $root/lib/modules/$abi/updates/dkms"
    vm=$(modinfo -F vermagic "$ko" | awk '{print $1}')
    [ "$vm" = "$abi" ] || die "vmw_pvrdma.ko has vermagic $vm, want $abi"
    [ "$(modinfo -b "$root" -k "$abi" -F filename vmw_pvrdma)" = "$ko" ] ||
        die "depmod in $root does not find $ko"
    echo "$mod_key" >"$work/.stamp-vmw_pvrdma"
else
    say "vmw_pvrdma.ko for $abi already installed"
fi

# --- downloaded user space (NFS, open-iscsi) ---------------------------------
# The candidate versions of the packages (dl_pkgs) and of the libraries they
# depend on that the host has not installed; downloaded and extracted
# again when one of them changes.
dl_dir=$outdir/debs
dl_root=$dl_dir/root
candidate() { apt-cache policy "$1" 2>/dev/null | awk '$1 == "Candidate:" { print $2; exit }'; }
dl_want=()
for p in "${dl_pkgs[@]}"; do
    v=$(candidate "$p")
    [ -n "$v" ] && [ "$v" != "(none)" ] ||
        die "apt-cache policy $p names no candidate (run scripts/apt-setup.sh, which runs apt-get update)"
    dl_want+=("$p=$v")
done
for p in $(apt-cache depends "${dl_pkgs[@]}" 2>/dev/null |
           awk '$1 == "Depends:" && $2 ~ /^lib/ { print $2 }' | sort -u); do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q 'ok installed' && continue
    v=$(candidate "$p")
    [ -n "$v" ] && [ "$v" != "(none)" ] || die "apt-cache policy $p names no candidate"
    dl_want+=("$p=$v")
done
dl_key=$(printf '%s\n' "${dl_want[@]}")
if [ "$(cat "$dl_dir/.stamp" 2>/dev/null)" != "$dl_key" ] || [ ! -d "$dl_root" ]; then
    rm -rf "$dl_dir"
    mkdir -p "$dl_dir/dl" "$dl_root"
    say "downloading ${dl_want[*]}"
    (cd "$dl_dir/dl" && apt-get download -qq "${dl_want[@]}" 2>&1 |
        grep -v '^W: Download is performed unsandboxed' >&2) || true
    for pv in "${dl_want[@]}"; do
        deb=$(ls "$dl_dir/dl/${pv%%=*}_"*.deb 2>/dev/null | head -1 || true)
        [ -n "$deb" ] || die "apt-get download ${pv} gave no .deb (is the Debian archive reachable?)"
        dpkg-deb -x "$deb" "$dl_root" || die "dpkg-deb -x $deb failed"
    done
    for b in "${dl_bins[@]}" "${dl_files[@]}"; do
        [ -e "$dl_root$b" ] || die "the packages ${dl_pkgs[*]} hold no $b"
    done
    rm -rf "$dl_dir/dl"
    echo "$dl_key" >"$dl_dir/.stamp"
else
    say "downloaded user space up to date (${dl_want[*]})"
fi

# --- initramfs -------------------------------------------------------------
resolve_bin() {
    local p
    p=$(PATH=$PATH:/usr/sbin:/sbin command -v "$1" 2>/dev/null) || return 1
    case $p in /*) echo "$p" ;; *) return 1 ;; esac
}

bin_paths=()
for b in "${user_bins[@]}"; do
    p=$(resolve_bin "$b") || die "host binary '$b' not found (package missing?)"
    bin_paths+=("$p")
done
busybox=$(resolve_bin busybox) || die "busybox not found (install busybox-static)"
file -L "$busybox" 2>/dev/null | grep -q 'statically linked' ||
    ldd "$busybox" 2>&1 | grep -q 'not a dynamic executable' ||
    die "$busybox is not static (install busybox-static)"

prov_dir=/usr/lib/x86_64-linux-gnu/libibverbs
[ -f "$prov_dir/libvmw_pvrdma-rdmav34.so" ] ||
    die "missing $prov_dir/libvmw_pvrdma-rdmav34.so (install ibverbs-providers)"
[ -f /etc/libibverbs.d/vmw_pvrdma.driver ] ||
    die "missing /etc/libibverbs.d/vmw_pvrdma.driver (install ibverbs-providers)"

# Guest programs of our own, built for the host's (= the guest's) libraries.
# compile OUT SRC HINT CC ARGS...: CC -O2 -Wall -o OUT SRC ARGS when OUT
# is missing or older than SRC (HINT: the package a failure points to)
compile() {
    local out=$1 src=$2 hint=$3 cc=$4
    shift 4
    [ ! -e "$out" ] || [ "$src" -nt "$out" ] || return 0
    say "compiling $(basename "$src")"
    "$cc" -O2 -Wall -o "$out" "$src" "$@" ||
        die "could not compile $src${hint:+ ($hint installed?)}"
}
dbcost_src=$top/tests/bench/doorbell-cost.c
dbcost=$work/doorbell-cost
compile "$dbcost" "$dbcost_src" libibverbs-dev gcc -libverbs -lpthread
linger_src=$here/linger-qp.c
linger=$work/linger-qp.so
compile "$linger" "$linger_src" '' gcc -shared -fPIC -ldl
# ucp-pattern: UCP tag, put and get with every byte checked (init's
# t_ucp_pattern_*), against Debian's libucx-dev
ucpp_src=$here/ucp-pattern.c
ucpp=$work/ucp-pattern
compile "$ucpp" "$ucpp_src" libucx-dev gcc -lucp -lucs
# mpi-check: Open MPI's ring, alltoall, latency and bandwidth with every
# byte checked (init's t_mpi_*), built with Debian's mpicc
mpic_src=$here/mpi-check.c
mpic=$work/mpi-check
compile "$mpic" "$mpic_src" libopenmpi-dev mpicc
# cm-scale: many RDMA-CM connections, each with a checked message (init's
# t_cm_scale), against librdmacm-dev
cms_src=$here/cm-scale.c
cms=$work/cm-scale
compile "$cms" "$cms_src" librdmacm-dev gcc -lrdmacm -libverbs
# Open MPI's components (dlopen()ed), but those of PSM hardware, and
# PMIx's; the MCA defaults in /etc/openmpi and the help texts
ompi_dir=/usr/lib/x86_64-linux-gnu/openmpi
pmix_dir=/usr/lib/x86_64-linux-gnu/pmix2
ompi_mods=()
for f in "$ompi_dir"/lib/openmpi3/*.so "$pmix_dir"/lib/pmix/*.so; do
    case $f in */mca_mtl_psm*) continue ;; esac
    ompi_mods+=("$f")
done

pkg_versions=$(dpkg-query -W -f='${Package}=${Version}\n' \
    busybox-static kmod rdma-core ibverbs-providers ibverbs-utils \
    rdmacm-utils perftest iproute2 coreutils libc6 libibverbs1 librdmacm1 \
    ucx-utils libucx0 qperf libfabric-bin libfabric1 openmpi-bin libopenmpi3 \
    libpmix2 2>/dev/null || true)
initrd_key=$( {
    echo "$abi $src_ver $img_ver"
    echo "$modules"
    echo "${user_bins[*]}"
    echo "$pkg_versions"
    echo "$dl_key"
    sha256sum "$init_script" "${BASH_SOURCE[0]}" "$here/lib.sh" "$ko" "$dbcost" "$linger" "$ucpp" "$mpic" "$cms" | awk '{print $1}'
} | sha256sum | awk '{print $1}')

initrd=$work/initrd.img
if [ -f "$initrd" ] && [ "$(cat "$work/.stamp-initrd" 2>/dev/null)" = "$initrd_key" ] &&
   [ "${GUEST_FORCE:-0}" != 1 ]; then
    say "initramfs for $abi up to date"
else
    stage=$work/initramfs
    say "assembling the initramfs in $stage"
    stage_skeleton "$stage" || die "could not lay out $stage (needs root for mknod)"

    # Copy a host file to the same path in the stage, following symlinks.
    put() {
        local f=$1 d
        d=$stage$f
        [ -e "$d" ] && return 0
        mkdir -p "$(dirname "$d")"
        cp -L "$f" "$d" || die "could not copy $f"
    }
    # Copy an ELF file and every shared library it needs.
    put_elf() {
        local f=$1 lib out
        put "$f"
        out=$(ldd "$f" 2>&1) || {
            echo "$out" | grep -q 'not a dynamic executable' && return 0
            die "ldd $f failed: $out"
        }
        if echo "$out" | grep -q 'not found'; then
            die "$f needs libraries missing on the host: $(echo "$out" | grep 'not found' | tr -s ' \t' ' ')"
        fi
        for lib in $(echo "$out" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
            put "$lib"
        done
    }

    # user space and its libraries
    for p in "${bin_paths[@]}"; do
        put_elf "$p"
    done
    # NFS and open-iscsi from their extracted tree: the programs at their own
    # paths, their libraries from the tree where the host lacks them
    dl_libpath=$dl_root/lib/x86_64-linux-gnu:$dl_root/usr/lib/x86_64-linux-gnu
    for p in "${dl_bins[@]}"; do
        d=$stage$p
        mkdir -p "$(dirname "$d")"
        cp -L "$dl_root$p" "$d" || die "could not copy $dl_root$p"
        out=$(LD_LIBRARY_PATH=$dl_libpath ldd "$dl_root$p" 2>&1) || die "ldd $dl_root$p failed: $out"
        echo "$out" | grep -q 'not found' &&
            die "$p needs libraries found neither on the host nor in $dl_root: $(echo "$out" | grep 'not found' | tr -s ' \t' ' ')"
        for lib in $(echo "$out" | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
            case $lib in
                "$dl_root"/*)
                    d=$stage${lib#"$dl_root"}
                    [ -e "$d" ] || { mkdir -p "$(dirname "$d")" && cp -L "$lib" "$d"; } ||
                        die "could not copy $lib" ;;
                *) put "$lib" ;;
            esac
        done
    done
    for f in "${dl_files[@]}"; do
        mkdir -p "$(dirname "$stage$f")" && cp "$dl_root$f" "$stage$f" || die "could not copy $dl_root$f"
    done
    ln -sf mount.nfs "$stage/sbin/umount.nfs"
    ln -sf mount.nfs "$stage/sbin/mount.nfs4"
    # libtirpc's transports, service and protocol names
    for f in /etc/netconfig /etc/services /etc/protocols /etc/rpc; do
        [ -f "$f" ] || die "missing $f (packages libtirpc-common, netbase)"
        put "$f"
    done
    # our own programs, in /usr/bin, and their libraries
    mkdir -p "$stage/usr/bin"
    install -m 0755 "$dbcost" "$stage/usr/bin/doorbell-cost"
    own_bins=(/usr/bin/doorbell-cost)
    install -m 0644 "$linger" "$stage/usr/lib/linger-qp.so"
    own_bins+=(/usr/lib/linger-qp.so)
    install -m 0755 "$ucpp" "$stage/usr/bin/ucp-pattern"
    own_bins+=(/usr/bin/ucp-pattern)
    for lib in $(ldd "$ucpp" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'); do
        put "$lib"
    done
    install -m 0755 "$cms" "$stage/usr/bin/cm-scale"
    own_bins+=(/usr/bin/cm-scale)
    install -m 0755 "$mpic" "$stage/usr/bin/mpi-check"
    own_bins+=(/usr/bin/mpi-check)
    for lib in $(ldd "$mpic" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'); do
        put "$lib"
    done
    for f in "${ompi_mods[@]}"; do
        put_elf "$f"
    done
    for f in /etc/openmpi/* /usr/share/openmpi/help-*.txt; do
        put "$f"
    done
    for lib in $(ldd "$dbcost" | awk '$2 == "=>" && $3 ~ /^\// {print $3}'); do
        put "$lib"
    done
    # the dynamic loader itself
    put /lib64/ld-linux-x86-64.so.2
    # libibverbs providers (dlopen()ed, so ldd of the tools misses them)
    for p in "$prov_dir"/*.so; do
        put_elf "$p"
    done
    mkdir -p "$stage/etc/libibverbs.d"
    cp /etc/libibverbs.d/*.driver "$stage/etc/libibverbs.d/"
    # librdmacm's own provider directory, if any (rsocket preload)
    [ -d /usr/lib/x86_64-linux-gnu/rdma-core ] && cp -a /usr/lib/x86_64-linux-gnu/rdma-core "$stage/usr/lib/x86_64-linux-gnu/" || true
    # UCX's transports (dlopen()ed from UCX_MODULE_DIR, see init's ucx())
    for p in /usr/lib/x86_64-linux-gnu/ucx/*.so.0; do
        put_elf "$p"
    done
    # glibc dlopen()s libgcc_s for pthread_exit/pthread_cancel (rping)
    put_elf /lib/x86_64-linux-gnu/libgcc_s.so.1
    # stdbuf's preload library (line-buffered tool output in the logs)
    put_elf /usr/libexec/coreutils/libstdbuf.so
    # kmod provides modprobe & co. (it reads modules.dep.bin)
    for a in modprobe insmod rmmod lsmod modinfo depmod; do
        ln -sf ../bin/kmod "$stage/usr/sbin/$a"
    done
    # busybox, and its applets for everything no real tool provides
    stage_busybox "$busybox" "$stage" || die "could not put busybox into $stage"

    # kernel modules: the requested ones and their dependencies, in the
    # kernel's own layout, then depmod for the guest's modprobe.
    # shellcheck disable=SC2086
    stage_kmods "$root" "$abi" "$stage" "$work/modules.order.guest" $modules ||
        die "could not put the modules into the initramfs"
    # The order the guest's init loads them in (dependencies first).
    sed 's|.*/||; s|\.ko$||' "$work/modules.order.guest" >"$stage/etc/guest-modules"

    # configuration
    printf '%s\n' /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu /usr/lib /lib >"$stage/etc/ld.so.conf"
    ldconfig -r "$stage" 2>/dev/null || die "ldconfig -r $stage failed"
    # _rpc: rpcbind's user; statd and nobody: nfs-utils'
    printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' '_rpc:x:100:65534::/run/rpcbind:/bin/false' \
        'statd:x:101:65534::/var/lib/nfs:/bin/false' 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
        >"$stage/etc/passwd"
    printf '%s\n' 'root:x:0:' 'nogroup:x:65534:' >"$stage/etc/group"
    printf '127.0.0.1 localhost\n10.0.2.15 guest\n' >"$stage/etc/hosts"
    echo guest >"$stage/etc/hostname"
    echo "$abi" >"$stage/etc/guest-abi"
    # what t_smb_direct reports: the kernel's SMB Direct options
    grep -E '^(# )?CONFIG_(CIFS_SMB_DIRECT|SMB_SERVER_SMBDIRECT)[ =]' \
        "$root/boot/config-$abi" >"$stage/etc/guest-kconfig" || true
    install -m 0755 "$init_script" "$stage/init"

    # Sanity check: every program and provider resolves all of its
    # libraries inside the stage, with the stage's own loader and cache.
    for p in "${bin_paths[@]}" "${own_bins[@]}" "$prov_dir"/*.so "${dl_bins[@]}" "${ompi_mods[@]}"; do
        out=$(chroot "$stage" /lib64/ld-linux-x86-64.so.2 --list "$p" 2>&1) ||
            die "$p does not link inside the initramfs: $out"
        if echo "$out" | grep -q 'not found'; then
            die "$p misses libraries inside the initramfs: $(echo "$out" | grep 'not found' | tr -s ' \t' ' ')"
        fi
    done
    out=$(chroot "$stage" /usr/bin/ibv_devinfo --help 2>&1 || true)
    echo "$out" | grep -q '^Usage:' ||
        die "ibv_devinfo does not run inside the initramfs stage: $out"
    chroot "$stage" /usr/sbin/modprobe -S "$abi" --show-depends vmw_pvrdma >/dev/null ||
        die "the guest's modprobe cannot resolve vmw_pvrdma in the stage"

    say "packing $(du -sh "$stage" | cut -f1) into $initrd"
    pack_initramfs "$stage" "$initrd" || die "cpio/gzip of $stage failed"
    echo "$initrd_key" >"$work/.stamp-initrd"
fi

ln -sfn "$abi/root/boot/vmlinuz-$abi" "$outdir/vmlinuz"
ln -sfn "$abi/initrd.img" "$outdir/initrd.img"
echo "$abi" >"$outdir/abi"
say "ready: $outdir/vmlinuz $outdir/initrd.img ($(du -h "$initrd" | cut -f1), ABI $abi)"
