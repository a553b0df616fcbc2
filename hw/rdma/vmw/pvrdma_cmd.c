/*
 * VMware PVRDMA front-end: the command channel.
 *
 * The driver copies a request into the command slot, writes REQUEST and
 * reads ERR at once, so each command runs to completion inside that
 * register write.  A handler translates the request into a core call (which
 * validates everything before changing state) and fills the response.  On
 * success the response goes to the response slot and MSI-X vector 0 fires;
 * on failure ERR carries a positive errno, which is what the driver checks
 * (it never looks at resp.hdr.err), and no interrupt is raised.
 *
 * Requests and responses are little-endian guest layouts (pvrdma_abi.h):
 * a handler converts each field it reads or writes here, and the core
 * sees host-order values only.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "pvrdma.h"
#include "trace.h"

typedef int (*PvrdmaCmdFn)(PvrdmaState *s, const PvrdmaCmdReq *req,
                           PvrdmaCmdResp *rsp);

static int pvrdma_query_port(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    PvrdmaPortAttr *a = &rsp->query_port_resp.attrs;
    RdmaPortAttr port = { 0 };
    bool active;

    if (req->query_port.port_num != 1) {
        return -EINVAL;
    }
    s->backend->ops->query_port(s->backend, &port);
    active = port.active && s->activated && s->port_up;
    a->state = cpu_to_le32(active ? PVRDMA_PORT_ACTIVE : PVRDMA_PORT_DOWN);
    a->max_mtu = cpu_to_le32(port.max_mtu);
    a->active_mtu = cpu_to_le32(port.active_mtu);
    a->gid_tbl_len = cpu_to_le32(s->rm.limits.gid_tbl_len);
    a->port_cap_flags = cpu_to_le32(PVRDMA_PORT_CM_SUP |
                                    PVRDMA_PORT_IP_BASED_GIDS);
    a->max_msg_sz = cpu_to_le32(port.max_msg_sz);
    a->pkey_tbl_len = cpu_to_le16(s->rm.limits.max_pkeys);
    a->max_vl_num = 1;
    a->active_width = port.active_width;
    a->active_speed = port.active_speed;
    a->phys_state = active ? PVRDMA_PHYS_STATE_LINK_UP
                           : PVRDMA_PHYS_STATE_DISABLED;
    return 0;
}

static int pvrdma_query_pkey(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    if (req->query_pkey.port_num != 1 ||
        req->query_pkey.index >= s->rm.limits.max_pkeys) {
        return -EINVAL;
    }
    rsp->query_pkey_resp.pkey = cpu_to_le16(0xffff);  /* default partition */
    return 0;
}

static int pvrdma_create_uc(PvrdmaState *s, const PvrdmaCmdReq *req,
                            PvrdmaCmdResp *rsp)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    uint64_t bar = pci_get_bar_addr(pdev, PVRDMA_BAR_UAR);
    /* Drivers before version 19 pass a 32-bit page number. */
    uint64_t pfn = s->driver_version < PVRDMA_VERSION_PPN64 ?
                   le32_to_cpu(req->create_uc.pfn) :
                   le64_to_cpu(req->create_uc.pfn64);
    uint64_t index = pfn - (bar >> RDMA_PAGE_SHIFT);
    uint32_t h;
    int ret;

    /* UAR page 0 is the driver's own; each context needs a page of its own. */
    if (bar == PCI_BAR_UNMAPPED || pfn < (bar >> RDMA_PAGE_SHIFT) ||
        index == 0 || index >= PVRDMA_MAX_UAR) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: create_uc: page 0x%" PRIx64
                      " is not a UAR page of this device\n", pfn);
        return -EINVAL;
    }
    for (h = 1; h < s->rm.tables[RDMA_RES_UC].size; h++) {
        RdmaUc *uc = s->rm.tables[RDMA_RES_UC].slots[h];

        if (uc && uc->uar_index == index) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: create_uc: UAR page %"
                          PRIu64 " already has a context\n", index);
            return -EBUSY;
        }
    }
    ret = rdma_rm_alloc_uc(&s->rm, index, &h);
    rsp->create_uc_resp.ctx_handle = cpu_to_le32(h);
    return ret;
}

static int pvrdma_destroy_uc(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    return rdma_rm_dealloc_uc(&s->rm, le32_to_cpu(req->destroy_uc.ctx_handle));
}

