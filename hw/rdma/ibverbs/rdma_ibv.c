/*
 * The ibverbs backend: every guest object has a host object on a host RDMA
 * device (an HCA, an SR-IOV virtual function, or Linux Soft-RoCE), so the
 * guest's traffic leaves on the real fabric and the QP numbers and memory
 * keys the guest sees are the host's, as they must be on the wire.
 *
 * This file opens the device, checks what realize needs, and creates and
 * destroys the host objects.  Work requests are in rdma_ibv_wr.c, MADs in
 * rdma_ibv_mad.c.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <sys/eventfd.h>
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "qemu/units.h"
#include "qemu/main-loop.h"
#include "hw/rdma/rdma_compat.h"
#include RDMA_RAMBLOCK_H
#include "exec/cpu-common.h"
#include RDMA_ADDRESS_SPACES_H
#include "qemu/xxhash.h"
#include "qemu/bswap.h"
#include "rdma_ibv.h"
#include "hw/rdma/trace.h"

/*
 * Host runs per guest MR: each costs one VMA (see rdma_ibv_map.h), and the
 * process has about 65530 (vm.max_map_count).  16384 runs let a 1 GiB MR
 * be made of 64 KiB pieces and still leave room for three more such MRs.
 */
#define RDMA_IBV_MAX_RUNS       16384

/*
 * And across all MRs of all devices of the process (AUDIT 4): half of
 * vm.max_map_count, so the guest cannot take the VMAs QEMU itself needs
 * (thread stacks, other devices, RAM).  Under the BQL.
 */
#define RDMA_IBV_RUNS_TOTAL     32768
static uint32_t rdma_ibv_runs_used;

/*
 * Host queue entries per device (AUDIT 8): work requests of host QPs and
 * SRQs and host CQ entries.  Ring pages must differ (rdma_ring_load), so
 * a guest pays for its rings in RAM; this bounds what even a large guest
 * can make the host's RDMA driver allocate (rxe: some 100-600 bytes per
 * entry, in kernel memory outside QEMU's cgroup).
 */
#define RDMA_IBV_QUEUE_ENTRIES  (1u << 20)

/* Take @n queue entries from the device's budget. */
static bool rdma_ibv_entries_get(RdmaIbv *ibv, uint64_t n, const char *what)
{
    if (n > RDMA_IBV_QUEUE_ENTRIES - ibv->queue_entries) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: %s of %" PRIu64 " entries "
                      "refused: %u of the device's %u host queue entries "
                      "are in use\n", what, n, ibv->queue_entries,
                      RDMA_IBV_QUEUE_ENTRIES);
        return false;
    }
    ibv->queue_entries += n;
    return true;
}

/* Host address handles kept per PD for UD sends (destinations). */
#define RDMA_IBV_MAX_AHS        4096

/* Device and port */

static char *rdma_ibv_device_names(struct ibv_device **list)
{
    GString *s = g_string_new(NULL);

    for (int i = 0; list && list[i]; i++) {
        g_string_append_printf(s, "%s%s", i ? ", " : "",
                               ibv_get_device_name(list[i]));
    }
    if (!s->len) {
        g_string_append(s, "none (is the rdma_rxe module loaded and "
                        "`rdma link add rxe0 type rxe netdev <if>` done?)");
    }
    return g_string_free(s, false);
}

static bool rdma_ibv_open(RdmaIbv *ibv, Error **errp)
{
    struct ibv_device **list = ibv_get_device_list(NULL);
    g_autofree char *names = NULL;

    for (int i = 0; list && list[i]; i++) {
        if (!strcmp(ibv_get_device_name(list[i]), ibv->ibdev)) {
            ibv->ctx = ibv_open_device(list[i]);
            if (!ibv->ctx) {
                error_setg_errno(errp, errno, "ibdev=%s: cannot open the "
                                 "device (permissions of /dev/infiniband?)",
                                 ibv->ibdev);
            }
            ibv_free_device_list(list);
            return ibv->ctx != NULL;
        }
    }
    names = rdma_ibv_device_names(list);
    error_setg(errp, "ibdev=%s: no such RDMA device; devices found: %s",
               ibv->ibdev, names);
    if (list) {
        ibv_free_device_list(list);
    }
    return false;
}

static bool rdma_ibv_check_port(RdmaIbv *ibv, Error **errp)
{
    if (ibv_query_device(ibv->ctx, &ibv->attr)) {
        error_setg_errno(errp, errno, "ibdev=%s: ibv_query_device failed",
                         ibv->ibdev);
        return false;
    }
    if (ibv->port < 1 || ibv->port > ibv->attr.phys_port_cnt) {
        error_setg(errp, "ibport=%u: %s has port%s 1..%u", ibv->port,
                   ibv->ibdev, ibv->attr.phys_port_cnt > 1 ? "s" : "",
                   ibv->attr.phys_port_cnt);
        return false;
    }
    if (ibv_query_port(ibv->ctx, ibv->port, &ibv->port_attr)) {
        error_setg_errno(errp, errno, "ibdev=%s: ibv_query_port(%u) failed",
                         ibv->ibdev, ibv->port);
        return false;
    }
    if (ibv->port_attr.state != IBV_PORT_ACTIVE) {
        error_setg(errp, "ibdev=%s port %u is not active (state %s)",
                   ibv->ibdev, ibv->port,
                   ibv_port_state_str(ibv->port_attr.state));
        error_append_hint(errp, "Bring its network device up (ip link set "
                          "<netdev> up) and check `rdma link show`.\n");
        return false;
    }
    if (ibv->port_attr.link_layer != IBV_LINK_LAYER_ETHERNET) {
        error_setg(errp, "ibdev=%s port %u is not RoCE (Ethernet link "
                   "layer); pvrdma is a RoCE device", ibv->ibdev, ibv->port);
        return false;
    }
    return true;
}

