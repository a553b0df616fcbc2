/*
 * QTest for pvrdma live migration (soft backend).
 *
 * Two QEMUs in qtest mode: the test builds objects and posts work on the
 * source as the guest driver would, migrates the VM to a destination
 * started with the same command line and -incoming, and carries on there
 * with the same guest state (its memory, the libqos allocator, the BAR
 * addresses): every object must answer under its handle, with its keys,
 * QP numbers, states and attributes, work posted before the switch-over
 * must complete with the right data, and new work must run.  A mutated
 * stream test loads altered copies of a valid stream: each either fails
 * cleanly or yields a device that survives its doorbells and a reset.
 * Under the ASan/UBSan lane every destination runs with the sanitizers.
 *
 * With the ibverbs backend (lane 3) only the migration blocker is tested.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/timer.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "hw/pci/pci_regs.h"
#include "pvrdma-dp.h"

#define MIG_WAIT_US     (60 * G_USEC_PER_SEC)

static char *tmpdir;

/* Migration with QMP */

static char *mig_status(QTestState *qts, char **error)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
    QDict *ret = qdict_get_qdict(resp, "return");
    char *st = g_strdup(qdict_get_try_str(ret, "status") ?: "none");

    if (error) {
        *error = g_strdup(qdict_get_try_str(ret, "error-desc") ?: "");
    }
    qobject_unref(resp);
    return st;
}

/* Wait until @qts's migration is completed or failed; true if completed. */
static bool mig_finish(QTestState *qts, char **error)
{
    gint64 end = g_get_monotonic_time() + MIG_WAIT_US;

    for (;;) {
        g_autofree char *st = mig_status(qts, error);

        if (!strcmp(st, "completed")) {
            return true;
        }
        if (!strcmp(st, "failed")) {
            return false;
        }
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        if (error) {
            g_free(*error);
        }
        g_usleep(2000);
    }
}

static void mig_wait_status(QTestState *qts, const char *want)
{
    gint64 end = g_get_monotonic_time() + MIG_WAIT_US;

    for (;;) {
        g_autofree char *st = mig_status(qts, NULL);

        if (!strcmp(st, want)) {
            return;
        }
        g_assert_cmpstr(st, !=, "failed");
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(2000);
    }
}

/* The source waits before the switch-over (status pre-switchover). */
static void mig_pause_before_switchover(QTestState *qts)
{
    qtest_qmp_assert_success(qts, "{ 'execute': "
                             "'migrate-set-capabilities', 'arguments': "
                             "{ 'capabilities': [ { 'capability': "
                             "'pause-before-switchover', 'state': true } ] "
                             "} }");
}

/* Save @qts's state to the file at @path: the stream, *@len bytes. */
static uint8_t *mig_save(QTestState *qts, const char *path, size_t *len)
{
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    uint8_t *buf;

    qtest_qmp_assert_success(qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(mig_finish(qts, NULL));
    g_assert_true(g_file_get_contents(path, (char **)&buf, len, NULL));
    return buf;
}

/* Start the destination and let the source send to it. */
static QTestState *mig_begin(Dp *d)
{
    g_autofree char *uri = g_strdup_printf("unix:%s/mig.sock", tmpdir);
    QTestState *dst = pv_qemu_start(" -incoming defer");

    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    return dst;
}

/* Both ends completed: the test's guest goes on in @dst. */
static void mig_end(Dp *d, QTestState *dst)
{
    g_autofree char *err = NULL;

    if (!mig_finish(d->pv->qts, &err)) {
        g_error("migration failed on the source: %s", err);
    }
    g_clear_pointer(&err, g_free);
    if (!mig_finish(dst, &err)) {
        g_error("migration failed on the destination: %s", err);
    }
    qtest_quit(d->pv->qts);
    pv_move(d->pv, dst);
}

static void migrate(Dp *d)
{
    mig_end(d, mig_begin(d));
}

static bool skip_ibverbs(void)
{
    return skip_on_ibverbs("the ibverbs backend does not migrate "
                           "(/pvrdma/migration/ibverbs-blocker)");
}

/* Commands and completions */

static void send_buf(Dp *d, PvQp *qp, uint64_t wr_id, uint32_t flags,
                     uint64_t addr, uint32_t len)
{
    PvrdmaSge s = sge(addr, len, d->lkey);

    post_send(d, qp, wqe(wr_id, PVRDMA_WR_SEND, flags | PVRDMA_SEND_SIGNALED,
                         1), &s, 1);
}

static void write_buf(Dp *d, PvQp *qp, uint64_t wr_id, uint64_t addr,
                      uint32_t len, uint64_t raddr, uint32_t rkey)
{
    PvrdmaSge s = sge(addr, len, d->lkey);

    post_send(d, qp, wqe_rdma(wr_id, PVRDMA_WR_RDMA_WRITE,
                              PVRDMA_SEND_SIGNALED, 1, raddr, rkey), &s, 1);
}

/* A SEND of @len bytes from @a to @b, data and completions checked. */
static void expect_send_works(Dp *d, PvQp *a, PvQp *b, uint64_t tag,
                              uint32_t len)
{
    uint64_t src = d->mem + 0x8000, dst = d->mem + 0xc000;

    fill(d, src, len, tag);
    post_recv1(d, b, tag + 1, dst, len);
    send_buf(d, a, tag, 0, src, len);
    expect_rc_success(d, d->scq, tag, PVRDMA_WC_SEND, len, a);
    expect_recv(d, d->rcq, tag + 1, PVRDMA_WC_RECV, len, b, a, 0, 0);
    check_fill(d, dst, len, tag, 0);
}

/* A state built from every kind of object */

typedef struct MigObjs {
    PvQp *a, *b, *ud, *gsi, *sq;
    PvSrq *srq;
    PvCq *cq3;
    uint32_t uc, uc_pd;
    uint32_t user_rkey, frmr, frmr_key;
    uint64_t phys[4];
    uint64_t frmr_pages[2];
} MigObjs;

#define USER_IOVA   0x10000
#define FRMR_IOVA   0x20000

static void mig_objs_build(Dp *d, MigObjs *o)
{
    PvrdmaCmdCreateMrResp r;
    QpSpec q;
    uint64_t pdir;

    rc_pair(d, &o->a, &o->b, ACC_ALL, 1, 7);
    o->ud = ud_qp(d, PVRDMA_QPT_UD, UD_QKEY);
    o->gsi = ud_qp(d, PVRDMA_QPT_GSI, GSI_QKEY);
    g_assert_cmpuint(create_uc(d->pv, (d->pv->uar.addr / PAGE) + 1, &o->uc),
                     ==, ERR_OK);
    g_assert_cmpuint(create_pd(d->pv, o->uc, &o->uc_pd), ==, ERR_OK);
    o->srq = pv_srq_new(d->pv, d->pd, 16, 2, 4);
    q = dp_spec(d, PVRDMA_QPT_RC, NULL, NULL);
    q.is_srq = true;
    q.srq = o->srq->handle;
    o->sq = dp_qp(d, &q, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    o->cq3 = dp_cq(d, 128);
    o->user_rkey = user_mr(d, ACC_ALL, USER_IOVA, 4 * PAGE, 4, o->phys);

    /* An FRMR with a registration made by a FAST_REG_MR WR */
    g_assert_cmpuint(create_mr(d->pv, d->pd, PVRDMA_MR_FLAG_FRMR, 0, 0, 0,
                               2, 0, &r), ==, ERR_OK);
    o->frmr = r.mr_handle;
    o->frmr_key = (r.rkey & ~0xffu) | 0x5a;
    o->frmr_pages[0] = galloc(d->pv, PAGE);
    o->frmr_pages[1] = galloc(d->pv, PAGE);
    pdir = make_pdir(d->pv, 2, o->frmr_pages);
    post_send(d, o->b, wqe_fast_reg(0xf1, FRMR_IOVA, pdir, 2, 2 * PAGE,
                                    ACC_ALL, o->frmr_key), NULL, 0);
    expect_cqe(d, d->scq, 0xf1, PVRDMA_WC_SUCCESS, PVRDMA_WC_FAST_REG_MR,
               o->b);

    /* Work posted before the switch-over: receives on b, ud and the SRQ */
    post_recv1(d, o->b, 0xb1, d->mem + 0x1000, 256);
    post_recv1(d, o->ud, 0xd1, d->mem + 0x2000, 256 + GRH);
    pv_rq_put(d->pv, &o->srq->ring, 0x51, 1, NULL, 0);
}

static void test_objects(void)
{
    Dp *d;
    MigObjs o;
    PvQp *qps[5], *n1, *n2;
    PvrdmaQpAttr before[5];
    uint32_t i;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    mig_objs_build(d, &o);
    qps[0] = o.a; qps[1] = o.b; qps[2] = o.ud; qps[3] = o.gsi;
    qps[4] = o.sq;
    for (i = 0; i < ARRAY_SIZE(qps); i++) {
        before[i] = query_qp(d->pv, qps[i]->handle);
    }

    migrate(d);

    /* Every QP, with its number and every attribute */
    for (i = 0; i < ARRAY_SIZE(qps); i++) {
        PvrdmaQpAttr after = query_qp(d->pv, qps[i]->handle);

        g_assert_cmpmem(&after, sizeof(after), &before[i], sizeof(before[i]));
    }
    /* The receive posted on b before, a SEND after */
    fill(d, d->mem, 256, 0x11);
    send_buf(d, o.a, 0xa1, 0, d->mem, 256);
    expect_rc_success(d, d->scq, 0xa1, PVRDMA_WC_SEND, 256, o.a);
    expect_recv(d, d->rcq, 0xb1, PVRDMA_WC_RECV, 256, o.b, o.a, 0, 0);
    check_fill(d, d->mem + 0x1000, 256, 0x11, 0);
    /* The user MR's key, and the FRMR's registration */
    fill(d, d->mem + 0x3000, 2 * PAGE, 0x33);
    write_buf(d, o.a, 0xa2, d->mem + 0x3000, 2 * PAGE, USER_IOVA + PAGE,
              o.user_rkey);
    expect_rc_success(d, d->scq, 0xa2, PVRDMA_WC_RDMA_WRITE, 2 * PAGE, o.a);
    check_fill(d, o.phys[1], PAGE, 0x33, 0);
    check_fill(d, o.phys[2], PAGE, 0x33, PAGE);
    write_buf(d, o.a, 0xa3, d->mem + 0x3000, 64, FRMR_IOVA + PAGE,
              o.frmr_key);
    expect_rc_success(d, d->scq, 0xa3, PVRDMA_WC_RDMA_WRITE, 64, o.a);
    check_fill(d, o.frmr_pages[1], 64, 0x33, 0);
    /* UD to itself through GID 0, into the receive posted before */
    {
        PvrdmaSge s = sge(d->mem, 128, d->lkey);

        post_send(d, o.ud, wqe_ud(0xd2, PVRDMA_SEND_SIGNALED, 1, o.ud->qpn,
                                  UD_QKEY, gid0, 0), &s, 1);
        expect_cqe(d, d->scq, 0xd2, PVRDMA_WC_SUCCESS, PVRDMA_WC_SEND, o.ud);
        expect_cqe(d, d->rcq, 0xd1, PVRDMA_WC_SUCCESS, PVRDMA_WC_RECV, o.ud);
        check_fill(d, d->mem + 0x2000 + GRH, 128, 0x11, 0);
    }
    /* New objects on the destination */
    {
        QpSpec q = dp_spec(d, PVRDMA_QPT_RC, o.cq3, o.cq3);

        n1 = dp_qp(d, &q, 0, PVRDMA_ACCESS_LOCAL_WRITE);
        n2 = dp_qp(d, &q, 0, PVRDMA_ACCESS_LOCAL_WRITE);
        rc_connect(d, n1, n2->qpn, ACC_ALL, 1, 7);
        rc_connect(d, n2, n1->qpn, ACC_ALL, 1, 7);
        g_assert_cmpuint(n1->qpn, !=, o.a->qpn);
        fill(d, d->mem + 0x4000, 32, 0x44);
        post_recv1(d, n2, 0x2, d->mem + 0x5000, 32);
        send_buf(d, n1, 0x1, 0, d->mem + 0x4000, 32);
        /* One CQ for both: the responder completes first. */
        expect_cqe(d, o.cq3, 0x2, PVRDMA_WC_SUCCESS, PVRDMA_WC_RECV, n2);
        expect_cqe(d, o.cq3, 0x1, PVRDMA_WC_SUCCESS, PVRDMA_WC_SEND, n1);
        check_fill(d, d->mem + 0x5000, 32, 0x44, 0);
    }
    /* Every object goes away under the handle it had */
    for (i = 0; i < ARRAY_SIZE(qps); i++) {
        g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_QP,
                                 qps[i]->handle), ==, ERR_OK);
    }
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_SRQ, o.srq->handle),
                     ==, ERR_OK);
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_MR, o.frmr), ==,
                     ERR_OK);
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_PD, o.uc_pd), ==,
                     ERR_OK);
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_UC, o.uc), ==,
                     ERR_OK);
    /* In use by a QP made on the destination: the references came too. */
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_CQ, o.cq3->handle),
                     !=, ERR_OK);
    pv_srq_free(o.srq);
    pv_cq_free(o.cq3);
    dp_free(d);
}

