/*
 * Context-switch storm benchmark (DESIGN.md §6: zero loss at 550 k sched
 * events/s on 2 CPUs with default buffers; Perfetto v58.2 spent 40 ms of
 * traced_probes CPU and 16 ms of traced CPU on 1.1 M events, on a quieter
 * machine; TRACEBOX=path/to/perfetto's/tracebox measures it here). Prints
 * figures; asserts nothing. Needs root and tracefs; says SKIP otherwise.
 *
 * The storm: on each of the first two CPUs, TB_STORM_PAIRS (default 1)
 * pairs of processes pinned to that CPU ping-pong one byte over two pipes,
 * so every round trip is two sched_waking and two sched_switch events. The
 * capture: our own traced and traced_probes on private sockets, and
 * `tracebox perfetto -t 2s sched/sched_switch sched/sched_waking` (the
 * light config: default 32 MiB trace buffer, default ftrace per-CPU buffer
 * and drain period, compact_sched on, linux.process_stats), started while
 * the storm runs. Each daemon's CPU time over the capture comes from
 * /proc/PID/task/(star)/schedstat (ns); the trace is loaded with our trace
 * processor for the events recorded and every non-zero data-loss stat
 * (kernel overruns, service buffer losses). Holds /tmp/tb-ftrace-live.lock,
 * as the live ftrace tests do, so they do not share tracefs with it.
 *
 *   TB_STORM_SECS=N   capture length (default 2)
 *   TB_STORM_PAIRS=N  ping-pong pairs per CPU (default 1)
 *   TB_STORM_RUNS=N   captures (default 1), figures for each
 *   TRACEBOX=PATH     the binary to record with (default out/tracebox); Perfetto's
 *                     own tracebox works too (same applets, sockets and flags)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "bench_trace.h"
#include "sqlite3.h"
#include "trace_processor.h"

#define OUT_DIR "out/bench"
#define TRACE OUT_DIR "/storm.pftrace"
#define MAX_WORKERS 64

static const char *tracebox = "out/tracebox"; /* $TRACEBOX overrides */

static long env_long(const char *name, long def, long lo, long hi)
{
	const char *s = getenv(name);
	char *end;
	long v = s ? strtol(s, &end, 10) : def;
	return s && (*end || v < lo || v > hi) ? def : v;
}

/* ---- the storm -------------------------------------------------------------- */

static pid_t workers[MAX_WORKERS];
static int n_workers;
static _Atomic unsigned long *round_trips; /* shared with the workers */
static double storm_t0;

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof set, &set);
}

/* One side of a pair: forever write to out, read from in (the first side
 * writes first). Dies with the bench. */
static void worker(int cpu, int in, int out, bool first, const char *name)
{
	char c = 0;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_NAME, name);
	pin(cpu);
	if (!first && read(in, &c, 1) != 1)
		_exit(1);
	for (;;) {
		if (write(out, &c, 1) != 1 || read(in, &c, 1) != 1)
			_exit(1);
		if (first)
			atomic_fetch_add_explicit(round_trips, 1, memory_order_relaxed);
	}
}

static int storm_start(int ncpu, int pairs)
{
	if (!round_trips) {
		void *m = mmap(NULL, sizeof *round_trips, PROT_READ | PROT_WRITE,
		               MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED)
			return -1;
		round_trips = m;
	}
	atomic_store(round_trips, 0);
	storm_t0 = bench_now_s();
	for (int cpu = 0; cpu < ncpu; cpu++) {
		for (int p = 0; p < pairs && n_workers + 2 <= MAX_WORKERS; p++) {
			int ab[2], ba[2];
			char name[16];
			if (pipe(ab) || pipe(ba))
				return -1;
			for (int side = 0; side < 2; side++) {
				pid_t pid = fork();
				if (pid < 0)
					return -1;
				if (pid == 0) {
					snprintf(name, sizeof name, "tb-storm-%d%c", cpu,
					         side ? 'b' : 'a');
					worker(cpu, side ? ab[0] : ba[0], side ? ba[1] : ab[1],
					       side == 0, name);
				}
				workers[n_workers++] = pid;
			}
			close(ab[0]);
			close(ab[1]);
			close(ba[0]);
			close(ba[1]);
		}
	}
	return 0;
}

