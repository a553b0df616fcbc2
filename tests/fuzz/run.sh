#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Fuzz the pvrdma device with libFuzzer (make fuzz), or replay the
# committed inputs and fuzz briefly (the fuzz lane of make check).
#
#   run.sh <project-dir> <build-dir> [--seconds N] [--replay] [--merge]
#          [--seeds] [--no-build] [--target T]...
#
#   --seconds N  fuzz for N seconds on one core (default 600; 0: none),
#                shared out between the targets
#   --target T   pvrdma (pc), pvrdma-q35 (behind a PCIe root port) or
#                pvrdma-migrate (pc, live objects, migrations); default all
#   --replay     first run every committed input once: tests/fuzz/seeds,
#                tests/fuzz/corpus and tests/fuzz/crashes/*/ (fixed bugs)
#   --merge      afterwards minimize the committed corpus plus this build's
#                finds into tests/fuzz/corpus (libFuzzer -merge=1)
#   --seeds      regenerate tests/fuzz/seeds with gen-seeds.c first
#   --no-build   use the fuzzer already built in <build-dir>
#
# The fuzzer is built by scripts/build-fuzz.sh in <build-dir> (its own QEMU
# tree).  New inputs go to <build-dir>/corpus, crashes, hangs and OOMs to
# <build-dir>/crashes; a crash does not end the session, the fuzzer starts
# again for the time left (at most 10 times).  At the end it prints the
# executions, crashes (with their files), corpus size, the line coverage of
# hw/rdma that all inputs reach (from the line counters the build has in
# hw/rdma), the fuzzing time of all sessions in <build-dir>/history, and
# "fuzz: N passed, N failed": one test per target whose replay of every
# committed input passed and one per fuzzing session without a crash;
# each input that fails its replay and each crash found is a failure.
set -euo pipefail

top=$(cd "$1" && pwd)
mkdir -p "$2"
build=$(cd "$2" && pwd)
shift 2
seconds=600
replay=0
merge=0
seeds=0
do_build=1
targets=()
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) seconds=$2; shift ;;
    --target) targets+=("$2"); shift ;;
    --replay) replay=1 ;;
    --merge) merge=1 ;;
    --seeds) seeds=1 ;;
    --no-build) do_build=0 ;;
    *) echo "usage: run.sh <project-dir> <build-dir> [--seconds N]" \
            "[--replay] [--merge] [--seeds] [--no-build] [--target T]" >&2
       exit 2 ;;
    esac
    shift
