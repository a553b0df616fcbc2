/*
 * The ibverbs backend: the guest's GSI QP (QP1), through rdmacm-mux.
 *
 * The host kernel owns QP1 of the host port, and only one process can
 * receive its connection-manager MADs.  contrib/rdmacm-mux does, and shares
 * them among QEMU instances over a UNIX socket (the device's mad-chardev):
 * the device claims its guest's GIDs, sends the guest's MADs and receives
 * those addressed to its GIDs (protocol: contrib/rdmacm-mux/rdmacm-mux.h).
 *
 * Nothing here waits for the daemon: writes that do not fit in the socket
 * are queued and sent from a watch, and a MAD that finds no receive WQE
 * posted is dropped, as on a real port (MADs are unreliable and the CM
 * retries).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/log.h"
#include "system/runstate.h"
#include "qemu/units.h"
#include "qemu/sockets.h"
#include "rdma_ibv.h"
#include "hw/rdma/trace.h"
#include "../../../contrib/rdmacm-mux/rdmacm-mux.h"

#define RDMA_IBV_MAD_OUT_MAX    (1 * MiB)
#define RDMA_IBV_QP1_QKEY       0x80010000u

/* Output */

static gboolean rdma_ibv_mad_writable(void *do_not_use, GIOCondition cond,
                                      void *opaque);

static void rdma_ibv_mad_flush(RdmaIbv *ibv)
{
    while (ibv->mad_out->len) {
        int n = qemu_chr_fe_write(ibv->mad_chr, ibv->mad_out->data,
                                  ibv->mad_out->len);

        if (n <= 0) {
            break;
        }
        g_byte_array_remove_range(ibv->mad_out, 0, n);
    }
    if (ibv->mad_out->len && !ibv->mad_watch) {
        ibv->mad_watch = qemu_chr_fe_add_watch(ibv->mad_chr,
                                               G_IO_OUT | G_IO_HUP,
                                               rdma_ibv_mad_writable, ibv);
    }
}

static gboolean rdma_ibv_mad_writable(void *do_not_use, GIOCondition cond,
                                      void *opaque)
{
    RdmaIbv *ibv = opaque;

    ibv->mad_watch = 0;
    rdma_ibv_mad_flush(ibv);
    return G_SOURCE_REMOVE;
}

/* Queue a request; its seq, or 0 when it cannot go out. */
static uint32_t rdma_ibv_mad_msg(RdmaIbv *ibv, uint16_t type,
                                 const void *body, uint32_t len)
{
    RdmaCmMuxHdr h = {
        .magic = RDMACM_MUX_MAGIC,
        .version = RDMACM_MUX_VERSION,
        .type = type,
        .len = len,
    };

    if (!qemu_chr_fe_backend_open(ibv->mad_chr) ||
        ibv->mad_out->len + sizeof(h) + len > RDMA_IBV_MAD_OUT_MAX) {
        return 0;
    }
    /* seq 0 is the daemon's: a notice that answers no request. */
    h.seq = ++ibv->mad_seq ? ibv->mad_seq : ++ibv->mad_seq;
    g_byte_array_append(ibv->mad_out, (const guint8 *)&h, sizeof(h));
    g_byte_array_append(ibv->mad_out, body, len);
    rdma_ibv_mad_flush(ibv);
    return h.seq;
}

void rdma_ibv_mad_gid(RdmaIbv *ibv, uint32_t index, const uint8_t *gid,
                      bool add)
{
    RdmaCmMuxGid g;
    uint32_t seq;

    memcpy(g.gid, gid, 16);
    seq = rdma_ibv_mad_msg(ibv, add ? RDMACM_MUX_REGISTER
                                    : RDMACM_MUX_UNREGISTER, &g, sizeof(g));
    if (!seq) {
        warn_report("pvrdma: cannot tell rdmacm-mux about a GID: not "
                    "connected");
    }
    if (index < ARRAY_SIZE(ibv->mux_seq)) {
        ibv->mux_seq[index] = add ? seq : 0;
        ibv->mux_state[index] = !add ? RDMA_IBV_MUX_OFFLINE :
                                seq ? RDMA_IBV_MUX_PENDING :
                                RDMA_IBV_MUX_OFFLINE;
    }
}

