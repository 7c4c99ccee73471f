/*
 * tasks.c: names of the sampled processes and threads, so a trace from
 * linux.perf alone has thread.name and process.name (Perfetto's traced_perf
 * leaves that to linux.process_stats).
 *
 * Sources, freshest first:
 *   COMM records (attr.comm): a thread's name whenever it is set, by
 *     prctl(PR_SET_NAME) or by exec(2) (comm_exec), which is how the
 *     forked child of the recorder becomes the workload;
 *   FORK records (attr.task): a new process' parent, and its name, which
 *     is its parent's until it renames itself;
 *   /proc/PID/{cmdline,stat} and /proc/PID/task/TID/comm, read when a task
 *     is first sampled (a process that is gone keeps what the records said).
 *
 * What is written: a ProcessTree packet {processes{pid ppid cmdline}
 * threads{tid tgid name}} when a task is first sampled, and one more for a
 * task already described when it is renamed (a new thread name; after an
 * exec also the new cmdline). Timestamps are the sample clock's (the
 * sequence's default), so the trace processor puts a rename where it
 * happened.
 *
 * State is per data source instance and bounded: past PERF_MAX_TASKS tasks
 * the cache starts over (tasks are then described again on their next
 * sample, which costs a few bytes and loses nothing).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf_int.h"

#define PERF_MAX_TASKS 65536
#define PERF_CMDLINE_MAX 4096 /* bytes of /proc/PID/cmdline written */

struct perf_task {
	uint32_t pid, ppid;
	char comm[PERF_COMM_MAX]; /* NUL-terminated; "" unknown */
	bool described;           /* a ProcessTree thread entry was written */
};

void perf_tasks_init(struct perf_tasks *t)
{
	memset(t, 0, sizeof *t);
	hmap_init(&t->by_tid);
	hmap_init(&t->described_pids);
}

static void tasks_clear(struct perf_tasks *t)
{
	for (size_t i = hmap_next(&t->by_tid, 0); i != HMAP_END; i = hmap_next(&t->by_tid, i + 1))
		tb_free((void *)(uintptr_t)t->by_tid.slots[i].val);
	hmap_clear(&t->by_tid);
	hmap_clear(&t->described_pids);
}

void perf_tasks_release(struct perf_tasks *t)
{
	tasks_clear(t);
	hmap_release(&t->by_tid);
	hmap_release(&t->described_pids);
}

static struct perf_task *task_get(struct perf_tasks *t, uint32_t tid, uint32_t pid)
{
	struct perf_task *k = hmap_get_ptr(&t->by_tid, tid);
	if (k) {
		if (pid)
			k->pid = pid;
		return k;
	}
	if (t->by_tid.len >= PERF_MAX_TASKS)
		tasks_clear(t);
	k = tb_calloc(1, sizeof *k);
	k->pid = pid;
	hmap_put_ptr(&t->by_tid, tid, k);
	return k;
}

static void set_comm(struct perf_task *k, const char *s, size_t n)
{
	if (n >= sizeof k->comm)
		n = sizeof k->comm - 1;
	memcpy(k->comm, s, n);
	k->comm[n] = 0;
}

/* Up to cap bytes of a /proc file into buf; the byte count or -1. */
static ssize_t read_proc(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	if (fd < 0)
		return -1;
	n = tb_read_all(fd, buf, cap);
	tb_close(&fd);
	return n;
}

/* ppid from /proc/PID/stat: "pid (comm) state ppid ...", comm may hold
 * spaces and parentheses, so the fields start after the last ')'. */
static uint32_t proc_ppid(uint32_t pid)
{
	char path[64], buf[1024], *p, *end;
	ssize_t n;
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	if ((n = read_proc(path, buf, sizeof buf - 1)) <= 0)
		return 0;
	buf[n] = 0;
	if (!(p = strrchr(buf, ')')) || p[1] != ' ' || !p[2] || p[3] != ' ')
		return 0;
	unsigned long v = strtoul(p + 4, &end, 10);
	return end == p + 4 || v > UINT32_MAX ? 0 : (uint32_t)v;
}

