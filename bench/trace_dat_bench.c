/*
 * trace.dat import speed: a sched-heavy trace-cmd v6 file (2 cpus of
 * ring-buffer pages full of sched_waking + sched_switch, 8 threads per cpu,
 * x86-64 formats; bench/ftrace_pages.h) is built in memory, written to
 * out/bench/trace_dat_bench.dat, and loaded through tp_parse in 1 MiB
 * pieces + tp_end_of_file: events per second of the process's CPU time
 * and of wall time, best of TB_BENCH_RUNS (default 3). When trace-cmd is
 * installed, the wall time of `trace-cmd report FILE >/dev/null` on the
 * same file is printed beside it. Asserts nothing.
 *
 * TB_BENCH_PAGES=N sets the pages per cpu (default 8192: 2 x 32 MiB).
 * `trace_dat_bench import FILE` imports only FILE (a real recording).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ftrace_pages.h"
#include "sqlite3.h"
#include "trace_processor.h"

VEC_DEFINE(td_buf, uint8_t);

static void put(struct td_buf *b, const void *p, size_t n)
{
	vec_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}
static void put32(struct td_buf *b, uint32_t v)
{
	put(b, &v, 4);
}
static void put64(struct td_buf *b, uint64_t v)
{
	put(b, &v, 8);
}
static void put_blob64(struct td_buf *b, const char *s)
{
	put64(b, strlen(s));
	put(b, s, strlen(s));
}

static double now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int64_t count(struct tp *tp, const char *sql)
{
	sqlite3_stmt *st = NULL;
	const char *tail;
	char err[256];
	int64_t v = -1;
	if (tp_prepare(tp, sql, &st, &tail, err, sizeof err) == SQLITE_OK && st &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static const char k_header_event[] = "# compressed entry header\n"
                                     "\ttype_len    :    5 bits\n"
                                     "\ttime_delta  :   27 bits\n"
                                     "\tarray       :   32 bits\n";

/* Load data[0, len) through tp_parse in 1 MiB pieces, best of runs; events
 * 0: counted from ftrace_event. */
static void import(const uint8_t *data, size_t len, size_t events, int runs)
{
	double best_cpu = 1e9, best_wall = 1e9;
	for (int r = 0; r < runs; r++) {
		double c0 = now(CLOCK_PROCESS_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);
		struct tp *tp = tp_new(NULL);
		for (size_t at = 0; at < len; at += 1 << 20) {
			size_t n = len - at < (1 << 20) ? len - at : (1 << 20);
			if (tp_parse(tp, data + at, n) < 0)
				break;
		}
		if (tp_end_of_file(tp) < 0)
			fprintf(stderr, "trace_dat_bench: %s\n", tp_error(tp));
		double c1 = now(CLOCK_PROCESS_CPUTIME_ID), w1 = now(CLOCK_MONOTONIC);
		if (!events)
			events = (size_t)count(tp, "select count(*) from ftrace_event");
		tp_free(tp);
		if (c1 - c0 < best_cpu)
			best_cpu = c1 - c0;
		if (w1 - w0 < best_wall)
			best_wall = w1 - w0;
	}
	printf("tracebox import: %.2f M events/s CPU (%.3f s), %.2f M events/s wall (%.3f s)\n",
	       (double)events / best_cpu / 1e6, best_cpu, (double)events / best_wall / 1e6,
	       best_wall);
}

/* trace_dat_bench import FILE: only the import of FILE. */
static int import_file(const char *path, int runs)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "trace_dat_bench: cannot open '%s'\n", path);
		return 1;
	}
	struct td_buf b = {0};
	uint8_t tmp[1 << 16];
	size_t k;
	while ((k = fread(tmp, 1, sizeof tmp, f)) > 0)
		put(&b, tmp, k);
	fclose(f);
	printf("%s: %.1f MB\n", path, (double)b.len / 1e6);
	import(b.data, b.len, 0, runs);
	vec_release(&b);
	return 0;
}