/* A WR stalled in RNR: its timer and its wait for a receive carry over. */
static void test_rnr_stalled(void)
{
    Dp *d;
    PvQp *a, *b;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    /* b's RNR timer: 31, 491.52 ms; a retries forever. */
    rc_pair(d, &a, &b, ACC_ALL, 31, 7);
    fill(d, d->mem, 512, 0x21);
    send_buf(d, a, 0xa1, 0, d->mem, 512);
    expect_no_cqe(d, d->scq);
    /* A receive in b's ring, without its doorbell: only the timer finds it */
    pv_rq_put(d->pv, &b->rq, 0xb1, 1,
              &(PvrdmaSge){ d->mem + 0x1000, 512, d->lkey }, 1);

    migrate(d);

    expect_no_cqe(d, d->scq);
    qtest_clock_step(d->pv->qts, 500 * SCALE_MS);
    main_loop_run(d);
    expect_rc_success(d, d->scq, 0xa1, PVRDMA_WC_SEND, 512, a);
    expect_recv(d, d->rcq, 0xb1, PVRDMA_WC_RECV, 512, b, a, 0, 0);
    check_fill(d, d->mem + 0x1000, 512, 0x21, 0);

    /* Stalled again across a second migration: the doorbell wakes it. */
    send_buf(d, a, 0xa2, 0, d->mem, 64);
    expect_no_cqe(d, d->scq);
    migrate(d);
    post_recv1(d, b, 0xb2, d->mem + 0x2000, 64);
    expect_rc_success(d, d->scq, 0xa2, PVRDMA_WC_SEND, 64, a);
    expect_recv(d, d->rcq, 0xb2, PVRDMA_WC_RECV, 64, b, a, 0, 0);
    check_fill(d, d->mem + 0x2000, 64, 0x21, 0);
    dp_free(d);
}

/*
 * An RDMA WRITE_WITH_IMM of three packets (the loopback MTU is a 1 MiB
 * step) whose last finds no receive WQE: the first two are placed, the
 * requester waits (RNR) to send the last again, and the responder is in
 * the middle of the WRITE.  Both halves' state carries over (the WR with
 * its PSNs and the one to send next; the WRITE's address, key and the
 * bytes placed); the receive posted on the destination lets the last
 * packet in, and every byte is there.
 */
static void test_write_imm_mid_message(void)
{
    const uint64_t len = (2 << 20) + 4093;
    uint64_t src, dst;
    PvrdmaSge s;
    PvQp *a, *b;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 31, 7);
    src = galloc(d->pv, len);
    dst = galloc(d->pv, len);
    fill(d, src, len, 0x3c);
    s = sge(src, len, d->lkey);
    post_send(d, a, wqe_rdma(0xa1, PVRDMA_WR_RDMA_WRITE_WITH_IMM,
                             PVRDMA_SEND_SIGNALED, 1, dst, d->lkey), &s, 1);
    main_loop_run(d);           /* the later steps come from a bottom half */
    expect_no_cqe(d, d->scq);
    expect_no_cqe(d, d->rcq);

    migrate(d);

    post_recv1(d, b, 0xb1, d->mem + 0x1000, 16);
    expect_cqe(d, d->rcq, 0xb1, PVRDMA_WC_SUCCESS,
               PVRDMA_WC_RECV_RDMA_WITH_IMM, b);
    expect_rc_success(d, d->scq, 0xa1, PVRDMA_WC_RDMA_WRITE, len, a);
    check_fill(d, dst, len, 0x3c, 0);
    dp_free(d);
}

/* A CQ armed for solicited completions stays armed so. */
static void test_cq_armed(void)
{
    Dp *d;
    PvQp *a, *b;
    uint32_t h[4];

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    pv_cq_db(d->pv, d->rcq, PVRDMA_UAR_CQ_ARM_SOL);

    migrate(d);

    expect_send_works(d, a, b, 0x10, 16);
    g_assert_cmpuint(pv_cq_notifications(d->pv, h, ARRAY_SIZE(h)), ==, 0);
    post_recv1(d, b, 0x21, d->mem + 0x1000, 16);
    send_buf(d, a, 0x20, PVRDMA_SEND_SOLICITED, d->mem, 16);
    expect_rc_success(d, d->scq, 0x20, PVRDMA_WC_SEND, 16, a);
    g_assert_cmpuint(pv_cq_notifications(d->pv, h, ARRAY_SIZE(h)), ==, 1);
    g_assert_cmpuint(h[0], ==, d->rcq->handle);
    dp_free(d);
}

/* A QP in ERR with WQEs still in its rings: the flush goes on there. */
static void test_flush(void)
{
    Dp *d;
    PvQp *a, *b;
    PvrdmaSge s;
    int i;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    g_assert_cmpuint(modify_state(d, a, PVRDMA_QPS_ERR), ==, ERR_OK);
    s = sge(d->mem, 8, d->lkey);
    for (i = 0; i < 3; i++) {
        PvrdmaSqWqeHdr h = wqe(0x100 + i, PVRDMA_WR_SEND, 0, 1);

        pv_sq_put(d->pv, a, &h, &s, 1);
        pv_rq_put(d->pv, &a->rq, 0x200 + i, 1, &s, 1);
    }

    migrate(d);

    g_assert_cmpuint(qp_state(d, a), ==, PVRDMA_QPS_ERR);
    pv_qp_db(d->pv, a, PVRDMA_UAR_QP_SEND | PVRDMA_UAR_QP_RECV);
    for (i = 0; i < 3; i++) {
        expect_cqe(d, d->scq, 0x100 + i, PVRDMA_WC_WR_FLUSH_ERR, ANY_OPCODE,
                   a);
    }
    for (i = 0; i < 3; i++) {
        expect_cqe(d, d->rcq, 0x200 + i, PVRDMA_WC_WR_FLUSH_ERR, ANY_OPCODE,
                   a);
    }
    expect_no_cqe(d, d->scq);
    dp_free(d);
}

/* Right after a QP's RESET, with receives posted in RESET */
static void test_after_qp_reset(void)
{
    Dp *d;
    PvQp *a, *b;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    g_assert_cmpuint(modify_state(d, b, PVRDMA_QPS_RESET), ==, ERR_OK);
    post_recv1(d, b, 0xb1, d->mem + 0x1000, 32);

    migrate(d);

    g_assert_cmpuint(qp_state(d, b), ==, PVRDMA_QPS_RESET);
    rc_connect(d, b, a->qpn, ACC_ALL, 1, 7);
    fill(d, d->mem, 32, 0x51);
    send_buf(d, a, 0xa1, 0, d->mem, 32);
    expect_rc_success(d, d->scq, 0xa1, PVRDMA_WC_SEND, 32, a);
    expect_recv(d, d->rcq, 0xb1, PVRDMA_WC_RECV, 32, b, a, 0, 0);
    check_fill(d, d->mem + 0x1000, 32, 0x51, 0);
    dp_free(d);
}

/* No DSR: never loaded, and gone with a device reset */
static void test_no_dsr(void)
{
    Dp *d;
    PvQp *a, *b;

    if (skip_ibverbs()) {
        return;
    }
    d = g_new0(Dp, 1);
    d->objs = g_ptr_array_new_with_free_func((GDestroyNotify)pv_qp_free);
    d->pv = pv_start();
    migrate(d);
    pv_load(d->pv);
    dp_init(d);
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    expect_send_works(d, a, b, 0x10, 64);

    /* The driver resets the device (unload): then the VM migrates. */
    wr(d->pv, PVRDMA_REG_CTL, PVRDMA_CTL_RESET);
    migrate(d);
    g_assert_cmpuint(rd(d->pv, PVRDMA_REG_ERR), ==, ERR_OK);
    pv_load(d->pv);
    pv_cq_free(d->scq);
    pv_cq_free(d->rcq);
    g_ptr_array_set_size(d->objs, 0);
    dp_init(d);
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    expect_send_works(d, a, b, 0x20, 64);
    dp_free(d);
}

/*
 * Pages the device writes after the source sent them are sent again: an
 * RDMA WRITE (and its CQE) while the source waits before the switch-over,
 * after every page went at least once, must be in the destination's RAM.
 */
