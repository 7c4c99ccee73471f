/*
 * Tests for the producer client library (components/tracing/producer.c):
 * against the in-process traced (traced_fixture.h) for the whole session
 * lifecycle, and against a scripted fake ProducerPort for command orders the
 * real service does not produce (StartDataSource before SetupTracing).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ipc.h"
#include "pb.h"
#include "pb_fields.h"
#include "test.h"
#include "traced.h"
#include "traced_fixture.h"
#include "tracing.h"

/* What the producer callbacks saw. */
struct rec {
	struct tracing_producer *p;
	struct tracing_writer *w;
	char log[512];
	bool connected, disconnected, started, stopped, smb_at_setup, smb_at_start;
	int flushes;
	uint64_t instance;
	uint32_t target_buffer, config_target_buffer;
	char legacy[64];
	bool free_writer_on_stop;
};

static void logf_(struct rec *r, const char *what, uint64_t id)
{
	size_t n = strlen(r->log);
	snprintf(r->log + n, sizeof r->log - n, "%s%s:%llu", n ? " " : "", what,
	         (unsigned long long)id);
}

static void cb_connect(void *ctx, struct tracing_producer *p)
{
	((struct rec *)ctx)->connected = true;
}

static void cb_disconnect(void *ctx, struct tracing_producer *p)
{
	((struct rec *)ctx)->disconnected = true;
}

static void cb_setup(void *ctx, struct tracing_producer *p, uint64_t id, const char *name,
                     const uint8_t *cfg, size_t len)
{
	struct rec *r = ctx;
	struct pb_field f;
	logf_(r, name, id);
	r->smb_at_setup = tracing_producer_smb(p) != NULL;
	if (pb_find_field(cfg, len, PB_F_DataSourceConfig_legacy_config, &f) == 1 &&
	    f.len < sizeof r->legacy) {
		memcpy(r->legacy, f.data, f.len);
		r->legacy[f.len] = '\0';
	}
	if (pb_find_field(cfg, len, PB_F_DataSourceConfig_target_buffer, &f) == 1)
		r->config_target_buffer = (uint32_t)f.val;
}

static void cb_start(void *ctx, struct tracing_producer *p, uint64_t id, const uint8_t *cfg,
                     size_t len, uint32_t target_buffer)
{
	struct rec *r = ctx;
	logf_(r, "start", id);
	r->smb_at_start = tracing_producer_smb(p) != NULL;
	r->instance = id;
	r->target_buffer = target_buffer;
	r->w = tracing_producer_new_writer(p, target_buffer);
	tracing_producer_notify_started(p, id);
	r->started = true;
}

static void cb_stop(void *ctx, struct tracing_producer *p, uint64_t id)
{
	struct rec *r = ctx;
	logf_(r, "stop", id);
	if (r->free_writer_on_stop) {
		tracing_producer_free_writer(p, r->w);
		r->w = NULL;
	}
	tracing_producer_notify_stopped(p, id);
	r->stopped = true;
}

static void cb_flush(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n,
                     uint64_t request_id)
{
	struct rec *r = ctx;
	for (size_t i = 0; i < n; i++)
		logf_(r, "flush-ds", ids[i]);
	logf_(r, "flush", request_id);
	r->flushes++;
	tracing_producer_flush_done(p, request_id);
}

static struct tracing_producer *new_producer(struct loop *l, const char *sock, struct rec *r)
{
	struct tracing_producer_opts o = {0};
	struct tb_err err = {0};
	memset(r, 0, sizeof *r);
	o.name = "test.producer";
	o.socket_name = sock;
	o.smb_size_hint = 128 * 1024;
	o.smb_page_hint = 4096;
	o.ctx = r;
	o.on_connect = cb_connect;
	o.on_disconnect = cb_disconnect;
	o.setup = cb_setup;
	o.start = cb_start;
	o.stop = cb_stop;
	o.flush = cb_flush;
	r->p = tracing_producer_new(l, &o, &err);
	if (!r->p)
		fprintf(stderr, "%s\n", err.msg);
	return r->p;
}

