/*
 * The traced test fixture (see traced_fixture.h): service on a loop plus a
 * consumer speaking ConsumerPort over the real wire protocol.
 */
#include "traced_fixture.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pb.h"
#include "pb_fields.h"

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	*(bool *)ctx = ok;
}

bool tfx_pump(struct tfx *e, bool *flag)
{
	for (int i = 0; i < 400 && !*flag; i++)
		loop_run_once(e->l, 10);
	return *flag;
}

void tfx_spin(struct tfx *e, int n, int ms)
{
	for (int i = 0; i < n; i++)
		loop_run_once(e->l, ms);
}

int tfx_init(struct tfx *e)
{
	static int n;
	struct traced_opts o = {0};
	struct tb_err err = {0};
	memset(e, 0, sizeof *e);
	snprintf(e->pname, sizeof e->pname, "@tb-traced-p-%d-%d", (int)getpid(), n);
	snprintf(e->cname, sizeof e->cname, "@tb-traced-c-%d-%d", (int)getpid(), n++);
	o.producer_socket = e->pname;
	o.consumer_socket = e->cname;
	if (!(e->l = loop_new(&err)))
		return -1;
	if (!(e->t = traced_new(e->l, &o, &err))) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

void tfx_release(struct tfx *e)
{
	ipc_client_free(e->c);
	for (size_t i = 0; i < e->packets.len; i++)
		tb_free(e->packets.data[i]);
	vec_release(&e->packets);
	vec_release(&e->lens);
	vec_release(&e->partial);
	traced_free(e->t);
	loop_free(e->l);
}

static void on_enable(void *ctx, const struct ipc_reply *r)
{
	struct tfx *e = ctx;
	e->disabled = true;
}

static void on_read(void *ctx, const struct ipc_reply *r)
{
	struct tfx *e = ctx;
	struct pb_reader rd, sr;
	struct pb_field f, g;
	pb_reader_init(&rd, r->data, r->len);
	while (pb_next(&rd, &f)) {
		bool last = false;
		if (f.id != PB_F_ReadBuffersResponse_slices)
			continue;
		pb_reader_init_field(&sr, &f);
		while (pb_next(&sr, &g)) {
			if (g.id == PB_F_ReadBuffersResponse_Slice_data)
				for (size_t i = 0; i < g.len; i++)
					vec_push(&e->partial, g.data[i]);
			else if (g.id == PB_F_ReadBuffersResponse_Slice_last_slice_for_packet)
				last = g.val != 0;
		}
		if (last) {
			vec_push(&e->packets,
			         tb_memdup(e->partial.data ? (void *)e->partial.data : "",
			                   e->partial.len ? e->partial.len : 1));
			vec_push(&e->lens, e->partial.len);
			vec_clear(&e->partial);
		}
	}
	if (!r->success)
		e->read_failed = true;
	if (!r->has_more || !r->success)
		e->read_done = true;
}

int tfx_enable(struct tfx *e, const char *ds_name, const char *legacy_config, uint32_t size_kb,
               bool discard, uint32_t duration_ms)
{
	Perfetto__Protos__TraceConfig cfg = PERFETTO__PROTOS__TRACE_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig buf =
	    PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig *bufs[] = {&buf};
	Perfetto__Protos__TraceConfig__DataSource ds =
	    PERFETTO__PROTOS__TRACE_CONFIG__DATA_SOURCE__INIT;
	Perfetto__Protos__TraceConfig__DataSource *dss[] = {&ds};
	Perfetto__Protos__DataSourceConfig dc = PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT;
	Perfetto__Protos__EnableTracingRequest req = PERFETTO__PROTOS__ENABLE_TRACING_REQUEST__INIT;
	Perfetto__Protos__TraceConfig__IncrementalStateConfig inc =
	    PERFETTO__PROTOS__TRACE_CONFIG__INCREMENTAL_STATE_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BuiltinDataSource builtin =
	    PERFETTO__PROTOS__TRACE_CONFIG__BUILTIN_DATA_SOURCE__INIT;
	Perfetto__Protos__TraceConfig__TriggerConfig tc =
	    PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__TriggerConfig__Trigger trig =
	    PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER__INIT;
	Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *trigs[] = {&trig};
	uint8_t out[512];
	size_t n;
	if (!e->c) {
		if (!(e->c = ipc_client_new(e->l, e->cname, NULL, NULL, NULL)))
			return -1;
		e->svc = ipc_client_bind(e->c, "ConsumerPort", on_bind, &e->bound);
		if (!tfx_pump(e, &e->bound))
			return -1;
	}
	buf.has_size_kb = true;
	buf.size_kb = size_kb;
	buf.has_fill_policy = true;
	buf.fill_policy =
	    discard ? PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD
	            : PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__RING_BUFFER;
	dc.name = (char *)ds_name;
	dc.legacy_config = (char *)legacy_config;
	ds.config = &dc;
	cfg.n_buffers = 1;
	cfg.buffers = bufs;
	cfg.n_data_sources = 1;
	cfg.data_sources = dss;
	cfg.has_duration_ms = duration_ms != 0;
	cfg.duration_ms = duration_ms;
	cfg.has_write_into_file = e->write_into_file;
	cfg.write_into_file = e->write_into_file;
	cfg.has_max_file_size_bytes = e->max_file_bytes != 0;
	cfg.max_file_size_bytes = e->max_file_bytes;
	cfg.has_file_write_period_ms = e->file_write_period_ms != 0;
	cfg.file_write_period_ms = e->file_write_period_ms;
	cfg.has_deferred_start = e->deferred_start;
	cfg.deferred_start = e->deferred_start;
	if (e->clear_period_ms) {
		inc.has_clear_period_ms = true;
		inc.clear_period_ms = e->clear_period_ms;
		cfg.incremental_state_config = &inc;
	}
	if (e->snapshot_interval_ms) {
		builtin.has_snapshot_interval_ms = true;
		builtin.snapshot_interval_ms = e->snapshot_interval_ms;
		cfg.builtin_data_sources = &builtin;
	}
	if (e->stop_trigger) {
		tc.has_trigger_mode = true;
		tc.trigger_mode =
		    PERFETTO__PROTOS__TRACE_CONFIG__TRIGGER_CONFIG__TRIGGER_MODE__STOP_TRACING;
		tc.has_trigger_timeout_ms = true;
		tc.trigger_timeout_ms = e->trigger_timeout_ms;
		trig.name = (char *)e->stop_trigger;
		trig.has_stop_delay_ms = true;
		trig.stop_delay_ms = e->stop_delay_ms;
		trig.has_max_per_24_h = e->trigger_max_per_24h != 0;
		trig.max_per_24_h = e->trigger_max_per_24h;
		trig.has_skip_probability = e->trigger_skip_probability != 0;
		trig.skip_probability = e->trigger_skip_probability;
		tc.n_triggers = 1;
		tc.triggers = trigs;
		cfg.trigger_config = &tc;
	}
	req.trace_config = &cfg;
	if (perfetto__protos__enable_tracing_request__get_packed_size(&req) > sizeof out)
		return -1;
	n = perfetto__protos__enable_tracing_request__pack(&req, out);
	return ipc_client_invoke(e->c, e->svc, "EnableTracing", out, n,
	                         e->write_into_file ? e->out_fd : -1, false, on_enable, e) > 0
	           ? 0
	           : -1;
}

int tfx_parse_file(struct tfx *e, const uint8_t *data, size_t len)
{
	struct pb_reader rd;
	struct pb_field f;
	int n = 0;
	pb_reader_init(&rd, data, len);
	while (pb_next(&rd, &f)) {
		if (f.id != PB_F_Trace_packet || f.wire != PB_WIRE_LEN)
			return -1;
		vec_push(&e->packets,
		         tb_memdup(f.len ? f.data : (const uint8_t *)"", f.len ? f.len : 1));
		vec_push(&e->lens, f.len);
		n++;
	}
	return pb_reader_error(&rd) ? -1 : n;
}

void tfx_start(struct tfx *e)
{
	ipc_client_invoke(e->c, e->svc, "StartTracing", NULL, 0, -1, false, NULL, NULL);
}

bool tfx_disable(struct tfx *e)
{
	ipc_client_invoke(e->c, e->svc, "DisableTracing", NULL, 0, -1, false, NULL, NULL);
	return tfx_pump(e, &e->disabled);
}

void tfx_read_begin(struct tfx *e)
{
	e->read_done = false;
	e->read_failed = false;
	ipc_client_invoke(e->c, e->svc, "ReadBuffers", NULL, 0, -1, false, on_read, e);
}

bool tfx_read(struct tfx *e)
{
	tfx_read_begin(e);
	return tfx_pump(e, &e->read_done);
}

int tfx_collect(struct tfx *e, uint64_t *ts, int max, int *service)
{
	int n = 0;
	*service = 0;
	for (size_t i = 0; i < e->packets.len; i++) {
		struct pb_field f;
		uint64_t seq = 0, t = UINT64_MAX;
		bool uid = false;
		if (pb_find_field(e->packets.data[i], e->lens.data[i],
		                  PB_F_TracePacket_trusted_packet_sequence_id, &f) == 1)
			seq = f.val;
		if (pb_find_field(e->packets.data[i], e->lens.data[i], PB_F_TracePacket_trusted_uid,
		                  &f) == 1)
			uid = f.val == (uint64_t)getuid();
		if (pb_find_field(e->packets.data[i], e->lens.data[i], PB_F_TracePacket_timestamp,
		                  &f) == 1)
			t = f.val;
		if (!uid || seq == 0)
			return -1;
		if (seq == 1)
			(*service)++;
		else if (n < max)
			ts[n++] = t;
	}
	return n;
}
