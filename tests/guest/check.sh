#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lane 2 test driver (make check): boot the Debian guest with the unmodified
# vmw_pvrdma driver on our pvrdma device and assert on the guest's real
# output (console log sections written by tests/guest/init).
#
# Usage: check.sh [--no-pvrdma] [--datapath] [--rxe] [--log FILE] [--timeout SEC]
#        check.sh --console LOG --tests LIST [--ip ADDR]
#   --no-pvrdma   vmxnet3-only boot (for a QEMU without the device): checks
#                 that the guest, its modules and its tools work
#   --datapath    also run the data-path tests in the same boot: real RDMA
#                 programs, server and client in the guest on the device
#                 (rc-pingpong ... rping, nvmeof-rdma), after the other tests
#   --rxe         the data-path tests on Linux Soft-RoCE (rxe0 on the
#                 vmxnet3 interface) in a vmxnet3-only boot: checks the
#                 harness itself (implies --datapath and --no-pvrdma)
#   --console LOG do not boot: assert on LOG, the console log of a guest
#                 that another script booted (QEMU's exit status in LOG.rc)
#   --tests LIST  the tests to assert on, comma-separated (with --console;
#                 e.g. boot,probe,rping; also peer-rc-pingpong, whose
#                 section the other script completes with the peer's side)
#   --ip ADDR     the guest's vmxnet3 address (pvrdma.ip; 10.0.2.15)
#   GUEST_PVRDMA=0 in the environment is the same as --no-pvrdma,
#   GUEST_DATAPATH=1 the same as --datapath, GUEST_DATAPATH_RXE=1 as --rxe.
#   GUEST_DATAPATH_TIMEOUT: deadline in seconds for each data-path program
#   pair, server and client together (default 30); GUEST_DATAPATH_ITERS:
#   their iteration count (default 100).
#
# Prints one line per test, "PASS: name" or "FAIL: name" (reasons follow on
# lines starting with "#"), and at the end "guest: N passed, N failed".
# Exits non-zero if any test failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
guest_dir=${GUEST_DIR:-$top/build/guest}

pvrdma=${GUEST_PVRDMA:-1}
datapath=${GUEST_DATAPATH:-0}
rxe=${GUEST_DATAPATH_RXE:-0}
dp_timeout=${GUEST_DATAPATH_TIMEOUT:-30}
dp_iters=${GUEST_DATAPATH_ITERS:-100}
log=$guest_dir/logs/check.log
timeout_s=${GUEST_TIMEOUT:-}
console=
only_tests=
ip4=10.0.2.15
while [ $# -gt 0 ]; do
    case $1 in
        --no-pvrdma) pvrdma=0; shift ;;
        --datapath) datapath=1; shift ;;
        --rxe) rxe=1; shift ;;
        --log) log=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --console) console=$2; shift 2 ;;
        --tests) only_tests=$2; shift 2 ;;
        --ip) ip4=$2; shift 2 ;;
        -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "check.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

# the RoCE v2 GID of ip4 in sysfs form (::ffff:10.0.2.15: ...:ffff:0a00:020f)
gid4=$(echo "$ip4" | awk -F. '{ printf "0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x", $1, $2, $3, $4 }')

# pass, fail (tests/guest/lib.sh)
# shellcheck source=lib.sh
. "$here/lib.sh"
finish() { verdict_summary guest; }

# The data-path tests, named after their programs, and the guest's
# scenario (= console section) behind each.
dp_tests=(rc-pingpong rc-pingpong-4m ud-pingpong srq-pingpong ib-send-bw ib-send-bw-ud
          ib-write-bw ib-read-bw ib-atomic-bw ib-send-lat ib-send-lat-ud
          ib-write-lat ib-read-lat rping nvmeof-rdma)
[ "$rxe" = 1 ] && { datapath=1; pvrdma=0; }
if [ "$rxe" = 1 ]; then
    tests=(boot modules net rxe kernel-clean shutdown "${dp_tests[@]}")
    scenarios=rxe,datapath
    run_opts=(--no-pvrdma --append pvrdma.ibdev=rxe0)
elif [ "$pvrdma" = 1 ]; then
    tests=(boot modules net probe devinfo gid-roce-v2 reload device-errors kernel-clean shutdown)
    scenarios=probe,devinfo,gids,reload
    run_opts=()
else
    tests=(boot modules net smoke kernel-clean shutdown)
    scenarios=smoke
    run_opts=(--no-pvrdma)
fi
if [ "$datapath" = 1 ] && [ "$rxe" = 0 ]; then
    if [ "$pvrdma" = 1 ]; then
        tests+=("${dp_tests[@]}")
        scenarios=$scenarios,datapath
    else
        echo "# --datapath needs the pvrdma device (or --rxe); ignored with --no-pvrdma" >&2
        datapath=0
    fi
