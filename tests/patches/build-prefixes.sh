#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Every prefix of the series builds.  The commits of the series, as
# tests/patches/run.sh applied it (<build-dir>/patches-applied), are
# fetched into <build-dir>/patches-prefixes/src, the same QEMU source
# unpacked, which is configured once in <build-dir>/patches-prefixes/build
# as scripts/build-qemu.sh configures (with -Werror).  Then for each patch
# in order, from the build fixes that the +ds source needs on: git
# checkout, ninja of qemu-system-x86_64 and of every pvrdma test, unit test
# and rdmacm-mux the tree has at that point, and a run of its unit tests.
# ccache is used when installed; the build directory is kept, so that a
# second run rebuilds only what the patches change.
#
# The device set is configs/devices/x86_64-softmmu/pvrdma.mak, which the
# series does not carry (a test build's choice): it is written into the
# tree, untracked, without CONFIG_PVRDMA while the tree has no
# hw/rdma/Kconfig.
#
#   build-prefixes.sh <project-dir> <build-dir>
# Prints "ok N <patch> (S s: targets)" or "not ok N <patch>" with the end
# of ninja's output, per commit (the base is 0; it and the build fixes
# before the last one are skipped), and returns 0 only if every prefix
# built.
set -uo pipefail

top=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
applied=$build/patches-applied
dir=$build/patches-prefixes
src=$dir/src
out=$dir/build
mak=configs/devices/x86_64-softmmu/pvrdma.mak

say() { printf '[prefixes] %s\n' "$*" >&2; }

[ -d "$applied/.git" ] || { echo "not ok 1 no applied series in $applied"; exit 1; }
[ -x /usr/lib/ccache/cc ] && export PATH=/usr/lib/ccache:$PATH

# The source: the .orig tarball unpacked (with the files that QEMU's
# .gitignore keeps out of git, subprojects/), the series' commits fetched
# into it.  A new QEMU source means a new tree and a new build directory.
orig=$(ls "$build"/dl/qemu_*.orig.tar.xz | tail -n 1)
if [ "$(cat "$dir/.orig" 2>/dev/null)" != "${orig##*/}" ]; then
    rm -rf "$dir"
    mkdir -p "$src"
    tar -xJf "$orig" -C "$src" --strip-components=1 &&
        git -C "$src" init -q ||
        { echo "not ok 1 unpacking ${orig##*/}"; exit 1; }
    echo "${orig##*/}" >"$dir/.orig"
fi
# The series of this run (a new make patches gives new commits).
git -C "$src" fetch -q "$applied" +HEAD:refs/heads/series ||
    { echo "not ok 1 git fetch $applied"; exit 1; }
mapfile -t commits < <(git -C "$src" rev-list --reverse series)

# Configure once, with the options of scripts/build-qemu.sh for x86_64
# (rdmacm-mux below, once the series has its option).
opts=(
    --target-list=x86_64-softmmu
    --python=/usr/bin/python3
    --without-default-features
    --without-default-devices
    --with-devices-x86_64=pvrdma
    --enable-tcg --enable-kvm --enable-slirp --enable-rdma
    --enable-attr --enable-virtfs
    --disable-docs --disable-install-blobs --disable-download
    --enable-werror
)

device_set() {
    if [ -e "$src/hw/rdma/Kconfig" ]; then
        cat "$top/$mak"
    else
        grep -v '^CONFIG_PVRDMA=' "$top/$mak"
    fi
}

