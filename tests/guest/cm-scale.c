/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * cm-scale: many RC connections through RDMA-CM between two hosts, each
 * moving a checked message (issue 24: "10,000 RC connections through
 * RDMA-CM connect, move data with content checks, and disconnect").
 * Compiled by tests/guest/build-guest.sh against librdmacm and
 * libibverbs; init's t_cm_scale runs it between two guests.
 *
 *   server# cm-scale -b ADDR [-p PORT] [-n N] [-s SIZE] [-t SECONDS]
 *   client# cm-scale -c ADDR [-p PORT] [-n N] [-s SIZE] [-w WINDOW]
 *                    [-H FILE] [-t SECONDS]
 *
 * The client opens N connections asynchronously on one event channel,
 * with at most WINDOW of them between rdma_resolve_addr() and
 * ESTABLISHED.  Each carries its index in the connect's private data.
 * On ESTABLISHED the client SENDs SIZE bytes of the connection's own
 * pattern; the server checks every byte against the index the request
 * named and answers with the inverted pattern, which the client checks.
 * Once every connection is established and checked, the client prints
 * "connected N in S s (R conn/s)"; with -H it then holds them all open
 * until FILE exists (so that a bandwidth test can run alongside), and
 * then disconnects them, WINDOW at a time.  The server exits once N
 * connections came and went.
 *
 * Resources are small so that ten thousand fit a small guest and the
 * driver's limits: one PD and one MR for all connections, QPs of one
 * send and one receive WR, and one CQ per 64 connections (vmw_pvrdma
 * and the device count CQs as they count QPs).  Completions and CM
 * events are waited for with poll(), not spun for: under TCG a spinning
 * process takes a vCPU from the kernel's CM.
 *
 * Every failure is printed with the connection's index and the CM event
 * or completion status; the exit status is 0 only if all N connections
 * connected, checked their data and disconnected.
 */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define CONNS_PER_CQ    64
#define CM_TIMEOUT_MS   5000
#define MAGIC           0x434d5343u     /* "CMSC" in the private data */
#define MAX_CONNS       1000000u
#define MAX_REPORTED    20              /* failures printed one by one */

enum ConnState {
    CONN_IDLE,          /* not started (client) or not requested (server) */
    CONN_RESOLVING,     /* address and route (client) */
    CONN_CONNECTING,    /* connect sent, or accept sent (server) */
    CONN_OPEN,          /* established */
    CONN_CLOSING,       /* disconnect sent */
    CONN_CLOSED,        /* disconnected, QP and id destroyed */
    CONN_FAILED,
};

typedef struct Conn {
    struct rdma_cm_id *id;
    uint32_t index;
    enum ConnState state;
    bool sent;          /* our SEND completed */
    bool checked;       /* the peer's message arrived and matched */
    bool bad;           /* a completion failed, or the data differed */
} Conn;

/* The private data of a connect: which connection this is. */
typedef struct ConnReq {
    uint32_t magic;
    uint32_t index;
} ConnReq;

static const char *side = "server";
static struct rdma_event_channel *channel;
static struct ibv_comp_channel *comp;
static struct ibv_context *verbs;
static struct ibv_pd *pd;
static struct ibv_mr *mr;
static struct ibv_cq **cqs;
static Conn *conns;
static uint8_t *sbuf, *rbuf;
static uint32_t nconns = 1000, window = 16;
static size_t msg_size = 64;
static unsigned failures;
/* counts of connections by what they did */
static uint32_t n_established, n_checked, n_sent, n_closed, n_inflight;
static double t_established;    /* of the last connection (client) */
static uint32_t n_qps;          /* QPs of ours that exist */

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A failure: printed while there are few, always counted. */
static void fail(const char *fmt, ...)
{
    va_list ap;

    if (++failures > MAX_REPORTED) {
        return;
    }
    va_start(ap, fmt);
    printf("%s: error: ", side);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
}

static void die(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    printf("%s: error: ", side);
    vprintf(fmt, ap);
    printf("\n%s: FAIL\n", side);
    va_end(ap);
    exit(1);
}

/*
 * Byte OFFSET of connection INDEX's message (DIR 0: the client's, 1: the
 * server's answer, every byte inverted): no two connections, and no two
 * places in one message, look alike, so a message delivered to the wrong
 * QP or at the wrong offset is caught.
 */
static uint8_t pattern_byte(uint32_t index, size_t offset, int dir)
{
    uint64_t x = (index + 1) * 0x9e3779b97f4a7c15ull + (offset >> 3) + 1;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (uint8_t)(x >> (8 * (offset & 7))) ^ (dir ? 0xff : 0);
}

static void fill(uint8_t *buf, uint32_t index, int dir)
{
    size_t i;

    for (i = 0; i < msg_size; i++) {
        buf[i] = pattern_byte(index, i, dir);
    }
}

/* Check connection INDEX's received message; print the first bad byte. */
static bool check(const uint8_t *buf, uint32_t index, int dir)
{
    size_t i, bad = 0, first = 0;

    for (i = 0; i < msg_size; i++) {
        if (buf[i] != pattern_byte(index, i, dir) && bad++ == 0) {
            first = i;
        }
    }
    if (bad) {
        fail("conn %u: %zu of %zu bytes differ, first at %zu: 0x%02x, "
             "want 0x%02x", index, bad, msg_size, first, buf[first],
             pattern_byte(index, first, dir));
    }
    return bad == 0;
}

/*
 * The device's PD, MR over both buffers and CQs, made once the first
 * cm_id knows its device (all connections are on one device: one
 * address).
 */
static void setup_verbs(struct ibv_context *ctx)
{
    uint32_t i, ncq = (nconns + CONNS_PER_CQ - 1) / CONNS_PER_CQ;

    if (verbs) {
        if (ctx != verbs) {
            die("a second device %s (the first: %s)",
                ibv_get_device_name(ctx->device),
                ibv_get_device_name(verbs->device));
        }
        return;
    }
    verbs = ctx;
    pd = ibv_alloc_pd(ctx);
    if (!pd) {
        die("ibv_alloc_pd: %s", strerror(errno));
    }
    mr = ibv_reg_mr(pd, sbuf, 2 * (size_t)nconns * msg_size,
                    IBV_ACCESS_LOCAL_WRITE);
    if (!mr) {
        die("ibv_reg_mr of %zu bytes: %s", 2 * (size_t)nconns * msg_size,
            strerror(errno));
    }
    comp = ibv_create_comp_channel(ctx);
    if (!comp) {
        die("ibv_create_comp_channel: %s", strerror(errno));
    }
    if (fcntl(comp->fd, F_SETFL, fcntl(comp->fd, F_GETFL) | O_NONBLOCK)) {
        die("fcntl: %s", strerror(errno));
    }
    cqs = calloc(ncq, sizeof(*cqs));
    if (!cqs) {
        die("out of memory");
    }
    for (i = 0; i < ncq; i++) {
        cqs[i] = ibv_create_cq(ctx, 2 * CONNS_PER_CQ, NULL, comp, 0);
        if (!cqs[i]) {
            die("ibv_create_cq %u of %u (%d CQEs): %s", i, ncq,
                2 * CONNS_PER_CQ, strerror(errno));
        }
        if (ibv_req_notify_cq(cqs[i], 0)) {
            die("ibv_req_notify_cq %u: %s", i, strerror(errno));
        }
    }
    printf("%s: device %s, %u CQs of %d entries, one MR of %zu bytes\n",
           side, ibv_get_device_name(ctx->device), ncq, 2 * CONNS_PER_CQ,
           2 * (size_t)nconns * msg_size);
}

/* wr_id: the connection's index and whether it is its receive */
static uint64_t wr_id(uint32_t index, bool recv)
{
    return (uint64_t)index << 1 | recv;
}

static bool post_recv(Conn *c)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t)(rbuf + (size_t)c->index * msg_size),
        .length = msg_size,
        .lkey = mr->lkey,
    };
    struct ibv_recv_wr wr = {
        .wr_id = wr_id(c->index, true), .sg_list = &sge, .num_sge = 1,
    };
    struct ibv_recv_wr *bad;
    int rc = ibv_post_recv(c->id->qp, &wr, &bad);

    if (rc) {
        fail("conn %u: ibv_post_recv: %s", c->index, strerror(rc));
    }
    return rc == 0;
}

