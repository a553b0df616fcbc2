/*
 * VMware PVRDMA front-end: the PCI device.
 *
 * QOM type, BARs (MSI-X, registers, UAR doorbells), the device shared
 * region, device rings, interrupts, properties, reset and unplug.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/main-loop.h"
#include "qapi/error.h"
#include "hw/pci/msix.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "migration/vmstate.h"
#include "migration/blocker.h"
#include "qemu/error-report.h"
#include "hw/qdev-core.h"
#include "system/system.h"
#include "net/net.h"
#include "pvrdma.h"
#include "trace.h"

#define pvrdma_guest_error(fmt, ...) do {                                   \
    qemu_log_mask(LOG_GUEST_ERROR, "pvrdma: " fmt "\n", ## __VA_ARGS__);   \
} while (0)

/* Interrupts */

void pvrdma_notify(PvrdmaState *s, unsigned vector)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (!rdma_dev_live(pdev)) {
        return;                     /* unplugged inside the data path */
    }
    if (s->imr & (1u << vector)) {
        trace_pvrdma_irq_masked(vector);
        return;
    }
    if (msix_enabled(pdev)) {
        trace_pvrdma_irq_msix(vector, msix_is_masked(pdev, vector));
        msix_notify(pdev, vector);
        return;
    }
    /* Legacy INTx: the driver reads ICR to learn the cause. */
    trace_pvrdma_irq_intx(vector);
    s->icr |= 1u << vector;
    pci_set_irq(pdev, 1);
}

/* Device rings */

static void pvrdma_dev_ring_free(PvrdmaDevRing *ring)
{
    rdma_page_list_free(&ring->pages);
    memset(&ring->map, 0, sizeof(ring->map));
}

/* The ring map over a device ring's pages (page 0: the ring state). */
static bool pvrdma_dev_ring_map(PvrdmaState *s, PvrdmaDevRing *ring,
                                uint32_t elem_size)
{
    uint32_t n = ring->pages.npages;

    return pvrdma_ring_init(&ring->map, PCI_DEVICE(s),
                            ring->pages.pages[0] +
                            offsetof(PvrdmaRingState, rx),
                            ring->pages.pages + 1, n - 1,
                            (n - 1) * RDMA_PAGE_SIZE / elem_size, elem_size);
}

static bool pvrdma_dev_ring_load(PvrdmaState *s, PvrdmaDevRing *ring,
                                 PvrdmaRingPageInfo info,
                                 uint32_t elem_size, const char *name)
{
    const char *why = "element pages invalid";
    uint32_t n = le32_to_cpu(info.num_pages);

    /* Page 0 is the ring state, so at least one page of elements. */
    if (n < 2 || n > PVRDMA_DEV_RING_MAX_PAGES) {
        pvrdma_guest_error("DSR %s ring: %u pages, need 2..%u", name, n,
                           PVRDMA_DEV_RING_MAX_PAGES);
        return false;
    }
    if (!rdma_ring_load(PCI_DEVICE(s), le64_to_cpu(info.pdir_dma), n,
                        PVRDMA_DEV_RING_MAX_PAGES, &ring->pages, &why) ||
        !pvrdma_dev_ring_map(s, ring, elem_size)) {
        pvrdma_guest_error("DSR %s ring: %s", name, why);
        pvrdma_dev_ring_free(ring);
        return false;
    }
    return true;
}

/*
 * Port state follows the Ethernet link of function 0, as on a RoCE NIC:
 * QMP set_link on the vmxnet3 (or its netdev) takes the port down and up,
 * and the guest gets PORT_ERR / PORT_ACTIVE.  QEMU has no link-change
 * notifier for another device's NIC, so a timer looks every 200 ms.
 */
#define PVRDMA_LINK_POLL_NS     (200 * SCALE_MS)

typedef struct PvrdmaLinkQuery {
    PCIDevice *fn0;
    bool up;
} PvrdmaLinkQuery;

static void pvrdma_link_of_nic(NICState *nic, void *opaque)
{
    PvrdmaLinkQuery *q = opaque;

    if (nic->opaque == q->fn0) {
        q->up = !qemu_get_queue(nic)->link_down;
    }
}

static bool pvrdma_link_up(PvrdmaState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);
    PvrdmaLinkQuery q = {
        .fn0 = pci_find_device(pci_get_bus(pdev), pci_dev_bus_num(pdev),
                               PCI_DEVFN(PCI_SLOT(pdev->devfn), 0)),
        .up = true,
    };

    qemu_foreach_nic(pvrdma_link_of_nic, &q);
    return q.up;
}

static void pvrdma_link_bh(void *opaque)
{
    PvrdmaState *s = opaque;
    bool up;

    if (!rdma_rm_enter(&s->rm)) {
        return;
    }
    up = pvrdma_link_up(s);
    if (up != s->port_up) {
        s->port_up = up;
        trace_pvrdma_port(up);
        if (s->activated) {
            pvrdma_front_ops.event(s, up ? RDMA_EVENT_PORT_ACTIVE
                                         : RDMA_EVENT_PORT_ERR, 1);
        }
    }
    rdma_rm_leave(&s->rm);
}

static void pvrdma_link_timer(void *opaque)
{
    PvrdmaState *s = opaque;

    /* The event is DMA: post it under the device's re-entrancy guard. */
    qemu_bh_schedule(s->link_bh);
    timer_mod(s->link_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              PVRDMA_LINK_POLL_NS);
}

/* Device shared region */

/* The one GID type the device announces (and CREATE_BIND accepts). */
uint8_t pvrdma_gid_types(PvrdmaState *s)
{
    /* A driver older than version 18 only knows RoCE v1. */
    return s->driver_version < PVRDMA_VERSION_ROCEV2 ?
           PVRDMA_GID_TYPE_FLAG_ROCE_V1 : PVRDMA_GID_TYPE_FLAG_ROCE_V2;
}

