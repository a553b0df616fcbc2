/*
 * rdmacm-mux: shares the connection-manager (CM) MADs of one RDMA port
 * among QEMU instances (pvrdma's ibverbs backend).  The protocol is in
 * rdmacm-mux.h; this file holds the command line, the listening socket,
 * signals and the single-threaded poll() loop.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <infiniband/umad.h>

#include "mux.h"

#define MUX_DEFAULT_PREFIX "/var/run/rdmacm-mux"

/* Long options without a short form. */
enum {
    OPT_OWNER = 256,
    OPT_GROUP,
    OPT_MODE,
    OPT_MAX_PER_UID,
    OPT_IDLE_TIMEOUT,
    OPT_ALLOW_GIDS,
};

typedef struct MuxOptions {
    const char *dev;
    const char *prefix;
    int port;
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    uid_t owner;                /* of the socket; -1: the daemon's user */
    gid_t group;                /* -1: the daemon's group */
    mode_t mode;
    unsigned max_per_uid;
    int64_t idle_ms;
    MuxGidRule gid_rules[MUX_MAX_GID_RULES];
    unsigned n_gid_rules;
} MuxOptions;

static void usage(FILE *f)
{
    fprintf(f,
"Usage: rdmacm-mux -d DEVICE [-p PORT] [-s PREFIX] [--owner USER]\n"
"                  [--group GROUP] [--mode MODE] [--max-clients-per-uid N]\n"
"                  [--idle-timeout SECONDS] [--allow-gids USER=ADDR[/LEN]]...\n"
"                  [-v]\n"
"\n"
"Shares the connection manager (CM) MADs of one port of an RDMA device\n"
"among the QEMU instances whose pvrdma devices use that port.\n"
"\n"
"Only one agent may register with a port's umad layer for the CM class\n"
"(0x07).  rdmacm-mux does, and serves any number of QEMU instances over a\n"
"UNIX stream socket: each claims its guest's GIDs, sends its guest's CM\n"
"MADs through the daemon and receives those addressed to it: a GID\n"
"belongs to one client at a time, which alone sends from it and receives\n"
"the MADs addressed to it.\n"
"\n"
"Options:\n"
"  -d, --device DEVICE  RDMA device, as in /sys/class/infiniband (required)\n"
"  -p, --port PORT      port of DEVICE (default 1)\n"
"  -s, --socket PREFIX  socket path prefix (default " MUX_DEFAULT_PREFIX ");\n"
"                       the socket is PREFIX-DEVICE-PORT, for example\n"
"                       " MUX_DEFAULT_PREFIX "-rxe0-1\n"
"      --owner USER     owner of the socket, a name or a number (default:\n"
"                       the daemon's user)\n"
"      --group GROUP    group of the socket, a name or a number (default:\n"
"                       the daemon's group)\n"
"      --mode MODE      permissions of the socket in octal, at most 0777\n"
"                       (default 0600); connecting needs write permission\n"
"      --max-clients-per-uid N\n"
"                       clients of one user (SO_PEERCRED) at a time, 1 to\n"
"                       %d (default %d); more are refused with EUSERS\n"
"      --idle-timeout SECONDS\n"
"                       a client that holds no GID and has sent no request\n"
"                       for this long is evicted when a new client needs\n"
"                       its place (default %d; 0: never evicted)\n"
"      --allow-gids USER=ADDRESS[/LEN]\n"
"                       with this option (repeatable), a client may register\n"
"                       only the GIDs that a rule of its user covers (EACCES\n"
"                       otherwise); an IPv4 address a.b.c.d stands for the\n"
"                       GID ::ffff:a.b.c.d, LEN is all of it by default;\n"
"                       without rules, GIDs are first come, first served\n"
"  -v, --verbose        log each request, routed MAD and drop to stderr\n"
"  -h, --help           show this help and exit\n"
"\n"
"Whoever can connect to the socket can claim the GIDs that no QEMU holds\n"
"yet and send CM MADs from them: let only the user or group that QEMU runs\n"
"as connect, for example --group kvm --mode 0660.  The socket gets its\n"
"owner, group and mode before the daemon listens on it.\n"
"\n"
"The host needs the ib_umad module, and must NOT have the kernel's own CM\n"
"(ib_cm, loaded by rdma_cm and rdma_ucm): it holds the CM class on every\n"
"port, and then rdmacm-mux cannot register.  A socket left behind by a\n"
"dead rdmacm-mux is replaced; one that a running daemon serves is not.\n"
"\n"
"rdmacm-mux stays in the foreground (it does not daemonize) and logs to\n"
"stderr.  SIGTERM or SIGINT stop it cleanly and remove the socket; SIGUSR1\n"
"prints its counters.  Exit status: 0 when stopped by a signal, 1 on\n"
"errors, 2 on a bad command line.\n", MUX_MAX_CLIENTS,
            MUX_DEFAULT_MAX_PER_UID, MUX_DEFAULT_IDLE_MS / 1000);
}

