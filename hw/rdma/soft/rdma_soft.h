/*
 * The soft RDMA engine: internal interfaces.
 *
 * rdma_soft.c         backend ops, per-object engine state
 * rdma_soft_mem.c     keys, access rights and data movement in guest memory
 * rdma_soft_opcode.c  the IB transport opcodes (rdma_soft_pkt.h: packets)
 * rdma_soft_req.c     requester: send WRs into request packets, in a
 *                     per-QP queue of outstanding WRs ordered by PSN
 * rdma_soft_resp.c    responder: request packets into placement, receive
 *                     completions and ACK, NAK and response packets
 * rdma_soft_comp.c    completer: response packets into send completions,
 *                     in PSN order; RNR waits
 * rdma_soft_link.c    the transport (loopback to a QP of this device, or
 *                     the port) and the engine's one loop that delivers
 *                     packets
 * rdma_soft_port.c    the port: RoCE v2 frames on function 0's netdev
 * rdma_soft_wire.c    packets to frames and back
 *
 * As in Linux rxe, the three halves of a QP exchange packets only: a
 * requester never calls the peer's responder, it transmits; the loop in
 * rdma_soft_link.c delivers each packet once the call that sent it is
 * done, so no half re-enters another, nor itself, nor the front-end
 * ring it is walking.  Completions go to the front-end from one place
 * each: rdma_soft_complete_wqe() (send) and rdma_soft_complete_recv().
 *
 * Everything runs under the BQL: in a vCPU thread (doorbell), in a main
 * loop bottom half, in a main loop timer (RNR, retransmission) or in the
 * main loop's receive path of the link (rdma_soft_port.c), inside one of
 * the device's entry points (rdma_rm_enter()): work goes on from that
 * entry point's budget and leaves the rest to run_bh.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#ifndef HW_RDMA_SOFT_RDMA_SOFT_H
#define HW_RDMA_SOFT_RDMA_SOFT_H

#include "qemu/units.h"
#include "qemu/timer.h"
#include "qemu/queue.h"
#include "hw/rdma/rdma_backend.h"
#include "rdma_soft_pkt.h"

typedef struct RdmaSoft RdmaSoft;

/*
 * The engine's scatter lists (1.5 KiB each), packets and loopback queue
 * are written before they are read; clearing them (RDMA_UNINIT) was most
 * of what the engine cost a doorbell (perf during ib_write_lat: the
 * memsets of a few KiB of stack per packet).
 */
#define RDMA_SOFT_UNINIT    RDMA_UNINIT

/*
 * A send WR the requester took from the front-end, until it completes.
 * Its packets carry PSNs first_psn..last_psn (a READ: those of its
 * responses); next_psn is the next one the requester sends, ack_psn the
 * first one not acknowledged (a READ: not answered), so going back N is
 * setting next_psn back to ack_psn.
 */
typedef struct RdmaSoftWqe {
    RdmaSendWr wr;
    uint64_t len;                   /* message bytes */
    uint32_t first_psn;
    uint32_t last_psn;
    uint32_t next_psn;
    uint32_t ack_psn;
    QTAILQ_ENTRY(RdmaSoftWqe) next;
} RdmaSoftWqe;

