#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""make patches: the device as a git format-patch series against QEMU 10.0.

  AUTHOR="Name <address>" make-patches.py PROJECT-DIR BUILD-DIR

AUTHOR is the identity of every patch (author, committer, Signed-off-by)
and of the cover letter; there is no default.

Unpacks the QEMU 10.0 source that scripts/qemu-tree.sh fetched (Debian's
.orig.tar.xz: upstream without the firmware blobs) into a git repository
under BUILD-DIR/patches/tree, commits it as the base, then adds the device
in commits that each build (the order of COMMITS below), and writes the
series with a cover letter to BUILD-DIR/patches/series/.

Each commit takes whole files of this project, and the hunks of
scripts/qemu-hook.patch that its rules claim (by file and by text); a hunk
no rule claims is an error, so the series always carries all of the hook.
"""

import os
import re
import shutil
import subprocess
import sys
import glob

AUTHOR_RE = re.compile(r"^([^<>@]*[^<>@\s])\s*<([^<>\s]+@[^<>\s]+)>$")

# (subject, body, project paths, hook-patch rules: (file regex, text regex))
COMMITS = [
    ("meson: unpack only the edk2 blobs that the source tree has",
     "A source tree without firmware blobs (Debian's +ds orig tarball, from\n"
     "which this series is made) has no edk2 images; do not try to unpack\n"
     "them.",
     [], [(r"^meson\.build$", r"edk2")]),
    ("memory: BQL-free MMIO regions",
     "memory_region_enable_lockless_io() marks a region whose handlers take\n"
     "the BQL themselves where they need it, so that vCPU loads and stores\n"
     "reach them without the lock (the TCG MMIO paths and\n"
     "prepare_mmio_access()).  The device's re-entrancy guard is not\n"
     "thread-safe and is off for such a region.  pvrdma's doorbell page uses\n"
     "it: a busy-polling RDMA program writes a doorbell on every empty poll.",
     [], [(r"^(include/exec/memory\.h|system/memory\.c|system/physmem\.c|"
           r"accel/tcg/cputlb\.c)$", r"")]),
    ("net/stream: disable Nagle's algorithm on the listening side too",
     "The connecting side of -netdev stream turns TCP_NODELAY on; the side\n"
     "that accepted the connection kept Nagle's algorithm, so its small\n"
     "frames waited for the peer's delayed ACK.  Two guests running RDMA\n"
     "over RoCE v2 on such a link measured 22 ms per ib_send_lat round trip\n"
     "(38 us over -netdev dgram).",
     [], [(r"^net/stream\.c$", r"")]),
    ("contrib/rdmacm-mux: share an RDMA port's CM MADs among QEMU instances",
     "Only one agent may register for the CM class on a port; rdmacm-mux\n"
     "does and serves the pvrdma devices of any number of QEMU instances\n"
     "over a UNIX socket.  With a man page and a systemd unit template.",
     ["contrib/rdmacm-mux"], [(r"^meson\.build$", r"rdmacm-mux")]),
    ("hw/rdma: VMware PVRDMA device with software and host RDMA backends",
     "A paravirtual RDMA device compatible with VMware's PVRDMA, for the\n"
     "unmodified vmw_pvrdma guest driver and libvmw_pvrdma: the VMware\n"
     "front-end (hw/rdma/vmw), the device core (resources, validation,\n"
     "migration), a built-in software RDMA engine (hw/rdma/soft, the\n"
     "default) and a backend on a host RDMA device (hw/rdma/ibverbs).\n"
     "QMP query-pvrdma and RDMA_GID_STATUS_CHANGED, HMP info pvrdma.",
     ["hw/rdma", "qapi/pvrdma.json",
      "configs/devices/x86_64-softmmu/pvrdma.mak",
      "configs/devices/i386-softmmu/pvrdma.mak"],
     [(r"^hw/(Kconfig|meson\.build)$", r""),
      (r"^meson\.build$", r"hw/rdma"),
      (r"^qapi/(meson\.build|qapi-schema\.json)$", r"pvrdma"),
      (r"^(hmp-commands-info\.hx|include/monitor/hmp\.h)$", r"pvrdma")]),
    ("tests/qtest: pvrdma tests",
     "Commands, rings, the data path, hostile input, migration, two\n"
     "vCPUs hammering the doorbells, and two devices on one link.",
     ["tests/qtest/pvrdma-test.c", "tests/qtest/pvrdma-datapath-test.c",
      "tests/qtest/pvrdma-migration-test.c",
      "tests/qtest/pvrdma-wire-test.c", "tests/qtest/pvrdma-dp.c",
      "tests/qtest/pvrdma-dp.h", "tests/qtest/pvrdma-qtest.c",
      "tests/qtest/pvrdma-qtest.h", "tests/qtest/pvrdma-hammer-boot.h",
      "tests/qtest/pvrdma-hammer-boot.S"],
     [(r"^tests/qtest/meson\.build$", r"pvrdma")]),
    ("docs: pvrdma",
     "How to build, run and manage the device, what the guest sees, its\n"
     "limits, migration and tests.",
     ["docs/pvrdma.txt"], []),
]

# Where a project path goes in QEMU's tree (default: the same path)
DEST = {}


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


def hook_hunks(path):
    """The hook patch as [(file, header lines, hunk lines)]."""
    out, fname, hunk = [], None, None
    for line in open(path).read().splitlines(keepends=True):
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


def claim(hunks):
    """Assign each hunk to the first commit whose rules claim it."""
    per = [[] for _ in COMMITS]
    for fname, hunk in hunks:
        text = "".join(l for l in hunk if l[:1] in "+-")
        for i, c in enumerate(COMMITS):
            if any(re.search(f, fname) and re.search(t, text)
                   for f, t in c[3]):
                per[i].append((fname, hunk))
                break
        else:
            die("no commit claims the hook patch's hunk in %s:\n%s"
                % (fname, "".join(hunk[:8])))
    return per


def write_patch(hunks, path):
    with open(path, "w") as f:
        last = None
        for fname, hunk in hunks:
            if fname != last:
                f.write("--- a/%s\n+++ b/%s\n" % (fname, fname))
                last = fname
            f.writelines(hunk)


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

    per = claim(hook_hunks(os.path.join(top, "scripts", "qemu-hook.patch")))
    for i, (subject, body, paths, _) in enumerate(COMMITS):
        say("%d/%d %s" % (i + 1, len(COMMITS), subject))
        for p in paths:
            src = os.path.join(top, p)
            dst = os.path.join(tree, DEST.get(p, p))
            if os.path.isdir(src):
                shutil.copytree(src, dst, dirs_exist_ok=True)
            else:
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                shutil.copy2(src, dst)
        if per[i]:
            pf = os.path.join(out, "hunks-%d.patch" % (i + 1))
            write_patch(per[i], pf)
            run("patch", "-p1", "-s", "--no-backup-if-mismatch", "-i", pf,
                cwd=tree)
        run("git", "add", "-A", cwd=tree)
        run("git", *env, "commit", "-q", "-m", subject + "\n\n" + body +
            "\n\nSigned-off-by: " + author, cwd=tree)
    os.makedirs(series)
    run("git", *env, "format-patch", "-q", "--cover-letter", "-o", series,
        "base", cwd=tree)
    cover = glob.glob(os.path.join(series, "0000-*"))[0]
    text = open(cover).read()
    text = text.replace("*** SUBJECT HERE ***",
                        "pvrdma: a paravirtual RDMA device for QEMU %s"
                        % version)
    text = text.replace("*** BLURB HERE ***",
                        "The VMware PVRDMA device for unmodified Linux guests, "
                        "with a built-in\nsoftware RDMA engine and a backend "
                        "on host RDMA devices; docs/pvrdma.txt\nsays how to "
                        "use it.  Made with make patches against QEMU %s."
                        % version)
    open(cover, "w").write(text)
    n = len(glob.glob(os.path.join(series, "*.patch")))
    say("wrote %d files (cover letter and %d patches) to %s"
        % (n, n - 1, series))


main()
