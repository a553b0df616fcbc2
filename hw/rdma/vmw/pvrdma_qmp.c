/*
 * VMware PVRDMA front-end: what management software sees over QMP.
 *
 * RDMA_GID_STATUS_CHANGED tells it when the guest adds or removes a GID,
 * so that (as libvirt does) it can add the address to the host network
 * device and the host RDMA device accepts the guest's traffic.
 * query-pvrdma shows each device's GIDs and how many objects it holds.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-pvrdma.h"
#include "qapi/qapi-events-pvrdma.h"
#include "qemu/sockets.h"
#include "pvrdma.h"

void pvrdma_gid_event(PvrdmaState *s, const uint8_t *gid, bool added)
{
    uint64_t prefix, iid;

    if (!s->params.netdev) {
        return;         /* soft backend: no host netdev to manage */
    }
    /* The bytes as they are in memory, as libvirt reads them. */
    memcpy(&prefix, gid, 8);
    memcpy(&iid, gid + 8, 8);
    qapi_event_send_rdma_gid_status_changed(s->params.netdev, added, prefix,
                                            iid);
}

static PvrdmaInfo *pvrdma_info(PvrdmaState *s)
{
    PvrdmaInfo *info = g_new0(PvrdmaInfo, 1);
    RdmaResources *rm = &s->rm;
    PvrdmaGidEntryList **tail = &info->gids;

    info->qom_path = object_get_canonical_path(OBJECT(s));
    info->backend = g_strdup(s->backend->ops->name);
    if (s->params.ibdev) {
        info->ibdev = g_strdup(s->params.ibdev);
        info->has_ibport = true;
        info->ibport = s->params.ibport;
    }
    info->netdev = g_strdup(s->params.netdev);
    info->driver_version = s->dsr_loaded ? s->driver_version : 0;
    info->port_active = s->activated && s->port_up;
    for (uint32_t i = 0; rm->gids && i < rm->limits.gid_tbl_len; i++) {
        PvrdmaGidEntry *g;
        char text[INET6_ADDRSTRLEN];

        if (!rm->gids[i].valid) {
            continue;
        }
        g = g_new0(PvrdmaGidEntry, 1);
        g->index = i;
        inet_ntop(AF_INET6, rm->gids[i].gid, text, sizeof(text));
        g->gid = g_strdup(text);
        if (s->backend->ops->host_gid_index) {
            int h = s->backend->ops->host_gid_index(s->backend, i);

            g->has_host_index = h >= 0;
            g->host_index = h >= 0 ? h : 0;
        }
        QAPI_LIST_APPEND(tail, g);
    }
    info->pds = rm->tables[RDMA_RES_PD].used;
    info->cqs = rm->tables[RDMA_RES_CQ].used;
    info->qps = rm->tables[RDMA_RES_QP].used;
    info->srqs = rm->tables[RDMA_RES_SRQ].used;
    info->mrs = rm->tables[RDMA_RES_MR].used;
    info->ucs = rm->tables[RDMA_RES_UC].used;
    return info;
}

static int pvrdma_collect(Object *obj, void *opaque)
{
    PvrdmaInfoList ***tail = opaque;

    if (object_dynamic_cast(obj, TYPE_PVRDMA) && DEVICE(obj)->realized) {
        QAPI_LIST_APPEND(*tail, pvrdma_info(PVRDMA(obj)));
    }
    return 0;
}

PvrdmaInfoList *qmp_query_pvrdma(Error **errp)
{
    PvrdmaInfoList *list = NULL, **tail = &list;

    object_child_foreach_recursive(object_get_root(), pvrdma_collect, &tail);
    return list;
}
