/*
 * RDMA device core: resources, handles, lifetime and the IB rules.
 *
 * Every function validates all its inputs before it changes anything
 * (validate, then apply); a failure is logged once as a guest error with
 * the reason and returned as a negative errno.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "rdma_rm.h"
#include "rdma_backend.h"
#include "trace.h"

#define rdma_rm_reject(op, err, why) ({                                  \
    qemu_log_mask(LOG_GUEST_ERROR, "rdma: %s: %s\n", (op), (why));       \
    trace_rdma_rm_reject((op), (why));                                   \
    (err);                                                               \
})

static const char *const rdma_res_names[RDMA_RES_MAX] = {
    [RDMA_RES_UC] = "uc", [RDMA_RES_PD] = "pd", [RDMA_RES_CQ] = "cq",
    [RDMA_RES_QP] = "qp", [RDMA_RES_SRQ] = "srq", [RDMA_RES_MR] = "mr",
};

const char *rdma_rm_type_name(RdmaResType type)
{
    return type < RDMA_RES_MAX ? rdma_res_names[type] : "object";
}

/* Handle tables */

static bool rdma_table_init(RdmaTable *t, uint32_t size, uint32_t first)
{
    t->slots = g_try_new0(void *, size);
    t->size = size;
    t->first = first;
    t->used = 0;
    return t->slots != NULL;
}

/* Lowest free handle from @start, or -ENOMEM when the table is full. */
static int64_t rdma_table_find_free_from(RdmaTable *t, uint32_t start)
{
    uint32_t h;

    for (h = MAX(start, t->first); h < t->size; h++) {
        if (!t->slots[h]) {
            return h;
        }
    }
    return -ENOMEM;
}

static int64_t rdma_table_find_free(RdmaTable *t)
{
    return rdma_table_find_free_from(t, t->first);
}

static void rdma_table_set(RdmaTable *t, uint32_t h, void *obj)
{
    assert(h < t->size && !t->slots[h] && obj);
    t->slots[h] = obj;
    t->used++;
}

static void rdma_table_clear(RdmaTable *t, uint32_t h)
{
    assert(h < t->size && t->slots[h]);
    t->slots[h] = NULL;
    t->used--;
}

void *rdma_rm_get(RdmaResources *rm, RdmaResType type, uint32_t handle)
{
    RdmaTable *t = &rm->tables[type];

    if (handle < t->first || handle >= t->size) {
        trace_rdma_rm_bad_handle(rdma_res_names[type], handle);
        return NULL;
    }
    if (!t->slots[handle]) {
        trace_rdma_rm_bad_handle(rdma_res_names[type], handle);
    }
    return t->slots[handle];
}

/* @qp's send queue has work: at the end of the list, once. */
void rdma_rm_sq_mark(RdmaResources *rm, RdmaQp *qp)
{
    if (!qp->sq_pending) {
        qp->sq_pending = true;
        QTAILQ_INSERT_TAIL(&rm->sq_work, qp, sq_next);
    }
}

/* The front-end takes up @qp's send queue (or the QP goes). */
void rdma_rm_sq_unmark(RdmaResources *rm, RdmaQp *qp)
{
    if (qp->sq_pending) {
        qp->sq_pending = false;
        QTAILQ_REMOVE(&rm->sq_work, qp, sq_next);
    }
}

/* The QP that has waited longest with work in its send queue, if any */
RdmaQp *rdma_rm_sq_first(RdmaResources *rm)
{
    return QTAILQ_FIRST(&rm->sq_work);
}

bool rdma_rm_init(RdmaResources *rm, PCIDevice *pdev, RdmaBackend *be,
                  const RdmaDevLimits *limits, const RdmaFrontOps *fe,
                  void *fe_opaque, Error **errp)
{
    /*
     * Handle 0 is never handed out: the guest uses context 0 for its
     * kernel and QPN 0 is the SMI QP, which RoCE does not have.  QP
     * handles double as QP numbers; 1 is kept for the GSI QP (see
     * rdma_rm_create_qp).
     */
    const uint32_t sizes[RDMA_RES_MAX] = {
        [RDMA_RES_UC] = limits->max_uc, [RDMA_RES_PD] = limits->max_pd,
        [RDMA_RES_CQ] = limits->max_cq, [RDMA_RES_QP] = limits->max_qp,
        [RDMA_RES_SRQ] = limits->max_srq, [RDMA_RES_MR] = limits->max_mr,
    };
    int i;

    memset(rm, 0, sizeof(*rm));
    QTAILQ_INIT(&rm->sq_work);
    rm->fe = fe;
    rm->fe_opaque = fe_opaque;
    rm->limits = *limits;
    rm->backend = be;
    rm->pdev = pdev;
    for (i = 0; i < RDMA_RES_MAX; i++) {
        if (!rdma_table_init(&rm->tables[i], MAX(sizes[i], 2), 1)) {
            error_setg(errp, "cannot allocate the %s table",
                       rdma_res_names[i]);
            rdma_rm_fini(rm);
            return false;
        }
    }
    rm->gids = g_new0(RdmaGid, limits->gid_tbl_len);
    rm->mr_gen = g_new0(uint8_t, rm->tables[RDMA_RES_MR].size);
    rdma_rm_mig_live_init(rm);
    return true;
}

void rdma_rm_fini(RdmaResources *rm)
{
    int i;

    rdma_rm_mig_live_fini(rm);
    rdma_rm_reset(rm);
    rdma_rm_mig_cleanup(rm);
    for (i = 0; i < RDMA_RES_MAX; i++) {
        g_free(rm->tables[i].slots);
        rm->tables[i].slots = NULL;
        rm->tables[i].size = 0;
    }
    g_free(rm->gids);
    rm->gids = NULL;
    g_free(rm->mr_gen);
    rm->mr_gen = NULL;
}

/* Forced teardown of one object, whatever references it still has. */
static void rdma_rm_free_qp(RdmaResources *rm, RdmaQp *qp);
static void rdma_rm_free_srq(RdmaResources *rm, RdmaSrq *srq);
static void rdma_rm_free_mr(RdmaResources *rm, RdmaMr *mr);
static void rdma_rm_free_cq(RdmaResources *rm, RdmaCq *cq);
static void rdma_rm_free_pd(RdmaResources *rm, RdmaPd *pd);

void rdma_rm_reset(RdmaResources *rm)
{
    RdmaTable *t;
    uint32_t h, i;

    /* Users before what they use: QPs, SRQs, MRs, CQs, PDs, contexts. */
    static const RdmaResType order[] = {
        RDMA_RES_QP, RDMA_RES_SRQ, RDMA_RES_MR, RDMA_RES_CQ, RDMA_RES_PD,
        RDMA_RES_UC,
    };

    for (i = 0; i < ARRAY_SIZE(order); i++) {
        t = &rm->tables[order[i]];
        for (h = 0; t->slots && h < t->size; h++) {
            void *obj = t->slots[h];

            if (!obj) {
                continue;
            }
            switch (order[i]) {
            case RDMA_RES_QP:
                rdma_rm_free_qp(rm, obj);
                break;
            case RDMA_RES_SRQ:
                rdma_rm_free_srq(rm, obj);
                break;
            case RDMA_RES_MR:
                rdma_rm_free_mr(rm, obj);
                break;
            case RDMA_RES_CQ:
                rdma_rm_free_cq(rm, obj);
                break;
            case RDMA_RES_PD:
                rdma_rm_free_pd(rm, obj);
                break;
            default:
                rdma_table_clear(t, h);
                g_free(obj);
                break;
            }
        }
    }
    for (i = 0; rm->gids && i < rm->limits.gid_tbl_len; i++) {
        if (rm->gids[i].valid) {
            rm->backend->ops->del_gid(rm->backend, i, &rm->gids[i]);
            rm->gids[i].valid = false;
        }
    }
    rm->mr_pages_total = 0;
}

/* Entry points (see rdma_rm.h) */

bool rdma_rm_enter(RdmaResources *rm)
{
    DeviceState *dev = DEVICE(rm->pdev);

    /* Unplugged from inside an entry point: the teardown is pending. */
    if (!rdma_dev_live(rm->pdev)) {
        return false;
    }
    if (rm->loading) {
        trace_rdma_rm_enter_refused("its state did not load");
        return false;
    }
    if (rm->depth++ == 0) {
        rm->guard_saved = dev->mem_reentrancy_guard.engaged_in_io;
        dev->mem_reentrancy_guard.engaged_in_io = true;
        rm->budget_wqes = RDMA_ENTRY_WQES;
        rm->budget_bytes = RDMA_ENTRY_BYTES;
        rm->entry_bytes = 0;
    }
    return true;
}

