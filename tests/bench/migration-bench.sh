#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench-migration: what live migration costs with the pvrdma device
# (figures, not a test).
#   1. the device's own state, in qtest mode (tests/qtest/
#      pvrdma-migration-test with PVRDMA_MIG_BENCH=1): the size of its
#      section in the stream, its save and load time (QEMU's trace
#      timestamps) and QEMU's downtime, for an idle device, 64 QPs with a
#      1 GiB MR (its pages in 2 MiB runs, or all apart), and every table
#      at the default limits; medians of 5 migrations each;
#   2. a real guest (lane 2's, 1 GiB, TCG): QEMU's total migration time and
#      downtime without the device, with the device idle and with the
#      device under ib_write_bw (tests/guest/migrate.py --bench).
# Usage: migration-bench.sh [BUILD_DIR]   (default build)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)

echo "== the device's state (qtest, medians of 5)"
PVRDMA_MIG_BENCH=1 QTEST_QEMU_BINARY=$build/qemu/qemu-system-x86_64 \
    "$build/qemu/tests/qtest/pvrdma-migration-test" \
    -p /x86_64/pvrdma/migration/bench 2>/dev/null | grep '^bench-migration:'
echo
echo "== a guest migrating (1 GiB, TCG; medians of 6 migrations)"
bash "$top/tests/guest/build-guest.sh" "$build/guest" >/dev/null
QEMU=$build/qemu/qemu-system-x86_64 GUEST_DIR=$build/guest \
    python3 "$top/tests/guest/migrate.py" --bench 2>/dev/null |
    grep -v '^\(PASS\|FAIL\|#\|migration\)'
