#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make install / make uninstall: the emulator and its data, rdmacm-mux with
# its man page and systemd unit template, and the documentation.
#
# Usage: install.sh install|uninstall|list <project-dir> <qemu-build-dir>
# Environment: PREFIX (default /usr/local), DESTDIR (default empty).
#
#   $PREFIX/bin/qemu-system-x86_64, $PREFIX/bin/rdmacm-mux
#   $PREFIX/share/qemu/          firmware and data; QEMU finds it relative
#                                to its binary, so any PREFIX works.  The
#                                SeaBIOS and iPXE images are links to
#                                Debian's seabios and ipxe-qemu packages
#                                (the +ds QEMU source has no blobs), the
#                                option ROMs built here are copied
#   $PREFIX/share/man/man8/rdmacm-mux.8
#   $PREFIX/lib/systemd/system/rdmacm-mux@.service
#   $PREFIX/share/pvrdma/pvrdma-guest-driver   (for guests, section 4)
#   $PREFIX/share/doc/pvrdma/    README.md, pvrdma.txt
#
# install records what it put there in $PREFIX/share/doc/pvrdma/installed;
# uninstall removes exactly those files, then our directories left empty.
set -euo pipefail

mode=${1:-}
top=$(cd "${2:?usage: install.sh install|uninstall|list PROJECT QEMU-BUILD}" && pwd)
qb=${3:?usage: install.sh install|uninstall|list PROJECT QEMU-BUILD}
prefix=${PREFIX:-/usr/local}
destdir=${DESTDIR:-}
root=$destdir$prefix

say() { printf '[install] %s\n' "$*"; }
die() { printf '[install] error: %s\n' "$*" >&2; exit 1; }

case $prefix in /*) ;; *) die "PREFIX must be an absolute path (got '$prefix')" ;; esac

bundle=$qb/qemu-bundle/usr/local/share/qemu

# list: "SOURCE DEST-RELATIVE-TO-PREFIX MODE"; SOURCE "link:TARGET" makes a
# symbolic link, "unit:FILE" the unit with its binary path filled in.
entries() {
    local f t
    echo "$qb/qemu-system-x86_64 bin/qemu-system-x86_64 0755"
    echo "$qb/contrib/rdmacm-mux/rdmacm-mux bin/rdmacm-mux 0755"
    for f in "$bundle"/*; do
        [ -e "$f" ] || continue
        [ -d "$f" ] && continue
        if [ -L "$f" ]; then
            t=$(readlink -f "$f")
            case $t in
            /usr/share/*|/usr/lib/*) echo "link:$t share/qemu/${f##*/} -" ;;
            *) echo "$t share/qemu/${f##*/} 0644" ;;
            esac
        else
            echo "$f share/qemu/${f##*/} 0644"
        fi
    done
    for f in "$bundle"/keymaps/*; do
        [ -e "$f" ] && echo "$(readlink -f "$f") share/qemu/keymaps/${f##*/} 0644"
    done
    echo "$top/contrib/rdmacm-mux/rdmacm-mux.8 share/man/man8/rdmacm-mux.8 0644"
    echo "unit:$top/contrib/rdmacm-mux/rdmacm-mux@.service lib/systemd/system/rdmacm-mux@.service 0644"
    echo "$top/contrib/pvrdma-guest-driver/pvrdma-guest-driver share/pvrdma/pvrdma-guest-driver 0755"
    echo "$top/README.md share/doc/pvrdma/README.md 0644"
    echo "$top/docs/pvrdma.txt share/doc/pvrdma/pvrdma.txt 0644"
}

manifest=share/doc/pvrdma/installed

# Directories install creates, deepest first (uninstall removes them when empty)
dirs=(share/qemu/keymaps share/qemu share/pvrdma share/man/man8 share/man
      lib/systemd/system lib/systemd lib share/doc/pvrdma share/doc share bin)

do_install() {
    local src dst m n=0 total
    [ -x "$qb/qemu-system-x86_64" ] || die "no $qb/qemu-system-x86_64: run make first"
    [ -x "$qb/contrib/rdmacm-mux/rdmacm-mux" ] ||
        die "no $qb/contrib/rdmacm-mux/rdmacm-mux (libibumad-dev missing when QEMU was configured?)"
    [ -d "$bundle" ] || die "no $bundle: run make first"
    total=$(entries | wc -l)
    say "installing $total files into $root"
    mkdir -p "$root/$(dirname "$manifest")"
    while read -r src dst m; do
        n=$((n + 1))
        [ $((n % 25)) != 0 ] || say "$n of $total" >&2
        mkdir -p "$root/$(dirname "$dst")"
        case $src in
        link:*)
            [ -e "${src#link:}" ] || die "${src#link:} missing (install seabios and ipxe-qemu)"
            ln -sfn "${src#link:}" "$root/$dst"
            ;;
        unit:*)
            sed "s|@BINDIR@|$prefix/bin|g" "${src#unit:}" >"$root/$dst"
            chmod "$m" "$root/$dst"
            ;;
        *)
            install -m "$m" "$src" "$root/$dst"
            ;;
        esac
        echo "$dst"
    done < <(entries) >"$root/$manifest.new"
    echo "$manifest" >>"$root/$manifest.new"
    mv "$root/$manifest.new" "$root/$manifest"
    say "done: $prefix/bin/qemu-system-x86_64 -device pvrdma; man 8 rdmacm-mux;" \
        "systemctl enable --now rdmacm-mux@DEVICE:PORT"
}

do_uninstall() {
    local dst d n=0
    [ -f "$root/$manifest" ] || die "nothing installed in $root (no $root/$manifest)"
    while read -r dst; do
        case $dst in ''|/*|*..*) die "bad line '$dst' in $root/$manifest" ;; esac
        if [ -e "$root/$dst" ] || [ -L "$root/$dst" ]; then
            rm -f "$root/$dst"
            n=$((n + 1))
        fi
    done <"$root/$manifest"
    for d in "${dirs[@]}"; do
        [ -d "$root/$d" ] && rmdir --ignore-fail-on-non-empty "$root/$d"
    done
    say "removed $n files from $root"
}

case $mode in
install) do_install ;;
uninstall) do_uninstall ;;
list) entries | awk -v p="$prefix" '{ print p "/" $2 }' ;;
*) die "usage: install.sh install|uninstall|list PROJECT QEMU-BUILD" ;;
esac
