/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * ucp-pattern: a small UCP program that moves known patterns between two
 * processes and checks every byte (issue 27: "a small UCP program of
 * yours that sends a known pattern and checks it").  Compiled by
 * tests/guest/build-guest.sh against Debian's libucx-dev; init's
 * t_ucp_pattern_* run it between two guests.
 *
 *   server# ucp-pattern [-p PORT] [-s SIZE] [-n ITERS]
 *   client# ucp-pattern [-p PORT] [-s SIZE] [-n ITERS] SERVER
 *
 * The worker addresses, and the server's buffer with its rkey, go over
 * one TCP connection (the out-of-band exchange, as ucx_perftest's); UCP
 * picks the transport, device and GID itself (UCX_TLS, UCX_NET_DEVICES,
 * UCX_IB_GID_INDEX as the user sets them).  Then:
 *   tag   the client sends ITERS messages of SIZE bytes (tag i, a pattern
 *         of its own per message); the server checks each and sends it
 *         back with every byte inverted; the client checks the echo;
 *   put   the client puts a pattern into the first SIZE bytes of the
 *         server's buffer and flushes; the server checks them;
 *   get   the client gets the second SIZE bytes, which the server filled
 *         with another pattern before it sent the rkey, and checks them.
 * Each side prints what it checked and exits 0 only if every byte of
 * every check matched and the peer said the same.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ucp/api/ucp.h>

#define TAG_DATA    0x1000000000ull     /* | message index */
#define TAG_ECHO    0x2000000000ull     /* | message index */
#define TAG_PUTDONE 0x3000000000ull
#define TAG_VERDICT 0x4000000000ull
#define WAIT_SECONDS 60

static const char *side = "server";
static ucp_worker_h worker;

/*
 * The byte at OFFSET of pattern SEED: a xorshift stream, so that no two
 * messages, and no two places in one, look alike.
 */
static uint8_t pattern_byte(uint64_t seed, size_t offset)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + (offset >> 3) + 1;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (uint8_t)(x >> (8 * (offset & 7)));
}

static void fill(uint8_t *buf, size_t len, uint64_t seed)
{
    size_t i;

    for (i = 0; i < len; i++) {
        buf[i] = pattern_byte(seed, i);
    }
}

/*
 * Check BUF against pattern SEED (inverted if INVERT); print the first
 * bad byte and the count of bad ones.  Returns the count.
 */
static size_t check(const char *what, const uint8_t *buf, size_t len,
                    uint64_t seed, int invert)
{
    size_t i, bad = 0;

    for (i = 0; i < len; i++) {
        uint8_t want = pattern_byte(seed, i) ^ (invert ? 0xff : 0);

        if (buf[i] != want) {
            if (!bad) {
                printf("%s: FAILED: %s: byte %zu is 0x%02x, want 0x%02x\n",
                       side, what, i, buf[i], want);
            }
            bad++;
        }
    }
    if (bad) {
        printf("%s: FAILED: %s: %zu of %zu bytes differ\n", side, what, bad,
               len);
    }
    return bad;
}

static void die(const char *fmt, const char *arg)
{
    printf("%s: FAILED: ", side);
    printf(fmt, arg);
    printf("\n");
    exit(1);
}

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Progress until REQ completes; a bounded wait, so that a lost peer is a
 * message and not a hang.
 */
static ucs_status_t wait_req(void *req, const char *what)
{
    double end = now() + WAIT_SECONDS;
    ucs_status_t st;

    if (req == NULL) {
        return UCS_OK;
    }
    if (UCS_PTR_IS_ERR(req)) {
        st = UCS_PTR_STATUS(req);
        printf("%s: FAILED: %s: %s\n", side, what, ucs_status_string(st));
        return st;
    }
    while ((st = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        ucp_worker_progress(worker);
        if (now() > end) {
            printf("%s: FAILED: %s: not done after %d s\n", side, what,
                   WAIT_SECONDS);
            return UCS_ERR_TIMED_OUT;
        }
    }
    ucp_request_free(req);
    if (st != UCS_OK) {
        printf("%s: FAILED: %s: %s\n", side, what, ucs_status_string(st));
    }
    return st;
}

static ucs_status_t tag_send(ucp_ep_h ep, void *buf, size_t len,
                             ucp_tag_t tag, const char *what)
{
    ucp_request_param_t p = { 0 };

    return wait_req(ucp_tag_send_nbx(ep, buf, len, tag, &p), what);
}

static ucs_status_t tag_recv(void *buf, size_t len, ucp_tag_t tag,
                             const char *what)
{
    ucp_request_param_t p = { 0 };
    ucp_tag_recv_info_t info = { 0 };
    double end = now() + WAIT_SECONDS;
    ucs_status_t st;
    void *req;

    /*
     * the info is filled in here if the receive completes at once, else
     * ucp_tag_recv_request_test() gives it
     */
    p.op_attr_mask = UCP_OP_ATTR_FIELD_RECV_INFO;
    p.recv_info.tag_info = &info;
    req = ucp_tag_recv_nbx(worker, buf, len, tag, (ucp_tag_t)-1, &p);
    if (UCS_PTR_IS_ERR(req)) {
        st = UCS_PTR_STATUS(req);
        printf("%s: FAILED: %s: %s\n", side, what, ucs_status_string(st));
        return st;
    }
    if (req != NULL) {
        while ((st = ucp_tag_recv_request_test(req, &info)) ==
               UCS_INPROGRESS) {
            ucp_worker_progress(worker);
            if (now() > end) {
                printf("%s: FAILED: %s: not done after %d s\n", side, what,
                       WAIT_SECONDS);
                return UCS_ERR_TIMED_OUT;
            }
        }
        ucp_request_free(req);
        if (st != UCS_OK) {
            printf("%s: FAILED: %s: %s\n", side, what,
                   ucs_status_string(st));
            return st;
        }
    }
    if (info.length != len) {
        printf("%s: FAILED: %s: %zu bytes, want %zu\n", side, what,
               info.length, len);
        return UCS_ERR_MESSAGE_TRUNCATED;
    }
    return UCS_OK;
}

/* The out-of-band exchange: length-prefixed blobs over one TCP socket. */
static void send_blob(int fd, const void *buf, uint32_t len)
{
    uint32_t n = htonl(len);

    if (write(fd, &n, 4) != 4 || write(fd, buf, len) != (ssize_t)len) {
        die("out-of-band send: %s", strerror(errno));
    }
}

static void recv_all(int fd, void *buf, size_t len)
{
    size_t got = 0;

    while (got < len) {
        ssize_t r = read(fd, (uint8_t *)buf + got, len - got);

        if (r <= 0) {
            die("out-of-band receive: %s", r ? strerror(errno) : "EOF");
        }
        got += r;
    }
}

static void *recv_blob(int fd, uint32_t *len)
{
    uint32_t n;
    void *buf;

    recv_all(fd, &n, 4);
    *len = ntohl(n);
    buf = malloc(*len);
    if (!buf) {
        die("%s", "out of memory");
    }
    recv_all(fd, buf, *len);
    return buf;
}

/*
 * Say "done" on the out-of-band socket and wait for the peer's, while
 * the worker goes on progressing (acknowledging for the peer's close).
 * Returns 1 when the peer said it.
 */
static int oob_barrier(int fd)
{
    double end = now() + WAIT_SECONDS;
    char c = 'd';

    if (write(fd, &c, 1) != 1) {
        printf("%s: FAILED: out-of-band done: %s\n", side, strerror(errno));
        return 0;
    }
    while (now() < end) {
        ssize_t r = recv(fd, &c, 1, MSG_DONTWAIT);

        if (r == 1) {
            return 1;
        }
        if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
            printf("%s: FAILED: out-of-band done: the peer %s\n", side,
                   r ? strerror(errno) : "closed the connection");
            return 0;
        }
        ucp_worker_progress(worker);
    }
    printf("%s: FAILED: out-of-band done: no word from the peer in %d s\n",
           side, WAIT_SECONDS);
    return 0;
}

static int oob_connect(const char *host, const char *port)
{
    struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
    int fd = -1, i;

    if (getaddrinfo(host, port, &hints, &ai)) {
        die("cannot resolve %s", host);
    }
    /* the server may not listen yet: try for a while */
    for (i = 0; i < 100 && fd < 0; i++) {
        for (a = ai; a; a = a->ai_next) {
            fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
            if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0) {
                break;
            }
            if (fd >= 0) {
                close(fd);
            }
            fd = -1;
        }
        if (fd < 0) {
            usleep(200000);
        }
    }
    freeaddrinfo(ai);
    if (fd < 0) {
        die("cannot connect to %s", host);
    }
    return fd;
}

