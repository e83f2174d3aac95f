// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The provider's entry: fi_prov_ini (what libfabric's DL loader calls in
 * every lib*-fi.so of FI_PROVIDER_PATH), fi_getinfo and the fabric.
 *
 * fi_getinfo answers with one fi_info, FI_EP_MSG with FI_MSG and FI_RMA,
 * and only when the hints allow what it needs (docs/LIBFABRIC.md,
 * "Attributes"): an FI_EP_RDM endpoint comes from ofi_rxm layered on it.
 */
#include "mrcfi.h"

#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint64_t mfi_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* A negative errno as the FI_E* code libfabric returns (the same numbers). */
int mfi_errno_to_fi(int err)
{
	return err > 0 ? -err : err;
}

/* libmrc's context: one per fabric, opened when first needed. */
int mfi_fabric_ctx(struct mfi_fabric *fab)
{
	if (fab->ctx)
		return 0;
	fab->ctx = mrc_open(NULL);
	if (!fab->ctx) {
		FI_WARN(&mfi_prov, FI_LOG_FABRIC,
			"cannot open libmrc: %s (is mrcd running?)\n",
			strerror(errno));
		return -errno;
	}
	return 0;
}

/* ---- fabric -------------------------------------------------------------- */

static int fabric_close(struct fid *fid)
{
	struct mfi_fabric *fab = (struct mfi_fabric *)fid;

	if (fab->refs)
		return -FI_EBUSY;
	if (fab->ctx)
		mrc_close(fab->ctx);
	pthread_mutex_destroy(&fab->lock);
	free(fab);
	return 0;
}

static int no_wait_open(struct fid_fabric *fabric, struct fi_wait_attr *attr,
			struct fid_wait **waitset)
{
	(void)fabric; (void)attr; (void)waitset;
	return -FI_ENOSYS;
}

static int no_trywait(struct fid_fabric *fabric, struct fid **fids, int count)
{
	(void)fabric; (void)fids; (void)count;
	return -FI_ENOSYS;
}

/*
 * libfabric's inline wrappers (fi_open_ops, fi_control, fi_bind) call
 * through these pointers unchecked: every fi_ops table fills them.
 */
int mfi_no_ops_open(struct fid *fid, const char *name, uint64_t flags,
		    void **ops, void *context)
{
	(void)fid; (void)name; (void)flags; (void)ops; (void)context;
	return -FI_ENOSYS;
}

int mfi_no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

int mfi_no_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

static struct fi_ops fabric_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = fabric_close,
	.bind = mfi_no_bind,
	.control = mfi_no_control,
	.ops_open = mfi_no_ops_open,
};

static struct fi_ops_fabric fabric_ops = {
	.size = sizeof(struct fi_ops_fabric),
	.domain = mfi_domain_open,
	.passive_ep = mfi_passive_ep,
	.eq_open = mfi_eq_open,
	.wait_open = no_wait_open,
	.trywait = no_trywait,
};

static int fabric_open(struct fi_fabric_attr *attr, struct fid_fabric **out,
		       void *context)
{
	struct mfi_fabric *fab;
	pthread_mutexattr_t ma;

	if (attr->name && strcmp(attr->name, MFI_PROV_NAME))
		return -FI_EINVAL;
	fab = calloc(1, sizeof(*fab));
	if (!fab)
		return -FI_ENOMEM;
	/* Recursive: progress called from within a locked call locks again. */
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&fab->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	fab->fabric.fid.fclass = FI_CLASS_FABRIC;
	fab->fabric.fid.context = context;
	fab->fabric.fid.ops = &fabric_fi_ops;
	fab->fabric.ops = &fabric_ops;
	fab->api_version = attr->api_version ? attr->api_version : MFI_API_VERSION;
	fab->fabric.api_version = fab->api_version;
	*out = &fab->fabric;
	return 0;
}

/* ---- fi_getinfo ---------------------------------------------------------- */

#define MFI_CAPS (FI_MSG | FI_RMA | FI_SEND | FI_RECV | FI_READ | FI_WRITE | \
		  FI_REMOTE_READ | FI_REMOTE_WRITE)
#define MFI_MR_MODE (FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY)

/* Can an application that gave these MR-mode hints live with ours? */
static bool mr_mode_fits(uint32_t version, int hinted)
{
	if (hinted == FI_MR_UNSPEC || hinted == FI_MR_BASIC)
		return true;
	if (version < FI_VERSION(1, 5) || hinted == FI_MR_SCALABLE)
		return false;
	return (hinted & MFI_MR_MODE) == MFI_MR_MODE;
}

