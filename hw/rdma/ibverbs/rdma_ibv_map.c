/*
 * ibverbs backend: one contiguous host virtual range for a guest MR.
 *
 * Cost: one mremap() per run and nothing per page; no page is touched,
 * copied or faulted in here (the host device pins them in ibv_reg_mr()).
 * make bench-mr measured about 4-5 us per run to map and 1 us to unmap on
 * the development machine (Linux 6.18), so 50 ms per GiB holds for runs of
 * 128 KiB and up on average, not for 64 KiB runs (~90 ms per GiB).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "rdma_ibv_map.h"

/*
 * The number of pages from @pages[@i] on that follow each other in one host
 * mapping, or 0 when @map_end does not know @pages[@i].
 */
static size_t rdma_ibv_map_run(void *const *pages, size_t i, size_t npages,
                               size_t page_size, RdmaIbvMapEndFn *map_end,
                               void *opaque)
{
    uintptr_t start = (uintptr_t)pages[i];
    uintptr_t end = (uintptr_t)map_end(pages[i], opaque);
    size_t fit, n = 1;

    if (end <= start || end - start < page_size) {
        return 0;
    }
    /* Written so that start + n * page_size stays below end: no overflow. */
    fit = (end - start) / page_size;
    while (i + n < npages && n < fit &&
           (uintptr_t)pages[i + n] == start + n * page_size) {
        n++;
    }
    return n;
}

int rdma_ibv_map_pages(RdmaIbvMap *m, void *const *pages, size_t npages,
                       size_t page_size, unsigned max_runs,
                       RdmaIbvMapEndFn *map_end, void *opaque)
{
    size_t host_page = qemu_real_host_page_size();
    unsigned runs = 0;
    size_t len, i, n;
    uint8_t *base, *dst;
    int err;

    memset(m, 0, sizeof(*m));
    if (!npages || !page_size || page_size % host_page ||
        npages > SIZE_MAX / page_size) {
        return -EINVAL;
    }
    len = npages * page_size;

    /* Count first: a list over its budget must fail before it costs a VMA. */
    for (i = 0; i < npages; i += n) {
        if ((uintptr_t)pages[i] % host_page) {
            return -EINVAL;
        }
        n = rdma_ibv_map_run(pages, i, npages, page_size, map_end, opaque);
        if (!n) {
            return -EFAULT;
        }
        if (runs == max_runs) {
            return -ENOMEM;
        }
        runs++;
    }

    if (runs == 1) {
        m->addr = pages[0];
        m->len = len;
        m->runs = 1;
        return 0;
    }

    /*
     * Reserve the whole range, then replace it run by run with
     * MREMAP_FIXED: a fixed address inside our own reservation can never
     * replace a mapping another thread made meanwhile.  The reservation
     * holds no memory (PROT_NONE, MAP_NORESERVE).
     */
    base = mmap(NULL, len, PROT_NONE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED) {
        return -errno;
    }

    /*
     * Left to right, so what is left of the reservation stays one VMA: the
     * range never holds more than runs + 1 VMAs, and the failure path's
     * munmap() never has to split one (which could itself fail for want
     * of VMAs).
     */
    dst = base;
    for (i = 0; i < npages; i += n) {
        n = rdma_ibv_map_run(pages, i, npages, page_size, map_end, opaque);
        if (!n) {
            /* @map_end changed its mind since the first pass */
            err = EFAULT;
            goto fail;
        }
        if (mremap(pages[i], 0, n * page_size, MREMAP_MAYMOVE | MREMAP_FIXED,
                   dst) == MAP_FAILED) {
            err = errno;
            goto fail;
        }
        dst += n * page_size;
    }

    m->addr = base;
    m->len = len;
    m->aliased = true;
    m->runs = runs;
    return 0;

fail:
    munmap(base, len);
    return -err;
}

void rdma_ibv_unmap(RdmaIbvMap *m)
{
    if (m->aliased) {
        munmap(m->addr, m->len);
    }
    memset(m, 0, sizeof(*m));
}
