/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make bench-mr: what it costs the device to give a guest MR to a host
 * RDMA device, i.e. to turn a list of scattered guest pages into the one
 * contiguous host virtual range ibv_reg_mr() needs
 * (hw/rdma/ibverbs/rdma_ibv_map.c), next to the method of the removed QEMU
 * pvrdma (one mremap() per 4 KiB page), both measured here in one run.
 *
 * "Guest RAM" is made as QEMU makes memory-backend-memfd,share=on: a memfd,
 * ftruncate(), mmap(MAP_SHARED); every page is touched (a running guest's
 * RAM is populated) and starts with its page number, so that the mapped
 * ranges can be checked.  MR page lists of one size are built in four
 * layouts:
 *   (a) contiguous        one run: no alias is made at all
 *   (b) 2 MiB runs        scattered, as a buffer backed by guest THPs
 *   (c) 64 KiB runs       scattered
 *   (d) 4 KiB pages       fully scattered, shuffled: one run per page; a
 *                         full GiB needs more VMAs than Linux allows a
 *                         process, so it is measured on --scatter MiB and
 *                         scaled up, labelled as extrapolated
 * Runs are never adjacent in the list by accident: the runs column is the
 * layout's.
 *
 * Times are CLOCK_MONOTONIC medians of --reps repetitions of map + unmap.
 * With libibverbs (-DHAVE_IBVERBS) and an RDMA device, ibv_reg_mr() +
 * ibv_dereg_mr() of the mapped range is timed too and printed apart: that
 * is the host kernel pinning pages, not device-side time.
 *
 * Build: see tests/bench/mr-reg-bench.sh (needs tests/include as include
 * path for the module's qemu/osdep.h).
 */
#include "qemu/osdep.h"
#include <fcntl.h>
#include <limits.h>
#include <getopt.h>
#include <time.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#ifdef HAVE_IBVERBS
#include <infiniband/verbs.h>
#endif
#include "rdma_ibv_map.h"

#define PAGE        4096
#define MIB         (1024 * 1024)
#define GIB_PAGES   (1024 * (size_t)MIB / PAGE)
#define TARGET_MS   50.0    /* per GiB, device-side */
#define REMOVED_MS  500.0   /* the removed device, per GiB, as documented */

typedef struct Ram {
    uint8_t *base;
    size_t len;
} Ram;

typedef struct Layout {
    const char *name;
    size_t run_pages;       /* 0: the whole list is one run */
    size_t npages;
} Layout;

typedef struct Times {
    double map_ms, unmap_ms, total_ms;
} Times;

static struct {
    size_t ram_mib, size_mib, scatter_mib;
    int reps, old_reps, ibv_reps;
    bool ibv_only;
    const char *ibdev, *where;
} opt = {
    .ram_mib = 1536, .size_mib = 1024, .scatter_mib = 128,
    .reps = 5, .old_reps = 3, .ibv_reps = 3,
};

static double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof(v[0]), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Lines in /proc/self/maps (one per VMA), read without allocating. */
static size_t maps_count(void)
{
    static char buf[65536];
    size_t lines = 0;
    ssize_t n;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        return 0;
    }
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            lines += buf[i] == '\n';
        }
    }
    close(fd);
    return lines;
}

/*
 * CPU time used on the whole machine (/proc/stat) and by this process
 * (getrusage), in seconds: with 2 cores, any other load shows in the
 * figures, so the table says how much there was.
 */
static double machine_busy_s(void)
{
    unsigned long long v[8] = { };
    FILE *f = fopen("/proc/stat", "r");

    if (!f || fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                     &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8) {
        v[0] = 0;
    }
    if (f) {
        fclose(f);
    }
    /* user nice system irq softirq steal; not idle, iowait */
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) /
           sysconf(_SC_CLK_TCK);
}

