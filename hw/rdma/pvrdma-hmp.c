/*
 * HMP "info pvrdma": the human view of query-pvrdma.
 *
 * Built with and without the device (without it, query-pvrdma answers an
 * empty list and so does this).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-pvrdma.h"
#include "monitor/hmp.h"
#include "monitor/monitor.h"

static void hmp_pvrdma_gids(Monitor *mon, PvrdmaGidEntryList *gids)
{
    if (!gids) {
        monitor_printf(mon, "  GIDs: none\n");
        return;
    }
    monitor_printf(mon, "  GIDs:\n");
    for (; gids; gids = gids->next) {
        PvrdmaGidEntry *g = gids->value;

        monitor_printf(mon, "    %3u  %s", g->index, g->gid);
        if (g->has_host_index) {
            monitor_printf(mon, "  (host GID %u)", g->host_index);
        }
        if (g->has_mux) {
            monitor_printf(mon, "  rdmacm-mux: %s",
                           PvrdmaMuxState_str(g->mux));
        }
        if (g->mux_error) {
            monitor_printf(mon, " (%s)", g->mux_error);
        }
        monitor_printf(mon, "\n");
    }
}

static void hmp_pvrdma_one(Monitor *mon, PvrdmaInfo *info)
{
    monitor_printf(mon, "%s: backend %s", info->qom_path,
                   PvrdmaBackend_str(info->backend));
    if (info->ibdev) {
        monitor_printf(mon, " (%s port %u)", info->ibdev, info->ibport);
    }
    if (info->netdev) {
        monitor_printf(mon, ", netdev %s", info->netdev);
    }
    monitor_printf(mon, "\n  port %s, ", info->port_active ? "active" : "down");
    if (info->driver_version) {
        monitor_printf(mon, "guest driver version %u\n", info->driver_version);
    } else {
        monitor_printf(mon, "no guest driver\n");
    }
    hmp_pvrdma_gids(mon, info->gids);
    monitor_printf(mon, "  in use: %u user contexts, %u PD, %u CQ, %u QP, "
                   "%u SRQ, %u MR\n", info->user_contexts, info->pds,
                   info->cqs, info->qps, info->srqs, info->mrs);
    monitor_printf(mon, "  MR pages: %" PRIu64 " of %" PRIu64 "\n",
                   info->mr_pages, info->mr_pages_max);
    if (info->roce) {
        PvrdmaRoceInfo *r = info->roce;

        monitor_printf(mon, "  RoCE v2 port on netdev %s, MTU %u: %" PRIu64
                       " frames out (%" PRIu64 " dropped), %" PRIu64
                       " in (%" PRIu64 " dropped)\n"
                       "    %" PRIu64 " timeouts, %" PRIu64 " retransmits, %"
                       PRIu64 " sequence NAKs, %" PRIu64 " duplicates\n",
                       r->netdev, r->mtu, r->tx_frames, r->tx_dropped,
                       r->rx_frames, r->rx_dropped, r->timeouts,
                       r->retransmits, r->seq_naks, r->duplicates);
    }
    if (info->has_host_queue_entries) {
        monitor_printf(mon, "  host queue entries: %u of %u\n",
                       info->host_queue_entries, info->host_queue_entries_max);
    }
    if (info->has_map_runs) {
        monitor_printf(mon, "  MR mappings: %u of %u (at most %u per MR)\n",
                       info->map_runs, info->map_runs_max,
                       info->map_runs_per_mr);
    }
    monitor_printf(mon, "  most bytes of work in one entry point: %" PRIu64
                   "\n", info->work_bytes_max);
}

void hmp_info_pvrdma(Monitor *mon, const QDict *qdict)
{
    Error *err = NULL;
    PvrdmaInfoList *list = qmp_query_pvrdma(&err), *e;

    if (hmp_handle_error(mon, err)) {
        return;
    }
    if (!list) {
        monitor_printf(mon, "No pvrdma devices\n");
        return;
    }
    for (e = list; e; e = e->next) {
        hmp_pvrdma_one(mon, e->value);
    }
    qapi_free_PvrdmaInfoList(list);
}
