/*
 * The soft RDMA engine in the migration stream.
 *
 * The engine's objects are the core's (vmstate_rdma_rm); what it adds is
 * the transport state of each QP: the requester's next PSN, its queue of
 * outstanding WRs (each with its PSNs and the next one to send), an RNR
 * wait with its attempts and the time left on its timer; the responder's
 * expected PSN and MSN, the message it is in the middle of (with the
 * receive WQE a SEND took) and a READ it is answering.  Packets are not
 * state: between two entry points the loopback link is empty.  Each
 * record is checked against the restored QPs as strictly as a WR from the
 * guest, and so that no offset the engine derives from it can leave the
 * message it names; the WRs execute again with every key and right
 * checked anew.  The RNR timer runs on the virtual clock, which stands
 * still while the VM is stopped, so the time left is what the destination
 * waits.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "migration/qemu-file-types.h"
#include "rdma_soft.h"

/* The stream's opaque is the RdmaBackend; the fields are RdmaSoft's. */
QEMU_BUILD_BUG_ON(offsetof(RdmaSoft, be) != 0);

static const VMStateDescription vmstate_rdma_sge = {
    .name = "rdma-sge",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(addr, RdmaSge),
        VMSTATE_UINT32(length, RdmaSge),
        VMSTATE_UINT32(lkey, RdmaSge),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_send_wr = {
    .name = "rdma-send-wr",
    .version_id = 2,                /* 2: the UD address vector's L2 part */
    .minimum_version_id = 2,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(wr_id, RdmaSendWr),
        VMSTATE_RDMA_ENUM(opcode, RdmaSendWr),
        VMSTATE_UINT32(flags, RdmaSendWr),
        VMSTATE_UINT32(imm_data, RdmaSendWr),
        VMSTATE_UINT32(invalidate_rkey, RdmaSendWr),
        VMSTATE_UINT64(remote_addr, RdmaSendWr),
        VMSTATE_UINT32(rkey, RdmaSendWr),
        VMSTATE_UINT64(compare_add, RdmaSendWr),
        VMSTATE_UINT64(swap, RdmaSendWr),
        VMSTATE_UINT64(fr.iova, RdmaSendWr),
        VMSTATE_UINT64(fr.pdir, RdmaSendWr),
        VMSTATE_UINT32(fr.page_shift, RdmaSendWr),
        VMSTATE_UINT32(fr.npages, RdmaSendWr),
        VMSTATE_UINT32(fr.length, RdmaSendWr),
        VMSTATE_UINT32(fr.access, RdmaSendWr),
        VMSTATE_UINT32(fr.key, RdmaSendWr),
        VMSTATE_UINT32(remote_qpn, RdmaSendWr),
        VMSTATE_UINT32(remote_qkey, RdmaSendWr),
        VMSTATE_UINT8_ARRAY(dgid, RdmaSendWr, 16),
        VMSTATE_UINT8(sgid_index, RdmaSendWr),
        VMSTATE_UINT8_ARRAY(dmac, RdmaSendWr, 6),
        VMSTATE_UINT8(hop_limit, RdmaSendWr),
        VMSTATE_UINT8(traffic_class, RdmaSendWr),
        VMSTATE_UINT32(flow_label, RdmaSendWr),
        VMSTATE_UINT32(num_sge, RdmaSendWr),
        VMSTATE_STRUCT_ARRAY(sge, RdmaSendWr, RDMA_MAX_SGE, 1,
                             vmstate_rdma_sge, RdmaSge),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_recv_wr = {
    .name = "rdma-recv-wr",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(wr_id, RdmaRecvWr),
        VMSTATE_UINT32(num_sge, RdmaRecvWr),
        VMSTATE_STRUCT_ARRAY(sge, RdmaRecvWr, RDMA_MAX_SGE, 1,
                             vmstate_rdma_sge, RdmaSge),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_rdma_soft_atomic = {
    .name = "rdma-soft-atomic",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(psn, RdmaSoftAtomicRes),
        VMSTATE_UINT64(orig, RdmaSoftAtomicRes),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * A ring of RDMA_SOFT_RD_ATOM slots the responder fills in turn: @n used,
 * the next at @next.  Until it is full, the next slot is the first free.
 */
static bool rdma_soft_mig_ring_ok(const RdmaSoftQpMig *m, const char *what,
                                  uint32_t n, uint32_t next)
{
    if (n > RDMA_SOFT_RD_ATOM || next >= RDMA_SOFT_RD_ATOM ||
        (n < RDMA_SOFT_RD_ATOM && next != n)) {
        error_report("rdma: incoming QP %u: %u %s, next slot %u", m->qpn, n,
                     what, next);
        return false;
    }
    return true;
}

/*
 * Before the atomic results are read: their count fits the ring, checked
 * as the ring's next slot (the field after the count) is read.  Not a
 * VMSTATE_VALIDATE: a field with a test makes QEMU describe every QP's
 * record in the stream's JSON description (vmsd_can_compress()), which
 * for a thousand QPs cost more downtime than the records.  The stream is
 * the same: one byte.
 */
static int rdma_soft_mig_get_atomic_next(QEMUFile *f, void *pv, size_t size,
                                         const VMStateField *field)
{
    RdmaSoftQpMig *m = container_of(pv, RdmaSoftQpMig, resp.atomic_next);

    m->resp.atomic_next = qemu_get_byte(f);
    return rdma_soft_mig_ring_ok(m, "atomic results", m->resp.natomic,
                                 m->resp.atomic_next) ? 0 : -EINVAL;
}

static int rdma_soft_mig_put_byte(QEMUFile *f, void *pv, size_t size,
                                  const VMStateField *field,
                                  JSONWriter *vmdesc)
{
    qemu_put_byte(f, *(uint8_t *)pv);
    return 0;
}

static const VMStateInfo vmstate_info_rdma_soft_atomic_next = {
    .name = "rdma-soft-atomic-next",
    .get = rdma_soft_mig_get_atomic_next,
    .put = rdma_soft_mig_put_byte,
};

static const VMStateDescription vmstate_rdma_soft_read_res = {
    .name = "rdma-soft-read-res",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(first_psn, RdmaSoftReadRes),
        VMSTATE_UINT32(last_psn, RdmaSoftReadRes),
        VMSTATE_UINT64(va, RdmaSoftReadRes),
        VMSTATE_UINT32(rkey, RdmaSoftReadRes),
        VMSTATE_UINT32(len, RdmaSoftReadRes),
        VMSTATE_END_OF_LIST()
    },
};

/* Before the READ resources are read: their count fits the ring (as above) */
static int rdma_soft_mig_get_res_next(QEMUFile *f, void *pv, size_t size,
                                      const VMStateField *field)
{
    RdmaSoftQpMig *m = container_of(pv, RdmaSoftQpMig, resp.res_next);

    m->resp.res_next = qemu_get_byte(f);
    return rdma_soft_mig_ring_ok(m, "READ resources", m->resp.nres,
                                 m->resp.res_next) ? 0 : -EINVAL;
}

static const VMStateInfo vmstate_info_rdma_soft_res_next = {
    .name = "rdma-soft-res-next",
    .get = rdma_soft_mig_get_res_next,
    .put = rdma_soft_mig_put_byte,
};

/*
 * VMSTATE_STRUCT_VARRAY_UINT8 for an array the record points to, which a
 * load allocates for the count it read (checked before, as the ring's
 * next slot is read).  The stream is the same as for an array in the
 * record.
 */
#define RDMA_VMSTATE_STRUCT_VARRAY_ALLOC_UINT8(_field, _state, _num,      \
                                               _vmsd, _type) {            \
    .name       = (stringify(_field)),                                    \
    .version_id = 0,                                                      \
    .num_offset = vmstate_offset_value(_state, _num, uint8_t),            \
    .size       = sizeof(_type),                                          \
    .vmsd       = &(_vmsd),                                               \
    .flags      = VMS_STRUCT | VMS_VARRAY_UINT8 | VMS_POINTER | VMS_ALLOC, \
    .offset     = vmstate_offset_pointer(_state, _field, _type),          \
}

RDMA_MIG_ZERO(RdmaSoftQpMig)

static const VMStateDescription vmstate_rdma_soft_qp = {
    .name = "rdma-soft-qp",
    .version_id = 5,                /* 5: READ resources, ack_psn */
    .minimum_version_id = 5,
    .pre_load = rdma_mig_zero_RdmaSoftQpMig,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(qpn, RdmaSoftQpMig),
        VMSTATE_UINT32(psn, RdmaSoftQpMig),
        VMSTATE_UINT32(sent_psn, RdmaSoftQpMig),
        VMSTATE_BOOL(due, RdmaSoftQpMig),
        VMSTATE_BOOL(rnr_wait, RdmaSoftQpMig),
        VMSTATE_UINT32(rnr_attempts, RdmaSoftQpMig),
        VMSTATE_UINT32(rnr_dest_qpn, RdmaSoftQpMig),
        VMSTATE_INT64(rnr_left_ns, RdmaSoftQpMig),
        VMSTATE_UINT32(retry_left, RdmaSoftQpMig),
        VMSTATE_INT64(retry_left_ns, RdmaSoftQpMig),
        VMSTATE_BOOL(timed_out, RdmaSoftQpMig),
        VMSTATE_BOOL(gap_retry, RdmaSoftQpMig),
        VMSTATE_UINT32(nwqe, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.epsn, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.ack_psn, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.msn, RdmaSoftQpMig),
        VMSTATE_BOOL(resp.nak_sent, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.msg, RdmaSoftQpMig),
        VMSTATE_UINT64(resp.off, RdmaSoftQpMig),
        VMSTATE_BOOL(resp.has_rwqe, RdmaSoftQpMig),
        VMSTATE_UINT64(resp.va, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.rkey, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.len, RdmaSoftQpMig),
        VMSTATE_BOOL(resp.read, RdmaSoftQpMig),
        VMSTATE_BOOL(resp.due, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.read_qpn, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.read_psn, RdmaSoftQpMig),
        VMSTATE_UINT64(resp.read_va, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.read_rkey, RdmaSoftQpMig),
        VMSTATE_UINT32(resp.read_len, RdmaSoftQpMig),
        VMSTATE_UINT64(resp.read_off, RdmaSoftQpMig),
        VMSTATE_BOOL(resp.read_dup, RdmaSoftQpMig),
        VMSTATE_UINT8(resp.natomic, RdmaSoftQpMig),
        VMSTATE_SINGLE(resp.atomic_next, RdmaSoftQpMig, 0,
                       vmstate_info_rdma_soft_atomic_next, uint8_t),
        /* filled from slot 0: the first natomic slots are the kept ones */
        RDMA_VMSTATE_STRUCT_VARRAY_ALLOC_UINT8(resp.atomic, RdmaSoftQpMig,
                                               resp.natomic,
                                               vmstate_rdma_soft_atomic,
                                               RdmaSoftAtomicRes),
        VMSTATE_UINT8(resp.nres, RdmaSoftQpMig),
        VMSTATE_SINGLE(resp.res_next, RdmaSoftQpMig, 0,
                       vmstate_info_rdma_soft_res_next, uint8_t),
        RDMA_VMSTATE_STRUCT_VARRAY_ALLOC_UINT8(resp.res, RdmaSoftQpMig,
                                               resp.nres,
                                               vmstate_rdma_soft_read_res,
                                               RdmaSoftReadRes),
        VMSTATE_END_OF_LIST()
    },
};

RDMA_MIG_ZERO(RdmaSoftWqeMig)

static const VMStateDescription vmstate_rdma_soft_wqe = {
    .name = "rdma-soft-wqe",
    .version_id = 2,
    .minimum_version_id = 2,
    .pre_load = rdma_mig_zero_RdmaSoftWqeMig,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(qpn, RdmaSoftWqeMig),
        VMSTATE_STRUCT(wr, RdmaSoftWqeMig, 1, vmstate_rdma_send_wr,
                       RdmaSendWr),
        VMSTATE_UINT64(len, RdmaSoftWqeMig),
        VMSTATE_UINT32(first_psn, RdmaSoftWqeMig),
        VMSTATE_UINT32(last_psn, RdmaSoftWqeMig),
        VMSTATE_UINT32(next_psn, RdmaSoftWqeMig),
        VMSTATE_UINT32(ack_psn, RdmaSoftWqeMig),
        VMSTATE_END_OF_LIST()
    },
};

