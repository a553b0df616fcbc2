#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench, a lossy link (a benchmark, not a test: it prints figures and
# ratios measured in one run on this machine and asserts nothing about
# them).
#
# ib_write_bw, RC, 64 KiB messages, between two TCG guests whose link goes
# through tests/guest/relay.py (two-guests.sh --lossy SEED:DROP:0:0:0: the
# relay drops that fraction of the RoCE frames each way, at random, seeded),
# at 0%, 0.5%, 1% and 3% drop, for the device pairs
#   pvrdma <-> pvrdma    both guests on -device pvrdma (the soft backend)
#   pvrdma  -> rxe       client A on pvrdma, server B on Linux rxe
#   rxe    <-> rxe       both on rxe, for reference
# one boot pair per device pair, drop and round.  Each row gives the
# median over the rounds of the client's BW average (perftest's MB = 2^20
# B) with the lowest and highest, the median's ratio to the same pair's
# 0% median of this run (the relay is in the path at 0% too, so the ratio
# is what the losses cost), and from query-pvrdma of the pvrdma requester
# (guest A) the median of its local ACK timeouts and retransmissions (go
# back N, tail probes).  The rounds take the rows in turn (each round runs
# every drop once), so a machine that slows down during the bench slows
# every row alike; one run of 64 MiB lasts a few seconds, and single runs
# of the same row differed by a third.
# Column "sock drops": frames the host's UDP sockets dropped during the
# run (tests/bench/udp-drops.py), lost on top of the relay's on purpose,
# mostly in a receiving QEMU's full socket buffer; run the bench on a
# machine with nothing else on UDP.
# A run that did not finish within its deadline or failed says so; no
# figure is made up.  A run perftest could not time (its estimate of the
# guest's TSC rate failed: tests/bench/lib.sh, pair_bw) runs once more.
#
# Usage: loss-bench.sh [options] QEMU GUEST-DIR
#   --iters N      messages per run (default 4000, 256 MiB, with a pvrdma
#                  client: lossless runs of 1000 spread from 40 to 61 MB/s
#                  in one afternoon, runs of 4000 from 41.94 to 42.20;
#                  1000 for rxe -> rxe, whose 256 MiB at 3% would take
#                  longer than the deadline)
#   --rounds N     runs of each row (default 3)
#   --deadline S   per run (default 240, the deadline rxe -> rxe at 3%
#                  did not meet in issue 24)
#   --drops LIST   comma-separated fractions (default 0,0.005,0.01,0.03)
#   --pairs LIST   comma-separated, of pvrdma-pvrdma, pvrdma-rxe, rxe-rxe
#                  (default all three)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
usage="usage: loss-bench.sh [--iters N] [--rounds N] [--deadline S] [--drops LIST] [--pairs LIST] QEMU GUEST-DIR"
iters=
rounds=3
deadline=240
drops=0,0.005,0.01,0.03
pairs=pvrdma-pvrdma,pvrdma-rxe,rxe-rxe
while [ $# -gt 0 ]; do
    case $1 in
        --iters) iters=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --deadline) deadline=$2; shift 2 ;;
        --drops) drops=$2; shift 2 ;;
        --pairs) pairs=$2; shift 2 ;;
        -h|--help) echo "$usage"; exit 0 ;;
        -*) echo "loss-bench: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
        *) break ;;
    esac
done
qemu=${1:?$usage}
guest=${2:?$usage}
out=$(dirname "$guest")/bench/loss
mkdir -p "$out"

# shellcheck source=lib.sh
. "$here/lib.sh"

# query-pvrdma's counter @2 of guest A, from two-guests.sh's TAP output @1.
counter() {
    sed -n "s/^# guest A (pvrdma): roce: .* $2 \([0-9]*\).*/\1/p" "$1" | head -1
}

declare -A bw tmo rtx sdrop
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "loss-bench: --rounds wants a positive number" >&2; exit 2; }

# median W...: the middle one of the numbers among its arguments (the
# lower middle of an even count), "-" when none is a number; with
# "range" before them, "LOW-HIGH" instead
median() {
    local what=median
    [ "${1:-}" = range ] && { what=range; shift; }
    printf '%s\n' "$@" | awk -v what=$what '
        /^[0-9.]+$/ { v[n++] = $1 + 0 }
        END {
            if (!n) { print "-"; exit }
            for (i = 0; i < n; i++)
                for (j = i + 1; j < n; j++)
                    if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
            if (what == "range") printf "%g-%g\n", v[0], v[n - 1]
            else print v[int((n - 1) / 2)]
        }'
}