static bool post_send(Conn *c, int dir)
{
    uint8_t *buf = sbuf + (size_t)c->index * msg_size;
    struct ibv_sge sge = {
        .addr = (uintptr_t)buf, .length = msg_size, .lkey = mr->lkey,
    };
    struct ibv_send_wr wr = {
        .wr_id = wr_id(c->index, false), .sg_list = &sge, .num_sge = 1,
        .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
    };
    struct ibv_send_wr *bad;
    int rc;

    fill(buf, c->index, dir);
    rc = ibv_post_send(c->id->qp, &wr, &bad);
    if (rc) {
        fail("conn %u: ibv_post_send: %s", c->index, strerror(rc));
    }
    return rc == 0;
}

static bool create_qp(Conn *c)
{
    struct ibv_cq *cq = cqs[c->index / CONNS_PER_CQ];
    struct ibv_qp_init_attr attr = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
        .cap = {
            .max_send_wr = 1, .max_recv_wr = 1,
            .max_send_sge = 1, .max_recv_sge = 1,
        },
    };

    if (rdma_create_qp(c->id, pd, &attr)) {
        fail("conn %u: rdma_create_qp (this process has %u QPs): %s",
             c->index, n_qps, strerror(errno));
        return false;
    }
    n_qps++;
    return post_recv(c);
}

