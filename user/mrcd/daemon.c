// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd as a daemon: one agent per pin folder (the lock), the pidfile,
 * --daemon (fork, wait until attached, let go of the terminal), the
 * restart in place on SIGHUP (re-exec, same pid, lock and socket), and
 * --detach (stop the running agent, or remove what a dead one left).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include <bpf/bpf.h>

#include "common/pins.h"
#include "mrcd/mrcd.h"

/* ---- the pin folder's lock, the pidfile -------------------------------- */

int resolve_paths(struct agent *a)
{
	char err[PATH_MAX + 64];

	if (agent_paths_resolve(a->opt.pin_dir_arg, &a->paths, err, sizeof(err))) {
		pr_err("--pin-dir: %s\n", err);
		return -1;
	}
	return 0;
}

int check_bpffs(const struct agent *a)
{
	struct statfs fs;

	if (statfs(a->paths.pin_parent, &fs)) {
		pr_err("%s: %s\n", a->paths.pin_parent, strerror(errno));
		return -errno;
	}
	if ((unsigned long)fs.f_type != BPF_FS_MAGIC) {
		pr_err("%s is not a BPF filesystem, so %s cannot hold pins "
		       "(mount one: mount -t bpf bpf /sys/fs/bpf)\n",
		       a->paths.pin_parent, a->paths.pin_dir);
		return -ENOTSUP;
	}
	return 0;
}

/*
 * A folder mrcd keeps what others must not replace in (pins, the lock,
 * the socket): opened without following a symbolic link, it must be a
 * folder owned by root that neither group nor others can write. 0 if so;
 * -1 with the reason, the owner and mode and the fix said; -ENOENT (said
 * nothing) when it does not exist and `missing_ok`.
 */