static void test_dirty_pages(void)
{
    Dp *d;
    PvQp *a, *b;
    QTestState *dst;
    uint64_t src, dstbuf;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    src = d->mem + 0x4000;
    dstbuf = d->mem + 0x8000;
    fill(d, src, 4 * PAGE, 0x61);
    mig_pause_before_switchover(d->pv->qts);
    dst = mig_begin(d);
    mig_wait_status(d->pv->qts, "pre-switchover");

    write_buf(d, a, 0xa1, src, 4 * PAGE, dstbuf, d->lkey);
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate-continue', "
                             "'arguments': { 'state': 'pre-switchover' } }");
    mig_end(d, dst);

    check_fill(d, dstbuf, 4 * PAGE, 0x61, 0);
    expect_rc_success(d, d->scq, 0xa1, PVRDMA_WC_RDMA_WRITE, 4 * PAGE, a);
    dp_free(d);
}

/* Mutated streams */

typedef struct MigSection {
    size_t data;                    /* first byte of the device's data */
    size_t end;                     /* its section footer */
} MigSection;

/* The pvrdma section of a saved stream (a full section, then a footer). */
static MigSection mig_find_section(const uint8_t *buf, size_t len)
{
    static const char id[] = "0000:00:10.1/pvrdma";
    size_t idlen = strlen(id);
    MigSection sec = { 0 };
    const uint8_t *p = memmem(buf, len, id, idlen);
    size_t at;

    g_assert_nonnull(p);
    at = p - buf;
    g_assert_cmpuint(at, >=, 6);
    g_assert_cmpuint(buf[at - 1], ==, idlen);
    g_assert_cmpuint(buf[at - 6], ==, 0x04);          /* full section */
    sec.data = at + idlen + 8;                        /* instance, version */
    for (size_t i = sec.data; i + 5 < len; i++) {
        if (buf[i] == 0x7e && !memcmp(buf + i + 1, buf + at - 5, 4)) {
            sec.end = i;
        }
    }
    g_assert_cmpuint(sec.end, >, sec.data);
    return sec;
}

/* Alter the stream as variant @v says; returns its new length. */
static size_t mig_mutate(uint8_t *buf, size_t len, MigSection sec, int v,
                         GRand *r, char *what, size_t what_len)
{
    size_t off = g_rand_int_range(r, sec.data, sec.end - 4);
    uint32_t w;

    switch (v % 6) {
    case 0:
        buf[off] ^= 1 << g_rand_int_range(r, 0, 8);
        snprintf(what, what_len, "bit flipped at +%zu", off - sec.data);
        return len;
    case 1:
        memset(buf + off, 0xff, 4);
        snprintf(what, what_len, "0xffffffff at +%zu", off - sec.data);
        return len;
    case 2:
        memset(buf + off, 0, 4);
        snprintf(what, what_len, "0 at +%zu", off - sec.data);
        return len;
    case 3:
    case 4:
        w = ldl_be_p(buf + off) + (v % 6 == 3 ? 1 : -1);
        stl_be_p(buf + off, w);
        snprintf(what, what_len, "word %+d at +%zu", v % 6 == 3 ? 1 : -1,
                 off - sec.data);
        return len;
    default:
        snprintf(what, what_len, "stream cut at +%zu", off - sec.data);
        return off;
    }
}

/*
 * A destination that loaded a mutated stream must survive what a guest
 * does next: every doorbell of the source's objects, then a reset.
 */
static void mig_poke(QTestState *qts, Dp *d, const MigObjs *o)
{
    const PvQp *qps[] = { o->a, o->b, o->ud, o->gsi, o->sq };
    uint64_t uar = d->pv->uar.addr;

    qtest_qmp_assert_success(qts, "{ 'execute': 'query-pvrdma' }");
    for (size_t i = 0; i < ARRAY_SIZE(qps); i++) {
        qtest_writel(qts, uar + PVRDMA_UAR_QP_OFFSET, qps[i]->handle |
                     PVRDMA_UAR_QP_SEND | PVRDMA_UAR_QP_RECV);
    }
    qtest_writel(qts, uar + PVRDMA_UAR_SRQ_OFFSET,
                 o->srq->handle | PVRDMA_UAR_SRQ_RECV);
    qtest_writel(qts, uar + PVRDMA_UAR_CQ_OFFSET,
                 d->rcq->handle | PVRDMA_UAR_CQ_ARM);
    qtest_clock_step(qts, SCALE_MS * 1000);
    qtest_qmp_assert_success(qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_assert_success(qts, "{ 'execute': 'query-pvrdma' }");
}

#define MIG_VARIANTS    60

static void test_mutated_stream(void)
{
    g_autofree char *good = g_strdup_printf("%s/good.mig", tmpdir);
    g_autofree char *bad = g_strdup_printf("%s/bad.mig", tmpdir);
    g_autofree char *uri = g_strdup_printf("file:%s", bad);
    g_autofree char *good_uri = g_strdup_printf("file:%s", good);
    g_autofree uint8_t *buf = NULL;
    GRand *r = g_rand_new_with_seed(0x9e5eed);
    int refused = 0, loaded = 0;
    MigSection sec;
    MigObjs o;
    size_t len;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    mig_objs_build(d, &o);
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", good_uri);
    g_assert_true(mig_finish(d->pv->qts, NULL));
    g_assert_true(g_file_get_contents(good, (char **)&buf, &len, NULL));
    sec = mig_find_section(buf, len);
    g_test_message("stream of %zu bytes, device section %zu bytes",
                   len, sec.end - sec.data);

    for (int v = 0; v < MIG_VARIANTS; v++) {
        g_autofree uint8_t *m = g_memdup2(buf, len);
        g_autofree char *err = NULL;
        char what[64];
        size_t mlen = mig_mutate(m, len, sec, v, r, what, sizeof(what));
        QTestState *dst;

        g_assert_true(g_file_set_contents(bad, (char *)m, mlen, NULL));
        dst = pv_qemu_start(" -incoming defer");
        qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                                 "'arguments': { 'uri': %s, "
                                 "'exit-on-error': false } }", uri);
        if (mig_finish(dst, &err)) {
            loaded++;
            g_test_message("variant %d (%s): loaded", v, what);
            mig_poke(dst, d, &o);
        } else {
            refused++;
            g_test_message("variant %d (%s): refused: %s", v, what, err);
        }
        qtest_quit(dst);
    }
    g_test_message("%d variants: %d refused, %d loaded and survived",
                   MIG_VARIANTS, refused, loaded);
    g_assert_cmpint(refused, >, 0);
    g_rand_free(r);
    pv_srq_free(o.srq);
    pv_cq_free(o.cq3);
    dp_free(d);
}

/* Save to a file, quit, restore in a new QEMU: the QPs carry on. */
static void test_file(void)
{
    g_autofree char *path = g_strdup_printf("%s/saved.mig", tmpdir);
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *incoming = g_strdup_printf(" -incoming %s", uri);
    Dp *d;
    PvQp *a, *b;
    QTestState *dst;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    expect_send_works(d, a, b, 0x10, 128);
    post_recv1(d, b, 0xb1, d->mem + 0x1000, 128);
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    g_assert_true(mig_finish(d->pv->qts, NULL));
    qtest_quit(d->pv->qts);

    dst = pv_qemu_start(incoming);
    g_assert_true(mig_finish(dst, NULL));
    pv_move(d->pv, dst);
    fill(d, d->mem, 128, 0x71);
    send_buf(d, a, 0xa1, 0, d->mem, 128);
    expect_rc_success(d, d->scq, 0xa1, PVRDMA_WC_SEND, 128, a);
    expect_recv(d, d->rcq, 0xb1, PVRDMA_WC_RECV, 128, b, a, 0, 0);
    check_fill(d, d->mem + 0x1000, 128, 0x71, 0);
    expect_send_works(d, a, b, 0x20, 128);
    dp_free(d);
}

/* AUDIT-3 regressions: streams altered where the audit found a hole */

#define MIG_WR_MAGIC    0x5eedc0de00a3b1c7ull
/* Bytes from a send WR record's wr_id to its opcode, to its sgid_index */
#define MIG_WR_OPCODE   8
#define MIG_WR_SGID     112

static const uint8_t mig_far_gid[16] = { [10] = 0xff, 0xff, 10, 0, 9, 9 };

/*
 * Save, to @path, a device whose RC QP (in *@qp) has a started WR
 * outstanding: a SEND to a peer on a link that is not there, waiting for
 * its ACK.  Returns the stream and the offset of that WR's record.
 */
