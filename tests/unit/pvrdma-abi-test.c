/*
 * pvrdma: hw/rdma/vmw/pvrdma_abi.h against Linux's uAPI header for the
 * structures and constants that the guest's user space shares with the
 * device (pvrdma-abi-list.h): every size, alignment, member offset and
 * member size, and every constant's value.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/rdma/vmw/pvrdma_abi.h"
#include "pvrdma-abi.h"

#define ABI_STRUCT(o, k) { #o, sizeof(o), _Alignof(o) }
#define ABI_FIELD(o, k, f) { #o "." #f, offsetof(o, f), sizeof_field(o, f) }
#define ABI_CONST(n) { #n, (uint32_t)(n), 0 }

static const PvrdmaAbiFact pvrdma_abi_ours[] = {
#include "pvrdma-abi-list.h"
};

static void test_uapi(void)
{
    unsigned bad = 0;

    g_assert_cmpuint(pvrdma_abi_linux_len, ==, ARRAY_SIZE(pvrdma_abi_ours));
    for (size_t i = 0; i < ARRAY_SIZE(pvrdma_abi_ours); i++) {
        const PvrdmaAbiFact *o = &pvrdma_abi_ours[i];
        const PvrdmaAbiFact *k = &pvrdma_abi_linux[i];

        g_assert_cmpstr(o->what, ==, k->what);
        if (o->a != k->a || o->b != k->b) {
            g_test_message("%s: ours %" PRIu64 "/%" PRIu64 ", Linux %"
                           PRIu64 "/%" PRIu64 " (size/alignment, "
                           "offset/size or value)", o->what, o->a, o->b,
                           k->a, k->b);
            bad++;
        }
    }
    g_assert_cmpuint(bad, ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/pvrdma/abi/uapi", test_uapi);
    return g_test_run();
}
