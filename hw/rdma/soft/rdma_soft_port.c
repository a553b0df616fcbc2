/*
 * The soft RDMA engine: the port, RoCE v2 on function 0's Ethernet.
 *
 * A RoCE NIC shares its Ethernet port with the NIC function: the RDMA
 * engine sends as that port (its MAC, its link) and takes the RoCE v2
 * frames addressed to its GIDs before the NIC's receive path sees them.
 * Here function 0 is a vmxnet3 and the link is its netdev, so the port
 * is a net filter on that netdev (net/filter.c), on the queue of frames
 * the netdev passes to the NIC: a frame for one of the device's GIDs is
 * consumed, every other frame passes untouched.  Frames go out as if the
 * vmxnet3 had sent them (qemu_send_packet() from its queue), through the
 * netdev's other filters like its own frames.
 *
 * The filter is made when the guest adds its first GID (a port with no
 * GID has nothing to receive), by then function 0 exists even when
 * libvirt creates it after this device.  Nothing else of the vmxnet3 is
 * touched; its link state and MTU are read when needed.
 *
 * A frame from the link is hostile input: rdma_soft_wire_parse() checks
 * every length and the ICRC; what the frame asks of a QP goes through the
 * checks of the responder and completer like a packet of this device.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/error-report.h"
#include "qemu/iov.h"
#include "qom/object_interfaces.h"
#include "net/filter.h"
#include "system/runstate.h"
#include "hw/net/vmxnet3_defs.h"
#include "rdma_soft.h"
#include "rdma_soft_wire.h"
#include "hw/rdma/trace.h"

#define TYPE_RDMA_SOFT_PORT "pvrdma-roce-port"
OBJECT_DECLARE_SIMPLE_TYPE(RdmaSoftPort, RDMA_SOFT_PORT)

/* The largest frame: a 9000-byte MTU, its Ethernet header and a VLAN tag. */
#define RDMA_PORT_FRAME_MAX     (9000 + RDMA_WIRE_ETH_LEN + RDMA_WIRE_VLAN_LEN)
/* Frames that arrive while the engine is busy (see rdma_soft_port_rx()). */
#define RDMA_PORT_RXQ_LEN       64

typedef struct RdmaPortFrame {
    size_t len;
    uint8_t data[];
} RdmaPortFrame;

struct RdmaSoftPort {
    NetFilterState parent_obj;
    RdmaSoft *soft;                 /* NULL: not made by a device */
    GQueue rxq;                     /* RdmaPortFrame, to the run bh */
    uint16_t ip_id;
    uint8_t frame[RDMA_PORT_FRAME_MAX];
};

/* Function 0 of @soft's slot, if it is (still) a vmxnet3. */
static VMXNET3State *rdma_soft_port_fn0(RdmaSoft *soft)
{
    PCIDevice *pdev = soft->be.rm->pdev;
    PCIDevice *fn0 = pci_find_device(pci_get_bus(pdev), pci_dev_bus_num(pdev),
                                     PCI_DEVFN(PCI_SLOT(pdev->devfn), 0));

    if (!fn0 || !object_dynamic_cast(OBJECT(fn0), "vmxnet3")) {
        return NULL;
    }
    return (VMXNET3State *)fn0;
}

/*
 * The Ethernet MTU of the port: the vmxnet3's, as its guest driver set it
 * (vmxnet3 checks it against 60..9000 when the guest activates it).
 */
unsigned rdma_soft_port_mtu(RdmaSoft *soft)
{
    VMXNET3State *n = rdma_soft_port_fn0(soft);

    if (!n || n->mtu < 68 || n->mtu > 9000) {
        return 1500;
    }
    return n->mtu;
}

/*
 * The port's active IB MTU (code 1..5): the largest a frame of the
 * Ethernet MTU carries with the largest headers (IPv6, UDP, BTH, an
 * AtomicETH, ICRC), as Linux computes it.
 */
uint32_t rdma_soft_port_ib_mtu(RdmaSoft *soft)
{
    unsigned mtu = rdma_soft_port_mtu(soft);
    unsigned room = mtu - MIN(mtu, RDMA_WIRE_IPV6_LEN + RDMA_WIRE_UDP_LEN +
                                   RDMA_BTH_LEN + 4 + RDMA_ATMETH_LEN +
                                   RDMA_ICRC_LEN);
    uint32_t code = 1;              /* 256 */

    while (code < 5 && (256u << code) <= room) {
        code++;
    }
    return code;
}

