#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make check-slow: the ibverbs backend end to end.  In the lane-3 host VM
# (run-hostvm.sh: Soft-RoCE rxe0 on eth0), rdmacm-mux serves rxe0 port 1
# and our QEMU boots the lane-2 guest (tests/guest) nested, under TCG, with
#   -device pvrdma,ibdev=rxe0,netdev=eth0,mad-chardev=mads
# on guest RAM from a shared memfd; the guest is 10.0.2.50 on its vmxnet3
# (slirp; the host VM is 10.0.2.2 from there).  gid-agent.py plays libvirt:
# on RDMA_GID_STATUS_CHANGED it adds the guest's address to eth0, so rxe0
# holds the guest's GID.  Scenarios:
#   A  ibv_rc_pingpong -s 4096 -n 100: server in the host VM on rxe0
#      (::ffff:10.0.2.15), client in the guest on vmw_pvrdma (out-of-band
#      TCP to 10.0.2.2); both must exit 0 and print their result lines
#   B  rping -s / rping -c -C 10 -V, both in the guest on 10.0.2.50: the CM
#      MADs go through the device, rdmacm-mux and rxe0's umad
# and the guest lane's own checks of the boot (probe, PORT_ACTIVE, GID,
# device errors, kernel log, shutdown), from tests/guest/check.sh.
#
# Usage: slow.sh [--timeout SEC] [--iters N] [--tool-timeout SEC]
#   --timeout SEC       the whole host VM (default 1800)
#   --iters N           ping-pong iterations (default 100)
#   --tool-timeout SEC  each program in the nested guest (default 240)
# (slow.sh --in-vm LOGDIR is the part that runs inside the host VM.)
#
# Environment: QEMU (build/qemu/qemu-system-x86_64), RDMACM_MUX (the
# daemon; default the QEMU build's, else built by tests/rdmacm-mux/build.sh).
# Logs: build/hostvm/out/slow/.  Prints "PASS: name" / "FAIL: name" (reasons
# on "#" lines) and last "slow: N passed, N failed"; exits 1 on a failure.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)

guest_ip=10.0.2.50           # the nested guest; the host VM is .15 and .16
guest_mac=52:54:00:12:34:57  # not the host VM's eth0 (52:54:00:12:34:56)
pp_port=18630                # ibv_rc_pingpong's out-of-band TCP port
scenarios=probe,devinfo,gids,peer_rc_pingpong,rping
checks=boot,modules,net,probe,devinfo,gid-roce-v2,peer-rc-pingpong,rping,device-errors,kernel-clean,shutdown