/* The capabilities as the DSR holds them: little-endian. */
static void pvrdma_fill_caps(PvrdmaState *s, PvrdmaDeviceCaps *c)
{
    const RdmaDevLimits *l = &s->rm.limits;
    const uint8_t *m = s->mac;
    /* EUI-64 from the MAC address of function 0, as RoCE NICs do. */
    const uint8_t guid[8] = { m[0] ^ 2, m[1], m[2], 0xff, 0xfe,
                              m[3], m[4], m[5] };

    memset(c, 0, sizeof(*c));
    c->fw_ver = cpu_to_le64(1ull << 32);    /* shown as 1.0.0 */
    memcpy(&c->node_guid, guid, 8);
    memcpy(&c->sys_image_guid, guid, 8);
    c->max_mr_size = cpu_to_le64(l->max_mr_size);
    c->page_size_cap = cpu_to_le64(RDMA_PAGE_SIZE);
    c->vendor_id = cpu_to_le32(PVRDMA_PCI_VENDOR_ID_VMWARE);
    c->vendor_part_id = cpu_to_le32(PVRDMA_PCI_DEVICE_ID);
    c->hw_ver = cpu_to_le32(PVRDMA_REV_ID);
    c->max_qp = cpu_to_le32(l->max_qp);
    c->max_qp_wr = cpu_to_le32(l->max_qp_wr);
    c->max_sge = cpu_to_le32(l->max_sge);
    c->max_sge_rd = cpu_to_le32(l->max_sge);
    c->max_cq = cpu_to_le32(l->max_cq);
    c->max_cqe = cpu_to_le32(l->max_cqe);
    c->max_mr = cpu_to_le32(l->max_mr);
    c->max_pd = cpu_to_le32(l->max_pd);
    c->max_qp_rd_atom = cpu_to_le32(l->max_qp_rd_atom);
    c->max_res_rd_atom = cpu_to_le32(l->max_qp_rd_atom * l->max_qp);
    c->max_qp_init_rd_atom = cpu_to_le32(l->max_qp_init_rd_atom);
    c->max_ah = cpu_to_le32(l->max_ah);
    c->max_srq = cpu_to_le32(l->max_srq);
    c->max_srq_wr = cpu_to_le32(l->max_srq_wr);
    c->max_srq_sge = cpu_to_le32(l->max_srq_sge);
    c->max_uar = cpu_to_le32(PVRDMA_MAX_UAR);
    c->gid_tbl_len = cpu_to_le32(l->gid_tbl_len);
    c->max_pkeys = cpu_to_le16(l->max_pkeys);
    c->local_ca_ack_delay = 15;
    c->phys_port_cnt = 1;
    c->mode = PVRDMA_DEVICE_MODE_ROCE;
#ifdef CONFIG_ATOMIC64
    /* Atomic against the vCPUs only with the host's 64-bit atomics. */
    c->atomic_ops = PVRDMA_ATOMIC_OP_COMP_SWAP | PVRDMA_ATOMIC_OP_FETCH_ADD;
#endif
    /* Fast registration only where the backend can do it (not ibverbs). */
    c->bmme_flags = l->max_fast_reg_pages ?
                    PVRDMA_BMME_FLAG_LOCAL_INV | PVRDMA_BMME_FLAG_REMOTE_INV |
                    PVRDMA_BMME_FLAG_FAST_REG_WR : 0;
    c->gid_types = pvrdma_gid_types(s);
    c->max_fast_reg_page_list_len = cpu_to_le32(l->max_fast_reg_pages);
}

static bool pvrdma_slot_ok(PvrdmaState *s, uint64_t addr)
{
    return addr && rdma_ram_ok(PCI_DEVICE(s), addr, RDMA_PAGE_SIZE);
}

/* Everything the guest created, and the DSR itself, go away. */
static void pvrdma_unload(PvrdmaState *s)
{
    rdma_rm_reset(&s->rm);
    /* The GIDs went with the driver: tell management software. */
    pvrdma_gid_sync(s);
    pvrdma_dev_ring_free(&s->async_ring);
    pvrdma_dev_ring_free(&s->cq_ring);
    s->dsr_loaded = false;
    s->activated = false;
    s->driver_version = 0;
    s->cmd_slot = s->resp_slot = 0;
}

/*
 * Called when DSRHIGH is written: the driver has filled the region and
 * expects the capabilities in it when the write returns.  A new DSR
 * replaces the previous one (a driver that failed its probe loads again
 * without a reset), dropping every object of the old one.
 */
static void pvrdma_load_dsr(PvrdmaState *s)
{
    PvrdmaDsr dsr;
    PvrdmaDeviceCaps caps;
    dma_addr_t addr = ((uint64_t)s->dsr_high << 32) | s->dsr_low;
    uint32_t version;
    uint64_t cmd_slot, resp_slot;

    if (s->dsr_loaded) {
        trace_pvrdma_dsr_replaced(s->dsr_addr, addr);
        pvrdma_unload(s);
    }
    s->err = EINVAL;
    if (!addr || !rdma_ram_ok(PCI_DEVICE(s), addr, sizeof(dsr)) ||
        !rdma_dma_read(PCI_DEVICE(s), addr, &dsr, sizeof(dsr))) {
        pvrdma_guest_error("DSR at 0x%" PRIx64 " is not readable", addr);
        return;
    }
    /* The driver's gos_info and UAR page number tell the device nothing. */
    version = le32_to_cpu(dsr.driver_version);
    cmd_slot = le64_to_cpu(dsr.cmd_slot_dma);
    resp_slot = le64_to_cpu(dsr.resp_slot_dma);
    if (version < PVRDMA_VERSION_ROCEV1) {
        pvrdma_guest_error("driver version %u is older than %u", version,
                           PVRDMA_VERSION_ROCEV1);
        return;
    }
    if (!pvrdma_slot_ok(s, cmd_slot) || !pvrdma_slot_ok(s, resp_slot)) {
        pvrdma_guest_error("DSR command/response slot not in guest memory");
        return;
    }
    if (!pvrdma_dev_ring_load(s, &s->async_ring, dsr.async_ring_pages,
                              sizeof(PvrdmaEqe), "async")) {
        return;
    }
    if (!pvrdma_dev_ring_load(s, &s->cq_ring, dsr.cq_ring_pages,
                              sizeof(PvrdmaCqne), "CQ notification")) {
        pvrdma_dev_ring_free(&s->async_ring);
        return;
    }
    s->driver_version = version;
    s->cmd_slot = cmd_slot;
    s->resp_slot = resp_slot;
    pvrdma_fill_caps(s, &caps);
    if (!rdma_dma_write(PCI_DEVICE(s), addr + offsetof(PvrdmaDsr, caps),
                        &caps, sizeof(caps))) {
        pvrdma_guest_error("cannot write the capabilities into the DSR");
        pvrdma_dev_ring_free(&s->async_ring);
        pvrdma_dev_ring_free(&s->cq_ring);
        return;
    }
    s->dsr_addr = addr;
    s->dsr_loaded = true;
    s->err = 0;
    trace_pvrdma_dsr_loaded(addr, version);
}

