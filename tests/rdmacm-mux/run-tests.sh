#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Tests of contrib/rdmacm-mux against a real RDMA port.  Runs INSIDE the
# lane-3 host VM (tests/hostvm/run-hostvm.sh): Linux Soft-RoCE rxe0 on eth0
# with 10.0.2.15 and 10.0.2.16, ib_umad loaded and ib_cm not.  Needs root
# (umad, and "ip addr" for the run-time GID test).
#
# Usage: run-tests.sh BINDIR      (BINDIR from tests/rdmacm-mux/build.sh)
#
# Environment:
#   MUX_DEV, MUX_PORT   the port (rxe0, 1)
#   MUX_GID_A/B/C       the GIDs of clients A and B, and an address to add
#                       at run time (10.0.2.15, 10.0.2.16, 10.0.2.17)
#   MUX_VALGRIND=1      run the daemon under valgrind, and check its report
#
# Prints "ok N - name" / "not ok N - name: why" and, last,
# "mux: N passed, N failed"; exits 1 if anything failed.
set -uo pipefail

bin=$(cd "${1:?usage: run-tests.sh BINDIR}" && pwd)
dev=${MUX_DEV:-rxe0}
port=${MUX_PORT:-1}
gid_a=${MUX_GID_A:-10.0.2.15}
gid_b=${MUX_GID_B:-10.0.2.16}
gid_c=${MUX_GID_C:-10.0.2.17}
valgrind=${MUX_VALGRIND:-0}

work=$(mktemp -d /tmp/rdmacm-mux-test.XXXXXX)
# Other users must reach the socket for the tests of its permissions.
chmod 0755 "$work"
prefix=$work/mux
sock=$prefix-$dev-$port
log=$work/daemon.log           # the current daemon's; daemon-N.log for each
starts=0
pid=
n=0
passed=0
failed=0

ok() { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $1"; }
notok() {
    n=$((n + 1))
    failed=$((failed + 1))
    echo "not ok $n - $1${2:+: $2}"
}
check() {
    local name=$1
    shift
    if "$@"; then ok "$name"; else notok "$name"; fi
}

finish() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    fi
    if [ "$failed" -gt 0 ] && [ -s "$log" ]; then
        echo "# last lines of the daemon's log:"
        tail -n 30 "$log" | sed 's/^/#   /'
    fi
    echo "mux: $passed passed, $failed failed"
    rm -rf "$work"
    # In an EXIT trap, a bare exit would keep the status the script had.
    [ "$failed" -eq 0 ] && exit 0
    exit 1
}
trap finish EXIT

daemon=$bin/rdmacm-mux
sysroot=/sys/class/infiniband

daemon_cmd() {
    if [ "$valgrind" = 1 ]; then
        echo valgrind -q --error-exitcode=99 --leak-check=full \
            --errors-for-leak-kinds=definite --show-leak-kinds=definite \
            --track-fds=no "$daemon"
    else
        echo "$daemon"
    fi
}

# Starts the daemon in the background with these extra options and waits
# for its socket.  FDS=N: under that limit of open files; UMASK=M: under
# that umask.
start_daemon() {
    starts=$((starts + 1))
    log=$work/daemon-$starts.log
    # shellcheck disable=SC2046
    (
        [ -z "${FDS:-}" ] || ulimit -n "$FDS"
        [ -z "${UMASK:-}" ] || umask "$UMASK"
        exec $(daemon_cmd) -d "$dev" -p "$port" -s "$prefix" -v "$@"
    ) >>"$log" 2>&1 &
    pid=$!
    for _ in $(seq 1 600); do
        [ -S "$sock" ] && grep -q "serving CM MADs" "$log" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    return 1
}

# Sends sig and checks that the daemon exits 0 and removes its socket.
stop_daemon() {
    local sig=$1 name=$2 rc
    kill -"$sig" "$pid"
    for _ in $(seq 1 300); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        notok "$name-exits" "still running 30 s after SIG$sig"
        kill -KILL "$pid"
        wait "$pid"
        pid=
        return
    fi
    wait "$pid"
    rc=$?
    pid=
    check "$name-exit-status-0" [ "$rc" -eq 0 ]
    [ "$rc" -eq 0 ] || echo "# exit status $rc"
    check "$name-socket-removed" [ ! -e "$sock" ]
}

# Numbers mux-test's "ok - " / "not ok - " lines.
renumber() {
    local line
    while IFS= read -r line; do
        case $line in
        "ok - "*) ok "${line#ok - }" ;;
        "not ok - "*) notok "${line#not ok - }" ;;
        *) echo "# $line" ;;
        esac
    done
}

mux_test_cmd() {
    timeout 600 "$bin/mux-test" -a "$gid_a" \
        -b "$gid_b" -c "$gid_c" -i "$netdev" "$sock" "$@" 2>&1
}