static uint8_t *mig_started_wr(Dp *d, PvQp **qp, const char *path,
                               size_t *len, size_t *wr)
{
    QpSpec s = dp_spec(d, PVRDMA_QPT_RC, NULL, NULL);
    RcPath far = { .dgid = mig_far_gid, .timeout = 14, .retry_cnt = 7 };
    PvrdmaSge sg = sge(d->mem, 64, d->lkey);
    uint8_t magic[8], *buf;
    MigSection sec;
    uint8_t *p;

    *qp = dp_qp(d, &s, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    rc_connect_path(d, *qp, 0x77, ACC_ALL, 12, 7, &far);
    post_send(d, *qp, wqe(MIG_WR_MAGIC, PVRDMA_WR_SEND, PVRDMA_SEND_SIGNALED,
                          1), &sg, 1);
    expect_no_cqe(d, d->scq);
    buf = mig_save(d->pv->qts, path, len);
    sec = mig_find_section(buf, *len);
    stq_be_p(magic, MIG_WR_MAGIC);
    p = memmem(buf + sec.data, sec.end - sec.data, magic, 8);
    g_assert_nonnull(p);
    *wr = p - buf;
    return buf;
}

/* Load @len bytes of @buf in a new QEMU: true if the load completed. */
static bool mig_load_altered(const char *path, const uint8_t *buf, size_t len,
                             QTestState **out)
{
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *err = NULL;
    QTestState *dst;
    bool loaded;

    g_assert_true(g_file_set_contents(path, (const char *)buf, len, NULL));
    dst = pv_qemu_start(" -incoming defer");
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    loaded = mig_finish(dst, &err);
    g_test_message("the altered stream %s%s", loaded ? "loaded" :
                   "was refused: ", loaded ? "" : err);
    /* What the restored WR would do: its retransmission timer fires. */
    qtest_clock_step(dst, 2 * SCALE_MS * 1000);
    qtest_qmp_assert_success(dst, "{ 'execute': 'query-pvrdma' }");
    *out = dst;
    return loaded;
}

/*
 * AUDIT-3 M2: a started WR whose opcode has no packet form (LSO).  It
 * used to load, and the retransmission after the load dereferenced the
 * empty opcode table entry (SIGSEGV).
 */
static void test_audit3_started_wr_opcode(void)
{
    g_autofree char *path = g_strdup_printf("%s/m2-opcode.mig", tmpdir);
    g_autofree uint8_t *buf = NULL;
    QTestState *dst;
    size_t len, wr;
    PvQp *qp;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    buf = mig_started_wr(d, &qp, path, &len, &wr);
    g_assert_cmpuint(ldl_be_p(buf + wr + MIG_WR_OPCODE), ==, 2); /* SEND */
    stl_be_p(buf + wr + MIG_WR_OPCODE, 7);                       /* LSO */
    g_assert_false(mig_load_altered(path, buf, len, &dst));
    qtest_quit(dst);
    dp_free(d);
}

/*
 * AUDIT-3 M2: the QP record made UD and its started WR's GID index 200
 * (of a 16-entry table).  It used to load, and the retransmission read
 * the source GID 7 KiB past the table (ASan: heap-buffer-overflow).
 */
static void test_audit3_started_wr_ud_gid(void)
{
    g_autofree char *path = g_strdup_printf("%s/m2-ud-gid.mig", tmpdir);
    g_autofree uint8_t *buf = NULL;
    QTestState *dst;
    size_t len, wr, i;
    PvQp *qp;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    buf = mig_started_wr(d, &qp, path, &len, &wr);
    /*
     * The QP record: its handle, its QP number, its type (RC: 2); sent
     * before the switch-over, ahead of the device section.
     */
    for (i = 0; i + 12 <= wr; i++) {
        if (ldl_be_p(buf + i) == qp->handle &&
            ldl_be_p(buf + i + 4) == qp->qpn && ldl_be_p(buf + i + 8) == 2) {
            break;
        }
    }
    g_assert_cmpuint(i + 12, <=, wr);
    stl_be_p(buf + i + 8, 4);                                    /* UD */
    buf[wr + MIG_WR_SGID] = 200;
    g_assert_false(mig_load_altered(path, buf, len, &dst));
    qtest_quit(dst);
    dp_free(d);
}

/* Occurrences of @needle in @buf from @from on */
static int count_in(const uint8_t *buf, size_t len, size_t from,
                    const char *needle)
{
    size_t nlen = strlen(needle);
    int n = 0;

    for (const uint8_t *p = buf + from;
         (p = memmem(p, len - (p - buf), needle, nlen)); p += nlen) {
        n++;
    }
    return n;
}

/*
 * The stream's JSON description (the vmdesc QEMU appends for
 * analyze-migration.py) describes an array of records once when every
 * record is alike (vmsd_can_compress()); a VMSTATE_VALIDATE inside a
 * record made it describe each one, which with the tables at their limits
 * cost 70 ms of downtime (make bench-migration, full: 116 ms, 58 without).
 * 16 QPs, moved to the error state at the switch-over (records that did
 * not change since the live section sent them are not in the device
 * state): each record array described once.
 */
static void test_vmdesc_compressed(void)
{
    g_autofree char *path = g_strdup_printf("%s/vmdesc.mig", tmpdir);
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree uint8_t *buf = NULL;
    const uint8_t *desc;
    size_t len, at;
    int qp, soft, pages;
    PvQp *qps[16];
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    for (int i = 0; i < 8; i++) {
        rc_pair(d, &qps[2 * i], &qps[2 * i + 1], ACC_ALL, 1, 7);
    }
    mig_pause_before_switchover(d->pv->qts);
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    mig_wait_status(d->pv->qts, "pre-switchover");
    for (int i = 0; i < 16; i++) {
        g_assert_cmpuint(modify_state(d, qps[i], PVRDMA_QPS_ERR), ==, ERR_OK);
    }
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate-continue', "
                             "'arguments': { 'state': 'pre-switchover' } }");
    g_assert_true(mig_finish(d->pv->qts, NULL));
    g_assert_true(g_file_get_contents(path, (char **)&buf, &len, NULL));
    desc = memmem(buf, len, "\"page_size\"", 11);
    g_assert_nonnull(desc);
    at = desc - buf;
    qp = count_in(buf, len, at, "\"mig.qp\"");
    soft = count_in(buf, len, at, "\"mig\"");
    pages = count_in(buf, len, at, "\"rdma-page-list\"");
    g_test_message("the stream's description names the QP records %d "
                   "times, the soft engine's %d, the page-list struct %d",
                   qp, soft, pages);
    g_assert_cmpint(qp, ==, 1);
    g_assert_cmpint(soft, ==, 1);

    /*
     * The page count is still checked before the pages are read: the
     * first CQ's (npages, runs, first run word) given 2^18 + 1 pages.
     */
    for (size_t i = 8; i + 8 <= at; i++) {
        uint64_t w = ldq_be_p(buf + i);
        PvCq *cq = d->scq;

        if ((w & ~4095ull) == cq->pages[0] && (w & 4095) < cq->npages &&
            ldl_be_p(buf + i - 8) == cq->npages &&
            ldl_be_p(buf + i - 4) >= 1 && ldl_be_p(buf + i - 4) <= cq->npages) {
            QTestState *dst;

            stl_be_p(buf + i - 8, (1u << 18) + 1);
            g_assert_false(mig_load_altered(path, buf, len, &dst));
            qtest_quit(dst);
            dp_free(d);
            return;
        }
    }
    g_assert_not_reached();
}

/* Peak and current resident memory of process @pid, in KiB. */
static uint64_t proc_kib(pid_t pid, const char *field)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/status", pid);
    g_autofree char *s = NULL;
    const char *p;

    g_assert_true(g_file_get_contents(path, &s, NULL, NULL));
    p = strstr(s, field);
    g_assert_nonnull(p);
    return g_ascii_strtoull(p + strlen(field), NULL, 10);
}

#define L1_MRS      64
#define L1_RUNS     64      /* of 4096 pages: 2^18 pages, the most an MR has */

/*
 * AUDIT-3 L1: 64 MRs of one page, each made 2^18 pages in the stream by
 * 64 run words (+504 bytes each): 16M pages, over max-mr-pages-total
 * (4M).  The destination used to expand every list (128 MiB, written)
 * before the limit was checked; now it refuses the stream with the runs
 * alone in memory.  The lists are those the live section sent before the
 * switch-over (npages, runs, words as in a record), so the whole stream
 * is searched.
 */
static void test_audit3_page_runs(void)
{
    g_autofree char *path = g_strdup_printf("%s/l1.mig", tmpdir);
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree char *err = NULL;
    g_autofree uint8_t *buf = NULL;
    GByteArray *out = g_byte_array_new();
    uint64_t phys[L1_MRS], hwm0, hwm1;
    QTestState *dst;
    size_t len, from = 0;
    int found = 0;
    Dp *d;

    if (skip_ibverbs()) {
        g_byte_array_free(out, true);
        return;
    }
    d = dp_new();
    for (int i = 0; i < L1_MRS; i++) {
        user_mr(d, ACC_ALL, 0x100000 + i * PAGE, PAGE, 1, &phys[i]);
    }
    buf = mig_save(d->pv->qts, path, &len);
    /* Each MR's page list: npages 1, 1 run word, the page with run 0 */
    for (size_t i = 0; i + 16 <= len; i++) {
        uint64_t page = ldq_be_p(buf + i + 8);
        bool mine = false;
        uint8_t v[8];

        for (int k = 0; k < L1_MRS; k++) {
            mine |= page == phys[k];
        }
        if (!mine || ldl_be_p(buf + i) != 1 || ldl_be_p(buf + i + 4) != 1) {
            continue;
        }
        g_byte_array_append(out, buf + from, i - from);
        stl_be_p(v, 1u << 18);                      /* npages */
        g_byte_array_append(out, v, 4);
        stl_be_p(v, L1_RUNS);                       /* run words */
        g_byte_array_append(out, v, 4);
        for (int k = 0; k < L1_RUNS; k++) {
            stq_be_p(v, phys[0] + (uint64_t)k * 4096 * PAGE + 4095);
            g_byte_array_append(out, v, 8);
        }
        from = i + 16;
        found++;
    }
    g_byte_array_append(out, buf + from, len - from);
    g_assert_cmpint(found, ==, L1_MRS);
    g_assert_true(g_file_set_contents(path, (char *)out->data, out->len,
                                      NULL));
    dst = pv_qemu_start(" -incoming defer");
    hwm0 = proc_kib(qtest_pid(dst), "VmHWM:");
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    g_assert_false(mig_finish(dst, &err));
    hwm1 = proc_kib(qtest_pid(dst), "VmHWM:");
    g_test_message("refused: %s; peak resident memory %" PRIu64 " KiB "
                   "before the load, %" PRIu64 " KiB after", err, hwm0,
                   hwm1);
    /* 64 expanded lists would be 131072 KiB. */
    g_assert_cmpuint(hwm1 - hwm0, <, 32 * 1024);
    qtest_quit(dst);
    g_byte_array_free(out, true);
    dp_free(d);
}

/* MR page lists sent before the switch-over (the live section) */

#define LIVE_ID         "0000:00:10.1/rdma-mr-pages"
#define LIVE_PAGES      1                   /* item tags */
#define LIVE_DROP       2
#define LIVE_B_PAGES    64

/* Offset of the staged list of MR @handle (its PAGES item) in @buf */
static size_t live_item(const uint8_t *buf, size_t len, uint32_t tag,
                        uint32_t handle, uint32_t npages)
{
    size_t start = (const uint8_t *)memmem(buf, len, LIVE_ID,
                                           strlen(LIVE_ID)) - buf;

    g_assert_cmpuint(start, <, len);
    for (size_t i = start; i + 20 <= len; i++) {
        if (ldl_be_p(buf + i) == tag && ldl_be_p(buf + i + 4) == handle &&
            (tag == LIVE_DROP || ldl_be_p(buf + i + 16) == npages)) {
            return i;
        }
    }
    return 0;
}

/*
 * MR A registered before the migration's setup, B registered and C
 * deregistered while it runs: a stream to a file at 64 KiB/s with a 1 ms
 * downtime limit is sending RAM when they change, and then B's list
 * (512 bytes) is more than the switch-over allows, so an iteration sends
 * it and drops C's.  In a new QEMU, A's and B's pages take data through
 * their keys and C is gone.
 */
