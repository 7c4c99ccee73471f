/*
 * perf_dwarf_workload: a CPU-bound program for the DWARF unwinding tests
 * (tests/root/t3110-perf-dwarf.sh), built with `gcc -O2
 * -fomit-frame-pointer`, so no frame-pointer chain exists. Two hot paths:
 *
 *   main -> sort_and_search -> qsort (libc) -> ... -> by_key (comparator)
 *                           -> bsearch (libc) -> by_key
 *   main -> mix_direct (a plain loop, called directly)
 *
 * splitting the CPU time (argv[2] seconds, default 2) about 60/40.
 * With argv[3] "deep", it spins instead at the bottom of a 200-deep
 * recursion (deeper than the unwinder's 128-frame limit); with "fixed" it
 * does a fixed amount of work instead (argv[2] * 100 rounds of both paths:
 * bench/perf_dwarf_bench.c times it); with "forkexec" it forks five
 * children one after another, each spinning 30 ms in before_exec and then
 * exec'ing this program anew for argv[2] seconds (samples taken before the
 * exec are of the parent's image, those after of the new one). Writes
 * "PID CPU_NS" to argv[1] when given.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N 4096

static uint64_t keys[N];
static volatile uint64_t sink;

__attribute__((noinline)) static int by_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	/* a little work per comparison, so the leaf is the comparator */
	for (int i = 0; i < 8; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull, y ^= x >> 60;
	sink += y;
	x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

__attribute__((noinline)) static void sort_and_search(uint64_t seed)
{
	for (int i = 0; i < N; i++)
		keys[i] = (seed = seed * 6364136223846793005ull + 1) >> 11;
	qsort(keys, N, sizeof keys[0], by_key);
	for (int i = 0; i < N; i++) {
		uint64_t k = keys[(i * 7) % N];
		sink += bsearch(&k, keys, N, sizeof keys[0], by_key) != NULL;
	}
}

__attribute__((noinline)) static uint64_t mix_direct(uint64_t x)
{
	for (int i = 0; i < 3000000; i++)
		x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	return x;
}

static int64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) static int deep(int n, int64_t until)
{
	int r;
	if (n == 0) {
		uint64_t x = 1;
		while (cpu_ns() < until)
			x = mix_direct(x) | 1;
		sink += x;
		return 1;
	}
	r = deep(n - 1, until);
	sink += (uint64_t)r; /* not a tail call */
	__asm__ volatile("" ::: "memory");
	return r + 1;
}

__attribute__((noinline)) static void before_exec(const char *self, char *secs)
{
	int64_t until = cpu_ns() + 30000000;
	uint64_t x = 1;
	while (cpu_ns() < until)
		for (int i = 0; i < 100000; i++)
			x = (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ull + (uint64_t)i;
	sink += x;
	execl(self, "dwarfwl", "", secs, (char *)NULL);
	_exit(127);
}

__attribute__((noinline)) static void fork_exec(char *secs)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0)
		exit(1);
	self[n] = 0;
	for (int i = 0; i < 5; i++) {
		int status;
		pid_t pid = fork();
		if (pid == 0)
			before_exec(self, secs);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0)
			exit(1);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 2.0;
	int64_t start = cpu_ns(), spent_sort = 0, spent_direct = 0;
	uint64_t x = 1;
	if (argc > 3 && strcmp(argv[3], "forkexec") == 0)
		fork_exec(argv[2]);
	if (argc > 3 && strcmp(argv[3], "deep") == 0)
		deep(200, start + (int64_t)(secs * 1e9));
	if (argc > 3 && strcmp(argv[3], "fixed") == 0) {
		for (long r = 0; r < (long)(secs * 100); r++) {
			sort_and_search(x + (uint64_t)r);
			x = mix_direct(x);
		}
		secs = 0;
	}
	/* ~60 % of the CPU in sort_and_search, ~40 % in mix_direct, by time */
	while (cpu_ns() - start < (int64_t)(secs * 1e9)) {
		int64_t t = cpu_ns();
		if (spent_sort * 4 <= spent_direct * 6) {
			sort_and_search(x);
			spent_sort += cpu_ns() - t;
		} else {
			x = mix_direct(x);
			spent_direct += cpu_ns() - t;
		}
	}
	sink += x;
	if (argc > 1 && argv[1][0]) {
		FILE *f = fopen(argv[1], "w");
		if (f) {
			fprintf(f, "%d %lld\n", (int)getpid(), (long long)(cpu_ns() - start));
			fclose(f);
		}
	}
	return 0;
}