static int oob_accept(int port)
{
    struct sockaddr_in6 sa = { .sin6_family = AF_INET6,
                               .sin6_port = htons(port),
                               .sin6_addr = IN6ADDR_ANY_INIT };
    int one = 1, lfd, fd;

    lfd = socket(AF_INET6, SOCK_STREAM, 0);
    if (lfd < 0) {
        die("socket: %s", strerror(errno));
    }
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1)) {
        die("bind/listen: %s", strerror(errno));
    }
    fd = accept(lfd, NULL, NULL);
    if (fd < 0) {
        die("accept: %s", strerror(errno));
    }
    close(lfd);
    return fd;
}

/*
 * The client's exchange: tag messages out and their echoes back, a put
 * into the server's buffer, a get from it.  Returns the bad bytes.
 */
static size_t client_run(ucp_ep_h ep, uint8_t *msg, size_t size,
                         unsigned iters, uint64_t remote, ucp_rkey_h rkey)
{
    ucp_request_param_t p = { 0 };
    size_t bad = 0, b;
    unsigned i;
    char what[64];

    for (i = 0; i < iters; i++) {
        fill(msg, size, 1000 + i);
        snprintf(what, sizeof(what), "tag send %u", i);
        if (tag_send(ep, msg, size, TAG_DATA | i, what) != UCS_OK) {
            return size;
        }
        memset(msg, 0, size);
        snprintf(what, sizeof(what), "tag echo %u", i);
        if (tag_recv(msg, size, TAG_ECHO | i, what) != UCS_OK) {
            return size;
        }
        bad += check(what, msg, size, 1000 + i, 1);
        if (i == 0) {
            /* the lanes UCP chose, now that the endpoint is wired up */
            ucp_ep_print_info(ep, stdout);
        }
    }
    printf("client: tag: %u messages of %zu bytes sent, %u echoes received, "
           "%s\n", iters, size, iters,
           bad ? "BAD BYTES" : "every byte as expected");

    fill(msg, size, 0x707);
    if (wait_req(ucp_put_nbx(ep, msg, size, remote, rkey, &p), "put") ||
        wait_req(ucp_ep_flush_nbx(ep, &p), "flush after put")) {
        return bad + size;
    }
    printf("client: put: %zu bytes into the server's buffer, flushed\n",
           size);

    memset(msg, 0, size);
    if (wait_req(ucp_get_nbx(ep, msg, size, remote + size, rkey, &p),
                 "get") ||
        wait_req(ucp_ep_flush_nbx(ep, &p), "flush after get")) {
        return bad + size;
    }
    b = check("get", msg, size, 0x6e7, 0);
    printf("client: get: %zu bytes from the server's buffer, %s\n", size,
           b ? "BAD BYTES" : "every byte as the server wrote them");
    return bad + b;
}

