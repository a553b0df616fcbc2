/*
 * The ibverbs backend: work requests and completions.
 *
 * A guest WR becomes a host WR with the same scatter list: guest keys are
 * host keys and guest MRs are registered with the guest's iova, so the host
 * device itself checks every key, bound and access right.  What the host
 * wr_id cannot carry (the guest's wr_id, whether the guest asked for a
 * completion) lives in a slot (RdmaIbvSlot).
 *
 * The host queues are as deep as the guest's rings, but the front-end
 * frees a ring slot as soon as it has read the WQE.  So the backend counts
 * what each host queue holds: a send that finds the host SQ full is held
 * (qp->sq_stalled) until a send completes, and receives stay in the
 * guest's ring until the host RQ or SRQ has room.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <poll.h>
#include <sys/eventfd.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "qemu/rcu.h"
#include "rdma_ibv.h"
#include "hw/rdma/trace.h"

/* Slots */

static uint64_t rdma_ibv_slot_new(RdmaIbv *ibv, uint8_t kind, uint32_t owner,
                                  uint64_t wr_id)
{
    RdmaIbvSlot *slot;
    uint32_t i;

    if (ibv->free_slots->len) {
        i = g_array_index(ibv->free_slots, uint32_t, ibv->free_slots->len - 1);
        g_array_set_size(ibv->free_slots, ibv->free_slots->len - 1);
    } else {
        i = ibv->slots->len;
        g_array_set_size(ibv->slots, i + 1);
    }
    slot = &g_array_index(ibv->slots, RdmaIbvSlot, i);
    slot->kind = kind;
    slot->owner = owner;
    slot->wr_id = wr_id;
    slot->gen = ++ibv->slot_gen;
    return (uint64_t)slot->gen << 32 | i;
}

static void rdma_ibv_slot_free(RdmaIbv *ibv, uint32_t i)
{
    g_array_index(ibv->slots, RdmaIbvSlot, i).kind = RDMA_IBV_SLOT_FREE;
    g_array_append_val(ibv->free_slots, i);
}

/* The live slot a host wr_id names, or NULL. */
static RdmaIbvSlot *rdma_ibv_slot(RdmaIbv *ibv, uint64_t host_wr_id)
{
    uint32_t i = (uint32_t)host_wr_id;
    RdmaIbvSlot *slot;

    if (i >= ibv->slots->len) {
        return NULL;
    }
    slot = &g_array_index(ibv->slots, RdmaIbvSlot, i);
    if (slot->kind == RDMA_IBV_SLOT_FREE || slot->gen != host_wr_id >> 32) {
        return NULL;
    }
    return slot;
}

/* Forget the WRs of a queue the host emptied without completions. */
void rdma_ibv_drop_slots(RdmaIbv *ibv, uint8_t kind, uint32_t owner)
{
    for (uint32_t i = 0; i < ibv->slots->len; i++) {
        RdmaIbvSlot *slot = &g_array_index(ibv->slots, RdmaIbvSlot, i);

        if (slot->kind == kind && slot->owner == owner) {
            rdma_ibv_slot_free(ibv, i);
        }
    }
}

/* Sends */

static void rdma_ibv_send_done(RdmaIbv *ibv, RdmaQp *qp, uint64_t wr_id,
                               RdmaWcOpcode opcode, RdmaWcStatus status)
{
    RdmaResources *rm = ibv->be.rm;
    RdmaWc wc = { .wr_id = wr_id, .status = status, .opcode = opcode,
                  .qp_handle = qp->handle };

    rm->fe->complete(rm->fe_opaque, qp, qp->send_cq_handle, &wc, false);
}

