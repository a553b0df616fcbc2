#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# qemu-rss.py: the memory of the two guests' QEMUs at the moments guest
# A's console names, for two-guests.sh (issue 24: "measure QEMU's memory
# per connection").
#
# Usage: qemu-rss.py CONSOLE SID-A SID-B OUT
#
# Follows CONSOLE (guest A's console log) and, at each "GUEST-RUN: NAME"
# (a client program starts) and "GUEST-MARK: NAME held N" line (init's
# cm_scale: N connections open), reads /proc/PID/smaps of the QEMU in
# each session (run-guest.sh's, SID-A and SID-B) and splits its resident
# memory into guest RAM (mappings of 256 MiB and more: the RAM block),
# TCG's translated code (anonymous executable mappings: the code buffer,
# which fills as the guest runs new code, for hours, up to its size) and
# QEMU's own (everything else: heap, device state; the ring pages QEMU
# maps are the guest's and count as guest RAM).  For each NAME with both
# lines
# it writes to OUT one line per QEMU:
#   NAME: QEMU A: N connections: own +D KiB (B bytes per connection),
#   guest RAM +G KiB (B bytes per connection)
# and at the end the largest own memory seen of each QEMU.  Exits when
# both sessions have no QEMU left.
import os
import sys
import time

RAM_MIN = 256 << 20


def qemu_of(sid):
    """The pid of the qemu-system-* process of session SID, or None."""
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % d) as f:
                st = f.read()
        except OSError:
            continue
        comm = st[st.index('(') + 1:st.rindex(')')]
        fields = st[st.rindex(')') + 2:].split()
        if int(fields[3]) == sid and comm.startswith('qemu-system'):
            return int(d)
    return None


def memory_split(pid):
    """(own KiB, guest RAM KiB, TCG code KiB) resident, or None."""
    own = ram = tcg = 0
    kind = None
    try:
        with open('/proc/%d/smaps' % pid) as f:
            for line in f:
                w = line.split()
                if line[0] in '0123456789abcdef' and '-' in w[0]:
                    lo, hi = w[0].split('-')
                    name = w[5] if len(w) > 5 else ''
                    if int(hi, 16) - int(lo, 16) >= RAM_MIN:
                        kind = 'ram'
                    elif 'x' in w[1] and (name == '' or 'tcg-jit' in name):
                        kind = 'tcg'    # (split-wx hosts: a memfd)
                    else:
                        kind = 'own'
                elif line.startswith('Rss:'):
                    kb = int(w[1])
                    if kind == 'ram':
                        ram += kb
                    elif kind == 'tcg':
                        tcg += kb
                    else:
                        own += kb
    except (OSError, ValueError, IndexError):
        return None
    return own, ram, tcg


def memory(pid):
    """(own KiB, guest RAM KiB) resident, or None."""
    m = memory_split(pid)
    return m and m[:2]


def main():
    console, sids, out = sys.argv[1], (int(sys.argv[2]), int(sys.argv[3])), \
        sys.argv[4]
    pids = [None, None]
    seen = [False, False]
    peak = [0, 0]
    before = {}
    pos = 0
    partial = ''
    with open(out, 'w') as res:
        while True:
            alive = False
            for i in (0, 1):
                if pids[i] is None or not os.path.exists('/proc/%d' % pids[i]):
                    pids[i] = qemu_of(sids[i])
                if pids[i] is not None:
                    seen[i] = alive = True
                    m = memory(pids[i])
                    if m:
                        peak[i] = max(peak[i], m[0])
            if not alive and (all(seen) or not any(
                    os.path.exists('/proc/%d' % s) for s in sids)):
                break
            try:
                with open(console, errors='replace') as f:
                    f.seek(pos)
                    data = f.read()
                    pos = f.tell()
            except OSError:
                data = ''
            lines = (partial + data).replace('\r', '').split('\n')
            partial = lines.pop()
            for line in lines:
                if line.startswith('GUEST-RUN: '):
                    name = line.split()[1]
                    before[name] = [memory(p) if p else None for p in pids]
                elif line.startswith('GUEST-MARK: ') and ' held ' in line:
                    name, n = line.split()[1], int(line.split()[3])
                    now = [memory(p) if p else None for p in pids]
                    for i, letter in ((0, 'A'), (1, 'B')):
                        b = before.get(name, [None, None])[i]
                        if not b or not now[i]:
                            res.write('%s: QEMU %s: no sample\n' %
                                      (name, letter))
                            continue
                        d_own = now[i][0] - b[0]
                        d_ram = now[i][1] - b[1]
                        res.write('%s: QEMU %s: %d connections: own %d -> %d '
                                  'KiB (%+d KiB, %d bytes per connection), '
                                  'guest RAM %d -> %d KiB (%+d KiB, %d bytes '
                                  'per connection)\n' %
                                  (name, letter, n, b[0], now[i][0], d_own,
                                   d_own * 1024 // n, b[1], now[i][1], d_ram,
                                   d_ram * 1024 // n))
                    res.flush()
            time.sleep(0.25)
        res.write('peak own memory: QEMU A %d KiB, QEMU B %d KiB\n' %
                  (peak[0], peak[1]))


if __name__ == '__main__':
    main()
