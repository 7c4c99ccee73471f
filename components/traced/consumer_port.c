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

#include "version.h"
#include "pb_fields.h"

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
	if (c->observe_call)
		ipc_call_drop(c->observe_call);
	if (c->read_timer)
		loop_cancel_timer(t->loop, c->read_timer);
	if (c->read_call)
		ipc_call_drop(c->read_call);
	if (c->session)
		traced_session_free(c->session);
	traced_consumer_free(c);
}

void traced_consumer_free(struct traced_consumer *c)
{
	if (c->read_w_ready)
		pb_writer_release(&c->read_w);
	tb_free(c);
}

void traced_session_notify_disabled(struct traced_session *s, const char *error)
{
	Perfetto__Protos__EnableTracingResponse resp =
	    PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__INIT;
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
	int fd = ipc_call_take_fd(call); /* write_into_file output, if any */
	int rc;

	if (!c) {
		tb_close(&fd);
		ipc_call_fail(call);
		return;
	}
	if (pb_find_field(args, len, PB_F_EnableTracingRequest_attach_notification_only, &f) == 1 &&
	    f.val) {
		/* attach_notification_only: re-arm the notification. */
		if (c->session && !c->session->enable_call &&
		    c->session->state != TRACED_DISABLED) {
			c->session->enable_call = call;
			tb_close(&fd);
			return;
		}
		tb_close(&fd);
		ipc_call_fail(call);
		return;
	}
	if (c->session) {
		snprintf(err, sizeof err, "the consumer already has a tracing session");
	} else if (pb_find_field(args, len, PB_F_EnableTracingRequest_trace_config, &f) != 1 ||
	           f.wire != PB_WIRE_LEN) {
		snprintf(err, sizeof err, "EnableTracing without a trace config");
	} else if ((rc = traced_session_create(t, c, f.data, f.len, call, fd, err, sizeof err)) ==
	           0) {
		return; /* answered when the session ends */
	} else {
		fd = -1; /* traced_session_create closed it */
	}
	tb_close(&fd);
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
	traced_session_disable(c->session);
}

/* ---- ReadBuffers: slices into replies under the frame cap ----------------- */

struct rb_out {
	struct ipc_call *call;
	struct pb_writer *w; /* the consumer's read_w */
};

static void rb_flush(struct rb_out *o, bool last)
{
	size_t n = pb_writer_size(o->w);
	ipc_call_reply(o->call, pb_writer_data(o->w), n, !last, -1);
	pb_writer_reset(o->w);
}

