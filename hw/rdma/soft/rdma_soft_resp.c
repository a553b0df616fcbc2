/*
 * The soft RDMA engine: the responder.
 *
 * Request packets arrive here for the QP they are addressed to.  An RC
 * responder checks each in the order of Linux rxe's responder, and of
 * IB 9.7.5.1: the PSN (the expected one is executed, an older one is a
 * duplicate, a newer one a sequence error NAKed once), the opcode against
 * the message in progress, the lengths, then the keys and rights against
 * its memory.  It places the data, completes receive WQEs and answers: an
 * ACK when asked, READ responses, an atomic ACK, or a NAK (RNR, invalid
 * request, remote access, remote operational error), after which the QP
 * goes to ERR as the IB spec says of a responder that NAKs.
 *
 * A duplicate is never executed twice and never NAKed: a SEND or WRITE is
 * acknowledged, a READ answered again from the responder resource it is
 * part of, an atomic answered with the result it had; any other is
 * dropped.  Anyone on the link can send a duplicate with a peer's address,
 * so a duplicate must cost the connection nothing.
 *
 * An RDMA READ is answered in packets of the path MTU from a responder
 * resource; a long one goes on from the run bottom half, one step per
 * pass, so a READ costs an entry point what a WRITE of its length does.
 *
 * rdma_soft_complete_recv() is the one place a receive WR completes.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "rdma_soft.h"
#include "hw/rdma/trace.h"

void rdma_soft_complete_recv(RdmaResources *rm, RdmaQp *qp,
                             const RdmaRecvWr *rwr, RdmaWc *wc,
                             bool solicited)
{
    wc->wr_id = rwr->wr_id;
    wc->qp_handle = qp->handle;
    trace_rdma_soft_recv_done(qp->qpn, rwr->wr_id, wc->status, wc->byte_len);
    rm->fe->complete(rm->fe_opaque, qp, qp->recv_cq_handle, wc, solicited);
}

/* A response of @sqp's QP to its peer, at @psn. */
static void rdma_soft_resp_pkt(RdmaSoftQp *sqp, RdmaSoftPkt *out,
                               uint8_t opcode, uint8_t syndrome, uint32_t psn)
{
    RdmaQp *qp = sqp->qp;

    memset(out, 0, sizeof(*out));
    out->opcode = opcode;
    out->mask = rdma_soft_op_info(opcode)->mask;
    out->psn = psn;
    out->dest_qpn = qp->attr.dest_qp_num;
    out->src_qpn = qp->qpn;
    out->syndrome = syndrome;
    out->msn = sqp->resp.msn;
    rdma_soft_qp_address(sqp, out);
}

static void rdma_soft_ack(RdmaSoftQp *sqp, uint32_t psn)
{
    RDMA_SOFT_UNINIT RdmaSoftPkt ack;

    rdma_soft_resp_pkt(sqp, &ack, RDMA_OPC_ACKNOWLEDGE,
                       RDMA_AETH_ACK | RDMA_AETH_CREDITS_INVALID, psn);
    rdma_soft_xmit(sqp->soft, &ack);
}

/*
 * NAK @code for the request at @psn; the QP goes to ERR with @ev (IB
 * 9.9.3.1: a responder that detects one of these errors stops).
 */
static void rdma_soft_nak(RdmaSoftQp *sqp, uint32_t psn, uint8_t code,
                          RdmaEvent ev)
{
    RDMA_SOFT_UNINIT RdmaSoftPkt nak;

    rdma_soft_resp_pkt(sqp, &nak, RDMA_OPC_ACKNOWLEDGE,
                       RDMA_AETH_NAK | code, psn);
    rdma_soft_xmit(sqp->soft, &nak);
    if (code != RDMA_NAK_PSN_SEQ_ERR) {
        rdma_rm_qp_error(sqp->soft->be.rm, sqp->qp, ev);
    }
}

static void rdma_soft_rnr_nak(RdmaSoftQp *sqp, uint32_t psn)
{
    RDMA_SOFT_UNINIT RdmaSoftPkt nak;

    rdma_soft_resp_pkt(sqp, &nak, RDMA_OPC_ACKNOWLEDGE,
                       RDMA_AETH_RNR_NAK | (sqp->qp->attr.min_rnr_timer & 31),
                       psn);
    rdma_soft_xmit(sqp->soft, &nak);
}

/*
 * Is [@va, +@len) under @rkey granted to the peer with @access?  If not,
 * the request at @pkt's PSN is NAKed (remote access error).
 */
static bool rdma_soft_resp_granted(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt,
                                   uint64_t va, uint32_t rkey, uint64_t len,
                                   uint32_t access, RdmaSoftSgl *remote)
{
    if (rdma_soft_remote_seg(sqp->soft->be.rm, sqp->qp, va, rkey, len,
                             access, remote)) {
        return true;
    }
    rdma_soft_nak(sqp, pkt->psn, RDMA_NAK_REM_ACCESS,
                  RDMA_EVENT_QP_ACCESS_ERR);
    return false;
}

