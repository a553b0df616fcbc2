#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""make patches: the device as a git format-patch series against QEMU.

  AUTHOR="Name <address>" make-patches.py PROJECT-DIR BUILD-DIR

AUTHOR is the identity of every patch (author, committer, Signed-off-by),
of the cover letter and of the MAINTAINERS section; there is no default.

Unpacks the QEMU source that scripts/qemu-tree.sh fetched into BUILD-DIR/dl
(10.0.x or 10.2.x, which picks scripts/qemu-hook.patch or
scripts/qemu-hook-10.2.patch) into a git repository under
BUILD-DIR/patches/tree, commits it as the base, then adds the device in
the commits of PREP[version] + DEVICE below, and writes the series with a
cover letter to BUILD-DIR/patches/series/.

What a commit holds is computed anew for each commit from what the commits
up to it bring:
 - this project's files (whole files), in a "prefix version" where a
   later commit completes them: EDITS, STUBS, and hw/rdma/meson.build,
   whose paragraphs come with the files they name;
 - QEMU's files as pristine + the hook patch's hunks that the commits'
   rules claim (by file and by text; a hunk no rule claims is an error,
   so the series always carries all of the hook), with the hook's added
   lines that name a part not there yet left out (hook_line());
 - what only the series has: the MAINTAINERS sections, the docs index,
   the note in removed-features.rst and the unit tests in
   tests/unit/meson.build.