/* The requester and completer of one QP (rdma_soft_req.c, _comp.c). */
typedef struct RdmaSoftReq {
    QTAILQ_HEAD(, RdmaSoftWqe) wqes;    /* outstanding, in PSN order */
    uint32_t nwqe;
    uint32_t psn;                   /* the PSN of the next new WR */
    /*
     * One past the highest PSN ever sent: an ACK may name any PSN before
     * it, also one sent before a go-back resends it.
     */
    uint32_t sent_psn;
    /*
     * The last PSN sent with AckReq (or a READ or atomic request, which
     * its response acknowledges): an ACK up to it is on its way.  Not
     * migrated: a load takes sent_psn - 1, as if the last packet had
     * asked; at worst the retransmission timer asks instead.
     */
    uint32_t asked_psn;
    bool due;                       /* packets to send from the bottom half */
    bool rnr_wait;                  /* RNR NAK: waits for its timer */
    uint32_t rnr_attempts;
    uint32_t rnr_dest_qpn;          /* loopback: whose receives we wait for */
    QEMUTimer *rnr_timer;
    /* On the link: the local ACK timeout (IB 9.7.6.1.3) and its retries */
    QEMUTimer *retry_timer;
    uint32_t retry_left;
    bool timed_out;                 /* the timer expired: for the bh */
    /*
     * A probe before the timeout (rdma_soft_retry_restart()): while
     * @probe_due the retry timer is set for the probe, and the timeout
     * itself is due at @timeout_at (virtual clock).  @probed: the probe
     * of this timeout period went out.
     */
    bool probe_due;
    bool probed;
    int64_t timeout_at;
    /*
     * The round trip to the peer (RFC 6298's estimator, in ns; 0 before
     * the first sample), measured from a packet that asked for an ACK,
     * sent at @rtt_sent_ns with PSN @rtt_psn, to the ACK or response that
     * covers it; a go-back cancels the measurement (Karn: an answer may
     * be the first transmission's).  With the probe state, not migrated:
     * a load starts without an estimate, as a new path would, and probes
     * again once it has one.
     */
    int64_t srtt_ns;
    int64_t rttvar_ns;
    int64_t rtt_sent_ns;            /* -1: nothing being measured */
    uint32_t rtt_psn;
    /*
     * Went back because responses came out of order: no more such
     * retries until an answer moves on or the timer expires (each one
     * makes the responder answer again from that PSN: on a link that
     * reorders, one per stray response would flood it).
     */
    bool gap_retry;
    /*
     * A sequence NAK at @stale_psn sent the requester back: the first
     * copies of the @stale packets it had sent after that PSN may still
     * wait in the responder's socket, ahead of what goes again, and
     * count against the QP's share until an answer acknowledges
     * @stale_psn (the responder took them first).  Not migrated: a load
     * starts with none, the socket having been read during the downtime.
     */
    uint32_t stale;
    uint32_t stale_psn;
    /*
     * What the link delivers: since a loss the QP keeps at most @cwnd
     * packets unacknowledged (0: its whole share), halved once per
     * window of packets lost in (those sent before @recover_psn were
     * of the last halving) and grown by one for every
     * RDMA_SOFT_CWND_GROW acknowledged (@cwnd_acked counts towards the
     * next).  Not migrated: like the round trip, a load measures anew,
     * starting with the whole share as a new QP does.
     */
    uint32_t cwnd;
    uint32_t cwnd_acked;
    uint32_t recover_psn;
    bool running;                   /* sending: a nested call returns */
} RdmaSoftReq;

/* What the responder is in the middle of. */
typedef enum RdmaSoftMsg {
    RDMA_MSG_NONE,
    RDMA_MSG_SEND,                  /* a SEND's later packets */
    RDMA_MSG_WRITE,                 /* an RDMA WRITE's later packets */
} RdmaSoftMsg;

/*
 * RDMA READs and atomics a QP may have outstanding as requester, and
 * answers as responder (max_qp_init_rd_atom, max_qp_rd_atom): the
 * responder keeps the results of that many atomics for duplicates.  As
 * many as Linux rxe announces: perftest gives a QP the peer's figure.
 */
#define RDMA_SOFT_RD_ATOM       128

typedef struct RdmaSoftAtomicRes {
    uint32_t psn;
    uint64_t orig;                  /* the value it found, which it returned */
} RdmaSoftAtomicRes;

/*
 * A responder resource (IB 9.7.5.1.1): an RDMA READ this responder took,
 * kept so that a duplicate of it, the same request or a part of it asked
 * again from a later PSN, is answered again.  A duplicate READ that is
 * no part of a kept one is dropped: it is not the peer asking again.
 */
typedef struct RdmaSoftReadRes {
    uint32_t first_psn;             /* of its responses */
    uint32_t last_psn;
    uint64_t va;
    uint32_t rkey;
    uint32_t len;
} RdmaSoftReadRes;

