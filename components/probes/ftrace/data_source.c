/*
 * The linux.ftrace data source: what ties the ftrace core (tracefs.c,
 * format.c, page.c, encode.c) to trace writers on the producer's loop.
 *
 * tracefs and its per-CPU ring buffers are one kernel resource, so every
 * instance of the process shares one struct ftrace_shared (tracefs, the
 * event table, the trace_pipe_raw fds), as Perfetto's FtraceConfigMuxer
 * and CpuReaders are shared by its sessions:
 *
 *   first start  open tracefs; tracing_on 0; buffer_size_kb (config, else
 *                Perfetto's default: 8 MiB per CPU with >= 7 GiB of RAM,
 *                else 2 MiB); trace clock as Perfetto picks it (mono_raw if
 *                asked and available, else the first of boot, global, local
 *                the kernel has); stale pages discarded. Later instances
 *                keep the buffer size and clock the first one set.
 *   every start  its events, each loaded from its format file and enabled
 *                unless another instance already holds it (refcounted; an
 *                unknown one is logged and skipped); FtraceStats
 *                {START_OF_TRACE}; tracing_on 1; its drain timer.
 *   drain        every drain_period_ms of any instance (default 100, as
 *                Perfetto's tick): per CPU, read per_cpu/cpuN/trace_pipe_raw
 *                (O_NONBLOCK) page by page, in batches of
 *                FTRACE_DS_BATCH_PAGES, up to FTRACE_DS_MAX_PAGES (if a CPU
 *                had more, the drain goes on at the next loop iteration),
 *                and per batch write one TracePacket{ftrace_events = 1:
 *                FtraceEventBundle} into each instance's writer with the
 *                events it asked for (and its commit_fn runs, so the
 *                chunks go to the service while the drain goes on),
 *                sched_switch / sched_waking in compact_sched unless its
 *                compact_sched.enabled is false (unset means on, as in
 *                Perfetto). Like Perfetto's CpuReader, the packet has no
 *                timestamp: the events carry theirs in the trace clock, and
 *                the bundle names that clock (ftrace_clock = 5) when it is
 *                not boot.
 *                After the drain, each instance with a pids callback gets
 *                the tasks its events mentioned (pids.c), which traced_probes
 *                passes to the session's process_stats.
 *   flush        drain now, up to a whole buffer per CPU (the caller then
 *                acks).
 *   stop         a drain, FtraceStats{END_OF_TRACE}, and each of its events
 *                disabled once no other instance holds it. The last one to
 *                stop turns tracing off before its drain and writes back
 *                every setting changed (probes_ftrace_tracefs_restore).
 *
 * Instances naming different tracefs roots (tests) cannot share: the second
 * is refused while the first runs.
 */
#include "ftrace_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "protos.h"
#include "tracing.h"
#include "pb_fields.h"

#define DS_LOG "probes"

#define ID_MASK_WORDS (65536 / 64) /* event ids are 16-bit (format.c) */

/* The kernel side every running instance shares. */
struct ftrace_shared {
	char *root; /* tracefs root override (tests), or NULL */
	struct ftrace_tracefs fs;
	struct ftrace_table table;
	int ncpu;
	int *pipes;     /* ncpu fds, -1 when a CPU's pipe could not be opened */
	uint32_t clock; /* FtraceClock of the bundles; 0 = boot */
	uint8_t *buf;
	size_t buf_cap;
	size_t buffer_pages; /* of each CPU's buffer: what a flush reads at most */
	struct loop *loop;
	bool redrain_posted;    /* a drain that stopped at its cap goes on (tick) */
	uint32_t stall_left_ms; /* of this drain's FTRACE_DS_STALL_MS */
	struct hmap refs;       /* event id -> instances holding it enabled */
	struct ksyms ksyms;     /* loaded by the first instance with symbolize_ksyms */
	bool ksyms_tried;
	VEC(struct probes_ftrace *) users;
};