static double self_cpu_s(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static size_t max_map_count(void)
{
    g_autofree char *s = NULL;

    if (!g_file_get_contents("/proc/sys/vm/max_map_count", &s, NULL, NULL)) {
        return 65530;
    }
    return strtoul(s, NULL, 10);
}

static void *ram_end(const void *host, void *opaque)
{
    Ram *r = opaque;
    const uint8_t *p = host;

    return p >= r->base && p < r->base + r->len ? r->base + r->len : NULL;
}

static bool ram_create(Ram *r, size_t mib)
{
    int fd = memfd_create("mr-reg-bench-guest-ram", MFD_CLOEXEC);

    r->len = mib * MIB;
    if (fd < 0 || ftruncate(fd, r->len) < 0) {
        perror("mr-reg-bench: memfd");
        return false;
    }
    r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (r->base == MAP_FAILED) {
        perror("mr-reg-bench: mmap of guest RAM");
        return false;
    }
    for (size_t i = 0; i < r->len / PAGE; i++) {
        *(uint64_t *)(r->base + i * PAGE) = i;
    }
    return true;
}

/* xorshift64*: a fixed seed, so every run measures the same layouts */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static size_t rng_below(size_t n)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (rng_state * 0x2545f4914f6cdd1dull) % n;
}

/*
 * @l->npages pages of @r in chunks of @l->run_pages, the chunks picked at
 * random from all of RAM in random order, never two neighbours in a row
 * (they would merge into one run).
 */
static void **build_pages(Ram *r, const Layout *l)
{
    size_t ram_pages = r->len / PAGE;
    size_t run = l->run_pages ? l->run_pages : l->npages;
    size_t nchunks = ram_pages / run, k = l->npages / run;
    g_autofree size_t *chunk = g_new(size_t, nchunks);
    void **pages = g_new(void *, l->npages);

    for (size_t i = 0; i < nchunks; i++) {
        chunk[i] = i;
    }
    if (l->run_pages) {
        for (size_t i = nchunks - 1; i > 0; i--) {
            size_t j = rng_below(i + 1), t = chunk[i];

            chunk[i] = chunk[j];
            chunk[j] = t;
        }
        for (size_t i = 1; i < k; i++) {
            while (chunk[i] == chunk[i - 1] + 1 ||
                   (i + 1 < k && chunk[i + 1] == chunk[i] + 1)) {
                size_t j = i + 1 + rng_below(nchunks - i - 1), t = chunk[i];

                chunk[i] = chunk[j];
                chunk[j] = t;
            }
        }
    }
    for (size_t i = 0; i < k; i++) {
        for (size_t p = 0; p < run; p++) {
            pages[i * run + p] = r->base + (chunk[i] * run + p) * PAGE;
        }
    }
    return pages;
}

/* Repeated timings of map and unmap, summed up as medians. */
typedef struct Samples {
    double *map, *unmap, *total;
    int n;
} Samples;

static void samples_init(Samples *s, int reps)
{
    s->map = g_new(double, reps);
    s->unmap = g_new(double, reps);
    s->total = g_new(double, reps);
    s->n = 0;
}

/* map from @t0 to @t1, unmap from @t1 to @t2 */
static void samples_add(Samples *s, double t0, double t1, double t2)
{
    s->map[s->n] = t1 - t0;
    s->unmap[s->n] = t2 - t1;
    s->total[s->n] = t2 - t0;
    s->n++;
}

static void samples_finish(Samples *s, Times *t)
{
    if (s->n) {
        t->map_ms = median(s->map, s->n);
        t->unmap_ms = median(s->unmap, s->n);
        t->total_ms = median(s->total, s->n);
    }
    g_free(s->map);
    g_free(s->unmap);
    g_free(s->total);
}

/* Does the range show, page by page, the pages of the list? (sampled) */
static bool check_range(void *addr, void **pages, size_t npages)
{
    size_t step = npages > 4096 ? npages / 4096 : 1;

    for (size_t i = 0; i < npages; i += step) {
        if (*(uint64_t *)((uint8_t *)addr + i * PAGE) !=
            *(uint64_t *)pages[i]) {
            return false;
        }
    }
    return *(uint64_t *)((uint8_t *)addr + (npages - 1) * PAGE) ==
           *(uint64_t *)pages[npages - 1];
}