The last commit's tree holds this project's files as they are.
"""

import fnmatch
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

AUTHOR_RE = re.compile(r"^([^<>@]*[^<>@\s])\s*<([^<>\s]+@[^<>\s]+)>$")


def P(pid, subject, body, files=(), hunks=(), tags=()):
    """A commit: project files (or directories), hook rules, trailers."""
    return dict(id=pid, subject=subject, body=body, files=list(files),
                hunks=list(hunks), tags=list(tags))


NAGLE_BODY = (
    "The connecting side of -netdev stream turns TCP_NODELAY on (\"Disable\n"
    "Nagle algorithm on TCP sockets to reduce latency\"); the side that\n"
    "accepted the connection keeps Nagle's algorithm, so its small frames\n"
    "wait for the peer's delayed ACK.  Two guests running RDMA over RoCE v2\n"
    "on such a link measured 22 ms per ib_send_lat round trip, 38 us over\n"
    "-netdev dgram.  The listener has lacked it since it was added%s.")
NAGLE_FIXES = ('Fixes: 5166fe0ae46d ("qapi: net: add stream and dgram '
               'netdevs")', "Cc: qemu-stable@nongnu.org")
TCG_BODY = (
    "memory_region_enable_lockless_io() lets a region's handlers run\n"
    "without the BQL, but the TCG slow path still takes it around every\n"
    "MMIO access (BQL_LOCK_GUARD() in do_ld_mmio_beN() and friends), so a\n"
    "TCG vCPU that hammers such a region contends for the lock with the\n"
    "other vCPUs and the main loop as before.  Take it only for regions\n"
    "that need it, as prepare_mmio_access() does for KVM.\n\n"
    "pvrdma's doorbell page is such a region: a busy-polling RDMA program\n"
    "writes a doorbell on every empty poll.")

PREP = {
    "10.0": [
        P("edk2", "meson: unpack only the edk2 blobs that the source tree has",
          "A source tree without firmware blobs (Debian's +ds orig tarball,\n"
          "from which this series is made) has no edk2 images; do not try\n"
          "to unpack them.  Debian carries the same change as\n"
          "skip-unpack-edk2-blobs.patch; the series needs it to build.",
          hunks=[(r"^meson\.build$", r"edk2")]),
        P("lockless", "memory: BQL-free MMIO regions",
          "Backport of upstream commit 73c520b08887 (\"memory: reintroduce\n"
          "BQL-free fine-grained PIO/MMIO\", Igor Mammedov, first released\n"
          "in QEMU 10.2.0) for 10.0: memory_region_enable_lockless_io()\n"
          "marks a region whose handlers take the BQL themselves where they\n"
          "need it, so that prepare_mmio_access() does not take it for them.\n"
          "The device's re-entrancy guard is not thread-safe and is off for\n"
          "such a region.  Same API, field and test as upstream; the\n"
          "documentation comment is this series' own.",
          hunks=[(r"^(include/exec/memory\.h|system/memory\.c|"
                  r"system/physmem\.c)$", r"")]),
        P("tcg", "accel/tcg: no BQL around MMIO to lockless regions",
          TCG_BODY, hunks=[(r"^accel/tcg/cputlb\.c$", r"")]),
        P("nagle", "net/stream: disable Nagle's algorithm on the listening "
          "side too", NAGLE_BODY % "", hunks=[(r"^net/stream\.c$", r"")],
          tags=NAGLE_FIXES),
    ],
    "10.2": [
        P("blobs", "meson: unpack and install only the blobs that the source "
          "tree has",
          "A source tree without firmware blobs (Debian's +ds orig tarball,\n"
          "from which this series is made) has no edk2 images and no\n"
          "prebuilt .dtb files: do not unpack the former, and without dtc\n"
          "install the latter only when blobs are installed at all\n"
          "(--disable-install-blobs asks for none).  The series needs it to\n"
          "build.",
          hunks=[(r"^meson\.build$", r"edk2"),
                 (r"^pc-bios/dtb/meson\.build$", r"")]),
        P("cxl", "hw/cxl: add the cxl_fmws_get_all_sorted() stub",
          "hw/acpi/cxl.c calls cxl_fmws_get_all_sorted(), and ACPI_X86\n"
          "selects ACPI_CXL even without CONFIG_CXL, so a build with\n"
          "--without-default-devices and a PC machine does not link.\n"
          "Return an empty list, as the other stubs do.",
          hunks=[(r"^hw/cxl/cxl-host-stubs\.c$", r"")]),
        P("tcg", "accel/tcg: no BQL around MMIO to lockless regions",
          TCG_BODY, hunks=[(r"^accel/tcg/cputlb\.c$", r"")]),
        P("nagle", "net/stream: disable Nagle's algorithm on the listening "
          "side too", NAGLE_BODY % "\n(to net/stream.c; it has moved to "
          "net/stream_data.c since)",
          hunks=[(r"^net/stream_data\.c$", r"")], tags=NAGLE_FIXES),
    ],
}

DEVICE = [
    P("docs", "docs/system: pvrdma, a paravirtual RDMA device",
      "The device comes back as a new implementation of VMware's PVRDMA\n"
      "for the unmodified vmw_pvrdma guest driver, with a built-in software\n"
      "RDMA engine as its default backend.  This page says what it is, how\n"
      "to run it with either backend, its properties, management,\n"
      "migration and limits; the project's docs/pvrdma.txt has the\n"
      "details, section by section.  removed-features.rst says that the\n"
      "device removed in 9.1 is back.",
      files=["docs/system/devices/pvrdma.rst"]),
    P("core", "hw/rdma: the RDMA device core",
      "The objects of an RDMA device (user contexts, PDs, CQs, QPs, SRQs,\n"
      "MRs, the GID table) in tables of handles, each created only after\n"
      "every check passed (the IB QP state machine is a table), the\n"
      "backend interface (rdma_backend.h) and checked access to guest\n"
      "memory (rdma_utils.c: page directories walked once, every DMA's\n"
      "MemTxResult checked).  rdma_compat.h is the one place that knows\n"
      "QEMU 10.0's API from 10.1's.\n\n"
      "Built with CONFIG_PVRDMA, which no machine selects yet: the device\n"
      "front-end that uses the core comes next.",
      files=["hw/rdma/Kconfig", "hw/rdma/meson.build", "hw/rdma/rdma_rm.c",
             "hw/rdma/rdma_rm.h", "hw/rdma/rdma_utils.c",
             "hw/rdma/rdma_utils.h", "hw/rdma/rdma_wr.h",
             "hw/rdma/rdma_backend.h", "hw/rdma/rdma_compat.h",
             "hw/rdma/trace-events", "hw/rdma/trace.h"],
      hunks=[(r"^hw/(Kconfig|meson\.build)$", r"rdma"),
             (r"^meson\.build$", r"'hw/rdma'")]),
    P("vmw", "hw/rdma/vmw: the VMware PVRDMA front-end",
      "PCI function 1 beside a vmxnet3: the guest ABI (pvrdma_abi.h,\n"
      "checked field by field against Linux's vmw_pvrdma headers), the\n"
      "registers, the device shared region, the device and object rings,\n"
      "the commands (a table with each command's response size), the\n"
      "doorbells (a lockless region: a busy-polling program writes one on\n"
      "every empty poll) and the work requests.  Every guest field is\n"
      "converted and checked where it enters the device.  A unit test\n"
      "checks the structures and constants that the guest's user space\n"
      "shares with the device against Linux's <rdma/vmw_pvrdma-abi.h>.\n\n"
      "The device is on by default where PCI devices are.  It has no\n"
      "backend yet, so realize fails saying so, and it does not migrate.",
      files=["hw/rdma/vmw/pvrdma.h", "hw/rdma/vmw/pvrdma_abi.h",
             "hw/rdma/vmw/pvrdma_cmd.c", "hw/rdma/vmw/pvrdma_dev_ring.c",
             "hw/rdma/vmw/pvrdma_dev_ring.h", "hw/rdma/vmw/pvrdma_main.c",
             "hw/rdma/vmw/pvrdma_qp_ops.c", "hw/rdma/vmw/trace-events",
             "hw/rdma/vmw/trace.h", "tests/unit/pvrdma-abi-list.h",
             "tests/unit/pvrdma-abi-test.c", "tests/unit/pvrdma-abi-uapi.c",
             "tests/unit/pvrdma-abi.h"]),
    P("wire", "hw/rdma/soft: RoCE v2 packets and frames, with unit tests",
      "The soft backend's wire format: the IB transport opcodes and their\n"
      "headers, packets to Ethernet/IPv4/IPv6/UDP frames and back with the\n"
      "ICRC (folded CRC32 where the host has it, zlib's crc32() elsewhere).\n"
      "A frame from the link is hostile input: every length is checked.\n"
      "The unit tests build and parse every opcode, check the ICRC against\n"
      "known values, and refuse truncated and corrupted frames.",
      files=["hw/rdma/soft/rdma_soft_crc.c", "hw/rdma/soft/rdma_soft_opcode.c",
             "hw/rdma/soft/rdma_soft_pkt.h", "hw/rdma/soft/rdma_soft_wire.c",
             "hw/rdma/soft/rdma_soft_wire.h",
             "tests/unit/rdma-soft-opcode-test.c",
             "tests/unit/rdma-soft-wire-test.c"]),
    P("engine", "hw/rdma/soft: the soft RDMA engine",
      "A software RDMA engine after Linux rxe: per QP a requester (send WRs\n"
      "into request packets, outstanding WRs in PSN order), a responder\n"
      "(placement, receive completions, ACKs, NAKs and READ responses) and\n"
      "a completer (send completions in PSN order, RNR waits), which\n"
      "exchange packets only, through one delivery loop; keys, access\n"
      "rights and data movement in guest memory; host atomics for remote\n"
      "atomics.  Work runs inside the device's entry points with a budget,\n"
      "the rest in a bottom half.\n\n"
      "It becomes the device's default backend.  Its port has no link yet:\n"
      "QPs of one device talk to each other.",
      files=["hw/rdma/soft/rdma_soft.c", "hw/rdma/soft/rdma_soft.h",
             "hw/rdma/soft/rdma_soft_comp.c", "hw/rdma/soft/rdma_soft_link.c",
             "hw/rdma/soft/rdma_soft_mem.c", "hw/rdma/soft/rdma_soft_req.c",
             "hw/rdma/soft/rdma_soft_resp.c"]),
    P("port", "hw/rdma/soft: RoCE v2 on function 0's link",
      "A RoCE NIC shares its Ethernet port with the NIC function.  The port\n"
      "is a net filter on the vmxnet3's netdev, made when the guest adds\n"
      "its first GID: frames for the device's GIDs are taken before the\n"
      "NIC sees them, everything else passes untouched, and frames leave\n"
      "as the vmxnet3's.  Retransmission, duplicate detection and the\n"
      "responder resources of IB's reliable connection make the link\n"
      "lossy-safe; guests on one link and Linux Soft-RoCE peers interoperate.",
      files=["hw/rdma/soft/rdma_soft_port.c"]),
    P("migration", "hw/rdma: migration (soft backend)",
      "The device's registers, the DSR as loaded, every object (one array\n"
      "of records per type, each checked on load as its creation command\n"
      "was), and the soft engine's transport state: PSNs, outstanding WRs,\n"
      "RNR waits and retransmission timers, messages in progress.  RDMA\n"
      "programs keep running across a migration.  The ibverbs backend\n"
      "will block migration.",
      files=["hw/rdma/rdma_rm_vmstate.c", "hw/rdma/soft/rdma_soft_vmstate.c"]),
    P("qapi", "qapi: query-pvrdma and RDMA_GID_STATUS_CHANGED",
      "query-pvrdma shows each device: its backend and port, the GID table,\n"
      "the objects and memory it holds against their bounds, and the\n"
      "port's counters.  RDMA_GID_STATUS_CHANGED, with the members of the\n"
      "removed device's event, tells management software (libvirt) which\n"
      "GIDs the guest added or removed, paced so that a guest cannot flood\n"
      "the monitor.",
      files=["qapi/pvrdma.json", "hw/rdma/vmw/pvrdma_qmp.c",
             "hw/rdma/pvrdma-stub.c"],
      hunks=[(r"^qapi/(meson\.build|qapi-schema\.json)$", r"pvrdma")]),
    P("hmp", "hmp: info pvrdma",
      "The human view of query-pvrdma.",
      files=["hw/rdma/pvrdma-hmp.c"],
      hunks=[(r"^(hmp-commands-info\.hx|include/monitor/hmp\.h)$",
              r"pvrdma")]),
    P("qtest", "tests/qtest: pvrdma-test, the device's commands and rings",
      "The device driven as the vmw_pvrdma driver drives it: PCI config,\n"
      "registers, a DSR and rings in guest memory, every command and its\n"
      "error paths, doorbells, MSI-X, reset and unplug, query-pvrdma and\n"
      "info pvrdma, hostile input.",
      files=["tests/qtest/pvrdma-test.c", "tests/qtest/pvrdma-qtest.c",
             "tests/qtest/pvrdma-qtest.h"],
      hunks=[(r"^tests/qtest/meson\.build$", r"pvrdma")]),
    P("qtest-dp", "tests/qtest: pvrdma-datapath-test, the soft engine",
      "Every work request type between QPs of one device, completions and\n"
      "their errors, RNR, SRQs, fast registration, and two vCPUs of a TCG\n"
      "guest hammering the doorbells (pvrdma-hammer-boot.S).",
      files=["tests/qtest/pvrdma-datapath-test.c", "tests/qtest/pvrdma-dp.c",
             "tests/qtest/pvrdma-dp.h", "tests/qtest/pvrdma-hammer-boot.S",
             "tests/qtest/pvrdma-hammer-boot.h"]),
    P("qtest-mig", "tests/qtest: pvrdma-migration-test",
      "Migration with objects and work in flight, and incoming streams\n"
      "that must be refused.",
      files=["tests/qtest/pvrdma-migration-test.c"]),
    P("qtest-wire", "tests/qtest: pvrdma-wire-test, two devices on one link",
      "Two QEMUs on a -netdev dgram link, and a lossy relay between them\n"
      "that drops, duplicates, reorders and delays frames.",
      files=["tests/qtest/pvrdma-wire-test.c"]),
    P("ibverbs", "hw/rdma/ibverbs: a backend on a host RDMA device",
      "ibdev= selects a host RDMA device (an HCA, an SR-IOV VF, Linux\n"
      "Soft-RoCE) through libibverbs: guest MRs are aliased into one range\n"
      "of QEMU's address space with mremap() per run of contiguous pages\n"
      "and registered with the guest's iova; QPs, CQs and SRQs are the\n"
      "host's; RDMA-CM MADs go through rdmacm-mux (rdmacm-mux.h is the\n"
      "protocol), which shares the port's CM class among QEMU instances.\n"
      "Linux hosts with rdma-core (configure --enable-rdma) only; the\n"
      "backend blocks migration.  A unit test checks the mapping of page\n"
      "lists into runs.",
      files=["hw/rdma/ibverbs", "contrib/rdmacm-mux/rdmacm-mux.h",
             "tests/unit/rdma-ibv-map-test.c"]),
    P("mux", "contrib/rdmacm-mux: share an RDMA port's CM MADs among QEMU "
      "instances",
      "Only one agent may register for the CM class on a port; rdmacm-mux\n"
      "does and serves the pvrdma devices of any number of QEMU instances\n"
      "over a UNIX socket.  With a man page and a systemd unit template.",
      files=["contrib/rdmacm-mux"],
      hunks=[(r"^meson\.build$", r"rdmacm-mux"),
             (r"^(meson_options\.txt|scripts/meson-buildoptions\.sh)$",
              r"ibumad|rdmacm")]),
]

# This project's files that the series carries (whole trees) and those it
# leaves out (the project's own test drivers and recorded captures).
OURS = ["hw/rdma", "contrib/rdmacm-mux", "qapi/pvrdma.json",
        "tests/qtest/pvrdma-*", "tests/unit/*.[ch]",
        "docs/system/devices/pvrdma.rst"]

# Prefix versions: until the commit UNTIL, FILE reads with OLD (a text, or
# the span from one text to another) replaced by NEW.  Each OLD must be
# there exactly once, so an edit that no longer fits is an error.
EDITS = [
    ("vmw", "hw/rdma/Kconfig",
     "    default y if PCI_DEVICES\n"
     "    depends on PCI && MSI_NONBROKEN && VMXNET3_PCI\n", ""),
    ("engine", "hw/rdma/vmw/pvrdma_main.c",
     "    return rdma_soft_backend_new(&s->rm, PCI_DEVICE(s), errp);\n",
     "    error_setg(errp, \"pvrdma: this build has no RDMA backend\");\n"
     "    return NULL;\n"),
    ("migration", "hw/rdma/rdma_rm.c",
     "    rdma_rm_mig_live_fini(rm);\n"
     "    rdma_rm_reset(rm);\n    rdma_rm_mig_cleanup(rm);\n",
     "    rdma_rm_reset(rm);\n"),
    ("migration", "hw/rdma/rdma_rm.c",
     "    rdma_rm_mig_live_init(rm);\n", ""),
    ("migration", "hw/rdma/vmw/pvrdma_main.c",
     "    /* Now, not in a deferred teardown: the slot may be plugged again. */\n"
     "    rdma_rm_mig_live_unregister(&s->rm);\n", ""),
    ("migration", "hw/rdma/vmw/pvrdma_main.c",
     ("/*\n * Migration (soft backend).",
      "        &vmstate_pvrdma_soft,\n        NULL\n    },\n};\n"),
     "/* The state of the device's objects cannot be saved yet. */\n"
     "static const VMStateDescription vmstate_pvrdma = {\n"
     "    .name = \"pvrdma\",\n"
     "    .unmigratable = 1,\n"
     "};\n"),
    ("qapi", "hw/rdma/vmw/pvrdma.h",
     "/* pvrdma_qmp.c */\n"
     "void pvrdma_gid_init(PvrdmaState *s);\n"
     "void pvrdma_gid_sync(PvrdmaState *s);\n"
     "void pvrdma_gid_fini(PvrdmaState *s);\n",
     "/* GIDs are not announced to management software yet. */\n"
     "static inline void pvrdma_gid_init(PvrdmaState *s)\n{\n}\n\n"
     "static inline void pvrdma_gid_sync(PvrdmaState *s)\n{\n}\n\n"
     "static inline void pvrdma_gid_fini(PvrdmaState *s)\n{\n}\n"),
    ("ibverbs", "hw/rdma/rdma_backend.h",
     "/* The ibverbs backend is built on Linux with rdma-core (meson.build). */\n"
     "#if defined(CONFIG_RDMA) && defined(CONFIG_LINUX)\n"
     "#define RDMA_HAVE_IBVERBS 1\n"
     "#endif\n\n", ""),
]

# Files that stand in for a project file from commit FROM until the file
# itself comes: (from, path, file under scripts/series/).
STUBS = [
    ("engine", "hw/rdma/soft/rdma_soft_port.c", "rdma_soft_port.c"),
]

# MAINTAINERS: sections and their F: patterns; a pattern is listed once a
# file of the series matches it.  Every commit that adds files must add a
# pattern (checkpatch.pl asks for a MAINTAINERS change with new files),
# hence the patterns per part.
MAINTAINERS = [
    ("PVRDMA (paravirtual RDMA device)", [
        "docs/system/devices/pvrdma.rst", "hw/rdma/Kconfig",
        "hw/rdma/meson.build", "hw/rdma/rdma_*", "hw/rdma/trace*",
        "hw/rdma/vmw/", "tests/unit/pvrdma-abi*", "hw/rdma/pvrdma-stub.c",
        "qapi/pvrdma.json",
        "hw/rdma/pvrdma-hmp.c", "tests/qtest/pvrdma-qtest.*",
        "tests/qtest/pvrdma-test.c", "tests/qtest/pvrdma-datapath-test.c",
        "tests/qtest/pvrdma-dp.*", "tests/qtest/pvrdma-hammer-boot.*",
        "tests/qtest/pvrdma-migration-test.c",
        "tests/qtest/pvrdma-wire-test.c"]),
    ("PVRDMA soft backend", [
        "hw/rdma/soft/rdma_soft_crc.c", "hw/rdma/soft/rdma_soft_opcode.c",
        "hw/rdma/soft/rdma_soft_pkt.h", "hw/rdma/soft/rdma_soft_wire.*",
        "tests/unit/rdma-soft-*", "hw/rdma/soft/rdma_soft.[ch]",
        "hw/rdma/soft/rdma_soft_comp.c", "hw/rdma/soft/rdma_soft_link.c",
        "hw/rdma/soft/rdma_soft_mem.c", "hw/rdma/soft/rdma_soft_req.c",
        "hw/rdma/soft/rdma_soft_resp.c", "hw/rdma/soft/rdma_soft_port.c",
        "hw/rdma/soft/rdma_soft_vmstate.c"]),
    ("PVRDMA ibverbs backend", [
        "hw/rdma/ibverbs/", "contrib/rdmacm-mux/rdmacm-mux.h",
        "tests/unit/rdma-ibv-map-test.c"]),
    ("rdmacm-mux", ["contrib/rdmacm-mux/"]),
]

# tests/unit/meson.build: the unit tests of the series, each with the
# condition it builds on (besides the device) and what it needs besides
# its own .c (meson expressions).
HW_RDMA = "meson.project_source_root() / 'hw/rdma/%s'"
INCLUDE = ("declare_dependency(include_directories:\n"
           "  include_directories('../../hw/rdma/%s'))")
UNIT_TESTS = [
    ("pvrdma-abi-test",
     "host_os == 'linux' and cc.has_header('rdma/vmw_pvrdma-abi.h')",
     ["'pvrdma-abi-uapi.c'"]),
    ("rdma-soft-opcode-test", None,
     [INCLUDE % "soft", HW_RDMA % "soft/rdma_soft_opcode.c"]),
    ("rdma-soft-wire-test", None,
     [INCLUDE % "soft", "zlib", HW_RDMA % "soft/rdma_soft_wire.c",
      HW_RDMA % "soft/rdma_soft_crc.c", HW_RDMA % "soft/rdma_soft_opcode.c"]),
    ("rdma-ibv-map-test", "host_os == 'linux'",
     [INCLUDE % "ibverbs", HW_RDMA % "ibverbs/rdma_ibv_map.c"]),
]

REMOVED_NOTE = (
    "A new implementation of the ``pvrdma`` device, with a software RDMA\n"
    "engine of its own, was added back in 11.0; see :doc:`/system/devices/"
    "pvrdma`.\n")


def say(msg):
    print("[patches] " + msg, flush=True)


def die(msg):
    print("[patches] error: " + msg, file=sys.stderr)
    sys.exit(1)


def run(*args, cwd=None):
    r = subprocess.run(args, cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        die("%s failed:\n%s" % (" ".join(args), r.stdout))
    return r.stdout


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def hook_hunks(path):
    """The hook patch as [(file, hunk lines)]."""
    out, fname, hunk = [], None, None
    for line in read(path).splitlines(keepends=True):
        if line.startswith("diff ") or line.startswith("--- a/"):
            if hunk:
                out.append((fname, hunk))
                hunk = None
            if line.startswith("--- a/"):
                fname = line[6:].split("\t")[0].strip()
            continue
        if line.startswith("+++ "):
            continue
        if line.startswith("@@"):
            if hunk:
                out.append((fname, hunk))
            hunk = [line]
        elif hunk is not None:
            hunk.append(line)
    if hunk:
        out.append((fname, hunk))
    return out


def claim(hunks, commits):
    """Index of the first commit whose rules claim each hunk."""
    owner = []
    for fname, hunk in hunks:
        text = "".join(line for line in hunk if line[:1] in "+-")
        for i, c in enumerate(commits):
            if any(re.search(f, fname) and re.search(t, text)
                   for f, t in c["hunks"]):
                owner.append(i)
                break
        else:
            die("no commit claims the hook patch's hunk in %s:\n%s"
                % (fname, "".join(hunk[:8])))
    return owner


def hook_line(fname, line, present):
    """An added line of the hook as a prefix has it (None: not yet)."""
    if fname == "meson.build" and "'hw/rdma/vmw'" in line:
        return line if "hw/rdma/vmw/trace-events" in present else None
    if fname == "tests/qtest/meson.build":
        names = re.findall(r"'(pvrdma-[a-z-]+-test)'", line)
        missing = [n for n in names
                   if "tests/qtest/%s.c" % n not in present]
        key = re.match(r"\s*'(pvrdma-[a-z-]+-test)':", line)
        if key and key.group(1) in missing:
            return None
        for n in missing:
            line = re.sub(r"'%s'(, )?|, '%s'" % (n, n), "", line)
        return None if "? []" in line else line
    return line


def prefix_hunk(fname, hunk, present):
    """@hunk with the added lines of parts not there yet left out."""
    body = []
    for line in hunk[1:]:
        if line.startswith("+"):
            kept = hook_line(fname, line[1:], present)
            if kept is None:
                continue
            line = "+" + kept
        body.append(line)
    old = sum(1 for line in body if line[:1] in " -")
    new = sum(1 for line in body if line[:1] in " +")
    m = re.match(r"@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@(.*)", hunk[0],
                 re.S)
    head = "@@ -%s,%d +%s,%d @@%s" % (m.group(1), old, m.group(2), new,
                                       m.group(3))
    return [head] + body


def apply_hunks(text, fname, hunks, scratch):
    """@text (a QEMU file) with @hunks applied by patch(1)."""
    src = os.path.join(scratch, "f")
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    pf = os.path.join(scratch, "p")
    with open(pf, "w", encoding="utf-8") as f:
        f.write("--- a/f\n+++ b/f\n")
        for h in hunks:
            f.writelines(h)
    r = subprocess.run(["patch", "-s", "--no-backup-if-mismatch", "-F0",
                        src, pf], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        die("the hook's hunks for %s do not apply:\n%s" % (fname, r.stdout))
    return read(src)


def expand(top, paths):
    """Project files under @paths (files, directories, glob patterns)."""
    out = []
    for p in paths:
        for m in sorted(glob.glob(os.path.join(top, p))):
            if os.path.isdir(m):
                for d, _, fs in sorted(os.walk(m)):
                    out += [os.path.relpath(os.path.join(d, f), top)
                            for f in sorted(fs)]
            else:
                out.append(os.path.relpath(m, top))
    return out


def assign(top, commits):
    """For each commit, the project files it brings (first claim wins)."""
    owner = {}
    for i, c in enumerate(commits):
        for f in expand(top, c["files"]):
            owner.setdefault(f, i)
    left = [f for f in expand(top, OURS) if f not in owner]
    if left:
        die("no commit of the series takes %s" % ", ".join(left))
    for pid in [e[0] for e in EDITS] + [s[0] for s in STUBS]:
        if pid not in [c["id"] for c in commits]:
            die("EDITS/STUBS name commit %s, which the series lacks" % pid)
    return owner


def edited(text, path, k, commits):
    """@text of @path as commit @k has it (EDITS not yet undone)."""
    ids = [c["id"] for c in commits]
    for until, epath, old, new in EDITS:
        if epath != path or ids.index(until) <= k:
            continue
        if isinstance(old, tuple):
            a = text.find(old[0])
            b = text.find(old[1], a) if a >= 0 else -1
            if a < 0 or b < 0 or text.count(old[0]) != 1:
                die("%s: the span %r..%r for the commits before %s is not "
                    "there (once)" % (path, old[0], old[1], until))
            text = text[:a] + new + text[b + len(old[1]):]
        else:
            if text.count(old) != 1:
                die("%s: the text for the commits before %s is not there "
                    "(once):\n%s" % (path, until, old))
            text = text.replace(old, new)
    return text


def rdma_meson(text, present):
    """hw/rdma/meson.build with the paragraphs whose files are there."""
    out = []
    for para in text.rstrip("\n").split("\n\n"):
        names = re.findall(r"'([\w/.-]+\.c)'", para)
        if all("hw/rdma/" + n in present for n in names):
            out.append(para)
    return "\n\n".join(out) + "\n"


def patterns_present(present):
    """[(section, [F: patterns])] for the files of a prefix: each file
    counts for the first pattern of the table that matches it."""
    def match(pat, f):
        if pat.endswith("/"):
            return f.startswith(pat)
        return fnmatch.fnmatchcase(f, pat)
    used = set()
    for f in present:
        for _, pats in MAINTAINERS:
            p = next((p for p in pats if match(p, f)), None)
            if p:
                used.add(p)
                break
        else:
            die("no MAINTAINERS pattern covers %s" % f)
    return [(name, [p for p in pats if p in used])
            for name, pats in MAINTAINERS]


def maintainers(text, present, author):
    sections = ""
    for name, pats in patterns_present(present):
        if pats:
            sections += "%s\nM: %s\nS: Maintained\n%s\n" % (
                name, author, "".join("F: %s\n" % p for p in sorted(pats)))
    if not sections:
        return text
    anchor = "\nRocker\n"
    if text.count(anchor) != 1:
        die("MAINTAINERS: no section Rocker to put the device's before")
    return text.replace(anchor, "\n" + sections + "Rocker\n")


def device_emulation(text, present):
    if "docs/system/devices/pvrdma.rst" not in present:
        return text
    anchor = "   devices/nvme.rst\n"
    if text.count(anchor) != 1:
        die("device-emulation.rst: no devices/nvme.rst in the toctree")
    return text.replace(anchor, anchor + "   devices/pvrdma.rst\n")


def removed_features(text, present):
    if "docs/system/devices/pvrdma.rst" not in present:
        return text
    anchor = ("The 'pvrdma' device and the whole RDMA subsystem have been "
              "removed.\n")
    if text.count(anchor) != 1:
        die("removed-features.rst: the pvrdma entry is not there")
    return text.replace(anchor, anchor + REMOVED_NOTE)


def unit_meson(text, present):
    tests = [t for t in UNIT_TESTS if "tests/unit/%s.c" % t[0] in present]
    if not tests:
        return text
    block = ("# pvrdma: the guest ABI, and modules of hw/rdma that need nothing "
             "of QEMU\n# but its utilities\n"
             "if config_all_devices.has_key('CONFIG_PVRDMA')\n")
    for name, cond, extra in tests:
        ind = "    " if cond else "  "
        body = "".join("%s    %s,\n" % (ind, e.replace("\n", "\n" + ind + "    "))
                       for e in extra)
        entry = "%stests += {\n%s  '%s': [\n%s%s  ],\n%s}\n" % (
            ind, ind, name, body, ind, ind)
        block += ("  if %s\n%s  endif\n" % (cond, entry)) if cond else entry
    block += "endif\n\n"
    anchor = "if have_ga and host_os == 'linux'\n"
    if text.count(anchor) != 1:
        die("tests/unit/meson.build: no \"%s\" to put the tests before"
            % anchor.strip())
    return text.replace(anchor, block + anchor)


# QEMU files that only the series changes, and how.
SERIES_FILES = {
    "MAINTAINERS": maintainers,
    "docs/system/device-emulation.rst": device_emulation,
    "docs/about/removed-features.rst": removed_features,
    "tests/unit/meson.build": unit_meson,
}


def cover_letter(path, version, commits, author):
    text = read(path)
    subject = ("pvrdma: a paravirtual RDMA device (VMware PVRDMA) for QEMU %s"
               % version)
    prep = [c for c in commits if c["id"] in [p["id"] for p in PREP[version]]]
    blurb = (
        "pvrdma, removed in 9.1, comes back as a new implementation of\n"
        "VMware's paravirtual RDMA device: an unmodified Linux guest drives it\n"
        "with the vmw_pvrdma driver and rdma-core's libvmw_pvrdma, and sees a\n"
        "RoCE v2 NIC.  The default backend is a software RDMA engine built\n"
        "into QEMU (no RDMA hardware, no host setup, live migration with RDMA\n"
        "programs running); ibdev= puts the guest on a host RDMA device.\n\n"
        "What is new since the removal: the old device needed a host RDMA\n"
        "device and mapped guest memory regions a page at a time; this one\n"
        "runs anywhere QEMU does, validates every guest value where it\n"
        "enters the device, has its guest ABI checked against Linux's\n"
        "headers, migrates, and comes with qtests of every command and error\n"
        "path (its project also fuzzes it and tests it with the unmodified\n"
        "driver in guests).\n\n"
        "Patches 1-%d prepare QEMU %s:\n%s\n"
        "The device follows, documentation first, in parts that each build\n"
        "(every prefix of the series is built by the project's patches lane):\n"
        "the core, the VMware front-end (which realize refuses until it has a\n"
        "backend), the soft backend's wire format with its unit tests, its\n"
        "engine, its RoCE v2 port, migration, QMP, HMP, the qtests (they use\n"
        "query-pvrdma, so they follow it), the ibverbs backend and\n"
        "rdmacm-mux.  The MAINTAINERS sections grow with the parts and name\n"
        "%s.\n\n"
        "Based on QEMU %s as Debian ships it (the +ds .orig tarball, without\n"
        "firmware blobs), so there is no upstream base-commit.  Made with the\n"
        "project's make patches; docs/system/devices/pvrdma.rst points to the\n"
        "sections of its reference text, docs/pvrdma.txt.") % (
            len(prep), version,
            "".join(" - %s\n" % c["subject"] for c in prep), author, version)
    text = text.replace("*** SUBJECT HERE ***", subject)
    text = text.replace("*** BLURB HERE ***", blurb)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    if len(sys.argv) != 3:
        die("usage: AUTHOR=\"Name <address>\" make-patches.py PROJECT-DIR "
            "BUILD-DIR")
    author = os.environ.get("AUTHOR", "").strip()
    m = AUTHOR_RE.match(author)
    if not m:
        die("say who signs the series: make patches AUTHOR=\"Your Name "
            "<you@example.org>\" (%s)" % ("AUTHOR=%r is not \"Name "
            "<address>\"" % author if author else "AUTHOR is not set"))
    name, email = m.groups()
    top, build = map(os.path.abspath, sys.argv[1:])
    origs = sorted(glob.glob(os.path.join(build, "dl", "qemu_*.orig.tar.xz")))
    if not origs:
        die("no QEMU source in %s/dl: run make tree first" % build)
    orig = origs[-1]
    version = re.sub(r"\+ds.*", "", os.path.basename(orig)[5:])
    series_version = ".".join(version.split(".")[:2])
    if series_version not in PREP:
        die("QEMU %s: the series is made for 10.0 and 10.2" % version)
    hook = "scripts/qemu-hook%s.patch" % (
        "" if series_version == "10.0" else "-" + series_version)
    commits = PREP[series_version] + DEVICE

    out = os.path.join(build, "patches")
    tree, series = os.path.join(out, "tree"), os.path.join(out, "series")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(tree)
    say("unpacking %s" % os.path.basename(orig))
    run("tar", "-xJf", orig, "-C", tree, "--strip-components=1")
    env = ["-c", "user.name=" + name, "-c", "user.email=" + email]
    run("git", "init", "-q", cwd=tree)
    run("git", "add", "-A", cwd=tree)
    run("git", *env, "commit", "-q", "-m", "QEMU %s (base)" % version,
        cwd=tree)
    run("git", "tag", "base", cwd=tree)

    hunks = hook_hunks(os.path.join(top, hook))
    owner = claim(hunks, commits)
    files = assign(top, commits)
    pristine = {f: read(os.path.join(tree, f))
                for f in set(h[0] for h in hunks) | set(SERIES_FILES)}
    scratch = tempfile.mkdtemp()
    had = set()
    for k, c in enumerate(commits):
        say("%d/%d %s" % (k + 1, len(commits), c["subject"]))
        ids = [x["id"] for x in commits]
        present = {f for f, i in files.items() if i <= k}
        stubs = {p: s for frm, p, s in STUBS
                 if ids.index(frm) <= k and p not in present}
        present |= set(stubs)
        for f in sorted(present):
            if f in stubs:
                text = read(os.path.join(top, "scripts/series", stubs[f]))
            else:
                text = edited(read(os.path.join(top, f)), f, k, commits)
                if f == "hw/rdma/meson.build":
                    text = rdma_meson(text, present)
            dst = os.path.join(tree, f)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "w", encoding="utf-8") as fh:
                fh.write(text)
            shutil.copymode(os.path.join(top, f) if f not in stubs else
                            os.path.join(top, "scripts/series", stubs[f]),
                            dst)
        for fname in sorted(set(h[0] for h in hunks) | set(SERIES_FILES)):
            text = pristine[fname]
            mine = [prefix_hunk(fname, h, present)
                    for (f, h), i in zip(hunks, owner)
                    if f == fname and i <= k]
            if mine:
                text = apply_hunks(text, fname, mine, scratch)
            if fname == "MAINTAINERS":
                text = maintainers(text, present, author)
            elif fname in SERIES_FILES:
                text = SERIES_FILES[fname](text, present)
            with open(os.path.join(tree, fname), "w", encoding="utf-8") as fh:
                fh.write(text)
        if present - had and (patterns_present(present) ==
                              patterns_present(had)):
            die("%s adds files but no MAINTAINERS pattern: add one for %s"
                % (c["id"], ", ".join(sorted(present - had))))
        had = present
        run("git", "add", "--", *sorted(present | set(pristine)), cwd=tree)
        msg = c["subject"] + "\n\n" + c["body"] + "\n\n"
        msg += "".join(t + "\n" for t in c["tags"])
        msg += "Signed-off-by: " + author
        run("git", *env, "commit", "-q", "-m", msg, cwd=tree)
    shutil.rmtree(scratch)

    # The last commit holds this project's files as they are.
    for f in files:
        if read(os.path.join(tree, f)) != read(os.path.join(top, f)):
            die("the series ends with %s not as the project has it" % f)

    os.makedirs(series)
    run("git", *env, "format-patch", "-q", "--cover-letter", "-o", series,
        "base", cwd=tree)
    cover_letter(glob.glob(os.path.join(series, "0000-*"))[0],
                 series_version, commits, author)
    n = len(glob.glob(os.path.join(series, "*.patch")))
    say("wrote %d files (cover letter and %d patches) against QEMU %s to %s"
        % (n, n - 1, version, series))


main()
