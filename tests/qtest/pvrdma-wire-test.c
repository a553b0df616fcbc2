/*
 * qtests of the soft backend's port: RoCE v2 between two devices, each in
 * its own QEMU, their vmxnet3s joined by -netdev dgram over 127.0.0.1.
 * The test drives both devices as their guest drivers would (pvrdma-dp.c)
 * and checks completions and memory on both sides; it also plays a
 * hostile host on the link, sending datagrams of its own to a device.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/socket.h>
#include <sys/syscall.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include "qemu/atomic.h"
#include "qemu/bswap.h"
#include "qobject/qdict.h"
#include "qobject/qlist.h"
#include "pvrdma-dp.h"

/* Device A: 10.0.3.1 (GID 0), 10.0.3.11; device B: 10.0.3.2, 10.0.3.12 */
static const uint8_t gid_a[16] = { [10] = 0xff, 0xff, 10, 0, 3, 1 };
static const uint8_t gid_a1[16] = { [10] = 0xff, 0xff, 10, 0, 3, 11 };
static const uint8_t gid_b[16] = { [10] = 0xff, 0xff, 10, 0, 3, 2 };
static const uint8_t gid_b1[16] = { [10] = 0xff, 0xff, 10, 0, 3, 12 };
static const uint8_t mac_a[6] = { 0x52, 0x54, 0x00, 0x00, 0x03, 0x01 };
static const uint8_t mac_b[6] = { 0x52, 0x54, 0x00, 0x00, 0x03, 0x02 };

/*
 * A lossy link: A and B send to a relay in this process, which passes
 * frames on, but drops, duplicates and reorders some (seeded).
 */
typedef struct Relay {
    int fd[2];                      /* what A, B send to */
    int port[2];                    /* where A, B listen */
    GRand *rand;
    double drop, dup, reorder;      /* probabilities per frame */
    int cut;                        /* drop every frame, both ways */
    GThread *thread;
    int stop;
    /* counted by the relay thread, read when it has stopped */
    uint64_t frames, dropped, duplicated, reordered;
    /* frames A, B sent: read any time (32 bits: atomic on any host) */
    uint32_t from[2];
    int drop_every_b;               /* drop every Nth frame from B (0: no) */
    /* drop the next drop_b_left frames from B with BTH opcode drop_b_op */
    int drop_b_op, drop_b_left;
    int hold_b;                     /* B's frames wait in the relay's socket */
    int hold_b_after;               /* pass this many from B, then hold_b */
    /* drop drop_a_left frames from A, from its drop_a_at-th one on */
    uint32_t drop_a_at, drop_a_left;
    /* A's RDMA READ requests (IPv4): PSN and DMA length, in order */
    uint32_t read_psn[64], read_len[64];
    int nreads;                     /* written by the relay thread */
} Relay;

typedef struct Link {
    Dp *a, *b;
    int port_a, port_b;             /* their netdevs' UDP ports */
    Relay *relay;
} Link;