static int pvrdma_create_pd(PvrdmaState *s, const PvrdmaCmdReq *req,
                            PvrdmaCmdResp *rsp)
{
    uint32_t pd = 0;
    int ret = rdma_rm_alloc_pd(&s->rm, le32_to_cpu(req->create_pd.ctx_handle),
                               &pd);

    rsp->create_pd_resp.pd_handle = cpu_to_le32(pd);
    return ret;
}

static int pvrdma_destroy_pd(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    return rdma_rm_dealloc_pd(&s->rm, le32_to_cpu(req->destroy_pd.pd_handle));
}

static int pvrdma_create_mr(PvrdmaState *s, const PvrdmaCmdReq *req,
                            PvrdmaCmdResp *rsp)
{
    const PvrdmaCmdCreateMr *c = &req->create_mr;
    uint32_t flags = le32_to_cpu(c->flags);
    RdmaMrReq r = {
        .pd_handle = le32_to_cpu(c->pd_handle),
        .access = le32_to_cpu(c->access_flags),
        .start = le64_to_cpu(c->start),
        .length = le64_to_cpu(c->length),
        .nchunks = le32_to_cpu(c->nchunks),
        .pdir = le64_to_cpu(c->pdir_dma),
    };
    RdmaMr *mr;
    int ret;

    switch (flags) {
    case 0:
        r.kind = RDMA_MR_USER;
        break;
    case PVRDMA_MR_FLAG_DMA:
        r.kind = RDMA_MR_DMA;
        break;
    case PVRDMA_MR_FLAG_FRMR:
        r.kind = RDMA_MR_FRMR;
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: create_mr: flags 0x%x\n",
                      flags);
        return -EINVAL;
    }
    ret = rdma_rm_create_mr(&s->rm, &r, &mr);
    if (ret == 0) {
        rsp->create_mr_resp.mr_handle = cpu_to_le32(mr->handle);
        rsp->create_mr_resp.lkey = cpu_to_le32(mr->lkey);
        rsp->create_mr_resp.rkey = cpu_to_le32(mr->rkey);
    }
    return ret;
}

static int pvrdma_destroy_mr(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    return rdma_rm_destroy_mr(&s->rm, le32_to_cpu(req->destroy_mr.mr_handle));
}

static int pvrdma_create_cq(PvrdmaState *s, const PvrdmaCmdReq *req,
                            PvrdmaCmdResp *rsp)
{
    const PvrdmaCmdCreateCq *c = &req->create_cq;
    RdmaCqReq r = {
        .ctx_handle = le32_to_cpu(c->ctx_handle),
        .cqe = le32_to_cpu(c->cqe),
        .cqe_size = sizeof(PvrdmaCqe),
        .pdir = le64_to_cpu(c->pdir_dma),
        .nchunks = le32_to_cpu(c->nchunks),
    };
    RdmaCq *cq;
    int ret = rdma_rm_create_cq(&s->rm, &r, &cq);

    if (ret == 0) {
        rsp->create_cq_resp.cq_handle = cpu_to_le32(cq->handle);
        rsp->create_cq_resp.cqe = cpu_to_le32(cq->cqe);
    }
    return ret;
}

static int pvrdma_resize_cq(PvrdmaState *s, const PvrdmaCmdReq *req,
                            PvrdmaCmdResp *rsp)
{
    /* The guest driver has no resize_cq verb; nothing ever sends this. */
    qemu_log_mask(LOG_UNIMP, "pvrdma: RESIZE_CQ is not supported\n");
    return -EOPNOTSUPP;
}

static int pvrdma_destroy_cq(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    return rdma_rm_destroy_cq(&s->rm, le32_to_cpu(req->destroy_cq.cq_handle));
}

