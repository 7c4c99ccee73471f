/*
 * service_packets.c: the TracePackets traced writes itself, on the service's
 * own sequence (trusted_packet_sequence_id 1) with traced's uid.
 *
 * At the start of a read: the clock snapshot taken when the session started
 * (BOOTTIME first), the periodic ones taken since (every
 * builtin_data_sources.snapshot_interval_ms, 10 s by default, kept when the
 * clocks drifted), the synchronization marker (its field written last; on
 * the first read and after each period), on the first read the trace config
 * as received and system info, then the lifecycle service events recorded
 * since the last read, each with the time it happened (tracing_started,
 * all_data_sources_started, flush_started, all_data_sources_flushed,
 * tracing_disabled). At the end of a read: events recorded meanwhile and
 * trace_stats (after each period and once the session ended). They are
 * encoded with pb_writer straight from field numbers (compat §3.1).
 */
#include "traced_int.h"

#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "version.h"
#include "pb_fields.h"

static const uint8_t sync_marker[16] = {0x82, 0x47, 0x7a, 0x76, 0xb2, 0x8d, 0x42, 0xba,
                                        0x81, 0xdc, 0x33, 0x32, 0x6d, 0x57, 0xa0, 0x79};

static void trusted(struct pb_writer *w)
{
	pb_put_int32(w, PB_F_TracePacket_trusted_uid, (int32_t)getuid());
	pb_put_uint32(w, PB_F_TracePacket_trusted_packet_sequence_id, TRACED_SERVICE_SEQ_ID);
}

static int emit(struct pb_writer *w, traced_packet_fn cb, void *ctx)
{
	int rc = cb(ctx, pb_writer_data(w), pb_writer_size(w), NULL, 0);
	pb_writer_reset(w);
	return rc;
}

/* A nested message written with a pre-computed size (small, flat). */
static void put_nested(struct pb_writer *w, uint32_t id, struct pb_writer *inner)
{
	pb_put_bytes(w, id, pb_writer_data(inner), pb_writer_size(inner));
	pb_writer_reset(inner);
}

static const struct {
	uint32_t id;
	clockid_t clk;
} clock_list[TRACED_NUM_CLOCKS] = {
    {PB_E_BuiltinClock_BUILTIN_CLOCK_BOOTTIME, CLOCK_BOOTTIME},
    {PB_E_BuiltinClock_BUILTIN_CLOCK_REALTIME_COARSE, CLOCK_REALTIME_COARSE},
    {PB_E_BuiltinClock_BUILTIN_CLOCK_MONOTONIC_COARSE, CLOCK_MONOTONIC_COARSE},
    {PB_E_BuiltinClock_BUILTIN_CLOCK_REALTIME, CLOCK_REALTIME},
    {PB_E_BuiltinClock_BUILTIN_CLOCK_MONOTONIC, CLOCK_MONOTONIC},
    {PB_E_BuiltinClock_BUILTIN_CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW},
};

void traced_clocks_capture(struct traced_clocks *c)
{
	for (size_t i = 0; i < TRACED_NUM_CLOCKS; i++)
		c->ns[i] = (uint64_t)tb_now_ns(clock_list[i].clk);
}

static bool drifted(const struct traced_clocks *old, const struct traced_clocks *now)
{
	int64_t boot = (int64_t)(now->ns[0] - old->ns[0]);
	for (size_t i = 1; i < TRACED_NUM_CLOCKS; i++) {
		int64_t d = boot - (int64_t)(now->ns[i] - old->ns[i]);
		if (d >= TRACED_CLOCK_DRIFT_NS || d <= -TRACED_CLOCK_DRIFT_NS)
			return true;
	}
	return false;
}

void traced_session_snapshot(struct traced_session *s)
{
	struct traced_clocks now;
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->cfg->builtin_data_sources;
	s->emit_sync_marker = true;
	s->emit_stats = true;
	if (b && b->disable_clock_snapshotting)
		return;
	traced_clocks_capture(&now);
	if (s->n_clocks && !drifted(&s->clocks[s->n_clocks - 1], &now))
		return;
	if (s->n_clocks == TRACED_MAX_CLOCK_SNAPSHOTS) {
		memmove(&s->clocks[0], &s->clocks[1], sizeof s->clocks[0] * (s->n_clocks - 1));
		s->n_clocks--;
	}
	s->clocks[s->n_clocks++] = now;
}

void traced_session_event(struct traced_session *s, unsigned field)
{
	if (field < TRACED_EV_MAX)
		s->events_ns[field] = tb_boot_ns();
}

