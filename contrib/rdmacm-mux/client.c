/*
 * rdmacm-mux clients: one UNIX stream connection per QEMU instance.
 *
 * Every client is untrusted.  Its socket is non-blocking; input accumulates
 * until a whole message is there (short reads are normal); a malformed
 * header cuts off that client alone, after a REPLY with -EPROTO.  Its
 * output is queued up to MUX_OUT_CAP bytes: a client that does not read
 * loses its own RECVs and never stalls the daemon or other clients.  Each
 * request is answered by exactly one REPLY, and a request is only taken
 * when its REPLY fits in the queue, so REPLYs are never dropped.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/umad_types.h>

#include "mux.h"

#define HDR_SIZE sizeof(RdmaCmMuxHdr)

static size_t out_queued(const MuxClient *c)
{
    return c->out_len - c->out_off;
}

static bool out_room(const MuxClient *c, size_t len)
{
    return MUX_OUT_CAP - out_queued(c) >= len;
}

static void out_put(MuxClient *c, const void *a, size_t alen,
                    const void *b, size_t blen)
{
    if (c->out_len + alen + blen > MUX_OUT_CAP) {
        memmove(c->out, c->out + c->out_off, out_queued(c));
        c->out_len -= c->out_off;
        c->out_off = 0;
    }
    memcpy(c->out + c->out_len, a, alen);
    c->out_len += alen;
    if (blen) {
        memcpy(c->out + c->out_len, b, blen);
        c->out_len += blen;
    }
}

static void reply(MuxClient *c, uint32_t seq, int status)
{
    RdmaCmMuxHdr h = {
        .magic = RDMACM_MUX_MAGIC,
        .version = RDMACM_MUX_VERSION,
        .type = RDMACM_MUX_REPLY,
        .seq = seq,
        .status = status,
    };

    if (out_room(c, HDR_SIZE)) {
        out_put(c, &h, HDR_SIZE, NULL, 0);
    }
}

bool mux_client_deliver(Mux *mux, MuxClient *c, const RdmaCmMuxMad *m)
{
    RdmaCmMuxHdr h = {
        .magic = RDMACM_MUX_MAGIC,
        .version = RDMACM_MUX_VERSION,
        .type = RDMACM_MUX_RECV,
        .len = sizeof(*m),
    };

    if (c->dead) {
        return false;
    }
    if (!out_room(c, HDR_SIZE + sizeof(*m))) {
        if (!c->dropped++) {
            mux_log("client %u does not read: dropping MADs for it", c->id);
        }
        mux->stats.rx_queue_full++;
        return false;
    }
    out_put(c, &h, HDR_SIZE, m, sizeof(*m));
    mux->stats.rx_delivered++;
    return true;
}

void mux_client_route(Mux *mux, const RdmaCmMuxMad *m)
{
    char s[MUX_GID_STRLEN], d[MUX_GID_STRLEN];
    MuxRouteOwner *o = mux_route_lookup(m->dgid);
    uint16_t attr = m->mad[MUX_MAD_ATTR_ID] << 8 | m->mad[MUX_MAD_ATTR_ID + 1];
    MuxClient *c;

    if (!o) {
        mux->stats.rx_no_dest++;
        mux_debug("dropped MAD attr 0x%04x %s -> %s: no client for it", attr,
                  mux_gid_str(m->sgid, s, sizeof(s)),
                  mux_gid_str(m->dgid, d, sizeof(d)));
        return;
    }
    c = (MuxClient *)((char *)o - offsetof(MuxClient, route));
    mux_debug("MAD attr 0x%04x %s -> %s to client %u", attr,
              mux_gid_str(m->sgid, s, sizeof(s)),
              mux_gid_str(m->dgid, d, sizeof(d)), c->id);
    mux_client_deliver(mux, c, m);
}

void mux_client_flush(MuxClient *c)
{
    while (!c->dead && out_queued(c)) {
        ssize_t n = send(c->fd, c->out + c->out_off, out_queued(c),
                         MSG_NOSIGNAL | MSG_DONTWAIT);

        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            if (errno != EAGAIN && errno != EWOULDBLOCK) {
                mux_debug("client %u: write: %s", c->id, strerror(errno));
                c->dead = true;
            }
            return;
        }
        c->out_off += n;
    }
    c->out_off = c->out_len = 0;
}

bool mux_client_wants_input(const MuxClient *c)
{
    return !c->dead && c->in_len < MUX_IN_CAP;
}

/* The body size of a request type; -1 for types clients may not send. */
static long request_body_size(uint16_t type)
{
    switch (type) {
    case RDMACM_MUX_REGISTER:
    case RDMACM_MUX_UNREGISTER:
        return sizeof(RdmaCmMuxGid);
    case RDMACM_MUX_SEND:
        return sizeof(RdmaCmMuxMad);
    default:
        return -1;
    }
}

