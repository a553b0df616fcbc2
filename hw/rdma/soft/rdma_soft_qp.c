/*
 * The soft RDMA engine: requester and responder.
 *
 * rdma_soft_post_send() is the requester: it checks the WR against the
 * local QP and its memory, finds where the message goes, and hands it to
 * the responder side of the destination QP, which checks the remote rights
 * and moves the data.  Today the destination is a QP of the same device,
 * so "the wire" is a function call; the results the responder returns are
 * the IB acknowledgements (ACK, RNR NAK, NAKs, no answer) so that a RoCE v2
 * transport can carry the same exchange later.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "rdma_soft.h"
#include "hw/rdma/trace.h"

#define RDMA_SOFT_MAX_MSG   (1ull << 31)
#define RDMA_SOFT_UD_MTU    1024        /* the port's active MTU */

/* What the responder answers, as the IB transport would. */
typedef enum RdmaSoftAck {
    RDMA_ACK,
    RDMA_NAK_RNR,                   /* no receive WQE: retry later */
    RDMA_NAK_INV_REQ,               /* invalid request */
    RDMA_NAK_REM_ACCESS,            /* remote access error */
    RDMA_NAK_REM_OP,                /* remote operational error */
    RDMA_NO_ANSWER,                 /* nobody there: retries run out */
    RDMA_MORE,                      /* ACK of one step of a long message */
} RdmaSoftAck;

static const RdmaWcStatus rdma_soft_ack_status[] = {
    [RDMA_ACK] = RDMA_WC_SUCCESS,
    [RDMA_NAK_RNR] = RDMA_WC_RNR_RETRY_EXC_ERR,
    [RDMA_NAK_INV_REQ] = RDMA_WC_REM_INV_REQ_ERR,
    [RDMA_NAK_REM_ACCESS] = RDMA_WC_REM_ACCESS_ERR,
    [RDMA_NAK_REM_OP] = RDMA_WC_REM_OP_ERR,
    [RDMA_NO_ANSWER] = RDMA_WC_RETRY_EXC_ERR,
};

/* RNR timer values of the IB spec (table 45), in microseconds x 100. */
static const uint32_t rdma_rnr_timer_10us[32] = {
    65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
    384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384,
    24576, 32768, 49152,
};

/* A fast-register MR of @qp's PD named by @key (any key generation). */
static RdmaMr *rdma_soft_frmr(RdmaResources *rm, const RdmaQp *qp,
                              uint32_t key)
{
    RdmaMr *mr = rdma_rm_get(rm, RDMA_RES_MR, key >> 8);

    return mr && mr->kind == RDMA_MR_FRMR &&
           mr->pd_handle == qp->pd_handle ? mr : NULL;
}

/*
 * FAST_REG_MR: give an FRMR a page list, an address range, rights and a
 * new key (the guest bumps the key's low byte for every registration).
 */
static RdmaWcStatus rdma_soft_fast_reg(RdmaResources *rm, RdmaQp *qp,
                                       const RdmaSendWr *wr)
{
    RdmaMr *mr = rdma_soft_frmr(rm, qp, wr->fr.key);
    uint32_t access = wr->fr.access & ~(RDMA_ACCESS_HUGETLB |
                                        RDMA_ACCESS_OPTIONAL);
    RdmaPageList pages;
    const char *why;

    if (!mr || wr->fr.page_shift != RDMA_PAGE_SHIFT || !wr->fr.npages ||
        wr->fr.npages > mr->max_pages || (access & ~RDMA_MR_ACCESS_ALL) ||
        ((access & (RDMA_ACCESS_REMOTE_WRITE | RDMA_ACCESS_REMOTE_ATOMIC)) &&
         !(access & RDMA_ACCESS_LOCAL_WRITE)) ||
        (wr->fr.iova & (RDMA_PAGE_SIZE - 1)) + (uint64_t)wr->fr.length >
        (uint64_t)wr->fr.npages * RDMA_PAGE_SIZE ||
        wr->fr.iova + wr->fr.length < wr->fr.iova) {
        return RDMA_WC_LOC_PROT_ERR;
    }
    if (!rdma_pdir_load(rm->pdev, wr->fr.pdir, wr->fr.npages, mr->max_pages,
                        &pages, &why)) {
        return RDMA_WC_LOC_PROT_ERR;
    }
    rdma_page_list_free(&mr->pages);
    mr->pages = pages;
    mr->iova = wr->fr.iova;
    mr->length = wr->fr.length;
    mr->access = access;
    mr->lkey = mr->rkey = wr->fr.key;
    mr->frmr_valid = true;
    return RDMA_WC_SUCCESS;
}

