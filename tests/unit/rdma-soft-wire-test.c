/*
 * Unit tests of the soft engine's RoCE v2 framing (hw/rdma/soft/
 * rdma_soft_wire.c): build/parse round trips of every opcode of the table
 * over IPv4 and IPv6, with and without a VLAN tag; two frames laid out by
 * hand byte for byte; the ICRC against a CRC-32 computed here bit by bit
 * from the polynomial over a pseudo-header built here field by field; the
 * refusal of every truncation, of every flipped bit the ICRC or a check
 * covers, and of each malformed header; the cheap RoCE test on frames that
 * are not RoCE; and, when tests/unit/vectors/ holds pcap captures of real
 * frames (of Linux rxe), that each RoCE v2 frame in them parses and
 * rebuilds byte for byte.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <zlib.h>
#include "rdma_soft_pkt.h"
#include "rdma_soft_wire.h"

#define FRAME_MAX       2048
#define CRC32_POLY      0x04c11db7u     /* IEEE 802.3, MSB first */
#define RXE_ICRC_SEED   0xdebb20e3u     /* rxe_icrc.c: rxe_icrc_hdr() */

static const uint8_t gid4_src[16] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 1
};
static const uint8_t gid4_dst[16] = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 10, 0, 0, 2
};
static const uint8_t gid6_src[16] = {
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x50, 0x56, 0xff, 0xfe, 0x01, 0x02,
    0x03
};
static const uint8_t gid6_dst[16] = {
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42
};
static const uint8_t imm_bytes[4] = { 0xca, 0xfe, 0xba, 0xbe };
static const uint32_t paylens[] = { 0, 1, 3, 4, 1024 };

static uint8_t payload[FRAME_MAX];

/* Big-endian accessors of the test's own. */
static uint16_t be16(const uint8_t *p)
{
    return p[0] << 8 | p[1];
}

static void set_be16(uint8_t *p, uint16_t v)
{
    p[0] = v >> 8;
    p[1] = v;
}

