/*
 * tracefs: where it is, reading and writing its control files, and undoing
 * what we changed. Every write goes through probes_ftrace_tracefs_write, which
 * saves the file's value the first time it is changed, so that stopping a
 * session (probes_ftrace_tracefs_restore) leaves the kernel as we found it. The
 * value saved is the one that writes back to the same state: the selected
 * clock of trace_clock ("[local] global ..." -> "local"), the effective
 * size of buffer_size_kb ("7 (expanded: 1408)" -> "1408"), the first
 * character of an enable file.
 *
 * A tracefs we mounted stays mounted on close, as Perfetto leaves it: another
 * process may have found it there and be using it.
 *
 * The saved values also go to a record file (probes_ftrace_tracefs_record_path),
 * rewritten whenever a setting is first changed and removed once restored,
 * so that a traced_probes killed mid-session can be undone by the next one
 * (probes_ftrace_tracefs_recover). Record layout, one line each:
 *
 *     pid <owner pid>
 *     <rel>\t<value>          oldest first; written back newest first
 *
 * The record may sit in /tmp, so it is created exclusively (mode 0600,
 * never through a symlink) and renamed into place, and recovery obeys only
 * a regular file owned by our euid that others cannot write, and only the
 * keys we ever save (buffer_size_kb, trace_clock, tracing_on, event enable
 * files).
 *
 * probes_ftrace_tracefs_reset is the last resort when there is no record: it
 * cannot know what the previous state was and puts tracefs into its quiet
 * defaults instead, as Perfetto's HardResetFtraceState.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ftrace_int.h"

#define TRACEFS_FILE_MAX ((size_t)4 << 20)

static const char *const k_roots[] = {"/sys/kernel/tracing/", "/sys/kernel/debug/tracing/"};

/* True if dir holds a usable tracefs (has a tracing_on file). */
static bool is_tracefs(const char *dir)
{
	char p[FTRACE_PATH_MAX + 16];
	snprintf(p, sizeof p, "%stracing_on", dir);
	return access(p, F_OK) == 0;
}

static int set_root(struct ftrace_tracefs *fs, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 0 || n + 2 > sizeof fs->root)
		return tb_err_set(&fs->err, -ENAMETOOLONG, "tracefs path '%s' is too long", dir);
	memcpy(fs->root, dir, n + 1);
	if (fs->root[n - 1] != '/')
		fs->root[n] = '/', fs->root[n + 1] = 0;
	return 0;
}

void probes_ftrace_tracefs_record_path(const char *root, char *out, size_t n)
{
	struct stat st;
	if (root) {
		size_t k = strlen(root);
		while (k > 1 && root[k - 1] == '/')
			k--;
		snprintf(out, n, "%.*s.tb-saved", (int)k, root);
	} else if (stat("/run", &st) == 0 && S_ISDIR(st.st_mode) && access("/run", W_OK) == 0) {
		snprintf(out, n, "/run/tracebox-ftrace.saved");
	} else {
		snprintf(out, n, "/tmp/tracebox-ftrace.saved");
	}
}

int probes_ftrace_tracefs_open(struct ftrace_tracefs *fs, const char *root, bool allow_mount)
{
	memset(fs, 0, sizeof *fs);
	fs->lock_fd = -1;
	probes_ftrace_tracefs_record_path(root, fs->record, sizeof fs->record);
	if (root) {
		int rc = set_root(fs, root);
		if (rc == 0 && !is_tracefs(fs->root)) {
			fs->root[0] = 0;
			rc = tb_err_set(&fs->err, -ENOENT, "no tracefs at '%s'", root);
		}
		return rc;
	}
	for (size_t i = 0; i < TB_ARRAY_SIZE(k_roots); i++)
		if (is_tracefs(k_roots[i]))
			return set_root(fs, k_roots[i]);
	if (!allow_mount)
		return tb_err_set(&fs->err, -ENOENT, "tracefs is not mounted at '%s'", k_roots[0]);
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) < 0)
		return tb_err_errno(&fs->err, -errno,
		                    "cannot mount tracefs at '/sys/kernel/tracing'");
	fs->mounted_by_us = true;
	return set_root(fs, k_roots[0]);
}

static int raw_write(struct ftrace_tracefs *fs, const char *rel, const char *value);

/* Rewrite the record file from fs->saved (remove it when empty). Best
 * effort: failing to write it only loses crash recovery (logged once). */
