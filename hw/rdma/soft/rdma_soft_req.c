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
 * The front-end gives the requester a new WR only while its queue holds
 * fewer than rdma_soft_req_max_wrs() (qp->sq_stalled): between two QPs of
 * this device one, as the engine had before it spoke in packets; to a
 * peer on the link as many as the window has packets, so that the next
 * WRs go out while the first ones wait for their ACK.
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
bool rdma_soft_opcode_ok(const RdmaQp *qp, RdmaWrOpcode op)
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

/*
 * The most payload one packet of @qp carries: its path MTU on the link,
 * a step between two QPs of this device (see the top of the file).
 */
uint64_t rdma_soft_pmtu(const RdmaQp *qp)
{
    const RdmaSoftQp *sqp = qp->be;

    if (qp->type != RDMA_QPT_RC) {
        return RDMA_SOFT_UD_MAX;
    }
    if (!sqp->remote) {
        return RDMA_WR_STEP;
    }
    /* IB MTU codes 1 (256) to 5 (4096); the core takes no other. */
    return 128u << MIN(MAX(qp->attr.path_mtu, 1), 5);
}

/*
 * Where an RC QP's peer is: on the link unless its GID is one of this
 * device's.  Settled when the guest gives the QP its address vector.
 */
void rdma_soft_qp_locate(RdmaSoftQp *sqp, const uint8_t *dgid)
{
    sqp->remote = sqp->qp->type == RDMA_QPT_RC &&
                  !rdma_rm_gid_is_local(sqp->soft->be.rm, dgid);
}

/*
 * The GID RC QP @sqp sends from, and takes requests and responses for:
 * the one its address vector names.
 */
const uint8_t *rdma_soft_qp_sgid(const RdmaSoftQp *sqp)
{
    RdmaResources *rm = sqp->soft->be.rm;

    return rm->gids[MIN(sqp->qp->attr.ah.sgid_index,
                        rm->limits.gid_tbl_len - 1)].gid;
}

