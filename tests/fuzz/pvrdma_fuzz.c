/*
 * libFuzzer targets for the pvrdma device: qemu-fuzz-x86_64
 * --fuzz-target=pvrdma (pc), --fuzz-target=pvrdma-q35 (behind a PCIe
 * root port, config space reachable through MMCFG) or
 * --fuzz-target=pvrdma-migrate (pc, every input on live objects, the
 * device migrated into itself with its saved section changed).
 *
 * Generic byte-level fuzzing rarely gets past the device shared region
 * and the command validation, so this target plays a guest driver whose
 * every decision comes from the input: it loads a DSR, activates the
 * device, runs commands, builds CQ, QP and SRQ rings behind page
 * directories, writes WQEs whose SGEs point into MRs it registered, rings
 * the doorbells, and also writes arbitrary registers, PCI config space,
 * MSI-X table entries (aimed at the device's own BARs and at config space
 * too), raw guest memory over ring indices and WQEs, and unplugs the
 * device.  pvrdma_fuzz.h describes the input.
 *
 * Every input starts from a probed device (DSR loaded, ACTIVATE) on the
 * soft backend and from zeroed guest memory, so an input does the same
 * thing whatever ran before it: after each input the device is reset, and
 * the machine too (as the other qtest-based targets do) when the input
 * changed config space or unplugged the device.  Objects live in a model
 * of what the device returned (handles, keys, rings), which is how later
 * operations find real handles.  The oracle is the sanitizers, QEMU's
 * assertions and the rules of the rings the device shares with a driver
 * (pf_check()).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/config-file.h"
#include "qemu/host-utils.h"
#include "qemu/keyval.h"
#include "qemu/module.h"
#include "qemu/option.h"
#include "qemu/timer.h"
#include "qemu/units.h"
#include "qapi/error.h"
#include "qapi/qapi-commands-misc.h"
#include "qapi/qapi-commands-net.h"
#include "qapi/qapi-commands-pvrdma.h"
#include "qapi/qapi-commands-qdev.h"
#include "qobject/qdict.h"
#include "hw/boards.h"
#include "hw/qdev-core.h"
#include "hw/pci/pci_bridge.h"
#include "hw/pci/pci_bus.h"
#include "hw/pci/pci_device.h"
#include "hw/pci/pci_regs.h"
#include "hw/rdma/vmw/pvrdma_abi.h"
#include "hw/rdma/soft/rdma_soft_wire.h"
#include "io/channel-buffer.h"
#include "migration/qemu-file.h"
#include "migration/savevm.h"
#include "migration/vmstate.h"
#include "net/net.h"
#include "monitor/qdev.h"
#include "system/runstate.h"
#include "tests/qtest/libqtest.h"
#include "tests/qtest/libqos/pci.h"
#include "tests/qtest/libqos/pci-pc.h"
#include "fuzz.h"
#include "pvrdma_fuzz.h"

#define PF_SLOT         0x10        /* pc: 00:10.x; q35: the root port */
#define PF_NIC          "pf-nic0"
#define PF_NETDEV       "pf-n0"         /* function 0's netdev, a hub port */
#define PF_WIRE         "pf-wire"       /* the frames' injector (PF_OP_FRAME) */
#define PF_MMCFG        0xb0000000u /* q35: where "firmware" puts MMCFG */
#define PF_RAM          (32 * MiB)
#define PF_PAGE         4096
#define PF_ARENA_START  (1 * MiB)
#define PF_ARENA_END    (PF_RAM - 1 * MiB)
#define PF_DATA_PAGES   16          /* the data buffer DMA MR SGEs use */
#define PF_DATA_SIZE    (PF_DATA_PAGES * PF_PAGE)
#define PF_MAX_OBJS     32          /* per type; later objects replace */
#define PF_MAX_FRESH    64          /* pages per ring; more are aliases */
#define PF_MAX_PAGES    8192        /* the device's max_ring_pages */
#define PF_MAX_SGE      16          /* SGE specifications per WQE */
#define PF_MAX_OPS      512
#define PF_ACC_ALL      (PVRDMA_ACCESS_LOCAL_WRITE | \
                         PVRDMA_ACCESS_REMOTE_WRITE | \
                         PVRDMA_ACCESS_REMOTE_READ | \
                         PVRDMA_ACCESS_REMOTE_ATOMIC)
#define PF_UD_QKEY      0x1234
#define PF_GSI_QKEY     0x80010000u
#define PF_FR_IOVA      0x40000000ull
#define PF_MR_IOVA      0x7f0000000800ull

/* Object types of the model, in the order the core's tables have them */
enum { PF_UC, PF_PD, PF_CQ, PF_QP, PF_SRQ, PF_MR, PF_NRES };

/* A ring in guest memory, as the driver's pvrdma_ring.h computes slots. */
typedef struct PfRing {
    uint64_t state;                 /* {prod_tail, cons_head} */
    const uint64_t *pages;          /* element pages */
    uint32_t npages;
    uint32_t max_elems;
    uint32_t elem_size;
} PfRing;

typedef struct PfObj {
    uint32_t handle;
    uint32_t qpn;
    uint32_t uar;                   /* the UAR page of its context */
    uint32_t type;                  /* QP type, MR kind */
    uint32_t state;                 /* QP state the target last set */
    uint32_t qkey;
    bool is_srq;
    uint32_t lkey, rkey;            /* FRMR: the key last registered */
    uint64_t iova, length;
    PfRing sq, rq;                  /* QP; CQ and SRQ use rq */
    uint64_t *pages;
    uint32_t npages;
} PfObj;

typedef struct PfState {
    QTestState *qts;
    QPCIBus *bus;
    QPCIDevice *dev;
    QPCIDevice *fn0;
    QPCIBar msix, regs, uar;
    uint8_t msix_cap;
    uint64_t next;                  /* arena allocation pointer */
    bool link_down;
    bool pci_touched;               /* config space or MSI-X written */
    bool tainted;                   /* the input wrote over ring memory */
    bool q35;                       /* behind a root port, with MMCFG */
    bool live;                      /* pvrdma-migrate: live objects first */
    bool vm_stopped;                /* by PF_OP_MIGRATE (STAY_STOPPED) */
    bool mig_failed;                /* a load of this input failed */
    bool mig_dirty;                 /* the last load failed (pf_migrate()) */
    uint8_t *last_stream;           /* the last stream saved */
    size_t last_len;
    uint8_t *clean_stream;          /* of the device reset, no DSR */
    size_t clean_len;
    bool hostile;                   /* raw registers, config, memory... */
    DeviceState *pvrdma;
    BusState *pbus;                 /* the bus the two functions are on */
    uint8_t port_exp;               /* q35: the root port's PCIe cap */
    /* config spaces as enumerated: pvrdma, vmxnet3, root port, MCH */
    PCIDevice *cfg_dev[4];
    uint8_t cfg_saved[4][PCIE_CONFIG_SPACE_SIZE];
    uint64_t data;
    uint64_t dsr, cmd, resp;        /* as the device took them */
    uint32_t version;
    uint64_t *dev_pages[2];         /* async and CQ notification rings */
    PfRing async, cqn;
    uint64_t cookie;
    PfObj obj[PF_NRES][PF_MAX_OBJS];
    uint32_t n[PF_NRES];
} PfState;

static PfState pf;

/* PVRDMA_FUZZ_TRACE=1: one line per operation and command on stderr */
static bool pf_trace;
/* PVRDMA_FUZZ_TRY_AGAIN=1: see pf_migrate() */
static bool pf_try_again;

static const char *const pf_op_names[PF_OP_MAX] = {
    "reg", "uar", "pci", "msix", "mem", "clock", "dsr", "cmd", "send",
    "recv", "poll", "link", "query", "fixture", "rc-pair", "ud-qp",
    "unplug", "frame",
};

/*
 * The GIDs of the inputs.  The device binds 0 and 2 (fixture: its IPv4
 * address and the link-local GID of function 0's MAC) or 0 alone
 * (pvrdma-migrate); 1 is a peer on the link for both.
 */
static const uint8_t pf_gids[3][16] = {
    { [10] = 0xff, [11] = 0xff, 10, 0, 2, 15 },     /* ::ffff:10.0.2.15 */
    { [10] = 0xff, [11] = 0xff, 10, 0, 2, 16 },     /* ::ffff:10.0.2.16 */
    { 0xfe, 0x80, [8] = 0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56 },
};

/* Input parsing */

/* Copy the next @size bytes of the arguments (zero when missing). */
static void pf_args(void *dst, size_t size, const uint8_t **p, size_t *len)
{
    size_t n = MIN(size, *len);

    memset(dst, 0, size);
    memcpy(dst, *p, n);
    *p += n;
    *len -= n;
}

/*
 * XOR @src over @dst (the fuzzer's way to any field of a request).  A
 * changed request may point the device anywhere: no ring invariants for
 * the rest of the input (see pf_check()).
 */
static void pf_xor(PfState *f, void *dst, size_t dlen, const uint8_t *src,
                   size_t slen)
{
    uint8_t *d = dst;
    size_t i;

    for (i = 0; i < MIN(dlen, slen); i++) {
        d[i] ^= src[i];
        f->tainted |= src[i] != 0;
    }
}

/* Guest memory */

static uint64_t pf_alloc(PfState *f, uint64_t npages)
{
    uint64_t a = f->next;

    if (npages > (PF_ARENA_END - f->next) / PF_PAGE) {
        return 0;
    }
    f->next += npages * PF_PAGE;
    return a;
}

/*
 * Zero every page of guest RAM written since the last call (by the target
 * or by the device's DMA), so that an input sees the memory a fresh
 * machine has.  Guest RAM keeps a dirty log for this; clearing in place
 * costs far less than writes through the memory API.
 */
static void pf_clear_ram(void)
{
    MachineState *ms = MACHINE(qdev_get_machine());
    uint8_t *ram = memory_region_get_ram_ptr(ms->ram);
    DirtyBitmapSnapshot *snap;
    uint64_t a;

    if (!memory_region_is_logging(ms->ram, DIRTY_MEMORY_VGA)) {
        memory_region_set_log(ms->ram, true, DIRTY_MEMORY_VGA);
        memset(ram, 0, ms->ram_size);
    }
    snap = memory_region_snapshot_and_clear_dirty(ms->ram, 0, ms->ram_size,
                                                  DIRTY_MEMORY_VGA);
    for (a = 0; a < ms->ram_size; a += PF_PAGE) {
        if (memory_region_snapshot_get_dirty(ms->ram, snap, a, PF_PAGE)) {
            memset(ram + a, 0, PF_PAGE);
        }
    }
    g_free(snap);
}

static void pf_write(PfState *f, uint64_t addr, const void *buf, size_t len)
{
    qtest_memwrite(f->qts, addr, buf, len);
}

/*
 * A page directory over @npages pages (as the driver's pvrdma_page_dir):
 * up to PF_MAX_FRESH fresh pages, the others aliases of them (the guest
 * may map a page twice; it costs the arena nothing).  @pages
 * receives the page addresses.  Returns the directory's address, or 0
 * when the arena is full.  PF_K_* knobs corrupt it.
 */
static uint64_t pf_pdir(PfState *f, uint32_t npages, uint64_t *pages,
                        uint8_t knobs, uint32_t raw, uint32_t bad)
{
    uint32_t ntables = DIV_ROUND_UP(npages, PVRDMA_PDIR_ENTRIES);
    uint32_t nfresh = knobs & PF_K_ALIAS ? 1 : MIN(npages, PF_MAX_FRESH);
    uint64_t dir, tables, fresh;
    uint32_t i, t;

    if (!npages) {
        return 0;
    }
    dir = pf_alloc(f, 1);
    tables = pf_alloc(f, ntables);
    fresh = pf_alloc(f, nfresh);
    if (!dir || !tables || !fresh) {
        return 0;
    }
    /* Page 0 (a ring's state) is never an alias: that is a knob's job. */
    for (i = 0; i < npages; i++) {
        pages[i] = fresh + (uint64_t)(i < nfresh ? i :
                                      nfresh > 1 ? 1 + (i - 1) % (nfresh - 1)
                                                 : 0) * PF_PAGE;
    }
    if (knobs & PF_K_PAGE_RAW) {
        pages[bad % npages] = raw;
    }
    /* Pages shared between rings, or anywhere: rings may overlap. */
    f->tainted |= knobs & (PF_K_PDIR_RAW | PF_K_TABLE_RAW | PF_K_PAGE_RAW |
                           PF_K_ALIAS);
    for (t = 0; t < ntables; t++) {
        uint64_t table = tables + (uint64_t)t * PF_PAGE;
        uint32_t n = MIN(npages - t * PVRDMA_PDIR_ENTRIES,
                         PVRDMA_PDIR_ENTRIES);

        pf_write(f, table, &pages[t * PVRDMA_PDIR_ENTRIES], n * 8);
        qtest_writeq(f->qts, dir + t * 8,
                     t == 0 && (knobs & PF_K_TABLE_RAW) ? raw : table);
    }
    return knobs & PF_K_PDIR_RAW ? raw : dir;
}

/* Rings */

static uint64_t pf_slot(const PfRing *r, uint32_t idx)
{
    uint64_t off = (uint64_t)(idx & (r->max_elems - 1)) * r->elem_size;

    if (!r->max_elems || off / PF_PAGE >= r->npages) {
        return 0;
    }
    return r->pages[off / PF_PAGE] + off % PF_PAGE;
}

