#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Prove that the pvrdma device builds and links on a non-Linux host: build
# qemu-system-x86_64.exe for Windows with Debian's mingw-w64 cross compiler,
# then check the result.
#   build-mingw.sh <project-dir> <build-dir> [--wine]
# Output tree: <build-dir>/mingw (qemu/ is the QEMU build tree).  It prints
# "mingw: N passed, N failed" at the end; the checks are:
#   1. qemu-system-x86_64.exe is built, and `file` says PE32+;
#   2. its symbol table has the device: qmp_query_pvrdma, pvrdma_realize and
#      the soft backend (rdma_soft_*), and no ibverbs backend (rdma_ibv_*),
#      which is Linux-only;
#   3. under wine (Debian's wine64, installed with --wine, ~100 MB; else
#      only when already there): `qemu-system-x86_64.exe -device help` lists
#      pvrdma, and a PC machine with vmxnet3 and pvrdma starts and answers
#      QMP's query-pvrdma with the soft backend.
# QEMU_SRC: the source tree (default build/qemu-src, from scripts/qemu-tree.sh).
#
# How it works, and why:
# * Debian ships the compiler (gcc-mingw-w64-x86-64) and the Windows API
#   headers and import libraries, but no Windows builds of the libraries
#   QEMU needs (glib, zlib) nor of glib's own needs (pcre2, libffi, libintl).
#   They are cross-built here from Debian's bookworm source packages
#   (apt-get source --download-only through the deb-src entries that
#   scripts/apt-setup.sh configures; every file is checked against the
#   sha256 of its .dsc), and installed into <build-dir>/mingw/sysroot:
#   zlib, pcre2, libffi and gettext's libintl static, glib as DLLs (the way
#   QEMU's Windows builds use it).  glib never falls back to its wrap
#   subprojects (--wrap-mode=nofallback): there is no network for them.
#   glib needs libintl even with -Dnls=disabled, hence gettext.
# * Each library is built once: a stamp holds the sha256 of its source and
#   this script's recipe version, so a second run only checks.
# * QEMU is configured as for the Linux build (scripts/build-qemu.sh) with
#   every optional feature off, no pixman, and a device set of its own: the
#   project's pvrdma.mak adds virtio-9p, which needs virtfs, which Windows
#   has not.  That .mak is written to <build-dir>/mingw and named to
#   configure relative to configs/devices/x86_64-softmmu/, since configure
#   looks for it only there and the shared source tree is not modified.
set -euo pipefail
shopt -s inherit_errexit

