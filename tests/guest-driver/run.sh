#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lane "guest-driver": contrib/pvrdma-guest-driver's commands and refusals,
# on the kernels of the guest lanes (Debian 6.1 and 6.12), in private
# system images under build/.  (The guest lanes run its DKMS install for
# real: tests/guest/build-guest.sh builds their modules with it.)
#   run.sh <project-dir> <build-dir>
# Prints TAP-like "ok N what" / "not ok N what" and
# "guest-driver: N passed, N failed".
set -uo pipefail
# The tool refuses a --root tree writable by group or others: the images
# made here are not, whatever the caller's umask.
umask 022

top=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
tool=$top/contrib/pvrdma-guest-driver/pvrdma-guest-driver
work=$build/guest-driver-test

# shellcheck source=../tap.sh
. "$top/tests/tap.sh"
tap_out=$work.out

# exits WANT PATTERN CMD...: CMD exits WANT and says PATTERN.
exits() {
    local want=$1 pat=$2 rc=0
    shift 2
    "$@" >"$work.cmd" 2>&1 || rc=$?
    cat "$work.cmd"
    [ "$rc" = "$want" ] || { echo "exit status $rc, want $want"; return 1; }
    grep -q -- "$pat" "$work.cmd" || { echo "no '$pat' in the output"; return 1; }
}

# The kernels, headers and sources of the guest lanes (idempotent).
rm -rf "$work"
mkdir -p "$work"
for k in 6.1 6.12; do
    dir=$build/guest-$k meta=linux-image-6.12-amd64
    [ $k = 6.1 ] && dir=$build/guest meta=linux-image-amd64
    GUEST_KERNEL=$meta bash "$top/tests/guest/build-guest.sh" "$dir" \
        >"$work/build-guest-$k.log" 2>&1 ||
        { tap_result FAIL "build-guest.sh for $k" "$work/build-guest-$k.log"; tap_summary guest-driver; exit 1; }
done
abi=$(cat "$build/guest/abi")
abi12=$(cat "$build/guest-6.12/abi")
hdr=/usr/src/linux-headers-$abi
src61=/usr/src/linux-source-6.1.tar.xz
src612=/usr/src/linux-source-6.12.tar.xz

# A system image: the 6.1 kernel's module tree (no vmw_pvrdma) and a
# Debian os-release.
img=$work/root
mkdir -p "$img/lib/modules/$abi" "$img/etc"
cp -a "$build/guest/$abi/root/lib/modules/$abi/kernel" \
    "$build/guest/$abi/root/lib/modules/$abi"/modules.{order,builtin,builtin.modinfo} \
    "$img/lib/modules/$abi/"
depmod -b "$img" "$abi"
printf 'ID=debian\nVERSION_ID="12"\n' >"$img/etc/os-release"
d() { "$tool" --kernel "$abi" --headers "$hdr" --no-apt "$@"; }

check "--help exits 0 and names the commands" \
    exits 0 'status|install|build|remove' "$tool" --help
check "an unknown argument is a usage error (exit 2)" \
    exits 2 'unknown argument' "$tool" --frobnicate
check "status: a Debian 6.1 kernel lacks the driver (exit 3)" \
    exits 3 "has no vmw_pvrdma" d --root "$img" status
check "build: vmw_pvrdma.ko for $abi" \
    exits 0 "built $work/out/vmw_pvrdma.ko" d --source "$src61" --out "$work/out" build
check "build: the module's vermagic is $abi" \
    sh -c "modinfo -F vermagic '$work/out/vmw_pvrdma.ko' | grep -q '^$abi '"
check "install --no-dkms into the image" \
    exits 0 "installed $img/lib/modules/$abi/updates/vmw_pvrdma.ko" \
    d --source "$src61" --root "$img" --no-dkms install