static uint32_t le32(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Every header field of the opcode's headers distinct and non-zero. */
static void make_pkt(RdmaSoftPkt *pkt, uint8_t opcode, bool v6,
                     uint32_t paylen)
{
    const RdmaSoftOpInfo *op = rdma_soft_op_info(opcode);
    uint32_t m = op->mask;

    memset(pkt, 0, sizeof(*pkt));
    pkt->opcode = opcode;
    pkt->mask = m;
    pkt->psn = 0xabcdef;
    pkt->dest_qpn = 0x123456;
    pkt->ackreq = opcode & 1;
    pkt->se = opcode & 2;
    if (m & RDMA_PKT_DETH) {
        pkt->qkey = 0x80010203;
        pkt->src_qpn = 0x00fedc;
    }
    if (m & (RDMA_PKT_RETH | RDMA_PKT_ATMETH)) {
        pkt->va = 0x0123456789abcdefull;
        pkt->rkey = 0xdeadbeef;
    }
    if (m & RDMA_PKT_RETH) {
        pkt->dma_len = 0x10000;
    }
    if (m & RDMA_PKT_ATMETH) {
        pkt->swap_add = 0x1111222233334444ull;
        pkt->compare = 0x5555666677778888ull;
    }
    if (m & RDMA_PKT_AETH) {
        pkt->syndrome = 0x7f;
        pkt->msn = 0xa5a5a5;
    }
    if (m & RDMA_PKT_ATMACK) {
        pkt->orig = 0x0102030405060708ull;
    }
    if (m & RDMA_PKT_IMMDT) {
        memcpy(&pkt->imm, imm_bytes, 4);
    }
    if (m & RDMA_PKT_IETH) {
        pkt->inv_rkey = 0x0badf00d;
    }
    memcpy(pkt->sgid, v6 ? gid6_src : gid4_src, 16);
    memcpy(pkt->dgid, v6 ? gid6_dst : gid4_dst, 16);
    pkt->paylen = paylen;
}

static void make_addr(RdmaSoftWireAddr *a, bool v6, bool vlan)
{
    static const uint8_t dst[6] = { 2, 0, 0, 0, 0, 2 };
    static const uint8_t src[6] = { 2, 0, 0, 0, 0, 1 };

    memset(a, 0, sizeof(*a));
    memcpy(a->dst_mac, dst, 6);
    memcpy(a->src_mac, src, 6);
    a->vlan = vlan;
    a->vlan_tci = vlan ? 0x6064 : 0;            /* PCP 3, VID 100 */
    a->tclass = v6 ? 0x8a : 0x68;
    a->hop_limit = 64;
    a->flow_label = v6 ? 0x12345 : 0;
    a->ip_id = v6 ? 0 : 0x1234;
    a->udp_sport = 0xc123;
    a->pkey = RDMA_PKEY_DEFAULT;
}

static size_t build(uint8_t *f, uint8_t opcode, bool v6, bool vlan,
                    uint32_t paylen, RdmaSoftPkt *pkt, RdmaSoftWireAddr *a)
{
    RdmaSoftPkt p;
    RdmaSoftWireAddr aa;
    size_t len;

    pkt = pkt ? pkt : &p;
    a = a ? a : &aa;
    make_pkt(pkt, opcode, v6, paylen);
    make_addr(a, v6, vlan);
    len = rdma_soft_wire_build(f, FRAME_MAX, pkt, a, payload);
    g_assert_cmpuint(len, >, 0);
    return len;
}

static void check_same_pkt(const RdmaSoftPkt *want, const RdmaSoftPkt *got)
{
    g_assert_cmphex(got->opcode, ==, want->opcode);
    g_assert_cmphex(got->mask, ==, want->mask);
    g_assert_cmphex(got->psn, ==, want->psn);
    g_assert_cmphex(got->dest_qpn, ==, want->dest_qpn);
    g_assert_cmphex(got->src_qpn, ==, want->src_qpn);
    g_assert_cmpint(got->ackreq, ==, want->ackreq);
    g_assert_cmpint(got->se, ==, want->se);
    g_assert_cmphex(got->va, ==, want->va);
    g_assert_cmphex(got->rkey, ==, want->rkey);
    g_assert_cmphex(got->dma_len, ==, want->dma_len);
    g_assert_cmphex(got->swap_add, ==, want->swap_add);
    g_assert_cmphex(got->compare, ==, want->compare);
    g_assert_cmphex(got->syndrome, ==, want->syndrome);
    g_assert_cmphex(got->msn, ==, want->msn);
    g_assert_cmphex(got->orig, ==, want->orig);
    g_assert_cmphex(got->imm, ==, want->imm);
    g_assert_cmphex(got->inv_rkey, ==, want->inv_rkey);
    g_assert_cmphex(got->qkey, ==, want->qkey);
    g_assert_cmpmem(got->sgid, 16, want->sgid, 16);
    g_assert_cmpmem(got->dgid, 16, want->dgid, 16);
    g_assert_cmpuint(got->paylen, ==, want->paylen);
}

static void check_same_addr(const RdmaSoftWireAddr *want,
                            const RdmaSoftWireAddr *got)
{
    g_assert_cmpmem(got->dst_mac, 6, want->dst_mac, 6);
    g_assert_cmpmem(got->src_mac, 6, want->src_mac, 6);
    g_assert_cmpint(got->vlan, ==, want->vlan);
    g_assert_cmphex(got->vlan_tci, ==, want->vlan_tci);
    g_assert_cmphex(got->tclass, ==, want->tclass);
    g_assert_cmpuint(got->hop_limit, ==, want->hop_limit);
    g_assert_cmphex(got->flow_label, ==, want->flow_label);
    g_assert_cmphex(got->ip_id, ==, want->ip_id);
    g_assert_cmphex(got->udp_sport, ==, want->udp_sport);
    g_assert_cmphex(got->pkey, ==, want->pkey);
    g_assert_cmpint(got->mig, ==, want->mig);
    g_assert_cmpint(got->fecn, ==, want->fecn);
    g_assert_cmpint(got->becn, ==, want->becn);
}

/* Where the IP header starts; the frames here have at most one tag. */
static size_t l3_off(const uint8_t *f)
{
    return be16(f + 12) == 0x8100 ? 18 : 14;
}

static bool is_v4(const uint8_t *f)
{
    return be16(f + l3_off(f) - 2) == 0x0800;
}

static size_t l3_len(const uint8_t *f)
{
    return is_v4(f) ? 20 : 40;
}

/* The IPv4 header checksum, RFC 791 from first principles. */
static void fix_ip_csum(uint8_t *f)
{
    uint8_t *ip = f + l3_off(f);
    uint32_t sum = 0;

    if (!is_v4(f)) {
        return;
    }
    set_be16(ip + 10, 0);
    for (int i = 0; i < 20; i += 2) {
        sum += be16(ip + i);
    }
    sum = (sum & 0xffff) + (sum >> 16);
    sum = (sum & 0xffff) + (sum >> 16);
    set_be16(ip + 10, ~sum);
}

/*
 * The reference CRC-32: the IEEE 802.3 polynomial, bit-reflected (the
 * least significant bit is the first one on the wire, as crc32_le), one bit
 * at a time, no inversion; @reg is the register as crc32_le() keeps it.
 */
static uint32_t ref_crc(uint32_t reg, const uint8_t *p, size_t n)
{
    uint32_t poly = 0;

    for (int i = 0; i < 32; i++) {
        poly |= ((CRC32_POLY >> i) & 1u) << (31 - i);
    }
    for (size_t i = 0; i < n; i++) {
        reg ^= p[i];
        for (int b = 0; b < 8; b++) {
            reg = reg & 1 ? (reg >> 1) ^ poly : reg >> 1;
        }
    }
    return reg;
}

/* The register after the masked LRH RoCE does not have: 8 bytes 0xff. */
static uint32_t ref_seed(void)
{
    static const uint8_t lrh[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };

    return ref_crc(0xffffffff, lrh, sizeof(lrh));
}

/*
 * The reference ICRC of @n bytes from the IP header at @ip: a copy whose
 * variant fields are masked here, then the CRC bit by bit.  The refusal
 * tests use it to make a mangled frame's ICRC good again.
 */
static uint32_t ref_icrc(const uint8_t *ip, size_t n)
{
    g_autofree uint8_t *c = g_memdup2(ip, n);
    bool v4 = ip[0] >> 4 == 4;
    size_t l3 = v4 ? 20 : 40;

    if (v4) {
        c[1] = c[8] = c[10] = c[11] = 0xff;
    } else {
        c[0] |= 0x0f;
        c[1] = c[2] = c[3] = c[7] = 0xff;
    }
    c[l3 + 6] = c[l3 + 7] = 0xff;
    c[l3 + 8 + 4] = 0xff;
    return ~ref_crc(ref_seed(), c, n);
}

/* After mangling a frame whose lengths are still right. */
static void fix_icrc(uint8_t *f, size_t len)
{
    size_t off = l3_off(f);
    uint32_t icrc = ref_icrc(f + off, len - off - 4);

    f[len - 4] = icrc;
    f[len - 3] = icrc >> 8;
    f[len - 2] = icrc >> 16;
    f[len - 1] = icrc >> 24;
}

static void expect_refused(const uint8_t *f, size_t len, const char *reason)
{
    RdmaSoftPkt pkt;
    RdmaSoftWireInfo info;
    const char *why = NULL;

    g_assert_false(rdma_soft_wire_parse(f, len, &pkt, &info, &why));
    g_assert_nonnull(why);
    if (reason) {
        g_assert_cmpstr(why, ==, reason);
    }
}

static void expect_parsed(const uint8_t *f, size_t len, RdmaSoftPkt *pkt,
                          RdmaSoftWireInfo *info)
{
    const char *why = NULL;
    bool ok = rdma_soft_wire_parse(f, len, pkt, info, &why);

    if (!ok) {
        g_test_message("refused: %s", why);
    }
    g_assert_true(ok);
    g_assert_null(why);
}

static size_t frame_len(uint8_t opcode, bool v6, bool vlan, uint32_t paylen)
{
    return 14 + (vlan ? 4 : 0) + (v6 ? 40 : 20) + 8 +
           rdma_soft_hdr_len(opcode) + paylen + (-paylen & 3) + 4;
}

/* Round trips */

static void roundtrip_one(uint8_t opcode, bool v6, bool vlan, uint32_t paylen)
{
    uint8_t f[FRAME_MAX], g[FRAME_MAX];
    RdmaSoftPkt pkt, got;
    RdmaSoftWireAddr a;
    RdmaSoftWireInfo info;
    size_t len = build(f, opcode, v6, vlan, paylen, &pkt, &a);
    size_t off;

    g_test_message("opcode 0x%02x IPv%d vlan %d paylen %u", opcode,
                   v6 ? 6 : 4, vlan, paylen);
    g_assert_cmpuint(len, ==, frame_len(opcode, v6, vlan, paylen));
    g_assert_true(rdma_soft_wire_is_roce(f, len));
    expect_parsed(f, len, &got, &info);
    check_same_pkt(&pkt, &got);
    check_same_addr(&a, &info.addr);
    g_assert_cmpuint(info.ip_version, ==, v6 ? 6 : 4);
    g_assert_cmpuint(info.pad, ==, -paylen & 3);
    g_assert_cmpuint(info.len, ==, len);
    if (pkt.mask & RDMA_PKT_PAYLOAD) {
        g_assert_cmpint(got.data, ==, RDMA_DATA_BYTES);
        g_assert_true(got.bytes >= f && got.bytes + paylen <= f + len);
        g_assert_cmpmem(got.bytes, paylen, payload, paylen);
    } else {
        g_assert_cmpint(got.data, ==, RDMA_DATA_NONE);
        g_assert_null(got.bytes);
    }
    /* What was parsed sends the same frame again. */
    g_assert_cmpuint(rdma_soft_wire_build(g, sizeof(g), &got, &info.addr,
                                          got.bytes), ==, len);
    g_assert_cmpmem(g, len, f, len);
    /* And so does the payload put in place before the headers. */
    off = rdma_soft_wire_payload_offset(&pkt, &a);
    if (pkt.mask & RDMA_PKT_PAYLOAD) {
        g_assert_cmpuint(off, ==, got.bytes - f);
    }
    memset(g, 0xa5, sizeof(g));
    memcpy(g + off, payload, paylen);
    g_assert_cmpuint(rdma_soft_wire_build(g, sizeof(g), &pkt, &a, g + off),
                     ==, len);
    g_assert_cmpmem(g, len, f, len);
}

static void test_roundtrip(void)
{
    unsigned ops = 0;

    for (unsigned op = 0; op < 256; op++) {
        const RdmaSoftOpInfo *info = rdma_soft_op_info(op);

        if (!info) {
            continue;
        }
        ops++;
        for (int v6 = 0; v6 < 2; v6++) {
            for (int vlan = 0; vlan < 2; vlan++) {
                for (size_t i = 0; i < G_N_ELEMENTS(paylens); i++) {
                    if (paylens[i] && !(info->mask & RDMA_PKT_PAYLOAD)) {
                        continue;
                    }
                    roundtrip_one(op, v6, vlan, paylens[i]);
                }
            }
        }
    }
    g_assert_cmpuint(ops, ==, 25);      /* RC and UD of IB vol. 1 table 38 */
}

/* Two frames laid out by hand from the IB and IP headers' definitions. */

static const uint8_t layout_v4[] = {
    /* Ethernet, 802.1Q PCP 3 VID 100 */
    2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x81, 0x00, 0x60, 0x64, 0x08, 0x00,
    /* IPv4: TOS 0x68, total 68, id 0x1234, DF, TTL 64, UDP, checksum */
    0x45, 0x68, 0x00, 0x44, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x14, 0x0b,
    10, 0, 0, 1, 10, 0, 0, 2,
    /* UDP 0xc123 -> 4791, length 48, no checksum */
    0xc1, 0x23, 0x12, 0xb7, 0x00, 0x30, 0x00, 0x00,
    /* BTH: RDMA WRITE ONLY with immediate, SE, pad 1, P_Key, QPN, A, PSN */
    0x0b, 0x90, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56, 0x80, 0xab, 0xcd, 0xef,
    /* RETH: VA, R_Key, DMA length */
    0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xde, 0xad, 0xbe, 0xef,
    0x00, 0x01, 0x00, 0x00,
    /* ImmDt */
    0xca, 0xfe, 0xba, 0xbe,
    /* payload, pad */
    0xaa, 0xbb, 0xcc, 0x00,
    /* ICRC (computed apart, bit by bit, by a script following rxe) */
    0x2c, 0x71, 0x1d, 0x99,
};

static const uint8_t layout_v6[] = {
    2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x86, 0xdd,
    /* IPv6: traffic class 0x8a, flow label 0x12345, length 36, UDP, 64 */
    0x68, 0xa1, 0x23, 0x45, 0x00, 0x24, 0x11, 0x40,
    0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x50, 0x56, 0xff, 0xfe, 0x01, 0x02,
    0x03,
    0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x42,
    0xc1, 0x23, 0x12, 0xb7, 0x00, 0x24, 0x00, 0x00,
    /* BTH: UD SEND ONLY with immediate, no SE, pad 0, no AckReq */
    0x65, 0x00, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56, 0x00, 0xab, 0xcd, 0xef,
    /* DETH: Q_Key, source QP */
    0x80, 0x01, 0x02, 0x03, 0x00, 0x00, 0xfe, 0xdc,
    0xca, 0xfe, 0xba, 0xbe,
    0xed, 0x20, 0x70, 0x67,
};

static void test_layout(void)
{
    static const uint8_t data[3] = { 0xaa, 0xbb, 0xcc };
    uint8_t f[FRAME_MAX];
    RdmaSoftPkt pkt;
    RdmaSoftWireAddr a;
    size_t len;

    make_pkt(&pkt, RDMA_OPC_WRITE_ONLY_IMM, false, sizeof(data));
    pkt.se = true;
    pkt.ackreq = true;
    make_addr(&a, false, true);
    len = rdma_soft_wire_build(f, sizeof(f), &pkt, &a, data);
    g_assert_cmpmem(f, len, layout_v4, sizeof(layout_v4));

    make_pkt(&pkt, RDMA_OPC_UD_SEND_ONLY_IMM, true, 0);
    pkt.se = false;
    pkt.ackreq = false;
    make_addr(&a, true, false);
    len = rdma_soft_wire_build(f, sizeof(f), &pkt, &a, NULL);
    g_assert_cmpmem(f, len, layout_v6, sizeof(layout_v6));
}

/* ICRC */

/*
 * The seed rxe starts crc32_le() from, and its zlib form: zlib complements
 * the register on entry and exit, so continuing from crc32(0, 8 x 0xff)
 * runs the register from 0xdebb20e3 and returns its complement, the value
 * rxe stores.
 */
static void test_icrc_seed(void)
{
    static const uint8_t ff[8] = {
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    };
    uint8_t data[97];
    uLong z;

    g_assert_cmphex(ref_seed(), ==, RXE_ICRC_SEED);
    g_assert_cmphex(crc32(0, ff, sizeof(ff)), ==, ~RXE_ICRC_SEED);
    for (size_t i = 0; i < sizeof(data); i++) {
        data[i] = i * 37 + 11;
    }
    z = crc32(crc32(0, ff, sizeof(ff)), data, sizeof(data));
    g_assert_cmphex(z, ==, ~ref_crc(RXE_ICRC_SEED, data, sizeof(data)));
}

/* @v's low @bits bits in reverse order. */
static uint64_t reflect(uint64_t v, unsigned bits)
{
    uint64_t r = 0;

    for (unsigned i = 0; i < bits; i++) {
        r |= ((v >> i) & 1) << (bits - 1 - i);
    }
    return r;
}

/* x^n mod P(x), P of degree 32 (its x^32 term implied). */
static uint32_t xn_mod_p(unsigned n)
{
    uint64_t r = 1;

    for (unsigned i = 0; i < n; i++) {
        r <<= 1;
        if (r >> 32) {
            r ^= (uint64_t)1 << 32 | CRC32_POLY;
        }
    }
    return r;
}

/*
 * The constants rdma_soft_crc.c folds with, derived here from the
 * polynomial: powers of x modulo P, then P and the Barrett quotient
 * floor(x^64 / P), bit-reflected as that code uses them.
 */
static void test_crc32_consts(void)
{
    static const unsigned powers[] = { 544, 480, 160, 96, 64 };
    uint64_t p = (uint64_t)1 << 32 | CRC32_POLY;
    __uint128_t rem = (__uint128_t)1 << 64;
    uint64_t u = 0;
    unsigned i;

    if (!rdma_soft_crc_folds()) {
        g_test_skip("this host has no carry-less multiplication");
        return;
    }
    for (i = 0; i < G_N_ELEMENTS(powers); i++) {
        g_assert_cmphex(rdma_soft_crc_fold_const(i), ==,
                        reflect(xn_mod_p(powers[i]), 32) << 1);
    }
    g_assert_cmphex(rdma_soft_crc_fold_const(i++), ==, reflect(p, 33));
    /* u = floor(x^64 / P): long division over GF(2), quotient bit by bit. */
    for (int k = 32; k >= 0; k--) {
        if ((rem >> (k + 32)) & 1) {
            rem ^= (__uint128_t)p << k;
            u |= (uint64_t)1 << k;
        }
    }
    g_assert_cmphex(rdma_soft_crc_fold_const(i++), ==, reflect(u, 33));
    g_assert_cmphex(rdma_soft_crc_fold_const(i), ==, 0);
}

/*
 * rdma_soft_crc32() against zlib's crc32() for every length up to a
 * jumbo frame's and every alignment of the buffer, from several starting
 * values, and in two pieces split at every offset of a short buffer: the
 * folding path (64 bytes and more) and its tail must agree with zlib bit
 * for bit wherever they start and stop.
 */
static void test_crc32(void)
{
    static const uint32_t starts[] = { 0, ~RXE_ICRC_SEED, 0x12345678 };
    size_t max = 9000 + 64;
    g_autofree uint8_t *buf = g_malloc(max + 16);

    g_test_message("carry-less folding on this host: %s",
                   rdma_soft_crc_folds() ? "yes" : "no");
    for (size_t i = 0; i < max + 16; i++) {
        buf[i] = i * 131 + (i >> 8) * 7 + 3;
    }
    for (size_t len = 0; len <= max; len += len < 1100 ? 1 : 13) {
        for (size_t off = 0; off < 16; off += len < 300 ? 1 : 5) {
            for (size_t s = 0; s < G_N_ELEMENTS(starts); s++) {
                uint32_t want = crc32(starts[s], buf + off, len);

                if (rdma_soft_crc32(starts[s], buf + off, len) != want) {
                    g_test_message("len %zu offset %zu start 0x%x", len, off,
                                   starts[s]);
                    g_assert_cmphex(rdma_soft_crc32(starts[s], buf + off,
                                                    len), ==, want);
                }
            }
        }
    }
    for (size_t cut = 0; cut <= 300; cut++) {
        uint32_t want = crc32(0, buf, 300);
        uint32_t c = rdma_soft_crc32(0, buf, cut);

        g_assert_cmphex(rdma_soft_crc32(c, buf + cut, 300 - cut), ==, want);
    }
}

/*
 * The pseudo-header of IB vol. 1 annex A17 for @pkt sent with @a, written
 * field by field from what was sent: TOS, TTL, IP checksum, IPv6 traffic
 * class, flow label and hop limit, UDP checksum and BTH byte 4 all ones.
 */
static size_t pseudo_header(uint8_t *ph, const RdmaSoftPkt *pkt,
                            const RdmaSoftWireAddr *a, bool v6, size_t udplen)
{
    uint8_t *p = ph;
    unsigned pad = -pkt->paylen & 3;

    if (!v6) {
        *p++ = 0x45;
        *p++ = 0xff;
        set_be16(p, 20 + udplen);
        p += 2;
        set_be16(p, a->ip_id);
        p += 2;
        *p++ = 0x40;
        *p++ = 0x00;
        *p++ = 0xff;
        *p++ = 17;
        *p++ = 0xff;
        *p++ = 0xff;
        memcpy(p, pkt->sgid + 12, 4);
        memcpy(p + 4, pkt->dgid + 12, 4);
        p += 8;
    } else {
        *p++ = 0x6f;
        *p++ = 0xff;
        *p++ = 0xff;
        *p++ = 0xff;
        set_be16(p, udplen);
        p += 2;
        *p++ = 17;
        *p++ = 0xff;
        memcpy(p, pkt->sgid, 16);
        memcpy(p + 16, pkt->dgid, 16);
        p += 32;
    }
    set_be16(p, a->udp_sport);
    set_be16(p + 2, 4791);
    set_be16(p + 4, udplen);
    p[6] = p[7] = 0xff;
    p += 8;
    *p++ = pkt->opcode;
    *p++ = (pkt->se ? 0x80 : 0) | pad << 4;
    set_be16(p, a->pkey);
    p += 2;
    *p++ = 0xff;
    *p++ = pkt->dest_qpn >> 16;
    *p++ = pkt->dest_qpn >> 8;
    *p++ = pkt->dest_qpn;
    *p++ = (pkt->ackreq ? 0x80 : 0);
    *p++ = pkt->psn >> 16;
    *p++ = pkt->psn >> 8;
    *p++ = pkt->psn;
    return p - ph;
}

static void icrc_one(uint8_t opcode, bool v6, bool vlan, uint32_t paylen)
{
    uint8_t f[FRAME_MAX], ph[60];
    RdmaSoftPkt pkt;
    RdmaSoftWireAddr a;
    size_t len = build(f, opcode, v6, vlan, paylen, &pkt, &a);
    size_t off = 14 + (vlan ? 4 : 0), l3 = v6 ? 40 : 20;
    size_t udplen = len - off - l3;
    size_t n = pseudo_header(ph, &pkt, &a, v6, udplen);
    uint32_t reg;

    g_test_message("opcode 0x%02x IPv%d vlan %d paylen %u", opcode,
                   v6 ? 6 : 4, vlan, paylen);
    g_assert_cmpuint(n, ==, l3 + 8 + 12);
    reg = ref_crc(ref_seed(), ph, n);
    /* the rest of the headers, the payload and the pad, unmasked */
    reg = ref_crc(reg, f + off + n, len - 4 - off - n);
    g_assert_cmphex(le32(f + len - 4), ==, ~reg);
    g_assert_cmphex(rdma_soft_icrc(f + off, len - 4 - off), ==, ~reg);
    g_assert_cmphex(ref_icrc(f + off, len - 4 - off), ==, ~reg);
}

static void test_icrc(void)
{
    for (unsigned op = 0; op < 256; op++) {
        const RdmaSoftOpInfo *info = rdma_soft_op_info(op);

        if (!info) {
            continue;
        }
        for (int v6 = 0; v6 < 2; v6++) {
            for (size_t i = 0; i < G_N_ELEMENTS(paylens); i++) {
                if (paylens[i] && !(info->mask & RDMA_PKT_PAYLOAD)) {
                    continue;
                }
                icrc_one(op, v6, v6, paylens[i]);
            }
        }
    }
}

/* Refusals */

static void test_truncated(void)
{
    for (unsigned op = 0; op < 256; op++) {
        const RdmaSoftOpInfo *info = rdma_soft_op_info(op);

        if (!info) {
            continue;
        }
        for (int v6 = 0; v6 < 2; v6++) {
            for (int vlan = 0; vlan < 2; vlan++) {
                uint32_t paylen = info->mask & RDMA_PKT_PAYLOAD ? 5 : 0;
                uint8_t f[FRAME_MAX];
                RdmaSoftPkt pkt;
                RdmaSoftWireInfo wi;
                size_t len = build(f, op, v6, vlan, paylen, NULL, NULL);

                g_test_message("opcode 0x%02x IPv%d vlan %d", op,
                               v6 ? 6 : 4, vlan);
                /* a copy exactly as long, so a read past it is caught */
                for (size_t n = 0; n < len; n++) {
                    g_autofree uint8_t *t = g_memdup2(f, n ? n : 1);

                    expect_refused(t, n, NULL);
                    rdma_soft_wire_is_roce(t, n);
                }
                /* Ethernet padding after the datagram is not the packet. */
                memset(f + len, 0, 10);
                expect_parsed(f, len + 10, &pkt, &wi);
                g_assert_cmpuint(wi.len, ==, len);
            }
        }
    }
}

typedef enum FlipClass {
    FLIP_ACCEPTED,          /* Ethernet addresses, masked fields */
    FLIP_REFUSED,           /* a length, type or version check, or ICRC */
    FLIP_BAD_ICRC,          /* nothing but the ICRC notices */
    FLIP_BAD_CSUM,          /* the IPv4 header checksum itself */
} FlipClass;

/* What flipping bit @bit of byte @i of frame @f must do. */
static FlipClass flip_class(const uint8_t *f, size_t i, unsigned bit)
{
    size_t off = l3_off(f), l3 = l3_len(f);
    size_t udp = off + l3, bth = udp + 8;

    if (i < 12) {
        return FLIP_ACCEPTED;
    }
    if (i < off) {
        /* the VLAN TCI is only addressing */
        return off == 18 && (i == 14 || i == 15) ? FLIP_ACCEPTED
                                                 : FLIP_REFUSED;
    }
    if (i < udp && is_v4(f)) {
        switch (i - off) {
        case 1:                 /* TOS */
        case 8:                 /* TTL */
            return FLIP_ACCEPTED;
        case 10:
        case 11:
            return FLIP_BAD_CSUM;
        case 4:                 /* identification */
        case 5:
        case 12 ... 19:         /* addresses */
            return FLIP_BAD_ICRC;
        case 6:                 /* reserved and DF, not MF */
            return bit >= 6 ? FLIP_BAD_ICRC : FLIP_REFUSED;
        default:
            return FLIP_REFUSED;
        }
    }
    if (i < udp) {
        switch (i - off) {
        case 0:                 /* version; traffic class from bit 3 */
            return bit < 4 ? FLIP_ACCEPTED : FLIP_REFUSED;
        case 1 ... 3:
        case 7:                 /* hop limit */
            return FLIP_ACCEPTED;
        case 8 ... 39:
            return FLIP_BAD_ICRC;
        default:
            return FLIP_REFUSED;
        }
    }
    if (i < bth) {
        switch (i - udp) {
        case 0:                 /* source port */
        case 1:
            return FLIP_BAD_ICRC;
        case 6:                 /* checksum */
        case 7:
            return FLIP_ACCEPTED;
        default:
            return FLIP_REFUSED;
        }
    }
    switch (i - bth) {
    case 0:                     /* opcode */
        return FLIP_REFUSED;
    case 1:                     /* SE and MigReq; pad and TVer checked */
        return bit >= 6 ? FLIP_BAD_ICRC : FLIP_REFUSED;
    case 4:                     /* FECN, BECN, reserved */
        return FLIP_ACCEPTED;
    default:
        return FLIP_BAD_ICRC;
    }
}

static void flips_one(uint8_t opcode, bool v6, bool vlan, uint32_t paylen)
{
    uint8_t f[FRAME_MAX], g[FRAME_MAX];
    RdmaSoftPkt pkt;
    RdmaSoftWireInfo info;
    size_t len = build(f, opcode, v6, vlan, paylen, NULL, NULL);
    unsigned counts[4] = { 0 };

    g_test_message("opcode 0x%02x IPv%d vlan %d paylen %u", opcode,
                   v6 ? 6 : 4, vlan, paylen);
    for (size_t i = 0; i < len; i++) {
        for (unsigned bit = 0; bit < 8; bit++) {
            FlipClass c = flip_class(f, i, bit);

            memcpy(g, f, len);
            g[i] ^= 1u << bit;
            if (c != FLIP_BAD_CSUM && i >= l3_off(f)) {
                fix_ip_csum(g);
            }
            counts[c]++;
            switch (c) {
            case FLIP_ACCEPTED:
                expect_parsed(g, len, &pkt, &info);
                break;
            case FLIP_REFUSED:
                expect_refused(g, len, NULL);
                break;
            case FLIP_BAD_ICRC:
                expect_refused(g, len, "bad ICRC");
                break;
            case FLIP_BAD_CSUM:
                expect_refused(g, len, "bad IPv4 header checksum");
                break;
            }
        }
    }
    /* every part of the frame was reached */
    g_assert_cmpuint(counts[FLIP_BAD_ICRC], >, 8 * (8 + 12 + 4 + paylen));
    g_assert_cmpuint(counts[FLIP_ACCEPTED], >=, 8 * (12 + 1 + 2 + 1));
}

static void test_bit_flips(void)
{
    for (unsigned op = 0; op < 256; op++) {
        const RdmaSoftOpInfo *info = rdma_soft_op_info(op);

        if (!info) {
            continue;
        }
        for (int v6 = 0; v6 < 2; v6++) {
            flips_one(op, v6, !v6,
                      info->mask & RDMA_PKT_PAYLOAD ? 5 : 0);
        }
    }
    /* and a long one: every bit of a 1 KiB payload */
    flips_one(RDMA_OPC_SEND_ONLY, false, false, 1024);
    flips_one(RDMA_OPC_READ_RESPONSE_ONLY, true, true, 1024);
}

/* Frame @f with its bytes [at, at + n) removed (@n < 0: inserted zeros). */
static size_t frame_splice(uint8_t *f, size_t len, size_t at, ssize_t n)
{
    if (n > 0) {
        memmove(f + at, f + at + n, len - at - n);
    } else {
        memmove(f + at - n, f + at, len - at);
        memset(f + at, 0, -n);
    }
    return len - n;
}

/* Set the IP and UDP lengths of @f to fit @len bytes, as a sender would. */
static void fix_lengths(uint8_t *f, size_t len)
{
    uint8_t *ip = f + l3_off(f);
    size_t l4 = len - l3_off(f) - l3_len(f);

    set_be16(ip + (is_v4(f) ? 2 : 4), l4 + (is_v4(f) ? 20 : 0));
    set_be16(ip + l3_len(f) + 4, l4);
    fix_ip_csum(f);
    fix_icrc(f, len);
}

/* Refusals that IPv4 and IPv6 frames share. */
static void test_refusals(void)
{
    uint8_t f[FRAME_MAX];
    size_t len, off, bth, l;

    for (int v6 = 0; v6 < 2; v6++) {
        len = build(f, RDMA_OPC_SEND_ONLY, v6, false, 8, NULL, NULL);
        off = l3_off(f);
        bth = off + l3_len(f) + 8;

        /* the ICRC itself */
        f[len - 1] ^= 0x20;
        expect_refused(f, len, "bad ICRC");
        f[len - 1] ^= 0x20;
        expect_parsed(f, len, &(RdmaSoftPkt){ 0 }, &(RdmaSoftWireInfo){ 0 });

        /* another UDP port */
        set_be16(f + bth - 6, 4792);
        g_assert_false(rdma_soft_wire_is_roce(f, len));
        expect_refused(f, len, "not RoCE v2 port");
        set_be16(f + bth - 6, 4791);

        /* UDP length beyond the frame, and short of the IP datagram */
        set_be16(f + bth - 4, len - off - l3_len(f) + 1);
        expect_refused(f, len, "bad UDP length");
        set_be16(f + bth - 4, len - off - l3_len(f) - 4);
        expect_refused(f, len, "bad UDP length");
        set_be16(f + bth - 4, len - off - l3_len(f));

        /* not UDP */
        f[off + (v6 ? 6 : 9)] = 6;
        fix_ip_csum(f);
        expect_refused(f, len, "not UDP");
        f[off + (v6 ? 6 : 9)] = 17;
        fix_ip_csum(f);

        /* unknown opcodes: UC SEND FIRST, CNP, a reserved RC code */
        for (unsigned i = 0; i < 3; i++) {
            static const uint8_t bad[3] = { 0x20, 0x81, 0x15 };

            f[bth] = bad[i];
            fix_icrc(f, len);
            expect_refused(f, len, "unknown opcode");
        }
        f[bth] = RDMA_OPC_SEND_ONLY;

        /* transport version 1 */
        f[bth + 1] |= 1;
        fix_icrc(f, len);
        expect_refused(f, len, "bad transport version");
        f[bth + 1] &= ~1;
        fix_icrc(f, len);

        /* the payload not a multiple of 4 bytes, whatever the pad says */
        l = frame_splice(f, len, len - 4, -1);
        fix_lengths(f, l);
        expect_refused(f, l, "not padded to 4 bytes");
        len = frame_splice(f, l, len - 4, 1);
        fix_lengths(f, len);
        expect_parsed(f, len, &(RdmaSoftPkt){ 0 }, &(RdmaSoftWireInfo){ 0 });

        /* two VLAN tags */
        memmove(f + 16, f + 12, len - 12);
        set_be16(f + 12, 0x8100);
        set_be16(f + 14, 5);
        memmove(f + 16 + 4, f + 16, len - 12);
        set_be16(f + 16, 0x8100);
        set_be16(f + 18, 6);
        expect_refused(f, len + 8, "not IPv4 or IPv6");
    }

    /* nothing to read into @why */
    g_assert_false(rdma_soft_wire_parse(f, 3, &(RdmaSoftPkt){ 0 },
                                        &(RdmaSoftWireInfo){ 0 }, NULL));
    f[12] = 0x08;
    f[13] = 0x06;
    expect_refused(f, len, "not IPv4 or IPv6");
}

/* IPv4: options, fragments, header checksum, total length, version */
static void test_refusals_ipv4(void)
{
    uint8_t f[FRAME_MAX];
    size_t len = build(f, RDMA_OPC_SEND_ONLY, false, false, 8, NULL, NULL);

    f[14] = 0x46;
    fix_ip_csum(f);
    expect_refused(f, len, "IPv4 options");
    f[14] = 0x45;
    f[24] ^= 1;
    expect_refused(f, len, "bad IPv4 header checksum");
    f[24] ^= 1;
    set_be16(f + 14 + 6, 0x2000);                   /* MF */
    fix_ip_csum(f);
    expect_refused(f, len, "IPv4 fragment");
    set_be16(f + 14 + 6, 0x4001);                   /* DF, offset 8 */
    fix_ip_csum(f);
    expect_refused(f, len, "IPv4 fragment");
    set_be16(f + 14 + 6, 0x4000);
    set_be16(f + 14 + 2, len - 14 + 1);
    fix_ip_csum(f);
    expect_refused(f, len, "bad IPv4 total length");
    set_be16(f + 14 + 2, 20 + 7);
    fix_ip_csum(f);
    expect_refused(f, len, "bad IPv4 total length");
    f[14] = 0x65;
    expect_refused(f, len, "bad IPv4 version");
}

/* IPv6: payload length, an IPv4-mapped address, version */
static void test_refusals_ipv6(void)
{
    uint8_t f[FRAME_MAX];
    size_t len = build(f, RDMA_OPC_SEND_ONLY, true, false, 8, NULL, NULL);

    set_be16(f + 14 + 4, len - 14 - 40 + 1);
    expect_refused(f, len, "bad IPv6 payload length");
    set_be16(f + 14 + 4, 0);
    expect_refused(f, len, "bad IPv6 payload length");
    set_be16(f + 14 + 4, len - 14 - 40);
    memcpy(f + 14 + 24, gid4_dst, 16);
    fix_icrc(f, len);
    expect_refused(f, len, "IPv4-mapped address in IPv6");
    f[14] = 0x48;
    expect_refused(f, len, "bad IPv6 version");
}

/* The pad count and the payload against the opcode. */
static void test_refusals_payload(void)
{
    uint8_t f[FRAME_MAX];
    size_t len, bth;

    for (int v6 = 0; v6 < 2; v6++) {
        /* pad count bigger than the payload: none, or 0 bytes */
        len = build(f, RDMA_OPC_ACKNOWLEDGE, v6, false, 0, NULL, NULL);
        bth = l3_off(f) + l3_len(f) + 8;
        f[bth + 1] |= 3 << 4;
        fix_icrc(f, len);
        expect_refused(f, len, "pad count bigger than the payload");
        len = build(f, RDMA_OPC_SEND_ONLY, v6, false, 0, NULL, NULL);
        f[bth + 1] |= 1 << 4;
        fix_icrc(f, len);
        expect_refused(f, len, "pad count bigger than the payload");

        /* data after an ACK */
        len = build(f, RDMA_OPC_ACKNOWLEDGE, v6, false, 0, NULL, NULL);
        len = frame_splice(f, len, len - 4, -4);
        fix_lengths(f, len);
        expect_refused(f, len, "payload on an opcode without one");
    }
}

static void test_build_refusals(void)
{
    g_autofree uint8_t *big = g_malloc(70000);
    uint8_t f[FRAME_MAX];
    RdmaSoftPkt pkt;
    RdmaSoftWireAddr a;
    size_t len;

    /* every capacity short of the frame, and nothing written then */
    len = build(f, RDMA_OPC_WRITE_ONLY_IMM, true, true, 3, &pkt, &a);
    for (size_t cap = 0; cap < len; cap++) {
        memset(f, 0x5a, sizeof(f));
        g_assert_cmpuint(rdma_soft_wire_build(f, cap, &pkt, &a, payload), ==,
                         0);
        for (size_t i = 0; i < sizeof(f); i++) {
            g_assert_cmphex(f[i], ==, 0x5a);
        }
    }
    g_assert_cmpuint(rdma_soft_wire_build(f, len, &pkt, &a, payload), ==, len);
    g_assert_cmphex(f[len], ==, 0x5a);

#define REFUSED(field, value) do { \
        make_pkt(&pkt, RDMA_OPC_SEND_ONLY, false, 4); \
        make_addr(&a, false, false); \
        field = value; \
        g_assert_cmpuint(rdma_soft_wire_build(f, sizeof(f), &pkt, &a, \
                                              payload), ==, 0); \
    } while (0)

    REFUSED(pkt.opcode, 0x15);
    REFUSED(pkt.opcode, RDMA_OPC_ACKNOWLEDGE);      /* data on an ACK */
    REFUSED(pkt.psn, 0x1000000);
    REFUSED(pkt.dest_qpn, 0x1000000);
    REFUSED(pkt.dgid[0], 0xfe);                     /* IPv4 to IPv6 */
    REFUSED(pkt.sgid[0], 0xfe);
    REFUSED(a.flow_label, 0x100000);
    REFUSED(pkt.paylen, 0x10000);
#undef REFUSED
    make_pkt(&pkt, RDMA_OPC_SEND_ONLY, false, 4);
    g_assert_cmpuint(rdma_soft_wire_build(f, sizeof(f), &pkt, &a, NULL), ==,
                     0);
    make_pkt(&pkt, RDMA_OPC_UD_SEND_ONLY, false, 4);
    pkt.src_qpn = 0x1000000;
    g_assert_cmpuint(rdma_soft_wire_build(f, sizeof(f), &pkt, &a, payload),
                     ==, 0);
    make_pkt(&pkt, RDMA_OPC_ACKNOWLEDGE, false, 0);
    pkt.msn = 0x1000000;
    g_assert_cmpuint(rdma_soft_wire_build(f, sizeof(f), &pkt, &a, NULL), ==,
                     0);

    /* the largest datagram: 65535 bytes of IP (v4) or IP payload (v6) */
    for (int v6 = 0; v6 < 2; v6++) {
        uint32_t max = 65535 - (v6 ? 0 : 20) - 8 - 12 - 4;
        g_autofree uint8_t *data = g_malloc0(max);
        RdmaSoftPkt got;
        RdmaSoftWireInfo info;

        make_addr(&a, v6, false);
        make_pkt(&pkt, RDMA_OPC_SEND_ONLY, v6, max & ~3u);
        len = rdma_soft_wire_build(big, 70000, &pkt, &a, data);
        g_assert_cmpuint(len, ==, 14 + (v6 ? 40 : 20) + 65532 - (v6 ? 0 : 20));
        expect_parsed(big, len, &got, &info);
        g_assert_cmpuint(got.paylen, ==, max & ~3u);
        make_pkt(&pkt, RDMA_OPC_SEND_ONLY, v6, (max & ~3u) + 1);
        g_assert_cmpuint(rdma_soft_wire_build(big, 70000, &pkt, &a, data), ==,
                         0);
    }

    /* P_Key 0 is not a P_Key: the default goes out */
    make_pkt(&pkt, RDMA_OPC_SEND_ONLY, false, 0);
    make_addr(&a, false, false);
    a.pkey = 0;
    len = rdma_soft_wire_build(f, sizeof(f), &pkt, &a, NULL);
    g_assert_cmphex(be16(f + 14 + 20 + 8 + 2), ==, 0xffff);
}