/* Address @pkt of RC QP @sqp to its peer (its address vector). */
void rdma_soft_qp_address(RdmaSoftQp *sqp, RdmaSoftPkt *pkt)
{
    const RdmaAh *ah = &sqp->qp->attr.ah;

    pkt->remote = sqp->remote;
    memcpy(pkt->sgid, rdma_soft_qp_sgid(sqp), 16);
    memcpy(pkt->dgid, ah->dgid, 16);
    memcpy(pkt->dmac, ah->dmac, 6);
    pkt->hop_limit = ah->hop_limit;
    pkt->tclass = ah->traffic_class;
    pkt->flow_label = ah->flow_label;
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

/* RDMA_SOFT_WIRE_WINDOW in packets of @sqp: an even number, at least 2. */
static uint32_t rdma_soft_wire_window_full(RdmaSoftQp *sqp)
{
    return MAX(RDMA_SOFT_WIRE_WINDOW / rdma_soft_pmtu(sqp->qp), 2) & ~1u;
}

/*
 * @sqp's share of RDMA_SOFT_WIRE_WINDOW in packets, at least one: with
 * two each, 64 busy QPs (ib_write_bw -q 64) kept 128 packets on the link,
 * more than a receiving socket holds.  It changes as QPs become busy or
 * idle; a QP over its share sends nothing new until ACKs bring it back
 * under.  RDMA READs keep the whole window: they are asked in pieces cut
 * at fixed PSNs, which must not move while a READ is outstanding
 * (rdma_soft_req_build()).
 */
static uint32_t rdma_soft_wire_window(RdmaSoftQp *sqp)
{
    uint32_t share = MAX(RDMA_SOFT_WIRE_WINDOW / MAX(sqp->soft->nbusy, 1),
                         RDMA_SOFT_MIN_SHARE);

    return MAX(share / rdma_soft_pmtu(sqp->qp), 1);
}

/*
 * The packets @sqp may have unacknowledged from its oldest one: its
 * share, or less since a loss (RdmaSoftReq.cwnd), less the first copies
 * a go-back on a sequence NAK left on the way (RdmaSoftReq.stale), which
 * the responder's socket holds ahead of what is sent again.  Both at once
 * overran it: ib_write_bw between two guests through a relay dropping 3%
 * of the frames lost more in the receiving QEMU's socket (9071) than the
 * relay dropped (5370), each a go-back more.  At least a quarter of it
 * goes again at once (a socket that holds a share holds a quarter more:
 * Linux's default buffer, about 90 frames, against 64), and at least one
 * packet.
 */
static uint32_t rdma_soft_req_room(RdmaSoftQp *sqp)
{
    uint32_t share = rdma_soft_wire_window(sqp);

    if (sqp->req.cwnd) {
        share = MIN(share, sqp->req.cwnd);
    }
    return MAX(share - MIN(sqp->req.stale, share), MAX(share / 4, 1));
}

/*
 * A packet of @sqp at @psn was lost (a sequence NAK or a timeout): the
 * link delivers less than the window, and the QP keeps half of what it
 * had, at least an eighth of the window, until clean ACKs give it back
 * (rdma_soft_req_acked()).  Once per window of packets: the losses of
 * the packets sent before the last halving are the same episode (TCP's
 * NewReno, RFC 6582, halves once per window too).  At 3% loss a go-back
 * sends most of the window again per lost packet, and a smaller window
 * sends less again: ib_write_bw between two guests through the relay
 * (tests/bench/loss-bench.sh, medians of three runs of 256 MiB) went
 * from 12.98 to 16.55 MB/s at 3%, from 24.68 to 26.61 at 1% and stayed
 * at 31 at 0.5% (and the lossless figure does not change: nothing is
 * lost).
 */
void rdma_soft_req_lost(RdmaSoftQp *sqp, uint32_t psn)
{
    RdmaSoftReq *req = &sqp->req;
    uint32_t full = rdma_soft_wire_window_full(sqp);
    uint32_t was = req->cwnd ? req->cwnd : full;

    if (req->cwnd && rdma_psn_diff(psn, req->recover_psn) < 0) {
        return;                     /* sent before the last halving */
    }
    req->cwnd = MAX(was / 2, MAX(full / 8, 2));
    req->cwnd_acked = 0;
    req->recover_psn = req->sent_psn;
    trace_rdma_soft_cwnd(sqp->qp->qpn, psn, was, req->cwnd);
}

/*
 * @n more packets of @sqp were acknowledged: a window made smaller by a
 * loss grows by a packet for every RDMA_SOFT_CWND_GROW of them, until it
 * is the whole window again.
 */
void rdma_soft_req_acked(RdmaSoftQp *sqp, uint32_t n)
{
    RdmaSoftReq *req = &sqp->req;

    if (!req->cwnd) {
        return;
    }
    req->cwnd_acked += n;
    req->cwnd += req->cwnd_acked / RDMA_SOFT_CWND_GROW;
    req->cwnd_acked %= RDMA_SOFT_CWND_GROW;
    if (req->cwnd >= rdma_soft_wire_window_full(sqp)) {
        req->cwnd = 0;
    }
}

/*
 * Packets @sqp has on the link unacknowledged: from its oldest WR's first
 * unacknowledged PSN to one past the highest it sent (also those a
 * go-back is sending again: the first copies may still be on the way).
 */
static uint32_t rdma_soft_req_outstanding(RdmaSoftQp *sqp)
{
    RdmaSoftWqe *oldest = QTAILQ_FIRST(&sqp->req.wqes);

    if (!sqp->remote || sqp->qp->type != RDMA_QPT_RC || !oldest ||
        !rdma_soft_wqe_started(oldest)) {
        return 0;
    }
    return MAX(rdma_psn_diff(sqp->req.sent_psn, oldest->ack_psn), 0);
}

/* Count @sqp's packets on the link in the device's sum again. */
void rdma_soft_req_account(RdmaSoftQp *sqp)
{
    RdmaSoft *soft = sqp->soft;
    uint32_t n = rdma_soft_req_outstanding(sqp);
    bool less = n < sqp->inflight;

    soft->inflight = soft->inflight - sqp->inflight + n;
    sqp->inflight = n;
    if (less) {
        rdma_soft_window_kick(soft);
    }
}

/*
 * The device's window has room for a share: the QP that has waited
 * longest for it takes its turn (from the run bottom half; if it sends
 * nothing, the end of that pass gives the turn to the next one).  Not
 * for less than a share: with a turn per packet of room, 64 QPs (-q 64)
 * each sent one packet per turn and asked an ACK for it.
 */
void rdma_soft_window_kick(RdmaSoft *soft)
{
    RdmaSoftQp *sqp = QTAILQ_FIRST(&soft->wait_list);

    if (sqp && soft->inflight + rdma_soft_wire_window(sqp) <=
               rdma_soft_wire_window_full(sqp)) {
        rdma_soft_window_unwait(sqp);
        sqp->kicked = true;
        sqp->req.due = true;
        rdma_soft_qp_due(sqp);
    }
}

/* Off the device window's wait list (its turn came, or the QP goes). */
void rdma_soft_window_unwait(RdmaSoftQp *sqp)
{
    if (sqp->waiting) {
        sqp->waiting = false;
        QTAILQ_REMOVE(&sqp->soft->wait_list, sqp, wait_next);
    }
}

/*
 * WRs @sqp's QP may have outstanding.  On the loopback one: it is
 * delivered at once.  To a peer on the link as many as the window has
 * packets (each WR takes at least one) and the send queue has slots, so
 * that the next WRs go out while the first ones wait for their ACK.
 */
static uint32_t rdma_soft_req_max_wrs(RdmaSoftQp *sqp)
{
    if (!sqp->remote || sqp->qp->type != RDMA_QPT_RC) {
        return 1;
    }
    return MIN(MAX(sqp->qp->cap.max_send_wr, 1), rdma_soft_wire_window(sqp));
}

/*
 * The one place that says whether the front-end may give @sqp's QP a new
 * WR: while fewer than rdma_soft_req_max_wrs() are outstanding.  With
 * @kick, a QP the front-end saw stalled is told it can send again.
 */
void rdma_soft_req_update(RdmaSoftQp *sqp, bool kick)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaQp *qp = sqp->qp;
    bool busy = sqp->req.nwqe > 0;
    bool stalled = sqp->req.nwqe >= rdma_soft_req_max_wrs(sqp);
    bool was_stalled = qp->sq_stalled;

    if (sqp->busy != busy) {
        sqp->busy = busy;
        sqp->soft->nbusy += busy ? 1 : -1;
    }
    rdma_soft_req_account(sqp);
    if (was_stalled != stalled) {
        /* Written only when it changes: the peer's vCPU reads this QP. */
        qp->sq_stalled = stalled;
    }
    if (kick && was_stalled && !stalled &&
        qp->attr.qp_state == RDMA_QPS_RTS) {
        rm->fe->kick_send(rm->fe_opaque, qp);
    }
}