/*
 * Guest RAM must be a shared mapping of host pages: the host device
 * registers guest MRs through an alias of their pages (rdma_ibv_map.h).
 * The RAM at 1 MiB is the guest's main RAM block.
 */
static bool rdma_ibv_check_ram(RdmaIbv *ibv, Error **errp)
{
    hwaddr xlat, plen = UINT64_MAX;
    MemoryRegion *mr;
    RAMBlock *rb;

    /*
     * The guest's MRs are lists of 4 KiB pages, each registered with the
     * host device as it lies in host memory: a host page of 64 KiB
     * (ppc64le, some aarch64 kernels) cannot alias them.
     */
    if (qemu_real_host_page_size() != RDMA_PAGE_SIZE) {
        error_setg(errp, "ibdev=: the host's page size is %zu KiB; the "
                   "ibverbs backend needs 4 KiB pages (the soft backend "
                   "has no such need)", qemu_real_host_page_size() / KiB);
        return false;
    }
    /* The DMA MR and the check below assume the PC's memory map. */
    if (!object_dynamic_cast(qdev_get_machine(), "x86-machine")) {
        error_setg(errp, "ibdev=: the ibverbs backend needs a PC machine "
                   "(pc or q35); use the soft backend on %s",
                   object_get_typename(qdev_get_machine()));
        return false;
    }
    RCU_READ_LOCK_GUARD();
    /* Bus mastering is off at realize: look at system memory itself. */
    mr = address_space_translate(&address_space_memory, 1 * MiB, &xlat, &plen,
                                 false, MEMTXATTRS_UNSPECIFIED);
    if (!memory_region_is_ram(mr) || !mr->ram_block || xlat != 1 * MiB) {
        error_setg(errp, "ibdev=: guest RAM at 1 MiB is not a RAM block "
                   "starting at address 0");
        return false;
    }
    rb = mr->ram_block;
    if (!qemu_ram_is_shared(rb)) {
        error_setg(errp, "ibdev=: guest RAM (%s) is private; the host RDMA "
                   "device can only register shared guest RAM",
                   memory_region_name(mr));
        error_append_hint(errp, "Use -object memory-backend-memfd,id=mem,"
                          "size=<RAM size>,share=on -machine "
                          "memory-backend=mem.\n");
        return false;
    }
    if (qemu_ram_pagesize(rb) != qemu_real_host_page_size()) {
        error_setg(errp, "ibdev=: guest RAM (%s) uses %zu KiB pages; guest "
                   "MRs are lists of 4 KiB pages, which huge pages cannot "
                   "alias", memory_region_name(mr),
                   qemu_ram_pagesize(rb) / KiB);
        error_append_hint(errp, "Use memory-backend-memfd with share=on and "
                          "without hugetlb=on.\n");
        return false;
    }
    ibv->low_rb = rb;
    ibv->low_ram = qemu_ram_get_host_addr(rb);
    ibv->low_ram_size = 1 * MiB + plen;
    return true;
}

/* The host RAM block that holds @host ends here (rdma_ibv_map_pages). */
static void *rdma_ibv_ram_end(const void *host, void *opaque)
{
    ram_addr_t offset;
    RAMBlock *rb = qemu_ram_block_from_host((void *)host, false, &offset);

    if (!rb || !qemu_ram_is_shared(rb)) {
        return NULL;
    }
    return qemu_ram_get_host_addr(rb) + qemu_ram_get_used_length(rb);
}

static void rdma_ibv_limits(RdmaBackend *be, RdmaDevLimits *l)
{
    const struct ibv_device_attr *a = &rdma_ibv(be)->attr;

    /* The device's properties are upper bounds; the host's are too. */
    l->max_mr_size = MIN(l->max_mr_size, a->max_mr_size);
    l->max_pd = MIN(l->max_pd, (uint32_t)a->max_pd);
    l->max_cq = MIN(l->max_cq, (uint32_t)a->max_cq);
    l->max_cqe = MIN(l->max_cqe, (uint32_t)a->max_cqe);
    l->max_qp = MIN(l->max_qp, (uint32_t)a->max_qp);
    l->max_qp_wr = MIN(l->max_qp_wr, (uint32_t)a->max_qp_wr);
    l->max_sge = MIN(l->max_sge, (uint32_t)a->max_sge);
    l->max_srq = MIN(l->max_srq, (uint32_t)a->max_srq);
    l->max_srq_wr = MIN(l->max_srq_wr, (uint32_t)a->max_srq_wr);
    l->max_srq_sge = MIN(l->max_srq_sge, (uint32_t)a->max_srq_sge);
    l->max_mr = MIN(l->max_mr, (uint32_t)a->max_mr);
    l->max_ah = MIN(l->max_ah, (uint32_t)a->max_ah);
    l->max_qp_rd_atom = MIN(l->max_qp_rd_atom, (uint32_t)a->max_qp_rd_atom);
    l->max_qp_init_rd_atom = MIN(l->max_qp_init_rd_atom,
                                 (uint32_t)a->max_qp_init_rd_atom);
    /* Fast registration is a kernel verb: user space cannot forward it. */
    l->max_fast_reg_pages = 0;
}

