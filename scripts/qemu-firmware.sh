#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Firmware for a QEMU build tree (build-qemu.sh, build-hosts.sh):
#   qemu-firmware.sh <qemu-src> <build-dir>
# The x86 option ROMs (-kernel boot, kvmvapic) are guest code, built from
# source by make, not ninja (configure's compiler probe skips them here),
# always with the machine's own cc.  The +ds source has no firmware blobs:
# the build tree's data directories point at Debian's seabios and
# ipxe-qemu, so qtests and users of the tree find them without -L.
set -euo pipefail

src=$1
out=$2
rom=$out/pc-bios/optionrom
if [ ! -e "$rom/linuxboot_dma.bin" ]; then
    echo "[build] building the x86 option ROMs"
    printf 'TOPSRC_DIR=%s\nCC=cc\nCCAS=cc\nAR=ar\nAS=as\nLD=ld\nNM=nm\nOBJCOPY=objcopy\nRANLIB=ranlib\nSTRIP=strip\n' \
        "$src" > "$rom/config.mak"
    make -C "$rom" > "$rom/make.log" 2>&1 ||
        { echo "[build] error: option ROM build failed, see $rom/make.log" >&2; exit 1; }
fi
for fw in "$out"/qemu-bundle/usr/local/share/qemu-firmware \
          "$out"/qemu-bundle/usr/local/share/qemu "$out"/pc-bios; do
    mkdir -p "$fw"
    for f in /usr/share/seabios/*.bin /usr/lib/ipxe/qemu/*.rom "$rom"/*.bin; do
        [ -e "$f" ] && ln -sf "$f" "$fw/"
    done
done
exit 0
