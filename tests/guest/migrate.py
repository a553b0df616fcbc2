#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Lane 2 with live migration: the test guest's RDMA programs run while
the VM moves between QEMUs on this machine.

Boots the lane-2 guest (tests/guest/build-guest.sh) as run-guest.sh does,
with its console in a file and a QMP socket.  The guest's init announces
each program it starts with "GUEST-MIGRATE: <section>"; from then on,
while the program runs, the VM is migrated to a new QEMU started with the
same command line and -incoming, and the old one quits: --rounds times
there and back (two migrations per round).  Each migration is counted only
if the program was still running when it completed (its section's
GUEST-END not yet written).

Writes the guest's whole console (the QEMUs' logs in order) to --log, with
the last QEMU's exit status in <log>.rc, for `check.sh --console` to judge
the programs; one "migration: ..." line per migration (QEMU's total time
and downtime); and per program "PASS: migration-<section>" when it saw
2 x --rounds migrations, else "FAIL: ...".  The last line is
"migration: N passed, N failed".  Exit status 0 only if all passed.

--peer-port (two-guests.sh --migrate) runs guest A of two guests on one
link instead: its netdev is -netdev dgram, each QEMU on a port of its own
(the first on --peer-port), sending to the relay (tests/guest/relay.py) at
--peer-remote; after each migration the relay is told, on --peer-relay,
to send A's frames to the new QEMU.  The guest's scenarios and kernel
command line come from --test and --append; each "migration:" line also
shows the RoCE counters of the QEMU A left.

--sample FILE (make soak) appends a row of soak_sample.py's for the QEMU
running the guest every --sample-every seconds: its memory, descriptors
and the device's counters, across the QEMUs the guest moves through.