void rdma_rm_leave(RdmaResources *rm)
{
    DeviceState *dev = DEVICE(rm->pdev);

    assert(rm->depth);
    /* Still inside (depth 1): what is deferred runs under the guard too. */
    while (rm->depth == 1 && rm->deferred) {
        rm->deferred = false;
        trace_rdma_rm_deferred();
        rm->fe->deferred(rm->fe_opaque);
    }
    if (--rm->depth == 0) {
        dev->mem_reentrancy_guard.engaged_in_io = rm->guard_saved;
        rm->entry_bytes_max = MAX(rm->entry_bytes_max, rm->entry_bytes);
    }
}

bool rdma_rm_defer(RdmaResources *rm)
{
    if (!rm->depth) {
        return false;
    }
    rm->deferred = true;
    return true;
}

bool rdma_rm_stopping(RdmaResources *rm)
{
    return rm->deferred || !rdma_dev_live(rm->pdev);
}

bool rdma_rm_budget_left(RdmaResources *rm)
{
    return rm->budget_wqes && rm->budget_bytes && !rdma_rm_stopping(rm);
}

void rdma_rm_budget_charge(RdmaResources *rm, uint64_t bytes)
{
    rm->budget_wqes -= !!rm->budget_wqes;
    rm->budget_bytes -= MIN(bytes, rm->budget_bytes);
    rm->entry_bytes += bytes;
}

/* User contexts */

int rdma_rm_alloc_uc(RdmaResources *rm, uint32_t uar_index, uint32_t *handle)
{
    RdmaTable *t = &rm->tables[RDMA_RES_UC];
    int64_t h = rdma_table_find_free(t);
    RdmaUc *uc;

    if (h < 0) {
        return rdma_rm_reject("create_uc", -ENOMEM, "no free context");
    }
    uc = g_new0(RdmaUc, 1);
    uc->handle = h;
    uc->uar_index = uar_index;
    rdma_table_set(t, h, uc);
    *handle = h;
    return 0;
}

int rdma_rm_dealloc_uc(RdmaResources *rm, uint32_t handle)
{
    RdmaUc *uc = rdma_rm_get(rm, RDMA_RES_UC, handle);

    if (!uc) {
        return rdma_rm_reject("destroy_uc", -EINVAL, "invalid context");
    }
    if (uc->refs) {
        return rdma_rm_reject("destroy_uc", -EBUSY, "context in use");
    }
    rdma_table_clear(&rm->tables[RDMA_RES_UC], handle);
    g_free(uc);
    return 0;
}

/* Context 0 is the guest kernel; any other must exist. */
static bool rdma_rm_ctx_ok(RdmaResources *rm, uint32_t ctx_handle)
{
    return ctx_handle == 0 || rdma_rm_get(rm, RDMA_RES_UC, ctx_handle);
}

static void rdma_rm_ctx_ref(RdmaResources *rm, uint32_t ctx_handle, int d)
{
    RdmaUc *uc = ctx_handle ? rdma_rm_get(rm, RDMA_RES_UC, ctx_handle) : NULL;

    if (uc) {
        uc->refs += d;
    }
}

/* Protection domains */

static void rdma_rm_free_pd(RdmaResources *rm, RdmaPd *pd)
{
    if (rm->backend->ops->destroy_pd) {
        rm->backend->ops->destroy_pd(rm->backend, pd);
    }
    rdma_rm_ctx_ref(rm, pd->ctx_handle, -1);
    rdma_table_clear(&rm->tables[RDMA_RES_PD], pd->handle);
    g_free(pd);
}

int rdma_rm_alloc_pd(RdmaResources *rm, uint32_t ctx_handle, uint32_t *handle)
{
    RdmaTable *t = &rm->tables[RDMA_RES_PD];
    int64_t h;
    RdmaPd *pd;

    if (!rdma_rm_ctx_ok(rm, ctx_handle)) {
        return rdma_rm_reject("create_pd", -EINVAL, "invalid context");
    }
    h = rdma_table_find_free(t);
    if (h < 0) {
        return rdma_rm_reject("create_pd", -ENOMEM, "no free PD");
    }
    pd = g_new0(RdmaPd, 1);
    pd->handle = h;
    pd->ctx_handle = ctx_handle;
    if (rm->backend->ops->create_pd) {
        int ret = rm->backend->ops->create_pd(rm->backend, pd);

        if (ret < 0) {
            g_free(pd);
            return rdma_rm_reject("create_pd", ret, "backend refused the PD");
        }
    }
    rdma_rm_ctx_ref(rm, ctx_handle, 1);
    rdma_table_set(t, h, pd);
    *handle = h;
    return 0;
}

int rdma_rm_dealloc_pd(RdmaResources *rm, uint32_t handle)
{
    RdmaPd *pd = rdma_rm_get(rm, RDMA_RES_PD, handle);

    if (!pd) {
        return rdma_rm_reject("destroy_pd", -EINVAL, "invalid PD");
    }
    if (pd->refs) {
        return rdma_rm_reject("destroy_pd", -EBUSY, "PD in use");
    }
    rdma_rm_free_pd(rm, pd);
    return 0;
}

static void rdma_rm_pd_ref(RdmaResources *rm, uint32_t pd_handle, int d)
{
    RdmaPd *pd = rdma_rm_get(rm, RDMA_RES_PD, pd_handle);

    if (pd) {
        pd->refs += d;
    }
}

/*
 * An object ring: page 0 holds the ring state, @bytes of elements must fit
 * in the other pages, and the page count is bounded by the device.
 */
static int rdma_rm_check_ring(RdmaResources *rm, const char *op,
                              uint32_t nchunks, uint64_t bytes)
{
    if (nchunks < 2 || nchunks > rm->limits.max_ring_pages) {
        return rdma_rm_reject(op, -EINVAL, "page count out of range");
    }
    if (bytes > (uint64_t)(nchunks - 1) * RDMA_PAGE_SIZE) {
        return rdma_rm_reject(op, -EINVAL, "ring does not fit in the pages");
    }
    return 0;
}

/* Completion queues */

int rdma_rm_create_cq(RdmaResources *rm, const RdmaCqReq *req, RdmaCq **out)
{
    const RdmaDevLimits *l = &rm->limits;
    RdmaTable *t = &rm->tables[RDMA_RES_CQ];
    const char *why;
    RdmaCq *cq;
    int64_t h;
    int ret;

    if (!rdma_rm_ctx_ok(rm, req->ctx_handle)) {
        return rdma_rm_reject("create_cq", -EINVAL, "invalid context");
    }
    if (!rdma_is_pow2(req->cqe) || req->cqe > l->max_cqe) {
        return rdma_rm_reject("create_cq", -EINVAL,
                              "entries not a power of two within max_cqe");
    }
    ret = rdma_rm_check_ring(rm, "create_cq", req->nchunks,
                             (uint64_t)req->cqe * req->cqe_size);
    if (ret < 0) {
        return ret;
    }
    h = rdma_table_find_free(t);
    if (h < 0) {
        return rdma_rm_reject("create_cq", -ENOMEM, "no free CQ");
    }
    cq = g_new0(RdmaCq, 1);
    if (!rdma_ring_load(rm->pdev, req->pdir, req->nchunks, l->max_ring_pages,
                        &cq->ring, &why)) {
        g_free(cq);
        return rdma_rm_reject("create_cq", -EINVAL, why);
    }
    cq->handle = h;
    cq->ctx_handle = req->ctx_handle;
    cq->cqe = req->cqe;
    ret = rm->backend->ops->create_cq(rm->backend, cq);
    if (ret < 0) {
        rdma_page_list_free(&cq->ring);
        g_free(cq);
        return rdma_rm_reject("create_cq", ret, "backend refused the CQ");
    }
    rdma_rm_ctx_ref(rm, cq->ctx_handle, 1);
    rdma_table_set(t, h, cq);
    *out = cq;
    return 0;
}

static void rdma_rm_free_cq(RdmaResources *rm, RdmaCq *cq)
{
    rm->backend->ops->destroy_cq(rm->backend, cq);
    rdma_rm_ctx_ref(rm, cq->ctx_handle, -1);
    rdma_table_clear(&rm->tables[RDMA_RES_CQ], cq->handle);
    rdma_page_list_free(&cq->ring);
    g_free(cq);
}

int rdma_rm_destroy_cq(RdmaResources *rm, uint32_t handle)
{
    RdmaCq *cq = rdma_rm_get(rm, RDMA_RES_CQ, handle);

    if (!cq) {
        return rdma_rm_reject("destroy_cq", -EINVAL, "invalid CQ");
    }
    if (cq->refs) {
        return rdma_rm_reject("destroy_cq", -EBUSY, "CQ used by a QP");
    }
    rdma_rm_free_cq(rm, cq);
    return 0;
}

/* Shared receive queues */

/* Bytes of one WQE with @nsge scatter entries, rounded as the guest does. */
static uint64_t rdma_wqe_size(uint32_t hdr, uint32_t sge_size, uint32_t nsge)
{
    return pow2ceil((uint64_t)hdr + (uint64_t)sge_size * MAX(nsge, 1));
}

