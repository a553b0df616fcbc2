/*
 * pvrdma guest ABI check: hw/rdma/vmw/pvrdma_abi.h against the Linux
 * vmw_pvrdma driver's pvrdma_dev_api.h, pvrdma_verbs.h, pvrdma_ring.h and
 * the uAPI header rdma/vmw_pvrdma-abi.h.
 *
 * Built and run by tests/abi/pvrdma-abi-check.sh, which extracts the kernel
 * headers, renames their PVRDMA_* constants to KERN_PVRDMA_* (ours and
 * theirs share the names, and enumerators cannot be defined twice), and
 * generates the shim and coverage headers included here.
 *
 * For every structure and union of ours: size, alignment, and the offset
 * and size of every field (nested inline members by path), against its
 * kernel counterpart KERN_OF_<ours>; for every constant: its value.  The
 * script fails the "Coverage" group for any member or constant of ours
 * that no line here checks (or, for constants the kernel headers lack,
 * lists in NOT_IN_KERNEL).  A failing check prints
 * "FAIL: <what> ours=<n> kernel=<n>"; each group ends in one
 * "PASS: abi <group>" or "FAIL: abi <group>" line, and the last line is
 * "abi: N passed, N failed" over the groups.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "pvrdma-abi-shim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pvrdma_ring.h"
#include "pvrdma_verbs.h"
#include "pvrdma_dev_api.h"
#include "vmw_pvrdma-abi.h"

#include "hw/rdma/vmw/pvrdma_abi.h"

#include "pvrdma-abi-coverage.h"

/* The kernel counterpart of each structure and union of ours. */
#define KERN_OF_PvrdmaRing struct pvrdma_ring
#define KERN_OF_PvrdmaRingState struct pvrdma_ring_state
#define KERN_OF_PvrdmaRingPageInfo struct pvrdma_ring_page_info
#define KERN_OF_PvrdmaEqe struct pvrdma_eqe
#define KERN_OF_PvrdmaCqne struct pvrdma_cqne
#define KERN_OF_PvrdmaGid union pvrdma_gid
#define KERN_OF_PvrdmaPortAttr struct pvrdma_port_attr
#define KERN_OF_PvrdmaGlobalRoute struct pvrdma_global_route
#define KERN_OF_PvrdmaAhAttr struct pvrdma_ah_attr
#define KERN_OF_PvrdmaQpCap struct pvrdma_qp_cap
#define KERN_OF_PvrdmaSrqAttr struct pvrdma_srq_attr
#define KERN_OF_PvrdmaQpAttr struct pvrdma_qp_attr
#define KERN_OF_PvrdmaDeviceCaps struct pvrdma_device_caps
#define KERN_OF_PvrdmaDsr struct pvrdma_device_shared_region
#define KERN_OF_PvrdmaCmdHdr struct pvrdma_cmd_hdr
#define KERN_OF_PvrdmaCmdRespHdr struct pvrdma_cmd_resp_hdr
#define KERN_OF_PvrdmaCmdQueryPort struct pvrdma_cmd_query_port
#define KERN_OF_PvrdmaCmdQueryPortResp struct pvrdma_cmd_query_port_resp
#define KERN_OF_PvrdmaCmdQueryPkey struct pvrdma_cmd_query_pkey
#define KERN_OF_PvrdmaCmdQueryPkeyResp struct pvrdma_cmd_query_pkey_resp
#define KERN_OF_PvrdmaCmdCreateUc struct pvrdma_cmd_create_uc
#define KERN_OF_PvrdmaCmdCreateUcResp struct pvrdma_cmd_create_uc_resp
#define KERN_OF_PvrdmaCmdDestroyUc struct pvrdma_cmd_destroy_uc
#define KERN_OF_PvrdmaCmdCreatePd struct pvrdma_cmd_create_pd
#define KERN_OF_PvrdmaCmdCreatePdResp struct pvrdma_cmd_create_pd_resp
#define KERN_OF_PvrdmaCmdDestroyPd struct pvrdma_cmd_destroy_pd
#define KERN_OF_PvrdmaCmdCreateMr struct pvrdma_cmd_create_mr
#define KERN_OF_PvrdmaCmdCreateMrResp struct pvrdma_cmd_create_mr_resp
#define KERN_OF_PvrdmaCmdDestroyMr struct pvrdma_cmd_destroy_mr
#define KERN_OF_PvrdmaCmdCreateCq struct pvrdma_cmd_create_cq
#define KERN_OF_PvrdmaCmdCreateCqResp struct pvrdma_cmd_create_cq_resp
#define KERN_OF_PvrdmaCmdResizeCq struct pvrdma_cmd_resize_cq
#define KERN_OF_PvrdmaCmdResizeCqResp struct pvrdma_cmd_resize_cq_resp
#define KERN_OF_PvrdmaCmdDestroyCq struct pvrdma_cmd_destroy_cq
#define KERN_OF_PvrdmaCmdCreateSrq struct pvrdma_cmd_create_srq
#define KERN_OF_PvrdmaCmdCreateSrqResp struct pvrdma_cmd_create_srq_resp
#define KERN_OF_PvrdmaCmdModifySrq struct pvrdma_cmd_modify_srq
#define KERN_OF_PvrdmaCmdQuerySrq struct pvrdma_cmd_query_srq
#define KERN_OF_PvrdmaCmdQuerySrqResp struct pvrdma_cmd_query_srq_resp
#define KERN_OF_PvrdmaCmdDestroySrq struct pvrdma_cmd_destroy_srq
#define KERN_OF_PvrdmaCmdCreateQp struct pvrdma_cmd_create_qp
#define KERN_OF_PvrdmaCmdCreateQpResp struct pvrdma_cmd_create_qp_resp
#define KERN_OF_PvrdmaCmdCreateQpRespV2 struct pvrdma_cmd_create_qp_resp_v2
#define KERN_OF_PvrdmaCmdModifyQp struct pvrdma_cmd_modify_qp
#define KERN_OF_PvrdmaCmdQueryQp struct pvrdma_cmd_query_qp
#define KERN_OF_PvrdmaCmdQueryQpResp struct pvrdma_cmd_query_qp_resp
#define KERN_OF_PvrdmaCmdDestroyQp struct pvrdma_cmd_destroy_qp
#define KERN_OF_PvrdmaCmdDestroyQpResp struct pvrdma_cmd_destroy_qp_resp
#define KERN_OF_PvrdmaCmdCreateBind struct pvrdma_cmd_create_bind
#define KERN_OF_PvrdmaCmdDestroyBind struct pvrdma_cmd_destroy_bind
#define KERN_OF_PvrdmaCmdReq union pvrdma_cmd_req
#define KERN_OF_PvrdmaCmdResp union pvrdma_cmd_resp
#define KERN_OF_PvrdmaAv struct pvrdma_av
#define KERN_OF_PvrdmaSge struct pvrdma_sge
#define KERN_OF_PvrdmaRqWqeHdr struct pvrdma_rq_wqe_hdr
#define KERN_OF_PvrdmaExCmpSwap struct pvrdma_ex_cmp_swap
#define KERN_OF_PvrdmaExFetchAdd struct pvrdma_ex_fetch_add
#define KERN_OF_PvrdmaSqWqeHdr struct pvrdma_sq_wqe_hdr
#define KERN_OF_PvrdmaCqe struct pvrdma_cqe

/* Documents a constant of ours that the kernel headers do not define. */
#define NOT_IN_KERNEL(name, why) ((void)(name))

#define MAX_GROUPS 128

static struct {
    const char *name;
    int failures;
} groups[MAX_GROUPS];
static int ngroups;
static unsigned n_sizes, n_fields, n_consts;

static void group(const char *name)
{
    if (ngroups == MAX_GROUPS) {
        fprintf(stderr, "too many groups\n");
        exit(2);
    }
    groups[ngroups].name = name;
    groups[ngroups].failures = 0;
    ngroups++;
}

static void check(const char *what, uint64_t ours, uint64_t kernel)
{
    if (ours != kernel) {
        printf("FAIL: %s ours=%" PRIu64 " kernel=%" PRIu64 "\n",
               what, ours, kernel);
        groups[ngroups - 1].failures++;
    }
}

#define MEMBER_SIZE(T, f) sizeof(((T *)0)->f)

