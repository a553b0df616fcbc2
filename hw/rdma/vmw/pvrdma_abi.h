/*
 * VMware paravirtual RDMA device: the guest ABI.
 *
 * Everything the unmodified guest (Linux vmw_pvrdma driver and rdma-core's
 * libvmw_pvrdma provider) places in guest memory or writes to the device's
 * BARs.  Written from the facts of the Linux driver's pvrdma_dev_api.h,
 * pvrdma_verbs.h, pvrdma_ring.h and the uAPI header vmw_pvrdma-abi.h; every
 * structure is checked field by field against those headers by
 * tests/abi/pvrdma-abi-check.c.
 *
 * All multi-byte fields are little-endian in guest memory, except those
 * marked big-endian (GIDs, GUIDs, the immediate data), which the device
 * passes through as bytes.  The structures here are guest layouts only:
 * the front-end converts every field where it crosses into or out of the
 * device (le32_to_cpu() as it reads, cpu_to_le32() as it writes), so the
 * device works on hosts of either byte order, and the core and backends
 * see host-order values only.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_VMW_PVRDMA_ABI_H
#define HW_RDMA_VMW_PVRDMA_ABI_H

/* PCI identity (function 1 of a slot whose function 0 is a vmxnet3). */
#define PVRDMA_PCI_VENDOR_ID_VMWARE     0x15ad
#define PVRDMA_PCI_DEVICE_ID            0x0820
#define PVRDMA_PCI_VMXNET3_DEVICE_ID    0x07b0

/* Device versions, as read from the VERSION register. */
#define PVRDMA_VERSION_ROCEV1           17
#define PVRDMA_VERSION_ROCEV2           18
#define PVRDMA_VERSION_PPN64            19  /* 64-bit UAR page numbers */
#define PVRDMA_VERSION_QPHANDLE         20  /* QP handle != QP number */

#define PVRDMA_BOARD_ID                 1
#define PVRDMA_REV_ID                   1

/* BARs */
#define PVRDMA_BAR_MSIX                 0
#define PVRDMA_BAR_REGS                 1
#define PVRDMA_BAR_UAR                  2
#define PVRDMA_MSIX_VECTORS             3   /* response, async, CQ */
#define PVRDMA_VECTOR_RESPONSE          0
#define PVRDMA_VECTOR_ASYNC             1
#define PVRDMA_VECTOR_CQ                2

/* BAR1 registers, 32 bits each. */
#define PVRDMA_REG_VERSION              0x00
#define PVRDMA_REG_DSRLOW               0x04
#define PVRDMA_REG_DSRHIGH              0x08
#define PVRDMA_REG_CTL                  0x0c
#define PVRDMA_REG_REQUEST              0x10
#define PVRDMA_REG_ERR                  0x14
#define PVRDMA_REG_ICR                  0x18
#define PVRDMA_REG_IMR                  0x1c
#define PVRDMA_REG_MACL                 0x20
#define PVRDMA_REG_MACH                 0x24

/* CTL register values */
#define PVRDMA_CTL_ACTIVATE             0
#define PVRDMA_CTL_UNQUIESCE            1
#define PVRDMA_CTL_RESET                2

/* ICR/IMR bits: one per vector */
#define PVRDMA_INTR_CAUSE_RESPONSE      (1u << PVRDMA_VECTOR_RESPONSE)
#define PVRDMA_INTR_CAUSE_ASYNC         (1u << PVRDMA_VECTOR_ASYNC)
#define PVRDMA_INTR_CAUSE_CQ            (1u << PVRDMA_VECTOR_CQ)

/* UAR doorbells (offsets within a 4 KiB UAR page) */
#define PVRDMA_UAR_PAGE_SIZE            4096
#define PVRDMA_UAR_HANDLE_MASK          0x00ffffffu
#define PVRDMA_UAR_QP_OFFSET            0
#define PVRDMA_UAR_QP_SEND              (1u << 30)
#define PVRDMA_UAR_QP_RECV              (1u << 31)
#define PVRDMA_UAR_CQ_OFFSET            4
#define PVRDMA_UAR_CQ_ARM_SOL           (1u << 29)
#define PVRDMA_UAR_CQ_ARM               (1u << 30)
#define PVRDMA_UAR_CQ_POLL              (1u << 31)
#define PVRDMA_UAR_SRQ_OFFSET           8
#define PVRDMA_UAR_SRQ_RECV             (1u << 30)

/*
 * Page directories: a directory page of 512 table addresses, each table a
 * page of 512 page addresses.  The guest only ever uses one directory.
 */
#define PVRDMA_PAGE_SIZE                4096
#define PVRDMA_PDIR_ENTRIES             512
#define PVRDMA_PAGE_DIR_MAX_PAGES       (PVRDMA_PDIR_ENTRIES * \
                                         PVRDMA_PDIR_ENTRIES)
