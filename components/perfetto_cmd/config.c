/*
 * Trace configs for the perfetto client: the light config built from
 * -t/-b/-s/-a and positional events (Perfetto's CreateConfigFromOptions),
 * decoding a -c config (binary, or text with --txt / --txt-lossy through
 * protos_text_to_binary), the random trace UUID, and the bytes finally sent
 * in EnableTracing.
 */
#include "perfetto_cmd_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <unistd.h>

#include "ipc.h"

#define DEFAULT_TIME "10s"
#define DEFAULT_BUFFER "32mb"
#define LIGHT_FLUSH_PERIOD_MS 30000u
#define DISK_STATS_PERIOD_MS 1000u

int perfetto_cmd_parse_time_ms(const char *s, uint64_t *ms)
{
	if (!s || !*s || strcmp(s, "0") == 0) {
		*ms = 0;
		return 0;
	}
	return tb_parse_duration_ms(s, ms, NULL) == 0 ? 0 : -EINVAL;
}

int perfetto_cmd_parse_size_kb(const char *s, uint64_t *kb)
{
	uint64_t bytes;
	if (!s || !*s || strcmp(s, "0") == 0) {
		*kb = 0;
		return 0;
	}
	if (tb_parse_size(s, &bytes, NULL) != 0)
		return -EINVAL;
	*kb = bytes / 1024;
	return 0;
}

int perfetto_cmd_light_config(const struct perfetto_cmd_light_opts *o, uint8_t **out, size_t *len,
                              struct tb_err *err)
{
	Perfetto__Protos__TraceConfig cfg = PERFETTO__PROTOS__TRACE_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig buf =
	    PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig *bufs[] = {&buf};
	/* frametimeline?, ftrace, process_stats, system_info, sys_stats? */
	Perfetto__Protos__TraceConfig__DataSource ds[5];
	Perfetto__Protos__TraceConfig__DataSource *dsp[5];
	Perfetto__Protos__DataSourceConfig dc[5];
	Perfetto__Protos__FtraceConfig ftrace = PERFETTO__PROTOS__FTRACE_CONFIG__INIT;
	Perfetto__Protos__SysStatsConfig sys = PERFETTO__PROTOS__SYS_STATS_CONFIG__INIT;
	char **events = NULL, **cats = NULL;
	uint64_t duration_ms, buffer_kb, max_kb;
	bool gfx = false, disk = false;
	size_t n = 0;
	int rc = -EINVAL;

	*out = NULL;
	*len = 0;
	if (perfetto_cmd_parse_time_ms(o->time ? o->time : DEFAULT_TIME, &duration_ms) ||
	    duration_ms > UINT32_MAX)
		return tb_err_set(err, -EINVAL, "--time argument is invalid");
	if (perfetto_cmd_parse_size_kb(o->buffer ? o->buffer : DEFAULT_BUFFER, &buffer_kb) ||
	    buffer_kb > UINT32_MAX)
		return tb_err_set(err, -EINVAL, "--buffer argument is invalid");
	if (perfetto_cmd_parse_size_kb(o->max_file_size, &max_kb) || max_kb > UINT64_MAX / 1024)
		return tb_err_set(err, -EINVAL, "--size argument is invalid");

	events = tb_calloc(o->n_events + 1, sizeof *events);
	cats = tb_calloc(o->n_events + 1, sizeof *cats);
	for (size_t i = 0; i < o->n_events; i++) {
		const char *e = o->events[i];
		if (strchr(e, '/'))
			events[ftrace.n_ftrace_events++] = (char *)e;
		else
			cats[ftrace.n_atrace_categories++] = (char *)e;
		gfx |= strcmp(e, "gfx") == 0;
		disk |= strcmp(e, "disk") == 0;
	}
	ftrace.ftrace_events = events;
	ftrace.atrace_categories = cats;
	ftrace.n_atrace_apps = o->n_apps;
	ftrace.atrace_apps = (char **)o->apps;
	ftrace.has_symbolize_ksyms = true;
	ftrace.symbolize_ksyms = true;