RDMA_MIG_ZERO(RdmaSoftRwqeMig)

static const VMStateDescription vmstate_rdma_soft_rwqe = {
    .name = "rdma-soft-rwqe",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaSoftRwqeMig,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(qpn, RdmaSoftRwqeMig),
        VMSTATE_STRUCT(wr, RdmaSoftRwqeMig, 1, vmstate_rdma_recv_wr,
                       RdmaRecvWr),
        VMSTATE_END_OF_LIST()
    },
};

static void rdma_soft_mig_free(RdmaSoft *soft)
{
    for (int32_t i = 0; soft->mig && i < soft->mig_n; i++) {
        g_free(soft->mig[i].resp.atomic);
        g_free(soft->mig[i].resp.res);
    }
    g_free(soft->mig);
    soft->mig_loading = false;
    g_free(soft->mig_wqe);
    g_free(soft->mig_rwqe);
    soft->mig = NULL;
    soft->mig_wqe = NULL;
    soft->mig_rwqe = NULL;
    soft->mig_n = soft->mig_nwqe = soft->mig_nrwqe = 0;
}

static void rdma_soft_mig_save_qp(RdmaSoft *soft, RdmaSoftQp *sqp,
                                  int64_t now)
{
    RdmaSoftReq *req = &sqp->req;
    RdmaSoftQpMig *m = &soft->mig[soft->mig_n++];
    RdmaSoftWqe *w;

    m->qpn = sqp->qp->qpn;
    m->psn = req->psn;
    m->sent_psn = req->sent_psn;
    m->due = req->due;
    m->rnr_wait = req->rnr_wait;
    m->rnr_attempts = req->rnr_attempts;
    m->rnr_dest_qpn = req->rnr_dest_qpn;
    m->rnr_left_ns = timer_pending(req->rnr_timer) ?
                     MAX(timer_expire_time_ns(req->rnr_timer) - now, 0) : -1;
    m->retry_left = req->retry_left;
    m->retry_left_ns = timer_pending(req->retry_timer) ?
                       MAX(timer_expire_time_ns(req->retry_timer) - now, 0) :
                       -1;
    m->timed_out = req->timed_out;
    if (req->probe_due) {
        /* The probe is not migrated: the timeout after it is. */
        m->retry_left_ns = MAX(req->timeout_at - now, 0);
        m->timed_out = false;
    }
    m->gap_retry = req->gap_retry;
    m->nwqe = req->nwqe;
    m->resp = sqp->resp;
    m->resp.rwqe = NULL;
    m->resp.atomic = g_memdup2(sqp->resp.atomic, sqp->resp.natomic *
                               sizeof(RdmaSoftAtomicRes));
    m->resp.res = g_memdup2(sqp->resp.res,
                            sqp->resp.nres * sizeof(RdmaSoftReadRes));
    /* Requests that wait for a READ are not saved (RdmaSoftBacklogPkt). */
    /* (a READ answer paused by pacing goes on at once after a load) */
    m->resp.due = (sqp->resp.due || timer_pending(sqp->pace_timer)) &&
                  sqp->resp.read;
    QTAILQ_FOREACH(w, &req->wqes, next) {
        soft->mig_wqe[soft->mig_nwqe++] = (RdmaSoftWqeMig) {
            .qpn = m->qpn, .wr = w->wr, .len = w->len,
            .first_psn = w->first_psn, .last_psn = w->last_psn,
            .next_psn = w->next_psn, .ack_psn = w->ack_psn,
        };
    }
    if (sqp->resp.has_rwqe) {
        soft->mig_rwqe[soft->mig_nrwqe++] = (RdmaSoftRwqeMig) {
            .qpn = m->qpn, .wr = *sqp->resp.rwqe,
        };
    }
}