static void rdma_ibv_query_port(RdmaBackend *be, RdmaPortAttr *attr)
{
    RdmaIbv *ibv = rdma_ibv(be);
    struct ibv_port_attr *p = &ibv->port_attr;

    if (ibv_query_port(ibv->ctx, ibv->port, p)) {
        p->state = IBV_PORT_DOWN;
    }
    attr->active = p->state == IBV_PORT_ACTIVE;
    attr->max_mtu = p->max_mtu;
    attr->active_mtu = p->active_mtu;
    attr->max_msg_sz = p->max_msg_sz;
    attr->active_width = p->active_width;
    attr->active_speed = p->active_speed;
}

/* GIDs */

/*
 * Index of the guest's GID @guest_index in the host port's table, or -1.
 * The host learns a guest GID only when management software adds the
 * address to the host netdev (RDMA_GID_STATUS_CHANGED), so a miss is
 * looked up again on the next use.
 */
/* Index of @gid in the host port's table (RoCE v2 preferred), or -1. */
static int rdma_ibv_find_host_gid(RdmaIbv *ibv, const uint8_t *gid)
{
    size_t max = (size_t)ibv->port_attr.gid_tbl_len * ibv->attr.phys_port_cnt;
    g_autofree struct ibv_gid_entry *e = g_new(struct ibv_gid_entry, max);
    ssize_t n = ibv_query_gid_table(ibv->ctx, e, max, 0);
    int found = -1;

    /* One call reads the whole table (rxe's has 1024 entries). */
    for (ssize_t i = 0; i < n; i++) {
        if (e[i].port_num != ibv->port || memcmp(e[i].gid.raw, gid, 16)) {
            continue;
        }
        /* The same GID is there for RoCE v1 and v2: prefer v2. */
        if (e[i].gid_type == IBV_GID_TYPE_ROCE_V2) {
            return e[i].gid_index;
        }
        found = e[i].gid_index;
    }
    return found;
}

int rdma_ibv_host_gid(RdmaIbv *ibv, uint8_t guest_index)
{
    RdmaResources *rm = ibv->be.rm;
    const RdmaGid *g;

    if (guest_index >= rm->limits.gid_tbl_len) {
        return -1;
    }
    g = &rm->gids[guest_index];
    if (!g->valid) {
        return -1;
    }
    if (ibv->host_gid[guest_index] < 0) {
        ibv->host_gid[guest_index] = rdma_ibv_find_host_gid(ibv, g->gid);
        trace_rdma_ibv_gid(guest_index, ibv->host_gid[guest_index]);
    }
    return ibv->host_gid[guest_index];
}

static int rdma_ibv_host_gid_index(RdmaBackend *be, uint32_t index)
{
    return rdma_ibv_host_gid(rdma_ibv(be), index);
}

static int rdma_ibv_add_gid(RdmaBackend *be, uint32_t index,
                            const RdmaGid *gid)
{
    RdmaIbv *ibv = rdma_ibv(be);

    ibv->host_gid[index] = -1;
    rdma_ibv_mad_gid(ibv, index, gid->gid, true);
    return 0;
}

static void rdma_ibv_del_gid(RdmaBackend *be, uint32_t index,
                             const RdmaGid *gid)
{
    RdmaIbv *ibv = rdma_ibv(be);

    ibv->host_gid[index] = -1;
    rdma_ibv_mad_gid(ibv, index, gid->gid, false);
}

/* Protection domains and their address handles */

typedef struct RdmaIbvAhKey {
    uint8_t dgid[16];
    int32_t sgid_index;
    uint8_t hop_limit;
    uint8_t pad[3];
} RdmaIbvAhKey;

static guint rdma_ibv_ah_hash(gconstpointer k)
{
    const RdmaIbvAhKey *a = k;

    return qemu_xxhash4(ldq_he_p(a->dgid) ^ ldq_he_p(a->dgid + 8),
                        a->sgid_index | a->hop_limit << 16);
}

static gboolean rdma_ibv_ah_equal(gconstpointer a, gconstpointer b)
{
    return !memcmp(a, b, sizeof(RdmaIbvAhKey));
}

static void rdma_ibv_ah_free(gpointer ah)
{
    ibv_destroy_ah(ah);
}

/*
 * The host AH for a UD send.  Creating one resolves the destination's MAC
 * in the host kernel, so AHs are kept per PD and reused.
 */
struct ibv_ah *rdma_ibv_ah(RdmaIbv *ibv, RdmaPd *pd, const uint8_t *dgid,
                           uint8_t sgid_index, uint8_t hop_limit)
{
    RdmaIbvPd *ipd = pd->be;
    RdmaIbvAhKey key = { .hop_limit = hop_limit ? hop_limit : 64 };
    struct ibv_ah_attr attr = { .is_global = 1, .port_num = ibv->port };
    struct ibv_ah *ah;

    key.sgid_index = rdma_ibv_host_gid(ibv, sgid_index);
    if (key.sgid_index < 0) {
        return NULL;
    }
    memcpy(key.dgid, dgid, 16);
    ah = g_hash_table_lookup(ipd->ahs, &key);
    if (ah) {
        return ah;
    }
    /* Each one is a host kernel object: a guest cannot have unbounded. */
    if (g_hash_table_size(ipd->ahs) >= RDMA_IBV_MAX_AHS) {
        return NULL;
    }
    memcpy(attr.grh.dgid.raw, dgid, 16);
    attr.grh.sgid_index = key.sgid_index;
    attr.grh.hop_limit = key.hop_limit;
    ah = ibv_create_ah(ipd->pd, &attr);
    if (ah) {
        g_hash_table_insert(ipd->ahs, g_memdup2(&key, sizeof(key)), ah);
    }
    return ah;
}

