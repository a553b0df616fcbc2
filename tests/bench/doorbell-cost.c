/*
 * doorbell-cost: what one doorbell write costs a guest vCPU (make bench).
 *
 * Runs inside the test guest (tests/guest, scenario "dbcost").  Each case
 * times a loop of one operation on one vCPU and prints the time per
 * operation, the median of 5 timed runs:
 *
 *   ram     a store to ordinary memory (the loop's own cost)
 *   noop    a 32-bit store to a register of another PCI device that does
 *           nothing with it (an unused e1000 register, BAR 0 mapped through
 *           sysfs; --noop-dev): the price of any MMIO exit
 *   poll    ibv_poll_cq() on an empty CQ: one CQ POLL doorbell each
 *   arm     ibv_req_notify_cq(): one CQ ARM doorbell each
 *   write   an 8-byte inline RDMA WRITE to a second QP of this process
 *           and its completion: one QP SEND doorbell each, with the work
 *   send    an 8-byte SEND between the two QPs: the receive WQE (RECV
 *           doorbell), the SEND (SEND doorbell), both completions
 *
 * under three conditions on the other vCPU:
 *
 *   idle    nothing runs there
 *   spin    a thread there spins on ordinary memory (a busy CPU, no MMIO)
 *   poll    a thread there polls an empty CQ of its own (a POLL doorbell
 *           per poll, as the other side of a busy-polling ping-pong does)
 *
 * "poll" minus "spin" is what the other vCPU's doorbells add: with the
 * doorbells taking QEMU's big lock, mostly the wait for that lock.
 *
 * Output: one line per case, "dbcost OP COND NS_PER_OP ITERS", then
 * "dbcost done".  Exit status 0, or 1 when the device could not be set up.
 *
 * Usage: doorbell-cost -d IBDEV -x GID_INDEX [-t MS] [--noop-dev PCI_SYSFS_DIR]
 *
 * Copyright (c) 2026 The pvrdma for modern QEMU authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define RUNS 5
#define NOOP_OFFSET 0x1fffc     /* above every e1000 register (BAR 0: 128K) */

struct dev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_mr *mr;
    char *buf;
    struct ibv_cq *cq_a, *cq_b, *cq_empty;
    struct ibv_qp *qp_a, *qp_b;
};

static volatile uint32_t *noop_reg;
static volatile uint32_t ram_word;
static volatile uint32_t spin_word;     /* the other thread's, not ours */
static atomic_int other_mode;   /* 0 idle, 1 spin, 2 poll, -1 quit */
static atomic_long other_ops;

static void die(const char *what)
{
    fprintf(stderr, "doorbell-cost: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void pin(int cpu)
{
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set)) {
        die("sched_setaffinity");
    }
}

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Two RC QPs of one PD connected to each other on port 1. */
static void connect_qp(struct ibv_qp *qp, uint32_t dest, union ibv_gid *gid,
                       int gidx)
{
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_INIT, .port_num = 1,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE,
    };

    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
                      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        die("modify_qp INIT");
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_1024;
    a.dest_qp_num = dest;
    a.rq_psn = 1;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 1;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = *gid;
    a.ah_attr.grh.sgid_index = gidx;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = 1;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
                      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                      IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        die("modify_qp RTR");
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = 1;
    a.max_rd_atomic = 1;
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
                      IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                      IBV_QP_MAX_QP_RD_ATOMIC)) {
        die("modify_qp RTS");
    }
}

