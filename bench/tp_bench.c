/*
 * Trace processor ingest benchmark (DESIGN.md §6): makes deterministic
 * synthetic traces once (out/bench/synth.json: nested X events with args;
 * out/bench/synth.pftrace: interned begin/end track events on 8 threads;
 * out/bench/synth.ftrace.txt: trace-cmd report text of sched_switch,
 * sched_waking, atrace B/E and a generic event on 4 cpus;
 * out/bench/sched-compact.pftrace: sched_switch + sched_waking on 2 cpus
 * recorded the way traced_probes does, ring-buffer pages through its
 * compact_sched encoder), then loads each in a fresh process and prints
 * MB/s, ftrace events/s and peak RSS (also per event) for loading plus
 * `select count(*) from slice`. Prints figures; asserts nothing.
 *
 *   tp_bench                 generate if missing, then load each shape
 *   tp_bench json|jsongz|jsonsmall|pytorch|chrome|proto|ftrace|sched
 *                            only that one (jsongz: json's trace gzip'd,
 *                            inflated on a helper thread as it loads;
 *                            pytorch: a Kineto-like trace
 *                            of CPU ops, launches, GPU kernels and their
 *                            flows; chrome: B/E tasks, async, flows,
 *                            instants, counters, metadata)
 *   tp_bench load FILE       load one trace (what the parent runs)
 *   tp_bench large [MB...]   the large-trace curve: a mixed JSON trace of
 *                            512, 1024, 2048, 4096 MB (or the sizes given)
 *                            made on disk, loaded, removed
 *   TB_BENCH_MB=50 tp_bench  smaller traces (default 200 MB; the sched
 *                            trace has 50 k events per MB of that)
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base.h"
#include "bench_trace.h"
#include "ftrace_pages.h"
#include "pb.h"
#include "sqlite3.h"
#include "trace_processor.h"

#include <zlib.h>

#define OUT_DIR "out/bench"

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

/* path created for writing, or the bench ends here. */
static FILE *create(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	return f;
}

/* A JSON trace's file, its traceEvents array opened / closed. */
static FILE *json_create(const char *path)
{
	FILE *f = create(path);
	fputs("{\"traceEvents\":[\n", f);
	return f;
}

