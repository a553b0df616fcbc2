/*
 * Seed inputs for the pvrdma fuzz target, one per scenario of the device
 * qtests (tests/qtest/pvrdma-test.c, pvrdma-datapath-test.c): the same
 * objects, work requests and hostile writes, in the operation format of
 * pvrdma_fuzz.h.  They give libFuzzer a start past the DSR and command
 * validation, inside the data path.
 *
 * Build and run (tests/fuzz/run.sh --seeds does it):
 *   cc -I<project> -o gen-seeds tests/fuzz/gen-seeds.c
 *   ./gen-seeds <output directory>
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QEMU_PACKED             __attribute__((packed))
#define QEMU_BUILD_BUG_ON(x)    _Static_assert(!(x), #x)
#include "hw/rdma/vmw/pvrdma_abi.h"
#include <linux/pci_regs.h>
#include "tests/fuzz/pvrdma_fuzz.h"

#define PAGE        4096
#define ACC_ALL     0xf

/* Objects of every seed made by fixture(): their selectors */
#define PD0         0
#define DMA_MR      0
#define CQ0         0
#define CQ1         1

typedef struct Seed {
    uint8_t b[16384];
    size_t n;
} Seed;

/* One operation; trailing zero bytes of a tail-less one are implied. */
static void op(Seed *s, int code, const void *args, size_t alen,
               const void *tail, size_t tlen)
{
    if (!tlen) {
        while (alen && !((const uint8_t *)args)[alen - 1]) {
            alen--;
        }
    }
    assert(alen + tlen <= 255 && s->n + 2 + alen + tlen <= sizeof(s->b));
    s->b[s->n++] = code;
    s->b[s->n++] = alen + tlen;
    memcpy(s->b + s->n, args, alen);
    s->n += alen;
    if (tlen) {
        memcpy(s->b + s->n, tail, tlen);
        s->n += tlen;
    }
}

static void cmd(Seed *s, PfCmd c)
{
    op(s, PF_OP_CMD, &c, sizeof(c), NULL, 0);
}

/* A command whose request is then changed by @x (XORed after the header) */
static void cmd_x(Seed *s, PfCmd c, const void *x, size_t xlen)
{
    op(s, PF_OP_CMD, &c, sizeof(c), x, xlen);
}

static void fixture(Seed *s)
{
    op(s, PF_OP_FIXTURE, NULL, 0, NULL, 0);
}

static void rc_pair(Seed *s, PfRcPair a)
{
    op(s, PF_OP_RC_PAIR, &a, sizeof(a), NULL, 0);
}

static void ud_qp(Seed *s, PfUdQp a)
{
    op(s, PF_OP_UD_QP, &a, sizeof(a), NULL, 0);
}

static PfSge sge(uint8_t mr, uint16_t off, uint32_t len)
{
    return (PfSge) { .mr = mr, .off = off, .len = len };
}

static void send_wr(Seed *s, PfSend a, const PfSge *g, size_t n)
{
    uint8_t buf[255];

    a.nsge = n;
    memcpy(buf, &a, sizeof(a));
    if (n) {
        memcpy(buf + sizeof(a), g, n * sizeof(*g));
    }
    op(s, PF_OP_SEND, buf, sizeof(a) + n * sizeof(*g), NULL, 0);
}

static void recv_wr(Seed *s, PfRecv a, const PfSge *g, size_t n)
{
    uint8_t buf[255];

    a.nsge = n;
    memcpy(buf, &a, sizeof(a));
    if (n) {
        memcpy(buf + sizeof(a), g, n * sizeof(*g));
    }
    op(s, PF_OP_RECV, buf, sizeof(a) + n * sizeof(*g), NULL, 0);
}

static void recv1(Seed *s, uint8_t target, uint64_t wr_id, uint16_t off,
                  uint32_t len)
{
    PfSge g = sge(DMA_MR, off, len);

    recv_wr(s, (PfRecv) { .target = target, .wr_id = wr_id }, &g, 1);
}

static void send1(Seed *s, uint8_t qp, uint8_t opcode, uint64_t wr_id,
                  uint16_t off, uint32_t len)
{
    PfSge g = sge(DMA_MR, off, len);

    send_wr(s, (PfSend) { .qp = qp, .opcode = opcode, .wr_id = wr_id,
                          .flags = PVRDMA_SEND_SIGNALED }, &g, 1);
}

static void poll(Seed *s, uint8_t ring, uint8_t sel, uint8_t knobs)
{
    PfPoll a = { .ring = ring, .sel = sel, .knobs = knobs };

    op(s, PF_OP_POLL, &a, sizeof(a), NULL, 0);
}

static void poll_all(Seed *s)
{
    poll(s, PF_POLL_CQ, CQ0, 0);
    poll(s, PF_POLL_CQ, CQ1, 0);
    poll(s, PF_POLL_ASYNC, 0, 0);
    poll(s, PF_POLL_CQN, 0, 0);
}

static void mem(Seed *s, uint8_t target, uint8_t sel, uint32_t off,
                const void *data, size_t len)
{
    PfMem a = { .target = target, .sel = sel, .off = off };

    op(s, PF_OP_MEM, &a, sizeof(a), data, len);
}

static void clock_step(Seed *s, uint8_t kind, uint32_t ns)
{
    PfClock a = { .kind = kind, .ns = ns };

    op(s, PF_OP_CLOCK, &a, sizeof(a), NULL, 0);
}

static void msix(Seed *s, uint8_t vector, uint8_t target, uint8_t ctl,
                 uint32_t off, uint32_t data)
{
    PfMsix a = { .vector = vector, .target = target, .ctl = ctl,
                 .off = off, .data = data };

    op(s, PF_OP_MSIX, &a, sizeof(a), NULL, 0);
}

static void reg(Seed *s, uint8_t r, bool read, uint32_t val)
{
    PfReg a = { .reg = r, .read = read, .val = val };

    op(s, PF_OP_REG, &a, sizeof(a), NULL, 0);
}

/* A user MR over 3 pages at an unaligned iova (selector 1 after fixture) */
static void user_mr(Seed *s, uint32_t access_xor)
{
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .access = access_xor,
                     .len = 2 * PAGE + 0x100 });
}

/* PfFrame.ackreq: from GID 1, the peer on the link, to GID 0 */
#define PEER    0x04

/* A frame from the link to QP @qp (PfFrame), @data its payload or XOR */
static void frame(Seed *s, PfFrame a, const void *data, size_t len)
{
    op(s, PF_OP_FRAME, &a, sizeof(a), data, len);
}

/* Scenarios */

/*
 * Requests from the link to the responder of an RC pair's QP 1, whose
 * peer is QP 0's number at GID 1 on the link, where the frames come from
 * (ackreq bits 2-3: 1): a SEND of one and of three packets, a WRITE, a
 * READ, an atomic, a duplicate, a PSN from the future, a packet changed
 * after the build; the same SEND from the device's own GID 0 (dropped);
 * and a UD SEND.
 */
static void seed_wire_requests(Seed *s)
{
    uint8_t data[200], x[16] = { 0, 0, 0, 0, 0xff };

    memset(data, 0x5a, sizeof(data));
    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .link = 1 });
    recv1(s, 1, 0xb0001, PAGE, 256);
    recv1(s, 1, 0xb0002, 2 * PAGE, 4096);
    frame(s, (PfFrame) { .opcode = 0x04, .qp = 1, .ackreq = 1 | PEER },
          data, 64);
    frame(s, (PfFrame) { .opcode = 0x00, .qp = 1, .psn = 0x101,
                         .ackreq = PEER }, data, 150);
    frame(s, (PfFrame) { .opcode = 0x01, .qp = 1, .psn = 0x102,
                         .ackreq = PEER }, data, 150);
    frame(s, (PfFrame) { .opcode = 0x03, .qp = 1, .psn = 0x103,
                         .ackreq = 3 | PEER, .imm = 0x01020304 }, data, 17);
    frame(s, (PfFrame) { .opcode = 0x0a, .qp = 1, .psn = 0x104,
                         .ackreq = 1 | PEER, .va = 0 }, data, 100);
    frame(s, (PfFrame) { .opcode = 0x0c, .qp = 1, .psn = 0x105,
                         .ackreq = PEER, .dma_len = 3000 }, NULL, 0);
    frame(s, (PfFrame) { .opcode = 0x14, .qp = 1, .psn = 0x106,
                         .ackreq = PEER, .swap_add = 5 }, NULL, 0);
    frame(s, (PfFrame) { .flags = PF_FRAME_TWICE, .opcode = 0x14, .qp = 1,
                         .psn = 0x106, .ackreq = PEER, .swap_add = 5 },
          NULL, 0);
    frame(s, (PfFrame) { .opcode = 0x04, .qp = 1, .psn = 0x107,
                         .ackreq = 1 }, data, 8);
    frame(s, (PfFrame) { .opcode = 0x04, .qp = 1, .psn = 0x300,
                         .ackreq = 1 | PEER }, data, 8);
    frame(s, (PfFrame) { .flags = PF_FRAME_XOR, .opcode = 0x0a, .qp = 1,
                         .psn = 0x107, .ackreq = PEER }, x, sizeof(x));
    ud_qp(s, (PfUdQp) { .rcq = CQ1 });
    recv1(s, 2, 0xc0001, 3 * PAGE, 512);
    frame(s, (PfFrame) { .opcode = 0x64, .qp = 2, .ackreq = PEER,
                         .src_qpn = 7 }, data, 100);
    poll_all(s);
}

