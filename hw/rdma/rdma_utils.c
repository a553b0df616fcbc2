/*
 * RDMA device core: checked access to guest memory.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/rcu.h"
#include "system/dma.h"
#include "rdma_utils.h"
#include "rdma_wr.h"
#include "trace.h"

bool rdma_dma_read(PCIDevice *pdev, dma_addr_t addr, void *buf, size_t len)
{
    MemTxResult r = rdma_dev_live(pdev) ? pci_dma_read(pdev, addr, buf, len)
                                        : MEMTX_ERROR;

    if (r != MEMTX_OK) {
        trace_rdma_dma_error("read", addr, len);
        return false;
    }
    return true;
}

bool rdma_dma_write(PCIDevice *pdev, dma_addr_t addr, const void *buf,
                    size_t len)
{
    MemTxResult r = rdma_dev_live(pdev) ? pci_dma_write(pdev, addr, buf, len)
                                        : MEMTX_ERROR;

    if (r != MEMTX_OK) {
        trace_rdma_dma_error("write", addr, len);
        return false;
    }
    return true;
}

/*
 * Is @addr in writable guest RAM (not MMIO, ROM or a ROM device)?  On
 * entry *@plen is how far to look; on return, how much of that is in the
 * same RAM region.
 */
static bool rdma_ram_region(PCIDevice *pdev, uint64_t addr, hwaddr *plen)
{
    hwaddr xlat;
    MemoryRegion *mr;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(pci_get_address_space(pdev), addr, &xlat,
                                 plen, true, MEMTXATTRS_UNSPECIFIED);
    return memory_region_is_ram(mr) && !memory_region_is_romd(mr) &&
           !mr->readonly;
}

bool rdma_ram_ok(PCIDevice *pdev, uint64_t addr, uint64_t len)
{
    hwaddr plen = len;

    return rdma_dev_live(pdev) && rdma_ram_region(pdev, addr, &plen) &&
           plen >= len;
}

static bool rdma_page_ok(PCIDevice *pdev, uint64_t addr)
{
    return addr && !(addr & (RDMA_PAGE_SIZE - 1)) &&
           rdma_ram_ok(pdev, addr, RDMA_PAGE_SIZE);
}

bool rdma_pdir_load(PCIDevice *pdev, dma_addr_t pdir, uint32_t npages,
                    uint32_t max_pages, RdmaPageList *list, const char **why)
{
    uint64_t dir[RDMA_PDIR_ENTRIES];
    uint32_t ntables, t, done = 0;
    uint64_t *pages;

    *list = (RdmaPageList) { 0 };
    if (npages == 0 || npages > max_pages ||
        npages > RDMA_PDIR_ENTRIES * RDMA_PDIR_ENTRIES) {
        *why = "page count out of range";
        return false;
    }
    if (!rdma_page_ok(pdev, pdir)) {
        *why = "page directory address invalid";
        return false;
    }
    ntables = DIV_ROUND_UP(npages, RDMA_PDIR_ENTRIES);
    if (!rdma_dma_read(pdev, pdir, dir, ntables * sizeof(uint64_t))) {
        *why = "page directory unreadable";
        return false;
    }
    pages = g_try_new(uint64_t, npages);
    if (!pages) {
        *why = "out of memory for the page list";
        return false;
    }
    for (t = 0; t < ntables; t++) {
        uint32_t n = MIN(npages - done, RDMA_PDIR_ENTRIES);
        uint64_t table = le64_to_cpu(dir[t]);
        uint32_t i;

        if (!rdma_page_ok(pdev, table) ||
            !rdma_dma_read(pdev, table, &pages[done], n * sizeof(uint64_t))) {
            *why = "page table invalid";
            g_free(pages);
            return false;
        }
        for (i = done; i < done + n; i++) {
            pages[i] = le64_to_cpu(pages[i]);
            if (!rdma_page_ok(pdev, pages[i])) {
                *why = "page entry invalid";
                g_free(pages);
                return false;
            }
        }
        done += n;
    }
    *list = (RdmaPageList) { .pages = pages, .npages = npages };
    return true;
}

static int rdma_page_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* Are @pages distinct? (@n entries; sorts a copy) */
static bool rdma_pages_distinct(const uint64_t *pages, uint32_t n)
{
    g_autofree uint64_t *sorted = g_memdup2(pages, n * sizeof(uint64_t));

    qsort(sorted, n, sizeof(uint64_t), rdma_page_cmp);
    for (uint32_t i = 1; i < n; i++) {
        if (sorted[i] == sorted[i - 1]) {
            return false;
        }
    }
    return true;
}

bool rdma_ring_load(PCIDevice *pdev, dma_addr_t pdir, uint32_t npages,
                    uint32_t max_pages, RdmaPageList *list, const char **why)
{
    if (!rdma_pdir_load(pdev, pdir, npages, max_pages, list, why)) {
        return false;
    }
    if (!rdma_pages_distinct(list->pages, npages)) {
        *why = "a ring page appears twice in the page list";
        rdma_page_list_free(list);
        return false;
    }
    return true;
}

/*
 * Is the page at @addr in guest RAM?  [*@lo, *@hi) is RAM found by an
 * earlier call: the pages of a list are mostly in one RAM block, so a list
 * of 2^18 pages costs a few translations, not 2^18.
 */
