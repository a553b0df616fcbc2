/*
 * libFuzzer harness for contrib/rdmacm-mux: byte streams from several fake
 * clients, and MADs from a fake port, through the daemon's own client and
 * routing code (client.c and route.c, linked unchanged).
 *
 * Clients are socketpairs handed to mux_client_add() with made-up
 * credentials, or real connections to a listening socket that the daemon's
 * accept code takes; what they "send" is written into their end and the
 * daemon reads it with its own recv().  The daemon's ends have small send
 * buffers, so that clients that do not read fill their output queues.
 * port.c (umad) and main.c (the poll loop) are not linked: mux_port_send()
 * below records what the daemon would put on the wire, and the operations
 * below play the loop's part.  log.c is replaced too, so that the fuzzer's
 * output is not drowned in log lines (the formats are still expanded).
 *
 * The input is a list of operations, each an opcode byte and its operands;
 * a missing operand reads as 0.  The first byte sets the bounds:
 * --max-clients-per-uid (1 to 8, bits 0-2), --idle-timeout (never, 0.1, 1
 * or 60 s, bits 3-4), and whether --allow-gids rules apply (bit 5).
 *
 *   0 CONNECT   uid                  a client of that uid connects
 *   1 RAW       client len16 bytes   raw bytes from a client
 *   2 REGISTER  client seq gidsel    a well-formed REGISTER
 *   3 UNREG     client seq gidsel    a well-formed UNREGISTER
 *   4 SEND      client seq gidsel gidsel attr npokes (off16 byte)*
 *                                    a well-formed SEND of a CM MAD with
 *                                    npokes bytes overwritten anywhere in it
 *   5 RX        gidsel gidsel attr   the port receives a CM MAD
 *   6 LOOPBACK                       the last MAD sent comes back
 *   7 CLOSE     client               a client hangs up
 *   8 DRAIN     client               a client reads all it was sent
 *   9 TICK      n                    100 ms * n pass
 *  10 LOOP                           one pass of the daemon's loop
 *  11 PORTFAIL  status               the port's next SENDs fail (or not)
 *  12 ACCEPT    n                    n+1 clients (of this process's user)
 *                                    connect to a listening socket, and
 *                                    the daemon's accept code takes them
 *
 * "client" picks among the connected clients (modulo their number); a
 * gidsel below 0x80 picks one of a few GIDs, else 16 bytes follow.
 *
 * Besides the sanitizers, the harness checks the daemon's promises: it
 * sends only from GIDs the sending client holds, a received MAD goes only
 * to its destination GID's owner, every byte a client is sent is a
 * well-formed REPLY or RECV, the bounds on clients hold, only idle clients
 * without GIDs are evicted, with rules a client holds only GIDs they give
 * its user, and once every client is gone no GID is held.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mux.h"

#define MAX_CONNECTS    300     /* per input */
#define MAX_FD          4096
#define MSG_MAX         (sizeof(RdmaCmMuxHdr) + sizeof(RdmaCmMuxMad))

/* Stand-ins for log.c */

bool mux_verbose = true;

void mux_log(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
}

void mux_debug(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
}

const char *mux_gid_str(const uint8_t *gid, char *buf, size_t len)
{
    if (!inet_ntop(AF_INET6, gid, buf, len)) {
        snprintf(buf, len, "?");
    }
    return buf;
}

/* --allow-gids rules, when the first byte asks for them. */
static const MuxGidRule rules[] = {
    { .uid = 0, .prefix = { 0xfe, 0x80 }, .len = 64 },
    { .uid = 1, .prefix = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 },
      .len = 128 },
    /* Lengths that end inside a byte: 10.0.2.0/27 and fe80::/10. */
    { .uid = 2, .prefix = { [10] = 0xff, [11] = 0xff, 10, 0, 2 },
      .len = 96 + 27 },
    { .uid = 3, .prefix = { 0xfe, 0x80 }, .len = 10 },
};