static int rdma_soft_pre_save(void *opaque)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);
    RdmaTable *t = &soft->be.rm->tables[RDMA_RES_QP];
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint32_t nwqe = 0, nrwqe = 0;

    /* Between entry points nothing is on the loopback link. */
    assert(!rdma_soft_delivering(soft));
    for (uint32_t h = 0; h < t->size; h++) {
        RdmaQp *qp = t->slots[h];
        RdmaSoftQp *sqp = qp ? qp->be : NULL;

        if (sqp) {
            nwqe += sqp->req.nwqe;
            nrwqe += sqp->resp.has_rwqe;
        }
    }
    rdma_soft_mig_free(soft);
    soft->mig = g_new0(RdmaSoftQpMig, MAX(t->used, 1));
    soft->mig_wqe = g_new0(RdmaSoftWqeMig, MAX(nwqe, 1));
    soft->mig_rwqe = g_new0(RdmaSoftRwqeMig, MAX(nrwqe, 1));
    for (uint32_t h = 0; h < t->size; h++) {
        RdmaQp *qp = t->slots[h];

        if (qp && qp->be) {
            rdma_soft_mig_save_qp(soft, qp->be, now);
        }
    }
    return 0;
}

static int rdma_soft_post_save(void *opaque)
{
    rdma_soft_mig_free(container_of((RdmaBackend *)opaque, RdmaSoft, be));
    return 0;
}

