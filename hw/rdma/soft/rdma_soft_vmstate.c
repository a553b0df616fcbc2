/*
 * The soft RDMA engine in the migration stream.
 *
 * The engine's objects are the core's (vmstate_rdma_rm); what it adds is
 * the WR a QP holds: one waiting for an RNR retry (with its attempts and
 * the time left on its timer) or a long message placed in steps (with
 * what is placed and the receive WQE its first step took).  Each record
 * is checked against the restored QPs as strictly as a WR from the guest:
 * the retry executes it again, with every key and right checked anew.
 * The RNR timer runs on the virtual clock, which stands still while the
 * VM is stopped, so the time left is what the destination waits.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/error-report.h"
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
    .version_id = 1,
    .minimum_version_id = 1,
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

RDMA_MIG_ZERO(RdmaSoftQpMig)

static const VMStateDescription vmstate_rdma_soft_qp = {
    .name = "rdma-soft-qp",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_load = rdma_mig_zero_RdmaSoftQpMig,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(qpn, RdmaSoftQpMig),
        VMSTATE_STRUCT(wr, RdmaSoftQpMig, 1, vmstate_rdma_send_wr,
                       RdmaSendWr),
        VMSTATE_UINT32(rnr_attempts, RdmaSoftQpMig),
        VMSTATE_UINT32(rnr_dest_qpn, RdmaSoftQpMig),
        VMSTATE_INT64(rnr_left_ns, RdmaSoftQpMig),
        VMSTATE_BOOL(rnr_due, RdmaSoftQpMig),
        VMSTATE_UINT64(msg_done, RdmaSoftQpMig),
        VMSTATE_BOOL(msg_has_rwr, RdmaSoftQpMig),
        VMSTATE_UINT32(msg_dst_qpn, RdmaSoftQpMig),
        VMSTATE_STRUCT(msg_rwr, RdmaSoftQpMig, 1, vmstate_rdma_recv_wr,
                       RdmaRecvWr),
        VMSTATE_END_OF_LIST()
    },
};

static void rdma_soft_mig_free(RdmaSoft *soft)
{
    g_free(soft->mig);
    soft->mig = NULL;
    soft->mig_n = 0;
}

static int rdma_soft_pre_save(void *opaque)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);
    RdmaTable *t = &soft->be.rm->tables[RDMA_RES_QP];
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    soft->mig = g_new0(RdmaSoftQpMig, MAX(soft->nstalled, 1));
    soft->mig_n = 0;
    for (uint32_t h = 0; h < t->size; h++) {
        RdmaQp *qp = t->slots[h];
        RdmaSoftQp *sqp = qp ? qp->be : NULL;
        RdmaSoftQpMig *m;

        if (!sqp || !sqp->has_stalled) {
            continue;
        }
        m = &soft->mig[soft->mig_n++];
        m->qpn = qp->qpn;
        m->wr = sqp->stalled;
        m->rnr_attempts = sqp->rnr_attempts;
        m->rnr_dest_qpn = sqp->rnr_dest_qpn;
        m->rnr_left_ns = timer_pending(sqp->rnr_timer) ?
                         MAX(timer_expire_time_ns(sqp->rnr_timer) - now, 0) :
                         -1;
        m->rnr_due = sqp->rnr_due;
        m->msg_done = sqp->msg_done;
        m->msg_has_rwr = sqp->msg_has_rwr;
        m->msg_dst_qpn = sqp->msg_dst_qpn;
        m->msg_rwr = sqp->msg_rwr;
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
    rdma_soft_mig_free(container_of((RdmaBackend *)opaque, RdmaSoft, be));
    return 0;
}

static bool rdma_soft_mig_count_ok(void *opaque, int version_id)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);

    if (soft->mig_n < 0 ||
        soft->mig_n > soft->be.rm->tables[RDMA_RES_QP].size) {
        error_report("rdma: incoming count of held WRs %d out of range",
                     soft->mig_n);
        soft->mig_n = 0;
        return false;
    }
    return true;
}

/* Why record @m cannot be the state of the QP it names, or NULL. */
static const char *rdma_soft_mig_why(RdmaSoft *soft, const RdmaSoftQpMig *m)
{
    RdmaResources *rm = soft->be.rm;
    RdmaQp *qp = rdma_rm_qp_by_num(rm, m->qpn);
    RdmaQp *dst = m->msg_has_rwr ? rdma_rm_qp_by_num(rm, m->msg_dst_qpn)
                                 : NULL;
    RdmaSoftQp *sqp = qp ? qp->be : NULL;
    uint64_t bytes;

    if (!sqp) {
        return "no such QP";
    }
    if (sqp->has_stalled) {
        return "two records for one QP";
    }
    /* Flushing and RESET drop a held WR: only these states keep one. */
    if (qp->attr.qp_state != RDMA_QPS_RTS &&
        qp->attr.qp_state != RDMA_QPS_SQD) {
        return "a WR held by a QP that cannot send";
    }
    if (m->wr.opcode >= RDMA_WR_MAX || m->wr.num_sge > qp->cap.max_send_sge ||
        (m->wr.flags & ~(RDMA_SEND_FENCE | RDMA_SEND_SIGNALED |
                         RDMA_SEND_SOLICITED | RDMA_SEND_INLINE))) {
        return "the WR is not one the QP could have taken";
    }
    bytes = rdma_wr_bytes(&m->wr);
    if (m->msg_done > bytes || m->msg_done % RDMA_WR_STEP ||
        (m->msg_has_rwr && !m->msg_done)) {
        return "placed bytes do not fit the WR";
    }
    if (m->msg_has_rwr &&
        (!dst || dst->attr.qp_state == RDMA_QPS_RESET ||
         m->msg_rwr.num_sge > rm->limits.max_sge)) {
        return "the receive WQE of the message is not its peer's";
    }
    if ((qp->attr.rnr_retry != RDMA_RNR_INFINITE &&
         m->rnr_attempts > qp->attr.rnr_retry) ||
        m->rnr_dest_qpn > RDMA_MAX_QPN ||
        m->rnr_left_ns < -1 || m->rnr_left_ns > RDMA_SOFT_RNR_MAX_NS) {
        return "RNR state out of range";
    }
    return NULL;
}

