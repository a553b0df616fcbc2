/*
 * The soft RDMA engine: the transport, and the one loop that runs it.
 *
 * rdma_soft_xmit() puts a packet on the device's link.  Today the link is
 * a loopback: packets go to QPs of this device, each to the responder
 * (requests) or the completer (responses) of the QP it is addressed to.
 * A packet sent while another is being delivered waits in a short queue
 * until that delivery has returned, and the outermost xmit delivers them
 * in the order they were sent.  So the requester, responder and
 * completer never call into each other and none is entered twice, and
 * the only thing that passes between them is a packet.
 *
 * Work that an entry point's budget did not cover (the next step of a
 * long message or READ, an RNR retry whose timer expired) is due in
 * run_bh, itself an entry point with a budget.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "system/runstate.h"
#include "rdma_soft.h"
#include "hw/rdma/trace.h"

static bool rdma_soft_qp_receives(const RdmaQp *qp)
{
    return qp->attr.qp_state == RDMA_QPS_RTR ||
           qp->attr.qp_state == RDMA_QPS_RTS ||
           qp->attr.qp_state == RDMA_QPS_SQD ||
           qp->attr.qp_state == RDMA_QPS_SQE;
}

/*
 * Why RC QP @dst must not take @pkt, or NULL.  An RC QP hears only its
 * peer, where its peer is (as Linux rxe's check_addr, and as a NIC whose
 * QP context holds the peer's address): a QP connected across the link
 * takes frames from the link only, from its peer's GID to its own; a QP
 * connected to a QP of this device takes that QP's packets only.  So
 * nobody on the link poses as a QP of this device, and no QP of this
 * device (another process of the guest) as a peer on the link.
 */
static const char *rdma_soft_rc_refused(const RdmaQp *dst,
                                        const RdmaSoftPkt *pkt)
{
    const RdmaSoftQp *sqp = dst->be;

    if (pkt->remote != sqp->remote) {
        return pkt->remote ? "from the link to a QP of this device's" :
                             "from this device to a QP of the link's";
    }
    if (memcmp(pkt->sgid, dst->attr.ah.dgid, 16)) {
        return "not from its peer's GID";
    }
    if (memcmp(pkt->dgid, rdma_soft_qp_sgid(sqp), 16)) {
        return "not to its own GID";
    }
    if (!pkt->remote && dst->attr.dest_qp_num != pkt->src_qpn) {
        return "not from its peer QP";
    }
    return NULL;
}

/* Hand @pkt, from a QP of this device or from the link, to its QP. */
static void rdma_soft_deliver(RdmaSoft *soft, const RdmaSoftPkt *pkt)
{
    RdmaResources *rm = soft->be.rm;
    RdmaQp *dst = rdma_rm_qp_by_num(rm, pkt->dest_qpn);
    RdmaQp *src = pkt->remote ? NULL : rdma_rm_qp_by_num(rm, pkt->src_qpn);
    bool rc = dst && dst->be && dst->type == RDMA_QPT_RC;
    const char *why;
    RdmaSoftPkt named;

    trace_rdma_soft_pkt(pkt->src_qpn, pkt->dest_qpn,
                        rdma_soft_op_info(pkt->opcode)->name, pkt->psn,
                        pkt->paylen);
    if ((pkt->opcode & RDMA_OPC_TRANSPORT_MASK) == RDMA_OPC_RC) {
        why = !rc ? "no RC QP" :
              (pkt->mask & RDMA_PKT_REQ) && !rdma_soft_qp_receives(dst) ?
              "QP does not receive" : rdma_soft_rc_refused(dst, pkt);
        if (why) {
            /* Between two QPs of this device the sender learns it now. */
            if (src && src->be && (pkt->mask & RDMA_PKT_REQ)) {
                rdma_soft_comp_unreachable(src->be, pkt->psn);
            }
            trace_rdma_soft_rc_refused(pkt->src_qpn, pkt->dest_qpn,
                                       pkt->opcode, pkt->remote, why);
            return;
        }
        if (pkt->remote) {
            /* The wire names no source QP for RC: its peer's it is. */
            named = *pkt;
            named.src_qpn = dst->attr.dest_qp_num;
            pkt = &named;
        }
        if (pkt->mask & RDMA_PKT_RESP) {
            rdma_soft_comp_recv(dst->be, pkt);
        } else {
            rdma_soft_resp_recv(dst->be, pkt);
        }
        return;
    }
    /* UD and GSI: unreliable; whatever cannot be delivered is dropped. */
    if (dst && dst->be &&
        (dst->type == RDMA_QPT_UD || dst->type == RDMA_QPT_GSI) &&
        rdma_soft_qp_receives(dst) && rdma_rm_gid_is_local(rm, pkt->dgid)) {
        rdma_soft_resp_recv(dst->be, pkt);
    } else {
        trace_rdma_soft_ud_drop(pkt->src_qpn, pkt->dest_qpn, "no such QP");
    }
}

