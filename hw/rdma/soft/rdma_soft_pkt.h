/*
 * The soft RDMA engine: IB transport packets.
 *
 * The requester, the responder and the completer talk to each other only
 * in packets: a packet descriptor (RdmaSoftPkt) whose opcode is an IB
 * transport opcode (BTH byte 0) and whose fields are the BTH and the
 * extension headers that opcode carries (IB spec vol. 1, 9.2 to 9.4 and
 * table 38).  The opcode table (rdma_soft_opcode.c) says, per opcode,
 * which headers come with it and what it means.
 *
 * A packet's payload is never copied into the packet on the way between
 * two QPs of the same device: it names where its bytes are in the
 * sender's memory (a send WQE's scatter list, or a range under an rkey),
 * and the receiver moves them straight into its own buffer, one copy
 * as before.  The receiver resolves that reference again, with every
 * check, when it takes the packet: what the reference named may have
 * gone away in between.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SOFT_RDMA_SOFT_PKT_H
#define HW_RDMA_SOFT_RDMA_SOFT_PKT_H

/* BTH opcode: the transport in bits 7..5, the operation below. */
#define RDMA_OPC_RC                     0x00
#define RDMA_OPC_UD                     0x60
#define RDMA_OPC_TRANSPORT_MASK         0xe0

enum {
    RDMA_OPC_SEND_FIRST                 = 0x00,
    RDMA_OPC_SEND_MIDDLE                = 0x01,
    RDMA_OPC_SEND_LAST                  = 0x02,
    RDMA_OPC_SEND_LAST_IMM              = 0x03,
    RDMA_OPC_SEND_ONLY                  = 0x04,
    RDMA_OPC_SEND_ONLY_IMM              = 0x05,
    RDMA_OPC_WRITE_FIRST                = 0x06,
    RDMA_OPC_WRITE_MIDDLE               = 0x07,
    RDMA_OPC_WRITE_LAST                 = 0x08,
    RDMA_OPC_WRITE_LAST_IMM             = 0x09,
    RDMA_OPC_WRITE_ONLY                 = 0x0a,
    RDMA_OPC_WRITE_ONLY_IMM             = 0x0b,
    RDMA_OPC_READ_REQUEST               = 0x0c,
    RDMA_OPC_READ_RESPONSE_FIRST        = 0x0d,
    RDMA_OPC_READ_RESPONSE_MIDDLE       = 0x0e,
    RDMA_OPC_READ_RESPONSE_LAST         = 0x0f,
    RDMA_OPC_READ_RESPONSE_ONLY         = 0x10,
    RDMA_OPC_ACKNOWLEDGE                = 0x11,
    RDMA_OPC_ATOMIC_ACKNOWLEDGE         = 0x12,
    RDMA_OPC_COMPARE_SWAP               = 0x13,
    RDMA_OPC_FETCH_ADD                  = 0x14,
    RDMA_OPC_SEND_LAST_INV              = 0x16,
    RDMA_OPC_SEND_ONLY_INV              = 0x17,
    RDMA_OPC_UD_SEND_ONLY               = RDMA_OPC_UD | 0x04,
    RDMA_OPC_UD_SEND_ONLY_IMM           = RDMA_OPC_UD | 0x05,
};

/* What an opcode carries (headers after the BTH) and what it is. */
enum {
    RDMA_PKT_RETH       = 1u << 0,      /* 16: va, rkey, DMA length */
    RDMA_PKT_AETH       = 1u << 1,      /*  4: syndrome, MSN */
    RDMA_PKT_ATMETH     = 1u << 2,      /* 28: va, rkey, swap/add, compare */
    RDMA_PKT_ATMACK     = 1u << 3,      /*  8: original value */
    RDMA_PKT_IMMDT      = 1u << 4,      /*  4: immediate data */
    RDMA_PKT_IETH       = 1u << 5,      /*  4: rkey to invalidate */
    RDMA_PKT_DETH       = 1u << 6,      /*  8: Q_Key, source QP */
    RDMA_PKT_PAYLOAD    = 1u << 7,      /* may carry data */
    RDMA_PKT_REQ        = 1u << 8,      /* requester to responder */
    RDMA_PKT_RESP       = 1u << 9,      /* responder to requester */
    RDMA_PKT_SEND       = 1u << 10,
    RDMA_PKT_WRITE      = 1u << 11,
    RDMA_PKT_READ       = 1u << 12,     /* request or response */
    RDMA_PKT_ATOMIC     = 1u << 13,     /* request or response */
    RDMA_PKT_FIRST      = 1u << 14,     /* first packet of a message */
    RDMA_PKT_LAST       = 1u << 15,     /* last (ONLY: FIRST | LAST) */
    RDMA_PKT_RECV       = 1u << 16,     /* consumes a receive WQE */
};