# (No process substitution: the host VM has no /dev/fd.)
mux_test() {
    local rc=0
    mux_test_cmd "$@" >"$work/mux-test.out" || rc=$?
    # 1 means that it printed a "not ok"; anything else is a crash/timeout.
    if [ "$rc" -gt 1 ]; then
        echo "not ok - mux-test $*: exit status $rc" >>"$work/mux-test.out"
    fi
    renumber <"$work/mux-test.out"
}

alive() {
    check "daemon-alive-after-$1" kill -0 "$pid"
}

# Runs mux-test TEST as user $1, group $2; its output shows on failure.
mux_test_as() {
    local uid=$1 gid=$2 test=$3
    if "$bin/mux-test" -u "$uid" -g "$gid" "$sock" "$test" \
        >"$work/as.out" 2>&1; then
        return 0
    fi
    sed 's/^/#   /' "$work/as.out"
    return 1
}

# Runs the daemon in the foreground; sets out and rc.
run_daemon() {
    out=$(timeout 60 "$daemon" "$@" 2>&1)
    rc=$?
}

# --- preconditions --------------------------------------------------------

if [ ! -d "$sysroot/$dev/ports/$port" ]; then
    notok "setup-port-exists" "no $dev port $port here (not in the host VM?)"
    exit
fi
if grep -q '^ib_cm ' /proc/modules; then
    notok "setup-no-ib_cm" "ib_cm is loaded: it holds the CM class"
    exit
fi
netdev=$(cat "$sysroot/$dev/ports/$port/gid_attrs/ndevs/0" 2>/dev/null ||
    echo eth0)
ok "setup ($dev port $port on $netdev)"

# --- test 4 (first, before a daemon runs): command line and refusals ------

# "NAME RC TEXT...": the last run_daemon exited RC and printed each TEXT.
expect_out() {
    local name=$1 want=$2 t
    shift 2
    if [ "$rc" -ne "$want" ]; then
        notok "$name" "exit status $rc, want $want"
        echo "$out" | sed 's/^/#   /'
        return
    fi
    for t in "$@"; do
        if ! grep -qF -- "$t" <<<"$out"; then
            notok "$name" "no '$t' in the output"
            echo "$out" | sed 's/^/#   /'
            return
        fi
    done
    ok "$name"
}

run_daemon --help
expect_out "help" 0 "Usage: rdmacm-mux -d DEVICE" "--device" "--port" \
    "--socket" "--verbose" "PREFIX-DEVICE-PORT" "/var/run/rdmacm-mux-rxe0-1" \
    "must NOT have the kernel's own CM" "does not daemonize"
expect_out "help-socket-permissions" 0 "--owner USER" "--group GROUP" \
    "--mode MODE" "(default 0600)"
expect_out "help-client-bounds" 0 "--max-clients-per-uid N" "(default 64)" \
    "--idle-timeout SECONDS" "(default 60; 0: never evicted)"
expect_out "help-gid-policy" 0 "--allow-gids USER=ADDRESS[/LEN]" \
    "a rule of its user covers"


run_daemon -s "$prefix"
expect_out "no-device-refused" 2 "no RDMA device given"

# Bad values of the socket's permissions and of the bounds.
run_daemon -d "$dev" -s "$prefix" --mode 0999
expect_out "bad-mode-refused" 2 "bad --mode '0999'" "octal"
run_daemon -d "$dev" -s "$prefix" --mode 04755
expect_out "setuid-mode-refused" 2 "bad --mode '04755'" "0 to 0777"
run_daemon -d "$dev" -s "$prefix" --mode rw
expect_out "symbolic-mode-refused" 2 "bad --mode 'rw'"
run_daemon -d "$dev" -s "$prefix" --owner no-such-user-here
expect_out "unknown-owner-refused" 2 \
    "bad --owner 'no-such-user-here': no such user"
run_daemon -d "$dev" -s "$prefix" --group no-such-group-here
expect_out "unknown-group-refused" 2 \
    "bad --group 'no-such-group-here': no such group"
run_daemon -d "$dev" -s "$prefix" --max-clients-per-uid 0
expect_out "zero-clients-per-uid-refused" 2 \
    "bad --max-clients-per-uid '0' (1 to 256)"
run_daemon -d "$dev" -s "$prefix" --idle-timeout -5
expect_out "negative-idle-timeout-refused" 2 "bad --idle-timeout '-5'"
run_daemon -d "$dev" -s "$prefix" --allow-gids 10.0.2.15
expect_out "allow-gids-without-user-refused" 2 "bad --allow-gids '10.0.2.15'"
run_daemon -d "$dev" -s "$prefix" --allow-gids 0=10.0.2.15/33
expect_out "allow-gids-bad-length-refused" 2 \
    "bad --allow-gids '0=10.0.2.15/33'"
