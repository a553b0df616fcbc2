/*
 * RDMA device core: resources (user contexts, PDs, CQs, QPs, SRQs, MRs,
 * GIDs), their handles and lifetime, and the rules that hold for every
 * backend (QP state machine, access flags, references between objects).
 *
 * The front-end (hw/rdma/vmw) parses the guest ABI into the plain structs
 * below and calls rdma_rm_*; the core validates, asks the backend to create
 * the object and only then makes it visible under a handle.  Every
 * handle the guest passes back is resolved by rdma_rm_get(), which checks
 * range, slot use and type in one place.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_RDMA_RM_H
#define HW_RDMA_RDMA_RM_H

#include "qemu/queue.h"
#include "rdma_utils.h"
#include "rdma_wr.h"
#include "migration/vmstate.h"

typedef struct RdmaBackend RdmaBackend;

typedef enum RdmaResType {
    RDMA_RES_UC,
    RDMA_RES_PD,
    RDMA_RES_CQ,
    RDMA_RES_QP,
    RDMA_RES_SRQ,
    RDMA_RES_MR,
    RDMA_RES_MAX,
} RdmaResType;

/* IB QP states and types, numbered as the guest ABI numbers them. */
typedef enum RdmaQpState {
    RDMA_QPS_RESET,
    RDMA_QPS_INIT,
    RDMA_QPS_RTR,
    RDMA_QPS_RTS,
    RDMA_QPS_SQD,
    RDMA_QPS_SQE,
    RDMA_QPS_ERR,
    RDMA_QPS_MAX,
} RdmaQpState;

typedef enum RdmaQpType {
    RDMA_QPT_SMI,
    RDMA_QPT_GSI,
    RDMA_QPT_RC,
    RDMA_QPT_UC,
    RDMA_QPT_UD,
} RdmaQpType;

/* QP attribute mask bits, as in the IB verbs (and the guest ABI). */
#define RDMA_QP_STATE               (1u << 0)
#define RDMA_QP_CUR_STATE           (1u << 1)
#define RDMA_QP_EN_SQD_ASYNC_NOTIFY (1u << 2)
#define RDMA_QP_ACCESS_FLAGS        (1u << 3)
#define RDMA_QP_PKEY_INDEX          (1u << 4)
#define RDMA_QP_PORT                (1u << 5)
#define RDMA_QP_QKEY                (1u << 6)
#define RDMA_QP_AV                  (1u << 7)
#define RDMA_QP_PATH_MTU            (1u << 8)
#define RDMA_QP_TIMEOUT             (1u << 9)
#define RDMA_QP_RETRY_CNT           (1u << 10)
#define RDMA_QP_RNR_RETRY           (1u << 11)
#define RDMA_QP_RQ_PSN              (1u << 12)
#define RDMA_QP_MAX_QP_RD_ATOMIC    (1u << 13)
#define RDMA_QP_ALT_PATH            (1u << 14)
#define RDMA_QP_MIN_RNR_TIMER       (1u << 15)
#define RDMA_QP_SQ_PSN              (1u << 16)
#define RDMA_QP_MAX_DEST_RD_ATOMIC  (1u << 17)
#define RDMA_QP_PATH_MIG_STATE      (1u << 18)
#define RDMA_QP_CAP                 (1u << 19)
#define RDMA_QP_DEST_QPN            (1u << 20)
#define RDMA_QP_ATTR_ALL            ((RDMA_QP_DEST_QPN << 1) - 1)

/* Access flags (MRs and QPs) */
#define RDMA_ACCESS_LOCAL_WRITE     (1u << 0)
#define RDMA_ACCESS_REMOTE_WRITE    (1u << 1)
#define RDMA_ACCESS_REMOTE_READ     (1u << 2)
#define RDMA_ACCESS_REMOTE_ATOMIC   (1u << 3)
#define RDMA_ACCESS_MW_BIND         (1u << 4)
#define RDMA_ACCESS_ZERO_BASED      (1u << 5)
#define RDMA_QP_ACCESS_ALL          (RDMA_ACCESS_LOCAL_WRITE | \
                                     RDMA_ACCESS_REMOTE_WRITE | \
                                     RDMA_ACCESS_REMOTE_READ | \
                                     RDMA_ACCESS_REMOTE_ATOMIC)