/* Why rdmacm-mux refused a GID (its REGISTER's negative errno @err). */
static const char *rdma_ibv_mad_refusal(int err)
{
    switch (err) {
    case -EADDRINUSE:
        return "another client holds it";
    case -EACCES:
        return "not allowed for this QEMU's user (--allow-gids)";
    case -ENOSPC:
        return "this client holds as many GIDs as it may";
    default:
        return strerror(-err);
    }
}

RdmaGidAgentState rdma_ibv_mad_gid_state(RdmaBackend *be, uint32_t index,
                                         const char **why)
{
    RdmaIbv *ibv = rdma_ibv(be);
    int st = index < ARRAY_SIZE(ibv->mux_state) ? ibv->mux_state[index]
                                                 : RDMA_IBV_MUX_OFFLINE;

    switch (st) {
    case RDMA_IBV_MUX_HELD:
        return RDMA_GID_AGENT_HELD;
    case RDMA_IBV_MUX_PENDING:
        return RDMA_GID_AGENT_PENDING;
    case RDMA_IBV_MUX_OFFLINE:
        return RDMA_GID_AGENT_UNREGISTERED;
    default:
        *why = rdma_ibv_mad_refusal(st);
        return RDMA_GID_AGENT_REFUSED;
    }
}

/*
 * rdmacm-mux answered request @seq with @status.  A refused GID cannot
 * carry RDMA-CM for the guest (its MADs go to whoever holds it, its sends
 * are refused), which management must hear of: query-pvrdma shows it, and
 * the log says why.  Each refusal answers one CREATE_BIND of the guest, so
 * it is logged as a guest error (rate: the guest's).
 */
static void rdma_ibv_mad_reply(RdmaIbv *ibv, uint32_t seq, int status)
{
    RdmaResources *rm = ibv->be.rm;
    char text[INET6_ADDRSTRLEN];

    if (seq == 0) {
        error_report("pvrdma: %s: rdmacm-mux closes the connection: %s",
                     ibv->ibdev, status == -EUSERS ?
                     "too many clients (see its --max-clients-per-uid)" :
                     status == -ETIMEDOUT ?
                     "evicted as idle (no GID held; see --idle-timeout)" :
                     strerror(-status));
        return;
    }
    for (uint32_t i = 0; rm->gids && i < rm->limits.gid_tbl_len; i++) {
        if (ibv->mux_seq[i] != seq) {
            continue;
        }
        ibv->mux_seq[i] = 0;
        ibv->mux_state[i] = status;
        if (status < 0) {
            inet_ntop(AF_INET6, rm->gids[i].gid, text, sizeof(text));
            qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: %s: rdmacm-mux refused "
                          "GID %u (%s): %s\n", ibv->ibdev, i, text,
                          rdma_ibv_mad_refusal(status));
        }
        return;
    }
    if (status < 0) {
        trace_rdma_ibv_mad_drop("rdmacm-mux refused a request");
    }
}

/* Guest memory behind an SGE */

/*
 * Copy between @buf and the guest memory that @sge names through one of
 * the guest's MRs (DMA MR: guest-physical; user MR: its page list).  The
 * host device checks SGEs of real QPs; MAD SGEs it never sees, so here the
 * MR, its PD and its bounds are checked as the device would.
 */
