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
} Pv;

typedef struct QpSpec {
    uint8_t type;
    uint32_t pd, scq, rcq, srq;
    bool is_srq;
    uint32_t send_wr, recv_wr, send_sge, recv_sge;
} QpSpec;

/*
 * Device setup and registers.  pv_start*() boots a PC with a vmxnet3 at
 * function 0 and the device at function 1 of slot SLOT; pv_probe() also
 * loads a DSR and activates the device, as the driver's probe does.
 */
Pv *pv_start_args(const char *extra);
Pv *pv_start(void);
void pv_stop(Pv *pv);
uint32_t rd(Pv *pv, uint32_t reg);
void wr(Pv *pv, uint32_t reg, uint32_t val);
uint64_t galloc(Pv *pv, size_t size);
uint64_t make_pdir(Pv *pv, uint32_t npages, uint64_t *pages);
uint64_t make_ring(Pv *pv, uint32_t npages);
uint32_t pv_write_dsr(Pv *pv, uint32_t driver_version,
                             uint32_t async_npages, uint32_t cq_npages);
PvrdmaDeviceCaps pv_caps(Pv *pv);
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

#endif
