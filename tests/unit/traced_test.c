/*
 * Tests for components/traced: the service runs in-process on one loop with
 * abstract sockets named after the test pid (traced_fixture.h, which also
 * provides the test consumer). Well-behaved producers are the producer
 * client library (tracing_producer_*); the hostile-commit test drives
 * ProducerPort by hand so that it can send CommitData no library would.
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

/* ---- a well-behaved producer (the library) ------------------------------- */

struct tprod {
	struct tracing_producer *p;
	struct tracing_writer *w;
	uint32_t target_buffer;
	bool started, stopped;
	int flushes;
	int clears;           /* ClearIncrementalState commands */
	uint64_t cleared_id;  /* the last one's first instance id */
	size_t cleared_n;     /* and its instance count */
	uint64_t instance_id; /* from StartDataSource */
};

static void p_start(void *ctx, struct tracing_producer *p, uint64_t id, const uint8_t *cfg,
                    size_t len, uint32_t target_buffer)
{
	struct tprod *tp = ctx;
	tp->target_buffer = target_buffer;
	tp->instance_id = id;
	if (!tp->w)
		tp->w = tracing_producer_new_writer(p, target_buffer);
	tp->started = true;
}

static void p_stop(void *ctx, struct tracing_producer *p, uint64_t id)
{
	((struct tprod *)ctx)->stopped = true;
}

static void p_flush(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n,
                    uint64_t request_id)
{
	((struct tprod *)ctx)->flushes++;
	tracing_producer_flush_done(p, request_id);
}

static void p_clear(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n)
{
	struct tprod *tp = ctx;
	tp->clears++;
	tp->cleared_n = n;
	tp->cleared_id = n ? ids[0] : 0;
}

/* A producer registering test.ds, with handles_incremental_state_clear as
 * asked. */
static int prod_connect_clear(struct tfx *e, struct tprod *tp, bool clear)
{
	struct tracing_producer_opts o = {0};
	memset(tp, 0, sizeof *tp);
	o.name = "test";
	o.socket_name = e->pname;
	o.ctx = tp;
	o.start = p_start;
	o.stop = p_stop;
	o.flush = p_flush;
	o.clear_incremental_state = p_clear;
	if (!(tp->p = tracing_producer_new(e->l, &o, NULL)))
		return -1;
	return tracing_producer_register_data_source(tp->p, "test.ds", false, false, clear);
}

static int prod_connect(struct tfx *e, struct tprod *tp)
{
	return prod_connect_clear(e, tp, false);
}

static void prod_close(struct tprod *tp)
{
	tracing_producer_free(tp->p);
	tp->p = NULL;
	tp->w = NULL;
}

/* A field number no TracePacket field has: the test payload. */
enum { PAYLOAD_FIELD = 900 };

/* Packet i: timestamp = i and `size` bytes of payload in PAYLOAD_FIELD. */
static void prod_write(struct tprod *tp, uint64_t i, size_t size, bool reserved)
{
	struct pb_writer *w = tracing_writer_begin_packet(tp->w);
	uint8_t *buf = tb_malloc(size + 1);
	memset(buf, (int)(i & 0xff), size + 1);
	pb_put_uint64(w, PB_F_TracePacket_timestamp, i);
	if (reserved)
		pb_put_int32(w, PB_F_TracePacket_trusted_uid, 1234);
	pb_put_bytes(w, PAYLOAD_FIELD, buf, size);
	tracing_writer_end_packet(tp->w);
	tb_free(buf);
}

static bool wait_started(struct tfx *e, struct tprod *tp)
{
	return tfx_pump(e, &tp->started) && tp->w;
}

/* ---- tests ---------------------------------------------------------------- */

