/*
 * The soft RDMA engine: the requester.
 *
 * A send WR from the front-end becomes an RdmaSoftWqe at the tail of its
 * QP's queue of outstanding WRs.  The requester checks it against the QP
 * and the local memory when it starts it (local operations, FAST_REG_MR
 * and LOCAL_INV, complete there), gives it its PSNs and sends it as
 * request packets; the completer (rdma_soft_comp.c) completes it when its
 * acknowledgement or its last response arrives.  An RNR NAK sends the
 * requester back to the PSN it names once the timer expires (go back N).
 *
 * Packets are at most one path MTU long.  Between two QPs of this device
 * the MTU is a step of RDMA_WR_STEP (1 MiB): the payload moves in one copy
 * from the sender's buffer to the receiver's, and a longer message takes
 * one step per pass of an entry point, so no entry point moves more than
 * its budget and one step.
 *
 * The front-end gives the requester a new WR only while its queue is
 * empty (qp->sq_stalled): one outstanding WR per QP, as the engine had
 * before it spoke in packets.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "rdma_soft.h"
#include "hw/rdma/trace.h"

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

RdmaWcStatus rdma_soft_invalidate(RdmaResources *rm, RdmaQp *qp,
                                  uint32_t rkey)
{
    RdmaMr *mr = rdma_soft_frmr(rm, qp, rkey);

    if (!mr || mr->rkey != rkey) {
        return RDMA_WC_LOC_PROT_ERR;
    }
    mr->frmr_valid = false;
    return RDMA_WC_SUCCESS;
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

/* The most payload one packet of @qp carries (see the top of the file). */
uint64_t rdma_soft_pmtu(const RdmaQp *qp)
{
    return qp->type == RDMA_QPT_RC ? RDMA_WR_STEP : RDMA_SOFT_UD_MTU;
}

static bool rdma_soft_is_atomic(RdmaWrOpcode op)
{
    return op == RDMA_WR_ATOMIC_CMP_AND_SWP ||
           op == RDMA_WR_ATOMIC_FETCH_AND_ADD;
}

static bool rdma_soft_wqe_started(const RdmaSoftWqe *w)
{
    return w->last_psn != RDMA_PSN_MASK + 1;
}

static bool rdma_soft_wqe_sent(const RdmaSoftWqe *w)
{
    return rdma_soft_wqe_started(w) &&
           w->next_psn == ((w->last_psn + 1) & RDMA_PSN_MASK);
}

/* The outstanding WR whose packets include @psn, or NULL. */
RdmaSoftWqe *rdma_soft_wqe_at(RdmaSoftQp *sqp, uint32_t psn)
{
    RdmaSoftWqe *w;

    QTAILQ_FOREACH(w, &sqp->req.wqes, next) {
        if (rdma_soft_wqe_started(w) &&
            rdma_psn_diff(psn, w->first_psn) >= 0 &&
            rdma_psn_diff(psn, w->last_psn) <= 0) {
            return w;
        }
    }
    return NULL;
}

/*
 * The one place that says whether the front-end may give @sqp's QP a new
 * WR: only while nothing is outstanding.  With @kick, a QP the front-end
 * saw stalled is told it can send again.
 */
void rdma_soft_req_update(RdmaSoftQp *sqp, bool kick)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaQp *qp = sqp->qp;
    bool busy = sqp->req.nwqe > 0;
    bool was_stalled = qp->sq_stalled;

    if (sqp->busy != busy) {
        sqp->busy = busy;
        sqp->soft->nbusy += busy ? 1 : -1;
    }
    if (was_stalled != busy) {
        /* Written only when it changes: the peer's vCPU reads this QP. */
        qp->sq_stalled = busy;
    }
    if (kick && was_stalled && !busy && qp->attr.qp_state == RDMA_QPS_RTS) {
        rm->fe->kick_send(rm->fe_opaque, qp);
    }
}

