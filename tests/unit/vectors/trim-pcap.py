#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Keep the RoCE v2 frames of Ethernet pcap captures, and list them.

    trim-pcap.py [--max N] -o OUT.pcap IN.pcap [IN.pcap ...]
    trim-pcap.py --list FILE.pcap [FILE.pcap ...]

The first form reads the captures in order (QEMU's filter-dump writes
classic pcap, link type Ethernet) and writes to OUT the first N (default 30)
frames that are IPv4 or IPv6 UDP datagrams to port 4791 (RoCE v2), each
unchanged and with its own timestamp; every other frame (the out-of-band
TCP, ARP, neighbour discovery) is dropped.  It refuses a frame cut short by
the capture (its ICRC would be missing) and one whose ICRC is wrong, so
that only what Linux rxe really sent becomes a test vector.

The second form prints one line per frame: number, IP version, addresses,
UDP source port, BTH opcode, destination QP, PSN, AckReq, payload length,
pad bytes, AETH syndrome and MSN where there is one, ICRC ok/bad; then the opcode
counts.  The ICRC is computed as rxe does (drivers/infiniband/sw/rxe/
rxe_icrc.c, docs: /work/shared/docs/ROCE.md): CRC-32 over the IP and UDP
headers and the BTH with the variant fields set to ones, then the rest of
the packet up to the ICRC, seeded with 0xdebb20e3 (a CRC over 8 bytes of
0xff), complemented and stored little-endian.

Standard library only, so that anyone can re-run it on a new capture.
"""

import argparse
import struct
import sys
import zlib

ROCE_PORT = 4791

OPCODES = {
    0x00: "RC SEND_FIRST", 0x01: "RC SEND_MIDDLE", 0x02: "RC SEND_LAST",
    0x03: "RC SEND_LAST_WITH_IMMEDIATE", 0x04: "RC SEND_ONLY",
    0x05: "RC SEND_ONLY_WITH_IMMEDIATE", 0x06: "RC RDMA_WRITE_FIRST",
    0x07: "RC RDMA_WRITE_MIDDLE", 0x08: "RC RDMA_WRITE_LAST",
    0x09: "RC RDMA_WRITE_LAST_WITH_IMMEDIATE", 0x0a: "RC RDMA_WRITE_ONLY",
    0x0b: "RC RDMA_WRITE_ONLY_WITH_IMMEDIATE", 0x0c: "RC RDMA_READ_REQUEST",
    0x0d: "RC RDMA_READ_RESPONSE_FIRST", 0x0e: "RC RDMA_READ_RESPONSE_MIDDLE",
    0x0f: "RC RDMA_READ_RESPONSE_LAST", 0x10: "RC RDMA_READ_RESPONSE_ONLY",
    0x11: "RC ACKNOWLEDGE", 0x12: "RC ATOMIC_ACKNOWLEDGE",
    0x13: "RC COMPARE_SWAP", 0x14: "RC FETCH_ADD",
    0x16: "RC SEND_LAST_WITH_INVALIDATE", 0x17: "RC SEND_ONLY_WITH_INVALIDATE",
    0x64: "UD SEND_ONLY", 0x65: "UD SEND_ONLY_WITH_IMMEDIATE",
}
# Bytes of extension headers after the BTH, by opcode (IB vol. 1, 9.2-9.5):
# RETH 16, AETH 4, AtomicETH 28, AtomicAckETH 8, ImmDt 4, IETH 4, DETH 8.
EXT_LEN = {
    0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,
    0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0a: 16, 0x0b: 20,
    0x0c: 16, 0x0d: 4, 0x0e: 0, 0x0f: 4, 0x10: 4, 0x11: 4, 0x12: 12,
    0x13: 28, 0x14: 28, 0x16: 4, 0x17: 4, 0x64: 8, 0x65: 12,
}
HAS_AETH = {0x0d, 0x0f, 0x10, 0x11, 0x12}


def read_pcap(path):
    """(header, byte order, [(record header, frame)]) of a classic pcap."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 24:
        sys.exit(f"{path}: not a pcap file (too short)")
    magic = data[:4]
    if magic in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"):
        order = "<"
    elif magic in (b"\xa1\xb2\xc3\xd4", b"\xa1\xb2\x3c\x4d"):
        order = ">"
    else:
        sys.exit(f"{path}: not a classic pcap file (magic {magic.hex()})")
    linktype = struct.unpack(order + "I", data[20:24])[0] & 0xffff
    if linktype != 1:
        sys.exit(f"{path}: link type {linktype}, want 1 (Ethernet)")
    recs = []
    off = 24
    while off + 16 <= len(data):
        rh = data[off:off + 16]
        incl, orig = struct.unpack(order + "II", rh[8:16])
        frame = data[off + 16:off + 16 + incl]
        if len(frame) < incl:
            sys.exit(f"{path}: truncated record at offset {off}")
        recs.append((rh, frame, orig))
        off += 16 + incl
    return data[:24], order, recs


