/*
 * DWARF unwinding benchmark (issue 13): what `user_frames: UNWIND_DWARF`
 * costs a profiled program and traced_perf, next to `perf record
 * --call-graph dwarf`. Prints figures; asserts nothing. Needs root (or
 * perf_event_paranoid <= 1), gcc, and perf for the comparison; says so when
 * a part cannot run.
 *
 * The workload is tests/data/perf_dwarf_workload.c built with `gcc -O2
 * -fomit-frame-pointer` (no frame-pointer chain; hot paths through libc's
 * qsort), doing a fixed amount of work (`fixed` mode, TB_BENCH_UNITS * 100
 * rounds, default 5: ~3 s of CPU here). Each configuration runs
 * TB_BENCH_RUNS times (default 3), alternating; the workload's own CPU time
 * (best run) gives its slowdown against running alone:
 *   tracebox DWARF 100 Hz, tracebox DWARF 1000 Hz, perf --call-graph dwarf
 *   1000 Hz (perf's default 8 KiB stack copies, and 64 KiB as ours);
 * the recorder's CPU (every process of the capture but the workload) per
 * second of capture; samples per CPU second of the workload, lost records
 * and skipped samples from the trace; and traced_perf's own per-stack
 * unwind time (median, p99) from its stop log (TRACEBOX_LOG=perf=info).
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"
#include "bench_trace.h"
#include "sqlite3.h"
#include "trace_processor.h"

#define OUT_DIR "out/bench"
#define WL OUT_DIR "/dwarfwl"

/* Run argv with stdout to /dev/null and stderr to err_path (or /dev/null);
 * its and its children's CPU seconds into *cpu. */