static void write_record(struct ftrace_tracefs *fs)
{
	char tmp[FTRACE_PATH_MAX + 8];
	FILE *f;
	if (!fs->record[0])
		return;
	if (!fs->saved.len) {
		if (fs->record_written)
			unlink(fs->record);
		fs->record_written = false;
		return;
	}
	/* A fresh file of ours, never one another user planted (or a symlink)
	 * in /tmp: created exclusively, mode 0600, then renamed into place. */
	int fd = tb_create_beside(fs->record, 0600, tmp, sizeof tmp, NULL);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (fd >= 0 && !f)
		close(fd), unlink(tmp);
	if (f) {
		fprintf(f, "pid %ld\n", (long)getpid());
		for (size_t i = 0; i < fs->saved.len; i++)
			fprintf(f, "%s\t%s\n", fs->saved.data[i].rel, fs->saved.data[i].value);
		if (fclose(f) == 0 && rename(tmp, fs->record) == 0) {
			fs->record_written = true;
			return;
		}
		unlink(tmp);
	}
	log_warn("probes", "cannot write '%s': %s; a crash would leave tracefs changed", fs->record,
	         strerror(errno));
	fs->record[0] = 0;
}

/* The only files probes_ftrace_tracefs_write saves: a record naming anything else
 * was not written by us and is not obeyed. */
static bool recoverable(const char *rel)
{
	const char *g, *e;
	if (strcmp(rel, "buffer_size_kb") == 0 || strcmp(rel, "trace_clock") == 0 ||
	    strcmp(rel, "tracing_on") == 0)
		return true;
	if (strncmp(rel, "events/", 7) != 0 || strstr(rel, ".."))
		return false;
	g = rel + 7;
	e = strchr(g, '/');
	if (!e || e == g)
		return false;
	if (strcmp(e, "/enable") == 0)
		return true; /* events/<group>/enable */
	g = e + 1;
	e = strchr(g, '/');
	return e && e != g && strcmp(e, "/enable") == 0; /* events/<group>/<event>/enable */
}

/* Read the record, trusting only a regular file (not a symlink) owned by
 * our effective uid that no one else may write. Anything else is refused
 * and left alone. */
static int read_record(struct ftrace_tracefs *fs, char **text, size_t *len)
{
	struct stat st;
	ssize_t n;
	int fd = tb_open_regular(fs->record, O_NOFOLLOW, &st, NULL);
	if (fd < 0)
		return fd == -ENOENT ? fd
		                     : tb_err_errno(&fs->err, fd, "cannot read '%s'", fs->record);
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		tb_close(&fd);
		return tb_err_set(&fs->err, -EPERM,
		                  "record '%s' is not owned by us or writable by others; ignored",
		                  fs->record);
	}
	if (st.st_size > (1 << 20)) {
		tb_close(&fd);
		return tb_err_set(&fs->err, -EFBIG, "record '%s' is too large", fs->record);
	}
	*text = tb_malloc((size_t)st.st_size + 1);
	n = tb_read_all(fd, *text, (size_t)st.st_size);
	tb_close(&fd);
	if (n < 0) {
		tb_free(*text);
		*text = NULL;
		return tb_err_errno(&fs->err, (int)n, "cannot read '%s'", fs->record);
	}
	(*text)[n] = 0;
	*len = (size_t)n;
	return 0;
}

int probes_ftrace_tracefs_recover(struct ftrace_tracefs *fs, size_t *restored)
{
	char *text = NULL, *line, *next;
	size_t len;
	long pid;
	int rc, first = 0;
	VEC(char *) lines = VEC_INIT;

	*restored = 0;
	if (!fs->record[0])
		return 0;
	rc = read_record(fs, &text, &len);
	if (rc < 0)
		return rc == -ENOENT ? 0 : rc;
	if (sscanf(text, "pid %ld", &pid) != 1) {
		tb_free(text);
		unlink(fs->record);
		return tb_err_set(&fs->err, -EINVAL, "bad record '%s' (removed)", fs->record);
	}
	if (pid != (long)getpid() && pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM)) {
		tb_free(text);
		return tb_err_set(&fs->err, -EBUSY, "tracefs is in use by traced_probes pid %ld",
		                  pid);
	}
	for (line = text; *line; line = next + 1) {
		next = strchr(line, '\n');
		if (next)
			*next = 0;
		if (line != text) /* the pid line */
			vec_push(&lines, line);
		if (!next)
			break;
	}
	while (lines.len) {
		char *l = vec_pop(&lines), *tab = strchr(l, '\t');
		if (!tab || !tab[1])
			continue;
		*tab = 0;
		if (!recoverable(l))
			continue;
		rc = raw_write(fs, l, tab + 1);
		if (rc < 0 && first == 0)
			first = rc;
		else if (rc == 0)
			(*restored)++;
	}
	vec_release(&lines);
	tb_free(text);
	unlink(fs->record);
	return first;
}

