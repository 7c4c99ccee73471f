/*
 * Parquet export benchmark (issue 19): loads a trace, then exports its
 * tables as `trace_processor_shell export parquet` does (every view too
 * with TB_BENCH_ALL_VIEWS=1, as --all-views), in a fresh process per
 * trace, and prints the export's wall and CPU seconds, MB/s of trace input
 * by wall and by CPU time (load excluded), the bytes written, and the peak
 * RSS after loading and after exporting (the budget: export adds at most
 * 64 MB to the load's peak). Prints figures; asserts nothing.
 *
 *   parquet_bench              the traces tp_bench makes in out/bench/
 *                              (synth-200mb.pftrace, .sched-compact.pftrace,
 *                              .json, .ftrace.txt; TB_BENCH_MB=N for
 *                              synth-Nmb.*), those that exist
 *   parquet_bench FILE...      these traces
 *   parquet_bench one FILE     one trace (what the parent runs)
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
#include "trace_processor.h"
#include "shell/shell.h"

#define OUT_DIR "out/bench"

static double now_s(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long peak_rss_kb(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "VmHWM:", 6) == 0)
			kb = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

static int feed(void *ctx, const uint8_t *p, size_t n)
{
	return tp_parse(ctx, p, n);
}

static uint64_t dir_bytes(const char *dir, unsigned *files)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "du -sb '%s'; ls '%s' | wc -l", dir, dir);
	FILE *p = popen(cmd, "r");
	unsigned long long b = 0;
	if (p) {
		if (fscanf(p, "%llu%*s%u", &b, files) != 2)
			b = 0;
		pclose(p);
	}
	return b;
}

static int one(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		fprintf(stderr, "parquet_bench: cannot open '%s'\n", path);
		return 1;
	}
	double mb = (double)st.st_size / 1e6;
	double t0 = now_s(CLOCK_MONOTONIC);
	struct tp *tp = tp_new(NULL);
	if (tb_feed_fd(fd, 1 << 20, true, feed, tp) < 0 || tp_end_of_file(tp) < 0) {
		fprintf(stderr, "parquet_bench: cannot load '%s': %s\n", path, tp_error(tp));
		return 1;
	}
	close(fd);
	double load = now_s(CLOCK_MONOTONIC) - t0;
	long load_rss = peak_rss_kb();

	char dir[256];
	snprintf(dir, sizeof dir, OUT_DIR "/parquet.%d", (int)getpid());
	double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	int rc = tp_shell_export_parquet(tp, dir, "bench", getenv("TB_BENCH_ALL_VIEWS") != NULL,
	                                 getenv("TB_BENCH_GZIP") != NULL);
	double wall = now_s(CLOCK_MONOTONIC) - w0, cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	long rss = peak_rss_kb();
	unsigned files = 0;
	uint64_t bytes = dir_bytes(dir, &files);
	char cmd[320];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "parquet_bench: cannot remove %s\n", dir);
	tp_free(tp);
	if (rc != 0)
		return 1;
	const char *base = strrchr(path, '/');
	printf("%-24s %7.1f MB  load %6.2f s %7.1f MB/s  export %6.2f s (cpu %6.2f s) "
	       "%7.1f MB/s (cpu %7.1f MB/s)  %u files %7.1f MB  peak RSS load %6.1f MB, export "
	       "%6.1f MB (+%.1f)\n",
	       base ? base + 1 : path, mb, load, mb / load, wall, cpu, mb / wall, mb / cpu, files,
	       (double)bytes / 1e6, load_rss / 1024.0, rss / 1024.0, (rss - load_rss) / 1024.0);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const exts[] = {"pftrace", "sched-compact.pftrace", "json",
	                                   "ftrace.txt"};
	char defaults_buf[4][256];
	const char *defaults[5] = {NULL};
	const char *mbs = getenv("TB_BENCH_MB");
	unsigned long mb = mbs ? strtoul(mbs, NULL, 10) : 200;
	if (argc == 3 && strcmp(argv[1], "one") == 0)
		return one(argv[2]);
	for (int i = 0; i < 4; i++) {
		snprintf(defaults_buf[i], sizeof defaults_buf[i], OUT_DIR "/synth-%lumb.%s", mb,
		         exts[i]);
		defaults[i] = defaults_buf[i];
	}
	const char *const *list = argc > 1 ? (const char *const *)argv + 1 : defaults;
	int ran = 0;
	for (; *list; list++) {
		if (access(*list, R_OK) != 0) {
			printf("%s: missing (./build.sh bench tp makes it)\n", *list);
			continue;
		}
		pid_t pid = fork();
		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "one", *list, (char *)NULL);
			_exit(127);
		}
		int status = 0;
		waitpid(pid, &status, 0);
		ran++;
	}
	(void)ran;
	return 0;
}