/* is_roce */

static void test_is_roce(void)
{
    uint8_t f[FRAME_MAX];
    size_t len, dport;

    for (int v6 = 0; v6 < 2; v6++) {
        for (int vlan = 0; vlan < 2; vlan++) {
            len = build(f, RDMA_OPC_SEND_ONLY, v6, vlan, 0, NULL, NULL);
            dport = l3_off(f) + l3_len(f) + 2;
            /* true from the byte that completes the port on */
            for (size_t n = 0; n <= len; n++) {
                g_autofree uint8_t *t = g_memdup2(f, n ? n : 1);

                g_assert_cmpint(rdma_soft_wire_is_roce(t, n), ==,
                                n >= dport + 2);
            }
            /* TCP to 4791 is not RoCE */
            f[l3_off(f) + (v6 ? 6 : 9)] = 6;
            g_assert_false(rdma_soft_wire_is_roce(f, len));
            f[l3_off(f) + (v6 ? 6 : 9)] = 17;
            /* nor UDP to another port */
            set_be16(f + dport, 53);
            g_assert_false(rdma_soft_wire_is_roce(f, len));
            set_be16(f + dport, 4791);
            /* nor ARP, nor IP behind two tags */
            set_be16(f + l3_off(f) - 2, 0x0806);
            g_assert_false(rdma_soft_wire_is_roce(f, len));
            set_be16(f + l3_off(f) - 2, 0x8100);
            g_assert_false(rdma_soft_wire_is_roce(f, len));
        }
    }

    /* IPv4: a later fragment has no UDP header; options are skipped */
    len = build(f, RDMA_OPC_SEND_ONLY, false, false, 8, NULL, NULL);
    set_be16(f + 14 + 6, 0x0001);
    g_assert_false(rdma_soft_wire_is_roce(f, len));
    set_be16(f + 14 + 6, 0x2000);                   /* first fragment */
    g_assert_true(rdma_soft_wire_is_roce(f, len));
    set_be16(f + 14 + 6, 0x4000);
    len = frame_splice(f, len, 34, -4);
    f[14] = 0x46;
    g_assert_true(rdma_soft_wire_is_roce(f, len));
    expect_refused(f, len, NULL);
    f[14] = 0x44;
    g_assert_false(rdma_soft_wire_is_roce(f, len));
    f[14] = 0x65;
    g_assert_false(rdma_soft_wire_is_roce(f, len));
}