	for (size_t i = 0; i < TB_ARRAY_SIZE(ds); i++) {
		perfetto__protos__trace_config__data_source__init(&ds[i]);
		perfetto__protos__data_source_config__init(&dc[i]);
		ds[i].config = &dc[i];
		dsp[i] = &ds[i];
	}
	if (gfx)
		dc[n++].name = "android.surfaceflinger.frametimeline";
	dc[n].name = "linux.ftrace";
	dc[n++].ftrace_config = &ftrace;
	dc[n].name = "linux.process_stats";
	dc[n].has_target_buffer = true;
	dc[n++].target_buffer = 0;
	dc[n].name = "linux.system_info";
	dc[n].has_target_buffer = true;
	dc[n++].target_buffer = 0;
	if (disk) {
		sys.has_diskstat_period_ms = true;
		sys.diskstat_period_ms = DISK_STATS_PERIOD_MS;
		dc[n].name = "linux.sys_stats";
		dc[n++].sys_stats_config = &sys;
	}

	cfg.has_duration_ms = true;
	cfg.duration_ms = (uint32_t)duration_ms;
	cfg.has_max_file_size_bytes = true;
	cfg.max_file_size_bytes = max_kb * 1024;
	cfg.has_flush_period_ms = true;
	cfg.flush_period_ms = LIGHT_FLUSH_PERIOD_MS;
	if (max_kb) {
		cfg.has_write_into_file = true;
		cfg.write_into_file = true;
	}
	buf.has_size_kb = true;
	buf.size_kb = (uint32_t)buffer_kb;
	cfg.n_buffers = 1;
	cfg.buffers = bufs;
	cfg.n_data_sources = n;
	cfg.data_sources = dsp;

	*len = perfetto__protos__trace_config__get_packed_size(&cfg);
	*out = tb_malloc(*len ? *len : 1);
	perfetto__protos__trace_config__pack(&cfg, *out);
	rc = 0;
	tb_free(events);
	tb_free(cats);
	return rc;
}

/* Perfetto's test for "this might be a text config": every byte printable
 * or white space. */
static bool looks_like_text(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((p[i] >= 32 && p[i] <= 126) || (p[i] >= 9 && p[i] <= 13)))
			return false;
	return true;
}

int perfetto_cmd_config_decode(const char *name, const uint8_t *raw, size_t len,
                               enum perfetto_cmd_txt mode, Perfetto__Protos__TraceConfig **out,
                               struct tb_err *err)
{
	uint8_t *bin = NULL;
	size_t bin_len = 0;
	int rc;

	*out = NULL;
	if (len == 0)
		return tb_err_set(err, -EINVAL, "The TraceConfig is empty");
	if (mode != PERFETTO_CMD_BINARY) {
		rc = protos_text_to_binary(&perfetto__protos__trace_config__descriptor, name,
		                           (const char *)raw, len, mode == PERFETTO_CMD_TXT_LOSSY,
		                           &bin, &bin_len, err);
		if (rc)
			return rc;
		raw = bin;
		len = bin_len;
	}
	*out = perfetto__protos__trace_config__unpack(protos_allocator(), len,
	                                              raw ? raw : (const uint8_t *)"");
	tb_free(bin);
	if (*out)
		return 0;
	if (mode == PERFETTO_CMD_BINARY && looks_like_text(raw, len))
		return tb_err_set(err, -EINVAL,
		                  "The trace config is invalid, bailing out.\n"
		                  "Looks like you are passing a textual config but I'm expecting a "
		                  "proto-encoded binary config.\n"
		                  "Try adding --txt to the cmdline.");
	return tb_err_set(err, -EINVAL, "The trace config is invalid, bailing out.");
}

void perfetto_cmd_config_free(Perfetto__Protos__TraceConfig *cfg)
{
	if (cfg)
		protobuf_c_message_free_unpacked(&cfg->base, protos_allocator());
}

static void random_bytes(uint8_t *p, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = getrandom(p + got, n - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got < n) {
		/* No getrandom: mix the clocks and the pid; uniqueness is all we need. */
		uint64_t x = (uint64_t)tb_realtime_ns() ^ ((uint64_t)getpid() << 32) ^
		             (uint64_t)tb_mono_ns();
		for (; got < n; got++) {
			x = tb_hash_u64(x + got);
			p[got] = (uint8_t)x;
		}
	}
}