struct probes_ftrace {
	struct loop *loop;
	struct tracing_writer *w;
	char *root; /* tracefs root override (tests), or NULL */
	/* From the config. */
	VEC(char *) events;
	uint32_t buffer_size_kb, drain_period_ms;
	bool use_monotonic_raw_clock;
	bool symbolize_ksyms;
	char *kallsyms_path;           /* tests; NULL: /proc/kallsyms */
	struct ftrace_encode_opts enc; /* compact_sched, its scratch, id_mask */
	struct ftrace_kaddrs kaddrs;   /* enc.kaddrs */
	/* Running state. */
	bool started;
	struct ftrace_shared *sh;
	VEC(uint32_t) ids; /* event ids this instance holds enabled */
	uint64_t *mask;    /* the same as a bitmap, for the encoder */
	uint64_t timer;
	struct probes_ftrace_encode_stats st;
	uint64_t kernel_read0; /* the kernel's read events (all CPUs) at start */
	uint64_t records0;     /* st.records at start */
	bool kernel_read0_ok;
	/* Tasks mentioned since the last pids_fn call (enc.pids points here
	 * while pids_fn is set). */
	struct ftrace_pids pids;
	void (*pids_fn)(void *ctx, const int32_t *renamed, size_t n_renamed, const int32_t *pids,
	                size_t n_pids);
	void *pids_ctx;
	void (*commit_fn)(void *ctx);
	void *commit_ctx;
	const struct tracing_smb *smb; /* its writer's, for the room check */
};

/* The one ftrace_shared of the process, while any instance runs. */
static struct ftrace_shared *g_shared;

static void parse_config(struct probes_ftrace *ft, const uint8_t *cfg, size_t len)
{
	Perfetto__Protos__DataSourceConfig *dsc;
	Perfetto__Protos__FtraceConfig *fc;

	ft->drain_period_ms = FTRACE_DS_DEFAULT_DRAIN_MS;
	ft->enc.compact_sched = true; /* Perfetto's default since v42 */
	if (!len)
		return;
	dsc = perfetto__protos__data_source_config__unpack(protos_allocator(), len, cfg);
	if (!dsc) {
		log_warn(DS_LOG, "ftrace: cannot decode the data source config");
		return;
	}
	fc = dsc->ftrace_config;
	if (fc) {
		for (size_t i = 0; i < fc->n_ftrace_events; i++)
			vec_push(&ft->events, tb_strdup(fc->ftrace_events[i]));
		if (fc->has_buffer_size_kb)
			ft->buffer_size_kb = fc->buffer_size_kb;
		/* Perfetto falls back to its default outside [1 ms, 60 s]. */
		if (fc->has_drain_period_ms && fc->drain_period_ms >= 1 &&
		    fc->drain_period_ms <= 60000)
			ft->drain_period_ms = fc->drain_period_ms;
		ft->use_monotonic_raw_clock =
		    fc->has_use_monotonic_raw_clock && fc->use_monotonic_raw_clock;
		if (fc->compact_sched && fc->compact_sched->has_enabled)
			ft->enc.compact_sched = fc->compact_sched->enabled;
		ft->symbolize_ksyms = fc->has_symbolize_ksyms && fc->symbolize_ksyms;
	}
	perfetto__protos__data_source_config__free_unpacked(dsc, protos_allocator());
}

struct probes_ftrace *probes_ftrace_new(struct loop *l, struct tracing_writer *w,
                                        const uint8_t *cfg, size_t len, const char *tracefs_root)
{
	struct probes_ftrace *ft = tb_calloc(1, sizeof *ft);
	ft->loop = l;
	ft->w = w;
	ft->root = tracefs_root ? tb_strdup(tracefs_root) : NULL;
	ft->enc.kaddrs = &ft->kaddrs; /* addresses become indexes, as in Perfetto */
	parse_config(ft, cfg, len);
	return ft;
}

/* The largest per-CPU kernel buffer a config may ask for (Perfetto's cap until
 * v46, kept here: any consumer of a root traced_probes could otherwise pin
 * that much kernel memory on every CPU). */
#define FTRACE_DS_MAX_BUFFER_KB (64u * 1024)

/* Perfetto's default per-CPU buffer: 8 MiB with >= 7 GiB of RAM, else 2 MiB. */
static uint32_t default_buffer_kb(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	if (pages > 0 && psz > 0 && (uint64_t)pages >= (7ull << 30) / (uint64_t)psz)
		return 8 * 1024;
	return 2 * 1024;
}

/* True if trace_clock's text lists clock (bracketed or not). */
static bool clock_listed(const char *text, const char *clock)
{
	size_t n = strlen(clock);
	for (const char *p = text; *p;) {
		size_t k;
		while (*p == ' ' || *p == '[' || *p == '\n')
			p++;
		k = strcspn(p, " ]\n");
		if (k == n && strncmp(p, clock, n) == 0)
			return true;
		p += k;
		if (*p == ']')
			p++;
	}
	return false;
}

/* Perfetto's SetupClock: mono_raw when asked for and available, else the
 * first available of boot, global, local (left alone if already selected). */