int check_private_dir(const char *what, const char *path, bool missing_ok)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;
		struct stat lst;

		if (e == ENOENT && missing_ok)
			return -ENOENT;
		if ((e == ELOOP || e == ENOTDIR) && !lstat(path, &lst) &&
		    S_ISLNK(lst.st_mode))
			pr_err("%s %s is a symbolic link: refused (another user could "
			       "point it elsewhere); remove it (rm %s)\n",
			       what, path, path);
		else if (e == ENOTDIR)
			pr_err("%s %s exists and is not a folder: refused; remove it\n",
			       what, path);
		else
			pr_err("%s %s: %s\n", what, path, strerror(e));
		return -1;
	}
	if (fstat(fd, &st)) {
		pr_err("%s %s: %s\n", what, path, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	if (st.st_uid != 0 || st.st_mode & (S_IWGRP | S_IWOTH)) {
		pr_err("%s %s is owned by uid %u with mode %04o: refused (only root "
		       "may write in it, or another user could replace what mrcd "
		       "keeps there); fix: chown root: %s && chmod go-w %s, or "
		       "remove it\n", what, path, (unsigned int)st.st_uid,
		       (unsigned int)(st.st_mode & 07777), path, path);
		return -1;
	}
	return 0;
}

static bool same_file(int fd, const char *path)
{
	struct stat held, now;

	return !fstat(fd, &held) && !stat(path, &now) &&
	       held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

/*
 * One agent per pin folder: an flock on a file in /run (the bpffs holds
 * only BPF objects), named after the bpffs instance and the folder (see
 * agent_ipc.c). 0 when locked, -EWOULDBLOCK when an agent holds it (said
 * only if !quiet), -1 on other errors.
 */
static int try_lock(struct agent *a, bool quiet)
{
	int fd;

	if (mkdir(AGENT_RUN_DIR, 0755) && errno != EEXIST) {
		pr_err("cannot create %s: %s\n", AGENT_RUN_DIR, strerror(errno));
		return -1;
	}
	if (check_private_dir("run folder", AGENT_RUN_DIR, false))
		return -1;
	for (;;) {
		struct stat st;

		fd = open(a->paths.lock_path,
			  O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0) {
			pr_err("cannot open lock %s: %s\n", a->paths.lock_path,
			       strerror(errno));
			return -1;
		}
		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
		    st.st_mode & (S_IWGRP | S_IWOTH)) {
			pr_err("lock %s is not a file only root may write: refused; "
			       "remove it\n", a->paths.lock_path);
			close(fd);
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int e = errno;

			close(fd);
			if (e == EWOULDBLOCK && !quiet)
				pr_err("mrcd is already running for %s (lock %s)\n",
				       a->paths.pin_dir, a->paths.lock_path);
			else if (e != EWOULDBLOCK)
				pr_err("lock %s: %s\n", a->paths.lock_path, strerror(e));
			return e == EWOULDBLOCK ? -EWOULDBLOCK : -1;
		}
		/*
		 * The holder unlinks the file as it exits; if we locked the
		 * unlinked one, the next agent would lock a new file and run
		 * next to us. Only a lock on the file at the path counts.
		 */
		if (same_file(fd, a->paths.lock_path))
			break;
		close(fd);
	}
	if (!ftruncate(fd, 0))
		dprintf(fd, "%d\n", (int)getpid());
	a->lock_fd = fd;
	return 0;
}

/* A re-exec keeps the lock its previous image held: no gap for another agent. */
int take_lock(struct agent *a)
{
	if (a->opt.inherited_lock_fd < 0)
		return try_lock(a, false) ? -1 : 0;
	if (!same_file(a->opt.inherited_lock_fd, a->paths.lock_path)) {
		pr_err("restart: the inherited lock is not %s\n", a->paths.lock_path);
		return -1;
	}
	a->lock_fd = a->opt.inherited_lock_fd;
	return 0;
}

void release_lock(struct agent *a)
{
	if (a->lock_fd < 0)
		return;
	unlink(a->paths.lock_path);
	close(a->lock_fd);
	a->lock_fd = -1;
}

int write_pidfile(struct agent *a)
{
	FILE *f = NULL;
	int fd;

	if (!a->opt.pidfile)
		return 0;
	/* Not through a symbolic link someone left there. */
	fd = open(a->opt.pidfile, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
		  O_CLOEXEC, 0644);
	if (fd >= 0) {
		f = fdopen(fd, "w");
		if (!f)
			close(fd);
	}
	if (!f) {
		pr_err("cannot write pidfile %s: %s\n", a->opt.pidfile, strerror(errno));
		return -1;
	}
	fprintf(f, "%d\n", (int)getpid());
	a->wrote_pidfile = true;
	if (fclose(f)) {
		pr_err("cannot write pidfile %s: %s\n", a->opt.pidfile, strerror(errno));
		return -1;
	}
	return 0;
}

/* ---- daemon ----------------------------------------------------------- */

/*
 * The parent of --daemon: exit 0 once the child reports it is attached,
 * or with the child's own status when it gives up (its message is
 * already on our shared stderr).
 */
static int wait_for_child(pid_t child, int ready_fd)
{
	ssize_t n;
	int status;
	char c;

	do
		n = read(ready_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return 0;
	if (waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	    WEXITSTATUS(status))
		return WEXITSTATUS(status);
	return EXIT_RUNTIME;
}

/* Returns in the child, with the write end of the readiness pipe. */
int daemonize(int *ready_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC)) {
		pr_err("pipe: %s\n", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		pr_err("fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(fds[1]);
		exit(wait_for_child(pid, fds[0]));
	}
	close(fds[0]);
	setsid();
	*ready_fd = fds[1];
	return 0;
}

/* Once ready, a daemon lets go of the terminal (or keeps a log file). */
int detach_stdio(const struct agent *a)
{
	const char *out = a->opt.log_file ? a->opt.log_file : "/dev/null";
	int null_fd, out_fd;

	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	out_fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (null_fd < 0 || out_fd < 0) {
		pr_err("cannot open %s: %s\n", out, strerror(errno));
		return -1;
	}
	dup2(null_fd, STDIN_FILENO);
	dup2(out_fd, STDOUT_FILENO);
	dup2(out_fd, STDERR_FILENO);
	close(null_fd);
	close(out_fd);
	setvbuf(stderr, NULL, _IOLBF, 0);
	return 0;
}

/* ---- restart in place ------------------------------------------------- */

/*
 * The binary to run again: normally /proc/self/exe. When the file we
 * were started from has been replaced (a rebuild or an upgrade), the new
 * one at that path, which is what a restart is usually for.
 */
static const char *restart_binary(char *buf, size_t len)
{
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof(deleted) - 1;
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n > (ssize_t)dl) {
		buf[n] = '\0';
		if (!strcmp(buf + n - dl, deleted)) {
			buf[n - dl] = '\0';
			if (!access(buf, X_OK))
				return buf;
		}
	}
	return "/proc/self/exe";
}

static void set_cloexec(int fd, bool on)
{
	if (fd >= 0)
		fcntl(fd, F_SETFD, on ? FD_CLOEXEC : 0);
}

/*
 * SIGHUP: exec ourselves with the same arguments plus the lock and the
 * listening socket, so the pid, the lock and mrcctl's socket stay. What
 * is attached and pinned stays too; the new image adopts it. Returns only
 * if the exec failed, and then the agent goes on as it was.
 */
void restart(struct agent *a)
{
	char fds[64], exe[PATH_MAX], **argv;
	const char *path;
	int i, n = 0;

	argv = calloc((size_t)a->argc + 2, sizeof(*argv));
	if (!argv) {
		pr_err("restart: out of memory; going on as we are\n");
		return;
	}
	for (i = 0; i < a->argc; i++)
		if (strncmp(a->argv[i], ADOPT_OPT, strlen(ADOPT_OPT)))
			argv[n++] = a->argv[i];
	snprintf(fds, sizeof(fds), ADOPT_OPT "%d,%d", a->lock_fd, a->listen_fd);
	argv[n++] = fds;
	/* Clients in progress see the connection close and may try again. */
	end_streams(a, "mrcd restarts: the stream ends");
	while (a->n_clients)
		client_close(a, a->n_clients - 1);
	path = restart_binary(exe, sizeof(exe));
	pr_info("SIGHUP: restarting %s in place\n", path);
	set_cloexec(a->lock_fd, false);
	set_cloexec(a->listen_fd, false);
	fflush(stdout);
	fflush(stderr);
	execv(path, argv);
	pr_err("restart: cannot run %s: %s; going on as we are\n", path, strerror(errno));
	set_cloexec(a->lock_fd, true);
	set_cloexec(a->listen_fd, true);
	free(argv);
}

/* ---- --detach --------------------------------------------------------- */

/* The pid the running agent wrote into its lock file; 0 if unknown. */
static pid_t lock_holder(const struct agent *a)
{
	char buf[32] = "";
	ssize_t n;
	int fd = open(a->paths.lock_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)atoi(buf);
}

/* SIGTERM to the running agent, then wait until its lock is ours. */
static int stop_running_agent(struct agent *a)
{
	struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };
	long long deadline = now_ms() + DETACH_WAIT_MS;
	pid_t pid = lock_holder(a);
	int rc;

	if (pid <= 0) {
		pr_err("an mrcd holds %s but did not write its pid there\n",
		       a->paths.lock_path);
		return -1;
	}
	if (kill(pid, SIGTERM)) {
		pr_err("cannot stop mrcd (pid %d): %s\n", (int)pid, strerror(errno));
		return -1;
	}
	pr_info("stopping mrcd (pid %d) for %s\n", (int)pid, a->paths.pin_dir);
	while (now_ms() < deadline) {
		rc = try_lock(a, true);
		if (rc != -EWOULDBLOCK)
			return rc ? -1 : 0;
		nanosleep(&pause, NULL);
	}
	pr_err("mrcd (pid %d) did not stop within %d s\n", (int)pid,
	       DETACH_WAIT_MS / 1000);
	return -1;
}

