/*
 * The soft RDMA engine: RoCE v2 frames.
 *
 * A packet (RdmaSoftPkt) leaves the device as an Ethernet frame: an
 * optional 802.1Q tag, IPv4 or IPv6, UDP to port 4791, the BTH and the
 * extension headers its opcode carries, the payload, the pad to 4 bytes
 * and the invariant CRC (IB vol. 1 annex A17).  Frames taken from the link
 * become packets again.  This layer only converts: it knows no QP, no
 * device GID and no link; the caller picks the addressing of what it sends
 * and decides what to do with what it received.
 *
 * It needs nothing from QEMU but glib, libc and zlib, so that the unit
 * lane tests it without a QEMU build.  A frame from the link is hostile:
 * every length in it is checked against the bytes that are there before
 * it is used, and nothing outside [frame, frame + len) is ever read.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SOFT_RDMA_SOFT_WIRE_H
#define HW_RDMA_SOFT_RDMA_SOFT_WIRE_H

#include "rdma_soft_pkt.h"

#define RDMA_ROCE_V2_UDP_PORT       4791
#define RDMA_PKEY_DEFAULT           0xffff
#define RDMA_ICRC_LEN               4

#define RDMA_WIRE_ETH_LEN           14
#define RDMA_WIRE_VLAN_LEN          4
#define RDMA_WIRE_IPV4_LEN          20      /* no options: see the .c */
#define RDMA_WIRE_IPV6_LEN          40
#define RDMA_WIRE_UDP_LEN           8
/* Ethernet, VLAN tag, IPv6 and UDP: what a frame adds to the IB packet. */
#define RDMA_WIRE_MAX_OVERHEAD      (RDMA_WIRE_ETH_LEN + RDMA_WIRE_VLAN_LEN + \
                                     RDMA_WIRE_IPV6_LEN + RDMA_WIRE_UDP_LEN)

/*
 * How a packet is addressed below the IB transport: what the GIDs of the
 * packet do not say.  rdma_soft_wire_parse() fills one from a frame such
 * that rdma_soft_wire_build() with it and the parsed packet gives the
 * same frame back.
 */
typedef struct RdmaSoftWireAddr {
    uint8_t dst_mac[6];
    uint8_t src_mac[6];
    bool vlan;                  /* send an 802.1Q tag */
    uint16_t vlan_tci;          /* its PCP, DEI and VID, as on the wire */
    uint8_t tclass;             /* IPv4 TOS or IPv6 traffic class */
    uint8_t hop_limit;          /* IPv4 TTL or IPv6 hop limit */
    uint32_t flow_label;        /* IPv6 only; 20 bits */
    uint16_t ip_id;             /* IPv4 identification */
    uint16_t udp_sport;         /* entropy for ECMP, never used to match */
    uint16_t pkey;              /* 0: RDMA_PKEY_DEFAULT (0 is invalid) */
    /* BTH bits the packet descriptor has no room for; normally false. */
    bool mig;                   /* MigReq */
    bool fecn;
    bool becn;
} RdmaSoftWireAddr;

typedef struct RdmaSoftWireInfo {
    RdmaSoftWireAddr addr;      /* as received (pkey as on the wire) */
    uint8_t ip_version;         /* 4 or 6 */
    uint8_t pad;                /* BTH pad count */
    size_t len;                 /* frame bytes used; the rest is padding */
} RdmaSoftWireInfo;

/*
 * Where rdma_soft_wire_build() puts the payload of @pkt sent with @a: the
 * length of the headers before it.
 */
size_t rdma_soft_wire_payload_offset(const RdmaSoftPkt *pkt,
                                     const RdmaSoftWireAddr *a);

/*
 * Write @pkt as a frame into @frame; @payload holds its pkt->paylen bytes
 * (may be NULL when there are none).  IPv4 when both GIDs are IPv4-mapped,
 * IPv6 when neither is.  Returns the frame length; 0 when the frame does
 * not fit @cap or @pkt cannot be sent (unknown opcode, data on an opcode
 * that carries none, a field too wide for the wire, mixed GID families).
 * @payload may already be in place: at @frame +
 * rdma_soft_wire_payload_offset(), where it is left as it is.
 */
size_t rdma_soft_wire_build(uint8_t *frame, size_t cap, const RdmaSoftPkt *pkt,
                            const RdmaSoftWireAddr *a, const void *payload);

/*
 * Read a RoCE v2 frame into @pkt and @info.  On success @pkt's payload
 * (if its opcode carries one) is RDMA_DATA_BYTES pointing into @frame.
 * On failure returns false with a static reason in *@why (if @why), and
 * what @pkt and @info hold means nothing.
 */
bool rdma_soft_wire_parse(const uint8_t *frame, size_t len, RdmaSoftPkt *pkt,
                          RdmaSoftWireInfo *info, const char **why);

/*
 * Whether @frame is addressed to a RoCE v2 engine: IPv4 or IPv6 (behind
 * at most one VLAN tag) carrying UDP to port 4791.  The cheap test to run
 * on every frame of a link; such a frame may still be refused by
 * rdma_soft_wire_parse().
 */
bool rdma_soft_wire_is_roce(const uint8_t *frame, size_t len);

/*
 * The ICRC of the IP datagram at @ip, @len bytes from the IP header to the
 * end of the pad (the ICRC itself excluded), as the frame stores it: the
 * 4 bytes following the pad, read little-endian.  @len must cover the IP
 * header, UDP header and BTH.
 */
uint32_t rdma_soft_icrc(const uint8_t *ip, size_t len);

/*
 * CRC-32 of IEEE 802.3 over @len bytes at @buf, continuing @crc, with the
 * conventions of zlib's crc32(): @crc is the complement of the register
 * (0 to start), and so is the result (rdma_soft_crc.c).
 */
uint32_t rdma_soft_crc32(uint32_t crc, const uint8_t *buf, size_t len);
/* Does rdma_soft_crc32() fold with carry-less multiplication here? */
bool rdma_soft_crc_folds(void);
/*
 * For the unit test, the folding constants in order: reflect32(x^n mod P)
 * << 1 for n = 544, 480, 160, 96 and 64, then P and floor(x^64 / P), each
 * reflected over 33 bits; 0 past the end or without the folding code.
 */
uint64_t rdma_soft_crc_fold_const(unsigned i);

#endif
