// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The MRC fast path: the two entry points. The work is in the role
 * headers under bpf/mrc/, all compiled here as one object (one skeleton,
 * mrc.skel.h, whose program and map names are an ABI).
 *
 * mrc_xdp_rx (XDP, every plane interface, ingress):
 *   DATA   validate (opcode, lengths, QP, peer address, window, duplicate),
 *          then steer to the owning process's UDP socket by rewriting the
 *          destination port; everything bad is dropped and counted before
 *          it costs a socket wake-up. A trimmed header is answered here
 *          with a NACK TRIMMED(_LASTHOP), XDP_TX (mrc/data_rx.h,
 *          mrc/trim_nack.h).
 *   SACK   consumed here: advance the cumulative ack, record selective
 *          acks, report holes as losses and emit completions of WRITEs
 *          into the owning context's event ring; feed the destination's
 *          congestion window (NSCC, include/mrc/nscc.h) (mrc/ack_rx.h,
 *          mrc/loss.h, mrc/ev_feedback.h, mrc/cc.h).
 *   NACK   consumed here: loss report (resend, the window's trim rule)
 *          or fatal QP error (mrc/ack_rx.h).
 *   PROBE  steered to the owner like DATA (it answers with a SACK).
 *   EP     endpoint control: EV probes, port status (mrc/probes.h).
 *   An SRv6 envelope (SRv6 EVs) is taken off first (mrc/srv6.h).
 *
 * mrc_tc_tx (TC, every plane interface, egress): the per-packet path
 *   choice. Gives each outgoing DATA packet of a QP the next entropy value
 *   of the QP's rotation (UDP source port, IPv6 flow label, SRv6 envelope)
 *   (mrc/tc_spray.h, mrc/tc_stamp.h); spreads SACKs and NACKs over the
 *   paths the data came on; writes an ICRC QP's ICRC trailers after the
 *   last rewrite (mrc/icrc.h); stamps mrcd's EV probes.
 *
 * Both hooks parse with the same code (mrc/parse.h). State lives in maps
 * shared with libmrc (mrc/maps.h, include/mrc/abi.h). The rx/tx state
 * arrays are mmapped by libmrc, so updates that can race between CPUs use
 * atomic operations rather than locks.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/stats.h"
#include "mrc/parse.h"
#include "mrc/data_rx.h"
#include "mrc/ack_rx.h"
#include "mrc/probes.h"
#include "mrc/tc_spray.h"
#include "mrc/srv6.h"

/*
 * Not an MRC packet: to the next XDP program if the operator chained one
 * (a tail call does not come back), else up the stack, untouched.
 */
static __always_inline int pass_on(struct xdp_md *ctx)
{
	bpf_tail_call(ctx, &mrc_xdp_next, 0);
	return XDP_PASS;
}

SEC("xdp")
int mrc_xdp_rx(struct xdp_md *ctx)
{
	struct mrc_pkt p = {};
	int ret;

	/* An SRv6 EV's envelope comes off first (mrc/srv6.h). */
	ret = srv6_take_out(ctx, &p);
	if (ret < 0)
		return count_drop(-ret);
	pkt_from_xdp(&p, ctx);
	ret = parse_mrc(&p, PKT_WHOLE_FRAME);
	if (ret == 0)
		return pass_on(ctx);
	if (ret < 0)
		return count_drop(-ret);

	if (mrc_opcode_is_data(p.opcode))
		return handle_data(&p, 0);
	switch (p.opcode) {
	case MRC_OP_SACK:
		return handle_sack(&p);
	case MRC_OP_NACK:
		return handle_nack(&p);
	case MRC_OP_PROBE:
		return handle_data(&p, 1);
	case MRC_OP_EP_REQUEST:
	case MRC_OP_EP_RESPONSE:
		return handle_ep(&p);
	default:
		return count_drop(MRC_DROP_BAD_OPCODE);
	}
}

SEC("tc")
int mrc_tc_tx(struct __sk_buff *skb)
{
	struct mrc_pkt p = {};
	__u32 slot = 0;

	if (skb->mark == MRC_SKB_MARK_SPRAYED)
		return TC_ACT_OK;	/* moved here from another plane */
	/*
	 * A UDP GSO skb keeps its payload, the BTH included, in pages: its
	 * linear part is only the headers the stack wrote (mrc/tc_gso.h).
	 */
	if (skb->gso_segs > 1)
		bpf_skb_pull_data(skb, TC_GSO_PULL_LEN);
	pkt_from_skb(&p, skb);
	/*
	 * Not MRC's: TC_ACT_UNSPEC hands it to the next filter on the hook
	 * (clsact priority order, or tcx's next), and passes it when there is
	 * none; TC_ACT_OK would end the chain, hiding it from later filters.
	 */
	if (parse_mrc(&p, PKT_HEADERS) <= 0)
		return TC_ACT_UNSPEC;
	if (p.opcode == MRC_OP_EP_REQUEST)
		return stamp_probe(skb, &p);
	if (outgoing_qp(&p, &slot))
		return TC_ACT_OK;
	if (mrc_opcode_is_data(p.opcode))
		return spray_data(skb, &p, slot);
	if (p.opcode == MRC_OP_SACK || p.opcode == MRC_OP_NACK)
		return spray_ack(skb, &p, slot, ctrl_wants_icrc(&p, slot));
	if (p.opcode == MRC_OP_PROBE)
		return finish_ctrl(skb, &p.l4, ctrl_wants_icrc(&p, slot), TC_ACT_OK);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