static void setup_clock(struct ftrace_shared *sh, bool mono_raw)
{
	static const char *const prefs[] = {"boot", "global", "local"};
	char cur[32] = "";
	char *text = NULL;
	size_t len;

	if (probes_ftrace_tracefs_read(&sh->fs, "trace_clock", &text, &len) < 0) {
		log_warn(DS_LOG, "ftrace: %s", sh->fs.err.msg);
		return;
	}
	if (mono_raw && clock_listed(text, "mono_raw")) {
		probes_ftrace_tracefs_set_clock(&sh->fs, "mono_raw");
	} else {
		probes_ftrace_tracefs_get_clock(&sh->fs, cur, sizeof cur);
		for (size_t i = 0; i < TB_ARRAY_SIZE(prefs); i++) {
			if (!clock_listed(text, prefs[i]))
				continue;
			if (strcmp(cur, prefs[i]) != 0 &&
			    probes_ftrace_tracefs_set_clock(&sh->fs, prefs[i]) < 0)
				log_warn(DS_LOG, "ftrace: %s", sh->fs.err.msg);
			break;
		}
	}
	tb_free(text);
	cur[0] = 0;
	probes_ftrace_tracefs_get_clock(&sh->fs, cur, sizeof cur);
	if (strcmp(cur, "boot") == 0)
		sh->clock = 0;
	else if (strcmp(cur, "global") == 0)
		sh->clock = PB_E_FtraceClock_FTRACE_CLOCK_GLOBAL;
	else if (strcmp(cur, "local") == 0)
		sh->clock = PB_E_FtraceClock_FTRACE_CLOCK_LOCAL;
	else if (strcmp(cur, "mono_raw") == 0)
		sh->clock = PB_E_FtraceClock_FTRACE_CLOCK_MONO_RAW;
	else
		sh->clock = PB_E_FtraceClock_FTRACE_CLOCK_UNKNOWN;
}

/* Load one event's format, enable it unless another instance already
 * holds it, and take a reference for ft. */
static int enable_one(struct probes_ftrace *ft, const char *group, const char *name)
{
	struct ftrace_shared *sh = ft->sh;
	const struct ftrace_event_format *f = NULL;
	uint64_t refs = 0;
	int rc = probes_ftrace_table_load_event(&sh->table, &sh->fs, group, name);

	for (size_t i = 0; rc == 0 && i < sh->table.events.len && !f; i++)
		if (strcmp(sh->table.events.data[i]->group, group) == 0 &&
		    strcmp(sh->table.events.data[i]->name, name) == 0)
			f = sh->table.events.data[i];
	if (rc == 0 && !f)
		rc = tb_err_set(&sh->fs.err, -ENOENT, "no format for '%s/%s'", group, name);
	if (rc == 0 && (ft->mask[f->id / 64] >> (f->id % 64) & 1))
		return 0; /* named twice in the config */
	if (rc == 0 && !hmap_get(&sh->refs, f->id, &refs))
		rc = probes_ftrace_tracefs_enable_event(&sh->fs, group, name, true);
	if (rc < 0) {
		log_warn(DS_LOG, "ftrace: skipping event '%s/%s': %s", group, name, sh->fs.err.msg);
		return rc;
	}
	hmap_put(&sh->refs, f->id, refs + 1);
	vec_push(&ft->ids, f->id);
	ft->mask[f->id / 64] |= 1ull << (f->id % 64);
	return 0;
}

/* Drop ft's references; disable the events nobody holds any more. */
static void release_events(struct probes_ftrace *ft)
{
	struct ftrace_shared *sh = ft->sh;
	for (size_t i = 0; i < ft->ids.len; i++) {
		const struct ftrace_event_format *f =
		    probes_ftrace_table_find(&sh->table, ft->ids.data[i]);
		uint64_t refs = 0;
		hmap_get(&sh->refs, ft->ids.data[i], &refs);
		if (refs > 1) {
			hmap_put(&sh->refs, ft->ids.data[i], refs - 1);
			continue;
		}
		hmap_del(&sh->refs, ft->ids.data[i], NULL);
		if (f && probes_ftrace_tracefs_enable_event(&sh->fs, f->group, f->name, false) < 0)
			log_warn(DS_LOG, "ftrace: %s", sh->fs.err.msg);
	}
	vec_clear(&ft->ids);
	memset(ft->mask, 0, ID_MASK_WORDS * sizeof *ft->mask);
}

struct event_match {
	struct probes_ftrace *ft;
	const char *group, *name; /* NULL group: bare name; "*" name: whole group */
	char found_group[FTRACE_MAX_NAME];
	int matched;
};

