/*
 * Helpers shared by the pvrdma qtests (see pvrdma-qtest.h).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/host-utils.h"
#include "hw/pci/pci_regs.h"
#include "pvrdma-qtest.h"

/*
 * Byte order.  Guest structures are little-endian (pvrdma_abi.h); the
 * tests fill and check them as host-order structs, and the helpers that
 * write them to guest memory or read them back convert with these tables,
 * one per structure, of its multi-byte fields.  Byte arrays (GIDs, MACs)
 * and the fields the ABI keeps big-endian (GUIDs, immediate data) are not
 * in them: those are bytes, as the device passes them.
 */
typedef struct PvField {
    size_t off;
    uint8_t size;                   /* 2, 4 or 8; 0: a structure, @sub */
    uint8_t n;                      /* fields of that size in a row */
    const struct PvField *sub;
} PvField;

#define PV_F(t, f)          { offsetof(t, f), sizeof_field(t, f), 1, NULL }
/* @first to @last, all of @first's size (checked at @last's end) */
#define PV_RUN(t, first, last)                                             \
    { offsetof(t, first), sizeof_field(t, first),                          \
      (offsetof(t, last) - offsetof(t, first)) / sizeof_field(t, first) + 1 + \
      QEMU_BUILD_BUG_ON_ZERO(sizeof_field(t, last) != sizeof_field(t, first) \
                             || (offsetof(t, last) - offsetof(t, first)) % \
                                sizeof_field(t, first)),                   \
      NULL }
#define PV_SUB(t, f, fields) { offsetof(t, f), 0, 1, fields }
#define PV_END              { 0, 0, 0, NULL }

static void pv_swap1(uint8_t *p, uint8_t size, bool to_le)
{
    switch (size) {
    case 2:
        if (to_le) {
            stw_le_p(p, lduw_he_p(p));
        } else {
            stw_he_p(p, lduw_le_p(p));
        }
        break;
    case 4:
        if (to_le) {
            stl_le_p(p, ldl_he_p(p));
        } else {
            stl_he_p(p, ldl_le_p(p));
        }
        break;
    case 8:
        if (to_le) {
            stq_le_p(p, ldq_he_p(p));
        } else {
            stq_he_p(p, ldq_le_p(p));
        }
        break;
    default:
        g_assert_not_reached();
    }
}

static void pv_swap(void *p, const PvField *f, bool to_le)
{
    for (; f->n; f++) {
        uint8_t *q = (uint8_t *)p + f->off;

        if (f->sub) {
            pv_swap(q, f->sub, to_le);
            continue;
        }
        for (uint8_t i = 0; i < f->n; i++, q += f->size) {
            pv_swap1(q, f->size, to_le);
        }
    }
}

/* A host-order structure at @p to the guest's little-endian, in place. */
static void pv_to_le(void *p, const PvField *f)
{
    pv_swap(p, f, true);
}

/* A structure read from guest memory at @p to host order, in place. */
static void pv_from_le(void *p, const PvField *f)
{
    pv_swap(p, f, false);
}

static const PvField pv_caps_fields[] = {
    PV_F(PvrdmaDeviceCaps, fw_ver),
    PV_RUN(PvrdmaDeviceCaps, max_mr_size, atomic_arg_sizes),
    PV_RUN(PvrdmaDeviceCaps, ex_comp_mask, gid_tbl_len),
    PV_F(PvrdmaDeviceCaps, max_pkeys),
    PV_F(PvrdmaDeviceCaps, max_fast_reg_page_list_len),
    PV_END
};

static const PvField pv_dsr_fields[] = {
    PV_F(PvrdmaDsr, driver_version),
    PV_F(PvrdmaDsr, gos_info),
    PV_RUN(PvrdmaDsr, cmd_slot_dma, resp_slot_dma),
    PV_F(PvrdmaDsr, async_ring_pages.num_pages),
    PV_F(PvrdmaDsr, async_ring_pages.pdir_dma),
    PV_F(PvrdmaDsr, cq_ring_pages.num_pages),
    PV_F(PvrdmaDsr, cq_ring_pages.pdir_dma),
    PV_F(PvrdmaDsr, uar_pfn64),     /* the tests are version 19 drivers */
    PV_SUB(PvrdmaDsr, caps, pv_caps_fields),
    PV_END
};

static const PvField pv_ah_fields[] = {
    PV_F(PvrdmaAhAttr, grh.flow_label),
    PV_RUN(PvrdmaAhAttr, dlid, vlan_id),
    PV_END
};

static const PvField pv_qp_attr_fields[] = {
    PV_RUN(PvrdmaQpAttr, qp_state, qp_access_flags),
    PV_RUN(PvrdmaQpAttr, pkey_index, alt_pkey_index),
    PV_RUN(PvrdmaQpAttr, cap.max_send_wr, cap.reserved),
    PV_SUB(PvrdmaQpAttr, ah_attr, pv_ah_fields),
    PV_SUB(PvrdmaQpAttr, alt_ah_attr, pv_ah_fields),
    PV_END
};

/* Requests: the header, then the fields of each command after it. */
static const PvField pv_req_hdr_fields[] = {
    PV_F(PvrdmaCmdHdr, response),
    PV_F(PvrdmaCmdHdr, cmd),
    PV_END
};

/* Every destroy command, and QUERY_SRQ: one handle after the header. */
static const PvField pv_req_handle_fields[] = {
    PV_F(PvrdmaCmdDestroyPd, pd_handle),
    PV_END
};

static const PvField pv_req_create_uc_fields[] = {
    PV_F(PvrdmaCmdCreateUc, pfn64), /* version 19 and later */
    PV_END
};

static const PvField pv_req_create_pd_fields[] = {
    PV_F(PvrdmaCmdCreatePd, ctx_handle),
    PV_END
};

static const PvField pv_req_create_mr_fields[] = {
    PV_RUN(PvrdmaCmdCreateMr, start, pdir_dma),
    PV_RUN(PvrdmaCmdCreateMr, pd_handle, nchunks),
    PV_END
};

static const PvField pv_req_create_cq_fields[] = {
    PV_F(PvrdmaCmdCreateCq, pdir_dma),
    PV_RUN(PvrdmaCmdCreateCq, ctx_handle, nchunks),
    PV_END
};

static const PvField pv_req_resize_cq_fields[] = {
    PV_RUN(PvrdmaCmdResizeCq, cq_handle, cqe),
    PV_END
};

static const PvField pv_req_create_qp_fields[] = {
    PV_F(PvrdmaCmdCreateQp, pdir_dma),
    PV_RUN(PvrdmaCmdCreateQp, pd_handle, access_flags),
    PV_RUN(PvrdmaCmdCreateQp, total_chunks, max_atomic_arg),
    PV_END
};

