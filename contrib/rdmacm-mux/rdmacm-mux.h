/*
 * rdmacm-mux: the protocol between QEMU (pvrdma's ibverbs backend) and the
 * MAD multiplexer daemon, over a UNIX stream socket.
 *
 * Only one process can register with a host port's umad layer for the
 * connection-manager (CM) class.  The daemon does, and it shares that
 * registration among any number of QEMU instances: each claims the GIDs of
 * its guest, sends CM MADs on their behalf, and receives the CM MADs sent
 * to them.
 *
 * Framing: every message is an RdmaCmMuxHdr followed by exactly hdr.len
 * bytes of body, whose size is fixed by hdr.type.  Integers in the header
 * and in the address part of RdmaCmMuxMad are in the host's byte order
 * (both ends run on the same host); GIDs and the MAD itself are in network
 * order, as on the wire.
 *
 *   client -> daemon   REGISTER    RdmaCmMuxGid   claim a GID (reply)
 *   client -> daemon   UNREGISTER  RdmaCmMuxGid   release it (reply)
 *   client -> daemon   SEND        RdmaCmMuxMad   send a MAD (reply)
 *   daemon -> client   RECV        RdmaCmMuxMad   a MAD for a claimed GID
 *   daemon -> client   REPLY       none           status of request hdr.seq
 *
 * A REPLY with seq 0 that answers no request comes just before the daemon
 * closes the connection: status -EUSERS when the client is refused (too
 * many clients, or too many of its user), -ETIMEDOUT when it is evicted
 * (it held no GID and had sent no request for a while, and a new client
 * needed its place).
 *
 * A GID belongs to at most one client (REGISTER of another's: -EADDRINUSE)
 * and a client sends only from GIDs it holds (SEND from another: -EPERM).
 * Received MADs go to the owner of their full 128-bit destination GID.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef RDMACM_MUX_H
#define RDMACM_MUX_H

#include <stdint.h>

#define RDMACM_MUX_MAGIC        0x786d6372u     /* "rcmx" */
#define RDMACM_MUX_VERSION      1
#define RDMACM_MUX_MAD_SIZE     256

enum {
    RDMACM_MUX_REGISTER   = 1,
    RDMACM_MUX_UNREGISTER = 2,
    RDMACM_MUX_SEND       = 3,
    RDMACM_MUX_RECV       = 4,
    RDMACM_MUX_REPLY      = 5,
};

typedef struct RdmaCmMuxHdr {
    uint32_t magic;             /* RDMACM_MUX_MAGIC */
    uint16_t version;           /* RDMACM_MUX_VERSION */
    uint16_t type;              /* RDMACM_MUX_* */
    uint32_t seq;               /* request: the client's; REPLY: echoed */
    int32_t status;             /* REPLY: 0 or a negative errno; else 0 */
    uint32_t len;               /* body bytes that follow */
    uint32_t reserved;          /* 0 */
} RdmaCmMuxHdr;

typedef struct RdmaCmMuxGid {
    uint8_t gid[16];
} RdmaCmMuxGid;

typedef struct RdmaCmMuxMad {
    /*
     * SEND: sgid is the client's own (registered) GID and dgid the
     * destination.  RECV: sgid is the sender's GID and dgid the local GID
     * the MAD was addressed to.
     */
    uint8_t sgid[16];
    uint8_t dgid[16];
    uint32_t qpn;               /* SEND: destination QP; RECV: source QP */
    uint32_t qkey;
    uint32_t flow_label;
    uint16_t pkey_index;
    uint8_t sl;
    uint8_t hop_limit;
    uint8_t traffic_class;
    uint8_t reserved[3];
    uint8_t mad[RDMACM_MUX_MAD_SIZE];
} RdmaCmMuxMad;

_Static_assert(sizeof(RdmaCmMuxHdr) == 24, "RdmaCmMuxHdr layout");
_Static_assert(sizeof(RdmaCmMuxMad) == 308, "RdmaCmMuxMad layout");

#endif
