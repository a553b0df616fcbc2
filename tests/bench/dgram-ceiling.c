/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make bench (tests/bench/g2g-bench.sh): the ceiling of the link two
 * guests share, "-netdev dgram" between two QEMUs on 127.0.0.1, for frames
 * of one size (a RoCE v2 packet of 1024 payload bytes is 1082 bytes on
 * the wire: Ethernet 14, IPv4 20, UDP 8, BTH 12, payload 1024, ICRC 4).
 * -netdev dgram carries each Ethernet frame as one UDP datagram (no FCS,
 * no header of its own): QEMU sendto()s it, and the peer QEMU's main loop
 * wakes up and recv()s one datagram per round.
 *
 *   dgram-ceiling direct FRAME SECONDS WINDOW
 *       No QEMU: one thread sendto()s datagrams of FRAME bytes to a socket
 *       on 127.0.0.1, another thread poll()s and recv()s them one by one,
 *       the per-frame system calls of the two ends of -netdev dgram and
 *       nothing else (an upper bound for what the netdev carries).
 *   dgram-ceiling chain FRAME SECONDS WINDOW OUT-PORT IN-PORT
 *       Through QEMUs: datagrams go to 127.0.0.1:OUT-PORT (QEMU A's
 *       netdev, which forwards them to its other netdev, the link to
 *       QEMU B, which forwards them to 127.0.0.1:IN-PORT, bound here).
 *       This side sends and receives in batches (sendmmsg, recvmmsg) to
 *       take as little of the machine's CPU as it can.
 *
 * Both modes keep at most WINDOW frames in flight (sent, not yet
 * received), so that no socket buffer overflows: the figure is what the
 * path carries without loss.  A frame not back within 200 ms is written
 * off as lost (counted and printed; a window of lost frames is replaced).
 * Every frame carries its sequence number; the receiver counts frames
 * that arrive out of order.  The measurement starts after 2000 warm-up
 * frames went through.
 *
 * Output, one "key value" per line: mode, frame_bytes, window, seconds
 * (measured), frames_sent, frames_received, frames_lost, out_of_order,
 * frames_per_sec, mibps (received frames x FRAME bytes / 2^20 / seconds).
 * Exit status 1 when no frame came through (the chain is not connected).
 *
 * Build: cc -O2 -pthread -o dgram-ceiling dgram-ceiling.c
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WARMUP 2000
#define LOST_MS 200
#define BATCH 64
#define MAXFRAME 65507

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "dgram-ceiling: %s: %s\n", what, strerror(errno));
    exit(2);
}

static int udp_socket(int port, struct sockaddr_in *bound)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    socklen_t len = sizeof(a);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);

    if (fd < 0) {
        die("socket");
    }
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
        die("bind");
    }
    if (bound && getsockname(fd, (struct sockaddr *)bound, &len) < 0) {
        die("getsockname");
    }
    return fd;
}