static void conn_failed(Conn *c)
{
    if (c->state == CONN_RESOLVING || c->state == CONN_CONNECTING) {
        n_inflight--;
    } else if (c->state == CONN_OPEN) {
        n_established--;
    }
    c->state = CONN_FAILED;
}

/* Destroy a connection's QP and id (after its event was acknowledged). */
static void conn_destroy(Conn *c)
{
    if (!c->id) {
        return;
    }
    if (c->id->qp) {
        rdma_destroy_qp(c->id);
        n_qps--;
    }
    rdma_destroy_id(c->id);
    c->id = NULL;
}

/* A work completion: the SEND is done, or the peer's message arrived. */
static void handle_wc(const struct ibv_wc *wc)
{
    uint32_t index = wc->wr_id >> 1;
    bool recv = wc->wr_id & 1;
    Conn *c;

    if (index >= nconns) {
        fail("a completion with wr_id 0x%llx of no connection",
             (unsigned long long)wc->wr_id);
        return;
    }
    c = &conns[index];
    if (wc->status != IBV_WC_SUCCESS) {
        fail("conn %u: %s completion: %s (%d), vendor error 0x%x", index,
             recv ? "receive" : "send", ibv_wc_status_str(wc->status),
             wc->status, wc->vendor_err);
        c->bad = true;
        return;
    }
    if (!recv) {
        c->sent = true;
        n_sent++;
        return;
    }
    if (wc->byte_len != msg_size) {
        fail("conn %u: received %u bytes, want %zu", index, wc->byte_len,
             msg_size);
        c->bad = true;
        return;
    }
    /* the client checks the server's answer, the server the question */
    if (!check(rbuf + (size_t)index * msg_size, index, *side == 'c')) {
        c->bad = true;
        return;
    }
    c->checked = true;
    n_checked++;
    /* the server answers with the inverted pattern */
    if (*side == 's' && c->id) {
        post_send(c, 1);
    }
}

static void drain_cqs(void)
{
    struct ibv_cq *cq;
    struct ibv_wc wc[32];
    void *ctx;
    int n, i;

    if (!comp) {
        return;
    }
    while (ibv_get_cq_event(comp, &cq, &ctx) == 0) {
        ibv_ack_cq_events(cq, 1);
        if (ibv_req_notify_cq(cq, 0)) {
            die("ibv_req_notify_cq: %s", strerror(errno));
        }
        /* after the re-arm, so that nothing arrives unannounced */
        while ((n = ibv_poll_cq(cq, 32, wc)) > 0) {
            for (i = 0; i < n; i++) {
                handle_wc(&wc[i]);
            }
        }
        if (n < 0) {
            die("ibv_poll_cq: %d", n);
        }
    }
}