--bench instead prints figures (make bench-migration): QEMU's total
migration time and downtime, medians of --rounds * 2 migrations, for the
same guest without the device, with the device idle, and with the device
under ib_write_bw.
"""

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import soak_sample  # noqa: E402  (beside this file)
from qmpclient import Qmp  # noqa: E402
TOP = os.path.dirname(os.path.dirname(HERE))


def say(msg):
    print(f"[migrate] {msg}", file=sys.stderr, flush=True)


class Peer:
    """Guest A's end of a link to guest B through the relay: the netdev of
    each of its QEMUs, and where the relay sends A's frames."""

    def __init__(self, relay, remote, first_port):
        self.relay = relay
        self.remote = remote
        self.first_port = first_port
        self.ports = {}

    def netdev(self, idx):
        if idx == 0:
            port = self.first_port
        else:
            # a free port: bound and released (the QEMU binds it at once)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
        self.ports[idx] = port
        return ["-netdev", "dgram,id=n0,local.type=inet,"
                f"local.host=127.0.0.1,local.port={port},remote.type=inet,"
                f"remote.host=127.0.0.1,remote.port={self.remote}"]

    def follow(self, vm):
        """The relay sends A's frames to vm's netdev from now on."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(f"to-a {self.ports[vm.idx]}".encode(), self.relay)


def roce(vm):
    """The RoCE counters of vm's pvrdma port as one string, or None when
    the QEMU does not answer."""
    try:
        for dev in vm.qmp.cmd("query-pvrdma"):
            if "roce" in dev:
                r = dev["roce"]
                return (f"tx {r['tx-frames']} rx {r['rx-frames']} timeouts "
                        f"{r['timeouts']} retransmits {r['retransmits']} "
                        f"seq-naks {r['seq-naks']} duplicates "
                        f"{r['duplicates']}")
    except (RuntimeError, OSError, KeyError, ValueError):
        return None
    return "no RoCE port"


class Vm:
    """One QEMU of the guest."""

    def __init__(self, idx, base, work, incoming, peer=None):
        self.idx = idx
        self.console = os.path.join(work, f"console.{idx}")
        qmp = os.path.join(work, f"qmp.{idx}")
        args = base + (peer.netdev(idx) if peer else
                       ["-netdev", "user,id=n0,restrict=on"])
        args += ["-serial", f"file:{self.console}",
                       "-qmp", f"unix:{qmp},server=on,wait=off"]
        if incoming:
            args += ["-incoming", "defer"]
        self.err = open(os.path.join(work, f"qemu.{idx}.err"), "w")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=self.err,
                                     stderr=subprocess.STDOUT)
        self.qmp = Qmp(qmp)

    def wait_status(self, want, timeout=120):
        end = time.monotonic() + timeout
        while True:
            st = self.qmp.cmd("query-migrate")
            if st.get("status") == want:
                return st
            if st.get("status") == "failed":
                raise RuntimeError(f"migration failed on QEMU {self.idx}: "
                                   f"{st.get('error-desc')}")
            if time.monotonic() > end:
                raise RuntimeError(f"QEMU {self.idx}: no '{want}' after "
                                   f"{timeout} s ({st.get('status')})")
            time.sleep(0.01)


def migrate(src, idx, base, work, caps=None, peer=None):
    """Move the VM from src to a new QEMU; returns it and the figures
    (with peer: also the source's RoCE counters, as info["roce"])."""
    dst = Vm(idx, base, work, incoming=True, peer=peer)
    uri = f"unix:{os.path.join(work, f'mig.{idx}')}"
    for q in (src, dst):
        if caps:
            q.qmp.cmd("migrate-set-capabilities", capabilities=[
                {"capability": c, "state": True} for c in caps])
    dst.qmp.cmd("migrate-incoming", uri=uri)
    src.qmp.cmd("migrate", uri=uri)
    info = src.wait_status("completed")
    if peer:
        peer.follow(dst)
        info["roce"] = roce(src)
    dst.wait_status("completed")
    src.qmp.cmd("quit")
    rc = src.proc.wait(timeout=60)
    src.qmp.close()
    if rc != 0:
        raise RuntimeError(f"QEMU {src.idx} exited {rc} after migrating")
    return dst, info


def guest_base(qemu, guest_dir, append, pvrdma=True,
               mac="52:54:00:12:34:56"):
    """The command line of run-guest.sh, minus netdev, console and
    monitor."""
    fw = subprocess.run(
        ["bash", "-c", f'. "{HERE}/lib.sh"; qemu_fw_args "$1" && '
         'printf "%s\\n" "${fw[@]}"', "-", qemu],
        check=True, capture_output=True, text=True).stdout.split("\n")[:-1]
    args = [qemu, "-accel", "tcg", "-M", "pc", "-m", "1G", "-smp", "2",
            "-nodefaults", "-display", "none", "-no-reboot"] + fw + [
        "-kernel", os.path.join(guest_dir, "vmlinuz"),
        "-initrd", os.path.join(guest_dir, "initrd.img"),
        "-append", "console=ttyS0 panic=-1 quiet " + append,
        "-device", "vmxnet3,addr=10.0,multifunction=on,netdev=n0,"
                   f"mac={mac},romfile="]
    if pvrdma:
        args += ["-device", "pvrdma,addr=10.1"]
    return args


def console_text(vms):
    text = ""
    for v in vms:
        try:
            with open(v.console, errors="replace") as f:
                text += f.read()
        except OSError:
            pass
    return text.replace("\r", "")


def fmt(info):
    ram = info.get("ram", {})
    return (f"total {info.get('total-time', '?')} ms, downtime "
            f"{info.get('downtime', '?')} ms, setup "
            f"{info.get('setup-time', '?')} ms, "
            f"{ram.get('transferred', 0) // 1024} KiB sent"
            + (f"; RoCE counters of the QEMU it left: "
               f"{info['roce'] or 'none'}" if "roce" in info else ""))


def run_lane(a, work, pvrdma=True, infos=None):
    append = (f"pvrdma.test={a.test} pvrdma.timeout={a.tool_timeout} "
              f"pvrdma.migscale={a.scale} pvrdma.shell=0 {a.append}")
    base = guest_base(a.qemu, a.guest_dir, append.strip(), pvrdma, a.mac)
    peer = None
    if a.peer_port:
        peer = Peer(a.peer_relay, a.peer_remote, a.peer_port)
    say("booting: " + " ".join(base))
    vms = [Vm(0, base, work, incoming=False, peer=peer)]
    vm = vms[0]
    done = {}                       # section -> migrations while it ran
    deadline = time.monotonic() + a.timeout
    failed = None
    last = None                     # the RoCE counters of the current QEMU
    next_sample = 0
    try:
        while vm.proc.poll() is None:
            if time.monotonic() > deadline:
                failed = f"timeout after {a.timeout} s"
                break
            if peer:
                last = roce(vm) or last
            if a.sample and time.monotonic() >= next_sample:
                next_sample = time.monotonic() + a.sample_every
                r = soak_sample.row(time.time(), "A", vm.idx, vm.proc.pid,
                                    vm.qmp.cmd)
                if r:
                    with open(a.sample, "a") as f:
                        f.write(r + "\n")
            # An announcement is in the console of the QEMU that ran the
            # guest then: the last two QEMUs' consoles suffice (a soak of
            # hours has dozens, and this runs five times a second).
            text = console_text(vms[-2:])
            # whole lines only: the console may end in the middle of one
            todo = [s for s in re.findall(r"^GUEST-MIGRATE: (\S+)\n", text,
                                          re.M) if s not in done]
            if not todo:
                time.sleep(0.2)
                continue
            sec = todo[0]
            done[sec] = 0
            time.sleep(a.settle)
            for _ in range(2 * a.rounds):
                if f"GUEST-END: {sec}\n" in console_text(vms[-2:]):
                    break
                vm, info = migrate(vm, len(vms), base, work, peer=peer)
                vms.append(vm)
                ran = f"GUEST-END: {sec}\n" not in console_text(vms[-2:])
                done[sec] += ran
                if infos is not None and ran:
                    infos.append(info)
                print(f"migration: {sec}: #{len(vms) - 1} to QEMU "
                      f"{vm.idx}: {fmt(info)}"
                      f"{'' if ran else ' (the program had ended)'}",
                      flush=True)
        if failed is None:
            vm.proc.wait(timeout=a.timeout)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        failed = str(e)
    for v in vms:
        if v.proc.poll() is None:
            v.proc.kill()
            v.proc.wait()
    with open(a.log, "w") as f:
        f.write(console_text(vms))
    with open(a.log + ".rc", "w") as f:
        rc = vm.proc.returncode if failed is None else 1
        f.write(f"{rc}\n")
    if peer:
        print(f"migration: RoCE counters of the last QEMU (#{vm.idx}), last "
              f"read: {last or 'none'}", flush=True)
    npass = nfail = 0
    for sec, n in done.items():
        if n >= 2 * a.rounds:
            print(f"PASS: migration-{sec}")
            npass += 1
        else:
            print(f"FAIL: migration-{sec}\n#   {n} of {2 * a.rounds} "
                  "migrations completed while the program ran")
            nfail += 1
    if failed or not done:
        print(f"FAIL: migration-harness\n#   {failed or 'no program announced'}"
              f" (QEMU logs in {work})")
        nfail += 1
    print(f"migration: {npass} passed, {nfail} failed", flush=True)
    return nfail == 0


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def run_bench(a, work):
    cases = [("no pvrdma (vmxnet3 only)", "idle", False),
             ("pvrdma idle", "probe,idle", True),
             ("pvrdma under ib_write_bw", "probe,mig_write_bw", True)]
    rows = []
    for label, test, pvrdma in cases:
        infos = []
        a.test = test
        a.log = os.path.join(work, "bench.log")
        say(f"bench: {label}")
        run_lane(a, work, pvrdma, infos)
        rows.append((label, infos))
    print(f"{'guest (1 GiB, TCG, 2 vCPUs)':32} {'runs':>4} "
          f"{'total ms':>9} {'downtime ms':>12} {'min-max':>10} "
          f"{'MiB sent':>9}")
    for label, infos in rows:
        down = [i.get("downtime", 0) for i in infos]
        print(f"{label:32} {len(infos):>4} "
              f"{median([i.get('total-time', 0) for i in infos]):>9} "
              f"{median(down):>12} "
              f"{(str(min(down)) + '-' + str(max(down))) if down else '-':>10} "
              f"{median([i['ram']['transferred'] >> 20 for i in infos]):>9}")
    return all(len(i) >= 2 * a.rounds for _, i in rows)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--qemu", default=os.environ.get(
        "QEMU", os.path.join(TOP, "build/qemu/qemu-system-x86_64")))
    p.add_argument("--guest-dir", default=os.environ.get(
        "GUEST_DIR", os.path.join(TOP, "build/guest")))
    p.add_argument("--test", default="migration",
                   help="the guest's scenarios (pvrdma.test)")
    p.add_argument("--rounds", type=int, default=3,
                   help="round trips per program (default 3)")
    p.add_argument("--scale", type=int, default=1,
                   help="program lengths, as a multiple (pvrdma.migscale)")
    p.add_argument("--settle", type=float, default=1.0,
                   help="seconds between a program's start and the first "
                        "migration")
    p.add_argument("--tool-timeout", type=int, default=240,
                   help="deadline of each program pair in the guest")
    p.add_argument("--timeout", type=int, default=1500)
    p.add_argument("--log", default=None)
    p.add_argument("--bench", action="store_true",
                   help="print migration figures (make bench-migration)")
    p.add_argument("--keep", action="store_true",
                   help="keep the QEMUs' logs and sockets")
    p.add_argument("--append", default="",
                   help="more kernel command line for the guest")
    p.add_argument("--mac", default="52:54:00:12:34:56",
                   help="the vmxnet3's MAC address")
    p.add_argument("--work", default=None,
                   help="the QEMUs' logs and sockets (default "
                        "GUEST-DIR/migration)")
    p.add_argument("--peer-port", type=int, default=0,
                   help="guest A of two: its first QEMU's dgram port")
    p.add_argument("--peer-remote", type=int, default=0,
                   help="guest A of two: the relay's port for A's frames")
    p.add_argument("--peer-relay", default=None,
                   help="guest A of two: the relay's control socket")
    p.add_argument("--sample", default=None,
                   help="append soak_sample.py's rows for the running "
                        "QEMU to this file (make soak)")
    p.add_argument("--sample-every", type=float, default=60,
                   help="seconds between two --sample rows (default 60)")
    a = p.parse_args()
    if a.peer_port and not (a.peer_remote and a.peer_relay):
        p.error("--peer-port wants --peer-remote and --peer-relay")
    work = a.work or os.path.join(a.guest_dir, "migration")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if a.log is None:
        a.log = os.path.join(a.guest_dir, "logs", "migration.log")
    # written at the end: a missing directory must not lose the run
    os.makedirs(os.path.dirname(os.path.abspath(a.log)), exist_ok=True)
    ok = run_bench(a, work) if a.bench else run_lane(a, work)
    if ok and not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
