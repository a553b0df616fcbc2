# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2034   # val, alt, note, cell: for the caller
#
# Shared by the benchmarks (run-bench.sh, g2g-bench.sh, loss-bench.sh,
# qscale-bench.sh): sourced, not run.
# They read perftest's output from the guests' console sections that
# tests/guest/init writes for a server/client pair (--- server (exit N),
# --- client (exit N), --- deadline:, --- end: ... client=S ...).

busy() { awk '$1 == "cpu" { print $2 + $3 + $4 + $7 + $8; exit }' /proc/stat; }
child_secs() { tail -1 "$1" | awk '{ t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%.2f", t }'; }

# side TEXT server|client: that side's output in a pair's section
side() {
    echo "$1" | awk -v w="$2" '/^--- server \(exit / { on = (w == "server"); next }
                               /^--- client \(exit / { on = (w == "client"); next }
                               /^--- / { on = 0 } on'
}

# human BYTES: a size in B/KiB/MiB
human() {
    if [ "$1" -ge 1048576 ] && [ $(($1 % 1048576)) = 0 ]; then echo "$(($1 / 1048576)) MiB"
    elif [ "$1" -ge 1024 ] && [ $(($1 % 1024)) = 0 ]; then echo "$(($1 / 1024)) KiB"
    else echo "$1 B"; fi
}

# perftest_verdict SECTION SIZE ITERS bw|lat LABEL PROG [CALIBRATION-NOTE]:
# the figure of one perftest run from its pair's section.  Sets val (the
# client's BW average in MiB/s, or t_typical in usec), alt (t_avg of a
# latency run), cell (what a table shows) and note (why there is no
# figure); a bandwidth that is less than the bytes over the client's
# wall-clock time (a lower bound) is added to the array floor_bad.
perftest_verdict() {
    local s=$1 size=$2 n=$3 kind=$4 label=$5 prog=$6 calib=${7:-} cli rs rc row w
    val='' alt='' note='' cell=''
    rs=$(echo "$s" | sed -n 's/^--- server (exit \(.*\))$/\1/p' | head -1)
    rc=$(echo "$s" | sed -n 's/^--- client (exit \(.*\))$/\1/p' | head -1)
    cli=$(side "$s" client)
    if echo "$s" | grep -q '^--- deadline: '; then
        note="hung: $(echo "$s" | sed -n 's/^--- deadline: //p' | tr '\n' ' ')"; cell="FAIL (hung)"
        return
    fi
    if [ "$rc" != 0 ] || [ "$rs" != 0 ]; then
        note="exit status server $rs, client $rc: $(echo "$cli" | grep -v '^[- ]*$' | tail -1)"
        cell="FAIL (exit $rc)"
        return
    fi
    if echo "$cli" | grep -q 'Correlation coefficient'; then
        note="perftest's clock calibration failed${calib} ($(echo "$cli" | grep -m1 'Correlation coefficient'))"
        cell="INVALID (clock)"
        return
    fi
    row=$(echo "$cli" | awk -v sz="$size" -v n="$n" '$1 == "#bytes" { h = 1; next }
                                                     h && $1 == sz && $2 == n { print; exit }')
    if [ -z "$row" ]; then
        note="no result row '$size $n ...' in the client's output"; cell="FAIL (no result)"
        return
    fi
    if [ "$kind" = bw ]; then
        val=$(echo "$row" | awk '{ print $4 }')    # BW average [MB/sec] (MiB/s)
    else
        val=$(echo "$row" | awk '{ print $5 }')    # t_typical [usec]
        alt=$(echo "$row" | awk '{ print $6 }')    # t_avg [usec]
    fi
    if ! echo "$val" | grep -qE '^[0-9]+(\.[0-9]+)?$' || ! awk -v v="$val" 'BEGIN { exit !(v + 0 > 0) }'; then
        note="perftest reported $val (clock calibration?)"; cell="INVALID ($val)"; val=
        return
    fi
    if [ "$kind" = bw ]; then
        # the client's wall time includes connecting: bytes / it is a lower bound
        w=$(echo "$s" | sed -n 's/^--- end: .* client=\([0-9.]*\) .*/\1/p' | tail -1)
        if [ -n "$w" ] && awk -v v="$val" -v b="$((size * n))" -v w="$w" \
               'BEGIN { exit !(w > 0 && v < 0.95 * b / 1048576 / w) }'; then
            floor_bad+=("$label $prog $(human "$size"): perftest says $val MiB/s, but $((size * n)) bytes in ${w} s wall is more")
        fi
        cell=$val
    else
        cell="$val ($alt)"
    fi
}

# report_checks INDENT: the wall-clock cross-check (the caller's floor_bad:
# figures below bytes / client wall time) and the runs without a figure
# (the caller's notes)
report_checks() {
    if [ ${#floor_bad[@]} = 0 ]; then
        echo "$1wall-clock cross-check: every bandwidth figure is at least bytes / client wall time (a lower bound)"
    else
        echo "$1wall-clock cross-check FAILED (perftest's clock runs fast?):"
        printf "$1  %s\n" "${floor_bad[@]}"
    fi
    if [ ${#notes[@]} -gt 0 ]; then
        echo
        echo "runs without a figure:"
        printf '  %s\n' "${notes[@]}"
    fi
}

# pair_bw DIR: the 64 KiB BW average of the client of two-guests.sh's run
# in DIR (its first perftest pair over IPv4 GIDs), or why there is none
pair_bw() {
    local log=$1/joined-ipv4.log row
    [ -f "$log" ] || { echo "no log"; return; }
    if grep -q -- '--- deadline: \|timed-out=yes' "$log"; then
        echo "did not finish"; return
    fi
    row=$(awk '/#bytes/ { on = 1; next } on && $1 == 65536 { print $4; exit }' "$log")
    # perftest times by the TSC, whose rate it estimates first; on a busy
    # TCG guest the estimate can fail (it warns "Correlation coefficient
    # r^2 ... < 0.9") and every figure is then 0.00
    if [ "$row" = 0.00 ] && grep -q 'Correlation coefficient r^2' "$log"; then
        echo "no figure (perftest's clock estimate failed)"; return
    fi
    if [ -n "$row" ] && grep -q -- '--- client (exit 0)' "$log"; then
        echo "$row"
    else
        echo failed
    fi
}
