/*
 * systrace and ctrace: Perfetto's `traceconv systrace|ctrace`. The ftrace
 * events of a trace (its ftrace_event rows) as the kernel's text trace
 * file, one to_ftrace(id) line each (trace_processor/sql/to_ftrace.c) under
 * the tracer header; ctrace is "TRACE:\n" and then that text
 * zlib-compressed (level 9), as atrace writes it. The same events, escaped
 * into a JSON string, are the "systemTraceEvents" of `json`
 * (traceconv_systrace_json), after an "androidProcessDump" of the processes
 * and threads, as Perfetto's trace_to_json writes them.
 *
 * --truncate start|end keeps the first or the last 1,129,235 events (140 MiB
 * at 130 bytes an event), Perfetto's limit for the legacy viewer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"
#include "traceconv_int.h"

#define LOAD_CHUNK ((size_t)1 << 20)
#define MAX_FTRACE_EVENTS ((uint64_t)140 * 1024 * 1024 / 130)

static const char ftrace_header[] =
    "# tracer: nop\n"
    "#\n"
    "# entries-in-buffer/entries-written: 30624/30624   #P:4\n"
    "#\n"
    "#                                      _-----=> irqs-off\n"
    "#                                     / _----=> need-resched\n"
    "#                                    | / _---=> hardirq/softirq\n"
    "#                                    || / _--=> preempt-depth\n"
    "#                                    ||| /     delay\n"
    "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
    "#              | |        |      |   ||||       |         |\n";

struct tp *traceconv_load_cfg(int fd, const char *name, bool full_sort)
{
	struct tp_config cfg = {.full_sort = full_sort};
	uint8_t *buf = tb_malloc(LOAD_CHUNK);
	struct tp *tp = tp_new(&cfg);
	ssize_t n;
	while ((n = tb_read_all(fd, buf, LOAD_CHUNK)) > 0) {
		if (tp_parse(tp, buf, (size_t)n) < 0)
			goto fail;
	}
	if (n < 0) {
		fprintf(stderr, "traceconv: cannot read '%s': %s\n", name, strerror((int)-n));
		goto out;
	}
	if (tp_end_of_file(tp) < 0)
		goto fail;
	tb_free(buf);
	return tp;
fail:
	fprintf(stderr, "traceconv: cannot load '%s': %s\n", name, tp_error(tp));
out:
	tb_free(buf);
	tp_free(tp);
	return NULL;
}

/* ---- output sinks ---------------------------------------------------------- */

void traceconv_sink_write(struct traceconv_sink *k, const void *p, size_t n)
{
	if (k->error || n == 0)
		return;
	if (!k->deflate) {
		if (fwrite(p, 1, n, k->out) != n)
			k->error = errno ? errno : EIO;
		return;
	}
	z_stream *z = k->z;
	uint8_t buf[64 << 10];
	z->next_in = (Bytef *)(uintptr_t)p;
	z->avail_in = (uInt)n;
	while (z->avail_in) {
		z->next_out = buf;
		z->avail_out = sizeof buf;
		if (deflate(z, Z_NO_FLUSH) == Z_STREAM_ERROR) {
			k->error = EIO;
			return;
		}
		size_t have = sizeof buf - z->avail_out;
		if (have && fwrite(buf, 1, have, k->out) != have) {
			k->error = errno ? errno : EIO;
			return;
		}
	}
}

void traceconv_sink_str(struct traceconv_sink *k, const char *s)
{
	traceconv_sink_write(k, s, strlen(s));
}

int traceconv_sink_init(struct traceconv_sink *k, FILE *out, bool compress)
{
	memset(k, 0, sizeof *k);
	k->out = out;
	if (!compress)
		return 0;
	k->z = tb_calloc(1, sizeof(z_stream));
	if (deflateInit(k->z, 9) != Z_OK) {
		tb_free(k->z);
		k->z = NULL;
		return -1;
	}
	k->deflate = true;
	return 0;
}

int traceconv_sink_finish(struct traceconv_sink *k)
{
	if (k->deflate) {
		z_stream *z = k->z;
		uint8_t buf[64 << 10];
		int rc;
		do {
			z->next_out = buf;
			z->avail_out = sizeof buf;
			rc = deflate(z, Z_FINISH);
			size_t have = sizeof buf - z->avail_out;
			if (!k->error && have && fwrite(buf, 1, have, k->out) != have)
				k->error = errno ? errno : EIO;
		} while (rc == Z_OK);
		deflateEnd(z);
		tb_free(z);
		k->z = NULL;
	}
	return k->error ? -1 : 0;
}

/* ---- the events -------------------------------------------------------------- */

/* Append s to k escaped as the inside of a JSON string. */
void traceconv_json_escaped(struct traceconv_sink *k, const char *s, size_t n)
{
	size_t from = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *esc = NULL;
		char u[8];
		switch (c) {
		case '\n':
			esc = "\\n";
			break;
		case '\f':
			esc = "\\f";
			break;
		case '\b':
			esc = "\\b";
			break;
		case '\r':
			esc = "\\r";
			break;
		case '\t':
			esc = "\\t";
			break;
		case '\\':
			esc = "\\\\";
			break;
		case '"':
			esc = "\\\"";
			break;
		default:
			if (c < 0x20) {
				snprintf(u, sizeof u, "\\u%04x", c);
				esc = u;
			}
		}
		if (!esc)
			continue;
		traceconv_sink_write(k, s + from, i - from);
		traceconv_sink_str(k, esc);
		from = i + 1;
	}
	traceconv_sink_write(k, s + from, n - from);
}