/* Size and alignment of a structure or union of ours and the kernel's. */
#define CHECK_SIZE(O)                                                       \
    do {                                                                    \
        n_sizes++;                                                          \
        check("sizeof(" #O ")", sizeof(O), sizeof(KERN_OF_##O));            \
        check("_Alignof(" #O ")", _Alignof(O), _Alignof(KERN_OF_##O));      \
    } while (0)

/* Offset and size of a field, or a path such as wr.ud.av.dmac, in both. */
#define CHECK_FIELD(O, f)                                                   \
    do {                                                                    \
        n_fields++;                                                         \
        check("offsetof(" #O ", " #f ")", offsetof(O, f),                   \
              offsetof(KERN_OF_##O, f));                                    \
        check("sizeof(" #O "." #f ")", MEMBER_SIZE(O, f),                   \
              MEMBER_SIZE(KERN_OF_##O, f));                                 \
    } while (0)

/* Offset only, of a field of ours that has another name in the kernel. */
#define CHECK_OFFSET_AS(O, of, kf)                                          \
    do {                                                                    \
        n_fields++;                                                         \
        check("offsetof(" #O ", " #of ")", offsetof(O, of),                 \
              offsetof(KERN_OF_##O, kf));                                   \
    } while (0)

/* Any other layout fact. */
#define CHECK_VALUE(what, o, k)                                             \
    do {                                                                    \
        n_fields++;                                                         \
        check(what, (o), (k));                                              \
    } while (0)

/*
 * Constants: every one of them ends up in a 32-bit register, ring element
 * or command field, so they are compared as uint32_t (the kernel's
 * response codes are int enumerators starting at 1 << 31).
 */
#define CHECK_CONST(O, K)                                                   \
    do {                                                                    \
        n_consts++;                                                         \
        check(#O, (uint32_t)(O), (uint32_t)(K));                            \
    } while (0)

/* A constant of the same name in both. */
#define CHECK_SAME(name)                                                    \
    do {                                                                    \
        n_consts++;                                                         \
        check(#name, (uint32_t)(name), (uint32_t)(KERN_##name));            \
    } while (0)

/* The response code of a command: PVRDMA_CMD_RESP(cmd) of ours. */
#define CHECK_RESP(cmd, kresp)                                              \
    do {                                                                    \
        n_consts++;                                                         \
        check("PVRDMA_CMD_RESP(" #cmd ")", PVRDMA_CMD_RESP(cmd),            \
              (uint32_t)(KERN_PVRDMA_CMD_##kresp));                         \
    } while (0)

/* The gos_info word with one of the kernel's bitfields all ones (0 - 1). */
static uint32_t gos_word(int which)
{
    struct pvrdma_gos_info gi;
    uint32_t w;

    memset(&gi, 0, sizeof(gi));
    switch (which) {
    case 0:
        gi.gos_bits--;
        break;
    case 1:
        gi.gos_type--;
        break;
    case 2:
        gi.gos_ver--;
        break;
    default:
        gi.gos_misc--;
        break;
    }
    memcpy(&w, &gi, sizeof(w));
    return w;
}

static void check_rings(void)
{
    group("PvrdmaRing");
    CHECK_SIZE(PvrdmaRing);
    CHECK_FIELD(PvrdmaRing, prod_tail);
    CHECK_FIELD(PvrdmaRing, cons_head);

    group("PvrdmaRingState");
    CHECK_SIZE(PvrdmaRingState);
    CHECK_FIELD(PvrdmaRingState, tx);
    CHECK_FIELD(PvrdmaRingState, tx.prod_tail);
    CHECK_FIELD(PvrdmaRingState, tx.cons_head);
    CHECK_FIELD(PvrdmaRingState, rx);
    CHECK_FIELD(PvrdmaRingState, rx.prod_tail);
    CHECK_FIELD(PvrdmaRingState, rx.cons_head);

    group("PvrdmaRingPageInfo");
    CHECK_SIZE(PvrdmaRingPageInfo);
    CHECK_FIELD(PvrdmaRingPageInfo, num_pages);
    CHECK_FIELD(PvrdmaRingPageInfo, reserved);
    CHECK_FIELD(PvrdmaRingPageInfo, pdir_dma);

    group("PvrdmaEqe");
    CHECK_SIZE(PvrdmaEqe);
    CHECK_FIELD(PvrdmaEqe, type);
    CHECK_FIELD(PvrdmaEqe, info);

    group("PvrdmaCqne");
    CHECK_SIZE(PvrdmaCqne);
    CHECK_FIELD(PvrdmaCqne, info);
}

static void check_verbs_structs(void)
{
    group("PvrdmaGid");
    CHECK_SIZE(PvrdmaGid);
    CHECK_FIELD(PvrdmaGid, raw);
    CHECK_FIELD(PvrdmaGid, global);
    CHECK_FIELD(PvrdmaGid, global.subnet_prefix);
    CHECK_FIELD(PvrdmaGid, global.interface_id);

    group("PvrdmaPortAttr");
    CHECK_SIZE(PvrdmaPortAttr);
    CHECK_FIELD(PvrdmaPortAttr, state);
    CHECK_FIELD(PvrdmaPortAttr, max_mtu);
    CHECK_FIELD(PvrdmaPortAttr, active_mtu);
    CHECK_FIELD(PvrdmaPortAttr, gid_tbl_len);
    CHECK_FIELD(PvrdmaPortAttr, port_cap_flags);
    CHECK_FIELD(PvrdmaPortAttr, max_msg_sz);
    CHECK_FIELD(PvrdmaPortAttr, bad_pkey_cntr);
    CHECK_FIELD(PvrdmaPortAttr, qkey_viol_cntr);
    CHECK_FIELD(PvrdmaPortAttr, pkey_tbl_len);
    CHECK_FIELD(PvrdmaPortAttr, lid);
    CHECK_FIELD(PvrdmaPortAttr, sm_lid);
    CHECK_FIELD(PvrdmaPortAttr, lmc);
    CHECK_FIELD(PvrdmaPortAttr, max_vl_num);
    CHECK_FIELD(PvrdmaPortAttr, sm_sl);
    CHECK_FIELD(PvrdmaPortAttr, subnet_timeout);
    CHECK_FIELD(PvrdmaPortAttr, init_type_reply);
    CHECK_FIELD(PvrdmaPortAttr, active_width);
    CHECK_FIELD(PvrdmaPortAttr, active_speed);
    CHECK_FIELD(PvrdmaPortAttr, phys_state);
    CHECK_FIELD(PvrdmaPortAttr, reserved);

    group("PvrdmaGlobalRoute");
    CHECK_SIZE(PvrdmaGlobalRoute);
    CHECK_FIELD(PvrdmaGlobalRoute, dgid);
    CHECK_FIELD(PvrdmaGlobalRoute, flow_label);
    CHECK_FIELD(PvrdmaGlobalRoute, sgid_index);
    CHECK_FIELD(PvrdmaGlobalRoute, hop_limit);
    CHECK_FIELD(PvrdmaGlobalRoute, traffic_class);
    CHECK_FIELD(PvrdmaGlobalRoute, reserved);

    group("PvrdmaAhAttr");
    CHECK_SIZE(PvrdmaAhAttr);
    CHECK_FIELD(PvrdmaAhAttr, grh);
    CHECK_FIELD(PvrdmaAhAttr, grh.dgid);
    CHECK_FIELD(PvrdmaAhAttr, grh.flow_label);
    CHECK_FIELD(PvrdmaAhAttr, grh.sgid_index);
    CHECK_FIELD(PvrdmaAhAttr, grh.hop_limit);
    CHECK_FIELD(PvrdmaAhAttr, grh.traffic_class);
    CHECK_FIELD(PvrdmaAhAttr, dlid);
    CHECK_FIELD(PvrdmaAhAttr, vlan_id);
    CHECK_FIELD(PvrdmaAhAttr, sl);
    CHECK_FIELD(PvrdmaAhAttr, src_path_bits);
    CHECK_FIELD(PvrdmaAhAttr, static_rate);
    CHECK_FIELD(PvrdmaAhAttr, ah_flags);
    CHECK_FIELD(PvrdmaAhAttr, port_num);
    CHECK_FIELD(PvrdmaAhAttr, dmac);
    CHECK_FIELD(PvrdmaAhAttr, reserved);

    group("PvrdmaQpCap");
    CHECK_SIZE(PvrdmaQpCap);
    CHECK_FIELD(PvrdmaQpCap, max_send_wr);
    CHECK_FIELD(PvrdmaQpCap, max_recv_wr);
    CHECK_FIELD(PvrdmaQpCap, max_send_sge);
    CHECK_FIELD(PvrdmaQpCap, max_recv_sge);
    CHECK_FIELD(PvrdmaQpCap, max_inline_data);
    CHECK_FIELD(PvrdmaQpCap, reserved);

    group("PvrdmaSrqAttr");
    CHECK_SIZE(PvrdmaSrqAttr);
    CHECK_FIELD(PvrdmaSrqAttr, max_wr);
    CHECK_FIELD(PvrdmaSrqAttr, max_sge);
    CHECK_FIELD(PvrdmaSrqAttr, srq_limit);
    CHECK_FIELD(PvrdmaSrqAttr, reserved);

    group("PvrdmaQpAttr");
    CHECK_SIZE(PvrdmaQpAttr);
    CHECK_FIELD(PvrdmaQpAttr, qp_state);
    CHECK_FIELD(PvrdmaQpAttr, cur_qp_state);
    CHECK_FIELD(PvrdmaQpAttr, path_mtu);
    CHECK_FIELD(PvrdmaQpAttr, path_mig_state);
    CHECK_FIELD(PvrdmaQpAttr, qkey);
    CHECK_FIELD(PvrdmaQpAttr, rq_psn);
    CHECK_FIELD(PvrdmaQpAttr, sq_psn);
    CHECK_FIELD(PvrdmaQpAttr, dest_qp_num);
    CHECK_FIELD(PvrdmaQpAttr, qp_access_flags);
    CHECK_FIELD(PvrdmaQpAttr, pkey_index);
    CHECK_FIELD(PvrdmaQpAttr, alt_pkey_index);
    CHECK_FIELD(PvrdmaQpAttr, en_sqd_async_notify);
    CHECK_FIELD(PvrdmaQpAttr, sq_draining);
    CHECK_FIELD(PvrdmaQpAttr, max_rd_atomic);
    CHECK_FIELD(PvrdmaQpAttr, max_dest_rd_atomic);
    CHECK_FIELD(PvrdmaQpAttr, min_rnr_timer);
    CHECK_FIELD(PvrdmaQpAttr, port_num);
    CHECK_FIELD(PvrdmaQpAttr, timeout);
    CHECK_FIELD(PvrdmaQpAttr, retry_cnt);
    CHECK_FIELD(PvrdmaQpAttr, rnr_retry);
    CHECK_FIELD(PvrdmaQpAttr, alt_port_num);
    CHECK_FIELD(PvrdmaQpAttr, alt_timeout);
    CHECK_FIELD(PvrdmaQpAttr, reserved);
    CHECK_FIELD(PvrdmaQpAttr, cap);
    CHECK_FIELD(PvrdmaQpAttr, cap.max_inline_data);
    CHECK_FIELD(PvrdmaQpAttr, ah_attr);
    CHECK_FIELD(PvrdmaQpAttr, ah_attr.grh.dgid);
    CHECK_FIELD(PvrdmaQpAttr, ah_attr.dmac);
    CHECK_FIELD(PvrdmaQpAttr, alt_ah_attr);
    CHECK_FIELD(PvrdmaQpAttr, alt_ah_attr.port_num);
}

static void check_dsr(void)
{
    group("PvrdmaDeviceCaps");
    CHECK_SIZE(PvrdmaDeviceCaps);
    CHECK_FIELD(PvrdmaDeviceCaps, fw_ver);
    CHECK_FIELD(PvrdmaDeviceCaps, node_guid);
    CHECK_FIELD(PvrdmaDeviceCaps, sys_image_guid);
    CHECK_FIELD(PvrdmaDeviceCaps, max_mr_size);
    CHECK_FIELD(PvrdmaDeviceCaps, page_size_cap);
    CHECK_FIELD(PvrdmaDeviceCaps, atomic_arg_sizes);
    CHECK_FIELD(PvrdmaDeviceCaps, ex_comp_mask);
    CHECK_FIELD(PvrdmaDeviceCaps, device_cap_flags2);
    CHECK_FIELD(PvrdmaDeviceCaps, max_fa_bit_boundary);
    CHECK_FIELD(PvrdmaDeviceCaps, log_max_atomic_inline_arg);
    CHECK_FIELD(PvrdmaDeviceCaps, vendor_id);
    CHECK_FIELD(PvrdmaDeviceCaps, vendor_part_id);
    CHECK_FIELD(PvrdmaDeviceCaps, hw_ver);
    CHECK_FIELD(PvrdmaDeviceCaps, max_qp);
    CHECK_FIELD(PvrdmaDeviceCaps, max_qp_wr);
    CHECK_FIELD(PvrdmaDeviceCaps, device_cap_flags);
    CHECK_FIELD(PvrdmaDeviceCaps, max_sge);
    CHECK_FIELD(PvrdmaDeviceCaps, max_sge_rd);
    CHECK_FIELD(PvrdmaDeviceCaps, max_cq);
    CHECK_FIELD(PvrdmaDeviceCaps, max_cqe);
    CHECK_FIELD(PvrdmaDeviceCaps, max_mr);
    CHECK_FIELD(PvrdmaDeviceCaps, max_pd);
    CHECK_FIELD(PvrdmaDeviceCaps, max_qp_rd_atom);
    CHECK_FIELD(PvrdmaDeviceCaps, max_ee_rd_atom);
    CHECK_FIELD(PvrdmaDeviceCaps, max_res_rd_atom);
    CHECK_FIELD(PvrdmaDeviceCaps, max_qp_init_rd_atom);
    CHECK_FIELD(PvrdmaDeviceCaps, max_ee_init_rd_atom);
    CHECK_FIELD(PvrdmaDeviceCaps, max_ee);
    CHECK_FIELD(PvrdmaDeviceCaps, max_rdd);
    CHECK_FIELD(PvrdmaDeviceCaps, max_mw);
    CHECK_FIELD(PvrdmaDeviceCaps, max_raw_ipv6_qp);
    CHECK_FIELD(PvrdmaDeviceCaps, max_raw_ethy_qp);
    CHECK_FIELD(PvrdmaDeviceCaps, max_mcast_grp);
    CHECK_FIELD(PvrdmaDeviceCaps, max_mcast_qp_attach);
    CHECK_FIELD(PvrdmaDeviceCaps, max_total_mcast_qp_attach);
    CHECK_FIELD(PvrdmaDeviceCaps, max_ah);
    CHECK_FIELD(PvrdmaDeviceCaps, max_fmr);
    CHECK_FIELD(PvrdmaDeviceCaps, max_map_per_fmr);
    CHECK_FIELD(PvrdmaDeviceCaps, max_srq);
    CHECK_FIELD(PvrdmaDeviceCaps, max_srq_wr);
    CHECK_FIELD(PvrdmaDeviceCaps, max_srq_sge);
    CHECK_FIELD(PvrdmaDeviceCaps, max_uar);
    CHECK_FIELD(PvrdmaDeviceCaps, gid_tbl_len);
    CHECK_FIELD(PvrdmaDeviceCaps, max_pkeys);
    CHECK_FIELD(PvrdmaDeviceCaps, local_ca_ack_delay);
    CHECK_FIELD(PvrdmaDeviceCaps, phys_port_cnt);
    CHECK_FIELD(PvrdmaDeviceCaps, mode);
    CHECK_FIELD(PvrdmaDeviceCaps, atomic_ops);
    CHECK_FIELD(PvrdmaDeviceCaps, bmme_flags);
    CHECK_FIELD(PvrdmaDeviceCaps, gid_types);
    CHECK_FIELD(PvrdmaDeviceCaps, max_fast_reg_page_list_len);

    group("PvrdmaDsr");
    CHECK_SIZE(PvrdmaDsr);
    CHECK_FIELD(PvrdmaDsr, driver_version);
    CHECK_FIELD(PvrdmaDsr, pad);
    /*
     * The kernel's gos_info is struct pvrdma_gos_info { u32 bitfields; u32
     * pad; }, ours two plain words: the offsets, the total size, and the
     * bitfields where our comment puts them (bits:2 type:4 ver:16 misc:10).
     */
    CHECK_OFFSET_AS(PvrdmaDsr, gos_info, gos_info);
    CHECK_OFFSET_AS(PvrdmaDsr, gos_pad, gos_info.pad);
    CHECK_VALUE("sizeof(PvrdmaDsr.gos_info + gos_pad)",
                MEMBER_SIZE(PvrdmaDsr, gos_info) +
                MEMBER_SIZE(PvrdmaDsr, gos_pad),
                sizeof(struct pvrdma_gos_info));
    CHECK_VALUE("PvrdmaDsr.gos_info bits mask", 0x00000003u, gos_word(0));
    CHECK_VALUE("PvrdmaDsr.gos_info type mask", 0x0000003cu, gos_word(1));
    CHECK_VALUE("PvrdmaDsr.gos_info ver mask", 0x003fffc0u, gos_word(2));
    CHECK_VALUE("PvrdmaDsr.gos_info misc mask", 0xffc00000u, gos_word(3));
    CHECK_FIELD(PvrdmaDsr, cmd_slot_dma);
    CHECK_FIELD(PvrdmaDsr, resp_slot_dma);
    CHECK_FIELD(PvrdmaDsr, async_ring_pages);
    CHECK_FIELD(PvrdmaDsr, async_ring_pages.num_pages);
    CHECK_FIELD(PvrdmaDsr, async_ring_pages.pdir_dma);
    CHECK_FIELD(PvrdmaDsr, cq_ring_pages);
    CHECK_FIELD(PvrdmaDsr, cq_ring_pages.num_pages);
    CHECK_FIELD(PvrdmaDsr, cq_ring_pages.pdir_dma);
    CHECK_FIELD(PvrdmaDsr, uar_pfn);
    CHECK_FIELD(PvrdmaDsr, uar_pfn64);
    CHECK_FIELD(PvrdmaDsr, caps);
    CHECK_FIELD(PvrdmaDsr, caps.fw_ver);
    CHECK_FIELD(PvrdmaDsr, caps.gid_types);
    CHECK_FIELD(PvrdmaDsr, caps.max_fast_reg_page_list_len);
}

static void check_cmd_structs(void)
{
    group("PvrdmaCmdHdr");
    CHECK_SIZE(PvrdmaCmdHdr);
    CHECK_FIELD(PvrdmaCmdHdr, response);
    CHECK_FIELD(PvrdmaCmdHdr, cmd);
    CHECK_FIELD(PvrdmaCmdHdr, reserved);

    group("PvrdmaCmdRespHdr");
    CHECK_SIZE(PvrdmaCmdRespHdr);
    CHECK_FIELD(PvrdmaCmdRespHdr, response);
    CHECK_FIELD(PvrdmaCmdRespHdr, ack);
    CHECK_FIELD(PvrdmaCmdRespHdr, err);
    CHECK_FIELD(PvrdmaCmdRespHdr, reserved);

    group("PvrdmaCmdQueryPort");
    CHECK_SIZE(PvrdmaCmdQueryPort);
    CHECK_FIELD(PvrdmaCmdQueryPort, hdr);
    CHECK_FIELD(PvrdmaCmdQueryPort, port_num);
    CHECK_FIELD(PvrdmaCmdQueryPort, reserved);

    group("PvrdmaCmdQueryPortResp");
    CHECK_SIZE(PvrdmaCmdQueryPortResp);
    CHECK_FIELD(PvrdmaCmdQueryPortResp, hdr);
    CHECK_FIELD(PvrdmaCmdQueryPortResp, attrs);
    CHECK_FIELD(PvrdmaCmdQueryPortResp, attrs.gid_tbl_len);
    CHECK_FIELD(PvrdmaCmdQueryPortResp, attrs.phys_state);

    group("PvrdmaCmdQueryPkey");
    CHECK_SIZE(PvrdmaCmdQueryPkey);
    CHECK_FIELD(PvrdmaCmdQueryPkey, hdr);
    CHECK_FIELD(PvrdmaCmdQueryPkey, port_num);
    CHECK_FIELD(PvrdmaCmdQueryPkey, index);
    CHECK_FIELD(PvrdmaCmdQueryPkey, reserved);

    group("PvrdmaCmdQueryPkeyResp");
    CHECK_SIZE(PvrdmaCmdQueryPkeyResp);
    CHECK_FIELD(PvrdmaCmdQueryPkeyResp, hdr);
    CHECK_FIELD(PvrdmaCmdQueryPkeyResp, pkey);
    CHECK_FIELD(PvrdmaCmdQueryPkeyResp, reserved);

    group("PvrdmaCmdCreateUc");
    CHECK_SIZE(PvrdmaCmdCreateUc);
    CHECK_FIELD(PvrdmaCmdCreateUc, hdr);
    CHECK_FIELD(PvrdmaCmdCreateUc, pfn);
    CHECK_FIELD(PvrdmaCmdCreateUc, pfn64);

    group("PvrdmaCmdCreateUcResp");
    CHECK_SIZE(PvrdmaCmdCreateUcResp);
    CHECK_FIELD(PvrdmaCmdCreateUcResp, hdr);
    CHECK_FIELD(PvrdmaCmdCreateUcResp, ctx_handle);
    CHECK_FIELD(PvrdmaCmdCreateUcResp, reserved);

    group("PvrdmaCmdDestroyUc");
    CHECK_SIZE(PvrdmaCmdDestroyUc);
    CHECK_FIELD(PvrdmaCmdDestroyUc, hdr);
    CHECK_FIELD(PvrdmaCmdDestroyUc, ctx_handle);
    CHECK_FIELD(PvrdmaCmdDestroyUc, reserved);

    group("PvrdmaCmdCreatePd");
    CHECK_SIZE(PvrdmaCmdCreatePd);
    CHECK_FIELD(PvrdmaCmdCreatePd, hdr);
    CHECK_FIELD(PvrdmaCmdCreatePd, ctx_handle);
    CHECK_FIELD(PvrdmaCmdCreatePd, reserved);

    group("PvrdmaCmdCreatePdResp");
    CHECK_SIZE(PvrdmaCmdCreatePdResp);
    CHECK_FIELD(PvrdmaCmdCreatePdResp, hdr);
    CHECK_FIELD(PvrdmaCmdCreatePdResp, pd_handle);
    CHECK_FIELD(PvrdmaCmdCreatePdResp, reserved);

    group("PvrdmaCmdDestroyPd");
    CHECK_SIZE(PvrdmaCmdDestroyPd);
    CHECK_FIELD(PvrdmaCmdDestroyPd, hdr);
    CHECK_FIELD(PvrdmaCmdDestroyPd, pd_handle);
    CHECK_FIELD(PvrdmaCmdDestroyPd, reserved);

    group("PvrdmaCmdCreateMr");
    CHECK_SIZE(PvrdmaCmdCreateMr);
    CHECK_FIELD(PvrdmaCmdCreateMr, hdr);
    CHECK_FIELD(PvrdmaCmdCreateMr, start);
    CHECK_FIELD(PvrdmaCmdCreateMr, length);
    CHECK_FIELD(PvrdmaCmdCreateMr, pdir_dma);
    CHECK_FIELD(PvrdmaCmdCreateMr, pd_handle);
    CHECK_FIELD(PvrdmaCmdCreateMr, access_flags);
    CHECK_FIELD(PvrdmaCmdCreateMr, flags);
    CHECK_FIELD(PvrdmaCmdCreateMr, nchunks);

    group("PvrdmaCmdCreateMrResp");
    CHECK_SIZE(PvrdmaCmdCreateMrResp);
    CHECK_FIELD(PvrdmaCmdCreateMrResp, hdr);
    CHECK_FIELD(PvrdmaCmdCreateMrResp, mr_handle);
    CHECK_FIELD(PvrdmaCmdCreateMrResp, lkey);
    CHECK_FIELD(PvrdmaCmdCreateMrResp, rkey);
    CHECK_FIELD(PvrdmaCmdCreateMrResp, reserved);

    group("PvrdmaCmdDestroyMr");
    CHECK_SIZE(PvrdmaCmdDestroyMr);
    CHECK_FIELD(PvrdmaCmdDestroyMr, hdr);
    CHECK_FIELD(PvrdmaCmdDestroyMr, mr_handle);
    CHECK_FIELD(PvrdmaCmdDestroyMr, reserved);

    group("PvrdmaCmdCreateCq");
    CHECK_SIZE(PvrdmaCmdCreateCq);
    CHECK_FIELD(PvrdmaCmdCreateCq, hdr);
    CHECK_FIELD(PvrdmaCmdCreateCq, pdir_dma);
    CHECK_FIELD(PvrdmaCmdCreateCq, ctx_handle);
    CHECK_FIELD(PvrdmaCmdCreateCq, cqe);
    CHECK_FIELD(PvrdmaCmdCreateCq, nchunks);
    CHECK_FIELD(PvrdmaCmdCreateCq, reserved);

    group("PvrdmaCmdCreateCqResp");
    CHECK_SIZE(PvrdmaCmdCreateCqResp);
    CHECK_FIELD(PvrdmaCmdCreateCqResp, hdr);
    CHECK_FIELD(PvrdmaCmdCreateCqResp, cq_handle);
    CHECK_FIELD(PvrdmaCmdCreateCqResp, cqe);

    group("PvrdmaCmdResizeCq");
    CHECK_SIZE(PvrdmaCmdResizeCq);
    CHECK_FIELD(PvrdmaCmdResizeCq, hdr);
    CHECK_FIELD(PvrdmaCmdResizeCq, cq_handle);
    CHECK_FIELD(PvrdmaCmdResizeCq, cqe);

    group("PvrdmaCmdResizeCqResp");
    CHECK_SIZE(PvrdmaCmdResizeCqResp);
    CHECK_FIELD(PvrdmaCmdResizeCqResp, hdr);
    CHECK_FIELD(PvrdmaCmdResizeCqResp, cqe);
    CHECK_FIELD(PvrdmaCmdResizeCqResp, reserved);

    group("PvrdmaCmdDestroyCq");
    CHECK_SIZE(PvrdmaCmdDestroyCq);
    CHECK_FIELD(PvrdmaCmdDestroyCq, hdr);
    CHECK_FIELD(PvrdmaCmdDestroyCq, cq_handle);
    CHECK_FIELD(PvrdmaCmdDestroyCq, reserved);

    group("PvrdmaCmdCreateSrq");
    CHECK_SIZE(PvrdmaCmdCreateSrq);
    CHECK_FIELD(PvrdmaCmdCreateSrq, hdr);
    CHECK_FIELD(PvrdmaCmdCreateSrq, pdir_dma);
    CHECK_FIELD(PvrdmaCmdCreateSrq, pd_handle);
    CHECK_FIELD(PvrdmaCmdCreateSrq, nchunks);
    CHECK_FIELD(PvrdmaCmdCreateSrq, attrs);
    CHECK_FIELD(PvrdmaCmdCreateSrq, srq_type);
    CHECK_FIELD(PvrdmaCmdCreateSrq, reserved);

    group("PvrdmaCmdCreateSrqResp");
    CHECK_SIZE(PvrdmaCmdCreateSrqResp);
    CHECK_FIELD(PvrdmaCmdCreateSrqResp, hdr);
    CHECK_FIELD(PvrdmaCmdCreateSrqResp, srqn);
    CHECK_FIELD(PvrdmaCmdCreateSrqResp, reserved);

    group("PvrdmaCmdModifySrq");
    CHECK_SIZE(PvrdmaCmdModifySrq);
    CHECK_FIELD(PvrdmaCmdModifySrq, hdr);
    CHECK_FIELD(PvrdmaCmdModifySrq, srq_handle);
    CHECK_FIELD(PvrdmaCmdModifySrq, attr_mask);
    CHECK_FIELD(PvrdmaCmdModifySrq, attrs);

    group("PvrdmaCmdQuerySrq");
    CHECK_SIZE(PvrdmaCmdQuerySrq);
    CHECK_FIELD(PvrdmaCmdQuerySrq, hdr);
    CHECK_FIELD(PvrdmaCmdQuerySrq, srq_handle);
    CHECK_FIELD(PvrdmaCmdQuerySrq, reserved);

    group("PvrdmaCmdQuerySrqResp");
    CHECK_SIZE(PvrdmaCmdQuerySrqResp);
    CHECK_FIELD(PvrdmaCmdQuerySrqResp, hdr);
    CHECK_FIELD(PvrdmaCmdQuerySrqResp, attrs);

    group("PvrdmaCmdDestroySrq");
    CHECK_SIZE(PvrdmaCmdDestroySrq);
    CHECK_FIELD(PvrdmaCmdDestroySrq, hdr);
    CHECK_FIELD(PvrdmaCmdDestroySrq, srq_handle);
    CHECK_FIELD(PvrdmaCmdDestroySrq, reserved);

    group("PvrdmaCmdCreateQp");
    CHECK_SIZE(PvrdmaCmdCreateQp);
    CHECK_FIELD(PvrdmaCmdCreateQp, hdr);
    CHECK_FIELD(PvrdmaCmdCreateQp, pdir_dma);
    CHECK_FIELD(PvrdmaCmdCreateQp, pd_handle);
    CHECK_FIELD(PvrdmaCmdCreateQp, send_cq_handle);
    CHECK_FIELD(PvrdmaCmdCreateQp, recv_cq_handle);
    CHECK_FIELD(PvrdmaCmdCreateQp, srq_handle);
    CHECK_FIELD(PvrdmaCmdCreateQp, max_send_wr);
    CHECK_FIELD(PvrdmaCmdCreateQp, max_recv_wr);
    CHECK_FIELD(PvrdmaCmdCreateQp, max_send_sge);
    CHECK_FIELD(PvrdmaCmdCreateQp, max_recv_sge);
    CHECK_FIELD(PvrdmaCmdCreateQp, max_inline_data);
    CHECK_FIELD(PvrdmaCmdCreateQp, lkey);
    CHECK_FIELD(PvrdmaCmdCreateQp, access_flags);
    CHECK_FIELD(PvrdmaCmdCreateQp, total_chunks);
    CHECK_FIELD(PvrdmaCmdCreateQp, send_chunks);
    CHECK_FIELD(PvrdmaCmdCreateQp, max_atomic_arg);
    CHECK_FIELD(PvrdmaCmdCreateQp, sq_sig_all);
    CHECK_FIELD(PvrdmaCmdCreateQp, qp_type);
    CHECK_FIELD(PvrdmaCmdCreateQp, is_srq);
    CHECK_FIELD(PvrdmaCmdCreateQp, reserved);

    group("PvrdmaCmdCreateQpResp");
    CHECK_SIZE(PvrdmaCmdCreateQpResp);
    CHECK_FIELD(PvrdmaCmdCreateQpResp, hdr);
    CHECK_FIELD(PvrdmaCmdCreateQpResp, qpn);
    CHECK_FIELD(PvrdmaCmdCreateQpResp, max_send_wr);
    CHECK_FIELD(PvrdmaCmdCreateQpResp, max_recv_wr);
    CHECK_FIELD(PvrdmaCmdCreateQpResp, max_send_sge);
    CHECK_FIELD(PvrdmaCmdCreateQpResp, max_recv_sge);
    CHECK_FIELD(PvrdmaCmdCreateQpResp, max_inline_data);

    group("PvrdmaCmdCreateQpRespV2");
    CHECK_SIZE(PvrdmaCmdCreateQpRespV2);
    CHECK_FIELD(PvrdmaCmdCreateQpRespV2, hdr);
    CHECK_FIELD(PvrdmaCmdCreateQpRespV2, qpn);
    CHECK_FIELD(PvrdmaCmdCreateQpRespV2, qp_handle);
    CHECK_FIELD(PvrdmaCmdCreateQpRespV2, max_send_wr);
    CHECK_FIELD(PvrdmaCmdCreateQpRespV2, max_recv_wr);
    CHECK_FIELD(PvrdmaCmdCreateQpRespV2, max_send_sge);
    CHECK_FIELD(PvrdmaCmdCreateQpRespV2, max_recv_sge);
    CHECK_FIELD(PvrdmaCmdCreateQpRespV2, max_inline_data);

    group("PvrdmaCmdModifyQp");
    CHECK_SIZE(PvrdmaCmdModifyQp);
    CHECK_FIELD(PvrdmaCmdModifyQp, hdr);
    CHECK_FIELD(PvrdmaCmdModifyQp, qp_handle);
    CHECK_FIELD(PvrdmaCmdModifyQp, attr_mask);
    CHECK_FIELD(PvrdmaCmdModifyQp, attrs);
    CHECK_FIELD(PvrdmaCmdModifyQp, attrs.ah_attr.dmac);

    group("PvrdmaCmdQueryQp");
    CHECK_SIZE(PvrdmaCmdQueryQp);
    CHECK_FIELD(PvrdmaCmdQueryQp, hdr);
    CHECK_FIELD(PvrdmaCmdQueryQp, qp_handle);
    CHECK_FIELD(PvrdmaCmdQueryQp, attr_mask);

    group("PvrdmaCmdQueryQpResp");
    CHECK_SIZE(PvrdmaCmdQueryQpResp);
    CHECK_FIELD(PvrdmaCmdQueryQpResp, hdr);
    CHECK_FIELD(PvrdmaCmdQueryQpResp, attrs);

    group("PvrdmaCmdDestroyQp");
    CHECK_SIZE(PvrdmaCmdDestroyQp);
    CHECK_FIELD(PvrdmaCmdDestroyQp, hdr);
    CHECK_FIELD(PvrdmaCmdDestroyQp, qp_handle);
    CHECK_FIELD(PvrdmaCmdDestroyQp, reserved);

    group("PvrdmaCmdDestroyQpResp");
    CHECK_SIZE(PvrdmaCmdDestroyQpResp);
    CHECK_FIELD(PvrdmaCmdDestroyQpResp, hdr);
    CHECK_FIELD(PvrdmaCmdDestroyQpResp, events_reported);
    CHECK_FIELD(PvrdmaCmdDestroyQpResp, reserved);

    group("PvrdmaCmdCreateBind");
    CHECK_SIZE(PvrdmaCmdCreateBind);
    CHECK_FIELD(PvrdmaCmdCreateBind, hdr);
    CHECK_FIELD(PvrdmaCmdCreateBind, mtu);
    CHECK_FIELD(PvrdmaCmdCreateBind, vlan);
    CHECK_FIELD(PvrdmaCmdCreateBind, index);
    CHECK_FIELD(PvrdmaCmdCreateBind, new_gid);
    CHECK_FIELD(PvrdmaCmdCreateBind, gid_type);
    CHECK_FIELD(PvrdmaCmdCreateBind, reserved);

    group("PvrdmaCmdDestroyBind");
    CHECK_SIZE(PvrdmaCmdDestroyBind);
    CHECK_FIELD(PvrdmaCmdDestroyBind, hdr);
    CHECK_FIELD(PvrdmaCmdDestroyBind, index);
    CHECK_FIELD(PvrdmaCmdDestroyBind, dest_gid);
    CHECK_FIELD(PvrdmaCmdDestroyBind, reserved);

    group("PvrdmaCmdReq");
    CHECK_SIZE(PvrdmaCmdReq);
    CHECK_FIELD(PvrdmaCmdReq, hdr);
    CHECK_FIELD(PvrdmaCmdReq, query_port);
    CHECK_FIELD(PvrdmaCmdReq, query_pkey);
    CHECK_FIELD(PvrdmaCmdReq, create_uc);
    CHECK_FIELD(PvrdmaCmdReq, destroy_uc);
    CHECK_FIELD(PvrdmaCmdReq, create_pd);
    CHECK_FIELD(PvrdmaCmdReq, destroy_pd);
    CHECK_FIELD(PvrdmaCmdReq, create_mr);
    CHECK_FIELD(PvrdmaCmdReq, destroy_mr);
    CHECK_FIELD(PvrdmaCmdReq, create_cq);
    CHECK_FIELD(PvrdmaCmdReq, resize_cq);
    CHECK_FIELD(PvrdmaCmdReq, destroy_cq);
    CHECK_FIELD(PvrdmaCmdReq, create_qp);
    CHECK_FIELD(PvrdmaCmdReq, modify_qp);
    CHECK_FIELD(PvrdmaCmdReq, query_qp);
    CHECK_FIELD(PvrdmaCmdReq, destroy_qp);
    CHECK_FIELD(PvrdmaCmdReq, create_bind);
    CHECK_FIELD(PvrdmaCmdReq, destroy_bind);
    CHECK_FIELD(PvrdmaCmdReq, create_srq);
    CHECK_FIELD(PvrdmaCmdReq, modify_srq);
    CHECK_FIELD(PvrdmaCmdReq, query_srq);
    CHECK_FIELD(PvrdmaCmdReq, destroy_srq);

    group("PvrdmaCmdResp");
    CHECK_SIZE(PvrdmaCmdResp);
    CHECK_FIELD(PvrdmaCmdResp, hdr);
    CHECK_FIELD(PvrdmaCmdResp, query_port_resp);
    CHECK_FIELD(PvrdmaCmdResp, query_pkey_resp);
    CHECK_FIELD(PvrdmaCmdResp, create_uc_resp);
    CHECK_FIELD(PvrdmaCmdResp, create_pd_resp);
    CHECK_FIELD(PvrdmaCmdResp, create_mr_resp);
    CHECK_FIELD(PvrdmaCmdResp, create_cq_resp);
    CHECK_FIELD(PvrdmaCmdResp, resize_cq_resp);
    CHECK_FIELD(PvrdmaCmdResp, create_qp_resp);
    CHECK_FIELD(PvrdmaCmdResp, create_qp_resp_v2);
    CHECK_FIELD(PvrdmaCmdResp, query_qp_resp);
    CHECK_FIELD(PvrdmaCmdResp, destroy_qp_resp);
    CHECK_FIELD(PvrdmaCmdResp, create_srq_resp);
    CHECK_FIELD(PvrdmaCmdResp, query_srq_resp);
}

static void check_uapi_structs(void)
{
    group("PvrdmaAv");
    CHECK_SIZE(PvrdmaAv);
    CHECK_FIELD(PvrdmaAv, port_pd);
    CHECK_FIELD(PvrdmaAv, sl_tclass_flowlabel);
    CHECK_FIELD(PvrdmaAv, dgid);
    CHECK_FIELD(PvrdmaAv, src_path_bits);
    CHECK_FIELD(PvrdmaAv, gid_index);
    CHECK_FIELD(PvrdmaAv, stat_rate);
    CHECK_FIELD(PvrdmaAv, hop_limit);
    CHECK_FIELD(PvrdmaAv, dmac);
    CHECK_FIELD(PvrdmaAv, reserved);

    group("PvrdmaSge");
    CHECK_SIZE(PvrdmaSge);
    CHECK_FIELD(PvrdmaSge, addr);
    CHECK_FIELD(PvrdmaSge, length);
    CHECK_FIELD(PvrdmaSge, lkey);

    group("PvrdmaRqWqeHdr");
    CHECK_SIZE(PvrdmaRqWqeHdr);
    CHECK_FIELD(PvrdmaRqWqeHdr, wr_id);
    CHECK_FIELD(PvrdmaRqWqeHdr, num_sge);
    CHECK_FIELD(PvrdmaRqWqeHdr, total_len);

    group("PvrdmaExCmpSwap");
    CHECK_SIZE(PvrdmaExCmpSwap);
    CHECK_FIELD(PvrdmaExCmpSwap, swap_val);
    CHECK_FIELD(PvrdmaExCmpSwap, compare_val);
    CHECK_FIELD(PvrdmaExCmpSwap, swap_mask);
    CHECK_FIELD(PvrdmaExCmpSwap, compare_mask);

    group("PvrdmaExFetchAdd");
    CHECK_SIZE(PvrdmaExFetchAdd);
    CHECK_FIELD(PvrdmaExFetchAdd, add_val);
    CHECK_FIELD(PvrdmaExFetchAdd, field_boundary);

    group("PvrdmaSqWqeHdr");
    CHECK_SIZE(PvrdmaSqWqeHdr);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr_id);
    CHECK_FIELD(PvrdmaSqWqeHdr, num_sge);
    CHECK_FIELD(PvrdmaSqWqeHdr, total_len);
    CHECK_FIELD(PvrdmaSqWqeHdr, opcode);
    CHECK_FIELD(PvrdmaSqWqeHdr, send_flags);
    CHECK_FIELD(PvrdmaSqWqeHdr, ex);
    CHECK_FIELD(PvrdmaSqWqeHdr, ex.imm_data);
    CHECK_FIELD(PvrdmaSqWqeHdr, ex.invalidate_rkey);
    CHECK_FIELD(PvrdmaSqWqeHdr, reserved);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.rdma);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.rdma.remote_addr);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.rdma.rkey);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.rdma.reserved);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.atomic);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.atomic.remote_addr);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.atomic.compare_add);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.atomic.swap);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.atomic.rkey);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.atomic.reserved);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.remote_addr);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.log_arg_sz);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.rkey);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data.cmp_swap);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data.cmp_swap.swap_val);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data.cmp_swap.compare_val);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data.cmp_swap.swap_mask);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data.cmp_swap.compare_mask);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data.fetch_add);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data.fetch_add.add_val);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.masked_atomics.wr_data.fetch_add.field_boundary);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg.iova_start);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg.pl_pdir_dma);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg.page_shift);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg.page_list_len);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg.length);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg.access_flags);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg.rkey);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.fast_reg.reserved);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.remote_qpn);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.remote_qkey);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.port_pd);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.sl_tclass_flowlabel);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.dgid);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.src_path_bits);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.gid_index);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.stat_rate);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.hop_limit);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.dmac);
    CHECK_FIELD(PvrdmaSqWqeHdr, wr.ud.av.reserved);

    group("PvrdmaCqe");
    CHECK_SIZE(PvrdmaCqe);
    CHECK_FIELD(PvrdmaCqe, wr_id);
    CHECK_FIELD(PvrdmaCqe, qp);
    CHECK_FIELD(PvrdmaCqe, opcode);
    CHECK_FIELD(PvrdmaCqe, status);
    CHECK_FIELD(PvrdmaCqe, byte_len);
    CHECK_FIELD(PvrdmaCqe, imm_data);
    CHECK_FIELD(PvrdmaCqe, src_qp);
    CHECK_FIELD(PvrdmaCqe, wc_flags);
    CHECK_FIELD(PvrdmaCqe, vendor_err);
    CHECK_FIELD(PvrdmaCqe, pkey_index);
    CHECK_FIELD(PvrdmaCqe, slid);
    CHECK_FIELD(PvrdmaCqe, sl);
    CHECK_FIELD(PvrdmaCqe, dlid_path_bits);
    CHECK_FIELD(PvrdmaCqe, port_num);
    CHECK_FIELD(PvrdmaCqe, smac);
    CHECK_FIELD(PvrdmaCqe, network_hdr_type);
    CHECK_FIELD(PvrdmaCqe, reserved2);
}

