#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Assemble the lane-3 "host VM": the Debian kernel of the lane-2 guest
# (tests/guest/build-guest.sh resolves, downloads and extracts it) and a
# small initramfs holding busybox-static, the modules for a virtio-9p root,
# virtio-net and Linux Soft-RoCE (rdma_rxe, ib_umad), and tests/hostvm/init.
# Everything else the VM runs comes from this machine's own root, mounted
# read-only over virtio-9p (run-hostvm.sh).
#
# Usage: build-hostvm.sh [outdir]       (default: build/hostvm in the tree)
#
# Idempotent: the initramfs is keyed on a hash of its inputs and rebuilt only
# when one changed.  Afterwards
#   <outdir>/vmlinuz, <outdir>/initrd.img     point at the current host VM,
#   <outdir>/abi                              holds the kernel ABI.
#
# Environment:
#   GUEST_DIR          where build-guest.sh keeps the kernel (build/guest)
#   GUEST_KERNEL_ABI   as for build-guest.sh
#   HOSTVM_MODULES     modules loaded, in this order (with their deps)
#   HOSTVM_FORCE=1     rebuild the initramfs even if its key matches
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
outdir=${1:-$top/build/hostvm}
guest_dir=${GUEST_DIR:-$top/build/guest}
init_script=$here/init
# shellcheck source=../guest/lib.sh
. "$top/tests/guest/lib.sh"

say() { printf '[hostvm] %s\n' "$*"; }
die() { printf '[hostvm] error: %s\n' "$*" >&2; exit 1; }

# crc32_generic: without it "rdma link add" fails (rxe's ICRC wants crc32).
# ib_umad but none of ib_cm, iw_cm, rdma_cm, rdma_ucm: contrib/rdmacm-mux
# must be the only agent for the CM management class on rxe0.
modules=${HOSTVM_MODULES:-crc32_generic virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache 9pnet 9p 9pnet_virtio udp_tunnel ip6_udp_tunnel ib_core ib_uverbs rdma_rxe ib_umad failover net_failover virtio_net overlay}

[ -f "$init_script" ] || die "missing the host VM's init script $init_script"
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

exec 9>"$outdir/.lock"
if ! flock -n 9; then
    say "waiting for another build-hostvm.sh on $outdir"
    flock 9
fi

# The kernel, the same one (and resolved the same way) as the lane-2 guest.
# build-guest.sh also installs this VM's user space on this machine
# (rdma-core, ibverbs-utils, perftest, iproute2, busybox-static, ...), which
# the VM reaches through its 9p root.
"$top/tests/guest/build-guest.sh" "$guest_dir" >&2 ||
    die "tests/guest/build-guest.sh failed (it provides the kernel)"
"$top/scripts/apt-setup.sh" python3 >&2 ||
    die "could not install python3"
abi=$(cat "$guest_dir/abi")
root=$guest_dir/$abi/root
[ -d "$root/lib/modules/$abi/kernel" ] || die "no kernel modules in $root"

busybox=$(command -v busybox || true)
[ -n "$busybox" ] && [[ $(ldd "$busybox" 2>&1) == *'not a dynamic executable'* ]] ||
    die "no static busybox (install busybox-static)"

work=$outdir/$abi
mkdir -p "$work"
key=$( {
    echo "$abi $(cat "$guest_dir/$abi/kernel-version" 2>/dev/null)"
    echo "$modules"
    dpkg-query -W -f='${Package}=${Version}\n' busybox-static 2>/dev/null || true
    sha256sum "$init_script" "${BASH_SOURCE[0]}" "$top/tests/guest/lib.sh" | awk '{print $1}'
} | sha256sum | awk '{print $1}')

initrd=$work/initrd.img
if [ -f "$initrd" ] && [ "$(cat "$work/.stamp-initrd" 2>/dev/null)" = "$key" ] &&
   [ "${HOSTVM_FORCE:-0}" != 1 ]; then
    say "initramfs for $abi up to date"
else
    stage=$work/initramfs
    say "assembling the initramfs in $stage"
    stage_skeleton "$stage" || die "could not lay out $stage (needs root for mknod)"
    stage_busybox "$busybox" "$stage" || die "could not put busybox into $stage"
    # shellcheck disable=SC2086
    stage_kmods "$root" "$abi" "$stage" "$stage/etc/hostvm-modules" $modules ||
        die "could not put the modules into the initramfs"
    echo "$abi" >"$stage/etc/hostvm-abi"
    install -m 0755 "$init_script" "$stage/init"
    say "packing $(du -sh "$stage" | cut -f1) into $initrd"
    pack_initramfs "$stage" "$initrd" || die "cpio/gzip of $stage failed"
    echo "$key" >"$work/.stamp-initrd"
fi

ln -sfn "$root/boot/vmlinuz-$abi" "$outdir/vmlinuz"
ln -sfn "$abi/initrd.img" "$outdir/initrd.img"
echo "$abi" >"$outdir/abi"
say "ready: $outdir/vmlinuz $outdir/initrd.img ($(du -h "$initrd" | cut -f1), ABI $abi)"