def parse(frame):
    """The RoCE v2 view of an Ethernet frame, or None if it is not one."""
    if len(frame) < 14:
        return None
    ethertype = struct.unpack(">H", frame[12:14])[0]
    off = 14
    if ethertype == 0x8100 and len(frame) >= 18:
        ethertype = struct.unpack(">H", frame[16:18])[0]
        off = 18
    if ethertype == 0x0800:
        ip = frame[off:off + 20]
        if len(ip) < 20 or ip[0] >> 4 != 4 or ip[9] != 17:
            return None
        ihl = (ip[0] & 0xf) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        pkt = frame[off:off + total]
        ipver, iphdr = 4, pkt[:ihl]
        src = ".".join(str(b) for b in ip[12:16])
        dst = ".".join(str(b) for b in ip[16:20])
    elif ethertype == 0x86dd:
        ip = frame[off:off + 40]
        if len(ip) < 40 or ip[0] >> 4 != 6 or ip[6] != 17:
            return None
        total = 40 + struct.unpack(">H", ip[4:6])[0]
        pkt = frame[off:off + total]
        ipver, iphdr, ihl = 6, pkt[:40], 40
        src = fmt6(ip[8:24])
        dst = fmt6(ip[24:40])
    else:
        return None
    udp = pkt[ihl:ihl + 8]
    if len(udp) < 8:
        return None
    sport, dport, ulen = struct.unpack(">HHH", udp[:6])
    if dport != ROCE_PORT:
        return None
    return {
        "ipver": ipver, "src": src, "dst": dst, "sport": sport,
        "iphdr": iphdr, "udphdr": udp, "payload": pkt[ihl + 8:ihl + ulen],
        "complete": len(pkt) == total and ulen == len(pkt) - ihl,
    }


def fmt6(b):
    words = struct.unpack(">8H", b)
    s = ":".join(f"{w:x}" for w in words)
    # the longest run of zero words as "::"
    best, cur, start = (0, 0), 0, 0
    for i, w in enumerate(words + (1,)):
        if w == 0:
            if cur == 0:
                start = i
            cur += 1
        else:
            if cur > best[1]:
                best = (start, cur)
            cur = 0
    if best[1] > 1:
        head = ":".join(f"{w:x}" for w in words[:best[0]])
        tail = ":".join(f"{w:x}" for w in words[best[0] + best[1]:])
        s = f"{head}::{tail}"
    return s


def icrc(r):
    """(ICRC on the wire, ICRC computed) of a parsed frame."""
    p = r["payload"]
    ip = bytearray(r["iphdr"])
    if r["ipver"] == 4:
        ip[1] = 0xff                 # TOS
        ip[8] = 0xff                 # TTL
        ip[10:12] = b"\xff\xff"      # header checksum
    else:
        ip[0] |= 0x0f                # traffic class (low nibble of byte 0
        ip[1:4] = b"\xff\xff\xff"    # and byte 1) and flow label
        ip[7] = 0xff                 # hop limit
    udp = bytearray(r["udphdr"])
    udp[6:8] = b"\xff\xff"           # UDP checksum
    bth = bytearray(p[:12])
    bth[4] = 0xff                    # FECN, BECN, reserved
    data = bytes(ip) + bytes(udp) + bytes(bth) + p[12:-4]
    # crc32_le(0xdebb20e3, data), complemented: zlib's CRC complements the
    # seed and the result itself
    computed = zlib.crc32(data, 0xdebb20e3 ^ 0xffffffff)
    return struct.unpack("<I", p[-4:])[0], computed