/* --- client --------------------------------------------------------------- */

static struct addrinfo *dst;
static uint32_t next_conn;
static bool launching = true;

static void client_start(Conn *c)
{
    c->index = next_conn;
    if (rdma_create_id(channel, &c->id, c, RDMA_PS_TCP)) {
        fail("conn %u: rdma_create_id: %s", c->index, strerror(errno));
        c->state = CONN_FAILED;
        launching = false;
        return;
    }
    c->state = CONN_RESOLVING;
    n_inflight++;
    if (rdma_resolve_addr(c->id, NULL, dst->ai_addr, CM_TIMEOUT_MS)) {
        fail("conn %u: rdma_resolve_addr: %s", c->index, strerror(errno));
        conn_failed(c);
        conn_destroy(c);
        launching = false;
    }
}

/* Keep WINDOW connections in flight until all N are started. */
static void client_launch(void)
{
    while (launching && next_conn < nconns && n_inflight < window) {
        client_start(&conns[next_conn]);
        next_conn++;
    }
}

static void client_connect(Conn *c)
{
    ConnReq req = { .magic = MAGIC, .index = c->index };
    struct rdma_conn_param param = {
        .private_data = &req, .private_data_len = sizeof(req),
        .retry_count = 7, .rnr_retry_count = 7,
    };

    setup_verbs(c->id->verbs);
    if (!create_qp(c)) {
        conn_failed(c);
        launching = false;
        return;
    }
    c->state = CONN_CONNECTING;
    if (rdma_connect(c->id, &param)) {
        fail("conn %u: rdma_connect: %s", c->index, strerror(errno));
        conn_failed(c);
        launching = false;
    }
}

/* "status N", and what a negative errno N means */
static const char *status_str(int status)
{
    static char buf[96];

    snprintf(buf, sizeof(buf), "status %d%s%s", status,
             status < 0 ? ": " : "", status < 0 ? strerror(-status) : "");
    return buf;
}

/*
 * One CM event of the client.  A connection that fails stops the
 * launching of more (on a device out of QPs every further one would fail
 * the same way); those in flight finish.  A failed or closed
 * connection's QP and id are destroyed once the event is acknowledged
 * (rdma_destroy_id waits for that).
 */
static void client_event(struct rdma_cm_event *ev)
{
    Conn *c = ev->id->context;
    enum rdma_cm_event_type type = ev->event;

    switch (type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (rdma_resolve_route(c->id, CM_TIMEOUT_MS)) {
            fail("conn %u: rdma_resolve_route: %s", c->index,
                 strerror(errno));
            conn_failed(c);
            launching = false;
        }
        break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
        client_connect(c);
        break;
    case RDMA_CM_EVENT_ESTABLISHED:
        c->state = CONN_OPEN;
        n_inflight--;
        n_established++;
        t_established = now();
        if (n_established % 1000 == 0) {
            printf("client: %u established\n", n_established);
        }
        post_send(c, 0);
        break;
    case RDMA_CM_EVENT_DISCONNECTED:
        if (c->state == CONN_CLOSING) {
            n_inflight--;
            n_closed++;
            c->state = CONN_CLOSED;
        } else {
            fail("conn %u: DISCONNECTED while %s", c->index,
                 c->state == CONN_OPEN ? "open" : "connecting");
            conn_failed(c);
        }
        break;
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        break;
    default:
        fail("conn %u: %s, %s", c->index, rdma_event_str(type),
             status_str(ev->status));
        conn_failed(c);
        launching = false;
        break;
    }
    rdma_ack_cm_event(ev);
    if (c->state == CONN_CLOSED || c->state == CONN_FAILED) {
        conn_destroy(c);
    }
}

static bool wait_events(double deadline);

/*
 * Disconnect every open connection, WINDOW at a time; returns how many
 * were asked to.
 */