#define PVRDMA_MAX_FAST_REG_PAGES       128

/* Capability values */
#define PVRDMA_DEVICE_MODE_ROCE         0
#define PVRDMA_GID_TYPE_FLAG_ROCE_V1    (1u << 0)
#define PVRDMA_GID_TYPE_FLAG_ROCE_V2    (1u << 1)
#define PVRDMA_ATOMIC_OP_COMP_SWAP      (1u << 0)
#define PVRDMA_ATOMIC_OP_FETCH_ADD      (1u << 1)
#define PVRDMA_ATOMIC_OP_MASK_COMP_SWAP (1u << 2)
#define PVRDMA_ATOMIC_OP_MASK_FETCH_ADD (1u << 3)
#define PVRDMA_BMME_FLAG_LOCAL_INV      (1u << 0)
#define PVRDMA_BMME_FLAG_REMOTE_INV     (1u << 1)
#define PVRDMA_BMME_FLAG_FAST_REG_WR    (1u << 2)

/* Object flags */
#define PVRDMA_MR_FLAG_DMA              (1u << 0)
#define PVRDMA_MR_FLAG_FRMR             (1u << 1)

/* Port attributes */
#define PVRDMA_PORT_DOWN                1
#define PVRDMA_PORT_ACTIVE              4
#define PVRDMA_MTU_256                  1
#define PVRDMA_MTU_1024                 3
#define PVRDMA_MTU_4096                 5
#define PVRDMA_WIDTH_4X                 2
#define PVRDMA_SPEED_EDR                32
#define PVRDMA_PORT_CM_SUP              (1u << 16)
#define PVRDMA_PORT_IP_BASED_GIDS       (1u << 26)
#define PVRDMA_PHYS_STATE_LINK_UP       5
#define PVRDMA_PHYS_STATE_DISABLED      3

/* Access flags (MR and QP) */
#define PVRDMA_ACCESS_LOCAL_WRITE       (1u << 0)
#define PVRDMA_ACCESS_REMOTE_WRITE      (1u << 1)
#define PVRDMA_ACCESS_REMOTE_READ       (1u << 2)
#define PVRDMA_ACCESS_REMOTE_ATOMIC     (1u << 3)
#define PVRDMA_ACCESS_MW_BIND           (1u << 4)
#define PVRDMA_ZERO_BASED               (1u << 5)
#define PVRDMA_ACCESS_ON_DEMAND         (1u << 6)

/* QP types, states, attribute mask bits */
enum {
    PVRDMA_QPT_SMI,
    PVRDMA_QPT_GSI,
    PVRDMA_QPT_RC,
    PVRDMA_QPT_UC,
    PVRDMA_QPT_UD,
};

enum {
    PVRDMA_QPS_RESET,
    PVRDMA_QPS_INIT,
    PVRDMA_QPS_RTR,
    PVRDMA_QPS_RTS,
    PVRDMA_QPS_SQD,
    PVRDMA_QPS_SQE,
    PVRDMA_QPS_ERR,
    PVRDMA_QPS_MAX,
};

#define PVRDMA_QP_STATE                 (1u << 0)
#define PVRDMA_QP_CUR_STATE             (1u << 1)
#define PVRDMA_QP_EN_SQD_ASYNC_NOTIFY   (1u << 2)
#define PVRDMA_QP_ACCESS_FLAGS          (1u << 3)
#define PVRDMA_QP_PKEY_INDEX            (1u << 4)
#define PVRDMA_QP_PORT                  (1u << 5)
#define PVRDMA_QP_QKEY                  (1u << 6)
#define PVRDMA_QP_AV                    (1u << 7)
#define PVRDMA_QP_PATH_MTU              (1u << 8)
#define PVRDMA_QP_TIMEOUT               (1u << 9)
#define PVRDMA_QP_RETRY_CNT             (1u << 10)
#define PVRDMA_QP_RNR_RETRY             (1u << 11)
#define PVRDMA_QP_RQ_PSN                (1u << 12)
#define PVRDMA_QP_MAX_QP_RD_ATOMIC      (1u << 13)
#define PVRDMA_QP_ALT_PATH              (1u << 14)
#define PVRDMA_QP_MIN_RNR_TIMER         (1u << 15)
#define PVRDMA_QP_SQ_PSN                (1u << 16)
#define PVRDMA_QP_MAX_DEST_RD_ATOMIC    (1u << 17)
#define PVRDMA_QP_PATH_MIG_STATE        (1u << 18)
#define PVRDMA_QP_CAP                   (1u << 19)
#define PVRDMA_QP_DEST_QPN              (1u << 20)
#define PVRDMA_QP_ATTR_MASK_ALL         ((PVRDMA_QP_DEST_QPN << 1) - 1)