static const PvField pv_req_modify_qp_fields[] = {
    PV_RUN(PvrdmaCmdModifyQp, qp_handle, attr_mask),
    PV_SUB(PvrdmaCmdModifyQp, attrs, pv_qp_attr_fields),
    PV_END
};

static const PvField pv_req_query_qp_fields[] = {
    PV_RUN(PvrdmaCmdQueryQp, qp_handle, attr_mask),
    PV_END
};

static const PvField pv_req_create_bind_fields[] = {
    PV_RUN(PvrdmaCmdCreateBind, mtu, index),
    PV_END
};

static const PvField pv_req_destroy_bind_fields[] = {
    PV_F(PvrdmaCmdDestroyBind, index),
    PV_END
};

static const PvField pv_req_create_srq_fields[] = {
    PV_F(PvrdmaCmdCreateSrq, pdir_dma),
    PV_RUN(PvrdmaCmdCreateSrq, pd_handle, nchunks),
    PV_RUN(PvrdmaCmdCreateSrq, attrs.max_wr, attrs.reserved),
    PV_END
};

static const PvField pv_req_modify_srq_fields[] = {
    PV_RUN(PvrdmaCmdModifySrq, srq_handle, attr_mask),
    PV_RUN(PvrdmaCmdModifySrq, attrs.max_wr, attrs.reserved),
    PV_END
};

static const PvField *const pv_req_fields[PVRDMA_CMD_MAX] = {
    [PVRDMA_CMD_CREATE_PD] = pv_req_create_pd_fields,
    [PVRDMA_CMD_DESTROY_PD] = pv_req_handle_fields,
    [PVRDMA_CMD_CREATE_MR] = pv_req_create_mr_fields,
    [PVRDMA_CMD_DESTROY_MR] = pv_req_handle_fields,
    [PVRDMA_CMD_CREATE_CQ] = pv_req_create_cq_fields,
    [PVRDMA_CMD_RESIZE_CQ] = pv_req_resize_cq_fields,
    [PVRDMA_CMD_DESTROY_CQ] = pv_req_handle_fields,
    [PVRDMA_CMD_CREATE_QP] = pv_req_create_qp_fields,
    [PVRDMA_CMD_MODIFY_QP] = pv_req_modify_qp_fields,
    [PVRDMA_CMD_QUERY_QP] = pv_req_query_qp_fields,
    [PVRDMA_CMD_DESTROY_QP] = pv_req_handle_fields,
    [PVRDMA_CMD_CREATE_UC] = pv_req_create_uc_fields,
    [PVRDMA_CMD_DESTROY_UC] = pv_req_handle_fields,
    [PVRDMA_CMD_CREATE_BIND] = pv_req_create_bind_fields,
    [PVRDMA_CMD_DESTROY_BIND] = pv_req_destroy_bind_fields,
    [PVRDMA_CMD_CREATE_SRQ] = pv_req_create_srq_fields,
    [PVRDMA_CMD_MODIFY_SRQ] = pv_req_modify_srq_fields,
    [PVRDMA_CMD_QUERY_SRQ] = pv_req_handle_fields,
    [PVRDMA_CMD_DESTROY_SRQ] = pv_req_handle_fields,
};

/* Responses */
static const PvField pv_resp_hdr_fields[] = {
    PV_F(PvrdmaCmdRespHdr, response),
    PV_F(PvrdmaCmdRespHdr, ack),
    PV_END
};

static const PvField pv_resp_query_port_fields[] = {
    PV_RUN(PvrdmaCmdQueryPortResp, attrs.state, attrs.qkey_viol_cntr),
    PV_RUN(PvrdmaCmdQueryPortResp, attrs.pkey_tbl_len, attrs.sm_lid),
    PV_END
};

static const PvField pv_resp_query_pkey_fields[] = {
    PV_F(PvrdmaCmdQueryPkeyResp, pkey),
    PV_END
};

/* CREATE_UC, CREATE_PD, DESTROY_QP, CREATE_SRQ: one number */
static const PvField pv_resp_number_fields[] = {
    PV_F(PvrdmaCmdCreatePdResp, pd_handle),
    PV_END
};

static const PvField pv_resp_create_mr_fields[] = {
    PV_RUN(PvrdmaCmdCreateMrResp, mr_handle, rkey),
    PV_END
};

static const PvField pv_resp_create_cq_fields[] = {
    PV_RUN(PvrdmaCmdCreateCqResp, cq_handle, cqe),
    PV_END
};

/* Both layouts (without and with qp_handle) are 32-bit fields only. */
static const PvField pv_resp_create_qp_fields[] = {
    PV_RUN(PvrdmaCmdCreateQpRespV2, qpn, max_inline_data),
    PV_END
};

static const PvField pv_resp_query_qp_fields[] = {
    PV_SUB(PvrdmaCmdQueryQpResp, attrs, pv_qp_attr_fields),
    PV_END
};

static const PvField pv_resp_query_srq_fields[] = {
    PV_RUN(PvrdmaCmdQuerySrqResp, attrs.max_wr, attrs.reserved),
    PV_END
};

static const PvField *const pv_resp_fields[PVRDMA_CMD_MAX] = {
    [PVRDMA_CMD_QUERY_PORT] = pv_resp_query_port_fields,
    [PVRDMA_CMD_QUERY_PKEY] = pv_resp_query_pkey_fields,
    [PVRDMA_CMD_CREATE_PD] = pv_resp_number_fields,
    [PVRDMA_CMD_CREATE_MR] = pv_resp_create_mr_fields,
    [PVRDMA_CMD_CREATE_CQ] = pv_resp_create_cq_fields,
    [PVRDMA_CMD_RESIZE_CQ] = pv_resp_number_fields,
    [PVRDMA_CMD_CREATE_QP] = pv_resp_create_qp_fields,
    [PVRDMA_CMD_QUERY_QP] = pv_resp_query_qp_fields,
    [PVRDMA_CMD_DESTROY_QP] = pv_resp_number_fields,
    [PVRDMA_CMD_CREATE_UC] = pv_resp_number_fields,
    [PVRDMA_CMD_CREATE_SRQ] = pv_resp_number_fields,
    [PVRDMA_CMD_QUERY_SRQ] = pv_resp_query_srq_fields,
};

/* Work requests and completions */
static const PvField pv_sge_fields[] = {
    PV_F(PvrdmaSge, addr),
    PV_RUN(PvrdmaSge, length, lkey),
    PV_END
};

static const PvField pv_rq_wqe_fields[] = {
    PV_F(PvrdmaRqWqeHdr, wr_id),
    PV_RUN(PvrdmaRqWqeHdr, num_sge, total_len),
    PV_END
};

static const PvField pv_sq_wqe_fields[] = {
    PV_F(PvrdmaSqWqeHdr, wr_id),
    PV_RUN(PvrdmaSqWqeHdr, num_sge, send_flags),
    PV_END
};