/* A field number no TracePacket field has: the test payload. */
enum { PAYLOAD_FIELD = 900 };

/* Packet i: timestamp = i and `size` bytes of payload in PAYLOAD_FIELD. */
static void write_packet(struct tracing_writer *w, uint64_t i, size_t size)
{
	struct pb_writer *pw = tracing_writer_begin_packet(w);
	uint8_t *buf = tb_malloc(size + 1);
	memset(buf, (int)(i & 0xff), size + 1);
	pb_put_uint64(pw, PB_F_TracePacket_timestamp, i);
	pb_put_bytes(pw, PAYLOAD_FIELD, buf, size);
	tracing_writer_end_packet(w);
	tb_free(buf);
}

static void on_flag(void *ctx, const struct ipc_reply *r)
{
	*(bool *)ctx = r->success;
}

TEST(tracing_producer_session_roundtrip)
{
	struct tfx e;
	struct rec r;
	uint64_t ts[64];
	uint8_t flush_req[] = {0x08, 0x88, 0x27}; /* timeout_ms = 5000 */
	bool flushed = false;
	int n, svc;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK(new_producer(e.l, e.pname, &r));
	CHECK_EQ(tracing_producer_register_data_source(r.p, "test.ds", true, true, false), 0);
	CHECK(tfx_pump(&e, &r.connected));
	CHECK(tracing_producer_connected(r.p));
	CHECK(tracing_producer_new_writer(r.p, 1) == NULL); /* no SMB yet */
	CHECK_EQ(tfx_enable(&e, "test.ds", "hello config", 1024, false, 0), 0);
	CHECK(tfx_pump(&e, &r.started));
	CHECK(r.w);
	CHECK(r.smb_at_setup && r.smb_at_start);
	CHECK_STR_EQ(r.legacy, "hello config");
	CHECK(r.target_buffer != 0);
	CHECK_UEQ(r.target_buffer, r.config_target_buffer);
	/* Packets big enough to complete chunks on their own: those go out
	 * with the per-iteration commit batch, the rest with the flush. */
	for (int i = 0; i < 20; i++)
		write_packet(r.w, (uint64_t)i, i % 5 == 4 ? 9000 : 100);
	tfx_spin(&e, 5, 5);
	CHECK(tracing_writer_stats(r.w)->chunks_committed > 0);
	ipc_client_invoke(e.c, e.svc, "Flush", flush_req, sizeof flush_req, -1, false, on_flag,
	                  &flushed);
	CHECK(tfx_pump(&e, &flushed));
	CHECK_EQ(r.flushes, 1);
	r.free_writer_on_stop = true;
	CHECK(tfx_disable(&e));
	CHECK(r.stopped);
	CHECK(r.w == NULL);
	CHECK(tfx_read(&e));
	n = tfx_collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 20);
	for (int i = 0; i < 20; i++)
		CHECK_UEQ(ts[i], (uint64_t)i);
	for (size_t i = 0, k = 0; i < e.packets.len; i++) {
		struct pb_field f;
		if (pb_find_field(e.packets.data[i], e.lens.data[i], PAYLOAD_FIELD, &f) == 1) {
			CHECK_EQ(f.len, k % 5 == 4 ? 9000 : 100);
			k++;
		}
	}
	{
		char want[128];
		snprintf(want, sizeof want, "test.ds:%llu start:%llu flush-ds:%llu flush:",
		         (unsigned long long)r.instance, (unsigned long long)r.instance,
		         (unsigned long long)r.instance);
		CHECK(strncmp(r.log, want, strlen(want)) == 0);
	}
	CHECK_UEQ(traced_get_stats(e.t)->flushes_succeeded, 1);
	CHECK_UEQ(traced_get_stats(e.t)->bad_commits, 0);
	CHECK(!r.disconnected);
	tracing_producer_free(r.p);
	tfx_release(&e);
}

