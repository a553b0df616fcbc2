# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# A private apt for another architecture's packages of Debian 12, sourced by
# scripts/build-hosts.sh (a cross sysroot) and tests/guest/build-guest-arm64.sh
# (an arm64 guest).  Nothing is installed: the packages are downloaded with
# "apt-get download" and unpacked with dpkg-deb -x where the caller wants.
#
# Why not dpkg --add-architecture: bookworm is LTS now, and bookworm-security
# carries amd64 arm64 armhf i386 ppc64el only, so the amd64 Multi-Arch: same
# libraries can be newer than any build of them for another architecture,
# and their :<arch> -dev packages then cannot be co-installed.  A foreign
# architecture in dpkg also makes every later system "apt-get update" fetch
# (and, when the mirror is mid-sync, fail on) its indexes, which
# scripts/apt-setup.sh treats as fatal.
#
#   foreign_apt_setup TOP DIR ARCH    lists, cache and an empty status in DIR;
#                                     sets the array foreign_apt (apt-get's
#                                     options) and runs apt-get update once
#                                     a day (FOREIGN_APT_UPDATE=1: now)
#   foreign_apt_download DIR PKG...   apt-get download into DIR (emptied first)
#   foreign_apt_closure PKG...        PKG and everything it depends on
#                                     (Depends and Pre-Depends, real
#                                     packages only), one per line

foreign_apt=()

foreign_apt_setup() {
    local top=$1 d=$2 arch=$3 uri stamp
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/sources.list.d"
    d=$(cd "$d" && pwd)
    [ -e "$d/status" ] || : > "$d/status"
    # The machine's Debian archive; its security suite beside it
    # (deb.debian.org/debian -> deb.debian.org/debian-security).
    uri=$(bash "$top/scripts/apt-setup.sh" --debian-uri)
    [ -n "$uri" ] || { echo "apt-foreign: no Debian archive found in /etc/apt/sources*" >&2; return 1; }
    cat > "$d/sources.sources" <<EOF
Types: deb
URIs: $uri
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${uri%/}-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    foreign_apt=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
                 -o "Dir::State::Lists=$d/lists" -o "Dir::State::status=$d/status"
                 -o "Dir::Cache=$d/cache" -o "Dir::Etc::SourceList=$d/sources.sources"
                 -o "Dir::Etc::SourceParts=$d/sources.list.d" -o "APT::Sandbox::User=root")
    stamp=$d/.updated
    if [ "${FOREIGN_APT_UPDATE:-0}" = 1 ] || [ ! -e "$stamp" ] ||
       [ -n "$(find "$stamp" -mmin +1440 2>/dev/null)" ]; then
        # A partly failed update (a mirror mid-sync) is fine as long as the
        # packages resolve; the caller finds out when it downloads.
        if apt-get "${foreign_apt[@]}" update > "$d/update.log" 2>&1; then
            touch "$stamp"
        else
            echo "apt-foreign: apt-get update for $arch reported errors (see $d/update.log); going on" >&2
        fi
    fi
}

foreign_apt_download() {
    local dir=$1
    shift
    mkdir -p "$dir"
    rm -f "$dir"/*.deb
    (cd "$dir" && apt-get "${foreign_apt[@]}" download "$@") > "$dir/download.log" 2>&1 || {
        tail -20 "$dir/download.log" >&2
        return 1
    }
}

foreign_apt_closure() {
    # apt-cache prints virtual packages as <name>; a real package provides
    # each of them in the list too, so they are dropped.
    apt-cache "${foreign_apt[@]}" depends --recurse --no-recommends \
        --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "$@" |
        awk '/^[a-z0-9]/ { print $1 }' | sort -u
}