/* The rules, as the harness reads them: bit by bit. */
static bool rules_allow(uid_t uid, const uint8_t *gid)
{
    size_t i;
    unsigned bit;

    for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++) {
        for (bit = 0; bit < rules[i].len; bit++) {
            if ((gid[bit / 8] ^ rules[i].prefix[bit / 8]) &
                (0x80 >> bit % 8)) {
                break;
            }
        }
        if (rules[i].uid == uid && bit == rules[i].len) {
            return true;
        }
    }
    return false;
}

/* The harness's state, reset for each input */

static Mux mux;
static MuxClient *sender;       /* whose input the daemon is handling */
static RdmaCmMuxMad last_sent;
static bool have_sent;
static int port_status;
static unsigned n_connects;
static int peer_of[MAX_FD];     /* the harness's end of a daemon fd */
static int peers[MAX_CONNECTS]; /* all of them, to close at the end */
static unsigned n_peers;
static uint8_t pending[MAX_FD][MSG_MAX];    /* a partly read message */
static size_t pending_len[MAX_FD];
static int listen_fd = -1;      /* for ACCEPT, created once */
static struct sockaddr_un listen_addr;

#define CHECK(cond) do { if (!(cond)) { \
        fprintf(stderr, "fuzz-mux: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        abort(); \
    } } while (0)

/* The port, instead of port.c: what the daemon sends is recorded. */
int mux_port_send(MuxPort *p, const RdmaCmMuxMad *m)
{
    (void)p;
    CHECK(sender && mux_route_owns(&sender->route, m->sgid));
    last_sent = *m;
    have_sent = true;
    return port_status;
}

/* Input */

typedef struct Input {
    const uint8_t *p;
    size_t left;
} Input;

static uint8_t take8(Input *in)
{
    if (!in->left) {
        return 0;
    }
    in->left--;
    return *in->p++;
}

static uint16_t take16(Input *in)
{
    uint16_t lo = take8(in);

    return lo | take8(in) << 8;
}

static void take_gid(Input *in, uint8_t *gid)
{
    static const uint8_t gids[][16] = {
        { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 },
        { [10] = 0xff, [11] = 0xff, 10, 0, 2, 16 },
        { 0xfe, 0x80, [15] = 1 },
        { 0xfe, 0x80, [15] = 2 },
        { 0 },
        { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
          0xff, 0xff, 0xff, 0xff, 0xff },
    };
    uint8_t sel = take8(in);
    size_t i;

    if (sel < 0x80) {
        memcpy(gid, gids[sel % (sizeof(gids) / sizeof(gids[0]))], 16);
        return;
    }
    for (i = 0; i < 16; i++) {
        gid[i] = take8(in);
    }
}

/* The sel-th connected client, or NULL. */
static MuxClient *pick(Input *in)
{
    unsigned sel = take8(in), i;

    if (!mux.n_clients) {
        return NULL;
    }
    sel %= mux.n_clients;
    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        if (mux.clients[i] && !sel--) {
            return mux.clients[i];
        }
    }
    CHECK(!"n_clients is more than the clients in slots");
    return NULL;
}

/* The daemon's side of things */

static void service(MuxClient *c)
{
    sender = c;
    mux_client_service(&mux, c);
    sender = NULL;
}

/* What run() in main.c does after the clients' events. */
static void loop_pass(void)
{
    unsigned i;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        MuxClient *c = mux.clients[i];

        if (c && !c->dead) {
            service(c);
        }
        if (c && !c->dead) {
            mux_client_flush(c);
        }
        if (c && c->dead) {
            mux_client_close(&mux, c);
        }
    }
}

/* A MAD from the port goes to its destination GID's owner or nobody. */
static void port_receives(const RdmaCmMuxMad *m)
{
    size_t before[MUX_MAX_CLIENTS];
    unsigned i, grew = 0;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        MuxClient *c = mux.clients[i];

        before[i] = c ? c->out_len - c->out_off : 0;
    }
    mux_client_route(&mux, m);
    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        MuxClient *c = mux.clients[i];

        if (c && c->out_len - c->out_off != before[i]) {
            CHECK(mux_route_owns(&c->route, m->dgid));
            grew++;
        }
    }
    CHECK(grew <= 1);
}

