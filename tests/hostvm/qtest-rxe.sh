#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Test lane 3: the pvrdma qtests with the ibverbs backend on Linux
# Soft-RoCE.  Runs INSIDE the host VM, whose rxe0 sits on eth0 with
# 10.0.2.15 and 10.0.2.16 (the GIDs the tests bind), ib_umad loaded and
# ib_cm not.  From this machine:
#
#   tests/hostvm/run-hostvm.sh -- tests/hostvm/qtest-rxe.sh
#
# It starts rdmacm-mux on the port, runs each qtest binary in TAP mode with
# PVRDMA_QTEST_IBDEV/NETDEV/MUX set (tests/qtest/pvrdma-qtest.h), copies
# the TAP lines to stdout and prints, last,
#   qtest-rxe: N skipped
#   qtest-rxe: N passed, N failed
# Skipped tests count as neither.  Exit status 1 if anything failed.
#
# Usage: qtest-rxe.sh [BUILD_DIR]        (default build/qemu)
#
# Environment:
#   QTEST_RXE_TESTS   test binaries under BUILD_DIR/tests/qtest
#                     (default "pvrdma-datapath-test pvrdma-test
#                     pvrdma-migration-test")
#   QTEST_RXE_DEV, QTEST_RXE_NETDEV   the port (rxe0, eth0)
#   QTEST_RXE_MUX     the rdmacm-mux binary (default: the QEMU build's, else
#                     build/rdmacm-mux/rdmacm-mux from tests/rdmacm-mux/build.sh)
#   QTEST_RXE_ARGS    more arguments for every binary, e.g. "-p /path"
#   QTEST_RXE_LOG     directory for each binary's whole output (with QEMU's
#                     stderr and traces) and the daemon's log (default
#                     build/hostvm/out/qtest-rxe, which outlives the VM)
#   QTEST_RXE_TIMEOUT seconds per binary (default 1200)
#   QTEST_TRACE       QEMU trace patterns (libqtest), e.g. 'rdma_ibv*'
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$top/build/qemu}" && pwd) || exit 2
dev=${QTEST_RXE_DEV:-rxe0}
netdev=${QTEST_RXE_NETDEV:-eth0}
tests=${QTEST_RXE_TESTS:-pvrdma-datapath-test pvrdma-test pvrdma-migration-test}
logdir=${QTEST_RXE_LOG:-$top/build/hostvm/out/qtest-rxe}
limit=${QTEST_RXE_TIMEOUT:-1200}
qemu=$build/qemu-system-x86_64
mux=${QTEST_RXE_MUX:-$build/contrib/rdmacm-mux/rdmacm-mux}
[ -x "$mux" ] || [ -n "${QTEST_RXE_MUX:-}" ] || mux=$top/build/rdmacm-mux/rdmacm-mux

say() { printf '# qtest-rxe: %s\n' "$*"; }
die() {
    printf '# qtest-rxe: error: %s\n' "$*"
    echo "qtest-rxe: 0 skipped"
    echo "qtest-rxe: 0 passed, 1 failed"
    exit 1
}

[ -d "/sys/class/infiniband/$dev" ] ||
    die "no RDMA device $dev (run me inside tests/hostvm/run-hostvm.sh)"
[ -x "$qemu" ] || die "no $qemu"
[ -x "$mux" ] || die "no rdmacm-mux at $mux (build it in QEMU, or with" \
    "tests/rdmacm-mux/build.sh build/rdmacm-mux)"
if ! mkdir -p "$logdir"; then
    die "cannot create $logdir"
fi
rm -f "$logdir"/*.log

work=$(mktemp -d /tmp/qtest-rxe.XXXXXX) || die "mktemp failed"
sock=$work/mux-$dev-1
muxpid=
finish() {
    if [ -n "$muxpid" ] && kill -0 "$muxpid" 2>/dev/null; then
        kill -TERM "$muxpid" 2>/dev/null
        wait "$muxpid" 2>/dev/null
    fi
    rm -rf "$work"
}
trap finish EXIT

"$mux" -d "$dev" -p 1 -s "$work/mux" -v 2>"$logdir/rdmacm-mux.log" &
muxpid=$!
for _ in $(seq 100); do
    [ -S "$sock" ] && break
    kill -0 "$muxpid" 2>/dev/null || break
    sleep 0.1
done
[ -S "$sock" ] || die "rdmacm-mux did not start: $(tail -n 3 "$logdir/rdmacm-mux.log")"

export QTEST_QEMU_BINARY=$qemu
export PVRDMA_QTEST_IBDEV=$dev PVRDMA_QTEST_NETDEV=$netdev PVRDMA_QTEST_MUX=$sock
passed=0
failed=0
skipped=0
for t in $tests; do
    bin=$build/tests/qtest/$t
    if [ ! -x "$bin" ]; then
        say "no $bin"
        failed=$((failed + 1))
        continue
    fi
    say "$t (full output: $logdir/$t.log)"
    # Test and QEMU output in one file, in order; the TAP lines on stdout.
    # shellcheck disable=SC2086
    timeout -k 10 "$limit" stdbuf -oL -eL "$bin" --tap -k ${QTEST_RXE_ARGS:-} \
        2>&1 | tee "$logdir/$t.log" |
        grep --line-buffered -E '^(ok |not ok |1\.\.|# )'
    rc=${PIPESTATUS[0]}
    p=$(grep -E '^ok ' "$logdir/$t.log" | grep -vcE '# *SKIP')
    s=$(grep -cE '^ok .*# *SKIP' "$logdir/$t.log")
    f=$(grep -cE '^not ok ' "$logdir/$t.log")
    # A crash, an abort or a hang ends the TAP stream early.
    if [ "$rc" != 0 ] && [ "$f" = 0 ]; then
        if [ "$rc" = 124 ]; then
            say "$t did not finish within ${limit}s"
        else
            say "$t exited with status $rc"
        fi
        tail -n 20 "$logdir/$t.log" | sed 's/^/#   /'
        f=1
    fi
    passed=$((passed + p))
    skipped=$((skipped + s))
    failed=$((failed + f))
done
echo "qtest-rxe: $skipped skipped"
echo "qtest-rxe: $passed passed, $failed failed"
[ "$failed" = 0 ]
