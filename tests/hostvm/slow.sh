#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make check-slow: the ibverbs backend end to end.  In the lane-3 host VM
# (run-hostvm.sh: Soft-RoCE rxe0 on eth0), rdmacm-mux serves rxe0 port 1
# and the real libvirt daemon (Debian's libvirtd 9.0, privileged: root in
# the host VM) starts our QEMU from domain.xml with the lane-2 guest
# (tests/guest) nested, under TCG, with
#   -device pvrdma,ibdev=rxe0,netdev=eth0,mad-chardev=mads
# on guest RAM from a shared memfd; the guest is 10.0.2.50 on its vmxnet3
# (slirp; the host VM is 10.0.2.2 from there).  On RDMA_GID_STATUS_CHANGED
# libvirt adds the guest's address to eth0, so rxe0 holds the guest's GID.
# Scenarios:
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
# Environment: QEMU (build/qemu/qemu-system-x86_64, libvirt's <emulator>),
# RDMACM_MUX (the daemon; default the QEMU build's, else built by
# tests/rdmacm-mux/build.sh).  Installs libvirt-daemon,
# libvirt-daemon-driver-qemu and libvirt-clients when they are missing.
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
domain=pvrdma-slow           # libvirt's name for the nested guest
# The pvrdma function as domain.xml's <qemu:arg>, in the key=value form of
# docs/pvrdma.txt 3.2.  QEMU creates it before the vmxnet3 that libvirt
# passes as JSON: the device must accept its function 0 coming later.
pvrdma_arg='pvrdma,addr=10.1,ibdev=rxe0,netdev=eth0,mad-chardev=mads'