/* LOCAL_INV, or the invalidation a SEND_WITH_INV asks of its responder. */
static RdmaWcStatus rdma_soft_invalidate(RdmaResources *rm, RdmaQp *qp,
                                         uint32_t rkey)
{
    RdmaMr *mr = rdma_soft_frmr(rm, qp, rkey);

    if (!mr || mr->rkey != rkey) {
        return RDMA_WC_LOC_PROT_ERR;
    }
    mr->frmr_valid = false;
    return RDMA_WC_SUCCESS;
}

static void rdma_soft_complete_send(RdmaResources *rm, RdmaQp *qp,
                                    const RdmaSendWr *wr, RdmaWcStatus st,
                                    uint32_t byte_len)
{
    RdmaWc wc = {
        .wr_id = wr->wr_id,
        .status = st,
        .opcode = rdma_wc_opcode(wr->opcode),
        .byte_len = byte_len,
        .qp_handle = qp->handle,
    };

    /* Unsignaled WRs complete silently, unless they fail. */
    if (st == RDMA_WC_SUCCESS && !(wr->flags & RDMA_SEND_SIGNALED) &&
        !qp->sq_sig_all) {
        return;
    }
    trace_rdma_soft_send_done(qp->qpn, wr->wr_id, st);
    rm->fe->complete(rm->fe_opaque, qp, qp->send_cq_handle, &wc, false);
}

/* A WR failed: it completes with @st, the QP goes to ERR (UD: SQE). */
static void rdma_soft_fail(RdmaResources *rm, RdmaQp *qp,
                           const RdmaSendWr *wr, RdmaWcStatus st)
{
    rdma_soft_msg_abort(qp->be);
    rdma_soft_complete_send(rm, qp, wr, st, 0);
    rdma_rm_qp_send_error(rm, qp, RDMA_EVENT_NONE);
}

static void rdma_soft_complete_recv(RdmaResources *rm, RdmaQp *qp,
                                    const RdmaRecvWr *rwr, RdmaWc *wc,
                                    bool solicited)
{
    wc->wr_id = rwr->wr_id;
    wc->qp_handle = qp->handle;
    trace_rdma_soft_recv_done(qp->qpn, rwr->wr_id, wc->status, wc->byte_len);
    rm->fe->complete(rm->fe_opaque, qp, qp->recv_cq_handle, wc, solicited);
}

static bool rdma_soft_qp_receives(const RdmaQp *qp)
{
    return qp->attr.qp_state == RDMA_QPS_RTR ||
           qp->attr.qp_state == RDMA_QPS_RTS ||
           qp->attr.qp_state == RDMA_QPS_SQD ||
           qp->attr.qp_state == RDMA_QPS_SQE;
}

/* The bytes of a @total-byte message that the current step places. */
static uint64_t rdma_soft_step(const RdmaQp *src, uint64_t total)
{
    RdmaSoftQp *sqp = src->be;

    return MIN(total - sqp->msg_done, RDMA_WR_STEP);
}

/*
 * Responder: a message (SEND, SEND_WITH_IMM, or the immediate of an RDMA
 * WRITE) arrives at @dst and consumes a receive WQE.  A SEND longer than
 * one step takes the WQE at its first step and completes it at its last.
 */
