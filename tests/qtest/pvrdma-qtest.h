/*
 * Helpers shared by the pvrdma qtests: a device probed the way the Linux
 * vmw_pvrdma driver probes it, guest memory for rings and page
 * directories, and one call per command.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TESTS_QTEST_PVRDMA_QTEST_H
#define TESTS_QTEST_PVRDMA_QTEST_H

#include "libqtest.h"
#include "libqos/pci-pc.h"
#include "libqos/malloc-pc.h"
#include "hw/rdma/vmw/pvrdma_abi.h"

#define PAGE            4096

#define SLOT            0x10

#define MAC             "52:54:00:12:34:56"

#define ERR_OK          0

#define CMD(pv, req, resp) \
    pv_cmd((pv), &(req), sizeof(req), (resp), sizeof(*(resp)))

#define CMD_NR(pv, req) pv_cmd((pv), &(req), sizeof(req), NULL, 0)

typedef struct Pv {
    QTestState *qts;
    QGuestAllocator alloc;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIBar regs;
    QPCIBar uar;
    uint64_t dsr;
    uint64_t cmd;
    uint64_t resp;
    uint64_t async_pages[4];
    uint64_t cq_pages[4];
    uint64_t cookie;
    bool q35;                       /* behind a root port (pv_start_q35) */
} Pv;

typedef struct QpSpec {
    uint8_t type;
    uint32_t pd, scq, rcq, srq;
    bool is_srq;
    uint32_t send_wr, recv_wr, send_sge, recv_sge;
    uint64_t state_page;            /* ring state page; 0: a fresh one */
} QpSpec;

/*
 * The backend under test.  By default the device runs its built-in soft
 * backend.  PVRDMA_QTEST_IBDEV=<host RDMA device> (test lane 3) selects
 * the ibverbs backend on that device; PVRDMA_QTEST_NETDEV names its host
 * network device and PVRDMA_QTEST_MUX the socket of an rdmacm-mux serving
 * it.  Guest RAM is then a shared memfd, as the backend requires.
 */
bool pv_ibverbs(void);
/* Guest RAM with ibverbs (the pc machine's default size) */
#define PV_IBV_RAM_MB   128

/*
 * With ibverbs, completions and events arrive from the host device's
 * completion thread and main loop, after the doorbell write has returned.
 * The *_wait() helpers poll until something is there or PV_WAIT_US has
 * passed; pv_settle() gives the host device PV_SETTLE_US to produce what
 * a test then asserts is absent.  On the soft backend, whose doorbells
 * complete synchronously, pv_settle() does nothing and the waits return
 * at once when the answer is there.
 */
#define PV_WAIT_US      (10 * G_USEC_PER_SEC)
#define PV_SETTLE_US    (200 * 1000)
void pv_settle(void);

/*
 * Device setup and registers.  pv_start*() boots a PC with a vmxnet3 at
 * function 0 and the device at function 1 of slot SLOT; pv_probe() also
 * loads a DSR and activates the device, as the driver's probe does.
 */
Pv *pv_start_args(const char *extra);
/* ... with @nic the vmxnet3's options (its mac=, its netdev=) */
Pv *pv_start_nic(const char *nic, const char *extra);
QTestState *pv_qemu_start_nic(const char *nic, const char *extra);
/* QEMU as pv_start_args() starts it, and nothing else (a destination). */
QTestState *pv_qemu_start(const char *extra);
/* @pv goes on in @to: the destination its QEMU migrated to. */
void pv_move(Pv *pv, QTestState *to);
Pv *pv_start(void);
/*
 * q35, the two functions behind a pcie-root-port at 00:PV_RP_SLOT.0 on bus
 * 1, MMCFG enabled at PV_MMCFG (the test plays the firmware).
 */
#define PV_MMCFG        0xb0000000u
#define PV_RP_SLOT      0x10
Pv *pv_start_q35(void);
/* Find, enable and map the device (again, after a reset cleared it). */
void pv_attach(Pv *pv);
/* The driver's probe on a started device: DSR, IMR=0, ACTIVATE. */
void pv_load(Pv *pv);
void pv_stop(Pv *pv);
uint32_t rd(Pv *pv, uint32_t reg);
void wr(Pv *pv, uint32_t reg, uint32_t val);
uint64_t galloc(Pv *pv, size_t size);
uint64_t make_pdir(Pv *pv, uint32_t npages, uint64_t *pages);
uint64_t make_ring(Pv *pv, uint32_t npages);
uint32_t pv_write_dsr(Pv *pv, uint32_t driver_version,
                             uint32_t async_npages, uint32_t cq_npages);
