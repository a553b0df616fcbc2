/*
 * VMware PVRDMA front-end: rings shared with the guest.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvrdma_abi.h"
#include "pvrdma_dev_ring.h"
#include "trace.h"

bool pvrdma_ring_init(PvrdmaRingMap *r, PCIDevice *pdev, dma_addr_t state,
                      const uint64_t *pages, uint32_t npages,
                      uint32_t max_elems, uint32_t elem_size)
{
    if (!max_elems || !elem_size || RDMA_PAGE_SIZE % elem_size ||
        max_elems > (1u << 30) ||
        (uint64_t)max_elems * elem_size > (uint64_t)npages * RDMA_PAGE_SIZE) {
        return false;
    }
    r->pdev = pdev;
    r->pages = pages;
    r->npages = npages;
    r->state = state;
    r->max_elems = max_elems;
    r->elem_size = elem_size;
    return true;
}

dma_addr_t pvrdma_ring_elem_addr(const PvrdmaRingMap *r, uint32_t idx)
{
    /* idx & (max - 1) < max, and max elements fit in the pages. */
    uint64_t off = (uint64_t)(idx & (r->max_elems - 1)) * r->elem_size;

    return r->pages[off / RDMA_PAGE_SIZE] + off % RDMA_PAGE_SIZE;
}

static bool pvrdma_ring_state(PvrdmaRingMap *r, uint32_t *tail,
                              uint32_t *head)
{
    PvrdmaRing ring;

    if (!rdma_dma_read(r->pdev, r->state, &ring, sizeof(ring))) {
        return false;
    }
    *tail = le32_to_cpu(ring.prod_tail);
    *head = le32_to_cpu(ring.cons_head);
    if (!pvrdma_idx_valid(*tail, r->max_elems) ||
        !pvrdma_idx_valid(*head, r->max_elems)) {
        trace_pvrdma_ring_corrupt(r->state, *tail, *head);
        return false;
    }
    return true;
}

int pvrdma_ring_peek(PvrdmaRingMap *r, uint32_t *head, uint32_t *tail)
{
    if (!pvrdma_ring_state(r, tail, head)) {
        return -EIO;
    }
    /*
     * The guest wrote the element before the prod_tail that publishes it
     * (libvmw_pvrdma's udma_to_device_barrier(), the kernel driver's
     * wmb()); the element must not be read before the index was, or a
     * weakly ordered host may see a stale element behind a new index.
     * The read side of that pairing, as in virtqueue_num_heads().
     */
    smp_rmb();
    return *tail != *head;
}

bool pvrdma_ring_pop(PvrdmaRingMap *r, uint32_t head)
{
    uint32_t next = cpu_to_le32(pvrdma_idx_next(head, r->max_elems));

    /*
     * Every read of the element comes before cons_head hands its slot
     * back: once the guest sees the new head it may write the slot again.
     * Orders loads before a store, hence a full barrier.
     */
    smp_mb();
    return rdma_dma_write(r->pdev, r->state + offsetof(PvrdmaRing, cons_head),
                          &next, sizeof(next));
}

int pvrdma_ring_produce(PvrdmaRingMap *r, const void *elem)
{
    uint32_t tail, head;

    if (!pvrdma_ring_state(r, &tail, &head)) {
        return -EIO;
    }
    /*
     * Full when the generations differ at the same slot, or when one more
     * element would make the ring look empty (possible with the driver's
     * device rings, whose size is not a power of two).
     */
    if (tail == (head ^ r->max_elems) ||
        pvrdma_idx_next(tail, r->max_elems) == head) {
        return -ENOSPC;
    }
    /*
     * The slot is free because cons_head moved past it; the guest read the
     * old element before moving it.  Our write of the slot must come after
     * our read of that cons_head (a load before a store: a full barrier).
     */
    smp_mb();
    if (!rdma_dma_write(r->pdev, pvrdma_ring_elem_addr(r, tail), elem,
                        r->elem_size)) {
        return -EIO;
    }
    /* The element must be visible before the index that publishes it. */
    smp_wmb();
    tail = cpu_to_le32(pvrdma_idx_next(tail, r->max_elems));
    return rdma_dma_write(r->pdev, r->state, &tail, sizeof(tail)) ? 0 : -EIO;
}
