/*
 * perf.data import benchmark (issue 14): a CPU-bound workload with
 * callchains of depth ~12 is recorded by `perf record -e cpu-clock -c 10000
 * -g` (~TB_BENCH_SECS=3 s of it), its samples repeated (times shifted) into
 * a pipe-mode file of ~TB_BENCH_SAMPLES=2 M samples, then that file is
 * loaded whole (tp_parse_file, as the shell loads a file) and through
 * tp_parse in 1 MiB pieces (best of
 * TB_BENCH_RUNS=3): samples/s by wall and CPU time, MB/s; and `perf script`
 * on the same file, its wall time to /dev/null. Prints figures, asserts
 * nothing; needs perf and perf_event_open (says so when it cannot run).
 *
 *   perf_data_bench              record, import, compare
 *   perf_data_bench spin SECS    the workload
 *   perf_data_bench import FILE  only the import of FILE
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "bench_trace.h"
#include "sqlite3.h"
#include "trace_processor.h"

#define OUT_DIR "out/bench"
#define DATA OUT_DIR "/perf_data_bench.data"
#define BIG OUT_DIR "/perf_data_bench_big.data"

static volatile unsigned long sink;

static __attribute__((noinline)) void leaf(void)
{
	unsigned long acc = sink;
	for (int i = 0; i < 20000; i++) {
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(acc));
	}
	sink = acc;
}

static __attribute__((noinline)) void descend(int depth)
{
	if (depth == 0)
		leaf();
	else if (depth & 1)
		descend(depth - 1);
	else
		descend(depth - 1);
	__asm__ volatile("");
}

static int spin_main(double secs)
{
	double end = bench_now_s() + secs;
	unsigned k = 0;
	while (bench_now_s() < end)
		descend(8 + (int)(k++ % 5));
	return 0;
}

/* A pipe-mode perf.data of ~want samples from a recorded file: its attrs
 * as HEADER_ATTR records, its non-sample records once, its sample records
 * repeated with their times shifted past the previous copy's. Returns the
 * samples written, 0 when the file is not a perf.data with TIME samples. */
static size_t amplify(const uint8_t *in, size_t n, const char *out, size_t want)
{
	if (n < 104 || memcmp(in, "PERFILE2", 8) != 0 || tb_ld64(in + 8) != 104)
		return 0;
	uint64_t asz = tb_ld64(in + 16), aoff = tb_ld64(in + 24), alen = tb_ld64(in + 32);
	uint64_t doff = tb_ld64(in + 40), dlen = tb_ld64(in + 48);
	if (asz < 80 || aoff + alen > n || doff + dlen > n)
		return 0;
	uint64_t st = tb_ld64(in + aoff + 24);
	if (!(st & 4)) /* PERF_SAMPLE_TIME */
		return 0;
	size_t tpos = 8 + 8 * (size_t)__builtin_popcountll(st & (1u << 16 | 1u | 2u));
	FILE *f = fopen(out, "wb");
	if (!f)
		return 0;
	uint64_t hsz = 16;
	fwrite("PERFILE2", 1, 8, f);
	fwrite(&hsz, 8, 1, f);
	for (uint64_t a = 0; a + asz <= alen; a += asz) {
		const uint8_t *e = in + aoff + a;
		uint64_t ioff = tb_ld64(e + asz - 16), ilen = tb_ld64(e + asz - 8);
		if (ioff + ilen > n)
			ilen = 0;
		uint32_t type = 64;
		uint16_t misc = 0, sz = (uint16_t)(8 + asz - 16 + ilen);
		fwrite(&type, 4, 1, f);
		fwrite(&misc, 2, 1, f);
		fwrite(&sz, 2, 1, f);
		fwrite(e, 1, asz - 16, f);
		fwrite(in + ioff, 1, ilen, f);
	}
	uint64_t tmin = UINT64_MAX, tmax = 0;
	size_t per = 0;
	for (uint64_t p = doff; p + 8 <= doff + dlen;) {
		uint32_t type;
		uint16_t sz;
		memcpy(&type, in + p, 4);
		memcpy(&sz, in + p + 6, 2);
		if (sz < 8)
			break;
		if (type == 9 && sz >= tpos + 8) {
			uint64_t t = tb_ld64(in + p + tpos);
			tmin = t < tmin ? t : tmin;
			tmax = t > tmax ? t : tmax;
			per++;
		} else if (type != 68) {
			fwrite(in + p, 1, sz, f);
		}
		p += sz;
	}
	size_t written = 0;
	uint8_t rec[65536];
	for (uint64_t k = 0; per && written < want; k++) {
		uint64_t shift = k * (tmax - tmin + 1000);
		for (uint64_t p = doff; p + 8 <= doff + dlen;) {
			uint32_t type;
			uint16_t sz;
			memcpy(&type, in + p, 4);
			memcpy(&sz, in + p + 6, 2);
			if (sz < 8)
				break;
			if (type == 9 && sz >= tpos + 8) {
				memcpy(rec, in + p, sz);
				uint64_t t = tb_ld64(rec + tpos) + shift;
				memcpy(rec + tpos, &t, 8);
				fwrite(rec, 1, sz, f);
				written++;
			}
			p += sz;
		}
	}
	fclose(f);
	return written;
}