static uint32_t pf_ring_next(const PfRing *r, uint32_t idx)
{
    return (idx + 1) & ((r->max_elems << 1) - 1);
}

/* Guest as producer: write @elem at prod_tail, publish unless told not. */
static void pf_ring_put(PfState *f, const PfRing *r, const void *elem,
                        bool publish)
{
    uint32_t tail = qtest_readl(f->qts, r->state);
    uint64_t slot = pf_slot(r, tail);

    if (slot) {
        pf_write(f, slot, elem, r->elem_size);
    }
    if (publish) {
        qtest_writel(f->qts, r->state, pf_ring_next(r, tail));
    }
}

/* Guest as consumer: take up to @count elements (0: all there are). */
static void pf_ring_take(PfState *f, const PfRing *r, uint32_t count)
{
    uint32_t tail, head, i;

    if (!r->max_elems) {
        return;
    }
    tail = qtest_readl(f->qts, r->state);
    head = qtest_readl(f->qts, r->state + 4);
    if (!count) {
        qtest_writel(f->qts, r->state + 4, tail);
        return;
    }
    for (i = 0; i < count && head != tail; i++) {
        head = pf_ring_next(r, head);
    }
    qtest_writel(f->qts, r->state + 4, head);
}

/* Bytes of a WQE with @sge entries, rounded as the driver does. */
static uint64_t pf_wqe_bytes(uint64_t hdr, uint64_t sge)
{
    return pow2ceil(hdr + 16 * MAX(sge, 1));
}

/* Registers and doorbells */

static uint32_t pf_rd(PfState *f, uint32_t reg)
{
    return qpci_io_readl(f->dev, f->regs, reg);
}

static void pf_wr(PfState *f, uint32_t reg, uint32_t val)
{
    qpci_io_writel(f->dev, f->regs, reg, val);
}

static void pf_db(PfState *f, uint32_t page, uint32_t off, uint32_t val)
{
    qpci_io_writel(f->dev, f->uar, (uint64_t)page * PVRDMA_UAR_PAGE_SIZE + off,
                   val);
}

/*
 * q35: the guest-physical address of a config register through MMCFG;
 * @kind 0 is the device's own config space, 1 the root port's, 2 the
 * root port's PCIe capability.  The pc target has no MMCFG: it gives
 * @off & 0xfff (RAM).
 */
static uint64_t pf_cfg_addr(PfState *f, unsigned kind, uint32_t off)
{
    static const uint32_t bdf[] = {
        1 << 20 | 1 << 12,              /* 01:00.1 */
        PF_SLOT << 15,                  /* 00:10.0 */
        PF_SLOT << 15,
    };

    if (!f->q35 || kind > 2) {
        return off & 0xfff;
    }
    return PF_MMCFG + bdf[kind] + (kind == 2 ? f->port_exp + (off & 0xff) :
                                                off & 0xfff);
}

/* The model of the device's objects */

static PfObj *pf_obj(PfState *f, int res, uint8_t sel)
{
    if (sel >= PF_SEL_RAW || !f->n[res]) {
        return NULL;
    }
    return &f->obj[res][sel % f->n[res]];
}

static uint32_t pf_handle(PfState *f, int res, uint8_t sel, uint32_t raw)
{
    PfObj *o = pf_obj(f, res, sel);

    if (o) {
        return o->handle;
    }
    if (sel == PF_SEL_RAW32) {
        return raw;
    }
    return sel >= PF_SEL_RAW ? sel - PF_SEL_RAW : sel & 7;
}

/* A context selector: 0 is the guest kernel's (UAR page 0). */
static uint32_t pf_ctx(PfState *f, uint8_t sel, uint32_t raw, uint32_t *uar)
{
    PfObj *uc = sel && sel < PF_SEL_RAW ? pf_obj(f, PF_UC, sel - 1) : NULL;

    *uar = uc ? uc->uar : 0;
    return uc ? uc->handle : sel ? pf_handle(f, PF_UC, sel, raw) : 0;
}

static void pf_add(PfState *f, int res, PfObj *o)
{
    uint32_t i = f->n[res] < PF_MAX_OBJS ? f->n[res]++ : PF_MAX_OBJS - 1;

    g_free(f->obj[res][i].pages);
    f->obj[res][i] = *o;
    o->pages = NULL;
}

static void pf_del(PfState *f, int res, uint32_t handle)
{
    uint32_t i;

    for (i = 0; i < f->n[res]; i++) {
        if (f->obj[res][i].handle == handle) {
            g_free(f->obj[res][i].pages);
            f->obj[res][i] = f->obj[res][--f->n[res]];
            memset(&f->obj[res][f->n[res]], 0, sizeof(PfObj));
            return;
        }
    }
}

static void pf_forget(PfState *f)
{
    int res;
    uint32_t i;

    for (res = 0; res < PF_NRES; res++) {
        for (i = 0; i < f->n[res]; i++) {
            g_free(f->obj[res][i].pages);
        }
        f->n[res] = 0;
    }
    memset(f->obj, 0, sizeof(f->obj));
}

/* The device shared region */

static bool pf_dev_ring(PfState *f, uint64_t **pages, uint32_t n,
                        uint8_t knobs, uint32_t raw, uint64_t *pdir)
{
    uint32_t build = MIN(MAX(n, 1), 64);

    g_free(*pages);
    *pages = g_new0(uint64_t, build);
    *pdir = pf_pdir(f, build, *pages, knobs, raw, 0);
    return *pdir != 0;
}

static void pf_set_dev_ring(PfRing *r, const uint64_t *pages, uint32_t n,
                            uint32_t elem_size)
{
    memset(r, 0, sizeof(*r));
    if (n >= 2 && n <= 64) {
        r->state = pages[0] + offsetof(PvrdmaRingState, rx);
        r->pages = pages + 1;
        r->npages = n - 1;
        r->max_elems = (n - 1) * PF_PAGE / elem_size;
        r->elem_size = elem_size;
    }
}

/*
 * Load a DSR the way the driver's probe does (then IMR = 0, ACTIVATE);
 * @d's knobs and the XOR bytes change it.  Every object goes with the old
 * DSR, in the device and in the model.
 */
static void pf_load_dsr(PfState *f, const PfDsr *d, const uint8_t *x,
                        size_t xlen)
{
    uint8_t ak = d->knobs & PF_DSR_ALIAS ? PF_K_ALIAS : 0;
    uint32_t na = d->async_pages ? d->async_pages : 4;
    uint32_t nc = d->cq_pages ? d->cq_pages : 4;
    uint64_t addr = pf_alloc(f, 1), cmd = pf_alloc(f, 1);
    uint64_t resp = pf_alloc(f, 1);
    PvrdmaDsr dsr = { 0 };
    uint64_t apdir, cpdir;
    uint32_t err;

    if (!addr || !cmd || !resp) {
        return;
    }
    f->tainted |= d->knobs & (PF_DSR_ADDR_RAW | PF_DSR_RESP_RAW |
                              PF_DSR_PDIR_RAW | PF_DSR_ALIAS);
    dsr.driver_version = d->version ? d->version : PVRDMA_VERSION_QPHANDLE;
    dsr.gos_info = 2 | (1 << 2) | (1 << 6);     /* 64-bit Linux, ver 1 */
    dsr.cmd_slot_dma = d->knobs & PF_DSR_CMD_MMIO ? f->regs.addr : cmd;
    dsr.resp_slot_dma = d->knobs & PF_DSR_RESP_RAW ? d->raw : resp;
    dsr.async_ring_pages.num_pages = na;
    dsr.cq_ring_pages.num_pages = nc;
    if (!pf_dev_ring(f, &f->dev_pages[0], na,
                     ak | (d->knobs & PF_DSR_PDIR_RAW ? PF_K_PDIR_RAW : 0),
                     d->raw, &apdir) ||
        !pf_dev_ring(f, &f->dev_pages[1], nc, ak, 0, &cpdir)) {
        return;
    }
    dsr.async_ring_pages.pdir_dma = apdir;
    dsr.cq_ring_pages.pdir_dma = cpdir;
    dsr.uar_pfn64 = f->uar.addr >> 12;
    pf_xor(f, &dsr, sizeof(dsr), x, xlen);
    pf_write(f, addr, &dsr, sizeof(dsr));
    if (d->knobs & PF_DSR_ADDR_RAW) {
        addr = d->raw;
    }
    if (d->knobs & PF_DSR_HIGH_FIRST) {
        pf_wr(f, PVRDMA_REG_DSRHIGH, addr >> 32);
        pf_wr(f, PVRDMA_REG_DSRLOW, addr);
    } else {
        pf_wr(f, PVRDMA_REG_DSRLOW, addr);
        pf_wr(f, PVRDMA_REG_DSRHIGH, addr >> 32);
    }
    err = pf_rd(f, PVRDMA_REG_ERR);
    if (!(d->knobs & PF_DSR_NO_ACTIVATE)) {
        pf_wr(f, PVRDMA_REG_IMR, 0);
        pf_wr(f, PVRDMA_REG_CTL, d->knobs & PF_DSR_UNQUIESCE ?
              PVRDMA_CTL_UNQUIESCE : PVRDMA_CTL_ACTIVATE);
    }
    pf_forget(f);
    if (err) {
        return;
    }
    /* What the device took: the DSR as written, XOR included. */
    f->version = dsr.driver_version;
    f->dsr = addr;
    f->cmd = dsr.cmd_slot_dma;
    f->resp = dsr.resp_slot_dma;
    pf_set_dev_ring(&f->async, f->dev_pages[0], na, sizeof(PvrdmaEqe));
    pf_set_dev_ring(&f->cqn, f->dev_pages[1], nc, sizeof(PvrdmaCqne));
}

/* Commands */

/* Post a command as the driver does; returns ERR (UINT32_MAX: no slot). */
static uint32_t pf_exec(PfState *f, PvrdmaCmdReq *req, PvrdmaCmdResp *rsp)
{
    uint32_t err;

    if (!f->cmd) {
        return UINT32_MAX;
    }
    req->hdr.response = ++f->cookie;
    pf_write(f, f->cmd, req, sizeof(*req));
    pf_wr(f, PVRDMA_REG_REQUEST, 0);
    err = pf_rd(f, PVRDMA_REG_ERR);
    if (!err && f->resp) {
        qtest_memread(f->qts, f->resp, rsp, sizeof(*rsp));
    }
    if (pf_trace) {
        fprintf(stderr, "pvrdma-fuzz:   command %u: err %u\n", req->hdr.cmd,
                err);
    }
    return err;
}

/* Ring pages of a new object: @o->pages, and the directory's address. */
static uint64_t pf_obj_pages(PfState *f, PfObj *o, uint64_t npages,
                             const PfCmd *c)
{
    o->npages = MIN(MAX(npages, 1), PF_MAX_PAGES);
    o->pages = g_new0(uint64_t, o->npages);
    return pf_pdir(f, o->npages, o->pages, c->knobs, c->raw, c->n[3]);
}

static void pf_set_ring(PfRing *r, const PfObj *o, uint32_t first,
                        uint64_t state, uint64_t npages, uint64_t max_elems,
                        uint64_t elem_size)
{
    memset(r, 0, sizeof(*r));
    if (first >= o->npages || max_elems > (1u << 30) ||
        elem_size > PF_PAGE || !max_elems || !is_power_of_2(max_elems)) {
        return;
    }
    r->state = o->pages[0] + state;
    r->pages = o->pages + first;
    r->npages = MIN(npages, o->npages - first);
    r->max_elems = max_elems;
    r->elem_size = elem_size;
}

static void pf_build_cq(PfState *f, const PfCmd *c, PvrdmaCmdCreateCq *q,
                        PfObj *o)
{
    uint64_t cqe = c->n[0] ? c->n[0] : 64;
    uint64_t npages = (1 + DIV_ROUND_UP(cqe * sizeof(PvrdmaCqe), PF_PAGE)) ^
                      c->n[1];

    q->ctx_handle = pf_ctx(f, c->sel[0], c->raw, &o->uar);
    q->cqe = cqe;
    q->nchunks = npages;
    q->pdir_dma = pf_obj_pages(f, o, npages, c);
    pf_set_ring(&o->rq, o, 1, offsetof(PvrdmaRingState, rx), npages - 1,
                cqe, sizeof(PvrdmaCqe));
}

static const uint8_t pf_qp_types[] = {
    PVRDMA_QPT_RC, PVRDMA_QPT_UD, PVRDMA_QPT_GSI, PVRDMA_QPT_UC,
    PVRDMA_QPT_SMI,
};