static int run(char *const argv[], const char *err_path, double *cpu)
{
	double before = bench_children_cpu_s();
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		int efd = err_path ? open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : fd;
		if (fd >= 0)
			dup2(fd, 1);
		if (efd >= 0)
			dup2(efd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	*cpu = bench_children_cpu_s() - before;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int read_result(const char *path, int *pid, double *cpu_s)
{
	long long ns = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int ok = fscanf(f, "%d %lld", pid, &ns) == 2;
	fclose(f);
	*cpu_s = (double)ns / 1e9;
	return ok ? 0 : -1;
}

struct result {
	const char *name;
	double wcpu;           /* best workload CPU seconds */
	double rec_pct;        /* recorder CPU, % of one CPU over the capture */
	long long samples;     /* workload samples in the trace */
	long long lost;        /* kernel lost records + skipped (data loss) */
	long long skipped;     /* read/unwind stage skips */
	double med_us, p99_us; /* traced_perf's unwind time per stack */
	bool ok;
};

static void write_cfg(const char *path, int hz)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return;
	fprintf(f,
	        "duration_ms: 300000\n"
	        "buffers { size_kb: 262144 fill_policy: RING_BUFFER }\n"
	        "data_sources { config { name: \"linux.perf\" perf_event_config {\n"
	        "  timebase { counter: SW_CPU_CLOCK frequency: %d }\n"
	        "  callstack_sampling { user_frames: UNWIND_DWARF }\n"
	        "} } }\n",
	        hz);
	fclose(f);
}

/* One tracebox run; updates r when its workload CPU is the best so far. */
static void run_tracebox(struct result *r, const char *cfg, const char *units)
{
	char res[] = OUT_DIR "/perf_dwarf_bench.res", trace[] = OUT_DIR "/perf_dwarf_bench.pftrace";
	char errp[] = OUT_DIR "/perf_dwarf_bench.err", line[1024], q[256];
	char *argv[] = {"out/tracebox", "--txt", "-c", (char *)cfg,   "-o",    trace,
	                "--",           WL,      res,  (char *)units, "fixed", NULL};
	double cpu, wcpu, t0 = bench_now_s(), t;
	int pid;
	setenv("TRACEBOX_LOG", "perf=info", 1);
	int rc = run(argv, errp, &cpu);
	unsetenv("TRACEBOX_LOG");
	t = bench_now_s() - t0;
	if (rc != 0 || read_result(res, &pid, &wcpu) < 0)
		return;
	if (r->ok && wcpu >= r->wcpu)
		return;
	r->ok = true;
	r->wcpu = wcpu;
	r->rec_pct = 100.0 * (cpu - wcpu) / t;
	FILE *f = fopen(errp, "r");
	while (f && fgets(line, sizeof line, f)) {
		const char *m = strstr(line, "per stack median ");
		if (m)
			sscanf(m, "per stack median %lf us, p99 %lf us", &r->med_us, &r->p99_us);
	}
	if (f)
		fclose(f);
	size_t bytes;
	double secs;
	struct tp *tp = bench_load_trace(trace, &secs, &bytes);
	snprintf(q, sizeof q,
	         "select count(*) from perf_sample join thread using (utid) where tid = %d", pid);
	r->samples = bench_query_int(tp, q);
	r->lost = bench_query_int(tp, "select sum(value) from stats where name in "
	                              "('perf_samples_skipped_dataloss', 'perf_cpu_lost_records')");
	r->skipped = bench_query_int(tp, "select sum(value) from stats where name = "
	                                 "'perf_samples_skipped'");
	tp_free(tp);
}

/* One perf record run (stack copy of `stack` bytes). */
static void run_perf(struct result *r, const char *units, const char *stack)
{
	char res[] = OUT_DIR "/perf_dwarf_bench.res", data[] = OUT_DIR "/perf_dwarf_bench.data";
	char cg[32];
	snprintf(cg, sizeof cg, "dwarf,%s", stack);
	char *argv[] = {"perf", "record", "-q", "-F", "1000",        "--call-graph", cg,  "-o",
	                data,   "--",     WL,   res,  (char *)units, "fixed",        NULL};
	double cpu, wcpu, t0 = bench_now_s();
	int pid;
	if (run(argv, NULL, &cpu) != 0 || read_result(res, &pid, &wcpu) < 0)
		return;
	if (r->ok && wcpu >= r->wcpu)
		return;
	r->ok = true;
	r->wcpu = wcpu;
	r->rec_pct = 100.0 * (cpu - wcpu) / (bench_now_s() - t0);
	r->samples = -1;
}

int main(void)
{
	const char *u = getenv("TB_BENCH_UNITS"), *rn = getenv("TB_BENCH_RUNS");
	const char *units = u && *u ? u : "5";
	int runs = rn && *rn ? (int)strtol(rn, NULL, 10) : 3;
	char res[] = OUT_DIR "/perf_dwarf_bench.res";
	char c100[] = OUT_DIR "/perf_dwarf_100.pbtx", c1000[] = OUT_DIR "/perf_dwarf_1000.pbtx";
	struct result alone = {.name = "alone"}, t100 = {.name = "tracebox DWARF 100 Hz"},
	              t1000 = {.name = "tracebox DWARF 1000 Hz"},
	              p8 = {.name = "perf dwarf 1000 Hz (8 KiB)"},
	              p64 = {.name = "perf dwarf 1000 Hz (64 KiB)"};
	struct result *all[] = {&alone, &t100, &t1000, &p8, &p64};
	bool have_perf = system("perf --version >/dev/null 2>&1") == 0;
	double cpu, wcpu;
	int pid;

	if (system("gcc -O2 -fomit-frame-pointer -g -o " WL " tests/data/perf_dwarf_workload.c") !=
	    0) {
		printf("perf_dwarf: skipped (gcc cannot build the workload)\n");
		return 0;
	}
	write_cfg(c100, 100);
	write_cfg(c1000, 1000);
	for (int i = 0; i < runs; i++) {
		char *plain[] = {WL, res, (char *)units, "fixed", NULL};
		if (run(plain, NULL, &cpu) == 0 && read_result(res, &pid, &wcpu) == 0 &&
		    (!alone.ok || wcpu < alone.wcpu))
			alone.ok = true, alone.wcpu = wcpu;
		run_tracebox(&t100, c100, units);
		run_tracebox(&t1000, c1000, units);
		if (have_perf) {
			run_perf(&p8, units, "8192");
			run_perf(&p64, units, "65528");
		}
	}
	if (!alone.ok || !t100.ok) {
		printf("perf_dwarf: skipped (out/tracebox could not record linux.perf: root?)\n");
		return 0;
	}
	printf("perf_dwarf: workload %.3f s CPU alone (best of %d)\n", alone.wcpu, runs);
	for (size_t i = 1; i < TB_ARRAY_SIZE(all); i++) {
		struct result *r = all[i];
		if (!r->ok) {
			printf("  %-28s did not run%s\n", r->name, have_perf ? "" : " (no perf)");
			continue;
		}
		printf("  %-28s workload %.3f s: %+.2f %%, recorder %.1f %% of a CPU", r->name,
		       r->wcpu, 100.0 * (r->wcpu - alone.wcpu) / alone.wcpu, r->rec_pct);
		if (r->samples >= 0)
			printf("; %.1f samples per CPU s, %lld lost/shed, %lld skipped; unwind per "
			       "stack median %.2f us, p99 %.2f us",
			       (double)r->samples / r->wcpu, r->lost, r->skipped, r->med_us,
			       r->p99_us);
		printf("\n");
	}
	return 0;
}
