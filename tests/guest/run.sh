#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make run: boot two Debian test guests, each in its own QEMU (TCG) with
# the pvrdma device (-device vmxnet3 at 00:10.0, -device pvrdma at
# 00:10.1), their vmxnet3s joined by -netdev dgram on 127.0.0.1; show
# what the unmodified vmw_pvrdma driver and ibv_devinfo see inside each,
# and run an RDMA ping-pong between them over RoCE v2: ibv_rc_pingpong
# with content checking, 100 iterations, the server in guest B
# (10.0.3.2), the client in guest A (10.0.3.1), over the RoCE v2 GIDs of
# their IPv4 addresses (tests/guest/two-guests.sh does the booting).
#
# Usage: run.sh [options] [QEMU-BINARY [GUEST-DIR]] [-- extra QEMU arguments]
#   (make run calls: run.sh build/qemu/qemu-system-x86_64 build/guest)
#   -v             ibv_devinfo -v
#   --one          one guest instead: the ping-pong with server and client
#                  in it, both on its pvrdma device
#   --no-pingpong  one guest, ibv_devinfo only (GUEST_RUN_PINGPONG=0 the same)
#   --pingpong     run the ping-pong (the default)
#   --shell        one guest; afterwards a shell on its console (Ctrl-A x
#                  quits); with --no-pingpong, no ping-pong before it
#   --console      also show the whole boot console (with two guests: both
#                  consoles, after the run)
#   --no-pvrdma    one guest with vmxnet3 alone (no ping-pong)
#   -- ARGS        extra QEMU arguments (one guest only)
# If the QEMU binary has no pvrdma device yet, one guest boots without it.
# GUEST_DATAPATH_TIMEOUT: deadline of the ping-pong in seconds (default 30).
# The run fails (exit status not 0) if a guest or the ping-pong fails.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
guest_dir=${GUEST_DIR:-$top/build/guest}
qemu=${QEMU:-$top/build/qemu/qemu-system-x86_64}

opts=()
pingpong=${GUEST_RUN_PINGPONG:-1}
verbose=0
shell=0
console=0
pvrdma=1
two=1
extra=()
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        -v|--verbose) verbose=1; shift ;;
        --one) two=0; shift ;;
        --pingpong) pingpong=1; shift ;;
        --no-pingpong) pingpong=0; shift ;;
        --shell) shell=1; shift ;;
        --console) console=1; shift ;;
        --no-pvrdma) pvrdma=0; shift ;;
        --) shift; extra=(-- "$@"); break ;;
        -h|--help) sed -n '/^# Usage/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -le 2 ] || { echo "run.sh: too many arguments: ${positional[*]}" >&2; exit 2; }