def describe(r):
    p = r["payload"]
    op = p[0]
    pad = (p[1] >> 4) & 3
    dqp = struct.unpack(">I", p[4:8])[0] & 0xffffff
    ackreq = p[8] >> 7
    psn = struct.unpack(">I", p[8:12])[0] & 0xffffff
    ext = EXT_LEN.get(op, 0)
    plen = len(p) - 12 - ext - 4 - pad
    d = (f"IPv{r['ipver']} {r['src']} -> {r['dst']} sport {r['sport']} "
         f"{OPCODES.get(op, f'opcode 0x{op:02x}')} qp {dqp} psn {psn}"
         f"{' A' if ackreq else ''} payload {plen}{f' pad {pad}' if pad else ''}")
    if op in HAS_AETH and len(p) >= 16:
        aeth = struct.unpack(">I", p[12:16])[0]
        syn = aeth >> 24
        kind = {0: "ACK", 1: "RNR NAK", 3: "NAK"}.get(syn >> 5, "reserved")
        d += f" aeth {kind} syndrome 0x{syn:02x} msn {aeth & 0xffffff}"
    return op, d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="+", metavar="PCAP")
    ap.add_argument("-o", "--output", help="write the RoCE v2 frames here")
    ap.add_argument("--max", type=int, default=30, help="at most N frames (30)")
    ap.add_argument("--list", action="store_true", help="list the frames")
    a = ap.parse_args()
    if bool(a.output) == a.list:
        ap.error("either -o OUT or --list")

    if a.list:
        bad = 0
        for path in a.inputs:
            _, _, recs = read_pcap(path)
            counts = {}
            print(f"{path}: {len(recs)} frames")
            for i, (_, frame, _) in enumerate(recs, 1):
                r = parse(frame)
                if r is None:
                    print(f"{i:3} not RoCE v2 ({len(frame)} bytes)")
                    continue
                op, d = describe(r)
                wire, comp = icrc(r)
                ok = r["complete"] and wire == comp
                bad += not ok
                counts[OPCODES.get(op, hex(op))] = counts.get(OPCODES.get(op, hex(op)), 0) + 1
                print(f"{i:3} {len(frame):5} bytes {d} icrc "
                      f"{'ok' if ok else f'BAD (wire {wire:08x}, computed {comp:08x})'}")
            for k in sorted(counts):
                print(f"    {counts[k]:3} {k}")
        return 1 if bad else 0

    out = []
    ghdr = gorder = None
    for path in a.inputs:
        hdr, order, recs = read_pcap(path)
        ghdr, gorder = ghdr or hdr, gorder or order
        if order != gorder:
            sys.exit(f"{path}: byte order differs from {a.inputs[0]}'s")
        for rh, frame, orig in recs:
            r = parse(frame)
            if r is None:
                continue
            if len(frame) != orig or not r["complete"]:
                sys.exit(f"{path}: a RoCE v2 frame was cut short by the capture "
                         f"({len(frame)} of {orig} bytes): raise filter-dump's maxlen")
            wire, comp = icrc(r)
            if wire != comp:
                sys.exit(f"{path}: a RoCE v2 frame has a bad ICRC "
                         f"(wire {wire:08x}, computed {comp:08x}): {describe(r)[1]}")
            if len(out) < a.max:
                out.append(rh + frame)
    if not out:
        sys.exit("no RoCE v2 frames in " + " ".join(a.inputs))
    with open(a.output, "wb") as f:
        f.write(ghdr)
        for rec in out:
            f.write(rec)
    print(f"{a.output}: {len(out)} RoCE v2 frames")
    return 0


if __name__ == "__main__":
    sys.exit(main())