static int match_event(void *ctx, const char *group, const char *name)
{
	struct event_match *m = ctx;
	if (!m->group) {
		if (strcmp(name, m->name) != 0)
			return 0;
		snprintf(m->found_group, sizeof m->found_group, "%s", group);
		m->matched++;
		return 1;
	}
	if (strcmp(group, m->group) != 0)
		return 0;
	if (enable_one(m->ft, group, name) == 0)
		m->matched++;
	return 0;
}

/* A config entry: "group/name", a whole group (name "*"), or a bare "name"
 * whose group is looked up in available_events. */
static void enable_config_event(struct probes_ftrace *ft, const char *spec)
{
	struct event_match m = {.ft = ft};
	char group[FTRACE_MAX_NAME];
	const char *slash = strchr(spec, '/');

	if (slash) {
		size_t gl = (size_t)(slash - spec);
		if (gl == 0 || gl >= sizeof group || !slash[1]) {
			log_warn(DS_LOG, "ftrace: skipping malformed event '%s'", spec);
			return;
		}
		memcpy(group, spec, gl);
		group[gl] = 0;
		if (strcmp(slash + 1, "*") != 0) {
			enable_one(ft, group, slash + 1);
			return;
		}
		m.group = group;
		m.name = "*";
		probes_ftrace_tracefs_list_events(&ft->sh->fs, match_event, &m);
		if (!m.matched)
			log_warn(DS_LOG, "ftrace: no events enabled for '%s'", spec);
		return;
	}
	m.name = spec;
	probes_ftrace_tracefs_list_events(&ft->sh->fs, match_event, &m);
	if (m.matched)
		enable_one(ft, m.found_group, spec);
	else
		log_warn(DS_LOG, "ftrace: skipping unknown event '%s'", spec);
}

/* Read up to max pages of cpu into sh->buf; the bytes read. *more is set
 * when every read returned a whole page, so the buffer may hold more. */
static size_t read_cpu(struct ftrace_shared *sh, int cpu, size_t max, bool *more)
{
	size_t page = sh->table.layout.page_size, len = 0;
	int fd = sh->pipes[cpu];

	*more = false;
	if (fd < 0 || page == 0)
		return 0;
	if (sh->buf_cap < max * page) {
		sh->buf_cap = max * page;
		sh->buf = tb_realloc(sh->buf, sh->buf_cap);
	}
	for (size_t i = 0; i < max;) {
		ssize_t n = read(fd, sh->buf + len, page);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return len;
		/* A short read is the last page: keep it where the next page
		 * would start so the encoder sees page-aligned input. */
		len += (size_t)n;
		if ((size_t)n < page)
			return len;
		i++;
	}
	*more = true;
	return len;
}

/* Hand the tasks the drain's events mentioned to each user's pids_fn. */
static void flush_pids(struct ftrace_shared *sh)
{
	for (size_t i = 0; i < sh->users.len; i++) {
		struct probes_ftrace *ft = sh->users.data[i];
		if (!ft->pids_fn || (!ft->pids.pids.len && !ft->pids.renamed.len))
			continue;
		ft->pids_fn(ft->pids_ctx, ft->pids.renamed.data, ft->pids.renamed.len,
		            ft->pids.pids.data, ft->pids.pids.len);
		probes_ftrace_pids_clear(&ft->pids);
	}
}

/* True when every user's SMB has room for one more encoded batch. */
static bool smb_room(const struct ftrace_shared *sh)
{
	for (size_t i = 0; i < sh->users.len; i++) {
		const struct tracing_smb *smb = sh->users.data[i]->smb;
		size_t need;
		if (!smb)
			continue;
		need = tracing_smb_size(smb) / 2;
		if (need > FTRACE_DS_BATCH_ROOM)
			need = FTRACE_DS_BATCH_ROOM;
		if (tracing_smb_free_bytes(smb) < need)
			return false;
	}
	return true;
}

/* Stall (probes_ftrace_set_smb) until the service made room for a batch,
 * or this drain's stall budget is spent. */
static void wait_for_room(struct ftrace_shared *sh)
{
	const struct timespec ms = {0, 1000000};
	while (sh->stall_left_ms && !smb_room(sh)) {
		nanosleep(&ms, NULL);
		sh->stall_left_ms--;
	}
}

/* Read cpu in batches of FTRACE_DS_BATCH_PAGES pages, each batch handed to
 * every running instance as one bundle, until its buffer is empty or
 * max_pages were read. True when it was emptied. */
