/*
 * RDMA device core: the backend interface.
 *
 * A backend executes verbs for the objects the core has validated.  The
 * core calls create_* only after every check passed and destroy_* for every
 * object it created, also on device reset and unplug, so a backend never
 * sees a half-validated object and never leaks one.  Each op returns 0 or a
 * negative errno that the front-end turns into an error status.
 *
 *   soft     built-in software engine (hw/rdma/soft), the default
 *   ibverbs  host RDMA device through libibverbs (hw/rdma/ibverbs),
 *            selected by ibdev=
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_RDMA_BACKEND_H
#define HW_RDMA_RDMA_BACKEND_H

#include "rdma_compat.h"
#include "rdma_rm.h"

/* The ibverbs backend is built on Linux with rdma-core (meson.build). */
#if defined(CONFIG_RDMA) && defined(CONFIG_LINUX)
#define RDMA_HAVE_IBVERBS 1
#endif

typedef struct RdmaPortAttr {
    bool active;
    uint8_t max_mtu;                /* IB MTU enum */
    uint8_t active_mtu;
    uint32_t max_msg_sz;
    uint8_t active_width;           /* IB width enum */
    uint8_t active_speed;           /* IB speed enum */
} RdmaPortAttr;

/* What a backend takes from the host, against its bounds (query-pvrdma) */
typedef struct RdmaBounds {
    uint32_t host_queue_entries, host_queue_entries_max;
    uint32_t map_runs, map_runs_max, map_runs_per_mr;
} RdmaBounds;

/* What the agent that carries a GID's MADs said when the backend claimed it */
typedef enum RdmaGidAgentState {
    RDMA_GID_AGENT_HELD,
    RDMA_GID_AGENT_PENDING,         /* asked, no answer yet */
    RDMA_GID_AGENT_REFUSED,
    RDMA_GID_AGENT_UNREGISTERED,    /* not connected when it was added */
} RdmaGidAgentState;

/* What a backend's own Ethernet port did (the soft backend's RoCE port). */
typedef struct RdmaPortStats {
    uint64_t tx_frames;
    uint64_t tx_dropped;            /* packets no frame could carry */
    uint64_t rx_frames;             /* RoCE frames taken for this device */
    uint64_t rx_dropped;            /* ... and dropped before the engine */
    uint64_t timeouts;              /* requester: local ACK timeouts */
    uint64_t retransmits;           /* requester: went back (timeout, NAK) */
    uint64_t seq_naks;              /* requester: PSN sequence error NAKs */
    uint64_t duplicates;            /* responder: duplicate requests */
} RdmaPortStats;

typedef struct RdmaBackendOps {
    const char *name;
    /* Clamp the device limits to what the backend supports. */
    void (*limits)(RdmaBackend *be, RdmaDevLimits *limits);
    void (*query_port)(RdmaBackend *be, RdmaPortAttr *attr);
    /* Optional: backends with host objects per PD. */
    int (*create_pd)(RdmaBackend *be, RdmaPd *pd);
    void (*destroy_pd)(RdmaBackend *be, RdmaPd *pd);
    int (*create_cq)(RdmaBackend *be, RdmaCq *cq);
    void (*destroy_cq)(RdmaBackend *be, RdmaCq *cq);
    int (*create_qp)(RdmaBackend *be, RdmaQp *qp);
    /*
     * Execute @wr, a private copy, on @qp (in RTS).  Results come back
     * through the front-end's complete(); a WR that must wait (RNR) is
     * kept by the backend, which sets qp->sq_stalled until it resumes.
     */
    void (*post_send)(RdmaBackend *be, RdmaQp *qp, const RdmaSendWr *wr);
    /* The guest posted receives on @qp, or on @srq (qp == NULL). */
    void (*recv_posted)(RdmaBackend *be, RdmaQp *qp, RdmaSrq *srq);
    /* @qp entered ERR or SQE: complete the WR the backend holds, flushed. */
    void (*flush_qp)(RdmaBackend *be, RdmaQp *qp);
    int (*modify_qp)(RdmaBackend *be, RdmaQp *qp, uint32_t mask,
                     const RdmaQpAttr *attr);
    void (*destroy_qp)(RdmaBackend *be, RdmaQp *qp);
    /*
     * Optional: the state of the backend's own QP (RdmaQpState), or -1.
     * A host device can take a QP to ERR without telling (rxe does, for a
     * responder error); the core catches up before it reports the state.
     */
    int (*qp_state)(RdmaBackend *be, RdmaQp *qp);
    int (*create_srq)(RdmaBackend *be, RdmaSrq *srq);
    int (*modify_srq)(RdmaBackend *be, RdmaSrq *srq);
    void (*destroy_srq)(RdmaBackend *be, RdmaSrq *srq);
    int (*create_mr)(RdmaBackend *be, RdmaMr *mr);
    void (*destroy_mr)(RdmaBackend *be, RdmaMr *mr);
    int (*add_gid)(RdmaBackend *be, uint32_t index, const RdmaGid *gid);
    /* Optional: where the host device holds guest GID @index, or -1. */
    int (*host_gid_index)(RdmaBackend *be, uint32_t index);
    void (*del_gid)(RdmaBackend *be, uint32_t index, const RdmaGid *gid);
    void (*destroy)(RdmaBackend *be);
    /*
     * Optional: what the agent that carries the GID's MADs (rdmacm-mux)
     * said of guest GID @index; when it refused the GID, *@why says why
     * (static text, for a person).
     */
    RdmaGidAgentState (*gid_agent_state)(RdmaBackend *be, uint32_t index,
                                         const char **why);
    /* Optional: how much of its host budgets the backend uses. */
    void (*bounds)(RdmaBackend *be, RdmaBounds *b);
    /*
     * Optional: the backend's Ethernet port, if it has one now: its
     * netdev (g_free it), Ethernet MTU and counters.
     */
    bool (*port_stats)(RdmaBackend *be, char **netdev, uint32_t *mtu,
                       RdmaPortStats *st);
    /*
     * The backend takes posted receives out of the guest's SRQ ring at
     * once and the host SRQ raises the limit event; the front-end must
     * not judge the limit by what is left in the ring.
     */
    bool srq_limit_native;
} RdmaBackendOps;

struct RdmaBackend {
    const RdmaBackendOps *ops;
    RdmaResources *rm;
};

RdmaBackend *rdma_soft_backend_new(RdmaResources *rm, PCIDevice *pdev,
                                   Error **errp);
bool rdma_backend_is_soft(RdmaBackend *be);
/*
 * The soft engine's own state (WRs it holds, RNR timers), on a soft
 * backend (the opaque), after the objects of vmstate_rdma_rm.
 */
extern const VMStateDescription vmstate_rdma_soft;

typedef struct RdmaIbvConfig {
    const char *ibdev;              /* host RDMA device */
    uint8_t ibport;
    CharFrontend *mad_chr;          /* rdmacm-mux connection */
} RdmaIbvConfig;

/* NULL with @errp set when the host device or guest RAM is unsuitable. */
RdmaBackend *rdma_ibv_backend_new(RdmaResources *rm, PCIDevice *pdev,
                                  const RdmaIbvConfig *cfg, Error **errp);

#endif