static void check_device_constants(void)
{
    group("const:Versions");
    CHECK_CONST(PVRDMA_VERSION_ROCEV1, KERN_PVRDMA_ROCEV1_VERSION);
    CHECK_CONST(PVRDMA_VERSION_ROCEV2, KERN_PVRDMA_ROCEV2_VERSION);
    CHECK_CONST(PVRDMA_VERSION_PPN64, KERN_PVRDMA_PPN64_VERSION);
    CHECK_CONST(PVRDMA_VERSION_QPHANDLE, KERN_PVRDMA_QPHANDLE_VERSION);
    CHECK_SAME(PVRDMA_BOARD_ID);
    CHECK_SAME(PVRDMA_REV_ID);
    NOT_IN_KERNEL(PVRDMA_PCI_VENDOR_ID_VMWARE, "linux/pci_ids.h");
    NOT_IN_KERNEL(PVRDMA_PCI_DEVICE_ID, "pvrdma.h");
    NOT_IN_KERNEL(PVRDMA_PCI_VMXNET3_DEVICE_ID, "linux/pci_ids.h");

    group("const:BarsVectors");
    CHECK_CONST(PVRDMA_BAR_MSIX, KERN_PVRDMA_PCI_RESOURCE_MSIX);
    CHECK_CONST(PVRDMA_BAR_REGS, KERN_PVRDMA_PCI_RESOURCE_REG);
    CHECK_CONST(PVRDMA_BAR_UAR, KERN_PVRDMA_PCI_RESOURCE_UAR);
    CHECK_CONST(PVRDMA_MSIX_VECTORS, KERN_PVRDMA_MAX_INTERRUPTS);
    CHECK_CONST(PVRDMA_VECTOR_RESPONSE, KERN_PVRDMA_INTR_VECTOR_RESPONSE);
    CHECK_CONST(PVRDMA_VECTOR_ASYNC, KERN_PVRDMA_INTR_VECTOR_ASYNC);
    CHECK_CONST(PVRDMA_VECTOR_CQ, KERN_PVRDMA_INTR_VECTOR_CQ);
    CHECK_SAME(PVRDMA_INTR_CAUSE_RESPONSE);
    CHECK_SAME(PVRDMA_INTR_CAUSE_ASYNC);
    CHECK_SAME(PVRDMA_INTR_CAUSE_CQ);

    group("const:Registers");
    CHECK_SAME(PVRDMA_REG_VERSION);
    CHECK_SAME(PVRDMA_REG_DSRLOW);
    CHECK_SAME(PVRDMA_REG_DSRHIGH);
    CHECK_SAME(PVRDMA_REG_CTL);
    CHECK_SAME(PVRDMA_REG_REQUEST);
    CHECK_SAME(PVRDMA_REG_ERR);
    CHECK_SAME(PVRDMA_REG_ICR);
    CHECK_SAME(PVRDMA_REG_IMR);
    CHECK_SAME(PVRDMA_REG_MACL);
    CHECK_SAME(PVRDMA_REG_MACH);
    CHECK_CONST(PVRDMA_CTL_ACTIVATE, KERN_PVRDMA_DEVICE_CTL_ACTIVATE);
    CHECK_CONST(PVRDMA_CTL_UNQUIESCE, KERN_PVRDMA_DEVICE_CTL_UNQUIESCE);
    CHECK_CONST(PVRDMA_CTL_RESET, KERN_PVRDMA_DEVICE_CTL_RESET);

    group("const:Uar");
    CHECK_SAME(PVRDMA_UAR_HANDLE_MASK);
    CHECK_SAME(PVRDMA_UAR_QP_OFFSET);
    CHECK_SAME(PVRDMA_UAR_QP_SEND);
    CHECK_SAME(PVRDMA_UAR_QP_RECV);
    CHECK_SAME(PVRDMA_UAR_CQ_OFFSET);
    CHECK_SAME(PVRDMA_UAR_CQ_ARM_SOL);
    CHECK_SAME(PVRDMA_UAR_CQ_ARM);
    CHECK_SAME(PVRDMA_UAR_CQ_POLL);
    CHECK_SAME(PVRDMA_UAR_SRQ_OFFSET);
    CHECK_SAME(PVRDMA_UAR_SRQ_RECV);
    NOT_IN_KERNEL(PVRDMA_UAR_PAGE_SIZE, "the driver maps PAGE_SIZE UAR pages");

    group("const:PageDir");
    CHECK_CONST(PVRDMA_PDIR_ENTRIES, 1u << KERN_PVRDMA_PTABLE_SHIFT);
    CHECK_CONST(PVRDMA_PDIR_ENTRIES, KERN_PVRDMA_PAGE_DIR_PAGE(~0u) + 1);
    CHECK_CONST(PVRDMA_PDIR_ENTRIES, KERN_PVRDMA_PAGE_DIR_TABLE(~0u) + 1);
    CHECK_SAME(PVRDMA_PAGE_DIR_MAX_PAGES);
    CHECK_SAME(PVRDMA_MAX_FAST_REG_PAGES);
    NOT_IN_KERNEL(PVRDMA_PAGE_SIZE, "the driver uses PAGE_SIZE");

    group("const:Caps");
    CHECK_SAME(PVRDMA_DEVICE_MODE_ROCE);
    CHECK_SAME(PVRDMA_GID_TYPE_FLAG_ROCE_V1);
    CHECK_SAME(PVRDMA_GID_TYPE_FLAG_ROCE_V2);
    CHECK_SAME(PVRDMA_ATOMIC_OP_COMP_SWAP);
    CHECK_SAME(PVRDMA_ATOMIC_OP_FETCH_ADD);
    CHECK_SAME(PVRDMA_ATOMIC_OP_MASK_COMP_SWAP);
    CHECK_SAME(PVRDMA_ATOMIC_OP_MASK_FETCH_ADD);
    CHECK_SAME(PVRDMA_BMME_FLAG_LOCAL_INV);
    CHECK_SAME(PVRDMA_BMME_FLAG_REMOTE_INV);
    CHECK_SAME(PVRDMA_BMME_FLAG_FAST_REG_WR);
    CHECK_SAME(PVRDMA_MR_FLAG_DMA);
    CHECK_SAME(PVRDMA_MR_FLAG_FRMR);

    group("const:Port");
    CHECK_SAME(PVRDMA_PORT_DOWN);
    CHECK_SAME(PVRDMA_PORT_ACTIVE);
    CHECK_SAME(PVRDMA_MTU_256);
    CHECK_SAME(PVRDMA_MTU_1024);
    CHECK_SAME(PVRDMA_MTU_4096);
    CHECK_SAME(PVRDMA_WIDTH_4X);
    CHECK_SAME(PVRDMA_SPEED_EDR);
    CHECK_SAME(PVRDMA_PORT_CM_SUP);
    CHECK_SAME(PVRDMA_PORT_IP_BASED_GIDS);
    NOT_IN_KERNEL(PVRDMA_PHYS_STATE_LINK_UP, "rdma/ib_verbs.h");
    NOT_IN_KERNEL(PVRDMA_PHYS_STATE_DISABLED, "rdma/ib_verbs.h");

    group("const:AccessFlags");
    CHECK_SAME(PVRDMA_ACCESS_LOCAL_WRITE);
    CHECK_SAME(PVRDMA_ACCESS_REMOTE_WRITE);
    CHECK_SAME(PVRDMA_ACCESS_REMOTE_READ);
    CHECK_SAME(PVRDMA_ACCESS_REMOTE_ATOMIC);
    CHECK_SAME(PVRDMA_ACCESS_MW_BIND);
    CHECK_SAME(PVRDMA_ZERO_BASED);
    CHECK_SAME(PVRDMA_ACCESS_ON_DEMAND);
}