/* A UDP socket bound to a port of 127.0.0.1 the kernel chose, in @port. */
static int udp_socket(int *port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    g_assert_cmpint(getsockname(fd, (struct sockaddr *)&sa, &len), ==, 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

/* A UDP port on 127.0.0.1 nobody uses now. */
static int free_udp_port(void)
{
    int port;

    close(udp_socket(&port));
    return port;
}

static char *link_nic(const uint8_t *mac)
{
    return g_strdup_printf("netdev=n0,mac=%02x:%02x:%02x:%02x:%02x:%02x",
                           mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
}

static char *link_netdev(int local, int remote)
{
    return g_strdup_printf(
        " -netdev dgram,id=n0,local.type=inet,local.host=127.0.0.1,"
        "local.port=%d,remote.type=inet,remote.host=127.0.0.1,"
        "remote.port=%d", local, remote);
}

static Dp *link_side(const uint8_t *mac, int local, int remote,
                     const uint8_t *g0, const uint8_t *g1)
{
    g_autofree char *nic = link_nic(mac);
    g_autofree char *extra = link_netdev(local, remote);
    Pv *pv = pv_start_nic(nic, extra);

    pv_load(pv);
    return dp_new_gids(pv, g0, g1);
}

static Link link_up(void)
{
    Link l = { 0 };

    l.port_a = free_udp_port();
    do {
        l.port_b = free_udp_port();
    } while (l.port_b == l.port_a);
    l.a = link_side(mac_a, l.port_a, l.port_b, gid_a, gid_a1);
    l.b = link_side(mac_b, l.port_b, l.port_a, gid_b, gid_b1);
    return l;
}

static void relay_send(Relay *r, int to, const void *buf, ssize_t len)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons(qatomic_read(&r->port[to])),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };

    sendto(r->fd[to], buf, len, 0, (struct sockaddr *)&sa, sizeof(sa));
}

/*
 * Ethernet, IPv4 without options, UDP, BTH (opcode, PSN in bytes 9-11),
 * RETH (DMA length in bytes 12-15): note A's RC RDMA READ requests.
 */
static void relay_note_read(Relay *r, int from, const uint8_t *f,
                            ssize_t len)
{
    const uint8_t *bth = f + 14 + 20 + 8;
    int n = qatomic_read(&r->nreads);

    if (from != 0 || len < 14 + 20 + 8 + 12 + 16 || f[12] != 0x08 ||
        f[13] != 0x00 || bth[0] != 0x0c || n >= ARRAY_SIZE(r->read_psn)) {
        return;
    }
    r->read_psn[n] = bth[9] << 16 | bth[10] << 8 | bth[11];
    r->read_len[n] = ldl_be_p(bth + 12 + 12);
    qatomic_store_release(&r->nreads, n + 1);
}

static gpointer relay_thread(gpointer opaque)
{
    Relay *r = opaque;
    uint8_t buf[10000], held[10000];
    ssize_t held_len = 0;
    int held_to = 0;

    while (!qatomic_read(&r->stop)) {
        struct pollfd p[2] = { { .fd = r->fd[0], .events = POLLIN },
                               { .fd = r->fd[1], .events = POLLIN } };

        if (poll(p, qatomic_read(&r->hold_b) ? 1 : 2, 10) <= 0) {
            continue;
        }
        for (int from = 0; from < 2; from++) {
            int to = !from;
            ssize_t len;

            if (!(p[from].revents & POLLIN)) {
                continue;
            }
            len = recv(r->fd[from], buf, sizeof(buf), 0);
            if (len <= 0) {
                continue;
            }
            r->frames++;
            qatomic_inc(&r->from[from]);
            relay_note_read(r, from, buf, len);
            if (from == 1 && r->drop_every_b &&
                r->from[1] % r->drop_every_b == 0) {
                r->dropped++;
                continue;
            }
            if (from == 0 && qatomic_read(&r->drop_a_left) &&
                r->from[0] >= qatomic_read(&r->drop_a_at)) {
                qatomic_dec(&r->drop_a_left);
                r->dropped++;
                continue;
            }
            if (from == 1 && qatomic_read(&r->drop_b_left) &&
                len > 14 + 20 + 8 && buf[14 + 20 + 8] == r->drop_b_op) {
                qatomic_dec(&r->drop_b_left);
                r->dropped++;
                continue;
            }
            if (qatomic_read(&r->cut) ||
                g_rand_double(r->rand) < r->drop) {
                r->dropped++;
                continue;
            }
            if (!held_len && g_rand_double(r->rand) < r->reorder) {
                /* Held back: it goes after the next frame that way. */
                memcpy(held, buf, len);
                held_len = len;
                held_to = to;
                r->reordered++;
                continue;
            }
            relay_send(r, to, buf, len);
            if (from == 1 && qatomic_read(&r->hold_b_after) &&
                qatomic_dec_fetch(&r->hold_b_after) == 0) {
                qatomic_set(&r->hold_b, 1);
            }
            if (g_rand_double(r->rand) < r->dup) {
                relay_send(r, to, buf, len);
                r->duplicated++;
            }
            if (held_len && held_to == to) {
                relay_send(r, to, held, held_len);
                held_len = 0;
            }
        }
    }
    return NULL;
}

/* A and B joined through a relay that loses frames (seed @seed). */
static Link link_up_lossy(uint32_t seed, double drop, double dup,
                          double reorder)
{
    Link l = { 0 };
    Relay *r = g_new0(Relay, 1);
    int ra, rb;

    r->fd[0] = udp_socket(&ra);         /* A sends here ... */
    r->fd[1] = udp_socket(&rb);         /* ... B here */
    r->port[0] = l.port_a = free_udp_port();
    do {
        r->port[1] = l.port_b = free_udp_port();
    } while (l.port_b == l.port_a);
    r->rand = g_rand_new_with_seed(seed);
    r->drop = drop;
    r->dup = dup;
    r->reorder = reorder;
    l.relay = r;
    r->thread = g_thread_new("relay", relay_thread, r);
    l.a = link_side(mac_a, l.port_a, ra, gid_a, gid_a1);
    l.b = link_side(mac_b, l.port_b, rb, gid_b, gid_b1);
    return l;
}

static void link_down(Link *l)
{
    Relay *r = l->relay;

    dp_free(l->a);
    dp_free(l->b);
    if (r) {
        qatomic_set(&r->stop, 1);
        if (r->thread) {
            g_thread_join(r->thread);
        }
        close(r->fd[0]);
        close(r->fd[1]);
        g_rand_free(r->rand);
        g_free(r);
    }
}

/*
 * Connect RC QP @qp of @d to QP @dest_qpn at @dgid, @dmac, path MTU 1024,
 * local ACK timeout @timeout (4.096 us << @timeout), 7 retries.
 */
static void wire_connect(Dp *d, PvQp *qp, uint32_t dest_qpn,
                         const uint8_t *dgid, const uint8_t *dmac,
                         uint8_t min_rnr_timer, uint8_t timeout)
{
    RcPath path = { .dgid = dgid, .dmac = dmac, .timeout = timeout,
                    .retry_cnt = 7 };

    rc_connect_path(d, qp, dest_qpn, ACC_ALL, min_rnr_timer, 7, &path);
}

/* An RC QP on each side, connected to each other across the link. */
static void wire_pair_timeout(Link *l, PvQp **qa, PvQp **qb,
                              uint8_t b_min_rnr, uint8_t timeout)
{
    QpSpec sa = dp_spec(l->a, PVRDMA_QPT_RC, NULL, NULL);
    QpSpec sb = dp_spec(l->b, PVRDMA_QPT_RC, NULL, NULL);

    *qa = dp_qp(l->a, &sa, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    *qb = dp_qp(l->b, &sb, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    wire_connect(l->a, *qa, (*qb)->qpn, gid_b, mac_b, 12, timeout);
    wire_connect(l->b, *qb, (*qa)->qpn, gid_a, mac_a, b_min_rnr, timeout);
}

static void wire_pair(Link *l, PvQp **qa, PvQp **qb, uint8_t b_min_rnr)
{
    wire_pair_timeout(l, qa, qb, b_min_rnr, 14);       /* 67 ms */
}

/*
 * Wait for a CQE in @cq of @d, moving both sides' virtual clocks (their
 * retransmission and RNR timers) 1 ms at a time.
 */
static void wait_cq(Link *l, Dp *d, PvCq *cq)
{
    gint64 deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;

    while (!pv_ring_count(d->pv, &cq->ring) &&
           g_get_monotonic_time() < deadline) {
        qtest_clock_step(l->a->pv->qts, 1000 * 1000);
        qtest_clock_step(l->b->pv->qts, 1000 * 1000);
        g_usleep(200);
    }
}

/*
 * Move @d's virtual clock (its timers: RNR, retransmission) 1 ms at a
 * time until @ring of @owner holds an element or 10 s have passed.
 */
static void wait_stepping(Dp *d, Dp *owner, const PvRing *ring)
{
    gint64 deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    while (g_get_monotonic_time() < deadline) {
        qtest_clock_step(d->pv->qts, 1000 * 1000);
        if (pv_ring_count(owner->pv, ring)) {
            return;
        }
        g_usleep(1000);
    }
}

/*
 * UCX's rc_verbs connects its QPs with flow label ~0 in the GRH (any
 * label will do, on RoCE).  The device kept all 32 bits, and the frame
 * builder, which has 20, dropped every packet of those QPs: the sender's
 * WR ended in "retry exceeded", as ucx_perftest's did.  The device keeps
 * the low 20 bits, as a RoCE NIC puts on the wire; QUERY_QP says so, and
 * data flows both ways.
 */
static void test_wire_flow_label_wider_than_20_bits(void)
{
    Link l = link_up();
    RcPath pa = { .dgid = gid_b, .dmac = mac_b, .timeout = 14,
                  .retry_cnt = 7, .flow_label = 0xffffffff };
    RcPath pb = { .dgid = gid_a, .dmac = mac_a, .timeout = 14,
                  .retry_cnt = 7, .flow_label = 0xfff12345 };
    QpSpec sa = dp_spec(l.a, PVRDMA_QPT_RC, NULL, NULL);
    QpSpec sb = dp_spec(l.b, PVRDMA_QPT_RC, NULL, NULL);
    PvQp *qa = dp_qp(l.a, &sa, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    PvQp *qb = dp_qp(l.b, &sb, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    uint64_t dst = l.b->mem + 4 * PAGE;
    PvrdmaSge s = sge(l.a->mem, 2000, l.a->lkey);
    PvrdmaQpAttr got;

    rc_connect_path(l.a, qa, qb->qpn, ACC_ALL, 12, 7, &pa);
    rc_connect_path(l.b, qb, qa->qpn, ACC_ALL, 12, 7, &pb);
    got = query_qp(l.a->pv, qa->handle);
    g_assert_cmphex(got.ah_attr.grh.flow_label, ==, 0xfffff);
    got = query_qp(l.b->pv, qb->handle);
    g_assert_cmphex(got.ah_attr.grh.flow_label, ==, 0x12345);

    fill(l.a, l.a->mem, 2000, 0x37);
    post_recv1(l.b, qb, 0xb1, dst, 4096);
    post_send(l.a, qa, wqe(0xa1, PVRDMA_WR_SEND, PVRDMA_SEND_SIGNALED, 1),
              &s, 1);
    wait_cq(&l, l.a, l.a->scq);
    expect_rc_success(l.a, l.a->scq, 0xa1, PVRDMA_WC_SEND, 2000, qa);
    expect_recv(l.b, l.b->rcq, 0xb1, PVRDMA_WC_RECV, 2000, qb, qa, 0, 0);
    check_fill(l.b, dst, 2000, 0x37, 0);

    fill(l.b, l.b->mem, 100, 0x42);
    post_recv1(l.a, qa, 0xa2, l.a->mem + 8 * PAGE, 256);
    s = sge(l.b->mem, 100, l.b->lkey);
    post_send(l.b, qb, wqe(0xb2, PVRDMA_WR_SEND, PVRDMA_SEND_SIGNALED, 1),
              &s, 1);
    wait_cq(&l, l.b, l.b->scq);
    expect_rc_success(l.b, l.b->scq, 0xb2, PVRDMA_WC_SEND, 100, qb);
    expect_recv(l.a, l.a->rcq, 0xa2, PVRDMA_WC_RECV, 100, qa, qb, 0, 0);
    check_fill(l.a, l.a->mem + 8 * PAGE, 100, 0x42, 0);
    link_down(&l);
}

/* SEND both ways, a message of several packets, content checked. */
static void test_wire_rc_send(void)
{
    Link l = link_up();
    PvQp *qa, *qb;
    uint64_t src = l.a->mem, dst = l.b->mem + 4 * PAGE;
    PvrdmaSge s = sge(src, 3000, l.a->lkey);
    PvrdmaSqWqeHdr h;

    wire_pair(&l, &qa, &qb, 12);
    fill(l.a, src, 3000, 0x21);
    qtest_memset(l.b->pv->qts, dst, 0xee, 4096);
    post_recv1(l.b, qb, 0xb1, dst, 4096);
    /* 3000 bytes at path MTU 1024: FIRST, MIDDLE, LAST on the wire. */
    h = wqe(0xa1, PVRDMA_WR_SEND_WITH_IMM, PVRDMA_SEND_SIGNALED, 1);
    h.ex.imm_data = 0x44332211;
    post_send(l.a, qa, h, &s, 1);
    expect_recv(l.b, l.b->rcq, 0xb1, PVRDMA_WC_RECV, 3000, qb, qa,
                PVRDMA_WC_WITH_IMM, 0x44332211);
    expect_rc_success(l.a, l.a->scq, 0xa1, PVRDMA_WC_SEND, 3000, qa);
    check_fill(l.b, dst, 3000, 0x21, 0);
    check_byte(l.b, dst + 3000, 1096, 0xee);

    /* And back: B's SEND into A. */
    fill(l.b, l.b->mem, 100, 0x42);
    post_recv1(l.a, qa, 0xa2, l.a->mem + 8 * PAGE, 256);
    s = sge(l.b->mem, 100, l.b->lkey);
    post_send(l.b, qb, wqe(0xb2, PVRDMA_WR_SEND, PVRDMA_SEND_SIGNALED, 1),
              &s, 1);
    expect_recv(l.a, l.a->rcq, 0xa2, PVRDMA_WC_RECV, 100, qa, qb, 0, 0);
    expect_rc_success(l.b, l.b->scq, 0xb2, PVRDMA_WC_SEND, 100, qb);
    check_fill(l.a, l.a->mem + 8 * PAGE, 100, 0x42, 0);
    link_down(&l);
}

/* RDMA WRITE and READ of several packets, both atomics, across the link. */
static void test_wire_rc_rdma(void)
{
    Link l = link_up();
    PvQp *qa, *qb;
    uint64_t la = l.a->mem, rb = l.b->mem + 8 * PAGE;
    uint64_t atom = l.b->mem + 20 * PAGE;
    PvrdmaSge s = sge(la, 10000, l.a->lkey);
    uint64_t v;

    wire_pair(&l, &qa, &qb, 12);
    fill(l.a, la, 10000, 0x33);
    post_send(l.a, qa, wqe_rdma(0xa1, PVRDMA_WR_RDMA_WRITE,
                                PVRDMA_SEND_SIGNALED, 1, rb, l.b->lkey),
              &s, 1);
    expect_rc_success(l.a, l.a->scq, 0xa1, PVRDMA_WC_RDMA_WRITE, 10000, qa);
    check_fill(l.b, rb, 10000, 0x33, 0);

    /* READ it back into another buffer of A. */
    fill(l.b, rb, 10000, 0x55);
    s = sge(la + 4 * PAGE, 10000, l.a->lkey);
    post_send(l.a, qa, wqe_rdma(0xa2, PVRDMA_WR_RDMA_READ,
                                PVRDMA_SEND_SIGNALED, 1, rb, l.b->lkey),
              &s, 1);
    expect_rc_success(l.a, l.a->scq, 0xa2, PVRDMA_WC_RDMA_READ, 10000, qa);
    check_fill(l.a, la + 4 * PAGE, 10000, 0x55, 0);

    /* FETCH_AND_ADD, then COMPARE_AND_SWAP on B's word. */
    qtest_writeq(l.b->pv->qts, atom, 40);
    s = sge(la + 12 * PAGE, 8, l.a->lkey);
    post_send(l.a, qa, wqe_atomic(0xa3, PVRDMA_WR_ATOMIC_FETCH_AND_ADD,
                                  atom, l.b->lkey, 2, 0), &s, 1);
    expect_rc_success(l.a, l.a->scq, 0xa3, PVRDMA_WC_FETCH_ADD, 8, qa);
    g_assert_cmphex(qtest_readq(l.a->pv->qts, la + 12 * PAGE), ==, 40);
    post_send(l.a, qa, wqe_atomic(0xa4, PVRDMA_WR_ATOMIC_CMP_AND_SWP,
                                  atom, l.b->lkey, 42, 7), &s, 1);
    expect_rc_success(l.a, l.a->scq, 0xa4, PVRDMA_WC_COMP_SWAP, 8, qa);
    v = qtest_readq(l.b->pv->qts, atom);
    g_assert_cmphex(v, ==, 7);
    g_assert_cmphex(qtest_readq(l.a->pv->qts, la + 12 * PAGE), ==, 42);
    link_down(&l);
}

/*
 * RNR across the link: B has no receive WQE, so A waits B's RNR timer
 * and sends again; the SEND completes once B posts one.
 */
static void test_wire_rc_rnr(void)
{
    Link l = link_up();
    PvQp *qa, *qb;
    PvrdmaSge s;

    wire_pair(&l, &qa, &qb, 1);             /* B's RNR timer: 0.01 ms */
    /* Three SENDs in flight: the first draws the RNR NAK, all go again. */
    for (int i = 0; i < 3; i++) {
        fill(l.a, l.a->mem + i * PAGE, 64, 0x66 + i);
        s = sge(l.a->mem + i * PAGE, 64, l.a->lkey);
        post_send(l.a, qa, wqe(0xa1 + i, PVRDMA_WR_SEND,
                               PVRDMA_SEND_SIGNALED, 1), &s, 1);
    }
    g_usleep(100 * 1000);               /* the RNR NAK is back at A */
    expect_no_cqe(l.a, l.a->scq);
    for (int i = 0; i < 3; i++) {
        post_recv1(l.b, qb, 0xb1 + i, l.b->mem + i * PAGE, 64);
    }
    /* A's RNR timer runs on its virtual clock, which qtest moves. */
    for (int i = 0; i < 3; i++) {
        wait_stepping(l.a, l.b, &l.b->rcq->ring);
        expect_recv(l.b, l.b->rcq, 0xb1 + i, PVRDMA_WC_RECV, 64, qb, qa, 0,
                    0);
        check_fill(l.b, l.b->mem + i * PAGE, 64, 0x66 + i, 0);
    }
    for (int i = 0; i < 3; i++) {
        wait_stepping(l.a, l.a, &l.a->scq->ring);
        expect_rc_success(l.a, l.a->scq, 0xa1 + i, PVRDMA_WC_SEND, 64, qa);
    }
    link_down(&l);
}

/* UD across the link: B gets the GRH with A's GID, then the data. */
static void test_wire_ud(void)
{
    Link l = link_up();
    PvQp *ua = ud_qp(l.a, PVRDMA_QPT_UD, UD_QKEY);
    PvQp *ub = ud_qp(l.b, PVRDMA_QPT_UD, UD_QKEY);
    PvrdmaSge s = sge(l.a->mem, 512, l.a->lkey);
    PvrdmaSqWqeHdr h = wqe_ud(0xa1, PVRDMA_SEND_SIGNALED, 1, ub->qpn,
                              UD_QKEY, gid_b, 0);
    uint8_t grh[GRH];

    memcpy(h.wr.ud.av.dmac, mac_b, 6);
    h.wr.ud.av.hop_limit = 64;
    fill(l.a, l.a->mem, 512, 0x77);
    post_recv1(l.b, ub, 0xb1, l.b->mem, GRH + 1024);
    post_send(l.a, ua, h, &s, 1);
    expect_cqe(l.a, l.a->scq, 0xa1, PVRDMA_WC_SUCCESS, PVRDMA_WC_SEND, ua);
    expect_recv(l.b, l.b->rcq, 0xb1, PVRDMA_WC_RECV, GRH + 512, ub, ua,
                PVRDMA_WC_GRH, 0);
    qtest_memread(l.b->pv->qts, l.b->mem, grh, GRH);
    /* IPv4 GIDs: the GRH area holds the IPv4 header in its last 20 bytes */
    g_assert_cmpmem(grh + 20 + 12, 4, gid_a + 12, 4);
    g_assert_cmpmem(grh + 20 + 16, 4, gid_b + 12, 4);
    check_fill(l.b, l.b->mem + GRH, 512, 0x77, 0);
    link_down(&l);
}

/* A counter of query-pvrdma's "roce" of @d (the port must be there). */
static uint64_t roce_stat(Dp *d, const char *name)
{
    QDict *resp = qtest_qmp(d->pv->qts, "{'execute': 'query-pvrdma'}");
    QList *list = qdict_get_qlist(resp, "return");
    QDict *dev = qobject_to(QDict, qlist_peek(list));
    QDict *roce = dev ? qdict_get_qdict(dev, "roce") : NULL;
    uint64_t v = 0;

    g_assert_nonnull(roce);
    if (roce) {
        g_assert_cmpstr(qdict_get_str(roce, "netdev"), ==, "n0");
        v = qdict_get_int(roce, name);
    }
    qobject_unref(resp);
    return v;
}

/*
 * A packet that leaves no frame is counted, not lost in silence: with
 * A's link down its SEND goes out 8 times (once and 7 retries), each
 * time to no frame, and the WR ends in "retry exceeded".  query-pvrdma's
 * tx-dropped says why nothing reached the peer (it had no such counter).
 */
static void test_wire_tx_dropped_counted(void)
{
    Link l = link_up();
    PvQp *qa, *qb;
    PvrdmaSge s = sge(l.a->mem, 64, l.a->lkey);
    QDict *resp;

    wire_pair(&l, &qa, &qb, 12);
    resp = qtest_qmp(l.a->pv->qts, "{'execute': 'set_link', 'arguments':"
                     " { 'name': 'n0', 'up': false } }");
    g_assert(qdict_haskey(resp, "return"));
    qobject_unref(resp);
    g_assert_cmpuint(roce_stat(l.a, "tx-dropped"), ==, 0);
    post_send(l.a, qa, wqe(0xa1, PVRDMA_WR_SEND, PVRDMA_SEND_SIGNALED, 1),
              &s, 1);
    wait_cq(&l, l.a, l.a->scq);
    expect_cqe(l.a, l.a->scq, 0xa1, PVRDMA_WC_RETRY_EXC_ERR, ANY_OPCODE, qa);
    g_assert_cmpuint(roce_stat(l.a, "tx-dropped"), ==, 8);
    g_assert_cmpuint(roce_stat(l.a, "tx-frames"), ==, 0);
    link_down(&l);
}

/*
 * A signaled RDMA WRITE or READ of @len bytes between A's @local and B's
 * @remote on A's @qa, waited for (the clocks stepped) and successful.
 */
static void wire_rdma(Link *l, PvQp *qa, uint64_t wr_id, uint32_t opcode,
                      uint64_t local, uint64_t remote, uint32_t len)
{
    PvrdmaSge s = sge(local, len, l->a->lkey);

    post_send(l->a, qa, wqe_rdma(wr_id, opcode, PVRDMA_SEND_SIGNALED, 1,
                                 remote, l->b->lkey), &s, 1);
    wait_cq(l, l->a, l->a->scq);
    expect_rc_success(l->a, l->a->scq, wr_id,
                      opcode == PVRDMA_WR_RDMA_READ ? PVRDMA_WC_RDMA_READ :
                      PVRDMA_WC_RDMA_WRITE, len, qa);
}

/*
 * RC over a link that drops 5% of the frames, duplicates 3% and reorders
 * 3%: every message arrives once and intact (go back N on timeouts and
 * sequence NAKs, duplicates acknowledged but not executed again, READs
 * answered again, atomics never executed twice).
 */
static void test_wire_lossy(void)
{
    Link l = link_up_lossy(0x5eed1e55, 0.05, 0.03, 0.03);
    Relay *r = l.relay;
    PvQp *qa, *qb;
    uint64_t src = l.a->mem, back = l.a->mem + 4 * PAGE;
    uint64_t dst = l.b->mem, rb = l.b->mem + 4 * PAGE;
    uint64_t counter = l.b->mem + 16 * PAGE, old = l.a->mem + 16 * PAGE;
    const int rounds = 40;
    PvrdmaSge s;

    /*
     * 67 ms, not less: the clocks are virtual, but the frames take real
     * time.  wait_cq() moves both clocks 1 ms per round, so a timeout of
     * 4.2 ms (10) fired after five rounds.  The s390x build under
     * qemu-user on a loaded machine once ended this test in
     * RETRY_EXC_ERR: eight timeouts in a row, which 5% loss alone makes
     * unlikely, and a peer slower than five rounds explains.
     */
    wire_pair(&l, &qa, &qb, 12);
    qtest_writeq(l.b->pv->qts, counter, 0);
    for (int i = 0; i < rounds; i++) {
        uint8_t seed = 0x40 + i;

        /* SEND of three packets */
        fill(l.a, src, 3000, seed);
        post_recv1(l.b, qb, 0xb000 + i, dst, 4096);
        s = sge(src, 3000, l.a->lkey);
        post_send(l.a, qa, wqe(0xa000 + i, PVRDMA_WR_SEND,
                               PVRDMA_SEND_SIGNALED, 1), &s, 1);
        wait_cq(&l, l.b, l.b->rcq);
        expect_recv(l.b, l.b->rcq, 0xb000 + i, PVRDMA_WC_RECV, 3000, qb, qa,
                    0, 0);
        wait_cq(&l, l.a, l.a->scq);
        expect_rc_success(l.a, l.a->scq, 0xa000 + i, PVRDMA_WC_SEND, 3000,
                          qa);
        check_fill(l.b, dst, 3000, seed, 0);

        /* WRITE of ten packets, then READ of ten back */
        fill(l.a, src, 10000, seed + 1);
        wire_rdma(&l, qa, 0xa100 + i, PVRDMA_WR_RDMA_WRITE, src, rb, 10000);
        check_fill(l.b, rb, 10000, seed + 1, 0);
        fill(l.b, rb, 10000, seed + 2);
        wire_rdma(&l, qa, 0xa200 + i, PVRDMA_WR_RDMA_READ, back, rb, 10000);
        check_fill(l.a, back, 10000, seed + 2, 0);

        /* FETCH_AND_ADD: executed once, whatever the link did */
        s = sge(old, 8, l.a->lkey);
        post_send(l.a, qa, wqe_atomic(0xa300 + i,
                                      PVRDMA_WR_ATOMIC_FETCH_AND_ADD,
                                      counter, l.b->lkey, 1, 0), &s, 1);
        wait_cq(&l, l.a, l.a->scq);
        expect_rc_success(l.a, l.a->scq, 0xa300 + i, PVRDMA_WC_FETCH_ADD, 8,
                          qa);
        g_assert_cmpuint(qtest_readq(l.a->pv->qts, old), ==, i);
    }
    g_assert_cmpuint(qtest_readq(l.b->pv->qts, counter), ==, rounds);
    qatomic_set(&r->stop, 1);              /* its counters are final */
    g_thread_join(r->thread);
    r->thread = NULL;
    g_test_message("relay: %" PRIu64 " frames, %" PRIu64 " dropped, %"
                   PRIu64 " duplicated, %" PRIu64 " reordered", r->frames,
                   r->dropped, r->duplicated, r->reordered);
    g_assert_cmpuint(r->dropped, >, 0);
    g_assert_cmpuint(r->duplicated, >, 0);
    g_assert_cmpuint(r->reordered, >, 0);
    /* What the devices did about it, as query-pvrdma tells. */
    g_test_message("A: %" PRIu64 " frames out, %" PRIu64 " in, %" PRIu64
                   " timeouts, %" PRIu64 " retransmits, %" PRIu64
                   " sequence NAKs; B: %" PRIu64 " duplicates",
                   roce_stat(l.a, "tx-frames"), roce_stat(l.a, "rx-frames"),
                   roce_stat(l.a, "timeouts"), roce_stat(l.a, "retransmits"),
                   roce_stat(l.a, "seq-naks"), roce_stat(l.b, "duplicates"));
    g_assert_cmpuint(roce_stat(l.a, "retransmits"), >, 0);
    g_assert_cmpuint(roce_stat(l.a, "timeouts") + roce_stat(l.a, "seq-naks"),
                     >, 0);
    g_assert_cmpuint(roce_stat(l.b, "duplicates"), >, 0);
    link_down(&l);
}

/* The state of @qts's outgoing or incoming migration. */
static char *mig_status(QTestState *qts)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'query-migrate' }");
    QDict *ret = qdict_get_qdict(resp, "return");
    char *st = g_strdup(ret && qdict_haskey(ret, "status") ?
                        qdict_get_str(ret, "status") : "none");

    qobject_unref(resp);
    return st;
}

static void mig_wait(QTestState *qts)
{
    gint64 end = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;

    for (;;) {
        g_autofree char *st = mig_status(qts);

        if (!strcmp(st, "completed")) {
            return;
        }
        g_assert_cmpstr(st, !=, "failed");
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_usleep(2000);
    }
}

/*
 * Migrate @pv, the device with MAC @mac, to a new QEMU on this machine
 * that listens on a new UDP port (returned) and sends where the old one
 * did: to the socket @peer_fd (the relay's, or a scripted peer's).
 */
static int migrate_pv(Pv *pv, const uint8_t *mac, int peer_fd)
{
    g_autofree char *dir = g_dir_make_tmp("pvrdma-wire-XXXXXX", NULL);
    g_autofree char *uri = g_strdup_printf("unix:%s/mig.sock", dir);
    g_autofree char *sock = g_strdup_printf("%s/mig.sock", dir);
    g_autofree char *nic = link_nic(mac);
    g_autofree char *netdev = NULL;
    g_autofree char *extra = NULL;
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    int port = free_udp_port();
    QTestState *dst;

    g_assert_cmpint(getsockname(peer_fd, (struct sockaddr *)&sa, &len), ==,
                    0);
    netdev = link_netdev(port, ntohs(sa.sin_port));
    extra = g_strdup_printf("%s -incoming defer", netdev);
    dst = pv_qemu_start_nic(nic, extra);
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s } }", uri);
    qtest_qmp_assert_success(pv->qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    mig_wait(pv->qts);
    mig_wait(dst);
    qtest_quit(pv->qts);
    pv_move(pv, dst);
    unlink(sock);
    rmdir(dir);
    return port;
}

/*
 * Migrate device A of @l, whose peer B goes on: the relay sends to the
 * new A's port from then on, and a link the test cut (Relay.cut) works
 * again.
 */
static void migrate_a(Link *l)
{
    Relay *r = l->relay;
    int port = migrate_pv(l->a->pv, mac_a, r->fd[0]);

    qatomic_set(&r->port[0], port);
    l->port_a = port;
    qatomic_set(&r->cut, 0);
}

/*
 * Migration with a peer on the link: A migrates while a SEND waits for
 * B's receive (first round: RNR) or for the ACK of packets the link lost
 * (second round: the frames in flight at the switch-over), with a WRITE
 * waiting behind it.  After it A's requester goes on from its migrated
 * state (RNR timer; retransmission timer), B gets every byte once, and
 * A's CQEs come.
 */
static void test_wire_migration(void)
{
    Link l = link_up_lossy(1, 0, 0, 0);
    PvQp *qa, *qb;
    uint64_t src = l.a->mem, dst = l.b->mem, rb = l.b->mem + 8 * PAGE;
    PvrdmaSge s;

    wire_pair_timeout(&l, &qa, &qb, 1, 10);
    for (int round = 0; round < 2; round++) {
        uint8_t seed = 0x90 + round;

        fill(l.a, src, 3000, seed);
        fill(l.a, src + 4 * PAGE, 10000, seed + 1);
        if (round == 1) {
            post_recv1(l.b, qb, 0xb10 + round, dst, 4096);
            qatomic_set(&l.relay->cut, 1);
        }
        s = sge(src, 3000, l.a->lkey);
        post_send(l.a, qa, wqe(0xa10 + round, PVRDMA_WR_SEND,
                               PVRDMA_SEND_SIGNALED, 1), &s, 1);
        s = sge(src + 4 * PAGE, 10000, l.a->lkey);
        post_send(l.a, qa, wqe_rdma(0xa20 + round, PVRDMA_WR_RDMA_WRITE,
                                    PVRDMA_SEND_SIGNALED, 1, rb, l.b->lkey),
                  &s, 1);
        g_usleep(50 * 1000);        /* the RNR NAK is back at A */
        expect_no_cqe(l.a, l.a->scq);
        migrate_a(&l);
        if (round == 0) {
            post_recv1(l.b, qb, 0xb10 + round, dst, 4096);
        }
        wait_cq(&l, l.b, l.b->rcq);
        expect_recv(l.b, l.b->rcq, 0xb10 + round, PVRDMA_WC_RECV, 3000, qb,
                    qa, 0, 0);
        wait_cq(&l, l.a, l.a->scq);
        expect_rc_success(l.a, l.a->scq, 0xa10 + round, PVRDMA_WC_SEND, 3000,
                          qa);
        wait_cq(&l, l.a, l.a->scq);
        expect_rc_success(l.a, l.a->scq, 0xa20 + round, PVRDMA_WC_RDMA_WRITE,
                          10000, qa);
        check_fill(l.b, dst, 3000, seed, 0);
        check_fill(l.b, rb, 10000, seed + 1, 0);
        expect_no_cqe(l.b, l.b->rcq);
    }
    g_test_message("A after two migrations: %" PRIu64 " timeouts, %" PRIu64
                   " retransmits; B: %" PRIu64 " duplicates",
                   roce_stat(l.a, "timeouts"), roce_stat(l.a, "retransmits"),
                   roce_stat(l.b, "duplicates"));
    /* The lost SEND came again from the destination's timer. */
    g_assert_cmpuint(roce_stat(l.a, "timeouts"), >, 0);
    link_down(&l);
}

/*
 * A stopped VM takes no frame from the link.  The source of a migration
 * stays paused after its state was sent: a request it executed and
 * acknowledged then would be lost to the destination.  While A is
 * stopped, B's SEND is not acknowledged; once A runs, B's retransmission
 * delivers it.
 */
static void test_wire_stopped_vm_takes_no_frames(void)
{
    Link l = link_up();
    PvQp *qa, *qb;
    PvrdmaSge s = sge(l.b->mem, 64, l.b->lkey);

    wire_pair_timeout(&l, &qa, &qb, 12, 10);
    post_recv1(l.a, qa, 0xa1, l.a->mem, 64);
    fill(l.b, l.b->mem, 64, 0x71);
    qtest_qmp_assert_success(l.a->pv->qts, "{ 'execute': 'stop' }");
    post_send(l.b, qb, wqe(0xb1, PVRDMA_WR_SEND, PVRDMA_SEND_SIGNALED, 1),
              &s, 1);
    g_usleep(200 * 1000);
    main_loop_run(l.a);
    expect_no_cqe(l.b, l.b->scq);
    g_assert_cmpuint(pv_ring_count(l.a->pv, &l.a->rcq->ring), ==, 0);
    qtest_qmp_assert_success(l.a->pv->qts, "{ 'execute': 'cont' }");
    wait_cq(&l, l.a, l.a->rcq);
    expect_recv(l.a, l.a->rcq, 0xa1, PVRDMA_WC_RECV, 64, qa, qb, 0, 0);
    wait_cq(&l, l.b, l.b->scq);
    expect_rc_success(l.b, l.b->scq, 0xb1, PVRDMA_WC_SEND, 64, qb);
    check_fill(l.a, l.a->mem, 64, 0x71, 0);
    g_assert_cmpuint(roce_stat(l.a, "rx-dropped"), >, 0);
    link_down(&l);
}

/*
 * The TCP socket of process @pid connected from its port @port, as a
 * descriptor of this process (pidfd_getfd()), or -1; -2 when this kernel
 * or the permissions do not let the test look.
 */
static int peer_tcp_socket(pid_t pid, int port)
{
    g_autofree char *dir = g_strdup_printf("/proc/%d/fd", (int)pid);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    int pidfd = syscall(SYS_pidfd_open, pid, 0);
    const char *name;
    int found = -1;

    if (pidfd < 0 || !d) {
        if (pidfd >= 0) {
            close(pidfd);
        }
        return -2;
    }
    while (found == -1 && (name = g_dir_read_name(d))) {
        struct sockaddr_in sa;
        socklen_t len = sizeof(sa);
        int type = 0, fd;
        socklen_t tlen = sizeof(type);

        fd = syscall(SYS_pidfd_getfd, pidfd, atoi(name), 0);
        if (fd < 0) {
            found = errno == EPERM ? -2 : -1;
            continue;
        }
        if (!getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) &&
            type == SOCK_STREAM &&
            !getsockname(fd, (struct sockaddr *)&sa, &len) &&
            sa.sin_family == AF_INET && ntohs(sa.sin_port) == port &&
            !getpeername(fd, (struct sockaddr *)&sa, &len)) {
            found = fd;
            break;
        }
        close(fd);
    }
    close(pidfd);
    return found;
}

/*
 * Regression (QEMU 10.0's net/stream.c; the series fixes it): the
 * listening side of -netdev stream over TCP left Nagle's algorithm on,
 * which the connecting side turns off.  A RoCE link carries small frames
 * both ways (ACKs, latency tests' messages), and on that side they waited
 * for the peer's delayed ACK: two guests joined by a TCP stream measured
 * 22 ms per ib_send_lat round trip, against 38 us over dgram.  The test
 * connects to a listening netdev and reads TCP_NODELAY of the socket
 * QEMU accepted.
 */
static void test_wire_stream_nodelay(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sa);
    int lfd = socket(AF_INET, SOCK_STREAM, 0), port, fd, qfd, on = -1;
    QTestState *qts;

    /* A free port: bound here, closed, then QEMU's. */
    g_assert_cmpint(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    g_assert_cmpint(getsockname(lfd, (struct sockaddr *)&sa, &len), ==, 0);
    port = ntohs(sa.sin_port);
    close(lfd);
    qts = qtest_initf("-M none -netdev stream,id=n0,server=on,"
                      "addr.type=inet,addr.host=127.0.0.1,addr.port=%d",
                      port);
    /*
     * net/stream.c listens from a thread (qio_channel_socket_listen_
     * async()): QEMU may answer QMP before it listens.  Without the
     * retry, a refused connect left the test waiting for an event that
     * never came (seen under ASan, whose QEMU starts slower).
     */
    for (int i = 0;; i++) {
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
            break;
        }
        close(fd);
        g_assert_cmpint(i, <, 1000);
        g_usleep(10 * 1000);
    }
    qtest_qmp_eventwait(qts, "NETDEV_STREAM_CONNECTED");
    qfd = peer_tcp_socket(qtest_pid(qts), port);
    if (qfd == -2) {
        g_test_skip("pidfd_getfd() cannot look into QEMU here");
    } else {
        len = sizeof(on);
        g_assert_cmpint(qfd, >=, 0);
        g_assert_cmpint(getsockopt(qfd, IPPROTO_TCP, TCP_NODELAY, &on, &len),
                        ==, 0);
        g_assert_cmpint(on, ==, 1);
        close(qfd);
    }
    close(fd);
    qtest_quit(qts);
}