static void make_mad(Input *in, uint8_t *mad)
{
    static const uint16_t attrs[] = {
        0x0010, 0x0011, 0x0012, 0x0013, 0x0014, 0x0015, 0x0016, 0x0017,
        0x0018, 0x0019, 0x0000, 0xffff,
    };
    uint16_t attr = attrs[take8(in) % (sizeof(attrs) / sizeof(attrs[0]))];
    size_t i;

    memset(mad, 0, RDMACM_MUX_MAD_SIZE);
    mad[MUX_MAD_BASE_VERSION] = 1;
    mad[MUX_MAD_CLASS] = 0x07;
    mad[MUX_MAD_CLASS_VERSION] = MUX_CM_CLASS_VERSION;
    mad[MUX_MAD_METHOD] = 0x03;
    mad[MUX_MAD_ATTR_ID] = attr >> 8;
    mad[MUX_MAD_ATTR_ID + 1] = attr;
    for (i = MUX_MAD_LOCAL_COMM_ID; i < MUX_MAD_LOCAL_COMM_ID + 8; i++) {
        mad[i] = take8(in);
    }
}

/* The harness's end of a client */

static void client_write(MuxClient *c, const void *buf, size_t len)
{
    int peer = peer_of[c->fd];

    /* A full socket buffer drops the rest: the daemon must cope. */
    if (send(peer, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
        CHECK(errno == EAGAIN || errno == EWOULDBLOCK || errno == EPIPE ||
              errno == ECONNRESET);
    }
    service(c);
}

static void client_request(MuxClient *c, uint16_t type, uint32_t seq,
                           const void *body, uint32_t len)
{
    uint8_t buf[MSG_MAX];
    RdmaCmMuxHdr h = {
        .magic = RDMACM_MUX_MAGIC,
        .version = RDMACM_MUX_VERSION,
        .type = type,
        .seq = seq,
        .len = len,
    };

    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), body, len);
    client_write(c, buf, sizeof(h) + len);
}

/* Everything a client is sent must be a REPLY or a RECV, whole. */
static void check_output(int peer, const uint8_t *data, size_t len)
{
    uint8_t *pend = pending[peer];
    size_t *plen = &pending_len[peer];

    while (len) {
        size_t n = MSG_MAX - *plen < len ? MSG_MAX - *plen : len;

        memcpy(pend + *plen, data, n);
        *plen += n;
        data += n;
        len -= n;
        while (*plen >= sizeof(RdmaCmMuxHdr)) {
            RdmaCmMuxHdr h;
            size_t whole;

            memcpy(&h, pend, sizeof(h));
            CHECK(h.magic == RDMACM_MUX_MAGIC &&
                  h.version == RDMACM_MUX_VERSION && h.reserved == 0);
            CHECK((h.type == RDMACM_MUX_REPLY && h.len == 0) ||
                  (h.type == RDMACM_MUX_RECV &&
                   h.len == sizeof(RdmaCmMuxMad)));
            whole = sizeof(h) + h.len;
            if (*plen < whole) {
                break;
            }
            memmove(pend, pend + whole, *plen - whole);
            *plen -= whole;
        }
    }
}

static void client_drain(MuxClient *c)
{
    int peer = peer_of[c->fd];
    uint8_t buf[8192];
    ssize_t n;

    while ((n = recv(peer, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
        check_output(peer, buf, n);
    }
    service(c);
}

/* Operations */

static MuxClient *client_by_id(unsigned id)
{
    unsigned i;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        if (mux.clients[i] && mux.clients[i]->id == id) {
            return mux.clients[i];
        }
    }
    return NULL;
}

/*
 * Only an idle client without GIDs may be evicted to admit a new one: the
 * ids of the others, which must survive the connection.
 */
static unsigned keepers(unsigned *ids)
{
    unsigned i, n = 0;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        MuxClient *c = mux.clients[i];

        if (c && !c->dead &&
            (c->route.n_gids || !mux.idle_ms ||
             mux.now_ms - c->last_request_ms < mux.idle_ms)) {
            ids[n++] = c->id;
        }
    }
    return n;
}