/* Import path best of TB_BENCH_RUNS times: whole, read in place as the
 * shell loads a file (tp_parse_file), else in 1 MiB tp_parse pieces (a
 * stream: the importer copies them). */
static int import_as(const char *path, bool whole)
{
	size_t got;
	uint8_t *buf = bench_read_file(path, &got);
	if (!buf)
		return 1;
	const char *e = getenv("TB_BENCH_RUNS");
	int runs = e ? (int)strtol(e, NULL, 10) : 3;
	double best_wall = 1e9, best_cpu = 1e9;
	long long samples = 0, frames = 0;
	for (int r = 0; r < (runs > 0 ? runs : 1); r++) {
		double c, w;
		struct tp *tp = bench_import(buf, got, whole, &c, &w);
		samples = bench_query_int(tp, "select count(*) from perf_sample");
		frames = bench_query_int(tp, "select count(*) from stack_profile_callsite");
		tp_free(tp);
		if (w < best_wall)
			best_wall = w;
		if (c < best_cpu)
			best_cpu = c;
	}
	tb_free(buf);
	printf("perf.data import (%s): %.1f MB, %lld samples (%lld callsites): wall %.3f s (%.2f M "
	       "samples/s, %.0f MB/s), cpu %.3f s (%.2f M samples/s)\n",
	       whole ? "whole file" : "1 MiB pieces", (double)got / 1e6, samples, frames, best_wall,
	       (double)samples / best_wall / 1e6, (double)got / best_wall / 1e6, best_cpu,
	       (double)samples / best_cpu / 1e6);
	return 0;
}

static int import(const char *path)
{
	int rc = import_as(path, true);
	return rc ? rc : import_as(path, false);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "spin") == 0)
		return spin_main(strtod(argv[2], NULL));
	if (argc == 3 && strcmp(argv[1], "import") == 0)
		return import(argv[2]);
	const char *e = getenv("TB_BENCH_SECS");
	char cmd[1024];
	mkdir("out", 0755);
	mkdir(OUT_DIR, 0755);
	snprintf(cmd, sizeof cmd,
	         "perf record -q -e cpu-clock -c 10000 -g -o %s -- %s spin %s >/dev/null 2>&1",
	         DATA, argv[0], e ? e : "3");
	if (system(cmd) != 0) {
		printf(
		    "perf.data import: cannot record (perf missing or perf_event_open refused)\n");
		return 0;
	}
	/* The recording, made ~TB_BENCH_SAMPLES (2 M) samples long. */
	const char *ns = getenv("TB_BENCH_SAMPLES");
	size_t want = ns ? (size_t)strtoull(ns, NULL, 10) : 2000000;
	int fd = open(DATA, O_RDONLY);
	struct stat sb;
	size_t got = 0;
	if (fd < 0 || fstat(fd, &sb) != 0)
		return 1;
	uint8_t *buf = tb_malloc((size_t)sb.st_size + 1);
	while (got < (size_t)sb.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)sb.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	size_t made = amplify(buf, got, BIG, want);
	tb_free(buf);
	if (!made) {
		printf("perf.data import: the recording has no timed samples\n");
		return 0;
	}
	int rc = import(BIG);
	double w0 = bench_now_s();
	snprintf(cmd, sizeof cmd, "perf script -i %s >/dev/null 2>&1", BIG);
	if (system(cmd) == 0)
		printf("perf script on the same file: wall %.3f s\n", bench_now_s() - w0);
	w0 = bench_now_s();
	snprintf(cmd, sizeof cmd, "perf script -i %s -G -F tid >/dev/null 2>&1", BIG);
	if (system(cmd) == 0)
		printf("perf script -F tid (no symbols): wall %.3f s\n", bench_now_s() - w0);
	return rc;
}
