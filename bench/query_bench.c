/*
 * Query latency benchmark (issue 20): loads tp_bench's ~200 MB protobuf
 * trace (4.6 M interned begin/end slices on 8 threads), its compact_sched
 * trace (50 k sched_switch + sched_waking events per MB: 10 M at 200) and a
 * counter trace made here (TrackEvent counters on 16 tracks, 2.5 k per MB),
 * each through the library API in this process, then times every query of
 * the list, best of TB_BENCH_RUNS (3), printing CPU seconds (best,
 * and the first run's, which pays for any order the tables build and
 * cache), wall seconds (best), rows and an FNV-1a checksum of every cell
 * of the result (type tag + value), so that a change that alters an answer
 * shows.
 *
 *   query_bench                 all three traces
 *   query_bench proto|sched|counter   one
 *   query_bench sched 'by utid'       that trace's queries whose name holds
 *                                     the text (for profiling one)
 *   TB_BENCH_MB=50 query_bench  smaller traces (tp_bench's files for that
 *                               size: make them with out/bench/tp_bench
 *                               proto|sched, TB_BENCH_MB the same)
 *
 * Prints figures; asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_trace.h"
#include "pb.h"

#define OUT_DIR "out/bench"

struct query {
	const char *name, *sql;
};

static const struct query proto_queries[] = {
    {"group by name", "select name, count(*), sum(dur) from slice group by name"},
    {"group by thread",
     "select t.tid, t.name, count(*), sum(s.dur) from slice s join thread_track tt on s.track_id "
     "= tt.id join thread t using(utid) group by t.utid"},
    {"group by depth", "select depth, count(*), sum(dur) from slice group by depth"},
    {"slice-track-thread-process",
     "select p.pid, t.tid, s.name, count(*), sum(s.dur) from slice s join thread_track tt on "
     "s.track_id = tt.id join thread t using(utid) join process p using(upid) group by p.pid, "
     "t.tid, s.name"},
    {"slice-thread_track count",
     "select count(*), sum(s.dur) from slice s join thread_track tt on s.track_id = tt.id"},
    {"parent/child self-join",
     "select p.name, c.name, count(*), sum(c.dur) from slice c join slice p on c.parent_id = "
     "p.id group by p.name, c.name"},
    {"ts range order by limit",
     "select id, ts, dur, name from slice where ts >= (select ts from slice where id = (select "
     "count(*) / 2 from slice)) order by ts limit 100"},
    {"ts range filtered",
     "select count(*), sum(dur) from slice where ts between (select ts from slice where id = "
     "(select count(*) / 3 from slice)) and (select ts from slice where id = (select count(*) / "
     "2 from slice)) and name = 'Event03'"},
};

static const struct query sched_queries[] = {
    {"thread_state by utid, state",
     "select utid, state, count(*), sum(dur) from thread_state group by utid, state"},
    {"thread_state one utid",
     "select state, count(*), sum(dur) from thread_state where utid = 3 group by state"},
    {"sched by cpu", "select cpu, count(*), sum(dur) from sched group by cpu"},
    {"sched join thread",
     "select t.tid, count(*), sum(s.dur) from sched s join thread t using(utid) group by t.tid"},
    {"sched join thread count",
     "select count(*), sum(s.dur), sum(t.tid) from sched s join thread t using(utid)"},
};

static const struct query counter_queries[] = {
    {"counter by track",
     "select track_id, count(*), sum(value), min(value), max(value) from counter group by "
     "track_id"},
    {"counter track + range",
     "select count(*), sum(value) from counter where track_id = (select min(id) from "
     "counter_track) and ts between (select ts from counter where id = (select count(*) / 4 "
     "from counter)) and (select ts from counter where id = (select count(*) / 2 from "
     "counter))"},
    {"counter join track name",
     "select t.name, count(*), avg(c.value) from counter c join counter_track t on c.track_id = "
     "t.id group by t.name"},
    {"counter join track count",
     "select count(*), sum(c.value) from counter c join counter_track t on c.track_id = t.id"},
};

/* CPU seconds of this process: the machine is shared, wall time is noisy. */
static double cpu_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t rnd_state = 12345;