fi
if [ "$datapath" = 1 ]; then
    run_opts+=(--append "pvrdma.timeout=$dp_timeout pvrdma.iters=$dp_iters")
    # every pair may run into its deadline (plus the kill and report time)
    [ -n "$timeout_s" ] || timeout_s=$((300 + ${#dp_tests[@]} * (dp_timeout + 10)))
fi
[ -n "$timeout_s" ] || timeout_s=300
if [ -n "$console" ]; then
    [ -n "$only_tests" ] || { echo "check.sh: --console wants --tests" >&2; exit 2; }
    IFS=, read -r -a tests <<<"$only_tests"
    log=$console
    runerr=/dev/null
    run_rc=$(cat "$log.rc" 2>/dev/null || echo '?')
fi

# --- boot the guest ---------------------------------------------------------
if [ -n "$console" ]; then
    [ -s "$log" ] || { for t in "${tests[@]}"; do fail "$t" "no console log $log"; done; finish; }
else
mkdir -p "$(dirname "$log")"
rm -f "$log" "$log.rc"
runerr=$guest_dir/logs/check.run-guest.err
echo "# booting the guest (scenarios $scenarios); console log $log" >&2
"$here/run-guest.sh" --quiet --log "$log" --timeout "$timeout_s" \
    --test "$scenarios" "${run_opts[@]}" 2>"$runerr"
run_rc=$?
if [ ! -s "$log" ]; then
    # QEMU never ran: every test fails for the same reason.
    reason=$(grep -E 'error' "$runerr" | tail -3)
    [ -n "$reason" ] || reason=$(tail -3 "$runerr")
    for t in "${tests[@]}"; do fail "$t" "guest not booted: $reason"; done
    finish
fi
fi
clean=$log.txt
tr -d '\r' <"$log" >"$clean"
qemu_rc=$(cat "$log.rc" 2>/dev/null || echo '?')

# section NAME: the raw output between GUEST-BEGIN: NAME and GUEST-END: NAME
# (always status 0: under pipefail, "section X | grep -q" would otherwise
# fail whenever grep stops reading early and awk dies of SIGPIPE)
section() {
    awk -v n="$1" '$0 == "GUEST-BEGIN: " n { on = 1; next }
                   $0 == "GUEST-END: " n { on = 0 } on' "$clean" || true
}
# guest_result NAME: the guest's own GUEST-RESULT line for NAME
guest_result() { grep -m1 "^GUEST-RESULT: $1 " "$clean" || echo "(no GUEST-RESULT for $1)"; }
klog() { section kernel-log; }

# --- assertions -------------------------------------------------------------
t_boot() {
    local l
    l=$(grep -m1 'GUEST-BOOT:' "$clean")
    if [ -n "$l" ]; then pass boot; else
        fail boot "the guest's init never started" "$(grep -m3 -E 'Kernel panic|not syncing|Unable|error' "$clean")"
    fi
}

t_modules() {
    local s missing=() m want
    s=$(section modules)
    want="ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm configfs vmxnet3 vmw_pvrdma"
    for m in $want; do
        grep -q "^$m " <<<"$s" || missing+=("$m")
    done
    if [ ${#missing[@]} = 0 ]; then pass modules; else
        fail modules "lsmod in the guest lacks: ${missing[*]}" "$(guest_result modules)"
    fi
}

t_net() {
    local s
    s=$(section net)
    if grep -q '^netif [^ ]* driver=vmxnet3 operstate=up$' <<<"$s" &&
       grep -q "inet $ip4/" <<<"$s"; then pass net; else
        fail net "vmxnet3 interface not UP with $ip4" "$(guest_result net)"
    fi
}

# The IB device bound to vmw_pvrdma at 00:10.1, from the probe section.
dev=
t_probe() {
    local s failed
    s=$(section probe)
    dev=$(echo "$s" | sed -n 's/^infiniband: *//p' | awk '{print $1}')
    # The driver core's verdict; a probe that completes ends with the
    # driver's "attached to device" (pvrdma_pci_probe).
    failed=$(klog | grep -E 'probe of 0000:00:10\.1 failed')
    if ! grep -q '^pci 0000:00:10\.1 0x15ad:0x0820 driver=vmw_pvrdma$' <<<"$s"; then
        fail probe "00:10.1 (15ad:0820) is not bound to vmw_pvrdma:" \
            "$(echo "$s" | grep '^pci ')" "$failed"
    elif [ -z "$dev" ]; then
        fail probe "no device in /sys/class/infiniband" "$failed"
    elif [ -n "$failed" ]; then
        fail probe "the probe reported failures:" "$failed"
    elif ! klog | grep -q 'vmw_pvrdma 0000:00:10\.1: attached to device$'; then
        fail probe "no 'attached to device' from vmw_pvrdma (probe did not complete)"
    else
        pass probe
    fi
}

# Errors the driver or ib_core logged about the device during the whole run
# (command failures, QP1 setup, teardown); the probe itself may still pass.
t_device_errors() {
    local errs
    errs=$(klog | grep -iE 'vmw_pvrdma|pvrdma|0000:00:10\.1' | grep -v 'ommand line: ' |
           grep -iE "fail|error|unable|timed? ?out|cannot|could ?n.?t|invalid" |
           grep -v 'module verification failed')
    if [ -z "$errs" ]; then pass device-errors; else
        fail device-errors "the kernel log holds $(echo "$errs" | wc -l) error lines about the device, first ones:" \
            "$(echo "$errs" | head -8)"
    fi
}

# devinfo_active TEXT: ibv_devinfo output names $dev with port 1 PORT_ACTIVE
devinfo_active() {
    echo "$1" | awk -v d="$dev" '
        $1 == "hca_id:" { cur = $2 }
        cur == d && $1 == "port:" { port = $2 }
        cur == d && port == 1 && $1 == "state:" && $2 == "PORT_ACTIVE" { ok = 1 }
        END { exit !ok }'
}

t_devinfo() {
    local s
    s=$(section devinfo)
    if [ -z "$dev" ]; then
        fail devinfo "no pvrdma IB device (see probe)"
    elif devinfo_active "$s"; then
        pass devinfo
    else
        fail devinfo "ibv_devinfo -v does not show $dev port 1 PORT_ACTIVE:" \
            "$(echo "$s" | grep -E 'hca_id|state:|No IB|Failed|exit status' | head -6)"
    fi
}

# gid_line TEXT: a "gid DEV/1/N <gid4> type=RoCE v2 ndev=..." line
gid_line() { echo "$1" | grep -m1 -E "^gid $dev/1/[0-9]+ $gid4 type=RoCE v2 ndev="; }

t_gid_roce_v2() {
    local s l
    s=$(section gids)
    l=$(gid_line "$s")
    if [ -z "$dev" ]; then
        fail gid-roce-v2 "no pvrdma IB device (see probe)"
    elif [ -n "$l" ]; then
        pass gid-roce-v2
    else
        fail gid-roce-v2 "no RoCE v2 GID ::ffff:$ip4 ($gid4) on $dev port 1; GID table:" \
            "$(echo "$s" | grep '^gid ' | head -8)"
    fi
}

t_reload() {
    local s
    s=$(section reload)
    if [ -z "$dev" ]; then
        fail reload "no pvrdma IB device (see probe)"
    elif ! grep -q '^rmmod exit status 0;' <<<"$s"; then
        fail reload "rmmod vmw_pvrdma failed:" "$(echo "$s" | grep '^rmmod')"
    elif echo "$s" | grep '^rmmod exit status' | grep -qw "$dev"; then
        fail reload "$dev still registered after rmmod:" "$(echo "$s" | grep '^rmmod')"
    elif ! grep -q '^modprobe exit status 0;' <<<"$s"; then
        fail reload "modprobe vmw_pvrdma failed:" "$(echo "$s" | grep '^modprobe')"
    elif ! echo "$s" | grep '^modprobe exit status' | grep -qw "$dev"; then
        fail reload "$dev did not come back:" "$(echo "$s" | grep '^modprobe')"
    elif ! klog | awk '/vmw_pvrdma 0000:00:10\.1: detaching from device/ { d = 1 }
                        d && /vmw_pvrdma 0000:00:10\.1: attached to device/ { ok = 1 }
                        END { exit !ok }'; then
        fail reload "no 'detaching from device' followed by 'attached to device' in the kernel log"
    elif ! devinfo_active "$s"; then
        fail reload "$dev port 1 not PORT_ACTIVE after reload:" \
            "$(echo "$s" | grep -E 'hca_id|state:' | head -4)"
    elif [ -z "$(gid_line "$s")" ]; then
        fail reload "$dev has no RoCE v2 GID ::ffff:$ip4 after reload:" \
            "$(echo "$s" | grep '^gid ' | head -8)"
    else
        pass reload
    fi
}

t_smoke() {
    local s
    s=$(section smoke)
    if ! section modules | grep -q '^vmw_pvrdma '; then
        fail smoke "vmw_pvrdma.ko did not load"
    elif ! grep -q 'No IB devices found' <<<"$s"; then
        fail smoke "ibv_devinfo did not run cleanly:" "$(echo "$s" | head -3)"
    elif grep -q 'error while loading shared libraries' <<<"$s"; then
        fail smoke "a tool misses libraries:" "$(echo "$s" | grep 'error while loading' | head -3)"
    elif ! grep -q '^pci 0000:00:10\.0 0x15ad:0x07b0 driver=vmxnet3$' <<<"$s"; then
        fail smoke "vmxnet3 at 00:10.0 not bound:" "$(echo "$s" | grep '^pci ')"
    else
        pass smoke
    fi
}

t_kernel_clean() {
    local bad
    bad=$(grep -nE 'BUG:|Oops|WARNING: CPU|Call Trace|general protection|Kernel panic|RIP: |soft lockup|hung_task|blocked for more than' "$clean" | head -5)
    if [ -z "$bad" ]; then pass kernel-clean; else
        fail kernel-clean "kernel problems in the guest log:" "$bad"
    fi
}

t_shutdown() {
    if [ "$qemu_rc" != 0 ]; then
        fail shutdown "QEMU exit status $qemu_rc (run-guest.sh $run_rc)" "$(tail -3 "$runerr")"
    elif ! grep -q '^GUEST-DONE:' "$clean"; then
        fail shutdown "the guest never finished its scenarios (no GUEST-DONE)"
    elif ! grep -q 'reboot: Power down' "$clean"; then
        fail shutdown "no 'reboot: Power down' from the guest kernel (rebooted or panicked?)"
    else
        pass shutdown
    fi
}

t_rxe() {
    if section rxe | grep -q '^rdma link add exit status 0$' &&
       guest_result rxe | grep -q '^GUEST-RESULT: rxe PASS'; then pass rxe; else
        fail rxe "Soft-RoCE rxe0 did not come up:" "$(section rxe | head -5)" "$(guest_result rxe)"
    fi
}

# --- data path --------------------------------------------------------------
# The section of each pair (init's pair()) holds the commands, each side's
# exit status and output, and a deadline note.  A test passes only if both
# sides exited 0 and both printed their own success output.

# dp_side TEXT server|client: that side's output
dp_side() {
    echo "$1" | awk -v w="$2" '/^--- server \(exit / { on = (w == "server"); next }
                               /^--- client \(exit / { on = (w == "client"); next }
                               /^--- / { on = 0 } on'
}
dp_rc() { echo "$1" | sed -n "s/^--- $2 (exit \(.*\))\$/\1/p" | head -1; }
# dp_opt TEXT OPT DEFAULT: the value of OPT in the client's command line
dp_opt() {
    local v
    v=$(echo "$1" | sed -n 's/^client: //p' | head -1 |
        awk -v o="$2" '{ for (i = 1; i < NF; i++) if ($i == o) { print $(i + 1); exit } }')
    echo "${v:-$3}"
}

# Output checks: each prints what is missing (nothing if all is there).
# ibv_*_pingpong: both sides print "<bytes> bytes in <t> seconds = <r>
# Mbit/sec" and "<n> iters in <t> seconds = <r> usec/iter"; with -c a bad
# buffer prints "invalid data in page <p>" (the exit status stays 0).
chk_pingpong() {   # TEXT
    local s=$1 n side out
    n=$(dp_opt "$s" -n 1000)
    for side in server client; do
        out=$(dp_side "$s" $side)
        grep -q '^  remote address: ' <<<"$out" || echo "$side: no 'remote address' (no out-of-band exchange)"
        grep -qE '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Mbit/sec$' <<<"$out" ||
            echo "$side: no '<bytes> bytes in <t> seconds = <r> Mbit/sec'"
        grep -qE "^$n iters in [0-9.]+ seconds = [0-9.]+ usec/iter\$" <<<"$out" ||
            echo "$side: no '$n iters in <t> seconds = <r> usec/iter'"
        grep -q 'invalid data' <<<"$out" &&
            echo "$side: content check failed: $(echo "$out" | grep -m2 'invalid data' | tr '\n' ' ')"
    done
}
# perftest: the result row "<size> <iterations> <numbers...>" under the
# "#bytes" header; bw tests need 3 numbers, lat tests 7.  WHO: both or
# client (the server of some tests prints no result).  A figure may be 0,
# inf or nan: perftest's clock calibration fails now and then under TCG
# ("Correlation coefficient r^2 ... < 0.9"), and tests do not judge timings.
chk_perf() {   # TEXT bw|lat DEFAULT-SIZE WHO
    local s=$1 kind=$2 size n nums side out
    size=$(dp_opt "$s" -s "$3")
    n=$(dp_opt "$s" -n 1000)
    # a bandwidth test on -q QPs reports -n iterations of each
    [ "$kind" = lat ] || n=$((n * $(dp_opt "$s" -q 1)))
    [ "$kind" = bw ] && nums=3 || nums=7
    for side in server client; do
        out=$(dp_side "$s" $side)
        grep -q '^ remote address: ' <<<"$out" || echo "$side: no 'remote address' (no out-of-band exchange)"
        [ "$side" = server ] && [ "$4" = client ] && continue
        echo "$out" | awk -v sz="$size" -v n="$n" -v k="$nums" '
            $1 == "#bytes" { hdr = 1; next }
            hdr && $1 == sz && $2 == n && NF >= 2 + k {
                for (i = 3; i <= 2 + k; i++) if ($i !~ /^-?([0-9]+(\.[0-9]+)?|inf|nan)$/) next
                ok = 1 }
            END { exit !ok }' ||
            echo "$side: no result row '$size $n <$nums numbers>' under '#bytes'"
    done
}
# rping -v -V: the client prints "ping data: rdma-ping-<i>: ..." for each
# of the -C pings (with -V it stops at the first mismatch), the server
# "server ping data: ..." and, once the client disconnected, "server
# DISCONNECT EVENT..." (the client's own DISCONNECT line races with its
# exit, so it is not required).
chk_rping() {   # TEXT
    local s=$1 c srv cli i
    c=$(dp_opt "$s" -C 0)
    srv=$(dp_side "$s" server)
    cli=$(dp_side "$s" client)
    i=$(echo "$cli" | grep -c '^ping data: rdma-ping-[0-9]*: ')
    [ "$i" = "$c" ] || echo "client: $i of $c 'ping data: rdma-ping-N' lines"
    i=$(echo "$srv" | grep -c '^server ping data: rdma-ping-[0-9]*: ')
    [ "$i" = "$c" ] || echo "server: $i of $c 'server ping data: rdma-ping-N' lines"
    grep -q '^server DISCONNECT EVENT' <<<"$srv" || echo "server: no 'server DISCONNECT EVENT'"
    echo "$srv$cli" | grep -qiE 'mismatch|error' &&
        echo "errors: $(echo "$srv$cli" | grep -iE -m2 'mismatch|error' | tr '\n' ' ')"
}

# rping (rdma-core 44, Debian 12's) never joins its event thread: when the
# main thread has destroyed the event channel after the last event but
# before that thread called rdma_get_cm_event() again, the call fails
# with EBADF and rping exits 255 after a run that succeeded (rdma-core
# fixed it later: pull request 1622, "rping: Fix spurious failure return
# codes", which names the same race).  Excused only with exactly that
# ending, the side's own DISCONNECT EVENT line then perror()'s line, as
# the last lines once the pings (stdout, another buffer) are left out;
# chk_rping still wants every ping of both sides and the server's
# DISCONNECT EVENT.
rping_teardown_race() {   # SECTION SIDE STATUS
    local end
    [ "$3" = 255 ] || return 1
    end=$(dp_side "$1" "$2" | grep -v -e 'ping data: ' -e '^[[:space:]]*$' | tail -n 2)
    [ "$end" = "$2 DISCONNECT EVENT...
rdma_get_cm_event: Bad file descriptor" ] || return 1
    echo "rping's event thread read its destroyed channel after the $2's DISCONNECT EVENT (rdma-core 44's teardown race)"
}

# ucx_perftest: the client's "Final:" row carries the -n iterations; UCX
# says "UCX  ERROR" for every failure (a completion with an error too).
chk_ucx() {   # TEXT
    local s=$1 n
    n=$(dp_opt "$s" -n 1000000)
    dp_side "$s" client |
        awk -v n="$n" '$1 == "Final:" && $2 == n { ok = 1 } END { exit !ok }' ||
        echo "client: no 'Final: $n ...' row"
    grep -q 'UCX  ERROR' <<<"$s" &&
        echo "errors: $(grep -m2 'UCX  ERROR' <<<"$s" | sed 's/.*UCX  ERROR //' | tr '\n' ' ')"
}

# ucp-pattern (tests/guest/ucp-pattern.c): each side's own data checks
# and PASS line, the server's word on the bytes it checked (the client
# says so), and in the client's ucp_ep_print_info the transport TL
# carrying UCP's lanes (rc_verbs: RC, wired up over UD; ud_verbs: UD).
chk_ucp_pattern() {   # TEXT TL
    local s=$1 tl=$2 srv cli
    srv=$(dp_side "$s" server)
    cli=$(dp_side "$s" client)
    grep -qE '^server: tag: [0-9]+ messages of [0-9]+ bytes received, every byte as sent, echoed$' <<<"$srv" ||
        echo "server: no 'tag: N messages ... every byte as sent'"
    grep -qE '^server: put: [0-9]+ bytes in its buffer, every byte as the client put them$' <<<"$srv" ||
        echo "server: no 'put: N bytes ... every byte as the client put them'"
    grep -qE '^client: tag: [0-9]+ messages of [0-9]+ bytes sent, [0-9]+ echoes received, every byte as expected$' <<<"$cli" ||
        echo "client: no 'tag: ... echoes received, every byte as expected'"
    grep -qE '^client: get: [0-9]+ bytes from the server.s buffer, every byte as the server wrote them$' <<<"$cli" ||
        echo "client: no 'get: N bytes ... every byte as the server wrote them'"
    grep -q '^client: the server found every byte it checked as expected$' <<<"$cli" ||
        echo "client: no word from the server that its bytes matched"
    grep -q '^server: PASS: every byte checked matched$' <<<"$srv" || echo "server: no 'PASS'"
    grep -q '^client: PASS: every byte checked matched$' <<<"$cli" || echo "client: no 'PASS'"
    grep -qE "^# +lane\[[0-9]+\]: +[0-9]+:$tl/" <<<"$cli" ||
        echo "client: no UCP lane on $tl (ucp_ep_print_info)"
    echo "$srv$cli" | grep -m3 'FAILED' | sed 's/^/failed step: /'
    grep -q 'UCX  ERROR' <<<"$s" &&
        echo "errors: $(grep -m2 'UCX  ERROR' <<<"$s" | sed 's/.*UCX  ERROR //' | tr '\n' ' ')"
}

# cm-scale (init's t_cm_scale, tests/guest/cm-scale.c): the client
# connected, checked the answers of and disconnected all N connections
# (N: the 4th argument of its script), the server checked N messages and
# saw N disconnects, each said PASS; the ib_write_bw that ran alongside
# printed its result row (64 KiB, -n iterations) and exited 0 on both
# sides.  The rate and the bandwidth are figures, not judged.
chk_cm_scale() {   # TEXT
    local s=$1 n it srv cli
    n=$(echo "$s" | sed -n 's/^client: //p' | head -1 | awk '{ print $6 }')
    it=$(dp_opt "$s" -n 1000)
    srv=$(dp_side "$s" server)
    cli=$(dp_side "$s" client)
    grep -qE "^connected $n in [0-9.]+ s \([0-9.]+ conn/s\)\$" <<<"$cli" ||
        echo "client: no 'connected $n in S s (R conn/s)'"
    grep -qE "^client: $n echoes of [0-9]+ bytes checked, every byte matched\$" <<<"$cli" ||
        echo "client: no '$n echoes ... checked, every byte matched'"
    grep -qE "^disconnected $n in [0-9.]+ s" <<<"$cli" || echo "client: no 'disconnected $n in S s'"
    grep -qE "^server: $n connect requests, $n messages checked, $n answers sent, $n disconnected\$" <<<"$srv" ||
        echo "server: not $n requests, checked messages, answers and disconnects"
    grep -q '^client: PASS$' <<<"$cli" || echo "client: no 'PASS'"
    grep -q '^server: PASS$' <<<"$srv" || echo "server: no 'PASS'"
    echo "$cli" | sed -n 's/^bw| //p' | awk -v n="$it" '
        $1 == "#bytes" { hdr = 1; next }
        hdr && $1 == 65536 && $2 == n && NF >= 5 { ok = 1 } END { exit !ok }' ||
        echo "client: no ib_write_bw result row '65536 $it ...' alongside the connections"
    grep -q '^client: ib_write_bw alongside: exit 0$' <<<"$cli" || echo "client: ib_write_bw alongside did not exit 0"
    grep -q '^server: ib_write_bw alongside: exit 0$' <<<"$srv" || echo "server: ib_write_bw alongside did not exit 0"
    echo "$srv$cli" | grep -m3 ': error: ' | sed 's/^/failed: /'
}

# Open MPI (init's mpi(), tests/guest/mpi-check.c): 2 ranks in each
# guest, every phase's line from rank 0 with 0 bad, the PASS line, UCX's
# endpoints between the guests on TL (the ranks' ep_cfg lines at
# UCX_LOG_LEVEL=info), and the server's guest's orted started by our
# remote shell and ended with status 0.
chk_mpi() {   # TEXT TL
    local s=$1 tl=$2 srv cli n
    srv=$(dp_side "$s" server)
    cli=$(dp_side "$s" client)
    n=$(grep -cE '^rank [0-9] of 4 on mpi-a$' <<<"$cli")
    [ "$n" = 2 ] || echo "client: $n of 2 ranks on mpi-a (the client's guest)"
    n=$(grep -cE '^rank [0-9] of 4 on mpi-b$' <<<"$cli")
    [ "$n" = 2 ] || echo "client: $n of 2 ranks on mpi-b (the server's guest)"
    grep -qE '^ring: 4 ranks, [0-9]+ rounds of [0-9]+ bytes, token 10 each round: 0 bad bytes$' <<<"$cli" ||
        echo "client: no 'ring: 4 ranks ... 0 bad bytes'"
    grep -qE '^alltoall: 4 ranks, [0-9]+ words per pair: checksum 0x[0-9a-f]+, want 0x[0-9a-f]+ \(equal\): 0 bad words$' <<<"$cli" ||
        echo "client: no 'alltoall: ... checksum ... (equal): 0 bad words'"
    grep -qE '^latency: rank 0 <-> rank 2, [0-9]+ ping-pongs of 8 bytes: [0-9.]+ usec one way, 0 bad replies$' <<<"$cli" ||
        echo "client: no 'latency: rank 0 <-> rank 2 ... 0 bad replies'"
    grep -qE '^bandwidth: rank 0 -> rank 2, .* MB/s \(each byte checked\): 0 bad bytes$' <<<"$cli" ||
        echo "client: no 'bandwidth: rank 0 -> rank 2 ... 0 bad bytes'"
    grep -q '^mpi-check: PASS: ' <<<"$cli" || echo "client: no 'mpi-check: PASS'"
    grep -qE "ep_cfg\[[0-9]+\]: tag\($tl/[^ )]*\)\$" <<<"$cli" ||
        echo "client: no UCX endpoint between the guests on $tl alone (ep_cfg lines)"
    grep -qE '^server: started: .* orted ' <<<"$srv" || echo "server: no orted started"
    grep -q '^server: the command exited 0$' <<<"$srv" || echo "server: no 'the command exited 0'"
    echo "$srv$cli" | grep -m3 'FAILED' | sed 's/^/failed step: /'
    grep -q 'UCX  ERROR' <<<"$s" &&
        echo "errors: $(grep -m2 'UCX  ERROR' <<<"$s" | sed 's/.*UCX  ERROR //' | tr '\n' ' ')"
}

# librdmacm's rdma_server/rdma_client: each prints "end 0" when its one
# SEND and RECV completed (the 16 bytes they exchange carry no pattern).
chk_rdma_server() {   # TEXT
    local s=$1
    dp_side "$s" server | grep -qx 'rdma_server: end 0' || echo "server: no 'rdma_server: end 0'"
    dp_side "$s" client | grep -qx 'rdma_client: end 0' || echo "client: no 'rdma_client: end 0'"
}
# rcopy: the file the client sent and the one the server received have
# the same size and sha256; rcopy's client prints its rate, its server
# "closing...done".
chk_rcopy() {   # TEXT
    local s=$1 srv cli a b
    srv=$(dp_side "$s" server)
    cli=$(dp_side "$s" client)
    a=$(echo "$cli" | sed -n 's/^client: sending [^ ]*: \([0-9]*\) bytes sha256 \([0-9a-f]*\)$/\1 \2/p' | head -1)
    b=$(echo "$srv" | sed -n 's/^server: received [^ ]*: \([0-9]*\) bytes sha256 \([0-9a-f]*\)$/\1 \2/p' | head -1)
    [ -n "$a" ] || echo "client: no 'client: sending FILE: N bytes sha256 H'"
    [ -n "$b" ] || echo "server: no 'server: received FILE: N bytes sha256 H'"
    [ -z "$a" ] || [ -z "$b" ] || [ "$a" = "$b" ] ||
        echo "the server received ${b% *} bytes sha256 ${b#* }, the client sent ${a% *} bytes sha256 ${a#* }"
    grep -qE '^[0-9]+ bytes in [0-9.]+ seconds = [0-9.]+ Gb/sec$' <<<"$cli" ||
        echo "client: no '<bytes> bytes in <t> seconds = <r> Gb/sec'"
    grep -q 'closing\.\.\.done' <<<"$srv" || echo "server: no 'closing...done'"
    echo "$srv$cli" | grep -m3 'FAILED' | sed 's/^/failed step: /'
}
# riostream -T v: both sides print the result row of their custom test
# ("custom SIZE XFERS ITERS TOTAL TIMEs GB/S USEC"); a transfer that does
# not hold the pattern ends the program with "data verification failed
# byte N", a failed call with perror's "riowrite: ...", "rpoll: ..." etc.
chk_riostream() {   # TEXT
    local s=$1 side out
    for side in server client; do
        out=$(dp_side "$s" $side)
        grep -q '^name  *bytes  *xfers  *iters' <<<"$out" || echo "$side: no result header"
        echo "$out" | awk '$1 == "custom" && NF == 8 { ok = 1 } END { exit !ok }' ||
            echo "$side: no result row 'custom ...'"
        echo "$out" | grep -m2 -E 'verification failed|^(riowrite|rrecv|rsend|rpoll|rconnect|raccept|riomap|async rconnect|rsocket|rbind|rlisten)[:]' |
            sed "s/^/$side: /"
    done
}
# qperf: each test's name line and its figure (rc_bw "bw =", rc_lat
# "latency =", the ver_rc_* atomics "msg_rate =", which check every
# result and stop with "mismatch, sequence ..." otherwise); qperf reports
# its own and the server's errors on the client.  Only the last run
# counts: the client runs again when RDMA-CM rejected its connection
# (init's qperf_client_sh: qperf's own race), at most 3 times.
chk_qperf() {   # TEXT
    local s=$1 cli t want
    cli=$(dp_side "$s" client | awk '/^client: qperf: RDMA-CM rejected/ { out = ""; next } { out = out $0 "\n" } END { printf "%s", out }')
    for t in $(echo "$s" | sed -n 's/^client: .* qperf[^ ]* //p' | head -1); do
        case $t in
            rc_bw) want=bw ;;
            rc_lat) want=latency ;;
            ver_rc_*|rc_compare_swap_mr|rc_fetch_add_mr) want=msg_rate ;;
            *) continue ;;
        esac
        echo "$cli" | awk -v t="$t:" -v w="$want" '$0 == t { on = 1; next }
            on && $1 == w && $2 == "=" && $3 ~ /^[0-9.]+$/ { ok = 1 } /^[^ ]/ { on = 0 }
            END { exit !ok }' || echo "client: no '$t' with '$want = <n>'"
    done
    echo "$cli" | grep -m3 -iE 'mismatch|failed|error|unexpected' | sed 's/^/client: /'
}
# fi_pingpong -c: both sides print the row of their transfer size with
# every message sent and acknowledged ("4k 100 =100 ..."); a buffer that
# fails the check ends it with an error.
chk_fi_pingpong() {   # TEXT
    local s=$1 n side out
    n=$(dp_opt "$s" -I 10)
    for side in server client; do
        out=$(dp_side "$s" $side)
        grep -q '^bytes  *#sent  *#ack' <<<"$out" || echo "$side: no result header"
        echo "$out" | awk -v n="$n" '$2 == n && $3 == "=" n { ok = 1 } END { exit !ok }' ||
            echo "$side: no result row '<size> $n =$n ...'"
        echo "$out" | grep -m2 -E '^\[error\]|\(\): .*ret=-|[Dd]ata check' | sed "s/^/$side: /"
    done
}

# NVMe-oF over RDMA (init's nvmeof_rdma: server = target, client = host):
# each step prints its own line, failures say "FAILED".  The host must have
# connected, seen the namespace, written the pattern in 5 block sizes, read
# it back identical 4 ways, disconnected and unloaded nvme_rdma; the target
# must have enabled its port, found the pattern in its RAM disk and torn
# everything down.  The kernel log must show the controller created over
# this address and removed, and no nvme/nvmet error line.
nvme_klog_errors() {
    # (not the kernel command line: two-guests.sh's names nvmeof_rdma and
    # pvrdma.timeout)
    klog | grep -vi 'command line: ' | grep -E 'nvme|nvmet|blk_update_request|I/O error' |
        grep -iE 'fail|error|unable|timed? ?out|timeout|cannot|could ?n.?t|invalid|expired|reconnect|recover|abort|reset'
}
chk_nvmeof() {   # TEXT
    local s=$1 srv cli nqn l n
    srv=$(dp_side "$s" server)
    cli=$(dp_side "$s" client)
    nqn=$(echo "$s" | sed -n 's/^server: //p' | head -1 | awk '{ print $5 }')
    grep -q '^target: port 1 enabled: rdma ' <<<"$srv" || echo "target: port not enabled"
    grep -qE '^host: connected: instance=[0-9]+,cntlid=[0-9]+$' <<<"$cli" || echo "host: no 'connected: instance=N,cntlid=N'"
    grep -qE '^host: nvme[0-9]+: transport rdma address traddr='"$ip4"',trsvcid=4420' <<<"$cli" ||
        echo "host: the controller is not rdma at $ip4:4420"
    grep -qE '^host: namespace nvme[0-9]+n1: 32768 sectors' <<<"$cli" || echo "host: no namespace of 32768 sectors"
    n=$(echo "$cli" | grep -cE '^host: write bs=[0-9]+ bytes [0-9]+-[0-9]+: ok')
    [ "$n" = 5 ] || echo "host: $n of 5 writes ok"
    n=$(echo "$cli" | grep -cE '^host: read back .*: identical')
    [ "$n" = 4 ] || echo "host: $n of 4 read-backs identical"
    grep -qE '^host: disconnected: ' <<<"$cli" || echo "host: not disconnected"
    grep -q '^host: nvme_rdma unloaded$' <<<"$cli" || echo "host: nvme_rdma not unloaded"
    grep -q '^target: backing store /dev/ram0 holds the pattern' <<<"$srv" ||
        echo "target: the RAM disk does not hold the pattern"
    grep -q '^target: torn down: ' <<<"$srv" || echo "target: not torn down"
    echo "$srv$cli" | grep -m3 'FAILED' | sed 's/^/failed step: /'
    if [ -n "$nqn" ]; then
        klog | grep -qF "new ctrl: NQN \"$nqn\", addr $ip4:4420" ||
            echo "kernel log: no 'nvme nvmeN: new ctrl: NQN \"$nqn\", addr $ip4:4420'"
        klog | grep -qF "Removing ctrl: NQN \"$nqn\"" ||
            echo "kernel log: no 'nvme nvmeN: Removing ctrl: NQN \"$nqn\"'"
    fi
    l=$(nvme_klog_errors)
    [ -z "$l" ] || echo "kernel log: $(echo "$l" | wc -l) nvme error lines: $(echo "$l" | head -3 | tr '\n' '|')"
    # kernel problems from the scenario's start (the target's brd) on
    l=$(klog | awk '/brd: module loaded/ { on = 1 } on' |
        grep -E 'BUG:|Oops|WARNING: CPU|Call Trace|general protection|RIP: |soft lockup|hung_task|blocked for more than')
    [ -z "$l" ] || echo "kernel log: $(echo "$l" | head -3 | tr '\n' '|')"
}

# NFS over RDMA (init's nfs_rdma: server = nfsd, client = the mounts).
# Both NFSv3 and NFSv4.2 must have been mounted twice (to write, then to
# read back) as NFS of that version over rdma (rdma6 on an IPv6 GID) on
# port 20049, in /proc/mounts and in the mount's xprt line of
# /proc/self/mountstats: a mount that fell back to TCP fails.  For every
# file the client wrote (its sha256 taken before the write), the
# client's read-back after the remount and the server's own copy must
# have the same size and sha256; each version at least one file.  The
# kernel log must hold no rpcrdma/svcrdma/NFS error line (but nfsd's
# legacy NFSv4 client tracking's "Failed to remove expired client state
# directory", which it says when a client that never had a record
# there, one that opened nothing before its grace period ended, goes).
nfs_klog_errors() {
    klog | grep -vi 'command line: ' | grep -iE 'rpcrdma|svcrdma|xprtrdma|nfs|lockd|rpcbind|sunrpc' |
        grep -v 'NFSD: Failed to remove expired client state directory' |
        grep -iE 'fail|error|unable|timed? ?out|timeout|cannot|could ?n.?t|invalid|reject|refused|not responding|disconnect|flushed|abort|reset'
}
# nfs_summary TEXT: "NFSv3, NFSv4.2 over rdma; 16, 64 MiB each; sha256 ..."
# (the PASS line's detail: what chk_nfs checked)
nfs_summary() {
    local cli
    cli=$(dp_side "$1" client)
    echo "$cli" | awk '
        $1 == "client:" && $2 == "mount" && $4 == "(write):" { sub(/^vers=/, "", $3); v[$3] = 1; split($8, o, ",")
            for (i in o) if (o[i] ~ /^proto=/) { p = o[i]; sub(/^proto=/, "", p) } }
        $1 == "client:" && $2 == "wrote" { mb[$4 / 1048576] = 1; h = h " " substr($7, 1, 12) }
        END { for (x in v) vs = vs (vs ? ", " : "") "NFSv" x
              n = 0; for (x in mb) s[++n] = x + 0
              for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (s[j] < s[i]) { t = s[i]; s[i] = s[j]; s[j] = t }
              for (i = 1; i <= n; i++) ms = ms (i > 1 ? ", " : "") s[i]
              printf "%s over %s; %s MiB per version; sha256%s", vs, p, ms, h }'
    echo "$1" | sed -n 's/^--- end: elapsed=\([0-9.]*\).*/; \1 s/p' | tail -n 1
}
chk_nfs() {   # TEXT
    local s=$1 srv cli v what l o x f bytes h n nv l2
    srv=$(dp_side "$s" server)
    cli=$(dp_side "$s" client)
    grep -q '^server: listening: rdma 20049' <<<"$srv" || echo "server: no RDMA listener on port 20049"
    # (else the first NFSv4 OPENs wait out the grace period: init's nfs_server_sh)
    grep -q '^server: NFSv4 grace period ended: Y$' <<<"$srv" || echo "server: the NFSv4 grace period was not ended"
    for v in 3 4.2; do
        for what in write read; do
            l=$(grep -m1 "^client: mount vers=$v ($what): " <<<"$cli")
            l=${l#client: mount vers=$v ($what): }
            x=$(grep -m1 "^client: mountstats vers=$v ($what): " <<<"$cli")
            x=${x#client: mountstats vers=$v ($what): }
            if [ -z "$l" ]; then
                echo "client: NFSv$v not mounted ($what)"
                continue
            fi
            # SERVER:/EXPORT /mnt/nfs nfs|nfs4 OPTIONS 0 0
            o=,$(echo "$l" | awk '{ print $4 }'),
            case $(echo "$l" | awk '{ print $3 }') in nfs|nfs4) ;; *) echo "client: NFSv$v ($what): not an NFS mount: $l" ;; esac
            case $o in *,vers=$v,*) ;; *) echo "client: NFSv$v ($what): mounted without vers=$v: $l" ;; esac
            case $o in
                *,proto=rdma,*) case $l in "$ip4:"*) ;; *) echo "client: NFSv$v ($what): not a mount of $ip4: $l" ;; esac ;;
                *,proto=rdma6,*) ;;
                *) echo "client: NFSv$v ($what): not over RDMA (proto=rdma or rdma6): $l" ;;
            esac
            case $o in *,port=20049,*) ;; *) echo "client: NFSv$v ($what): not on port 20049: $l" ;; esac
            case $x in "xprt: rdma "*) ;; *) echo "client: NFSv$v ($what): the transport in mountstats is not rdma: '$x'" ;; esac
        done
        nv=0
        while read -r f bytes h; do
            [ -n "$f" ] || continue
            nv=$((nv + 1))
            l2=$(grep -m1 "^client: read back $f: " <<<"$cli" | awk '{ print $5, $8 }')
            [ "$l2" = "$bytes $h" ] ||
                echo "client: $f written as $bytes bytes sha256 $h, read back: ${l2:-nothing}"
            l2=$(grep -m1 "^server: holds $f: " <<<"$srv" | awk '{ sub(/[:,]$/, "", $7); print $4, $7 }')
            [ "$l2" = "$bytes $h" ] ||
                echo "server: $f written as $bytes bytes sha256 $h, the server holds: ${l2:-nothing}"
        done < <(grep "^client: wrote nfs-v$v-" <<<"$cli" | awk '{ sub(/:$/, "", $3); print $3, $4, $7 }')
        [ $nv -gt 0 ] || echo "client: NFSv$v: no file written"
    done
    grep -q '^client: done: ' <<<"$cli" || echo "client: no 'done:' line"
    grep -q '^server: torn down: ' <<<"$srv" || echo "server: not torn down"
    grep -q '^server: done: ' <<<"$srv" || echo "server: no 'done:' line"
    echo "$srv$cli" | grep -m3 'FAILED' | sed 's/^/failed step: /'
    l=$(nfs_klog_errors)
    [ -z "$l" ] || echo "kernel log: $(echo "$l" | wc -l) RPC/NFS error lines: $(echo "$l" | head -3 | tr '\n' '|')"
    l=$(klog | awk '/RPC: Registered rdma transport module|nfsd: module loaded|NFSD: / { on = 1 } on' |
        grep -E 'BUG:|Oops|WARNING: CPU|Call Trace|general protection|RIP: |soft lockup|hung_task|blocked for more than')
    [ -z "$l" ] || echo "kernel log: $(echo "$l" | head -3 | tr '\n' '|')"
}

