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
#include "qapi/util.h"
#include "qemu/sockets.h"
#include "qemu/timer.h"
#include "pvrdma.h"

static void pvrdma_gid_event(PvrdmaState *s, const uint8_t *gid, bool added)
{
    uint64_t prefix, iid;

    /* The bytes as they are in memory, as libvirt reads them. */
    memcpy(&prefix, gid, 8);
    memcpy(&iid, gid + 8, 8);
    qapi_event_send_rdma_gid_status_changed(s->params.netdev, added, prefix,
                                            iid);
}

/*
 * GID announcements.  Management mirrors the guest's GIDs as addresses of
 * the host netdev, so in the end it must have been told of every GID in
 * the table and of the removal of every other GID it was told of, and a
 * guest that rebinds in a loop must not flood QMP or make management add
 * addresses without bound.  QEMU's own event throttling keeps only the
 * latest event of a kind, which would lose removals; instead the device
 * remembers the GIDs it announced (gid_told) and sends the difference
 * between them and the table, removals first, from a token bucket:
 * PVRDMA_GID_EVENT_BURST events at once, then one per
 * PVRDMA_GID_EVENT_NS of virtual time.  A GID bound and unbound again
 * before its turn is never announced, which is what management needs.
 * Because an addition is only sent when no removal is due, gid_told is
 * always a subset of some table and never holds more than
 * PVRDMA_GID_TBL_LEN entries.
 */
#define PVRDMA_GID_EVENT_BURST  (2 * PVRDMA_GID_TBL_LEN)
#define PVRDMA_GID_EVENT_NS     (100 * SCALE_MS)

static bool pvrdma_gid_in_table(PvrdmaState *s, const uint8_t *gid)
{
    RdmaResources *rm = &s->rm;

    for (uint32_t i = 0; rm->gids && i < rm->limits.gid_tbl_len; i++) {
        if (rm->gids[i].valid && !memcmp(rm->gids[i].gid, gid, 16)) {
            return true;
        }
    }
    return false;
}

static bool pvrdma_gid_told(PvrdmaState *s, const uint8_t *gid)
{
    for (uint32_t i = 0; i < s->gid_told_count; i++) {
        if (!memcmp(s->gid_told[i], gid, 16)) {
            return true;
        }
    }
    return false;
}

/* Send one event that brings management closer to the table, if any. */
static bool pvrdma_gid_announce_one(PvrdmaState *s)
{
    RdmaResources *rm = &s->rm;

    for (uint32_t i = 0; i < s->gid_told_count; i++) {
        if (!pvrdma_gid_in_table(s, s->gid_told[i])) {
            pvrdma_gid_event(s, s->gid_told[i], false);
            s->gid_told_count--;
            memmove(s->gid_told[i], s->gid_told[i + 1],
                    (s->gid_told_count - i) * sizeof(s->gid_told[0]));
            return true;
        }
    }
    for (uint32_t i = 0; rm->gids && i < rm->limits.gid_tbl_len; i++) {
        const uint8_t *gid = rm->gids[i].gid;

        if (rm->gids[i].valid && !pvrdma_gid_told(s, gid) &&
            s->gid_told_count < PVRDMA_GID_TBL_LEN) {
            pvrdma_gid_event(s, gid, true);
            memcpy(s->gid_told[s->gid_told_count++], gid, 16);
            return true;
        }
    }
    return false;
}

void pvrdma_gid_sync(PvrdmaState *s)
{
    if (!s->params.netdev) {
        return;         /* soft backend: no host netdev to manage */
    }
    while (s->gid_tokens > 0 && pvrdma_gid_announce_one(s)) {
        s->gid_tokens--;
    }
    if (s->gid_tokens < PVRDMA_GID_EVENT_BURST &&
        !timer_pending(s->gid_timer)) {
        timer_mod(s->gid_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  PVRDMA_GID_EVENT_NS);
    }
}

static void pvrdma_gid_tick(void *opaque)
{
    PvrdmaState *s = opaque;

    s->gid_tokens++;
    pvrdma_gid_sync(s);
}

void pvrdma_gid_init(PvrdmaState *s)
{
    s->gid_told_count = 0;
    s->gid_tokens = PVRDMA_GID_EVENT_BURST;
    s->gid_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, pvrdma_gid_tick, s);
}