static bool proc_comm(uint32_t pid, uint32_t tid, struct perf_task *k)
{
	char path[64], buf[PERF_COMM_MAX + 1];
	ssize_t n;
	snprintf(path, sizeof path, "/proc/%u/task/%u/comm", pid, tid);
	if ((n = read_proc(path, buf, sizeof buf - 1)) <= 0)
		return false;
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	set_comm(k, buf, (size_t)n);
	return true;
}

/* Describe process pid: its cmdline from /proc (else its name, marked as
 * such), its parent. */
static void describe_process(struct perf_tasks *t, uint32_t pid, struct perf_pt_process *out,
                             char *cmd, size_t cap)
{
	char path[64];
	struct perf_task *main_thread = hmap_get_ptr(&t->by_tid, pid);
	ssize_t n;
	memset(out, 0, sizeof *out);
	out->pid = pid;
	snprintf(path, sizeof path, "/proc/%u/cmdline", pid);
	n = read_proc(path, cmd, cap);
	if (n > 0) {
		out->cmdline = cmd;
		out->cmdline_len = (size_t)n;
	} else if (main_thread && main_thread->comm[0]) {
		out->cmdline = main_thread->comm;
		out->cmdline_len = strlen(main_thread->comm) + 1;
		out->cmdline_is_comm = true;
	}
	out->ppid = main_thread && main_thread->ppid ? main_thread->ppid : proc_ppid(pid);
}

void perf_tasks_sample(struct perf_tasks *t, struct perf_emitter *e, struct pb_writer *w,
                       uint64_t ts, uint32_t pid, uint32_t tid)
{
	struct perf_pt_process proc;
	struct perf_pt_thread thr;
	char cmd[PERF_CMDLINE_MAX];
	struct perf_task *k;
	bool new_pid;

	if (!tid)
		return; /* the idle task */
	k = task_get(t, tid, pid);
	if (k->described)
		return;
	if (!k->comm[0])
		proc_comm(pid, tid, k);
	new_pid = !hmap_get(&t->described_pids, pid, NULL);
	if (new_pid) {
		describe_process(t, pid, &proc, cmd, sizeof cmd);
		hmap_put(&t->described_pids, pid, 1);
	}
	k = task_get(t, tid, pid); /* the cache may have started over */
	thr = (struct perf_pt_thread){tid, pid, k->comm};
	perf_emit_process_tree(e, w, ts, new_pid && proc.cmdline_len ? &proc : NULL, &thr);
	k->described = true;
}

void perf_tasks_record(struct perf_tasks *t, struct perf_emitter *e, struct pb_writer *w,
                       const struct perf_record *rec)
{
	struct perf_task *k, *parent;

	switch (rec->kind) {
	case PERF_REC_FORK:
		parent = hmap_get_ptr(&t->by_tid, rec->ptid);
		k = task_get(t, rec->tid, rec->pid);
		if (rec->pid == rec->tid)
			k->ppid = rec->ppid;
		if (parent && !k->comm[0])
			memcpy(k->comm, parent->comm, sizeof k->comm);
		k->described = false; /* a recycled tid is a new task */
		if (rec->pid == rec->tid)
			hmap_del(&t->described_pids, rec->pid, NULL);
		break;
	case PERF_REC_COMM: {
		struct perf_pt_process proc;
		struct perf_pt_thread thr;
		char cmd[PERF_CMDLINE_MAX];
		k = task_get(t, rec->tid, rec->pid);
		set_comm(k, rec->comm, rec->comm_len);
		bool exec_pid = rec->comm_exec && rec->pid == rec->tid &&
		                hmap_get(&t->described_pids, rec->pid, NULL);
		if (!k->described && !exec_pid)
			break;
		if (exec_pid)
			describe_process(t, rec->pid, &proc, cmd, sizeof cmd);
		thr = (struct perf_pt_thread){rec->tid, rec->pid, k->comm};
		perf_emit_process_tree(e, w, rec->time, exec_pid && proc.cmdline_len ? &proc : NULL,
		                       &thr);
		k->described = true;
		break;
	}
	default:
		break;
	}
}
