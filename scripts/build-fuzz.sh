#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build the pvrdma libFuzzer target, qemu-fuzz-x86_64 --fuzz-target=pvrdma,
# in a QEMU tree of its own (never the trees of build-qemu.sh):
#   1. installs clang, libFuzzer and llvm (llvm-profdata, llvm-cov) of one
#      LLVM version from Debian when missing;
#   2. prepares <build-dir>/qemu-src with scripts/qemu-tree.sh (reusing the
#      source package already downloaded to build/dl), then applies
#      scripts/qemu-fuzz.patch (meson line for the target, instrumentation
#      filter) and links tests/fuzz/pvrdma_fuzz.c into tests/qtest/fuzz/;
#   3. configures once with clang, --enable-fuzzing, ASan and UBSan, and
#      line-coverage counters in hw/rdma only (tests/fuzz/profile-list.txt),
#      so one binary both fuzzes and measures the corpus' coverage;
#   4. builds incrementally with ninja (and ccache).
# Usage: build-fuzz.sh <project-dir> <build-dir>
set -euo pipefail

top=$(cd "$1" && pwd)
mkdir -p "$2"
build=$(cd "$2" && pwd)
src=$build/qemu-src
out=$build/qemu
llvm=${PVRDMA_FUZZ_LLVM:-14}        # Debian 12's default clang

say() { printf '[build-fuzz] %s\n' "$*"; }
die() { printf '[build-fuzz] error: %s\n' "$*" >&2; exit 1; }

install_tools() {
    local pkgs=() p
    for p in clang-$llvm libfuzzer-$llvm-dev llvm-$llvm; do
        dpkg -s "$p" >/dev/null 2>&1 || pkgs+=("$p")
    done
    [ ${#pkgs[@]} -eq 0 ] && return
    say "installing ${pkgs[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        "${pkgs[@]}" > "$build/apt.log" 2>&1 ||
        { tail -20 "$build/apt.log" >&2; die "apt-get install failed"; }
}

# qemu-tree.sh unpacks afresh when the hook patch changes; our own patch
# is applied on top of every fresh tree, and a change of it asks for one.
prepare_tree() {
    local stamp f
    if [ -d "$top/build/dl" ] &&
       ! ls "$build"/dl/qemu_*.dsc >/dev/null 2>&1; then
        mkdir -p "$build/dl"
        cp "$top"/build/dl/qemu_* "$build/dl/"
    fi
    stamp=$(cat "$top/scripts/qemu-hook.patch" "$top/scripts/qemu-fuzz.patch" |
            sha256sum | cut -d' ' -f1)
    if [ -e "$src/.pvrdma-fuzz-patched" ] &&
       [ "$(cat "$src/.pvrdma-fuzz-patched")" != "$stamp" ]; then
        rm -f "$src/.pvrdma-unpacked"
    fi
    bash "$top/scripts/qemu-tree.sh" "$top" "$build"
    if [ "$(cat "$src/.pvrdma-fuzz-patched" 2>/dev/null)" != "$stamp" ]; then
        say "applying scripts/qemu-fuzz.patch"
        (cd "$src" && patch -p1 -s --no-backup-if-mismatch) \
            < "$top/scripts/qemu-fuzz.patch" ||
            die "scripts/qemu-fuzz.patch does not apply"
        echo "$stamp" > "$src/.pvrdma-fuzz-patched"
    fi
    for f in pvrdma_fuzz.c pvrdma_fuzz.h; do
        ln -sfn "$top/tests/fuzz/$f" "$src/tests/qtest/fuzz/$f"
    done
}

configure_qemu() {
    local opts optstamp cflags
    # Line counters (-fprofile-instr-generate) in hw/rdma only
    cflags="-O1 -fno-omit-frame-pointer -fprofile-instr-generate"
    cflags+=" -fcoverage-mapping"
    cflags+=" -fprofile-list=$top/tests/fuzz/profile-list.txt"
    # The device set of build-qemu.sh; TCG is left out (the fuzzer runs
    # the qtest accelerator only) and so is the ibverbs backend.
    opts=(
        --target-list=x86_64-softmmu
        --python=/usr/bin/python3
        --cc=clang-$llvm --cxx=clang++-$llvm --host-cc=clang-$llvm
        --without-default-features
        --without-default-devices
        --with-devices-x86_64=pvrdma
        --disable-tcg --enable-kvm --enable-attr --enable-virtfs
        --disable-docs --disable-install-blobs --disable-download
        --disable-werror
        --enable-fuzzing --enable-asan --enable-ubsan --enable-debug-info
        "--extra-cflags=$cflags"
        "--extra-ldflags=-fprofile-instr-generate"
    )
    mkdir -p "$out"
    optstamp=$out/.pvrdma-configure-options
    if [ -e "$out/build.ninja" ] &&
       [ "$(cat "$optstamp" 2>/dev/null)" != "${opts[*]}" ]; then
        say "configure options changed: configuring $out again"
        rm -rf "${out:?}"/*
    fi
    if [ ! -e "$out/build.ninja" ]; then
        say "configuring QEMU (clang $llvm, libFuzzer, ASan, UBSan) in $out"
        (cd "$out" && "$src/configure" "${opts[@]}") \
            > "$out/configure.log" 2>&1 ||
            { tail -30 "$out/configure.log" >&2;
              die "configure failed, see $out/configure.log"; }
        echo "${opts[*]}" > "$optstamp"
    fi
}

build_fuzzer() {
    local start
    say "building qemu-fuzz-x86_64"
    start=$(date +%s)
    if ! ninja -C "$out" qemu-fuzz-x86_64 > "$out/ninja.log" 2>&1; then
        grep -v 'WARNING: Source item' "$out/ninja.log" |
            grep -E -B2 -A12 'error|FAILED' | head -60 >&2
        die "build failed, see $out/ninja.log"
    fi
    say "done in $(( $(date +%s) - start )) s: $out/qemu-fuzz-x86_64"
}

# The +ds source has no firmware: the PC machine finds Debian's seabios
# through the build tree's data directories (as in build-qemu.sh).
link_firmware() {
    local fw f
    for fw in "$out"/qemu-bundle/usr/local/share/qemu-firmware \
              "$out"/qemu-bundle/usr/local/share/qemu "$out"/pc-bios; do
        mkdir -p "$fw"
        for f in /usr/share/seabios/*.bin /usr/lib/ipxe/qemu/*.rom; do
            [ -e "$f" ] && ln -sf "$f" "$fw/"
        done
    done
}

install_tools
[ -x /usr/lib/ccache/clang-$llvm ] && export PATH=/usr/lib/ccache:$PATH
prepare_tree
configure_qemu
build_fuzzer
link_firmware