TEST(traced_roundtrip)
{
	struct tfx e;
	struct tprod p;
	uint64_t ts[64];
	int n, svc;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 1024, false, 0), 0);
	CHECK(wait_started(&e, &p));
	CHECK(tracing_producer_smb(p.p));
	for (int i = 0; i < 20; i++)
		prod_write(&p, (uint64_t)i, i % 5 == 4 ? 9000 : 100, false);
	prod_write(&p, 99, 10, true); /* reserved field: dropped */
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	CHECK(tfx_disable(&e));
	CHECK(p.stopped);
	CHECK(tfx_read(&e));
	n = tfx_collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 20);
	for (int i = 0; i < 20; i++)
		CHECK_UEQ(ts[i], (uint64_t)i);
	CHECK(svc >= 5);
	CHECK_UEQ(traced_get_stats(e.t)->invalid_packets, 1);
	/* The large packets came back whole. */
	for (size_t i = 0, k = 0; i < e.packets.len; i++) {
		struct pb_field f;
		if (pb_find_field(e.packets.data[i], e.lens.data[i], PAYLOAD_FIELD, &f) == 1) {
			CHECK_EQ(f.len, k % 5 == 4 ? 9000 : 100);
			k++;
		}
	}
	prod_close(&p);
	tfx_release(&e);
}

static int ring_or_discard(bool discard, uint64_t *first, uint64_t *last)
{
	struct tfx e;
	struct tprod p = {0};
	uint64_t ts[64];
	int n, svc;
	if (tfx_init(&e) || prod_connect(&e, &p) ||
	    tfx_enable(&e, "test.ds", NULL, 16, discard, 0) || !wait_started(&e, &p))
		return -1;
	for (int i = 0; i < 40; i++) {
		prod_write(&p, (uint64_t)i, 1000, false);
		tracing_producer_commit(p.p);
	}
	tfx_disable(&e);
	tfx_read(&e);
	n = tfx_collect(&e, ts, 64, &svc);
	if (n > 0) {
		*first = ts[0];
		*last = ts[n - 1];
	}
	prod_close(&p);
	tfx_release(&e);
	return n;
}

TEST(traced_ring_buffer_keeps_newest)
{
	uint64_t first = 0, last = 0;
	int n = ring_or_discard(false, &first, &last);
	CHECK(n >= 3 && n < 40);
	CHECK_UEQ(last, 39);
	CHECK(first > 0);
}

TEST(traced_discard_keeps_oldest)
{
	uint64_t first = 99, last = 99;
	int n = ring_or_discard(true, &first, &last);
	CHECK(n >= 3 && n < 40);
	CHECK_UEQ(first, 0);
	CHECK(last < 39);
}

/* ---- a hand-driven producer for hostile commits --------------------------- */

struct raw_prod {
	struct ipc_client *c;
	struct ipc_svc *svc;
	bool bound, started;
	struct tracing_smb *smb;
	uint32_t target_buffer;
};

static void raw_on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	*(bool *)ctx = ok;
}

static void raw_on_async(void *ctx, const struct ipc_reply *r)
{
	struct raw_prod *p = ctx;
	Perfetto__Protos__GetAsyncCommandResponse *cmd;
	if (!r->success)
		return;
	cmd = perfetto__protos__get_async_command_response__unpack(protos_allocator(), r->len,
	                                                           r->data);
	if (!cmd)
		return;
	if (cmd->cmd_case == PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING) {
		int fd = ipc_client_take_fd(p->c);
		if (tracing_smb_adopt(fd, cmd->setup_tracing->shared_buffer_page_size_kb * 1024,
		                      true, &p->smb, NULL))
			close(fd);
	} else if (cmd->cmd_case ==
	           PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE) {
		p->target_buffer = cmd->start_data_source->config->target_buffer;
		p->started = true;
	}
	protobuf_c_message_free_unpacked(&cmd->base, protos_allocator());
}

