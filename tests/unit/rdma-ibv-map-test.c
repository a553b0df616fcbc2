/*
 * Unit tests for hw/rdma/ibverbs/rdma_ibv_map.c, built outside QEMU
 * (tests/unit/run.sh): "guest RAM" is a memfd mapped MAP_SHARED, as QEMU
 * maps memory-backend-memfd,share=on, and every page starts with its index.
 *
 * Mapping leaks are seen in the number of lines of /proc/self/maps, which
 * is read without allocating (an allocation could add a VMA itself).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <fcntl.h>
#include <limits.h>
#include "rdma_ibv_map.h"

#define PAGE 4096

typedef struct Ram {
    uint8_t *base;
    size_t len;
    int fd;
} Ram;

static void *ram_end(const void *host, void *opaque)
{
    Ram *r = opaque;
    const uint8_t *p = host;

    return p >= r->base && p < r->base + r->len ? r->base + r->len : NULL;
}

static void ram_open(Ram *r, size_t npages, bool fill)
{
    r->len = npages * PAGE;
    r->fd = memfd_create("rdma-ibv-map-test", MFD_CLOEXEC);
    g_assert_cmpint(r->fd, >=, 0);
    g_assert_cmpint(ftruncate(r->fd, r->len), ==, 0);
    r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    g_assert(r->base != MAP_FAILED);
    for (size_t i = 0; fill && i < npages; i++) {
        *(uint64_t *)(r->base + i * PAGE) = i;
    }
}

static void ram_close(Ram *r)
{
    munmap(r->base, r->len);
    close(r->fd);
}

static void *page(Ram *r, size_t i)
{
    return r->base + i * PAGE;
}

/*
 * The process's shared mappings.  Guest RAM here is shared, and so is an
 * alias of it; other threads of the process map private memory at any
 * time (in QEMU's build, the RCU thread's malloc arena), which a count of
 * every mapping would take for the module's.
 */
static size_t maps_count(void)
{
    g_autofree char *maps = NULL;
    g_auto(GStrv) lines = NULL;
    size_t shared = 0;

    g_assert_true(g_file_get_contents("/proc/self/maps", &maps, NULL, NULL));
    lines = g_strsplit(maps, "\n", -1);
    for (size_t i = 0; lines[i]; i++) {
        /* "start-end perms ...": perms is rwxs or rwxp */
        const char *perms = strchr(lines[i], ' ');

        shared += perms && strlen(perms) > 4 && perms[4] == 's';
    }
    return shared;
}

/* Is any byte of [addr, addr + len) mapped? msync() says ENOMEM if not. */
static bool range_unmapped(void *addr, size_t len)
{
    return msync(addr, len, MS_ASYNC) < 0 && errno == ENOMEM;
}

static bool map_zeroed(const RdmaIbvMap *m)
{
    return !m->addr && !m->len && !m->aliased && !m->runs;
}

/* Writes through the alias land in guest RAM and the other way round. */
static void test_alias_coherent(void)
{
    size_t idx[] = { 5, 6, 7, 20, 3, 40, 41 };
    void *pages[G_N_ELEMENTS(idx)];
    RdmaIbvMap m;
    Ram r;

    ram_open(&r, 64, true);
    for (size_t i = 0; i < G_N_ELEMENTS(idx); i++) {
        pages[i] = page(&r, idx[i]);
    }
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, G_N_ELEMENTS(idx), PAGE,
                                       16, ram_end, &r), ==, 0);
    g_assert_true(m.aliased);
    g_assert_cmpuint(m.runs, ==, 4);
    g_assert_cmpuint(m.len, ==, G_N_ELEMENTS(idx) * PAGE);
    g_assert(m.addr < (void *)r.base || m.addr >= (void *)(r.base + r.len));

    for (size_t i = 0; i < G_N_ELEMENTS(idx); i++) {
        uint8_t *a = (uint8_t *)m.addr + i * PAGE;

        g_assert_cmpuint(*(uint64_t *)a, ==, idx[i]);
        /* the last byte too: the whole page is aliased, not just its start */
        a[PAGE - 1] = 0xa0 + i;
        g_assert_cmpuint(r.base[idx[i] * PAGE + PAGE - 1], ==, 0xa0 + i);
        r.base[idx[i] * PAGE + 8] = 0x50 + i;
        g_assert_cmpuint(a[8], ==, 0x50 + i);
    }
    rdma_ibv_unmap(&m);
    ram_close(&r);
}