static bool drain_cpu(struct ftrace_shared *sh, int cpu, size_t max_pages)
{
	bool more = false;
	for (size_t done = 0; done < max_pages;) {
		size_t batch = max_pages - done < FTRACE_DS_BATCH_PAGES ? max_pages - done
		                                                        : FTRACE_DS_BATCH_PAGES;
		size_t len;
		wait_for_room(sh);
		len = read_cpu(sh, cpu, batch, &more);
		if (!len)
			return true;
		for (size_t i = 0; i < sh->users.len; i++) {
			struct probes_ftrace *ft = sh->users.data[i];
			struct pb_writer *pw = tracing_writer_begin_packet(ft->w);
			unsigned h = pb_begin_nested(pw, PB_F_TracePacket_ftrace_events);
			probes_ftrace_encode_bundle_opts(pw, &sh->table, &ft->enc, (uint32_t)cpu,
			                                 sh->buf, len, &ft->st);
			if (sh->clock)
				pb_put_varint(pw, PB_F_FtraceEventBundle_ftrace_clock, sh->clock);
			pb_end_nested(pw, h);
			if (ft->symbolize_ksyms && sh->ksyms.n)
				probes_ftrace_kaddrs_write_names(pw, &ft->kaddrs, &sh->ksyms);
			tracing_writer_end_packet(ft->w);
			if (ft->commit_fn)
				ft->commit_fn(ft->commit_ctx);
		}
		if (!more)
			return true;
		done += batch;
	}
	return !more;
}

/* Read every CPU, at most max_pages each, and hand the pages to every
 * running instance. True when every CPU's buffer was emptied. */
static bool shared_drain(struct ftrace_shared *sh, size_t max_pages)
{
	bool all = true;
	sh->stall_left_ms = FTRACE_DS_STALL_MS;
	for (int cpu = 0; cpu < sh->ncpu; cpu++)
		all &= drain_cpu(sh, cpu, max_pages);
	flush_pids(sh);
	/* Indexes of kernel addresses are per drain (ksyms.c). */
	for (size_t i = 0; i < sh->users.len; i++)
		probes_ftrace_kaddrs_clear(&sh->users.data[i]->kaddrs);
	return all;
}

void probes_ftrace_set_pids_cb(struct probes_ftrace *ft,
                               void (*fn)(void *ctx, const int32_t *renamed, size_t n_renamed,
                                          const int32_t *pids, size_t n_pids),
                               void *ctx)
{
	ft->pids_fn = fn;
	ft->pids_ctx = ctx;
	ft->enc.pids = fn ? &ft->pids : NULL;
}

void probes_ftrace_set_kallsyms(struct probes_ftrace *ft, const char *path)
{
	tb_free(ft->kallsyms_path);
	ft->kallsyms_path = path ? tb_strdup(path) : NULL;
}

void probes_ftrace_set_commit_cb(struct probes_ftrace *ft, void (*fn)(void *ctx), void *ctx)
{
	ft->commit_fn = fn;
	ft->commit_ctx = ctx;
}

void probes_ftrace_set_smb(struct probes_ftrace *ft, const struct tracing_smb *smb)
{
	ft->smb = smb;
}

void probes_ftrace_drain(struct probes_ftrace *ft)
{
	if (ft && ft->started)
		shared_drain(ft->sh, ft->sh->buffer_pages);
}

static void on_redrain(struct loop *l, void *ctx);

/* A periodic drain reads at most FTRACE_DS_MAX_PAGES a CPU, so that other
 * work on the loop (commits, flushes, process_stats) is not held up; when a
 * CPU had more, it goes on at the next loop iteration instead of a drain
 * period later, as Perfetto's ReadTick reposts itself. Without that, a CPU
 * writing more than FTRACE_DS_MAX_PAGES a period (10 MiB/s at 100 ms)
 * overruns its buffer. */
static void tick(struct ftrace_shared *sh)
{
	if (!shared_drain(sh, FTRACE_DS_MAX_PAGES) && !sh->redrain_posted) {
		sh->redrain_posted = true;
		loop_post(sh->loop, on_redrain, NULL);
	}
}

/* The continuation: g_shared, not a pointer kept in the task, since the
 * instances may all have stopped (and freed it) before it runs. */
static void on_redrain(struct loop *l, void *ctx)
{
	(void)l, (void)ctx;
	if (g_shared && g_shared->redrain_posted) {
		g_shared->redrain_posted = false;
		tick(g_shared);
	}
}

static void on_drain(struct loop *l, uint64_t id, void *ctx)
{
	struct probes_ftrace *ft = ctx;
	(void)l, (void)id;
	if (ft->started && !ft->sh->redrain_posted)
		tick(ft->sh);
}

/* Write FtraceStats for phase; the kernel's read events over all CPUs, *ok
 * when every CPU's stats file had that count. */
