/*
 * llvm.c: source file and line of file addresses from llvm-symbolizer,
 * when one is installed (optional: without it frames get names only).
 *
 * One child per symbolization run, started on the first question and
 * asked one address at a time (Perfetto's local symbolizer talks to its
 * llvm-symbolizer the same way):
 *
 *   argv:    llvm-symbolizer --functions=none --no-inlines
 *   stdin:   "/path/to/elf" 0x<file address>\n
 *   stdout:  /path/to/source.c:<line>:<column>\n
 *            \n                          (a blank line ends each answer)
 *            ??:0:0 when the address has no line information
 *
 * The child's stdin and stdout are one end of a socketpair, so writing to
 * a child that died fails with EPIPE (MSG_NOSIGNAL) instead of raising
 * SIGPIPE in the caller. Each answer must arrive within SYM_LLVM_TIMEOUT_MS:
 * on a timeout, EOF, error or an unreadable answer the child is killed and
 * the rest of the run goes without lines. stderr goes to /dev/null.
 *
 * The executable is the first `llvm-symbolizer` on PATH, else the
 * `llvm-symbolizer-<N>` with the highest N (Debian's llvm-<N> packages).
 */
#include "symbolize_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SYM_LLVM_TIMEOUT_MS 5000 /* per answer */
#define SYM_LLVM_NAME "llvm-symbolizer"

extern char **environ;

/* The highest-versioned llvm-symbolizer-<N> in dir into best (version in
 * *best_ver), when higher than *best_ver. */
static void find_versioned(const char *dir, char *best, size_t cap, long *best_ver)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t nl = strlen(SYM_LLVM_NAME);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end, path[PATH_MAX];
		long v;
		if (strncmp(de->d_name, SYM_LLVM_NAME "-", nl + 1) != 0)
			continue;
		v = strtol(de->d_name + nl + 1, &end, 10);
		if (end == de->d_name + nl + 1 || *end || v <= *best_ver)
			continue;
		if (snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path ||
		    access(path, X_OK) != 0)
			continue;
		*best_ver = v;
		snprintf(best, cap, "%s", path);
	}
	closedir(d);
}

/* The next non-empty ':'-separated folder of *list (cut in place), or NULL
 * at the end; *list moves past it. Empty entries are skipped. */
static char *next_dir(char **list)
{
	char *dir = *list, *colon;
	while (dir && *dir == ':')
		dir++;
	if (!dir || !*dir)
		return *list = NULL;
	colon = strchr(dir, ':');
	if (colon)
		*colon++ = '\0';
	*list = colon;
	return dir;
}

bool tp_sym_llvm_locate(char *out, size_t cap)
{
	const char *env = getenv("PATH");
	char *path, *dir, *rest;
	long ver = -1;
	bool found = false;

	if (!env || !*env)
		return false;
	path = rest = tb_strdup(env);
	while (!found && (dir = next_dir(&rest))) {
		if (snprintf(out, cap, "%s/%s", dir, SYM_LLVM_NAME) < (int)cap &&
		    access(out, X_OK) == 0)
			found = true;
	}
	tb_free(path);
	if (found)
		return true;
	path = rest = tb_strdup(env);
	while ((dir = next_dir(&rest)))
		find_versioned(dir, out, cap, &ver);
	tb_free(path);
	return ver >= 0;
}

void tp_sym_llvm_init(struct sym_llvm *l, const char *exe)
{
	memset(l, 0, sizeof *l);
	l->fd = -1;
	l->pid = -1;
	if (exe && *exe) {
		snprintf(l->exe, sizeof l->exe, "%s", exe);
		l->enabled = true;
	} else if (!exe) {
		l->enabled = tp_sym_llvm_locate(l->exe, sizeof l->exe);
	}
}

static void stop_child(struct sym_llvm *l, bool kill_it)
{
	if (l->fd >= 0)
		tb_close(&l->fd);
	if (l->pid > 0) {
		int st;
		/* EOF on stdin ends it; give it a moment, then insist */
		for (int i = 0; !kill_it && i < 100; i++) {
			if (waitpid(l->pid, &st, WNOHANG) == l->pid) {
				l->pid = -1;
				return;
			}
			nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
		}
		kill(l->pid, SIGKILL);
		while (waitpid(l->pid, &st, 0) < 0 && errno == EINTR)
			;
		l->pid = -1;
	}
}