static RdmaSoftAck rdma_soft_respond_recv(RdmaSoft *soft, RdmaQp *src,
                                          RdmaQp *dst, const RdmaSendWr *wr,
                                          RdmaSoftSgl *data, bool write_imm)
{
    RdmaResources *rm = soft->be.rm;
    RdmaSoftQp *sqp = src->be;
    bool ud = dst->type != RDMA_QPT_RC;
    uint64_t len = write_imm ? 0 : data->total;
    uint64_t need = len + (ud ? RDMA_GRH_SIZE : 0);
    uint64_t step = write_imm ? 0 : rdma_soft_step(src, len);
    RdmaRecvWr rwr;
    RdmaSoftSgl rsgl;
    RdmaWc wc = { .src_qp = src->qpn };
    int ret;

    if (sqp->msg_has_rwr) {
        rwr = sqp->msg_rwr;             /* taken by the first step */
        sqp->msg_has_rwr = false;
    } else {
        ret = rm->fe->next_recv(rm->fe_opaque, dst, &rwr);
        if (ret == -EAGAIN) {
            return RDMA_NAK_RNR;
        }
        if (ret < 0) {
            rdma_rm_qp_error(rm, dst, RDMA_EVENT_QP_FATAL);
            return RDMA_NAK_REM_OP;
        }
    }
    /* The WQE's SGEs again at every step: the guest may have changed MRs. */
    wc.status = rdma_soft_local_sgl(rm, dst->pd_handle, rwr.sge, rwr.num_sge,
                                    RDMA_ACCESS_LOCAL_WRITE, &rsgl);
    if (wc.status == RDMA_WC_SUCCESS && rsgl.total < need) {
        wc.status = RDMA_WC_LOC_LEN_ERR;
    }
    if (wc.status == RDMA_WC_SUCCESS && ud) {
        uint8_t grh[RDMA_GRH_SIZE];
        const RdmaGid *sgid = &rm->gids[wr->sgid_index];

        wc.network_hdr_type = rdma_grh_build(grh, sgid->gid, wr->dgid, len, 0,
                                            64);
        wc.wc_flags |= RDMA_WC_GRH | RDMA_WC_WITH_NETWORK_HDR_TYPE;
        if (!rdma_soft_write_buf(rm->pdev, &rsgl, 0, grh,
                                 sizeof(grh))) {
            wc.status = RDMA_WC_LOC_PROT_ERR;
        }
    }
    if (wc.status == RDMA_WC_SUCCESS && step &&
        !rdma_soft_copy(rm->pdev, &rsgl,
                        (ud ? RDMA_GRH_SIZE : 0) + sqp->msg_done, data,
                        sqp->msg_done, step)) {
        wc.status = RDMA_WC_LOC_PROT_ERR;
    }
    if (wc.status == RDMA_WC_SUCCESS && sqp->msg_done + step < len) {
        sqp->msg_rwr = rwr;             /* more steps to come */
        sqp->msg_has_rwr = true;
        sqp->msg_dst_qpn = dst->qpn;
        return RDMA_MORE;
    }
    if (wc.status == RDMA_WC_SUCCESS &&
        wr->opcode == RDMA_WR_SEND_WITH_INV) {
        wc.status = rdma_soft_invalidate(rm, dst, wr->invalidate_rkey);
        wc.wc_flags |= RDMA_WC_WITH_INVALIDATE;
        wc.imm_data = wr->invalidate_rkey;
    }
    wc.byte_len = write_imm ? data->total : need;
    wc.opcode = write_imm ? RDMA_WC_RECV_RDMA_WITH_IMM : RDMA_WC_RECV;
    if (wr->opcode == RDMA_WR_SEND_WITH_IMM || write_imm) {
        wc.imm_data = wr->imm_data;
        wc.wc_flags |= RDMA_WC_WITH_IMM;
    }
    rdma_soft_complete_recv(rm, dst, &rwr, &wc,
                            !!(wr->flags & RDMA_SEND_SOLICITED));
    if (wc.status != RDMA_WC_SUCCESS && !ud) {
        rdma_rm_qp_error(rm, dst, RDMA_EVENT_NONE);
        return wc.status == RDMA_WC_LOC_LEN_ERR ? RDMA_NAK_INV_REQ
                                                : RDMA_NAK_REM_OP;
    }
    return RDMA_ACK;
}

