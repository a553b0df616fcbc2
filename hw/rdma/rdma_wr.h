/*
 * RDMA device core: work requests and completions.
 *
 * The front-end parses a guest WQE once into these structs (its private
 * copy; the guest's ring is never read again for it) and hands them to the
 * backend; the backend reports results as RdmaWc.  Opcode, status and flag
 * numbers are those of the IB verbs, as the guest ABI uses them too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_RDMA_WR_H
#define HW_RDMA_RDMA_WR_H

#define RDMA_MAX_SGE                64

typedef enum RdmaWrOpcode {
    RDMA_WR_RDMA_WRITE,
    RDMA_WR_RDMA_WRITE_WITH_IMM,
    RDMA_WR_SEND,
    RDMA_WR_SEND_WITH_IMM,
    RDMA_WR_RDMA_READ,
    RDMA_WR_ATOMIC_CMP_AND_SWP,
    RDMA_WR_ATOMIC_FETCH_AND_ADD,
    RDMA_WR_LSO,
    RDMA_WR_SEND_WITH_INV,
    RDMA_WR_RDMA_READ_WITH_INV,
    RDMA_WR_LOCAL_INV,
    RDMA_WR_FAST_REG_MR,
    RDMA_WR_MASKED_ATOMIC_CMP_AND_SWP,
    RDMA_WR_MASKED_ATOMIC_FETCH_AND_ADD,
    RDMA_WR_MAX,
} RdmaWrOpcode;

typedef enum RdmaWcStatus {
    RDMA_WC_SUCCESS,
    RDMA_WC_LOC_LEN_ERR,
    RDMA_WC_LOC_QP_OP_ERR,
    RDMA_WC_LOC_EEC_OP_ERR,
    RDMA_WC_LOC_PROT_ERR,
    RDMA_WC_WR_FLUSH_ERR,
    RDMA_WC_MW_BIND_ERR,
    RDMA_WC_BAD_RESP_ERR,
    RDMA_WC_LOC_ACCESS_ERR,
    RDMA_WC_REM_INV_REQ_ERR,
    RDMA_WC_REM_ACCESS_ERR,
    RDMA_WC_REM_OP_ERR,
    RDMA_WC_RETRY_EXC_ERR,
    RDMA_WC_RNR_RETRY_EXC_ERR,
    RDMA_WC_GENERAL_ERR = 21,
} RdmaWcStatus;

typedef enum RdmaWcOpcode {
    RDMA_WC_SEND,
    RDMA_WC_RDMA_WRITE,
    RDMA_WC_RDMA_READ,
    RDMA_WC_COMP_SWAP,
    RDMA_WC_FETCH_ADD,
    RDMA_WC_BIND_MW,
    RDMA_WC_LSO,
    RDMA_WC_LOCAL_INV,
    RDMA_WC_FAST_REG_MR,
    RDMA_WC_RECV = 1 << 7,
    RDMA_WC_RECV_RDMA_WITH_IMM,
} RdmaWcOpcode;

/* The completion opcode of a send WR (what it did, not how it asked). */
static inline RdmaWcOpcode rdma_wc_opcode(uint32_t op)
{
    switch (op) {
    case RDMA_WR_RDMA_WRITE:
    case RDMA_WR_RDMA_WRITE_WITH_IMM:
        return RDMA_WC_RDMA_WRITE;
    case RDMA_WR_RDMA_READ:
        return RDMA_WC_RDMA_READ;
    case RDMA_WR_ATOMIC_CMP_AND_SWP:
        return RDMA_WC_COMP_SWAP;
    case RDMA_WR_ATOMIC_FETCH_AND_ADD:
        return RDMA_WC_FETCH_ADD;
    case RDMA_WR_LOCAL_INV:
        return RDMA_WC_LOCAL_INV;
    case RDMA_WR_FAST_REG_MR:
        return RDMA_WC_FAST_REG_MR;
    default:
        return RDMA_WC_SEND;
    }
}

#define RDMA_SEND_FENCE             (1u << 0)
#define RDMA_SEND_SIGNALED          (1u << 1)
#define RDMA_SEND_SOLICITED         (1u << 2)
#define RDMA_SEND_INLINE            (1u << 3)

