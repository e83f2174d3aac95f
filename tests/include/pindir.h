/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * A private bpffs directory for a test's pinned maps, so a test never
 * touches (or collides with) a running mrcd's /sys/fs/bpf/mrc.
 */
#ifndef MRC_TEST_PINDIR_H
#define MRC_TEST_PINDIR_H

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Unpin (remove) every map file under dir, then dir; empty it after. */
static inline void pin_dir_remove(char *dir, size_t size)
{
	char path[size + 260];
	struct dirent *e;
	DIR *d;

	if (!dir[0])
		return;
	d = opendir(dir);
	if (d) {
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if (unlink(path))
				fprintf(stderr, "unlink %s: %s\n", path, strerror(errno));
		}
		closedir(d);
	}
	if (rmdir(dir) && errno != ENOENT)
		fprintf(stderr, "rmdir %s: %s\n", dir, strerror(errno));
	dir[0] = 0;
}

#endif /* MRC_TEST_PINDIR_H */
