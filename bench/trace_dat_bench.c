/*
 * trace.dat import speed: a sched-heavy trace-cmd v6 file (2 cpus of
 * ring-buffer pages full of sched_waking + sched_switch, 8 threads per cpu,
 * x86-64 formats; bench/ftrace_pages.h) is built in memory, written to
 * out/bench/trace_dat_bench.dat, and loaded whole (tp_parse_file, as the
 * shell loads a file) and through tp_parse in 1 MiB pieces, each then
 * tp_end_of_file: events per second of the process's CPU time
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

#include "bench_trace.h"
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

static const char k_header_event[] = "# compressed entry header\n"
                                     "\ttype_len    :    5 bits\n"
                                     "\ttime_delta  :   27 bits\n"
                                     "\tarray       :   32 bits\n";

/* Load data[0, len), best of runs: whole, read in place as the shell loads
 * a file (tp_parse_file), else through tp_parse in 1 MiB pieces (a stream:
 * the importer copies them); events 0: counted from ftrace_event. */
static size_t import_as(const uint8_t *data, size_t len, size_t events, int runs, bool whole)
{
	double best_cpu = 1e9, best_wall = 1e9;
	for (int r = 0; r < runs; r++) {
		double cpu, wall;
		struct tp *tp = bench_import(data, len, whole, &cpu, &wall);
		if (!events)
			events = (size_t)bench_query_int(tp, "select count(*) from ftrace_event");
		tp_free(tp);
		if (cpu < best_cpu)
			best_cpu = cpu;
		if (wall < best_wall)
			best_wall = wall;
	}
	printf("tracebox import (%s): %.2f M events/s CPU (%.3f s), %.2f M events/s wall "
	       "(%.3f s)\n",
	       whole ? "whole file" : "1 MiB pieces", (double)events / best_cpu / 1e6, best_cpu,
	       (double)events / best_wall / 1e6, best_wall);
	return events;
}

static void import(const uint8_t *data, size_t len, size_t events, int runs)
{
	events = import_as(data, len, events, runs, true);
	import_as(data, len, events, runs, false);
}

/* trace_dat_bench import FILE: only the import of FILE. */
static int import_file(const char *path, int runs)
{
	size_t len;
	uint8_t *data = bench_read_file(path, &len);
	if (!data)
		return 1;
	printf("%s: %.1f MB\n", path, (double)len / 1e6);
	import(data, len, 0, runs);
	tb_free(data);
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
		double w0 = bench_now_s();
		int rc = system(sh);
		double w1 = bench_now_s();
		printf("trace-cmd report: %.3f s wall (%.2f M events/s)%s\n", w1 - w0,
		       (double)events / (w1 - w0) / 1e6, rc ? " [exit status not 0]" : "");
	}
	vec_release(&f);
	return 0;
}