/*
 * Responses from the link (GID 1) to the requester of an RC pair's QP 0,
 * connected to GID 1: ACKs, each kind of NAK, READ responses and an
 * atomic ACK at PSNs it has and has not sent, while it waits for its own
 * WRs.
 */
static void seed_wire_responses(Seed *s)
{
    uint8_t data[64];
    static const uint8_t syn[] = { 0x00, 0x1f, 0x21, 0x60, 0x61, 0x62, 0x63,
                                   0x7f };

    memset(data, 0x3c, sizeof(data));
    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .link = 1 });
    send1(s, 0, PVRDMA_WR_RDMA_WRITE, 1, 0, 64);
    for (size_t i = 0; i < sizeof(syn); i++) {
        frame(s, (PfFrame) { .opcode = 0x11, .qp = 0, .ackreq = PEER,
                             .psn = 0x100 + i, .syndrome = syn[i] },
              NULL, 0);
    }
    frame(s, (PfFrame) { .opcode = 0x10, .qp = 0, .psn = 0x101,
                         .ackreq = PEER }, data, 64);
    frame(s, (PfFrame) { .opcode = 0x0d, .qp = 0, .psn = 0x101,
                         .ackreq = PEER }, data, 64);
    frame(s, (PfFrame) { .opcode = 0x12, .qp = 0, .psn = 0x101,
                         .ackreq = PEER, .orig = 42 }, NULL, 0);
    poll_all(s);
}

/* A frame from the link, and no main loop before the next operation. */
static void frame_now(Seed *s, PfFrame a, const void *data, size_t len)
{
    op(s, PF_OP_FRAME | PF_OP_NO_FLUSH, &a, sizeof(a), data, len);
}

/*
 * The responder's checks from the link (IB 9.7.5; the qtest
 * /pvrdma/wire/responder-table), on pairs connected to GID 1: requests
 * that arrive while a READ of 8 packets is answered (kept, then taken),
 * duplicates of a READ (whole, its tail, not a part of it) and of an
 * atomic (kept, never executed), and, each on a pair of its own (a NAK
 * ends the QP), lengths (a first packet not of the path MTU, READ and
 * WRITE over 2 GiB, a WRITE short of its RETH length) and a WRITE that
 * the QP's rights do not allow.
 */
static void seed_wire_responder(Seed *s)
{
    uint8_t data[100];

    memset(data, 0x6b, sizeof(data));
    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .link = 1 });
    recv1(s, 1, 0xd0001, PAGE, 256);
    frame_now(s, (PfFrame) { .opcode = 0x0c, .qp = 1, .ackreq = PEER,
                             .dma_len = 8192 }, NULL, 0);
    frame_now(s, (PfFrame) { .opcode = 0x04, .qp = 1, .psn = 0x108,
                             .ackreq = 1 | PEER }, data, 40);
    frame_now(s, (PfFrame) { .opcode = 0x0a, .qp = 1, .psn = 0x109,
                             .ackreq = 1 | PEER, .va = 0 }, data, 64);
    frame_now(s, (PfFrame) { .opcode = 0x0c, .qp = 1, .psn = 0x200,
                             .ackreq = PEER, .dma_len = 64 }, NULL, 0);
    poll_all(s);
    frame(s, (PfFrame) { .opcode = 0x0c, .qp = 1, .ackreq = PEER,
                         .dma_len = 8192 }, NULL, 0);
    frame(s, (PfFrame) { .opcode = 0x0c, .qp = 1, .psn = 0x102,
                         .ackreq = PEER, .va = 0, .dma_len = 6144 }, NULL, 0);
    frame(s, (PfFrame) { .opcode = 0x0c, .qp = 1, .psn = 0x101,
                         .ackreq = PEER, .dma_len = 64 }, NULL, 0);
    frame(s, (PfFrame) { .flags = PF_FRAME_TWICE, .opcode = 0x14, .qp = 1,
                         .psn = 0x10a, .ackreq = PEER, .swap_add = 3 },
          NULL, 0);
    frame(s, (PfFrame) { .opcode = 0x13, .qp = 1, .psn = 0x0ff,
                         .ackreq = PEER, .compare = 1, .swap_add = 2 },
          NULL, 0);
    frame(s, (PfFrame) { .opcode = 0x04, .qp = 1, .psn = 0x109,
                         .ackreq = PEER }, data, 40);
    poll_all(s);
    /* Lengths and rights, a pair each: QPs 3, 5, 7, 9, 11 take them */
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .link = 1 });
    frame(s, (PfFrame) { .opcode = 0x00, .qp = 3, .ackreq = PEER },
          data, 100);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .link = 1 });
    frame(s, (PfFrame) { .opcode = 0x0c, .qp = 5, .ackreq = PEER,
                         .dma_len = 0x80000001 }, NULL, 0);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .link = 1 });
    frame(s, (PfFrame) { .opcode = 0x0a, .qp = 7, .ackreq = PEER,
                         .dma_len = 0x80000001 }, data, 100);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .link = 1 });
    frame(s, (PfFrame) { .opcode = 0x0a, .qp = 9, .ackreq = PEER,
                         .dma_len = 200 }, data, 100);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .link = 1,
                            .access_b = PVRDMA_ACCESS_REMOTE_WRITE });
    frame(s, (PfFrame) { .opcode = 0x0a, .qp = 11, .ackreq = PEER },
          data, 100);
    poll_all(s);
}

/* Frames that are not RoCE, or are cut, or lie about their lengths. */
static void seed_wire_raw(Seed *s)
{
    uint8_t f[80] = {
        0x52, 0x54, 0x00, 0x12, 0x34, 0x56, 0x52, 0x54, 0x00, 0x65, 0x43,
        0x21, 0x08, 0x00,                           /* Ethernet, IPv4 */
        0x45, 0x00, 0x07, 0xd0, 0, 0, 0x40, 0, 64, 17, 0, 0,
        10, 0, 2, 16, 10, 0, 2, 15,                 /* GID 1 to GID 0 */
        0xc0, 0x01, 0x12, 0xb7, 0xff, 0xff, 0, 0,   /* UDP to 4791 */
        0x04, 0, 0xff, 0xff, 0, 0, 0, 2, 0, 0, 1, 0, /* SEND_ONLY */
    };

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    for (size_t cut = 1; cut <= sizeof(f); cut += 13) {
        frame(s, (PfFrame) { .flags = PF_FRAME_RAW }, f, cut);
    }
    poll_all(s);
}

static void seed_rc_send(Seed *s)
{
    PfSend h = { .qp = 0, .opcode = PVRDMA_WR_SEND_WITH_IMM,
                 .flags = PVRDMA_SEND_SIGNALED | PVRDMA_SEND_SOLICITED,
                 .wr_id = 0xa0002, .imm = 0x78563412 };
    PfSge g = sge(DMA_MR, 0, 64);

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    recv1(s, 1, 0xb0001, PAGE, 256);
    send1(s, 0, PVRDMA_WR_SEND, 0xa0001, 0, 100);
    poll(s, PF_POLL_CQ, CQ1, PF_POLL_ARM_SOL);
    recv1(s, 1, 0xb0002, PAGE + 256, 256);
    send_wr(s, h, &g, 1);
    recv1(s, 0, 0xa0003, PAGE, 256);
    send_wr(s, (PfSend) { .qp = 1, .opcode = PVRDMA_WR_SEND,
                          .flags = PVRDMA_SEND_SIGNALED, .wr_id = 0xb0003 },
            NULL, 0);
    poll_all(s);
}

static void seed_rc_write(Seed *s)
{
    PfSend h = { .qp = 0, .opcode = PVRDMA_WR_RDMA_WRITE, .remote = 1,
                 .off = 0x80, .flags = PVRDMA_SEND_SIGNALED, .wr_id = 1 };
    PfSge g = sge(DMA_MR, 0, 300);

    fixture(s);
    user_mr(s, 0);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    send_wr(s, h, &g, 1);
    /* across the MR's page boundaries */
    h.off = PAGE - 16;
    g.len = PAGE + 32;
    h.wr_id = 2;
    send_wr(s, h, &g, 1);
    /* with immediate: consumes a receive */
    recv1(s, 1, 0xb0001, 2 * PAGE, 64);
    h.opcode = PVRDMA_WR_RDMA_WRITE_WITH_IMM;
    h.imm = 0x11223344;
    h.wr_id = 3;
    g.len = 16;
    send_wr(s, h, &g, 1);
    /* zero-length write: no key checked */
    h.opcode = PVRDMA_WR_RDMA_WRITE;
    h.remote = 0xf8;
    h.wr_id = 4;
    send_wr(s, h, NULL, 0);
    poll_all(s);
}

