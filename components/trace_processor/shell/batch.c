/*
 * query --batch: one query over many traces, the map step of a fleet
 * analysis. The result is one table with a leading `trace` column, in the
 * order the traces were given whatever the number of workers; a trace that
 * fails (unreadable, corrupt, too big for --max-memory, a query error, other
 * columns than the first trace's) is reported and skipped.
 *
 *   parent                                 worker k (forked once, N of them)
 *   ------                                 ----------------------------------
 *   traces[0..n), next = 0                 tp0 = tp_new() (once), loop:
 *   idle worker k  ── u32 index i ──▶        read i (EOF: exit)
 *                                            fork; the child, from tp0:
 *                                              stderr  -> TMP/i.err
 *                                              load traces[i], run the SQL,
 *                                              last result set -> TMP/i.out
 *                                              _exit (no tp_free)
 *                  ◀── {u32 i, i32 rc} ──    reply: 0, 1 failed, 128 + signal
 *   rc 1: trace i fails with the last line of TMP/i.err; 128 + N: the
 *   child was killed (the address-space cap: an allocation failed and it
 *   aborted). EOF instead of a reply: worker k itself died; the same, and
 *   a new worker takes k's place.
 *   Whenever traces [emitted, j) are done, they are appended to the output
 *   (TMP/i.out's header once, then its rows) and to --errors, in order.
 *
 * Workers are forked once (no exec); each keeps an empty trace processor
 * and forks a child per trace from it, so a trace costs a fork and its
 * load, not tp_new (its SQL schema: most of a small trace's cost) nor
 * tp_free; the SQL and the SQL packages are read once by the parent. Each
 * worker's address space (and its children's) is capped by RLIMIT_AS
 * (--max-memory MB; default the machine's RAM divided by N). TMP/i.out is "trace,col..." then rows
 * in CSV or TSV (format below); the parent compares the header lines byte for byte.
 *
 * CSV: Perfetto's values (query.c): quoted names and strings ('"' doubled),
 * integers, doubles with %f, NULL as "[NULL]". TSV: unquoted; tab, newline,
 * carriage return and backslash in strings as \t \n \r \\; NULL empty.
 * --errors FILE is CSV either way: "trace","error", a row per failed trace.
 */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sqlite3.h"

#define MAX_JOBS 256
#define COPY_CHUNK 65536

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

enum batch_format { BATCH_CSV, BATCH_TSV };

enum trace_state { T_PENDING, T_RUNNING, T_OK, T_FAILED };

struct batch_worker {
	pid_t pid;
	int fd;    /* parent's end of the socketpair; -1: none */
	long task; /* the trace it holds, or -1 */
};

/* An output file: written under a temporary name, renamed when complete. */
struct batch_sink {
	FILE *f;
	const char *path; /* NULL: stdout */
	char *tmp;
};

struct batch {
	const struct shell_opts *o;
	struct shell_config sc;
	char *sql;
	char *list; /* --batch-list text; traces point into it */
	VEC(const char *) traces;
	enum batch_format format;
	unsigned jobs;
	unsigned long max_mb;
	char tmpdir[PATH_MAX];

	unsigned char *state; /* enum trace_state per trace */
	char **errors;        /* per failed trace, tb_malloc'd */
	struct batch_worker *w;
	size_t next, emitted, nfailed, nok;
	char *header; /* the first successful trace's header line */
	struct batch_sink out, errs;
};

/* ---- argument parsing -------------------------------------------------------- */

static int parse_count(const char *flag, const char *v, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long n = strtoul(v, &end, 10);
	if (errno || end == v || *end || *v == '-' || n == 0 || n > max) {
		tp_shell_error("query: %s: '%s' is not a number from 1 to %lu", flag, v, max);
		return -1;
	}
	*out = n;
	return 0;
}

/* --batch-list: one trace per line; blank lines and lines starting with '#'
 * are skipped, a trailing '\r' dropped. */
static int read_list(struct batch *b, const char *path)
{
	if (!(b->list = tp_shell_read_file(path, NULL))) {
		tp_shell_error("query: cannot read batch list '%s': %s", path, strerror(errno));
		return -1;
	}
	for (char *p = b->list; *p;) {
		char *nl = strchr(p, '\n');
		char *next = nl ? nl + 1 : p + strlen(p);
		if (nl)
			*nl = '\0';
		size_t len = strlen(p);
		if (len && p[len - 1] == '\r')
			p[--len] = '\0';
		if (len && p[0] != '#')
			vec_push(&b->traces, p);
		p = next;
	}
	return 0;
}