/* The responder of one QP (rdma_soft_resp.c). */
typedef struct RdmaSoftResp {
    uint32_t epsn;                  /* the PSN expected next */
    /*
     * One past the last SEND, WRITE or atomic packet executed: what a
     * duplicate is acknowledged up to.  Not epsn, which a READ moves past
     * PSNs whose responses may have been lost: an ACK of those would tell
     * the requester (Linux rxe) that the READ completed, with no data.
     */
    uint32_t ack_psn;
    uint32_t msn;                   /* messages completed */
    bool nak_sent;                  /* sequence error NAKed, not yet healed */
    uint32_t msg;                   /* RdmaSoftMsg */
    uint64_t off;                   /* bytes of the message placed */
    bool has_rwqe;                  /* the receive WQE a SEND took: rwqe */
    uint64_t va;                    /* RDMA WRITE: where, from its RETH */
    uint32_t rkey;
    uint32_t len;
    /* An RDMA READ being answered (one responder resource). */
    bool read;
    bool due;                       /* responses to send from the bh */
    uint32_t read_qpn;              /* loopback: the requester */
    uint32_t read_psn;              /* PSN of the next response */
    uint64_t read_va;
    uint32_t read_rkey;
    uint32_t read_len;
    uint64_t read_off;              /* bytes answered */
    bool read_dup;                  /* answering a duplicate: MSN stays */
    uint8_t natomic;                /* results kept in atomic[] */
    uint8_t atomic_next;            /* the slot the next one takes */
    uint8_t nres;                   /* READs kept in res[] */
    uint8_t res_next;               /* the slot the next one takes */
    /*
     * The receive WQE and the two rings are in RdmaSoftRespStore (the
     * QP's @store): the responder's state is then a few words, which its
     * migration record copies (RdmaSoftQpMig), not 6 KiB per QP.  NULL
     * until the responder first takes a SEND, an atomic or a READ
     * (rdma_soft_resp_store()); natomic and nres are 0 until then.
     */
    RdmaRecvWr *rwqe;
    RdmaSoftAtomicRes *atomic;
    RdmaSoftReadRes *res;
} RdmaSoftResp;

typedef struct RdmaSoftRespStore {
    RdmaRecvWr rwqe;                /* 1 KiB the hot path never reads */
    /*
     * The last RDMA_SOFT_RD_ATOM atomics executed, a ring filled from
     * slot 0: a duplicate of any of them gets its result again (IB
     * 9.7.5.1.1: never executed twice).  As many as a requester may have
     * outstanding.
     */
    RdmaSoftAtomicRes atomic[RDMA_SOFT_RD_ATOM];
    /*
     * The READs taken, a ring like atomic[]; a duplicate is looked up in
     * the newest max_dest_rd_atomic of them, the QP's responder
     * resources.
     */
    RdmaSoftReadRes res[RDMA_SOFT_RD_ATOM];
} RdmaSoftRespStore;

/*
 * Requests from the link that arrived while the responder was answering
 * an RDMA READ: a responder answers in PSN order, so they wait their turn
 * (copied: a frame's payload does not outlive its delivery).  Not
 * migrated: requests in flight at the switch-over may be lost, and the
 * requester sends them again.
 */
#define RDMA_SOFT_BACKLOG_MAX   256
/*
 * ... and at most this many bytes of them over all QPs of a device: a
 * peer that keeps responders busy cannot make the device hold more.
 */
#define RDMA_SOFT_BACKLOG_BYTES (4 * MiB)

/*
 * On the link a device keeps at most this much unacknowledged, shared
 * equally by its RC QPs with work outstanding: packets sent and not
 * acknowledged, RDMA READ responses asked for and not yet received.  A
 * receiver that takes frames from a socket loses what does not fit its
 * buffer (QEMU's -netdev dgram: Linux's default of 208 KiB, about 90
 * frames of a 1024-byte path MTU), and a lost tail is found only by the
 * retransmission timer, which RDMA-CM sets to a second or more.  A window
 * per QP was not enough: sixteen QPs (ib_write_bw -q 16) had 1 MiB in
 * flight and lost the tail of every burst.  The requester asks for an ACK
 * every half window (AckReq) and with the packet that fills it, and asks
 * a long READ in requests of half a window each.
 */
