#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Unit lane: modules of hw/rdma that need only glib, libc and zlib, compiled
# outside QEMU's build (tests/include/qemu/osdep.h stands in for QEMU's)
# together with their GLib test programs; then tests/guest/check-selftest.sh
# (the guest lanes' verdicts on console logs it writes).  Prints each
# program's TAP and a last line "unit: N passed, N failed" (a test that a
# crashing program never reached counts as failed).
#
# Usage: run.sh [OUT-DIR]   (default build/unit)
# Environment: CC (cc); RDMA_UNIT_VECTORS, the directory of the pcap
# captures rdma-soft-wire-test replays (default tests/unit/vectors).
# Exit status: 0 when every test passed, 1 otherwise.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=${1:-$top/build/unit}
cc=${CC:-cc}
mkdir -p "$out"

say() { printf '[unit] %s\n' "$*" >&2; }

# program name, then the hw/rdma sources it tests (the test's include
# directory is the first source's)
programs=(
    "rdma-ibv-map-test hw/rdma/ibverbs/rdma_ibv_map.c"
    "rdma-soft-opcode-test hw/rdma/soft/rdma_soft_opcode.c"
    "rdma-soft-wire-test hw/rdma/soft/rdma_soft_wire.c hw/rdma/soft/rdma_soft_crc.c hw/rdma/soft/rdma_soft_opcode.c"
)

if ! glib=$(pkg-config --cflags --libs glib-2.0 2>/dev/null); then
    say "error: glib-2.0 development files missing (apt-get install libglib2.0-dev)"
    echo "unit: 0 passed, 1 failed"
    exit 1
fi

passed=0 failed=0
for p in "${programs[@]}"; do
    read -r name srcs <<<"$p"
    first=${srcs%% *}
    # shellcheck disable=SC2086
    if ! "$cc" -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror \
            -I"$top/tests/include" -I"$top/$(dirname "$first")" -I"$top" \
            -o "$out/$name" "$here/$name.c" $(printf "$top/%s " $srcs) \
            $glib -lz 2>"$out/$name.cc.log"; then
        cat "$out/$name.cc.log" >&2
        say "error: $name does not compile"
        echo "not ok - $name: does not compile"
        failed=$((failed + 1))
        continue
    fi
    "$out/$name" --tap >"$out/$name.tap" 2>"$out/$name.err"
    rc=$?
    cat "$out/$name.tap"
    ok=$(grep -c '^ok ' "$out/$name.tap")
    bad=$(grep -c '^not ok ' "$out/$name.tap")
    plan=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$out/$name.tap" | head -1)
    missing=0
    if [ -n "$plan" ] && [ $((ok + bad)) -lt "$plan" ]; then
        missing=$((plan - ok - bad))
    fi
    if [ $rc != 0 ] && [ $((bad + missing)) = 0 ]; then
        missing=1     # crashed before or after its plan
    fi
    if [ $rc != 0 ]; then
        tail -5 "$out/$name.err" >&2
        say "$name exited with status $rc ($missing test(s) not reached)"
    fi
    passed=$((passed + ok))
    failed=$((failed + bad + missing))
done
# check.sh's verdicts on console logs its self-test writes (no guest, no
# build: a known defect of a guest program excused, and only that one)
rm -rf "$out/check-selftest"
"$top/tests/guest/check-selftest.sh" "$out/check-selftest" >"$out/check-selftest.tap" 2>&1
rc=$?
cat "$out/check-selftest.tap"
ok=$(grep -c '^ok ' "$out/check-selftest.tap")
bad=$(grep -c '^not ok ' "$out/check-selftest.tap")
[ $rc = 0 ] || [ "$bad" != 0 ] || bad=1
passed=$((passed + ok))
failed=$((failed + bad))

echo "unit: $passed passed, $failed failed"
[ $failed = 0 ]