/* The request executed: the next PSN is expected, an ACK if asked. */
static void rdma_soft_resp_done(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt,
                                uint32_t npsn)
{
    RdmaSoftResp *r = &sqp->resp;

    r->epsn = r->ack_psn = (pkt->psn + npsn) & RDMA_PSN_MASK;
    if (pkt->mask & RDMA_PKT_LAST) {
        r->msn = (r->msn + 1) & RDMA_MSN_MASK;
    }
    if (pkt->ackreq && sqp->qp->type == RDMA_QPT_RC) {
        rdma_soft_ack(sqp, pkt->psn);
    }
}

/* The responder's store of @sqp, allocated the first time it is needed. */
void rdma_soft_resp_store(RdmaSoftQp *sqp)
{
    if (!sqp->store) {
        sqp->store = g_new0(RdmaSoftRespStore, 1);
        sqp->resp.rwqe = &sqp->store->rwqe;
        sqp->resp.atomic = sqp->store->atomic;
        sqp->resp.res = sqp->store->res;
    }
}

/*
 * Take the receive WQE a message consumes: 0, or the NAK code when there
 * is none (-1: RNR, the guest may post one).
 */
static int rdma_soft_take_rwqe(RdmaSoftQp *sqp)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaSoftResp *r = &sqp->resp;
    int ret;

    if (r->has_rwqe) {
        return 0;
    }
    rdma_soft_resp_store(sqp);
    ret = rm->fe->next_recv(rm->fe_opaque, sqp->qp, r->rwqe);
    if (ret == -EAGAIN) {
        return -1;
    }
    if (ret < 0) {
        return RDMA_NAK_REM_OP;
    }
    r->has_rwqe = true;
    return 0;
}

/*
 * A packet of a SEND (or the immediate of an RDMA WRITE, @write_imm)
 * into the receive WQE; the last one completes it.  UD puts the GRH in
 * front of the data.
 */
static void rdma_soft_resp_recv_data(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt,
                                     bool write_imm)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaSoftResp *r = &sqp->resp;
    RdmaQp *qp = sqp->qp;
    bool ud = qp->type != RDMA_QPT_RC;
    uint64_t hdr = ud ? RDMA_GRH_SIZE : 0;
    uint64_t placed = write_imm ? 0 : r->off;
    uint64_t paylen = write_imm ? 0 : pkt->paylen;
    RdmaWc wc = { .src_qp = pkt->src_qpn };
    RDMA_SOFT_UNINIT RdmaSoftSgl rsgl;
    int ret;

    ret = rdma_soft_take_rwqe(sqp);
    if (ret) {
        if (ret < 0) {
            if (!ud) {
                rdma_soft_rnr_nak(sqp, pkt->psn);
            } else {
                trace_rdma_soft_ud_drop(pkt->src_qpn, qp->qpn, "no receive");
            }
        } else if (!ud) {
            rdma_soft_nak(sqp, pkt->psn, ret, RDMA_EVENT_QP_FATAL);
        } else {
            rdma_rm_qp_error(rm, qp, RDMA_EVENT_QP_FATAL);
        }
        return;
    }
    /* The WQE's SGEs again at every packet: the guest may change MRs. */
    wc.status = rdma_soft_local_sgl(rm, qp->pd_handle, r->rwqe->sge,
                                    r->rwqe->num_sge, RDMA_ACCESS_LOCAL_WRITE,
                                    &rsgl);
    if (wc.status == RDMA_WC_SUCCESS && rsgl.total < hdr + placed + paylen) {
        wc.status = RDMA_WC_LOC_LEN_ERR;
    }
    if (wc.status == RDMA_WC_SUCCESS && ud) {
        uint8_t grh[RDMA_GRH_SIZE];

        wc.network_hdr_type = rdma_grh_build(grh, pkt->sgid, pkt->dgid,
                                            paylen, 0, 64);
        wc.wc_flags |= RDMA_WC_GRH | RDMA_WC_WITH_NETWORK_HDR_TYPE;
        if (!rdma_soft_write_buf(rm->pdev, &rsgl, 0, grh, sizeof(grh))) {
            wc.status = RDMA_WC_LOC_PROT_ERR;
        }
    }
    if (wc.status == RDMA_WC_SUCCESS && paylen &&
        !rdma_soft_place(sqp->soft, pkt, &rsgl, hdr + placed)) {
        wc.status = RDMA_WC_LOC_PROT_ERR;
    }
    if (wc.status == RDMA_WC_SUCCESS && !(pkt->mask & RDMA_PKT_LAST)) {
        r->off += paylen;               /* more packets to come */
        r->msg = RDMA_MSG_SEND;
        rdma_soft_resp_done(sqp, pkt, 1);
        return;
    }
    if (wc.status == RDMA_WC_SUCCESS && (pkt->mask & RDMA_PKT_IETH)) {
        wc.status = rdma_soft_invalidate(rm, qp, pkt->inv_rkey);
        wc.wc_flags |= RDMA_WC_WITH_INVALIDATE;
        wc.imm_data = pkt->inv_rkey;
    }
    wc.byte_len = write_imm ? r->len : hdr + placed + paylen;
    wc.opcode = write_imm ? RDMA_WC_RECV_RDMA_WITH_IMM : RDMA_WC_RECV;
    if (pkt->mask & RDMA_PKT_IMMDT) {
        wc.imm_data = pkt->imm;
        wc.wc_flags |= RDMA_WC_WITH_IMM;
    }
    r->has_rwqe = false;
    r->msg = RDMA_MSG_NONE;
    r->off = 0;
    rdma_soft_complete_recv(rm, qp, r->rwqe, &wc, pkt->se);
    if (wc.status != RDMA_WC_SUCCESS && !ud) {
        rdma_soft_nak(sqp, pkt->psn, wc.status == RDMA_WC_LOC_LEN_ERR ?
                      RDMA_NAK_INV_REQ : RDMA_NAK_REM_OP, RDMA_EVENT_NONE);
        return;
    }
    rdma_soft_resp_done(sqp, pkt, 1);
}

