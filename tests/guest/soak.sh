#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make soak: hours of traffic between two pvrdma guests through a lossy
# link while guest A migrates, and whether QEMU stays flat meanwhile.
#
# Two guests (two-guests.sh --soak), each on -device pvrdma, linked through
# tests/guest/relay.py with losses, run a cycle of programs again and again
# for the set time: RC and SRQ ping-pongs that check every buffer (-c),
# perftest's WRITE, READ, SEND and atomics, rping -V (each ping checked),
# NVMe over RDMA writing and reading back 8 MiB with checksums, and 100
# short RDMA-CM connections each with a checked message (cm-scale.c).  A
# cycle's first program (ib_write_bw of 320 MiB) carries guest A's migrations,
# two every --migrate-every seconds: to a new QEMU and on to another.
#
# Every pair is judged as in lane two-guests (both sides' exits and
# outputs, the programs' own data checks); both QEMUs are sampled every
# --sample-every seconds (soak_sample.py: RSS, open descriptors, threads,
# the device's objects in use and RoCE counters).  Printed: per program its
# runs and failures, a table of the samples, and per QEMU the growth of its
# own memory (its RSS outside the guest RAM block, which the guest's own
# use of its RAM does not move, and outside TCG's code buffer, which fills
# for hours) and descriptors after the warm-up (a least-squares line
# through the samples, in % of the mean per hour), and of its whole RSS
# and TCG's code for information.  Passes when no program, guest or
# migration failed and each judged growth is under 1% per hour.  Last line:
# "soak: N passed, N failed".
#
# Usage: soak.sh [options]
#   --seconds S        how long the cycles go on (default 7200)
#   --migrate-every S  guest A's migrations (default 300; 0: none)
#   --lossy SPEC       the relay's SEED:DROP:DUP:REORDER:DELAY (default
#                      11:0.01:0.005:0.005:0.005)
#   --warmup S         samples before this are left out of the growth
#                      (default: a quarter of --seconds, at most 1200)
#   --sample-every S   (default 60)
#   --programs LIST    the cycle, as two-guests.sh --programs (at most 19)
#   --log-dir DIR      (default build/soak)
#   --no-build         do not run build-guest.sh first
#   --trace LIST       QEMU trace events every QEMU logs to DIR/qemu/trace.PID
#                      (default: rdma_soft_timeout,rdma_soft_rc_refused,
#                      rdma_soft_req_refused; '' for none): what a failed
#                      program's QPs went through
#   --tb-size MIB      TCG's code buffer of every QEMU (-accel tcg,tb-size;
#                      default 48; 0: TCG's own default, 1 GiB on 64-bit
#                      hosts).  TCG keeps a node per translated block on
#                      QEMU's heap until the buffer fills and is flushed;
#                      a buffer that fills within the warm-up bounds that,
#                      and what is left of QEMU's own memory is the rest
#                      of QEMU's, the device's included.  B's own memory
#                      is judged per flush period (below): 48 MiB filled
#                      every 4 to 5 minutes in a trial (64: every 29, too
#                      few periods in two hours; 32: every 30 s, TCG
#                      translating all the time)
#
# The soak runs a copy of QEMU in DIR/qemu: a rebuild during its hours
# does not change the QEMU its migrations start.
# Environment: QEMU, GUEST_DIR (as two-guests.sh).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
. "$top/tests/tap.sh"

die() { printf 'soak: error: %s\n' "$*" >&2; exit 2; }

seconds=7200
mig_every=300
lossy=11:0.01:0.005:0.005:0.005
warmup=
sample_every=60
logdir=$top/build/soak
build=()
trace=rdma_soft_timeout,rdma_soft_rc_refused,rdma_soft_req_refused
tb_size=48
# The cycle.  ib_write_bw first and long enough for two migrations (at
# 10 to 30 MB/s through the lossy relay, 10 to 30 s); no UD ping-pong
# (unreliable: one lost message and it waits for its deadline); the rest as lane two-guests runs them, with
# more iterations where a run is short.
programs=ib_write_bw:65536:5000,ibv_rc_pingpong:4096:2000,srq_pingpong:4096:2000,ib_read_bw:65536:2000,ib_send_bw:65536:2000,ib_atomic_bw::2000,rping:4096:200,nvmeof_rdma::2,cm_scale:100:200
while [ $# -gt 0 ]; do
    case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --migrate-every) mig_every=$2; shift 2 ;;
        --lossy) lossy=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --sample-every) sample_every=$2; shift 2 ;;
        --programs) programs=$2; shift 2 ;;
        --log-dir) logdir=$2; shift 2 ;;
        --no-build) build=(--no-build); shift ;;
        --trace) trace=$2; shift 2 ;;
        --tb-size) tb_size=$2; shift 2 ;;
        -h|--help) sed -n '/^# Usage/,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown option $1 (see --help)" ;;
    esac
