#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The "hosts" lane: cross-build QEMU with the pvrdma device and its qtests
# for another host, and run the qtests there.
#   build-hosts.sh <project-dir> <build-dir> <arch> [--run | --run-only]
# arch: s390x (big-endian, 64-bit; run under Debian's qemu-user-static) or i386
# (32-bit little-endian; run natively, an amd64 kernel runs i386 binaries).
# Output tree: <build-dir>/hosts-<arch>/qemu.  --run builds, then runs the
# qtests and prints "hosts-<arch>: N passed, N failed"; --run-only runs what
# is built.  QEMU_SRC: the source tree (default build/qemu-src).
# HOSTS_TIMEOUT: seconds per qtest binary (default 2400).
#
# How it works, and why:
# * Only amd64 packages are installed system-wide: the cross gcc with its
#   libc (gcc-<triplet>, libc6-dev-<arch>-cross) and qemu-user-static.
#   Not bookworm's dynamic qemu-user (7.2): its plugin code aborts the
#   s390x qtest binary at fork ("plugins/core.c:221:qemu_plugin_vcpu_init_hook:
#   assertion failed: (success)"), because the fork child re-creates the
#   call_rcu thread (util/rcu.c's atfork handler) and the child's new CPU
#   gets an index still in the plugin table; the static build has no plugins.
# * The <arch> libraries QEMU needs (glib, zlib) are not installed with
#   multiarch (dpkg --add-architecture; scripts/apt-foreign.sh says why):
#   a private apt state (<build-dir>/hosts-<arch>/apt, bookworm indexes for
#   <arch> only) downloads the .debs with "apt-get download", and
#   dpkg-deb -x unpacks them into <build-dir>/hosts-<arch>/sysroot.
# * pkg-config is a wrapper that points at the sysroot; the binaries carry
#   an RPATH to the sysroot (and, on i386, the cross libc's dynamic linker),
#   so they run without LD_LIBRARY_PATH.
# * QEMU 10.0 refuses 64-bit targets on 32-bit hosts (meson.build: "Disallow
#   64-bit on 32-bit emulation"; docs/about/removed-features.rst), so the
#   i386 host builds qemu-system-i386 (same PC machines and devices, what
#   Debian's qemu-system-x86 ships there) with configs/devices/i386-softmmu/
#   pvrdma.mak, which includes the x86_64 device set.
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 <project-dir> <build-dir> <s390x|i386> [--run|--run-only]" >&2; exit 2; }
top=$(cd "$1" && pwd)
mkdir -p "$2"
build=$(cd "$2" && pwd)
arch=$3
mode=${4:-build}
src=${QEMU_SRC:-$top/build/qemu-src}
hosts=$build/hosts-$arch
out=$hosts/qemu
sysroot=$hosts/sysroot
lane=hosts-$arch
# shellcheck source=apt-foreign.sh
. "$top/scripts/apt-foreign.sh"

say() { printf '[%s] %s\n' "$lane" "$*"; }
die() { printf '[%s] error: %s\n' "$lane" "$*" >&2; exit 1; }

case "$arch" in
s390x)
    triplet=s390x-linux-gnu       # the GNU triplet of the cross tools
    multiarch=s390x-linux-gnu     # Debian's library directory
    target=x86_64
    host_pkgs=(gcc-s390x-linux-gnu libc6-dev-s390x-cross qemu-user-static)
    ;;
i386)
    triplet=i686-linux-gnu
    multiarch=i386-linux-gnu
    target=i386                   # see above: no 64-bit targets on 32-bit hosts
    host_pkgs=(gcc-i686-linux-gnu libc6-dev-i386-cross)
    ;;
*) die "arch must be s390x or i386, not $arch" ;;
esac
qemu_bin=qemu-system-$target
# The <arch> packages unpacked into the sysroot: what the trimmed configure
# needs (glib-2.0 and zlib by pkg-config; glib's .pc requires libpcre2-8's),
# libslirp (-netdev user: a migration qtest) and libibverbs/librdmacm
# (--enable-rdma: hw/rdma/ibverbs is compiled for the host too, and the
# qtests that expect the ibverbs build's realize errors pass).  libattr is
# not needed: glibc's <sys/xattr.h> serves --enable-attr.
sysroot_pkgs=(libglib2.0-dev libglib2.0-0 libpcre2-dev libpcre2-8-0 zlib1g-dev zlib1g
              libslirp-dev libslirp0
              libibverbs-dev libibverbs1 librdmacm-dev librdmacm1 libnl-3-200 libnl-route-3-200)
