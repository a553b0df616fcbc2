/*
 * A layout fact of the pvrdma user-space ABI (pvrdma-abi-list.h), as our
 * header and Linux's have it: a structure's size and alignment, a
 * member's offset and size, or a constant's value (and 0).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TESTS_UNIT_PVRDMA_ABI_H
#define TESTS_UNIT_PVRDMA_ABI_H

typedef struct PvrdmaAbiFact {
    const char *what;
    uint64_t a, b;
} PvrdmaAbiFact;

/* Linux's, in the order of pvrdma-abi-list.h (pvrdma-abi-uapi.c) */
extern const PvrdmaAbiFact pvrdma_abi_linux[];
extern const size_t pvrdma_abi_linux_len;

#endif
