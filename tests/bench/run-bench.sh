#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench (a benchmark, not a test: it prints figures and ratios measured
# in one run on this machine and asserts nothing about them).
#
# In ONE TCG boot of the lane-2 guest (tests/guest), perftest runs with
# server and client in the guest on the same device:
#   bandwidth  ib_write_bw, ib_send_bw at 64 B, 4 KiB, 64 KiB, 1 MiB
#   latency    ib_send_lat, ib_write_lat at 8 B, 4 KiB (at 8 B five runs
#              per device, interleaved; the table shows their median)
#   doorbells  tests/bench/doorbell-cost.c: what one doorbell (and one
#              write to a no-op register of an e1000) costs a vCPU, with
#              the other vCPU idle, spinning, or polling a CQ
# once on the pvrdma device (vmw_pvrdma) and once on Linux Soft-RoCE
# (rdma_rxe, rxe0 bound to the guest's own vmxnet3 interface), the two
# devices interleaved case by case.  On the host, before the boot, the
# memcpy bandwidth of 1 MiB copies (tests/bench/memcpy-bw.c, compiled now).
# Prints a table with both devices, the ratios pvrdma/rxe, pvrdma's 1 MiB
# bandwidth / host memcpy, and the targets next to them.  A run that fails
# (exit status, deadline, no result, perftest's clock calibration) shows
# as such in its row; no figure is ever made up.  A run whose perftest
# clock calibration failed is repeated (up to 3 tries); after two runs of a
# program on a device hit the deadline, its other sizes there are skipped.
# Also printed: the CPU other host processes used meanwhile (on this
# 2-core machine any other load shows in the figures), and the clock check.
#
# Usage: run-bench.sh [options] [QEMU-BINARY [GUEST-DIR]]
#   (make bench calls: run-bench.sh build/qemu/qemu-system-x86_64 build/guest)
#   --deadline SEC  per perftest run, server and client together (default 60)
#   --quick         a tenth of the iterations (a smoke run of the bench)
#   --out DIR       logs and results (default build/bench)
# Environment: QEMU, GUEST_DIR as for tests/guest/run-guest.sh; CC (cc).
#
# Exit status: 0 when the guest ran and the table was printed (whatever the
# figures say), 1 when the guest or the host measurement could not run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
qemu=${QEMU:-$top/build/qemu/qemu-system-x86_64}
guest_dir=${GUEST_DIR:-$top/build/guest}
out=$top/build/bench
deadline=60
quick=0
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        --deadline) deadline=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run-bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -lt 1 ] || qemu=${positional[0]}
[ ${#positional[@]} -lt 2 ] || guest_dir=${positional[1]}
case $deadline in ''|*[!0-9]*) echo "run-bench.sh: --deadline wants seconds" >&2; exit 2 ;; esac
export QEMU=$qemu GUEST_DIR=$guest_dir
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The cases: program, message size, iterations (-n), runs per device.
# Iterations are chosen so that each rxe run moves data for roughly 0.1-2 s
# under TCG.  The 8-byte latencies are the noisiest figures (two polling
# vCPUs on 2 host cores): five runs each, the median in the table.
cases=(
    ib_write_bw:64:5000:1 ib_write_bw:4096:2000:1 ib_write_bw:65536:500:1 ib_write_bw:1048576:100:1
    ib_send_bw:64:5000:1 ib_send_bw:4096:2000:1 ib_send_bw:65536:500:1 ib_send_bw:1048576:100:1
    ib_send_lat:8:1000:5 ib_send_lat:4096:1000:1
    ib_write_lat:8:1000:5 ib_write_lat:4096:1000:1
)
if [ $quick = 1 ]; then
    for i in "${!cases[@]}"; do
        IFS=: read -r prog size n runs <<<"${cases[$i]}"
        n=$((n / 10)); [ $n -ge 10 ] || n=10
        cases[$i]=$prog:$size:$n:$runs
    done
fi

say() { printf '[bench] %s\n' "$*" >&2; }

# Host CPU used by other processes during a measurement: all busy time
# (/proc/stat) minus what this script's children used (bash's times, which
# must run in this shell, not in a subshell).  load_begin ... load_end set
# $other and $stolen (hypervisor steal) in percent of all host cores.
steal() { awk '$1 == "cpu" { print $9 + 0; exit }' /proc/stat; }
load_begin() {
    _busy0=$(busy) _steal0=$(steal) _w0=$(date +%s.%N)
    times >"$out/times.0"
}
load_end() {
    times >"$out/times.1"
    local busy1 steal1 w1 hz n
    busy1=$(busy) steal1=$(steal) w1=$(date +%s.%N) hz=$(getconf CLK_TCK) n=$(nproc)
    other=$(awk -v b="$((busy1 - _busy0))" -v c0="$(child_secs "$out/times.0")" -v c1="$(child_secs "$out/times.1")" \
        -v hz="$hz" -v w="$(awk -v a="$_w0" -v b="$w1" 'BEGIN { print b - a }')" -v n="$n" \
        'BEGIN { o = b / hz - (c1 - c0); if (o < 0) o = 0; printf "%.0f", 100 * o / (w * n) }')
    stolen=$(awk -v s="$((steal1 - _steal0))" -v hz="$hz" -v w="$(awk -v a="$_w0" -v b="$w1" 'BEGIN { print b - a }')" -v n="$n" \
        'BEGIN { printf "%.0f", 100 * s / hz / (w * n) }')
}

# --- host: memcpy bandwidth (and the TSC rate) ------------------------------
cc=${CC:-cc}
say "host memcpy: compiling tests/bench/memcpy-bw.c"
if ! "$cc" -O2 -o "$out/memcpy-bw" "$here/memcpy-bw.c" 2>"$out/memcpy-bw.cc.log"; then
    cat "$out/memcpy-bw.cc.log" >&2
    say "error: could not compile memcpy-bw.c with $cc"
    exit 1
fi
load_begin
"$out/memcpy-bw" 1048576 >"$out/memcpy.txt" || { say "error: memcpy-bw failed"; exit 1; }
load_end
memcpy_other=$other memcpy_stolen=$stolen
hot=$(awk '$1 == "memcpy_hot_mibps" { print $2 }' "$out/memcpy.txt")
cold=$(awk '$1 == "memcpy_cold_mibps" { print $2 }' "$out/memcpy.txt")
tsc=$(awk '$1 == "tsc_mhz" { print $2 }' "$out/memcpy.txt")
say "host memcpy 1 MiB: $hot MiB/s (cache-resident), $cold MiB/s (from memory); TSC $tsc MHz"

# --- the guest --------------------------------------------------------------
pvrdma=1
if [ ! -x "$qemu" ]; then
    say "error: no QEMU binary at $qemu"
    exit 1
fi
if ! "$qemu" -device help 2>/dev/null | grep -q '"pvrdma"'; then
    say "note: $qemu has no pvrdma device: rxe only"
    pvrdma=0
fi
spec=$(IFS=+; echo "${cases[*]}")
nruns=2
for c in "${cases[@]}"; do nruns=$((nruns + 2 * ${c##*:})); done
total=$(( 360 + nruns * (deadline + 10) ))
log=$out/bench.log
tests=rxe,bench
[ $pvrdma = 0 ] || tests=rxe,dbcost,bench
run_opts=(--quiet --log "$log" --timeout "$total" --test $tests
          --append "pvrdma.timeout=$deadline pvrdma.bench=$spec pvrdma.benchdevs=pvrdma,rxe0")
[ $pvrdma = 1 ] || run_opts+=(--no-pvrdma)
say "booting the guest: doorbell costs, then $((nruns - 2)) perftest runs (${#cases[@]} cases, 2 devices), deadline ${deadline} s each; console log $log"
start=$(date +%s)
load_begin
# The e1000 is the no-op device of the doorbell figures (no driver binds it).
"$here/../guest/run-guest.sh" "${run_opts[@]}" -- -device e1000 2>"$out/run-guest.err"
run_rc=$?
load_end
guest_other=$other guest_stolen=$stolen
say "guest finished after $(( $(date +%s) - start )) s (run-guest.sh status $run_rc)"
if [ ! -s "$log" ]; then
    tail -5 "$out/run-guest.err" >&2
    say "error: the guest did not run"
    exit 1
fi
clean=$out/bench.txt
tr -d '\r' <"$log" >"$clean"

section() {
    awk -v n="$1" '$0 == "GUEST-BEGIN: " n { on = 1; next }
                   $0 == "GUEST-END: " n { on = 0 } on' "$clean"
}
# last_try LABEL PROG SIZE RUN: the section name of the last try of a run
last_try() {
    grep "^GUEST-BEGIN: bench:$1:$2:$3:$4:[0-9]*\$" "$clean" | tail -1 | sed 's/^GUEST-BEGIN: //'
}

# measure LABEL PROG SIZE ITERS RUN: sets val (figure), alt (second figure:
# t_avg of latency runs), cell (what the table shows), note (why not a figure)
notes=()
retries=0
floor_bad=()
measure() {
    local label=$1 prog=$2 size=$3 n=$4 run=$5 sec s tries kind
    val= alt= note= cell=
    case $prog in *_lat) kind=lat ;; *) kind=bw ;; esac
    sec=$(last_try "$label" "$prog" "$size" "$run")
    if [ -z "$sec" ]; then
        if [ -n "$(section "bench-skip:$label:$prog:$size")" ]; then
            note="not run: $(section "bench-skip:$label:$prog:$size" | head -1)"; cell="SKIPPED"
        elif [ -n "$(section "bench-nodev:$label")" ]; then
            note="no device: $(section "bench-nodev:$label" | head -1)"; cell="NO DEVICE"
        elif [ "$label" = pvrdma ] && [ $pvrdma = 0 ]; then
            note="$qemu has no pvrdma device"; cell="NO DEVICE"
        else
            note="not run (the guest stopped before it; see $log)"; cell="NOT RUN"
        fi
        return
    fi
    tries=${sec##*:}
    [ "$tries" -le 1 ] || retries=$((retries + tries - 1))
    s=$(section "$sec")
    perftest_verdict "$s" "$size" "$n" "$kind" "$label" "$prog" " in all $tries tries"
    [ -n "$val" ] || return
    if [ $kind = lat ] && awk -v v="$val" 'BEGIN { exit !(v >= 1000) }'; then
        cell="$cell !"
        slow_lat+=("$label $prog $(human "$size")")
    fi
}
slow_lat=()

# measure_runs LABEL PROG SIZE ITERS RUNS: as measure, over RUNS runs: val
# is the median of the runs that gave a figure, cell "median [min-max]";
# runs without a figure are added to notes.
measure_runs() {
    local label=$1 prog=$2 size=$3 n=$4 runs=$5 r vals=() m
    if [ "$runs" = 1 ]; then
        measure "$label" "$prog" "$size" "$n" 1
        return
    fi
    for r in $(seq 1 "$runs"); do
        measure "$label" "$prog" "$size" "$n" "$r"
        if [ -n "$val" ]; then
            vals+=("$val")
        else
            notes+=("$label $prog $(human "$size") run $r: $note")
        fi
    done
    val= alt= note= cell=
    if [ ${#vals[@]} = 0 ]; then
        note="no run of $runs gave a figure"; cell="FAIL (0 of $runs)"
        return
    fi
    m=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{ v[NR] = $1 }
        END { printf "%s %s %s", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }')
    val=${m%% *}
    cell="$val [$(echo "${m#* }" | tr ' ' -)]"
    [ ${#vals[@]} = "$runs" ] || cell="$cell ${#vals[@]}/$runs"
    if [ $kind_lat = 1 ] && awk -v v="$val" 'BEGIN { exit !(v >= 1000) }'; then
        cell="$cell !"
        slow_lat+=("$label $prog $(human "$size")")
    fi
}

# --- the table ----------------------------------------------------------------
results=$out/results.txt
{
abi=$(cat "$guest_dir/abi" 2>/dev/null)
echo "make bench: pvrdma vs Linux Soft-RoCE in one TCG guest boot, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "host: $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; guest: Debian $abi, -accel tcg -smp 2 -m 1G"
echo "perftest $(dpkg-query -W -f='${Version}' perftest 2>/dev/null), RC, server and client in the guest on the same device, -F"
echo "pvrdma: -device pvrdma (vmw_pvrdma driver); rxe: rdma_rxe rxe0 on the guest's vmxnet3 interface"
echo "bandwidth: client's 'BW average' in MiB/s (perftest's MB = 2^20 B), higher is better;"
echo "latency: client's t_typical (median) in usec, t_avg in brackets, lower is better;"
echo "  rows with 5 runs: the median of the runs' t_typical, [lowest-highest] in brackets"
echo
printf '%-13s %-7s %6s  %-20s %-20s %-11s %s\n' test size iters pvrdma rxe pvrdma/rxe target
pv1m=()
for c in "${cases[@]}"; do
    IFS=: read -r prog size n runs <<<"$c"
    case $prog in *_lat) kind_lat=1 ;; *) kind_lat=0 ;; esac
    measure_runs pvrdma "$prog" "$size" "$n" "$runs"; pv=$val pvcell=$cell
    [ -z "$note" ] || notes+=("pvrdma $prog $(human "$size"): $note")
    measure_runs rxe0 "$prog" "$size" "$n" "$runs"; rx=$val rxcell=$cell
    [ -z "$note" ] || notes+=("rxe $prog $(human "$size"): $note")
    ratio=-
    if [ -n "$pv" ] && [ -n "$rx" ]; then
        ratio=$(awk -v a="$pv" -v b="$rx" 'BEGIN { r = a / b; printf (r >= 10 ? "%.0fx" : r >= 0.1 ? "%.2fx" : "%.3fx"), r }')
    fi
    target=
    case $prog in
    *_bw)
        if [ "$size" -ge 65536 ]; then
            target=">= 10x: "
            if [ "$ratio" = - ]; then target+="n/a"
            elif awk -v a="$pv" -v b="$rx" 'BEGIN { exit !(a >= 10 * b) }'; then target+="met"
            else target+="NOT met"; fi
        fi
        if [ "$size" = 1048576 ]; then pv1m+=("$prog=${pv:-}"); fi
        ;;
    *_lat)
        if [ "$size" = 8 ]; then
            target="<= 0.5x: "
            if [ "$ratio" = - ]; then target+="n/a"
            elif awk -v a="$pv" -v b="$rx" 'BEGIN { exit !(a <= 0.5 * b) }'; then target+="met"
            else target+="NOT met"; fi
        fi
        ;;
    esac
    [ "$runs" = 1 ] || n="${n}x$runs"
    printf '%-13s %-7s %6s  %-20s %-20s %-11s %s\n' "$prog" "$(human "$size")" "$n" "$pvcell" "$rxcell" "$ratio" "$target"
done
echo
dbc=$(section dbcost)
if echo "$dbc" | grep -q '^dbcost done'; then
    echo "what one operation costs a guest vCPU (tests/bench/doorbell-cost.c in this boot; ns per operation,"
    echo "median of 5 timed runs of 0.2 s) while the other vCPU is idle, spins on memory, or polls a CQ:"
    printf '  %-50s %7s %9s %9s %12s\n' operation idle spinning polling "poll - spin"
    for op in ram:"store to RAM (the loop's own cost)" noop:"store to an unused e1000 register (any MMIO exit)" \
              poll:"ibv_poll_cq, empty: one CQ POLL doorbell" arm:"ibv_req_notify_cq: one CQ ARM doorbell" \
              write:"8 B inline RDMA WRITE + completion (SEND db)" send:"8 B SEND + its RECV, 2 completions (2 dbs)"; do
        k=${op%%:*}
        echo "$dbc" | awk -v k="$k" -v what="${op#*:}" '$1 == "dbcost" && $2 == k { v[$3] = $4 }
            END { if (!("idle" in v)) exit
                  printf "  %-50s %7s %9s %9s %+12d\n", what, v["idle"], v["spin"], v["poll"], v["poll"] - v["spin"] }'
    done
else
    echo "doorbell costs: no figures ($(echo "$dbc" | grep -v '^dbcost' | tail -1))"
fi
echo
echo "host memcpy of 1 MiB copies (tests/bench/memcpy-bw.c, gcc -O2, one thread, median of 7 x 0.2 s):"
echo "  $hot MiB/s between the same two 1 MiB buffers (cache-resident; used for the ratio)"
echo "  $cold MiB/s cycling through 256 MiB (every copy from and to memory)"
for e in "${pv1m[@]}"; do
    prog=${e%%=*} v=${e#*=}
    if [ -n "$v" ]; then
        r=$(awk -v a="$v" -v b="$hot" 'BEGIN { printf "%.3f", a / b }')
        rc=$(awk -v a="$v" -v b="$cold" 'BEGIN { printf "%.3f", a / b }')
        m=$(awk -v r="$r" 'BEGIN { print (r >= 0.5 ? "met" : "NOT met") }')
        echo "pvrdma $prog 1 MiB / host memcpy: $r (vs the from-memory copy: $rc)   target >= 0.5: $m"
    else
        echo "pvrdma $prog 1 MiB / host memcpy: n/a (no pvrdma figure)   target >= 0.5: n/a"
    fi
done
echo
echo "contention (figures are only comparable on an idle host): other host processes used about"
echo "  ${guest_other}% of the host's $(nproc) cores while the guest ran (QEMU's own share excluded), ${memcpy_other}% during"
echo "  the memcpy measurement; the hypervisor stole ${guest_stolen}% / ${memcpy_stolen}%"
echo
if [ ${#slow_lat[@]} -gt 0 ]; then
    echo "  '!': median latency >= 1 ms: the busy-polling server and client were descheduled (host or guest CPU"
    echo "  contention: 2 polling vCPUs on $(nproc) host cores); these rows measure the scheduler, not the device: ${slow_lat[*]}"
fi
echo "clock (perftest turns cycles into time):"
gmhz=$(section bench-clock | awk '/^cpu MHz/ { print $4; exit }')
cs=$(section bench-clock | sed -n 's/^clocksource: //p')
echo "  host TSC $tsc MHz (rdtsc vs CLOCK_MONOTONIC); guest 'cpu MHz' ${gmhz:-?} (under TCG the guest's rdtsc reads the host's TSC); guest clocksource ${cs:-?}"
if [ -n "$gmhz" ] && [ -n "$tsc" ]; then
    echo "  guest/host TSC rate: $(awk -v g="$gmhz" -v h="$tsc" 'BEGIN { printf "%.4f", g / h }')"
fi
for l in pvrdma rxe0; do
    s=$(section "bench-noF:$l")
    [ -n "$s" ] || continue
    w=$(echo "$s" | grep -hE 'Conflicting CPU|Correlation coefficient|[Ww]arning' | sort -u | head -3 | tr '\n' ' ')
    echo "  without -F on $l: server exit $(echo "$s" | sed -n 's/^--- server (exit \(.*\))$/\1/p'), client exit $(echo "$s" | sed -n 's/^--- client (exit \(.*\))$/\1/p')${w:+; printed: $w}"
done
echo "  runs repeated because perftest's clock calibration failed ('Correlation coefficient r^2 < 0.9'): $retries"
report_checks "  "
echo
echo "console log: $log"
} | tee "$results"
exit 0