static int rdma_ibv_create_pd(RdmaBackend *be, RdmaPd *pd)
{
    RdmaIbvPd *ipd = g_new0(RdmaIbvPd, 1);

    ipd->pd = ibv_alloc_pd(rdma_ibv(be)->ctx);
    if (!ipd->pd) {
        int ret = -errno;

        g_free(ipd);
        return ret ? ret : -ENOMEM;
    }
    ipd->ahs = g_hash_table_new_full(rdma_ibv_ah_hash, rdma_ibv_ah_equal,
                                     g_free, rdma_ibv_ah_free);
    pd->be = ipd;
    return 0;
}

static void rdma_ibv_destroy_pd(RdmaBackend *be, RdmaPd *pd)
{
    RdmaIbvPd *ipd = pd->be;

    g_hash_table_destroy(ipd->ahs);
    ibv_dealloc_pd(ipd->pd);
    g_free(ipd);
    pd->be = NULL;
}

RdmaIbvPd *rdma_ibv_pd(RdmaIbv *ibv, uint32_t pd_handle)
{
    RdmaPd *pd = rdma_rm_get(ibv->be.rm, RDMA_RES_PD, pd_handle);

    return pd ? pd->be : NULL;
}

/* Completion queues */

static int rdma_ibv_create_cq(RdmaBackend *be, RdmaCq *cq)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvCq *icq = g_new0(RdmaIbvCq, 1);

    icq->id = ++ibv->next_cq_id;
    icq->handle = cq->handle;
    /*
     * Every host send completes (sq_sig_all), also those the guest did not
     * ask to see, so the host CQ is larger than the guest's.
     */
    icq->entries = MIN((uint64_t)cq->cqe * 4, (uint64_t)ibv->attr.max_cqe);
    if (!rdma_ibv_entries_get(ibv, icq->entries, "CQ")) {
        g_free(icq);
        return -ENOMEM;
    }
    icq->cq = ibv_create_cq(ibv->ctx, icq->entries,
                            (void *)(uintptr_t)icq->id, ibv->channel, 0);
    if (!icq->cq || ibv_req_notify_cq(icq->cq, 0)) {
        int ret = errno ? -errno : -ENOMEM;

        if (icq->cq) {
            ibv_destroy_cq(icq->cq);
        }
        ibv->queue_entries -= icq->entries;
        g_free(icq);
        return ret;
    }
    g_hash_table_insert(ibv->cqs, &icq->id, icq);
    cq->be = icq;
    return 0;
}

static void rdma_ibv_destroy_cq(RdmaBackend *be, RdmaCq *cq)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvCq *icq = cq->be;

    g_hash_table_remove(ibv->cqs, &icq->id);
    ibv_destroy_cq(icq->cq);
    ibv->queue_entries -= icq->entries;
    g_free(icq);
    cq->be = NULL;
}

static struct ibv_cq *rdma_ibv_cq(RdmaIbv *ibv, uint32_t cq_handle)
{
    RdmaCq *cq = rdma_rm_get(ibv->be.rm, RDMA_RES_CQ, cq_handle);

    return cq ? ((RdmaIbvCq *)cq->be)->cq : NULL;
}

/* Queue pairs */

static int rdma_ibv_create_qp(RdmaBackend *be, RdmaQp *qp)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvQp *iqp = g_new0(RdmaIbvQp, 1);
    RdmaSrq *srq = qp->is_srq ? rdma_rm_get(be->rm, RDMA_RES_SRQ,
                                            qp->srq_handle) : NULL;
    struct ibv_qp_init_attr a = {
        .send_cq = rdma_ibv_cq(ibv, qp->send_cq_handle),
        .recv_cq = rdma_ibv_cq(ibv, qp->recv_cq_handle),
        .srq = srq ? ((RdmaIbvSrq *)srq->be)->srq : NULL,
        .cap = {
            .max_send_wr = qp->cap.max_send_wr,
            .max_recv_wr = qp->cap.max_recv_wr,
            .max_send_sge = qp->cap.max_send_sge,
            .max_recv_sge = qp->cap.max_recv_sge,
        },
        .qp_type = qp->type == RDMA_QPT_RC ? IBV_QPT_RC : IBV_QPT_UD,
        /* Every host WR completes, so its slot is freed (rdma_ibv_wr.c). */
        .sq_sig_all = 1,
    };

    iqp->pd_handle = qp->pd_handle;
    qp->be = iqp;
    /* The host kernel owns QP1: guest MADs go through rdmacm-mux. */
    if (qp->type == RDMA_QPT_GSI) {
        return 0;
    }
    if (srq) {
        a.cap.max_recv_wr = a.cap.max_recv_sge = 0;
    }
    iqp->entries = (uint64_t)a.cap.max_send_wr + a.cap.max_recv_wr;
    if (!rdma_ibv_entries_get(ibv, iqp->entries, "QP")) {
        g_free(iqp);
        qp->be = NULL;
        return -ENOMEM;
    }
    iqp->qp = ibv_create_qp(rdma_ibv_pd(ibv, qp->pd_handle)->pd, &a);
    if (!iqp->qp) {
        int ret = errno ? -errno : -ENOMEM;

        ibv->queue_entries -= iqp->entries;
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: %s refused a QP "
                      "(send %u x %u SGEs, recv %u x %u): %s\n", ibv->ibdev,
                      qp->cap.max_send_wr, qp->cap.max_send_sge,
                      qp->cap.max_recv_wr, qp->cap.max_recv_sge,
                      strerror(-ret));
        g_free(iqp);
        qp->be = NULL;
        return ret;
    }
    iqp->max_sends = a.cap.max_send_wr;
    iqp->max_recvs = a.cap.max_recv_wr;
    qp->qpn = iqp->qp->qp_num;
    g_hash_table_insert(ibv->qps, GUINT_TO_POINTER(qp->qpn), qp);
    trace_rdma_ibv_qp(qp->handle, qp->qpn);
    return 0;
}