/* The parts of the WQE that the device reads for some opcodes only */
static const PvField pv_sq_wqe_inv_fields[] = {
    PV_F(PvrdmaSqWqeHdr, ex.invalidate_rkey),
    PV_END
};

static const PvField pv_sq_wqe_rdma_fields[] = {
    PV_F(PvrdmaSqWqeHdr, wr.rdma.remote_addr),
    PV_F(PvrdmaSqWqeHdr, wr.rdma.rkey),
    PV_END
};

static const PvField pv_sq_wqe_atomic_fields[] = {
    PV_RUN(PvrdmaSqWqeHdr, wr.atomic.remote_addr, wr.atomic.swap),
    PV_F(PvrdmaSqWqeHdr, wr.atomic.rkey),
    PV_END
};

static const PvField pv_sq_wqe_fast_reg_fields[] = {
    PV_RUN(PvrdmaSqWqeHdr, wr.fast_reg.iova_start, wr.fast_reg.pl_pdir_dma),
    PV_RUN(PvrdmaSqWqeHdr, wr.fast_reg.page_shift, wr.fast_reg.rkey),
    PV_END
};

static const PvField pv_sq_wqe_ud_fields[] = {
    PV_RUN(PvrdmaSqWqeHdr, wr.ud.remote_qpn, wr.ud.remote_qkey),
    PV_RUN(PvrdmaSqWqeHdr, wr.ud.av.port_pd, wr.ud.av.sl_tclass_flowlabel),
    PV_END
};

/* imm_data is not here: see pv_cqe_from_le() */
static const PvField pv_cqe_fields[] = {
    PV_RUN(PvrdmaCqe, wr_id, qp),
    PV_RUN(PvrdmaCqe, opcode, byte_len),
    PV_RUN(PvrdmaCqe, src_qp, vendor_err),
    PV_RUN(PvrdmaCqe, pkey_index, slid),
    PV_END
};

static const PvField pv_eqe_fields[] = {
    PV_RUN(PvrdmaEqe, type, info),
    PV_END
};

/* A send WQE header, as the device reads it for @qp_type (pvrdma_qp_ops.c) */
static void pv_sq_wqe_to_le(PvrdmaSqWqeHdr *h, uint8_t qp_type)
{
    uint32_t op = h->opcode;

    pv_to_le(h, pv_sq_wqe_fields);
    /* ex: an rkey, or the immediate data (big-endian, bytes) */
    if (op == PVRDMA_WR_SEND_WITH_INV || op == PVRDMA_WR_LOCAL_INV) {
        pv_to_le(h, pv_sq_wqe_inv_fields);
    }
    if (op == PVRDMA_WR_FAST_REG_MR) {
        pv_to_le(h, pv_sq_wqe_fast_reg_fields);
    } else if (qp_type != PVRDMA_QPT_RC) {
        pv_to_le(h, pv_sq_wqe_ud_fields);
    } else if (op == PVRDMA_WR_ATOMIC_CMP_AND_SWP ||
               op == PVRDMA_WR_ATOMIC_FETCH_AND_ADD) {
        pv_to_le(h, pv_sq_wqe_atomic_fields);
    } else {
        pv_to_le(h, pv_sq_wqe_rdma_fields);
    }
}

/* The CQE's imm_data is a number only when it is an invalidated rkey. */
static void pv_cqe_from_le(PvrdmaCqe *c)
{
    pv_from_le(c, pv_cqe_fields);
    if (c->wc_flags & PVRDMA_WC_WITH_INVALIDATE) {
        c->imm_data = le32_to_cpu(c->imm_data);
    }
}

PvrdmaCqe pv_cqe_at(Pv *pv, uint64_t addr)
{
    PvrdmaCqe c;

    qtest_memread(pv->qts, addr, &c, sizeof(c));
    pv_cqe_from_le(&c);
    return c;
}

void pv_dsr_put(Pv *pv, uint64_t addr, const PvrdmaDsr *dsr)
{
    PvrdmaDsr le = *dsr;

    pv_to_le(&le, pv_dsr_fields);
    qtest_memwrite(pv->qts, addr, &le, sizeof(le));
}

PvrdmaDsr pv_dsr_get(Pv *pv)
{
    PvrdmaDsr dsr;

    qtest_memread(pv->qts, pv->dsr, &dsr, sizeof(dsr));
    pv_from_le(&dsr, pv_dsr_fields);
    return dsr;
}

void pv_cmd_write(Pv *pv, const void *req, size_t len)
{
    PvrdmaCmdReq full = { 0 };
    uint32_t cmd;

    g_assert(len <= sizeof(full));
    memcpy(&full, req, len);
    cmd = full.hdr.cmd;
    pv_to_le(&full, pv_req_hdr_fields);
    if (cmd < PVRDMA_CMD_MAX && pv_req_fields[cmd]) {
        pv_to_le(&full, pv_req_fields[cmd]);
    }
    qtest_memwrite(pv->qts, pv->cmd, &full, sizeof(full));
}

/* The first @len bytes of the response to @cmd, in host order. */
static void pv_resp_read(Pv *pv, uint32_t cmd, void *resp, size_t len)
{
    PvrdmaCmdResp full;

    g_assert(len <= sizeof(full));
    qtest_memread(pv->qts, pv->resp, &full, sizeof(full));
    pv_from_le(&full, pv_resp_hdr_fields);
    if (cmd < PVRDMA_CMD_MAX && pv_resp_fields[cmd]) {
        pv_from_le(&full, pv_resp_fields[cmd]);
    }
    memcpy(resp, &full, len);
}

/* The backend under test */

static const char *pv_env(const char *name)
{
    const char *v = g_getenv(name);

    return v && *v ? v : NULL;
}

bool pv_ibverbs(void)
{
    return pv_env("PVRDMA_QTEST_IBDEV") != NULL;
}

void pv_settle(void)
{
    if (pv_ibverbs()) {
        g_usleep(PV_SETTLE_US);
    }
}

/*
 * The ibverbs backend needs guest RAM it can share with the host device
 * and rdmacm-mux for the GSI QP.
 */
static void pv_ibverbs_args(char **machine, char **device)
{
    const char *ibdev = pv_env("PVRDMA_QTEST_IBDEV");
    const char *netdev = pv_env("PVRDMA_QTEST_NETDEV");
    const char *mux = pv_env("PVRDMA_QTEST_MUX");

    if (!ibdev) {
        *machine = g_strdup("");
        *device = g_strdup("");
        return;
    }
    if (!netdev || !mux) {
        g_error("PVRDMA_QTEST_IBDEV=%s also needs PVRDMA_QTEST_NETDEV (its "
                "host network device) and PVRDMA_QTEST_MUX (the socket of "
                "an rdmacm-mux for it)", ibdev);
    }
    *machine = g_strdup_printf("-m %dM -object memory-backend-memfd,"
                               "id=pvrdma-ram,size=%dM,share=on "
                               "-machine memory-backend=pvrdma-ram "
                               "-chardev socket,id=pvrdma-mad,path=%s ",
                               PV_IBV_RAM_MB, PV_IBV_RAM_MB, mux);
    *device = g_strdup_printf(",ibdev=%s,netdev=%s,mad-chardev=pvrdma-mad",
                              ibdev, netdev);
}

