#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Frames the host's UDP sockets dropped while a bench ran: every 0.1 s
# until SIGTERM (or --seconds), the drop counter of each socket in
# /proc/net/udp and /proc/net/udp6 (the last column; a full receive
# buffer is what raises it).  A socket's counter only grows and goes with
# the socket, so its highest value seen is what it dropped, less what it
# had already dropped when first seen at the start.  On exit, one line:
#   udp-drops TOTAL SOCKETS-THAT-DROPPED
# and one per socket that dropped, naming its owner (looked up while the
# socket lives, the first time it is seen dropping):
#   udp-drops-socket DROPPED PORT PID COMMAND
# Every UDP socket of the host counts (the guests' links, the relay's,
# anything else): run it on a machine with nothing else on UDP.
#
# Why a bench wants it: a link whose sender bursts faster than the
# receiving QEMU reads loses frames in that QEMU's socket, on top of what
# the relay drops on purpose; the device's recovery pays for both.

import os
import signal
import sys
import time


def read_drops():
    drops = {}
    for name in ("/proc/net/udp", "/proc/net/udp6"):
        try:
            with open(name) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 13:
                continue
            # (local address, inode) names one socket
            drops[(fields[1], fields[9])] = int(fields[-1])
    return drops


def socket_owner(inode):
    """(pid, command) of a process holding socket @inode, or None."""
    target = "socket:[%s]" % inode
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                if os.readlink("/proc/%s/fd/%s" % (pid, fd)) == target:
                    with open("/proc/%s/comm" % pid) as f:
                        return pid, f.read().strip()
        except OSError:
            continue
    return None


def main():
    seconds = None
    if len(sys.argv) == 3 and sys.argv[1] == "--seconds":
        seconds = float(sys.argv[2])
    elif len(sys.argv) != 1:
        print("usage: udp-drops.py [--seconds S]", file=sys.stderr)
        return 2
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    start = read_drops()
    seen = {}
    owners = {}
    t_end = None if seconds is None else time.monotonic() + seconds
    while True:
        # one last sample after the stop: what came since the previous
        for key, value in read_drops().items():
            seen[key] = max(seen.get(key, 0), value)
            if value > start.get(key, 0) and key not in owners:
                owners[key] = socket_owner(key[1]) or ("?", "?")
        if stop or (t_end is not None and time.monotonic() >= t_end):
            break
        time.sleep(0.1)
    dropped = {k: v - start.get(k, 0) for k, v in seen.items()}
    dropped = {k: v for k, v in dropped.items() if v > 0}
    print("udp-drops %d %d" % (sum(dropped.values()), len(dropped)))
    for key, value in sorted(dropped.items(), key=lambda kv: -kv[1]):
        pid, comm = owners.get(key, ("?", "?"))
        print("udp-drops-socket %d %d %s %s" %
              (value, int(key[0].split(":")[1], 16), pid, comm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
