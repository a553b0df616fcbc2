#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lane 2 test driver (make check): boot the Debian guest with the unmodified
# vmw_pvrdma driver on our pvrdma device and assert on the guest's real
# output (console log sections written by tests/guest/init).
#
# Usage: check.sh [--no-pvrdma] [--log FILE] [--timeout SEC]
#   --no-pvrdma   vmxnet3-only boot (for a QEMU without the device): checks
#                 that the guest, its modules and its tools work
#   GUEST_PVRDMA=0 in the environment is the same as --no-pvrdma.
#
# Prints one line per test, "PASS: name" or "FAIL: name" (reasons follow on
# lines starting with "#"), and at the end "guest: N passed, N failed".
# Exits non-zero if any test failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
guest_dir=${GUEST_DIR:-$top/build/guest}

pvrdma=${GUEST_PVRDMA:-1}
log=$guest_dir/logs/check.log
timeout_s=${GUEST_TIMEOUT:-300}
while [ $# -gt 0 ]; do
    case $1 in
        --no-pvrdma) pvrdma=0; shift ;;
        --log) log=$2; shift 2 ;;
        --timeout) timeout_s=$2; shift 2 ;;
        -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "check.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

ip4=10.0.2.15
gid4=0000:0000:0000:0000:0000:ffff:0a00:020f     # ::ffff:10.0.2.15

npass=0
nfail=0
pass() { echo "PASS: $1"; npass=$((npass + 1)); }
fail() {
    echo "FAIL: $1"
    shift
    local l
    printf '%s\n' "$@" | while IFS= read -r l; do
        [ -n "$l" ] && printf '#   %s\n' "$l"
    done
    nfail=$((nfail + 1))
}
finish() {
    echo "guest: $npass passed, $nfail failed"
    [ "$nfail" = 0 ]
    exit $?
}

if [ "$pvrdma" = 1 ]; then
    tests=(boot modules net probe devinfo gid-roce-v2 reload device-errors kernel-clean shutdown)
    scenarios=probe,devinfo,gids,reload
    run_opts=()
else
    tests=(boot modules net smoke kernel-clean shutdown)
    scenarios=smoke
    run_opts=(--no-pvrdma)
fi

# --- boot the guest ---------------------------------------------------------
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
clean=$log.txt
tr -d '\r' <"$log" >"$clean"
qemu_rc=$(cat "$log.rc" 2>/dev/null || echo '?')

# section NAME: the raw output between GUEST-BEGIN: NAME and GUEST-END: NAME
section() {
    awk -v n="$1" '$0 == "GUEST-BEGIN: " n { on = 1; next }
                   $0 == "GUEST-END: " n { on = 0 } on' "$clean"
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
        echo "$s" | grep -q "^$m " || missing+=("$m")
    done
    if [ ${#missing[@]} = 0 ]; then pass modules; else
        fail modules "lsmod in the guest lacks: ${missing[*]}" "$(guest_result modules)"
    fi
}

t_net() {
    local s
    s=$(section net)
    if echo "$s" | grep -q '^netif [^ ]* driver=vmxnet3 operstate=up$' &&
       echo "$s" | grep -q "inet $ip4/"; then pass net; else
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
    if ! echo "$s" | grep -q '^pci 0000:00:10\.1 0x15ad:0x0820 driver=vmw_pvrdma$'; then
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
    errs=$(klog | grep -iE 'vmw_pvrdma|pvrdma|0000:00:10\.1' |
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
    elif ! echo "$s" | grep -q '^rmmod exit status 0;'; then
        fail reload "rmmod vmw_pvrdma failed:" "$(echo "$s" | grep '^rmmod')"
    elif echo "$s" | grep '^rmmod exit status' | grep -qw "$dev"; then
        fail reload "$dev still registered after rmmod:" "$(echo "$s" | grep '^rmmod')"
    elif ! echo "$s" | grep -q '^modprobe exit status 0;'; then
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
    elif ! echo "$s" | grep -q 'No IB devices found'; then
        fail smoke "ibv_devinfo did not run cleanly:" "$(echo "$s" | head -3)"
    elif echo "$s" | grep -q 'error while loading shared libraries'; then
        fail smoke "a tool misses libraries:" "$(echo "$s" | grep 'error while loading' | head -3)"
    elif ! echo "$s" | grep -q '^pci 0000:00:10\.0 0x15ad:0x07b0 driver=vmxnet3$'; then
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

for t in "${tests[@]}"; do
    "t_${t//-/_}"
done
echo "# console log: $log" >&2
finish