/*
 * Digits of @base (8 or 10) only, no sign or space, at most @max: the
 * value in *@v.  (Plain C: the daemon does not link QEMU's util library.)
 */
static bool parse_digits(const char *s, unsigned base, unsigned long max,
                         unsigned long *v)
{
    unsigned long n = 0;

    if (!*s) {
        return false;
    }
    for (; *s; s++) {
        unsigned d = (unsigned char)*s - '0';

        if (d >= base || n > (max - d) / base) {
            return false;
        }
        n = n * base + d;
    }
    *v = n;
    return true;
}

/* A decimal number in [min, max] (min >= 0) for option name. */
static bool parse_number(const char *name, const char *s, long min, long max,
                         long *v)
{
    unsigned long u;

    if (!parse_digits(s, 10, max, &u) || (long)u < min) {
        mux_log("error: bad %s '%s' (%ld to %ld)", name, s, min, max);
        return false;
    }
    *v = u;
    return true;
}

/* A user name or number for option opt. */
static bool parse_user(const char *opt, const char *s, uid_t *uid)
{
    struct passwd *pw = getpwnam(s);
    unsigned long v;

    if (pw) {
        *uid = pw->pw_uid;
        return true;
    }
    if (!parse_digits(s, 10, (uid_t)-2, &v)) {
        mux_log("error: bad %s '%s': no such user", opt, s);
        return false;
    }
    *uid = v;
    return true;
}

/* A group name or number for --group. */
static bool parse_group(const char *s, gid_t *gid)
{
    struct group *gr = getgrnam(s);
    unsigned long v;

    if (gr) {
        *gid = gr->gr_gid;
        return true;
    }
    if (!parse_digits(s, 10, (gid_t)-2, &v)) {
        mux_log("error: bad --group '%s': no such group", s);
        return false;
    }
    *gid = v;
    return true;
}

/* Permission bits only: set-id and sticky bits mean nothing on a socket. */
static bool parse_mode(const char *s, mode_t *mode)
{
    unsigned long v;

    if (!parse_digits(s, 8, 0777, &v)) {
        mux_log("error: bad --mode '%s' (octal permissions, 0 to 0777, for "
                "example 0660)", s);
        return false;
    }
    *mode = v;
    return true;
}