/* A packet of an RDMA WRITE. */
static void rdma_soft_resp_write(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    RdmaSoftResp *r = &sqp->resp;
    RDMA_SOFT_UNINIT RdmaSoftSgl remote;

    if (pkt->mask & RDMA_PKT_FIRST) {
        r->va = pkt->va;
        r->rkey = pkt->rkey;
        r->len = pkt->dma_len;
        r->off = 0;
        /* A zero-length write checks no key (IB 9.4.1.1). */
        if (r->len &&
            !rdma_soft_resp_granted(sqp, pkt, r->va, r->rkey, r->len,
                                    RDMA_ACCESS_REMOTE_WRITE, &remote)) {
            return;
        }
    }
    /*
     * The data first: the receive WQE the immediate consumes completes
     * only for data that is in place.  An RNR NAK then costs the last
     * packet a second placement of the same data, as on a real link.
     */
    if (pkt->paylen) {
        /* A first packet's range was resolved above: all of a 1-packet one */
        if (!(pkt->mask & RDMA_PKT_FIRST) &&
            !rdma_soft_resp_granted(sqp, pkt, r->va + r->off, r->rkey,
                                    pkt->paylen, RDMA_ACCESS_REMOTE_WRITE,
                                    &remote)) {
            return;
        }
        if (!rdma_soft_place(sqp->soft, pkt, &remote, 0)) {
            rdma_soft_nak(sqp, pkt->psn, RDMA_NAK_REM_ACCESS,
                          RDMA_EVENT_QP_ACCESS_ERR);
            return;
        }
    }
    if (!(pkt->mask & RDMA_PKT_LAST)) {
        r->off += pkt->paylen;
        r->msg = RDMA_MSG_WRITE;
        rdma_soft_resp_done(sqp, pkt, 1);
        return;
    }
    if (pkt->mask & RDMA_PKT_IMMDT) {
        /*
         * The receive side may RNR NAK: this packet comes again, to the
         * same state (r->off and r->msg are as they were before it).
         */
        rdma_soft_resp_recv_data(sqp, pkt, true);
        return;
    }
    r->msg = RDMA_MSG_NONE;
    r->off = 0;
    rdma_soft_resp_done(sqp, pkt, 1);
}

static bool rdma_soft_resp_worth_answering(RdmaSoftQp *sqp,
                                           const RdmaSoftPkt *pkt);

/*
 * Keep @pkt until the READ being answered is done: false if it is not
 * kept.  Its payload is copied: a frame's does not outlive its delivery,
 * and one in the sender's memory on this device might be another QP's by
 * the time it is taken (the QP number reused).
 */
static bool rdma_soft_backlog_add(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    RdmaSoft *soft = sqp->soft;
    uint64_t size = sizeof(RdmaSoftBacklogPkt) + pkt->paylen;
    RDMA_SOFT_UNINIT RdmaSoftSgl src;
    RdmaSoftBacklogPkt *b;
    uint64_t off;

    if (g_queue_get_length(&sqp->backlog) >= RDMA_SOFT_BACKLOG_MAX ||
        soft->backlog_bytes + size > RDMA_SOFT_BACKLOG_BYTES) {
        return false;
    }
    b = g_malloc(size);
    b->pkt = *pkt;
    if (pkt->paylen) {
        if (pkt->data == RDMA_DATA_BYTES) {
            memcpy(b->payload, pkt->bytes, pkt->paylen);
        } else if (!rdma_soft_payload_sgl(soft, pkt, &src, &off) ||
                   !rdma_soft_read_buf(soft->be.rm->pdev, &src, off,
                                       b->payload, pkt->paylen)) {
            g_free(b);
            return false;
        }
        b->pkt.data = RDMA_DATA_BYTES;
        b->pkt.bytes = b->payload;
    }
    soft->backlog_bytes += size;
    g_queue_push_tail(&sqp->backlog, b);
    return true;
}