# iSER (init's iser: server = LIO target, client = open-iscsi): the
# target must have enabled its portal with iSER and found the host's
# pattern in its RAM disk, then torn everything down; the host must have
# discovered the target (over TCP) and logged in over the iser interface (a session
# "iser: [N] IP:PORT,1 IQN"), seen the LUN as a SCSI disk, written the
# pattern and read it back identical twice, and logged out with the disk
# gone.  The kernel log must hold no iSCSI/iSER error line.
iser_klog_errors() {
    klog | grep -vi 'command line: ' | grep -iE 'iscsi|iser|isert|target|sd [0-9]|sd[a-z]' |
        grep -v 'db_root: cannot open: /etc/target' | grep -v 'Unable to load target_core_' |
        grep -iE 'fail|error|unable|timed? ?out|timeout|cannot|could ?n.?t|invalid|reject|abort|reset|recover'
}
chk_iser() {   # TEXT
    local s=$1 srv cli a b l n
    srv=$(dp_side "$s" server)
    cli=$(dp_side "$s" client)
    grep -qE '^target: target .* enabled: portal [0-9.]+:[0-9]+ iser=1, ' <<<"$srv" || echo "target: no portal with iser=1 enabled"
    grep -qE "^host: discovery \(TCP\): $ip4:[0-9]+,1 " <<<"$cli" || echo "host: discovery did not find the target at $ip4"
    grep -qE "^host: session: iser: \[[0-9]+\] $ip4:[0-9]+,1 " <<<"$cli" || echo "host: no iser session to $ip4"
    grep -qE '^host: disk sd[a-z]+: [0-9]+ sectors' <<<"$cli" || echo "host: no SCSI disk"
    a=$(echo "$cli" | sed -n 's/^host: wrote \([0-9]*\) bytes sha256 \([0-9a-f]*\) .*/\1 \2/p' | head -1)
    b=$(echo "$srv" | sed -n 's/^target: backing store [^ ]* holds the pattern: \([0-9]*\) bytes sha256 \([0-9a-f]*\)$/\1 \2/p' | head -1)
    [ -n "$a" ] || echo "host: the pattern was not written"
    [ -n "$a" ] && [ "$a" = "$b" ] || echo "target: the backing store does not hold the host's pattern (host: ${a:-none}, target: ${b:-none})"
    n=$(echo "$cli" | grep -cE '^host: read back bs=[0-9]+, [0-9]+ bytes: identical')
    [ "$n" = 2 ] || echo "host: $n of 2 read-backs identical"
    grep -q '^host: logged out: no session' <<<"$cli" || echo "host: not logged out"
    grep -q '^host: ib_iser unloaded$' <<<"$cli" || echo "host: ib_iser not unloaded"
    grep -q '^target: torn down: ' <<<"$srv" || echo "target: not torn down"
    echo "$srv$cli" | grep -m3 'FAILED' | sed 's/^/failed step: /'
    l=$(iser_klog_errors)
    [ -z "$l" ] || echo "kernel log: $(echo "$l" | wc -l) iSCSI/iSER error lines: $(echo "$l" | head -3 | tr '\n' '|')"
    # a pvrdma target runs on one CPU so that vmw_pvrdma's interruptible
    # command wait cannot fail LIO's QP drain at logout (docs/pvrdma.txt
    # 4.5); if the driver still says so, the workaround did not hold
    if grep -q '^target: vmw_pvrdma[0-9]*: CPUs.* offline' <<<"$srv"; then
        grep -q '^target: CPUs back online: ' <<<"$srv" || echo "target: its CPUs were not brought back online"
    fi
    l=$(klog | grep -E 'vmw_pvrdma .*: (completion timeout or interrupted|could not modify queuepair)')
    [ -z "$l" ] || echo "kernel log: vmw_pvrdma's command wait failed $(echo "$l" | wc -l) time(s) (docs/pvrdma.txt 4.5): $(echo "$l" | head -2 | tr '\n' '|')"
    l=$(klog | awk '/Loading iSCSI transport class|brd: module loaded/ { on = 1 } on' |
        grep -E 'BUG:|Oops|WARNING: CPU|Call Trace|general protection|RIP: |soft lockup|hung_task|blocked for more than')
    [ -z "$l" ] || echo "kernel log: $(echo "$l" | head -3 | tr '\n' '|')"
}

