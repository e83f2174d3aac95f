/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The libfabric provider `mrc` (libmrc-fi.so): its objects and the calls
 * between its files. docs/LIBFABRIC.md describes the design:
 *
 *   prov.c     fi_prov_ini, fi_getinfo, the fabric
 *   domain.c   domain, memory regions, completion queues, progress
 *   eq.c       event queues (CM events, shutdown)
 *   cm.c       passive endpoints and the TCP side channel (connect/accept)
 *   ep.c       active endpoints: object, binding, enabling, the ops tables
 *   data.c     sends, receives and RMA over WRITE / WRITE-with-immediate
 *   proto.c    the wire protocol (immediates, credits, CM messages)
 *
 * Locking: one recursive mutex per fabric guards every object below it
 * and libmrc's context (which is not thread-safe); an EQ's queue has its
 * own lock, taken after the fabric's, so that fi_eq_sread can wait
 * without holding the fabric.
 */
#ifndef MRC_FI_MRCFI_H
#define MRC_FI_MRCFI_H

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include "mrc/mrc.h"
#include "proto.h"

#define MFI_PROV_NAME		"mrc"
#define MFI_PROV_VERSION	FI_VERSION(0, 19)
#define MFI_API_VERSION		FI_VERSION(1, 17)

#define MFI_DEF_SLOTS		32		/* receive ring slots per endpoint */
#define MFI_DEF_SLOT_SIZE	(64u << 10)	/* bytes per slot */
#define MFI_INJECT_SIZE		64
#define MFI_IOV_LIMIT		4
#define MFI_TX_SIZE		256		/* operations queued per endpoint */
#define MFI_RX_SIZE		256		/* receives posted per endpoint */
#define MFI_MAX_MSG_SIZE	(1ul << 30)
#define MFI_MAX_RMA_SIZE	(1ul << 30)
#define MFI_CQ_DATA_SIZE	8
/* libfabric has no FI_EPROTO; fi_strerror names the errno value. */
#define MFI_EPROTO		EPROTO
#define MFI_CONNECT_TIMEOUT_MS	5000
#define MFI_SOCK_CHECK_NS	(10 * 1000 * 1000ull)	/* peer-alive checks */
#define MFI_BYE_DRAIN_NS	(2 * 1000 * 1000 * 1000ull)	/* FI_SHUTDOWN at the latest */

extern struct fi_provider mfi_prov;

/* ---- fabric, domain, MR -------------------------------------------------- */

struct mfi_ep;
struct mfi_pep;
struct mfi_eq;

struct mfi_fabric {
	struct fid_fabric fabric;
	pthread_mutex_t lock;
	struct mrc_context *ctx;	/* opened at the first domain or listen */
	struct mfi_ep *eps;		/* every active endpoint (QP lookup) */
	struct mfi_pep *peps;
	uint32_t api_version;
	int refs;			/* domains, EQs, PEPs open on it */
};

struct mfi_mr;

struct mfi_domain {
	struct fid_domain domain;
	struct mfi_fabric *fab;
	struct mrc_cq *mcq;		/* every QP of the domain completes here */
	struct mfi_mr *mrs;
	uint64_t next_sock_check_ns;
	int refs;			/* CQs, MRs, EPs */
};

struct mfi_mr {
	struct fid_mr mr;
	struct mfi_domain *dom;
	struct mrc_mr *m;
	uint64_t access;
	uint8_t *addr;
	size_t len;
	struct mfi_mr *next;
};

/* ---- completion queue ---------------------------------------------------- */

struct mfi_cq_err {
	struct fi_cq_err_entry e;
	struct mfi_cq_err *next;
};

struct mfi_cq {
	struct fid_cq cq;
	struct mfi_domain *dom;
	enum fi_cq_format format;
	struct fi_cq_tagged_entry *ring;
	size_t cap, head, count;
	struct mfi_cq_err *errs, **errs_tail;
	int refs;
};

/* ---- event queue --------------------------------------------------------- */

struct mfi_eq_event {
	struct mfi_eq_event *next;
	uint32_t event;
	bool is_err;
	bool owns_info;		/* u.cm.info is ours until read */
	struct fi_eq_err_entry err;
	size_t len;			/* bytes of `u` to hand out */
	union {
		struct fi_eq_cm_entry cm;
		uint8_t raw[sizeof(struct fi_eq_cm_entry) + MFI_CM_DATA_MAX];
	} u;
	uint8_t err_data[MFI_CM_DATA_MAX];
};

