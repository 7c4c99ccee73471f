/*
 * consumer_port.c: the ConsumerPort service on the consumer socket.
 *
 * One struct traced_consumer per connection, owning at most one tracing
 * session. EnableTracing keeps its call until the session ends and then
 * answers {disabled: true}; ReadBuffers streams every readable packet as
 * slices (the producer's bytes, then the trusted trailer with
 * last_slice_for_packet) in replies kept under the IPC frame cap. A consumer
 * that goes away takes its session with it. Methods are listed in proto
 * declaration order; methods this service does not support yet answer success=false.
 */
#include "traced_int.h"

#include <stdio.h>
#include <string.h>

static struct traced_consumer *consumer_of(struct traced *t, struct ipc_call *call)
{
	return hmap_get_ptr(&t->consumers, ipc_call_peer(call)->client_id);
}

void traced_consumer_on_connect(struct traced *t, const struct ipc_peer *peer)
{
	struct traced_consumer *c = tb_calloc(1, sizeof *c);
	c->svc = t;
	c->client_id = peer->client_id;
	c->uid = peer->uid;
	hmap_put_ptr(&t->consumers, peer->client_id, c);
}

void traced_consumer_on_disconnect(struct traced *t, const struct ipc_peer *peer)
{
	uint64_t v;
	struct traced_consumer *c;
	if (!hmap_del(&t->consumers, peer->client_id, &v))
		return;
	c = (void *)(uintptr_t)v;
	if (c->session)
		traced_session_free(c->session);
	tb_free(c);
}

void traced_session_notify_disabled(struct traced_session *s, const char *error)
{
	Perfetto__Protos__EnableTracingResponse resp = PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__INIT;
	uint8_t *buf;
	size_t len;
	if (!s->enable_call)
		return;
	resp.state_case = PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__STATE_DISABLED;
	resp.disabled = true;
	resp.error = (char *)error;
	len = perfetto__protos__enable_tracing_response__get_packed_size(&resp);
	buf = tb_malloc(len);
	perfetto__protos__enable_tracing_response__pack(&resp, buf);
	ipc_call_reply(s->enable_call, buf, len, false, -1);
	s->enable_call = NULL;
	tb_free(buf);
}

static void m_enable_tracing(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced *t = ctx;
	struct traced_consumer *c = consumer_of(t, call);
	struct pb_field f = {0};
	char err[256] = "";
	int rc;

	if (!c) {
		ipc_call_fail(call);
		return;
	}
	if (pb_find_field(args, len, 2, &f) == 1 && f.val) {
		/* attach_notification_only: re-arm the notification. */
		if (c->session && !c->session->enable_call &&
		    c->session->state != TRACED_DISABLED) {
			c->session->enable_call = call;
			return;
		}
		ipc_call_fail(call);
		return;
	}
	if (c->session) {
		snprintf(err, sizeof err, "the consumer already has a tracing session");
	} else if (pb_find_field(args, len, 1, &f) != 1 || f.wire != PB_WIRE_LEN) {
		snprintf(err, sizeof err, "EnableTracing without a trace config");
	} else if ((rc = traced_session_create(t, c, f.data, f.len, call, err, sizeof err)) == 0) {
		return; /* answered when the session ends */
	}
	log_warn(TRACED_LOG, "EnableTracing rejected: %s", err);
	{
		struct traced_session tmp = {.enable_call = call};
		traced_session_notify_disabled(&tmp, err);
	}
}

static void m_disable_tracing(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced_consumer *c = consumer_of(ctx, call);
	if (!c || !c->session) {
		ipc_call_fail(call);
		return;
	}
	ipc_call_reply(call, NULL, 0, false, -1);
	if (c->session->state == TRACED_CONFIGURED)
		c->session->state = TRACED_DISABLING; /* never started: nothing to stop */
	traced_session_disable(c->session);
}

/* ---- ReadBuffers: slices into replies under the frame cap ----------------- */

struct rb_out {
	struct ipc_call *call;
	struct pb_writer w;
};

static void rb_flush(struct rb_out *o, bool last)
{
	size_t n = pb_writer_size(&o->w);
	ipc_call_reply(o->call, pb_writer_data(&o->w), n, !last, -1);
	pb_writer_reset(&o->w);
}

static void rb_slice(struct rb_out *o, const uint8_t *data, size_t len, bool last_slice)
{
	while (len || last_slice) {
		size_t room, take, inner;
		if (pb_writer_size(&o->w) + 64 >= TRACED_READ_REPLY_MAX)
			rb_flush(o, false);
		room = TRACED_READ_REPLY_MAX - pb_writer_size(&o->w) - 64;
		take = len < room ? len : room;
		inner = 1 + pb_varint_size(take) + take + ((last_slice && take == len) ? 2 : 0);
		pb_put_tag(&o->w, 2, PB_WIRE_LEN);
		pb_put_raw_varint(&o->w, inner);
		pb_put_bytes(&o->w, 1, data, take);
		if (last_slice && take == len)
			pb_put_bool(&o->w, 2, true);
		data += take;
		len -= take;
		if (!len)
			break;
	}
}