static void seed_rc_read(Seed *s)
{
    PfSend h = { .qp = 0, .opcode = PVRDMA_WR_RDMA_READ, .remote = DMA_MR,
                 .off = 8 * PAGE, .flags = PVRDMA_SEND_SIGNALED, .wr_id = 1 };
    PfSge g[2] = { sge(DMA_MR, 0, 100), sge(DMA_MR, PAGE, 200) };

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    send_wr(s, h, g, 2);
    poll_all(s);
}

static void seed_rc_atomics(Seed *s)
{
    PfSend h = { .qp = 0, .opcode = PVRDMA_WR_ATOMIC_CMP_AND_SWP,
                 .remote = DMA_MR, .off = 4 * PAGE, .compare_add = 0,
                 .swap = 0x1122334455667788ull,
                 .flags = PVRDMA_SEND_SIGNALED, .wr_id = 1 };
    PfSge g = sge(DMA_MR, 0, 8);

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    send_wr(s, h, &g, 1);
    h.opcode = PVRDMA_WR_ATOMIC_FETCH_AND_ADD;
    h.compare_add = 5;
    h.wr_id = 2;
    send_wr(s, h, &g, 1);
    /* misaligned: an invalid request */
    h.off = 4 * PAGE + 4;
    h.wr_id = 3;
    send_wr(s, h, &g, 1);
    poll_all(s);
}

static void seed_rc_multi_sge(Seed *s)
{
    PfSge g[4] = { sge(DMA_MR, 0, 10), sge(DMA_MR, 100, 0),
                   sge(1, 0x10, 30), sge(DMA_MR, 2 * PAGE, 4000) };
    PfSge r[3] = { sge(DMA_MR, 3 * PAGE, 7), sge(1, PAGE, 1000),
                   sge(DMA_MR, 5 * PAGE, 4000) };

    fixture(s);
    user_mr(s, 0);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    recv_wr(s, (PfRecv) { .target = 1, .wr_id = 0xb1 }, r, 3);
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_SEND,
                          .flags = PVRDMA_SEND_SIGNALED, .wr_id = 0xa1 },
            g, 4);
    poll_all(s);
}

static void seed_rc_signaled(Seed *s)
{
    PfSge g = sge(DMA_MR, 0, 8);
    int i;

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .sig_all = 2 });
    for (i = 0; i < 3; i++) {
        recv1(s, 1, 0xb0 + i, PAGE, 64);
        send_wr(s, (PfSend) { .qp = i % 2, .opcode = PVRDMA_WR_SEND,
                              .wr_id = 0xa0 + i,
                              .knobs = i == 1 ? PF_WQE_BOTH_DB : 0 },
                &g, 1);
    }
    poll_all(s);
}

/* More WQEs than the ring holds between doorbells, and a wrap. */
static void seed_rc_ring_wrap(Seed *s)
{
    PfSge g = sge(DMA_MR, 0, 4);
    int i;

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .send_wr = 2, .recv_wr = 2 });
    for (i = 0; i < 5; i++) {
        recv1(s, 1, 0xb0 + i, PAGE, 64);
        send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_SEND,
                              .flags = PVRDMA_SEND_SIGNALED,
                              .wr_id = 0xa0 + i }, &g, 1);
        poll_all(s);
    }
}

static void seed_ud(Seed *s)
{
    PfSge g = sge(DMA_MR, 0, 100);
    PfSend h = { .qp = 0, .opcode = PVRDMA_WR_SEND, .dest = 1,
                 .flags = PVRDMA_SEND_SIGNALED, .wr_id = 0x10001 };

    fixture(s);
    ud_qp(s, (PfUdQp) { .rcq = CQ1 });
    ud_qp(s, (PfUdQp) { .rcq = CQ1 });
    recv1(s, 1, 0x20001, PAGE, 256);
    send_wr(s, h, &g, 1);
    /* with immediate, to the second GID */
    recv1(s, 1, 0x20002, PAGE, 256);
    h.opcode = PVRDMA_WR_SEND_WITH_IMM;
    h.imm = 0xabcd;
    h.gid = 1 | 1 << 2;
    h.wr_id = 0x10002;
    send_wr(s, h, &g, 1);
    /* wrong Q_Key: dropped; too long: LOC_LEN_ERR and SQE */
    h.opcode = PVRDMA_WR_SEND;
    h.qkey = 0x999;
    send_wr(s, h, &g, 1);
    h.qkey = 0;
    g.len = 2000;
    send_wr(s, h, &g, 1);
    /* from SQE back to RTS */
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { 0 },
                     .type = 3 });
    /* a receive too small for the GRH */
    recv1(s, 1, 0x20003, PAGE, 30);
    g.len = 8;
    send_wr(s, h, &g, 1);
    /* a source GID index that holds no GID */
    h.gid = 5 << 2;
    send_wr(s, h, &g, 1);
    poll_all(s);
}

static void seed_gsi(Seed *s)
{
    PfSge g = sge(DMA_MR, 0, 256);

    fixture(s);
    ud_qp(s, (PfUdQp) { .gsi = 1, .rcq = CQ1 });
    ud_qp(s, (PfUdQp) { .rcq = CQ1, .qkey = 0x80010000u });
    recv1(s, 0, 0x20001, PAGE, 512);
    send_wr(s, (PfSend) { .qp = 1, .opcode = PVRDMA_WR_SEND, .dest = 0,
                          .qkey = 0x80000000u, .flags = PVRDMA_SEND_SIGNALED,
                          .wr_id = 0x10001 }, &g, 1);
    /* a second GSI QP is refused */
    ud_qp(s, (PfUdQp) { .gsi = 1 });
    poll_all(s);
}

static void seed_frmr(Seed *s)
{
    PfSge g = sge(DMA_MR, 0, 16);
    PfSend fr = { .qp = 1, .opcode = PVRDMA_WR_FAST_REG_MR, .remote = 1,
                  .flags = PVRDMA_SEND_SIGNALED, .wr_id = 0xb0001,
                  .fr_iova = 0x40000100, .fr_length = 2 * PAGE - 0x100 };
    PfSend w = { .qp = 0, .opcode = PVRDMA_WR_RDMA_WRITE, .remote = 1,
                 .off = PAGE - 0x108, .flags = PVRDMA_SEND_SIGNALED,
                 .wr_id = 0xa0001 };

    fixture(s);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 2 });
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    send_wr(s, fr, NULL, 0);
    send_wr(s, w, &g, 1);
    /* SEND_WITH_INV of that key */
    recv1(s, 1, 0xb0002, PAGE, 64);
    w.opcode = PVRDMA_WR_SEND_WITH_INV;
    w.wr_id = 0xa0002;
    send_wr(s, w, &g, 1);
    /* registered again, then LOCAL_INV, then a write with the stale key */
    fr.wr_id = 0xb0003;
    send_wr(s, fr, NULL, 0);
    send_wr(s, (PfSend) { .qp = 1, .opcode = PVRDMA_WR_LOCAL_INV,
                          .remote = 1, .flags = PVRDMA_SEND_SIGNALED,
                          .wr_id = 0xb0004 }, NULL, 0);
    w.opcode = PVRDMA_WR_RDMA_WRITE;
    w.wr_id = 0xa0003;
    send_wr(s, w, &g, 1);
    /* invalid: unaligned page shift, too many pages */
    fr.fr_shift = 1;
    send_wr(s, fr, NULL, 0);
    fr.fr_shift = 0;
    fr.fr_npages = 200;
    send_wr(s, fr, NULL, 0);
    poll_all(s);
}

static void seed_rnr(Seed *s)
{
    PfSge g = sge(DMA_MR, 0, 32);

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .min_rnr = 12 ^ 1 });
    /* no receive: RNR NAK, retried by the timer */
    send1(s, 0, PVRDMA_WR_SEND, 0xa0001, 0, 32);
    clock_step(s, PF_CLOCK_RNR, 1);
    clock_step(s, PF_CLOCK_RNR, 1);
    /* a receive posted wakes the sender */
    recv1(s, 1, 0xb0001, PAGE, 64);
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_SEND,
                          .flags = PVRDMA_SEND_SIGNALED, .wr_id = 0xa0002 },
            &g, 1);
    clock_step(s, PF_CLOCK_RNR, 1);
    recv1(s, 1, 0xb0002, PAGE, 64);
    poll_all(s);
    /* a pair that gives up: rnr_retry 0 */
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .rnr_retry = 7 });
    send1(s, 2, PVRDMA_WR_SEND, 0xa0003, 0, 32);
    /* and one that gives up after 2 retries, destroyed while waiting */
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .rnr_retry = 7 ^ 2,
                            .min_rnr = 12 ^ 2 });
    send1(s, 4, PVRDMA_WR_SEND, 0xa0004, 0, 32);
    clock_step(s, PF_CLOCK_RNR, 2);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_QP, .sel = { 4 } });
    clock_step(s, PF_CLOCK_RNR, 2);
    poll_all(s);
}

