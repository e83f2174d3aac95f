// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* An agent's paths from its pin folder (run_paths.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/errmsg.h"
#include "common/run_paths.h"

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/*
 * The folder itself need not exist yet (mrcd creates it), its parent
 * must: that is where the bpffs is, and realpath() of the parent gives
 * every spelling of one folder the same name.
 */
static int resolve_pin_dir(const char *arg, struct agent_paths *p,
			   char *err, size_t errlen)
{
	char buf[PATH_MAX], *slash, *base;
	const char *parent;
	size_t len;

	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		return fail(-ENAMETOOLONG, err, errlen, "'%s': path too long", arg);
	len = strlen(buf);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	slash = strrchr(buf, '/');
	base = slash ? slash + 1 : buf;
	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return fail(-EINVAL, err, errlen,
			    "'%s' does not name a folder to create", arg);
	if (slash) {
		*slash = '\0';
		parent = slash == buf ? "/" : buf;
	} else {
		parent = ".";
	}
	if (!realpath(parent, p->pin_parent))
		return fail(-errno, err, errlen, "%s: %s", parent, strerror(errno));
	if (snprintf(p->pin_dir, sizeof(p->pin_dir), "%s/%s",
		     strcmp(p->pin_parent, "/") ? p->pin_parent : "", base) >=
	    (int)sizeof(p->pin_dir))
		return fail(-ENAMETOOLONG, err, errlen, "'%s': path too long", arg);
	return 0;
}

int agent_paths_resolve(const char *pin_dir_arg, struct agent_paths *p,
			char *err, size_t errlen)
{
	unsigned long long hash;
	struct stat st;
	int rc;

	memset(p, 0, sizeof(*p));
	rc = resolve_pin_dir(pin_dir_arg, p, err, errlen);
	if (rc)
		return rc;
	if (stat(p->pin_parent, &st))
		return fail(-errno, err, errlen, "%s: %s", p->pin_parent,
			    strerror(errno));
	/*
	 * The bpffs instance (its device) and the folder: lab hosts each
	 * have their own bpffs at the same path, and each may run an agent.
	 */
	hash = (unsigned long long)fnv1a(p->pin_dir);
	snprintf(p->lock_path, sizeof(p->lock_path), "%s/mrcd-%x.%x-%016llx.lock",
		 AGENT_RUN_DIR, major(st.st_dev), minor(st.st_dev), hash);
	snprintf(p->sock_path, sizeof(p->sock_path), "%s/mrcd-%x.%x-%016llx.sock",
		 AGENT_RUN_DIR, major(st.st_dev), minor(st.st_dev), hash);
	return 0;
}

