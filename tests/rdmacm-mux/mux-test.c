/*
 * Test client for contrib/rdmacm-mux: plays one or more QEMU instances
 * against a running daemon and prints one "ok - NAME" or
 * "not ok - NAME: why" line per check (run-tests.sh numbers them).
 *
 * It needs a real port under the daemon (Linux rxe in the lane-3 host VM):
 * MADs really leave through umad and come back through rxe's loopback.
 *
 * Usage: mux-test [-a GID] [-b GID] [-c IPV4] [-i NETDEV] [-u UID] [-g GID]
 *                 SOCKET TEST...
 *        mux-test mkstale PATH
 * Tests: basic routing abuse flood churn maxclients runtime-gid ownership
 *        idle policy fdlimit service hold connect connect-denied
 *        connect-race
 * With -u/-g it runs as that user and group (the socket's permissions).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "rdmacm-mux.h"

#define HDR_SIZE sizeof(RdmaCmMuxHdr)
#define TIMEOUT_MS 10000        /* a MAD through rxe under TCG */
#define NO_REPLY INT_MIN

enum {
    ATTR_REQ = 0x0010, ATTR_MRA = 0x0011, ATTR_REJ = 0x0012,
    ATTR_REP = 0x0013, ATTR_RTU = 0x0014, ATTR_DREQ = 0x0015,
    ATTR_DREP = 0x0016, ATTR_SIDR_REQ = 0x0017, ATTR_SIDR_REP = 0x0018,
};

typedef struct Conn {
    int fd;
    uint32_t seq;
    RdmaCmMuxMad q[64];         /* RECVs that came while awaiting a REPLY */
    unsigned qhead, qlen;
} Conn;

static const char *sock_path;
static uint8_t gid_a[16], gid_b[16], gid_c[16];
static const char *gid_c_dev = "eth0";
static long run_uid = -1, run_gid = -1;
static unsigned failures;
static uint32_t next_tid;

static void report(bool ok, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void report(bool ok, const char *name, const char *fmt, ...)
{
    va_list ap;

    if (ok) {
        printf("ok - %s\n", name);
    } else {
        failures++;
        printf("not ok - %s: ", name);
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
    }
    fflush(stdout);
}

static void pass(const char *name)
{
    printf("ok - %s\n", name);
    fflush(stdout);
}

static const char *gstr(const uint8_t *gid)
{
    static char buf[4][INET6_ADDRSTRLEN];
    static unsigned n;
    char *b = buf[n++ % 4];

    inet_ntop(AF_INET6, gid, b, INET6_ADDRSTRLEN);
    return b;
}

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    nanosleep(&ts, NULL);
}

/* Socket plumbing */

static int connect_raw(void)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    if (fd < 0) {
        return -1;
    }
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", sock_path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/*
 * Connects as another user: the daemon takes SO_PEERCRED, which is the
 * effective uid at connect().  Needs root; run-tests.sh opens the socket
 * to everyone for these tests.
 */
static int connect_as(uid_t uid)
{
    int fd, err;

    if (seteuid(uid) < 0) {
        return -1;
    }
    fd = connect_raw();
    err = errno;
    if (seteuid(0) < 0) {
        perror("seteuid(0)");
        exit(2);
    }
    errno = err;
    return fd;
}

static Conn *conn_wrap(int fd)
{
    Conn *c;

    if (fd < 0) {
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    if (!c) {
        close(fd);
        return NULL;
    }
    c->fd = fd;
    return c;
}

static Conn *conn_open(void)
{
    Conn *c = calloc(1, sizeof(*c));

    if (!c) {
        return NULL;
    }
    c->fd = connect_raw();
    if (c->fd < 0) {
        free(c);
        return NULL;
    }
    return c;
}

static void conn_close(Conn *c)
{
    if (c) {
        close(c->fd);
        free(c);
    }
}

static bool write_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;

    while (len) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return false;
        }
        p += n;
        len -= n;
    }
    return true;
}

/* 1: read len bytes; 0: timed out; -1: EOF or error. */
static int read_all(int fd, void *buf, size_t len, int timeout_ms)
{
    uint8_t *p = buf;
    int64_t end = now_ms() + timeout_ms;

    while (len) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int64_t left = end - now_ms();
        ssize_t n;

        if (left <= 0 || poll(&pfd, 1, left) == 0) {
            return 0;
        }
        n = recv(fd, p, len, 0);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            return -1;
        }
        p += n;
        len -= n;
    }
    return 1;
}

/* Reads one message; -2 if it is not a valid daemon message. */
static int read_msg(int fd, RdmaCmMuxHdr *h, RdmaCmMuxMad *body,
                    int timeout_ms)
{
    int r = read_all(fd, h, HDR_SIZE, timeout_ms);

    if (r <= 0) {
        return r;
    }
    if (h->magic != RDMACM_MUX_MAGIC || h->version != RDMACM_MUX_VERSION) {
        return -2;
    }
    if (h->type == RDMACM_MUX_REPLY && h->len == 0) {
        return 1;
    }
    if (h->type != RDMACM_MUX_RECV || h->len != sizeof(*body)) {
        return -2;
    }
    return read_all(fd, body, sizeof(*body), timeout_ms) == 1 ? 1 : -2;
}

static bool send_msg(int fd, uint16_t type, uint32_t seq, const void *body,
                     uint32_t len)
{
    RdmaCmMuxHdr h = {
        .magic = RDMACM_MUX_MAGIC, .version = RDMACM_MUX_VERSION,
        .type = type, .seq = seq, .len = len,
    };
    uint8_t buf[HDR_SIZE + sizeof(RdmaCmMuxMad)];

    memcpy(buf, &h, HDR_SIZE);
    memcpy(buf + HDR_SIZE, body, len);
    return write_all(fd, buf, HDR_SIZE + len);
}

static void queue_recv(Conn *c, const RdmaCmMuxMad *m)
{
    if (c->qlen == 64) {
        c->qhead = (c->qhead + 1) % 64;
        c->qlen--;
    }
    c->q[(c->qhead + c->qlen) % 64] = *m;
    c->qlen++;
}

/* Reads until the REPLY to seq; RECVs on the way are queued. */
static int await_reply(Conn *c, uint32_t seq)
{
    RdmaCmMuxHdr h;
    RdmaCmMuxMad m;

    for (;;) {
        if (read_msg(c->fd, &h, &m, TIMEOUT_MS) != 1) {
            return NO_REPLY;
        }
        if (h.type == RDMACM_MUX_RECV) {
            queue_recv(c, &m);
            continue;
        }
        return h.seq == seq ? h.status : NO_REPLY;
    }
}

static int request(Conn *c, uint16_t type, const void *body, uint32_t len)
{
    uint32_t seq = ++c->seq;

    if (!send_msg(c->fd, type, seq, body, len)) {
        return NO_REPLY;
    }
    return await_reply(c, seq);
}