static bool hints_fit(uint32_t version, const struct fi_info *h)
{
	if (!h)
		return true;
	if (h->caps & ~(MFI_CAPS | FI_LOCAL_COMM | FI_REMOTE_COMM))
		return false;
	if (h->addr_format != FI_FORMAT_UNSPEC && h->addr_format != FI_SOCKADDR &&
	    h->addr_format != FI_SOCKADDR_IN)
		return false;
	if (h->fabric_attr && h->fabric_attr->name &&
	    strcmp(h->fabric_attr->name, MFI_PROV_NAME))
		return false;
	if (h->ep_attr) {
		if (h->ep_attr->type != FI_EP_UNSPEC && h->ep_attr->type != FI_EP_MSG)
			return false;
		if (h->ep_attr->max_msg_size > MFI_MAX_MSG_SIZE)
			return false;
		if (h->ep_attr->rx_ctx_cnt == FI_SHARED_CONTEXT ||
		    h->ep_attr->tx_ctx_cnt == FI_SHARED_CONTEXT)
			return false;
	}
	if (h->domain_attr) {
		const struct fi_domain_attr *d = h->domain_attr;

		if (d->name && strcmp(d->name, MFI_PROV_NAME))
			return false;
		if (!mr_mode_fits(version, d->mr_mode))
			return false;
		if (d->cq_data_size > MFI_CQ_DATA_SIZE)
			return false;
		if (d->data_progress == FI_PROGRESS_AUTO ||
		    d->control_progress == FI_PROGRESS_AUTO)
			return false;
	}
	if (h->tx_attr && (h->tx_attr->inject_size > MFI_INJECT_SIZE ||
			   h->tx_attr->iov_limit > MFI_IOV_LIMIT ||
			   (h->tx_attr->msg_order & ~(uint64_t)FI_ORDER_SAS)))
		return false;
	if (h->rx_attr && (h->rx_attr->iov_limit > MFI_IOV_LIMIT ||
			   (h->rx_attr->msg_order & ~(uint64_t)FI_ORDER_SAS)))
		return false;
	return true;
}

/* node/service into a sockaddr_in (numeric or a name); 0 or -FI_ENODATA. */
static int resolve(const char *node, const char *service, struct sockaddr_in *out)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;

	if (!node && !service)
		return -FI_ENODATA;
	if (!node)
		hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(node, service ? service : "0", &hints, &res))
		return -FI_ENODATA;
	memcpy(out, res->ai_addr, sizeof(*out));
	freeaddrinfo(res);
	return 0;
}

static void *dup_addr(const void *addr, size_t len)
{
	void *p = malloc(len);

	if (p)
		memcpy(p, addr, len);
	return p;
}

static void fill_attrs(struct fi_info *fi, uint32_t version, const struct fi_info *h)
{
	uint64_t caps = h && h->caps ? (h->caps & MFI_CAPS) : MFI_CAPS;

	/* Asked for FI_MSG alone, say so, with the primary capabilities implied. */
	if (caps & (FI_MSG | FI_RMA))
		caps |= (caps & FI_MSG ? FI_SEND | FI_RECV : 0) |
			(caps & FI_RMA ? FI_READ | FI_WRITE | FI_REMOTE_READ |
			 FI_REMOTE_WRITE : 0);
	fi->caps = caps;
	fi->mode = 0;
	fi->addr_format = FI_SOCKADDR_IN;

	fi->tx_attr->caps = caps;
	fi->tx_attr->msg_order = FI_ORDER_SAS;
	fi->tx_attr->comp_order = FI_ORDER_NONE;
	fi->tx_attr->inject_size = MFI_INJECT_SIZE;
	fi->tx_attr->size = MFI_TX_SIZE;
	fi->tx_attr->iov_limit = MFI_IOV_LIMIT;
	fi->tx_attr->rma_iov_limit = 1;
	fi->tx_attr->op_flags = FI_TRANSMIT_COMPLETE;

	fi->rx_attr->caps = caps;
	fi->rx_attr->msg_order = FI_ORDER_SAS;
	fi->rx_attr->comp_order = FI_ORDER_NONE;
	fi->rx_attr->total_buffered_recv = 0;
	fi->rx_attr->size = MFI_RX_SIZE;
	fi->rx_attr->iov_limit = MFI_IOV_LIMIT;

	fi->ep_attr->type = FI_EP_MSG;
	fi->ep_attr->protocol = FI_PROTO_UNSPEC;
	fi->ep_attr->max_msg_size = MFI_MAX_MSG_SIZE;
	fi->ep_attr->tx_ctx_cnt = 1;
	fi->ep_attr->rx_ctx_cnt = 1;

	fi->domain_attr->name = strdup(MFI_PROV_NAME);
	fi->domain_attr->threading = FI_THREAD_SAFE;
	fi->domain_attr->control_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->data_progress = FI_PROGRESS_MANUAL;
	fi->domain_attr->resource_mgmt = FI_RM_ENABLED;
	fi->domain_attr->av_type = FI_AV_UNSPEC;
	fi->domain_attr->mr_mode = version < FI_VERSION(1, 5) ? FI_MR_BASIC : MFI_MR_MODE;
	fi->domain_attr->mr_key_size = 4;
	fi->domain_attr->cq_data_size = MFI_CQ_DATA_SIZE;
	fi->domain_attr->cq_cnt = 256;
	fi->domain_attr->ep_cnt = 1024;
	fi->domain_attr->tx_ctx_cnt = 1024;
	fi->domain_attr->rx_ctx_cnt = 1024;
	fi->domain_attr->max_ep_tx_ctx = 1;
	fi->domain_attr->max_ep_rx_ctx = 1;
	fi->domain_attr->mr_iov_limit = 1;
	fi->domain_attr->mr_cnt = 65536;

	fi->fabric_attr->name = strdup(MFI_PROV_NAME);
	fi->fabric_attr->prov_version = MFI_PROV_VERSION;
	fi->fabric_attr->api_version = version;
}