static void pf_build_qp(PfState *f, const PfCmd *c, PvrdmaCmdCreateQp *q,
                        PfObj *o)
{
    PfObj *pd = pf_obj(f, PF_PD, c->sel[0]);
    uint64_t send_wr = c->n[0] ? c->n[0] : 16, recv_wr = c->n[1] ? c->n[1] : 16;
    uint64_t send_sge = c->n[2] ? c->n[2] : 4, recv_sge = c->n[3] ? c->n[3] : 4;
    uint64_t ssz = pf_wqe_bytes(sizeof(PvrdmaSqWqeHdr), send_sge);
    uint64_t rsz = pf_wqe_bytes(sizeof(PvrdmaRqWqeHdr), recv_sge);
    uint64_t send = DIV_ROUND_UP(pow2ceil(send_wr) * ssz, PF_PAGE);
    bool is_srq = c->flags & 1;
    uint64_t total = 1 + send +
                     (is_srq ? 0 : DIV_ROUND_UP(pow2ceil(recv_wr) * rsz,
                                                PF_PAGE));

    q->qp_type = c->type < ARRAY_SIZE(pf_qp_types) ? pf_qp_types[c->type]
                                                   : c->type;
    q->pd_handle = pd ? pd->handle : pf_handle(f, PF_PD, c->sel[0], c->raw);
    q->send_cq_handle = pf_handle(f, PF_CQ, c->sel[1], c->raw);
    q->recv_cq_handle = pf_handle(f, PF_CQ, c->sel[2], c->raw);
    q->is_srq = is_srq;
    q->srq_handle = is_srq ? pf_handle(f, PF_SRQ, c->sel[3], c->raw) : 0;
    q->sq_sig_all = (c->flags >> 1) & 1;
    q->max_send_wr = send_wr;
    q->max_recv_wr = recv_wr;
    q->max_send_sge = send_sge;
    q->max_recv_sge = recv_sge;
    q->access_flags = PVRDMA_ACCESS_LOCAL_WRITE ^ c->access;
    q->send_chunks = send;
    q->total_chunks = total;
    q->pdir_dma = pf_obj_pages(f, o, total, c);
    o->type = q->qp_type;
    o->uar = pd ? pd->uar : 0;
    o->is_srq = is_srq;
    o->state = PVRDMA_QPS_RESET;
    pf_set_ring(&o->sq, o, 1, offsetof(PvrdmaRingState, tx), send,
                pow2ceil(send_wr), ssz);
    if (!is_srq) {
        pf_set_ring(&o->rq, o, 1 + send, offsetof(PvrdmaRingState, rx),
                    total - 1 - send, pow2ceil(recv_wr), rsz);
    }
}

static void pf_build_srq(PfState *f, const PfCmd *c, PvrdmaCmdCreateSrq *q,
                         PfObj *o)
{
    PfObj *pd = pf_obj(f, PF_PD, c->sel[0]);
    uint64_t max_wr = c->n[0] ? c->n[0] : 16;
    uint64_t max_sge = c->n[1] ? c->n[1] : 4;
    uint64_t sz = pf_wqe_bytes(sizeof(PvrdmaRqWqeHdr), max_sge);
    uint64_t npages = 1 + DIV_ROUND_UP(pow2ceil(max_wr) * sz, PF_PAGE);

    q->pd_handle = pd ? pd->handle : pf_handle(f, PF_PD, c->sel[0], c->raw);
    q->attrs.max_wr = max_wr;
    q->attrs.max_sge = max_sge;
    q->attrs.srq_limit = c->n[2];
    q->nchunks = npages;
    q->pdir_dma = pf_obj_pages(f, o, npages, c);
    o->uar = pd ? pd->uar : 0;
    pf_set_ring(&o->rq, o, 1, offsetof(PvrdmaRingState, rx), npages - 1,
                pow2ceil(max_wr), sz);
}

static void pf_build_mr(PfState *f, const PfCmd *c, PvrdmaCmdCreateMr *q,
                        PfObj *o)
{
    static const uint32_t flags[] = { 0, PVRDMA_MR_FLAG_DMA,
                                      PVRDMA_MR_FLAG_FRMR };
    uint64_t iova = c->addr ? c->addr : PF_MR_IOVA;
    uint64_t length = c->len ? c->len : 4 * PF_PAGE - (iova & 0xfff);
    uint64_t span;

    q->pd_handle = pf_handle(f, PF_PD, c->sel[0], c->raw);
    q->access_flags = PF_ACC_ALL ^ c->access;
    q->flags = c->type < ARRAY_SIZE(flags) ? flags[c->type] : c->n[2];
    o->type = c->type;
    switch (q->flags) {
    case 0:
        span = DIV_ROUND_UP((iova & 0xfff) + length, PF_PAGE) ^ c->n[0];
        q->start = iova;
        q->length = length;
        q->nchunks = span;
        q->pdir_dma = pf_obj_pages(f, o, span, c);
        o->iova = iova;
        o->length = length;
        break;
    case PVRDMA_MR_FLAG_FRMR:
        q->nchunks = c->n[0] ? c->n[0] : 8;
        break;
    default:
        q->start = c->addr;
        q->length = c->len;
        q->nchunks = c->n[0];
        break;
    }
}

/* QP attributes for a move of @qp to @state, as rc_connect/ud_up do. */
static uint32_t pf_qp_attrs(PfState *f, const PfCmd *c, const PfObj *qp,
                            uint32_t state, PvrdmaQpAttr *a)
{
    uint32_t type = qp ? qp->type : PVRDMA_QPT_RC;
    uint32_t from = qp ? qp->state : PVRDMA_QPS_RESET;
    bool rc = type == PVRDMA_QPT_RC;
    PfObj *dest = pf_obj(f, PF_QP, c->sel[1]);
    uint32_t mask = PVRDMA_QP_STATE;

    a->qp_state = state;
    a->port_num = 1;
    a->qkey = c->addr ? (uint32_t)c->addr :
              type == PVRDMA_QPT_GSI ? PF_GSI_QKEY : PF_UD_QKEY;
    switch (state) {
    case PVRDMA_QPS_INIT:
        a->qp_access_flags = PF_ACC_ALL ^ c->access;
        mask |= PVRDMA_QP_PKEY_INDEX |
                (rc ? PVRDMA_QP_PORT | PVRDMA_QP_ACCESS_FLAGS :
                 type == PVRDMA_QPT_GSI ? PVRDMA_QP_QKEY :
                 PVRDMA_QP_PORT | PVRDMA_QP_QKEY);
        break;
    case PVRDMA_QPS_RTR:
        if (!rc) {
            break;
        }
        a->path_mtu = PVRDMA_MTU_1024;
        a->dest_qp_num = dest ? dest->qpn : c->raw;
        a->rq_psn = 0x100;
        a->max_dest_rd_atomic = 4;
        a->min_rnr_timer = 12 ^ c->n[0];
        memcpy(a->ah_attr.grh.dgid.raw, pf_gids[c->flags % 3], 16);
        a->ah_attr.grh.sgid_index = c->n[1];
        a->ah_attr.grh.hop_limit = 64;
        a->ah_attr.port_num = 1;
        a->ah_attr.ah_flags = 1;
        mask |= PVRDMA_QP_AV | PVRDMA_QP_PATH_MTU | PVRDMA_QP_DEST_QPN |
                PVRDMA_QP_RQ_PSN | PVRDMA_QP_MAX_DEST_RD_ATOMIC |
                PVRDMA_QP_MIN_RNR_TIMER;
        break;
    case PVRDMA_QPS_RTS:
        a->sq_psn = 0x100;
        if (from != PVRDMA_QPS_RTR) {
            break;
        }
        mask |= PVRDMA_QP_SQ_PSN;
        if (rc) {
            a->timeout = 14;
            a->retry_cnt = 7;
            a->rnr_retry = 7 ^ c->n[2];
            a->max_rd_atomic = 4;
            mask |= PVRDMA_QP_TIMEOUT | PVRDMA_QP_RETRY_CNT |
                    PVRDMA_QP_RNR_RETRY | PVRDMA_QP_MAX_QP_RD_ATOMIC;
        }
        break;
    }
    return mask ^ c->n[3];
}

/* MODIFY_QP's target state: PfCmd.type 0 is the next state on the way. */
static uint32_t pf_qp_target(const PfObj *qp, uint8_t type)
{
    static const uint32_t next[PVRDMA_QPS_MAX] = {
        [PVRDMA_QPS_RESET] = PVRDMA_QPS_INIT,
        [PVRDMA_QPS_INIT] = PVRDMA_QPS_RTR,
        [PVRDMA_QPS_RTR] = PVRDMA_QPS_RTS,
        [PVRDMA_QPS_RTS] = PVRDMA_QPS_RTS,
        [PVRDMA_QPS_SQD] = PVRDMA_QPS_RTS,
        [PVRDMA_QPS_SQE] = PVRDMA_QPS_RTS,
        [PVRDMA_QPS_ERR] = PVRDMA_QPS_RESET,
    };
    static const uint32_t states[] = {
        PVRDMA_QPS_INIT, PVRDMA_QPS_RTR, PVRDMA_QPS_RTS, PVRDMA_QPS_SQD,
        PVRDMA_QPS_SQE, PVRDMA_QPS_ERR, PVRDMA_QPS_RESET,
    };

    if (type == 0) {
        return next[qp ? qp->state % PVRDMA_QPS_MAX : 0];
    }
    return type <= ARRAY_SIZE(states) ? states[type - 1] : type;
}

static const uint8_t *pf_gid(const PfCmd *c, uint8_t *raw)
{
    if (c->flags % 4 < 3) {
        return pf_gids[c->flags % 4];
    }
    memcpy(raw, &c->addr, 8);
    memcpy(raw + 8, &c->len, 8);
    return raw;
}

/* Fill the request of @c->cmd; a create also fills the model object @o. */
static void pf_build(PfState *f, const PfCmd *c, uint32_t cmd,
                     PvrdmaCmdReq *req, PfObj *o, uint32_t *target)
{
    static const int destroys[PVRDMA_CMD_MAX] = {
        [PVRDMA_CMD_DESTROY_PD] = PF_PD + 1,
        [PVRDMA_CMD_DESTROY_MR] = PF_MR + 1,
        [PVRDMA_CMD_DESTROY_CQ] = PF_CQ + 1,
        [PVRDMA_CMD_DESTROY_QP] = PF_QP + 1,
        [PVRDMA_CMD_DESTROY_UC] = PF_UC + 1,
        [PVRDMA_CMD_DESTROY_SRQ] = PF_SRQ + 1,
        [PVRDMA_CMD_QUERY_SRQ] = PF_SRQ + 1,
    };
    uint8_t gid[16];

    if (cmd < PVRDMA_CMD_MAX && destroys[cmd]) {
        /* Every destroy has the handle right after the header. */
        req->destroy_pd.pd_handle = pf_handle(f, destroys[cmd] - 1,
                                              c->sel[0], c->raw);
        return;
    }
    switch (cmd) {
    case PVRDMA_CMD_QUERY_PORT:
        req->query_port.port_num = 1 ^ c->n[0];
        break;
    case PVRDMA_CMD_QUERY_PKEY:
        req->query_pkey.port_num = 1 ^ c->n[0];
        req->query_pkey.index = c->n[1];
        break;
    case PVRDMA_CMD_CREATE_PD:
        req->create_pd.ctx_handle = pf_ctx(f, c->sel[0], c->raw, &o->uar);
        break;
    case PVRDMA_CMD_CREATE_MR:
        pf_build_mr(f, c, &req->create_mr, o);
        break;
    case PVRDMA_CMD_CREATE_CQ:
        pf_build_cq(f, c, &req->create_cq, o);
        break;
    case PVRDMA_CMD_RESIZE_CQ:
        req->resize_cq.cq_handle = pf_handle(f, PF_CQ, c->sel[0], c->raw);
        req->resize_cq.cqe = c->n[0] ? c->n[0] : 128;
        break;
    case PVRDMA_CMD_CREATE_QP:
        pf_build_qp(f, c, &req->create_qp, o);
        break;
    case PVRDMA_CMD_MODIFY_QP: {
        PfObj *qp = pf_obj(f, PF_QP, c->sel[0]);

        *target = pf_qp_target(qp, c->type);
        req->modify_qp.qp_handle = qp ? qp->handle : c->raw;
        req->modify_qp.attr_mask = pf_qp_attrs(f, c, qp, *target,
                                               &req->modify_qp.attrs);
        break;
    }
    case PVRDMA_CMD_QUERY_QP:
        req->query_qp.qp_handle = pf_handle(f, PF_QP, c->sel[0], c->raw);
        req->query_qp.attr_mask = ~c->n[0];
        break;
    case PVRDMA_CMD_CREATE_UC: {
        uint32_t index = c->n[0] ? c->n[0] : 1 + f->n[PF_UC];

        req->create_uc.pfn64 = c->knobs & PF_K_RAW_PFN ? c->addr :
                               (f->uar.addr >> 12) + index;
        o->uar = index % (PVRDMA_UAR_PAGE_SIZE / 8);
        break;
    }
    case PVRDMA_CMD_CREATE_BIND:
        req->create_bind.index = c->n[0];
        memcpy(req->create_bind.new_gid, pf_gid(c, gid), 16);
        req->create_bind.gid_type = c->type ? c->type - 1 :
                                    f->version < PVRDMA_VERSION_ROCEV2 ?
                                    PVRDMA_GID_TYPE_FLAG_ROCE_V1 :
                                    PVRDMA_GID_TYPE_FLAG_ROCE_V2;
        req->create_bind.mtu = 1024;
        req->create_bind.vlan = 0xfff;
        break;
    case PVRDMA_CMD_DESTROY_BIND:
        req->destroy_bind.index = c->n[0];
        memcpy(req->destroy_bind.dest_gid, pf_gid(c, gid), 16);
        break;
    case PVRDMA_CMD_CREATE_SRQ:
        pf_build_srq(f, c, &req->create_srq, o);
        break;
    case PVRDMA_CMD_MODIFY_SRQ:
        req->modify_srq.srq_handle = pf_handle(f, PF_SRQ, c->sel[0], c->raw);
        req->modify_srq.attr_mask = PVRDMA_SRQ_LIMIT ^ c->n[1];
        req->modify_srq.attrs.srq_limit = c->n[0];
        break;
    }
}