void perfetto_cmd_config_set_uuid(Perfetto__Protos__TraceConfig *cfg)
{
	uint8_t b[16];
	uint64_t lsb = 0, msb = 0;
	if ((cfg->has_trace_uuid_msb && cfg->trace_uuid_msb) ||
	    (cfg->has_trace_uuid_lsb && cfg->trace_uuid_lsb))
		return;
	random_bytes(b, sizeof b);
	b[6] = (uint8_t)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (uint8_t)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	for (int i = 0; i < 8; i++) {
		lsb |= (uint64_t)b[i] << (8 * i);
		msb |= (uint64_t)b[8 + i] << (8 * i);
	}
	cfg->has_trace_uuid_msb = cfg->has_trace_uuid_lsb = true;
	cfg->trace_uuid_msb = (int64_t)msb;
	cfg->trace_uuid_lsb = (int64_t)lsb;
}

static bool scope_empty(const Perfetto__Protos__PerfEventConfig *c)
{
	const Perfetto__Protos__PerfEventConfig__Scope *s =
	    c->callstack_sampling ? c->callstack_sampling->scope : NULL;
	if (c->n_target_pid || c->n_target_cmdline || c->n_exclude_pid || c->n_exclude_cmdline ||
	    c->additional_cmdline_count)
		return false;
	return !s ||
	       (!s->n_target_pid && !s->n_target_cmdline && !s->n_exclude_pid &&
	        !s->n_exclude_cmdline && !s->additional_cmdline_count && !s->process_shard_count);
}

/* Append " word" (or "word") to ds's legacy_config. */
static void add_word(Perfetto__Protos__DataSourceConfig *ds, const char *word)
{
	size_t old = ds->legacy_config ? strlen(ds->legacy_config) : 0, n = strlen(word);
	char *s = tb_malloc(old + 1 + n + 1);
	if (old)
		memcpy(s, ds->legacy_config, old);
	if (old)
		s[old++] = ' ';
	memcpy(s + old, word, n + 1);
	if (ds->legacy_config)
		protos_allocator()->free(protos_allocator()->allocator_data, ds->legacy_config);
	ds->legacy_config = s;
}

size_t perfetto_cmd_config_perf_directives(Perfetto__Protos__TraceConfig *cfg,
                                           const struct perfetto_cmd_perf_directives *d)
{
	char word[4200];
	size_t n = 0;
	for (size_t i = 0; i < cfg->n_data_sources; i++) {
		Perfetto__Protos__DataSourceConfig *ds =
		    cfg->data_sources[i] ? cfg->data_sources[i]->config : NULL;
		if (!ds || !ds->name || strcmp(ds->name, "linux.perf") != 0)
			continue;
		n++;
		if (d->workload_pid > 0 &&
		    (!ds->perf_event_config || scope_empty(ds->perf_event_config))) {
			snprintf(word, sizeof word, "workload_pid=%d", (int)d->workload_pid);
			add_word(ds, word);
		}
		if (d->no_symbolize)
			add_word(ds, "no_symbolize");
		if (d->control) {
			snprintf(word, sizeof word, "control=%s", d->control);
			add_word(ds, word);
		}
	}
	return n;
}

uint64_t perfetto_cmd_config_sample_hz(const Perfetto__Protos__TraceConfig *cfg)
{
	for (size_t i = 0; i < cfg->n_data_sources; i++) {
		const Perfetto__Protos__DataSourceConfig *ds =
		    cfg->data_sources[i] ? cfg->data_sources[i]->config : NULL;
		if (!ds || !ds->name || strcmp(ds->name, "linux.perf") != 0)
			continue;
		const Perfetto__Protos__PerfEventConfig *c = ds->perf_event_config;
		const Perfetto__Protos__PerfEvents__Timebase *tb = c ? c->timebase : NULL;
		if (tb &&
		    tb->interval_case == PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_PERIOD &&
		    tb->period)
			return 0;
		if (tb &&
		    tb->interval_case ==
		        PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_FREQUENCY &&
		    tb->frequency)
			return tb->frequency;
		return c && c->has_sampling_frequency && c->sampling_frequency
		           ? c->sampling_frequency
		           : 10;
	}
	return 0;
}

uint8_t *perfetto_cmd_config_pack_for_service(Perfetto__Protos__TraceConfig *cfg, size_t *len)
{
	char *output_path = cfg->output_path;
	uint8_t *buf;

	cfg->output_path = NULL;
	*len = perfetto__protos__trace_config__get_packed_size(cfg);
	buf = tb_malloc(*len ? *len : 1);
	perfetto__protos__trace_config__pack(cfg, buf);
	cfg->output_path = output_path;
	return buf;
}