static void json_close(FILE *f)
{
	fputs("\n]}\n", f);
	fclose(f);
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* JSON: per thread, a tree of X events (depth up to 4) with a few args. */
static void gen_json(const char *path, size_t target)
{
	FILE *f = json_create(path);
	static const char *const names[] = {"MessageLoop::RunTask",
	                                    "ThreadControllerImpl::DoWork",
	                                    "v8.run",
	                                    "Layout",
	                                    "Paint",
	                                    "GPUTask",
	                                    "aten::matmul",
	                                    "cudaLaunchKernel"};
	size_t bytes = 0;
	uint64_t ts = 1000;
	int first = 1;
	while (bytes < target) {
		int tid = 100 + (int)(next_rand() % 8);
		/* a root of 1000 us with children nested inside */
		uint64_t root = ts;
		int depth = 1 + (int)(next_rand() % 4);
		uint64_t dur = 1000;
		for (int d = 0; d < depth; d++) {
			int n = fprintf(
			    f,
			    "%s{\"ph\":\"X\",\"cat\":\"bench,cat%d\",\"name\":\"%s\",\"pid\":1,"
			    "\"tid\":%d,\"ts\":%llu,\"dur\":%llu,\"args\":{\"seq\":%u,"
			    "\"src\":\"file_%u.cc\",\"depth\":%d}}",
			    first ? "" : ",\n", d, names[next_rand() % 8], tid,
			    (unsigned long long)(root + (uint64_t)d * 10),
			    (unsigned long long)(dur - (uint64_t)d * 20), next_rand() % 100000,
			    next_rand() % 500, d);
			first = 0;
			bytes += (size_t)n;
		}
		ts += 1000 + next_rand() % 50;
	}
	json_close(f);
}

/* JSON of small complete events (issue 20's first shape): ~110-byte X
 * events, a short name, one category, two small args, 8 threads taking
 * turns, in ts order, none overlapping on its thread. */
static void gen_json_small(const char *path, size_t target)
{
	FILE *f = json_create(path);
	size_t bytes = 0;
	uint64_t ts = 1000;
	unsigned i = 0;
	while (bytes < target) {
		int n =
		    fprintf(f,
		            "%s{\"ph\":\"X\",\"cat\":\"cat\",\"name\":\"ev%u\",\"pid\":1,"
		            "\"tid\":%u,\"ts\":%llu,\"dur\":%u,\"args\":{\"a\":%u,\"b\":%u}}",
		            i ? ",\n" : "", next_rand() % 32, 100 + i % 8, (unsigned long long)ts,
		            1 + next_rand() % 7, next_rand() % 1000, next_rand() % 100);
		i++;
		bytes += (size_t)n;
		ts += 1 + next_rand() % 50;
	}
	json_close(f);
}

/* Proto: 8 threads (one sequence each) of interned begin/end events. */
static void gen_proto(const char *path, size_t target)
{
	FILE *f = create(path);
	struct pb_writer w;
	pb_writer_init_growable(&w);
	uint64_t ts[8];
	size_t bytes = 0;
	for (int t = 0; t < 8; t++) {
		ts[t] = 1000000;
		/* Descriptor + interning packet, state cleared. */
		pb_writer_reset(&w);
		pb_put_uint32(&w, 10, (uint32_t)(t + 1)); /* trusted_packet_sequence_id */
		pb_put_uint32(&w, 13, 1);                 /* SEQ_INCREMENTAL_STATE_CLEARED */
		unsigned td = pb_begin_nested(&w, 60);    /* track_descriptor */
		pb_put_uint64(&w, 1, 1000 + (uint64_t)t); /* uuid */
		unsigned th = pb_begin_nested(&w, 4);     /* thread */
		pb_put_int32(&w, 1, 1);
		pb_put_int32(&w, 2, 100 + t);
		pb_end_nested(&w, th);
		pb_end_nested(&w, td);
		unsigned id = pb_begin_nested(&w, 12); /* interned_data */
		for (int n = 1; n <= 16; n++) {
			char name[32];
			snprintf(name, sizeof name, "Event%02d", n);
			unsigned en = pb_begin_nested(&w, 2); /* event_names */
			pb_put_uint64(&w, 1, (uint64_t)n);
			pb_put_string(&w, 2, name);
			pb_end_nested(&w, en);
		}
		unsigned ec = pb_begin_nested(&w, 1); /* event_categories */
		pb_put_uint64(&w, 1, 1);
		pb_put_string(&w, 2, "bench");
		pb_end_nested(&w, ec);
		pb_end_nested(&w, id);
		uint8_t hdr[16];
		size_t hl = 0;
		hdr[hl++] = 0x0a;
		hl = (size_t)(pb_encode_varint(hdr + hl, pb_writer_size(&w)) - hdr);
		fwrite(hdr, 1, hl, f);
		fwrite(pb_writer_data(&w), 1, pb_writer_size(&w), f);
	}
	while (bytes < target) {
		int t = (int)(next_rand() % 8);
		for (int be = 0; be < 2; be++) {
			pb_writer_reset(&w);
			ts[t] += 100 + next_rand() % 100;
			pb_put_uint64(&w, 8, ts[t]);               /* timestamp */
			pb_put_uint32(&w, 10, (uint32_t)(t + 1));  /* sequence id */
			pb_put_uint32(&w, 13, 2);                  /* SEQ_NEEDS_INCREMENTAL_STATE */
			unsigned te = pb_begin_nested(&w, 11);     /* track_event */
			pb_put_int32(&w, 9, be ? 2 : 1);           /* type */
			pb_put_uint64(&w, 11, 1000 + (uint64_t)t); /* track_uuid */
			if (!be) {
				pb_put_uint64(&w, 3, 1);                     /* category_iids */
				pb_put_uint64(&w, 10, 1 + next_rand() % 16); /* name_iid */
			}
			pb_end_nested(&w, te);
			uint8_t hdr[16];
			size_t hl = 0;
			hdr[hl++] = 0x0a;
			hl = (size_t)(pb_encode_varint(hdr + hl, pb_writer_size(&w)) - hdr);
			fwrite(hdr, 1, hl, f);
			fwrite(pb_writer_data(&w), 1, pb_writer_size(&w), f);
			bytes += hl + pb_writer_size(&w);
		}
	}
	pb_writer_release(&w);
	fclose(f);
}

/* ftrace text as `trace-cmd report` prints it: per cpu, a task switches
 * in, wakes another, writes an atrace begin/end pair and a generic event. */
static void gen_ftrace_text(const char *path, size_t target)
{
	FILE *f = create(path);
	fprintf(f, "cpus=4\n");
	size_t written = 7;
	int64_t ts = 1000000000;   /* ns */
	int cur[4] = {0, 0, 0, 0}; /* running pid per cpu, 0 idle */
	while (written < target) {
		int cpu = (int)(next_rand() % 4);
		int next = 1000 + (int)(next_rand() % 64);
		int prev = cur[cpu];
		char prev_comm[32], next_comm[32];
		if (prev)
			snprintf(prev_comm, sizeof prev_comm, "worker-%d", prev - 1000);
		else
			snprintf(prev_comm, sizeof prev_comm, "swapper/%d", cpu);
		snprintf(next_comm, sizeof next_comm, "worker-%d", next - 1000);
		const char *task = prev ? prev_comm : "<idle>";
		int n = 0;
		ts += 1 + next_rand() % 2000;
		n += fprintf(
		    f,
		    "%16s-%-5d [%03d] %6lld.%06lld: sched_switch:         prev_comm=%s prev_pid=%d "
		    "prev_prio=120 prev_state=S ==> next_comm=%s next_pid=%d next_prio=120\n",
		    task, prev, cpu, (long long)(ts / 1000000000),
		    (long long)(ts % 1000000000 / 1000), prev_comm, prev, next_comm, next);
		cur[cpu] = next;
		int wakee = 1000 + (int)(next_rand() % 64);
		ts += 1 + next_rand() % 2000;
		n += fprintf(
		    f,
		    "%16s-%-5d [%03d] %6lld.%06lld: sched_waking:         comm=worker-%d pid=%d "
		    "prio=120 target_cpu=%03d\n",
		    next_comm, next, cpu, (long long)(ts / 1000000000),
		    (long long)(ts % 1000000000 / 1000), wakee - 1000, wakee,
		    (int)(next_rand() % 4));
		for (int k = 0; k < 2; k++) {
			ts += 1 + next_rand() % 2000;
			n += fprintf(f, "%16s-%-5d [%03d] %6lld.%06lld: tracing_mark_write:   %s\n",
			             next_comm, next, cpu, (long long)(ts / 1000000000),
			             (long long)(ts % 1000000000 / 1000),
			             k == 0 ? "B|1000|frame" : "E|1000");
		}
		ts += 1 + next_rand() % 2000;
		n += fprintf(f,
		             "%16s-%-5d [%03d] %6lld.%06lld: sched_stat_runtime:   comm=%s pid=%d "
		             "runtime=%u [ns] vruntime=%u [ns]\n",
		             next_comm, next, cpu, (long long)(ts / 1000000000),
		             (long long)(ts % 1000000000 / 1000), next_comm, next,
		             next_rand() % 100000, next_rand());
		written += (size_t)n;
	}
	fclose(f);
}

/* Sched: 2 cpus, bundles of 64 pages each (a busy drain), compact_sched. */
static uint64_t gen_sched(const char *path, uint64_t target_events)
{
	FILE *f = fopen(path, "w");
	struct ftrace_table t;
	struct ftrace_encode_opts o = {.compact_sched = true};
	struct probes_ftrace_encode_stats st = {0};
	struct bench_cpu cpus[2] = {{.tid_base = 1000, .ts = 1000000000ull},
	                            {.tid_base = 2000, .ts = 1000000333ull}};
	struct pb_writer w;
	uint8_t *pages;
	uint64_t events = 0;

	if (!f) {
		perror(path);
		exit(1);
	}
	bench_load_table(&t);
	pages = tb_malloc(64 * (size_t)t.layout.page_size);
	pb_writer_init_growable(&w);
	while (events < target_events) {
		for (uint32_t cpu = 0; cpu < 2; cpu++) {
			unsigned pkt, h;
			bench_build_pages(&t, &cpus[cpu], true, pages, 64);
			pb_writer_reset(&w);
			pkt = pb_begin_nested(&w, 1); /* Trace.packet */
			pb_put_uint32(&w, 10, 1);     /* trusted_packet_sequence_id */
			h = pb_begin_nested(&w, 1);   /* ftrace_events */
			events += probes_ftrace_encode_bundle_opts(
			    &w, &t, &o, cpu, pages, 64 * (size_t)t.layout.page_size, &st);
			pb_end_nested(&w, h);
			pb_end_nested(&w, pkt);
			fwrite(pb_writer_data(&w), 1, pb_writer_size(&w), f);
		}
	}
	pb_writer_release(&w);
	probes_ftrace_encode_opts_release(&o);
	probes_ftrace_table_release(&t);
	tb_free(pages);
	fclose(f);
	return events;
}

/* gen_sched sized like the others: 50 k events per MB asked for. */
static void gen_sched_mb(const char *path, size_t target)
{
	gen_sched(path, (uint64_t)(target >> 20) * 50000);
}

static long long count_of(struct tp *tp, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;
	if (sqlite3_prepare_v2(tp_db(tp), sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	return v;
}

struct feed {
	struct tp *tp;
	uint64_t total;
};

static int feed_tp(void *ctx, const uint8_t *p, size_t n)
{
	struct feed *f = ctx;
	f->total += n;
	return tp_parse(f->tp, p, n) < 0 ? -1 : 0;
}

static int load(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	struct tp *tp = tp_new(NULL);
	struct feed f = {tp, 0};
	double t0 = bench_now_s(), c0 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID),
	       m0 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
	/* As the shell loads a file: mapped, fed in 4 MiB pieces. */
	int rc = tb_feed_fd(fd, 4u << 20, true, feed_tp, &f);
	double tf = bench_now_s(), cf = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID),
	       mf = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
	uint64_t total = f.total;
	close(fd);
	if (rc < 0 && !tp_error(tp)[0])
		fprintf(stderr, "%s: %s\n", path, strerror(-rc));
	if (tp_end_of_file(tp) < 0)
		fprintf(stderr, "load failed: %s\n", tp_error(tp));
	double t1 = bench_now_s(), c1 = bench_clock_s(CLOCK_PROCESS_CPUTIME_ID),
	       m1 = bench_clock_s(CLOCK_THREAD_CPUTIME_ID);
	long long slices = count_of(tp, "select count(*) from slice");
	double t2 = bench_now_s();
	long long events = count_of(tp, "select count(*) from ftrace_event");
	double mb = (double)total / 1e6;
	long rss = peak_rss_kb();
	printf("%-28s %8.1f MB  load %6.2f s  %7.1f MB/s (cpu %.2f s, %.1f MB/s)  count(*) %lld "
	       "slices in %.3f s  peak RSS %7.1f MB (%.2f x trace)\n",
	       strrchr(path, '/') ? strrchr(path, '/') + 1 : path, mb, t1 - t0, mb / (t1 - t0),
	       c1 - c0, mb / (c1 - c0), slices, t2 - t1, (double)rss / 1024,
	       (double)rss * 1024 / (double)total);
	printf("%-28s feed %.2f s wall %.2f s cpu (main thread %.2f), end of file %.2f s wall "
	       "%.2f s cpu (main thread %.2f)\n",
	       "", tf - t0, cf - c0, mf - m0, t1 - tf, c1 - cf, m1 - mf);
	if (events > 0)
		printf("%-28s %lld ftrace events: %.2f M events/s wall, %.2f M/s cpu (%.0f ns cpu "
		       "per event), %.0f bytes RSS/event\n",
		       "", events, (double)events / (t1 - t0) / 1e6,
		       (double)events / (c1 - c0) / 1e6, (c1 - c0) * 1e9 / (double)events,
		       (double)rss * 1024 / (double)events);
	tp_free(tp);
	return 0;
}

/* Runs argv in a child, waits; its wall seconds. */
static double run_wall(char *const argv[], bool quiet)
{
	fflush(stdout);
	double t0 = bench_now_s();
	pid_t pid = fork();
	if (pid == 0) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, 1);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	return bench_now_s() - t0;
}