static int rdma_ibv_modify_qp(RdmaBackend *be, RdmaQp *qp, uint32_t mask,
                              const RdmaQpAttr *attr)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvQp *iqp = qp->be;
    struct ibv_qp_attr a = {
        .qp_state = attr->qp_state,
        .cur_qp_state = attr->cur_qp_state,
        .path_mtu = attr->path_mtu,
        .path_mig_state = attr->path_mig_state,
        .qkey = attr->qkey,
        .rq_psn = attr->rq_psn,
        .sq_psn = attr->sq_psn,
        .dest_qp_num = attr->dest_qp_num,
        .qp_access_flags = rdma_ibv_access(attr->qp_access_flags),
        .pkey_index = attr->pkey_index,
        .en_sqd_async_notify = attr->en_sqd_async_notify,
        .max_rd_atomic = attr->max_rd_atomic,
        .max_dest_rd_atomic = attr->max_dest_rd_atomic,
        .min_rnr_timer = attr->min_rnr_timer,
        .port_num = ibv->port,
        .timeout = attr->timeout,
        .retry_cnt = attr->retry_cnt,
        .rnr_retry = attr->rnr_retry,
    };
    /* Our mask bits are the IB attribute mask bits (IBV_QP_*). */
    int ibv_mask = mask & (RDMA_QP_ATTR_ALL & ~RDMA_QP_CAP & ~RDMA_QP_ALT_PATH &
                           ~RDMA_QP_CUR_STATE);

    if (!iqp->qp) {
        return 0;           /* GSI: the mux carries its MADs */
    }
    if (mask & RDMA_QP_AV) {
        int sgid = rdma_ibv_host_gid(ibv, attr->ah.sgid_index);

        if (sgid < 0) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: QP %u: source GID index "
                          "%u is not in %s's GID table (has the host netdev "
                          "the guest's address?)\n", qp->handle,
                          attr->ah.sgid_index, ibv->ibdev);
            return -EINVAL;
        }
        a.ah_attr.is_global = 1;
        a.ah_attr.port_num = ibv->port;
        a.ah_attr.sl = attr->ah.sl;
        memcpy(a.ah_attr.grh.dgid.raw, attr->ah.dgid, 16);
        a.ah_attr.grh.sgid_index = sgid;
        a.ah_attr.grh.flow_label = attr->ah.flow_label;
        a.ah_attr.grh.hop_limit = attr->ah.hop_limit;
        a.ah_attr.grh.traffic_class = attr->ah.traffic_class;
    }
    /* The port is ours to choose: the host port the device sits on. */
    if (attr->qp_state == RDMA_QPS_INIT && (mask & RDMA_QP_STATE)) {
        ibv_mask |= qp->type == RDMA_QPT_UD ? IBV_QP_PORT : 0;
    }
    if (ibv_modify_qp(iqp->qp, &a, ibv_mask)) {
        int ret = errno ? -errno : -EINVAL;

        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: QP %u: %s refused the "
                      "modify (mask 0x%x, state %u): %s\n", qp->handle,
                      ibv->ibdev, mask, attr->qp_state, strerror(-ret));
        return ret;
    }
    if (mask & RDMA_QP_STATE) {
        /*
         * The host takes receives from INIT on; the core hands over those
         * already posted once it has committed the new state.
         */
        iqp->rq_ready = attr->qp_state != RDMA_QPS_RESET &&
                        attr->qp_state != RDMA_QPS_ERR;
    }
    /* RESET empties the host queues without completions. */
    if ((mask & RDMA_QP_STATE) && attr->qp_state == RDMA_QPS_RESET) {
        rdma_ibv_drop_slots(ibv, RDMA_IBV_SLOT_SEND, qp->handle);
        rdma_ibv_drop_slots(ibv, RDMA_IBV_SLOT_RECV, qp->handle);
        iqp->sends = iqp->recvs = 0;
        g_clear_pointer(&iqp->held, g_free);
        qp->sq_stalled = false;
    }
    return 0;
}