static int raw_connect(struct tfx *e, struct raw_prod *p)
{
	static const uint8_t init[] = {0x1a, 0x04, 't', 'e', 's', 't'}; /* producer_name */
	static const uint8_t reg[] = {0x0a, 0x09, 0x0a, 0x07, 't', 'e', 's', 't', '.', 'd', 's'};
	memset(p, 0, sizeof *p);
	if (!(p->c = ipc_client_new(e->l, e->pname, NULL, NULL, NULL)))
		return -1;
	p->svc = ipc_client_bind(p->c, "ProducerPort", raw_on_bind, &p->bound);
	if (!tfx_pump(e, &p->bound))
		return -1;
	ipc_client_invoke(p->c, p->svc, "InitializeConnection", init, sizeof init, -1, false, NULL,
	                  NULL);
	ipc_client_invoke(p->c, p->svc, "GetAsyncCommand", NULL, 0, -1, false, raw_on_async, p);
	ipc_client_invoke(p->c, p->svc, "RegisterDataSource", reg, sizeof reg, -1, false, NULL,
	                  NULL);
	return 0;
}

static void raw_close(struct raw_prod *p)
{
	ipc_client_free(p->c);
	if (p->smb)
		tracing_smb_free(p->smb);
}

TEST(traced_hostile_commit)
{
	struct tfx e;
	struct raw_prod p;
	struct tracing_chunk_header h = {.chunk_id = 0, .writer_id = 1};
	struct tracing_chunk ch;
	Perfetto__Protos__CommitDataRequest req = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__INIT;
	Perfetto__Protos__CommitDataRequest__ChunksToMove m1 =
	    PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNKS_TO_MOVE__INIT;
	Perfetto__Protos__CommitDataRequest__ChunksToMove m2 =
	    PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNKS_TO_MOVE__INIT;
	Perfetto__Protos__CommitDataRequest__ChunksToMove *mv[] = {&m1, &m2};
	uint8_t out[64];
	size_t len;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(raw_connect(&e, &p), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 64, false, 0), 0);
	CHECK(tfx_pump(&e, &p.started) && p.smb);
	/* A chunk still being written (page 10), and a page far out of range. */
	CHECK_EQ(tracing_page_partition(p.smb, 10, TRACING_LAYOUT_DIV1), 0);
	CHECK_EQ(tracing_chunk_acquire_for_writing(p.smb, 10, 0, &h, &ch), 0);
	m1.has_page = m1.has_chunk = m1.has_target_buffer = true;
	m1.page = 10;
	m1.target_buffer = p.target_buffer;
	m2 = m1;
	m2.page = 99999;
	req.n_chunks_to_move = 2;
	req.chunks_to_move = mv;
	len = perfetto__protos__commit_data_request__pack(&req, out);
	ipc_client_invoke(p.c, p.svc, "CommitData", out, len, -1, false, NULL, NULL);
	ipc_client_invoke(p.c, p.svc, "Sync", NULL, 0, -1, false, NULL, NULL);
	for (int i = 0; i < 50 && traced_get_stats(e.t)->bad_commits < 2; i++)
		loop_run_once(e.l, 10);
	CHECK_UEQ(traced_get_stats(e.t)->bad_commits, 2);
	CHECK_EQ(tracing_chunk_state(p.smb, 10, 0), TRACING_CHUNK_BEING_WRITTEN);
	CHECK(tfx_disable(&e));
	tracing_smb_free(p.smb);
	ipc_client_free(p.c);
	tfx_release(&e);
}

TEST(traced_producer_disconnect_mid_session)
{
	struct tfx e;
	struct tprod p;
	uint64_t ts[64];
	int n, svc;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 256, false, 300), 0);
	CHECK(wait_started(&e, &p));
	for (int i = 0; i < 5; i++)
		prod_write(&p, (uint64_t)i, 50, false);
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	tfx_spin(&e, 10, 5);
	prod_close(&p);
	CHECK(tfx_pump(&e, &e.disabled)); /* duration_ms ends the session anyway */
	CHECK(tfx_read(&e));
	n = tfx_collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 5);
	CHECK_EQ(traced_num_sessions(e.t), 1);
	tfx_release(&e);
}

