/*
 * QTest for the pvrdma data path on the soft backend.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "pvrdma-qtest.h"

static void test_placeholder(void)
{
    Pv *pv = pv_probe();

    pv_stop(pv);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/pvrdma/datapath/probe", test_placeholder);
    return g_test_run();
}