static void free_saved(struct ftrace_tracefs *fs)
{
	for (size_t i = 0; i < fs->saved.len; i++) {
		tb_free(fs->saved.data[i].rel);
		tb_free(fs->saved.data[i].value);
	}
	vec_release(&fs->saved);
}

void probes_ftrace_tracefs_close(struct ftrace_tracefs *fs)
{
	if (!fs->root[0]) {
		free_saved(fs);
		return;
	}
	(void)probes_ftrace_tracefs_restore(fs);
	free_saved(fs);
	if (fs->top[0] && rmdir(fs->root) != 0)
		log_warn("probes", "ftrace: cannot remove the instance '%s': %s", fs->root,
		         strerror(errno));
	fs->top[0] = 0;
	if (fs->locked)
		close(fs->lock_fd); /* drops the flock */
	fs->locked = false;
	fs->lock_fd = -1;
	fs->mounted_by_us = false;
	fs->root[0] = 0;
}

#define INSTANCE_PREFIX "tracebox-"

int probes_ftrace_tracefs_claim(struct ftrace_tracefs *fs)
{
	char lock[FTRACE_PATH_MAX + 8], inst[FTRACE_PATH_MAX + 64];
	int fd = -1;

	if (fs->record[0]) {
		snprintf(lock, sizeof lock, "%s.lock", fs->record);
		/* Never through a symlink another user planted in /tmp. */
		fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
			fs->lock_fd = fd;
			fs->locked = true;
			return 0;
		}
		if (fd >= 0)
			close(fd);
	}
	/* Another tracebox traced_probes has the top level (or we cannot
	 * tell): a private instance of our own. */
	snprintf(inst, sizeof inst, "%sinstances/" INSTANCE_PREFIX "%d", fs->root, (int)getpid());
	if (mkdir(inst, 0700) != 0 && errno != EEXIST)
		return tb_err_errno(&fs->err, -errno, "cannot create the ftrace instance '%s'",
		                    inst);
	memcpy(fs->top, fs->root, sizeof fs->top);
	if (set_root(fs, inst) < 0 || !is_tracefs(fs->root)) {
		int e = errno;
		rmdir(inst);
		set_root(fs, fs->top);
		fs->top[0] = 0;
		return tb_err_errno(&fs->err, -(e ? e : EINVAL), "'%s' is not an ftrace instance",
		                    inst);
	}
	fs->record[0] = 0; /* the instance goes with us: nothing to recover */
	return 1;
}

int probes_ftrace_tracefs_remove_stale_instances(struct ftrace_tracefs *fs)
{
	char dir[FTRACE_PATH_MAX + 16], p[FTRACE_PATH_MAX * 2 + 32];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(dir, sizeof dir, "%sinstances", fs->root);
	if (!(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		const char *num = e->d_name + strlen(INSTANCE_PREFIX);
		char *end;
		long pid;
		if (strncmp(e->d_name, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)) != 0)
			continue;
		pid = strtol(num, &end, 10);
		if (!*num || *end || pid <= 0 || kill((pid_t)pid, 0) == 0 || errno == EPERM)
			continue;
		snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
		if (rmdir(p) == 0)
			n++;
	}
	closedir(d);
	return n;
}

static int path_of(struct ftrace_tracefs *fs, const char *rel, char *out, size_t n)
{
	int k = snprintf(out, n, "%s%s", fs->root, rel);
	if (k < 0 || (size_t)k >= n)
		return tb_err_set(&fs->err, -ENAMETOOLONG, "tracefs path '%s' is too long", rel);
	return 0;
}

