/*
 * The tasks ftrace events mention, collected while encoding so that the
 * linux.process_stats data source of the same session can describe them
 * (ProcessTree entries for pids first seen in ftrace), as Perfetto's
 * FtraceMetadata does: an event's common_pid and every field declared
 * `pid_t` of 4 bytes (sched_switch prev_pid/next_pid, sched_waking pid,
 * sched_process_fork child_pid, ...), whatever its encoding (typed,
 * compact_sched or generic); task_rename also names a renamed task (its
 * common_pid, which is the renamed task in the kernel's tracepoint).
 */
#include "ftrace_int.h"

/* ftrace_pids_collect's range test on the OR of three pids. */
_Static_assert((FTRACE_PIDS_CACHE & (FTRACE_PIDS_CACHE - 1)) == 0,
               "FTRACE_PIDS_CACHE must be a power of two");

/* Where f's pids are, once per format (from probes_ftrace_proto_resolve):
 * common_pid first (task_rename's renamed task), then its pid_t fields. */
void probes_ftrace_pids_resolve(struct ftrace_event_format *f)
{
	f->n_pid_offs = 0;
	if (f->common_pid >= 0 && f->fields[f->common_pid].size == 4)
		f->pid_off[f->n_pid_offs++] = f->fields[f->common_pid].offset;
	for (size_t i = 0; i < f->n_fields; i++) {
		const struct ftrace_field *fd = &f->fields[i];
		if ((int)i == f->common_pid || fd->kind != FTRACE_FIELD_INT || fd->size != 4 ||
		    strcmp(fd->type, "pid_t") != 0)
			continue;
		if (f->n_pid_offs == TB_ARRAY_SIZE(f->pid_off))
			break;
		f->pid_off[f->n_pid_offs++] = fd->offset;
	}
	f->pid_end = 0;
	for (unsigned i = 0; i < f->n_pid_offs; i++)
		if (f->pid_off[i] + 4 > f->pid_end)
			f->pid_end = (uint16_t)(f->pid_off[i] + 4);
	/* ftrace_pids_collect reads the first three: repeat the first. */
	for (unsigned i = f->n_pid_offs; i < 3 && f->n_pid_offs; i++)
		f->pid_off[i] = f->pid_off[0];
	f->is_rename = f->common_pid >= 0 && strcmp(f->group, "task") == 0 &&
	               strcmp(f->name, "task_rename") == 0;
}

static void pids_add(struct ftrace_pids *p, int32_t pid)
{
	if (pid <= 0) { /* the idle task (remembered as seen), or garbage */
		p->cache[0] |= pid == 0;
		return;
	}
	if (pid < FTRACE_PIDS_CACHE)
		p->cache[pid / 64] |= 1ull << (pid % 64);
	else if (hmap_get(&p->big, (uint64_t)pid, NULL))
		return;
	else
		hmap_put(&p->big, (uint64_t)pid, 1);
	vec_push(&p->pids, pid);
}

void probes_ftrace_pids_collect_slow(struct ftrace_pids *p, const struct ftrace_event_format *f,
                                     const struct ftrace_record *rec)
{
	for (unsigned i = 0; i < f->n_pid_offs; i++) {
		int32_t pid;
		if ((size_t)f->pid_off[i] + 4 > rec->len)
			continue;
		memcpy(&pid, rec->data + f->pid_off[i], 4);
		if (!ftrace_pid_seen(p, rec->data, f->pid_off[i]))
			pids_add(p, pid);
	}
	if (f->is_rename && (size_t)f->pid_off[0] + 4 <= rec->len) {
		int32_t pid;
		memcpy(&pid, rec->data + f->pid_off[0], 4);
		if (pid > 0)
			vec_push(&p->renamed, pid);
	}
}

void probes_ftrace_pids_clear(struct ftrace_pids *p)
{
	for (size_t i = 0; i < p->pids.len; i++)
		if (p->pids.data[i] < FTRACE_PIDS_CACHE)
			p->cache[p->pids.data[i] / 64] = 0;
	hmap_clear(&p->big);
	vec_clear(&p->pids);
	vec_clear(&p->renamed);
}

void probes_ftrace_pids_release(struct ftrace_pids *p)
{
	hmap_release(&p->big);
	vec_release(&p->pids);
	vec_release(&p->renamed);
}