static bool header_valid(const RdmaCmMuxHdr *h)
{
    long body = request_body_size(h->type);

    return h->magic == RDMACM_MUX_MAGIC && h->version == RDMACM_MUX_VERSION &&
           body >= 0 && h->len == (unsigned long)body && h->reserved == 0;
}

static void protocol_error(Mux *mux, MuxClient *c, const RdmaCmMuxHdr *h)
{
    mux_log("client %u: malformed message (magic 0x%08x version %u type %u "
            "len %u reserved %u): disconnecting it", c->id, h->magic,
            h->version, h->type, h->len, h->reserved);
    mux->stats.protocol_errors++;
    /* The seq is only meaningful if the client speaks the protocol. */
    reply(c, h->magic == RDMACM_MUX_MAGIC ? h->seq : 0, -EPROTO);
    mux_client_flush(c);
    c->dead = true;
}

/* The checks on a SEND that do not need the port. */
static int send_check(const MuxClient *c, const RdmaCmMuxMad *m)
{
    if (!mux_route_owns(&c->route, m->sgid)) {
        return -EPERM;
    }
    if (m->mad[MUX_MAD_BASE_VERSION] != UMAD_BASE_VERSION ||
        m->mad[MUX_MAD_CLASS] != UMAD_CLASS_CM ||
        m->mad[MUX_MAD_CLASS_VERSION] != MUX_CM_CLASS_VERSION ||
        m->mad[MUX_MAD_METHOD] != UMAD_METHOD_SEND) {
        return -EINVAL;
    }
    if (m->qpn > 0xffffff || m->sl > 15 || m->flow_label > 0xfffff) {
        return -EINVAL;
    }
    return 0;
}

static int handle_send(Mux *mux, MuxClient *c, const RdmaCmMuxMad *m)
{
    char s[MUX_GID_STRLEN], d[MUX_GID_STRLEN];
    int r = send_check(c, m);

    if (!r) {
        r = mux_port_send(&mux->port, m);
    }
    if (mux_verbose) {
        uint16_t attr = m->mad[MUX_MAD_ATTR_ID] << 8 |
                        m->mad[MUX_MAD_ATTR_ID + 1];

        mux_debug("client %u: SEND attr 0x%04x %s -> %s qpn %u: %s", c->id,
                  attr, mux_gid_str(m->sgid, s, sizeof(s)),
                  mux_gid_str(m->dgid, d, sizeof(d)), m->qpn,
                  r ? strerror(-r) : "sent");
    }
    if (r) {
        mux->stats.tx_refused++;
        return r;
    }
    mux->stats.tx++;
    return 0;
}

static bool gid_in_prefix(const uint8_t *gid, const uint8_t *prefix,
                          unsigned len)
{
    unsigned bytes = len / 8, bits = len % 8;
    uint8_t mask = 0xff << (8 - bits);

    return !memcmp(gid, prefix, bytes) &&
           (!bits || !((gid[bytes] ^ prefix[bytes]) & mask));
}

/*
 * GIDs are first come, first served; with --allow-gids, management says
 * which user may claim which, so that a guest cannot take another VM's GID
 * while that VM does not hold it.
 */
static bool gid_allowed(Mux *mux, MuxClient *c, const uint8_t *gid)
{
    char g[MUX_GID_STRLEN];
    unsigned i;

    if (!mux->n_gid_rules) {
        return true;
    }
    for (i = 0; i < mux->n_gid_rules; i++) {
        const MuxGidRule *r = &mux->gid_rules[i];

        if (r->uid == c->peer.uid && gid_in_prefix(gid, r->prefix, r->len)) {
            return true;
        }
    }
    mux->stats.gids_refused++;
    if (!c->gid_refusal_logged) {
        c->gid_refusal_logged = true;
        mux_log("client %u (uid %u pid %d): REGISTER %s refused: no "
                "--allow-gids rule of its user covers it", c->id,
                (unsigned)c->peer.uid, (int)c->peer.pid,
                mux_gid_str(gid, g, sizeof(g)));
    }
    return false;
}