/* SRQ attribute mask bits (IB_SRQ_MAX_WR, IB_SRQ_LIMIT) */
#define PVRDMA_SRQ_MAX_WR               (1u << 0)
#define PVRDMA_SRQ_LIMIT                (1u << 1)

/* Async event types (1:1 with the IB event numbers) */
enum {
    PVRDMA_EVENT_CQ_ERR,
    PVRDMA_EVENT_QP_FATAL,
    PVRDMA_EVENT_QP_REQ_ERR,
    PVRDMA_EVENT_QP_ACCESS_ERR,
    PVRDMA_EVENT_COMM_EST,
    PVRDMA_EVENT_SQ_DRAINED,
    PVRDMA_EVENT_PATH_MIG,
    PVRDMA_EVENT_PATH_MIG_ERR,
    PVRDMA_EVENT_DEVICE_FATAL,
    PVRDMA_EVENT_PORT_ACTIVE,
    PVRDMA_EVENT_PORT_ERR,
    PVRDMA_EVENT_LID_CHANGE,
    PVRDMA_EVENT_PKEY_CHANGE,
    PVRDMA_EVENT_SM_CHANGE,
    PVRDMA_EVENT_SRQ_ERR,
    PVRDMA_EVENT_SRQ_LIMIT_REACHED,
    PVRDMA_EVENT_QP_LAST_WQE_REACHED,
    PVRDMA_EVENT_CLIENT_REREGISTER,
    PVRDMA_EVENT_GID_CHANGE,
};

/* Commands and their response codes */
enum {
    PVRDMA_CMD_QUERY_PORT,
    PVRDMA_CMD_QUERY_PKEY,
    PVRDMA_CMD_CREATE_PD,
    PVRDMA_CMD_DESTROY_PD,
    PVRDMA_CMD_CREATE_MR,
    PVRDMA_CMD_DESTROY_MR,
    PVRDMA_CMD_CREATE_CQ,
    PVRDMA_CMD_RESIZE_CQ,
    PVRDMA_CMD_DESTROY_CQ,
    PVRDMA_CMD_CREATE_QP,
    PVRDMA_CMD_MODIFY_QP,
    PVRDMA_CMD_QUERY_QP,
    PVRDMA_CMD_DESTROY_QP,
    PVRDMA_CMD_CREATE_UC,
    PVRDMA_CMD_DESTROY_UC,
    PVRDMA_CMD_CREATE_BIND,
    PVRDMA_CMD_DESTROY_BIND,
    PVRDMA_CMD_CREATE_SRQ,
    PVRDMA_CMD_MODIFY_SRQ,
    PVRDMA_CMD_QUERY_SRQ,
    PVRDMA_CMD_DESTROY_SRQ,
    PVRDMA_CMD_MAX,
};
#define PVRDMA_CMD_RESP(cmd)            ((uint32_t)(cmd) | 0x80000000u)

/* Ring indices: both wrap at 2 * max_elems, the extra bit is a generation. */
typedef struct PvrdmaRing {
    uint32_t prod_tail;
    uint32_t cons_head;
} PvrdmaRing;

typedef struct PvrdmaRingState {
    PvrdmaRing tx;
    PvrdmaRing rx;
} PvrdmaRingState;

typedef union PvrdmaGid {
    uint8_t raw[16];
    struct {
        uint64_t subnet_prefix;     /* big-endian */
        uint64_t interface_id;      /* big-endian */
    } global;
} PvrdmaGid;

typedef struct PvrdmaRingPageInfo {
    uint32_t num_pages;             /* including the ring-state page */
    uint32_t reserved;
    uint64_t pdir_dma;
} PvrdmaRingPageInfo;

typedef struct PvrdmaDeviceCaps {
    uint64_t fw_ver;
    uint64_t node_guid;             /* big-endian */
    uint64_t sys_image_guid;        /* big-endian */
    uint64_t max_mr_size;
    uint64_t page_size_cap;
    uint64_t atomic_arg_sizes;
    uint32_t ex_comp_mask;
    uint32_t device_cap_flags2;
    uint32_t max_fa_bit_boundary;
    uint32_t log_max_atomic_inline_arg;
    uint32_t vendor_id;
    uint32_t vendor_part_id;
    uint32_t hw_ver;
    uint32_t max_qp;
    uint32_t max_qp_wr;
    uint32_t device_cap_flags;
    uint32_t max_sge;
    uint32_t max_sge_rd;
    uint32_t max_cq;
    uint32_t max_cqe;
    uint32_t max_mr;
    uint32_t max_pd;
    uint32_t max_qp_rd_atom;
    uint32_t max_ee_rd_atom;
    uint32_t max_res_rd_atom;
    uint32_t max_qp_init_rd_atom;
    uint32_t max_ee_init_rd_atom;
    uint32_t max_ee;
    uint32_t max_rdd;
    uint32_t max_mw;
    uint32_t max_raw_ipv6_qp;
    uint32_t max_raw_ethy_qp;
    uint32_t max_mcast_grp;
    uint32_t max_mcast_qp_attach;
    uint32_t max_total_mcast_qp_attach;
    uint32_t max_ah;
    uint32_t max_fmr;
    uint32_t max_map_per_fmr;
    uint32_t max_srq;
    uint32_t max_srq_wr;
    uint32_t max_srq_sge;
    uint32_t max_uar;
    uint32_t gid_tbl_len;
    uint16_t max_pkeys;
    uint8_t local_ca_ack_delay;
    uint8_t phys_port_cnt;
    uint8_t mode;
    uint8_t atomic_ops;
    uint8_t bmme_flags;
    uint8_t gid_types;
    uint32_t max_fast_reg_page_list_len;
} PvrdmaDeviceCaps;