static uint8_t *live_stream(Dp *d, const char *path, size_t *len,
                            uint32_t *ra, uint32_t *rb, uint32_t *hc,
                            uint64_t *pa, uint64_t *pb)
{
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    uint64_t pc[2];
    uint8_t *buf;

    *ra = user_mr(d, ACC_ALL, USER_IOVA, 4 * PAGE, 4, pa);
    *hc = user_mr(d, ACC_ALL, USER_IOVA, 2 * PAGE, 2, pc) >> 8;
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': "
                             "'migrate-set-parameters', 'arguments': "
                             "{ 'max-bandwidth': 65536, "
                             "'downtime-limit': 1 } }");
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    mig_wait_status(d->pv->qts, "active");
    *rb = user_mr(d, ACC_ALL, USER_IOVA + (1ull << 30),
                  LIVE_B_PAGES * PAGE, LIVE_B_PAGES, pb);
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_MR, *hc), ==,
                     ERR_OK);
    g_assert_true(mig_finish(d->pv->qts, NULL));
    g_assert_true(g_file_get_contents(path, (char **)&buf, len, NULL));
    return buf;
}

static void test_live_mr_pages(void)
{
    g_autofree char *path = g_strdup_printf("%s/live.mig", tmpdir);
    g_autofree char *incoming = g_strdup_printf(" -incoming file:%s", path);
    g_autofree uint8_t *buf = NULL;
    uint64_t pa[4], pb[LIVE_B_PAGES];
    uint32_t ra, rb, hc;
    PvQp *a, *b;
    QTestState *dst;
    size_t len;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    buf = live_stream(d, path, &len, &ra, &rb, &hc, pa, pb);
    /* A went in the setup, B and C's drop in an iteration */
    g_assert_cmpuint(live_item(buf, len, LIVE_PAGES, ra >> 8, 4), !=, 0);
    g_assert_cmpuint(live_item(buf, len, LIVE_PAGES, rb >> 8, LIVE_B_PAGES),
                     !=, 0);
    g_assert_cmpuint(live_item(buf, len, LIVE_DROP, hc, 0), !=, 0);
    qtest_quit(d->pv->qts);

    dst = pv_qemu_start(incoming);
    g_assert_true(mig_finish(dst, NULL));
    pv_move(d->pv, dst);
    fill(d, d->mem + 0x3000, 2 * PAGE, 0x3a);
    write_buf(d, a, 0xa1, d->mem + 0x3000, 2 * PAGE, USER_IOVA + PAGE, ra);
    expect_rc_success(d, d->scq, 0xa1, PVRDMA_WC_RDMA_WRITE, 2 * PAGE, a);
    check_fill(d, pa[1], PAGE, 0x3a, 0);
    check_fill(d, pa[2], PAGE, 0x3a, PAGE);
    write_buf(d, a, 0xa2, d->mem + 0x3000, 2 * PAGE,
              USER_IOVA + (1ull << 30) + 62 * PAGE, rb);
    expect_rc_success(d, d->scq, 0xa2, PVRDMA_WC_RDMA_WRITE, 2 * PAGE, a);
    check_fill(d, pb[62], PAGE, 0x3a, 0);
    check_fill(d, pb[63], PAGE, 0x3a, PAGE);
    /* C was deregistered on the source: its handle holds no MR. */
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_MR, hc), !=, ERR_OK);
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_MR, rb >> 8), ==,
                     ERR_OK);
    expect_send_works(d, a, b, 0x30, 64);
    dp_free(d);
}

/*
 * An MR registered after the last iteration (the source paused before
 * the switch-over) has its pages in its record, not staged: they must
 * arrive all the same.
 */
static void test_live_mr_pages_inline(void)
{
    uint64_t pa[4], px[3];
    uint32_t ra, rx;
    QTestState *dst;
    PvQp *a, *b;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    ra = user_mr(d, ACC_ALL, USER_IOVA, 4 * PAGE, 4, pa);
    mig_pause_before_switchover(d->pv->qts);
    dst = mig_begin(d);
    mig_wait_status(d->pv->qts, "pre-switchover");
    rx = user_mr(d, ACC_ALL, USER_IOVA + (1ull << 30), 3 * PAGE, 3, px);
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate-continue', "
                             "'arguments': { 'state': 'pre-switchover' } }");
    mig_end(d, dst);

    fill(d, d->mem + 0x3000, 2 * PAGE, 0x5c);
    write_buf(d, a, 0xa1, d->mem + 0x3000, 2 * PAGE,
              USER_IOVA + (1ull << 30) + PAGE, rx);
    expect_rc_success(d, d->scq, 0xa1, PVRDMA_WC_RDMA_WRITE, 2 * PAGE, a);
    check_fill(d, px[1], PAGE, 0x5c, 0);
    check_fill(d, px[2], PAGE, 0x5c, PAGE);
    write_buf(d, a, 0xa2, d->mem + 0x3000, PAGE, USER_IOVA + 3 * PAGE, ra);
    expect_rc_success(d, d->scq, 0xa2, PVRDMA_WC_RDMA_WRITE, PAGE, a);
    check_fill(d, pa[3], PAGE, 0x5c, 0);
    dp_free(d);
}

/*
 * Load the stream at @uri (a file) into a new QEMU that stays up if the
 * load fails; true if it was taken (*@err: why not).  The destination
 * answers query-pvrdma either way; the caller quits it.
 */
static bool live_load(const char *uri, QTestState **dst, char **err)
{
    bool ok;

    *dst = pv_qemu_start(" -incoming defer");
    qtest_qmp_assert_success(*dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    ok = mig_finish(*dst, err);
    qtest_qmp_assert_success(*dst, "{ 'execute': 'query-pvrdma' }");
    return ok;
}

/*
 * Objects that change after the live section sent their records (a QP
 * moved to the error state, a CQ destroyed, a PD created, while the
 * source waits before the switch-over) arrive as they are then: the
 * device state carries the changed and new records, no longer names the
 * gone one, and the records of the others, unchanged, are the ones sent
 * before.
 */
static void test_live_records_changed(void)
{
    QTestState *dst;
    uint32_t pd2;
    PvQp *a, *b;
    PvCq *c;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    c = dp_cq(d, 16);
    mig_pause_before_switchover(d->pv->qts);
    dst = mig_begin(d);
    mig_wait_status(d->pv->qts, "pre-switchover");
    g_assert_cmpuint(modify_state(d, a, PVRDMA_QPS_ERR), ==, ERR_OK);
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_CQ, c->handle), ==,
                     ERR_OK);
    g_assert_cmpuint(create_pd(d->pv, 0, &pd2), ==, ERR_OK);
    qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate-continue', "
                             "'arguments': { 'state': 'pre-switchover' } }");
    mig_end(d, dst);

    g_assert_cmpuint(qp_state(d, a), ==, PVRDMA_QPS_ERR);
    g_assert_cmpuint(qp_state(d, b), ==, PVRDMA_QPS_RTS);
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_CQ, c->handle), !=,
                     ERR_OK);
    g_assert_cmpuint(destroy(d->pv, PVRDMA_CMD_DESTROY_PD, pd2), ==, ERR_OK);
    pv_cq_free(c);
    dp_free(d);
}

/*
 * The device state's list of objects whose records were sent before the
 * switch-over, in a stream where nothing changed: six counts of records
 * carried, all 0, six counts of records named (at least 4 in all), then
 * the handles, rising within each type.  Its offset in @buf; *@first2:
 * the index of the first handle of a type with two or more.
 */
static size_t staged_list(const uint8_t *buf, MigSection sec,
                          uint32_t *nstaged, uint32_t *first2)
{
    for (size_t i = sec.data; i + 48 <= sec.end; i++) {
        uint32_t n[6], sum = 0, k = 0, two = UINT32_MAX;
        bool ok = true;

        for (int t = 0; t < 6 && ok; t++) {
            ok = !ldl_be_p(buf + i + 4 * t);
            n[t] = ldl_be_p(buf + i + 24 + 4 * t);
            sum += MIN(n[t], 4096);
        }
        if (!ok || sum < 4 || sum > 64 || i + 48 + 4 * sum > sec.end) {
            continue;
        }
        for (int t = 0; t < 6 && ok; t++) {
            for (uint32_t j = 0; j < n[t] && ok; j++, k++) {
                uint32_t h = ldl_be_p(buf + i + 48 + 4 * k);

                ok = h < 4096 &&
                     (!j || h > ldl_be_p(buf + i + 48 + 4 * (k - 1)));
            }
            if (n[t] >= 2 && two == UINT32_MAX) {
                two = k - n[t];
            }
        }
        if (ok && two != UINT32_MAX) {
            *nstaged = sum;
            *first2 = two;
            return i + 48;
        }
    }
    g_assert_not_reached();
}

/*
 * A device state that names a record the live section did not send, or
 * one twice, must be refused (and what was staged freed: LeakSanitizer
 * in the ASan lane).
 */
static void test_live_records_named(void)
{
    g_autofree char *path = g_strdup_printf("%s/named.mig", tmpdir);
    g_autofree char *uri = g_strdup_printf("file:%s", path);
    g_autofree uint8_t *buf = NULL;
    uint32_t n = 0, two = 0;
    size_t len, at;
    PvQp *a, *b;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    buf = mig_save(d->pv->qts, path, &len);
    at = staged_list(buf, mig_find_section(buf, len), &n, &two);
    g_test_message("the device state names %u records sent before", n);

    for (int v = 0; v < 2; v++) {
        g_autofree uint8_t *m = g_memdup2(buf, len);
        g_autofree char *err = NULL;
        QTestState *dst;

        if (v) {                    /* one object named twice */
            stl_be_p(m + at + 4 * (two + 1), ldl_be_p(m + at + 4 * two));
        } else {                    /* a handle no record was sent of */
            stl_be_p(m + at + 4 * (n - 1), 4000);
        }
        g_assert_true(g_file_set_contents(path, (char *)m, len, NULL));
        g_assert_false(live_load(uri, &dst, &err));
        g_test_message("variant %d: refused: %s", v, err);
        qtest_quit(dst);
    }
    dp_free(d);
}


/*
 * A live section that lies or stops: each altered stream must be refused
 * (the staged lists freed: the ASan lane's LeakSanitizer checks), and the
 * destination must then take a valid stream.
 */