done
[ ${#targets[@]} -gt 0 ] || targets=(pvrdma pvrdma-q35 pvrdma-migrate)

llvm=${PVRDMA_FUZZ_LLVM:-14}
bin=$build/qemu/qemu-fuzz-x86_64
fz=$top/tests/fuzz
work=$build/corpus
crashes=$build/crashes
logs=$build/logs
prof=$build/prof
pass=0
fail=0

say() { printf '[fuzz] %s\n' "$*"; }

mkdir -p "$work" "$crashes" "$logs" "$prof"
rm -f "$prof"/replay-*.profraw

if [ "$do_build" = 1 ]; then
    bash "$top/scripts/build-fuzz.sh" "$top" "$build"
fi
[ -x "$bin" ] || { say "error: $bin is not built"; exit 1; }

if [ "$seeds" = 1 ]; then
    cc -O1 -Wall -I"$top" -o "$build/gen-seeds" "$fz/gen-seeds.c"
    rm -f "$fz"/seeds/*
    mkdir -p "$fz/seeds"
    "$build/gen-seeds" "$fz/seeds"
    say "seeds: $(ls "$fz/seeds" | wc -l) inputs in tests/fuzz/seeds"
fi

# Sanitizers stop at the first report; UBSan's too (it would go on).
export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1:symbolize=1
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
export LSAN_OPTIONS=print_suppressions=0
export LLVM_PROFILE_FILE=$prof/last.profraw

# The committed inputs: seeds, the minimized corpus, fixed crashes.
committed() {
    local d
    for d in "$fz/seeds" "$fz/corpus"; do
        [ -d "$d" ] && find "$d" -maxdepth 1 -type f ! -name '*.*' | sort
    done
    if [ -d "$fz/crashes" ]; then
        find "$fz/crashes" -type f -name '*.bin' | sort
    fi
}

# Run each input once on target $1; a crash fails that input and the rest
# go on in a new process.  Leaks are looked for when the process ends.
replay_inputs() {
    local target=$1 log=$logs/replay-$1.log files=() rest n last rc
    local failed_before=$fail ran=0
    mapfile -t files < <(committed)
    : > "$log"
    say "replaying ${#files[@]} committed inputs on $target"
    while [ ${#files[@]} -gt 0 ]; do
        rc=0
        # Its line counters serve coverage() (one process per %p).
        LLVM_PROFILE_FILE=$prof/replay-$target-%p.profraw \
        "$bin" --fuzz-target="$target" -timeout=60 \
            -artifact_prefix="$build/replay-" "${files[@]}" \
            > "$log.part" 2>&1 || rc=$?
        cat "$log.part" >> "$log"
        n=$(grep -c '^Executed ' "$log.part" || true)
        ran=$((ran + n))
        if [ "$rc" = 0 ]; then
            break
        fi
        last=$(grep '^Running: ' "$log.part" | tail -n 1 | sed 's/^Running: //')
        if [ -n "$last" ] && ! grep -qF "Executed $last " "$log.part"; then
            say "FAIL replay on $target: ${last#"$top"/}"
            grep -E -A14 'ERROR: |runtime error|assertion|Assertion' \
                "$log.part" | head -30 | sed 's/^/    /'
            fail=$((fail + 1))
            rest=()
            for f in "${files[@]:$((n + 1))}"; do rest+=("$f"); done
            files=("${rest[@]+"${rest[@]}"}")
        else
            # Every input ran: what failed is the check at exit (leaks).
            say "FAIL replay on $target: report at exit"
            grep -E -A14 'ERROR: ' "$log.part" | head -30 | sed 's/^/    /'
            fail=$((fail + 1))
            break
        fi
    done
    rm -f "$log.part"
    say "replay on $target: $ran inputs ran clean," \
        "$((fail - failed_before)) failed"
    if [ "$fail" -eq "$failed_before" ]; then
        pass=$((pass + 1))
    fi
}

execs_total=0
crash_files=()

# Fuzz target $1 for $2 seconds; after a crash, again for the time left
# (libFuzzer stops at one).
fuzz() {
    local target=$1 secs=$2 left rc log runs=0 before after f
    local start=$(date +%s) end=$(( $(date +%s) + $2 )) execs=0 found=0
    local -a dirs=("$work" "$fz/seeds")
    [ -d "$fz/corpus" ] && dirs+=("$fz/corpus")
    log=$logs/fuzz-$target-$(date +%Y%m%d-%H%M%S).log
    say "fuzzing $target for $secs s on one core, log $log"
    while left=$(( end - $(date +%s) ))
          [ "$left" -gt 5 ] && [ $runs -lt 10 ]; do
        runs=$((runs + 1))
        before=$(ls "$crashes" | sort)
        rc=0
        # Leaks are looked for by the replays (per input they cost 10x).
        "$bin" --fuzz-target="$target" -max_total_time="$left" -timeout=30 \
            -rss_limit_mb=3072 -max_len=4096 -detect_leaks=0 \
            -print_final_stats=1 -artifact_prefix="$crashes/" \
            "${dirs[@]}" > "$log.part" 2>&1 || rc=$?
        cat "$log.part" >> "$log"
        execs=$((execs + $(awk '
            /^stat::number_of_executed_units:/ { n = $2 }
            END { print n + 0 }' "$log.part")))
        rm -f "$log.part"
        after=$(ls "$crashes" | sort)
        for f in $(comm -13 <(echo "$before") <(echo "$after")); do
            crash_files+=("$crashes/$f ($target)")
            found=$((found + 1))
        done
        [ "$rc" = 0 ] && break
        say "the fuzzer stopped (exit $rc), see $log"
    done
    execs_total=$((execs_total + execs))
    fuzz_seconds=$((fuzz_seconds + $(date +%s) - start))
    echo "$(date -u +%FT%TZ) target=$target" \
         "seconds=$(( $(date +%s) - start )) execs=$execs crashes=$found" \
         >> "$build/history"
    if [ "$found" -eq 0 ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + found))
    fi
}

# Line coverage of hw/rdma reached by every input we have.  A target whose
# committed inputs were replayed in this run has their counters already
# (replay-<target>-*.profraw): only this build's new inputs run again.
coverage() {
    local data=$prof/cov.profdata t
    local -a all=("$work" "$fz/seeds") dirs raws
    [ -d "$fz/corpus" ] && all+=("$fz/corpus")
    rm -f "$prof"/cov-*.profraw
    for t in "${targets[@]}"; do
        dirs=("${all[@]}")
        if compgen -G "$prof/replay-$t-*.profraw" >/dev/null; then
            dirs=("$work")
            [ -n "$(ls -A "$work")" ] || continue
        fi
        # Every input once, and leaks looked for at the end (a report
        # there costs the counters: run again without the check).
        if ! LLVM_PROFILE_FILE=$prof/cov-$t.profraw \
            "$bin" --fuzz-target="$t" -runs=0 -timeout=60 \
            -artifact_prefix="$build/coverage-" "${dirs[@]}" \
            > "$logs/coverage-$t.log" 2>&1; then
            say "FAIL corpus replay on $t, see $logs/coverage-$t.log"
            grep -E -A14 'ERROR: ' "$logs/coverage-$t.log" | head -30 |
                sed 's/^/    /'
            fail=$((fail + 1))
            LLVM_PROFILE_FILE=$prof/cov-$t.profraw \
            ASAN_OPTIONS=abort_on_error=1:detect_leaks=0 \
                "$bin" --fuzz-target="$t" -runs=0 -timeout=60 \
                -artifact_prefix="$build/coverage-" "${dirs[@]}" \
                >> "$logs/coverage-$t.log" 2>&1 || return 0
        fi
    done
    mapfile -t raws < <(compgen -G "$prof/cov-*.profraw" || true
                        compgen -G "$prof/replay-*.profraw" || true)
    if [ ${#raws[@]} = 0 ] ||
       ! llvm-profdata-$llvm merge -o "$data" "${raws[@]}"; then
        say "FAIL no line counters to merge in $prof"
        fail=$((fail + 1))
        return 0
    fi
    # The frames of the inputs must reach the device's RoCE port: once
    # none did (they were sent from the hub port to its missing peer),
    # and only the coverage of rdma_soft_port.c showed it.
    t=$(llvm-cov-$llvm show "$bin" -instr-profile="$data" \
            -name-regex='rdma_soft_port_parse$' 2>/dev/null |
        awk -F'|' 'NF >= 3 && $2 ~ /[0-9]/ { gsub(/ /, "", $2); print $2; exit }')
    if [ -z "$t" ] || [ "$t" = 0 ]; then
        say "FAIL no input's frame reached the device's RoCE port" \
            "(rdma_soft_port_parse ran ${t:-0} times)"
        fail=$((fail + 1))
    else
        say "frames reached the device's RoCE port" \
            "(rdma_soft_port_parse ran $t times)"
    fi
    llvm-cov-$llvm export -summary-only "$bin" -instr-profile="$data" \
        > "$prof/cov.json" 2>/dev/null
    python3 - "$prof/cov.json" <<'EOF'
import json, re, sys
groups = {'hw/rdma/vmw': [0, 0], 'hw/rdma/*.c': [0, 0], 'hw/rdma/soft': [0, 0]}
files = []
for f in json.load(open(sys.argv[1]))['data'][0]['files']:
    m = re.search(r'/hw/rdma/((?:vmw/|soft/)?[^/]+\.c)$', f['filename'])
    if not m:
        continue
    l = f['summary']['lines']
    name = m.group(1)
    g = 'hw/rdma/' + name.split('/')[0] if '/' in name else 'hw/rdma/*.c'
    groups[g][0] += l['covered']
    groups[g][1] += l['count']
    files.append((name, l['covered'], l['count']))
for name, c, n in sorted(files):
    pct = 100.0 * c / n
    print(f'  {"hw/rdma/" + name:32} {c:5} / {n:5} lines  {pct:5.1f}%')
for g, (c, n) in groups.items():
    pct = 100.0 * c / n if n else 0.0
    print(f'coverage {g:14} {c:5} / {n:5} lines  {pct:5.1f}%')
EOF
}

fuzz_seconds=0
for t in "${targets[@]}"; do
    if [ "$replay" = 1 ]; then
        replay_inputs "$t"
    fi
done
if [ "$seconds" -gt 0 ]; then
    for t in "${targets[@]}"; do
        fuzz "$t" $(( seconds / ${#targets[@]} ))
    done
fi
if [ "$merge" = 1 ]; then
    mkdir -p "$fz/corpus"
    rm -rf "$build/merged" && mkdir -p "$build/merged"
    # The coverage of every target counts (-merge keeps what adds to it).
    for t in "${targets[@]}"; do
        "$bin" --fuzz-target="$t" -merge=1 -detect_leaks=0 -timeout=60 \
            -artifact_prefix="$build/merge-" "$build/merged" "$fz/corpus" \
            "$work" >> "$logs/merge.log" 2>&1
    done
    rm -f "$fz"/corpus/*
    cp "$build"/merged/* "$fz/corpus/"
    say "merged: tests/fuzz/corpus has $(ls "$fz/corpus" | wc -l) inputs," \
        "$(du -sk "$fz/corpus" | cut -f1) KiB"
fi

echo
if [ "$seconds" -gt 0 ]; then
    echo "executions: $execs_total in $fuzz_seconds s"
    echo "crashes: ${#crash_files[@]}"
    for f in "${crash_files[@]+"${crash_files[@]}"}"; do
        echo "  $f"
    done
fi
echo "corpus: $(ls "$work" | wc -l) inputs in $work," \
     "$(committed | wc -l) committed"
coverage
awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); sum[kv[1]] += kv[2] } }
     END { printf "all sessions: %d s of fuzzing, %d executions, %d crashes\n",
           sum["seconds"], sum["execs"], sum["crashes"] }' "$build/history" \
    2>/dev/null || true
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