#define RDMA_BTH_LEN        12
#define RDMA_RETH_LEN       16
#define RDMA_AETH_LEN       4
#define RDMA_ATMETH_LEN     28
#define RDMA_ATMACK_LEN     8
#define RDMA_IMMDT_LEN      4
#define RDMA_IETH_LEN       4
#define RDMA_DETH_LEN       8

typedef struct RdmaSoftOpInfo {
    const char *name;
    uint32_t mask;                  /* RDMA_PKT_*; 0: not an opcode here */
} RdmaSoftOpInfo;

/* rdma_soft_opcode.c */
const RdmaSoftOpInfo *rdma_soft_op_info(uint8_t opcode);
/* Bytes of the BTH and the extension headers of @opcode (0: unknown). */
unsigned rdma_soft_hdr_len(uint8_t opcode);
/*
 * The request opcode for a packet of a send WR (RdmaWrOpcode @wr_op) on
 * a QP of transport @transport that is the first and/or last of its
 * message; -1 when the WR is not sent as packets (local operations).
 */
int rdma_soft_req_opcode(uint8_t transport, int wr_op, bool first, bool last);
/* The READ RESPONSE opcode of a response packet. */
uint8_t rdma_soft_read_resp_opcode(bool first, bool last);

/* AETH syndrome (IB 9.7.5.2.x): bits 6..5 say ACK, RNR NAK or NAK. */
#define RDMA_AETH_ACK               0x00    /* low 5 bits: credits */
#define RDMA_AETH_RNR_NAK           0x20    /* low 5 bits: RNR timer */
#define RDMA_AETH_NAK               0x60    /* low 5 bits: the code */
#define RDMA_AETH_TYPE_MASK         0x60
#define RDMA_AETH_CREDITS_INVALID   0x1f    /* no end-to-end credits */
#define RDMA_NAK_PSN_SEQ_ERR        0
#define RDMA_NAK_INV_REQ            1
#define RDMA_NAK_REM_ACCESS         2
#define RDMA_NAK_REM_OP             3

#define RDMA_PSN_MASK               0xffffffu
#define RDMA_MSN_MASK               0xffffffu

/* PSN arithmetic in 24 bits: a - b, as a signed distance. */
static inline int32_t rdma_psn_diff(uint32_t a, uint32_t b)
{
    return (int32_t)((a - b) << 8) >> 8;
}

/* Where a payload's bytes are. */
typedef enum RdmaSoftData {
    RDMA_DATA_NONE,
    RDMA_DATA_WQE,          /* send WQE of QP data_qpn holding PSN data_psn */
    RDMA_DATA_REMOTE,       /* [va, +len) under rkey at QP data_qpn */
    RDMA_DATA_BYTES,        /* in @bytes (a frame) */
} RdmaSoftData;

typedef struct RdmaSoftPkt {
    uint8_t opcode;
    uint32_t mask;                  /* the opcode's RDMA_PKT_* */
    uint32_t psn;
    uint32_t dest_qpn;
    uint32_t src_qpn;               /* DETH; the sending QP on loopback */
    bool ackreq;
    bool se;                        /* solicited event */
    /* RETH, and AtomicETH's va and rkey */
    uint64_t va;
    uint32_t rkey;
    uint32_t dma_len;
    /* AtomicETH */
    uint64_t swap_add;
    uint64_t compare;
    /* AETH */
    uint8_t syndrome;
    uint32_t msn;
    /* AtomicAckETH */
    uint64_t orig;
    /* ImmDt (network byte order, passed through), IETH */
    uint32_t imm;
    uint32_t inv_rkey;
    /* DETH */
    uint32_t qkey;
    /* the network header: the GIDs (UD receives them as a GRH) */
    uint8_t sgid[16];
    uint8_t dgid[16];
    /*
     * The peer is across the link (RoCE v2 frames), not a QP of this
     * device; then how to reach it: the rest of its address vector.
     */
    bool remote;
    uint8_t dmac[6];
    uint8_t hop_limit;
    uint8_t tclass;
    uint32_t flow_label;
    /* payload */
    uint32_t paylen;
    RdmaSoftData data;
    uint32_t data_qpn;
    uint32_t data_psn;              /* RDMA_DATA_WQE */
    uint64_t data_off;              /* RDMA_DATA_WQE: from the message start */
    uint64_t data_va;               /* RDMA_DATA_REMOTE */
    uint32_t data_rkey;
    const uint8_t *bytes;           /* RDMA_DATA_BYTES */
} RdmaSoftPkt;

#endif