/* Wait until the relay has had no frame from A for 100 ms (at most 5 s). */
static uint64_t relay_quiet_from_a(Relay *r)
{
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    uint64_t n = qatomic_read(&r->from[0]), last;

    do {
        last = n;
        g_usleep(100 * 1000);
        n = qatomic_read(&r->from[0]);
    } while (n != last && g_get_monotonic_time() < deadline);
    return n;
}

/*
 * The link window (RDMA_SOFT_WIRE_WINDOW: 64 packets of 1024 bytes): a
 * requester keeps at most that many packets unacknowledged, and asks a
 * long READ in requests of half of it.  Regression test: a READ of 128
 * packets was answered in one burst, whose tail the receiver's socket
 * buffer lost (-netdev dgram between two busy QEMUs: NVMe over RDMA
 * between two guests), and the requester waited for its retransmission
 * timer, a second or more under RDMA-CM, for every such READ.
 */
static void test_wire_window(void)
{
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    PvQp *qa, *qb;
    const uint32_t len = 128 * 1024;
    uint64_t la = l.a->mem, rb = l.b->mem + len;
    PvrdmaSge s = sge(la, len, l.a->lkey);
    uint64_t sent, before;

    wire_pair_timeout(&l, &qa, &qb, 12, 10);           /* 4.2 ms */

    /*
     * A WRITE of 128 packets into a link that passes nothing: A stops at
     * the window (the virtual clock stands still: no retransmission).
     */
    fill(l.a, la, len, 0x21);
    qatomic_set(&r->cut, 1);
    post_send(l.a, qa, wqe_rdma(0xa1, PVRDMA_WR_RDMA_WRITE,
                                PVRDMA_SEND_SIGNALED, 1, rb, l.b->lkey),
              &s, 1);
    sent = relay_quiet_from_a(r);
    g_test_message("A sent %" PRIu64 " frames of a 128-packet WRITE with "
                   "no ACK coming back", sent);
    g_assert_cmpuint(sent, >, 0);
    g_assert_cmpuint(sent, <=, 64);
    qatomic_set(&r->cut, 0);
    wait_cq(&l, l.a, l.a->scq);
    expect_rc_success(l.a, l.a->scq, 0xa1, PVRDMA_WC_RDMA_WRITE, len, qa);
    check_fill(l.b, rb, len, 0x21, 0);

    /* READ it back: requests of 32 packets, four of them */
    fill(l.b, rb, len, 0x22);
    before = qatomic_read(&r->from[0]);
    wire_rdma(&l, qa, 0xa2, PVRDMA_WR_RDMA_READ, la, rb, len);
    check_fill(l.a, la, len, 0x22, 0);
    g_test_message("A sent %" PRIu64 " READ requests for 128 packets",
                   qatomic_read(&r->from[0]) - before);
    g_assert_cmpuint(qatomic_read(&r->from[0]) - before, >=, 4);
    link_down(&l);
}

/*
 * Take a CQE from A's send CQ if there is one: a successful WRITE of @len
 * with wr_id @base + i of QP @q[i], each i once (QPs finish in any
 * order).  Returns whether it took one.
 */
static bool take_write_cqe(Link *l, PvQp **q, int n, uint64_t base,
                           uint32_t len, bool *seen)
{
    PvrdmaCqe c = { 0 };
    uint64_t i;

    if (!pv_cq_poll(l->a->pv, l->a->scq, &c)) {
        return false;
    }
    i = c.wr_id - base;
    g_assert_cmpuint(i, <, n);
    if (i < n) {
        g_assert_false(seen[i]);
        seen[i] = true;
        g_assert_cmpuint(c.status, ==, PVRDMA_WC_SUCCESS);
        g_assert_cmphex(c.opcode, ==, PVRDMA_WC_RDMA_WRITE);
        g_assert_cmpuint(c.byte_len, ==, len);
        g_assert_cmpuint(c.qp, ==, q[i]->handle);
    }
    return true;
}

/*
 * The link window is the device's, shared by its busy QPs.  Regression
 * test: each QP had a window of its own, so sixteen busy QPs with a WRITE
 * of 16 packets each sent all 256 at once (ib_write_bw -q 16 between two
 * guests: four times what the receiving QEMU's socket buffer holds, and
 * the lost tails made its QPs run out of retries).  Each QP here has a
 * one-packet WRITE outstanding first, so that all sixteen are busy when
 * the long ones come: each may then have its share, 4 packets, in
 * flight.  Then, with the link passing everything and the virtual clocks
 * standing still, every WRITE completes on ACKs alone: a QP whose share
 * shrank under packets that did not ask for an ACK sends one over its
 * share that asks, instead of waiting for its retransmission timer.
 */
static void test_wire_device_window(void)
{
    enum { NQP = 16, LEN = 16 * 1024 };
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    PvQp *qa[NQP], *qb[NQP];
    uint64_t sent, before;
    bool seen[NQP];
    gint64 deadline;
    int done = 0;

    for (int i = 0; i < NQP; i++) {
        wire_pair_timeout(&l, &qa[i], &qb[i], 12, 10);     /* 4.2 ms */
        fill(l.a, l.a->mem + i * LEN, LEN, 0x30 + i);
    }

    /*
     * A link that passes nothing: sixteen busy QPs (a one-packet WRITE
     * each), then 256 packets more
     */
    qatomic_set(&r->cut, 1);
    for (int i = 0; i < NQP; i++) {
        PvrdmaSge s = sge(l.a->mem + i * LEN, 1024, l.a->lkey);

        post_send(l.a, qa[i], wqe_rdma(0x900 + i, PVRDMA_WR_RDMA_WRITE,
                                       PVRDMA_SEND_SIGNALED, 1,
                                       l.b->mem + i * LEN, l.b->lkey),
                  &s, 1);
    }
    before = relay_quiet_from_a(r);
    g_assert_cmpuint(before, ==, NQP);
    for (int i = 0; i < NQP; i++) {
        PvrdmaSge s = sge(l.a->mem + i * LEN, LEN, l.a->lkey);

        post_send(l.a, qa[i], wqe_rdma(0xa00 + i, PVRDMA_WR_RDMA_WRITE,
                                       PVRDMA_SEND_SIGNALED, 1,
                                       l.b->mem + i * LEN, l.b->lkey),
                  &s, 1);
    }
    sent = relay_quiet_from_a(r) - before;
    g_test_message("%d busy QPs sent %" PRIu64 " frames of %d, no ACK "
                   "coming back", NQP, sent, NQP * LEN / 1024);
    g_assert_cmpuint(sent, >, 0);
    g_assert_cmpuint(before + sent, <=, 64 + NQP);
    qatomic_set(&r->cut, 0);
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < NQP; i++) {
        wait_cq(&l, l.a, l.a->scq);
        g_assert_true(take_write_cqe(&l, qa, NQP, 0x900, 1024, seen));
    }
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < NQP; i++) {
        wait_cq(&l, l.a, l.a->scq);
        g_assert_true(take_write_cqe(&l, qa, NQP, 0xa00, LEN, seen));
    }
    for (int i = 0; i < NQP; i++) {
        check_fill(l.b, l.b->mem + i * LEN, LEN, 0x30 + i, 0);
    }

    /*
     * QP 0 starts alone with the whole window, the others join: ACKs
     * alone must finish every WRITE (no clock moves, no timer fires).
     */
    before = roce_stat(l.a, "timeouts");
    for (int i = 0; i < NQP; i++) {
        PvrdmaSge s = sge(l.a->mem + i * LEN, LEN, l.a->lkey);

        fill(l.a, l.a->mem + i * LEN, LEN, 0x50 + i);
        post_send(l.a, qa[i], wqe_rdma(0xb00 + i, PVRDMA_WR_RDMA_WRITE,
                                       PVRDMA_SEND_SIGNALED, 1,
                                       l.b->mem + i * LEN, l.b->lkey),
                  &s, 1);
    }
    deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
    memset(seen, 0, sizeof(seen));
    while (done < NQP && g_get_monotonic_time() < deadline) {
        if (take_write_cqe(&l, qa, NQP, 0xb00, LEN, seen)) {
            done++;
        } else {
            g_usleep(1000);
        }
    }
    g_test_message("%d of %d WRITEs completed on ACKs alone", done, NQP);
    g_assert_cmpint(done, ==, NQP);
    g_assert_cmpuint(roce_stat(l.a, "timeouts"), ==, before);
    for (int i = 0; i < NQP; i++) {
        check_fill(l.b, l.b->mem + i * LEN, LEN, 0x50 + i, 0);
    }
    link_down(&l);
}

/*
 * @nqp busy QPs, each with a WRITE of @len through a link that loses
 * nothing, on ACKs alone (no clock moves: no probe or timeout goes off):
 * all complete, B sent at most one ACK per @per of A's frames.
 */
