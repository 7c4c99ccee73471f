/*
 * Profiling a workload end to end (issue 12's performance figures). Prints
 * figures; asserts nothing.
 *
 *   profile_bench                  all three parts
 *   profile_bench overhead|symbolize|report   one of them
 *   profile_bench spin N OUT       the CPU-bound workload: N rounds of
 *                                  arithmetic, "PID CPU_NS" into OUT
 *
 * overhead: the slowdown of a CPU-bound program sampled at 1000 Hz the way
 *   a user profiles it, `out/tracebox -c configs/perf-1000hz.pbtx --txt -o
 *   T -- PROGRAM` (workload mode: per-task events, symbolized at the end).
 *   The program's own CPU time, alone and sampled, best of
 *   TB_BENCH_RUNS (default 5) each, alternating; budget < 2 %. Runs as
 *   whoever runs it (no root needed at perf_event_paranoid <= 2).
 * symbolize: the end-of-capture symbolization of a capture that sampled 50
 *   distinct binaries (gcc builds 50 variants of a 200-function program,
 *   each its own build id): 200 sampled addresses each, named by traced_perf's
 *   perf_symq_emit through base's symbol finder, as at the end of a capture;
 *   and the same over 50 of the machine's shared libraries (big symbol
 *   tables, debug files when installed); budget < 1 s. Needs gcc.
 * report: `traceconv report` on a 1 M-sample trace shaped like a recording
 *   (8 threads, 3 000 callstacks of depth 6-30 over 400 named functions in 4
 *   mappings, 1 ms apart per thread), as a process (out/tracebox): wall and
 *   CPU seconds and the HTML's size; budget < 2 s and < 5 MB. Also the
 *   report model (--json).
 */
#include <dirent.h>
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
#include "pb.h"
#include "perf_int.h"

#define OUT_DIR "out/bench"
#define SPIN_ROUNDS 2500 /* ~2.5 s of CPU on the dev machine */

/* ---- the workload ------------------------------------------------------------ */

static volatile unsigned long sink;

static __attribute__((noinline)) void spin_unit(void)
{
	unsigned long acc = sink;
	for (long i = 0; i < 1000000; i++) {
		acc = acc * 6364136223846793005ul + 1442695040888963407ul;
		__asm__ volatile("" : "+r"(acc));
	}
	sink = acc;
}

static int spin_main(long rounds, const char *out)
{
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (long r = 0; r < rounds; r++)
		spin_unit();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	long long ns = (long long)(b.tv_sec - a.tv_sec) * 1000000000 + (b.tv_nsec - a.tv_nsec);
	FILE *f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f, "%d %lld\n", (int)getpid(), ns);
	fclose(f);
	return 0;
}

