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
#include "rdma_compat.h"

/*
 * QEMU builds with -ftrivial-auto-var-init=zero, which clears every local
 * on entry.  For the few large locals of a hot path that are always
 * written before they are read (a WQE fetched from the ring, a scatter
 * list, a packet), clearing them is most of what the path costs: they
 * are marked with this.  Nothing else is.  QEMU_UNINITIALIZED is QEMU
 * 10.1's (rdma_compat.h has it on 10.0).
 */
#define RDMA_UNINIT         QEMU_UNINITIALIZED

#define RDMA_PAGE_SIZE      4096
#define RDMA_PAGE_SHIFT     12
#define RDMA_PDIR_ENTRIES   512

/* A guest buffer described page by page (ring or memory region). */
typedef struct RdmaPageList {
    uint64_t *pages;        /* guest-physical, page aligned */
    uint32_t npages;
    /*
     * Loaded from a migration stream and not expanded yet: @pages holds
     * @nruns run words (rdma_mig_expand_pages()).
     */
    uint32_t nruns;
    /*
     * In a saved or loaded MR record only: the pages are not in the record
     * but were sent before the switch-over (rdma_rm_vmstate.c, staged page
     * lists), under this serial of their MR.
     */
    uint64_t mig_ref;
    /*
     * A loaded list whose runs were read before the switch-over (a
     * staged one, rdma_rm_vmstate.c): its lowest page @span_lo and its
     * highest @span_hi, so that rdma_page_list_ok() translates that span
     * once instead of reading every entry during the downtime.  0: not
     * known.  Never in a stream.
     */
    uint64_t span_lo, span_hi;
} RdmaPageList;

/*
 * Is [@addr, @addr + @len) writable guest RAM for this device's DMA?  Not
 * MMIO: a ring or slot inside a BAR (this device's own included) would
 * turn the device's writes into register accesses.
 */
bool rdma_ram_ok(PCIDevice *pdev, uint64_t addr, uint64_t len);

/*
 * False once unplug has begun: a device unplugged from inside its own data
 * path (rdma_rm.h, entry points) finishes that path without touching its
 * PCI state or guest memory again; every DMA helper refuses.
 */
static inline bool rdma_dev_live(PCIDevice *pdev)
{
    return qatomic_read(&DEVICE(pdev)->realized);
}

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
/*
 * rdma_pdir_load() for the pages of a ring, which must all differ: a ring
 * is sized from its page count, and the host sizes its own queues from the
 * ring, so one guest page repeated would make the host allocate memory the
 * guest never gave (AUDIT 8).
 */
bool rdma_ring_load(PCIDevice *pdev, dma_addr_t pdir, uint32_t npages,
                    uint32_t max_pages, RdmaPageList *list, const char **why);
void rdma_page_list_free(RdmaPageList *list);
/*
 * A page list that did not come from a page directory (an incoming
 * migration stream): @min_pages..@max_pages entries, each a page of guest
 * RAM, all distinct for a @ring.  On failure sets *@why.
 */
bool rdma_page_list_ok(PCIDevice *pdev, const RdmaPageList *list,
                       uint32_t min_pages, uint32_t max_pages, bool ring,
                       const char **why);

/* Is @gid an IPv4-mapped address (::ffff:a.b.c.d)? */
bool rdma_gid_is_v4(const uint8_t *gid);

/*
 * The 40 bytes in front of a UD receive: for RoCE v2 over IPv4 the IPv4
 * header in the last 20 (with a valid checksum: the guest's MAD layer
 * checks it to build reply address handles), else an IPv6 header.
 * Returns the network header type (RDMA_NETWORK_IPV4 or _IPV6).
 */
uint8_t rdma_grh_build(uint8_t *grh, const uint8_t *sgid, const uint8_t *dgid,
                       uint32_t payload, uint8_t tclass, uint8_t hop_limit);

static inline bool rdma_is_pow2(uint32_t v)
{
    return v && !(v & (v - 1));
}

#endif