void tp_sym_llvm_release(struct sym_llvm *l)
{
	stop_child(l, false);
	l->enabled = false;
}

/* Give up on the child for the rest of the run. */
static void sym_llvm_fail(struct sym_llvm *l)
{
	stop_child(l, true);
	l->enabled = false;
}

static bool start_child(struct sym_llvm *l)
{
	posix_spawn_file_actions_t fa;
	char *argv[] = {l->exe, "--functions=none", "--no-inlines", NULL};
	int sv[2];
	pid_t pid;
	int rc;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return false;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 0);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, l->exe, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	if (rc != 0) {
		close(sv[0]);
		return false;
	}
	l->fd = sv[0];
	l->pid = pid;
	l->len = 0;
	return true;
}

/* One answer: the lines up to the first blank one, into l->buf (NUL
 * separated lines are left as read). Returns its length, or -1. */
static ssize_t read_answer(struct sym_llvm *l)
{
	int64_t deadline = tb_now_ns(CLOCK_MONOTONIC) + (int64_t)SYM_LLVM_TIMEOUT_MS * 1000000;

	for (;;) {
		/* an answer ends with "\n\n" (or is a lone "\n") */
		for (size_t i = 0; i < l->len; i++)
			if (l->buf[i] == '\n' && (i == 0 || l->buf[i - 1] == '\n'))
				return (ssize_t)i + 1;
		if (l->len == sizeof l->buf)
			return -1;
		int64_t left = (deadline - tb_now_ns(CLOCK_MONOTONIC)) / 1000000;
		struct pollfd p = {l->fd, POLLIN, 0};
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return -1;
		ssize_t n = read(l->fd, l->buf + l->len, sizeof l->buf - l->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		l->len += (size_t)n;
	}
}

bool tp_sym_llvm_parse(const char *ans, size_t n, char *file, size_t cap, uint32_t *line)
{
	const char *nl = memchr(ans, '\n', n), *end = nl ? nl : ans + n, *col = NULL, *ln = NULL;
	unsigned long v = 0;

	/* "FILE:LINE:COL" on the first line, FILE may hold ':' */
	for (const char *p = end; p > ans; p--) {
		if (p[-1] != ':')
			continue;
		if (!col) {
			col = p - 1;
		} else {
			ln = p - 1;
			break;
		}
	}
	if (!ln || ln == ans || col - ln < 2)
		return false;
	for (const char *p = ln + 1; p < col; p++) {
		if (*p < '0' || *p > '9' || v > UINT32_MAX / 10)
			return false;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	size_t flen = (size_t)(ln - ans);
	if (v == 0 || v > UINT32_MAX || flen >= cap || (flen == 2 && memcmp(ans, "??", 2) == 0) ||
	    memchr(ans, 0, flen))
		return false;
	memcpy(file, ans, flen);
	file[flen] = 0;
	*line = (uint32_t)v;
	return true;
}

int tp_sym_llvm_lookup(struct sym_llvm *l, const char *elf, uint64_t addr, char *file, size_t cap,
                       uint32_t *line)
{
	char q[PATH_MAX + 64];
	int n;
	ssize_t got;

	if (!l->enabled || strpbrk(elf, "\"\n"))
		return -1;
	if (l->pid < 0 && !start_child(l)) {
		l->enabled = false;
		return -1;
	}
	n = snprintf(q, sizeof q, "\"%s\" 0x%llx\n", elf, (unsigned long long)addr);
	if (n >= (int)sizeof q)
		return -1;
	for (int off = 0; off < n;) {
		ssize_t w = send(l->fd, q + off, (size_t)(n - off), MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			sym_llvm_fail(l);
			return -1;
		}
		off += (int)w;
	}
	if ((got = read_answer(l)) < 0) {
		sym_llvm_fail(l);
		return -1;
	}
	bool ok = tp_sym_llvm_parse(l->buf, (size_t)got, file, cap, line);
	memmove(l->buf, l->buf + got, l->len - (size_t)got);
	l->len -= (size_t)got;
	return ok ? 0 : -1;
}
