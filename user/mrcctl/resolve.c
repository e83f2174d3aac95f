// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Name look-ups mrcctl does before it parses (mrcctl.h): mrcd takes
 * numeric addresses only.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "agent/probe_net.h"
#include "mrcctl/mrcctl.h"

/* `host` as a numeric address in a new string; NULL after a message. */
static char *resolve_host(const char *host)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM };
	struct addrinfo *res = NULL;
	char buf[INET6_ADDRSTRLEN];
	uint8_t a[16];
	const void *in;
	int rc;

	if (!addr_parse(host, a))
		return strdup(host);
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc || !res) {
		mrcctl_log("probe", "cannot resolve '%s': %s", host,
			   rc ? gai_strerror(rc) : "no address");
		return NULL;
	}
	in = res->ai_family == AF_INET ?
		(const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr :
		(const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr;
	inet_ntop(res->ai_family, in, buf, sizeof(buf));
	freeaddrinfo(res);
	return strdup(buf);
}

int resolve_names(int argc, char **argv)
{
	char *numeric, *joined;
	int i;

	if (argc < 1 || strcmp(argv[0], "probe") || cmd_wants_help(argc, argv))
		return 0;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--to") && i + 1 < argc) {
			numeric = resolve_host(argv[++i]);
			if (!numeric)
				return AGENT_EXIT_FAIL;
			argv[i] = numeric;	/* lives as long as mrcctl */
		} else if (!strncmp(argv[i], "--to=", 5)) {
			numeric = resolve_host(argv[i] + 5);
			if (!numeric || asprintf(&joined, "--to=%s", numeric) < 0)
				return AGENT_EXIT_FAIL;
			free(numeric);
			argv[i] = joined;
		}
	}
	return 0;
}