static int rdma_ibv_wr_opcode(RdmaWrOpcode op)
{
    switch (op) {
    case RDMA_WR_RDMA_WRITE:
        return IBV_WR_RDMA_WRITE;
    case RDMA_WR_RDMA_WRITE_WITH_IMM:
        return IBV_WR_RDMA_WRITE_WITH_IMM;
    case RDMA_WR_SEND:
        return IBV_WR_SEND;
    case RDMA_WR_SEND_WITH_IMM:
        return IBV_WR_SEND_WITH_IMM;
    case RDMA_WR_RDMA_READ:
        return IBV_WR_RDMA_READ;
    case RDMA_WR_ATOMIC_CMP_AND_SWP:
        return IBV_WR_ATOMIC_CMP_AND_SWP;
    case RDMA_WR_ATOMIC_FETCH_AND_ADD:
        return IBV_WR_ATOMIC_FETCH_AND_ADD;
    case RDMA_WR_SEND_WITH_INV:
        return IBV_WR_SEND_WITH_INV;
    default:
        /* FAST_REG_MR, LOCAL_INV, ...: kernel verbs, not in user space. */
        return -1;
    }
}

/* Post @wr to the host: 0, -EAGAIN when the host SQ is full, or -errno. */
static int rdma_ibv_post(RdmaIbv *ibv, RdmaQp *qp, const RdmaSendWr *wr)
{
    RdmaIbvQp *iqp = qp->be;
    struct ibv_sge sge[RDMA_MAX_SGE];
    struct ibv_send_wr hwr = { .sg_list = sge, .num_sge = wr->num_sge };
    struct ibv_send_wr *bad;
    int opcode = rdma_ibv_wr_opcode(wr->opcode);
    RdmaIbvSlot *slot;
    int ret;

    if (opcode < 0) {
        return -EOPNOTSUPP;
    }
    if (iqp->sends >= iqp->max_sends) {
        return -EAGAIN;
    }
    for (uint32_t i = 0; i < wr->num_sge; i++) {
        sge[i].addr = wr->sge[i].addr;
        sge[i].length = wr->sge[i].length;
        sge[i].lkey = wr->sge[i].lkey;
    }
    hwr.opcode = opcode;
    /*
     * Inline data is in guest memory behind the SGE's lkey, not in QEMU:
     * never IBV_SEND_INLINE.  The host signals every WR (sq_sig_all).
     */
    hwr.send_flags = (wr->flags & RDMA_SEND_FENCE ? IBV_SEND_FENCE : 0) |
                     (wr->flags & RDMA_SEND_SOLICITED ? IBV_SEND_SOLICITED : 0);
    hwr.imm_data = wr->imm_data;
    if (wr->opcode == RDMA_WR_SEND_WITH_INV) {
        hwr.invalidate_rkey = wr->invalidate_rkey;
    }
    if (qp->type == RDMA_QPT_UD) {
        RdmaPd *pd = rdma_rm_get(ibv->be.rm, RDMA_RES_PD, qp->pd_handle);

        hwr.wr.ud.ah = rdma_ibv_ah(ibv, pd, wr->dgid, wr->sgid_index, 0);
        if (!hwr.wr.ud.ah) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: QP %u: no host address "
                          "handle for GID index %u (not in %s's table, or "
                          "too many destinations)\n",
                          qp->handle, wr->sgid_index, ibv->ibdev);
            return -EINVAL;
        }
        hwr.wr.ud.remote_qpn = wr->remote_qpn;
        /*
         * A Q_Key with the top bit set stands for the QP's own.  Not every
         * host device applies that rule (Linux rxe sends the Q_Key as it
         * is), and applying it here is right for those that do.
         */
        hwr.wr.ud.remote_qkey = wr->remote_qkey & RDMA_QKEY_PRIVILEGED ?
                                qp->attr.qkey : wr->remote_qkey;
    } else if (wr->opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ||
               wr->opcode == RDMA_WR_ATOMIC_FETCH_AND_ADD) {
        hwr.wr.atomic.remote_addr = wr->remote_addr;
        hwr.wr.atomic.rkey = wr->rkey;
        hwr.wr.atomic.compare_add = wr->compare_add;
        hwr.wr.atomic.swap = wr->swap;
    } else {
        hwr.wr.rdma.remote_addr = wr->remote_addr;
        hwr.wr.rdma.rkey = wr->rkey;
    }
    hwr.wr_id = rdma_ibv_slot_new(ibv, RDMA_IBV_SLOT_SEND, qp->handle,
                                  wr->wr_id);
    slot = rdma_ibv_slot(ibv, hwr.wr_id);
    slot->signaled = qp->sq_sig_all || (wr->flags & RDMA_SEND_SIGNALED);
    slot->opcode = rdma_wc_opcode(wr->opcode);
    ret = ibv_post_send(iqp->qp, &hwr, &bad);
    if (ret) {
        rdma_ibv_slot_free(ibv, (uint32_t)hwr.wr_id);
        return -ret;
    }
    iqp->sends++;
    trace_rdma_ibv_post_send(qp->handle, wr->wr_id, wr->opcode, wr->num_sge);
    return 0;
}