#define RDMA_WC_GRH                 (1u << 0)
#define RDMA_WC_WITH_IMM            (1u << 1)
#define RDMA_WC_WITH_INVALIDATE     (1u << 2)
#define RDMA_WC_WITH_SMAC           (1u << 4)
#define RDMA_WC_WITH_NETWORK_HDR_TYPE (1u << 6)

#define RDMA_NETWORK_IPV4           1
#define RDMA_NETWORK_IPV6           2

#define RDMA_GRH_SIZE               40  /* before every UD receive */
#define RDMA_QKEY_PRIVILEGED        0x80000000u

typedef struct RdmaSge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} RdmaSge;

typedef struct RdmaSendWr {
    uint64_t wr_id;
    RdmaWrOpcode opcode;
    uint32_t flags;                 /* RDMA_SEND_* */
    uint32_t imm_data;              /* network byte order, passed through */
    uint32_t invalidate_rkey;
    uint64_t remote_addr;           /* RDMA and atomics */
    uint32_t rkey;
    uint64_t compare_add;
    uint64_t swap;
    struct {                        /* FAST_REG_MR */
        uint64_t iova;
        uint64_t pdir;              /* page list, as a page directory */
        uint32_t page_shift;
        uint32_t npages;
        uint32_t length;
        uint32_t access;
        uint32_t key;
    } fr;
    uint32_t remote_qpn;            /* UD */
    uint32_t remote_qkey;
    uint8_t dgid[16];
    uint8_t sgid_index;
    /* UD on RoCE: the rest of the address vector (where the GID is) */
    uint8_t dmac[6];
    uint8_t hop_limit;
    uint8_t traffic_class;
    uint32_t flow_label;
    uint32_t num_sge;
    RdmaSge sge[RDMA_MAX_SGE];
} RdmaSendWr;

/* Bytes a WR's scatter list names. */
static inline uint64_t rdma_wr_bytes(const RdmaSendWr *wr)
{
    uint64_t n = 0;
    uint32_t i;

    for (i = 0; i < wr->num_sge && i < RDMA_MAX_SGE; i++) {
        n += wr->sge[i].length;
    }
    return n;
}

/*
 * The most data a backend that moves it itself (soft) moves for one WR
 * in one go: a longer message is placed in steps, one per pass of an
 * entry point's budget (rdma_rm.h), so a 2 GiB WR never holds the BQL
 * for long.
 */
#define RDMA_WR_STEP    (1ull << 20)

/* What starting @wr costs an entry point's budget. */
static inline uint64_t rdma_wr_step_bytes(const RdmaSendWr *wr)
{
    return MIN(rdma_wr_bytes(wr), RDMA_WR_STEP);
}

typedef struct RdmaRecvWr {
    uint64_t wr_id;
    uint32_t num_sge;
    RdmaSge sge[RDMA_MAX_SGE];
} RdmaRecvWr;

typedef struct RdmaWc {
    uint64_t wr_id;
    RdmaWcStatus status;
    RdmaWcOpcode opcode;
    uint32_t byte_len;
    uint32_t imm_data;
    uint32_t src_qp;
    uint32_t wc_flags;
    uint32_t qp_handle;
    uint8_t network_hdr_type;
    uint8_t smac[6];
} RdmaWc;

/* Asynchronous events, numbered as the IB events (and the guest ABI). */
typedef enum RdmaEvent {
    RDMA_EVENT_NONE = -1,
    RDMA_EVENT_CQ_ERR = 0,
    RDMA_EVENT_QP_FATAL = 1,
    RDMA_EVENT_QP_REQ_ERR = 2,
    RDMA_EVENT_QP_ACCESS_ERR = 3,
    RDMA_EVENT_PORT_ACTIVE = 9,
    RDMA_EVENT_PORT_ERR = 10,
    RDMA_EVENT_SRQ_LIMIT_REACHED = 15,
    RDMA_EVENT_QP_LAST_WQE_REACHED = 16,
} RdmaEvent;

#endif
