/*
 * rdmacm-mux routing: which client owns a GID, and which client a received
 * CM MAD answers.
 *
 * A CM reply names the communication ID that its requester chose (Remote
 * Communication ID); the daemon saw that ID leave in one client's SEND, so a
 * record (client, sgid, Local Communication ID) routes the reply back even
 * when its destination GID alone would not.  SIDR replies carry the SIDR
 * request's Request ID instead.  Everything else, and replies no record
 * knows, go to the owner of the full 128-bit destination GID.
 *
 * Clients choose their IDs independently, so the same ID can be in use by
 * two clients: a record whose sgid equals the MAD's destination GID wins
 * over one that only has the ID.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/umad_cm.h>

#include "mux.h"

#define MUX_RECORD_BUCKETS 4096  /* a power of two */

typedef struct MuxClaim {
    uint8_t gid[MUX_GID_LEN];
    MuxRouteOwner *owner;
} MuxClaim;

typedef enum MuxRecordKind {
    MUX_RECORD_CM,              /* a Local Communication ID */
    MUX_RECORD_SIDR,            /* a SIDR_REQ's Request ID */
} MuxRecordKind;

struct MuxRecord {
    uint8_t sgid[MUX_GID_LEN];
    uint32_t id;
    MuxRecordKind kind;
    uint64_t stamp;             /* last use, for lookups that match by ID */
    MuxRouteOwner *owner;
    MuxRecord *hnext;           /* hash chain */
    MuxRecord **hpprev;
    MuxRecord *older;           /* the owner's LRU list */
    MuxRecord *newer;
};

static MuxClaim *claims;
static size_t n_claims;
static size_t claims_cap;
static MuxRecord *buckets[MUX_RECORD_BUCKETS];
static uint64_t record_clock;

static const uint8_t zero_gid[MUX_GID_LEN];

static uint16_t mad_attr_id(const uint8_t *mad)
{
    uint16_t v;

    memcpy(&v, mad + MUX_MAD_ATTR_ID, sizeof(v));
    return ntohs(v);
}

static uint32_t mad_be32(const uint8_t *mad, size_t off)
{
    uint32_t v;

    memcpy(&v, mad + off, sizeof(v));
    return ntohl(v);
}

/* The CM messages that carry the sender's Local Communication ID. */
static bool attr_has_local_id(uint16_t attr)
{
    switch (attr) {
    case UMAD_CM_ATTR_REQ:
    case UMAD_CM_ATTR_MRA:
    case UMAD_CM_ATTR_REJ:
    case UMAD_CM_ATTR_REP:
    case UMAD_CM_ATTR_RTU:
    case UMAD_CM_ATTR_DREQ:
    case UMAD_CM_ATTR_DREP:
    case UMAD_CM_ATTR_LAP:
    case UMAD_CM_ATTR_APR:
        return true;
    default:
        return false;
    }
}

/* The CM messages that also name the receiver's ID (all but REQ). */
static bool attr_has_remote_id(uint16_t attr)
{
    return attr != UMAD_CM_ATTR_REQ && attr_has_local_id(attr);
}

/* Claims */

static MuxClaim *claim_find(const uint8_t *gid)
{
    size_t i;

    for (i = 0; i < n_claims; i++) {
        if (!memcmp(claims[i].gid, gid, MUX_GID_LEN)) {
            return &claims[i];
        }
    }
    return NULL;
}

int mux_route_claim(MuxRouteOwner *o, const uint8_t *gid)
{
    MuxClaim *c;

    if (!memcmp(gid, zero_gid, MUX_GID_LEN)) {
        return -EINVAL;
    }
    c = claim_find(gid);
    if (c) {
        return c->owner == o ? 0 : -EADDRINUSE;
    }
    if (o->n_gids >= MUX_MAX_GIDS_PER_CLIENT) {
        return -ENOSPC;
    }
    if (n_claims == claims_cap) {
        size_t cap = claims_cap ? claims_cap * 2 : 64;
        MuxClaim *n = realloc(claims, cap * sizeof(*n));

        if (!n) {
            return -ENOMEM;
        }
        claims = n;
        claims_cap = cap;
    }
    memcpy(claims[n_claims].gid, gid, MUX_GID_LEN);
    claims[n_claims].owner = o;
    n_claims++;
    o->n_gids++;
    return 0;
}

bool mux_route_owns(const MuxRouteOwner *o, const uint8_t *gid)
{
    MuxClaim *c = claim_find(gid);

    return c && c->owner == o;
}

/* Records */

static unsigned record_bucket(MuxRecordKind kind, uint32_t id)
{
    uint32_t h = (id ^ ((uint32_t)kind << 31)) * 2654435761u;

    return (h >> 16) & (MUX_RECORD_BUCKETS - 1);
}

static void record_unlink_lru(MuxRecord *r)
{
    MuxRouteOwner *o = r->owner;

    if (r->older) {
        r->older->newer = r->newer;
    } else {
        o->oldest = r->newer;
    }
    if (r->newer) {
        r->newer->older = r->older;
    } else {
        o->newest = r->older;
    }
    r->older = r->newer = NULL;
}

