# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Domain XML from a template, for the lanes that run the device under
# libvirt (tests/libvirt/run.sh, tests/hostvm/slow.sh).

# fill_domain TEMPLATE FIELD=VALUE...: TEMPLATE with each @FIELD@ replaced
# by VALUE, escaped for a single-quoted attribute or element text.  (The
# replacement is quoted: bash 5.2 would take an unquoted & for the match.)
fill_domain() {
    local x f v
    x=$(cat "$1") || return 1
    shift
    for f in "$@"; do
        v=${f#*=}
        v=${v//&/"&amp;"}
        v=${v//</"&lt;"}
        v=${v//\'/"&apos;"}
        x=${x//"@${f%%=*}@"/"$v"}
    done
    printf '%s\n' "$x"
}
