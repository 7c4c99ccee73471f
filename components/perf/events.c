/*
 * events.c: opening the sampling events. One perf_event_open fd per CPU
 * (pid -1 samples every process on that CPU; a target pid narrows it), each
 * with its own mmap ring of ring_buffer_pages data pages after one control
 * page. Events are created disabled and enabled together, so the first
 * samples of every CPU start at the same moment.
 *
 * When the kernel refuses, the message names the knob that decided it
 * (kernel.perf_event_paranoid, kernel.yama.ptrace_scope,
 * kernel.perf_event_mlock_kb) with its current value and what to change;
 * nothing is weakened behind the user's back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "perf_int.h"

#define PERF_FD_CLOEXEC 8         /* PERF_FLAG_FD_CLOEXEC */
#define PERF_DEFAULT_FREQUENCY 10 /* Hz, PerfEventConfig's default */

/* A sysctl's value as text ("?" when unreadable), into buf. */
static const char *sysctl_str(const char *path, char *buf, size_t cap)
{
	char *text = NULL;
	size_t len = 0, n;
	snprintf(buf, cap, "?");
	if (tb_read_file(path, &text, &len, 64, NULL) == 0) {
		n = strcspn(text, "\n");
		snprintf(buf, cap, "%.*s", (int)n, text);
	}
	tb_free(text);
	return buf;
}

static const char *counter_name(uint32_t counter)
{
	switch (counter) {
	case PERF_COUNTER_SW_TASK_CLOCK:
		return "task-clock";
	case PERF_COUNTER_HW_CPU_CYCLES:
		return "cpu-cycles";
	case PERF_COUNTER_HW_INSTRUCTIONS:
		return "instructions";
	default:
		return "cpu-clock";
	}
}

/* Fill the event type/config for a PerfEvents.Counter. */
static int set_counter(struct perf_attr *a, uint32_t counter, struct tb_err *err)
{
	switch (counter) {
	case 0:
	case PERF_COUNTER_SW_CPU_CLOCK:
		a->type = PERF_ATTR_TYPE_SOFTWARE;
		a->config = PERF_ATTR_SW_CPU_CLOCK;
		return 0;
	case PERF_COUNTER_SW_TASK_CLOCK:
		a->type = PERF_ATTR_TYPE_SOFTWARE;
		a->config = PERF_ATTR_SW_TASK_CLOCK;
		return 0;
	case PERF_COUNTER_HW_CPU_CYCLES:
		a->type = PERF_ATTR_TYPE_HARDWARE;
		a->config = PERF_ATTR_HW_CPU_CYCLES;
		return 0;
	case PERF_COUNTER_HW_INSTRUCTIONS:
		a->type = PERF_ATTR_TYPE_HARDWARE;
		a->config = PERF_ATTR_HW_INSTRUCTIONS;
		return 0;
	}
	return tb_err_set(err, -EINVAL,
	                  "unsupported perf counter %u (use cpu-clock, task-clock, "
	                  "cpu-cycles or instructions)",
	                  counter);
}

/* clockid for perf_event_attr and the matching BuiltinClock. */
static void set_clock(struct perf_attr *a, uint32_t clock, uint32_t *builtin)
{
	switch (clock) {
	case PERF_CLOCK_REALTIME:
		a->clockid = CLOCK_REALTIME, *builtin = 1;
		break;
	case PERF_CLOCK_MONOTONIC:
		a->clockid = CLOCK_MONOTONIC, *builtin = 3;
		break;
	case PERF_CLOCK_BOOTTIME:
		a->clockid = CLOCK_BOOTTIME, *builtin = 6;
		break;
	default:
		a->clockid = CLOCK_MONOTONIC_RAW, *builtin = 5;
		break;
	}
	a->flags |= 1ull << PERF_FLAG_BIT_USE_CLOCKID;
}

/* Online CPUs from /sys/devices/system/cpu/online ("0-3,6"), into cpus. */
static size_t online_cpus(int *cpus, size_t cap)
{
	char *text = NULL, *p, *end;
	size_t len, n = 0;
	if (tb_read_file("/sys/devices/system/cpu/online", &text, &len, 4096, NULL) < 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);
		for (long i = 0; i < c && n < cap; i++)
			cpus[n++] = (int)i;
		return n;
	}
	for (p = text; *p && *p != '\n';) {
		long lo = strtol(p, &end, 10), hi = lo;
		if (end == p || lo < 0)
			break;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				break;
			p = end;
		}
		for (long c = lo; c <= hi && n < cap; c++)
			cpus[n++] = (int)c;
		if (*p == ',')
			p++;
	}
	tb_free(text);
	return n;
}

