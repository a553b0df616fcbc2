/*
 * The soft RDMA engine: internal interfaces.
 *
 * rdma_soft.c       backend ops, per-object engine state
 * rdma_soft_mem.c   keys, access rights and data movement in guest memory
 * rdma_soft_qp.c    requester and responder (the transport is a local
 *                   delivery to a QP of the same device; a RoCE v2 wire
 *                   would replace rdma_soft_deliver() and nothing above it)
 *
 * Everything runs under the BQL: in a vCPU thread (doorbell), in a main
 * loop bottom half, or in a main loop timer (RNR retry), inside one of
 * the device's entry points (rdma_rm_enter()): a retry fan-out takes its
 * work from that entry point's budget and leaves the rest to retry_bh.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SOFT_RDMA_SOFT_H
#define HW_RDMA_SOFT_RDMA_SOFT_H

#include "qemu/timer.h"
#include "hw/rdma/rdma_backend.h"

typedef struct RdmaSoft RdmaSoft;

/* Engine state of one QP. */
typedef struct RdmaSoftQp {
    RdmaSoft *soft;
    RdmaQp *qp;
    RdmaSendWr stalled;             /* WR waiting for an RNR retry */
    uint64_t stalled_bytes;         /* what its retry costs the budget */
    bool has_stalled;
    uint32_t rnr_attempts;
    uint32_t rnr_dest_qpn;          /* whose receive queue we wait for */
    QEMUTimer *rnr_timer;
    bool rnr_due;                   /* timer expired, retry pending */
    bool retrying;
    /*
     * A message longer than RDMA_WR_STEP is placed in steps: the WR waits
     * in @stalled (as for an RNR retry, but due at once) with what is
     * placed of it, and the receive WQE its first step took (a SEND).
     */
    uint64_t msg_done;
    RdmaRecvWr msg_rwr;
    bool msg_has_rwr;
    uint32_t msg_dst_qpn;
} RdmaSoftQp;

/* A QP's held WR in the migration stream (rdma_soft_vmstate.c) */
typedef struct RdmaSoftQpMig {
    uint32_t qpn;
    RdmaSendWr wr;
    uint32_t rnr_attempts;
    uint32_t rnr_dest_qpn;
    int64_t rnr_left_ns;            /* time left on the RNR timer, or -1 */
    bool rnr_due;
    uint64_t msg_done;
    bool msg_has_rwr;
    uint32_t msg_dst_qpn;
    RdmaRecvWr msg_rwr;
} RdmaSoftQpMig;

struct RdmaSoft {
    RdmaBackend be;
    QEMUBH *retry_bh;               /* RNR retries, under the guard */
    uint32_t nstalled;              /* QPs holding a WR for an RNR retry */
    int32_t mig_n;                  /* records while saved or loaded */
    RdmaSoftQpMig *mig;
};

/* The one place that says whether a QP's send queue waits on a held WR. */
static inline void rdma_soft_set_stalled(RdmaSoftQp *sqp, bool stalled)
{
    if (sqp->has_stalled != stalled) {
        sqp->has_stalled = stalled;
        sqp->soft->nstalled += stalled ? 1 : -1;
    }
    sqp->qp->sq_stalled = stalled;
}

/* Bytes of a scatter list, resolved to MRs and checked. */
typedef struct RdmaSoftSeg {
    RdmaMr *mr;
    uint64_t va;
    uint64_t len;
} RdmaSoftSeg;

typedef struct RdmaSoftSgl {
    RdmaSoftSeg seg[RDMA_MAX_SGE];
    uint32_t nseg;
    uint64_t total;
} RdmaSoftSgl;

/* rdma_soft_mem.c */
RdmaWcStatus rdma_soft_local_sgl(RdmaResources *rm, uint32_t pd_handle,
                                 const RdmaSge *sge, uint32_t num_sge,
                                 uint32_t access, RdmaSoftSgl *sgl);
bool rdma_soft_remote_seg(RdmaResources *rm, const RdmaQp *qp, uint64_t va,
                          uint32_t rkey, uint64_t len, uint32_t access,
                          RdmaSoftSgl *sgl);
bool rdma_soft_copy(PCIDevice *pdev, RdmaSoftSgl *dst, uint64_t dst_off,
                    RdmaSoftSgl *src, uint64_t src_off, uint64_t len);
bool rdma_soft_write_buf(PCIDevice *pdev, RdmaSoftSgl *dst, uint64_t off,
                         const void *buf, uint64_t len);
bool rdma_soft_atomic(PCIDevice *pdev, RdmaSoftSgl *remote,
                      RdmaWrOpcode op, uint64_t compare_add, uint64_t swap,
                      uint64_t *orig);

/* rdma_soft_qp.c */
#define RDMA_RNR_INFINITE   7
/* The longest RNR timer of the IB spec (table 45): 655.36 ms */
#define RDMA_SOFT_RNR_MAX_NS    (65536 * 10000ll)
void rdma_soft_post_send(RdmaBackend *be, RdmaQp *qp, const RdmaSendWr *wr);
void rdma_soft_recv_posted(RdmaBackend *be, RdmaQp *qp, RdmaSrq *srq);
void rdma_soft_flush_qp(RdmaBackend *be, RdmaQp *qp);
void rdma_soft_msg_abort(RdmaSoftQp *sqp);
void rdma_soft_msg_forget_dst(RdmaSoft *soft, RdmaQp *dst);
void rdma_soft_rnr_timer(void *opaque);
void rdma_soft_retry_bh(void *opaque);

#endif