/* Responder: RDMA WRITE, READ and atomics against @dst's memory. */
static RdmaSoftAck rdma_soft_respond_rdma(RdmaSoft *soft, RdmaQp *src,
                                          RdmaQp *dst, const RdmaSendWr *wr,
                                          RdmaSoftSgl *local)
{
    RdmaResources *rm = soft->be.rm;
    uint64_t done = ((RdmaSoftQp *)src->be)->msg_done, step;
    RdmaSoftSgl remote;
    uint64_t orig;
    RdmaSoftAck ack;

    switch (wr->opcode) {
    case RDMA_WR_RDMA_WRITE:
    case RDMA_WR_RDMA_WRITE_WITH_IMM:
        /* A zero-length write checks no key (IB 9.4.1.1). */
        if (local->total &&
            !rdma_soft_remote_seg(rm, dst, wr->remote_addr, wr->rkey,
                                  local->total, RDMA_ACCESS_REMOTE_WRITE,
                                  &remote)) {
            return RDMA_NAK_REM_ACCESS;
        }
        /*
         * The data first: the receive WQE the immediate consumes completes
         * only for data that is in place.  An RNR NAK then costs a second
         * placement of the same data on the retry, as on a real link.
         */
        step = rdma_soft_step(src, local->total);
        if (step &&
            !rdma_soft_copy(rm->pdev, &remote, done, local, done, step)) {
            return RDMA_NAK_REM_ACCESS;
        }
        if (done + step < local->total) {
            return RDMA_MORE;
        }
        if (wr->opcode == RDMA_WR_RDMA_WRITE_WITH_IMM) {
            ack = rdma_soft_respond_recv(soft, src, dst, wr, local, true);
            if (ack != RDMA_ACK) {
                return ack;
            }
        }
        return RDMA_ACK;
    case RDMA_WR_RDMA_READ:
        step = rdma_soft_step(src, local->total);
        if (local->total &&
            (!rdma_soft_remote_seg(rm, dst, wr->remote_addr, wr->rkey,
                                   local->total, RDMA_ACCESS_REMOTE_READ,
                                   &remote) ||
             !rdma_soft_copy(rm->pdev, local, done, &remote, done, step))) {
            return RDMA_NAK_REM_ACCESS;
        }
        return done + step < local->total ? RDMA_MORE : RDMA_ACK;
    case RDMA_WR_ATOMIC_CMP_AND_SWP:
    case RDMA_WR_ATOMIC_FETCH_AND_ADD:
        if (wr->remote_addr & 7) {
            return RDMA_NAK_INV_REQ;
        }
        if (!rdma_soft_remote_seg(rm, dst, wr->remote_addr, wr->rkey, 8,
                                  RDMA_ACCESS_REMOTE_ATOMIC, &remote) ||
            !rdma_soft_atomic(rm->pdev, &remote, wr->opcode,
                              wr->compare_add, wr->swap, &orig)) {
            return RDMA_NAK_REM_ACCESS;
        }
        orig = cpu_to_le64(orig);
        return rdma_soft_write_buf(rm->pdev, local, 0, &orig, 8) ?
               RDMA_ACK : RDMA_NAK_REM_OP;
    default:
        return RDMA_NAK_INV_REQ;
    }
}

