/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The executors of the commands mrcd runs (cmd_exec_*.c): a parsed
 * request in, text or one JSON document out, against the maps and what
 * mrcd knows (struct agent_cmd_env). An executor never parses: what it
 * needs is in the request, already checked.
 */
#ifndef MRC_CMD_EXEC_H
#define MRC_CMD_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/agent_cmds.h"
#include "agent/cmd_json.h"
#include "agent/cmd_table.h"
#include "agent/qp_table.h"
#include "mrc/nscc.h"

/*
 * Run the request (one of the CMD_IN_MRCD commands) against env. The exit
 * status; text on out, errors on err.
 */
int cmd_exec(const struct agent_cmd_env *env, const struct cmd_req *req,
	     FILE *out, FILE *err);

/* ---- inside the executors ------------------------------------------------ */

struct ctx {
	const struct agent_cmd_env *env;
	FILE *out, *err;
	const char *name;	/* "mrcctl qp show", for messages */
	bool json;
};

#define failure(c, ...)	cmd_failure((c)->err, (c)->name, __VA_ARGS__)

#define CMD_EXECUTOR(fn)	int fn(struct ctx *c, const struct cmd_req *req)

/* cmd_exec_status.c */
CMD_EXECUTOR(cmd_exec_status);
CMD_EXECUTOR(cmd_exec_stats);
/* cmd_exec_qp.c */
CMD_EXECUTOR(cmd_exec_qp_list);
CMD_EXECUTOR(cmd_exec_qp_show);
/* cmd_exec_ev.c */
CMD_EXECUTOR(cmd_exec_ev_list);
CMD_EXECUTOR(cmd_exec_ev_deny);
CMD_EXECUTOR(cmd_exec_ev_allow);
/* cmd_exec_stream.c */
CMD_EXECUTOR(cmd_exec_events);
CMD_EXECUTOR(cmd_exec_probe);
/* cmd_exec_profile_ev.c */
CMD_EXECUTOR(cmd_exec_profile_ev_create);
CMD_EXECUTOR(cmd_exec_profile_ev_set);
CMD_EXECUTOR(cmd_exec_profile_ev_online);
CMD_EXECUTOR(cmd_exec_profile_ev_offline);
CMD_EXECUTOR(cmd_exec_profile_ev_show);
CMD_EXECUTOR(cmd_exec_profile_ev_delete);
/* cmd_exec_profile_cc.c */
CMD_EXECUTOR(cmd_exec_profile_cc_create);
CMD_EXECUTOR(cmd_exec_profile_cc_set);
CMD_EXECUTOR(cmd_exec_profile_cc_online);
CMD_EXECUTOR(cmd_exec_profile_cc_offline);
CMD_EXECUTOR(cmd_exec_profile_cc_show);
CMD_EXECUTOR(cmd_exec_profile_cc_delete);

/* ---- names (cmd_exec_common.c) ------------------------------------------- */

const char *cmd_qp_state_name(uint32_t s);
const char *cmd_ev_state_name(uint8_t s);
const char *cmd_ev_format_name(uint32_t f);

#define N_DROPS		(sizeof(struct mrc_drop_stats) / sizeof(uint64_t))
#define N_QP_COUNTERS	(sizeof(struct mrc_qp_stats) / sizeof(uint64_t))
#define N_CTL_COUNTERS	(sizeof(struct mrc_ctl_stats) / sizeof(uint64_t))
/* Index of a struct mrc_qp_stats field in a counters[] array. */
#define QP_COUNTER(field)	(offsetof(struct mrc_qp_stats, field) / sizeof(uint64_t))

/*
 * The counter structs are append-only: a field added to abi.h before it
 * gets a name here is still shown, as counter_N.
 */
const char *cmd_drop_name(size_t i, char *buf, size_t len);
const char *cmd_qp_counter_name(size_t i, char *buf, size_t len);
const char *cmd_ctl_counter_name(size_t i, char *buf, size_t len);

/* An address of the maps (IPv6, or IPv4 mapped into IPv6) as text. */
const char *cmd_addr_str(const uint8_t a[16], char *buf, size_t len);
bool cmd_all_zero(const void *p, size_t len);

/* ---- reading the maps (cmd_exec_common.c) --------------------------------- */

/* A per-CPU value of u64 counters, summed over the CPUs. */
int cmd_sum_percpu(int fd, uint32_t key, size_t value_size, uint64_t *sum);
int cmd_read_qp_info(struct ctx *c, uint32_t qpn, struct mrc_qp_info *qi);
/* 0, or a failure naming the host's limit (1..max_qps, mrcd --max-qps). */
int cmd_check_qpn(struct ctx *c, uint32_t qpn);
/* The QP, or a failure saying it does not exist (or is out of range). */
int cmd_find_qp(struct ctx *c, uint32_t qpn, struct mrc_qp_info *qi);
uint32_t cmd_n_evs_of(const struct mrc_qp_info *qi);
/* Profile ids in the map, sorted. */
int cmd_profile_ids(int fd, uint32_t *ids, int max);

/* Resolved congestion parameters (`qp show`, `profile cc show --derive`). */
void cmd_cc_params_json(struct json *j, const struct mrc_nscc_params *p);
void cmd_cc_params_text(struct ctx *c, const struct mrc_nscc_params *p,
		    const char *indent);

/* ---- a QP as `qp list`, `qp show` and `stats` see it (cmd_exec_qp.c) ------ */

struct qp_view {
	uint32_t qpn;
	struct mrc_qp_info info;
	uint32_t owner;			/* pid; 0 = unknown */
	unsigned int good, skip, bad, denied, backup;
	struct mrc_tx_state tx;
	struct mrc_rx_state rx;
	uint64_t counters[N_QP_COUNTERS];
	/* The QP's congestion window (info.cc_slot), when it has one. */
	enum { QP_CC_NONE, QP_CC_OK, QP_CC_UNREADABLE } cc;
	char cc_err[128];		/* UNREADABLE: why */
	struct mrc_cc_view ccv;
	bool have_ccp;			/* ccp read from mrc_cc */
	struct mrc_nscc_params ccp;
};

/* The parts a QP may lack (owner gone, counters) are left at zero. */
int cmd_read_qp_view(struct ctx *c, uint32_t qpn, struct qp_view *v);

/* The QP maps of env as the bulk reader (agent/qp_table.h) takes them. */
void cmd_qp_table_maps(const struct ctx *c, struct qp_table_maps *m);

/* Every QP not in RESET, as `qp list` prints them (text table or JSON array). */
int cmd_print_qp_list(struct ctx *c, bool json);

/* mrcd's QP limit: the entries of mrc_qps (mrcd --max-qps). */
uint32_t cmd_max_qps(const struct ctx *c);

#endif
