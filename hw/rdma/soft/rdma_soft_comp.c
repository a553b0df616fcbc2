/*
 * The soft RDMA engine: the completer.
 *
 * Response packets (ACKs, NAKs, READ responses, atomic ACKs) arrive here
 * for the requester QP they are addressed to, and complete its
 * outstanding WRs in PSN order, from the head of its queue.  An RNR NAK
 * makes the requester wait and then go back to the PSN the NAK names;
 * any other NAK completes the WR with the error the IB spec maps it to
 * (IB 9.9.2, table 59 of o9-x) and the QP goes to ERR.
 *
 * rdma_soft_complete_wqe() is the one place a send WR completes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "rdma_soft.h"
#include "hw/rdma/trace.h"

/* RNR timer values of the IB spec (table 45), in microseconds x 100. */
static const uint32_t rdma_rnr_timer_10us[32] = {
    65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
    384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384,
    24576, 32768, 49152,
};

static const RdmaWcStatus rdma_soft_nak_status[] = {
    [RDMA_NAK_INV_REQ] = RDMA_WC_REM_INV_REQ_ERR,
    [RDMA_NAK_REM_ACCESS] = RDMA_WC_REM_ACCESS_ERR,
    [RDMA_NAK_REM_OP] = RDMA_WC_REM_OP_ERR,
};

void rdma_soft_complete_wqe(RdmaSoftQp *sqp, RdmaSoftWqe *w, RdmaWcStatus st)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaQp *qp = sqp->qp;
    RdmaWc wc = {
        .wr_id = w->wr.wr_id,
        .status = st,
        .opcode = rdma_wc_opcode(w->wr.opcode),
        .byte_len = st == RDMA_WC_SUCCESS ? w->len : 0,
        .qp_handle = qp->handle,
    };
    /* Unsignaled WRs complete silently, unless they fail. */
    bool report = st != RDMA_WC_SUCCESS ||
                  (w->wr.flags & RDMA_SEND_SIGNALED) || qp->sq_sig_all;

    QTAILQ_REMOVE(&sqp->req.wqes, w, next);
    sqp->req.nwqe--;
    if (QTAILQ_EMPTY(&sqp->req.wqes)) {
        sqp->req.rnr_attempts = 0;
    }
    rdma_soft_wqe_free(sqp, w);
    if (report) {
        trace_rdma_soft_send_done(qp->qpn, wc.wr_id, st);
        rm->fe->complete(rm->fe_opaque, qp, qp->send_cq_handle, &wc, false);
    }
    rdma_soft_req_update(sqp, true);
    /* a WR that waited for this one (fence, max_rd_atomic) may start */
    rdma_soft_req_kick(sqp);
}

/* A WR failed: it completes with @st, the QP goes to ERR (UD: SQE). */
void rdma_soft_fail_wqe(RdmaSoftQp *sqp, RdmaSoftWqe *w, RdmaWcStatus st)
{
    rdma_soft_complete_wqe(sqp, w, st);
    rdma_rm_qp_send_error(sqp->soft->be.rm, sqp->qp, RDMA_EVENT_NONE);
}

/*
 * Between two QPs of this device the transport knows at once that nobody
 * takes the packet (no such QP, not connected back, not receiving): what
 * the retransmission timer would find out after retry_cnt tries.
 */
void rdma_soft_comp_unreachable(RdmaSoftQp *sqp, uint32_t psn)
{
    RdmaSoftWqe *w = rdma_soft_wqe_at(sqp, psn);

    if (w) {
        rdma_soft_fail_wqe(sqp, w, RDMA_WC_RETRY_EXC_ERR);
    }
}

/*
 * The retransmission timer expired: nothing came back for what is
 * outstanding.  Send again from the first unacknowledged PSN while
 * retries are left (IB 9.7.6.1.3), else the WR fails.
 */
