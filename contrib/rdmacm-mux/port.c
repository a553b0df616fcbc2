/*
 * rdmacm-mux host port: the umad agent for the CM class on one port of one
 * RDMA device, and the port's GID table read from sysfs.
 *
 * umad addresses a local GID by its index in the port's GID table, while
 * clients name GIDs by value; the table translates.  Guests' GIDs are added
 * to the host (by libvirt) while the daemon runs, so a GID that is not
 * found makes the table be read again.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <infiniband/umad.h>
#include <infiniband/umad_types.h>

#include "mux.h"

#define MUX_SYSFS_IB            "/sys/class/infiniband"
/* Bounds the table scan; rxe has 1024 entries, hardware far fewer. */
#define MUX_MAX_GID_INDEX       4096
/* A GID that is not found re-reads the table at most this often. */
#define MUX_RESCAN_NS           (100 * 1000 * 1000LL)
/* Room for any MAD umad could hand us, OPA's included. */
#define MUX_RX_MAD_MAX          2048

static bool name_is_safe(const char *s)
{
    if (!*s || !strcmp(s, ".") || !strcmp(s, "..")) {
        return false;
    }
    for (; *s; s++) {
        if (*s == '/') {
            return false;
        }
    }
    return true;
}

/* Reads a small sysfs file into buf, without the trailing newline. */
static bool read_attr(const char *path, char *buf, size_t len)
{
    ssize_t n;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        return false;
    }
    n = read(fd, buf, len - 1);
    close(fd);
    if (n <= 0) {
        return false;
    }
    buf[n] = '\0';
    if (buf[n - 1] == '\n') {
        buf[n - 1] = '\0';
    }
    return true;
}

/* Parses sysfs's "fe80:0000:0000:0000:5054:00ff:fe12:3456". */
static bool parse_gid(const char *s, uint8_t *gid)
{
    int i, j;

    for (i = 0; i < 8; i++) {
        unsigned v = 0;

        for (j = 0; j < 4; j++, s++) {
            char ch = *s;

            v <<= 4;
            if (ch >= '0' && ch <= '9') {
                v |= ch - '0';
            } else if (ch >= 'a' && ch <= 'f') {
                v |= ch - 'a' + 10;
            } else if (ch >= 'A' && ch <= 'F') {
                v |= ch - 'A' + 10;
            } else {
                return false;
            }
        }
        if (*s != (i == 7 ? '\0' : ':')) {
            return false;
        }
        s++;
        gid[2 * i] = v >> 8;
        gid[2 * i + 1] = v & 0xff;
    }
    return true;
}

typedef enum MuxGidRead {
    MUX_GID_VALID,
    MUX_GID_EMPTY,
    MUX_GID_NONE,               /* past the end of the table */
} MuxGidRead;

/* Reads entry idx of the port's GID table, and whether it is RoCE v2. */
static MuxGidRead read_gid(const MuxPort *p, unsigned idx, uint8_t *gid,
                           bool *roce_v2)
{
    static const uint8_t zero[MUX_GID_LEN];
    char path[sizeof(p->sysfs) + 64], buf[64];

    snprintf(path, sizeof(path), "%s/gids/%u", p->sysfs, idx);
    if (!read_attr(path, buf, sizeof(buf))) {
        return errno == ENOENT ? MUX_GID_NONE : MUX_GID_EMPTY;
    }
    if (!parse_gid(buf, gid) || !memcmp(gid, zero, MUX_GID_LEN)) {
        return MUX_GID_EMPTY;
    }
    /* The type of an empty entry cannot be read; one being deleted too. */
    snprintf(path, sizeof(path), "%s/gid_attrs/types/%u", p->sysfs, idx);
    if (!read_attr(path, buf, sizeof(buf))) {
        return MUX_GID_EMPTY;
    }
    *roce_v2 = !strcmp(buf, "RoCE v2");
    return MUX_GID_VALID;
}

static int64_t elapsed_ns(const struct timespec *since)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000LL +
           (now.tv_nsec - since->tv_nsec);
}

static void gid_table_scan(MuxPort *p)
{
    MuxGidEntry *t = NULL;
    size_t n = 0, cap = 0;
    unsigned idx;

    for (idx = 0; idx < MUX_MAX_GID_INDEX; idx++) {
        uint8_t gid[MUX_GID_LEN];
        bool v2 = false;
        MuxGidRead r = read_gid(p, idx, gid, &v2);

        if (r == MUX_GID_NONE) {
            break;
        }
        if (r == MUX_GID_EMPTY) {
            continue;
        }
        if (n == cap) {
            MuxGidEntry *nt;

            cap = cap ? cap * 2 : 16;
            nt = realloc(t, cap * sizeof(*t));
            if (!nt) {
                break;
            }
            t = nt;
        }
        memcpy(t[n].gid, gid, MUX_GID_LEN);
        t[n].index = idx;
        t[n].roce_v2 = v2;
        n++;
    }
    free(p->gids);
    p->gids = t;
    p->n_gids = n;
    p->scanned = true;
    clock_gettime(CLOCK_MONOTONIC, &p->last_scan);
    mux_debug("GID table of %s port %d: %zu entries", p->dev, p->port_num, n);
}

