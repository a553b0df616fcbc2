/*
 * QTest for the VMware paravirtual RDMA device (pvrdma).
 *
 * The tests drive the device the way the Linux vmw_pvrdma driver does:
 * PCI config, BAR registers, a device shared region and rings built in
 * guest memory, commands through the command slot, then the response, ERR
 * and ICR read back.  Every command has its success path and its error
 * paths; each defect class of the removed QEMU pvrdma has a named
 * regression test (/pvrdma/regression/...).
 *
 * With PVRDMA_QTEST_IBDEV (test lane 3, tests/hostvm/qtest-rxe.sh) the
 * device runs the ibverbs backend on a host RDMA device, and every object
 * the commands create is a host object too; the few checks that differ
 * there say why.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/host-utils.h"
#include "hw/pci/pci_regs.h"
#include "qobject/qnum.h"
#include "qobject/qstring.h"
#include "pvrdma-qtest.h"

/*
 * ibverbs: an address handle's source GID must be in the host device's
 * table, so the QPs that go to RTR use GID 1 = ::ffff:10.0.2.16, which the
 * lane's host has (rc_attrs() sends to ::ffff:10.0.2.15 there).
 */
static void bind_host_gid1(Pv *pv)
{
    static const uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 16 };

    if (pv_ibverbs()) {
        g_assert_cmpuint(gid_bind_gid(pv, 1, gid), ==, ERR_OK);
    }
}

/* Register and PCI tests */

static void test_pci_identity(void)
{
    Pv *pv = pv_start();

    g_assert_cmphex(qpci_config_readw(pv->dev, PCI_VENDOR_ID), ==, 0x15ad);
    g_assert_cmphex(qpci_config_readw(pv->dev, PCI_DEVICE_ID), ==, 0x0820);
    g_assert_cmphex(qpci_config_readw(pv->dev, PCI_CLASS_DEVICE), ==,
                    0x0280);
    g_assert_cmphex(qpci_config_readb(pv->dev, PCI_REVISION_ID), ==,
                    PVRDMA_REV_ID);
    g_assert_cmphex(qpci_config_readb(pv->dev, PCI_INTERRUPT_PIN), ==, 1);
    /* BAR0 and BAR1 must be MMIO (the driver refuses I/O), BAR2 64-bit. */
    g_assert_cmphex(qpci_config_readl(pv->dev, PCI_BASE_ADDRESS_0) &
                    PCI_BASE_ADDRESS_SPACE_IO, ==, 0);
    g_assert_cmphex(qpci_config_readl(pv->dev, PCI_BASE_ADDRESS_1) &
                    PCI_BASE_ADDRESS_SPACE_IO, ==, 0);
    g_assert_cmphex(qpci_config_readl(pv->dev, PCI_BASE_ADDRESS_2) &
                    PCI_BASE_ADDRESS_MEM_TYPE_MASK, ==,
                    PCI_BASE_ADDRESS_MEM_TYPE_64);
    g_assert_cmpuint(qpci_find_capability(pv->dev, PCI_CAP_ID_MSIX, 0), !=,
                     0);
    qpci_msix_enable(pv->dev);
    g_assert_cmpuint(qpci_msix_table_size(pv->dev), ==, PVRDMA_MSIX_VECTORS);
    pv_stop(pv);
}

static void test_registers(void)
{
    Pv *pv = pv_start();

    g_assert_cmpuint(rd(pv, PVRDMA_REG_VERSION), ==, PVRDMA_VERSION_QPHANDLE);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, 0);
    g_assert_cmphex(rd(pv, PVRDMA_REG_IMR), ==, 0xffffffff);
    g_assert_cmphex(rd(pv, PVRDMA_REG_ICR), ==, 0);
    /* The MAC registers start with function 0's MAC. */
    g_assert_cmphex(rd(pv, PVRDMA_REG_MACL), ==, 0x12005452);
    g_assert_cmphex(rd(pv, PVRDMA_REG_MACH), ==, 0x5634);
    wr(pv, PVRDMA_REG_MACL, 0x11223344);
    wr(pv, PVRDMA_REG_MACH, 0xaabbccdd);
    g_assert_cmphex(rd(pv, PVRDMA_REG_MACL), ==, 0x11223344);
    g_assert_cmphex(rd(pv, PVRDMA_REG_MACH), ==, 0xccdd);
    wr(pv, PVRDMA_REG_IMR, 0x5);
    g_assert_cmphex(rd(pv, PVRDMA_REG_IMR), ==, 0x5);
    /* Read-only and unknown registers keep their value / read as 0. */
    wr(pv, PVRDMA_REG_VERSION, 1);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_VERSION), ==, PVRDMA_VERSION_QPHANDLE);
    wr(pv, PVRDMA_REG_ERR, 7);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, 0);
    g_assert_cmphex(rd(pv, 0x100), ==, 0);
    wr(pv, 0x100, 0xdead);
    g_assert_cmphex(rd(pv, PVRDMA_REG_CTL), ==, 0);
    g_assert_cmphex(rd(pv, PVRDMA_REG_REQUEST), ==, 0);
    pv_stop(pv);
}

static void test_dsr_caps(void)
{
    Pv *pv = pv_start();
    PvrdmaDeviceCaps caps;

    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    caps = pv_caps(pv);
    g_assert_cmpuint(caps.mode, ==, PVRDMA_DEVICE_MODE_ROCE);
    g_assert_cmpuint(caps.gid_types, ==, PVRDMA_GID_TYPE_FLAG_ROCE_V2);
    g_assert_cmpuint(caps.phys_port_cnt, ==, 1);
    g_assert_true(is_power_of_2(caps.max_uar));
    g_assert_cmpuint(caps.gid_tbl_len, >=, 1);
    g_assert_cmpuint(caps.max_qp, ==, 1024);
    g_assert_cmpuint(caps.max_cq, ==, 1024);
    g_assert_cmpuint(caps.max_sge, ==, 32);
    g_assert_cmpuint(caps.max_srq, >, 0);
    g_assert_cmpuint(caps.max_pkeys, ==, 1);
    g_assert_cmpuint(caps.vendor_id, ==, 0x15ad);
    g_assert_cmpuint(caps.max_mr_size, ==, 1ull << 30);
    /* EUI-64 node GUID from the vmxnet3 MAC, big-endian. */
    g_assert_cmphex(be64_to_cpu(caps.node_guid), ==, 0x505400fffe123456ull);
    pv_stop(pv);
}

static void test_dsr_dev_caps_properties(void)
{
    Pv *pv = pv_start_args(",dev-caps-max-qp=64,dev-caps-max-sge=4,"
                           "dev-caps-max-srq=0,dev-caps-max-mr-size=65536");
    PvrdmaDeviceCaps caps;

    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    caps = pv_caps(pv);
    g_assert_cmpuint(caps.max_qp, ==, 64);
    g_assert_cmpuint(caps.max_sge, ==, 4);
    g_assert_cmpuint(caps.max_srq, ==, 0);
    g_assert_cmpuint(caps.max_mr_size, ==, 65536);
    pv_stop(pv);
}

static void test_dsr_old_driver(void)
{
    Pv *pv = pv_start();
    QpSpec q;
    PvrdmaCmdCreateQp c;
    PvrdmaCmdCreateQpResp r;

    /* A RoCE v1 driver gets RoCE v1 GIDs. */
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_ROCEV1, 4, 4), ==, 0);
    g_assert_cmpuint(pv_caps(pv).gid_types, ==, PVRDMA_GID_TYPE_FLAG_ROCE_V1);
    /* Version 19 gets the create_qp response without the handle field. */
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_PPN64, 4, 4), ==, 0);
    g_assert_cmpuint(pv_caps(pv).gid_types, ==, PVRDMA_GID_TYPE_FLAG_ROCE_V2);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    q = basic_qp(pv, PVRDMA_QPT_RC);
    c = qp_cmd(pv, &q);
    if (pv_ibverbs()) {
        /*
         * Such a driver takes the QP number for the handle; a host
         * device's QP numbers are not handles, so its QPs are refused.
         */
        g_assert_cmpuint(CMD(pv, c, &r), ==, EOPNOTSUPP);
    } else {
        g_assert_cmpuint(CMD(pv, c, &r), ==, ERR_OK);
        g_assert_cmpuint(r.qpn, >=, 2);
        g_assert_cmpuint(r.max_send_wr, ==, 16);
        g_assert_cmpuint(r.max_recv_wr, ==, 16);
        g_assert_cmpuint(r.max_send_sge, ==, 2);
    }
    /* Too old a driver: no capabilities, ERR set. */
    g_assert_cmpuint(pv_write_dsr(pv, 16, 4, 4), !=, 0);
    g_assert_cmpuint(pv_caps(pv).mode, ==, 0);
    g_assert_cmpuint(pv_caps(pv).max_qp, ==, 0);
    pv_stop(pv);
}

static void test_dsr_bad(void)
{
    Pv *pv = pv_start();
    PvrdmaDsr dsr = { 0 };

    /* Not in guest memory */
    wr(pv, PVRDMA_REG_DSRLOW, 0);
    wr(pv, PVRDMA_REG_DSRHIGH, 0x100);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    /* Command slot missing */
    pv->dsr = galloc(pv, PAGE);
    dsr.driver_version = PVRDMA_VERSION_QPHANDLE;
    pv_dsr_put(pv, pv->dsr, &dsr);
    wr(pv, PVRDMA_REG_DSRLOW, pv->dsr);
    wr(pv, PVRDMA_REG_DSRHIGH, 0);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    g_assert_cmpuint(pv_caps(pv).max_qp, ==, 0);
    /* A failed DSR leaves no device: ACTIVATE fails. */
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    /* Ring with a single page: no room for elements. */
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 1, 4), !=, 0);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 1), !=, 0);
    /* A good one still works afterwards. */
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    pv_stop(pv);
}

static void test_ctl(void)
{
    Pv *pv = pv_start();

    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_UNQUIESCE);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_UNQUIESCE);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, 0);
    wr(pv, PVRDMA_REG_CTL, 77);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_RESET);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, 0);
    g_assert_cmphex(rd(pv, PVRDMA_REG_IMR), ==, 0xffffffff);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_DSRLOW), ==, 0);
    pv_stop(pv);
}

static void test_msix_response(void)
{
    Pv *pv = pv_probe();
    PvrdmaCmdCreatePd c = { .hdr.cmd = PVRDMA_CMD_CREATE_PD };

    /* Vectors are masked after enable, so a notify shows as pending. */
    qpci_msix_enable(pv->dev);
    g_assert_false(qpci_msix_pending(pv->dev, PVRDMA_VECTOR_RESPONSE));
    pv_cmd_write(pv, &c, sizeof(c));
    wr(pv, PVRDMA_REG_REQUEST, 0);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, 0);
    g_assert_true(qpci_msix_pending(pv->dev, PVRDMA_VECTOR_RESPONSE));
    g_assert_false(qpci_msix_pending(pv->dev, PVRDMA_VECTOR_CQ));
    /* With MSI-X on, ICR is not used. */
    g_assert_cmphex(rd(pv, PVRDMA_REG_ICR), ==, 0);
    pv_stop(pv);
}

static void test_imr_masks_interrupt(void)
{
    Pv *pv = pv_probe();
    PvrdmaCmdCreatePd c = { .hdr.cmd = PVRDMA_CMD_CREATE_PD };

    wr(pv, PVRDMA_REG_IMR, ~0u);
    pv_cmd_write(pv, &c, sizeof(c));
    wr(pv, PVRDMA_REG_REQUEST, 0);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, 0);
    g_assert_cmphex(rd(pv, PVRDMA_REG_ICR), ==, 0);
    pv_stop(pv);
}

/* Commands */

