/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * A context's data socket: libmrc makes it for a privileged process, mrcd
 * for a brokered one (common/broker.h), the same way.
 */
#ifndef MRC_COMMON_DATA_SOCKET_H
#define MRC_COMMON_DATA_SOCKET_H

/*
 * A dual-stack UDP socket bound to a port the kernel picks, its buffers
 * forced large (which needs CAP_NET_ADMIN: silently smaller without). The
 * fd, or -errno.
 */
int mrc_data_socket_open(void);

#endif /* MRC_COMMON_DATA_SOCKET_H */