/* Ready @w for the wire: NULL when it completed here (local, or failed). */
static bool rdma_soft_wqe_start(RdmaSoftQp *sqp, RdmaSoftWqe *w)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaQp *qp = sqp->qp;
    const RdmaSendWr *wr = &w->wr;
    RDMA_SOFT_UNINIT RdmaSoftSgl local;
    RdmaWcStatus st;
    uint64_t npkts;

    if (!rdma_soft_opcode_ok(qp, wr->opcode)) {
        rdma_soft_fail_wqe(sqp, w, RDMA_WC_LOC_QP_OP_ERR);
        return false;
    }
    if (wr->opcode == RDMA_WR_FAST_REG_MR || wr->opcode == RDMA_WR_LOCAL_INV) {
        st = wr->opcode == RDMA_WR_FAST_REG_MR ?
             rdma_soft_fast_reg(rm, qp, wr) :
             rdma_soft_invalidate(rm, qp, wr->invalidate_rkey);
        if (st != RDMA_WC_SUCCESS) {
            rdma_soft_fail_wqe(sqp, w, st);
        } else {
            rdma_soft_complete_wqe(sqp, w, st);
        }
        return false;
    }
    st = rdma_soft_local_sgl(rm, qp->pd_handle, wr->sge, wr->num_sge,
                             rdma_soft_local_access(wr->opcode), &local);
    if (st != RDMA_WC_SUCCESS) {
        rdma_soft_fail_wqe(sqp, w, st);
        return false;
    }
    if (local.total > RDMA_SOFT_MAX_MSG ||
        (qp->type != RDMA_QPT_RC && local.total > RDMA_SOFT_UD_MTU) ||
        (rdma_soft_is_atomic(wr->opcode) && local.total != 8)) {
        rdma_soft_fail_wqe(sqp, w, RDMA_WC_LOC_LEN_ERR);
        return false;
    }
    if (qp->type != RDMA_QPT_RC &&
        (wr->sgid_index >= rm->limits.gid_tbl_len ||
         !rm->gids[wr->sgid_index].valid)) {
        qemu_log_mask(LOG_GUEST_ERROR, "rdma: QP %u: UD send from GID "
                      "index %u, which holds no GID\n", qp->qpn,
                      wr->sgid_index);
        rdma_soft_fail_wqe(sqp, w, RDMA_WC_LOC_QP_OP_ERR);
        return false;
    }
    w->len = local.total;
    npkts = rdma_soft_is_atomic(wr->opcode) ? 1 :
            MAX(DIV_ROUND_UP(w->len, rdma_soft_pmtu(qp)), 1);
    w->first_psn = w->next_psn = sqp->req.psn;
    w->last_psn = (w->first_psn + npkts - 1) & RDMA_PSN_MASK;
    sqp->req.psn = (w->last_psn + 1) & RDMA_PSN_MASK;
    return true;
}

/* The first WR with packets still to send, or NULL. */
static RdmaSoftWqe *rdma_soft_req_next(RdmaSoftQp *sqp)
{
    RdmaSoftWqe *w;

    QTAILQ_FOREACH(w, &sqp->req.wqes, next) {
        if (!rdma_soft_wqe_sent(w)) {
            return w;
        }
    }
    return NULL;
}

/* Bytes the next packet of @sqp moves (what it costs a budget). */
uint64_t rdma_soft_req_step_bytes(RdmaSoftQp *sqp)
{
    RdmaSoftWqe *w = rdma_soft_req_next(sqp);
    uint64_t pmtu = rdma_soft_pmtu(sqp->qp), off;

    if (!w) {
        return 0;
    }
    if (!rdma_soft_wqe_started(w)) {
        return rdma_wr_step_bytes(&w->wr);
    }
    off = (uint64_t)((w->next_psn - w->first_psn) & RDMA_PSN_MASK) * pmtu;
    return MIN(w->len - MIN(off, w->len), pmtu);
}