static uint64_t write_stats(struct probes_ftrace *ft, enum ftrace_stats_phase phase, bool *ok)
{
	struct ftrace_shared *sh = ft->sh;
	struct ftrace_cpu_stats *cpus =
	    tb_calloc(sh->ncpu > 0 ? (size_t)sh->ncpu : 1, sizeof *cpus);
	size_t n = 0;
	struct pb_writer *pw;
	uint64_t read = 0;
	unsigned h;

	*ok = sh->ncpu > 0;
	for (int cpu = 0; cpu < sh->ncpu; cpu++) {
		if (probes_ftrace_tracefs_read_cpu_stats(&sh->fs, cpu, &cpus[n]) < 0) {
			*ok = false;
			continue;
		}
		*ok &= cpus[n].has_read_events;
		read += cpus[n].read_events;
		cpus[n++].cpu = (uint32_t)cpu;
	}
	pw = tracing_writer_begin_packet(ft->w);
	pb_put_uint64(pw, PB_F_TracePacket_timestamp, (uint64_t)tb_boot_ns());
	h = pb_begin_nested(pw, PB_F_TracePacket_ftrace_stats);
	probes_ftrace_encode_stats(pw, phase, cpus, n);
	if (ft->symbolize_ksyms && sh->ksyms.n) {
		pb_put_uint32(pw, PB_F_FtraceStats_kernel_symbols_parsed, (uint32_t)sh->ksyms.n);
		pb_put_uint32(
		    pw, PB_F_FtraceStats_kernel_symbols_mem_kb,
		    (uint32_t)((sh->ksyms.n * sizeof *sh->ksyms.syms + sh->ksyms.names_len) /
		               1024));
	}
	pb_end_nested(pw, h);
	tracing_writer_end_packet(ft->w);
	tb_free(cpus);
	return read;
}

/* Every event the kernel handed out while ft ran went through ft's encoder
 * (wanted or not): a difference means records were lost between
 * trace_pipe_raw and the walk, which nothing else in the trace would show. */
static void check_accounting(struct probes_ftrace *ft, uint64_t read_end, bool ok)
{
	ft->st.kernel_read_known = ok && ft->kernel_read0_ok && read_end >= ft->kernel_read0;
	if (!ft->st.kernel_read_known)
		return;
	ft->st.kernel_read_events = read_end - ft->kernel_read0;
	if (ft->st.kernel_read_events != ft->st.records - ft->records0)
		log_warn(DS_LOG, "ftrace: the kernel handed out %llu events, %llu were parsed",
		         (unsigned long long)ft->st.kernel_read_events,
		         (unsigned long long)(ft->st.records - ft->records0));
}

static void shared_free(struct ftrace_shared *sh)
{
	if (!sh)
		return;
	for (int cpu = 0; cpu < sh->ncpu; cpu++)
		if (sh->pipes[cpu] >= 0)
			close(sh->pipes[cpu]);
	if (probes_ftrace_tracefs_restore(&sh->fs) < 0)
		log_warn(DS_LOG, "ftrace: restoring tracefs: %s", sh->fs.err.msg);
	probes_ftrace_tracefs_close(&sh->fs);
	probes_ftrace_table_release(&sh->table);
	ksyms_release(&sh->ksyms);
	hmap_release(&sh->refs);
	vec_release(&sh->users);
	tb_free(sh->pipes);
	tb_free(sh->buf);
	tb_free(sh->root);
	if (g_shared == sh)
		g_shared = NULL;
	tb_free(sh);
}

/* The first instance's setup: tracefs opened, tracing off, buffer size and
 * clock set, pipes opened, stale pages dropped. NULL on failure (logged;
 * whatever was changed is restored). */
static struct ftrace_shared *shared_new(struct probes_ftrace *ft, int *rc)
{
	struct ftrace_shared *sh = tb_calloc(1, sizeof *sh);
	uint32_t kb;
	size_t page;
	bool more;

