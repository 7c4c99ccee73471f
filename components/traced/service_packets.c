/*
 * service_packets.c: the TracePackets traced writes itself, on the service's
 * own sequence (trusted_packet_sequence_id 1) with traced's uid.
 *
 * At the start of a session's first ReadBuffers: a clock snapshot (BOOTTIME
 * first), the synchronization marker (its field written last), the trace
 * config as received, system info, and the tracing_started /
 * all_data_sources_started service events. At the end of every read:
 * tracing_disabled (once, after the session ended) and trace_stats. They
 * are encoded with pb_writer straight from field numbers (compat §3.1).
 */
#include "traced_int.h"

#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "version.h"

static const uint8_t sync_marker[16] = {0x82, 0x47, 0x7a, 0x76, 0xb2, 0x8d, 0x42, 0xba,
					0x81, 0xdc, 0x33, 0x32, 0x6d, 0x57, 0xa0, 0x79};

static void trusted(struct pb_writer *w)
{
	pb_put_int32(w, 3, (int32_t)getuid());
	pb_put_uint32(w, 10, TRACED_SERVICE_SEQ_ID);
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

static void clock_snapshot(struct pb_writer *w, struct pb_writer *tmp)
{
	static const struct {
		uint32_t id;
		clockid_t clk;
	} clocks[] = {
		{6, CLOCK_BOOTTIME},        {2, CLOCK_REALTIME_COARSE}, {4, CLOCK_MONOTONIC_COARSE},
		{1, CLOCK_REALTIME},        {3, CLOCK_MONOTONIC},       {5, CLOCK_MONOTONIC_RAW},
	};
	struct pb_writer snap, c;
	pb_writer_init_growable(&snap);
	pb_writer_init_growable(&c);
	for (size_t i = 0; i < TB_ARRAY_SIZE(clocks); i++) {
		pb_put_uint32(&c, 1, clocks[i].id);
		pb_put_uint64(&c, 2, (uint64_t)tb_now_ns(clocks[i].clk));
		put_nested(&snap, 1, &c);
	}
	pb_put_uint32(&snap, 2, 6); /* primary_trace_clock: BOOTTIME */
	put_nested(w, 6, &snap);
	trusted(w);
	pb_writer_release(&snap);
	pb_writer_release(&c);
	(void)tmp;
}

static void service_event(struct pb_writer *w, uint32_t event)
{
	uint8_t ev[2] = {(uint8_t)(event << 3), 1};
	pb_put_uint64(w, 8, (uint64_t)tb_boot_ns());
	pb_put_bytes(w, 69, ev, sizeof ev);
	trusted(w);
}

static void system_info(struct pb_writer *w)
{
	struct utsname u;
	struct pb_writer si, un;
	long hz = sysconf(_SC_CLK_TCK), ps = sysconf(_SC_PAGESIZE), cpus = sysconf(_SC_NPROCESSORS_CONF);
	pb_writer_init_growable(&si);
	pb_writer_init_growable(&un);
	if (uname(&u) == 0) {
		pb_put_string(&un, 1, u.sysname);
		pb_put_string(&un, 2, u.version);
		pb_put_string(&un, 3, u.release);
		pb_put_string(&un, 4, u.machine);
		put_nested(&si, 1, &un);
	}
	if (hz > 0)
		pb_put_int64(&si, 3, hz);
	pb_put_string(&si, 4, "tracebox " TB_VERSION);
	if (ps > 0)
		pb_put_uint32(&si, 6, (uint32_t)ps);
	if (cpus > 0)
		pb_put_uint32(&si, 8, (uint32_t)cpus);
	put_nested(w, 45, &si);
	trusted(w);
	pb_writer_release(&si);
	pb_writer_release(&un);
}

int traced_emit_header_packets(struct traced_session *s, traced_packet_fn cb, void *ctx)
{
	struct pb_writer w;
	int rc = 0;
	if (s->emitted_header)
		return 0;
	s->emitted_header = true;
	pb_writer_init_growable(&w);
	clock_snapshot(&w, NULL);
	rc = rc ? rc : emit(&w, cb, ctx);
	trusted(&w);
	pb_put_bytes(&w, 36, sync_marker, sizeof sync_marker); /* must come last */
	rc = rc ? rc : emit(&w, cb, ctx);
	pb_put_bytes(&w, 33, s->config, s->config_len);
	trusted(&w);
	rc = rc ? rc : emit(&w, cb, ctx);
	system_info(&w);
	rc = rc ? rc : emit(&w, cb, ctx);
	service_event(&w, 2); /* tracing_started */
	rc = rc ? rc : emit(&w, cb, ctx);
	service_event(&w, 1); /* all_data_sources_started */
	rc = rc ? rc : emit(&w, cb, ctx);
	pb_writer_release(&w);
	return rc;
}

int traced_emit_trailer_packets(struct traced_session *s, traced_packet_fn cb, void *ctx)
{
	Perfetto__Protos__TraceStats ts;
	struct pb_writer w;
	uint8_t *buf;
	size_t n;
	int rc = 0;
	pb_writer_init_growable(&w);
	if (s->state == TRACED_DISABLED && !s->emitted_disabled) {
		s->emitted_disabled = true;
		service_event(&w, 5); /* tracing_disabled */
		rc = emit(&w, cb, ctx);
	}
	traced_trace_stats_fill(s->svc, s, &ts);
	n = perfetto__protos__trace_stats__get_packed_size(&ts);
	buf = tb_malloc(n ? n : 1);
	perfetto__protos__trace_stats__pack(&ts, buf);
	pb_put_bytes(&w, 35, buf, n);
	trusted(&w);
	rc = rc ? rc : emit(&w, cb, ctx);
	tb_free(buf);
	traced_trace_stats_release(&ts);
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
