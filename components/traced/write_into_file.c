/*
 * write_into_file.c: streaming a session's trace into a file instead of
 * handing it to the consumer with ReadBuffers (TraceConfig.write_into_file).
 *
 * The file is the consumer's fd passed with EnableTracing, or output_path.
 * Every file_write_period_ms, and once more when the session ends, the
 * buffers are drained into it as Trace records, service packets first as
 * ReadBuffers does:
 *
 *   record = 0x0A | varint(len) | producer bytes | trusted trailer
 *
 * Each drain ends like a read does: the lifecycle events recorded meanwhile
 * and, once per snapshot period and at the end, trace_stats. The final drain
 * (with the tracing_disabled event) closes the file. With max_file_size_bytes the file never grows past the
 * cap: the first record that would cross it is dropped, the file is closed
 * and the session is stopped, as Perfetto does.
 */
#include "traced_int.h"

#include <string.h>

/* Bytes buffered before a write(2). */
#define WIF_WRITE_CHUNK ((size_t)1 << 20)

struct wif {
	struct traced_session *s;
	struct pb_writer w;
	int err;
};

static void wif_flush(struct wif *o)
{
	if (!o->err && pb_writer_size(&o->w) &&
	    tb_write_all(o->s->out_fd, pb_writer_data(&o->w), pb_writer_size(&o->w)) != 0) {
		o->err = -EIO;
		log_warn(TRACED_LOG, "session %" PRIu64 ": cannot write the trace file",
			 o->s->id);
	}
	pb_writer_reset(&o->w);
}

static int wif_packet(void *ctx, const uint8_t *data, size_t len, const uint8_t *trailer,
		      size_t trailer_len)
{
	struct wif *o = ctx;
	struct traced_session *s = o->s;
	size_t body = len + trailer_len;
	uint64_t rec = 1 + pb_varint_size(body) + body;

	if (o->err || s->file_full)
		return 1;
	if (s->max_file_bytes && s->file_bytes + rec > s->max_file_bytes) {
		s->file_full = true;
		return 1;
	}
	pb_put_tag(&o->w, 1, PB_WIRE_LEN);
	pb_put_raw_varint(&o->w, body);
	pb_put_raw(&o->w, data, len);
	if (trailer_len)
		pb_put_raw(&o->w, trailer, trailer_len);
	s->file_bytes += rec;
	if (pb_writer_size(&o->w) >= WIF_WRITE_CHUNK)
		wif_flush(o);
	return 0;
}

void traced_session_write_file(struct traced_session *s, bool final)
{
	struct wif o = {.s = s};
	if (s->out_fd < 0)
		return;
	pb_writer_init_growable(&o.w);
	traced_emit_header_packets(s, wif_packet, &o);
	for (size_t i = 0; i < s->buffers.len && !s->file_full; i++)
		traced_buffer_read(s->buffers.data[i], wif_packet, &o,
				   &s->svc->stats.invalid_packets);
	traced_emit_trailer_packets(s, wif_packet, &o);
	wif_flush(&o);
	pb_writer_release(&o.w);
	if (final || s->file_full || o.err) {
		log_info(TRACED_LOG, "session %" PRIu64 ": %" PRIu64 " bytes written into the file%s",
			 s->id, s->file_bytes, s->file_full ? " (max_file_size_bytes reached)" : "");
		tb_close(&s->out_fd);
	}
	if (!final && (s->file_full || o.err) && s->state == TRACED_STARTED)
		traced_session_disable(s);
}
