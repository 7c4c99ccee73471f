/*
 * ftrace benchmark: traced_probes' per-event cost of turning ring-buffer
 * pages into an FtraceEventBundle (page walk, field decoding, protobuf
 * writes), the budget of DESIGN.md §6 (<= 30 ns per event; Perfetto's
 * traced_probes spends about 37). Pages are built in the kernel's ring
 * buffer format and filled with sched_switch records, using this machine's
 * events/header_page and sched_switch format when tracefs is readable
 * (synthesized copies of x86-64's otherwise). Both encodings are timed:
 * individual FtraceEvents and compact_sched, in thread CPU time (best of
 * REPS). Prints figures only.
 *
 * `ftrace_bench [walk|plain|plain-pids|compact|pids]` runs one case, for instruction
 * counts: TB_BENCH_REPS=1 valgrind --tool=callgrind
 * --toggle-collect=probes_ftrace_encode_bundle_opts out/bench/ftrace_bench compact
 */
#include <time.h>

#include "ftrace_pages.h"
#include "pb.h"

/* This thread's CPU time: the machine is shared, and time spent waiting
 * for a core is not the encoder's. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define NPAGES 2048

/* Repetitions (best of); TB_BENCH_REPS=1 for callgrind. */
static int REPS = 20;

/* with_pids: also collect the tasks events mention, as traced_probes does
 * for process_stats (cleared per rep, as per drain). */
static void run(const char *what, const struct ftrace_table *t, const uint8_t *pages, size_t events,
                bool compact, bool with_pids)
{
	size_t cap = NPAGES * (size_t)t->layout.page_size * 2;
	uint8_t *out = tb_malloc(cap);
	struct ftrace_pids pids;
	struct ftrace_encode_opts o = {.compact_sched = compact, .pids = with_pids ? &pids : NULL};
	double best = 1e9;
	size_t bytes = 0;

	for (int rep = 0; rep < REPS; rep++) {
		struct probes_ftrace_encode_stats st = {0};
		struct pb_writer w;
		double t0;
		pb_writer_init_fixed(&w, out, cap);
		memset(&pids, 0, sizeof pids);
		t0 = now_s();
		/* One bundle per 64 pages, as a drain of a busy CPU writes. */
		for (size_t pg = 0; pg < NPAGES; pg += 64) {
			unsigned h = pb_begin_nested(&w, 1);
			probes_ftrace_encode_bundle_opts(&w, t, &o, 0,
			                                 pages + pg * t->layout.page_size,
			                                 64 * (size_t)t->layout.page_size, &st);
			pb_end_nested(&w, h);
		}
		t0 = now_s() - t0;
		probes_ftrace_pids_release(&pids);
		if (pb_writer_error(&w) || st.events != events) {
			fprintf(stderr, "ftrace_bench: encode failed (%llu of %zu events)\n",
			        (unsigned long long)st.events, events);
			exit(1);
		}
		if (t0 < best)
			best = t0;
		bytes = pb_writer_size(&w);
	}
	printf("%-34s %6.1f ns/event  %5.1f bytes/event  (%zu events, best of %d)\n", what,
	       best * 1e9 / (double)events, (double)bytes / (double)events, events, REPS);
	probes_ftrace_encode_opts_release(&o);
	tb_free(out);
}

/* The floor: walking the records without decoding them. */
static void run_walk(const struct ftrace_table *t, const uint8_t *pages, size_t events)
{
	double best = 1e9;
	uint64_t sum = 0;
	for (int rep = 0; rep < REPS; rep++) {
		double t0 = now_s();
		for (size_t pg = 0; pg < NPAGES; pg++) {
			struct ftrace_page_iter it;
			struct ftrace_record rec;
			probes_ftrace_page_begin(&it, &t->layout, pages + pg * t->layout.page_size,
			                         t->layout.page_size);
			while (probes_ftrace_page_next(&it, &rec))
				sum += rec.ts;
		}
		t0 = now_s() - t0;
		if (t0 < best)
			best = t0;
	}
	printf("%-34s %6.1f ns/event  (checksum %llu)\n", "page walk only",
	       best * 1e9 / (double)events, (unsigned long long)(sum & 0xff));
}

int main(int argc, char **argv)
{
	const char *only = argc > 1 ? argv[1] : NULL;
	const char *reps = getenv("TB_BENCH_REPS");
	struct ftrace_table t;
	const char *src = bench_load_table(&t);
	uint8_t *pages = tb_malloc(NPAGES * (size_t)t.layout.page_size);
	struct bench_cpu cpu = {.tid_base = 1000, .ts = 1000000000ull};
	size_t events = bench_build_pages(&t, &cpu, false, pages, NPAGES);

	if (reps && strtol(reps, NULL, 10) > 0)
		REPS = (int)strtol(reps, NULL, 10);
	printf("pages of sched_switch built from %s (%u-byte pages)\n", src, t.layout.page_size);
	if (!only || !strcmp(only, "walk"))
		run_walk(&t, pages, events);
	if (!only || !strcmp(only, "plain"))
		run("sched_switch -> FtraceEvent", &t, pages, events, false, false);
	if (only && !strcmp(only, "plain-pids"))
		run("FtraceEvent + pids for ps", &t, pages, events, false, true);
	if (!only || !strcmp(only, "compact"))
		run("sched_switch -> compact_sched", &t, pages, events, true, false);
	if (!only || !strcmp(only, "pids"))
		run("compact_sched + pids for ps", &t, pages, events, true, true);
	tb_free(pages);
	probes_ftrace_table_release(&t);
	return 0;
}
