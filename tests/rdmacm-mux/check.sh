#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build contrib/rdmacm-mux and run its tests in the lane-3 host VM against
# rxe0 (tests/hostvm/run-hostvm.sh).
#
# Usage: check.sh [--valgrind] [BUILDDIR]   (default build/rdmacm-mux)
# The last line is run-tests.sh's "mux: N passed, N failed"; the exit
# status is 0 when nothing failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
valgrind=0
while [ $# -gt 0 ]; do
    case $1 in
    --valgrind) valgrind=1; shift ;;
    -*) echo "usage: check.sh [--valgrind] [BUILDDIR]" >&2; exit 2 ;;
    *) break ;;
    esac
done
out=${1:-$top/build/rdmacm-mux}

bash "$here/build.sh" "$out" || { echo "mux: 0 passed, 1 failed"; exit 1; }
[ "$valgrind" = 0 ] || bash "$top/scripts/apt-setup.sh" valgrind >/dev/null
cd "$top" &&
MUX_VALGRIND=$valgrind HOSTVM_ENV="MUX_VALGRIND" \
    bash tests/hostvm/run-hostvm.sh --timeout 900 -- \
    tests/rdmacm-mux/run-tests.sh "$out"
rc=$?
# A VM that never ran the tests printed no summary line.
[ "$rc" -lt 124 ] || echo "mux: 0 passed, 1 failed"
exit "$rc"
