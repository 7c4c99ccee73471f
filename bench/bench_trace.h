/*
 * Helpers the recording benchmarks share (perf_bench, storm_bench): the
 * CPU time of finished children, loading a trace file with our trace
 * processor, and one integer out of a query.
 */
#ifndef TB_BENCH_TRACE_H
#define TB_BENCH_TRACE_H

#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"

static inline double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* User + system seconds of the children waited for so far. */
static inline double bench_children_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_usec / 1e6;
}

/* path loaded into a new trace processor (free with tp_free); its size
 * into *bytes, the seconds it took into *secs. */
static inline struct tp *bench_load_trace(const char *path, double *secs, size_t *bytes)
{
	static uint8_t buf[1 << 20];
	struct tp *tp = tp_new(NULL);
	ssize_t n;
	int fd = open(path, O_RDONLY);
	double t0 = bench_now_s();
	*bytes = 0;
	while (fd >= 0 && (n = read(fd, buf, sizeof buf)) > 0) {
		tp_parse(tp, buf, (size_t)n);
		*bytes += (size_t)n;
	}
	tp_end_of_file(tp);
	*secs = bench_now_s() - t0;
	if (fd >= 0)
		close(fd);
	return tp;
}

/* The first column of the first row of sql, or -1. */
static inline long long bench_query_int(struct tp *tp, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_prepare_v2(tp_db(tp), sql, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

#endif