void rdma_ibv_post_send(RdmaBackend *be, RdmaQp *qp, const RdmaSendWr *wr)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvQp *iqp = qp->be;
    int ret;

    if (qp->type == RDMA_QPT_GSI) {
        rdma_ibv_mad_send(ibv, qp, wr);
        return;
    }
    ret = rdma_ibv_post(ibv, qp, wr);
    if (ret == -EAGAIN) {
        /* Resumed by the next send completion of this QP. */
        iqp->held = g_memdup2(wr, sizeof(*wr));
        qp->sq_stalled = true;
        return;
    }
    if (ret < 0) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: QP %u: %s refused send WR "
                      "(opcode %u): %s\n", qp->handle, ibv->ibdev, wr->opcode,
                      strerror(-ret));
        rdma_ibv_send_done(ibv, qp, wr->wr_id, rdma_wc_opcode(wr->opcode),
                           RDMA_WC_LOC_QP_OP_ERR);
        rdma_rm_qp_send_error(be->rm, qp, RDMA_EVENT_NONE);
    }
}

/* The host SQ has room again: post the held WR and let the ring go on. */
static void rdma_ibv_resume_send(RdmaIbv *ibv, RdmaQp *qp)
{
    RdmaIbvQp *iqp = qp->be;
    g_autofree RdmaSendWr *wr = iqp->held;

    iqp->held = NULL;
    qp->sq_stalled = false;
    rdma_ibv_post_send(&ibv->be, qp, wr);
    if (!qp->sq_stalled) {
        ibv->be.rm->fe->kick_send(ibv->be.rm->fe_opaque, qp);
    }
}

void rdma_ibv_flush_qp(RdmaBackend *be, RdmaQp *qp)
{
    RdmaIbvQp *iqp = qp->be;
    g_autofree RdmaSendWr *wr = iqp->held;

    /*
     * The host flushes what it holds, once its QP is in ERR too: the
     * device also kills QPs for errors the host never saw (a bad WQE or
     * ring, a WR the host refused).  The held WR is ours to flush.
     */
    if (iqp->qp && qp->attr.qp_state == RDMA_QPS_ERR) {
        struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

        if (ibv_modify_qp(iqp->qp, &a, IBV_QP_STATE)) {
            warn_report("pvrdma: QP %u: %s refused to enter ERR: %s",
                        qp->handle, rdma_ibv(be)->ibdev, strerror(errno));
        }
    }
    if (wr) {
        iqp->held = NULL;
        qp->sq_stalled = false;
        rdma_ibv_send_done(rdma_ibv(be), qp, wr->wr_id,
                           rdma_wc_opcode(wr->opcode), RDMA_WC_WR_FLUSH_ERR);
    }
}

/* Receives */

static bool rdma_ibv_post_recv_one(RdmaIbv *ibv, RdmaQp *qp, RdmaSrq *srq,
                                   const RdmaRecvWr *rwr)
{
    struct ibv_sge sge[RDMA_MAX_SGE];
    struct ibv_recv_wr hwr = { .sg_list = sge, .num_sge = rwr->num_sge };
    struct ibv_recv_wr *bad;
    int ret;

    for (uint32_t i = 0; i < rwr->num_sge; i++) {
        sge[i].addr = rwr->sge[i].addr;
        sge[i].length = rwr->sge[i].length;
        sge[i].lkey = rwr->sge[i].lkey;
    }
    if (srq) {
        hwr.wr_id = rdma_ibv_slot_new(ibv, RDMA_IBV_SLOT_SRQ_RECV, srq->handle,
                                      rwr->wr_id);
        ret = ibv_post_srq_recv(((RdmaIbvSrq *)srq->be)->srq, &hwr, &bad);
    } else {
        hwr.wr_id = rdma_ibv_slot_new(ibv, RDMA_IBV_SLOT_RECV, qp->handle,
                                      rwr->wr_id);
        ret = ibv_post_recv(((RdmaIbvQp *)qp->be)->qp, &hwr, &bad);
    }
    if (ret) {
        rdma_ibv_slot_free(ibv, (uint32_t)hwr.wr_id);
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: %s %u: %s refused a receive "
                      "WR: %s\n", srq ? "SRQ" : "QP",
                      srq ? srq->handle : qp->handle, ibv->ibdev,
                      strerror(ret));
        return false;
    }
    return true;
}