/* The packet of @w at w->next_psn. */
static void rdma_soft_req_build(RdmaSoftQp *sqp, RdmaSoftWqe *w,
                                RdmaSoftPkt *pkt)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaQp *qp = sqp->qp;
    const RdmaSendWr *wr = &w->wr;
    uint64_t pmtu = rdma_soft_pmtu(qp);
    uint32_t idx = (w->next_psn - w->first_psn) & RDMA_PSN_MASK;
    uint64_t off = (uint64_t)idx * pmtu;
    bool ud = qp->type != RDMA_QPT_RC;
    bool first = idx == 0, last;
    const uint8_t *sgid;

    memset(pkt, 0, sizeof(*pkt));
    pkt->psn = w->next_psn;
    pkt->src_qpn = qp->qpn;
    if (wr->opcode == RDMA_WR_RDMA_READ) {
        /* One request for what is left; its responses take the PSNs. */
        pkt->opcode = RDMA_OPC_READ_REQUEST;
        pkt->va = wr->remote_addr + off;
        pkt->rkey = wr->rkey;
        pkt->dma_len = w->len - MIN(off, w->len);
        last = true;
    } else if (rdma_soft_is_atomic(wr->opcode)) {
        pkt->opcode = rdma_soft_req_opcode(RDMA_OPC_RC, wr->opcode, true,
                                           true);
        pkt->va = wr->remote_addr;
        pkt->rkey = wr->rkey;
        pkt->swap_add = wr->opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ?
                        wr->swap : wr->compare_add;
        pkt->compare = wr->compare_add;
        last = true;
    } else {
        pkt->paylen = MIN(w->len - off, pmtu);
        last = off + pkt->paylen == w->len;
        pkt->opcode = rdma_soft_req_opcode(ud ? RDMA_OPC_UD : RDMA_OPC_RC,
                                           wr->opcode, first, last);
        if (first) {
            pkt->va = wr->remote_addr;
            pkt->rkey = wr->rkey;
            pkt->dma_len = w->len;
        }
        pkt->imm = wr->imm_data;
        pkt->inv_rkey = wr->invalidate_rkey;
        if (pkt->paylen) {
            pkt->data = RDMA_DATA_WQE;
            pkt->data_qpn = qp->qpn;
            pkt->data_psn = w->first_psn;
            pkt->data_off = off;
        }
    }
    pkt->mask = rdma_soft_op_info(pkt->opcode)->mask;
    pkt->se = last && (wr->flags & RDMA_SEND_SOLICITED);
    if (ud) {
        /* A Q_Key with the top bit set means "the sender QP's own". */
        pkt->dest_qpn = wr->remote_qpn;
        pkt->qkey = wr->remote_qkey & RDMA_QKEY_PRIVILEGED ?
                    qp->attr.qkey : wr->remote_qkey;
        sgid = rm->gids[wr->sgid_index].gid;
        memcpy(pkt->dgid, wr->dgid, 16);
    } else {
        pkt->dest_qpn = qp->attr.dest_qp_num;
        pkt->ackreq = last;
        sgid = rm->gids[MIN(qp->attr.ah.sgid_index,
                            rm->limits.gid_tbl_len - 1)].gid;
        memcpy(pkt->dgid, qp->attr.ah.dgid, 16);
    }
    memcpy(pkt->sgid, sgid, 16);
}

/*
 * Send the next packet of @sqp's queue: at most one packet per call, the
 * step the caller charged to its entry point's budget.  What is left is
 * due in the run bottom half.
 */