/* The queue of the delivery this thread is in (see RdmaSoftLoop). */
static __thread RdmaSoftLoop *rdma_soft_loop;

/*
 * Deliver @pkt and what the deliveries send in turn, in order; a packet
 * sent while one is being delivered waits in the queue (see the top).
 */
void rdma_soft_receive(RdmaSoft *soft, const RdmaSoftPkt *pkt)
{
    RdmaSoftLoop *busy = rdma_soft_loop;
    RDMA_SOFT_UNINIT RdmaSoftLoop loop;

    if (busy && busy->soft == soft) {
        /*
         * Sent while a packet is being delivered: it waits its turn.  A
         * delivery answers with at most one packet and every sender
         * returns before the next is taken, so the queue never holds
         * more than a few; full would be a bug, and the packet is lost
         * as on a real link.
         */
        if (busy->n == RDMA_SOFT_LOOP_LEN) {
            warn_report_once("rdma: soft engine loopback queue full");
            trace_rdma_soft_drop(pkt->src_qpn, pkt->opcode,
                                 "link queue full");
            return;
        }
        busy->q[(busy->head + busy->n++) % RDMA_SOFT_LOOP_LEN] = *pkt;
        return;
    }
    loop.soft = soft;
    loop.head = loop.n = 0;
    rdma_soft_loop = &loop;
    rdma_soft_deliver(soft, pkt);
    while (loop.n) {
        RdmaSoftPkt next = loop.q[loop.head];

        loop.head = (loop.head + 1) % RDMA_SOFT_LOOP_LEN;
        loop.n--;
        rdma_soft_deliver(soft, &next);
    }
    rdma_soft_loop = busy;
}

void rdma_soft_xmit(RdmaSoft *soft, const RdmaSoftPkt *pkt)
{
    if (pkt->remote) {
        rdma_soft_port_send(soft, pkt);     /* leaves now: nothing waits */
    } else {
        rdma_soft_receive(soft, pkt);
    }
}

/* Is a packet of @soft on its way (nothing may be saved then)? */
bool rdma_soft_delivering(RdmaSoft *soft)
{
    return rdma_soft_loop && rdma_soft_loop->soft == soft;
}

/*
 * Where the payload of @pkt is, resolved again with every check: the
 * sender's WR may have completed, its MRs may have changed.
 */
bool rdma_soft_payload_sgl(RdmaSoft *soft, const RdmaSoftPkt *pkt,
                           RdmaSoftSgl *sgl, uint64_t *off)
{
    RdmaResources *rm = soft->be.rm;
    RdmaQp *qp = rdma_rm_qp_by_num(rm, pkt->data_qpn);
    RdmaSoftWqe *w;

    if (!qp || !qp->be) {
        return false;
    }
    switch (pkt->data) {
    case RDMA_DATA_WQE:
        w = rdma_soft_wqe_at(qp->be, pkt->data_psn);
        if (!w || rdma_soft_local_sgl(rm, qp->pd_handle, w->wr.sge,
                                      w->wr.num_sge, 0, sgl) !=
                  RDMA_WC_SUCCESS ||
            pkt->data_off > sgl->total ||
            pkt->paylen > sgl->total - pkt->data_off) {
            return false;
        }
        *off = pkt->data_off;
        return true;
    case RDMA_DATA_REMOTE:
        *off = 0;
        return rdma_soft_remote_seg(rm, qp, pkt->data_va, pkt->data_rkey,
                                    pkt->paylen, RDMA_ACCESS_REMOTE_READ, sgl);
    default:
        return false;
    }
}

/*
 * Copy @pkt's payload to @dst at @off: from the frame it came in, or
 * from the sender's memory on this device.
 */
bool rdma_soft_place(RdmaSoft *soft, const RdmaSoftPkt *pkt,
                     RdmaSoftSgl *dst, uint64_t off)
{
    RDMA_SOFT_UNINIT RdmaSoftSgl src;
    uint64_t src_off;

    if (pkt->data == RDMA_DATA_BYTES) {
        return rdma_soft_write_buf(soft->be.rm->pdev, dst, off, pkt->bytes,
                                   pkt->paylen);
    }
    return rdma_soft_payload_sgl(soft, pkt, &src, &src_off) &&
           rdma_soft_copy(soft->be.rm->pdev, dst, off, &src, src_off,
                          pkt->paylen);
}

/*
 * Send @sqp's next packets now, one per unit of the entry point's budget
 * (on the link a packet is a path MTU, so a pass of the bottom half sends
 * a burst of them); what the budget does not cover stays due for the
 * bottom half (an entry point with a budget of its own).
 */
static void rdma_soft_req_go(RdmaSoftQp *sqp)
{
    RdmaResources *rm = sqp->soft->be.rm;

    do {
        if (!rdma_rm_budget_left(rm)) {
            if (!rdma_rm_stopping(rm)) {
                sqp->req.due = true;
                rdma_soft_qp_due(sqp);
            }
            return;
        }
        rdma_rm_budget_charge(rm, rdma_soft_req_step_bytes(sqp));
        rdma_soft_req_run(sqp);
        rdma_soft_req_update(sqp, true);
        /* req_run left it due when it has more to send */
    } while (sqp->req.due && !sqp->req.rnr_wait);
}

