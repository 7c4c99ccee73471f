/*
 * perf_workload: the CPU profile tests' target (tests/root/t3100). Two hot
 * functions share the CPU about 70/30: each round runs 7 units of
 * hot_seventy and 3 of hot_thirty, the same arithmetic loop in both, and
 * checks the thread's CPU clock once per round so time spent outside them
 * stays far below 1 %. Built with -O1 -fno-omit-frame-pointer
 * -mno-omit-leaf-frame-pointer -g.
 *
 *   perf_workload [OUT [MODE [MS]]]   OUT gets "PID CPU_NS" when done
 *                                     (MS of CPU, default 2000)
 *   MODE split    the 70/30 rounds (default)
 *        fork     a forked child runs hot_thirty for MS/2 while the parent
 *                 runs hot_seventy for MS/2 and waits for it; OUT gets
 *                 "PID CPU_NS CHILD_PID"
 *        control  hot_seventy for MS/4, then "enable" through
 *                 $TRACEBOX_CONTROL (fifo:CTL,ACK) and its ack, hot_thirty
 *                 for MS/2, "disable" and its ack, hot_seventy for MS/4:
 *                 only hot_thirty runs while sampling is on; "ping" and an
 *                 unknown word first, their answers go to OUT's second line
 *        idle     hot_seventy for MS, never enabling the --control gate
 *        unlink   removes its own file (argv[0]), then the 70/30 rounds: a
 *                 binary replaced under a running program, which a
 *                 profiler can no longer read
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

/* Run fn one unit at a time for ms of this thread's CPU. */
static void spin_for(void (*fn)(int), long long ms)
{
	long long start = cpu_ns();
	while (cpu_ns() - start < ms * 1000000)
		fn(1);
}

/* Write a control word, read the answer line into ans. */
static int control(int ctl, int ack, const char *word, char *ans, size_t cap)
{
	size_t n = 0;
	char c;
	if (write(ctl, word, strlen(word)) != (ssize_t)strlen(word) || write(ctl, "\n", 1) != 1)
		return -1;
	while (n + 1 < cap && read(ack, &c, 1) == 1 && c != '\n')
		ans[n++] = c;
	ans[n] = 0;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[2] : "split";
	long long ms = argc > 3 ? atoll(argv[3]) : 2000, start = cpu_ns(), used;
	int child = 0;
	char answers[64] = "";

	if (strcmp(mode, "fork") == 0) {
		pid_t pid = fork();
		if (pid == 0) {
			spin_for(hot_thirty, ms / 2);
			_exit(0);
		}
		spin_for(hot_seventy, ms / 2);
		waitpid(pid, NULL, 0);
		child = (int)pid;
	} else if (strcmp(mode, "control") == 0) {
		const char *env = getenv("TRACEBOX_CONTROL");
		char ctl_path[512], *ack_path, a1[16], a2[16], a3[16], a4[16];
		int ctl, ack;
		if (!env || strncmp(env, "fifo:", 5) != 0 || strlen(env) >= sizeof ctl_path)
			return 2;
		snprintf(ctl_path, sizeof ctl_path, "%s", env + 5);
		if (!(ack_path = strchr(ctl_path, ',')))
			return 2;
		*ack_path++ = 0;
		if ((ctl = open(ctl_path, O_WRONLY)) < 0 || (ack = open(ack_path, O_RDONLY)) < 0)
			return 3;
		spin_for(hot_seventy, ms / 4);
		if (control(ctl, ack, "ping", a1, sizeof a1) || control(ctl, ack, "bogus", a2, sizeof a2) ||
		    control(ctl, ack, "enable", a3, sizeof a3))
			return 4;
		spin_for(hot_thirty, ms / 2);
		if (control(ctl, ack, "disable", a4, sizeof a4))
			return 4;
		spin_for(hot_seventy, ms / 4);
		snprintf(answers, sizeof answers, "%s %s %s %s", a1, a2, a3, a4);
	} else if (strcmp(mode, "unlink") == 0) {
		if (unlink(argv[0]) != 0)
			return 5;
		do {
			hot_seventy(7);
			hot_thirty(3);
			used = cpu_ns() - start;
		} while (used < ms * 1000000);
	} else if (strcmp(mode, "idle") == 0) {
		spin_for(hot_seventy, ms);
	} else {
		do {
			hot_seventy(7);
			hot_thirty(3);
			used = cpu_ns() - start;
		} while (used < ms * 1000000);
	}
	used = cpu_ns() - start;
	if (argc > 1) {
		FILE *f = fopen(argv[1], "w");
		if (!f)
			return 1;
		fprintf(f, "%d %lld", (int)getpid(), used);
		if (child)
			fprintf(f, " %d", child);
		fprintf(f, "\n%s\n", answers);
		fclose(f);
	}
	return 0;
}