static void rdma_soft_backlog_free(RdmaSoftQp *sqp, RdmaSoftBacklogPkt *b)
{
    sqp->soft->backlog_bytes -= sizeof(*b) + b->pkt.paylen;
    g_free(b);
}

void rdma_soft_backlog_clear(RdmaSoftQp *sqp)
{
    RdmaSoftBacklogPkt *b;

    while ((b = g_queue_pop_head(&sqp->backlog))) {
        rdma_soft_backlog_free(sqp, b);
    }
}

/* Is the responder answering a READ, or are requests waiting for it? */
bool rdma_soft_resp_busy(RdmaSoftQp *sqp)
{
    return sqp->resp.read || !g_queue_is_empty(&sqp->backlog);
}

static void rdma_soft_resp_take(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt);

void rdma_soft_resp_recv(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    if (sqp->qp->type == RDMA_QPT_RC && rdma_soft_resp_busy(sqp)) {
        /*
         * It waits its turn, if it can come to anything then (checked
         * again when it is taken): the queue is for the peer's requests,
         * not for a neighbour's.
         */
        if (!rdma_soft_resp_worth_answering(sqp, pkt) ||
            !rdma_soft_backlog_add(sqp, pkt)) {
            RdmaQp *src = pkt->remote ? NULL :
                          rdma_rm_qp_by_num(sqp->soft->be.rm, pkt->src_qpn);

            sqp->soft->stats.rx_dropped++;
            trace_rdma_soft_drop(sqp->qp->qpn, pkt->opcode,
                                 "not kept while a READ is answered");
            if (src && src->be) {
                /* On this device the sender learns it at once. */
                rdma_soft_comp_unreachable(src->be, pkt->psn);
            }
        }
        return;
    }
    rdma_soft_resp_take(sqp, pkt);
}

/*
 * The next request that waited for a READ to be answered: the bh takes
 * them one per pass while the responder is not busy again.
 */
static void rdma_soft_backlog_next(RdmaSoftQp *sqp)
{
    RdmaSoftBacklogPkt *b = g_queue_pop_head(&sqp->backlog);

    if (b) {
        rdma_soft_resp_take(sqp, &b->pkt);
        rdma_soft_backlog_free(sqp, b);
    }
    if (!sqp->resp.read && !g_queue_is_empty(&sqp->backlog)) {
        sqp->resp.due = true;
        rdma_soft_qp_due(sqp);
    }
}

/* READ responses in a burst: half the link window's packets. */
static uint32_t rdma_soft_pace_burst(RdmaSoftQp *sqp)
{
    return MAX(RDMA_SOFT_WIRE_WINDOW / 2 / rdma_soft_pmtu(sqp->qp), 1);
}

/* The pause after a burst of READ responses is over: send on. */
void rdma_soft_pace_timer(void *opaque)
{
    RdmaSoftQp *sqp = opaque;

    sqp->resp.due = true;
    rdma_soft_qp_due(sqp);
}

/*
 * A READ request came to @sqp's responder: @again, it asks (part of) one
 * answered before, whose responses the requester did not all get.  On
 * the link a receiver that takes frames from a socket loses what
 * overflows its buffer, and a busy guest behind it (Linux rxe under TCG)
 * takes them slowly: the answers slow down on every loss and speed up
 * while READs go through (rxe's requester spends one of its retries on
 * every gap; NVMe over RDMA with an rxe target ran out of them).
 */
static void rdma_soft_resp_pace(RdmaSoftQp *sqp, bool again)
{
    int64_t was = sqp->pace_ns;

    if (!sqp->remote) {
        return;
    }
    if (again) {
        sqp->pace_ns = MIN(MAX(sqp->pace_ns * 2, RDMA_SOFT_PACE_MIN_NS),
                           RDMA_SOFT_PACE_MAX_NS);
    } else if (sqp->pace_ns) {
        sqp->pace_ns -= sqp->pace_ns / 4;
        if (sqp->pace_ns < RDMA_SOFT_PACE_MIN_NS / 2) {
            sqp->pace_ns = 0;
        }
    }
    if (sqp->pace_ns != was) {
        trace_rdma_soft_pace(sqp->qp->qpn, again, was / 1000,
                             sqp->pace_ns / 1000);
    }
}