/*
 * The device shared region (DSR), placed by the driver in guest memory;
 * packed in the driver, so caps start at offset 72.
 */
typedef struct QEMU_PACKED PvrdmaDsr {
    uint32_t driver_version;
    uint32_t pad;
    uint32_t gos_info;              /* bits:2 type:4 ver:16 misc:10 */
    uint32_t gos_pad;
    uint64_t cmd_slot_dma;
    uint64_t resp_slot_dma;
    PvrdmaRingPageInfo async_ring_pages;
    PvrdmaRingPageInfo cq_ring_pages;
    union {
        uint32_t uar_pfn;           /* drivers before version 19 */
        uint64_t uar_pfn64;
    };
    PvrdmaDeviceCaps caps;
} PvrdmaDsr;

typedef struct PvrdmaEqe {
    uint32_t type;
    uint32_t info;                  /* object handle or port number */
} PvrdmaEqe;

typedef struct PvrdmaCqne {
    uint32_t info;                  /* CQ handle */
} PvrdmaCqne;

typedef struct PvrdmaPortAttr {
    uint32_t state;
    uint32_t max_mtu;
    uint32_t active_mtu;
    uint32_t gid_tbl_len;
    uint32_t port_cap_flags;
    uint32_t max_msg_sz;
    uint32_t bad_pkey_cntr;
    uint32_t qkey_viol_cntr;
    uint16_t pkey_tbl_len;
    uint16_t lid;
    uint16_t sm_lid;
    uint8_t lmc;
    uint8_t max_vl_num;
    uint8_t sm_sl;
    uint8_t subnet_timeout;
    uint8_t init_type_reply;
    uint8_t active_width;
    uint8_t active_speed;
    uint8_t phys_state;
    uint8_t reserved[2];
} PvrdmaPortAttr;

typedef struct PvrdmaGlobalRoute {
    PvrdmaGid dgid;
    uint32_t flow_label;
    uint8_t sgid_index;
    uint8_t hop_limit;
    uint8_t traffic_class;
    uint8_t reserved;
} PvrdmaGlobalRoute;

typedef struct PvrdmaAhAttr {
    PvrdmaGlobalRoute grh;
    uint16_t dlid;
    uint16_t vlan_id;
    uint8_t sl;
    uint8_t src_path_bits;
    uint8_t static_rate;
    uint8_t ah_flags;
    uint8_t port_num;
    uint8_t dmac[6];
    uint8_t reserved;
} PvrdmaAhAttr;

typedef struct PvrdmaQpCap {
    uint32_t max_send_wr;
    uint32_t max_recv_wr;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_inline_data;
    uint32_t reserved;
} PvrdmaQpCap;

typedef struct PvrdmaSrqAttr {
    uint32_t max_wr;
    uint32_t max_sge;
    uint32_t srq_limit;
    uint32_t reserved;
} PvrdmaSrqAttr;

typedef struct PvrdmaQpAttr {
    uint32_t qp_state;
    uint32_t cur_qp_state;
    uint32_t path_mtu;
    uint32_t path_mig_state;
    uint32_t qkey;
    uint32_t rq_psn;
    uint32_t sq_psn;
    uint32_t dest_qp_num;
    uint32_t qp_access_flags;
    uint16_t pkey_index;
    uint16_t alt_pkey_index;
    uint8_t en_sqd_async_notify;
    uint8_t sq_draining;
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint8_t min_rnr_timer;
    uint8_t port_num;
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t alt_port_num;
    uint8_t alt_timeout;
    uint8_t reserved[5];
    PvrdmaQpCap cap;
    PvrdmaAhAttr ah_attr;
    PvrdmaAhAttr alt_ah_attr;
} PvrdmaQpAttr;