void rdma_soft_comp_timeout(RdmaSoftQp *sqp)
{
    RdmaSoftWqe *w = QTAILQ_FIRST(&sqp->req.wqes);

    if (!w || w->last_psn == RDMA_PSN_MASK + 1 || sqp->req.rnr_wait) {
        return;
    }
    if (rdma_soft_req_timer_probe(sqp)) {
        return;
    }
    sqp->soft->stats.timeouts++;
    trace_rdma_soft_timeout(sqp->qp->qpn, w->ack_psn, sqp->req.retry_left);
    if (!sqp->req.retry_left) {
        rdma_soft_fail_wqe(sqp, w, RDMA_WC_RETRY_EXC_ERR);
        return;
    }
    sqp->req.retry_left--;
    sqp->req.gap_retry = false;
    sqp->req.stale = 0;             /* a timeout's worth of quiet: read */
    rdma_soft_req_lost(sqp, w->ack_psn);
    rdma_soft_req_go_back(sqp, w->ack_psn);
    rdma_soft_retry_restart(sqp, false);
}

/* RNR NAK for @w at @psn: wait the responder's RNR time, then resend. */
static void rdma_soft_comp_rnr(RdmaSoftQp *sqp, RdmaSoftWqe *w,
                               const RdmaSoftPkt *pkt)
{
    RdmaSoftReq *req = &sqp->req;
    RdmaQp *qp = sqp->qp;

    req->rnr_attempts++;
    if (qp->attr.rnr_retry != RDMA_RNR_INFINITE &&
        req->rnr_attempts > qp->attr.rnr_retry) {
        rdma_soft_fail_wqe(sqp, w, RDMA_WC_RNR_RETRY_EXC_ERR);
        return;
    }
    trace_rdma_soft_rnr(qp->qpn, pkt->src_qpn, req->rnr_attempts);
    /* Go back to the PSN that found no receive WQE, the WRs after it too. */
    rdma_soft_req_rewind(sqp, pkt->psn);
    req->rnr_wait = true;
    req->rnr_dest_qpn = pkt->src_qpn;
    req->due = false;
    timer_del(req->retry_timer);
    timer_mod(req->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              rdma_rnr_timer_10us[pkt->syndrome & 31] * 10000ll);
}

/* Payload of a READ response into @w's buffer. */
static RdmaWcStatus rdma_soft_comp_read_data(RdmaSoftQp *sqp, RdmaSoftWqe *w,
                                             const RdmaSoftPkt *pkt)
{
    RdmaResources *rm = sqp->soft->be.rm;
    uint64_t off = (uint64_t)((pkt->psn - w->first_psn) & RDMA_PSN_MASK) *
                   rdma_soft_pmtu(sqp->qp);
    RDMA_SOFT_UNINIT RdmaSoftSgl local;
    RdmaWcStatus st;

    if (!pkt->paylen) {
        return RDMA_WC_SUCCESS;
    }
    if (off + pkt->paylen > w->len) {
        return RDMA_WC_BAD_RESP_ERR;
    }
    st = rdma_soft_local_sgl(rm, sqp->qp->pd_handle, w->wr.sge,
                             w->wr.num_sge, RDMA_ACCESS_LOCAL_WRITE, &local);
    if (st != RDMA_WC_SUCCESS) {
        return st;
    }
    if (!rdma_soft_place(sqp->soft, pkt, &local, off)) {
        return RDMA_WC_REM_ACCESS_ERR;
    }
    return RDMA_WC_SUCCESS;
}

/*
 * Answers for @w are missing before one that came: ask again from the
 * first missing PSN, once until an answer moves on or the timer expires.
 */
static void rdma_soft_comp_gap(RdmaSoftQp *sqp, RdmaSoftWqe *w)
{
    if (!sqp->req.gap_retry && w->next_psn != w->ack_psn) {
        sqp->req.gap_retry = true;
        rdma_soft_req_go_back(sqp, w->ack_psn);
    }
}

