/*
 * linger-qp.so: an LD_PRELOAD library for the test guest that holds
 * ibv_destroy_qp() back for $LINGER_QP_SECONDS (default 2) seconds.
 *
 * Copyright (c) 2026 The pvrdma authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 *
 * Why: ibv_rc_pingpong has no closing handshake.  Each side destroys its
 * QP as soon as its own last SEND is acknowledged and its last RECV has
 * completed.  If the acknowledgement of the other side's last SEND is then
 * lost on the link, the other side retransmits to a QP that no longer
 * exists, and fails with "transport retry counter exceeded" although every
 * message arrived.  That is the program's race, not the transport's: on a
 * lossy link (tests/guest/two-guests.sh --lossy) it ends about one run in
 * thirty.  With this library preloaded, each side keeps its QP for a while
 * after it is done, as an application with a closing handshake would, so
 * the retransmission reaches a live QP and is answered as a duplicate.
 *
 * Interposes the symbol only; the real function is found with dlvsym().
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct ibv_qp;

int ibv_destroy_qp(struct ibv_qp *qp)
{
    static int (*real)(struct ibv_qp *);
    const char *s = getenv("LINGER_QP_SECONDS");
    unsigned secs = s ? (unsigned)strtoul(s, NULL, 10) : 2;

    if (!real) {
        real = (int (*)(struct ibv_qp *))dlvsym(RTLD_NEXT, "ibv_destroy_qp",
                                                "IBVERBS_1.1");
        if (!real) {
            fprintf(stderr, "linger-qp: no ibv_destroy_qp@IBVERBS_1.1\n");
            return -1;
        }
    }
    if (secs) {
        sleep(secs);
    }
    return real(qp);
}
