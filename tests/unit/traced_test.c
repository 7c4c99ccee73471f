/*
 * Tests for components/traced: the service runs in-process on one loop with
 * abstract sockets named after the test pid; a test producer (ipc client +
 * adopted SMB + tracing writer + commit batch) and a test consumer (ipc
 * client) talk to it over the real ProducerPort / ConsumerPort wire
 * protocol.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ipc.h"
#include "pb.h"
#include "test.h"
#include "traced.h"
#include "tracing.h"

struct env;

struct tprod {
	struct env *env;
	struct ipc_client *c;
	struct ipc_svc *svc;
	bool bound;
	struct tracing_smb *smb;
	struct tracing_writer *w;
	struct tracing_commit_batch batch;
	uint64_t instance_id;
	uint32_t target_buffer;
	bool started, stopped, setup_fd;
	int flushes;
};

struct tcons {
	struct env *env;
	struct ipc_client *c;
	struct ipc_svc *svc;
	bool bound, disabled, read_done;
	VEC(uint8_t) partial;
	VEC(uint8_t *) packets;
	VEC(size_t) lens;
};

struct env {
	struct loop *l;
	struct traced *t;
	char pname[64], cname[64];
	struct tprod p;
	struct tcons c;
};

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	*(bool *)ctx = ok;
}

static bool pump(struct env *e, bool *flag)
{
	for (int i = 0; i < 400 && !*flag; i++)
		loop_run_once(e->l, 10);
	return *flag;
}

static int env_init(struct env *e)
{
	static int n;
	struct traced_opts o;
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

static void prod_close(struct tprod *p)
{
	tracing_writer_free(p->w);
	p->w = NULL;
	tracing_commit_batch_release(&p->batch);
	tracing_smb_free(p->smb);
	p->smb = NULL;
	ipc_client_free(p->c);
	p->c = NULL;
}

static void env_release(struct env *e)
{
	prod_close(&e->p);
	ipc_client_free(e->c.c);
	for (size_t i = 0; i < e->c.packets.len; i++)
		tb_free(e->c.packets.data[i]);
	vec_release(&e->c.packets);
	vec_release(&e->c.lens);
	vec_release(&e->c.partial);
	traced_free(e->t);
	loop_free(e->l);
}

/* ---- test producer -------------------------------------------------------- */

static void ignore_reply(void *ctx, const struct ipc_reply *r) {}

static void prod_commit(struct tprod *p, uint64_t flush_id)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	if (p->w)
		tracing_writer_flush(p->w);
	tracing_commit_batch_encode(&p->batch, flush_id, &buf, &len);
	tracing_commit_batch_clear(&p->batch);
	ipc_client_invoke(p->c, p->svc, "CommitData", buf, len, -1, false, ignore_reply, NULL);
	tb_free(buf);
}

static void on_async(void *ctx, const struct ipc_reply *r)
{
	struct tprod *p = ctx;
	Perfetto__Protos__GetAsyncCommandResponse *cmd;
	if (!r->success)
		return;
	cmd = perfetto__protos__get_async_command_response__unpack(ipc_pb_allocator(), r->len,
								   r->data);
	if (!cmd)
		return;
	switch (cmd->cmd_case) {
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING: {
		int fd = ipc_client_take_fd(p->c);
		p->setup_fd = fd >= 0;
		if (tracing_smb_adopt(fd, cmd->setup_tracing->shared_buffer_page_size_kb * 1024, true,
				      &p->smb, NULL))
			close(fd);
		break;
	}
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE:
		p->instance_id = cmd->start_data_source->new_instance_id;
		p->target_buffer = cmd->start_data_source->config->target_buffer;
		if (p->smb && !p->w)
			p->w = tracing_writer_new(p->smb, 1, p->target_buffer,
						  tracing_commit_batch_add, &p->batch);
		p->started = true;
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_FLUSH:
		p->flushes++;
		prod_commit(p, cmd->flush->request_id);
		break;
	case PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_STOP_DATA_SOURCE:
		p->stopped = true;
		break;
	default:
		break;
	}
	protobuf_c_message_free_unpacked(&cmd->base, ipc_pb_allocator());
}

