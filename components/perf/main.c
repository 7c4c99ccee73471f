/*
 * traced_perf: the producer "perfetto.traced_perf" with one data source,
 * linux.perf. For each instance the service starts it decodes the
 * PerfEventConfig (DataSourceConfig field 111), opens one sampling event per
 * CPU (events.c), and every ring_buffer_read_period_ms drains the rings on a
 * loop timer: samples of processes in the configured scope are resolved to
 * frames (per-process /proc/PID/maps, kallsyms for kernel frames) and
 * written as PerfSample packets with interned callstacks (emit.c) through
 * the instance's trace writer; PERF_RECORD_LOST counts are written per CPU
 * as they appear. A Flush reads the rings before acknowledging; a Stop does
 * a final read, closes the events and frees the writer.
 *
 * Scope, as Perfetto's (scope.c): with no target every process is sampled
 * (less the exclusions); otherwise only the targets. Events are system-wide
 * in both cases and out-of-scope samples are written without a callstack
 * (sample_skipped_reason NOT_IN_SCOPE), so processes that start after the
 * recording can still match by cmdline. The maps of the last
 * PERF_MAX_CACHED_PIDS processes sampled are cached.
 *
 * max_enqueued_footprint_kb bounds the sample packet bytes written between
 * two commits to the service (one read pass): past it, samples are written
 * as skipped (UNWIND_ENQUEUE) instead, so a burst cannot exhaust the shared
 * memory buffer, whose drops would also lose interned entries later
 * samples refer to.
 *
 * Single-threaded on one loop; the connection is a tracing_daemon
 * (components/tracing/daemon.c), which reconnects every PERF_RECONNECT_MS
 * when the service goes away; SIGINT/SIGTERM exit 0.
 */
#include "perf_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "protos.h"
#include "tracing.h"
#include "version.h"
#include "pb_fields.h"

#define PERF_LOG "perf"
#define PERF_PRODUCER_NAME "perfetto.traced_perf"
#define PERF_DS_NAME "linux.perf"
#define PERF_RECONNECT_MS 1000
#define PERF_DEFAULT_READ_PERIOD_MS 100
#define PERF_MIN_READ_PERIOD_MS 1
#define PERF_DEFAULT_FREQUENCY 10
#define PERF_MAX_CACHED_PIDS 1024 /* processes whose maps are kept */
/* debuginfod fetching at the end of one capture, all files together: the
 * service waits for the stop (data_source_stop_timeout_ms) */
#define PERF_DEBUGINFOD_BUDGET_MS 20000
/* UNWIND_DWARF: samples waiting to be unwound, as Perfetto's queue */
#define PERF_UNWIND_QUEUE_MAX 1024
/* unwind_state_clear_period_ms when unset: cached CFI dropped this often */
#define PERF_DEFAULT_UNWIND_CLEAR_MS 300000
/* the unwind time of each stack, for the median and p99 logged at the stop */
#define PERF_UNWIND_HIST_NS 250
#define PERF_UNWIND_HIST_N 16384 /* up to 4 ms; slower ones in the last bucket */

/* One sample copied off the ring for DWARF unwinding: its kernel pcs
 * (kernel_frames), user registers and stack bytes, in one allocation. Or
 * (kind not PERF_REC_SAMPLE) a task record that changes a process' maps
 * (FORK of a process, COMM of an exec, MMAP), queued so that it is applied in time order
 * among the samples: a sample is unwound with the maps of its moment. */
struct pending {
	uint64_t time, seq; /* seq: order read, for equal times */
	int kind;           /* enum perf_rec_kind */
	uint32_t cpu, pid, tid;
	uint16_t misc;
	/* task records */
	uint32_t ppid;
	uint64_t map_addr, map_len, map_pgoff;
	const char *filename; /* filename_len bytes, after the struct */
	size_t filename_len;
	/* samples */
	size_t n_kernel, n_regs, stack_len;
	bool stack_maxed;
	uint64_t *kernel_ips;
	uint8_t *regs, *stack;
};

struct instance {
	uint64_t id;
	uint8_t *config; /* serialized DataSourceConfig from setup */
	size_t config_len;
	struct perf_daemon *d;
	struct tracing_writer *w;
	bool started, opened;
	struct perf_events ev;
	struct perf_emitter em;
	struct pb_writer buf; /* packets from emit.c, framed as Trace.packet */
	uint64_t timer;
	bool kernel_frames, have_ksyms;
	bool callchains; /* samples carry PERF_SAMPLE_CALLCHAIN */
	struct ksyms ksyms;
	struct perf_scope scope;
	struct hmap maps; /* pid -> struct proc * */
	struct perf_frame *frames;
	uint64_t *lost_written; /* per stream: lost_records already emitted */
	uint64_t skipped;       /* samples outside the scope */
	uint32_t *target_cpus;  /* PerfEventConfig.target_cpu, copied */
	size_t n_target_cpus;
	uint64_t footprint_limit; /* max_enqueued_footprint_kb in bytes; 0: none */
	uint64_t footprint;       /* sample bytes written since the last commit */
	uint64_t shed;            /* samples skipped over footprint_limit */
	struct perf_tasks tasks;  /* names of the sampled tasks */
	int32_t workload_pid;     /* > 0: per-task events on this process tree */
	uint64_t written;         /* samples written with their frames */
	bool wl_hidden;           /* the workload's /proc is closed to its own user */
	bool symbolize;           /* name user frames at the end (ModuleSymbols) */
	struct perf_symq symq;    /* user frames written without a name */
	uint64_t pass;            /* read passes so far (maps are re-read once a pass) */
	char *control_path;       /* --control: the recorder's socket (legacy_config) */
	int ctl_fd;               /* connected to it; -1 */
	char ctl_buf[64];
	size_t ctl_len;
	/* UNWIND_DWARF (dwarf set): samples are copied into queue while the
	 * rings are read, and unwound after every ring is drained. */
	bool dwarf;
	struct perf_unwinder unw;
	VEC(struct pending *) queue;       /* samples and task records of this pass */
	size_t queued_samples;             /* samples in queue (PERF_UNWIND_QUEUE_MAX) */
	uint64_t queued_seq;               /* records queued so far */
	uint64_t last_time;                /* time of the last record read that had one */
	uint64_t queued_bytes;             /* stack bytes in queue (max_enqueued_footprint_kb) */
	uint64_t unwind_clear_ns;          /* unwind_state_clear_period_ms */
	int64_t unwind_cleared_at;         /* tb_mono_ns of the last clear */
	uint64_t *pcs;                     /* PERF_UNWIND_MAX_FRAMES unwound pcs */
	uint64_t read_stage, unwind_stage; /* samples skipped at each stage */
	uint64_t unwind_ns;                /* time spent unwinding */
	uint32_t *unwind_hist;             /* stacks by unwind time, PERF_UNWIND_HIST_NS buckets */
};