/* Loads path in a fresh process, then times md5sum on the same file (the
 * issue's yardstick: the file is in the page cache for both). */
static void run_child(const char *self, const char *path)
{
	char *load_argv[] = {(char *)self, "load", (char *)path, NULL};
	char *md5_argv[] = {"md5sum", (char *)path, NULL};
	double md5 = run_wall(md5_argv, true); /* warms the page cache too */
	double wall = run_wall(load_argv, false);
	double md5b = run_wall(md5_argv, true);
	if (md5b < md5)
		md5 = md5b;
	printf("%-28s process wall %.2f s; md5sum %.2f s (best of 2): %.2f x md5sum\n", "", wall,
	       md5, wall / md5);
}

/* A mixed JSON trace for the large-trace curve (issue 20): per group of
 * events, nested X with args, small X, a B/E pair, an instant, a counter,
 * an async b/e pair and a v2 flow, over 16 threads of 2 processes, in ts
 * order; streamed to the file as it is made. */
static void gen_json_mixed(const char *path, size_t target)
{
	FILE *f = json_create(path);
	size_t bytes = 0;
	uint64_t ts = 1000;
	unsigned i = 0;
	while (bytes < target) {
		unsigned tid = 100 + i % 16, pid = 1 + (i % 16) / 8, r = next_rand();
		int n = fprintf(
		    f,
		    "%s{\"ph\":\"X\",\"cat\":\"bench,cat%u\",\"name\":\"MessageLoop::RunTask\","
		    "\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"dur\":40,\"args\":{\"seq\":%u,"
		    "\"src\":\"file_%u.cc\",\"depth\":0}},\n"
		    "{\"ph\":\"X\",\"cat\":\"cat\",\"name\":\"ev%u\",\"pid\":%u,\"tid\":%u,"
		    "\"ts\":%llu,\"dur\":5,\"args\":{\"a\":%u,\"b\":%u}},\n"
		    "{\"ph\":\"B\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"name\":\"Layout\"},\n"
		    "{\"ph\":\"E\",\"pid\":%u,\"tid\":%u,\"ts\":%llu},\n"
		    "{\"ph\":\"i\",\"s\":\"t\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"name\":\"mark\"}"
		    ",\n"
		    "{\"ph\":\"C\",\"pid\":%u,\"ts\":%llu,\"name\":\"mem\",\"args\":{\"v\":%u}},\n"
		    "{\"ph\":\"b\",\"pid\":%u,\"ts\":%llu,\"cat\":\"io\",\"name\":\"req\",\"id\":%"
		    "u},\n"
		    "{\"ph\":\"e\",\"pid\":%u,\"ts\":%llu,\"cat\":\"io\",\"name\":\"req\",\"id\":%"
		    "u},\n"
		    "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"dur\":2,\"name\":\"send\","
		    "\"bind_id\":\"0x%x\",\"flow_out\":true},\n"
		    "{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"dur\":2,\"name\":\"recv\","
		    "\"bind_id\":\"0x%x\",\"flow_in\":true}",
		    i ? ",\n" : "", r % 4, pid, tid, (unsigned long long)ts, r % 100000, r % 500,
		    r % 32, pid, tid, (unsigned long long)ts + 1, r % 1000, r % 100, pid, tid,
		    (unsigned long long)ts + 10, pid, tid, (unsigned long long)ts + 20, pid, tid,
		    (unsigned long long)ts + 21, pid, (unsigned long long)ts + 22, r % 4096, pid,
		    (unsigned long long)ts + 23, i, pid, (unsigned long long)ts + 30, i, pid, tid,
		    (unsigned long long)ts + 41, i, pid, 100 + (i + 1) % 16,
		    (unsigned long long)ts + 45, i);
		i++;
		bytes += (size_t)n;
		ts += 50;
	}
	json_close(f);
}

