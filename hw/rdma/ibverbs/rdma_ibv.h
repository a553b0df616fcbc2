/*
 * The ibverbs backend: internal interfaces.
 *
 * rdma_ibv.c        backend ops: host objects (PD, CQ, QP, SRQ, MR), GIDs
 * rdma_ibv_wr.c     work requests: guest WRs to host WRs, host completions
 *                   back to the guest (the completion thread)
 * rdma_ibv_mad.c    the GSI QP: MADs through rdmacm-mux on mad-chardev
 * rdma_ibv_map.c    a contiguous host range for a guest MR
 *
 * Threads: everything runs under the BQL.  The completion thread blocks
 * on the host's completion channel outside it, acknowledges the event and
 * then takes the BQL to drain the host CQ into the guest's; it finds the
 * CQ by an id that the BQL-protected table maps to the live object, so a
 * CQ the guest destroyed meanwhile is simply not found.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_IBVERBS_RDMA_IBV_H
#define HW_RDMA_IBVERBS_RDMA_IBV_H

#include <infiniband/verbs.h>
#include "qemu/thread.h"
#include "chardev/char-fe.h"
#include "hw/rdma/rdma_backend.h"
#include "rdma_ibv_map.h"

typedef struct RdmaIbv RdmaIbv;

/* One host DMA MR per set of rights: RDMA_ACCESS_* bits 0-3 */
#define RDMA_IBV_DMA_SETS       16
/* Where host DMA MRs start (guest-physical, see rdma_ibv_create_dma_mr) */
#define RDMA_IBV_DMA_START      (1 * MiB)

typedef struct RdmaIbvPd {
    struct ibv_pd *pd;
    /* guest RAM from 1 MiB below 4 GiB, iova = GPA (rdma_ibv_create_dma_mr) */
    struct ibv_mr *dma_mr[RDMA_IBV_DMA_SETS];
    uint32_t dma_refs[RDMA_IBV_DMA_SETS];   /* guest DMA MRs using each */
    GHashTable *ahs;                /* RdmaIbvAhKey -> struct ibv_ah * */
} RdmaIbvPd;

typedef struct RdmaIbvCq {
    uint64_t id;                    /* key of RdmaIbv.cqs */
    uint32_t handle;
    uint32_t entries;               /* of RdmaIbv.queue_entries */
    struct ibv_cq *cq;
} RdmaIbvCq;

typedef struct RdmaIbvQp {
    struct ibv_qp *qp;              /* NULL for the GSI QP */
    uint32_t entries;               /* of RdmaIbv.queue_entries */
    uint32_t pd_handle;
    uint32_t sends, max_sends;      /* WRs the host queues hold, capacity */
    uint32_t recvs, max_recvs;
    RdmaSendWr *held;               /* waits for room in the host SQ */
    bool rq_ready;                  /* host QP past RESET: takes receives */
} RdmaIbvQp;

typedef struct RdmaIbvSrq {
    struct ibv_srq *srq;
    uint32_t recvs, max_recvs;
    uint32_t entries;               /* of RdmaIbv.queue_entries */
} RdmaIbvSrq;

/*
 * What a host WR stands for.  The host wr_id is (gen << 32 | index): the
 * guest's wr_id, which queue and whether the guest asked for a completion
 * stay here, so a completion of a destroyed QP whose slot was reused is
 * recognised by the generation and dropped.
 */
enum {
    RDMA_IBV_SLOT_FREE,
    RDMA_IBV_SLOT_SEND,
    RDMA_IBV_SLOT_RECV,             /* owner: QP handle */
    RDMA_IBV_SLOT_SRQ_RECV,         /* owner: SRQ handle */
};

typedef struct RdmaIbvSlot {
    uint64_t wr_id;
    uint32_t gen;
    uint32_t owner;
    uint8_t kind;
    bool signaled;
    uint8_t opcode;                 /* RdmaWcOpcode of a send */
} RdmaIbvSlot;

typedef struct RdmaIbvMr {
    struct ibv_mr *mr;              /* NULL: a DMA MR (RdmaIbvPd.dma_mr) */
    uint32_t dma_set;               /* a DMA MR's index in RdmaIbvPd.dma_mr */
    RdmaIbvMap map;
    uint64_t hva_delta;             /* host address - guest iova */
} RdmaIbvMr;