static void acks_many_qps(int nqp, uint32_t len, uint32_t per)
{
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    g_autofree PvQp **qa = g_new0(PvQp *, nqp);
    g_autofree PvQp **qb = g_new0(PvQp *, nqp);
    g_autofree bool *seen = g_new0(bool, nqp);
    uint32_t from_a, from_b;
    gint64 deadline;
    int done = 0;

    for (int i = 0; i < nqp; i++) {
        wire_pair_timeout(&l, &qa[i], &qb[i], 12, 10);
    }
    fill(l.a, l.a->mem, len, 0x3c);
    from_a = qatomic_read(&r->from[0]);
    from_b = qatomic_read(&r->from[1]);
    for (int i = 0; i < nqp; i++) {
        PvrdmaSge s = sge(l.a->mem, len, l.a->lkey);

        post_send(l.a, qa[i], wqe_rdma(0xd00 + i, PVRDMA_WR_RDMA_WRITE,
                                       PVRDMA_SEND_SIGNALED, 1,
                                       l.b->mem, l.b->lkey), &s, 1);
    }
    deadline = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
    while (done < nqp && g_get_monotonic_time() < deadline) {
        if (take_write_cqe(&l, qa, nqp, 0xd00, len, seen)) {
            done++;
        } else {
            g_usleep(1000);
        }
    }
    g_assert_cmpint(done, ==, nqp);
    from_a = qatomic_read(&r->from[0]) - from_a;
    from_b = qatomic_read(&r->from[1]) - from_b;
    g_test_message("%d QPs, %u packets each: A sent %u frames, B %u",
                   nqp, len / 1024, from_a, from_b);
    g_assert_cmpuint(from_a, ==, nqp * (len / 1024));
    g_assert_cmpuint(from_b, <=, from_a / per);
    check_fill(l.b, l.b->mem, len, 0x3c, 0);
    link_down(&l);
}

/*
 * Sixteen busy QPs, a WRITE of 192 packets each: a QP asks for an ACK
 * once per share of the window, not more (an ACK per share of 4
 * packets, and a few more: the last ones).  Regression test: a QP asked
 * with every packet that filled the window, and with many QPs busy the
 * device's window was full nearly all the time: an ACK for two packets
 * opened two places, the second packet filled the window again and
 * asked.  ib_write_bw -q 16 between two guests had B send an ACK for
 * 0.7 of A's frames, and reached 0.40 of -q 1's rate (issue 24).
 */
static void test_wire_acks_many_qps(void)
{
    acks_many_qps(16, 192 * 1024, 3);
}

/*
 * 48 busy QPs, a WRITE of 64 packets each: more QPs than the window has
 * shares of RDMA_SOFT_MIN_SHARE (16 packets), so they take turns, and
 * ask an ACK per turn.  Regression test: the share was the window over
 * the busy QPs, one packet each, and every packet asked for an ACK
 * (ib_write_bw -q 64: 0.33 of -q 1's rate, issue 24).
 */
static void test_wire_acks_qps_take_turns(void)
{
    acks_many_qps(48, 64 * 1024, 6);
}

/*
 * QPs that become busy one after another, each with a 64-packet WRITE,
 * into a link that passes nothing: together they keep at most the
 * window on the link (64 packets, and one packet of each QP that had
 * none).  Regression test: each took its share of the moment it became
 * busy (64, 32, 21, 16, ...), 172 packets for 8 QPs, more than a
 * receiving socket holds; ib_write_bw -q 16 and -q 64 lost the tails of
 * their first bursts (issue 24).  Then every WRITE completes.
 */
static void test_wire_device_window_growing(void)
{
    enum { NQP = 8, LEN = 64 * 1024 };
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    PvQp *qa[NQP], *qb[NQP];
    uint64_t sent = 0;
    bool seen[NQP];

    for (int i = 0; i < NQP; i++) {
        wire_pair_timeout(&l, &qa[i], &qb[i], 12, 10);     /* 4.2 ms */
    }
    fill(l.a, l.a->mem, LEN, 0x70);
    qatomic_set(&r->cut, 1);
    for (int i = 0; i < NQP; i++) {
        PvrdmaSge s = sge(l.a->mem, LEN, l.a->lkey);
        uint64_t n;

        post_send(l.a, qa[i], wqe_rdma(0xc00 + i, PVRDMA_WR_RDMA_WRITE,
                                       PVRDMA_SEND_SIGNALED, 1,
                                       l.b->mem, l.b->lkey), &s, 1);
        n = relay_quiet_from_a(r) - sent;
        g_test_message("QP %d became busy: sent %" PRIu64 " frames", i, n);
        sent += n;
    }
    g_test_message("%d QPs busy one after another sent %" PRIu64 " frames "
                   "with no ACK coming back", NQP, sent);
    g_assert_cmpuint(sent, <=, 64 + NQP);
    qatomic_set(&r->cut, 0);
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < NQP; i++) {
        wait_cq(&l, l.a, l.a->scq);
        g_assert_true(take_write_cqe(&l, qa, NQP, 0xc00, LEN, seen));
    }
    check_fill(l.b, l.b->mem, LEN, 0x70, 0);
    link_down(&l);
}

/*
 * A READ asked again after lost responses asks a part of the request that
 * was lost, never more.  Regression test: with a long READ asked in
 * pieces of 32 packets, a request again from a PSN inside a piece asked
 * for 32 packets from there, past the end of its piece; Linux rxe drops
 * a duplicate READ that is not a part of one it answered, so the READ
 * ran out of retries (the lossy-client lane, ib_read_bw).
 */
static void test_wire_read_again_within_piece(void)
{
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    PvQp *qa, *qb;
    const uint32_t len = 128 * 1024, piece = 32;
    uint64_t la = l.a->mem, rb = l.b->mem + len;
    uint32_t first;
    int n, again = 0;

    wire_pair_timeout(&l, &qa, &qb, 12, 10);           /* 4.2 ms */
    r->drop_every_b = 45;           /* a response lost in most pieces */
    fill(l.b, rb, len, 0x23);
    wire_rdma(&l, qa, 0xa1, PVRDMA_WR_RDMA_READ, la, rb, len);
    check_fill(l.a, la, len, 0x23, 0);
    n = qatomic_load_acquire(&r->nreads);
    g_assert_cmpint(n, >, 0);
    first = r->read_psn[0];
    for (int i = 0; i < n; i++) {
        uint32_t idx = (r->read_psn[i] - first) & 0xffffff;

        again += idx % piece != 0;
        g_assert_cmpuint(idx % piece + DIV_ROUND_UP(r->read_len[i], 1024),
                         <=, piece);
    }
    g_test_message("%d READ requests, %d of them again from inside a piece",
                   n, again);
    g_assert_cmpint(again, >, 0);
    link_down(&l);
}

/* Wait for the next send completion of A and check it. */
static void wire_expect_send(Link *l, PvQp *qa, uint64_t wr_id,
                             uint32_t opcode, uint32_t len)
{
    wait_cq(l, l->a, l->a->scq);
    expect_rc_success(l->a, l->a->scq, wr_id, opcode, len, qa);
}

/*
 * Several WRs of a QP on the link at once: the next ones go out while
 * the first waits for its ACK, at most max_rd_atomic RDMA READs, and a
 * fenced WR waits for the READ before it.  They complete in order.
 */
static void test_wire_several_wrs(void)
{
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    PvQp *qa, *qb;
    uint64_t la = l.a->mem, lb = l.b->mem, rb = l.b->mem + 16 * PAGE;
    uint64_t before, sent;
    PvrdmaSge s;

    wire_pair_timeout(&l, &qa, &qb, 12, 10);           /* 4.2 ms */

    /* Four SENDs into a link that passes nothing: all four go out. */
    for (int i = 0; i < 4; i++) {
        post_recv1(l.b, qb, 0xb0 + i, lb + i * PAGE, 256);
    }
    qatomic_set(&r->cut, 1);
    for (int i = 0; i < 4; i++) {
        fill(l.a, la + i * PAGE, 200, 0x60 + i);
        s = sge(la + i * PAGE, 200, l.a->lkey);
        post_send(l.a, qa, wqe(0xa0 + i, PVRDMA_WR_SEND,
                               PVRDMA_SEND_SIGNALED, 1), &s, 1);
    }
    sent = relay_quiet_from_a(r);
    g_test_message("A sent %" PRIu64 " frames for 4 SENDs, no ACK back",
                   sent);
    g_assert_cmpuint(sent, ==, 4);
    qatomic_set(&r->cut, 0);
    for (int i = 0; i < 4; i++) {
        wire_expect_send(&l, qa, 0xa0 + i, PVRDMA_WC_SEND, 200);
    }
    for (int i = 0; i < 4; i++) {
        wait_cq(&l, l.b, l.b->rcq);
        expect_recv(l.b, l.b->rcq, 0xb0 + i, PVRDMA_WC_RECV, 200, qb, qa,
                    0, 0);
        check_fill(l.b, lb + i * PAGE, 200, 0x60 + i, 0);
    }

    /* Six READs: four requests go out (max_rd_atomic 4), then the rest. */
    for (int i = 0; i < 6; i++) {
        fill(l.b, rb + i * PAGE, 1024, 0x70 + i);
    }
    qatomic_set(&r->cut, 1);
    before = qatomic_read(&r->from[0]);
    for (int i = 0; i < 6; i++) {
        s = sge(la + i * PAGE, 1024, l.a->lkey);
        post_send(l.a, qa, wqe_rdma(0xc0 + i, PVRDMA_WR_RDMA_READ,
                                    PVRDMA_SEND_SIGNALED, 1,
                                    rb + i * PAGE, l.b->lkey), &s, 1);
    }
    sent = relay_quiet_from_a(r) - before;
    g_test_message("A sent %" PRIu64 " requests for 6 READs, no response "
                   "back", sent);
    g_assert_cmpuint(sent, ==, 4);
    qatomic_set(&r->cut, 0);
    for (int i = 0; i < 6; i++) {
        wire_expect_send(&l, qa, 0xc0 + i, PVRDMA_WC_RDMA_READ, 1024);
        check_fill(l.a, la + i * PAGE, 1024, 0x70 + i, 0);
    }

    /* A READ, then a fenced WRITE: the WRITE waits for the READ. */
    qatomic_set(&r->cut, 1);
    before = qatomic_read(&r->from[0]);
    s = sge(la, 1024, l.a->lkey);
    post_send(l.a, qa, wqe_rdma(0xd0, PVRDMA_WR_RDMA_READ,
                                PVRDMA_SEND_SIGNALED, 1, rb, l.b->lkey),
              &s, 1);
    fill(l.a, la + PAGE, 512, 0x7f);
    s = sge(la + PAGE, 512, l.a->lkey);
    post_send(l.a, qa, wqe_rdma(0xd1, PVRDMA_WR_RDMA_WRITE,
                                PVRDMA_SEND_SIGNALED | PVRDMA_SEND_FENCE, 1,
                                rb + 8 * PAGE, l.b->lkey), &s, 1);
    sent = relay_quiet_from_a(r) - before;
    g_test_message("A sent %" PRIu64 " frames for a READ and a fenced "
                   "WRITE, no response back", sent);
    g_assert_cmpuint(sent, ==, 1);
    qatomic_set(&r->cut, 0);
    wire_expect_send(&l, qa, 0xd0, PVRDMA_WC_RDMA_READ, 1024);
    check_fill(l.a, la, 1024, 0x70, 0);
    wire_expect_send(&l, qa, 0xd1, PVRDMA_WC_RDMA_WRITE, 512);
    check_fill(l.b, rb + 8 * PAGE, 512, 0x7f, 0);
    link_down(&l);
}

/*
 * RC QPs @qa, @qb of A and B through a relay that loses the first frame
 * from B whose BTH opcode is @opcode, and nothing else.
 */
static Link wire_pair_losing_one(PvQp **qa, PvQp **qb, uint8_t opcode)
{
    Link l = link_up_lossy(1, 0, 0, 0);

    wire_pair_timeout(&l, qa, qb, 12, 10);             /* 4.2 ms */
    l.relay->drop_b_op = opcode;
    qatomic_set(&l.relay->drop_b_left, 1);
    return l;
}

/*
 * Two atomics outstanding, the first one's ACK lost: the requester asks
 * the first again, and the responder answers it with the result it had,
 * without executing it again.  Regression test: the responder kept the
 * result of its last atomic only, never answered the first, and the
 * requester ran out of retries (a requester with several atomics
 * outstanding: Linux rxe, ib_atomic_bw against pvrdma on a lossy link).
 */
static void test_wire_duplicate_atomic_of_several(void)
{
    PvQp *qa, *qb;
    Link l = wire_pair_losing_one(&qa, &qb, 0x12);    /* ATOMIC_ACKNOWLEDGE */
    Relay *r = l.relay;
    uint64_t counter = l.b->mem, old = l.a->mem;
    PvrdmaSge s;

    qtest_writeq(l.b->pv->qts, counter, 100);
    for (int i = 0; i < 2; i++) {
        s = sge(old + i * 8, 8, l.a->lkey);
        post_send(l.a, qa, wqe_atomic(0xa0 + i,
                                      PVRDMA_WR_ATOMIC_FETCH_AND_ADD,
                                      counter, l.b->lkey, 1 + i * 9, 0),
                  &s, 1);
    }
    wire_expect_send(&l, qa, 0xa0, PVRDMA_WC_FETCH_ADD, 8);
    wire_expect_send(&l, qa, 0xa1, PVRDMA_WC_FETCH_ADD, 8);
    g_assert_cmpint(qatomic_read(&r->drop_b_left), ==, 0);
    g_assert_cmpuint(qtest_readq(l.a->pv->qts, old), ==, 100);
    g_assert_cmpuint(qtest_readq(l.a->pv->qts, old + 8), ==, 101);
    g_assert_cmpuint(qtest_readq(l.b->pv->qts, counter), ==, 111);
    g_test_message("B: %" PRIu64 " duplicates answered",
                   roce_stat(l.b, "duplicates"));
    g_assert_cmpuint(roce_stat(l.b, "duplicates"), >, 0);
    link_down(&l);
}

/*
 * An atomic and then a WRITE outstanding, local ACK timeout 4.2 ms: the
 * atomic's answer comes at 3 ms, the WRITE's ACK is lost.  The answer is
 * progress: the retransmission timer starts again from it, so at 5 ms
 * nothing has timed out; the WRITE goes again at 7.2 ms.  Regression
 * test: an atomic's answer completed its WR but neither restarted the
 * timer nor set the retry counter back, so a QP that always had WRs
 * outstanding timed out every ACK timeout whatever came back, a retry
 * spent each time, and failed with RETRY_EXC_ERR after retry_cnt of them
 * (make soak: ib_atomic_bw through a relay losing 1% of the frames,
 * status 12 after 0.62 s, a timeout every 67 ms, the first PSN moving on).
 */
static void test_wire_atomic_answer_is_progress(void)
{
    PvQp *qa, *qb;
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    uint64_t counter = l.b->mem, old = l.a->mem;
    uint64_t la = l.a->mem + PAGE, rb = l.b->mem + PAGE;
    gint64 deadline;
    PvrdmaSge s;

    wire_pair_timeout(&l, &qa, &qb, 12, 10);            /* 4.2 ms */
    fill(l.a, la, 512, 0x5a);
    qtest_writeq(l.b->pv->qts, counter, 7);
    qatomic_set(&r->hold_b, 1);
    s = sge(old, 8, l.a->lkey);
    post_send(l.a, qa, wqe_atomic(0xa0, PVRDMA_WR_ATOMIC_FETCH_AND_ADD,
                                  counter, l.b->lkey, 1, 0), &s, 1);
    s = sge(la, 512, l.a->lkey);
    post_send(l.a, qa, wqe_rdma(0xa1, PVRDMA_WR_RDMA_WRITE,
                                PVRDMA_SEND_SIGNALED, 1, rb, l.b->lkey),
              &s, 1);
    /* B answers both; its answers wait in the relay's socket */
    deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    while ((qtest_readq(l.b->pv->qts, counter) != 8 ||
            qatomic_read(&r->from[0]) < 2) &&
           g_get_monotonic_time() < deadline) {
        g_usleep(1000);
    }
    g_assert_cmpuint(qtest_readq(l.b->pv->qts, counter), ==, 8);
    g_usleep(100 * 1000);               /* and the WRITE's ACK */
    qtest_clock_step(l.a->pv->qts, 3000 * 1000);        /* A at 3 ms */
    r->drop_b_op = 0x11;                                /* the WRITE's ACK */
    qatomic_set(&r->drop_b_left, 1);
    qatomic_set(&r->hold_b, 0);
    while (!pv_ring_count(l.a->pv, &l.a->scq->ring) &&
           g_get_monotonic_time() < deadline) {
        g_usleep(1000);
    }
    expect_rc_success(l.a, l.a->scq, 0xa0, PVRDMA_WC_FETCH_ADD, 8, qa);
    g_assert_cmpuint(qtest_readq(l.a->pv->qts, old), ==, 7);
    qtest_clock_step(l.a->pv->qts, 2000 * 1000);        /* A at 5 ms */
    g_usleep(50 * 1000);
    main_loop_run(l.a);
    g_test_message("A at 5 ms, the atomic answered at 3 ms: %" PRIu64
                   " timeouts", roce_stat(l.a, "timeouts"));
    g_assert_cmpuint(roce_stat(l.a, "timeouts"), ==, 0);
    wire_expect_send(&l, qa, 0xa1, PVRDMA_WC_RDMA_WRITE, 512);
    g_assert_cmpint(qatomic_read(&r->drop_b_left), ==, 0);
    g_assert_cmpuint(roce_stat(l.a, "timeouts"), ==, 1);
    check_fill(l.b, rb, 512, 0x5a, 0);
    link_down(&l);
}

