/*
 * The soft RDMA engine: a port without a link.
 *
 * The engine carries packets between the QPs of this device; a packet
 * for any other device has no frame to go in and is dropped as on a
 * wire, counted in tx_dropped.  The RoCE v2 link on function 0's
 * Ethernet replaces this file.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "rdma_soft.h"
#include "hw/rdma/trace.h"

/* The Ethernet MTU of a port without a link. */
unsigned rdma_soft_port_mtu(RdmaSoft *soft)
{
    return 1500;
}

/* The IB MTU that a 1500-byte frame carries with the largest headers. */
uint32_t rdma_soft_port_ib_mtu(RdmaSoft *soft)
{
    return 3;                       /* 1024 */
}

void rdma_soft_port_send(RdmaSoft *soft, const RdmaSoftPkt *pkt)
{
    soft->stats.tx_dropped++;
    trace_rdma_soft_drop(pkt->src_qpn, pkt->opcode, "no link");
}

void rdma_soft_port_run(RdmaSoft *soft)
{
}

void rdma_soft_port_attach(RdmaSoft *soft)
{
}

const char *rdma_soft_port_netdev(RdmaSoft *soft)
{
    return NULL;
}

void rdma_soft_port_detach(RdmaSoft *soft)
{
}
