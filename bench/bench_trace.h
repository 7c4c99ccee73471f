/*
 * Helpers the benchmarks share (perf_bench, storm_bench, the importer
 * benches): clocks, the CPU time of finished children, reading a file,
 * loading a trace with our trace processor (streamed, or whole as the shell
 * loads a file), and one integer out of a query.
 */
#ifndef TB_BENCH_TRACE_H
#define TB_BENCH_TRACE_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"

/* Seconds on clock c (CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID, ...). */
static inline double bench_clock_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline double bench_now_s(void)
{
	return bench_clock_s(CLOCK_MONOTONIC);
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

/* The whole of path in a new buffer (free with tb_free), its size in *len;
 * NULL, said on stderr, when it cannot be read. */
static inline uint8_t *bench_read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		fprintf(stderr, "bench: cannot open '%s'\n", path);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	size_t n = (size_t)sb.st_size, got = 0;
	uint8_t *buf = tb_malloc(n ? n : 1);
	while (got < n) {
		ssize_t r = read(fd, buf + got, n - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	*len = got;
	return buf;
}

/* data[0, len) loaded into a new trace processor (free with tp_free):
 * whole, read in place as the shell loads a file (tp_parse_file), else
 * through tp_parse in 1 MiB pieces (a stream: the importer copies them).
 * The process CPU and wall seconds it took go to *cpu and *wall; an import
 * error is said on stderr. */
static inline struct tp *bench_import(const uint8_t *data, size_t len, bool whole, double *cpu,
                                      double *wall)
{
	double c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID), w0 = bench_now_s();
	struct tp *tp = tp_new(NULL);
	if (whole)
		tp_parse_file(tp, data, len);
	else
		for (size_t at = 0; at < len; at += 1u << 20)
			if (tp_parse(tp, data + at, len - at < (1u << 20) ? len - at : 1u << 20) <
			    0)
				break;
	if (tp_end_of_file(tp) < 0)
		fprintf(stderr, "bench: %s\n", tp_error(tp));
	*cpu = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	*wall = bench_now_s() - w0;
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
