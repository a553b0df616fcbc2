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
#
# QEMU_VERSION=10.2 (default 10.0) prepares QEMU 10.2.2 instead: Debian
# sid's qemu 1:10.2.2+ds-1, fetched through a private apt configuration
# under <build-dir>/apt (the system's apt sources are not touched), with
# scripts/qemu-hook-10.2.patch.  Give it its own build dir (build/v10.2).
set -euo pipefail

top=$(cd "$1" && pwd)
build=$2
mkdir -p "$build"
build=$(cd "$build" && pwd)
src=$build/qemu-src
dl=$build/dl
qemu_version=${QEMU_VERSION:-10.0}
case "$qemu_version" in
    10.0) hook=scripts/qemu-hook.patch ;;
    10.2) hook=scripts/qemu-hook-10.2.patch
          sid_version=1:10.2.2+ds-1 ;;
    *) printf '[qemu-tree] error: QEMU_VERSION=%s: 10.0 or 10.2\n' "$qemu_version" >&2
       exit 1 ;;
esac

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
    configs/devices/i386-softmmu/pvrdma.mak
    configs/devices/aarch64-softmmu/pvrdma.mak
)

# apt-get with a private configuration under $build/apt that knows only
# sid's deb-src: its lists and caches stay under the build dir.
sid_apt() {
    apt-get -o Dir::Etc::sourcelist="$build/apt/sources.list" \
        -o Dir::Etc::sourceparts=- \
        -o Dir::State::Lists="$build/apt/lists" \
        -o Dir::Cache="$build/apt/cache" \
        -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= \
        "$@"
}

download_sid() {
    local uri
    uri=$(bash "$top/scripts/apt-setup.sh" --debian-uri)
    [ -n "$uri" ] || die "no Debian archive found in /etc/apt/sources*"
    mkdir -p "$build/apt/lists/partial" "$build/apt/cache/archives/partial"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri sid main" \
        > "$build/apt/sources.list"
    say "downloading Debian sid's qemu $sid_version source package (private apt config in $build/apt)"
    sid_apt update -qq >/dev/null 2>&1 || die "apt-get update of sid's deb-src failed"
    (cd "$dl" && sid_apt source --download-only "qemu=$sid_version" >/dev/null 2>&1) ||
        die "apt-get source qemu=$sid_version failed"
}

fetch_source() {
    mkdir -p "$dl"
    if ! ls "$dl"/qemu_*.dsc >/dev/null 2>&1; then
        if [ "$qemu_version" = 10.2 ]; then
            download_sid
        else
            say "downloading Debian trixie's qemu source package"
            (cd "$dl" && apt-get source --download-only qemu/trixie >/dev/null 2>&1) ||
                die "apt-get source qemu/trixie failed (is a deb-src entry for trixie configured? scripts/apt-setup.sh adds one)"
        fi
    fi
    dsc=$(ls "$dl"/qemu_*.dsc | tail -n 1)
    orig=$(ls "$dl"/qemu_*.orig.tar.xz | tail -n 1)
    version=$(awk '/^Version:/ {print $2}' "$dsc")
    case "$qemu_version:$version" in
        10.0:*:10.0.*|10.0:10.0.*) ;;
        10.2:"$sid_version") ;;
        10.0:*) die "trixie's qemu is $version, expected 10.0.x" ;;
        *) die "sid's qemu source in $dl is $version, expected $sid_version" ;;
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
    stamp=$(sha256sum "$top/$hook" | cut -d' ' -f1)
    if [ "$(cat "$src/.pvrdma-unpacked" 2>/dev/null)" = "$stamp" ]; then
        return
    fi
    say "unpacking $(basename "$orig")"
    rm -rf "$src" "$build/qemu-unpack"
    mkdir -p "$build/qemu-unpack"
    tar -xJf "$orig" -C "$build/qemu-unpack"
    mv "$build"/qemu-unpack/qemu-* "$src"
    rmdir "$build/qemu-unpack"
    say "applying $hook"
    (cd "$src" && patch -p1 -s --no-backup-if-mismatch) < "$top/$hook" ||
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