static int prod_connect(struct env *e)
{
	struct tprod *p = &e->p;
	static const uint8_t init[] = {0x1a, 0x04, 't', 'e', 's', 't'}; /* producer_name */
	static const uint8_t reg[] = {0x0a, 0x09, 0x0a, 0x07, 't', 'e', 's', 't', '.', 'd', 's'};
	p->env = e;
	tracing_commit_batch_init(&p->batch);
	if (!(p->c = ipc_client_new(e->l, e->pname, NULL, NULL, NULL)))
		return -1;
	p->svc = ipc_client_bind(p->c, "ProducerPort", on_bind, &p->bound);
	if (!pump(e, &p->bound))
		return -1;
	ipc_client_invoke(p->c, p->svc, "InitializeConnection", init, sizeof init, -1, false,
			  ignore_reply, NULL);
	ipc_client_invoke(p->c, p->svc, "GetAsyncCommand", NULL, 0, -1, false, on_async, p);
	ipc_client_invoke(p->c, p->svc, "RegisterDataSource", reg, sizeof reg, -1, false,
			  ignore_reply, NULL);
	return 0;
}

/* Packet i: timestamp = i and `size` bytes of payload in field 900. */
static void prod_write(struct tprod *p, uint64_t i, size_t size, bool reserved)
{
	struct pb_writer *w = tracing_writer_begin_packet(p->w);
	uint8_t *buf = tb_malloc(size + 1);
	memset(buf, (int)(i & 0xff), size + 1);
	pb_put_uint64(w, 8, i);
	if (reserved)
		pb_put_int32(w, 3, 1234);
	pb_put_bytes(w, 900, buf, size);
	tracing_writer_end_packet(p->w);
	tb_free(buf);
}

/* ---- test consumer -------------------------------------------------------- */

static void on_enable(void *ctx, const struct ipc_reply *r)
{
	struct tcons *c = ctx;
	c->disabled = true;
}

static void on_read(void *ctx, const struct ipc_reply *r)
{
	struct tcons *c = ctx;
	struct pb_reader rd, sr;
	struct pb_field f, g;
	pb_reader_init(&rd, r->data, r->len);
	while (pb_next(&rd, &f)) {
		bool last = false;
		if (f.id != 2)
			continue;
		pb_reader_init_field(&sr, &f);
		while (pb_next(&sr, &g)) {
			if (g.id == 1)
				for (size_t i = 0; i < g.len; i++)
					vec_push(&c->partial, g.data[i]);
			else if (g.id == 2)
				last = g.val != 0;
		}
		if (last) {
			vec_push(&c->packets, tb_memdup(c->partial.data ? (void *)c->partial.data : "",
						       c->partial.len ? c->partial.len : 1));
			vec_push(&c->lens, c->partial.len);
			vec_clear(&c->partial);
		}
	}
	if (!r->has_more || !r->success)
		c->read_done = true;
}

static int cons_enable(struct env *e, uint32_t size_kb, bool discard, uint32_t duration_ms)
{
	struct tcons *c = &e->c;
	Perfetto__Protos__TraceConfig cfg = PERFETTO__PROTOS__TRACE_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig buf =
		PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__INIT;
	Perfetto__Protos__TraceConfig__BufferConfig *bufs[] = {&buf};
	Perfetto__Protos__TraceConfig__DataSource ds = PERFETTO__PROTOS__TRACE_CONFIG__DATA_SOURCE__INIT;
	Perfetto__Protos__TraceConfig__DataSource *dss[] = {&ds};
	Perfetto__Protos__DataSourceConfig dc = PERFETTO__PROTOS__DATA_SOURCE_CONFIG__INIT;
	Perfetto__Protos__EnableTracingRequest req = PERFETTO__PROTOS__ENABLE_TRACING_REQUEST__INIT;
	uint8_t out[256];
	size_t n;
	c->env = e;
	if (!(c->c = ipc_client_new(e->l, e->cname, NULL, NULL, NULL)))
		return -1;
	c->svc = ipc_client_bind(c->c, "ConsumerPort", on_bind, &c->bound);
	if (!pump(e, &c->bound))
		return -1;
	buf.has_size_kb = true;
	buf.size_kb = size_kb;
	buf.has_fill_policy = true;
	buf.fill_policy = discard ? PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD
				  : PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__RING_BUFFER;
	dc.name = "test.ds";
	ds.config = &dc;
	cfg.n_buffers = 1;
	cfg.buffers = bufs;
	cfg.n_data_sources = 1;
	cfg.data_sources = dss;
	cfg.has_duration_ms = duration_ms != 0;
	cfg.duration_ms = duration_ms;
	req.trace_config = &cfg;
	n = perfetto__protos__enable_tracing_request__pack(&req, out);
	return ipc_client_invoke(c->c, c->svc, "EnableTracing", out, n, -1, false, on_enable, c) > 0
		       ? 0
		       : -1;
}