/* USER=ADDRESS[/LEN] for --allow-gids. */
static bool parse_gid_rule(const char *s, MuxGidRule *r)
{
    char buf[128], *addr, *len;
    struct in_addr a4;
    long bits, max = 128, base = 0;

    if (strlen(s) >= sizeof(buf) || !strchr(s, '=')) {
        goto bad;
    }
    strcpy(buf, s);
    addr = strchr(buf, '=');
    *addr++ = '\0';
    len = strchr(addr, '/');
    if (len) {
        *len++ = '\0';
    }
    if (!parse_user("--allow-gids", buf, &r->uid)) {
        return false;
    }
    memset(r->prefix, 0, sizeof(r->prefix));
    if (inet_pton(AF_INET, addr, &a4) == 1) {
        r->prefix[10] = r->prefix[11] = 0xff;
        memcpy(r->prefix + 12, &a4, sizeof(a4));
        max = 32;
        base = 96;
    } else if (inet_pton(AF_INET6, addr, r->prefix) != 1) {
        goto bad;
    }
    bits = max;
    if (len) {
        unsigned long u;

        if (!parse_digits(len, 10, max, &u)) {
            goto bad;
        }
        bits = u;
    }
    r->len = base + bits;
    return true;

bad:
    mux_log("error: bad --allow-gids '%s' (USER=ADDRESS[/LEN], for example "
            "libvirt-qemu=10.0.2.0/24 or libvirt-qemu=fe80::/64)", s);
    return false;
}