run_daemon -d "$dev" -s "$prefix" --allow-gids no-such-user-here=fe80::/64
expect_out "allow-gids-unknown-user-refused" 2 "no such user"

run_daemon -d nosuch0 -s "$prefix"
expect_out "bad-device-refused" 1 "no RDMA device 'nosuch0'; devices found:" \
    "$dev"

run_daemon -d "$dev" -p 7 -s "$prefix"
expect_out "bad-port-refused" 1 "has no port 7; its ports: $port"

run_daemon -d "$dev" -p 0
expect_out "port-0-refused" 2 "bad port '0'"

run_daemon -d "$dev" -s "$work/$(printf 'x%.0s' $(seq 1 120))"
expect_out "long-socket-path-refused" 2 "too long"

echo "not a socket" >"$sock"
run_daemon -d "$dev" -p "$port" -s "$prefix"
expect_out "non-socket-file-refused" 1 "is not a socket"
check "non-socket-file-untouched" grep -q "not a socket" "$sock"
rm -f "$sock"

check "no-socket-left-by-refusals" [ ! -e "$sock" ]

"$bin/mux-test" mkstale "$sock"
check "stale-socket-made" [ -S "$sock" ]
if ! start_daemon; then
    notok "daemon-starts" "$(tail -n 5 "$log")"
    exit
fi
ok "daemon-starts"
check "stale-socket-replaced" grep -q "replacing the stale socket" "$log"

run_daemon -d "$dev" -p "$port" -s "$prefix"
expect_out "second-daemon-same-socket-refused" 1 "is in use"
check "live-socket-kept" [ -S "$sock" ]

# A second agent for the CM class on the port, here a second daemon under
# another socket path, is refused by the kernel (ib_mad: the class's SEND
# method is in use, EINVAL), as it would be with ib_cm loaded.
run_daemon -d "$dev" -p "$port" -s "$work/other"
expect_out "second-daemon-umad-refused" 1 "cannot register for CM MADs" \
    "Invalid argument" "ib_cm" "another rdmacm-mux runs on this port"
check "second-daemon-left-no-socket" [ ! -e "$work/other-$dev-$port" ]
alive "refusals"

# --- tests 1 to 3: clients ------------------------------------------------

# Clients of other users (the per-user bound, ownership across users).
chmod 0666 "$sock"
mux_test basic
alive "basic"
mux_test routing
alive "routing"
mux_test abuse
alive "abuse"
mux_test flood
alive "flood"
mux_test churn
alive "churn"
mux_test maxclients
alive "maxclients"
if ip -4 addr show dev "$netdev" | grep -q "inet $gid_c/"; then
    notok "runtime-gid" "$gid_c is already on $netdev"
else
    mux_test runtime-gid
    ip addr del "$gid_c/24" dev "$netdev" 2>/dev/null
    alive "runtime-gid"
fi
mux_test ownership
alive "ownership"

# The counters: drops for nobody and for the non-reader, cut-off clients.
kill -USR1 "$pid"
sleep 1
stats=$(grep "MADs received" "$log" | tail -n 1)
echo "# $stats"
# The number that the sed expression $1 picks out of the line, or -1.
count() {
    local v
    v=$(sed -n "s/.*$1.*/\1/p" <<<"$stats")
    echo "${v:--1}"
}
check "stats-no-client-counted" [ "$(count 'no client \([0-9]*\)')" -ge 2 ]
check "stats-queue-full-counted" [ "$(count 'queue full \([0-9]*\)')" -ge 1 ]
check "stats-refused-clients-counted" \
    [ "$(count 'accepted, \([0-9]*\) refused')" -ge 2 ]
check "stats-refused-per-user-counted" \
    [ "$(count '(\([0-9]*\) over the per-user bound')" -ge 1 ]
check "refusal-per-user-logged" \
    grep -q "refusing a client of uid 0 (pid [0-9]*): its user is at" "$log"
check "stats-malformed-counted" \
    [ "$(count 'idle, \([0-9]*\) cut off')" -ge 9 ]

# --- test 4: signals ------------------------------------------------------

stop_daemon TERM sigterm
check "sigterm-logged" grep -q "stopping on signal 15" "$log"

if start_daemon; then
    ok "daemon-restarts"
    # A client connected, with a GID, when the signal comes.
    mux_test_cmd hold >"$work/hold.out" &
    hold=$!
    for _ in $(seq 1 100); do
        grep -q "hold/registered" "$work/hold.out" && break
        sleep 0.1
    done
    stop_daemon INT sigint
    wait "$hold"
    renumber <"$work/hold.out"
else
    notok "daemon-restarts" "$(tail -n 5 "$log")"
fi

