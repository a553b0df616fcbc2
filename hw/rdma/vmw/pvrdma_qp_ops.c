/*
 * VMware PVRDMA front-end: the data path in guest memory.
 *
 * Doorbells, WQE fetch and parsing, CQE write-back, CQ notifications and
 * asynchronous events.  A WQE is read from the guest's ring once into a
 * local buffer, its ring slot is released, and only the parsed copy is
 * used from then on; a bad WQE is consumed and completed with an error
 * status, so the ring always makes progress (CVE-2018-20124, -20216).
 * WQEs, SGEs, CQEs and events are little-endian guest layouts: each field
 * is converted here, as it is parsed or written, and the core and the
 * backends see host-order values only.
 *
 * Threading: doorbells run in the vCPU thread that wrote them, under the
 * BQL.  Each doorbell and each bottom-half pass is an entry point
 * (rdma_rm.h) with one work budget for the whole device (RDMA_ENTRY_WQES
 * WQEs, RDMA_ENTRY_BYTES bytes); what is left goes to a bottom half in the
 * main loop (also under the BQL), so a vCPU never does unbounded work (one
 * WR is done in one go: at most max_msg_sz, 2 GiB).  Flushes do at most one
 * ring's worth of WQEs per call: the guest, or the device's own writes when
 * a hostile guest lays rings over each other, can keep a ring full.  The
 * backend completes WRs synchronously or from main-loop timers; nothing
 * here runs outside the BQL.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/main-loop.h"
#include "system/runstate.h"
#include "pvrdma.h"
#include "trace.h"

#define PVRDMA_WQE_MAX      (sizeof(PvrdmaSqWqeHdr) + \
                             RDMA_MAX_SGE * sizeof(PvrdmaSge))

/* Rings of the objects (page 0: ring state; see pvrdma_abi.h) */

static bool pvrdma_sq_ring(PvrdmaState *s, RdmaQp *qp, PvrdmaRingMap *r)
{
    return pvrdma_ring_init(r, PCI_DEVICE(s),
                            qp->ring.pages[0] + offsetof(PvrdmaRingState, tx),
                            qp->ring.pages + 1, qp->send_pages,
                            qp->cap.max_send_wr, qp->send_wqe_size);
}

static bool pvrdma_rq_ring(PvrdmaState *s, RdmaQp *qp, PvrdmaRingMap *r)
{
    return pvrdma_ring_init(r, PCI_DEVICE(s),
                            qp->ring.pages[0] + offsetof(PvrdmaRingState, rx),
                            qp->ring.pages + 1 + qp->send_pages,
                            qp->ring.npages - 1 - qp->send_pages,
                            qp->cap.max_recv_wr, qp->recv_wqe_size);
}

static bool pvrdma_srq_ring(PvrdmaState *s, RdmaSrq *srq, PvrdmaRingMap *r)
{
    return pvrdma_ring_init(r, PCI_DEVICE(s),
                            srq->ring.pages[0] + offsetof(PvrdmaRingState, rx),
                            srq->ring.pages + 1, srq->ring.npages - 1,
                            srq->max_wr, srq->wqe_size);
}

static bool pvrdma_cq_ring(PvrdmaState *s, RdmaCq *cq, PvrdmaRingMap *r)
{
    return pvrdma_ring_init(r, PCI_DEVICE(s),
                            cq->ring.pages[0] + offsetof(PvrdmaRingState, rx),
                            cq->ring.pages + 1, cq->ring.npages - 1, cq->cqe,
                            sizeof(PvrdmaCqe));
}

/* Events and completions */

static void pvrdma_event(void *opaque, RdmaEvent ev, uint32_t handle)
{
    PvrdmaState *s = opaque;
    PvrdmaEqe eqe = { .type = cpu_to_le32(ev), .info = cpu_to_le32(handle) };
    int ret;

    if (!s->dsr_loaded) {
        return;
    }
    ret = pvrdma_ring_produce(&s->async_ring.map, &eqe);
    if (ret < 0) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: async event %d lost: ring "
                      "%s\n", ev, ret == -ENOSPC ? "full" : "corrupt");
        return;
    }
    trace_pvrdma_async_event(ev, handle);
    pvrdma_notify(s, PVRDMA_VECTOR_ASYNC);
}