#define RDMA_SOFT_WIRE_WINDOW   (64 * KiB)

/*
 * A busy QP's share of the window is at least this: with more busy QPs
 * than the window holds shares, they take turns (RdmaSoft.wait_list)
 * rather than each sending a packet or two per round trip and asking an
 * ACK for it (ib_write_bw -q 64: a share of one packet, an ACK for every
 * packet, a third of -q 1's rate).
 */
#define RDMA_SOFT_MIN_SHARE     (RDMA_SOFT_WIRE_WINDOW / 4)

/*
 * A QP's window made smaller by a loss grows by a packet for every this
 * many acknowledged (rdma_soft_req_acked()).  Halved at every loss, it
 * settles where what it grows between two losses is half of it: with a
 * loss every 33 packets (3%) near 66 / 4 packets, so that a go-back
 * sends a quarter of the window again rather than all of it; with one
 * every 200 (0.5%) it is whole again before the next.  With 2, the 3%
 * row of tests/bench/loss-bench.sh between two guests was 13.16 MB/s
 * against 16.59 with 4 (medians of three runs), the 0.5% row the same.
 */
#define RDMA_SOFT_CWND_GROW     4

/*
 * The tail probe goes off at least this long after the last answer
 * (rdma_soft_retry_restart()): a spurious probe costs two packets and
 * their ACKs, but a QEMU on a busy host answers late now and then.
 */
#define RDMA_SOFT_PROBE_MIN_NS  (1 * SCALE_MS)

/*
 * READ answers on the link go out in bursts of half the window's packets
 * (at a path MTU of 1024: 32 KiB, well within a receiving socket's 208
 * KiB) once a requester has had to ask again; the pause after a burst
 * starts at RDMA_SOFT_PACE_MIN_NS and is at most RDMA_SOFT_PACE_MAX_NS.
 */
#define RDMA_SOFT_PACE_MIN_NS   (500 * SCALE_US)
#define RDMA_SOFT_PACE_MAX_NS   (16 * SCALE_MS)

typedef struct RdmaSoftBacklogPkt {
    RdmaSoftPkt pkt;
    uint8_t payload[];
} RdmaSoftBacklogPkt;

/* Engine state of one QP. */
typedef struct RdmaSoftQp {
    RdmaSoft *soft;
    RdmaQp *qp;
    /* something is due (req.due, req.timed_out, resp.due): on run_list */
    bool queued;
    QTAILQ_ENTRY(RdmaSoftQp) run_next;
    bool busy;                      /* counted in RdmaSoft.nbusy */
    uint32_t inflight;              /* counted in RdmaSoft.inflight */
    /*
     * On RdmaSoft.wait_list: the device's window stopped it.  @kicked:
     * taken from that list, its turn with the window, until its share or
     * the device's window stops it again (rdma_soft_req_device_open()).
     */
    bool waiting;
    QTAILQ_ENTRY(RdmaSoftQp) wait_next;
    bool kicked;
    bool remote;                    /* RC: the peer is on the link */
    RdmaSoftWqe *spare;             /* a completed WQE, for the next WR */
    RdmaSoftReq req;
    RdmaSoftResp resp;
    /*
     * What @resp's pointers point at, allocated when first needed: 6 KiB
     * that a QP which only sends never touches, and that made creating a
     * QP (a load restores a thousand) mostly the allocation's.
     */
    RdmaSoftRespStore *store;
    GQueue backlog;                 /* RdmaSoftBacklogPkt */
    /*
     * Pacing of the responder's READ answers on the link: after a burst
     * of half the window's packets of one answer, the next waits
     * @pace_ns on @pace_timer; @paced counts the packets since the last
     * pause.  @pace_ns is 0 until a requester asks a READ again (what it
     * got had a gap: a receiver overrun by the burst loses its tail),
     * doubles with every such request up to RDMA_SOFT_PACE_MAX_NS, and
     * shrinks by a quarter with every new READ (rdma_soft_resp_pace()).
     * Not migrated: a load starts unpaced, and answers a paused READ at
     * once.
     */
    QEMUTimer *pace_timer;
    int64_t pace_ns;
    uint32_t paced;
} RdmaSoftQp;

