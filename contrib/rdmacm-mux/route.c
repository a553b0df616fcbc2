/*
 * rdmacm-mux routing: which client owns a GID, and so which client a
 * received CM MAD is for.
 *
 * A GID belongs to at most one client, and a client may send only from the
 * GIDs it holds.  A received MAD goes to the owner of its full 128-bit
 * destination GID and to nobody else: the port hands up the GID that the
 * sender addressed, and a CM reply is addressed to the GID its request
 * came from.  Replies are deliberately not routed by the communication ID
 * that left in a client's SEND: the ID is the sender's to choose, so a
 * client spraying IDs would take replies meant for another client's GID,
 * and a record of an ID from the destination GID could only name that
 * GID's owner anyway.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mux.h"

typedef struct MuxClaim {
    uint8_t gid[MUX_GID_LEN];
    MuxRouteOwner *owner;
} MuxClaim;

static MuxClaim *claims;
static size_t n_claims;
static size_t claims_cap;

static const uint8_t zero_gid[MUX_GID_LEN];

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

MuxRouteOwner *mux_route_lookup(const uint8_t *dgid)
{
    MuxClaim *c = claim_find(dgid);

    return c ? c->owner : NULL;
}

int mux_route_release(MuxRouteOwner *o, const uint8_t *gid)
{
    MuxClaim *c = claim_find(gid);

    if (!c || c->owner != o) {
        return -ENOENT;
    }
    *c = claims[--n_claims];
    o->n_gids--;
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
}

void mux_route_init(void)
{
    claims = NULL;
    n_claims = claims_cap = 0;
}

void mux_route_fini(void)
{
    free(claims);
    claims = NULL;
    n_claims = claims_cap = 0;
}
