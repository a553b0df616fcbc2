#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Prepare the QEMU 10.0 source tree the device is built in:
#   1. download Debian trixie's `qemu` source package (apt checks it against
#      the signed Sources index; we check the .orig.tar.xz against the .dsc),
#   2. unpack the upstream tarball under $BUILD/qemu-src,
#   3. link our directories into it (links keep rebuilds incremental),
#   4. apply scripts/qemu-hook.patch (Kconfig, meson, QAPI schema, rdmacm-mux,
#      qtest list; and memory_region_enable_lockless_io(), which the UAR
#      doorbell region uses: docs/pvrdma.txt, "Doorbells").
# Usage: qemu-tree.sh <project-dir> <build-dir>
set -euo pipefail

top=$(cd "$1" && pwd)
build=$2
mkdir -p "$build"
build=$(cd "$build" && pwd)
src=$build/qemu-src
dl=$build/dl

say() { printf '[qemu-tree] %s\n' "$*"; }
die() { printf '[qemu-tree] error: %s\n' "$*" >&2; exit 1; }

# Files and directories of ours that live inside the QEMU tree.
links=(
    hw/rdma
    contrib/rdmacm-mux
    qapi/pvrdma.json
    tests/qtest/pvrdma-test.c
    tests/qtest/pvrdma-datapath-test.c
    tests/qtest/pvrdma-migration-test.c
    tests/qtest/pvrdma-wire-test.c
    tests/qtest/pvrdma-dp.c
    tests/qtest/pvrdma-dp.h
    tests/qtest/pvrdma-qtest.c
    tests/qtest/pvrdma-qtest.h
    tests/qtest/pvrdma-hammer-boot.h
    configs/devices/x86_64-softmmu/pvrdma.mak
)

fetch_source() {
    mkdir -p "$dl"
    if ! ls "$dl"/qemu_*.dsc >/dev/null 2>&1; then
        say "downloading Debian trixie's qemu source package"
        (cd "$dl" && apt-get source --download-only qemu/trixie >/dev/null 2>&1) ||
            die "apt-get source qemu/trixie failed (is a deb-src entry for trixie configured? scripts/apt-setup.sh adds one)"
    fi
    dsc=$(ls "$dl"/qemu_*.dsc | tail -n 1)
    orig=$(ls "$dl"/qemu_*.orig.tar.xz | tail -n 1)
    version=$(awk '/^Version:/ {print $2}' "$dsc")
    case "$version" in
    configs/devices/i386-softmmu/pvrdma.mak
        *:10.0.*|10.0.*) ;;
        *) die "trixie's qemu is $version, expected 10.0.x" ;;
    esac
    # The .dsc lists the sha256 of every file of the source package.
    local want got
    want=$(awk -v f="$(basename "$orig")" '
        /^Checksums-Sha256:/ {in_sum = 1; next}
        /^[^ ]/ {in_sum = 0}
        in_sum && $3 == f {print $1}' "$dsc")
    got=$(sha256sum "$orig" | cut -d' ' -f1)
    [ -n "$want" ] && [ "$want" = "$got" ] ||
        die "$(basename "$orig"): sha256 $got does not match the .dsc ($want)"
    say "qemu $version, $(basename "$orig") sha256 verified"
}

unpack_source() {
    local stamp
    # The stamp names the hook patch the tree was made with: a new patch
    # means a new tree.
    stamp=$(sha256sum "$top/scripts/qemu-hook.patch" | cut -d' ' -f1)
    if [ "$(cat "$src/.pvrdma-unpacked" 2>/dev/null)" = "$stamp" ]; then
        return
    fi
    say "unpacking $(basename "$orig")"
    rm -rf "$src" "$build/qemu-unpack"
    mkdir -p "$build/qemu-unpack"
    tar -xJf "$orig" -C "$build/qemu-unpack"
    mv "$build"/qemu-unpack/qemu-* "$src"
    rmdir "$build/qemu-unpack"
    say "applying scripts/qemu-hook.patch"
    (cd "$src" && patch -p1 -s --no-backup-if-mismatch) < "$top/scripts/qemu-hook.patch" ||
        die "the hook patch does not apply to qemu $version"
    echo "$stamp" > "$src/.pvrdma-unpacked"
}

link_ours() {
    local p
    for p in "${links[@]}"; do
        if [ "$(readlink "$src/$p" 2>/dev/null)" != "$top/$p" ]; then
            rm -rf "${src:?}/$p"
            ln -s "$top/$p" "$src/$p"
        fi
    done
}

fetch_source
unpack_source
link_ours