/* A PyTorch profiler (Kineto) shape: per step, CPU ops with long names and
 * many args (input dims, types, strides), a cudaLaunchKernel runtime call
 * each, and the GPU kernel it launches on a stream thread of the GPU
 * process with the launch->kernel flow (s/f, cat ac2g) and Kineto's kernel
 * args; process/thread names as metadata. */
static void gen_json_pytorch(const char *path, size_t target)
{
	static const char *const ops[] = {
	    "aten::convolution", "aten::_convolution", "aten::cudnn_convolution",
	    "aten::add_",        "aten::batch_norm",   "aten::relu_",
	    "aten::linear",      "aten::addmm"};
	static const char *const kernels[] = {
	    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
	    "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
	    "at::detail::Array<char*, 3>)",
	    "void cudnn::bn_fw_tr_1C11_kernel_NCHW<float, float, int, 512, true, "
	    "1>(cudnnTensorStruct, "
	    "float const*, cudnnTensorStruct, float*, float const*, float const*, float, float)",
	    "ampere_sgemm_128x64_tn",
	    "void at::native::(anonymous namespace)::max_pool_forward_nchw<float, float>(int, "
	    "float "
	    "const*, int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*, "
	    "long*)"};
	FILE *f = create(path);
	fputs("{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0,\"name\":\"NVIDIA "
	      "A100-SXM4-40GB\","
	      "\"totalGlobalMem\":42505273344,\"computeMajor\":8,\"computeMinor\":0}],"
	      "\"traceEvents\":[\n"
	      "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":4321,\"tid\":0,\"args\":"
	      "{\"name\":\"python3\"}},\n"
	      "{\"name\":\"process_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":0,\"args\":"
	      "{\"name\":\"GPU 0\"}},\n"
	      "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":0,\"tid\":7,\"args\":"
	      "{\"name\":\"stream 7\"}},\n"
	      "{\"name\":\"thread_name\",\"ph\":\"M\",\"ts\":0,\"pid\":4321,\"tid\":4321,\"args\":"
	      "{\"name\":\"thread 4321 (python3)\"}}",
	      f);
	size_t bytes = 0;
	uint64_t ts = 1700000000000ull, gpu = ts;
	unsigned ext = 1, corr = 100;
	while (bytes < target) {
		unsigned r = next_rand(), b = 16 << (r % 4), c = 3 << (r % 5);
		uint64_t dur = 20 + r % 200, launch = ts + dur / 2;
		uint64_t kts = gpu > launch + 5 ? gpu : launch + 5, kdur = 5 + next_rand() % 300;
		int n = fprintf(
		    f,
		    ",\n{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"%s\",\"pid\":4321,\"tid\":4321,"
		    "\"ts\":%llu,\"dur\":%llu,\"args\":{\"External id\":%u,\"Record function "
		    "id\":0,"
		    "\"Ev Idx\":%u,\"Input Dims\":[[%u,%u,224,224],[64,%u,7,7],[]],\"Input type\":"
		    "[\"float\",\"float\",\"\"],\"Input "
		    "Strides\":[[%u,50176,224,1],[%u,49,7,1],[]],"
		    "\"Concrete Inputs\":[\"\",\"\",\"[2, 2]\"],\"Sequence number\":%u,"
		    "\"Fwd thread id\":0}},\n"
		    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":"
		    "4321,"
		    "\"tid\":4321,\"ts\":%llu,\"dur\":5,\"args\":{\"External id\":%u,\"cbid\":211,"
		    "\"correlation\":%u}},\n"
		    "{\"ph\":\"s\",\"id\":%u,\"pid\":4321,\"tid\":4321,\"ts\":%llu,\"cat\":"
		    "\"ac2g\","
		    "\"name\":\"ac2g\"},\n"
		    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"%s\",\"pid\":0,\"tid\":7,\"ts\":%"
		    "llu,"
		    "\"dur\":%llu,\"args\":{\"External "
		    "id\":%u,\"queued\":0,\"device\":0,\"context\":1,"
		    "\"stream\":7,\"correlation\":%u,\"registers per thread\":%u,\"shared "
		    "memory\":%u,"
		    "\"blocks per SM\":%u.5,\"warps per "
		    "SM\":12.0,\"grid\":[%u,1,1],\"block\":[128,1,1],"
		    "\"est. achieved occupancy %%\":100}},\n"
		    "{\"ph\":\"f\",\"id\":%u,\"pid\":0,\"tid\":7,\"ts\":%llu,\"cat\":\"ac2g\","
		    "\"name\":\"ac2g\",\"bp\":\"e\"}",
		    ops[r % 8], (unsigned long long)ts, (unsigned long long)dur, ext, ext, b, c, c,
		    c * 50176, c * 49, ext, (unsigned long long)launch, ext, corr, corr,
		    (unsigned long long)launch, kernels[r % 4], (unsigned long long)kts,
		    (unsigned long long)kdur, ext, corr, 16 + r % 64, (r % 3) * 4096, r % 8, b * 64,
		    corr, (unsigned long long)kts);
		bytes += (size_t)n;
		ext++;
		corr++;
		gpu = kts + kdur;
		ts += dur + 1 + next_rand() % 20;
	}
	json_close(f);
}