/* --- the module ----------------------------------------------------------- */

static int time_module(Ram *r, void **pages, size_t npages, unsigned budget,
                       int reps, Times *t, RdmaIbvMap *shape, long *vmas,
                       bool *ok)
{
    RdmaIbvMap m;
    size_t before;
    Samples s;
    int rc;

    /* once untimed: check the result and count its VMAs */
    before = maps_count();
    rc = rdma_ibv_map_pages(&m, pages, npages, PAGE, budget, ram_end, r);
    if (rc < 0) {
        return rc;
    }
    *vmas = (long)maps_count() - (long)before;
    *ok = check_range(m.addr, pages, npages);
    *shape = m;
    rdma_ibv_unmap(&m);

    samples_init(&s, reps);
    for (int i = 0; i < reps && rc == 0; i++) {
        double t0 = now_ms(), t1;

        rc = rdma_ibv_map_pages(&m, pages, npages, PAGE, budget, ram_end, r);
        t1 = now_ms();
        rdma_ibv_unmap(&m);
        samples_add(&s, t0, t1, now_ms());
    }
    samples_finish(&s, t);
    return rc;
}

/* --- the removed device's method ----------------------------------------- */

/*
 * As the removed hw/rdma/vmw/pvrdma_cmd.c did it: mremap() the first page
 * to the MR's full length, then mremap(MREMAP_FIXED) every further 4 KiB
 * page over it (its per-page pci_dma_map() of the guest address is not
 * included).  Returns the pages done; *err is set when it stopped early.
 */
static size_t old_map(void **pages, size_t npages, void **base, int *err)
{
    size_t len = npages * PAGE, i;
    uint8_t *b = mremap(pages[0], 0, len, MREMAP_MAYMOVE);

    *err = 0;
    *base = NULL;
    if (b == MAP_FAILED) {
        *err = errno;
        return 0;
    }
    for (i = 1; i < npages; i++) {
        if (mremap(pages[i], 0, PAGE, MREMAP_MAYMOVE | MREMAP_FIXED,
                   b + i * PAGE) == MAP_FAILED) {
            *err = errno;
            break;
        }
    }
    *base = b;
    return i;
}

static int time_old(void **pages, size_t npages, int reps, Times *t,
                    long *vmas, bool *ok, size_t *done)
{
    size_t before = maps_count();
    void *base;
    Samples s;
    int err;

    *done = old_map(pages, npages, &base, &err);
    if (err) {
        if (base) {
            munmap(base, npages * PAGE);
        }
        return -err;
    }
    *vmas = (long)maps_count() - (long)before;
    *ok = check_range(base, pages, npages);
    munmap(base, npages * PAGE);

    samples_init(&s, reps);
    for (int i = 0; i < reps && !err; i++) {
        double t0 = now_ms(), t1;

        old_map(pages, npages, &base, &err);
        t1 = now_ms();
        if (base) {
            munmap(base, npages * PAGE);
        }
        samples_add(&s, t0, t1, now_ms());
    }
    samples_finish(&s, t);
    return -err;
}

/* --- ibv_reg_mr ----------------------------------------------------------- */