# dp_exit_excuse: the name of a function SECTION SIDE STATUS that a test
# sets when its program has a known defect that makes one side exit
# non-zero after a run its check function still judges in full; the
# function returns 0 and prints why when the ending is exactly that
# defect's.  Empty (no excuse) for every program but rping.
dp_exit_excuse=
dp_excused() {   # SECTION SIDE STATUS (appends to dp()'s dp_excuses)
    local why
    [ -n "$dp_exit_excuse" ] || return 1
    why=$("$dp_exit_excuse" "$@") || return 1
    dp_excuses+=("$2 exit status $3 excused: $why")
}

# dp TEST SCENARIO CHECK ARGS...: the verdict on one data-path pair (a
# pass says dp_detail too, if set, and any excused exit status)
dp_detail=
dp() {
    local t=$1 sc=$2 chk=$3 s rs rc why=() l srv cli detail dp_excuses=()
    shift 3
    s=$(section "$sc")
    if [ -z "$s" ]; then
        fail "$t" "no '$sc' section: the guest did not run it (guest stopped early or timed out?)" \
            "$(guest_result "$sc")"
        return
    fi
    rs=$(dp_rc "$s" server)
    rc=$(dp_rc "$s" client)
    [ "$rs" = 0 ] || dp_excused "$s" server "$rs" || why+=("server exit status $rs")
    [ "$rc" = 0 ] || dp_excused "$s" client "$rc" || why+=("client exit status $rc")
    l=$(echo "$s" | grep -m1 '^--- deadline: ')
    [ -z "$l" ] || why+=("${l#--- }")
    while IFS= read -r l; do [ -n "$l" ] && why+=("$l"); done < <("$chk" "$s" "$@")
    if [ ${#why[@]} = 0 ]; then
        detail=${dp_detail:+"$dp_detail; "}
        [ ${#dp_excuses[@]} = 0 ] || detail+=$(printf '%s; ' "${dp_excuses[@]}")
        pass "$t${detail:+ (${detail%; })}"
        return
    fi
    srv=$(dp_side "$s" server | grep -v '^[- ]*$' | tail -n 3)
    cli=$(dp_side "$s" client | grep -v '^[- ]*$' | tail -n 3)
    fail "$t" "${why[@]}" "$(echo "$s" | grep -m1 '^client: ')" \
        "server output ends: ${srv:-(nothing)}" "client output ends: ${cli:-(nothing)}" \
        "$(echo "$s" | grep '^--- device counters: ' | sed 's/^--- //')" \
        "$(echo "$s" | sed -n '/^--- stuck tasks/,$p' | head -12)"
}
t_rc_pingpong() { dp rc-pingpong rc_pingpong chk_pingpong; }
t_rc_pingpong_4m() { dp rc-pingpong-4m rc_pingpong_4m chk_pingpong; }
t_ud_pingpong() { dp ud-pingpong ud_pingpong chk_pingpong; }
t_srq_pingpong() { dp srq-pingpong srq_pingpong chk_pingpong; }
t_ib_send_bw() { dp ib-send-bw ib_send_bw chk_perf bw 65536 both; }
t_ib_send_bw_ud() { dp ib-send-bw-ud ib_send_bw_ud chk_perf bw 65536 both; }
t_ib_write_bw() { dp ib-write-bw ib_write_bw chk_perf bw 65536 both; }
t_ib_read_bw() { dp ib-read-bw ib_read_bw chk_perf bw 65536 both; }
t_ib_atomic_bw() { dp ib-atomic-bw ib_atomic_bw chk_perf bw 8 both; }
t_ib_send_lat() { dp ib-send-lat ib_send_lat chk_perf lat 2 both; }
t_ib_send_lat_ud() { dp ib-send-lat-ud ib_send_lat_ud chk_perf lat 2 both; }
t_ib_write_lat() { dp ib-write-lat ib_write_lat chk_perf lat 2 both; }
t_ib_read_lat() { dp ib-read-lat ib_read_lat chk_perf lat 2 client; }
t_rping() { dp_exit_excuse=rping_teardown_race dp rping rping chk_rping; }
t_ucx_put_bw() { dp ucx-put-bw ucx_put_bw chk_ucx; }
t_ucx_get() { dp ucx-get ucx_get chk_ucx; }
t_ucx_fadd() { dp ucx-fadd ucx_fadd chk_ucx; }
t_ucp_tag_lat_rc() { dp ucp-tag-lat-rc ucp_tag_lat_rc chk_ucx; }
t_ucp_tag_bw_rc() { dp ucp-tag-bw-rc ucp_tag_bw_rc chk_ucx; }
t_ucp_put_bw_rc() { dp ucp-put-bw-rc ucp_put_bw_rc chk_ucx; }
t_ucp_get_rc() { dp ucp-get-rc ucp_get_rc chk_ucx; }
t_ucp_tag_lat_ud() { dp ucp-tag-lat-ud ucp_tag_lat_ud chk_ucx; }
t_ucp_tag_bw_ud() { dp ucp-tag-bw-ud ucp_tag_bw_ud chk_ucx; }
t_ucp_put_bw_ud() { dp ucp-put-bw-ud ucp_put_bw_ud chk_ucx; }
t_ucp_get_ud() { dp ucp-get-ud ucp_get_ud chk_ucx; }
t_ucp_pattern_rc() { dp ucp-pattern-rc ucp_pattern_rc chk_ucp_pattern rc_verbs; }
t_ucp_pattern_ud() { dp ucp-pattern-ud ucp_pattern_ud chk_ucp_pattern ud_verbs; }
t_mpi_rc() { dp mpi-rc mpi_rc chk_mpi rc_verbs; }
t_mpi_ud() { dp mpi-ud mpi_ud chk_mpi ud_verbs; }
t_rdma_server() { dp rdma-server rdma_server chk_rdma_server; }
t_cm_scale() { dp cm-scale cm_scale chk_cm_scale; }
t_rcopy() { dp rcopy rcopy chk_rcopy; }
# SMB Direct: a SKIP with the reason when the guest's kernel lacks it (init
# names the options its configuration leaves unset)
t_smb_direct() {
    local s why
    s=$(section smb_direct)
    if [ -z "$s" ]; then
        fail smb-direct "no 'smb_direct' section: the guest did not run it" "$(guest_result smb_direct)"
        return
    fi
    why=$(echo "$s" | grep -m1 '^kernel lacks SMB Direct: ')
    if [ -n "$why" ]; then
        skip smb-direct "$why"
    else
        fail smb-direct "the guest's kernel has SMB Direct, and no scenario runs it yet" \
            "$(echo "$s" | tail -n 3)"
    fi
}
t_riostream() { dp riostream riostream chk_riostream; }
t_riostream_async() { dp riostream-async riostream_async chk_riostream; }
t_qperf() {
    local n
    n=$(dp_side "$(section qperf)" client | grep -c '^client: qperf: RDMA-CM rejected')
    [ "$n" = 0 ] || dp_detail="run $((n + 1)) times: RDMA-CM rejected $n connection(s), qperf's race"
    dp qperf qperf chk_qperf
    dp_detail=
}
t_fi_pingpong() { dp fi-pingpong fi_pingpong chk_fi_pingpong; }
t_fi_pingpong_rdm() { dp fi-pingpong-rdm fi_pingpong_rdm chk_fi_pingpong; }
t_iser() {
    local f=$nfail
    dp iser iser chk_iser
    # on failure, the kernel's own account of the iSER run
    if [ "$nfail" != "$f" ]; then
        klog | grep -iE 'iscsi|iser|isert|target|sd [0-9]|WARNING:|BUG:|Oops|Call Trace|pvrdma.*(fail|error|invalid)' |
            grep -vi 'command line: ' | grep -v 'module verification failed' | head -40 | sed 's/^/#   dmesg: /'
    fi
}
# The guest's client against a peer outside it (slow.sh: the lane-3 host
# VM); the script that ran the peer adds its side as "--- server".
t_peer_rc_pingpong() { dp peer-rc-pingpong peer_rc_pingpong chk_pingpong; }
t_nvmeof_rdma() {
    local f=$nfail
    dp nvmeof-rdma nvmeof_rdma chk_nvmeof
    # on failure, the kernel's own account of the NVMe-oF run
    if [ "$nfail" != "$f" ]; then
        klog | grep -E 'nvme|nvmet|brd:|blk_update_request|I/O error|WARNING:|BUG:|Oops|Call Trace|pvrdma.*(fail|error|invalid)' |
            grep -v 'module verification failed' | head -40 | sed 's/^/#   dmesg: /'
    fi
}
t_nfs_rdma() {
    local f=$nfail
    dp_detail=$(nfs_summary "$(section nfs_rdma)")
    dp nfs-rdma nfs_rdma chk_nfs
    dp_detail=
    # on failure, the kernel's own account of the NFS run
    if [ "$nfail" != "$f" ]; then
        klog | awk 'tolower($0) ~ /rpcrdma|svcrdma|xprtrdma|nfs|lockd|sunrpc|rpcbind|pvrdma.*(fail|error|invalid)/ ||
                    /WARNING:|BUG:|Oops|Call Trace/' |
            grep -vi 'command line: ' | grep -v 'module verification failed' | head -40 | sed 's/^/#   dmesg: /'
    fi
}

for t in "${tests[@]}"; do
    "t_${t//-/_}"
done
echo "# console log: $log" >&2
finish