static void pvrdma_cq_notify(PvrdmaState *s, RdmaCq *cq)
{
    PvrdmaCqne cqne = { .info = cpu_to_le32(cq->handle) };

    if (pvrdma_ring_produce(&s->cq_ring.map, &cqne) < 0) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: CQ %u notification lost\n",
                      cq->handle);
        return;
    }
    trace_pvrdma_cq_notify(cq->handle);
    pvrdma_notify(s, PVRDMA_VECTOR_CQ);
}

/*
 * The CQE's imm_data: an immediate is in network byte order and passed
 * through as it is; an invalidated rkey (which shares the field, as in
 * the verbs' ib_wc) is a number.
 */
static uint32_t pvrdma_cqe_imm(const RdmaWc *wc)
{
    return wc->wc_flags & RDMA_WC_WITH_INVALIDATE ?
           cpu_to_le32(wc->imm_data) : wc->imm_data;
}

static void pvrdma_complete(void *opaque, RdmaQp *qp, uint32_t cq_handle,
                            const RdmaWc *wc, bool solicited)
{
    PvrdmaState *s = opaque;
    RdmaCq *cq = rdma_rm_get(&s->rm, RDMA_RES_CQ, cq_handle);
    PvrdmaCqe cqe = {
        .wr_id = cpu_to_le64(wc->wr_id),
        .qp = cpu_to_le64(wc->qp_handle),
        .opcode = cpu_to_le32(wc->opcode),
        .status = cpu_to_le32(wc->status),
        .byte_len = cpu_to_le32(wc->byte_len),
        .imm_data = pvrdma_cqe_imm(wc),
        .src_qp = cpu_to_le32(wc->src_qp),
        .wc_flags = cpu_to_le32(wc->wc_flags),
        .port_num = 1,
        .network_hdr_type = wc->network_hdr_type,
    };
    PvrdmaRingMap r;
    int ret;

    if (!cq || cq->overrun) {
        return;
    }
    trace_pvrdma_cqe(cq_handle, wc->wr_id, wc->qp_handle, wc->status,
                     wc->opcode);
    ret = pvrdma_cq_ring(s, cq, &r) ? pvrdma_ring_produce(&r, &cqe) : -EIO;
    if (ret < 0) {
        /* Overrun: a CQ error, never an overwritten completion. */
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: CQ %u %s\n", cq_handle,
                      ret == -ENOSPC ? "overrun" : "ring corrupt");
        trace_pvrdma_cq_overrun(cq_handle);
        cq->overrun = true;
        pvrdma_event(s, RDMA_EVENT_CQ_ERR, cq_handle);
        return;
    }
    /* Armed for solicited only: solicited receives and errors notify. */
    if (cq->armed && (!cq->armed_solicited || solicited ||
                      wc->status != RDMA_WC_SUCCESS)) {
        cq->armed = false;
        pvrdma_cq_notify(s, cq);
    }
}

/* WQE parsing: everything the backend sees comes from the local copy. */

/* The @n guest SGEs that follow a WQE header at @p, into host order. */
static void pvrdma_parse_sges(RdmaSge *sge, const void *p, uint32_t n)
{
    const PvrdmaSge *g = p;

    for (uint32_t i = 0; i < n; i++) {
        sge[i].addr = le64_to_cpu(g[i].addr);
        sge[i].length = le32_to_cpu(g[i].length);
        sge[i].lkey = le32_to_cpu(g[i].lkey);
    }
}

static void pvrdma_parse_fast_reg(const PvrdmaSqWqeHdr *h, RdmaSendWr *wr)
{
    wr->fr.iova = le64_to_cpu(h->wr.fast_reg.iova_start);
    wr->fr.pdir = le64_to_cpu(h->wr.fast_reg.pl_pdir_dma);
    wr->fr.page_shift = le32_to_cpu(h->wr.fast_reg.page_shift);
    wr->fr.npages = le32_to_cpu(h->wr.fast_reg.page_list_len);
    wr->fr.length = le32_to_cpu(h->wr.fast_reg.length);
    wr->fr.access = le32_to_cpu(h->wr.fast_reg.access_flags);
    wr->fr.key = le32_to_cpu(h->wr.fast_reg.rkey);
}

