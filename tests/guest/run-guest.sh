#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Boot the lane-2 test guest (build-guest.sh) under TCG with a vmxnet3 NIC
# at 00:10.0 and the pvrdma device at 00:10.1, capture the serial console
# to a log, and check that QEMU exits 0 after the guest powered off.
#
# Usage: run-guest.sh [options] [-- extra QEMU arguments]
#   --test LIST      scenarios for the guest's init (pvrdma.test=LIST);
#                    default probe,devinfo,gids,reload (smoke with --no-pvrdma)
#   --no-pvrdma      boot with vmxnet3 alone (no -device pvrdma)
#   --log FILE       console log (default build/guest/logs/<name>.log)
#   --timeout SEC    wall-clock limit for the whole boot (default 300)
#   --append ARGS    more kernel command line
#   --shell          open a shell on the guest's console before power-off
#                    (interactive; the terminal is the console)
#   --quiet          do not copy the console to stdout
#   --no-build       do not run build-guest.sh first
#
# Environment:
#   QEMU                QEMU binary (default build/qemu/qemu-system-x86_64);
#                       a qemu-system-aarch64 boots the arm64 guest
#                       (build-guest-arm64.sh) on -M virt, the two
#                       functions at the same address of its PCIe root bus
#   GUEST_DIR           guest artifacts (default build/guest, or
#                       build/guest-arm64 for qemu-system-aarch64)
#   PVRDMA_DEVICE_OPTS  extra properties for -device pvrdma (e.g. "foo=bar")
#   GUEST_NETDEV        the vmxnet3 back end, id n0
#                       (default "user,id=n0,restrict=on": no host network)
#   GUEST_MAC           vmxnet3 MAC (default 52:54:00:12:34:56)
#   GUEST_TIMEOUT       default for --timeout
#   GUEST_BOOT_TIMEOUT  seconds until the guest's init must have started
#                       (default 120); the run is aborted otherwise
#
# Exit status: 0 when QEMU exited 0 and the guest reached GUEST-DONE;
# 124 on timeout; QEMU's status if non-zero; 2 if QEMU exited 0 but the
# guest never finished its scenarios.  QEMU's own status is also written
# to <log>.rc.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
qemu=${QEMU:-$top/build/qemu/qemu-system-x86_64}
# The guest's architecture follows QEMU's target.
case ${qemu##*/} in
    qemu-system-aarch64*) arch=arm64 ;;
    *) arch=amd64 ;;
esac
if [ $arch = arm64 ]; then
    guest_dir=${GUEST_DIR:-$top/build/guest-arm64}
    builder=build-guest-arm64.sh
else
    guest_dir=${GUEST_DIR:-$top/build/guest}
    builder=build-guest.sh
fi
# shellcheck source=lib.sh
. "$here/lib.sh"

say() { printf '[guest] %s\n' "$*" >&2; }
die() { printf '[guest] error: %s\n' "$*" >&2; exit 1; }

tests=
pvrdma=1
log=
timeout_s=${GUEST_TIMEOUT:-300}
boot_timeout=${GUEST_BOOT_TIMEOUT:-120}
append=
shell=0
quiet=0
build=1
extra=()
while [ $# -gt 0 ]; do
    case $1 in
        --test) tests=$2; shift 2 ;;
        --test=*) tests=${1#*=}; shift ;;
        --no-pvrdma) pvrdma=0; shift ;;
        --log) log=$2; shift 2 ;;
        --log=*) log=${1#*=}; shift ;;
        --timeout) timeout_s=$2; shift 2 ;;
        --timeout=*) timeout_s=${1#*=}; shift ;;
        --append) append="$append $2"; shift 2 ;;
        --append=*) append="$append ${1#*=}"; shift ;;
        --shell) shell=1; shift ;;
        --quiet) quiet=1; shift ;;
        --no-build) build=0; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '/^# Usage/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
[ -n "$tests" ] || { if [ $pvrdma = 1 ]; then tests=probe,devinfo,gids,reload; else tests=smoke; fi; }
case $timeout_s in ''|*[!0-9]*) die "--timeout wants seconds, got '$timeout_s'" ;; esac

if [ $build = 1 ]; then
    "$here/$builder" "$guest_dir" >&2 || die "$builder failed"
fi
kernel=$guest_dir/vmlinuz
initrd=$guest_dir/initrd.img
[ -e "$kernel" ] || die "no guest kernel at $kernel (run tests/guest/$builder)"
[ -e "$initrd" ] || die "no guest initramfs at $initrd (run tests/guest/$builder)"