/* The next READ response of the responder resource. */
void rdma_soft_resp_run(RdmaSoftQp *sqp)
{
    RdmaSoftResp *r = &sqp->resp;
    uint64_t pmtu = rdma_soft_pmtu(sqp->qp);
    uint32_t n;
    bool first, last;
    RDMA_SOFT_UNINIT RdmaSoftPkt pkt;

    r->due = false;
    if (!r->read) {
        rdma_soft_backlog_next(sqp);
        return;
    }
    n = MIN(r->read_len - r->read_off, pmtu);
    first = r->read_off == 0;
    last = r->read_off + n == r->read_len;
    if (last && !r->read_dup) {
        r->msn = (r->msn + 1) & RDMA_MSN_MASK;
    }
    rdma_soft_resp_pkt(sqp, &pkt, rdma_soft_read_resp_opcode(first, last),
                       RDMA_AETH_ACK | RDMA_AETH_CREDITS_INVALID,
                       r->read_psn);
    pkt.dest_qpn = r->read_qpn;
    pkt.paylen = n;
    if (n) {
        pkt.data = RDMA_DATA_REMOTE;
        pkt.data_qpn = sqp->qp->qpn;
        pkt.data_va = r->read_va + r->read_off;
        pkt.data_rkey = r->read_rkey;
    }
    r->read_off += n;
    r->read_psn = (r->read_psn + 1) & RDMA_PSN_MASK;
    if (last) {
        r->read = false;
        if (!g_queue_is_empty(&sqp->backlog)) {
            r->due = true;              /* what waited for this READ */
            rdma_soft_qp_due(sqp);
        }
    } else if (sqp->pace_ns && ++sqp->paced >= rdma_soft_pace_burst(sqp)) {
        sqp->paced = 0;                 /* a pause after a burst */
        timer_mod(sqp->pace_timer,
                  qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) + sqp->pace_ns);
    } else {
        r->due = true;
        rdma_soft_qp_due(sqp);
    }
    rdma_soft_xmit(sqp->soft, &pkt);
}

/* Answer [@va, +@len) under @rkey from @psn on (@dup: a duplicate). */
static void rdma_soft_resp_answer(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt,
                                  uint64_t va, uint32_t rkey, uint32_t len,
                                  bool dup)
{
    RdmaSoftResp *r = &sqp->resp;

    r->read = true;
    r->read_qpn = pkt->src_qpn;
    r->read_psn = pkt->psn;
    r->read_va = va;
    r->read_rkey = rkey;
    r->read_len = len;
    r->read_off = 0;
    r->read_dup = dup;
    rdma_soft_resp_pace(sqp, dup);
    sqp->paced = 0;
    timer_del(sqp->pace_timer);
    rdma_soft_resp_run(sqp);
}

/* PSNs the responses to a READ of @len bytes take (at least one). */
static uint32_t rdma_soft_read_npsn(RdmaSoftQp *sqp, uint64_t len)
{
    return MAX(DIV_ROUND_UP(len, rdma_soft_pmtu(sqp->qp)), 1);
}

/* A new RDMA READ request: check it, keep it as a resource, answer it. */
static void rdma_soft_resp_read(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    RdmaSoftResp *r = &sqp->resp;
    uint32_t npsn = rdma_soft_read_npsn(sqp, pkt->dma_len);
    RDMA_SOFT_UNINIT RdmaSoftSgl remote;

    if (pkt->dma_len &&
        !rdma_soft_resp_granted(sqp, pkt, pkt->va, pkt->rkey, pkt->dma_len,
                                RDMA_ACCESS_REMOTE_READ, &remote)) {
        return;
    }
    rdma_soft_resp_store(sqp);
    r->res[r->res_next] = (RdmaSoftReadRes) {
        .first_psn = pkt->psn,
        .last_psn = (pkt->psn + npsn - 1) & RDMA_PSN_MASK,
        .va = pkt->va, .rkey = pkt->rkey, .len = pkt->dma_len,
    };
    r->res_next = (r->res_next + 1) % RDMA_SOFT_RD_ATOM;
    r->nres = MIN(r->nres + 1, RDMA_SOFT_RD_ATOM);
    r->epsn = (pkt->psn + npsn) & RDMA_PSN_MASK;
    rdma_soft_resp_answer(sqp, pkt, pkt->va, pkt->rkey, pkt->dma_len, false);
}

/*
 * The responder resource a duplicate READ @pkt asks again, or NULL: one
 * of the QP's newest max_dest_rd_atomic READs whose responses include
 * @pkt's PSN, under the same rkey, of which @pkt asks the part from that
 * PSN on (its address where that PSN's data starts, its end inside).
 * That is what a requester asks again when responses were lost, the
 * whole request or its tail (IB 9.7.5.1.1; rxe: find_resource).
 */