#ifdef HAVE_IBVERBS
static void time_ibv(Ram *r, const Layout *layouts, int n)
{
    struct ibv_device **list;
    struct ibv_context *ctx = NULL;
    struct ibv_pd *pd = NULL;
    struct ibv_device *dev = NULL;
    int ndev = 0;

    list = ibv_get_device_list(&ndev);
    if (!list || !ndev) {
        printf("\nibv_reg_mr: skipped: no RDMA device (%s)\n",
               list ? "ibv_get_device_list() is empty"
                    : g_strerror(errno));
        goto out;
    }
    for (int i = 0; i < ndev; i++) {
        if (!opt.ibdev || !strcmp(ibv_get_device_name(list[i]), opt.ibdev)) {
            dev = list[i];
            break;
        }
    }
    if (!dev) {
        printf("\nibv_reg_mr: skipped: no RDMA device named %s\n", opt.ibdev);
        goto out;
    }
    ctx = ibv_open_device(dev);
    pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    if (!pd) {
        printf("\nibv_reg_mr: skipped: cannot open %s or allocate a PD: %s\n",
               ibv_get_device_name(dev), g_strerror(errno));
        goto out;
    }
    printf("\nibv_reg_mr + ibv_dereg_mr of the mapped range on %s "
           "(LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE), median of %d:\n",
           ibv_get_device_name(dev), opt.ibv_reps);
    printf("host kernel pinning in ibv_reg_mr%s%s: not device-side time\n",
           opt.where ? ", " : "", opt.where ? opt.where : "");
    for (int l = 0; l < n; l++) {
        const Layout *lay = &layouts[l];
        g_autofree void **pages = NULL;
        g_autofree double *reg = g_new(double, opt.ibv_reps);
        g_autofree double *dereg = g_new(double, opt.ibv_reps);
        bool aliased = false;
        RdmaIbvMap m;
        int rc = 0;

        pages = build_pages(r, lay);
        /*
         * A fresh mapping each time, as every new MR gets: once pinned, an
         * alias keeps its page tables, and a second registration of it
         * would not pay the faults the first one did.
         */
        for (int i = 0; i < opt.ibv_reps && !rc; i++) {
            struct ibv_mr *mr;
            double t0, t1;

            rc = rdma_ibv_map_pages(&m, pages, lay->npages, PAGE, UINT_MAX,
                                    ram_end, r);
            if (rc < 0) {
                break;
            }
            aliased = m.aliased;
            t0 = now_ms();
            mr = ibv_reg_mr(pd, m.addr, m.len, IBV_ACCESS_LOCAL_WRITE |
                            IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
            t1 = now_ms();
            if (!mr) {
                rc = -errno;
                rdma_ibv_unmap(&m);
                break;
            }
            ibv_dereg_mr(mr);
            reg[i] = t1 - t0;
            dereg[i] = now_ms() - t1;
            rdma_ibv_unmap(&m);
        }
        if (rc < 0) {
            printf("  %-16s %5zu MiB  failed: %s\n", lay->name,
                   lay->npages * PAGE / MIB, g_strerror(-rc));
        } else {
            double rg = median(reg, opt.ibv_reps);
            double dr = median(dereg, opt.ibv_reps);

            printf("  %-16s %5zu MiB  %s  reg %.1f ms  dereg %.1f ms  "
                   "(%.0f ms per GiB)\n", lay->name,
                   lay->npages * PAGE / MIB, aliased ? "alias " : "direct",
                   rg, dr, (rg + dr) * GIB_PAGES / lay->npages);
        }
    }
out:
    if (pd) {
        ibv_dealloc_pd(pd);
    }
    if (ctx) {
        ibv_close_device(ctx);
    }
    if (list) {
        ibv_free_device_list(list);
    }
}
#endif

/* --- page faults the host's pinning takes ------------------------------- */

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ  22
#define MADV_POPULATE_WRITE 23
#endif

/* Median time of @advice (then @advice2, unless 0) over the mapped range. */
static double time_populate(Ram *r, void **pages, size_t npages, int advice,
                            int advice2, bool *aliased)
{
    g_autofree double *v = g_new(double, opt.reps);

    for (int i = 0; i < opt.reps; i++) {
        RdmaIbvMap m;
        double t0;

        if (rdma_ibv_map_pages(&m, pages, npages, PAGE, UINT_MAX, ram_end,
                               r) < 0) {
            return -1;
        }
        *aliased = m.aliased;
        t0 = now_ms();
        if (madvise(m.addr, m.len, advice) < 0 ||
            (advice2 && madvise(m.addr, m.len, advice2) < 0)) {
            rdma_ibv_unmap(&m);
            return -1;
        }
        v[i] = now_ms() - t0;
        rdma_ibv_unmap(&m);
    }
    return median(v, opt.reps);
}

/*
 * ibv_reg_mr() pins the range with pin_user_pages(FOLL_WRITE).  Guest RAM
 * itself has its page tables already; an alias has none (mremap() with
 * old_size 0 moves no page table), so there every page takes a fault in
 * the host kernel.  MADV_POPULATE_WRITE walks and faults the same way and
 * needs no RDMA device.  MADV_POPULATE_READ first: a read fault on a file
 * mapping maps up to 16 pages (fault_around_bytes), leaving cheap
 * write-enable faults.  Not device-side time: the host kernel's.
 */
static void run_populate(Ram *r, const Layout *layouts, int n)
{
    printf("\npage faults the host's pinning (ibv_reg_mr) takes on the range, "
           "with MADV_POPULATE_WRITE standing in for\npin_user_pages("
           "FOLL_WRITE) (host kernel time, not device-side; median of %d):"
           "\n", opt.reps);
    printf("%-16s %8s %-7s %14s %18s\n", "layout", "size", "range",
           "write ms/GiB", "read+write ms/GiB");
    for (int l = 0; l < n; l++) {
        g_autofree void **pages = build_pages(r, &layouts[l]);
        double scale = (double)GIB_PAGES / layouts[l].npages;
        bool aliased = false;
        double w, rw;

        w = time_populate(r, pages, layouts[l].npages, MADV_POPULATE_WRITE,
                          0, &aliased);
        rw = time_populate(r, pages, layouts[l].npages, MADV_POPULATE_READ,
                           MADV_POPULATE_WRITE, &aliased);
        if (w < 0 || rw < 0) {
            printf("%-16s failed: %s (MADV_POPULATE_* needs Linux 5.14)\n",
                   layouts[l].name, g_strerror(errno));
            continue;
        }
        printf("%-16s %4zu MiB %-7s %14.1f %18.1f\n", layouts[l].name,
               layouts[l].npages * PAGE / MIB, aliased ? "alias" : "direct",
               w * scale, rw * scale);
    }
}

/* --- main ----------------------------------------------------------------- */

static const char *verdict(double per_gib)
{
    return per_gib <= TARGET_MS ? "met" : "NOT met";
}

/*
 * The tables: the module and the removed device's method on every layout,
 * the fully scattered GiB, the comparison and the machine's load meanwhile.
 */
static void run_tables(Ram *r, const Layout *layouts, unsigned budget,
                       size_t limit)
{
    Times mod[4] = { }, old[4] = { };
    RdmaIbvMap shape[4] = { };
    long mod_vmas[4] = { }, old_vmas[4] = { };
    int mod_rc[4] = { }, old_rc[4] = { };
    bool mod_ok[4] = { }, old_ok[4] = { };
    size_t old_done[4] = { };
    g_autofree void **full_d = NULL;
    double wall0, busy0, self0, other;

    printf("times: CLOCK_MONOTONIC, median of %d (module) / %d (removed "
           "device's method); total = map + unmap\n\n",
           opt.reps, opt.old_reps);

    wall0 = now_ms();
    busy0 = machine_busy_s();
    self0 = self_cpu_s();
    for (int l = 0; l < 4; l++) {
        g_autofree void **pages = build_pages(r, &layouts[l]);

        mod_rc[l] = time_module(r, pages, layouts[l].npages, budget,
                                opt.reps, &mod[l], &shape[l], &mod_vmas[l],
                                &mod_ok[l]);
        old_rc[l] = time_old(pages, layouts[l].npages, opt.old_reps, &old[l],
                             &old_vmas[l], &old_ok[l], &old_done[l]);
    }
    other = (machine_busy_s() - busy0 - (self_cpu_s() - self0)) /
            ((now_ms() - wall0) / 1e3 * sysconf(_SC_NPROCESSORS_ONLN));

    printf("rdma_ibv_map_pages + rdma_ibv_unmap (hw/rdma/ibverbs/"
           "rdma_ibv_map.c):\n");
    printf("%-16s %8s %7s %6s %9s %9s %9s %11s  %s\n", "layout", "size",
           "runs", "VMAs", "map ms", "unmap ms", "total ms", "per GiB ms",
           "target <= 50 ms/GiB");
    for (int l = 0; l < 4; l++) {
        const Layout *lay = &layouts[l];
        double scale = (double)GIB_PAGES / lay->npages;
        double per = mod[l].total_ms * scale;

        if (mod_rc[l] < 0) {
            printf("%-16s %4zu MiB  failed: %s\n", lay->name,
                   lay->npages * PAGE / MIB, g_strerror(-mod_rc[l]));
            continue;
        }
        printf("%-16s %4zu MiB %7u %6ld %9.3f %9.3f %9.3f %11.3f%s  %s%s%s\n",
               lay->name, lay->npages * PAGE / MIB, shape[l].runs,
               mod_vmas[l], mod[l].map_ms, mod[l].unmap_ms, mod[l].total_ms,
               per, scale != 1 ? "*" : " ", verdict(per),
               shape[l].aliased ? "" : " (no alias: guest RAM itself)",
               mod_ok[l] ? "" : "  CONTENT MISMATCH");
    }
    if (layouts[3].npages != GIB_PAGES) {
        printf("  * extrapolated: measured on %zu MiB, scaled linearly to "
               "1 GiB\n", layouts[3].npages * PAGE / MIB);
    }

    /* (d) for a full GiB: more runs than a process can have VMAs */
    full_d = g_new(void *, GIB_PAGES);
    for (size_t i = 0; i < GIB_PAGES; i++) {
        /* every other page of RAM (wrapping): no two pages contiguous */
        full_d[i] = r->base + (2 * i % (r->len / PAGE)) * PAGE;
    }
    /* with the budget, then without one: the kernel's own VMA limit */
    for (int k = 0; k < 2; k++) {
        size_t before = maps_count();
        RdmaIbvMap m;
        double t0, t1;
        long left;
        int rc;

        t0 = now_ms();
        rc = rdma_ibv_map_pages(&m, full_d, GIB_PAGES, PAGE,
                                k ? UINT_MAX : budget, ram_end, r);
        t1 = now_ms();
        left = (long)maps_count() - (long)before;
        if (!rc) {
            rdma_ibv_unmap(&m);
        }
        if (!k) {
            printf("(d) 4 KiB pages  1024 MiB (every other page of RAM): "
                   "%zu runs > budget %u:\n", GIB_PAGES, budget);
        }
        printf("                 %s: %s in %.3f ms, %s (VMAs %+ld)\n",
               k ? "without a budget" : "with the budget",
               rc != -ENOMEM ? "UNEXPECTED" :
               k ? "-ENOMEM from the kernel at vm.max_map_count"
                 : "-ENOMEM before mapping anything",
               t1 - t0, left ? "NOT UNDONE" : "nothing left behind", left);
        if (k && rc == -ENOMEM) {
            printf("                 (it got about %zu runs far: the VMAs "
                   "this process had left)\n", limit - before);
        }
    }

    printf("\nthe removed device's method, re-implemented here: mremap() of "
           "the first page to the MR's length,\nthen one "
           "mremap(MREMAP_FIXED) per further 4 KiB page (its per-page "
           "pci_dma_map() not included):\n");
    printf("%-16s %8s %7s %6s %9s %9s %9s %11s\n", "layout", "size",
           "mremaps", "VMAs", "map ms", "unmap ms", "total ms", "per GiB ms");
    for (int l = 0; l < 4; l++) {
        const Layout *lay = &layouts[l];
        double scale = (double)GIB_PAGES / lay->npages;

        if (old_rc[l] < 0) {
            printf("%-16s %4zu MiB  failed after %zu pages: %s\n", lay->name,
                   lay->npages * PAGE / MIB, old_done[l],
                   g_strerror(-old_rc[l]));
            continue;
        }
        printf("%-16s %4zu MiB %7zu %6ld %9.1f %9.1f %9.1f %11.1f%s%s\n",
               lay->name, lay->npages * PAGE / MIB, lay->npages,
               old_vmas[l], old[l].map_ms, old[l].unmap_ms, old[l].total_ms,
               old[l].total_ms * scale, scale != 1 ? "*" : "",
               old_ok[l] ? "" : "  CONTENT MISMATCH");
    }
    /* the removed method on a full scattered GiB: how far it gets */
    {
        void *base;
        double t0, t1;
        size_t done;
        int err;

        t0 = now_ms();
        done = old_map(full_d, GIB_PAGES, &base, &err);
        t1 = now_ms();
        if (base) {
            munmap(base, GIB_PAGES * PAGE);
        }
        printf("(d) 4 KiB pages  1024 MiB (every other page of RAM): %s "
               "after %zu of %zu pages in %.1f ms%s\n",
               err ? "stopped" : "finished", done, GIB_PAGES, t1 - t0,
               err == ENOMEM ? ": ENOMEM, out of VMAs (vm.max_map_count)"
                             : "");
    }
    if (layouts[3].npages != GIB_PAGES) {
        printf("  * extrapolated: measured on %zu MiB, scaled linearly to "
               "1 GiB\n", layouts[3].npages * PAGE / MIB);
    }

    printf("\ncomparison per GiB (removed device: ~%.0f ms per GiB as "
           "documented; target <= %.0f ms):\n", REMOVED_MS, TARGET_MS);
    for (int l = 0; l < 4; l++) {
        const Layout *lay = &layouts[l];
        double scale = (double)GIB_PAGES / lay->npages;
        const char *x = scale != 1 ? " (extrapolated)" : "";

        if (mod_rc[l] < 0) {
            continue;
        }
        printf("  1 GiB %-16s: %.3f ms%s (removed device: ~%.0f ms; "
               "measured here per-page: ", lay->name + 4,
               mod[l].total_ms * scale, x, REMOVED_MS);
        if (old_rc[l] < 0) {
            printf("failed)");
        } else {
            printf("%.1f ms%s, %.0fx)", old[l].total_ms * scale, x,
                   old[l].total_ms / mod[l].total_ms);
        }
        printf("  target: %s\n", verdict(mod[l].total_ms * scale));
    }

    printf("\ncontention: other processes used about %.0f%% of the machine's "
           "%ld cores while the table was measured%s\n",
           other > 0 ? 100 * other : 0, sysconf(_SC_NPROCESSORS_ONLN),
           other > 0.1 ? " (figures inflated: compare them only within this "
                         "run)" : "");
}

/* The first "model name" of /proc/cpuinfo. */
static char *cpu_model(void)
{
    g_autofree char *info = NULL;
    char *m, *e;

    if (!g_file_get_contents("/proc/cpuinfo", &info, NULL, NULL) ||
        !(m = strstr(info, "model name")) || !(m = strchr(m, ':'))) {
        return g_strdup("?");
    }
    m += 2;
    e = strchr(m, '\n');
    return e ? g_strndup(m, e - m) : g_strdup(m);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: mr-reg-bench [--ram MIB] [--size MIB] [--scatter MIB] "
            "[--reps N]\n"
            "                    [--old-reps N] [--ibv-reps N] "
            "[--ibdev NAME] [--where TEXT]\n"
            "                    [--ibv-only]\n"
            "  --ram      guest RAM (memfd) in MiB (1536)\n"
            "  --size     MR size for layouts a-c in MiB (1024)\n"
            "  --scatter  MR size for the fully scattered layout d (128)\n"
            "  --reps     repetitions of the module, median (5)\n"
            "  --old-reps repetitions of the removed device's method (3)\n"
            "  --ibv-reps repetitions of ibv_reg_mr (3; 0: skip)\n"
            "  --ibdev    RDMA device for ibv_reg_mr (the first)\n"
            "  --where    said of the ibv_reg_mr figures, e.g. 'under TCG "
            "in the host VM'\n"
            "  --ibv-only only the ibv_reg_mr figures (layouts a and b)\n");
}