/* The model learns what a successful command did. */
static void pf_commit(PfState *f, const PfCmd *c, uint32_t cmd,
                      const PvrdmaCmdReq *req, const PvrdmaCmdResp *rsp,
                      PfObj *o, uint32_t target)
{
    PfObj *qp;

    switch (cmd) {
    case PVRDMA_CMD_CREATE_PD:
        o->handle = rsp->create_pd_resp.pd_handle;
        pf_add(f, PF_PD, o);
        break;
    case PVRDMA_CMD_CREATE_MR:
        o->handle = rsp->create_mr_resp.mr_handle;
        o->lkey = rsp->create_mr_resp.lkey;
        o->rkey = rsp->create_mr_resp.rkey;
        pf_add(f, PF_MR, o);
        break;
    case PVRDMA_CMD_CREATE_CQ:
        o->handle = rsp->create_cq_resp.cq_handle;
        pf_add(f, PF_CQ, o);
        break;
    case PVRDMA_CMD_CREATE_QP:
        o->qpn = rsp->create_qp_resp_v2.qpn;
        o->handle = f->version < PVRDMA_VERSION_QPHANDLE ?
                    o->qpn : rsp->create_qp_resp_v2.qp_handle;
        pf_add(f, PF_QP, o);
        break;
    case PVRDMA_CMD_CREATE_UC:
        o->handle = rsp->create_uc_resp.ctx_handle;
        pf_add(f, PF_UC, o);
        break;
    case PVRDMA_CMD_CREATE_SRQ:
        o->handle = rsp->create_srq_resp.srqn;
        pf_add(f, PF_SRQ, o);
        break;
    case PVRDMA_CMD_MODIFY_QP:
        qp = pf_obj(f, PF_QP, c->sel[0]);
        if (qp && qp->handle == req->modify_qp.qp_handle) {
            qp->state = target;
            if (req->modify_qp.attr_mask & PVRDMA_QP_QKEY) {
                qp->qkey = req->modify_qp.attrs.qkey;
            }
        }
        break;
    case PVRDMA_CMD_DESTROY_PD:
        pf_del(f, PF_PD, req->destroy_pd.pd_handle);
        break;
    case PVRDMA_CMD_DESTROY_MR:
        pf_del(f, PF_MR, req->destroy_mr.mr_handle);
        break;
    case PVRDMA_CMD_DESTROY_CQ:
        pf_del(f, PF_CQ, req->destroy_cq.cq_handle);
        break;
    case PVRDMA_CMD_DESTROY_QP:
        pf_del(f, PF_QP, req->destroy_qp.qp_handle);
        break;
    case PVRDMA_CMD_DESTROY_UC:
        pf_del(f, PF_UC, req->destroy_uc.ctx_handle);
        break;
    case PVRDMA_CMD_DESTROY_SRQ:
        pf_del(f, PF_SRQ, req->destroy_srq.srq_handle);
        break;
    }
}

static uint32_t pf_cmd(PfState *f, const PfCmd *c, const uint8_t *x,
                       size_t xlen)
{
    uint32_t cmd = c->cmd < 0xf0 ? c->cmd % PVRDMA_CMD_MAX :
                   c->cmd == 0xff ? 0x80000000u :
                   PVRDMA_CMD_MAX + c->cmd - 0xf0;
    PvrdmaCmdReq req = { 0 };
    PvrdmaCmdResp rsp = { 0 };
    PfObj o = { 0 };
    uint32_t target = 0, err;

    req.hdr.cmd = cmd;
    pf_build(f, c, cmd, &req, &o, &target);
    pf_xor(f, (uint8_t *)&req + sizeof(req.hdr),
           sizeof(req) - sizeof(req.hdr), x, xlen);
    err = pf_exec(f, &req, &rsp);
    if (!err) {
        pf_commit(f, c, cmd, &req, &rsp, &o, target);
    }
    g_free(o.pages);
    return err;
}

/* Work requests */

/* A guest address in @mr at @off (the data buffer for a DMA MR). */
static uint64_t pf_mr_addr(PfState *f, const PfObj *mr, uint64_t off)
{
    if (!mr || mr->type == 1) {
        return f->data + off % PF_DATA_SIZE;
    }
    return mr->iova + (mr->length ? off % mr->length : off);
}

/* Fill @n SGEs from the PfSge specifications of the arguments. */
static uint32_t pf_sges(PfState *f, PvrdmaSge *sge, uint32_t n,
                        const uint8_t **p, size_t *len)
{
    uint32_t i, total = 0;

    for (i = 0; i < n; i++) {
        PfSge s;
        PfObj *mr;

        pf_args(&s, sizeof(s), p, len);
        mr = pf_obj(f, PF_MR, s.mr);
        sge[i].length = s.len;
        sge[i].lkey = mr ? (s.knobs & PF_SGE_RKEY ? mr->rkey : mr->lkey) :
                      (uint32_t)(s.mr - PF_SEL_RAW) << 8;
        if (s.knobs & PF_SGE_KEY_BUMP) {
            sge[i].lkey = (sge[i].lkey & ~0xffu) | ((sge[i].lkey + 1) & 0xff);
        }
        if (s.knobs & PF_SGE_ADDR_CFG) {
            sge[i].addr = pf_cfg_addr(f, s.off >> 12, s.off);
        } else if (s.knobs & PF_SGE_ADDR_UAR) {
            sge[i].addr = f->uar.addr + s.off;
        } else if (s.knobs & PF_SGE_ADDR_RAW) {
            sge[i].addr = (uint64_t)s.off << 12;
            f->tainted = true;
        } else {
            sge[i].addr = pf_mr_addr(f, mr, s.off);
            /* DMA MR: past the data buffer are the rings */
            f->tainted |= (!mr || mr->type == 1) &&
                          s.off % PF_DATA_SIZE + (uint64_t)s.len >
                          PF_DATA_SIZE;
        }
        total += s.len;
    }
    return total;
}

/* FAST_REG_MR: a page list for the FRMR @mr and its next key. */
static void pf_fast_reg(PfState *f, const PfSend *a, PfObj *mr,
                        PvrdmaSqWqeHdr *h)
{
    uint32_t npages = a->fr_npages ? a->fr_npages : 2;
    uint64_t iova = a->fr_iova ? a->fr_iova : PF_FR_IOVA;
    uint32_t key = mr ? mr->rkey : 0;
    PfObj tmp = { 0 };
    PfObj *o = mr ? mr : &tmp;

    key = (key & ~0xffu) | ((key + 1) & 0xff);
    g_free(o->pages);
    o->npages = npages;
    o->pages = g_new0(uint64_t, npages);
    h->wr.fast_reg.iova_start = iova;
    h->wr.fast_reg.pl_pdir_dma = pf_pdir(f, npages, o->pages, 0, 0, 0);
    h->wr.fast_reg.page_shift = 12 ^ a->fr_shift;
    h->wr.fast_reg.page_list_len = npages;
    h->wr.fast_reg.length = a->fr_length ? a->fr_length :
                            npages * PF_PAGE - (iova & 0xfff);
    h->wr.fast_reg.access_flags = PF_ACC_ALL ^ a->fr_access;
    h->wr.fast_reg.rkey = key;
    /* The model takes the registration as done (it usually is). */
    o->lkey = o->rkey = key;
    o->iova = iova;
    o->length = h->wr.fast_reg.length;
    g_free(tmp.pages);
}

static void pf_send_remote(PfState *f, const PfSend *a, const PfObj *qp,
                           PvrdmaSqWqeHdr *h)
{
    PfObj *r = pf_obj(f, PF_MR, a->remote);
    PfObj *dest = pf_obj(f, PF_QP, a->dest);
    uint32_t rkey = r ? r->rkey : a->imm;
    uint64_t raddr = pf_mr_addr(f, r, a->off);

    switch (a->opcode) {
    case PVRDMA_WR_FAST_REG_MR:
        pf_fast_reg(f, a, r, h);
        return;
    case PVRDMA_WR_LOCAL_INV:
    case PVRDMA_WR_SEND_WITH_INV:
        h->ex.invalidate_rkey = rkey ^ a->imm;
        break;
    default:
        h->ex.imm_data = a->imm;
        break;
    }
    if (qp->type == PVRDMA_QPT_UD || qp->type == PVRDMA_QPT_GSI) {
        h->wr.ud.remote_qpn = dest ? dest->qpn : a->dest - PF_SEL_RAW;
        h->wr.ud.remote_qkey = a->qkey ? a->qkey : dest ? dest->qkey : 0;
        memcpy(h->wr.ud.av.dgid, pf_gids[(a->gid & 3) % 3], 16);
        if ((a->gid & 3) == 3) {
            memset(h->wr.ud.av.dgid, 0, 16);
        }
        h->wr.ud.av.gid_index = a->gid >> 2;
        h->wr.ud.av.port_pd = 1;
        h->wr.ud.av.hop_limit = 64;
        return;
    }
    switch (a->opcode) {
    case PVRDMA_WR_ATOMIC_CMP_AND_SWP:
    case PVRDMA_WR_ATOMIC_FETCH_AND_ADD:
        h->wr.atomic.remote_addr = raddr;
        h->wr.atomic.rkey = rkey;
        h->wr.atomic.compare_add = a->compare_add;
        h->wr.atomic.swap = a->swap;
        break;
    case PVRDMA_WR_MASKED_ATOMIC_CMP_AND_SWP:
    case PVRDMA_WR_MASKED_ATOMIC_FETCH_AND_ADD:
        h->wr.masked_atomics.remote_addr = raddr;
        h->wr.masked_atomics.rkey = rkey;
        h->wr.masked_atomics.log_arg_sz = 3;
        h->wr.masked_atomics.wr_data.cmp_swap.swap_val = a->swap;
        h->wr.masked_atomics.wr_data.cmp_swap.compare_val = a->compare_add;
        break;
    default:
        h->wr.rdma.remote_addr = raddr;
        h->wr.rdma.rkey = rkey;
        break;
    }
}

static void pf_op_send(PfState *f, const uint8_t *p, size_t len)
{
    PfSend a;
    PfObj *qp, *remote;
    g_autofree uint8_t *elem = NULL;
    PvrdmaSqWqeHdr *h;
    uint32_t nsge, room;

    pf_args(&a, sizeof(a), &p, &len);
    qp = pf_obj(f, PF_QP, a.qp);
    if (!qp || !qp->sq.max_elems) {
        return;
    }
    elem = g_malloc0(qp->sq.elem_size);
    h = (PvrdmaSqWqeHdr *)elem;
    room = (qp->sq.elem_size - sizeof(*h)) / sizeof(PvrdmaSge);
    nsge = MIN(MIN(a.nsge, PF_MAX_SGE), room);
    h->wr_id = a.wr_id;
    h->opcode = a.opcode;
    h->send_flags = a.flags;
    h->num_sge = a.knobs & PF_WQE_NUM_SGE ? a.num_sge : nsge;
    pf_send_remote(f, &a, qp, h);
    h->total_len = pf_sges(f, (PvrdmaSge *)(elem + sizeof(*h)), nsge, &p,
                           &len);
    remote = pf_obj(f, PF_MR, a.remote);
    f->tainted |= (!remote || remote->type == 1) &&
                  a.off % PF_DATA_SIZE + MAX(h->total_len, 8) > PF_DATA_SIZE;
    pf_xor(f, elem, qp->sq.elem_size, p, len);
    pf_ring_put(f, &qp->sq, elem, !(a.knobs & PF_WQE_NO_PUBLISH));
    if (!(a.knobs & PF_WQE_NO_DB)) {
        pf_db(f, qp->uar, PVRDMA_UAR_QP_OFFSET, qp->handle |
              PVRDMA_UAR_QP_SEND |
              (a.knobs & PF_WQE_BOTH_DB ? PVRDMA_UAR_QP_RECV : 0));
    }
}

static void pf_op_recv(PfState *f, const uint8_t *p, size_t len)
{
    PfRecv a;
    PfObj *o;
    const PfRing *r;
    g_autofree uint8_t *elem = NULL;
    PvrdmaRqWqeHdr *h;
    uint32_t nsge, room;
    bool srq;

    pf_args(&a, sizeof(a), &p, &len);
    srq = a.target & PF_RECV_SRQ;
    o = pf_obj(f, srq ? PF_SRQ : PF_QP, a.target & ~PF_RECV_SRQ);
    if (!o || !o->rq.max_elems) {
        return;
    }
    r = &o->rq;
    elem = g_malloc0(r->elem_size);
    h = (PvrdmaRqWqeHdr *)elem;
    room = (r->elem_size - sizeof(*h)) / sizeof(PvrdmaSge);
    nsge = MIN(MIN(a.nsge, PF_MAX_SGE), room);
    h->wr_id = a.wr_id;
    h->num_sge = a.knobs & PF_WQE_NUM_SGE ? a.num_sge : nsge;
    h->total_len = pf_sges(f, (PvrdmaSge *)(elem + sizeof(*h)), nsge, &p,
                           &len);
    pf_xor(f, elem, r->elem_size, p, len);
    pf_ring_put(f, r, elem, !(a.knobs & PF_WQE_NO_PUBLISH));
    if (a.knobs & PF_WQE_NO_DB) {
        return;
    }
    if (srq) {
        pf_db(f, o->uar, PVRDMA_UAR_SRQ_OFFSET,
              o->handle | PVRDMA_UAR_SRQ_RECV);
    } else {
        pf_db(f, o->uar, PVRDMA_UAR_QP_OFFSET, o->handle | PVRDMA_UAR_QP_RECV |
              (a.knobs & PF_WQE_BOTH_DB ? PVRDMA_UAR_QP_SEND : 0));
    }
}