static const RdmaSoftReadRes *rdma_soft_read_res_of(RdmaSoftQp *sqp,
                                                    const RdmaSoftPkt *pkt)
{
    const RdmaSoftResp *r = &sqp->resp;
    int n = MIN(r->nres, MAX(sqp->qp->attr.max_dest_rd_atomic, 1));

    for (int k = 1; k <= n; k++) {
        const RdmaSoftReadRes *res =
            &r->res[(r->res_next + RDMA_SOFT_RD_ATOM - k) % RDMA_SOFT_RD_ATOM];
        int32_t idx = rdma_psn_diff(pkt->psn, res->first_psn);
        uint64_t skip = (uint64_t)MAX(idx, 0) * rdma_soft_pmtu(sqp->qp);

        if (idx < 0 || rdma_psn_diff(pkt->psn, res->last_psn) > 0) {
            continue;
        }
        if (pkt->rkey == res->rkey && skip <= res->len &&
            pkt->va == res->va + skip &&
            pkt->dma_len <= res->len - skip) {
            return res;
        }
        return NULL;                /* its PSN's READ, but not a part of it */
    }
    return NULL;
}

/* Keep the result of the atomic at @psn, over the oldest one kept. */
static void rdma_soft_atomic_keep(RdmaSoftResp *r, uint32_t psn,
                                  uint64_t orig)
{
    r->atomic[r->atomic_next] = (RdmaSoftAtomicRes) { psn, orig };
    r->atomic_next = (r->atomic_next + 1) % RDMA_SOFT_RD_ATOM;
    r->natomic = MIN(r->natomic + 1, RDMA_SOFT_RD_ATOM);
}

/* The slot of the kept result of the atomic at @psn, or -1. */
static int rdma_soft_atomic_find(const RdmaSoftResp *r, uint32_t psn)
{
    for (int n = 1; n <= r->natomic; n++) {
        int i = (r->atomic_next + RDMA_SOFT_RD_ATOM - n) % RDMA_SOFT_RD_ATOM;

        if (r->atomic[i].psn == psn) {
            return i;
        }
    }
    return -1;
}

static void rdma_soft_resp_atomic(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    RdmaResources *rm = sqp->soft->be.rm;
    bool cas = pkt->opcode == RDMA_OPC_COMPARE_SWAP;
    RDMA_SOFT_UNINIT RdmaSoftSgl remote;
    RDMA_SOFT_UNINIT RdmaSoftPkt ack;
    uint64_t orig;

    if (pkt->va & 7) {
        rdma_soft_nak(sqp, pkt->psn, RDMA_NAK_INV_REQ, RDMA_EVENT_QP_REQ_ERR);
        return;
    }
    if (!rdma_soft_resp_granted(sqp, pkt, pkt->va, pkt->rkey, 8,
                                RDMA_ACCESS_REMOTE_ATOMIC, &remote)) {
        return;
    }
    if (!rdma_soft_atomic(rm->pdev, &remote,
                          cas ? RDMA_WR_ATOMIC_CMP_AND_SWP :
                                RDMA_WR_ATOMIC_FETCH_AND_ADD,
                          cas ? pkt->compare : pkt->swap_add,
                          pkt->swap_add, &orig)) {
        rdma_soft_nak(sqp, pkt->psn, RDMA_NAK_REM_ACCESS,
                      RDMA_EVENT_QP_ACCESS_ERR);
        return;
    }
    sqp->resp.epsn = sqp->resp.ack_psn = (pkt->psn + 1) & RDMA_PSN_MASK;
    sqp->resp.msn = (sqp->resp.msn + 1) & RDMA_MSN_MASK;
    rdma_soft_resp_store(sqp);
    rdma_soft_atomic_keep(&sqp->resp, pkt->psn, orig);
    rdma_soft_resp_pkt(sqp, &ack, RDMA_OPC_ATOMIC_ACKNOWLEDGE,
                       RDMA_AETH_ACK | RDMA_AETH_CREDITS_INVALID, pkt->psn);
    ack.orig = orig;
    rdma_soft_xmit(sqp->soft, &ack);
}

/*
 * Does @pkt continue the message in progress, or start one when none is?
 * (IB 9.7.5.1.2: an opcode out of sequence is an invalid request.)
 */
static bool rdma_soft_resp_in_sequence(RdmaSoftResp *r,
                                       const RdmaSoftPkt *pkt)
{
    uint32_t want = pkt->mask & RDMA_PKT_SEND ? RDMA_MSG_SEND :
                    pkt->mask & RDMA_PKT_WRITE ? RDMA_MSG_WRITE : 0;

    if (pkt->mask & RDMA_PKT_FIRST) {
        return r->msg == RDMA_MSG_NONE;
    }
    return want && r->msg == want;
}

/*
 * A duplicate request (IB 9.7.5.1.1): its requester did not hear the
 * answer.  A SEND or WRITE is never executed again, only acknowledged (up
 * to the last SEND, WRITE or atomic executed); a READ is answered
 * again when it is (part of) a responder resource; an atomic gets the
 * result it had.  Anything else is dropped, and nothing NAKs: a frame
 * with a peer's address and an old PSN is no proof that the peer sent it.
 */