/* Command channel */
typedef struct PvrdmaCmdHdr {
    uint64_t response;              /* cookie echoed in the response */
    uint32_t cmd;
    uint32_t reserved;
} PvrdmaCmdHdr;

typedef struct PvrdmaCmdRespHdr {
    uint64_t response;
    uint32_t ack;
    uint8_t err;
    uint8_t reserved[3];
} PvrdmaCmdRespHdr;

typedef struct PvrdmaCmdQueryPort {
    PvrdmaCmdHdr hdr;
    uint8_t port_num;
    uint8_t reserved[7];
} PvrdmaCmdQueryPort;

typedef struct PvrdmaCmdQueryPortResp {
    PvrdmaCmdRespHdr hdr;
    PvrdmaPortAttr attrs;
} PvrdmaCmdQueryPortResp;

typedef struct PvrdmaCmdQueryPkey {
    PvrdmaCmdHdr hdr;
    uint8_t port_num;
    uint8_t index;
    uint8_t reserved[6];
} PvrdmaCmdQueryPkey;

typedef struct PvrdmaCmdQueryPkeyResp {
    PvrdmaCmdRespHdr hdr;
    uint16_t pkey;
    uint8_t reserved[6];
} PvrdmaCmdQueryPkeyResp;

typedef struct PvrdmaCmdCreateUc {
    PvrdmaCmdHdr hdr;
    union {
        uint32_t pfn;
        uint64_t pfn64;
    };
} PvrdmaCmdCreateUc;

typedef struct PvrdmaCmdCreateUcResp {
    PvrdmaCmdRespHdr hdr;
    uint32_t ctx_handle;
    uint8_t reserved[4];
} PvrdmaCmdCreateUcResp;

typedef struct PvrdmaCmdDestroyUc {
    PvrdmaCmdHdr hdr;
    uint32_t ctx_handle;
    uint8_t reserved[4];
} PvrdmaCmdDestroyUc;

typedef struct PvrdmaCmdCreatePd {
    PvrdmaCmdHdr hdr;
    uint32_t ctx_handle;
    uint8_t reserved[4];
} PvrdmaCmdCreatePd;

typedef struct PvrdmaCmdCreatePdResp {
    PvrdmaCmdRespHdr hdr;
    uint32_t pd_handle;
    uint8_t reserved[4];
} PvrdmaCmdCreatePdResp;

typedef struct PvrdmaCmdDestroyPd {
    PvrdmaCmdHdr hdr;
    uint32_t pd_handle;
    uint8_t reserved[4];
} PvrdmaCmdDestroyPd;

typedef struct PvrdmaCmdCreateMr {
    PvrdmaCmdHdr hdr;
    uint64_t start;
    uint64_t length;
    uint64_t pdir_dma;
    uint32_t pd_handle;
    uint32_t access_flags;
    uint32_t flags;
    uint32_t nchunks;
} PvrdmaCmdCreateMr;

typedef struct PvrdmaCmdCreateMrResp {
    PvrdmaCmdRespHdr hdr;
    uint32_t mr_handle;
    uint32_t lkey;
    uint32_t rkey;
    uint8_t reserved[4];
} PvrdmaCmdCreateMrResp;

typedef struct PvrdmaCmdDestroyMr {
    PvrdmaCmdHdr hdr;
    uint32_t mr_handle;
    uint8_t reserved[4];
} PvrdmaCmdDestroyMr;

typedef struct PvrdmaCmdCreateCq {
    PvrdmaCmdHdr hdr;
    uint64_t pdir_dma;
    uint32_t ctx_handle;
    uint32_t cqe;
    uint32_t nchunks;
    uint8_t reserved[4];
} PvrdmaCmdCreateCq;

typedef struct PvrdmaCmdCreateCqResp {
    PvrdmaCmdRespHdr hdr;
    uint32_t cq_handle;
    uint32_t cqe;
} PvrdmaCmdCreateCqResp;

typedef struct PvrdmaCmdResizeCq {
    PvrdmaCmdHdr hdr;
    uint32_t cq_handle;
    uint32_t cqe;
} PvrdmaCmdResizeCq;

typedef struct PvrdmaCmdResizeCqResp {
    PvrdmaCmdRespHdr hdr;
    uint32_t cqe;
    uint8_t reserved[4];
} PvrdmaCmdResizeCqResp;

typedef struct PvrdmaCmdDestroyCq {
    PvrdmaCmdHdr hdr;
    uint32_t cq_handle;
    uint8_t reserved[4];
} PvrdmaCmdDestroyCq;

typedef struct PvrdmaCmdCreateSrq {
    PvrdmaCmdHdr hdr;
    uint64_t pdir_dma;
    uint32_t pd_handle;
    uint32_t nchunks;
    PvrdmaSrqAttr attrs;
    uint8_t srq_type;
    uint8_t reserved[7];
} PvrdmaCmdCreateSrq;