static void pvrdma_parse_ud(const PvrdmaSqWqeHdr *h, RdmaSendWr *wr)
{
    /* As the provider packs it: traffic class << 20 | flow label. */
    uint32_t tclass_flow = le32_to_cpu(h->wr.ud.av.sl_tclass_flowlabel);

    wr->remote_qpn = le32_to_cpu(h->wr.ud.remote_qpn);
    wr->remote_qkey = le32_to_cpu(h->wr.ud.remote_qkey);
    memcpy(wr->dgid, h->wr.ud.av.dgid, sizeof(wr->dgid));
    wr->sgid_index = h->wr.ud.av.gid_index;
    memcpy(wr->dmac, h->wr.ud.av.dmac, sizeof(wr->dmac));
    wr->hop_limit = h->wr.ud.av.hop_limit;
    wr->traffic_class = tclass_flow >> 20;
    wr->flow_label = tclass_flow & RDMA_FLOW_LABEL_MASK;
}

static RdmaWcStatus pvrdma_parse_send(RdmaQp *qp, const uint8_t *buf,
                                      RdmaSendWr *wr)
{
    const PvrdmaSqWqeHdr *h = (const PvrdmaSqWqeHdr *)buf;
    uint32_t opcode = le32_to_cpu(h->opcode);
    uint32_t num_sge = le32_to_cpu(h->num_sge);

    wr->wr_id = le64_to_cpu(h->wr_id);
    wr->opcode = opcode;
    wr->flags = le32_to_cpu(h->send_flags) &
                (RDMA_SEND_FENCE | RDMA_SEND_SIGNALED |
                 RDMA_SEND_SOLICITED | RDMA_SEND_INLINE);
    wr->num_sge = num_sge;
    if (num_sge > qp->cap.max_send_sge) {
        return RDMA_WC_LOC_LEN_ERR;
    }
    if (opcode >= RDMA_WR_MAX) {
        return RDMA_WC_LOC_QP_OP_ERR;
    }
    /* One union: the immediate in network byte order, or an rkey. */
    wr->imm_data = h->ex.imm_data;
    wr->invalidate_rkey = le32_to_cpu(h->ex.invalidate_rkey);
    if (opcode == RDMA_WR_FAST_REG_MR) {
        pvrdma_parse_fast_reg(h, wr);
    } else if (qp->type == RDMA_QPT_RC) {
        if (opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ||
            opcode == RDMA_WR_ATOMIC_FETCH_AND_ADD) {
            wr->remote_addr = le64_to_cpu(h->wr.atomic.remote_addr);
            wr->rkey = le32_to_cpu(h->wr.atomic.rkey);
            wr->compare_add = le64_to_cpu(h->wr.atomic.compare_add);
            wr->swap = le64_to_cpu(h->wr.atomic.swap);
        } else {
            wr->remote_addr = le64_to_cpu(h->wr.rdma.remote_addr);
            wr->rkey = le32_to_cpu(h->wr.rdma.rkey);
        }
    } else {
        pvrdma_parse_ud(h, wr);
    }
    pvrdma_parse_sges(wr->sge, buf + sizeof(*h), num_sge);
    return RDMA_WC_SUCCESS;
}

static void pvrdma_flush_send(PvrdmaState *s, RdmaQp *qp, const uint8_t *buf)
{
    const PvrdmaSqWqeHdr *h = (const PvrdmaSqWqeHdr *)buf;
    RdmaWc wc = {
        .wr_id = le64_to_cpu(h->wr_id),
        .status = RDMA_WC_WR_FLUSH_ERR,
        .opcode = rdma_wc_opcode(le32_to_cpu(h->opcode)),
        .qp_handle = qp->handle,
    };

    pvrdma_complete(s, qp, qp->send_cq_handle, &wc, false);
}

/* Read the WQE at @head into @buf and release its slot. */
static bool pvrdma_fetch(PvrdmaState *s, PvrdmaRingMap *r, uint32_t head,
                         void *buf, size_t len)
{
    return rdma_dma_read(PCI_DEVICE(s), pvrdma_ring_elem_addr(r, head), buf,
                         MIN(len, r->elem_size)) &&
           pvrdma_ring_pop(r, head);
}

static void pvrdma_wqe_error(RdmaQp *qp, const char *why)
{
    qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: QP %u: %s\n", qp->qpn, why);
    trace_pvrdma_wqe_bad(qp->qpn, why);
}

static void pvrdma_recv_error(RdmaQp *qp, RdmaSrq *srq, const char *why)
{
    if (qp) {
        pvrdma_wqe_error(qp, why);
    } else {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: SRQ %u: %s\n", srq->handle,
                      why);
    }
}