static void test_cmd_query_port_pkey(void)
{
    Pv *pv = pv_probe();
    PvrdmaCmdQueryPort qp = { .hdr.cmd = PVRDMA_CMD_QUERY_PORT,
                              .port_num = 1 };
    PvrdmaCmdQueryPortResp pr;
    PvrdmaCmdQueryPkey qk = { .hdr.cmd = PVRDMA_CMD_QUERY_PKEY,
                              .port_num = 1 };
    PvrdmaCmdQueryPkeyResp kr;

    g_assert_cmpuint(CMD(pv, qp, &pr), ==, ERR_OK);
    g_assert_cmpuint(pr.attrs.state, ==, PVRDMA_PORT_ACTIVE);
    g_assert_cmpuint(pr.attrs.gid_tbl_len, ==, pv_caps(pv).gid_tbl_len);
    g_assert_cmpuint(pr.attrs.pkey_tbl_len, ==, 1);
    g_assert_cmpuint(pr.attrs.max_mtu, ==, PVRDMA_MTU_4096);
    g_assert_cmpuint(pr.attrs.active_mtu, ==, PVRDMA_MTU_1024);
    g_assert_cmpuint(pr.attrs.phys_state, ==, PVRDMA_PHYS_STATE_LINK_UP);
    g_assert_cmphex(pr.attrs.port_cap_flags & PVRDMA_PORT_CM_SUP, !=, 0);
    g_assert_cmpuint(CMD(pv, qk, &kr), ==, ERR_OK);
    g_assert_cmphex(kr.pkey, ==, 0xffff);

    qp.port_num = 2;
    g_assert_cmpuint(CMD_NR(pv, qp), !=, 0);
    qp.port_num = 0;
    g_assert_cmpuint(CMD_NR(pv, qp), !=, 0);
    qk.index = 1;
    g_assert_cmpuint(CMD_NR(pv, qk), !=, 0);
    qk.index = 0;
    qk.port_num = 3;
    g_assert_cmpuint(CMD_NR(pv, qk), !=, 0);
    pv_stop(pv);
}

static void test_cmd_uc(void)
{
    Pv *pv = pv_probe();
    uint64_t base = pv->uar.addr >> 12;
    uint32_t uc, uc2, pd, cq;

    g_assert_cmpuint(create_uc(pv, base + 1, &uc), ==, ERR_OK);
    g_assert_cmpuint(uc, !=, 0);
    g_assert_cmpuint(create_uc(pv, base + 2, &uc2), ==, ERR_OK);
    g_assert_cmpuint(uc2, !=, uc);
    /* Page 0 is the driver's, one context per page, pages of this BAR. */
    g_assert_cmpuint(create_uc(pv, base, &pd), !=, 0);
    g_assert_cmpuint(create_uc(pv, base + 1, &pd), !=, 0);
    g_assert_cmpuint(create_uc(pv, base + 512, &pd), !=, 0);
    g_assert_cmpuint(create_uc(pv, 0x1234, &pd), !=, 0);
    /* A context in use by a PD or CQ cannot go. */
    g_assert_cmpuint(create_pd(pv, uc, &pd), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_UC, uc), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, pd), ==, ERR_OK);
    {
        PvrdmaCmdCreateCq c = { .hdr.cmd = PVRDMA_CMD_CREATE_CQ,
                                .ctx_handle = uc2, .cqe = 4, .nchunks = 2,
                                .pdir_dma = make_ring(pv, 2) };
        PvrdmaCmdCreateCqResp r;

        g_assert_cmpuint(CMD(pv, c, &r), ==, ERR_OK);
        cq = r.cq_handle;
        g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_UC, uc2), !=, 0);
        g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_CQ, cq), ==, 0);
        /* A CQ of an unknown context */
        c.ctx_handle = 99;
        g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    }
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_UC, uc), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_UC, uc2), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_UC, uc), !=, 0);
    g_assert_cmpuint(create_pd(pv, uc, &pd), !=, 0);
    pv_stop(pv);
}

static void test_cmd_pd(void)
{
    Pv *pv = pv_probe();
    uint32_t pd, pd2, i, max_pd = 4;
    uint32_t handles[8];

    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    g_assert_cmpuint(create_pd(pv, 0, &pd2), ==, ERR_OK);
    g_assert_cmpuint(pd, !=, pd2);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, pd), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, pd), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, 0), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, 0xffffffff), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, pd2), ==, ERR_OK);
    pv_stop(pv);

    /* Exhaustion: max_pd handles, all below max_pd, then ENOMEM. */
    pv = pv_start_args(",dev-caps-max-pd=4");
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    for (i = 0; i < max_pd - 1; i++) {
        g_assert_cmpuint(create_pd(pv, 0, &handles[i]), ==, ERR_OK);
        g_assert_cmpuint(handles[i], <, max_pd);
    }
    g_assert_cmpuint(create_pd(pv, 0, &pd), !=, 0);
    /* Off-by-one: the handle equal to the table size is invalid. */
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, max_pd), !=, 0);
    pv_stop(pv);
}

static void test_cmd_mr(void)
{
    Pv *pv = pv_probe();
    const uint32_t lw = PVRDMA_ACCESS_LOCAL_WRITE;
    uint32_t pd, pd_busy;
    PvrdmaCmdCreateMrResp r, r2;
    uint64_t pdir3 = make_ring(pv, 3);

    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    /* User MR: 3 pages cover 0x1800 bytes starting at offset 0x800 */
    g_assert_cmpuint(create_mr(pv, pd, 0, lw | PVRDMA_ACCESS_REMOTE_WRITE,
                               0x7f0000000800ull, 0x2000, 3, pdir3, &r),
                     ==, ERR_OK);
    g_assert_cmpuint(r.lkey, !=, 0);
    g_assert_cmpuint(r.rkey, ==, r.lkey);
    /* DMA MR and fast-register MR */
    g_assert_cmpuint(create_mr(pv, pd, PVRDMA_MR_FLAG_DMA, lw, 0, 0, 0, 0,
                               &r2), ==, ERR_OK);
    g_assert_cmpuint(r2.mr_handle, !=, r.mr_handle);
    /* ibverbs: no fast registration in user space, no FRMR MRs */
    g_assert_cmpuint(create_mr(pv, pd, PVRDMA_MR_FLAG_FRMR, 0, 0, 0, 32, 0,
                               NULL), ==, pv_ibverbs() ? EINVAL : ERR_OK);
    g_assert_cmpuint(create_mr(pv, pd, PVRDMA_MR_FLAG_FRMR, 0, 0, 0, 4096, 0,
                               NULL), !=, 0);
    /* Errors */
    g_assert_cmpuint(create_mr(pv, pd, 0, lw, 0x1000, 0, 1, pdir3, NULL),
                     !=, 0);                              /* zero length */
    g_assert_cmpuint(create_mr(pv, pd, 0, lw, ~0ull - 0xfff, 0x2000, 2,
                               pdir3, NULL), !=, 0);     /* wraps */
    g_assert_cmpuint(create_mr(pv, pd, 0, lw, 0x1000, 2ull << 30, 524288,
                               pdir3, NULL), !=, 0);     /* > max_mr_size */
    g_assert_cmpuint(create_mr(pv, 77, 0, lw, 0x1000, 0x1000, 1, pdir3,
                               NULL), !=, 0);            /* bad PD */
    g_assert_cmpuint(create_mr(pv, pd, 0, PVRDMA_ACCESS_REMOTE_WRITE, 0x1000,
                               0x1000, 1, pdir3, NULL), !=, 0);
    g_assert_cmpuint(create_mr(pv, pd, 0, PVRDMA_ACCESS_ON_DEMAND, 0x1000,
                               0x1000, 1, pdir3, NULL), !=, 0);  /* no ODP */
    g_assert_cmpuint(create_mr(pv, pd, 0, 1u << 31, 0x1000, 0x1000, 1, pdir3,
                               NULL), !=, 0);            /* unknown access */
    /* Hints user space passes (relaxed ordering) are accepted. */
    g_assert_cmpuint(create_mr(pv, pd, 0, lw | (1u << 20), 0x1000, 0x1000, 1,
                               pdir3, NULL), ==, ERR_OK);
    g_assert_cmpuint(create_mr(pv, pd, 3, lw, 0x1000, 0x1000, 1, pdir3,
                               NULL), !=, 0);            /* DMA | FRMR */
    g_assert_cmpuint(create_mr(pv, pd, 0, lw, 0x1000, 0x1000, 1, 0x123,
                               NULL), !=, 0);            /* bad pdir */
    /* A PD with MRs cannot go; the MR can, once. */
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, pd), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_MR, r.mr_handle), ==, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_MR, r.mr_handle), !=, 0);
    g_assert_cmpuint(create_pd(pv, 0, &pd_busy), ==, ERR_OK);
    pv_stop(pv);
}

static void test_mr_page_budget(void)
{
    Pv *pv = pv_start_args(",max-mr-pages-total=4");
    uint32_t pd;

    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    g_assert_cmpuint(create_mr(pv, pd, 0, 0, 0x10000, 0x3000, 3,
                               make_ring(pv, 3), NULL), ==, ERR_OK);
    g_assert_cmpuint(create_mr(pv, pd, 0, 0, 0x10000, 0x2000, 2,
                               make_ring(pv, 2), NULL), !=, 0);
    g_assert_cmpuint(create_mr(pv, pd, 0, 0, 0x10000, 0x1000, 1,
                               make_ring(pv, 1), NULL), ==, ERR_OK);
    pv_stop(pv);
}

static void test_cmd_cq(void)
{
    Pv *pv = pv_probe();
    uint32_t cq, cq2;
    PvrdmaCmdResizeCq rs = { .hdr.cmd = PVRDMA_CMD_RESIZE_CQ };

    g_assert_cmpuint(create_cq(pv, 64, &cq), ==, ERR_OK);
    g_assert_cmpuint(create_cq(pv, 1, &cq2), ==, ERR_OK);
    g_assert_cmpuint(cq, !=, cq2);
    /* Not a power of two, zero, above max_cqe */
    g_assert_cmpuint(create_cq_pages(pv, 48, 2, make_ring(pv, 2), &cq2), !=,
                     0);
    g_assert_cmpuint(create_cq_pages(pv, 0, 2, make_ring(pv, 2), &cq2), !=, 0);
    g_assert_cmpuint(create_cq_pages(pv, 1 << 20, 2, make_ring(pv, 2), &cq2),
                     !=, 0);
    /* Entries that do not fit in the pages (page 0 is the ring state) */
    g_assert_cmpuint(create_cq_pages(pv, 128, 2, make_ring(pv, 2), &cq2), !=,
                     0);
    /* No element page */
    g_assert_cmpuint(create_cq_pages(pv, 1, 1, make_ring(pv, 1), &cq2), !=,
                     0);
    /* RESIZE_CQ is not supported: a clean error */
    rs.cq_handle = cq;
    rs.cqe = 128;
    g_assert_cmpuint(CMD_NR(pv, rs), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_CQ, cq), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_CQ, cq), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_CQ, 5000), !=, 0);
    pv_stop(pv);
}

