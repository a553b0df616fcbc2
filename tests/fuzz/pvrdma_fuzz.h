/*
 * The input format of the pvrdma fuzz target (pvrdma_fuzz.c), shared with
 * its seed generator (gen-seeds.c).
 *
 * An input is a sequence of operations, each one
 *     [op][len][len bytes of arguments]
 * where op without PF_OP_NO_FLUSH is taken modulo PF_OP_MAX, except
 * PF_OP_MIGRATE, a code of its own beyond them.  After an
 * operation the main loop runs the device's bottom halves, unless op has
 * PF_OP_NO_FLUSH: then they wait for a later operation (a vCPU can write
 * again before the main loop runs).  The arguments start with the
 * operation's fixed structure below; bytes missing at the end read as zero,
 * and every zero field means "what the Linux driver would do", so a short
 * or truncated operation is still a sensible one.  Some operations take
 * more bytes after the structure (SGE specifications, data, or bytes that
 * are XORed over the request or WQE the target builds, which lets the
 * fuzzer change any field of a well-formed request).  Length-prefixed
 * operations keep a mutation inside one operation from shifting the
 * others.
 *
 * Objects are named by selector bytes: below PF_SEL_RAW a selector picks
 * one of the objects the device created in this run (modulo their number),
 * from PF_SEL_RAW on it stands for a raw handle (the structure's raw field,
 * or a small number), so that stale and foreign handles are tried too.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef TESTS_FUZZ_PVRDMA_FUZZ_H
#define TESTS_FUZZ_PVRDMA_FUZZ_H

#define PF_OP_NO_FLUSH  0x80    /* op flag: no main loop after it */
#define PF_SEL_RAW      0xf8    /* >= : raw handle (0xf8..0xfe: 0..6) */
#define PF_SEL_RAW32    0xff    /* the structure's raw field */

enum {
    PF_OP_REG,          /* PfReg: BAR1 register read or write */
    PF_OP_UAR,          /* PfUar: a doorbell write */
    PF_OP_PCI,          /* PfPci: PCI config space write */
    PF_OP_MSIX,         /* PfMsix: MSI-X enable/mask and one table entry */
    PF_OP_MEM,          /* PfMem + bytes: raw guest-memory write */
    PF_OP_CLOCK,        /* PfClock: advance the virtual clock (timers) */
    PF_OP_DSR,          /* PfDsr + XOR bytes over the DSR: load a DSR */
    PF_OP_CMD,          /* PfCmd + XOR bytes over the request: a command */
    PF_OP_SEND,         /* PfSend + PfSge[] + XOR bytes: post a send WQE */
    PF_OP_RECV,         /* PfRecv + PfSge[] + XOR bytes: post a receive */
    PF_OP_POLL,         /* PfPoll: consume CQEs, events, notifications */
    PF_OP_LINK,         /* PfLink: function 0's Ethernet link down / up */
    PF_OP_QUERY,        /* PfQuery: query-pvrdma (QMP) or info pvrdma */
    PF_OP_FIXTURE,      /* PD, GIDs 0 and 2, a DMA MR, two 64-entry CQs */
    PF_OP_RC_PAIR,      /* PfRcPair: two RC QPs connected to each other */
    PF_OP_UD_QP,        /* PfUdQp: a UD or GSI QP brought to RTS */
    PF_OP_UNPLUG,       /* PfUnplug: hot-unplug the slot (ACPI / PCIe) */
    PF_OP_FRAME,        /* PfFrame + bytes: a frame from the link */
    PF_OP_MAX
};

/*
 * PfMigrate + PfMigEdit[]: save, change, load (below).  Not PF_OP_MAX:
 * a new modulo would give the op bytes of every input written before it
 * another meaning.  0x5e (94 % PF_OP_MAX would be PF_OP_MEM) is the op
 * byte no committed input had, with or without PF_OP_NO_FLUSH.
 */
#define PF_OP_MIGRATE   0x5e