/* Low-level operations */

static void pf_op_reg(PfState *f, const uint8_t *p, size_t len)
{
    PfReg a;
    uint32_t off;

    pf_args(&a, sizeof(a), &p, &len);
    off = a.reg < 0x40 ? (a.reg % 10) * 4 : a.off & (PF_PAGE - 4);
    if (a.read & 1) {
        pf_rd(f, off);
    } else {
        /* A DSR of whatever DSRLOW and DSRHIGH say */
        f->tainted |= off == PVRDMA_REG_DSRHIGH;
        pf_wr(f, off, a.val);
    }
}

static void pf_op_uar(PfState *f, const uint8_t *p, size_t len)
{
    static const int res[] = { PF_QP, PF_CQ, PF_SRQ };
    PfUar a;
    PfObj *o;
    uint32_t off, handle;

    pf_args(&a, sizeof(a), &p, &len);
    o = pf_obj(f, res[a.kind < 3 ? a.kind : 0], a.sel);
    handle = o ? o->handle : pf_handle(f, PF_QP, a.sel, a.raw);
    off = a.kind < 3 ? a.kind * 4 : a.kind & 0xfc;
    pf_db(f, a.page ? a.page % 512 : o ? o->uar : 0, off,
          ((handle & PVRDMA_UAR_HANDLE_MASK) | (uint32_t)a.flags << 24) ^
          a.xor);
}

static void pf_op_pci(PfState *f, const uint8_t *p, size_t len)
{
    PfPci a;
    QPCIDevice *d;

    pf_args(&a, sizeof(a), &p, &len);
    f->pci_touched = true;
    d = a.fn & 1 ? f->fn0 : f->dev;
    switch (a.size % 3) {
    case 0:
        qpci_config_writeb(d, a.off, a.val);
        break;
    case 1:
        qpci_config_writew(d, a.off & ~1, a.val);
        break;
    default:
        qpci_config_writel(d, a.off & ~3, a.val);
        break;
    }
}

static void pf_op_msix(PfState *f, const uint8_t *p, size_t len)
{
    PfMsix a;
    uint16_t ctl;
    uint64_t addr, entry;

    pf_args(&a, sizeof(a), &p, &len);
    if (!f->msix_cap) {
        return;
    }
    f->pci_touched = true;
    ctl = qpci_config_readw(f->dev, f->msix_cap + PCI_MSIX_FLAGS);
    ctl &= ~(PCI_MSIX_FLAGS_ENABLE | PCI_MSIX_FLAGS_MASKALL);
    ctl |= (a.ctl & PF_MSIX_ENABLE ? PCI_MSIX_FLAGS_ENABLE : 0) |
           (a.ctl & PF_MSIX_FMASK ? PCI_MSIX_FLAGS_MASKALL : 0);
    qpci_config_writew(f->dev, f->msix_cap + PCI_MSIX_FLAGS, ctl);
    if (a.ctl & PF_MSIX_KEEP) {
        return;
    }
    switch (a.target) {
    case PF_MSIX_APIC:
        addr = 0xfee00000ull;
        break;
    case PF_MSIX_RAM:
        addr = f->data + a.off % PF_DATA_SIZE;
        break;
    case PF_MSIX_REGS:
        addr = f->regs.addr + (a.off & (PF_PAGE - 4));
        break;
    case PF_MSIX_UAR:
        addr = f->uar.addr + a.off % (512 * PVRDMA_UAR_PAGE_SIZE);
        break;
    case PF_MSIX_TABLE:
        addr = f->msix.addr + (a.off & (PF_PAGE - 4));
        break;
    case PF_MSIX_CFG:
    case PF_MSIX_PORT:
    case PF_MSIX_PORT_EXP:
        addr = pf_cfg_addr(f, a.target - PF_MSIX_CFG, a.off);
        break;
    default:
        addr = a.off;
        f->tainted = true;
        break;
    }
    entry = (uint64_t)(a.vector % 4) * PCI_MSIX_ENTRY_SIZE;
    qpci_io_writel(f->dev, f->msix, entry + PCI_MSIX_ENTRY_LOWER_ADDR, addr);
    qpci_io_writel(f->dev, f->msix, entry + PCI_MSIX_ENTRY_UPPER_ADDR,
                   addr >> 32);
    qpci_io_writel(f->dev, f->msix, entry + PCI_MSIX_ENTRY_DATA, a.data);
    qpci_io_writel(f->dev, f->msix, entry + PCI_MSIX_ENTRY_VECTOR_CTRL,
                   a.ctl & PF_MSIX_VMASK ? PCI_MSIX_ENTRY_CTRL_MASKBIT : 0);
}

/* The address a PfMem names, or 0. */
static uint64_t pf_mem_addr(PfState *f, const PfMem *a)
{
    PfObj *qp = pf_obj(f, PF_QP, a->sel);
    PfObj *cq = pf_obj(f, PF_CQ, a->sel);
    PfObj *srq = pf_obj(f, PF_SRQ, a->sel);
    uint32_t off = a->off;

    switch (a->target % PF_MEM_MAX) {
    case PF_MEM_SQ_STATE:
        return qp && qp->sq.max_elems ? qp->sq.state + off % 8 : 0;
    case PF_MEM_RQ_STATE:
        return qp && qp->rq.max_elems ? qp->rq.state + off % 8 : 0;
    case PF_MEM_CQ_STATE:
        return cq && cq->rq.max_elems ? cq->rq.state + off % 8 : 0;
    case PF_MEM_SRQ_STATE:
        return srq && srq->rq.max_elems ? srq->rq.state + off % 8 : 0;
    case PF_MEM_ASYNC_STATE:
        return f->async.max_elems ? f->async.state + off % 8 : 0;
    case PF_MEM_CQN_STATE:
        return f->cqn.max_elems ? f->cqn.state + off % 8 : 0;
    case PF_MEM_SQ_WQE:
        return qp && qp->sq.max_elems ?
               pf_slot(&qp->sq, off >> 16) + (off & 0xffff) % qp->sq.elem_size
               : 0;
    case PF_MEM_RQ_WQE:
        return qp && qp->rq.max_elems ?
               pf_slot(&qp->rq, off >> 16) + (off & 0xffff) % qp->rq.elem_size
               : 0;
    case PF_MEM_SRQ_WQE:
        return srq && srq->rq.max_elems ?
               pf_slot(&srq->rq, off >> 16) +
               (off & 0xffff) % srq->rq.elem_size : 0;
    case PF_MEM_DSR:
        return f->dsr ? f->dsr + off % PF_PAGE : 0;
    case PF_MEM_CMD:
        return f->cmd ? f->cmd + off % PF_PAGE : 0;
    case PF_MEM_DATA:
        return f->data + off % PF_DATA_SIZE;
    default:
        return off % PF_RAM;
    }
}

static void pf_op_mem(PfState *f, const uint8_t *p, size_t len)
{
    PfMem a;
    uint64_t addr;

    pf_args(&a, sizeof(a), &p, &len);
    f->tainted = true;
    addr = pf_mem_addr(f, &a);
    if (addr && len) {
        pf_write(f, addr, p, len);
    }
}

static void pf_op_clock(PfState *f, const uint8_t *p, size_t len)
{
    /* IB RNR timer values (IBA table 45) in units of 10 us */
    static const uint32_t rnr_10us[32] = {
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
        384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
        16384, 24576, 32768, 49152,
    };
    PfClock a;
    int64_t ns;

    pf_args(&a, sizeof(a), &p, &len);
    switch (a.kind % 3) {
    case PF_CLOCK_NS:
        ns = 1 + a.ns % (2 * NANOSECONDS_PER_SECOND);
        break;
    case PF_CLOCK_LINK:
        ns = (1 + a.ns % 4) * 200 * SCALE_MS;
        break;
    default:
        ns = rnr_10us[a.ns % 32] * 10 * SCALE_US;
        break;
    }
    qtest_clock_step(f->qts, ns);
}

static void pf_op_poll(PfState *f, const uint8_t *p, size_t len)
{
    PfPoll a;
    PfObj *cq;

    pf_args(&a, sizeof(a), &p, &len);
    switch (a.ring % 3) {
    case PF_POLL_CQ:
        cq = pf_obj(f, PF_CQ, a.sel);
        if (!cq) {
            return;
        }
        pf_ring_take(f, &cq->rq, a.count);
        if (a.knobs & (PF_POLL_ARM | PF_POLL_ARM_SOL)) {
            pf_db(f, cq->uar, PVRDMA_UAR_CQ_OFFSET, cq->handle |
                  (a.knobs & PF_POLL_ARM ? PVRDMA_UAR_CQ_ARM : 0) |
                  (a.knobs & PF_POLL_ARM_SOL ? PVRDMA_UAR_CQ_ARM_SOL : 0));
        }
        break;
    case PF_POLL_ASYNC:
        pf_ring_take(f, &f->async, a.count);
        break;
    default:
        pf_ring_take(f, &f->cqn, a.count);
        break;
    }
}

static void pf_op_link(PfState *f, const uint8_t *p, size_t len)
{
    PfLink a;
    Error *err = NULL;

    pf_args(&a, sizeof(a), &p, &len);
    f->link_down = a.down & 1;
    /* (fails when the input unplugged the NIC) */
    qmp_set_link(PF_NIC, !f->link_down, &err);
    error_free(err);
}

/*
 * A frame from the link arrives at the hub port PF_WIRE, as a peer's
 * netdev would hand it over; the hub passes it on to function 0's netdev
 * (pf_cmdline()), whose filters, the device's port first, see it before
 * the vmxnet3 does.  Not qemu_send_packet(@inj): that sends from the port
 * to its own peer, and PF_WIRE has none, so nothing ever arrived.  Not
 * qemu_receive_packet() either: it asks the hub, which asks the vmxnet3,
 * whether the frame can be taken now, and an inactive vmxnet3 (no driver
 * in the fuzzer) says no; a netdev like dgram or tap hands the frame to
 * the filters whatever the NIC's state.
 */
static void pf_wire_send(NetClientState *inj, const uint8_t *frame, size_t n)
{
    inj->info->receive(inj, frame, n);
}

/* A frame from the link (PfFrame), through pf_wire_send(). */
static void pf_op_frame(PfState *f, const uint8_t *p, size_t len)
{
    static uint8_t frame[9018];
    static uint8_t payload[4096];
    PfFrame a;
    PfObj *qp, *mr;
    RdmaSoftPkt pkt = { 0 };
    RdmaSoftWireAddr wa = { .hop_limit = 64, .udp_sport = 0xc001 };
    NetClientState *inj = qemu_find_netdev(PF_WIRE);
    bool v6;
    size_t n = 0, start, l3;

    pf_args(&a, sizeof(a), &p, &len);
    if (!inj) {
        return;
    }
    if (a.flags & PF_FRAME_RAW) {
        n = MIN(len, sizeof(frame));
        memcpy(frame, p, n);
        pf_wire_send(inj, frame, n);
        return;
    }
    qp = pf_obj(f, PF_QP, a.qp);
    mr = pf_obj(f, PF_MR, 0);
    pkt.opcode = a.opcode;
    pkt.mask = rdma_soft_op_info(a.opcode) ?
               rdma_soft_op_info(a.opcode)->mask : 0;
    pkt.psn = (a.psn ? a.psn : 0x100) & 0xffffff;
    pkt.dest_qpn = ((qp ? qp->qpn : 1) ^ a.qpn_xor) & 0xffffff;
    pkt.ackreq = a.ackreq & 1;
    pkt.se = a.ackreq & 2;
    pkt.va = a.va ? a.va : f->data;
    pkt.rkey = a.rkey ? a.rkey : mr ? mr->rkey : 0;
    pkt.swap_add = a.swap_add;
    pkt.compare = a.compare;
    pkt.syndrome = a.syndrome;
    pkt.msn = a.msn & 0xffffff;
    pkt.orig = a.orig;
    pkt.imm = a.imm;
    pkt.inv_rkey = a.inv_rkey;
    pkt.qkey = a.qkey ? a.qkey : 0x1234;
    pkt.src_qpn = a.src_qpn & 0xffffff;
    /*
     * From and to GIDs of pf_gids[] (ackreq bits 2-3 and 4-5); the default,
     * GID 0 both ways, is what the target's RC pairs are connected to.
     */
    memcpy(pkt.sgid, pf_gids[((a.ackreq >> 2) & 3) % 3], 16);
    memcpy(pkt.dgid, pf_gids[((a.ackreq >> 4) & 3) % 3], 16);
    if (!(a.flags & PF_FRAME_XOR) && (pkt.mask & RDMA_PKT_PAYLOAD)) {
        pkt.paylen = MIN(len, sizeof(payload));
        memcpy(payload, p, pkt.paylen);
    }
    pkt.dma_len = a.dma_len ? a.dma_len : pkt.paylen;
    memcpy(wa.dst_mac, "\x52\x54\x00\x12\x34\x56", 6);
    memcpy(wa.src_mac, "\x52\x54\x00\x65\x43\x21", 6);
    wa.vlan = a.flags & PF_FRAME_VLAN;
    n = rdma_soft_wire_build(frame, sizeof(frame), &pkt, &wa, payload);
    if (!n) {
        return;                 /* not a frame the layer can build */
    }
    v6 = pkt.sgid[0] == 0xfe;
    if (a.flags & PF_FRAME_XOR) {
        /* Over the BTH and what follows; then the ICRC made good again. */
        start = RDMA_WIRE_ETH_LEN + (wa.vlan ? RDMA_WIRE_VLAN_LEN : 0);
        l3 = (v6 ? RDMA_WIRE_IPV6_LEN : RDMA_WIRE_IPV4_LEN) +
             RDMA_WIRE_UDP_LEN;
        /* (not pf_xor(): a peer breaking the rules is no excuse) */
        for (size_t i = 0; i < MIN(n - start - l3 - RDMA_ICRC_LEN, len);
             i++) {
            frame[start + l3 + i] ^= p[i];
        }
        if (!(a.flags & PF_FRAME_ICRC)) {
            uint32_t icrc = rdma_soft_icrc(frame + start,
                                           n - start - RDMA_ICRC_LEN);

            stl_le_p(frame + n - RDMA_ICRC_LEN, icrc);
        }
    }
    pf_wire_send(inj, frame, n);
    if (a.flags & PF_FRAME_TWICE) {
        pf_wire_send(inj, frame, n);
    }
}

