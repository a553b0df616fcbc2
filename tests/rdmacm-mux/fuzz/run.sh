#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Coverage-guided fuzzing of rdmacm-mux's client and routing code
# (fuzz-mux.c: libFuzzer, AddressSanitizer, UndefinedBehaviorSanitizer),
# with Debian's clang and libFuzzer, which it installs.
#
# Usage: run.sh [--seconds N] [--replay] [--save] [OUTDIR]
#   OUTDIR       build and work directory (default build/rdmacm-mux-fuzz)
#   (default)    replay the corpus, fuzz for N seconds (600) on one core,
#                then report executions, crashes, corpus size and the line
#                coverage of contrib/rdmacm-mux/*.c reached by the corpus
#   --replay     only replay the committed corpus and the seeds (quick: CI)
#   --save       merge the inputs that reach new edges into the committed
#                corpus (tests/rdmacm-mux/fuzz/corpus)
# Environment: CLANG_VERSION (14, Debian 12's).
# The corpus starts from the committed one plus gen-seeds.py's seeds, one
# well-formed scenario per message type and daemon rule.  A crash is left
# in OUTDIR/artifacts/; replay it with OUTDIR/fuzz-mux FILE.
# Last line: "mux-fuzz: N passed, N failed" (the replay; and, when fuzzing,
# no crash found); the exit status is 0 when nothing failed.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../../.." && pwd)
src=$top/contrib/rdmacm-mux
seconds=600
replay_only=0
save=0
passed=0
failed=0

usage() {
    echo "usage: run.sh [--seconds N] [--replay] [--save] [OUTDIR]" >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --seconds) [ $# -ge 2 ] || usage; seconds=$2; shift 2 ;;
    --replay) replay_only=1; shift ;;
    --save) save=1; shift ;;
    -*) usage ;;
    *) break ;;
    esac
done
[ $# -le 1 ] || usage
case $seconds in ''|*[!0-9]*) usage ;; esac
out=${1:-$top/build/rdmacm-mux-fuzz}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1
v=${CLANG_VERSION:-14}

ok() { passed=$((passed + 1)); echo "ok - $1"; }
notok() { failed=$((failed + 1)); echo "not ok - $1${2:+: $2}"; }
finish() {
    echo "mux-fuzz: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}
say() { printf '[mux-fuzz] %s\n' "$*"; }

if ! bash "$top/scripts/apt-setup.sh" "clang-$v" "libfuzzer-$v-dev" \
        "llvm-$v" libibumad-dev python3 >/dev/null; then
    notok "setup" "could not install clang-$v, libfuzzer-$v-dev, llvm-$v"
    finish
fi

# The daemon's sources, unchanged; log.c and port.c are the harness's.
build() {
    local name=$1
    shift
    "clang-$v" -g -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Werror "$@" \
        -I "$src" -o "$out/$name" "$here/fuzz-mux.c" "$src/client.c" \
        "$src/route.c"
}
if ! build fuzz-mux -O1 -fsanitize=fuzzer,address,undefined \
        -fno-sanitize-recover=all; then
    notok "build" "clang-$v failed"
    finish
fi
say "built $out/fuzz-mux"

# The corpus: the committed one and fresh seeds.
rm -rf "$out/seeds" "$out/artifacts"
mkdir -p "$out/seeds" "$out/artifacts" "$out/corpus"
python3 "$here/gen-seeds.py" "$out/seeds" || notok "seeds" "gen-seeds.py failed"

replay() {
    local n
    n=$(find "$here/corpus" "$out/seeds" -type f | wc -l)
    if "$out/fuzz-mux" -runs=0 "$here/corpus" "$out/seeds" \
            >"$out/replay.log" 2>&1; then
        ok "replay ($n inputs)"
        return 0
    fi
    notok "replay ($n inputs)" "see $out/replay.log"
    grep -E "ERROR|SUMMARY|fuzz-mux:" "$out/replay.log" | head -n 20 |
        sed 's/^/#   /'
    return 1
}

if ! replay || [ "$replay_only" = 1 ]; then
    finish
fi

# One process: one core, while builds use the other.
cp "$here"/corpus/* "$out"/seeds/* "$out/corpus/" 2>/dev/null
say "fuzzing for $seconds s from $(find "$out/corpus" -type f | wc -l) inputs"
"$out/fuzz-mux" -max_total_time="$seconds" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -use_value_profile=1 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/" "$out/corpus" >"$out/fuzz.log" 2>&1
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/fuzz.log")
crashes=$(find "$out/artifacts" -type f \
    \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
    -o -name 'oom-*' \) | wc -l)
corpus=$(find "$out/corpus" -type f | wc -l)
if [ "$crashes" -eq 0 ] && [ -n "$execs" ]; then
    ok "fuzz ($seconds s, no crash)"
else
    notok "fuzz ($seconds s)" "$crashes crashes in $out/artifacts"
    grep -E "ERROR|SUMMARY|fuzz-mux:|Test unit written" "$out/fuzz.log" |
        head -n 20 | sed 's/^/#   /'
fi

# Line coverage reached by the corpus, from a build without sanitizers.
coverage() {
    rm -rf "$out/cov" && mkdir -p "$out/cov" &&
    build fuzz-mux-cov -O0 -fsanitize=fuzzer -fprofile-instr-generate \
        -fcoverage-mapping &&
    LLVM_PROFILE_FILE="$out/cov/%p.profraw" "$out/fuzz-mux-cov" -runs=0 \
        "$out/corpus" >/dev/null 2>&1 &&
    "llvm-profdata-$v" merge -sparse "$out"/cov/*.profraw \
        -o "$out/cov.profdata" &&
    "llvm-cov-$v" report "$out/fuzz-mux-cov" \
        -instr-profile="$out/cov.profdata" "$src"/client.c "$src"/route.c \
        >"$out/coverage.txt"
}
if coverage; then
    # Filename, then line columns 8-10: lines, missed, cover.
    lines=$(awk '$1 ~ /\.c$/ || $1 == "TOTAL" {
                n = split($1, p, "/"); printf "%s %s%% of %s lines, ",
                p[n], substr($10, 1, length($10) - 1), $8 }' \
            "$out/coverage.txt")
    lines=${lines%, }
else
    lines="not measured (see $out/coverage.txt)"
fi

echo "# executions: ${execs:-?}"
echo "# crashes: $crashes"
echo "# corpus: $corpus inputs"
echo "# line coverage: $lines"
echo "#   (main.c, port.c and log.c are not in the fuzz target: the poll"
echo "#   loop, umad and logging)"

if [ "$save" = 1 ]; then
    before=$(find "$here/corpus" -type f | wc -l)
    # New edges only (no hit counts, no value profile): a small corpus.
    "$out/fuzz-mux" -merge=1 -use_counters=0 -use_value_profile=0 \
        "$here/corpus" "$out/corpus" >"$out/merge.log" 2>&1
    say "corpus: $before -> $(find "$here/corpus" -type f | wc -l) inputs" \
        "in $here/corpus"
fi
finish
