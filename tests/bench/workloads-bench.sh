#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench, the workloads of issue 27 (a benchmark, not a test: it prints
# figures and ratios measured in one run on this machine and asserts
# nothing about them).
#
# Two TCG guests on one -netdev dgram link (tests/guest/two-guests.sh, IPv4
# GIDs), once with pvrdma in both and once with Linux rxe in both, each
# running in one boot pair:
#   nfs_rdma:SIZE   NFSv3 and NFSv4.2 over RDMA (proto=rdma, port 20049): a
#                   file of SIZE (default 16 MiB: between two rxe guests
#                   a 64 MiB write took 488 s) written with dd, then read
#                   back after a remount; MB/s = bytes / the client's
#                   seconds for each, as init prints them
#   ucp_tag_lat_rc  ucx_perftest at the UCP level over rc_verbs: the
#                   typical one-way latency of 8-byte tag messages (usec)
#   ucp_tag_bw_rc   the same, tag bandwidth (MB/s, UCX's average)
#   mpi_rc          Open MPI over UCX, two ranks per guest: mpi-check's
#                   8-byte ping-pong latency one way (usec) and its
#                   bandwidth (MB/s)
# Every program checks its data as in the workloads lane; a figure from a
# run that failed its check is shown as "failed", one that did not finish
# as "did not finish".  The table: pvrdma, rxe, and pvrdma/rxe (for
# latency, lower is better, so the ratio is rxe/pvrdma: above 1 means
# pvrdma is faster either way).
#
# Usage: workloads-bench.sh QEMU GUEST-DIR [--size BYTES] [--timeout SEC]
#   (BUILD/bench/workloads/<dev> holds the logs)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
qemu=${1:?usage: workloads-bench.sh QEMU GUEST-DIR [--size BYTES] [--timeout SEC]}
guest=${2:?usage: workloads-bench.sh QEMU GUEST-DIR [--size BYTES] [--timeout SEC]}
shift 2
size=$((16 << 20))
timeout=600
while [ $# -gt 0 ]; do
    case $1 in
        --size) size=$2; shift 2 ;;
        --timeout) timeout=$2; shift 2 ;;
        *) echo "workloads-bench: unknown option $1" >&2; exit 2 ;;
    esac
done
out=$(dirname "$guest")/bench/workloads
mkdir -p "$out"
programs=nfs_rdma:$size,ucp_tag_lat_rc,ucp_tag_bw_rc,mpi_rc

# section DIR NAME: a program's section in the pair's console logs
# (joined-ipv4.log; an entry with its own size, nfs_rdma:SIZE, has its own
# judge-ipv4@K.log)
section() {
    cat "$1"/joined-ipv4.log "$1"/judge-ipv4@*.log 2>/dev/null |
        awk -v n="$2" '$0 == "GUEST-BEGIN: " n { on = 1; next }
                       $0 == "GUEST-END: " n { on = 0 } on'
}

# figure DIR WHAT: one figure, or "failed"/"did not finish"
figure() {
    local log=$1 what=$2 s
    case $what in
        nfs-*)
            # nfs-v3-write, nfs-v4.2-read, ...
            local v=${what#nfs-} verb l
            verb=${v##*-} v=${v%-*}
            s=$(section "$log" nfs_rdma)
            if [ "$verb" = write ]; then
                l=$(echo "$s" | grep -m1 "^client: wrote nfs-v$v-")
            else
                l=$(echo "$s" | grep -m1 "^client: read back nfs-v$v-.*: identical")
            fi
            [ -n "$l" ] || { done_or_not "$s"; return; }
            echo "$l" | awk '{ for (i = 1; i < NF; i++) {
                                   if ($(i + 1) == "bytes") b = $i
                                   if ($i == "in" && $(i + 2) ~ /^s:?$/) t = $(i + 1) }
                               if (b && t > 0) printf "%.1f", b / t / 1e6; else print "?" }'
            ;;
        ucp-lat|ucp-bw)
            s=$(section "$log" "ucp_tag_${what#ucp-}_rc")
            l=$(echo "$s" | grep -m1 '^Final:')
            if [ -z "$l" ] || echo "$s" | grep -q 'UCX  ERROR'; then done_or_not "$s"; return; fi
            # Final: iters typical-lat avg-lat overall-lat avg-bw overall-bw ...
            if [ "$what" = ucp-lat ]; then echo "$l" | awk '{ print $3 }'
            else echo "$l" | awk '{ print $6 }'; fi
            ;;
        mpi-lat|mpi-bw)
            s=$(section "$log" mpi_rc)
            if [ "$what" = mpi-lat ]; then
                l=$(echo "$s" | grep -m1 '^latency: rank 0 .* 0 bad replies')
                [ -n "$l" ] || { done_or_not "$s"; return; }
                echo "$l" | sed -n 's/.*: \([0-9.]*\) usec one way.*/\1/p'
            else
                l=$(echo "$s" | grep -m1 '^bandwidth: rank 0 .* 0 bad bytes')
                [ -n "$l" ] || { done_or_not "$s"; return; }
                echo "$l" | sed -n 's/.*: \([0-9.]*\) MB\/s.*/\1/p'
            fi
            ;;
    esac
}
done_or_not() {
    if [ -z "$1" ] || echo "$1" | grep -q -- '--- deadline: '; then echo "did not finish"
    else echo failed; fi
}

for dev in pvrdma rxe; do
    echo "[workloads-bench] $dev <-> $dev: $programs (per program at most $timeout s)"
    start=$SECONDS
    QEMU=$qemu GUEST_DIR=$guest bash "$top/tests/guest/two-guests.sh" --no-build \
        --client-dev "$dev" --server-dev "$dev" --gids ipv4 --timeout "$timeout" \
        --log-dir "$out/$dev" --programs "$programs" >"$out/$dev.tap" 2>&1
    grep -E '^(not )?ok' "$out/$dev.tap" | sed 's/^/  /'
    echo "[workloads-bench] $dev: $((SECONDS - start)) s"
done

rows=(nfs-3-write nfs-3-read nfs-4.2-write nfs-4.2-read ucp-lat ucp-bw mpi-lat mpi-bw)
echo
printf '%-34s %14s %14s %10s\n' "between two guests, $(( size >> 20 )) MiB NFS files" pvrdma rxe ratio
for r in "${rows[@]}"; do
    case $r in
        nfs-*) w=${r#nfs-}; what="nfs-${w}"; label="NFSv${w%-*} over RDMA, ${w##*-} (MB/s)" ;;
        ucp-lat) what=$r; label="UCP tag latency, 8 B (usec)" ;;
        ucp-bw) what=$r; label="UCP tag bandwidth (MB/s)" ;;
        mpi-lat) what=$r; label="MPI ping-pong, 8 B one way (usec)" ;;
        mpi-bw) what=$r; label="MPI bandwidth, 256 KiB (MB/s)" ;;
    esac
    p=$(figure "$out/pvrdma" "$what")
    x=$(figure "$out/rxe" "$what")
    ratio=-
    if [[ $p =~ ^[0-9.]+$ && $x =~ ^[0-9.]+$ ]]; then
        case $r in
            *-lat) ratio=$(awk -v a="$p" -v b="$x" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }') ;;
            *) ratio=$(awk -v a="$p" -v b="$x" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }') ;;
        esac
    fi
    printf '%-34s %14s %14s %10s\n' "$label" "${p:-?}" "${x:-?}" "$ratio"
done
echo "(ratio: pvrdma/rxe for MB/s, rxe/pvrdma for latency; above 1: pvrdma is faster)"