typedef struct QEMU_PACKED PfReg {
    uint8_t reg;        /* register number (x 4, modulo 10); >= 0x40: off */
    uint8_t read;       /* bit 0: read instead of write */
    uint16_t off;       /* raw offset in the 4 KiB register BAR */
    uint32_t val;
} PfReg;

/* Doorbell kinds (PfUar.kind); other values are raw UAR offsets. */
enum { PF_UAR_QP, PF_UAR_CQ, PF_UAR_SRQ };

typedef struct QEMU_PACKED PfUar {
    uint8_t page;       /* 0: the object's own UAR page; else page % 512 */
    uint8_t kind;       /* PF_UAR_*; others: offset kind & 0xffc */
    uint8_t sel;        /* object selector (QP, CQ or SRQ) */
    uint8_t flags;      /* bits 24..31 of the value */
    uint32_t xor;       /* XORed into the value */
    uint32_t raw;       /* raw handle */
} PfUar;

typedef struct QEMU_PACKED PfPci {
    uint8_t fn;         /* bit 0: function 0 (the vmxnet3) */
    uint8_t off;        /* config space offset */
    uint8_t size;       /* 1 << (size % 3) bytes */
    uint8_t pad;
    uint32_t val;
} PfPci;

/*
 * Where an MSI-X message goes (PfMsix.target).  PF_MSIX_CFG, _PORT and
 * _PORT_EXP are config space through MMCFG, which only the q35 target has
 * (the pc target sends those to address off & 0xfff).
 */
enum {
    PF_MSIX_APIC,       /* 0xfee00000: an interrupt */
    PF_MSIX_RAM,        /* the data buffer + off */
    PF_MSIX_REGS,       /* the device's own registers + off */
    PF_MSIX_UAR,        /* the device's own doorbells + off */
    PF_MSIX_TABLE,      /* the MSI-X BAR itself + off */
    PF_MSIX_CFG,        /* the device's own config space + off */
    PF_MSIX_PORT,       /* the root port's config space + off */
    PF_MSIX_PORT_EXP,   /* the root port's PCIe capability + off */
    PF_MSIX_RAW,        /* address off */
};

#define PF_MSIX_ENABLE      0x01
#define PF_MSIX_FMASK       0x02    /* function mask */
#define PF_MSIX_VMASK       0x04    /* the entry's vector control mask */
#define PF_MSIX_KEEP        0x08    /* leave the table entry alone */

typedef struct QEMU_PACKED PfMsix {
    uint8_t vector;     /* table entry, modulo 4 (one beyond the table) */
    uint8_t target;     /* PF_MSIX_* */
    uint8_t ctl;        /* PF_MSIX_ENABLE... */
    uint8_t pad;
    uint32_t off;
    uint32_t data;
} PfMsix;

/* What a raw memory write overwrites (PfMem.target) */
enum {
    PF_MEM_SQ_STATE,    /* a QP's send ring {prod_tail, cons_head} + off */
    PF_MEM_RQ_STATE,    /* a QP's receive ring state */
    PF_MEM_CQ_STATE,    /* a CQ's ring state */
    PF_MEM_SRQ_STATE,   /* an SRQ's ring state */
    PF_MEM_ASYNC_STATE, /* the async event ring state */
    PF_MEM_CQN_STATE,   /* the CQ notification ring state */
    PF_MEM_SQ_WQE,      /* send slot off >> 16, byte off & 0xffff */
    PF_MEM_RQ_WQE,      /* receive slot */
    PF_MEM_SRQ_WQE,     /* SRQ slot */
    PF_MEM_DSR,         /* the DSR + off */
    PF_MEM_CMD,         /* the command slot + off */
    PF_MEM_DATA,        /* the data buffer + off */
    PF_MEM_RAW,         /* guest-physical address off (RAM only) */
    PF_MEM_MAX
};

typedef struct QEMU_PACKED PfMem {
    uint8_t target;     /* PF_MEM_* */
    uint8_t sel;        /* object selector */
    uint16_t pad;
    uint32_t off;
} PfMem;