static void seed_srq(Seed *s)
{
    PfSge g = sge(DMA_MR, 0, 16);

    fixture(s);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_SRQ, .n = { 8, 2, 2 } });
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .srq = 1 });
    recv1(s, PF_RECV_SRQ | 0, 0xc1, PAGE, 64);
    recv1(s, PF_RECV_SRQ | 0, 0xc2, PAGE + 64, 64);
    recv1(s, PF_RECV_SRQ | 0, 0xc3, PAGE + 128, 64);
    send1(s, 0, PVRDMA_WR_SEND, 0xa1, 0, 16);
    send1(s, 1, PVRDMA_WR_SEND, 0xb1, 0, 16);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_SRQ });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_SRQ, .n = { 4 } });
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_SEND,
                          .wr_id = 0xa2 }, &g, 1);
    /* an SRQ receive wakes a sender waiting on it */
    send1(s, 0, PVRDMA_WR_SEND, 0xa3, 0, 16);
    send1(s, 0, PVRDMA_WR_SEND, 0xa4, 0, 16);
    recv1(s, PF_RECV_SRQ | 0, 0xc4, PAGE, 64);
    /* the SRQ QP to ERR: last WQE reached; SRQ busy */
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { 1 }, .type = 6 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_SRQ });
    poll_all(s);
}

static void seed_cq_overrun(Seed *s)
{
    int i;

    fixture(s);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ, .n = { 1 } });
    rc_pair(s, (PfRcPair) { .scq = 2, .rcq = CQ1, .sig_all = 1 });
    for (i = 0; i < 3; i++) {
        recv1(s, 1, 0xb0 + i, PAGE, 64);
        send1(s, 0, PVRDMA_WR_SEND, 0xa0 + i, 0, 8);
    }
    poll_all(s);
}

static void seed_cq_notify_msix(Seed *s)
{
    int v;

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    for (v = 0; v < 3; v++) {
        msix(s, v, PF_MSIX_RAM, PF_MSIX_ENABLE, 0x100 + 4 * v, 0x1000 + v);
    }
    poll(s, PF_POLL_CQ, CQ1, PF_POLL_ARM);
    recv1(s, 1, 0xb1, PAGE, 64);
    send1(s, 0, PVRDMA_WR_SEND, 0xa1, 0, 8);
    /* armed for solicited only: only a solicited receive notifies */
    poll(s, PF_POLL_CQ, CQ1, PF_POLL_ARM_SOL);
    recv1(s, 1, 0xb2, PAGE, 64);
    send1(s, 0, PVRDMA_WR_SEND, 0xa2, 0, 8);
    /* interrupts aimed at the device itself, then masked */
    msix(s, 2, PF_MSIX_REGS, PF_MSIX_ENABLE, PVRDMA_REG_REQUEST, 0);
    msix(s, 0, PF_MSIX_UAR, PF_MSIX_ENABLE, 0, 0x40000002);
    msix(s, 1, PF_MSIX_TABLE, PF_MSIX_ENABLE, 0, 0);
    poll(s, PF_POLL_CQ, CQ1, PF_POLL_ARM);
    recv1(s, 1, 0xb3, PAGE, 64);
    send1(s, 0, PVRDMA_WR_SEND, 0xa3, 0, 8);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PORT });
    msix(s, 2, PF_MSIX_APIC, PF_MSIX_ENABLE | PF_MSIX_VMASK, 0, 0);
    msix(s, 0, PF_MSIX_APIC, PF_MSIX_ENABLE | PF_MSIX_FMASK, 0, 0);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PORT });
    /* MSI-X off: INTx and ICR */
    msix(s, 0, 0, PF_MSIX_KEEP, 0, 0);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PORT });
    reg(s, PVRDMA_REG_ICR / 4, true, 0);
    reg(s, PVRDMA_REG_ICR / 4, false, 1);
    poll_all(s);
}

static void seed_flush(Seed *s)
{
    int i;

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    for (i = 0; i < 3; i++) {
        recv1(s, 1, 0xb0 + i, PAGE, 64);
    }
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { 1 }, .type = 6 });
    send1(s, 0, PVRDMA_WR_SEND, 0xa1, 0, 8);
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_SEND,
                          .knobs = PF_WQE_NO_DB, .wr_id = 0xa2 }, NULL, 0);
    recv1(s, 1, 0xb9, PAGE, 64);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { 0 }, .type = 7 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { 1 }, .type = 7 });
    poll_all(s);
}

/* Local and remote errors of the data path tests: a fresh pair each */
static void seed_errors(Seed *s)
{
    PfSge bad = { .mr = 0xfe, .len = 8 };
    PfSge g = sge(DMA_MR, 0, 8);
    PfSge out = sge(1, 0, 3 * PAGE);
    uint8_t q = 0;

    fixture(s);
    user_mr(s, PVRDMA_ACCESS_REMOTE_WRITE | PVRDMA_ACCESS_REMOTE_ATOMIC);
    /* an lkey that is no MR's */
    rc_pair(s, (PfRcPair) { .rcq = CQ1,
                            .access_b = PVRDMA_ACCESS_REMOTE_READ });
    send_wr(s, (PfSend) { .qp = q, .opcode = PVRDMA_WR_SEND, .wr_id = 1 },
            &bad, 1);
    /* beyond the MR */
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    q += 2;
    send_wr(s, (PfSend) { .qp = q, .opcode = PVRDMA_WR_SEND, .wr_id = 2 },
            &out, 1);
    /* an MR without remote write; a zero-length write to it is fine */
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    q += 2;
    send_wr(s, (PfSend) { .qp = q, .opcode = PVRDMA_WR_RDMA_WRITE,
                          .remote = 1, .wr_id = 3 }, &g, 1);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    q += 2;
    send_wr(s, (PfSend) { .qp = q, .opcode = PVRDMA_WR_RDMA_WRITE,
                          .remote = 1, .wr_id = 4 }, NULL, 0);
    /* a QP without remote read; a bad rkey */
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_RDMA_READ,
                          .wr_id = 5 }, &g, 1);
    send_wr(s, (PfSend) { .qp = q, .opcode = PVRDMA_WR_RDMA_READ,
                          .remote = 0xfa, .wr_id = 6 }, &g, 1);
    /* opcodes the engine does not do */
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    q += 2;
    send_wr(s, (PfSend) { .qp = q, .opcode = PVRDMA_WR_LSO, .wr_id = 7 },
            NULL, 0);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    q += 2;
    send_wr(s, (PfSend) { .qp = q,
                          .opcode = PVRDMA_WR_MASKED_ATOMIC_CMP_AND_SWP,
                          .wr_id = 8 }, NULL, 0);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    q += 2;
    send_wr(s, (PfSend) { .qp = q, .opcode = 40, .wr_id = 9 }, NULL, 0);
    /* no such destination QP */
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    q += 2;
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { q, 0xff },
                     .type = 2, .raw = 0x777 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { q }, .type = 3 });
    send1(s, q, PVRDMA_WR_SEND, 10, 0, 8);
    /* a receive too small */
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    q += 2;
    recv1(s, q + 1, 0xb1, PAGE, 4);
    send1(s, q, PVRDMA_WR_SEND, 11, 0, 8);
    poll_all(s);
}

/* Every command, including the ones the data path does not use */
static void seed_commands(Seed *s)
{
    uint8_t x[20] = { 0 };
    int i;

    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PORT });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PORT, .n = { 3 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PKEY });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PKEY, .n = { 0, 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_UC });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_UC, .n = { 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_UC, .n = { 512 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_PD, .sel = { 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_PD });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ, .sel = { 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ, .n = { 3 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ, .n = { 128 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_RESIZE_CQ });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_BIND });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_BIND, .n = { 16 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_BIND, .type = 2 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 1 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .access = 1 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 3,
                     .n = { 0, 0, 7 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .n = { 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 2,
                     .n = { 1000 } });
    /* a QP of the user context: its doorbells on UAR page 1 */
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { 0, 0, 0 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { 0, 1, 0 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { 1, 1, 1 },
                     .type = 1, .flags = 2 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { 1, 1, 1 },
                     .type = 3 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { 1, 1, 1 },
                     .n = { 5000 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_SRQ, .sel = { 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_SRQ, .sel = { 1 },
                     .n = { 16, 4, 100 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { 1, 1, 1, 0 },
                     .flags = 1 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_SRQ });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_SRQ, .n = { 8 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_SRQ, .n = { 8, 3 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_SRQ, .n = { 100 } });
    for (i = 0; i < 4; i++) {
        PfUar u = { .kind = i, .sel = 0, .flags = 0xc0 };

        op(s, PF_OP_UAR, &u, sizeof(u), NULL, 0);
        u.page = 7;
        op(s, PF_OP_UAR, &u, sizeof(u), NULL, 0);
    }
    for (i = 0; i <= 7; i++) {
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { 0 },
                         .type = i });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_QP, .sel = { 0 } });
    }
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { 0 }, .type = 1,
                     .n = { 0, 0, 0, 1u << 14 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { 0 }, .type = 1,
                     .n = { 0, 0, 0, 1u << 25 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_QP, .sel = { 0xff },
                     .raw = 999 });
    op(s, PF_OP_QUERY, NULL, 0, NULL, 0);
    /* destroy in use, then everything in order */
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_PD, .sel = { 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_CQ, .sel = { 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_UC });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_SRQ });
    for (i = 0; i < 6; i++) {
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_QP });
    }
    for (i = 0; i < 4; i++) {
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_SRQ });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_MR });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_CQ });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_PD });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_UC });
    }
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_BIND, .n = { 1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_BIND });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_BIND });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_BIND, .n = { 99 } });
    cmd(s, (PfCmd) { .cmd = 0xf0 });
    cmd(s, (PfCmd) { .cmd = 0xff });
    /* a request changed after it was built: a CQ ring of 0 pages */
    x[16] = 0x7;
    cmd_x(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ }, x, sizeof(x));
}