void rdma_soft_req_run(RdmaSoftQp *sqp)
{
    RdmaSoftReq *req = &sqp->req;
    RdmaSoftWqe *w;
    RDMA_SOFT_UNINIT RdmaSoftPkt pkt;

    if (req->running || req->rnr_wait) {
        return;
    }
    req->running = true;
    req->due = false;
    while ((w = rdma_soft_req_next(sqp))) {
        if (!rdma_soft_wqe_started(w) && !rdma_soft_wqe_start(sqp, w)) {
            continue;               /* completed here: the next one */
        }
        if (w->next_psn != w->first_psn &&
            w->wr.opcode != RDMA_WR_RDMA_READ) {
            /* Each step reads the local buffer anew: MRs may change. */
            RDMA_SOFT_UNINIT RdmaSoftSgl local;
            RdmaWcStatus st = rdma_soft_local_sgl(
                sqp->soft->be.rm, sqp->qp->pd_handle, w->wr.sge,
                w->wr.num_sge, rdma_soft_local_access(w->wr.opcode), &local);

            if (st == RDMA_WC_SUCCESS && local.total != w->len) {
                st = RDMA_WC_LOC_LEN_ERR;
            }
            if (st != RDMA_WC_SUCCESS) {
                rdma_soft_fail_wqe(sqp, w, st);
                break;
            }
        }
        rdma_soft_req_build(sqp, w, &pkt);
        w->next_psn = pkt.opcode == RDMA_OPC_READ_REQUEST ?
                      (w->last_psn + 1) & RDMA_PSN_MASK :
                      (w->next_psn + 1) & RDMA_PSN_MASK;
        rdma_soft_xmit(sqp->soft, &pkt);
        if (sqp->qp->type != RDMA_QPT_RC && rdma_soft_wqe_at(sqp, pkt.psn)) {
            /* Unreliable: done once it is sent. */
            rdma_soft_complete_wqe(sqp, w, RDMA_WC_SUCCESS);
        }
        if (rdma_soft_req_next(sqp) && !req->rnr_wait) {
            req->due = true;
            qemu_bh_schedule(sqp->soft->run_bh);
        }
        break;
    }
    req->running = false;
}

/*
 * Keep one WQE for the QP's next WR: a WR each way per round trip, a
 * ping-pong allocates nothing.
 */
void rdma_soft_wqe_free(RdmaSoftQp *sqp, RdmaSoftWqe *w)
{
    if (sqp->spare) {
        g_free(w);
    } else {
        sqp->spare = w;
    }
}

void rdma_soft_post_send(RdmaBackend *be, RdmaQp *qp, const RdmaSendWr *wr)
{
    RdmaSoftQp *sqp = qp->be;
    RdmaSoftWqe *w = sqp->spare ? sqp->spare : g_malloc(sizeof(*w));

    sqp->spare = NULL;
    trace_rdma_soft_post_send(qp->qpn, wr->wr_id, wr->opcode, wr->num_sge);
    /* The WR and the SGEs it uses: the front-end's copy is on its stack. */
    memcpy(&w->wr, wr, offsetof(RdmaSendWr, sge) +
           MIN(wr->num_sge, RDMA_MAX_SGE) * sizeof(RdmaSge));
    w->len = 0;
    w->first_psn = w->next_psn = 0;
    w->last_psn = RDMA_PSN_MASK + 1;    /* not started */
    QTAILQ_INSERT_TAIL(&sqp->req.wqes, w, next);
    sqp->req.nwqe++;
    rdma_soft_req_run(sqp);
    rdma_soft_req_update(sqp, false);
}

/*
 * @sqp's QP leaves the states that send: with @complete (ERR, SQE) its
 * outstanding WRs complete flushed, else (RESET, destroy) they are
 * dropped.
 */
void rdma_soft_req_flush(RdmaSoftQp *sqp, bool complete)
{
    RdmaSoftReq *req = &sqp->req;
    RdmaSoftWqe *w;

    timer_del(req->rnr_timer);
    req->rnr_wait = false;
    req->due = false;
    while ((w = QTAILQ_FIRST(&req->wqes))) {
        if (complete) {
            rdma_soft_complete_wqe(sqp, w, RDMA_WC_WR_FLUSH_ERR);
        } else {
            QTAILQ_REMOVE(&req->wqes, w, next);
            req->nwqe--;
            rdma_soft_wqe_free(sqp, w);
        }
    }
    rdma_soft_req_update(sqp, false);
}

/*
 * The RNR timer only makes the QP due: the bottom half sends again, under
 * the device's re-entrancy guard, like the doorbells that send the rest.
 */
void rdma_soft_rnr_timer(void *opaque)
{
    RdmaSoftQp *sqp = opaque;

    sqp->req.rnr_wait = false;
    sqp->req.due = true;
    qemu_bh_schedule(sqp->soft->run_bh);
}