/* One run needs no alias: the range is guest RAM itself, no VMA is added. */
static void test_single_run(void)
{
    void *pages[10];
    size_t before;
    RdmaIbvMap m;
    Ram r;

    ram_open(&r, 32, true);
    for (size_t i = 0; i < G_N_ELEMENTS(pages); i++) {
        pages[i] = page(&r, 10 + i);
    }
    before = maps_count();
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, G_N_ELEMENTS(pages), PAGE,
                                       1, ram_end, &r), ==, 0);
    g_assert_false(m.aliased);
    g_assert_cmpuint(m.runs, ==, 1);
    g_assert(m.addr == pages[0]);
    g_assert_cmpuint(m.len, ==, 10 * PAGE);
    g_assert_cmpuint(maps_count(), ==, before);
    rdma_ibv_unmap(&m);
    g_assert(map_zeroed(&m));
    /* unmapping a single run must not unmap guest RAM */
    g_assert_cmpuint(*(uint64_t *)page(&r, 10), ==, 10);
    ram_close(&r);
}

/* Runs are the maximal host-contiguous stretches of the list. */
static void test_run_count(void)
{
    static const struct {
        const char *name;
        size_t idx[8];
        size_t n;
        unsigned runs;
    } cases[] = {
        { "reversed", { 7, 6, 5, 4, 3, 2, 1, 0 }, 8, 8 },
        { "pairs", { 0, 1, 10, 11, 4, 5, 20, 21 }, 8, 4 },
        { "gap of one page", { 0, 1, 2, 4, 5, 6 }, 6, 2 },
        { "contiguous then back", { 0, 1, 2, 3, 0, 1, 2, 3 }, 8, 2 },
        { "last page of RAM", { 62, 63 }, 2, 1 },
        { "single page", { 9 }, 1, 1 },
    };
    Ram r;

    ram_open(&r, 64, true);
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
        void *pages[8];
        RdmaIbvMap m;

        for (size_t i = 0; i < cases[c].n; i++) {
            pages[i] = page(&r, cases[c].idx[i]);
        }
        g_test_message("case %s", cases[c].name);
        g_assert_cmpint(rdma_ibv_map_pages(&m, pages, cases[c].n, PAGE, 8,
                                           ram_end, &r), ==, 0);
        g_assert_cmpuint(m.runs, ==, cases[c].runs);
        g_assert_cmpint(m.aliased, ==, cases[c].runs > 1);
        for (size_t i = 0; i < cases[c].n; i++) {
            g_assert_cmpuint(*(uint64_t *)((uint8_t *)m.addr + i * PAGE), ==,
                             cases[c].idx[i]);
        }
        rdma_ibv_unmap(&m);
    }

    /* pages of two host pages: runs are counted in those */
    {
        void *pages[] = { page(&r, 0), page(&r, 2), page(&r, 6), page(&r, 8) };
        RdmaIbvMap m;

        /* 0-3 and 6-9 in host pages */
        g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 4, 2 * PAGE, 8,
                                           ram_end, &r), ==, 0);
        g_assert_cmpuint(m.runs, ==, 2);
        g_assert_cmpuint(m.len, ==, 8 * PAGE);
        g_assert_cmpuint(*(uint64_t *)((uint8_t *)m.addr + 5 * PAGE), ==, 7);
        rdma_ibv_unmap(&m);
    }
    ram_close(&r);
}

/* The same guest page twice in one MR: both places show the same bytes. */
static void test_same_page_twice(void)
{
    void *pages[2];
    RdmaIbvMap m;
    Ram r;

    ram_open(&r, 4, true);
    pages[0] = pages[1] = page(&r, 2);
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 2, PAGE, 2, ram_end, &r),
                    ==, 0);
    g_assert_cmpuint(m.runs, ==, 2);
    ((uint8_t *)m.addr)[100] = 0x5a;
    g_assert_cmpuint(((uint8_t *)m.addr)[PAGE + 100], ==, 0x5a);
    rdma_ibv_unmap(&m);
    ram_close(&r);
}

/* Over budget: -ENOMEM before anything is mapped; the exact budget works. */
static void test_max_runs(void)
{
    void *pages[16];
    size_t before;
    RdmaIbvMap m;
    Ram r;

    ram_open(&r, 64, true);
    for (size_t i = 0; i < G_N_ELEMENTS(pages); i++) {
        pages[i] = page(&r, 3 * i);     /* 16 runs */
    }
    before = maps_count();
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 16, PAGE, 15, ram_end, &r),
                    ==, -ENOMEM);
    g_assert(map_zeroed(&m));
    g_assert_cmpuint(maps_count(), ==, before);
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 16, PAGE, 0, ram_end, &r),
                    ==, -ENOMEM);
    g_assert_cmpuint(maps_count(), ==, before);

    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 16, PAGE, 16, ram_end, &r),
                    ==, 0);
    g_assert_cmpuint(m.runs, ==, 16);
    /* one VMA per run, the reservation fully replaced */
    g_assert_cmpuint(maps_count(), ==, before + 16);
    rdma_ibv_unmap(&m);
    g_assert_cmpuint(maps_count(), ==, before);
    ram_close(&r);
}