static void test_cmd_qp_create(void)
{
    Pv *pv = pv_probe();
    QpSpec q = basic_qp(pv, PVRDMA_QPT_RC);
    uint32_t qpn, h, qpn2, h2, gsi, gh;
    PvrdmaCmdCreateQp c;

    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    g_assert_cmpuint(qpn, >=, 2);
    /* The soft backend numbers QPs by handle; a host device does not. */
    if (!pv_ibverbs()) {
        g_assert_cmpuint(h, ==, qpn);
    }
    g_assert_cmpuint(h, <, pv_caps(pv).max_qp);
    q.type = PVRDMA_QPT_UD;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), ==, ERR_OK);
    g_assert_cmpuint(qpn2, !=, qpn);
    /* The GSI QP is QP 1, and there is one. */
    q.type = PVRDMA_QPT_GSI;
    g_assert_cmpuint(create_qp(pv, &q, &gsi, &gh), ==, ERR_OK);
    g_assert_cmpuint(gsi, ==, 1);
    g_assert_cmpuint(create_qp(pv, &q, &gsi, &gh), !=, 0);
    /* UC, SMI and unknown types are refused */
    q.type = PVRDMA_QPT_UC;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), !=, 0);
    q.type = PVRDMA_QPT_SMI;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), !=, 0);
    q.type = 200;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), !=, 0);
    q.type = PVRDMA_QPT_RC;
    /* Bad PD / CQ / SRQ handles */
    q.pd = 99;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), !=, 0);
    q = basic_qp(pv, PVRDMA_QPT_RC);
    q.scq = 999;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), !=, 0);
    q.scq = q.rcq;
    q.is_srq = true;
    q.srq = 5;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), !=, 0);
    q.is_srq = false;
    /* Sizes above the limits */
    q.send_wr = 100000;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), !=, 0);
    q.send_wr = 16;
    q.recv_sge = 33;
    g_assert_cmpuint(create_qp(pv, &q, &qpn2, &h2), !=, 0);
    q.recv_sge = 2;
    /* Ring pages that cannot hold the rings */
    c = qp_cmd(pv, &q);
    c.send_chunks = 1;
    c.max_send_wr = 1024;
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    c = qp_cmd(pv, &q);
    c.send_chunks = c.total_chunks;
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    c = qp_cmd(pv, &q);
    c.total_chunks = c.send_chunks + 1;         /* no receive pages */
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    c = qp_cmd(pv, &q);
    c.send_chunks = 0;
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    c = qp_cmd(pv, &q);
    c.is_srq = 7;
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    /* CQ and PD in use by QPs cannot go; the QP can, once. */
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_CQ, q.scq), ==, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_QP, h), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_QP, h), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_QP, 0), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_QP, 1024), !=, 0);
    pv_stop(pv);
}

static void test_cmd_qp_context_isolation(void)
{
    Pv *pv = pv_probe();
    uint64_t base = pv->uar.addr >> 12;
    uint32_t uc, pd_user, qpn, h;
    QpSpec q = basic_qp(pv, PVRDMA_QPT_RC);     /* kernel CQ */

    g_assert_cmpuint(create_uc(pv, base + 1, &uc), ==, ERR_OK);
    g_assert_cmpuint(create_pd(pv, uc, &pd_user), ==, ERR_OK);
    /* A user PD with the kernel's CQ: refused. */
    q.pd = pd_user;
    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), !=, 0);
    pv_stop(pv);
}

static void test_cmd_qp_modify_rc(void)
{
    Pv *pv = pv_probe();
    QpSpec q = basic_qp(pv, PVRDMA_QPT_RC);
    PvrdmaQpAttr a = rc_attrs(), got;
    uint32_t qpn, h;

    bind_host_gid1(pv);
    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    got = query_qp(pv, h);
    g_assert_cmpuint(got.qp_state, ==, PVRDMA_QPS_RESET);
    g_assert_cmpuint(got.cap.max_send_wr, ==, 16);
    g_assert_cmpuint(got.cap.max_recv_sge, ==, 2);

    /* RESET -> RTR skips INIT: refused */
    a.qp_state = PVRDMA_QPS_RTR;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), !=, 0);
    /* RESET -> INIT needs PKEY_INDEX | PORT | ACCESS_FLAGS for RC */
    a.qp_state = PVRDMA_QPS_INIT;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_PORT, &a),
                     !=, 0);
    /* ... and must not carry attributes of later transitions */
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_PORT |
                               PVRDMA_QP_PKEY_INDEX | PVRDMA_QP_ACCESS_FLAGS |
                               PVRDMA_QP_SQ_PSN, &a), !=, 0);
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_PORT |
                               PVRDMA_QP_PKEY_INDEX | PVRDMA_QP_ACCESS_FLAGS,
                               &a), ==, ERR_OK);
    /* INIT -> RTR */
    a.qp_state = PVRDMA_QPS_RTR;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_AV |
                               PVRDMA_QP_PATH_MTU | PVRDMA_QP_DEST_QPN |
                               PVRDMA_QP_RQ_PSN, &a), !=, 0);
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_AV |
                               PVRDMA_QP_PATH_MTU | PVRDMA_QP_DEST_QPN |
                               PVRDMA_QP_RQ_PSN |
                               PVRDMA_QP_MAX_DEST_RD_ATOMIC |
                               PVRDMA_QP_MIN_RNR_TIMER, &a), ==, ERR_OK);
    /* RTR -> RTS */
    a.qp_state = PVRDMA_QPS_RTS;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_TIMEOUT |
                               PVRDMA_QP_RETRY_CNT | PVRDMA_QP_RNR_RETRY |
                               PVRDMA_QP_SQ_PSN | PVRDMA_QP_MAX_QP_RD_ATOMIC,
                               &a), ==, ERR_OK);

    /* QUERY_QP returns what was set, in the driver's layout. */
    got = query_qp(pv, h);
    g_assert_cmpuint(got.qp_state, ==, PVRDMA_QPS_RTS);
    g_assert_cmpuint(got.cur_qp_state, ==, PVRDMA_QPS_RTS);
    g_assert_cmphex(got.qp_access_flags, ==, a.qp_access_flags);
    g_assert_cmpuint(got.port_num, ==, 1);
    g_assert_cmpuint(got.path_mtu, ==, PVRDMA_MTU_1024);
    g_assert_cmphex(got.dest_qp_num, ==, 0x123456);
    g_assert_cmphex(got.rq_psn, ==, 0xabcdef);
    g_assert_cmphex(got.sq_psn, ==, 0x765432);
    g_assert_cmpuint(got.max_dest_rd_atomic, ==, 4);
    g_assert_cmpuint(got.max_rd_atomic, ==, 8);
    g_assert_cmpuint(got.min_rnr_timer, ==, 12);
    g_assert_cmpuint(got.timeout, ==, 14);
    g_assert_cmpuint(got.retry_cnt, ==, 7);
    g_assert_cmpuint(got.rnr_retry, ==, 6);
    g_assert_cmpuint(got.ah_attr.grh.sgid_index, ==, 1);
    g_assert_cmpuint(got.ah_attr.grh.hop_limit, ==, 64);
    g_assert_cmpuint(got.ah_attr.grh.traffic_class, ==, 3);
    g_assert_cmphex(got.ah_attr.grh.flow_label, ==, 0x12345);
    g_assert_cmpmem(got.ah_attr.grh.dgid.raw, 16, a.ah_attr.grh.dgid.raw, 16);
    g_assert_cmpmem(got.ah_attr.dmac, 6, a.ah_attr.dmac, 6);
    g_assert_cmpuint(got.cap.max_send_wr, ==, 16);

    /* RTS -> RTS with an allowed attribute, and a forbidden one */
    a.min_rnr_timer = 20;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_MIN_RNR_TIMER, &a), ==, 0);
    g_assert_cmpuint(query_qp(pv, h).min_rnr_timer, ==, 20);
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_DEST_QPN, &a), !=, 0);
    /* cur_qp_state must match */
    a.cur_qp_state = PVRDMA_QPS_INIT;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_CUR_STATE,
                               &a), !=, 0);
    /* RTS -> SQD -> RTS */
    a.qp_state = PVRDMA_QPS_SQD;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTS;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), ==, ERR_OK);
    /* -> ERR from anywhere, ERR -> RTS refused, ERR -> RESET allowed */
    a.qp_state = PVRDMA_QPS_ERR;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTS;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), !=, 0);
    a.qp_state = PVRDMA_QPS_RESET;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), ==, ERR_OK);
    got = query_qp(pv, h);
    g_assert_cmpuint(got.qp_state, ==, PVRDMA_QPS_RESET);
    g_assert_cmpuint(got.sq_psn, ==, 0);
    /* Invalid values */
    a.qp_state = 9;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), !=, 0);
    a.qp_state = PVRDMA_QPS_INIT;
    a.port_num = 2;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_PORT |
                               PVRDMA_QP_PKEY_INDEX | PVRDMA_QP_ACCESS_FLAGS,
                               &a), !=, 0);
    a.port_num = 1;
    a.pkey_index = 1;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_PORT |
                               PVRDMA_QP_PKEY_INDEX | PVRDMA_QP_ACCESS_FLAGS,
                               &a), !=, 0);
    a.pkey_index = 0;
    a.qp_access_flags = 0x40;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_PORT |
                               PVRDMA_QP_PKEY_INDEX | PVRDMA_QP_ACCESS_FLAGS,
                               &a), !=, 0);
    g_assert_cmpuint(modify_qp(pv, h, 1u << 25, &a), !=, 0);
    g_assert_cmpuint(modify_qp(pv, 999, PVRDMA_QP_STATE, &a), !=, 0);
    g_assert_cmpuint(query_qp(pv, h).qp_state, ==, PVRDMA_QPS_RESET);
    pv_stop(pv);
}

static void test_cmd_qp_modify_rc_ranges(void)
{
    Pv *pv = pv_probe();
    QpSpec q = basic_qp(pv, PVRDMA_QPT_RC);
    const uint32_t init_mask = PVRDMA_QP_STATE | PVRDMA_QP_PORT |
                               PVRDMA_QP_PKEY_INDEX | PVRDMA_QP_ACCESS_FLAGS;
    const uint32_t rtr_mask = PVRDMA_QP_STATE | PVRDMA_QP_AV |
                              PVRDMA_QP_PATH_MTU | PVRDMA_QP_DEST_QPN |
                              PVRDMA_QP_RQ_PSN | PVRDMA_QP_MAX_DEST_RD_ATOMIC |
                              PVRDMA_QP_MIN_RNR_TIMER;
    PvrdmaQpAttr a = rc_attrs();
    uint32_t qpn, h;

    bind_host_gid1(pv);
    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_INIT;
    g_assert_cmpuint(modify_qp(pv, h, init_mask, &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTR;
#define BAD_RTR(field, val) do {                                        \
        PvrdmaQpAttr b = a;                                             \
        b.field = (val);                                                \
        g_assert_cmpuint(modify_qp(pv, h, rtr_mask, &b), !=, 0);        \
    } while (0)
    BAD_RTR(path_mtu, 0);
    BAD_RTR(path_mtu, 6);
    BAD_RTR(dest_qp_num, 1u << 24);
    BAD_RTR(rq_psn, 1u << 24);
    BAD_RTR(max_dest_rd_atomic, 129);
    BAD_RTR(min_rnr_timer, 32);
    BAD_RTR(ah_attr.grh.sgid_index, 16);
    BAD_RTR(ah_attr.port_num, 3);
#undef BAD_RTR
    g_assert_cmpuint(query_qp(pv, h).qp_state, ==, PVRDMA_QPS_INIT);
    /* Alternate paths are not supported */
    g_assert_cmpuint(modify_qp(pv, h, rtr_mask | PVRDMA_QP_ALT_PATH, &a), !=,
                     0);
    g_assert_cmpuint(modify_qp(pv, h, rtr_mask, &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTS;
    a.timeout = 32;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_TIMEOUT |
                               PVRDMA_QP_RETRY_CNT | PVRDMA_QP_RNR_RETRY |
                               PVRDMA_QP_SQ_PSN | PVRDMA_QP_MAX_QP_RD_ATOMIC,
                               &a), !=, 0);
    a.timeout = 14;
    a.retry_cnt = 8;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_TIMEOUT |
                               PVRDMA_QP_RETRY_CNT | PVRDMA_QP_RNR_RETRY |
                               PVRDMA_QP_SQ_PSN | PVRDMA_QP_MAX_QP_RD_ATOMIC,
                               &a), !=, 0);
    pv_stop(pv);
}

