/*
 * rdmacm-mux internals: the host port (umad + GID table), the routing
 * tables, the clients and the daemon's state, shared by its source files.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef MUX_H
#define MUX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "rdmacm-mux.h"

#define MUX_MAX_CLIENTS         256
/* Defaults of --max-clients-per-uid and --idle-timeout. */
#define MUX_DEFAULT_MAX_PER_UID 64
#define MUX_DEFAULT_IDLE_MS     (60 * 1000)
#define MUX_MAX_GID_RULES       256
#define MUX_MAX_GIDS_PER_CLIENT 128
/* A client's unread output; past it, MADs for that client are dropped. */
#define MUX_OUT_CAP             (64 * 1024)
/* Bytes read from a client at a time (many messages per read). */
#define MUX_IN_CAP              4096
/* Received MADs handled per loop iteration before clients get their turn. */
#define MUX_RX_BATCH            64

/* The CM class version of IBA 1.2 (Linux's IB_CM_CLASS_VERSION). */
#define MUX_CM_CLASS_VERSION    2
#define MUX_GID_LEN             16

/* Offsets in a CM MAD (IBA vol 1, 13.4.2 and 12.6). */
#define MUX_MAD_BASE_VERSION    0
#define MUX_MAD_CLASS           1
#define MUX_MAD_CLASS_VERSION   2
#define MUX_MAD_METHOD          3
#define MUX_MAD_ATTR_ID         16
#define MUX_MAD_LOCAL_COMM_ID   24      /* also SIDR's Request ID */

extern bool mux_verbose;

void mux_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void mux_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *mux_gid_str(const uint8_t *gid, char *buf, size_t len);
#define MUX_GID_STRLEN 46

/* port.c: the host port */

typedef struct MuxGidEntry {
    uint8_t gid[MUX_GID_LEN];
    uint16_t index;
    bool roce_v2;
} MuxGidEntry;

typedef struct MuxPort {
    char dev[64];
    int port_num;
    int fd;                     /* umad fd, -1 when closed */
    int agent;                  /* umad agent id, -1 when unregistered */
    char sysfs[256];            /* .../infiniband/<dev>/ports/<port> */
    MuxGidEntry *gids;          /* cache of the non-empty GID entries */
    size_t n_gids;
    struct timespec last_scan;
    bool scanned;
    void *rx_buf;               /* umad_size() + MAD */
    void *tx_buf;
} MuxPort;

bool mux_port_check(const char *dev, int port_num);
bool mux_port_open(MuxPort *p, const char *dev, int port_num);
void mux_port_close(MuxPort *p);
int mux_port_send(MuxPort *p, const RdmaCmMuxMad *m);
enum {
    MUX_RX_NONE,                /* nothing more to read now */
    MUX_RX_MAD,                 /* a MAD for the clients */
    MUX_RX_DROPPED,             /* one that is for nobody */
};
int mux_port_recv(MuxPort *p, RdmaCmMuxMad *m);

/* route.c: who owns a GID, so which client a received MAD is for */

/* Embedded in each client: its share of the routing table. */
typedef struct MuxRouteOwner {
    unsigned n_gids;
} MuxRouteOwner;

void mux_route_init(void);
void mux_route_fini(void);
int mux_route_claim(MuxRouteOwner *o, const uint8_t *gid);
int mux_route_release(MuxRouteOwner *o, const uint8_t *gid);
bool mux_route_owns(const MuxRouteOwner *o, const uint8_t *gid);
MuxRouteOwner *mux_route_lookup(const uint8_t *dgid);
void mux_route_drop_owner(MuxRouteOwner *o);

/* client.c: connections to QEMU instances */

/* Who connected: SO_PEERCRED at accept. */
typedef struct MuxPeer {
    pid_t pid;
    uid_t uid;
    gid_t gid;
} MuxPeer;

typedef struct MuxClient {
    MuxRouteOwner route;
    int fd;
    unsigned id;                /* for logs */
    MuxPeer peer;
    int64_t last_request_ms;    /* or its connection: idleness */
    uint8_t in[MUX_IN_CAP];
    size_t in_len;
    uint8_t *out;               /* MUX_OUT_CAP bytes */
    size_t out_off;             /* first unsent byte */
    size_t out_len;             /* end of queued bytes */
    uint64_t dropped;           /* RECVs dropped: queue full */
    bool gid_refusal_logged;    /* by --allow-gids, once per client */
    bool dead;                  /* to be closed by the loop */
} MuxClient;

typedef struct MuxStats {
    uint64_t rx;                /* MADs received from the port */
    uint64_t rx_delivered;
    uint64_t rx_no_dest;        /* no client for it */
    uint64_t rx_queue_full;     /* its client did not read */
    uint64_t rx_bad;            /* not a CM MAD, unknown local GID */
    uint64_t tx;                /* MADs sent for clients */
    uint64_t tx_refused;        /* SENDs answered with an error */
    uint64_t clients;           /* connections accepted */
    uint64_t clients_refused;   /* all refusals */
    uint64_t clients_refused_uid; /* of them, over max_per_uid */
    uint64_t clients_evicted;   /* idle, to make room for another */
    uint64_t protocol_errors;   /* clients cut off for malformed input */
    uint64_t gids_refused;      /* REGISTERs refused by --allow-gids */
} MuxStats;

/* --allow-gids: clients of uid may register the GIDs under prefix/len. */
typedef struct MuxGidRule {
    uid_t uid;
    uint8_t prefix[MUX_GID_LEN];
    unsigned len;               /* bits */
} MuxGidRule;

typedef struct Mux {
    MuxPort port;
    int listen_fd;
    MuxClient *clients[MUX_MAX_CLIENTS];
    unsigned n_clients;
    unsigned next_id;
    bool accept_paused;         /* out of file descriptors */
    unsigned max_per_uid;       /* clients of one peer user */
    int64_t idle_ms;            /* evictable after; 0: never */
    int64_t now_ms;             /* monotonic, set by the loop */
    int64_t refusal_logged_ms;  /* refusals are logged once a second */
    const MuxGidRule *gid_rules; /* none: any client may register any GID */
    unsigned n_gid_rules;
    MuxStats stats;
} Mux;

void mux_client_accept(Mux *mux);
bool mux_client_add(Mux *mux, int fd, const MuxPeer *peer);
void mux_client_service(Mux *mux, MuxClient *c);
void mux_client_flush(MuxClient *c);
bool mux_client_wants_input(const MuxClient *c);
bool mux_client_deliver(Mux *mux, MuxClient *c, const RdmaCmMuxMad *m);
void mux_client_close(Mux *mux, MuxClient *c);
void mux_client_route(Mux *mux, const RdmaCmMuxMad *m);

#endif
