#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# check.sh judges the guests' console logs; this checks a few of its
# verdicts on console logs written here, where a real run gives the case
# only by chance: a program's known defect excused with exactly its
# ending, and the same exit status failed with any other.  Prints TAP.
#
# Usage: check-selftest.sh [WORK-DIR]   (default: a temporary directory)
# Exit status: 0 when every verdict was the expected one.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=${1:-}
if [ -z "$work" ]; then
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

# tap_result (tests/tap.sh)
# shellcheck source=../tap.sh
. "$here/../tap.sh"
tap_out=$work/check.out

# rping_log FILE CLIENT-STATUS CLIENT-PINGS CLIENT-ENDING...: the console
# log of one rping pair (-C 10), the server's side whole and exited 0
rping_log() {
    local f=$1 rc=$2 pings=$3 i
    shift 3
    {
        echo "GUEST-BEGIN: rping"
        echo "server: rping -s -a 10.0.3.2 -p 19270 -C 10 -v -V"
        echo "client: rping -c -a 10.0.3.2 -p 19270 -C 10 -v -V"
        echo "--- server (exit 0)"
        for ((i = 0; i < 10; i++)); do echo "server ping data: rdma-ping-$i: ABCDEFG"; done
        echo "server DISCONNECT EVENT..."
        echo "wait for RDMA_READ_ADV state 10"
        echo "--- client (exit $rc)"
        for ((i = 0; i < pings; i++)); do echo "ping data: rdma-ping-$i: ABCDEFG"; done
        printf '%s\n' "$@"
        echo "GUEST-END: rping"
    } | sed 's/$/\r/' >"$f"
    echo 0 >"$f.rc"
}

# expect NAME PASS|FAIL PATTERN LOG: check.sh's verdict on test rping of
# LOG is PASS or FAIL, and its output matches PATTERN (grep -E)
expect() {
    local name=$1 want=$2 pat=$3 log=$4
    GUEST_DIR=$work "$here/check.sh" --console "$log" --tests rping >"$tap_out" 2>&1
    if grep -q "^$want: rping" "$tap_out" && grep -qE "$pat" "$tap_out"; then
        tap_result OK "$name"
    else
        echo "(check.sh's output above) wanted $want and /$pat/" >>"$tap_out"
        tap_result FAIL "$name" "$tap_out"
    fi
}

echo "1..6"

# the race (rping of rdma-core 44): all pings, the client's DISCONNECT
# EVENT, then rdma_get_cm_event() on the destroyed channel, exit 255
rping_log "$work/race.log" 255 10 "client DISCONNECT EVENT..." \
    "rdma_get_cm_event: Bad file descriptor"
expect "rping: teardown race after a full run is excused" PASS \
    'PASS: rping \(client exit status 255 excused: .*teardown race' "$work/race.log"

rping_log "$work/clean.log" 0 10 "client DISCONNECT EVENT..."
expect "rping: a clean run passes, nothing excused" PASS '^PASS: rping$' "$work/clean.log"

# the same ending after a ping short: the check still fails it
rping_log "$work/short.log" 255 9 "client DISCONNECT EVENT..." \
    "rdma_get_cm_event: Bad file descriptor"
expect "rping: the race's ending does not excuse a missing ping" FAIL \
    'client: 9 of 10' "$work/short.log"

# exit 255 with another ending (an error of the connection)
rping_log "$work/reject.log" 255 10 "cma event RDMA_CM_EVENT_REJECTED, error 8" \
    "rdma_get_cm_event: Bad file descriptor"
expect "rping: exit 255 without the side's DISCONNECT EVENT fails" FAIL \
    'client exit status 255' "$work/reject.log"

# the race's ending with another exit status
rping_log "$work/status.log" 1 10 "client DISCONNECT EVENT..." \
    "rdma_get_cm_event: Bad file descriptor"
expect "rping: the race's ending with exit status 1 fails" FAIL \
    'client exit status 1' "$work/status.log"

# something after the error line: not the race's ending
rping_log "$work/more.log" 255 10 "client DISCONNECT EVENT..." \
    "rdma_get_cm_event: Bad file descriptor" "rping client failed: -1"
expect "rping: lines after the race's error line fail" FAIL \
    'client exit status 255' "$work/more.log"

# shellcheck disable=SC2154   # fail: tests/tap.sh
[ "$fail" = 0 ]
