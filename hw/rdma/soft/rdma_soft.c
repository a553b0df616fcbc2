/*
 * The built-in software RDMA engine ("soft" backend), the default backend.
 *
 * It needs nothing from the host: objects live in QEMU's memory and work
 * requests execute directly against guest memory (rdma_soft.h lists the
 * parts).  This file holds the backend ops and the engine state
 * of each object.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "system/runstate.h"
#include "rdma_soft.h"
#include "hw/rdma/trace.h"

static void rdma_soft_limits(RdmaBackend *be, RdmaDevLimits *l)
{
    /* The atomic results a responder keeps for duplicates. */
    l->max_qp_rd_atom = MIN(l->max_qp_rd_atom, RDMA_SOFT_RD_ATOM);
    l->max_qp_init_rd_atom = MIN(l->max_qp_init_rd_atom, RDMA_SOFT_RD_ATOM);
}

static void rdma_soft_query_port(RdmaBackend *be, RdmaPortAttr *attr)
{
    RdmaSoft *s = container_of(be, RdmaSoft, be);

    /* Function 0's Ethernet: 1500 bytes carry 1024, 9000 carry 4096. */
    attr->active = true;
    attr->max_mtu = 5;              /* 4096 */
    attr->active_mtu = rdma_soft_port_ib_mtu(s);
    attr->max_msg_sz = 1u << 31;
    attr->active_width = 2;         /* 4X */
    attr->active_speed = 32;        /* EDR */
}

static int rdma_soft_create_cq(RdmaBackend *be, RdmaCq *cq)
{
    trace_rdma_soft_create("cq", cq->handle);
    return 0;
}

static void rdma_soft_destroy_cq(RdmaBackend *be, RdmaCq *cq)
{
    trace_rdma_soft_destroy("cq", cq->handle);
}

static int rdma_soft_create_qp(RdmaBackend *be, RdmaQp *qp)
{
    RdmaSoftQp *sqp = g_new0(RdmaSoftQp, 1);

    sqp->soft = container_of(be, RdmaSoft, be);
    sqp->qp = qp;
    QTAILQ_INIT(&sqp->req.wqes);
    g_queue_init(&sqp->backlog);
    sqp->req.rnr_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                      rdma_soft_rnr_timer, sqp);
    sqp->req.retry_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL,
                                        rdma_soft_retry_timer, sqp);
    sqp->req.rtt_sent_ns = -1;
    sqp->pace_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, rdma_soft_pace_timer,
                                   sqp);
    qp->be = sqp;
    trace_rdma_soft_create("qp", qp->handle);
    return 0;
}

static int rdma_soft_modify_qp(RdmaBackend *be, RdmaQp *qp, uint32_t mask,
                               const RdmaQpAttr *attr)
{
    RdmaSoftQp *sqp = qp->be;

    /*
     * RESET forgets the outstanding WRs without completion, and the
     * message its responder was in the middle of.
     */
    if (attr->qp_state == RDMA_QPS_RESET) {
        rdma_soft_req_flush(sqp, false);
        rdma_soft_resp_flush(sqp, false);
        sqp->req.psn = sqp->req.sent_psn = 0;
        sqp->req.asked_psn = RDMA_PSN_MASK;
        sqp->resp.epsn = sqp->resp.ack_psn = sqp->resp.msn = 0;
        sqp->req.rnr_attempts = 0;
        sqp->req.stale = 0;
        sqp->req.cwnd = 0;
        sqp->resp.natomic = sqp->resp.atomic_next = 0;
        sqp->resp.nres = sqp->resp.res_next = 0;
    }
    /* The PSNs the two ends agreed on (the guest exchanged them). */
    if (mask & RDMA_QP_RQ_PSN) {
        sqp->resp.epsn = sqp->resp.ack_psn = attr->rq_psn & RDMA_PSN_MASK;
        sqp->resp.nak_sent = false;
    }
    if (mask & RDMA_QP_SQ_PSN) {
        sqp->req.psn = sqp->req.sent_psn = attr->sq_psn & RDMA_PSN_MASK;
        sqp->req.asked_psn = (sqp->req.psn - 1) & RDMA_PSN_MASK;
    }
    if (mask & RDMA_QP_AV) {
        rdma_soft_qp_locate(sqp, attr->ah.dgid);
    }
    return 0;
}

static void rdma_soft_destroy_qp(RdmaBackend *be, RdmaQp *qp)
{
    RdmaSoftQp *sqp = qp->be;

    trace_rdma_soft_destroy("qp", qp->handle);
    rdma_soft_qp_undue(sqp);
    rdma_soft_window_unwait(sqp);
    rdma_soft_req_flush(sqp, false);
    rdma_soft_resp_flush(sqp, false);
    timer_free(sqp->req.rnr_timer);
    timer_free(sqp->req.retry_timer);
    timer_free(sqp->pace_timer);
    g_free(sqp->spare);
    g_free(sqp->store);
    g_free(sqp);
    qp->be = NULL;
}