static int pvrdma_create_qp(PvrdmaState *s, const PvrdmaCmdReq *req,
                            PvrdmaCmdResp *rsp)
{
    const PvrdmaCmdCreateQp *c = &req->create_qp;
    RdmaQpReq r = {
        .type = c->qp_type,
        .pd_handle = le32_to_cpu(c->pd_handle),
        .send_cq_handle = le32_to_cpu(c->send_cq_handle),
        .recv_cq_handle = le32_to_cpu(c->recv_cq_handle),
        .srq_handle = le32_to_cpu(c->srq_handle),
        .is_srq = c->is_srq,
        .sq_sig_all = c->sq_sig_all,
        .access_flags = le32_to_cpu(c->access_flags),
        .max_send_wr = le32_to_cpu(c->max_send_wr),
        .max_recv_wr = le32_to_cpu(c->max_recv_wr),
        .max_send_sge = le32_to_cpu(c->max_send_sge),
        .max_recv_sge = le32_to_cpu(c->max_recv_sge),
        .max_inline_data = le32_to_cpu(c->max_inline_data),
        .send_wqe_hdr = sizeof(PvrdmaSqWqeHdr),
        .recv_wqe_hdr = sizeof(PvrdmaRqWqeHdr),
        .sge_size = sizeof(PvrdmaSge),
        .total_chunks = le16_to_cpu(c->total_chunks),
        .send_chunks = le16_to_cpu(c->send_chunks),
        .pdir = le64_to_cpu(c->pdir_dma),
    };
    RdmaQp *qp;
    int ret;

    if (c->is_srq > 1 || c->sq_sig_all > 1) {
        return -EINVAL;
    }
    ret = rdma_rm_create_qp(&s->rm, &r, &qp);
    if (ret < 0) {
        return ret;
    }
    /*
     * Drivers before version 20 take the QP number for the handle, which
     * only works while they are equal (soft backend); a host device's QP
     * numbers are not handles.
     */
    if (s->driver_version < PVRDMA_VERSION_QPHANDLE && qp->qpn != qp->handle) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: create_qp: the driver "
                      "(version %u) needs QP number == handle, which the "
                      "%s backend cannot give\n", s->driver_version,
                      s->backend->ops->name);
        rdma_rm_destroy_qp(&s->rm, qp->handle);
        return -EOPNOTSUPP;
    }
    /* Drivers before version 20 expect the response without qp_handle. */
    if (s->driver_version < PVRDMA_VERSION_QPHANDLE) {
        PvrdmaCmdCreateQpResp *o = &rsp->create_qp_resp;

        o->qpn = cpu_to_le32(qp->qpn);
        o->max_send_wr = cpu_to_le32(qp->cap.max_send_wr);
        o->max_recv_wr = cpu_to_le32(qp->cap.max_recv_wr);
        o->max_send_sge = cpu_to_le32(qp->cap.max_send_sge);
        o->max_recv_sge = cpu_to_le32(qp->cap.max_recv_sge);
        o->max_inline_data = cpu_to_le32(qp->cap.max_inline_data);
    } else {
        PvrdmaCmdCreateQpRespV2 *o = &rsp->create_qp_resp_v2;

        o->qpn = cpu_to_le32(qp->qpn);
        o->qp_handle = cpu_to_le32(qp->handle);
        o->max_send_wr = cpu_to_le32(qp->cap.max_send_wr);
        o->max_recv_wr = cpu_to_le32(qp->cap.max_recv_wr);
        o->max_send_sge = cpu_to_le32(qp->cap.max_send_sge);
        o->max_recv_sge = cpu_to_le32(qp->cap.max_recv_sge);
        o->max_inline_data = cpu_to_le32(qp->cap.max_inline_data);
    }
    return 0;
}

static void pvrdma_ah_from_abi(RdmaAh *d, const PvrdmaAhAttr *a)
{
    memcpy(d->dgid, a->grh.dgid.raw, sizeof(d->dgid));
    /*
     * The ABI field has 32 bits, the GRH's and IPv6's flow label 20, and
     * no RoCE device puts more on the wire: the device keeps the low 20.
     * Verbs do not refuse a wider value (UCX asks for ~0 on RoCE), so
     * refusing it here would fail every UCX rc_verbs connection; keeping
     * it whole made the frame builder drop every packet of the QP.
     */
    d->flow_label = le32_to_cpu(a->grh.flow_label) & RDMA_FLOW_LABEL_MASK;
    d->sgid_index = a->grh.sgid_index;
    d->hop_limit = a->grh.hop_limit;
    d->traffic_class = a->grh.traffic_class;
    d->sl = a->sl;
    d->port_num = a->port_num;
    memcpy(d->dmac, a->dmac, sizeof(d->dmac));
    d->vlan_id = le16_to_cpu(a->vlan_id);
    d->has_grh = a->ah_flags & 1;
}