/* Device reset: CTL=RESET, system reset, unplug, a refused migration. */
void pvrdma_reset_state(PvrdmaState *s)
{
    pvrdma_unload(s);
    s->dsr_low = s->dsr_high = 0;
    s->err = 0;
    s->icr = 0;
    s->imr = ~0u;
    s->mac_lo = ldl_le_p(s->mac);
    s->mac_hi = lduw_le_p(s->mac + 4);
    s->reset_pending = false;
    s->rm.loading = false;
    /*
     * The interrupt pin is a read-only register, which a reset gives
     * back: a load that failed after the PCI config space may have left
     * a stream's byte there, and pci_set_irq() takes it for a pin number
     * (an assertion, above 4).  (Not after an unplug: the config space
     * went with the PCI device.)
     */
    if (rdma_dev_live(PCI_DEVICE(s))) {
        pci_config_set_interrupt_pin(PCI_DEVICE(s)->config, PVRDMA_INTX_PIN);
        pci_set_irq(PCI_DEVICE(s), 0);
    }
}

/*
 * A reset (CTL=RESET, a bus or system reset) now, or, when it arrives
 * while the device is inside one of its entry points (its own MSI-X
 * message or DMA reached a bridge's Secondary Bus Reset), as soon as that
 * entry point leaves: see rdma_rm.h.
 */
static void pvrdma_request_reset(PvrdmaState *s)
{
    if (rdma_rm_defer(&s->rm)) {
        trace_pvrdma_reset_deferred();
        s->reset_pending = true;
        return;
    }
    pvrdma_reset_state(s);
}

static void pvrdma_ctl(PvrdmaState *s, uint32_t val)
{
    switch (val) {
    case PVRDMA_CTL_ACTIVATE:
    case PVRDMA_CTL_UNQUIESCE:
        if (!s->dsr_loaded) {
            pvrdma_guest_error("CTL %u before a DSR was loaded", val);
            s->err = ENODEV;
            return;
        }
        s->activated = true;
        s->err = 0;
        break;
    case PVRDMA_CTL_RESET:
        pvrdma_request_reset(s);
        break;
    default:
        pvrdma_guest_error("unknown CTL value %u", val);
        s->err = EINVAL;
        break;
    }
}

/* BAR1: registers */

static uint64_t pvrdma_regs_read(void *opaque, hwaddr addr, unsigned size)
{
    PvrdmaState *s = opaque;
    uint32_t val = 0;

    switch (addr) {
    case PVRDMA_REG_VERSION:
        val = PVRDMA_VERSION_QPHANDLE;
        break;
    case PVRDMA_REG_DSRLOW:
        val = s->dsr_low;
        break;
    case PVRDMA_REG_DSRHIGH:
        val = s->dsr_high;
        break;
    case PVRDMA_REG_ERR:
        val = s->err;
        break;
    case PVRDMA_REG_ICR:
        /* Read to clear: the legacy interrupt handler acknowledges here. */
        val = s->icr;
        s->icr = 0;
        pci_set_irq(PCI_DEVICE(s), 0);
        break;
    case PVRDMA_REG_IMR:
        val = s->imr;
        break;
    case PVRDMA_REG_MACL:
        val = s->mac_lo;
        break;
    case PVRDMA_REG_MACH:
        val = s->mac_hi;
        break;
    case PVRDMA_REG_CTL:
    case PVRDMA_REG_REQUEST:
        break;                      /* write-only, read as zero */
    default:
        pvrdma_guest_error("read of unknown register 0x%" HWADDR_PRIx, addr);
        break;
    }
    trace_pvrdma_regs_read(addr, val);
    return val;
}

static void pvrdma_regs_write(void *opaque, hwaddr addr, uint64_t val,
                              unsigned size)
{
    PvrdmaState *s = opaque;

    trace_pvrdma_regs_write(addr, val);
    if (!rdma_rm_enter(&s->rm)) {
        return;
    }
    switch (addr) {
    case PVRDMA_REG_DSRLOW:
        s->dsr_low = val;
        break;
    case PVRDMA_REG_DSRHIGH:
        s->dsr_high = val;
        pvrdma_load_dsr(s);
        break;
    case PVRDMA_REG_CTL:
        pvrdma_ctl(s, val);
        break;
    case PVRDMA_REG_REQUEST:
        pvrdma_exec_cmd(s);
        break;
    case PVRDMA_REG_ICR:
        s->icr &= ~val;             /* write one to clear */
        if (!s->icr) {
            pci_set_irq(PCI_DEVICE(s), 0);
        }
        break;
    case PVRDMA_REG_IMR:
        s->imr = val;
        break;
    case PVRDMA_REG_MACL:
        s->mac_lo = val;
        break;
    case PVRDMA_REG_MACH:
        s->mac_hi = val & 0xffff;
        break;
    case PVRDMA_REG_VERSION:
    case PVRDMA_REG_ERR:
        pvrdma_guest_error("write to read-only register 0x%" HWADDR_PRIx,
                           addr);
        break;
    default:
        pvrdma_guest_error("write to unknown register 0x%" HWADDR_PRIx, addr);
        break;
    }
    rdma_rm_leave(&s->rm);
}

