#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Turn a fuzzer input (a crash) into things a person can debug and a qtest
# can keep:
#   <out>.min    the input minimized by libFuzzer (-minimize_crash), when
#                it still crashes
#   <out>.ops    the operations of the input (PVRDMA_FUZZ_TRACE)
#   <out>.trace  the qtest commands the target sent for it
#   <out>.sh     the trace piped into a qemu-system-x86_64 (default: the
#                ASan build of build-qemu.sh), to reproduce without the
#                fuzzer
#   <out>.c      a C qtest of the trace (QEMU's output_reproducer.py), the
#                raw material of a named regression test
# Two things of an input are not qtest commands and are missing from the
# trace: a link change (QMP set_link) and device_del before an unplug.
#
#   repro.sh <project-dir> <fuzz-build-dir> <input> <out> [target]
set -euo pipefail

top=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)
input=$3
out=$4
target=${5:-pvrdma}
bin=$build/qemu/qemu-fuzz-x86_64
qemu=${QEMU:-$top/build/qemu-asan/qemu-system-x86_64}

export ASAN_OPTIONS=abort_on_error=1:detect_leaks=0:symbolize=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export LLVM_PROFILE_FILE=/dev/null

mkdir -p "$(dirname "$out")"
cp "$input" "$out.min"
if ! "$bin" --fuzz-target="$target" -runs=1 "$input" > "$out.log" 2>&1; then
    "$bin" --fuzz-target="$target" -minimize_crash=1 -runs=2000 \
        -exact_artifact_path="$out.min" "$input" >> "$out.log" 2>&1 || true
fi
PVRDMA_FUZZ_TRACE=1 "$bin" --fuzz-target="$target" -runs=1 "$out.min" 2>&1 |
    grep '^pvrdma-fuzz:' > "$out.ops" || true
# Every qtest command after the machine is up; the failed device_add of
# the target's start-up are not commands.
FUZZ_SERIALIZE_QTEST=1 QTEST_LOG=1 "$bin" --fuzz-target="$target" -runs=1 \
    "$out.min" > "$out.qtestlog" 2>&1 || true
sed -n 's/^\[R +[0-9.]*\] //p' "$out.qtestlog" > "$out.trace"
args=$(sed -n 's/^Starting .* with Arguments: //p' "$out.qtestlog" |
       sed 's/ -qtest \/dev\/null.*//')
rm -f "$out.qtestlog"
{
    echo "#!/bin/sh"
    echo "# $(basename "$input") on $target, as qtest commands"
    echo "exec $qemu $args -qtest stdio < $(basename "$out").trace"
} > "$out.sh"
chmod +x "$out.sh"
QEMU_PATH=$qemu QEMU_ARGS="$args" python3 \
    "$build/qemu-src/scripts/oss-fuzz/output_reproducer.py" \
    -name "test_$(basename "$out" | tr -c 'a-zA-Z0-9\n' _)" \
    -owner "the pvrdma project" "$out.trace" > "$out.c"
echo "$out.{min,ops,trace,sh,c}: $(wc -l < "$out.trace") qtest commands"