static void check_qp_constants(void)
{
    group("const:QpTypes");
    CHECK_SAME(PVRDMA_QPT_SMI);
    CHECK_SAME(PVRDMA_QPT_GSI);
    CHECK_SAME(PVRDMA_QPT_RC);
    CHECK_SAME(PVRDMA_QPT_UC);
    CHECK_SAME(PVRDMA_QPT_UD);

    group("const:QpStates");
    CHECK_SAME(PVRDMA_QPS_RESET);
    CHECK_SAME(PVRDMA_QPS_INIT);
    CHECK_SAME(PVRDMA_QPS_RTR);
    CHECK_SAME(PVRDMA_QPS_RTS);
    CHECK_SAME(PVRDMA_QPS_SQD);
    CHECK_SAME(PVRDMA_QPS_SQE);
    CHECK_SAME(PVRDMA_QPS_ERR);
    /* ours only: the number of states */
    CHECK_CONST(PVRDMA_QPS_MAX, KERN_PVRDMA_QPS_ERR + 1);

    group("const:QpAttrMask");
    CHECK_SAME(PVRDMA_QP_STATE);
    CHECK_SAME(PVRDMA_QP_CUR_STATE);
    CHECK_SAME(PVRDMA_QP_EN_SQD_ASYNC_NOTIFY);
    CHECK_SAME(PVRDMA_QP_ACCESS_FLAGS);
    CHECK_SAME(PVRDMA_QP_PKEY_INDEX);
    CHECK_SAME(PVRDMA_QP_PORT);
    CHECK_SAME(PVRDMA_QP_QKEY);
    CHECK_SAME(PVRDMA_QP_AV);
    CHECK_SAME(PVRDMA_QP_PATH_MTU);
    CHECK_SAME(PVRDMA_QP_TIMEOUT);
    CHECK_SAME(PVRDMA_QP_RETRY_CNT);
    CHECK_SAME(PVRDMA_QP_RNR_RETRY);
    CHECK_SAME(PVRDMA_QP_RQ_PSN);
    CHECK_SAME(PVRDMA_QP_MAX_QP_RD_ATOMIC);
    CHECK_SAME(PVRDMA_QP_ALT_PATH);
    CHECK_SAME(PVRDMA_QP_MIN_RNR_TIMER);
    CHECK_SAME(PVRDMA_QP_SQ_PSN);
    CHECK_SAME(PVRDMA_QP_MAX_DEST_RD_ATOMIC);
    CHECK_SAME(PVRDMA_QP_PATH_MIG_STATE);
    CHECK_SAME(PVRDMA_QP_CAP);
    CHECK_SAME(PVRDMA_QP_DEST_QPN);
    CHECK_CONST(PVRDMA_QP_ATTR_MASK_ALL, KERN_PVRDMA_QP_ATTR_MASK_MAX * 2 - 1);
    NOT_IN_KERNEL(PVRDMA_SRQ_MAX_WR, "rdma/ib_verbs.h");
    NOT_IN_KERNEL(PVRDMA_SRQ_LIMIT, "rdma/ib_verbs.h");

    group("const:Events");
    CHECK_SAME(PVRDMA_EVENT_CQ_ERR);
    CHECK_SAME(PVRDMA_EVENT_QP_FATAL);
    CHECK_SAME(PVRDMA_EVENT_QP_REQ_ERR);
    CHECK_SAME(PVRDMA_EVENT_QP_ACCESS_ERR);
    CHECK_SAME(PVRDMA_EVENT_COMM_EST);
    CHECK_SAME(PVRDMA_EVENT_SQ_DRAINED);
    CHECK_SAME(PVRDMA_EVENT_PATH_MIG);
    CHECK_SAME(PVRDMA_EVENT_PATH_MIG_ERR);
    CHECK_SAME(PVRDMA_EVENT_DEVICE_FATAL);
    CHECK_SAME(PVRDMA_EVENT_PORT_ACTIVE);
    CHECK_SAME(PVRDMA_EVENT_PORT_ERR);
    CHECK_SAME(PVRDMA_EVENT_LID_CHANGE);
    CHECK_SAME(PVRDMA_EVENT_PKEY_CHANGE);
    CHECK_SAME(PVRDMA_EVENT_SM_CHANGE);
    CHECK_SAME(PVRDMA_EVENT_SRQ_ERR);
    CHECK_SAME(PVRDMA_EVENT_SRQ_LIMIT_REACHED);
    CHECK_SAME(PVRDMA_EVENT_QP_LAST_WQE_REACHED);
    CHECK_SAME(PVRDMA_EVENT_CLIENT_REREGISTER);
    CHECK_SAME(PVRDMA_EVENT_GID_CHANGE);
}

