/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The parameters of a CC profile, as one table: the option that sets
 * each, its JSON key and text label, its unit, where it is kept in struct
 * mrc_cc_profile_rec and what 0 stands for. The parser reads options
 * with it, the executors print with it.
 */
#ifndef MRC_CMD_CC_PARAMS_H
#define MRC_CMD_CC_PARAMS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mrc/abi.h"
#include "agent/cmd_table.h"

#define CC_GAMMA_DEFAULT	800
#define CC_MAX_MD_JUMP_DEFAULT	500
#define CC_QA_GATE_DEFAULT	3
#define CC_QA_GATE_MAX		31		/* a shift of max_cwnd */
#define CC_FACTOR_MAX		1000000		/* fi-scale: 1000 x, in thousandths */
#define CC_LINK_MBPS_MAX	10000000u	/* 10 Tb/s per plane */
#define CC_US_MAX		(UINT32_MAX / 1000)	/* times are ns in 32 bits */
#define CC_MTU_MIN		256		/* libmrc's path MTUs */
#define CC_MTU_MAX		9000
#define CC_BASE_RTTS_MAX	100		/* target, adjust period: base RTTs */

/* How a profile parameter is typed on the command line, stored and shown. */
enum cc_unit {
	CC_US,		/* microseconds typed, ns stored */
	CC_BYTES,	/* a size (64k), below 4 GiB */
	CC_FRACTION,	/* (0, 1] with 3 decimals, stored x 1000 */
	CC_FACTOR,	/* 0..1000 with 3 decimals, stored x 1000 */
	CC_SHIFT,	/* 0..31 */
	CC_MBPS,	/* Mb/s */
};

struct cc_param {
	const char *opt;	/* the option, without "--" */
	const char *key;	/* JSON key */
	const char *name;	/* text label */
	enum cc_unit unit;
	size_t off;		/* its __u32 in struct mrc_cc_profile_rec */
	const char *zero;	/* what 0 stands for; NULL: 0 is a plain value */
	const char *example;
};

/* In the order show prints them; N_CC_PARAMS (cmd_table.h) of them. */
extern const struct cc_param cc_params[N_CC_PARAMS];

static inline uint32_t cc_value(const struct mrc_cc_profile_rec *r,
				const struct cc_param *p)
{
	uint32_t v;

	memcpy(&v, (const char *)r + p->off, sizeof(v));
	return v;
}

#endif