static void pvrdma_qp_fatal(PvrdmaState *s, RdmaQp *qp, const char *why)
{
    pvrdma_wqe_error(qp, why);
    rdma_rm_qp_error(&s->rm, qp, RDMA_EVENT_QP_FATAL);
}

/*
 * Work through the send queue within the entry point's budget, the rest
 * from the bottom half.  In ERR every WQE completes with a flush status.
 */
static void pvrdma_process_sq(PvrdmaState *s, RdmaQp *qp)
{
    /*
     * Not cleared (2.4 KiB per doorbell): pvrdma_parse_send() reads only
     * what pvrdma_fetch() copied (the header and num_sge <= max_send_sge
     * SGEs, which the WQE size checked at creation holds), and the
     * backends read wr's SGEs up to num_sge; the rest of wr is set here.
     */
    RDMA_UNINIT uint8_t buf[PVRDMA_WQE_MAX] QEMU_ALIGNED(8);
    PvrdmaRingMap r;
    RDMA_UNINIT RdmaSendWr wr;
    uint32_t head, tail;
    bool flushing;
    int ret;

    rdma_rm_sq_unmark(&s->rm, qp);
    flushing = qp->attr.qp_state == RDMA_QPS_ERR ||
               qp->attr.qp_state == RDMA_QPS_SQE;
    if (qp->attr.qp_state != RDMA_QPS_RTS && !flushing) {
        return;                 /* kept in the ring until RTS */
    }
    if (!pvrdma_sq_ring(s, qp, &r)) {
        pvrdma_qp_fatal(s, qp, "send ring unusable");
        return;
    }
    while (rdma_rm_budget_left(&s->rm)) {
        if (qp->sq_stalled) {
            return;
        }
        ret = pvrdma_ring_peek(&r, &head, &tail);
        if (ret <= 0) {
            if (ret < 0) {
                pvrdma_qp_fatal(s, qp, "send ring state corrupt");
            }
            return;
        }
        if (!pvrdma_fetch(s, &r, head, buf, sizeof(buf))) {
            pvrdma_qp_fatal(s, qp, "send WQE not in guest memory");
            return;
        }
        if (qp->attr.qp_state == RDMA_QPS_ERR ||
            qp->attr.qp_state == RDMA_QPS_SQE) {
            rdma_rm_budget_charge(&s->rm, 0);
            pvrdma_flush_send(s, qp, buf);
            continue;
        }
        memset(&wr, 0, offsetof(RdmaSendWr, sge));
        ret = pvrdma_parse_send(qp, buf, &wr);
        if (ret != RDMA_WC_SUCCESS) {
            RdmaWc wc = { .wr_id = wr.wr_id, .status = ret,
                          .qp_handle = qp->handle };

            pvrdma_wqe_error(qp, "send WQE with a bad opcode or num_sge");
            rdma_rm_budget_charge(&s->rm, 0);
            pvrdma_complete(s, qp, qp->send_cq_handle, &wc, false);
            rdma_rm_qp_send_error(&s->rm, qp, RDMA_EVENT_QP_REQ_ERR);
            continue;
        }
        rdma_rm_budget_charge(&s->rm, rdma_wr_step_bytes(&wr));
        s->backend->ops->post_send(s->backend, qp, &wr);
    }
    if (!rdma_rm_stopping(&s->rm)) {
        rdma_rm_sq_mark(&s->rm, qp);       /* behind the others */
        qemu_bh_schedule(s->sq_bh);
    }
}

static void pvrdma_sq_bh(void *opaque)
{
    PvrdmaState *s = opaque;
    RdmaQp *qp;

    /* A stopped VM's send queues wait for it to run (pvrdma_sq_vm_state) */
    if (!runstate_is_running() || !rdma_rm_enter(&s->rm)) {
        return;
    }
    /* Each QP taken off the list; one the budget stopped goes back last. */
    while (rdma_rm_budget_left(&s->rm) && (qp = rdma_rm_sq_first(&s->rm))) {
        pvrdma_process_sq(s, qp);
    }
    if (rdma_rm_sq_first(&s->rm) && !rdma_rm_stopping(&s->rm)) {
        qemu_bh_schedule(s->sq_bh);     /* another pass */
    }
    rdma_rm_leave(&s->rm);
}

static void pvrdma_kick_send(void *opaque, RdmaQp *qp)
{
    PvrdmaState *s = opaque;

    rdma_rm_sq_mark(&s->rm, qp);
    qemu_bh_schedule(s->sq_bh);
}