static void rdma_soft_resp_go(RdmaSoftQp *sqp)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaSoftResp *r = &sqp->resp;

    do {
        if (!rdma_rm_budget_left(rm)) {
            if (!rdma_rm_stopping(rm)) {
                r->due = true;
                rdma_soft_qp_due(sqp);
            }
            return;
        }
        rdma_rm_budget_charge(rm, r->read ? MIN(r->read_len - r->read_off,
                                                rdma_soft_pmtu(sqp->qp)) :
                                  0);
        rdma_soft_resp_run(sqp);
    } while (r->due);
}

/* @sqp has something due (a flag set): the run bottom half takes it up. */
void rdma_soft_qp_due(RdmaSoftQp *sqp)
{
    RdmaSoft *soft = sqp->soft;

    if (!sqp->queued) {
        sqp->queued = true;
        QTAILQ_INSERT_TAIL(&soft->run_list, sqp, run_next);
        soft->nrun++;
    }
    qemu_bh_schedule(soft->run_bh);
}

/* Off the run list (taken up, or the QP goes). */
void rdma_soft_qp_undue(RdmaSoftQp *sqp)
{
    if (sqp->queued) {
        sqp->queued = false;
        QTAILQ_REMOVE(&sqp->soft->run_list, sqp, run_next);
        sqp->soft->nrun--;
    }
}

/* The engine state of QP @h, if that QP is there. */
static RdmaSoftQp *rdma_soft_run_qp(RdmaTable *t, uint32_t h)
{
    RdmaQp *qp = h < t->size ? t->slots[h] : NULL;

    return qp ? qp->be : NULL;
}

void rdma_soft_run_bh(void *opaque)
{
    RdmaSoft *soft = opaque;
    RdmaResources *rm = soft->be.rm;
    RdmaTable *t = &rm->tables[RDMA_RES_QP];
    RdmaSoftQp *sqp;

    /* What is due waits for the VM to run (rdma_soft_vm_state()). */
    if (!runstate_is_running() || !rdma_rm_enter(rm)) {
        return;
    }
    rdma_soft_port_run(soft);
    /*
     * The QPs due when this pass began (what becomes due during it, and a
     * QP the budget stopped, are on the list again for the next pass).
     */
    for (uint32_t n = soft->nrun;
         n > 0 && (sqp = QTAILQ_FIRST(&soft->run_list)); n--) {
        uint32_t h = sqp->qp->handle;

        rdma_soft_qp_undue(sqp);
        if (sqp->resp.due) {
            rdma_soft_resp_go(sqp);
        }
        sqp = rdma_soft_run_qp(t, h);
        if (sqp && sqp->req.timed_out) {
            sqp->req.timed_out = false;
            rdma_soft_comp_timeout(sqp);
        }
        /* The QP may be gone: a READ response can fail its requester. */
        sqp = rdma_soft_run_qp(t, h);
        if (sqp && sqp->req.due) {
            sqp->req.due = false;
            rdma_soft_req_go(sqp);
        }
    }
    /* a QP whose turn came and that sent nothing passes it on */
    rdma_soft_window_kick(soft);
    rdma_rm_leave(rm);
}

/*
 * The guest posted receives: a sender waiting (RNR) on this receive queue
 * need not wait for its timer (it would only find the WQE later).
 */
void rdma_soft_recv_posted(RdmaBackend *be, RdmaQp *qp, RdmaSrq *srq)
{
    RdmaTable *t = &be->rm->tables[RDMA_RES_QP];

    if (!container_of(be, RdmaSoft, be)->nbusy) {
        return;                     /* the common case: nobody waits */
    }
    for (uint32_t h = 0; h < t->size; h++) {
        RdmaQp *s = t->slots[h];
        RdmaSoftQp *sqp = s ? s->be : NULL;
        RdmaQp *dst;

        if (!sqp || !sqp->req.rnr_wait) {
            continue;
        }
        dst = rdma_rm_qp_by_num(be->rm, sqp->req.rnr_dest_qpn);
        if (dst && (dst == qp || (srq && dst->is_srq &&
                                  dst->srq_handle == srq->handle))) {
            timer_del(sqp->req.rnr_timer);
            sqp->req.rnr_wait = false;
            rdma_soft_req_go(sqp);
        }
    }
}

/* @qp entered ERR (both halves stop) or SQE (its send queue stops). */
void rdma_soft_flush_qp(RdmaBackend *be, RdmaQp *qp)
{
    RdmaSoftQp *sqp = qp->be;

    rdma_soft_req_flush(sqp, true);
    if (qp->attr.qp_state == RDMA_QPS_ERR) {
        rdma_soft_resp_flush(sqp, true);
    }
}