/* Clock steps (PfClock.kind) */
enum {
    PF_CLOCK_NS,        /* ns % 2 s */
    PF_CLOCK_LINK,      /* (1 + ns % 4) link polls of 200 ms */
    PF_CLOCK_RNR,       /* the RNR timer value number ns % 32 */
};

typedef struct QEMU_PACKED PfClock {
    uint8_t kind;
    uint8_t pad[3];
    uint32_t ns;
} PfClock;

#define PF_DSR_ADDR_RAW     0x01    /* DSR at address raw (RAM or MMIO) */
#define PF_DSR_CMD_MMIO     0x02    /* command slot in the register BAR */
#define PF_DSR_RESP_RAW     0x04    /* response slot at address raw */
#define PF_DSR_PDIR_RAW     0x08    /* async ring directory at raw */
#define PF_DSR_NO_ACTIVATE  0x10    /* no IMR write and ACTIVATE after */
#define PF_DSR_UNQUIESCE    0x20    /* CTL UNQUIESCE instead of ACTIVATE */
#define PF_DSR_ALIAS        0x40    /* every ring page is one page */
#define PF_DSR_HIGH_FIRST   0x80    /* DSRHIGH written before DSRLOW */

typedef struct QEMU_PACKED PfDsr {
    uint8_t version;    /* driver version; 0: 20 */
    uint8_t async_pages;/* incl. the state page; 0: 4 */
    uint8_t cq_pages;   /* 0: 4 */
    uint8_t knobs;      /* PF_DSR_* */
    uint32_t raw;
} PfDsr;

/* Corruptions of the rings a command hands over (PfCmd.knobs) */
#define PF_K_PDIR_RAW       0x01    /* page directory at address raw */
#define PF_K_TABLE_RAW      0x02    /* the first table entry is raw */
#define PF_K_PAGE_RAW       0x04    /* page n[3] % npages is raw */
#define PF_K_ALIAS          0x08    /* every page is the same page */
#define PF_K_RAW_PFN        0x10    /* CREATE_UC: pfn64 = addr */

typedef struct QEMU_PACKED PfCmd {
    uint8_t cmd;        /* PVRDMA_CMD_* modulo 21; >= 0xf0: unknown */
    uint8_t sel[4];     /* object selectors (see the handlers) */
    uint8_t type;       /* QP type, MR kind, target state, GID type */
    uint8_t knobs;      /* PF_K_* */
    uint8_t flags;      /* per command (is_srq, sq_sig_all, GID choice) */
    uint32_t n[4];      /* sizes; 0: the driver's usual value */
    uint32_t access;    /* XORed into the usual access flags */
    uint64_t addr;
    uint64_t len;
    uint32_t raw;       /* handle of raw selectors, raw addresses */
} PfCmd;

/* One scatter/gather entry of a WQE */
#define PF_SGE_RKEY         0x01    /* the MR's rkey as lkey */
#define PF_SGE_KEY_BUMP     0x02    /* key's low byte + 1 (stale FRMR) */
#define PF_SGE_ADDR_RAW     0x04    /* address (off << 12) in guest RAM */
#define PF_SGE_ADDR_UAR     0x08    /* address: the device's own UAR + off */
/* address: config space (q35): off >> 12 is a PF_MSIX_CFG.. target - 5 */
#define PF_SGE_ADDR_CFG     0x10

typedef struct QEMU_PACKED PfSge {
    uint8_t mr;         /* MR selector */
    uint8_t knobs;      /* PF_SGE_* */
    uint16_t off;       /* offset into the MR (DMA MR: the data buffer) */
    uint32_t len;
} PfSge;

#define PF_WQE_NO_DB        0x01    /* no doorbell */
#define PF_WQE_NUM_SGE      0x02    /* num_sge from the structure */
#define PF_WQE_NO_PUBLISH   0x04    /* written, prod_tail not moved */
#define PF_WQE_BOTH_DB      0x08    /* SEND | RECV in one doorbell */

