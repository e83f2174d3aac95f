// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's control protocol: the fixed-size messages client and server
 * exchange on their TCP connection (the sequence is in main.c's overview).
 * Every message is CTL_MSG_LEN bytes in network byte order and starts with
 * a magic and a version. Reads never block: both sides poll their CQ while
 * they wait.
 */
#ifndef MRC_PERF_CTL_H
#define MRC_PERF_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CTL_MAGIC	0x4d525046u	/* "MRPF" */
#define CTL_VERSION	2	/* 2: HELLO carries n_qps, VERIFY an expected checksum */
#define CTL_TEXT_LEN	112

enum ctl_type {
	CTL_HELLO = 1,		/* client: region size, depth, flags, tuning */
	CTL_HELLO_ACK,		/* server: region, CQ and QP ready */
	CTL_BEGIN,		/* client: length = size, offset = first op, ops */
	CTL_BEGIN_ACK,
	CTL_VERIFY,		/* client: checksum [offset, offset + length) of
				 * every QP's region; checksum = the source's */
	CTL_VERIFY_ACK,		/* server: QP 0's checksum, ops = regions that
				 * match, imm_count, flags */
	CTL_DONE,		/* client: ops = WRITEs posted in the run */
	CTL_DONE_ACK,		/* server: imm_count, flags, text */
	CTL_ABORT,		/* client: text = why */
	CTL_ERROR,		/* server: status, text = why */
};

#define CTL_F_IMM		(1u << 0)	/* HELLO: WRITE-IMM run */
#define CTL_F_IMM_IN_ORDER	(1u << 1)	/* replies: imm_data 0, 1, 2, ... */
#define CTL_F_IMM_LEN_OK	(1u << 2)	/* replies: every byte_len matched */
#define CTL_F_GAVE_UP		(1u << 3)	/* DONE_ACK: grace time ran out */
#define CTL_F_EXPECT		(1u << 4)	/* VERIFY: checksum holds the source's */
#define CTL_F_ICRC		(1u << 5)	/* HELLO: QPs with the RoCEv2 ICRC (--icrc) */

/* On the wire: big-endian, naturally aligned, no implicit padding. */
struct ctl_wire {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t status;	/* replies: 0 or a positive errno */
	uint32_t flags;		/* CTL_F_* */
	uint64_t length;	/* HELLO: region, BEGIN: size, VERIFY: bytes */
	uint64_t offset;	/* BEGIN: first op number, VERIFY: first byte */
	uint64_t ops;		/* BEGIN: ops of the size, DONE: ops of the run */
	uint64_t imm_count;	/* replies: WRITE-IMMs received so far */
	uint64_t checksum;	/* VERIFY_ACK */
	uint32_t depth;		/* HELLO: WRITEs the client keeps outstanding */
	uint32_t timeout_s;	/* HELLO: the client's --timeout-s */
	uint8_t ack_timeout, retry_cnt, exp_retry_cnt, mpr_units;	/* HELLO */
	uint32_t n_qps;		/* HELLO: QPs of this connection (0 = 1) */
	uint8_t reserved[8];
	char text[CTL_TEXT_LEN];	/* ABORT, ERROR, DONE_ACK: NUL-terminated */
};
_Static_assert(sizeof(struct ctl_wire) == 192, "control message size is ABI");
_Static_assert(offsetof(struct ctl_wire, text) == 80, "control message layout is ABI");

#define CTL_MSG_LEN	sizeof(struct ctl_wire)

/* A decoded message, host byte order. */
struct ctl_msg {
	uint16_t version;
	uint16_t type;
	uint32_t status;
	uint32_t flags;
	uint64_t length, offset, ops, imm_count, checksum;
	uint32_t depth, timeout_s, n_qps;
	uint8_t ack_timeout, retry_cnt, exp_retry_cnt, mpr_units;
	char text[CTL_TEXT_LEN];
};

/* One end of the control connection; reads are never blocking. */
struct ctl_conn {
	int fd;
	bool closed;		/* the peer closed, or a read failed */
	uint16_t peer_version;	/* of the last message, even a rejected one */
	size_t have;		/* bytes of the next message in rbuf */
	uint8_t rbuf[CTL_MSG_LEN];
};

const char *ctl_type_name(uint16_t type);
void ctl_msg_init(struct ctl_msg *m, uint16_t type);
void ctl_init(struct ctl_conn *c, int fd);
bool ctl_alive(const struct ctl_conn *c);
int ctl_send(struct ctl_conn *c, const struct ctl_msg *m);
int ctl_poll(struct ctl_conn *c, struct ctl_msg *m);
void ctl_describe_error(const struct ctl_conn *c, int err, const char *who,
			char *buf, size_t len);

#endif /* MRC_PERF_CTL_H */