/* Setup */

QTestState *pv_qemu_start_nic(const char *nic, const char *extra)
{
    g_autofree char *machine = NULL;
    g_autofree char *device = NULL;

    pv_ibverbs_args(&machine, &device);
    return qtest_initf("-M pc -nodefaults %s"
                       "-device vmxnet3,addr=%x.0,multifunction=on,%s"
                       " -device pvrdma,id=rdma,addr=%x.1%s%s",
                       machine, SLOT, nic, SLOT, device, extra ? extra : "");
}

QTestState *pv_qemu_start(const char *extra)
{
    return pv_qemu_start_nic("mac=" MAC, extra);
}

void pv_move(Pv *pv, QTestState *to)
{
    pv->qts = to;
    pv->bus->qts = to;
}

Pv *pv_start_args(const char *extra)
{
    return pv_start_nic("mac=" MAC, extra);
}

Pv *pv_start_nic(const char *nic, const char *extra)
{
    Pv *pv = g_new0(Pv, 1);

    pv->qts = pv_qemu_start_nic(nic, extra);
    pc_alloc_init(&pv->alloc, pv->qts, 0);
    pv->bus = qpci_new_pc(pv->qts, &pv->alloc);
    pv_attach(pv);
    return pv;
}

Pv *pv_start(void)
{
    return pv_start_args(NULL);
}

/*
 * q35 with the two functions behind a PCIe root port, as libvirt lays out
 * a q35 guest.  There is no firmware, so the test does its part: MMCFG on
 * at PV_MMCFG (MCH PCIEXBAR), bus 1 behind the port with a memory window
 * where libqos puts BARs, memory and bus mastering on in the port.
 */