static void rdma_ibv_destroy_qp(RdmaBackend *be, RdmaQp *qp)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvQp *iqp = qp->be;

    if (iqp->qp) {
        if (qp->is_srq) {
            rdma_ibv_quiesce_srq_qp(ibv, qp);
        }
        g_hash_table_remove(ibv->qps, GUINT_TO_POINTER(qp->qpn));
        ibv_destroy_qp(iqp->qp);
        ibv->queue_entries -= iqp->entries;
        rdma_ibv_drop_slots(ibv, RDMA_IBV_SLOT_SEND, qp->handle);
        rdma_ibv_drop_slots(ibv, RDMA_IBV_SLOT_RECV, qp->handle);
    }
    g_free(iqp->held);
    g_free(iqp);
    qp->be = NULL;
}

/* Shared receive queues */

static int rdma_ibv_create_srq(RdmaBackend *be, RdmaSrq *srq)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvSrq *isrq = g_new0(RdmaIbvSrq, 1);
    struct ibv_srq_init_attr a = {
        .srq_context = GUINT_TO_POINTER(srq->handle),
        .attr = { .max_wr = srq->max_wr, .max_sge = srq->max_sge,
                  .srq_limit = srq->srq_limit },
    };

    isrq->entries = srq->max_wr;
    if (!rdma_ibv_entries_get(ibv, isrq->entries, "SRQ")) {
        g_free(isrq);
        return -ENOMEM;
    }
    isrq->srq = ibv_create_srq(rdma_ibv_pd(ibv, srq->pd_handle)->pd, &a);
    if (!isrq->srq) {
        int ret = errno ? -errno : -ENOMEM;

        ibv->queue_entries -= isrq->entries;
        g_free(isrq);
        return ret;
    }
    isrq->max_recvs = a.attr.max_wr;
    srq->be = isrq;
    return 0;
}

static int rdma_ibv_modify_srq(RdmaBackend *be, RdmaSrq *srq)
{
    RdmaIbvSrq *isrq = srq->be;
    struct ibv_srq_attr a = { .srq_limit = srq->srq_limit };

    /* The host SRQ holds the posted WQEs, so the host raises the limit. */
    return ibv_modify_srq(isrq->srq, &a, IBV_SRQ_LIMIT) ? -errno : 0;
}

static void rdma_ibv_destroy_srq(RdmaBackend *be, RdmaSrq *srq)
{
    RdmaIbvSrq *isrq = srq->be;

    ibv_destroy_srq(isrq->srq);
    rdma_ibv(be)->queue_entries -= isrq->entries;
    rdma_ibv_drop_slots(rdma_ibv(be), RDMA_IBV_SLOT_SRQ_RECV, srq->handle);
    g_free(isrq);
    srq->be = NULL;
}

/* Memory regions */

uint32_t rdma_ibv_access(uint32_t guest_access)
{
    /* Our access bits are the IB ones (IBV_ACCESS_*) up to ZERO_BASED. */
    return guest_access & (RDMA_ACCESS_LOCAL_WRITE | RDMA_ACCESS_REMOTE_WRITE |
                           RDMA_ACCESS_REMOTE_READ |
                           RDMA_ACCESS_REMOTE_ATOMIC);
}

/*
 * The guest kernel's DMA MR: iova = guest physical address.  The host
 * device reaches guest RAM without going through QEMU's memory map, so the
 * host MR must not cover more than a DMA of this device could reach as
 * ordinary RAM (AUDIT 5):
 * - it starts at 1 MiB: Linux never hands out the first MiB, which holds
 *   the legacy SMRAM (ASEG at 0xa0000) and the default SMBASE;
 * - it ends at the first address that this device's DMA does not see as
 *   the low RAM block, measured when the host MR is made: the PCI hole,
 *   or on q35 TSEG once the firmware has enabled it (and locked it: the
 *   guest OS, which creates DMA MRs, cannot move it any more);
 * - it has the rights the guest asked for and no more, so a peer gets
 *   remote access only to a guest that gave it: one host MR per PD and
 *   set of rights, shared by the PD's DMA MRs with those rights.
 */
static uint64_t rdma_ibv_dma_end(RdmaIbv *ibv)
{
    AddressSpace *as = pci_get_address_space(ibv->pdev);
    uint64_t gpa = RDMA_IBV_DMA_START;

    RCU_READ_LOCK_GUARD();
    while (gpa < ibv->low_ram_size) {
        hwaddr xlat, plen = ibv->low_ram_size - gpa;
        MemoryRegion *mr = address_space_translate(as, gpa, &xlat, &plen,
                                                   true,
                                                   MEMTXATTRS_UNSPECIFIED);

        if (!memory_region_is_ram(mr) || memory_region_is_romd(mr) ||
            mr->readonly || mr->ram_block != ibv->low_rb ||
            memory_region_get_ram_addr(mr) + xlat !=
            qemu_ram_get_offset(ibv->low_rb) + gpa || plen == 0) {
            break;
        }
        gpa += plen;
    }
    return gpa & ~(uint64_t)(RDMA_PAGE_SIZE - 1);
}