void rdma_ibv_recv_posted(RdmaBackend *be, RdmaQp *qp, RdmaSrq *srq)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaResources *rm = be->rm;
    RdmaRecvWr rwr;
    uint32_t *count, max;
    int ret;

    if (qp && qp->type == RDMA_QPT_GSI) {
        return;             /* taken when a MAD arrives (rdma_ibv_mad.c) */
    }
    if (srq) {
        count = &((RdmaIbvSrq *)srq->be)->recvs;
        max = ((RdmaIbvSrq *)srq->be)->max_recvs;
    } else {
        if (!((RdmaIbvQp *)qp->be)->rq_ready) {
            return;         /* posted to the host once the QP is in INIT */
        }
        count = &((RdmaIbvQp *)qp->be)->recvs;
        max = ((RdmaIbvQp *)qp->be)->max_recvs;
    }
    while (*count < max) {
        ret = srq ? rm->fe->next_srq_recv(rm->fe_opaque, srq, &rwr)
                  : rm->fe->next_recv(rm->fe_opaque, qp, &rwr);
        if (ret == -EAGAIN) {
            break;
        }
        if (ret < 0) {
            /*
             * A bad WQE (the front-end completed it) or a corrupt ring:
             * the QP dies, as on the soft backend when its responder meets
             * one.  Reading on would meet the same ring again.
             */
            if (qp) {
                rdma_rm_qp_error(rm, qp, RDMA_EVENT_QP_FATAL);
            }
            break;
        }
        if (rdma_ibv_post_recv_one(ibv, qp, srq, &rwr)) {
            (*count)++;
        } else if (qp) {
            RdmaWc wc = { .wr_id = rwr.wr_id, .opcode = RDMA_WC_RECV,
                          .status = RDMA_WC_LOC_QP_OP_ERR,
                          .qp_handle = qp->handle };

            rm->fe->complete(rm->fe_opaque, qp, qp->recv_cq_handle, &wc,
                             false);
        }
    }
}

/* Completions */

static uint32_t rdma_ibv_wc_flags(const struct ibv_wc *hwc)
{
    return (hwc->wc_flags & IBV_WC_GRH ? RDMA_WC_GRH : 0) |
           (hwc->wc_flags & IBV_WC_WITH_IMM ? RDMA_WC_WITH_IMM : 0) |
           (hwc->wc_flags & IBV_WC_WITH_INV ? RDMA_WC_WITH_INVALIDATE : 0);
}

static RdmaWcStatus rdma_ibv_wc_status(enum ibv_wc_status st)
{
    /* Our statuses are the IB ones (IBV_WC_*) up to RNR_RETRY_EXC_ERR. */
    return st <= IBV_WC_RNR_RETRY_EXC_ERR ? (RdmaWcStatus)st
                                          : RDMA_WC_GENERAL_ERR;
}

/*
 * An error completion: the host QP went to ERR (RC) or SQE (UD send).
 * Mirror the state, so QUERY_QP tells the guest and the front-end flushes
 * what the guest posts from now on.
 */
static void rdma_ibv_qp_failed(RdmaQp *qp, bool send)
{
    /*
     * A UD send error takes the QP to SQE by the IBA, to ERR on rxe: the
     * host's state is read when the guest asks (rdma_ibv_qp_state).
     */
    if (send && qp->type == RDMA_QPT_UD) {
        return;
    }
    if (qp->attr.qp_state != RDMA_QPS_ERR) {
        trace_rdma_rm_qp_state(qp->qpn, qp->attr.qp_state, RDMA_QPS_ERR);
        qp->attr.qp_state = RDMA_QPS_ERR;
    }
}