int probes_ftrace_tracefs_read(struct ftrace_tracefs *fs, const char *rel, char **buf, size_t *len)
{
	char p[FTRACE_PATH_MAX * 2];
	int rc = path_of(fs, rel, p, sizeof p);
	if (rc < 0)
		return rc;
	return tb_read_file(p, buf, len, TRACEFS_FILE_MAX, &fs->err);
}

/* Write value to the file without saving anything. O_TRUNC so that writing
 * "" to `trace` clears the buffer. */
static int raw_write(struct ftrace_tracefs *fs, const char *rel, const char *value)
{
	char p[FTRACE_PATH_MAX * 2];
	int fd, rc = path_of(fs, rel, p, sizeof p);
	if (rc < 0)
		return rc;
	fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return tb_err_errno(&fs->err, -errno, "cannot open '%s'", p);
	rc = tb_write_all(fd, value, strlen(value));
	close(fd);
	if (rc < 0)
		return tb_err_errno(&fs->err, rc, "cannot write '%s' to '%s'", value, p);
	return 0;
}

/* The value that writes the current state of rel back (see the top). */
static char *restorable_value(const char *rel, const char *cur)
{
	const char *b, *e;
	size_t n = strlen(rel), k;
	if (strcmp(rel, "trace_clock") == 0 && (b = strchr(cur, '[')) && (e = strchr(b, ']')))
		return tb_strndup(b + 1, (size_t)(e - b - 1));
	if (n >= 14 && strcmp(rel + n - 14, "buffer_size_kb") == 0 &&
	    (b = strstr(cur, "expanded: ")))
		cur = b + 10;
	k = strlen(rel);
	n = strcspn(cur, " \t\n)");
	if (n >= 1 && k >= 6 && strcmp(rel + k - 6, "enable") == 0)
		n = 1; /* "0*" (soft-disabled) writes back as "0" */
	return tb_strndup(cur, n);
}

int probes_ftrace_tracefs_write(struct ftrace_tracefs *fs, const char *rel, const char *value)
{
	bool saved = false;
	for (size_t i = 0; i < fs->saved.len && !saved; i++)
		saved = strcmp(fs->saved.data[i].rel, rel) == 0;
	if (!saved) {
		char *cur = NULL;
		size_t len;
		int rc = probes_ftrace_tracefs_read(fs, rel, &cur, &len);
		if (rc < 0)
			return rc;
		struct ftrace_saved_setting s = {tb_strdup(rel), restorable_value(rel, cur)};
		tb_free(cur);
		/* "X" (mixed per-CPU sizes, mixed group state) cannot be written back. */
		if (s.value[0] == 'X' || s.value[0] == 0) {
			tb_free(s.rel);
			tb_free(s.value);
		} else {
			vec_push(&fs->saved, s);
			write_record(fs);
		}
	}
	return raw_write(fs, rel, value);
}