TEST(traced_duration_flushes_then_stops)
{
	struct tfx e;
	struct tprod p;
	uint64_t ts[64];
	int n, svc;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 256, false, 100), 0);
	CHECK(wait_started(&e, &p));
	for (int i = 0; i < 3; i++)
		prod_write(&p, (uint64_t)i, 50, false);
	/* Not committed: the service's flush makes the producer commit. */
	CHECK(tfx_pump(&e, &e.disabled));
	CHECK_EQ(p.flushes, 1);
	CHECK(p.stopped);
	CHECK(tfx_read(&e));
	n = tfx_collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 3);
	CHECK_UEQ(traced_get_stats(e.t)->flushes_succeeded, 1);
	prod_close(&p);
	tfx_release(&e);
}

/* ---- write_into_file ------------------------------------------------------ */

/* A temporary file: *rd to read it back, the returned fd goes to traced. */
static int wif_tmpfile(int *rd)
{
	char path[] = "/tmp/tb-traced-wif-XXXXXX";
	int fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	*rd = fd;
	return dup(fd);
}

static size_t wif_read_back(int fd, uint8_t **out)
{
	off_t end = lseek(fd, 0, SEEK_END);
	size_t n = end > 0 ? (size_t)end : 0;
	*out = tb_malloc(n + 1);
	if (n && pread(fd, *out, n, 0) != (ssize_t)n)
		n = 0;
	return n;
}

TEST(traced_write_into_file_streams)
{
	struct tfx e;
	struct tprod p;
	uint64_t ts[64];
	uint8_t *data = NULL;
	size_t len;
	int rd = -1, n, svc;
	struct pb_field f = {0};
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	e.write_into_file = true;
	e.file_write_period_ms = 100;
	e.out_fd = wif_tmpfile(&rd);
	CHECK(e.out_fd >= 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 64, false, 0), 0);
	CHECK(wait_started(&e, &p));
	for (int i = 0; i < 20; i++)
		prod_write(&p, (uint64_t)i, 500, false);
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	tfx_spin(&e, 30, 10);
	/* Written during the session: more than the 64 KiB buffer would hold. */
	CHECK(lseek(rd, 0, SEEK_END) > 20 * 500);
	for (int i = 20; i < 40; i++)
		prod_write(&p, (uint64_t)i, 2000, false);
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	tfx_spin(&e, 30, 10);
	for (int i = 40; i < 50; i++)
		prod_write(&p, (uint64_t)i, 2000, false);
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	CHECK(tfx_disable(&e));
	/* ReadBuffers is refused: the trace went into the file. */
	CHECK(tfx_read(&e));
	CHECK_EQ(e.packets.len, 0);
	len = wif_read_back(rd, &data);
	CHECK(tfx_parse_file(&e, data, len) > 0);
	n = tfx_collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 50);
	for (int i = 0; i < n; i++)
		CHECK_UEQ(ts[i], (uint64_t)i);
	CHECK(svc >= 6);
	/* Service packets first (clock snapshot), trace_stats last. */
	CHECK_EQ(
	    pb_find_field(e.packets.data[0], e.lens.data[0], PB_F_TracePacket_clock_snapshot, &f),
	    1);
	CHECK_EQ(pb_find_field(e.packets.data[e.packets.len - 1], e.lens.data[e.packets.len - 1],
	                       PB_F_TracePacket_trace_stats, &f),
	         1);
	tb_free(data);
	close(rd);
	prod_close(&p);
	tfx_release(&e);
}

TEST(traced_write_into_file_size_cap)
{
	struct tfx e;
	struct tprod p;
	uint64_t ts[128];
	uint8_t *data = NULL;
	size_t len;
	int rd = -1, n, svc;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	e.write_into_file = true;
	e.file_write_period_ms = 100;
	e.max_file_bytes = 20000;
	e.out_fd = wif_tmpfile(&rd);
	CHECK(e.out_fd >= 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 1024, false, 0), 0);
	CHECK(wait_started(&e, &p));
	for (int i = 0; i < 100; i++)
		prod_write(&p, (uint64_t)i, 1000, false);
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	/* The service stops the session by itself once the cap is reached. */
	CHECK(tfx_pump(&e, &e.disabled));
	CHECK(p.stopped);
	len = wif_read_back(rd, &data);
	CHECK(len > 0 && len <= 20000);
	CHECK(tfx_parse_file(&e, data, len) > 0);
	n = tfx_collect(&e, ts, 128, &svc);
	CHECK(n > 5 && n < 20);
	for (int i = 0; i < n; i++)
		CHECK_UEQ(ts[i], (uint64_t)i);
	tb_free(data);
	close(rd);
	prod_close(&p);
	tfx_release(&e);
}

