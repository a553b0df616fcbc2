/*
 * Helpers of the pvrdma data-path qtests (pvrdma-datapath-test.c,
 * pvrdma-migration-test.c): one device with a PD, GIDs, a DMA MR and CQs,
 * QPs brought up as the verbs bring them up, work requests, and checks of
 * completions, events and guest memory.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TESTS_QTEST_PVRDMA_DP_H
#define TESTS_QTEST_PVRDMA_DP_H

#include "pvrdma-qtest.h"

/* ::ffff:10.0.2.15 (GID 0) and ::ffff:10.0.2.16 (GID 1) */
extern const uint8_t gid0[16];
extern const uint8_t gid1[16];

#define ACC_ALL     (PVRDMA_ACCESS_LOCAL_WRITE | PVRDMA_ACCESS_REMOTE_WRITE | \
                     PVRDMA_ACCESS_REMOTE_READ | PVRDMA_ACCESS_REMOTE_ATOMIC)

#define ANY_OPCODE  UINT32_MAX      /* opcode of an error CQE: undefined */
#define MEM_SIZE    (64 * PAGE)
#define UD_QKEY     0x1234
#define GSI_QKEY    0x80010000u
#define GRH         40

/*
 * A failed check marks the test failed and lets it finish, so that one
 * device defect does not hide the results of the tests after it
 * (g_test_set_nonfatal_assertions() in main()).
 */
#define fail(...) do {                                                       \
        g_test_message(__VA_ARGS__);                                         \
        g_test_fail();                                                       \
    } while (0)

/* One device with a PD, two GIDs, a DMA MR with every right, two CQs. */
typedef struct Dp {
    Pv *pv;
    uint32_t pd;
    uint32_t lkey;
    PvCq *scq;
    PvCq *rcq;
    uint64_t mem;                   /* MEM_SIZE bytes of data buffers */
    GPtrArray *objs;                /* the PvQp to free */
} Dp;

/* Entry budget 4 MiB, plus the step (1 MiB) the last WR may take. */
#define WORK_BOUND  (5ull << 20)

void dp_init(Dp *d);
Dp *dp_new_on(Pv *pv);
/* ... with GIDs 0 and 1 of its own (two devices on one link) */
Dp *dp_new_gids(Pv *pv, const uint8_t *g0, const uint8_t *g1);
Dp *dp_new(void);
void dp_free(Dp *d);
QpSpec dp_spec(Dp *d, uint8_t type, PvCq *scq, PvCq *rcq);
PvQp *dp_qp(Dp *d, const QpSpec *q, uint8_t sig_all, uint32_t access);
PvCq *dp_cq(Dp *d, uint32_t cqe);
uint32_t qp_state(Dp *d, PvQp *qp);
/* An RC QP from RESET to INIT with @access */
void rc_init(Dp *d, PvQp *qp, uint32_t access);
/* The far end of an RC connection: GID, MAC (NULL: none), ACK timeout. */
typedef struct RcPath {
    const uint8_t *dgid;
    const uint8_t *dmac;
    uint8_t timeout;                /* 4.096 us << timeout */
    uint8_t retry_cnt;
    uint32_t flow_label;            /* the ABI's 32 bits, as verbs pass it */
} RcPath;
void rc_connect_path(Dp *d, PvQp *qp, uint32_t dest_qpn, uint32_t access,
                     uint8_t min_rnr_timer, uint8_t rnr_retry,
                     const RcPath *path);
void rc_connect(Dp *d, PvQp *qp, uint32_t dest_qpn, uint32_t access,
                uint8_t min_rnr_timer, uint8_t rnr_retry);
void rc_pair(Dp *d, PvQp **a, PvQp **b, uint32_t b_access,
             uint8_t b_min_rnr_timer, uint8_t a_rnr_retry);