/* query-pvrdma, or (PfQuery.hmp bit 0) HMP "info pvrdma" that shows it. */
static void pf_op_query(PfState *f, const uint8_t *p, size_t len)
{
    PfQuery a;

    pf_args(&a, sizeof(a), &p, &len);
    if (a.hmp & 1) {
        g_free(qmp_human_monitor_command("info pvrdma", false, 0,
                                         &error_abort));
    } else {
        qapi_free_PvrdmaInfoList(qmp_query_pvrdma(&error_abort));
    }
}

/*
 * Hot-unplug the slot: pc ejects it through ACPI PCI hotplug, q35 powers
 * the root port's slot off (as the guest's pciehp does after device_del).
 * pf_end() plugs the two functions in again.
 */
static void pf_op_unplug(PfState *f, const uint8_t *p, size_t len)
{
    PfUnplug a;

    pf_args(&a, sizeof(a), &p, &len);
    if (!(a.no_del & 1)) {
        Error *err = NULL;

        qmp_device_del("rdma", &err);
        error_free(err);
        flush_events(f->qts);
    }
    if (f->q35) {
        qtest_writew(f->qts, pf_cfg_addr(f, 2, PCI_EXP_SLTCTL),
                     PCI_EXP_SLTCTL_PCC | PCI_EXP_SLTCTL_PWR_IND_OFF);
    } else {
        qtest_outl(f->qts, 0xae00 + 8, 1u << PF_SLOT);   /* ACPI PCIHP EJ */
    }
}

/*
 * Migration (PF_OP_MIGRATE): the device's section saved and loaded back
 * into the same device, in process, with QEMU's vmstate functions over a
 * buffer channel, as a source's device state and a destination's load
 * would be (the RAM is already in place: it is the same).  The device's
 * pre_load resets it, so the load starts from what a fresh destination
 * has.  Both happen with the VM stopped, as they do in a real migration
 * (the source stops before its devices are saved, the destination runs
 * only after they loaded): vm_stop() and vm_start() work here, the
 * qtest accelerator's vCPU threads only wait for a kick, and they run the
 * device's VM state handlers (send queues and the engine resume).  A load
 * that fails leaves the device refusing work (rm.loading) until a good
 * load or a reset; the input goes on, its operations refused.
 */

static bool pf_gone(void);

static const VMStateDescription *pf_vmsd(PfState *f)
{
    return DEVICE_GET_CLASS(f->pvrdma)->vmsd;
}

/*
 * The section as a source would send it, with the footer that follows it
 * in a stream (a load peeks past the section for subsections); NULL when
 * the save failed.
 */
static uint8_t *pf_mig_save(PfState *f, size_t *len)
{
    QIOChannelBuffer *bioc = qio_channel_buffer_new(4096);
    QEMUFile *file = qemu_file_new_output(QIO_CHANNEL(bioc));
    uint8_t *buf = NULL;
    int ret;

    ret = vmstate_save_state(file, pf_vmsd(f), f->pvrdma, NULL);
    if (!ret) {
        qemu_put_byte(file, QEMU_VM_SECTION_FOOTER);
        ret = qemu_fflush(file);
    }
    if (!ret) {
        /* (qemu_fclose() frees the channel's data) */
        *len = bioc->usage;
        buf = g_memdup2(bioc->data, bioc->usage);
    }
    qemu_fclose(file);
    object_unref(OBJECT(bioc));
    return buf;
}

/* Load @len bytes into the device; 0 when both it and the stream agree. */
static int pf_mig_load(PfState *f, const uint8_t *buf, size_t len,
                       int version)
{
    QIOChannelBuffer *bioc = qio_channel_buffer_new(MAX(len, 1));
    QEMUFile *file;
    int ret;

    memcpy(bioc->data, buf, len);
    bioc->usage = len;
    file = qemu_file_new_input(QIO_CHANNEL(bioc));
    ret = vmstate_load_state(file, pf_vmsd(f), f->pvrdma, version);
    /* As qemu_loadvm_state(): the footer, and no read past the end */
    if (!ret && qemu_get_byte(file) != QEMU_VM_SECTION_FOOTER) {
        ret = -EINVAL;
    }
    if (!ret) {
        ret = qemu_file_get_error(file);
    }
    qemu_fclose(file);
    object_unref(OBJECT(bioc));
    if (pf_trace) {
        fprintf(stderr, "pvrdma-fuzz:   load of %zu bytes: %d\n", len, ret);
    }
    return ret;
}

static void pf_mig_edit(uint8_t *buf, size_t len, const PfMigEdit *e)
{
    size_t off;

    if (!len) {
        return;
    }
    off = e->off % len;
    if (e->kind % 4 == PF_MIG_XOR8) {
        buf[off] ^= (uint8_t)e->val ? (uint8_t)e->val : 0xff;
        return;
    }
    if (len < 4) {
        return;
    }
    off = MIN(off, len - 4);
    switch (e->kind % 4) {
    case PF_MIG_SET32:
        stl_be_p(buf + off, e->val);
        break;
    case PF_MIG_XOR32:
        stl_be_p(buf + off, ldl_be_p(buf + off) ^ e->val);
        break;
    default:
        stl_be_p(buf + off, ldl_be_p(buf + off) + e->val);
        break;
    }
}

/* The bus that counts INTx pin @pin of @d, and its IRQ (as pci.c does) */
static PCIBus *pf_intx_bus(PCIDevice *d, int pin, int *irq)
{
    PCIBus *bus;

    for (;;) {
        bus = pci_get_bus(d);
        pin = bus->map_irq(d, pin);
        if (bus->set_irq) {
            break;
        }
        d = bus->parent_dev;
    }
    *irq = pin;
    return bus;
}

static void pf_vm_stop(PfState *f)
{
    if (!f->vm_stopped) {
        vm_stop(RUN_STATE_PAUSED);
        f->vm_stopped = true;
    }
}

static void pf_vm_start(PfState *f)
{
    if (f->vm_stopped) {
        vm_start();
        f->vm_stopped = false;
    }
}

/*
 * Save, change, load.  Returns the load's result (1: nothing loaded, the
 * device is gone or its save failed).  A changed stream may load MSI-X
 * table entries or config space other than what the input set: then the
 * machine is reset after the input (pf_end()), as after the PCI op.
 */
static int pf_migrate(PfState *f, const PfMigrate *a, const uint8_t *p,
                      size_t len)
{
    PCIDevice *pd;
    g_autofree uint8_t *buf = NULL;
    g_autofree uint8_t *table = NULL;
    size_t n = 0, tsize;
    bool changed = false;
    int ret, intx, irq = 0, count = 0;
    PCIBus *bus;

    if (pf_gone()) {
        return 1;
    }
    pd = PCI_DEVICE(f->pvrdma);
    pf_vm_stop(f);
    /*
     * A device whose last load failed half-way is saved as a reset
     * device (savevm after a failed loadvm: pvrdma_pre_save()).  With
     * PVRDMA_FUZZ_TRY_AGAIN=1 it is not saved: it takes the last stream
     * again (a destination that tries again), changed anew.
     */
    if (f->mig_dirty && pf_try_again) {
        if (!f->last_stream) {
            return 1;
        }
        n = f->last_len;
        buf = g_memdup2(f->last_stream, n);
    } else {
        buf = pf_mig_save(f, &n);
        if (!buf) {
            return 1;
        }
        g_free(f->last_stream);
        f->last_stream = g_memdup2(buf, n);
        f->last_len = n;
    }
    while (len) {
        PfMigEdit e;

        pf_args(&e, sizeof(e), &p, &len);
        pf_mig_edit(buf, n, &e);
        changed = true;
    }
    if (a->cut) {
        n = a->cut % (n + 1);
        changed = true;
    }
    tsize = pd->msix_table ? pd->msix_entries_nr * PCI_MSIX_ENTRY_SIZE : 0;
    table = tsize ? g_memdup2(pd->msix_table, tsize) : NULL;
    /*
     * INTx: the section sets the device's pin level without the bus, whose
     * counts a destination loads from its own section (PCIBUS), not loaded
     * here; and a device's reset in pre_load or a refusing post_load takes
     * the pin down through the bus.  So the pin goes down before the load
     * (the device counts for nothing, as on a fresh destination) and after
     * it the bus counts what loaded, as the bus's section would have it;
     * otherwise the bus's count goes wrong at the next reset.
     */
    intx = pci_intx(pd);
    bus = intx >= 0 && intx < PCI_NUM_PINS ? pf_intx_bus(pd, intx, &irq)
                                           : NULL;
    if (bus) {
        pci_set_irq(pd, 0);
        count = bus->irq_count[irq];
    }
    ret = pf_mig_load(f, buf, n, a->version ? a->version
                                            : pf_vmsd(f)->version_id);
    if (bus) {
        int want = (pd->irq_state >> intx) & 1 &&
                   !(pci_get_word(pd->config + PCI_COMMAND) &
                     PCI_COMMAND_INTX_DISABLE);

        bus->irq_count[irq] += want - (bus->irq_count[irq] - count);
        bus->set_irq(bus->irq_opaque, irq, bus->irq_count[irq] != 0);
    }
    if (tsize && memcmp(table, pd->msix_table, tsize)) {
        f->pci_touched = true;
    }
    /* Whatever loaded may point anywhere: no ring rules from here on */
    f->tainted |= changed || a->version;
    f->hostile |= changed || a->version;
    f->mig_failed |= ret != 0;
    f->mig_dirty = ret != 0;
    return ret;
}

/*
 * A device whose last load failed takes the clean stream before the
 * input ends, so that pvrdma-migrate's last migration starts from a
 * device that loaded.
 */
static void pf_mig_clean(PfState *f)
{
    bool stopped = f->vm_stopped;

    if (pf_gone()) {
        f->mig_dirty = false;
    }
    if (!f->mig_dirty || !f->clean_stream) {
        return;
    }
    pf_vm_stop(f);
    /* (config space the input changed can refuse it: still dirty then) */
    if (!pf_mig_load(f, f->clean_stream, f->clean_len,
                     pf_vmsd(f)->version_id)) {
        f->mig_dirty = false;
    } else if (pf_trace) {
        fprintf(stderr, "pvrdma-fuzz: the clean stream did not load\n");
    }
    if (!stopped) {
        pf_vm_start(f);
    }
}

static void pf_op_migrate(PfState *f, const uint8_t *p, size_t len)
{
    PfMigrate a;

    pf_args(&a, sizeof(a), &p, &len);
    pf_migrate(f, &a, p, len);
    if (!(a.knobs & PF_MIG_STAY_STOPPED)) {
        pf_vm_start(f);
    }
}

/*
 * pvrdma-migrate: at the end of every input the device migrates once
 * more, unchanged.  What a driver and peers on the link made (the input
 * wrote no raw register, config space, MSI-X entry or memory, changed no
 * request and no stream, and every load of it went well) must load: a
 * device state that a guest can reach and its destination refuses is a
 * failed migration.
 */
static void pf_mig_final(PfState *f)
{
    PfMigrate a = { 0 };
    bool must = !f->hostile && !f->tainted && !f->mig_failed;
    int ret = pf_migrate(f, &a, NULL, 0);

    pf_vm_start(f);
    if (ret < 0 && must) {
        fprintf(stderr, "pvrdma-fuzz: the device refused its own state "
                "(%d)\n", ret);
        abort();
    }
}

/* Driver-like compound operations */

static void pf_op_fixture(PfState *f)
{
    PfCmd c = { .cmd = PVRDMA_CMD_CREATE_PD };

    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_BIND };
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_BIND, .flags = 2, .n[0] = 1 };
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 1,
                  .sel[0] = f->n[PF_PD] - 1 };
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ };
    pf_cmd(f, &c, NULL, 0);
    pf_cmd(f, &c, NULL, 0);
}

