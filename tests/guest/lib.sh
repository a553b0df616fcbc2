# SPDX-License-Identifier: GPL-2.0-or-later
#
# Helpers shared by the scripts that assemble and boot TCG test machines:
# the lane-2 guest (tests/guest) and the lane-3 host VM (tests/hostvm).
# Sourced by bash scripts; the functions print their errors on stderr and
# return non-zero, the caller decides what to do.

# stage_kmods ROOT ABI STAGE ORDER MODULE...: copy MODULEs and their
# dependencies from the extracted kernel package ROOT into
# STAGE/usr/lib/modules/ABI (decompressed, in the kernel's own layout), write
# their paths relative to that directory to ORDER in load order (dependencies
# first, each once) and run depmod on STAGE.
stage_kmods() {
    local root=$1 abi=$2 stage=$3 order=$4 m deps kind path rel mdir
    shift 4
    mdir=$stage/usr/lib/modules/$abi
    mkdir -p "$mdir"
    : >"$order"
    for m in "$@"; do
        deps=$(modprobe -d "$root" -S "$abi" --show-depends "$m" 2>&1) || {
            echo "module $m is not in the kernel package at $root: $deps" >&2
            return 1
        }
        while read -r kind path _; do
            [ "$kind" = insmod ] || continue
            rel=${path#"$root"/lib/modules/"$abi"/}
            case $rel in *.ko.xz|*.ko.zst|*.ko.gz) rel=${rel%.*} ;; esac
            [ -e "$mdir/$rel" ] && continue
            mkdir -p "$(dirname "$mdir/$rel")"
            case $path in
                *.ko.xz) xz -dc "$path" >"$mdir/$rel" ;;
                *.ko.zst) zstd -qdc "$path" >"$mdir/$rel" ;;
                *.ko.gz) gzip -dc "$path" >"$mdir/$rel" ;;
                *) cp "$path" "$mdir/$rel" ;;
            esac || { echo "could not copy $path" >&2; return 1; }
            echo "$rel" >>"$order"
        done <<<"$deps"
    done
    for m in modules.builtin modules.builtin.modinfo; do
        [ ! -f "$root/lib/modules/$abi/$m" ] || cp "$root/lib/modules/$abi/$m" "$mdir/"
    done
    cp "$order" "$mdir/modules.order"
    depmod -b "$stage" "$abi" || { echo "depmod -b $stage $abi failed" >&2; return 1; }
}

# qemu_fw_args QEMU: set the array fw to the -L options QEMU needs to boot
# -kernel: Debian's SeaBIOS and iPXE (packages seabios, ipxe-qemu) and the
# option ROMs of QEMU's build tree (linuxboot_dma.bin is what makes -kernel
# boot).  Fails when QEMU still finds no bios-256k.bin or linuxboot_dma.bin.
qemu_fw_args() {
    local qemu=$1 d r qdir found
    for d in /usr/share/seabios /usr/lib/ipxe/qemu; do
        [ -d "$d" ] || {
            echo "missing firmware directory $d (install seabios ipxe-qemu)" >&2
            return 1
        }
    done
    fw=(-L /usr/share/seabios -L /usr/lib/ipxe/qemu)
    qdir=$(dirname "$qemu")
    for d in "$qdir/pc-bios/optionrom" "$qdir/pc-bios"; do
        [ -e "$d/linuxboot_dma.bin" ] && { fw+=(-L "$d"); break; }
    done
    for r in bios-256k.bin linuxboot_dma.bin; do
        found=0
        while read -r d; do
            [ -e "$d/$r" ] && { found=1; break; }
        done < <("$qemu" "${fw[@]}" -L help 2>/dev/null)
        [ $found = 1 ] || {
            echo "QEMU finds no $r in its data directories ($("$qemu" "${fw[@]}" -L help 2>/dev/null | tr '\n' ' '))" >&2
            return 1
        }
    done
}

# stage_skeleton STAGE: an empty initramfs tree in STAGE (merged /usr, the
# mount points, /dev/console and /dev/null, which the kernel and init need
# before devtmpfs is mounted).  mknod needs root.
stage_skeleton() {
    local stage=$1
    rm -rf "$stage"
    mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib/x86_64-linux-gnu,usr/lib64,etc,proc,sys,dev,run,tmp,root,mnt,var} &&
    ln -s usr/bin "$stage/bin" &&
    ln -s usr/sbin "$stage/sbin" &&
    ln -s usr/lib "$stage/lib" &&
    ln -s usr/lib64 "$stage/lib64" &&
    chmod 1777 "$stage/tmp" &&
    mknod -m 600 "$stage/dev/console" c 5 1 &&
    mknod -m 666 "$stage/dev/null" c 1 3
}

# stage_busybox BUSYBOX STAGE [LISTER]: the static BUSYBOX as
# STAGE/usr/bin/busybox, with a link for each of its applets that no file in
# the stage provides already (so copy the real tools first).  LISTER is a
# busybox that runs here with the same applets (the host's, of the same
# Debian package, when BUSYBOX is another architecture's); default BUSYBOX.
stage_busybox() {
    local busybox=$1 stage=$2 lister=${3:-$1} a
    [ "$busybox" -ef "$stage/usr/bin/busybox" ] || cp "$busybox" "$stage/usr/bin/busybox" || return 1
    for a in $("$lister" --list); do
        case $a in init|linuxrc|busybox) continue ;; esac
        [ -e "$stage/usr/bin/$a" ] || [ -e "$stage/usr/sbin/$a" ] ||
            ln -s busybox "$stage/usr/bin/$a" || return 1
    done
}

# pack_initramfs STAGE FILE: STAGE as a gzip'ed cpio (newc) in FILE, owned
# by root, in a stable order; FILE is replaced only when that worked.
pack_initramfs() {
    local stage=$1 out=$2
    (cd "$stage" && find . -print0 | LC_ALL=C sort -z |
        cpio --null -o -H newc --quiet -R 0:0) | gzip -6 >"$out.tmp" &&
        mv "$out.tmp" "$out"
}

# The verdicts of a test driver: "PASS: name", or "FAIL: name" followed by
# its reasons, one "#   " line each (empty ones skipped); counted in
# npass and nfail.  "SKIP: name" with its reason, for what this guest
# cannot run, counts as passed.  verdict_summary LANE prints "LANE: N passed, N failed"
# and exits 0 only if nothing failed.
npass=0
nfail=0
pass() { echo "PASS: $1"; npass=$((npass + 1)); }
skip() { echo "SKIP: $1"; printf '#   %s\n' "$2"; npass=$((npass + 1)); }
fail() {
    local l
    echo "FAIL: $1"
    shift
    printf '%s\n' "$@" | while IFS= read -r l; do
        [ -z "$l" ] || printf '#   %s\n' "$l"
    done
    nfail=$((nfail + 1))
}
verdict_summary() {
    echo "$1: $npass passed, $nfail failed"
    [ "$nfail" = 0 ]
    exit $?
}