usage() {
    sed -n '4,18p' "$0" | sed 's/^# \{0,1\}//'
}
case "${1:-}" in
-h|--help) usage; exit 0 ;;
esac
[ $# -eq 2 ] || { [ $# -eq 3 ] && [ "$3" = --wine ]; } || { usage >&2; exit 2; }

top=$(cd "$1" && pwd)
mkdir -p "$2"
build=$(cd "$2" && pwd)
src=${QEMU_SRC:-$top/build/qemu-src}
mingw=$build/mingw
dl=$mingw/dl
srcs=$mingw/src
objs=$mingw/obj
sysroot=$mingw/sysroot
out=$mingw/qemu
triplet=x86_64-w64-mingw32
exe=qemu-system-x86_64.exe
# A new recipe below (options, steps) means every library is built again.
recipe=1

say() { printf '[mingw] %s\n' "$*"; }
die() { printf '[mingw] error: %s\n' "$*" >&2; exit 1; }

# flock /tmp/pvrdma-build.lock <command> (the machine's builds take turns),
# noting how long it waited for the lock: other builds hold it for minutes,
# and the times this script reports are its own.
locked() {
    local rc=0
    flock /tmp/pvrdma-build.lock sh -c 'echo $(( $(date +%s) - $1 )) > "$0"; shift; exec "$@"' \
        "$mingw/.lock-wait" "$(date +%s)" "$@" || rc=$?
    cat "$mingw/.lock-wait" >> "$mingw/lock-waits" 2>/dev/null || echo 0 >> "$mingw/lock-waits"
    return $rc
}

# Debian bookworm's source packages (source name, expected upstream series).
libs=(zlib pcre2 libffi gettext glib2.0)
declare -A series=([zlib]=1.2.13 [pcre2]=10.42 [libffi]=3.4.4 [gettext]=0.21 [glib2.0]=2.74)

# ---------------------------------------------------------------- packages
install_packages() {
    # gcc-mingw-w64-x86-64 brings binutils-mingw-w64-x86-64 (windres, nm)
    # and mingw-w64-x86-64-dev (the Windows headers and import libraries).
    bash "$top/scripts/apt-setup.sh" gcc-mingw-w64-x86-64 meson ninja-build \
        pkg-config make python3 xz-utils bzip2 file > "$mingw/apt-install.log" 2>&1 ||
        { tail -20 "$mingw/apt-install.log" >&2; die "could not install the mingw-w64 toolchain"; }
}

# The .dsc and the files it lists, in $dl; every file's sha256 checked.
fetch() {
    local pkg=$1 dsc f want got
    dsc=$(ls "$dl/${pkg}_${series[$pkg]}"*.dsc 2>/dev/null | tail -n 1 || true)
    if [ -z "$dsc" ]; then
        say "downloading Debian bookworm's $pkg source package" >&2
        (cd "$dl" && apt-get source --download-only "$pkg/bookworm") > "$dl/$pkg.log" 2>&1 ||
            { tail -5 "$dl/$pkg.log" >&2; die "apt-get source $pkg/bookworm failed (scripts/apt-setup.sh adds bookworm's deb-src)"; }
        dsc=$(ls "$dl/${pkg}_${series[$pkg]}"*.dsc 2>/dev/null | tail -n 1 || true)
        [ -n "$dsc" ] || die "bookworm's $pkg is not ${series[$pkg]}.x (see $dl)"
    fi
    awk '/^Checksums-Sha256:/ {s = 1; next} /^[^ ]/ {s = 0} s {print $1, $3}' "$dsc" |
    while read -r want f; do
        got=$(sha256sum "$dl/$f" | cut -d' ' -f1)
        [ "$want" = "$got" ] || die "$f: sha256 $got does not match $(basename "$dsc") ($want)"
    done
    echo "$dsc"
}

# Unpack the upstream tarball of $pkg into $srcs/$pkg (fresh), print its dir.
unpack() {
    local pkg=$1 dsc=$2 orig
    orig=$(awk '/^Checksums-Sha256:/ {s = 1; next} /^[^ ]/ {s = 0}
                s && $3 ~ /\.orig\.tar\.[a-z0-9]+$/ {print $3}' "$dsc")
    [ -n "$orig" ] || die "no .orig tarball in $(basename "$dsc")"
    rm -rf "${srcs:?}/$pkg"
    mkdir -p "$srcs/$pkg"
    tar -xf "$dl/$orig" -C "$srcs/$pkg"
    ls -d "$srcs/$pkg"/*/
}

# The pkg-config and meson cross file of the sysroot.
make_tools() {
    mkdir -p "$mingw/bin"
    cat > "$mingw/bin/$triplet-pkg-config" <<EOF
#!/bin/sh
# pkg-config for the Windows sysroot of scripts/build-mingw.sh
PKG_CONFIG_LIBDIR='$sysroot/lib/pkgconfig' PKG_CONFIG_PATH= exec pkg-config "\$@"
EOF
    chmod +x "$mingw/bin/$triplet-pkg-config"
    cat > "$mingw/cross.ini" <<EOF
# meson cross file of scripts/build-mingw.sh
[binaries]
c = '$triplet-gcc'
ar = '$triplet-ar'
strip = '$triplet-strip'
windres = '$triplet-windres'
pkg-config = '$mingw/bin/$triplet-pkg-config'

[built-in options]
c_args = ['-I$sysroot/include']
c_link_args = ['-L$sysroot/lib']

[properties]
needs_exe_wrapper = true

[host_machine]
system = 'windows'
cpu_family = 'x86_64'
cpu = 'x86_64'
endian = 'little'
EOF
}

# ---------------------------------------------------------------- recipes
# Each runs in the unpacked source directory and installs into $sysroot.
autotools_opts=(--host=$triplet "--prefix=$sysroot" --disable-shared --enable-static)

build_zlib() {
    # Debian's tarball has no win32/ (dfsg); zlib's configure knows mingw
    # from CHOST.  It writes zlib.pc with the prefix.
    CHOST=$triplet ./configure --static "--prefix=$sysroot"
    make -j2 libz.a
    make install
}

build_pcre2() {
    # Only the 8-bit library, which is all glib uses.
    # Not its programs: pcre2posix_test links as if the library were a DLL.
    ./configure "${autotools_opts[@]}" --disable-pcre2grep-jit --disable-jit
    make -j2 libpcre2-8.la libpcre2-posix.la
    make install-libLTLIBRARIES install-includeHEADERS install-nodist_includeHEADERS \
        install-pkgconfigDATA
}

build_libffi() {
    ./configure "${autotools_opts[@]}" --disable-docs --disable-multi-os-directory
    make -j2
    make install
}

build_gettext() {
    # Only gettext-runtime's libintl (glib's only use of gettext).
    cd gettext-runtime
    ./configure "${autotools_opts[@]}" --disable-java --disable-csharp \
        --disable-libasprintf --disable-openmp --disable-threads \
        --without-libiconv-prefix --without-libintl-prefix --disable-rpath
    make -j2 -C intl
    make -C intl install
}

build_glib20() {
    # Not the tests, the docs nor Linux-only parts; libintl from gettext,
    # not proxy-libintl; nothing from the network (nofallback).
    rm -rf "$objs/glib2.0"
    meson setup "$objs/glib2.0" . --cross-file "$mingw/cross.ini" \
        --prefix "$sysroot" --libdir lib --buildtype release \
        --wrap-mode nofallback --default-library shared \
        -Dtests=false -Dinstalled_tests=false -Dnls=disabled \
        -Dman=false -Dgtk_doc=false -Dlibmount=disabled -Dselinux=disabled \
        -Dxattr=false -Dsysprof=disabled -Ddtrace=false -Dsystemtap=false \
        -Dlibelf=disabled
    ninja -j2 -C "$objs/glib2.0"
    meson install --quiet -C "$objs/glib2.0"
    rm -rf "$objs/glib2.0"
}

build_libs() {
    local pkg dsc dir stamp want t0 fn chain=
    mkdir -p "$dl" "$srcs" "$objs" "$sysroot"
    for pkg in "${libs[@]}"; do
        dsc=$(fetch "$pkg")
        # A library is built again when one built before it is.
        want="$recipe $(sha256sum "$dsc" | cut -d' ' -f1)"
        chain=$(echo "$chain $want" | sha256sum | cut -d' ' -f1)
        want="$want $chain"
        stamp=$sysroot/.stamp-$pkg
        if [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
            say "$pkg: $(basename "$dsc" .dsc) already built"
            continue
        fi
        case "$(awk '/^Version:/ {print $2}' "$dsc")" in
        *:"${series[$pkg]}"*|"${series[$pkg]}"*) ;;
        *) die "$(basename "$dsc"): expected $pkg ${series[$pkg]}.*" ;;
        esac
        say "$pkg: building $(basename "$dsc" .dsc) for $triplet (log: $objs/$pkg.log)"
        t0=$(date +%s)
        dir=$(unpack "$pkg" "$dsc")
        fn=build_${pkg//./}
        # A shell of its own, so that set -e holds in the recipe; later
        # libraries are found through the sysroot's pkg-config.
        if ! (cd "$dir" && export PKG_CONFIG="$mingw/bin/$triplet-pkg-config" &&
              locked nice -n 10 bash -c "set -euo pipefail; \
                  $(declare -f "$fn"); $(declare -p autotools_opts sysroot objs mingw triplet); \
                  $fn") > "$objs/$pkg.log" 2>&1; then
            tail -30 "$objs/$pkg.log" >&2
            die "$pkg failed to build, see $objs/$pkg.log"
        fi
        rm -rf "${srcs:?}/$pkg"
        echo "$want" > "$stamp"
        say "$pkg: built in $(( $(date +%s) - t0 )) s ($(tail -1 "$mingw/lock-waits") s of it waiting for the build lock)"
    done
}

# ---------------------------------------------------------------- QEMU
# The device set: a PC machine and the two functions of the RDMA NIC.
# Written only when its text changes: a newer .mak makes meson configure again.
write_devices() {
    cat > "$mingw/pvrdma-mingw.mak.new" <<'EOF'
# SPDX-License-Identifier: GPL-2.0-or-later
# Device set of scripts/build-mingw.sh: a PC machine, vmxnet3 and pvrdma
# (the project's pvrdma.mak less what needs a Linux host, virtio-9p).
CONFIG_I440FX=y
CONFIG_Q35=y
CONFIG_PCI_BRIDGE=y
CONFIG_VMXNET3_PCI=y
CONFIG_PVRDMA=y
EOF
    if cmp -s "$mingw/pvrdma-mingw.mak.new" "$mingw/pvrdma-mingw.mak"; then
        rm -f "$mingw/pvrdma-mingw.mak.new"
    else
        mv "$mingw/pvrdma-mingw.mak.new" "$mingw/pvrdma-mingw.mak"
    fi
}

build_qemu() {
    [ -x "$src/configure" ] || die "no QEMU source tree at $src (make tree)"
    write_devices
    local devdir=$src/configs/devices/x86_64-softmmu rel
    rel=$(realpath --relative-to="$devdir" "$mingw/pvrdma-mingw")
    local opts=(
        --target-list=x86_64-softmmu
        "--cross-prefix=$triplet-"
        --python=/usr/bin/python3
        --without-default-features
        --without-default-devices
        "--with-devices-x86_64=$rel"
        --enable-tcg
        --disable-docs --disable-install-blobs --disable-download
        --disable-werror
    )
    local cc_note=none
    if command -v ccache >/dev/null; then
        opts+=("--cc=ccache $triplet-gcc")
        cc_note="ccache $triplet-gcc"
    fi
    export PKG_CONFIG=$mingw/bin/$triplet-pkg-config

    mkdir -p "$out"
    local optstamp="$out/.pvrdma-configure-options"
    if [ -e "$out/build.ninja" ] && [ "$(cat "$optstamp" 2>/dev/null)" != "${opts[*]}" ]; then
        say "configure options changed: configuring $out again"
        rm -rf "${out:?}"/* "$out"/.pvrdma-*
    fi
    local t0 start rc=0
    t0=$(date +%s)
    if [ ! -e "$out/build.ninja" ]; then
        say "configuring QEMU for a Windows host in $out (ccache: $cc_note)"
        (cd "$out" && nice -n 10 "$src/configure" "${opts[@]}") > "$out/configure.log" 2>&1 ||
            { tail -30 "$out/configure.log" >&2; die "configure failed, see $out/configure.log"; }
        echo "${opts[*]}" > "$optstamp"
        say "configured in $(( $(date +%s) - t0 )) s"
    fi
    # A build that is up to date but for QEMU's qemu-version.h (always
    # regenerated; when its text is unchanged, what includes it is not
    # rebuilt) takes a second or two: it need not wait for the build lock.
    local plan lock=locked
    plan=$(ninja -C "$out" -n "$exe" 2>/dev/null | grep '^\[' || true)
    if ! grep -q -v -e 'Generating qemu-version.h' -e 'system_vl\.c\.obj' \
            -e 'monitor_qmp-cmds-control\.c\.obj' -e "Linking target $exe\$" <<< "$plan"; then
        lock=
    fi
    say "building $exe (nice -n 10, -j2)"
    start=$(date +%s)
    (
        while sleep 30; do
            # || true: inherit_errexit would end the ticker before ninja's
            # first line (it waits for the build lock).
            p=$(grep -o '^\[[0-9]*/[0-9]*\]' "$out/ninja.log" 2>/dev/null | tail -1 || true)
            [ -z "$p" ] || say "  $p steps after $(( $(date +%s) - start )) s"
        done
    ) &
    ticker=$!
    trap 'kill $ticker 2>/dev/null || true' EXIT
    [ -n "$lock" ] || echo 0 >> "$mingw/lock-waits"
    $lock nice -n 10 ninja -j2 -k 0 -C "$out" "$exe" > "$out/ninja.log" 2>&1 || rc=$?
    kill $ticker 2>/dev/null || true
    say "ninja finished in $(( $(date +%s) - start )) s (exit $rc; $(tail -1 "$mingw/lock-waits") s of it waiting for the build lock)"
    if [ "$rc" -ne 0 ]; then
        grep -v 'WARNING: Source item' "$out/ninja.log" |
            grep -E '^FAILED:|error:|In function|undefined reference' > "$out/build-errors.txt" || true
        say "build errors (all in $out/build-errors.txt, full log $out/ninja.log):"
        head -40 "$out/build-errors.txt" >&2
        die "the Windows build failed"
    fi
}