static int rdma_soft_pre_load(void *opaque)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);

    rdma_soft_mig_free(soft);
    soft->mig_loading = true;
    return 0;
}

/* The counts bound the allocations the stream asks for. */
static bool rdma_soft_mig_count_ok(void *opaque, int version_id)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);

    /* One record per QP, and the QPs were restored (the core loads first). */
    if (soft->mig_n < 0 ||
        soft->mig_n > soft->be.rm->tables[RDMA_RES_QP].used) {
        error_report("rdma: incoming count of QP records %d out of range",
                     soft->mig_n);
        soft->mig_n = 0;
        return false;
    }
    /*
     * Allocated zeroed here when loading (a VALIDATE runs on save too),
     * not by VMS_ALLOC: each record may own arrays (rdma_soft_mig_free()),
     * and a load that fails half-way must leave the records it did not
     * reach without any.
     */
    if (soft->mig_loading) {
        soft->mig = g_new0(RdmaSoftQpMig, MAX(soft->mig_n, 1));
    }
    return true;
}

/*
 * At most as many outstanding WRs as the send queues of the restored QPs
 * hold (rdma_soft_mig_why() checks each QP's share), not as many as the
 * device's limits would allow: the array is allocated for them.
 */
static bool rdma_soft_mig_nwqe_ok(void *opaque, int version_id)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);
    RdmaTable *t = &soft->be.rm->tables[RDMA_RES_QP];
    int64_t room = 0;

    for (uint32_t h = 0; h < t->size; h++) {
        RdmaQp *qp = t->slots[h];

        room += qp ? MAX(qp->cap.max_send_wr, 1) : 0;
    }
    if (soft->mig_nwqe < 0 || soft->mig_nwqe > room) {
        error_report("rdma: incoming count of outstanding WRs %d out of "
                     "range", soft->mig_nwqe);
        soft->mig_nwqe = 0;
        return false;
    }
    return true;
}