struct mfi_eq {
	struct fid_eq eq;
	struct mfi_fabric *fab;
	pthread_mutex_t qlock;
	struct mfi_eq_event *head, **tail;
	uint8_t err_data[MFI_CM_DATA_MAX];	/* valid until the next read */
	int wake_fd;			/* eventfd: an event was queued */
	int refs;
};

/* ---- passive endpoint and connection requests ---------------------------- */

struct mfi_connreq {
	struct fid fid;			/* FI_CLASS_CONNREQ: fi_info->handle */
	int fd;
	struct mfi_cm_msg peer;
	struct sockaddr_in peer_addr;
};

struct mfi_pep {
	struct fid_pep pep;
	struct mfi_fabric *fab;
	struct fi_info *info;
	struct mfi_eq *eq;
	int fd;				/* listening TCP socket, -1 before fi_listen */
	struct sockaddr_in addr;
	struct mfi_pep *next;
};

/* ---- active endpoint ----------------------------------------------------- */

enum mfi_ep_state {
	MFI_EP_IDLE,
	MFI_EP_CONNECTING,	/* REQ sent, waiting for ACCEPT or REJECT */
	MFI_EP_ACCEPTING,	/* ACCEPT sent, waiting for RTU */
	MFI_EP_CONNECTED,
	MFI_EP_SHUTDOWN,	/* orderly end: no new sends */
	MFI_EP_ERROR,		/* QP in ERROR: everything flushed */
};

enum mfi_op_type {
	MFI_OP_SEND,
	MFI_OP_WRITE,
	MFI_OP_READ,
	MFI_OP_READ_ANSWER,	/* internal: a peer's read request, served */
};

struct mfi_op {
	struct mfi_op *prev, *next;
	enum mfi_op_type type;
	void *context;
	uint64_t cq_flags;		/* FI_SEND | FI_MSG, FI_RMA | FI_WRITE ... */
	bool completion;		/* report it in the CQ */
	struct iovec iov[MFI_IOV_LIMIT];
	size_t iov_count;
	size_t len, sent;		/* bytes, bytes handed to fragments */
	bool has_data;			/* FI_REMOTE_CQ_DATA */
	uint64_t data;
	uint8_t inject_buf[MFI_INJECT_SIZE];
	uint64_t raddr, rkey;		/* RMA: the peer's address and key */
	uint32_t lkey;			/* RMA: our MRC key of iov[0] */
	struct mrc_mr *tmp_mr;		/* registered for this operation only */
	uint64_t read_id;		/* READ: matches the answer */
	int32_t answer_status;		/* READ_ANSWER: what to tell the peer */
	int stage;			/* what is posted so far (data.c) */
	int pending;			/* WRITEs posted, not completed */
	bool posted_all;
	bool waiting_answer;		/* READ: request sent, no answer yet */
};

struct mfi_recv {
	struct mfi_recv *next;
	void *context;
	struct iovec iov[MFI_IOV_LIMIT];
	size_t iov_count, total, offset;
	bool truncated, has_data;
	uint64_t data;
	uint64_t flags;
};

struct mfi_ep {
	struct fid_ep ep;
	struct mfi_domain *dom;
	struct fi_info *info;
	struct mfi_eq *eq;
	struct mfi_cq *txcq, *rxcq;
	bool tx_selective, rx_selective;
	bool enabled;
	enum mfi_ep_state state;
	int fd;				/* the TCP side channel, -1 if none */
	struct sockaddr_in peer_addr;
	struct mrc_qp *qp;
	uint32_t qpn, psn, path_mtu;
	struct mfi_cm_msg peer;		/* its QP and ring */
	/* our receive ring, and the bounce buffers of our fragments */
	uint32_t nslots, slot_size;
	uint8_t *ring, *bounce;
	struct mrc_mr *ring_mr, *bounce_mr;
	struct mfi_credits cr;
	struct mfi_op *bounce_op[MFI_MAX_SLOTS];	/* NULL = bounce slot free */
	uint32_t slot_len[MFI_MAX_SLOTS];
	uint32_t slot_imm[MFI_MAX_SLOTS];
	uint32_t rx_proc_seq;		/* next ring fragment to deliver */
	/* operations in posting order; `cursor` is the first not fully posted */
	struct mfi_op *ops_head, *ops_tail, *cursor;
	size_t ops_count;
	struct mfi_recv *recv_head, **recv_tail;
	size_t recv_count;
	bool credit_inflight;
	/* The peer's BYE: FI_SHUTDOWN once its fragments are in and delivered. */
	bool bye_pending;
	uint32_t bye_frags;
	uint64_t bye_deadline_ns;
	uint64_t next_read_id;
	uint8_t cm_data[MFI_CM_DATA_MAX];	/* fi_connect's, until REQ is sent */
	uint16_t cm_len;
	struct mfi_connreq *connreq;	/* server side, until fi_accept */
	struct mfi_ep *next;
};