static int gid_request(Conn *c, uint16_t type, const uint8_t *gid)
{
    RdmaCmMuxGid g;

    memcpy(g.gid, gid, 16);
    return request(c, type, &g, sizeof(g));
}

/* REGISTER, retried while a just-closed owner is being reaped. */
static int register_gid(Conn *c, const uint8_t *gid)
{
    int64_t end = now_ms() + 3000;
    int r;

    while ((r = gid_request(c, RDMACM_MUX_REGISTER, gid)) == -EADDRINUSE &&
           now_ms() < end) {
        sleep_ms(50);
    }
    return r;
}

/* 1: a RECV; 0: none within timeout_ms. */
static int wait_recv(Conn *c, RdmaCmMuxMad *m, int timeout_ms)
{
    RdmaCmMuxHdr h;

    if (c->qlen) {
        *m = c->q[c->qhead];
        c->qhead = (c->qhead + 1) % 64;
        c->qlen--;
        return 1;
    }
    if (read_msg(c->fd, &h, m, timeout_ms) != 1 ||
        h.type != RDMACM_MUX_RECV) {
        return 0;
    }
    return 1;
}

/* MADs */

static void make_mad(uint8_t *mad, uint16_t attr, uint32_t local_id,
                     uint32_t remote_id)
{
    uint32_t tid = ++next_tid, v;
    uint16_t a = htons(attr);
    int i;

    memset(mad, 0, RDMACM_MUX_MAD_SIZE);
    mad[0] = 1;                 /* base version */
    mad[1] = 0x07;              /* CM */
    mad[2] = 2;                 /* class version */
    mad[3] = 0x03;              /* SEND */
    v = htonl(tid);
    memcpy(mad + 12, &v, 4);    /* low half of the TID */
    memcpy(mad + 16, &a, 2);
    v = htonl(local_id);
    memcpy(mad + 24, &v, 4);
    v = htonl(remote_id);
    memcpy(mad + 28, &v, 4);
    for (i = 32; i < RDMACM_MUX_MAD_SIZE; i++) {
        mad[i] = (uint8_t)(i * 7 + attr + local_id);
    }
}

static void make_send(RdmaCmMuxMad *m, const uint8_t *sgid,
                      const uint8_t *dgid, const uint8_t *mad)
{
    memset(m, 0, sizeof(*m));
    memcpy(m->sgid, sgid, 16);
    memcpy(m->dgid, dgid, 16);
    m->qpn = 1;
    m->qkey = 0x80010000;
    m->hop_limit = 64;
    memcpy(m->mad, mad, RDMACM_MUX_MAD_SIZE);
}

static int send_mad(Conn *c, const uint8_t *sgid, const uint8_t *dgid,
                    const uint8_t *mad)
{
    RdmaCmMuxMad m;

    make_send(&m, sgid, dgid, mad);
    return request(c, RDMACM_MUX_SEND, &m, sizeof(m));
}

/*
 * The received MAD is the one sent, from and to the right GIDs.  The
 * kernel replaces the high half of a request's TID (bytes 8-11) with its
 * agent's, so that part is not compared.
 */
static bool same_mad(const RdmaCmMuxMad *got, const uint8_t *sgid,
                     const uint8_t *dgid, const uint8_t *mad, char *why,
                     size_t len)
{
    if (memcmp(got->sgid, sgid, 16) || memcmp(got->dgid, dgid, 16)) {
        snprintf(why, len, "got %s -> %s, want %s -> %s", gstr(got->sgid),
                 gstr(got->dgid), gstr(sgid), gstr(dgid));
        return false;
    }
    if (got->qpn != 1) {
        snprintf(why, len, "source QP %u, want 1", got->qpn);
        return false;
    }
    if (memcmp(got->mad, mad, 8) ||
        memcmp(got->mad + 12, mad + 12, RDMACM_MUX_MAD_SIZE - 12)) {
        snprintf(why, len, "MAD bytes differ (attr 0x%02x%02x, want "
                 "0x%02x%02x)", got->mad[16], got->mad[17], mad[16], mad[17]);
        return false;
    }
    return true;
}

/*
 * Sends mad from (from, sgid) to dgid and checks that `to` receives it
 * as the next MAD: anything that should have been dropped or routed
 * elsewhere before it would show up first.
 */
static bool exchange(const char *name, Conn *from, const uint8_t *sgid,
                     Conn *to, const uint8_t *dgid, const uint8_t *mad)
{
    char why[200];
    RdmaCmMuxMad got;
    int r = send_mad(from, sgid, dgid, mad);

    if (r) {
        report(false, name, "SEND replied %d", r);
        return false;
    }
    if (!wait_recv(to, &got, TIMEOUT_MS)) {
        report(false, name, "nothing received");
        return false;
    }
    if (!same_mad(&got, sgid, dgid, mad, why, sizeof(why))) {
        report(false, name, "%s", why);
        return false;
    }
    pass(name);
    return true;
}

/*
 * One MAD from a client to a GID, and the client that must receive it.
 * Clients and GIDs are A, B, C: indexes into the test's clients and
 * gid_a, gid_b, gid_c.
 */
typedef struct Step {
    const char *name;
    uint16_t attr;
    uint32_t local_id;
    uint32_t remote_id;
    int from;                   /* sends, from its own GID */
    int dgid;
    int to;
} Step;

enum { A, B, C };

static const uint8_t *gid_of(int who)
{
    return who == A ? gid_a : who == B ? gid_b : gid_c;
}

static void run_steps(Conn **conns, const Step *steps, size_t n)
{
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    size_t i;

    for (i = 0; i < n; i++) {
        const Step *s = &steps[i];

        make_mad(mad, s->attr, s->local_id, s->remote_id);
        exchange(s->name, conns[s->from], gid_of(s->from), conns[s->to],
                 gid_of(s->dgid), mad);
    }
}

/*
 * A SEND's REPLY only says that the MAD left; it comes back through the
 * port later.  c sends a MAD to its own gid and waits for it: the port
 * delivers in order, so everything sent before has been routed by then.
 */
static void barrier(const char *name, Conn *c, const uint8_t *gid)
{
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    char why[200];
    RdmaCmMuxMad got;

    make_mad(mad, ATTR_REQ, 0xbbbb0000 | (next_tid & 0xffff), 0);
    if (send_mad(c, gid, gid, mad) || !wait_recv(c, &got, TIMEOUT_MS) ||
        !same_mad(&got, gid, gid, mad, why, sizeof(why))) {
        report(false, name, "barrier MAD not received as the next MAD");
    }
}

static void expect_status(const char *name, int got, int want)
{
    report(got == want, name, "status %d (%s), want %d (%s)", got,
           got == NO_REPLY ? "no reply" : strerror(-got), want,
           strerror(-want));
}

/*
 * A fresh client registers gid, sends a REQ to itself and receives it:
 * the daemon is alive and serves well-behaved clients.
 */
