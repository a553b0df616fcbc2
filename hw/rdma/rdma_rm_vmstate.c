/*
 * RDMA device core: the objects in the migration stream.
 *
 * Objects refer to each other by handle, so each type travels as an array
 * of records (copies of the objects, page lists included) and the
 * destination rebuilds them under the same handles, keys and QP numbers
 * with rdma_rm_restore(), which checks every record as the command that
 * created the object was checked.  Counts are checked before anything is
 * allocated for them, and page lists stay as the runs the stream carried
 * until the limits of their object are checked: a stream cannot make the
 * destination allocate much more than it sends.  A load that fails half
 * way leaves zeroed records behind it, which the next load frees without
 * looking at anything but what was loaded.  Nothing here touches guest
 * memory (RAM may still be arriving, and the source's final RAM pass is
 * over when the device is saved).
 *
 * User MR page lists, the bulk of the state (32 MiB at the default
 * limits), do not change while their MR exists, so they do not wait for
 * the switch-over: a live section ("rdma-mr-pages", below) sends each
 * once, keyed by MR handle and serial, and the MR's record in the device
 * state carries the serial instead of the pages.  The destination keeps
 * what the live section sent as staged input only: a record takes a
 * staged list if it names its handle and serial, and then goes through
 * every check a record with the pages inline goes through.  The records
 * of all objects go there too, and the device state then carries only
 * those that changed since, naming the others by handle: some ten
 * thousand records at the default limits leave the downtime.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qemu/bswap.h"
#include "qemu/main-loop.h"
#include "migration/qemu-file-types.h"
#include "migration/qemu-file.h"
#include "migration/register.h"
#include "hw/qdev-core.h"
#include "rdma_compat.h"
#include "rdma_rm.h"
#include "rdma_backend.h"

/* The longest page list of any object (an MR of 2^18 pages: 2 MiB) */
#define RDMA_MIG_MAX_PAGES  (RDMA_PDIR_ENTRIES * RDMA_PDIR_ENTRIES)

RDMA_MIG_ZERO(RdmaPageList)
RDMA_MIG_ZERO(RdmaUc)
RDMA_MIG_ZERO(RdmaPd)
RDMA_MIG_ZERO(RdmaCq)
RDMA_MIG_ZERO(RdmaSrq)
RDMA_MIG_ZERO(RdmaMr)
RDMA_MIG_ZERO(RdmaQp)

/*
 * A page list travels as runs: each 64-bit word is a page address whose
 * low 12 bits (zero in an address) count the pages that follow it
 * contiguously, up to 4095.  Pinned guest memory is mostly in runs (huge
 * pages: 512), so a 1 GiB MR is kilobytes, not 2 MiB, and a list of
 * scattered pages costs what it did as an array.  Words are read in one
 * buffer and must add up to exactly npages; they stay runs (nruns) until
 * rdma_mig_expand_pages(), once the object's limits are known to hold.
 */
#define RDMA_MIG_RUN_MAX    (RDMA_PAGE_SIZE - 1)

static void rdma_mig_put_runs(QEMUFile *f, const RdmaPageList *l)
{
    g_autofree uint64_t *w = NULL;
    uint32_t n = 0;

    if (l->nruns) {
        /* Never expanded (a load that failed left it): runs already. */
        qemu_put_be32(f, l->nruns);
        for (uint32_t i = 0; i < l->nruns; i++) {
            qemu_put_be64(f, l->pages[i]);
        }
        return;
    }
    w = g_new(uint64_t, MAX(l->npages, 1));

    for (uint32_t i = 0; i < l->npages; n++) {
        uint32_t run = 0;

        while (i + run + 1 < l->npages && run < RDMA_MIG_RUN_MAX &&
               l->pages[i + run + 1] == l->pages[i + run] + RDMA_PAGE_SIZE) {
            run++;
        }
        w[n] = cpu_to_be64(l->pages[i] | run);
        i += run + 1;
    }
    qemu_put_be32(f, n);
    qemu_put_buffer(f, (uint8_t *)w, n * sizeof(uint64_t));
}

static int rdma_mig_put_pages(QEMUFile *f, void *pv, size_t size,
                              const VMStateField *field, JSONWriter *vmdesc)
{
    rdma_mig_put_runs(f, pv);
    return 0;
}

/* A user MR's pages: none if the live section sent them (mig_ref). */
static int rdma_mig_put_mr_pages(QEMUFile *f, void *pv, size_t size,
                                 const VMStateField *field,
                                 JSONWriter *vmdesc)
{
    const RdmaPageList *l = pv;

    if (l->mig_ref) {
        qemu_put_be32(f, 0);
    } else {
        rdma_mig_put_runs(f, l);
    }
    return 0;
}

/* Read @l->npages pages as runs (checked, not expanded). */
static int rdma_mig_get_runs(QEMUFile *f, RdmaPageList *l)
{
    uint32_t n = qemu_get_be32(f), done = 0;
    g_autofree uint64_t *w = NULL;

    if (n > l->npages) {
        error_report("rdma: incoming page list of %u runs for %u pages", n,
                     l->npages);
        return -EINVAL;
    }
    w = g_new(uint64_t, MAX(n, 1));
    qemu_get_buffer(f, (uint8_t *)w, n * sizeof(uint64_t));
    for (uint32_t i = 0; i < n; i++) {
        uint64_t v = be64_to_cpu(w[i]);
        uint32_t run = v & RDMA_MIG_RUN_MAX;
        uint64_t page = v & ~(uint64_t)RDMA_MIG_RUN_MAX;

        if (run + 1 > l->npages - done ||
            page + (uint64_t)run * RDMA_PAGE_SIZE < page) {
            error_report("rdma: incoming page runs exceed %u pages",
                         l->npages);
            return -EINVAL;
        }
        done += run + 1;
        w[i] = v;
    }
    if (done != l->npages) {
        error_report("rdma: incoming page runs make %u of %u pages", done,
                     l->npages);
        return -EINVAL;
    }
    if (n) {                        /* an empty list holds no memory */
        l->pages = g_steal_pointer(&w);
        l->nruns = n;
    }
    return 0;
}

/*
 * The lowest and highest page of @l, still runs that add up (loaded by
 * rdma_mig_get_runs(): pages aligned, none wraps), into its span_lo and
 * span_hi; a page 0 leaves the span unknown (0) for the restore to
 * refuse page by page.
 */
static void rdma_mig_runs_span(RdmaPageList *l)
{
    uint64_t lo = UINT64_MAX, hi = 0;

    for (uint32_t i = 0; i < l->nruns; i++) {
        uint64_t page = l->pages[i] & ~(uint64_t)RDMA_MIG_RUN_MAX;
        uint64_t last = page + (l->pages[i] & RDMA_MIG_RUN_MAX) *
                        (uint64_t)RDMA_PAGE_SIZE;

        lo = MIN(lo, page);
        hi = MAX(hi, last);
    }
    if (!l->nruns || !lo || hi > UINT64_MAX - RDMA_PAGE_SIZE) {
        lo = hi = 0;
    }
    l->span_lo = lo;
    l->span_hi = hi;
}

