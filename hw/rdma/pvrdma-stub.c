/*
 * query-pvrdma in a build without the pvrdma device.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-pvrdma.h"

PvrdmaInfoList *qmp_query_pvrdma(Error **errp)
{
    return NULL;        /* no such device in this build: an empty list */
}