static bool rdma_ibv_sge_rw(RdmaIbv *ibv, RdmaQp *qp, const RdmaSge *sge,
                            void *buf, uint32_t len, bool write)
{
    RdmaIbvPd *ipd = rdma_ibv_pd(ibv, qp->pd_handle);
    RdmaMr *mr;
    uint64_t addr = sge->addr, done = 0;

    if (len > sge->length) {
        return false;
    }
    /* The PD's DMA MRs share host MRs: guest-physical addresses. */
    for (uint32_t set = 0; set < RDMA_IBV_DMA_SETS; set++) {
        const struct ibv_mr *dma = ipd->dma_mr[set];

        if (!dma || sge->lkey != dma->lkey) {
            continue;
        }
        /*
         * The host MR's range and rights, and guest RAM only: a write
         * into a BAR would be a register access.
         */
        if ((write && !(set & RDMA_ACCESS_LOCAL_WRITE)) ||
            addr < RDMA_IBV_DMA_START ||
            addr + len > RDMA_IBV_DMA_START + dma->length ||
            addr + len < addr ||
            !rdma_ram_ok(ibv->pdev, addr, len)) {
            return false;
        }
        return write ? rdma_dma_write(ibv->pdev, addr, buf, len)
                     : rdma_dma_read(ibv->pdev, addr, buf, len);
    }
    mr = g_hash_table_lookup(ibv->mrs, GUINT_TO_POINTER(sge->lkey));
    if (!mr || mr->pd_handle != qp->pd_handle ||
        (write && !(mr->access & RDMA_ACCESS_LOCAL_WRITE))) {
        return false;
    }
    if (addr < mr->iova || addr + len > mr->iova + mr->length ||
        addr + len < addr) {
        return false;
    }
    while (done < len) {
        uint64_t off = addr + done - QEMU_ALIGN_DOWN(mr->iova, RDMA_PAGE_SIZE);
        uint64_t page = mr->pages.pages[off / RDMA_PAGE_SIZE];
        uint32_t n = MIN(len - done, RDMA_PAGE_SIZE - off % RDMA_PAGE_SIZE);
        bool ok = write ?
            rdma_dma_write(ibv->pdev, page + off % RDMA_PAGE_SIZE,
                           (uint8_t *)buf + done, n) :
            rdma_dma_read(ibv->pdev, page + off % RDMA_PAGE_SIZE,
                          (uint8_t *)buf + done, n);

        if (!ok) {
            return false;
        }
        done += n;
    }
    return true;
}

/* Gather (@write false) or scatter @len bytes of @buf over @sge. */
static bool rdma_ibv_sgl_rw(RdmaIbv *ibv, RdmaQp *qp, const RdmaSge *sge,
                            uint32_t num_sge, uint8_t *buf, uint32_t len,
                            bool write)
{
    uint32_t done = 0;

    for (uint32_t i = 0; i < num_sge && done < len; i++) {
        uint32_t n = MIN(sge[i].length, len - done);

        if (!rdma_ibv_sge_rw(ibv, qp, &sge[i], buf + done, n, write)) {
            return false;
        }
        done += n;
    }
    return done == len;
}

/* Send */

void rdma_ibv_mad_send(RdmaIbv *ibv, RdmaQp *qp, const RdmaSendWr *wr)
{
    RdmaResources *rm = ibv->be.rm;
    RdmaCmMuxMad m = { .qpn = wr->remote_qpn, .hop_limit = 64 };
    RdmaWc wc = { .wr_id = wr->wr_id, .opcode = RDMA_WC_SEND,
                  .qp_handle = qp->handle };
    uint64_t len = 0;

    for (uint32_t i = 0; i < wr->num_sge; i++) {
        len += wr->sge[i].length;
    }
    m.qkey = wr->remote_qkey == RDMA_IBV_QP1_QKEY || !wr->remote_qkey ?
             RDMA_IBV_QP1_QKEY : wr->remote_qkey;
    if (wr->opcode != RDMA_WR_SEND || len > sizeof(m.mad) ||
        wr->sgid_index >= rm->limits.gid_tbl_len ||
        !rm->gids[wr->sgid_index].valid) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: GSI QP: bad MAD send "
                      "(opcode %u, %" PRIu64 " bytes, GID index %u)\n",
                      wr->opcode, len, wr->sgid_index);
        wc.status = RDMA_WC_LOC_QP_OP_ERR;
    } else if (!rdma_ibv_sgl_rw(ibv, qp, wr->sge, wr->num_sge, m.mad, len,
                                false)) {
        wc.status = RDMA_WC_LOC_PROT_ERR;
    } else {
        memcpy(m.sgid, rm->gids[wr->sgid_index].gid, 16);
        memcpy(m.dgid, wr->dgid, 16);
        trace_rdma_ibv_mad(true, m.mad[1], lduw_be_p(m.mad + 16));
        if (!rdma_ibv_mad_msg(ibv, RDMACM_MUX_SEND, &m, sizeof(m))) {
            /* Lost, as on a wire: the sender's MAD layer retries. */
            trace_rdma_ibv_mad_drop("rdmacm-mux not connected or too slow");
        }
    }
    if (wc.status != RDMA_WC_SUCCESS || qp->sq_sig_all ||
        (wr->flags & RDMA_SEND_SIGNALED)) {
        rm->fe->complete(rm->fe_opaque, qp, qp->send_cq_handle, &wc, false);
    }
}