int rdma_rm_create_srq(RdmaResources *rm, const RdmaSrqReq *req,
                       RdmaSrq **out)
{
    const RdmaDevLimits *l = &rm->limits;
    RdmaTable *t = &rm->tables[RDMA_RES_SRQ];
    RdmaPd *pd = rdma_rm_get(rm, RDMA_RES_PD, req->pd_handle);
    uint32_t max_wr;
    const char *why;
    RdmaSrq *srq;
    int64_t h;
    int ret;

    if (!l->max_srq) {
        return rdma_rm_reject("create_srq", -EOPNOTSUPP, "SRQs disabled");
    }
    if (!pd) {
        return rdma_rm_reject("create_srq", -EINVAL, "invalid PD");
    }
    if (req->srq_type != 0) {
        return rdma_rm_reject("create_srq", -EOPNOTSUPP,
                              "only basic SRQs are supported");
    }
    if (req->max_wr == 0 || req->max_wr > l->max_srq_wr ||
        req->max_sge == 0 || req->max_sge > l->max_srq_sge) {
        return rdma_rm_reject("create_srq", -EINVAL,
                              "max_wr/max_sge out of range");
    }
    max_wr = pow2ceil(req->max_wr);
    if (req->srq_limit > max_wr) {
        return rdma_rm_reject("create_srq", -EINVAL, "limit above max_wr");
    }
    ret = rdma_rm_check_ring(rm, "create_srq", req->nchunks, max_wr *
                             rdma_wqe_size(req->wqe_hdr, req->sge_size,
                                           req->max_sge));
    if (ret < 0) {
        return ret;
    }
    h = rdma_table_find_free(t);
    if (h < 0) {
        return rdma_rm_reject("create_srq", -ENOMEM, "no free SRQ");
    }
    srq = g_new0(RdmaSrq, 1);
    if (!rdma_ring_load(rm->pdev, req->pdir, req->nchunks, l->max_ring_pages,
                        &srq->ring, &why)) {
        g_free(srq);
        return rdma_rm_reject("create_srq", -EINVAL, why);
    }
    srq->handle = h;
    srq->pd_handle = req->pd_handle;
    srq->max_wr = max_wr;
    srq->max_sge = req->max_sge;
    srq->srq_limit = req->srq_limit;
    srq->wqe_size = rdma_wqe_size(req->wqe_hdr, req->sge_size, req->max_sge);
    ret = rm->backend->ops->create_srq(rm->backend, srq);
    if (ret < 0) {
        rdma_page_list_free(&srq->ring);
        g_free(srq);
        return rdma_rm_reject("create_srq", ret, "backend refused the SRQ");
    }
    pd->refs++;
    rdma_table_set(t, h, srq);
    *out = srq;
    return 0;
}

int rdma_rm_modify_srq(RdmaResources *rm, uint32_t handle, uint32_t mask,
                       uint32_t max_wr, uint32_t srq_limit)
{
    RdmaSrq *srq = rdma_rm_get(rm, RDMA_RES_SRQ, handle);
    const uint32_t srq_max_wr = 1u << 0, srq_limit_bit = 1u << 1;

    if (!srq) {
        return rdma_rm_reject("modify_srq", -EINVAL, "invalid SRQ");
    }
    if (mask & ~(srq_max_wr | srq_limit_bit)) {
        return rdma_rm_reject("modify_srq", -EINVAL, "unknown mask bits");
    }
    if (mask & srq_max_wr) {
        return rdma_rm_reject("modify_srq", -EOPNOTSUPP,
                              "SRQ resize is not supported");
    }
    if ((mask & srq_limit_bit) && srq_limit > srq->max_wr) {
        return rdma_rm_reject("modify_srq", -EINVAL, "limit above max_wr");
    }
    if (mask & srq_limit_bit) {
        srq->srq_limit = srq_limit;
    }
    return rm->backend->ops->modify_srq(rm->backend, srq);
}

static void rdma_rm_free_srq(RdmaResources *rm, RdmaSrq *srq)
{
    rm->backend->ops->destroy_srq(rm->backend, srq);
    rdma_rm_pd_ref(rm, srq->pd_handle, -1);
    rdma_table_clear(&rm->tables[RDMA_RES_SRQ], srq->handle);
    rdma_page_list_free(&srq->ring);
    g_free(srq);
}

int rdma_rm_destroy_srq(RdmaResources *rm, uint32_t handle)
{
    RdmaSrq *srq = rdma_rm_get(rm, RDMA_RES_SRQ, handle);

    if (!srq) {
        return rdma_rm_reject("destroy_srq", -EINVAL, "invalid SRQ");
    }
    if (srq->refs) {
        return rdma_rm_reject("destroy_srq", -EBUSY, "SRQ used by a QP");
    }
    rdma_rm_free_srq(rm, srq);
    return 0;
}

/* Memory regions */

/*
 * A new key for the MR registered in slot @handle: the handle in the
 * upper 24 bits (never 0), the slot's generation in the low 8, which
 * changes with every registration, as rxe's and mlx5's key byte does.
 * So the key a peer kept after the guest deregistered an MR does not
 * reach the next MR registered in that slot, and keys are not all
 * guessable from the handles.
 */
static uint32_t rdma_mr_key(RdmaResources *rm, uint32_t handle)
{
    return handle << 8 | ++rm->mr_gen[handle];
}

static int rdma_rm_check_mr(RdmaResources *rm, const RdmaMrReq *req)
{
    const RdmaDevLimits *l = &rm->limits;
    uint64_t span;

    if (req->access & ~(RDMA_MR_ACCESS_ALL | RDMA_ACCESS_HUGETLB |
                        RDMA_ACCESS_OPTIONAL)) {
        return rdma_rm_reject("create_mr", -EINVAL,
                              "unknown or unsupported access flags");
    }
    /* IB: remote write and atomics need local write. */
    if ((req->access & (RDMA_ACCESS_REMOTE_WRITE |
                        RDMA_ACCESS_REMOTE_ATOMIC)) &&
        !(req->access & RDMA_ACCESS_LOCAL_WRITE)) {
        return rdma_rm_reject("create_mr", -EINVAL,
                              "remote write/atomic without local write");
    }
    switch (req->kind) {
    case RDMA_MR_DMA:
        return 0;
    case RDMA_MR_FRMR:
        if (req->nchunks == 0 || req->nchunks > l->max_fast_reg_pages) {
            return rdma_rm_reject("create_mr", -EINVAL,
                                  "fast-register page count out of range");
        }
        return 0;
    case RDMA_MR_USER:
        break;
    }
    if (req->length == 0 || req->length > l->max_mr_size) {
        return rdma_rm_reject("create_mr", -EINVAL, "length out of range");
    }
    if (req->start + req->length < req->start) {
        return rdma_rm_reject("create_mr", -EINVAL, "region wraps around");
    }
    /* The page list must cover exactly [start, start + length). */
    span = DIV_ROUND_UP((req->start & (RDMA_PAGE_SIZE - 1)) + req->length,
                        RDMA_PAGE_SIZE);
    if (req->nchunks != span) {
        return rdma_rm_reject("create_mr", -EINVAL,
                              "page count does not match the length");
    }
    if (rm->mr_pages_total + req->nchunks > l->max_mr_pages_total) {
        return rdma_rm_reject("create_mr", -ENOMEM,
                              "device-wide registration limit reached");
    }
    return 0;
}

int rdma_rm_create_mr(RdmaResources *rm, const RdmaMrReq *req, RdmaMr **out)
{
    RdmaTable *t = &rm->tables[RDMA_RES_MR];
    RdmaPd *pd = rdma_rm_get(rm, RDMA_RES_PD, req->pd_handle);
    const char *why;
    RdmaMr *mr;
    int64_t h;
    int ret;

    if (!pd) {
        return rdma_rm_reject("create_mr", -EINVAL, "invalid PD");
    }
    ret = rdma_rm_check_mr(rm, req);
    if (ret < 0) {
        return ret;
    }
    h = rdma_table_find_free(t);
    if (h < 0) {
        return rdma_rm_reject("create_mr", -ENOMEM, "no free MR");
    }
    mr = g_new0(RdmaMr, 1);
    if (req->kind == RDMA_MR_USER &&
        !rdma_pdir_load(rm->pdev, req->pdir, req->nchunks,
                        RDMA_PDIR_ENTRIES * RDMA_PDIR_ENTRIES, &mr->pages,
                        &why)) {
        g_free(mr);
        return rdma_rm_reject("create_mr", -EINVAL, why);
    }
    mr->handle = h;
    mr->pd_handle = req->pd_handle;
    mr->kind = req->kind;
    mr->access = req->access & RDMA_MR_ACCESS_ALL;
    mr->iova = req->kind == RDMA_MR_USER ? req->start : 0;
    mr->length = req->kind == RDMA_MR_USER ? req->length : 0;
    mr->max_pages = req->kind == RDMA_MR_FRMR ? req->nchunks : 0;
    mr->lkey = mr->rkey = rdma_mr_key(rm, h);
    mr->serial = ++rm->mr_serial;
    ret = rm->backend->ops->create_mr(rm->backend, mr);
    if (ret < 0) {
        rdma_page_list_free(&mr->pages);
        g_free(mr);
        return rdma_rm_reject("create_mr", ret, "backend refused the MR");
    }
    rm->mr_pages_total += mr->pages.npages;
    pd->refs++;
    rdma_table_set(t, h, mr);
    *out = mr;
    return 0;
}

