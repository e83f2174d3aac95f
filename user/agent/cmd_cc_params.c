// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* The CC profile parameters (cmd_cc_params.h). */
#include <string.h>

#include "agent/cmd_cc_params.h"

#define CC_REC(f)	offsetof(struct mrc_cc_profile_rec, f)

/* JSON keys as in struct mrc_cc_profile_rec. */
const struct cc_param cc_params[N_CC_PARAMS] = {
	{ "base-rtt-us", "base_rtt_ns", "base_rtt", CC_US, CC_REC(base_rtt_ns),
	  "the smallest RTT measured", "20" },
	{ "target-delay-us", "target_delay_ns", "target_delay", CC_US,
	  CC_REC(target_delay_ns), "0.75 x base RTT", "15" },
	{ "max-cwnd", "max_cwnd_bytes", "max_cwnd", CC_BYTES, CC_REC(max_cwnd_bytes),
	  "1.5 x BDP", "256k" },
	{ "link-mbps", "link_mbps", "link", CC_MBPS, CC_REC(link_mbps),
	  "the slowest plane device's speed", "100000" },
	{ "gamma", "gamma", "gamma", CC_FRACTION, CC_REC(gamma_milli), "0.8", "0.8" },
	{ "max-md-jump", "max_md_jump", "max_md_jump", CC_FRACTION,
	  CC_REC(max_md_jump_milli), "0.5", "0.5" },
	{ "qa-gate", "qa_gate", "qa_gate", CC_SHIFT, CC_REC(qa_gate), "3", "3" },
	{ "qa-threshold-us", "qa_threshold_ns", "qa_threshold", CC_US,
	  CC_REC(qa_threshold_ns), "4 x target delay", "60" },
	{ "fi", "fi_bytes", "fi", CC_BYTES, CC_REC(fi_bytes), "5 MTU x a", "32k" },
	{ "fi-scale", "fi_scale", "fi_scale", CC_FACTOR, CC_REC(fi_scale_milli),
	  "0.25 x a", "0.25 or 2.5" },
	{ "eta", "eta_bytes", "eta", CC_BYTES, CC_REC(eta_bytes), "0.15 MTU x a", "1k" },
	{ "alpha", "alpha_bytes", "alpha", CC_BYTES, CC_REC(alpha_bytes),
	  "4 a b MTU", "64k" },
	{ "adjust-bytes", "adjust_bytes", "adjust_bytes", CC_BYTES, CC_REC(adjust_bytes),
	  "8 MTU", "32k" },
	{ "adjust-period-us", "adjust_period_ns", "adjust_period", CC_US,
	  CC_REC(adjust_period_ns), "base RTT", "20" },
};