/*
 * The engine in the migration stream (rdma_soft_vmstate.c): a record per
 * QP, then the outstanding WRs and the receive WQEs of messages in
 * progress of all QPs, in the order of the QP records.  Flat arrays: a
 * load that fails half-way leaves nothing to free but the arrays.
 */
typedef struct RdmaSoftQpMig {
    uint32_t qpn;
    /* requester */
    uint32_t psn;
    uint32_t sent_psn;
    bool due;
    bool rnr_wait;
    uint32_t rnr_attempts;
    uint32_t rnr_dest_qpn;
    int64_t rnr_left_ns;            /* time left on the RNR timer, or -1 */
    uint32_t retry_left;
    int64_t retry_left_ns;          /* ... on the retransmission timer */
    bool timed_out;
    bool gap_retry;
    uint32_t nwqe;                  /* its records in RdmaSoft.mig_wqe */
    /*
     * The responder.  resp.rwqe is NULL (the WQE is in RdmaSoft.mig_rwqe
     * when has_rwqe); resp.atomic and resp.res are the record's own
     * copies of the kept entries, natomic and nres of them (or NULL).
     */
    RdmaSoftResp resp;
} RdmaSoftQpMig;

typedef struct RdmaSoftWqeMig {
    uint32_t qpn;
    RdmaSendWr wr;
    uint64_t len;
    uint32_t first_psn;
    uint32_t last_psn;
    uint32_t next_psn;
    uint32_t ack_psn;
} RdmaSoftWqeMig;

typedef struct RdmaSoftRwqeMig {
    uint32_t qpn;
    RdmaRecvWr wr;
} RdmaSoftRwqeMig;

/*
 * The loopback link: packets between QPs of this device, in order.  The
 * queue lives on the stack of the call that is delivering, and the
 * pointer to it in that thread (a vCPU's or the main loop's, holding the
 * BQL), not in RdmaSoft: a ping-pong's two vCPUs would otherwise pass the
 * device's cache lines back and forth on every packet.
 */
#define RDMA_SOFT_LOOP_LEN  8

typedef struct RdmaSoftLoop {
    RdmaSoft *soft;
    RdmaSoftPkt q[RDMA_SOFT_LOOP_LEN];
    uint32_t head, n;
} RdmaSoftLoop;

typedef struct RdmaSoftPort RdmaSoftPort;

struct RdmaSoft {
    RdmaBackend be;
    RdmaSoftPort *port;             /* function 0's link, once it has GIDs */
    bool port_warned;               /* said why there is no port */
    RdmaPortStats stats;            /* for query-pvrdma */
    QEMUBH *run_bh;                 /* packets due, under the guard */
    /*
     * The QPs with something due, in the order it became due
     * (rdma_soft_qp_due()): the bottom half takes these, not a walk over
     * every QP slot (ten thousand of them, for each packet burst).
     */
    QTAILQ_HEAD(, RdmaSoftQp) run_list;
    uint32_t nrun;
    VMChangeStateEntry *vm_state;   /* stops the engine with the VM */
    uint32_t nbusy;                 /* QPs with WRs outstanding */
    /*
     * Packets the RC QPs with a peer on the link have sent and not had
     * acknowledged (READ responses asked included): the window bounds
     * this sum too, not only each QP's share (rdma_soft_req_account()).
     * Derived, not migrated: a load counts its QPs again.
     */
    uint32_t inflight;
    /*
     * RC QPs with a peer on the link that the device's window stopped,
     * in the order it did: each takes its turn when ACKs open the
     * window (rdma_soft_window_kick()).  Derived, not migrated: a loaded
     * QP with work is due, and waits again if the window stops it.
     */
    QTAILQ_HEAD(, RdmaSoftQp) wait_list;
    uint64_t backlog_bytes;         /* held by all QPs' backlogs */
    int32_t mig_n;                  /* records while saved or loaded */
    bool mig_loading;               /* between pre_load and post_load */
    RdmaSoftQpMig *mig;
    int32_t mig_nwqe;
    RdmaSoftWqeMig *mig_wqe;
    int32_t mig_nrwqe;
    RdmaSoftRwqeMig *mig_rwqe;
};