static void rdma_rm_free_mr(RdmaResources *rm, RdmaMr *mr)
{
    rm->backend->ops->destroy_mr(rm->backend, mr);
    /* Only user MRs count: fast-register page lists are bounded apart. */
    if (mr->kind == RDMA_MR_USER) {
        rm->mr_pages_total -= mr->pages.npages;
    }
    rdma_rm_pd_ref(rm, mr->pd_handle, -1);
    rdma_table_clear(&rm->tables[RDMA_RES_MR], mr->handle);
    rdma_page_list_free(&mr->pages);
    g_free(mr);
}

int rdma_rm_destroy_mr(RdmaResources *rm, uint32_t handle)
{
    RdmaMr *mr = rdma_rm_get(rm, RDMA_RES_MR, handle);

    if (!mr) {
        return rdma_rm_reject("destroy_mr", -EINVAL, "invalid MR");
    }
    rdma_rm_free_mr(rm, mr);
    return 0;
}

/* Queue pairs */

static int rdma_rm_check_qp_objects(RdmaResources *rm, const RdmaQpReq *req)
{
    RdmaPd *pd = rdma_rm_get(rm, RDMA_RES_PD, req->pd_handle);
    RdmaCq *scq = rdma_rm_get(rm, RDMA_RES_CQ, req->send_cq_handle);
    RdmaCq *rcq = rdma_rm_get(rm, RDMA_RES_CQ, req->recv_cq_handle);

    if (!pd) {
        return rdma_rm_reject("create_qp", -EINVAL, "invalid PD");
    }
    if (!scq || !rcq) {
        return rdma_rm_reject("create_qp", -EINVAL, "invalid CQ");
    }
    /* A process may only use its own objects. */
    if (scq->ctx_handle != pd->ctx_handle ||
        rcq->ctx_handle != pd->ctx_handle) {
        return rdma_rm_reject("create_qp", -EINVAL,
                              "CQ of another context");
    }
    if (req->is_srq) {
        RdmaSrq *srq = rdma_rm_get(rm, RDMA_RES_SRQ, req->srq_handle);
        RdmaPd *srq_pd = srq ? rdma_rm_get(rm, RDMA_RES_PD, srq->pd_handle)
                             : NULL;

        if (!srq || !srq_pd) {
            return rdma_rm_reject("create_qp", -EINVAL, "invalid SRQ");
        }
        if (srq_pd->ctx_handle != pd->ctx_handle) {
            return rdma_rm_reject("create_qp", -EINVAL,
                                  "SRQ of another context");
        }
    }
    return 0;
}

static int rdma_rm_check_qp_sizes(RdmaResources *rm, const RdmaQpReq *req)
{
    const RdmaDevLimits *l = &rm->limits;
    uint64_t send_bytes, recv_bytes;
    uint32_t recv_chunks;

    if (req->max_send_wr > l->max_qp_wr || req->max_send_sge > l->max_sge ||
        (!req->is_srq && (req->max_recv_wr > l->max_qp_wr ||
                          req->max_recv_sge > l->max_sge))) {
        return rdma_rm_reject("create_qp", -EINVAL,
                              "queue sizes above the device limits");
    }
    if (req->max_inline_data > RDMA_PAGE_SIZE) {
        return rdma_rm_reject("create_qp", -EINVAL, "max_inline_data too big");
    }
    if (req->access_flags & ~RDMA_QP_ACCESS_ALL) {
        return rdma_rm_reject("create_qp", -EINVAL, "unknown access flags");
    }
    /* Pages: one ring-state page, then send pages, then receive pages. */
    if (req->total_chunks > l->max_ring_pages || req->send_chunks == 0 ||
        req->send_chunks >= req->total_chunks) {
        return rdma_rm_reject("create_qp", -EINVAL, "page counts invalid");
    }
    recv_chunks = req->total_chunks - 1 - req->send_chunks;
    send_bytes = pow2ceil(MAX(req->max_send_wr, 1)) *
                 rdma_wqe_size(req->send_wqe_hdr, req->sge_size,
                               req->max_send_sge);
    if (send_bytes > (uint64_t)req->send_chunks * RDMA_PAGE_SIZE) {
        return rdma_rm_reject("create_qp", -EINVAL,
                              "send ring does not fit in its pages");
    }
    if (!req->is_srq) {
        recv_bytes = pow2ceil(MAX(req->max_recv_wr, 1)) *
                     rdma_wqe_size(req->recv_wqe_hdr, req->sge_size,
                                   req->max_recv_sge);
        if (recv_bytes > (uint64_t)recv_chunks * RDMA_PAGE_SIZE) {
            return rdma_rm_reject("create_qp", -EINVAL,
                                  "receive ring does not fit in its pages");
        }
    }
    return 0;
}

int rdma_rm_create_qp(RdmaResources *rm, const RdmaQpReq *req, RdmaQp **out)
{
    RdmaTable *t = &rm->tables[RDMA_RES_QP];
    const char *why;
    RdmaQp *qp;
    int64_t h;
    int ret;

    if (req->type != RDMA_QPT_RC && req->type != RDMA_QPT_UD &&
        req->type != RDMA_QPT_GSI) {
        return rdma_rm_reject("create_qp", -EOPNOTSUPP,
                              "QP type not supported (RC, UD, GSI only)");
    }
    ret = rdma_rm_check_qp_objects(rm, req);
    if (ret == 0) {
        ret = rdma_rm_check_qp_sizes(rm, req);
    }
    if (ret < 0) {
        return ret;
    }
    /*
     * The QP handle is also the QP number: drivers older than
     * version 20 use the number as handle, and QPN 1 is the GSI QP.
     */
    if (req->type == RDMA_QPT_GSI) {
        if (t->slots[RDMA_GSI_QPN]) {
            return rdma_rm_reject("create_qp", -EBUSY,
                                  "the GSI QP exists already");
        }
        h = RDMA_GSI_QPN;
    } else {
        h = rdma_table_find_free_from(t, RDMA_FIRST_QPN);
        if (h < 0) {
            return rdma_rm_reject("create_qp", -ENOMEM, "no free QP");
        }
    }
    qp = g_new0(RdmaQp, 1);
    if (!rdma_ring_load(rm->pdev, req->pdir, req->total_chunks,
                        rm->limits.max_ring_pages, &qp->ring, &why)) {
        g_free(qp);
        return rdma_rm_reject("create_qp", -EINVAL, why);
    }
    qp->handle = h;
    qp->qpn = h;
    qp->type = req->type;
    qp->pd_handle = req->pd_handle;
    qp->send_cq_handle = req->send_cq_handle;
    qp->recv_cq_handle = req->recv_cq_handle;
    qp->is_srq = req->is_srq;
    qp->srq_handle = req->is_srq ? req->srq_handle : 0;
    qp->sq_sig_all = req->sq_sig_all;
    qp->send_pages = req->send_chunks;
    qp->cap.max_send_wr = pow2ceil(MAX(req->max_send_wr, 1));
    qp->cap.max_send_sge = MAX(req->max_send_sge, 1);
    qp->cap.max_recv_wr = req->is_srq ? 0 : pow2ceil(MAX(req->max_recv_wr, 1));
    qp->cap.max_recv_sge = req->is_srq ? 0 : MAX(req->max_recv_sge, 1);
    qp->cap.max_inline_data = req->max_inline_data;
    qp->send_wqe_size = rdma_wqe_size(req->send_wqe_hdr, req->sge_size,
                                      req->max_send_sge);
    qp->recv_wqe_size = req->is_srq ? 0 :
                        rdma_wqe_size(req->recv_wqe_hdr, req->sge_size,
                                      req->max_recv_sge);
    qp->attr.qp_state = RDMA_QPS_RESET;
    qp->attr.qp_access_flags = req->access_flags;
    qp->attr.port_num = 1;
    qp->attr.path_mtu = 1;
    ret = rm->backend->ops->create_qp(rm->backend, qp);
    if (ret < 0) {
        rdma_page_list_free(&qp->ring);
        g_free(qp);
        return rdma_rm_reject("create_qp", ret, "backend refused the QP");
    }
    rdma_rm_pd_ref(rm, qp->pd_handle, 1);
    ((RdmaCq *)rdma_rm_get(rm, RDMA_RES_CQ, qp->send_cq_handle))->refs++;
    ((RdmaCq *)rdma_rm_get(rm, RDMA_RES_CQ, qp->recv_cq_handle))->refs++;
    if (qp->is_srq) {
        ((RdmaSrq *)rdma_rm_get(rm, RDMA_RES_SRQ, qp->srq_handle))->refs++;
    }
    rdma_table_set(t, h, qp);
    *out = qp;
    return 0;
}