static void pv_q35_firmware(Pv *pv)
{
    QPCIDevice *host = qpci_device_find(pv->bus, QPCI_DEVFN(0, 0));
    QPCIDevice *rp = qpci_device_find(pv->bus, QPCI_DEVFN(PV_RP_SLOT, 0));

    g_assert(host && rp);
    qpci_config_writel(host, 0x64, 0);
    qpci_config_writel(host, 0x60, PV_MMCFG | 1);   /* 256 buses, enabled */
    qpci_config_writeb(rp, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(rp, PCI_SECONDARY_BUS, 1);
    qpci_config_writeb(rp, PCI_SUBORDINATE_BUS, 1);
    qpci_config_writew(rp, PCI_MEMORY_BASE, 0xe000);
    qpci_config_writew(rp, PCI_MEMORY_LIMIT, 0xfff0);
    qpci_config_writew(rp, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    g_free(host);
    g_free(rp);
}

Pv *pv_start_q35(void)
{
    Pv *pv = g_new0(Pv, 1);
    g_autofree char *machine = NULL;
    g_autofree char *device = NULL;

    pv_ibverbs_args(&machine, &device);
    pv->qts = qtest_initf("-M q35 -nodefaults %s"
                          "-device pcie-root-port,id=rp0,bus=pcie.0,"
                          "addr=%x.0,chassis=1,slot=1 "
                          "-device vmxnet3,bus=rp0,addr=0.0,multifunction=on,"
                          "mac=" MAC " -device pvrdma,id=rdma,bus=rp0,"
                          "addr=0.1%s", machine, PV_RP_SLOT, device);
    pc_alloc_init(&pv->alloc, pv->qts, 0);
    pv->bus = qpci_new_pc(pv->qts, &pv->alloc);
    pv->q35 = true;
    pv_q35_firmware(pv);
    pv_attach(pv);
    return pv;
}

/* Bus 1, device 0, function 1: config cycles carry the bus in bits 8-15. */
#define PV_Q35_DEVFN    ((1 << 8) | QPCI_DEVFN(0, 1))

void pv_attach(Pv *pv)
{
    int devfn = pv->q35 ? PV_Q35_DEVFN : QPCI_DEVFN(SLOT, 1);

    g_free(pv->dev);
    pv->dev = qpci_device_find(pv->bus, devfn);
    g_assert(pv->dev);
    qpci_device_enable(pv->dev);
    pv->regs = qpci_iomap(pv->dev, PVRDMA_BAR_REGS, NULL);
    pv->uar = qpci_iomap(pv->dev, PVRDMA_BAR_UAR, NULL);
}

void pv_load(Pv *pv)
{
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==,
                     ERR_OK);
    wr(pv, PVRDMA_REG_IMR, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, ERR_OK);
}

void pv_stop(Pv *pv)
{
    g_free(pv->dev);
    qpci_free_pc(pv->bus);
    alloc_destroy(&pv->alloc);
    qtest_quit(pv->qts);
    g_free(pv);
}

uint32_t rd(Pv *pv, uint32_t reg)
{
    return qpci_io_readl(pv->dev, pv->regs, reg);
}

void wr(Pv *pv, uint32_t reg, uint32_t val)
{
    qpci_io_writel(pv->dev, pv->regs, reg, val);
}

uint64_t galloc(Pv *pv, size_t size)
{
    uint64_t a = guest_alloc(&pv->alloc, size);

    g_assert(a && !(a & (PAGE - 1)));
    qtest_memset(pv->qts, a, 0, size);
    return a;
}

/*
 * A page directory for @npages pages; the pages themselves are allocated
 * too unless @pages already holds them.  Returns the directory address.
 */
uint64_t make_pdir(Pv *pv, uint32_t npages, uint64_t *pages)
{
    uint32_t ntables = DIV_ROUND_UP(npages, 512);
    uint64_t dir = galloc(pv, PAGE);
    uint32_t t, i;

    for (t = 0; t < ntables; t++) {
        uint64_t table = galloc(pv, PAGE);

        qtest_writeq(pv->qts, dir + t * 8, table);
        for (i = 0; i < 512 && t * 512 + i < npages; i++) {
            uint32_t n = t * 512 + i;

            if (!pages[n]) {
                pages[n] = galloc(pv, PAGE);
            }
            qtest_writeq(pv->qts, table + i * 8, pages[n]);
        }
    }
    return dir;
}

uint64_t make_ring(Pv *pv, uint32_t npages)
{
    g_autofree uint64_t *pages = g_new0(uint64_t, npages);

    return make_pdir(pv, npages, pages);
}

/* Write a DSR the way the driver's probe does; returns DSRHIGH's ERR. */
uint32_t pv_write_dsr(Pv *pv, uint32_t driver_version,
                             uint32_t async_npages, uint32_t cq_npages)
{
    PvrdmaDsr dsr = { 0 };

    pv->dsr = galloc(pv, PAGE);
    pv->cmd = galloc(pv, PAGE);
    pv->resp = galloc(pv, PAGE);
    dsr.driver_version = driver_version;
    dsr.gos_info = 2 | (1 << 2) | (1 << 6);     /* 64-bit Linux, ver 1 */
    dsr.cmd_slot_dma = pv->cmd;
    dsr.resp_slot_dma = pv->resp;
    dsr.async_ring_pages.num_pages = async_npages;
    dsr.async_ring_pages.pdir_dma = make_pdir(pv, MIN(async_npages, 4),
                                              pv->async_pages);
    dsr.cq_ring_pages.num_pages = cq_npages;
    dsr.cq_ring_pages.pdir_dma = make_pdir(pv, MIN(cq_npages, 4),
                                           pv->cq_pages);
    dsr.uar_pfn64 = pv->uar.addr >> 12;
    pv_dsr_put(pv, pv->dsr, &dsr);
    wr(pv, PVRDMA_REG_DSRLOW, (uint32_t)pv->dsr);
    wr(pv, PVRDMA_REG_DSRHIGH, pv->dsr >> 32);
    return rd(pv, PVRDMA_REG_ERR);
}

PvrdmaDeviceCaps pv_caps(Pv *pv)
{
    return pv_dsr_get(pv).caps;
}

/* Probe as the driver does: DSR, IMR=0, CTL=ACTIVATE. */
Pv *pv_probe(void)
{
    Pv *pv = pv_start();

    pv_load(pv);
    return pv;
}

/*
 * Post a command (padded to the size of the request union, as the driver
 * copies it) and return ERR.  On success the response is checked: ack,
 * echoed cookie, and the response interrupt (ICR, MSI-X being off).
 */
uint32_t pv_cmd(Pv *pv, void *req, size_t len, void *resp,
                       size_t resp_len)
{
    PvrdmaCmdReq full = { 0 };
    PvrdmaCmdRespHdr hdr;
    uint32_t err, cmd;

    g_assert(len <= sizeof(full));
    memcpy(&full, req, len);
    cmd = full.hdr.cmd;
    full.hdr.response = ++pv->cookie;
    pv_cmd_write(pv, &full, sizeof(full));
    qtest_memset(pv->qts, pv->resp, 0xaa, PAGE);
    rd(pv, PVRDMA_REG_ICR);
    wr(pv, PVRDMA_REG_REQUEST, 0);
    err = rd(pv, PVRDMA_REG_ERR);
    if (err == ERR_OK) {
        pv_resp_read(pv, cmd, &hdr, sizeof(hdr));
        g_assert_cmphex(hdr.ack, ==, PVRDMA_CMD_RESP(cmd));
        g_assert_cmpuint(hdr.response, ==, pv->cookie);
        g_assert_cmpuint(hdr.err, ==, 0);
        /*
         * The response interrupt fires unless IMR masks it (an async
         * event the command raised, a QP gone to ERR, may be pending too).
         */
        g_assert_cmphex(rd(pv, PVRDMA_REG_ICR) & PVRDMA_INTR_CAUSE_RESPONSE,
                        ==,
                        (rd(pv, PVRDMA_REG_IMR) & PVRDMA_INTR_CAUSE_RESPONSE) ?
                        0 : PVRDMA_INTR_CAUSE_RESPONSE);
        if (resp) {
            pv_resp_read(pv, cmd, resp, resp_len);
        }
    } else {
        /* A failed command raises no interrupt. */
        g_assert_cmphex(rd(pv, PVRDMA_REG_ICR), ==, 0);
    }
    return err;
}


/* Object helpers: each returns ERR and the handle through @out. */

uint32_t create_pd(Pv *pv, uint32_t ctx, uint32_t *out)
{
    PvrdmaCmdCreatePd c = { .hdr.cmd = PVRDMA_CMD_CREATE_PD,
                            .ctx_handle = ctx };
    PvrdmaCmdCreatePdResp r = { 0 };
    uint32_t err = CMD(pv, c, &r);

    *out = r.pd_handle;
    return err;
}

uint32_t destroy(Pv *pv, uint32_t cmd, uint32_t handle)
{
    /* Every destroy command has the handle right after the header. */
    PvrdmaCmdDestroyPd c = { .hdr.cmd = cmd, .pd_handle = handle };

    return CMD_NR(pv, c);
}

uint32_t create_cq_pages(Pv *pv, uint32_t cqe, uint32_t nchunks,
                                uint64_t pdir, uint32_t *out)
{
    PvrdmaCmdCreateCq c = { .hdr.cmd = PVRDMA_CMD_CREATE_CQ, .cqe = cqe,
                            .nchunks = nchunks, .pdir_dma = pdir };
    PvrdmaCmdCreateCqResp r = { 0 };
    uint32_t err = CMD(pv, c, &r);

    if (err == ERR_OK) {
        g_assert_cmpuint(r.cqe, ==, cqe);
    }
    *out = r.cq_handle;
    return err;
}

uint32_t create_cq(Pv *pv, uint32_t cqe, uint32_t *out)
{
    uint32_t n = 1 + DIV_ROUND_UP(cqe * 64, PAGE);

    return create_cq_pages(pv, cqe, n, make_ring(pv, n), out);
}


uint32_t wqe_bytes(uint32_t hdr, uint32_t sge)
{
    return pow2ceil(hdr + 16 * MAX(sge, 1));
}

/* Ring pages as the kernel driver sizes them. */
void qp_chunks(const QpSpec *q, uint32_t *send, uint32_t *total)
{
    *send = DIV_ROUND_UP(pow2ceil(MAX(q->send_wr, 1)) *
                         wqe_bytes(sizeof(PvrdmaSqWqeHdr), q->send_sge),
                         PAGE);
    *total = 1 + *send + (q->is_srq ? 0 :
             DIV_ROUND_UP(pow2ceil(MAX(q->recv_wr, 1)) *
                          wqe_bytes(sizeof(PvrdmaRqWqeHdr), q->recv_sge),
                          PAGE));
}

PvrdmaCmdCreateQp qp_cmd_pages(Pv *pv, const QpSpec *q, uint64_t **pages)
{
    uint32_t send, total;
    uint64_t *p;
    PvrdmaCmdCreateQp c = {
        .hdr.cmd = PVRDMA_CMD_CREATE_QP, .qp_type = q->type,
        .pd_handle = q->pd, .send_cq_handle = q->scq,
        .recv_cq_handle = q->rcq, .srq_handle = q->srq, .is_srq = q->is_srq,
        .max_send_wr = q->send_wr, .max_recv_wr = q->recv_wr,
        .max_send_sge = q->send_sge, .max_recv_sge = q->recv_sge,
        .access_flags = PVRDMA_ACCESS_LOCAL_WRITE,
    };

    qp_chunks(q, &send, &total);
    c.send_chunks = send;
    c.total_chunks = total;
    p = g_new0(uint64_t, total);
    p[0] = q->state_page;
    c.pdir_dma = make_pdir(pv, total, p);
    if (pages) {
        *pages = p;
    } else {
        g_free(p);
    }
    return c;
}

PvrdmaCmdCreateQp qp_cmd(Pv *pv, const QpSpec *q)
{
    return qp_cmd_pages(pv, q, NULL);
}

uint32_t create_qp(Pv *pv, const QpSpec *q, uint32_t *qpn,
                          uint32_t *handle)
{
    PvrdmaCmdCreateQp c = qp_cmd(pv, q);
    PvrdmaCmdCreateQpRespV2 r = { 0 };
    uint32_t err = CMD(pv, c, &r);

    *qpn = r.qpn;
    *handle = r.qp_handle;
    return err;
}

/* A PD, one CQ and an RC QP spec on them. */
QpSpec basic_qp(Pv *pv, uint8_t type)
{
    QpSpec q = { .type = type, .send_wr = 16, .recv_wr = 16, .send_sge = 2,
                 .recv_sge = 2 };

    g_assert_cmpuint(create_pd(pv, 0, &q.pd), ==, ERR_OK);
    g_assert_cmpuint(create_cq(pv, 64, &q.scq), ==, ERR_OK);
    q.rcq = q.scq;
    return q;
}

uint32_t modify_qp(Pv *pv, uint32_t handle, uint32_t mask,
                          const PvrdmaQpAttr *a)
{
    PvrdmaCmdModifyQp c = { .hdr.cmd = PVRDMA_CMD_MODIFY_QP,
                            .qp_handle = handle, .attr_mask = mask,
                            .attrs = *a };

    return CMD_NR(pv, c);
}

PvrdmaQpAttr query_qp(Pv *pv, uint32_t handle)
{
    PvrdmaCmdQueryQp c = { .hdr.cmd = PVRDMA_CMD_QUERY_QP,
                           .qp_handle = handle, .attr_mask = ~0u };
    PvrdmaCmdQueryQpResp r;

    g_assert_cmpuint(CMD(pv, c, &r), ==, ERR_OK);
    return r.attrs;
}

uint32_t create_srq(Pv *pv, uint32_t pd, uint32_t max_wr,
                           uint32_t max_sge, uint32_t limit, uint32_t *out)
{
    uint32_t n = 1 + DIV_ROUND_UP(pow2ceil(max_wr) *
                                  wqe_bytes(sizeof(PvrdmaRqWqeHdr), max_sge),
                                  PAGE);
    PvrdmaCmdCreateSrq c = {
        .hdr.cmd = PVRDMA_CMD_CREATE_SRQ, .pd_handle = pd, .nchunks = n,
        .pdir_dma = make_ring(pv, n),
        .attrs = { .max_wr = max_wr, .max_sge = max_sge,
                   .srq_limit = limit },
    };
    PvrdmaCmdCreateSrqResp r = { 0 };
    uint32_t err = CMD(pv, c, &r);

    *out = r.srqn;
    return err;
}

uint32_t create_uc(Pv *pv, uint64_t pfn, uint32_t *out)
{
    PvrdmaCmdCreateUc c = { .hdr.cmd = PVRDMA_CMD_CREATE_UC, .pfn64 = pfn };
    PvrdmaCmdCreateUcResp r = { 0 };
    uint32_t err = CMD(pv, c, &r);

    *out = r.ctx_handle;
    return err;
}

uint32_t create_mr(Pv *pv, uint32_t pd, uint32_t flags,
                          uint32_t access, uint64_t start, uint64_t length,
                          uint32_t nchunks, uint64_t pdir,
                          PvrdmaCmdCreateMrResp *r)
{
    PvrdmaCmdCreateMr c = { .hdr.cmd = PVRDMA_CMD_CREATE_MR, .pd_handle = pd,
                            .flags = flags, .access_flags = access,
                            .start = start, .length = length,
                            .nchunks = nchunks, .pdir_dma = pdir };
    PvrdmaCmdCreateMrResp dummy;

    return CMD(pv, c, r ? r : &dummy);
}

PvrdmaQpAttr rc_attrs(void)
{
    PvrdmaQpAttr a = { 0 };

    a.qp_access_flags = PVRDMA_ACCESS_LOCAL_WRITE |
                        PVRDMA_ACCESS_REMOTE_WRITE;
    a.port_num = 1;
    a.path_mtu = PVRDMA_MTU_1024;
    a.dest_qp_num = 0x123456;
    a.rq_psn = 0xabcdef;
    a.sq_psn = 0x765432;
    a.max_dest_rd_atomic = 4;
    a.max_rd_atomic = 8;
    a.min_rnr_timer = 12;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 6;
    a.qkey = 0x11111111;
    a.ah_attr.grh.sgid_index = 1;
    a.ah_attr.grh.hop_limit = 64;
    a.ah_attr.grh.traffic_class = 3;
    a.ah_attr.grh.flow_label = 0x12345;
    a.ah_attr.port_num = 1;
    a.ah_attr.ah_flags = 1;
    memset(a.ah_attr.grh.dgid.raw, 0x5a, 16);
    if (pv_ibverbs()) {
        /* A host device resolves the destination: ::ffff:10.0.2.15 */
        static const uint8_t dgid[16] = { [10] = 0xff, [11] = 0xff,
                                          10, 0, 2, 15 };

        memcpy(a.ah_attr.grh.dgid.raw, dgid, 16);
    }
    memcpy(a.ah_attr.dmac, "\x52\x54\x00\xab\xcd\xef", 6);
    return a;
}

uint32_t gid_bind(Pv *pv, uint32_t index, uint8_t fill, uint8_t type)
{
    PvrdmaCmdCreateBind c = { .hdr.cmd = PVRDMA_CMD_CREATE_BIND,
                              .index = index, .gid_type = type,
                              .mtu = 1024, .vlan = 0xfff };

    memset(c.new_gid, fill, 16);
    return CMD_NR(pv, c);
}

uint32_t gid_unbind(Pv *pv, uint32_t index, uint8_t fill)
{
    PvrdmaCmdDestroyBind c = { .hdr.cmd = PVRDMA_CMD_DESTROY_BIND,
                               .index = index };

    memset(c.dest_gid, fill, 16);
    return CMD_NR(pv, c);
}

uint32_t gid_unbind_gid(Pv *pv, uint32_t index, const uint8_t *gid)
{
    PvrdmaCmdDestroyBind c = { .hdr.cmd = PVRDMA_CMD_DESTROY_BIND,
                               .index = index };

    memcpy(c.dest_gid, gid, 16);
    return CMD_NR(pv, c);
}

/* Data path */

uint64_t pv_ring_slot(const PvRing *r, uint32_t idx)
{
    uint64_t off = (uint64_t)(idx & (r->max_elems - 1)) * r->elem_size;

    return r->pages[off / PAGE] + off % PAGE;
}

uint32_t pv_ring_prod(Pv *pv, const PvRing *r)
{
    return qtest_readl(pv->qts, r->state + offsetof(PvrdmaRing, prod_tail));
}

uint32_t pv_ring_cons(Pv *pv, const PvRing *r)
{
    return qtest_readl(pv->qts, r->state + offsetof(PvrdmaRing, cons_head));
}

void pv_ring_set_prod(Pv *pv, const PvRing *r, uint32_t v)
{
    qtest_writel(pv->qts, r->state + offsetof(PvrdmaRing, prod_tail), v);
}

void pv_ring_set_cons(Pv *pv, const PvRing *r, uint32_t v)
{
    qtest_writel(pv->qts, r->state + offsetof(PvrdmaRing, cons_head), v);
}

uint32_t pv_ring_next(const PvRing *r, uint32_t idx)
{
    return (idx + 1) & ((r->max_elems << 1) - 1);
}

void pv_ring_put(Pv *pv, const PvRing *r, const void *elem, size_t len)
{
    uint32_t tail = pv_ring_prod(pv, r);

    g_assert_cmpuint(len, <=, r->elem_size);
    qtest_memwrite(pv->qts, pv_ring_slot(r, tail), elem, len);
    pv_ring_set_prod(pv, r, pv_ring_next(r, tail));
}

bool pv_ring_get(Pv *pv, const PvRing *r, void *elem, size_t len)
{
    uint32_t head = pv_ring_cons(pv, r);

    if (head == pv_ring_prod(pv, r)) {
        return false;
    }
    g_assert_cmpuint(len, <=, r->elem_size);
    qtest_memread(pv->qts, pv_ring_slot(r, head), elem, len);
    pv_ring_set_cons(pv, r, pv_ring_next(r, head));
    return true;
}

uint32_t pv_ring_count(Pv *pv, const PvRing *r)
{
    return (pv_ring_prod(pv, r) - pv_ring_cons(pv, r)) &
           ((r->max_elems << 1) - 1);
}

static PvRing pv_dev_ring(Pv *pv, size_t info_off, const uint64_t *pages,
                          uint32_t elem_size)
{
    uint32_t n = qtest_readl(pv->qts, pv->dsr + info_off +
                             offsetof(PvrdmaRingPageInfo, num_pages));
    PvRing r = {
        .state = pages[0] + offsetof(PvrdmaRingState, rx),
        .pages = pages + 1,
        .max_elems = (n - 1) * PAGE / elem_size,
        .elem_size = elem_size,
    };

    g_assert(n >= 2 && n <= 4);
    return r;
}

PvRing pv_async_ring(Pv *pv)
{
    return pv_dev_ring(pv, offsetof(PvrdmaDsr, async_ring_pages),
                       pv->async_pages, sizeof(PvrdmaEqe));
}

PvRing pv_cqn_ring(Pv *pv)
{
    return pv_dev_ring(pv, offsetof(PvrdmaDsr, cq_ring_pages),
                       pv->cq_pages, sizeof(PvrdmaCqne));
}

uint32_t pv_events(Pv *pv, PvrdmaEqe *out, uint32_t max)
{
    PvRing r = pv_async_ring(pv);
    PvrdmaEqe e;
    uint32_t n = 0;

    while (pv_ring_get(pv, &r, &e, sizeof(e))) {
        pv_from_le(&e, pv_eqe_fields);
        if (n < max) {
            out[n] = e;
        }
        n++;
    }
    return n;
}

uint32_t pv_cq_notifications(Pv *pv, uint32_t *handles, uint32_t max)
{
    PvRing r = pv_cqn_ring(pv);
    PvrdmaCqne c;
    uint32_t n = 0;

    while (pv_ring_get(pv, &r, &c, sizeof(c))) {
        if (n < max) {
            handles[n] = le32_to_cpu(c.info);
        }
        n++;
    }
    return n;
}

bool pv_ring_wait(Pv *pv, const PvRing *r, uint32_t n)
{
    gint64 deadline = g_get_monotonic_time() + PV_WAIT_US;

    while (pv_ring_count(pv, r) < n) {
        if (g_get_monotonic_time() > deadline) {
            return false;
        }
        g_usleep(1000);
    }
    return true;
}

uint32_t pv_events_wait(Pv *pv, PvrdmaEqe *out, uint32_t max)
{
    PvRing r = pv_async_ring(pv);

    pv_ring_wait(pv, &r, 1);
    return pv_events(pv, out, max);
}

uint32_t pv_cq_notifications_wait(Pv *pv, uint32_t *handles, uint32_t max)
{
    PvRing r = pv_cqn_ring(pv);

    pv_ring_wait(pv, &r, 1);
    return pv_cq_notifications(pv, handles, max);
}

uint32_t pv_cmd_quiet(Pv *pv, void *req, size_t len, void *resp,
                      size_t resp_len)
{
    PvrdmaCmdReq full = { 0 };
    uint32_t err;

    g_assert(len <= sizeof(full));
    memcpy(&full, req, len);
    full.hdr.response = ++pv->cookie;
    pv_cmd_write(pv, &full, sizeof(full));
    wr(pv, PVRDMA_REG_REQUEST, 0);
    err = rd(pv, PVRDMA_REG_ERR);
    if (err == ERR_OK && resp) {
        pv_resp_read(pv, full.hdr.cmd, resp, resp_len);
    }
    return err;
}

uint32_t gid_bind_gid(Pv *pv, uint32_t index, const uint8_t *gid)
{
    PvrdmaCmdCreateBind c = { .hdr.cmd = PVRDMA_CMD_CREATE_BIND,
                              .index = index, .mtu = 1024, .vlan = 0xfff,
                              .gid_type = pv_caps(pv).gid_types };

    memcpy(c.new_gid, gid, 16);
    return CMD_NR(pv, c);
}

uint32_t dma_mr(Pv *pv, uint32_t pd, uint32_t access)
{
    PvrdmaCmdCreateMrResp r;

    g_assert_cmpuint(create_mr(pv, pd, PVRDMA_MR_FLAG_DMA, access, 0, 0, 0,
                               0, &r), ==, ERR_OK);
    g_assert_cmpuint(r.lkey, ==, r.rkey);
    return r.lkey;
}

PvCq *pv_cq_new(Pv *pv, uint32_t cqe)
{
    return pv_cq_new_state(pv, cqe, 0);
}

PvCq *pv_cq_new_state(Pv *pv, uint32_t cqe, uint64_t state)
{
    PvCq *cq = g_new0(PvCq, 1);

    cq->cqe = cqe;
    cq->npages = 1 + DIV_ROUND_UP(cqe * sizeof(PvrdmaCqe), PAGE);
    cq->pages = g_new0(uint64_t, cq->npages);
    cq->pages[0] = state;
    g_assert_cmpuint(create_cq_pages(pv, cqe, cq->npages,
                                     make_pdir(pv, cq->npages, cq->pages),
                                     &cq->handle), ==, ERR_OK);
    cq->ring = (PvRing) {
        .state = cq->pages[0] + offsetof(PvrdmaRingState, rx),
        .pages = cq->pages + 1,
        .max_elems = cqe,
        .elem_size = sizeof(PvrdmaCqe),
    };
    return cq;
}

bool pv_cq_poll(Pv *pv, PvCq *cq, PvrdmaCqe *cqe)
{
    if (!pv_ring_get(pv, &cq->ring, cqe, sizeof(*cqe))) {
        return false;
    }
    pv_cqe_from_le(cqe);
    return true;
}

bool pv_cq_poll_wait(Pv *pv, PvCq *cq, PvrdmaCqe *cqe)
{
    return pv_ring_wait(pv, &cq->ring, 1) && pv_cq_poll(pv, cq, cqe);
}

void pv_cq_db(Pv *pv, PvCq *cq, uint32_t flags)
{
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_CQ_OFFSET,
                   cq->handle | flags);
}