/*
 * Two WRITEs in flight, the first one's ACK lost: the ACK of the second
 * completes both.  Regression test: an ACK counted only up to the PSN
 * the WR's own go-back had reached, so the first WR, whose packets were
 * all sent, never took an ACK that named a PSN of the second, and the
 * requester ran out of retries (pvrdma clients on the lossy lanes:
 * ib_write_bw, ib_send_bw and rping ended with status 12).
 */
static void test_wire_ack_of_a_later_wr(void)
{
    PvQp *qa, *qb;
    Link l = wire_pair_losing_one(&qa, &qb, 0x11);    /* RC ACKNOWLEDGE */
    Relay *r = l.relay;
    uint64_t la = l.a->mem, rb = l.b->mem;
    PvrdmaSge s;

    for (int i = 0; i < 2; i++) {
        fill(l.a, la + i * 4 * PAGE, 4096, 0x50 + i);
        s = sge(la + i * 4 * PAGE, 4096, l.a->lkey);
        post_send(l.a, qa, wqe_rdma(0xa0 + i, PVRDMA_WR_RDMA_WRITE,
                                    PVRDMA_SEND_SIGNALED, 1,
                                    rb + i * 4 * PAGE, l.b->lkey), &s, 1);
    }
    wire_expect_send(&l, qa, 0xa0, PVRDMA_WC_RDMA_WRITE, 4096);
    wire_expect_send(&l, qa, 0xa1, PVRDMA_WC_RDMA_WRITE, 4096);
    g_assert_cmpint(qatomic_read(&r->drop_b_left), ==, 0);
    for (int i = 0; i < 2; i++) {
        check_fill(l.b, rb + i * 4 * PAGE, 4096, 0x50 + i, 0);
    }
    link_down(&l);
}

/*
 * Wait for a CQE of A's send CQ, moving both clocks 1 ms at a time; the
 * virtual milliseconds it took.
 */
static int wait_send_ms(Link *l)
{
    int ms = 0;

    while (!pv_ring_count(l->a->pv, &l->a->scq->ring) && ms < 5000) {
        qtest_clock_step(l->a->pv->qts, 1000 * 1000);
        qtest_clock_step(l->b->pv->qts, 1000 * 1000);
        g_usleep(200);
        ms++;
    }
    return ms;
}

/*
 * The ACK of a WRITE lost, with RDMA-CM's local ACK timeout (1.07 s):
 * the requester probes after a few round trips instead of waiting for
 * the timeout, and spends no retry; B acknowledges the probe's duplicate.
 * Regression test: a lost tail waited for the timeout, a second or more
 * of a connection that had round trips of a millisecond (issue 24: 3%
 * loss cost 98% of ib_write_bw).  (A READ first in line is not probed:
 * its answer comes at the responder's pace, rdma_soft_probe_ns().)
 */
static void test_wire_tail_probe(void)
{
    PvQp *qa, *qb;
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    uint64_t la = l.a->mem, rb = l.b->mem;
    PvrdmaSge s = sge(la, 1024, l.a->lkey);
    int ms;

    wire_pair_timeout(&l, &qa, &qb, 12, 18);
    fill(l.a, la, 1024, 0x61);
    for (int i = 0; i < 4; i++) {       /* round trips to measure */
        wire_rdma(&l, qa, 0x10 + i, PVRDMA_WR_RDMA_WRITE, la, rb, 1024);
    }
    r->drop_b_op = 0x11;                /* ACKNOWLEDGE */
    qatomic_set(&r->drop_b_left, 1);
    post_send(l.a, qa, wqe_rdma(0xa0, PVRDMA_WR_RDMA_WRITE,
                                PVRDMA_SEND_SIGNALED, 1, rb + PAGE,
                                l.b->lkey), &s, 1);
    ms = wait_send_ms(&l);
    expect_rc_success(l.a, l.a->scq, 0xa0, PVRDMA_WC_RDMA_WRITE, 1024, qa);
    g_assert_cmpint(qatomic_read(&r->drop_b_left), ==, 0);
    check_fill(l.b, rb + PAGE, 1024, 0x61, 0);
    g_test_message("lost ACK: done after %d ms (timeout 1074 ms); A: %"
                   PRIu64 " timeouts, %" PRIu64 " retransmits; B: %" PRIu64
                   " duplicates", ms, roce_stat(l.a, "timeouts"),
                   roce_stat(l.a, "retransmits"),
                   roce_stat(l.b, "duplicates"));
    g_assert_cmpuint(roce_stat(l.a, "timeouts"), ==, 0);
    /* (a slow host may make one more probe: the clocks move on) */
    g_assert_cmpuint(roce_stat(l.b, "duplicates"), >=, 1);
    link_down(&l);
}

/* What the tail probe of a WRITE of 16 packets found, and should cost. */
typedef struct ProbeCase {
    const char *what;
    bool hold_ack;          /* B's answers wait in the relay: none lost */
    uint32_t lost;          /* the WRITE's last packets lost */
    uint64_t again, dups;   /* packets A sends again, duplicates at B */
} ProbeCase;

/*
 * A probe that was not needed: B's ACK of a WRITE of 16 packets is late
 * (it waits in the relay), and A's probe sends two packets again, the
 * first unacknowledged one and the last one sent, not the whole WRITE;
 * when the ACK comes the WRITE completes, no retry spent, and B has taken
 * the two as duplicates.  Regression test: the probe went back N and
 * sent everything on the link again.  Under TCG most probes are of this
 * kind (the peer's QEMU did not run for a while), and their copies
 * overran the peer's socket: ib_write_bw -q 64 between two guests made
 * 729 probes and B's socket dropped 2143 frames; with no probes it
 * dropped none.
 */
static const ProbeCase probe_late_ack = {
    .what = "late ACK", .hold_ack = true, .again = 2, .dups = 2,
};

/*
 * The tail of a WRITE of 16 packets lost (its last 8): A's probe sends
 * the first unacknowledged packet and the last one again; B acknowledges
 * the first (a duplicate) and NAKs the missing ones at the last, and A
 * goes back to them: 2 + 8 packets again, one duplicate at B, no retry
 * spent.  (Before the probe sent two packets, it went back N at once: 16
 * again, 8 duplicates.)
 */
static const ProbeCase probe_lost_tail = {
    .what = "last 8 of 16 packets lost", .lost = 8, .again = 10, .dups = 1,
};

/*
 * The round trip measured by four WRITEs, then a WRITE of 16 packets
 * under @data's loss, with RDMA-CM's ACK timeout (1.07 s).  The clocks
 * move 1 ms at a time, with the link left quiet in between, so that each
 * answer comes before the next step.
 */
static void test_wire_probe(const void *data)
{
    const ProbeCase *c = data;
    PvQp *qa, *qb;
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    uint64_t la = l.a->mem, rb = l.b->mem;
    PvrdmaSge s = sge(la, 16 * 1024, l.a->lkey);
    uint64_t sent, again, dups0, dups;
    int ms;

    wire_pair_timeout(&l, &qa, &qb, 12, 18);
    fill(l.a, la, 16 * 1024, 0x63);
    for (int i = 0; i < 4; i++) {       /* round trips to measure */
        wire_rdma(&l, qa, 0x10 + i, PVRDMA_WR_RDMA_WRITE, la, rb, 1024);
    }
    sent = relay_quiet_from_a(r);
    dups0 = roce_stat(l.b, "duplicates");
    qatomic_set(&r->hold_b, c->hold_ack);
    qatomic_set(&r->drop_a_at, sent + 17 - c->lost);
    qatomic_set(&r->drop_a_left, c->lost);
    post_send(l.a, qa, wqe_rdma(0xa2, PVRDMA_WR_RDMA_WRITE,
                                PVRDMA_SEND_SIGNALED, 1, rb + 4 * PAGE,
                                l.b->lkey), &s, 1);
    relay_quiet_from_a(r);
    g_assert_cmpint(qatomic_read(&r->from[0]), >=, sent + 16);
    g_assert_cmpint(qatomic_read(&r->drop_a_left), ==, 0);
    for (ms = 0; !pv_ring_count(l.a->pv, &l.a->scq->ring) && ms < 20; ms++) {
        qtest_clock_step(l.a->pv->qts, 1000 * 1000);
        qtest_clock_step(l.b->pv->qts, 1000 * 1000);
        relay_quiet_from_a(r);
    }
    again = qatomic_read(&r->from[0]) - sent - 16;
    qatomic_set(&r->hold_b, 0);
    ms += wait_send_ms(&l);
    expect_rc_success(l.a, l.a->scq, 0xa2, PVRDMA_WC_RDMA_WRITE, 16 * 1024,
                      qa);
    check_fill(l.b, rb + 4 * PAGE, 16 * 1024, 0x63, 0);
    dups = roce_stat(l.b, "duplicates") - dups0;
    g_test_message("%s: %" PRIu64 " packets sent again, B took %" PRIu64
                   " duplicates; done after %d ms, %" PRIu64 " timeouts",
                   c->what, again, dups, ms, roce_stat(l.a, "timeouts"));
    g_assert_cmpuint(again, ==, c->again);
    g_assert_cmpuint(dups, ==, c->dups);
    g_assert_cmpuint(roce_stat(l.a, "timeouts"), ==, 0);
    link_down(&l);
}

/*
 * After a go-back on a sequence NAK, the packets whose first copies may
 * still wait in the responder's socket count against the window.  A
 * WRITE of 128 packets while B's answers wait in the relay: A sends its
 * window, 64 packets, of which the relay drops the third.  B NAKs it
 * when the fourth comes, then takes the 60 after that from its socket
 * and drops them, out of sequence (in a QEMU under load those wait in
 * the socket while the NAK travels).  When the NAK comes A halves its
 * window (lost: what the link delivers is less) and sends again from
 * the third packet only what that leaves beside the 60, at least a
 * quarter of it: 8 packets.  Then, with the link passing everything,
 * the WRITE completes on ACKs alone, its data intact, and the window
 * grows back as ACKs come without a loss.  Regression test:
 * A sent its whole window again at once, 64 packets behind the 60;
 * ib_write_bw between two guests through a relay dropping 3% of the
 * frames lost more in the receiving QEMU's socket (9071) than the relay
 * dropped (5370), each loss a go-back more.
 */
static void test_wire_go_back_counts_stale(void)
{
    enum { LEN = 128 * 1024, WINDOW = 64, STALE = WINDOW - 4 };
    PvQp *qa, *qb;
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    uint64_t la = l.a->mem, rb = l.b->mem;
    PvrdmaSge s = sge(la, LEN, l.a->lkey);
    uint64_t sent, first, again;
    int ms;

    wire_pair_timeout(&l, &qa, &qb, 12, 18);
    fill(l.a, la, LEN, 0x64);
    sent = relay_quiet_from_a(r);
    qatomic_set(&r->hold_b, 1);
    qatomic_set(&r->drop_a_at, sent + 3);
    qatomic_set(&r->drop_a_left, 1);
    post_send(l.a, qa, wqe_rdma(0xa3, PVRDMA_WR_RDMA_WRITE,
                                PVRDMA_SEND_SIGNALED, 1, rb, l.b->lkey),
              &s, 1);
    first = relay_quiet_from_a(r) - sent;
    g_assert_cmpuint(first, ==, WINDOW);
    g_assert_cmpint(qatomic_read(&r->drop_a_left), ==, 0);

    /* B's NAK goes to A; what B says after it waits again */
    qatomic_set(&r->hold_b_after, 1);
    qatomic_set(&r->hold_b, 0);
    again = relay_quiet_from_a(r) - sent - first;
    g_test_message("after the NAK A sent %" PRIu64 " packets again, behind "
                   "%d first copies", again, STALE);
    g_assert_cmpint(qatomic_read(&r->hold_b_after), ==, 0);
    g_assert_cmpuint(again, >=, 1);
    g_assert_cmpuint(again + STALE, <=, WINDOW + WINDOW / 4);

    qatomic_set(&r->hold_b, 0);
    ms = wait_send_ms(&l);
    expect_rc_success(l.a, l.a->scq, 0xa3, PVRDMA_WC_RDMA_WRITE, LEN, qa);
    check_fill(l.b, rb, LEN, 0x64, 0);
    g_test_message("done after %d ms of the clocks, %" PRIu64 " timeouts",
                   ms, roce_stat(l.a, "timeouts"));
    g_assert_cmpuint(roce_stat(l.a, "timeouts"), ==, 0);

    /*
     * The window grows back with clean ACKs: with B's answers waiting,
     * A sends less than its whole window right after the loss, all of
     * it after 512 packets acknowledged without one.
     */
    for (int i = 0; i < 2; i++) {
        uint64_t burst;

        sent = relay_quiet_from_a(r);
        qatomic_set(&r->hold_b, 1);
        post_send(l.a, qa, wqe_rdma(0xa4 + i, PVRDMA_WR_RDMA_WRITE,
                                    PVRDMA_SEND_SIGNALED, 1, rb,
                                    l.b->lkey), &s, 1);
        burst = relay_quiet_from_a(r) - sent;
        g_test_message("%s: A sent %" PRIu64 " packets with no ACK coming",
                       i ? "after 512 clean packets" : "after the loss",
                       burst);
        if (i) {
            g_assert_cmpuint(burst, ==, WINDOW);
        } else {
            g_assert_cmpuint(burst, >=, WINDOW / 2);
            g_assert_cmpuint(burst, <, WINDOW);
        }
        qatomic_set(&r->hold_b, 0);
        wait_send_ms(&l);
        expect_rc_success(l.a, l.a->scq, 0xa4 + i, PVRDMA_WC_RDMA_WRITE,
                          LEN, qa);
        for (int j = 0; !i && j < 3; j++) {
            wire_rdma(&l, qa, 0xb0 + j, PVRDMA_WR_RDMA_WRITE, la, rb, LEN);
        }
    }
    link_down(&l);
}

/*
 * A READ first in line is not probed: its answer comes at the responder's
 * pace.  With round trips of a millisecond measured, a READ whose
 * response is lost is asked again by its timeout (1.07 s), not after a
 * few milliseconds.  Regression test: the probe asked READs again while
 * a slow responder's answer was still coming (Linux rxe under TCG pauses
 * longer than that), the answers crossed, and NFS over RDMA writes from
 * an rxe client to a pvrdma server stalled for NFS's 60 s RPC timeout.
 */
static void test_wire_read_not_probed(void)
{
    PvQp *qa, *qb;
    Link l = link_up_lossy(1, 0, 0, 0);
    Relay *r = l.relay;
    uint64_t la = l.a->mem, rb = l.b->mem;
    PvrdmaSge s = sge(la + 4 * PAGE, 1024, l.a->lkey);
    uint64_t dups, dups0;
    int ms;

    wire_pair_timeout(&l, &qa, &qb, 12, 18);
    fill(l.b, rb + 4 * PAGE, 1024, 0x62);
    for (int i = 0; i < 4; i++) {       /* round trips to measure */
        wire_rdma(&l, qa, 0x10 + i, PVRDMA_WR_RDMA_WRITE, la, rb, 1024);
    }
    /*
     * (a WRITE's probe on a busy host, its ACK late by a 1 ms step, is a
     * duplicate too: count from here)
     */
    relay_quiet_from_a(r);
    dups0 = roce_stat(l.b, "duplicates");
    r->drop_b_op = 0x10;                /* READ_RESPONSE_ONLY */
    qatomic_set(&r->drop_b_left, 1);
    post_send(l.a, qa, wqe_rdma(0xa1, PVRDMA_WR_RDMA_READ,
                                PVRDMA_SEND_SIGNALED, 1, rb + 4 * PAGE,
                                l.b->lkey), &s, 1);
    while (qatomic_read(&r->drop_b_left)) {
        g_usleep(1000);
    }
    for (int i = 0; i < 20; i++) {      /* 20 ms: many round trips */
        qtest_clock_step(l.a->pv->qts, 1000 * 1000);
        g_usleep(1000);
    }
    relay_quiet_from_a(r);
    dups = roce_stat(l.b, "duplicates") - dups0;
    ms = wait_send_ms(&l);
    expect_rc_success(l.a, l.a->scq, 0xa1, PVRDMA_WC_RDMA_READ, 1024, qa);
    check_fill(l.a, la + 4 * PAGE, 1024, 0x62, 0);
    g_test_message("READ asked again %" PRIu64 " times within 20 ms (B had "
                   "%" PRIu64 " duplicates before); done %d ms later with %"
                   PRIu64 " timeouts", dups, dups0, ms,
                   roce_stat(l.a, "timeouts"));
    g_assert_cmpuint(dups, ==, 0);
    g_assert_cmpuint(roce_stat(l.a, "timeouts"), ==, 1);
    link_down(&l);
}