#define RDMA_MR_ACCESS_ALL          (RDMA_QP_ACCESS_ALL | \
                                     RDMA_ACCESS_MW_BIND | \
                                     RDMA_ACCESS_ZERO_BASED)
/*
 * Hints a device may ignore (IB_ACCESS_HUGETLB, and the "optional" range
 * that starts with IB_ACCESS_RELAXED_ORDERING); user space passes them.
 */
#define RDMA_ACCESS_HUGETLB         (1u << 7)
#define RDMA_ACCESS_OPTIONAL        0x3ff00000u

#define RDMA_GSI_QPN                1
#define RDMA_FIRST_QPN              2   /* 0 is SMI (unused on RoCE) */
#define RDMA_MAX_PSN                0xffffffu
#define RDMA_MAX_QPN                0xffffffu

/* Device limits, fixed at realize from properties and backend limits. */
typedef struct RdmaDevLimits {
    uint64_t max_mr_size;
    uint32_t max_uc;
    uint32_t max_pd;
    uint32_t max_cq;
    uint32_t max_cqe;
    uint32_t max_qp;
    uint32_t max_qp_wr;
    uint32_t max_sge;
    uint32_t max_srq;
    uint32_t max_srq_wr;
    uint32_t max_srq_sge;
    uint32_t max_mr;
    uint32_t max_ah;
    uint32_t max_qp_rd_atom;
    uint32_t max_qp_init_rd_atom;
    uint32_t max_fast_reg_pages;
    uint32_t max_ring_pages;        /* pages of one CQ/QP/SRQ ring */
    uint64_t max_mr_pages_total;    /* host memory bound for page lists */
    uint32_t gid_tbl_len;
    uint16_t max_pkeys;
    uint8_t max_mtu;                /* IB MTU enum (1..5) */
} RdmaDevLimits;

/* The GRH's flow label is 20 bits (IBA 8.3.1; IPv6's, RFC 8200). */
#define RDMA_FLOW_LABEL_MASK    0xfffffu

typedef struct RdmaAh {
    uint8_t dgid[16];
    uint32_t flow_label;            /* at most RDMA_FLOW_LABEL_MASK */
    uint8_t sgid_index;
    uint8_t hop_limit;
    uint8_t traffic_class;
    uint8_t sl;
    uint8_t port_num;
    uint8_t dmac[6];
    uint16_t vlan_id;
    bool has_grh;
} RdmaAh;

/* The modifiable QP attributes, as stored and as QUERY_QP reports them. */
typedef struct RdmaQpAttr {
    RdmaQpState qp_state;
    RdmaQpState cur_qp_state;
    uint8_t path_mtu;
    uint8_t path_mig_state;
    uint32_t qkey;
    uint32_t rq_psn;
    uint32_t sq_psn;
    uint32_t dest_qp_num;
    uint32_t qp_access_flags;
    uint16_t pkey_index;
    bool en_sqd_async_notify;
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint8_t min_rnr_timer;
    uint8_t port_num;
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    RdmaAh ah;
} RdmaQpAttr;

typedef struct RdmaQpCap {
    uint32_t max_send_wr;           /* ring sizes, powers of two */
    uint32_t max_recv_wr;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_inline_data;
} RdmaQpCap;

typedef struct RdmaUc {
    uint32_t handle;
    uint32_t uar_index;             /* the UAR page the context rings */
    uint32_t refs;
} RdmaUc;

typedef struct RdmaPd {
    uint32_t handle;
    uint32_t ctx_handle;            /* 0: guest kernel */
    uint32_t refs;
    void *be;
} RdmaPd;

typedef struct RdmaCq {
    uint32_t handle;
    uint32_t ctx_handle;
    uint32_t cqe;                   /* ring entries, power of two */
    RdmaPageList ring;              /* page 0 holds the ring state */
    bool armed;
    bool armed_solicited;
    bool overrun;                   /* CQ error: no more completions */
    uint32_t refs;
    void *be;                       /* backend object */
} RdmaCq;

typedef struct RdmaSrq {
    uint32_t handle;
    uint32_t pd_handle;
    uint32_t max_wr;                /* power of two */
    uint32_t max_sge;
    uint32_t srq_limit;             /* armed while non-zero */
    uint32_t wqe_size;
    RdmaPageList ring;              /* page 0 holds the ring state */
    uint32_t refs;
    void *be;
} RdmaSrq;