PvrdmaDeviceCaps pv_caps(Pv *pv);
/*
 * Guest structures are little-endian; the tests see them in host order.
 * These helpers, and every helper below that writes or reads one
 * (commands, WQEs, CQEs, events), convert each field on the way.
 */
/* @dsr at @addr; the DSR at pv->dsr */
void pv_dsr_put(Pv *pv, uint64_t addr, const PvrdmaDsr *dsr);
PvrdmaDsr pv_dsr_get(Pv *pv);
/* A request into the command slot, padded as the driver copies it. */
void pv_cmd_write(Pv *pv, const void *req, size_t len);
/* The CQE at guest address @addr */
PvrdmaCqe pv_cqe_at(Pv *pv, uint64_t addr);
Pv *pv_probe(void);
uint32_t pv_cmd(Pv *pv, void *req, size_t len, void *resp,
                       size_t resp_len);
uint32_t create_pd(Pv *pv, uint32_t ctx, uint32_t *out);
uint32_t destroy(Pv *pv, uint32_t cmd, uint32_t handle);
uint32_t create_cq_pages(Pv *pv, uint32_t cqe, uint32_t nchunks,
                                uint64_t pdir, uint32_t *out);
uint32_t create_cq(Pv *pv, uint32_t cqe, uint32_t *out);
uint32_t wqe_bytes(uint32_t hdr, uint32_t sge);
void qp_chunks(const QpSpec *q, uint32_t *send, uint32_t *total);
/* CREATE_QP for @q with fresh ring pages (kept in *@pages if asked). */
PvrdmaCmdCreateQp qp_cmd_pages(Pv *pv, const QpSpec *q, uint64_t **pages);
PvrdmaCmdCreateQp qp_cmd(Pv *pv, const QpSpec *q);
uint32_t create_qp(Pv *pv, const QpSpec *q, uint32_t *qpn,
                          uint32_t *handle);
QpSpec basic_qp(Pv *pv, uint8_t type);
uint32_t modify_qp(Pv *pv, uint32_t handle, uint32_t mask,
                          const PvrdmaQpAttr *a);
PvrdmaQpAttr query_qp(Pv *pv, uint32_t handle);
uint32_t create_srq(Pv *pv, uint32_t pd, uint32_t max_wr,
                           uint32_t max_sge, uint32_t limit, uint32_t *out);
uint32_t create_uc(Pv *pv, uint64_t pfn, uint32_t *out);
uint32_t create_mr(Pv *pv, uint32_t pd, uint32_t flags,
                          uint32_t access, uint64_t start, uint64_t length,
                          uint32_t nchunks, uint64_t pdir,
                          PvrdmaCmdCreateMrResp *r);
PvrdmaQpAttr rc_attrs(void);
uint32_t gid_bind(Pv *pv, uint32_t index, uint8_t fill, uint8_t type);
uint32_t gid_unbind(Pv *pv, uint32_t index, uint8_t fill);

/*
 * Data path: rings in guest memory as the driver and rdma-core build them.
 * A PvRing is one {prod_tail, cons_head} pair plus its element pages;
 * slots are idx & (max_elems - 1), the arithmetic of the driver's
 * pvrdma_ring.h (also for the device rings, whose size is not a power of
 * two).
 */
typedef struct PvRing {
    uint64_t state;                 /* guest address of {prod_tail, head} */
    const uint64_t *pages;          /* element pages */
    uint32_t max_elems;
    uint32_t elem_size;
} PvRing;

typedef struct PvCq {
    uint32_t handle;
    uint32_t cqe;
    uint64_t *pages;                /* page 0: ring state */
    uint32_t npages;
    PvRing ring;
} PvCq;

typedef struct PvQp {
    uint32_t handle;
    uint32_t qpn;
    uint8_t type;
    uint32_t scq, rcq;
    uint64_t *pages;                /* page 0: ring state, send, receive */
    uint32_t npages;
    uint32_t send_chunks;
    uint32_t max_send_sge, max_recv_sge;
    bool is_srq;
    PvRing sq;                      /* tx at offset 0 of page 0 */
    PvRing rq;                      /* rx at offset 8 of page 0 */
} PvQp;