static void rdma_soft_resp_duplicate(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    RdmaSoftResp *r = &sqp->resp;
    RDMA_SOFT_UNINIT RdmaSoftSgl remote;
    RDMA_SOFT_UNINIT RdmaSoftPkt ack;
    const RdmaSoftReadRes *res;
    int i;

    sqp->soft->stats.duplicates++;
    trace_rdma_soft_drop(sqp->qp->qpn, pkt->opcode, "duplicate");
    if (pkt->mask & RDMA_PKT_READ) {
        res = rdma_soft_read_res_of(sqp, pkt);
        if (!res) {
            trace_rdma_soft_dup_read_drop(sqp->qp->qpn, pkt->psn, pkt->va,
                                          pkt->rkey, pkt->dma_len);
            return;
        }
        /* Its MR may be gone since: then there is nothing to answer. */
        if (pkt->dma_len &&
            !rdma_soft_remote_seg(sqp->soft->be.rm, sqp->qp, pkt->va,
                                  pkt->rkey, pkt->dma_len,
                                  RDMA_ACCESS_REMOTE_READ, &remote)) {
            trace_rdma_soft_drop(sqp->qp->qpn, pkt->opcode,
                                 "duplicate READ of an MR now gone");
            return;
        }
        rdma_soft_resp_answer(sqp, pkt, pkt->va, pkt->rkey, pkt->dma_len,
                              true);
    } else if (pkt->mask & RDMA_PKT_ATOMIC) {
        i = rdma_soft_atomic_find(r, pkt->psn);
        if (i >= 0) {
            rdma_soft_resp_pkt(sqp, &ack, RDMA_OPC_ATOMIC_ACKNOWLEDGE,
                               RDMA_AETH_ACK | RDMA_AETH_CREDITS_INVALID,
                               pkt->psn);
            ack.orig = r->atomic[i].orig;
            rdma_soft_xmit(sqp->soft, &ack);
        } else {
            /* Not one kept: older than those, or never executed. */
            trace_rdma_soft_drop(sqp->qp->qpn, pkt->opcode,
                                 "atomic result not kept");
        }
    } else {
        /*
         * Asked for or not: the ACK may be what was lost (rxe: C9-105).
         * Up to the last SEND, WRITE or atomic executed (see ack_psn).
         */
        rdma_soft_ack(sqp, (r->ack_psn - 1) & RDMA_PSN_MASK);
    }
}

/*
 * May @pkt, which arrives while a READ is being answered, come to
 * anything when its turn comes?  A request not ahead of what can be
 * waiting, with no more payload than the path MTU; a duplicate only when
 * it would be answered (rdma_soft_resp_duplicate()).
 */
static bool rdma_soft_resp_worth_answering(RdmaSoftQp *sqp,
                                           const RdmaSoftPkt *pkt)
{
    const RdmaSoftResp *r = &sqp->resp;
    int32_t d = rdma_psn_diff(pkt->psn, r->epsn);

    if (pkt->paylen > rdma_soft_pmtu(sqp->qp) ||
        d >= RDMA_SOFT_BACKLOG_MAX) {
        return false;
    }
    if (d >= 0) {
        return true;
    }
    if (pkt->mask & RDMA_PKT_READ) {
        return rdma_soft_read_res_of(sqp, pkt);
    }
    if (pkt->mask & RDMA_PKT_ATOMIC) {
        return rdma_soft_atomic_find(r, pkt->psn) >= 0;
    }
    return true;                    /* a SEND or WRITE: ACKed again */
}

/*
 * May the QP execute @pkt's operation at all (rxe: check_op_valid and
 * check_resource)?  Its access flags must allow remote WRITE, READ or
 * atomics, and a READ or atomic needs a responder resource
 * (max_dest_rd_atomic > 0); else the request is invalid (a class C
 * error, NAK invalid request, as rxe gives), not a remote access error:
 * no key was looked at.
 */
static bool rdma_soft_resp_op_valid(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    const RdmaQp *qp = sqp->qp;
    uint32_t need = pkt->mask & RDMA_PKT_WRITE ? RDMA_ACCESS_REMOTE_WRITE :
                    pkt->mask & RDMA_PKT_READ ? RDMA_ACCESS_REMOTE_READ :
                    pkt->mask & RDMA_PKT_ATOMIC ? RDMA_ACCESS_REMOTE_ATOMIC :
                    0;
    const char *why = NULL;

    if (need && !(qp->attr.qp_access_flags & need)) {
        why = "an operation the QP's access flags do not allow";
    } else if ((pkt->mask & (RDMA_PKT_READ | RDMA_PKT_ATOMIC)) &&
               !qp->attr.max_dest_rd_atomic) {
        why = "a READ or atomic with no responder resource";
    }
    if (why) {
        trace_rdma_soft_req_refused(qp->qpn, pkt->psn, pkt->opcode,
                                    pkt->paylen, pkt->dma_len, why);
        return false;
    }
    return true;
}

/*
 * The lengths of a request packet (rxe's check_length, after IB C9-92
 * and C9-94): a first or middle packet carries exactly the path MTU,
 * a last one at least a byte and at most the MTU, an only one at most the
 * MTU; a WRITE's packets add up to exactly its RETH length, and no
 * message is longer than max_msg_sz.
 */