size_t perf_filter_cpus(int *cpus, size_t n, const uint32_t *targets, size_t n_targets)
{
	size_t kept = 0;
	if (!n_targets)
		return n;
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n_targets; j++) {
			if (cpus[i] >= 0 && (uint32_t)cpus[i] == targets[j]) {
				cpus[kept++] = cpus[i];
				break;
			}
		}
	}
	return kept;
}

static int open_error(int e, const struct perf_event_opts *o, uint32_t counter, int cpu,
                      struct tb_err *err)
{
	char v1[32], v2[32];
	const char *what = counter_name(counter);
	switch (e) {
	case EACCES:
	case EPERM:
		if (o->pid > 0)
			return tb_err_set(
			    err, -e,
			    "cannot open perf event '%s' for pid %d on cpu %d: %s "
			    "(kernel.perf_event_paranoid is %s, kernel.yama.ptrace_scope is %s): "
			    "run as root or as the process' owner, lower perf_event_paranoid "
			    "(sysctl kernel.perf_event_paranoid=1) or grant CAP_PERFMON; with "
			    "ptrace_scope >= 2 only CAP_SYS_PTRACE may sample other processes",
			    what, (int)o->pid, cpu, strerror(e),
			    sysctl_str("/proc/sys/kernel/perf_event_paranoid", v1, sizeof v1),
			    sysctl_str("/proc/sys/kernel/yama/ptrace_scope", v2, sizeof v2));
		return tb_err_set(
		    err, -e,
		    "cannot open perf event '%s' on cpu %d: %s (kernel.perf_event_paranoid is "
		    "%s; sampling all processes%s needs root or CAP_PERFMON, or "
		    "sysctl kernel.perf_event_paranoid=%s)",
		    what, cpu, strerror(e),
		    sysctl_str("/proc/sys/kernel/perf_event_paranoid", v1, sizeof v1),
		    o->exclude_kernel && !o->kernel_frames ? "" : " with kernel frames",
		    o->exclude_kernel && !o->kernel_frames ? "0" : "-1");
	case ENOENT:
	case ENODEV:
	case EOPNOTSUPP:
		return tb_err_set(
		    err, -e,
		    "perf event '%s' is not available on cpu %d: %s (no PMU support here, e.g. "
		    "in a VM; use the cpu-clock timebase)",
		    what, cpu, strerror(e));
	case ESRCH:
		return tb_err_set(err, -e, "cannot sample pid %d: no such process", (int)o->pid);
	case ENOSYS:
		return tb_err_set(err, -e,
		                  "perf_event_open is not supported by this kernel "
		                  "(CONFIG_PERF_EVENTS)");
	default:
		return tb_err_set(err, -e, "cannot open perf event '%s' on cpu %d: %s", what, cpu,
		                  strerror(e));
	}
}

static int map_stream(struct perf_cpu_stream *s, uint32_t pages, uint64_t sample_type,
                      struct tb_err *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char v[32];
	s->map_len = (size_t)(pages + 1) * page;
	s->map = mmap(NULL, s->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->map == MAP_FAILED) {
		int e = errno;
		s->map = NULL;
		if (e == EPERM || e == ENOMEM)
			return tb_err_set(
			    err, -e,
			    "cannot map the %u-page perf ring of cpu %d: %s (the per-user limit "
			    "kernel.perf_event_mlock_kb is %s KiB; use fewer ring_buffer_pages or "
			    "raise it)",
			    pages, s->cpu, strerror(e),
			    sysctl_str("/proc/sys/kernel/perf_event_mlock_kb", v, sizeof v));
		return tb_err_set(err, -e, "cannot map the perf ring of cpu %d: %s", s->cpu,
		                  strerror(e));
	}
	perf_ring_init(&s->ring, s->map, (uint64_t)pages * page, sample_type);
	return 0;
}

/* The attr of one attempt (pages and exclude_kernel may differ between
 * attempts). */
