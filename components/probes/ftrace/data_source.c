/*
 * The linux.ftrace data source: what ties the ftrace core (tracefs.c,
 * format.c, page.c, encode.c) to a trace writer on the producer's loop.
 *
 *   start   decode FtraceConfig (DataSourceConfig.ftrace_config = 100);
 *           open tracefs; tracing_on 0; buffer_size_kb (config, else
 *           Perfetto's default: 8 MiB per CPU with >= 7 GiB of RAM, else
 *           2 MiB); trace clock as Perfetto picks it (mono_raw if asked and
 *           available, else the first of boot, global, local the kernel
 *           has); the events, each loaded from its format file and enabled
 *           (unknown ones logged and skipped); stale pages discarded;
 *           FtraceStats{START_OF_TRACE}; tracing_on 1; the drain timer.
 *   drain   every drain_period_ms (default 100, as Perfetto's tick):
 *           per CPU, read per_cpu/cpuN/trace_pipe_raw (O_NONBLOCK) page by
 *           page, up to FTRACE_DS_MAX_PAGES, and write them as one
 *           TracePacket{ftrace_events = 1: FtraceEventBundle}, with
 *           sched_switch / sched_waking in its compact_sched unless
 *           compact_sched.enabled is false (unset means on, as in Perfetto). Like
 *           Perfetto's CpuReader, the packet has no timestamp: the events
 *           carry theirs in the trace clock, and the bundle names that clock
 *           (ftrace_clock = 5) only when it is not boot.
 *   flush   drain now (the caller then acks).
 *   stop    last drain, FtraceStats{END_OF_TRACE}, tracing_on 0 and every
 *           changed setting written back (ftrace_tracefs_restore).
 *
 * One instance owns tracefs at a time: a second concurrent one is refused
 * (Perfetto's refcounted muxing of several sessions is not done yet).
 */
#include "ftrace_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ipc.h"
#include "protos.h"
#include "tracing.h"

#define DS_LOG "probes"

enum {
	TP_FTRACE_EVENTS = 1,
	TP_FTRACE_STATS = 34,
	BUNDLE_FTRACE_CLOCK = 5,
	FTRACE_CLOCK_UNKNOWN = 1,
	FTRACE_CLOCK_GLOBAL = 2,
	FTRACE_CLOCK_LOCAL = 3,
	FTRACE_CLOCK_MONO_RAW = 4,
};

struct probes_ftrace {
	struct loop *loop;
	struct tracing_writer *w;
	char *root; /* tracefs root override (tests), or NULL */
	/* From the config. */
	VEC(char *) events;
	uint32_t buffer_size_kb, drain_period_ms;
	bool use_monotonic_raw_clock;
	struct ftrace_encode_opts enc; /* compact_sched and its scratch */
	/* Running state. */
	bool started, owner;
	struct ftrace_tracefs fs;
	struct ftrace_table table;
	int ncpu;
	int *pipes; /* ncpu fds, -1 when a CPU's pipe could not be opened */
	uint32_t clock; /* FtraceClock of the bundle; 0 = boot */
	uint64_t timer;
	uint8_t *buf;
	size_t buf_cap;
	struct ftrace_encode_stats st;
};

/* Only one instance may drive tracefs at a time. */
static bool tracefs_busy;

static void parse_config(struct probes_ftrace *ft, const uint8_t *cfg, size_t len)
{
	Perfetto__Protos__DataSourceConfig *dsc;
	Perfetto__Protos__FtraceConfig *fc;

	ft->drain_period_ms = FTRACE_DS_DEFAULT_DRAIN_MS;
	ft->enc.compact_sched = true; /* Perfetto's default since v42 */
	if (!len)
		return;
	dsc = perfetto__protos__data_source_config__unpack(ipc_pb_allocator(), len, cfg);
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
	}
	perfetto__protos__data_source_config__free_unpacked(dsc, ipc_pb_allocator());
}