done
for v in "$seconds" "$mig_every" "$sample_every" "$tb_size" ${warmup:+"$warmup"}; do
    case $v in ''|*[!0-9]*) die "--seconds, --migrate-every, --warmup, --sample-every and --tb-size want numbers, got '$v'" ;; esac
done
[ -n "$warmup" ] || warmup=$(( seconds / 4 < 1200 ? seconds / 4 : 1200 ))
mkdir -p "$logdir" || die "cannot create $logdir"
logdir=$(cd "$logdir" && pwd)

case $trace in *[!a-z0-9_,*]*) die "--trace wants event names separated by commas" ;; esac
qsrc=${QEMU:-$top/build/qemu/qemu-system-x86_64}
[ -x "$qsrc" ] || die "no QEMU at $qsrc (make build)"
rm -rf "$logdir/qemu"
mkdir -p "$logdir/qemu" && cp "$qsrc" "$logdir/qemu/qemu-system-x86_64.bin" ||
    die "cannot copy $qsrc to $logdir/qemu"
# (firmware: tests/guest/lib.sh looks beside QEMU for its pc-bios)
ln -s "$(cd "$(dirname "$qsrc")" && pwd)/pc-bios" "$logdir/qemu/pc-bios"
{
    echo '#!/bin/sh'
    if [ "$tb_size" != 0 ]; then
        # run-guest.sh's and migrate.py's "-accel tcg", with the buffer's size
        echo 'prev=; for a; do shift; [ "$prev" = -accel ] && [ "$a" = tcg ] && a=tcg,tb-size='"$tb_size"'; set -- "$@" "$a"; prev=$a; done'
    fi
    if [ -n "$trace" ]; then
        echo "exec \"$logdir/qemu/qemu-system-x86_64.bin\" \"\$@\" -msg timestamp=on -trace 'enable=${trace//,/\' -trace \'enable=}' -D \"$logdir/qemu/trace.\$\$\""
    else
        echo "exec \"$logdir/qemu/qemu-system-x86_64.bin\" \"\$@\""
    fi
} >"$logdir/qemu/qemu-system-x86_64"
chmod +x "$logdir/qemu/qemu-system-x86_64"
export QEMU=$logdir/qemu/qemu-system-x86_64

mig=()
[ "$mig_every" = 0 ] || mig=(--soak-migrate "$mig_every")
echo "# soak: $seconds s of cycles between two pvrdma guests, link $lossy (seed:drop:dup:reorder:delay), A migrating every ${mig_every} s (0: never), samples every $sample_every s, warm-up $warmup s, TCG buffer ${tb_size} MiB (0: default); logs $logdir"
echo "# cycle: ${programs//,/ }"
start=$(date +%s)
# (a progress line per cycle: the run takes hours)
"$here/two-guests.sh" "${build[@]}" --client-dev pvrdma --server-dev pvrdma \
    --gids ipv4 --timeout 180 --lossy "$lossy" --soak "$seconds" \
    --sample-every "$sample_every" "${mig[@]}" --programs "$programs" \
    --log-dir "$logdir" >"$logdir/two-guests.tap" 2>"$logdir/two-guests.err" &
tg=$!
trap 'kill -TERM $tg 2>/dev/null; exit 130' INT TERM
seen=0
while kill -0 $tg 2>/dev/null; do
    sleep 30
    # A's console is written at the end under migration; B's as it goes
    c=$(grep -ac '^soak: heard .cycle' "$logdir/b.log" 2>/dev/null)
    if [ "${c:-0}" -gt "$seen" ]; then
        seen=$c
        echo "# $(( ($(date +%s) - start) / 60 )) min: cycle $c began"
    fi
done
wait $tg
tg_rc=$?
echo "# two-guests.sh finished after $(( ($(date +%s) - start) / 60 )) min (exit $tg_rc)"
grep -E '^# (soak|relay|both guests)' "$logdir/two-guests.tap"