static uint32_t client_close_all(double deadline)
{
    uint32_t i = 0, asked = 0;

    while (now() < deadline) {
        for (; i < nconns && n_inflight < window; i++) {
            Conn *c = &conns[i];

            if (c->state != CONN_OPEN) {
                continue;
            }
            n_established--;
            c->state = CONN_CLOSING;
            n_inflight++;
            asked++;
            if (rdma_disconnect(c->id)) {
                fail("conn %u: rdma_disconnect: %s", c->index,
                     strerror(errno));
                conn_failed(c);
                conn_destroy(c);
            }
        }
        if (i >= nconns && n_inflight == 0) {
            break;
        }
        wait_events(deadline);
    }
    return asked;
}

/* Are open connections still waiting for their SEND or the answer? */
static bool data_pending(void)
{
    uint32_t i;

    for (i = 0; i < next_conn; i++) {
        if (conns[i].state == CONN_OPEN && !conns[i].bad &&
            !(conns[i].sent && conns[i].checked)) {
            return true;
        }
    }
    return false;
}

static bool file_exists(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0;
}

static int run_client(const char *addr, const char *port, const char *hold,
                      double limit)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
    double t0, t_conn, t1, deadline;
    uint32_t open;
    int rc;

    rc = getaddrinfo(addr, port, &hints, &dst);
    if (rc) {
        die("%s port %s: %s", addr, port, gai_strerror(rc));
    }
    printf("client: %u connections to %s port %s, %u in flight, "
           "%zu-byte messages\n", nconns, addr, port, window, msg_size);
    t0 = now();
    deadline = t0 + limit;
    client_launch();
    while (now() < deadline) {
        if (n_inflight == 0 && !(launching && next_conn < nconns) &&
            !data_pending()) {
            break;
        }
        wait_events(deadline);
        client_launch();
    }
    t_conn = (t_established ? t_established : now()) - t0;
    open = n_established;
    if (open == nconns && n_checked == nconns && n_sent == nconns) {
        printf("connected %u in %.2f s (%.1f conn/s)\n", nconns, t_conn,
               nconns / t_conn);
        printf("client: %u echoes of %zu bytes checked, every byte "
               "matched\n", n_checked, msg_size);
    } else {
        printf("client: connected %u of %u (%u started) in %.2f s, "
               "%u sends completed, %u echoes checked, %u still "
               "connecting%s\n", open, nconns, next_conn, t_conn, n_sent,
               n_checked, n_inflight,
               now() >= deadline ? ": deadline" : "");
        if (failures == 0) {
            fail("not every connection was established and checked");
        }
    }
    if (hold && open) {
        printf("client: holding %u connections until %s exists\n", open,
               hold);
        fflush(stdout);
        while (!file_exists(hold) && now() < deadline) {
            wait_events(now() + 0.2);
        }
        if (n_established != open) {
            fail("%u connections ended while held", open - n_established);
        }
    }
    t1 = now();
    open = client_close_all(deadline + 60);
    if (n_closed == open && open > 0) {
        printf("disconnected %u in %.2f s (%.1f disc/s)\n", n_closed,
               now() - t1, n_closed / (now() - t1));
    } else {
        fail("disconnected %u of %u", n_closed, open);
    }
    return failures ? 1 : 0;
}

/* --- server --------------------------------------------------------------- */

static uint32_t n_requests;

/*
 * A connect request: accept it on a QP of its own, its receive posted
 * first.  Returns an id to destroy once the event is acknowledged (a
 * request refused), or NULL.
 */
static struct rdma_cm_id *server_request(struct rdma_cm_event *ev)
{
    const ConnReq *req = ev->param.conn.private_data;
    uint8_t len = ev->param.conn.private_data_len;
    struct rdma_conn_param param = { .rnr_retry_count = 7 };
    struct rdma_cm_id *id = ev->id;
    Conn *c;