static int rdma_soft_create_srq(RdmaBackend *be, RdmaSrq *srq)
{
    trace_rdma_soft_create("srq", srq->handle);
    return 0;
}

static int rdma_soft_modify_srq(RdmaBackend *be, RdmaSrq *srq)
{
    return 0;
}

static void rdma_soft_destroy_srq(RdmaBackend *be, RdmaSrq *srq)
{
    trace_rdma_soft_destroy("srq", srq->handle);
}

static int rdma_soft_create_mr(RdmaBackend *be, RdmaMr *mr)
{
    trace_rdma_soft_create("mr", mr->handle);
    return 0;
}

static void rdma_soft_destroy_mr(RdmaBackend *be, RdmaMr *mr)
{
    trace_rdma_soft_destroy("mr", mr->handle);
}

static int rdma_soft_add_gid(RdmaBackend *be, uint32_t index,
                             const RdmaGid *gid)
{
    trace_rdma_soft_create("gid", index);
    /* A GID to be reached at: the port starts taking frames. */
    rdma_soft_port_attach(container_of(be, RdmaSoft, be));
    return 0;
}

static void rdma_soft_del_gid(RdmaBackend *be, uint32_t index,
                              const RdmaGid *gid)
{
    trace_rdma_soft_destroy("gid", index);
}

static bool rdma_soft_port_stats(RdmaBackend *be, char **netdev,
                                 uint32_t *mtu, RdmaPortStats *st)
{
    RdmaSoft *s = container_of(be, RdmaSoft, be);
    const char *name = rdma_soft_port_netdev(s);

    if (!name) {
        return false;
    }
    *netdev = g_strdup(name);
    *mtu = rdma_soft_port_mtu(s);
    *st = s->stats;
    return true;
}

/*
 * The engine stops with the VM, as a NIC's engine does with its host:
 * the run bottom half leaves what is due while the VM is stopped (see
 * rdma_soft_run_bh()), and takes it up when it runs again.  Above all a
 * source stopped for the end of a migration executes nothing more: what
 * it did then would not reach the destination.
 */
static void rdma_soft_vm_state(void *opaque, bool running, RunState state)
{
    RdmaSoft *s = opaque;

    if (running) {
        qemu_bh_schedule(s->run_bh);
    }
}

static void rdma_soft_destroy(RdmaBackend *be)
{
    RdmaSoft *s = container_of(be, RdmaSoft, be);

    qemu_del_vm_change_state_handler(s->vm_state);
    rdma_soft_port_detach(s);
    qemu_bh_delete(s->run_bh);
    g_free(s->mig);
    g_free(s->mig_wqe);
    g_free(s->mig_rwqe);
    g_free(s);
}

static const RdmaBackendOps rdma_soft_ops = {
    .name = "soft",
    .limits = rdma_soft_limits,
    .query_port = rdma_soft_query_port,
    .create_cq = rdma_soft_create_cq,
    .destroy_cq = rdma_soft_destroy_cq,
    .create_qp = rdma_soft_create_qp,
    .modify_qp = rdma_soft_modify_qp,
    .post_send = rdma_soft_post_send,
    .recv_posted = rdma_soft_recv_posted,
    .flush_qp = rdma_soft_flush_qp,
    .destroy_qp = rdma_soft_destroy_qp,
    .create_srq = rdma_soft_create_srq,
    .modify_srq = rdma_soft_modify_srq,
    .destroy_srq = rdma_soft_destroy_srq,
    .create_mr = rdma_soft_create_mr,
    .destroy_mr = rdma_soft_destroy_mr,
    .add_gid = rdma_soft_add_gid,
    .del_gid = rdma_soft_del_gid,
    .port_stats = rdma_soft_port_stats,
    .destroy = rdma_soft_destroy,
};

bool rdma_backend_is_soft(RdmaBackend *be)
{
    return be->ops == &rdma_soft_ops;
}

RdmaBackend *rdma_soft_backend_new(RdmaResources *rm, PCIDevice *pdev,
                                   Error **errp)
{
    RdmaSoft *s = g_new0(RdmaSoft, 1);

    s->be.ops = &rdma_soft_ops;
    s->be.rm = rm;
    QTAILQ_INIT(&s->run_list);
    QTAILQ_INIT(&s->wait_list);
    s->run_bh = qemu_bh_new_guarded(rdma_soft_run_bh, s,
                                      &DEVICE(pdev)->mem_reentrancy_guard);
    s->vm_state = qemu_add_vm_change_state_handler(rdma_soft_vm_state, s);
    return &s->be;
}