# --- verdicts -------------------------------------------------------------------
# per program: its runs and failures (the TAP lines of two-guests.sh)
tap_out=$logdir/evidence-soak.txt
python3 - "$logdir/two-guests.tap" >"$logdir/programs.txt" <<'EOF'
import re, sys
runs = {}
for line in open(sys.argv[1]):
    m = re.match(r'(not )?ok \d+ ([a-z0-9-]+)@\d+ ', line)
    if m:
        r = runs.setdefault(m.group(2), [0, 0])
        r[0] += 1
        r[1] += bool(m.group(1))
for p, (n, f) in runs.items():
    print(f"{p} {n} {f}")
EOF
printf '# %-16s %6s %6s\n' program runs failed
while read -r p n f; do printf '# %-16s %6s %6s\n' "$p" "$n" "$f"; done <"$logdir/programs.txt"
pairs=$(awk '{ n += $2 } END { print n + 0 }' "$logdir/programs.txt")
bad=$(grep -E '^not ok ' "$logdir/two-guests.tap")
if [ "$pairs" -gt 0 ] && [ -z "$bad" ]; then
    tap_result OK "soak: $pairs program pairs, guests and migrations: none failed"
else
    { echo "$pairs program pairs judged; what failed:"; echo "$bad"
      grep -A20 '^not ok ' "$logdir/two-guests.tap" | grep '^  #' | head -40; } >"$tap_out"
    tap_result FAIL "soak: programs, guests and migrations ($pairs pairs)" "$tap_out"
fi
mig_n=$(grep -c '^# migration: [^ ]*: #' "$logdir/two-guests.tap")
echo "# guest A migrated $mig_n times"

# --- samples --------------------------------------------------------------------
# The table (about 13 rows), then per QEMU the growth after the warm-up:
# "growth LABEL WHAT PERCENT-PER-HOUR SAMPLES".  B is one QEMU throughout;
# A's rows come from each QEMU it moved through; its growth is judged on
# one point per QEMU (its largest sample, at its last time), and B's own
# memory on one point per period between two flushes of TCG's code
# buffer (the same), see below.
python3 - "$logdir/samples.tsv" "$warmup" >"$logdir/samples.txt" <<'EOF'
import sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
head, rows = rows[0], [r for r in rows[1:] if len(r) == len(rows[0])]
if not rows:
    print("no samples")
    sys.exit(0)
col = {h: i for i, h in enumerate(head)}
t0 = min(float(r[0]) for r in rows)
warm = float(sys.argv[2])
def num(r, k):
    try:
        return float(r[col[k]])
    except (KeyError, ValueError):
        return None
def mib(r, k):
    v = num(r, k)
    return "-" if v is None else f"{v / 1024:.0f}"
# one row per B sample (about 26 of them), A's nearest sample beside it
print("#  min | B: RSS MiB  own  tcg   TBs fl  fds thr qps mrs   tx-frames"
      " timeouts retrans | A: QEMU RSS MiB  own  tcg  fds thr timeouts"
      " retrans")
