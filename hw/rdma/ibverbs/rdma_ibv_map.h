/*
 * ibverbs backend: one contiguous host virtual range for a guest MR.
 *
 * ibv_reg_mr() registers one contiguous range of the process's virtual
 * memory, but a guest memory region is a list of guest pages scattered in
 * guest RAM, and so in QEMU's address space.  When guest RAM is a shared
 * mapping (memory-backend-memfd, -file or -ram with share=on), mremap()
 * with old_size 0 maps the same pages a second time at an address of our
 * choice, so the pages can be lined up in a range reserved for the MR.
 *
 * The removed QEMU pvrdma did that with one mremap() per 4 KiB page (about
 * 0.5 s per GiB, one VMA per discontiguous page).  Here the page list is
 * first cut into runs of pages that are contiguous in the host mapping, and
 * each run costs one mremap() and one VMA.  A list that is one run needs no
 * alias at all.  Linux limits the VMAs of a process (vm.max_map_count,
 * 65530 by default), so the caller gives each MR a budget of runs.
 *
 * Only glib and libc are used, so benchmarks and unit tests can compile
 * this file outside QEMU (tests/include/qemu/osdep.h stands in for QEMU's).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_IBVERBS_RDMA_IBV_MAP_H
#define HW_RDMA_IBVERBS_RDMA_IBV_MAP_H

typedef struct RdmaIbvMap {
    void *addr;         /* start of the range the host device registers */
    size_t len;
    bool aliased;       /* false: @addr is guest RAM itself (one run) */
    unsigned runs;      /* host-contiguous runs in the page list */
} RdmaIbvMap;

/*
 * Where the host mapping that contains @host ends (exclusive), or NULL if
 * @host lies in no mapping the caller allows to be aliased.  In QEMU: the
 * end of the RAMBlock, whose file offset grows linearly with the address.
 *
 * Runs never cross it: mremap() with old_size 0 maps as many bytes of the
 * source's backing file as asked for, whatever is mapped in the virtual
 * range after the source mapping.  A run that spilled over the end of one
 * RAMBlock into the next would alias the first block's file beyond the
 * guest's RAM (file data the guest must not see, or SIGBUS past EOF)
 * instead of the second block's pages.
 */
typedef void *RdmaIbvMapEndFn(const void *host, void *opaque);

/*
 * Fill @m with one contiguous range holding, in order, the @npages pages of
 * @page_size bytes at host addresses @pages[i].  @page_size is a multiple of
 * the host page size, and every page lies in a MAP_SHARED mapping that
 * @map_end knows.  Sharing is the caller's responsibility: Linux 6.1 and
 * 6.18 refuse to alias a private mapping (EINVAL), but older kernels
 * silently map unrelated fresh pages instead.
 *
 * The list may have at most @max_runs runs.  Each run costs one VMA until
 * rdma_ibv_unmap(), except that a list of one run costs none.
 *
 * Returns 0, or a negative errno with @m zeroed and nothing left mapped:
 * -EINVAL for a bad argument or a private source mapping, -EFAULT when
 * @map_end does not know a page, -ENOMEM when the list has more than
 * @max_runs runs (checked before anything is mapped) or when the kernel
 * runs out of VMAs or memory on the way.
 */
int rdma_ibv_map_pages(RdmaIbvMap *m, void *const *pages, size_t npages,
                       size_t page_size, unsigned max_runs,
                       RdmaIbvMapEndFn *map_end, void *opaque);

/* Undo rdma_ibv_map_pages(); a zeroed @m is left alone. */
void rdma_ibv_unmap(RdmaIbvMap *m);

#endif