static void test_cmd_qp_modify_ud_gsi(void)
{
    Pv *pv = pv_probe();
    QpSpec q = basic_qp(pv, PVRDMA_QPT_UD);
    PvrdmaQpAttr a = { 0 };
    uint32_t qpn, h, g, gh;

    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    q.type = PVRDMA_QPT_GSI;
    g_assert_cmpuint(create_qp(pv, &q, &g, &gh), ==, ERR_OK);
    /* UD: RESET->INIT needs PKEY_INDEX | PORT | QKEY */
    a.qp_state = PVRDMA_QPS_INIT;
    a.port_num = 1;
    a.qkey = 0x11111111;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_PORT |
                               PVRDMA_QP_PKEY_INDEX, &a), !=, 0);
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_PORT |
                               PVRDMA_QP_PKEY_INDEX | PVRDMA_QP_QKEY, &a),
                     ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTR;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTS;
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE, &a), !=, 0);
    g_assert_cmpuint(modify_qp(pv, h, PVRDMA_QP_STATE | PVRDMA_QP_SQ_PSN, &a),
                     ==, ERR_OK);
    g_assert_cmphex(query_qp(pv, h).qkey, ==, 0x11111111);
    /* GSI: RESET->INIT needs PKEY_INDEX | QKEY (as the kernel's MAD layer) */
    a.qp_state = PVRDMA_QPS_INIT;
    a.qkey = 0x80010000;
    g_assert_cmpuint(modify_qp(pv, gh, PVRDMA_QP_STATE | PVRDMA_QP_PKEY_INDEX |
                               PVRDMA_QP_QKEY, &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTR;
    g_assert_cmpuint(modify_qp(pv, gh, PVRDMA_QP_STATE, &a), ==, ERR_OK);
    a.qp_state = PVRDMA_QPS_RTS;
    g_assert_cmpuint(modify_qp(pv, gh, PVRDMA_QP_STATE | PVRDMA_QP_SQ_PSN,
                               &a), ==, ERR_OK);
    g_assert_cmpuint(query_qp(pv, gh).qp_state, ==, PVRDMA_QPS_RTS);
    pv_stop(pv);
}

static void test_cmd_srq(void)
{
    Pv *pv = pv_probe();
    uint32_t pd, srq, srq2, qpn, h;
    QpSpec q;
    PvrdmaCmdQuerySrq qs = { .hdr.cmd = PVRDMA_CMD_QUERY_SRQ };
    PvrdmaCmdQuerySrqResp r;
    PvrdmaCmdModifySrq ms = { .hdr.cmd = PVRDMA_CMD_MODIFY_SRQ };

    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    g_assert_cmpuint(create_srq(pv, pd, 100, 3, 10, &srq), ==, ERR_OK);
    /* QUERY_SRQ reports the ring size (rounded up) and the limit */
    qs.srq_handle = srq;
    g_assert_cmpuint(CMD(pv, qs, &r), ==, ERR_OK);
    g_assert_cmpuint(r.attrs.max_wr, ==, 128);
    g_assert_cmpuint(r.attrs.max_sge, ==, 3);
    g_assert_cmpuint(r.attrs.srq_limit, ==, 10);
    /* MODIFY_SRQ changes the limit (and is not QUERY_SRQ in disguise) */
    ms.srq_handle = srq;
    ms.attr_mask = PVRDMA_SRQ_LIMIT;
    ms.attrs.srq_limit = 20;
    g_assert_cmpuint(CMD_NR(pv, ms), ==, ERR_OK);
    g_assert_cmpuint(CMD(pv, qs, &r), ==, ERR_OK);
    g_assert_cmpuint(r.attrs.srq_limit, ==, 20);
    ms.attrs.srq_limit = 129;
    g_assert_cmpuint(CMD_NR(pv, ms), !=, 0);
    ms.attr_mask = PVRDMA_SRQ_MAX_WR;           /* resize: unsupported */
    ms.attrs.max_wr = 256;
    g_assert_cmpuint(CMD_NR(pv, ms), !=, 0);
    ms.attr_mask = 0x10;
    g_assert_cmpuint(CMD_NR(pv, ms), !=, 0);
    g_assert_cmpuint(CMD(pv, qs, &r), ==, ERR_OK);
    g_assert_cmpuint(r.attrs.srq_limit, ==, 20);
    g_assert_cmpuint(r.attrs.max_wr, ==, 128);
    /* Errors at create */
    g_assert_cmpuint(create_srq(pv, 99, 16, 1, 0, &srq2), !=, 0);
    g_assert_cmpuint(create_srq(pv, pd, 0, 1, 0, &srq2), !=, 0);
    g_assert_cmpuint(create_srq(pv, pd, 16, 0, 0, &srq2), !=, 0);
    g_assert_cmpuint(create_srq(pv, pd, 16, 100, 0, &srq2), !=, 0);
    g_assert_cmpuint(create_srq(pv, pd, 16, 1, 17, &srq2), !=, 0);
    g_assert_cmpuint(create_srq(pv, pd, 1 << 20, 1, 0, &srq2), !=, 0);
    /* A QP on the SRQ keeps it alive */
    q = basic_qp(pv, PVRDMA_QPT_RC);
    q.pd = pd;
    q.is_srq = true;
    q.srq = srq;
    q.recv_wr = q.recv_sge = 0;
    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    g_assert_cmpuint(query_qp(pv, h).cap.max_recv_wr, ==, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_SRQ, srq), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, pd), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_QP, h), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_SRQ, srq), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_SRQ, srq), !=, 0);
    qs.srq_handle = srq;
    g_assert_cmpuint(CMD_NR(pv, qs), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, pd), ==, ERR_OK);
    pv_stop(pv);
}

static void test_cmd_srq_disabled(void)
{
    Pv *pv = pv_start_args(",dev-caps-max-srq=0");
    uint32_t pd, srq;

    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    g_assert_cmpuint(create_srq(pv, pd, 16, 1, 0, &srq), !=, 0);
    pv_stop(pv);
}

static void test_cmd_bind(void)
{
    Pv *pv = pv_probe();
    const uint8_t v2 = PVRDMA_GID_TYPE_FLAG_ROCE_V2;

    g_assert_cmpuint(gid_bind(pv, 0, 0xfe, v2), ==, ERR_OK);
    g_assert_cmpuint(gid_bind(pv, 1, 0x11, v2), ==, ERR_OK);
    g_assert_cmpuint(gid_bind(pv, 15, 0x22, v2), ==, ERR_OK);
    g_assert_cmpuint(gid_bind(pv, 16, 0x22, v2), !=, 0);
    g_assert_cmpuint(gid_bind(pv, 2, 0x22, PVRDMA_GID_TYPE_FLAG_ROCE_V1), !=,
                     0);
    g_assert_cmpuint(gid_bind(pv, 2, 0x22, 7), !=, 0);
    g_assert_cmpuint(gid_unbind(pv, 1, 0x33), !=, 0);    /* another GID */
    g_assert_cmpuint(gid_unbind(pv, 1, 0x11), ==, ERR_OK);
    g_assert_cmpuint(gid_unbind(pv, 1, 0x11), !=, 0);    /* empty entry */
    g_assert_cmpuint(gid_unbind(pv, 99, 0x11), !=, 0);
    g_assert_cmpuint(gid_bind(pv, 0, 0xfd, v2), ==, ERR_OK); /* replace */
    g_assert_cmpuint(gid_unbind(pv, 0, 0xfe), !=, 0);
    g_assert_cmpuint(gid_unbind(pv, 0, 0xfd), ==, ERR_OK);
    pv_stop(pv);
}

static void test_cmd_unknown(void)
{
    Pv *pv = pv_probe();
    PvrdmaCmdHdr c = { .cmd = PVRDMA_CMD_MAX };

    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    c.cmd = 0x80000000;
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    c.cmd = 0xffffffff;
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    pv_stop(pv);
}

static uint32_t port_state(Pv *pv)
{
    PvrdmaCmdQueryPort c = { .hdr.cmd = PVRDMA_CMD_QUERY_PORT, .port_num = 1 };
    PvrdmaCmdQueryPortResp r;

    g_assert_cmpuint(CMD(pv, c, &r), ==, ERR_OK);
    return r.attrs.state;
}

static void set_link(Pv *pv, bool up)
{
    QDict *resp = qtest_qmp(pv->qts, "{'execute': 'set_link', 'arguments': "
                            "{'name': 'vmxnet3.0', 'up': %i}}", up);

    g_assert(!qdict_haskey(resp, "error"));
    qobject_unref(resp);
    qtest_clock_step(pv->qts, 300 * 1000 * 1000);
}

/* The port follows function 0's Ethernet link, with PORT_ERR/ACTIVE. */
static void test_port_link(void)
{
    Pv *pv = pv_probe();
    PvrdmaEqe ev[4];

    g_assert_cmpuint(port_state(pv), ==, PVRDMA_PORT_ACTIVE);
    set_link(pv, false);
    g_assert_cmphex(rd(pv, PVRDMA_REG_ICR) & PVRDMA_INTR_CAUSE_ASYNC, !=, 0);
    g_assert_cmpuint(port_state(pv), ==, PVRDMA_PORT_DOWN);
    g_assert_cmpuint(pv_events(pv, ev, 4), ==, 1);
    g_assert_cmpuint(ev[0].type, ==, PVRDMA_EVENT_PORT_ERR);
    g_assert_cmpuint(ev[0].info, ==, 1);
    set_link(pv, true);
    g_assert_cmpuint(port_state(pv), ==, PVRDMA_PORT_ACTIVE);
    g_assert_cmpuint(pv_events(pv, ev, 4), ==, 1);
    g_assert_cmpuint(ev[0].type, ==, PVRDMA_EVENT_PORT_ACTIVE);
    /* No change, no event. */
    qtest_clock_step(pv->qts, 1000 * 1000 * 1000);
    g_assert_cmpuint(pv_events(pv, ev, 4), ==, 0);
    pv_stop(pv);
}

/* Rings and slots must be guest RAM, never a BAR (the device's own). */
static void test_ring_in_bar(void)
{
    Pv *pv = pv_start();
    uint64_t pages[2] = { pv->regs.addr, 0 };
    uint32_t cq;

    /* The command slot inside the register BAR */
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    qtest_writeq(pv->qts, pv->dsr + offsetof(PvrdmaDsr, cmd_slot_dma),
                 pv->regs.addr);
    wr(pv, PVRDMA_REG_DSRHIGH, pv->dsr >> 32);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    /* A CQ whose ring state page is the register BAR */
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    wr(pv, PVRDMA_REG_IMR, 0);
    g_assert_cmpuint(create_cq_pages(pv, 4, 2, make_pdir(pv, 2, pages), &cq),
                     !=, 0);
    pv_stop(pv);
}

/* Ordering abuse, reset and teardown */

static void test_order_second_dsr(void)
{
    Pv *pv = pv_probe();
    uint32_t pd, pd2;

    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    /* A second DSR replaces the first and drops its objects. */
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_PD, pd), !=, 0);
    g_assert_cmpuint(create_pd(pv, 0, &pd2), ==, ERR_OK);
    pv_stop(pv);
}

/* A little of everything, to be torn down by a reset. */
static void populate(Pv *pv)
{
    QpSpec q = basic_qp(pv, PVRDMA_QPT_RC);
    uint32_t qpn, h, srq, uc;

    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    q.type = PVRDMA_QPT_GSI;
    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    g_assert_cmpuint(create_srq(pv, q.pd, 16, 1, 0, &srq), ==, ERR_OK);
    g_assert_cmpuint(create_mr(pv, q.pd, 0, 0, 0x1000, 0x2000, 2,
                               make_ring(pv, 2), NULL), ==, ERR_OK);
    g_assert_cmpuint(create_uc(pv, (pv->uar.addr >> 12) + 3, &uc), ==, 0);
    g_assert_cmpuint(gid_bind(pv, 0, 0xfe, PVRDMA_GID_TYPE_FLAG_ROCE_V2), ==,
                     0);
}