    if (len < sizeof(*req) || req->magic != MAGIC || req->index >= nconns) {
        fail("a connect request with %u bytes of private data, magic "
             "0x%x, index %u (at most %u): rejected", len,
             len >= sizeof(*req) ? req->magic : 0,
             len >= sizeof(*req) ? req->index : 0, nconns - 1);
        rdma_reject(id, NULL, 0);
        return id;
    }
    c = &conns[req->index];
    if (c->state != CONN_IDLE) {
        fail("conn %u: a second connect request: rejected", req->index);
        rdma_reject(id, NULL, 0);
        return id;
    }
    c->index = req->index;
    c->id = id;
    id->context = c;
    n_requests++;
    n_inflight++;
    c->state = CONN_CONNECTING;
    setup_verbs(id->verbs);
    if (!create_qp(c)) {
        rdma_reject(id, NULL, 0);
        conn_failed(c);
        return NULL;
    }
    if (rdma_accept(id, &param)) {
        fail("conn %u: rdma_accept: %s", c->index, strerror(errno));
        conn_failed(c);
    }
    return NULL;
}

/*
 * One CM event of the server.  Returns an id to destroy once the event
 * is acknowledged; a failed or closed connection's QP and id are
 * destroyed then as well.
 */
static struct rdma_cm_id *server_event(struct rdma_cm_event *ev)
{
    Conn *c = ev->id->context;

    switch (ev->event) {
    case RDMA_CM_EVENT_CONNECT_REQUEST:
        return server_request(ev);
    case RDMA_CM_EVENT_ESTABLISHED:
        c->state = CONN_OPEN;
        n_inflight--;
        n_established++;
        break;
    case RDMA_CM_EVENT_DISCONNECTED:
        if (c->state == CONN_OPEN) {
            n_established--;
        } else {
            n_inflight--;
        }
        if (!c->checked) {
            fail("conn %u: disconnected before its message arrived",
                 c->index);
        }
        c->state = CONN_CLOSED;
        n_closed++;
        break;
    case RDMA_CM_EVENT_TIMEWAIT_EXIT:
        break;
    default:
        if (!c) {
            fail("listener: %s, %s", rdma_event_str(ev->event),
                 status_str(ev->status));
            break;
        }
        fail("conn %u: %s, %s", c->index, rdma_event_str(ev->event),
             status_str(ev->status));
        conn_failed(c);
        break;
    }
    return NULL;
}

static int run_server(const char *addr, const char *port, double limit)
{
    struct addrinfo hints = { .ai_flags = AI_PASSIVE,
                              .ai_socktype = SOCK_STREAM };
    struct rdma_cm_id *listen_id;
    double deadline = now() + limit;
    int rc;

    rc = getaddrinfo(addr, port, &hints, &dst);
    if (rc) {
        die("%s port %s: %s", addr, port, gai_strerror(rc));
    }
    if (rdma_create_id(channel, &listen_id, NULL, RDMA_PS_TCP) ||
        rdma_bind_addr(listen_id, dst->ai_addr) ||
        rdma_listen(listen_id, 1024)) {
        die("listening on %s port %s: %s", addr, port, strerror(errno));
    }
    printf("server: listening on %s port %s for %u connections\n", addr,
           port, nconns);
    fflush(stdout);
    while (n_closed < nconns && now() < deadline) {
        wait_events(deadline);
    }
    printf("server: %u connect requests, %u messages checked, %u answers "
           "sent, %u disconnected%s\n", n_requests, n_checked, n_sent,
           n_closed, now() >= deadline ? ": deadline" : "");
    if (n_closed != nconns || n_checked != nconns || n_sent != nconns) {
        fail("want %u of each", nconns);
    }
    rdma_destroy_id(listen_id);
    return failures ? 1 : 0;
}

/* --- both ----------------------------------------------------------------- */

