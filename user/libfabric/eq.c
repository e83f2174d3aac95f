// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Event queues: FI_CONNREQ, FI_CONNECTED and FI_SHUTDOWN, and error
 * entries (a refused or failed connection). Reading one runs the
 * connection manager's progress (cm.c) first; fi_eq_sread waits in
 * poll() on the side-channel sockets of the EQ's endpoints and an eventfd
 * that data progress rings when it queues an event (a QP gone to ERROR).
 */
#include "mrcfi.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#define EQ_POLL_FDS	64

static void eq_append(struct mfi_eq *eq, struct mfi_eq_event *ev)
{
	uint64_t one = 1;

	pthread_mutex_lock(&eq->qlock);
	*eq->tail = ev;
	eq->tail = &ev->next;
	pthread_mutex_unlock(&eq->qlock);
	if (write(eq->wake_fd, &one, sizeof(one)) < 0) {
		/* The counter saturated: a reader is due anyway. */
	}
}

int mfi_eq_push(struct mfi_eq *eq, uint32_t event, fid_t fid,
		struct fi_info *info, const void *data, size_t len)
{
	struct mfi_eq_event *ev;

	if (!eq)
		return -FI_ENOEQ;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -FI_ENOMEM;
	if (len > MFI_CM_DATA_MAX)
		len = MFI_CM_DATA_MAX;
	ev->event = event;
	ev->u.cm.fid = fid;
	ev->u.cm.info = info;
	ev->owns_info = info != NULL;
	if (len)
		memcpy(ev->u.cm.data, data, len);
	ev->len = sizeof(struct fi_eq_cm_entry) + len;
	eq_append(eq, ev);
	return 0;
}

int mfi_eq_push_err(struct mfi_eq *eq, fid_t fid, void *context, int err,
		    int prov_errno, const void *data, size_t len)
{
	struct mfi_eq_event *ev;

	if (!eq)
		return -FI_ENOEQ;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -FI_ENOMEM;
	if (len > MFI_CM_DATA_MAX)
		len = MFI_CM_DATA_MAX;
	ev->is_err = true;
	ev->err.fid = fid;
	ev->err.context = context;
	ev->err.err = err;
	ev->err.prov_errno = prov_errno;
	ev->err.err_data_size = len;
	if (len)
		memcpy(ev->err_data, data, len);
	eq_append(eq, ev);
	return 0;
}

static void drain_wake(struct mfi_eq *eq)
{
	uint64_t v;

	if (read(eq->wake_fd, &v, sizeof(v)) < 0) {
		/* EAGAIN: nothing rang; fine. */
	}
}

static ssize_t eq_read(struct fid_eq *fid, uint32_t *event, void *buf,
		       size_t len, uint64_t flags)
{
	struct mfi_eq *eq = (struct mfi_eq *)fid;
	struct mfi_eq_event *ev;
	ssize_t ret;

	mfi_lock(eq->fab);
	mfi_cm_progress(eq->fab, eq);
	mfi_unlock(eq->fab);
	pthread_mutex_lock(&eq->qlock);
	ev = eq->head;
	if (!ev) {
		ret = -FI_EAGAIN;
	} else if (ev->is_err) {
		ret = -FI_EAVAIL;
	} else if (len < ev->len) {
		ret = -FI_ETOOSMALL;
	} else {
		if (event)
			*event = ev->event;
		memcpy(buf, ev->u.raw, ev->len);
		ret = (ssize_t)ev->len;
		if (!(flags & FI_PEEK)) {
			eq->head = ev->next;
			if (!eq->head)
				eq->tail = &eq->head;
			free(ev);
		}
	}
	if (!eq->head)
		drain_wake(eq);
	pthread_mutex_unlock(&eq->qlock);
	return ret;
}

static ssize_t eq_readerr(struct fid_eq *fid, struct fi_eq_err_entry *buf,
			  uint64_t flags)
{
	struct mfi_eq *eq = (struct mfi_eq *)fid;
	struct mfi_eq_event *ev;
	void *user_data = buf->err_data;
	size_t user_size = buf->err_data_size;
	bool v15 = FI_VERSION_GE(eq->fab->api_version, FI_VERSION(1, 5));

	(void)flags;
	pthread_mutex_lock(&eq->qlock);
	ev = eq->head;
	if (!ev || !ev->is_err) {
		pthread_mutex_unlock(&eq->qlock);
		return -FI_EAGAIN;
	}
	eq->head = ev->next;
	if (!eq->head)
		eq->tail = &eq->head;
	pthread_mutex_unlock(&eq->qlock);
	*buf = ev->err;
	/* Reject data: into the caller's buffer if it gave one (1.5+), else ours. */
	if (v15 && user_data && user_size) {
		size_t n = ev->err.err_data_size < user_size ?
			   ev->err.err_data_size : user_size;

		memcpy(user_data, ev->err_data, n);
		buf->err_data = user_data;
		buf->err_data_size = n;
	} else {
		memcpy(eq->err_data, ev->err_data, ev->err.err_data_size);
		buf->err_data = ev->err.err_data_size ? eq->err_data : NULL;
	}
	free(ev);
	return sizeof(*buf);
}

