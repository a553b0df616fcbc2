#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Writes the seed inputs of fuzz-mux.c into a directory: one short,
# well-formed scenario per message type and per daemon rule, in the
# harness's operation encoding (see the comment at the top of fuzz-mux.c).
#
# Usage: gen-seeds.py DIR

import struct
import sys

CONNECT, RAW, REGISTER, UNREG, SEND, RX, LOOPBACK, CLOSE, DRAIN, TICK, \
    LOOP, PORTFAIL, ACCEPT = range(13)
MAGIC, VERSION = 0x786d6372, 1
ATTR = {'REQ': 0, 'MRA': 1, 'REJ': 2, 'REP': 3, 'RTU': 4, 'DREQ': 5,
        'DREP': 6, 'SIDR_REQ': 7, 'SIDR_REP': 8, 'LAP': 9}


def cfg(max_per_uid=4, idle=2, rules=False):
    """The first byte: --max-clients-per-uid, --idle-timeout index, rules."""
    return bytes([(max_per_uid - 1) | idle << 3 | rules << 5])


def ids(local, remote=0):
    return struct.pack('>II', local, remote)


def send(client, seq, sgid, dgid, attr, local, remote=0, pokes=()):
    out = bytes([SEND, client, seq, sgid, dgid, ATTR[attr]])
    out += ids(local, remote) + bytes([len(pokes)])
    for off, val in pokes:
        out += struct.pack('<H', off) + bytes([val])
    return out


def rx(sgid, dgid, attr, local, remote=0):
    return bytes([RX, sgid, dgid, ATTR[attr]]) + ids(local, remote)


def raw(client, data):
    return bytes([RAW, client]) + struct.pack('<H', len(data)) + data


def msg(mtype, seq, body, magic=MAGIC, version=VERSION, length=None,
        reserved=0):
    length = len(body) if length is None else length
    return struct.pack('<IHHIiII', magic, version, mtype, seq, 0, length,
                       reserved) + body


GID_A = bytes(10) + b'\xff\xff' + bytes([10, 0, 2, 15])