typedef struct QEMU_PACKED PfSend {
    uint8_t qp;         /* QP selector */
    uint8_t opcode;     /* PVRDMA_WR_* (raw) */
    uint8_t flags;      /* send_flags (raw) */
    uint8_t nsge;       /* PfSge entries that follow (at most 16) */
    uint8_t knobs;      /* PF_WQE_* */
    uint8_t remote;     /* MR selector: remote_addr, rkey, FRMR */
    uint8_t dest;       /* QP selector: RC checks nothing, UD destination */
    uint8_t gid;        /* UD: dgid (bits 0-1), source GID index (2-7) */
    uint32_t off;       /* offset into the remote MR */
    uint32_t imm;       /* XORed into imm_data / invalidate_rkey */
    uint32_t qkey;      /* UD: 0 = the destination's Q_Key */
    uint32_t num_sge;   /* with PF_WQE_NUM_SGE */
    uint64_t wr_id;
    uint64_t compare_add;
    uint64_t swap;
    uint8_t fr_npages;  /* FAST_REG_MR: pages (0: 2) */
    uint8_t fr_access;  /* XORed into all rights */
    uint8_t fr_shift;   /* XORed into 12 */
    uint8_t pad;
    uint32_t fr_length; /* 0: the pages */
    uint64_t fr_iova;   /* 0: 0x40000000 */
} PfSend;

#define PF_RECV_SRQ         0x80    /* PfRecv.target: an SRQ selector */

typedef struct QEMU_PACKED PfRecv {
    uint8_t target;     /* QP selector, or SRQ selector with PF_RECV_SRQ */
    uint8_t nsge;       /* PfSge entries that follow (at most 16) */
    uint8_t knobs;      /* PF_WQE_* */
    uint8_t pad;
    uint32_t num_sge;   /* with PF_WQE_NUM_SGE */
    uint64_t wr_id;
} PfRecv;

enum { PF_POLL_CQ, PF_POLL_ASYNC, PF_POLL_CQN };
#define PF_POLL_ARM         0x01    /* arm the CQ afterwards */
#define PF_POLL_ARM_SOL     0x02    /* solicited only */

typedef struct QEMU_PACKED PfPoll {
    uint8_t ring;       /* PF_POLL_* */
    uint8_t sel;        /* CQ selector */
    uint8_t count;      /* 0: all */
    uint8_t knobs;      /* PF_POLL_ARM... */
} PfPoll;

typedef struct QEMU_PACKED PfLink {
    uint8_t down;       /* bit 0: take the link down, else up */
} PfLink;

typedef struct QEMU_PACKED PfRcPair {
    uint8_t pd, scq, rcq;   /* selectors */
    uint8_t srq;        /* 0: receive queues of their own; else SRQ sel+1 */
    uint8_t access_b;   /* XORed into the second QP's remote rights */
    uint8_t min_rnr;    /* XORed into the second QP's min_rnr_timer 12 */
    uint8_t rnr_retry;  /* XORed into the first QP's rnr_retry 7 */
    uint8_t sig_all;    /* bit 0: first QP, bit 1: second QP */
    uint8_t send_wr, recv_wr, send_sge, recv_sge;   /* 0: 16, 16, 4, 4 */
    /*
     * Where each QP's peer is: pf_gids[link % 3], the other QP's number.
     * 0 is the device's GID 0: connected to each other.  1 is 10.0.2.16,
     * on the link for every target: the two QPs take frames from GID 1
     * (PfFrame.ackreq 0x04), and what they send leaves on the link.
     */
    uint8_t link;
} PfRcPair;

typedef struct QEMU_PACKED PfQuery {
    uint8_t hmp;        /* bit 0: HMP "info pvrdma" instead of QMP */
} PfQuery;

typedef struct QEMU_PACKED PfUnplug {
    uint8_t no_del;     /* bit 0: no device_del first (pc: eject only) */
} PfUnplug;