check "the image's modprobe finds it, with its dependencies" \
    sh -c "modprobe -d '$img' -S '$abi' --show-depends vmw_pvrdma | grep -q 'updates/vmw_pvrdma.ko' &&
           modprobe -d '$img' -S '$abi' --show-depends vmw_pvrdma | grep -q 'ib_core'"
check "status: installed by the tool (exit 0)" \
    exits 0 "installed by this tool" d --root "$img" status
check "remove: gone from the image and its module index" \
    sh -c "'$tool' --kernel '$abi' --root '$img' remove &&
           ! modinfo -b '$img' -k '$abi' vmw_pvrdma >/dev/null 2>&1"
check "status after remove: lacks the driver again (exit 3)" \
    exits 3 "has no vmw_pvrdma" d --root "$img" status
check "refuses the source of another series (6.12 for $abi)" \
    exits 1 "the source is Linux 6.12, the kernel $abi is 6.1" \
    d --source "$src612" --out "$work/out2" build
check "refuses the 6.1 source for $abi12 too" \
    exits 1 "the source is Linux 6.1" \
    "$tool" --kernel "$abi12" --headers "/usr/src/linux-headers-$abi12" --no-apt \
    --source "$src61" --out "$work/out2" build
check "without --source, refuses a distribution that is not Debian or Ubuntu" \
    sh -c "printf 'ID=fedora\n' >'$img/etc/os-release' &&
           '$tool' --kernel '$abi' --headers '$hdr' --no-apt --root '$img' --no-dkms install 2>&1 |
           grep -q 'fedora is not Debian or Ubuntu'"
printf 'ID=debian\n' >"$img/etc/os-release"

# A kernel without InfiniBand: the headers' configuration says so.
fake=$work/headers-noib
mkdir -p "$fake/include/config"
cp "$hdr/Makefile" "$fake/"
grep -v '^CONFIG_INFINIBAND=' "$hdr/include/config/auto.conf" >"$fake/include/config/auto.conf"
check "refuses a kernel without CONFIG_INFINIBAND" \
    exits 1 "CONFIG_INFINIBAND=n: vmw_pvrdma needs it (unsupported kernel)" \
    "$tool" --kernel "$abi" --headers "$fake" --no-apt --source "$src61" build
# A kernel that has the driver: its builtin list names it.
echo "kernel/drivers/infiniband/hw/vmw_pvrdma/vmw_pvrdma.ko" >>"$img/lib/modules/$abi/modules.builtin"
check "refuses a kernel that has the driver" \
    exits 1 "already ships vmw_pvrdma" d --source "$src61" --root "$img" --no-dkms install
check "status: a kernel that has the driver (exit 0)" \
    exits 0 "ships vmw_pvrdma" d --root "$img" status
check "without apt, names the missing packages (headers of an unknown kernel)" \
    exits 1 "missing packages: linux-headers-9.9.9-nosuch" \
    "$tool" --kernel 9.9.9-nosuch --no-apt build

# --- Without a guest kernel: a made-up kernel 9.9 (headers that only
# configure it, whose "make modules" fails, and a source tarball holding the
# top Makefile and the driver's), for os-release, --root's refusals and the
# temporary directories.
fk=9.9.0-1-amd64
fh=$work/headers-9.9
mkdir -p "$fh/include/config"
printf 'modules:\n\t@echo "made-up kernel: no build"; false\n' >"$fh/Makefile"
printf 'CONFIG_%s=y\n' INFINIBAND VMXNET3 PCI INET >"$fh/include/config/auto.conf"
fs=$work/src-9.9
mkdir -p "$fs/linux-9.9/drivers/infiniband/hw/vmw_pvrdma"
printf 'VERSION = 9\nPATCHLEVEL = 9\n' >"$fs/linux-9.9/Makefile"
echo 'obj-m := vmw_pvrdma.o' >"$fs/linux-9.9/drivers/infiniband/hw/vmw_pvrdma/Makefile"
tar -cf "$fs.tar" -C "$fs" linux-9.9
osr=$work/root-9.9
mkdir -p "$osr/etc"
f() { "$tool" --kernel "$fk" --headers "$fh" --no-apt "$@"; }
# empty DIR: DIR is an empty directory.
empty() {
    [ -d "$1" ] && [ -z "$(ls -A "$1")" ] && return 0
    ls -lAR "$1"
    return 1
}

