/*
 * Import speed of the profile and build-log importers (issue 22): a
 * synthetic input of each format is built in memory and pushed through
 * tp_parse in 1 MiB pieces, then tp_end_of_file; prints samples (or lines)
 * per second of the process's CPU time, best of TB_BENCH_RUNS (default 3).
 * Asserts nothing.
 *
 *   collapsed   1 M lines "f0;f1;...;fN COUNT" (depth 9-32, 400 names, about
 *               two new callsites a line), sorted as the scripts write them
 *   pprof       1 M samples of 2 values (Go's CPU shape), 4 000 locations
 *   cpuprofile  1 M samples, 4 000 nodes, timeDeltas
 *   ninja       1 M build steps on 32 lanes
 *
 * TB_BENCH_SAMPLES=N changes the 1 M; `import_bench NAME` runs one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "bench_trace.h"
#include "trace_processor.h"

VEC_DEFINE(ib_buf, char);

static void put(struct ib_buf *b, const void *p, size_t n)
{
	vec_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void putf(struct ib_buf *b, const char *fmt, long long v)
{
	char t[64];
	int n = snprintf(t, sizeof t, fmt, v);
	put(b, t, (size_t)n);
}

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* ---- protobuf by hand (pprof) -------------------------------------------- */

static void varint(struct ib_buf *b, uint64_t v)
{
	while (v >= 0x80) {
		char c = (char)(v | 0x80);
		put(b, &c, 1);
		v >>= 7;
	}
	char c = (char)v;
	put(b, &c, 1);
}
static void field_varint(struct ib_buf *b, uint32_t id, uint64_t v)
{
	varint(b, (uint64_t)id << 3);
	varint(b, v);
}
static void field_bytes(struct ib_buf *b, uint32_t id, const struct ib_buf *m)
{
	varint(b, (uint64_t)id << 3 | 2);
	varint(b, m->len);
	put(b, m->data, m->len);
}

static void make_pprof(struct ib_buf *out, long n)
{
	struct ib_buf m = VEC_INIT, sub = VEC_INIT;
	enum { LOCS = 4000, FUNCS = 400 };
	const char *strs[] = {"", "samples", "count", "cpu", "nanoseconds", "/bin/app"};
	for (int t = 0; t < 2; t++) { /* sample types */
		m.len = 0;
		field_varint(&m, 1, (uint64_t)(1 + 2 * t));
		field_varint(&m, 2, (uint64_t)(2 + 2 * t));
		field_bytes(out, 1, &m);
	}
	m.len = 0;
	field_varint(&m, 1, 1);
	field_varint(&m, 2, 0x400000);
	field_varint(&m, 3, 0x800000);
	field_varint(&m, 5, 5);
	field_bytes(out, 3, &m);
	for (int f = 0; f < FUNCS; f++) {
		m.len = 0;
		field_varint(&m, 1, (uint64_t)f + 1);
		field_varint(&m, 2, (uint64_t)(6 + f));
		field_varint(&m, 4, 5);
		field_bytes(out, 5, &m);
	}
	for (int l = 0; l < LOCS; l++) {
		m.len = 0;
		field_varint(&m, 1, (uint64_t)l + 1);
		field_varint(&m, 2, 1);
		field_varint(&m, 3, 0x400000 + (uint64_t)l * 16);
		sub.len = 0;
		field_varint(&sub, 1, (uint64_t)(l % FUNCS) + 1);
		field_varint(&sub, 2, (uint64_t)l);
		field_bytes(&m, 4, &sub);
		field_bytes(out, 4, &m);
	}
	for (long s = 0; s < n; s++) {
		m.len = 0;
		sub.len = 0;
		int depth = 8 + (int)rnd(16);
		uint32_t base = rnd(64);
		for (int d = 0; d < depth; d++)
			varint(&sub,
			       (uint64_t)((base * 37 + (uint32_t)d * 101 + (d == 0 ? rnd(50) : 0)) %
			                  LOCS) +
			           1);
		field_bytes(&m, 1, &sub);
		sub.len = 0;
		varint(&sub, 1);
		varint(&sub, 10000000);
		field_bytes(&m, 2, &sub);
		field_bytes(out, 2, &m);
	}
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) {
		m.len = 0;
		put(&m, strs[i], strlen(strs[i]));
		field_bytes(out, 6, &m);
	}
	for (int f = 0; f < FUNCS; f++) {
		m.len = 0;
		putf(&m, "main.function%lld", f);
		field_bytes(out, 6, &m);
	}
	vec_release(&m);
	vec_release(&sub);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One of 5 000 paths (depth 8-29) and 1-3 leaf frames out of 400 names,
 * sorted bytewise as stackcollapse-*.pl writes them: about two new
 * callsites a line, as in FlameGraph's example outputs. */