static bool parse(int argc, char **argv)
{
    static const struct option lo[] = {
        { "ram", required_argument, NULL, 'r' },
        { "size", required_argument, NULL, 's' },
        { "scatter", required_argument, NULL, 'd' },
        { "reps", required_argument, NULL, 'n' },
        { "old-reps", required_argument, NULL, 'o' },
        { "ibv-reps", required_argument, NULL, 'i' },
        { "ibdev", required_argument, NULL, 'D' },
        { "where", required_argument, NULL, 'w' },
        { "ibv-only", no_argument, NULL, 'I' },
        { "help", no_argument, NULL, 'h' },
        { }
    };
    int c;

    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'r': opt.ram_mib = strtoul(optarg, NULL, 0); break;
        case 's': opt.size_mib = strtoul(optarg, NULL, 0); break;
        case 'd': opt.scatter_mib = strtoul(optarg, NULL, 0); break;
        case 'n': opt.reps = atoi(optarg); break;
        case 'o': opt.old_reps = atoi(optarg); break;
        case 'i': opt.ibv_reps = atoi(optarg); break;
        case 'D': opt.ibdev = optarg; break;
        case 'w': opt.where = optarg; break;
        case 'I': opt.ibv_only = true; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return false;
        }
    }
    /* room for the chunks to be picked apart (build_pages()) */
    if (opt.size_mib < 2 || opt.size_mib % 2 || opt.scatter_mib < 1 ||
        opt.ram_mib < opt.size_mib + opt.size_mib / 4 ||
        opt.ram_mib < opt.scatter_mib + opt.scatter_mib / 4 ||
        opt.reps < 1 || opt.old_reps < 1 || opt.ibv_reps < 0) {
        fprintf(stderr, "mr-reg-bench: --size must be even, --ram at least "
                "1.25 x --size and --scatter, repetitions >= 1\n");
        return false;
    }
    return true;
}

