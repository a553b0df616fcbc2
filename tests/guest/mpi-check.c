/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * mpi-check: MPI between two guests with its data checked (issue 27's
 * "Open MPI over UCX, 2 ranks per guest: a ring plus alltoall with a
 * checksum, and a bandwidth test").  Compiled by
 * tests/guest/build-guest.sh with Debian's mpicc (libopenmpi-dev); init's
 * t_mpi_* start it with mpirun across two guests.
 *
 *   mpirun -np 4 ... mpi-check [-s BYTES] [-n ROUNDS]
 *
 * Every rank prints where it runs.  Then, each with its own pattern per
 * sender, receiver and round, checked byte by byte where it arrives:
 *   ring      ROUNDS rounds of BYTES to the next rank and from the
 *             previous one (MPI_Sendrecv), and a token that every rank
 *             adds its rank + 1 to, which must come back to rank 0 as
 *             n (n + 1) / 2 each round;
 *   alltoall  MPI_Alltoall of 4096 64-bit words per pair, every word
 *             checked, and a checksum of all received words
 *             (MPI_Reduce to rank 0) against the one rank 0 computes;
 *   latency   8-byte ping-pongs between rank 0 and the first rank of the
 *             other guest (n / 2);
 *   bandwidth rank 0 sends ROUNDS windows of 8 messages of BYTES to rank
 *             n / 2, which checks every byte of every message.
 * Rank 0 prints one line per phase with the total of bad bytes of all
 * ranks; the exit status is 0 only if there were none.
 */

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW 8
#define A2A_WORDS 4096

static int rank, nranks;

static uint8_t pattern_byte(uint64_t seed, size_t offset)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull + (offset >> 3) + 1;

    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return (uint8_t)(x >> (8 * (offset & 7)));
}

static void fill(uint8_t *buf, size_t len, uint64_t seed)
{
    size_t i;

    for (i = 0; i < len; i++) {
        buf[i] = pattern_byte(seed, i);
    }
}

static long check(const char *what, const uint8_t *buf, size_t len,
                  uint64_t seed)
{
    size_t i;
    long bad = 0;

    for (i = 0; i < len; i++) {
        if (buf[i] != pattern_byte(seed, i)) {
            if (!bad) {
                printf("rank %d: FAILED: %s: byte %zu is 0x%02x, want "
                       "0x%02x\n", rank, what, i, buf[i],
                       pattern_byte(seed, i));
            }
            bad++;
        }
    }
    return bad;
}

static uint64_t seed_of(int phase, int from, int to, int round)
{
    return ((uint64_t)phase << 48) ^ ((uint64_t)from << 32) ^
           ((uint64_t)to << 16) ^ (uint64_t)round;
}

/* the word that rank FROM sends rank TO at place K of the alltoall */
static uint64_t a2a_word(int from, int to, int k)
{
    uint64_t x = seed_of(3, from, to, k) * 0x9e3779b97f4a7c15ull + 1;

    x ^= x >> 29;
    return x * 0xbf58476d1ce4e5b9ull;
}