[ -x "$qemu" ] || die "no QEMU binary at $qemu (build QEMU first, or set QEMU=)"
if [ $arch = arm64 ]; then
    # virt loads the kernel's Image itself: no firmware.  cortex-a57: the
    # cheapest CPU to emulate that Debian's kernel runs on (-cpu max spends
    # TCG's time on pointer authentication).
    fw=()
    machine=(-M virt -cpu cortex-a57)
    console=ttyAMA0
else
    # Firmware search path for -kernel (tests/guest/lib.sh).
    qemu_fw_args "$qemu" || die "no firmware to boot -kernel with"
    machine=(-M pc)
    console=ttyS0
fi
if [ $pvrdma = 1 ]; then
    "$qemu" -device help 2>/dev/null | grep -q '"pvrdma"' ||
        die "$qemu has no pvrdma device (use --no-pvrdma for a vmxnet3-only boot)"
fi

if [ -z "$log" ]; then
    mkdir -p "$guest_dir/logs"
    log=$guest_dir/logs/$(echo "$tests" | tr ',' '-')$([ $pvrdma = 1 ] || echo -nodev).log
fi
mkdir -p "$(dirname "$log")"

netdev=${GUEST_NETDEV:-user,id=n0,restrict=on}
mac=${GUEST_MAC:-52:54:00:12:34:56}
devs=(-netdev "$netdev"
      -device "vmxnet3,addr=10.0,multifunction=on,netdev=n0,mac=$mac,romfile=")
if [ $pvrdma = 1 ]; then
    devs+=(-device "pvrdma,addr=10.1${PVRDMA_DEVICE_OPTS:+,$PVRDMA_DEVICE_OPTS}")
fi
cmdline="console=$console panic=-1 quiet pvrdma.test=$tests pvrdma.shell=$shell$append"

qemu_cmd=("$qemu" -accel tcg "${machine[@]}" -m 1G -smp 2
     -nodefaults -nographic -serial mon:stdio -no-reboot -name debug-threads=on
     "${fw[@]}"
     -kernel "$kernel" -initrd "$initrd" -append "$cmdline"
     "${devs[@]}" "${extra[@]}")
cmd=(timeout -k 10 "$timeout_s" "${qemu_cmd[@]}")
say "booting: ${cmd[*]}"
say "console log: $log"

start=$(date +%s)
abort=
set +e
if [ $shell = 1 ]; then
    # Interactive: keep stdin for the guest shell (Ctrl-A x quits QEMU).
    "${qemu_cmd[@]}" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
else
    "${cmd[@]}" </dev/null >"$log" 2>&1 &
    qpid=$!
    tpid=
    if [ $quiet = 0 ]; then
        tail -n +1 -f --pid="$qpid" "$log" &
        tpid=$!
    fi
    # Watch the console: give up early when the boot cannot succeed.
    while kill -0 "$qpid" 2>/dev/null; do
        sleep 1
        if grep -qE 'No bootable device|Boot failed: could not read the boot disk' "$log"; then
            abort="the firmware found nothing to boot: QEMU did not boot -kernel"
        elif [ $(( $(date +%s) - start )) -gt "$boot_timeout" ] && ! grep -q 'GUEST-BOOT:' "$log"; then
            abort="the guest's init did not start within ${boot_timeout}s"
        fi
        if [ -n "$abort" ]; then
            kill -TERM "$qpid" 2>/dev/null
            break
        fi
    done
    wait "$qpid"
    rc=$?
    [ -z "$tpid" ] || wait "$tpid"
fi
set -e
[ -z "$abort" ] || { echo "$rc" >"$log.rc"; die "$abort (log: $log)"; }
echo "$rc" >"$log.rc"
secs=$(( $(date +%s) - start ))

if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    say "error: timeout after ${timeout_s}s, QEMU killed (log: $log)"
    exit 124
fi
say "qemu exit status $rc after ${secs}s"
if [ "$rc" != 0 ]; then
    say "error: QEMU exited with status $rc (log: $log)"
    exit "$rc"
fi
if ! tr -d '\r' <"$log" | grep -q '^GUEST-DONE:'; then
    say "error: the guest never reached GUEST-DONE (kernel panic or init failure?); log: $log"
    exit 2
fi
tr -d '\r' <"$log" | grep '^GUEST-DONE:' | tail -1 >&2
exit 0