/* Bytes of a scatter list, resolved to MRs and checked. */
typedef struct RdmaSoftSeg {
    RdmaMr *mr;
    uint64_t va;
    uint64_t len;
} RdmaSoftSeg;

typedef struct RdmaSoftSgl {
    RdmaSoftSeg seg[RDMA_MAX_SGE];
    uint32_t nseg;
    uint64_t total;
} RdmaSoftSgl;

/* rdma_soft_mem.c */
RdmaWcStatus rdma_soft_local_sgl(RdmaResources *rm, uint32_t pd_handle,
                                 const RdmaSge *sge, uint32_t num_sge,
                                 uint32_t access, RdmaSoftSgl *sgl);
bool rdma_soft_remote_seg(RdmaResources *rm, const RdmaQp *qp, uint64_t va,
                          uint32_t rkey, uint64_t len, uint32_t access,
                          RdmaSoftSgl *sgl);
bool rdma_soft_copy(PCIDevice *pdev, RdmaSoftSgl *dst, uint64_t dst_off,
                    RdmaSoftSgl *src, uint64_t src_off, uint64_t len);
bool rdma_soft_write_buf(PCIDevice *pdev, RdmaSoftSgl *dst, uint64_t off,
                         const void *buf, uint64_t len);
bool rdma_soft_read_buf(PCIDevice *pdev, RdmaSoftSgl *src, uint64_t off,
                        void *buf, uint64_t len);
bool rdma_soft_atomic(PCIDevice *pdev, RdmaSoftSgl *remote,
                      RdmaWrOpcode op, uint64_t compare_add, uint64_t swap,
                      uint64_t *orig);

/* rdma_soft_req.c: the requester */
#define RDMA_RNR_INFINITE   7
/* The longest RNR timer of the IB spec (table 45): 655.36 ms */
#define RDMA_SOFT_RNR_MAX_NS    (65536 * 10000ll)
#define RDMA_SOFT_MAX_MSG       (1ull << 31)
/* UD: a message is one packet, at most the port's active MTU (4096). */
#define RDMA_SOFT_UD_MAX        4096
void rdma_soft_post_send(RdmaBackend *be, RdmaQp *qp, const RdmaSendWr *wr);
void rdma_soft_req_run(RdmaSoftQp *sqp);
uint64_t rdma_soft_req_step_bytes(RdmaSoftQp *sqp);
RdmaSoftWqe *rdma_soft_wqe_at(RdmaSoftQp *sqp, uint32_t psn);
bool rdma_soft_opcode_ok(const RdmaQp *qp, RdmaWrOpcode op);
uint64_t rdma_soft_pmtu(const RdmaQp *qp);
void rdma_soft_qp_locate(RdmaSoftQp *sqp, const uint8_t *dgid);
const uint8_t *rdma_soft_qp_sgid(const RdmaSoftQp *sqp);
void rdma_soft_qp_address(RdmaSoftQp *sqp, RdmaSoftPkt *pkt);
void rdma_soft_req_update(RdmaSoftQp *sqp, bool kick);
void rdma_soft_req_flush(RdmaSoftQp *sqp, bool complete);
void rdma_soft_rnr_timer(void *opaque);
void rdma_soft_retry_timer(void *opaque);
void rdma_soft_retry_restart(RdmaSoftQp *sqp, bool progress);
bool rdma_soft_req_timer_probe(RdmaSoftQp *sqp);
void rdma_soft_req_account(RdmaSoftQp *sqp);
void rdma_soft_rtt_answer(RdmaSoftQp *sqp, uint32_t psn);
void rdma_soft_pace_timer(void *opaque);
bool rdma_soft_req_rewind(RdmaSoftQp *sqp, uint32_t psn);
void rdma_soft_req_go_back(RdmaSoftQp *sqp, uint32_t psn);
void rdma_soft_req_nak_back(RdmaSoftQp *sqp, uint32_t psn);
void rdma_soft_req_lost(RdmaSoftQp *sqp, uint32_t psn);
void rdma_soft_req_acked(RdmaSoftQp *sqp, uint32_t n);
void rdma_soft_req_kick(RdmaSoftQp *sqp);
void rdma_soft_wqe_free(RdmaSoftQp *sqp, RdmaSoftWqe *w);
RdmaWcStatus rdma_soft_invalidate(RdmaResources *rm, RdmaQp *qp,
                                  uint32_t rkey);