static bool rdma_soft_mig_nrwqe_ok(void *opaque, int version_id)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);

    if (soft->mig_nrwqe < 0 || soft->mig_nrwqe > soft->mig_n) {
        error_report("rdma: incoming count of receive WQEs %d out of range",
                     soft->mig_nrwqe);
        soft->mig_nrwqe = 0;
        return false;
    }
    return true;
}

static bool rdma_psn_ok(uint32_t psn)
{
    return psn <= RDMA_PSN_MASK;
}

/*
 * Why started WR @wr of @qp could not have passed the checks of its
 * start (rdma_soft_wqe_start()), or NULL: a restored WR is sent again
 * without them.  Its keys are checked anew at every packet.
 */
static const char *rdma_soft_mig_started_why(RdmaResources *rm,
                                             const RdmaQp *qp,
                                             const RdmaSendWr *wr,
                                             uint64_t len)
{
    if (!rdma_soft_opcode_ok(qp, wr->opcode) ||
        wr->opcode == RDMA_WR_FAST_REG_MR || wr->opcode == RDMA_WR_LOCAL_INV) {
        return "an opcode the QP does not send";
    }
    if ((wr->opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ||
         wr->opcode == RDMA_WR_ATOMIC_FETCH_AND_ADD) && len != 8) {
        return "an atomic that is not of 8 bytes";
    }
    if (qp->type != RDMA_QPT_RC &&
        (len > RDMA_SOFT_UD_MAX || wr->remote_qpn > RDMA_MAX_QPN ||
         wr->sgid_index >= rm->limits.gid_tbl_len ||
         !rm->gids[wr->sgid_index].valid)) {
        return "a UD WR the QP could not have sent";
    }
    return NULL;
}

/* Why outstanding WR @w of @qp cannot be, or NULL. */
static const char *rdma_soft_mig_wqe_why(RdmaResources *rm, RdmaQp *qp,
                                         const RdmaSoftWqeMig *w,
                                         uint32_t prev_end)
{
    uint64_t pmtu = rdma_soft_pmtu(qp), npkts;
    bool started = w->last_psn != RDMA_PSN_MASK + 1;

    if (w->qpn != qp->qpn) {
        return "a WR of another QP";
    }
    if (w->wr.opcode >= RDMA_WR_MAX || w->wr.num_sge > qp->cap.max_send_sge ||
        w->wr.flow_label > 0xfffff ||
        (w->wr.flags & ~(RDMA_SEND_FENCE | RDMA_SEND_SIGNALED |
                         RDMA_SEND_SOLICITED | RDMA_SEND_INLINE))) {
        return "a WR the QP could not have taken";
    }
    if (!started) {
        return w->len || w->first_psn || w->next_psn || w->ack_psn ?
               "a WR not started has PSNs" : NULL;
    }
    npkts = w->wr.opcode == RDMA_WR_ATOMIC_CMP_AND_SWP ||
            w->wr.opcode == RDMA_WR_ATOMIC_FETCH_AND_ADD ? 1 :
            MAX(DIV_ROUND_UP(w->len, pmtu), 1);
    if (w->len != rdma_wr_bytes(&w->wr) || w->len > RDMA_SOFT_MAX_MSG ||
        !rdma_psn_ok(w->first_psn) || !rdma_psn_ok(w->last_psn) ||
        !rdma_psn_ok(w->next_psn) ||
        ((w->last_psn - w->first_psn) & RDMA_PSN_MASK) + 1 != npkts ||
        ((w->next_psn - w->first_psn) & RDMA_PSN_MASK) > npkts ||
        !rdma_psn_ok(w->ack_psn) ||
        ((w->ack_psn - w->first_psn) & RDMA_PSN_MASK) > npkts ||
        (prev_end != UINT32_MAX && w->first_psn != prev_end)) {
        return "PSNs that do not fit the WR";
    }
    return rdma_soft_mig_started_why(rm, qp, &w->wr, w->len);
}

