/*
 * The commands that load a trace and run SQL on it: query (CSV output, or
 * another --format of query_out.c),
 * interactive, and the two Perfetto has that tracebox recognises but cannot
 * run, metrics (v1) and summarize.
 *
 * Query results print as Perfetto's CSV: quoted header names, quoted
 * strings, decimal integers, doubles with %f, NULL as "[NULL]", one blank
 * line between result sets; a single column named suppress_query_output
 * prints nothing. An SQL error stops the run and prints Perfetto's
 * traceback of it on stderr (the line and column in the whole query text,
 * tp_sql_traceback).
 */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../rpc/rpc.h"
#include "sqlite3.h"

/* Ctrl-C interrupts the running statement (as Perfetto's shell), not the
 * process: the statement fails with "interrupted". */
static sqlite3 *interrupt_db;

static void on_sigint(int sig)
{
	(void)sig;
	if (interrupt_db)
		sqlite3_interrupt(interrupt_db);
}

static void catch_sigint(struct tp *tp)
{
	interrupt_db = tp_db(tp);
	struct sigaction sa = {.sa_handler = on_sigint};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
}

static void release_sigint(void)
{
	signal(SIGINT, SIG_DFL);
	interrupt_db = NULL;
}

bool tp_shell_is_comment_only(const char *p, const char *end)
{
	while (p < end) {
		if (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == ';') {
			p++;
		} else if (p + 1 < end && p[0] == '-' && p[1] == '-') {
			while (p < end && *p != '\n')
				p++;
		} else if (p + 1 < end && p[0] == '/' && p[1] == '*') {
			const char *e = strstr(p + 2, "*/");
			p = e && e + 2 <= end ? e + 2 : end;
		} else {
			return false;
		}
	}
	return true;
}

/* ---- running statements ------------------------------------------------------- */

int tp_shell_run_queries_csv(struct tp *tp, const char *sql, FILE *out)
{
	struct tp_shell_out *o = tp_shell_out_new(TP_SHELL_FMT_CSV, out, NULL, NULL);
	int rc = tp_shell_run_queries(tp, sql, o);
	tp_shell_out_free(o);
	return rc;
}

int tp_shell_run_queries(struct tp *tp, const char *sql, struct tp_shell_out *out)
{
	sqlite3 *db = tp_db(tp);
	const char *tail = sql;
	bool ran_any = false;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		const char *start = tail;
		char err[1024];
		int64_t t0 = tp_shell_now_ns();
		if (tp_prepare(tp, tail, &st, &tail, err, sizeof err) != SQLITE_OK) {
			char *report = tp_prepare_error_report(tp, sql, start, err);
			fprintf(stderr, "%s\n", report);
			tb_free(report);
			return -1;
		}
		if (!st) {
			/* whitespace, a comment, or an INCLUDE (which ran) */
			ran_any |= tail != start &&
			           strspn(start, " \t\r\n;") < (size_t)(tail - start) &&
			           !tp_shell_is_comment_only(start, tail);
			continue;
		}
		ran_any = true;
		int ncol = sqlite3_column_count(st);
		bool suppress =
		    ncol == 1 && strcmp(sqlite3_column_name(st, 0), "suppress_query_output") == 0;
		bool print = ncol > 0 && !suppress;
		if (print && tp_shell_out_begin(out, st, NULL) < 0) {
			tp_shell_error("query: %s", tp_shell_out_error(out));
			sqlite3_finalize(st);
			return -1;
		}
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (print && tp_shell_out_row(out, st, NULL) < 0) {
				tp_shell_error("query: %s", tp_shell_out_error(out));
				sqlite3_finalize(st);
				return -1;
			}
		}
		if (print)
			tp_shell_out_end(out);
		tp_shell_metatrace_slice("QUERY_TIMELINE", "QUERY_EXECUTE", t0, tp_shell_now_ns(),
		                         sqlite3_sql(st));
		if (rc != SQLITE_DONE) {
			char *report = tp_sql_traceback(sql, start, NULL, tp_sql_errmsg(db));
			fprintf(stderr, "%s\n", report);
			tb_free(report);
			sqlite3_finalize(st);
			return -1;
		}
		sqlite3_finalize(st);
	}
	if (!ran_any) {
		fprintf(stderr, "Error: No valid SQL to run\n");
		return -1;
	}
	return 0;
}

/* ---- query ----------------------------------------------------------------------- */

/* --perf-file: "LOAD_NS,QUERY_NS", as Perfetto writes it. */
static int write_perf_file(const char *path, int64_t load_ns, int64_t query_ns)
{
	char buf[64];
	int n = snprintf(buf, sizeof buf, "%lld,%lld", (long long)load_ns, (long long)query_ns);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		tp_shell_error("Failed to open perf file '%s': %s", path, strerror(errno));
		return -1;
	}
	int rc = tb_write_all(fd, buf, (size_t)n);
	close(fd);
	if (rc < 0) {
		tp_shell_error("cannot write '%s': %s", path, strerror(-rc));
		return -1;
	}
	return 0;
}