TEST(traced_write_into_file_needs_output)
{
	struct tfx e;
	CHECK_EQ(tfx_init(&e), 0);
	e.write_into_file = true;
	e.out_fd = -1;
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 64, false, 0), 0);
	CHECK(tfx_pump(&e, &e.disabled)); /* rejected at once */
	CHECK_EQ(traced_num_sessions(e.t), 0);
	tfx_release(&e);
}

/* ---- ObserveEvents and QueryServiceState ---------------------------------- */

struct obs {
	bool all_started, state_done;
	Perfetto__Protos__TracingServiceState *st;
};

static void on_observe(void *ctx, const struct ipc_reply *r)
{
	struct obs *o = ctx;
	struct pb_field f = {0}, g = {0};
	if (r->success &&
	    pb_find_field(r->data, r->len, PB_F_ObserveEventsResponse_events, &f) == 1 &&
	    pb_find_field(f.data, f.len, PB_F_ObservableEvents_all_data_sources_started, &g) == 1 &&
	    g.val)
		o->all_started = true;
}

static void on_state(void *ctx, const struct ipc_reply *r)
{
	struct obs *o = ctx;
	Perfetto__Protos__QueryServiceStateResponse *resp;
	o->state_done = true;
	if (!r->success)
		return;
	resp = perfetto__protos__query_service_state_response__unpack(
	    protos_allocator(), r->len, r->data ? r->data : (const uint8_t *)"");
	if (resp) {
		o->st = resp->service_state;
		resp->service_state = NULL;
		protobuf_c_message_free_unpacked(&resp->base, protos_allocator());
	}
}

TEST(traced_observe_events_and_query_state)
{
	static const uint8_t observe_args[] = {0x08, 0x02}; /* TYPE_ALL_DATA_SOURCES_STARTED */
	struct tfx e;
	struct tprod p;
	struct obs o = {0};
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 64, false, 0), 0);
	CHECK(ipc_client_invoke(e.c, e.svc, "ObserveEvents", observe_args, sizeof observe_args, -1,
	                        false, on_observe, &o) > 0);
	CHECK(wait_started(&e, &p));
	CHECK(tfx_pump(&e, &o.all_started));
	CHECK(ipc_client_invoke(e.c, e.svc, "QueryServiceState", NULL, 0, -1, false, on_state, &o) >
	      0);
	CHECK(tfx_pump(&e, &o.state_done));
	CHECK(o.st != NULL);
	CHECK_EQ(o.st->n_producers, 1);
	CHECK_STR_EQ(o.st->producers[0]->name, "test");
	CHECK_EQ(o.st->n_data_sources, 1);
	CHECK_STR_EQ(o.st->data_sources[0]->ds_descriptor->name, "test.ds");
	CHECK_EQ(o.st->n_tracing_sessions, 1);
	CHECK_STR_EQ(o.st->tracing_sessions[0]->state, "STARTED");
	CHECK_EQ(o.st->tracing_sessions[0]->buffer_size_kb[0], 64);
	CHECK_EQ(o.st->num_sessions_started, 1);
	protobuf_c_message_free_unpacked(&o.st->base, protos_allocator());
	CHECK(tfx_disable(&e));
	prod_close(&p);
	tfx_release(&e);
}

/* incremental_state_config.clear_period_ms: every period the service sends
 * ClearIncrementalState with the instance ids of the producers whose data
 * source registered handles_incremental_state_clear, and only to them; it
 * stops with the session. */