/* Create a QP and bring it to RTS (RC: connected to @dest_sel's QP). */
static void pf_qp_up(PfState *f, uint8_t qp_sel, uint8_t dest_sel,
                     uint8_t dgid, uint32_t access, uint8_t min_rnr,
                     uint8_t rnr_retry, uint32_t qkey)
{
    uint8_t type;

    for (type = 1; type <= 3; type++) {
        PfCmd c = { .cmd = PVRDMA_CMD_MODIFY_QP, .type = type,
                    .sel = { qp_sel, dest_sel }, .access = access,
                    .flags = dgid, .n = { min_rnr, 0, rnr_retry },
                    .addr = qkey };

        pf_cmd(f, &c, NULL, 0);
    }
}

static void pf_op_rc_pair(PfState *f, const uint8_t *p, size_t len)
{
    PfRcPair a;
    PfCmd c;
    uint32_t n0 = f->n[PF_QP];
    uint8_t i;

    pf_args(&a, sizeof(a), &p, &len);
    for (i = 0; i < 2; i++) {
        c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP,
                      .sel = { a.pd, a.scq, a.rcq, a.srq - 1 },
                      .flags = (a.srq ? 1 : 0) | ((a.sig_all >> i) & 1) << 1,
                      .n = { a.send_wr, a.recv_wr, a.send_sge, a.recv_sge } };
        pf_cmd(f, &c, NULL, 0);
    }
    if (f->n[PF_QP] != n0 + 2) {
        return;
    }
    pf_qp_up(f, n0, n0 + 1, a.link, 0, 0, a.rnr_retry, 0);
    pf_qp_up(f, n0 + 1, n0, a.link, a.access_b, a.min_rnr, 0, 0);
}

static void pf_op_ud_qp(PfState *f, const uint8_t *p, size_t len)
{
    PfUdQp a;
    uint32_t n0 = f->n[PF_QP];
    PfCmd c;

    pf_args(&a, sizeof(a), &p, &len);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .type = a.gsi & 1 ? 2 : 1,
                  .sel = { a.pd, a.scq, a.rcq, a.srq - 1 },
                  .flags = a.srq ? 1 : 0 };
    pf_cmd(f, &c, NULL, 0);
    if (f->n[PF_QP] == n0 + 1) {
        pf_qp_up(f, n0, 0, 0, 0, 0, 0, a.qkey);
    }
}

/* A send (@a a PfSend) or receive (PfRecv) of the preamble below. */
static void pf_live_wr(PfState *f, bool send, const void *a, PfSge g)
{
    uint8_t buf[sizeof(PfSend) + sizeof(PfSge)];
    size_t alen = send ? sizeof(PfSend) : sizeof(PfRecv);
    bool sge = !send || ((const PfSend *)a)->opcode != PVRDMA_WR_FAST_REG_MR;

    memcpy(buf, a, alen);
    if (send) {
        ((PfSend *)buf)->nsge = sge;
    } else {
        ((PfRecv *)buf)->nsge = 1;
    }
    memcpy(buf + alen, &g, sizeof(g));
    if (send) {
        pf_op_send(f, buf, alen + (sge ? sizeof(g) : 0));
    } else {
        pf_op_recv(f, buf, alen + sizeof(g));
    }
}

/*
 * pvrdma-migrate: what every input starts from, live objects of every
 * kind and work in flight, so that its migrations carry them.  Objects
 * (selectors): PD 0; GID 0 (10.0.2.15) only, so that GID 1 is a peer on
 * the link; MRs 0 DMA, 1 user over 3 pages, 2 FRMR (registered by QP
 * 0); CQs 0 and 1; SRQ 0 with two receives; QPs 0-1 an RC pair (QP 1 has
 * one receive, QP 0 sent two SENDs: the second waits for an RNR retry),
 * 2-3 an RC pair on the SRQ, 4 UD and 5 GSI with a receive each, 6 an RC
 * QP connected to QP 0x77 of GID 1 across the link, with a READ and a
 * SEND outstanding (a READ response frame from GID 1 completes the first:
 * PfFrame.ackreq 0x04).
 */
static void pf_live(PfState *f)
{
    PfCmd c;
    PfRecv r = { 0 };
    PfSend w = { .opcode = PVRDMA_WR_SEND, .flags = PVRDMA_SEND_SIGNALED };
    PfSge g = { .mr = 0, .off = 0, .len = 64 };
    uint8_t type;

    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_PD };
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_BIND };
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 1 };
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .len = 2 * PF_PAGE + 0x100 };
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_MR, .type = 2 };
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_CQ };
    pf_cmd(f, &c, NULL, 0);
    pf_cmd(f, &c, NULL, 0);
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_SRQ, .n = { 8, 2, 2 } };
    pf_cmd(f, &c, NULL, 0);
    pf_op_rc_pair(f, (const uint8_t *)&(PfRcPair) { .rcq = 1,
                                                   .min_rnr = 12 ^ 1 },
                  sizeof(PfRcPair));
    pf_op_rc_pair(f, (const uint8_t *)&(PfRcPair) { .rcq = 1, .srq = 1 },
                  sizeof(PfRcPair));
    pf_op_ud_qp(f, (const uint8_t *)&(PfUdQp) { .rcq = 1 }, sizeof(PfUdQp));
    pf_op_ud_qp(f, (const uint8_t *)&(PfUdQp) { .gsi = 1, .rcq = 1 },
                sizeof(PfUdQp));
    c = (PfCmd) { .cmd = PVRDMA_CMD_CREATE_QP, .sel = { 0, 0, 1 } };
    pf_cmd(f, &c, NULL, 0);
    for (type = 1; type <= 3; type++) {
        c = (PfCmd) { .cmd = PVRDMA_CMD_MODIFY_QP, .type = type,
                      .sel = { 6, PF_SEL_RAW32 }, .flags = 1, .raw = 0x77 };
        pf_cmd(f, &c, NULL, 0);
    }
    /* Receives: QP 1, the SRQ (twice), UD, GSI */
    r.target = 1;
    pf_live_wr(f, false, &r, (PfSge) { .off = PF_PAGE, .len = 64 });
    r.target = PF_RECV_SRQ;
    pf_live_wr(f, false, &r,
               (PfSge) { .off = 2 * PF_PAGE, .len = 64 });
    pf_live_wr(f, false, &r,
               (PfSge) { .off = 2 * PF_PAGE + 64, .len = 64 });
    r.target = 4;
    pf_live_wr(f, false, &r,
               (PfSge) { .off = 3 * PF_PAGE, .len = 256 });
    r.target = 5;
    pf_live_wr(f, false, &r,
               (PfSge) { .off = 4 * PF_PAGE, .len = 256 });
    /* The FRMR registered; two SENDs, the second waits for a receive */
    pf_live_wr(f, true, &(PfSend) { .qp = 0,
                                    .opcode = PVRDMA_WR_FAST_REG_MR,
                                    .remote = 2 }, (PfSge) { 0 });
    w.qp = 0;
    w.wr_id = 0xa1;
    pf_live_wr(f, true, &w, g);
    w.wr_id = 0xa2;
    pf_live_wr(f, true, &w, g);
    /* Across the link: a READ and a SEND nobody answers yet */
    pf_live_wr(f, true, &(PfSend) { .qp = 6, .opcode = PVRDMA_WR_RDMA_READ,
                                    .flags = PVRDMA_SEND_SIGNALED,
                                    .remote = 0, .off = 8 * PF_PAGE,
                                    .wr_id = 0xc1 },
               (PfSge) { .off = 5 * PF_PAGE, .len = 128 });
    w.qp = 6;
    w.wr_id = 0xc2;
    pf_live_wr(f, true, &w, g);
    flush_events(f->qts);
}

/*
 * What the device must never do to the rings it shares with a driver that
 * follows the rules: write an index outside the ring (a producer's tail,
 * a consumer's head), or produce more elements than its rings hold (CQ
 * overrun, lost events must be reported, never written over).  Checked
 * after every operation of an input that has not itself written over
 * ring memory (raw writes, changed requests, shared or raw pages: then
 * the guest broke the rules first).
 */
static void pf_check_ring(const char *what, uint32_t handle, const PfRing *r,
                          bool device_produces)
{
    uint32_t tail, head, mask;

    if (!r->max_elems) {
        return;
    }
    tail = qtest_readl(pf.qts, r->state);
    head = qtest_readl(pf.qts, r->state + 4);
    mask = (r->max_elems << 1) - 1;
    if (device_produces ? (tail & ~mask) ||
                          (is_power_of_2(r->max_elems) &&
                           ((tail - head) & mask) > r->max_elems)
                        : (head & ~mask)) {
        fprintf(stderr, "pvrdma-fuzz: %s %u: the device left prod_tail %u "
                "cons_head %u in a ring of %u\n", what, handle, tail, head,
                r->max_elems);
        abort();
    }
}

static void pf_check(PfState *f)
{
    uint32_t i;

    if (f->tainted) {
        return;
    }
    pf_check_ring("async ring", 0, &f->async, true);
    pf_check_ring("CQ notification ring", 0, &f->cqn, true);
    for (i = 0; i < f->n[PF_CQ]; i++) {
        pf_check_ring("CQ", f->obj[PF_CQ][i].handle, &f->obj[PF_CQ][i].rq,
                      true);
    }
    for (i = 0; i < f->n[PF_QP]; i++) {
        pf_check_ring("QP send queue", f->obj[PF_QP][i].handle,
                      &f->obj[PF_QP][i].sq, false);
        pf_check_ring("QP receive queue", f->obj[PF_QP][i].handle,
                      &f->obj[PF_QP][i].rq, false);
    }
    for (i = 0; i < f->n[PF_SRQ]; i++) {
        pf_check_ring("SRQ", f->obj[PF_SRQ][i].handle, &f->obj[PF_SRQ][i].rq,
                      false);
    }
}

/* One input */

static void pf_op(PfState *f, uint8_t op, const uint8_t *p, size_t len)
{
    unsigned code = op == PF_OP_MIGRATE ? op : op % PF_OP_MAX;

    if (pf_trace) {
        fprintf(stderr, "pvrdma-fuzz: %s (%zu bytes)\n",
                code == PF_OP_MIGRATE ? "migrate" : pf_op_names[code], len);
    }
    switch (code) {
    case PF_OP_REG:
        pf_op_reg(f, p, len);
        break;
    case PF_OP_UAR:
        pf_op_uar(f, p, len);
        break;
    case PF_OP_PCI:
        pf_op_pci(f, p, len);
        break;
    case PF_OP_MSIX:
        pf_op_msix(f, p, len);
        break;
    case PF_OP_MEM:
        pf_op_mem(f, p, len);
        break;
    case PF_OP_CLOCK:
        pf_op_clock(f, p, len);
        break;
    case PF_OP_DSR: {
        PfDsr d;

        pf_args(&d, sizeof(d), &p, &len);
        pf_load_dsr(f, &d, p, len);
        break;
    }
    case PF_OP_CMD: {
        PfCmd c;

        pf_args(&c, sizeof(c), &p, &len);
        pf_cmd(f, &c, p, len);
        break;
    }
    case PF_OP_SEND:
        pf_op_send(f, p, len);
        break;
    case PF_OP_RECV:
        pf_op_recv(f, p, len);
        break;
    case PF_OP_POLL:
        pf_op_poll(f, p, len);
        break;
    case PF_OP_LINK:
        pf_op_link(f, p, len);
        break;
    case PF_OP_QUERY:
        pf_op_query(f, p, len);
        break;
    case PF_OP_FIXTURE:
        pf_op_fixture(f);
        break;
    case PF_OP_RC_PAIR:
        pf_op_rc_pair(f, p, len);
        break;
    case PF_OP_UD_QP:
        pf_op_ud_qp(f, p, len);
        break;
    case PF_OP_UNPLUG:
        pf_op_unplug(f, p, len);
        break;
    case PF_OP_FRAME:
        pf_op_frame(f, p, len);
        break;
    case PF_OP_MIGRATE:
        pf_op_migrate(f, p, len);
        break;
    }
    /* What a driver does not do (see pf_mig_final()) */
    switch (code) {
    case PF_OP_REG:
    case PF_OP_PCI:
    case PF_OP_MSIX:
    case PF_OP_MEM:
    case PF_OP_DSR:
    case PF_OP_UNPLUG:
        f->hostile = true;
        break;
    }
}

/*
 * q35 has no firmware here either: MMCFG on (MCH PCIEXBAR), bus 1 behind
 * the root port with a memory window where libqos puts BARs, memory and
 * bus mastering on in the port (as the q35 qtests do).
 */