static int parse_args(struct batch *b)
{
	const struct shell_opts *o = b->o;
	unsigned long n;
	if (o->remote) {
		tp_shell_error("query: --batch loads its traces itself; it cannot use --remote");
		return -1;
	}
	if (o->interactive || o->perf_file || o->structured_query_id) {
		tp_shell_error(
		    "query: --batch does not take -i, --perf-file or structured queries");
		return -1;
	}
	if (!o->query_file) {
		tp_shell_error("query: --batch needs the SQL in a file: -f QUERY.sql");
		return -1;
	}
	if (!o->format || strcmp(o->format, "csv") == 0) {
		b->format = BATCH_CSV;
	} else if (strcmp(o->format, "tsv") == 0) {
		b->format = BATCH_TSV;
	} else {
		tp_shell_error("query: --batch writes csv or tsv, not '%s'", o->format);
		return -1;
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	b->jobs = cpus > 0 ? (unsigned)(cpus < MAX_JOBS ? cpus : MAX_JOBS) : 1;
	if (o->jobs) {
		if (parse_count("--jobs", o->jobs, MAX_JOBS, &n) < 0)
			return -1;
		b->jobs = (unsigned)n;
	}
	if (o->max_memory) {
		if (parse_count("--max-memory", o->max_memory, 1ul << 30, &n) < 0)
			return -1;
		b->max_mb = n;
	} else {
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		unsigned long long ram = pages > 0 && psz > 0 ? (unsigned long long)pages * psz : 0;
		b->max_mb = ram ? (unsigned long)(ram / b->jobs >> 20) : 0;
	}
	for (size_t i = 0; i < o->pos.len; i++)
		vec_push(&b->traces, o->pos.data[i]);
	if (o->batch_list && read_list(b, o->batch_list) < 0)
		return -1;
	if (b->traces.len == 0) {
		tp_shell_error("query: --batch needs traces: TRACE... or --batch-list FILE");
		return -1;
	}
	for (size_t i = 0; i < b->traces.len; i++) {
		if (strcmp(b->traces.data[i], "-") == 0) {
			tp_shell_error("query: --batch reads traces from files or URLs, not stdin");
			return -1;
		}
	}
	if (b->jobs > b->traces.len)
		b->jobs = (unsigned)b->traces.len;
	return 0;
}

/* ---- values ------------------------------------------------------------------- */

static void put_csv_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void put_tsv_string(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '\t':
			fputs("\\t", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static void put_string(FILE *f, enum batch_format fmt, const char *s)
{
	if (fmt == BATCH_CSV)
		put_csv_string(f, s);
	else
		put_tsv_string(f, s);
}

static void put_value(FILE *f, enum batch_format fmt, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		fprintf(f, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		fprintf(f, "%f", sqlite3_column_double(st, i));
		break;
	case SQLITE_TEXT:
		put_string(f, fmt, (const char *)sqlite3_column_text(st, i));
		break;
	case SQLITE_BLOB:
		put_string(f, fmt, "<raw bytes>");
		break;
	default:
		if (fmt == BATCH_CSV)
			fputs("\"[NULL]\"", f);
	}
}

/* ---- a worker ------------------------------------------------------------------ */

/* Is [p, end) only white space, semicolons and comments? */
static bool only_comments(const char *p)
{
	while (*p) {
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == ';') {
			p++;
		} else if (p[0] == '-' && p[1] == '-') {
			p += strcspn(p, "\n");
		} else if (p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e ? e + 2 : p + strlen(p);
		} else {
			return false;
		}
	}
	return true;
}

/* Print a one-line error (newlines of SQLite's message folded). */
static void worker_error(const char *what, const char *msg)
{
	fprintf(stderr, "trace_processor_shell: %s", what);
	for (const char *p = msg; *p; p++)
		fputc(*p == '\n' || *p == '\r' ? ' ' : *p, stderr);
	fputc('\n', stderr);
}

/* Run every statement of b->sql; the last one's result set goes to out
 * with the trace column first. Returns 0 or -1 after printing. */
static int run_sql(struct batch *b, struct tp *tp, const char *trace, FILE *out)
{
	const char *tail = b->sql;
	bool wrote = false;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		char err[1024];
		if (tp_prepare(tp, tail, &st, &tail, err, sizeof err) != SQLITE_OK) {
			worker_error("query failed: ", err);
			return -1;
		}
		if (!st)
			continue;
		bool last = only_comments(tail);
		int ncol = sqlite3_column_count(st);
		if (last && ncol == 0) {
			sqlite3_finalize(st);
			worker_error("query failed: ", "the last statement returns no columns");
			return -1;
		}
		if (last) {
			put_string(out, b->format, "trace");
			for (int i = 0; i < ncol; i++) {
				fputc(b->format == BATCH_CSV ? ',' : '\t', out);
				put_string(out, b->format, sqlite3_column_name(st, i));
			}
			fputc('\n', out);
			wrote = true;
		}
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (!last)
				continue;
			put_string(out, b->format, trace);
			for (int i = 0; i < ncol; i++) {
				fputc(b->format == BATCH_CSV ? ',' : '\t', out);
				put_value(out, b->format, st, i);
			}
			fputc('\n', out);
		}
		if (rc != SQLITE_DONE) {
			worker_error("query failed: ", tp_sql_errmsg(tp_db(tp)));
			sqlite3_finalize(st);
			return -1;
		}
		sqlite3_finalize(st);
	}
	if (!wrote) {
		worker_error("query failed: ", "the last statement returns no columns");
		return -1;
	}
	return 0;
}

