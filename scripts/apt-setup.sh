#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Make the Debian suites the build needs reachable through apt, and install
# the named packages that are missing.  Or, with --debian-uri, print the
# URI of the machine's Debian archive.  A package named PKG=VERSION is
# installed (or upgraded) unless that version is; PKG/SUITE picks a suite.
#
# The suites (trixie sources for QEMU 10.0, bookworm-backports for a recent
# meson) are derived from the mirror this machine already uses, so nothing
# here names a host.  Usage: apt-setup.sh [package...]
# Environment: APT_SETUP_UPDATE=1 runs apt-get update even if the last one
# is less than 12 hours old.
set -euo pipefail

say() { printf '[apt-setup] %s\n' "$*"; }
die() { printf '[apt-setup] error: %s\n' "$*" >&2; exit 1; }

list=/etc/apt/sources.list.d/pvrdma-build.sources
stamp=/var/lib/apt/pvrdma-build.updated

sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# The URI of the machine's Debian archive: the first deb822 or one-line entry
# that serves a Debian suite.
debian_uri() {
    local f uri
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -e "$f" ] || continue
        [ "$f" = "$list" ] && continue
        uri=$(awk '/^URIs:/ {u=$2} /^Suites:/ { for (i=2;i<=NF;i++) if ($i ~ /^(bookworm|trixie)$/) { print u; exit } }' "$f")
        [ -n "$uri" ] && { echo "$uri"; return; }
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -e "$f" ] || continue
        uri=$(awk '$1=="deb" && ($3=="bookworm" || $3=="trixie") { for (i=2;i<=NF;i++) if ($i ~ /^[a-z]+:/) { print $i; exit } }' "$f")
        [ -n "$uri" ] && { echo "$uri"; return; }
    done
}

ensure_sources() {
    if [ ! -e "$list" ]; then
        local uri
        uri=$(debian_uri)
        [ -n "$uri" ] || die "no Debian archive found in /etc/apt/sources*; add one"
        say "adding trixie sources and bookworm-backports from $uri to $list"
        sudo_ tee "$list" >/dev/null <<EOS
# Added by pvrdma's build (scripts/apt-setup.sh): QEMU 10.0 source from
# trixie, meson from bookworm-backports, kernel/rdma-core sources.
Types: deb-src
URIs: $uri
Suites: trixie bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOS
        sudo_ rm -f "$stamp"
    fi
    if [ "${APT_SETUP_UPDATE:-0}" = 1 ] || [ ! -e "$stamp" ] ||
       [ -n "$(find "$stamp" -mmin +720)" ]; then
        say "apt-get update"
        sudo_ apt-get update -qq || die "apt-get update failed"
        sudo_ touch "$stamp"
    fi
}

# --debian-uri: print the archive's URI (for a private apt configuration,
# scripts/qemu-tree.sh's QEMU 10.2 source from sid) and change nothing.
if [ "${1:-}" = --debian-uri ]; then
    debian_uri
    exit 0
fi

ensure_sources

missing=()
for p in "$@"; do
    name=${p%%[/=]*}
    if ! dpkg-query -W -f='${Status}' "$name" 2>/dev/null | grep -q 'ok installed'; then
        missing+=("$p")
    elif [ "$p" != "${p%%=*}" ] &&      # PKG=VERSION: that version
         [ "$(dpkg-query -W -f='${Version}' "$name")" != "${p#*=}" ]; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing: ${missing[*]}"
    sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null ||
        die "apt-get install ${missing[*]} failed"
fi