/* What is cached of one sampled process. */
struct proc {
	struct perf_maps maps;  /* empty when unreadable */
	uint64_t maps_pass;     /* the read pass that loaded maps */
	bool maps_read;         /* /proc/PID/maps was read, or the maps follow
	                           from records since an exec or a fork from a
	                           process whose maps were known (else: records
	                           only, /proc is read for a sample) */
	bool exec_empty;        /* emptied by an exec, nothing mapped since: its
	                           samples are unwound (to INVALID_MAP), not
	                           skipped as of an unknown process */
	bool from_records;      /* the maps follow from records whole (since an
	                           exec, or a fork from a process whose maps were
	                           known): never re-read from /proc, whose maps
	                           would be those of a later moment */
	uint64_t exec_time;     /* time of the last exec applied: a FORK record
	                           older than it (read a pass late) is stale */
	struct perf_jitmap jit; /* /tmp/perf-PID.map, once one is seen */
	uint64_t jit_pass;      /* the read pass that last tried to load it */
	char jit_path[32];      /* "/tmp/perf-PID.map": the JIT frames' mapping */
};

struct perf_daemon {
	struct loop *loop;
	struct tracing_daemon *td;
	VEC(struct instance *) instances;
};

/* The current producer (during on_disconnect still the lost one, whose
 * writers must be freed), or NULL. */
static struct tracing_producer *producer(const struct perf_daemon *d)
{
	return d->td ? tracing_daemon_producer(d->td) : NULL;
}

/* ---- instances ------------------------------------------------------------- */

static struct instance *find(struct perf_daemon *d, uint64_t id, size_t *index)
{
	for (size_t i = 0; i < d->instances.len; i++) {
		if (d->instances.data[i]->id == id) {
			if (index)
				*index = i;
			return d->instances.data[i];
		}
	}
	return NULL;
}

static void maps_cache_release(struct hmap *m)
{
	for (size_t i = hmap_next(m, 0); i != HMAP_END; i = hmap_next(m, i + 1)) {
		struct proc *pr = (void *)(uintptr_t)m->slots[i].val;
		perf_maps_release(&pr->maps);
		perf_jitmap_release(&pr->jit);
		tb_free(pr);
	}
	hmap_release(m);
}

/* (Re)read pid's maps. When /proc/PID/maps cannot be read any more (the
 * process is gone), what is known (from MMAP records) is kept. */
static void load_maps(struct instance *in, struct proc *pr, uint32_t pid)
{
	struct perf_maps m = {0};
	pr->maps_pass = in->pass;
	pr->maps_read = true;
	if (pid > 0 && perf_maps_load(&m, (int)pid, NULL) == 0 && m.n) {
		if (in->unw.last_pid == (int32_t)pid) /* its cached tables go too */
			in->unw.last_pid = -1;
		perf_maps_release(&pr->maps);
		pr->maps = m;
		pr->exec_empty = false;
		pr->from_records = false;
		perf_maps_load_elf(&pr->maps);
	} else {
		perf_maps_release(&m);
	}
}

/* pid's cache entry, made (with its maps read when load) if new. */
static struct proc *proc_get(struct instance *in, uint32_t pid, bool load)
{
	struct proc *pr = hmap_get_ptr(&in->maps, pid);

	if (pr)
		return pr;
	if (in->maps.len >= PERF_MAX_CACHED_PIDS) { /* bound memory on busy systems */
		maps_cache_release(&in->maps);
		hmap_init(&in->maps);
	}
	pr = tb_calloc(1, sizeof *pr);
	snprintf(pr->jit_path, sizeof pr->jit_path, "/tmp/perf-%u.map", pid);
	if (load)
		load_maps(in, pr, pid);
	hmap_put_ptr(&in->maps, pid, pr);
	return pr;
}

/* A sampled process' entry: its maps read from /proc once (an entry made
 * from records gets them then, when the process is still there). */
static struct proc *proc_for(struct instance *in, uint32_t pid)
{
	struct proc *pr = proc_get(in, pid, true);
	if (!pr->maps_read)
		load_maps(in, pr, pid);
	return pr;
}

/* UNWIND_DWARF: keep the maps of processes current from records, so a
 * process that is gone before its samples are read can still be unwound:
 * a new process starts with its parent's maps (FORK), an exec empties them
 * (COMM exec), each executable mapping is added (MMAP2). Applied in time
 * order among the samples (unwind_queue), so a child's sample from before
 * its exec is unwound with the maps it had then. Processes not seen yet
 * get an entry without reading /proc (a sampled one reads it), unless
 * their maps follow from records whole: after an exec, or a fork from a
 * parent whose maps were known, which replace what /proc gave when the
 * sample was read (the maps of a later moment) and are never re-read. A
 * FORK older than the child's last exec applied (its ring read a pass
 * late) changes nothing. */
static void note_task(struct instance *in, const struct pending *rec)
{
	struct proc *pr, *parent, *child = hmap_get_ptr(&in->maps, rec->pid);
	/* libunwind caches by pc: the pid's cached tables go with its maps */
	if (in->unw.last_pid == (int32_t)rec->pid)
		in->unw.last_pid = -1;
	if (rec->kind == PERF_REC_MMAP) {
		pr = proc_get(in, rec->pid, false);
		perf_maps_add(&pr->maps, rec->map_addr, rec->map_addr + rec->map_len,
		              rec->map_pgoff, true, rec->filename, rec->filename_len);
		perf_maps_load_elf(&pr->maps);
		pr->exec_empty = false;
	} else if (rec->kind == PERF_REC_FORK && (parent = hmap_get_ptr(&in->maps, rec->ppid)) &&
	           (!child ||
	            ((parent->maps_read || !child->maps.n) && rec->time >= child->exec_time))) {
		bool whole = parent->maps_read;
		pr = proc_get(in, rec->pid, false);
		if ((parent = hmap_get_ptr(&in->maps, rec->ppid))) { /* not evicted */
			perf_maps_copy(&pr->maps, &parent->maps);
			pr->maps_read = pr->from_records = whole;
			pr->exec_empty = false;
		}
	} else if (rec->kind == PERF_REC_COMM) {
		pr = proc_get(in, rec->pid, false);
		perf_maps_release(&pr->maps);
		pr->maps_read = pr->from_records = true;
		pr->exec_empty = true;
		pr->exec_time = rec->time;
	}
}

/* UNWIND_DWARF, reader side: a task record that changes maps (a new
 * process, an exec, a mapping), queued to be applied in time order. */
