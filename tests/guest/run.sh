#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# make run: boot the Debian test guest with the pvrdma device and show what
# the unmodified vmw_pvrdma driver and ibv_devinfo see inside it.
#
# Usage: run.sh [options] [QEMU-BINARY [GUEST-DIR]] [-- extra QEMU arguments]
#   (make run calls: run.sh build/qemu/qemu-system-x86_64 build/guest)
#   -v           ibv_devinfo -v
#   --shell      afterwards, a shell on the guest console (Ctrl-A x quits)
#   --console    also show the whole boot console
#   --no-pvrdma  boot with vmxnet3 alone
# If the QEMU binary has no pvrdma device yet, the guest boots without it.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
guest_dir=${GUEST_DIR:-$top/build/guest}
qemu=${QEMU:-$top/build/qemu/qemu-system-x86_64}

opts=(--test info)
verbose=0
shell=0
console=0
pvrdma=1
extra=()
positional=()
while [ $# -gt 0 ]; do
    case $1 in
        -v|--verbose) verbose=1; shift ;;
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
[ $rc = 0 ] || echo "run.sh: the guest run failed (status $rc); console log: $log" >&2
exit $rc