/*
 * Vectors: pcap files of real frames.  Classic libpcap format (either
 * byte order, microsecond or nanosecond timestamps), link type Ethernet;
 * what rebuilds is compared byte for byte, the IPv4 identification
 * included (the parser reports it and the builder sends what it is given).
 */

static uint32_t pcap32(const uint8_t *p, bool big)
{
    return big ? (uint32_t)be16(p) << 16 | be16(p + 2) : le32(p);
}

/* The UDP destination port of @f, found without the code under test. */
static int ref_udp_dport(const uint8_t *f, size_t len)
{
    size_t off = 14, udp;
    uint16_t type;

    if (len < 14) {
        return -1;
    }
    type = be16(f + 12);
    if (type == 0x8100 && len >= 18) {
        type = be16(f + 16);
        off = 18;
    }
    if (type == 0x0800 && len >= off + 20 && f[off + 9] == 17) {
        udp = off + (f[off] & 0x0f) * 4;
    } else if (type == 0x86dd && len >= off + 40 && f[off + 6] == 17) {
        udp = off + 40;
    } else {
        return -1;
    }
    return len >= udp + 4 ? be16(f + udp + 2) : -1;
}

static void vector_frame(const char *name, unsigned idx, const uint8_t *f,
                         size_t len)
{
    g_autofree uint8_t *g = g_malloc(len + RDMA_WIRE_MAX_OVERHEAD);
    RdmaSoftPkt pkt;
    RdmaSoftWireInfo info;
    const char *why = NULL;
    size_t n;

    if (!rdma_soft_wire_parse(f, len, &pkt, &info, &why)) {
        g_test_message("%s frame %u (%zu bytes): refused: %s", name, idx,
                       len, why);
        g_test_fail();
        return;
    }
    n = rdma_soft_wire_build(g, len + RDMA_WIRE_MAX_OVERHEAD, &pkt,
                             &info.addr, pkt.bytes);
    if (n != info.len || memcmp(g, f, n)) {
        size_t i = 0;

        while (i < MIN(n, info.len) && g[i] == f[i]) {
            i++;
        }
        g_test_message("%s frame %u (%s): rebuilt %zu bytes of %zu, first "
                       "difference at byte %zu", name, idx,
                       rdma_soft_op_info(pkt.opcode)->name, n, info.len, i);
        g_test_fail();
    }
}