/* A Chrome shape: renderer and browser main threads with B/E tasks and
 * nested X work carrying source-location args, async b/e loads (id2),
 * legacy flows (s/f) across threads, v2 flows (bind_id: main-thread
 * work -> compositor draw), instants,
 * counters, and thread/process name metadata. */
static void gen_json_chrome(const char *path, size_t target)
{
	static const char *const tasks[] = {"ThreadControllerImpl::RunTask", "RunTask",
	                                    "ThreadPool_RunTask", "SimpleWatcher::OnHandleReady"};
	static const char *const work[] = {"ParseHTML",        "EvaluateScript", "v8.compile",
	                                   "UpdateLayoutTree", "Layout",         "Paint",
	                                   "CompositeLayers",  "FunctionCall"};
	FILE *f = json_create(path);
	fputs("{\"pid\":100,\"tid\":0,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":"
	      "\"process_name\",\"args\":{\"name\":\"Browser\"}},\n"
	      "{\"pid\":200,\"tid\":0,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":"
	      "\"process_name\",\"args\":{\"name\":\"Renderer\"}},\n"
	      "{\"pid\":100,\"tid\":101,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":"
	      "\"thread_name\",\"args\":{\"name\":\"CrBrowserMain\"}},\n"
	      "{\"pid\":200,\"tid\":201,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":"
	      "\"thread_name\",\"args\":{\"name\":\"CrRendererMain\"}},\n"
	      "{\"pid\":200,\"tid\":202,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":"
	      "\"thread_name\",\"args\":{\"name\":\"Compositor\"}},\n"
	      "{\"pid\":200,\"tid\":201,\"ts\":0,\"ph\":\"M\",\"cat\":\"__metadata\",\"name\":"
	      "\"thread_sort_index\",\"args\":{\"sort_index\":-1}}",
	      f);
	size_t bytes = 0;
	uint64_t ts = 1000;
	unsigned i = 0;
	while (bytes < target) {
		unsigned r = next_rand(), tid = 201 + i % 2, pid = 200;
		if (i % 3 == 0) {
			tid = 101;
			pid = 100;
		}
		int n = fprintf(
		    f,
		    ",\n{\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"ph\":\"B\",\"cat\":\"toplevel\","
		    "\"name\":"
		    "\"%s\",\"args\":{\"src_file\":\"../../base/task/sequence_manager/"
		    "thread_controller_impl.cc\",\"src_func\":\"DoWork\"}},\n"
		    "{\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"ph\":\"X\",\"cat\":\"devtools.timeline\","
		    "\"name\":\"%s\",\"dur\":%u,\"tdur\":%u,\"tts\":%llu,\"bind_id\":\"0x%x\","
		    "\"flow_out\":true,\"args\":{\"data\":{"
		    "\"frame\":"
		    "\"F%04X\",\"url\":\"https://example.com/app.js\",\"lineNumber\":%u}}},\n"
		    "{\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"ph\":\"s\",\"cat\":\"toplevel.flow\","
		    "\"name\":\"MojoMessage\",\"id\":\"0x%x\"},\n"
		    "{\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"ph\":\"b\",\"cat\":\"blink.resource\","
		    "\"name\":\"ResourceLoad\",\"id2\":{\"local\":\"0x%x\"},\"args\":{\"url\":"
		    "\"https://example.com/r%u.png\"}},\n"
		    "{\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"ph\":\"I\",\"s\":\"t\",\"cat\":\"input\","
		    "\"name\":\"InputLatency::MouseMove\"},\n"
		    "{\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"ph\":\"E\",\"cat\":\"toplevel\",\"name\":"
		    "\"%s\"},\n"
		    "{\"pid\":200,\"tid\":202,\"ts\":%llu,\"ph\":\"X\",\"cat\":\"cc\",\"name\":"
		    "\"ProxyImpl::ScheduledActionDraw\",\"dur\":12,\"bind_id\":\"0x%x\","
		    "\"flow_in\":true},\n"
		    "{\"pid\":200,\"tid\":202,\"ts\":%llu,\"ph\":\"f\",\"bp\":\"e\",\"cat\":"
		    "\"toplevel.flow\",\"name\":\"MojoMessage\",\"id\":\"0x%x\"},\n"
		    "{\"pid\":%u,\"tid\":%u,\"ts\":%llu,\"ph\":\"e\",\"cat\":\"blink.resource\","
		    "\"name\":\"ResourceLoad\",\"id2\":{\"local\":\"0x%x\"}},\n"
		    "{\"pid\":200,\"ts\":%llu,\"ph\":\"C\",\"cat\":\"disabled-by-default-devtools."
		    "timeline\",\"name\":\"UpdateCounters\",\"args\":{\"documents\":%u,"
		    "\"jsEventListeners\":%u,\"jsHeapSizeUsed\":%u,\"nodes\":%u}}",
		    pid, tid, (unsigned long long)ts, tasks[r % 4], pid, tid,
		    (unsigned long long)ts + 2, work[r % 8], 20 + r % 30, 15 + r % 20,
		    (unsigned long long)ts / 2, i, r % 65536, r % 4000, pid, tid,
		    (unsigned long long)ts + 3, i, pid, tid, (unsigned long long)ts + 4, i, r % 100,
		    pid, tid, (unsigned long long)ts + 30, pid, tid, (unsigned long long)ts + 60,
		    tasks[r % 4], (unsigned long long)ts + 61, i, (unsigned long long)ts + 62, i,
		    pid, tid, (unsigned long long)ts + 70, i, (unsigned long long)ts + 71,
		    1 + r % 4, r % 900, 1000000 + r % 9000000, r % 20000);
		bytes += (size_t)n;
		i++;
		ts += 100 + next_rand() % 50;
	}
	json_close(f);
}