static bool rdma_soft_resp_length_ok(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    const RdmaSoftResp *r = &sqp->resp;
    uint64_t pmtu = rdma_soft_pmtu(sqp->qp);
    bool first = pkt->mask & RDMA_PKT_FIRST;
    bool last = pkt->mask & RDMA_PKT_LAST;
    uint64_t left;
    const char *why = NULL;

    if (pkt->mask & RDMA_PKT_ATOMIC) {
        return true;
    }
    if (pkt->mask & RDMA_PKT_READ) {
        why = pkt->dma_len > RDMA_SOFT_MAX_MSG ? "READ longer than 2 GiB" :
              NULL;
    } else if (pkt->paylen > pmtu) {
        why = "payload longer than the path MTU";
    } else if (!last && pkt->paylen != pmtu) {
        why = "first or middle packet not of the path MTU";
    } else if (last && !first && !pkt->paylen) {
        why = "empty last packet";
    } else if (pkt->mask & RDMA_PKT_WRITE) {
        left = first ? pkt->dma_len : r->len - r->off;
        if (first && pkt->dma_len > RDMA_SOFT_MAX_MSG) {
            why = "WRITE longer than 2 GiB";
        } else if (pkt->paylen > left || (last && pkt->paylen != left)) {
            why = "WRITE packets not of its RETH length";
        }
    } else if ((first ? 0 : r->off) + pkt->paylen > RDMA_SOFT_MAX_MSG) {
        why = "SEND longer than 2 GiB";
    }
    if (why) {
        trace_rdma_soft_req_refused(sqp->qp->qpn, pkt->psn, pkt->opcode,
                                    pkt->paylen, pkt->dma_len, why);
        return false;
    }
    return true;
}

/* RC: the PSN check; true when @pkt is the one expected. */
static bool rdma_soft_resp_psn_ok(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    RdmaSoftResp *r = &sqp->resp;
    int32_t d = rdma_psn_diff(pkt->psn, r->epsn);

    if (d > 0) {
        /* A packet is missing: NAK once, until the requester goes back. */
        if (!r->nak_sent) {
            r->nak_sent = true;
            rdma_soft_nak(sqp, r->epsn, RDMA_NAK_PSN_SEQ_ERR,
                          RDMA_EVENT_NONE);
        }
        return false;
    }
    if (d < 0) {
        rdma_soft_resp_duplicate(sqp, pkt);
        return false;
    }
    r->nak_sent = false;
    return true;
}

static void rdma_soft_resp_take(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt)
{
    RdmaSoftResp *r = &sqp->resp;

    if (sqp->qp->type != RDMA_QPT_RC) {
        if (pkt->qkey != sqp->qp->attr.qkey) {
            trace_rdma_soft_ud_drop(pkt->src_qpn, sqp->qp->qpn, "Q_Key");
            return;
        }
        rdma_soft_resp_recv_data(sqp, pkt, false);
        return;
    }
    if (!rdma_soft_resp_psn_ok(sqp, pkt)) {
        return;
    }
    if (!rdma_soft_resp_in_sequence(r, pkt) ||
        !rdma_soft_resp_op_valid(sqp, pkt) ||
        !rdma_soft_resp_length_ok(sqp, pkt)) {
        rdma_soft_nak(sqp, pkt->psn, RDMA_NAK_INV_REQ, RDMA_EVENT_QP_REQ_ERR);
        return;
    }
    if (pkt->mask & RDMA_PKT_SEND) {
        rdma_soft_resp_recv_data(sqp, pkt, false);
    } else if (pkt->mask & RDMA_PKT_WRITE) {
        rdma_soft_resp_write(sqp, pkt);
    } else if (pkt->mask & RDMA_PKT_READ) {
        rdma_soft_resp_read(sqp, pkt);
    } else {
        rdma_soft_resp_atomic(sqp, pkt);
    }
}

/*
 * @sqp's QP stops receiving: with @complete (ERR) the receive WQE a
 * message in progress took completes flushed, else (RESET, destroy) it
 * is dropped, as is a READ being answered.
 */
void rdma_soft_resp_flush(RdmaSoftQp *sqp, bool complete)
{
    RdmaSoftResp *r = &sqp->resp;

    if (r->has_rwqe && complete) {
        RdmaWc wc = { .status = RDMA_WC_WR_FLUSH_ERR,
                      .opcode = RDMA_WC_RECV };

        r->has_rwqe = false;
        rdma_soft_complete_recv(sqp->soft->be.rm, sqp->qp, r->rwqe, &wc,
                                false);
    }
    r->has_rwqe = false;
    r->msg = RDMA_MSG_NONE;
    r->off = 0;
    r->read = false;
    r->due = false;
    timer_del(sqp->pace_timer);
    rdma_soft_backlog_clear(sqp);
}