static int rdma_ibv_create_dma_mr(RdmaIbv *ibv, RdmaMr *mr, RdmaIbvMr *imr)
{
    RdmaIbvPd *ipd = rdma_ibv_pd(ibv, mr->pd_handle);
    uint32_t set = rdma_ibv_access(mr->access);
    struct ibv_mr **hmr = &ipd->dma_mr[set];

    if (!*hmr) {
        uint64_t end = rdma_ibv_dma_end(ibv);

        if (end <= RDMA_IBV_DMA_START) {
            return -EFAULT;         /* bus mastering off, or no RAM */
        }
        *hmr = ibv_reg_mr_iova(ipd->pd,
                               (uint8_t *)ibv->low_ram + RDMA_IBV_DMA_START,
                               end - RDMA_IBV_DMA_START, RDMA_IBV_DMA_START,
                               set);
        if (!*hmr) {
            return errno ? -errno : -ENOMEM;
        }
        trace_rdma_ibv_dma_mr(mr->pd_handle, set, RDMA_IBV_DMA_START, end);
    }
    ipd->dma_refs[set]++;
    imr->dma_set = set;
    imr->hva_delta = (uintptr_t)ibv->low_ram;
    mr->lkey = (*hmr)->lkey;
    mr->rkey = (*hmr)->rkey;
    mr->iova = RDMA_IBV_DMA_START;
    mr->length = (*hmr)->length;
    return 0;
}

/*
 * The host addresses of guest pages @list.  One translation serves every
 * page of the same RAM section, so a 1 GiB MR is not 262144 lookups.
 */
static bool rdma_ibv_host_pages(RdmaIbv *ibv, const RdmaPageList *list,
                                void **host)
{
    AddressSpace *as = pci_get_address_space(ibv->pdev);
    uint64_t base = 0, end = 0;
    uint8_t *base_host = NULL;

    RCU_READ_LOCK_GUARD();
    for (uint32_t i = 0; i < list->npages; i++) {
        uint64_t gpa = list->pages[i];

        if (gpa < base || gpa + RDMA_PAGE_SIZE > end) {
            hwaddr xlat, plen = UINT64_MAX - gpa;
            MemoryRegion *mr = address_space_translate(as, gpa, &xlat, &plen,
                                                       true,
                                                       MEMTXATTRS_UNSPECIFIED);

            if (!memory_region_is_ram(mr) || memory_region_is_romd(mr) ||
                mr->readonly || plen < RDMA_PAGE_SIZE) {
                return false;
            }
            base = gpa;
            end = gpa + plen;
            base_host = (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;
        }
        host[i] = base_host + (gpa - base);
    }
    return true;
}

static int rdma_ibv_create_user_mr(RdmaIbv *ibv, RdmaMr *mr, RdmaIbvMr *imr)
{
    RdmaIbvPd *ipd = rdma_ibv_pd(ibv, mr->pd_handle);
    uint64_t first = mr->iova & ~(uint64_t)(RDMA_PAGE_SIZE - 1);
    uint32_t n = mr->pages.npages;
    g_autofree void **host = g_new(void *, n);
    int ret;

    if (mr->iova + mr->length > first + (uint64_t)n * RDMA_PAGE_SIZE) {
        return -EINVAL;
    }
    if (!rdma_ibv_host_pages(ibv, &mr->pages, host)) {
        return -EFAULT;
    }
    ret = rdma_ibv_map_pages(&imr->map, host, n, RDMA_PAGE_SIZE,
                             MIN(RDMA_IBV_MAX_RUNS,
                                 RDMA_IBV_RUNS_TOTAL - rdma_ibv_runs_used),
                             rdma_ibv_ram_end, NULL);
    if (ret < 0) {
        return ret;
    }
    rdma_ibv_runs_used += imr->map.runs;
    imr->hva_delta = (uintptr_t)imr->map.addr - first;
    imr->mr = ibv_reg_mr_iova(ipd->pd, (uint8_t *)imr->map.addr +
                              (mr->iova - first), mr->length, mr->iova,
                              rdma_ibv_access(mr->access));
    if (!imr->mr) {
        ret = errno ? -errno : -ENOMEM;
        rdma_ibv_runs_used -= imr->map.runs;
        rdma_ibv_unmap(&imr->map);
        return ret;
    }
    trace_rdma_ibv_mr(mr->handle, n, imr->map.runs, imr->map.aliased);
    mr->lkey = imr->mr->lkey;
    mr->rkey = imr->mr->rkey;
    return 0;
}

static int rdma_ibv_create_mr(RdmaBackend *be, RdmaMr *mr)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvMr *imr = g_new0(RdmaIbvMr, 1);
    int ret;

    switch (mr->kind) {
    case RDMA_MR_DMA:
        ret = rdma_ibv_create_dma_mr(ibv, mr, imr);
        break;
    case RDMA_MR_USER:
        ret = rdma_ibv_create_user_mr(ibv, mr, imr);
        break;
    default:
        ret = -EOPNOTSUPP;  /* FRMR: no fast registration in user space */
        break;
    }
    if (ret < 0) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: %s refused MR %u (%" PRIu64
                      " bytes): %s\n", ibv->ibdev, mr->handle, mr->length,
                      strerror(-ret));
        g_free(imr);
        return ret;
    }
    mr->be = imr;
    /* MAD SGEs find user MRs here, DMA MRs by their PD's key. */
    if (imr->mr) {
        g_hash_table_insert(ibv->mrs, GUINT_TO_POINTER(mr->lkey), mr);
    }
    return 0;
}