static void queue_task(struct instance *in, const struct perf_record *rec)
{
	struct pending *p;
	if (rec->kind == PERF_REC_FORK   ? rec->pid != rec->tid || rec->pid == rec->ppid
	    : rec->kind == PERF_REC_COMM ? !rec->comm_exec || rec->pid != rec->tid
	                                 : rec->kind != PERF_REC_MMAP)
		return;
	p = tb_calloc(1, sizeof *p + rec->filename_len);
	p->kind = rec->kind;
	p->time = rec->time ? rec->time : in->last_time;
	p->seq = in->queued_seq++;
	p->pid = rec->pid, p->tid = rec->tid, p->ppid = rec->ppid;
	p->map_addr = rec->map_addr, p->map_len = rec->map_len, p->map_pgoff = rec->map_pgoff;
	p->filename = (const char *)(p + 1);
	p->filename_len = rec->filename_len;
	if (rec->filename_len)
		memcpy(p + 1, rec->filename, rec->filename_len);
	vec_push(&in->queue, p);
}

/* Anonymous memory where a JIT puts its code ("" or [anon:...] in maps). */
static bool anon_mapping(const char *path)
{
	return !path[0] || strncmp(path, "[anon", 5) == 0 || strncmp(path, "//anon", 6) == 0;
}

/* Resolve the sample's frames. A user pc outside every known mapping (code
 * mapped after the maps were read) re-reads them, once per read pass; a pc
 * in anonymous executable memory is looked up in the process' perf map
 * file (read again, once per pass, when it has grown). */
static size_t resolve(struct instance *in, const struct perf_record *rec)
{
	struct proc *pr = rec->n_user ? proc_for(in, rec->pid) : NULL;
	size_t n = perf_resolve_frames(rec, pr && pr->maps.n ? &pr->maps : NULL,
	                               in->have_ksyms ? &in->ksyms : NULL, in->frames);
	if (!pr)
		return n;
	size_t first_user = n - rec->n_user;
	bool missing = false;
	for (size_t i = first_user; i < n && !missing; i++)
		missing = in->frames[i].map_start == 0 && in->frames[i].map_end == 0;
	if (missing && pr->maps_pass != in->pass && !pr->from_records) {
		load_maps(in, pr, rec->pid);
		n = perf_resolve_frames(rec, pr->maps.n ? &pr->maps : NULL,
		                        in->have_ksyms ? &in->ksyms : NULL, in->frames);
	}
	for (size_t i = first_user; i < n; i++) {
		struct perf_frame *f = &in->frames[i];
		const char *name;
		uint64_t pc = rec->user_ips[i - first_user];
		if (f->function_name || !(f->map_end > f->map_start) ||
		    !anon_mapping(f->mapping_path))
			continue;
		name = perf_jitmap_lookup(&pr->jit, pc);
		if (!name && pr->jit_pass != in->pass) {
			pr->jit_pass = in->pass;
			if (perf_jitmap_load(&pr->jit, (int32_t)rec->pid) == 0)
				name = perf_jitmap_lookup(&pr->jit, pc);
		}
		if (name) {
			f->function_name = name;
			f->mapping_path = pr->jit_path; /* as perf names JIT code */
		}
	}
	return n;
}

/* Move the packets emit.c wrote into buf to the trace writer. */
static void drain_packets(struct instance *in)
{
	struct pb_reader r;
	struct pb_field f = {0};

	pb_reader_init(&r, pb_writer_data(&in->buf), pb_writer_size(&in->buf));
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_Trace_packet || f.wire != PB_WIRE_LEN)
			continue;
		pb_put_raw(tracing_writer_begin_packet(in->w), f.data, f.len);
		tracing_writer_end_packet(in->w);
	}
	pb_writer_reset(&in->buf);
}

static void skip_sample(struct instance *in, uint64_t ts, uint32_t cpu, uint32_t pid, uint32_t tid,
                        uint16_t misc, uint32_t reason)
{
	perf_emit_skipped(&in->em, &in->buf, ts, cpu, pid, tid, misc & 7, reason);
}

/* UNWIND_DWARF, reader side: copy the sample's registers and stack into
 * the queue, unless the queue is full or its stack bytes would pass
 * max_enqueued_footprint_kb (then it is written as skipped:
 * UNWIND_ENQUEUE). */
static void enqueue(struct instance *in, const struct perf_record *rec)
{
	struct pending *p;
	size_t kbytes = rec->n_kernel * sizeof(uint64_t), rbytes = rec->n_regs * 8;
	if (in->queued_samples >= PERF_UNWIND_QUEUE_MAX ||
	    (in->footprint_limit && in->queued_bytes + rec->stack_len > in->footprint_limit)) {
		in->shed++;
		skip_sample(in, rec->time, rec->cpu, rec->pid, rec->tid, rec->misc,
		            PERF_SKIP_UNWIND_ENQUEUE);
		return;
	}
	/* Read the maps of a process seen for the first time now, while it
	 * is most likely alive (records read later in this pass may add to
	 * them). */
	if (rec->n_regs)
		proc_for(in, rec->pid);
	p = tb_malloc(sizeof *p + kbytes + rbytes + rec->stack_len);
	memset(p, 0, sizeof *p);
	p->kind = PERF_REC_SAMPLE;
	p->time = rec->time;
	p->seq = in->queued_seq++;
	p->cpu = rec->cpu, p->pid = rec->pid, p->tid = rec->tid;
	p->misc = rec->misc;
	p->n_kernel = rec->n_kernel, p->n_regs = rec->n_regs, p->stack_len = rec->stack_len;
	p->stack_maxed = rec->stack_maxed;
	p->kernel_ips = (uint64_t *)(void *)(p + 1);
	p->regs = (uint8_t *)(p->kernel_ips + rec->n_kernel);
	p->stack = p->regs + rbytes;
	if (kbytes)
		memcpy(p->kernel_ips, rec->kernel_ips, kbytes);
	if (rbytes)
		memcpy(p->regs, rec->regs, rbytes);
	if (rec->stack_len)
		memcpy(p->stack, rec->stack, rec->stack_len);
	in->queued_bytes += rec->stack_len;
	in->queued_samples++;
	vec_push(&in->queue, p);
}

/* UNWIND_DWARF, unwinder side: one queued sample unwound and written. A
 * stack cut short ends (root-most) with an error frame "ERROR <REASON>"
 * and carries unwind_error, as Perfetto's traced_perf writes them. A
 * sample of a process of which no map is known (gone before /proc could be
 * read, and no MMAP2 record) is written as skipped with READ_STAGE, a
 * user-mode one without user registers with UNWIND_STAGE. */