static void pf_q35_firmware(PfState *f)
{
    QPCIDevice *host = qpci_device_find(f->bus, QPCI_DEVFN(0, 0));
    QPCIDevice *rp = qpci_device_find(f->bus, QPCI_DEVFN(PF_SLOT, 0));

    g_assert(host && rp);
    qpci_config_writel(host, 0x64, 0);
    qpci_config_writel(host, 0x60, PF_MMCFG | 1);   /* 256 buses, on */
    qpci_config_writeb(rp, PCI_PRIMARY_BUS, 0);
    qpci_config_writeb(rp, PCI_SECONDARY_BUS, 1);
    qpci_config_writeb(rp, PCI_SUBORDINATE_BUS, 1);
    qpci_config_writew(rp, PCI_MEMORY_BASE, 0xe000);
    qpci_config_writew(rp, PCI_MEMORY_LIMIT, 0xfff0);
    qpci_config_writew(rp, PCI_COMMAND,
                       PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    f->port_exp = qpci_find_capability(rp, PCI_CAP_ID_EXP, 0);
    g_free(host);
    g_free(rp);
}

/* Keep the config spaces an input could change without the PCI op. */
static void pf_cfg_save(PfState *f)
{
    PCIDevice *pd = PCI_DEVICE(f->pvrdma);
    PCIBus *bus = pci_get_bus(pd);
    unsigned i;

    f->cfg_dev[0] = pd;
    f->cfg_dev[1] = pci_find_device(bus, pci_dev_bus_num(pd),
                                    PCI_DEVFN(PCI_SLOT(pd->devfn), 0));
    f->cfg_dev[2] = f->q35 ? pci_bridge_get_device(bus) : NULL;
    f->cfg_dev[3] = f->q35 ? pci_find_device(pci_device_root_bus(pd), 0,
                                             PCI_DEVFN(0, 0)) : NULL;
    for (i = 0; i < ARRAY_SIZE(f->cfg_dev); i++) {
        if (f->cfg_dev[i]) {
            memcpy(f->cfg_saved[i], f->cfg_dev[i]->config,
                   pci_config_size(f->cfg_dev[i]));
        }
    }
}

static bool pf_cfg_changed(PfState *f)
{
    unsigned i;

    for (i = 0; i < ARRAY_SIZE(f->cfg_dev); i++) {
        if (f->cfg_dev[i] &&
            memcmp(f->cfg_saved[i], f->cfg_dev[i]->config,
                   pci_config_size(f->cfg_dev[i]))) {
            return true;
        }
    }
    return false;
}

/*
 * Map the device's BARs as the BIOS would, after a machine reset cleared
 * them; their addresses are the same every time.
 */
static void pf_enumerate(PfState *f, QTestState *s)
{
    int bus = f->q35 ? 1 << 8 : 0;
    int slot = f->q35 ? 0 : PF_SLOT;

    if (f->bus) {
        g_free(f->dev);
        g_free(f->fn0);
        qpci_free_pc(f->bus);
    }
    f->bus = qpci_new_pc(s, NULL);
    if (f->q35) {
        pf_q35_firmware(f);
    }
    f->dev = qpci_device_find(f->bus, bus | QPCI_DEVFN(slot, 1));
    f->fn0 = qpci_device_find(f->bus, bus | QPCI_DEVFN(slot, 0));
    g_assert(f->dev && f->fn0);
    qpci_device_enable(f->dev);
    f->msix = qpci_iomap(f->dev, PVRDMA_BAR_MSIX, NULL);
    f->regs = qpci_iomap(f->dev, PVRDMA_BAR_REGS, NULL);
    f->uar = qpci_iomap(f->dev, PVRDMA_BAR_UAR, NULL);
    f->msix_cap = qpci_find_capability(f->dev, PCI_CAP_ID_MSIX, 0);
    f->pvrdma = DEVICE(object_resolve_path("/machine/peripheral/rdma", NULL));
    g_assert(f->pvrdma);
    f->pbus = qdev_get_parent_bus(f->pvrdma);
    pf_cfg_save(f);
}

static const char *pf_limits =
    "dev-caps-max-qp=16,dev-caps-max-cq=16,dev-caps-max-pd=8,"
    "dev-caps-max-mr=32,dev-caps-max-srq=8,max-mr-pages-total=1024";

/*
 * Plug a function again after an unplug, as at machine creation: a
 * function beside a function 0 cannot be hot-plugged, nor can pvrdma
 * without its vmxnet3, so both come back "cold" (hotplugged = 0).
 */
static void pf_plug(PfState *f, const char *driver, const char *opts)
{
    QDict *props = keyval_parse(opts, NULL, NULL, &error_abort);
    DeviceState *dev = qdev_new(driver);

    dev->hotplugged = 0;
    g_assert(qdev_set_id(dev, g_strdup(qdict_get_str(props, "id")),
                         &error_abort));
    qdict_del(props, "id");
    object_set_properties_from_keyval(OBJECT(dev), props, false,
                                      &error_abort);
    qobject_unref(props);
    qdev_realize_and_unref(dev, f->pbus, &error_abort);
}

static void pf_replug(PfState *f)
{
    g_autofree char *rdma = g_strdup_printf("id=rdma,addr=%s,%s",
                                            f->q35 ? "0.1" : "10.1",
                                            pf_limits);

    if (!object_resolve_path("/machine/peripheral/" PF_NIC, NULL)) {
        pf_plug(f, "vmxnet3", f->q35 ?
                "id=" PF_NIC ",addr=0.0,multifunction=on,romfile=,"
                "mac=52:54:00:12:34:56,netdev=" PF_NETDEV :
                "id=" PF_NIC ",addr=10.0,multifunction=on,romfile=,"
                "mac=52:54:00:12:34:56,netdev=" PF_NETDEV);
    }
    if (!object_resolve_path("/machine/peripheral/rdma", NULL)) {
        pf_plug(f, "pvrdma", rdma);
    }
}

/*
 * A clean start: guest memory of the last input cleared, the link up,
 * the device enumerated and probed as the driver does.
 */
static void pf_begin(PfState *f, QTestState *s)
{
    PfDsr probe = { 0 };

    f->qts = s;
    f->tainted = false;
    f->hostile = false;
    f->mig_failed = false;
    pf_clear_ram();
    f->next = PF_ARENA_START;
    if (f->link_down) {
        qmp_set_link(PF_NIC, true, &error_abort);
        f->link_down = false;
        qtest_clock_step(s, 200 * SCALE_MS);
        flush_events(s);
    }
    if (!f->bus) {
        memory_region_transaction_begin();
        pf_enumerate(f, s);
        memory_region_transaction_commit();
    }
    f->dsr = f->cmd = f->resp = 0;
    memset(&f->async, 0, sizeof(f->async));
    memset(&f->cqn, 0, sizeof(f->cqn));
    f->data = pf_alloc(f, PF_DATA_PAGES);
    if (!f->clean_stream) {
        f->clean_stream = pf_mig_save(f, &f->clean_len);
    }
    pf_load_dsr(f, &probe, NULL, 0);
    if (f->live) {
        pf_live(f);
    }
}

static bool pf_gone(void)
{
    return !object_resolve_path("/machine/peripheral/rdma", NULL) ||
           !object_resolve_path("/machine/peripheral/" PF_NIC, NULL);
}

/*
 * Reset what the input changed: the device, always.  An input that also
 * changed config space or MSI-X (through the PCI op, or by DMA and MSI-X
 * messages into MMCFG on q35), or unplugged the device, gets a machine
 * reset as the other qtest targets do (with the device plugged in again);
 * the others changed only the device's own state, and a device reset alone
 * (what a machine reset does to it too) costs far less than remapping BARs.
 */

static void pf_end(PfState *f, QTestState *s)
{
    pf_mig_clean(f);
    pf_vm_start(f);
    pf_forget(f);
    flush_events(s);
    if (!pf_gone()) {
        /* (which also takes INTx and its status bit down) */
        device_cold_reset(f->pvrdma);
        flush_events(s);
    }
    if (pf_gone() || f->pci_touched || pf_cfg_changed(f)) {
        /* One memory topology update for the reset and the new BARs */
        memory_region_transaction_begin();
        fuzz_reset(s);
        /*
         * A device_del still pending completes with the reset, which also
         * releases the slot's electromechanical interlock that a plug
         * would trip over: plug in what is gone now, and reset it.
         */
        if (pf_gone()) {
            pf_replug(f);
            fuzz_reset(s);
        }
        pf_enumerate(f, s);
        memory_region_transaction_commit();
        f->pci_touched = false;
        if (pf_trace) {
            fprintf(stderr, "pvrdma-fuzz: machine reset\n");
        }
    }
}

static void pf_fuzz(QTestState *s, const unsigned char *data, size_t size)
{
    PfState *f = &pf;
    unsigned nops = 0;

    pf_begin(f, s);
    while (size >= 2 && nops++ < PF_MAX_OPS) {
        size_t len = MIN(data[1], size - 2);

        pf_op(f, data[0] & ~PF_OP_NO_FLUSH, data + 2, len);
        if (!(data[0] & PF_OP_NO_FLUSH)) {
            flush_events(s);
            pf_check(f);
        }
        data += 2 + len;
        size -= 2 + len;
    }
    flush_events(s);
    pf_check(f);
    if (f->live) {
        pf_mig_final(f);
        flush_events(s);
        pf_check(f);
    }
    pf_end(f, s);
}

/*
 * Once per process: hot-plug attempts that realize must refuse, with the
 * cleanup of a failed realize (leaks show at exit).
 */
static void pf_pre_fuzz(QTestState *s)
{
    static const char *const bad[] = {
        "pvrdma,addr=11.1",                     /* no vmxnet3 at 11.0 */
        "pvrdma,addr=12.0",                     /* not function 1 */
        "pvrdma,addr=13.1,dev-caps-max-qp=3",
        "pvrdma,addr=13.1,dev-caps-max-sge=65",
        "pvrdma,addr=13.1,dev-caps-max-mr-size=4095",
        "pvrdma,addr=13.1,ibdev=none0",         /* built without ibverbs */
        "pvrdma,addr=13.1,netdev=eth0",
        "pvrdma,addr=13.1,ibport=2",
    };
    size_t i;

    pf_trace = getenv("PVRDMA_FUZZ_TRACE");
    pf_try_again = getenv("PVRDMA_FUZZ_TRY_AGAIN");
    for (i = 0; i < ARRAY_SIZE(bad); i++) {
        QemuOpts *opts = qemu_opts_parse_noisily(qemu_find_opts("device"),
                                                 bad[i], true);
        Error *err = NULL;

        g_assert(opts);
        g_assert(!qdev_device_add(opts, &err));
        error_free(err);
        qemu_opts_del(opts);
    }
    flush_events(s);
}

/*
 * The machine: pc with the two functions at 00:10, or q35 with them
 * behind a PCIe root port (where DMA and MSI-X messages reach config
 * space through MMCFG: the port's bus reset and slot power, the device's
 * own command register and BARs).  Small object tables and registration
 * budget, so that inputs reach the "table full" paths in a few operations.
 */
static GString *pf_cmdline(FuzzTarget *t)
{
    GString *cmd = g_string_new(TARGET_NAME);

    pf.q35 = t->opaque && !strcmp(t->opaque, "q35");
    pf.live = t->opaque && !strcmp(t->opaque, "migrate");
    if (pf.q35) {
        /*
         * PCIe native hot-plug on the port (not ACPI's), so that powering
         * the slot off unplugs the device, from inside its data path too.
         */
        g_string_append_printf(cmd, " -machine q35,accel=qtest -global "
                               "ICH9-LPC.acpi-pci-hotplug-with-bridge-support"
                               "=off -device pcie-root-port,id=rp0,"
                               "bus=pcie.0,addr=%x.0,chassis=1,slot=1",
                               PF_SLOT);
    } else {
        g_string_append(cmd, " -machine pc,accel=qtest");
    }
    g_string_append_printf(cmd, " -m 32M -display none -nodefaults"
                           " -global apic-common.vapic=off"
                           " -netdev hubport,id=" PF_NETDEV ",hubid=0"
                           " -netdev hubport,id=" PF_WIRE ",hubid=0");
    /*
     * On pc, pvrdma comes first, as with libvirt (its <qemu:commandline>
     * devices are created before the vmxnet3 of the domain XML): realize
     * then leaves the check of function 0 to the machine-done notifier.
     */
    if (!pf.q35) {
        g_string_append_printf(cmd, " -device pvrdma,id=rdma,addr=10.1,%s",
                               pf_limits);
    }
    g_string_append_printf(cmd, " -device vmxnet3,id=" PF_NIC ",%s,"
                           "netdev=" PF_NETDEV ",multifunction=on,"
                           "mac=52:54:00:12:34:56,romfile=",
                           pf.q35 ? "bus=rp0,addr=0.0" : "addr=10.0");
    if (pf.q35) {
        g_string_append_printf(cmd, " -device pvrdma,id=rdma,bus=rp0,"
                               "addr=0.1,%s", pf_limits);
    }
    return cmd;
}

static void pf_register(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "pvrdma",
        .description = "Drive the pvrdma device (soft backend) as a guest "
                       "driver whose every choice is fuzzed: DSR, commands, "
                       "rings, WQEs, doorbells, registers, MSI-X, memory",
        .get_init_cmdline = pf_cmdline,
        .pre_fuzz = pf_pre_fuzz,
        .fuzz = pf_fuzz,
    });
    fuzz_add_target(&(FuzzTarget){
        .name = "pvrdma-q35",
        .description = "The pvrdma target on q35, behind a PCIe root port "
                       "whose config space DMA and MSI-X can reach",
        .get_init_cmdline = pf_cmdline,
        .pre_fuzz = pf_pre_fuzz,
        .fuzz = pf_fuzz,
        .opaque = (void *)"q35",
    });
    fuzz_add_target(&(FuzzTarget){
        .name = "pvrdma-migrate",
        .description = "The pvrdma target (pc) on a device with live "
                       "objects and work in flight, migrated into itself "
                       "with fuzzed changes of its saved section, and "
                       "once more unchanged at the end of every input",
        .get_init_cmdline = pf_cmdline,
        .pre_fuzz = pf_pre_fuzz,
        .fuzz = pf_fuzz,
        .opaque = (void *)"migrate",
    });
}

fuzz_target_init(pf_register);
