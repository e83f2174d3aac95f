/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The reader of mrcd's configuration file (/etc/mrc/mrcd.conf): one
 * `key = value` a line. It knows the syntax only; what the keys mean is
 * the caller's (mrcd maps each key to its long option of the same name).
 *
 * Syntax: blank lines and lines whose first non-blank is '#' are skipped;
 * every other line is KEY = VALUE, KEY of [a-z0-9-], VALUE everything
 * after the '=' with the blanks around it removed (never empty). A key
 * may appear once. Lines are at most CONF_LINE_MAX characters.
 */
#ifndef AGENT_CONF_FILE_H
#define AGENT_CONF_FILE_H

#include <stddef.h>

#define CONF_LINE_MAX	1024
#define CONF_KEYS_MAX	64
#define CONF_KEY_MAX	63

struct conf_entry {
	const char *key;
	const char *value;	/* valid during the callback only */
	unsigned int line;
};

/* Returns 0 to go on; anything else stops the reading and is returned. */
typedef int (*conf_entry_fn)(const struct conf_entry *e, void *arg);

/*
 * Read PATH and call fn for every entry, in file order. Refuses a file
 * that group or others may write (it decides what runs as root). Returns
 * 0; the callback's nonzero result; or a negative errno with "PATH:LINE:
 * what is wrong" (or "PATH: ...") in err.
 */
int conf_file_read(const char *path, conf_entry_fn fn, void *arg,
		   char *err, size_t err_len);

/*
 * A list value as the command line takes it: items separated by commas
 * and/or blanks ("p1 p2", "p1, p2") joined by single commas into out.
 * Returns 0, or -E2BIG when out is too small.
 */
int conf_list_to_commas(const char *value, char *out, size_t out_len);

#endif