/*
 * What a dead agent left behind: its programs on the planes its table
 * lists, and its pins (the pinned-map list's and the two programs').
 * mrc_planes is opened alone, without the ABI check: a table of the shape
 * we know is read whichever mrcd wrote it; one of another shape is not.
 */
static int remove_leftovers(struct agent *a)
{
	struct mrc_plane plane;
	char err[PATH_MAX + 256];
	__u32 key;
	int fd, rc = 0;

	rc = check_private_dir("pin folder", a->paths.pin_dir, true);
	if (rc == -ENOENT)
		rc = 0;
	else if (rc)
		return -1;
	fd = mrc_pin_open(a->paths.pin_dir, MRC_PIN_PLANES, err, sizeof(err));
	if (fd >= 0) {
		for (key = 0; key < MRC_MAX_PLANES_ABI; key++)
			if (!bpf_map_lookup_elem(fd, &key, &plane) && plane.ifindex &&
			    remove_plane_leftovers(&plane))
				pr_info("%.*s: detached\n", (int)sizeof(plane.name),
					plane.name);
		close(fd);
	} else if (fd != -ENOENT) {
		pr_err("%s; the planes it lists were not detached\n", err);
	}
	unpin_all(a);
	if (found_our_pins(a)) {
		pr_err("some pins in %s could not be removed\n", a->paths.pin_dir);
		rc = -1;
	}
	if (rmdir(a->paths.pin_dir) && errno != ENOENT && errno != ENOTEMPTY)
		pr_err("cannot remove %s: %s\n", a->paths.pin_dir, strerror(errno));
	unlink(a->paths.sock_path);
	return rc;
}

/*
 * mrcd --detach: a running agent is asked to stop (its clean stop removes
 * everything); what a dead one left is removed here. The lock is held
 * throughout, so no agent starts in the middle.
 */
int run_detach(struct agent *a)
{
	int rc;

	if (resolve_paths(a) || check_bpffs(a))
		return EXIT_RUNTIME;
	rc = try_lock(a, true);
	if (rc == -EWOULDBLOCK)
		rc = stop_running_agent(a);
	if (rc)
		return EXIT_RUNTIME;
	rc = remove_leftovers(a);
	release_lock(a);
	return rc ? EXIT_RUNTIME : 0;
}