	sh->root = ft->root ? tb_strdup(ft->root) : NULL;
	sh->loop = ft->loop;
	probes_ftrace_table_init(&sh->table);
	hmap_init(&sh->refs);
	*rc = probes_ftrace_tracefs_open(&sh->fs, ft->root, true);
	if (*rc == 0) {
		/* Another capture's traced_probes has the top level: our own
		 * instance, so neither undoes the other's settings. */
		int c = probes_ftrace_tracefs_claim(&sh->fs);
		if (c == 1)
			log_info(DS_LOG,
			         "ftrace: another capture uses tracefs: recording into "
			         "the instance '%s'",
			         sh->fs.root);
		else if (c < 0)
			log_warn(DS_LOG, "ftrace: another capture may use tracefs too: %s",
			         sh->fs.err.msg);
		tb_err_clear(&sh->fs.err);
		*rc = probes_ftrace_table_load_header(&sh->table, &sh->fs);
	}
	if (*rc < 0) {
		log_warn(DS_LOG, "ftrace: %s", sh->fs.err.msg);
		shared_free(sh);
		return NULL;
	}
	sh->ncpu = probes_ftrace_tracefs_num_cpus(&sh->fs);
	if (sh->ncpu < 0)
		sh->ncpu = 0;
	sh->pipes = tb_malloc((sh->ncpu ? (size_t)sh->ncpu : 1) * sizeof *sh->pipes);
	if (probes_ftrace_tracefs_set_tracing_on(&sh->fs, false) < 0)
		log_warn(DS_LOG, "ftrace: %s", sh->fs.err.msg);
	kb = ft->buffer_size_kb ? ft->buffer_size_kb : default_buffer_kb();
	if (kb > FTRACE_DS_MAX_BUFFER_KB) {
		log_warn(DS_LOG,
		         "The requested ftrace buf size (%u KB) is too big, capping to %u KB", kb,
		         FTRACE_DS_MAX_BUFFER_KB);
		kb = FTRACE_DS_MAX_BUFFER_KB;
	}
	if (probes_ftrace_tracefs_set_buffer_size_kb(&sh->fs, kb) < 0)
		log_warn(DS_LOG, "ftrace: %s", sh->fs.err.msg);
	page = sh->table.layout.page_size ? sh->table.layout.page_size : 4096;
	sh->buffer_pages = (size_t)kb * 1024 / page;
	if (sh->buffer_pages < FTRACE_DS_MAX_PAGES)
		sh->buffer_pages = FTRACE_DS_MAX_PAGES;
	setup_clock(sh, ft->use_monotonic_raw_clock);
	for (int cpu = 0; cpu < sh->ncpu; cpu++) {
		sh->pipes[cpu] = probes_ftrace_tracefs_open_pipe_raw(&sh->fs, cpu);
		if (sh->pipes[cpu] < 0)
			log_warn(DS_LOG, "ftrace: cannot open trace_pipe_raw of cpu %d: %s", cpu,
			         strerror(-sh->pipes[cpu]));
	}
	/* Whatever the buffers hold is from before this session. */
	for (int cpu = 0; cpu < sh->ncpu; cpu++)
		for (size_t i = 0; i < sh->buffer_pages && read_cpu(sh, cpu, 1, &more); i++)
			;
	return sh;
}

/* symbolize_ksyms: load kallsyms (once a process) when one of ft's events
 * has a kernel address field. Reading /proc/kallsyms costs ~50 ms of CPU
 * and delays the start, and Perfetto's light config (ours too) asks for
 * symbolize_ksyms on every capture, mostly of events with no address. */
static void load_ksyms(struct probes_ftrace *ft)
{
	struct ftrace_shared *sh = ft->sh;
	struct tb_err err = {0};
	bool need = false;

	for (size_t i = 0; i < ft->ids.len && !need; i++) {
		const struct ftrace_event_format *f =
		    probes_ftrace_table_find(&sh->table, ft->ids.data[i]);
		need = f && probes_ftrace_format_has_kaddr(f);
	}
	if (!need || sh->ksyms_tried)
		return;
	sh->ksyms_tried = true;
	if (ksyms_load(&sh->ksyms, ft->kallsyms_path, &err) < 0)
		log_warn(DS_LOG, "ftrace: no kernel symbols: %s", err.msg);
}