static void handle_request(Mux *mux, MuxClient *c, const RdmaCmMuxHdr *h,
                           const uint8_t *body)
{
    char g[MUX_GID_STRLEN];
    RdmaCmMuxGid gid;
    RdmaCmMuxMad *m;
    int r;

    switch (h->type) {
    case RDMACM_MUX_REGISTER:
    case RDMACM_MUX_UNREGISTER:
        memcpy(&gid, body, sizeof(gid));
        if (h->type == RDMACM_MUX_UNREGISTER) {
            r = mux_route_release(&c->route, gid.gid);
        } else if (!gid_allowed(mux, c, gid.gid)) {
            r = -EACCES;
        } else {
            r = mux_route_claim(&c->route, gid.gid);
        }
        mux_debug("client %u: %s %s: %s", c->id,
                  h->type == RDMACM_MUX_REGISTER ? "REGISTER" : "UNREGISTER",
                  mux_gid_str(gid.gid, g, sizeof(g)), r ? strerror(-r) : "ok");
        break;
    case RDMACM_MUX_SEND:
        /* The body may be unaligned in the input buffer. */
        m = malloc(sizeof(*m));
        if (!m) {
            r = -ENOMEM;
            break;
        }
        memcpy(m, body, sizeof(*m));
        r = handle_send(mux, c, m);
        free(m);
        break;
    default:
        r = -EPROTO;            /* header_valid() lets none through */
        break;
    }
    reply(c, h->seq, r);
}

/* Takes every whole request in the input buffer that can be answered. */
static void process_input(Mux *mux, MuxClient *c)
{
    size_t off = 0;

    while (!c->dead && c->in_len - off >= HDR_SIZE) {
        RdmaCmMuxHdr h;

        memcpy(&h, c->in + off, HDR_SIZE);
        /* Checked as soon as it is whole: a bad len is never waited for. */
        if (!header_valid(&h)) {
            protocol_error(mux, c, &h);
            return;
        }
        if (c->in_len - off < HDR_SIZE + h.len || !out_room(c, HDR_SIZE)) {
            break;
        }
        handle_request(mux, c, &h, c->in + off + HDR_SIZE);
        c->last_request_ms = mux->now_ms;
        off += HDR_SIZE + h.len;
    }
    if (off) {
        memmove(c->in, c->in + off, c->in_len - off);
        c->in_len -= off;
    }
}

/*
 * Reads what the client sent (if there is room for it), answers what is
 * whole and writes what is queued.  Called on any event of the client.
 */
void mux_client_service(Mux *mux, MuxClient *c)
{
    bool eof = false;

    if (mux_client_wants_input(c)) {
        ssize_t n = recv(c->fd, c->in + c->in_len, MUX_IN_CAP - c->in_len,
                         MSG_DONTWAIT);

        if (n > 0) {
            c->in_len += n;
        } else if (n == 0) {
            eof = true;
        } else if (errno != EAGAIN && errno != EWOULDBLOCK &&
                   errno != EINTR) {
            mux_debug("client %u: read: %s", c->id, strerror(errno));
            c->dead = true;
        }
    }
    /* Requests sent just before a close are still carried out. */
    process_input(mux, c);
    mux_client_flush(c);
    if (eof) {
        if (c->in_len) {
            mux_debug("client %u: closed in the middle of a message",
                      c->id);
        }
        c->dead = true;
    }
}

/* Admission: bounds per peer user, and idle clients make room */

/*
 * Closes a connection not taken, after a REPLY (seq 0) that tells why.  A
 * connect loop must not flood the log: one line a second at most.
 */
static void refuse(Mux *mux, int fd, const MuxPeer *peer, int status,
                   const char *why)
{
    RdmaCmMuxHdr h = {
        .magic = RDMACM_MUX_MAGIC,
        .version = RDMACM_MUX_VERSION,
        .type = RDMACM_MUX_REPLY,
        .status = status,
    };

    mux->stats.clients_refused++;
    if (!mux->refusal_logged_ms ||
        mux->now_ms - mux->refusal_logged_ms >= 1000) {
        mux->refusal_logged_ms = mux->now_ms;
        mux_log("refusing a client of uid %u (pid %d): %s (%llu refused so "
                "far)", (unsigned)peer->uid, (int)peer->pid, why,
                (unsigned long long)mux->stats.clients_refused);
    }
    /* Best effort: a client that does not read does not get it. */
    if (send(fd, &h, HDR_SIZE, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
        mux_debug("refused client: %s", strerror(errno));
    }
    close(fd);
}

static unsigned clients_of_uid(const Mux *mux, uid_t uid)
{
    unsigned i, n = 0;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        n += mux->clients[i] && mux->clients[i]->peer.uid == uid;
    }
    return n;
}

/*
 * A client that holds no GID and has sent no request for idle_ms.  QEMU
 * connects at start-up but registers only when its guest binds a GID,
 * which can take minutes (a slow boot, a driver loaded late), and it does
 * not reconnect: so idle clients are not cut off on a timer, only when a
 * new client needs their place.  One holding a GID is a QEMU in use.
 */
static bool client_evictable(const Mux *mux, const MuxClient *c)
{
    return mux->idle_ms > 0 && !c->dead && c->route.n_gids == 0 &&
           mux->now_ms - c->last_request_ms >= mux->idle_ms;
}