TEST(tracing_producer_disconnect_mid_session)
{
	struct tfx e;
	struct rec r;
	uint64_t ts[64];
	int n, svc;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK(new_producer(e.l, e.pname, &r));
	CHECK_EQ(tracing_producer_register_data_source(r.p, "test.ds", false, false, false), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 256, false, 300), 0);
	CHECK(tfx_pump(&e, &r.started));
	for (int i = 0; i < 5; i++)
		write_packet(r.w, (uint64_t)i, 50);
	CHECK_EQ(tracing_producer_commit(r.p), 0);
	tfx_spin(&e, 10, 5);
	tracing_producer_free(r.p);       /* the producer goes away mid-session */
	CHECK(tfx_pump(&e, &e.disabled)); /* duration_ms ends the session anyway */
	CHECK(!r.disconnected);           /* no callback from free */
	CHECK(tfx_read(&e));
	n = tfx_collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 5);
	tfx_release(&e);
}

TEST(tracing_producer_service_goes_away)
{
	struct tfx e;
	struct rec r;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK(new_producer(e.l, e.pname, &r));
	CHECK_EQ(tracing_producer_register_data_source(r.p, "test.ds", false, false, false), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 256, false, 0), 0);
	CHECK(tfx_pump(&e, &r.started));
	write_packet(r.w, 1, 50);
	traced_free(e.t);
	e.t = NULL;
	CHECK(tfx_pump(&e, &r.disconnected));
	CHECK(!tracing_producer_connected(r.p));
	CHECK(tb_err_is_set(tracing_producer_err(r.p)));
	CHECK_EQ(tracing_producer_commit(r.p), -ENOTCONN);
	CHECK(tracing_producer_new_writer(r.p, r.target_buffer) == NULL);
	CHECK_EQ(tracing_producer_register_data_source(r.p, "x", false, false, false), -ENOTCONN);
	tracing_producer_free(r.p);
	tfx_release(&e);
}

TEST(tracing_producer_no_service)
{
	struct loop *l = loop_new(NULL);
	struct tracing_producer_opts o = {.name = "p", .socket_name = "@tb-no-such-socket-x"};
	struct tb_err err = {0};
	CHECK(l);
	CHECK(tracing_producer_new(l, &o, &err) == NULL);
	CHECK(tb_err_is_set(&err));
	loop_free(l);
}

/* ---- the auto-reconnecting producer of the daemons (daemon.c) -------------- */

/* traced goes away and comes back on the same sockets: the daemon producer
 * reconnects by itself, registers its data source again (a new session
 * starts it and gets its packets) and reports readiness only once. */
TEST(tracing_daemon_reconnects_and_reregisters)
{
	static const struct tracing_ds_desc ds = {"test.ds", true, true, false};
	struct traced_opts to = {0};
	struct tracing_daemon_opts o = {0};
	struct tracing_daemon *d;
	struct tb_err err = {0};
	struct tfx e;
	struct rec r;
	uint64_t ts[8];
	int fds[2], svc;
	char env[16], b[4];

	CHECK_EQ(tfx_init(&e), 0);
	memset(&r, 0, sizeof r);
	CHECK_EQ(pipe(fds), 0);
	snprintf(env, sizeof env, "%d", fds[1]);
	setenv("TB_TEST_READY_FD", env, 1);
	o.producer.name = "test.daemon";
	o.producer.socket_name = e.pname;
	o.producer.smb_size_hint = 128 * 1024;
	o.producer.smb_page_hint = 4096;
	o.producer.ctx = &r;
	o.producer.on_connect = cb_connect;
	o.producer.on_disconnect = cb_disconnect;
	o.producer.setup = cb_setup;
	o.producer.start = cb_start;
	o.producer.stop = cb_stop;
	o.data_sources = &ds;
	o.n_data_sources = 1;
	o.ready_fd_env = "TB_TEST_READY_FD";
	o.retry_ms = 20;
	d = tracing_daemon_new(e.l, &o);
	CHECK(tfx_pump(&e, &r.connected));
	CHECK_EQ(tracing_daemon_connections(d), 1);
	CHECK_EQ(read(fds[0], b, sizeof b), 1);
	CHECK_EQ(b[0], '1');

	traced_free(e.t); /* the service goes away */
	e.t = NULL;
	CHECK(tfx_pump(&e, &r.disconnected));
	tfx_spin(&e, 5, 20); /* retries fail while nobody listens */
	CHECK(tracing_daemon_producer(d) == NULL);
	to.producer_socket = e.pname;
	to.consumer_socket = e.cname;
	CHECK((e.t = traced_new(e.l, &to, &err)));
	r.connected = false;
	CHECK(tfx_pump(&e, &r.connected));
	CHECK_EQ(tracing_daemon_connections(d), 2);
	CHECK(tracing_daemon_producer(d) != NULL);

	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 256, false, 0), 0);
	CHECK(tfx_pump(&e, &r.started));
	CHECK(r.w);
	write_packet(r.w, 7, 10);
	r.free_writer_on_stop = true;
	CHECK(tfx_disable(&e));
	CHECK(tfx_read(&e));
	CHECK_EQ(tfx_collect(&e, ts, 8, &svc), 1);
	CHECK_UEQ(ts[0], 7);
	CHECK_EQ(read(fds[0], b, sizeof b), 0); /* ready once; the fd was closed */
	close(fds[0]);
	tracing_daemon_free(d);
	tfx_release(&e);
}

