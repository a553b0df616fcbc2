/*
 * Unit tests of the soft engine's opcode table (hw/rdma/soft/
 * rdma_soft_opcode.c): the header lengths and kinds of every RC and UD
 * opcode against IB vol. 1 (table 38 and 9.2 to 9.4), the opcodes a
 * send WR's packets take, and 24-bit PSN arithmetic.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/rdma/rdma_wr.h"
#include "rdma_soft_pkt.h"

typedef struct OpFact {
    uint8_t opcode;
    unsigned hdr_len;           /* BTH and extension headers, bytes */
    uint32_t kind;              /* the RDMA_PKT_* bits that say what it is */
} OpFact;

#define REQ RDMA_PKT_REQ
#define RSP RDMA_PKT_RESP
#define F RDMA_PKT_FIRST
#define L RDMA_PKT_LAST
#define KINDS (RDMA_PKT_REQ | RDMA_PKT_RESP | RDMA_PKT_SEND | \
               RDMA_PKT_WRITE | RDMA_PKT_READ | RDMA_PKT_ATOMIC | \
               RDMA_PKT_FIRST | RDMA_PKT_LAST | RDMA_PKT_RECV)

/*
 * BTH 12, RETH 16, AETH 4, AtomicETH 28, AtomicAckETH 8, ImmDt 4, IETH 4,
 * DETH 8.
 */
static const OpFact facts[] = {
    { 0x00, 12, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | F },
    { 0x01, 12, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV },
    { 0x02, 12, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | L },
    { 0x03, 16, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | L },
    { 0x04, 12, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | F | L },
    { 0x05, 16, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | F | L },
    { 0x06, 28, REQ | RDMA_PKT_WRITE | F },
    { 0x07, 12, REQ | RDMA_PKT_WRITE },
    { 0x08, 12, REQ | RDMA_PKT_WRITE | L },
    { 0x09, 16, REQ | RDMA_PKT_WRITE | RDMA_PKT_RECV | L },
    { 0x0a, 28, REQ | RDMA_PKT_WRITE | F | L },
    { 0x0b, 32, REQ | RDMA_PKT_WRITE | RDMA_PKT_RECV | F | L },
    { 0x0c, 28, REQ | RDMA_PKT_READ | F | L },
    { 0x0d, 16, RSP | RDMA_PKT_READ | F },
    { 0x0e, 12, RSP | RDMA_PKT_READ },
    { 0x0f, 16, RSP | RDMA_PKT_READ | L },
    { 0x10, 16, RSP | RDMA_PKT_READ | F | L },
    { 0x11, 16, RSP | F | L },
    { 0x12, 24, RSP | RDMA_PKT_ATOMIC | F | L },
    { 0x13, 40, REQ | RDMA_PKT_ATOMIC | F | L },
    { 0x14, 40, REQ | RDMA_PKT_ATOMIC | F | L },
    { 0x16, 16, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | L },
    { 0x17, 16, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | F | L },
    { 0x64, 20, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | F | L },
    { 0x65, 24, REQ | RDMA_PKT_SEND | RDMA_PKT_RECV | F | L },
};

static void test_known_opcodes(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(facts); i++) {
        const RdmaSoftOpInfo *info = rdma_soft_op_info(facts[i].opcode);

        g_test_message("opcode 0x%02x", facts[i].opcode);
        g_assert_nonnull(info);
        g_assert_nonnull(info->name);
        g_assert_cmpuint(rdma_soft_hdr_len(facts[i].opcode), ==,
                         facts[i].hdr_len);
        g_assert_cmphex(info->mask & KINDS, ==, facts[i].kind);
        /* Data comes with SENDs, WRITEs and READ responses only. */
        g_assert_cmpint(!!(info->mask & RDMA_PKT_PAYLOAD), ==,
                        !!(info->mask & (RDMA_PKT_SEND | RDMA_PKT_WRITE)) ||
                        (info->mask & (RDMA_PKT_RESP | RDMA_PKT_READ)) ==
                        (RDMA_PKT_RESP | RDMA_PKT_READ));
    }
}