static void test_order_reset(void)
{
    Pv *pv = pv_probe();
    PvrdmaCmdHdr c = { .cmd = PVRDMA_CMD_CREATE_PD };
    uint32_t pd;

    populate(pv);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_RESET);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), ==, 0);
    /* Commands after RESET fail until a new DSR arrives. */
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    g_assert_cmpuint(pd, ==, 1);        /* the old PDs are gone */
    populate(pv);
    pv_stop(pv);
}

static void test_order_system_reset(void)
{
    Pv *pv = pv_probe();
    PvrdmaCmdHdr c = { .cmd = PVRDMA_CMD_CREATE_PD };

    populate(pv);
    qtest_system_reset(pv->qts);
    /* After a system reset BARs need to be assigned again. */
    qpci_device_enable(pv->dev);
    pv->regs = qpci_iomap(pv->dev, PVRDMA_BAR_REGS, NULL);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_DSRLOW), ==, 0);
    g_assert_cmphex(rd(pv, PVRDMA_REG_IMR), ==, 0xffffffff);
    pv_cmd_write(pv, &c, sizeof(c));
    wr(pv, PVRDMA_REG_REQUEST, 0);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    pv_stop(pv);
}

static void test_order_hot_unplug(void)
{
    Pv *pv = pv_probe();

    populate(pv);
    /* Unplug with live objects: everything is released (ASan/LSan run). */
    qpci_unplug_acpi_device_test(pv->qts, "rdma", SLOT);
    pv_stop(pv);
}

static void test_order_doorbells(void)
{
    Pv *pv = pv_start();
    QpSpec q;
    uint32_t qpn, h;

    /* Doorbells before any DSR, for unknown and destroyed objects. */
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_QP_OFFSET,
                   5 | PVRDMA_UAR_QP_SEND);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    q = basic_qp(pv, PVRDMA_QPT_RC);
    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_QP, h), ==, ERR_OK);
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_QP_OFFSET,
                   h | PVRDMA_UAR_QP_SEND);
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_QP_OFFSET,
                   0xffffff | PVRDMA_UAR_QP_RECV);
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_CQ_OFFSET,
                   0xffffff | PVRDMA_UAR_CQ_ARM);
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_CQ_OFFSET,
                   q.scq | PVRDMA_UAR_CQ_ARM | PVRDMA_UAR_CQ_POLL);
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_SRQ_OFFSET,
                   77 | PVRDMA_UAR_SRQ_RECV);
    qpci_io_writel(pv->dev, pv->uar, 0x800, 1);
    qpci_io_writel(pv->dev, pv->uar, PVRDMA_UAR_PAGE_SIZE * 511 + 4, 1);
    /* The device still answers. */
    g_assert_cmpuint(rd(pv, PVRDMA_REG_VERSION), ==, PVRDMA_VERSION_QPHANDLE);
    pv_stop(pv);
}

/* QMP: query-pvrdma and RDMA_GID_STATUS_CHANGED */

/* The entry for guest GID @index in query-pvrdma's answer, or NULL. */
static QDict *query_gid(QList *gids, uint32_t index)
{
    for (const QListEntry *e = qlist_first(gids); e; e = qlist_next(e)) {
        QDict *g = qobject_to(QDict, qlist_entry_obj(e));

        if (qdict_get_int(g, "index") == index) {
            return g;
        }
    }
    return NULL;
}

static void test_qmp_gids_and_counts(void)
{
    /* ::ffff:10.0.2.15: a GID the lane-3 host holds (index 0 in its table) */
    static const uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 };
    Pv *pv = pv_probe();
    QDict *resp, *info, *g, *ev;
    QList *list;
    uint32_t pd, uc;
    uint64_t iid;

    g_assert_cmpuint(create_uc(pv, (pv->uar.addr >> 12) + 1, &uc), ==,
                     ERR_OK);
    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    g_assert_cmpuint(gid_bind_gid(pv, 3, gid), ==, ERR_OK);
    resp = qtest_qmp(pv->qts, "{'execute': 'query-pvrdma'}");
    list = qdict_get_qlist(resp, "return");
    g_assert_cmpint(qlist_size(list), ==, 1);
    info = qobject_to(QDict, qlist_peek(list));
    g_assert_cmpstr(qdict_get_str(info, "qom-path"), ==,
                    "/machine/peripheral/rdma");
    g_assert_cmpstr(qdict_get_str(info, "backend"), ==,
                    pv_ibverbs() ? "ibverbs" : "soft");
    g_assert_cmpint(qdict_get_int(info, "driver-version"), ==,
                    PVRDMA_VERSION_QPHANDLE);
    g_assert_cmpint(qdict_get_int(info, "pds"), ==, 1);
    g_assert_cmpint(qdict_get_int(info, "qps"), ==, 0);
    /* "ucs" was its name before QAPI review; "UC" is also a QP type. */
    g_assert_cmpint(qdict_get_int(info, "user-contexts"), ==, 1);
    g_assert_false(qdict_haskey(info, "ucs"));
    /* The debug counters are there by default (-compat hides them). */
    g_assert_true(qdict_haskey(info, "work-bytes-max"));
    g = query_gid(qdict_get_qlist(info, "gids"), 3);
    g_assert_nonnull(g);
    g_assert_cmpstr(qdict_get_str(g, "gid"), ==, "::ffff:10.0.2.15");
    /* Only the ibverbs backend has a host table; the lane's has the GID. */
    g_assert_cmpint(qdict_haskey(g, "host-index"), ==, pv_ibverbs());
    qobject_unref(resp);

    if (pv_ibverbs()) {
        /* What libvirt reads: the GID's bytes 8-15 in host byte order. */
        memcpy(&iid, gid + 8, 8);
        ev = qtest_qmp_eventwait_ref(pv->qts, "RDMA_GID_STATUS_CHANGED");
        g = qdict_get_qdict(ev, "data");
        g_assert_cmpstr(qdict_get_str(g, "netdev"), ==,
                        g_getenv("PVRDMA_QTEST_NETDEV"));
        g_assert_true(qdict_get_bool(g, "gid-status"));
        g_assert_cmpuint(qnum_get_uint(qobject_to(QNum,
                         qdict_get(g, "subnet-prefix"))), ==, 0);
        g_assert_cmpuint(qnum_get_uint(qobject_to(QNum,
                         qdict_get(g, "interface-id"))), ==, iid);
        qobject_unref(ev);
        g_assert_cmpuint(gid_unbind_gid(pv, 3, gid), ==, ERR_OK);
        ev = qtest_qmp_eventwait_ref(pv->qts, "RDMA_GID_STATUS_CHANGED");
        g_assert_false(qdict_get_bool(qdict_get_qdict(ev, "data"),
                                      "gid-status"));
        qobject_unref(ev);
    } else {
        /* No netdev: no host addresses to manage, no event. */
        g_assert_null(qtest_qmp_event_ref(pv->qts,
                                          "RDMA_GID_STATUS_CHANGED"));
    }
    pv_stop(pv);
}

/* HMP info pvrdma: the same facts as query-pvrdma, for a person. */
static void test_hmp_info(void)
{
    static const uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 };
    Pv *pv = pv_start();
    g_autofree char *before = qtest_hmp(pv->qts, "info pvrdma");
    g_autofree char *after = NULL;
    g_autofree char *want = NULL;
    uint32_t pd;

    g_assert_nonnull(strstr(before, "/machine/peripheral/rdma: backend "));
    g_assert_nonnull(strstr(before, "no guest driver"));
    g_assert_nonnull(strstr(before, "GIDs: none"));
    pv_load(pv);
    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    g_assert_cmpuint(gid_bind_gid(pv, 3, gid), ==, ERR_OK);
    after = qtest_hmp(pv->qts, "info pvrdma");
    want = g_strdup_printf("guest driver version %u",
                           PVRDMA_VERSION_QPHANDLE);
    g_assert_nonnull(strstr(after, want));
    g_assert_nonnull(strstr(after, "      3  ::ffff:10.0.2.15"));
    g_assert_nonnull(strstr(after, "in use: 0 user contexts, 1 PD, 0 CQ, "
                            "0 QP, 0 SRQ, 0 MR\r\n"));
    g_assert_nonnull(strstr(after, "MR pages: 0 of "));
    g_assert_cmpint(!!strstr(after, "host queue entries: "), ==,
                    pv_ibverbs());
    pv_stop(pv);
}

/* The entity of query-qmp-schema's answer @schema named @name. */
static QDict *schema_entity(QList *schema, const char *name)
{
    for (const QListEntry *e = qlist_first(schema); e; e = qlist_next(e)) {
        QDict *d = qobject_to(QDict, qlist_entry_obj(e));

        if (!strcmp(qdict_get_str(d, "name"), name)) {
            return d;
        }
    }
    g_error("query-qmp-schema has no entity %s", name);
}

/* Member @name of object type @obj (a schema entity), or NULL. */
static QDict *schema_member(QDict *obj, const char *name)
{
    QList *members = qdict_get_qlist(obj, "members");

    for (const QListEntry *e = qlist_first(members); e; e = qlist_next(e)) {
        QDict *m = qobject_to(QDict, qlist_entry_obj(e));

        if (!strcmp(qdict_get_str(m, "name"), name)) {
            return m;
        }
    }
    return NULL;
}

/* The values of the enum type of member @name of @obj, as "a,b,c". */
static char *schema_enum_values(QList *schema, QDict *obj, const char *name)
{
    QDict *m = schema_member(obj, name);
    QDict *t = schema_entity(schema, qdict_get_str(m, "type"));
    GString *out = g_string_new("");
    QList *values;

    g_assert_cmpstr(qdict_get_str(t, "meta-type"), ==, "enum");
    values = qdict_get_qlist(t, "members");
    for (const QListEntry *e = qlist_first(values); e; e = qlist_next(e)) {
        QDict *v = qobject_to(QDict, qlist_entry_obj(e));

        g_string_append_printf(out, "%s%s", out->len ? "," : "",
                               qdict_get_str(v, "name"));
    }
    return g_string_free(out, false);
}

/* Whether member @name of @obj has the feature "unstable". */
static bool schema_unstable(QDict *obj, const char *name)
{
    QDict *m = schema_member(obj, name);

    g_assert_nonnull(m);
    if (!qdict_haskey(m, "features")) {
        return false;
    }
    for (const QListEntry *e = qlist_first(qdict_get_qlist(m, "features"));
         e; e = qlist_next(e)) {
        QString *f = qobject_to(QString, qlist_entry_obj(e));

        if (!strcmp(qstring_get_str(f), "unstable")) {
            return true;
        }
    }
    return false;
}

/*
 * query-pvrdma's schema as management reads it (query-qmp-schema): the
 * backend and the rdmacm-mux state are enums, not free text, and exactly
 * the debug counters are unstable.
 */
static void test_qmp_schema(void)
{
    static const char *const unstable[] = {
        "host-queue-entries", "host-queue-entries-max", "map-runs",
        "map-runs-max", "map-runs-per-mr", "work-bytes-max",
    };
    static const char *const stable[] = {
        "qom-path", "backend", "gids", "pds", "cqs", "qps", "srqs", "mrs",
        "user-contexts", "mr-pages", "mr-pages-max", "roce",
    };
    QTestState *qts = qtest_init("-M none");
    QDict *resp = qtest_qmp(qts, "{'execute': 'query-qmp-schema'}");
    QList *schema = qdict_get_qlist(resp, "return");
    QDict *cmd = schema_entity(schema, "query-pvrdma");
    QDict *list = schema_entity(schema, qdict_get_str(cmd, "ret-type"));
    QDict *info = schema_entity(schema,
                                qdict_get_str(list, "element-type"));
    QDict *gids = schema_entity(schema, qdict_get_str(
                                schema_member(info, "gids"), "type"));
    QDict *gid = schema_entity(schema,
                               qdict_get_str(gids, "element-type"));
    g_autofree char *backends = schema_enum_values(schema, info, "backend");
    g_autofree char *mux = schema_enum_values(schema, gid, "mux");

    g_assert_cmpstr(backends, ==, "soft,ibverbs");
    g_assert_cmpstr(mux, ==, "held,pending,refused,unregistered");
    g_assert_cmpstr(qdict_get_str(schema_member(gid, "mux-error"), "type"),
                    ==, "str");
    for (int i = 0; i < ARRAY_SIZE(unstable); i++) {
        g_assert_true(schema_unstable(info, unstable[i]));
    }
    for (int i = 0; i < ARRAY_SIZE(stable); i++) {
        g_assert_false(schema_unstable(info, stable[i]));
    }
    g_assert_null(schema_member(info, "ucs"));
    qobject_unref(resp);
    qtest_quit(qts);
}

