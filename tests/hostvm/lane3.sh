#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Lane 3 of `make check`, run INSIDE the host VM (one boot for both suites):
#   1. rdmacm-mux against rxe0's umad port with well-behaved and abusive
#      clients (tests/rdmacm-mux/run-tests.sh), last line "mux: ...";
#   2. the pvrdma qtests on ibdev=rxe0 (tests/hostvm/qtest-rxe.sh), last
#      lines "qtest-rxe: N skipped" and "qtest-rxe: N passed, N failed".
#
# Usage (from this machine):
#   tests/hostvm/run-hostvm.sh -- tests/hostvm/lane3.sh MUX_BINDIR [BUILD_DIR]
# MUX_BINDIR holds rdmacm-mux and mux-test (tests/rdmacm-mux/build.sh);
# BUILD_DIR is the QEMU build (default build/qemu).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
muxbin=${1:?usage: lane3.sh MUX_BINDIR [BUILD_DIR]}
build=${2:-$top/build/qemu}

echo "== mux: rdmacm-mux on rxe0 port 1"
bash "$top/tests/rdmacm-mux/run-tests.sh" "$muxbin"
echo "== qtest-rxe: pvrdma qtests with ibdev=rxe0"
bash "$here/qtest-rxe.sh" "$build"
# The counts are the result; the lane never fails on its own.
exit 0
