/*
 * VMware PVRDMA front-end: device state.
 *
 * The front-end owns the guest ABI: BARs, registers, the device shared
 * region (DSR), the command channel, the device rings and the UAR
 * doorbells.  Objects and IB rules live in the core (hw/rdma/rdma_rm.h),
 * verbs execution in a backend (hw/rdma/rdma_backend.h).
 *
 * Threading: everything here runs under the BQL, in the vCPU thread that
 * wrote the register or doorbell, or in the main loop (bottom half,
 * timers, reset); see pvrdma_qp_ops.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_VMW_PVRDMA_H
#define HW_RDMA_VMW_PVRDMA_H

#include "hw/pci/pci_device.h"
#include "chardev/char-fe.h"
#include "qom/object.h"
#include "hw/rdma/rdma_rm.h"
#include "hw/rdma/rdma_backend.h"
#include "pvrdma_abi.h"
#include "pvrdma_dev_ring.h"

#define TYPE_PVRDMA "pvrdma"
OBJECT_DECLARE_SIMPLE_TYPE(PvrdmaState, PVRDMA)

#define PVRDMA_REGS_SIZE            4096
#define PVRDMA_MAX_UAR              512     /* power of two (driver rule) */
#define PVRDMA_DEV_RING_MAX_PAGES   64      /* async / CQ-notification */
#define PVRDMA_GID_TBL_LEN          16
#define PVRDMA_INTX_PIN             1       /* INTA#, read-only */

/* The device ring set up from the DSR: pages[0] is the ring state. */
typedef struct PvrdmaDevRing {
    RdmaPageList pages;
    PvrdmaRingMap map;
} PvrdmaDevRing;

/* User-settable properties (names kept from the original device). */
typedef struct PvrdmaParams {
    char *ibdev;
    char *netdev;
    uint8_t ibport;
    CharFrontend mad_chr;
    uint64_t max_mr_size;
    uint32_t max_qp;
    uint32_t max_sge;
    uint32_t max_cq;
    uint32_t max_mr;
    uint32_t max_pd;
    uint32_t max_ah;
    uint32_t max_srq;
    uint64_t max_mr_pages_total;
} PvrdmaParams;

struct PvrdmaState {
    PCIDevice parent_obj;

    MemoryRegion regs;
    MemoryRegion uar;

    /* Registers */
    uint32_t dsr_low;
    uint32_t dsr_high;
    uint32_t err;
    uint32_t icr;
    uint32_t imr;
    uint32_t mac_lo;
    uint32_t mac_hi;

    /* What the DSR told us; valid while dsr_loaded */
    bool dsr_loaded;
    bool activated;
    dma_addr_t dsr_addr;
    uint32_t driver_version;
    dma_addr_t cmd_slot;
    dma_addr_t resp_slot;
    PvrdmaDevRing async_ring;
    PvrdmaDevRing cq_ring;

    RdmaResources rm;
    RdmaBackend *backend;
    QEMUBH *sq_bh;                  /* send queues beyond a doorbell's budget */
    VMChangeStateEntry *sq_vm_state; /* holds them while the VM is stopped */
    bool reset_pending;             /* reset arrived inside an entry point */
    bool unplugged;                 /* unplug did too: teardown pending */
    bool port_up;                   /* function 0's Ethernet link */
    QEMUTimer *link_timer;
    QEMUBH *link_bh;
    uint8_t mac[6];                 /* of function 0, the vmxnet3 */
    Notifier machine_done;          /* function 0 checked when it is set */

    /* GIDs announced to management over QMP, see pvrdma_qmp.c */
    uint8_t gid_told[PVRDMA_GID_TBL_LEN][16];
    uint32_t gid_told_count;
    uint32_t gid_tokens;
    QEMUTimer *gid_timer;

    PvrdmaParams params;
    Error *migration_blocker;       /* ibverbs backend */
};

/* pvrdma_main.c */
void pvrdma_notify(PvrdmaState *s, unsigned vector);
void pvrdma_deferred(void *opaque);
void pvrdma_reset_state(PvrdmaState *s);
uint8_t pvrdma_gid_types(PvrdmaState *s);

/* pvrdma_qp_ops.c */
extern const RdmaFrontOps pvrdma_front_ops;
void pvrdma_doorbell_qp(PvrdmaState *s, uint32_t page, uint32_t val);
void pvrdma_doorbell_cq(PvrdmaState *s, uint32_t page, uint32_t val);
void pvrdma_doorbell_srq(PvrdmaState *s, uint32_t page, uint32_t val);
void pvrdma_qp_ops_init(PvrdmaState *s);
void pvrdma_qp_ops_fini(PvrdmaState *s);
/* After an incoming migration: resume the send queues left pending. */
void pvrdma_qp_ops_post_load(PvrdmaState *s);

/* pvrdma_qmp.c */
void pvrdma_gid_init(PvrdmaState *s);
void pvrdma_gid_sync(PvrdmaState *s);
void pvrdma_gid_fini(PvrdmaState *s);

/* pvrdma_cmd.c: execute the command in the command slot (REQUEST write) */
void pvrdma_exec_cmd(PvrdmaState *s);

#endif
