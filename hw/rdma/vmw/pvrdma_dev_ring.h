/*
 * VMware PVRDMA front-end: rings shared with the guest.
 *
 * A ring is a {prod_tail, cons_head} pair in a ring-state page plus element
 * pages.  Indices run modulo 2 * max_elems (the extra bit tells full from
 * empty), with the arithmetic of the driver's pvrdma_ring.h.  Note that
 * the driver's own device rings (async events, CQ notifications) have
 * (pages - 1) * 4096 / elem_size elements, not a power of two.  This file
 * maps and checks a ring; producing into it comes with the data path.
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

#endif