static bool same_root(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

int probes_ftrace_start(struct probes_ftrace *ft)
{
	int rc = 0;

	if (ft->started)
		return 0;
	if (g_shared && !same_root(g_shared->root, ft->root)) {
		log_warn(DS_LOG,
		         "ftrace: another tracefs is in use; this instance records nothing");
		return -EBUSY;
	}
	if (!g_shared && !(g_shared = shared_new(ft, &rc)))
		return rc;
	ft->sh = g_shared;
	if (!ft->mask)
		ft->mask = tb_calloc(ID_MASK_WORDS, sizeof *ft->mask);
	ft->enc.id_mask = ft->mask;
	for (size_t i = 0; i < ft->events.len; i++)
		enable_config_event(ft, ft->events.data[i]);
	if (ft->symbolize_ksyms)
		load_ksyms(ft);
	vec_push(&ft->sh->users, ft);
	ft->started = true;
	ft->records0 = ft->st.records;
	ft->kernel_read0 = write_stats(ft, FTRACE_STATS_START_OF_TRACE, &ft->kernel_read0_ok);
	if (probes_ftrace_tracefs_set_tracing_on(&ft->sh->fs, true) < 0)
		log_warn(DS_LOG, "ftrace: %s", ft->sh->fs.err.msg);
	ft->timer =
	    loop_add_timer(ft->loop, ft->drain_period_ms, ft->drain_period_ms, on_drain, ft);
	if (!ft->timer)
		log_warn(DS_LOG, "ftrace: %s", loop_err(ft->loop)->msg);
	log_debug(DS_LOG, "ftrace: started, %zu events in %zu specs, %d cpus, %zu instances",
	          ft->ids.len, ft->events.len, ft->sh->ncpu, ft->sh->users.len);
	return 0;
}

void probes_ftrace_stop(struct probes_ftrace *ft)
{
	struct ftrace_shared *sh;
	uint64_t read_end;
	bool ok;

	if (!ft)
		return;
	if (ft->timer)
		loop_cancel_timer(ft->loop, ft->timer);
	ft->timer = 0;
	if (!ft->started)
		return;
	sh = ft->sh;
	/* The last one stops the kernel writing before the last drain. */
	if (sh->users.len == 1)
		probes_ftrace_tracefs_set_tracing_on(&sh->fs, false);
	shared_drain(sh, sh->buffer_pages);
	read_end = write_stats(ft, FTRACE_STATS_END_OF_TRACE, &ok);
	check_accounting(ft, read_end, ok);
	/* Disabling events below waits for an RCU grace period, which a busy
	 * machine can stretch to seconds: the service should not wait for the
	 * last bundles and the stats meanwhile. */
	if (ft->commit_fn) {
		tracing_writer_flush(ft->w);
		ft->commit_fn(ft->commit_ctx);
	}
	log_debug(DS_LOG,
	          "ftrace: stopped after %llu pages, %llu records, %llu events (%llu compact), "
	          "%llu of unknown ids; the writer dropped %llu packets",
	          (unsigned long long)ft->st.pages, (unsigned long long)ft->st.records,
	          (unsigned long long)ft->st.events, (unsigned long long)ft->st.compact_events,
	          (unsigned long long)ft->st.unknown_events,
	          (unsigned long long)tracing_writer_stats(ft->w)->packets_dropped);
	release_events(ft);
	for (size_t i = 0; i < sh->users.len; i++) {
		if (sh->users.data[i] == ft) {
			sh->users.data[i] = *vec_last(&sh->users);
			sh->users.len--;
			break;
		}
	}
	ft->started = false;
	ft->sh = NULL;
	if (!sh->users.len)
		shared_free(sh);
}

void probes_ftrace_free(struct probes_ftrace *ft)
{
	if (!ft)
		return;
	probes_ftrace_stop(ft);
	for (size_t i = 0; i < ft->events.len; i++)
		tb_free(ft->events.data[i]);
	vec_release(&ft->events);
	vec_release(&ft->ids);
	tb_free(ft->mask);
	probes_ftrace_encode_opts_release(&ft->enc);
	probes_ftrace_pids_release(&ft->pids);
	probes_ftrace_kaddrs_release(&ft->kaddrs);
	tb_free(ft->kallsyms_path);
	tb_free(ft->root);
	tb_free(ft);
}

const struct probes_ftrace_encode_stats *probes_ftrace_stats(const struct probes_ftrace *ft)
{
	return &ft->st;
}

int probes_ftrace_cleanup(const char *tracefs_root, bool hard, struct tb_err *err)
{
	struct ftrace_tracefs fs;
	size_t n = 0;
	int rc = probes_ftrace_tracefs_open(&fs, tracefs_root, false);

	if (rc == 0 && probes_ftrace_tracefs_remove_stale_instances(&fs) > 0)
		log_info(DS_LOG, "ftrace: removed the instances of dead traced_probes");
	if (rc == 0)
		rc = probes_ftrace_tracefs_recover(&fs, &n);
	if (rc == -EBUSY && !hard) {
		/* Another capture's live traced_probes: nothing to undo, and
		 * ours will record into an instance of its own. */
		log_info(DS_LOG, "ftrace: %s", fs.err.msg);
		rc = 0;
	}
	if (rc == 0 && n)
		log_info(DS_LOG, "ftrace: restored %zu tracefs settings a dead traced_probes left",
		         n);
	else if (rc == 0 && hard && (rc = probes_ftrace_tracefs_reset(&fs)) == 0)
		log_info(DS_LOG, "ftrace: tracefs reset");
	if (rc < 0)
		tb_err_set(err, rc, "cannot reset ftrace: %s", fs.err.msg);
	probes_ftrace_tracefs_close(&fs);
	return rc;
}