static void test_live_mr_pages_corrupt(void)
{
    g_autofree char *path = g_strdup_printf("%s/live.mig", tmpdir);
    g_autofree char *bad = g_strdup_printf("%s/live-bad.mig", tmpdir);
    g_autofree char *uri = g_strdup_printf("file:%s", bad);
    g_autofree uint8_t *buf = NULL;
    uint64_t pa[4], pb[LIVE_B_PAGES];
    uint32_t ra, rb, hc;
    size_t len, ia, ib;
    PvQp *a, *b;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    buf = live_stream(d, path, &len, &ra, &rb, &hc, pa, pb);
    ia = live_item(buf, len, LIVE_PAGES, ra >> 8, 4);
    ib = live_item(buf, len, LIVE_PAGES, rb >> 8, LIVE_B_PAGES);
    g_assert_cmpuint(ia, !=, 0);
    g_assert_cmpuint(ib, !=, 0);

    for (int v = 0; v < 7; v++) {
        g_autofree uint8_t *m = g_memdup2(buf, len);
        g_autofree char *err = NULL;
        size_t mlen = len;
        QTestState *dst;

        switch (v) {
        case 0:                     /* cut inside A's runs */
            mlen = ia + 30;
            break;
        case 1:                     /* A's serial */
            stq_be_p(m + ia + 8, ldq_be_p(m + ia + 8) + 1);
            break;
        case 2:                     /* A one page longer than its runs */
            stl_be_p(m + ia + 16, 5);
            break;
        case 3:                     /* B's handle out of range */
            stl_be_p(m + ib + 4, 0x7fffffff);
            break;
        case 4:                     /* an unknown item instead of B */
            stl_be_p(m + ib, 9);
            break;
        case 5:                     /* B's page count over an MR's */
            stl_be_p(m + ib + 16, (1u << 18) + 1);
            break;
        default:                    /* cut inside B's runs */
            mlen = ib + 40;
            break;
        }
        g_assert_true(g_file_set_contents(bad, (char *)m, mlen, NULL));
        g_assert_false(live_load(uri, &dst, &err));
        g_test_message("variant %d: refused: %s", v, err);
        qtest_qmp_assert_success(dst, "{ 'execute': 'system_reset' }");
        qtest_quit(dst);
    }
    dp_free(d);
}

/*
 * A page list whose lowest and highest pages are one stretch of RAM is
 * checked at the switch-over by one translation (rdma_pages_in_one_ram()),
 * not page by page: B's staged list rewritten as a RAM page below the VGA
 * window, a page of the option ROM (0xc0000, read-only) and then 62 of
 * its own pages must still be refused, and the same list with a RAM page
 * in the ROM's place taken.
 */
static void test_live_mr_pages_rom_inside(void)
{
    g_autofree char *path = g_strdup_printf("%s/live.mig", tmpdir);
    g_autofree char *bad = g_strdup_printf("%s/live-rom.mig", tmpdir);
    g_autofree char *uri = g_strdup_printf("file:%s", bad);
    g_autofree uint8_t *buf = NULL;
    uint64_t pa[4], pb[LIVE_B_PAGES];
    uint32_t ra, rb, hc;
    size_t len, ib, end;
    PvQp *a, *b;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    buf = live_stream(d, path, &len, &ra, &rb, &hc, pa, pb);
    ib = live_item(buf, len, LIVE_PAGES, rb >> 8, LIVE_B_PAGES);
    g_assert_cmpuint(ib, !=, 0);
    end = ib + 24 + 8 * (size_t)ldl_be_p(buf + ib + 20);   /* after its runs */
    g_assert_cmpuint(end, <=, len);

    for (int v = 0; v < 2; v++) {
        g_autoptr(GByteArray) m = g_byte_array_new();
        g_autofree char *err = NULL;
        uint8_t runs[4 + 3 * 8];
        QTestState *dst;
        bool ok;

        stl_be_p(runs, 3);
        stq_be_p(runs + 4, 0x1000);
        stq_be_p(runs + 12, v ? 0x2000 : 0xc0000);
        stq_be_p(runs + 20, pb[0] | (LIVE_B_PAGES - 3));
        g_byte_array_append(m, buf, ib + 20);
        g_byte_array_append(m, runs, sizeof(runs));
        g_byte_array_append(m, buf + end, len - end);
        g_assert_true(g_file_set_contents(bad, (char *)m->data, m->len,
                                          NULL));
        ok = live_load(uri, &dst, &err);
        g_test_message("%s page inside: %s", v ? "RAM" : "ROM",
                       ok ? "taken" : err);
        g_assert_cmpint(ok, ==, v == 1);
        qtest_quit(dst);
    }
    dp_free(d);
}

/* Wait for job @id of @qts to conclude; true if it had no error. */
static bool job_done(QTestState *qts, const char *id)
{
    gint64 end = g_get_monotonic_time() + MIG_WAIT_US;

    for (;;) {
        QDict *resp = qtest_qmp(qts, "{ 'execute': 'query-jobs' }");
        QList *jobs = qdict_get_qlist(resp, "return");
        const QListEntry *e;
        bool done = false, ok = false;

        QLIST_FOREACH_ENTRY(jobs, e) {
            QDict *j = qobject_to(QDict, qlist_entry_obj(e));

            if (!strcmp(qdict_get_str(j, "id"), id) &&
                !strcmp(qdict_get_str(j, "status"), "concluded")) {
                done = true;
                ok = !qdict_haskey(j, "error");
                if (!ok) {
                    g_test_message("job %s: %s", id,
                                   qdict_get_str(j, "error"));
                }
            }
        }
        qobject_unref(resp);
        if (done) {
            qtest_qmp_assert_success(qts, "{ 'execute': 'job-dismiss', "
                                     "'arguments': { 'id': %s } }", id);
            return ok;
        }
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(2000);
    }
}

/* -blockdev options of the qcow2 image at @img, node "d0" */
static char *snap_blockdev(const char *img)
{
    return g_strdup_printf(" -blockdev driver=file,filename=%s,node-name=f0"
                           " -blockdev driver=qcow2,file=f0,node-name=d0",
                           img);
}

static bool snap_job(QTestState *qts, const char *cmd, const char *tag)
{
    g_autofree char *id = g_strdup_printf("%s-%s", cmd, tag);

    qtest_qmp_assert_success(qts, "{ 'execute': %s, 'arguments': { "
                             "'job-id': %s, 'tag': %s, 'vmstate': 'd0', "
                             "'devices': [ 'd0' ] } }", cmd, id, tag);
    return job_done(qts, id);
}

/*
 * QEMU 10.0's save_snapshot() and load_snapshot() leak (tests/qtest/
 * lsan.supp says what); LeakSanitizer tells their leaks from the device's
 * only with whole stacks, which glib's frames hide from its fast unwinder.
 * So the QEMUs that take snapshots start with whole stacks: returns the
 * options to restore for the next ones.
 */
static char *snap_asan_whole_stacks(void)
{
    char *asan = g_strdup(g_getenv("ASAN_OPTIONS"));

    if (asan) {
        g_autofree char *whole = g_strconcat(asan, ":fast_unwind_on_malloc=0",
                                             NULL);

        g_setenv("ASAN_OPTIONS", whole, true);
    }
    return asan;
}

static void snap_asan_restore(const char *asan)
{
    if (asan) {
        g_setenv("ASAN_OPTIONS", asan, true);
    }
}

/* An empty qcow2 image at @img, made by QEMU itself (no qemu-img here). */
static void snap_new_image(const char *img)
{
    QTestState *qts = pv_qemu_start("");

    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-create', "
                             "'arguments': { 'job-id': 'c0', 'options': { "
                             "'driver': 'file', 'filename': %s, "
                             "'size': 0 } } }", img);
    g_assert_true(job_done(qts, "c0"));
    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-add', "
                             "'arguments': { 'driver': 'file', "
                             "'filename': %s, 'node-name': 'f0' } }", img);
    qtest_qmp_assert_success(qts, "{ 'execute': 'blockdev-create', "
                             "'arguments': { 'job-id': 'c1', 'options': { "
                             "'driver': 'qcow2', 'file': 'f0', "
                             "'size': 67108864 } } }");
    g_assert_true(job_done(qts, "c1"));
    qtest_quit(qts);
}

/*
 * A qcow2 image at @img with two internal snapshots, t0 and t1, of the
 * device of *@d (objects of every kind; three CQs), and one of them
 * corrupted inside the records (the first CQ's ring: 0x7fffffff runs for
 * its pages), so that its load fails with records after that one not
 * loaded.  The test's guest goes on with *@d in a new QEMU.
 */
static void snap_partial_image(const char *img, Dp **d, MigObjs *o)
{
    g_autofree char *blk = NULL;
    g_autofree uint8_t *buf = NULL;
    g_autofree char *asan = NULL;
    PvCq *cq;
    Pv *pv;
    size_t len;
    int hits = 0;

    snap_new_image(img);
    blk = snap_blockdev(img);
    asan = snap_asan_whole_stacks();
    pv = pv_start_args(blk);
    snap_asan_restore(asan);
    pv_load(pv);
    *d = dp_new_on(pv);
    mig_objs_build(*d, o);
    cq = (*d)->scq;
    g_assert_true(snap_job((*d)->pv->qts, "snapshot-save", "t0"));
    g_assert_true(snap_job((*d)->pv->qts, "snapshot-save", "t1"));

    /* In each snapshot's device state: npages, runs, the first run word */
    g_assert_true(g_file_get_contents(img, (char **)&buf, &len, NULL));
    for (size_t i = 8; i + 8 <= len; i++) {
        uint64_t w = ldq_be_p(buf + i);

        if ((w & ~4095ull) == cq->pages[0] && (w & 4095) < cq->npages &&
            ldl_be_p(buf + i - 8) == cq->npages &&
            ldl_be_p(buf + i - 4) >= 1 &&
            ldl_be_p(buf + i - 4) <= cq->npages) {
            if (!hits++) {
                stl_be_p(buf + i - 4, 0x7fffffff);
            }
        }
    }
    g_test_message("the first CQ's page list found %d times, the first "
                   "one corrupted", hits);
    g_assert_cmpint(hits, ==, 2);
    g_assert_true(g_file_set_contents(img, (char *)buf, len, NULL));
}

/* The objects of a loaded snapshot work: a SEND into b's receive 0xb1. */
static void snap_expect_works(Dp *d, const MigObjs *o)
{
    fill(d, d->mem + 0x8000, 128, 0x30);
    send_buf(d, o->a, 0x30, 0, d->mem + 0x8000, 128);
    expect_rc_success(d, d->scq, 0x30, PVRDMA_WC_SEND, 128, o->a);
    expect_recv(d, d->rcq, 0xb1, PVRDMA_WC_RECV, 128, o->b, o->a, 0, 0);
    check_fill(d, d->mem + 0x1000, 128, 0x30, 0);
}

/*
 * Load the snapshots of snap_partial_image() in @qts until one fails:
 * the name of a good one in *@good; true if one failed.
 */
static bool snap_load_until_failure(QTestState *qts, const char **good)
{
    if (!snap_job(qts, "snapshot-load", "t0")) {
        *good = "t1";
        return true;
    }
    *good = "t0";
    return !snap_job(qts, "snapshot-load", "t1");
}

/*
 * A new QEMU with the image of snap_partial_image() (made at @img), @nic
 * and @extra on its command line, in which a snapshot failed to load
 * half-way; the test's guest *@d goes on in it, a good snapshot's name is
 * in *@good.
 */