static void unwind_one(struct instance *in, const struct pending *p)
{
	struct perf_record rec = {0};
	struct proc *pr = NULL;
	uint32_t err = PERF_UNWIND_ERROR_NONE;
	size_t n_user = 0, n;
	char err_name[48];

	rec.kind = PERF_REC_SAMPLE;
	rec.misc = p->misc;
	rec.pid = p->pid, rec.tid = p->tid, rec.cpu = p->cpu, rec.time = p->time;
	rec.kernel_ips = p->kernel_ips;
	rec.n_kernel = p->n_kernel;
	if (p->n_regs) {
		pr = proc_for(in, p->pid);
		if (!pr->maps.n && pr->maps_pass != in->pass && !pr->from_records)
			load_maps(in, pr, p->pid);
		/* gone before it could be read, no MMAP record (a sample inside
		 * an exec, its new image not mapped yet, is unwound: the old
		 * image's registers in no mapping, INVALID_MAP) */
		if (!pr->maps.n && !pr->exec_empty) {
			in->read_stage++;
			skip_sample(in, p->time, p->cpu, p->pid, p->tid, p->misc,
			            PERF_SKIP_READ_STAGE);
			return;
		}
		int64_t t0 = tb_mono_ns();
		err =
		    perf_unwind(&in->unw, (int32_t)p->pid, &pr->maps, p->regs, p->n_regs, p->stack,
		                p->stack_len, in->pcs, NULL, PERF_UNWIND_MAX_FRAMES, &n_user);
		/* A pc outside every known mapping: code mapped since the maps
		 * were read (dlopen). Re-read them once per pass and retry,
		 * unless the stack copy was cut short anyway, or the maps follow
		 * from records (a sample inside an exec: /proc has the new
		 * image's). */
		if (err == PERF_UNWIND_ERROR_INVALID_MAP && !p->stack_maxed &&
		    pr->maps_pass != in->pass && !pr->from_records) {
			load_maps(in, pr, p->pid);
			err = perf_unwind(&in->unw, (int32_t)p->pid, &pr->maps, p->regs, p->n_regs,
			                  p->stack, p->stack_len, in->pcs, NULL,
			                  PERF_UNWIND_MAX_FRAMES, &n_user);
		}
		uint64_t b = (uint64_t)(tb_mono_ns() - t0) / PERF_UNWIND_HIST_NS;
		in->unwind_hist[b < PERF_UNWIND_HIST_N ? b : PERF_UNWIND_HIST_N - 1]++;
		rec.has_user_section = true;
		rec.user_ips = in->pcs;
		rec.n_user = n_user;
	} else if (!p->n_kernel) {
		in->unwind_stage++;
		skip_sample(in, p->time, p->cpu, p->pid, p->tid, p->misc, PERF_SKIP_UNWIND_STAGE);
		return;
	}
	perf_tasks_sample(&in->tasks, &in->em, &in->buf, p->time, p->pid, p->tid);
	n = resolve(in, &rec);
	if (in->symbolize)
		for (size_t i = n - rec.n_user; i < n; i++)
			perf_symq_add(&in->symq, &in->frames[i]);
	if (p->n_regs && err != PERF_UNWIND_ERROR_NONE) {
		snprintf(err_name, sizeof err_name, "ERROR %s", perf_unwind_error_name(err));
		in->frames[n] = (struct perf_frame){.mapping_path = "", .function_name = err_name};
		n++;
	}
	perf_emit_sample_unwound(&in->em, &in->buf, p->time, p->cpu, p->pid, p->tid, p->misc & 7,
	                         in->frames, n, err == PERF_UNWIND_ERROR_NONE ? 0 : err);
	in->written++;
}