/* Send @len bytes of @buf from the test to B's netdev, as a host would. */
static void send_to(int port, const void *buf, size_t len)
{
    struct sockaddr_in sa = { .sin_family = AF_INET,
                              .sin_port = htons(port),
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(sendto(fd, buf, len, 0, (struct sockaddr *)&sa,
                           sizeof(sa)), ==, len);
    close(fd);
}

/*
 * Frames from the link are hostile input: short, long, cut inside the
 * headers, with lengths that lie, with a bad ICRC.  The device takes none
 * (nothing is delivered, nothing breaks) and a SEND across the link works
 * after them.
 */
static void test_wire_hostile_frames(void)
{
    Link l = link_up();
    PvQp *qa, *qb;
    PvrdmaSge s = sge(l.a->mem, 32, l.a->lkey);
    uint8_t f[2048] = { 0 };
    /*
     * Not an empty datagram: -netdev dgram takes one for the end of a
     * connection and stops reading its socket.
     */
    static const size_t cuts[] = { 1, 13, 14, 33, 41, 42, 53, 54, 57, 58,
                                   100, 1500, sizeof(f) };

    wire_pair(&l, &qa, &qb, 12);
    post_recv1(l.b, qb, 0xb1, l.b->mem, 64);
    /* Ethernet to B, IPv4 to B's GID 0, UDP to 4791, a BTH to QP qb. */
    memcpy(f, mac_b, 6);
    memcpy(f + 6, mac_a, 6);
    f[12] = 0x08;
    f[14] = 0x45;
    f[16] = 0x07;                           /* total length: lies */
    f[17] = 0xd0;
    f[22] = 64;
    f[23] = 17;                             /* UDP */
    memcpy(f + 26, gid_a + 12, 4);
    memcpy(f + 30, gid_b + 12, 4);
    f[36] = 4791 >> 8;
    f[37] = 4791 & 0xff;
    f[38] = 0xff;                           /* UDP length: lies too */
    f[42] = 0x04;                           /* RC SEND_ONLY */
    f[45] = qb->qpn >> 16;
    f[46] = qb->qpn >> 8;
    f[47] = qb->qpn;
    f[51] = 0x00;
    f[52] = 0x01;
    f[53] = 0x00;                           /* PSN 0x100: the expected one */
    for (size_t i = 0; i < ARRAY_SIZE(cuts); i++) {
        send_to(l.port_b, f, cuts[i]);
    }
    /* Random bytes with a RoCE header in front, bad ICRC. */
    for (int i = 0; i < 64; i++) {
        for (size_t j = 54; j < sizeof(f); j++) {
            f[j] = g_test_rand_int();
        }
        send_to(l.port_b, f, 54 + g_test_rand_int_range(0, 1900));
    }
    main_loop_run(l.b);
    expect_no_cqe(l.b, l.b->rcq);
    g_assert_cmpuint(qp_state(l.b, qb), ==, PVRDMA_QPS_RTS);

    fill(l.a, l.a->mem, 32, 0x12);
    post_send(l.a, qa, wqe(0xa1, PVRDMA_WR_SEND, PVRDMA_SEND_SIGNALED, 1),
              &s, 1);
    expect_recv(l.b, l.b->rcq, 0xb1, PVRDMA_WC_RECV, 32, qb, qa, 0, 0);
    expect_rc_success(l.a, l.a->scq, 0xa1, PVRDMA_WC_SEND, 32, qa);
    check_fill(l.b, l.b->mem, 32, 0x12, 0);
    link_down(&l);
}

/*
 * A scripted peer: B's link leads to a socket of the test, which plays A
 * (10.0.3.1, mac_a) one frame at a time.  It builds RoCE v2 frames of its
 * own (its own CRC and header code, written from IB annex A17, not the
 * device's) and reads what B answers.  B's RC QPs under test are
 * connected to A's QP PEER_QPN (a row of the responder table: to a QP
 * of its own above it), a probe QP to PEER_PROBE_QPN; all expect PSN
 * 0x100 first.
 */
#define PEER_QPN        0x11
#define PEER_PROBE_QPN  0x12
#define PEER_EPSN       0x100

typedef struct Peer {
    Dp *b;
    PvCq *cq;                       /* of every QP of the peer's B */
    PvQp *probe;                    /* B's QP the peer syncs with */
    int fd;                         /* B sends here */
    int port_b;                     /* B listens here */
    uint16_t ip_id;
} Peer;

/* A frame the peer sends; fields left zero take the defaults named. */
typedef struct PeerFrame {
    uint8_t opcode;
    uint32_t dqpn;                  /* set by the row: its QP's number */
    uint32_t psn;
    bool ackreq;
    uint16_t pkey;                  /* 0: 0xffff */
    uint16_t vlan;                  /* 0: untagged */
    const uint8_t *sgid;            /* NULL: A's GID */
    const uint8_t *dgid;            /* NULL: B's GID 0 */
    const uint8_t *dmac;            /* NULL: B's MAC */
    uint64_t va;                    /* RETH, AtomicETH: offset in b->mem */
    uint32_t rkey;                  /* 0: B's DMA MR */
    uint32_t dma_len;
    uint64_t swap_add, compare;
    uint32_t paylen;                /* payload: paylen bytes of 0x5a */
} PeerFrame;

/* What B answered: the BTH, the AETH, an atomic's original value. */
typedef struct PeerReply {
    uint8_t opcode;
    uint32_t dqpn;
    uint32_t psn;
    uint8_t syndrome;               /* AETH */
    uint64_t orig;
    uint32_t paylen;
} PeerReply;

/* CRC-32 of IEEE 802.3, bit by bit (reflected, register complemented). */
static uint32_t peer_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
        }
    }
    return ~crc;
}

/*
 * The ICRC of a RoCE v2 IPv4 frame (IB annex A17.3.3): over 8 bytes of
 * ones for the missing LRH, then the IP datagram with the fields a router
 * may change (TOS, TTL, header checksum, UDP checksum, the BTH's reserved
 * byte 4) set to ones; stored least significant byte first.
 */
static uint32_t peer_icrc(const uint8_t *ip, size_t len)
{
    static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff,
                                    0xff, 0xff, 0xff, 0xff };
    g_autofree uint8_t *m = g_memdup2(ip, len);

    m[1] = 0xff;
    m[8] = 0xff;
    m[10] = m[11] = 0xff;
    m[26] = m[27] = 0xff;
    m[32] = 0xff;
    return peer_crc32(peer_crc32(0, lrh, 8), m, len);
}

/* Which extension headers a request opcode carries (IB table 38). */
static void peer_ext(uint8_t op, bool *reth, bool *imm, bool *atomic)
{
    *reth = op == 0x06 || op == 0x0a || op == 0x0b || op == 0x0c;
    *imm = op == 0x03 || op == 0x05 || op == 0x09 || op == 0x0b;
    *atomic = op == 0x13 || op == 0x14;
}

/* Build @pf as an Ethernet frame into @f; returns its length. */
static size_t peer_build(Peer *p, const PeerFrame *pf, uint8_t *f)
{
    const uint8_t *sgid = pf->sgid ? pf->sgid : gid_a;
    const uint8_t *dgid = pf->dgid ? pf->dgid : gid_b;
    uint32_t rkey = pf->rkey ? pf->rkey : p->b->lkey;
    uint64_t va = p->b->mem + pf->va;
    size_t eth = pf->vlan ? 18 : 14;
    uint8_t *ip = f + eth, *udp = ip + 20, *bth = udp + 8, *h = bth + 12;
    uint8_t pad = -pf->paylen & 3;
    bool reth, imm, atomic;
    uint32_t sum = 0, icrc;
    size_t iplen;

    memcpy(f, pf->dmac ? pf->dmac : mac_b, 6);
    memcpy(f + 6, mac_a, 6);
    if (pf->vlan) {
        stw_be_p(f + 12, 0x8100);
        stw_be_p(f + 14, pf->vlan);
    }
    stw_be_p(f + eth - 2, 0x0800);
    peer_ext(pf->opcode, &reth, &imm, &atomic);
    if (reth) {
        stq_be_p(h, va);
        stl_be_p(h + 8, rkey);
        stl_be_p(h + 12, pf->dma_len);
        h += 16;
    }
    if (atomic) {
        stq_be_p(h, va);
        stl_be_p(h + 8, rkey);
        stq_be_p(h + 12, pf->swap_add);
        stq_be_p(h + 20, pf->compare);
        h += 28;
    }
    if (imm) {
        stl_be_p(h, 0x1a2b3c4d);
        h += 4;
    }
    memset(h, 0x5a, pf->paylen);
    memset(h + pf->paylen, 0, pad);
    h += pf->paylen + pad;
    iplen = h - ip + 4;
    /* IPv4, no options, DF; UDP to 4791 without a checksum */
    ip[0] = 0x45;
    ip[1] = 0;
    stw_be_p(ip + 2, iplen);
    stw_be_p(ip + 4, p->ip_id++);
    stw_be_p(ip + 6, 0x4000);
    ip[8] = 64;
    ip[9] = 17;
    stw_be_p(ip + 10, 0);
    memcpy(ip + 12, sgid + 12, 4);
    memcpy(ip + 16, dgid + 12, 4);
    for (int i = 0; i < 20; i += 2) {
        sum += lduw_be_p(ip + i);
    }
    sum = (sum & 0xffff) + (sum >> 16);
    stw_be_p(ip + 10, ~(sum + (sum >> 16)));
    stw_be_p(udp, 0xc011);
    stw_be_p(udp + 2, 4791);
    stw_be_p(udp + 4, iplen - 20);
    stw_be_p(udp + 6, 0);
    /* BTH: opcode, pad count, P_Key, dest QP, AckReq and PSN */
    bth[0] = pf->opcode;
    bth[1] = pad << 4;
    stw_be_p(bth + 2, pf->pkey ? pf->pkey : 0xffff);
    stl_be_p(bth + 4, pf->dqpn & 0xffffff);
    stl_be_p(bth + 8, (pf->ackreq ? 0x80000000u : 0) | (pf->psn & 0xffffff));
    icrc = peer_icrc(ip, iplen - 4);
    stl_le_p(h, icrc);
    return eth + iplen;
}

static void peer_send(Peer *p, const PeerFrame *pf)
{
    uint8_t f[2048];

    send_to(p->port_b, f, peer_build(p, pf, f));
}

/* The next frame from B (false after @ms without one). */
static bool peer_recv_within(Peer *p, PeerReply *r, int ms)
{
    uint8_t f[10000];
    struct pollfd pfd = { .fd = p->fd, .events = POLLIN };
    ssize_t len;
    const uint8_t *bth = f + 14 + 20 + 8;

    for (;;) {
        if (poll(&pfd, 1, ms) <= 0) {
            return false;
        }
        len = recv(p->fd, f, sizeof(f), 0);
        if (len >= 14 + 20 + 8 + 12 + 4 && lduw_be_p(f + 12) == 0x0800 &&
            lduw_be_p(f + 14 + 20 + 2) == 4791) {
            break;
        }
    }
    memset(r, 0, sizeof(*r));
    r->opcode = bth[0];
    r->dqpn = ldl_be_p(bth + 4) & 0xffffff;
    r->psn = ldl_be_p(bth + 8) & 0xffffff;
    r->paylen = len - (bth - f) - 12 - 4 - ((bth[1] >> 4) & 3);
    if ((r->opcode >= 0x0d && r->opcode <= 0x12 && r->opcode != 0x0e)) {
        r->syndrome = bth[12];          /* READ FIRST/LAST/ONLY, ACKs */
        r->paylen -= 4;
    }
    if (r->opcode == 0x12) {
        r->orig = ldq_be_p(bth + 16);
        r->paylen -= 8;
    }
    return true;
}

/* The next frame from B (false after 10 s without one). */
static bool peer_recv(Peer *p, PeerReply *r)
{
    return peer_recv_within(p, r, 10000);
}

/*
 * Every answer B gives before it has taken all that was sent so far:
 * the peer asks the probe QP for an ACK (a duplicate SEND with AckReq,
 * executed by no one) and collects what comes before that ACK.  B takes
 * the link's frames in order, so whatever an earlier frame made B send
 * at once is in @out (at most @max of them); returns how many.
 */
static int peer_sync(Peer *p, PeerReply *out, int max)
{
    PeerFrame probe = { .opcode = 0x04, .dqpn = p->probe->qpn,
                        .psn = PEER_EPSN - 1, .ackreq = true };
    PeerReply r;
    int n = 0;

    peer_send(p, &probe);
    while (peer_recv(p, &r)) {
        if (r.dqpn == PEER_PROBE_QPN) {
            return n;
        }
        if (n < max) {
            out[n] = r;
        }
        n++;
    }
    g_test_message("no ACK from the probe QP");
    g_test_fail();
    return n;
}