static void test_vector(gconstpointer data)
{
    const char *path = data;
    g_autofree char *name = g_path_get_basename(path);
    g_autofree gchar *buf = NULL;
    g_autoptr(GError) err = NULL;
    const uint8_t *p;
    gsize size, off;
    unsigned frames = 0, roce = 0;
    bool big;

    if (!g_file_get_contents(path, &buf, &size, &err)) {
        g_test_message("%s: %s", path, err->message);
        g_test_fail();
        return;
    }
    p = (const uint8_t *)buf;
    big = size >= 4 && (p[0] == 0xa1 && p[1] == 0xb2);
    if (size < 24 || (pcap32(p, big) != 0xa1b2c3d4 &&
                      pcap32(p, big) != 0xa1b23c4d)) {
        g_test_message("%s: not a classic pcap file", name);
        g_test_fail();
        return;
    }
    if ((pcap32(p + 20, big) & 0xffff) != 1) {
        g_test_message("%s: link type %u, not Ethernet (1)", name,
                       pcap32(p + 20, big) & 0xffff);
        g_test_fail();
        return;
    }
    for (off = 24; off < size; frames++) {
        uint32_t incl, orig;

        if (size - off < 16) {
            g_test_message("%s: record %u truncated", name, frames);
            g_test_fail();
            return;
        }
        incl = pcap32(p + off + 8, big);
        orig = pcap32(p + off + 12, big);
        if (incl > size - off - 16) {
            g_test_message("%s: record %u truncated", name, frames);
            g_test_fail();
            return;
        }
        off += 16;
        if (ref_udp_dport(p + off, incl) == RDMA_ROCE_V2_UDP_PORT) {
            roce++;
            g_assert_true(rdma_soft_wire_is_roce(p + off, incl));
            if (incl < orig) {
                g_test_message("%s frame %u: captured %u bytes of %u", name,
                               frames, incl, orig);
                g_test_fail();
            } else {
                vector_frame(name, frames, p + off, incl);
            }
        } else {
            g_assert_false(rdma_soft_wire_is_roce(p + off, incl));
        }
        off += incl;
    }
    g_test_message("%s: %u frames, %u RoCE v2", name, frames, roce);
    if (!roce) {
        g_test_skip("no RoCE v2 frame in the capture");
    }
}