typedef struct PvrdmaCmdCreateSrqResp {
    PvrdmaCmdRespHdr hdr;
    uint32_t srqn;
    uint8_t reserved[4];
} PvrdmaCmdCreateSrqResp;

typedef struct PvrdmaCmdModifySrq {
    PvrdmaCmdHdr hdr;
    uint32_t srq_handle;
    uint32_t attr_mask;
    PvrdmaSrqAttr attrs;
} PvrdmaCmdModifySrq;

typedef struct PvrdmaCmdQuerySrq {
    PvrdmaCmdHdr hdr;
    uint32_t srq_handle;
    uint8_t reserved[4];
} PvrdmaCmdQuerySrq;

typedef struct PvrdmaCmdQuerySrqResp {
    PvrdmaCmdRespHdr hdr;
    PvrdmaSrqAttr attrs;
} PvrdmaCmdQuerySrqResp;

typedef struct PvrdmaCmdDestroySrq {
    PvrdmaCmdHdr hdr;
    uint32_t srq_handle;
    uint8_t reserved[4];
} PvrdmaCmdDestroySrq;

typedef struct PvrdmaCmdCreateQp {
    PvrdmaCmdHdr hdr;
    uint64_t pdir_dma;
    uint32_t pd_handle;
    uint32_t send_cq_handle;
    uint32_t recv_cq_handle;
    uint32_t srq_handle;
    uint32_t max_send_wr;
    uint32_t max_recv_wr;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_inline_data;
    uint32_t lkey;
    uint32_t access_flags;
    uint16_t total_chunks;          /* ring-state page + send + receive */
    uint16_t send_chunks;           /* send pages, without ring state */
    uint16_t max_atomic_arg;
    uint8_t sq_sig_all;
    uint8_t qp_type;
    uint8_t is_srq;
    uint8_t reserved[3];
} PvrdmaCmdCreateQp;

/* Response for drivers older than PVRDMA_VERSION_QPHANDLE */
typedef struct PvrdmaCmdCreateQpResp {
    PvrdmaCmdRespHdr hdr;
    uint32_t qpn;
    uint32_t max_send_wr;
    uint32_t max_recv_wr;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_inline_data;
} PvrdmaCmdCreateQpResp;

typedef struct PvrdmaCmdCreateQpRespV2 {
    PvrdmaCmdRespHdr hdr;
    uint32_t qpn;
    uint32_t qp_handle;
    uint32_t max_send_wr;
    uint32_t max_recv_wr;
    uint32_t max_send_sge;
    uint32_t max_recv_sge;
    uint32_t max_inline_data;
} PvrdmaCmdCreateQpRespV2;

typedef struct PvrdmaCmdModifyQp {
    PvrdmaCmdHdr hdr;
    uint32_t qp_handle;
    uint32_t attr_mask;
    PvrdmaQpAttr attrs;
} PvrdmaCmdModifyQp;

typedef struct PvrdmaCmdQueryQp {
    PvrdmaCmdHdr hdr;
    uint32_t qp_handle;
    uint32_t attr_mask;
} PvrdmaCmdQueryQp;

typedef struct PvrdmaCmdQueryQpResp {
    PvrdmaCmdRespHdr hdr;
    PvrdmaQpAttr attrs;
} PvrdmaCmdQueryQpResp;

typedef struct PvrdmaCmdDestroyQp {
    PvrdmaCmdHdr hdr;
    uint32_t qp_handle;
    uint8_t reserved[4];
} PvrdmaCmdDestroyQp;

typedef struct PvrdmaCmdDestroyQpResp {
    PvrdmaCmdRespHdr hdr;
    uint32_t events_reported;
    uint8_t reserved[4];
} PvrdmaCmdDestroyQpResp;

typedef struct PvrdmaCmdCreateBind {
    PvrdmaCmdHdr hdr;
    uint32_t mtu;
    uint32_t vlan;
    uint32_t index;
    uint8_t new_gid[16];
    uint8_t gid_type;
    uint8_t reserved[3];
} PvrdmaCmdCreateBind;

typedef struct PvrdmaCmdDestroyBind {
    PvrdmaCmdHdr hdr;
    uint32_t index;
    uint8_t dest_gid[16];
    uint8_t reserved[4];
} PvrdmaCmdDestroyBind;