/* The vmxnet3's queue: where the port's frames leave from. */
static NetClientState *rdma_soft_port_nic(RdmaSoftPort *port)
{
    NetClientState *netdev = port->parent_obj.netdev;

    return netdev ? netdev->peer : NULL;
}

/*
 * A packet that leaves no frame is lost as on a wire (the requester's
 * retransmission or the peer's recovers it, or the QP's retries run
 * out), but never silently: query-pvrdma counts it (tx-dropped).
 */
static void rdma_soft_port_drop(RdmaSoft *soft, const RdmaSoftPkt *pkt,
                                const char *why)
{
    soft->stats.tx_dropped++;
    trace_rdma_soft_drop(pkt->src_qpn, pkt->opcode, why);
}

void rdma_soft_port_send(RdmaSoft *soft, const RdmaSoftPkt *pkt)
{
    RdmaSoftPort *port = soft->port;
    NetClientState *nic = port ? rdma_soft_port_nic(port) : NULL;
    RDMA_SOFT_UNINIT RdmaSoftSgl src;
    RdmaSoftWireAddr a = {
        .tclass = pkt->tclass,
        .hop_limit = pkt->hop_limit ? pkt->hop_limit : 64,
        .flow_label = pkt->flow_label,
        /* Any source port (RoCE v2 uses it for ECMP): one per QP pair. */
        .udp_sport = 0xc000 | ((pkt->src_qpn ^ pkt->dest_qpn) & 0x3fff),
    };
    uint8_t *payload;
    uint64_t off;
    size_t len;

    if (!nic || nic->link_down) {
        rdma_soft_port_drop(soft, pkt, "port down");
        return;
    }
    /* The payload is read from guest memory straight to its place. */
    payload = port->frame + rdma_soft_wire_payload_offset(pkt, &a);
    if (pkt->paylen > port->frame + sizeof(port->frame) - payload ||
        (pkt->paylen &&
         (!rdma_soft_payload_sgl(soft, pkt, &src, &off) ||
          !rdma_soft_read_buf(soft->be.rm->pdev, &src, off, payload,
                              pkt->paylen)))) {
        /* What the payload named is gone: the frame is lost on the way. */
        rdma_soft_port_drop(soft, pkt, "payload");
        return;
    }
    memcpy(a.dst_mac, pkt->dmac, 6);
    memcpy(a.src_mac, qemu_get_nic(nic)->conf->macaddr.a, 6);
    a.ip_id = port->ip_id++;
    len = rdma_soft_wire_build(port->frame, sizeof(port->frame), pkt, &a,
                               payload);
    if (!len) {
        rdma_soft_port_drop(soft, pkt, "cannot build frame");
        return;
    }
    soft->stats.tx_frames++;
    trace_rdma_soft_wire_tx(pkt->src_qpn, pkt->dest_qpn,
                            rdma_soft_op_info(pkt->opcode)->name, pkt->psn,
                            pkt->paylen);
    qemu_send_packet(nic, port->frame, len);
}

/* What the port makes of a frame from the link. */
typedef enum RdmaPortVerdict {
    RDMA_PORT_NOT_MINE,             /* to the vmxnet3, untouched */
    RDMA_PORT_REFUSED,              /* the port's, and dropped */
    RDMA_PORT_TAKEN,                /* a packet for the engine */
} RdmaPortVerdict;

/* Does the BTH's P_Key match the port's one, the default full 0xffff? */
static bool rdma_soft_pkey_ok(uint16_t pkey)
{
    /* The same partition, one of the two a full member (rxe: pkey_match) */
    return (pkey & 0x7fff) == (RDMA_PKEY_DEFAULT & 0x7fff);
}

/*
 * Is @frame a RoCE v2 frame for one of @soft's GIDs?  Only those are the
 * port's; a RoCE frame to another address (say for Linux rxe on the
 * guest's own interface) goes on to the vmxnet3, and so does a frame
 * that does not parse, or is for another MAC or a VLAN (the port sends
 * no VLAN tags): it is not known to be the port's.  Of those that are,
 * the port drops what a RoCE NIC drops: a frame from one of its own
 * GIDs (an IP stack drops such a "martian" too, so Linux rxe never sees
 * one) and one of another partition.
 */