static void rdma_rm_free_qp(RdmaResources *rm, RdmaQp *qp)
{
    RdmaCq *scq = rdma_rm_get(rm, RDMA_RES_CQ, qp->send_cq_handle);
    RdmaCq *rcq = rdma_rm_get(rm, RDMA_RES_CQ, qp->recv_cq_handle);

    rdma_rm_sq_unmark(rm, qp);
    rm->backend->ops->destroy_qp(rm->backend, qp);
    scq->refs--;
    rcq->refs--;
    if (qp->is_srq) {
        ((RdmaSrq *)rdma_rm_get(rm, RDMA_RES_SRQ, qp->srq_handle))->refs--;
    }
    rdma_rm_pd_ref(rm, qp->pd_handle, -1);
    rdma_table_clear(&rm->tables[RDMA_RES_QP], qp->handle);
    rdma_page_list_free(&qp->ring);
    g_free(qp);
}

int rdma_rm_destroy_qp(RdmaResources *rm, uint32_t handle)
{
    RdmaQp *qp = rdma_rm_get(rm, RDMA_RES_QP, handle);

    if (!qp) {
        return rdma_rm_reject("destroy_qp", -EINVAL, "invalid QP");
    }
    rdma_rm_free_qp(rm, qp);
    return 0;
}

/*
 * The IB QP state machine (IB spec 1.3, 10.3.1 and table 91): for each
 * legal transition, the attributes it requires and those it allows, by QP
 * type.  Transitions to RESET and ERR are legal from every state.
 */
typedef struct RdmaQpTransition {
    bool valid;
    uint32_t req[RDMA_QPT_UD + 1];
    uint32_t opt[RDMA_QPT_UD + 1];
} RdmaQpTransition;

#define QPT_UD_GSI(ud, gsi) [RDMA_QPT_UD] = (ud), [RDMA_QPT_GSI] = (gsi)

static const RdmaQpTransition rdma_qp_table[RDMA_QPS_MAX][RDMA_QPS_MAX] = {
    [RDMA_QPS_RESET] = {
        [RDMA_QPS_RESET] = { .valid = true },
        [RDMA_QPS_INIT] = {
            .valid = true,
            .req = {
                QPT_UD_GSI(RDMA_QP_PKEY_INDEX | RDMA_QP_PORT | RDMA_QP_QKEY,
                           RDMA_QP_PKEY_INDEX | RDMA_QP_QKEY),
                [RDMA_QPT_RC] = RDMA_QP_PKEY_INDEX | RDMA_QP_PORT |
                                RDMA_QP_ACCESS_FLAGS,
            },
        },
    },
    [RDMA_QPS_INIT] = {
        [RDMA_QPS_INIT] = {
            .valid = true,
            .opt = {
                QPT_UD_GSI(RDMA_QP_PKEY_INDEX | RDMA_QP_PORT | RDMA_QP_QKEY,
                           RDMA_QP_PKEY_INDEX | RDMA_QP_QKEY),
                [RDMA_QPT_RC] = RDMA_QP_PKEY_INDEX | RDMA_QP_PORT |
                                RDMA_QP_ACCESS_FLAGS,
            },
        },
        [RDMA_QPS_RTR] = {
            .valid = true,
            .req = {
                [RDMA_QPT_RC] = RDMA_QP_AV | RDMA_QP_PATH_MTU |
                                RDMA_QP_DEST_QPN | RDMA_QP_RQ_PSN |
                                RDMA_QP_MAX_DEST_RD_ATOMIC |
                                RDMA_QP_MIN_RNR_TIMER,
            },
            .opt = {
                QPT_UD_GSI(RDMA_QP_PKEY_INDEX | RDMA_QP_QKEY,
                           RDMA_QP_PKEY_INDEX | RDMA_QP_QKEY),
                [RDMA_QPT_RC] = RDMA_QP_ALT_PATH | RDMA_QP_ACCESS_FLAGS |
                                RDMA_QP_PKEY_INDEX,
            },
        },
    },
    [RDMA_QPS_RTR] = {
        [RDMA_QPS_RTS] = {
            .valid = true,
            .req = {
                QPT_UD_GSI(RDMA_QP_SQ_PSN, RDMA_QP_SQ_PSN),
                [RDMA_QPT_RC] = RDMA_QP_TIMEOUT | RDMA_QP_RETRY_CNT |
                                RDMA_QP_RNR_RETRY | RDMA_QP_SQ_PSN |
                                RDMA_QP_MAX_QP_RD_ATOMIC,
            },
            .opt = {
                QPT_UD_GSI(RDMA_QP_CUR_STATE | RDMA_QP_QKEY,
                           RDMA_QP_CUR_STATE | RDMA_QP_QKEY),
                [RDMA_QPT_RC] = RDMA_QP_CUR_STATE | RDMA_QP_ALT_PATH |
                                RDMA_QP_ACCESS_FLAGS |
                                RDMA_QP_MIN_RNR_TIMER |
                                RDMA_QP_PATH_MIG_STATE,
            },
        },
    },
    [RDMA_QPS_RTS] = {
        [RDMA_QPS_RTS] = {
            .valid = true,
            .opt = {
                QPT_UD_GSI(RDMA_QP_CUR_STATE | RDMA_QP_QKEY,
                           RDMA_QP_CUR_STATE | RDMA_QP_QKEY),
                [RDMA_QPT_RC] = RDMA_QP_CUR_STATE | RDMA_QP_ACCESS_FLAGS |
                                RDMA_QP_ALT_PATH | RDMA_QP_PATH_MIG_STATE |
                                RDMA_QP_MIN_RNR_TIMER,
            },
        },
        [RDMA_QPS_SQD] = {
            .valid = true,
            .opt = {
                QPT_UD_GSI(RDMA_QP_EN_SQD_ASYNC_NOTIFY,
                           RDMA_QP_EN_SQD_ASYNC_NOTIFY),
                [RDMA_QPT_RC] = RDMA_QP_EN_SQD_ASYNC_NOTIFY,
            },
        },
    },
    [RDMA_QPS_SQD] = {
        [RDMA_QPS_RTS] = {
            .valid = true,
            .opt = {
                QPT_UD_GSI(RDMA_QP_CUR_STATE | RDMA_QP_QKEY,
                           RDMA_QP_CUR_STATE | RDMA_QP_QKEY),
                [RDMA_QPT_RC] = RDMA_QP_CUR_STATE | RDMA_QP_ALT_PATH |
                                RDMA_QP_ACCESS_FLAGS |
                                RDMA_QP_MIN_RNR_TIMER |
                                RDMA_QP_PATH_MIG_STATE,
            },
        },
        [RDMA_QPS_SQD] = {
            .valid = true,
            .opt = {
                QPT_UD_GSI(RDMA_QP_PKEY_INDEX | RDMA_QP_QKEY,
                           RDMA_QP_PKEY_INDEX | RDMA_QP_QKEY),
                [RDMA_QPT_RC] = RDMA_QP_PORT | RDMA_QP_AV |
                                RDMA_QP_TIMEOUT | RDMA_QP_RETRY_CNT |
                                RDMA_QP_RNR_RETRY |
                                RDMA_QP_MAX_QP_RD_ATOMIC |
                                RDMA_QP_MAX_DEST_RD_ATOMIC |
                                RDMA_QP_ALT_PATH | RDMA_QP_ACCESS_FLAGS |
                                RDMA_QP_PKEY_INDEX |
                                RDMA_QP_MIN_RNR_TIMER |
                                RDMA_QP_PATH_MIG_STATE,
            },
        },
    },
    [RDMA_QPS_SQE] = {
        [RDMA_QPS_RTS] = {
            .valid = true,
            .opt = {
                QPT_UD_GSI(RDMA_QP_CUR_STATE | RDMA_QP_QKEY,
                           RDMA_QP_CUR_STATE | RDMA_QP_QKEY),
            },
        },
    },
};

bool rdma_qp_transition_ok(RdmaQpType type, RdmaQpState cur,
                           RdmaQpState next, uint32_t mask)
{
    const RdmaQpTransition *tr;
    uint32_t req, opt;

    if (cur >= RDMA_QPS_MAX || next >= RDMA_QPS_MAX || type > RDMA_QPT_UD) {
        return false;
    }
    /* Reset and error are reachable from anywhere, with no attributes. */
    if (next == RDMA_QPS_RESET || next == RDMA_QPS_ERR) {
        return !(mask & ~(RDMA_QP_STATE | RDMA_QP_CUR_STATE));
    }
    tr = &rdma_qp_table[cur][next];
    if (!tr->valid) {
        return false;
    }
    req = tr->req[type];
    opt = tr->opt[type];
    if ((mask & req) != req) {
        return false;
    }
    return !(mask & ~(req | opt | RDMA_QP_STATE));
}