static int set_addrs(struct fi_info *fi, const char *node, const char *service,
		     uint64_t flags, const struct fi_info *h)
{
	struct sockaddr_in sin;

	if (h && h->src_addr && h->src_addrlen >= sizeof(sin)) {
		fi->src_addr = dup_addr(h->src_addr, sizeof(sin));
		fi->src_addrlen = sizeof(sin);
	}
	if (h && h->dest_addr && h->dest_addrlen >= sizeof(sin)) {
		fi->dest_addr = dup_addr(h->dest_addr, sizeof(sin));
		fi->dest_addrlen = sizeof(sin);
	}
	if (node || service) {
		if (resolve(node, service, &sin))
			return -FI_ENODATA;
		if ((flags & FI_SOURCE) || !node) {
			free(fi->src_addr);
			fi->src_addr = dup_addr(&sin, sizeof(sin));
			fi->src_addrlen = sizeof(sin);
		} else {
			free(fi->dest_addr);
			fi->dest_addr = dup_addr(&sin, sizeof(sin));
			fi->dest_addrlen = sizeof(sin);
		}
	}
	if ((fi->src_addr && ((struct sockaddr *)fi->src_addr)->sa_family != AF_INET) ||
	    (fi->dest_addr && ((struct sockaddr *)fi->dest_addr)->sa_family != AF_INET))
		return -FI_ENODATA;
	return 0;
}

static int getinfo(uint32_t version, const char *node, const char *service,
		   uint64_t flags, const struct fi_info *hints, struct fi_info **info)
{
	struct fi_info *fi;
	int ret;

	*info = NULL;
	if (!hints_fit(version, hints))
		return -FI_ENODATA;
	fi = fi_allocinfo();
	if (!fi)
		return -FI_ENOMEM;
	fill_attrs(fi, version, hints);
	ret = set_addrs(fi, node, service, flags, hints);
	if (ret) {
		fi_freeinfo(fi);
		return ret;
	}
	*info = fi;
	return 0;
}

static void cleanup(void)
{
}

struct fi_provider mfi_prov = {
	.name = MFI_PROV_NAME,
	.version = MFI_PROV_VERSION,
	.fi_version = MFI_API_VERSION,
	.getinfo = getinfo,
	.fabric = fabric_open,
	.cleanup = cleanup,
};

FI_EXT_INI
{
	fi_param_define(&mfi_prov, "slots", FI_PARAM_INT,
			"receive ring slots per endpoint, 2..1024 (default %d; "
			"slots x slot size at most 64 MiB); both ends must agree",
			MFI_DEF_SLOTS);
	fi_param_define(&mfi_prov, "slot_size", FI_PARAM_SIZE_T,
			"bytes per receive ring slot, 4096..16777216, a multiple "
			"of 4096 (default %u); both ends must agree",
			MFI_DEF_SLOT_SIZE);
	return &mfi_prov;
}

/* FI_MRC_SLOTS and FI_MRC_SLOT_SIZE, when set and sane; else the defaults. */
void mfi_ring_shape(uint32_t *nslots, uint32_t *slot_size)
{
	size_t size = 0;
	int slots = 0;

	*nslots = MFI_DEF_SLOTS;
	*slot_size = MFI_DEF_SLOT_SIZE;
	if (!fi_param_get_int(&mfi_prov, "slots", &slots) && slots >= 2 &&
	    slots <= (int)MFI_MAX_SLOTS)
		*nslots = (uint32_t)slots;
	if (!fi_param_get_size_t(&mfi_prov, "slot_size", &size) && size >= 4096 &&
	    size <= (16u << 20) && !(size % 4096))
		*slot_size = (uint32_t)size;
	/* A ring (and its bounce twin) of at most 64 MiB per endpoint. */
	if ((uint64_t)*nslots * *slot_size > (64u << 20)) {
		FI_WARN(&mfi_prov, FI_LOG_CORE, "FI_MRC_SLOTS x FI_MRC_SLOT_SIZE "
			"over 64 MiB: using %u x %u\n", MFI_DEF_SLOTS, MFI_DEF_SLOT_SIZE);
		*nslots = MFI_DEF_SLOTS;
		*slot_size = MFI_DEF_SLOT_SIZE;
	}
}
