#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Run one command inside the lane-3 host VM: a TCG VM with Debian's kernel,
# this machine's root read-only over virtio-9p, and Linux Soft-RoCE rxe0 on
# its virtio-net eth0 (10.0.2.15/24 and 10.0.2.16/24, slirp).  See README.md.
#
# Usage: run-hostvm.sh [options] -- COMMAND [ARG...]
#   --timeout SEC   wall-clock limit for the whole VM (default 600)
#   --mem MiB       VM memory (default 2048)
#   --smp N         VM CPUs (default 2)
#   --log FILE      console log (default <job dir>/console.log)
#   --no-build      do not run build-hostvm.sh first
#   --quiet         no progress lines
#
# The command runs chrooted into the VM's view of this machine's root, as
# root, in the caller's working directory, with stdin /dev/null; its stdout
# and stderr (together) are copied to this script's stdout as they come.
# Writable inside the VM: /run, /tmp, /var/tmp, /dev/shm (tmpfs, empty) and
# build/hostvm/out (shared with this machine: the only place where files
# the command writes outlive the VM).  Everything else is read-only.
#
# Environment:
#   HOSTVM_ENV           names of variables to pass to the command, e.g.
#                        HOSTVM_ENV="QTEST_QEMU_BINARY PVRDMA_IBDEV"
#   HOSTVM_QEMU          QEMU that runs the VM
#                        (default build/qemu/qemu-system-x86_64)
#   HOSTVM_DIR           build-hostvm.sh's output (default build/hostvm)
#   HOSTVM_BOOT_TIMEOUT  seconds until the command must have started
#                        (default 300); the VM is stopped otherwise
#   HOSTVM_BUILD_LOCK    wait for this lock before starting QEMU (default
#                        /tmp/pvrdma-build.lock, held while QEMU is rebuilt;
#                        empty: do not wait)
#
# Exit status: the command's; 124 when --timeout ran out; 125 when the VM
# never reached the command (boot, module, 9p, network or rxe0 failure).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=../guest/lib.sh
. "$top/tests/guest/lib.sh"
qemu=${HOSTVM_QEMU:-$top/build/qemu/qemu-system-x86_64}
dir=${HOSTVM_DIR:-$top/build/hostvm}
boot_timeout=${HOSTVM_BOOT_TIMEOUT:-300}
build_lock=${HOSTVM_BUILD_LOCK-/tmp/pvrdma-build.lock}

quiet=0
say() { [ $quiet = 1 ] || printf '[hostvm] %s\n' "$*" >&2; }
err() { printf '[hostvm] %s\n' "$*" >&2; }
die() { printf '[hostvm] error: %s\n' "$*" >&2; exit 125; }

timeout_s=600
mem=2048
smp=2
log=
build=1
while [ $# -gt 0 ]; do
    case $1 in
        --timeout) timeout_s=$2; shift 2 ;;
        --mem) mem=$2; shift 2 ;;
        --smp) smp=$2; shift 2 ;;
        --log) log=$2; shift 2 ;;
        --no-build) build=0; shift ;;
        --quiet) quiet=1; shift ;;
        --) shift; break ;;
        -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help; the command follows --)" ;;
    esac
done
[ $# -gt 0 ] || die "no command (usage: run-hostvm.sh [options] -- COMMAND [ARG...])"
for v in "$timeout_s" "$mem" "$smp" "$boot_timeout"; do
    case $v in ''|*[!0-9]*) die "not a number: '$v'" ;; esac
done

if [ $build = 1 ]; then
    mkdir -p "$dir"
    "$here/build-hostvm.sh" "$dir" >"$dir/build.log" 2>&1 ||
        { cat "$dir/build.log" >&2; die "build-hostvm.sh failed"; }
fi
kernel=$dir/vmlinuz
initrd=$dir/initrd.img
[ -e "$kernel" ] && [ -e "$initrd" ] || die "no $kernel or $initrd (run tests/hostvm/build-hostvm.sh)"
[ -x "$qemu" ] || die "no QEMU binary at $qemu (build QEMU first, or set HOSTVM_QEMU=)"
qemu_fw_args "$qemu" || die "no firmware to boot -kernel with"