int rdma_ibv_qp_state(RdmaBackend *be, RdmaQp *qp)
{
    RdmaIbvQp *iqp = qp->be;
    struct ibv_qp_init_attr init;
    struct ibv_qp_attr a;

    if (!iqp->qp || ibv_query_qp(iqp->qp, &a, IBV_QP_STATE, &init)) {
        return -1;
    }
    /* IBV_QPS_* are our RDMA_QPS_* */
    return a.qp_state;
}

/*
 * An SRQ receive completed for a QP that is gone (AUDIT 10): nobody is
 * left to report it to, but the host SRQ used up one WQE, so it takes the
 * next from the guest's ring.
 */
static void rdma_ibv_srq_recv_gone(RdmaIbv *ibv, RdmaIbvSlot *slot,
                                   uint32_t id)
{
    RdmaSrq *srq = rdma_rm_get(ibv->be.rm, RDMA_RES_SRQ, slot->owner);

    rdma_ibv_slot_free(ibv, id);
    if (srq) {
        ((RdmaIbvSrq *)srq->be)->recvs--;
        rdma_ibv_recv_posted(&ibv->be, NULL, srq);
    }
}

static void rdma_ibv_complete(RdmaIbv *ibv, const struct ibv_wc *hwc)
{
    RdmaResources *rm = ibv->be.rm;
    RdmaIbvSlot *slot = rdma_ibv_slot(ibv, hwc->wr_id);
    RdmaQp *qp = g_hash_table_lookup(ibv->qps,
                                     GUINT_TO_POINTER(hwc->qp_num));
    RdmaWc wc = {
        .status = rdma_ibv_wc_status(hwc->status),
        .byte_len = hwc->byte_len,
        .imm_data = hwc->imm_data,
        .src_qp = hwc->src_qp,
        .wc_flags = rdma_ibv_wc_flags(hwc),
    };
    RdmaIbvQp *iqp;
    uint8_t kind;

    if (slot && !qp && slot->kind == RDMA_IBV_SLOT_SRQ_RECV) {
        rdma_ibv_srq_recv_gone(ibv, slot, (uint32_t)hwc->wr_id);
        return;
    }
    if (!slot || !qp) {
        return;             /* its QP or SRQ is gone */
    }
    iqp = qp->be;
    kind = slot->kind;
    wc.wr_id = slot->wr_id;
    wc.qp_handle = qp->handle;
    if (kind == RDMA_IBV_SLOT_SEND) {
        bool report = slot->signaled || wc.status != RDMA_WC_SUCCESS;

        wc.opcode = slot->opcode;
        rdma_ibv_slot_free(ibv, (uint32_t)hwc->wr_id);
        iqp->sends--;
        if (wc.status != RDMA_WC_SUCCESS &&
            wc.status != RDMA_WC_WR_FLUSH_ERR) {
            rdma_ibv_qp_failed(qp, true);
        }
        if (report) {
            rm->fe->complete(rm->fe_opaque, qp, qp->send_cq_handle, &wc,
                             false);
        }
        if (iqp->held) {
            rdma_ibv_resume_send(ibv, qp);
        }
        return;
    }
    wc.opcode = hwc->status == IBV_WC_SUCCESS &&
                hwc->opcode == IBV_WC_RECV_RDMA_WITH_IMM ?
                RDMA_WC_RECV_RDMA_WITH_IMM : RDMA_WC_RECV;
    rdma_ibv_slot_free(ibv, (uint32_t)hwc->wr_id);
    if (wc.status != RDMA_WC_SUCCESS && wc.status != RDMA_WC_WR_FLUSH_ERR) {
        rdma_ibv_qp_failed(qp, false);
    }
    /*
     * The host's completion does not say whether the message was
     * solicited: every receive counts as one, which at worst wakes a
     * guest armed for solicited completions once too often.
     */
    rm->fe->complete(rm->fe_opaque, qp, qp->recv_cq_handle, &wc, true);
    if (kind == RDMA_IBV_SLOT_SRQ_RECV) {
        RdmaSrq *srq = rdma_rm_get(rm, RDMA_RES_SRQ, qp->srq_handle);

        if (srq) {
            ((RdmaIbvSrq *)srq->be)->recvs--;
            rdma_ibv_recv_posted(&ibv->be, NULL, srq);
        }
    } else {
        iqp->recvs--;
        if (qp->attr.qp_state != RDMA_QPS_ERR) {
            rdma_ibv_recv_posted(&ibv->be, qp, NULL);
        }
    }
}

