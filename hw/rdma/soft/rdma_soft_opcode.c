/*
 * The soft RDMA engine: the IB transport opcodes it speaks.
 *
 * One entry per BTH opcode of the RC and UD transports (IB spec vol. 1,
 * table 38, and 9.2 to 9.4 for the extension headers): which headers
 * follow the BTH, and what the packet is.  An opcode without an entry
 * (UC, RD, XRC, FLUSH, ATOMIC WRITE, reserved codes) is not one of ours:
 * a packet carrying it is refused.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/rdma/rdma_wr.h"
#include "rdma_soft_pkt.h"

#define SEND_REQ    (RDMA_PKT_REQ | RDMA_PKT_SEND | RDMA_PKT_PAYLOAD | \
                     RDMA_PKT_RECV)
#define WRITE_REQ   (RDMA_PKT_REQ | RDMA_PKT_WRITE | RDMA_PKT_PAYLOAD)
#define READ_RESP   (RDMA_PKT_RESP | RDMA_PKT_READ | RDMA_PKT_PAYLOAD)
#define ONLY        (RDMA_PKT_FIRST | RDMA_PKT_LAST)

static const RdmaSoftOpInfo rdma_soft_ops[256] = {
    [RDMA_OPC_SEND_FIRST] = { "SEND_FIRST", SEND_REQ | RDMA_PKT_FIRST },
    [RDMA_OPC_SEND_MIDDLE] = { "SEND_MIDDLE", SEND_REQ },
    [RDMA_OPC_SEND_LAST] = { "SEND_LAST", SEND_REQ | RDMA_PKT_LAST },
    [RDMA_OPC_SEND_LAST_IMM] = {
        "SEND_LAST_WITH_IMMEDIATE", SEND_REQ | RDMA_PKT_LAST | RDMA_PKT_IMMDT
    },
    [RDMA_OPC_SEND_ONLY] = { "SEND_ONLY", SEND_REQ | ONLY },
    [RDMA_OPC_SEND_ONLY_IMM] = {
        "SEND_ONLY_WITH_IMMEDIATE", SEND_REQ | ONLY | RDMA_PKT_IMMDT
    },
    [RDMA_OPC_WRITE_FIRST] = {
        "RDMA_WRITE_FIRST", WRITE_REQ | RDMA_PKT_FIRST | RDMA_PKT_RETH
    },
    [RDMA_OPC_WRITE_MIDDLE] = { "RDMA_WRITE_MIDDLE", WRITE_REQ },
    [RDMA_OPC_WRITE_LAST] = { "RDMA_WRITE_LAST", WRITE_REQ | RDMA_PKT_LAST },
    [RDMA_OPC_WRITE_LAST_IMM] = {
        "RDMA_WRITE_LAST_WITH_IMMEDIATE",
        WRITE_REQ | RDMA_PKT_LAST | RDMA_PKT_IMMDT | RDMA_PKT_RECV
    },
    [RDMA_OPC_WRITE_ONLY] = {
        "RDMA_WRITE_ONLY", WRITE_REQ | ONLY | RDMA_PKT_RETH
    },
    [RDMA_OPC_WRITE_ONLY_IMM] = {
        "RDMA_WRITE_ONLY_WITH_IMMEDIATE",
        WRITE_REQ | ONLY | RDMA_PKT_RETH | RDMA_PKT_IMMDT | RDMA_PKT_RECV
    },
    [RDMA_OPC_READ_REQUEST] = {
        "RDMA_READ_REQUEST",
        RDMA_PKT_REQ | RDMA_PKT_READ | ONLY | RDMA_PKT_RETH
    },
    [RDMA_OPC_READ_RESPONSE_FIRST] = {
        "RDMA_READ_RESPONSE_FIRST", READ_RESP | RDMA_PKT_FIRST | RDMA_PKT_AETH
    },
    [RDMA_OPC_READ_RESPONSE_MIDDLE] = {
        "RDMA_READ_RESPONSE_MIDDLE", READ_RESP
    },
    [RDMA_OPC_READ_RESPONSE_LAST] = {
        "RDMA_READ_RESPONSE_LAST", READ_RESP | RDMA_PKT_LAST | RDMA_PKT_AETH
    },
    [RDMA_OPC_READ_RESPONSE_ONLY] = {
        "RDMA_READ_RESPONSE_ONLY", READ_RESP | ONLY | RDMA_PKT_AETH
    },
    [RDMA_OPC_ACKNOWLEDGE] = {
        "ACKNOWLEDGE", RDMA_PKT_RESP | ONLY | RDMA_PKT_AETH
    },
    [RDMA_OPC_ATOMIC_ACKNOWLEDGE] = {
        "ATOMIC_ACKNOWLEDGE",
        RDMA_PKT_RESP | RDMA_PKT_ATOMIC | ONLY | RDMA_PKT_AETH |
        RDMA_PKT_ATMACK
    },
    [RDMA_OPC_COMPARE_SWAP] = {
        "COMPARE_SWAP",
        RDMA_PKT_REQ | RDMA_PKT_ATOMIC | ONLY | RDMA_PKT_ATMETH
    },
    [RDMA_OPC_FETCH_ADD] = {
        "FETCH_ADD", RDMA_PKT_REQ | RDMA_PKT_ATOMIC | ONLY | RDMA_PKT_ATMETH
    },
    [RDMA_OPC_SEND_LAST_INV] = {
        "SEND_LAST_WITH_INVALIDATE", SEND_REQ | RDMA_PKT_LAST | RDMA_PKT_IETH
    },
    [RDMA_OPC_SEND_ONLY_INV] = {
        "SEND_ONLY_WITH_INVALIDATE", SEND_REQ | ONLY | RDMA_PKT_IETH
    },
    [RDMA_OPC_UD_SEND_ONLY] = {
        "UD_SEND_ONLY", SEND_REQ | ONLY | RDMA_PKT_DETH
    },
    [RDMA_OPC_UD_SEND_ONLY_IMM] = {
        "UD_SEND_ONLY_WITH_IMMEDIATE",
        SEND_REQ | ONLY | RDMA_PKT_DETH | RDMA_PKT_IMMDT
    },
};

const RdmaSoftOpInfo *rdma_soft_op_info(uint8_t opcode)
{
    return rdma_soft_ops[opcode].mask ? &rdma_soft_ops[opcode] : NULL;
}

unsigned rdma_soft_hdr_len(uint8_t opcode)
{
    uint32_t m = rdma_soft_ops[opcode].mask;

    if (!m) {
        return 0;
    }
    return RDMA_BTH_LEN +
           (m & RDMA_PKT_RETH ? RDMA_RETH_LEN : 0) +
           (m & RDMA_PKT_AETH ? RDMA_AETH_LEN : 0) +
           (m & RDMA_PKT_ATMETH ? RDMA_ATMETH_LEN : 0) +
           (m & RDMA_PKT_ATMACK ? RDMA_ATMACK_LEN : 0) +
           (m & RDMA_PKT_IMMDT ? RDMA_IMMDT_LEN : 0) +
           (m & RDMA_PKT_IETH ? RDMA_IETH_LEN : 0) +
           (m & RDMA_PKT_DETH ? RDMA_DETH_LEN : 0);
}

/* FIRST, MIDDLE, LAST, ONLY of one operation, in that order. */
static int rdma_soft_pick(bool first, bool last, int f, int m, int l, int o)
{
    return first ? (last ? o : f) : (last ? l : m);
}