static int rb_packet(void *ctx, const uint8_t *data, size_t len, const uint8_t *trailer,
		     size_t trailer_len)
{
	struct rb_out *o = ctx;
	if (trailer_len) {
		rb_slice(o, data, len, false);
		rb_slice(o, trailer, trailer_len, true);
	} else {
		rb_slice(o, data, len, true);
	}
	return 0;
}

static void m_read_buffers(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced *t = ctx;
	struct traced_consumer *c = consumer_of(t, call);
	struct traced_session *s;
	struct rb_out o;
	o.call = call;
	if (!c || !(s = c->session)) {
		ipc_call_fail(call);
		return;
	}
	pb_writer_init_growable(&o.w);
	traced_emit_header_packets(s, rb_packet, &o);
	for (size_t i = 0; i < s->buffers.len; i++)
		traced_buffer_read(s->buffers.data[i], rb_packet, &o, &t->stats.invalid_packets);
	traced_emit_trailer_packets(s, rb_packet, &o);
	rb_flush(&o, true);
	pb_writer_release(&o.w);
}

static void m_free_buffers(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced_consumer *c = consumer_of(ctx, call);
	if (c && c->session) {
		struct traced_session *s = c->session;
		traced_session_notify_disabled(s, NULL);
		traced_session_free(s);
	}
	ipc_call_reply(call, NULL, 0, false, -1);
}

static void m_flush(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced_consumer *c = consumer_of(ctx, call);
	Perfetto__Protos__FlushRequest *req;
	if (!c || !c->session || c->session->state != TRACED_STARTED) {
		ipc_call_fail(call);
		return;
	}
	req = perfetto__protos__flush_request__unpack(ipc_pb_allocator(), len, args);
	if (!req) {
		ipc_call_fail(call);
		return;
	}
	traced_flush_start(c->session, req->timeout_ms, req->flags ? req->flags : (4 | 2 << 4),
			   call);
	protobuf_c_message_free_unpacked(&req->base, ipc_pb_allocator());
}

static void m_start_tracing(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced_consumer *c = consumer_of(ctx, call);
	if (!c || !c->session || c->session->state != TRACED_CONFIGURED) {
		ipc_call_fail(call);
		return;
	}
	traced_session_start(c->session);
	ipc_call_reply(call, NULL, 0, false, -1);
}

static void m_unsupported(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	ipc_call_fail(call);
}

static void m_get_trace_stats(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced *t = ctx;
	struct traced_consumer *c = consumer_of(t, call);
	Perfetto__Protos__TraceStats ts;
	Perfetto__Protos__GetTraceStatsResponse resp = PERFETTO__PROTOS__GET_TRACE_STATS_RESPONSE__INIT;
	uint8_t *buf;
	size_t n;
	if (!c) {
		ipc_call_fail(call);
		return;
	}
	traced_trace_stats_fill(t, c->session, &ts);
	resp.trace_stats = &ts;
	n = perfetto__protos__get_trace_stats_response__get_packed_size(&resp);
	buf = tb_malloc(n);
	perfetto__protos__get_trace_stats_response__pack(&resp, buf);
	ipc_call_reply(call, buf, n, false, -1);
	tb_free(buf);
	traced_trace_stats_release(&ts);
}

static void m_query_capabilities(void *ctx, struct ipc_call *call, const uint8_t *args,
				 size_t len)
{
	/* capabilities { has_query_capabilities: true } */
	static const uint8_t reply[] = {0x0a, 0x02, 0x08, 0x01};
	ipc_call_reply(call, reply, sizeof reply, false, -1);
}

static const struct ipc_method consumer_methods[] = {
	{"EnableTracing", m_enable_tracing},
	{"DisableTracing", m_disable_tracing},
	{"ReadBuffers", m_read_buffers},
	{"FreeBuffers", m_free_buffers},
	{"Flush", m_flush},
	{"StartTracing", m_start_tracing},
	{"ChangeTraceConfig", m_unsupported},
	{"Detach", m_unsupported},
	{"Attach", m_unsupported},
	{"GetTraceStats", m_get_trace_stats},
	{"ObserveEvents", m_unsupported},
	{"QueryServiceState", m_unsupported},
	{"QueryCapabilities", m_query_capabilities},
	{"SaveTraceForBugreport", m_unsupported},
	{"CloneSession", m_unsupported},
};

const struct ipc_service_desc traced_consumer_port = {
	"ConsumerPort", consumer_methods, TB_ARRAY_SIZE(consumer_methods)};
