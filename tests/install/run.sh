#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lane "install": make install into a DESTDIR, check the installed tree,
# make uninstall, check that nothing of ours is left.
#   run.sh <project-dir> <build-dir>
# Prints TAP-like "ok N what" / "not ok N what" and "install: N passed, N failed".
set -uo pipefail

top=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
dest=$build/install-test
prefix=/opt/pvrdma
root=$dest$prefix

# shellcheck source=../tap.sh
. "$top/tests/tap.sh"
tap_out=$dest.out

# The machine the installed QEMU boots: firmware from its own data directory
boots() {
    printf '%s\n' '{"execute":"qmp_capabilities"}' \
        '{"execute":"human-monitor-command","arguments":{"command-line":"info pvrdma"}}' \
        '{"execute":"quit"}' |
        timeout 60 "$root/bin/qemu-system-x86_64" -M pc -nodefaults -display none \
            -device vmxnet3,addr=10.0,multifunction=on -device pvrdma,id=rdma,addr=10.1 \
            -qmp stdio >"$dest.boot" 2>&1
    grep -q '/machine/peripheral/rdma: backend soft' "$dest.boot" || { cat "$dest.boot"; return 1; }
}

bash "$top/scripts/apt-setup.sh" man-db >/dev/null 2>&1 || echo "# could not install man-db"
rm -rf "$dest"
mkdir -p "$dest"
check "make install DESTDIR=... PREFIX=$prefix" \
    make -s -C "$top" install DESTDIR="$dest" PREFIX="$prefix"
for f in bin/qemu-system-x86_64 bin/rdmacm-mux share/man/man8/rdmacm-mux.8 \
         lib/systemd/system/rdmacm-mux@.service share/doc/pvrdma/pvrdma.txt \
         share/qemu/bios-256k.bin share/qemu/kvmvapic.bin share/qemu/linuxboot_dma.bin \
         share/qemu/efi-vmxnet3.rom; do
    check "installed: $prefix/$f" test -e "$root/$f"
done
check "the unit runs $prefix/bin/rdmacm-mux" \
    grep -q "exec $prefix/bin/rdmacm-mux " "$root/lib/systemd/system/rdmacm-mux@.service"
check "the man page renders (man -l: NAME, SYNOPSIS, OPTIONS, EXIT STATUS)" sh -c "
    MANWIDTH=80 man -l '$root/share/man/man8/rdmacm-mux.8' >'$dest.man' 2>&1 &&
    for s in NAME SYNOPSIS OPTIONS 'EXIT STATUS'; do grep -q \"^\$s\" '$dest.man' || exit 1; done"
check "rdmacm-mux --help runs" "$root/bin/rdmacm-mux" --help
check "the guest driver tool is installed and its --help runs" \
    "$root/share/pvrdma/pvrdma-guest-driver" --help
check "the installed QEMU starts with its own firmware; HMP info pvrdma" boots
# What a distribution runs: QEMU's own meson install (of what the build
# made: --tags runtime,man, --no-rebuild) installs rdmacm-mux, its man page
# and the unit template with the installed daemon's path.
meson_install() {
    local md=$build/install-test-meson p f
    rm -rf "$md"
    p=$(python3 -c 'import json, sys
print([o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == "prefix"][0])' \
        "$build/qemu/meson-info/intro-buildoptions.json") || return 1
    "$build/qemu/pyvenv/bin/meson" install -C "$build/qemu" --no-rebuild \
        --tags runtime,man --destdir "$md" >"$md.log" 2>&1 || { cat "$md.log"; return 1; }
    for f in bin/rdmacm-mux share/man/man8/rdmacm-mux.8 \
             lib/systemd/system/rdmacm-mux@.service; do
        [ -e "$md$p/$f" ] || { echo "meson install: no $p/$f"; return 1; }
    done
    grep -q "exec $p/bin/rdmacm-mux " "$md$p/lib/systemd/system/rdmacm-mux@.service" ||
        { echo "the unit does not run $p/bin/rdmacm-mux"; return 1; }
    "$md$p/bin/rdmacm-mux" --help >/dev/null || return 1
    rm -rf "$md"
}
check "meson install: rdmacm-mux, its man page and unit (configure --enable-rdmacm-mux)" meson_install
check "make uninstall" make -s -C "$top" uninstall DESTDIR="$dest" PREFIX="$prefix"
check "nothing left but empty directories" \
    sh -c "test -z \"\$(find '$dest' -mindepth 1 ! -type d)\" || { find '$dest' -mindepth 1 ! -type d; exit 1; }"
check "make uninstall again says nothing is installed" \
    sh -c "! make -s -C '$top' uninstall DESTDIR='$dest' PREFIX='$prefix'"
tap_summary install