/* Receive */

static void rdma_ibv_mad_deliver(RdmaIbv *ibv, const RdmaCmMuxMad *m)
{
    RdmaResources *rm = ibv->be.rm;
    RdmaQp *qp = rdma_rm_get(rm, RDMA_RES_QP, RDMA_GSI_QPN);
    uint8_t buf[RDMA_GRH_SIZE + RDMACM_MUX_MAD_SIZE];
    RdmaRecvWr rwr;
    RdmaWc wc = {
        .opcode = RDMA_WC_RECV,
        .byte_len = sizeof(buf),
        .src_qp = m->qpn,
        .wc_flags = RDMA_WC_GRH | RDMA_WC_WITH_NETWORK_HDR_TYPE,
    };

    if (!qp || qp->type != RDMA_QPT_GSI ||
        (qp->attr.qp_state != RDMA_QPS_RTR &&
         qp->attr.qp_state != RDMA_QPS_RTS) ||
        !rdma_rm_gid_is_local(rm, m->dgid)) {
        trace_rdma_ibv_mad_drop("no GSI QP ready for that GID");
        return;
    }
    if (rm->fe->next_recv(rm->fe_opaque, qp, &rwr) < 0) {
        trace_rdma_ibv_mad_drop("no receive posted on the GSI QP");
        return;
    }
    trace_rdma_ibv_mad(false, m->mad[1], lduw_be_p(m->mad + 16));
    wc.wr_id = rwr.wr_id;
    wc.qp_handle = qp->handle;
    wc.network_hdr_type = rdma_grh_build(buf, m->sgid, m->dgid,
                                         RDMACM_MUX_MAD_SIZE,
                                         m->traffic_class, m->hop_limit);
    memcpy(buf + RDMA_GRH_SIZE, m->mad, RDMACM_MUX_MAD_SIZE);
    if (!rdma_ibv_sgl_rw(ibv, qp, rwr.sge, rwr.num_sge, buf, sizeof(buf),
                         true)) {
        wc.status = RDMA_WC_LOC_PROT_ERR;
    }
    rm->fe->complete(rm->fe_opaque, qp, qp->recv_cq_handle, &wc, false);
}

/* One message from the daemon; false when it breaks the protocol. */
static bool rdma_ibv_mad_handle(RdmaIbv *ibv, const RdmaCmMuxHdr *h,
                                const uint8_t *body)
{
    switch (h->type) {
    case RDMACM_MUX_RECV:
        if (h->len != sizeof(RdmaCmMuxMad)) {
            return false;
        }
        rdma_ibv_mad_deliver(ibv, (const RdmaCmMuxMad *)body);
        return true;
    case RDMACM_MUX_REPLY:
        rdma_ibv_mad_reply(ibv, h->seq, h->status);
        return h->len == 0;
    default:
        return false;
    }
}

static int rdma_ibv_mad_can_read(void *opaque)
{
    return sizeof(RdmaCmMuxHdr) + sizeof(RdmaCmMuxMad);
}

/* Messages from rdmacm-mux (inside the device's entry point). */
static void rdma_ibv_mad_input(RdmaIbv *ibv, const uint8_t *buf, int size)
{
    GByteArray *in = ibv->mad_in;

    g_byte_array_append(in, buf, size);
    while (in->len >= sizeof(RdmaCmMuxHdr)) {
        RdmaCmMuxHdr h;

        memcpy(&h, in->data, sizeof(h));
        if (h.magic != RDMACM_MUX_MAGIC || h.version != RDMACM_MUX_VERSION ||
            h.len > sizeof(RdmaCmMuxMad)) {
            error_report("pvrdma: rdmacm-mux sent a malformed message "
                         "(magic 0x%x, version %u, length %u); dropping "
                         "its input", h.magic, h.version, h.len);
            g_byte_array_set_size(in, 0);
            return;
        }
        if (in->len < sizeof(h) + h.len) {
            return;
        }
        if (!rdma_ibv_mad_handle(ibv, &h, in->data + sizeof(h))) {
            warn_report("pvrdma: unexpected rdmacm-mux message type %u "
                        "(length %u) ignored", h.type, h.len);
        }
        g_byte_array_remove_range(in, 0, sizeof(h) + h.len);
    }
}