/* The server's side of it.  Returns the bad bytes. */
static size_t server_run(ucp_ep_h ep, uint8_t *msg, size_t size,
                         unsigned iters, const uint8_t *region)
{
    size_t bad = 0, b, j;
    unsigned i;
    char what[64];

    for (i = 0; i < iters; i++) {
        snprintf(what, sizeof(what), "tag message %u", i);
        if (tag_recv(msg, size, TAG_DATA | i, what) != UCS_OK) {
            return size;
        }
        bad += check(what, msg, size, 1000 + i, 0);
        for (j = 0; j < size; j++) {
            msg[j] ^= 0xff;
        }
        snprintf(what, sizeof(what), "tag echo %u", i);
        if (tag_send(ep, msg, size, TAG_ECHO | i, what) != UCS_OK) {
            return size;
        }
    }
    printf("server: tag: %u messages of %zu bytes received, %s, echoed\n",
           iters, size, bad ? "BAD BYTES" : "every byte as sent");
    if (tag_recv(&b, sizeof(b), TAG_PUTDONE, "the client's put-done") !=
        UCS_OK) {
        return bad + size;
    }
    b = check("put", region, size, 0x707, 0);
    printf("server: put: %zu bytes in its buffer, %s\n", size,
           b ? "BAD BYTES" : "every byte as the client put them");
    return bad + b;
}

