// SPDX-License-Identifier: GPL-2.0
/*
 * Baselines for build/mrc-bpf-cost (tools/bpf-cost): programs that do
 * nothing, measured on the same packets with the same bpf_prog_test_run
 * repeat count as mrc_xdp_rx and mrc_tc_tx, so what the kernel's test
 * harness itself costs per run can be told from what MRC costs. Not used
 * by mrcd.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#define TC_ACT_OK	0

SEC("xdp")
int xdp_pass(struct xdp_md *ctx)
{
	(void)ctx;
	return XDP_PASS;
}

SEC("tc")
int tc_pass(struct __sk_buff *skb)
{
	(void)skb;
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