static void test_no_vectors(gconstpointer data)
{
    g_autofree char *msg = g_strdup_printf("no *.pcap in %s",
                                           (const char *)data);

    g_test_skip(msg);
}

/* Each capture in the vectors directory is a test case of its own. */
static void add_vector_tests(void)
{
    const char *env = g_getenv("RDMA_UNIT_VECTORS");
    g_autofree char *here = g_path_get_dirname(__FILE__);
    char *dir = env ? g_strdup(env) : g_build_filename(here, "vectors", NULL);
    GDir *d = g_dir_open(dir, 0, NULL);
    GPtrArray *files = g_ptr_array_new();
    const char *e;

    while (d && (e = g_dir_read_name(d))) {
        if (g_str_has_suffix(e, ".pcap")) {
            g_ptr_array_add(files, g_build_filename(dir, e, NULL));
        }
    }
    if (d) {
        g_dir_close(d);
    }
    g_ptr_array_sort(files, (GCompareFunc)g_strcmp0);
    for (guint i = 0; i < files->len; i++) {
        char *path = g_ptr_array_index(files, i);
        g_autofree char *base = g_path_get_basename(path);
        g_autofree char *tp = g_strconcat("/rdma-soft/wire/vector/", base,
                                          NULL);

        g_test_add_data_func_full(tp, path, test_vector, g_free);
    }
    if (!files->len) {
        g_test_add_data_func_full("/rdma-soft/wire/vectors", dir,
                                  test_no_vectors, g_free);
    } else {
        g_free(dir);
    }
    g_ptr_array_free(files, true);
}