static void service_check(const char *name, const uint8_t *gid)
{
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    Conn *c = conn_open();
    int r;

    if (!c) {
        report(false, name, "connect: %s", strerror(errno));
        return;
    }
    r = register_gid(c, gid);
    if (r) {
        report(false, name, "REGISTER %s: %d", gstr(gid), r);
    } else {
        make_mad(mad, ATTR_REQ, 0x5e000000 | (next_tid & 0xffff), 0);
        exchange(name, c, gid, c, gid, mad);
    }
    conn_close(c);
}

/* Test 1: a connection's worth of CM messages between two clients */

static void test_basic(void)
{
    enum { X = 0x11000001, Y = 0x22000002 };   /* A's and B's IDs */
    static const Step steps[] = {
        { "basic/req-a-to-b", ATTR_REQ, X, 0, A, B, B },
        { "basic/rep-b-to-a", ATTR_REP, Y, X, B, A, A },
        { "basic/rtu-a-to-b", ATTR_RTU, X, Y, A, B, B },
        { "basic/dreq-a-to-b", ATTR_DREQ, X, Y, A, B, B },
        { "basic/drep-b-to-a", ATTR_DREP, Y, X, B, A, A },
        /* The passive side disconnects too. */
        { "basic/dreq-b-to-a", ATTR_DREQ, Y, X, B, A, A },
        { "basic/drep-a-to-b", ATTR_DREP, X, Y, A, B, B },
    };
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    Conn *a = conn_open(), *b = conn_open();
    Conn *conns[] = { a, b };

    if (!a || !b) {
        report(false, "basic/connect", "%s", strerror(errno));
        goto out;
    }
    expect_status("basic/register-a", gid_request(a, RDMACM_MUX_REGISTER,
                                                  gid_a), 0);
    expect_status("basic/register-b", gid_request(b, RDMACM_MUX_REGISTER,
                                                  gid_b), 0);
    run_steps(conns, steps, sizeof(steps) / sizeof(steps[0]));
    make_mad(mad, ATTR_REQ, X + 1, 0);
    {
        RdmaCmMuxMad m;

        make_send(&m, gid_a, gid_b, mad);
        m.qkey = 0;             /* the default, IB_QP1_QKEY */
        expect_status("basic/default-qkey",
                      request(a, RDMACM_MUX_SEND, &m, sizeof(m)), 0);
        report(wait_recv(b, &m, TIMEOUT_MS), "basic/default-qkey-received",
               "nothing received");
    }
out:
    conn_close(a);
    conn_close(b);
}

/* Test 2: routing rules and request errors */

static void test_routing(void)
{
    enum {
        X = 0x33000003, Y = 0x44000004, Z = 0x55000005, W = 0x5a00000a,
        SIDR = 0x66000006,
    };
    static const Step steps[] = {
        /*
         * A's REQ leaves with Local Comm ID X.  A reply naming X as its
         * Remote Comm ID but addressed to B's GID goes to B, the owner of
         * that GID: the ID is the sender's to choose, so it cannot take a
         * MAD away from a GID's owner (AUDIT 7).
         */
        { "routing/req-by-gid", ATTR_REQ, X, 0, A, B, B },
        { "routing/rep-to-gid-owner-not-id-sender", ATTR_REP, Y, X, B, B,
          B },
        { "routing/mra-to-gid-owner-not-id-sender", ATTR_MRA, Y, X, B, B,
          B },
        { "routing/rej-to-gid-owner-not-id-sender", ATTR_REJ, Y, X, B, B,
          B },
        /* The real reply to A's REQ is addressed to A's GID. */
        { "routing/rep-to-requester", ATTR_REP, Y, X, B, A, A },
        { "routing/unknown-comm-id-by-gid", ATTR_REP, Y, Z, A, B, B },
        /*
         * Two clients chose the same ID X (their CMs choose independently):
         * each gets the replies addressed to its own GID.
         */
        { "routing/same-id-req-b-to-a", ATTR_REQ, X, 0, B, A, A },
        { "routing/same-id-rep-to-b", ATTR_REP, Z, X, A, B, B },
        { "routing/same-id-rep-to-a", ATTR_REP, Z, X, B, A, A },
        /* W: an ID that only B uses. */
        { "routing/rtu-b-to-a", ATTR_RTU, W, X, B, A, A },
        /* SIDR: the same, with the REQ's Request ID. */
        { "routing/sidr-req-by-gid", ATTR_SIDR_REQ, SIDR, 0, A, B, B },
        { "routing/sidr-rep-to-gid-owner-not-id-sender", ATTR_SIDR_REP,
          SIDR, 0, B, B, B },
        { "routing/sidr-rep-to-requester", ATTR_SIDR_REP, SIDR, 0, B, A, A },
        { "routing/sidr-rep-unknown-id-by-gid", ATTR_SIDR_REP, SIDR + 1, 0,
          A, B, B },
    };
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    RdmaCmMuxMad m;
    Conn *a = conn_open(), *b = conn_open(), *c = conn_open();
    Conn *conns[] = { a, b, c };

    if (!a || !b || !c) {
        report(false, "routing/connect", "%s", strerror(errno));
        goto out;
    }
    if (gid_request(a, RDMACM_MUX_REGISTER, gid_a) ||
        gid_request(b, RDMACM_MUX_REGISTER, gid_b)) {
        report(false, "routing/register", "cannot register A and B");
        goto out;
    }

    run_steps(conns, steps, sizeof(steps) / sizeof(steps[0]));

    /* Request errors. */
    expect_status("routing/register-taken-gid",
                  gid_request(c, RDMACM_MUX_REGISTER, gid_a), -EADDRINUSE);
    expect_status("routing/register-own-gid-again",
                  gid_request(a, RDMACM_MUX_REGISTER, gid_a), 0);
    make_mad(mad, ATTR_REQ, Z, 0);
    expect_status("routing/send-unregistered-sgid",
                  send_mad(c, gid_a, gid_b, mad), -EPERM);
    expect_status("routing/send-other-clients-sgid",
                  send_mad(a, gid_b, gid_a, mad), -EPERM);
    mad[1] = 0x03;              /* SA class: not the daemon's business */
    expect_status("routing/send-not-cm-class",
                  send_mad(a, gid_a, gid_b, mad), -EINVAL);
    make_mad(mad, ATTR_REQ, Z, 0);
    mad[3] = 0x81;              /* a response method */
    expect_status("routing/send-not-method-send",
                  send_mad(a, gid_a, gid_b, mad), -EINVAL);
    make_mad(mad, ATTR_REQ, Z, 0);
    make_send(&m, gid_a, gid_b, mad);
    m.qpn = 0x1000000;
    expect_status("routing/send-bad-qpn",
                  request(a, RDMACM_MUX_SEND, &m, sizeof(m)), -EINVAL);
    {
        static const uint8_t zero[16];

        expect_status("routing/register-zero-gid",
                      gid_request(c, RDMACM_MUX_REGISTER, zero), -EINVAL);
    }

    /*
     * Unknown destination: once B unregisters its GID, a MAD to it is
     * dropped, and traffic goes on: B, registering again, gets the next
     * MAD and not the dropped one.
     */
    expect_status("routing/unregister",
                  gid_request(b, RDMACM_MUX_UNREGISTER, gid_b), 0);
    expect_status("routing/unregister-again",
                  gid_request(b, RDMACM_MUX_UNREGISTER, gid_b), -ENOENT);
    expect_status("routing/unregister-not-owner",
                  gid_request(b, RDMACM_MUX_UNREGISTER, gid_a), -ENOENT);
    make_mad(mad, ATTR_REQ, 0x77000007, 0);
    expect_status("routing/send-to-unclaimed-gid",
                  send_mad(a, gid_a, gid_b, mad), 0);
    /* A reply to an ID of B's, at B's released GID, has no route either. */
    make_mad(mad, ATTR_DREQ, 0x7a00000a, W);
    expect_status("routing/send-reply-to-released-gid",
                  send_mad(a, gid_a, gid_b, mad), 0);
    barrier("routing/barrier", a, gid_a);
    expect_status("routing/reregister",
                  gid_request(b, RDMACM_MUX_REGISTER, gid_b), 0);
    make_mad(mad, ATTR_REQ, 0x78000008, 0);
    exchange("routing/dropped-mads-not-delivered-later", a, gid_a, b, gid_b,
             mad);

    /* A GID moves to another client; so do the MADs sent to it. */
    expect_status("routing/unregister-b",
                  gid_request(b, RDMACM_MUX_UNREGISTER, gid_b), 0);
    expect_status("routing/register-freed-gid",
                  gid_request(c, RDMACM_MUX_REGISTER, gid_b), 0);
    make_mad(mad, ATTR_REQ, 0x79000009, 0);
    exchange("routing/moved-gid", a, gid_a, c, gid_b, mad);
    report(!wait_recv(b, &m, 300), "routing/old-owner-gets-nothing",
           "B received a MAD for a GID it gave up");
out:
    conn_close(a);
    conn_close(b);
    conn_close(c);
}