struct RdmaIbv {
    RdmaBackend be;
    PCIDevice *pdev;
    char *ibdev;
    uint8_t port;
    struct ibv_context *ctx;
    struct ibv_device_attr attr;
    struct ibv_port_attr port_attr;
    struct ibv_comp_channel *channel;

    /* Guest RAM below 4 GiB, one host range (the DMA MR's). */
    RAMBlock *low_rb;               /* the RAM block at guest address 0 */
    void *low_ram;
    uint64_t low_ram_size;

    /* Guest GID index -> host GID index, or -1 until the host holds it. */
    int host_gid[256];

    GHashTable *cqs;                /* id -> RdmaIbvCq (under the BQL) */
    uint64_t next_cq_id;
    uint32_t queue_entries;         /* host queue entries in use */
    GHashTable *qps;                /* host QPN -> RdmaQp */
    GHashTable *mrs;                /* host lkey -> RdmaMr (user MRs) */

    GArray *slots;                  /* RdmaIbvSlot */
    GArray *free_slots;             /* uint32_t indexes into slots */
    uint32_t slot_gen;

    QemuThread comp_thread;
    int stop_fd;                    /* eventfd: ends the completion thread */

    /* MADs: rdmacm-mux client on the device's mad-chardev */
    CharFrontend *mad_chr;
    GByteArray *mad_in;
    GByteArray *mad_out;
    guint mad_watch;
    uint32_t mad_seq;
    /*
     * What rdmacm-mux said of the REGISTER of each guest GID: the
     * request's seq while it waits for the reply, and RDMA_IBV_MUX_*
     * or the daemon's negative errno.
     */
    uint32_t mux_seq[256];
    int mux_state[256];
};

#define RDMA_IBV_MUX_HELD       0
#define RDMA_IBV_MUX_PENDING    1
#define RDMA_IBV_MUX_OFFLINE    2       /* not connected when it was bound */

static inline RdmaIbv *rdma_ibv(RdmaBackend *be)
{
    return container_of(be, RdmaIbv, be);
}

/* rdma_ibv.c */
RdmaIbvPd *rdma_ibv_pd(RdmaIbv *ibv, uint32_t pd_handle);
int rdma_ibv_host_gid(RdmaIbv *ibv, uint8_t guest_index);
struct ibv_ah *rdma_ibv_ah(RdmaIbv *ibv, RdmaPd *pd, const uint8_t *dgid,
                           uint8_t sgid_index, uint8_t hop_limit);

/* rdma_ibv_wr.c */
void rdma_ibv_post_send(RdmaBackend *be, RdmaQp *qp, const RdmaSendWr *wr);
void rdma_ibv_quiesce_srq_qp(RdmaIbv *ibv, RdmaQp *qp);
void rdma_ibv_recv_posted(RdmaBackend *be, RdmaQp *qp, RdmaSrq *srq);
void rdma_ibv_flush_qp(RdmaBackend *be, RdmaQp *qp);
int rdma_ibv_qp_state(RdmaBackend *be, RdmaQp *qp);
bool rdma_ibv_comp_start(RdmaIbv *ibv, Error **errp);
void rdma_ibv_comp_stop(RdmaIbv *ibv);
void rdma_ibv_async_event(void *opaque);
void rdma_ibv_drop_slots(RdmaIbv *ibv, uint8_t kind, uint32_t owner);
uint32_t rdma_ibv_access(uint32_t guest_access);

/* rdma_ibv_mad.c */
bool rdma_ibv_mad_init(RdmaIbv *ibv, CharFrontend *chr, Error **errp);
void rdma_ibv_mad_fini(RdmaIbv *ibv);
void rdma_ibv_mad_gid(RdmaIbv *ibv, uint32_t index, const uint8_t *gid,
                      bool add);
RdmaGidAgentState rdma_ibv_mad_gid_state(RdmaBackend *be, uint32_t index,
                                         const char **why);
void rdma_ibv_mad_send(RdmaIbv *ibv, RdmaQp *qp, const RdmaSendWr *wr);

#endif
