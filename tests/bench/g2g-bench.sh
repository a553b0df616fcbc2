#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench, guest to guest (a benchmark, not a test: it prints figures
# and ratios measured in one run on this machine and asserts nothing about
# them).
#
# Two TCG guests, each in its own QEMU, their vmxnet3s joined by
# -netdev dgram on 127.0.0.1 (tests/guest/two-guests.sh: guest A runs the
# clients, guest B the servers, over the RoCE v2 GIDs of their IPv4
# addresses; vmxnet3 MTU 1500, so the RoCE path MTU is 1024).  One boot
# pair per device pair, each running, in this order:
#   ib_write_bw  RC, 64 KiB messages x 2000, three runs (--bw-runs), then
#                1 MiB x 200, three runs; the table shows the median of the
#                runs' BW average and their range (one run's figure moves
#                by a third from run to run on this 2-core host)
#   ib_send_lat  RC, 8 bytes x 1000, five runs (--runs); the table shows
#                the median of the runs' t_typical and their range
# once with pvrdma in both guests (-device pvrdma: the soft backend's RoCE
# v2 on the vmxnet3's netdev) and once with Linux Soft-RoCE in both
# (rdma_rxe, rxe0 on each guest's vmxnet3 interface, vmw_pvrdma unloaded).
# Then the same two with both guests' vmxnet3 at MTU 9000 (two-guests.sh
# --mtu 9000: path MTU 4096, a quarter of the frames for the same bytes),
# bandwidth only: ib_write_bw 64 KiB x 8000 and 1 MiB x 500, three runs
# each.
# Figures are the client's: "BW average" (perftest's MB = 2^20 B, so
# MiB/s of message payload), t_typical in usec.
#
# The link's ceiling: how many bytes per second -netdev dgram carries
# between two QEMU processes on this machine, for frames of the size the
# devices send (1082 bytes: a RoCE v2 RDMA WRITE middle packet, Ethernet
# 14 + IPv4 20 + UDP 8 + BTH 12 + 1024 payload + ICRC 4; the first packet
# of a message is 1098 with its RETH, ACKs are 62), and at MTU 9000 4154
# bytes (4096 payload).  Measured before the guests boot, with
# tests/bench/dgram-ceiling.c (compiled now), for each size:
#   two QEMUs  the ceiling in the table.  QEMU A and QEMU B run with no
#              guest (-M none), joined by -netdev dgram exactly as the
#              guests are; the host tool sends frames into a second dgram
#              netdev of QEMU A, which a hub forwards onto the link, and
#              QEMU B forwards what it gets from the link through a hub
#              and a third dgram netdev back to the host tool, which counts
#              them (sequence numbers, at most 64 KiB of frames in flight
#              as the device keeps, so that no socket buffer overflows,
#              lost frames counted).  Each QEMU
#              thus does one recv() and one sendto() per frame in its main
#              loop, where on the guests' link A only sends and B only
#              receives: the figure is on the low side of what the netdev
#              can carry between two QEMUs, and the host tool competes
#              for the same 2 cores.
#   no QEMU    for reference, the upper bound: one thread sendto()s
#              datagrams of the frame size over 127.0.0.1, another poll()s
#              and recv()s them one per call, the system calls -netdev
#              dgram makes per frame and nothing else.
# Both in MiB/s of whole frames; the devices' figures count payload only
# (1024 of 1082 bytes), so pvrdma / ceiling is, if anything, understated.
#
# Prints a table: per row pvrdma, rxe, pvrdma/rxe, pvrdma/ceiling (the
# bandwidth rows) and the goals next to them: bandwidth >= 10x rxe's,
# 8-byte latency <= 0.5x rxe's, and at 1 MiB >= half the link's ceiling.
# A run that failed (exit status, deadline, no result row, perftest's clock
# calibration: "Correlation coefficient r^2 < 0.9", figures 0 or inf)
# shows as such in its row with the reason below the table; no figure is
# ever made up.  Each bandwidth figure is also checked against bytes /
# client wall time (a lower bound).  Also printed: the CPU other host
# processes used meanwhile (on this 2-core machine any other load shows in
# the figures), and where the host's CPU went during the bandwidth runs:
# tests/bench/g2g-cpu.py counts the CPU time of each QEMU's main thread
# (netdev, device engine), vCPU threads (the guest: perftest polling its
# CQ, and rxe's kernel work) and other threads from each client's start to
# its end, shown per MiB moved.  Two guests of 2 vCPUs each share the 2 host cores: every
# figure here is a TCG figure, comparable within this table only.
#
# Usage: g2g-bench.sh [options] [QEMU-BINARY [GUEST-DIR]]
#   (make bench calls: g2g-bench.sh build/qemu/qemu-system-x86_64 build/guest)
#   --deadline SEC  per program run, each side (default 120)
#   --runs N        runs of the 8-byte latency per device (default 5; >= 3)
#   --bw-runs N     runs of each bandwidth case per device (default 3)
#   --quick         a tenth of the iterations, one bandwidth run and 3
#                   latency runs per case, 2 s per ceiling measurement (a
#                   smoke run of the bench)
#   --out DIR       logs and results (default build/bench)
#   --no-build      do not run tests/guest/build-guest.sh first
# Environment: QEMU, GUEST_DIR as for tests/guest/run-guest.sh; CC (cc).
#
# Output: stdout and DIR/g2g-results.txt; logs in DIR/g2g-pvrdma and
# DIR/g2g-rxe (two-guests.sh's: consoles a.log, b.log, joined-ipv4.log),
# DIR/g2g-ceiling-*.txt.
# Exit status: 0 when the table was printed (whatever the figures say),
# 1 when the host tool could not be built or no QEMU binary exists.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=lib.sh
. "$here/lib.sh"
qemu=${QEMU:-$top/build/qemu/qemu-system-x86_64}
guest_dir=${GUEST_DIR:-$top/build/guest}
out=$top/build/bench
deadline=120
runs=
bw_runs=
quick=0
build=1
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        --deadline) deadline=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --bw-runs) bw_runs=$2; shift 2 ;;
        --quick) quick=1; shift ;;
        --out) out=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        -h|--help) sed -n '/^# Usage/,/^# Environment/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "g2g-bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -lt 1 ] || qemu=${positional[0]}