/* rdma_ibv_unmap() leaves no VMA and no byte of the range mapped. */
static void test_unmap_all(void)
{
    void *pages[64];
    size_t before;
    RdmaIbvMap m;
    void *addr;
    size_t len;
    Ram r;

    ram_open(&r, 256, true);
    for (size_t i = 0; i < G_N_ELEMENTS(pages); i++) {
        pages[i] = page(&r, (i * 37) % 256);
    }
    before = maps_count();
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 64, PAGE, 64, ram_end, &r),
                    ==, 0);
    g_assert_true(m.aliased);
    addr = m.addr;
    len = m.len;
    g_assert_cmpuint(maps_count(), >, before);
    rdma_ibv_unmap(&m);
    g_assert(map_zeroed(&m));
    g_assert_cmpuint(maps_count(), ==, before);
    g_assert_true(range_unmapped(addr, len));
    /* a second unmap of the zeroed map is harmless */
    rdma_ibv_unmap(&m);
    /* guest RAM is untouched */
    g_assert_cmpuint(*(uint64_t *)page(&r, 37), ==, 37);
    ram_close(&r);
}

/*
 * Private guest RAM cannot be aliased: the kernel refuses (EINVAL on the
 * first run) and nothing is left behind.  Older kernels silently aliased
 * fresh pages instead, which is why the device refuses private RAM at
 * realize.  A single-run list needs no alias and so is not refused: the
 * host device then registers guest RAM itself, which works for private RAM
 * too.
 */
static void test_private_source(void)
{
    size_t len = 8 * PAGE;
    uint8_t *priv = mmap(NULL, len, PROT_READ | PROT_WRITE,
                         MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    Ram r = { .base = priv, .len = len, .fd = -1 };
    void *pages[] = { priv + 2 * PAGE, priv };
    size_t before;
    RdmaIbvMap m;

    g_assert(priv != MAP_FAILED);
    memset(priv, 1, len);
    before = maps_count();
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 2, PAGE, 2, ram_end, &r),
                    ==, -EINVAL);
    g_assert(map_zeroed(&m));
    g_assert_cmpuint(maps_count(), ==, before);

    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 1, PAGE, 1, ram_end, &r),
                    ==, 0);
    g_assert_false(m.aliased);
    rdma_ibv_unmap(&m);
    munmap(priv, len);
}

/*
 * Two mappings of different files next to each other in virtual memory
 * (two RAMBlocks): a list crossing from the last page of the first to the
 * first page of the second must alias the second's page, not whatever the
 * first file holds beyond its mapping.
 */
typedef struct TwoRams {
    Ram a, b;
} TwoRams;

static void *two_rams_end(const void *host, void *opaque)
{
    TwoRams *t = opaque;

    return ram_end(host, &t->a) ?: ram_end(host, &t->b);
}

static void test_mapping_boundary(void)
{
    uint8_t *area, *hidden;
    void *pages[3];
    RdmaIbvMap m;
    TwoRams t;

    t.a.len = t.b.len = 4 * PAGE;
    t.a.fd = memfd_create("ram-a", MFD_CLOEXEC);
    t.b.fd = memfd_create("ram-b", MFD_CLOEXEC);
    /* file a is larger than its mapping, as with memory-backend-file,offset= */
    g_assert_cmpint(ftruncate(t.a.fd, 8 * PAGE), ==, 0);
    g_assert_cmpint(ftruncate(t.b.fd, 4 * PAGE), ==, 0);
    area = mmap(NULL, 8 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    g_assert(area != MAP_FAILED);
    t.a.base = mmap(area, 4 * PAGE, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_FIXED, t.a.fd, 0);
    t.b.base = mmap(area + 4 * PAGE, 4 * PAGE, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_FIXED, t.b.fd, 0);
    g_assert(t.a.base == area && t.b.base == area + 4 * PAGE);
    memset(t.a.base, 'A', 4 * PAGE);
    memset(t.b.base, 'B', 4 * PAGE);
    hidden = mmap(NULL, 8 * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
                  t.a.fd, 0);
    g_assert(hidden != MAP_FAILED);
    memset(hidden + 4 * PAGE, 'H', 4 * PAGE);

    pages[0] = t.a.base + 2 * PAGE;
    pages[1] = t.a.base + 3 * PAGE;
    pages[2] = t.b.base;
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 3, PAGE, 3, two_rams_end,
                                       &t), ==, 0);
    g_assert_cmpuint(m.runs, ==, 2);
    g_assert_cmpuint(((uint8_t *)m.addr)[PAGE], ==, 'A');
    g_assert_cmpuint(((uint8_t *)m.addr)[2 * PAGE], ==, 'B');
    rdma_ibv_unmap(&m);

    munmap(hidden, 8 * PAGE);
    munmap(area, 8 * PAGE);
    close(t.a.fd);
    close(t.b.fd);
}