# --- inside the host VM ------------------------------------------------------
# Runs everything and records it in LOGDIR; the verdicts are the outer
# part's.  Environment from the outer part: SLOW_QEMU, SLOW_MUX, SLOW_ITERS,
# SLOW_TOOL_TIMEOUT, SLOW_GUEST_DIR.
in_vm() {
    local logs=$1 sock=/run/rdmacm-mux-rxe0-1 ov=/run/slow-overlay
    local muxpid srvpid lvdpid idx g n d gt t0 el last state cmdline x
    local virsh=(virsh -q -c qemu:///system)
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

    # libvirtd runs privileged, as libvirt's system instance does: adding
    # the guest's address to eth0 on a GID event takes CAP_NET_ADMIN.  It
    # writes its configuration, state and logs under /etc and /var, which
    # are read-only here (this machine's root over 9p): an overlay on each
    # takes the writes into /run, so they vanish with the VM and nothing of
    # this machine changes.  The overlays hide what is mounted below them
    # (the tmpfs on /var/tmp), hence the logs must live elsewhere.
    lvd_setup() {
        case $logs in /etc/*|/var/*) echo "the logs ($logs) would be hidden by the overlays on /etc and /var"; return 1 ;; esac
        for d in etc var; do
            mkdir -p "$ov/$d/upper" "$ov/$d/work" || return 1
            mount -t overlay overlay -o "lowerdir=/$d,upperdir=$ov/$d/upper,workdir=$ov/$d/work" "/$d" ||
                { echo "cannot mount an overlay on /$d"; return 1; }
        done
        # libvirt looks its default QEMU user up before it reads qemu.conf,
        # and only the package libvirt-daemon-system creates it.
        getent passwd libvirt-qemu >/dev/null ||
            echo 'libvirt-qemu:x:64055:64055:libvirt QEMU (slow.sh):/var/lib/libvirt:/usr/sbin/nologin' >>/etc/passwd
        getent group libvirt-qemu >/dev/null || echo 'libvirt-qemu:x:64055:' >>/etc/group
        mkdir -p /etc/libvirt /var/lib/libvirt /var/cache/libvirt /var/log/libvirt/qemu || return 1
        # QEMU as root: it opens /dev/infiniband/uverbs* and pins the guest
        # RAM it registers with rxe0.  No ownership changes (nothing to
        # give away on a read-only root), no security driver, cgroups or
        # private /dev (the VM's init set up none of them), and the daemon
        # writes QEMU's log and the console file itself (no virtlogd).
        cat >/etc/libvirt/qemu.conf <<EOC
user = "root"
group = "root"
dynamic_ownership = 0
remember_owner = 0
security_driver = "none"
cgroup_controllers = [ ]
namespaces = [ ]
stdio_handler = "file"
EOC
        # Debug level only where the GID events are handled and the address
        # is added; the log goes to the export so the verdicts can read it.
        cat >/etc/libvirt/libvirtd.conf <<EOC
log_filters = "1:qemu.qemu_driver 1:util.netdevip 3:*"
log_outputs = "1:file:$logs/libvirtd.log"
EOC
        cp /etc/libvirt/qemu.conf /etc/libvirt/libvirtd.conf "$logs/"
    }

    lvdpid=
    : >"$logs/nested.log"
    if ! x=$(lvd_setup 2>&1); then
        log "libvirt: setup failed: $x"
        echo "setup failed: $x" >"$logs/libvirtd.state"
    else
        log "libvirtd (privileged), log $logs/libvirtd.log"
        libvirtd >"$logs/libvirtd.out" 2>&1 &
        lvdpid=$!
        for n in $(seq 300); do
            "${virsh[@]}" list --all >/dev/null 2>&1 && break
            kill -0 $lvdpid 2>/dev/null || break
            sleep 0.2
        done
        if "${virsh[@]}" list --all >/dev/null 2>&1; then
            echo up >"$logs/libvirtd.state"
        else
            echo "no answer on qemu:///system within 60 s" >"$logs/libvirtd.state"
        fi
        log "libvirtd: $(cat "$logs/libvirtd.state")"
    fi

    if [ "$(cat "$logs/libvirtd.state")" = up ]; then
        # the kernel command line run-guest.sh writes, with slow.sh's --append
        cmdline="console=ttyS0 panic=-1 quiet pvrdma.test=$scenarios pvrdma.shell=0"
        cmdline+=" pvrdma.ip=$guest_ip/24 pvrdma.neigh=10.0.2.15=$(cat /sys/class/net/eth0/address)"
        cmdline+=" pvrdma.timeout=$SLOW_TOOL_TIMEOUT pvrdma.iters=$SLOW_ITERS"
        # shellcheck source=../libvirt/domain.sh
        . "$top/tests/libvirt/domain.sh"
        fill_domain "$here/domain.xml" NAME="$domain" EMULATOR="$SLOW_QEMU" \
            KERNEL="$SLOW_GUEST_DIR/vmlinuz" INITRD="$SLOW_GUEST_DIR/initrd.img" \
            CMDLINE="$cmdline" MAC="$guest_mac" CONSOLE="$logs/nested.log" \
            MUX_SOCKET="$sock" PVRDMA="$pvrdma_arg" >"$logs/domain.xml"
        # eth0 before: the guest's address must be libvirt's doing
        ip addr show dev eth0 >"$logs/host-net-before.txt"
        log "booting the nested guest under libvirt (tests: $scenarios), console $logs/nested.log"
        if "${virsh[@]}" define "$logs/domain.xml" >"$logs/virsh.out" 2>&1 &&
           "${virsh[@]}" start "$domain" >>"$logs/virsh.out" 2>&1; then
            log "virsh start $domain: $("${virsh[@]}" domstate --reason "$domain" 2>&1)"
        else
            log "virsh define/start failed: $(tr '\n' ' ' <"$logs/virsh.out")"
        fi
        # Until the guest powers off (libvirt then stops QEMU), with
        # run-guest.sh's bounds: init within 400 s, all within $gt s.
        t0=$SECONDS
        last=0
        while :; do
            state=$("${virsh[@]}" domstate --reason "$domain" 2>&1 | head -n 1)
            case $state in "shut off"*|error*) break ;; esac
            el=$((SECONDS - t0))
            if [ $el -ge "$gt" ]; then
                log "timeout: $state after ${el}s; virsh destroy"
                "${virsh[@]}" destroy "$domain" >/dev/null 2>&1
                break
            fi
            if [ $el -ge 400 ] && ! grep -aq 'GUEST-BOOT:' "$logs/nested.log"; then
                log "the guest's init did not start within 400 s; virsh destroy"
                "${virsh[@]}" destroy "$domain" >/dev/null 2>&1
                break
            fi
            if [ $((el - last)) -ge 60 ]; then
                last=$el
                log "${el}s: $state; console: $(tr -d '\r' <"$logs/nested.log" | grep -a '^GUEST-' | tail -n 1)"
            fi
            sleep 2
        done
        state=$("${virsh[@]}" domstate --reason "$domain" 2>&1 | head -n 1)
        echo "$state" >"$logs/domstate.txt"
        log "nested guest done after $((SECONDS - t0))s: $state"
        # check.sh's shutdown verdict reads QEMU's exit status from
        # LOG.rc; under libvirt the equivalent is that the guest powered
        # off by itself
        if [ "$state" = 'shut off (shutdown)' ]; then echo 0; else echo 1; fi >"$logs/nested.log.rc"
        cp "/var/log/libvirt/qemu/$domain.log" "$logs/qemu.log" 2>/dev/null
    fi

    # A server whose client never came is stopped now.
    kill -0 $srvpid 2>/dev/null && pkill -TERM -P $srvpid
    wait $srvpid
    { ip addr show dev eth0; grep -H . /sys/class/infiniband/rxe0/ports/1/gids/* | grep -v ':0000:0000:0000:0000:0000:0000:0000:0000$'; } >"$logs/host-net.txt"
    if [ -n "$lvdpid" ]; then
        grep -E 'processRdmaGidStatusChangedEvent|virNetDevIPAddr' "$logs/libvirtd.log" >"$logs/libvirt-gid.txt" 2>/dev/null
        sed 's/^/[slow] libvirtd: /' "$logs/libvirt-gid.txt"
        log "stopping libvirtd (SIGTERM)"
        kill -TERM $lvdpid 2>/dev/null
        for n in $(seq 150); do kill -0 $lvdpid 2>/dev/null || break; sleep 0.2; done
        kill -0 $lvdpid 2>/dev/null && { log "libvirtd still there 30 s after SIGTERM: SIGKILL"; kill -KILL $lvdpid; }
        wait $lvdpid
        echo $? >"$logs/libvirtd.rc"
        log "libvirtd exit status $(cat "$logs/libvirtd.rc")"
    fi
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
guest_dir=$top/build/guest
logs=$top/build/hostvm/out/slow
rm -rf "$logs"
mkdir -p "$logs"

# What the run needs: libvirt (installed here, the host VM sees this
# machine's root), the nested guest, the host VM, the daemon, a QEMU with
# the ibverbs backend.
prep() {
    "$top/scripts/apt-setup.sh" libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients >&2 ||
        { echo "scripts/apt-setup.sh libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients failed"; return 1; }
    if ! command -v libvirtd >/dev/null || ! command -v virsh >/dev/null; then
        echo "no libvirtd or virsh after apt-setup.sh"; return 1
    fi
    "$top/tests/guest/build-guest.sh" "$guest_dir" >&2 || { echo "tests/guest/build-guest.sh failed"; return 1; }
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

say "host VM with libvirtd and a nested guest on -device pvrdma,ibdev=rxe0 (about 3-10 minutes); logs in $logs"
start=$(date +%s)
SLOW_QEMU=$qemu SLOW_MUX=$mux SLOW_ITERS=$iters SLOW_TOOL_TIMEOUT=$tool_timeout SLOW_GUEST_DIR=$guest_dir \
HOSTVM_ENV="SLOW_QEMU SLOW_MUX SLOW_ITERS SLOW_TOOL_TIMEOUT SLOW_GUEST_DIR" \
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

# The daemon answered as root and ended on SIGTERM.
if [ "$(cat "$logs/libvirtd.state" 2>/dev/null)" = up ] && [ "$(cat "$logs/libvirtd.rc" 2>/dev/null)" = 0 ]; then
    pass libvirtd
else
    fail libvirtd "libvirtd: $(cat "$logs/libvirtd.state" 2>/dev/null || echo '?'), exit status on SIGTERM $(cat "$logs/libvirtd.rc" 2>/dev/null || echo '?')" \
        "$(tail -n 5 "$logs/libvirtd.out" 2>/dev/null)" \
        "$(grep -E ': (error|warning) : ' "$logs/libvirtd.log" 2>/dev/null | tail -n 5)"
fi

# The device announced the guest's GID and libvirt put its address on
# eth0: the daemon's log says so and eth0 has it afterwards, not before
# (nothing else in the host VM adds it).
ip_re=${guest_ip//./\\.}
gid_lines=$(cat "$logs/libvirt-gid.txt" 2>/dev/null)
net_lines=$(grep -E '^ *inet6? ' "$logs/host-net.txt" 2>/dev/null)
why=()
grep -Eq "processRdmaGidStatusChangedEvent:[0-9]+ : Adding $ip_re to eth0\$" <<<"$gid_lines" ||
    why+=("libvirtd's log has no 'Adding $guest_ip to eth0' from its RDMA_GID_STATUS_CHANGED handler")
grep -Eq "inet $ip_re/24 .*eth0\$" <<<"$net_lines" || why+=("no $guest_ip/24 on eth0 after the run")
! grep -q "inet $ip_re/" "$logs/host-net-before.txt" 2>/dev/null ||
    why+=("$guest_ip was on eth0 before the domain started")
[ -s "$logs/host-net-before.txt" ] || why+=("eth0 was not recorded before the domain started")
if [ ${#why[@]} = 0 ]; then
    pass libvirt-gid-event
else
    fail libvirt-gid-event "${why[@]}"
fi
# libvirt's own words and the addresses it left on eth0, for the record
[ -n "$gid_lines" ] || gid_lines="(no lines about GID events in $logs/libvirtd.log)"
[ -n "$net_lines" ] || net_lines="(no addresses in $logs/host-net.txt)"
sed 's/^/#   libvirtd: /' <<<"$gid_lines"
sed 's/^ */#   eth0: /; s/ *$//' <<<"$net_lines"

# libvirt ran our QEMU with the pvrdma argument, the guest powered off by
# itself and libvirt stopped QEMU.
state=$(cat "$logs/domstate.txt" 2>/dev/null)
if [ "$state" = 'shut off (shutdown)' ] && grep -qF -- "$qemu" "$logs/qemu.log" 2>/dev/null &&
   grep -qF -- "$pvrdma_arg" "$logs/qemu.log" && grep -q 'shutting down, reason=shutdown' "$logs/qemu.log"; then
    pass libvirt-domain
else
    fail libvirt-domain "virsh domstate --reason: ${state:-?} (want: shut off (shutdown)); the domain log ends:" \
        "$(tail -n 5 "$logs/qemu.log" 2>/dev/null)" "$(cat "$logs/virsh.out" 2>/dev/null)"
fi
echo "#   virsh domstate --reason $domain: ${state:-?}"

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
echo "# logs: $logs (nested.log: the nested guest's console; libvirtd.log; qemu.log: libvirt's log of QEMU)"
finish
