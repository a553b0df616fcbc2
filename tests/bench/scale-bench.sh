#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench, issue 24's scale figures (a benchmark, not a test: it prints
# figures measured in one run on this machine and asserts nothing about
# them).
#
# Two TCG guests on one -netdev dgram link (tests/guest/two-guests.sh, IPv4
# GIDs), once with pvrdma in both and once with Linux rxe in both, each
# running in one boot pair:
#   ib_write_bw:65536:ITERS   one connection's RDMA WRITE bandwidth, 64 KiB
#   cm_scale:N:ITERS          N RDMA-CM connections (tests/guest/cm-scale.c,
#                             16 connecting at a time, each with a checked
#                             64-byte message and answer), all held open
#                             while the same ib_write_bw runs alongside,
#                             then disconnected
# and prints per device: the connection rate (connections / seconds from
# the first rdma_resolve_addr to the last ESTABLISHED), the disconnect
# rate, how many connected when not all did (and the client's first error,
# which says where the device stopped), the bandwidth alone and with all
# connections open, and QEMU's resident memory per connection, its own and
# the guest RAM the guest touched, in each guest (qemu-rss.py; an rxe guest's
# QEMU has the pvrdma device unused, so its own memory is the baseline of
# a guest kernel doing RDMA-CM in software).
#
# pvrdma needs dev-caps-max-qp above N (each guest also has RDMA-CM's GSI
# QP and ib_write_bw's): the pvrdma guests get dev-caps-max-qp=N+256
# rounded up to 1024, and --mem (default 1G, the harness's).
#
# Usage: scale-bench.sh QEMU GUEST-DIR [--conns N] [--iters N] [--timeout SEC]
#                       [--mem SIZE] [--devs "pvrdma rxe"]
#   (BUILD/bench/scale/<dev> holds the logs)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
usage="usage: scale-bench.sh QEMU GUEST-DIR [--conns N] [--iters N] [--timeout SEC] [--mem SIZE] [--devs LIST]"
qemu=${1:?$usage}
guest=${2:?$usage}
shift 2
conns=10000
iters=2000
timeout=1200
mem=
devs="pvrdma rxe"
while [ $# -gt 0 ]; do
    case $1 in
        --conns) conns=$2; shift 2 ;;
        --iters) iters=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        --mem) mem=$2; shift 2 ;;
        --devs) devs=$2; shift 2 ;;
        *) echo "scale-bench: unknown option $1 ($usage)" >&2; exit 2 ;;
    esac
done
for v in "$conns" "$iters" "$timeout"; do
    case $v in ''|*[!0-9]*) echo "scale-bench: --conns, --iters, --timeout want numbers" >&2; exit 2 ;; esac
done
out=$(dirname "$guest")/bench/scale
mkdir -p "$out"
maxqp=$(( (conns + 256 + 1023) / 1024 * 1024 ))
programs=ib_write_bw:65536:$iters,cm_scale:$conns:$iters

# section DIR NAME: a program's section (judge-ipv4@K.log: K its place)
section() {
    cat "$1"/judge-ipv4@*.log 2>/dev/null |
        awk -v n="$2" '$0 == "GUEST-BEGIN: " n { on = 1; next }
                       $0 == "GUEST-END: " n { on = 0 } on'
}
# client_side TEXT: the client's output in a section
client_side() { echo "$1" | awk '/^--- client \(exit / { on = 1; next } /^--- / { on = 0 } on'; }
# bw_avg TEXT: perftest's BW average (MB/s) of the 64 KiB row
bw_avg() { awk '$1 == 65536 && NF >= 5 { print $4; exit }'; }

report() {
    local dev=$1 d=$out/$1 s cli l
    s=$(section "$d" cm_scale)
    cli=$(client_side "$s")
    echo "$dev <-> $dev, $conns connections:"
    l=$(echo "$cli" | grep -m1 -E '^connected [0-9]+ in ')
    if [ -n "$l" ]; then
        echo "  $l"
    else
        l=$(echo "$cli" | grep -m1 '^client: connected ')
        echo "  ${l:-no figure: the client printed neither (see $d)}"
        echo "$cli" | grep -m3 ': error: ' | sed 's/^/  first errors: /'
        echo "$s" | grep -m1 '^--- deadline: ' | sed 's/^/  /'
    fi
    l=$(echo "$cli" | grep -m1 -E '^disconnected [0-9]+ in ')
    [ -z "$l" ] || echo "  $l"
    echo "$cli" | grep -m1 -E '^client: [0-9]+ echoes' | sed 's/^/  /'
    echo "  ib_write_bw 64 KiB x $iters alone: $(client_side "$(section "$d" ib_write_bw)" | bw_avg) MB/s;" \
         "with the connections open: $(echo "$cli" | sed -n 's/^bw| //p' | bw_avg) MB/s"
    grep -E '^# (cm_scale|peak own)' "$out/$dev.tap" | sed 's/^# /  /'
    grep -E '^(not )?ok' "$out/$dev.tap" | sed 's/^/  /'
}

for dev in $devs; do
    echo "[scale-bench] $dev <-> $dev: $programs (dev-caps-max-qp=$maxqp; at most $timeout s per program)"
    start=$SECONDS
    QEMU=$qemu GUEST_DIR=$guest bash "$top/tests/guest/two-guests.sh" --no-build \
        --client-dev "$dev" --server-dev "$dev" --gids ipv4 --timeout "$timeout" \
        --device-opts "dev-caps-max-qp=$maxqp" ${mem:+--mem "$mem"} \
        --log-dir "$out/$dev" --programs "$programs" >"$out/$dev.tap" 2>&1
    echo "[scale-bench] $dev: $((SECONDS - start)) s"
done
echo
for dev in $devs; do
    report "$dev"
done
