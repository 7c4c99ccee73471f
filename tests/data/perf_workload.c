/*
 * perf_workload: the CPU profile test's target (tests/root/t3100). Two hot
 * functions share the CPU about 70/30 for ~2 s of CPU time: each round runs
 * 7 units of hot_seventy and 3 of hot_thirty, the same arithmetic loop in
 * both, and checks the thread's CPU clock once per round so time spent
 * outside them stays far below 1 %. Built with -O1 -fno-omit-frame-pointer -g.
 *
 *   perf_workload [OUT]   OUT gets "PID CPU_NS" when done
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define UNIT 2000000 /* loop iterations per unit (~2 ms): rounds of ~20 ms, far
                      * longer than the 1 ms sampling period, so no aliasing */

static volatile unsigned long sink;

#define SPIN(units)                                                                \
	do {                                                                       \
		unsigned long acc = sink;                                          \
		for (long i = 0; i < (long)(units) * UNIT; i++) {                  \
			acc = acc * 6364136223846793005ul + 1442695040888963407ul; \
			__asm__ volatile("" : "+r"(acc));                          \
		}                                                                  \
		sink = acc;                                                        \
	} while (0)

__attribute__((noinline)) void hot_seventy(int units) { SPIN(units); }
__attribute__((noinline)) void hot_thirty(int units) { SPIN(units); }

static long long cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long long start = cpu_ns(), used;
	do {
		hot_seventy(7);
		hot_thirty(3);
		used = cpu_ns() - start;
	} while (used < 2000000000ll);
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");
		if (!f)
			return 1;
		fprintf(f, "%d %lld\n", (int)getpid(), used);
		fclose(f);
	}
	return 0;
}