/* The evictable client idle the longest, of that uid only if uid. */
static MuxClient *idle_victim(const Mux *mux, const uid_t *uid)
{
    MuxClient *v = NULL;
    unsigned i;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        MuxClient *c = mux->clients[i];

        if (c && (!uid || c->peer.uid == *uid) && client_evictable(mux, c) &&
            (!v || c->last_request_ms < v->last_request_ms)) {
            v = c;
        }
    }
    return v;
}

static void evict(Mux *mux, MuxClient *c, const char *why)
{
    mux_log("evicting client %u (uid %u pid %d), idle for %lld s with no GID: "
            "%s", c->id, (unsigned)c->peer.uid, (int)c->peer.pid,
            (long long)(mux->now_ms - c->last_request_ms) / 1000, why);
    mux->stats.clients_evicted++;
    reply(c, 0, -ETIMEDOUT);
    mux_client_flush(c);
    mux_client_close(mux, c);
}

/*
 * Room for a client of peer under its user's bound and the daemon's,
 * made by evicting an idle client if need be; false if there is none.
 */
static bool make_room(Mux *mux, const MuxPeer *peer, const char **why)
{
    MuxClient *v;

    if (clients_of_uid(mux, peer->uid) >= mux->max_per_uid) {
        v = idle_victim(mux, &peer->uid);
        if (!v) {
            mux->stats.clients_refused_uid++;
            *why = "its user is at --max-clients-per-uid";
            return false;
        }
        evict(mux, v, "its user is at --max-clients-per-uid");
    }
    if (mux->n_clients >= MUX_MAX_CLIENTS) {
        v = idle_victim(mux, NULL);
        if (!v) {
            *why = "the daemon has its maximum of clients";
            return false;
        }
        evict(mux, v, "the daemon has its maximum of clients");
    }
    return true;
}

static MuxClient *client_new(void)
{
    MuxClient *c = calloc(1, sizeof(*c));

    if (c) {
        c->out = malloc(MUX_OUT_CAP);
        if (!c->out) {
            free(c);
            c = NULL;
        }
    }
    return c;
}

/* Takes fd, a connection from peer: serves it or refuses and closes it. */
bool mux_client_add(Mux *mux, int fd, const MuxPeer *peer)
{
    const char *why;
    MuxClient *c;
    unsigned slot;

    if (!make_room(mux, peer, &why)) {
        refuse(mux, fd, peer, -EUSERS, why);
        return false;
    }
    c = client_new();
    if (!c) {
        refuse(mux, fd, peer, -ENOMEM, "out of memory");
        return false;
    }
    c->fd = fd;
    c->id = ++mux->next_id;
    c->peer = *peer;
    c->last_request_ms = mux->now_ms;
    for (slot = 0; mux->clients[slot]; slot++) {
        /* n_clients < MUX_MAX_CLIENTS: a free slot exists */
    }
    mux->clients[slot] = c;
    mux->n_clients++;
    mux->stats.clients++;
    mux_debug("client %u connected: uid %u pid %d (%u clients)", c->id,
              (unsigned)peer->uid, (int)peer->pid, mux->n_clients);
    return true;
}

/* The kernel's record of who connected; it cannot be forged. */
static bool peer_of(int fd, MuxPeer *peer)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);

    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
        len != sizeof(cred)) {
        mux_log("accept: no peer credentials: %s", strerror(errno));
        return false;
    }
    peer->pid = cred.pid;
    peer->uid = cred.uid;
    peer->gid = cred.gid;
    return true;
}

void mux_client_accept(Mux *mux)
{
    int i;

    /* Bounded, so that a connect storm cannot starve everything else. */
    for (i = 0; i < 16; i++) {
        int fd = accept4(mux->listen_fd, NULL, NULL,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        MuxPeer peer;

        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                /*
                 * The connection stays in the backlog and the socket
                 * readable: stop polling it until a client goes.
                 */
                mux_log("accept: %s; new clients wait until one leaves",
                        strerror(errno));
                mux->accept_paused = true;
            } else if (errno != EAGAIN && errno != EWOULDBLOCK &&
                       errno != EINTR && errno != ECONNABORTED) {
                mux_log("accept: %s", strerror(errno));
            }
            return;
        }
        if (!peer_of(fd, &peer)) {
            close(fd);
            continue;
        }
        mux_client_add(mux, fd, &peer);
    }
}

void mux_client_close(Mux *mux, MuxClient *c)
{
    unsigned i;

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        if (mux->clients[i] == c) {
            mux->clients[i] = NULL;
            mux->n_clients--;
            break;
        }
    }
    mux_debug("client %u disconnected (%u GIDs released, %llu MADs "
              "dropped for it)", c->id, c->route.n_gids,
              (unsigned long long)c->dropped);
    mux_route_drop_owner(&c->route);
    close(c->fd);
    mux->accept_paused = false;
    free(c->out);
    free(c);
}