/*
 * The transport: carry @wr from @src to the QP it addresses.  Local
 * delivery: the destination must be a QP of this device, reached through
 * one of the device's GIDs.
 */
static RdmaSoftAck rdma_soft_deliver(RdmaSoft *soft, RdmaQp *src,
                                     const RdmaSendWr *wr, RdmaSoftSgl *local,
                                     RdmaQp **dst_out)
{
    RdmaResources *rm = soft->be.rm;
    RdmaQp *dst;

    if (src->type == RDMA_QPT_RC) {
        dst = rdma_rm_qp_by_num(rm, src->attr.dest_qp_num);
        if (!dst || dst->type != RDMA_QPT_RC || !rdma_soft_qp_receives(dst) ||
            dst->attr.dest_qp_num != src->qpn ||
            !rdma_rm_gid_is_local(rm, src->attr.ah.dgid)) {
            return RDMA_NO_ANSWER;
        }
        *dst_out = dst;
        if (wr->opcode == RDMA_WR_SEND || wr->opcode == RDMA_WR_SEND_WITH_IMM ||
            wr->opcode == RDMA_WR_SEND_WITH_INV) {
            return rdma_soft_respond_recv(soft, src, dst, wr, local, false);
        }
        return rdma_soft_respond_rdma(soft, src, dst, wr, local);
    }

    /* UD and GSI: unreliable; whatever cannot be delivered is dropped. */
    dst = rdma_rm_qp_by_num(rm, wr->remote_qpn);
    if (dst && (dst->type == RDMA_QPT_UD || dst->type == RDMA_QPT_GSI) &&
        rdma_soft_qp_receives(dst) && rdma_rm_gid_is_local(rm, wr->dgid)) {
        /* A Q_Key with the top bit set means "the sender QP's own". */
        uint32_t qkey = wr->remote_qkey & RDMA_QKEY_PRIVILEGED ?
                        src->attr.qkey : wr->remote_qkey;

        if (qkey == dst->attr.qkey) {
            *dst_out = dst;
            rdma_soft_respond_recv(soft, src, dst, wr, local, false);
        } else {
            trace_rdma_soft_ud_drop(src->qpn, wr->remote_qpn, "Q_Key");
        }
    } else {
        trace_rdma_soft_ud_drop(src->qpn, wr->remote_qpn, "no such QP");
    }
    return RDMA_ACK;
}

static uint32_t rdma_soft_local_access(RdmaWrOpcode op)
{
    switch (op) {
    case RDMA_WR_RDMA_READ:
    case RDMA_WR_ATOMIC_CMP_AND_SWP:
    case RDMA_WR_ATOMIC_FETCH_AND_ADD:
        return RDMA_ACCESS_LOCAL_WRITE;   /* the reply lands locally */
    default:
        return 0;
    }
}

/* Which opcodes a QP type can execute. */
static bool rdma_soft_opcode_ok(const RdmaQp *qp, RdmaWrOpcode op)
{
    if (op == RDMA_WR_LOCAL_INV || op == RDMA_WR_FAST_REG_MR) {
        return true;                    /* local: any QP type */
    }
    if (qp->type != RDMA_QPT_RC) {
        return op == RDMA_WR_SEND || op == RDMA_WR_SEND_WITH_IMM;
    }
    return op <= RDMA_WR_ATOMIC_FETCH_AND_ADD ||
           op == RDMA_WR_SEND_WITH_INV;
}

