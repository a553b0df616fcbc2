#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A lossy Ethernet link between two QEMU -netdev dgram endpoints.

Each QEMU sends its frames to one of the relay's two UDP ports on
127.0.0.1 (A to --port-a, B to --port-b); the relay passes each frame on
to the other side's netdev (--to-a, --to-b), but drops, duplicates,
reorders and delays some, with probabilities from a seeded generator:

    relay.py --port-a 7101 --port-b 7102 --to-a 7001 --to-b 7002 \\
        --seed 1 --drop 0.03 --dup 0.02 --reorder 0.02 --delay 0.02

A reordered frame is held back and sent after the next frame the same
way; a delayed one is sent --delay-ms later (default 5).  Frames only
count as RoCE when they carry UDP to port 4791; ARP, IPv6 neighbour
discovery and the programs' TCP exchange are relayed untouched unless
--all is given, so the link's own set-up does not fail by chance.  So
are RoCE frames to QP 1, RDMA-CM's connection messages (MADs): the
kernel CM sends one again only after seconds (about 6 s for RoCE), and
rping's client destroys its ID, which cancels its DREQ, right after
rdma_disconnect(): a lost DREQ leaves the server waiting forever.

A migrates to a new QEMU with a netdev of its own port: as a switch learns
a station's new port from the frame it announces itself with (QEMU sends
RARPs as a migrated guest starts), the relay sends A's frames to the
port of the first frame that comes from a port A never used, from then
on, and prints when that was.  Control, a line on --control (a UNIX
datagram socket path): "to-a PORT" names A's port (migrate.py, after
the migration: the relay prints how long after learning it, and how
many frames went to the old port meanwhile when it had not learnt),
"cut 1" / "cut 0" drops everything / nothing more than the probabilities.
A side that sends nothing for SILENCE_S or more while frames go to it
did not run (a migration's switch-over, or its QEMU held up on the host;
a peer's retransmission timer counts that time): the relay prints when,
how long and how many frames went to it meanwhile ("relay: B silent
..."), and "relay: held up" when its own loop did not run that long
(then the silence that overlaps it is the relay's).  On SIGTERM or SIGINT it prints one line of counters and exits 0:
  relay: N frames, N dropped, N duplicated, N reordered, N delayed
"""

import argparse
import ctypes
import heapq
import os
import random
import select
import signal
import socket
import sys
import time

ROCE_PORT = 4791


def roce_dest_qp(frame):
    """The BTH's destination QP of a RoCE v2 frame, or None if it is not
    UDP to port 4791 over IPv4 or IPv6, behind at most one VLAN tag."""
    off = 12
    if len(frame) < off + 2:
        return None
    etype = int.from_bytes(frame[off:off + 2], "big")
    if etype == 0x8100:
        off += 4
        if len(frame) < off + 2:
            return None
        etype = int.from_bytes(frame[off:off + 2], "big")
    off += 2
    if etype == 0x0800 and len(frame) >= off + 20:
        ihl = (frame[off] & 0x0f) * 4
        proto = frame[off + 9]
        udp = off + ihl
    elif etype == 0x86dd and len(frame) >= off + 40:
        proto = frame[off + 6]
        udp = off + 40
    else:
        return None
    if proto != 17 or len(frame) < udp + 8 + 8:
        return None
    if int.from_bytes(frame[udp + 2:udp + 4], "big") != ROCE_PORT:
        return None
    return int.from_bytes(frame[udp + 8 + 5:udp + 8 + 8], "big")


def lossy_frame(frame):
    """RoCE v2 frames but those to QP 1 (RDMA-CM's messages)."""
    qp = roce_dest_qp(frame)
    return qp is not None and qp != 1


def main():
    ap = argparse.ArgumentParser(
        description="A lossy link between two QEMU -netdev dgram endpoints")
    ap.add_argument("--port-a", type=int, required=True,
                    help="UDP port (127.0.0.1) A sends its frames to")
    ap.add_argument("--port-b", type=int, required=True,
                    help="UDP port (127.0.0.1) B sends its frames to")
    ap.add_argument("--to-a", type=int, required=True,
                    help="UDP port of A's netdev")
    ap.add_argument("--to-b", type=int, required=True,
                    help="UDP port of B's netdev")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--drop", type=float, default=0.0)
    ap.add_argument("--dup", type=float, default=0.0)
    ap.add_argument("--reorder", type=float, default=0.0)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--delay-ms", type=float, default=5.0)
    ap.add_argument("--all", action="store_true",
                    help="apply the losses to every frame, not only RoCE "
                         "frames to QPs other than 1")
    ap.add_argument("--control", help="UNIX datagram socket for commands")
    ap.add_argument("--priority", action="store_true",
                    help="run before the guests' QEMUs where allowed "
                         "(root): a session of its own at nice -10")
    args = ap.parse_args()
    if args.priority:
        run_first()

    rnd = random.Random(args.seed)
    socks = []
    for port in (args.port_a, args.port_b):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        # The relay is the link, not a receiver that may overflow: a
        # buffer the kernel's default of 208 KiB does not limit (root may
        # force it; else the most rmem_max allows), so that what it drops
        # is what --drop says.
        for opt in (getattr(socket, "SO_RCVBUFFORCE", None),
                    socket.SO_RCVBUF):
            try:
                if opt is not None:
                    s.setsockopt(socket.SOL_SOCKET, opt, RELAY_BUF)
                    break
            except OSError:
                continue
        s.bind(("127.0.0.1", port))
        s.setblocking(False)
        socks.append(s)
    dest = [args.to_b, args.to_a]       # from A (index 0) to B, and back
    ctl = None
    if args.control:
        try:
            os.unlink(args.control)
        except FileNotFoundError:
            pass
        ctl = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        ctl.bind(args.control)
    count = {"frames": 0, "dropped": 0, "duplicated": 0, "reordered": 0,
             "delayed": 0}
    held = [None, None]                 # a frame held back, per direction
    later = []                          # (time, seq, direction, frame)
    seq = 0
    cut = False
    done = []

    def stop(signum, frame):
        done.append(signum)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    def send(d, frame):
        socks[d].sendto(frame, ("127.0.0.1", dest[d]))

    # A's ports so far: a frame from another one is A's new QEMU
    a_ports = {args.to_a}
    learnt = {}                         # port -> when it was learnt

    def learn_a(port, now):
        a_ports.add(port)
        learnt[port] = now
        dest[1] = port
        print(f"relay: A is at :{port} now (its first frame from there)",
              flush=True)

    def told_a(port, now):
        if port in learnt:
            print(f"relay: told A is at :{port}, "
                  f"{(now - learnt.pop(port)) * 1000:.0f} ms after its "
                  "first frame from there", flush=True)
        elif port != dest[1]:
            a_ports.add(port)
            dest[1] = port
            print(f"relay: told A is at :{port}, before any frame from "
                  "there", flush=True)

    last_from = [None, None]            # when A (0) and B (1) last sent
    sent_to = [0, 0]                    # frames relayed to each since

    def heard(d, now):
        if (last_from[d] is not None and now - last_from[d] >= SILENCE_S
                and sent_to[d] >= SILENCE_FRAMES):
            wall = time.time() - (time.monotonic() - last_from[d])
            print(f"relay: {'AB'[d]} silent {(now - last_from[d]) * 1000:.0f} "
                  f"ms from {time.strftime('%H:%M:%S', time.localtime(wall))}"
                  f".{int(wall * 1000) % 1000:03d} while {sent_to[d]} "
                  "frames went to it", flush=True)
        last_from[d] = now
        sent_to[d] = 0

    def relay(d, frame, now):
        nonlocal seq
        count["frames"] += 1
        heard(d, now)
        sent_to[1 - d] += 1
        lossy = args.all or lossy_frame(frame)
        if cut or (lossy and rnd.random() < args.drop):
            count["dropped"] += 1
            return
        if lossy and held[d] is None and rnd.random() < args.reorder:
            held[d] = frame
            count["reordered"] += 1
            return
        if lossy and rnd.random() < args.delay:
            seq += 1
            heapq.heappush(later, (now + args.delay_ms / 1000, seq, d,
                                   frame))
            count["delayed"] += 1
        else:
            send(d, frame)
        if lossy and rnd.random() < args.dup:
            send(d, frame)
            count["duplicated"] += 1
        if held[d] is not None:
            send(d, held[d])
            held[d] = None

    loop_at = time.monotonic()
    while not done:
        timeout = 0.05
        if later:
            timeout = max(0.0, min(timeout, later[0][0] - time.monotonic()))
        rlist = socks + ([ctl] if ctl else [])
        try:
            ready, _, _ = select.select(rlist, [], [], timeout)
        except InterruptedError:
            continue
        now = time.monotonic()
        # the relay itself held up (not scheduled, or slow): a side's
        # silence that overlaps this is the relay's
        if now - loop_at >= SILENCE_S:
            wall = time.time() - (now - loop_at)
            print(f"relay: held up {(now - loop_at) * 1000:.0f} ms from "
                  f"{time.strftime('%H:%M:%S', time.localtime(wall))}"
                  f".{int(wall * 1000) % 1000:03d}", flush=True)
        loop_at = now
        while later and later[0][0] <= now:
            _, _, d, frame = heapq.heappop(later)
            send(d, frame)
        for s in ready:
            if s is ctl:
                cmd = ctl.recv(256).decode(errors="replace").split()
                if len(cmd) == 2 and cmd[0] == "to-a":
                    told_a(int(cmd[1]), now)
                elif len(cmd) == 2 and cmd[0] == "cut":
                    cut = cmd[1] == "1"
                continue
            d = socks.index(s)
            # every datagram waiting, not one per select(): Python's
            # per-call cost made the relay the slowest part of the link
            for frame, port in drain(s):
                if d == 0 and port not in a_ports:
                    learn_a(port, now)
                relay(d, frame, now)
    print("relay: %(frames)d frames, %(dropped)d dropped, "
          "%(duplicated)d duplicated, %(reordered)d reordered, "
          "%(delayed)d delayed" % count, flush=True)
    if ctl:
        os.unlink(args.control)
    return 0


def run_first():
    """The link does not stop: beside four TCG vCPUs and a migration the
    relay waited to run for up to 591 ms, longer than a QP's retry budget
    (0.5 s for timeout 14 and 7 retries), and programs ended 'transport
    retry counter exceeded' (CI, a soak).  With the kernel's autogroups
    each session shares the CPUs as one and a nice value counts only
    within it: a session of its own, whose group and process run at nice
    -10.  Each step where allowed."""
    try:
        os.setsid()
    except OSError:
        pass                            # a session leader already
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("-10")
    except OSError:
        pass                            # no autogroups, or not root
    try:
        os.nice(-10 - os.nice(0))
    except OSError:
        pass
    # out of the caller's process group, it goes with its parent
    # (PR_SET_PDEATHSIG), not with a kill of the group
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


def drain(s, most=256):
    """Up to @most datagrams waiting on non-blocking socket @s, each with
    the port it came from."""
    for _ in range(most):
        try:
            frame, addr = s.recvfrom(65536)
        except BlockingIOError:
            return
        if frame:                       # an empty datagram ends dgram
            yield frame, addr[1]


RELAY_BUF = 8 << 20
SILENCE_S = 0.25
SILENCE_FRAMES = 8


if __name__ == "__main__":
    sys.exit(main())