static void make_collapsed(struct ib_buf *out, long n)
{
	struct ib_buf tmp = VEC_INIT;
	VEC(size_t) offs = VEC_INIT;
	for (long i = 0; i < n; i++) {
		vec_push(&offs, tmp.len);
		uint32_t path = rnd(5000), node = path;
		int depth = 8 + (int)(path % 22), tail = 1 + (int)rnd(3);
		for (int d = 0; d < depth + tail; d++) {
			node = d < depth ? node * 2654435761u + 1 : rnd(400);
			putf(&tmp, d ? ";function_%lld" : "function_%lld", node % 400);
		}
		putf(&tmp, " %lld", 1 + rnd(1000));
		put(&tmp, "", 1);
	}
	char **lines = tb_malloc(offs.len * sizeof *lines);
	for (size_t i = 0; i < offs.len; i++)
		lines[i] = tmp.data + offs.data[i];
	qsort(lines, offs.len, sizeof *lines, cmp_line);
	for (size_t i = 0; i < offs.len; i++) {
		put(out, lines[i], strlen(lines[i]));
		put(out, "\n", 1);
	}
	tb_free(lines);
	vec_release(&offs);
	vec_release(&tmp);
}

static void make_cpuprofile(struct ib_buf *out, long n)
{
	enum { NODES = 4000 };
	put(out, "{\"nodes\":[", 10);
	for (int i = 1; i <= NODES; i++) {
		put(out, ",{\"id\":" + (i == 1), i == 1 ? 6 : 7);
		putf(out, "%lld,\"callFrame\":{\"functionName\":\"fn", i);
		putf(out, "%lld\",\"scriptId\":\"1\",\"url\":\"file:///app.js\",\"lineNumber\":",
		     i % 500);
		putf(out, "%lld,\"columnNumber\":1},\"hitCount\":0", i);
		if (i > 1)
			putf(out, ",\"parent\":%lld", i / 2);
		put(out, "}", 1);
	}
	put(out, "],\"startTime\":1000000,\"endTime\":2000000,\"samples\":[", 51);
	for (long i = 0; i < n; i++)
		putf(out, i ? ",%lld" : "%lld", 1 + rnd(NODES));
	put(out, "],\"timeDeltas\":[", 16);
	for (long i = 0; i < n; i++)
		putf(out, i ? ",%lld" : "%lld", 100 + rnd(50));
	put(out, "]}", 2);
}

static void make_ninja(struct ib_buf *out, long n)
{
	put(out, "# ninja log v5\n", 15);
	long t[32] = {0};
	for (long i = 0; i < n; i++) {
		int lane = (int)(i % 32);
		long d = 1 + rnd(200);
		putf(out, "%lld\t", t[lane]);
		putf(out, "%lld\t0\tobj/dir/file_", t[lane] + d);
		putf(out, "%lld.o\t", i);
		putf(out, "%llx\n", (long long)(rng & 0xffffffffffffll));
		t[lane] += d + 1;
	}
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run(const char *name, void (*make)(struct ib_buf *, long), long n, const char *what)
{
	struct ib_buf in = VEC_INIT;
	make(&in, n);
	const char *env = getenv("TB_BENCH_RUNS");
	int runs = env ? (int)strtol(env, NULL, 10) : 3;
	double best = 1e30;
	const char *type = "?";
	long long callsites = 0;
	for (int r = 0; r < (runs > 0 ? runs : 1); r++) {
		double a = cpu_now();
		struct tp *tp = tp_new(NULL);
		for (size_t off = 0; off < in.len;) {
			size_t k = in.len - off < (1u << 20) ? in.len - off : (1u << 20);
			if (tp_parse(tp, (const uint8_t *)in.data + off, k) != 0)
				break;
			off += k;
		}
		int rc = tp_end_of_file(tp);
		double b = cpu_now();
		if (rc != 0 || strcmp(tp_trace_type(tp), name) != 0)
			printf("%s: load failed (%s): %s\n", name, tp_trace_type(tp), tp_error(tp));
		type = strcmp(tp_trace_type(tp), name) == 0 ? name : "wrong type";
		callsites = bench_query_int(tp, "select count(*) from stack_profile_callsite");
		tp_free(tp);
		if (b - a < best)
			best = b - a;
	}
	printf("%-16s %8.1f MB  %ld %s  %.3f s CPU (best of %d)  %.2f M %s/s of CPU  [%s, %lld "
	       "callsites]\n",
	       name, (double)in.len / 1e6, n, what, best, runs, (double)n / best / 1e6, what, type,
	       callsites);
	vec_release(&in);
}

int main(int argc, char **argv)
{
	const char *env = getenv("TB_BENCH_SAMPLES");
	long n = env ? strtol(env, NULL, 10) : 1000000;
	const char *only = argc > 1 ? argv[1] : NULL;
	if (!only || strcmp(only, "collapsed") == 0)
		run("collapsed_stack", make_collapsed, n, "lines");
	if (!only || strcmp(only, "pprof") == 0)
		run("pprof", make_pprof, n, "samples");
	if (!only || strcmp(only, "cpuprofile") == 0)
		run("cpuprofile", make_cpuprofile, n, "samples");
	if (!only || strcmp(only, "ninja") == 0)
		run("ninja_log", make_ninja, n, "lines");
	return 0;
}