typedef struct RdmaQp {
    uint32_t handle;
    uint32_t qpn;
    RdmaQpType type;
    uint32_t pd_handle;
    uint32_t send_cq_handle;
    uint32_t recv_cq_handle;
    uint32_t srq_handle;
    bool is_srq;
    bool sq_sig_all;
    RdmaQpCap cap;
    uint32_t send_pages;            /* pages of the send ring */
    uint32_t send_wqe_size;
    uint32_t recv_wqe_size;
    RdmaPageList ring;              /* state page, send pages, recv pages */
    RdmaQpAttr attr;
    bool sq_stalled;                /* backend holds a WR (RNR wait) */
    /* send queue has unprocessed work: on RdmaResources.sq_work */
    bool sq_pending;
    QTAILQ_ENTRY(RdmaQp) sq_next;   /* not migrated: sq_pending says */
    void *be;
} RdmaQp;

typedef enum RdmaMrKind {
    RDMA_MR_USER,                   /* pages listed by the guest */
    RDMA_MR_DMA,                    /* all of guest memory */
    RDMA_MR_FRMR,                   /* filled by a fast-register WR */
} RdmaMrKind;

typedef struct RdmaMr {
    uint32_t handle;
    uint32_t pd_handle;
    RdmaMrKind kind;
    uint32_t access;
    uint64_t iova;
    uint64_t length;
    uint32_t lkey;
    uint32_t rkey;
    uint32_t max_pages;             /* FRMR page-list capacity */
    bool frmr_valid;                /* FRMR: registered, not invalidated */
    RdmaPageList pages;
    /*
     * Which MR of its handle this is: a number no other MR of this device
     * had, so a page list sent before the switch-over is known to be this
     * MR's (rdma_rm_vmstate.c).  Not migrated: the destination numbers
     * the MRs it restores itself.
     */
    uint64_t serial;
    void *be;
} RdmaMr;

typedef struct RdmaGid {
    bool valid;
    uint8_t gid[16];
    uint8_t type;                   /* front-end GID type flag */
    uint32_t mtu;
    uint32_t vlan;
} RdmaGid;

typedef struct RdmaTable {
    void **slots;
    uint32_t size;                  /* handles are 0 .. size - 1 */
    uint32_t first;                 /* lowest handle handed out */
    uint32_t used;
} RdmaTable;

/*
 * What the core and the backend need from the front-end: guest receive
 * queues, completion queues and events live in guest memory in a layout
 * only the front-end knows.
 */
typedef struct RdmaFrontOps {
    /*
     * Take the next receive WR of @qp (its RQ, or its SRQ): 0, -EAGAIN
     * when none is posted, -EIO when the WQE was bad (it is consumed).
     */
    int (*next_recv)(void *opaque, RdmaQp *qp, RdmaRecvWr *wr);
    /* The same for an SRQ, without a QP (a bad WQE is logged only). */
    int (*next_srq_recv)(void *opaque, RdmaSrq *srq, RdmaRecvWr *wr);
    /* Post @wc of @qp on CQ @cq_handle. */
    void (*complete)(void *opaque, RdmaQp *qp, uint32_t cq_handle,
                     const RdmaWc *wc, bool solicited);
    void (*event)(void *opaque, RdmaEvent ev, uint32_t handle);
    /* @qp went to ERR (flush both rings) or SQE (flush the send ring). */
    void (*qp_flush)(void *opaque, RdmaQp *qp);
    /* @qp can send again (RTS reached, stall resolved). */
    void (*kick_send)(void *opaque, RdmaQp *qp);
    /*
     * Run what rdma_rm_defer() put off (a reset or an unplug that arrived
     * while the device was inside an entry point), as the outermost entry
     * point leaves.
     */
    void (*deferred)(void *opaque);
    /*
     * Migration: do the rings of @obj (an RdmaCq, RdmaQp or RdmaSrq, as
     * @type says) fit its pages in the front-end's layout?  An incoming
     * object is checked as its creation command was.
     */
    bool (*rings_ok)(void *opaque, RdmaResType type, const void *obj);
} RdmaFrontOps;

/*
 * The objects as records while the device state is saved or loaded
 * (rdma_rm_vmstate.c): arrays of copies, each with its handle.  Empty
 * otherwise.
 */