static bool parse_args(int argc, char **argv, MuxOptions *o)
{
    static const struct option longopts[] = {
        { "device", required_argument, NULL, 'd' },
        { "port", required_argument, NULL, 'p' },
        { "socket", required_argument, NULL, 's' },
        { "owner", required_argument, NULL, OPT_OWNER },
        { "group", required_argument, NULL, OPT_GROUP },
        { "mode", required_argument, NULL, OPT_MODE },
        { "max-clients-per-uid", required_argument, NULL, OPT_MAX_PER_UID },
        { "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
        { "allow-gids", required_argument, NULL, OPT_ALLOW_GIDS },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    long v;
    int opt, n;

    o->dev = NULL;
    o->prefix = MUX_DEFAULT_PREFIX;
    o->port = 1;
    o->owner = (uid_t)-1;
    o->group = (gid_t)-1;
    o->mode = 0600;
    o->max_per_uid = MUX_DEFAULT_MAX_PER_UID;
    o->idle_ms = MUX_DEFAULT_IDLE_MS;
    o->n_gid_rules = 0;
    while ((opt = getopt_long(argc, argv, "d:p:s:vh", longopts, NULL)) != -1) {
        switch (opt) {
        case 'd':
            o->dev = optarg;
            break;
        case 'p':
            if (!parse_number("port", optarg, 1, 255, &v)) {
                return false;
            }
            o->port = v;
            break;
        case 's':
            o->prefix = optarg;
            break;
        case OPT_OWNER:
            if (!parse_user("--owner", optarg, &o->owner)) {
                return false;
            }
            break;
        case OPT_GROUP:
            if (!parse_group(optarg, &o->group)) {
                return false;
            }
            break;
        case OPT_MODE:
            if (!parse_mode(optarg, &o->mode)) {
                return false;
            }
            break;
        case OPT_MAX_PER_UID:
            if (!parse_number("--max-clients-per-uid", optarg, 1,
                              MUX_MAX_CLIENTS, &v)) {
                return false;
            }
            o->max_per_uid = v;
            break;
        case OPT_IDLE_TIMEOUT:
            if (!parse_number("--idle-timeout", optarg, 0, 7 * 24 * 3600,
                              &v)) {
                return false;
            }
            o->idle_ms = v * 1000LL;
            break;
        case OPT_ALLOW_GIDS:
            if (o->n_gid_rules == MUX_MAX_GID_RULES) {
                mux_log("error: more than %d --allow-gids", MUX_MAX_GID_RULES);
                return false;
            }
            if (!parse_gid_rule(optarg, &o->gid_rules[o->n_gid_rules++])) {
                return false;
            }
            break;
        case 'v':
            mux_verbose = true;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            fprintf(stderr, "Try 'rdmacm-mux --help'.\n");
            return false;
        }
    }
    if (optind < argc) {
        mux_log("error: unexpected argument '%s'", argv[optind]);
        return false;
    }
    if (!o->dev || !*o->dev) {
        mux_log("error: no RDMA device given (-d DEVICE); see --help");
        return false;
    }
    if (strchr(o->dev, '/') || strlen(o->dev) >= UMAD_CA_NAME_LEN) {
        mux_log("error: bad RDMA device name '%s'", o->dev);
        return false;
    }
    n = snprintf(o->path, sizeof(o->path), "%s-%s-%d", o->prefix, o->dev,
                 o->port);
    if (n < 0 || (size_t)n >= sizeof(o->path)) {
        mux_log("error: socket path '%s-%s-%d' is too long (at most %zu "
                "bytes)", o->prefix, o->dev, o->port, sizeof(o->path) - 1);
        return false;
    }
    return true;
}

static void fill_addr(struct sockaddr_un *sa, const char *path)
{
    memset(sa, 0, sizeof(*sa));
    sa->sun_family = AF_UNIX;
    memcpy(sa->sun_path, path, strlen(path));
}

/*
 * Refuses a socket path that a live process serves or that is not a
 * socket; a socket file nobody listens on is left by a dead daemon and
 * is removed.
 */
static bool socket_path_free(const char *path)
{
    struct sockaddr_un sa;
    struct stat st;
    int fd, r, err;

    if (lstat(path, &st) < 0) {
        if (errno == ENOENT) {
            return true;
        }
        mux_log("error: %s: %s", path, strerror(errno));
        return false;
    }
    if (!S_ISSOCK(st.st_mode)) {
        mux_log("error: %s exists and is not a socket; not touching it", path);
        return false;
    }
    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        mux_log("error: socket: %s", strerror(errno));
        return false;
    }
    fill_addr(&sa, path);
    r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
    err = errno;
    close(fd);
    if (!r) {
        mux_log("error: %s is in use: an rdmacm-mux for this port is "
                "already running", path);
        return false;
    }
    if (err != ECONNREFUSED) {
        mux_log("error: %s: %s", path, strerror(err));
        return false;
    }
    mux_log("replacing the stale socket %s", path);
    if (unlink(path) < 0 && errno != ENOENT) {
        mux_log("error: cannot remove %s: %s", path, strerror(errno));
        return false;
    }
    return true;
}

/*
 * Gives the new socket file its owner, group and mode.  It was created
 * 0600 and nobody can connect before listen(), so no client ever sees
 * other permissions.  lchown() and the socket check keep a path that was
 * replaced meanwhile (a writable directory) from being followed.
 */
static bool socket_set_perm(const MuxOptions *o, struct stat *st)
{
    if ((o->owner != (uid_t)-1 || o->group != (gid_t)-1) &&
        lchown(o->path, o->owner, o->group) < 0) {
        mux_log("error: cannot give the socket %s to owner %d group %d: %s",
                o->path, (int)o->owner, (int)o->group, strerror(errno));
        return false;
    }
    if (lstat(o->path, st) < 0 || !S_ISSOCK(st->st_mode)) {
        mux_log("error: the socket %s was removed or replaced", o->path);
        return false;
    }
    if (chmod(o->path, o->mode) < 0 || lstat(o->path, st) < 0) {
        mux_log("error: cannot set the mode of the socket %s: %s", o->path,
                strerror(errno));
        return false;
    }
    /* A default ACL on the directory, for one, could have added rights. */
    if (!S_ISSOCK(st->st_mode) || (st->st_mode & 07777) != o->mode ||
        (o->owner != (uid_t)-1 && st->st_uid != o->owner) ||
        (o->group != (gid_t)-1 && st->st_gid != o->group)) {
        mux_log("error: the socket %s has mode %04o owner %d group %d, not "
                "what was asked for", o->path, (unsigned)st->st_mode & 07777,
                (int)st->st_uid, (int)st->st_gid);
        return false;
    }
    return true;
}

static int listen_on(const MuxOptions *o, struct stat *st)
{
    struct sockaddr_un sa;
    mode_t old_mask;
    int fd, r;

    fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        mux_log("error: socket: %s", strerror(errno));
        return -1;
    }
    fill_addr(&sa, o->path);
    old_mask = umask(0177);
    r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
    umask(old_mask);
    if (r < 0) {
        mux_log("error: cannot create the socket %s: %s", o->path,
                strerror(errno));
        close(fd);
        return -1;
    }
    if (!socket_set_perm(o, st)) {
        close(fd);
        unlink(o->path);
        return -1;
    }
    if (listen(fd, 64) < 0) {
        mux_log("error: cannot listen on %s: %s", o->path, strerror(errno));
        close(fd);
        unlink(o->path);
        return -1;
    }
    return fd;
}