/* Hostile rings and page directories, as the CVE regression tests */
static void seed_hostile_rings(Seed *s)
{
    uint32_t bad_idx = 0x7fffffff, two = 2;
    PvrdmaSqWqeHdr big = { .num_sge = 1000, .opcode = PVRDMA_WR_SEND };
    PfSge g = sge(DMA_MR, 0, 8);
    int k;

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    /* CVE-2018-20216: an index beyond the ring */
    mem(s, PF_MEM_SQ_STATE, 0, 0, &bad_idx, 4);
    op(s, PF_OP_UAR, &(PfUar) { .kind = PF_UAR_QP, .sel = 0, .flags = 0x40 },
       sizeof(PfUar), NULL, 0);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    /* CVE-2018-20124: num_sge beyond the WQE */
    send_wr(s, (PfSend) { .qp = 2, .knobs = PF_WQE_NO_DB, .opcode = 2 },
            NULL, 0);
    mem(s, PF_MEM_SQ_WQE, 2, 0, &big, sizeof(big));
    op(s, PF_OP_UAR, &(PfUar) { .kind = PF_UAR_QP, .sel = 2, .flags = 0x40 },
       sizeof(PfUar), NULL, 0);
    recv1(s, 3, 1, PAGE, 64);
    mem(s, PF_MEM_RQ_WQE, 3, 8, &bad_idx, 4);
    send1(s, 3, PVRDMA_WR_SEND, 2, 0, 8);
    /* a corrupt CQ and device rings */
    mem(s, PF_MEM_CQ_STATE, CQ1, 0, &bad_idx, 4);
    mem(s, PF_MEM_ASYNC_STATE, 0, 4, &bad_idx, 4);
    mem(s, PF_MEM_CQN_STATE, 0, 0, &two, 4);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    recv1(s, 5, 1, PAGE, 64);
    send_wr(s, (PfSend) { .qp = 4, .opcode = 2 }, &g, 1);
    /* rings over bad pages: raw directory, table, page; aliased pages */
    for (k = 0; k < 4; k++) {
        static const uint8_t knobs[] = { PF_K_PDIR_RAW, PF_K_TABLE_RAW,
                                         PF_K_PAGE_RAW, PF_K_ALIAS };
        static const uint32_t raws[] = { 0x1001, 0xfee00000, 0, 0x2000 };

        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ, .knobs = knobs[k],
                         .raw = raws[k], .n = { 0, 0, 0, 1 } });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .knobs = knobs[k],
                         .raw = raws[k], .sel = { 0, 0, 1 } });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .knobs = knobs[k],
                         .raw = raws[k] });
    }
    poll_all(s);
}

/*
 * Receive buffers in the device's own doorbell page: the RNR retry writes
 * a RECV doorbell of the receiving QP (handle 3) into it.
 */
static void seed_dma_into_own_uar(Seed *s)
{
    uint32_t db = 3 | PVRDMA_UAR_QP_RECV;
    PfSge r = { .mr = DMA_MR, .knobs = PF_SGE_ADDR_UAR, .len = 4 };

    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .min_rnr = 12 ^ 1, .recv_sge = 1 });
    mem(s, PF_MEM_DATA, 0, 0, &db, sizeof(db));
    send1(s, 0, PVRDMA_WR_SEND, 0xa1, 0, 4);
    recv_wr(s, (PfRecv) { .target = 1, .knobs = PF_WQE_NO_DB }, &r, 1);
    recv_wr(s, (PfRecv) { .target = 1, .knobs = PF_WQE_NO_DB }, &r, 1);
    clock_step(s, PF_CLOCK_RNR, 1);
    poll_all(s);
}

/* Many WQEs for one doorbell: the rest runs from the bottom half */
static void seed_doorbell_budget(Seed *s)
{
    size_t at = 0;
    int i;

    fixture(s);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ, .n = { 256 } });
    rc_pair(s, (PfRcPair) { .scq = 2, .rcq = 2, .send_wr = 128,
                            .send_sge = 1, .sig_all = 1 });
    /* zero-length RDMA WRITEs: small WQEs, no receive needed */
    for (i = 0; i < 80; i++) {
        send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_RDMA_WRITE,
                              .knobs = i < 79 ? PF_WQE_NO_DB : 0 }, NULL, 0);
    }
    poll(s, PF_POLL_CQ, 2, 0);
    /*
     * Again, and before the bottom half runs (no main loop after the
     * doorbell): the QP is destroyed; then a new pair, and a CTL reset.
     */
    for (i = 0; i < 80; i++) {
        at = s->n;
        send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_RDMA_WRITE,
                              .knobs = i < 79 ? PF_WQE_NO_DB : 0 }, NULL, 0);
    }
    s->b[at] |= PF_OP_NO_FLUSH;
    op(s, PF_OP_CMD | PF_OP_NO_FLUSH, &(PfCmd) {
       .cmd = PVRDMA_CMD_DESTROY_QP }, 1, NULL, 0);
    rc_pair(s, (PfRcPair) { .scq = 2, .rcq = 2, .send_wr = 128,
                            .send_sge = 1, .sig_all = 1 });
    for (i = 0; i < 80; i++) {
        at = s->n;
        send_wr(s, (PfSend) { .qp = 1, .opcode = PVRDMA_WR_RDMA_WRITE,
                              .knobs = i < 79 ? PF_WQE_NO_DB : 0 }, NULL, 0);
    }
    s->b[at] |= PF_OP_NO_FLUSH;
    reg(s, PVRDMA_REG_CTL / 4, false, PVRDMA_CTL_RESET);
}

