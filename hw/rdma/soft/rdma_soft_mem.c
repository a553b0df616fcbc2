/*
 * The soft RDMA engine: keys, access rights and data movement.
 *
 * A local SGE or a remote (va, rkey, length) is resolved once into
 * segments of memory regions, checking key, PD, access rights and bounds
 * (written so that va + len cannot wrap).  Data then moves between guest
 * pages directly through dma_memory_map windows, one memcpy per contiguous
 * chunk, so a transfer between two guest buffers costs one copy.
 *
 * Data moves to and from ordinary guest RAM only.  The kernel's DMA MR
 * names every guest-physical address; a buffer there on MMIO would turn
 * the device's data into register writes of other devices (a bridge's
 * Secondary Bus Reset, a slot's power control) or of itself, so such a
 * buffer is a local protection error (rdma_ram_ok()).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/atomic.h"
#include "system/dma.h"
#include "rdma_soft.h"

/* Is [va, va + len) inside @mr?  DMA MRs cover all of guest memory. */
static bool rdma_soft_mr_covers(const RdmaMr *mr, uint64_t va, uint64_t len)
{
    switch (mr->kind) {
    case RDMA_MR_DMA:
        return true;
    case RDMA_MR_FRMR:
        if (!mr->frmr_valid) {
            return false;           /* not registered, or invalidated */
        }
        /* fall through */
    case RDMA_MR_USER:
        return va >= mr->iova && len <= mr->length &&
               va - mr->iova <= mr->length - len;
    default:
        return false;
    }
}

RdmaWcStatus rdma_soft_local_sgl(RdmaResources *rm, uint32_t pd_handle,
                                 const RdmaSge *sge, uint32_t num_sge,
                                 uint32_t access, RdmaSoftSgl *sgl)
{
    uint32_t i;

    sgl->nseg = 0;
    sgl->total = 0;
    for (i = 0; i < num_sge; i++) {
        RdmaMr *mr;

        if (!sge[i].length) {
            continue;
        }
        mr = rdma_rm_mr_by_key(rm, sge[i].lkey);
        if (!mr || mr->lkey != sge[i].lkey || mr->pd_handle != pd_handle ||
            (mr->access & access) != access ||
            !rdma_soft_mr_covers(mr, sge[i].addr, sge[i].length)) {
            return RDMA_WC_LOC_PROT_ERR;
        }
        sgl->seg[sgl->nseg++] = (RdmaSoftSeg) {
            .mr = mr, .va = sge[i].addr, .len = sge[i].length,
        };
        sgl->total += sge[i].length;
    }
    return RDMA_WC_SUCCESS;
}

bool rdma_soft_remote_seg(RdmaResources *rm, const RdmaQp *qp, uint64_t va,
                          uint32_t rkey, uint64_t len, uint32_t access,
                          RdmaSoftSgl *sgl)
{
    RdmaMr *mr = rdma_rm_mr_by_key(rm, rkey);

    /* Both the MR and the responder QP must allow the remote access. */
    if (!mr || mr->rkey != rkey || mr->pd_handle != qp->pd_handle ||
        (mr->access & access) != access ||
        (qp->attr.qp_access_flags & access) != access ||
        !rdma_soft_mr_covers(mr, va, len)) {
        return false;
    }
    sgl->seg[0] = (RdmaSoftSeg) { .mr = mr, .va = va, .len = len };
    sgl->nseg = 1;
    sgl->total = len;
    return true;
}

/*
 * Guest-physical address of @va in @mr and how many bytes are contiguous
 * from there, up to @want at least (physically adjacent pages are
 * merged).  Not further: the pages of a guest's buffer are often
 * adjacent, and a scan to the end of the run made every packet of 1 KiB
 * read the page list of the rest of its MR (ib_write_bw -q 64, 64 QPs'
 * buffers in one MR: a twentieth of the sending QEMU's time).
 */
static uint64_t rdma_soft_phys(const RdmaMr *mr, uint64_t va, uint64_t want,
                               uint64_t *contig)
{
    uint64_t pg, phys;

    if (mr->kind == RDMA_MR_DMA) {
        *contig = UINT64_MAX;
        return va;
    }
    pg = ((va & ~(uint64_t)(RDMA_PAGE_SIZE - 1)) -
          (mr->iova & ~(uint64_t)(RDMA_PAGE_SIZE - 1))) >> RDMA_PAGE_SHIFT;
    phys = mr->pages.pages[pg] + (va & (RDMA_PAGE_SIZE - 1));
    *contig = RDMA_PAGE_SIZE - (va & (RDMA_PAGE_SIZE - 1));
    while (*contig < want && pg + 1 < mr->pages.npages &&
           mr->pages.pages[pg + 1] == mr->pages.pages[pg] + RDMA_PAGE_SIZE) {
        *contig += RDMA_PAGE_SIZE;
        pg++;
    }
    return phys;
}