/* The q-quantile (0..1) of the unwind times, in microseconds. */
static double unwind_quantile(const struct instance *in, double q)
{
	uint64_t total = 0, acc = 0;
	for (size_t i = 0; i < PERF_UNWIND_HIST_N; i++)
		total += in->unwind_hist[i];
	for (size_t i = 0; i < PERF_UNWIND_HIST_N && total; i++) {
		acc += in->unwind_hist[i];
		if ((double)acc >= q * (double)total)
			return (double)(i + 1) * PERF_UNWIND_HIST_NS / 1000.0;
	}
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct pending *x = *(struct pending *const *)a, *y = *(struct pending *const *)b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Unwind and write everything queued, oldest first (the rings were read
 * one after another: their records are merged by time here), applying the
 * task records to the maps as their time comes. */
static void unwind_queue(struct instance *in)
{
	int64_t t0;
	if (!in->queue.len)
		return;
	t0 = tb_mono_ns();
	if (in->unwind_clear_ns && (uint64_t)(t0 - in->unwind_cleared_at) >= in->unwind_clear_ns) {
		perf_unwinder_clear(&in->unw);
		in->unwind_cleared_at = t0;
	}
	qsort(in->queue.data, in->queue.len, sizeof in->queue.data[0], by_time);
	for (size_t i = 0; i < in->queue.len; i++) {
		struct pending *p = in->queue.data[i];
		if (p->kind == PERF_REC_SAMPLE) {
			unwind_one(in, p);
			drain_packets(in);
		} else {
			note_task(in, p);
		}
		tb_free(p);
	}
	vec_clear(&in->queue);
	in->queued_bytes = 0;
	in->queued_samples = 0;
	in->unwind_ns += (uint64_t)(tb_mono_ns() - t0);
}

static void on_record(void *ctx, const struct perf_record *rec)
{
	struct instance *in = ctx;
	size_t n;

	if (rec->time)
		in->last_time = rec->time;
	if (rec->kind == PERF_REC_MMAP) {
		if (in->dwarf)
			queue_task(in, rec);
		return;
	}
	if (rec->kind == PERF_REC_COMM || rec->kind == PERF_REC_FORK ||
	    rec->kind == PERF_REC_EXIT) {
		if (in->dwarf)
			queue_task(in, rec);
		perf_tasks_record(&in->tasks, &in->em, &in->buf, rec);
		drain_packets(in);
		return;
	}
	if (rec->kind != PERF_REC_SAMPLE)
		return; /* lost counts are emitted from the stream stats */
	/* Kernel threads (no user section in the callchain) only matter for
	 * their kernel frames, as in Perfetto; decided per sample here. */
	bool kthread = in->dwarf ? rec->regs_abi == 0 : !rec->has_user_section;
	if ((in->callchains && !in->kernel_frames && kthread) ||
	    !perf_scope_keep(&in->scope, (int32_t)rec->pid)) {
		in->skipped++;
		perf_emit_skipped(&in->em, &in->buf, rec->time, rec->cpu, rec->pid, rec->tid,
		                  rec->misc & 7, PERF_SKIP_NOT_IN_SCOPE);
	} else if (in->dwarf) {
		enqueue(in, rec);
	} else if (in->footprint_limit && in->footprint >= in->footprint_limit) {
		in->shed++;
		perf_emit_skipped(&in->em, &in->buf, rec->time, rec->cpu, rec->pid, rec->tid,
		                  rec->misc & 7, PERF_SKIP_UNWIND_ENQUEUE);
	} else {
		perf_tasks_sample(&in->tasks, &in->em, &in->buf, rec->time, rec->pid, rec->tid);
		n = resolve(in, rec);
		if (in->symbolize)
			for (size_t i = n - rec->n_user; i < n; i++)
				perf_symq_add(&in->symq, &in->frames[i]);
		perf_emit_sample(&in->em, &in->buf, rec->time, rec->cpu, rec->pid, rec->tid,
		                 rec->misc & 7, in->frames, n);
		in->written++;
		in->footprint += pb_writer_size(&in->buf);
	}
	drain_packets(in);
}

/* Drain every ring, then report new PERF_RECORD_LOST counts per CPU. */
static void read_rings(struct instance *in)
{
	if (!in->opened || !in->w)
		return;
	in->pass++;
	for (size_t i = 0; i < in->ev.n_streams; i++) {
		struct perf_cpu_stream *s = &in->ev.streams[i];
		perf_ring_read(&s->ring, 0, on_record, in, &s->stats);
	}
	/* Every ring is drained before anything is unwound, so a slow unwind
	 * never holds a ring back. */
	unwind_queue(in);
	for (size_t i = 0; i < in->ev.n_streams; i++) {
		struct perf_cpu_stream *s = &in->ev.streams[i];
		if (s->stats.lost_records > in->lost_written[i]) {
			perf_emit_lost(&in->em, &in->buf, (uint64_t)tb_boot_ns(), (uint32_t)s->cpu,
			               s->stats.lost_records - in->lost_written[i]);
			in->lost_written[i] = s->stats.lost_records;
			drain_packets(in);
		}
	}
}

/* Workload mode, no sample yet: a program its user cannot read (or a
 * setuid one) is not dumpable, and the kernel drops perf events from it at
 * exec; its /proc/PID/maps then refuses even its own user. Noticed here so
 * the stop can say why nothing was sampled. */
static void check_workload(struct instance *in)
{
	char path[64];
	int fd;
	if (!in->workload_pid || in->written || in->wl_hidden)
		return;
	snprintf(path, sizeof path, "/proc/%d/maps", (int)in->workload_pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
		close(fd);
	else if (errno == EACCES || errno == EPERM)
		in->wl_hidden = true;
}

static void on_read_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct instance *in = ctx;
	read_rings(in);
	check_workload(in);
	if (producer(in->d))
		tracing_producer_commit(producer(in->d));
	in->footprint = 0;
}

static void ctl_close(struct instance *in)
{
	if (in->ctl_fd < 0)
		return;
	loop_del_fd(in->d->loop, in->ctl_fd);
	tb_close(&in->ctl_fd);
}

/* A command from the recorder: "enable\n" or "disable\n", answered
 * "ack\n" once the events are so (samples taken before a disable are read
 * out first). */
static void on_ctl(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct instance *in = ctx;
	ssize_t n = read(fd, in->ctl_buf + in->ctl_len, sizeof in->ctl_buf - 1 - in->ctl_len);
	char *nl;
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		ctl_close(in); /* the recorder is done */
		return;
	}
	in->ctl_len += (size_t)n;
	while ((nl = memchr(in->ctl_buf, '\n', in->ctl_len))) {
		struct tb_err err = {0};
		*nl = 0;
		if (strcmp(in->ctl_buf, "enable") == 0) {
			if (in->opened && perf_events_enable(&in->ev, &err) < 0)
				log_warn(PERF_LOG, "%s", err.msg);
		} else if (strcmp(in->ctl_buf, "disable") == 0) {
			if (in->opened) {
				perf_events_disable(&in->ev, NULL);
				read_rings(in);
				if (producer(in->d))
					tracing_producer_commit(producer(in->d));
			}
		}
		if (tb_write_all(fd, "ack\n", 4) < 0)
			log_warn(PERF_LOG, "cannot answer the recorder's control socket");
		size_t used = (size_t)(nl - in->ctl_buf) + 1;
		memmove(in->ctl_buf, in->ctl_buf + used, in->ctl_len - used);
		in->ctl_len -= used;
	}
	if (in->ctl_len == sizeof in->ctl_buf - 1)
		in->ctl_len = 0; /* not a command */
}