/* The cached index of gid, a RoCE v2 entry if there is one; or -1. */
static int gid_table_find(const MuxPort *p, const uint8_t *gid)
{
    int found = -1;
    size_t i;

    for (i = 0; i < p->n_gids; i++) {
        if (memcmp(p->gids[i].gid, gid, MUX_GID_LEN)) {
            continue;
        }
        if (p->gids[i].roce_v2) {
            return i;
        }
        if (found < 0) {
            found = i;
        }
    }
    return found;
}

/* The cached entry still holds what the cache says. */
static bool gid_entry_current(const MuxPort *p, const MuxGidEntry *e)
{
    uint8_t gid[MUX_GID_LEN];
    bool v2 = false;

    return read_gid(p, e->index, gid, &v2) == MUX_GID_VALID &&
           !memcmp(gid, e->gid, MUX_GID_LEN) && v2 == e->roce_v2;
}

/* The GID table index to send from sgid with; -EADDRNOTAVAIL if none. */
static int gid_index_of(MuxPort *p, const uint8_t *sgid)
{
    int i = gid_table_find(p, sgid);

    if (i >= 0 && gid_entry_current(p, &p->gids[i])) {
        return p->gids[i].index;
    }
    if (!p->scanned || i >= 0 || elapsed_ns(&p->last_scan) > MUX_RESCAN_NS) {
        gid_table_scan(p);
        i = gid_table_find(p, sgid);
        if (i >= 0) {
            return p->gids[i].index;
        }
    }
    return -EADDRNOTAVAIL;
}

/* The names in directory path, as "a, b, c", for error messages. */
static void list_dir(const char *path, char *list, size_t len)
{
    DIR *d = opendir(path);
    struct dirent *e;

    *list = '\0';
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.' || strlen(list) + strlen(e->d_name) + 3 > len) {
            continue;
        }
        strcat(list, *list ? ", " : "");
        strcat(list, e->d_name);
    }
    if (d) {
        closedir(d);
    }
}

/* The device and port exist; a clear message if not. */
bool mux_port_check(const char *dev, int port_num)
{
    char path[512], buf[64], list[512];
    struct stat st;

    snprintf(path, sizeof(path), "%s/%s", MUX_SYSFS_IB, dev);
    if (!name_is_safe(dev) || stat(path, &st) < 0) {
        list_dir(MUX_SYSFS_IB, list, sizeof(list));
        mux_log("error: no RDMA device '%s'; devices found: %s", dev,
                *list ? list : "none (no RDMA driver loaded?)");
        return false;
    }
    snprintf(path, sizeof(path), "%s/%s/ports/%d", MUX_SYSFS_IB, dev,
             port_num);
    if (stat(path, &st) < 0) {
        snprintf(path, sizeof(path), "%s/%s/ports", MUX_SYSFS_IB, dev);
        list_dir(path, list, sizeof(list));
        mux_log("error: RDMA device %s has no port %d; its ports: %s", dev,
                port_num, *list ? list : "none");
        return false;
    }
    snprintf(path, sizeof(path), "%s/%s/ports/%d/state", MUX_SYSFS_IB, dev,
             port_num);
    if (read_attr(path, buf, sizeof(buf)) && !strstr(buf, "ACTIVE")) {
        mux_log("warning: %s port %d is not active (%s)", dev, port_num, buf);
    }
    return true;
}

bool mux_port_open(MuxPort *p, const char *dev, int port_num)
{
    long method_mask[16 / sizeof(long)];
    int r;

    memset(p, 0, sizeof(*p));
    p->fd = -1;
    p->agent = -1;
    snprintf(p->dev, sizeof(p->dev), "%s", dev);
    p->port_num = port_num;
    snprintf(p->sysfs, sizeof(p->sysfs), "%s/%s/ports/%d", MUX_SYSFS_IB,
             dev, port_num);
    r = umad_open_port(dev, port_num);
    if (r < 0) {
        mux_log("error: cannot open the umad device of %s port %d: %s "
                "(is the ib_umad module loaded? are you root?)",
                dev, port_num, strerror(-r));
        goto fail;
    }
    p->fd = r;

    /* umad_size() is only right once a port is open (it has two ABIs). */
    p->rx_buf = calloc(1, umad_size() + MUX_RX_MAD_MAX);
    p->tx_buf = calloc(1, umad_size() + RDMACM_MUX_MAD_SIZE);
    if (!p->rx_buf || !p->tx_buf) {
        mux_log("error: out of memory");
        goto fail;
    }

    /*
     * The CM sends every message with method SEND and never a response
     * (IBA 12.6), so SEND is the one method to receive unsolicited; the
     * kernel's own CM registers exactly that.
     */
    memset(method_mask, 0, sizeof(method_mask));
    method_mask[UMAD_METHOD_SEND / (8 * sizeof(long))] |=
        1UL << (UMAD_METHOD_SEND % (8 * sizeof(long)));
    errno = 0;
    r = umad_register(p->fd, UMAD_CLASS_CM, MUX_CM_CLASS_VERSION, 0,
                      method_mask);
    if (r < 0) {
        mux_log("error: cannot register for CM MADs (class 0x%02x version "
                "%d) on %s port %d: %s. Only one agent may hold them: the "
                "kernel's CM (ib_cm, loaded with rdma_cm/rdma_ucm) is "
                "probably loaded, or another rdmacm-mux runs on this port",
                UMAD_CLASS_CM, MUX_CM_CLASS_VERSION, dev, port_num,
                strerror(errno ? errno : -r));
        goto fail;
    }
    p->agent = r;
    gid_table_scan(p);
    return true;

fail:
    mux_port_close(p);
    return false;
}

