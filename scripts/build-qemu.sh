#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Configure (once) and build QEMU with the pvrdma device in <build-dir>.
#   build-qemu.sh <project-dir> <build-dir> [asan]
# The plain flavour also builds qemu-system-aarch64 (-M virt with the
# device: the arm64 guest of lane arm64).  The asan flavour is the x86_64
# build with AddressSanitizer, LeakSanitizer and UndefinedBehaviorSanitizer,
# used to run the qtests.  ccache is used when installed.
# QEMU_SRC: the source tree (default build/qemu-src).
set -euo pipefail

top=$(cd "$1" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
flavour=${3:-plain}
src=${QEMU_SRC:-$top/build/qemu-src}     # patches-build: the applied series

say() { printf '[build] %s\n' "$*"; }
die() { printf '[build] error: %s\n' "$*" >&2; exit 1; }

[ -x /usr/lib/ccache/cc ] && export PATH=/usr/lib/ccache:$PATH

targets=(qemu-system-x86_64)
# QEMU_AARCH64_BUILD=0: the plain flavour without qemu-system-aarch64 (make
# check's v10.2 lane, which boots no arm64 guest)
if [ "$flavour" = asan ] || [ "${QEMU_AARCH64_BUILD:-1}" = 0 ]; then
    opts=(--target-list=x86_64-softmmu)
else
    opts=(--target-list=x86_64-softmmu,aarch64-softmmu
          --with-devices-aarch64=pvrdma --enable-fdt=system)
    targets+=(qemu-system-aarch64)
fi
opts+=(
    --python=/usr/bin/python3
    --without-default-features
    --without-default-devices
    --with-devices-x86_64=pvrdma
    --enable-tcg --enable-kvm --enable-slirp --enable-rdma --enable-rdmacm-mux
    --enable-attr --enable-virtfs
    --disable-docs --disable-install-blobs --disable-download
    --disable-werror
)
if [ "$flavour" = asan ]; then
    opts+=(--enable-asan --enable-ubsan --enable-debug-info --extra-cflags=-O1)
fi

mkdir -p "$out"
# A change of the options above means a new configure.
optstamp="$out/.pvrdma-configure-options"
if [ -e "$out/build.ninja" ] && [ "$(cat "$optstamp" 2>/dev/null)" != "${opts[*]}" ]; then
    say "configure options changed: configuring $out again"
    rm -rf "${out:?}"/*
fi
if [ ! -e "$out/build.ninja" ]; then
    say "configuring QEMU ($flavour) in $out"
    (cd "$out" && "$src/configure" "${opts[@]}") > "$out/configure.log" 2>&1 ||
        { tail -30 "$out/configure.log" >&2; die "configure failed, see $out/configure.log"; }
    echo "${opts[*]}" > "$optstamp"
fi
say "building ${targets[*]} and the pvrdma qtests ($flavour)"
start=$(date +%s)
# Progress every 30 s while ninja works (a cold build takes minutes):
# its last "[done/total]" line.
(
    while sleep 30; do
        p=$(grep -o '^\[[0-9]*/[0-9]*\]' "$out/ninja.log" 2>/dev/null | tail -1)
        [ -z "$p" ] || say "  $p steps after $(( $(date +%s) - start )) s"
    done
) &
ticker=$!
trap 'kill $ticker 2>/dev/null || true' EXIT
if ! ninja -C "$out" "${targets[@]}" tests/qtest/pvrdma-test \
        tests/qtest/pvrdma-datapath-test tests/qtest/pvrdma-migration-test \
        tests/qtest/pvrdma-wire-test \
        contrib/rdmacm-mux/rdmacm-mux \
        > "$out/ninja.log" 2>&1; then
    grep -v 'WARNING: Source item' "$out/ninja.log" | grep -E -B2 -A12 'error|FAILED' | head -60 >&2
    die "build failed, see $out/ninja.log"
fi
# The option ROMs, and Debian's SeaBIOS and iPXE linked into the tree.
bash "$top/scripts/qemu-firmware.sh" "$src" "$out" || die "no firmware for $out"
kill $ticker 2>/dev/null || true
say "done in $(( $(date +%s) - start )) s: $out/qemu-system-x86_64"