/* RNR NAK: keep the WR and retry after the responder's RNR timer. */
static void rdma_soft_rnr(RdmaSoftQp *sqp, const RdmaSendWr *wr,
                          RdmaQp *dst)
{
    RdmaQp *qp = sqp->qp;

    if (!sqp->has_stalled) {
        if (wr != &sqp->stalled) {
            sqp->stalled = *wr;
            sqp->stalled_bytes = rdma_wr_bytes(wr);
        }
        if (!sqp->retrying) {
            sqp->rnr_attempts = 0;      /* a new WR, not a retry */
        }
        rdma_soft_set_stalled(sqp, true);
    }
    sqp->rnr_attempts++;
    if (qp->attr.rnr_retry != RDMA_RNR_INFINITE &&
        sqp->rnr_attempts > qp->attr.rnr_retry) {
        RdmaSendWr failed = sqp->stalled;

        rdma_soft_set_stalled(sqp, false);
        rdma_soft_fail(sqp->soft->be.rm, qp, &failed,
                       RDMA_WC_RNR_RETRY_EXC_ERR);
        return;
    }
    trace_rdma_soft_rnr(qp->qpn, dst->qpn, sqp->rnr_attempts);
    sqp->rnr_dest_qpn = dst->qpn;
    timer_mod(sqp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              rdma_rnr_timer_10us[dst->attr.min_rnr_timer & 31] * 10000ll);
}

/*
 * One step of a long message is placed: the WR waits in @sqp, due at once,
 * and the retry bottom half places the next step within its budget.
 */
static void rdma_soft_more(RdmaSoftQp *sqp, const RdmaSendWr *wr,
                           uint64_t step)
{
    if (!sqp->msg_done) {
        sqp->rnr_attempts = 0;
    }
    if (!sqp->has_stalled) {
        if (wr != &sqp->stalled) {
            sqp->stalled = *wr;
            sqp->stalled_bytes = rdma_wr_bytes(wr);
        }
        rdma_soft_set_stalled(sqp, true);
    }
    sqp->msg_done += step;
    sqp->rnr_due = true;
    qemu_bh_schedule(sqp->soft->retry_bh);
}

/*
 * A long message ends before its last step (its QP failed, was flushed or
 * destroyed, or its peer went away): the receive WQE its first step took
 * completes with a flush error and the responder's QP goes to ERR, as on a
 * connection whose peer stopped in the middle of a message.
 */
void rdma_soft_msg_abort(RdmaSoftQp *sqp)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaQp *dst;

    sqp->msg_done = 0;
    if (!sqp->msg_has_rwr) {
        return;
    }
    sqp->msg_has_rwr = false;
    dst = rdma_rm_qp_by_num(rm, sqp->msg_dst_qpn);
    if (dst && dst->attr.qp_state != RDMA_QPS_RESET) {
        RdmaWc wc = { .status = RDMA_WC_WR_FLUSH_ERR,
                      .opcode = RDMA_WC_RECV, .src_qp = sqp->qp->qpn };

        rdma_soft_complete_recv(rm, dst, &sqp->msg_rwr, &wc, false);
        rdma_rm_qp_error(rm, dst, RDMA_EVENT_QP_FATAL);
    }
}

/*
 * @dst goes away: a long message that took one of its receive WQEs has
 * nobody to complete it for (its next step finds no QP and fails).
 */
void rdma_soft_msg_forget_dst(RdmaSoft *soft, RdmaQp *dst)
{
    RdmaTable *t = &soft->be.rm->tables[RDMA_RES_QP];

    for (uint32_t h = 0; soft->nstalled && h < t->size; h++) {
        RdmaQp *q = t->slots[h];
        RdmaSoftQp *sqp = q ? q->be : NULL;

        if (sqp && sqp->msg_has_rwr && sqp->msg_dst_qpn == dst->qpn) {
            sqp->msg_has_rwr = false;
        }
    }
}