static RdmaPortVerdict rdma_soft_port_parse(RdmaSoft *soft,
                                            const uint8_t *mac,
                                            const uint8_t *frame,
                                            size_t len, RdmaSoftPkt *pkt)
{
    RdmaResources *rm = soft->be.rm;
    RdmaSoftWireInfo info;
    const char *why;

    if (!rdma_soft_wire_is_roce(frame, len)) {
        return RDMA_PORT_NOT_MINE;
    }
    if (!rdma_soft_wire_parse(frame, len, pkt, &info, &why)) {
        trace_rdma_soft_wire_bad(why);
        return RDMA_PORT_NOT_MINE;
    }
    if (!rdma_rm_gid_is_local(rm, pkt->dgid)) {
        return RDMA_PORT_NOT_MINE;
    }
    why = memcmp(info.addr.dst_mac, mac, 6) ? "not to the port's MAC" :
          info.addr.vlan && (info.addr.vlan_tci & 0xfff) ? "on a VLAN" :
          NULL;
    if (why) {
        trace_rdma_soft_wire_bad(why);
        return RDMA_PORT_NOT_MINE;
    }
    why = rdma_rm_gid_is_local(rm, pkt->sgid) ? "from one of its own GIDs" :
          !rdma_soft_pkey_ok(info.addr.pkey) ? "of another partition" :
          NULL;
    if (why) {
        trace_rdma_soft_wire_bad(why);
        return RDMA_PORT_REFUSED;
    }
    pkt->remote = true;
    memcpy(pkt->dmac, info.addr.src_mac, 6);
    pkt->hop_limit = info.addr.hop_limit;
    pkt->tclass = info.addr.tclass;
    pkt->flow_label = info.addr.flow_label;
    return RDMA_PORT_TAKEN;
}

/* The MAC of the vmxnet3 the port sends as (a zero MAC if none). */
static const uint8_t *rdma_soft_port_mac(RdmaSoftPort *port)
{
    static const uint8_t none[6];
    NetClientState *nic = rdma_soft_port_nic(port);

    return nic ? qemu_get_nic(nic)->conf->macaddr.a : none;
}

/* A packet from the link: into the engine, inside an entry point. */
static void rdma_soft_port_take(RdmaSoft *soft, const RdmaSoftPkt *pkt)
{
    RdmaResources *rm = soft->be.rm;

    if (!rdma_rm_enter(rm)) {
        return;
    }
    soft->stats.rx_frames++;
    rdma_soft_receive(soft, pkt);
    rdma_rm_leave(rm);
}

static ssize_t rdma_soft_port_rx(NetFilterState *nf, NetClientState *sender,
                                 unsigned flags, const struct iovec *iov,
                                 int iovcnt, NetPacketSent *sent_cb)
{
    RdmaSoftPort *port = RDMA_SOFT_PORT(nf);
    RdmaSoft *soft = port->soft;
    size_t size = iov_size(iov, iovcnt);
    RDMA_SOFT_UNINIT RdmaSoftPkt pkt;
    const uint8_t *frame;
    RdmaPortFrame *f;

    if (!soft || size > sizeof(port->frame)) {
        return 0;
    }
    if (iovcnt == 1) {
        frame = iov[0].iov_base;
    } else {
        iov_to_buf(iov, iovcnt, 0, port->frame, size);
        frame = port->frame;
    }
    switch (rdma_soft_port_parse(soft, rdma_soft_port_mac(port), frame,
                                 size, &pkt)) {
    case RDMA_PORT_NOT_MINE:
        return 0;                   /* to the vmxnet3 */
    case RDMA_PORT_REFUSED:
        soft->stats.rx_dropped++;
        return size;
    case RDMA_PORT_TAKEN:
        break;
    }
    /*
     * A stopped VM takes nothing from the link, as its NIC does not (the
     * net layer holds frames for a stopped VM, but only after the
     * filters).  Above all, a source paused at the end of a migration
     * must not execute and acknowledge a request whose effect the
     * destination would never see; dropped, the request comes again to
     * the destination.
     */
    if (!runstate_is_running()) {
        soft->stats.rx_dropped++;
        return size;
    }
    /*
     * A frame can arrive from inside the engine: its own frame went out
     * and a peer on the same QEMU (a hub) answered at once.  The engine
     * is not re-entered; the frame waits for the run bh.
     */
    if (soft->be.rm->depth || rdma_soft_delivering(soft)) {
        if (g_queue_get_length(&port->rxq) >= RDMA_PORT_RXQ_LEN) {
            soft->stats.rx_dropped++;
            return size;
        }
        f = g_malloc(sizeof(*f) + size);
        f->len = size;
        memcpy(f->data, frame, size);
        g_queue_push_tail(&port->rxq, f);
        qemu_bh_schedule(soft->run_bh);
        return size;
    }
    rdma_soft_port_take(soft, &pkt);
    return size;
}