/* In a child of the worker: load trace i into tp (fresh from tp_new) and
 * run the SQL, the result to TMP/i.out, messages to TMP/i.err. */
static int child_task(struct batch *b, struct tp *tp, uint32_t i)
{
	char path[PATH_MAX + 32];
	const char *trace = b->traces.data[i];
	FILE *out = NULL;
	int rc = -1;
	snprintf(path, sizeof path, "%s/%u.err", b->tmpdir, i);
	int efd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (efd >= 0) {
		dup2(efd, 2);
		close(efd);
	}
	snprintf(path, sizeof path, "%s/%u.out", b->tmpdir, i);
	if (!(out = fopen(path, "we"))) {
		tp_shell_error("cannot create '%s': %s", path, strerror(errno));
		goto out;
	}
	if (tp_shell_load_into(b->o, tp, trace, NULL) < 0 || run_sql(b, tp, trace, out) < 0)
		goto out;
	rc = 0;
out:
	if (out && fclose(out) != 0 && rc == 0) {
		tp_shell_error("cannot write '%s': %s", path, strerror(errno));
		rc = -1;
	}
	fflush(stderr);
	return rc;
}

/* Trace i in a fork of this worker, which holds an empty trace processor
 * (*tp0) made once: the child starts from it and exits without freeing,
 * so a trace costs neither tp_new (its SQL schema) nor tp_free. A child
 * killed by the memory cap leaves the worker alive. Returns the status the
 * parent gets: 0 answered, 1 failed (TMP/i.err says why), 128 + N killed
 * by signal N. */
static int32_t worker_task(struct batch *b, struct tp **tp0, uint32_t i)
{
	if (!*tp0)
		*tp0 = tp_new(&b->sc.cfg);
	pid_t worker = getpid();
	pid_t pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != worker)
			_exit(1);
		_exit(child_task(b, *tp0, i) == 0 ? 0 : 1);
	}
	if (pid < 0) {
		/* No fork: do it here, spending the empty processor. */
		int rc = child_task(b, *tp0, i);
		tp_free(*tp0);
		*tp0 = NULL;
		return rc == 0 ? 0 : 1;
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

static TB_NORETURN void worker_main(struct batch *b, int fd, pid_t parent)
{
	struct tp *tp0 = NULL;
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* Die with the parent (and, below, each child with its worker). */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
		_exit(1);
	struct rlimit core = {0, 0};
	setrlimit(RLIMIT_CORE, &core);
	if (b->max_mb && !UNDER_ASAN) {
		rlim_t lim = (rlim_t)b->max_mb << 20;
		struct rlimit as = {lim, lim};
		setrlimit(RLIMIT_AS, &as);
	}
	for (;;) {
		uint32_t i;
		ssize_t r = read(fd, &i, sizeof i);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != sizeof i || i >= b->traces.len)
			_exit(0);
		int32_t reply[2] = {(int32_t)i, worker_task(b, &tp0, i)};
		if (send(fd, reply, sizeof reply, MSG_NOSIGNAL) != sizeof reply)
			_exit(1);
	}
}

/* ---- the parent ------------------------------------------------------------------ */