PvQp *pv_qp_new(Pv *pv, const QpSpec *q, uint8_t sq_sig_all,
                uint32_t access)
{
    PvQp *qp = g_new0(PvQp, 1);
    PvrdmaCmdCreateQp c = qp_cmd_pages(pv, q, &qp->pages);
    PvrdmaCmdCreateQpRespV2 r = { 0 };
    uint32_t send_wr = pow2ceil(MAX(q->send_wr, 1));
    uint32_t recv_wr = pow2ceil(MAX(q->recv_wr, 1));

    qp->npages = c.total_chunks;
    qp->send_chunks = c.send_chunks;
    c.sq_sig_all = sq_sig_all;
    c.access_flags = access;
    g_assert_cmpuint(CMD(pv, c, &r), ==, ERR_OK);
    qp->handle = r.qp_handle;
    qp->qpn = r.qpn;
    qp->type = q->type;
    qp->scq = q->scq;
    qp->rcq = q->rcq;
    qp->is_srq = q->is_srq;
    qp->max_send_sge = MAX(q->send_sge, 1);
    qp->max_recv_sge = MAX(q->recv_sge, 1);
    qp->sq = (PvRing) {
        .state = qp->pages[0] + offsetof(PvrdmaRingState, tx),
        .pages = qp->pages + 1,
        .max_elems = send_wr,
        .elem_size = wqe_bytes(sizeof(PvrdmaSqWqeHdr), q->send_sge),
    };
    qp->rq = (PvRing) {
        .state = qp->pages[0] + offsetof(PvrdmaRingState, rx),
        .pages = qp->pages + 1 + qp->send_chunks,
        .max_elems = recv_wr,
        .elem_size = wqe_bytes(sizeof(PvrdmaRqWqeHdr), q->recv_sge),
    };
    return qp;
}

