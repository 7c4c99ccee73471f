/*
 * Batch query benchmark (issue 19): `trace_processor_shell query --batch`
 * over 100 generated Chrome JSON traces of 0.5 to 2 MB (nested X events
 * with args on 4 threads, each trace a different size), wall time with
 * -j 1 and -j 2 (best of TB_BENCH_RUNS, default 3, alternating), the
 * speed-up, per-trace time, the CPU seconds each run used (and so how many
 * CPUs it kept busy), and the load average before and after, since the
 * machine is shared. The traces are generated once into
 * out/bench/batch/. `TRACEBOX=path` picks the binary (default
 * out/tracebox); TB_BENCH_TRACES=N another count. Prints figures only.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"

#define DIR "out/bench/batch"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void loadavg(char *buf, size_t n)
{
	FILE *f = fopen("/proc/loadavg", "r");
	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)n, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
}

/* Trace k: about bytes of JSON. */
static int make_trace(const char *path, int k, size_t bytes)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fputs("{\"traceEvents\":[\n", f);
	long ts = 1000;
	size_t i = 0;
	while ((size_t)ftell(f) < bytes) {
		int tid = 1 + (int)(i % 4);
		fprintf(f,
		        "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%ld,\"dur\":50,\"name\":"
		        "\"outer%zu\","
		        "\"cat\":\"c\",\"args\":{\"i\":%zu,\"k\":%d}},\n"
		        "{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%ld,\"dur\":20,\"name\":"
		        "\"inner%zu\","
		        "\"cat\":\"c\",\"args\":{\"s\":\"v%zu\"}},\n",
		        k, tid, ts, i % 17, i, k, k, tid, ts + 10, i % 5, i % 101);
		ts += 60;
		i++;
	}
	fprintf(f,
	        "{\"ph\":\"M\",\"pid\":%d,\"name\":\"process_name\",\"args\":{\"name\":\"p%d\"}}"
	        "\n]}\n",
	        k, k);
	return fclose(f);
}

/* Run TRACEBOX query --batch -j jobs; wall seconds, or -1. *cpu gets the
 * CPU seconds of the run (the batch process, its workers and theirs). */
static double run(const char *tracebox, int jobs, int ntraces, double *cpu)
{
	char j[16];
	snprintf(j, sizeof j, "%d", jobs);
	const char **argv = tb_calloc((size_t)ntraces + 16, sizeof *argv);
	int a = 0;
	argv[a++] = tracebox;
	argv[a++] = "trace_processor_shell";
	argv[a++] = "query";
	argv[a++] = "--batch";
	argv[a++] = "-j";
	argv[a++] = j;
	argv[a++] = "-f";
	argv[a++] = DIR "/q.sql";
	argv[a++] = "-o";
	argv[a++] = DIR "/result.csv";
	argv[a++] = "--batch-list";
	argv[a++] = DIR "/list.txt";
	argv[a] = NULL;
	double t0 = now_s();
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		execv(tracebox, (char *const *)argv);
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	wait4(pid, &status, 0, &ru);
	double t = now_s() - t0;
	*cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	tb_free(argv);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "batch_bench: -j %d exited with status %d\n", jobs, status);
		return -1;
	}
	return t;
}

int main(void)
{
	const char *tracebox = getenv("TRACEBOX") ? getenv("TRACEBOX") : "out/tracebox";
	int ntraces =
	    getenv("TB_BENCH_TRACES") ? (int)strtol(getenv("TB_BENCH_TRACES"), NULL, 10) : 100;
	int runs = getenv("TB_BENCH_RUNS") ? (int)strtol(getenv("TB_BENCH_RUNS"), NULL, 10) : 3;
	char path[256], la0[128], la1[128];
	size_t total = 0;
	if (ntraces < 1 || runs < 1)
		return 1;
	mkdir("out/bench", 0755);
	mkdir(DIR, 0755);
	FILE *list = fopen(DIR "/list.txt", "w");
	if (!list) {
		fprintf(stderr, "batch_bench: cannot write " DIR ": %s\n", strerror(errno));
		return 1;
	}
	for (int k = 0; k < ntraces; k++) {
		size_t bytes = 500000 + (size_t)(k * 37 % 100) * 15000;
		struct stat st;
		snprintf(path, sizeof path, DIR "/t%03d.json", k);
		if ((stat(path, &st) != 0 || (size_t)st.st_size < bytes) &&
		    make_trace(path, k, bytes) != 0) {
			fprintf(stderr, "batch_bench: cannot write %s\n", path);
			return 1;
		}
		if (stat(path, &st) == 0)
			total += (size_t)st.st_size;
		fprintf(list, "%s\n", path);
	}
	fclose(list);
	FILE *q = fopen(DIR "/q.sql", "w");
	if (!q)
		return 1;
	fputs("select name, count(*) as n, sum(dur) as total_dur from slice "
	      "group by name order by n desc, name limit 5;\n",
	      q);
	fclose(q);

	loadavg(la0, sizeof la0);
	double best1 = 1e9, best2 = 1e9, cpu1 = 0, cpu2 = 0;
	for (int r = 0; r < runs; r++) {
		double c1, c2;
		double t1 = run(tracebox, 1, ntraces, &c1), t2 = run(tracebox, 2, ntraces, &c2);
		if (t1 < 0 || t2 < 0)
			return 1;
		if (t1 < best1)
			best1 = t1, cpu1 = c1;
		if (t2 < best2)
			best2 = t2, cpu2 = c2;
	}
	loadavg(la1, sizeof la1);
	printf("batch: %d traces, %.1f MB in all (%.2f MB each), %d runs, best of each\n", ntraces,
	       (double)total / 1e6, (double)total / 1e6 / ntraces, runs);
	printf("  -j 1: %.3f s (%.1f ms a trace, %.1f MB/s), %.2f s of CPU (%.2f CPUs busy)\n",
	       best1, best1 * 1e3 / ntraces, (double)total / 1e6 / best1, cpu1, cpu1 / best1);
	printf("  -j 2: %.3f s (%.1f ms a trace, %.1f MB/s), %.2f s of CPU (%.2f CPUs busy)\n",
	       best2, best2 * 1e3 / ntraces, (double)total / 1e6 / best2, cpu2, cpu2 / best2);
	printf("  speed-up -j 2 over -j 1: %.2fx (online cpus %ld)\n", best1 / best2,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("  loadavg before: %s\n  loadavg after:  %s\n", la0, la1);
	return 0;
}