rb = [r for r in rows if r[1] == "B"]
ra = [r for r in rows if r[1] == "A"]
step = max(1, len(rb) // 26)
for r in rb[::step] + ([rb[-1]] if rb and (len(rb) - 1) % step else []):
    a = min(ra, key=lambda x: abs(float(x[0]) - float(r[0]))) if ra else None
    line = (f"# {(float(r[0]) - t0) / 60:4.0f} | {num(r, 'rss_kib') / 1024:12.1f} "
            f"{mib(r, 'own_kib'):>4} {mib(r, 'tcg_kib'):>4} "
            f"{r[col['tbs']] if 'tbs' in col else '-':>5} "
            f"{r[col['tb_flushes']] if 'tb_flushes' in col else '-':>2} "
            f"{r[col['fds']]:>4} {r[col['threads']]:>3} {r[col['qps']]:>3} "
            f"{r[col['mrs']]:>3} {r[col['tx_frames']]:>11} "
            f"{r[col['timeouts']]:>8} {r[col['retransmits']]:>7} |")
    if a:
        line += (f" #{a[2]:<3} {num(a, 'rss_kib') / 1024:8.1f} "
                 f"{mib(a, 'own_kib'):>4} {mib(a, 'tcg_kib'):>4} "
                 f"{a[col['fds']]:>4} "
                 f"{a[col['threads']]:>3} {a[col['timeouts']]:>8} "
                 f"{a[col['retransmits']]:>7}")
    print(line)
for label in ("A", "B"):
    mine = [r for r in rows if r[1] == label and float(r[0]) - t0 >= warm]
    for what in ("own_kib", "fds", "tcg_kib", "rss_kib"):
        pts = [(float(r[0]) / 3600, num(r, what), r[2]) for r in mine]
        pts = [(x, y, q) for x, y, q in pts if y is not None]
        # A is a new QEMU after each migration, each growing from its
        # start: one point per QEMU, its largest sample at its last time
        # (a line through the saw-tooth said 5.7% per hour of QEMUs that
        # each peaked at 43 MiB)
        # B's own memory: TCG frees its translated blocks' nodes and
        # resets its hash table at each flush of the code buffer and
        # builds them again as the guest runs, so the memory of each
        # period rises to TCG's peak for it (a trial: steps of 0.8 to 2.8%
        # at two of six flushes, flat between).  One point per period,
        # its largest sample at its last time: a device that leaks raises
        # every period's peak, TCG's tables only those that outgrow all
        # before them.
        if label == "A":
            per = {}
            for x, y, q in pts:
                px, py = per.get(q, (x, y))
                per[q] = (max(px, x), max(py, y))
            pts = sorted(per.values())
        elif what == "own_kib" and "tb_flushes" in col:
            per = {}
            for r in mine:
                x, y = float(r[0]) / 3600, num(r, what)
                fl = r[col["tb_flushes"]]
                if y is None:
                    continue
                px, py = per.get(fl, (x, y))
                per[fl] = (max(px, x), max(py, y))
            pts = sorted(per.values())
        else:
            pts = [(x, y) for x, y, _ in pts]
        if len(pts) < 3:
            print(f"growth {label} {what} none {len(pts)}")
            continue
        n = len(pts)
        mx = sum(x for x, _ in pts) / n
        my = sum(y for _, y in pts) / n
        sxx = sum((x - mx) ** 2 for x, _ in pts)
        slope = sum((x - mx) * (y - my) for x, y in pts) / sxx if sxx else 0
        lo, hi = min(y for _, y in pts), max(y for _, y in pts)
        print(f"growth {label} {what} {100 * slope / my:.3f} {n} {lo:.0f} {hi:.0f}")
EOF
grep '^#' "$logdir/samples.txt"
# The verdicts: QEMU's own memory (its resident memory outside the guest
# RAM block and TCG's code buffer) and its descriptors.  The whole RSS
# also counts the guest RAM the guest has touched, which grows with what
# the guests do (page cache, the NVMe RAM disk) until the guest has
# touched all of it, and TCG's translated code, which grows for hours as
# the guests run code not translated yet, up to the buffer's size (the
# first two-hour run: B's own memory 146 to 166 MiB in twenty minutes,
# 94 MiB of it TCG's): they are shown, not judged.
while read -r _ label what pct ns lo hi; do
    if [ "$what" = rss_kib ] || [ "$what" = tcg_kib ]; then
        shown=$([ "$what" = rss_kib ] && echo "RSS, guest RAM included" || echo "TCG code buffer")
        echo "# QEMU $label's $shown: $pct% per hour after the warm-up ($ns samples, $lo to $hi KiB)"
        continue
    fi
    shown=$([ "$what" = own_kib ] && echo "own memory (RSS outside guest RAM and TCG's code)" || echo "open descriptors")
    if [ "$pct" = none ]; then
        echo "$ns samples after the warm-up" >"$tap_out"
        tap_result FAIL "soak: QEMU $label's $shown after the warm-up: too few samples" "$tap_out"
    elif python3 -c "import sys; sys.exit(0 if $pct < 1 else 1)"; then
        tap_result OK "soak: QEMU $label's $shown flat after the warm-up: $pct% per hour ($ns samples, $lo to $hi)"
    else
        echo "least-squares growth $pct% of the mean per hour over $ns samples ($lo to $hi); all samples: $logdir/samples.tsv" >"$tap_out"
        tap_result FAIL "soak: QEMU $label's $shown grows $pct% per hour after the warm-up" "$tap_out"
    fi
done < <(grep '^growth ' "$logdir/samples.txt")
echo "# logs: $logdir (two-guests.tap, samples.tsv, a.log and b.log, a-mig: guest A's QEMUs)"
tap_summary soak
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