static void rdma_ibv_mad_read(void *opaque, const uint8_t *buf, int size)
{
    RdmaIbv *ibv = opaque;

    if (!rdma_rm_enter(ibv->be.rm)) {
        return;
    }
    rdma_ibv_mad_input(ibv, buf, size);
    rdma_rm_leave(ibv->be.rm);
}

static void rdma_ibv_mad_event(void *opaque, QEMUChrEvent event)
{
    RdmaIbv *ibv = opaque;
    RdmaResources *rm = ibv->be.rm;

    switch (event) {
    case CHR_EVENT_OPENED:
        /* A new daemon knows nothing: claim the guest's GIDs again. */
        g_byte_array_set_size(ibv->mad_in, 0);
        for (uint32_t i = 0; rm->gids && i < rm->limits.gid_tbl_len; i++) {
            if (rm->gids[i].valid) {
                rdma_ibv_mad_gid(ibv, i, rm->gids[i].gid, true);
            }
        }
        break;
    case CHR_EVENT_CLOSED:
        if (runstate_check(RUN_STATE_SHUTDOWN)) {
            break;      /* QEMU itself is closing the socket */
        }
        warn_report("pvrdma: lost the connection to rdmacm-mux; RDMA-CM "
                    "connections cannot be set up until it is back");
        g_byte_array_set_size(ibv->mad_in, 0);
        g_byte_array_set_size(ibv->mad_out, 0);
        for (uint32_t i = 0; i < ARRAY_SIZE(ibv->mux_state); i++) {
            ibv->mux_seq[i] = 0;
            ibv->mux_state[i] = RDMA_IBV_MUX_OFFLINE;
        }
        break;
    default:
        break;
    }
}

bool rdma_ibv_mad_init(RdmaIbv *ibv, CharFrontend *chr, Error **errp)
{
    if (!chr || !qemu_chr_fe_backend_connected(chr)) {
        error_setg(errp, "ibdev=%s needs mad-chardev=<id>: a socket chardev "
                   "connected to rdmacm-mux, which carries the guest's "
                   "RDMA-CM MADs", ibv->ibdev);
        error_append_hint(errp, "Start `rdmacm-mux -d %s -p %u` and add "
                          "-chardev socket,path=/var/run/rdmacm-mux-%s-%u,"
                          "id=mads ... mad-chardev=mads\n", ibv->ibdev,
                          ibv->port, ibv->ibdev, ibv->port);
        return false;
    }
    if (!qemu_chr_fe_backend_open(chr)) {
        error_setg(errp, "mad-chardev: not connected to rdmacm-mux (is "
                   "`rdmacm-mux -d %s -p %u` running?)", ibv->ibdev,
                   ibv->port);
        return false;
    }
    ibv->mad_chr = chr;
    ibv->mad_in = g_byte_array_new();
    ibv->mad_out = g_byte_array_new();
    qemu_chr_fe_set_handlers(chr, rdma_ibv_mad_can_read, rdma_ibv_mad_read,
                             rdma_ibv_mad_event, NULL, ibv, NULL, true);
    return true;
}

void rdma_ibv_mad_fini(RdmaIbv *ibv)
{
    if (!ibv->mad_chr) {
        return;
    }
    if (ibv->mad_watch) {
        g_source_remove(ibv->mad_watch);
        ibv->mad_watch = 0;
    }
    qemu_chr_fe_set_handlers(ibv->mad_chr, NULL, NULL, NULL, NULL, NULL, NULL,
                             true);
    g_byte_array_free(ibv->mad_in, true);
    g_byte_array_free(ibv->mad_out, true);
    ibv->mad_chr = NULL;
}