/* Write every to_ftrace line (as keep says), plain or JSON-escaped. Returns
 * 0, or -1 after printing the SQL error. */
static int write_events(struct tp *tp, struct traceconv_sink *k, bool json, int keep,
                        uint64_t count)
{
	char sql[160];
	if (keep < 0 && count > MAX_FTRACE_EVENTS)
		snprintf(sql, sizeof sql,
		         "SELECT to_ftrace(id) FROM ftrace_event LIMIT %llu OFFSET %llu",
		         (unsigned long long)MAX_FTRACE_EVENTS,
		         (unsigned long long)(count - MAX_FTRACE_EVENTS));
	else if (keep > 0)
		snprintf(sql, sizeof sql, "SELECT to_ftrace(id) FROM ftrace_event LIMIT %llu",
		         (unsigned long long)MAX_FTRACE_EVENTS);
	else
		snprintf(sql, sizeof sql, "SELECT to_ftrace(id) FROM ftrace_event");
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(tp_db(tp), sql, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *line = (const char *)sqlite3_column_text(st, 0);
		size_t n = (size_t)sqlite3_column_bytes(st, 0);
		if (json) {
			traceconv_json_escaped(k, line ? line : "", n);
			traceconv_sink_str(k, "\\n");
		} else {
			traceconv_sink_write(k, line, n);
			traceconv_sink_write(k, "\n", 1);
		}
		rc = SQLITE_OK;
	}
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "traceconv: Error while writing systrace: %s\n",
		        sqlite3_errmsg(tp_db(tp)));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

static uint64_t count_events(struct tp *tp)
{
	sqlite3_stmt *st = NULL;
	uint64_t n = 0;
	if (sqlite3_prepare_v2(tp_db(tp), "SELECT count(1) FROM ftrace_event", -1, &st, NULL) ==
	        SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int traceconv_systrace_json(struct tp *tp, struct traceconv_sink *k, int keep)
{
	/* The processes and threads as Android's `ps` would list them. */
	traceconv_sink_str(
	    k, "\"androidProcessDump\": \"PROCESS DUMP\\nUSER           PID  PPID     "
	       "VSZ    RSS WCHAN  PC S NAME                        COMM                 "
	       "      \\n");
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(tp_db(tp), "SELECT pid, name FROM process", -1, &st, NULL) ==
	    SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			char line[96];
			snprintf(line, sizeof line,
			         "root             %u     0   00000   000 null 0000000000 S ",
			         (unsigned)sqlite3_column_int64(st, 0));
			traceconv_sink_str(k, line);
			const char *name = (const char *)sqlite3_column_text(st, 1);
			if (name)
				traceconv_json_escaped(k, name, strlen(name));
			traceconv_sink_str(k, "         null");
		}
	}
	sqlite3_finalize(st);
	traceconv_sink_str(k, "USER           PID   TID CMD \\n");
	if (sqlite3_prepare_v2(
	        tp_db(tp),
	        "SELECT tid, COALESCE(upid, 0), thread.name FROM thread LEFT JOIN process "
	        "USING (upid)",
	        -1, &st, NULL) == SQLITE_OK) {
		while (sqlite3_step(st) == SQLITE_ROW) {
			char line[64];
			snprintf(line, sizeof line, "root         %u %u ",
			         (unsigned)sqlite3_column_int64(st, 1),
			         (unsigned)sqlite3_column_int64(st, 0));
			traceconv_sink_str(k, line);
			const char *name = (const char *)sqlite3_column_text(st, 2);
			if (name && *name)
				traceconv_json_escaped(k, name, strlen(name));
			else
				traceconv_sink_str(k, "<...>");
		}
	}
	sqlite3_finalize(st);
	traceconv_sink_str(k, "\"");
	uint64_t count = count_events(tp);
	if (count == 0)
		return 0;
	traceconv_sink_str(k, ",\n  \"systemTraceEvents\": \"");
	for (const char *p = ftrace_header; *p;) {
		size_t n = strcspn(p, "\n");
		traceconv_json_escaped(k, p, n);
		traceconv_sink_str(k, "\\n");
		p += n + (p[n] == '\n');
	}
	if (write_events(tp, k, true, keep, count) < 0)
		return -1;
	/* The legacy viewer ties the ftrace and userspace clocks together
	 * with a clock sync marker; ours are one clock already. */
	traceconv_sink_str(k, "\\n<...>-12345 (-----) [000] ...1 0.000000: tracing_mark_write: "
	                      "trace_event_clock_sync: parent_ts=0\\n\"");
	return 0;
}

int traceconv_systrace(int in_fd, const char *in_name, FILE *out,
                       const struct traceconv_text_opts *o, bool ctrace)
{
	struct tp *tp = traceconv_load_cfg(in_fd, in_name, o->full_sort);
	struct traceconv_sink k;
	int rc = -1;
	if (!tp)
		return -1;
	if (ctrace && fputs("TRACE:\n", out) < 0)
		goto out;
	if (traceconv_sink_init(&k, out, ctrace) < 0)
		goto out;
	traceconv_sink_str(&k, ftrace_header);
	uint64_t count = count_events(tp);
	rc = count ? write_events(tp, &k, false, o->keep, count) : 0;
	if (traceconv_sink_finish(&k) < 0 && rc == 0) {
		fprintf(stderr, "traceconv: cannot write the output: %s\n", strerror(k.error));
		rc = -1;
	}
out:
	tp_free(tp);
	return rc;
}