/* Admits fd, or not, and checks that no keeper was evicted for it. */
static void add_client(int fd, const MuxPeer *peer, bool accept)
{
    unsigned ids[MUX_MAX_CLIENTS], n = keepers(ids), i;

    if (accept) {
        mux.listen_fd = listen_fd;
        mux_client_accept(&mux);
        mux.listen_fd = -1;
    } else {
        mux_client_add(&mux, fd, peer);
    }
    for (i = 0; i < n; i++) {
        CHECK(client_by_id(ids[i]));
    }
}

/* The harness keeps peer, the other end of the daemon's fd. */
static void track(int fd, int peer)
{
    int small = 4096;

    CHECK(fd < MAX_FD && peer < MAX_FD);
    /* A client that does not read soon fills the daemon's queue. */
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof(small));
    peers[n_peers++] = peer;
    peer_of[fd] = peer;
    pending_len[peer] = 0;
}

static void op_connect(Input *in)
{
    MuxPeer peer = { .pid = 1000 + n_connects, .uid = take8(in) };
    int sv[2];

    if (n_connects >= MAX_CONNECTS ||
        socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
                   sv) < 0) {
        return;
    }
    n_connects++;
    track(sv[0], sv[1]);
    add_client(sv[0], &peer, false);
}

/*
 * Connections through the daemon's accept code, SO_PEERCRED included, one
 * at a time so that the harness knows which client each one became.
 */
static void op_accept(Input *in)
{
    unsigned n = take8(in) % 4 + 1;

    while (n-- && n_connects < MAX_CONNECTS) {
        unsigned id = mux.next_id;
        int conn = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                          0);

        CHECK(conn >= 0 && conn < MAX_FD);
        CHECK(connect(conn, (struct sockaddr *)&listen_addr,
                      sizeof(listen_addr)) == 0);
        n_connects++;
        add_client(-1, NULL, true);
        if (mux.next_id != id) {
            CHECK(client_by_id(mux.next_id));
            track(client_by_id(mux.next_id)->fd, conn);
        } else {
            /* Refused: the daemon closed its end; ours goes at the end. */
            peers[n_peers++] = conn;
            pending_len[conn] = 0;
        }
    }
}

static void op_raw(Input *in)
{
    MuxClient *c = pick(in);
    size_t len = take16(in) % 1024;
    uint8_t buf[1024];

    len = len < in->left ? len : in->left;
    memcpy(buf, in->p, len);
    in->p += len;
    in->left -= len;
    if (c) {
        client_write(c, buf, len);
    }
}

static void op_gid(Input *in, uint16_t type)
{
    MuxClient *c = pick(in);
    uint32_t seq = take8(in);
    RdmaCmMuxGid g;

    take_gid(in, g.gid);
    if (c) {
        client_request(c, type, seq, &g, sizeof(g));
        /* With rules, a client holds only what a rule of its user covers. */
        CHECK(!mux.n_gid_rules || !mux_route_owns(&c->route, g.gid) ||
              rules_allow(c->peer.uid, g.gid));
    }
}

static void op_send(Input *in)
{
    MuxClient *c = pick(in);
    uint32_t seq = take8(in);
    RdmaCmMuxMad m = { .qpn = 1, .qkey = 0x80010000, .hop_limit = 64 };
    unsigned pokes;

    take_gid(in, m.sgid);
    take_gid(in, m.dgid);
    make_mad(in, m.mad);
    for (pokes = take8(in) % 8; pokes; pokes--) {
        unsigned off = take16(in) % sizeof(m);

        ((uint8_t *)&m)[off] = take8(in);
    }
    if (c) {
        client_request(c, RDMACM_MUX_SEND, seq, &m, sizeof(m));
    }
}

static void op_rx(Input *in)
{
    RdmaCmMuxMad m = { .qpn = 1, .qkey = 0x80010000 };

    take_gid(in, m.sgid);
    take_gid(in, m.dgid);
    make_mad(in, m.mad);
    port_receives(&m);
}

static void op_close(Input *in)
{
    MuxClient *c = pick(in);

    if (c) {
        shutdown(peer_of[c->fd], SHUT_RDWR);
        service(c);
    }
}