qtests=(pvrdma-test pvrdma-datapath-test pvrdma-migration-test pvrdma-wire-test)
required_qtests=(pvrdma-test pvrdma-datapath-test pvrdma-migration-test)

# ---------------------------------------------------------------- packages
install_host_packages() {
    bash "$top/scripts/apt-setup.sh" "${host_pkgs[@]}" > "$hosts/apt-install.log" 2>&1 ||
        { tail -20 "$hosts/apt-install.log" >&2; die "could not install ${host_pkgs[*]}"; }
}

make_sysroot() {
    local stamp=$sysroot/.pvrdma-sysroot want
    want="${sysroot_pkgs[*]}"
    [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] && return 0
    local d=$hosts/apt f
    say "fetching the $arch libraries: ${sysroot_pkgs[*]}"
    foreign_apt_setup "$top" "$d" "$arch" || die "no private apt for $arch"
    foreign_apt_download "$d/debs" "${sysroot_pkgs[@]}" || die "apt-get download for $arch failed"
    rm -rf "$sysroot"
    mkdir -p "$sysroot"
    for f in "$d"/debs/*.deb; do
        dpkg-deb -x "$f" "$sysroot"
        basename "$f"
    done > "$hosts/sysroot-packages.txt"
    # Absolute symlinks (libz.so -> /lib/<multiarch>/...) point into the sysroot.
    find "$sysroot" -type l -lname '/*' -print | while read -r l; do
        t=$(readlink "$l")
        ln -sfn "$sysroot$t" "$l"
    done
    echo "$want" > "$stamp"
}

# pkg-config for the sysroot (configure takes it from $PKG_CONFIG).
make_pkg_config() {
    mkdir -p "$hosts/bin"
    cat > "$hosts/bin/$triplet-pkg-config" <<EOF
#!/bin/sh
# pkg-config for the $arch sysroot of scripts/build-hosts.sh
PKG_CONFIG_SYSROOT_DIR='$sysroot' \\
PKG_CONFIG_LIBDIR='$sysroot/usr/lib/$multiarch/pkgconfig:$sysroot/usr/share/pkgconfig' \\
PKG_CONFIG_PATH= exec pkg-config "\$@"
EOF
    chmod +x "$hosts/bin/$triplet-pkg-config"
}

# ------------------------------------------------------------------- build
build() {
    mkdir -p "$hosts"
    install_host_packages
    make_sysroot
    make_pkg_config
    [ -x "$src/configure" ] || die "no QEMU source tree at $src (make tree)"

    local libdirs="$sysroot/lib/$multiarch:$sysroot/usr/lib/$multiarch"
    # -I/-L: meson's cc.find_library() (ibverbs, rdmacm) does not use
    # pkg-config.  RPATH (not RUNPATH: it also serves libglib's own needs).
    local ldflags="-L$sysroot/usr/lib/$multiarch -Wl,-rpath-link,$libdirs"
    ldflags+=" -Wl,--disable-new-dtags -Wl,-rpath,$libdirs"
    if [ "$arch" = i386 ]; then
        # No i386 libc on the host: the cross libc's loader, by absolute path.
        ldflags+=":/usr/$triplet/lib -Wl,--dynamic-linker=/usr/$triplet/lib/ld-linux.so.2"
    fi
    local opts=(
        "--target-list=$target-softmmu"
        "--cross-prefix=$triplet-"
        --python=/usr/bin/python3
        --without-default-features
        --without-default-devices
        "--with-devices-$target=pvrdma"
        # as build-qemu.sh; kvm only matters for i386-softmmu on i386.
        # virtfs: pvrdma.mak sets CONFIG_VIRTIO_9P=y, which depends on VIRTFS
        --enable-tcg --enable-kvm --enable-slirp --enable-rdma
        --enable-attr --enable-virtfs
        --disable-docs --disable-install-blobs --disable-download
        --disable-werror
        # no -g: a tenth of the compile time, and these builds only run
        # the qtests (a failure there is debugged on a build with -g)
        --disable-debug-info
        "--extra-cflags=-I$sysroot/usr/include"
        "--extra-ldflags=$ldflags"
    )
    # ccache: Debian's ccache links the installed cross compilers into
    # /usr/lib/ccache (update-ccache-symlinks); without that link, name it.
    local cc_note=none
    if [ -x "/usr/lib/ccache/$triplet-gcc" ]; then
        export PATH=/usr/lib/ccache:$PATH
        cc_note="/usr/lib/ccache/$triplet-gcc"
    elif command -v ccache >/dev/null; then
        opts+=("--cc=ccache $triplet-gcc")
        cc_note="ccache $triplet-gcc"
    fi
    export PKG_CONFIG=$hosts/bin/$triplet-pkg-config

    mkdir -p "$out"
    local optstamp="$out/.pvrdma-configure-options"
    if [ -e "$out/build.ninja" ] && [ "$(cat "$optstamp" 2>/dev/null)" != "${opts[*]}" ]; then
        say "configure options changed: configuring $out again"
        rm -rf "${out:?}"/* "$out"/.pvrdma-*
    fi
    local t0 start
    t0=$(date +%s)
    if [ ! -e "$out/build.ninja" ]; then
        say "configuring QEMU for a $arch host in $out (ccache: $cc_note)"
        (cd "$out" && nice -n 10 "$src/configure" "${opts[@]}") > "$out/configure.log" 2>&1 ||
            { tail -30 "$out/configure.log" >&2; die "configure failed, see $out/configure.log"; }
        echo "${opts[*]}" > "$optstamp"
        say "configured in $(( $(date +%s) - t0 )) s"
    fi

    local targets=("$qemu_bin")
    local t
    for t in "${qtests[@]}"; do targets+=("tests/qtest/$t"); done
    say "building ${targets[*]} (nice -n 10, -j2)"
    start=$(date +%s)
    (
        while sleep 30; do
            p=$(grep -o '^\[[0-9]*/[0-9]*\]' "$out/ninja.log" 2>/dev/null | tail -1)
            [ -z "$p" ] || say "  $p steps after $(( $(date +%s) - start )) s"
        done
    ) &
    ticker=$!
    trap 'kill $ticker 2>/dev/null || true' EXIT
    # -k 0: every failing file is reported, and what does build is built.
    local rc=0
    nice -n 10 ninja -j2 -k 0 -C "$out" "${targets[@]}" > "$out/ninja.log" 2>&1 || rc=$?
    kill $ticker 2>/dev/null || true
    say "ninja finished in $(( $(date +%s) - start )) s (exit $rc; configure+build $(( $(date +%s) - t0 )) s)"

    # What built and what did not.
    local bad=0 missing=()
    for t in "${targets[@]}"; do
        if [ ! -x "$out/$t" ] || grep -q "^FAILED: .*[ /]$t\$\|^FAILED: $t\$" "$out/ninja.log"; then
            missing+=("$t")
        fi
    done
    if [ "$rc" -ne 0 ]; then
        # The compiler's own lines: "file:line:col: error: ..." and what
        # leads to them ("In function", "in expansion of macro", notes).
        grep -v 'WARNING: Source item' "$out/ninja.log" |
            grep -E '^FAILED:|error:|In function|In expansion|in expansion|note:|^\.\./' |
            grep -v '^\.\./.*: warning:' > "$out/build-errors.txt" || true
        say "build errors (all in $out/build-errors.txt, full log $out/ninja.log):"
        grep -E '^FAILED:|: error:' "$out/build-errors.txt" | head -40 >&2
        say "error locations (file:line):"
        grep -oE '^[^ :]+:[0-9]+:[0-9]+: error' "$out/ninja.log" | cut -d: -f1,2 |
            sort -u | sed 's/^/  /' >&2 || true
    fi
    for t in "${missing[@]}"; do
        case " ${required_qtests[*]} $qemu_bin " in
            *" ${t#tests/qtest/} "*) bad=1; say "NOT BUILT: $t" ;;
            *) say "not built (optional): $t" ;;
        esac
    done
    [ "$bad" -eq 0 ] || die "the $arch build failed"

    # Firmware: the option ROMs (guest code, built with the machine's cc)
    # and Debian's seabios and ipxe, as for build-qemu.sh.
    bash "$top/scripts/qemu-firmware.sh" "$src" "$out" ||
        say "no option ROMs for $out (-kernel boot will not work)"

    # The QEMU that the qtests start.  libqtest takes the architecture from
    # the name ("*-system-<arch>"), so the wrapper has the binary's name.
    mkdir -p "$hosts/run"
    if [ "$arch" = s390x ]; then
        cat > "$hosts/run/$qemu_bin" <<EOF