int rdma_soft_req_opcode(uint8_t transport, int wr_op, bool first, bool last)
{
    if (transport == RDMA_OPC_UD) {
        /* A UD message is one packet. */
        switch (wr_op) {
        case RDMA_WR_SEND:
            return RDMA_OPC_UD_SEND_ONLY;
        case RDMA_WR_SEND_WITH_IMM:
            return RDMA_OPC_UD_SEND_ONLY_IMM;
        default:
            return -1;
        }
    }
    switch (wr_op) {
    case RDMA_WR_SEND:
        return rdma_soft_pick(first, last, RDMA_OPC_SEND_FIRST,
                              RDMA_OPC_SEND_MIDDLE, RDMA_OPC_SEND_LAST,
                              RDMA_OPC_SEND_ONLY);
    case RDMA_WR_SEND_WITH_IMM:
        return rdma_soft_pick(first, last, RDMA_OPC_SEND_FIRST,
                              RDMA_OPC_SEND_MIDDLE, RDMA_OPC_SEND_LAST_IMM,
                              RDMA_OPC_SEND_ONLY_IMM);
    case RDMA_WR_SEND_WITH_INV:
        return rdma_soft_pick(first, last, RDMA_OPC_SEND_FIRST,
                              RDMA_OPC_SEND_MIDDLE, RDMA_OPC_SEND_LAST_INV,
                              RDMA_OPC_SEND_ONLY_INV);
    case RDMA_WR_RDMA_WRITE:
        return rdma_soft_pick(first, last, RDMA_OPC_WRITE_FIRST,
                              RDMA_OPC_WRITE_MIDDLE, RDMA_OPC_WRITE_LAST,
                              RDMA_OPC_WRITE_ONLY);
    case RDMA_WR_RDMA_WRITE_WITH_IMM:
        return rdma_soft_pick(first, last, RDMA_OPC_WRITE_FIRST,
                              RDMA_OPC_WRITE_MIDDLE, RDMA_OPC_WRITE_LAST_IMM,
                              RDMA_OPC_WRITE_ONLY_IMM);
    case RDMA_WR_RDMA_READ:
        return RDMA_OPC_READ_REQUEST;
    case RDMA_WR_ATOMIC_CMP_AND_SWP:
        return RDMA_OPC_COMPARE_SWAP;
    case RDMA_WR_ATOMIC_FETCH_AND_ADD:
        return RDMA_OPC_FETCH_ADD;
    default:
        return -1;
    }
}

uint8_t rdma_soft_read_resp_opcode(bool first, bool last)
{
    return rdma_soft_pick(first, last, RDMA_OPC_READ_RESPONSE_FIRST,
                          RDMA_OPC_READ_RESPONSE_MIDDLE,
                          RDMA_OPC_READ_RESPONSE_LAST,
                          RDMA_OPC_READ_RESPONSE_ONLY);
}
