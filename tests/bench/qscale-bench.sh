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
# one boot pair per -q.  Each row gives the client's aggregate BW average
# (perftest's MB = 2^20 B) and its ratio to the first -q of this run.  A
# run that did not finish within its deadline or failed says so.
#
# Usage: qscale-bench.sh [options] QEMU GUEST-DIR
#   --total N      messages over all QPs (default 3200: 200 MiB)
#   --qps LIST     comma-separated -q values (default 1,16,64)
#   --devs LIST    of pvrdma, rxe (default pvrdma: both guests on it)
#   --deadline S   per run (default 240)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
usage="usage: qscale-bench.sh [--total N] [--qps LIST] [--devs LIST] [--deadline S] QEMU GUEST-DIR"
total=3200
qps=1,16,64
devs=pvrdma
deadline=240
while [ $# -gt 0 ]; do
    case $1 in
        --total) total=$2; shift 2 ;;
        --qps) qps=$2; shift 2 ;;
        --devs) devs=$2; shift 2 ;;
        --deadline) deadline=$2; shift 2 ;;
        -h|--help) echo "$usage"; exit 0 ;;
        -*) echo "qscale-bench: unknown option $1" >&2; echo "$usage" >&2; exit 2 ;;
        *) break ;;
    esac
done
qemu=${1:?$usage}
guest=${2:?$usage}
for v in "$total" "$deadline" ${qps//,/ }; do
    case $v in ''|*[!0-9]*|0) echo "qscale-bench: --total, --qps and --deadline want positive numbers" >&2; exit 2 ;; esac
done
out=$(dirname "$guest")/bench/qscale
mkdir -p "$out"

# shellcheck source=lib.sh
. "$here/lib.sh"

echo "[qscale-bench] ib_write_bw 64 KiB, $total messages over all QPs, -q ${qps//,/ }, ${devs//,/ }; deadline $deadline s"
for dev in ${devs//,/ }; do
    base=
    printf '%-18s %4s %7s %12s %7s\n' pair '-q' '-n/QP' 'BW MB/s' ratio
    for q in ${qps//,/ }; do
        n=$(( (total + q - 1) / q ))
        d=$out/$dev-q$q
        start=$SECONDS
        QEMU=$qemu GUEST_DIR=$guest bash "$top/tests/guest/two-guests.sh" --no-build \
            --client-dev "$dev" --server-dev "$dev" --gids ipv4 --timeout "$deadline" \
            --args "-q $q" --log-dir "$d" \
            --programs "ib_write_bw:65536:$n" >"$d.tap" 2>&1
        bw=$(pair_bw "$d")
        ratio=-
        case $bw in
            [0-9]*)
                if [ "$q" = "${qps%%,*}" ]; then base=$bw; fi
                [ -z "$base" ] || ratio=$(awk -v a="$bw" -v b="$base" 'BEGIN { printf "%.2f", a / b }') ;;
        esac
        printf '%-18s %4s %7s %12s %7s\n' "$dev <-> $dev" "$q" "$n" "$bw" "$ratio"
        echo "  ($((SECONDS - start)) s; logs $d)" >&2
    done
done