static void record_push_newest(MuxRecord *r)
{
    MuxRouteOwner *o = r->owner;

    r->older = o->newest;
    r->newer = NULL;
    if (o->newest) {
        o->newest->newer = r;
    } else {
        o->oldest = r;
    }
    o->newest = r;
}

static void record_touch(MuxRecord *r)
{
    r->stamp = ++record_clock;
    record_unlink_lru(r);
    record_push_newest(r);
}

static void record_free(MuxRecord *r)
{
    record_unlink_lru(r);
    *r->hpprev = r->hnext;
    if (r->hnext) {
        r->hnext->hpprev = r->hpprev;
    }
    r->owner->n_records--;
    free(r);
}

static void record_add(MuxRouteOwner *o, MuxRecordKind kind, uint32_t id,
                       const uint8_t *sgid)
{
    MuxRecord **head = &buckets[record_bucket(kind, id)];
    MuxRecord *r;

    for (r = *head; r; r = r->hnext) {
        if (r->owner == o && r->kind == kind && r->id == id &&
            !memcmp(r->sgid, sgid, MUX_GID_LEN)) {
            record_touch(r);
            return;
        }
    }
    if (o->n_records >= MUX_MAX_RECORDS_PER_CLIENT) {
        record_free(o->oldest);
    }
    r = calloc(1, sizeof(*r));
    if (!r) {
        /* Only costs the ID route; the GID route still works. */
        return;
    }
    memcpy(r->sgid, sgid, MUX_GID_LEN);
    r->id = id;
    r->kind = kind;
    r->owner = o;
    r->stamp = ++record_clock;
    r->hnext = *head;
    r->hpprev = head;
    if (*head) {
        (*head)->hpprev = &r->hnext;
    }
    *head = r;
    record_push_newest(r);
    o->n_records++;
}

void mux_route_note_send(MuxRouteOwner *o, const uint8_t *sgid,
                         const uint8_t *mad)
{
    uint16_t attr = mad_attr_id(mad);

    if (attr_has_local_id(attr)) {
        record_add(o, MUX_RECORD_CM, mad_be32(mad, MUX_MAD_LOCAL_COMM_ID),
                   sgid);
    } else if (attr == UMAD_CM_ATTR_SIDR_REQ) {
        record_add(o, MUX_RECORD_SIDR, mad_be32(mad, MUX_MAD_LOCAL_COMM_ID),
                   sgid);
    }
}

static MuxRecord *record_find(MuxRecordKind kind, uint32_t id,
                              const uint8_t *dgid)
{
    MuxRecord *r, *best = NULL;

    for (r = buckets[record_bucket(kind, id)]; r; r = r->hnext) {
        if (r->kind != kind || r->id != id) {
            continue;
        }
        if (!memcmp(r->sgid, dgid, MUX_GID_LEN)) {
            return r;
        }
        if (!best || r->stamp > best->stamp) {
            best = r;
        }
    }
    return best;
}

MuxRouteOwner *mux_route_lookup(const uint8_t *dgid, const uint8_t *mad,
                                MuxRouteReason *reason)
{
    uint16_t attr = mad_attr_id(mad);
    MuxRecord *r = NULL;
    MuxClaim *c;

    if (attr_has_remote_id(attr)) {
        r = record_find(MUX_RECORD_CM, mad_be32(mad, MUX_MAD_REMOTE_COMM_ID),
                        dgid);
        *reason = MUX_ROUTE_COMM_ID;
    } else if (attr == UMAD_CM_ATTR_SIDR_REP) {
        r = record_find(MUX_RECORD_SIDR,
                        mad_be32(mad, MUX_MAD_LOCAL_COMM_ID), dgid);
        *reason = MUX_ROUTE_SIDR_ID;
    }
    if (r) {
        record_touch(r);
        return r->owner;
    }
    c = claim_find(dgid);
    *reason = c ? MUX_ROUTE_GID : MUX_ROUTE_NONE;
    return c ? c->owner : NULL;
}

static void records_drop_sgid(MuxRouteOwner *o, const uint8_t *gid)
{
    MuxRecord *r = o->oldest, *next;

    for (; r; r = next) {
        next = r->newer;
        if (!gid || !memcmp(r->sgid, gid, MUX_GID_LEN)) {
            record_free(r);
        }
    }
}

int mux_route_release(MuxRouteOwner *o, const uint8_t *gid)
{
    MuxClaim *c = claim_find(gid);

    if (!c || c->owner != o) {
        return -ENOENT;
    }
    *c = claims[--n_claims];
    o->n_gids--;
    records_drop_sgid(o, gid);
    return 0;
}

void mux_route_drop_owner(MuxRouteOwner *o)
{
    size_t i = 0;

    while (i < n_claims) {
        if (claims[i].owner == o) {
            claims[i] = claims[--n_claims];
        } else {
            i++;
        }
    }
    o->n_gids = 0;
    records_drop_sgid(o, NULL);
}

void mux_route_init(void)
{
    claims = NULL;
    n_claims = claims_cap = 0;
    memset(buckets, 0, sizeof(buckets));
}

void mux_route_fini(void)
{
    free(claims);
    claims = NULL;
    n_claims = claims_cap = 0;
}