struct probes_ftrace *probes_ftrace_new(struct loop *l, struct tracing_writer *w,
					const uint8_t *cfg, size_t len, const char *tracefs_root)
{
	struct probes_ftrace *ft = tb_calloc(1, sizeof *ft);
	ft->loop = l;
	ft->w = w;
	ft->root = tracefs_root ? tb_strdup(tracefs_root) : NULL;
	ftrace_table_init(&ft->table);
	parse_config(ft, cfg, len);
	return ft;
}

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
static void setup_clock(struct probes_ftrace *ft)
{
	static const char *const prefs[] = {"boot", "global", "local"};
	char cur[32] = "";
	char *text = NULL;
	size_t len;

	if (ftrace_tracefs_read(&ft->fs, "trace_clock", &text, &len) < 0) {
		log_warn(DS_LOG, "ftrace: %s", ft->fs.err.msg);
		return;
	}
	if (ft->use_monotonic_raw_clock && clock_listed(text, "mono_raw")) {
		ftrace_tracefs_set_clock(&ft->fs, "mono_raw");
	} else {
		ftrace_tracefs_get_clock(&ft->fs, cur, sizeof cur);
		for (size_t i = 0; i < TB_ARRAY_SIZE(prefs); i++) {
			if (!clock_listed(text, prefs[i]))
				continue;
			if (strcmp(cur, prefs[i]) != 0 &&
			    ftrace_tracefs_set_clock(&ft->fs, prefs[i]) < 0)
				log_warn(DS_LOG, "ftrace: %s", ft->fs.err.msg);
			break;
		}
	}
	tb_free(text);
	cur[0] = 0;
	ftrace_tracefs_get_clock(&ft->fs, cur, sizeof cur);
	if (strcmp(cur, "boot") == 0)
		ft->clock = 0;
	else if (strcmp(cur, "global") == 0)
		ft->clock = FTRACE_CLOCK_GLOBAL;
	else if (strcmp(cur, "local") == 0)
		ft->clock = FTRACE_CLOCK_LOCAL;
	else if (strcmp(cur, "mono_raw") == 0)
		ft->clock = FTRACE_CLOCK_MONO_RAW;
	else
		ft->clock = FTRACE_CLOCK_UNKNOWN;
}

/* Load one event's format and enable it. */
static int enable_one(struct probes_ftrace *ft, const char *group, const char *name)
{
	int rc = ftrace_table_load_event(&ft->table, &ft->fs, group, name);
	if (rc == 0)
		rc = ftrace_tracefs_enable_event(&ft->fs, group, name, true);
	if (rc < 0)
		log_warn(DS_LOG, "ftrace: skipping event '%s/%s': %s", group, name,
			 ft->fs.err.msg);
	return rc;
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
		ftrace_tracefs_list_events(&ft->fs, match_event, &m);
		if (!m.matched)
			log_warn(DS_LOG, "ftrace: no events enabled for '%s'", spec);
		return;
	}
	m.name = spec;
	ftrace_tracefs_list_events(&ft->fs, match_event, &m);
	if (m.matched)
		enable_one(ft, m.found_group, spec);
	else
		log_warn(DS_LOG, "ftrace: skipping unknown event '%s'", spec);
}

/* Read up to FTRACE_DS_MAX_PAGES pages of cpu into ft->buf; bytes read. */
static size_t read_cpu(struct probes_ftrace *ft, int cpu)
{
	size_t page = ft->table.layout.page_size, len = 0;
	int fd = ft->pipes[cpu];

	if (fd < 0 || page == 0)
		return 0;
	for (int i = 0; i < FTRACE_DS_MAX_PAGES; i++) {
		ssize_t n;
		if (len + page > ft->buf_cap) {
			ft->buf_cap = ft->buf_cap ? ft->buf_cap * 2 : 16 * page;
			ft->buf = tb_realloc(ft->buf, ft->buf_cap);
		}
		n = read(fd, ft->buf + len, page);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		/* A short read is the last page: keep it where the next page
		 * would start so the encoder sees page-aligned input. */
		len += (size_t)n;
		if ((size_t)n < page)
			break;
	}
	return len;
}

void probes_ftrace_drain(struct probes_ftrace *ft)
{
	if (!ft || !ft->started)
		return;
	for (int cpu = 0; cpu < ft->ncpu; cpu++) {
		size_t len = read_cpu(ft, cpu);
		struct pb_writer *pw;
		unsigned h;

		if (!len)
			continue;
		pw = tracing_writer_begin_packet(ft->w);
		h = pb_begin_nested(pw, TP_FTRACE_EVENTS);
		ftrace_encode_bundle_opts(pw, &ft->table, &ft->enc, (uint32_t)cpu, ft->buf, len,
					  &ft->st);
		if (ft->clock)
			pb_put_varint(pw, BUNDLE_FTRACE_CLOCK, ft->clock);
		pb_end_nested(pw, h);
		tracing_writer_end_packet(ft->w);
	}
}

static void on_drain(struct loop *l, uint64_t id, void *ctx)
{
	probes_ftrace_drain(ctx);
}

static void write_stats(struct probes_ftrace *ft, enum ftrace_stats_phase phase)
{
	struct ftrace_cpu_stats *cpus = tb_calloc(ft->ncpu > 0 ? (size_t)ft->ncpu : 1, sizeof *cpus);
	size_t n = 0;
	struct pb_writer *pw;
	unsigned h;

	for (int cpu = 0; cpu < ft->ncpu; cpu++)
		if (ftrace_tracefs_read_cpu_stats(&ft->fs, cpu, &cpus[n]) == 0)
			cpus[n++].cpu = (uint32_t)cpu;
	pw = tracing_writer_begin_packet(ft->w);
	pb_put_uint64(pw, 8, (uint64_t)tb_boot_ns());
	h = pb_begin_nested(pw, TP_FTRACE_STATS);
	ftrace_encode_stats(pw, phase, cpus, n);
	pb_end_nested(pw, h);
	tracing_writer_end_packet(ft->w);
	tb_free(cpus);
}