int main(int argc, char **argv)
{
	struct ftrace_table t;
	struct tb_err err = {0};
	const char *env = getenv("TB_BENCH_PAGES");
	size_t npages = env ? (size_t)strtoul(env, NULL, 10) : 8192;
	int runs = getenv("TB_BENCH_RUNS") ? (int)strtol(getenv("TB_BENCH_RUNS"), NULL, 10) : 3;
	if (argc == 3 && strcmp(argv[1], "import") == 0)
		return import_file(argv[2], runs);
	(void)bench_load_table; /* the file needs the format texts: ours */
	probes_ftrace_table_init(&t);
	if (probes_ftrace_parse_header_page(k_header_page, sizeof k_header_page - 1, &t.layout,
	                                    &err) < 0 ||
	    probes_ftrace_table_add_format(&t, "sched", k_sched_switch, sizeof k_sched_switch - 1,
	                                   &err) < 0 ||
	    probes_ftrace_table_add_format(&t, "sched", k_sched_waking, sizeof k_sched_waking - 1,
	                                   &err) < 0) {
		fprintf(stderr, "trace_dat_bench: %s\n", err.msg);
		return 1;
	}
	uint32_t ps = t.layout.page_size;

	struct td_buf f = {0};
	put(&f, "\x17\x08\x44tracing6", 11);
	put(&f, "\0\0\x08", 3);
	put32(&f, ps);
	put(&f, "header_page", 12);
	put_blob64(&f, k_header_page);
	put(&f, "header_event", 13);
	put_blob64(&f, k_header_event);
	put32(&f, 0); /* ftrace formats */
	put32(&f, 1); /* systems */
	put(&f, "sched", 6);
	put32(&f, 2);
	put_blob64(&f, k_sched_switch);
	put_blob64(&f, k_sched_waking);
	put32(&f, 0); /* kallsyms */
	put32(&f, 0); /* printk */
	char cmd[4096];
	size_t cl = 0;
	for (int cpu = 0; cpu < 2; cpu++)
		for (int i = 0; i < 8; i++)
			cl += (size_t)snprintf(cmd + cl, sizeof cmd - cl, "%d tb-spin-%d\n",
			                       1000 * (cpu + 1) + i, 1000 * (cpu + 1) + i);
	put64(&f, cl);
	put(&f, cmd, cl);
	put32(&f, 2);
	put(&f, "flyrecord", 10);
	size_t table = f.len;
	put64(&f, 0);
	put64(&f, 0);
	put64(&f, 0);
	put64(&f, 0);
	size_t events = 0;
	for (int cpu = 0; cpu < 2; cpu++) {
		size_t pad = (ps - f.len % ps) % ps;
		vec_reserve(&f, pad + npages * ps);
		memset(f.data + f.len, 0, pad);
		f.len += pad;
		uint64_t off = f.len, size = (uint64_t)npages * ps;
		memcpy(f.data + table + 16 * (size_t)cpu, &off, 8);
		memcpy(f.data + table + 16 * (size_t)cpu + 8, &size, 8);
		struct bench_cpu c = {.tid_base = 1000 * (cpu + 1), .ts = 1000000000ull};
		events += bench_build_pages(&t, &c, true, f.data + f.len, npages);
		f.len += npages * ps;
	}
	probes_ftrace_table_release(&t);

	const char *path = "out/bench/trace_dat_bench.dat";
	FILE *o = fopen(path, "wb");
	if (o) {
		fwrite(f.data, 1, f.len, o);
		fclose(o);
	}
	printf("trace.dat v6: %.1f MB, %zu events (sched_waking + sched_switch, 2 cpus)\n",
	       (double)f.len / 1e6, events);

	import(f.data, f.len, events, runs);
	if (o && system("command -v trace-cmd >/dev/null 2>&1") == 0) {
		char sh[512];
		snprintf(sh, sizeof sh, "trace-cmd report %s >/dev/null 2>&1", path);
		double w0 = now(CLOCK_MONOTONIC);
		int rc = system(sh);
		double w1 = now(CLOCK_MONOTONIC);
		printf("trace-cmd report: %.3f s wall (%.2f M events/s)%s\n", w1 - w0,
		       (double)events / (w1 - w0) / 1e6, rc ? " [exit status not 0]" : "");
	}
	vec_release(&f);
	return 0;
}
