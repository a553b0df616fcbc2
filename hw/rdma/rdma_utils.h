/*
 * RDMA device core: checked access to guest memory.
 *
 * Every guest address the device uses goes through these helpers: page
 * directories are walked once at object creation and turned into a host
 * array of page addresses; every later access is a pci_dma_read/write whose
 * MemTxResult is checked.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_RDMA_UTILS_H
#define HW_RDMA_RDMA_UTILS_H

#include "hw/pci/pci_device.h"

#define RDMA_PAGE_SIZE      4096
#define RDMA_PAGE_SHIFT     12
#define RDMA_PDIR_ENTRIES   512

/* A guest buffer described page by page (ring or memory region). */
typedef struct RdmaPageList {
    uint64_t *pages;        /* guest-physical, page aligned */
    uint32_t npages;
} RdmaPageList;

/*
 * Is [@addr, @addr + @len) writable guest RAM for this device's DMA?  Not
 * MMIO: a ring or slot inside a BAR (this device's own included) would
 * turn the device's writes into register accesses.
 */
bool rdma_ram_ok(PCIDevice *pdev, uint64_t addr, uint64_t len);
bool rdma_dma_read(PCIDevice *pdev, dma_addr_t addr, void *buf, size_t len);
bool rdma_dma_write(PCIDevice *pdev, dma_addr_t addr, const void *buf,
                    size_t len);

/*
 * Load @npages page addresses from the two-level page directory at @pdir
 * (directory -> tables -> pages).  @max_pages bounds the count; every entry
 * must be page aligned and point at guest memory.  On failure returns false,
 * sets *@why to a static description and leaves @list empty.
 */
bool rdma_pdir_load(PCIDevice *pdev, dma_addr_t pdir, uint32_t npages,
                    uint32_t max_pages, RdmaPageList *list, const char **why);
void rdma_page_list_free(RdmaPageList *list);

static inline bool rdma_is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

#endif