#!/bin/sh
exec qemu-s390x-static -L /usr/s390x-linux-gnu '$out/$qemu_bin' "\$@"
EOF
        chmod +x "$hosts/run/$qemu_bin"
    else
        ln -sfn "$out/$qemu_bin" "$hosts/run/$qemu_bin"
    fi
    say "built: $out/$qemu_bin ($(file -b "$out/$qemu_bin" | cut -d, -f1-2))"
}

# --------------------------------------------------------------------- run
run() {
    local qemu=$hosts/run/$qemu_bin log=$hosts/logs t p=0 f=0 tp tf planned start t0
    local runner=()
    [ -x "$qemu" ] || die "$qemu is missing: build first"
    [ "$arch" = s390x ] && runner=(qemu-s390x-static -L /usr/s390x-linux-gnu)
    # qemu-user reads QEMU_* variables as options: QEMU_VERSION (which
    # make exports, the QEMU release we build on) would make every run
    # print qemu-user's version and exit.
    unset QEMU_VERSION
    mkdir -p "$log"
    t0=$(date +%s)
    for t in "${qtests[@]}"; do
        if [ ! -x "$out/tests/qtest/$t" ]; then
            # One failure: a qtest that does not build for this host is a
            # portability bug too (see $out/build-errors.txt).
            echo "== $lane: tests/qtest/$t was not built (counted as 1 failed; $out/build-errors.txt)"
            f=$((f + 1))
            continue
        fi
        echo "== $lane: tests/qtest/$t"
        start=$(date +%s)
        QTEST_QEMU_BINARY=$qemu \
            timeout "${HOSTS_TIMEOUT:-2400}" "${runner[@]}" "$out/tests/qtest/$t" --tap -k \
            > "$log/$t.log" 2>&1 || true
        tp=$(grep -c '^ok' "$log/$t.log" || true)
        tf=$(grep -c '^not ok' "$log/$t.log" || true)
        # A crash or an abort ends a run early: tests that never ran fail.
        planned=$(grep -E '^1\.\.[0-9]+' "$log/$t.log" | head -1 | cut -d. -f3 || true)
        if [ -z "$planned" ]; then
            tf=$((tf + 1))
        elif [ $((tp + tf)) -lt "$planned" ]; then
            tf=$((planned - tp))
        fi
        echo "  $t: $tp passed, $tf failed (of ${planned:-?} planned) in $(( $(date +%s) - start )) s"
        # The failures with their first error line.
        awk '/^not ok/ {print "  " $0; if (err != "") print "    # " err; err = ""; next}
             /^ok/ {err = ""; next}
             err == "" && /ERROR|assertion|Bail out|[Aa]borted|Segmentation|qemu.*: / {err = $0}
             END {if (err != "") print "    # (last) " err}' "$log/$t.log" | head -60
        p=$((p + tp))
        f=$((f + tf))
    done
    echo "  qtests ran in $(( $(date +%s) - t0 )) s; logs in $log"
    echo "$lane: $p passed, $f failed"
}

case "$mode" in
build) build ;;
--run)
    # A build that fails is one failed test of the lane, so that the lane
    # still prints its summary line.
    if ! (build); then
        echo "$lane: 0 passed, 1 failed (the build failed, see $out/build-errors.txt)"
        exit 1
    fi
    run ;;
--run-only) run ;;
*) die "unknown mode $mode (--run or --run-only)" ;;
esac
