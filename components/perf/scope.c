/*
 * Which processes' samples traced_perf keeps: PerfEventConfig.Scope, with
 * Perfetto's rules and order (perf_producer's target filter):
 *
 *   1. exclude_cmdline matches            -> out
 *   2. exclude_pid                        -> out
 *   3. target_cmdline matches             -> in
 *   4. target_pid                         -> in
 *   5. no target, no additional_cmdline_count, no process_shard_count -> in
 *   6. process sharding: pid % shard_count == chosen_shard -> in, else out
 *   7. the cmdline is one of the first additional_cmdline_count distinct
 *      cmdlines seen (remembered for the whole session)     -> in
 *   8. otherwise                          -> out
 *
 * A cmdline is the first 511 bytes of /proc/PID/cmdline. A pattern starting
 * with '/' is matched against argv[0], any other against argv[0]'s
 * basename (fnmatch, no escapes). Kernel threads (empty cmdline) and
 * processes already gone have no cmdline: only pid rules apply to them.
 * The decision is cached per pid (the cache is reset past
 * PERF_MAX_SCOPE_PIDS pids; remembered additional cmdlines stay).
 */
#include "perf_int.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PERF_CMDLINE_READ 511    /* bytes of /proc/PID/cmdline, as Perfetto */
#define PERF_MAX_SCOPE_PIDS 4096 /* cached decisions before the cache is reset */

enum { SCOPE_IN = 1, SCOPE_OUT = 2 };

static ssize_t proc_cmdline(int32_t pid, char *buf, size_t cap)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, cap);
	tb_close(&fd);
	return n;
}

void perf_scope_init(struct perf_scope *s)
{
	memset(s, 0, sizeof *s);
	hmap_init(&s->cache);
	s->read_cmdline = proc_cmdline;
}

static void free_strs(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tb_free(v[i]);
}

void perf_scope_release(struct perf_scope *s)
{
	free_strs(s->target_cmds.data, s->target_cmds.len);
	free_strs(s->exclude_cmds.data, s->exclude_cmds.len);
	for (size_t i = 0; i < s->additional.len; i++)
		tb_free(s->additional.data[i].bytes);
	vec_release(&s->target_pids);
	vec_release(&s->exclude_pids);
	vec_release(&s->target_cmds);
	vec_release(&s->exclude_cmds);
	vec_release(&s->additional);
	hmap_release(&s->cache);
}

void perf_scope_add(struct perf_scope *s, const int32_t *tp, size_t ntp, char *const *tc,
                    size_t ntc, const int32_t *ep, size_t nep, char *const *ec, size_t nec)
{
	for (size_t i = 0; i < ntp; i++)
		vec_push(&s->target_pids, tp[i]);
	for (size_t i = 0; i < ntc; i++)
		vec_push(&s->target_cmds, tb_strdup(tc[i]));
	for (size_t i = 0; i < nep; i++)
		vec_push(&s->exclude_pids, ep[i]);
	for (size_t i = 0; i < nec; i++)
		vec_push(&s->exclude_cmds, tb_strdup(ec[i]));
}

bool perf_scope_is_everything(const struct perf_scope *s)
{
	return !s->target_pids.len && !s->target_cmds.len && !s->exclude_pids.len &&
	       !s->exclude_cmds.len && !s->additional_cmdline_count && !s->shard_count;
}

static bool has_pid(const int32_t *v, size_t n, int32_t pid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == pid)
			return true;
	return false;
}

static bool cmd_matches(char *const *pats, size_t n, const char *argv0, const char *base)
{
	for (size_t i = 0; i < n; i++)
		if (fnmatch(pats[i], pats[i][0] == '/' ? argv0 : base, FNM_NOESCAPE) == 0)
			return true;
	return false;
}

/* Step 7: keep the first additional_cmdline_count distinct cmdlines. */
static bool additional_keep(struct perf_scope *s, const char *cmd, size_t len)
{
	for (size_t i = 0; i < s->additional.len; i++)
		if (s->additional.data[i].len == len &&
		    memcmp(s->additional.data[i].bytes, cmd, len) == 0)
			return true;
	if (s->additional.len >= s->additional_cmdline_count)
		return false;
	vec_push(&s->additional, ((struct perf_scope_cmd){tb_memdup(cmd, len), len}));
	return true;
}

static bool scope_decide(struct perf_scope *s, int32_t pid)
{
	char cmd[PERF_CMDLINE_READ + 1];
	const char *base = cmd, *slash;
	ssize_t len = s->read_cmdline(pid, cmd, PERF_CMDLINE_READ);
	bool have_cmd = len > 0;

	if (have_cmd) {
		cmd[len] = 0; /* argv[0] ends at the first NUL, or here */
		if ((slash = strrchr(cmd, '/')))
			base = slash + 1;
	}
	if (have_cmd && cmd_matches(s->exclude_cmds.data, s->exclude_cmds.len, cmd, base))
		return false;
	if (has_pid(s->exclude_pids.data, s->exclude_pids.len, pid))
		return false;
	if (have_cmd && cmd_matches(s->target_cmds.data, s->target_cmds.len, cmd, base))
		return true;
	if (has_pid(s->target_pids.data, s->target_pids.len, pid))
		return true;
	if (!s->target_cmds.len && !s->target_pids.len && !s->additional_cmdline_count &&
	    !s->shard_count)
		return true;
	if (s->shard_count)
		return (uint32_t)pid % s->shard_count == s->chosen_shard;
	return have_cmd && additional_keep(s, cmd, (size_t)len);
}

bool perf_scope_keep(struct perf_scope *s, int32_t pid)
{
	uint64_t v;

	if (perf_scope_is_everything(s))
		return true;
	if (hmap_get(&s->cache, (uint64_t)(uint32_t)pid, &v))
		return v == SCOPE_IN;
	if (s->cache.len >= PERF_MAX_SCOPE_PIDS)
		hmap_clear(&s->cache);
	v = scope_decide(s, pid) ? SCOPE_IN : SCOPE_OUT;
	hmap_put(&s->cache, (uint64_t)(uint32_t)pid, v);
	return v == SCOPE_IN;
}