/* Test 3: abusive clients */

/* Sends raw bytes; the daemon must answer -EPROTO and hang up. */
static void bad_input(const char *name, const void *bytes, size_t len,
                      uint32_t want_seq)
{
    RdmaCmMuxHdr h;
    RdmaCmMuxMad m;
    char buf[16];
    int fd = connect_raw(), r;

    if (fd < 0 || !write_all(fd, bytes, len)) {
        report(false, name, "connect/write: %s", strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return;
    }
    r = read_msg(fd, &h, &m, TIMEOUT_MS);
    if (r != 1 || h.type != RDMACM_MUX_REPLY || h.status != -EPROTO ||
        h.seq != want_seq) {
        report(false, name, "no REPLY -EPROTO (read %d type %u status %d "
               "seq %u)", r, h.type, h.status, h.seq);
    } else if (read_all(fd, buf, 1, TIMEOUT_MS) != -1) {
        report(false, name, "not disconnected");
    } else {
        pass(name);
    }
    close(fd);
}

static void bad_header(const char *name, RdmaCmMuxHdr h, uint32_t want_seq)
{
    bad_input(name, &h, HDR_SIZE, want_seq);
}

static void test_abuse(void)
{
    const RdmaCmMuxHdr good = {
        .magic = RDMACM_MUX_MAGIC, .version = RDMACM_MUX_VERSION,
        .type = RDMACM_MUX_REGISTER, .seq = 42, .len = sizeof(RdmaCmMuxGid),
    };
    RdmaCmMuxHdr h;
    uint8_t garbage[64], buf[HDR_SIZE + sizeof(RdmaCmMuxMad)];
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    RdmaCmMuxMad m;
    Conn *a, *b;
    size_t i;
    int fd, r;

    for (i = 0; i < sizeof(garbage); i++) {
        garbage[i] = (uint8_t)(i * 37 + 11);
    }
    bad_input("abuse/garbage-bytes", garbage, sizeof(garbage), 0);
    service_check("abuse/service-after-garbage", gid_a);
    h = good;
    h.magic = 0x12345678;
    bad_header("abuse/bad-magic", h, 0);
    h = good;
    h.version = 2;
    bad_header("abuse/bad-version", h, 42);
    h = good;
    h.type = 99;
    bad_header("abuse/unknown-type", h, 42);
    h = good;
    h.type = RDMACM_MUX_RECV;   /* daemon -> client only */
    h.len = sizeof(RdmaCmMuxMad);
    bad_header("abuse/type-recv-from-client", h, 42);
    h = good;
    h.type = RDMACM_MUX_REPLY;
    h.len = 0;
    bad_header("abuse/type-reply-from-client", h, 42);
    h = good;
    h.len = 0xffffffff;
    bad_header("abuse/huge-len", h, 42);
    h = good;
    h.type = RDMACM_MUX_SEND;
    h.len = sizeof(RdmaCmMuxGid);
    bad_header("abuse/len-not-body-size", h, 42);
    h = good;
    h.reserved = 1;
    bad_header("abuse/nonzero-reserved", h, 42);
    service_check("abuse/service-after-bad-headers", gid_a);

    /* A header and body split into 1-byte writes. */
    a = conn_open();
    b = conn_open();
    if (!a || !b || gid_request(b, RDMACM_MUX_REGISTER, gid_b)) {
        report(false, "abuse/one-byte-writes", "setup failed");
    } else {
        RdmaCmMuxGid g;
        RdmaCmMuxHdr rh = good;
        char why[200] = "nothing received";

        memcpy(g.gid, gid_a, 16);
        rh.seq = ++a->seq;
        memcpy(buf, &rh, HDR_SIZE);
        memcpy(buf + HDR_SIZE, &g, sizeof(g));
        for (i = 0; i < HDR_SIZE + sizeof(g); i++) {
            write_all(a->fd, buf + i, 1);
            sleep_ms(2);
        }
        expect_status("abuse/one-byte-writes-register",
                      await_reply(a, a->seq), 0);
        make_mad(mad, ATTR_REQ, 0x0b000001, 0);
        make_send(&m, gid_a, gid_b, mad);
        rh.type = RDMACM_MUX_SEND;
        rh.len = sizeof(m);
        rh.seq = ++a->seq;
        memcpy(buf, &rh, HDR_SIZE);
        memcpy(buf + HDR_SIZE, &m, sizeof(m));
        for (i = 0; i < HDR_SIZE + sizeof(m); i++) {
            write_all(a->fd, buf + i, 1);
        }
        expect_status("abuse/one-byte-writes-send", await_reply(a, a->seq),
                      0);
        report(wait_recv(b, &m, TIMEOUT_MS) &&
               same_mad(&m, gid_a, gid_b, mad, why, sizeof(why)),
               "abuse/one-byte-writes-received", "%s", why);
    }
    conn_close(a);
    conn_close(b);

    /* Disconnect in the middle of a message (it held a GID). */
    fd = connect_raw();
    if (fd >= 0) {
        RdmaCmMuxHdr rh = good;
        RdmaCmMuxGid g;

        memcpy(g.gid, gid_a, 16);
        memcpy(buf, &rh, HDR_SIZE);
        memcpy(buf + HDR_SIZE, &g, sizeof(g));
        write_all(fd, buf, HDR_SIZE + sizeof(g));
        r = read_msg(fd, &h, &m, TIMEOUT_MS);
        rh.type = RDMACM_MUX_SEND;
        rh.len = sizeof(m);
        memcpy(buf, &rh, HDR_SIZE);
        write_all(fd, buf, HDR_SIZE + 100);
        close(fd);
        report(r == 1 && h.status == 0, "abuse/register-then-die",
               "REGISTER not answered with 0");
    }
    /* Its GID is free again. */
    service_check("abuse/gid-of-dead-client-free", gid_a);
}

/*
 * A client that never reads while MADs for it pour in loses them, and
 * nobody else notices.
 */
static void test_flood(void)
{
    enum { FLOOD = 1500, WINDOW = 16 };
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    unsigned sent = 0, acked = 0, bad = 0, got = 0;
    RdmaCmMuxMad m;
    Conn *a = conn_open(), *b = conn_open();

    if (!a || !b || gid_request(a, RDMACM_MUX_REGISTER, gid_a) ||
        gid_request(b, RDMACM_MUX_REGISTER, gid_b)) {
        report(false, "flood/setup", "cannot connect and register");
        goto out;
    }
    /* Pipelined SENDs, each with its own TID. */
    while (acked < FLOOD) {
        while (sent < FLOOD && sent - acked < WINDOW) {
            make_mad(mad, ATTR_REQ, 0xf1000000 + sent, 0);
            make_send(&m, gid_a, gid_b, mad);
            if (!send_msg(a->fd, RDMACM_MUX_SEND, ++a->seq, &m, sizeof(m))) {
                break;
            }
            sent++;
        }
        if (sent == acked) {
            report(false, "flood/sends-answered", "write: %s",
                   strerror(errno));
            goto out;
        }
        if (await_reply(a, a->seq - (sent - acked) + 1) != 0) {
            bad++;
        }
        acked++;
    }
    report(bad == 0, "flood/sends-answered", "%u of %u SENDs failed", bad,
           FLOOD);
    /* The sender itself is still served while B's queue is full. */
    make_mad(mad, ATTR_REQ, 0xf2000000, 0);
    exchange("flood/others-served", a, gid_a, a, gid_a, mad);
    {
        Conn *c = conn_open();

        expect_status("flood/new-client-served",
                      c ? gid_request(c, RDMACM_MUX_UNREGISTER, gid_c)
                        : NO_REPLY, -ENOENT);
        conn_close(c);
    }

    /* B's socket buffer and queue hold less than the flood. */
    while (wait_recv(b, &m, 2000)) {
        got++;
    }
    report(got > 0 && got < FLOOD, "flood/non-reader-lost-mads",
           "the non-reader got %u of %u", got, FLOOD);
    /* Once it reads, it is served again. */
    make_mad(mad, ATTR_REQ, 0xf3000000, 0);
    exchange("flood/non-reader-served-after-reading", a, gid_a, b, gid_b,
             mad);
out:
    conn_close(a);
    conn_close(b);
}

/* Hundreds of connections that come and go. */
static void test_churn(void)
{
    unsigned i, errors = 0;

    for (i = 0; i < 600; i++) {
        int fd = connect_raw();

        if (fd < 0) {
            errors++;
            continue;
        }
        if (i % 3 == 1) {
            Conn c = { .fd = fd };

            /* Claims a GID and dies without giving it back. */
            if (gid_request(&c, RDMACM_MUX_REGISTER, gid_a) != 0) {
                errors++;
            }
        } else if (i % 3 == 2) {
            RdmaCmMuxHdr h = {
                .magic = RDMACM_MUX_MAGIC, .version = RDMACM_MUX_VERSION,
                .type = RDMACM_MUX_SEND, .len = sizeof(RdmaCmMuxMad),
            };

            write_all(fd, &h, HDR_SIZE);        /* body never comes */
        }
        close(fd);
    }
    report(errors == 0, "churn/600-connections", "%u failed", errors);
    service_check("churn/service-after", gid_a);
}

/*
 * What a new connection gets first: 0 when the daemon serves it (the REPLY
 * to a request), else the status of the REPLY that refuses it (seq 0,
 * followed by EOF).
 */
static int admission(Conn *c)
{
    RdmaCmMuxGid g;
    RdmaCmMuxHdr h;
    RdmaCmMuxMad m;

    memcpy(g.gid, gid_c, 16);
    c->seq = 1000;
    /*
     * A refused client may find the socket already closed (EPIPE) with the
     * refusal waiting in it: read whether or not the request went out.
     */
    send_msg(c->fd, RDMACM_MUX_UNREGISTER, ++c->seq, &g, sizeof(g));
    if (read_msg(c->fd, &h, &m, TIMEOUT_MS) != 1 ||
        h.type != RDMACM_MUX_REPLY) {
        return NO_REPLY;
    }
    if (h.seq == c->seq) {
        return h.status == -ENOENT ? 0 : NO_REPLY;
    }
    return h.seq == 0 && h.status < 0 ? h.status : NO_REPLY;
}

/* A GID of its own for client i of a test, not one of the host's. */
static void fake_gid(uint8_t *gid, unsigned test, unsigned i)
{
    memset(gid, 0, 16);
    gid[0] = 0xfe;
    gid[1] = 0x80;
    gid[13] = test;
    gid[14] = i >> 8;
    gid[15] = i;
}

/*
 * Opens n clients of uid into conns[], each holding a GID of its own (so
 * that none is evictable as idle); the number that got in.
 */
static unsigned open_holders(Conn **conns, unsigned n, uid_t uid,
                             unsigned test, unsigned first)
{
    unsigned i;

    for (i = 0; i < n; i++) {
        uint8_t gid[16];

        conns[i] = conn_wrap(connect_as(uid));
        fake_gid(gid, test, first + i);
        if (!conns[i] || gid_request(conns[i], RDMACM_MUX_REGISTER, gid)) {
            conn_close(conns[i]);
            conns[i] = NULL;
            break;
        }
    }
    return i;
}

/*
 * The bounds on clients (daemon defaults): 64 of one user, 256 in all.
 * The one too many is told so, the others keep going.
 */
static void test_maxclients(void)
{
    enum { MAX = 256, PER_UID = 64, UIDS = MAX / PER_UID };
    static const uid_t uids[UIDS + 1] = { 0, 60001, 60002, 60003, 60004 };
    Conn *conns[MAX + 1] = { NULL };
    unsigned u, n = 0, got;
    Conn *c;
    int r;

    got = open_holders(conns, PER_UID, uids[0], 1, 0);
    n += got;
    report(got == PER_UID, "maxclients/64-clients-of-one-user",
           "%u of %u served", got, PER_UID);
    c = conn_wrap(connect_as(uids[0]));
    r = c ? admission(c) : NO_REPLY;
    expect_status("maxclients/65th-client-of-one-user-refused", r, -EUSERS);
    if (r == 0) {
        conns[n++] = c;         /* a daemon without the bound */
    } else {
        conn_close(c);
    }
    /*
     * The daemon may refuse and hang up before the client's first request
     * goes out; the refusal must still be read (a CI run once lost it).
     */
    c = conn_wrap(connect_as(uids[0]));
    sleep_ms(300);
    r = c ? admission(c) : NO_REPLY;
    expect_status("regression/maxclients/refusal-read-after-hangup", r,
                  -EUSERS);
    if (r == 0) {
        conns[n++] = c;
    } else {
        conn_close(c);
    }
    for (u = 1; u < UIDS; u++) {
        got = open_holders(conns + n, MAX - n < PER_UID ? MAX - n : PER_UID,
                           uids[u], 1, n);
        n += got;
    }
    report(n == MAX, "maxclients/256-clients-of-4-users", "%u served", n);
    c = conn_wrap(connect_as(uids[UIDS]));
    expect_status("maxclients/257th-refused", c ? admission(c) : NO_REPLY,
                  -EUSERS);
    conn_close(c);
    for (u = 0; u < n; u++) {
        conn_close(conns[u]);
    }
    sleep_ms(200);
    service_check("maxclients/service-after", gid_a);
}

/*
 * A GID the host gets while the daemon runs (libvirt adds guests'
 * addresses): sending from it fails before, works after, and fails again
 * once it is gone.
 */
static void test_runtime_gid(void)
{
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    char cmd[200], ip[INET_ADDRSTRLEN];
    int64_t end;
    Conn *c = conn_open();
    int r;

    inet_ntop(AF_INET, gid_c + 12, ip, sizeof(ip));
    if (!c || gid_request(c, RDMACM_MUX_REGISTER, gid_c)) {
        report(false, "runtime-gid/setup", "cannot register %s", gstr(gid_c));
        conn_close(c);
        return;
    }
    make_mad(mad, ATTR_REQ, 0xa1000000, 0);
    expect_status("runtime-gid/absent", send_mad(c, gid_c, gid_c, mad),
                  -EADDRNOTAVAIL);
    snprintf(cmd, sizeof(cmd), "ip addr add %s/24 dev %s", ip, gid_c_dev);
    if (system(cmd) != 0) {
        report(false, "runtime-gid/added", "'%s' failed", cmd);
        conn_close(c);
        return;
    }
    end = now_ms() + 10000;
    do {
        sleep_ms(200);
        make_mad(mad, ATTR_REQ, 0xa2000000 + (next_tid & 0xffff), 0);
        r = send_mad(c, gid_c, gid_c, mad);
    } while (r == -EADDRNOTAVAIL && now_ms() < end);
    expect_status("runtime-gid/added", r, 0);
    if (!r) {
        RdmaCmMuxMad m;
        char why[200] = "nothing received";

        report(wait_recv(c, &m, TIMEOUT_MS) &&
               same_mad(&m, gid_c, gid_c, mad, why, sizeof(why)),
               "runtime-gid/received", "%s", why);
    }
    snprintf(cmd, sizeof(cmd), "ip addr del %s/24 dev %s", ip, gid_c_dev);
    if (system(cmd) != 0) {
        report(false, "runtime-gid/removed", "'%s' failed", cmd);
    }
    end = now_ms() + 10000;
    do {
        sleep_ms(200);
        make_mad(mad, ATTR_REQ, 0xa3000000 + (next_tid & 0xffff), 0);
        r = send_mad(c, gid_c, gid_c, mad);
    } while (r == 0 && now_ms() < end);
    expect_status("runtime-gid/removed", r, -EADDRNOTAVAIL);
    conn_close(c);
}

/*
 * The daemon is out of file descriptors (run-tests.sh starts it under a
 * low ulimit): clients past the limit wait, and are served once others
 * leave.
 */
static void test_fdlimit(void)
{
    enum { N = 80 };            /* within the listen backlog (64) of waiters */
    int fd[N];
    bool served[N];
    unsigned i, n_served = 0, late = 0;
    int64_t end;

    for (i = 0; i < N; i++) {
        RdmaCmMuxGid g;

        served[i] = false;
        memcpy(g.gid, gid_c, 16);
        fd[i] = connect_raw();
        if (fd[i] < 0 ||
            !send_msg(fd[i], RDMACM_MUX_UNREGISTER, 1, &g, sizeof(g))) {
            report(false, "fdlimit/connect", "client %u: %s", i,
                   strerror(errno));
            if (fd[i] >= 0) {
                close(fd[i]);
            }
            while (i-- > 0) {
                close(fd[i]);
            }
            return;
        }
    }
    /* Those the daemon took answer at once. */
    for (i = 0; i < N; i++) {
        RdmaCmMuxHdr h;
        RdmaCmMuxMad m;

        served[i] = read_msg(fd[i], &h, &m, i ? 200 : TIMEOUT_MS) == 1 &&
                    h.status == -ENOENT;
        n_served += served[i];
    }
    report(n_served > 0 && n_served < N, "fdlimit/some-wait",
           "%u of %u served (is the daemon under a low ulimit -n?)",
           n_served, N);
    for (i = 0; i < N; i++) {
        if (served[i]) {
            close(fd[i]);
            fd[i] = -1;
        }
    }
    /*
     * Each one served is closed at once, making room for the next: all of
     * them are polled, so that one still waiting holds up no other.
     */
    end = now_ms() + 3 * TIMEOUT_MS;
    while (late < N - n_served && now_ms() < end) {
        struct pollfd pfd[N];
        unsigned n = 0;

        for (i = 0; i < N; i++) {
            if (fd[i] >= 0) {
                pfd[n++] = (struct pollfd) { .fd = fd[i], .events = POLLIN };
            }
        }
        if (poll(pfd, n, 1000) <= 0) {
            continue;
        }
        for (i = 0; i < n; i++) {
            RdmaCmMuxHdr h;
            RdmaCmMuxMad m;
            unsigned j;

            if (!pfd[i].revents) {
                continue;
            }
            for (j = 0; fd[j] != pfd[i].fd; j++) {
                /* find its slot */
            }
            if (read_msg(fd[j], &h, &m, TIMEOUT_MS) == 1 &&
                h.status == -ENOENT) {
                late++;
            }
            close(fd[j]);
            fd[j] = -1;
        }
    }
    for (i = 0; i < N; i++) {
        if (fd[i] >= 0) {
            close(fd[i]);
        }
    }
    report(late == N - n_served, "fdlimit/waiting-clients-served-later",
           "%u of %u", late, N - n_served);
    service_check("fdlimit/service-after", gid_a);
}

/*
 * A GID belongs to one client: another, of whatever user, can neither
 * take it nor send from it, nor get the MADs addressed to it by sending
 * requests with the communication IDs that replies will name.
 */
static void test_ownership(void)
{
    enum { SPRAY = 32, ID = 0xc1000000 };
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
    RdmaCmMuxMad m;
    unsigned i, bad = 0;
    Conn *a = conn_open(), *b = conn_open();
    Conn *x = conn_wrap(connect_as(60001));

    if (!a || !b || !x || gid_request(a, RDMACM_MUX_REGISTER, gid_a)) {
        report(false, "ownership/setup", "cannot connect and register");
        goto out;
    }
    expect_status("ownership/other-user-cannot-register-held-gid",
                  gid_request(x, RDMACM_MUX_REGISTER, gid_a), -EADDRINUSE);
    make_mad(mad, ATTR_REQ, ID - 1, 0);
    expect_status("ownership/other-user-cannot-send-from-held-gid",
                  send_mad(x, gid_a, gid_b, mad), -EPERM);
    expect_status("ownership/other-user-cannot-release-held-gid",
                  gid_request(x, RDMACM_MUX_UNREGISTER, gid_a), -ENOENT);

    /* A sprays REQs with IDs to B's GID before B holds it (dropped). */
    for (i = 0; i < SPRAY; i++) {
        make_mad(mad, ATTR_REQ, ID + i, 0);
        bad += send_mad(a, gid_a, gid_b, mad) != 0;
    }
    report(bad == 0, "ownership/spray-sent", "%u SENDs failed", bad);
    barrier("ownership/barrier", a, gid_a);
    if (gid_request(b, RDMACM_MUX_REGISTER, gid_b)) {
        report(false, "ownership/register-b", "cannot register B");
        goto out;
    }
    /* A reply for B's GID that names one of A's IDs is B's. */
    make_mad(mad, ATTR_REP, 0xc2000000, ID + SPRAY / 2);
    exchange("ownership/comm-id-spray-takes-no-reply", b, gid_b, b, gid_b,
             mad);
    make_mad(mad, ATTR_DREQ, 0xc2000000, ID + SPRAY - 1);
    exchange("ownership/comm-id-spray-takes-no-dreq", b, gid_b, b, gid_b,
             mad);
    report(!wait_recv(a, &m, 300), "ownership/sprayer-got-nothing",
           "A received a MAD addressed to B's GID");

    /* Its GIDs are free as soon as its holder is gone. */
    conn_close(a);
    a = NULL;
    expect_status("ownership/gid-free-after-holder-left",
                  register_gid(x, gid_a), 0);
    make_mad(mad, ATTR_REQ, 0xc3000000, 0);
    exchange("ownership/new-holder-sends-and-receives", x, gid_a, x, gid_a,
             mad);
out:
    conn_close(a);
    conn_close(b);
    conn_close(x);
}

/* Reads the REPLY (seq 0) that announces an eviction, then EOF. */
static bool evicted(Conn *c)
{
    RdmaCmMuxHdr h;
    RdmaCmMuxMad m;
    char byte;

    return read_msg(c->fd, &h, &m, TIMEOUT_MS) == 1 &&
           h.type == RDMACM_MUX_REPLY && h.seq == 0 &&
           h.status == -ETIMEDOUT &&
           read_all(c->fd, &byte, 1, TIMEOUT_MS) == -1;
}

/* Connects until the daemon takes the client (bounded); NULL if never. */
static Conn *admitted(void)
{
    int64_t end = now_ms() + 3 * TIMEOUT_MS;

    do {
        Conn *c = conn_open();

        if (c && admission(c) == 0) {
            return c;
        }
        conn_close(c);
        sleep_ms(200);
    } while (now_ms() < end);
    return NULL;
}

/* A client is served: it gets the REPLY to a request. */
static bool served(Conn *c)
{
    return gid_request(c, RDMACM_MUX_UNREGISTER, gid_c) == -ENOENT;
}

/*
 * Idle clients make room (run-tests.sh starts the daemon with
 * --max-clients-per-uid 4 --idle-timeout 1): a client that holds no GID
 * and sent no request for a second is evicted, the longest idle first, when
 * a new client of its user would be refused; one holding a GID never is.
 */
static void test_idle(void)
{
    enum { BOUND = 4 };
    Conn *c[BOUND + 1] = { NULL }, *late = NULL;
    uint8_t gid[16];
    unsigned i;

    /* c[0] and c[1] hold GIDs; c[2] is idle longer than c[3]. */
    for (i = 0; i < BOUND; i++) {
        c[i] = conn_open();
        fake_gid(gid, 2, i);
        if (!c[i] || (i < 2 ? gid_request(c[i], RDMACM_MUX_REGISTER, gid)
                            : !served(c[i]))) {
            report(false, "idle/setup", "client %u not served", i);
            goto out;
        }
        sleep_ms(100);
    }
    c[BOUND] = admitted();
    report(c[BOUND], "idle/new-client-gets-an-idle-clients-place",
           "refused for %d s", 3 * TIMEOUT_MS / 1000);
    report(evicted(c[2]), "idle/longest-idle-evicted-and-told",
           "no REPLY -ETIMEDOUT and EOF");
    report(served(c[3]), "idle/other-idle-client-kept", "not served");
    report(served(c[0]) && served(c[1]), "idle/gid-holders-kept",
           "not served");
    if (!c[BOUND]) {
        goto out;
    }

    /* Now all four hold a GID: none is ever evicted. */
    fake_gid(gid, 2, 3);
    if (gid_request(c[3], RDMACM_MUX_REGISTER, gid) ||
        (fake_gid(gid, 2, 4), gid_request(c[BOUND], RDMACM_MUX_REGISTER,
                                           gid))) {
        report(false, "idle/register", "cannot register");
        goto out;
    }
    sleep_ms(3000);             /* three times the idle timeout */
    late = conn_open();
    expect_status("idle/gid-holders-never-evicted",
                  late ? admission(late) : NO_REPLY, -EUSERS);
    conn_close(late);

    /* Without its GID, a client is idle again. */
    fake_gid(gid, 2, 0);
    expect_status("idle/unregister", gid_request(c[0], RDMACM_MUX_UNREGISTER,
                                                 gid), 0);
    late = admitted();
    report(late && evicted(c[0]), "idle/evictable-once-its-gid-is-released",
           "%s", late ? "not evicted" : "no place made");
out:
    for (i = 0; i <= BOUND; i++) {
        conn_close(c[i]);
    }
    conn_close(late);
}

/*
 * --allow-gids (run-tests.sh: 0=GID A, 60001=GID B and 60001=fe80::/64):
 * a client registers only what a rule of its user covers, even a GID that
 * nobody holds.
 */
static void test_policy(void)
{
    uint8_t gid[16], mad[RDMACM_MUX_MAD_SIZE];
    Conn *a = conn_open(), *b = conn_wrap(connect_as(60001));
    Conn *x = conn_wrap(connect_as(60002));

    if (!a || !b || !x) {
        report(false, "policy/setup", "cannot connect");
        goto out;
    }
    expect_status("policy/own-gid-registered",
                  gid_request(a, RDMACM_MUX_REGISTER, gid_a), 0);
    expect_status("policy/unheld-gid-of-another-user-refused",
                  gid_request(a, RDMACM_MUX_REGISTER, gid_b), -EACCES);
    expect_status("policy/other-users-own-gid-registered",
                  gid_request(b, RDMACM_MUX_REGISTER, gid_b), 0);
    fake_gid(gid, 3, 1);
    expect_status("policy/gid-in-prefix-registered",
                  gid_request(b, RDMACM_MUX_REGISTER, gid), 0);
    expect_status("policy/user-without-rule-refused",
                  gid_request(x, RDMACM_MUX_REGISTER, gid_c), -EACCES);
    make_mad(mad, ATTR_REQ, 0xd1000000, 0);
    exchange("policy/allowed-gids-exchange-mads", a, gid_a, b, gid_b, mad);
    /* Released, A's GID is still not B's user's to take. */
    expect_status("policy/release",
                  gid_request(a, RDMACM_MUX_UNREGISTER, gid_a), 0);
    expect_status("policy/released-gid-of-another-user-refused",
                  gid_request(b, RDMACM_MUX_REGISTER, gid_a), -EACCES);
out:
    conn_close(a);
    conn_close(b);
    conn_close(x);
}

/* The socket lets this user connect and be served (-u, -g). */
static void test_connect(void)
{
    Conn *c = conn_open();

    report(c && served(c), "connect", "%s", c ? "not served"
                                              : strerror(errno));
    conn_close(c);
}

/* The socket's permissions refuse this user (-u, -g). */
static void test_connect_denied(void)
{
    int fd = connect_raw();

    report(fd < 0 && errno == EACCES, "connect-denied", "%s",
           fd < 0 ? strerror(errno) : "connected");
    if (fd >= 0) {
        close(fd);
    }
}

/*
 * Tries to connect (as -u, -g) while a daemon starts: from before the
 * socket exists until 3 s after it does.  No attempt may succeed: the
 * daemon gives the socket its permissions before it listens.
 */
static void test_connect_race(void)
{
    int64_t end = now_ms() + 60000, seen = 0;
    unsigned tries = 0, after = 0, won = 0;
    struct stat st;

    while (now_ms() < end && (!seen || now_ms() - seen < 3000)) {
        int fd = connect_raw();

        tries++;
        if (fd >= 0) {
            won++;
            close(fd);
        }
        if (!seen && lstat(sock_path, &st) == 0) {
            seen = now_ms();
        }
        after += seen != 0;
        sleep_ms(1);
    }
    report(seen && !won, "connect-race", "%s: %u of %u attempts connected",
           seen ? "socket seen" : "no socket in 60 s", won, tries);
    printf("# %u attempts, %u with the socket there\n", tries, after);
}

/* Holds a GID until the daemon goes away, which it must tell by EOF. */
static void test_hold(void)
{
    Conn *c = conn_open();
    RdmaCmMuxMad m;
    RdmaCmMuxHdr h;

    if (!c || gid_request(c, RDMACM_MUX_REGISTER, gid_a)) {
        report(false, "hold/registered", "cannot register %s", gstr(gid_a));
        conn_close(c);
        return;
    }
    pass("hold/registered");
    report(read_msg(c->fd, &h, &m, 60000) == -1,
           "hold/disconnected-by-daemon-exit", "no EOF within 60 s");
    conn_close(c);
}

/* Leaves a socket file nobody listens on, as a killed daemon does. */
static int make_stale(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);

    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        listen(fd, 1) < 0) {
        perror(path);
        return 1;
    }
    return 0;                   /* exit closes it; the file stays */
}

