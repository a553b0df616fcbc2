/*
 * The facts of pvrdma-abi-list.h from Linux's uAPI header.  A translation
 * unit of its own: both headers define the same constant names.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include <rdma/vmw_pvrdma-abi.h>
#include "pvrdma-abi.h"

#define ABI_STRUCT(o, k) { #o, sizeof(struct k), _Alignof(struct k) }
#define ABI_FIELD(o, k, f) \
    { #o "." #f, offsetof(struct k, f), sizeof_field(struct k, f) }
#define ABI_CONST(n) { #n, (uint32_t)(n), 0 }

const PvrdmaAbiFact pvrdma_abi_linux[] = {
#include "pvrdma-abi-list.h"
};
const size_t pvrdma_abi_linux_len = ARRAY_SIZE(pvrdma_abi_linux);