static bool rdma_soft_qp_state_in(const RdmaQp *qp, RdmaQpState a,
                                  RdmaQpState b, RdmaQpState c,
                                  RdmaQpState d)
{
    RdmaQpState s = qp->attr.qp_state;

    return s == a || s == b || s == c || s == d;
}

/* Why record @m cannot be the state of the QP it names, or NULL. */
static const char *rdma_soft_mig_why(RdmaSoft *soft, const RdmaSoftQpMig *m,
                                     const uint8_t *seen)
{
    RdmaResources *rm = soft->be.rm;
    RdmaQp *qp = rdma_rm_qp_by_num(rm, m->qpn);
    const RdmaSoftResp *r = &m->resp;

    if (!qp || !qp->be) {
        return "no such QP";
    }
    if (seen[qp->qpn / 8] & (1u << (qp->qpn % 8))) {
        return "two records for one QP";
    }
    /* Flushing and RESET drop outstanding WRs: only these states keep one. */
    if (m->nwqe && !rdma_soft_qp_state_in(qp, RDMA_QPS_RTS, RDMA_QPS_SQD,
                                          RDMA_QPS_RTS, RDMA_QPS_SQD)) {
        return "WRs outstanding on a QP that cannot send";
    }
    if (m->nwqe > MAX(qp->cap.max_send_wr, 1) ||
        ((m->rnr_wait || m->due) && !m->nwqe)) {
        return "outstanding WRs out of range";
    }
    if (!rdma_psn_ok(m->psn) || !rdma_psn_ok(m->sent_psn) ||
        rdma_psn_diff(m->sent_psn, m->psn) > 0 ||
        (qp->attr.rnr_retry != RDMA_RNR_INFINITE &&
         m->rnr_attempts > qp->attr.rnr_retry) ||
        m->rnr_dest_qpn > RDMA_MAX_QPN ||
        m->rnr_left_ns < -1 || m->rnr_left_ns > RDMA_SOFT_RNR_MAX_NS ||
        m->retry_left > 7 || m->retry_left_ns < -1 ||
        m->retry_left_ns > (4096ll << 31) || (m->timed_out && !m->nwqe)) {
        return "requester state out of range";
    }
    if (!rdma_psn_ok(r->epsn) || !rdma_psn_ok(r->ack_psn) ||
        rdma_psn_diff(r->ack_psn, r->epsn) > 0 || r->msn > RDMA_MSN_MASK ||
        r->msg > RDMA_MSG_WRITE || r->off > RDMA_SOFT_MAX_MSG ||
        (r->msg == RDMA_MSG_WRITE && r->off > r->len) ||
        (r->msg != RDMA_MSG_SEND && r->has_rwqe)) {
        return "responder state out of range";
    }
    for (int i = 0; i < r->natomic; i++) {
        if (!rdma_psn_ok(r->atomic[i].psn)) {
            return "atomic result out of range";
        }
    }
    for (int i = 0; i < r->nres; i++) {
        const RdmaSoftReadRes *res = &r->res[i];

        /* Its PSNs are those of its responses at the QP's path MTU. */
        if (!rdma_psn_ok(res->first_psn) || !rdma_psn_ok(res->last_psn) ||
            res->len > RDMA_SOFT_MAX_MSG ||
            ((res->last_psn - res->first_psn) & RDMA_PSN_MASK) + 1 !=
            MAX(DIV_ROUND_UP((uint64_t)res->len, rdma_soft_pmtu(qp)), 1)) {
            return "READ responder resource out of range";
        }
    }
    if (r->read && (!rdma_psn_ok(r->read_psn) || r->read_qpn > RDMA_MAX_QPN ||
                    r->read_len > RDMA_SOFT_MAX_MSG ||
                    r->read_off > r->read_len)) {
        return "READ responder resource out of range";
    }
    if ((r->due && !r->read) ||
        ((r->msg != RDMA_MSG_NONE || r->read) &&
         !rdma_soft_qp_state_in(qp, RDMA_QPS_RTR, RDMA_QPS_RTS, RDMA_QPS_SQD,
                                RDMA_QPS_SQE))) {
        return "a message in progress on a QP that cannot receive";
    }
    return NULL;
}

