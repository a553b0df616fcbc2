/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * make bench: the host's memcpy bandwidth for 1 MiB copies, and its TSC
 * rate (under TCG the guest's rdtsc reads the host's TSC, so this is the
 * rate perftest's cycle counts in the guest should be divided by).
 *
 * Output, one "key value" per line:
 *   memcpy_hot_mibps    1 MiB memcpy between the same two 1 MiB buffers
 *                       (cache-resident, as a device copying a reused
 *                       perftest buffer would see them), MiB/s, median of 7
 *   memcpy_cold_mibps   1 MiB memcpy cycling through 2 x 256 MiB (every
 *                       copy from/to memory not in cache), MiB/s, median of 7
 *   tsc_mhz             rdtsc ticks per microsecond of CLOCK_MONOTONIC
 *
 * Build: cc -O2 -o memcpy-bw memcpy-bw.c
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#define MIB (1024 * 1024)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* one trial: copies of `size` bytes for at least `secs`, returns MiB/s */
static double trial(char *src, char *dst, size_t pool, size_t size, double secs)
{
    size_t off = 0, n = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 16; i++) {
            memcpy(dst + off, src + off, size);
            /* the copy must happen: make the compiler assume it is used */
            __asm__ volatile("" : : "r"(dst + off) : "memory");
            off += size;
            if (off + size > pool) {
                off = 0;
            }
            n++;
        }
        t = now() - t0;
    } while (t < secs);
    return (double)n * size / MIB / t;
}

static double median_bw(char *src, char *dst, size_t pool, size_t size)
{
    double r[7];
    trial(src, dst, pool, size, 0.1); /* warm up: page faults, caches */
    for (int i = 0; i < 7; i++) {
        r[i] = trial(src, dst, pool, size, 0.2);
    }
    qsort(r, 7, sizeof(r[0]), cmp);
    return r[3];
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoul(argv[1], NULL, 0) : MIB;
    size_t pool = 256 * (size_t)MIB;
    char *src = aligned_alloc(4096, pool), *dst = aligned_alloc(4096, pool);

    if (!src || !dst || size == 0 || size > pool) {
        fprintf(stderr, "memcpy-bw: bad size or out of memory\n");
        return 1;
    }
    memset(src, 0x5a, pool);
    memset(dst, 0xa5, pool);
    printf("copy_size %zu\n", size);
    printf("memcpy_hot_mibps %.0f\n", median_bw(src, dst, size, size));
    printf("memcpy_cold_mibps %.0f\n", median_bw(src, dst, pool, size));

    /* TSC rate against CLOCK_MONOTONIC over 0.5 s */
    double t0 = now(), t;
    uint64_t c0 = __rdtsc(), c;
    do {
        t = now();
        c = __rdtsc();
    } while (t - t0 < 0.5);
    printf("tsc_mhz %.1f\n", (c - c0) / (t - t0) / 1e6);
    free(src);
    free(dst);
    return 0;
}
