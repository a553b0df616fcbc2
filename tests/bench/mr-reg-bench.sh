#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make bench-mr (also run by make bench; a benchmark, not a test: it prints
# figures measured in one run and asserts nothing about them).
#
# Builds tests/bench/mr-reg-bench.c with hw/rdma/ibverbs/rdma_ibv_map.c
# (outside QEMU: tests/include/qemu/osdep.h stands in for QEMU's) and runs
# it on this machine: what it costs to turn a guest MR's page list into the
# one contiguous host range ibv_reg_mr() needs, for 1 GiB in four layouts,
# next to the removed QEMU pvrdma's one-mremap-per-page method measured in
# the same run, and the target (<= 50 ms per GiB).
#
# This machine's kernel has no RDMA, so ibv_reg_mr() itself is timed in the
# lane-3 host VM (tests/hostvm/run-hostvm.sh: TCG, Debian's kernel, rxe0)
# when that and a QEMU binary are there: host kernel pinning under TCG,
# printed apart, not device-side time.
#
# Usage: mr-reg-bench.sh [--quick] [--no-hostvm] [--out DIR] [-- BENCH-ARGS]
#   --quick      512 MiB MRs, fewer repetitions (a smoke run)
#   --no-hostvm  skip the ibv_reg_mr run in the host VM
#   --out DIR    binary and results (default build/bench)
#   BENCH-ARGS   passed to mr-reg-bench on this machine (see its --help)
# Environment: CC (cc); HOSTVM_QEMU as for run-hostvm.sh.
#
# Output: stdout, build/bench/mr-reg.txt and build/bench/mr-reg-hostvm.txt.
# Exit status: 0 when the table was printed (whatever the figures say; a
# failed host VM run is reported, not fatal), 1 when it could not be built
# or run.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/build/bench
quick=0
hostvm=1
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --quick) quick=1; shift ;;
        --no-hostvm) hostvm=0; shift ;;
        --out) out=$2; shift 2 ;;
        --) shift; args+=("$@"); break ;;
        -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "mr-reg-bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd)

say() { printf '[bench-mr] %s\n' "$*" >&2; }

# --- build --------------------------------------------------------------------
have() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
missing=()
for p in pkg-config libglib2.0-dev libibverbs-dev; do
    have "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    bash "$top/scripts/apt-setup.sh" "${missing[@]}" >&2 ||
        say "warning: could not install ${missing[*]}"
fi
cc=${CC:-cc}
if ! glib=$(pkg-config --cflags --libs glib-2.0 2>/dev/null); then
    say "error: glib-2.0 development files missing"
    exit 1
fi
ibv=()
if pkg-config --exists libibverbs 2>/dev/null; then
    # shellcheck disable=SC2207
    ibv=(-DHAVE_IBVERBS $(pkg-config --cflags --libs libibverbs))
else
    say "note: no libibverbs development files: ibv_reg_mr is not timed"
fi
bin=$out/mr-reg-bench
# shellcheck disable=SC2086
if ! "$cc" -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter \
        -I"$top/tests/include" -I"$top/hw/rdma/ibverbs" \
        -o "$bin" "$here/mr-reg-bench.c" "$top/hw/rdma/ibverbs/rdma_ibv_map.c" \
        $glib "${ibv[@]}" 2>"$out/mr-reg-bench.cc.log"; then
    cat "$out/mr-reg-bench.cc.log" >&2
    say "error: could not compile mr-reg-bench.c with $cc"
    exit 1
fi

# --- this machine -----------------------------------------------------------
if [ $quick = 1 ]; then
    args=(--ram 640 --size 512 --scatter 64 --reps 3 --old-reps 1 "${args[@]}")
fi
say "running $bin ${args[*]}"
"$bin" "${args[@]}" >"$out/mr-reg.txt"
rc=$?
cat "$out/mr-reg.txt"
if [ $rc != 0 ]; then
    say "error: mr-reg-bench failed (status $rc)"
    exit 1
fi

# --- ibv_reg_mr in the host VM ----------------------------------------------
[ $hostvm = 1 ] || exit 0
echo
run_hostvm=$top/tests/hostvm/run-hostvm.sh
qemu=${HOSTVM_QEMU:-$top/build/qemu/qemu-system-x86_64}
if [ ${#ibv[@]} = 0 ]; then
    echo "ibv_reg_mr in the host VM: skipped (built without libibverbs)"
    exit 0
elif [ ! -x "$run_hostvm" ]; then
    echo "ibv_reg_mr in the host VM: skipped (no tests/hostvm/run-hostvm.sh)"
    exit 0
elif [ ! -x "$qemu" ]; then
    echo "ibv_reg_mr in the host VM: skipped (no QEMU at $qemu: run make first)"
    exit 0
fi
# 1 GiB MRs in 1.25 GiB of "guest RAM", pinned by rxe: the VM gets 3 GiB.
size=1024 ram=1280
[ $quick = 0 ] || { size=512 ram=640; }
say "ibv_reg_mr: $bin in the host VM (TCG, rxe0); console log $out/mr-reg-hostvm.log"
"$run_hostvm" --quiet --mem 3072 --timeout 900 --log "$out/mr-reg-hostvm.log" -- \
    "$bin" --ibv-only --ram $ram --size $size --where "under TCG in the host VM" \
    >"$out/mr-reg-hostvm.txt" 2>&1
rc=$?
if [ $rc = 0 ]; then
    echo "--- in the lane-3 host VM (tests/hostvm, TCG, Linux Soft-RoCE rxe0):"
    cat "$out/mr-reg-hostvm.txt"
else
    tail -5 "$out/mr-reg-hostvm.txt"
    echo "ibv_reg_mr in the host VM: FAILED (run-hostvm.sh status $rc; see $out/mr-reg-hostvm.txt and $out/mr-reg-hostvm.log)"
fi
exit 0