/* Receive queues */

/*
 * Take the next receive WQE of ring @r (of @qp, or of @srq): 0, -EAGAIN
 * when the ring is empty, -EIO when the WQE was bad (it is consumed, and
 * completed with an error when the QP is known).
 */
static int pvrdma_take_recv(PvrdmaState *s, PvrdmaRingMap *r, RdmaQp *qp,
                            RdmaSrq *srq, uint32_t max_sge, RdmaRecvWr *wr)
{
    uint8_t buf[sizeof(PvrdmaRqWqeHdr) + RDMA_MAX_SGE * sizeof(PvrdmaSge)]
        QEMU_ALIGNED(8);
    const PvrdmaRqWqeHdr *h = (const PvrdmaRqWqeHdr *)buf;
    uint32_t head, tail, num_sge;
    int ret;

    ret = pvrdma_ring_peek(r, &head, &tail);
    if (ret == 0) {
        return -EAGAIN;
    }
    if (ret < 0 || !pvrdma_fetch(s, r, head, buf, sizeof(buf))) {
        pvrdma_recv_error(qp, srq, "receive ring unusable");
        return -EIO;
    }
    wr->wr_id = le64_to_cpu(h->wr_id);
    num_sge = le32_to_cpu(h->num_sge);
    wr->num_sge = num_sge;
    if (num_sge > max_sge) {
        pvrdma_recv_error(qp, srq, "receive WQE with too many SGEs");
        if (qp) {
            RdmaWc wc = { .wr_id = wr->wr_id, .status = RDMA_WC_LOC_LEN_ERR,
                          .opcode = RDMA_WC_RECV, .qp_handle = qp->handle };

            pvrdma_complete(s, qp, qp->recv_cq_handle, &wc, false);
        }
        return -EIO;
    }
    pvrdma_parse_sges(wr->sge, buf + sizeof(*h), num_sge);
    /* SRQ limit: one event when fewer WQEs than the limit remain. */
    if (srq && srq->srq_limit && !s->backend->ops->srq_limit_native &&
        ((tail - pvrdma_idx_next(head, r->max_elems)) &
         ((r->max_elems << 1) - 1)) < srq->srq_limit) {
        srq->srq_limit = 0;
        pvrdma_event(s, RDMA_EVENT_SRQ_LIMIT_REACHED, srq->handle);
    }
    return 0;
}

static int pvrdma_next_recv(void *opaque, RdmaQp *qp, RdmaRecvWr *wr)
{
    PvrdmaState *s = opaque;
    RdmaSrq *srq = NULL;
    PvrdmaRingMap r;

    if (qp->is_srq) {
        srq = rdma_rm_get(&s->rm, RDMA_RES_SRQ, qp->srq_handle);
        if (!srq || !pvrdma_srq_ring(s, srq, &r)) {
            pvrdma_recv_error(qp, NULL, "receive ring unusable");
            return -EIO;
        }
        return pvrdma_take_recv(s, &r, qp, srq, srq->max_sge, wr);
    }
    if (!pvrdma_rq_ring(s, qp, &r)) {
        pvrdma_recv_error(qp, NULL, "receive ring unusable");
        return -EIO;
    }
    return pvrdma_take_recv(s, &r, qp, NULL, qp->cap.max_recv_sge, wr);
}

static int pvrdma_next_srq_recv(void *opaque, RdmaSrq *srq, RdmaRecvWr *wr)
{
    PvrdmaState *s = opaque;
    PvrdmaRingMap r;

    if (!pvrdma_srq_ring(s, srq, &r)) {
        pvrdma_recv_error(NULL, srq, "SRQ ring unusable");
        return -EIO;
    }
    return pvrdma_take_recv(s, &r, NULL, srq, srq->max_sge, wr);
}

/*
 * One ring's worth at most (a ring the guest, or the device's own CQE
 * writes, keep refilling); what is left goes to the bottom half, whose
 * pass flushes a QP in ERR within its budget.
 */
static void pvrdma_flush_sq(PvrdmaState *s, RdmaQp *qp)
{
    uint8_t buf[PVRDMA_WQE_MAX] QEMU_ALIGNED(8);
    PvrdmaRingMap r;
    uint32_t head, tail, n;

    if (!pvrdma_sq_ring(s, qp, &r)) {
        return;
    }
    for (n = 0; n < r.max_elems; n++) {
        if (pvrdma_ring_peek(&r, &head, &tail) <= 0 ||
            !pvrdma_fetch(s, &r, head, buf, sizeof(buf))) {
            return;
        }
        pvrdma_flush_send(s, qp, buf);
    }
    pvrdma_kick_send(s, qp);
}