typedef union PvrdmaCmdReq {
    PvrdmaCmdHdr hdr;
    PvrdmaCmdQueryPort query_port;
    PvrdmaCmdQueryPkey query_pkey;
    PvrdmaCmdCreateUc create_uc;
    PvrdmaCmdDestroyUc destroy_uc;
    PvrdmaCmdCreatePd create_pd;
    PvrdmaCmdDestroyPd destroy_pd;
    PvrdmaCmdCreateMr create_mr;
    PvrdmaCmdDestroyMr destroy_mr;
    PvrdmaCmdCreateCq create_cq;
    PvrdmaCmdResizeCq resize_cq;
    PvrdmaCmdDestroyCq destroy_cq;
    PvrdmaCmdCreateQp create_qp;
    PvrdmaCmdModifyQp modify_qp;
    PvrdmaCmdQueryQp query_qp;
    PvrdmaCmdDestroyQp destroy_qp;
    PvrdmaCmdCreateBind create_bind;
    PvrdmaCmdDestroyBind destroy_bind;
    PvrdmaCmdCreateSrq create_srq;
    PvrdmaCmdModifySrq modify_srq;
    PvrdmaCmdQuerySrq query_srq;
    PvrdmaCmdDestroySrq destroy_srq;
} PvrdmaCmdReq;

typedef union PvrdmaCmdResp {
    PvrdmaCmdRespHdr hdr;
    PvrdmaCmdQueryPortResp query_port_resp;
    PvrdmaCmdQueryPkeyResp query_pkey_resp;
    PvrdmaCmdCreateUcResp create_uc_resp;
    PvrdmaCmdCreatePdResp create_pd_resp;
    PvrdmaCmdCreateMrResp create_mr_resp;
    PvrdmaCmdCreateCqResp create_cq_resp;
    PvrdmaCmdResizeCqResp resize_cq_resp;
    PvrdmaCmdCreateQpResp create_qp_resp;
    PvrdmaCmdCreateQpRespV2 create_qp_resp_v2;
    PvrdmaCmdQueryQpResp query_qp_resp;
    PvrdmaCmdDestroyQpResp destroy_qp_resp;
    PvrdmaCmdCreateSrqResp create_srq_resp;
    PvrdmaCmdQuerySrqResp query_srq_resp;
} PvrdmaCmdResp;

/* Work requests and completions (uAPI, shared with user space) */
enum {
    PVRDMA_WR_RDMA_WRITE,
    PVRDMA_WR_RDMA_WRITE_WITH_IMM,
    PVRDMA_WR_SEND,
    PVRDMA_WR_SEND_WITH_IMM,
    PVRDMA_WR_RDMA_READ,
    PVRDMA_WR_ATOMIC_CMP_AND_SWP,
    PVRDMA_WR_ATOMIC_FETCH_AND_ADD,
    PVRDMA_WR_LSO,
    PVRDMA_WR_SEND_WITH_INV,
    PVRDMA_WR_RDMA_READ_WITH_INV,
    PVRDMA_WR_LOCAL_INV,
    PVRDMA_WR_FAST_REG_MR,
    PVRDMA_WR_MASKED_ATOMIC_CMP_AND_SWP,
    PVRDMA_WR_MASKED_ATOMIC_FETCH_AND_ADD,
    PVRDMA_WR_BIND_MW,
    PVRDMA_WR_REG_SIG_MR,
    PVRDMA_WR_ERROR,
};

enum {
    PVRDMA_WC_SUCCESS,
    PVRDMA_WC_LOC_LEN_ERR,
    PVRDMA_WC_LOC_QP_OP_ERR,
    PVRDMA_WC_LOC_EEC_OP_ERR,
    PVRDMA_WC_LOC_PROT_ERR,
    PVRDMA_WC_WR_FLUSH_ERR,
    PVRDMA_WC_MW_BIND_ERR,
    PVRDMA_WC_BAD_RESP_ERR,
    PVRDMA_WC_LOC_ACCESS_ERR,
    PVRDMA_WC_REM_INV_REQ_ERR,
    PVRDMA_WC_REM_ACCESS_ERR,
    PVRDMA_WC_REM_OP_ERR,
    PVRDMA_WC_RETRY_EXC_ERR,
    PVRDMA_WC_RNR_RETRY_EXC_ERR,
    PVRDMA_WC_LOC_RDD_VIOL_ERR,
    PVRDMA_WC_REM_INV_RD_REQ_ERR,
    PVRDMA_WC_REM_ABORT_ERR,
    PVRDMA_WC_INV_EECN_ERR,
    PVRDMA_WC_INV_EEC_STATE_ERR,
    PVRDMA_WC_FATAL_ERR,
    PVRDMA_WC_RESP_TIMEOUT_ERR,
    PVRDMA_WC_GENERAL_ERR,
};

enum {
    PVRDMA_WC_SEND,
    PVRDMA_WC_RDMA_WRITE,
    PVRDMA_WC_RDMA_READ,
    PVRDMA_WC_COMP_SWAP,
    PVRDMA_WC_FETCH_ADD,
    PVRDMA_WC_BIND_MW,
    PVRDMA_WC_LSO,
    PVRDMA_WC_LOCAL_INV,
    PVRDMA_WC_FAST_REG_MR,
    PVRDMA_WC_MASKED_COMP_SWAP,
    PVRDMA_WC_MASKED_FETCH_ADD,
    PVRDMA_WC_RECV = 1 << 7,
    PVRDMA_WC_RECV_RDMA_WITH_IMM,
};

