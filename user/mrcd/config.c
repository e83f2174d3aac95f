// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * What mrcd writes for the fast path: mrc_cfg (UDP port, agent port, ABI
 * version), the plane table mrc_planes (each plane's interface and source
 * addresses) and mrc_plane_of (ifindex -> plane).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdio.h>
#include <string.h>
#include <net/if.h>
#include <netinet/in.h>

#include <bpf/libbpf.h>

#include "mrcd/mrcd.h"
#include "mrc.skel.h"

static bool ifa_is_plane(const struct ifaddrs *ifa, int ifindex)
{
	return ifa->ifa_addr && ifa->ifa_name &&
	       (int)if_nametoindex(ifa->ifa_name) == ifindex;
}

/*
 * The plane's source addresses for TC egress: its first global IPv4 and
 * its first IPv6 that is neither link-local, loopback nor multicast.
 */
static void plane_addresses(const struct ifaddrs *list, int ifindex,
			    struct mrc_plane *out)
{
	const struct ifaddrs *ifa;
	bool have4 = false, have6 = false;

	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (!ifa_is_plane(ifa, ifindex))
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET && !have4) {
			const struct in_addr *in =
				&((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
			__u32 h = ntohl(in->s_addr);

			if ((h >> 24) == 127 || (h >> 16) == 0xa9fe || !h)
				continue;	/* loopback, link-local, unset */
			memcpy(out->addr4, &in->s_addr, 4);
			have4 = true;
		} else if (ifa->ifa_addr->sa_family == AF_INET6 && !have6) {
			const struct in6_addr *in6 =
				&((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(in6) || IN6_IS_ADDR_LOOPBACK(in6) ||
			    IN6_IS_ADDR_MULTICAST(in6) || IN6_IS_ADDR_UNSPECIFIED(in6))
				continue;
			memcpy(out->addr6, in6, 16);
			have6 = true;
		}
	}
}

static int write_planes(const struct agent *a)
{
	struct ifaddrs *ifas = NULL;
	struct mrc_plane plane;
	__u32 key;
	int i, err = 0;

	if (getifaddrs(&ifas)) {
		pr_err("getifaddrs: %s (planes get no source addresses)\n", strerror(errno));
		ifas = NULL;
	}
	/* Every slot: an adopted table may have had more planes than we do. */
	for (i = 0; !err && i < MRC_MAX_PLANES_ABI; i++) {
		memset(&plane, 0, sizeof(plane));
		if (i < a->n_planes) {
			plane.ifindex = (__u32)a->planes[i].ifindex;
			memcpy(plane.name, a->planes[i].name, sizeof(plane.name));
			plane_addresses(ifas, a->planes[i].ifindex, &plane);
		}
		key = (__u32)i;		/* plane i + 1 */
		err = bpf_map__update_elem(a->skel->maps.mrc_planes, &key,
					   sizeof(key), &plane, sizeof(plane),
					   BPF_ANY);
	}
	if (ifas)
		freeifaddrs(ifas);
	return err;
}

bool is_our_ifindex(const struct agent *a, __u32 ifindex)
{
	for (int i = 0; i < a->n_planes; i++)
		if ((__u32)a->planes[i].ifindex == ifindex)
			return true;
	return false;
}

/*
 * ifindex -> plane for XDP and TC. New entries go in before stale ones
 * leave, so an adopted fast path never misses a plane it still serves.
 */
static int write_plane_of(const struct agent *a)
{
	const struct bpf_map *m = a->skel->maps.mrc_plane_of;
	__u32 key, next, plane, stale[MRC_MAX_PLANES_ABI];
	int i, n_stale = 0, err = 0;
	bool first = true;

	for (i = 0; !err && i < a->n_planes; i++) {
		key = (__u32)a->planes[i].ifindex;
		plane = (__u32)i + 1;
		err = bpf_map__update_elem(m, &key, sizeof(key), &plane,
					   sizeof(plane), BPF_ANY);
	}
	while (!err && n_stale < MRC_MAX_PLANES_ABI &&
	       !bpf_map__get_next_key(m, first ? NULL : &key, &next, sizeof(next))) {
		if (!is_our_ifindex(a, next))
			stale[n_stale++] = next;
		key = next;
		first = false;
	}
	for (i = 0; i < n_stale; i++)
		bpf_map__delete_elem(m, &stale[i], sizeof(stale[i]), 0);
	return err;
}

int write_config(const struct agent *a)
{
	struct mrc_global_cfg cfg = {
		.udp_port = a->opt.port,
		.abi_version = MRC_ABI_VERSION,
	};
	__u32 key = 0;
	int err;

	err = bpf_map__update_elem(a->skel->maps.mrc_cfg, &key, sizeof(key),
				   &cfg, sizeof(cfg), BPF_ANY);
	if (!err)
		err = write_planes(a);
	if (!err)
		err = write_plane_of(a);
	if (err)
		pr_err("writing the configuration maps failed: %s\n", strerror(-err));
	return err;
}

/* The planes an adopted table lists, to retire those we no longer serve. */
int read_old_planes(const struct agent *a, struct mrc_plane *old)
{
	__u32 key;
	int n = 0;

	for (key = 0; key < MRC_MAX_PLANES_ABI; key++)
		if (!bpf_map__lookup_elem(a->skel->maps.mrc_planes, &key, sizeof(key),
					  &old[n], sizeof(old[n]), 0) && old[n].ifindex)
			n++;
	return n;
}

/*
 * Where XDP steers port status requests (mrc_global_cfg.agent_port); the
 * UDP port and flags stay as they are. 0 = nobody listens: XDP drops them.
 */
int set_agent_port(const struct agent *a, __u16 port)
{
	const struct bpf_map *m = a->skel->maps.mrc_cfg;
	struct mrc_global_cfg cfg = {};
	__u32 key = 0;
	int err;

	if (bpf_map__lookup_elem(m, &key, sizeof(key), &cfg, sizeof(cfg), 0))
		cfg.udp_port = a->opt.port;
	cfg.agent_port = port;
	cfg.abi_version = MRC_ABI_VERSION;
	err = bpf_map__update_elem(m, &key, sizeof(key), &cfg, sizeof(cfg), BPF_ANY);
	if (err)
		pr_err("writing the agent port to mrc_cfg: %s\n", strerror(-err));
	return err;
}