/* Why the values of @a that @mask selects are out of range, or NULL. */
static const char *rdma_rm_qp_values_why(RdmaResources *rm, uint32_t mask,
                                         const RdmaQpAttr *a)
{
    const RdmaDevLimits *l = &rm->limits;

    if ((mask & RDMA_QP_STATE) && a->qp_state >= RDMA_QPS_MAX) {
        return "invalid state";
    }
    if ((mask & RDMA_QP_PKEY_INDEX) && a->pkey_index >= l->max_pkeys) {
        return "pkey_index out of range";
    }
    if ((mask & RDMA_QP_PORT) && a->port_num != 1) {
        return "no such port";
    }
    if ((mask & RDMA_QP_ACCESS_FLAGS) &&
        (a->qp_access_flags & ~RDMA_QP_ACCESS_ALL)) {
        return "unknown access flags";
    }
    if ((mask & RDMA_QP_AV) &&
        (a->ah.sgid_index >= l->gid_tbl_len ||
         a->ah.flow_label > RDMA_FLOW_LABEL_MASK ||
         (a->ah.port_num != 0 && a->ah.port_num != 1))) {
        return "invalid address vector";
    }
    if ((mask & RDMA_QP_PATH_MTU) &&
        (a->path_mtu < 1 || a->path_mtu > l->max_mtu)) {
        return "path MTU out of range";
    }
    if (((mask & RDMA_QP_TIMEOUT) && a->timeout > 31) ||
        ((mask & RDMA_QP_RETRY_CNT) && a->retry_cnt > 7) ||
        ((mask & RDMA_QP_RNR_RETRY) && a->rnr_retry > 7) ||
        ((mask & RDMA_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31) ||
        ((mask & RDMA_QP_PATH_MIG_STATE) && a->path_mig_state > 2)) {
        return "timer/retry out of range";
    }
    if (((mask & RDMA_QP_RQ_PSN) && a->rq_psn > RDMA_MAX_PSN) ||
        ((mask & RDMA_QP_SQ_PSN) && a->sq_psn > RDMA_MAX_PSN) ||
        ((mask & RDMA_QP_DEST_QPN) && a->dest_qp_num > RDMA_MAX_QPN)) {
        return "PSN or QPN above 24 bits";
    }
    if (((mask & RDMA_QP_MAX_QP_RD_ATOMIC) &&
         a->max_rd_atomic > l->max_qp_init_rd_atom) ||
        ((mask & RDMA_QP_MAX_DEST_RD_ATOMIC) &&
         a->max_dest_rd_atomic > l->max_qp_rd_atom)) {
        return "RDMA read/atomic depth above the limit";
    }
    return NULL;
}

static int rdma_rm_check_qp_attr(RdmaResources *rm, RdmaQp *qp, uint32_t mask,
                                 const RdmaQpAttr *a)
{
    RdmaQpState cur = qp->attr.qp_state;
    RdmaQpState next;
    const char *why;

    if (mask & ~RDMA_QP_ATTR_ALL) {
        return rdma_rm_reject("modify_qp", -EINVAL, "unknown mask bits");
    }
    why = rdma_rm_qp_values_why(rm, mask & RDMA_QP_STATE, a);
    if (why) {
        return rdma_rm_reject("modify_qp", -EINVAL, why);
    }
    if ((mask & RDMA_QP_CUR_STATE) && a->cur_qp_state != cur) {
        return rdma_rm_reject("modify_qp", -EINVAL,
                              "cur_qp_state differs from the QP's state");
    }
    next = (mask & RDMA_QP_STATE) ? a->qp_state : cur;
    if (!rdma_qp_transition_ok(qp->type, cur, next, mask)) {
        return rdma_rm_reject("modify_qp", -EINVAL,
                              "transition or attribute mask not allowed");
    }
    if (mask & (RDMA_QP_ALT_PATH | RDMA_QP_CAP)) {
        return rdma_rm_reject("modify_qp", -EOPNOTSUPP,
                              "alternate path and resize are not supported");
    }
    why = rdma_rm_qp_values_why(rm, mask & ~RDMA_QP_STATE, a);
    return why ? rdma_rm_reject("modify_qp", -EINVAL, why) : 0;
}

static void rdma_rm_apply_qp_attr(RdmaQpAttr *d, uint32_t mask,
                                  const RdmaQpAttr *a)
{
#define APPLY(bit, field)               \
    do {                                \
        if (mask & (bit)) {             \
            d->field = a->field;        \
        }                               \
    } while (0)
    APPLY(RDMA_QP_STATE, qp_state);
    APPLY(RDMA_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
    APPLY(RDMA_QP_ACCESS_FLAGS, qp_access_flags);
    APPLY(RDMA_QP_PKEY_INDEX, pkey_index);
    APPLY(RDMA_QP_PORT, port_num);
    APPLY(RDMA_QP_QKEY, qkey);
    APPLY(RDMA_QP_AV, ah);
    APPLY(RDMA_QP_PATH_MTU, path_mtu);
    APPLY(RDMA_QP_TIMEOUT, timeout);
    APPLY(RDMA_QP_RETRY_CNT, retry_cnt);
    APPLY(RDMA_QP_RNR_RETRY, rnr_retry);
    APPLY(RDMA_QP_RQ_PSN, rq_psn);
    APPLY(RDMA_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
    APPLY(RDMA_QP_MIN_RNR_TIMER, min_rnr_timer);
    APPLY(RDMA_QP_SQ_PSN, sq_psn);
    APPLY(RDMA_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
    APPLY(RDMA_QP_PATH_MIG_STATE, path_mig_state);
    APPLY(RDMA_QP_DEST_QPN, dest_qp_num);
#undef APPLY
}

int rdma_rm_modify_qp(RdmaResources *rm, uint32_t handle, uint32_t mask,
                      const RdmaQpAttr *attr)
{
    RdmaQp *qp = rdma_rm_get(rm, RDMA_RES_QP, handle);
    RdmaQpAttr next;
    RdmaQpState cur;
    int ret;

    if (!qp) {
        return rdma_rm_reject("modify_qp", -EINVAL, "invalid QP");
    }
    ret = rdma_rm_check_qp_attr(rm, qp, mask, attr);
    if (ret < 0) {
        return ret;
    }
    next = qp->attr;
    rdma_rm_apply_qp_attr(&next, mask, attr);
    if (next.qp_state == RDMA_QPS_RESET) {
        /* Back to RESET: the QP forgets its connection. */
        next.sq_psn = next.rq_psn = next.dest_qp_num = 0;
    }
    ret = rm->backend->ops->modify_qp(rm->backend, qp, mask, &next);
    if (ret < 0) {
        return rdma_rm_reject("modify_qp", ret, "backend refused the change");
    }
    trace_rdma_rm_qp_state(qp->qpn, qp->attr.qp_state, next.qp_state);
    cur = qp->attr.qp_state;
    qp->attr = next;
    if (next.qp_state == RDMA_QPS_ERR && cur != RDMA_QPS_ERR) {
        rm->backend->ops->flush_qp(rm->backend, qp);
        rm->fe->qp_flush(rm->fe_opaque, qp);
        return 0;
    }
    /*
     * Receives posted in RESET, which the QP can take from INIT on
     * (ibverbs hands them to the host QP then), only now that the new
     * state is committed: a bad one moves the QP to ERR, and nothing here
     * may write the state over that (AUDIT 11).  Only on entering INIT:
     * later the RECV doorbell hands them over, and the soft backend would
     * take a call here as a reason to retry senders in RNR early.
     */
    if ((mask & RDMA_QP_STATE) && next.qp_state == RDMA_QPS_INIT &&
        cur == RDMA_QPS_RESET && !qp->is_srq) {
        rm->backend->ops->recv_posted(rm->backend, qp, NULL);
    }
    if (qp->attr.qp_state == RDMA_QPS_RTS) {
        rm->fe->kick_send(rm->fe_opaque, qp);
    }
    return 0;
}

void rdma_rm_qp_error(RdmaResources *rm, RdmaQp *qp, RdmaEvent ev)
{
    if (qp->attr.qp_state == RDMA_QPS_ERR) {
        return;
    }
    trace_rdma_rm_qp_state(qp->qpn, qp->attr.qp_state, RDMA_QPS_ERR);
    qp->attr.qp_state = RDMA_QPS_ERR;
    rm->backend->ops->flush_qp(rm->backend, qp);
    rm->fe->qp_flush(rm->fe_opaque, qp);
    if (ev != RDMA_EVENT_NONE) {
        rm->fe->event(rm->fe_opaque, ev, qp->handle);
    }
}

void rdma_rm_qp_send_error(RdmaResources *rm, RdmaQp *qp, RdmaEvent ev)
{
    if (qp->type == RDMA_QPT_RC) {
        rdma_rm_qp_error(rm, qp, ev);
        return;
    }
    /*
     * UD and GSI: the send queue stops in SQE and receives go on (IBA
     * 10.3.1); the guest's MAD layer moves QP1 back to RTS from there.
     */
    if (qp->attr.qp_state != RDMA_QPS_RTS) {
        return;
    }
    trace_rdma_rm_qp_state(qp->qpn, qp->attr.qp_state, RDMA_QPS_SQE);
    qp->attr.qp_state = RDMA_QPS_SQE;
    rm->backend->ops->flush_qp(rm->backend, qp);
    rm->fe->qp_flush(rm->fe_opaque, qp);
}

RdmaQp *rdma_rm_qp_by_num(RdmaResources *rm, uint32_t qpn)
{
    RdmaTable *t = &rm->tables[RDMA_RES_QP];

    /* QP numbers are QP handles. */
    return qpn < t->size ? t->slots[qpn] : NULL;
}

RdmaMr *rdma_rm_mr_by_key(RdmaResources *rm, uint32_t key)
{
    RdmaTable *t = &rm->tables[RDMA_RES_MR];
    uint32_t h = key >> 8;
    RdmaMr *mr = h < t->size ? t->slots[h] : NULL;

    return mr && (mr->lkey == key || mr->rkey == key) ? mr : NULL;
}

bool rdma_rm_gid_is_local(RdmaResources *rm, const uint8_t *gid)
{
    uint32_t i;

    for (i = 0; i < rm->limits.gid_tbl_len; i++) {
        if (rm->gids[i].valid && !memcmp(rm->gids[i].gid, gid, 16)) {
            return true;
        }
    }
    return false;
}

/* Catch up with a backend QP that failed on its own (qp_state op). */
static void rdma_rm_qp_sync(RdmaResources *rm, RdmaQp *qp)
{
    int st;

    if (!rm->backend->ops->qp_state) {
        return;
    }
    st = rm->backend->ops->qp_state(rm->backend, qp);
    if (st == RDMA_QPS_ERR) {
        rdma_rm_qp_error(rm, qp, RDMA_EVENT_NONE);
    } else if (st == RDMA_QPS_SQE && qp->attr.qp_state == RDMA_QPS_RTS) {
        rdma_rm_qp_send_error(rm, qp, RDMA_EVENT_NONE);
    }
}

int rdma_rm_query_qp(RdmaResources *rm, uint32_t handle, RdmaQpAttr *attr,
                     RdmaQpCap *cap)
{
    RdmaQp *qp = rdma_rm_get(rm, RDMA_RES_QP, handle);

    if (!qp) {
        return rdma_rm_reject("query_qp", -EINVAL, "invalid QP");
    }
    rdma_rm_qp_sync(rm, qp);
    *attr = qp->attr;
    attr->cur_qp_state = qp->attr.qp_state;
    *cap = qp->cap;
    return 0;
}

/* GID table */

int rdma_rm_add_gid(RdmaResources *rm, uint32_t index, const uint8_t *gid,
                    uint8_t type, uint32_t mtu, uint32_t vlan)
{
    RdmaGid g = { .valid = true, .type = type, .mtu = mtu, .vlan = vlan };
    int ret;

    if (index >= rm->limits.gid_tbl_len) {
        return rdma_rm_reject("create_bind", -EINVAL, "GID index out of range");
    }
    memcpy(g.gid, gid, sizeof(g.gid));
    if (rm->gids[index].valid) {
        rm->backend->ops->del_gid(rm->backend, index, &rm->gids[index]);
        rm->gids[index].valid = false;
    }
    ret = rm->backend->ops->add_gid(rm->backend, index, &g);
    if (ret < 0) {
        return rdma_rm_reject("create_bind", ret, "backend refused the GID");
    }
    rm->gids[index] = g;
    return 0;
}

int rdma_rm_del_gid(RdmaResources *rm, uint32_t index, const uint8_t *gid)
{
    if (index >= rm->limits.gid_tbl_len) {
        return rdma_rm_reject("destroy_bind", -EINVAL,
                              "GID index out of range");
    }
    if (!rm->gids[index].valid) {
        return rdma_rm_reject("destroy_bind", -EINVAL, "GID entry is empty");
    }
    if (memcmp(rm->gids[index].gid, gid, 16)) {
        return rdma_rm_reject("destroy_bind", -EINVAL,
                              "GID differs from the entry");
    }
    rm->backend->ops->del_gid(rm->backend, index, &rm->gids[index]);
    rm->gids[index].valid = false;
    return 0;
}

/*
 * Migration: objects rebuilt from the records of an incoming stream
 * (rdma_rm_vmstate.c).  A record is hostile input, like the command that
 * created the object: it must pass the checks of that command, find the
 * objects it refers to among those restored before it, and keep the
 * handle, keys and QP number it had, which nothing else may hold.
 */

static const char *rdma_rm_restore_handle(RdmaResources *rm, RdmaResType type,
                                          uint32_t handle)
{
    RdmaTable *t = &rm->tables[type];

    if (handle < t->first || handle >= t->size) {
        return "handle out of range";
    }
    return t->slots[handle] ? "handle used twice" : NULL;
}

static const char *rdma_rm_restore_uc(RdmaResources *rm, const RdmaUc *rec)
{
    RdmaTable *t = &rm->tables[RDMA_RES_UC];
    RdmaUc *uc;

    if (rec->uar_index == 0 || rec->uar_index >= rm->limits.max_uc) {
        return "UAR page out of range";
    }
    for (uint32_t h = 0; h < t->size; h++) {
        uc = t->slots[h];
        if (uc && uc->uar_index == rec->uar_index) {
            return "UAR page of two contexts";
        }
    }
    uc = g_new0(RdmaUc, 1);
    uc->handle = rec->handle;
    uc->uar_index = rec->uar_index;
    rdma_table_set(t, uc->handle, uc);
    return NULL;
}

static const char *rdma_rm_restore_pd(RdmaResources *rm, const RdmaPd *rec)
{
    RdmaPd *pd;

    if (!rdma_rm_ctx_ok(rm, rec->ctx_handle)) {
        return "no such context";
    }
    pd = g_new0(RdmaPd, 1);
    pd->handle = rec->handle;
    pd->ctx_handle = rec->ctx_handle;
    if (rm->backend->ops->create_pd &&
        rm->backend->ops->create_pd(rm->backend, pd) < 0) {
        g_free(pd);
        return "backend refused the PD";
    }
    rdma_rm_ctx_ref(rm, pd->ctx_handle, 1);
    rdma_table_set(&rm->tables[RDMA_RES_PD], pd->handle, pd);
    return NULL;
}

static const char *rdma_rm_restore_ring(RdmaResources *rm, RdmaResType type,
                                        const void *rec,
                                        const RdmaPageList *ring)
{
    const char *why;

    if (!rdma_page_list_ok(rm->pdev, ring, 2, rm->limits.max_ring_pages,
                           true, &why)) {
        return why;
    }
    return rm->fe->rings_ok(rm->fe_opaque, type, rec) ? NULL :
           "rings do not fit their pages";
}

static const char *rdma_rm_restore_cq(RdmaResources *rm, RdmaCq *rec)
{
    RdmaCq *cq;
    const char *why;

    if (!rdma_rm_ctx_ok(rm, rec->ctx_handle)) {
        return "no such context";
    }
    if (!rdma_is_pow2(rec->cqe) || rec->cqe > rm->limits.max_cqe) {
        return "entries not a power of two within max_cqe";
    }
    why = rdma_rm_restore_ring(rm, RDMA_RES_CQ, rec, &rec->ring);
    if (why) {
        return why;
    }
    cq = g_memdup2(rec, sizeof(*rec));
    cq->refs = 0;
    cq->be = NULL;
    if (rm->backend->ops->create_cq(rm->backend, cq) < 0) {
        g_free(cq);
        return "backend refused the CQ";
    }
    rec->ring.pages = NULL;             /* now the CQ's */
    rdma_rm_ctx_ref(rm, cq->ctx_handle, 1);
    rdma_table_set(&rm->tables[RDMA_RES_CQ], cq->handle, cq);
    return NULL;
}

static const char *rdma_rm_restore_srq(RdmaResources *rm, RdmaSrq *rec)
{
    const RdmaDevLimits *l = &rm->limits;
    RdmaPd *pd = rdma_rm_get(rm, RDMA_RES_PD, rec->pd_handle);
    RdmaSrq *srq;
    const char *why;

    if (!pd) {
        return "no such PD";
    }
    if (!rdma_is_pow2(rec->max_wr) || rec->max_wr > pow2ceil(l->max_srq_wr) ||
        rec->max_sge == 0 || rec->max_sge > l->max_srq_sge ||
        rec->srq_limit > rec->max_wr) {
        return "max_wr, max_sge or limit out of range";
    }
    why = rdma_rm_restore_ring(rm, RDMA_RES_SRQ, rec, &rec->ring);
    if (why) {
        return why;
    }
    srq = g_memdup2(rec, sizeof(*rec));
    srq->refs = 0;
    srq->be = NULL;
    if (rm->backend->ops->create_srq(rm->backend, srq) < 0) {
        g_free(srq);
        return "backend refused the SRQ";
    }
    rec->ring.pages = NULL;
    pd->refs++;
    rdma_table_set(&rm->tables[RDMA_RES_SRQ], srq->handle, srq);
    return NULL;
}

/* What a fast-register WR checked, for an FRMR that holds a registration. */
static const char *rdma_rm_restore_frmr_why(const RdmaMr *rec)
{
    if (rec->pages.npages > rec->max_pages) {
        return "FRMR page list longer than its capacity";
    }
    if ((rec->lkey >> 8) != rec->handle) {
        return "FRMR key of another MR";
    }
    if (rec->frmr_valid &&
        (!rec->pages.npages ||
         (rec->iova & (RDMA_PAGE_SIZE - 1)) + rec->length >
         (uint64_t)rec->pages.npages * RDMA_PAGE_SIZE ||
         rec->iova + rec->length < rec->iova)) {
        return "FRMR range outside its pages";
    }
    return NULL;
}

static const char *rdma_rm_restore_mr(RdmaResources *rm, RdmaMr *rec)
{
    RdmaPd *pd = rdma_rm_get(rm, RDMA_RES_PD, rec->pd_handle);
    RdmaMrReq req = {
        .pd_handle = rec->pd_handle, .kind = rec->kind,
        .access = rec->access, .start = rec->iova, .length = rec->length,
        .nchunks = rec->kind == RDMA_MR_FRMR ? rec->max_pages
                                             : rec->pages.npages,
    };
    const char *why;
    RdmaMr *mr;

    if (!pd) {
        return "no such PD";
    }
    if (rec->kind > RDMA_MR_FRMR || (rec->access & ~RDMA_MR_ACCESS_ALL) ||
        rec->lkey != rec->rkey) {
        return "kind, access or keys invalid";
    }
    if (rdma_rm_check_mr(rm, &req) < 0) {
        return "the MR breaks the rules of its creation";
    }
    if (rec->kind == RDMA_MR_FRMR) {
        why = rdma_rm_restore_frmr_why(rec);
    } else if ((rec->lkey >> 8) != rec->handle ||
               (rec->lkey & 0xff) != rm->mr_gen[rec->handle] ||
               rec->frmr_valid ||
               rec->max_pages ||
               (rec->kind == RDMA_MR_DMA &&
                (rec->pages.npages || rec->iova || rec->length))) {
        why = "keys or fields of another kind of MR";
    } else {
        why = NULL;
    }
    if (!why && rec->pages.npages &&
        !rdma_page_list_ok(rm->pdev, &rec->pages, 1, UINT32_MAX, false,
                           &why)) {
        return why;
    }
    if (why) {
        return why;
    }
    mr = g_memdup2(rec, sizeof(*rec));
    mr->be = NULL;
    mr->pages.mig_ref = 0;
    mr->pages.span_lo = mr->pages.span_hi = 0;     /* checked: spent */
    mr->serial = ++rm->mr_serial;
    if (rm->backend->ops->create_mr(rm->backend, mr) < 0) {
        g_free(mr);
        return "backend refused the MR";
    }
    rec->pages.pages = NULL;
    if (mr->kind == RDMA_MR_USER) {
        rm->mr_pages_total += mr->pages.npages;
    }
    pd->refs++;
    rdma_table_set(&rm->tables[RDMA_RES_MR], mr->handle, mr);
    return NULL;
}

static const char *rdma_rm_restore_qp_why(RdmaResources *rm,
                                          const RdmaQp *rec)
{
    const RdmaDevLimits *l = &rm->limits;
    const RdmaQpCap *c = &rec->cap;
    RdmaQpReq req = {
        .pd_handle = rec->pd_handle, .send_cq_handle = rec->send_cq_handle,
        .recv_cq_handle = rec->recv_cq_handle,
        .srq_handle = rec->srq_handle, .is_srq = rec->is_srq,
    };

    if (rec->type != RDMA_QPT_RC && rec->type != RDMA_QPT_UD &&
        rec->type != RDMA_QPT_GSI) {
        return "QP type not supported";
    }
    if (rec->qpn != rec->handle ||
        (rec->type == RDMA_QPT_GSI) != (rec->handle == RDMA_GSI_QPN)) {
        return "QP number is not the handle";
    }
    if (rdma_rm_check_qp_objects(rm, &req) < 0) {
        return "the QP's PD, CQs or SRQ are invalid";
    }
    if (!rdma_is_pow2(c->max_send_wr) ||
        c->max_send_wr > pow2ceil(l->max_qp_wr) ||
        c->max_send_sge == 0 || c->max_send_sge > l->max_sge ||
        c->max_inline_data > RDMA_PAGE_SIZE ||
        (rec->is_srq ? c->max_recv_wr || c->max_recv_sge :
         !rdma_is_pow2(c->max_recv_wr) ||
         c->max_recv_wr > pow2ceil(l->max_qp_wr) ||
         c->max_recv_sge == 0 || c->max_recv_sge > l->max_sge) ||
        (!rec->is_srq && rec->srq_handle)) {
        return "queue sizes above the device limits";
    }
    if (rec->send_pages == 0 || rec->send_pages >= rec->ring.npages) {
        return "page counts invalid";
    }
    if (rec->attr.cur_qp_state >= RDMA_QPS_MAX ||
        (rec->attr.qp_access_flags & ~RDMA_QP_ACCESS_ALL)) {
        return "invalid state";
    }
    return rdma_rm_qp_values_why(rm, RDMA_QP_ATTR_ALL &
                                 ~(RDMA_QP_ALT_PATH | RDMA_QP_CAP |
                                   RDMA_QP_CUR_STATE), &rec->attr);
}

static const char *rdma_rm_restore_qp(RdmaResources *rm, RdmaQp *rec)
{
    const char *why = rdma_rm_restore_qp_why(rm, rec);
    RdmaQp *qp;

    if (!why) {
        why = rdma_rm_restore_ring(rm, RDMA_RES_QP, rec, &rec->ring);
    }
    if (why) {
        return why;
    }
    qp = g_memdup2(rec, sizeof(*rec));
    qp->be = NULL;
    qp->sq_stalled = false;             /* the backend's state says */
    qp->sq_pending = false;             /* marked below, once in the table */
    if (rm->backend->ops->create_qp(rm->backend, qp) < 0) {
        g_free(qp);
        return "backend refused the QP";
    }
    rec->ring.pages = NULL;
    rdma_rm_pd_ref(rm, qp->pd_handle, 1);
    ((RdmaCq *)rdma_rm_get(rm, RDMA_RES_CQ, qp->send_cq_handle))->refs++;
    ((RdmaCq *)rdma_rm_get(rm, RDMA_RES_CQ, qp->recv_cq_handle))->refs++;
    if (qp->is_srq) {
        ((RdmaSrq *)rdma_rm_get(rm, RDMA_RES_SRQ, qp->srq_handle))->refs++;
    }
    rdma_table_set(&rm->tables[RDMA_RES_QP], qp->handle, qp);
    if (rec->sq_pending) {
        rdma_rm_sq_mark(rm, qp);
    }
    return NULL;
}

const char *rdma_rm_restore(RdmaResources *rm, RdmaResType type, void *rec)
{
    /* Every record starts with its handle. */
    const char *why = rdma_rm_restore_handle(rm, type, *(uint32_t *)rec);

    if (why) {
        return why;
    }
    switch (type) {
    case RDMA_RES_UC:
        return rdma_rm_restore_uc(rm, rec);
    case RDMA_RES_PD:
        return rdma_rm_restore_pd(rm, rec);
    case RDMA_RES_CQ:
        return rdma_rm_restore_cq(rm, rec);
    case RDMA_RES_SRQ:
        return rdma_rm_restore_srq(rm, rec);
    case RDMA_RES_MR:
        return rdma_rm_restore_mr(rm, rec);
    case RDMA_RES_QP:
        return rdma_rm_restore_qp(rm, rec);
    default:
        return "unknown object type";
    }
}

const char *rdma_rm_restore_gids(RdmaResources *rm, const RdmaGid *gids)
{
    for (uint32_t i = 0; i < rm->limits.gid_tbl_len; i++) {
        if (gids[i].valid &&
            rdma_rm_add_gid(rm, i, gids[i].gid, gids[i].type, gids[i].mtu,
                            gids[i].vlan) < 0) {
            return "backend refused a GID";
        }
    }
    return NULL;
}