int main(int argc, char **argv)
{
    const char *server = NULL, *port = "18670";
    size_t size = 65536, bad, addr_len, rkey_len = 0;
    unsigned iters = 20;
    ucp_params_t params = { 0 };
    ucp_worker_params_t wparams = { 0 };
    ucp_mem_map_params_t mparams = { 0 };
    ucp_mem_attr_t mattr = { 0 };
    ucp_ep_params_t eparams = { 0 };
    ucp_request_param_t rp = { 0 };
    ucp_context_h ctx;
    ucp_address_t *addr;
    ucp_mem_h memh = NULL;
    ucp_rkey_h rkey = NULL;
    ucp_ep_h ep;
    void *peer_addr, *rkey_buf = NULL;
    uint8_t *msg, *region = NULL, verdict, peer_verdict = 1;
    uint64_t remote = 0, *rp_remote;
    uint32_t len;
    int opt, fd;

    while ((opt = getopt(argc, argv, "p:s:n:")) != -1) {
        switch (opt) {
        case 'p':
            port = optarg;
            break;
        case 's':
            size = atol(optarg);
            break;
        case 'n':
            iters = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: %s [-p PORT] [-s SIZE] [-n ITERS] "
                    "[SERVER]\n", argv[0]);
            return 2;
        }
    }
    if (optind < argc) {
        server = argv[optind];
        side = "client";
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (size < sizeof(size_t)) {
        die("%s", "-s must be at least 8");
    }

    params.field_mask = UCP_PARAM_FIELD_FEATURES;
    params.features = UCP_FEATURE_TAG | UCP_FEATURE_RMA;
    if (ucp_init(&params, NULL, &ctx) != UCS_OK) {
        die("%s", "ucp_init failed");
    }
    wparams.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = UCS_THREAD_MODE_SINGLE;
    if (ucp_worker_create(ctx, &wparams, &worker) != UCS_OK ||
        ucp_worker_get_address(worker, &addr, &addr_len) != UCS_OK) {
        die("%s", "ucp_worker_create or ucp_worker_get_address failed");
    }
    msg = malloc(size);
    if (!msg) {
        die("%s", "out of memory");
    }

    if (!server) {
        /* the put target (first half) and the get source (second half) */
        mparams.field_mask = UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                             UCP_MEM_MAP_PARAM_FIELD_FLAGS;
        mparams.length = 2 * size;
        mparams.flags = UCP_MEM_MAP_ALLOCATE;
        mattr.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS;
        if (ucp_mem_map(ctx, &mparams, &memh) != UCS_OK ||
            ucp_mem_query(memh, &mattr) != UCS_OK ||
            ucp_rkey_pack(ctx, memh, &rkey_buf, &rkey_len) != UCS_OK) {
            die("%s", "ucp_mem_map, ucp_mem_query or ucp_rkey_pack failed");
        }
        region = mattr.address;
        memset(region, 0, size);
        fill(region + size, size, 0x6e7);
        remote = (uintptr_t)region;
        printf("server: listening on TCP port %s\n", port);
        fd = oob_accept(atoi(port));
        send_blob(fd, addr, addr_len);
        send_blob(fd, &remote, sizeof(remote));
        send_blob(fd, rkey_buf, rkey_len);
        peer_addr = recv_blob(fd, &len);
    } else {
        fd = oob_connect(server, port);
        send_blob(fd, addr, addr_len);
        peer_addr = recv_blob(fd, &len);
        rp_remote = recv_blob(fd, &len);
        remote = *rp_remote;
        rkey_buf = recv_blob(fd, &len);
    }

    eparams.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
    eparams.address = peer_addr;
    if (ucp_ep_create(worker, &eparams, &ep) != UCS_OK) {
        die("%s", "ucp_ep_create failed");
    }
    if (server) {
        if (ucp_ep_rkey_unpack(ep, rkey_buf, &rkey) != UCS_OK) {
            die("%s", "ucp_ep_rkey_unpack failed");
        }
        printf("client: connected to %s: %u tag messages of %zu bytes, "
               "put and get of %zu bytes\n", server, iters, size, size);
        bad = client_run(ep, msg, size, iters, remote, rkey);
        /* tell the server to check its buffer, hear its verdict */
        verdict = 0;
        if (tag_send(ep, &bad, sizeof(bad), TAG_PUTDONE, "put-done") ||
            tag_recv(&peer_verdict, 1, TAG_VERDICT, "the server's verdict")) {
            peer_verdict = 1;
        }
        if (!peer_verdict) {
            printf("client: the server found every byte it checked as "
                   "expected\n");
        } else {
            printf("client: FAILED: the server found bad bytes (or did not "
                   "answer)\n");
        }
    } else {
        bad = server_run(ep, msg, size, iters, region);
        verdict = bad != 0;
        if (tag_send(ep, &verdict, 1, TAG_VERDICT, "verdict") == UCS_OK) {
            peer_verdict = 0;
        }
    }

    /*
     * A clean close: both ends flush their endpoint, and neither leaves
     * before the other's close is done, since a flush over UD waits for
     * the peer's acknowledgements (a peer that has exited sends none:
     * "Endpoint timeout" after UCX_UD_TIMEOUT).
     */
    if (rkey) {
        ucp_rkey_destroy(rkey);
    }
    rp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
    rp.flags = 0;
    if (wait_req(ucp_ep_close_nbx(ep, &rp), "close") != UCS_OK) {
        bad += !bad;
    }
    if (!oob_barrier(fd)) {
        bad += !bad;
    }
    close(fd);
    if (bad || peer_verdict) {
        printf("%s: FAILED: %zu bad bytes here%s\n", side, bad,
               peer_verdict ? ", and no good word from the peer" : "");
        return 1;
    }
    printf("%s: PASS: every byte checked matched\n", side);
    return 0;
}