static void *no_end(const void *host, void *opaque)
{
    return NULL;
}

static void test_bad_args(void)
{
    void *pages[2], *odd[2], *outside[2], *last2[1];
    size_t before;
    RdmaIbvMap m;
    Ram r;

    ram_open(&r, 8, false);
    pages[0] = odd[0] = outside[0] = page(&r, 4);
    pages[1] = page(&r, 1);
    odd[1] = r.base + PAGE + 512;
    outside[1] = r.base + r.len;
    last2[0] = page(&r, 7);
    before = maps_count();

    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 0, PAGE, 8, ram_end, &r),
                    ==, -EINVAL);
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 2, 0, 8, ram_end, &r),
                    ==, -EINVAL);
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 2, 1000, 8, ram_end, &r),
                    ==, -EINVAL);
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, SIZE_MAX / PAGE + 1, PAGE,
                                       8, ram_end, &r), ==, -EINVAL);
    g_assert_cmpint(rdma_ibv_map_pages(&m, odd, 2, PAGE, 8, ram_end, &r),
                    ==, -EINVAL);
    g_assert_cmpint(rdma_ibv_map_pages(&m, outside, 2, PAGE, 8, ram_end, &r),
                    ==, -EFAULT);
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, 2, PAGE, 8, no_end, NULL),
                    ==, -EFAULT);
    /* a page of 2 host pages starting at the last host page of RAM */
    g_assert_cmpint(rdma_ibv_map_pages(&m, last2, 1, 2 * PAGE, 8, ram_end,
                                       &r), ==, -EFAULT);
    g_assert(map_zeroed(&m));
    g_assert_cmpuint(maps_count(), ==, before);
    ram_close(&r);
}

/*
 * The kernel runs out of VMAs half way (vm.max_map_count) when the caller's
 * budget allows more runs than that: everything mapped so far is undone.
 */
static void test_vma_limit_undone(void)
{
    g_autofree char *s = NULL;
    g_autofree void **pages = NULL;
    size_t limit, before, runs;
    RdmaIbvMap m;
    Ram r;

    if (!g_file_get_contents("/proc/sys/vm/max_map_count", &s, NULL, NULL)) {
        g_test_skip("no /proc/sys/vm/max_map_count");
        return;
    }
    limit = g_ascii_strtoull(s, NULL, 10);
    if (limit > 1u << 20) {
        g_test_skip("vm.max_map_count too large to reach in a test");
        return;
    }
    before = maps_count();
    runs = limit - before + 16;
    ram_open(&r, 2 * runs, false);     /* never touched: no memory used */
    pages = g_new(void *, runs);
    for (size_t i = 0; i < runs; i++) {
        pages[i] = page(&r, 2 * i);
    }
    before = maps_count();
    g_assert_cmpint(rdma_ibv_map_pages(&m, pages, runs, PAGE, UINT_MAX,
                                       ram_end, &r), ==, -ENOMEM);
    g_assert(map_zeroed(&m));
    g_assert_cmpuint(maps_count(), ==, before);
    ram_close(&r);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rdma-ibv-map/alias-coherent", test_alias_coherent);
    g_test_add_func("/rdma-ibv-map/single-run-not-aliased", test_single_run);
    g_test_add_func("/rdma-ibv-map/run-count", test_run_count);
    g_test_add_func("/rdma-ibv-map/same-page-twice", test_same_page_twice);
    g_test_add_func("/rdma-ibv-map/max-runs", test_max_runs);
    g_test_add_func("/rdma-ibv-map/unmap-removes-all", test_unmap_all);
    g_test_add_func("/rdma-ibv-map/private-source", test_private_source);
    g_test_add_func("/rdma-ibv-map/mapping-boundary", test_mapping_boundary);
    g_test_add_func("/rdma-ibv-map/bad-args", test_bad_args);
    g_test_add_func("/rdma-ibv-map/vma-limit-undone", test_vma_limit_undone);
    return g_test_run();
}