static void rb_slice(struct rb_out *o, const uint8_t *data, size_t len, bool last_slice)
{
	while (len || last_slice) {
		size_t room, take, inner;
		if (pb_writer_size(o->w) + 64 >= TRACED_READ_REPLY_MAX)
			rb_flush(o, false);
		room = TRACED_READ_REPLY_MAX - pb_writer_size(o->w) - 64;
		take = len < room ? len : room;
		inner = 1 + pb_varint_size(take) + take + ((last_slice && take == len) ? 2 : 0);
		pb_put_tag(o->w, PB_F_ReadBuffersResponse_slices, PB_WIRE_LEN);
		pb_put_raw_varint(o->w, inner);
		pb_put_bytes(o->w, PB_F_ReadBuffersResponse_Slice_data, data, take);
		if (last_slice && take == len)
			pb_put_bool(o->w, PB_F_ReadBuffersResponse_Slice_last_slice_for_packet,
			            true);
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

static void read_step(struct traced_consumer *c);

static void on_read_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_consumer *c = ctx;
	c->read_timer = 0;
	read_step(c);
}

static void on_read_drained(void *ctx)
{
	read_step(ctx);
}

/* One step of a ReadBuffers: wait until the consumer's send queue has gone
 * into its socket, then read up to TRACED_READ_STEP_BYTES of buffer into
 * replies; the last step adds the trailer packets and ends the call. The
 * queue so never holds much more than a step: grown to megabytes for every
 * consumer, its fresh pages were a quarter of traced's faults in a capture. */
static void read_step(struct traced_consumer *c)
{
	struct traced *t = c->svc;
	struct traced_session *s = c->session;
	struct ipc_call *call = c->read_call;
	struct rb_out o = {.call = call, .w = &c->read_w};
	bool more = false;

	if (!s || !ipc_call_alive(call)) {
		c->read_call = NULL;
		ipc_call_fail(call);
		return;
	}
	if (ipc_call_queued_bytes(call) > TRACED_READ_QUEUE_TARGET &&
	    ipc_call_on_drained(call, on_read_drained, c))
		return;
	/* One writer for every step, kept with the consumer: a new one each
	 * step grows to 128 KiB again (maps and unmaps in musl's allocator). */
	if (!c->read_w_ready) {
		pb_writer_init_growable(&c->read_w);
		c->read_w_ready = true;
	}
	pb_writer_reset(&c->read_w);
	if (traced_session_waiting_for_trigger(s)) {
		/* no trigger yet: the trace is empty, as Perfetto's */
		rb_flush(&o, true);
		c->read_call = NULL;
		return;
	}
	if (!c->read_header_done) {
		c->read_header_done = true;
		traced_emit_header_packets(s, rb_packet, &o);
	}
	for (; c->read_buf < s->buffers.len; c->read_buf++) {
		traced_buffer_read_some(s->buffers.data[c->read_buf], rb_packet, &o,
		                        &t->stats.invalid_packets, TRACED_READ_STEP_BYTES, &more);
		if (more)
			break;
	}
	if (more) {
		if (pb_writer_size(o.w))
			rb_flush(&o, false);
		c->read_timer = loop_add_timer(t->loop, 0, 0, on_read_timer, c);
	} else {
		traced_emit_trailer_packets(s, rb_packet, &o);
		rb_flush(&o, true);
		c->read_call = NULL;
	}
}

static void m_read_buffers(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced *t = ctx;
	struct traced_consumer *c = consumer_of(t, call);
	if (!c || !c->session || c->session->write_into_file || c->read_call) {
		/* write_into_file sessions stream into their file instead */
		ipc_call_fail(call);
		return;
	}
	c->read_call = call;
	c->read_buf = 0;
	c->read_header_done = false;
	read_step(c);
}

/* End a ReadBuffers still in flight with an error reply: its session is
 * going away, and its step timer must not go on reading whatever session the
 * consumer enables next into this call. */
static void cancel_read(struct traced *t, struct traced_consumer *c)
{
	if (c->read_timer)
		loop_cancel_timer(t->loop, c->read_timer);
	c->read_timer = 0;
	if (c->read_call)
		ipc_call_fail(c->read_call);
	c->read_call = NULL;
}

static void m_free_buffers(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced_consumer *c = consumer_of(ctx, call);
	if (c)
		cancel_read(ctx, c);
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
	req = perfetto__protos__flush_request__unpack(protos_allocator(), len, args);
	if (!req) {
		ipc_call_fail(call);
		return;
	}
	traced_flush_start(c->session, req->timeout_ms, req->flags ? req->flags : (4 | 2 << 4),
	                   call, false);
	protobuf_c_message_free_unpacked(&req->base, protos_allocator());
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
	Perfetto__Protos__GetTraceStatsResponse resp =
	    PERFETTO__PROTOS__GET_TRACE_STATS_RESPONSE__INIT;
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

/* ---- ObserveEvents -------------------------------------------------------- */

void traced_consumer_notify_all_started(struct traced_session *s)
{
	Perfetto__Protos__ObservableEvents ev = PERFETTO__PROTOS__OBSERVABLE_EVENTS__INIT;
	Perfetto__Protos__ObserveEventsResponse resp =
	    PERFETTO__PROTOS__OBSERVE_EVENTS_RESPONSE__INIT;
	struct traced_consumer *c = s->consumer;
	uint8_t buf[16];
	size_t n;
	if (!c || !c->observe_call || !c->observe_all_started || s->all_started_sent)
		return;
	s->all_started_sent = true;
	ev.has_all_data_sources_started = true;
	ev.all_data_sources_started = true;
	resp.events = &ev;
	n = perfetto__protos__observe_events_response__pack(&resp, buf);
	ipc_call_reply(c->observe_call, buf, n, true, -1);
}

static void m_observe_events(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced_consumer *c = consumer_of(ctx, call);
	Perfetto__Protos__ObserveEventsRequest *req;
	if (!c) {
		ipc_call_fail(call);
		return;
	}
	req = perfetto__protos__observe_events_request__unpack(protos_allocator(), len, args);
	if (!req) {
		ipc_call_fail(call);
		return;
	}
	if (c->observe_call)
		ipc_call_drop(c->observe_call); /* a new request replaces the old one */
	c->observe_call = call;
	c->observe_all_started = false;
	for (size_t i = 0; i < req->n_events_to_observe; i++)
		if (req->events_to_observe[i] ==
		    PERFETTO__PROTOS__OBSERVABLE_EVENTS__TYPE__TYPE_ALL_DATA_SOURCES_STARTED)
			c->observe_all_started = true;
	protobuf_c_message_free_unpacked(&req->base, protos_allocator());
	if (c->session)
		traced_session_check_all_started(c->session);
}

/* ---- QueryServiceState ---------------------------------------------------- */

static const char *session_state_name(enum traced_session_state st)
{
	switch (st) {
	case TRACED_CONFIGURED:
		return "CONFIGURED";
	case TRACED_STARTED:
		return "STARTED";
	case TRACED_DISABLING:
		return "DISABLING_WAITING_STOP_ACKS";
	case TRACED_DISABLED:
		return "DISABLED";
	}
	return "UNKNOWN";
}

/* Everything is borrowed from the service except the arrays, which the
 * caller frees (one tb_malloc'd block per array). */
static void fill_state(struct traced *t, const struct traced_consumer *c, bool sessions_only,
                       Perfetto__Protos__TracingServiceState *st)
{
	size_t np = 0, nd = 0;
	perfetto__protos__tracing_service_state__init(st);
	st->tracing_service_version = "tracebox " TB_VERSION " (" TB_REVISION ")";
	st->has_supports_tracing_sessions = true;
	st->supports_tracing_sessions = true;
	for (size_t i = hmap_next(&t->producers, 0); i != HMAP_END;
	     i = hmap_next(&t->producers, i + 1)) {
		struct traced_producer *p = (void *)(uintptr_t)t->producers.slots[i].val;
		np++;
		nd += p->sources.len;
	}
	if (sessions_only)
		np = nd = 0;
	st->producers = tb_calloc(np + 1, sizeof *st->producers);
	st->data_sources = tb_calloc(nd + 1, sizeof *st->data_sources);
	for (size_t i = hmap_next(&t->producers, 0); np && i != HMAP_END;
	     i = hmap_next(&t->producers, i + 1)) {
		struct traced_producer *p = (void *)(uintptr_t)t->producers.slots[i].val;
		Perfetto__Protos__TracingServiceState__Producer *pp = tb_malloc(sizeof *pp);
		perfetto__protos__tracing_service_state__producer__init(pp);
		pp->has_id = pp->has_uid = pp->has_pid = true;
		pp->id = p->id;
		pp->uid = (int32_t)p->uid;
		pp->pid = (int32_t)p->pid;
		pp->name = p->name;
		pp->sdk_version = p->sdk_version;
		st->producers[st->n_producers++] = pp;
		for (size_t j = 0; j < p->sources.len; j++) {
			const struct traced_ds_reg *r = &p->sources.data[j];
			Perfetto__Protos__TracingServiceState__DataSource *d = tb_malloc(sizeof *d);
			Perfetto__Protos__DataSourceDescriptor *dd = tb_malloc(sizeof *dd);
			perfetto__protos__tracing_service_state__data_source__init(d);
			perfetto__protos__data_source_descriptor__init(dd);
			dd->name = r->name;
			dd->has_id = true;
			dd->id = r->id;
			dd->has_will_notify_on_start = dd->has_will_notify_on_stop = true;
			dd->will_notify_on_start = r->notify_on_start;
			dd->will_notify_on_stop = r->notify_on_stop;
			d->ds_descriptor = dd;
			d->has_producer_id = true;
			d->producer_id = p->id;
			st->data_sources[st->n_data_sources++] = d;
		}
	}
	st->tracing_sessions = tb_calloc(t->sessions.len + 1, sizeof *st->tracing_sessions);
	st->has_num_sessions = st->has_num_sessions_started = true;
	for (size_t i = 0; i < t->sessions.len; i++) {
		struct traced_session *s = t->sessions.data[i];
		Perfetto__Protos__TracingServiceState__TracingSession *ts;
		uid_t owner = s->consumer ? s->consumer->uid : 0;
		st->num_sessions++;
		if (s->state == TRACED_STARTED)
			st->num_sessions_started++;
		if (c->uid != 0 && owner != c->uid)
			continue; /* other users' sessions are counted, not shown */
		ts = tb_malloc(sizeof *ts);
		perfetto__protos__tracing_service_state__tracing_session__init(ts);
		ts->has_id = ts->has_consumer_uid = ts->has_duration_ms = true;
		ts->id = s->id;
		ts->consumer_uid = (int32_t)owner;
		ts->state = (char *)session_state_name(s->state);
		ts->unique_session_name = s->cfg->unique_session_name;
		ts->duration_ms = s->cfg->duration_ms;
		ts->has_num_data_sources = true;
		ts->num_data_sources = (uint32_t)s->cfg->n_data_sources;
		ts->has_is_started = true;
		ts->is_started = s->state == TRACED_STARTED;
		ts->n_buffer_size_kb = s->cfg->n_buffers;
		ts->buffer_size_kb = tb_calloc(s->cfg->n_buffers + 1, sizeof *ts->buffer_size_kb);
		for (size_t j = 0; j < s->cfg->n_buffers; j++)
			ts->buffer_size_kb[j] = s->cfg->buffers[j]->size_kb;
		st->tracing_sessions[st->n_tracing_sessions++] = ts;
	}
}

static void release_state(Perfetto__Protos__TracingServiceState *st)
{
	for (size_t i = 0; i < st->n_producers; i++)
		tb_free(st->producers[i]);
	for (size_t i = 0; i < st->n_data_sources; i++) {
		tb_free(st->data_sources[i]->ds_descriptor);
		tb_free(st->data_sources[i]);
	}
	for (size_t i = 0; i < st->n_tracing_sessions; i++) {
		tb_free(st->tracing_sessions[i]->buffer_size_kb);
		tb_free(st->tracing_sessions[i]);
	}
	tb_free(st->producers);
	tb_free(st->data_sources);
	tb_free(st->tracing_sessions);
}

/* One QueryServiceStateResponse{service_state: the bytes of state}. */
static void reply_state_chunk(struct ipc_call *call, const uint8_t *state, size_t n, bool more)
{
	uint8_t hdr[11], *end;
	uint8_t *buf;
	hdr[0] = 0x0A; /* service_state */
	end = pb_encode_varint(hdr + 1, n);
	buf = tb_malloc((size_t)(end - hdr) + n);
	memcpy(buf, hdr, (size_t)(end - hdr));
	if (n)
		memcpy(buf + (end - hdr), state, n);
	ipc_call_reply(call, buf, (size_t)(end - hdr) + n, more, -1);
	tb_free(buf);
}

static void m_query_service_state(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced *t = ctx;
	struct traced_consumer *c = consumer_of(t, call);
	Perfetto__Protos__TracingServiceState st;
	struct pb_field f = {0};
	bool sessions_only =
	    pb_find_field(args, len, PB_F_QueryServiceStateRequest_sessions_only, &f) == 1 && f.val;
	size_t n;
	if (!c) {
		ipc_call_fail(call);
		return;
	}
	fill_state(t, c, sessions_only, &st);
	/* Perfetto's split: everything but the data sources, then the data
	 * sources one by one, a new reply (has_more) whenever the next would
	 * cross the frame cap. Each reply is a valid TracingServiceState and
	 * their concatenation is the whole one. */
	{
		Perfetto__Protos__TracingServiceState one =
		    PERFETTO__PROTOS__TRACING_SERVICE_STATE__INIT;
		Perfetto__Protos__TracingServiceState__DataSource **ds = st.data_sources;
		size_t nds = st.n_data_sources;
		VEC(uint8_t) chunk = VEC_INIT;
		st.n_data_sources = 0;
		n = perfetto__protos__tracing_service_state__get_packed_size(&st);
		vec_reserve(&chunk, n);
		chunk.len = perfetto__protos__tracing_service_state__pack(&st, chunk.data);
		for (size_t i = 0; i < nds; i++) {
			one.n_data_sources = 1;
			one.data_sources = &ds[i];
			n = perfetto__protos__tracing_service_state__get_packed_size(&one);
			if (chunk.len + n >= TRACED_QUERY_CHUNK_MAX) {
				reply_state_chunk(call, chunk.data, chunk.len, true);
				chunk.len = 0;
			}
			vec_reserve(&chunk, n);
			chunk.len += perfetto__protos__tracing_service_state__pack(
			    &one, chunk.data + chunk.len);
		}
		reply_state_chunk(call, chunk.data, chunk.len, false);
		vec_release(&chunk);
		st.n_data_sources = nds;
	}
	release_state(&st);
}

static void m_query_capabilities(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
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
    {"ObserveEvents", m_observe_events},
    {"QueryServiceState", m_query_service_state},
    {"QueryCapabilities", m_query_capabilities},
    {"SaveTraceForBugreport", m_unsupported},
    {"CloneSession", m_unsupported},
};

const struct ipc_service_desc traced_consumer_port = {"ConsumerPort", consumer_methods,
                                                      TB_ARRAY_SIZE(consumer_methods)};