/*
 * -compat unstable-output=hide: management that wants only the stable
 * interface does not see the debug counters, and still sees the rest.
 */
static void test_qmp_unstable_hidden(void)
{
    Pv *pv = pv_start_args(" -compat unstable-output=hide");
    QDict *resp = qtest_qmp(pv->qts, "{'execute': 'query-pvrdma'}");
    QDict *info = qobject_to(QDict,
                             qlist_peek(qdict_get_qlist(resp, "return")));

    g_assert_true(qdict_haskey(info, "user-contexts"));
    g_assert_true(qdict_haskey(info, "mr-pages-max"));
    g_assert_false(qdict_haskey(info, "work-bytes-max"));
    g_assert_false(qdict_haskey(info, "host-queue-entries"));
    g_assert_false(qdict_haskey(info, "map-runs"));
    qobject_unref(resp);
    pv_stop(pv);
}

/*
 * What management was told: the GIDs it holds after replaying the
 * RDMA_GID_STATUS_CHANGED events received so far, checking that each
 * adds a GID it does not hold or removes one it does.  Returns how many
 * events there were.
 */
typedef struct GidMirror {
    uint8_t gid[64][16];
    unsigned n;
} GidMirror;

static unsigned gid_mirror_drain(Pv *pv, GidMirror *m)
{
    unsigned events = 0;
    QDict *ev;

    /* Events sent before the command's answer arrive before it. */
    qobject_unref(qtest_qmp(pv->qts, "{'execute': 'query-status'}"));
    while ((ev = qtest_qmp_event_ref(pv->qts, "RDMA_GID_STATUS_CHANGED"))) {
        QDict *d = qdict_get_qdict(ev, "data");
        uint64_t prefix = qnum_get_uint(qobject_to(QNum,
                                        qdict_get(d, "subnet-prefix")));
        uint64_t iid = qnum_get_uint(qobject_to(QNum,
                                     qdict_get(d, "interface-id")));
        uint8_t gid[16];
        unsigned i;

        memcpy(gid, &prefix, 8);
        memcpy(gid + 8, &iid, 8);
        for (i = 0; i < m->n && memcmp(m->gid[i], gid, 16); i++) {
            /* find it */
        }
        if (qdict_get_bool(d, "gid-status")) {
            g_assert_cmpuint(i, ==, m->n);          /* not held yet */
            g_assert_cmpuint(m->n, <, G_N_ELEMENTS(m->gid));
            memcpy(m->gid[m->n++], gid, 16);
        } else {
            g_assert_cmpuint(i, <, m->n);           /* held */
            memmove(m->gid[i], m->gid[i + 1], (--m->n - i) * 16);
        }
        qobject_unref(ev);
        events++;
    }
    return events;
}

static bool gid_mirror_has(const GidMirror *m, const uint8_t *gid)
{
    for (unsigned i = 0; i < m->n; i++) {
        if (!memcmp(m->gid[i], gid, 16)) {
            return true;
        }
    }
    return false;
}

/* Let virtual time pass until no more events come. */
static void gid_mirror_settle(Pv *pv, GidMirror *m)
{
    for (int quiet = 0; quiet < 50; quiet++) {
        qtest_clock_step(pv->qts, 100 * 1000 * 1000);
        if (gid_mirror_drain(pv, m)) {
            quiet = 0;
        }
    }
}

/* AUDIT 6: replacing a GID must announce the removal of the old one. */
static void test_gid_replace_announces_removal(void)
{
    static const uint8_t a[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 };
    static const uint8_t b[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 2, 16 };
    GidMirror m = { .n = 0 };
    Pv *pv;

    if (!pv_ibverbs()) {
        g_test_skip("GID events need netdev=, i.e. the ibverbs backend");
        return;
    }
    pv = pv_probe();
    g_assert_cmpuint(gid_bind_gid(pv, 0, a), ==, ERR_OK);
    g_assert_cmpuint(gid_mirror_drain(pv, &m), ==, 1);
    g_assert_true(gid_mirror_has(&m, a));
    g_assert_cmpuint(gid_bind_gid(pv, 0, b), ==, ERR_OK);     /* replace */
    g_assert_cmpuint(gid_mirror_drain(pv, &m), ==, 2);
    g_assert_false(gid_mirror_has(&m, a));
    g_assert_true(gid_mirror_has(&m, b));
    g_assert_cmpuint(m.n, ==, 1);
    /* Unloading the driver (a reset) takes b away too. */
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_RESET);
    gid_mirror_drain(pv, &m);
    g_assert_cmpuint(m.n, ==, 0);
    pv_stop(pv);
}

/*
 * AUDIT 6: a guest rebinding in a loop gets a bounded number of events
 * (a burst of 32 before virtual time passes, docs/pvrdma.txt 3.1.1) and
 * management still ends up holding exactly the table.
 */
static void test_gid_event_flood(void)
{
    uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 3, 0 };
    uint8_t last[4][16];
    GidMirror m = { .n = 0 };
    Pv *pv;

    if (!pv_ibverbs()) {
        g_test_skip("GID events need netdev=, i.e. the ibverbs backend");
        return;
    }
    pv = pv_probe();
    for (unsigned i = 0; i < 400; i++) {
        gid[15] = 1 + i % 101;
        g_assert_cmpuint(gid_bind_gid(pv, i % 4, gid), ==, ERR_OK);
        memcpy(last[i % 4], gid, 16);
    }
    g_assert_cmpuint(gid_mirror_drain(pv, &m), <=, 32);
    gid_mirror_settle(pv, &m);
    g_assert_cmpuint(m.n, ==, 4);
    for (unsigned i = 0; i < 4; i++) {
        g_assert_true(gid_mirror_has(&m, last[i]));
    }
    for (unsigned i = 0; i < 4; i++) {
        g_assert_cmpuint(gid_unbind_gid(pv, i, last[i]), ==, ERR_OK);
    }
    gid_mirror_settle(pv, &m);
    g_assert_cmpuint(m.n, ==, 0);
    pv_stop(pv);
}

/*
 * AUDIT 8: the pages of a ring must differ.  A CQ of 32 KiB of CQEs whose
 * page list names one guest page eight times, and a QP whose send pages
 * repeat its receive pages, are refused; with distinct pages they are not.
 */
static void test_ring_pages_repeated(void)
{
    Pv *pv = pv_probe();
    uint64_t pages[9] = { 0 };
    QpSpec q = { .type = PVRDMA_QPT_RC, .send_wr = 16, .recv_wr = 16,
                 .send_sge = 1, .recv_sge = 1 };
    g_autofree uint64_t *p = NULL;
    PvrdmaCmdCreateQp c;
    PvrdmaCmdCreateQpRespV2 r;
    uint32_t cq, qpn, qp;

    pages[1] = galloc(pv, PAGE);
    for (int i = 2; i < 9; i++) {
        pages[i] = pages[1];
    }
    g_assert_cmpuint(create_cq_pages(pv, 512, 9, make_pdir(pv, 9, pages), &cq),
                     !=, ERR_OK);
    memset(pages, 0, sizeof(pages));
    g_assert_cmpuint(create_cq_pages(pv, 512, 9, make_pdir(pv, 9, pages), &cq),
                     ==, ERR_OK);

    g_assert_cmpuint(create_pd(pv, 0, &q.pd), ==, ERR_OK);
    q.scq = q.rcq = cq;
    c = qp_cmd_pages(pv, &q, &p);
    p[c.total_chunks - 1] = p[1];   /* a receive page is a send page */
    c.pdir_dma = make_pdir(pv, c.total_chunks, p);
    g_assert_cmpuint(CMD(pv, c, &r), !=, ERR_OK);
    g_assert_cmpuint(create_qp(pv, &q, &qpn, &qp), ==, ERR_OK);
    pv_stop(pv);
}

/*
 * AUDIT 4: the mappings (VMAs) that alias MR pages for the host device are
 * bounded across all MRs.  Each MR alternates two guest pages over 16384
 * entries, 16384 runs, the most one MR may have; main took any number of
 * them, up to the process's vm.max_map_count.
 */
static uint32_t runs_mr(Pv *pv, uint32_t pd, uint64_t dir)
{
    PvrdmaCmdCreateMrResp r;

    return create_mr(pv, pd, 0, PVRDMA_ACCESS_LOCAL_WRITE, 0x10000000,
                     16384ull * PAGE, 16384, dir, &r);
}

static void test_ibverbs_map_runs_device_wide(void)
{
    Pv *pv;
    uint64_t dir, table, p[2];
    uint32_t pd, ok = 0;
    QDict *resp, *info;

    if (!pv_ibverbs()) {
        g_test_skip("host mappings are the ibverbs backend's");
        return;
    }
    pv = pv_probe();
    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    dir = galloc(pv, PAGE);
    table = galloc(pv, PAGE);
    p[0] = galloc(pv, PAGE);
    galloc(pv, PAGE);                       /* keeps the two apart */
    p[1] = galloc(pv, PAGE);
    for (int i = 0; i < 512; i++) {
        qtest_writeq(pv->qts, table + i * 8, p[i & 1]);
    }
    for (int t = 0; t < 32; t++) {
        qtest_writeq(pv->qts, dir + t * 8, table);
    }
    while (ok < 8 && runs_mr(pv, pd, dir) == ERR_OK) {
        ok++;
    }
    g_assert_cmpuint(ok, ==, 2);
    resp = qtest_qmp(pv->qts, "{'execute': 'query-pvrdma'}");
    info = qobject_to(QDict, qlist_peek(qdict_get_qlist(resp, "return")));
    g_assert_cmpint(qdict_get_int(info, "map-runs"), ==, 32768);
    g_assert_cmpint(qdict_get_int(info, "map-runs-max"), ==, 32768);
    g_assert_cmpint(qdict_get_int(info, "mrs"), ==, 2);
    qobject_unref(resp);
    pv_stop(pv);
}

/*
 * AUDIT 8: the host queue entries of one device are bounded (2^20, shown
 * by query-pvrdma).  QPs of 4096 send and 4096 receive WRs, on rings of
 * distinct pages (some 400 KiB of guest RAM each), are accepted until
 * the bound and then refused; main took as many as the guest asked for.
 */
static void test_ibverbs_host_queue_budget(void)
{
    QpSpec q;
    Pv *pv;
    QDict *resp, *info;
    uint32_t qpn, h, n = 0;
    int64_t used, max;

    if (!pv_ibverbs()) {
        g_test_skip("host queues are the ibverbs backend's");
        return;
    }
    pv = pv_probe();
    q = basic_qp(pv, PVRDMA_QPT_RC);        /* a CQ of 64: 256 host CQEs */
    q.send_wr = q.recv_wr = 4096;
    q.send_sge = q.recv_sge = 1;
    while (n < 140 && create_qp(pv, &q, &qpn, &h) == ERR_OK) {
        n++;
    }
    g_assert_cmpuint(n, ==, ((1 << 20) - 256) / 8192);
    resp = qtest_qmp(pv->qts, "{'execute': 'query-pvrdma'}");
    info = qobject_to(QDict, qlist_peek(qdict_get_qlist(resp, "return")));
    g_assert_true(qdict_haskey(info, "host-queue-entries-max"));
    used = qdict_get_int(info, "host-queue-entries");
    max = qdict_get_int(info, "host-queue-entries-max");
    g_assert_cmpint(max, ==, 1 << 20);
    g_assert_cmpint(used, ==, 256 + (int64_t)n * 8192);
    qobject_unref(resp);
    pv_stop(pv);
}