static void rdma_soft_mig_apply(RdmaSoft *soft, const RdmaSoftQpMig *m)
{
    RdmaQp *qp = rdma_rm_qp_by_num(soft->be.rm, m->qpn);
    RdmaSoftQp *sqp = qp->be;

    sqp->stalled = m->wr;
    sqp->stalled_bytes = rdma_wr_bytes(&m->wr);
    rdma_soft_set_stalled(sqp, true);
    sqp->rnr_attempts = m->rnr_attempts;
    sqp->rnr_dest_qpn = m->rnr_dest_qpn;
    sqp->msg_done = m->msg_done;
    sqp->msg_has_rwr = m->msg_has_rwr;
    sqp->msg_dst_qpn = m->msg_dst_qpn;
    sqp->msg_rwr = m->msg_rwr;
    if (m->rnr_left_ns >= 0) {
        timer_mod(sqp->rnr_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
                  m->rnr_left_ns);
    }
    sqp->rnr_due = m->rnr_due;
    if (m->rnr_due) {
        qemu_bh_schedule(soft->retry_bh);
    }
}

static int rdma_soft_post_load(void *opaque, int version_id)
{
    RdmaSoft *soft = container_of((RdmaBackend *)opaque, RdmaSoft, be);
    int ret = 0;

    for (int32_t i = 0; i < soft->mig_n; i++) {
        const char *why = rdma_soft_mig_why(soft, &soft->mig[i]);

        if (why) {
            error_report("rdma: incoming WR held by QP %u refused: %s",
                         soft->mig[i].qpn, why);
            ret = -EINVAL;
            break;
        }
        rdma_soft_mig_apply(soft, &soft->mig[i]);
    }
    rdma_soft_mig_free(soft);
    return ret;
}

const VMStateDescription vmstate_rdma_soft = {
    .name = "rdma-soft",
    .version_id = 1,
    .minimum_version_id = 1,
    .pre_save = rdma_soft_pre_save,
    .post_save = rdma_soft_post_save,
    .pre_load = rdma_soft_pre_load,
    .post_load = rdma_soft_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_INT32(mig_n, RdmaSoft),
        VMSTATE_VALIDATE("count", rdma_soft_mig_count_ok),
        VMSTATE_STRUCT_VARRAY_ALLOC(mig, RdmaSoft, mig_n, 1,
                                    vmstate_rdma_soft_qp, RdmaSoftQpMig),
        VMSTATE_END_OF_LIST()
    },
};