typedef struct QEMU_PACKED PfUdQp {
    uint8_t gsi;        /* bit 0: the GSI QP */
    uint8_t pd, scq, rcq;
    uint8_t srq;        /* 0: own receive queue; else SRQ selector + 1 */
    uint8_t pad[3];
    uint32_t qkey;      /* 0: 0x1234 (GSI: 0x80010000) */
} PfUdQp;

/*
 * A frame arrives on function 0's link, as a peer on the Ethernet would
 * send it.  The target builds a RoCE v2 frame (good ICRC) to a QP of the
 * input from the fields below, with the bytes after the structure as its
 * payload; or, with PF_FRAME_XOR, XORs those bytes over the frame it
 * built (from its BTH on, the ICRC made good again unless PF_FRAME_ICRC);
 * or with PF_FRAME_RAW sends them as they are.
 */
enum {
    PF_FRAME_RAW = 1 << 0,
    PF_FRAME_XOR = 1 << 1,
    PF_FRAME_ICRC = 1 << 2,     /* with XOR: leave the ICRC as it is */
    PF_FRAME_VLAN = 1 << 3,
    PF_FRAME_TWICE = 1 << 4,    /* the same frame again: a duplicate */
};

typedef struct QEMU_PACKED PfFrame {
    uint8_t flags;      /* PF_FRAME_* */
    uint8_t opcode;     /* BTH opcode (any byte) */
    uint8_t qp;         /* destination: selector of a QP of the input */
    uint8_t ackreq;     /* bit 0: AckReq; bit 1: SE; bits 2-3, 4-5: the
                         * source and destination GIDs (pf_gids[], mod 3) */
    uint32_t psn;       /* 0: 0x100, the PSN the target's QPs start at */
    uint32_t qpn_xor;   /* XORed over the destination QP number */
    uint32_t rkey;      /* 0: the fixture's DMA MR key */
    uint64_t va;        /* RETH / AtomicETH address (0: a data buffer) */
    uint32_t dma_len;   /* RETH DMA length (0: the payload length) */
    uint8_t syndrome;   /* AETH */
    uint8_t pad[3];
    uint32_t msn;
    uint64_t swap_add, compare;
    uint64_t orig;      /* AtomicAckETH */
    uint32_t imm, inv_rkey;
    uint32_t qkey;      /* DETH (0: 0x1234) */
    uint32_t src_qpn;   /* DETH */
} PfFrame;

/*
 * Migrate the device into itself (pvrdma_fuzz.c, pf_op_migrate()): with
 * the VM stopped, its section ("pvrdma" and its subsection "pvrdma/soft")
 * is saved to a buffer, changed by the PfMigEdit entries that follow the
 * structure, cut, and loaded back into the same device, whose pre_load
 * resets it first: a fresh destination.  The VM runs again after the load
 * unless PF_MIG_STAY_STOPPED.  A load may fail (the device then refuses
 * work until a good load or a reset); the input goes on either way.
 */
/*
 * The VM stays stopped after the load (until the next migration or the
 * input's end).
 */
#define PF_MIG_STAY_STOPPED 0x01

typedef struct QEMU_PACKED PfMigrate {
    uint8_t knobs;      /* PF_MIG_* */
    uint8_t version;    /* version_id loaded; 0: the section's own */
    uint16_t pad;
    uint32_t cut;       /* 0: the whole stream; else cut % (length + 1) */
} PfMigrate;

/* Changes of the saved stream (PfMigEdit.kind, modulo 4) */
enum {
    PF_MIG_XOR8,        /* one byte ^= val (0: 0xff) */
    PF_MIG_SET32,       /* a big-endian 32-bit word = val */
    PF_MIG_XOR32,       /* a big-endian 32-bit word ^= val */
    PF_MIG_ADD32,       /* a big-endian 32-bit word += val (counts) */
};

typedef struct QEMU_PACKED PfMigEdit {
    uint8_t kind;       /* PF_MIG_* */
    uint8_t pad[3];
    uint32_t off;       /* modulo the stream's length (words: clamped) */
    uint32_t val;
} PfMigEdit;

#endif