static const MemoryRegionOps pvrdma_regs_ops = {
    .read = pvrdma_regs_read,
    .write = pvrdma_regs_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/*
 * BAR2: UAR doorbell pages
 *
 * The region is lockless (memory_region_enable_lockless_io): vCPUs enter
 * these handlers without the BQL.  A busy-polling program writes a CQ POLL
 * doorbell on every empty poll (libvmw_pvrdma does), and with the BQL
 * around each one two polling vCPUs handed the lock back and forth through
 * the kernel on every poll.
 *
 * Thread safety: a POLL reads nothing but its own arguments and returns.
 * Every other doorbell takes the BQL before it looks at the device, so it
 * runs exactly as it did with the lock taken by the memory core: in the
 * order the BQL admits them, never concurrently with a command, a bottom
 * half, a reset or a migration.  The core's re-entrancy guard is off for
 * a lockless region (its flag is not atomic); the same check is made here
 * under the BQL: a doorbell that the device's own DMA or MSI-X writes
 * while it is inside one of its entry points is dropped, as before.
 */

static bool pvrdma_uar_entered(PvrdmaState *s)
{
    if (DEVICE(s)->mem_reentrancy_guard.engaged_in_io) {
        pvrdma_guest_error("doorbell written by the device itself "
                           "(re-entrant I/O): dropped");
        return true;
    }
    return false;
}

static uint64_t pvrdma_uar_read(void *opaque, hwaddr addr, unsigned size)
{
    BQL_LOCK_GUARD();
    /* Doorbells are write-only; a read returns 0 (CVE-2018-20191). */
    pvrdma_guest_error("read of UAR doorbell 0x%" HWADDR_PRIx, addr);
    return 0;
}

static void pvrdma_uar_write(void *opaque, hwaddr addr, uint64_t val,
                             unsigned size)
{
    PvrdmaState *s = opaque;
    uint32_t page = addr / PVRDMA_UAR_PAGE_SIZE;

    /*
     * CQ POLL alone asks for nothing (completions are written as they
     * happen): return at once, without the BQL.
     */
    if ((addr & (PVRDMA_UAR_PAGE_SIZE - 1)) == PVRDMA_UAR_CQ_OFFSET &&
        !(val & (PVRDMA_UAR_CQ_ARM | PVRDMA_UAR_CQ_ARM_SOL))) {
        return;
    }

    BQL_LOCK_GUARD();
    if (pvrdma_uar_entered(s)) {
        return;
    }
    if (!s->dsr_loaded) {
        pvrdma_guest_error("doorbell before the device was set up");
        return;
    }
    if (!rdma_rm_enter(&s->rm)) {
        return;
    }
    switch (addr & (PVRDMA_UAR_PAGE_SIZE - 1)) {
    case PVRDMA_UAR_QP_OFFSET:
        pvrdma_doorbell_qp(s, page, val);
        break;
    case PVRDMA_UAR_CQ_OFFSET:
        pvrdma_doorbell_cq(s, page, val);
        break;
    case PVRDMA_UAR_SRQ_OFFSET:
        pvrdma_doorbell_srq(s, page, val);
        break;
    default:
        pvrdma_guest_error("write to unknown UAR offset 0x%" HWADDR_PRIx,
                           addr);
        break;
    }
    rdma_rm_leave(&s->rm);
}

static const MemoryRegionOps pvrdma_uar_ops = {
    .read = pvrdma_uar_read,
    .write = pvrdma_uar_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .impl = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* QOM */

static PCIDevice *pvrdma_function0(PvrdmaState *s)
{
    PCIDevice *pdev = PCI_DEVICE(s);

    if (PCI_FUNC(pdev->devfn) == 0) {
        return NULL;
    }
    return pci_find_device(pci_get_bus(pdev), pci_dev_bus_num(pdev),
                           PCI_DEVFN(PCI_SLOT(pdev->devfn), 0));
}

/* Function 0 must be a vmxnet3; its MAC is the port's (node GUID, GIDs). */
static bool pvrdma_check_function0(PvrdmaState *s, Error **errp)
{
    unsigned slot = PCI_SLOT(PCI_DEVICE(s)->devfn);
    PCIDevice *fn0 = pvrdma_function0(s);
    g_autofree char *mac = NULL;

    if (!fn0 || !object_dynamic_cast(OBJECT(fn0), "vmxnet3")) {
        error_setg(errp, "pvrdma must be function 1 of a slot whose function "
                   "0 is a vmxnet3 (the guest driver pairs them by slot)");
        error_append_hint(errp, "Add -device vmxnet3,addr=%x.0,"
                          "multifunction=on,netdev=<id> for "
                          "-device pvrdma,addr=%x.1\n", slot, slot);
        return false;
    }
    mac = object_property_get_str(OBJECT(fn0), "mac", NULL);
    if (!mac || sscanf(mac, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &s->mac[0],
                       &s->mac[1], &s->mac[2], &s->mac[3], &s->mac[4],
                       &s->mac[5]) != 6) {
        error_setg(errp, "cannot read the MAC address of the vmxnet3 "
                   "function");
        return false;
    }
    return true;
}

/*
 * A device created with the machine may come before its function 0:
 * libvirt passes its own devices (the vmxnet3) as JSON, and QEMU creates
 * every key=value -device (the pvrdma of <qemu:commandline>) before them.
 * The pair is then checked once the machine is complete, where a missing
 * vmxnet3 ends QEMU as a realize error would.  A hot-plugged pvrdma needs
 * its function 0 in place.
 */
static void pvrdma_machine_done(Notifier *n, void *opaque)
{
    PvrdmaState *s = container_of(n, PvrdmaState, machine_done);
    Error *err = NULL;

    if (!pvrdma_check_function0(s, &err)) {
        error_prepend(&err, "pvrdma at %x.%x: ",
                      PCI_SLOT(PCI_DEVICE(s)->devfn),
                      PCI_FUNC(PCI_DEVICE(s)->devfn));
        error_report_err(err);
        exit(1);
    }
    s->mac_lo = ldl_le_p(s->mac);           /* as a reset loads them */
    s->mac_hi = lduw_le_p(s->mac + 4);
}

static bool pvrdma_function0_later(PvrdmaState *s)
{
    return !phase_check(PHASE_MACHINE_READY) && !pvrdma_function0(s) &&
           PCI_FUNC(PCI_DEVICE(s)->devfn) != 0;
}

static bool pvrdma_param_ok(uint64_t val, uint64_t lo, uint64_t hi,
                            const char *name, Error **errp)
{
    if (val < lo || val > hi) {
        error_setg(errp, "%s=%" PRIu64 " is out of range %" PRIu64 "..%"
                   PRIu64, name, val, lo, hi);
        return false;
    }
    return true;
}

static bool pvrdma_check_params(PvrdmaState *s, Error **errp)
{
    const PvrdmaParams *p = &s->params;

    /* The guest's user library indexes QPs by the low 16 bits. */
    if (!pvrdma_param_ok(p->max_qp, 4, 65536, "dev-caps-max-qp", errp) ||
        !pvrdma_param_ok(p->max_cq, 2, 65536, "dev-caps-max-cq", errp) ||
        !pvrdma_param_ok(p->max_pd, 2, 65536, "dev-caps-max-pd", errp) ||
        !pvrdma_param_ok(p->max_mr, 2, 1 << 20, "dev-caps-max-mr", errp) ||
        !pvrdma_param_ok(p->max_ah, 1, 65536, "dev-caps-max-ah", errp) ||
        !pvrdma_param_ok(p->max_srq, 0, 65536, "dev-caps-max-srq", errp) ||
        /* A send WQE with max_sge entries must fit in one page. */
        !pvrdma_param_ok(p->max_sge, 1, 64, "dev-caps-max-sge", errp) ||
        !pvrdma_param_ok(p->max_mr_size, RDMA_PAGE_SIZE,
                         (uint64_t)PVRDMA_PAGE_DIR_MAX_PAGES * RDMA_PAGE_SIZE,
                         "dev-caps-max-mr-size", errp) ||
        !pvrdma_param_ok(p->max_mr_pages_total, 1, 1ull << 32,
                         "max-mr-pages-total", errp)) {
        return false;
    }

    if (p->ibdev) {
#ifndef RDMA_HAVE_IBVERBS
        error_setg(errp, "ibdev=%s: this QEMU was built without the "
                   "ibverbs backend (Linux hosts with rdma-core, configure "
                   "--enable-rdma); omit ibdev= to use the "
                   "built-in soft backend", p->ibdev);
        return false;
#else
        if (!p->netdev) {
            error_setg(errp, "ibdev=%s needs netdev=<host network device "
                       "of %s>, whose addresses are the port's GIDs",
                       p->ibdev, p->ibdev);
            error_append_hint(errp, "For Soft-RoCE it is the interface "
                              "the rxe device was added on (rdma link "
                              "show).\n");
            return false;
        }
        return true;
#endif
    }
    if (p->netdev || qemu_chr_fe_backend_connected(&s->params.mad_chr)) {
        error_setg(errp, "netdev= and mad-chardev= are only used with "
                   "ibdev= (the ibverbs backend)");
        return false;
    }
    if (p->ibport != 1) {
        error_setg(errp, "ibport=%u: the soft backend has one port, 1",
                   p->ibport);
        return false;
    }
    return true;
}

/*
 * The ibverbs backend cannot migrate: the guest and its peers hold the
 * host device's QP numbers and memory keys, which no other host can give
 * back.  A blocker per device makes `migrate` fail with this reason while
 * the VM runs on.
 */
static bool pvrdma_block_migration(PvrdmaState *s, Error **errp)
{
    if (!s->params.ibdev) {
        return true;
    }
    error_setg(&s->migration_blocker, "pvrdma: the ibverbs backend "
               "(ibdev=%s) cannot migrate: the guest and its peers hold "
               "the host RDMA device's QP numbers and memory keys; use the "
               "soft backend (no ibdev=) for a migratable VM",
               s->params.ibdev);
    return migrate_add_blocker(&s->migration_blocker, errp) == 0;
}

static RdmaBackend *pvrdma_backend_new(PvrdmaState *s, Error **errp)
{
#ifdef RDMA_HAVE_IBVERBS
    if (s->params.ibdev) {
        RdmaIbvConfig cfg = {
            .ibdev = s->params.ibdev,
            .ibport = s->params.ibport,
            .mad_chr = &s->params.mad_chr,
        };

        return rdma_ibv_backend_new(&s->rm, PCI_DEVICE(s), &cfg, errp);
    }
#endif
    return rdma_soft_backend_new(&s->rm, PCI_DEVICE(s), errp);
}

static void pvrdma_init_limits(PvrdmaState *s, RdmaDevLimits *l)
{
    const PvrdmaParams *p = &s->params;

    memset(l, 0, sizeof(*l));
    l->max_mr_size = p->max_mr_size;
    l->max_uc = PVRDMA_MAX_UAR;
    l->max_pd = p->max_pd;
    l->max_cq = p->max_cq;
    l->max_cqe = 65536;
    l->max_qp = p->max_qp;
    l->max_qp_wr = 4096;
    l->max_sge = p->max_sge;
    l->max_srq = p->max_srq;
    l->max_srq_wr = 4096;
    l->max_srq_sge = p->max_sge;
    l->max_mr = p->max_mr;
    l->max_ah = p->max_ah;
    /*
     * READs and atomics in flight per QP, as Linux rxe announces: perftest
     * gives a QP the peer's figure, which a device must then accept.
     */
    l->max_qp_rd_atom = 128;
    l->max_qp_init_rd_atom = 128;
    l->max_fast_reg_pages = PVRDMA_MAX_FAST_REG_PAGES;
    l->max_ring_pages = 8192;
    l->max_mr_pages_total = p->max_mr_pages_total;
    l->gid_tbl_len = PVRDMA_GID_TBL_LEN;
    l->max_pkeys = 1;
    l->max_mtu = PVRDMA_MTU_4096;
}

static void pvrdma_realize(PCIDevice *pdev, Error **errp)
{
    PvrdmaState *s = PVRDMA(pdev);
    RdmaDevLimits limits;

    bool fn0_later = pvrdma_function0_later(s);

    if (!pvrdma_check_params(s, errp) ||
        (!fn0_later && !pvrdma_check_function0(s, errp)) ||
        !pvrdma_block_migration(s, errp)) {
        return;
    }

    pci_config_set_interrupt_pin(pdev->config, PVRDMA_INTX_PIN);
    memory_region_init_io(&s->regs, OBJECT(s), &pvrdma_regs_ops, s,
                          "pvrdma-regs", PVRDMA_REGS_SIZE);
    memory_region_init_io(&s->uar, OBJECT(s), &pvrdma_uar_ops, s,
                          "pvrdma-uar", PVRDMA_MAX_UAR * PVRDMA_UAR_PAGE_SIZE);
    memory_region_enable_lockless_io(&s->uar);
    if (msix_init_exclusive_bar(pdev, PVRDMA_MSIX_VECTORS, PVRDMA_BAR_MSIX,
                                errp)) {
        migrate_del_blocker(&s->migration_blocker);
        return;
    }
    for (unsigned v = 0; v < PVRDMA_MSIX_VECTORS; v++) {
        msix_vector_use(pdev, v);
    }
    pci_register_bar(pdev, PVRDMA_BAR_REGS, PCI_BASE_ADDRESS_SPACE_MEMORY,
                     &s->regs);
    pci_register_bar(pdev, PVRDMA_BAR_UAR, PCI_BASE_ADDRESS_SPACE_MEMORY |
                     PCI_BASE_ADDRESS_MEM_TYPE_64, &s->uar);

    s->backend = pvrdma_backend_new(s, errp);
    if (!s->backend) {
        msix_uninit_exclusive_bar(pdev);
        migrate_del_blocker(&s->migration_blocker);
        return;
    }
    pvrdma_init_limits(s, &limits);
    s->backend->ops->limits(s->backend, &limits);
    if (!rdma_rm_init(&s->rm, pdev, s->backend, &limits, &pvrdma_front_ops,
                      s, errp)) {
        s->backend->ops->destroy(s->backend);
        s->backend = NULL;
        msix_uninit_exclusive_bar(pdev);
        migrate_del_blocker(&s->migration_blocker);
        return;
    }
    pvrdma_qp_ops_init(s);
    pvrdma_gid_init(s);
    s->port_up = pvrdma_link_up(s);
    s->link_bh = qemu_bh_new_guarded(pvrdma_link_bh, s,
                                     &DEVICE(s)->mem_reentrancy_guard);
    s->link_timer = timer_new_ns(QEMU_CLOCK_VIRTUAL, pvrdma_link_timer, s);
    timer_mod(s->link_timer, qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL) +
              PVRDMA_LINK_POLL_NS);
    pvrdma_reset_state(s);
    if (fn0_later) {
        s->machine_done.notify = pvrdma_machine_done;
        qemu_add_machine_init_done_notifier(&s->machine_done);
    }
}

/* Every object, the backend and the device's own timers and halves. */
static void pvrdma_teardown(PvrdmaState *s)
{
    if (s->machine_done.notify) {
        qemu_remove_machine_init_done_notifier(&s->machine_done);
        s->machine_done.notify = NULL;
    }
    pvrdma_reset_state(s);
    pvrdma_gid_fini(s);
    timer_free(s->link_timer);
    qemu_bh_delete(s->link_bh);
    pvrdma_qp_ops_fini(s);
    rdma_rm_fini(&s->rm);
    s->backend->ops->destroy(s->backend);
    s->backend = NULL;
    migrate_del_blocker(&s->migration_blocker);
}

static void pvrdma_finish_unplug(void *opaque)
{
    PvrdmaState *s = opaque;

    pvrdma_teardown(s);
    object_unref(OBJECT(s));
}

/*
 * What arrived while the device was inside an entry point, run as the
 * outermost one leaves (rdma_rm_leave()).  An unplug's teardown goes one
 * step further, to a bottom half of its own: the caller may be the
 * ibverbs completion thread, which the teardown joins, and the caller's
 * caller (memory core, bottom half) still writes the device's re-entrancy
 * guard when it returns; the reference taken in pvrdma_exit() keeps the
 * device's memory until then.
 */
void pvrdma_deferred(void *opaque)
{
    PvrdmaState *s = opaque;

    if (s->unplugged) {
        aio_bh_schedule_oneshot(qemu_get_aio_context(), pvrdma_finish_unplug,
                                s);
    } else if (s->reset_pending) {
        pvrdma_reset_state(s);
    }
}

static void pvrdma_exit(PCIDevice *pdev)
{
    PvrdmaState *s = PVRDMA(pdev);

    /* Now, not in a deferred teardown: the slot may be plugged again. */
    rdma_rm_mig_live_unregister(&s->rm);
    if (rdma_rm_defer(&s->rm)) {
        trace_pvrdma_unplug_deferred();
        s->unplugged = true;
        object_ref(OBJECT(s));
    } else {
        pvrdma_teardown(s);
    }
    msix_uninit_exclusive_bar(pdev);
}

static void pvrdma_reset_hold(Object *obj, ResetType type)
{
    pvrdma_request_reset(PVRDMA(obj));
}

static const Property pvrdma_properties[] = {
    DEFINE_PROP_STRING("ibdev", PvrdmaState, params.ibdev),
    DEFINE_PROP_STRING("netdev", PvrdmaState, params.netdev),
    DEFINE_PROP_UINT8("ibport", PvrdmaState, params.ibport, 1),
    DEFINE_PROP_CHR("mad-chardev", PvrdmaState, params.mad_chr),
    DEFINE_PROP_UINT64("dev-caps-max-mr-size", PvrdmaState,
                       params.max_mr_size,
                       (uint64_t)PVRDMA_PAGE_DIR_MAX_PAGES * RDMA_PAGE_SIZE),
    DEFINE_PROP_UINT32("dev-caps-max-qp", PvrdmaState, params.max_qp, 1024),
    DEFINE_PROP_UINT32("dev-caps-max-sge", PvrdmaState, params.max_sge, 32),
    DEFINE_PROP_UINT32("dev-caps-max-cq", PvrdmaState, params.max_cq, 1024),
    DEFINE_PROP_UINT32("dev-caps-max-mr", PvrdmaState, params.max_mr, 4096),
    DEFINE_PROP_UINT32("dev-caps-max-pd", PvrdmaState, params.max_pd, 1024),
    DEFINE_PROP_UINT32("dev-caps-max-ah", PvrdmaState, params.max_ah, 1024),
    DEFINE_PROP_UINT32("dev-caps-max-srq", PvrdmaState, params.max_srq, 512),
    DEFINE_PROP_UINT64("max-mr-pages-total", PvrdmaState,
                       params.max_mr_pages_total, 4 * 1024 * 1024),
};

/* Shown by -device pvrdma,help */
static const char *const pvrdma_property_help[][2] = {
    { "ibdev", "host RDMA device for the ibverbs backend; omit for the "
      "built-in soft backend" },
    { "netdev", "host network interface of ibdev (ibverbs backend)" },
    { "ibport", "port of ibdev (soft backend: 1)" },
    { "mad-chardev", "chardev of rdmacm-mux (ibverbs backend)" },
    { "dev-caps-max-mr-size", "bytes per memory region (4096..1 GiB)" },
    { "dev-caps-max-qp", "queue pairs (4..65536)" },
    { "dev-caps-max-sge", "scatter/gather entries per work request (1..64)" },
    { "dev-caps-max-cq", "completion queues (2..65536)" },
    { "dev-caps-max-mr", "memory regions (2..1048576)" },
    { "dev-caps-max-pd", "protection domains (2..65536)" },
    { "dev-caps-max-ah", "address handles (1..65536)" },
    { "dev-caps-max-srq", "shared receive queues (0..65536, 0: none)" },
    { "max-mr-pages-total", "pages registered over all memory regions" },
};

/*
 * Migration (soft backend).  The device's state is its registers, the DSR
 * as loaded (addresses and the page lists of its rings, which the guest
 * may have changed in its memory since), the core's objects
 * (vmstate_rdma_rm) and the soft engine's QP transport state
 * (vmstate_rdma_soft: PSNs, outstanding WRs, messages in progress);
 * the capabilities, ring maps and budgets are derived again on load.  Work
 * in flight carries over: a send queue left to the bottom half is marked
 * in its QP and resumes on the destination, a WR waiting for an RNR retry
 * or its next step keeps its place and timer.  Everything the device
 * writes to guest memory goes through pci_dma_write() or
 * dma_memory_unmap() with the length written, both of which mark the pages
 * dirty for migration.  GID announcements (gid_told) are only made with
 * the ibverbs backend, which does not migrate.  The manual's "Migration"
 * (docs/system/devices/pvrdma.rst) says what a user sees.
 */

/*
 * A device whose last load failed half-way holds state of the stream
 * that was never checked (rm.loading): it is saved as a device that was
 * reset, which is what it is to its guest (it took no work since).
 */
static int pvrdma_pre_save(void *opaque)
{
    PvrdmaState *s = opaque;

    if (s->rm.loading) {
        warn_report("pvrdma: saving a device whose state did not load: "
                    "as a reset device");
        pvrdma_reset_state(s);
    }
    return 0;
}

static int pvrdma_pre_load(void *opaque)
{
    PvrdmaState *s = opaque;

    if (!rdma_backend_is_soft(s->backend)) {
        error_report("pvrdma: the %s backend cannot take an incoming "
                     "migration (only the soft backend migrates)",
                     s->backend->ops->name);
        return -ENOTSUP;
    }
    pvrdma_reset_state(s);
    /* Until pvrdma_post_load() says all of it holds (AUDIT-3 M3). */
    s->rm.loading = true;
    return 0;
}

/* Why the DSR part of the incoming state is not one a driver could make. */
static const char *pvrdma_dsr_why(PvrdmaState *s)
{
    const char *why = NULL;

    if (!s->dsr_loaded) {
        return s->activated || s->async_ring.pages.npages ||
               s->cq_ring.pages.npages || s->driver_version ||
               s->rm.tables[RDMA_RES_UC].used ||
               s->rm.tables[RDMA_RES_PD].used ||
               s->rm.tables[RDMA_RES_CQ].used ?
               "objects or rings without a DSR" : NULL;
    }
    if (!rdma_mig_expand_pages(&s->async_ring.pages,
                               PVRDMA_DEV_RING_MAX_PAGES, &why) ||
        !rdma_mig_expand_pages(&s->cq_ring.pages, PVRDMA_DEV_RING_MAX_PAGES,
                               &why)) {
        return why;
    }
    if (s->driver_version < PVRDMA_VERSION_ROCEV1 || !s->dsr_addr ||
        !rdma_ram_ok(PCI_DEVICE(s), s->dsr_addr, sizeof(PvrdmaDsr)) ||
        !pvrdma_slot_ok(s, s->cmd_slot) || !pvrdma_slot_ok(s, s->resp_slot)) {
        return "DSR, driver version or command slots invalid";
    }
    if (!rdma_page_list_ok(PCI_DEVICE(s), &s->async_ring.pages, 2,
                           PVRDMA_DEV_RING_MAX_PAGES, true, &why) ||
        !rdma_page_list_ok(PCI_DEVICE(s), &s->cq_ring.pages, 2,
                           PVRDMA_DEV_RING_MAX_PAGES, true, &why)) {
        return why;
    }
    if (!pvrdma_dev_ring_map(s, &s->async_ring, sizeof(PvrdmaEqe)) ||
        !pvrdma_dev_ring_map(s, &s->cq_ring, sizeof(PvrdmaCqne))) {
        return "device rings do not fit their pages";
    }
    return NULL;
}

/* CREATE_BIND takes only the GID type the capabilities announce. */
static const char *pvrdma_gids_why(PvrdmaState *s)
{
    for (uint32_t i = 0; i < s->rm.limits.gid_tbl_len; i++) {
        if (s->rm.gids[i].valid &&
            (!s->dsr_loaded || s->rm.gids[i].type != pvrdma_gid_types(s))) {
            return "a GID of a type the device does not announce";
        }
    }
    return NULL;
}

static int pvrdma_post_load(void *opaque, int version_id)
{
    PvrdmaState *s = opaque;
    const char *why = pvrdma_dsr_why(s);

    if (!why) {
        why = pvrdma_gids_why(s);
    }
    if (why) {
        error_report("pvrdma: incoming device state refused: %s", why);
        pvrdma_reset_state(s);
        s->rm.loading = true;
        return -EINVAL;
    }
    s->rm.loading = false;
    pvrdma_qp_ops_post_load(s);
    return 0;
}

static bool pvrdma_soft_needed(void *opaque)
{
    return rdma_backend_is_soft(PVRDMA(opaque)->backend);
}

static const VMStateDescription vmstate_pvrdma_soft = {
    .name = "pvrdma/soft",
    .version_id = 5,                /* 2: the engine's transport state */
    .minimum_version_id = 5,        /* 3: UD WRs' MAC, hop limit, class */
                                    /* 4: a responder's atomic results */
                                    /* 5: its READ resources */
    .needed = pvrdma_soft_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_STRUCT_POINTER(backend, PvrdmaState, vmstate_rdma_soft,
                               RdmaBackend),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * Right after the config space: its interrupt pin is the device's own.
 * QEMU's PCI load compares only some read-only registers with the
 * device's (cmask), not this one, and every INTx the device raises (no
 * MSI-X) would pass it to pci_set_irq() as a pin number.
 */
static bool pvrdma_pin_ok(void *opaque, int version_id)
{
    uint8_t pin = PCI_DEVICE(opaque)->config[PCI_INTERRUPT_PIN];

    if (pin != PVRDMA_INTX_PIN) {
        error_report("pvrdma: incoming interrupt pin %u, the device's is %u",
                     pin, PVRDMA_INTX_PIN);
        return false;
    }
    return true;
}

static const VMStateDescription vmstate_pvrdma = {
    .name = "pvrdma",
    /* 2: MR key generations, 3: MR pages staged before (rdma-rm) */
    .version_id = 3,
    .minimum_version_id = 3,
    .pre_save = pvrdma_pre_save,
    .pre_load = pvrdma_pre_load,
    .post_load = pvrdma_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_PCI_DEVICE(parent_obj, PvrdmaState),
        VMSTATE_VALIDATE("interrupt pin", pvrdma_pin_ok),
        VMSTATE_MSIX(parent_obj, PvrdmaState),
        VMSTATE_UINT32(dsr_low, PvrdmaState),
        VMSTATE_UINT32(dsr_high, PvrdmaState),
        VMSTATE_UINT32(err, PvrdmaState),
        VMSTATE_UINT32(icr, PvrdmaState),
        VMSTATE_UINT32(imr, PvrdmaState),
        VMSTATE_UINT32(mac_lo, PvrdmaState),
        VMSTATE_UINT32(mac_hi, PvrdmaState),
        VMSTATE_BOOL(dsr_loaded, PvrdmaState),
        VMSTATE_BOOL(activated, PvrdmaState),
        VMSTATE_UINT64(dsr_addr, PvrdmaState),
        VMSTATE_UINT32(driver_version, PvrdmaState),
        VMSTATE_UINT64(cmd_slot, PvrdmaState),
        VMSTATE_UINT64(resp_slot, PvrdmaState),
        VMSTATE_STRUCT(async_ring.pages, PvrdmaState, 1,
                       vmstate_rdma_page_list, RdmaPageList),
        VMSTATE_STRUCT(cq_ring.pages, PvrdmaState, 1,
                       vmstate_rdma_page_list, RdmaPageList),
        VMSTATE_BOOL(port_up, PvrdmaState),
        VMSTATE_STRUCT(rm, PvrdmaState, 1, vmstate_rdma_rm, RdmaResources),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_pvrdma_soft,
        NULL
    },
};