/* ---- calls between files ------------------------------------------------- */

/* prov.c */
int mfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context);
int mfi_no_control(struct fid *fid, int command, void *arg);
int mfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags);
uint64_t mfi_now_ns(void);
int mfi_fabric_ctx(struct mfi_fabric *fab);
int mfi_errno_to_fi(int err);
void mfi_ring_shape(uint32_t *nslots, uint32_t *slot_size);

/* domain.c */
int mfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **dom, void *context);
void mfi_progress(struct mfi_domain *dom);
int mfi_cq_push(struct mfi_cq *cq, void *context, uint64_t flags, size_t len,
		void *buf, uint64_t data);
int mfi_cq_push_err(struct mfi_cq *cq, void *context, uint64_t flags,
		    size_t len, int err, int prov_errno, size_t olen);
struct mfi_mr *mfi_mr_by_desc(struct mfi_domain *dom, void *desc);
struct mfi_mr *mfi_mr_by_key(struct mfi_domain *dom, uint64_t key);

/* eq.c */
int mfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **eq, void *context);
int mfi_eq_push(struct mfi_eq *eq, uint32_t event, fid_t fid,
		struct fi_info *info, const void *data, size_t len);
int mfi_eq_push_err(struct mfi_eq *eq, fid_t fid, void *context, int err,
		    int prov_errno, const void *data, size_t len);
/*
 * The text of a CQ or EQ error entry's prov_errno (libmrc's completion
 * status; `none` when it is 0), in buf when the caller gave one.
 */
const char *mfi_prov_strerror(int prov_errno, const char *none, char *buf,
			      size_t len);

/* cm.c */
int mfi_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_pep **pep, void *context);
void mfi_cm_progress(struct mfi_fabric *fab, struct mfi_eq *eq);
int mfi_cm_poll_fds(struct mfi_fabric *fab, struct mfi_eq *eq,
		    struct pollfd *fds, int max);
int mfi_ep_connect(struct fid_ep *ep, const void *addr, const void *param,
		   size_t paramlen);
int mfi_ep_accept(struct fid_ep *ep, const void *param, size_t paramlen);
int mfi_ep_shutdown(struct fid_ep *ep, uint64_t flags);
int mfi_send_cm(int fd, struct mfi_cm_msg *m);
void mfi_check_peer_alive(struct mfi_ep *ep);
void mfi_bye_progress(struct mfi_ep *ep);
int mfi_local_plane_addrs(struct mfi_fabric *fab, struct sockaddr_storage *out,
			  int max);

/* ep.c */
int mfi_endpoint(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **ep, void *context);
int mfi_ep_qp_up(struct mfi_ep *ep);
void mfi_ep_fail(struct mfi_ep *ep, int fi_err, int prov_errno);
struct mfi_ep *mfi_ep_by_qpn(struct mfi_fabric *fab, uint32_t qpn);

/* data.c */
extern struct fi_ops_msg mfi_msg_ops;
extern struct fi_ops_rma mfi_rma_ops;
void mfi_ep_handle_wc(struct mfi_ep *ep, const struct mrc_wc *wc);
void mfi_ep_progress(struct mfi_ep *ep);
void mfi_ep_flush(struct mfi_ep *ep, int fi_err, int prov_errno);
int mfi_wc_to_fi_err(enum mrc_wc_status status);

/* The fabric of any object below it, for its lock. */
static inline void mfi_lock(struct mfi_fabric *fab)
{
	pthread_mutex_lock(&fab->lock);
}

static inline void mfi_unlock(struct mfi_fabric *fab)
{
	pthread_mutex_unlock(&fab->lock);
}

#endif /* MRC_FI_MRCFI_H */