/*
 * Check every record before anything is applied: a refused stream leaves
 * the engine as the objects' restore left it.
 */
static const char *rdma_soft_mig_check(RdmaSoft *soft, uint32_t *bad_qpn)
{
    g_autofree uint8_t *seen = g_malloc0(RDMA_MAX_QPN / 8 + 1);
    int32_t wi = 0, ri = 0;

    for (int32_t i = 0; i < soft->mig_n; i++) {
        const RdmaSoftQpMig *m = &soft->mig[i];
        const char *why = rdma_soft_mig_why(soft, m, seen);
        RdmaQp *qp = rdma_rm_qp_by_num(soft->be.rm, m->qpn);
        uint32_t prev_end = UINT32_MAX;

        *bad_qpn = m->qpn;
        if (why) {
            return why;
        }
        seen[m->qpn / 8] |= 1u << (m->qpn % 8);
        if (m->nwqe > (uint32_t)(soft->mig_nwqe - wi)) {
            return "fewer WR records than the QP says";
        }
        for (uint32_t n = 0; n < m->nwqe; n++, wi++) {
            why = rdma_soft_mig_wqe_why(soft->be.rm, qp, &soft->mig_wqe[wi],
                                        prev_end);
            if (why) {
                return why;
            }
            if (soft->mig_wqe[wi].last_psn != RDMA_PSN_MASK + 1) {
                prev_end = (soft->mig_wqe[wi].last_psn + 1) & RDMA_PSN_MASK;
            }
        }
        if (m->resp.has_rwqe &&
            (ri >= soft->mig_nrwqe || soft->mig_rwqe[ri].qpn != m->qpn ||
             soft->mig_rwqe[ri++].wr.num_sge > soft->be.rm->limits.max_sge)) {
            return "the receive WQE of the message is missing or bad";
        }
    }
    *bad_qpn = 0;
    return wi != soft->mig_nwqe || ri != soft->mig_nrwqe ?
           "WR records that belong to no QP" : NULL;
}

/* The responder's state of @m into @sqp's, whose store stays the QP's. */
static void rdma_soft_mig_apply_resp(RdmaSoftQp *sqp, const RdmaSoftResp *m)
{
    RdmaSoftResp *r = &sqp->resp;
    RdmaRecvWr *rwqe;
    RdmaSoftAtomicRes *atomic;
    RdmaSoftReadRes *res;

    if (m->natomic || m->nres || m->has_rwqe) {
        rdma_soft_resp_store(sqp);
    }
    rwqe = r->rwqe;
    atomic = r->atomic;
    res = r->res;

    *r = *m;
    r->rwqe = rwqe;
    r->atomic = atomic;
    r->res = res;
    /* rdma_soft_mig_ring_ok(): at most RDMA_SOFT_RD_ATOM of each */
    if (m->natomic) {
        memcpy(r->atomic, m->atomic, m->natomic * sizeof(*m->atomic));
    }
    if (m->nres) {
        memcpy(r->res, m->res, m->nres * sizeof(*m->res));
    }
}