void mux_port_close(MuxPort *p)
{
    if (p->agent >= 0) {
        umad_unregister(p->fd, p->agent);
        p->agent = -1;
    }
    if (p->fd >= 0) {
        umad_close_port(p->fd);
        p->fd = -1;
    }
    free(p->gids);
    p->gids = NULL;
    p->n_gids = 0;
    free(p->rx_buf);
    free(p->tx_buf);
    p->rx_buf = p->tx_buf = NULL;
}

/* Sends a client's MAD from QP1; 0 or a negative errno for its REPLY. */
int mux_port_send(MuxPort *p, const RdmaCmMuxMad *m)
{
    ib_user_mad_t *u = p->tx_buf;
    int idx = gid_index_of(p, m->sgid);

    if (idx < 0) {
        return idx;
    }
    if (idx > UINT8_MAX) {
        /* umad's address has 8 bits for the index. */
        return -EADDRNOTAVAIL;
    }
    memset(u, 0, umad_size());
    u->addr.qpn = htonl(m->qpn);
    u->addr.qkey = htonl(m->qkey ? m->qkey : UMAD_QKEY);
    u->addr.sl = m->sl;
    u->addr.grh_present = 1;
    u->addr.gid_index = idx;
    u->addr.hop_limit = m->hop_limit;
    u->addr.traffic_class = m->traffic_class;
    memcpy(u->addr.gid, m->dgid, MUX_GID_LEN);
    u->addr.flow_label = htonl(m->flow_label);
    u->addr.pkey_index = m->pkey_index;
    memcpy(umad_get_mad(u), m->mad, RDMACM_MUX_MAD_SIZE);

    /* No timeout and no retries: the clients' CMs retry themselves. */
    errno = 0;
    if (umad_send(p->fd, p->agent, u, RDMACM_MUX_MAD_SIZE, 0, 0) < 0) {
        return errno ? -errno : -EIO;
    }
    return 0;
}

/*
 * Receives one MAD into m, addressed as RECV wants it.  A negative errno
 * means that the port is unusable.
 */
int mux_port_recv(MuxPort *p, RdmaCmMuxMad *m)
{
    ib_user_mad_t *u = p->rx_buf;
    const uint8_t *mad = umad_get_mad(u);
    int len = MUX_RX_MAD_MAX;
    bool v2 = false;
    int r;

    r = umad_recv(p->fd, u, &len, 0);
    if (r < 0) {
        if (r == -EAGAIN || r == -EWOULDBLOCK) {
            return MUX_RX_NONE;
        }
        if (r == -ENOSPC) {
            /* Larger than any MAD: was requeued, cannot make progress. */
            mux_log("error: umad has a %d-byte MAD for us", len);
        }
        return r;
    }
    if (u->status) {
        /* A report on one of our sends (only timeouts; we set none). */
        return MUX_RX_DROPPED;
    }
    if (len < MUX_MAD_LOCAL_COMM_ID || mad[MUX_MAD_CLASS] != UMAD_CLASS_CM) {
        mux_debug("dropped a received MAD of %d bytes, class 0x%02x", len,
                  len > MUX_MAD_CLASS ? mad[MUX_MAD_CLASS] : 0);
        return MUX_RX_DROPPED;
    }
    if (!u->addr.grh_present) {
        /* Without a GRH there is no GID to route by (IB without GRH). */
        mux_debug("dropped a received MAD without GRH");
        return MUX_RX_DROPPED;
    }

    memset(m, 0, sizeof(*m));
    if (read_gid(p, u->addr.gid_index, m->dgid, &v2) != MUX_GID_VALID) {
        mux_debug("dropped a MAD for local GID index %u, now empty",
                  u->addr.gid_index);
        return MUX_RX_DROPPED;
    }
    memcpy(m->sgid, u->addr.gid, MUX_GID_LEN);
    m->qpn = ntohl(u->addr.qpn);
    m->qkey = ntohl(u->addr.qkey);
    m->flow_label = ntohl(u->addr.flow_label);
    m->pkey_index = u->addr.pkey_index;
    m->sl = u->addr.sl;
    m->hop_limit = u->addr.hop_limit;
    m->traffic_class = u->addr.traffic_class;
    memcpy(m->mad, mad, len < RDMACM_MUX_MAD_SIZE ? len : RDMACM_MUX_MAD_SIZE);
    return MUX_RX_MAD;
}