[ ${#positional[@]} -lt 1 ] || qemu=${positional[0]}
[ ${#positional[@]} -lt 2 ] || guest_dir=${positional[1]}
export QEMU=$qemu GUEST_DIR=$guest_dir
timeout=${GUEST_DATAPATH_TIMEOUT:-30}

[ -x "$qemu" ] || { echo "run.sh: no QEMU binary at $qemu (build QEMU first)" >&2; exit 1; }
if [ $pvrdma = 1 ] && ! "$qemu" -device help 2>/dev/null | grep -q '"pvrdma"'; then
    echo "run.sh: note: $qemu has no pvrdma device yet; booting one guest with vmxnet3 alone" >&2
    pvrdma=0
fi
if [ "$pingpong" = 1 ] && [ $pvrdma = 0 ]; then
    echo "run.sh: note: no pvrdma device, so no RDMA ping-pong" >&2
    pingpong=0
fi
[ "$pingpong" = 1 ] && [ $shell = 0 ] || two=0
if [ $two = 1 ] && [ ${#extra[@]} -gt 0 ]; then
    echo "run.sh: extra QEMU arguments are for one guest (--one, --no-pingpong, --shell)" >&2
    exit 2
fi

# verdict TEXT: the ping-pong's verdict on one section in init's pair()
# layout (both sides' exit status and output: "<n> iters in ..." on both
# sides, no "invalid data"); sets verdict, and rc=1 on failure
verdict() {
    local pp=$1 n srv cli
    n=$(echo "$pp" | sed -n 's/^client: .* -n \([0-9]*\) .*/\1/p' | head -1)
    srv=$(echo "$pp" | sed -n '/^--- server (exit /,/^--- client (exit /p')
    cli=$(echo "$pp" | sed -n '/^--- client (exit /,/^--- end: /p')
    if echo "$pp" | grep -q '^--- server (exit 0)$' && echo "$pp" | grep -q '^--- client (exit 0)$' &&
       echo "$srv" | grep -qE "^$n iters in [0-9.]+ seconds" &&
       echo "$cli" | grep -qE "^$n iters in [0-9.]+ seconds" &&
       ! echo "$pp" | grep -q 'invalid data'; then
        verdict="PASS: $(echo "$cli" | grep -E '^[0-9]+ (bytes|iters) in ' | tr '\n' ';' | sed 's/;$//; s/;/; /')"
    else
        verdict="FAIL: $(echo "$pp" | grep -E '^--- (server|client) \(exit|^--- deadline' | sed 's/^--- //' | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
        [ $rc != 0 ] || rc=1
    fi
}
# show_pingpong TEXT WHO [LOG]: the ping-pong's section, or that WHO did
# not run it (with init's own word on it from the console LOG); then the
# verdict.  Sets verdict, and rc when the ping-pong did not run.
show_pingpong() {
    if [ -z "$1" ]; then
        echo "($2 did not run it)"
        [ -z "${3:-}" ] || tr -d '\r' <"$3" | grep -m1 '^GUEST-RESULT: rc_pingpong ' || true
        verdict="FAIL (not run)"
        [ "$rc" != 0 ] || rc=1
    else
        echo "$1"
        verdict "$1"
    fi
    echo "ping-pong: $verdict"
    echo "---"
}
# section NAME FILE: the raw output between GUEST-BEGIN/END: NAME
section() {
    tr -d '\r' <"$2" | awk -v n="$1" '$0 == "GUEST-BEGIN: " n { on = 1; next }
                                      $0 == "GUEST-END: " n { on = 0 } on'
}

# --- two guests ---------------------------------------------------------------
if [ $two = 1 ]; then
    logdir=$guest_dir/logs/run-two
    abi() { cat "$guest_dir/abi" 2>/dev/null; }
    echo "run.sh: two guests, each its own QEMU (TCG, 2 vCPUs, 1 GiB) with -device vmxnet3 and -device pvrdma;"
    echo "run.sh: their vmxnet3s joined by -netdev dgram on 127.0.0.1 (guest A 10.0.3.1, guest B 10.0.3.2)"
    echo "run.sh: preparing the guest (tests/guest/build-guest.sh $guest_dir)"
    mkdir -p "$logdir"
    "$here/build-guest.sh" "$guest_dir" >"$logdir/build-guest.out" 2>&1 ||
        { tail -n 20 "$logdir/build-guest.out" >&2; echo "run.sh: build-guest.sh failed (log: $logdir/build-guest.out)" >&2; exit 1; }
    echo "run.sh: booting both guests, then ibv_rc_pingpong from A to B (under TCG about half a minute)"
    targs=(--no-build --client-dev pvrdma --server-dev pvrdma --programs ibv_rc_pingpong
           --gids ipv4 --info --timeout "$timeout" --log-dir "$logdir")
    [ $verbose = 0 ] || targs+=(--append pvrdma.verbose=1)
    rc=0
    # two-guests.sh's notes and verdicts, indented
    "$here/two-guests.sh" "${targs[@]}" 2>&1 | sed -u 's/^/  /' || rc=$?
    for l in a b; do
        L=$(echo $l | tr '[:lower:]' '[:upper:]')
        [ $l = a ] && what="client, 10.0.3.1" || what="server, 10.0.3.2"
        if [ $console = 1 ]; then
            echo "--- console of guest $L ($logdir/$l.log) ---"
            tr -d '\r' <"$logdir/$l.log"
        fi
        echo "--- inside guest $L ($what; Debian $(abi), vmw_pvrdma from Debian's source) ---"
        s=$(section info "$logdir/$l.log" 2>/dev/null || true)
        if [ -n "$s" ]; then echo "$s"; else echo "(guest $L did not get to it; console log $logdir/$l.log)"; fi
    done
    echo "--- RDMA ping-pong between the guests over RoCE v2 (ibv_rc_pingpong -c: server in guest B, client in guest A) ---"
    pp=$(section rc_pingpong "$logdir/joined-ipv4.log" 2>/dev/null | grep -v '^control: ' || true)
    show_pingpong "$pp" "the guests"
    [ $rc = 0 ] || echo "run.sh: the run failed (status $rc); logs: $logdir (a.log, b.log: consoles)" >&2
    exit $rc
fi

# --- one guest ----------------------------------------------------------------
if [ "$pingpong" = 1 ]; then
    opts+=(--test info,rc_pingpong --append "pvrdma.timeout=$timeout")
else
    opts+=(--test info)
fi
[ $pvrdma = 1 ] || opts+=(--no-pvrdma)
[ $verbose = 1 ] && opts+=(--append pvrdma.verbose=1)
log=$guest_dir/logs/run.log
opts+=(--log "$log")

if [ $shell = 1 ]; then
    exec "$here/run-guest.sh" "${opts[@]}" --shell "${extra[@]}"
fi
[ $console = 1 ] || opts+=(--quiet)

rc=0
"$here/run-guest.sh" "${opts[@]}" "${extra[@]}" || rc=$?
if [ $console = 0 ]; then
    echo "--- inside the guest ($(cat "$guest_dir/abi" 2>/dev/null), vmw_pvrdma from Debian's source) ---"
    section info "$log"
    echo "---"
fi
if [ "$pingpong" = 1 ]; then
    pp=$(section rc_pingpong "$log")
    echo "--- RDMA ping-pong on the pvrdma device (ibv_rc_pingpong, server and client in the guest) ---"
    show_pingpong "$pp" "the guest" "$log"
fi
[ $rc = 0 ] || echo "run.sh: the guest run failed (status $rc); console log: $log" >&2
exit $rc