/* @n SGEs, little-endian, at @buf */
static void pv_sges_put(uint8_t *buf, const PvrdmaSge *sge, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++, buf += sizeof(*sge)) {
        PvrdmaSge le = sge[i];

        pv_to_le(&le, pv_sge_fields);
        memcpy(buf, &le, sizeof(le));
    }
}

void pv_sq_put(Pv *pv, PvQp *qp, const PvrdmaSqWqeHdr *h,
               const PvrdmaSge *sge, uint32_t nsge)
{
    g_autofree uint8_t *buf = g_malloc0(qp->sq.elem_size);
    PvrdmaSqWqeHdr le = *h;

    g_assert_cmpuint(sizeof(*h) + nsge * sizeof(*sge), <=, qp->sq.elem_size);
    pv_sq_wqe_to_le(&le, qp->type);
    memcpy(buf, &le, sizeof(le));
    pv_sges_put(buf + sizeof(le), sge, nsge);
    pv_ring_put(pv, &qp->sq, buf, qp->sq.elem_size);
}

void pv_rq_put(Pv *pv, const PvRing *r, uint64_t wr_id, uint32_t num_sge,
               const PvrdmaSge *sge, uint32_t nsge)
{
    g_autofree uint8_t *buf = g_malloc0(r->elem_size);
    PvrdmaRqWqeHdr h = { .wr_id = wr_id, .num_sge = num_sge };
    uint32_t i;

    g_assert_cmpuint(sizeof(h) + nsge * sizeof(*sge), <=, r->elem_size);
    for (i = 0; i < nsge; i++) {
        h.total_len += sge[i].length;
    }
    pv_to_le(&h, pv_rq_wqe_fields);
    memcpy(buf, &h, sizeof(h));
    pv_sges_put(buf + sizeof(h), sge, nsge);
    pv_ring_put(pv, r, buf, r->elem_size);
}