int tp_shell_run_query(struct shell_opts *o)
{
	if (o->batch)
		return tp_shell_run_batch(o);
	if (o->jobs || o->batch_list || o->max_memory || o->errors_file) {
		tp_shell_error("query: -j, --batch-list, --max-memory and --errors need --batch");
		return 1;
	}
	if (tp_shell_reject_extra(o, "query", 2, NULL) < 0)
		return 1;
	if (o->structured_query_id) {
		if (!o->summary_specs.len)
			tp_shell_error(
			    "query: --structured-query-id requires at least one --summary-spec");
		else
			tp_shell_error("query: structured queries need the trace summarizer, which "
			               "tracebox does not have");
		return 1;
	}
	/* With --remote the trace is the server's: the first positional is the SQL. */
	size_t sql_at = o->remote ? 0 : 1;
	const char *trace = NULL;
	if (!o->remote && !(trace = tp_shell_trace_arg(o, "query")))
		return 1;
	char *sql = NULL;
	const char *file = o->query_file;
	bool file_is_stdin = file && strcmp(file, "-") == 0;
	bool stdin_free = !trace || strcmp(trace, "-") != 0;
	if (o->pos.len > sql_at) {
		sql = tb_strdup(o->pos.data[sql_at]);
	} else if (stdin_free && (file_is_stdin || (!file && !isatty(0)))) {
		sql = tp_shell_read_file("-", NULL);
		if (!sql) {
			tp_shell_error("query: failed to read SQL from stdin");
			return 1;
		}
		file = NULL;
	}
	if ((!sql || !*sql) && !file) {
		tp_shell_error(
		    "query: no SQL provided. Use positional arg, -f FILE, or pipe to stdin.");
		tb_free(sql);
		return 1;
	}
	if (o->remote) {
		if (file) {
			tb_free(sql);
			if (!(sql = tp_shell_read_file(file, NULL))) {
				tp_shell_error("query: unable to read file '%s': %s", file,
				               strerror(errno));
				return 1;
			}
		}
		int rc = tp_shell_remote_query(o, sql);
		tb_free(sql);
		return rc;
	}

	struct shell_config sc;
	struct tp *tp = NULL;
	struct tp_shell_out *qout = NULL;
	struct hmap loaded; /* the schema after the load, for -i's .reset */
	int status = 1;
	int64_t load_ns = 0;
	hmap_init(&loaded);
	if (tp_shell_config_build(o, &sc) < 0 || !(tp = tp_shell_load(o, &sc, trace, &load_ns)))
		goto out;
	if (file) {
		tb_free(sql);
		if (!(sql = tp_shell_read_file(file, NULL))) {
			tp_shell_error("query: unable to read file '%s': %s", file,
			               strerror(errno));
			goto out;
		}
	}
	enum tp_shell_fmt fmt = TP_SHELL_FMT_CSV;
	if (o->format && tp_shell_fmt_parse(o->format, &fmt) < 0) {
		tp_shell_error("query: unknown --format '%s' (expected csv, tsv, json or parquet)",
		               o->format);
		goto out;
	}
	struct tb_err oerr = {0};
	if (!(qout = tp_shell_out_new(fmt, stdout, o->query_output, &oerr))) {
		tp_shell_error("query: %s", oerr.msg);
		goto out;
	}
	if (o->interactive) /* what the shell's .reset goes back to */
		tp_schema_snapshot(tp, &loaded);
	catch_sigint(tp);
	int64_t t0 = tp_shell_now_ns();
	int rc = tp_shell_run_queries(tp, sql, qout);
	if (rc == 0 && tp_shell_out_finish(qout) < 0) {
		tp_shell_error("query: %s", tp_shell_out_error(qout));
		rc = -1;
	}
	if (rc == 0)
		fprintf(stderr, "Query execution time: %lld ms\n",
		        (long long)((tp_shell_now_ns() - t0) / 1000000));
	int64_t query_ns = tp_shell_now_ns() - t0;
	fflush(stdout);
	release_sigint();
	if (rc < 0)
		goto out;
	if (o->perf_file && write_perf_file(o->perf_file, load_ns, query_ns) < 0)
		goto out;
	status = 0;
	if (o->interactive) {
		catch_sigint(tp);
		tp_shell_interactive(tp, o->wide, &loaded);
		release_sigint();
	}
out:
	hmap_release(&loaded);
	tp_shell_out_free(qout);
	tb_free(sql);
	tp_free(tp);
	tp_shell_config_release(&sc);
	return status;
}

/* ---- interactive ----------------------------------------------------------------- */

int tp_shell_run_interactive(struct shell_opts *o)
{
	if (o->remote) {
		tp_shell_error("interactive: --remote is only supported by the query command in "
		               "tracebox");
		return 1;
	}
	const char *trace = tp_shell_trace_arg(o, "interactive");
	if (!trace)
		return 1;
	struct shell_config sc;
	struct tp *tp = NULL;
	int status = 1;
	if (tp_shell_config_build(o, &sc) < 0 || !(tp = tp_shell_load(o, &sc, trace, NULL)))
		goto out;
	catch_sigint(tp);
	tp_shell_interactive(tp, o->wide, NULL);
	release_sigint();
	status = 0;
out:
	tp_free(tp);
	tp_shell_config_release(&sc);
	return status;
}

/* ---- recognised, not implemented ----------------------------------------------------- */

int tp_shell_run_metrics(struct shell_opts *o)
{
	if (tp_shell_reject_extra(o, "metrics", 1, NULL) < 0)
		return 1;
	if (!o->run) {
		tp_shell_error("metrics: --run is required");
		return 1;
	}
	tp_shell_error("metrics: v1 metrics (--run %s) are not implemented in tracebox: it has no "
	               "metrics engine; query the tables or the stdlib modules with SQL instead",
	               o->run);
	return 1;
}

int tp_shell_run_summarize(struct shell_opts *o)
{
	(void)o;
	tp_shell_error("summarize: trace summarization (summary specs, --metrics-v2) is not "
	               "implemented in tracebox: it has no summarizer");
	return 1;
}