static void check_command_constants(void)
{
    group("const:Commands");
    CHECK_SAME(PVRDMA_CMD_QUERY_PORT);
    CHECK_SAME(PVRDMA_CMD_QUERY_PKEY);
    CHECK_SAME(PVRDMA_CMD_CREATE_PD);
    CHECK_SAME(PVRDMA_CMD_DESTROY_PD);
    CHECK_SAME(PVRDMA_CMD_CREATE_MR);
    CHECK_SAME(PVRDMA_CMD_DESTROY_MR);
    CHECK_SAME(PVRDMA_CMD_CREATE_CQ);
    CHECK_SAME(PVRDMA_CMD_RESIZE_CQ);
    CHECK_SAME(PVRDMA_CMD_DESTROY_CQ);
    CHECK_SAME(PVRDMA_CMD_CREATE_QP);
    CHECK_SAME(PVRDMA_CMD_MODIFY_QP);
    CHECK_SAME(PVRDMA_CMD_QUERY_QP);
    CHECK_SAME(PVRDMA_CMD_DESTROY_QP);
    CHECK_SAME(PVRDMA_CMD_CREATE_UC);
    CHECK_SAME(PVRDMA_CMD_DESTROY_UC);
    CHECK_SAME(PVRDMA_CMD_CREATE_BIND);
    CHECK_SAME(PVRDMA_CMD_DESTROY_BIND);
    CHECK_SAME(PVRDMA_CMD_CREATE_SRQ);
    CHECK_SAME(PVRDMA_CMD_MODIFY_SRQ);
    CHECK_SAME(PVRDMA_CMD_QUERY_SRQ);
    CHECK_SAME(PVRDMA_CMD_DESTROY_SRQ);
    CHECK_SAME(PVRDMA_CMD_MAX);

    group("const:Responses");
    CHECK_RESP(PVRDMA_CMD_QUERY_PORT, QUERY_PORT_RESP);
    CHECK_RESP(PVRDMA_CMD_QUERY_PKEY, QUERY_PKEY_RESP);
    CHECK_RESP(PVRDMA_CMD_CREATE_PD, CREATE_PD_RESP);
    CHECK_RESP(PVRDMA_CMD_DESTROY_PD, DESTROY_PD_RESP_NOOP);
    CHECK_RESP(PVRDMA_CMD_CREATE_MR, CREATE_MR_RESP);
    CHECK_RESP(PVRDMA_CMD_DESTROY_MR, DESTROY_MR_RESP_NOOP);
    CHECK_RESP(PVRDMA_CMD_CREATE_CQ, CREATE_CQ_RESP);
    CHECK_RESP(PVRDMA_CMD_RESIZE_CQ, RESIZE_CQ_RESP);
    CHECK_RESP(PVRDMA_CMD_DESTROY_CQ, DESTROY_CQ_RESP_NOOP);
    CHECK_RESP(PVRDMA_CMD_CREATE_QP, CREATE_QP_RESP);
    CHECK_RESP(PVRDMA_CMD_MODIFY_QP, MODIFY_QP_RESP);
    CHECK_RESP(PVRDMA_CMD_QUERY_QP, QUERY_QP_RESP);
    CHECK_RESP(PVRDMA_CMD_DESTROY_QP, DESTROY_QP_RESP);
    CHECK_RESP(PVRDMA_CMD_CREATE_UC, CREATE_UC_RESP);
    CHECK_RESP(PVRDMA_CMD_DESTROY_UC, DESTROY_UC_RESP_NOOP);
    CHECK_RESP(PVRDMA_CMD_CREATE_BIND, CREATE_BIND_RESP_NOOP);
    CHECK_RESP(PVRDMA_CMD_DESTROY_BIND, DESTROY_BIND_RESP_NOOP);
    CHECK_RESP(PVRDMA_CMD_CREATE_SRQ, CREATE_SRQ_RESP);
    CHECK_RESP(PVRDMA_CMD_MODIFY_SRQ, MODIFY_SRQ_RESP);
    CHECK_RESP(PVRDMA_CMD_QUERY_SRQ, QUERY_SRQ_RESP);
    CHECK_RESP(PVRDMA_CMD_DESTROY_SRQ, DESTROY_SRQ_RESP);
    CHECK_RESP(PVRDMA_CMD_MAX, MAX_RESP);
}