static void open_dev(struct dev *d, const char *name, int gidx)
{
    struct ibv_device **list = ibv_get_device_list(NULL);
    struct ibv_qp_init_attr qa = {
        .qp_type = IBV_QPT_RC,
        .cap = { .max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1,
                 .max_recv_sge = 1, .max_inline_data = 64 },
    };
    union ibv_gid gid;
    int i;

    for (i = 0; list && list[i]; i++) {
        if (!strcmp(ibv_get_device_name(list[i]), name)) {
            d->ctx = ibv_open_device(list[i]);
            break;
        }
    }
    if (!d->ctx) {
        die(name);
    }
    if (ibv_query_gid(d->ctx, 1, gidx, &gid)) {
        die("query_gid");
    }
    d->pd = ibv_alloc_pd(d->ctx);
    d->buf = calloc(1, 4096);
    d->mr = d->pd ? ibv_reg_mr(d->pd, d->buf, 4096, IBV_ACCESS_LOCAL_WRITE |
                               IBV_ACCESS_REMOTE_WRITE) : NULL;
    d->cq_a = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
    d->cq_b = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
    d->cq_empty = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
    if (!d->mr || !d->cq_a || !d->cq_b || !d->cq_empty) {
        die("pd/mr/cq");
    }
    qa.send_cq = qa.recv_cq = d->cq_a;
    d->qp_a = ibv_create_qp(d->pd, &qa);
    qa.send_cq = qa.recv_cq = d->cq_b;
    d->qp_b = ibv_create_qp(d->pd, &qa);
    if (!d->qp_a || !d->qp_b) {
        die("create_qp");
    }
    connect_qp(d->qp_a, d->qp_b->qp_num, &gid, gidx);
    connect_qp(d->qp_b, d->qp_a->qp_num, &gid, gidx);
    ibv_free_device_list(list);
}

static void wait_one(struct ibv_cq *cq)
{
    struct ibv_wc wc;
    int n;

    while ((n = ibv_poll_cq(cq, 1, &wc)) == 0) {
    }
    if (n < 0 || wc.status != IBV_WC_SUCCESS) {
        fprintf(stderr, "doorbell-cost: completion failed: %s\n",
                n < 0 ? "poll error" : ibv_wc_status_str(wc.status));
        exit(1);
    }
}

static struct dev dev;
static struct ibv_cq *other_cq;

/* One operation of case @op. */
static void op_once(const char *op)
{
    struct ibv_sge sge = { .addr = (uintptr_t)dev.buf, .length = 8,
                           .lkey = dev.mr->lkey };
    struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1,
                               .send_flags = IBV_SEND_SIGNALED |
                                             IBV_SEND_INLINE };
    struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
    struct ibv_send_wr *bs;
    struct ibv_recv_wr *br;
    struct ibv_wc wc;

    switch (op[0]) {
    case 'r':
        ram_word++;
        break;
    case 'n':
        *noop_reg = 0;
        break;
    case 'p':
        if (ibv_poll_cq(dev.cq_empty, 1, &wc) != 0) {
            fprintf(stderr, "doorbell-cost: the empty CQ is not empty\n");
            exit(1);
        }
        break;
    case 'a':
        ibv_req_notify_cq(dev.cq_empty, 0);
        break;
    case 'w':
        swr.opcode = IBV_WR_RDMA_WRITE;
        swr.wr.rdma.remote_addr = (uintptr_t)dev.buf + 64;
        swr.wr.rdma.rkey = dev.mr->rkey;
        if (ibv_post_send(dev.qp_a, &swr, &bs)) {
            die("post_send");
        }
        wait_one(dev.cq_a);
        break;
    case 's':
        sge.addr += 128;
        if (ibv_post_recv(dev.qp_b, &rwr, &br)) {
            die("post_recv");
        }
        sge.addr -= 128;
        swr.opcode = IBV_WR_SEND;
        if (ibv_post_send(dev.qp_a, &swr, &bs)) {
            die("post_send");
        }
        wait_one(dev.cq_a);
        wait_one(dev.cq_b);
        break;
    }
}