/* The device's own life: DSR versions, reset, link, registers */
static void seed_device(Seed *s)
{
    static const uint8_t versions[] = { 17, 18, 19, 16 };
    uint8_t xor[32] = { 0 };
    int i;

    for (i = 0; i < 4; i++) {
        PfDsr d = { .version = versions[i] };

        op(s, PF_OP_DSR, &d, sizeof(d), NULL, 0);
        fixture(s);
        rc_pair(s, (PfRcPair) { .rcq = CQ1 });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_UC, .knobs = PF_K_RAW_PFN,
                         .addr = 1 });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_UC });
    }
    op(s, PF_OP_DSR, &(PfDsr) { .async_pages = 1 }, sizeof(PfDsr), NULL, 0);
    op(s, PF_OP_DSR, &(PfDsr) { .cq_pages = 65 }, sizeof(PfDsr), NULL, 0);
    op(s, PF_OP_DSR, &(PfDsr) { .knobs = PF_DSR_CMD_MMIO }, sizeof(PfDsr),
       NULL, 0);
    op(s, PF_OP_DSR, &(PfDsr) { .knobs = PF_DSR_RESP_RAW, .raw = 0xfee00000 },
       sizeof(PfDsr), NULL, 0);
    op(s, PF_OP_DSR, &(PfDsr) { .knobs = PF_DSR_ADDR_RAW, .raw = 0xfed00000 },
       sizeof(PfDsr), NULL, 0);
    op(s, PF_OP_DSR, &(PfDsr) { .knobs = PF_DSR_PDIR_RAW, .raw = 0x123 },
       sizeof(PfDsr), NULL, 0);
    op(s, PF_OP_DSR, &(PfDsr) { .knobs = PF_DSR_HIGH_FIRST }, sizeof(PfDsr),
       NULL, 0);
    xor[8] = 0x10;          /* cmd slot moved */
    op(s, PF_OP_DSR, &(PfDsr) { .knobs = PF_DSR_NO_ACTIVATE }, sizeof(PfDsr),
       xor, sizeof(xor));
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_PD });
    reg(s, PVRDMA_REG_CTL / 4, false, PVRDMA_CTL_ACTIVATE);
    op(s, PF_OP_DSR, &(PfDsr) { .knobs = PF_DSR_UNQUIESCE | PF_DSR_ALIAS },
       sizeof(PfDsr), NULL, 0);
    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    /* port events: link down and up, seen by the 200 ms poll */
    op(s, PF_OP_LINK, &(PfLink) { .down = 1 }, sizeof(PfLink), NULL, 0);
    clock_step(s, PF_CLOCK_LINK, 0);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PORT });
    op(s, PF_OP_LINK, &(PfLink) { .down = 0 }, sizeof(PfLink), NULL, 0);
    clock_step(s, PF_CLOCK_LINK, 0);
    op(s, PF_OP_QUERY, NULL, 0, NULL, 0);
    op(s, PF_OP_QUERY, &(PfQuery) { .hmp = 1 }, sizeof(PfQuery), NULL, 0);
    for (i = 0; i < 10; i++) {
        reg(s, i, true, 0);
    }
    reg(s, PVRDMA_REG_MACL / 4, false, 0x12345678);
    reg(s, PVRDMA_REG_MACH / 4, false, 0xabcd);
    reg(s, PVRDMA_REG_VERSION / 4, false, 1);
    reg(s, PVRDMA_REG_CTL / 4, false, 9);
    op(s, PF_OP_REG, &(PfReg) { .reg = 0x40, .off = 0x800, .val = 1 },
       sizeof(PfReg), NULL, 0);
    op(s, PF_OP_REG, &(PfReg) { .reg = 0x40, .off = 0x800, .read = 1 },
       sizeof(PfReg), NULL, 0);
    op(s, PF_OP_UAR, &(PfUar) { .kind = 0x10 }, sizeof(PfUar), NULL, 0);
    op(s, PF_OP_UAR, &(PfUar) { .kind = PF_UAR_CQ, .flags = 0x80 },
       sizeof(PfUar), NULL, 0);
    /* CTL RESET: everything goes; then commands and doorbells fail */
    reg(s, PVRDMA_REG_CTL / 4, false, PVRDMA_CTL_RESET);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_PD });
    reg(s, PVRDMA_REG_CTL / 4, false, PVRDMA_CTL_ACTIVATE);
    op(s, PF_OP_UAR, &(PfUar) { .kind = PF_UAR_QP, .flags = 0x40 },
       sizeof(PfUar), NULL, 0);
    reg(s, PVRDMA_REG_REQUEST / 4, false, 0);
    /* bus mastering off: every DMA fails */
    op(s, PF_OP_DSR, &(PfDsr) { 0 }, sizeof(PfDsr), NULL, 0);
    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    op(s, PF_OP_PCI, &(PfPci) { .off = 4, .size = 1, .val = 2 },
       sizeof(PfPci), NULL, 0);
    recv1(s, 1, 1, PAGE, 64);
    send1(s, 0, PVRDMA_WR_SEND, 2, 0, 8);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PORT });
}


/* MODIFY_QP refusals: each attribute out of range, once per transition */
static void modify_x(Seed *s, uint8_t qp, uint8_t type, uint32_t mask_xor,
                     uint32_t n1, size_t off, uint8_t x)
{
    /* the request after its header: qp_handle, attr_mask, attributes */
    uint8_t tail[8 + sizeof(PvrdmaQpAttr)] = { 0 };

    tail[8 + off] = x;
    cmd_x(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .sel = { qp, 1 },
                       .type = type, .n = { 0, n1, 0, mask_xor } },
          tail, x ? 8 + off + 1 : 0);
}

static void seed_modify_qp(Seed *s)
{
    fixture(s);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { PD0, CQ0, CQ1 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { PD0, CQ0, CQ1 } });
    /* RESET -> INIT */
    modify_x(s, 0, 1, PVRDMA_QP_CUR_STATE,
             0, offsetof(PvrdmaQpAttr, cur_qp_state), 3);
    modify_x(s, 0, 1, 0, 0, offsetof(PvrdmaQpAttr, pkey_index), 1);
    modify_x(s, 0, 1, 0, 0, offsetof(PvrdmaQpAttr, port_num), 3);
    modify_x(s, 0, 1, 0, 0, offsetof(PvrdmaQpAttr, qp_access_flags), 0x40);
    modify_x(s, 0, 1, PVRDMA_QP_QKEY, 0, 0, 0);
    modify_x(s, 0, 1, 1u << 25, 0, 0, 0);
    modify_x(s, 0, 1, 0, 0, offsetof(PvrdmaQpAttr, qp_state), 9);
    modify_x(s, 0, 1, 0, 0, 0, 0);
    /* INIT -> RTR */
    modify_x(s, 0, 2, 0, 20, 0, 0);
    modify_x(s, 0, 2, 0, 0, offsetof(PvrdmaQpAttr, ah_attr) +
             offsetof(PvrdmaAhAttr, port_num), 3);
    modify_x(s, 0, 2, 0, 0, offsetof(PvrdmaQpAttr, path_mtu), 5);
    modify_x(s, 0, 2, 0, 0, offsetof(PvrdmaQpAttr, rq_psn) + 3, 1);
    modify_x(s, 0, 2, 0, 0, offsetof(PvrdmaQpAttr, dest_qp_num) + 3, 1);
    modify_x(s, 0, 2, 0, 0, offsetof(PvrdmaQpAttr, max_dest_rd_atomic), 0x30);
    modify_x(s, 0, 2, 0, 0, offsetof(PvrdmaQpAttr, min_rnr_timer), 0x20);
    modify_x(s, 0, 2, PVRDMA_QP_ALT_PATH, 0, 0, 0);
    modify_x(s, 0, 2, PVRDMA_QP_PATH_MTU, 0, 0, 0);
    modify_x(s, 0, 2, 0, 0, 0, 0);
    /* RTR -> RTS */
    modify_x(s, 0, 3, 0, 0, offsetof(PvrdmaQpAttr, max_rd_atomic), 0x15);
    modify_x(s, 0, 3, 0, 0, offsetof(PvrdmaQpAttr, timeout), 0x20);
    modify_x(s, 0, 3, 0, 0, offsetof(PvrdmaQpAttr, retry_cnt), 0x8);
    modify_x(s, 0, 3, 0, 0, offsetof(PvrdmaQpAttr, sq_psn) + 3, 2);
    modify_x(s, 0, 3, PVRDMA_QP_PATH_MIG_STATE, 0,
             offsetof(PvrdmaQpAttr, path_mig_state), 3);
    modify_x(s, 0, 3, PVRDMA_QP_CAP, 0, 0, 0);
    modify_x(s, 0, 3, 0, 0, 0, 0);
    /* RTS -> SQD -> RTS, RTS -> RTS, a state the table does not have */
    modify_x(s, 0, 4, PVRDMA_QP_EN_SQD_ASYNC_NOTIFY, 0, 0, 0);
    modify_x(s, 0, 3, 0, 0, 0, 0);
    modify_x(s, 0, 3, PVRDMA_QP_MIN_RNR_TIMER, 0, 0, 0);
    modify_x(s, 0, 2, 0, 0, 0, 0);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_QP });
}

/* UD over IPv6 GIDs (the IPv6 GRH), and a GRH split over two SGEs */
static void seed_ud_ipv6(Seed *s)
{
    PfSge g = sge(DMA_MR, 0, 64);
    PfSge r[2] = { sge(DMA_MR, PAGE, 16), sge(DMA_MR, 2 * PAGE, 200) };

    fixture(s);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_BIND, .n = { 2 }, .flags = 2 });
    ud_qp(s, (PfUdQp) { .rcq = CQ1 });
    ud_qp(s, (PfUdQp) { .rcq = CQ1 });
    recv_wr(s, (PfRecv) { .target = 1, .wr_id = 0x21 }, r, 2);
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_SEND, .dest = 1,
                          .gid = 2 | 2 << 2, .flags = PVRDMA_SEND_SIGNALED,
                          .wr_id = 0x11 }, &g, 1);
    /* IPv4 destination from an IPv6 source */
    recv1(s, 1, 0x22, PAGE, 256);
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_SEND, .dest = 1,
                          .gid = 0 | 2 << 2, .flags = PVRDMA_SEND_SIGNALED,
                          .wr_id = 0x12 }, &g, 1);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_BIND, .n = { 2 }, .flags = 2 });
    op(s, PF_OP_QUERY, NULL, 0, NULL, 0);
    poll_all(s);
}

/* Every table full, and the device-wide registration budget */
static void seed_exhaustion(Seed *s)
{
    int i;

    fixture(s);
    for (i = 0; i < 16; i++) {
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ, .n = { 1 } });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP,
                         .sel = { PD0, CQ0, CQ0 }, .n = { 1, 1, 1, 1 } });
    }
    for (i = 0; i < 8; i++) {
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_PD });
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_SRQ, .n = { 1, 1 } });
    }
    for (i = 0; i < 32; i++) {
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 1 });
    }
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_MR, .sel = { 5 } });
    for (i = 0; i < 4; i++) {
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR,
                         .len = 300 * PAGE - 0x800 });
    }
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_UC, .n = { 511 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_UC, .n = { 511 } });
}