# --- inside the host VM ------------------------------------------------------
# Runs everything and records it in LOGDIR; the verdicts are the outer
# part's.  Environment from the outer part: SLOW_QEMU, SLOW_MUX, SLOW_ITERS,
# SLOW_TOOL_TIMEOUT.
in_vm() {
    local logs=$1 sock=/run/rdmacm-mux-rxe0-1 qmp=/run/qmp.sock
    local muxpid srvpid agentpid idx g n gt
    log() { echo "[slow] $*"; }
    gt=$((SLOW_TOOL_TIMEOUT * 3 + 400))   # boot, 3 waits, 2 programs

    "$SLOW_MUX" -d rxe0 -p 1 -s /run/rdmacm-mux -v >"$logs/mux.log" 2>&1 &
    muxpid=$!
    for n in $(seq 50); do [ -S $sock ] && break; sleep 0.2; done
    if [ -S $sock ]; then log "rdmacm-mux up: $sock"; else log "rdmacm-mux: no $sock after 10 s"; fi
    echo "$([ -S $sock ] && echo up || echo down)" >"$logs/mux.state"

    # The host side of scenario A on the RoCE v2 GID of 10.0.2.15.
    idx=
    for g in /sys/class/infiniband/rxe0/ports/1/gids/*; do
        [ "$(cat "$g")" = 0000:0000:0000:0000:0000:ffff:0a00:020f ] && { idx=${g##*/}; break; }
    done
    log "host server: ibv_rc_pingpong -d rxe0 -g ${idx:-?} -s 4096 -n $SLOW_ITERS -p $pp_port"
    (timeout "$gt" stdbuf -oL -eL ibv_rc_pingpong -d rxe0 -g "${idx:-1}" -s 4096 -n "$SLOW_ITERS" -p $pp_port \
        >"$logs/server.out" 2>&1; echo $? >"$logs/server.rc") &
    srvpid=$!

    python3 "$here/gid-agent.py" $qmp 120 >"$logs/agent.log" 2>&1 &
    agentpid=$!

    log "booting the nested guest (tests: $scenarios), console $logs/nested.log"
    QEMU=$SLOW_QEMU GUEST_NETDEV=user,id=n0 GUEST_MAC=$guest_mac \
    PVRDMA_DEVICE_OPTS=ibdev=rxe0,netdev=eth0,mad-chardev=mads GUEST_BOOT_TIMEOUT=400 \
        "$top/tests/guest/run-guest.sh" --no-build --quiet --log "$logs/nested.log" \
        --timeout "$gt" --test "$scenarios" \
        --append "pvrdma.ip=$guest_ip/24 pvrdma.neigh=10.0.2.15=$(cat /sys/class/net/eth0/address) pvrdma.timeout=$SLOW_TOOL_TIMEOUT pvrdma.iters=$SLOW_ITERS" \
        -- -object memory-backend-memfd,id=mem,size=1G,share=on -machine memory-backend=mem \
        -chardev socket,path=$sock,id=mads -qmp unix:$qmp,server,wait=off \
        2>"$logs/run-guest.err"
    echo $? >"$logs/run-guest.rc"
    log "nested guest done: run-guest.sh exit status $(cat "$logs/run-guest.rc"): $(tail -n 1 "$logs/run-guest.err")"

    # A server whose client never came is stopped now.
    kill -0 $srvpid 2>/dev/null && pkill -TERM -P $srvpid
    wait $srvpid
    kill $agentpid 2>/dev/null    # still waiting for a QEMU that never came
    wait $agentpid
    { ip addr show dev eth0; grep -H . /sys/class/infiniband/rxe0/ports/1/gids/* | grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$'; } >"$logs/host-net.txt"
    kill -USR1 $muxpid 2>/dev/null; sleep 1
    kill -TERM $muxpid 2>/dev/null
    wait $muxpid
    echo $? >"$logs/mux.rc"
    log "rdmacm-mux exit status $(cat "$logs/mux.rc")"
}

if [ "${1:-}" = --in-vm ]; then
    in_vm "$2"
    exit 0
fi

# --- on this machine ------------------------------------------------------------
timeout_s=1800
iters=100
tool_timeout=240
while [ $# -gt 0 ]; do
    case $1 in
        --timeout) timeout_s=$2; shift 2 ;;
        --iters) iters=$2; shift 2 ;;
        --tool-timeout) tool_timeout=$2; shift 2 ;;
        -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "slow.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done

# pass, fail (tests/guest/lib.sh)
# shellcheck source=../guest/lib.sh
. "$top/tests/guest/lib.sh"
finish() { verdict_summary slow; }
say() { printf '[slow] %s\n' "$*" >&2; }

qemu=${QEMU:-$top/build/qemu/qemu-system-x86_64}
logs=$top/build/hostvm/out/slow
rm -rf "$logs"
mkdir -p "$logs"

# What the run needs: the nested guest, the host VM, the daemon, a QEMU
# with the ibverbs backend.
prep() {
    "$top/tests/guest/build-guest.sh" >&2 || { echo "tests/guest/build-guest.sh failed"; return 1; }
    "$here/build-hostvm.sh" >&2 || { echo "tests/hostvm/build-hostvm.sh failed"; return 1; }
    [ -x "$qemu" ] || { echo "no QEMU at $qemu"; return 1; }
    "$qemu" -device pvrdma,help 2>/dev/null | grep -q '^  ibdev=' ||
        { echo "$qemu has no pvrdma ibdev= property"; return 1; }
    mux=${RDMACM_MUX:-$top/build/qemu/contrib/rdmacm-mux/rdmacm-mux}
    if [ ! -x "$mux" ]; then
        mux=$top/build/rdmacm-mux/rdmacm-mux
        "$top/tests/rdmacm-mux/build.sh" "$top/build/rdmacm-mux" >&2 ||
            { echo "tests/rdmacm-mux/build.sh failed"; return 1; }
    fi
}
why=$(prep) || { fail setup "$why"; finish; }
mux=${RDMACM_MUX:-$top/build/qemu/contrib/rdmacm-mux/rdmacm-mux}
[ -x "$mux" ] || mux=$top/build/rdmacm-mux/rdmacm-mux

say "host VM with a nested guest on -device pvrdma,ibdev=rxe0 (about 5-10 minutes); logs in $logs"
start=$(date +%s)
SLOW_QEMU=$qemu SLOW_MUX=$mux SLOW_ITERS=$iters SLOW_TOOL_TIMEOUT=$tool_timeout \
HOSTVM_ENV="SLOW_QEMU SLOW_MUX SLOW_ITERS SLOW_TOOL_TIMEOUT" \
    "$here/run-hostvm.sh" --no-build --timeout "$timeout_s" --log "$logs/hostvm.log" -- \
    "$here/slow.sh" --in-vm "$logs" >&2
hostvm_rc=$?
say "host VM done after $(( $(date +%s) - start )) s, exit status $hostvm_rc"

# --- verdicts ---------------------------------------------------------------------
if [ $hostvm_rc = 0 ]; then pass hostvm; else
    fail hostvm "run-hostvm.sh exit status $hostvm_rc (124: timeout, 125: the VM never ran the scenario)" \
        "$(tr -d '\r' <"$logs/hostvm.log" 2>/dev/null | grep -v '^$' | tail -n 5)"
fi

if [ "$(cat "$logs/mux.state" 2>/dev/null)" = up ] && [ "$(cat "$logs/mux.rc" 2>/dev/null)" = 0 ]; then
    pass rdmacm-mux
else
    fail rdmacm-mux "socket $(cat "$logs/mux.state" 2>/dev/null || echo '?'), exit status on SIGTERM $(cat "$logs/mux.rc" 2>/dev/null || echo '?')" \
        "$(tail -n 5 "$logs/mux.log" 2>/dev/null)"
fi

# The device announced the guest's GID and the agent put it on eth0.
if grep -q "^gid-agent: event gid ::ffff:$guest_ip added: ip addr add $guest_ip/24 dev eth0: exit 0" "$logs/agent.log" 2>/dev/null; then
    pass gid-event
else
    fail gid-event "no RDMA_GID_STATUS_CHANGED for ::ffff:$guest_ip (added) carried out on eth0; agent log:" \
        "$(tail -n 5 "$logs/agent.log" 2>/dev/null)"
fi

# Scenario A's section gets the host VM's server as its "--- server" side,
# so that check.sh judges both sides of the ping-pong as it does in lane 2.
nested=$logs/nested.log
if [ -s "$nested" ]; then
    tr -d '\r' <"$nested" | awk -v out="$logs/server.out" -v rc="$(cat "$logs/server.rc" 2>/dev/null || echo none)" '
        $0 == "GUEST-BEGIN: peer_rc_pingpong" { in_s = 1 }
        in_s && /^--- client \(exit / {
            print "--- server (exit " rc ")"
            while ((getline l < out) > 0) print l
            in_s = 0 }
        { print }' >"$logs/nested-peer.log"
    cp "$nested.rc" "$logs/nested-peer.log.rc" 2>/dev/null
fi
while IFS= read -r l; do
    case $l in
        PASS:*) npass=$((npass + 1)); echo "$l" ;;
        FAIL:*) nfail=$((nfail + 1)); echo "$l" ;;
        guest:*) ;;
        *) echo "$l" ;;
    esac
done < <("$top/tests/guest/check.sh" --console "$logs/nested-peer.log" --ip "$guest_ip" --tests "$checks" 2>/dev/null)
echo "# logs: $logs (nested.log: the nested guest's console)"
finish