/*
 * May @w, not started, start now?  A fenced WR waits for every WR before
 * it; an RDMA READ or atomic while max_rd_atomic of them (at least one)
 * are outstanding before it: the QP's initiator depth, which the peer's
 * responder resources were sized for.
 */
static bool rdma_soft_req_may_start(RdmaSoftQp *sqp, RdmaSoftWqe *w)
{
    RdmaSoftWqe *o;
    uint32_t reads = 0;

    if (w == QTAILQ_FIRST(&sqp->req.wqes)) {
        return true;
    }
    if (w->wr.flags & RDMA_SEND_FENCE) {
        return false;
    }
    if (w->wr.opcode != RDMA_WR_RDMA_READ &&
        !rdma_soft_is_atomic(w->wr.opcode)) {
        return true;
    }
    QTAILQ_FOREACH(o, &sqp->req.wqes, next) {
        if (o == w) {
            break;
        }
        reads += o->wr.opcode == RDMA_WR_RDMA_READ ||
                 rdma_soft_is_atomic(o->wr.opcode);
    }
    return reads < MAX(sqp->qp->attr.max_rd_atomic, 1);
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
        (qp->type != RDMA_QPT_RC &&
         local.total > 128u << rdma_soft_port_ib_mtu(sqp->soft)) ||
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
    w->first_psn = w->next_psn = w->ack_psn = sqp->req.psn;
    w->last_psn = (w->first_psn + npkts - 1) & RDMA_PSN_MASK;
    sqp->req.psn = (w->last_psn + 1) & RDMA_PSN_MASK;
    if (w == QTAILQ_FIRST(&sqp->req.wqes)) {
        sqp->req.retry_left = qp->attr.retry_cnt;
    }
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

/*
 * Within the window over the device, for a packet @own packets past
 * @sqp's first unacknowledged one?  The window bounds the sum of all QPs'
 * packets on the link (QPs that became busy one after another each took
 * the share of their moment: 64 packets times the harmonic number of the
 * QPs at once), and QPs the window stopped go first, in turn: a QP that
 * has not just had its turn waits behind them (with more busy QPs than
 * shares, those that had packets on the link kept the window between
 * them, ACK after ACK).  A packet sent again after a go-back is on the
 * window already: it goes without waiting (the lost packets of a QP that
 * waited behind the others kept the window full, and it ran out of
 * retries).
 */
static bool rdma_soft_req_device_open(RdmaSoftQp *sqp, uint32_t last,
                                      int32_t own)
{
    RdmaSoft *soft = sqp->soft;

    if (rdma_psn_diff(last, sqp->req.sent_psn) < 0) {
        return true;                /* sent again: counted already */
    }
    if (!sqp->kicked && !QTAILQ_EMPTY(&soft->wait_list)) {
        return false;
    }
    return soft->inflight - sqp->inflight + own <
           rdma_soft_wire_window_full(sqp);
}

/*
 * The window is closed for a packet whose PSNs end at @last: is it the
 * device's (@sqp's turn is over: what it sent must ask for an ACK) and
 * not its own share (whose ACK opens it again)?
 */
static bool rdma_soft_req_share_open(RdmaSoftQp *sqp, uint32_t last)
{
    RdmaSoftWqe *oldest = QTAILQ_FIRST(&sqp->req.wqes);

    return oldest && rdma_psn_diff(last, oldest->ack_psn) <
                     (int32_t)rdma_soft_req_room(sqp);
}

/*
 * The window stopped @sqp before a packet whose PSNs end at @last (not
 * an RDMA READ request: those have the whole window): its turn, if it
 * had one, is over; if it was the device's window and not its share, it
 * waits for a turn.
 */
static void rdma_soft_req_stopped(RdmaSoftQp *sqp, uint32_t last, bool read)
{
    RdmaSoftWqe *oldest = QTAILQ_FIRST(&sqp->req.wqes);

    sqp->kicked = false;
    if (read || sqp->waiting || !oldest || !rdma_soft_wqe_started(oldest)) {
        return;
    }
    if (rdma_soft_req_share_open(sqp, last)) {
        sqp->waiting = true;
        QTAILQ_INSERT_TAIL(&sqp->soft->wait_list, sqp, wait_next);
    }
}

/*
 * May @sqp send a packet whose PSNs end at @last?  On the link only
 * within its window from its oldest unacknowledged PSN: its share, or
 * for an RDMA READ request (@read) the whole window.
 */
static bool rdma_soft_req_window_open(RdmaSoftQp *sqp, uint32_t last,
                                      bool read)
{
    RdmaSoftWqe *oldest = QTAILQ_FIRST(&sqp->req.wqes);
    int32_t own;

    if (!sqp->remote || sqp->qp->type != RDMA_QPT_RC || !oldest ||
        !rdma_soft_wqe_started(oldest)) {
        return true;
    }
    if (read) {
        return rdma_psn_diff(last, oldest->ack_psn) <
               (int32_t)rdma_soft_wire_window_full(sqp);
    }
    own = rdma_psn_diff(last, oldest->ack_psn);
    return own < (int32_t)rdma_soft_req_room(sqp) &&
           rdma_soft_req_device_open(sqp, last, own);
}

/*
 * Is an ACK on its way for a packet @sqp sent before @psn and not yet
 * acknowledged?  Then the packet that fills the window need not ask:
 * that ACK opens it, and the next packet to fill it asks.  Asking at
 * every fill made the ACKs dense: with many QPs busy the device's
 * window is full nearly all the time, an ACK for two packets opened two
 * places, the second filled the window again and asked, and sixteen QPs
 * (ib_write_bw -q 16) asked for an ACK with 0.7 of their packets, the
 * ACKs costing the two QEMUs nearly as much as the data.  After a
 * go-back the packets before @psn went again without asking, and an ACK
 * asked of their first sending may be lost: only an asked packet before
 * @psn counts.
 */
static bool rdma_soft_req_ack_coming(RdmaSoftQp *sqp, uint32_t psn)
{
    RdmaSoftWqe *oldest = QTAILQ_FIRST(&sqp->req.wqes);
    uint32_t asked = sqp->req.asked_psn;

    return oldest && rdma_psn_diff(asked, oldest->ack_psn) >= 0 &&
           rdma_psn_diff(asked, psn) < 0;
}

/*
 * The window of @sqp is closed for @pkt.  Normally a packet that asked
 * for an ACK is unacknowledged, and its ACK will open the window.  But a
 * QP's share shrinks when others become busy, and what it sent under the
 * wider one may not have asked: then @pkt goes over the window, asking,
 * rather than the QP waiting for its retransmission timer.  Not an RDMA
 * READ request, whose responses would be more over the window.
 */
static bool rdma_soft_req_may_ask(RdmaSoftQp *sqp, RdmaSoftPkt *pkt)
{
    RdmaSoftWqe *oldest = QTAILQ_FIRST(&sqp->req.wqes);

    if (pkt->opcode == RDMA_OPC_READ_REQUEST || !oldest ||
        pkt->psn == oldest->ack_psn ||
        rdma_psn_diff(sqp->req.asked_psn, oldest->ack_psn) >= 0) {
        return false;               /* nothing to ask for, or asked */
    }
    trace_rdma_soft_ask_over_window(sqp->qp->qpn, pkt->psn, oldest->ack_psn,
                                    rdma_soft_wire_window(sqp));
    pkt->ackreq = true;
    return true;
}

/*
 * The packet of @w at @psn; false if @w has none, which
 * rdma_soft_wqe_start() (or the check of a migrated WR) should have
 * refused: the WR fails instead of sending something else.
 */
static bool rdma_soft_req_build(RdmaSoftQp *sqp, RdmaSoftWqe *w,
                                uint32_t psn, RdmaSoftPkt *pkt)
{
    RdmaResources *rm = sqp->soft->be.rm;
    RdmaQp *qp = sqp->qp;
    const RdmaSendWr *wr = &w->wr;
    uint64_t pmtu = rdma_soft_pmtu(qp);
    uint32_t idx = (psn - w->first_psn) & RDMA_PSN_MASK;
    uint64_t off = (uint64_t)idx * pmtu;
    bool ud = qp->type != RDMA_QPT_RC;
    bool first = idx == 0, last;
    int opcode;

    memset(pkt, 0, sizeof(*pkt));
    pkt->psn = psn;
    pkt->src_qpn = qp->qpn;
    if (wr->opcode == RDMA_WR_RDMA_READ) {
        /*
         * One request for what is left; its responses take the PSNs.  On
         * the link the READ is asked in pieces of half a window, cut at
         * fixed PSNs: a request again from a PSN in a piece (responses
         * were lost) must ask a part of what was asked before, or the
         * responder (Linux rxe) drops it as a duplicate it cannot match.
         */
        pkt->opcode = RDMA_OPC_READ_REQUEST;
        pkt->va = wr->remote_addr + off;
        pkt->rkey = wr->rkey;
        pkt->dma_len = w->len - MIN(off, w->len);
        if (sqp->remote) {
            uint32_t piece = rdma_soft_wire_window_full(sqp) / 2;

            pkt->dma_len = MIN(pkt->dma_len,
                               (uint64_t)(piece - idx % piece) * pmtu);
        }
        last = true;
    } else if (rdma_soft_is_atomic(wr->opcode)) {
        pkt->opcode = wr->opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ?
                      RDMA_OPC_COMPARE_SWAP : RDMA_OPC_FETCH_ADD;
        pkt->va = wr->remote_addr;
        pkt->rkey = wr->rkey;
        pkt->swap_add = wr->opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ?
                        wr->swap : wr->compare_add;
        pkt->compare = wr->compare_add;
        last = true;
    } else {
        pkt->paylen = MIN(w->len - off, pmtu);
        last = off + pkt->paylen == w->len;
        opcode = rdma_soft_req_opcode(ud ? RDMA_OPC_UD : RDMA_OPC_RC,
                                      wr->opcode, first, last);
        if (opcode < 0) {
            return false;
        }
        pkt->opcode = opcode;
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
        memcpy(pkt->sgid, rm->gids[MIN(wr->sgid_index,
                                       rm->limits.gid_tbl_len - 1)].gid, 16);
        memcpy(pkt->dgid, wr->dgid, 16);
        pkt->remote = !rdma_rm_gid_is_local(rm, wr->dgid);
        memcpy(pkt->dmac, wr->dmac, 6);
        pkt->hop_limit = wr->hop_limit;
        pkt->tclass = wr->traffic_class;
        pkt->flow_label = wr->flow_label;
    } else {
        uint32_t half = MAX(rdma_soft_req_room(sqp) / 2, 1);

        pkt->dest_qpn = qp->attr.dest_qp_num;
        /*
         * On the link, one busy QP asks for an ACK every half window (of
         * what a loss left of it too), so that the window opens before
         * it is spent.  With others busy
         * their packets fill the link while it waits for its ACK, and it
         * asks only with the packet that fills the window (a phase of
         * its own: asking at both, sixteen QPs asked every second
         * packet).
         */
        pkt->ackreq = last || (sqp->remote && sqp->soft->nbusy == 1 &&
                               (idx + 1) % half == 0);
        rdma_soft_qp_address(sqp, pkt);
    }
    return true;
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
    uint32_t npkts;
    bool read, fresh;

    if (req->running || req->rnr_wait) {
        return;
    }
    req->running = true;
    req->due = false;
    while ((w = rdma_soft_req_next(sqp))) {
        if (!rdma_soft_wqe_started(w) && !rdma_soft_req_may_start(sqp, w)) {
            break;                  /* a completion lets it start */
        }
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
        if (!rdma_soft_req_build(sqp, w, w->next_psn, &pkt)) {
            rdma_soft_fail_wqe(sqp, w, RDMA_WC_LOC_QP_OP_ERR);
            break;
        }
        read = pkt.opcode == RDMA_OPC_READ_REQUEST;
        npkts = read ? MAX(DIV_ROUND_UP(pkt.dma_len,
                                        rdma_soft_pmtu(sqp->qp)), 1) : 1;
        if (!rdma_soft_req_window_open(sqp, pkt.psn + npkts - 1, read) &&
            !rdma_soft_req_may_ask(sqp, &pkt)) {
            /* an ACK or a response opens it, or a turn comes */
            rdma_soft_req_stopped(sqp, pkt.psn + npkts - 1, read);
            break;
        }
        if (!rdma_soft_req_window_open(sqp, pkt.psn + npkts, false) &&
            (!rdma_soft_req_ack_coming(sqp, pkt.psn) ||
             rdma_soft_req_share_open(sqp, pkt.psn + npkts))) {
            pkt.ackreq = true;      /* it fills the window */
        }
        fresh = rdma_psn_diff(pkt.psn, req->sent_psn) >= 0;
        w->next_psn = (w->next_psn + npkts) & RDMA_PSN_MASK;
        if (rdma_psn_diff(w->next_psn, req->sent_psn) > 0) {
            req->sent_psn = w->next_psn;
        }
        if (pkt.ackreq) {
            req->asked_psn = (pkt.psn + npkts - 1) & RDMA_PSN_MASK;
            if (fresh && pkt.remote && req->rtt_sent_ns < 0) {
                req->rtt_sent_ns = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
                req->rtt_psn = req->asked_psn;
            }
        }
        rdma_soft_xmit(sqp->soft, &pkt);
        rdma_soft_req_account(sqp);
        if (pkt.remote && sqp->qp->type == RDMA_QPT_RC &&
            !timer_pending(req->retry_timer)) {
            rdma_soft_retry_restart(sqp, false);
        }
        if (sqp->qp->type != RDMA_QPT_RC && rdma_soft_wqe_at(sqp, pkt.psn)) {
            /* Unreliable: done once it is sent. */
            rdma_soft_complete_wqe(sqp, w, RDMA_WC_SUCCESS);
        }
        if (rdma_soft_req_next(sqp) && !req->rnr_wait) {
            req->due = true;
            rdma_soft_qp_due(sqp);
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
    w->first_psn = w->next_psn = w->ack_psn = 0;
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
    timer_del(req->retry_timer);
    req->rnr_wait = false;
    req->timed_out = false;
    req->gap_retry = false;
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
    rdma_soft_qp_due(sqp);
}

/*
 * The local ACK timeout of @qp: 4.096 us x 2^timeout (IB 9.7.6.1.3);
 * 0 means none (wait forever).
 */
static int64_t rdma_soft_ack_timeout_ns(const RdmaQp *qp)
{
    uint8_t t = qp->attr.timeout & 31;

    return t ? 4096ll << t : 0;
}

/*
 * When the tail probe goes off after the last answer: a few round trips
 * (RFC 6298's 2.3 without its one-second floor, at least twice the
 * smoothed round trip, at least RDMA_SOFT_PROBE_MIN_NS), or 0 for no
 * probe: no round trip measured yet, not well before the timeout of
 * @timeout_ns, or an RDMA READ or atomic first in line.  A READ's answer
 * comes at the pace of the peer's responder, with pauses longer than a
 * round trip (Linux rxe under TCG): a probe there asked the READ again
 * while its first answer was still coming, and NFS over RDMA writes from
 * an rxe client to a pvrdma server stalled; its gaps and timeouts find
 * lost responses as before.
 */
static int64_t rdma_soft_probe_ns(RdmaSoftQp *sqp, int64_t timeout_ns)
{
    const RdmaSoftReq *req = &sqp->req;
    RdmaSoftWqe *w = QTAILQ_FIRST(&req->wqes);
    int64_t pto;

    if (!req->srtt_ns || !w || w->wr.opcode == RDMA_WR_RDMA_READ ||
        rdma_soft_is_atomic(w->wr.opcode)) {
        return 0;
    }
    pto = MAX(MAX(2 * req->srtt_ns, req->srtt_ns + 4 * req->rttvar_ns),
              RDMA_SOFT_PROBE_MIN_NS);
    return pto <= timeout_ns / 2 ? pto : 0;
}

/*
 * Packets of @sqp are on the link unacknowledged: (re)start the
 * retransmission timer, or stop it when nothing is outstanding.  With
 * @progress an acknowledgement moved on: the retries start over.
 */
void rdma_soft_retry_restart(RdmaSoftQp *sqp, bool progress)
{
    RdmaSoftReq *req = &sqp->req;
    RdmaSoftWqe *w = QTAILQ_FIRST(&req->wqes);
    int64_t ns = rdma_soft_ack_timeout_ns(sqp->qp), now, pto;

    if (progress) {
        req->retry_left = sqp->qp->attr.retry_cnt;
        req->gap_retry = false;
        req->probed = false;
        if (!w || !rdma_soft_wqe_started(w) ||
            rdma_psn_diff(w->ack_psn, req->stale_psn) > 0) {
            req->stale = 0;         /* the responder got past them */
        }
        rdma_soft_req_account(sqp);
    }
    req->probe_due = false;
    /*
     * Nothing on the link (a WR's next packets wait for the window, say
     * for a turn behind other QPs): nothing to time out.  The timer
     * starts again with the next packet sent.
     */
    if (!sqp->remote || !ns || !w || !rdma_soft_wqe_started(w) ||
        req->rnr_wait || !rdma_soft_req_outstanding(sqp)) {
        timer_del(req->retry_timer);
        return;
    }
    now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    req->timeout_at = now + ns;
    pto = req->probed ? 0 : rdma_soft_probe_ns(sqp, ns);
    req->probe_due = pto != 0;
    timer_mod(req->retry_timer, pto ? now + pto : req->timeout_at);
}

/*
 * An answer (an ACK, a READ response, an atomic's) up to @psn came: a
 * round-trip sample if it covers the packet being timed (RFC 6298 2.3).
 */
void rdma_soft_rtt_answer(RdmaSoftQp *sqp, uint32_t psn)
{
    RdmaSoftReq *req = &sqp->req;
    int64_t r;

    if (req->rtt_sent_ns < 0 || rdma_psn_diff(psn, req->rtt_psn) < 0) {
        return;
    }
    r = MAX(qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) - req->rtt_sent_ns, 1);
    req->rtt_sent_ns = -1;
    if (!req->srtt_ns) {
        req->srtt_ns = r;
        req->rttvar_ns = r / 2;
    } else {
        req->rttvar_ns = (3 * req->rttvar_ns + ABS(req->srtt_ns - r)) / 4;
        req->srtt_ns = (7 * req->srtt_ns + r) / 8;
    }
}

/*
 * @w's packet at @psn once more, asking for an ACK, over the window; its
 * payload is read at sending, as any packet's is (rdma_soft_payload_sgl()).
 */
static void rdma_soft_req_resend_one(RdmaSoftQp *sqp, RdmaSoftWqe *w,
                                     uint32_t psn)
{
    RDMA_SOFT_UNINIT RdmaSoftPkt pkt;

    if (rdma_soft_req_build(sqp, w, psn, &pkt)) {
        pkt.ackreq = true;
        rdma_soft_xmit(sqp->soft, &pkt);
    }
}

/*
 * The tail probe: nothing came back for a few round trips.  Two packets
 * go again, each asking for an ACK: the first unacknowledged one and the
 * last one sent.  Not everything, as a timeout's go back N does: most
 * probes under TCG find nothing lost (the peer's QEMU did not run for a
 * while, its answers were on the way), and sending the window again
 * overran the peer's socket, which then lost frames for real.  The
 * answers say what a go-back needs:
 *  - nothing lost, or only ACKs: both are duplicates, and the ACK of the
 *    last one acknowledges everything;
 *  - the tail lost: the first is a duplicate, whose ACK says how far the
 *    responder got; the last is ahead of it, and it NAKs the first
 *    missing PSN (a sequence error), from which the requester goes back;
 *  - the first one lost, and the NAK of those after it too (a responder
 *    that NAKed says nothing until that PSN comes, rxe's too): the first
 *    is the one it waits for, and the last is NAKed.
 * The last is not sent when it is an RDMA READ or atomic request (asked
 * again, a READ is answered again in full).  Spends none of retry_cnt
 * (IB 9.7.6.1.3 counts timeouts; a requester may send an unacknowledged
 * packet again at any time, and a duplicate costs the responder an ACK).
 */
static void rdma_soft_req_probe(RdmaSoftQp *sqp)
{
    RdmaSoftReq *req = &sqp->req;
    RdmaSoftWqe *w = QTAILQ_FIRST(&req->wqes), *lw;
    uint32_t last = (req->sent_psn - 1) & RDMA_PSN_MASK;

    if (!w || !rdma_soft_wqe_started(w) ||
        rdma_psn_diff(req->sent_psn, w->ack_psn) <= 0) {
        return;
    }
    trace_rdma_soft_probe(sqp->qp->qpn, w->ack_psn, last,
                          req->srtt_ns / 1000);
    sqp->soft->stats.retransmits++;
    req->rtt_sent_ns = -1;          /* an answer may be the first copy's */
    rdma_soft_req_resend_one(sqp, w, w->ack_psn);
    lw = rdma_soft_wqe_at(sqp, last);
    if (last != w->ack_psn && lw && rdma_soft_wqe_started(lw) &&
        lw->wr.opcode != RDMA_WR_RDMA_READ &&
        !rdma_soft_is_atomic(lw->wr.opcode)) {
        rdma_soft_req_resend_one(sqp, lw, last);
        req->asked_psn = last;
    }
}

/*
 * The retransmission timer went off: the probe before the timeout, or
 * the timeout (rdma_soft_comp_timeout()).  True if it was the probe.
 */
bool rdma_soft_req_timer_probe(RdmaSoftQp *sqp)
{
    RdmaSoftReq *req = &sqp->req;

    if (!req->probe_due) {
        req->probed = false;        /* the next period may probe again */
        return false;
    }
    req->probe_due = false;
    req->probed = true;
    timer_mod(req->retry_timer, req->timeout_at);
    rdma_soft_req_probe(sqp);
    return true;
}

/*
 * The started WRs send their packets again from @psn on (those of a WR
 * before it stay sent); true if that is more than they had left.
 */
bool rdma_soft_req_rewind(RdmaSoftQp *sqp, uint32_t psn)
{
    RdmaSoftWqe *w;
    bool again = false;

    QTAILQ_FOREACH(w, &sqp->req.wqes, next) {
        uint32_t from;

        if (!rdma_soft_wqe_started(w)) {
            break;
        }
        if (rdma_psn_diff(w->last_psn, psn) < 0) {
            continue;
        }
        from = rdma_psn_diff(psn, w->first_psn) > 0 ? psn : w->first_psn;
        if (w->next_psn != from) {
            again = true;
            trace_rdma_soft_go_back(sqp->qp->qpn, w->next_psn, from);
        }
        w->next_psn = from;
    }
    if (again) {
        sqp->req.rtt_sent_ns = -1;  /* an answer may be the first copy's */
    }
    return again;
}

/* Send again from @psn on: go back N (IB 9.7.4.1.4, 9.7.5.1.3). */
void rdma_soft_req_go_back(RdmaSoftQp *sqp, uint32_t psn)
{
    if (rdma_soft_req_rewind(sqp, psn)) {
        sqp->soft->stats.retransmits++;
    }
    sqp->req.due = true;
    rdma_soft_qp_due(sqp);
}

/*
 * A sequence NAK: the responder missed @psn, and took the packet after
 * it.  Send again from @psn on, counting the first copies of the packets
 * sent after that one as still on the way (rdma_soft_req_room()).
 */
void rdma_soft_req_nak_back(RdmaSoftQp *sqp, uint32_t psn)
{
    RdmaSoftReq *req = &sqp->req;

    req->stale = MAX(rdma_psn_diff(req->sent_psn, psn) - 2, 0);
    req->stale_psn = psn;
    trace_rdma_soft_go_back_stale(sqp->qp->qpn, psn, req->stale);
    rdma_soft_req_lost(sqp, psn);
    rdma_soft_req_go_back(sqp, psn);
}

/* An acknowledgement or a response moved the window on: send on. */
void rdma_soft_req_kick(RdmaSoftQp *sqp)
{
    if (sqp->remote && rdma_soft_req_next(sqp) && !sqp->req.rnr_wait) {
        sqp->req.due = true;
        rdma_soft_qp_due(sqp);
    }
}

/* Like the RNR timer: the bottom half handles it, under the guard. */
void rdma_soft_retry_timer(void *opaque)
{
    RdmaSoftQp *sqp = opaque;

    sqp->req.timed_out = true;
    rdma_soft_qp_due(sqp);
}