/* Names are path components: no '/', no "..", not empty. */
static bool safe_name(const char *s)
{
	return s[0] && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int probes_ftrace_tracefs_enable_event(struct ftrace_tracefs *fs, const char *group,
                                       const char *name, bool on)
{
	char rel[FTRACE_PATH_MAX];
	int k;
	if (!safe_name(group) || !safe_name(name))
		return tb_err_set(&fs->err, -EINVAL, "bad event name '%s/%s'", group, name);
	if (strcmp(name, "*") == 0)
		k = snprintf(rel, sizeof rel, "events/%s/enable", group);
	else
		k = snprintf(rel, sizeof rel, "events/%s/%s/enable", group, name);
	if (k < 0 || (size_t)k >= sizeof rel)
		return tb_err_set(&fs->err, -ENAMETOOLONG, "event name '%s/%s' is too long", group,
		                  name);
	int rc = probes_ftrace_tracefs_write(fs, rel, on ? "1" : "0");
	/* ftrace's own events (ftrace/print, bputs, ...) have no enable file:
	 * the kernel records them whenever tracing is on. */
	if (rc == -ENOENT && strcmp(group, "ftrace") == 0 && strcmp(name, "*") != 0) {
		tb_err_clear(&fs->err);
		return 0;
	}
	return rc;
}

int probes_ftrace_tracefs_set_buffer_size_kb(struct ftrace_tracefs *fs, uint32_t kb)
{
	char v[16];
	snprintf(v, sizeof v, "%u", kb ? kb : 1);
	return probes_ftrace_tracefs_write(fs, "buffer_size_kb", v);
}

int probes_ftrace_tracefs_get_clock(struct ftrace_tracefs *fs, char *out, size_t n)
{
	char *buf = NULL, *v;
	size_t len;
	int rc = probes_ftrace_tracefs_read(fs, "trace_clock", &buf, &len);
	if (rc < 0)
		return rc;
	v = restorable_value("trace_clock", buf);
	snprintf(out, n, "%s", v);
	tb_free(v);
	tb_free(buf);
	return 0;
}

int probes_ftrace_tracefs_set_clock(struct ftrace_tracefs *fs, const char *clock)
{
	char *buf = NULL, *p;
	size_t len, n = strlen(clock);
	bool found = false;
	int rc = probes_ftrace_tracefs_read(fs, "trace_clock", &buf, &len);
	if (rc < 0)
		return rc;
	for (p = buf; *p && !found;) {
		size_t k;
		p += strspn(p, " \t\n[]");
		k = strcspn(p, " \t\n[]");
		found = k == n && memcmp(p, clock, n) == 0;
		p += k;
	}
	tb_free(buf);
	if (!found)
		return tb_err_set(&fs->err, -EINVAL, "the kernel has no trace clock '%s'", clock);
	return probes_ftrace_tracefs_write(fs, "trace_clock", clock);
}

int probes_ftrace_tracefs_set_tracing_on(struct ftrace_tracefs *fs, bool on)
{
	return probes_ftrace_tracefs_write(fs, "tracing_on", on ? "1" : "0");
}

int probes_ftrace_tracefs_list_events(struct ftrace_tracefs *fs, ftrace_event_name_fn fn, void *ctx)
{
	char *buf = NULL, *p, *nl, *colon;
	size_t len;
	char top[FTRACE_PATH_MAX + 32];
	int rc;
	/* An instance has no available_events of its own: the top level's. */
	if (fs->top[0]) {
		snprintf(top, sizeof top, "%savailable_events", fs->top);
		rc = tb_read_file(top, &buf, &len, TRACEFS_FILE_MAX, &fs->err);
	} else {
		rc = probes_ftrace_tracefs_read(fs, "available_events", &buf, &len);
	}
	if (rc < 0)
		return rc;
	for (p = buf; *p && rc == 0; p = nl ? nl + 1 : p + strlen(p)) {
		nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		colon = strchr(p, ':');
		if (!colon)
			continue;
		*colon = 0;
		rc = fn(ctx, p, colon + 1);
	}
	tb_free(buf);
	return rc;
}

int probes_ftrace_tracefs_num_cpus(struct ftrace_tracefs *fs)
{
	char p[FTRACE_PATH_MAX * 2];
	int n = 0;
	for (;;) {
		struct stat sb;
		snprintf(p, sizeof p, "%sper_cpu/cpu%d", fs->root, n);
		if (stat(p, &sb) < 0 || !S_ISDIR(sb.st_mode))
			return n;
		n++;
	}
}

int probes_ftrace_tracefs_open_pipe_raw(struct ftrace_tracefs *fs, int cpu)
{
	char p[FTRACE_PATH_MAX * 2];
	int fd;
	snprintf(p, sizeof p, "%sper_cpu/cpu%d/trace_pipe_raw", fs->root, cpu);
	fd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return tb_err_errno(&fs->err, -errno, "cannot open '%s'", p);
	return fd;
}

int probes_ftrace_tracefs_restore(struct ftrace_tracefs *fs)
{
	int first = 0;
	while (fs->saved.len) {
		struct ftrace_saved_setting s = vec_pop(&fs->saved);
		int rc = raw_write(fs, s.rel, s.value);
		if (rc < 0 && first == 0)
			first = rc;
		tb_free(s.rel);
		tb_free(s.value);
	}
	write_record(fs); /* removes it */
	return first;
}

int probes_ftrace_tracefs_reset(struct ftrace_tracefs *fs)
{
	int rc = raw_write(fs, "tracing_on", "0");
	int rc2 = raw_write(fs, "buffer_size_kb", "4");
	/* Absent on some kernels: not checked, as Perfetto does not. */
	(void)raw_write(fs, "events/enable", "0");
	(void)raw_write(fs, "events/raw_syscalls/filter", "0");
	(void)raw_write(fs, "current_tracer", "nop");
	int rc3 = raw_write(fs, "trace", "");
	return rc < 0 ? rc : rc2 < 0 ? rc2 : rc3;
}

/* ---- per-CPU stats ------------------------------------------------------- */

static uint64_t num_after(const char *line, const char *key, bool *ok)
{
	size_t k = strlen(key);
	uint64_t v = 0;
	const char *p;
	*ok = strncmp(line, key, k) == 0;
	if (!*ok)
		return 0;
	for (p = line + k; *p == ' ' || *p == '\t'; p++)
		;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

/* "  5311.737388" -> seconds. */
static double secs_after(const char *line, const char *key, bool *ok)
{
	const char *p = strchr(line, '.');
	uint64_t whole = num_after(line, key, ok), frac = 0, scale = 1;
	if (!*ok)
		return 0;
	if (p)
		for (p++; *p >= '0' && *p <= '9' && scale < 1000000000ull; p++)
			frac = frac * 10 + (uint64_t)(*p - '0'), scale *= 10;
	return (double)whole + (double)frac / (double)scale;
}

void probes_ftrace_parse_cpu_stats(const char *text, size_t len, struct ftrace_cpu_stats *st)
{
	char line[128];
	const char *p = text, *end = text + len;
	uint32_t cpu = st->cpu;
	memset(st, 0, sizeof *st);
	st->cpu = cpu;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		bool ok;
		uint64_t v;
		double d;
		if (n >= sizeof line)
			n = sizeof line - 1;
		memcpy(line, p, n);
		line[n] = 0;
		p = nl ? nl + 1 : end;
		if ((v = num_after(line, "entries:", &ok)), ok)
			st->entries = v;
		else if ((v = num_after(line, "overrun:", &ok)), ok)
			st->overrun = v;
		else if ((v = num_after(line, "commit overrun:", &ok)), ok)
			st->commit_overrun = v;
		else if ((v = num_after(line, "bytes:", &ok)), ok)
			st->bytes_read = v;
		else if ((v = num_after(line, "dropped events:", &ok)), ok)
			st->dropped_events = v;
		else if ((v = num_after(line, "read events:", &ok)), ok)
			st->read_events = v, st->has_read_events = true;
		else if ((d = secs_after(line, "oldest event ts:", &ok)), ok)
			st->oldest_event_ts = d;
		else if ((d = secs_after(line, "now ts:", &ok)), ok)
			st->now_ts = d;
	}
}

int probes_ftrace_tracefs_read_cpu_stats(struct ftrace_tracefs *fs, int cpu,
                                         struct ftrace_cpu_stats *st)
{
	char rel[64], *buf = NULL;
	size_t len;
	int rc;
	snprintf(rel, sizeof rel, "per_cpu/cpu%d/stats", cpu);
	rc = probes_ftrace_tracefs_read(fs, rel, &buf, &len);
	if (rc < 0)
		return rc;
	st->cpu = (uint32_t)cpu;
	probes_ftrace_parse_cpu_stats(buf, len, st);
	tb_free(buf);
	return 0;
}

/* ---- loading formats from tracefs --------------------------------------- */

int probes_ftrace_table_load_header(struct ftrace_table *t, struct ftrace_tracefs *fs)
{
	char *buf = NULL;
	size_t len;
	int rc = probes_ftrace_tracefs_read(fs, "events/header_page", &buf, &len);
	if (rc < 0)
		return rc;
	rc = probes_ftrace_parse_header_page(buf, len, &t->layout, &fs->err);
	tb_free(buf);
	return rc;
}

int probes_ftrace_table_load_event(struct ftrace_table *t, struct ftrace_tracefs *fs,
                                   const char *group, const char *name)
{
	char rel[FTRACE_PATH_MAX], *buf = NULL;
	size_t len;
	int rc, k;
	if (!safe_name(group) || !safe_name(name))
		return tb_err_set(&fs->err, -EINVAL, "bad event name '%s/%s'", group, name);
	k = snprintf(rel, sizeof rel, "events/%s/%s/format", group, name);
	if (k < 0 || (size_t)k >= sizeof rel)
		return tb_err_set(&fs->err, -ENAMETOOLONG, "event name '%s/%s' is too long", group,
		                  name);
	rc = probes_ftrace_tracefs_read(fs, rel, &buf, &len);
	if (rc < 0)
		return rc;
	rc = probes_ftrace_table_add_format(t, group, buf, len, &fs->err);
	tb_free(buf);
	return rc;
}
