#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench, -q scaling (a benchmark, not a test: it prints figures and
# ratios measured in one run on this machine and asserts nothing about
# them).
#
# ib_write_bw, RC, 64 KiB messages, between two TCG guests on one -netdev
# dgram link (tests/guest/two-guests.sh, IPv4 GIDs), with 1, 16 and 64 QPs
# (perftest -q), the same total of messages each time (-n TOTAL/q per QP),
# one boot pair per run.  Each row gives the client's aggregate BW average
# (perftest's MB = 2^20 B) and its ratio to the first -q of the same
# round.  The -q values take turns, round after round, so that what the
# machine does meanwhile falls on all of them alike; the last rows give
# each -q's median over the rounds and its ratio to the first -q's.  (One
# run of 3200 messages moved data for under 2 s: two runs of the same -q
# differed by up to 30%.)  A run that did not finish within its deadline
# or failed says so.
#
# Usage: qscale-bench.sh [options] QEMU GUEST-DIR
#   --total N      messages over all QPs (default 12800: 800 MiB)
#   --qps LIST     comma-separated -q values (default 1,16,64)
#   --rounds N     runs of each -q (default 3)
#   --devs LIST    of pvrdma, rxe (default pvrdma: both guests on it)
#   --deadline S   per run (default 240)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
usage="usage: qscale-bench.sh [--total N] [--qps LIST] [--rounds N] [--devs LIST] [--deadline S] QEMU GUEST-DIR"
total=12800
qps=1,16,64
rounds=3
devs=pvrdma
deadline=240
while [ $# -gt 0 ]; do
    case $1 in
        --total) total=$2; shift 2 ;;
        --qps) qps=$2; shift 2 ;;
        --rounds) rounds=$2; shift 2 ;;
        --devs) devs=$2; shift 2 ;;
        --deadline) deadline=$2; shift 2 ;;
        -h|--help) echo "$usage"; exit 0 ;;
        -*) echo "qscale-bench: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
        *) break ;;
    esac
done
qemu=${1:?$usage}
guest=${2:?$usage}
for v in "$total" "$deadline" "$rounds" ${qps//,/ }; do
    case $v in ''|*[!0-9]*|0) echo "qscale-bench: --total, --qps, --rounds and --deadline want positive numbers" >&2; exit 2 ;; esac
done
out=$(dirname "$guest")/bench/qscale
mkdir -p "$out"

# shellcheck source=lib.sh
. "$here/lib.sh"

echo "[qscale-bench] ib_write_bw 64 KiB, $total messages over all QPs, -q ${qps//,/ }, $rounds rounds, ${devs//,/ }; deadline $deadline s"
# ratio A B: A / B to two places, or - when either is not a figure
ratio() {
    case $1$2 in *[!0-9.]*|'') echo - ;; *) awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }' ;; esac
}
# median FIGURE...: the median of the figures among the arguments, or -
median() {
    printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g |
        awk '{ v[NR] = $1 } END { if (!NR) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for dev in ${devs//,/ }; do
    declare -A bws=()
    printf '%-18s %5s %4s %7s %12s %7s\n' pair round '-q' '-n/QP' 'BW MB/s' ratio
    for r in $(seq 1 "$rounds"); do
        base=
        for q in ${qps//,/ }; do
            n=$(( (total + q - 1) / q ))
            d=$out/$dev-q$q-r$r
            start=$SECONDS
            QEMU=$qemu GUEST_DIR=$guest bash "$top/tests/guest/two-guests.sh" --no-build \
                --client-dev "$dev" --server-dev "$dev" --gids ipv4 --timeout "$deadline" \
                --args "-q $q" --log-dir "$d" \
                --programs "ib_write_bw:65536:$n" >"$d.tap" 2>&1
            bw=$(pair_bw "$d")
            [ "$q" != "${qps%%,*}" ] || base=$bw
            bws[$q]+=" $bw"
            printf '%-18s %5s %4s %7s %12s %7s\n' "$dev <-> $dev" "$r" "$q" "$n" "$bw" "$(ratio "$bw" "$base")"
            echo "  ($((SECONDS - start)) s; logs $d)" >&2
        done
    done
    base=$(median ${bws[${qps%%,*}]})
    for q in ${qps//,/ }; do
        m=$(median ${bws[$q]})
        k=$(printf '%s\n' ${bws[$q]} | grep -cE '^[0-9.]+$')
        [ "$k" = "$rounds" ] || echo "  (-q $q: $k of $rounds runs gave a figure)"
        printf '%-18s %5s %4s %7s %12s %7s\n' "$dev <-> $dev" median "$q" "$(( (total + q - 1) / q ))" "$m" "$(ratio "$m" "$base")"
    done
    unset bws
done
