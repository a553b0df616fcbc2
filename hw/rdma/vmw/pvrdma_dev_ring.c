/*
 * VMware PVRDMA front-end: rings shared with the guest.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvrdma_abi.h"
#include "pvrdma_dev_ring.h"

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