static void check_wr_wc_constants(void)
{
    group("const:WrOpcodes");
    CHECK_SAME(PVRDMA_WR_RDMA_WRITE);
    CHECK_SAME(PVRDMA_WR_RDMA_WRITE_WITH_IMM);
    CHECK_SAME(PVRDMA_WR_SEND);
    CHECK_SAME(PVRDMA_WR_SEND_WITH_IMM);
    CHECK_SAME(PVRDMA_WR_RDMA_READ);
    CHECK_SAME(PVRDMA_WR_ATOMIC_CMP_AND_SWP);
    CHECK_SAME(PVRDMA_WR_ATOMIC_FETCH_AND_ADD);
    CHECK_SAME(PVRDMA_WR_LSO);
    CHECK_SAME(PVRDMA_WR_SEND_WITH_INV);
    CHECK_SAME(PVRDMA_WR_RDMA_READ_WITH_INV);
    CHECK_SAME(PVRDMA_WR_LOCAL_INV);
    CHECK_SAME(PVRDMA_WR_FAST_REG_MR);
    CHECK_SAME(PVRDMA_WR_MASKED_ATOMIC_CMP_AND_SWP);
    CHECK_SAME(PVRDMA_WR_MASKED_ATOMIC_FETCH_AND_ADD);
    CHECK_SAME(PVRDMA_WR_BIND_MW);
    CHECK_SAME(PVRDMA_WR_REG_SIG_MR);
    CHECK_SAME(PVRDMA_WR_ERROR);

    group("const:WcStatus");
    CHECK_SAME(PVRDMA_WC_SUCCESS);
    CHECK_SAME(PVRDMA_WC_LOC_LEN_ERR);
    CHECK_SAME(PVRDMA_WC_LOC_QP_OP_ERR);
    CHECK_SAME(PVRDMA_WC_LOC_EEC_OP_ERR);
    CHECK_SAME(PVRDMA_WC_LOC_PROT_ERR);
    CHECK_SAME(PVRDMA_WC_WR_FLUSH_ERR);
    CHECK_SAME(PVRDMA_WC_MW_BIND_ERR);
    CHECK_SAME(PVRDMA_WC_BAD_RESP_ERR);
    CHECK_SAME(PVRDMA_WC_LOC_ACCESS_ERR);
    CHECK_SAME(PVRDMA_WC_REM_INV_REQ_ERR);
    CHECK_SAME(PVRDMA_WC_REM_ACCESS_ERR);
    CHECK_SAME(PVRDMA_WC_REM_OP_ERR);
    CHECK_SAME(PVRDMA_WC_RETRY_EXC_ERR);
    CHECK_SAME(PVRDMA_WC_RNR_RETRY_EXC_ERR);
    CHECK_SAME(PVRDMA_WC_LOC_RDD_VIOL_ERR);
    CHECK_SAME(PVRDMA_WC_REM_INV_RD_REQ_ERR);
    CHECK_SAME(PVRDMA_WC_REM_ABORT_ERR);
    CHECK_SAME(PVRDMA_WC_INV_EECN_ERR);
    CHECK_SAME(PVRDMA_WC_INV_EEC_STATE_ERR);
    CHECK_SAME(PVRDMA_WC_FATAL_ERR);
    CHECK_SAME(PVRDMA_WC_RESP_TIMEOUT_ERR);
    CHECK_SAME(PVRDMA_WC_GENERAL_ERR);

    group("const:WcOpcodes");
    CHECK_SAME(PVRDMA_WC_SEND);
    CHECK_SAME(PVRDMA_WC_RDMA_WRITE);
    CHECK_SAME(PVRDMA_WC_RDMA_READ);
    CHECK_SAME(PVRDMA_WC_COMP_SWAP);
    CHECK_SAME(PVRDMA_WC_FETCH_ADD);
    CHECK_SAME(PVRDMA_WC_BIND_MW);
    CHECK_SAME(PVRDMA_WC_LSO);
    CHECK_SAME(PVRDMA_WC_LOCAL_INV);
    CHECK_SAME(PVRDMA_WC_FAST_REG_MR);
    CHECK_SAME(PVRDMA_WC_MASKED_COMP_SWAP);
    CHECK_SAME(PVRDMA_WC_MASKED_FETCH_ADD);
    CHECK_SAME(PVRDMA_WC_RECV);
    CHECK_SAME(PVRDMA_WC_RECV_RDMA_WITH_IMM);

    group("const:SendFlags");
    CHECK_SAME(PVRDMA_SEND_FENCE);
    CHECK_SAME(PVRDMA_SEND_SIGNALED);
    CHECK_SAME(PVRDMA_SEND_SOLICITED);
    CHECK_SAME(PVRDMA_SEND_INLINE);

    group("const:WcFlags");
    CHECK_SAME(PVRDMA_WC_GRH);
    CHECK_SAME(PVRDMA_WC_WITH_IMM);
    CHECK_SAME(PVRDMA_WC_WITH_INVALIDATE);
}

/* Members and constants of ours that no check above covers. */
static void check_coverage(void)
{
    int i;

    group("Coverage");
    for (i = 0; abi_unchecked[i]; i++) {
        printf("FAIL: %s of pvrdma_abi.h has no check\n", abi_unchecked[i]);
        groups[ngroups - 1].failures++;
    }
}

int main(void)
{
    int i, passed = 0, failed = 0;

    check_rings();
    check_verbs_structs();
    check_dsr();
    check_cmd_structs();
    check_uapi_structs();
    check_device_constants();
    check_qp_constants();
    check_command_constants();
    check_wr_wc_constants();
    check_coverage();

    printf("checked: %u structure sizes, %u fields, %u constants\n",
           n_sizes, n_fields, n_consts);
    for (i = 0; i < ngroups; i++) {
        printf("%s: abi %s\n", groups[i].failures ? "FAIL" : "PASS",
               groups[i].name);
        if (groups[i].failures) {
            failed++;
        } else {
            passed++;
        }
    }
    printf("abi: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
