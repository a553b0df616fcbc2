#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Where the host's CPU went while each program of a two-guests run ran.

    g2g-cpu.py LOG-DIR OUT

Follows a run of tests/guest/two-guests.sh --log-dir LOG-DIR (started
before or after this): finds each guest's QEMU in the session whose
leader's PID two-guests.sh wrote to LOG-DIR/a.pid and b.pid, and reads
guest A's console LOG-DIR/a.log as it grows.  Between the console line
"GUEST-RUN: NAME" (the client was started) and "GUEST-END: NAME" (the
client has exited and its output was printed) it counts the CPU time of
every thread of both QEMUs (/proc/PID/task/*/stat, utime + stime) and of
the host as a whole (/proc/stat), and writes to OUT one line per program:

    NAME secs=S a.main=C a.vcpu=C a.other=C b.main=C b.vcpu=C b.other=C
         host.busy=C host.idle=C

(on one line): S seconds of wall time, each C CPU seconds used in them.
"main" is the QEMU's main thread (its main loop: the netdev, the device's
engine, timers), "vcpu" its vCPU threads together ("CPU n/TCG":
run-guest.sh passes -name debug-threads=on), "other" the rest (RCU, I/O
workers); host.busy and host.idle are the whole host's, all cores (they
add up to about S times the cores).  The window includes the program's
start-up (its TCP exchange and QP set-up), mostly idle time.  Stops when
A's QEMU has exited, or after 3600 s.
"""

import os
import re
import sys
import time


def wait_pid(path, end):
    while time.monotonic() < end:
        try:
            return int(open(path).read().split()[0])
        except (OSError, ValueError, IndexError):
            time.sleep(0.2)
    return None


def stat(path):
    """(comm, fields after it) of a /proc stat file, or None if it is
    gone (comm may hold spaces and parentheses: split at the last ')')."""
    try:
        with open(path) as f:
            st = f.read()
    except OSError:
        return None
    return st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()


def qemu_of_session(sid):
    """The PID of the qemu-system-* process in session @sid, or None."""
    for p in os.listdir("/proc"):
        s = stat("/proc/%s/stat" % p) if p.isdigit() else None
        if s and s[0].startswith("qemu-system-") and int(s[1][3]) == sid:
            return int(p)
    return None


def threads(pid):
    """{'main', 'vcpu', 'other'}: CPU ticks of @pid's threads by kind."""
    ticks = {"main": 0, "vcpu": 0, "other": 0}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return ticks
    for t in tids:
        s = stat("/proc/%d/task/%s/stat" % (pid, t))
        if s is None:
            continue            # a thread that just ended
        comm, fields = s
        n = int(fields[11]) + int(fields[12])
        if int(t) == pid:
            ticks["main"] += n
        elif comm.startswith("CPU "):
            ticks["vcpu"] += n
        else:
            ticks["other"] += n
    return ticks


def host():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal
    return {"busy": v[0] + v[1] + v[2] + v[5] + v[6] + v[7],
            "idle": v[3] + v[4]}


def snapshot(pids):
    s = {"t": time.monotonic(), "host": host()}
    for who, pid in pids.items():
        s[who] = threads(pid)
    return s


def line(name, s0, s1, hz):
    secs = s1["t"] - s0["t"]
    if secs <= 0:
        return None
    out = ["%s secs=%.2f" % (name, secs)]
    for who in ("a", "b"):
        for kind in ("main", "vcpu", "other"):
            d = s1[who][kind] - s0[who][kind]
            out.append("%s.%s=%.2f" % (who, kind, d / hz))
    for kind in ("busy", "idle"):
        d = s1["host"][kind] - s0["host"][kind]
        out.append("host.%s=%.2f" % (kind, d / hz))
    return " ".join(out)


def main():
    if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    logdir, out = sys.argv[1], sys.argv[2]
    hz = os.sysconf("SC_CLK_TCK")
    end = time.monotonic() + 3600
    pids = {}
    for who in ("a", "b"):
        sid = wait_pid(os.path.join(logdir, who + ".pid"), end)
        while sid is not None and who not in pids and time.monotonic() < end:
            q = qemu_of_session(sid)
            if q is not None:
                pids[who] = q
            elif not os.path.exists("/proc/%d" % sid):
                break           # the guest's session ended before its QEMU ran
            else:
                time.sleep(0.2)
    with open(out, "w") as f:
        if len(pids) != 2:
            f.write("# no QEMUs found for %s\n" % logdir)
            return 1
        f.write("# QEMU A %d, QEMU B %d; CPU seconds\n" % (pids["a"], pids["b"]))
        f.flush()
        console = os.path.join(logdir, "a.log")
        pos = 0
        partial = ""
        started = {}
        marker = re.compile(r"^GUEST-(RUN|END): (\S+)\r?$")
        while time.monotonic() < end and os.path.exists("/proc/%d" % pids["a"]):
            try:
                with open(console, errors="replace") as c:
                    c.seek(pos)
                    text = c.read()
                    pos = c.tell()
            except OSError:
                text = ""
            lines = (partial + text).split("\n")
            partial = lines.pop()        # a line not yet complete
            for ln in lines:
                m = marker.match(ln)
                if not m:
                    continue
                kind, name = m.groups()
                if kind == "RUN":
                    started[name] = snapshot(pids)
                elif name in started:
                    res = line(name, started.pop(name), snapshot(pids), hz)
                    if res:
                        f.write(res + "\n")
                        f.flush()
            time.sleep(0.1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