static int rdma_mig_get_pages(QEMUFile *f, void *pv, size_t size,
                              const VMStateField *field)
{
    return rdma_mig_get_runs(f, pv);
}

static int rdma_mig_get_mr_pages(QEMUFile *f, void *pv, size_t size,
                                 const VMStateField *field)
{
    RdmaPageList *l = pv;

    if (!l->mig_ref) {
        return rdma_mig_get_runs(f, l);
    }
    /* Taken from the staged lists in rdma_mig_take_staged() */
    if (qemu_get_be32(f) != 0 || !l->npages) {
        error_report("rdma: incoming MR record names staged pages and "
                     "carries pages too (or has none)");
        return -EINVAL;
    }
    return 0;
}

bool rdma_mig_expand_pages(RdmaPageList *l, uint32_t max, const char **why)
{
    g_autofree uint64_t *w = NULL;
    uint32_t done = 0;

    if (!l->nruns) {
        return true;                /* nothing loaded, or expanded already */
    }
    if (l->npages > max) {
        *why = "more pages than the object may have";
        return false;
    }
    if (l->nruns == l->npages) {
        l->nruns = 0;               /* no run: each word is its page */
        return true;
    }
    w = l->pages;
    l->pages = g_new(uint64_t, l->npages);
    for (uint32_t i = 0; i < l->nruns; i++) {
        for (uint32_t j = 0; j <= (w[i] & RDMA_MIG_RUN_MAX); j++) {
            l->pages[done++] = (w[i] & ~(uint64_t)RDMA_MIG_RUN_MAX) +
                               (uint64_t)j * RDMA_PAGE_SIZE;
        }
    }
    l->nruns = 0;
    return true;
}

static const VMStateInfo vmstate_info_rdma_pages = {
    .name = "rdma-pages",
    .get = rdma_mig_get_pages,
    .put = rdma_mig_put_pages,
};

static const VMStateInfo vmstate_info_rdma_mr_pages = {
    .name = "rdma-mr-pages",
    .get = rdma_mig_get_mr_pages,
    .put = rdma_mig_put_mr_pages,
};

/*
 * A page count, checked as it is read (before the pages are).  Not a
 * VMSTATE_VALIDATE: a field with a test makes QEMU describe every record
 * of an array in the stream's JSON description (vmsd_can_compress()), and
 * for a thousand QPs that took most of the downtime.  The stream is the
 * same: a big-endian 32-bit word.
 */
static int rdma_mig_get_npages(QEMUFile *f, void *pv, size_t size,
                               const VMStateField *field)
{
    uint32_t *npages = pv;

    *npages = qemu_get_be32(f);
    if (*npages > RDMA_MIG_MAX_PAGES) {
        error_report("rdma: incoming page list of %u pages", *npages);
        return -EINVAL;
    }
    return 0;
}

static int rdma_mig_put_npages(QEMUFile *f, void *pv, size_t size,
                               const VMStateField *field, JSONWriter *vmdesc)
{
    qemu_put_be32(f, *(uint32_t *)pv);
    return 0;
}

static const VMStateInfo vmstate_info_rdma_npages = {
    .name = "rdma-npages",
    .get = rdma_mig_get_npages,
    .put = rdma_mig_put_npages,
};

#define RDMA_MIG_NPAGES \
    VMSTATE_SINGLE(npages, RdmaPageList, 0, vmstate_info_rdma_npages, uint32_t)

const VMStateDescription vmstate_rdma_page_list = {
    .name = "rdma-page-list",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaPageList,
    .fields = (const VMStateField[]) {
        RDMA_MIG_NPAGES,
        {
            .name = "pages",
            .info = &vmstate_info_rdma_pages,
            .flags = VMS_SINGLE,
            .size = sizeof(RdmaPageList),
        },
        VMSTATE_END_OF_LIST()
    },
};