static void pvrdma_flush_rq(PvrdmaState *s, RdmaQp *qp)
{
    PvrdmaRqWqeHdr h;
    PvrdmaRingMap r;
    uint32_t head, tail, n;

    if (qp->is_srq || !pvrdma_rq_ring(s, qp, &r)) {
        return;
    }
    /* One ring's worth at most; the next RECV doorbell flushes more. */
    for (n = 0; n < r.max_elems &&
                pvrdma_ring_peek(&r, &head, &tail) > 0 &&
                pvrdma_fetch(s, &r, head, &h, sizeof(h)); n++) {
        RdmaWc wc = {
            .wr_id = le64_to_cpu(h.wr_id),
            .status = RDMA_WC_WR_FLUSH_ERR,
            .opcode = RDMA_WC_RECV,
            .qp_handle = qp->handle,
        };

        pvrdma_complete(s, qp, qp->recv_cq_handle, &wc, false);
    }
}

/*
 * @qp entered SQE (its sends are flushed) or ERR (its receives too; a QP
 * on an SRQ instead tells the guest that no receive will complete).
 */
static void pvrdma_qp_flush(void *opaque, RdmaQp *qp)
{
    PvrdmaState *s = opaque;

    pvrdma_flush_sq(s, qp);
    if (qp->attr.qp_state != RDMA_QPS_ERR) {
        return;
    }
    if (qp->is_srq) {
        pvrdma_event(s, RDMA_EVENT_QP_LAST_WQE_REACHED, qp->handle);
    } else {
        pvrdma_flush_rq(s, qp);
    }
}

/*
 * Migration: the rings of an incoming object must be those its creation
 * command made: WQE sizes from its SGE counts, as the guest's libraries
 * compute them (rdma_rm.c made the same from the command), and rings that
 * fit their pages.
 */
static uint32_t pvrdma_wqe_size(size_t hdr, uint32_t nsge)
{
    return pow2ceil(hdr + sizeof(PvrdmaSge) * MAX(nsge, 1));
}

static bool pvrdma_rings_ok(void *opaque, RdmaResType type, const void *obj)
{
    PvrdmaState *s = opaque;
    PvrdmaRingMap r;

    switch (type) {
    case RDMA_RES_CQ:
        return pvrdma_cq_ring(s, (RdmaCq *)obj, &r);
    case RDMA_RES_SRQ: {
        const RdmaSrq *srq = obj;

        return srq->wqe_size == pvrdma_wqe_size(sizeof(PvrdmaRqWqeHdr),
                                                srq->max_sge) &&
               pvrdma_srq_ring(s, (RdmaSrq *)srq, &r);
    }
    case RDMA_RES_QP: {
        const RdmaQp *qp = obj;

        if (qp->send_wqe_size != pvrdma_wqe_size(sizeof(PvrdmaSqWqeHdr),
                                                 qp->cap.max_send_sge) ||
            !pvrdma_sq_ring(s, (RdmaQp *)qp, &r)) {
            return false;
        }
        if (qp->is_srq) {
            return qp->recv_wqe_size == 0;
        }
        return qp->recv_wqe_size ==
               pvrdma_wqe_size(sizeof(PvrdmaRqWqeHdr), qp->cap.max_recv_sge) &&
               pvrdma_rq_ring(s, (RdmaQp *)qp, &r);
    }
    default:
        return false;
    }
}

const RdmaFrontOps pvrdma_front_ops = {
    .next_recv = pvrdma_next_recv,
    .next_srq_recv = pvrdma_next_srq_recv,
    .complete = pvrdma_complete,
    .event = pvrdma_event,
    .qp_flush = pvrdma_qp_flush,
    .kick_send = pvrdma_kick_send,
    .deferred = pvrdma_deferred,
    .rings_ok = pvrdma_rings_ok,
};

/* Doorbells */

/* The UAR page of the context that owns an object (0: the driver's). */
static uint32_t pvrdma_ctx_uar(PvrdmaState *s, uint32_t ctx_handle)
{
    RdmaUc *uc = ctx_handle ? rdma_rm_get(&s->rm, RDMA_RES_UC, ctx_handle)
                            : NULL;

    return uc ? uc->uar_index : 0;
}