/* json's trace (made first if missing) gzip'd at level 6, as `gzip`
 * does by default: path is that trace's path plus ".gz". */
static void gen_json_gz(const char *path, size_t target)
{
	char src[256], buf[1 << 16];
	struct stat st;
	size_t n;

	snprintf(src, sizeof src, "%.*s", (int)(strlen(path) - 3), path);
	if (stat(src, &st) != 0)
		gen_json(src, target);
	FILE *in = fopen(src, "rb");
	gzFile out = gzopen(path, "wb6");
	if (!in || !out) {
		perror(path);
		exit(1);
	}
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		if (gzwrite(out, buf, (unsigned)n) != (int)n) {
			fprintf(stderr, "%s: gzwrite failed\n", path);
			exit(1);
		}
	fclose(in);
	if (gzclose(out) != Z_OK) {
		fprintf(stderr, "%s: gzclose failed\n", path);
		exit(1);
	}
}

/* path made by gen (target bytes) unless it exists, then loaded in a
 * fresh process; removed afterwards when remove is set. */
static void run_shape(const char *self, const char *path, void (*gen)(const char *, size_t),
                      size_t target, bool remove)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "generating %s\n", path);
		double t0 = bench_now_s();
		gen(path, target);
		fprintf(stderr, "  %.1f s\n", bench_now_s() - t0);
	}
	run_child(self, path);
	if (remove)
		unlink(path);
}

