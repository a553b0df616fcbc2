/*
 * VMware PVRDMA front-end: rings shared with the guest.
 *
 * A ring is a {prod_tail, cons_head} pair in a ring-state page plus element
 * pages.  Indices run modulo 2 * max_elems (the extra bit tells full from
 * empty), with the arithmetic of the driver's pvrdma_ring.h.  Note that
 * the driver's own device rings (async events, CQ notifications) have
 * (pages - 1) * 4096 / elem_size elements, not a power of two.  Indices
 * are read from guest memory and validated on every use.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_VMW_PVRDMA_DEV_RING_H
#define HW_RDMA_VMW_PVRDMA_DEV_RING_H

#include "hw/rdma/rdma_utils.h"

typedef struct PvrdmaRingMap {
    PCIDevice *pdev;
    const uint64_t *pages;          /* element pages (not the state page) */
    uint32_t npages;
    dma_addr_t state;               /* guest address of {prod_tail, head} */
    uint32_t max_elems;
    uint32_t elem_size;             /* divides the page size */
} PvrdmaRingMap;

bool pvrdma_ring_init(PvrdmaRingMap *r, PCIDevice *pdev, dma_addr_t state,
                      const uint64_t *pages, uint32_t npages,
                      uint32_t max_elems, uint32_t elem_size);

static inline bool pvrdma_idx_valid(uint32_t idx, uint32_t max_elems)
{
    return (idx & ~((max_elems << 1) - 1)) == 0;
}

static inline uint32_t pvrdma_idx_next(uint32_t idx, uint32_t max_elems)
{
    return (idx + 1) & ((max_elems << 1) - 1);
}

/* Guest address of the element at index @idx (any generation). */
dma_addr_t pvrdma_ring_elem_addr(const PvrdmaRingMap *r, uint32_t idx);

/*
 * Consumer side (send, receive and SRQ rings): pvrdma_ring_peek() returns 1
 * with the index of the oldest element in *@head, 0 when the ring is empty,
 * -EIO when the ring state is corrupt; pvrdma_ring_pop() releases it.
 * pvrdma_ring_count() is the number of elements posted.
 */
int pvrdma_ring_peek(PvrdmaRingMap *r, uint32_t *head, uint32_t *tail);
bool pvrdma_ring_pop(PvrdmaRingMap *r, uint32_t head);

/*
 * Producer side (CQs, device rings): append one element and publish it by
 * advancing prod_tail.  Returns 0, -ENOSPC when the ring is full, -EIO when
 * the ring state is corrupt or guest memory is not accessible.
 */
int pvrdma_ring_produce(PvrdmaRingMap *r, const void *elem);

#endif