/* Run argv (output to /dev/null), wait; its children's CPU into *cpu. */
static int run(char *const argv[], double *cpu)
{
	double before = bench_children_cpu_s();
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return -1;
	*cpu = bench_children_cpu_s() - before;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static double result_cpu(const char *path)
{
	long long ns = 0;
	int pid;
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int ok = fscanf(f, "%d %lld", &pid, &ns) == 2;
	fclose(f);
	return ok ? (double)ns / 1e9 : -1;
}

static void overhead(const char *self)
{
	const char *env = getenv("TB_BENCH_RUNS");
	int runs = env ? (int)strtol(env, NULL, 10) : 5;
	if (runs < 1)
		runs = 5;
	char rounds[16], res[] = OUT_DIR "/profile_bench.res",
	                 trace[] = OUT_DIR "/profile_bench.pftrace";
	double base = 1e9, sampled = 1e9, cpu, sum_base = 0, sum_sampled = 0;

	snprintf(rounds, sizeof rounds, "%d", SPIN_ROUNDS);
	char *plain[] = {(char *)self, "spin", rounds, res, NULL};
	char *rec[] = {"out/tracebox", "-c",         "configs/perf-1000hz.pbtx",
	               "--txt",        "-o",         trace,
	               "--",           (char *)self, "spin",
	               rounds,         res,          NULL};
	for (int i = 0; i < runs; i++) {
		double w;
		if (run(plain, &cpu) != 0 || (w = result_cpu(res)) < 0)
			return;
		base = w < base ? w : base;
		sum_base += w;
		if (run(rec, &cpu) != 0 || (w = result_cpu(res)) < 0) {
			printf("overhead: skipped (out/tracebox could not record)\n");
			return;
		}
		sampled = w < sampled ? w : sampled;
		sum_sampled += w;
	}
	size_t bytes;
	double secs;
	struct tp *tp = bench_load_trace(trace, &secs, &bytes);
	long long samples = bench_query_int(tp, "select count(*) from perf_sample");
	tp_free(tp);
	printf("overhead: workload %.3f s of CPU alone, %.3f s sampled at 1000 Hz "
	       "(configs/perf-1000hz.pbtx, gated): %+.2f %% best of %d, %+.2f %% mean "
	       "(budget < 2 %%); %lld samples in the last trace\n",
	       base, sampled, 100.0 * (sampled - base) / base, runs,
	       100.0 * (sum_sampled - sum_base) / sum_base, samples);
}

/* ---- symbolizing 50 binaries ------------------------------------------------------ */

/* The end-of-capture pass over q, timed. */
static void emit_timed(struct perf_symq *q, const char *what)
{
	struct sym_finder finder;
	struct perf_symq_result res;
	struct pb_writer w;
	pb_writer_init_growable(&w);
	double t0 = bench_now_s();
	sym_finder_init(&finder, NULL, false, false);
	perf_symq_emit(q, &finder, &w, 1, NULL, NULL, &res);
	sym_finder_release(&finder);
	double t = bench_now_s() - t0;
	printf("symbolize: %s: %u of %u files, %llu of %llu addresses named in %.3f s, %zu bytes "
	       "of ModuleSymbols (budget < 1 s)\n",
	       what, res.modules_named, res.modules, (unsigned long long)res.addresses_named,
	       (unsigned long long)res.addresses, t, pb_writer_size(&w));
	pb_writer_release(&w);
}

static void symbolize(void)
{
	enum { BINARIES = 50, FUNCS = 200, ADDRS = 200 };
	char src[] = OUT_DIR "/symbench.c", path[512], cmd[1024];
	FILE *f = fopen(src, "w");
	if (!f)
		return;
	for (int i = 0; i < FUNCS; i++)
		fprintf(f,
		        "__attribute__((noinline)) int symbench_function_%d_V(int x) "
		        "{ return x * %d + VARIANT; }\n",
		        i, i + 1);
	fprintf(f, "int main(int c, char **v) { int s = 0;\n");
	for (int i = 0; i < FUNCS; i++)
		fprintf(f, "s += symbench_function_%d_V(c);\n", i);
	fprintf(f, "return s; }\n");
	fclose(f);
	for (int b = 0; b < BINARIES; b++) {
		struct stat st;
		snprintf(path, sizeof path, OUT_DIR "/symbench/bin%02d", b);
		if (stat(path, &st) == 0)
			continue;
		mkdir(OUT_DIR "/symbench", 0755);
		snprintf(cmd, sizeof cmd, "gcc -O1 -g -DVARIANT=%d -o %s %s", b, path, src);
		if (system(cmd) != 0) {
			printf("symbolize: skipped (gcc cannot build the binaries)\n");
			return;
		}
	}
	/* The frames a capture of them would hold: ADDRS pcs inside each
	 * binary's functions, unnamed, with the binary's build id. */
	struct perf_symq q;
	char cwd[200];
	if (!getcwd(cwd, sizeof cwd))
		return;
	perf_symq_init(&q);
	for (int b = 0; b < BINARIES; b++) {
		struct perf_elf_info info;
		struct elf_file e;
		struct sym_table t;
		/* mapped files have absolute paths */
		snprintf(path, sizeof path, "%s/" OUT_DIR "/symbench/bin%02d", cwd, b);
		struct elf_phdr ph = {0};
		if (perf_elf_info_file(path, &info, NULL) < 0 || elf_open_path(&e, path, NULL) < 0)
			continue;
		sym_table_load(&t, &e);
		elf_first_exec_load(&e, &ph);
		elf_close(&e);
		for (int a = 0; a < ADDRS && t.n; a++) {
			const struct sym_entry *s = &t.v[(size_t)a * 7919 % t.n];
			/* the executable segment's mapping, as /proc/PID/maps has it */
			struct perf_frame fr = {.mapping_path = path,
			                        .build_id = info.build_id,
			                        .build_id_len = info.build_id_len,
			                        .map_offset = ph.offset & ~(uint64_t)4095,
			                        .load_bias = info.load_bias,
			                        .rel_pc = s->addr +
			                                  (s->size ? (uint64_t)a % s->size : 0)};
			perf_symq_add(&q, &fr);
		}
		sym_table_release(&t);
	}
	emit_timed(&q, "50 small programs (200 functions each)");
	perf_symq_release(&q);

	/* The same over 50 of this machine's shared libraries (their debug
	 * files under /usr/lib/debug when installed): big symbol tables. */
	perf_symq_init(&q);
	DIR *d = opendir("/usr/lib/x86_64-linux-gnu");
	struct dirent *de;
	int libs = 0;
	while (d && libs < BINARIES && (de = readdir(d))) {
		struct perf_elf_info info;
		struct elf_file e;
		struct sym_table t;
		if (!strstr(de->d_name, ".so"))
			continue;
		snprintf(path, sizeof path, "/usr/lib/x86_64-linux-gnu/%s", de->d_name);
		struct elf_phdr ph = {0};
		if (perf_elf_info_file(path, &info, NULL) < 0 || !info.build_id_len ||
		    elf_open_path(&e, path, NULL) < 0)
			continue;
		sym_table_load(&t, &e);
		elf_first_exec_load(&e, &ph);
		elf_close(&e);
		if (t.n >= ADDRS) {
			libs++;
			for (int a = 0; a < ADDRS; a++) {
				const struct sym_entry *s = &t.v[(size_t)a * 7919 % t.n];
				struct perf_frame fr = {.mapping_path = path,
				                        .build_id = info.build_id,
				                        .build_id_len = info.build_id_len,
				                        .map_offset = ph.offset & ~(uint64_t)4095,
				                        .load_bias = info.load_bias,
				                        .rel_pc = s->addr};
				perf_symq_add(&q, &fr);
			}
		}
		sym_table_release(&t);
	}
	if (d)
		closedir(d);
	emit_timed(&q, "50 shared libraries of /usr/lib/x86_64-linux-gnu");
	perf_symq_release(&q);
}

/* ---- report on 1 M samples ------------------------------------------------------- */

static uint32_t next_rand(void)
{
	static uint64_t counter;
	return (uint32_t)tb_hash_u64(++counter);
}

static void put_interned(struct pb_writer *w, uint32_t field, uint64_t iid, const char *s)
{
	unsigned e = pb_begin_nested(w, field);
	pb_put_uint64(w, 1, iid);
	pb_put_string(w, 2, s);
	pb_end_nested(w, e);
}

static void gen_trace(const char *path, long n_samples)
{
	enum { MAPPINGS = 4, FRAMES = 400, STACKS = 3000, THREADS = 8 };
	struct pb_writer w;
	FILE *f = fopen(path, "w");
	char name[64];
	if (!f)
		return;
	pb_writer_init_growable(&w);
	unsigned pkt = pb_begin_nested(&w, 1);
	pb_put_uint32(&w, 10, 1);
	pb_put_uint64(&w, 8, 1000);
	pb_put_uint32(&w, 13, 1);
	unsigned id = pb_begin_nested(&w, 12);
	for (int m = 0; m < MAPPINGS; m++) {
		snprintf(name, sizeof name, "libbench%d.so", m);
		put_interned(&w, 17, (uint64_t)m + 1, name);
		unsigned e = pb_begin_nested(&w, 19);
		pb_put_uint64(&w, 1, (uint64_t)m + 1);
		pb_put_uint64(&w, 4, 0x7f0000000000ull + (uint64_t)m * 0x1000000);
		pb_put_uint64(&w, 5, 0x7f0000800000ull + (uint64_t)m * 0x1000000);
		pb_put_uint64(&w, 7, (uint64_t)m + 1);
		pb_end_nested(&w, e);
	}
	for (int i = 0; i < FRAMES; i++) {
		snprintf(name, sizeof name, "bench::namespace::function_%d(int, char const*)", i);
		put_interned(&w, 5, (uint64_t)i + 1, name);
		unsigned e = pb_begin_nested(&w, 6);
		pb_put_uint64(&w, 1, (uint64_t)i + 1);
		pb_put_uint64(&w, 2, (uint64_t)i + 1);
		pb_put_uint64(&w, 3, (uint64_t)(i % MAPPINGS) + 1);
		pb_put_uint64(&w, 4, 0x1000 + (uint64_t)i * 0x40);
		pb_end_nested(&w, e);
	}
	for (int s = 0; s < STACKS; s++) {
		uint64_t frames[30];
		int depth = 6 + (int)(next_rand() % 25);
		for (int d = 0; d < depth; d++)
			frames[d] = d < 3 ? (uint64_t)d + 1 : next_rand() % FRAMES + 1;
		unsigned e = pb_begin_nested(&w, 7);
		pb_put_uint64(&w, 1, (uint64_t)s + 1);
		pb_put_packed_varint(&w, 2, frames, (size_t)depth);
		pb_end_nested(&w, e);
	}
	pb_end_nested(&w, id);
	pb_end_nested(&w, pkt);
	/* names for the threads */
	pkt = pb_begin_nested(&w, 1);
	pb_put_uint32(&w, 10, 1);
	pb_put_uint64(&w, 8, 1500);
	unsigned tree = pb_begin_nested(&w, 2);
	unsigned pr = pb_begin_nested(&w, 1);
	pb_put_int32(&w, 1, 100);
	pb_put_int32(&w, 2, 1);
	pb_put_string(&w, 3, "/usr/bin/bench_server");
	pb_end_nested(&w, pr);
	for (int t = 0; t < THREADS; t++) {
		unsigned th = pb_begin_nested(&w, 2);
		pb_put_int32(&w, 1, 100 + t);
		snprintf(name, sizeof name, "worker-%d", t);
		pb_put_string(&w, 2, name);
		pb_put_int32(&w, 3, 100);
		pb_end_nested(&w, th);
	}
	pb_end_nested(&w, tree);
	pb_end_nested(&w, pkt);
	for (long i = 0; i < n_samples; i++) {
		pkt = pb_begin_nested(&w, 1);
		pb_put_uint32(&w, 10, 1);
		pb_put_uint64(&w, 8,
		              2000 + (uint64_t)(i / THREADS) * 1000000 + (uint64_t)(i % THREADS));
		pb_put_uint32(&w, 13, 2);
		unsigned s = pb_begin_nested(&w, 66);
		pb_put_uint32(&w, 1, (uint32_t)(i & 1));
		pb_put_uint32(&w, 2, 100);
		pb_put_uint32(&w, 3, 100 + (uint32_t)(i % THREADS));
		/* a skewed profile: a few stacks are hot */
		uint32_t r = next_rand();
		pb_put_uint64(&w, 4, (r & 3) ? r % 60 + 1 : r % STACKS + 1);
		pb_put_uint32(&w, 5, 2);
		pb_end_nested(&w, s);
		pb_end_nested(&w, pkt);
		if (pb_writer_size(&w) > (1 << 20)) {
			fwrite(pb_writer_data(&w), 1, pb_writer_size(&w), f);
			pb_writer_reset(&w);
		}
	}
	fwrite(pb_writer_data(&w), 1, pb_writer_size(&w), f);
	pb_writer_release(&w);
	fclose(f);
}

static void report(void)
{
	char trace[] = OUT_DIR "/profile_1m.pftrace", html[] = OUT_DIR "/profile_1m.html";
	char json[] = OUT_DIR "/profile_1m.json";
	struct stat st;
	double cpu;
	if (stat(trace, &st) != 0) {
		gen_trace(trace, 1000000);
		if (stat(trace, &st) != 0)
			return;
	}
	char *rep[] = {"out/tracebox", "traceconv", "report", trace, html, NULL};
	char *js[] = {"out/tracebox", "traceconv", "report", "--json", trace, json, NULL};
	double best = 1e9, best_cpu = 0;
	for (int i = 0; i < 3; i++) {
		double t0 = bench_now_s();
		if (run(rep, &cpu) != 0) {
			printf("report: failed\n");
			return;
		}
		double t = bench_now_s() - t0;
		if (t < best)
			best = t, best_cpu = cpu;
	}
	struct stat hs, js_st;
	stat(html, &hs);
	double t0 = bench_now_s();
	run(js, &cpu);
	double tj = bench_now_s() - t0;
	stat(json, &js_st);
	printf("report: 1 M samples (%.1f MB trace): HTML in %.2f s wall, %.2f s CPU (best of 3), "
	       "%.2f MB (budgets < 2 s, < 5 MB); --json %.2f s, %.2f MB\n",
	       (double)st.st_size / 1e6, best, best_cpu, (double)hs.st_size / 1e6, tj,
	       (double)js_st.st_size / 1e6);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "spin") == 0)
		return spin_main(strtol(argv[2], NULL, 10), argv[3]);
	mkdir(OUT_DIR, 0755);
	const char *only = argc > 1 ? argv[1] : NULL;
	if (!only || strcmp(only, "symbolize") == 0)
		symbolize();
	if (!only || strcmp(only, "report") == 0)
		report();
	if (!only || strcmp(only, "overhead") == 0)
		overhead(argv[0]);
	return 0;
}