/* The thread on the other vCPU. */
static void *other_thread(void *arg)
{
    struct ibv_wc wc;
    int mode;

    pin(0);
    while ((mode = atomic_load(&other_mode)) >= 0) {
        if (mode == 2) {
            ibv_poll_cq(other_cq, 1, &wc);
        } else if (mode == 1) {
            spin_word++;
        } else {
            usleep(1000);
            continue;
        }
        atomic_fetch_add_explicit(&other_ops, 1, memory_order_relaxed);
    }
    return NULL;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

/* Median time per operation over RUNS runs of about @ms each. */
static double measure(const char *op, int ms, long *iters)
{
    double t[RUNS], t0;
    long n = 100, i;
    int r;

    /* Calibrate: grow n until one run takes a tenth of the target. */
    for (;;) {
        t0 = now_ns();
        for (i = 0; i < n; i++) {
            op_once(op);
        }
        if (now_ns() - t0 >= ms * 1e5 || n >= 100000000) {
            break;
        }
        n *= 4;
    }
    n = n * ms * 1e6 / (now_ns() - t0 + 1) + 1;
    for (r = 0; r < RUNS; r++) {
        t0 = now_ns();
        for (i = 0; i < n; i++) {
            op_once(op);
        }
        t[r] = (now_ns() - t0) / n;
    }
    qsort(t, RUNS, sizeof(t[0]), cmp_double);
    *iters = n;
    return t[RUNS / 2];
}

static void map_noop(const char *pci)
{
    char path[512];
    int fd;
    void *p;

    snprintf(path, sizeof(path), "%s/enable", pci);
    fd = open(path, O_WRONLY);
    if (fd >= 0) {
        if (write(fd, "1", 1) != 1) {
            /* already enabled by the firmware: fine */
        }
        close(fd);
    }
    snprintf(path, sizeof(path), "%s/resource0", pci);
    fd = open(path, O_RDWR | O_SYNC);
    if (fd < 0) {
        die(path);
    }
    p = mmap(NULL, NOOP_OFFSET + 4, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        die("mmap of the no-op device's BAR 0");
    }
    noop_reg = (volatile uint32_t *)((char *)p + NOOP_OFFSET);
}

int main(int argc, char **argv)
{
    static const struct option lopts[] = {
        { "noop-dev", required_argument, NULL, 'N' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    static const char *const ops[] = { "ram", "noop", "poll", "arm",
                                       "write", "send" };
    static const char *const conds[] = { "idle", "spin", "poll" };
    const char *name = NULL, *noop_dev = NULL;
    int gidx = -1, ms = 200, c, o, k;
    pthread_t th;

    while ((c = getopt_long(argc, argv, "d:x:t:h", lopts, NULL)) != -1) {
        switch (c) {
        case 'd': name = optarg; break;
        case 'x': gidx = atoi(optarg); break;
        case 't': ms = atoi(optarg); break;
        case 'N': noop_dev = optarg; break;
        default:
            fprintf(stderr, "usage: %s -d IBDEV -x GID_INDEX [-t MS] "
                    "[--noop-dev /sys/bus/pci/devices/...]\n", argv[0]);
            return c == 'h' ? 0 : 2;
        }
    }
    if (!name || gidx < 0 || ms <= 0) {
        fprintf(stderr, "doorbell-cost: -d IBDEV and -x GID_INDEX are "
                "required (see --help)\n");
        return 2;
    }
    if (noop_dev) {
        map_noop(noop_dev);
    }
    open_dev(&dev, name, gidx);
    other_cq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
    if (!other_cq) {
        die("create_cq");
    }
    pin(1);
    if (pthread_create(&th, NULL, other_thread, NULL)) {
        die("pthread_create");
    }
    for (k = 0; k < 3; k++) {
        for (o = 0; o < 6; o++) {
            long iters, before;
            double ns;

            if (o == 1 && !noop_reg) {
                continue;
            }
            atomic_store(&other_mode, k);
            usleep(20000);
            before = atomic_load(&other_ops);
            ns = measure(ops[o], ms, &iters);
            if (k > 0 && atomic_load(&other_ops) == before) {
                fprintf(stderr, "doorbell-cost: the other vCPU's thread "
                        "did not run\n");
                return 1;
            }
            printf("dbcost %s %s %.0f %ld\n", ops[o], conds[k], ns, iters);
            fflush(stdout);
        }
    }
    atomic_store(&other_mode, -1);
    pthread_join(th, NULL);
    printf("dbcost done\n");
    return 0;
}