/* The device goes away: so does every address management holds for it. */
void pvrdma_gid_fini(PvrdmaState *s)
{
    while (s->gid_told_count > 0) {
        pvrdma_gid_event(s, s->gid_told[--s->gid_told_count], false);
    }
    timer_free(s->gid_timer);
    s->gid_timer = NULL;
}

/* The backend's RoCE port, if it has one now. */
static void pvrdma_roce_info(PvrdmaState *s, PvrdmaInfo *info)
{
    RdmaPortStats st;
    PvrdmaRoceInfo *r;
    char *netdev;
    uint32_t mtu;

    if (!s->backend->ops->port_stats ||
        !s->backend->ops->port_stats(s->backend, &netdev, &mtu, &st)) {
        return;
    }
    r = info->roce = g_new0(PvrdmaRoceInfo, 1);
    r->netdev = netdev;
    r->mtu = mtu;
    r->tx_frames = st.tx_frames;
    r->tx_dropped = st.tx_dropped;
    r->rx_frames = st.rx_frames;
    r->rx_dropped = st.rx_dropped;
    r->timeouts = st.timeouts;
    r->retransmits = st.retransmits;
    r->seq_naks = st.seq_naks;
    r->duplicates = st.duplicates;
}

/* What rdmacm-mux said of guest GID @index, if the backend claims GIDs. */
static void pvrdma_gid_mux(PvrdmaState *s, uint32_t index, PvrdmaGidEntry *g)
{
    static const PvrdmaMuxState qapi_state[] = {
        [RDMA_GID_AGENT_HELD] = PVRDMA_MUX_STATE_HELD,
        [RDMA_GID_AGENT_PENDING] = PVRDMA_MUX_STATE_PENDING,
        [RDMA_GID_AGENT_REFUSED] = PVRDMA_MUX_STATE_REFUSED,
        [RDMA_GID_AGENT_UNREGISTERED] = PVRDMA_MUX_STATE_UNREGISTERED,
    };
    const char *why = NULL;
    RdmaGidAgentState st;

    if (!s->backend->ops->gid_agent_state) {
        return;
    }
    st = s->backend->ops->gid_agent_state(s->backend, index, &why);
    g->has_mux = true;
    g->mux = qapi_state[st];
    if (st == RDMA_GID_AGENT_REFUSED) {
        g->mux_error = g_strdup(why);
    }
}

static PvrdmaInfo *pvrdma_info(PvrdmaState *s)
{
    PvrdmaInfo *info = g_new0(PvrdmaInfo, 1);
    RdmaResources *rm = &s->rm;
    PvrdmaGidEntryList **tail = &info->gids;

    info->qom_path = object_get_canonical_path(OBJECT(s));
    /* A backend's name is its value of PvrdmaBackend. */
    info->backend = qapi_enum_parse(&PvrdmaBackend_lookup,
                                    s->backend->ops->name, -1, &error_abort);
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
        pvrdma_gid_mux(s, i, g);
        QAPI_LIST_APPEND(tail, g);
    }
    info->pds = rm->tables[RDMA_RES_PD].used;
    info->cqs = rm->tables[RDMA_RES_CQ].used;
    info->qps = rm->tables[RDMA_RES_QP].used;
    info->srqs = rm->tables[RDMA_RES_SRQ].used;
    info->mrs = rm->tables[RDMA_RES_MR].used;
    info->user_contexts = rm->tables[RDMA_RES_UC].used;
    info->mr_pages = rm->mr_pages_total;
    info->mr_pages_max = rm->limits.max_mr_pages_total;
    info->work_bytes_max = rm->entry_bytes_max;
    if (s->backend->ops->bounds) {
        RdmaBounds b;

        s->backend->ops->bounds(s->backend, &b);
        info->has_host_queue_entries = info->has_host_queue_entries_max = true;
        info->has_map_runs = info->has_map_runs_max = true;
        info->has_map_runs_per_mr = true;
        info->host_queue_entries = b.host_queue_entries;
        info->host_queue_entries_max = b.host_queue_entries_max;
        info->map_runs = b.map_runs;
        info->map_runs_max = b.map_runs_max;
        info->map_runs_per_mr = b.map_runs_per_mr;
    }
    pvrdma_roce_info(s, info);
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