static QTestState *snap_after_partial(const char *img, const char *nic,
                                      const char *extra, Dp **d,
                                      MigObjs *o, const char **good)
{
    g_autofree char *blk = snap_blockdev(img);
    g_autofree char *args = g_strconcat(extra, blk, NULL);
    g_autofree char *asan = NULL;
    QTestState *qts;

    snap_partial_image(img, d, o);
    qtest_quit((*d)->pv->qts);
    /*
     * glibc fills what malloc() returns with this byte: memory a load
     * leaves uninitialised is then never zero by luck (ASan fills it
     * anyway).
     */
    g_setenv("MALLOC_PERTURB_", "165", true);
    asan = snap_asan_whole_stacks();
    qts = pv_qemu_start_nic(nic, args);
    snap_asan_restore(asan);
    g_unsetenv("MALLOC_PERTURB_");
    pv_move((*d)->pv, qts);
    g_assert_true(snap_load_until_failure(qts, good));
    return qts;
}

/* The good snapshot loads, the VM runs, and its objects work. */
static void snap_good_load_works(QTestState *qts, Dp *d, MigObjs *o,
                                 const char *good)
{
    g_assert_true(snap_job(qts, "snapshot-load", good));
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    snap_expect_works(d, o);
    pv_srq_free(o->srq);
    pv_cq_free(o->cq3);
    dp_free(d);
}

/*
 * AUDIT-3 M3: a snapshot whose load fails inside the CQ records, then a
 * good one.  The failed load used to leave the records it did not reach
 * as heap garbage, which the next load freed (free(0x2): SIGSEGV).
 */
static void test_audit3_reload_after_partial(void)
{
    g_autofree char *img = g_strdup_printf("%s/m3-reload.qcow2", tmpdir);
    const char *good;
    QTestState *qts;
    MigObjs o;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    qts = snap_after_partial(img, "mac=" MAC, "", &d, &o, &good);
    snap_good_load_works(qts, d, &o, good);
}

/*
 * AUDIT-3 M3: after a load that failed half-way the guest goes on (cont)
 * and the port goes down.  The half-loaded device used to post the event
 * to a ring whose map the load had cleared (NULL dereference); now it
 * takes no work until a load completes, and then works.
 */
static void test_audit3_cont_after_partial(void)
{
    g_autofree char *img = g_strdup_printf("%s/m3-cont.qcow2", tmpdir);
    const char *good;
    QTestState *qts;
    MigObjs o;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    /* A hub port: any netdev has a link to set, and this one is built in. */
    qts = snap_after_partial(img, "netdev=n0,mac=" MAC,
                             " -netdev hubport,id=n0,hubid=0", &d, &o, &good);
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    qtest_qmp_assert_success(qts, "{ 'execute': 'set_link', 'arguments': "
                             "{ 'name': 'n0', 'up': false } }");
    qtest_clock_step(qts, SCALE_MS * 1000);
    qtest_qmp_assert_success(qts, "{ 'execute': 'query-pvrdma' }");
    qtest_qmp_assert_success(qts, "{ 'execute': 'set_link', 'arguments': "
                             "{ 'name': 'n0', 'up': true } }");
    snap_good_load_works(qts, d, &o, good);
}

/*
 * After a load that failed half-way, the device is saved (snapshot-save)
 * and the saved state loads; then the device is unplugged.  The save used
 * to read the page lists the failed load left as runs as if they were
 * expanded (ASan: heap-buffer-overflow in rdma_mig_put_pages; found by
 * the pvrdma-migrate fuzz target), and the records that load left leaked
 * at the save and at the unplug.  Now such a device is saved as a reset
 * device.
 */
static void test_audit3_save_after_partial(void)
{
    g_autofree char *img = g_strdup_printf("%s/m3-save.qcow2", tmpdir);
    const char *good;
    QTestState *qts;
    MigObjs o;
    Dp *d;

    if (skip_ibverbs()) {
        return;
    }
    qts = snap_after_partial(img, "mac=" MAC, "", &d, &o, &good);
    g_assert_true(snap_job(qts, "snapshot-save", "t2"));
    g_assert_true(snap_job(qts, "snapshot-load", "t2"));
    qtest_qmp_assert_success(qts, "{ 'execute': 'query-pvrdma' }");
    g_assert_true(snap_job(qts, "snapshot-load", good));
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    snap_expect_works(d, &o);
    /* The other one fails again; the device goes with what it left. */
    g_assert_false(snap_job(qts, "snapshot-load",
                            strcmp(good, "t0") ? "t0" : "t1"));
    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    qpci_unplug_acpi_device_test(qts, "rdma", SLOT);
    pv_srq_free(o.srq);
    pv_cq_free(o.cq3);
    dp_free(d);
}

/*
 * A snapshot whose pvrdma config space has interrupt pin 0x42.  QEMU's
 * PCI load compares only some read-only registers (cmask), not this one,
 * and the device handed it to pci_set_irq() at its next reset (or INTx),
 * which aborts QEMU (pci_irq_handler: irq_num < PCI_NUM_PINS).  Found by
 * the pvrdma-migrate fuzz target, through a load that failed later in
 * the section and the save after it.  Now the load is refused, and a
 * reset gives the read-only pin back: the machine is reset, saved, and
 * loads a good snapshot.
 */
static void test_interrupt_pin_from_stream(void)
{
    g_autofree char *img = g_strdup_printf("%s/pin.qcow2", tmpdir);
    g_autofree char *blk = snap_blockdev(img);
    g_autofree uint8_t *buf = NULL;
    g_autofree char *asan = NULL;
    size_t len;
    int hits = 0;
    bool loaded;
    Pv *pv;

    if (skip_ibverbs()) {
        return;
    }
    snap_new_image(img);
    asan = snap_asan_whole_stacks();
    pv = pv_start_args(blk);
    pv_load(pv);
    g_assert_true(snap_job(pv->qts, "snapshot-save", "good"));
    g_assert_true(snap_job(pv->qts, "snapshot-save", "bad"));
    pv_stop(pv);

    /* The device's config space (VMware 15ad:0820, pin 1) in "bad" */
    g_assert_true(g_file_get_contents(img, (char **)&buf, &len, NULL));
    for (size_t i = 0; i + PCI_CFG_SPACE_SIZE <= len; i++) {
        if (lduw_le_p(buf + i) == 0x15ad && lduw_le_p(buf + i + 2) == 0x0820 &&
            buf[i + PCI_INTERRUPT_PIN] == 1 && ++hits == 2) {
            buf[i + PCI_INTERRUPT_PIN] = 0x42;
        }
    }
    g_test_message("the device's config space found %d times", hits);
    g_assert_cmpint(hits, ==, 2);
    g_assert_true(g_file_set_contents(img, (char *)buf, len, NULL));

    pv = pv_start_args(blk);
    snap_asan_restore(asan);
    loaded = snap_job(pv->qts, "snapshot-load", "bad");
    /* (a device whose load failed takes no CTL=RESET: a machine reset) */
    qtest_qmp_assert_success(pv->qts, "{ 'execute': 'system_reset' }");
    qtest_qmp_eventwait(pv->qts, "RESET");
    g_assert_cmphex(qpci_config_readb(pv->dev, PCI_INTERRUPT_PIN), ==, 1);
    g_assert_true(snap_job(pv->qts, "snapshot-save", "after"));
    g_assert_false(loaded);
    g_assert_true(snap_job(pv->qts, "snapshot-load", "good"));
    qtest_qmp_assert_success(pv->qts, "{ 'execute': 'cont' }");
    g_assert_cmphex(qpci_config_readb(pv->dev, PCI_INTERRUPT_PIN), ==, 1);
    pv_stop(pv);
}

/* ibverbs: `migrate` fails with the reason, the VM and its QPs run on. */
static void test_ibverbs_blocker(void)
{
    g_autofree char *uri = g_strdup_printf("file:%s/blocked.mig", tmpdir);
    QDict *resp;
    const char *desc;
    Dp *d;
    PvQp *a, *b;

    if (!pv_ibverbs()) {
        g_test_skip("the soft backend migrates (the other tests)");
        return;
    }
    d = dp_new();
    rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    expect_send_works(d, a, b, 0x10, 64);
    resp = qtest_qmp(d->pv->qts, "{ 'execute': 'migrate', "
                     "'arguments': { 'uri': %s } }", uri);
    g_assert_true(qdict_haskey(resp, "error"));
    desc = qdict_get_str(qdict_get_qdict(resp, "error"), "desc");
    g_test_message("migrate: %s", desc);
    g_assert_nonnull(strstr(desc, "ibverbs backend"));
    g_assert_nonnull(strstr(desc, "cannot migrate"));
    qobject_unref(resp);
    expect_send_works(d, a, b, 0x20, 64);
    dp_free(d);
}

/*
 * make bench-migration (PVRDMA_MIG_BENCH=1; figures, not a test): what the
 * device adds to a migration.  For each state, a fresh source is built and
 * migrated MIG_BENCH_RUNS times; QEMU's trace events with timestamps give
 * the pvrdma section's save time (source) and load time (destination),
 * query-migrate the downtime, and one save to a file the section's size.
 */
#define MIG_BENCH_RUNS  5
#define MIG_ID          "0000:00:10.1/pvrdma"

typedef void MigBenchBuild(Dp *d);

static void bench_empty(Dp *d)
{
}

/*
 * 1 GiB MR over distinct guest pages (the bench's guest has 1280 MiB):
 * in 2 MiB runs in shuffled order, as huge pages pin, or every page apart
 * from the next (the worst case for the stream).
 */
#define BENCH_MR_BASE   0x8000000ull
#define BENCH_MR_PAGES  262144

static void bench_mr_1g(Dp *d, bool runs)
{
    g_autofree uint64_t *table = g_new(uint64_t, 512);
    uint64_t dir = galloc(d->pv, PAGE);
    GRand *r = g_rand_new_with_seed(0x2aa);
    uint32_t order[512];

    for (int i = 0; i < 512; i++) {
        order[i] = i;
    }
    for (int i = 511; i > 0; i--) {
        int j = g_rand_int_range(r, 0, i + 1);
        uint32_t t = order[i];

        order[i] = order[j];
        order[j] = t;
    }
    for (int t = 0; t < 512; t++) {
        uint64_t tpage = galloc(d->pv, PAGE);

        for (int i = 0; i < 512; i++) {
            uint64_t n = (uint64_t)t * 512 + i;

            table[i] = cpu_to_le64(BENCH_MR_BASE + (runs ?
                                   ((uint64_t)order[t] * 512 + i) * PAGE :
                                   (BENCH_MR_PAGES - 1 - n) * PAGE));
        }
        qtest_memwrite(d->pv->qts, tpage, table, PAGE);
        qtest_writeq(d->pv->qts, dir + t * 8, tpage);
    }
    g_assert_cmpuint(create_mr(d->pv, d->pd, 0, ACC_ALL, 0x40000000,
                               1ull << 30, BENCH_MR_PAGES, dir, NULL), ==,
                     ERR_OK);
    g_rand_free(r);
}