/* The frames that had to wait (from the run bh, in an entry point). */
void rdma_soft_port_run(RdmaSoft *soft)
{
    RdmaSoftPort *port = soft->port;
    RdmaPortFrame *f;

    while (port && (f = g_queue_pop_head(&port->rxq))) {
        RDMA_SOFT_UNINIT RdmaSoftPkt pkt;

        /* Parsed again: the GIDs may have changed while it waited. */
        if (rdma_soft_port_parse(soft, rdma_soft_port_mac(port), f->data,
                                 f->len, &pkt) == RDMA_PORT_TAKEN) {
            soft->stats.rx_frames++;
            rdma_soft_receive(soft, &pkt);
        } else {
            soft->stats.rx_dropped++;
        }
        g_free(f);
        port = soft->port;
    }
}

static void rdma_soft_port_setup(NetFilterState *nf, Error **errp)
{
    if (!RDMA_SOFT_PORT(nf)->soft) {
        error_setg(errp, "%s is made by a pvrdma device, not by hand",
                   TYPE_RDMA_SOFT_PORT);
    }
}

/* The netdev went away (netdev_del), or the device did. */
static void rdma_soft_port_cleanup(NetFilterState *nf)
{
    RdmaSoftPort *port = RDMA_SOFT_PORT(nf);

    g_queue_clear_full(&port->rxq, g_free);
    if (port->soft && port->soft->port == port) {
        port->soft->port = NULL;
    }
}

void rdma_soft_port_attach(RdmaSoft *soft)
{
    VMXNET3State *fn0 = rdma_soft_port_fn0(soft);
    NetClientState *nic, *netdev;
    Object *obj;
    Error *err = NULL;

    if (soft->port) {
        return;
    }
    nic = fn0 && fn0->nic ? qemu_get_queue(fn0->nic) : NULL;
    netdev = nic ? nic->peer : NULL;
    if (!netdev) {
        /* No link: QPs of this device are all the port reaches. */
        trace_rdma_soft_port("(none)");
        return;
    }
    obj = object_new(TYPE_RDMA_SOFT_PORT);
    RDMA_SOFT_PORT(obj)->soft = soft;
    g_queue_init(&RDMA_SOFT_PORT(obj)->rxq);
    if (!object_property_set_str(obj, "netdev", netdev->name, &err) ||
        !object_property_set_str(obj, "queue", "tx", &err)) {
        goto fail;
    }
    /*
     * A child of the device: deleting the netdev unparents its filters,
     * and the cleanup hook above forgets this one.
     */
    object_property_add_child(OBJECT(soft->be.rm->pdev), "roce-port", obj);
    object_unref(obj);
    user_creatable_complete(USER_CREATABLE(obj), &err);
    if (err) {
        object_unparent(obj);
        goto fail_reported;
    }
    soft->port = RDMA_SOFT_PORT(obj);
    trace_rdma_soft_port(netdev->name);
    return;

fail:
    object_unref(obj);
fail_reported:
    /*
     * Tried again at each GID the guest adds: said once, or the guest
     * would write the host's log.
     */
    if (!soft->port_warned) {
        soft->port_warned = true;
        warn_reportf_err(err, "pvrdma: no RDMA port on netdev %s: ",
                         netdev->name);
    } else {
        trace_rdma_soft_port_failed(netdev->name, error_get_pretty(err));
        error_free(err);
    }
}

/* The netdev the port is on, or NULL (no GID yet, or no netdev). */
const char *rdma_soft_port_netdev(RdmaSoft *soft)
{
    NetFilterState *nf = soft->port ? &soft->port->parent_obj : NULL;

    return nf && nf->netdev ? nf->netdev->name : NULL;
}

void rdma_soft_port_detach(RdmaSoft *soft)
{
    if (soft->port) {
        RdmaSoftPort *port = soft->port;

        port->soft = NULL;
        soft->port = NULL;
        object_unparent(OBJECT(port));
    }
}

static void rdma_soft_port_class_init(ObjectClass *oc, RDMA_CLASS_DATA *data)
{
    NetFilterClass *nfc = NETFILTER_CLASS(oc);

    nfc->setup = rdma_soft_port_setup;
    nfc->cleanup = rdma_soft_port_cleanup;
    nfc->receive_iov = rdma_soft_port_rx;
}

static const TypeInfo rdma_soft_port_info = {
    .name = TYPE_RDMA_SOFT_PORT,
    .parent = TYPE_NETFILTER,
    .class_init = rdma_soft_port_class_init,
    .instance_size = sizeof(RdmaSoftPort),
};

static void rdma_soft_port_register_types(void)
{
    type_register_static(&rdma_soft_port_info);
}

type_init(rdma_soft_port_register_types)