/* Drain the host CQ with id @id, if it still exists (under the BQL). */
static void rdma_ibv_drain(RdmaIbv *ibv, uint64_t id)
{
    RdmaIbvCq *icq = g_hash_table_lookup(ibv->cqs, &id);
    struct ibv_wc wc[16];
    int n;

    if (!icq) {
        return;
    }
    /* Re-arm first, so a completion after the last poll is not missed. */
    ibv_req_notify_cq(icq->cq, 0);
    do {
        n = ibv_poll_cq(icq->cq, ARRAY_SIZE(wc), wc);
        for (int i = 0; i < n; i++) {
            trace_rdma_ibv_wc(icq->handle, wc[i].qp_num, wc[i].status,
                              wc[i].opcode);
            rdma_ibv_complete(ibv, &wc[i]);
            /* A completion may have destroyed nothing, but look again. */
            if (!g_hash_table_lookup(ibv->cqs, &id)) {
                return;
            }
        }
    } while (n == ARRAY_SIZE(wc));
}

/*
 * Before a QP on an SRQ is destroyed.  The SRQ WQEs it used up complete
 * in its receive CQ, and some hosts (mlx5) delete those CQEs with the QP,
 * which would leave the SRQ's count of host WQEs high for ever and starve
 * every QP on it (AUDIT 10).  The host QP goes to ERR, so it takes no more
 * WQEs, and its receive CQ is drained while the QP is still known.
 */
void rdma_ibv_quiesce_srq_qp(RdmaIbv *ibv, RdmaQp *qp)
{
    RdmaCq *cq = rdma_rm_get(ibv->be.rm, RDMA_RES_CQ, qp->recv_cq_handle);
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

    ibv_modify_qp(((RdmaIbvQp *)qp->be)->qp, &a, IBV_QP_STATE);
    if (cq && cq->be) {
        rdma_ibv_drain(ibv, ((RdmaIbvCq *)cq->be)->id);
    }
}

/*
 * The completion thread.  It sleeps on the completion channel outside the
 * BQL, acknowledges each event at once (ibv_destroy_cq waits for that, and
 * the BQL holder may be the one destroying), then drains under the BQL.
 */
static void *rdma_ibv_comp_thread(void *opaque)
{
    RdmaIbv *ibv = opaque;
    struct pollfd fds[2] = {
        { .fd = ibv->channel->fd, .events = POLLIN },
        { .fd = ibv->stop_fd, .events = POLLIN },
    };

    rcu_register_thread();
    for (;;) {
        struct ibv_cq *cq;
        void *ctx;

        if (poll(fds, 2, -1) < 0 && errno != EINTR) {
            break;
        }
        if (fds[1].revents) {
            break;
        }
        while (ibv_get_cq_event(ibv->channel, &cq, &ctx) == 0) {
            ibv_ack_cq_events(cq, 1);
            bql_lock();
            if (rdma_rm_enter(ibv->be.rm)) {
                rdma_ibv_drain(ibv, (uintptr_t)ctx);
                rdma_rm_leave(ibv->be.rm);
            }
            bql_unlock();
        }
    }
    rcu_unregister_thread();
    return NULL;
}

bool rdma_ibv_comp_start(RdmaIbv *ibv, Error **errp)
{
    ibv->stop_fd = eventfd(0, EFD_CLOEXEC);
    if (ibv->stop_fd < 0) {
        error_setg_errno(errp, errno, "pvrdma: eventfd");
        return false;
    }
    g_unix_set_fd_nonblocking(ibv->channel->fd, true, NULL);
    qemu_thread_create(&ibv->comp_thread, "pvrdma-comp", rdma_ibv_comp_thread,
                       ibv, QEMU_THREAD_JOINABLE);
    return true;
}

