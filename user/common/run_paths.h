/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Where an agent's lock and sockets are, derived from its pin folder, so
 * mrcd, mrcctl and libmrc (which finds mrcd's applications' socket here,
 * common/broker.h) cannot disagree on them.
 *
 * One Unix socket per agent, next to its lock file in /run/mrc and named
 * like it after the bpffs instance (device number) that holds the pin
 * folder and the folder itself. Lab hosts each mount their own bpffs at
 * the same path and share /run, so the name must say which bpffs.
 */
#ifndef MRC_COMMON_RUN_PATHS_H
#define MRC_COMMON_RUN_PATHS_H

#include <limits.h>
#include <stddef.h>
#include <sys/un.h>

#define AGENT_PIN_DIR_DEFAULT	"/sys/fs/bpf/mrc"
#define AGENT_RUN_DIR		"/run/mrc"

/* ---- where -------------------------------------------------------------- */

struct agent_paths {
	char pin_dir[PATH_MAX];		/* absolute, no trailing slash */
	char pin_parent[PATH_MAX];	/* must be on a bpffs */
	char lock_path[PATH_MAX];
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
};

/*
 * Make `pin_dir_arg` absolute (its parent must exist) and derive the lock
 * file and socket paths from it. 0, or a negative errno with the reason
 * in err[errlen].
 */
int agent_paths_resolve(const char *pin_dir_arg, struct agent_paths *p,
			char *err, size_t errlen);

#endif /* MRC_COMMON_RUN_PATHS_H */
