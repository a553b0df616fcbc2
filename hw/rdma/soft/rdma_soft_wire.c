/*
 * The soft RDMA engine: RoCE v2 frames (see rdma_soft_wire.h).
 *
 * Frame layout (IB vol. 1 annex A17, and what Linux rxe sends):
 *   Ethernet [802.1Q] / IPv4 (DF, no options) or IPv6 (next header UDP) /
 *   UDP (to 4791, checksum 0) / BTH / extension headers / payload /
 *   pad to 4 bytes / ICRC.
 *
 * What a received frame may be, and why:
 * - IPv4 without options only: the ICRC covers the IP header through a
 *   pseudo-header of a fixed 20 bytes (rxe's is 20 bytes too); what the
 *   ICRC of a header with options would be is not something two
 *   implementations agree on.  No RoCE sender adds options.
 * - No IPv4 fragments: the transport headers and the ICRC must be in the
 *   frame at hand; RoCE senders set DF.
 * - IPv6 whose next header is UDP: no extension headers, for the same
 *   reason as IPv4 options.
 * - The UDP length equals what the IP header says is left (senders never
 *   put bytes after the UDP datagram), and every length is checked against
 *   the bytes received.  Bytes after the IP datagram are Ethernet padding.
 * - A non-zero UDP checksum is not verified: the ICRC covers every byte the
 *   checksum covers except the fields it masks, and RoCE senders send 0.
 * - The IPv4 header checksum is verified: it is all that protects the
 *   fields the ICRC masks.
 * - IPv6 addresses must not be IPv4-mapped: such a GID means an IPv4 peer,
 *   whose packets come as IPv4.
 * - The transport part (BTH to ICRC) is a multiple of 4 bytes, the pad
 *   count fits in what follows the headers, and an opcode that carries no
 *   payload (ACK, READ request, atomics) comes with none.
 * - Reserved bits are ignored (the ICRC still covers most of them); a
 *   packet built again from what was parsed has them clear.
 *
 * All multi-byte fields are big-endian, except the ICRC (see
 * rdma_soft_icrc()).  The accessors below are written out rather than
 * taken from QEMU so that the unit lane can build this file alone.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "rdma_soft_pkt.h"
#include "rdma_soft_wire.h"

#define WIRE_ETH_P_IPV4         0x0800
#define WIRE_ETH_P_IPV6         0x86dd
#define WIRE_ETH_P_VLAN         0x8100
#define WIRE_IPPROTO_UDP        17
#define WIRE_IPV4_DF            0x4000
#define WIRE_IPV4_MF_OFFSET     0x3fff      /* MF and fragment offset */
#define WIRE_IPV4_OFFSET        0x1fff

#define WIRE_BTH_SE             0x80
#define WIRE_BTH_MIG            0x40
#define WIRE_BTH_PAD_SHIFT      4
#define WIRE_BTH_PAD_MASK       0x30
#define WIRE_BTH_TVER_MASK      0x0f
#define WIRE_BTH_FECN           0x80        /* of BTH byte 4 */
#define WIRE_BTH_BECN           0x40
#define WIRE_BTH_ACKREQ         0x80        /* of BTH byte 8 */
#define WIRE_24BIT              0xffffffu
#define WIRE_FLOW_LABEL_MASK    0xfffffu

/*
 * zlib's crc32() complements its register on entry and on exit; Linux's
 * crc32_le() does neither.  rxe starts crc32_le() from 0xdebb20e3 (the
 * register after 8 bytes of 0xff from the usual all-ones start: the LRH
 * that RoCE lacks, masked) and stores the complement of the register it
 * ends with.  Started from ~0xdebb20e3, zlib's crc32() therefore works on
 * the same register and returns exactly the complement rxe stores.
 * ~0xdebb20e3 is also crc32(0, 8 bytes of 0xff), which the unit test
 * checks, together with the register value.  rdma_soft_crc32(), which
 * computes it here, keeps zlib's conventions.
 */
#define WIRE_ICRC_SEED_ZLIB     0x2144df1cu

static void wire_put16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

static void wire_put32(uint8_t *p, uint32_t v)
{
    wire_put16(p, v >> 16);
    wire_put16(p + 2, v);
}