/* A position in a scatter list. */
typedef struct RdmaSoftCursor {
    RdmaSoftSgl *sgl;
    uint32_t idx;
    uint64_t off;
} RdmaSoftCursor;

static void rdma_soft_cursor_init(RdmaSoftCursor *c, RdmaSoftSgl *sgl,
                                  uint64_t off)
{
    c->sgl = sgl;
    c->idx = 0;
    c->off = 0;
    while (c->idx < sgl->nseg && off >= sgl->seg[c->idx].len) {
        off -= sgl->seg[c->idx].len;
        c->idx++;
    }
    c->off = off;
}

/* The next contiguous guest-physical piece, at most @max bytes; 0 at end. */
static uint64_t rdma_soft_cursor_next(RdmaSoftCursor *c, uint64_t max,
                                      uint64_t *phys)
{
    RdmaSoftSeg *s;
    uint64_t contig, n;

    if (c->idx >= c->sgl->nseg) {
        return 0;
    }
    s = &c->sgl->seg[c->idx];
    n = MIN(max, s->len - c->off);
    *phys = rdma_soft_phys(s->mr, s->va + c->off, n, &contig);
    n = MIN(n, contig);
    c->off += n;
    if (c->off == s->len) {
        c->idx++;
        c->off = 0;
    }
    return n;
}

/*
 * Mappings of guest RAM kept across the chunks of a copy: mapping and
 * unmapping every 4 KiB page cost a quarter of a 1 MiB transfer.  A
 * chunk outside the window maps a new one (as far as the RAM block goes).
 */
#define RDMA_SOFT_MAP_WINDOW    (1ull << 30)

typedef struct RdmaSoftMap {
    PCIDevice *pdev;
    AddressSpace *as;
    DMADirection dir;
    uint64_t gpa;
    dma_addr_t len;
    uint8_t *host;
    uint64_t used;                  /* bytes from gpa touched (dirty) */
} RdmaSoftMap;

static void rdma_soft_map_put(RdmaSoftMap *m)
{
    if (m->host) {
        dma_memory_unmap(m->as, m->host, m->len, m->dir,
                         m->dir == DMA_DIRECTION_FROM_DEVICE ? m->used : 0);
        m->host = NULL;
    }
}

/*
 * Host address of @gpa; *@n is cut to what the window holds from there.
 * A destination window only grows at its end: unmapping marks the bytes
 * from its start dirty (and drops translated code there), so it must not
 * cover more than was written.
 */
static void *rdma_soft_map_get(RdmaSoftMap *m, uint64_t gpa, uint64_t *n)
{
    uint64_t off;
    bool miss = !m->host || gpa < m->gpa || gpa - m->gpa >= m->len ||
                (m->dir == DMA_DIRECTION_FROM_DEVICE &&
                 gpa != m->gpa + m->used);

    if (miss) {
        rdma_soft_map_put(m);
        /* The window ends with the RAM region its start is in. */
        if (!rdma_ram_ok(m->pdev, gpa, 1)) {
            return NULL;
        }
        m->len = RDMA_SOFT_MAP_WINDOW;
        m->host = dma_memory_map(m->as, gpa, &m->len, m->dir,
                                 MEMTXATTRS_UNSPECIFIED);
        if (!m->host) {
            return NULL;
        }
        m->gpa = gpa;
        m->used = 0;
    }
    off = gpa - m->gpa;
    *n = MIN(*n, m->len - off);
    m->used = MAX(m->used, off + *n);
    return m->host + off;
}

bool rdma_soft_copy(PCIDevice *pdev, RdmaSoftSgl *dst, uint64_t dst_off,
                    RdmaSoftSgl *src, uint64_t src_off, uint64_t len)
{
    AddressSpace *as = pci_get_address_space(pdev);
    RdmaSoftMap dm = { .pdev = pdev, .as = as,
                       .dir = DMA_DIRECTION_FROM_DEVICE };
    RdmaSoftMap sm = { .pdev = pdev, .as = as,
                       .dir = DMA_DIRECTION_TO_DEVICE };
    RdmaSoftCursor d, s;
    uint64_t dphys = 0, sphys = 0, dn = 0, sn = 0;
    bool ok = true;

    rdma_soft_cursor_init(&d, dst, dst_off);
    rdma_soft_cursor_init(&s, src, src_off);
    while (len) {
        uint64_t n;
        void *dp, *sp;

        if (!dn) {
            dn = rdma_soft_cursor_next(&d, len, &dphys);
        }
        if (!sn) {
            sn = rdma_soft_cursor_next(&s, len, &sphys);
        }
        n = MIN(dn, sn);
        dp = n ? rdma_soft_map_get(&dm, dphys, &n) : NULL;
        sp = dp ? rdma_soft_map_get(&sm, sphys, &n) : NULL;
        if (!sp) {
            ok = false;
            break;
        }
        memmove(dp, sp, n);
        dphys += n;
        sphys += n;
        dn -= n;
        sn -= n;
        len -= n;
    }
    rdma_soft_map_put(&dm);
    rdma_soft_map_put(&sm);
    return ok;
}