# ---------------------------------------------------------------- checks
passed=0
failed=0
check() {
    local what=$1
    shift
    if "$@"; then
        say "ok: $what"
        passed=$((passed + 1))
    else
        say "FAILED: $what"
        failed=$((failed + 1))
    fi
}

check_pe() {
    local f
    f=$(file -b "$out/$exe")
    say "  file: $f"
    case "$f" in PE32+\ executable*x86-64*) return 0 ;; esac
    return 1
}

check_symbols() {
    local syms missing=0 s
    syms=$("$triplet-nm" "$out/$exe")
    for s in qmp_query_pvrdma pvrdma_realize; do
        if grep -qE " [TtDdBbRr] $s\$" <<< "$syms"; then
            say "  symbol: $(grep -E " $s\$" <<< "$syms" | head -1)"
        else
            say "  missing symbol: $s"
            missing=1
        fi
    done
    say "  soft backend symbols (rdma_soft_*): $(grep -cE ' [Tt] rdma_soft_' <<< "$syms" || true)"
    grep -qE ' [Tt] rdma_soft_' <<< "$syms" || missing=1
    if grep -qE ' [Tt] rdma_ibv_' <<< "$syms"; then
        say "  the Linux-only ibverbs backend is linked in"
        missing=1
    fi
    return $missing
}