TEST(traced_clear_incremental_state_period)
{
	struct tfx e;
	struct tprod a, b;
	int after_stop;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect_clear(&e, &a, true), 0);
	CHECK_EQ(prod_connect_clear(&e, &b, false), 0);
	e.clear_period_ms = 50;
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 64, false, 0), 0);
	CHECK(wait_started(&e, &a));
	CHECK(wait_started(&e, &b));
	tfx_spin(&e, 40, 10);
	CHECK(a.clears >= 2);
	CHECK_EQ(a.cleared_n, 1);
	CHECK_UEQ(a.cleared_id, a.instance_id);
	CHECK_EQ(b.clears, 0);
	CHECK(tfx_disable(&e));
	after_stop = a.clears;
	tfx_spin(&e, 20, 10);
	CHECK_EQ(a.clears, after_stop);
	prod_close(&a);
	prod_close(&b);
	tfx_release(&e);
}

/* Service packets of a write_into_file session read back from its file:
 * count of packets with top-level field id, and the timestamps of each
 * TracingServiceEvent kind (field numbers) in ev_ts (0: absent, -1: twice). */
static int count_field(struct tfx *e, uint32_t id)
{
	struct pb_field f = {0};
	int n = 0;
	for (size_t i = 0; i < e->packets.len; i++)
		n += pb_find_field(e->packets.data[i], e->lens.data[i], id, &f) == 1;
	return n;
}

static void service_events(struct tfx *e, int64_t ev_ts[16])
{
	struct pb_field f = {0}, ts = {0}, g = {0};
	memset(ev_ts, 0, 16 * sizeof ev_ts[0]);
	for (size_t i = 0; i < e->packets.len; i++) {
		struct pb_reader r;
		if (pb_find_field(e->packets.data[i], e->lens.data[i],
		                  PB_F_TracePacket_service_event, &f) != 1 ||
		    pb_find_field(e->packets.data[i], e->lens.data[i], PB_F_TracePacket_timestamp,
		                  &ts) != 1)
			continue;
		pb_reader_init_field(&r, &f);
		while (pb_next(&r, &g))
			if (g.id < 16)
				ev_ts[g.id] = ev_ts[g.id] ? -1 : (int64_t)ts.val;
	}
}

/* builtin_data_sources.snapshot_interval_ms: each period a streamed trace
 * gets a new clock snapshot (its clocks were read out meanwhile), a sync
 * marker and trace stats; the lifecycle events appear once each with the
 * time they happened. */
TEST(traced_periodic_snapshots)
{
	struct tfx e;
	struct tprod p;
	uint8_t *data = NULL;
	size_t len;
	int rd = -1;
	int64_t ev[16];
	int64_t before, after;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	e.write_into_file = true;
	e.file_write_period_ms = 100;
	e.snapshot_interval_ms = 100;
	e.out_fd = wif_tmpfile(&rd);
	CHECK(e.out_fd >= 0);
	before = tb_boot_ns();
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 64, false, 0), 0);
	CHECK(wait_started(&e, &p));
	tfx_spin(&e, 60, 10);
	CHECK(tfx_disable(&e));
	after = tb_boot_ns();
	len = wif_read_back(rd, &data);
	CHECK(tfx_parse_file(&e, data, len) > 0);
	CHECK(count_field(&e, PB_F_TracePacket_clock_snapshot) >= 4);
	CHECK(count_field(&e, PB_F_TracePacket_synchronization_marker) >= 3);
	CHECK(count_field(&e, PB_F_TracePacket_trace_stats) >= 3);
	CHECK_EQ(count_field(&e, PB_F_TracePacket_trace_config), 1);
	CHECK_EQ(count_field(&e, PB_F_TracePacket_system_info), 1);
	service_events(&e, ev);
	CHECK(ev[2] > 0 && ev[1] > 0 && ev[5] > 0); /* started, all started, disabled: once */
	CHECK(before <= ev[2] && ev[2] <= ev[1] && ev[1] < ev[5] && ev[5] <= after);
	/* the service wrote the sync marker before the stats at the end */
	{
		struct pb_field f = {0};
		CHECK_EQ(pb_find_field(e.packets.data[e.packets.len - 1],
		                       e.lens.data[e.packets.len - 1], PB_F_TracePacket_trace_stats,
		                       &f),
		         1);
	}
	tb_free(data);
	close(rd);
	prod_close(&p);
	tfx_release(&e);
}