[ ${#positional[@]} -lt 2 ] || guest_dir=${positional[1]}
[ -n "$runs" ] || { if [ $quick = 1 ]; then runs=3; else runs=5; fi; }
[ -n "$bw_runs" ] || { if [ $quick = 1 ]; then bw_runs=1; else bw_runs=3; fi; }
case $deadline in ''|*[!0-9]*) echo "g2g-bench.sh: --deadline wants seconds" >&2; exit 2 ;; esac
case $runs in ''|*[!0-9]*|[012]) echo "g2g-bench.sh: --runs wants a number >= 3" >&2; exit 2 ;; esac
case $bw_runs in ''|*[!0-9]*|0) echo "g2g-bench.sh: --bw-runs wants a number >= 1" >&2; exit 2 ;; esac
export QEMU=$qemu GUEST_DIR=$guest_dir
mkdir -p "$out"
out=$(cd "$out" && pwd)

say() { printf '[g2g-bench] %s\n' "$*" >&2; }

# The cases: program:size:iterations (the latency case once per run), at
# MTU 1500 (frames of 1082 bytes) and, bandwidth only, at MTU 9000 (4154).
# Each pvrdma bandwidth run moves about 1 s worth; two-guests.sh allows at
# most 39 entries.
frames=(1082 4154)
ceil_secs=5
bw_cases=(ib_write_bw:65536:2000 ib_write_bw:1048576:200)
jumbo_cases=(ib_write_bw:65536:8000 ib_write_bw:1048576:500)
lat_case=ib_send_lat:8:1000
if [ $quick = 1 ]; then
    bw_cases=(ib_write_bw:65536:200 ib_write_bw:1048576:20)
    jumbo_cases=(ib_write_bw:65536:800 ib_write_bw:1048576:50)
    lat_case=ib_send_lat:8:100
    ceil_secs=2