/* A QP of B connected across the link to A's QP @peer_qpn, rights @access */
static PvQp *peer_qp(Peer *p, uint32_t peer_qpn, uint32_t access)
{
    QpSpec s = dp_spec(p->b, PVRDMA_QPT_RC, p->cq, p->cq);
    PvQp *qp = dp_qp(p->b, &s, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    RcPath path = { .dgid = gid_a, .dmac = mac_a, .timeout = 14,
                    .retry_cnt = 7 };

    rc_connect_path(p->b, qp, peer_qpn, access, 12, 7, &path);
    return qp;
}

/* B, with @more on its command line, and the peer's socket. */
static Peer peer_up_args(const char *more)
{
    Peer p = { 0 };
    g_autofree char *nic = link_nic(mac_b);
    g_autofree char *netdev = NULL;
    g_autofree char *extra = NULL;
    Pv *pv;
    int port;

    p.fd = udp_socket(&port);
    p.port_b = free_udp_port();
    netdev = link_netdev(p.port_b, port);
    extra = g_strconcat(netdev, more, NULL);
    pv = pv_start_nic(nic, extra);
    pv_load(pv);
    p.b = dp_new_gids(pv, gid_b, gid_b1);
    p.cq = dp_cq(p.b, 1024);
    p.probe = peer_qp(&p, PEER_PROBE_QPN, ACC_ALL);
    return p;
}

static Peer peer_up(void)
{
    return peer_up_args("");
}

static void peer_down(Peer *p)
{
    pv_cq_free(p->cq);
    dp_free(p->b);
    close(p->fd);
}

/* What a row of the responder table expects B to answer. */
enum { OUT_NONE, OUT_ACK, OUT_NAK, OUT_READ, OUT_ATOMIC };

#define SEND_FIRST      0x00
#define SEND_MIDDLE     0x01
#define SEND_LAST       0x02
#define SEND_ONLY       0x04
#define WRITE_FIRST     0x06
#define WRITE_MIDDLE    0x07
#define WRITE_LAST      0x08
#define WRITE_ONLY      0x0a
#define READ_REQ        0x0c
#define FETCH_ADD       0x14
#define UD_SEND_ONLY    0x64

#define NAK_SEQ         0x60
#define NAK_INV         0x61
#define NAK_ACCESS      0x62
#define RNR_NAK         0x20

#define EPSN            PEER_EPSN
#define BAD_RKEY        0xdeadbe00u

typedef struct RespRow {
    const char *what;
    const char *spec;           /* the rule, as IB and rxe's source name it */
    uint32_t access;            /* the QP's remote rights; 0: all */
    uint32_t recv;              /* a receive WQE of this many bytes */
    PeerFrame setup[2];         /* sent first, answers not checked */
    PeerFrame f;                /* the frame under test */
    int out;
    uint8_t syndrome;           /* OUT_NAK: the AETH syndrome */
    uint32_t psn;               /* of the (first) answer */
    int nresp;                  /* OUT_READ: READ responses */
    bool err;                   /* the QP ends in ERR, else RTS */
} RespRow;

static const uint8_t gid_x[16] = { [10] = 0xff, 0xff, 10, 0, 3, 9 };
static const uint8_t mac_x[6] = { 0x52, 0x54, 0x00, 0x00, 0x03, 0x09 };

/*
 * IB's RC responder, check by check, against a scripted peer; each row
 * on a QP of its own.  The outcome of each row is what Linux rxe's
 * responder (drivers/infiniband/sw/rxe/rxe_resp.c, Linux 6.1 and 6.12)
 * gives, but where the row says otherwise.  "class B/C/D" are the
 * responder error classes of IB chapter 9 as rxe's source labels them;
 * C9-nn are the compliance statements it cites.
 */
static const RespRow resp_rows[] = {
    /* PSN (class B: sequence error; class D: duplicates) */
    { "PSN ahead: NAK sequence error at the expected PSN",
      "class B, PSN sequence error", .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN + 5, .ackreq = true, .paylen = 8 },
      OUT_NAK, NAK_SEQ, EPSN },
    { "PSN ahead again: the NAK is not repeated",
      "class B, one NAK until healed", .recv = 64,
      .setup = { { SEND_ONLY, .psn = EPSN + 5, .ackreq = true } },
      .f = { SEND_ONLY, .psn = EPSN + 6, .ackreq = true }, OUT_NONE },
    { "duplicate SEND with AckReq: ACK, not executed again",
      "C9-105", .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN - 1, .ackreq = true, .paylen = 8 },
      OUT_ACK, 0, EPSN - 1 },
    { "duplicate SEND without AckReq: ACK all the same",
      "C9-105", .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN - 1, .paylen = 8 }, OUT_ACK, 0,
      EPSN - 1 },
    { "duplicate RDMA WRITE: ACK, not executed again", "C9-105",
      .f = { WRITE_ONLY, .psn = EPSN - 1, .ackreq = true, .va = 0x100,
             .dma_len = 16, .paylen = 16 }, OUT_ACK, 0, EPSN - 1 },
    { "duplicate READ of no resource, any rkey: dropped (H1)",
      "class D, duplicate without a resource",
      .f = { READ_REQ, .psn = EPSN - 1, .rkey = BAD_RKEY, .dma_len = 64 },
      OUT_NONE },
    { "duplicate READ of no resource, valid rkey: dropped, nothing read (H1)",
      "class D, duplicate without a resource",
      .f = { READ_REQ, .psn = EPSN - 1, .dma_len = 1 << 20 }, OUT_NONE },
    { "PSN half the space away is a duplicate: dropped (H1)",
      "class D, duplicate without a resource",
      .f = { READ_REQ, .psn = EPSN + 0x800000, .rkey = BAD_RKEY,
             .dma_len = 64 }, OUT_NONE },
    { "duplicate READ, the same request: answered again",
      "class D, duplicate of a resource",
      .setup = { { READ_REQ, .psn = EPSN, .dma_len = 2048 } },
      .f = { READ_REQ, .psn = EPSN, .dma_len = 2048 },
      OUT_READ, 0, EPSN, 2 },
    { "duplicate READ, its tail from a later PSN: answered again",
      "class D, duplicate of a resource",
      .setup = { { READ_REQ, .psn = EPSN, .dma_len = 3072 } },
      .f = { READ_REQ, .psn = EPSN + 1, .va = 1024, .dma_len = 2048 },
      OUT_READ, 0, EPSN + 1, 2 },
    { "duplicate READ at its PSN, another address: dropped",
      "class D, not a part of the resource",
      .setup = { { READ_REQ, .psn = EPSN, .dma_len = 2048 } },
      .f = { READ_REQ, .psn = EPSN, .va = 8, .dma_len = 2040 }, OUT_NONE },
    { "duplicate READ longer than the resource: dropped",
      "class D, not a part of the resource",
      .setup = { { READ_REQ, .psn = EPSN, .dma_len = 1024 } },
      .f = { READ_REQ, .psn = EPSN, .dma_len = 4096 }, OUT_NONE },
    { "duplicate READ, another rkey: dropped",
      "class D, not a part of the resource",
      .setup = { { READ_REQ, .psn = EPSN, .dma_len = 1024 } },
      .f = { READ_REQ, .psn = EPSN, .rkey = BAD_RKEY, .dma_len = 1024 },
      OUT_NONE },
    { "duplicate atomic: the result it had, not executed again",
      "class D, duplicate of a resource",
      .setup = { { FETCH_ADD, .psn = EPSN, .va = 0x200, .swap_add = 1 } },
      .f = { FETCH_ADD, .psn = EPSN, .va = 0x200, .swap_add = 1 },
      OUT_ATOMIC, 0, EPSN },
    { "duplicate atomic never executed: dropped",
      "class D, duplicate without a resource",
      .f = { FETCH_ADD, .psn = EPSN - 1, .va = 0x200, .swap_add = 1 },
      OUT_NONE },
    /* Opcode sequence and validity (class C: invalid request) */
    { "SEND_MIDDLE with no SEND begun", "class C, opcode sequence",
      .recv = 4096,
      .f = { SEND_MIDDLE, .psn = EPSN, .paylen = 1024 }, OUT_NAK, NAK_INV,
      EPSN, .err = true },
    { "SEND_FIRST inside an RDMA WRITE", "class C, opcode sequence",
      .recv = 4096,
      .setup = { { WRITE_FIRST, .psn = EPSN, .dma_len = 2048,
                   .paylen = 1024 } },
      .f = { SEND_FIRST, .psn = EPSN + 1, .paylen = 1024 }, OUT_NAK,
      NAK_INV, EPSN + 1, .err = true },
    { "WRITE_FIRST inside a SEND", "class C, opcode sequence",
      .recv = 4096,
      .setup = { { SEND_FIRST, .psn = EPSN, .paylen = 1024 } },
      .f = { WRITE_FIRST, .psn = EPSN + 1, .dma_len = 2048, .paylen = 1024 },
      OUT_NAK, NAK_INV, EPSN + 1, .err = true },
    { "a UD opcode to an RC QP: dropped", "transport of another QP type",
      .recv = 64,
      .f = { UD_SEND_ONLY, .psn = EPSN, .ackreq = true, .paylen = 16 },
      OUT_NONE },
    { "a reserved RC opcode: dropped", "no such opcode",
      .f = { 0x1f, .psn = EPSN, .ackreq = true }, OUT_NONE },
    { "WRITE to a QP without remote write", "class C, unsupported",
      .access = PVRDMA_ACCESS_REMOTE_READ,
      .f = { WRITE_ONLY, .psn = EPSN, .ackreq = true, .dma_len = 16,
             .paylen = 16 }, OUT_NAK, NAK_INV, EPSN, .err = true },
    { "READ from a QP without remote read", "class C, unsupported",
      .access = PVRDMA_ACCESS_REMOTE_WRITE,
      .f = { READ_REQ, .psn = EPSN, .dma_len = 16 }, OUT_NAK, NAK_INV,
      EPSN, .err = true },
    { "atomic on a QP without remote atomics", "class C, unsupported",
      .access = PVRDMA_ACCESS_REMOTE_WRITE,
      .f = { FETCH_ADD, .psn = EPSN, .va = 0x200, .swap_add = 1 }, OUT_NAK,
      NAK_INV, EPSN, .err = true },
    /* Lengths (class C: invalid request; C9-92, C9-94) */
    { "WRITE_ONLY shorter than its RETH length", "class C, length",
      .f = { WRITE_ONLY, .psn = EPSN, .ackreq = true, .dma_len = 64,
             .paylen = 32 }, OUT_NAK, NAK_INV, EPSN, .err = true },
    { "WRITE_ONLY with data and a RETH length of 0", "class C, length",
      .f = { WRITE_ONLY, .psn = EPSN, .ackreq = true, .dma_len = 0,
             .paylen = 4 }, OUT_NAK, NAK_INV, EPSN, .err = true },
    { "WRITE_FIRST shorter than the path MTU", "C9-92 (first: the MTU)",
      .f = { WRITE_FIRST, .psn = EPSN, .ackreq = true, .dma_len = 2048,
             .paylen = 512 }, OUT_NAK, NAK_INV, EPSN, .err = true },
    { "WRITE_MIDDLE shorter than the path MTU", "C9-92 (middle: the MTU)",
      .setup = { { WRITE_FIRST, .psn = EPSN, .dma_len = 3072,
                   .paylen = 1024 } },
      .f = { WRITE_MIDDLE, .psn = EPSN + 1, .ackreq = true, .paylen = 512 },
      OUT_NAK, NAK_INV, EPSN + 1, .err = true },
    { "WRITE_LAST short of what remains", "class C, length",
      .setup = { { WRITE_FIRST, .psn = EPSN, .dma_len = 2048,
                   .paylen = 1024 } },
      .f = { WRITE_LAST, .psn = EPSN + 1, .ackreq = true, .paylen = 512 },
      OUT_NAK, NAK_INV, EPSN + 1, .err = true },
    { "SEND_ONLY longer than the path MTU", "C9-94 (only: at most the MTU)",
      .recv = 4096,
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .paylen = 1028 },
      OUT_NAK, NAK_INV, EPSN, .err = true },
    { "SEND_FIRST shorter than the path MTU", "C9-92 (first: the MTU)",
      .recv = 4096,
      .f = { SEND_FIRST, .psn = EPSN, .ackreq = true, .paylen = 512 },
      OUT_NAK, NAK_INV, EPSN, .err = true },
    { "SEND_LAST with no data", "C9-94 (last: 1 to the MTU)",
      .recv = 4096,
      .setup = { { SEND_FIRST, .psn = EPSN, .paylen = 1024 } },
      .f = { SEND_LAST, .psn = EPSN + 1, .ackreq = true }, OUT_NAK, NAK_INV,
      EPSN + 1, .err = true },
    { "SEND longer than the receive buffer", "class C, length "
      "(rxe: NAK remote operational error)", .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .paylen = 128 },
      OUT_NAK, NAK_INV, EPSN, .err = true },
    /* Keys, rights, range (class C: remote access error) */
    { "WRITE under an rkey of no MR", "class C, rkey",
      .f = { WRITE_ONLY, .psn = EPSN, .ackreq = true, .rkey = BAD_RKEY,
             .dma_len = 16, .paylen = 16 }, OUT_NAK, NAK_ACCESS, EPSN,
      .err = true },
    { "READ under an rkey of no MR", "class C, rkey",
      .f = { READ_REQ, .psn = EPSN, .rkey = BAD_RKEY, .dma_len = 16 },
      OUT_NAK, NAK_ACCESS, EPSN, .err = true },
    { "WRITE outside guest RAM", "class C, range",
      .f = { WRITE_ONLY, .psn = EPSN, .ackreq = true, .va = 1ull << 40,
             .dma_len = 16, .paylen = 16 }, OUT_NAK, NAK_ACCESS, EPSN,
      .err = true },
    { "atomic not 8-byte aligned", "9.4.5 (class C, invalid request)",
      .f = { FETCH_ADD, .psn = EPSN, .va = 0x204, .swap_add = 1 }, OUT_NAK,
      NAK_INV, EPSN, .err = true },
    { "zero-length WRITE checks no key", "C9-88",
      .f = { WRITE_ONLY, .psn = EPSN, .ackreq = true, .rkey = BAD_RKEY },
      OUT_ACK, 0, EPSN },
    { "zero-length READ checks no key: one empty response", "C9-88",
      .f = { READ_REQ, .psn = EPSN, .rkey = BAD_RKEY }, OUT_READ, 0, EPSN,
      1 },
    /* Receive queue (class B: RNR) */
    { "SEND with no receive WQE: RNR NAK", "class B, RNR",
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .paylen = 8 }, OUT_NAK,
      RNR_NAK | 12, EPSN },
    /* Who may talk to the QP (rxe: check_addr, check_keys) */
    { "from one of B's own GIDs: dropped (M1)", "not its peer",
      .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .sgid = gid_b,
             .paylen = 8 }, OUT_NONE },
    { "from a GID not its peer's: dropped", "not its peer", .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .sgid = gid_x,
             .paylen = 8 }, OUT_NONE },
    { "to B's other GID than the QP's: dropped (L6)", "not its GID",
      .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .dgid = gid_b1,
             .paylen = 8 }, OUT_NONE },
    { "to another MAC: not the port's (L6)", "not its MAC", .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .dmac = mac_x,
             .paylen = 8 }, OUT_NONE },
    { "on VLAN 5: not the port's (L6)", "not its VLAN", .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .vlan = 5,
             .paylen = 8 }, OUT_NONE },
    { "another partition's P_Key: dropped (L6)", "P_Key mismatch",
      .recv = 64,
      .f = { SEND_ONLY, .psn = EPSN, .ackreq = true, .pkey = 0x1234,
             .paylen = 8 }, OUT_NONE },
    /*
     * Last: a device that took it would answer it with 2 GiB of READ
     * responses, which would crowd out the answers of the rows after it.
     */
    { "READ longer than max_msg_sz (2 GiB) (L5)", "class C, length",
      .f = { READ_REQ, .psn = EPSN, .dma_len = 0x80000001u }, OUT_NAK,
      NAK_INV, EPSN, .err = true },
};

/*
 * Frames from B to A's QP @peer_qpn, after everything sent was taken.
 * Each row talks to a QP of A of its own: what an earlier row's QP still
 * sends is not this row's answer.
 */
static int resp_row_answers(Peer *p, uint32_t peer_qpn, PeerReply *out,
                            int max)
{
    PeerReply r[64];
    int n = 0;

    /* Twice: a READ's later responses leave from B's bottom half. */
    for (int pass = 0; pass < 2; pass++) {
        int got = peer_sync(p, r, ARRAY_SIZE(r));

        for (int i = 0; i < MIN(got, (int)ARRAY_SIZE(r)); i++) {
            if (r[i].dqpn == peer_qpn && n < max) {
                out[n++] = r[i];
            }
        }
    }
    return n;
}

static bool resp_row_check(Peer *p, const RespRow *row, PvQp *qp,
                           const PeerReply *a, int n, uint64_t setup_orig)
{
    uint32_t st = qp_state(p->b, qp);
    bool ok = st == (row->err ? PVRDMA_QPS_ERR : PVRDMA_QPS_RTS);

    switch (row->out) {
    case OUT_NONE:
        ok &= n == 0;
        break;
    case OUT_ACK:
    case OUT_NAK:
        ok &= n == 1 && a[0].opcode == 0x11 && a[0].psn == row->psn &&
              (row->out == OUT_ACK ? (a[0].syndrome & 0x60) == 0 :
               a[0].syndrome == row->syndrome);
        break;
    case OUT_READ:
        ok &= n == row->nresp;
        for (int i = 0; ok && i < n; i++) {
            ok &= a[i].opcode >= 0x0d && a[i].opcode <= 0x10 &&
                  a[i].psn == ((row->psn + i) & 0xffffff);
        }
        break;
    case OUT_ATOMIC:
        ok &= n == 1 && a[0].opcode == 0x12 && a[0].psn == row->psn &&
              a[0].orig == setup_orig;
        break;
    }
    if (!ok) {
        g_test_message("  answered %d frame(s), QP state %u:", n, st);
        for (int i = 0; i < n; i++) {
            g_test_message("    opcode 0x%02x psn 0x%06x syndrome 0x%02x "
                           "payload %u", a[i].opcode, a[i].psn,
                           a[i].syndrome, a[i].paylen);
        }
    }
    return ok;
}

/* Row @i of the table, on a new QP of B: true if B answered as it says. */
static bool resp_row_run(Peer *p, size_t i)
{
    const RespRow *row = &resp_rows[i];
    uint32_t peer_qpn = PEER_QPN + 0x100 + i;
    PvQp *qp = peer_qp(p, peer_qpn, row->access ? row->access : ACC_ALL);
    PeerReply a[64], s[8];
    PeerFrame f;
    uint64_t setup_orig = 0;
    bool ok;
    int n;

    /* B's memory the frames use: READs read it, atomics add to it. */
    fill(p->b, p->b->mem, 0x4000, 0x30 + i);
    qtest_writeq(p->b->pv->qts, p->b->mem + 0x200, 0x10);
    if (row->recv) {
        post_recv1(p->b, qp, 0xb000 + i, p->b->mem + 0x8000, row->recv);
    }
    for (int k = 0; k < 2 && (row->setup[k].opcode || row->setup[k].psn);
         k++) {
        f = row->setup[k];
        f.dqpn = qp->qpn;
        peer_send(p, &f);
    }
    n = resp_row_answers(p, peer_qpn, s, ARRAY_SIZE(s));
    if (n && s[n - 1].opcode == 0x12) {
        setup_orig = s[n - 1].orig;
    }
    f = row->f;
    f.dqpn = qp->qpn;
    peer_send(p, &f);
    n = resp_row_answers(p, peer_qpn, a, ARRAY_SIZE(a));
    ok = resp_row_check(p, row, qp, a, n, setup_orig);
    if (ok && row->out == OUT_ATOMIC &&
        qtest_readq(p->b->pv->qts, p->b->mem + 0x200) != 0x11) {
        g_test_message("  the atomic ran twice");
        ok = false;
    }
    g_test_message("row %zu %s: %s [%s]", i, ok ? "ok" : "FAILED", row->what,
                   row->spec);
    return ok;
}

/* Run the rows of the table whose description names @tag. */
static void resp_rows_tagged(const char *tag)
{
    Peer p = peer_up();
    int failed = 0, run = 0;

    for (size_t i = 0; i < ARRAY_SIZE(resp_rows); i++) {
        if (!tag || strstr(resp_rows[i].what, tag)) {
            failed += !resp_row_run(&p, i);
            run++;
        }
    }
    g_test_message("%d rows, %d failed", run, failed);
    g_assert_cmpint(run, >, 0);
    g_assert_cmpint(failed, ==, 0);
    peer_down(&p);
}

static void test_wire_responder_table(void)
{
    resp_rows_tagged(NULL);
}

/* AUDIT-3 H1: a spoofed duplicate READ neither kills nor starts a READ. */
/*
 * READ responses B sends to the peer's QP @peer_qpn until none has come
 * for half a second (B's virtual clock standing still).
 */