void rdma_ibv_comp_stop(RdmaIbv *ibv)
{
    uint64_t one = 1;

    if (ibv->stop_fd < 0) {
        return;
    }
    if (write(ibv->stop_fd, &one, sizeof(one)) != sizeof(one)) {
        /* eventfd writes of 8 bytes do not fail short of overflow */
    }
    /* The thread may wait for the BQL we hold: let it finish. */
    bql_unlock();
    qemu_thread_join(&ibv->comp_thread);
    bql_lock();
    close(ibv->stop_fd);
    ibv->stop_fd = -1;
}

/* Asynchronous events of the host device (main loop, under the BQL) */

static void rdma_ibv_qp_event(RdmaIbv *ibv, struct ibv_qp *hqp, RdmaEvent ev)
{
    RdmaResources *rm = ibv->be.rm;
    RdmaQp *qp = g_hash_table_lookup(ibv->qps,
                                     GUINT_TO_POINTER(hqp->qp_num));

    if (!qp) {
        return;
    }
    if (ev != RDMA_EVENT_QP_LAST_WQE_REACHED) {
        rdma_ibv_qp_failed(qp, false);
    }
    rm->fe->event(rm->fe_opaque, ev, qp->handle);
}

void rdma_ibv_async_event(void *opaque)
{
    RdmaIbv *ibv = opaque;
    RdmaResources *rm = ibv->be.rm;
    struct ibv_async_event e;

    /*
     * An entry point: a reset the guest's MSI-X message sets off is
     * deferred until every event read here has been acked (a destroy
     * waits for the acks of its object's events).
     */
    if (!rdma_rm_enter(rm)) {
        return;
    }
    while (ibv_get_async_event(ibv->ctx, &e) == 0) {
        trace_rdma_ibv_async(e.event_type);
        switch (e.event_type) {
        case IBV_EVENT_QP_FATAL:
            rdma_ibv_qp_event(ibv, e.element.qp, RDMA_EVENT_QP_FATAL);
            break;
        case IBV_EVENT_QP_REQ_ERR:
            rdma_ibv_qp_event(ibv, e.element.qp, RDMA_EVENT_QP_REQ_ERR);
            break;
        case IBV_EVENT_QP_ACCESS_ERR:
            rdma_ibv_qp_event(ibv, e.element.qp, RDMA_EVENT_QP_ACCESS_ERR);
            break;
        case IBV_EVENT_QP_LAST_WQE_REACHED:
            rdma_ibv_qp_event(ibv, e.element.qp,
                              RDMA_EVENT_QP_LAST_WQE_REACHED);
            break;
        case IBV_EVENT_SRQ_LIMIT_REACHED: {
            uint32_t h = GPOINTER_TO_UINT(e.element.srq->srq_context);
            RdmaSrq *srq = rdma_rm_get(rm, RDMA_RES_SRQ, h);

            if (srq) {
                srq->srq_limit = 0;
                rm->fe->event(rm->fe_opaque, RDMA_EVENT_SRQ_LIMIT_REACHED, h);
            }
            break;
        }
        case IBV_EVENT_CQ_ERR: {
            uint64_t id = (uintptr_t)e.element.cq->cq_context;
            RdmaIbvCq *icq = g_hash_table_lookup(ibv->cqs, &id);

            if (icq) {
                rm->fe->event(rm->fe_opaque, RDMA_EVENT_CQ_ERR, icq->handle);
            }
            break;
        }
        case IBV_EVENT_PORT_ACTIVE:
        case IBV_EVENT_PORT_ERR:
            if (e.element.port_num == ibv->port) {
                rm->fe->event(rm->fe_opaque,
                              e.event_type == IBV_EVENT_PORT_ACTIVE ?
                              RDMA_EVENT_PORT_ACTIVE : RDMA_EVENT_PORT_ERR, 1);
            }
            break;
        default:
            break;
        }
        ibv_ack_async_event(&e);
    }
    rdma_rm_leave(rm);
}