/* The large-trace curve: a mixed JSON trace of each size (MB) made,
 * loaded in a fresh process, and removed (TB_BENCH_KEEP=1 keeps it). */
static void run_large(const char *self, int argc, char **argv)
{
	static const char *const def[] = {"512", "1024", "2048", "4096"};
	int n = argc > 2 ? argc - 2 : 4;
	for (int i = 0; i < n; i++) {
		size_t mb = strtoul(argc > 2 ? argv[i + 2] : def[i], NULL, 10);
		char path[256];
		snprintf(path, sizeof path, OUT_DIR "/large-%zumb.json", mb);
		run_shape(self, path, gen_json_mixed, mb << 20, !getenv("TB_BENCH_KEEP"));
	}
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "load") == 0)
		return load(argv[2]);
	if (argc >= 2 && strcmp(argv[1], "large") == 0) {
		mkdir(OUT_DIR, 0755);
		run_large(argv[0], argc, argv);
		return 0;
	}
	const char *mbs = getenv("TB_BENCH_MB");
	size_t mb = mbs ? strtoul(mbs, NULL, 10) : 200;
	static const struct {
		const char *name, *ext;
		void (*gen)(const char *path, size_t target);
	} kinds[] = {
	    {"json", "json", gen_json},
	    {"jsongz", "json.gz", gen_json_gz},
	    {"jsonsmall", "small.json", gen_json_small},
	    {"pytorch", "pytorch.json", gen_json_pytorch},
	    {"chrome", "chrome.json", gen_json_chrome},
	    {"proto", "pftrace", gen_proto},
	    {"ftrace", "ftrace.txt", gen_ftrace_text},
	    {"sched", "sched-compact.pftrace", gen_sched_mb},
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		if (argc == 2 && strcmp(argv[1], kinds[i].name) != 0)
			continue;
		char path[256];
		snprintf(path, sizeof path, OUT_DIR "/synth-%zumb.%s", mb, kinds[i].ext);
		run_shape(argv[0], path, kinds[i].gen, mb << 20, false);
	}
	return 0;
}