# What ninja builds at this prefix: the emulator and the tests it has.
targets() {
    local t all
    all=$(ninja -C "$out" -t targets all 2>/dev/null | cut -d: -f1)
    echo qemu-system-x86_64
    for t in "$src"/tests/qtest/pvrdma-*test.c "$src"/tests/unit/pvrdma-*test.c \
             "$src"/tests/unit/rdma-*test.c; do
        [ -e "$t" ] || continue
        t=${t#"$src"/}
        t=${t%.c}
        grep -qx "$t" <<<"$all" && echo "$t"
    done
    grep -qx contrib/rdmacm-mux/rdmacm-mux <<<"$all" &&
        echo contrib/rdmacm-mux/rdmacm-mux
    true
}

# The unit tests are quick: run them where they are built (as meson test
# does, in the build directory).
unit_tests() {
    local t
    for t in "$@"; do
        case $t in
        tests/unit/*)
            echo "== $t"
            (cd "$out" && "./$t" --tap -k) || return 1
            ;;
        esac
    done
}

# Debian's +ds source does not build as it is with these options: the
# series' first patches fix that (no firmware blobs; 10.2: a missing stub
# without CONFIG_CXL).  Prefixes are built from the last of them on.
fixes='^(meson: unpack|hw/cxl: add the cxl_fmws_get_all_sorted)'
first=0
for i in "${!commits[@]}"; do
    git -C "$src" log -1 --format=%s "${commits[$i]}" | grep -qE "$fixes" && first=$i
done

n=0 failed=0
for c in "${commits[@]}"; do
    subject=$(git -C "$src" log -1 --format=%s "$c")
    label=$(printf '%04d %s' "$n" "$subject")
    n=$((n + 1))
    if [ $((n - 1)) -lt "$first" ]; then
        echo "ok $n $label # SKIP the +ds source builds from patch $first on"
        continue
    fi
    start=$SECONDS
    log=$dir/prefix-$((n - 1)).log
    if ! git -C "$src" checkout -q -f "$c" >"$log" 2>&1; then
        echo "not ok $n $label: git checkout"
        failed=$((failed + 1))
        continue
    fi
    new=$(device_set)
    [ "$new" = "$(cat "$src/$mak" 2>/dev/null)" ] || printf '%s\n' "$new" >"$src/$mak"
    if [ ! -e "$out/build.ninja" ]; then
        say "configuring in $out"
        rm -rf "$out"
        mkdir -p "$out"
        (cd "$out" && "$src/configure" "${opts[@]}") >>"$log" 2>&1 || {
            echo "not ok $n $label: configure"
            tail -n 20 "$log" | sed 's/^/  # /'
            failed=$((failed + 1))
            break
        }
    fi
    # rdmacm-mux is a feature (off with --without-default-features) from
    # the patch that adds its option on: build-qemu.sh enables it.
    if grep -q "^option('rdmacm_mux'" "$src/meson_options.txt" &&
       ! grep -qx 'enabled' "$dir/rdmacm-mux" 2>/dev/null; then
        "$out/pyvenv/bin/meson" configure "$out" -Drdmacm_mux=enabled >>"$log" 2>&1 &&
            echo enabled >"$dir/rdmacm-mux"
    elif ! grep -q "^option('rdmacm_mux'" "$src/meson_options.txt"; then
        rm -f "$dir/rdmacm-mux"
    fi
    # A first ninja run lets meson regenerate, so that targets() sees the
    # prefix's test targets.
    if ninja -j2 -C "$out" build.ninja >>"$log" 2>&1 &&
       mapfile -t tg < <(targets) &&
       ninja -j2 -C "$out" "${tg[@]}" >>"$log" 2>&1 &&
       unit_tests "${tg[@]}" >>"$log" 2>&1; then
        echo "ok $n $label ($((SECONDS - start)) s: ${tg[*]})"
    else
        echo "not ok $n $label ($((SECONDS - start)) s)"
        grep -E -A2 'error:|ERROR:|FAILED:|^not ok' "$log" | cut -c1-160 |
            head -n 20 | sed 's/^/  # /'
        failed=$((failed + 1))
    fi
done
# The last tree as a build to run: its firmware, as scripts/build-qemu.sh
# gives a build (make check-slow's patches-build runs the qtests on it).
if [ "$failed" = 0 ] && ! bash "$top/scripts/qemu-firmware.sh" "$src" "$out" >"$dir/firmware.log" 2>&1; then
    echo "not ok $((n + 1)) firmware for $out"
    tail -n 5 "$dir/firmware.log" | sed 's/^/  # /'
    failed=1
fi
[ "$failed" = 0 ]
