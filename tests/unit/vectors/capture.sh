#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck disable=SC2317   # (the v_* functions are called by name)
#
# Re-capture the RoCE v2 test vectors of this directory: short runs of
# tests/guest/two-guests.sh, Linux rxe in both guests, each with --pcap on
# guest A's netdev, then trim-pcap.py keeps the RoCE v2 frames (the first
# 30 or fewer per file, every ICRC checked).  Boots two TCG guests per run (about 30 s
# each); not part of any test lane, which must not boot guests.
#
# Usage: capture.sh [NAME...]   (default: all of rc-send rc-write rc-read
#                               rc-atomic ud-send rc-send-ipv6 rping-ipv6)
#   Raw captures and logs go to build/two-guests/capture/<name>/, the
#   trimmed files to tests/unit/vectors/<name>.pcap.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
raw=$top/build/two-guests/capture
two=$top/tests/guest/two-guests.sh

case ${1:-} in -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac

# The runs whose RoCE v2 frames make each vector, in this order (options of
# two-guests.sh).  At the MTU of 1024, a message of 2100-2103 bytes is two
# full packets and a last one of 52-55 bytes (FIRST, MIDDLE, LAST), 201
# bytes is one (ONLY); sizes that are not multiples of 4 put pad bytes
# before the ICRC (BTH PadCnt 1-3).  Few iterations keep the files small
# (perftest wants at least 5).
v_rc_send() {
    run --programs ibv_rc_pingpong --gids ipv4 --size 2100 --iters 1
    run --programs ibv_rc_pingpong --gids ipv4 --size 201 --iters 1
}
v_rc_write() { run --programs ib_write_bw --gids ipv4 --size 2102 --iters 5; }
v_rc_read() { run --programs ib_read_bw --gids ipv4 --size 2103 --iters 5; }
v_rc_atomic() {
    run --programs ib_atomic_bw --gids ipv4 --iters 5
    run --programs ib_atomic_bw --gids ipv4 --iters 5 --args '-A CMP_AND_SWAP'
}
v_ud_send() { run --programs ibv_ud_pingpong --gids ipv4 --iters 2; }
v_rc_send_ipv6() { run --programs ibv_rc_pingpong --gids ipv6 --size 2101 --iters 1; }
v_rping_ipv6() { run --programs rping --gids ipv6; }
all="rc-send rc-write rc-read rc-atomic ud-send rc-send-ipv6 rping-ipv6"

# run OPTIONS...: one run of two-guests.sh for vector $name, its capture
# appended to caps (ok stays 1 only if every run passed)
run() {
    local i=$(( ${#caps[@]} + 1 )) cap
    cap=$raw/$name/$i.pcap
    echo "== $name run $i: tests/guest/two-guests.sh $* --pcap $cap"
    if "$two" --no-build "$@" --log-dir "$raw/$name/logs-$i" --pcap "$cap" \
            >"$raw/$name/run-$i.out" 2>&1; then
        tail -n 1 "$raw/$name/run-$i.out"
    else
        tail -n 20 "$raw/$name/run-$i.out"
        ok=0
    fi
    caps+=("$cap")
}

st=0
"$top/tests/guest/build-guest.sh" >/dev/null || { echo "build-guest.sh failed" >&2; exit 1; }
names=("$@")
[ ${#names[@]} -gt 0 ] || read -r -a names <<<"$all"
for name in "${names[@]}"; do
    type "v_${name//-/_}" >/dev/null 2>&1 || { echo "unknown vector $name (known: $all)" >&2; st=1; continue; }
    rm -rf "${raw:?}/$name"
    mkdir -p "$raw/$name"
    caps=() ok=1
    "v_${name//-/_}"
    if [ $ok = 1 ]; then
        python3 "$here/trim-pcap.py" --max 30 -o "$here/$name.pcap" "${caps[@]}" || st=1
    else
        echo "== $name: a run failed, $name.pcap left as it was"; st=1
    fi
done
exit $st