/* builtin_data_sources.disable_*: nothing the config turns off is written.
 * (Here only the defaults: one read of a ReadBuffers session carries the
 * snapshot taken at start and the first periodic one, one sync marker,
 * trace stats once.) */
TEST(traced_read_once_service_packets)
{
	struct tfx e;
	struct tprod p;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 64, false, 0), 0);
	CHECK(wait_started(&e, &p));
	prod_write(&p, 1, 10, false);
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	CHECK(tfx_disable(&e));
	CHECK(tfx_read(&e));
	CHECK_EQ(count_field(&e, PB_F_TracePacket_clock_snapshot), 2);
	CHECK_EQ(count_field(&e, PB_F_TracePacket_synchronization_marker), 1);
	CHECK_EQ(count_field(&e, PB_F_TracePacket_trace_stats), 1);
	CHECK_EQ(count_field(&e, PB_F_TracePacket_service_event),
	         3); /* started, all started, disabled */
	prod_close(&p);
	tfx_release(&e);
}

/* Regression: DisableTracing on a session that never started (deferred_start
 * without StartTracing) left it DISABLING for ever, so EnableTracing was
 * never answered. */
TEST(traced_disable_unstarted_session)
{
	struct tfx e;
	CHECK_EQ(tfx_init(&e), 0);
	e.deferred_start = true;
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 64, false, 0), 0);
	tfx_spin(&e, 5, 10);
	CHECK(!e.disabled);
	CHECK(tfx_disable(&e));
	tfx_release(&e);
}

/* Regression: a STOP_TRACING trigger that arrived while a deferred_start
 * session was still CONFIGURED armed no stop delay, and after StartTracing the
 * trigger timeout deferred to the trigger: the session ran for ever. */
TEST(traced_stop_trigger_before_start)
{
	/* ActivateTriggersRequest { trigger_names: "t-early" } */
	static const uint8_t act[] = {0x0a, 0x07, 't', '-', 'e', 'a', 'r', 'l', 'y'};
	struct tfx e;
	struct raw_prod p;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(raw_connect(&e, &p), 0);
	e.deferred_start = true;
	e.stop_trigger = "t-early";
	e.trigger_timeout_ms = 60000;
	e.stop_delay_ms = 100;
	CHECK_EQ(tfx_enable(&e, "none.ds", NULL, 64, false, 0), 0);
	tfx_spin(&e, 5, 10);
	ipc_client_invoke(p.c, p.svc, "ActivateTriggers", act, sizeof act, -1, false, NULL, NULL);
	tfx_spin(&e, 5, 10);
	CHECK(!e.disabled);
	tfx_start(&e);
	CHECK(tfx_pump(&e, &e.disabled)); /* stop_delay_ms after the start */
	raw_close(&p);
	tfx_release(&e);
}

static void drop_packets(struct tfx *e)
{
	for (size_t i = 0; i < e->packets.len; i++)
		tb_free(e->packets.data[i]);
	vec_clear(&e->packets);
	vec_clear(&e->lens);
	vec_clear(&e->partial);
}

/* Regression: FreeBuffers while a multi-step ReadBuffers was in flight left
 * the read's step timer armed; a session enabled right after (same batch)
 * was then read into the old call, whose reply stream the consumer had
 * given up on, and the new session's own ReadBuffers was refused as busy. */