SEEDS = {
    'register': cfg() + bytes([CONNECT, 0, REGISTER, 0, 1, 0, DRAIN, 0]),
    'unregister': cfg() + bytes([CONNECT, 0, REGISTER, 0, 1, 0,
                                 UNREG, 0, 2, 0, UNREG, 0, 3, 1, DRAIN, 0]),
    'send': cfg() + bytes([CONNECT, 0, REGISTER, 0, 1, 0])
            + send(0, 2, 0, 1, 'REQ', 0x11) + bytes([DRAIN, 0]),
    'connection': cfg() + bytes([CONNECT, 0, CONNECT, 1,
                                 REGISTER, 0, 1, 0, REGISTER, 1, 1, 1])
                  + send(0, 2, 0, 1, 'REQ', 0x11) + bytes([LOOPBACK, DRAIN, 1])
                  + send(1, 2, 1, 0, 'REP', 0x22, 0x11)
                  + bytes([LOOPBACK, DRAIN, 0])
                  + send(0, 3, 0, 1, 'RTU', 0x11, 0x22)
                  + bytes([LOOPBACK, DRAIN, 1, LOOP]),
    'sidr': cfg() + bytes([CONNECT, 0, CONNECT, 1,
                           REGISTER, 0, 1, 0, REGISTER, 1, 1, 1])
            + send(0, 2, 0, 1, 'SIDR_REQ', 0x33) + bytes([LOOPBACK])
            + send(1, 2, 1, 0, 'SIDR_REP', 0x33) + bytes([LOOPBACK, DRAIN, 0]),
    'rx': cfg() + bytes([CONNECT, 0, REGISTER, 0, 1, 0])
          + rx(1, 0, 'REQ', 0x44) + rx(1, 2, 'REP', 0x55, 0x44)
          + bytes([DRAIN, 0]),
    'send-spoofed': cfg() + bytes([CONNECT, 0, CONNECT, 1,
                                   REGISTER, 0, 1, 0])
                    + send(1, 1, 0, 1, 'REQ', 0x66)
                    + send(0, 2, 0, 1, 'REQ', 0x66, pokes=((33, 0x03),))
                    + bytes([DRAIN, 1, DRAIN, 0]),
    'send-port-fails': cfg() + bytes([CONNECT, 0, REGISTER, 0, 1, 0,
                                      PORTFAIL, 1])
                       + send(0, 2, 0, 1, 'REQ', 0x77) + bytes([DRAIN, 0]),
    'raw-split': cfg() + bytes([CONNECT, 0])
                 + raw(0, msg(1, 5, GID_A)[:10])
                 + raw(0, msg(1, 5, GID_A)[10:]) + bytes([DRAIN, 0]),
    'raw-bad-magic': cfg() + bytes([CONNECT, 0])
                     + raw(0, msg(1, 5, GID_A, magic=0x12345678))
                     + bytes([DRAIN, 0, LOOP]),
    'raw-bad-len': cfg() + bytes([CONNECT, 0])
                   + raw(0, msg(3, 5, b'', length=0xffffffff))
                   + bytes([DRAIN, 0, LOOP]),
    'close-releases': cfg() + bytes([CONNECT, 0, REGISTER, 0, 1, 0,
                                     CLOSE, 0, LOOP, CONNECT, 1,
                                     REGISTER, 0, 2, 0, DRAIN, 0]),
    'per-uid-bound': cfg(max_per_uid=1) + bytes([CONNECT, 5, CONNECT, 5,
                                                 CONNECT, 6, LOOP]),
    'idle-eviction': cfg(max_per_uid=2, idle=1)
                     + bytes([CONNECT, 5, REGISTER, 0, 1, 0, CONNECT, 5,
                              TICK, 2, CONNECT, 5, DRAIN, 0, LOOP]),
    'non-reader': cfg() + bytes([CONNECT, 0, REGISTER, 0, 1, 0])
                  + rx(1, 0, 'REQ', 0x88) * 250 + bytes([DRAIN, 0]),
    'accept': cfg(max_per_uid=2) + bytes([ACCEPT, 3, REGISTER, 0, 1, 0,
                                          DRAIN, 0, LOOP]),
    # 256 clients of 32 users (8 each) fill the daemon; one more evicts
    # the idle one; all holding GIDs, one more is refused.
    'daemon-bound': cfg(max_per_uid=8, idle=1)
                    + b''.join(bytes([CONNECT, u // 8]) for u in range(256))
                    + bytes([TICK, 2, CONNECT, 200, LOOP]),
    # Rules (fuzz-mux.c): uid 1 may have ::ffff:10.0.2.15, uid 0 fe80::/64.
    'gid-policy': cfg(rules=True)
                  + bytes([CONNECT, 1, CONNECT, 0,
                           REGISTER, 0, 1, 0, REGISTER, 0, 2, 1,
                           REGISTER, 1, 3, 2, REGISTER, 1, 4, 0,
                           DRAIN, 0, DRAIN, 1]),
    # uid 2 may have ::ffff:10.0.2.0/27: .16 but not .40.
    'gid-policy-prefix': cfg(rules=True)
                         + bytes([CONNECT, 2, REGISTER, 0, 1, 1,
                                  REGISTER, 0, 2, 0x80]) + GID_A[:15]
                         + bytes([40, DRAIN, 0]),
    'gids-per-client': cfg() + bytes([CONNECT, 0])
                       + b''.join(bytes([REGISTER, 0, i % 256, 0x80])
                                  + bytes([0xfe, 0x80] + [0] * 12
                                          + [i >> 8, i & 0xff])
                                  for i in range(130))
                       + bytes([DRAIN, 0]),
}


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: gen-seeds.py DIR')
    for name, data in SEEDS.items():
        with open('%s/seed-%s' % (sys.argv[1], name), 'wb') as f:
            f.write(data)


main()