static uint32_t pvrdma_pd_uar(PvrdmaState *s, uint32_t pd_handle)
{
    RdmaPd *pd = rdma_rm_get(&s->rm, RDMA_RES_PD, pd_handle);

    return pd ? pvrdma_ctx_uar(s, pd->ctx_handle) : UINT32_MAX;
}

static void pvrdma_db_refused(uint32_t page, const char *what,
                              uint32_t handle)
{
    qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: doorbell on UAR page %u for %s "
                  "%u, which does not exist or is not this page's\n", page,
                  what, handle);
}

void pvrdma_doorbell_qp(PvrdmaState *s, uint32_t page, uint32_t val)
{
    uint32_t handle = val & PVRDMA_UAR_HANDLE_MASK;
    RdmaQp *qp = rdma_rm_get(&s->rm, RDMA_RES_QP, handle);

    if (!qp || pvrdma_pd_uar(s, qp->pd_handle) != page) {
        pvrdma_db_refused(page, "QP", handle);
        return;
    }
    if (val & PVRDMA_UAR_QP_RECV) {
        if (qp->attr.qp_state == RDMA_QPS_ERR) {
            pvrdma_flush_rq(s, qp);
        } else if (!qp->is_srq) {
            s->backend->ops->recv_posted(s->backend, qp, NULL);
        }
    }
    if (val & PVRDMA_UAR_QP_SEND) {
        pvrdma_process_sq(s, qp);
    }
}

void pvrdma_doorbell_cq(PvrdmaState *s, uint32_t page, uint32_t val)
{
    uint32_t handle = val & PVRDMA_UAR_HANDLE_MASK;
    RdmaCq *cq = rdma_rm_get(&s->rm, RDMA_RES_CQ, handle);

    if (!cq || pvrdma_ctx_uar(s, cq->ctx_handle) != page) {
        pvrdma_db_refused(page, "CQ", handle);
        return;
    }
    /*
     * Completions are written as they happen, so POLL has nothing to do.
     * Arming for solicited only does not narrow an arm for the next
     * completion that is still pending (as Linux rxe and IBA 11.4.2.2).
     */
    if (val & (PVRDMA_UAR_CQ_ARM | PVRDMA_UAR_CQ_ARM_SOL)) {
        bool next = (val & PVRDMA_UAR_CQ_ARM) ||
                    (cq->armed && !cq->armed_solicited);

        cq->armed = true;
        cq->armed_solicited = !next;
    }
}

void pvrdma_doorbell_srq(PvrdmaState *s, uint32_t page, uint32_t val)
{
    uint32_t handle = val & PVRDMA_UAR_HANDLE_MASK;
    RdmaSrq *srq = rdma_rm_get(&s->rm, RDMA_RES_SRQ, handle);

    if (!srq || pvrdma_pd_uar(s, srq->pd_handle) != page) {
        pvrdma_db_refused(page, "SRQ", handle);
        return;
    }
    if (val & PVRDMA_UAR_SRQ_RECV) {
        s->backend->ops->recv_posted(s->backend, NULL, srq);
    }
}

/*
 * The send queues the bottom half had left go on when the VM runs again:
 * while it is stopped the device takes no work from the guest's rings,
 * as a stopped source of a migration must not.
 */
static void pvrdma_sq_vm_state(void *opaque, bool running, RunState state)
{
    PvrdmaState *s = opaque;

    if (running) {
        qemu_bh_schedule(s->sq_bh);
    }
}

void pvrdma_qp_ops_init(PvrdmaState *s)
{
    s->sq_bh = qemu_bh_new_guarded(pvrdma_sq_bh, s,
                                   &DEVICE(s)->mem_reentrancy_guard);
    s->sq_vm_state = qemu_add_vm_change_state_handler(pvrdma_sq_vm_state, s);
}

void pvrdma_qp_ops_post_load(PvrdmaState *s)
{
    if (rdma_rm_sq_first(&s->rm)) {
        qemu_bh_schedule(s->sq_bh);
    }
}

void pvrdma_qp_ops_fini(PvrdmaState *s)
{
    qemu_del_vm_change_state_handler(s->sq_vm_state);
    qemu_bh_delete(s->sq_bh);
    s->sq_bh = NULL;
}