/* Removes the socket unless another daemon has replaced it since. */
static void unlink_own_socket(const char *path, const struct stat *ours)
{
    struct stat st;

    if (lstat(path, &st) == 0 && st.st_dev == ours->st_dev &&
        st.st_ino == ours->st_ino) {
        unlink(path);
    }
}

/* Room for every client if the hard limit allows; else accept pauses. */
static void raise_fd_limit(void)
{
    rlim_t want = MUX_MAX_CLIENTS + 32;
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < want) {
        rl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0) {
            mux_debug("setrlimit: %s", strerror(errno));
        }
    }
}

static int signals_open(void)
{
    sigset_t set;
    int fd;

    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
        mux_log("error: sigprocmask: %s", strerror(errno));
        return -1;
    }
    fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (fd < 0) {
        mux_log("error: signalfd: %s", strerror(errno));
    }
    return fd;
}

static void stats_print(const Mux *mux)
{
    const MuxStats *s = &mux->stats;

    mux_log("MADs received %llu: delivered %llu, no client %llu, client "
            "queue full %llu, not for clients %llu; MADs sent %llu, SENDs "
            "refused %llu; clients %u now, %llu accepted, %llu refused (%llu "
            "over the per-user bound), %llu evicted idle, %llu cut off for "
            "malformed input; REGISTERs refused by --allow-gids %llu",
            (unsigned long long)s->rx, (unsigned long long)s->rx_delivered,
            (unsigned long long)s->rx_no_dest,
            (unsigned long long)s->rx_queue_full,
            (unsigned long long)s->rx_bad, (unsigned long long)s->tx,
            (unsigned long long)s->tx_refused, mux->n_clients,
            (unsigned long long)s->clients,
            (unsigned long long)s->clients_refused,
            (unsigned long long)s->clients_refused_uid,
            (unsigned long long)s->clients_evicted,
            (unsigned long long)s->protocol_errors,
            (unsigned long long)s->gids_refused);
}

/* Reads a batch of MADs from the port; false if the port is gone. */
static bool port_readable(Mux *mux)
{
    RdmaCmMuxMad m;
    int i, r;

    for (i = 0; i < MUX_RX_BATCH; i++) {
        r = mux_port_recv(&mux->port, &m);
        if (r < 0) {
            mux_log("error: receiving from %s port %d: %s", mux->port.dev,
                    mux->port.port_num, strerror(-r));
            return false;
        }
        if (r == MUX_RX_NONE) {
            break;
        }
        mux->stats.rx++;
        if (r == MUX_RX_DROPPED) {
            mux->stats.rx_bad++;
            continue;
        }
        mux_client_route(mux, &m);
    }
    return true;
}

/* Returns true when a signal asks to stop. */
static bool signal_readable(Mux *mux, int sfd)
{
    struct signalfd_siginfo si;

    while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGUSR1) {
            stats_print(mux);
            continue;
        }
        mux_log("stopping on signal %u", si.ssi_signo);
        return true;
    }
    return false;
}