/* Handle the CM events and completions that arrive before DEADLINE. */
static bool wait_events(double deadline)
{
    struct pollfd fds[2] = {
        { .fd = channel->fd, .events = POLLIN },
        { .fd = comp ? comp->fd : -1, .events = POLLIN },
    };
    struct rdma_cm_event *ev;
    struct rdma_cm_id *drop;
    double left = deadline - now();
    int ms = left <= 0 ? 0 : left > 0.2 ? 200 : (int)(left * 1000) + 1;
    bool any = false;

    fds[1].fd = comp ? comp->fd : -1;
    if (poll(fds, 2, ms) < 0 && errno != EINTR) {
        die("poll: %s", strerror(errno));
    }
    drain_cqs();
    while (rdma_get_cm_event(channel, &ev) == 0) {
        any = true;
        if (*side == 'c') {
            client_event(ev);
        } else {
            Conn *c;

            drop = server_event(ev);
            c = ev->id->context;    /* a request's, once accepted */
            rdma_ack_cm_event(ev);
            if (drop) {
                rdma_destroy_id(drop);
            }
            if (c && (c->state == CONN_CLOSED || c->state == CONN_FAILED)) {
                conn_destroy(c);
            }
        }
        drain_cqs();
    }
    if (errno != EAGAIN) {
        die("rdma_get_cm_event: %s", strerror(errno));
    }
    return any;
}

static unsigned long number(const char *opt, const char *s, unsigned long lo,
                            unsigned long hi)
{
    char *end;
    unsigned long v;

    errno = 0;
    v = strtoul(s, &end, 10);
    if (errno || *s == '\0' || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "cm-scale: -%s wants a number from %lu to %lu, "
                "not '%s'\n", opt, lo, hi, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    const char *addr = NULL, *port = "18680", *hold = NULL;
    unsigned long limit = 600;
    int opt, rc;

    while ((opt = getopt(argc, argv, "b:c:p:n:s:w:H:t:")) != -1) {
        switch (opt) {
        case 'b':
            addr = optarg;
            break;
        case 'c':
            addr = optarg;
            side = "client";
            break;
        case 'p':
            port = optarg;
            break;
        case 'n':
            nconns = number("n", optarg, 1, MAX_CONNS);
            break;
        case 's':
            msg_size = number("s", optarg, 1, 65536);
            break;
        case 'w':
            window = number("w", optarg, 1, 4096);
            break;
        case 'H':
            hold = optarg;
            break;
        case 't':
            limit = number("t", optarg, 1, 86400);
            break;
        default:
            fprintf(stderr, "usage: cm-scale -b ADDR | -c ADDR [-p PORT] "
                    "[-n N] [-s SIZE] [-w WINDOW] [-H FILE] [-t SECONDS]\n");
            return 2;
        }
    }
    if (!addr || optind != argc) {
        fprintf(stderr, "cm-scale: -b ADDR (server) or -c ADDR (client)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    conns = calloc(nconns, sizeof(*conns));
    sbuf = calloc(2 * (size_t)nconns, msg_size);
    if (!conns || !sbuf) {
        die("out of memory for %u connections", nconns);
    }
    rbuf = sbuf + (size_t)nconns * msg_size;
    channel = rdma_create_event_channel();
    if (!channel) {
        die("rdma_create_event_channel: %s", strerror(errno));
    }
    if (fcntl(channel->fd, F_SETFL,
              fcntl(channel->fd, F_GETFL) | O_NONBLOCK)) {
        die("fcntl: %s", strerror(errno));
    }
    if (*side == 'c') {
        rc = run_client(addr, port, hold, limit);
    } else {
        rc = run_server(addr, port, limit);
    }
    if (failures > MAX_REPORTED) {
        printf("%s: %u more errors not shown\n", side,
               failures - MAX_REPORTED);
    }
    if (cqs) {
        uint32_t i, ncq = (nconns + CONNS_PER_CQ - 1) / CONNS_PER_CQ;

        for (i = 0; i < ncq; i++) {
            if (ibv_destroy_cq(cqs[i])) {
                printf("%s: error: ibv_destroy_cq %u: %s\n", side, i,
                       strerror(errno));
                rc = 1;
            }
        }
        ibv_destroy_comp_channel(comp);
        ibv_dereg_mr(mr);
        ibv_dealloc_pd(pd);
    }
    rdma_destroy_event_channel(channel);
    freeaddrinfo(dst);
    printf("%s: %s\n", side, rc ? "FAIL" : "PASS");
    return rc;
}