/* Execute one WR (an RNR NAK leaves it waiting in @sqp). */
static void rdma_soft_execute(RdmaSoftQp *sqp, const RdmaSendWr *wr)
{
    RdmaQp *qp = sqp->qp;
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaSoftSgl local;
    RdmaWcStatus st;
    RdmaSoftAck ack;
    RdmaQp *dst = NULL;

    if (!rdma_soft_opcode_ok(qp, wr->opcode)) {
        rdma_soft_fail(rm, qp, wr, RDMA_WC_LOC_QP_OP_ERR);
        return;
    }
    if (wr->opcode == RDMA_WR_FAST_REG_MR || wr->opcode == RDMA_WR_LOCAL_INV) {
        st = wr->opcode == RDMA_WR_FAST_REG_MR ?
             rdma_soft_fast_reg(rm, qp, wr) :
             rdma_soft_invalidate(rm, qp, wr->invalidate_rkey);
        if (st != RDMA_WC_SUCCESS) {
            rdma_soft_fail(rm, qp, wr, st);
        } else {
            rdma_soft_complete_send(rm, qp, wr, st, 0);
        }
        return;
    }
    st = rdma_soft_local_sgl(rm, qp->pd_handle, wr->sge, wr->num_sge,
                             rdma_soft_local_access(wr->opcode), &local);
    if (st != RDMA_WC_SUCCESS) {
        rdma_soft_fail(rm, qp, wr, st);
        return;
    }
    if (local.total > RDMA_SOFT_MAX_MSG ||
        (qp->type != RDMA_QPT_RC && local.total > RDMA_SOFT_UD_MTU) ||
        ((wr->opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ||
          wr->opcode == RDMA_WR_ATOMIC_FETCH_AND_ADD) && local.total != 8)) {
        rdma_soft_fail(rm, qp, wr, RDMA_WC_LOC_LEN_ERR);
        return;
    }
    if (qp->type != RDMA_QPT_RC &&
        (wr->sgid_index >= rm->limits.gid_tbl_len ||
         !rm->gids[wr->sgid_index].valid)) {
        qemu_log_mask(LOG_GUEST_ERROR, "rdma: QP %u: UD send from GID "
                      "index %u, which holds no GID\n", qp->qpn,
                      wr->sgid_index);
        rdma_soft_fail(rm, qp, wr, RDMA_WC_LOC_QP_OP_ERR);
        return;
    }

    ack = rdma_soft_deliver(sqp->soft, qp, wr, &local, &dst);
    switch (ack) {
    case RDMA_MORE:
        rdma_soft_more(sqp, wr, rdma_soft_step(qp, local.total));
        return;
    case RDMA_ACK:
        sqp->msg_done = 0;
        rdma_soft_complete_send(rm, qp, wr, RDMA_WC_SUCCESS,
                                local.total);
        return;
    case RDMA_NAK_RNR:
        /* At the first step, or the immediate of a long WRITE: again. */
        sqp->msg_done = 0;
        rdma_soft_rnr(sqp, wr, dst);
        return;
    case RDMA_NAK_REM_ACCESS:
        rdma_rm_qp_error(rm, dst, RDMA_EVENT_QP_ACCESS_ERR);
        break;
    case RDMA_NAK_INV_REQ:
        if (dst) {
            rdma_rm_qp_error(rm, dst, RDMA_EVENT_QP_REQ_ERR);
        }
        break;
    default:
        break;
    }
    rdma_soft_fail(rm, qp, wr, rdma_soft_ack_status[ack]);
}

void rdma_soft_post_send(RdmaBackend *be, RdmaQp *qp, const RdmaSendWr *wr)
{
    RdmaSoftQp *sqp = qp->be;

    trace_rdma_soft_post_send(qp->qpn, wr->wr_id, wr->opcode, wr->num_sge);
    rdma_soft_execute(sqp, wr);
}