static bool parse_gid_arg(const char *s, uint8_t *gid)
{
    struct in_addr a4;

    if (inet_pton(AF_INET6, s, gid) == 1) {
        return true;
    }
    /* An IPv4 address stands for its RoCE v2 GID ::ffff:a.b.c.d. */
    if (inet_pton(AF_INET, s, &a4) == 1) {
        memset(gid, 0, 10);
        gid[10] = gid[11] = 0xff;
        memcpy(gid + 12, &a4, 4);
        return true;
    }
    return false;
}

static void test_service(void)
{
    service_check("service", gid_a);
}

static void usage(void)
{
    fprintf(stderr, "usage: mux-test [-a GID] [-b GID] [-c IPV4] [-i NETDEV] "
            "[-u UID] [-g GID] SOCKET TEST...\n");
}

/* -u and -g: the tests of the socket's permissions run as another user. */
static bool drop_privileges(void)
{
    if (run_gid >= 0 &&
        (setgroups(0, NULL) < 0 || setgid(run_gid) < 0)) {
        perror("mux-test: setgid");
        return false;
    }
    if (run_uid >= 0 && setuid(run_uid) < 0) {
        perror("mux-test: setuid");
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*run)(void);
    } tests[] = {
        { "basic", test_basic },
        { "routing", test_routing },
        { "abuse", test_abuse },
        { "flood", test_flood },
        { "churn", test_churn },
        { "maxclients", test_maxclients },
        { "runtime-gid", test_runtime_gid },
        { "ownership", test_ownership },
        { "idle", test_idle },
        { "policy", test_policy },
        { "connect", test_connect },
        { "connect-denied", test_connect_denied },
        { "connect-race", test_connect_race },
        { "fdlimit", test_fdlimit },
        { "hold", test_hold },
        { "service", test_service },
    };
    int opt, i;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 3 && !strcmp(argv[1], "mkstale")) {
        return make_stale(argv[2]);
    }
    parse_gid_arg("10.0.2.15", gid_a);
    parse_gid_arg("10.0.2.16", gid_b);
    parse_gid_arg("10.0.2.17", gid_c);
    while ((opt = getopt(argc, argv, "a:b:c:i:u:g:")) != -1) {
        uint8_t *g = opt == 'a' ? gid_a : opt == 'b' ? gid_b : gid_c;

        if (opt == 'i') {
            gid_c_dev = optarg;
        } else if (opt == 'u' || opt == 'g') {
            *(opt == 'u' ? &run_uid : &run_gid) = atol(optarg);
        } else if (opt == '?' || !parse_gid_arg(optarg, g)) {
            usage();
            return 2;
        }
    }
    if (optind + 2 > argc) {
        usage();
        return 2;
    }
    if (!drop_privileges()) {
        return 2;
    }
    sock_path = argv[optind];
    next_tid = (uint32_t)getpid() << 16;
    for (i = optind + 1; i < argc; i++) {
        const char *t = argv[i];
        size_t j;

        for (j = 0; j < sizeof(tests) / sizeof(tests[0]); j++) {
            if (!strcmp(t, tests[j].name)) {
                break;
            }
        }
        if (j == sizeof(tests) / sizeof(tests[0])) {
            fprintf(stderr, "mux-test: unknown test '%s'\n", t);
            return 2;
        }
        tests[j].run();
    }
    return failures ? 1 : 0;
}
