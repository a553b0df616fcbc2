/*
 * Helpers of the pvrdma data-path qtests (see pvrdma-dp.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "pvrdma-dp.h"

const uint8_t gid0[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 };
const uint8_t gid1[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 16 };

/* The objects of a Dp, on a device whose driver is loaded. */
static void dp_init_gids(Dp *d, const uint8_t *g0, const uint8_t *g1)
{
    g_assert_cmpuint(create_pd(d->pv, 0, &d->pd), ==, ERR_OK);
    g_assert_cmpuint(gid_bind_gid(d->pv, 0, g0), ==, ERR_OK);
    g_assert_cmpuint(gid_bind_gid(d->pv, 1, g1), ==, ERR_OK);
    d->lkey = dma_mr(d->pv, d->pd, ACC_ALL);
    d->scq = pv_cq_new(d->pv, 64);
    d->rcq = pv_cq_new(d->pv, 64);
    d->mem = galloc(d->pv, MEM_SIZE);
}

void dp_init(Dp *d)
{
    dp_init_gids(d, gid0, gid1);
}

Dp *dp_new_gids(Pv *pv, const uint8_t *g0, const uint8_t *g1)
{
    Dp *d = g_new0(Dp, 1);

    d->pv = pv;
    d->objs = g_ptr_array_new_with_free_func((GDestroyNotify)pv_qp_free);
    dp_init_gids(d, g0, g1);
    return d;
}

Dp *dp_new_on(Pv *pv)
{
    return dp_new_gids(pv, gid0, gid1);
}

Dp *dp_new(void)
{
    return dp_new_on(pv_probe());
}

void dp_free(Dp *d)
{
    pv_stop(d->pv);
    pv_cq_free(d->scq);
    pv_cq_free(d->rcq);
    g_ptr_array_free(d->objs, true);
    g_free(d);
}

QpSpec dp_spec(Dp *d, uint8_t type, PvCq *scq, PvCq *rcq)
{
    QpSpec q = { .type = type, .pd = d->pd,
                 .scq = (scq ? scq : d->scq)->handle,
                 .rcq = (rcq ? rcq : d->rcq)->handle,
                 .send_wr = 16, .recv_wr = 16, .send_sge = 4,
                 .recv_sge = 4 };

    return q;
}

PvQp *dp_qp(Dp *d, const QpSpec *q, uint8_t sig_all, uint32_t access)
{
    PvQp *qp = pv_qp_new(d->pv, q, sig_all, access);

    g_ptr_array_add(d->objs, qp);
    return qp;
}

PvCq *dp_cq(Dp *d, uint32_t cqe)
{
    return pv_cq_new(d->pv, cqe);
}

/* QP state changes */

uint32_t qp_state(Dp *d, PvQp *qp)
{
    return query_qp(d->pv, qp->handle).qp_state;
}

void rc_init(Dp *d, PvQp *qp, uint32_t access)
{
    PvrdmaQpAttr a = { .qp_state = PVRDMA_QPS_INIT, .port_num = 1,
                       .qp_access_flags = access };

    g_assert_cmpuint(modify_qp(d->pv, qp->handle, PVRDMA_QP_STATE |
                               PVRDMA_QP_PKEY_INDEX | PVRDMA_QP_PORT |
                               PVRDMA_QP_ACCESS_FLAGS, &a), ==, ERR_OK);
}