/* UC, RD, CNP, XRC, FLUSH, ATOMIC WRITE and reserved codes are not ours. */
static void test_unknown_opcodes(void)
{
    unsigned known = 0;

    for (unsigned op = 0; op < 256; op++) {
        bool listed = false;

        for (size_t i = 0; i < G_N_ELEMENTS(facts); i++) {
            listed |= facts[i].opcode == op;
        }
        if (listed) {
            known++;
            continue;
        }
        g_test_message("opcode 0x%02x", op);
        g_assert_null(rdma_soft_op_info(op));
        g_assert_cmpuint(rdma_soft_hdr_len(op), ==, 0);
    }
    g_assert_cmpuint(known, ==, G_N_ELEMENTS(facts));
}

static void test_request_opcodes(void)
{
    static const struct {
        int wr_op;
        int first, middle, last, only;
    } rc[] = {
        { RDMA_WR_SEND, 0x00, 0x01, 0x02, 0x04 },
        { RDMA_WR_SEND_WITH_IMM, 0x00, 0x01, 0x03, 0x05 },
        { RDMA_WR_SEND_WITH_INV, 0x00, 0x01, 0x16, 0x17 },
        { RDMA_WR_RDMA_WRITE, 0x06, 0x07, 0x08, 0x0a },
        { RDMA_WR_RDMA_WRITE_WITH_IMM, 0x06, 0x07, 0x09, 0x0b },
        { RDMA_WR_RDMA_READ, 0x0c, 0x0c, 0x0c, 0x0c },
        { RDMA_WR_ATOMIC_CMP_AND_SWP, 0x13, 0x13, 0x13, 0x13 },
        { RDMA_WR_ATOMIC_FETCH_AND_ADD, 0x14, 0x14, 0x14, 0x14 },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(rc); i++) {
        g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_RC, rc[i].wr_op, true,
                                             false), ==, rc[i].first);
        g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_RC, rc[i].wr_op, false,
                                             false), ==, rc[i].middle);
        g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_RC, rc[i].wr_op, false,
                                             true), ==, rc[i].last);
        g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_RC, rc[i].wr_op, true,
                                             true), ==, rc[i].only);
    }
    /* Local operations are not packets; UD sends only SEND[_WITH_IMM]. */
    g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_RC, RDMA_WR_LOCAL_INV, true,
                                         true), ==, -1);
    g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_RC, RDMA_WR_FAST_REG_MR,
                                         true, true), ==, -1);
    g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_UD, RDMA_WR_SEND, true,
                                         true), ==, 0x64);
    g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_UD, RDMA_WR_SEND_WITH_IMM,
                                         true, true), ==, 0x65);
    g_assert_cmpint(rdma_soft_req_opcode(RDMA_OPC_UD, RDMA_WR_RDMA_WRITE,
                                         true, true), ==, -1);
    g_assert_cmpuint(rdma_soft_read_resp_opcode(true, false), ==, 0x0d);
    g_assert_cmpuint(rdma_soft_read_resp_opcode(false, false), ==, 0x0e);
    g_assert_cmpuint(rdma_soft_read_resp_opcode(false, true), ==, 0x0f);
    g_assert_cmpuint(rdma_soft_read_resp_opcode(true, true), ==, 0x10);
}

/* PSNs are 24 bits and wrap: the distance is signed, within 2^23. */
static void test_psn_diff(void)
{
    g_assert_cmpint(rdma_psn_diff(5, 3), ==, 2);
    g_assert_cmpint(rdma_psn_diff(3, 5), ==, -2);
    g_assert_cmpint(rdma_psn_diff(0x000001, 0xffffff), ==, 2);
    g_assert_cmpint(rdma_psn_diff(0xffffff, 0x000001), ==, -2);
    g_assert_cmpint(rdma_psn_diff(0x7fffff, 0), ==, 0x7fffff);
    g_assert_cmpint(rdma_psn_diff(0x800000, 0), ==, -0x800000);
    g_assert_cmpint(rdma_psn_diff(0x123456, 0x123456), ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rdma-soft/opcode/known", test_known_opcodes);
    g_test_add_func("/rdma-soft/opcode/unknown", test_unknown_opcodes);
    g_test_add_func("/rdma-soft/opcode/requests", test_request_opcodes);
    g_test_add_func("/rdma-soft/psn/diff", test_psn_diff);
    return g_test_run();
}