# wine: Debian's wine64 runs the .exe with the DLLs of the sysroot (glib)
# and of the mingw-w64 runtime (libwinpthread-1.dll) on its path.
wine_bin=
wine_env=(env WINEDEBUG=-all "WINEPREFIX=$mingw/wine" "WINEPATH=$sysroot/bin;/usr/$triplet/lib")

check_wine_help() {
    local log=$mingw/wine-device-help.log
    timeout 300 "${wine_env[@]}" "$wine_bin" "$out/$exe" -device help > "$log" 2>&1 || true
    grep -E '"(pvrdma|vmxnet3)"' "$log" | sed 's/^/[mingw]   wine: /' || true
    grep -q '^name "pvrdma"' "$log"
}

# A PC machine with vmxnet3 and pvrdma in one slot, as the qtests make it;
# query-pvrdma over QMP on stdio.  One command at a time, each after the
# answer to the one before: QEMU's Windows stdio reader garbles lines that
# arrive together (seen under wine 8).  No option ROMs: vmxnet3's romfile
# is off, kvmvapic.bin is missing (a warning only); SeaBIOS is Debian's.
check_wine_qmp() {
    local log=$mingw/wine-qmp.log line cmd reply=
    : > "$log"
    coproc WINEQEMU {
        exec timeout 300 "${wine_env[@]}" "$wine_bin" "$out/$exe" \
            -L /usr/share/seabios -M pc -nodefaults -display none -S \
            -device vmxnet3,addr=4.0,multifunction=on,romfile= \
            -device pvrdma,id=rdma,addr=4.1 -qmp stdio 2>>"$log"
    }
    local in=${WINEQEMU[0]} to=${WINEQEMU[1]} pid=$WINEQEMU_PID
    for cmd in '' '{"execute": "qmp_capabilities"}' '{"execute": "query-pvrdma"}' \
               '{"execute": "quit"}'; do
        [ -z "$cmd" ] || { echo "$cmd" >&"$to"; echo "> $cmd" >> "$log"; }
        # The greeting, or the answer (events are skipped).
        while IFS= read -r -t 120 line <&"$in"; do
            line=${line%$'\r'}
            echo "< $line" >> "$log"
            case "$line" in
            '{"QMP":'*|'{"return"'*|'{"error"'*) break ;;
            esac
        done
        case "$cmd" in *query-pvrdma*) reply=$line ;; esac
    done
    wait "$pid" 2>/dev/null || true
    say "  wine: query-pvrdma: ${reply:0:200}"
    case "$reply" in *'"qom-path": "/machine/peripheral/rdma"'*'"backend": "soft"'* | \
                     *'"backend": "soft"'*'"qom-path": "/machine/peripheral/rdma"'*) return 0 ;;
    esac
    say "  (log: $log)"
    return 1
}

