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
# one boot pair per device pair and drop.  Each row gives the client's BW
# average (perftest's MB = 2^20 B), its ratio to the same pair's 0% figure
# of this run (the relay is in the path at 0% too, so the ratio is what
# the losses cost), and from query-pvrdma of the pvrdma requester (guest
# A) its local ACK timeouts and retransmissions (go back N, tail probes).
# Column "sock drops": frames the host's UDP sockets dropped during the
# run (tests/bench/udp-drops.py), lost on top of the relay's on purpose,
# mostly in a receiving QEMU's full socket buffer; run the bench on a
# machine with nothing else on UDP.
# A run that did not finish within its deadline or failed says so; no
# figure is made up.  A run perftest could not time (its estimate of the
# guest's TSC rate failed: tests/bench/lib.sh, pair_bw) runs once more.
#
# Usage: loss-bench.sh [options] QEMU GUEST-DIR
#   --iters N      messages per run (default 1000: 64 MiB)
#   --deadline S   per run (default 240, the deadline rxe -> rxe at 3%
#                  did not meet in issue 24)
#   --drops LIST   comma-separated fractions (default 0,0.005,0.01,0.03)
#   --pairs LIST   comma-separated, of pvrdma-pvrdma, pvrdma-rxe, rxe-rxe
#                  (default all three)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
usage="usage: loss-bench.sh [--iters N] [--deadline S] [--drops LIST] [--pairs LIST] QEMU GUEST-DIR"
iters=1000
deadline=240
drops=0,0.005,0.01,0.03
pairs=pvrdma-pvrdma,pvrdma-rxe,rxe-rxe
while [ $# -gt 0 ]; do
    case $1 in
        --iters) iters=$2; shift 2 ;;
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
IFS=, read -r -a drop_list <<<"$drops"
IFS=, read -r -a pair_list <<<"$pairs"
for p in "${pair_list[@]}"; do
    cdev=${p%-*} sdev=${p#*-}
    for d in "${drop_list[@]}"; do
        dir=$out/$p-$d
        rm -rf "$dir"
        echo "[loss-bench] $cdev -> $sdev, drop $d: ib_write_bw 64 KiB x $iters (deadline $deadline s)"
        start=$SECONDS
        # (once more when perftest could not time the run: see pair_bw)
        for attempt in 1 2; do
            python3 "$here/udp-drops.py" >"$dir.udp" &
            sampler=$!
            QEMU=$qemu GUEST_DIR=$guest bash "$top/tests/guest/two-guests.sh" --no-build \
                --client-dev "$cdev" --server-dev "$sdev" --gids ipv4 \
                --timeout "$deadline" --lossy "24:$d:0:0:0" --log-dir "$dir" \
                --programs "ib_write_bw:65536:$iters" >"$dir.tap" 2>&1
            kill "$sampler"
            wait "$sampler"
            sdrop[$p,$d]=$(sed -n 's/^udp-drops \([0-9]*\) .*/\1/p' "$dir.udp")
            bw[$p,$d]=$(pair_bw "$dir")
            case ${bw[$p,$d]} in "no figure"*) ;; *) break ;; esac
            [ $attempt = 2 ] || echo "[loss-bench]   ${bw[$p,$d]}: once more"
        done
        tmo[$p,$d]=$(counter "$dir.tap" timeouts)
        rtx[$p,$d]=$(counter "$dir.tap" retransmits)
        echo "[loss-bench]   ${bw[$p,$d]} MB/s, $((SECONDS - start)) s, ${sdrop[$p,$d]:-?} dropped by UDP sockets; $(grep -m1 '^# relay:' "$dir.tap" | sed 's/^# //')"
        # which sockets: DROPPED PORT PID COMMAND
        sed -n 's/^udp-drops-socket \([0-9]*\) \([0-9]*\) \([^ ]*\) \(.*\)$/[loss-bench]     \1 by port \2 (\4, pid \3)/p' "$dir.udp"
    done
done

echo
printf '%-18s %6s %12s %10s %10s %12s %11s\n' "ib_write_bw 64 KiB" drop "MB/s" "vs 0%" timeouts retransmits "sock drops"
for p in "${pair_list[@]}"; do
    base=${bw[$p,0]:-}
    for d in "${drop_list[@]}"; do
        v=${bw[$p,$d]}
        ratio=-
        if [[ $v =~ ^[0-9.]+$ && $base =~ ^[0-9.]+$ ]]; then
            ratio=$(awk -v a="$v" -v b="$base" 'BEGIN { if (b > 0) printf "%.0f%%", 100 * a / b; else print "-" }')
        fi
        printf '%-18s %5s%% %12s %10s %10s %12s %11s\n' "${p/-/ -> }" \
            "$(awk -v d="$d" 'BEGIN { printf "%g", 100 * d }')" "$v" "$ratio" \
            "${tmo[$p,$d]:--}" "${rtx[$p,$d]:--}" "${sdrop[$p,$d]:--}"
    done
done
echo "(timeouts, retransmits: query-pvrdma of guest A's device when it is pvrdma;"
echo " vs 0%: against the same pair's figure through the relay without loss;"
echo " sock drops: frames the host's UDP sockets dropped, besides the relay's)"