static void pvrdma_ah_to_abi(PvrdmaAhAttr *d, const RdmaAh *a)
{
    memcpy(d->grh.dgid.raw, a->dgid, sizeof(a->dgid));
    d->grh.flow_label = cpu_to_le32(a->flow_label);
    d->grh.sgid_index = a->sgid_index;
    d->grh.hop_limit = a->hop_limit;
    d->grh.traffic_class = a->traffic_class;
    d->sl = a->sl;
    d->port_num = a->port_num;
    memcpy(d->dmac, a->dmac, sizeof(d->dmac));
    d->vlan_id = cpu_to_le16(a->vlan_id);
    d->ah_flags = a->has_grh ? 1 : 0;
}

static int pvrdma_modify_qp(PvrdmaState *s, const PvrdmaCmdReq *req,
                            PvrdmaCmdResp *rsp)
{
    const PvrdmaQpAttr *a = &req->modify_qp.attrs;
    /* Out-of-range states become RDMA_QPS_MAX, which the core refuses. */
    RdmaQpAttr r = {
        .qp_state = MIN(le32_to_cpu(a->qp_state), RDMA_QPS_MAX),
        .cur_qp_state = MIN(le32_to_cpu(a->cur_qp_state), RDMA_QPS_MAX),
        .path_mtu = MIN(le32_to_cpu(a->path_mtu), 0xff),
        .path_mig_state = MIN(le32_to_cpu(a->path_mig_state), 0xff),
        .qkey = le32_to_cpu(a->qkey),
        .rq_psn = le32_to_cpu(a->rq_psn),
        .sq_psn = le32_to_cpu(a->sq_psn),
        .dest_qp_num = le32_to_cpu(a->dest_qp_num),
        .qp_access_flags = le32_to_cpu(a->qp_access_flags),
        .pkey_index = le16_to_cpu(a->pkey_index),
        .en_sqd_async_notify = a->en_sqd_async_notify,
        .max_rd_atomic = a->max_rd_atomic,
        .max_dest_rd_atomic = a->max_dest_rd_atomic,
        .min_rnr_timer = a->min_rnr_timer,
        .port_num = a->port_num,
        .timeout = a->timeout,
        .retry_cnt = a->retry_cnt,
        .rnr_retry = a->rnr_retry,
    };

    pvrdma_ah_from_abi(&r.ah, &a->ah_attr);
    return rdma_rm_modify_qp(&s->rm, le32_to_cpu(req->modify_qp.qp_handle),
                             le32_to_cpu(req->modify_qp.attr_mask), &r);
}

static int pvrdma_query_qp(PvrdmaState *s, const PvrdmaCmdReq *req,
                           PvrdmaCmdResp *rsp)
{
    PvrdmaQpAttr *a = &rsp->query_qp_resp.attrs;
    RdmaQpAttr r;
    RdmaQpCap cap;
    int ret = rdma_rm_query_qp(&s->rm, le32_to_cpu(req->query_qp.qp_handle),
                               &r, &cap);

    if (ret < 0) {
        return ret;
    }
    a->qp_state = cpu_to_le32(r.qp_state);
    a->cur_qp_state = cpu_to_le32(r.cur_qp_state);
    a->path_mtu = cpu_to_le32(r.path_mtu);
    a->path_mig_state = cpu_to_le32(r.path_mig_state);
    a->qkey = cpu_to_le32(r.qkey);
    a->rq_psn = cpu_to_le32(r.rq_psn);
    a->sq_psn = cpu_to_le32(r.sq_psn);
    a->dest_qp_num = cpu_to_le32(r.dest_qp_num);
    a->qp_access_flags = cpu_to_le32(r.qp_access_flags);
    a->pkey_index = cpu_to_le16(r.pkey_index);
    a->en_sqd_async_notify = r.en_sqd_async_notify;
    a->max_rd_atomic = r.max_rd_atomic;
    a->max_dest_rd_atomic = r.max_dest_rd_atomic;
    a->min_rnr_timer = r.min_rnr_timer;
    a->port_num = r.port_num;
    a->timeout = r.timeout;
    a->retry_cnt = r.retry_cnt;
    a->rnr_retry = r.rnr_retry;
    a->cap.max_send_wr = cpu_to_le32(cap.max_send_wr);
    a->cap.max_recv_wr = cpu_to_le32(cap.max_recv_wr);
    a->cap.max_send_sge = cpu_to_le32(cap.max_send_sge);
    a->cap.max_recv_sge = cpu_to_le32(cap.max_recv_sge);
    a->cap.max_inline_data = cpu_to_le32(cap.max_inline_data);
    pvrdma_ah_to_abi(&a->ah_attr, &r.ah);
    return 0;
}