/* An application's own event, handed back byte for byte. */
static ssize_t eq_write(struct fid_eq *fid, uint32_t event, const void *buf,
			size_t len, uint64_t flags)
{
	struct mfi_eq *eq = (struct mfi_eq *)fid;
	struct mfi_eq_event *ev;

	(void)flags;
	if (!buf || len > sizeof(ev->u.raw))
		return -FI_EINVAL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -FI_ENOMEM;
	ev->event = event;
	memcpy(ev->u.raw, buf, len);
	ev->len = len;
	eq_append(eq, ev);
	return (ssize_t)len;
}

static ssize_t eq_sread(struct fid_eq *fid, uint32_t *event, void *buf,
			size_t len, int timeout, uint64_t flags)
{
	struct mfi_eq *eq = (struct mfi_eq *)fid;
	uint64_t end = timeout < 0 ? UINT64_MAX :
		       mfi_now_ns() + (uint64_t)timeout * 1000000ull;

	for (;;) {
		struct pollfd fds[EQ_POLL_FDS];
		ssize_t ret = eq_read(fid, event, buf, len, flags);
		uint64_t now = mfi_now_ns();
		int n, wait_ms;

		if (ret != -FI_EAGAIN || now >= end)
			return ret;
		fds[0].fd = eq->wake_fd;
		fds[0].events = POLLIN;
		mfi_lock(eq->fab);
		n = 1 + mfi_cm_poll_fds(eq->fab, eq, fds + 1, EQ_POLL_FDS - 1);
		mfi_unlock(eq->fab);
		/* Bounded waits: data progress may change state without an fd. */
		wait_ms = end == UINT64_MAX || (end - now) / 1000000 > 100 ? 100 :
			  (int)((end - now) / 1000000);
		if (poll(fds, (nfds_t)n, wait_ms) < 0 && errno != EINTR)
			return -errno;
	}
}

const char *mfi_prov_strerror(int prov_errno, const char *none, char *buf,
			      size_t len)
{
	const char *s = prov_errno ? mrc_wc_status_str((enum mrc_wc_status)prov_errno) :
			none;

	if (!s)
		s = "unknown MRC status";
	if (buf && len) {
		strncpy(buf, s, len - 1);
		buf[len - 1] = '\0';
		return buf;
	}
	return s;
}

static const char *eq_strerror(struct fid_eq *fid, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	(void)fid; (void)err_data;
	return mfi_prov_strerror(prov_errno, "connection error", buf, len);
}

static int eq_close(struct fid *fid)
{
	struct mfi_eq *eq = (struct mfi_eq *)fid;
	struct mfi_fabric *fab = eq->fab;

	mfi_lock(fab);
	if (eq->refs) {
		mfi_unlock(fab);
		return -FI_EBUSY;
	}
	fab->refs--;
	mfi_unlock(fab);
	while (eq->head) {
		struct mfi_eq_event *ev = eq->head;

		eq->head = ev->next;
		if (ev->owns_info)
			fi_freeinfo(ev->u.cm.info);
		free(ev);
	}
	close(eq->wake_fd);
	pthread_mutex_destroy(&eq->qlock);
	free(eq);
	return 0;
}

static int eq_control(struct fid *fid, int command, void *arg)
{
	struct mfi_eq *eq = (struct mfi_eq *)fid;

	/* FI_GETWAIT: the eventfd; readable when an event was queued. */
	if (command == FI_GETWAIT && arg) {
		*(int *)arg = eq->wake_fd;
		return 0;
	}
	return -FI_ENOSYS;
}

static int eq_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

static struct fi_ops eq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = eq_close,
	.bind = eq_bind,
	.control = eq_control,
	.ops_open = mfi_no_ops_open,
};

static struct fi_ops_eq eq_ops = {
	.size = sizeof(struct fi_ops_eq),
	.read = eq_read,
	.readerr = eq_readerr,
	.write = eq_write,
	.sread = eq_sread,
	.strerror = eq_strerror,
};

int mfi_eq_open(struct fid_fabric *fabric, struct fi_eq_attr *attr,
		struct fid_eq **out, void *context)
{
	struct mfi_fabric *fab = (struct mfi_fabric *)fabric;
	struct mfi_eq *eq;

	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC &&
	    attr->wait_obj != FI_WAIT_FD)
		return -FI_ENOSYS;
	eq = calloc(1, sizeof(*eq));
	if (!eq)
		return -FI_ENOMEM;
	eq->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (eq->wake_fd < 0) {
		free(eq);
		return -errno;
	}
	pthread_mutex_init(&eq->qlock, NULL);
	eq->tail = &eq->head;
	eq->fab = fab;
	eq->eq.fid.fclass = FI_CLASS_EQ;
	eq->eq.fid.context = context;
	eq->eq.fid.ops = &eq_fi_ops;
	eq->eq.ops = &eq_ops;
	mfi_lock(fab);
	fab->refs++;
	mfi_unlock(fab);
	*out = &eq->eq;
	return 0;
}