static void clock_snapshot(struct pb_writer *w, const struct traced_clocks *clocks,
                           uint32_t primary)
{
	struct pb_writer snap, c;
	pb_writer_init_growable(&snap);
	pb_writer_init_growable(&c);
	for (size_t i = 0; i < TRACED_NUM_CLOCKS; i++) {
		pb_put_uint32(&c, PB_F_ClockSnapshot_Clock_clock_id, clock_list[i].id);
		pb_put_uint64(&c, PB_F_ClockSnapshot_Clock_timestamp, clocks->ns[i]);
		put_nested(&snap, PB_F_ClockSnapshot_clocks, &c);
	}
	pb_put_uint32(&snap, PB_F_ClockSnapshot_primary_trace_clock, primary);
	put_nested(w, PB_F_TracePacket_clock_snapshot, &snap);
	trusted(w);
	pb_writer_release(&snap);
	pb_writer_release(&c);
}

static void service_event(struct pb_writer *w, uint32_t event, int64_t ts)
{
	uint8_t ev[2] = {(uint8_t)(event << 3), 1};
	pb_put_uint64(w, PB_F_TracePacket_timestamp, (uint64_t)ts);
	pb_put_bytes(w, PB_F_TracePacket_service_event, ev, sizeof ev);
	trusted(w);
}

/* The lifecycle events pending, oldest first; then none is pending. */
static int emit_events(struct traced_session *s, struct pb_writer *w, traced_packet_fn cb,
                       void *ctx)
{
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->cfg->builtin_data_sources;
	int rc = 0;
	for (;;) {
		unsigned first = 0;
		for (unsigned f = 1; f < TRACED_EV_MAX; f++)
			if (s->events_ns[f] && (!first || s->events_ns[f] < s->events_ns[first]))
				first = f;
		if (!first)
			return rc;
		if (!(b && b->disable_service_events)) {
			service_event(w, first, s->events_ns[first]);
			rc = rc ? rc : emit(w, cb, ctx);
		}
		s->events_ns[first] = 0;
	}
}

static void system_info(struct pb_writer *w)
{
	struct utsname u;
	struct pb_writer si, un;
	long hz = sysconf(_SC_CLK_TCK), ps = sysconf(_SC_PAGESIZE),
	     cpus = sysconf(_SC_NPROCESSORS_CONF);
	pb_writer_init_growable(&si);
	pb_writer_init_growable(&un);
	if (uname(&u) == 0) {
		pb_put_string(&un, PB_F_Utsname_sysname, u.sysname);
		pb_put_string(&un, PB_F_Utsname_version, u.version);
		pb_put_string(&un, PB_F_Utsname_release, u.release);
		pb_put_string(&un, PB_F_Utsname_machine, u.machine);
		put_nested(&si, PB_F_SystemInfo_utsname, &un);
	}
	if (hz > 0)
		pb_put_int64(&si, PB_F_SystemInfo_hz, hz);
	pb_put_string(&si, PB_F_SystemInfo_tracing_service_version, "tracebox " TB_VERSION);
	if (ps > 0)
		pb_put_uint32(&si, PB_F_SystemInfo_page_size, (uint32_t)ps);
	if (cpus > 0)
		pb_put_uint32(&si, PB_F_SystemInfo_num_cpus, (uint32_t)cpus);
	put_nested(w, PB_F_TracePacket_system_info, &si);
	trusted(w);
	pb_writer_release(&si);
	pb_writer_release(&un);
}

int traced_emit_header_packets(struct traced_session *s, traced_packet_fn cb, void *ctx)
{
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->cfg->builtin_data_sources;
	uint32_t primary = b && b->has_primary_trace_clock && b->primary_trace_clock
	                       ? (uint32_t)b->primary_trace_clock
	                       : 6; /* BOOTTIME */
	struct pb_writer w;
	int rc = 0;
	pb_writer_init_growable(&w);
	if (!s->has_initial_clocks && !s->emitted_header && !(b && b->disable_clock_snapshotting)) {
		/* a session read before it started */
		traced_clocks_capture(&s->initial_clocks);
		s->has_initial_clocks = true;
	}
	if (s->has_initial_clocks) {
		s->has_initial_clocks = false;
		clock_snapshot(&w, &s->initial_clocks, primary);
		rc = rc ? rc : emit(&w, cb, ctx);
	}
	for (size_t i = 0; i < s->n_clocks; i++) {
		clock_snapshot(&w, &s->clocks[i], primary);
		rc = rc ? rc : emit(&w, cb, ctx);
	}
	s->n_clocks = 0;
	if (s->emit_sync_marker || !s->emitted_header) {
		s->emit_sync_marker = false;
		trusted(&w);
		pb_put_bytes(&w, PB_F_TracePacket_synchronization_marker, sync_marker,
		             sizeof sync_marker); /* must come last */
		rc = rc ? rc : emit(&w, cb, ctx);
	}
	if (!s->emitted_header) {
		s->emitted_header = true;
		if (!(b && b->disable_trace_config)) {
			pb_put_bytes(&w, PB_F_TracePacket_trace_config, s->config, s->config_len);
			trusted(&w);
			rc = rc ? rc : emit(&w, cb, ctx);
		}
		if (!(b && b->disable_system_info)) {
			system_info(&w);
			rc = rc ? rc : emit(&w, cb, ctx);
		}
	}
	if (!(b && b->disable_trace_config))
		rc = rc ? rc : traced_emit_triggers(s, &w, cb, ctx);
	rc = rc ? rc : emit_events(s, &w, cb, ctx);
	pb_writer_release(&w);
	return rc;
}