static long total(long bad)
{
    long sum = 0;

    MPI_Allreduce(&bad, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return sum;
}

static long ring(size_t size, int rounds)
{
    int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
    uint8_t *out = malloc(size), *in = malloc(size);
    long bad = 0, token, all;
    int r;
    char what[64];

    for (r = 0; r < rounds; r++) {
        fill(out, size, seed_of(1, rank, next, r));
        memset(in, 0, size);
        MPI_Sendrecv(out, size, MPI_BYTE, next, r, in, size, MPI_BYTE, prev,
                     r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        snprintf(what, sizeof(what), "ring round %d from rank %d", r, prev);
        bad += check(what, in, size, seed_of(1, prev, rank, r));

        /* the token goes once around */
        if (rank == 0) {
            token = 1;
            MPI_Send(&token, 1, MPI_LONG, next, 1000 + r, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_LONG, prev, 1000 + r, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (token != (long)nranks * (nranks + 1) / 2) {
                printf("rank 0: FAILED: ring token %ld, want %d\n", token,
                       nranks * (nranks + 1) / 2);
                bad++;
            }
        } else {
            MPI_Recv(&token, 1, MPI_LONG, prev, 1000 + r, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            token += rank + 1;
            MPI_Send(&token, 1, MPI_LONG, next, 1000 + r, MPI_COMM_WORLD);
        }
    }
    free(out);
    free(in);
    all = total(bad);
    if (rank == 0) {
        printf("ring: %d ranks, %d rounds of %zu bytes, token %d each "
               "round: %ld bad bytes\n", nranks, rounds, size,
               nranks * (nranks + 1) / 2, all);
    }
    return all;
}

static long alltoall(void)
{
    uint64_t *out = malloc(sizeof(uint64_t) * A2A_WORDS * nranks);
    uint64_t *in = calloc((size_t)A2A_WORDS * nranks, sizeof(uint64_t));
    uint64_t sum = 0, all = 0, want = 0;
    long bad = 0, badall;
    int j, k, f;

    for (j = 0; j < nranks; j++) {
        for (k = 0; k < A2A_WORDS; k++) {
            out[j * A2A_WORDS + k] = a2a_word(rank, j, k);
        }
    }
    MPI_Alltoall(out, A2A_WORDS, MPI_UINT64_T, in, A2A_WORDS, MPI_UINT64_T,
                 MPI_COMM_WORLD);
    for (j = 0; j < nranks; j++) {
        for (k = 0; k < A2A_WORDS; k++) {
            uint64_t w = in[j * A2A_WORDS + k];

            if (w != a2a_word(j, rank, k)) {
                if (!bad) {
                    printf("rank %d: FAILED: alltoall word %d from rank %d "
                           "is 0x%016llx, want 0x%016llx\n", rank, k, j,
                           (unsigned long long)w,
                           (unsigned long long)a2a_word(j, rank, k));
                }
                bad++;
            }
            sum += w;
        }
    }
    MPI_Reduce(&sum, &all, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        for (f = 0; f < nranks; f++) {
            for (j = 0; j < nranks; j++) {
                for (k = 0; k < A2A_WORDS; k++) {
                    want += a2a_word(f, j, k);
                }
            }
        }
        if (all != want) {
            bad++;
        }
    }
    free(out);
    free(in);
    badall = total(bad);
    if (rank == 0) {
        printf("alltoall: %d ranks, %d words per pair: checksum 0x%016llx, "
               "want 0x%016llx (%s): %ld bad words\n", nranks, A2A_WORDS,
               (unsigned long long)all, (unsigned long long)want,
               all == want ? "equal" : "DIFFERENT", badall);
    }
    return badall;
}

static long latency(int peer, int iters)
{
    uint8_t buf[8] = { 0 };
    double t0 = 0;
    long bad = 0;
    int i;

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        t0 = MPI_Wtime();
    }
    for (i = 0; i < iters; i++) {
        if (rank == 0) {
            buf[0] = (uint8_t)i;
            MPI_Send(buf, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD);
            MPI_Recv(buf, 8, MPI_BYTE, peer, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (buf[0] != (uint8_t)(i + 1)) {
                bad++;
            }
        } else if (rank == peer) {
            MPI_Recv(buf, 8, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            buf[0]++;
            MPI_Send(buf, 8, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        double t = MPI_Wtime();

        t -= t0;
        printf("latency: rank 0 <-> rank %d, %d ping-pongs of 8 bytes: "
               "%.1f usec one way, %ld bad replies\n", peer, iters,
               t * 1e6 / iters / 2, bad);
    }
    return total(bad);
}

static long bandwidth(int peer, size_t size, int rounds)
{
    uint8_t *buf[WINDOW];
    MPI_Request req[WINDOW];
    double t0 = 0, t;
    long bad = 0, all;
    int r, w;
    char what[64];

    for (w = 0; w < WINDOW; w++) {
        buf[w] = malloc(size);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (r = 0; r < rounds; r++) {
        for (w = 0; w < WINDOW && (rank == 0 || rank == peer); w++) {
            if (rank == 0) {
                fill(buf[w], size, seed_of(4, r, w, 0));
                MPI_Isend(buf[w], size, MPI_BYTE, peer, w, MPI_COMM_WORLD,
                          &req[w]);
            } else {
                memset(buf[w], 0, size);
                MPI_Irecv(buf[w], size, MPI_BYTE, 0, w, MPI_COMM_WORLD,
                          &req[w]);
            }
        }
        if (rank == 0 || rank == peer) {
            MPI_Waitall(WINDOW, req, MPI_STATUSES_IGNORE);
        }
        if (rank == peer) {
            for (w = 0; w < WINDOW; w++) {
                snprintf(what, sizeof(what), "bandwidth round %d message %d",
                         r, w);
                bad += check(what, buf[w], size, seed_of(4, r, w, 0));
            }
        }
    }
    /* the receiver's checks are in the time: acknowledged by a barrier */
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime();
    t -= t0;
    for (w = 0; w < WINDOW; w++) {
        free(buf[w]);
    }
    all = total(bad);
    if (rank == 0) {
        printf("bandwidth: rank 0 -> rank %d, %d x %d messages of %zu bytes "
               "in %.3f s: %.1f MB/s (each byte checked): %ld bad bytes\n",
               peer, rounds, WINDOW, size, t,
               (double)rounds * WINDOW * size / t / 1e6, all);
    }
    return all;
}

int main(int argc, char **argv)
{
    size_t size = 1 << 20;
    int rounds = 8, opt, len;
    long bad = 0;
    char host[MPI_MAX_PROCESSOR_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    while ((opt = getopt(argc, argv, "s:n:")) != -1) {
        switch (opt) {
        case 's':
            size = atol(optarg);
            break;
        case 'n':
            rounds = atoi(optarg);
            break;
        default:
            if (rank == 0) {
                fprintf(stderr, "usage: mpi-check [-s BYTES] [-n ROUNDS]\n");
            }
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    MPI_Get_processor_name(host, &len);
    printf("rank %d of %d on %s\n", rank, nranks, host);
    MPI_Barrier(MPI_COMM_WORLD);

    bad += ring(size, rounds);
    bad += alltoall();
    if (nranks > 1) {
        bad += latency(nranks / 2, 100);
        bad += bandwidth(nranks / 2, size, rounds);
    }
    if (rank == 0) {
        printf(bad ? "mpi-check: FAILED: %ld bad bytes or words\n"
                   : "mpi-check: PASS: every byte and word checked "
                     "matched (%ld bad)\n", bad);
    }
    MPI_Finalize();
    return bad != 0;
}