/*
 * What rdmacm-mux said of guest GID @index (query-pvrdma), once known:
 * its "mux" member, then ": " and its "mux-error" if it has one.
 */
static char *gid_mux_state(Pv *pv, uint32_t index)
{
    for (int tries = 0; tries < 500; tries++) {
        QDict *resp = qtest_qmp(pv->qts, "{'execute': 'query-pvrdma'}");
        QDict *info = qobject_to(QDict,
                                 qlist_peek(qdict_get_qlist(resp, "return")));
        QDict *g = query_gid(qdict_get_qlist(info, "gids"), index);
        char *st = NULL;

        if (g && qdict_haskey(g, "mux")) {
            st = qdict_haskey(g, "mux-error") ?
                 g_strdup_printf("%s: %s", qdict_get_str(g, "mux"),
                                 qdict_get_str(g, "mux-error")) :
                 g_strdup(qdict_get_str(g, "mux"));
        }
        qobject_unref(resp);
        if (!st || strcmp(st, "pending")) {
            return st;
        }
        g_free(st);
        g_usleep(10 * 1000);
    }
    return g_strdup("pending");
}

/*
 * AUDIT 7, QEMU's side: rdmacm-mux refuses a GID that another VM holds;
 * the device says so in query-pvrdma and the log (main only warned
 * "refused request N", with nothing to tell which GID), and the VM can
 * claim it once the other lets it go.
 */
static void test_ibverbs_gid_held_elsewhere(void)
{
    static const uint8_t gid[16] = { [10] = 0xff, [11] = 0xff, 10, 0, 9, 9 };
    g_autofree char *held = NULL, *refused = NULL, *later = NULL;
    Pv *a, *b;

    if (!pv_ibverbs()) {
        g_test_skip("GIDs are claimed from rdmacm-mux with ibdev= only");
        return;
    }
    a = pv_probe();
    b = pv_probe();
    g_assert_cmpuint(gid_bind_gid(a, 3, gid), ==, ERR_OK);
    held = gid_mux_state(a, 3);
    g_assert_cmpstr(held, ==, "held");
    g_assert_cmpuint(gid_bind_gid(b, 3, gid), ==, ERR_OK);
    refused = gid_mux_state(b, 3);
    g_assert_cmpstr(refused, ==, "refused: another client holds it");
    g_assert_cmpuint(gid_unbind_gid(a, 3, gid), ==, ERR_OK);
    for (int tries = 0; tries < 50; tries++) {
        g_free(later);
        g_assert_cmpuint(gid_bind_gid(b, 3, gid), ==, ERR_OK);
        later = gid_mux_state(b, 3);
        if (!g_strcmp0(later, "held")) {
            break;
        }
        g_usleep(20 * 1000);
    }
    g_assert_cmpstr(later, ==, "held");
    pv_stop(a);
    pv_stop(b);
}

/* The ibverbs backend's realize errors */

/* The stderr of QEMU started with @args, and its exit status. */
static char *realize_stderr(const char *args, int *status)
{
    g_autofree char *cmd = g_strdup_printf(
        "%s -M pc -nodefaults -display none -S "
        "-device vmxnet3,addr=10.0,multifunction=on %s",
        g_getenv("QTEST_QEMU_BINARY"), args);
    g_autofree char *out = NULL;
    g_auto(GStrv) argv = NULL;
    char *err = NULL;

    g_assert(g_shell_parse_argv(cmd, NULL, &argv, NULL));
    g_assert(g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                          &out, &err, status, NULL));
    return err;
}

/*
 * Start QEMU with @args and expect it to refuse them at realize: exit
 * status 1 and a message on stderr that contains @want.
 */
static void expect_realize_error(const char *args, const char *want)
{
    int status;
    g_autofree char *err = realize_stderr(args, &status);

    if (!strstr(err, want)) {
        g_test_message("stderr of QEMU with %s follows", args);
        g_test_message("%s", err);
    }
    g_assert_nonnull(strstr(err, want));
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
}

/* Was this QEMU built with the ibverbs backend (configure --enable-rdma)? */
static bool qemu_has_ibverbs(void)
{
    int status;
    g_autofree char *err = realize_stderr("-device pvrdma,addr=10.1,"
                                          "ibdev=rxe0", &status);

    return !strstr(err, "built without the ibverbs backend");
}

#define SHARED_RAM "-m 128M -object memory-backend-memfd,id=m,size=128M," \
                   "share=on -machine memory-backend=m "

static void test_ibverbs_realize_errors(void)
{
    const char *ibdev = g_getenv("PVRDMA_QTEST_IBDEV");
    const char *netdev = g_getenv("PVRDMA_QTEST_NETDEV");
    g_autofree char *args = NULL;

    if (!qemu_has_ibverbs()) {
        g_test_skip("this QEMU was built without the ibverbs backend");
        return;
    }
    expect_realize_error("-device pvrdma,addr=10.1,ibdev=rxe0",
                         "needs netdev=");
    /* Private RAM cannot be aliased for ibv_reg_mr. */
    expect_realize_error("-device pvrdma,addr=10.1,ibdev=rxe0,netdev=eth0",
                         "memory-backend-memfd");
    expect_realize_error(SHARED_RAM "-device pvrdma,addr=10.1,"
                         "ibdev=nosuch9,netdev=eth0",
                         "ibdev=nosuch9: no such RDMA device; devices found:");
    if (!pv_ibverbs()) {
        return;     /* the rest needs a host RDMA device */
    }
    args = g_strdup_printf(SHARED_RAM "-device pvrdma,addr=10.1,ibdev=%s,"
                           "netdev=%s,ibport=9", ibdev, netdev);
    expect_realize_error(args, "ibport=9");
    g_free(args);
    args = g_strdup_printf(SHARED_RAM "-device pvrdma,addr=10.1,ibdev=%s,"
                           "netdev=%s", ibdev, netdev);
    expect_realize_error(args, "needs mad-chardev=");
    g_free(args);
    /* A chardev that waits to reconnect is not connected to rdmacm-mux. */
    args = g_strdup_printf(SHARED_RAM "-chardev socket,id=mads,"
                           "path=/nonexistent/rdmacm-mux,reconnect-ms=1000 "
                           "-device pvrdma,addr=10.1,ibdev=%s,netdev=%s,"
                           "mad-chardev=mads", ibdev, netdev);
    expect_realize_error(args, "not connected to rdmacm-mux");
}

/*
 * libvirt passes its own devices as JSON and QEMU creates every key=value
 * -device first, so the pvrdma of <qemu:commandline> is realized before
 * the vmxnet3 of <interface>.  It must work, with function 0's MAC.
 */
static void test_libvirt_function0_after(void)
{
    Pv *pv = g_new0(Pv, 1);
    PvrdmaDeviceCaps caps;

    pv->qts = qtest_initf("-M pc -nodefaults "
                          "-device '{\"driver\": \"vmxnet3\", "
                          "\"addr\": \"0x%x.0\", \"multifunction\": true, "
                          "\"mac\": \"" MAC "\"}' "
                          "-device pvrdma,id=rdma,addr=%x.1", SLOT, SLOT);
    pc_alloc_init(&pv->alloc, pv->qts, 0);
    pv->bus = qpci_new_pc(pv->qts, &pv->alloc);
    pv_attach(pv);
    g_assert_cmphex(rd(pv, PVRDMA_REG_MACL), ==, 0x12005452);
    g_assert_cmphex(rd(pv, PVRDMA_REG_MACH), ==, 0x5634);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    caps = pv_caps(pv);
    g_assert_cmphex(be64_to_cpu(caps.node_guid), ==, 0x505400fffe123456ull);
    pv_stop(pv);
}

/* Without a vmxnet3 at all, a pvrdma of the command line still stops QEMU. */
static void test_function0_missing_at_start(void)
{
    g_autofree char *cmd = g_strdup_printf(
        "%s -M pc -nodefaults -display none -S -device pvrdma,addr=%x.1 "
        "-device vmxnet3,addr=%x.0", g_getenv("QTEST_QEMU_BINARY"),
        SLOT, SLOT + 1);
    g_autofree char *err = NULL;
    g_auto(GStrv) argv = NULL;
    int status;

    g_assert(g_shell_parse_argv(cmd, NULL, &argv, NULL));
    g_assert(g_spawn_sync(NULL, argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL,
                          NULL, NULL, &err, &status, NULL));
    g_test_message("stderr: %s", err);
    g_assert_nonnull(strstr(err, "pvrdma at 10.1: pvrdma must be function 1 "
                                 "of a slot whose function 0 is a vmxnet3"));
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), ==, 1);
}

/* Named regression tests for the defects of the removed device */

static void test_cve_2018_20123_realize_failure(void)
{
    QTestState *qts = qtest_init("-M pc -nodefaults");
    QDict *resp;

    /* A realize failure (no vmxnet3 on function 0) must not leak. */
    resp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                     "{'driver': 'pvrdma', 'addr': '0x10.1'}}");
    g_assert(qdict_haskey(resp, "error"));
    qobject_unref(resp);
    resp = qtest_qmp(qts, "{'execute': 'device_add', 'arguments': "
                     "{'driver': 'pvrdma', 'addr': '0x11.1', "
                     "'dev-caps-max-qp': 1}}");
    g_assert(qdict_haskey(resp, "error"));
    qobject_unref(resp);
    qtest_quit(qts);
}

static void test_cve_2018_20125_ring_page_count(void)
{
    Pv *pv = pv_probe();
    uint32_t cq, qpn, h;
    QpSpec q = basic_qp(pv, PVRDMA_QPT_RC);
    PvrdmaCmdCreateQp c;

    /* Unbounded page counts are refused before anything is allocated. */
    g_assert_cmpuint(create_cq_pages(pv, 64, 0xffffffff, make_ring(pv, 2),
                                     &cq), !=, 0);
    g_assert_cmpuint(create_cq_pages(pv, 64, 300000, make_ring(pv, 2), &cq),
                     !=, 0);
    c = qp_cmd(pv, &q);
    c.total_chunks = 0xffff;
    c.send_chunks = 0xfffe;
    g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    pv_stop(pv);
}

static void test_cve_2018_20126_failed_create_no_leak(void)
{
    Pv *pv = pv_probe();
    uint64_t pages[3] = { 0 };
    uint64_t pdir;
    uint32_t cq, i;
    QpSpec q = basic_qp(pv, PVRDMA_QPT_RC);
    PvrdmaCmdCreateQp c;

    /* The last page entry is bad: the ring built so far must be freed. */
    pdir = make_pdir(pv, 3, pages);
    qtest_writeq(pv->qts, qtest_readq(pv->qts, pdir) + 16, 0x10);
    for (i = 0; i < 100; i++) {
        g_assert_cmpuint(create_cq_pages(pv, 64, 3, pdir, &cq), !=, 0);
    }
    c = qp_cmd(pv, &q);
    qtest_writeq(pv->qts, qtest_readq(pv->qts, c.pdir_dma) + 8, 0);
    for (i = 0; i < 100; i++) {
        g_assert_cmpuint(CMD_NR(pv, c), !=, 0);
    }
    pv_stop(pv);
}

static void test_cve_2018_20191_uar_read(void)
{
    Pv *pv = pv_probe();

    g_assert_cmphex(qpci_io_readl(pv->dev, pv->uar, 0), ==, 0);
    g_assert_cmphex(qpci_io_readl(pv->dev, pv->uar, 4), ==, 0);
    g_assert_cmphex(qpci_io_readl(pv->dev, pv->uar, 0x1008), ==, 0);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_VERSION), ==, PVRDMA_VERSION_QPHANDLE);
    pv_stop(pv);
}