declare -A bw tmo rtx sdrop
IFS=, read -r -a drop_list <<<"$drops"
IFS=, read -r -a pair_list <<<"$pairs"
for round in $(seq 1 "$rounds"); do
for p in "${pair_list[@]}"; do
    cdev=${p%-*} sdev=${p#*-}
    n=${iters:-$([ "$cdev" = rxe ] && echo 1000 || echo 4000)}
    for d in "${drop_list[@]}"; do
        dir=$out/$p-$d-$round
        k=$p,$d,$round
        rm -rf "$dir"
        echo "[loss-bench] round $round of $rounds: $cdev -> $sdev, drop $d: ib_write_bw 64 KiB x $n (deadline $deadline s)"
        start=$SECONDS
        # (once more when perftest could not time the run: see pair_bw)
        for attempt in 1 2; do
            python3 "$here/udp-drops.py" >"$dir.udp" &
            sampler=$!
            QEMU=$qemu GUEST_DIR=$guest bash "$top/tests/guest/two-guests.sh" --no-build \
                --client-dev "$cdev" --server-dev "$sdev" --gids ipv4 \
                --timeout "$deadline" --lossy "24:$d:0:0:0" --log-dir "$dir" \
                --programs "ib_write_bw:65536:$n" >"$dir.tap" 2>&1
            kill "$sampler"
            wait "$sampler"
            sdrop[$k]=$(sed -n 's/^udp-drops \([0-9]*\) .*/\1/p' "$dir.udp")
            bw[$k]=$(pair_bw "$dir")
            case ${bw[$k]} in "no figure"*) ;; *) break ;; esac
            [ $attempt = 2 ] || echo "[loss-bench]   ${bw[$k]}: once more"
        done
        tmo[$k]=$(counter "$dir.tap" timeouts)
        rtx[$k]=$(counter "$dir.tap" retransmits)
        echo "[loss-bench]   ${bw[$k]} MB/s, $((SECONDS - start)) s, ${sdrop[$k]:-?} dropped by UDP sockets; $(grep -m1 '^# relay:' "$dir.tap" | sed 's/^# //')"
        # which sockets: DROPPED PORT PID COMMAND
        sed -n 's/^udp-drops-socket \([0-9]*\) \([0-9]*\) \([^ ]*\) \(.*\)$/[loss-bench]     \1 by port \2 (\4, pid \3)/p' "$dir.udp"
    done
done
done

# the values of array @1 for pair @2 and drop @3 over the rounds
over_rounds() {
    local -n a=$1
    local r
    for r in $(seq 1 "$rounds"); do echo "${a[$2,$3,$r]:-}"; done
}

echo
printf '%-18s %6s %12s %14s %8s %10s %12s %11s\n' "ib_write_bw 64 KiB" drop "MB/s" "(low-high)" "vs 0%" timeouts retransmits "sock drops"
for p in "${pair_list[@]}"; do
    # shellcheck disable=SC2046
    base=$(median $(over_rounds bw "$p" 0))
    for d in "${drop_list[@]}"; do
        # shellcheck disable=SC2046
        v=$(median $(over_rounds bw "$p" "$d"))
        if [ "$v" = - ]; then
            # no round gave a figure: say why the first one did not
            v=$(over_rounds bw "$p" "$d" | head -1)
        fi
        ratio=-
        if [[ $v =~ ^[0-9.]+$ && $base =~ ^[0-9.]+$ ]]; then
            ratio=$(awk -v a="$v" -v b="$base" 'BEGIN { if (b > 0) printf "%.0f%%", 100 * a / b; else print "-" }')
        fi
        # shellcheck disable=SC2046
        printf '%-18s %5s%% %12s %14s %8s %10s %12s %11s\n' "${p/-/ -> }" \
            "$(awk -v d="$d" 'BEGIN { printf "%g", 100 * d }')" "$v" \
            "($(median range $(over_rounds bw "$p" "$d")))" "$ratio" \
            "$(median $(over_rounds tmo "$p" "$d"))" \
            "$(median $(over_rounds rtx "$p" "$d"))" \
            "$(median $(over_rounds sdrop "$p" "$d"))"
    done
done
echo "(MB/s and the counters: medians of $rounds round(s), the range of MB/s in"
echo " parentheses; timeouts, retransmits: query-pvrdma of guest A's device"
echo " when it is pvrdma; vs 0%: against the same pair's median through the"
echo " relay without loss; sock drops: frames the host's UDP sockets dropped,"
echo " besides the relay's)"