/* --control: connect to the recorder's socket and say hello. */
static void ctl_connect(struct perf_daemon *d, struct instance *in)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || strlen(in->control_path) >= sizeof sa.sun_path)
		goto fail;
	memcpy(sa.sun_path, in->control_path, strlen(in->control_path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    tb_write_all(fd, "hello\n", 6) < 0 || tb_set_nonblock(fd, true) < 0 ||
	    loop_add_fd(d->loop, fd, LOOP_IN, on_ctl, in) < 0)
		goto fail;
	in->ctl_fd = fd;
	return;
fail:
	log_error(PERF_LOG, "instance %llu: cannot reach the recorder's control socket '%s': %s",
	          (unsigned long long)in->id, in->control_path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void instance_free(struct perf_daemon *d, struct instance *in)
{
	if (in->timer)
		loop_cancel_timer(d->loop, in->timer);
	ctl_close(in);
	tb_free(in->control_path);
	if (in->opened) {
		perf_events_disable(&in->ev, NULL);
		perf_events_close(&in->ev);
		perf_emitter_release(&in->em);
	}
	if (producer(d) && in->w)
		tracing_producer_free_writer(producer(d), in->w);
	pb_writer_release(&in->buf);
	ksyms_release(&in->ksyms);
	perf_scope_release(&in->scope);
	perf_tasks_release(&in->tasks);
	perf_symq_release(&in->symq);
	tb_free(in->target_cpus);
	maps_cache_release(&in->maps);
	for (size_t i = 0; i < in->queue.len; i++)
		tb_free(in->queue.data[i]);
	vec_release(&in->queue);
	perf_unwinder_release(&in->unw);
	tb_free(in->pcs);
	tb_free(in->unwind_hist);
	tb_free(in->frames);
	tb_free(in->lost_written);
	tb_free(in->config);
	tb_free(in);
}

static void drop_all(struct perf_daemon *d)
{
	for (size_t i = 0; i < d->instances.len; i++)
		instance_free(d, d->instances.data[i]);
	vec_clear(&d->instances);
}

static uint32_t clock_from_proto(int c)
{
	switch (c) {
	case PERFETTO__PROTOS__PERF_EVENTS__PERF_CLOCK__PERF_CLOCK_REALTIME:
		return PERF_CLOCK_REALTIME;
	case PERFETTO__PROTOS__PERF_EVENTS__PERF_CLOCK__PERF_CLOCK_MONOTONIC:
		return PERF_CLOCK_MONOTONIC;
	case PERFETTO__PROTOS__PERF_EVENTS__PERF_CLOCK__PERF_CLOCK_BOOTTIME:
		return PERF_CLOCK_BOOTTIME;
	default:
		return PERF_CLOCK_MONOTONIC_RAW;
	}
}

/* A shard in [0, count) for process sharding, chosen at random per data
 * source instance. */
static uint32_t choose_shard(uint32_t count)
{
	uint32_t r;
	if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
		r = (uint32_t)tb_boot_ns() ^ (uint32_t)getpid();
	return r % count;
}

/* tracebox's directives in DataSourceConfig.legacy_config (Perfetto's
 * free-form text for a producer, which its traced_perf ignores): words
 * "KEY=VALUE" separated by spaces; unknown words are ignored.
 *   workload_pid=PID   the gated workload of a `-- CMD` capture: sample this
 *                      process and every task it creates from now on, with
 *                      per-task events (see README.md, "Workload mode")
 *   no_symbolize       write no ModuleSymbols at the end (--no-symbolize)
 *   control=PATH       --control: the events start disabled; the recorder's
 *                      unix socket at PATH says when to enable and disable
 *                      them (see ctl_connect) */
static void parse_legacy(struct instance *in, const char *text)
{
	for (const char *p = text; p && *p;) {
		size_t n = strcspn(p, " \t\n");
		if (n == 12 && strncmp(p, "no_symbolize", 12) == 0) {
			in->symbolize = false;
		} else if (n > 8 && strncmp(p, "control=", 8) == 0 && n - 8 < 108) {
			tb_free(in->control_path);
			in->control_path = tb_strndup(p + 8, n - 8);
		} else if (n > 13 && strncmp(p, "workload_pid=", 13) == 0) {
			char *end;
			long v = strtol(p + 13, &end, 10);
			if (end == p + n && v > 0 && v <= INT32_MAX)
				in->workload_pid = (int32_t)v;
		}
		p += n;
		p += strspn(p, " \t\n");
	}
}

/* Fill the event options, read period and scope of in from its config.
 * Returns 0 or -EINVAL with err set for what we cannot sample on. */
static int parse_config(struct instance *in, struct perf_event_opts *o, uint32_t *read_ms,
                        struct tb_err *err)
{
	Perfetto__Protos__DataSourceConfig *dsc = NULL;
	const Perfetto__Protos__PerfEventConfig *c;
	const Perfetto__Protos__PerfEvents__Timebase *tb;
	const Perfetto__Protos__PerfEventConfig__CallstackSampling *cs;
	int rc = 0;

	memset(o, 0, sizeof *o);
	o->all_cpus = true;
	o->cpu = -1;
	o->frequency = PERF_DEFAULT_FREQUENCY;
	*read_ms = PERF_DEFAULT_READ_PERIOD_MS;
	if (in->config_len)
		dsc = perfetto__protos__data_source_config__unpack(protos_allocator(),
		                                                   in->config_len, in->config);
	if (in->config_len && !dsc) {
		rc = tb_err_set(err, -EINVAL, "cannot decode the data source config");
		goto out;
	}
	if (dsc && dsc->legacy_config)
		parse_legacy(in, dsc->legacy_config);
	c = dsc ? dsc->perf_event_config : NULL;
	if (!c) {
		o->no_callchain = true;
		goto out;
	}
	if (c->has_sampling_frequency && c->sampling_frequency)
		o->frequency = c->sampling_frequency;
	if (c->has_ring_buffer_pages && c->ring_buffer_pages)
		o->ring_buffer_pages = c->ring_buffer_pages;
	if (c->has_ring_buffer_read_period_ms && c->ring_buffer_read_period_ms)
		*read_ms = c->ring_buffer_read_period_ms < PERF_MIN_READ_PERIOD_MS
		               ? PERF_MIN_READ_PERIOD_MS
		               : c->ring_buffer_read_period_ms;
	if ((tb = c->timebase)) {
		if (tb->interval_case == PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_PERIOD &&
		    tb->period)
			o->period = tb->period;
		else if (tb->interval_case ==
		             PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_FREQUENCY &&
		         tb->frequency)
			o->frequency = tb->frequency;
		if (tb->event_case == PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_COUNTER) {
			o->counter = (uint32_t)tb->counter;
		} else if (tb->event_case !=
		           PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT__NOT_SET) {
			rc = tb_err_set(err, -EINVAL,
			                "only counter timebases are supported (not tracepoints "
			                "or raw events)");
			goto out;
		}
		if (tb->has_timestamp_clock)
			o->clock = clock_from_proto(tb->timestamp_clock);
		if (tb->n_modifiers) {
			bool user = false, kernel = false;
			for (size_t i = 0; i < tb->n_modifiers; i++) {
				user |=
				    tb->modifiers[i] ==
				    PERFETTO__PROTOS__PERF_EVENTS__EVENT_MODIFIER__EVENT_MODIFIER_COUNT_USERSPACE;
				kernel |=
				    tb->modifiers[i] ==
				    PERFETTO__PROTOS__PERF_EVENTS__EVENT_MODIFIER__EVENT_MODIFIER_COUNT_KERNEL;
			}
			o->exclude_kernel = user && !kernel;
		}
	}
	cs = c->callstack_sampling;
	/* Legacy top-level fields imply callstack sampling, as in Perfetto. */
	o->no_callchain = !cs && !c->n_target_pid && !c->n_target_cmdline && !c->has_kernel_frames;
	o->kernel_frames = (cs && cs->has_kernel_frames && cs->kernel_frames) ||
	                   (c->has_kernel_frames && c->kernel_frames);
	/* user_frames: unset (UNKNOWN) or DWARF unwinds copied stacks, as
	 * Perfetto's default; FRAME_POINTER and KERNEL_FRAME_POINTER take the
	 * kernel's frame-pointer callchain (the same frames for code built with
	 * frame pointers, without copying stacks); SKIP: no user frames. */
	if (!o->no_callchain) {
		int uf = cs && cs->has_user_frames
		             ? (int)cs->user_frames
		             : PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_UNKNOWN;
		if (uf == PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_UNKNOWN ||
		    uf == PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_DWARF) {
			if (perf_unwind_supported())
				o->user_stacks = true;
			else
				log_warn(PERF_LOG,
				         "this build cannot unwind DWARF on this "
				         "architecture: user stacks come from frame pointers");
		} else if (uf == PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_SKIP) {
			o->skip_user_frames = true;
		}
	}
	in->unwind_clear_ns =
	    (uint64_t)(c->unwind_state_clear_period_ms ? c->unwind_state_clear_period_ms
	                                               : PERF_DEFAULT_UNWIND_CLEAR_MS) *
	    1000000ull;
	perf_scope_add(&in->scope, c->target_pid, c->n_target_pid, c->target_cmdline,
	               c->n_target_cmdline, c->exclude_pid, c->n_exclude_pid, c->exclude_cmdline,
	               c->n_exclude_cmdline);
	in->scope.additional_cmdline_count = c->additional_cmdline_count;
	if (cs && cs->scope) {
		const Perfetto__Protos__PerfEventConfig__Scope *s = cs->scope;
		perf_scope_add(&in->scope, s->target_pid, s->n_target_pid, s->target_cmdline,
		               s->n_target_cmdline, s->exclude_pid, s->n_exclude_pid,
		               s->exclude_cmdline, s->n_exclude_cmdline);
		if (s->has_additional_cmdline_count)
			in->scope.additional_cmdline_count = s->additional_cmdline_count;
		if (s->process_shard_count) {
			in->scope.shard_count = s->process_shard_count;
			in->scope.chosen_shard = choose_shard(s->process_shard_count);
		}
	}
	if (c->n_target_cpu) {
		in->target_cpus = tb_memdup(c->target_cpu, c->n_target_cpu * sizeof *c->target_cpu);
		in->n_target_cpus = c->n_target_cpu;
		o->target_cpus = in->target_cpus;
		o->n_target_cpus = in->n_target_cpus;
	}
	/* kB -> bytes, capped so the product cannot wrap */
	in->footprint_limit = c->max_enqueued_footprint_kb > UINT64_MAX / 1024
	                          ? UINT64_MAX
	                          : c->max_enqueued_footprint_kb * 1024;
out:
	/* Names of the sampled tasks come from COMM/FORK records. */
	o->task_records = !o->no_callchain;
	o->mmap_records = o->task_records && o->user_stacks;
	if (rc == 0 && in->workload_pid > 0 && perf_scope_is_everything(&in->scope)) {
		/* Workload mode: per-task events on the workload that follow its
		 * children; an unprivileged user may open them on their own
		 * processes, counting user mode only at perf_event_paranoid 2. */
		o->pid = in->workload_pid;
		o->inherit = true;
		o->degrade = true;
	} else {
		in->workload_pid = 0;
	}
	if (dsc)
		perfetto__protos__data_source_config__free_unpacked(dsc, protos_allocator());
	return rc;
}

/* Open, enable and arm the read timer. Failures are logged: the instance
 * then records nothing, and the session goes on. */
static void instance_start(struct perf_daemon *d, struct instance *in)
{
	struct perf_event_opts o;
	struct tb_err err = {0};
	uint32_t read_ms;

	if (parse_config(in, &o, &read_ms, &err) != 0)
		goto fail;
	if (in->control_path)
		ctl_connect(d, in); /* before anything can fail: enable is answered anyway */
	in->kernel_frames = o.kernel_frames;
	in->callchains = !o.no_callchain;
	in->dwarf = o.user_stacks;
	if (in->dwarf) {
		perf_unwinder_init(&in->unw);
		in->pcs = tb_calloc(PERF_UNWIND_MAX_FRAMES, sizeof *in->pcs);
		in->unwind_hist = tb_calloc(PERF_UNWIND_HIST_N, sizeof *in->unwind_hist);
		in->unwind_cleared_at = tb_mono_ns();
	}
	if (perf_events_open(&in->ev, &o, &err) != 0)
		goto fail;
	in->opened = true;
	perf_emitter_init(&in->em, in->ev.clock_id, in->ev.counter, in->ev.frequency,
	                  in->ev.period);
	in->em.shard_count = in->scope.shard_count;
	in->em.chosen_shard = in->scope.chosen_shard;
	if (in->kernel_frames) {
		struct tb_err kerr = {0};
		if (ksyms_load(&in->ksyms, NULL, &kerr) == 0)
			in->have_ksyms = true;
		else
			log_warn(PERF_LOG, "kernel frames stay unnamed: %s", kerr.msg);
	}
	in->frames = tb_calloc(2 * PERF_MAX_FRAMES, sizeof *in->frames);
	in->lost_written = tb_calloc(in->ev.n_streams ? in->ev.n_streams : 1, sizeof(uint64_t));
	perf_emit_start(&in->em, &in->buf, (uint64_t)tb_boot_ns());
	drain_packets(in);
	tracing_writer_flush(in->w);
	/* With --control the recorder says when (an "enable" on ctl_fd). */
	if (!in->control_path && perf_events_enable(&in->ev, &err) != 0)
		goto fail;
	in->timer = loop_add_timer(d->loop, read_ms, read_ms, on_read_timer, in);
	if (in->ev.kernel_excluded)
		log_info(PERF_LOG,
		         "instance %llu: counting user mode only (kernel.perf_event_paranoid "
		         "does not allow kernel-mode samples for this user)",
		         (unsigned long long)in->id);
	log_debug(PERF_LOG, "instance %llu: %zu cpu streams of %u pages%s, reading every %u ms",
	          (unsigned long long)in->id, in->ev.n_streams, in->ev.ring_pages,
	          in->workload_pid ? " on the workload" : "", read_ms);
	return;
fail:
	log_error(PERF_LOG, "linux.perf instance %llu records nothing: %s",
	          (unsigned long long)in->id, err.msg);
}

/* ---- producer callbacks ------------------------------------------------------ */

static void on_setup(void *ctx, struct tracing_producer *p, uint64_t id, const char *ds_name,
                     const uint8_t *config, size_t config_len)
{
	struct perf_daemon *d = ctx;
	struct instance *in;

	if (strcmp(ds_name, PERF_DS_NAME) != 0 || find(d, id, NULL)) {
		log_warn(PERF_LOG, "ignoring setup of '%s' (instance %llu)", ds_name,
		         (unsigned long long)id);
		return;
	}
	in = tb_calloc(1, sizeof *in);
	in->id = id;
	in->d = d;
	in->ctl_fd = -1;
	in->config = config_len ? tb_memdup(config, config_len) : NULL;
	in->config_len = config_len;
	pb_writer_init_growable(&in->buf);
	hmap_init(&in->maps);
	perf_scope_init(&in->scope);
	perf_tasks_init(&in->tasks);
	perf_symq_init(&in->symq);
	in->symbolize = true;
	vec_push(&d->instances, in);
}

static void on_start(void *ctx, struct tracing_producer *p, uint64_t id, const uint8_t *config,
                     size_t config_len, uint32_t target_buffer)
{
	struct perf_daemon *d = ctx;
	struct instance *in = find(d, id, NULL);

	if (in && !in->started) {
		in->started = true;
		if ((in->w = tracing_producer_new_writer(p, target_buffer)))
			instance_start(d, in);
		else
			log_warn(PERF_LOG, "no trace writer for instance %llu",
			         (unsigned long long)id);
	}
	tracing_producer_notify_started(p, id);
}

static void flush_symbols(void *ctx)
{
	drain_packets(ctx);
}

/* The end of the capture: name the user frames written without a name
 * (ModuleSymbols packets on the instance's sequence) and say what stays
 * unnamed. */
static void symbolize(struct instance *in)
{
	struct sym_finder finder;
	struct perf_symq_result res;
	const char *urls = getenv("DEBUGINFOD_URLS"), *t = getenv("DEBUGINFOD_TIMEOUT");
	long timeout_s = t && *t ? strtol(t, NULL, 10) : 0;
	int64_t start = tb_mono_ns();

	if (!in->symbolize || !in->w || !in->symq.mods.len)
		return;
	sym_finder_init(&finder, NULL, false, false);
	sym_finder_use_debuginfod(&finder, NULL, urls,
	                          timeout_s > 0 && timeout_s < 3600 ? (int)timeout_s * 1000 : 0,
	                          PERF_DEBUGINFOD_BUDGET_MS);
	perf_symq_emit(&in->symq, &finder, &in->buf, (uint64_t)tb_boot_ns(), flush_symbols, in,
	               &res);
	drain_packets(in);
	log_info(PERF_LOG,
	         "instance %llu: named %llu of %llu addresses in %u of %u files (%.0f ms)",
	         (unsigned long long)in->id, (unsigned long long)res.addresses_named,
	         (unsigned long long)res.addresses, res.modules_named, res.modules,
	         (double)(tb_mono_ns() - start) / 1e6);
	for (size_t i = 0; i < res.n_examples; i++)
		log_warn(PERF_LOG, "frames stay unnamed: %s", res.examples[i]);
	if (res.n_examples < res.no_build_id + res.no_symbols)
		log_warn(PERF_LOG, "frames stay unnamed in %u more files",
		         res.no_build_id + res.no_symbols - (uint32_t)res.n_examples);
	const struct sym_dbgd_stats *d = &finder.dbgd;
	if (d->not_found || d->timed_out || d->failed || d->skipped)
		log_warn(PERF_LOG,
		         "debuginfod: %u fetched, %u not found, %u timed out, %u failed, "
		         "%u skipped (time budget)%s%s",
		         d->fetched, d->not_found, d->timed_out, d->failed, d->skipped,
		         finder.dbgd_error[0] ? ": " : "", finder.dbgd_error);
	sym_finder_release(&finder);
}

static void on_stop(void *ctx, struct tracing_producer *p, uint64_t id)
{
	struct perf_daemon *d = ctx;
	size_t i;
	struct instance *in = find(d, id, &i);

	if (in) {
		if (in->opened)
			perf_events_disable(&in->ev, NULL);
		read_rings(in);
		symbolize(in);
		if (in->opened && in->workload_pid && !in->written)
			log_warn(PERF_LOG, "no sample of the workload (pid %d)%s",
			         (int)in->workload_pid,
			         in->wl_hidden ? ": the kernel does not sample a program its user "
			                         "cannot read (or a setuid one): it is not dumpable"
			                       : ": it did not run on a CPU long enough, or the "
			                         "control gate was never enabled");
		if (in->dwarf)
			log_info(PERF_LOG,
			         "instance %llu: unwound %llu stacks (%llu frames, %llu cut short) "
			         "in %.1f ms, per stack median %.2f us, p99 %.2f us; skipped %llu "
			         "at the read stage, %llu at the unwind stage, %llu over the queue "
			         "bound",
			         (unsigned long long)id, (unsigned long long)in->unw.stats.samples,
			         (unsigned long long)in->unw.stats.frames,
			         (unsigned long long)in->unw.stats.errors,
			         (double)in->unwind_ns / 1e6, unwind_quantile(in, 0.5),
			         unwind_quantile(in, 0.99), (unsigned long long)in->read_stage,
			         (unsigned long long)in->unwind_stage,
			         (unsigned long long)in->shed);
		if (in->skipped || in->shed)
			log_debug(PERF_LOG,
			          "instance %llu: %llu samples out of scope, %llu over "
			          "max_enqueued_footprint_kb",
			          (unsigned long long)id, (unsigned long long)in->skipped,
			          (unsigned long long)in->shed);
		d->instances.data[i] = *vec_last(&d->instances);
		d->instances.len--;
		instance_free(d, in);
	}
	tracing_producer_notify_stopped(p, id);
}

static void on_flush(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n,
                     uint64_t request_id)
{
	struct perf_daemon *d = ctx;
	for (size_t i = 0; i < n; i++) {
		struct instance *in = find(d, ids[i], NULL);
		if (in)
			read_rings(in);
	}
	tracing_producer_flush_done(p, request_id); /* commits every writer */
	for (size_t i = 0; i < d->instances.len; i++)
		d->instances.data[i]->footprint = 0;
}

/* The connection is gone, and the writers with it: stop every instance.
 * The daemon reconnects. */
static void on_disconnect(void *ctx, struct tracing_producer *p)
{
	drop_all(ctx);
}

static const char perf_usage[] =
    "usage: traced_perf [--background] [--version]\n"
    "The producer of the linux.perf data source (callstack sampling with\n"
    "perf_event_open). Socket: $PERFETTO_PRODUCER_SOCK_NAME.\n";

static int perf_daemon_start(void *ctx, struct loop *l, struct tb_err *err)
{
	static const struct tracing_ds_desc ds = {PERF_DS_NAME, true, true, false};
	struct perf_daemon *d = ctx;
	struct tracing_daemon_opts o = {0};

	d->loop = l;
	o.producer.name = PERF_PRODUCER_NAME;
	o.producer.ctx = d;
	o.producer.on_disconnect = on_disconnect;
	o.producer.setup = on_setup;
	o.producer.start = on_start;
	o.producer.stop = on_stop;
	o.producer.flush = on_flush;
	o.data_sources = &ds;
	o.n_data_sources = 1;
	/* tracebox autostart waits for "1" here (compat §5.2). */
	o.ready_fd_env = "TRACED_PERF_NOTIFY_FD";
	o.retry_ms = PERF_RECONNECT_MS;
	d->td = tracing_daemon_new(l, &o);
	return 0;
}

static void perf_daemon_stop(void *ctx)
{
	struct perf_daemon *d = ctx;
	drop_all(d);
	vec_release(&d->instances);
	tracing_daemon_free(d->td);
}

int traced_perf_main(int argc, char **argv)
{
	struct perf_daemon pd = {0};
	const struct tb_daemon d = {
	    .name = "traced_perf",
	    .log_tag = PERF_LOG,
	    .usage = perf_usage,
	    .start = perf_daemon_start,
	    .stop = perf_daemon_stop,
	    .ctx = &pd,
	};
	return tb_daemon_main(&d, argc, argv);
}