int main(int argc, char **argv)
{
    size_t npages, spages, base_vmas, limit;
    unsigned budget;
    struct utsname u;
    Layout layouts[4];
    g_autofree char *cpu = NULL;
    Ram r;

    if (!parse(argc, argv)) {
        return 2;
    }
    npages = opt.size_mib * MIB / PAGE;
    spages = opt.scatter_mib * MIB / PAGE;
    layouts[0] = (Layout){ "(a) contiguous", 0, npages };
    layouts[1] = (Layout){ "(b) 2 MiB runs", 2 * MIB / PAGE, npages };
    layouts[2] = (Layout){ "(c) 64 KiB runs", 64 * 1024 / PAGE, npages };
    layouts[3] = (Layout){ "(d) 4 KiB pages", 1, spages };

    if (!ram_create(&r, opt.ram_mib)) {
        return 1;
    }
    limit = max_map_count();
    base_vmas = maps_count();
    /* leave room for the process's own mappings, as a device would */
    budget = limit > base_vmas + 1024 ? limit - base_vmas - 1024 : 1;

    uname(&u);
    cpu = cpu_model();
    printf("mr-reg-bench: guest MR page list -> one contiguous host range "
           "for ibv_reg_mr\n");
    printf("host: %s, %ld cores, Linux %s, vm.max_map_count %zu "
           "(this process: %zu VMAs)\n", cpu,
           sysconf(_SC_NPROCESSORS_ONLN), u.release, limit, base_vmas);
    printf("guest RAM: memfd %zu MiB, MAP_SHARED, every page touched; "
           "4 KiB pages; run budget per MR %u\n", opt.ram_mib, budget);
    if (!opt.ibv_only) {
        run_tables(&r, layouts, budget, limit);
        run_populate(&r, layouts, 2);
    }

#ifdef HAVE_IBVERBS
    if (opt.ibv_reps > 0) {
        Layout il[2] = { layouts[0], layouts[1] };

        time_ibv(&r, il, 2);
    } else {
        printf("\nibv_reg_mr: skipped (--ibv-reps 0)\n");
    }
#else
    printf("\nibv_reg_mr: skipped (built without libibverbs)\n");
#endif
    return 0;
}