typedef struct PvSrq {
    uint32_t handle;
    uint32_t max_wr, max_sge;
    uint64_t *pages;
    uint32_t npages;
    PvRing ring;                    /* rx at offset 8 of page 0 */
} PvSrq;

uint64_t pv_ring_slot(const PvRing *r, uint32_t idx);
uint32_t pv_ring_prod(Pv *pv, const PvRing *r);
uint32_t pv_ring_cons(Pv *pv, const PvRing *r);
void pv_ring_set_prod(Pv *pv, const PvRing *r, uint32_t v);
void pv_ring_set_cons(Pv *pv, const PvRing *r, uint32_t v);
uint32_t pv_ring_next(const PvRing *r, uint32_t idx);
/* Guest as producer: append @len bytes (<= elem_size) and publish. */
void pv_ring_put(Pv *pv, const PvRing *r, const void *elem, size_t len);
/* Guest as consumer: take the oldest element; false when empty. */
bool pv_ring_get(Pv *pv, const PvRing *r, void *elem, size_t len);
/* Elements published and not yet consumed. */
uint32_t pv_ring_count(Pv *pv, const PvRing *r);

/* The DSR's device rings (async events, CQ notifications). */
PvRing pv_async_ring(Pv *pv);
PvRing pv_cqn_ring(Pv *pv);
uint32_t pv_events(Pv *pv, PvrdmaEqe *out, uint32_t max);
uint32_t pv_cq_notifications(Pv *pv, uint32_t *handles, uint32_t max);
/* As above, after waiting for the first element (at most PV_WAIT_US). */
uint32_t pv_events_wait(Pv *pv, PvrdmaEqe *out, uint32_t max);
uint32_t pv_cq_notifications_wait(Pv *pv, uint32_t *handles, uint32_t max);
/* Wait until @r holds at least @n elements; false on timeout. */
bool pv_ring_wait(Pv *pv, const PvRing *r, uint32_t n);

/* A command that leaves ICR alone (for tests that look at interrupts). */
uint32_t pv_cmd_quiet(Pv *pv, void *req, size_t len, void *resp,
                      size_t resp_len);

uint32_t gid_bind_gid(Pv *pv, uint32_t index, const uint8_t *gid);
uint32_t gid_unbind_gid(Pv *pv, uint32_t index, const uint8_t *gid);
uint32_t dma_mr(Pv *pv, uint32_t pd, uint32_t access);

PvCq *pv_cq_new(Pv *pv, uint32_t cqe);
/* A CQ whose ring state page is @state (a hostile layout: shared). */
PvCq *pv_cq_new_state(Pv *pv, uint32_t cqe, uint64_t state);
bool pv_cq_poll(Pv *pv, PvCq *cq, PvrdmaCqe *cqe);
/* pv_cq_poll() that waits up to PV_WAIT_US for a CQE. */
bool pv_cq_poll_wait(Pv *pv, PvCq *cq, PvrdmaCqe *cqe);
void pv_cq_db(Pv *pv, PvCq *cq, uint32_t flags);

/* Creates the QP (asserting success); @q->scq/rcq/pd as in create_qp. */
PvQp *pv_qp_new(Pv *pv, const QpSpec *q, uint8_t sq_sig_all,
                uint32_t access);
void pv_sq_put(Pv *pv, PvQp *qp, const PvrdmaSqWqeHdr *h,
               const PvrdmaSge *sge, uint32_t nsge);
void pv_rq_put(Pv *pv, const PvRing *r, uint64_t wr_id, uint32_t num_sge,
               const PvrdmaSge *sge, uint32_t nsge);
void pv_qp_db(Pv *pv, PvQp *qp, uint32_t flags);

PvSrq *pv_srq_new(Pv *pv, uint32_t pd, uint32_t max_wr, uint32_t max_sge,
                  uint32_t limit);
void pv_srq_db(Pv *pv, PvSrq *srq);

void pv_cq_free(PvCq *cq);
void pv_qp_free(PvQp *qp);
void pv_srq_free(PvSrq *srq);

#endif