int traced_emit_trailer_packets(struct traced_session *s, traced_packet_fn cb, void *ctx)
{
	Perfetto__Protos__TraceStats ts;
	struct pb_writer w;
	uint8_t *buf;
	size_t n;
	int rc;
	pb_writer_init_growable(&w);
	rc = emit_events(s, &w, cb, ctx);
	if (s->emit_stats) {
		s->emit_stats = false;
		traced_trace_stats_fill(s->svc, s, &ts);
		n = perfetto__protos__trace_stats__get_packed_size(&ts);
		buf = tb_malloc(n ? n : 1);
		perfetto__protos__trace_stats__pack(&ts, buf);
		pb_put_bytes(&w, PB_F_TracePacket_trace_stats, buf, n);
		trusted(&w);
		rc = rc ? rc : emit(&w, cb, ctx);
		tb_free(buf);
		traced_trace_stats_release(&ts);
	}
	pb_writer_release(&w);
	return rc;
}

#define SET(m, f, v) ((m)->has_##f = true, (m)->f = (v))

void traced_trace_stats_fill(struct traced *t, struct traced_session *s,
                             Perfetto__Protos__TraceStats *ts)
{
	const struct traced_stats *st = &t->stats;
	perfetto__protos__trace_stats__init(ts);
	SET(ts, producers_connected, st->producers_connected);
	SET(ts, producers_seen, st->producers_seen);
	SET(ts, data_sources_registered, st->data_sources_registered);
	SET(ts, data_sources_seen, st->data_sources_seen);
	SET(ts, tracing_sessions, t->sessions.len);
	SET(ts, chunks_discarded, st->chunks_discarded + st->bad_commits);
	SET(ts, patches_discarded, st->patches_discarded);
	SET(ts, invalid_packets, st->invalid_packets);
	SET(ts, flushes_requested, st->flushes_requested);
	SET(ts, flushes_succeeded, st->flushes_succeeded);
	SET(ts, flushes_failed, st->flushes_failed);
	if (!s)
		return;
	SET(ts, total_buffers, s->buffers.len);
	ts->n_buffer_stats = s->buffers.len;
	ts->buffer_stats = tb_calloc(s->buffers.len ? s->buffers.len : 1, sizeof *ts->buffer_stats);
	for (size_t i = 0; i < s->buffers.len; i++) {
		const struct traced_buffer_stats *bs = traced_buffer_stats(s->buffers.data[i]);
		Perfetto__Protos__TraceStats__BufferStats *b = tb_malloc(sizeof *b);
		perfetto__protos__trace_stats__buffer_stats__init(b);
		SET(b, buffer_size, traced_buffer_size(s->buffers.data[i]));
		SET(b, bytes_written, bs->bytes_written);
		SET(b, chunks_written, bs->chunks_written);
		SET(b, chunks_overwritten, bs->chunks_overwritten);
		SET(b, chunks_rewritten, bs->chunks_rewritten);
		SET(b, write_wrap_count, bs->write_wrap_count);
		SET(b, patches_succeeded, bs->patches_succeeded);
		SET(b, patches_failed, bs->patches_failed);
		SET(b, abi_violations, bs->abi_violations);
		SET(b, bytes_read, bs->bytes_read);
		SET(b, chunks_read, bs->chunks_read);
		SET(b, chunks_discarded, bs->chunks_discarded);
		ts->buffer_stats[i] = b;
	}
}

void traced_trace_stats_release(Perfetto__Protos__TraceStats *ts)
{
	for (size_t i = 0; i < ts->n_buffer_stats; i++)
		tb_free(ts->buffer_stats[i]);
	tb_free(ts->buffer_stats);
	ts->buffer_stats = NULL;
	ts->n_buffer_stats = 0;
}