/*
 * q35 (the pvrdma-q35 target; on pc these addresses are RAM): a CQ
 * notification whose MSI-X message sets the root port's Secondary Bus
 * Reset, so the bus reset reaches the device inside its data path; then
 * the driver loads again and RDMA works.
 */
static void seed_q35_sbr_msix(Seed *s)
{
    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    msix(s, PVRDMA_VECTOR_CQ, PF_MSIX_PORT, PF_MSIX_ENABLE,
         PCI_BRIDGE_CONTROL & ~3, PCI_BRIDGE_CTL_BUS_RESET << 16);
    poll(s, PF_POLL_CQ, CQ1, PF_POLL_ARM);
    recv1(s, 1, 0xb1, PAGE, 64);
    send1(s, 0, PVRDMA_WR_SEND, 0xa1, 0, 8);
    send1(s, 0, PVRDMA_WR_SEND, 0xa2, 0, 8);
    /* SBR cleared, the driver probes again */
    op(s, PF_OP_PCI, &(PfPci) { .off = PCI_BRIDGE_CONTROL, .size = 1 },
       sizeof(PfPci), NULL, 0);
    op(s, PF_OP_DSR, &(PfDsr) { 0 }, sizeof(PfDsr), NULL, 0);
    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    recv1(s, 1, 0xb3, PAGE, 64);
    send1(s, 0, PVRDMA_WR_SEND, 0xa3, 0, 8);
    poll_all(s);
}

/* q35: the MSI-X message powers the root port's slot off (an unplug). */
static void seed_q35_slot_power_msix(Seed *s)
{
    fixture(s);
    rc_pair(s, (PfRcPair) { .rcq = CQ1 });
    msix(s, PVRDMA_VECTOR_CQ, PF_MSIX_PORT_EXP, PF_MSIX_ENABLE,
         PCI_EXP_SLTCTL, PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF);
    poll(s, PF_POLL_CQ, CQ1, PF_POLL_ARM);
    recv1(s, 1, 0xb1, PAGE, 64);
    send1(s, 0, PVRDMA_WR_SEND, 0xa1, 0, 8);
    send1(s, 0, PVRDMA_WR_SEND, 0xa2, 0, 8);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_PORT });
}

/*
 * q35: receives whose buffers are config registers (the kernel's DMA MR
 * names every guest-physical address): the device's own command register
 * (bus mastering off in the middle of its DMA), the root port's bridge
 * control (SBR), its slot control (power off).
 */
static void seed_q35_dma_into_config(Seed *s)
{
    static const uint16_t where[] = {
        0x0000 | PCI_COMMAND, 0x1000 | (PCI_BRIDGE_CONTROL & ~3),
        0x2000 | PCI_EXP_SLTCTL,
    };
    static const uint32_t what[] = {
        0, PCI_BRIDGE_CTL_BUS_RESET << 16,
        PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF,
    };
    int i;

    for (i = 0; i < 3; i++) {
        PfSge r = { .mr = DMA_MR, .knobs = PF_SGE_ADDR_CFG, .off = where[i],
                    .len = 4 };

        fixture(s);
        rc_pair(s, (PfRcPair) { .rcq = CQ1, .recv_sge = 1 });
        mem(s, PF_MEM_DATA, 0, 0, &what[i], 4);
        recv_wr(s, (PfRecv) { .target = 2 * i + 1, .wr_id = 0xb1 }, &r, 1);
        send1(s, 2 * i, PVRDMA_WR_SEND, 0xa1, 0, 4);
        send1(s, 2 * i, PVRDMA_WR_RDMA_WRITE, 0xa2, 0, 4);
        poll_all(s);
        op(s, PF_OP_DSR, &(PfDsr) { 0 }, sizeof(PfDsr), NULL, 0);
    }
    op(s, PF_OP_UNPLUG, &(PfUnplug) { 0 }, sizeof(PfUnplug), NULL, 0);
}

/* CREATE_QP requests changed after they were built (XOR tails) */
static void create_qp_x(Seed *s, size_t off, uint8_t x)
{
    uint8_t tail[64] = { 0 };

    tail[off] = x;
    cmd_x(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { PD0, CQ0, CQ1 } },
          tail, off + 1);
}

static void seed_create_qp_invalid(Seed *s)
{
    /* offsets in the request after its header */
#define QP_OFF(f) (offsetof(PvrdmaCmdCreateQp, f) - sizeof(PvrdmaCmdHdr))
    fixture(s);
    create_qp_x(s, QP_OFF(max_inline_data) + 2, 0x10);
    create_qp_x(s, QP_OFF(send_chunks), 0xff);
    create_qp_x(s, QP_OFF(total_chunks), 0x02);
    create_qp_x(s, QP_OFF(max_send_wr), 0x40);
    create_qp_x(s, QP_OFF(max_recv_wr), 0x40);
    create_qp_x(s, QP_OFF(max_send_sge), 0x30);
    create_qp_x(s, QP_OFF(access_flags), 0x10);
    create_qp_x(s, QP_OFF(is_srq), 0x02);
    create_qp_x(s, QP_OFF(sq_sig_all), 0x02);
    create_qp_x(s, QP_OFF(qp_type), 0x06);
    create_qp_x(s, QP_OFF(pdir_dma), 0x08);
#undef QP_OFF
}

/* Migration (PF_OP_MIGRATE) */

static void migrate(Seed *s, PfMigrate a, const PfMigEdit *e, size_t n)
{
    op(s, PF_OP_MIGRATE, &a, sizeof(a), e, n * sizeof(*e));
}

static void uar(Seed *s, uint8_t kind, uint8_t sel, uint8_t flags)
{
    PfUar u = { .kind = kind, .sel = sel, .flags = flags };

    op(s, PF_OP_UAR, &u, sizeof(u), NULL, 0);
}

/*
 * Live objects of every kind and work in flight, as the pvrdma-migrate
 * target's preamble makes them (pvrdma_fuzz.c, pf_live()): PD 0, GID 0
 * only (GID 1 is a peer on the link), MRs 0 DMA, 1 user, 2 FRMR
 * (registered), CQs 0 and 1, SRQ 0 with two receives, QPs 0-1 an RC pair
 * (a SEND of QP 0 waits for an RNR retry), 2-3 an RC pair on the SRQ, 4
 * UD and 5 GSI with a receive each, 6 an RC QP connected across the link
 * to QP 0x77 of GID 1 with a READ and a SEND outstanding.
 */
static void live_objects(Seed *s)
{
    uint8_t t;

    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_PD });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_BIND });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 1 });
    user_mr(s, 0);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 2 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_SRQ, .n = { 8, 2, 2 } });
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .min_rnr = 12 ^ 1 });
    rc_pair(s, (PfRcPair) { .rcq = CQ1, .srq = 1 });
    ud_qp(s, (PfUdQp) { .rcq = CQ1 });
    ud_qp(s, (PfUdQp) { .gsi = 1, .rcq = CQ1 });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { 0, 0, CQ1 } });
    for (t = 1; t <= 3; t++) {
        cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .type = t,
                         .sel = { 6, PF_SEL_RAW32 }, .flags = 1,
                         .raw = 0x77 });
    }
    recv1(s, 1, 0xb1, PAGE, 64);
    recv1(s, PF_RECV_SRQ | 0, 0xd1, 2 * PAGE, 64);
    recv1(s, PF_RECV_SRQ | 0, 0xd2, 2 * PAGE + 64, 64);
    recv1(s, 4, 0xe1, 3 * PAGE, 256);
    recv1(s, 5, 0xf1, 4 * PAGE, 256);
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_FAST_REG_MR,
                          .remote = 2 }, NULL, 0);
    send1(s, 0, PVRDMA_WR_SEND, 0xa1, 0, 64);
    send1(s, 0, PVRDMA_WR_SEND, 0xa2, 0, 64);
    send_wr(s, (PfSend) { .qp = 6, .opcode = PVRDMA_WR_RDMA_READ,
                          .flags = PVRDMA_SEND_SIGNALED, .remote = DMA_MR,
                          .off = 8 * PAGE, .wr_id = 0xc1 },
            &(PfSge) { .mr = DMA_MR, .off = 5 * PAGE, .len = 128 }, 1);
    send1(s, 6, PVRDMA_WR_SEND, 0xc2, 0, 64);
}

/*
 * What runs against the device after a migration: doorbells of every
 * kind, a receive that wakes the RNR sender, the READ response and the
 * ACK from the peer of QP 6, a UD frame, the FRMR and user MR used,
 * and the rings polled.
 */