/* Read and drop whatever the buffers hold from before this session. */
static void discard_stale(struct probes_ftrace *ft)
{
	for (int cpu = 0; cpu < ft->ncpu; cpu++)
		for (int i = 0; i < 64 && read_cpu(ft, cpu); i++)
			;
}

int probes_ftrace_start(struct probes_ftrace *ft)
{
	int rc;

	if (ft->started)
		return 0;
	if (tracefs_busy) {
		log_warn(DS_LOG, "ftrace: another linux.ftrace instance owns tracefs; this one "
				 "records nothing");
		return -EBUSY;
	}
	rc = ftrace_tracefs_open(&ft->fs, ft->root, true);
	if (rc < 0) {
		log_warn(DS_LOG, "ftrace: %s", ft->fs.err.msg);
		return rc;
	}
	tracefs_busy = ft->owner = true;
	if ((rc = ftrace_table_load_header(&ft->table, &ft->fs)) < 0) {
		log_warn(DS_LOG, "ftrace: %s", ft->fs.err.msg);
		return rc;
	}
	ft->ncpu = ftrace_tracefs_num_cpus(&ft->fs);
	if (ft->ncpu < 0)
		ft->ncpu = 0;
	ft->pipes = tb_malloc((ft->ncpu ? (size_t)ft->ncpu : 1) * sizeof *ft->pipes);
	if (ftrace_tracefs_set_tracing_on(&ft->fs, false) < 0)
		log_warn(DS_LOG, "ftrace: %s", ft->fs.err.msg);
	if (ftrace_tracefs_set_buffer_size_kb(&ft->fs, ft->buffer_size_kb ? ft->buffer_size_kb
									   : default_buffer_kb()) < 0)
		log_warn(DS_LOG, "ftrace: %s", ft->fs.err.msg);
	setup_clock(ft);
	for (size_t i = 0; i < ft->events.len; i++)
		enable_config_event(ft, ft->events.data[i]);
	for (int cpu = 0; cpu < ft->ncpu; cpu++) {
		ft->pipes[cpu] = ftrace_tracefs_open_pipe_raw(&ft->fs, cpu);
		if (ft->pipes[cpu] < 0)
			log_warn(DS_LOG, "ftrace: cannot open trace_pipe_raw of cpu %d: %s", cpu,
				 strerror(-ft->pipes[cpu]));
	}
	ft->started = true;
	discard_stale(ft);
	write_stats(ft, FTRACE_STATS_START_OF_TRACE);
	if (ftrace_tracefs_set_tracing_on(&ft->fs, true) < 0)
		log_warn(DS_LOG, "ftrace: %s", ft->fs.err.msg);
	ft->timer = loop_add_timer(ft->loop, ft->drain_period_ms, ft->drain_period_ms, on_drain, ft);
	if (!ft->timer)
		log_warn(DS_LOG, "ftrace: %s", loop_err(ft->loop)->msg);
	log_debug(DS_LOG, "ftrace: started, %zu events in %zu specs, %d cpus",
		  ft->table.events.len, ft->events.len, ft->ncpu);
	return 0;
}

void probes_ftrace_stop(struct probes_ftrace *ft)
{
	if (!ft)
		return;
	if (ft->timer)
		loop_cancel_timer(ft->loop, ft->timer);
	ft->timer = 0;
	if (ft->started) {
		/* Stop the kernel writing before the last drain, so it is last. */
		ftrace_tracefs_set_tracing_on(&ft->fs, false);
		probes_ftrace_drain(ft);
		write_stats(ft, FTRACE_STATS_END_OF_TRACE);
		for (int cpu = 0; cpu < ft->ncpu; cpu++)
			if (ft->pipes[cpu] >= 0)
				close(ft->pipes[cpu]);
		ft->started = false;
	}
	if (ft->owner) {
		if (ftrace_tracefs_restore(&ft->fs) < 0)
			log_warn(DS_LOG, "ftrace: restoring tracefs: %s", ft->fs.err.msg);
		tracefs_busy = ft->owner = false;
	}
}

void probes_ftrace_free(struct probes_ftrace *ft)
{
	if (!ft)
		return;
	probes_ftrace_stop(ft);
	ftrace_tracefs_close(&ft->fs);
	ftrace_table_release(&ft->table);
	for (size_t i = 0; i < ft->events.len; i++)
		tb_free(ft->events.data[i]);
	vec_release(&ft->events);
	tb_free(ft->pipes);
	tb_free(ft->buf);
	ftrace_encode_opts_release(&ft->enc);
	tb_free(ft->root);
	tb_free(ft);
}

const struct ftrace_encode_stats *probes_ftrace_stats(const struct probes_ftrace *ft)
{
	return &ft->st;
}