/* A user MR's pages: in the record, or the serial of a staged list */
static const VMStateDescription vmstate_rdma_mr_pages = {
    .name = "rdma-mr-pages",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaPageList,
    .fields = (const VMStateField[]) {
        RDMA_MIG_NPAGES,
        VMSTATE_UINT64(mig_ref, RdmaPageList),
        {
            .name = "pages",
            .info = &vmstate_info_rdma_mr_pages,
            .flags = VMS_SINGLE,
            .size = sizeof(RdmaPageList),
        },
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_limits = {
    .name = "rdma-limits",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(max_mr_size, RdmaDevLimits),
        VMSTATE_UINT32(max_uc, RdmaDevLimits),
        VMSTATE_UINT32(max_pd, RdmaDevLimits),
        VMSTATE_UINT32(max_cq, RdmaDevLimits),
        VMSTATE_UINT32(max_cqe, RdmaDevLimits),
        VMSTATE_UINT32(max_qp, RdmaDevLimits),
        VMSTATE_UINT32(max_qp_wr, RdmaDevLimits),
        VMSTATE_UINT32(max_sge, RdmaDevLimits),
        VMSTATE_UINT32(max_srq, RdmaDevLimits),
        VMSTATE_UINT32(max_srq_wr, RdmaDevLimits),
        VMSTATE_UINT32(max_srq_sge, RdmaDevLimits),
        VMSTATE_UINT32(max_mr, RdmaDevLimits),
        VMSTATE_UINT32(max_ah, RdmaDevLimits),
        VMSTATE_UINT32(max_qp_rd_atom, RdmaDevLimits),
        VMSTATE_UINT32(max_qp_init_rd_atom, RdmaDevLimits),
        VMSTATE_UINT32(max_fast_reg_pages, RdmaDevLimits),
        VMSTATE_UINT32(max_ring_pages, RdmaDevLimits),
        VMSTATE_UINT64(max_mr_pages_total, RdmaDevLimits),
        VMSTATE_UINT32(gid_tbl_len, RdmaDevLimits),
        VMSTATE_UINT16(max_pkeys, RdmaDevLimits),
        VMSTATE_UINT8(max_mtu, RdmaDevLimits),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_gid = {
    .name = "rdma-gid",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_BOOL(valid, RdmaGid),
        VMSTATE_UINT8_ARRAY(gid, RdmaGid, 16),
        VMSTATE_UINT8(type, RdmaGid),
        VMSTATE_UINT32(mtu, RdmaGid),
        VMSTATE_UINT32(vlan, RdmaGid),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_uc = {
    .name = "rdma-uc",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaUc,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(handle, RdmaUc),
        VMSTATE_UINT32(uar_index, RdmaUc),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_pd = {
    .name = "rdma-pd",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaPd,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(handle, RdmaPd),
        VMSTATE_UINT32(ctx_handle, RdmaPd),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_cq = {
    .name = "rdma-cq",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaCq,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(handle, RdmaCq),
        VMSTATE_UINT32(ctx_handle, RdmaCq),
        VMSTATE_UINT32(cqe, RdmaCq),
        VMSTATE_STRUCT(ring, RdmaCq, 1, vmstate_rdma_page_list, RdmaPageList),
        VMSTATE_BOOL(armed, RdmaCq),
        VMSTATE_BOOL(armed_solicited, RdmaCq),
        VMSTATE_BOOL(overrun, RdmaCq),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_srq = {
    .name = "rdma-srq",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaSrq,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(handle, RdmaSrq),
        VMSTATE_UINT32(pd_handle, RdmaSrq),
        VMSTATE_UINT32(max_wr, RdmaSrq),
        VMSTATE_UINT32(max_sge, RdmaSrq),
        VMSTATE_UINT32(srq_limit, RdmaSrq),
        VMSTATE_UINT32(wqe_size, RdmaSrq),
        VMSTATE_STRUCT(ring, RdmaSrq, 1, vmstate_rdma_page_list,
                       RdmaPageList),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_mr = {
    .name = "rdma-mr",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaMr,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(handle, RdmaMr),
        VMSTATE_UINT32(pd_handle, RdmaMr),
        VMSTATE_RDMA_ENUM(kind, RdmaMr),
        VMSTATE_UINT32(access, RdmaMr),
        VMSTATE_UINT64(iova, RdmaMr),
        VMSTATE_UINT64(length, RdmaMr),
        VMSTATE_UINT32(lkey, RdmaMr),
        VMSTATE_UINT32(rkey, RdmaMr),
        VMSTATE_UINT32(max_pages, RdmaMr),
        VMSTATE_BOOL(frmr_valid, RdmaMr),
        VMSTATE_STRUCT(pages, RdmaMr, 1, vmstate_rdma_mr_pages,
                       RdmaPageList),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_qp_cap = {
    .name = "rdma-qp-cap",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(max_send_wr, RdmaQpCap),
        VMSTATE_UINT32(max_recv_wr, RdmaQpCap),
        VMSTATE_UINT32(max_send_sge, RdmaQpCap),
        VMSTATE_UINT32(max_recv_sge, RdmaQpCap),
        VMSTATE_UINT32(max_inline_data, RdmaQpCap),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_ah = {
    .name = "rdma-ah",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8_ARRAY(dgid, RdmaAh, 16),
        VMSTATE_UINT32(flow_label, RdmaAh),
        VMSTATE_UINT8(sgid_index, RdmaAh),
        VMSTATE_UINT8(hop_limit, RdmaAh),
        VMSTATE_UINT8(traffic_class, RdmaAh),
        VMSTATE_UINT8(sl, RdmaAh),
        VMSTATE_UINT8(port_num, RdmaAh),
        VMSTATE_UINT8_ARRAY(dmac, RdmaAh, 6),
        VMSTATE_UINT16(vlan_id, RdmaAh),
        VMSTATE_BOOL(has_grh, RdmaAh),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_qp_attr = {
    .name = "rdma-qp-attr",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_RDMA_ENUM(qp_state, RdmaQpAttr),
        VMSTATE_RDMA_ENUM(cur_qp_state, RdmaQpAttr),
        VMSTATE_UINT8(path_mtu, RdmaQpAttr),
        VMSTATE_UINT8(path_mig_state, RdmaQpAttr),
        VMSTATE_UINT32(qkey, RdmaQpAttr),
        VMSTATE_UINT32(rq_psn, RdmaQpAttr),
        VMSTATE_UINT32(sq_psn, RdmaQpAttr),
        VMSTATE_UINT32(dest_qp_num, RdmaQpAttr),
        VMSTATE_UINT32(qp_access_flags, RdmaQpAttr),
        VMSTATE_UINT16(pkey_index, RdmaQpAttr),
        VMSTATE_BOOL(en_sqd_async_notify, RdmaQpAttr),
        VMSTATE_UINT8(max_rd_atomic, RdmaQpAttr),
        VMSTATE_UINT8(max_dest_rd_atomic, RdmaQpAttr),
        VMSTATE_UINT8(min_rnr_timer, RdmaQpAttr),
        VMSTATE_UINT8(port_num, RdmaQpAttr),
        VMSTATE_UINT8(timeout, RdmaQpAttr),
        VMSTATE_UINT8(retry_cnt, RdmaQpAttr),
        VMSTATE_UINT8(rnr_retry, RdmaQpAttr),
        VMSTATE_STRUCT(ah, RdmaQpAttr, 1, vmstate_rdma_ah, RdmaAh),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_qp = {
    .name = "rdma-qp",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaQp,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(handle, RdmaQp),
        VMSTATE_UINT32(qpn, RdmaQp),
        VMSTATE_RDMA_ENUM(type, RdmaQp),
        VMSTATE_UINT32(pd_handle, RdmaQp),
        VMSTATE_UINT32(send_cq_handle, RdmaQp),
        VMSTATE_UINT32(recv_cq_handle, RdmaQp),
        VMSTATE_UINT32(srq_handle, RdmaQp),
        VMSTATE_BOOL(is_srq, RdmaQp),
        VMSTATE_BOOL(sq_sig_all, RdmaQp),
        VMSTATE_STRUCT(cap, RdmaQp, 1, vmstate_rdma_qp_cap, RdmaQpCap),
        VMSTATE_UINT32(send_pages, RdmaQp),
        VMSTATE_UINT32(send_wqe_size, RdmaQp),
        VMSTATE_UINT32(recv_wqe_size, RdmaQp),
        VMSTATE_STRUCT(ring, RdmaQp, 1, vmstate_rdma_page_list, RdmaPageList),
        VMSTATE_STRUCT(attr, RdmaQp, 1, vmstate_rdma_qp_attr, RdmaQpAttr),
        /* Work the send queue had left for the bottom half */
        VMSTATE_BOOL(sq_pending, RdmaQp),
        VMSTATE_END_OF_LIST()
    },
};

/* Records */

static void **rdma_mig_array(RdmaResources *rm, RdmaResType type,
                             size_t *size)
{
    switch (type) {
    case RDMA_RES_UC:
        *size = sizeof(RdmaUc);
        return (void **)&rm->mig.uc;
    case RDMA_RES_PD:
        *size = sizeof(RdmaPd);
        return (void **)&rm->mig.pd;
    case RDMA_RES_CQ:
        *size = sizeof(RdmaCq);
        return (void **)&rm->mig.cq;
    case RDMA_RES_SRQ:
        *size = sizeof(RdmaSrq);
        return (void **)&rm->mig.srq;
    case RDMA_RES_MR:
        *size = sizeof(RdmaMr);
        return (void **)&rm->mig.mr;
    default:
        *size = sizeof(RdmaQp);
        return (void **)&rm->mig.qp;
    }
}

/* The page list a record holds, if its type has one. */
static RdmaPageList *rdma_mig_pages(RdmaResType type, void *rec)
{
    switch (type) {
    case RDMA_RES_CQ:
        return &((RdmaCq *)rec)->ring;
    case RDMA_RES_SRQ:
        return &((RdmaSrq *)rec)->ring;
    case RDMA_RES_MR:
        return &((RdmaMr *)rec)->pages;
    case RDMA_RES_QP:
        return &((RdmaQp *)rec)->ring;
    default:
        return NULL;
    }
}

/* Any record, on the stack */
typedef union RdmaMigRec {
    RdmaUc uc;
    RdmaPd pd;
    RdmaCq cq;
    RdmaSrq srq;
    RdmaMr mr;
    RdmaQp qp;
} RdmaMigRec;

static const VMStateDescription *const rdma_mig_vmsd[RDMA_RES_MAX] = {
    [RDMA_RES_UC] = &vmstate_rdma_uc,
    [RDMA_RES_PD] = &vmstate_rdma_pd,
    [RDMA_RES_CQ] = &vmstate_rdma_cq,
    [RDMA_RES_SRQ] = &vmstate_rdma_srq,
    [RDMA_RES_MR] = &vmstate_rdma_mr,
    [RDMA_RES_QP] = &vmstate_rdma_qp,
};

/*
 * Does the source's copy of a record sent before the switch-over keep
 * its page list?  A ring's and an FRMR's, to see them change; not a user
 * MR's: it never changes, the live section sends it apart, and the MR's
 * serial (in the record) says which MR it is.
 */
static bool rdma_mig_rec_keeps_pages(RdmaResType type, const void *rec)
{
    return type != RDMA_RES_MR || ((const RdmaMr *)rec)->kind != RDMA_MR_USER;
}

/* The source's copy of object @obj of @type as the live section sent it */
static void *rdma_mig_rec_copy(RdmaResType type, const void *obj, size_t size)
{
    void *copy = g_memdup2(obj, size);
    RdmaPageList *pl = rdma_mig_pages(type, copy);

    if (pl) {
        pl->pages = rdma_mig_rec_keeps_pages(type, copy) && pl->npages ?
                    g_memdup2(pl->pages, pl->npages * sizeof(uint64_t)) :
                    NULL;
    }
    return copy;
}

/* A record copied or loaded apart from the arrays, with its page list */
static void rdma_mig_rec_free(RdmaResType type, void *rec)
{
    RdmaPageList *pl = rec ? rdma_mig_pages(type, rec) : NULL;

    if (pl) {
        g_free(pl->pages);
    }
    g_free(rec);
}

/*
 * Is @obj as @copy says it was sent: the same bytes (its page list's
 * contents, not where they are) and the same page list?  What is no
 * field of the stream (a backend pointer, a list link) counts too: such
 * a change only sends a record again.
 */
static bool rdma_mig_rec_same(RdmaResType type, const void *obj,
                              void *copy, size_t size)
{
    RdmaMigRec now;
    RdmaPageList *pl, *cpl;

    memcpy(&now, obj, size);
    pl = rdma_mig_pages(type, &now);
    if (pl) {
        cpl = rdma_mig_pages(type, copy);
        if (pl->npages != cpl->npages ||
            (rdma_mig_rec_keeps_pages(type, obj) && pl->npages &&
             memcmp(pl->pages, cpl->pages, pl->npages * sizeof(uint64_t)))) {
            return false;
        }
        pl->pages = cpl->pages;
    }
    return !memcmp(&now, copy, size);
}

/* Free the records the live section sent (source) or staged (destination) */
static void rdma_mig_recs_free(RdmaResources *rm, void ***recs)
{
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        for (uint32_t h = 0; recs[t] && h < rm->tables[t].size; h++) {
            rdma_mig_rec_free(t, recs[t][h]);
        }
        g_clear_pointer(&recs[t], g_free);
    }
}

/*
 * Drop the records.  Loaded records own the page lists no object took;
 * saved ones share them with the objects.
 */
static void rdma_mig_free(RdmaResources *rm, bool loaded)
{
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        size_t size;
        void **array = rdma_mig_array(rm, t, &size);

        for (int32_t i = 0; loaded && *array && i < rm->mig.n[t]; i++) {
            RdmaPageList *pl = rdma_mig_pages(t, *array + i * size);

            if (pl) {
                g_free(pl->pages);
            }
        }
        g_free(*array);
        *array = NULL;
        rm->mig.n[t] = 0;
    }
    if (loaded) {
        g_free(rm->mig.gids);
    }
    rm->mig.gids = NULL;
    g_clear_pointer(&rm->mig.staged, g_free);
    memset(rm->mig.nstaged, 0, sizeof(rm->mig.nstaged));
    rm->mig.nstaged_all = 0;
}

void rdma_rm_mig_cleanup(RdmaResources *rm)
{
    rdma_mig_free(rm, rm->mig.incoming);
    rm->mig.incoming = false;
}

/* Staged page lists (the live section's part in the device state) */

/*
 * Did the live section send @mr's pages?  Only a user MR's: an FRMR's
 * change with every fast-register WR.
 */
static bool rdma_mig_mr_staged(RdmaResources *rm, const RdmaMr *mr)
{
    return rm->live.sent && mr->kind == RDMA_MR_USER && mr->pages.npages &&
           rm->live.sent[mr->handle] == mr->serial;
}

static void rdma_mig_staged_free(RdmaResources *rm)
{
    for (uint32_t h = 0; rm->live.staged &&
         h < rm->tables[RDMA_RES_MR].size; h++) {
        g_free(rm->live.staged[h].pages.pages);
        rm->live.staged[h] = (RdmaMigStaged) { 0 };
    }
    rm->live.staged_pages = 0;
}

/*
 * Give each MR record that names a staged list (handle and serial) that
 * list, which then is checked as pages in the record are; drop the lists
 * no record took (MRs deregistered since they were sent).
 */
static const char *rdma_mig_take_staged(RdmaResources *rm)
{
    const char *why = NULL;
    int32_t i;

    for (i = 0; !why && i < rm->mig.n[RDMA_RES_MR]; i++) {
        RdmaMr *rec = &rm->mig.mr[i];
        RdmaMigStaged *st;

        if (!rec->pages.mig_ref) {
            continue;
        }
        if (rec->kind != RDMA_MR_USER ||
            rec->handle >= rm->tables[RDMA_RES_MR].size ||
            !rm->live.staged) {
            why = "staged pages for an MR that cannot have them";
            break;
        }
        st = &rm->live.staged[rec->handle];
        if (st->serial != rec->pages.mig_ref ||
            st->pages.npages != rec->pages.npages) {
            why = "its pages were not staged, or staged for another MR";
            break;
        }
        rec->pages = st->pages;
        rec->pages.mig_ref = 0;
        *st = (RdmaMigStaged) { 0 };
    }
    if (why) {
        const RdmaMr *rec = &rm->mig.mr[i];

        error_report("rdma: incoming mr %u refused: %s (serial %" PRIu64
                     ", %u pages)", rec->handle, why, rec->pages.mig_ref,
                     rec->pages.npages);
    }
    rdma_mig_staged_free(rm);
    return why;
}

/*
 * The records of the objects, except those the live section sent that
 * did not change since: their handles only (mig.staged).
 */
static int rdma_rm_pre_save(void *opaque)
{
    RdmaResources *rm = opaque;
    uint32_t all = 0;

    /* What a load that failed left (a post_load would have freed it) */
    rdma_rm_mig_cleanup(rm);
    rm->mig.limits = rm->limits;
    rm->mig.gids = rm->gids;
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        all += rm->tables[t].used;
    }
    rm->mig.staged = g_new(uint32_t, MAX(all, 1));
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        RdmaTable *tab = &rm->tables[t];
        void **sent = rm->live.sent_rec[t];
        size_t size;
        void **array = rdma_mig_array(rm, t, &size);
        int32_t n = 0, nstaged = 0;

        *array = g_malloc0_n(MAX(tab->used, 1), size);
        for (uint32_t h = 0; h < tab->size; h++) {
            if (!tab->slots[h]) {
                continue;
            }
            if (sent && sent[h] &&
                rdma_mig_rec_same(t, tab->slots[h], sent[h], size)) {
                rm->mig.staged[rm->mig.nstaged_all++] = h;
                nstaged++;
            } else {
                memcpy(*array + n++ * size, tab->slots[h], size);
            }
        }
        rm->mig.n[t] = n;
        rm->mig.nstaged[t] = nstaged;
    }
    for (int32_t i = 0; i < rm->mig.n[RDMA_RES_MR]; i++) {
        RdmaMr *rec = &rm->mig.mr[i];

        if (rdma_mig_mr_staged(rm, rec)) {
            rec->pages.mig_ref = rec->serial;
        }
    }
    return 0;
}

static int rdma_rm_post_save(void *opaque)
{
    rdma_mig_free(opaque, false);
    return 0;
}

static int rdma_rm_pre_load(void *opaque)
{
    RdmaResources *rm = opaque;

    rdma_rm_reset(rm);
    rdma_mig_free(rm, true);
    memset(&rm->mig, 0, sizeof(rm->mig));
    rm->mig.incoming = true;
    rm->mig.gids = g_new0(RdmaGid, rm->limits.gid_tbl_len);
    return 0;
}

/* The device must be configured as on the source (same properties). */
static bool rdma_mig_limits_ok(void *opaque, int version_id)
{
    RdmaResources *rm = opaque;
    const RdmaDevLimits *a = &rm->limits, *b = &rm->mig.limits;

    if (a->max_mr_size != b->max_mr_size || a->max_uc != b->max_uc ||
        a->max_pd != b->max_pd || a->max_cq != b->max_cq ||
        a->max_cqe != b->max_cqe || a->max_qp != b->max_qp ||
        a->max_qp_wr != b->max_qp_wr || a->max_sge != b->max_sge ||
        a->max_srq != b->max_srq || a->max_srq_wr != b->max_srq_wr ||
        a->max_srq_sge != b->max_srq_sge || a->max_mr != b->max_mr ||
        a->max_ah != b->max_ah || a->max_qp_rd_atom != b->max_qp_rd_atom ||
        a->max_qp_init_rd_atom != b->max_qp_init_rd_atom ||
        a->max_fast_reg_pages != b->max_fast_reg_pages ||
        a->max_ring_pages != b->max_ring_pages ||
        a->max_mr_pages_total != b->max_mr_pages_total ||
        a->gid_tbl_len != b->gid_tbl_len || a->max_pkeys != b->max_pkeys ||
        a->max_mtu != b->max_mtu) {
        error_report("rdma: the incoming device's limits differ from this "
                     "one's: start the destination with the same "
                     "dev-caps-* and max-mr-pages-total properties");
        return false;
    }
    return true;
}

/*
 * The counts bound the record arrays, allocated here zeroed when loading
 * (a VALIDATE runs on save too), not by VMS_ALLOC, which leaves what a
 * failed load did not reach as heap garbage: a record the load did not
 * reach holds no page list.
 */
static bool rdma_mig_counts_ok(void *opaque, int version_id)
{
    RdmaResources *rm = opaque;

    uint32_t all = 0;

    for (int t = 0; t < RDMA_RES_MAX; t++) {
        if (rm->mig.n[t] < 0 || rm->mig.nstaged[t] < 0 ||
            (int64_t)rm->mig.n[t] + rm->mig.nstaged[t] >
            rm->tables[t].size - rm->tables[t].first) {
            error_report("rdma: incoming %s count %d (and %d sent before) "
                         "out of range", rdma_rm_type_name(t), rm->mig.n[t],
                         rm->mig.nstaged[t]);
            /* nothing to free */
            memset(rm->mig.n, 0, sizeof(rm->mig.n));
            memset(rm->mig.nstaged, 0, sizeof(rm->mig.nstaged));
            return false;
        }
        all += rm->mig.nstaged[t];
    }
    if (!rm->mig.incoming) {
        return true;
    }
    /* Room for the records sent before, taken in post_load */
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        size_t size;
        void **array = rdma_mig_array(rm, t, &size);

        *array = g_malloc0_n(MAX(rm->mig.n[t] + rm->mig.nstaged[t], 1),
                             size);
    }
    rm->mig.nstaged_all = all;
    rm->mig.staged = g_new0(uint32_t, MAX(all, 1));
    return true;
}

/*
 * Expand the page lists of the records once each fits its object's
 * limits: a ring its ring limit, an FRMR its fast-register limit, the
 * user MRs together the device's page budget.
 */
static const char *rdma_mig_expand_all(RdmaResources *rm)
{
    const RdmaDevLimits *l = &rm->limits;
    uint64_t mr_pages = 0;
    const char *why = NULL;

    for (int32_t i = 0; i < rm->mig.n[RDMA_RES_MR]; i++) {
        if (rm->mig.mr[i].kind == RDMA_MR_USER) {
            mr_pages += rm->mig.mr[i].pages.npages;
        }
    }
    if (mr_pages > l->max_mr_pages_total) {
        return "MR pages over the device's max-mr-pages-total";
    }
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        size_t size;
        void **array = rdma_mig_array(rm, t, &size);

        for (int32_t i = 0; i < rm->mig.n[t]; i++) {
            void *rec = *array + i * size;
            RdmaPageList *pl = rdma_mig_pages(t, rec);
            uint32_t max = t != RDMA_RES_MR ? l->max_ring_pages :
                           ((RdmaMr *)rec)->kind == RDMA_MR_FRMR ?
                           l->max_fast_reg_pages : RDMA_MIG_MAX_PAGES;

            if (pl && !rdma_mig_expand_pages(pl, max, &why)) {
                return why;
            }
        }
    }
    return NULL;
}

/*
 * Put the records the live section sent of the objects the device state
 * lists by handle after the records it carries: each must have come, and
 * is taken once; then every record goes through the same checks.
 */
static const char *rdma_mig_take_records(RdmaResources *rm)
{
    uint32_t k = 0;

    for (int t = 0; t < RDMA_RES_MAX; t++) {
        void **staged = rm->live.staged_rec[t];
        size_t size;
        void **array = rdma_mig_array(rm, t, &size);

        for (int32_t i = 0; i < rm->mig.nstaged[t]; i++) {
            uint32_t h = rm->mig.staged[k++];

            if (!staged || h >= rm->tables[t].size || !staged[h]) {
                error_report("rdma: incoming %s %u refused: its record was "
                             "not sent before the switch-over (or twice "
                             "named)", rdma_rm_type_name(t), h);
                return "record not sent before the switch-over";
            }
            /* The record's page list goes with it: the array owns it. */
            memcpy(*array + rm->mig.n[t]++ * size, staged[h], size);
            g_free(staged[h]);
            staged[h] = NULL;
        }
    }
    return NULL;
}

static int rdma_rm_post_load(void *opaque, int version_id)
{
    /* Each object after those it refers to. */
    static const RdmaResType order[] = {
        RDMA_RES_UC, RDMA_RES_PD, RDMA_RES_CQ, RDMA_RES_SRQ, RDMA_RES_MR,
        RDMA_RES_QP,
    };
    RdmaResources *rm = opaque;
    const char *why = rdma_mig_take_records(rm);

    if (!why) {
        why = rdma_mig_take_staged(rm);
    }
    if (!why) {
        why = rdma_mig_expand_all(rm);
        if (why) {
            error_report("rdma: incoming state refused: %s", why);
        }
    }
    if (!why) {
        why = rdma_rm_restore_gids(rm, rm->mig.gids);
    }
    for (int i = 0; !why && i < ARRAY_SIZE(order); i++) {
        size_t size;
        void **array = rdma_mig_array(rm, order[i], &size);

        for (int32_t j = 0; !why && j < rm->mig.n[order[i]]; j++) {
            void *rec = *array + j * size;

            why = rdma_rm_restore(rm, order[i], rec);
            if (why) {
                error_report("rdma: incoming %s %u refused: %s",
                             rdma_rm_type_name(order[i]), *(uint32_t *)rec,
                             why);
            }
        }
    }
    rdma_mig_free(rm, true);
    if (why) {
        rdma_rm_reset(rm);
        return -EINVAL;
    }
    return 0;
}

const VMStateDescription vmstate_rdma_rm = {
    .name = "rdma-rm",
    /* 2: MR key generations, 3: mig_ref, 4: records sent before */
    .version_id = 4,
    .minimum_version_id = 4,
    .pre_save = rdma_rm_pre_save,
    .post_save = rdma_rm_post_save,
    .pre_load = rdma_rm_pre_load,
    .post_load = rdma_rm_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT(mig.limits, RdmaResources, 1, vmstate_rdma_limits,
                       RdmaDevLimits),
        VMSTATE_VALIDATE("limits", rdma_mig_limits_ok),
        /* As long as the MR table: the limits are this device's. */
        VMSTATE_VBUFFER_UINT32(mr_gen, RdmaResources, 0, NULL,
                               tables[RDMA_RES_MR].size),
        VMSTATE_STRUCT_VARRAY_POINTER_UINT32(mig.gids, RdmaResources,
                                             limits.gid_tbl_len,
                                             vmstate_rdma_gid, RdmaGid),
        VMSTATE_INT32_ARRAY(mig.n, RdmaResources, RDMA_RES_MAX),
        VMSTATE_INT32_ARRAY(mig.nstaged, RdmaResources, RDMA_RES_MAX),
        VMSTATE_VALIDATE("counts", rdma_mig_counts_ok),
        VMSTATE_VARRAY_UINT32(mig.staged, RdmaResources, mig.nstaged_all, 0,
                              vmstate_info_uint32, uint32_t),
        VMSTATE_STRUCT_VARRAY_POINTER_INT32(mig.uc, RdmaResources,
                                            mig.n[RDMA_RES_UC],
                                            vmstate_rdma_uc, RdmaUc),
        VMSTATE_STRUCT_VARRAY_POINTER_INT32(mig.pd, RdmaResources,
                                            mig.n[RDMA_RES_PD],
                                            vmstate_rdma_pd, RdmaPd),
        VMSTATE_STRUCT_VARRAY_POINTER_INT32(mig.cq, RdmaResources,
                                            mig.n[RDMA_RES_CQ],
                                            vmstate_rdma_cq, RdmaCq),
        VMSTATE_STRUCT_VARRAY_POINTER_INT32(mig.srq, RdmaResources,
                                            mig.n[RDMA_RES_SRQ],
                                            vmstate_rdma_srq, RdmaSrq),
        VMSTATE_STRUCT_VARRAY_POINTER_INT32(mig.mr, RdmaResources,
                                            mig.n[RDMA_RES_MR],
                                            vmstate_rdma_mr, RdmaMr),
        VMSTATE_STRUCT_VARRAY_POINTER_INT32(mig.qp, RdmaResources,
                                            mig.n[RDMA_RES_QP],
                                            vmstate_rdma_qp, RdmaQp),
        VMSTATE_UINT64(entry_bytes_max, RdmaResources),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * The live section: user MR page lists before the switch-over.
 *
 * Setup sends the list of every user MR; each iteration first says which
 * sent lists are no longer an MR's (deregistered, or the handle now
 * another MR's), then sends the lists of MRs registered since.  A list
 * is sent once: the source remembers, per MR handle, the serial of the
 * MR whose list went (live.sent), and the device state's MR record then
 * carries that serial (mig_ref) instead of the pages.  Lists of MRs
 * registered after the last iteration travel in their records, as
 * before.  Dropping before sending keeps the destination's staged pages
 * within what the source has registered at any time, so the destination
 * holds the staged lists to the device's page budget as they arrive.
 *
 * The records of all objects go the same way, after the lists: setup
 * sends each, an iteration those that changed since and a DROP_RECORD
 * for each object gone.  The device state then lists by handle the
 * objects whose record was sent and did not change (the source compares
 * each object with its copy of what it sent), and carries the records
 * of the others: at the default limits some ten thousand records, 0.6
 * MB through VMState field by field, leave the downtime.  The
 * destination keeps one record per object handle, and its post_load
 * takes those the device state lists and checks each as a record in
 * the device state.
 *
 * The stream: items, each a 32-bit tag, up to an END:
 *   PAGES        handle, serial (64), npages, then the runs as in a record;
 *   DROP         handle;
 *   RECORD       type, handle, then the record as in the device state;
 *   DROP_RECORD  type, handle.
 */
enum {
    RDMA_MIG_LIVE_END,
    RDMA_MIG_LIVE_PAGES,
    RDMA_MIG_LIVE_DROP,
    RDMA_MIG_LIVE_RECORD,
    RDMA_MIG_LIVE_DROP_RECORD,
};

#define RDMA_MIG_LIVE_ID        "rdma-mr-pages"

static RdmaMr *rdma_mig_live_mr(RdmaResources *rm, uint32_t h)
{
    RdmaMr *mr = rm->tables[RDMA_RES_MR].slots[h];

    return mr && mr->kind == RDMA_MR_USER && mr->pages.npages ? mr : NULL;
}

/*
 * The records of the objects new or changed since the last time, and a
 * DROP_RECORD for each gone.  A user MR's record names its pages by
 * serial: they went just before, in the same call.
 */
static void rdma_mig_live_send_records(QEMUFile *f, RdmaResources *rm)
{
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        RdmaTable *tab = &rm->tables[t];
        void **sent = rm->live.sent_rec[t];
        size_t size;

        rdma_mig_array(rm, t, &size);
        for (uint32_t h = 0; h < tab->size; h++) {
            void *obj = tab->slots[h];
            RdmaMigRec rec;

            if (sent[h] && obj && rdma_mig_rec_same(t, obj, sent[h], size)) {
                continue;
            }
            if (sent[h] && !obj) {
                qemu_put_be32(f, RDMA_MIG_LIVE_DROP_RECORD);
                qemu_put_be32(f, t);
                qemu_put_be32(f, h);
            }
            rdma_mig_rec_free(t, sent[h]);
            sent[h] = NULL;
            if (!obj) {
                continue;
            }
            memcpy(&rec, obj, size);
            if (t == RDMA_RES_MR && rdma_mig_mr_staged(rm, &rec.mr)) {
                rec.mr.pages.mig_ref = rec.mr.serial;
            }
            qemu_put_be32(f, RDMA_MIG_LIVE_RECORD);
            qemu_put_be32(f, t);
            qemu_put_be32(f, h);
            rdma_vmstate_save(f, rdma_mig_vmsd[t], &rec);
            sent[h] = rdma_mig_rec_copy(t, obj, size);
        }
    }
}

static void rdma_mig_live_send(QEMUFile *f, RdmaResources *rm)
{
    uint32_t size = rm->tables[RDMA_RES_MR].size;

    for (uint32_t h = 0; h < size; h++) {
        RdmaMr *mr = rdma_mig_live_mr(rm, h);

        if (rm->live.sent[h] && (!mr || mr->serial != rm->live.sent[h])) {
            qemu_put_be32(f, RDMA_MIG_LIVE_DROP);
            qemu_put_be32(f, h);
            rm->live.sent[h] = 0;
        }
    }
    for (uint32_t h = 0; h < size; h++) {
        RdmaMr *mr = rdma_mig_live_mr(rm, h);

        if (mr && rm->live.sent[h] != mr->serial) {
            qemu_put_be32(f, RDMA_MIG_LIVE_PAGES);
            qemu_put_be32(f, h);
            qemu_put_be64(f, mr->serial);
            qemu_put_be32(f, mr->pages.npages);
            rdma_mig_put_runs(f, &mr->pages);
            rm->live.sent[h] = mr->serial;
        }
    }
    rdma_mig_live_send_records(f, rm);
    qemu_put_be32(f, RDMA_MIG_LIVE_END);
}

static int rdma_mig_live_setup(QEMUFile *f, void *opaque, Error **errp)
{
    RdmaResources *rm = opaque;

    g_free(rm->live.sent);
    rm->live.sent = g_new0(uint64_t, rm->tables[RDMA_RES_MR].size);
    rdma_mig_recs_free(rm, rm->live.sent_rec);
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        rm->live.sent_rec[t] = g_new0(void *, rm->tables[t].size);
    }
    rdma_mig_live_send(f, rm);
    return 0;
}

/*
 * Iterations and the pending estimates run outside the BQL in a migration
 * (within it for savevm), and the MR table is the BQL's: take it if not
 * held.  An iteration then holds it while it writes the lists of the MRs
 * registered since the last one, as setup does for all of them.
 */
static bool rdma_mig_live_lock(void)
{
    if (bql_locked()) {
        return false;
    }
    bql_lock();
    return true;
}

static int rdma_mig_live_iterate(QEMUFile *f, void *opaque)
{
    bool locked = rdma_mig_live_lock();

    rdma_mig_live_send(f, opaque);
    if (locked) {
        bql_unlock();
    }
    return 1;                       /* all sent */
}

/* What is left goes in the MR records. */
static int rdma_mig_live_complete(QEMUFile *f, void *opaque)
{
    qemu_put_be32(f, RDMA_MIG_LIVE_END);
    return 0;
}

static void rdma_mig_live_cleanup(void *opaque)
{
    RdmaResources *rm = opaque;

    g_clear_pointer(&rm->live.sent, g_free);
    rdma_mig_recs_free(rm, rm->live.sent_rec);
}

/* The bytes of the lists not sent yet, at most (a word per page) */
static void rdma_mig_live_pending(void *opaque, uint64_t *must_precopy,
                                  uint64_t *can_postcopy)
{
    RdmaResources *rm = opaque;
    bool locked = rdma_mig_live_lock();

    for (uint32_t h = 0; rm->live.sent &&
         h < rm->tables[RDMA_RES_MR].size; h++) {
        RdmaMr *mr = rdma_mig_live_mr(rm, h);

        if (mr && rm->live.sent[h] != mr->serial) {
            *must_precopy += 20 + 8 * (uint64_t)mr->pages.npages;
        }
    }
    if (locked) {
        bql_unlock();
    }
}

static int rdma_mig_live_load_setup(QEMUFile *f, void *opaque, Error **errp)
{
    RdmaResources *rm = opaque;

    rdma_mig_staged_free(rm);
    g_free(rm->live.staged);
    rm->live.staged = g_new0(RdmaMigStaged, rm->tables[RDMA_RES_MR].size);
    rdma_mig_recs_free(rm, rm->live.staged_rec);
    for (int t = 0; t < RDMA_RES_MAX; t++) {
        rm->live.staged_rec[t] = g_new0(void *, rm->tables[t].size);
    }
    return 0;
}

static int rdma_mig_live_load_cleanup(void *opaque)
{
    RdmaResources *rm = opaque;

    rdma_mig_staged_free(rm);
    g_clear_pointer(&rm->live.staged, g_free);
    rdma_mig_recs_free(rm, rm->live.staged_rec);
    return 0;
}

/*
 * One staged list: an MR handle of this device, a page count an MR may
 * have, within the device's page budget with the other staged lists,
 * runs that add up (rdma_mig_get_runs()), kept as runs: expanded once
 * all the records are known to fit the limits (rdma_mig_expand_all()).
 * Its span is read from the runs now, before the switch-over, so that
 * the MR's restore in the downtime translates the span once instead of
 * reading every page (4 Mi at the default page budget, 2.8 ms).
 */
static const char *rdma_mig_live_get_list(QEMUFile *f, RdmaResources *rm,
                                          uint32_t *hp)
{
    RdmaTable *t = &rm->tables[RDMA_RES_MR];
    uint32_t h = *hp = qemu_get_be32(f);
    uint64_t serial = qemu_get_be64(f);
    uint32_t npages = qemu_get_be32(f);
    RdmaMigStaged *st;

    if (h < t->first || h >= t->size) {
        return "MR handle out of range";
    }
    st = &rm->live.staged[h];
    g_free(st->pages.pages);
    rm->live.staged_pages -= st->pages.npages;
    *st = (RdmaMigStaged) { 0 };
    if (!serial || !npages || npages > RDMA_MIG_MAX_PAGES) {
        return "serial or page count out of range";
    }
    if (rm->live.staged_pages + npages > rm->limits.max_mr_pages_total) {
        return "pages over the device's max-mr-pages-total";
    }
    st->pages.npages = npages;
    if (rdma_mig_get_runs(f, &st->pages) < 0) {
        *st = (RdmaMigStaged) { 0 };
        return "page runs invalid";
    }
    rdma_mig_runs_span(&st->pages);
    st->serial = serial;
    rm->live.staged_pages += npages;
    return NULL;
}

static const char *rdma_mig_live_get_drop(QEMUFile *f, RdmaResources *rm,
                                          uint32_t *hp)
{
    uint32_t h = *hp = qemu_get_be32(f);
    RdmaMigStaged *st;

    if (h >= rm->tables[RDMA_RES_MR].size) {
        return "MR handle out of range";
    }
    st = &rm->live.staged[h];
    rm->live.staged_pages -= st->pages.npages;
    g_free(st->pages.pages);
    *st = (RdmaMigStaged) { 0 };
    return NULL;
}

/*
 * A record of an object sent before the switch-over: a type, a handle of
 * its table and a record of that handle, which replaces one staged
 * before (the object changed).  Read by the device state's own fields
 * and getters; a ring over the ring limit is refused here, so that what
 * is kept stays within the limits.  Checked as an object when the
 * device state takes it (rdma_mig_take_records()).
 */
static const char *rdma_mig_live_get_record(QEMUFile *f, RdmaResources *rm,
                                            uint32_t *hp)
{
    uint32_t t = qemu_get_be32(f), h = *hp = qemu_get_be32(f);
    size_t size;
    void *rec;
    RdmaPageList *pl;

    if (t >= RDMA_RES_MAX) {
        return "object type out of range";
    }
    if (h < rm->tables[t].first || h >= rm->tables[t].size) {
        return "handle out of range";
    }
    rdma_mig_rec_free(t, rm->live.staged_rec[t][h]);
    rm->live.staged_rec[t][h] = NULL;
    rdma_mig_array(rm, t, &size);
    rec = g_malloc0(size);
    if (rdma_vmstate_load(f, rdma_mig_vmsd[t], rec, 1) < 0) {
        rdma_mig_rec_free(t, rec);
        return "record invalid";
    }
    pl = rdma_mig_pages(t, rec);
    if (*(uint32_t *)rec != h) {
        rdma_mig_rec_free(t, rec);
        return "record of another handle";
    }
    if (pl && t != RDMA_RES_MR && pl->npages > rm->limits.max_ring_pages) {
        rdma_mig_rec_free(t, rec);
        return "ring of more pages than the ring limit";
    }
    rm->live.staged_rec[t][h] = rec;
    return NULL;
}

static const char *rdma_mig_live_get_drop_record(QEMUFile *f,
                                                 RdmaResources *rm,
                                                 uint32_t *hp)
{
    uint32_t t = qemu_get_be32(f), h = *hp = qemu_get_be32(f);

    if (t >= RDMA_RES_MAX || h >= rm->tables[t].size) {
        return "object type or handle out of range";
    }
    rdma_mig_rec_free(t, rm->live.staged_rec[t][h]);
    rm->live.staged_rec[t][h] = NULL;
    return NULL;
}

static int rdma_mig_live_load(QEMUFile *f, void *opaque, int version_id)
{
    RdmaResources *rm = opaque;
    const char *why = NULL;
    uint32_t tag = 0, h = 0;

    if (!rm->live.staged) {
        error_report("rdma: incoming MR page lists without a setup");
        return -EINVAL;
    }
    while (!why) {
        tag = qemu_get_be32(f);
        h = 0;
        if (qemu_file_get_error(f)) {
            why = "stream ended";
        } else if (tag == RDMA_MIG_LIVE_END) {
            return 0;
        } else if (tag == RDMA_MIG_LIVE_PAGES) {
            why = rdma_mig_live_get_list(f, rm, &h);
        } else if (tag == RDMA_MIG_LIVE_DROP) {
            why = rdma_mig_live_get_drop(f, rm, &h);
        } else if (tag == RDMA_MIG_LIVE_RECORD) {
            why = rdma_mig_live_get_record(f, rm, &h);
        } else if (tag == RDMA_MIG_LIVE_DROP_RECORD) {
            why = rdma_mig_live_get_drop_record(f, rm, &h);
        } else {
            why = "unknown item";
        }
        if (!why && qemu_file_get_error(f)) {
            why = "stream ended";
        }
    }
    error_report("rdma: incoming state before the switch-over refused: %s "
                 "(item %u, handle %u)", why, tag, h);
    rdma_mig_staged_free(rm);
    rdma_mig_recs_free(rm, rm->live.staged_rec);
    return -EINVAL;
}

static const SaveVMHandlers rdma_mig_live_handlers = {
    .save_setup = rdma_mig_live_setup,
    .save_live_iterate = rdma_mig_live_iterate,
    .RDMA_SAVE_COMPLETE = rdma_mig_live_complete,
    .save_cleanup = rdma_mig_live_cleanup,
    .state_pending_estimate = rdma_mig_live_pending,
    .state_pending_exact = rdma_mig_live_pending,
    .load_setup = rdma_mig_live_load_setup,
    .load_state = rdma_mig_live_load,
    .load_cleanup = rdma_mig_live_load_cleanup,
};

void rdma_rm_mig_live_init(RdmaResources *rm)
{
    g_autofree char *path = qdev_get_dev_path(DEVICE(rm->pdev));
    g_autofree char *id = g_strdup_printf("%s/%s", path ?: "",
                                          RDMA_MIG_LIVE_ID);

    register_savevm_live(id, 0, 2, &rdma_mig_live_handlers, rm);
}

/*
 * The live section goes with the device's unrealize, also when the rest
 * of the teardown is deferred past it (pvrdma_exit()): a device plugged
 * into the same slot at once registers the same section name, and QEMU
 * exits on a duplicate.  A second call finds nothing to remove.
 */
void rdma_rm_mig_live_unregister(RdmaResources *rm)
{
    unregister_savevm(VMSTATE_IF(rm->pdev), RDMA_MIG_LIVE_ID, rm);
}

void rdma_rm_mig_live_fini(RdmaResources *rm)
{
    rdma_rm_mig_live_unregister(rm);
    g_clear_pointer(&rm->live.sent, g_free);
    rdma_mig_staged_free(rm);
    g_clear_pointer(&rm->live.staged, g_free);
    rdma_mig_recs_free(rm, rm->live.sent_rec);
    rdma_mig_recs_free(rm, rm->live.staged_rec);
}