static void pvrdma_class_init(ObjectClass *klass, RDMA_CLASS_DATA *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    PCIDeviceClass *k = PCI_DEVICE_CLASS(klass);
    ResettableClass *rc = RESETTABLE_CLASS(klass);

    k->realize = pvrdma_realize;
    k->exit = pvrdma_exit;
    k->vendor_id = PVRDMA_PCI_VENDOR_ID_VMWARE;
    k->device_id = PVRDMA_PCI_DEVICE_ID;
    k->revision = PVRDMA_REV_ID;
    k->class_id = PCI_CLASS_NETWORK_OTHER;
    dc->desc = "VMware paravirtual RDMA (PVRDMA), function 1 beside a "
               "vmxnet3";
    dc->vmsd = &vmstate_pvrdma;
    rc->phases.hold = pvrdma_reset_hold;
    device_class_set_props(dc, pvrdma_properties);
    for (size_t i = 0; i < ARRAY_SIZE(pvrdma_property_help); i++) {
        object_class_property_set_description(klass,
                                              pvrdma_property_help[i][0],
                                              pvrdma_property_help[i][1]);
    }
    set_bit(DEVICE_CATEGORY_NETWORK, dc->categories);
}

static const TypeInfo pvrdma_types[] = {
    {
        .name = TYPE_PVRDMA,
        .parent = TYPE_PCI_DEVICE,
        .instance_size = sizeof(PvrdmaState),
        .class_init = pvrdma_class_init,
        .interfaces = (InterfaceInfo[]) {
            { INTERFACE_CONVENTIONAL_PCI_DEVICE },
            { }
        },
    },
};

DEFINE_TYPES(pvrdma_types)