typedef struct RdmaRmMigration {
    bool incoming;                  /* a load, not a save, uses the arrays */
    RdmaDevLimits limits;           /* the source's, must equal ours */
    int32_t n[RDMA_RES_MAX];
    /*
     * Objects whose records the live section sent and that have not
     * changed since: per type how many, then all their handles in type
     * order.  Loaded, they take their place after the n[] records.
     */
    int32_t nstaged[RDMA_RES_MAX];
    uint32_t nstaged_all;
    uint32_t *staged;
    RdmaUc *uc;
    RdmaPd *pd;
    RdmaCq *cq;
    RdmaSrq *srq;
    RdmaMr *mr;
    RdmaQp *qp;
    RdmaGid *gids;
} RdmaRmMigration;

/* A user MR's page list, received before the switch-over */
typedef struct RdmaMigStaged {
    uint64_t serial;                /* the source's MR serial; 0: none */
    RdmaPageList pages;             /* the runs as the stream carried them */
} RdmaMigStaged;

/*
 * The live part of migration (rdma_rm_vmstate.c): user MR page lists,
 * which do not change while their MR exists, cross the channel before the
 * switch-over.  Empty outside a migration.
 */
typedef struct RdmaRmLive {
    uint64_t *sent;                 /* source: serial sent, per MR handle */
    RdmaMigStaged *staged;          /* destination: per MR handle */
    uint64_t staged_pages;          /* destination: over all staged lists */
    /*
     * Every object's record, sent before the switch-over too (the live
     * section): per type and handle, on the source a copy of the record
     * as it was sent, on the destination the record as it came.
     */
    void **sent_rec[RDMA_RES_MAX];
    void **staged_rec[RDMA_RES_MAX];
} RdmaRmLive;

typedef struct RdmaResources {
    const RdmaFrontOps *fe;
    void *fe_opaque;
    RdmaDevLimits limits;
    RdmaTable tables[RDMA_RES_MAX];
    RdmaGid *gids;
    uint64_t mr_pages_total;
    /*
     * The key generation of each MR slot (rdma_mr_key()): kept over a
     * reset, so that no key from before it is valid after it.
     */
    uint8_t *mr_gen;
    RdmaBackend *backend;
    PCIDevice *pdev;
    /* Entry points (rdma_rm_enter) */
    uint32_t depth;                 /* nesting of entry points */
    bool guard_saved;               /* the guard as the outermost found it */
    bool deferred;                  /* fe->deferred() is due at leave */
    uint32_t budget_wqes;           /* work left to this entry point */
    uint64_t budget_bytes;
    uint64_t entry_bytes;           /* charged in this entry point */
    uint64_t entry_bytes_max;       /* the most one entry point charged */
    /*
     * A load of the device's state began and did not complete: what is
     * there is partly the stream's, never checked.  Every entry point
     * refuses until a load completes or the device is reset.
     */
    bool loading;
    /*
     * QPs whose send queue has work the front-end has not taken yet, in
     * the order they got it (rdma_rm_sq_mark()): one list, not a walk over
     * every QP slot for each doorbell, which with ten thousand QPs cost
     * more than the work.
     */
    QTAILQ_HEAD(, RdmaQp) sq_work;
    RdmaRmMigration mig;
    uint64_t mr_serial;             /* the last RdmaMr.serial given */
    RdmaRmLive live;
} RdmaResources;

/* Creation requests, parsed from the guest's command by the front-end. */
typedef struct RdmaCqReq {
    uint32_t ctx_handle;
    uint32_t cqe;
    uint32_t cqe_size;              /* front-end completion entry size */
    dma_addr_t pdir;
    uint32_t nchunks;
} RdmaCqReq;

typedef struct RdmaQpReq {
    RdmaQpType type;
    uint32_t pd_handle;
    uint32_t send_cq_handle;
    uint32_t recv_cq_handle;
    uint32_t srq_handle;
    bool is_srq;
    bool sq_sig_all;
    uint32_t access_flags;
    uint32_t max_send_wr;
    uint32_t max_recv_wr;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_inline_data;
    uint32_t send_wqe_hdr;          /* front-end WQE header sizes */
    uint32_t recv_wqe_hdr;
    uint32_t sge_size;
    uint32_t total_chunks;          /* state page + send + recv pages */
    uint32_t send_chunks;
    dma_addr_t pdir;
} RdmaQpReq;