static void bench_64qp(Dp *d)
{
    for (int i = 0; i < 32; i++) {
        PvQp *a, *b;

        rc_pair(d, &a, &b, ACC_ALL, 1, 7);
    }
}

/* 64 RC QPs (32 connected pairs) and 1 GiB of registered memory */
static void bench_64qp_1g_runs(Dp *d)
{
    bench_64qp(d);
    bench_mr_1g(d, true);
}

static void bench_64qp_1g_scattered(Dp *d)
{
    bench_64qp(d);
    bench_mr_1g(d, false);
}

/* Every table at the device's default limits, MR pages at theirs */
static void bench_full(Dp *d)
{
    QpSpec q = dp_spec(d, PVRDMA_QPT_RC, NULL, NULL);
    uint64_t page = galloc(d->pv, PAGE);
    uint32_t h;
    int i;

    for (i = 0; i < 16; i++) {
        alias_mr(d, (uint64_t)i << 30, 262144, page);   /* 4M pages */
    }
    while (create_pd(d->pv, 0, &h) == ERR_OK) {
        /* until the table is full */
    }
    while (create_mr(d->pv, d->pd, PVRDMA_MR_FLAG_DMA, ACC_ALL, 0, 0, 0, 0,
                     NULL) == ERR_OK) {
        /* until the table is full */
    }
    for (i = 1; i < 512; i++) {
        if (create_uc(d->pv, d->pv->uar.addr / PAGE + i, &h) != ERR_OK) {
            break;
        }
    }
    for (i = 0; i < 511; i++) {
        pv_srq_free(pv_srq_new(d->pv, d->pd, 16, 2, 0));
    }
    for (i = 0; i < 1020; i++) {
        PvQp *a = dp_qp(d, &q, 0, PVRDMA_ACCESS_LOCAL_WRITE);

        rc_connect(d, a, a->qpn, ACC_ALL, 1, 7);
    }
    while (create_cq(d->pv, 64, &h) == ERR_OK) {
        /* until the table is full */
    }
}

/* Microseconds from the last line matching @a to the next matching @b */
static double trace_span_us(const char *log, const char *a, const char *b)
{
    g_autofree char *text = NULL;
    g_auto(GStrv) lines = NULL;
    double t0 = -1, span = -1;

    if (!g_file_get_contents(log, &text, NULL, NULL)) {
        return -1;
    }
    lines = g_strsplit(text, "\n", -1);
    for (int i = 0; lines[i]; i++) {
        const char *at = strchr(lines[i], '@');
        double t = at ? g_ascii_strtod(at + 1, NULL) : 0;

        if (strstr(lines[i], a)) {
            t0 = t;
        } else if (t0 >= 0 && strstr(lines[i], b)) {
            span = (t - t0) * 1e6;
            t0 = -1;
        }
    }
    return span;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return v[n / 2];
}

static void bench_state(const char *label, MigBenchBuild *build)
{
    g_autofree char *slog = g_strdup_printf("%s/src.trace", tmpdir);
    g_autofree char *dlog = g_strdup_printf("%s/dst.trace", tmpdir);
    g_autofree char *file = g_strdup_printf("%s/bench.mig", tmpdir);
    g_autofree char *furi = g_strdup_printf("file:%s", file);
    g_autofree char *uri = g_strdup_printf("unix:%s/bench.sock", tmpdir);
    g_autofree char *sargs = g_strdup_printf(
        " -m 1280M -msg timestamp=on -D %s "
        "-trace savevm_section_start -trace savevm_section_end", slog);
    /*
     * On the destination only the sections' starts: vmstate_load_state_end
     * fires for every record and nested struct, and writing those lines
     * took most of the load time it measured (and of the downtime).
     */
    g_autofree char *dargs = g_strdup_printf(
        " -m 1280M -msg timestamp=on -D %s "
        "-trace qemu_loadvm_state_section "
        "-trace qemu_loadvm_state_section_startfull "
        "-incoming defer", dlog);
    double save[MIG_BENCH_RUNS], load[MIG_BENCH_RUNS], down[MIG_BENCH_RUNS];
    double total[MIG_BENCH_RUNS], build_s = 0;
    size_t section = 0;

    for (int r = 0; r < MIG_BENCH_RUNS; r++) {
        Dp *d = g_new0(Dp, 1);
        QTestState *dst;
        QDict *resp, *ret;
        gint64 t0;

        d->objs = g_ptr_array_new_with_free_func((GDestroyNotify)pv_qp_free);
        unlink(slog);
        d->pv = pv_start_args(sargs);
        pv_load(d->pv);
        dp_init(d);
        t0 = g_get_monotonic_time();
        build(d);
        build_s = (g_get_monotonic_time() - t0) / 1e6;
        if (r == 0) {
            g_autofree uint8_t *buf = NULL;
            size_t len;

            qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate', "
                                     "'arguments': { 'uri': %s } }", furi);
            g_assert_true(mig_finish(d->pv->qts, NULL));
            g_assert_true(g_file_get_contents(file, (char **)&buf, &len,
                                              NULL));
            section = mig_find_section(buf, len).end;
            section -= mig_find_section(buf, len).data;
            unlink(file);
            qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'cont' }");
        }
        unlink(dlog);
        dst = pv_qemu_start(dargs);
        qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                                 "'arguments': { 'uri': %s } }", uri);
        qtest_qmp_assert_success(d->pv->qts, "{ 'execute': 'migrate', "
                                 "'arguments': { 'uri': %s } }", uri);
        g_assert_true(mig_finish(d->pv->qts, NULL));
        g_assert_true(mig_finish(dst, NULL));
        resp = qtest_qmp(d->pv->qts, "{ 'execute': 'query-migrate' }");
        ret = qdict_get_qdict(resp, "return");
        down[r] = qdict_get_try_int(ret, "downtime", -1);
        total[r] = qdict_get_try_int(ret, "total-time", -1);
        qobject_unref(resp);
        save[r] = trace_span_us(slog, "savevm_section_start " MIG_ID,
                                "savevm_section_end " MIG_ID);
        /* from the section's start to the next section's (or EOF) */
        load[r] = trace_span_us(dlog, "(" MIG_ID ")",
                                "qemu_loadvm_state_section ");
        qtest_quit(dst);
        dp_free(d);
    }
    printf("bench-migration: %-26s section %9zu bytes  save %9.0f us  "
           "load %9.0f us  downtime %5.0f ms  total %6.0f ms  "
           "(medians of %d; built in %.1f s)\n", label, section,
           median(save, MIG_BENCH_RUNS), median(load, MIG_BENCH_RUNS),
           median(down, MIG_BENCH_RUNS), median(total, MIG_BENCH_RUNS),
           MIG_BENCH_RUNS, build_s);
    fflush(stdout);
}

static void bench(void)
{
    bench_state("idle (DSR, PD, 2 CQs)", bench_empty);
    bench_state("64 QPs, 1 GiB in 2 MiB runs", bench_64qp_1g_runs);
    bench_state("64 QPs, 1 GiB scattered", bench_64qp_1g_scattered);
    bench_state("full (default limits)", bench_full);
}

static void mig_rmdir(const char *path)
{
    GDir *dir = g_dir_open(path, 0, NULL);
    const char *name;

    while (dir && (name = g_dir_read_name(dir))) {
        g_autofree char *p = g_build_filename(path, name, NULL);

        unlink(p);
    }
    if (dir) {
        g_dir_close(dir);
    }
    rmdir(path);
}

int main(int argc, char **argv)
{
    int ret;

    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();
    tmpdir = g_dir_make_tmp("pvrdma-mig-XXXXXX", NULL);
    g_assert_nonnull(tmpdir);
    qtest_add_func("/pvrdma/migration/objects", test_objects);
    qtest_add_func("/pvrdma/migration/rnr-stalled", test_rnr_stalled);
    qtest_add_func("/pvrdma/migration/write-imm-mid-message",
                   test_write_imm_mid_message);
    qtest_add_func("/pvrdma/migration/cq-armed", test_cq_armed);
    qtest_add_func("/pvrdma/migration/flush", test_flush);
    qtest_add_func("/pvrdma/migration/after-qp-reset", test_after_qp_reset);
    qtest_add_func("/pvrdma/migration/no-dsr", test_no_dsr);
    qtest_add_func("/pvrdma/migration/dirty-pages", test_dirty_pages);
    qtest_add_func("/pvrdma/migration/file", test_file);
    qtest_add_func("/pvrdma/migration/mutated-stream", test_mutated_stream);
    qtest_add_func("/pvrdma/migration/live-mr-pages", test_live_mr_pages);
    qtest_add_func("/pvrdma/migration/live-mr-pages-inline",
                   test_live_mr_pages_inline);
    qtest_add_func("/pvrdma/migration/live-mr-pages-rom-inside",
                   test_live_mr_pages_rom_inside);
    qtest_add_func("/pvrdma/migration/live-mr-pages-corrupt",
                   test_live_mr_pages_corrupt);
    qtest_add_func("/pvrdma/migration/live-records-changed",
                   test_live_records_changed);
    qtest_add_func("/pvrdma/migration/live-records-named",
                   test_live_records_named);
    qtest_add_func("/pvrdma/migration/regression/audit3-m2-started-wr-opcode",
                   test_audit3_started_wr_opcode);
    qtest_add_func("/pvrdma/migration/regression/audit3-m2-started-wr-ud-gid",
                   test_audit3_started_wr_ud_gid);
    qtest_add_func("/pvrdma/migration/regression/"
                   "audit3-m3-reload-after-partial",
                   test_audit3_reload_after_partial);
    qtest_add_func("/pvrdma/migration/regression/audit3-m3-cont-after-partial",
                   test_audit3_cont_after_partial);
    qtest_add_func("/pvrdma/migration/regression/"
                   "audit3-m3-save-after-partial",
                   test_audit3_save_after_partial);
    qtest_add_func("/pvrdma/migration/regression/audit3-l1-page-runs",
                   test_audit3_page_runs);
    qtest_add_func("/pvrdma/migration/regression/vmdesc-compressed",
                   test_vmdesc_compressed);
    qtest_add_func("/pvrdma/migration/regression/interrupt-pin-from-stream",
                   test_interrupt_pin_from_stream);
    qtest_add_func("/pvrdma/migration/ibverbs-blocker",
                   test_ibverbs_blocker);
    if (g_getenv("PVRDMA_MIG_BENCH")) {
        qtest_add_func("/pvrdma/migration/bench", bench);
    }
    ret = g_test_run();
    mig_rmdir(tmpdir);
    g_free(tmpdir);
    return ret;
}