TEST(traced_free_buffers_cancels_read)
{
	struct tfx e;
	struct tprod p;
	uint64_t ts[64];
	int n, svc;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(prod_connect(&e, &p), 0);
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 8192, true, 0), 0);
	CHECK(wait_started(&e, &p));
	/* 3 MiB: a ReadBuffers of several steps (1 MiB each) */
	for (int i = 0; i < 300; i++) {
		prod_write(&p, (uint64_t)i, 10000, false);
		if (i % 10 == 9) {
			CHECK_EQ(tracing_producer_commit(p.p), 0);
			tfx_spin(&e, 3, 5);
		}
	}
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	CHECK(tfx_disable(&e));
	/* ReadBuffers, FreeBuffers and a new EnableTracing in one batch */
	tfx_read_begin(&e);
	ipc_client_invoke(e.c, e.svc, "FreeBuffers", NULL, 0, -1, false, NULL, NULL);
	e.disabled = false;
	p.started = false;
	p.w = NULL; /* a writer for the new session's buffer */
	CHECK_EQ(tfx_enable(&e, "test.ds", NULL, 1024, false, 0), 0);
	CHECK(tfx_pump(&e, &e.read_done));
	CHECK(e.read_failed);
	/* nothing of the second session reached the first read: no trailer
	 * after the cut, and fewer packets than the first session wrote */
	n = tfx_collect(&e, ts, 64, &svc);
	CHECK(n < 300);
	drop_packets(&e);
	/* the second session records and reads normally */
	CHECK(wait_started(&e, &p));
	prod_write(&p, 777, 10, false);
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	CHECK(tfx_disable(&e));
	CHECK(tfx_read(&e));
	CHECK(!e.read_failed);
	n = tfx_collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 1);
	CHECK_UEQ(ts[0], 777);
	prod_close(&p);
	tfx_release(&e);
}

/* Enable a STOP_TRACING session on e's trigger settings, send act (an
 * ActivateTriggersRequest) from p, wait for the session to end and read it:
 * the Trigger packets in the trace, or -1. */
static int trigger_session(struct tfx *e, struct raw_prod *p, const uint8_t *act, size_t n)
{
	int k;
	e->disabled = false;
	if (tfx_enable(e, "none.ds", NULL, 64, false, 0))
		return -1;
	tfx_spin(e, 5, 10);
	ipc_client_invoke(p->c, p->svc, "ActivateTriggers", act, n, -1, false, NULL, NULL);
	if (!tfx_pump(e, &e->disabled) || !tfx_read(e))
		return -1;
	k = count_field(e, PB_F_TracePacket_trigger);
	drop_packets(e);
	return k;
}

/* TriggerConfig.Trigger.max_per_24_h: matched activations of a name are
 * remembered service-wide for 24 h; past the limit the trigger is ignored,
 * in this session and in the next one. */
TEST(traced_trigger_max_per_24h)
{
	/* ActivateTriggersRequest { trigger_names: "t-max" x3 } */
	static const uint8_t act3[] = {0x0a, 5,   't', '-',  'm', 'a', 'x', 0x0a, 5,   't', '-',
	                               'm',  'a', 'x', 0x0a, 5,   't', '-', 'm',  'a', 'x'};
	struct tfx e;
	struct raw_prod p;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(raw_connect(&e, &p), 0);
	e.stop_trigger = "t-max";
	e.trigger_timeout_ms = 60000;
	e.trigger_max_per_24h = 2;
	/* stopped by the first, the third over the limit */
	CHECK_EQ(trigger_session(&e, &p, act3, sizeof act3), 2);
	/* the next session: two in the window already, so it runs to its
	 * trigger timeout and its trace is empty */
	ipc_client_invoke(e.c, e.svc, "FreeBuffers", NULL, 0, -1, false, NULL, NULL);
	e.trigger_timeout_ms = 300;
	CHECK_EQ(trigger_session(&e, &p, act3, 7), 0);
	raw_close(&p);
	tfx_release(&e);
}

/* TriggerConfig.Trigger.skip_probability 1: the trigger never gets through. */
TEST(traced_trigger_skip_probability)
{
	static const uint8_t act[] = {0x0a, 5, 't', '-', 's', 'k', 'p'};
	struct tfx e;
	struct raw_prod p;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(raw_connect(&e, &p), 0);
	e.stop_trigger = "t-skp";
	e.trigger_timeout_ms = 300;
	e.trigger_skip_probability = 1.0;
	CHECK_EQ(trigger_session(&e, &p, act, sizeof act), 0);
	raw_close(&p);
	tfx_release(&e);
}