# Out of file descriptors: new clients wait in the backlog (the daemon
# stops polling the listening socket rather than spinning on it) and are
# served once others leave.  Not under valgrind: it keeps the top
# descriptors for itself, and closes a connection that accept() put there.
if [ "$valgrind" = 1 ]; then
    echo "# fdlimit: skipped under valgrind"
elif FDS=40 start_daemon; then
    ok "daemon-starts-with-few-fds"
    mux_test fdlimit
    # Once per pause, at most once per client that left: not a busy loop.
    pauses=$(grep -c "new clients wait until one leaves" "$log")
    check "fd-exhaustion-no-busy-loop" test "$pauses" -ge 1 -a "$pauses" -le 100
    echo "# accept paused $pauses times"
    alive "fdlimit"
    stop_daemon TERM fdlimit-sigterm
else
    notok "daemon-starts-with-few-fds" "$(tail -n 5 "$log")"
fi

# --- the socket's permissions ---------------------------------------------

# Under umask 0, as a service manager may start it, the socket is still
# 0600 and the daemon's, and no other user connects, not even while the
# daemon starts (a racer tries from before the socket exists).
"$bin/mux-test" -u 65534 -g 65534 "$sock" connect-race >"$work/race.out" \
    2>&1 &
racer=$!
if UMASK=000 start_daemon; then
    ok "perm-daemon-starts-under-umask-0"
    race_rc=0
    wait "$racer" || race_rc=$?
    check "perm/no-connect-while-starting" [ "$race_rc" -eq 0 ]
    sed 's/^/#   /' "$work/race.out"
    check "perm/default-mode-0600" [ "$(stat -c %a "$sock")" = 600 ]
    check "perm/default-owner-the-daemons" \
        [ "$(stat -c %u:%g "$sock")" = "$(id -u):$(id -g)" ]
    check "perm/other-user-refused" mux_test_as 65534 65534 connect-denied
    stop_daemon TERM perm
else
    notok "perm-daemon-starts-under-umask-0" "$(tail -n 5 "$log")"
    kill "$racer" 2>/dev/null
    wait "$racer"
fi

# Given to user nobody and group nogroup, mode 0660: the owner and the
# group connect, others do not.
if UMASK=000 start_daemon --owner nobody --group nogroup --mode 0660; then
    ok "perm-daemon-starts-with-owner-group-mode"
    check "perm/mode-0660" [ "$(stat -c %a "$sock")" = 660 ]
    check "perm/owner-and-group" \
        [ "$(stat -c %U:%G "$sock")" = nobody:nogroup ]
    check "perm/owner-served" mux_test_as 65534 1000 connect
    check "perm/group-served" mux_test_as 1000 65534 connect
    check "perm/others-refused" mux_test_as 1000 1000 connect-denied
    stop_daemon TERM perm-owner
else
    notok "perm-daemon-starts-with-owner-group-mode" "$(tail -n 5 "$log")"
fi

# --- idle clients make room -------------------------------------------------

if start_daemon --max-clients-per-uid 4 --idle-timeout 1; then
    ok "idle-daemon-starts"
    mux_test idle
    alive "idle"
    check "idle/eviction-logged" \
        grep -q "evicting client [0-9]* (uid 0 pid [0-9]*), idle for" "$log"
    kill -USR1 "$pid"
    sleep 1
    stats=$(grep "MADs received" "$log" | tail -n 1)
    echo "# $stats"
    check "idle/stats-evictions-counted" \
        [ "$(count 'bound), \([0-9]*\) evicted idle')" -ge 2 ]
    stop_daemon TERM idle
else
    notok "idle-daemon-starts" "$(tail -n 5 "$log")"
fi

# --- which user may register which GIDs -------------------------------------

if start_daemon --mode 0666 --allow-gids "0=$gid_a" \
        --allow-gids "60001=$gid_b/32" --allow-gids 60001=fe80::/64; then
    ok "policy-daemon-starts"
    mux_test policy
    alive "policy"
    check "policy/refusal-logged" \
        grep -q "REGISTER .* refused: no --allow-gids rule" "$log"
    kill -USR1 "$pid"
    sleep 1
    stats=$(grep "MADs received" "$log" | tail -n 1)
    echo "# $stats"
    check "policy/stats-refusals-counted" \
        [ "$(count 'refused by --allow-gids \([0-9]*\)')" -ge 3 ]
    stop_daemon TERM policy
else
    notok "policy-daemon-starts" "$(tail -n 5 "$log")"
fi

if [ "$valgrind" = 1 ]; then
    # With -q, valgrind prints nothing but errors and leaks.
    if grep -q "^==[0-9]*== " "$work"/daemon-*.log; then
        notok "valgrind-no-errors"
        grep -h "^==" "$work"/daemon-*.log | head -n 60 | sed 's/^/# /'
    else
        ok "valgrind-no-errors"
    fi
fi