static void rdma_soft_mig_apply(RdmaSoft *soft, const RdmaSoftQpMig *m,
                                int32_t *wi, int32_t *ri)
{
    RdmaQp *qp = rdma_rm_qp_by_num(soft->be.rm, m->qpn);
    RdmaSoftQp *sqp = qp->be;
    RdmaSoftReq *req = &sqp->req;

    for (uint32_t n = 0; n < m->nwqe; n++) {
        const RdmaSoftWqeMig *r = &soft->mig_wqe[(*wi)++];
        RdmaSoftWqe *w = g_new0(RdmaSoftWqe, 1);

        w->wr = r->wr;
        w->len = r->len;
        w->first_psn = r->first_psn;
        w->last_psn = r->last_psn;
        w->next_psn = r->next_psn;
        w->ack_psn = r->ack_psn;
        QTAILQ_INSERT_TAIL(&req->wqes, w, next);
        req->nwqe++;
    }
    req->psn = m->psn;
    req->sent_psn = m->sent_psn;
    req->asked_psn = (m->sent_psn - 1) & RDMA_PSN_MASK;
    req->rnr_wait = m->rnr_wait;
    req->rnr_attempts = m->rnr_attempts;
    req->rnr_dest_qpn = m->rnr_dest_qpn;
    req->retry_left = m->retry_left;
    req->timed_out = m->timed_out;
    req->gap_retry = m->gap_retry;
    /* not migrated (RdmaSoftReq): nothing on the way, the whole share */
    req->stale = 0;
    req->cwnd = 0;
    if (m->retry_left_ns >= 0) {
        timer_mod(req->retry_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  m->retry_left_ns);
    }
    if (m->rnr_left_ns >= 0) {
        timer_mod(req->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  m->rnr_left_ns);
    }
    rdma_soft_mig_apply_resp(sqp, &m->resp);
    if (m->resp.has_rwqe) {
        *sqp->resp.rwqe = soft->mig_rwqe[(*ri)++].wr;
    }
    rdma_soft_req_update(sqp, false);
    req->due = m->due;
    if (req->due || req->timed_out || sqp->resp.due) {
        rdma_soft_qp_due(sqp);
    }
}

static int rdma_soft_post_load(void *opaque, int version_id)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);
    uint32_t bad_qpn;
    RdmaTable *t = &soft->be.rm->tables[RDMA_RES_QP];
    const char *why;
    int32_t wi = 0, ri = 0;

    /* Where each QP's peer is, from its address vector (loaded already). */
    for (uint32_t h = 0; h < t->size; h++) {
        RdmaQp *qp = t->slots[h];

        if (qp && qp->be) {
            rdma_soft_qp_locate(qp->be, qp->attr.ah.dgid);
        }
    }
    why = rdma_soft_mig_check(soft, &bad_qpn);
    if (why) {
        error_report("rdma: incoming state of QP %u refused: %s", bad_qpn,
                     why);
        rdma_soft_mig_free(soft);
        return -EINVAL;
    }
    for (int32_t i = 0; i < soft->mig_n; i++) {
        rdma_soft_mig_apply(soft, &soft->mig[i], &wi, &ri);
    }
    rdma_soft_mig_free(soft);
    return 0;
}

const VMStateDescription vmstate_rdma_soft = {
    .name = "rdma-soft",
    .version_id = 6,                /* 6: stats.tx_dropped */
    .minimum_version_id = 5,        /* 5: the responder's READ resources */
    .pre_save = rdma_soft_pre_save,
    .post_save = rdma_soft_post_save,
    .pre_load = rdma_soft_pre_load,
    .post_load = rdma_soft_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_INT32(mig_n, RdmaSoft),
        VMSTATE_VALIDATE("count", rdma_soft_mig_count_ok),
        VMSTATE_STRUCT_VARRAY_POINTER_INT32(mig, RdmaSoft, mig_n,
                                            vmstate_rdma_soft_qp,
                                            RdmaSoftQpMig),
        VMSTATE_INT32(mig_nwqe, RdmaSoft),
        VMSTATE_VALIDATE("outstanding WRs", rdma_soft_mig_nwqe_ok),
        VMSTATE_STRUCT_VARRAY_ALLOC(mig_wqe, RdmaSoft, mig_nwqe, 1,
                                    vmstate_rdma_soft_wqe, RdmaSoftWqeMig),
        VMSTATE_INT32(mig_nrwqe, RdmaSoft),
        VMSTATE_VALIDATE("receive WQEs", rdma_soft_mig_nrwqe_ok),
        VMSTATE_STRUCT_VARRAY_ALLOC(mig_rwqe, RdmaSoft, mig_nrwqe, 1,
                                    vmstate_rdma_soft_rwqe, RdmaSoftRwqeMig),
        VMSTATE_UINT64(stats.tx_frames, RdmaSoft),
        VMSTATE_UINT64(stats.rx_frames, RdmaSoft),
        VMSTATE_UINT64(stats.rx_dropped, RdmaSoft),
        VMSTATE_UINT64(stats.timeouts, RdmaSoft),
        VMSTATE_UINT64(stats.retransmits, RdmaSoft),
        VMSTATE_UINT64(stats.seq_naks, RdmaSoft),
        VMSTATE_UINT64(stats.duplicates, RdmaSoft),
        VMSTATE_UINT64_V(stats.tx_dropped, RdmaSoft, 6),
        VMSTATE_END_OF_LIST()
    },
};