static void after_migration(Seed *s)
{
    uint8_t data[128];
    PfSge g = sge(DMA_MR, 0, 16);

    memset(data, 0x77, sizeof(data));
    uar(s, PF_UAR_QP, 0, 0xc0);
    uar(s, PF_UAR_CQ, CQ1, 0x40);
    uar(s, PF_UAR_SRQ, 0, 0x80);
    recv1(s, 1, 0xb2, PAGE + 64, 64);
    clock_step(s, PF_CLOCK_RNR, 1);
    frame(s, (PfFrame) { .opcode = 0x10, .qp = 6, .ackreq = 0x04 },
          data, sizeof(data));
    frame(s, (PfFrame) { .opcode = 0x11, .qp = 6, .psn = 0x101,
                         .ackreq = 0x04 }, NULL, 0);
    frame(s, (PfFrame) { .opcode = 0x64, .qp = 4, .ackreq = 0x04,
                         .src_qpn = 7 }, data, 64);
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_RDMA_WRITE,
                          .remote = 2, .flags = PVRDMA_SEND_SIGNALED,
                          .wr_id = 0xa3 }, &g, 1);
    send_wr(s, (PfSend) { .qp = 0, .opcode = PVRDMA_WR_RDMA_WRITE,
                          .remote = 1, .off = PAGE - 8,
                          .flags = PVRDMA_SEND_SIGNALED, .wr_id = 0xa4 },
            &g, 1);
    recv1(s, PF_RECV_SRQ | 0, 0xd3, 2 * PAGE + 128, 64);
    send1(s, 2, PVRDMA_WR_SEND, 0xa5, 0, 32);
    send_wr(s, (PfSend) { .qp = 4, .opcode = PVRDMA_WR_SEND, .dest = 5,
                          .qkey = 0x80010000u, .flags = PVRDMA_SEND_SIGNALED,
                          .wr_id = 0xe2 }, &g, 1);
    send1(s, 6, PVRDMA_WR_SEND, 0xc3, 0, 32);
    poll_all(s);
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_QUERY_QP, .sel = { 6 } });
    cmd(s, (PfCmd) { .cmd = PVRDMA_CMD_DESTROY_QP, .sel = { 6 } });
    op(s, PF_OP_QUERY, NULL, 0, NULL, 0);
}

/* A good migration with everything live, then the data path on it. */
static void seed_migrate_live(Seed *s)
{
    live_objects(s);
    migrate(s, (PfMigrate) { 0 }, NULL, 0);
    after_migration(s);
    migrate(s, (PfMigrate) { 0 }, NULL, 0);
    poll_all(s);
}

/*
 * The VM stays stopped after the load: frames from the link and a timer
 * while it is, then the next migration runs it again.
 */
static void seed_migrate_stopped(Seed *s)
{
    uint8_t data[64] = { 0 };

    live_objects(s);
    migrate(s, (PfMigrate) { .knobs = PF_MIG_STAY_STOPPED }, NULL, 0);
    frame(s, (PfFrame) { .opcode = 0x10, .qp = 6, .ackreq = 0x04 },
          data, sizeof(data));
    clock_step(s, PF_CLOCK_RNR, 1);
    op(s, PF_OP_QUERY, NULL, 0, NULL, 0);
    migrate(s, (PfMigrate) { 0 }, NULL, 0);
    after_migration(s);
}

/*
 * Loads that fail: a stream cut short, a version the section does not
 * have, then the device reset and probed again (a DSR), which it takes.
 */
static void seed_migrate_cut(Seed *s)
{
    live_objects(s);
    migrate(s, (PfMigrate) { .cut = 600 }, NULL, 0);
    after_migration(s);
    migrate(s, (PfMigrate) { .version = 1 }, NULL, 0);
    reg(s, PVRDMA_REG_CTL / 4, false, PVRDMA_CTL_RESET);
    op(s, PF_OP_DSR, &(PfDsr) { 0 }, sizeof(PfDsr), NULL, 0);
    live_objects(s);
    after_migration(s);
}

/*
 * Fields of the device's own section changed (@e, @n edits), each at
 * its offset in the stream (vmstate_pvrdma: the PCI device's version and
 * 256 bytes of config space from 4, its interrupt pin at 4 + 0x3d; MSI-X's
 * 3 entries and pending bits from 276; the registers from 325; dsr_loaded
 * at 353; the async ring's npages at 383): each load must be refused,
 * and the device refuse work until a good load or a reset.
 */
static void seed_migrate_field(Seed *s, const PfMigEdit *e, size_t n)
{
    live_objects(s);
    migrate(s, (PfMigrate) { 0 }, e, n);
    after_migration(s);
}

static void seed_migrate_pin(Seed *s)
{
    seed_migrate_field(s, &(PfMigEdit) { .kind = PF_MIG_XOR8, .off = 65,
                                         .val = 0x40 }, 1);
}

static void seed_migrate_no_dsr(Seed *s)
{
    seed_migrate_field(s, &(PfMigEdit) { .kind = PF_MIG_XOR8, .off = 353,
                                         .val = 0x01 }, 1);
}

/*
 * The async ring made 65 pages: its npages, and its one run of 4 pages
 * (the low bits of the run word at 391..398) 61 longer.  The page list
 * loads; the device's check of its rings (at most 64 pages) refuses it.
 */
static void seed_migrate_ring_pages(Seed *s)
{
    static const PfMigEdit e[] = {
        { .kind = PF_MIG_ADD32, .off = 383, .val = 61 },
        { .kind = PF_MIG_ADD32, .off = 395, .val = 61 },
    };

    seed_migrate_field(s, e, 2);
}

/*
 * Changed streams: bytes XORed, counts and handles set and moved, at
 * places spread over the section, each load followed by work.
 */
static void seed_migrate_edits(Seed *s)
{
    static const PfMigEdit e1[] = {
        { .kind = PF_MIG_XOR8, .off = 40, .val = 0x01 },
        { .kind = PF_MIG_XOR8, .off = 1100, .val = 0x80 },
    };
    static const PfMigEdit e2[] = {
        { .kind = PF_MIG_SET32, .off = 700, .val = 0xffffffff },
    };
    static const PfMigEdit e3[] = {
        { .kind = PF_MIG_ADD32, .off = 1500, .val = 1 },
        { .kind = PF_MIG_XOR32, .off = 2400, .val = 0x1000 },
    };

    live_objects(s);
    migrate(s, (PfMigrate) { 0 }, e1, 2);
    after_migration(s);
    migrate(s, (PfMigrate) { 0 }, NULL, 0);
    live_objects(s);
    migrate(s, (PfMigrate) { 0 }, e2, 1);
    after_migration(s);
    live_objects(s);
    migrate(s, (PfMigrate) { 0 }, e3, 2);
    after_migration(s);
}

static const struct {
    const char *name;
    void (*fn)(Seed *s);
} seeds[] = {
    { "rc-send", seed_rc_send },
    { "wire-requests", seed_wire_requests },
    { "wire-responses", seed_wire_responses },
    { "wire-raw", seed_wire_raw },
    { "wire-responder", seed_wire_responder },
    { "migrate-pin", seed_migrate_pin },
    { "migrate-no-dsr", seed_migrate_no_dsr },
    { "migrate-ring-pages", seed_migrate_ring_pages },
    { "rc-write", seed_rc_write },
    { "rc-read", seed_rc_read },
    { "rc-atomics", seed_rc_atomics },
    { "rc-multi-sge", seed_rc_multi_sge },
    { "rc-signaled", seed_rc_signaled },
    { "rc-ring-wrap", seed_rc_ring_wrap },
    { "ud", seed_ud },
    { "gsi", seed_gsi },
    { "frmr", seed_frmr },
    { "rnr", seed_rnr },
    { "srq", seed_srq },
    { "cq-overrun", seed_cq_overrun },
    { "cq-notify-msix", seed_cq_notify_msix },
    { "flush", seed_flush },
    { "errors", seed_errors },
    { "commands", seed_commands },
    { "hostile-rings", seed_hostile_rings },
    { "dma-into-own-uar", seed_dma_into_own_uar },
    { "doorbell-budget", seed_doorbell_budget },
    { "device", seed_device },
    { "modify-qp", seed_modify_qp },
    { "ud-ipv6", seed_ud_ipv6 },
    { "exhaustion", seed_exhaustion },
    { "create-qp-invalid", seed_create_qp_invalid },
    { "q35-sbr-msix", seed_q35_sbr_msix },
    { "q35-slot-power-msix", seed_q35_slot_power_msix },
    { "q35-dma-into-config", seed_q35_dma_into_config },
    { "migrate-live", seed_migrate_live },
    { "migrate-stopped", seed_migrate_stopped },
    { "migrate-cut", seed_migrate_cut },
    { "migrate-edits", seed_migrate_edits },
};

int main(int argc, char **argv)
{
    size_t i;

    if (argc != 2) {
        fprintf(stderr, "usage: %s <output directory>\n", argv[0]);
        return 2;
    }
    for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
        Seed s = { .n = 0 };
        char path[4096];
        FILE *f;

        seeds[i].fn(&s);
        snprintf(path, sizeof(path), "%s/%s", argv[1], seeds[i].name);
        f = fopen(path, "wb");
        if (!f || fwrite(s.b, 1, s.n, f) != s.n || fclose(f)) {
            perror(path);
            return 1;
        }
    }
    return 0;
}