static void test_cve_2021_3582_mr_length(void)
{
    Pv *pv = pv_probe();
    uint32_t pd;
    uint64_t pdir = make_ring(pv, 2);

    g_assert_cmpuint(create_pd(pv, 0, &pd), ==, ERR_OK);
    /* Length far beyond the two pages described */
    g_assert_cmpuint(create_mr(pv, pd, 0, 0, 0x1000, 0x40000000, 2, pdir,
                               NULL), !=, 0);
    /* Fewer bytes than pages, and an offset that needs one more page */
    g_assert_cmpuint(create_mr(pv, pd, 0, 0, 0x1000, 0x1000, 2, pdir, NULL),
                     !=, 0);
    g_assert_cmpuint(create_mr(pv, pd, 0, 0, 0x1800, 0x2000, 2, pdir, NULL),
                     !=, 0);
    g_assert_cmpuint(create_mr(pv, pd, 0, 0, 0x1800, 0x1000, 2, pdir, NULL),
                     ==, ERR_OK);
    pv_stop(pv);
}

static void test_cve_2021_3607_dev_ring_zero_pages(void)
{
    Pv *pv = pv_start();

    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 0, 4), !=, 0);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 0), !=, 0);
    g_assert_cmpuint(pv_caps(pv).max_qp, ==, 0);
    pv_stop(pv);
}

static void test_cve_2021_3608_bad_page_entry(void)
{
    Pv *pv = pv_start();
    PvrdmaDsr dsr;
    uint64_t table;

    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    /* Corrupt one page-table entry of the async ring and load again. */
    dsr = pv_dsr_get(pv);
    table = qtest_readq(pv->qts, dsr.async_ring_pages.pdir_dma);
    qtest_writeq(pv->qts, table + 8, 0xfffffffffffff000ull);
    wr(pv, PVRDMA_REG_DSRHIGH, pv->dsr >> 32);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    /* And a table address that is not in memory */
    qtest_writeq(pv->qts, dsr.async_ring_pages.pdir_dma, 0x1);
    wr(pv, PVRDMA_REG_DSRHIGH, pv->dsr >> 32);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_ACTIVATE);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    pv_stop(pv);
}

static void test_cve_2022_1050_request_before_dsr(void)
{
    Pv *pv = pv_start();

    wr(pv, PVRDMA_REG_REQUEST, 0);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    g_assert_cmphex(rd(pv, PVRDMA_REG_ICR), ==, 0);
    /* and after a reset */
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    wr(pv, PVRDMA_REG_CTL, PVRDMA_CTL_RESET);
    wr(pv, PVRDMA_REG_REQUEST, 0);
    g_assert_cmpuint(rd(pv, PVRDMA_REG_ERR), !=, 0);
    pv_stop(pv);
}

static void test_cve_2023_1544_dev_ring_too_many_pages(void)
{
    Pv *pv = pv_start();

    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 513, 4), !=, 0);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 100000), !=,
                     0);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 0xffffffff, 4),
                     !=, 0);
    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    pv_stop(pv);
}

static void test_unreported_ring_exceeds_pages(void)
{
    Pv *pv = pv_probe();
    uint32_t cq;

    /* 256 CQEs need 4 pages; 2 element pages are not enough. */
    g_assert_cmpuint(create_cq_pages(pv, 256, 3, make_ring(pv, 3), &cq), !=,
                     0);
    g_assert_cmpuint(create_cq_pages(pv, 256, 5, make_ring(pv, 5), &cq), ==,
                     0);
    pv_stop(pv);
}

static void test_unreported_ring_not_pow2(void)
{
    Pv *pv = pv_probe();
    uint32_t cq;

    g_assert_cmpuint(create_cq_pages(pv, 3, 2, make_ring(pv, 2), &cq), !=, 0);
    g_assert_cmpuint(create_cq_pages(pv, 63, 2, make_ring(pv, 2), &cq), !=, 0);
    pv_stop(pv);
}

static void test_unreported_handle_off_by_one(void)
{
    Pv *pv = pv_start_args(",dev-caps-max-cq=4");
    uint32_t cq[4], i;

    g_assert_cmpuint(pv_write_dsr(pv, PVRDMA_VERSION_QPHANDLE, 4, 4), ==, 0);
    for (i = 0; i < 3; i++) {
        g_assert_cmpuint(create_cq(pv, 4, &cq[i]), ==, ERR_OK);
        g_assert_cmpuint(cq[i], <, 4);
    }
    g_assert_cmpuint(create_cq(pv, 4, &cq[3]), !=, 0);
    g_assert_cmpuint(destroy(pv, PVRDMA_CMD_DESTROY_CQ, 4), !=, 0);
    pv_stop(pv);
}

static void test_unreported_query_qp_layout(void)
{
    Pv *pv = pv_probe();
    QpSpec q = basic_qp(pv, PVRDMA_QPT_RC);
    PvrdmaCmdQueryQp c = { .hdr.cmd = PVRDMA_CMD_QUERY_QP };
    uint8_t raw[sizeof(PvrdmaCmdQueryQpResp)];
    uint32_t qpn, h, v;

    g_assert_cmpuint(create_qp(pv, &q, &qpn, &h), ==, ERR_OK);
    c.qp_handle = h;
    g_assert_cmpuint(pv_cmd(pv, &c, sizeof(c), raw, sizeof(raw)), ==, 0);
    /* The capabilities sit where the driver reads them (offset 72). */
    memcpy(&v, raw + sizeof(PvrdmaCmdRespHdr) + 56, 4);
    g_assert_cmpuint(v, ==, 16);
    memcpy(&v, raw + sizeof(PvrdmaCmdRespHdr) + 56 + 12, 4);
    g_assert_cmpuint(v, ==, 2);
    pv_stop(pv);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvrdma/pci/identity", test_pci_identity);
    qtest_add_func("/pvrdma/regs/basic", test_registers);
    qtest_add_func("/pvrdma/dsr/caps", test_dsr_caps);
    qtest_add_func("/pvrdma/dsr/dev-caps-properties",
                   test_dsr_dev_caps_properties);
    qtest_add_func("/pvrdma/dsr/old-driver", test_dsr_old_driver);
    qtest_add_func("/pvrdma/dsr/bad", test_dsr_bad);
    qtest_add_func("/pvrdma/regs/ctl", test_ctl);
    qtest_add_func("/pvrdma/irq/msix-response", test_msix_response);
    qtest_add_func("/pvrdma/irq/imr-masks", test_imr_masks_interrupt);
    qtest_add_func("/pvrdma/cmd/query-port-pkey", test_cmd_query_port_pkey);
    qtest_add_func("/pvrdma/cmd/uc", test_cmd_uc);
    qtest_add_func("/pvrdma/cmd/pd", test_cmd_pd);
    qtest_add_func("/pvrdma/cmd/mr", test_cmd_mr);
    qtest_add_func("/pvrdma/cmd/mr-page-budget", test_mr_page_budget);
    qtest_add_func("/pvrdma/cmd/cq", test_cmd_cq);
    qtest_add_func("/pvrdma/cmd/qp-create", test_cmd_qp_create);
    qtest_add_func("/pvrdma/cmd/qp-context-isolation",
                   test_cmd_qp_context_isolation);
    qtest_add_func("/pvrdma/cmd/qp-modify-rc", test_cmd_qp_modify_rc);
    qtest_add_func("/pvrdma/cmd/qp-modify-rc-ranges",
                   test_cmd_qp_modify_rc_ranges);
    qtest_add_func("/pvrdma/cmd/qp-modify-ud-gsi", test_cmd_qp_modify_ud_gsi);
    qtest_add_func("/pvrdma/cmd/srq", test_cmd_srq);
    qtest_add_func("/pvrdma/cmd/srq-disabled", test_cmd_srq_disabled);
    qtest_add_func("/pvrdma/cmd/bind", test_cmd_bind);
    qtest_add_func("/pvrdma/cmd/unknown", test_cmd_unknown);
    qtest_add_func("/pvrdma/port/link", test_port_link);
    qtest_add_func("/pvrdma/regression/ring-in-bar", test_ring_in_bar);
    qtest_add_func("/pvrdma/order/second-dsr", test_order_second_dsr);
    qtest_add_func("/pvrdma/order/ctl-reset", test_order_reset);
    qtest_add_func("/pvrdma/order/system-reset", test_order_system_reset);
    qtest_add_func("/pvrdma/order/hot-unplug", test_order_hot_unplug);
    qtest_add_func("/pvrdma/order/doorbells", test_order_doorbells);
    qtest_add_func("/pvrdma/qmp/gids-and-counts", test_qmp_gids_and_counts);
    qtest_add_func("/pvrdma/qmp/schema", test_qmp_schema);
    qtest_add_func("/pvrdma/qmp/unstable-hidden", test_qmp_unstable_hidden);
    qtest_add_func("/pvrdma/hmp/info", test_hmp_info);
    qtest_add_func("/pvrdma/regression/gid-replace-announces-removal",
                   test_gid_replace_announces_removal);
    qtest_add_func("/pvrdma/regression/gid-event-flood",
                   test_gid_event_flood);
    qtest_add_func("/pvrdma/regression/ibverbs-host-queue-budget",
                   test_ibverbs_host_queue_budget);
    qtest_add_func("/pvrdma/regression/ibverbs-gid-held-elsewhere",
                   test_ibverbs_gid_held_elsewhere);
    qtest_add_func("/pvrdma/regression/ring-pages-repeated",
                   test_ring_pages_repeated);
    qtest_add_func("/pvrdma/regression/ibverbs-map-runs-device-wide",
                   test_ibverbs_map_runs_device_wide);
    qtest_add_func("/pvrdma/ibverbs/realize-errors",
                   test_ibverbs_realize_errors);
    qtest_add_func("/pvrdma/regression/libvirt/function0-after-function1",
                   test_libvirt_function0_after);
    qtest_add_func("/pvrdma/realize/function0-missing-at-start",
                   test_function0_missing_at_start);
    qtest_add_func("/pvrdma/regression/cve-2018-20123-realize-leak",
                   test_cve_2018_20123_realize_failure);
    qtest_add_func("/pvrdma/regression/cve-2018-20125-ring-page-count",
                   test_cve_2018_20125_ring_page_count);
    qtest_add_func("/pvrdma/regression/cve-2018-20126-failed-create-leak",
                   test_cve_2018_20126_failed_create_no_leak);
    qtest_add_func("/pvrdma/regression/cve-2018-20191-uar-read",
                   test_cve_2018_20191_uar_read);
    qtest_add_func("/pvrdma/regression/cve-2021-3582-mr-length",
                   test_cve_2021_3582_mr_length);
    qtest_add_func("/pvrdma/regression/cve-2021-3607-ring-zero-pages",
                   test_cve_2021_3607_dev_ring_zero_pages);
    qtest_add_func("/pvrdma/regression/cve-2021-3608-bad-page-entry",
                   test_cve_2021_3608_bad_page_entry);
    qtest_add_func("/pvrdma/regression/cve-2022-1050-request-before-dsr",
                   test_cve_2022_1050_request_before_dsr);
    qtest_add_func("/pvrdma/regression/cve-2023-1544-ring-too-many-pages",
                   test_cve_2023_1544_dev_ring_too_many_pages);
    qtest_add_func("/pvrdma/regression/unreported-ring-exceeds-pages",
                   test_unreported_ring_exceeds_pages);
    qtest_add_func("/pvrdma/regression/unreported-ring-not-pow2",
                   test_unreported_ring_not_pow2);
    qtest_add_func("/pvrdma/regression/unreported-handle-off-by-one",
                   test_unreported_handle_off_by_one);
    qtest_add_func("/pvrdma/regression/unreported-query-qp-layout",
                   test_unreported_query_qp_layout);

    return g_test_run();
}