/* SIGINT or SIGTERM: stop handing out traces, leave no files behind. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static int spawn(struct batch *b, unsigned k)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		tp_shell_error("query: socketpair: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		tp_shell_error("query: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		for (unsigned j = 0; j < b->jobs; j++)
			if (b->w[j].fd >= 0)
				close(b->w[j].fd);
		close(sv[0]);
		worker_main(b, sv[1], parent);
	}
	close(sv[1]);
	b->w[k] = (struct batch_worker){.pid = pid, .fd = sv[0], .task = -1};
	return 0;
}

/* The error of a failed trace: the last line a worker wrote to TMP/i.err
 * (without our program prefix), or what. */
static char *failure_text(struct batch *b, size_t i, const char *what)
{
	char path[PATH_MAX + 32], buf[4096];
	snprintf(path, sizeof path, "%s/%zu.err", b->tmpdir, i);
	ssize_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		struct stat stt;
		off_t at = fstat(fd, &stt) == 0 && stt.st_size > (off_t)sizeof buf - 1
		               ? stt.st_size - (off_t)sizeof buf + 1
		               : 0;
		n = pread(fd, buf, sizeof buf - 1, at);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
	char *end = buf + strlen(buf);
	while (end > buf && (end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	char *line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	static const char *const prefixes[] = {"trace_processor_shell: ", "tracebox: "};
	for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++)
		if (strncmp(line, prefixes[k], strlen(prefixes[k])) == 0)
			line += strlen(prefixes[k]);
	if (!what)
		return tb_strdup(*line ? line : "failed (no message)");
	size_t len = strlen(line) + strlen(what) + 8;
	char *s = tb_malloc(len);
	snprintf(s, len, "%s%s%s", *line ? line : "", *line ? " " : "", what);
	return s;
}

static void killed_text(struct batch *b, int sig, char *buf, size_t n)
{
	snprintf(buf, n, "(killed by signal %d; --max-memory %lu MB)", sig, b->max_mb);
}

/* A worker's socket said EOF: it died holding trace w->task. */
static void worker_died(struct batch *b, struct batch_worker *w)
{
	int status = 0;
	char what[160];
	waitpid(w->pid, &status, 0);
	if (WIFSIGNALED(status))
		killed_text(b, WTERMSIG(status), what, sizeof what);
	else
		snprintf(what, sizeof what, "(worker exited with status %d)",
		         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (w->task >= 0) {
		b->state[w->task] = T_FAILED;
		b->errors[w->task] = failure_text(b, (size_t)w->task, what);
	}
	close(w->fd);
	*w = (struct batch_worker){.pid = -1, .fd = -1, .task = -1};
}

static int sink_open(struct batch_sink *s, const char *path)
{
	s->path = path;
	if (!path) {
		s->f = stdout;
		return 0;
	}
	size_t len = strlen(path) + 32;
	s->tmp = tb_malloc(len);
	snprintf(s->tmp, len, "%s.tmp%ld", path, (long)getpid());
	if (!(s->f = fopen(s->tmp, "we"))) {
		tp_shell_error("query: cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Close s; keep the file (rename it into place) only if ok. */
static int sink_close(struct batch_sink *s, bool ok)
{
	int rc = 0;
	if (!s->f)
		goto out;
	if (!s->path) {
		if (fflush(stdout) != 0 || ferror(stdout)) {
			tp_shell_error("query: cannot write the output: %s", strerror(errno));
			rc = -1;
		}
		goto out;
	}
	if ((fflush(s->f) != 0 || ferror(s->f) || fsync(fileno(s->f)) != 0) && ok) {
		tp_shell_error("query: cannot write '%s': %s", s->path, strerror(errno));
		rc = -1;
	}
	if (fclose(s->f) != 0 && ok && rc == 0) {
		tp_shell_error("query: cannot write '%s': %s", s->path, strerror(errno));
		rc = -1;
	}
	if (ok && rc == 0 && rename(s->tmp, s->path) != 0) {
		tp_shell_error("query: cannot rename to '%s': %s", s->path, strerror(errno));
		rc = -1;
	}
	if (!ok || rc < 0)
		unlink(s->tmp);
out:
	s->f = NULL;
	tb_free(s->tmp);
	s->tmp = NULL;
	return rc;
}

/* The next line of f with its '\n', or NULL at EOF. */
static char *read_line(FILE *f)
{
	size_t len = 0, cap = 256;
	char *s = tb_malloc(cap);
	int c;
	while ((c = getc(f)) != EOF) {
		if (len + 2 > cap)
			s = tb_realloc(s, cap *= 2);
		s[len++] = (char)c;
		if (c == '\n')
			break;
	}
	if (len == 0) {
		tb_free(s);
		return NULL;
	}
	s[len] = '\0';
	return s;
}

/* Append trace i's result file to the output. Returns 0, 1 if the trace
 * fails (its columns differ), -1 if the output cannot be written. */
static int append_result(struct batch *b, size_t i)
{
	char path[PATH_MAX + 32];
	snprintf(path, sizeof path, "%s/%zu.out", b->tmpdir, i);
	FILE *in = fopen(path, "re");
	char *line = NULL;
	int rc = 1;
	if (!in || !(line = read_line(in))) {
		b->errors[i] = tb_strdup("its result file is missing");
		goto out;
	}
	if (!b->header) {
		b->header = tb_strdup(line);
		fputs(line, b->out.f);
	} else if (strcmp(b->header, line) != 0) {
		size_t n = strlen(line);
		if (n && line[n - 1] == '\n')
			line[n - 1] = '\0';
		size_t len = n + 64;
		b->errors[i] = tb_malloc(len);
		snprintf(b->errors[i], len, "its columns differ from the first trace's: %s", line);
		goto out;
	}
	char buf[COPY_CHUNK];
	size_t r;
	while ((r = fread(buf, 1, sizeof buf, in)) > 0)
		fwrite(buf, 1, r, b->out.f);
	rc = ferror(b->out.f) ? -1 : 0;
out:
	tb_free(line);
	if (in)
		fclose(in);
	return rc;
}

static void report_error(struct batch *b, size_t i)
{
	const char *trace = b->traces.data[i];
	fprintf(stderr, "trace_processor_shell: query: '%s': %s\n", trace, b->errors[i]);
	if (b->errs.f) {
		put_csv_string(b->errs.f, trace);
		fputc(',', b->errs.f);
		put_csv_string(b->errs.f, b->errors[i]);
		fputc('\n', b->errs.f);
	}
}

/* Emit every finished trace from b->emitted on, in order. Returns -1 when
 * the output cannot be written. */
static int emit_ready(struct batch *b)
{
	char path[PATH_MAX + 32];
	while (b->emitted < b->traces.len &&
	       (b->state[b->emitted] == T_OK || b->state[b->emitted] == T_FAILED)) {
		size_t i = b->emitted++;
		if (b->state[i] == T_OK) {
			int rc = append_result(b, i);
			if (rc < 0) {
				tp_shell_error("query: cannot write the output: %s",
				               strerror(errno));
				return -1;
			}
			if (rc > 0)
				b->state[i] = T_FAILED;
		}
		if (b->state[i] == T_FAILED) {
			b->nfailed++;
			report_error(b, i);
		} else {
			b->nok++;
		}
		snprintf(path, sizeof path, "%s/%zu.out", b->tmpdir, i);
		unlink(path);
		snprintf(path, sizeof path, "%s/%zu.err", b->tmpdir, i);
		unlink(path);
	}
	return 0;
}

/* Hand out traces until every one is done. Returns 0, or -1 after printing. */
static int run_workers(struct batch *b)
{
	size_t n = b->traces.len;
	struct pollfd pfd[MAX_JOBS];
	unsigned idx[MAX_JOBS];
	for (unsigned k = 0; k < b->jobs; k++)
		if (spawn(b, k) < 0)
			return -1;
	while (b->emitted < n) {
		if (interrupted) {
			tp_shell_error("query: interrupted");
			return -1;
		}
		for (unsigned k = 0; k < b->jobs; k++) {
			struct batch_worker *w = &b->w[k];
			if (w->fd < 0 && b->next < n && spawn(b, k) < 0)
				return -1;
			if (w->fd < 0 || w->task >= 0 || b->next >= n)
				continue;
			uint32_t i = (uint32_t)b->next++;
			w->task = (long)i;
			b->state[i] = T_RUNNING;
			if (send(w->fd, &i, sizeof i, MSG_NOSIGNAL) != sizeof i) {
				/* It died idle: the trace goes to its successor. */
				w->task = -1;
				b->state[i] = T_PENDING;
				b->next--;
				worker_died(b, w);
			}
		}
		nfds_t np = 0;
		for (unsigned k = 0; k < b->jobs; k++) {
			if (b->w[k].fd >= 0 && b->w[k].task >= 0) {
				pfd[np] = (struct pollfd){.fd = b->w[k].fd, .events = POLLIN};
				idx[np++] = k;
			}
		}
		if (np == 0 && b->emitted < n && b->next >= n) {
			tp_shell_error("query: internal error: no worker holds a pending trace");
			return -1;
		}
		if (np && poll(pfd, np, -1) < 0 && errno != EINTR) {
			tp_shell_error("query: poll: %s", strerror(errno));
			return -1;
		}
		for (nfds_t j = 0; j < np; j++) {
			struct batch_worker *w = &b->w[idx[j]];
			if (!pfd[j].revents)
				continue;
			int32_t reply[2];
			ssize_t r = recv(w->fd, reply, sizeof reply, MSG_WAITALL);
			if (r != sizeof reply || reply[0] != w->task) {
				worker_died(b, w);
				continue;
			}
			b->state[w->task] = reply[1] == 0 ? T_OK : T_FAILED;
			char what[160];
			if (reply[1] >= 128)
				killed_text(b, reply[1] - 128, what, sizeof what);
			if (reply[1] != 0)
				b->errors[w->task] =
				    failure_text(b, (size_t)w->task, reply[1] >= 128 ? what : NULL);
			w->task = -1;
		}
		if (emit_ready(b) < 0)
			return -1;
	}
	return 0;
}

static void stop_workers(struct batch *b)
{
	for (unsigned k = 0; k < b->jobs; k++) {
		if (b->w[k].fd >= 0)
			close(b->w[k].fd);
		b->w[k].fd = -1;
	}
	for (unsigned k = 0; k < b->jobs; k++) {
		if (b->w[k].pid > 0) {
			if (b->w[k].task >= 0)
				kill(b->w[k].pid, SIGKILL);
			waitpid(b->w[k].pid, NULL, 0);
		}
		b->w[k].pid = -1;
	}
}

static void remove_tmpdir(struct batch *b)
{
	char path[PATH_MAX + 32];
	if (!b->tmpdir[0])
		return;
	for (size_t i = 0; i < b->traces.len; i++) {
		snprintf(path, sizeof path, "%s/%zu.out", b->tmpdir, i);
		unlink(path);
		snprintf(path, sizeof path, "%s/%zu.err", b->tmpdir, i);
		unlink(path);
	}
	rmdir(b->tmpdir);
}

int tp_shell_run_batch(struct shell_opts *o)
{
	struct batch b = {.o = o};
	int status = 1;
	bool ok = false;
	if (parse_args(&b) < 0)
		goto out;
	if (!(b.sql = tp_shell_read_file(o->query_file, NULL))) {
		tp_shell_error("query: unable to read file '%s': %s", o->query_file,
		               strerror(errno));
		goto out;
	}
	if (tp_shell_config_build(o, &b.sc) < 0)
		goto out;
	if (sink_open(&b.out, o->query_output) < 0)
		goto out;
	if (o->errors_file && sink_open(&b.errs, o->errors_file) < 0)
		goto out;
	if (b.errs.f)
		fputs("\"trace\",\"error\"\n", b.errs.f);
	const char *tmp = getenv("TMPDIR");
	snprintf(b.tmpdir, sizeof b.tmpdir, "%s/tb-batch.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(b.tmpdir)) {
		tp_shell_error("query: cannot create a folder in '%s': %s",
		               tmp && *tmp ? tmp : "/tmp", strerror(errno));
		b.tmpdir[0] = '\0';
		goto out;
	}
	if (UNDER_ASAN && o->max_memory)
		tp_shell_error("query: --max-memory is not enforced under AddressSanitizer");
	size_t n = b.traces.len;
	b.state = tb_calloc(n, 1);
	b.errors = tb_calloc(n, sizeof *b.errors);
	b.w = tb_calloc(b.jobs, sizeof *b.w);
	for (unsigned k = 0; k < b.jobs; k++)
		b.w[k] = (struct batch_worker){.pid = -1, .fd = -1, .task = -1};
	struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	int rc = run_workers(&b);
	stop_workers(&b);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (interrupted)
		status = 128 + interrupted;
	ok = rc == 0;
	if (ok)
		status = b.nfailed == 0 ? 0 : b.nok == 0 ? 1 : 2;
out:
	/* No file for a run where every trace failed. */
	if (sink_close(&b.out, ok && b.nok > 0) < 0)
		status = 1;
	if (sink_close(&b.errs, ok) < 0)
		status = 1;
	remove_tmpdir(&b);
	for (size_t i = 0; b.errors && i < b.traces.len; i++)
		tb_free(b.errors[i]);
	tb_free(b.errors);
	tb_free(b.state);
	tb_free(b.w);
	tb_free(b.header);
	tb_free(b.sql);
	tb_free(b.list);
	vec_release(&b.traces);
	tp_shell_config_release(&b.sc);
	return status;
}