static bool rdma_page_in_ram(PCIDevice *pdev, uint64_t addr, uint64_t *lo,
                             uint64_t *hi)
{
    hwaddr plen = 1ull << 40;

    if (!addr || (addr & (RDMA_PAGE_SIZE - 1))) {
        return false;
    }
    if (addr >= *lo && addr < *hi && *hi - addr >= RDMA_PAGE_SIZE) {
        return true;
    }
    if (!rdma_ram_region(pdev, addr, &plen) || plen < RDMA_PAGE_SIZE) {
        return false;
    }
    *lo = addr;
    *hi = addr + plen;
    return true;
}

/*
 * The lowest and highest of @n entries of @pages, by one pass of
 * compares: true if all are page aligned and not 0, and the page at the
 * highest does not wrap.
 */
static bool rdma_pages_span(const uint64_t *pages, uint32_t n, uint64_t *lo,
                            uint64_t *hi)
{
    uint64_t l = UINT64_MAX, h = 0, bits = 0;

    for (uint32_t i = 0; i < n; i++) {
        l = MIN(l, pages[i]);
        h = MAX(h, pages[i]);
        bits |= pages[i];
    }
    *lo = l;
    *hi = h;
    return n && l && !(bits & (RDMA_PAGE_SIZE - 1)) &&
           h <= UINT64_MAX - RDMA_PAGE_SIZE;
}

/*
 * Are all entries of @list page-aligned RAM pages, by one translation:
 * their lowest and highest in one stretch of RAM?  False does not say an
 * entry is wrong, only that the pages must be checked one by one.  A load
 * restores every MR's list, up to the device's whole page budget (4 Mi
 * entries at the default limits): one pass of compares, not a lookup per
 * page, keeps that out of the migration's downtime, and a staged list's
 * pass was done before the switch-over (span_lo, span_hi).
 */
static bool rdma_pages_in_one_ram(PCIDevice *pdev, const RdmaPageList *list)
{
    uint64_t lo = list->span_lo, hi = list->span_hi;
    hwaddr plen = 0;

    if (!hi && !rdma_pages_span(list->pages, list->npages, &lo, &hi)) {
        return false;
    }
    plen = hi + RDMA_PAGE_SIZE - lo;
    return rdma_ram_region(pdev, lo, &plen) &&
           plen >= hi + RDMA_PAGE_SIZE - lo;
}

bool rdma_page_list_ok(PCIDevice *pdev, const RdmaPageList *list,
                       uint32_t min_pages, uint32_t max_pages, bool ring,
                       const char **why)
{
    uint64_t lo = 0, hi = 0;

    if (list->npages < min_pages || list->npages > max_pages ||
        (list->npages && !list->pages)) {
        *why = "page count out of range";
        return false;
    }
    if (!rdma_dev_live(pdev)) {
        *why = "device unplugged";
        return false;
    }
    if (list->npages && !rdma_pages_in_one_ram(pdev, list)) {
        for (uint32_t i = 0; i < list->npages; i++) {
            if (!rdma_page_in_ram(pdev, list->pages[i], &lo, &hi)) {
                *why = "page entry invalid";
                return false;
            }
        }
    }
    if (ring && !rdma_pages_distinct(list->pages, list->npages)) {
        *why = "a ring page appears twice in the page list";
        return false;
    }
    return true;
}

void rdma_page_list_free(RdmaPageList *list)
{
    g_free(list->pages);
    list->pages = NULL;
    list->npages = 0;
    list->nruns = 0;
}

bool rdma_gid_is_v4(const uint8_t *gid)
{
    static const uint8_t prefix[12] = { [10] = 0xff, [11] = 0xff };

    return !memcmp(gid, prefix, sizeof(prefix));
}

uint8_t rdma_grh_build(uint8_t *grh, const uint8_t *sgid, const uint8_t *dgid,
                       uint32_t payload, uint8_t tclass, uint8_t hop_limit)
{
    /* IP payload: UDP 8, BTH 12, DETH 8, data, ICRC 4 */
    uint32_t ip_payload = 8 + 12 + 8 + payload + 4;

    memset(grh, 0, RDMA_GRH_SIZE);
    if (rdma_gid_is_v4(sgid) && rdma_gid_is_v4(dgid)) {
        uint8_t *ip = grh + 20;
        uint32_t sum = 0;
        int i;

        ip[0] = 0x45;
        ip[1] = tclass;
        stw_be_p(ip + 2, 20 + ip_payload);
        stw_be_p(ip + 6, 0x4000);                   /* don't fragment */
        ip[8] = hop_limit ? hop_limit : 64;
        ip[9] = 17;                                 /* UDP */
        memcpy(ip + 12, sgid + 12, 4);
        memcpy(ip + 16, dgid + 12, 4);
        for (i = 0; i < 20; i += 2) {
            sum += lduw_be_p(ip + i);
        }
        while (sum >> 16) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        stw_be_p(ip + 10, ~sum & 0xffff);
        return RDMA_NETWORK_IPV4;
    }
    stl_be_p(grh, (6u << 28) | ((uint32_t)tclass << 20));
    stw_be_p(grh + 4, ip_payload);
    grh[6] = 17;
    grh[7] = hop_limit ? hop_limit : 64;
    memcpy(grh + 8, sgid, 16);
    memcpy(grh + 24, dgid, 16);
    return RDMA_NETWORK_IPV6;
}