typedef struct RdmaSrqReq {
    uint32_t pd_handle;
    uint32_t max_wr;
    uint32_t max_sge;
    uint32_t srq_limit;
    uint32_t srq_type;
    uint32_t wqe_hdr;
    uint32_t sge_size;
    uint32_t nchunks;
    dma_addr_t pdir;
} RdmaSrqReq;

typedef struct RdmaMrReq {
    uint32_t pd_handle;
    RdmaMrKind kind;
    uint32_t access;
    uint64_t start;
    uint64_t length;
    uint32_t nchunks;
    dma_addr_t pdir;
} RdmaMrReq;

/*
 * Errors are negative errno values; each failure is logged as a guest error
 * by the core with the reason, so callers only turn them into a status.
 */
void rdma_rm_sq_mark(RdmaResources *rm, RdmaQp *qp);
void rdma_rm_sq_unmark(RdmaResources *rm, RdmaQp *qp);
RdmaQp *rdma_rm_sq_first(RdmaResources *rm);
bool rdma_rm_init(RdmaResources *rm, PCIDevice *pdev, RdmaBackend *be,
                  const RdmaDevLimits *limits, const RdmaFrontOps *fe,
                  void *fe_opaque, Error **errp);
void rdma_rm_fini(RdmaResources *rm);
/* Destroy every object, in dependency order (device reset). */
void rdma_rm_reset(RdmaResources *rm);

void *rdma_rm_get(RdmaResources *rm, RdmaResType type, uint32_t handle);

int rdma_rm_alloc_uc(RdmaResources *rm, uint32_t uar_index, uint32_t *handle);
int rdma_rm_dealloc_uc(RdmaResources *rm, uint32_t handle);
int rdma_rm_alloc_pd(RdmaResources *rm, uint32_t ctx_handle,
                     uint32_t *handle);
int rdma_rm_dealloc_pd(RdmaResources *rm, uint32_t handle);
int rdma_rm_create_cq(RdmaResources *rm, const RdmaCqReq *req,
                      RdmaCq **out);
int rdma_rm_destroy_cq(RdmaResources *rm, uint32_t handle);
int rdma_rm_create_qp(RdmaResources *rm, const RdmaQpReq *req, RdmaQp **out);
int rdma_rm_modify_qp(RdmaResources *rm, uint32_t handle, uint32_t mask,
                      const RdmaQpAttr *attr);
int rdma_rm_query_qp(RdmaResources *rm, uint32_t handle, RdmaQpAttr *attr,
                     RdmaQpCap *cap);
int rdma_rm_destroy_qp(RdmaResources *rm, uint32_t handle);
int rdma_rm_create_srq(RdmaResources *rm, const RdmaSrqReq *req,
                       RdmaSrq **out);
int rdma_rm_modify_srq(RdmaResources *rm, uint32_t handle, uint32_t mask,
                       uint32_t max_wr, uint32_t srq_limit);
int rdma_rm_destroy_srq(RdmaResources *rm, uint32_t handle);
int rdma_rm_create_mr(RdmaResources *rm, const RdmaMrReq *req, RdmaMr **out);
int rdma_rm_destroy_mr(RdmaResources *rm, uint32_t handle);
int rdma_rm_add_gid(RdmaResources *rm, uint32_t index, const uint8_t *gid,
                    uint8_t type, uint32_t mtu, uint32_t vlan);
int rdma_rm_del_gid(RdmaResources *rm, uint32_t index, const uint8_t *gid);

/* Move @qp to ERR (a transport error): flush it and raise @ev. */
void rdma_rm_qp_error(RdmaResources *rm, RdmaQp *qp, RdmaEvent ev);
/* A send failed: RC QPs go to ERR, UD and GSI QPs to SQE. */
void rdma_rm_qp_send_error(RdmaResources *rm, RdmaQp *qp, RdmaEvent ev);
/* The QP whose number is @qpn, or NULL. */
RdmaQp *rdma_rm_qp_by_num(RdmaResources *rm, uint32_t qpn);
/* The MR whose lkey (or rkey) is @key, or NULL. */
RdmaMr *rdma_rm_mr_by_key(RdmaResources *rm, uint32_t key);
/* Is @gid in the device's GID table? */
bool rdma_rm_gid_is_local(RdmaResources *rm, const uint8_t *gid);