static void wire_put64(uint8_t *p, uint64_t v)
{
    wire_put32(p, v >> 32);
    wire_put32(p + 4, v);
}

static uint16_t wire_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t wire_get32(const uint8_t *p)
{
    return (uint32_t)wire_get16(p) << 16 | wire_get16(p + 2);
}

static uint64_t wire_get64(const uint8_t *p)
{
    return (uint64_t)wire_get32(p) << 32 | wire_get32(p + 4);
}

/* ::ffff:a.b.c.d (RFC 4291 2.5.5.2): the GID of an IPv4 address. */
static const uint8_t wire_v4_mapped[12] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
};

static bool wire_gid_is_v4(const uint8_t *gid)
{
    return !memcmp(gid, wire_v4_mapped, sizeof(wire_v4_mapped));
}

/* The ones' complement sum of an IPv4 header, folded (RFC 1071). */
static uint16_t wire_ipv4_sum(const uint8_t *ip)
{
    uint32_t sum = 0;

    for (unsigned i = 0; i < RDMA_WIRE_IPV4_LEN; i += 2) {
        sum += wire_get16(ip + i);
    }
    while (sum >> 16) {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    return sum;
}

uint32_t rdma_soft_icrc(const uint8_t *ip, size_t len)
{
    uint8_t ph[RDMA_WIRE_IPV6_LEN + RDMA_WIRE_UDP_LEN + RDMA_BTH_LEN];
    bool v4 = ip[0] >> 4 == 4;
    size_t l3 = v4 ? RDMA_WIRE_IPV4_LEN : RDMA_WIRE_IPV6_LEN;
    size_t n = l3 + RDMA_WIRE_UDP_LEN + RDMA_BTH_LEN;
    uint8_t *udp = ph + l3;
    uint32_t crc;

    /* An IP datagram is at most 64 KiB past its header. */
    g_assert(len >= n && len <= RDMA_WIRE_IPV6_LEN + 0xffff);

    /*
     * The pseudo-header: the fields that routers may rewrite on the way
     * (and the checksums that change with them) count as all ones.
     */
    memcpy(ph, ip, n);
    if (v4) {
        ph[1] = 0xff;                           /* TOS */
        ph[8] = 0xff;                           /* TTL */
        ph[10] = ph[11] = 0xff;                 /* header checksum */
    } else {
        ph[0] |= 0x0f;                          /* traffic class ... */
        ph[1] = ph[2] = ph[3] = 0xff;           /* ... and flow label */
        ph[7] = 0xff;                           /* hop limit */
    }
    udp[6] = udp[7] = 0xff;                     /* UDP checksum */
    udp[RDMA_WIRE_UDP_LEN + 4] = 0xff;          /* BTH FECN, BECN, resv6a */

    crc = rdma_soft_crc32(WIRE_ICRC_SEED_ZLIB, ph, n);
    return rdma_soft_crc32(crc, ip + n, len - n);
}

/*
 * rxe stores its CRC register's complement as a CPU word on little-endian
 * hosts: the least significant byte comes first on the wire.
 */
static void wire_put_icrc(uint8_t *p, uint32_t icrc)
{
    p[0] = icrc;
    p[1] = icrc >> 8;
    p[2] = icrc >> 16;
    p[3] = icrc >> 24;
}

/* Extension headers in the order the IB spec puts them after the BTH. */

static uint8_t *wire_put_ext(uint8_t *p, const RdmaSoftPkt *pkt)
{
    uint32_t m = pkt->mask;

    /*
     * The opcodes carry DETH+ImmDt, RETH+ImmDt and AETH+AtomicAckETH;
     * AtomicETH (requests) and AETH (responses) never come together.
     */
    if (m & RDMA_PKT_DETH) {
        wire_put32(p, pkt->qkey);
        wire_put32(p + 4, pkt->src_qpn);        /* byte 4 is reserved */
        p += RDMA_DETH_LEN;
    }
    if (m & RDMA_PKT_RETH) {
        wire_put64(p, pkt->va);
        wire_put32(p + 8, pkt->rkey);
        wire_put32(p + 12, pkt->dma_len);
        p += RDMA_RETH_LEN;
    }
    if (m & RDMA_PKT_AETH) {
        wire_put32(p, (uint32_t)pkt->syndrome << 24 | pkt->msn);
        p += RDMA_AETH_LEN;
    }
    if (m & RDMA_PKT_ATMETH) {
        wire_put64(p, pkt->va);
        wire_put32(p + 8, pkt->rkey);
        wire_put64(p + 12, pkt->swap_add);
        wire_put64(p + 20, pkt->compare);
        p += RDMA_ATMETH_LEN;
    }
    if (m & RDMA_PKT_ATMACK) {
        wire_put64(p, pkt->orig);
        p += RDMA_ATMACK_LEN;
    }
    if (m & RDMA_PKT_IMMDT) {
        memcpy(p, &pkt->imm, RDMA_IMMDT_LEN);   /* kept in network order */
        p += RDMA_IMMDT_LEN;
    }
    if (m & RDMA_PKT_IETH) {
        wire_put32(p, pkt->inv_rkey);
        p += RDMA_IETH_LEN;
    }
    return p;
}

static const uint8_t *wire_get_ext(const uint8_t *p, RdmaSoftPkt *pkt)
{
    uint32_t m = pkt->mask;

    if (m & RDMA_PKT_DETH) {
        pkt->qkey = wire_get32(p);
        pkt->src_qpn = wire_get32(p + 4) & WIRE_24BIT;
        p += RDMA_DETH_LEN;
    }
    if (m & RDMA_PKT_RETH) {
        pkt->va = wire_get64(p);
        pkt->rkey = wire_get32(p + 8);
        pkt->dma_len = wire_get32(p + 12);
        p += RDMA_RETH_LEN;
    }
    if (m & RDMA_PKT_AETH) {
        pkt->syndrome = p[0];
        pkt->msn = wire_get32(p) & WIRE_24BIT;
        p += RDMA_AETH_LEN;
    }
    if (m & RDMA_PKT_ATMETH) {
        pkt->va = wire_get64(p);
        pkt->rkey = wire_get32(p + 8);
        pkt->swap_add = wire_get64(p + 12);
        pkt->compare = wire_get64(p + 20);
        p += RDMA_ATMETH_LEN;
    }
    if (m & RDMA_PKT_ATMACK) {
        pkt->orig = wire_get64(p);
        p += RDMA_ATMACK_LEN;
    }
    if (m & RDMA_PKT_IMMDT) {
        memcpy(&pkt->imm, p, RDMA_IMMDT_LEN);
        p += RDMA_IMMDT_LEN;
    }
    if (m & RDMA_PKT_IETH) {
        pkt->inv_rkey = wire_get32(p);
        p += RDMA_IETH_LEN;
    }
    return p;
}

/* Building */

/* Whether every field of @pkt and @a has room on the wire. */
static bool wire_buildable(const RdmaSoftPkt *pkt, const RdmaSoftWireAddr *a,
                           const void *payload)
{
    const RdmaSoftOpInfo *op = rdma_soft_op_info(pkt->opcode);

    if (!op ||
        wire_gid_is_v4(pkt->sgid) != wire_gid_is_v4(pkt->dgid) ||
        pkt->psn > WIRE_24BIT || pkt->dest_qpn > WIRE_24BIT ||
        a->flow_label > WIRE_FLOW_LABEL_MASK ||
        pkt->paylen > 0xffff) {
        return false;
    }
    if (pkt->paylen && (!(op->mask & RDMA_PKT_PAYLOAD) || !payload)) {
        return false;
    }
    if ((op->mask & RDMA_PKT_DETH) && pkt->src_qpn > WIRE_24BIT) {
        return false;
    }
    return !(op->mask & RDMA_PKT_AETH) || pkt->msn <= WIRE_24BIT;
}

static uint8_t *wire_put_eth(uint8_t *p, const RdmaSoftWireAddr *a, bool v4)
{
    memcpy(p, a->dst_mac, 6);
    memcpy(p + 6, a->src_mac, 6);
    p += 12;
    if (a->vlan) {
        wire_put16(p, WIRE_ETH_P_VLAN);
        wire_put16(p + 2, a->vlan_tci);
        p += RDMA_WIRE_VLAN_LEN;
    }
    wire_put16(p, v4 ? WIRE_ETH_P_IPV4 : WIRE_ETH_P_IPV6);
    return p + 2;
}

/* @l4: bytes after the IP header. */
static uint8_t *wire_put_ip(uint8_t *ip, const RdmaSoftPkt *pkt,
                            const RdmaSoftWireAddr *a, bool v4, size_t l4)
{
    if (!v4) {
        wire_put32(ip, 6u << 28 | (uint32_t)a->tclass << 20 | a->flow_label);
        wire_put16(ip + 4, l4);
        ip[6] = WIRE_IPPROTO_UDP;
        ip[7] = a->hop_limit;
        memcpy(ip + 8, pkt->sgid, 16);
        memcpy(ip + 24, pkt->dgid, 16);
        return ip + RDMA_WIRE_IPV6_LEN;
    }
    ip[0] = 0x45;                               /* version 4, 5 words */
    ip[1] = a->tclass;
    wire_put16(ip + 2, RDMA_WIRE_IPV4_LEN + l4);
    wire_put16(ip + 4, a->ip_id);
    /* DF: a RoCE packet is sized to the path MTU, never fragmented. */
    wire_put16(ip + 6, WIRE_IPV4_DF);
    ip[8] = a->hop_limit;
    ip[9] = WIRE_IPPROTO_UDP;
    wire_put16(ip + 10, 0);
    memcpy(ip + 12, pkt->sgid + 12, 4);
    memcpy(ip + 16, pkt->dgid + 12, 4);
    wire_put16(ip + 10, ~wire_ipv4_sum(ip));
    return ip + RDMA_WIRE_IPV4_LEN;
}

static uint8_t *wire_put_bth(uint8_t *p, const RdmaSoftPkt *pkt,
                             const RdmaSoftWireAddr *a, unsigned pad)
{
    p[0] = pkt->opcode;
    p[1] = (pkt->se ? WIRE_BTH_SE : 0) | (a->mig ? WIRE_BTH_MIG : 0) |
           pad << WIRE_BTH_PAD_SHIFT;           /* transport version 0 */
    wire_put16(p + 2, a->pkey ? a->pkey : RDMA_PKEY_DEFAULT);
    wire_put32(p + 4, pkt->dest_qpn);
    p[4] = (a->fecn ? WIRE_BTH_FECN : 0) | (a->becn ? WIRE_BTH_BECN : 0);
    wire_put32(p + 8, pkt->psn);
    p[8] = pkt->ackreq ? WIRE_BTH_ACKREQ : 0;
    return p + RDMA_BTH_LEN;
}

size_t rdma_soft_wire_payload_offset(const RdmaSoftPkt *pkt,
                                     const RdmaSoftWireAddr *a)
{
    return RDMA_WIRE_ETH_LEN + (a->vlan ? RDMA_WIRE_VLAN_LEN : 0) +
           (wire_gid_is_v4(pkt->dgid) ? RDMA_WIRE_IPV4_LEN :
                                        RDMA_WIRE_IPV6_LEN) +
           RDMA_WIRE_UDP_LEN + rdma_soft_hdr_len(pkt->opcode);
}

size_t rdma_soft_wire_build(uint8_t *frame, size_t cap, const RdmaSoftPkt *pkt,
                            const RdmaSoftWireAddr *a, const void *payload)
{
    bool v4 = wire_gid_is_v4(pkt->dgid);
    unsigned pad = -pkt->paylen & 3;
    size_t l3, l4, len;
    uint8_t *ip, *p;

    if (!wire_buildable(pkt, a, payload)) {
        return 0;
    }
    /* paylen <= 0xffff was checked: no sum below can overflow. */
    l3 = v4 ? RDMA_WIRE_IPV4_LEN : RDMA_WIRE_IPV6_LEN;
    l4 = RDMA_WIRE_UDP_LEN + rdma_soft_hdr_len(pkt->opcode) + pkt->paylen +
         pad + RDMA_ICRC_LEN;
    /* IPv4's total length counts its header; IPv6's payload length not. */
    if ((v4 ? l3 : 0) + l4 > 0xffff) {
        return 0;
    }
    len = RDMA_WIRE_ETH_LEN + (a->vlan ? RDMA_WIRE_VLAN_LEN : 0) + l3 + l4;
    if (len > cap) {
        return 0;
    }

    ip = wire_put_eth(frame, a, v4);
    p = wire_put_ip(ip, pkt, a, v4, l4);
    wire_put16(p, a->udp_sport);
    wire_put16(p + 2, RDMA_ROCE_V2_UDP_PORT);
    wire_put16(p + 4, l4);
    wire_put16(p + 6, 0);                       /* no checksum: the ICRC */
    p = wire_put_bth(p + RDMA_WIRE_UDP_LEN, pkt, a, pad);
    p = wire_put_ext(p, pkt);
    if (pkt->paylen) {
        if (payload != p) {
            memcpy(p, payload, pkt->paylen);
        }
        p += pkt->paylen;
    }
    memset(p, 0, pad);
    p += pad;

    wire_put_icrc(p, rdma_soft_icrc(ip, p - ip));
    return len;
}

/*
 * Parsing.  Each step takes the bytes the previous one vouched for, checks
 * its own lengths against them, and returns a reason when it refuses.
 */

static void wire_gid_from_v4(uint8_t *gid, const uint8_t *addr)
{
    memcpy(gid, wire_v4_mapped, sizeof(wire_v4_mapped));
    memcpy(gid + 12, addr, 4);
}

/* Ethernet and VLAN tag: sets *@off to the IP header and *@type. */
static const char *wire_parse_eth(const uint8_t *f, size_t len,
                                  RdmaSoftWireInfo *info, size_t *off,
                                  uint16_t *type)
{
    if (len < RDMA_WIRE_ETH_LEN) {
        return "truncated Ethernet header";
    }
    memcpy(info->addr.dst_mac, f, 6);
    memcpy(info->addr.src_mac, f + 6, 6);
    *type = wire_get16(f + 12);
    *off = RDMA_WIRE_ETH_LEN;
    if (*type == WIRE_ETH_P_VLAN) {
        if (len < RDMA_WIRE_ETH_LEN + RDMA_WIRE_VLAN_LEN) {
            return "truncated VLAN tag";
        }
        info->addr.vlan = true;
        info->addr.vlan_tci = wire_get16(f + 14);
        *type = wire_get16(f + 16);
        *off += RDMA_WIRE_VLAN_LEN;
    }
    return NULL;
}

/* IPv4 at @ip, @avail bytes there: sets *@l4 to the bytes after it. */
static const char *wire_parse_ipv4(const uint8_t *ip, size_t avail,
                                   RdmaSoftPkt *pkt, RdmaSoftWireInfo *info,
                                   size_t *l4)
{
    uint16_t total;

    if (avail < RDMA_WIRE_IPV4_LEN) {
        return "truncated IPv4 header";
    }
    if (ip[0] >> 4 != 4) {
        return "bad IPv4 version";
    }
    if ((ip[0] & 0x0f) != RDMA_WIRE_IPV4_LEN / 4) {
        return "IPv4 options";
    }
    if (wire_ipv4_sum(ip) != 0xffff) {
        return "bad IPv4 header checksum";
    }
    if (wire_get16(ip + 6) & WIRE_IPV4_MF_OFFSET) {
        return "IPv4 fragment";
    }
    if (ip[9] != WIRE_IPPROTO_UDP) {
        return "not UDP";
    }
    total = wire_get16(ip + 2);
    if (total < RDMA_WIRE_IPV4_LEN + RDMA_WIRE_UDP_LEN || total > avail) {
        return "bad IPv4 total length";
    }
    *l4 = total - RDMA_WIRE_IPV4_LEN;
    info->ip_version = 4;
    info->addr.tclass = ip[1];
    info->addr.ip_id = wire_get16(ip + 4);
    info->addr.hop_limit = ip[8];
    wire_gid_from_v4(pkt->sgid, ip + 12);
    wire_gid_from_v4(pkt->dgid, ip + 16);
    return NULL;
}

static const char *wire_parse_ipv6(const uint8_t *ip, size_t avail,
                                   RdmaSoftPkt *pkt, RdmaSoftWireInfo *info,
                                   size_t *l4)
{
    uint32_t vtf;

    if (avail < RDMA_WIRE_IPV6_LEN) {
        return "truncated IPv6 header";
    }
    vtf = wire_get32(ip);
    if (vtf >> 28 != 6) {
        return "bad IPv6 version";
    }
    if (ip[6] != WIRE_IPPROTO_UDP) {
        return "not UDP";
    }
    /* 0 (a jumbogram) is below the minimum too. */
    *l4 = wire_get16(ip + 4);
    if (*l4 < RDMA_WIRE_UDP_LEN || *l4 > avail - RDMA_WIRE_IPV6_LEN) {
        return "bad IPv6 payload length";
    }
    /*
     * Such a GID would read back as an IPv4 peer's: a packet from it must
     * come as IPv4 (RFC 4291 2.5.5.2 keeps these addresses off the wire).
     */
    if (wire_gid_is_v4(ip + 8) || wire_gid_is_v4(ip + 24)) {
        return "IPv4-mapped address in IPv6";
    }
    info->ip_version = 6;
    info->addr.tclass = vtf >> 20;
    info->addr.flow_label = vtf & WIRE_FLOW_LABEL_MASK;
    info->addr.hop_limit = ip[7];
    memcpy(pkt->sgid, ip + 8, 16);
    memcpy(pkt->dgid, ip + 24, 16);
    return NULL;
}

/* UDP, @l4 bytes: sets *@tlen to the bytes from the BTH to the ICRC's end */
static const char *wire_parse_udp(const uint8_t *udp, size_t l4,
                                  RdmaSoftWireInfo *info, size_t *tlen)
{
    if (wire_get16(udp + 2) != RDMA_ROCE_V2_UDP_PORT) {
        return "not RoCE v2 port";
    }
    if (wire_get16(udp + 4) != l4) {
        return "bad UDP length";
    }
    info->addr.udp_sport = wire_get16(udp);
    *tlen = l4 - RDMA_WIRE_UDP_LEN;
    return NULL;
}

/* The BTH and the lengths it implies; @tlen bytes at @t. */
static const char *wire_parse_bth(const uint8_t *t, size_t tlen,
                                  RdmaSoftPkt *pkt, RdmaSoftWireInfo *info)
{
    const RdmaSoftOpInfo *op;
    size_t hdr, rest;
    unsigned pad;

    if (tlen < RDMA_BTH_LEN) {
        return "truncated BTH";
    }
    if (t[1] & WIRE_BTH_TVER_MASK) {
        return "bad transport version";
    }
    op = rdma_soft_op_info(t[0]);
    if (!op) {
        return "unknown opcode";
    }
    hdr = rdma_soft_hdr_len(t[0]);
    if (tlen < hdr + RDMA_ICRC_LEN) {
        return "truncated transport headers";
    }
    if (tlen % 4) {
        return "not padded to 4 bytes";
    }
    pad = (t[1] & WIRE_BTH_PAD_MASK) >> WIRE_BTH_PAD_SHIFT;
    rest = tlen - hdr - RDMA_ICRC_LEN;
    if (pad > rest) {
        return "pad count bigger than the payload";
    }
    if (rest - pad && !(op->mask & RDMA_PKT_PAYLOAD)) {
        return "payload on an opcode without one";
    }

    pkt->opcode = t[0];
    pkt->mask = op->mask;
    pkt->se = t[1] & WIRE_BTH_SE;
    info->addr.mig = t[1] & WIRE_BTH_MIG;
    info->addr.pkey = wire_get16(t + 2);
    info->addr.fecn = t[4] & WIRE_BTH_FECN;
    info->addr.becn = t[4] & WIRE_BTH_BECN;
    pkt->dest_qpn = wire_get32(t + 4) & WIRE_24BIT;
    pkt->ackreq = t[8] & WIRE_BTH_ACKREQ;
    pkt->psn = wire_get32(t + 8) & WIRE_24BIT;
    info->pad = pad;
    pkt->paylen = rest - pad;                   /* < 64 KiB */
    return NULL;
}

static const char *wire_parse(const uint8_t *f, size_t len, RdmaSoftPkt *pkt,
                              RdmaSoftWireInfo *info)
{
    const uint8_t *ip, *t;
    const char *why;
    uint16_t type;
    size_t off, l3, l4, tlen;
    uint8_t icrc[RDMA_ICRC_LEN];

    why = wire_parse_eth(f, len, info, &off, &type);
    if (why) {
        return why;
    }
    ip = f + off;
    if (type == WIRE_ETH_P_IPV4) {
        why = wire_parse_ipv4(ip, len - off, pkt, info, &l4);
        l3 = RDMA_WIRE_IPV4_LEN;
    } else if (type == WIRE_ETH_P_IPV6) {
        why = wire_parse_ipv6(ip, len - off, pkt, info, &l4);
        l3 = RDMA_WIRE_IPV6_LEN;
    } else {
        return "not IPv4 or IPv6";
    }
    if (why) {
        return why;
    }
    /* From here on, [ip, ip + l3 + l4) is inside the frame. */
    why = wire_parse_udp(ip + l3, l4, info, &tlen);
    if (why) {
        return why;
    }
    t = ip + l3 + RDMA_WIRE_UDP_LEN;
    why = wire_parse_bth(t, tlen, pkt, info);
    if (why) {
        return why;
    }

    /* Nothing is believed beyond the BTH until the ICRC vouches for it. */
    wire_put_icrc(icrc, rdma_soft_icrc(ip, l3 + l4 - RDMA_ICRC_LEN));
    if (memcmp(icrc, ip + l3 + l4 - RDMA_ICRC_LEN, RDMA_ICRC_LEN)) {
        return "bad ICRC";
    }

    t = wire_get_ext(t + RDMA_BTH_LEN, pkt);
    if (pkt->mask & RDMA_PKT_PAYLOAD) {
        pkt->data = RDMA_DATA_BYTES;
        pkt->bytes = t;
    }
    info->len = off + l3 + l4;
    return NULL;
}

bool rdma_soft_wire_parse(const uint8_t *frame, size_t len, RdmaSoftPkt *pkt,
                          RdmaSoftWireInfo *info, const char **why)
{
    const char *reason;

    memset(pkt, 0, sizeof(*pkt));
    memset(info, 0, sizeof(*info));
    reason = wire_parse(frame, len, pkt, info);
    if (why) {
        *why = reason;
    }
    return !reason;
}

bool rdma_soft_wire_is_roce(const uint8_t *frame, size_t len)
{
    size_t off = RDMA_WIRE_ETH_LEN, udp;
    uint16_t type;

    if (len < RDMA_WIRE_ETH_LEN) {
        return false;
    }
    type = wire_get16(frame + 12);
    if (type == WIRE_ETH_P_VLAN) {
        if (len < RDMA_WIRE_ETH_LEN + RDMA_WIRE_VLAN_LEN) {
            return false;
        }
        type = wire_get16(frame + 16);
        off += RDMA_WIRE_VLAN_LEN;
    }
    if (type == WIRE_ETH_P_IPV4) {
        /*
         * Options are skipped here so that a RoCE frame with them is still
         * taken from the link (and then refused by the parser); a later
         * fragment has no UDP header to look at.
         */
        if (len - off < RDMA_WIRE_IPV4_LEN || frame[off] >> 4 != 4 ||
            (frame[off] & 0x0f) < RDMA_WIRE_IPV4_LEN / 4 ||
            frame[off + 9] != WIRE_IPPROTO_UDP ||
            (wire_get16(frame + off + 6) & WIRE_IPV4_OFFSET)) {
            return false;
        }
        udp = off + (frame[off] & 0x0f) * 4;
    } else if (type == WIRE_ETH_P_IPV6) {
        if (len - off < RDMA_WIRE_IPV6_LEN || frame[off] >> 4 != 6 ||
            frame[off + 6] != WIRE_IPPROTO_UDP) {
            return false;
        }
        udp = off + RDMA_WIRE_IPV6_LEN;
    } else {
        return false;
    }
    return len >= udp + 4 &&
           wire_get16(frame + udp + 2) == RDMA_ROCE_V2_UDP_PORT;
}