static struct sockaddr_in loopback(int port)
{
    struct sockaddr_in a = { .sin_family = AF_INET };

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

/* --- shared counters ------------------------------------------------------ */
static size_t frame;
static double seconds;
static uint64_t window;
static _Atomic uint64_t sent, received, lost, out_of_order, expect;
static _Atomic int phase;   /* 0 warm-up, 1 measuring, 2 done */
static _Atomic uint64_t base_sent, base_received, base_lost, base_ooo;

/* account one received frame carrying sequence number seq */
static void got(uint64_t seq)
{
    if (seq != atomic_load(&expect)) {
        atomic_fetch_add(&out_of_order, 1);
    }
    atomic_store(&expect, seq + 1);
    atomic_fetch_add(&received, 1);
}

/* in flight: sent, not received, not written off */
static uint64_t in_flight(void)
{
    uint64_t s = atomic_load(&sent), r = atomic_load(&received),
             l = atomic_load(&lost);
    return s > r + l ? s - r - l : 0;
}

static void snapshot(void)
{
    atomic_store(&base_sent, atomic_load(&sent));
    atomic_store(&base_received, atomic_load(&received));
    atomic_store(&base_lost, atomic_load(&lost));
    atomic_store(&base_ooo, atomic_load(&out_of_order));
}

static void report(const char *mode, double secs)
{
    uint64_t s = atomic_load(&sent) - atomic_load(&base_sent);
    uint64_t r = atomic_load(&received) - atomic_load(&base_received);
    uint64_t l = atomic_load(&lost) - atomic_load(&base_lost);
    uint64_t o = atomic_load(&out_of_order) - atomic_load(&base_ooo);

    printf("mode %s\nframe_bytes %zu\nwindow %llu\nseconds %.3f\n", mode, frame,
           (unsigned long long)window, secs);
    printf("frames_sent %llu\nframes_received %llu\nframes_lost %llu\n"
           "out_of_order %llu\n", (unsigned long long)s,
           (unsigned long long)r, (unsigned long long)l,
           (unsigned long long)o);
    printf("frames_per_sec %.0f\nmibps %.1f\n", r / secs,
           (double)r * frame / (1024.0 * 1024.0) / secs);
}

/*
 * Write off the window when nothing came back for LOST_MS: called by the
 * sender when the window is full.  last_rx: when the last frame arrived.
 */
static _Atomic double last_rx;
static void write_off_if_stalled(void)
{
    if (now() - atomic_load(&last_rx) > LOST_MS / 1000.0) {
        atomic_fetch_add(&lost, in_flight());
        atomic_store(&last_rx, now());
    }
}

/* --- direct: two threads, one datagram per system call ----------------- */
static int direct_rx_fd;
static void *direct_receiver(void *arg)
{
    static char buf[MAXFRAME];
    struct pollfd p = { .fd = direct_rx_fd, .events = POLLIN };

    (void)arg;
    while (atomic_load(&phase) < 2) {
        /* as QEMU's main loop: wait for the fd, then one recv() */
        int n = poll(&p, 1, 50);
        if (n <= 0) {
            continue;
        }
        ssize_t len = recv(direct_rx_fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (len >= 8) {
            uint64_t seq;
            memcpy(&seq, buf, 8);
            got(seq);
            atomic_store(&last_rx, now());
        }
    }
    return NULL;
}

static int run_direct(void)
{
    static char buf[MAXFRAME];
    struct sockaddr_in rx;
    pthread_t th;
    double t0 = 0, t;
    int tx_fd;

    direct_rx_fd = udp_socket(0, &rx);
    tx_fd = udp_socket(0, NULL);
    memset(buf, 0xa5, frame);
    atomic_store(&last_rx, now());
    if (pthread_create(&th, NULL, direct_receiver, NULL)) {
        errno = EAGAIN;
        die("pthread_create");
    }
    for (;;) {
        if (in_flight() >= window) {
            write_off_if_stalled();
            sched_yield();
        } else {
            uint64_t seq = atomic_load(&sent);
            memcpy(buf, &seq, 8);
            if (sendto(tx_fd, buf, frame, 0, (struct sockaddr *)&rx,
                       sizeof(rx)) == (ssize_t)frame) {
                atomic_fetch_add(&sent, 1);
            } else if (errno != EAGAIN && errno != ENOBUFS && errno != EINTR) {
                die("sendto");
            }
        }
        if (atomic_load(&phase) == 0) {
            if (atomic_load(&received) >= WARMUP) {
                snapshot();
                t0 = now();
                atomic_store(&phase, 1);
            } else if (now() - atomic_load(&last_rx) > 5) {
                break;
            }
        } else if ((t = now()) - t0 >= seconds) {
            report("direct", t - t0);
            break;
        }
    }
    atomic_store(&phase, 2);
    pthread_join(th, NULL);
    if (t0 == 0) {
        fprintf(stderr, "dgram-ceiling: no frame came back in 5 s\n");
        return 1;
    }
    return 0;
}

/* --- chain: this side sends into QEMU A and receives from QEMU B --------- */
static int run_chain(int out_port, int in_port)
{
    static char txbuf[BATCH][MAXFRAME], rxbuf[BATCH][MAXFRAME];
    struct mmsghdr tx[BATCH], rx[BATCH];
    struct iovec txv[BATCH], rxv[BATCH];
    struct sockaddr_in to = loopback(out_port);
    int tx_fd = udp_socket(0, NULL), rx_fd = udp_socket(in_port, NULL);
    double t0 = 0, t, start = now();

    memset(tx, 0, sizeof(tx));
    memset(rx, 0, sizeof(rx));
    for (int i = 0; i < BATCH; i++) {
        memset(txbuf[i], 0xa5, frame);
        txv[i] = (struct iovec){ txbuf[i], frame };
        tx[i].msg_hdr.msg_iov = &txv[i];
        tx[i].msg_hdr.msg_iovlen = 1;
        tx[i].msg_hdr.msg_name = &to;
        tx[i].msg_hdr.msg_namelen = sizeof(to);
        rxv[i] = (struct iovec){ rxbuf[i], MAXFRAME };
        rx[i].msg_hdr.msg_iov = &rxv[i];
        rx[i].msg_hdr.msg_iovlen = 1;
    }
    atomic_store(&last_rx, now());
    for (;;) {
        uint64_t room = window - in_flight();
        if (in_flight() < window) {
            int n = room < BATCH ? (int)room : BATCH;
            for (int i = 0; i < n; i++) {
                uint64_t seq = atomic_load(&sent) + i;
                memcpy(txbuf[i], &seq, 8);
            }
            int m = sendmmsg(tx_fd, tx, n, 0);
            if (m > 0) {
                atomic_fetch_add(&sent, m);
            } else if (m < 0 && errno != EAGAIN && errno != ENOBUFS &&
                       errno != EINTR) {
                die("sendmmsg");
            }
        }
        /* wait for frames (at most LOST_MS), then take all that are there */
        struct pollfd p = { .fd = rx_fd, .events = POLLIN };
        if (poll(&p, 1, LOST_MS) > 0) {
            int m = recvmmsg(rx_fd, rx, BATCH, MSG_DONTWAIT, NULL);
            for (int i = 0; i < m; i++) {
                if (rx[i].msg_len >= 8) {
                    uint64_t seq;
                    memcpy(&seq, rxbuf[i], 8);
                    got(seq);
                }
            }
            if (m > 0) {
                atomic_store(&last_rx, now());
            }
        } else {
            write_off_if_stalled();
        }
        if (atomic_load(&phase) == 0) {
            if (atomic_load(&received) >= WARMUP) {
                snapshot();
                t0 = now();
                atomic_store(&phase, 1);
            } else if (now() - start > 10) {
                break;
            }
        } else if ((t = now()) - t0 >= seconds) {
            report("chain", t - t0);
            return 0;
        }
    }
    fprintf(stderr, "dgram-ceiling: %llu of %d warm-up frames came back from "
            "127.0.0.1:%d in 10 s (sent %llu to 127.0.0.1:%d)\n",
            (unsigned long long)atomic_load(&received), WARMUP, in_port,
            (unsigned long long)atomic_load(&sent), out_port);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[1], "direct") && strcmp(argv[1], "chain")) ||
        (!strcmp(argv[1], "chain") && argc < 7)) {
        fprintf(stderr, "usage: dgram-ceiling direct FRAME SECONDS WINDOW\n"
                "       dgram-ceiling chain FRAME SECONDS WINDOW OUT-PORT IN-PORT\n");
        return 2;
    }
    frame = strtoul(argv[2], NULL, 0);
    seconds = strtod(argv[3], NULL);
    window = strtoull(argv[4], NULL, 0);
    if (frame < 8 || frame > MAXFRAME || seconds <= 0 || window < 1) {
        fprintf(stderr, "dgram-ceiling: FRAME 8..%d, SECONDS > 0, WINDOW >= 1\n",
                MAXFRAME);
        return 2;
    }
    if (!strcmp(argv[1], "direct")) {
        return run_direct();
    }
    return run_chain(atoi(argv[5]), atoi(argv[6]));
}