/*
 * Entry points.  Every way into the device (MMIO, bottom halves, the
 * ibverbs completion thread once it holds the BQL, fd and chardev
 * handlers) runs between rdma_rm_enter() and rdma_rm_leave():
 *  - the device's memory re-entrancy guard is engaged throughout, so a
 *    write the device makes itself (an MSI-X message, DMA) that lands on
 *    one of its own BARs is dropped by the memory core, never dispatched
 *    into the device;
 *  - a reset or an unplug that reaches the device some other way while it
 *    is inside (a bridge's Secondary Bus Reset or a slot power-off written
 *    through MMCFG by that same MSI-X message or DMA) calls
 *    rdma_rm_defer() and is carried out by fe->deferred() when the
 *    outermost entry point leaves, so no object is freed under a caller;
 *  - the work done is bounded for the whole device (RDMA_ENTRY_WQES work
 *    requests, RDMA_ENTRY_BYTES bytes); what is left goes to a bottom
 *    half, which is an entry point with a budget of its own.
 * rdma_rm_enter() returns false once the device is being unplugged; the
 * caller then does nothing.
 */
#define RDMA_ENTRY_WQES     64
#define RDMA_ENTRY_BYTES    (4ull << 20)
bool rdma_rm_enter(RdmaResources *rm);
void rdma_rm_leave(RdmaResources *rm);
/* Inside an entry point: note fe->deferred() as due and return true. */
bool rdma_rm_defer(RdmaResources *rm);
/* A reset or unplug is due: data-path loops stop early. */
bool rdma_rm_stopping(RdmaResources *rm);
/* Is there budget left for one more work request? */
bool rdma_rm_budget_left(RdmaResources *rm);
/* Charge one work request of @bytes to the entry point's budget. */
void rdma_rm_budget_charge(RdmaResources *rm, uint64_t bytes);

/*
 * Migration.  vmstate_rdma_rm carries every object, the GID table and the
 * counters; loading it replaces whatever the device held.
 * rdma_rm_restore() rebuilds one object from its record (@rec, an RdmaUc,
 * RdmaPd, ... as @type says) under its own handle, after the checks its
 * creation passed; it takes over the record's page list.  Returns NULL,
 * or why the record was refused.
 */
extern const VMStateDescription vmstate_rdma_rm;
/* An enum field (4 bytes in the stream); the stream's value is checked. */
#define VMSTATE_RDMA_ENUM(_field, _state) {                                 \
    .name = (stringify(_field)),                                            \
    .size = sizeof(uint32_t),                                               \
    .info = &vmstate_info_uint32,                                           \
    .flags = VMS_SINGLE,                                                    \
    .offset = offsetof(_state, _field) +                                    \
              QEMU_BUILD_BUG_ON_ZERO(sizeof_field(_state, _field) != 4),    \
}
const char *rdma_rm_type_name(RdmaResType type);
/*
 * pre_load of a record type: the fields not in the stream are zero, never
 * the heap garbage of an array VMS_ALLOC made (rdma_mig_zero_<type>).
 */
#define RDMA_MIG_ZERO(type)                                                 \
    static int rdma_mig_zero_##type(void *opaque)                           \
    {                                                                       \
        memset(opaque, 0, sizeof(type));                                    \
        return 0;                                                           \
    }
extern const VMStateDescription vmstate_rdma_page_list;
/*
 * Turn a page list loaded from a stream into its pages, if it has at most
 * @max (else false, with the reason in *@why).
 */
bool rdma_mig_expand_pages(RdmaPageList *l, uint32_t max, const char **why);
/* Free the records a load that failed left behind (also at teardown). */
void rdma_rm_mig_cleanup(RdmaResources *rm);
/* The live migration section of the device's MR page lists */
void rdma_rm_mig_live_init(RdmaResources *rm);
void rdma_rm_mig_live_unregister(RdmaResources *rm);
void rdma_rm_mig_live_fini(RdmaResources *rm);
const char *rdma_rm_restore(RdmaResources *rm, RdmaResType type, void *rec);
const char *rdma_rm_restore_gids(RdmaResources *rm, const RdmaGid *gids);

/* The IB state machine: is @mask a legal modify from @cur to @next? */
bool rdma_qp_transition_ok(RdmaQpType type, RdmaQpState cur,
                           RdmaQpState next, uint32_t mask);

#endif
