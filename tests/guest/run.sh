#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make run: boot the Debian test guest with the pvrdma device and show what
# the unmodified vmw_pvrdma driver and ibv_devinfo see inside it; with
# --pingpong also run an RDMA ping-pong on the device and print its result.
#
# Usage: run.sh [options] [QEMU-BINARY [GUEST-DIR]] [-- extra QEMU arguments]
#   (make run calls: run.sh build/qemu/qemu-system-x86_64 build/guest)
#   -v             ibv_devinfo -v
#   --pingpong     also ibv_rc_pingpong (server and client in the guest, both
#                  on the pvrdma device, content checking on, 100 iterations);
#                  the run fails if the ping-pong fails
#   --no-pingpong  do not (the default; GUEST_RUN_PINGPONG=1 turns it on)
#   --shell        afterwards, a shell on the guest console (Ctrl-A x quits)
#   --console      also show the whole boot console
#   --no-pvrdma    boot with vmxnet3 alone (no ping-pong)
# If the QEMU binary has no pvrdma device yet, the guest boots without it.
# GUEST_DATAPATH_TIMEOUT: deadline of the ping-pong in seconds (default 30).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
guest_dir=${GUEST_DIR:-$top/build/guest}
qemu=${QEMU:-$top/build/qemu/qemu-system-x86_64}

opts=()
pingpong=${GUEST_RUN_PINGPONG:-1}
verbose=0
shell=0
console=0
pvrdma=1
extra=()
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        -v|--verbose) verbose=1; shift ;;
        --pingpong) pingpong=1; shift ;;
        --no-pingpong) pingpong=0; shift ;;
        --shell) shell=1; shift ;;
        --console) console=1; shift ;;
        --no-pvrdma) pvrdma=0; shift ;;
        --) shift; extra=(-- "$@"); break ;;
        -h|--help) sed -n '/^# Usage/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
        *) positional+=("$1"); shift ;;
    esac
done
[ ${#positional[@]} -le 2 ] || { echo "run.sh: too many arguments: ${positional[*]}" >&2; exit 2; }
[ ${#positional[@]} -lt 1 ] || qemu=${positional[0]}
[ ${#positional[@]} -lt 2 ] || guest_dir=${positional[1]}
export QEMU=$qemu GUEST_DIR=$guest_dir

[ -x "$qemu" ] || { echo "run.sh: no QEMU binary at $qemu (build QEMU first)" >&2; exit 1; }
if [ $pvrdma = 1 ] && ! "$qemu" -device help 2>/dev/null | grep -q '"pvrdma"'; then
    echo "run.sh: note: $qemu has no pvrdma device yet; booting with vmxnet3 alone" >&2
    pvrdma=0
fi
if [ $pingpong = 1 ] && [ $pvrdma = 0 ]; then
    echo "run.sh: note: no pvrdma device, so no RDMA ping-pong" >&2
    pingpong=0
fi
if [ $pingpong = 1 ]; then
    opts+=(--test info,rc_pingpong --append "pvrdma.timeout=${GUEST_DATAPATH_TIMEOUT:-30}")
else
    opts+=(--test info)
fi
[ $pvrdma = 1 ] || opts+=(--no-pvrdma)
[ $verbose = 1 ] && opts+=(--append pvrdma.verbose=1)
log=$guest_dir/logs/run.log
opts+=(--log "$log")

if [ $shell = 1 ]; then
    exec "$here/run-guest.sh" "${opts[@]}" --shell "${extra[@]}"
fi
[ $console = 1 ] || opts+=(--quiet)

rc=0
"$here/run-guest.sh" "${opts[@]}" "${extra[@]}" || rc=$?
if [ $console = 0 ]; then
    echo "--- inside the guest ($(cat "$guest_dir/abi" 2>/dev/null), vmw_pvrdma from Debian's source) ---"
    tr -d '\r' <"$log" | awk '$0 == "GUEST-BEGIN: info" { on = 1; next }
                              $0 == "GUEST-END: info" { on = 0 } on'
    echo "---"
fi
if [ $pingpong = 1 ]; then
    # The ping-pong: both sides' output, and the verdict on exit status and
    # output ("<n> iters in ..." on both sides, no "invalid data").
    pp=$(tr -d '\r' <"$log" | awk '$0 == "GUEST-BEGIN: rc_pingpong" { on = 1; next }
                                  $0 == "GUEST-END: rc_pingpong" { on = 0 } on')
    echo "--- RDMA ping-pong on the pvrdma device (ibv_rc_pingpong, server and client in the guest) ---"
    if [ -z "$pp" ]; then
        echo "(the guest did not run it)"
        tr -d '\r' <"$log" | grep -m1 '^GUEST-RESULT: rc_pingpong ' || true
        verdict="FAIL (not run)"
    else
        echo "$pp"
        n=$(echo "$pp" | sed -n 's/^client: .* -n \([0-9]*\) .*/\1/p' | head -1)
        srv=$(echo "$pp" | sed -n '/^--- server (exit /,/^--- client (exit /p')
        cli=$(echo "$pp" | sed -n '/^--- client (exit /,/^--- end: /p')
        if echo "$pp" | grep -q '^--- server (exit 0)$' && echo "$pp" | grep -q '^--- client (exit 0)$' &&
           echo "$srv" | grep -qE "^$n iters in [0-9.]+ seconds" &&
           echo "$cli" | grep -qE "^$n iters in [0-9.]+ seconds" &&
           ! echo "$pp" | grep -q 'invalid data'; then
            verdict="PASS: $(echo "$cli" | grep -E '^[0-9]+ (bytes|iters) in ' | tr '\n' ';' | sed 's/;$//; s/;/; /')"
        else
            verdict="FAIL: $(echo "$pp" | grep -E '^--- (server|client) \(exit|^--- deadline' | sed 's/^--- //' | tr '\n' ';' | sed 's/;$//; s/;/; /g')"
            [ $rc != 0 ] || rc=1
        fi
    fi
    echo "ping-pong: $verdict"
    echo "---"
fi
[ $rc = 0 ] || echo "run.sh: the guest run failed (status $rc); console log: $log" >&2
exit $rc