void pv_qp_db(Pv *pv, PvQp *qp, uint32_t flags)
{
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_QP_OFFSET,
                   qp->handle | flags);
}

PvSrq *pv_srq_new(Pv *pv, uint32_t pd, uint32_t max_wr, uint32_t max_sge,
                  uint32_t limit)
{
    PvSrq *srq = g_new0(PvSrq, 1);
    uint32_t stride = wqe_bytes(sizeof(PvrdmaRqWqeHdr), max_sge);
    PvrdmaCmdCreateSrq c = {
        .hdr.cmd = PVRDMA_CMD_CREATE_SRQ, .pd_handle = pd,
        .attrs = { .max_wr = max_wr, .max_sge = max_sge,
                   .srq_limit = limit },
    };
    PvrdmaCmdCreateSrqResp r = { 0 };

    srq->max_wr = pow2ceil(max_wr);
    srq->max_sge = max_sge;
    srq->npages = 1 + DIV_ROUND_UP(srq->max_wr * stride, PAGE);
    srq->pages = g_new0(uint64_t, srq->npages);
    c.nchunks = srq->npages;
    c.pdir_dma = make_pdir(pv, srq->npages, srq->pages);
    g_assert_cmpuint(CMD(pv, c, &r), ==, ERR_OK);
    srq->handle = r.srqn;
    srq->ring = (PvRing) {
        .state = srq->pages[0] + offsetof(PvrdmaRingState, rx),
        .pages = srq->pages + 1,
        .max_elems = srq->max_wr,
        .elem_size = stride,
    };
    return srq;
}

void pv_srq_db(Pv *pv, PvSrq *srq)
{
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_SRQ_OFFSET,
                   srq->handle | PVRDMA_UAR_SRQ_RECV);
}

void pv_cq_free(PvCq *cq)
{
    g_free(cq->pages);
    g_free(cq);
}

void pv_qp_free(PvQp *qp)
{
    g_free(qp->pages);
    g_free(qp);
}

void pv_srq_free(PvSrq *srq)
{
    g_free(srq->pages);
    g_free(srq);
}