# ---------------------------------------------------------------- main
wine=no
case "${3:-}" in
--wine) wine=yes ;;
'') ;;
*) die "unknown option $3 (--wine or nothing)" ;;
esac

mkdir -p "$mingw"
: > "$mingw/lock-waits"
t_start=$(date +%s)
# The build in a shell of its own (set -e holds there); a failed build is
# one failed check, so that the summary line is always printed.
set +e
(
    set -e
    install_packages
    make_tools
    build_libs
    build_qemu
)
rc=$?
set -e
if [ "$rc" -ne 0 ]; then
    say "done in $(( $(date +%s) - t_start )) s ($(awk '{w += $1} END {print w + 0}' "$mingw/lock-waits") s of it waiting for the build lock)"
    echo "mingw: 0 passed, 1 failed (the Windows build failed)"
    exit 1
fi
check "$exe is a PE32+ executable" check_pe
check "$exe contains the pvrdma device and its soft backend" check_symbols
if [ "$wine" = yes ]; then
    bash "$top/scripts/apt-setup.sh" wine64 seabios > "$mingw/apt-wine.log" 2>&1 ||
        { tail -20 "$mingw/apt-wine.log" >&2; die "could not install wine64"; }
fi
wine_bin=$(command -v wine64 || command -v wine || true)
[ -n "$wine_bin" ] || [ ! -x /usr/lib/wine/wine64 ] || wine_bin=/usr/lib/wine/wine64
if [ -n "$wine_bin" ] && [ -e /usr/share/seabios/bios-256k.bin ]; then
    # The first run in a new prefix only creates it.
    if [ ! -e "$mingw/wine/system.reg" ]; then
        say "creating the wine prefix $mingw/wine"
        timeout 300 "${wine_env[@]}" "$wine_bin" wineboot --init > "$mingw/wine-prefix.log" 2>&1 || true
    fi
    check "wine: $exe -device help lists pvrdma" check_wine_help
    check "wine: pvrdma realizes, query-pvrdma answers" check_wine_qmp
    # The prefix's wineserver lingers after the last program: end it.
    wineserver=$(dirname "$wine_bin")/wineserver
    [ -x "$wineserver" ] || wineserver=$(command -v wineserver || true)
    [ -z "$wineserver" ] || WINEPREFIX=$mingw/wine "$wineserver" -k 2>/dev/null || true
else
    say "wine64 or seabios is not installed: $exe not run (--wine installs them)"
fi
say "done in $(( $(date +%s) - t_start )) s ($(awk '{w += $1} END {print w + 0}' "$mingw/lock-waits") s of it waiting for the build lock)"
echo "mingw: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