/* The poll() loop; returns the exit status. */
static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int run(Mux *mux, int sfd)
{
    struct pollfd fds[3 + MUX_MAX_CLIENTS];
    MuxClient *who[3 + MUX_MAX_CLIENTS];

    for (;;) {
        unsigned n = 0, i;

        fds[n++] = (struct pollfd) { .fd = sfd, .events = POLLIN };
        fds[n++] = (struct pollfd) { .fd = mux->port.fd, .events = POLLIN };
        fds[n++] = (struct pollfd) {
            .fd = mux->listen_fd,
            .events = mux->accept_paused ? 0 : POLLIN,
        };
        for (i = 0; i < MUX_MAX_CLIENTS; i++) {
            MuxClient *c = mux->clients[i];

            if (!c) {
                continue;
            }
            who[n] = c;
            fds[n++] = (struct pollfd) {
                .fd = c->fd,
                .events = (mux_client_wants_input(c) ? POLLIN : 0) |
                          (c->out_len > c->out_off ? POLLOUT : 0),
            };
        }
        if (poll(fds, n, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            mux_log("error: poll: %s", strerror(errno));
            return 1;
        }
        mux->now_ms = now_ms();
        if (fds[0].revents && signal_readable(mux, sfd)) {
            return 0;
        }
        if (fds[1].revents & (POLLERR | POLLHUP | POLLNVAL)) {
            mux_log("error: %s port %d went away", mux->port.dev,
                    mux->port.port_num);
            return 1;
        }
        if ((fds[1].revents & POLLIN) && !port_readable(mux)) {
            return 1;
        }
        for (i = 3; i < n; i++) {
            MuxClient *c = who[i];

            if (!fds[i].revents) {
                continue;
            }
            if ((fds[i].revents & (POLLHUP | POLLERR)) &&
                !mux_client_wants_input(c)) {
                c->dead = true;
            } else {
                mux_client_service(mux, c);
            }
        }
        /* MADs routed above are written now rather than after a poll. */
        for (i = 0; i < MUX_MAX_CLIENTS; i++) {
            MuxClient *c = mux->clients[i];

            if (c && !c->dead) {
                mux_client_flush(c);
            }
            if (c && c->dead) {
                mux_client_close(mux, c);
            }
        }
        /* Last, so that a new client never takes a slot polled above. */
        if (fds[2].revents & POLLIN) {
            mux_client_accept(mux);
        }
    }
}

int main(int argc, char **argv)
{
    Mux *mux;
    MuxOptions o;
    struct stat sock_st;
    int sfd, status = 1;
    unsigned i;

    if (!parse_args(argc, argv, &o)) {
        return 2;
    }
    if (umad_init() < 0) {
        mux_log("error: umad_init failed");
        return 1;
    }
    if (!mux_port_check(o.dev, o.port) || !socket_path_free(o.path)) {
        return 1;
    }
    mux = calloc(1, sizeof(*mux));
    if (!mux) {
        mux_log("error: out of memory");
        return 1;
    }
    mux->listen_fd = -1;
    mux->max_per_uid = o.max_per_uid;
    mux->idle_ms = o.idle_ms;
    mux->gid_rules = o.gid_rules;
    mux->n_gid_rules = o.n_gid_rules;
    mux_route_init();
    raise_fd_limit();
    sfd = signals_open();
    if (sfd < 0) {
        goto out;
    }
    if (!mux_port_open(&mux->port, o.dev, o.port)) {
        goto out_signals;
    }
    mux->listen_fd = listen_on(&o, &sock_st);
    if (mux->listen_fd < 0) {
        goto out_port;
    }
    mux_log("serving CM MADs of %s port %d on %s (mode %04o owner %d group "
            "%d)", o.dev, o.port, o.path, (unsigned)sock_st.st_mode & 07777,
            (int)sock_st.st_uid, (int)sock_st.st_gid);

    status = run(mux, sfd);

    for (i = 0; i < MUX_MAX_CLIENTS; i++) {
        if (mux->clients[i]) {
            mux_client_close(mux, mux->clients[i]);
        }
    }
    close(mux->listen_fd);
    unlink_own_socket(o.path, &sock_st);
    stats_print(mux);
out_port:
    mux_port_close(&mux->port);
out_signals:
    close(sfd);
out:
    mux_route_fini();
    umad_done();
    free(mux);
    return status;
}