/* Gather @len bytes of @src from @off into @buf (a frame to send). */
bool rdma_soft_read_buf(PCIDevice *pdev, RdmaSoftSgl *src, uint64_t off,
                        void *buf, uint64_t len)
{
    RdmaSoftCursor c;
    uint64_t phys, n;

    rdma_soft_cursor_init(&c, src, off);
    while (len) {
        n = rdma_soft_cursor_next(&c, len, &phys);
        if (!n || !rdma_ram_ok(pdev, phys, n) ||
            pci_dma_read(pdev, phys, buf, n) != MEMTX_OK) {
            return false;
        }
        buf = (uint8_t *)buf + n;
        len -= n;
    }
    return true;
}

bool rdma_soft_write_buf(PCIDevice *pdev, RdmaSoftSgl *dst, uint64_t off,
                         const void *buf, uint64_t len)
{
    RdmaSoftCursor d;
    uint64_t phys, n;

    rdma_soft_cursor_init(&d, dst, off);
    while (len) {
        n = rdma_soft_cursor_next(&d, len, &phys);
        if (!n || !rdma_ram_ok(pdev, phys, n) ||
            pci_dma_write(pdev, phys, buf, n) != MEMTX_OK) {
            return false;
        }
        buf = (const uint8_t *)buf + n;
        len -= n;
    }
    return true;
}

/*
 * The guest's word is little-endian.  A compare-and-swap of byte-swapped
 * operands is right on any host; an addition is not (its carry would run
 * in the host's byte order), so a big-endian host adds in a loop of them.
 * The 64-bit operations are atomic against the vCPUs only where the host
 * has them (CONFIG_ATOMIC64, 32-bit hosts included); elsewhere the device
 * announces no atomics and refuses them here.
 */
#ifdef CONFIG_ATOMIC64
static uint64_t rdma_soft_cmpxchg_le64(uint64_t *p, uint64_t cmp,
                                       uint64_t val)
{
    return le64_to_cpu(qatomic_cmpxchg__nocheck(p, cpu_to_le64(cmp),
                                                cpu_to_le64(val)));
}

static uint64_t rdma_soft_fetch_add_le64(uint64_t *p, uint64_t add)
{
#if HOST_BIG_ENDIAN
    uint64_t old = le64_to_cpu(qatomic_read__nocheck(p)), seen;

    while ((seen = rdma_soft_cmpxchg_le64(p, old, old + add)) != old) {
        old = seen;
    }
    return old;
#else
    return qatomic_fetch_add(p, add);
#endif
}
#endif

bool rdma_soft_atomic(PCIDevice *pdev, RdmaSoftSgl *remote,
                      RdmaWrOpcode op, uint64_t compare_add, uint64_t swap,
                      uint64_t *orig)
{
#ifdef CONFIG_ATOMIC64
    AddressSpace *as = pci_get_address_space(pdev);
    RdmaSoftCursor c;
    uint64_t phys, *p;
    dma_addr_t l = 8;

    rdma_soft_cursor_init(&c, remote, 0);
    /* Aligned, as the host's atomic instructions need (the va is, 9.4.5) */
    if (rdma_soft_cursor_next(&c, 8, &phys) != 8 || (phys & 7) ||
        !rdma_ram_ok(pdev, phys, 8)) {
        return false;
    }
    p = dma_memory_map(as, phys, &l, DMA_DIRECTION_FROM_DEVICE,
                       MEMTXATTRS_UNSPECIFIED);
    if (!p || l < 8) {
        if (p) {
            dma_memory_unmap(as, p, l, DMA_DIRECTION_FROM_DEVICE, 0);
        }
        return false;
    }
    /* Atomic also against other vCPUs touching the same guest word. */
    if (op == RDMA_WR_ATOMIC_CMP_AND_SWP) {
        *orig = rdma_soft_cmpxchg_le64(p, compare_add, swap);
    } else {
        *orig = rdma_soft_fetch_add_le64(p, compare_add);
    }
    dma_memory_unmap(as, p, l, DMA_DIRECTION_FROM_DEVICE, 8);
    return true;
#else
    return false;
#endif
}