static int pvrdma_destroy_qp(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    rsp->destroy_qp_resp.events_reported = cpu_to_le32(0);
    return rdma_rm_destroy_qp(&s->rm, le32_to_cpu(req->destroy_qp.qp_handle));
}

static int pvrdma_create_bind(PvrdmaState *s, const PvrdmaCmdReq *req,
                              PvrdmaCmdResp *rsp)
{
    const PvrdmaCmdCreateBind *c = &req->create_bind;
    int ret;

    /* Only the GID type the capabilities announce. */
    if (c->gid_type != pvrdma_gid_types(s)) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: create_bind: GID type %u, "
                      "device supports %u\n", c->gid_type,
                      pvrdma_gid_types(s));
        return -EINVAL;
    }
    ret = rdma_rm_add_gid(&s->rm, le32_to_cpu(c->index), c->new_gid,
                          c->gid_type, le32_to_cpu(c->mtu),
                          le32_to_cpu(c->vlan));
    /* Even on failure: the entry's previous GID may be gone. */
    pvrdma_gid_sync(s);
    return ret;
}

static int pvrdma_destroy_bind(PvrdmaState *s, const PvrdmaCmdReq *req,
                               PvrdmaCmdResp *rsp)
{
    int ret = rdma_rm_del_gid(&s->rm, le32_to_cpu(req->destroy_bind.index),
                              req->destroy_bind.dest_gid);

    pvrdma_gid_sync(s);
    return ret;
}

static int pvrdma_create_srq(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    const PvrdmaCmdCreateSrq *c = &req->create_srq;
    RdmaSrqReq r = {
        .pd_handle = le32_to_cpu(c->pd_handle),
        .max_wr = le32_to_cpu(c->attrs.max_wr),
        .max_sge = le32_to_cpu(c->attrs.max_sge),
        .srq_limit = le32_to_cpu(c->attrs.srq_limit),
        .srq_type = c->srq_type,
        .wqe_hdr = sizeof(PvrdmaRqWqeHdr),
        .sge_size = sizeof(PvrdmaSge),
        .nchunks = le32_to_cpu(c->nchunks),
        .pdir = le64_to_cpu(c->pdir_dma),
    };
    RdmaSrq *srq;
    int ret = rdma_rm_create_srq(&s->rm, &r, &srq);

    if (ret == 0) {
        rsp->create_srq_resp.srqn = cpu_to_le32(srq->handle);
    }
    return ret;
}

static int pvrdma_modify_srq(PvrdmaState *s, const PvrdmaCmdReq *req,
                             PvrdmaCmdResp *rsp)
{
    const PvrdmaCmdModifySrq *c = &req->modify_srq;

    return rdma_rm_modify_srq(&s->rm, le32_to_cpu(c->srq_handle),
                              le32_to_cpu(c->attr_mask),
                              le32_to_cpu(c->attrs.max_wr),
                              le32_to_cpu(c->attrs.srq_limit));
}

static int pvrdma_query_srq(PvrdmaState *s, const PvrdmaCmdReq *req,
                            PvrdmaCmdResp *rsp)
{
    RdmaSrq *srq = rdma_rm_get(&s->rm, RDMA_RES_SRQ,
                               le32_to_cpu(req->query_srq.srq_handle));

    if (!srq) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: query_srq: invalid SRQ\n");
        return -EINVAL;
    }
    rsp->query_srq_resp.attrs.max_wr = cpu_to_le32(srq->max_wr);
    rsp->query_srq_resp.attrs.max_sge = cpu_to_le32(srq->max_sge);
    rsp->query_srq_resp.attrs.srq_limit = cpu_to_le32(srq->srq_limit);
    return 0;
}

static int pvrdma_destroy_srq(PvrdmaState *s, const PvrdmaCmdReq *req,
                              PvrdmaCmdResp *rsp)
{
    return rdma_rm_destroy_srq(&s->rm,
                               le32_to_cpu(req->destroy_srq.srq_handle));
}