static void rdma_ibv_destroy_mr(RdmaBackend *be, RdmaMr *mr)
{
    RdmaIbv *ibv = rdma_ibv(be);
    RdmaIbvMr *imr = mr->be;

    if (imr->mr) {
        g_hash_table_remove(ibv->mrs, GUINT_TO_POINTER(mr->lkey));
        ibv_dereg_mr(imr->mr);
        rdma_ibv_runs_used -= imr->map.runs;
        rdma_ibv_unmap(&imr->map);
    } else {
        RdmaIbvPd *ipd = rdma_ibv_pd(ibv, mr->pd_handle);

        if (!--ipd->dma_refs[imr->dma_set]) {
            ibv_dereg_mr(ipd->dma_mr[imr->dma_set]);
            ipd->dma_mr[imr->dma_set] = NULL;
        }
    }
    g_free(imr);
    mr->be = NULL;
}

/* Backend */

static void rdma_ibv_bounds(RdmaBackend *be, RdmaBounds *b)
{
    RdmaIbv *ibv = rdma_ibv(be);

    b->host_queue_entries = ibv->queue_entries;
    b->host_queue_entries_max = RDMA_IBV_QUEUE_ENTRIES;
    b->map_runs = rdma_ibv_runs_used;
    b->map_runs_max = RDMA_IBV_RUNS_TOTAL;
    b->map_runs_per_mr = RDMA_IBV_MAX_RUNS;
}

static void rdma_ibv_destroy(RdmaBackend *be)
{
    RdmaIbv *ibv = rdma_ibv(be);

    rdma_ibv_mad_fini(ibv);
    rdma_ibv_comp_stop(ibv);
    if (ibv->ctx) {
        qemu_set_fd_handler(ibv->ctx->async_fd, NULL, NULL, NULL);
    }
    if (ibv->channel) {
        ibv_destroy_comp_channel(ibv->channel);
    }
    if (ibv->ctx) {
        ibv_close_device(ibv->ctx);
    }
    g_hash_table_destroy(ibv->cqs);
    g_hash_table_destroy(ibv->qps);
    g_hash_table_destroy(ibv->mrs);
    g_array_free(ibv->slots, true);
    g_array_free(ibv->free_slots, true);
    g_free(ibv->ibdev);
    g_free(ibv);
}

static const RdmaBackendOps rdma_ibv_ops = {
    .name = "ibverbs",
    .limits = rdma_ibv_limits,
    .query_port = rdma_ibv_query_port,
    .create_pd = rdma_ibv_create_pd,
    .destroy_pd = rdma_ibv_destroy_pd,
    .create_cq = rdma_ibv_create_cq,
    .destroy_cq = rdma_ibv_destroy_cq,
    .create_qp = rdma_ibv_create_qp,
    .modify_qp = rdma_ibv_modify_qp,
    .post_send = rdma_ibv_post_send,
    .recv_posted = rdma_ibv_recv_posted,
    .bounds = rdma_ibv_bounds,
    .gid_agent_state = rdma_ibv_mad_gid_state,
    .flush_qp = rdma_ibv_flush_qp,
    .destroy_qp = rdma_ibv_destroy_qp,
    .qp_state = rdma_ibv_qp_state,
    .create_srq = rdma_ibv_create_srq,
    .modify_srq = rdma_ibv_modify_srq,
    .destroy_srq = rdma_ibv_destroy_srq,
    .create_mr = rdma_ibv_create_mr,
    .destroy_mr = rdma_ibv_destroy_mr,
    .add_gid = rdma_ibv_add_gid,
    .del_gid = rdma_ibv_del_gid,
    .host_gid_index = rdma_ibv_host_gid_index,
    .destroy = rdma_ibv_destroy,
    .srq_limit_native = true,
};

RdmaBackend *rdma_ibv_backend_new(RdmaResources *rm, PCIDevice *pdev,
                                  const RdmaIbvConfig *cfg, Error **errp)
{
    RdmaIbv *ibv = g_new0(RdmaIbv, 1);

    ibv->be.ops = &rdma_ibv_ops;
    ibv->be.rm = rm;
    ibv->pdev = pdev;
    ibv->ibdev = g_strdup(cfg->ibdev);
    ibv->port = cfg->ibport;
    ibv->stop_fd = -1;
    ibv->cqs = g_hash_table_new(g_int64_hash, g_int64_equal);
    ibv->qps = g_hash_table_new(NULL, NULL);
    ibv->mrs = g_hash_table_new(NULL, NULL);
    ibv->slots = g_array_new(false, true, sizeof(RdmaIbvSlot));
    ibv->free_slots = g_array_new(false, false, sizeof(uint32_t));
    memset(ibv->host_gid, -1, sizeof(ibv->host_gid));

    if (!rdma_ibv_check_ram(ibv, errp) || !rdma_ibv_open(ibv, errp) ||
        !rdma_ibv_check_port(ibv, errp)) {
        goto fail;
    }
    ibv->channel = ibv_create_comp_channel(ibv->ctx);
    if (!ibv->channel) {
        error_setg_errno(errp, errno, "ibdev=%s: cannot create a completion "
                         "channel", ibv->ibdev);
        goto fail;
    }
    if (!rdma_ibv_mad_init(ibv, cfg->mad_chr, errp) ||
        !rdma_ibv_comp_start(ibv, errp)) {
        goto fail;
    }
    g_unix_set_fd_nonblocking(ibv->ctx->async_fd, true, NULL);
    qemu_set_fd_handler(ibv->ctx->async_fd, rdma_ibv_async_event, NULL, ibv);
    return &ibv->be;

fail:
    rdma_ibv_destroy(&ibv->be);
    return NULL;
}