static int peer_read_responses(Peer *p, uint32_t peer_qpn)
{
    PeerReply r;
    int n = 0;

    while (peer_recv_within(p, &r, 500)) {
        n += r.dqpn == peer_qpn && r.opcode >= 0x0d && r.opcode <= 0x10;
    }
    return n;
}

/*
 * A requester that asks a READ again got a gap in its answer: B answers
 * the next ones in bursts of half its window (32 packets) with a pause
 * on its virtual clock after each.  The first READ, 64 packets, goes
 * out at once; its tail asked again (44 packets) stops after 32 until
 * B's clock moves (a first READ of 100 packets lost 8 in this test's own
 * socket buffer of 208 KiB: the very overrun this is about).  Regression
 * test: the responder answered any READ in one burst, and over -netdev
 * dgram to a busy Linux rxe guest a READ longer than its socket buffer
 * lost its tail every time, each loss spending one of rxe's retries
 * (issue 24; NVMe over RDMA with an rxe target ran out of them).
 */
static void test_wire_read_answers_paced(void)
{
    Peer p = peer_up();
    uint32_t peer_qpn = PEER_QPN + 0x80;
    PvQp *qp = peer_qp(&p, peer_qpn, ACC_ALL);
    PeerFrame rd = { .opcode = 0x0c, .dqpn = qp->qpn, .psn = PEER_EPSN,
                     .dma_len = 64 * 1024 };
    int n[3];

    fill(p.b, p.b->mem, 64 * 1024, 0x41);
    peer_send(&p, &rd);
    n[0] = peer_read_responses(&p, peer_qpn);
    rd.psn = PEER_EPSN + 20;            /* its tail, asked again */
    rd.va = 20 * 1024;
    rd.dma_len = 44 * 1024;
    peer_send(&p, &rd);
    n[1] = peer_read_responses(&p, peer_qpn);
    qtest_clock_step(p.b->pv->qts, 1000 * 1000);
    n[2] = peer_read_responses(&p, peer_qpn);
    g_test_message("READ of 64 packets: %d responses; its last 44 asked "
                   "again: %d, then %d after B's clock moved 1 ms",
                   n[0], n[1], n[2]);
    g_assert_cmpint(n[0], ==, 64);
    g_assert_cmpint(n[1], ==, 32);
    g_assert_cmpint(n[2], ==, 12);
    peer_down(&p);
}

/* Migrate the peer's B to a new QEMU, which sends to the peer's socket. */
static void peer_migrate(Peer *p)
{
    p->port_b = migrate_pv(p->b->pv, mac_b, p->fd);
}

/*
 * The responder's rings migrate with its QP: B executes two atomics and
 * a READ of the peer's, moves to a new QEMU, and answers the peer's
 * duplicates of them from what it kept (IB 9.7.5.1.1, 9.7.5.1.2): each
 * atomic's original value again, the counter not added to a second
 * time, the READ's responses again.  The atomic results and READ
 * resources travel as arrays the QP's record points to (only those
 * kept), so this checks that they arrive where the responder looks.
 */
static void test_wire_migration_responder_rings(void)
{
    Peer p = peer_up();
    uint32_t peer_qpn = PEER_QPN + 0x40;
    PvQp *qp = peer_qp(&p, peer_qpn, ACC_ALL);
    PeerFrame f[3] = {
        { FETCH_ADD, .psn = EPSN, .va = 0x200, .swap_add = 1 },
        { FETCH_ADD, .psn = EPSN + 1, .va = 0x200, .swap_add = 0x100 },
        { READ_REQ, .psn = EPSN + 2, .va = 0x1000, .dma_len = 3000 },
    };
    PeerReply a[16];
    int n;

    qtest_writeq(p.b->pv->qts, p.b->mem + 0x200, 0x10);
    fill(p.b, p.b->mem + 0x1000, 3000, 0x6c);
    for (int round = 0; round < 2; round++) {
        if (round) {
            peer_migrate(&p);
        }
        for (int i = 0; i < 3; i++) {
            f[i].dqpn = qp->qpn;
            peer_send(&p, &f[i]);
        }
        n = resp_row_answers(&p, peer_qpn, a, ARRAY_SIZE(a));
        for (int i = 0; i < n; i++) {
            g_test_message("%s: opcode 0x%02x psn 0x%06x orig 0x%" PRIx64
                           " payload %u", round ? "after migration" : "first",
                           a[i].opcode, a[i].psn, a[i].orig, a[i].paylen);
        }
        /* two atomic answers, then the READ's 3 responses (MTU 1024) */
        g_assert_cmpint(n, ==, 5);
        g_assert_cmpint(a[0].opcode, ==, 0x12);
        g_assert_cmpuint(a[0].psn, ==, EPSN);
        g_assert_cmphex(a[0].orig, ==, 0x10);
        g_assert_cmpint(a[1].opcode, ==, 0x12);
        g_assert_cmpuint(a[1].psn, ==, EPSN + 1);
        g_assert_cmphex(a[1].orig, ==, 0x11);
        for (int i = 2; i < 5; i++) {
            g_assert_cmpint(a[i].opcode, >=, 0x0d);
            g_assert_cmpint(a[i].opcode, <=, 0x10);
            g_assert_cmpuint(a[i].psn, ==, EPSN + i);
        }
        g_assert_cmpuint(a[2].paylen + a[3].paylen + a[4].paylen, ==, 3000);
        g_assert_cmphex(qtest_readq(p.b->pv->qts, p.b->mem + 0x200), ==,
                        0x111);
        g_assert_cmpuint(qp_state(p.b, qp), ==, PVRDMA_QPS_RTS);
    }
    g_assert_cmpuint(roce_stat(p.b, "duplicates"), >, 0);
    peer_down(&p);
}

static void test_wire_dup_read(void)
{
    resp_rows_tagged("(H1)");
}

/* AUDIT-3 L5: no message longer than max_msg_sz. */
static void test_wire_max_msg(void)
{
    resp_rows_tagged("(L5)");
}

/* AUDIT-3 L6: a frame reaches a QP only as a NIC would take it. */
static void test_wire_nic_acceptance(void)
{
    resp_rows_tagged("(L6)");
}

/*
 * AUDIT-3 M1 (a): a frame from the link, with B's own address as its
 * source, to a QP of B connected to another QP of B.  Before, the
 * address check passed (the source was the QP's peer's GID, B's own) and
 * the SEND landed in the receive buffer.
 */
static void test_wire_own_gid_spoof(void)
{
    Peer p = peer_up();
    QpSpec s = dp_spec(p.b, PVRDMA_QPT_RC, p.cq, p.cq);
    PvQp *x = dp_qp(p.b, &s, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    PvQp *y = dp_qp(p.b, &s, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    RcPath loop = { .dgid = gid_b, .dmac = mac_b, .timeout = 14,
                    .retry_cnt = 7 };
    PeerFrame f = { SEND_ONLY, .dqpn = y->qpn, .psn = EPSN, .ackreq = true,
                    .sgid = gid_b, .paylen = 32 };
    PvrdmaSge sg = sge(p.b->mem + 0x1000, 32, p.b->lkey);
    PeerReply r[8];

    rc_connect_path(p.b, x, y->qpn, ACC_ALL, 12, 7, &loop);
    rc_connect_path(p.b, y, x->qpn, ACC_ALL, 12, 7, &loop);
    post_recv1(p.b, y, 0xb1, p.b->mem, 64);
    fill(p.b, p.b->mem, 64, 0x01);
    peer_send(&p, &f);
    g_assert_cmpint(peer_sync(&p, r, ARRAY_SIZE(r)), ==, 0);
    expect_no_cqe(p.b, p.cq);
    check_fill(p.b, p.b->mem, 64, 0x01, 0);
    g_assert_cmpuint(qp_state(p.b, y), ==, PVRDMA_QPS_RTS);

    /* The pair itself works, and Y's receive takes X's data. */
    fill(p.b, p.b->mem + 0x1000, 32, 0x42);
    post_send(p.b, x, wqe(0xa1, PVRDMA_WR_SEND, PVRDMA_SEND_SIGNALED, 1),
              &sg, 1);
    /* One CQ: the receive completes before the ACK comes back. */
    expect_recv(p.b, p.cq, 0xb1, PVRDMA_WC_RECV, 32, y, x, 0, 0);
    expect_rc_success(p.b, p.cq, 0xa1, PVRDMA_WC_SEND, 32, x);
    check_fill(p.b, p.b->mem, 32, 0x42, 0);
    peer_down(&p);
}

/*
 * AUDIT-3 M1 (b): V, a QP of B, is connected across the link to A's QP
 * N; X, another QP of B (another process of the guest), has number N and
 * connects over the loopback to V.  Before, V took X's packets as its
 * peer's: X's RDMA WRITE landed in V's memory.  Now V takes only frames
 * from the link, and X's WR fails at once.
 */
static void test_wire_loopback_impersonation(void)
{
    Peer p = peer_up();
    QpSpec s = dp_spec(p.b, PVRDMA_QPT_RC, p.cq, p.cq);
    PvQp *x = dp_qp(p.b, &s, 0, PVRDMA_ACCESS_LOCAL_WRITE);
    PvQp *v = peer_qp(&p, x->qpn, ACC_ALL);
    RcPath loop = { .dgid = gid_b, .dmac = mac_b, .timeout = 14,
                    .retry_cnt = 7 };
    uint64_t victim = p.b->mem + 0x2000, src = p.b->mem + 0x3000;
    PvrdmaSge sg = sge(src, 64, p.b->lkey);
    PvrdmaCqe c;

    rc_connect_path(p.b, x, v->qpn, ACC_ALL, 12, 7, &loop);
    fill(p.b, victim, 64, 0x11);
    fill(p.b, src, 64, 0xee);
    post_send(p.b, x, wqe_rdma(0xa1, PVRDMA_WR_RDMA_WRITE,
                               PVRDMA_SEND_SIGNALED, 1, victim, p.b->lkey),
              &sg, 1);
    c = expect_cqe_slow(p.b, p.cq, 0xa1, PVRDMA_WC_RETRY_EXC_ERR, x);
    g_assert_cmpuint(c.status, !=, PVRDMA_WC_SUCCESS);
    check_fill(p.b, victim, 64, 0x11, 0);
    g_assert_cmpuint(qp_state(p.b, v), ==, PVRDMA_QPS_RTS);
    peer_down(&p);
}

/*
 * Frames in the pcap file at @path (filter-dump's).  The file is in the
 * byte order of the QEMU that wrote it, which its magic number tells.
 */
static uint32_t pcap_frames(const char *path)
{
    g_autofree char *buf = NULL;
    size_t len, off = 24;
    uint32_t n = 0;
    bool le;

    g_assert_true(g_file_get_contents(path, &buf, &len, NULL));
    if (len < off) {
        return 0;
    }
    le = ldl_le_p(buf) == 0xa1b2c3d4;
    while (off + 16 <= len) {
        off += 16 + (le ? ldl_le_p(buf + off + 8) : ldl_be_p(buf + off + 8));
        n += off <= len;
    }
    return n;
}

/*
 * AUDIT-3 L4: the engine stops with the VM.  B answers a long READ when
 * the VM stops; a filter on B's netdev, which sees frames before the net
 * layer holds a stopped VM's, counts what B sends.  Before, B went on
 * sending READ responses while stopped (the net queue hid them from the
 * link, not from the filter); now nothing leaves B until it runs again.
 */
static void test_wire_stopped_engine(void)
{
    g_autofree char *dump = g_strdup_printf("%s/pvrdma-stopped-%d.pcap",
                                            g_get_tmp_dir(), getpid());
    g_autofree char *more = g_strdup_printf(
        " -object filter-dump,id=dump0,netdev=n0,queue=rx,file=%s", dump);
    Peer p = peer_up_args(more);
    PvQp *qp = peer_qp(&p, PEER_QPN, ACC_ALL);
    PeerFrame f = { READ_REQ, .dqpn = qp->qpn, .psn = EPSN,
                    .dma_len = 32 << 20 };
    QTestState *qts = p.b->pv->qts;
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    uint32_t before, stopped, after;

    peer_send(&p, &f);
    while (pcap_frames(dump) < 2 && g_get_monotonic_time() < end) {
        g_usleep(1000);
    }
    qtest_qmp_assert_success(qts, "{ 'execute': 'stop' }");
    before = pcap_frames(dump);
    for (int i = 0; i < 20; i++) {
        main_loop_run(p.b);
        g_usleep(10 * 1000);
    }
    stopped = pcap_frames(dump);
    g_test_message("B sent %u frames of the READ before it stopped, %u "
                   "while stopped", before, stopped - before);
    g_assert_cmpuint(before, >=, 2);
    g_assert_cmpuint(stopped, ==, before);

    qtest_qmp_assert_success(qts, "{ 'execute': 'cont' }");
    while ((after = pcap_frames(dump)) == stopped &&
           g_get_monotonic_time() < end) {
        main_loop_run(p.b);
    }
    g_test_message("... and goes on when it runs again: %u", after);
    g_assert_cmpuint(after, >, stopped);
    peer_down(&p);
    unlink(dump);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_set_nonfatal_assertions();
    if (pv_ibverbs()) {
        g_test_message("the wire is the soft backend's: nothing to test");
        return g_test_run();
    }
    qtest_add_func("/pvrdma/wire/rc/send", test_wire_rc_send);
    qtest_add_func("/pvrdma/wire/rc/rdma", test_wire_rc_rdma);
    qtest_add_func("/pvrdma/wire/rc/rnr", test_wire_rc_rnr);
    qtest_add_func("/pvrdma/wire/ud/send", test_wire_ud);
    qtest_add_func("/pvrdma/wire/hostile-frames", test_wire_hostile_frames);
    qtest_add_func("/pvrdma/wire/rc/lossy", test_wire_lossy);
    qtest_add_func("/pvrdma/wire/migration", test_wire_migration);
    qtest_add_func("/pvrdma/wire/rc/several-wrs", test_wire_several_wrs);
    qtest_add_func("/pvrdma/wire/regression/window", test_wire_window);
    qtest_add_func("/pvrdma/wire/regression/device-window",
                   test_wire_device_window);
    qtest_add_func("/pvrdma/wire/tx-dropped-counted",
                   test_wire_tx_dropped_counted);
    qtest_add_func("/pvrdma/wire/regression/flow-label-wider-than-20-bits",
                   test_wire_flow_label_wider_than_20_bits);
    qtest_add_func("/pvrdma/wire/regression/duplicate-atomic-of-several",
                   test_wire_duplicate_atomic_of_several);
    qtest_add_func("/pvrdma/wire/regression/atomic-answer-is-progress",
                   test_wire_atomic_answer_is_progress);
    qtest_add_func("/pvrdma/wire/regression/ack-of-a-later-wr",
                   test_wire_ack_of_a_later_wr);
    qtest_add_func("/pvrdma/wire/regression/acks-many-qps",
                   test_wire_acks_many_qps);
    qtest_add_func("/pvrdma/wire/regression/acks-qps-take-turns",
                   test_wire_acks_qps_take_turns);
    qtest_add_func("/pvrdma/wire/regression/device-window-growing",
                   test_wire_device_window_growing);
    qtest_add_func("/pvrdma/wire/regression/read-answers-paced",
                   test_wire_read_answers_paced);
    qtest_add_func("/pvrdma/wire/regression/read-not-probed",
                   test_wire_read_not_probed);
    qtest_add_func("/pvrdma/wire/regression/tail-probe",
                   test_wire_tail_probe);
    qtest_add_data_func("/pvrdma/wire/regression/probe-two-packets",
                        &probe_late_ack, test_wire_probe);
    qtest_add_data_func("/pvrdma/wire/regression/probe-finds-lost-tail",
                        &probe_lost_tail, test_wire_probe);
    qtest_add_func("/pvrdma/wire/regression/go-back-counts-stale",
                   test_wire_go_back_counts_stale);
    qtest_add_func("/pvrdma/wire/regression/read-again-within-piece",
                   test_wire_read_again_within_piece);
    qtest_add_func("/pvrdma/wire/regression/stream-listener-nodelay",
                   test_wire_stream_nodelay);
    qtest_add_func("/pvrdma/wire/regression/stopped-vm-takes-no-frames",
                   test_wire_stopped_vm_takes_no_frames);
    qtest_add_func("/pvrdma/wire/migration/responder-rings",
                   test_wire_migration_responder_rings);
    qtest_add_func("/pvrdma/wire/responder-table",
                   test_wire_responder_table);
    qtest_add_func("/pvrdma/wire/regression/audit3-h1-duplicate-read",
                   test_wire_dup_read);
    qtest_add_func("/pvrdma/wire/regression/audit3-m1-own-gid-spoof",
                   test_wire_own_gid_spoof);
    qtest_add_func("/pvrdma/wire/regression/audit3-m1-loopback-impersonation",
                   test_wire_loopback_impersonation);
    qtest_add_func("/pvrdma/wire/regression/audit3-l4-stopped-engine",
                   test_wire_stopped_engine);
    qtest_add_func("/pvrdma/wire/regression/audit3-l5-max-msg",
                   test_wire_max_msg);
    qtest_add_func("/pvrdma/wire/regression/audit3-l6-nic-acceptance",
                   test_wire_nic_acceptance);
    return g_test_run();
}
