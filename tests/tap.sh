# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# The verdict lines of the lane scripts that are not QEMU tests (install,
# guest-driver, libvirt, patches): "ok N what" / "not ok N what" with the
# evidence of a failure on "  # " lines, and the lane's summary line
# "LANE: N passed, N failed" that scripts/check.sh counts.
#
# Source it, then set tap_out to a scratch file (check keeps a command's
# output there).  pass, fail and n are the counts so far.
pass=0 fail=0 n=0

# tap_result OK|SKIP|FAIL WHAT [EVIDENCE-FILE] (SKIP: its first line is
# the reason; a skip counts as passed, as scripts/check.sh counts it)
tap_result() {
    n=$((n + 1))
    if [ "$1" = OK ]; then
        echo "ok $n $2"
        pass=$((pass + 1))
    elif [ "$1" = SKIP ]; then
        echo "ok $n $2 # SKIP $(head -n 1 "${3:-/dev/null}")"
        pass=$((pass + 1))
    else
        echo "not ok $n $2"
        [ -z "${3:-}" ] || tail -n 20 "$3" | sed 's/^/  # /'
        fail=$((fail + 1))
    fi
}

# check WHAT COMMAND...: a verdict on COMMAND's exit status
check() {
    local what=$1
    shift
    if "$@" >"${tap_out:?tap_out: no scratch file}" 2>&1; then
        tap_result OK "$what"
    else
        tap_result FAIL "$what" "$tap_out"
    fi
}

# tap_summary LANE
tap_summary() {
    echo "$1: $pass passed, $fail failed"
}