static const struct {
    const char *name;
    PvrdmaCmdFn fn;
    size_t rsp_size;
} pvrdma_cmds[PVRDMA_CMD_MAX] = {
#define CMD(id, fn, rsp) [PVRDMA_CMD_##id] = { #id, fn, sizeof(rsp) }
    CMD(QUERY_PORT, pvrdma_query_port, PvrdmaCmdQueryPortResp),
    CMD(QUERY_PKEY, pvrdma_query_pkey, PvrdmaCmdQueryPkeyResp),
    CMD(CREATE_PD, pvrdma_create_pd, PvrdmaCmdCreatePdResp),
    CMD(DESTROY_PD, pvrdma_destroy_pd, PvrdmaCmdRespHdr),
    CMD(CREATE_MR, pvrdma_create_mr, PvrdmaCmdCreateMrResp),
    CMD(DESTROY_MR, pvrdma_destroy_mr, PvrdmaCmdRespHdr),
    CMD(CREATE_CQ, pvrdma_create_cq, PvrdmaCmdCreateCqResp),
    CMD(RESIZE_CQ, pvrdma_resize_cq, PvrdmaCmdResizeCqResp),
    CMD(DESTROY_CQ, pvrdma_destroy_cq, PvrdmaCmdRespHdr),
    CMD(CREATE_QP, pvrdma_create_qp, PvrdmaCmdCreateQpRespV2),
    CMD(MODIFY_QP, pvrdma_modify_qp, PvrdmaCmdRespHdr),
    CMD(QUERY_QP, pvrdma_query_qp, PvrdmaCmdQueryQpResp),
    CMD(DESTROY_QP, pvrdma_destroy_qp, PvrdmaCmdDestroyQpResp),
    CMD(CREATE_UC, pvrdma_create_uc, PvrdmaCmdCreateUcResp),
    CMD(DESTROY_UC, pvrdma_destroy_uc, PvrdmaCmdRespHdr),
    CMD(CREATE_BIND, pvrdma_create_bind, PvrdmaCmdRespHdr),
    CMD(DESTROY_BIND, pvrdma_destroy_bind, PvrdmaCmdRespHdr),
    CMD(CREATE_SRQ, pvrdma_create_srq, PvrdmaCmdCreateSrqResp),
    CMD(MODIFY_SRQ, pvrdma_modify_srq, PvrdmaCmdRespHdr),
    CMD(QUERY_SRQ, pvrdma_query_srq, PvrdmaCmdQuerySrqResp),
    CMD(DESTROY_SRQ, pvrdma_destroy_srq, PvrdmaCmdRespHdr),
#undef CMD
};

void pvrdma_exec_cmd(PvrdmaState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    PvrdmaCmdReq req;
    PvrdmaCmdResp rsp;
    uint32_t cmd;
    int ret;

    /* CVE-2022-1050: no command slot before a DSR is loaded. */
    if (!s->dsr_loaded) {
        qemu_log_mask(LOG_GUEST_ERROR,
                      "pvrdma: REQUEST before a DSR was loaded\n");
        s->err = ENODEV;
        return;
    }
    if (!rdma_dma_read(pdev, s->cmd_slot, &req, sizeof(req))) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: command slot unreadable\n");
        s->err = EIO;
        return;
    }
    cmd = le32_to_cpu(req.hdr.cmd);
    if (cmd >= PVRDMA_CMD_MAX) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: unknown command %u\n", cmd);
        trace_pvrdma_cmd_unknown(cmd);
        s->err = EINVAL;
        return;
    }
    memset(&rsp, 0, sizeof(rsp));
    ret = pvrdma_cmds[cmd].fn(s, &req, &rsp);
    trace_pvrdma_cmd(pvrdma_cmds[cmd].name, ret);
    if (ret < 0) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: command %s failed: %s\n",
                      pvrdma_cmds[cmd].name, strerror(-ret));
    }
    rsp.hdr.response = req.hdr.response;   /* the driver's cookie, as is */
    rsp.hdr.ack = cpu_to_le32(PVRDMA_CMD_RESP(cmd));
    rsp.hdr.err = ret < 0 ? MIN(-ret, 0xff) : 0;
    if (!rdma_dma_write(pdev, s->resp_slot, &rsp, pvrdma_cmds[cmd].rsp_size)) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: response slot unwritable\n");
        s->err = EIO;
        return;
    }
    s->err = ret < 0 ? -ret : 0;
    if (ret == 0) {
        pvrdma_notify(s, PVRDMA_VECTOR_RESPONSE);
    }
}
