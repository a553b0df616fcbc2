/*
 * A stand-in for libibumad, for running rdmacm-mux on a machine without
 * RDMA: every MAD sent to a GID in the (fake) port's GID table comes back
 * through umad_recv() as rxe's loopback would deliver it, with the source
 * GID in the address, the destination's GID index, and the high half of
 * the TID replaced as the kernel does.  MADs to other GIDs vanish as if
 * sent to the network, and so do MADs sent from a RoCE v1 entry (the
 * peers here speak RoCE v2 only, so the daemon must prefer v2 entries).
 * The GID table is the sysfs-like tree that the
 * daemon reads too: $FAKE_UMAD_SYSFS/<dev>/ports/<port>/gids/<n> and
 * gid_attrs/types/<n> (build.sh builds rdmacm-mux-fake to read it).
 *
 * Only the entry points rdmacm-mux uses exist.  It tests the daemon's own
 * logic; the lane-3 host VM tests it against the real thing.
 *
 * FAKE_UMAD_REGISTER_ERRNO=N makes umad_register() fail with errno N.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/umad.h>

#define FAKE_MAD_SIZE 256
#define FAKE_HI_TID 0x0000beefu

static int pipe_rd = -1, pipe_wr = -1;
static char port_path[400];

static const char *port_dir(void)
{
    return port_path;
}

static int read_gid(unsigned idx, uint8_t *gid, int *v2)
{
    char path[512], buf[64];
    unsigned v[8];
    FILE *f;
    int i;

    snprintf(path, sizeof(path), "%s/gids/%u", port_dir(), idx);
    f = fopen(path, "r");
    if (!f) {
        return -1;
    }
    if (fscanf(f, "%x:%x:%x:%x:%x:%x:%x:%x", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) != 8) {
        fclose(f);
        return 0;
    }
    fclose(f);
    for (i = 0; i < 8; i++) {
        gid[2 * i] = v[i] >> 8;
        gid[2 * i + 1] = v[i];
    }
    snprintf(path, sizeof(path), "%s/gid_attrs/types/%u", port_dir(), idx);
    f = fopen(path, "r");
    if (!f) {
        return 0;
    }
    *v2 = fgets(buf, sizeof(buf), f) && !strncmp(buf, "RoCE v2", 7);
    fclose(f);
    return 1;
}

int umad_init(void)
{
    return 0;
}

int umad_done(void)
{
    return 0;
}

size_t umad_size(void)
{
    /*
     * As libibumad: the size of the old ABI's header (without pkey_index
     * and reserved) until a port is open and the new one is known.
     */
    return sizeof(struct ib_user_mad) - (pipe_rd < 0 ? 8 : 0);
}

void *umad_get_mad(void *umad)
{
    return ((struct ib_user_mad *)umad)->data;
}

int umad_open_port(const char *ca_name, int portnum)
{
    const char *root = getenv("FAKE_UMAD_SYSFS");
    int fds[2];

    if (!root) {
        return -EOPNOTSUPP;
    }
    snprintf(port_path, sizeof(port_path), "%s/%s/ports/%d", root, ca_name,
             portnum);
    if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0) {
        return -errno;
    }
    pipe_rd = fds[0];
    pipe_wr = fds[1];
    return pipe_rd;
}

int umad_close_port(int portid)
{
    (void)portid;
    close(pipe_rd);
    close(pipe_wr);
    pipe_rd = pipe_wr = -1;
    return 0;
}

int umad_register(int portid, int mgmt_class, int mgmt_version,
                  uint8_t rmpp_version, long method_mask[16 / sizeof(long)])
{
    const char *e = getenv("FAKE_UMAD_REGISTER_ERRNO");

    (void)portid;
    (void)rmpp_version;
    if (e) {
        errno = atoi(e);
        return -EPERM;
    }
    if (mgmt_class != 0x07 || mgmt_version != 2 ||
        method_mask[0] != (1L << 3) || method_mask[1]) {
        errno = EINVAL;
        return -EPERM;
    }
    return 0;
}

int umad_unregister(int portid, int agentid)
{
    (void)portid;
    (void)agentid;
    return 0;
}

int umad_send(int portid, int agentid, void *umad, int length,
              int timeout_ms, int retries)
{
    struct ib_user_mad *in = umad;
    struct {
        struct ib_user_mad u;
        uint8_t mad[FAKE_MAD_SIZE];
    } out;
    uint8_t sgid[16], gid[16];
    int v2 = 0, best = -1, r;
    uint32_t hi = htonl(FAKE_HI_TID);
    unsigned i;

    (void)portid;
    if (agentid != 0 || length != FAKE_MAD_SIZE || timeout_ms || retries ||
        !in->addr.grh_present) {
        errno = EINVAL;
        return -EIO;
    }
    if (read_gid(in->addr.gid_index, sgid, &v2) != 1) {
        errno = EINVAL;         /* rdma_create_user_ah fails */
        return -EIO;
    }
    if (!v2) {
        return 0;               /* RoCE v1: nobody hears it */
    }
    for (i = 0; i < 4096; i++) {
        r = read_gid(i, gid, &v2);
        if (r < 0) {
            break;
        }
        if (r == 1 && !memcmp(gid, in->addr.gid, 16) && (best < 0 || v2)) {
            best = i;
        }
    }
    if (best < 0) {
        return 0;               /* off to the network */
    }
    memset(&out, 0, sizeof(out));
    out.u.length = sizeof(out);
    out.u.addr.qpn = htonl(1);
    out.u.addr.grh_present = 1;
    out.u.addr.gid_index = best;
    out.u.addr.hop_limit = in->addr.hop_limit;
    out.u.addr.traffic_class = in->addr.traffic_class;
    out.u.addr.flow_label = in->addr.flow_label;
    out.u.addr.sl = in->addr.sl;
    memcpy(out.u.addr.gid, sgid, 16);
    memcpy(out.mad, in->data, FAKE_MAD_SIZE);
    if (!(out.mad[3] & 0x80)) {
        memcpy(out.mad + 8, &hi, 4);
    }
    if (write(pipe_wr, &out, sizeof(out)) != sizeof(out)) {
        return 0;               /* the receive queue overflowed: lost */
    }
    return 0;
}

int umad_recv(int portid, void *umad, int *length, int timeout_ms)
{
    struct ib_user_mad *u = umad;
    ssize_t n;

    (void)portid;
    (void)timeout_ms;
    if (*length < FAKE_MAD_SIZE) {
        return -ENOSPC;
    }
    n = read(pipe_rd, umad, sizeof(*u) + FAKE_MAD_SIZE);
    if (n < 0) {
        return -errno;
    }
    if (n != (ssize_t)(sizeof(*u) + FAKE_MAD_SIZE)) {
        return -EIO;
    }
    *length = FAKE_MAD_SIZE;
    return 0;
}