/* rdma_soft_resp.c: the responder */
void rdma_soft_resp_recv(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt);
void rdma_soft_resp_run(RdmaSoftQp *sqp);
void rdma_soft_resp_store(RdmaSoftQp *sqp);
void rdma_soft_resp_flush(RdmaSoftQp *sqp, bool complete);
void rdma_soft_backlog_clear(RdmaSoftQp *sqp);
bool rdma_soft_resp_busy(RdmaSoftQp *sqp);
void rdma_soft_complete_recv(RdmaResources *rm, RdmaQp *qp,
                             const RdmaRecvWr *rwr, RdmaWc *wc,
                             bool solicited);

/* rdma_soft_comp.c: the completer */
void rdma_soft_comp_recv(RdmaSoftQp *sqp, const RdmaSoftPkt *pkt);
void rdma_soft_comp_unreachable(RdmaSoftQp *sqp, uint32_t psn);
void rdma_soft_comp_timeout(RdmaSoftQp *sqp);
void rdma_soft_complete_wqe(RdmaSoftQp *sqp, RdmaSoftWqe *w,
                            RdmaWcStatus st);
void rdma_soft_fail_wqe(RdmaSoftQp *sqp, RdmaSoftWqe *w, RdmaWcStatus st);

/* rdma_soft_link.c: the transport and the engine's one loop */
void rdma_soft_xmit(RdmaSoft *soft, const RdmaSoftPkt *pkt);
void rdma_soft_receive(RdmaSoft *soft, const RdmaSoftPkt *pkt);
bool rdma_soft_delivering(RdmaSoft *soft);
void rdma_soft_run_bh(void *opaque);
void rdma_soft_qp_due(RdmaSoftQp *sqp);
void rdma_soft_qp_undue(RdmaSoftQp *sqp);
void rdma_soft_window_kick(RdmaSoft *soft);
void rdma_soft_window_unwait(RdmaSoftQp *sqp);
void rdma_soft_recv_posted(RdmaBackend *be, RdmaQp *qp, RdmaSrq *srq);
void rdma_soft_flush_qp(RdmaBackend *be, RdmaQp *qp);
bool rdma_soft_payload_sgl(RdmaSoft *soft, const RdmaSoftPkt *pkt,
                           RdmaSoftSgl *sgl, uint64_t *off);
bool rdma_soft_place(RdmaSoft *soft, const RdmaSoftPkt *pkt,
                     RdmaSoftSgl *dst, uint64_t off);

/* rdma_soft_port.c: RoCE v2 frames on function 0's link */
void rdma_soft_port_attach(RdmaSoft *soft);
void rdma_soft_port_detach(RdmaSoft *soft);
void rdma_soft_port_send(RdmaSoft *soft, const RdmaSoftPkt *pkt);
void rdma_soft_port_run(RdmaSoft *soft);
unsigned rdma_soft_port_mtu(RdmaSoft *soft);
uint32_t rdma_soft_port_ib_mtu(RdmaSoft *soft);
const char *rdma_soft_port_netdev(RdmaSoft *soft);

#endif