#define PVRDMA_SEND_FENCE               (1u << 0)
#define PVRDMA_SEND_SIGNALED            (1u << 1)
#define PVRDMA_SEND_SOLICITED           (1u << 2)
#define PVRDMA_SEND_INLINE              (1u << 3)

#define PVRDMA_WC_GRH                   (1u << 0)
#define PVRDMA_WC_WITH_IMM              (1u << 1)
#define PVRDMA_WC_WITH_INVALIDATE       (1u << 2)

typedef struct PvrdmaAv {
    uint32_t port_pd;
    uint32_t sl_tclass_flowlabel;
    uint8_t dgid[16];
    uint8_t src_path_bits;
    uint8_t gid_index;
    uint8_t stat_rate;
    uint8_t hop_limit;
    uint8_t dmac[6];
    uint8_t reserved[6];
} PvrdmaAv;

typedef struct PvrdmaSge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} PvrdmaSge;

typedef struct PvrdmaRqWqeHdr {
    uint64_t wr_id;
    uint32_t num_sge;
    uint32_t total_len;
} PvrdmaRqWqeHdr;

typedef struct PvrdmaExCmpSwap {
    uint64_t swap_val;
    uint64_t compare_val;
    uint64_t swap_mask;
    uint64_t compare_mask;
} PvrdmaExCmpSwap;

typedef struct PvrdmaExFetchAdd {
    uint64_t add_val;
    uint64_t field_boundary;
} PvrdmaExFetchAdd;

typedef struct PvrdmaSqWqeHdr {
    uint64_t wr_id;
    uint32_t num_sge;
    uint32_t total_len;
    uint32_t opcode;
    uint32_t send_flags;
    union {
        uint32_t imm_data;          /* big-endian */
        uint32_t invalidate_rkey;
    } ex;
    uint32_t reserved;
    union {
        struct {
            uint64_t remote_addr;
            uint32_t rkey;
            uint8_t reserved[4];
        } rdma;
        struct {
            uint64_t remote_addr;
            uint64_t compare_add;
            uint64_t swap;
            uint32_t rkey;
            uint32_t reserved;
        } atomic;
        struct {
            uint64_t remote_addr;
            uint32_t log_arg_sz;
            uint32_t rkey;
            union {
                PvrdmaExCmpSwap cmp_swap;
                PvrdmaExFetchAdd fetch_add;
            } wr_data;
        } masked_atomics;
        struct {
            uint64_t iova_start;
            uint64_t pl_pdir_dma;
            uint32_t page_shift;
            uint32_t page_list_len;
            uint32_t length;
            uint32_t access_flags;
            uint32_t rkey;
            uint32_t reserved;
        } fast_reg;
        struct {
            uint32_t remote_qpn;
            uint32_t remote_qkey;
            PvrdmaAv av;
        } ud;
    } wr;
} PvrdmaSqWqeHdr;

typedef struct PvrdmaCqe {
    uint64_t wr_id;
    uint64_t qp;                    /* QP handle */
    uint32_t opcode;
    uint32_t status;
    uint32_t byte_len;
    uint32_t imm_data;              /* big-endian */
    uint32_t src_qp;
    uint32_t wc_flags;
    uint32_t vendor_err;
    uint16_t pkey_index;
    uint16_t slid;
    uint8_t sl;
    uint8_t dlid_path_bits;
    uint8_t port_num;
    uint8_t smac[6];
    uint8_t network_hdr_type;
    uint8_t reserved2[6];
} PvrdmaCqe;

/* Sizes the driver relies on; the ABI test checks every field offset. */
QEMU_BUILD_BUG_ON(sizeof(PvrdmaDeviceCaps) != 208);
QEMU_BUILD_BUG_ON(sizeof(PvrdmaDsr) != 280);
QEMU_BUILD_BUG_ON(offsetof(PvrdmaDsr, caps) != 72);
QEMU_BUILD_BUG_ON(sizeof(PvrdmaQpAttr) != 160);
QEMU_BUILD_BUG_ON(sizeof(PvrdmaCmdReq) != sizeof(PvrdmaCmdModifyQp));
QEMU_BUILD_BUG_ON(sizeof(PvrdmaCqe) != 64);
QEMU_BUILD_BUG_ON(sizeof(PvrdmaSge) != 16);
QEMU_BUILD_BUG_ON(sizeof(PvrdmaSqWqeHdr) != 80);
QEMU_BUILD_BUG_ON(sizeof(PvrdmaRqWqeHdr) != 16);

#endif