# os-release is parsed, not sourced: these lines would run commands.
pwn=$work/pwned
cat >"$osr/etc/os-release" <<EOF
# not shell: every line below runs a command when sourced
touch $pwn.line
NAME="Fedora Linux \$(touch $pwn.subst)"
VERSION_ID=\`touch $pwn.backquote\`
ID=\$(touch $pwn.id)
ID="fedora"
EOF
check "os-release: ID=\"fedora\" (the last ID line), not Debian or Ubuntu" \
    exits 1 'fedora is not Debian or Ubuntu' f --root "$osr" --no-dkms install
check "os-release: nothing in it ran" \
    sh -c "! ls -d '$pwn'.* 2>/dev/null"
printf '%s\n' 'NAME="Linux Mint"' 'ID=linuxmint' 'ID_LIKE="ubuntu debian"' \
    >"$osr/etc/os-release"
check "os-release: ID_LIKE=\"ubuntu debian\" is Ubuntu (its source package)" \
    exits 1 'missing packages: linux-source-9.9.0 (install' \
    f --root "$osr" --no-dkms install
printf '%s\n' '# Debian' 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"' \
    'VERSION_ID="12"' "ID='debian'" >"$osr/etc/os-release"
check "os-release: ID='debian' is Debian (its source package)" \
    exits 1 'missing packages: linux-source-9.9 (install' \
    f --root "$osr" --no-dkms install

# --root refuses a tree that another user could have changed.
chmod 777 "$osr"
check "--root refuses a tree writable by others" \
    exits 1 "$osr is writable by group or others (mode 777)" \
    f --root "$osr" --no-dkms install
check "status still reads such a tree (exit 3)" \
    exits 3 "has no vmw_pvrdma" f --root "$osr" status
chmod 755 "$osr"
mkdir -p "$osr/var/lib/dkms"
chmod 775 "$osr/var/lib/dkms"
check "--root refuses a group-writable var/lib/dkms" \
    exits 1 "$osr/var/lib/dkms is writable by group or others (mode 775)" \
    f --root "$osr" --dkms install
chmod 755 "$osr/var/lib/dkms"
mkdir -p "$osr/usr/src"
chown 65534 "$osr/usr/src"
check "--root refuses a usr/src of another user" \
    exits 1 "$osr/usr/src is owned by uid 65534, not root" \
    f --root "$osr" --dkms install
chown 0 "$osr/usr/src"

# Temporary directories: gone when the tool dies, but for a failed build's
# log, which the error names.
tmpd=$work/tmp
mkdir -p "$tmpd"
check "refuses the 9.9 source for a 9.8 kernel (after unpacking it)" \
    exits 1 'the source is Linux 9.9, the kernel 9.8.0-1-amd64 is 9.8' \
    env TMPDIR="$tmpd" "$tool" --kernel 9.8.0-1-amd64 --headers "$fh" --no-apt \
    --source "$fs.tar" --out "$work/out3" build
check "that refusal left no temporary directory" empty "$tmpd"
tmpd=$work/tmp-build
mkdir -p "$tmpd"
check "a failed build names its log" \
    exits 1 "building vmw_pvrdma.ko failed (log: $tmpd/" \
    env TMPDIR="$tmpd" "$tool" --kernel "$fk" --headers "$fh" --no-apt \
    --source "$fs.tar" --out "$work/out3" build
check "the log is kept, and nothing else" \
    sh -c "[ \$(ls -A '$tmpd' | wc -l) = 1 ] &&
           grep -q 'made-up kernel: no build' '$tmpd'/*/build.log"

rm -rf "$work"
tap_summary guest-driver
[ "$fail" = 0 ]
