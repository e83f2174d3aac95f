/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The libfabric provider's wire protocol, free of libfabric and libmrc so
 * that it is unit-tested without a network (tests/unit/test_fi_proto.c):
 *
 *  - the 32-bit immediate of every WRITE-WITH-IMM the provider sends
 *    (what kind of message, which receive slot, credits handed back);
 *  - the credit and slot accounting of a receive ring (docs/LIBFABRIC.md,
 *    "Sends over WRITE-with-immediate");
 *  - the connection-manager message carried by the TCP side channel and
 *    the small payloads of control messages (read request and answer,
 *    write-data notice), all in network byte order.
 */
#ifndef MRC_FI_PROTO_H
#define MRC_FI_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* ---- immediates ---------------------------------------------------------- */

/* What a WRITE-IMM into the peer's ring (or a bare credit update) carries. */
enum mfi_kind {
	MFI_K_MSG	= 1,	/* a fragment of a message, into a slot */
	MFI_K_CREDIT	= 2,	/* credits only: zero bytes, no slot */
	MFI_K_WDATA	= 3,	/* fi_writedata's notice: 8 bytes of CQ data */
	MFI_K_READ_REQ	= 4,	/* fi_read: please WRITE this range to me */
	MFI_K_READ_RESP	= 5,	/* the WRITE of a read request is done (or refused) */
};

#define MFI_IMM_KIND_SHIFT	28
#define MFI_IMM_LAST		(1u << 27)	/* last fragment of a message */
#define MFI_IMM_CQDATA		(1u << 26)	/* first 8 bytes of the slot: CQ data */
#define MFI_IMM_SLOT_SHIFT	16
#define MFI_IMM_SLOT_MASK	0x3ffu		/* 10 bits: up to 1024 slots */
#define MFI_IMM_CREDIT_MASK	0xffffu

#define MFI_MAX_SLOTS		1024u

struct mfi_imm {
	enum mfi_kind kind;
	bool last, cqdata;
	uint32_t slot;
	uint32_t credits;
};

uint32_t mfi_imm_encode(const struct mfi_imm *imm);
/* 0, or -EPROTO for a kind we do not know or bits no sender sets. */
int mfi_imm_decode(uint32_t v, struct mfi_imm *out);

/* ---- credits ------------------------------------------------------------- */

/*
 * Both ends of one direction of a connection. The sender writes message
 * fragments into the receiver's ring of `nslots` slots, round robin; it
 * may have at most `nslots` fragments unreturned. The receiver frees
 * slots as it consumes them, possibly out of order (control messages are
 * handled at once, message fragments wait for a posted receive), but hands
 * back credits only for the contiguous run of freed slots after the
 * oldest busy one, so the slot the sender writes next is always free.
 */
struct mfi_credits {
	uint32_t nslots;
	/* sender side: towards the peer's ring */
	uint32_t tx_seq;	/* fragments sent */
	uint32_t tx_credits;	/* fragments we may still send */
	/* receiver side: our ring */
	uint32_t rx_seq;	/* fragments arrived */
	uint32_t rx_freed_seq;	/* every fragment before this is freed */
	uint32_t rx_pending;	/* freed, not yet returned to the sender */
	uint8_t freed[MFI_MAX_SLOTS];
};

/* 0, or -EINVAL unless 1 <= nslots <= MFI_MAX_SLOTS. */
int mfi_credits_init(struct mfi_credits *c, uint32_t nslots);
/* The slot to write the next fragment into, or -EAGAIN without credit. */
int mfi_tx_take_slot(struct mfi_credits *c);
/* Credits the peer returned; -EPROTO if that is more than it could owe. */
int mfi_tx_grant(struct mfi_credits *c, uint32_t credits);
/* A fragment arrived in `slot`: -EPROTO unless it is the expected slot. */
int mfi_rx_arrive(struct mfi_credits *c, uint32_t slot);
/* The fragment in `slot` is consumed; -EPROTO if the slot is not busy. */
int mfi_rx_free(struct mfi_credits *c, uint32_t slot);
/* Credits to hand back now (at most MFI_IMM_CREDIT_MASK); resets them. */
uint32_t mfi_rx_take_credits(struct mfi_credits *c);
/*
 * Whether freed credits are worth a message of their own: half the ring.
 * Enough to avoid a deadlock: a sender out of credit means every slot is
 * busy or freed-unreturned, so either half of them are freed (and we
 * send) or half are busy and wait for receives the application posts.
 */
bool mfi_rx_credit_due(const struct mfi_credits *c);

/* ---- control payloads ---------------------------------------------------- */

struct mfi_read_req {
	uint64_t id;		/* the requester's, echoed in the answer */
	uint64_t raddr;		/* the target's address (FI_MR_VIRT_ADDR) */
	uint64_t rkey;		/* the target's MR key */
	uint64_t len;
	uint64_t laddr;		/* where the target writes to, at the requester */
	uint32_t lrkey;		/* the requester's MRC key of that buffer */
};
#define MFI_READ_REQ_LEN	44

struct mfi_read_resp {
	uint64_t id;
	int32_t status;		/* 0 or a positive FI_E* code */
};
#define MFI_READ_RESP_LEN	12

void mfi_read_req_encode(const struct mfi_read_req *r, uint8_t *buf);
void mfi_read_req_decode(const uint8_t *buf, struct mfi_read_req *r);
void mfi_read_resp_encode(const struct mfi_read_resp *r, uint8_t *buf);
void mfi_read_resp_decode(const uint8_t *buf, struct mfi_read_resp *r);
void mfi_put_u64(uint8_t *buf, uint64_t v);
uint64_t mfi_get_u64(const uint8_t *buf);

/* ---- connection manager -------------------------------------------------- */

enum mfi_cm_type {
	MFI_CM_REQ	= 1,	/* client -> server: fi_connect */
	MFI_CM_ACCEPT	= 2,	/* server -> client: fi_accept */
	MFI_CM_REJECT	= 3,	/* server -> client: fi_reject */
	MFI_CM_RTU	= 4,	/* client -> server: the client's QP is up */
	MFI_CM_BYE	= 5,	/* either way: fi_shutdown, an orderly end;
				 * `psn` carries how many fragments the sender
				 * wrote (all of them precede the BYE) */
};

#define MFI_CM_DATA_MAX		256
#define MFI_CM_MAX_ADDRS	8

/* What one side tells the other: its QP, its receive ring, CM data. */
struct mfi_cm_msg {
	enum mfi_cm_type type;
	uint32_t qpn, psn, key, path_mtu;
	uint64_t ring_addr;
	uint32_t ring_rkey, slot_size, nslots;
	uint8_t n_addrs;
	struct sockaddr_storage addrs[MFI_CM_MAX_ADDRS];
	uint16_t cm_len;
	uint8_t cm_data[MFI_CM_DATA_MAX];
};

#define MFI_CM_WIRE_LEN		(48 + MFI_CM_MAX_ADDRS * 20 + MFI_CM_DATA_MAX)

/* 0, or -EINVAL for out-of-range fields (the message is not sent). */
int mfi_cm_encode(const struct mfi_cm_msg *m, uint8_t buf[MFI_CM_WIRE_LEN]);
/* 0, or -EPROTO for a message that is not ours or not sane. */
int mfi_cm_decode(const uint8_t buf[MFI_CM_WIRE_LEN], struct mfi_cm_msg *m);

#endif /* MRC_FI_PROTO_H */