fi
[ $(( ${#bw_cases[@]} * bw_runs + runs )) -le 39 ] ||
    { echo "g2g-bench.sh: $((${#bw_cases[@]} * bw_runs)) bandwidth and $runs latency runs: at most 39 in all" >&2; exit 2; }
# entry_list CASE-ARRAY-NAME [LATENCY-RUNS]: two-guests.sh's --programs
entry_list() {
    local -n cases=$1
    local c entries=()
    for c in "${cases[@]}"; do
        for _ in $(seq "$bw_runs"); do entries+=("$c"); done
    done
    for _ in $(seq "${2:-0}"); do entries+=("$lat_case"); done
    (IFS=,; echo "${entries[*]}")
}

# Host CPU used by other processes during a measurement (as run-bench.sh):
# all busy time (/proc/stat) minus what this script's children used, and
# minus $excl ticks (processes of ours not waited for yet: the QEMUs of
# the ceiling measurement).
excl=0
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
load_begin() {
    _busy0=$(busy) _w0=$(date +%s.%N)
    times >"$out/g2g-times.0"
}
load_end() {
    times >"$out/g2g-times.1"
    local busy1 w1
    busy1=$(busy) w1=$(date +%s.%N)
    other=$(awk -v b="$((busy1 - _busy0))" -v c0="$(child_secs "$out/g2g-times.0")" \
        -v c1="$(child_secs "$out/g2g-times.1")" -v hz="$(getconf CLK_TCK)" \
        -v w0="$_w0" -v w1="$w1" -v n="$(nproc)" \
        -v x="$excl" 'BEGIN { o = (b - x) / hz - (c1 - c0); if (o < 0) o = 0; printf "%.0f", 100 * o / ((w1 - w0) * n) }')
    excl=0
}

[ -x "$qemu" ] || { say "error: no QEMU binary at $qemu"; exit 1; }

# --- the link's ceiling -------------------------------------------------------
cc=${CC:-cc}
say "link ceiling: compiling tests/bench/dgram-ceiling.c"
if ! "$cc" -O2 -pthread -o "$out/dgram-ceiling" "$here/dgram-ceiling.c" 2>"$out/dgram-ceiling.cc.log"; then
    cat "$out/dgram-ceiling.cc.log" >&2
    say "error: could not compile dgram-ceiling.c with $cc"
    exit 1
fi
# free_udp_ports VAR...: set each VAR to a UDP port on 127.0.0.1 that
# nothing uses, all different
free_udp_ports() {
    local p v used=" "
    for v in "$@"; do
        for _ in $(seq 100); do
            p=$((20000 + RANDOM % 40000))
            case $used in *" $p "*) continue ;; esac
            ss -Hlun "sport = :$p" 2>/dev/null | grep -q . && continue
            used+="$p "
            printf -v "$v" '%s' "$p"
            continue 2
        done
        return 1
    done
}
# key FILE KEY: a value of dgram-ceiling's output
key() { awk -v k="$2" '$1 == k { print $2; exit }' "$1" 2>/dev/null; }

# Per frame size: at most a 64 KiB window of them in flight, as the
# device keeps (64 frames of 1082 bytes, 16 of 4154).
declare -A c_ceil c_direct c_why c_chain_other c_direct_other c_direct_rc
for frame in "${frames[@]}"; do
    window=$((65536 / (frame - 58)))
    chain_other=
    say "link ceiling without QEMU: ${frame}-byte datagrams over 127.0.0.1, one per call, $ceil_secs s"
    direct=$out/g2g-ceiling-direct-$frame.txt
    load_begin
    "$out/dgram-ceiling" direct $frame $ceil_secs $window >"$direct" 2>"$direct.err"
    direct_rc=$?
    load_end
    direct_other=$other

    say "link ceiling through two QEMUs (-M none, -netdev dgram between them), $ceil_secs s"
    chain=$out/g2g-ceiling-qemu-$frame.txt
    : >"$chain"
    chain_why=
    p_src="" p_a="" p_b="" p_sink="" p_in="" p_none=""
    if free_udp_ports p_src p_a p_b p_sink p_in p_none; then
        dg() {   # dg ID LOCAL-PORT REMOTE-PORT: a -netdev dgram on 127.0.0.1
            echo "dgram,id=$1,local.type=inet,local.host=127.0.0.1,local.port=$2,remote.type=inet,remote.host=127.0.0.1,remote.port=$3"
        }
        # A: src (from the tool) -> hub -> link (to B)
        "$qemu" -M none -nodefaults -display none \
            -netdev "$(dg src "$p_src" "$p_none")" -netdev hubport,id=h0,hubid=0,netdev=src \
            -netdev "$(dg link "$p_a" "$p_b")" -netdev hubport,id=h1,hubid=0,netdev=link \
            >"$out/g2g-ceiling-qemu-$frame-a.log" 2>&1 </dev/null &
        qa=$!
        # B: link (from A) -> hub -> sink (to the tool)
        "$qemu" -M none -nodefaults -display none \
            -netdev "$(dg link "$p_b" "$p_a")" -netdev hubport,id=h0,hubid=0,netdev=link \
            -netdev "$(dg sink "$p_sink" "$p_in")" -netdev hubport,id=h1,hubid=0,netdev=sink \
            >"$out/g2g-ceiling-qemu-$frame-b.log" 2>&1 </dev/null &
        qb=$!
        for _ in $(seq 50); do
            [ "$(ss -Hlun "( sport = :$p_src or sport = :$p_b )" 2>/dev/null | wc -l)" = 2 ] && break
            { kill -0 $qa && kill -0 $qb; } 2>/dev/null || break
            sleep 0.2
        done
        if kill -0 $qa 2>/dev/null && kill -0 $qb 2>/dev/null; then
            load_begin
            q0=$(( $(ticks $qa) + $(ticks $qb) ))
            "$out/dgram-ceiling" chain $frame $ceil_secs $window "$p_src" "$p_in" >"$chain" 2>"$chain.err" ||
                chain_why="dgram-ceiling: $(tail -1 "$chain.err")"
            excl=$(( $(ticks $qa) + $(ticks $qb) - q0 ))
            load_end
            chain_other=$other
        else
            chain_why="a QEMU did not start: $(cat "$out/g2g-ceiling-qemu-$frame-a.log" "$out/g2g-ceiling-qemu-$frame-b.log" | grep -v 'hub 0 with no nics' | head -2 | tr '\n' ' ')"
        fi
        kill $qa $qb 2>/dev/null
        wait $qa $qb 2>/dev/null
    else
        chain_why="no free UDP ports on 127.0.0.1"
    fi
    ceil=$(key "$chain" mibps)
    [ -n "$ceil" ] || [ -n "$chain_why" ] || chain_why="no figure from dgram-ceiling"
    ceil_direct=$(key "$direct" mibps)
    say "link ceiling, $frame-byte frames: two QEMUs ${ceil:-FAIL ($chain_why)} MiB/s; no QEMU ${ceil_direct:-FAIL} MiB/s"
    c_ceil[$frame]=$ceil c_direct[$frame]=$ceil_direct c_why[$frame]=$chain_why
    c_chain_other[$frame]=${chain_other:-?} c_direct_other[$frame]=$direct_other c_direct_rc[$frame]=$direct_rc
done

# --- the guests -----------------------------------------------------------------
if [ $build = 1 ]; then
    say "checking the guest (tests/guest/build-guest.sh)"
    "$top/tests/guest/build-guest.sh" "$guest_dir" >"$out/g2g-build-guest.out" 2>&1 ||
        say "warning: build-guest.sh failed (see $out/g2g-build-guest.out); using the guest as it is"
fi
# A boot pair per run R: pvrdma and rxe at MTU 1500 (the bandwidth and
# latency cases), pvrdma-9000 and rxe-9000 at MTU 9000 (the jumbo cases);
# logs in $out/g2g-R.
declare -A tap_pass tap_fail dev_other dev_secs
for d in pvrdma rxe pvrdma-9000 rxe-9000; do
    dev=${d%-9000} mtu=1500
    if [ "$d" = "$dev" ]; then
        programs=$(entry_list bw_cases "$runs")
    else
        mtu=9000 programs=$(entry_list jumbo_cases)
    fi
    say "booting two guests on $dev at MTU $mtu (client A, server B): ${programs//,/ }; deadline $deadline s; logs $out/g2g-$d"
    rm -rf "$out/g2g-$d" "$out/g2g-$d.cpu"
    mkdir -p "$out/g2g-$d"
    start=$(date +%s)
    load_begin
    python3 "$here/g2g-cpu.py" "$out/g2g-$d" "$out/g2g-$d.cpu" 2>"$out/g2g-$d.cpu.err" &
    cpu_pid=$!
    "$top/tests/guest/two-guests.sh" --no-build --client-dev "$dev" --server-dev "$dev" --gids ipv4 \
        --mtu $mtu --programs "$programs" --timeout "$deadline" --log-dir "$out/g2g-$d" \
        >"$out/g2g-$d.tap" 2>"$out/g2g-$d.err"
    # it ends with guest A's QEMU; not waited for longer than that
    for _ in $(seq 50); do kill -0 $cpu_pid 2>/dev/null || break; sleep 0.1; done
    kill $cpu_pid 2>/dev/null
    wait $cpu_pid 2>/dev/null
    load_end
    dev_other[$d]=$other
    dev_secs[$d]=$(( $(date +%s) - start ))
    tap_pass[$d]=$(grep -c '^ok ' "$out/g2g-$d.tap")
    tap_fail[$d]=$(grep -c '^not ok ' "$out/g2g-$d.tap")
    say "$d: done after ${dev_secs[$d]} s: two-guests.sh $(tail -1 "$out/g2g-$d.tap")"
done

# --- results ----------------------------------------------------------------------
# pairsec DEV K: the joined section (both sides) of entry K on DEV
pairsec() {
    awk -v n="${3}@$2" '$0 == "GUEST-BEGIN: " n { on = 1; next }
                        $0 == "GUEST-END: " n { on = 0 } on' "$out/g2g-$1/joined-ipv4.log" 2>/dev/null || true
}
# measure DEV K PROG SIZE ITERS: val (figure), alt (t_avg), cell, note
notes=()
floor_bad=()
pv_caps=()
measure() {
    local d=$1 k=$2 prog=$3 size=$4 n=$5 s rs rc kind
    val='' alt='' note='' cell=''
    case $prog in *_lat) kind=lat ;; *) kind=bw ;; esac
    s=$(pairsec "$d" "$k" "$prog")
    if [ -z "$s" ]; then
        note="not run: no section $prog@$k in $out/g2g-$d/joined-ipv4.log (two-guests.sh: $(tail -1 "$out/g2g-$d.tap" 2>/dev/null) $(grep -m1 'error' "$out/g2g-$d.err" 2>/dev/null))"
        cell="NOT RUN"
        return
    fi
    rs=$(echo "$s" | sed -n 's/^--- server (exit \(.*\))$/\1/p' | head -1)
    rc=$(echo "$s" | sed -n 's/^--- client (exit \(.*\))$/\1/p' | head -1)
    case "$rs $rc" in
        *none*) note="not run: $(echo "$rs $rc" | grep -o 'guest [AB] printed no section [^)]*' | head -1)"; cell="NOT RUN"; return ;;
    esac
    perftest_verdict "$s" "$size" "$n" "$kind" "$d" "$prog"
}
# measure_runs DEV CASE FIRST-K N: the N runs of CASE (prog:size:iters),
# entries FIRST-K to FIRST-K + N - 1: val = median of the runs with a
# figure, cell "median [min-max]" (just the figure when N is 1);
# runs_seen: each run's figure, or what it was instead, in run order (a
# latency of 1 ms or more marked '!')
measure_runs() {
    local d=$1 k r vals=() m prog size n
    IFS=: read -r prog size n <<<"$2"
    runs_seen=
    for r in $(seq "$4"); do
        k=$(( $3 + r - 1 ))
        measure "$d" "$k" "$prog" "$size" "$n"
        if [ -n "$val" ]; then
            vals+=("$val")
            runs_seen+=" $val"
            case $prog in *_lat)
                if awk -v v="$val" 'BEGIN { exit !(v >= 1000) }'; then runs_seen+="!"; fi ;;
            esac
        else
            notes+=("$d $prog $(human "$size") run $r: $note")
            runs_seen+=" ${cell// /_}"
        fi
    done
    val='' note='' cell=''
    if [ ${#vals[@]} = 0 ]; then
        cell="FAIL (0 of $4)"
        return
    fi
    m=$(printf '%s\n' "${vals[@]}" | sort -g | awk '{ v[NR] = $1 }
        END { printf "%s %s %s", (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }')
    val=${m%% *}
    if [ "$4" = 1 ]; then cell=$val; else cell="$val [$(echo "${m#* }" | tr ' ' -)]"; fi
    [ ${#vals[@]} = "$4" ] || cell="$cell ${#vals[@]}/$4"
}
# cpu_row DEV CASE FIRST-K N: where the host's CPU went in those runs
# (g2g-cpu.py's lines for their sections), in CPU ms per MiB moved: A's
# main thread, A's vCPUs, B's main thread, B's vCPUs, the QEMUs' other
# threads, the rest of the host; then the wall seconds of the runs (client
# start to end).  "-" when no run was counted.
cpu_row() {
    local prog size n names=" " r
    IFS=: read -r prog size n <<<"$2"
    for r in $(seq "$4"); do names+="$prog@$(( $3 + r - 1 )).ipv4 "; done
    awk -v names="$names" -v mib="$(awk -v s="$size" -v n="$n" 'BEGIN { print s * n / 1048576 }')" '
        index(names, " " $1 " ") {
            for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2] }
            runs++
        }
        END {
            if (!runs) { print "- - - - - - -"; exit }
            q = v["a.main"] + v["a.vcpu"] + v["a.other"] + v["b.main"] + v["b.vcpu"] + v["b.other"]
            rest = v["host.busy"] - q; if (rest < 0) rest = 0
            f = 1000 / (mib * runs)
            printf "%.2f %.2f %.2f %.2f %.2f %.2f %.1f\n", v["a.main"] * f, v["a.vcpu"] * f,
                v["b.main"] * f, v["b.vcpu"] * f, (v["a.other"] + v["b.other"]) * f, rest * f, v["secs"] / runs
        }' "$out/g2g-$1.cpu" 2>/dev/null || echo "- - - - - - -"
}
ratio() {   # ratio A B: A/B as "Nx", or "-"
    if [ -n "$1" ] && [ -n "$2" ]; then
        awk -v a="$1" -v b="$2" 'BEGIN { r = a / b; printf (r >= 10 ? "%.0fx" : r >= 0.1 ? "%.2fx" : "%.3fx"), r }'
    else echo -; fi
}
goal() {   # goal MET-CONDITION(awk, a b) A B TEXT
    if [ -z "$2" ] || [ -z "$3" ]; then echo "$4: n/a"
    elif awk -v a="$2" -v b="$3" "BEGIN { exit !($1) }"; then echo "$4: met"
    else echo "$4: NOT met"; fi
}

results=$out/g2g-results.txt
# bw_rows RUN-SUFFIX FRAME CASE-ARRAY-NAME MTU: the table's rows of those
# bandwidth cases (entries 1...); appends to bw_seen and at1m
bw_rows() {
    local sfx=$1 fr=$2 mtu=$4 c prog size n pv rx pvcell rxcell g lr k=1 cl=${c_ceil[$2]:-}
    local -n cases=$3
    for c in "${cases[@]}"; do
        IFS=: read -r prog size n <<<"$c"
        measure_runs "pvrdma$sfx" "$c" $k "$bw_runs"; pv=$val pvcell=$cell
        bw_seen+=("$prog $(human "$size") at MTU $mtu, BW average of each run in run order (MiB/s): pvrdma$runs_seen;")
        measure_runs "rxe$sfx" "$c" $k "$bw_runs"; rx=$val rxcell=$cell
        bw_seen[-1]+=" rxe$runs_seen"
        k=$((k + bw_runs))
        g=$(goal 'a >= 10 * b' "$pv" "$rx" '>= 10x rxe')
        if [ "$size" = 1048576 ]; then
            at1m+=("$mtu $fr ${pv:--} ${rx:--}")
            g="$g; $(goal 'a >= 0.5 * b' "$pv" "$cl" '>= 0.5x link')"
        fi
        lr=-
        [ -z "$pv" ] || [ -z "$cl" ] || lr=$(awk -v a="$pv" -v b="$cl" 'BEGIN { printf "%.2f", a / b }')
        printf "$fmt" "$prog" "$(human "$size")" "$mtu" "$n" "$pvcell" "$rxcell" "$(ratio "$pv" "$rx")" "$lr" "$g"
    done
}
# cpu_rows RUN-SUFFIX CASE-ARRAY-NAME MTU: the CPU table's rows of those
# cases; appends to pv_caps
cpu_rows() {
    local sfx=$1 mtu=$3 c prog size n d row am bm k=1
    local -n cases=$2
    for c in "${cases[@]}"; do
        IFS=: read -r prog size n <<<"$c"
        for d in pvrdma rxe; do
            row=$(cpu_row "$d$sfx" "$c" $k "$bw_runs")
            # shellcheck disable=SC2086   # the row's seven fields
            printf "$cfmt" "$prog" "$(human "$size")" "$mtu" "$d" $row
            [ $d = pvrdma ] || continue
            read -r am _ bm _ <<<"$row"
            pv_caps+=("$(human "$size") at MTU $mtu: $(awk -v a="$am" -v b="$bm" -v n="$(nproc)" 'BEGIN {
                if (a + 0 <= 0 || b + 0 <= 0) { print "n/a"; exit }
                m = a > b ? a : b
                printf "one core for the busier main thread: %.0f MiB/s; the two main threads on %d cores: %.0f MiB/s", 1000 / m, n, n * 1000 / (a + b) }')")
        done
        k=$((k + bw_runs))
    done
}
{
abi=$(cat "$guest_dir/abi" 2>/dev/null)
echo "make bench, guest to guest: pvrdma vs Linux Soft-RoCE between two TCG guests on one -netdev dgram link, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "host: $(grep -m1 '^model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores; guests: Debian $abi, -accel tcg -smp 2 -m 1G, one QEMU each"
echo "link: vmxnet3 <-> -netdev dgram on 127.0.0.1 <-> vmxnet3, MTU 1500 (RoCE v2 path MTU 1024, frames of 1082 bytes)"
echo "  or 9000 in both guests (path MTU 4096, 4154 bytes); GIDs of the IPv4 addresses"
echo "perftest $(dpkg-query -W -f='${Version}' perftest 2>/dev/null), RC, -F; server in guest B, client in guest A, the same device in both"
echo "pvrdma: -device pvrdma in both guests; rxe: rdma_rxe rxe0 on each guest's vmxnet3 (vmw_pvrdma unloaded)"
if [ "$bw_runs" = 1 ]; then
    echo "bandwidth: client's 'BW average' in MiB/s of payload (perftest's MB = 2^20 B), one run, higher is better;"
else
    echo "bandwidth: client's 'BW average' in MiB/s of payload (perftest's MB = 2^20 B), the median of $bw_runs runs [lowest-highest], higher is better;"
fi
echo "latency: client's t_typical in usec, the median of $runs runs [lowest-highest], lower is better;"
echo "link: what -netdev dgram carries between two QEMUs, MiB/s of frames of the path MTU (below)"
echo
fmt='%-12s %-7s %5s %7s  %-27s %-27s %-10s %-11s %s\n'
printf "$fmt" test size mtu iters pvrdma rxe pvrdma/rxe pvrdma/link goal
bw_seen=() at1m=()
bw_rows "" 1082 bw_cases 1500
bw_rows -9000 4154 jumbo_cases 9000
IFS=: read -r prog size n <<<"$lat_case"
k=$(( ${#bw_cases[@]} * bw_runs + 1 ))
measure_runs pvrdma "$lat_case" $k "$runs"; pv=$val pvcell=$cell pvruns=$runs_seen
measure_runs rxe "$lat_case" $k "$runs"; rx=$val rxcell=$cell rxruns=$runs_seen
printf "$fmt" "$prog" "$(human "$size")" 1500 "${n}x$runs" "$pvcell" "$rxcell" "$(ratio "$pv" "$rx")" - \
    "$(goal 'a <= 0.5 * b' "$pv" "$rx" '<= 0.5x rxe')"
for fr in "${frames[@]}"; do
    printf "$fmt" "link" "$fr B" "$([ "$fr" = 1082 ] && echo 1500 || echo 9000)" - "${c_ceil[$fr]:-FAIL}" - - - "(two QEMUs; MiB/s of frames)"
done
echo
[ "$bw_runs" = 1 ] || printf '%s\n' "${bw_seen[@]}"
echo "$prog $(human "$size"), t_typical of each run in run order (usec): pvrdma$pvruns; rxe$rxruns"
case "$pvruns$rxruns" in *!*)
    echo "  '!': >= 1 ms: most iterations of that run took that long, the order of a scheduler time slice (4 vCPUs,"
    echo "  2 of them busy-polling, and the QEMUs' other threads on $(nproc) host cores); which thread waited is not"
    echo "  established here.  The median keeps such runs out only while they are fewer than half" ;;
esac
echo
echo "where the host's CPU went in the bandwidth runs (tests/bench/g2g-cpu.py): CPU ms per MiB moved, each client's start"
echo "to its end (start-up included), all runs of a case together:"
cfmt='  %-12s %-7s %5s %-7s %7s %8s %7s %8s %13s %13s %6s\n'
printf "$cfmt" test size mtu dev "A main" "A vCPUs" "B main" "B vCPUs" "QEMUs' other" "rest of host" "s/run"
cpu_rows "" bw_cases 1500
cpu_rows -9000 jumbo_cases 9000
echo "  main: the QEMU's main thread: -netdev dgram's system calls (a sendto() per frame sent, a poll() and a"
echo "  recv() per frame received) and, with pvrdma, the device's engine (ICRC, copies to and from guest memory);"
echo "  vCPUs: the guest: with rxe all of its RoCE work; perftest's client spins on its CQ while it waits, so"
echo "  A's vCPU time grows with any wait.  pvrdma at these rates if only its main threads' CPU limited it (an"
echo "  upper bound from the figures above):"
printf '    %s\n' "${pv_caps[@]}"
echo
echo "the link's ceiling (tests/bench/dgram-ceiling.c, at most 64 KiB of frames in flight, $ceil_secs s each):"
for fr in "${frames[@]}"; do
    chain=$out/g2g-ceiling-qemu-$fr.txt direct=$out/g2g-ceiling-direct-$fr.txt
    if [ -n "${c_ceil[$fr]}" ]; then
        echo "  $fr-byte frames, two QEMUs, -netdev dgram between them, each forwarding through a hub to/from this"
        echo "    host's tool (one recv() and one sendto() per frame in each QEMU): ${c_ceil[$fr]} MiB/s, $(key "$chain" frames_per_sec) frames/s,"
        echo "    $(key "$chain" frames_lost) lost, $(key "$chain" out_of_order) out of order; the ceiling used above"
    else
        echo "  $fr-byte frames, two QEMUs: FAIL: ${c_why[$fr]}"
    fi
    if [ -n "${c_direct[$fr]}" ]; then
        echo "  $fr-byte frames, no QEMU, two threads, one sendto() / one poll()+recv() per frame (the netdev's system"
        echo "    calls alone): ${c_direct[$fr]} MiB/s, $(key "$direct" frames_per_sec) frames/s, $(key "$direct" frames_lost) lost (an upper bound)"
    else
        echo "  $fr-byte frames, no QEMU: FAIL: $(tail -1 "$direct.err" 2>/dev/null) (exit ${c_direct_rc[$fr]})"
    fi
done
for e in "${at1m[@]}"; do
    read -r mtu fr pv rx <<<"$e"
    for l in pvrdma rxe; do
        if [ $l = pvrdma ]; then v=$pv; else v=$rx; fi
        if [ "$v" != - ]; then
            echo "  $l ib_write_bw 1 MiB at MTU $mtu: $(awk -v a="$v" -v b="${c_ceil[$fr]:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }') of the two-QEMU ceiling, $(awk -v a="$v" -v b="${c_direct[$fr]:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }') of the no-QEMU one (payload / frame bytes)"
        else
            echo "  $l ib_write_bw 1 MiB at MTU $mtu: no figure"
        fi
    done
done
echo
line="runs: two-guests.sh"
for d in pvrdma rxe pvrdma-9000 rxe-9000; do
    line+=" $d ${tap_pass[$d]} passed, ${tap_fail[$d]} failed, ${dev_secs[$d]} s;"
done
echo "${line%;} (their verdicts: $out/g2g-<run>.tap)"
echo "contention (figures are only comparable on an idle host): other host processes used about"
echo "  ${dev_other[pvrdma]}%, ${dev_other[rxe]}%, ${dev_other[pvrdma-9000]}% and ${dev_other[rxe-9000]}% of the host's $(nproc) cores in those runs,"
echo "  ${c_chain_other[1082]}% and ${c_direct_other[1082]}% (1082-byte frames), ${c_chain_other[4154]}% and ${c_direct_other[4154]}% (4154)"
echo "  during the ceiling measurements (two QEMUs, no QEMU; this script's own children excluded)"
report_checks ""
echo
echo "logs: $out/g2g-<run> (a.log, b.log: consoles; joined-ipv4.log; <run>: pvrdma, rxe, pvrdma-9000, rxe-9000), $out/g2g-ceiling-*.txt"
} | tee "$results"
exit 0