static void storm_stop(void)
{
	for (int i = 0; i < n_workers; i++)
		kill(workers[i], SIGKILL);
	for (int i = 0; i < n_workers; i++)
		waitpid(workers[i], NULL, 0);
	n_workers = 0;
}

/* ---- the daemons ------------------------------------------------------------ */

/* Start `out/tracebox APPLET` with a ready pipe in notify_env; wait for its
 * "1". stderr goes to out/bench/storm_APPLET.log. */
static pid_t spawn_daemon(const char *applet, const char *notify_env)
{
	int pfd[2];
	char c = 0, log[128];
	pid_t pid;

	if (pipe(pfd))
		return -1;
	snprintf(log, sizeof log, OUT_DIR "/storm_%s.log", applet);
	pid = fork();
	if (pid == 0) {
		char fd[16];
		int lfd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		close(pfd[0]);
		snprintf(fd, sizeof fd, "%d", pfd[1]);
		setenv(notify_env, fd, 1);
		if (lfd >= 0) {
			dup2(lfd, 1);
			dup2(lfd, 2);
		}
		execl(tracebox, "tracebox", applet, (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	if (pid < 0 || read(pfd[0], &c, 1) != 1 || c != '1') {
		close(pfd[0]);
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		return -1;
	}
	close(pfd[0]);
	return pid;
}

/* CPU time of every thread of pid so far, in ns (the first field of each
 * task's schedstat); -1 if unreadable. */
static long long cpu_ns(pid_t pid)
{
	char path[64];
	long long sum = 0;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	if (!(d = opendir(path)))
		return -1;
	while ((de = readdir(d))) {
		char p[320];
		long long ns;
		FILE *f;
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof p, "/proc/%d/task/%s/schedstat", (int)pid, de->d_name);
		if ((f = fopen(p, "r"))) {
			if (fscanf(f, "%lld", &ns) == 1)
				sum += ns;
			fclose(f);
		}
	}
	closedir(d);
	return sum;
}

/* Minor page faults of pid so far (the tenth field of /proc/PID/stat,
 * every thread); -1 if unreadable. A fault costs ~10 us on this VM. */
static long long minflt(pid_t pid)
{
	char path[64], buf[1024];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	if (fgets(buf, sizeof buf, f)) {
		const char *p = strrchr(buf, ')'); /* after the comm, which may hold spaces */
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %lld", &v) != 1)
			v = -1;
	}
	fclose(f);
	return v;
}

static const char *tracefs_dir;

static bool file_says(const char *rel, char want)
{
	char path[256], c = 0;
	int fd;
	snprintf(path, sizeof path, "%s/%s", tracefs_dir, rel);
	if ((fd = open(path, O_RDONLY)) < 0)
		return false;
	bool ok = read(fd, &c, 1) == 1 && c == want;
	close(fd);
	return ok;
}

/* Run argv; once the capture has enabled sched_switch and turned tracing
 * on, start the storm; wait for argv to finish. Its CPU seconds (rusage)
 * into *cpu. The storm starts after the setup because the kernel's
 * buffer_size_kb write waits for an RCU grace period, which a storm of
 * pinned tasks can stretch to seconds on this VM. */
static int run_with_storm(char *const argv[], int ncpu, int pairs, double *cpu)
{
	double before = bench_children_cpu_s();
	int st;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		int fd = open(OUT_DIR "/storm_perfetto.log", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -1;
	for (int i = 0; i < 1000 && !(file_says("events/sched/sched_switch/enable", '1') &&
	                              file_says("tracing_on", '1'));
	     i++)
		usleep(10 * 1000);
	if (storm_start(ncpu, pairs) < 0)
		printf("storm: cannot start the workload: %s\n", strerror(errno));
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	*cpu = bench_children_cpu_s() - before;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- the trace ---------------------------------------------------------------- */

/* Print every non-zero data-loss stat; their sum. */
static long long print_losses(struct tp *tp)
{
	sqlite3_stmt *st;
	long long total = 0;
	if (sqlite3_prepare_v2(
	        tp_db(tp),
	        "select name, idx, value from stats where value != 0 and "
	        "(severity = 'data_loss' or name like 'ftrace_cpu_%overrun%delta' or "
	        "name like 'ftrace_cpu_dropped%delta') order by name, idx",
	        -1, &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		long long v = sqlite3_column_int64(st, 2);
		printf("  lost: %s[%lld] = %lld\n", (const char *)sqlite3_column_text(st, 0),
		       sqlite3_column_int64(st, 1), v);
		total += v;
	}
	sqlite3_finalize(st);
	return total;
}

/* ---- one capture ---------------------------------------------------------------- */

static void capture(int run_no, long secs, int ncpu, int pairs)
{
	char t[16];
	snprintf(t, sizeof t, "%lds", secs);
	char *rec[] = {(char *)tracebox,     "perfetto",           "-t", t, "-o", TRACE,
	               "sched/sched_switch", "sched/sched_waking", NULL};
	pid_t traced = -1, probes = -1;
	long long traced0, probes0, traced_ns, probes_ns, events, switches, trips;
	long long traced_flt0, probes_flt0, traced_flt, probes_flt;
	double client_cpu = 0, t0, wall, storm_secs, load_secs;
	size_t bytes;
	struct tp *tp;

	unlink(TRACE);
	traced = spawn_daemon("traced", "TRACED_NOTIFY_FD");
	if (traced > 0)
		probes = spawn_daemon("traced_probes", "TRACED_PROBES_NOTIFY_FD");
	if (traced < 0 || probes < 0) {
		printf("SKIP storm: out/tracebox's traced/traced_probes did not start (see %s)\n",
		       OUT_DIR "/storm_*.log");
		goto out;
	}
	traced0 = cpu_ns(traced);
	probes0 = cpu_ns(probes);
	traced_flt0 = minflt(traced);
	probes_flt0 = minflt(probes);
	t0 = bench_now_s();
	if (run_with_storm(rec, ncpu, pairs, &client_cpu) != 0) {
		printf("SKIP storm: the capture failed (see %s)\n", OUT_DIR "/storm_perfetto.log");
		goto out;
	}
	wall = bench_now_s() - t0;
	traced_ns = cpu_ns(traced) - traced0;
	probes_ns = cpu_ns(probes) - probes0;
	traced_flt = minflt(traced) - traced_flt0;
	probes_flt = minflt(probes) - probes_flt0;
	trips = round_trips ? (long long)atomic_load(round_trips) : 0;
	storm_secs = bench_now_s() - storm_t0;
	storm_stop();

	tp = bench_load_trace(TRACE, &load_secs, &bytes);
	events = bench_query_int(tp, "select count(*) from ftrace_event "
	                             "where name in ('sched_switch', 'sched_waking')");
	switches =
	    bench_query_int(tp, "select count(*) from ftrace_event where name = 'sched_switch'");
	long long span = bench_query_int(tp, "select max(ts) - min(ts) from ftrace_event");
	printf("run %d: %lld sched events (%lld sched_switch) in %.2f s of events, "
	       "%.0f k events/s; trace %.1f MB; storm %.0f k round trips/s\n",
	       run_no, events, switches, span / 1e9, span > 0 ? events / (span / 1e6) : 0,
	       bytes / 1e6, trips / storm_secs / 1e3);
	printf("  imported by our trace processor in %.2f s (%.1f M events/s)\n", load_secs,
	       load_secs > 0 ? events / load_secs / 1e6 : 0);
	long long lost = print_losses(tp);
	/* What the kernel handed to readers (traced_probes) and the trace
	 * does not hold: packets the producer dropped (SMB full) or the
	 * service lost. */
	long long read = bench_query_int(tp, "select sum(value) from stats "
	                                     "where name = 'ftrace_cpu_read_events_delta'");
	/* In the file but not imported (counted by the trace processor). */
	long long unimported =
	    bench_query_int(tp, "select sum(value) from stats where name in "
	                        "('compact_sched_switch_skipped', 'compact_sched_waking_skipped', "
	                        "'sorter_push_event_out_of_order')");
	long long missing = read - events - (unimported > 0 ? unimported : 0);
	printf("  read from the kernel %lld, in the trace %lld (%lld of them not imported by the "
	       "trace processor): %lld missing\n",
	       read, events + unimported, unimported, missing);
	printf("  lost total: %lld\n", lost + (missing > 0 ? missing : 0));
	printf("  traced_probes %.1f ms CPU (%.1f ns/event), traced %.1f ms CPU (%.1f ns/event), "
	       "perfetto client %.1f ms; capture wall %.2f s\n",
	       probes_ns / 1e6, events > 0 ? (double)probes_ns / events : 0, traced_ns / 1e6,
	       events > 0 ? (double)traced_ns / events : 0, client_cpu * 1e3, wall);
	printf("  page faults: traced_probes %lld, traced %lld\n", probes_flt, traced_flt);
	printf("  (Perfetto's own tracebox runs the same capture with TRACEBOX=its path: its "
	       "daemons take the same applet names, sockets and flags)\n");
	tp_free(tp);
out:
	storm_stop();
	if (probes > 0) {
		kill(probes, SIGTERM);
		waitpid(probes, NULL, 0);
	}
	if (traced > 0) {
		kill(traced, SIGTERM);
		waitpid(traced, NULL, 0);
	}
}

int main(void)
{
	long secs = env_long("TB_STORM_SECS", 2, 1, 600);
	long pairs = env_long("TB_STORM_PAIRS", 1, 1, MAX_WORKERS / 4);
	long runs = env_long("TB_STORM_RUNS", 1, 1, 100);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char name[64];

	if (getuid() != 0) {
		printf("SKIP storm: needs root (tracefs)\n");
		return 0;
	}
	tracefs_dir = access("/sys/kernel/tracing/trace_pipe", F_OK) == 0
	                  ? "/sys/kernel/tracing"
	                  : "/sys/kernel/debug/tracing";
	if (access("/sys/kernel/tracing/trace_pipe", F_OK) != 0 &&
	    access("/sys/kernel/debug/tracing/trace_pipe", F_OK) != 0) {
		printf(
		    "SKIP storm: no tracefs at /sys/kernel/tracing or /sys/kernel/debug/tracing\n");
		return 0;
	}
	if (getenv("TRACEBOX"))
		tracebox = getenv("TRACEBOX");
	if (access(tracebox, X_OK) != 0) {
		printf("SKIP storm: no %s (./build.sh)\n", tracebox);
		return 0;
	}
	mkdir(OUT_DIR, 0755);
	/* tracefs is one per machine: wait for other live ftrace tests. */
	int lock = open("/tmp/tb-ftrace-live.lock", O_RDWR | O_CREAT, 0666);
	if (lock >= 0)
		flock(lock, LOCK_EX);
	ncpu = ncpu < 1 ? 1 : ncpu > 2 ? 2 : ncpu;
	snprintf(name, sizeof name, "@tb-storm-c-%d", (int)getpid());
	setenv("PERFETTO_CONSUMER_SOCK_NAME", name, 1);
	snprintf(name, sizeof name, "@tb-storm-p-%d", (int)getpid());
	setenv("PERFETTO_PRODUCER_SOCK_NAME", name, 1);
	setenv("TRACEBOX_LOG", "warn", 0);
	printf("storm: %ld pair(s) of pinned ping-pong processes on each of %ld CPU(s), "
	       "%ld s captures of sched_switch + sched_waking with default buffers\n",
	       pairs, ncpu, secs);
	for (long i = 1; i <= runs; i++)
		capture((int)i, secs, (int)ncpu, (int)pairs);
	return 0;
}