void ud_up(Dp *d, PvQp *qp, uint32_t qkey);
PvQp *ud_qp(Dp *d, uint8_t type, uint32_t qkey);
uint32_t modify_state(Dp *d, PvQp *qp, uint32_t state);
PvrdmaSge sge(uint64_t addr, uint32_t len, uint32_t lkey);
PvrdmaSqWqeHdr wqe(uint64_t wr_id, uint32_t opcode, uint32_t flags,
                   uint32_t num_sge);
PvrdmaSqWqeHdr wqe_rdma(uint64_t wr_id, uint32_t opcode,
                        uint32_t flags, uint32_t num_sge,
                        uint64_t raddr, uint32_t rkey);
PvrdmaSqWqeHdr wqe_atomic(uint64_t wr_id, uint32_t opcode,
                          uint64_t raddr, uint32_t rkey,
                          uint64_t compare_add, uint64_t swap);
PvrdmaSqWqeHdr wqe_ud(uint64_t wr_id, uint32_t flags, uint32_t num_sge,
                      uint32_t qpn, uint32_t qkey,
                      const uint8_t *dgid, uint8_t sgid_index);
void post_send(Dp *d, PvQp *qp, PvrdmaSqWqeHdr h,
               const PvrdmaSge *s, uint32_t n);
void post_recv(Dp *d, PvQp *qp, uint64_t wr_id, const PvrdmaSge *s,
               uint32_t n);
void post_recv1(Dp *d, PvQp *qp, uint64_t wr_id, uint64_t addr,
                uint32_t len);
void main_loop_run(Dp *d);
PvrdmaCqe expect_cqe(Dp *d, PvCq *cq, uint64_t wr_id, uint32_t status,
                     uint32_t opcode, PvQp *qp);
PvrdmaCqe expect_cqe_or(Dp *d, PvCq *cq, uint64_t wr_id,
                        uint32_t status, uint32_t alt, PvQp *qp);
PvrdmaCqe expect_loc_prot_err(Dp *d, PvCq *cq, uint64_t wr_id,
                              PvQp *qp);
void expect_no_cqe(Dp *d, PvCq *cq);
void expect_event(Dp *d, uint32_t type, uint32_t info);
void expect_responder_event(Dp *d, uint32_t type, uint32_t info);
void wait_event(Dp *d);
void expect_no_event(Dp *d);
void expect_rc_success(Dp *d, PvCq *cq, uint64_t wr_id,
                       uint32_t opcode, uint32_t byte_len, PvQp *qp);
void expect_recv(Dp *d, PvCq *cq, uint64_t wr_id, uint32_t opcode,
                 uint32_t byte_len, PvQp *qp, PvQp *src,
                 uint32_t wc_flags, uint32_t imm);
void expect_flushing(Dp *d, PvQp *qp, PvCq *scq, uint64_t wr_id);
void expect_recvs_waiting(Dp *d, const PvRing *rq, uint32_t n);
bool qpn_used(Dp *d, uint32_t qpn);
uint32_t unused_qpn(Dp *d, uint32_t qpn);
bool skip_on_ibverbs(const char *why);
void fill(Dp *d, uint64_t addr, size_t len, uint8_t seed);
void check_fill(Dp *d, uint64_t addr, size_t len, uint8_t seed,
                size_t off);
void check_byte(Dp *d, uint64_t addr, size_t len, uint8_t v);
uint32_t user_mr(Dp *d, uint32_t access, uint64_t iova,
                 uint64_t length, uint32_t npages, uint64_t *phys);
uint32_t alias_mr(Dp *d, uint64_t iova, uint32_t npages,
                  uint64_t page);
uint64_t work_bytes_max(Dp *d);
PvrdmaCqe expect_cqe_slow(Dp *d, PvCq *cq, uint64_t wr_id,
                          uint32_t status, PvQp *qp);
PvrdmaSqWqeHdr wqe_fast_reg(uint64_t wr_id, uint64_t iova, uint64_t pdir,
                            uint32_t npages, uint32_t length, uint32_t access,
                            uint32_t key);

#endif