static uint32_t next_rand(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

static void put_packet(FILE *f, struct pb_writer *w)
{
	uint8_t hdr[16];
	size_t hl;
	hdr[0] = 0x0a; /* Trace.packet */
	hl = (size_t)(pb_encode_varint(hdr + 1, pb_writer_size(w)) - hdr);
	fwrite(hdr, 1, hl, f);
	fwrite(pb_writer_data(w), 1, pb_writer_size(w), f);
}

/* 16 counter tracks (TrackDescriptor.counter), 2.5 k values per MB asked for
 * spread over them at random, int and double values alternating tracks. */
static void gen_counters(const char *path, size_t mb)
{
	FILE *f = fopen(path, "w");
	struct pb_writer w;
	uint64_t ts = 1000000, n = (uint64_t)mb * 2500 * 16;

	if (!f) {
		perror(path);
		exit(1);
	}
	pb_writer_init_growable(&w);
	for (int t = 0; t < 16; t++) {
		char name[32];
		unsigned td, cd;
		snprintf(name, sizeof name, "counter%02d", t);
		pb_writer_reset(&w);
		pb_put_uint32(&w, 10, 1);
		if (t == 0)
			pb_put_uint32(&w, 13, 1); /* SEQ_INCREMENTAL_STATE_CLEARED */
		td = pb_begin_nested(&w, 60);
		pb_put_uint64(&w, 1, 5000 + (uint64_t)t); /* uuid */
		pb_put_string(&w, 2, name);
		cd = pb_begin_nested(&w, 8); /* counter */
		pb_end_nested(&w, cd);
		pb_end_nested(&w, td);
		put_packet(f, &w);
	}
	for (uint64_t i = 0; i < n; i++) {
		uint32_t t = next_rand() % 16;
		unsigned te;
		ts += 50 + next_rand() % 100;
		pb_writer_reset(&w);
		pb_put_uint64(&w, 8, ts);
		pb_put_uint32(&w, 10, 1);
		pb_put_uint32(&w, 13, 2); /* SEQ_NEEDS_INCREMENTAL_STATE */
		te = pb_begin_nested(&w, 11);
		pb_put_int32(&w, 9, 4); /* TYPE_COUNTER */
		pb_put_uint64(&w, 11, 5000 + (uint64_t)t);
		if (t & 1) {
			double v = (double)(next_rand() % 100000) / 7.0;
			uint64_t bits;
			memcpy(&bits, &v, sizeof bits);
			pb_put_sfixed64(&w, 44, (int64_t)bits);
		} else {
			pb_put_int64(&w, 30, (int64_t)(next_rand() % 1000000));
		}
		pb_end_nested(&w, te);
		put_packet(f, &w);
	}
	pb_writer_release(&w);
	fclose(f);
}

static void hash_bytes(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;
	for (size_t i = 0; i < n; i++) {
		*h ^= b[i];
		*h *= 0x100000001b3ull;
	}
}

/* Runs sql once: rows into *rows, the checksum of every cell into *sum. */
static int run_query(struct tp *tp, const char *sql, long long *rows, uint64_t *sum)
{
	sqlite3_stmt *st;
	uint64_t h = 0xcbf29ce484222325ull;
	long long n = 0;
	int rc;

	if (sqlite3_prepare_v2(tp_db(tp), sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "query_bench: %s\n", sqlite3_errmsg(tp_db(tp)));
		return -1;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		int nc = sqlite3_column_count(st);
		for (int i = 0; i < nc; i++) {
			int ty = sqlite3_column_type(st, i);
			uint8_t tag = (uint8_t)ty;
			hash_bytes(&h, &tag, 1);
			if (ty == SQLITE_INTEGER) {
				int64_t v = sqlite3_column_int64(st, i);
				hash_bytes(&h, &v, sizeof v);
			} else if (ty == SQLITE_FLOAT) {
				double v = sqlite3_column_double(st, i);
				hash_bytes(&h, &v, sizeof v);
			} else if (ty == SQLITE_TEXT) {
				const unsigned char *s = sqlite3_column_text(st, i);
				hash_bytes(&h, s, (size_t)sqlite3_column_bytes(st, i));
			}
		}
		n++;
	}
	if (rc != SQLITE_DONE)
		fprintf(stderr, "query_bench: %s\n", sqlite3_errmsg(tp_db(tp)));
	sqlite3_finalize(st);
	*rows = n;
	*sum = h;
	return rc == SQLITE_DONE ? 0 : -1;
}

static const char *query_filter;

static void bench_trace(const char *path, const struct query *q, size_t nq, int runs)
{
	double secs;
	size_t bytes;
	struct tp *tp = bench_load_trace(path, &secs, &bytes);

	printf("%s: %.1f MB loaded in %.2f s, %lld slices, %lld thread_state, %lld counters\n",
	       path, (double)bytes / 1e6, secs, bench_query_int(tp, "select count(*) from slice"),
	       bench_query_int(tp, "select count(*) from thread_state"),
	       bench_query_int(tp, "select count(*) from counter"));
	for (size_t i = 0; i < nq; i++) {
		double best = 1e99, best_cpu = 1e99, first_cpu = 0;
		long long rows = -1;
		uint64_t sum = 0;
		if (query_filter && !strstr(q[i].name, query_filter))
			continue;
		for (int r = 0; r < runs; r++) {
			double t0 = bench_now_s(), c0 = cpu_now_s(), t, c;
			if (run_query(tp, q[i].sql, &rows, &sum) < 0)
				break;
			t = bench_now_s() - t0;
			c = cpu_now_s() - c0;
			if (r == 0)
				first_cpu = c;
			if (t < best)
				best = t;
			if (c < best_cpu)
				best_cpu = c;
		}
		printf("  %-28s cpu %7.3f s (first %7.3f)  wall %7.3f s  %8lld rows  checksum "
		       "%016llx\n",
		       q[i].name, best_cpu, first_cpu, best, rows, (unsigned long long)sum);
		fflush(stdout);
	}
	tp_free(tp);
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

/* Runs one trace's queries when only is NULL or names it (kind): the
 * trace OUT_DIR/synth-<mb>mb<suffix>.pftrace; tp_bench makes the protobuf
 * and sched ones, this program the counter one. */
static void run_set(const char *only, const char *kind, const char *suffix, size_t mb,
                    const struct query *q, size_t nq, int runs)
{
	char path[256];

	if (only && strcmp(only, kind) != 0)
		return;
	snprintf(path, sizeof path, OUT_DIR "/synth-%zumb%s.pftrace", mb, suffix);
	if (!exists(path)) {
		if (strcmp(kind, "counter") != 0) {
			printf("%s missing: make it with TB_BENCH_MB=%zu out/bench/tp_bench %s\n",
			       path, mb, kind);
			return;
		}
		fprintf(stderr, "generating %s\n", path);
		gen_counters(path, mb);
	}
	bench_trace(path, q, nq, runs);
}

int main(int argc, char **argv)
{
	const char *mbs = getenv("TB_BENCH_MB"), *runss = getenv("TB_BENCH_RUNS");
	size_t mb = mbs ? strtoul(mbs, NULL, 10) : 200;
	int runs = runss ? (int)strtol(runss, NULL, 10) : 3;
	const char *only = argc > 1 ? argv[1] : NULL;

	if (runs < 1)
		runs = 1;
	query_filter = argc > 2 ? argv[2] : NULL;
	run_set(only, "proto", "", mb, proto_queries, sizeof proto_queries / sizeof *proto_queries,
	        runs);
	run_set(only, "sched", ".sched-compact", mb, sched_queries,
	        sizeof sched_queries / sizeof *sched_queries, runs);
	run_set(only, "counter", ".counters", mb, counter_queries,
	        sizeof counter_queries / sizeof *counter_queries, runs);
	return 0;
}