/* ---- a scripted fake service ---------------------------------------------- */

struct fake {
	struct loop *l;
	struct ipc_host *h;
	struct tracing_smb *smb;
	struct ipc_call *async;
	int chunks, packets, init_calls, registered, writers;
	uint64_t flush_acked;
	bool got_commit;
};

static void fake_reply(struct ipc_call *call)
{
	ipc_call_reply(call, NULL, 0, false, -1);
}

static void fake_send(struct fake *f, const Perfetto__Protos__GetAsyncCommandResponse *cmd, int fd)
{
	uint8_t buf[256];
	size_t n = perfetto__protos__get_async_command_response__pack(cmd, buf);
	ipc_call_reply(f->async, buf, n, true, fd);
}

static void m_init(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	((struct fake *)ctx)->init_calls++;
	fake_reply(call);
}

static void m_register(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	((struct fake *)ctx)->registered++;
	fake_reply(call);
}

static void m_register_writer(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	((struct fake *)ctx)->writers++;
	fake_reply(call);
}

static void m_other(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	fake_reply(call);
}

static void m_commit(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	struct fake *f = ctx;
	Perfetto__Protos__CommitDataRequest *req =
	    perfetto__protos__commit_data_request__unpack(protos_allocator(), n, a);
	uint8_t payload[4096];
	for (size_t i = 0; req && i < req->n_chunks_to_move; i++) {
		struct tracing_chunk_header h;
		size_t len;
		if (tracing_smb_read_chunk(f->smb, req->chunks_to_move[i]->page,
		                           req->chunks_to_move[i]->chunk, &h, payload,
		                           sizeof payload, &len) == 0 &&
		    req->chunks_to_move[i]->target_buffer == 3) {
			f->chunks++;
			f->packets += h.packet_count;
		}
	}
	if (req && req->has_flush_request_id)
		f->flush_acked = req->flush_request_id;
	f->got_commit = true;
	if (req)
		protobuf_c_message_free_unpacked(&req->base, protos_allocator());
	fake_reply(call);
}

