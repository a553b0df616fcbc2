/*
 * The soft RDMA engine: the CRC-32 of the ICRC.
 *
 * Every frame the port sends or takes is covered by the ICRC, the CRC-32
 * of IEEE 802.3 (IB vol. 1 annex A17.3.3), so its cost is paid per byte on
 * both ends of the link: zlib's table-driven crc32() runs at about 4 GB/s
 * here, a quarter of a microsecond for a 1024-byte payload, which on a
 * busy link is a tenth of the main thread.  On an x86-64 host with
 * carry-less multiplication (PCLMULQDQ) the bulk of a buffer is folded 64
 * bytes at a time instead, and zlib only does the tail of under 16 bytes.
 * Both give the same result, bit for bit; the unit lane compares them
 * over every length and alignment of a frame.
 *
 * The folding, in short (reflected bit order throughout, as the ICRC is
 * computed LSB first): the message is a polynomial M(x), the CRC is
 * M(x) x^32 mod P(x).  A 128-bit block B that stands n bits before the
 * end of what remains contributes B x^n mod P, and B = Bh x^64 + Bl; so
 * it is replaced by Bh (x^(n+64) mod P) + Bl (x^n mod P), two carry-less
 * products of 64 by 33 bits, XORed into the block n bits further on.
 * Four blocks in flight fold 512 bits at a time; the last 128 bits are
 * reduced to 64, then 32, and a Barrett reduction gives the remainder.
 * The constants are those powers of x modulo P, bit-reflected; the unit
 * test derives each one from P and checks it.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <zlib.h>
#include "rdma_soft_wire.h"

/* HOST_X86_64: QEMU's config-host.h (tests/include's osdep.h outside it) */
#ifdef HOST_X86_64
#define RDMA_CRC_CLMUL 1
#include <immintrin.h>
#endif

#ifdef RDMA_CRC_CLMUL
/*
 * reflect32(x^n mod P) << 1, for the n each step needs (see
 * rdma_soft_crc_fold_const()).  The shift by one keeps the product of two
 * reflected polynomials aligned: a reflected product comes out one bit
 * short.
 */
#define CRC_K_544       0x154442bd4ull  /* fold by 512: block's low half */
#define CRC_K_480       0x1c6e41596ull  /* ... its high half */
#define CRC_K_160       0x1751997d0ull  /* fold by 128: low half */
#define CRC_K_96        0x0ccaa009eull  /* ... high half; 128 to 64 bits */
#define CRC_K_64        0x163cd6124ull  /* 64 to 32 bits */
/* Barrett: P itself and floor(x^64 / P), both reflected (33 bits). */
#define CRC_P_REFL      0x1db710641ull
#define CRC_U_REFL      0x1f7011641ull

/* @x folded over 128 bits (@k: low half's constant low, high half's high). */
__attribute__((target("pclmul")))
static inline __m128i crc_fold(__m128i x, __m128i k, __m128i next)
{
    __m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
    __m128i hi = _mm_clmulepi64_si128(x, k, 0x11);

    return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

__attribute__((target("pclmul")))
static inline __m128i crc_load(const uint8_t *p)
{
    return _mm_loadu_si128((const __m128i *)p);
}

/*
 * The CRC register (not complemented) after @len bytes at @p, from @reg.
 * @len is at least 64 and a multiple of 16.
 */
__attribute__((target("pclmul")))
static uint32_t crc_clmul(uint32_t reg, const uint8_t *p, size_t len)
{
    const __m128i k512 = _mm_set_epi64x(CRC_K_480, CRC_K_544);
    const __m128i k128 = _mm_set_epi64x(CRC_K_96, CRC_K_160);
    const __m128i k64 = _mm_set_epi64x(0, CRC_K_64);
    const __m128i barrett = _mm_set_epi64x(CRC_U_REFL, CRC_P_REFL);
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    __m128i x0, x1, x2, x3, t;

    /* The register joins the first 32 bits of the message. */
    x0 = _mm_xor_si128(crc_load(p), _mm_cvtsi32_si128(reg));
    x1 = crc_load(p + 16);
    x2 = crc_load(p + 32);
    x3 = crc_load(p + 48);
    p += 64;
    len -= 64;
    for (; len >= 64; p += 64, len -= 64) {
        x0 = crc_fold(x0, k512, crc_load(p));
        x1 = crc_fold(x1, k512, crc_load(p + 16));
        x2 = crc_fold(x2, k512, crc_load(p + 32));
        x3 = crc_fold(x3, k512, crc_load(p + 48));
    }
    x0 = crc_fold(x0, k128, x1);
    x0 = crc_fold(x0, k128, x2);
    x0 = crc_fold(x0, k128, x3);
    for (; len >= 16; p += 16, len -= 16) {
        x0 = crc_fold(x0, k128, crc_load(p));
    }

    /* 128 to 64 bits; this also appends the 32 zero bits of M(x) x^32. */
    t = _mm_clmulepi64_si128(x0, k128, 0x10);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 8), t);
    /* 64 to 32 bits (and 32 more above them). */
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), k64, 0x00);
    x0 = _mm_xor_si128(_mm_srli_si128(x0, 4), t);
    /* Barrett: q = floor(x0 / P) from U, then x0 - q P. */
    t = _mm_clmulepi64_si128(_mm_and_si128(x0, low32), barrett, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
    x0 = _mm_xor_si128(x0, t);
    return _mm_cvtsi128_si32(_mm_srli_si128(x0, 4));
}

static bool crc_have_clmul(void)
{
    static int have = -1;

    /* Idempotent: a race only computes the answer twice. */
    if (have < 0) {
        have = __builtin_cpu_supports("pclmul") ? 1 : 0;
    }
    return have;
}

uint64_t rdma_soft_crc_fold_const(unsigned i)
{
    static const uint64_t k[] = {
        CRC_K_544, CRC_K_480, CRC_K_160, CRC_K_96, CRC_K_64,
        CRC_P_REFL, CRC_U_REFL,
    };

    return i < G_N_ELEMENTS(k) ? k[i] : 0;
}
#else
uint64_t rdma_soft_crc_fold_const(unsigned i)
{
    return 0;
}
#endif

bool rdma_soft_crc_folds(void)
{
#ifdef RDMA_CRC_CLMUL
    return crc_have_clmul();
#else
    return false;
#endif
}

uint32_t rdma_soft_crc32(uint32_t crc, const uint8_t *buf, size_t len)
{
#ifdef RDMA_CRC_CLMUL
    if (len >= 64 && crc_have_clmul()) {
        size_t n = len & ~(size_t)15;

        /* zlib's crc is the complement of the register. */
        crc = ~crc_clmul(~crc, buf, n);
        buf += n;
        len -= n;
    }
#endif
    /* Callers' buffers are frames: far below zlib's uInt. */
    return crc32(crc, buf, len);
}