/*
 * An ACK of @psn (coalesced: of every PSN up to it): the WRs up to it
 * complete, in order, and one it falls in is acknowledged that far.  A
 * READ or an atomic is complete only with its response, so an ACK
 * beyond it means the response was lost: it is asked for again.  Only a
 * PSN that was sent counts, also one that a go-back is sending again
 * (its first transmission arrived), never one not sent yet.
 */
static void rdma_soft_comp_ack(RdmaSoftQp *sqp, uint32_t psn)
{
    RdmaSoftWqe *w = QTAILQ_FIRST(&sqp->req.wqes);
    uint32_t from = w ? w->ack_psn : psn;
    bool progress = false;

    while ((w = QTAILQ_FIRST(&sqp->req.wqes)) &&
           w->last_psn != RDMA_PSN_MASK + 1 &&
           rdma_psn_diff(w->ack_psn, psn) <= 0 &&
           rdma_psn_diff(sqp->req.sent_psn, psn) > 0) {
        if (w->wr.opcode == RDMA_WR_RDMA_READ ||
            w->wr.opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ||
            w->wr.opcode == RDMA_WR_ATOMIC_FETCH_AND_ADD) {
            rdma_soft_comp_gap(sqp, w);
            break;
        }
        progress = true;
        if (rdma_psn_diff(w->last_psn, psn) > 0) {
            w->ack_psn = (psn + 1) & RDMA_PSN_MASK;
            if (rdma_psn_diff(w->next_psn, w->ack_psn) < 0) {
                w->next_psn = w->ack_psn;   /* no need to send those again */
            }
            break;
        }
        rdma_soft_complete_wqe(sqp, w, RDMA_WC_SUCCESS);
    }
    if (progress) {
        rdma_soft_req_acked(sqp, MAX(rdma_psn_diff(psn + 1, from), 0));
        rdma_soft_rtt_answer(sqp, psn);
        rdma_soft_retry_restart(sqp, true);
        rdma_soft_req_kick(sqp);
    }
}

/* The response @pkt for @w, the WR its PSN falls in. */
static void rdma_soft_comp_response(RdmaSoftQp *sqp, RdmaSoftWqe *w,
                                    const RdmaSoftPkt *pkt)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaWcStatus st;
    uint64_t orig;

    if (pkt->mask & RDMA_PKT_READ) {
        if (w->wr.opcode != RDMA_WR_RDMA_READ) {
            rdma_soft_fail_wqe(sqp, w, RDMA_WC_BAD_RESP_ERR);
            return;
        }
        if (pkt->psn != w->ack_psn) {
            /*
             * Out of order: an old one is a duplicate; a later one means
             * responses were lost, and the READ is asked again from the
             * first missing one (once, RdmaSoftReq.gap_retry).
             */
            if (rdma_psn_diff(pkt->psn, w->ack_psn) > 0) {
                rdma_soft_comp_gap(sqp, w);
            }
            trace_rdma_soft_drop(sqp->qp->qpn, pkt->opcode, "out of order");
            return;
        }
        st = rdma_soft_comp_read_data(sqp, w, pkt);
        if (st != RDMA_WC_SUCCESS) {
            rdma_soft_fail_wqe(sqp, w, st);
            return;
        }
        w->ack_psn = (pkt->psn + 1) & RDMA_PSN_MASK;
        if (pkt->psn == w->last_psn) {
            if (pkt->mask & RDMA_PKT_LAST) {
                rdma_soft_complete_wqe(sqp, w, RDMA_WC_SUCCESS);
            } else {
                rdma_soft_fail_wqe(sqp, w, RDMA_WC_BAD_RESP_ERR);
                return;
            }
        }
        /* (a LAST before that ends one of the READ's requests) */
        rdma_soft_rtt_answer(sqp, pkt->psn);
        rdma_soft_retry_restart(sqp, true);
        rdma_soft_req_kick(sqp);
        return;
    }
    if (pkt->mask & RDMA_PKT_ATOMIC) {
        RDMA_SOFT_UNINIT RdmaSoftSgl local;

        if (w->wr.opcode != RDMA_WR_ATOMIC_CMP_AND_SWP &&
            w->wr.opcode != RDMA_WR_ATOMIC_FETCH_AND_ADD) {
            rdma_soft_fail_wqe(sqp, w, RDMA_WC_BAD_RESP_ERR);
            return;
        }
        orig = cpu_to_le64(pkt->orig);
        st = rdma_soft_local_sgl(rm, sqp->qp->pd_handle, w->wr.sge,
                                 w->wr.num_sge, RDMA_ACCESS_LOCAL_WRITE,
                                 &local);
        if (st == RDMA_WC_SUCCESS &&
            !rdma_soft_write_buf(rm->pdev, &local, 0, &orig, 8)) {
            st = RDMA_WC_REM_OP_ERR;
        }
        if (st != RDMA_WC_SUCCESS) {
            rdma_soft_fail_wqe(sqp, w, st);
            return;
        }
        rdma_soft_rtt_answer(sqp, pkt->psn);
        rdma_soft_complete_wqe(sqp, w, RDMA_WC_SUCCESS);
        /* progress, as an ACK or a READ response is: timer and retries */
        rdma_soft_retry_restart(sqp, true);
        return;
    }
    /* An ACK: the WR of its PSN and those before it are done. */
    rdma_soft_comp_ack(sqp, pkt->psn);
}