/* The daemon's promises that hold between any two operations. */
static void check_invariants(void)
{
    unsigned per_uid[257] = { 0 };
    unsigned i, n = 0;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        MuxClient *c = mux.clients[i];

        if (!c) {
            continue;
        }
        n++;
        CHECK(c->in_len <= MUX_IN_CAP);
        CHECK(c->out_off <= c->out_len && c->out_len <= MUX_OUT_CAP);
        CHECK(c->route.n_gids <= MUX_MAX_GIDS_PER_CLIENT);
        /* The harness's uids are below 256, the accepted ones are ours. */
        CHECK(c->peer.uid < 256 || c->peer.uid == getuid());
        CHECK(++per_uid[c->peer.uid < 256 ? c->peer.uid : 256] <=
              mux.max_per_uid);
    }
    CHECK(n == mux.n_clients && n <= MUX_MAX_CLIENTS);
}

static void run_op(Input *in)
{
    uint8_t op = take8(in);

    switch (op % 13) {
    case 0:
        op_connect(in);
        break;
    case 1:
        op_raw(in);
        break;
    case 2:
        op_gid(in, RDMACM_MUX_REGISTER);
        break;
    case 3:
        op_gid(in, RDMACM_MUX_UNREGISTER);
        break;
    case 4:
        op_send(in);
        break;
    case 5:
        op_rx(in);
        break;
    case 6:
        if (have_sent) {
            port_receives(&last_sent);
        }
        break;
    case 7:
        op_close(in);
        break;
    case 8: {
        MuxClient *c = pick(in);

        if (c) {
            client_drain(c);
        }
        break;
    }
    case 9:
        mux.now_ms += 100 * take8(in);
        break;
    case 10:
        loop_pass();
        break;
    case 11:
        port_status = take8(in) & 1 ? -EADDRNOTAVAIL : 0;
        break;
    case 12:
        op_accept(in);
        break;
    }
    check_invariants();
}

static void setup(Input *in)
{
    static const int64_t idle[] = { 0, 100, 1000, 60000 };
    uint8_t b = take8(in);

    memset(&mux, 0, sizeof(mux));
    mux.listen_fd = -1;
    mux.port.fd = -1;
    mux.max_per_uid = 1 + (b & 7);
    mux.idle_ms = idle[(b >> 3) & 3];
    mux.now_ms = 1000;
    if (b & 0x20) {
        mux.gid_rules = rules;
        mux.n_gid_rules = sizeof(rules) / sizeof(rules[0]);
    }
    sender = NULL;
    have_sent = false;
    port_status = 0;
    n_connects = 0;
    n_peers = 0;
    mux_route_init();
}

/* Every client goes; then no GID may be left held. */
static void teardown(void)
{
    static const uint8_t probe[2][16] = {
        { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 },
        { 0xfe, 0x80, [15] = 1 },
    };
    unsigned i;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        if (mux.clients[i]) {
            mux_client_close(&mux, mux.clients[i]);
        }
    }
    CHECK(mux.n_clients == 0);
    for (i = 0; i < 2; i++) {
        CHECK(!mux_route_lookup(probe[i]));
    }
    for (i = 0; i < n_peers; i++) {
        close(peers[i]);
    }
    mux_route_fini();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    struct rlimit rl;

    (void)argc;
    (void)argv;
    /* An abstract address: nothing in the file system to clean up. */
    listen_addr.sun_family = AF_UNIX;
    snprintf(listen_addr.sun_path + 1, sizeof(listen_addr.sun_path) - 1,
             "fuzz-mux-%d", (int)getpid());
    listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
                       0);
    if (listen_fd < 0 ||
        bind(listen_fd, (struct sockaddr *)&listen_addr,
             sizeof(listen_addr)) < 0 ||
        listen(listen_fd, 16) < 0) {
        perror("fuzz-mux: listening socket");
        abort();
    }
    /* Two descriptors per client, and up to MAX_CONNECTS clients. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < MAX_FD &&
        rl.rlim_max >= MAX_FD) {
        rl.rlim_cur = MAX_FD;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input in = { data, size };

    setup(&in);
    while (in.left) {
        run_op(&in);
    }
    teardown();
    return 0;
}