static int fill_attr(struct perf_attr *a, const struct perf_event_opts *o, bool exclude_kernel,
                     uint32_t *clock_id, struct tb_err *err)
{
	int rc;
	memset(a, 0, sizeof *a);
	a->size = PERF_ATTR_SIZE;
	if ((rc = set_counter(a, o->counter, err)) < 0)
		return rc;
	a->sample_type = PERF_SAMPLE_TYPE_DEFAULT;
	if (o->no_callchain)
		a->sample_type &= ~(uint64_t)PERF_ST_CALLCHAIN;
	if (o->user_stacks && !o->no_callchain) {
		/* DWARF: the user registers and stack are copied into each
		 * sample and unwound by traced_perf; the kernel's callchain
		 * keeps only kernel frames (or goes, without them). */
		a->sample_type |= PERF_ST_REGS_USER | PERF_ST_STACK_USER;
		a->sample_regs_user = PERF_REGS_MASK;
		a->sample_stack_user = PERF_STACK_USER_SIZE;
		a->flags |= 1ull << PERF_FLAG_BIT_EXCLUDE_CALLCHAIN_USER;
		if (!o->kernel_frames)
			a->sample_type &= ~(uint64_t)PERF_ST_CALLCHAIN;
	} else if (o->skip_user_frames && !o->no_callchain) {
		a->flags |= 1ull << PERF_FLAG_BIT_EXCLUDE_CALLCHAIN_USER;
	}
	if (o->period) {
		a->sample_period_or_freq = o->period;
	} else {
		a->sample_period_or_freq = o->frequency ? o->frequency : PERF_DEFAULT_FREQUENCY;
		a->flags |= 1ull << PERF_FLAG_BIT_FREQ;
	}
	a->flags |= 1ull << PERF_FLAG_BIT_DISABLED;
	if (exclude_kernel)
		a->flags |= 1ull << PERF_FLAG_BIT_EXCLUDE_KERNEL;
	if (!o->kernel_frames)
		a->flags |= 1ull << PERF_FLAG_BIT_EXCLUDE_CALLCHAIN_KERNEL;
	if (o->inherit && o->pid > 0)
		a->flags |= 1ull << PERF_FLAG_BIT_INHERIT;
	if (o->task_records)
		a->flags |= 1ull << PERF_FLAG_BIT_COMM | 1ull << PERF_FLAG_BIT_COMM_EXEC |
		            1ull << PERF_FLAG_BIT_TASK | 1ull << PERF_FLAG_BIT_SAMPLE_ID_ALL;
	if (o->mmap_records)
		a->flags |= 1ull << PERF_FLAG_BIT_MMAP | 1ull << PERF_FLAG_BIT_MMAP2 |
		            1ull << PERF_FLAG_BIT_SAMPLE_ID_ALL;
	set_clock(a, o->clock, clock_id);
	return 0;
}

/* One attempt: every stream opened and mapped, or nothing (ev closed).
 * Returns 0, or -errno with err set; *mmap_failed tells a refused mmap
 * from a refused perf_event_open. */
static int open_streams(struct perf_events *ev, const struct perf_event_opts *o,
                        const struct perf_attr *a, const int *cpus, size_t n_cpus, uint32_t pages,
                        bool *mmap_failed, struct tb_err *err)
{
	int rc = 0;
	*mmap_failed = false;
	ev->streams = tb_calloc(n_cpus, sizeof *ev->streams);
	for (size_t i = 0; i < n_cpus; i++) {
		struct perf_cpu_stream *s = &ev->streams[i];
		long fd = syscall(SYS_perf_event_open, a, o->pid > 0 ? o->pid : -1, cpus[i], -1,
		                  PERF_FD_CLOEXEC);
		s->cpu = cpus[i];
		s->fd = -1;
		if (fd < 0) {
			rc = open_error(errno, o, ev->counter, cpus[i], err);
			break;
		}
		s->fd = (int)fd;
		ev->n_streams = i + 1;
		if ((rc = map_stream(s, pages, a->sample_type, err)) < 0) {
			*mmap_failed = true;
			break;
		}
	}
	if (rc < 0) {
		struct perf_events keep = *ev;
		perf_events_close(ev);
		ev->clock_id = keep.clock_id;
		ev->counter = keep.counter;
	}
	return rc;
}