static bool cons_read(struct env *e)
{
	e->c.read_done = false;
	ipc_client_invoke(e->c.c, e->c.svc, "ReadBuffers", NULL, 0, -1, false, on_read, &e->c);
	return pump(e, &e->c.read_done);
}

/* Producer packets seen (sequence id >= 2, timestamp in ts[]); checks
 * trusted fields. Returns the count, or -1 on a malformed packet. */
static int collect(struct env *e, uint64_t *ts, int max, int *service)
{
	int n = 0;
	*service = 0;
	for (size_t i = 0; i < e->c.packets.len; i++) {
		struct pb_field f;
		uint64_t seq = 0, t = UINT64_MAX;
		bool uid = false;
		if (pb_find_field(e->c.packets.data[i], e->c.lens.data[i], 10, &f) == 1)
			seq = f.val;
		if (pb_find_field(e->c.packets.data[i], e->c.lens.data[i], 3, &f) == 1)
			uid = f.val == (uint64_t)getuid();
		if (pb_find_field(e->c.packets.data[i], e->c.lens.data[i], 8, &f) == 1)
			t = f.val;
		if (!uid || seq == 0)
			return -1;
		if (seq == 1) {
			(*service)++;
		} else if (n < max) {
			ts[n++] = t;
		}
	}
	return n;
}

static bool wait_started(struct env *e)
{
	return pump(e, &e->p.started) && e->p.w;
}

/* ---- tests ---------------------------------------------------------------- */

TEST(traced_roundtrip)
{
	struct env e;
	uint64_t ts[64];
	int n, svc;
	CHECK_EQ(env_init(&e), 0);
	CHECK_EQ(prod_connect(&e), 0);
	CHECK_EQ(cons_enable(&e, 1024, false, 0), 0);
	CHECK(wait_started(&e));
	CHECK(e.p.setup_fd);
	for (int i = 0; i < 20; i++)
		prod_write(&e.p, (uint64_t)i, i % 5 == 4 ? 9000 : 100, false);
	prod_write(&e.p, 99, 10, true); /* reserved field: dropped */
	prod_commit(&e.p, 0);
	ipc_client_invoke(e.c.c, e.c.svc, "DisableTracing", NULL, 0, -1, false, ignore_reply, NULL);
	CHECK(pump(&e, &e.c.disabled));
	CHECK(e.p.stopped);
	CHECK(cons_read(&e));
	n = collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 20);
	for (int i = 0; i < 20; i++)
		CHECK_UEQ(ts[i], (uint64_t)i);
	CHECK(svc >= 5);
	CHECK_UEQ(traced_get_stats(e.t)->invalid_packets, 1);
	/* The large packets came back whole. */
	for (size_t i = 0, k = 0; i < e.c.packets.len; i++) {
		struct pb_field f;
		if (pb_find_field(e.c.packets.data[i], e.c.lens.data[i], 900, &f) == 1) {
			CHECK_EQ(f.len, k % 5 == 4 ? 9000 : 100);
			k++;
		}
	}
	env_release(&e);
}