void rc_connect_path(Dp *d, PvQp *qp, uint32_t dest_qpn, uint32_t access,
                     uint8_t min_rnr_timer, uint8_t rnr_retry,
                     const RcPath *path)
{
    PvrdmaQpAttr a = { 0 };

    rc_init(d, qp, access);
    a.qp_state = PVRDMA_QPS_RTR;
    a.path_mtu = PVRDMA_MTU_1024;
    a.dest_qp_num = dest_qpn;
    a.rq_psn = 0x100;
    a.max_dest_rd_atomic = 4;
    a.min_rnr_timer = min_rnr_timer;
    memcpy(a.ah_attr.grh.dgid.raw, path->dgid, 16);
    a.ah_attr.grh.sgid_index = 0;
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.grh.flow_label = path->flow_label;
    a.ah_attr.port_num = 1;
    a.ah_attr.ah_flags = 1;
    if (path->dmac) {
        memcpy(a.ah_attr.dmac, path->dmac, 6);
    }
    g_assert_cmpuint(modify_qp(d->pv, qp->handle, PVRDMA_QP_STATE |
                               PVRDMA_QP_AV | PVRDMA_QP_PATH_MTU |
                               PVRDMA_QP_DEST_QPN | PVRDMA_QP_RQ_PSN |
                               PVRDMA_QP_MAX_DEST_RD_ATOMIC |
                               PVRDMA_QP_MIN_RNR_TIMER, &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTS;
    a.timeout = path->timeout;
    a.retry_cnt = path->retry_cnt;
    a.rnr_retry = rnr_retry;
    a.sq_psn = 0x100;
    a.max_rd_atomic = 4;
    g_assert_cmpuint(modify_qp(d->pv, qp->handle, PVRDMA_QP_STATE |
                               PVRDMA_QP_TIMEOUT | PVRDMA_QP_RETRY_CNT |
                               PVRDMA_QP_RNR_RETRY | PVRDMA_QP_SQ_PSN |
                               PVRDMA_QP_MAX_QP_RD_ATOMIC, &a), ==, ERR_OK);
    g_assert_cmpuint(qp_state(d, qp), ==, PVRDMA_QPS_RTS);
}

void rc_connect(Dp *d, PvQp *qp, uint32_t dest_qpn, uint32_t access,
                uint8_t min_rnr_timer, uint8_t rnr_retry)
{
    /* Linux rxe retries forever with 7, as if it were an rnr_retry. */
    RcPath path = { .dgid = gid0, .timeout = 14,
                    .retry_cnt = pv_ibverbs() ? 6 : 7 };

    rc_connect_path(d, qp, dest_qpn, access, min_rnr_timer, rnr_retry,
                    &path);
}

/* Two connected RC QPs on d's CQs. */
void rc_pair(Dp *d, PvQp **a, PvQp **b, uint32_t b_access,
             uint8_t b_min_rnr_timer, uint8_t a_rnr_retry)
{
    QpSpec q = dp_spec(d, PVRDMA_QPT_RC, NULL, NULL);

    *a = dp_qp(d, &q, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    *b = dp_qp(d, &q, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    rc_connect(d, *a, (*b)->qpn, ACC_ALL, 12, a_rnr_retry);
    rc_connect(d, *b, (*a)->qpn, b_access, b_min_rnr_timer, 7);
}

void ud_up(Dp *d, PvQp *qp, uint32_t qkey)
{
    PvrdmaQpAttr a = { 0 };
    uint32_t port = qp->type == PVRDMA_QPT_GSI ? 0 : PVRDMA_QP_PORT;

    a.qp_state = PVRDMA_QPS_INIT;
    a.port_num = 1;
    a.qkey = qkey;
    g_assert_cmpuint(modify_qp(d->pv, qp->handle, PVRDMA_QP_STATE |
                               PVRDMA_QP_PKEY_INDEX | port | PVRDMA_QP_QKEY,
                               &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTR;
    g_assert_cmpuint(modify_qp(d->pv, qp->handle, PVRDMA_QP_STATE, &a),
                     ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTS;
    a.sq_psn = 0x10;
    g_assert_cmpuint(modify_qp(d->pv, qp->handle, PVRDMA_QP_STATE |
                               PVRDMA_QP_SQ_PSN, &a), ==, ERR_OK);
    g_assert_cmpuint(qp_state(d, qp), ==, PVRDMA_QPS_RTS);
}

PvQp *ud_qp(Dp *d, uint8_t type, uint32_t qkey)
{
    QpSpec q = dp_spec(d, type, NULL, NULL);
    PvQp *qp = dp_qp(d, &q, 0, PVRDMA_ACCESS_LOCAL_WRITE);

    ud_up(d, qp, qkey);
    return qp;
}

uint32_t modify_state(Dp *d, PvQp *qp, uint32_t state)
{
    PvrdmaQpAttr a = { .qp_state = state };

    return modify_qp(d->pv, qp->handle, PVRDMA_QP_STATE, &a);
}

/* Work requests */

PvrdmaSge sge(uint64_t addr, uint32_t len, uint32_t lkey)
{
    PvrdmaSge s = { .addr = addr, .length = len, .lkey = lkey };

    return s;
}

PvrdmaSqWqeHdr wqe(uint64_t wr_id, uint32_t opcode, uint32_t flags,
                   uint32_t num_sge)
{
    PvrdmaSqWqeHdr h = { .wr_id = wr_id, .opcode = opcode,
                         .send_flags = flags, .num_sge = num_sge };

    return h;
}

PvrdmaSqWqeHdr wqe_rdma(uint64_t wr_id, uint32_t opcode,
                        uint32_t flags, uint32_t num_sge,
                        uint64_t raddr, uint32_t rkey)
{
    PvrdmaSqWqeHdr h = wqe(wr_id, opcode, flags, num_sge);

    h.wr.rdma.remote_addr = raddr;
    h.wr.rdma.rkey = rkey;
    return h;
}

PvrdmaSqWqeHdr wqe_atomic(uint64_t wr_id, uint32_t opcode,
                          uint64_t raddr, uint32_t rkey,
                          uint64_t compare_add, uint64_t swap)
{
    PvrdmaSqWqeHdr h = wqe(wr_id, opcode, PVRDMA_SEND_SIGNALED, 1);

    h.wr.atomic.remote_addr = raddr;
    h.wr.atomic.rkey = rkey;
    h.wr.atomic.compare_add = compare_add;
    h.wr.atomic.swap = swap;
    return h;
}

PvrdmaSqWqeHdr wqe_ud(uint64_t wr_id, uint32_t flags, uint32_t num_sge,
                      uint32_t qpn, uint32_t qkey,
                      const uint8_t *dgid, uint8_t sgid_index)
{
    PvrdmaSqWqeHdr h = wqe(wr_id, PVRDMA_WR_SEND, flags, num_sge);

    h.wr.ud.remote_qpn = qpn;
    h.wr.ud.remote_qkey = qkey;
    memcpy(h.wr.ud.av.dgid, dgid, 16);
    h.wr.ud.av.gid_index = sgid_index;
    h.wr.ud.av.port_pd = 1;
    h.wr.ud.av.hop_limit = 64;
    return h;
}

void post_send(Dp *d, PvQp *qp, PvrdmaSqWqeHdr h,
               const PvrdmaSge *s, uint32_t n)
{
    pv_sq_put(d->pv, qp, &h, s, n);
    pv_qp_db(d->pv, qp, PVRDMA_UAR_QP_SEND);
}

void post_recv(Dp *d, PvQp *qp, uint64_t wr_id, const PvrdmaSge *s,
               uint32_t n)
{
    pv_rq_put(d->pv, &qp->rq, wr_id, n, s, n);
    pv_qp_db(d->pv, qp, PVRDMA_UAR_QP_RECV);
}

void post_recv1(Dp *d, PvQp *qp, uint64_t wr_id, uint64_t addr,
                uint32_t len)
{
    PvrdmaSge s = sge(addr, len, d->lkey);

    post_recv(d, qp, wr_id, &s, 1);
}

/* Let the main loop run (bottom halves) with a QMP round trip. */
void main_loop_run(Dp *d)
{
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'query-status' }");
}

/* Completions, events, interrupts */

PvrdmaCqe expect_cqe(Dp *d, PvCq *cq, uint64_t wr_id, uint32_t status,
                     uint32_t opcode, PvQp *qp)
{
    PvrdmaCqe c = { 0 };

    g_assert_true(pv_cq_poll_wait(d->pv, cq, &c));
    g_assert_cmphex(c.wr_id, ==, wr_id);
    g_assert_cmpuint(c.status, ==, status);
    if (opcode != ANY_OPCODE) {
        g_assert_cmphex(c.opcode, ==, opcode);
    }
    g_assert_cmpuint(c.qp, ==, qp->handle);
    return c;
}

/*
 * expect_cqe() for a status in which a host device may differ from the
 * IBA's: with ibverbs @alt is accepted too (the caller says why).
 */
PvrdmaCqe expect_cqe_or(Dp *d, PvCq *cq, uint64_t wr_id,
                        uint32_t status, uint32_t alt, PvQp *qp)
{
    PvrdmaCqe c = { 0 };

    g_assert_true(pv_cq_poll_wait(d->pv, cq, &c));
    g_assert_cmphex(c.wr_id, ==, wr_id);
    if (!pv_ibverbs() || c.status != alt) {
        g_assert_cmpuint(c.status, ==, status);
    }
    g_assert_cmpuint(c.qp, ==, qp->handle);
    return c;
}

/*
 * A send that fails on its own SGEs (an lkey that is no MR's, or beyond
 * its MR): LOC_PROT_ERR.  Linux rxe reports LOC_QP_OP_ERR for both
 * (copy_data() fails with -EINVAL, which rxe_requester() does not tell
 * from other errors).
 */
PvrdmaCqe expect_loc_prot_err(Dp *d, PvCq *cq, uint64_t wr_id,
                              PvQp *qp)
{
    return expect_cqe_or(d, cq, wr_id, PVRDMA_WC_LOC_PROT_ERR,
                         PVRDMA_WC_LOC_QP_OP_ERR, qp);
}

void expect_no_cqe(Dp *d, PvCq *cq)
{
    PvrdmaCqe c;

    pv_settle();
    if (pv_cq_poll(d->pv, cq, &c)) {
        fail("unexpected CQE on CQ %u: wr_id 0x%" PRIx64 " status %u "
             "opcode 0x%x qp %" PRIu64, cq->handle, c.wr_id, c.status,
             c.opcode, c.qp);
    }
}

void expect_event(Dp *d, uint32_t type, uint32_t info)
{
    PvrdmaEqe e[8] = { 0 };
    uint32_t n = pv_events_wait(d->pv, e, ARRAY_SIZE(e));
    uint32_t i;

    for (i = 0; i < n && i < ARRAY_SIZE(e); i++) {
        g_test_message("event %u: type %u info %u", i, e[i].type, e[i].info);
    }
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmpuint(e[0].type, ==, type);
    g_assert_cmpuint(e[0].info, ==, info);
}

/*
 * The affiliated event of a responder's error.  With ibverbs it is the
 * host device's to raise, and Linux rxe raises no QP events at all; if
 * one comes, it must be this one.
 */
void expect_responder_event(Dp *d, uint32_t type, uint32_t info)
{
    PvrdmaEqe e[8] = { 0 };
    uint32_t n;

    if (!pv_ibverbs()) {
        expect_event(d, type, info);
        return;
    }
    pv_settle();
    n = pv_events(d->pv, e, ARRAY_SIZE(e));
    g_assert_cmpuint(n, <=, 1);
    if (n) {
        g_assert_cmpuint(e[0].type, ==, type);
        g_assert_cmpuint(e[0].info, ==, info);
    }
}

/* Wait for an async event to be there, without taking it. */
void wait_event(Dp *d)
{
    PvRing r = pv_async_ring(d->pv);

    pv_ring_wait(d->pv, &r, 1);
}

void expect_no_event(Dp *d)
{
    PvrdmaEqe e;

    pv_settle();
    if (pv_events(d->pv, &e, 1)) {
        fail("unexpected async event type %u info %u", e.type, e.info);
    }
}

void expect_rc_success(Dp *d, PvCq *cq, uint64_t wr_id,
                       uint32_t opcode, uint32_t byte_len, PvQp *qp)
{
    PvrdmaCqe c = expect_cqe(d, cq, wr_id, PVRDMA_WC_SUCCESS, opcode, qp);

    g_assert_cmpuint(c.byte_len, ==, byte_len);
}

/* Receive completion of an RC QP */
void expect_recv(Dp *d, PvCq *cq, uint64_t wr_id, uint32_t opcode,
                 uint32_t byte_len, PvQp *qp, PvQp *src,
                 uint32_t wc_flags, uint32_t imm)
{
    PvrdmaCqe c = expect_cqe(d, cq, wr_id, PVRDMA_WC_SUCCESS, opcode, qp);
    uint32_t flags = PVRDMA_WC_GRH | PVRDMA_WC_WITH_IMM |
                     PVRDMA_WC_WITH_INVALIDATE;

    g_assert_cmpuint(c.byte_len, ==, byte_len);
    /*
     * The verbs define src_qp and the GRH flag for UD only.  A host device
     * may leave them as it likes on RC: Linux rxe reports src_qp 0 and,
     * RoCE packets all having an IP header, IB_WC_GRH.
     */
    if (pv_ibverbs()) {
        flags &= ~PVRDMA_WC_GRH;
        if (c.src_qp != 0) {
            g_assert_cmpuint(c.src_qp, ==, src->qpn);
        }
    } else {
        g_assert_cmpuint(c.src_qp, ==, src->qpn);
    }
    g_assert_cmphex(c.wc_flags & flags, ==, wc_flags);
    if (wc_flags & PVRDMA_WC_WITH_IMM) {
        g_assert_cmphex(c.imm_data, ==, imm);
    }
    g_assert_cmpuint(c.port_num, ==, 1);
}

/* After an error: the QP is in ERR and its later WRs are flushed. */
void expect_flushing(Dp *d, PvQp *qp, PvCq *scq, uint64_t wr_id)
{
    PvrdmaSge s = sge(d->mem, 8, d->lkey);

    g_assert_cmpuint(qp_state(d, qp), ==, PVRDMA_QPS_ERR);
    post_send(d, qp, wqe(wr_id, PVRDMA_WR_SEND, 0, 1), &s, 1);
    expect_cqe(d, scq, wr_id, PVRDMA_WC_WR_FLUSH_ERR, ANY_OPCODE, qp);
    expect_no_cqe(d, scq);
    g_assert_cmpuint(pv_ring_count(d->pv, &qp->sq), ==, 0);
}

/*
 * @n receives posted on @rq (of a QP or an SRQ) and not consumed by any
 * message.  The soft backend takes a receive out of the guest's ring when
 * a message arrives; the ibverbs backend hands it to the host queue at the
 * doorbell, so there the ring is empty and only the missing completion
 * shows it is unused.
 */
void expect_recvs_waiting(Dp *d, const PvRing *rq, uint32_t n)
{
    g_assert_cmpuint(pv_ring_count(d->pv, rq), ==, pv_ibverbs() ? 0 : n);
}

/*
 * @qpn, or the next number that none of the test's QPs has.  A host
 * device numbers its QPs as it likes; only this test's QPs live on it.
 */
bool qpn_used(Dp *d, uint32_t qpn)
{
    guint i;

    for (i = 0; i < d->objs->len; i++) {
        if (((PvQp *)g_ptr_array_index(d->objs, i))->qpn == qpn) {
            return true;
        }
    }
    return false;
}

uint32_t unused_qpn(Dp *d, uint32_t qpn)
{
    while (qpn_used(d, qpn)) {
        qpn++;
    }
    return qpn;
}

/*
 * Tests of the soft engine's own mechanics, or of verbs that the ibverbs
 * backend cannot forward: skipped there, saying why (true for any host
 * device).
 */
bool skip_on_ibverbs(const char *why)
{
    if (!pv_ibverbs()) {
        return false;
    }
    g_test_skip(why);
    return true;
}

/* Guest memory contents */

void fill(Dp *d, uint64_t addr, size_t len, uint8_t seed)
{
    g_autofree uint8_t *b = g_malloc(len);
    size_t i;

    for (i = 0; i < len; i++) {
        b[i] = seed + i * 7 + (i >> 8);
    }
    qtest_memwrite(d->pv->qts, addr, b, len);
}

/* Is [addr, addr + len) the pattern fill(seed) put at offset @off? */
void check_fill(Dp *d, uint64_t addr, size_t len, uint8_t seed,
                size_t off)
{
    g_autofree uint8_t *b = g_malloc(len);
    size_t i;

    qtest_memread(d->pv->qts, addr, b, len);
    for (i = 0; i < len; i++) {
        size_t j = i + off;

        if (b[i] != (uint8_t)(seed + j * 7 + (j >> 8))) {
            fail("byte %zu at 0x%" PRIx64 ": 0x%02x, expected 0x%02x", i,
                 addr + i, b[i], (uint8_t)(seed + j * 7 + (j >> 8)));
            return;
        }
    }
}

void check_byte(Dp *d, uint64_t addr, size_t len, uint8_t v)
{
    g_autofree uint8_t *b = g_malloc(len);
    size_t i;

    qtest_memread(d->pv->qts, addr, b, len);
    for (i = 0; i < len; i++) {
        if (b[i] != v) {
            fail("byte at 0x%" PRIx64 ": 0x%02x, expected 0x%02x",
                 addr + i, b[i], v);
            return;
        }
    }
}

/*
 * A user MR over @npages guest pages that are not physically contiguous
 * (the pages are handed over in reverse order); returns the key, and the
 * physical page of each MR page in @phys.
 */
uint32_t user_mr(Dp *d, uint32_t access, uint64_t iova,
                 uint64_t length, uint32_t npages, uint64_t *phys)
{
    PvrdmaCmdCreateMrResp r;
    g_autofree uint64_t *tmp = g_new0(uint64_t, npages);
    uint32_t i;
    uint64_t pdir;

    for (i = 0; i < npages; i++) {
        tmp[i] = galloc(d->pv, PAGE);
    }
    for (i = 0; i < npages; i++) {
        phys[i] = tmp[npages - 1 - i];
    }
    pdir = make_pdir(d->pv, npages, phys);
    g_assert_cmpuint(create_mr(d->pv, d->pd, 0, access, iova, length, npages,
                               pdir, &r), ==, ERR_OK);
    return r.rkey;
}

/*
 * An MR of @npages pages that are all the guest page @page (MRs may
 * repeat pages): a large message costs the test no guest memory.
 */
uint32_t alias_mr(Dp *d, uint64_t iova, uint32_t npages,
                  uint64_t page)
{
    PvrdmaCmdCreateMrResp r;
    uint64_t dir = galloc(d->pv, PAGE), table = galloc(d->pv, PAGE);
    uint32_t i;

    for (i = 0; i < 512; i++) {
        qtest_writeq(d->pv->qts, table + i * 8, page);
    }
    for (i = 0; i < DIV_ROUND_UP(npages, 512); i++) {
        qtest_writeq(d->pv->qts, dir + i * 8, table);
    }
    g_assert_cmpuint(create_mr(d->pv, d->pd, 0, ACC_ALL, iova,
                               (uint64_t)npages * PAGE, npages, dir, &r),
                     ==, ERR_OK);
    return r.lkey;
}

/* query-pvrdma's work-bytes-max: the most one entry point moved. */
uint64_t work_bytes_max(Dp *d)
{
    QDict *resp = qtest_qmp(d->pv->qts, "{'execute': 'query-pvrdma'}");
    QDict *info = qobject_to(QDict,
                             qlist_peek(qdict_get_qlist(resp, "return")));
    uint64_t n = UINT64_MAX;

    if (qdict_haskey(info, "work-bytes-max")) {
        n = qdict_get_int(info, "work-bytes-max");
    } else {
        fail("query-pvrdma does not say how much one entry point moved");
    }

    qobject_unref(resp);
    return n;
}

/* A completion that may take a while: a long message in steps. */
PvrdmaCqe expect_cqe_slow(Dp *d, PvCq *cq, uint64_t wr_id,
                          uint32_t status, PvQp *qp)
{
    PvrdmaCqe c = { 0 };
    int tries = 0;

    while (!pv_cq_poll_wait(d->pv, cq, &c) && ++tries < 12) {
        /* the host device may take its time */
    }
    g_assert_cmphex(c.wr_id, ==, wr_id);
    g_assert_cmpuint(c.status, ==, status);
    g_assert_cmpuint(c.qp, ==, qp->handle);
    return c;
}

/* FAST_REG_MR of @npages pages listed at @pdir, as key @key */
PvrdmaSqWqeHdr wqe_fast_reg(uint64_t wr_id, uint64_t iova, uint64_t pdir,
                            uint32_t npages, uint32_t length, uint32_t access,
                            uint32_t key)
{
    PvrdmaSqWqeHdr h = wqe(wr_id, PVRDMA_WR_FAST_REG_MR,
                           PVRDMA_SEND_SIGNALED, 0);

    h.wr.fast_reg.iova_start = iova;
    h.wr.fast_reg.pl_pdir_dma = pdir;
    h.wr.fast_reg.page_shift = 12;
    h.wr.fast_reg.page_list_len = npages;
    h.wr.fast_reg.length = length;
    h.wr.fast_reg.access_flags = access;
    h.wr.fast_reg.rkey = key;
    return h;
}
