#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Play libvirt's part for a pvrdma device with ibdev=: on each QMP event
# RDMA_GID_STATUS_CHANGED, add the guest's address to the host network
# device the event names (or remove it), so that the host RDMA device holds
# the guest's GID.  An IPv4-mapped GID ::ffff:a.b.c.d becomes a.b.c.d/24,
# any other GID the IPv6 address itself (/64, no DAD).
#
# Usage: gid-agent.py QMP-SOCKET [WAIT-SECONDS]
# Waits for the socket (default 120 s), then prints one line per event and
# per "ip" command until QEMU closes the connection.

import ipaddress
import json
import socket
import struct
import subprocess
import sys
import time


def gid_address(prefix, iid):
    # Both halves are the GID's bytes as they are in memory, read as
    # numbers in the host's (little-endian) byte order.
    gid = ipaddress.IPv6Address(struct.pack('<QQ', prefix, iid))
    if gid.ipv4_mapped:
        return '%s/24' % gid.ipv4_mapped, '::ffff:%s' % gid.ipv4_mapped
    return '%s/64' % gid, str(gid)


def main():
    path = sys.argv[1]
    deadline = time.time() + float(sys.argv[2] if len(sys.argv) > 2 else 120)
    sock = socket.socket(socket.AF_UNIX)
    while True:
        try:
            sock.connect(path)
            break
        except OSError:
            if time.time() > deadline:
                print('gid-agent: no QMP socket %s' % path, flush=True)
                return 1
            time.sleep(0.5)
    qmp = sock.makefile('rw')
    qmp.readline()                                   # the greeting
    qmp.write('{"execute": "qmp_capabilities"}\n')
    qmp.flush()
    for line in qmp:
        msg = json.loads(line)
        if msg.get('event') != 'RDMA_GID_STATUS_CHANGED':
            continue
        data = msg['data']
        addr, gid = gid_address(data['subnet-prefix'], data['interface-id'])
        op = 'add' if data['gid-status'] else 'del'
        cmd = ['ip', 'addr', op, addr, 'dev', data['netdev']]
        if op == 'add' and not addr.endswith('/24'):
            cmd.append('nodad')
        res = subprocess.run(cmd, capture_output=True, text=True)
        print('gid-agent: event gid %s %s: %s: exit %d %s' %
              (gid, 'added' if data['gid-status'] else 'removed',
               ' '.join(cmd), res.returncode, res.stderr.strip()), flush=True)
    print('gid-agent: QMP connection closed', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