static int ring_or_discard(bool discard, uint64_t *first, uint64_t *last)
{
	struct env e;
	uint64_t ts[64];
	int n, svc;
	if (env_init(&e) || prod_connect(&e) || cons_enable(&e, 16, discard, 0) ||
	    !wait_started(&e))
		return -1;
	for (int i = 0; i < 40; i++) {
		prod_write(&e.p, (uint64_t)i, 1000, false);
		prod_commit(&e.p, 0);
	}
	ipc_client_invoke(e.c.c, e.c.svc, "DisableTracing", NULL, 0, -1, false, ignore_reply, NULL);
	pump(&e, &e.c.disabled);
	cons_read(&e);
	n = collect(&e, ts, 64, &svc);
	if (n > 0) {
		*first = ts[0];
		*last = ts[n - 1];
	}
	env_release(&e);
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

TEST(traced_hostile_commit)
{
	struct env e;
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
	CHECK_EQ(env_init(&e), 0);
	CHECK_EQ(prod_connect(&e), 0);
	CHECK_EQ(cons_enable(&e, 64, false, 0), 0);
	CHECK(wait_started(&e));
	/* A chunk still being written (page 10), and a page far out of range. */
	CHECK_EQ(tracing_page_partition(e.p.smb, 10, TRACING_LAYOUT_DIV1), 0);
	CHECK_EQ(tracing_chunk_acquire_for_writing(e.p.smb, 10, 0, &h, &ch), 0);
	m1.has_page = m1.has_chunk = m1.has_target_buffer = true;
	m1.page = 10;
	m1.target_buffer = e.p.target_buffer;
	m2 = m1;
	m2.page = 99999;
	req.n_chunks_to_move = 2;
	req.chunks_to_move = mv;
	len = perfetto__protos__commit_data_request__pack(&req, out);
	ipc_client_invoke(e.p.c, e.p.svc, "CommitData", out, len, -1, false, ignore_reply, NULL);
	ipc_client_invoke(e.p.c, e.p.svc, "Sync", NULL, 0, -1, false, ignore_reply, NULL);
	for (int i = 0; i < 50 && traced_get_stats(e.t)->bad_commits < 2; i++)
		loop_run_once(e.l, 10);
	CHECK_UEQ(traced_get_stats(e.t)->bad_commits, 2);
	CHECK_EQ(tracing_chunk_state(e.p.smb, 10, 0), TRACING_CHUNK_BEING_WRITTEN);
	ipc_client_invoke(e.c.c, e.c.svc, "DisableTracing", NULL, 0, -1, false, ignore_reply, NULL);
	CHECK(pump(&e, &e.c.disabled));
	env_release(&e);
}

TEST(traced_producer_disconnect_mid_session)
{
	struct env e;
	uint64_t ts[64];
	int n, svc;
	CHECK_EQ(env_init(&e), 0);
	CHECK_EQ(prod_connect(&e), 0);
	CHECK_EQ(cons_enable(&e, 256, false, 300), 0);
	CHECK(wait_started(&e));
	for (int i = 0; i < 5; i++)
		prod_write(&e.p, (uint64_t)i, 50, false);
	prod_commit(&e.p, 0);
	ipc_client_invoke(e.p.c, e.p.svc, "Sync", NULL, 0, -1, false, ignore_reply, NULL);
	for (int i = 0; i < 10; i++)
		loop_run_once(e.l, 5);
	prod_close(&e.p);
	CHECK(pump(&e, &e.c.disabled)); /* duration_ms ends the session anyway */
	CHECK(cons_read(&e));
	n = collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 5);
	CHECK_EQ(traced_num_sessions(e.t), 1);
	env_release(&e);
}

TEST(traced_duration_flushes_then_stops)
{
	struct env e;
	uint64_t ts[64];
	int n, svc;
	CHECK_EQ(env_init(&e), 0);
	CHECK_EQ(prod_connect(&e), 0);
	CHECK_EQ(cons_enable(&e, 256, false, 100), 0);
	CHECK(wait_started(&e));
	for (int i = 0; i < 3; i++)
		prod_write(&e.p, (uint64_t)i, 50, false);
	/* Not committed: the service's flush makes the producer commit. */
	CHECK(pump(&e, &e.c.disabled));
	CHECK_EQ(e.p.flushes, 1);
	CHECK(e.p.stopped);
	CHECK(cons_read(&e));
	n = collect(&e, ts, 64, &svc);
	CHECK_EQ(n, 3);
	CHECK_UEQ(traced_get_stats(e.t)->flushes_succeeded, 1);
	env_release(&e);
}
