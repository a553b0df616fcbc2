#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Sample a QEMU with the pvrdma device over time (make soak).

    soak_sample.py --qmp PATH --session SID --label B --out FILE [--every S]

Finds the QEMU in session SID (run-guest.sh's), connects to the QMP
socket PATH (waiting up to 120 s for it), and every S seconds (default 60)
appends one row to FILE until that QEMU exits.  migrate.py --sample writes
the same rows for guest A, whose QEMUs come and go with its migrations.

A row: tab-separated, the columns of HEADER: the time (seconds since the
epoch, so that the rows of both guests line up), the label, the QEMU's index (0 for B; migrate.py's count for A),
its pid, its resident memory (VmRSS, KiB) and that split as qemu-rss.py
does into QEMU's own (outside the guest RAM block and TCG's code buffer),
guest RAM the guest has touched and TCG's translated code, open file
descriptors, threads,
query-pvrdma's objects in use and RoCE counters of its first device, and
TCG's translation blocks since its last flush and its flushes
(x-query-jit): TCG keeps a tree node and hash entry per block on QEMU's
heap, in QEMU's own memory, until the code buffer fills and is flushed.
"""

import argparse
import importlib.util
import os
import subprocess
import sys
import time

from qmpclient import Qmp

# qemu-rss.py's split of the resident memory: QEMU's own and guest RAM
_spec = importlib.util.spec_from_file_location(
    "qemu_rss", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                             "qemu-rss.py"))
qemu_rss = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(qemu_rss)

HEADER = ("t\tlabel\tqemu\tpid\trss_kib\town_kib\tram_kib\ttcg_kib\tfds"
          "\tthreads"
          "\tpds\tcqs\tqps\tmrs"
          "\tmr_pages\tuser_contexts\ttx_frames\trx_frames\ttimeouts"
          "\tretransmits\tseq_naks\tduplicates\ttbs\ttb_flushes")

DEVICE_KEYS = ("pds", "cqs", "qps", "mrs", "mr-pages", "user-contexts")
ROCE_KEYS = ("tx-frames", "rx-frames", "timeouts", "retransmits",
             "seq-naks", "duplicates")


def proc_stats(pid):
    """(VmRSS, QEMU's own resident memory, guest RAM resident, TCG code
    resident, all in KiB; open fds, threads) of pid, or None once it is
    gone."""
    try:
        rss = threads = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        own, ram, tcg = qemu_rss.memory_split(pid)
        return rss, own, ram, tcg, fds, threads
    except (OSError, ValueError, TypeError):
        return None


def device_stats(cmd):
    """query-pvrdma's counters of the first device (by DEVICE_KEYS, then
    ROCE_KEYS), '-' for those it could not give."""
    try:
        devs = cmd("query-pvrdma")
    except (RuntimeError, OSError, ValueError):
        devs = []
    if not devs:
        return ["-"] * (len(DEVICE_KEYS) + len(ROCE_KEYS))
    d = devs[0]
    r = d.get("roce", {})
    return ([str(d.get(k, "-")) for k in DEVICE_KEYS] +
            [str(r.get(k, "-")) for k in ROCE_KEYS])


def jit_stats(cmd):
    """[TB count, TB flush count] of x-query-jit (TCG only), '-' for those
    it could not give."""
    try:
        text = cmd("x-query-jit").get("human-readable-text", "")
    except (RuntimeError, OSError, ValueError, AttributeError):
        text = ""
    found = {}
    for line in text.splitlines():
        for key in ("TB count", "TB flush count"):
            if line.startswith(key + " "):
                found[key] = line[len(key):].split()[0]
    return [found.get("TB count", "-"), found.get("TB flush count", "-")]


def row(t, label, idx, pid, cmd):
    """One row, or None when the QEMU is gone."""
    st = proc_stats(pid)
    if st is None:
        return None
    return "\t".join([f"{t:.0f}", label, str(idx), str(pid)] +
                     [str(v) for v in st] + device_stats(cmd) +
                     jit_stats(cmd))


def qemu_of_session(sid, timeout=120):
    """The pid of the QEMU in session sid (run-guest.sh's)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        out = subprocess.run(["ps", "-o", "pid=,comm=", "-s", str(sid)],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            pid, comm = line.split(None, 1)
            if comm.startswith("qemu-system"):
                return int(pid)
        time.sleep(0.5)
    raise RuntimeError(f"no QEMU in session {sid} after {timeout} s")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--qmp", required=True)
    p.add_argument("--session", type=int, required=True)
    p.add_argument("--label", default="B")
    p.add_argument("--out", required=True)
    p.add_argument("--every", type=float, default=60)
    a = p.parse_args()
    try:
        pid = qemu_of_session(a.session)
        q = Qmp(a.qmp, timeout=120, poll=0.2)
    except RuntimeError as e:
        print(f"soak_sample: {e}", file=sys.stderr)
        return 1
    with open(a.out, "a") as out:
        while True:
            r = row(time.time(), a.label, 0, pid, q.cmd)
            if r is None:
                break
            out.write(r + "\n")
            out.flush()
            time.sleep(a.every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