# The job: what the VM's init runs, in the writable export.
out=$dir/out
job=$out/jobs/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$job" || die "cannot create $job"
out=$(cd "$out" && pwd)
job=$(cd "$job" && pwd)
# keep the last 20 jobs
ls -1d "$out"/jobs/*/ 2>/dev/null | head -n -20 | xargs -r rm -rf
{
    echo 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    echo 'export HOME=/root LC_ALL=C.UTF-8'
    for v in ${HOSTVM_ENV:-}; do
        case $v in [A-Za-z_]*) ;; *) die "HOSTVM_ENV: '$v' is not a variable name" ;; esac
        [ -n "${!v+set}" ] || { err "warning: HOSTVM_ENV names $v, which is not set"; continue; }
        printf 'export %s=%q\n' "$v" "${!v}"
    done
} >"$job/env"
{
    echo ". $(printf %q "$job/env")"
    printf 'cd %q || { echo "[hostvm] cannot cd to %q in the VM"; exit 125; }\n' "$PWD" "$PWD"
    printf 'exec'
    printf ' %q' "$@"
    echo
} >"$job/run.sh"
printf "%s\n" "${*@Q}" >"$job/cmdline"
: >"$job/output"
[ -n "$log" ] || log=$job/console.log
mkdir -p "$(dirname "$log")"

cmdline="console=ttyS0 panic=-1 quiet hostvm.job=$job hostvm.out=$out hostvm.top=$top"
qemu_cmd=("$qemu" -accel tcg -M pc -m "$mem" -smp "$smp"
    -nodefaults -nographic -serial stdio -monitor none -no-reboot
    "${fw[@]}"
    -kernel "$kernel" -initrd "$initrd" -append "$cmdline"
    -virtfs local,path=/,mount_tag=root,security_model=none,readonly=on,multidevs=remap
    -virtfs "local,path=$out,mount_tag=out,security_model=none,multidevs=remap"
    -netdev user,id=n0 -device virtio-net-pci,netdev=n0,romfile=)

if [ -n "$build_lock" ] && [ -e "$build_lock" ] && ! flock -n "$build_lock" true; then
    say "waiting for $build_lock (QEMU is being rebuilt)"
    flock "$build_lock" true
fi
say "booting (${mem} MiB, $smp CPUs, timeout ${timeout_s}s): ${*@Q}"
say "console log: $log"
start=$(date +%s)
: >"$log"
timeout -k 10 "$timeout_s" "${qemu_cmd[@]}" </dev/null >"$log" 2>&1 &
qpid=$!
# progress lines from the console, the command's output as it comes
ppid_=
if [ $quiet = 0 ]; then
    tail -n +1 -f --pid=$qpid "$log" 2>/dev/null | sed -un 's/\r$//; s/^.*\(\[hostvm\] \)/\1/p' >&2 &
    ppid_=$!
fi
tail -n +1 -f --pid=$qpid "$job/output" 2>/dev/null &
opid=$!
abort=
while kill -0 $qpid 2>/dev/null; do
    sleep 1
    if [ ! -e "$job/started" ] && [ $(( $(date +%s) - start )) -gt "$boot_timeout" ]; then
        abort="the command did not start within ${boot_timeout}s"
        kill -TERM $qpid 2>/dev/null
        break
    fi
done
wait $qpid
qrc=$?
wait $opid 2>/dev/null
[ -z "$ppid_" ] || wait $ppid_ 2>/dev/null
secs=$(( $(date +%s) - start ))

if [ -n "$abort" ]; then
    err "error: $abort; stopped the VM (console log: $log)"
    exit 125
fi
if [ $qrc = 124 ] || [ $qrc = 137 ]; then
    if [ -e "$job/started" ]; then
        err "error: timeout after ${timeout_s}s, the command was still running (console log: $log)"
    else
        err "error: timeout after ${timeout_s}s, before the command started (console log: $log)"
    fi
    exit 124
fi
if [ -s "$job/rc" ]; then
    rc=$(cat "$job/rc")
    say "exit status $rc; VM ran ${secs}s (QEMU exit status $qrc)"
    exit "$rc"
fi
if [ -s "$job/setup-failed" ]; then
    err "error: the VM never reached the command: $(tr '\n' ' ' <"$job/setup-failed")(console log: $log)"
else
    err "error: the VM stopped without running the command (QEMU exit status $qrc); console ends:"
    tr -d '\r' <"$log" | grep -v '^$' | tail -n 15 | sed 's/^/[hostvm]   /' >&2
fi
exit 125