void rdma_soft_comp_recv(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    RdmaSoftWqe *w = rdma_soft_wqe_at(sqp, pkt->psn);
    uint8_t type = pkt->syndrome & RDMA_AETH_TYPE_MASK;

    if (pkt->opcode == RDMA_OPC_ACKNOWLEDGE && type == RDMA_AETH_ACK) {
        rdma_soft_comp_ack(sqp, pkt->psn);
        return;
    }
    if (pkt->opcode == RDMA_OPC_ACKNOWLEDGE && type == RDMA_AETH_NAK &&
        (pkt->syndrome & 31) == RDMA_NAK_PSN_SEQ_ERR) {
        /*
         * The responder missed @psn: what came before it arrived (an ACK
         * of psn - 1), and the requester goes back to it.
         */
        sqp->soft->stats.seq_naks++;
        rdma_soft_comp_ack(sqp, (pkt->psn - 1) & RDMA_PSN_MASK);
        if (rdma_soft_wqe_at(sqp, pkt->psn)) {
            rdma_soft_req_nak_back(sqp, pkt->psn);
        }
        return;
    }
    if (w && w != QTAILQ_FIRST(&sqp->req.wqes)) {
        /*
         * A response to a later WR acknowledges the ones before it (a
         * responder answers in PSN order), up to an RDMA READ or atomic
         * still waiting for its own: those were lost, it is asked again.
         */
        rdma_soft_comp_ack(sqp, (w->first_psn - 1) & RDMA_PSN_MASK);
    }
    if (!w || w != QTAILQ_FIRST(&sqp->req.wqes)) {
        /* Nothing outstanding there: a late or stray response. */
        trace_rdma_soft_drop(sqp->qp->qpn, pkt->opcode, "no WR at its PSN");
        return;
    }
    if (!(pkt->mask & RDMA_PKT_AETH) || type == RDMA_AETH_ACK) {
        rdma_soft_comp_response(sqp, w, pkt);
    } else if (type == RDMA_AETH_RNR_NAK) {
        rdma_soft_comp_rnr(sqp, w, pkt);
    } else if ((pkt->syndrome & 31) < ARRAY_SIZE(rdma_soft_nak_status) &&
               rdma_soft_nak_status[pkt->syndrome & 31]) {
        rdma_soft_fail_wqe(sqp, w, rdma_soft_nak_status[pkt->syndrome & 31]);
    } else {
        trace_rdma_soft_drop(sqp->qp->qpn, pkt->opcode, "NAK code");
    }
}