int main(int argc, char **argv)
{
    for (size_t i = 0; i < sizeof(payload); i++) {
        payload[i] = i * 7 + 1;
    }
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rdma-soft/wire/roundtrip", test_roundtrip);
    g_test_add_func("/rdma-soft/wire/layout", test_layout);
    g_test_add_func("/rdma-soft/wire/icrc-seed", test_icrc_seed);
    g_test_add_func("/rdma-soft/wire/icrc", test_icrc);
    g_test_add_func("/rdma-soft/wire/crc32", test_crc32);
    g_test_add_func("/rdma-soft/wire/crc32-consts", test_crc32_consts);
    g_test_add_func("/rdma-soft/wire/truncated", test_truncated);
    g_test_add_func("/rdma-soft/wire/bit-flips", test_bit_flips);
    g_test_add_func("/rdma-soft/wire/refusals", test_refusals);
    g_test_add_func("/rdma-soft/wire/refusals-ipv4", test_refusals_ipv4);
    g_test_add_func("/rdma-soft/wire/refusals-ipv6", test_refusals_ipv6);
    g_test_add_func("/rdma-soft/wire/refusals-payload",
                    test_refusals_payload);
    g_test_add_func("/rdma-soft/wire/build-refusals", test_build_refusals);
    g_test_add_func("/rdma-soft/wire/is-roce", test_is_roce);
    add_vector_tests();
    return g_test_run();
}