/* Retry the WR an RNR NAK stopped, then let the send queue go on. */
static void rdma_soft_retry(RdmaSoftQp *sqp)
{
    RdmaQp *qp = sqp->qp;
    RdmaResources *rm = sqp->soft->be.rm;

    /*
     * The retried WR may DMA into this very device (a hostile guest can
     * point a buffer at a doorbell); a second retry from there must not
     * run the same WR again.
     */
    if (sqp->retrying) {
        return;
    }
    timer_del(sqp->rnr_timer);
    if (!sqp->has_stalled) {
        return;
    }
    /*
     * The WR is in flight again: if it fails, the QP's flush must not
     * complete it a second time; if it waits again, rdma_soft_rnr() takes
     * it back (keeping the count of attempts).
     */
    rdma_soft_set_stalled(sqp, false);
    sqp->retrying = true;
    rdma_soft_execute(sqp, &sqp->stalled);
    sqp->retrying = false;
    if (!qp->sq_stalled && qp->attr.qp_state == RDMA_QPS_RTS) {
        rm->fe->kick_send(rm->fe_opaque, qp);
    }
}

/*
 * The RNR timer only schedules the retry: the bottom half runs it under
 * the device's re-entrancy guard, like the doorbells that run the others.
 */
void rdma_soft_rnr_timer(void *opaque)
{
    RdmaSoftQp *sqp = opaque;

    sqp->rnr_due = true;
    qemu_bh_schedule(sqp->soft->retry_bh);
}

/*
 * Retry @sqp now if the entry point's budget allows, else mark it due for
 * the retry bottom half (an entry point with a budget of its own).
 */
static void rdma_soft_retry_or_defer(RdmaSoftQp *sqp)
{
    RdmaResources *rm = sqp->soft->be.rm;

    if (rdma_rm_budget_left(rm)) {
        rdma_rm_budget_charge(rm, MIN(sqp->stalled_bytes - sqp->msg_done,
                                      RDMA_WR_STEP));
        rdma_soft_retry(sqp);
    } else if (!rdma_rm_stopping(rm)) {
        sqp->rnr_due = true;
        qemu_bh_schedule(sqp->soft->retry_bh);
    }
}

void rdma_soft_retry_bh(void *opaque)
{
    RdmaSoft *soft = opaque;
    RdmaResources *rm = soft->be.rm;
    RdmaTable *t = &rm->tables[RDMA_RES_QP];
    uint32_t h;

    if (!rdma_rm_enter(rm)) {
        return;
    }
    for (h = 0; h < t->size; h++) {
        RdmaQp *qp = t->slots[h];
        RdmaSoftQp *sqp = qp ? qp->be : NULL;

        if (sqp && sqp->rnr_due) {
            sqp->rnr_due = false;
            rdma_soft_retry_or_defer(sqp);
        }
    }
    rdma_rm_leave(rm);
}

/*
 * The guest posted receives: a sender stalled on this receive queue need
 * not wait for its timer (it would only find the WQE later).
 */
void rdma_soft_recv_posted(RdmaBackend *be, RdmaQp *qp, RdmaSrq *srq)
{
    RdmaTable *t = &be->rm->tables[RDMA_RES_QP];
    uint32_t h;

    if (!container_of(be, RdmaSoft, be)->nstalled) {
        return;                     /* the common case: nobody waits */
    }
    for (h = 0; h < t->size; h++) {
        RdmaQp *s = t->slots[h];
        RdmaSoftQp *sqp = s ? s->be : NULL;
        RdmaQp *dst;

        if (!sqp || !sqp->has_stalled) {
            continue;
        }
        dst = rdma_rm_qp_by_num(be->rm, sqp->rnr_dest_qpn);
        if (dst && (dst == qp || (srq && dst->is_srq &&
                                  dst->srq_handle == srq->handle))) {
            rdma_soft_retry_or_defer(sqp);
        }
    }
}

void rdma_soft_flush_qp(RdmaBackend *be, RdmaQp *qp)
{
    RdmaSoftQp *sqp = qp->be;

    timer_del(sqp->rnr_timer);
    sqp->rnr_due = false;
    rdma_soft_msg_abort(sqp);
    if (sqp->has_stalled) {
        rdma_soft_set_stalled(sqp, false);
        rdma_soft_complete_send(be->rm, qp, &sqp->stalled,
                                RDMA_WC_WR_FLUSH_ERR, 0);
    }
}