int perf_events_open(struct perf_events *ev, const struct perf_event_opts *o, struct tb_err *err)
{
	struct perf_attr a;
	int *cpus = NULL;
	size_t n_cpus = 0;
	uint32_t pages = o->ring_buffer_pages ? o->ring_buffer_pages
	                 : o->user_stacks     ? PERF_DWARF_RING_PAGES
	                                      : PERF_DEFAULT_RING_PAGES;
	bool exclude_kernel = o->exclude_kernel, mmap_failed;
	uint32_t clock_id = 0;
	int rc = 0;

	memset(ev, 0, sizeof *ev);
	if ((pages & (pages - 1)) || pages > PERF_MAX_RING_PAGES)
		return tb_err_set(err, -EINVAL,
		                  "ring_buffer_pages must be a power of two up to "
		                  "%u, not %u",
		                  PERF_MAX_RING_PAGES, pages);
	if ((rc = fill_attr(&a, o, exclude_kernel, &clock_id, err)) < 0)
		return rc;
	ev->counter = o->counter ? o->counter : PERF_COUNTER_SW_CPU_CLOCK;

	cpus = tb_calloc(PERF_MAX_CPUS, sizeof *cpus);
	if (o->all_cpus) {
		n_cpus = online_cpus(cpus, PERF_MAX_CPUS);
		if (n_cpus && o->n_target_cpus &&
		    !(n_cpus = perf_filter_cpus(cpus, n_cpus, o->target_cpus, o->n_target_cpus))) {
			rc = tb_err_set(err, -ENODEV,
			                "none of the target_cpu values is an online cpu");
			goto out;
		}
	} else {
		cpus[n_cpus++] = o->pid > 0 ? -1 : (o->cpu >= 0 ? o->cpu : 0);
	}
	if (!n_cpus) {
		rc = tb_err_set(err, -ENODEV, "no online cpus found");
		goto out;
	}
	for (;;) {
		rc = open_streams(ev, o, &a, cpus, n_cpus, pages, &mmap_failed, err);
		if (rc == 0 || !o->degrade)
			break;
		if (!mmap_failed && (rc == -EACCES || rc == -EPERM) && !exclude_kernel) {
			/* perf_event_paranoid >= 2: user mode is what may be counted. */
			exclude_kernel = true;
			fill_attr(&a, o, exclude_kernel, &clock_id, NULL);
		} else if (mmap_failed && (rc == -EPERM || rc == -ENOMEM) &&
		           pages > PERF_MIN_RING_PAGES) {
			pages /= 2; /* over the locked-memory allowance */
		} else {
			break;
		}
		if (err)
			tb_err_clear(err);
	}
	if (rc < 0)
		goto out;
	ev->sample_type = a.sample_type;
	ev->clock_id = clock_id;
	ev->frequency = o->period ? 0 : a.sample_period_or_freq;
	ev->period = o->period;
	ev->ring_pages = pages;
	ev->kernel_excluded = exclude_kernel && !o->exclude_kernel;
out:
	tb_free(cpus);
	return rc;
}

static int ioctl_all(struct perf_events *ev, unsigned long req, const char *what,
                     struct tb_err *err)
{
	for (size_t i = 0; i < ev->n_streams; i++)
		if (ioctl(ev->streams[i].fd, req, 0) < 0)
			return tb_err_errno(err, -errno, "cannot %s perf event on cpu %d", what,
			                    ev->streams[i].cpu);
	return 0;
}

int perf_events_enable(struct perf_events *ev, struct tb_err *err)
{
	return ioctl_all(ev, PERF_IOC_ENABLE, "enable", err);
}

int perf_events_disable(struct perf_events *ev, struct tb_err *err)
{
	return ioctl_all(ev, PERF_IOC_DISABLE, "disable", err);
}

void perf_events_close(struct perf_events *ev)
{
	for (size_t i = 0; i < ev->n_streams; i++) {
		struct perf_cpu_stream *s = &ev->streams[i];
		perf_ring_release(&s->ring);
		if (s->map)
			munmap(s->map, s->map_len);
		tb_close(&s->fd);
	}
	tb_free(ev->streams);
	memset(ev, 0, sizeof *ev);
}