/* Sends StartDataSource and a Flush before SetupTracing. */
static void m_async(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	struct fake *f = ctx;
	Perfetto__Protos__GetAsyncCommandResponse cmd =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__StartDataSource start =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__START_DATA_SOURCE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__Flush fl =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__FLUSH__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__SetupTracing st =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__SETUP_TRACING__INIT;
	Perfetto__Protos__DataSourceConfig dc = PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT;
	uint64_t ids[] = {7};
	f->async = call;
	dc.name = "fake.ds";
	dc.has_target_buffer = true;
	dc.target_buffer = 3;
	start.has_new_instance_id = true;
	start.new_instance_id = 7;
	start.config = &dc;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE;
	cmd.start_data_source = &start;
	fake_send(f, &cmd, -1);
	fl.n_data_source_ids = 1;
	fl.data_source_ids = ids;
	fl.has_request_id = true;
	fl.request_id = 11;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_FLUSH;
	cmd.flush = &fl;
	fake_send(f, &cmd, -1);
	st.has_shared_buffer_page_size_kb = true;
	st.shared_buffer_page_size_kb = 4;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING;
	cmd.setup_tracing = &st;
	fake_send(f, &cmd, dup(tracing_smb_fd(f->smb)));
}

static const struct ipc_method fake_methods[] = {
    {"InitializeConnection", m_init},
    {"RegisterDataSource", m_register},
    {"UnregisterDataSource", m_other},
    {"CommitData", m_commit},
    {"GetAsyncCommand", m_async},
    {"RegisterTraceWriter", m_register_writer},
    {"UnregisterTraceWriter", m_other},
    {"NotifyDataSourceStarted", m_other},
    {"NotifyDataSourceStopped", m_other},
    {"ActivateTriggers", m_other},
    {"Sync", m_other},
    {"UpdateDataSource", m_other},
};

static const struct ipc_service_desc fake_port = {"ProducerPort", fake_methods,
                                                  TB_ARRAY_SIZE(fake_methods)};

/* The writer's packet goes in from the start callback, so the flush that
 * follows (also held back until SetupTracing) carries it. */
static void cb_start_write(void *ctx, struct tracing_producer *p, uint64_t id, const uint8_t *cfg,
                           size_t len, uint32_t target_buffer)
{
	struct rec *r = ctx;
	cb_start(ctx, p, id, cfg, len, target_buffer);
	if (r->w)
		write_packet(r->w, 42, 10);
}

TEST(tracing_producer_start_before_setup_tracing)
{
	struct fake f = {0};
	struct ipc_host_ops ops = {0};
	struct tracing_producer_opts o = {0};
	struct rec r;
	char name[64];
	memset(&r, 0, sizeof r);
	snprintf(name, sizeof name, "@tb-fake-producer-%d", (int)getpid());
	CHECK((f.l = loop_new(NULL)));
	CHECK_EQ(tracing_smb_create(64 * 1024, 4096, &f.smb, NULL), 0);
	CHECK((f.h = ipc_host_new(f.l, &ops, &f)));
	CHECK(ipc_host_add_service(f.h, &fake_port, &f) > 0);
	CHECK_EQ(ipc_host_listen(f.h, name), 0);
	o.name = "p";
	o.socket_name = name;
	o.ctx = &r;
	o.setup = cb_setup;
	o.start = cb_start_write;
	o.flush = cb_flush;
	CHECK((r.p = tracing_producer_new(f.l, &o, NULL)));
	CHECK_EQ(tracing_producer_register_data_source(r.p, "fake.ds", false, false, false), 0);
	for (int i = 0; i < 400 && !f.flush_acked; i++)
		loop_run_once(f.l, 10);
	CHECK_EQ(f.init_calls, 1);
	CHECK_EQ(f.registered, 1);
	CHECK_STR_EQ(r.log, "fake.ds:7 start:7 flush-ds:7 flush:11");
	CHECK(r.smb_at_setup && r.smb_at_start);
	CHECK_UEQ(r.target_buffer, 3);
	CHECK_EQ(f.writers, 1);
	CHECK_UEQ(f.flush_acked, 11);
	CHECK_EQ(f.chunks, 1);
	CHECK_EQ(f.packets, 1);
	tracing_producer_free(r.p);
	for (int i = 0; i < 5; i++)
		loop_run_once(f.l, 5);
	if (f.async)
		ipc_call_drop(f.async);
	ipc_host_free(f.h);
	tracing_smb_free(f.smb);
	loop_free(f.l);
}
