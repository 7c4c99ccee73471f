/*
 * Tests for components/ipc: framing over arbitrary splits and the 128 KiB
 * cap, the exact bytes of a BindService frame, socket-name resolution, a
 * host and a client on one loop over real sockets (bind, invoke, streaming,
 * drop_reply, failures, fd passing both ways, peer credentials, disconnects
 * mid-stream, garbage and stalled peers), and replay of the client frames
 * real Perfetto v58.2 sent (../shared/reference/golden/ipc).
 */
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"
#include "ipc.h"

/* ---- helpers ---------------------------------------------------------------- */

static size_t put_frame(uint8_t *dst, const uint8_t *payload, uint32_t n)
{
	dst[0] = (uint8_t)n;
	dst[1] = (uint8_t)(n >> 8);
	dst[2] = (uint8_t)(n >> 16);
	dst[3] = (uint8_t)(n >> 24);
	if (n)
		memcpy(dst + 4, payload, n);
	return 4 + (size_t)n;
}

/* Runs the loop until *flag becomes true (or ~5 s pass). */
static bool run_until(struct loop *l, const int *flag)
{
	for (int i = 0; i < 500 && !*flag; i++)
		loop_run_once(l, 10);
	return *flag != 0;
}

static void run_for(struct loop *l, int iters)
{
	for (int i = 0; i < iters; i++)
		loop_run_once(l, 1);
}

/* ---- framing ---------------------------------------------------------------- */

TEST(ipc_frame_bind_service_bytes)
{
	static const uint8_t want[] = {0x12, 0x00, 0x00, 0x00, 0x10, 0x01, 0x1a, 0x0e,
	                               0x0a, 0x0c, 0x50, 0x72, 0x6f, 0x64, 0x75, 0x63,
	                               0x65, 0x72, 0x50, 0x6f, 0x72, 0x74};
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__BindService b = PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE__INIT;
	b.service_name = (char *)"ProducerPort";
	f.has_request_id = true;
	f.request_id = 1;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE;
	f.msg_bind_service = &b;
	uint8_t *buf;
	size_t len;
	CHECK_EQ(ipc_frame_encode(&f, &buf, &len), 0);
	CHECK_EQ(len, sizeof want);
	int same = memcmp(buf, want, len) == 0;
	Perfetto__Protos__IPCFrame *d = ipc_frame_decode(buf + 4, len - 4);
	tb_free(buf);
	CHECK(same);
	CHECK(d);
	CHECK_EQ(d->msg_case, PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE);
	int name_ok = strcmp(d->msg_bind_service->service_name, "ProducerPort") == 0;
	ipc_frame_free(d);
	CHECK(name_ok);
}

/* A stream of frames of assorted sizes, fed byte by byte and in random
 * chunks, must come out as the same frames. */
TEST(ipc_rxbuf_arbitrary_splits)
{
	static const uint32_t sizes[] = {0, 1, 5, 300, 4093, 70000, 2, IPC_MAX_PAYLOAD, 17};
	size_t total = 0;
	for (size_t i = 0; i < TB_ARRAY_SIZE(sizes); i++)
		total += 4 + sizes[i];
	uint8_t *stream = tb_malloc(total);
	uint8_t *payload = tb_malloc(IPC_MAX_PAYLOAD);
	size_t off = 0;
	for (size_t i = 0; i < TB_ARRAY_SIZE(sizes); i++) {
		for (uint32_t k = 0; k < sizes[i]; k++)
			payload[k] = (uint8_t)(k * 7 + i);
		off += put_frame(stream + off, payload, sizes[i]);
	}
	srand(1234);
	int bad = 0;
	for (int mode = 0; mode < 4 && !bad; mode++) {
		struct ipc_rxbuf rb;
		ipc_rxbuf_init(&rb);
		size_t pos = 0, got = 0;
		while (pos < total && !bad) {
			size_t chunk = mode == 0   ? 1
			               : mode == 3 ? total
			                           : 1 + (size_t)rand() % (mode == 1 ? 64 : 90000);
			if (chunk > total - pos)
				chunk = total - pos;
			while (chunk > 0 && !bad) {
				size_t k = ipc_rxbuf_write(&rb, stream + pos, chunk);
				pos += k;
				chunk -= k;
				const uint8_t *p;
				size_t n;
				int r;
				while ((r = ipc_rxbuf_next(&rb, &p, &n)) == 1) {
					if (got >= TB_ARRAY_SIZE(sizes) || n != sizes[got])
						bad = 1;
					for (size_t j = 0; !bad && j < n; j++)
						if (p[j] != (uint8_t)(j * 7 + got))
							bad = 2;
					got++;
				}
				if (r < 0)
					bad = 3;
			}
		}
		if (got != TB_ARRAY_SIZE(sizes))
			bad = bad ? bad : 4;
		ipc_rxbuf_release(&rb);
		if (bad)
			fprintf(stderr, "  mode %d: bad=%d after %zu frames\n", mode, bad, got);
	}
	tb_free(stream);
	tb_free(payload);
	CHECK_EQ(bad, 0);
}

TEST(ipc_rxbuf_cap)
{
	struct ipc_rxbuf rb;
	const uint8_t *p;
	size_t n;
	/* Exactly 128 KiB including the prefix is allowed... */
	uint8_t hdr[4] = {0xfc, 0xff, 0x01, 0x00}; /* 0x1fffc = IPC_MAX_PAYLOAD */
	ipc_rxbuf_init(&rb);
	CHECK_EQ(ipc_rxbuf_write(&rb, hdr, 4), 4);
	CHECK_EQ(ipc_rxbuf_next(&rb, &p, &n), 0);
	ipc_rxbuf_release(&rb);
	/* ...one byte more is a protocol error, as is a huge length. */
	hdr[0] = 0xfd;
	ipc_rxbuf_init(&rb);
	ipc_rxbuf_write(&rb, hdr, 4);
	int r1 = ipc_rxbuf_next(&rb, &p, &n);
	ipc_rxbuf_release(&rb);
	CHECK_EQ(r1, -EMSGSIZE);
	uint8_t huge[4] = {0xff, 0xff, 0xff, 0xff};
	ipc_rxbuf_write(&rb, huge, 4);
	int r2 = ipc_rxbuf_next(&rb, &p, &n);
	ipc_rxbuf_release(&rb);
	CHECK_EQ(r2, -EMSGSIZE);
	/* The encoder refuses to produce such frames. */
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__InvokeMethodReply rep =
	    PERFETTO__PROTOS__IPCFRAME__INVOKE_METHOD_REPLY__INIT;
	uint8_t *big = tb_calloc(1, IPC_BUFFER_SIZE);
	rep.has_reply_proto = true;
	rep.reply_proto.data = big;
	rep.reply_proto.len = IPC_BUFFER_SIZE - 8;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY;
	f.msg_invoke_method_reply = &rep;
	uint8_t *out;
	size_t len;
	int r3 = ipc_frame_encode(&f, &out, &len);
	tb_free(big);
	CHECK_EQ(r3, -EMSGSIZE);
	CHECK(out == NULL);
}

TEST(ipc_socket_names)
{
	setenv("PERFETTO_PRODUCER_SOCK_NAME", "@p1,@p2", 1);
	setenv("PERFETTO_CONSUMER_SOCK_NAME", "/x/c.sock", 1);
	CHECK_STR_EQ(ipc_producer_socket_name(), "@p1,@p2");
	CHECK_STR_EQ(ipc_consumer_socket_name(), "/x/c.sock");
	unsetenv("PERFETTO_PRODUCER_SOCK_NAME");
	unsetenv("PERFETTO_CONSUMER_SOCK_NAME");
	bool run = access("/run/perfetto/", X_OK) == 0;
	CHECK_STR_EQ(ipc_producer_socket_name(),
	             run ? "/run/perfetto/traced-producer.sock" : "/tmp/perfetto-producer");
	CHECK_STR_EQ(ipc_consumer_socket_name(),
	             run ? "/run/perfetto/traced-consumer.sock" : "/tmp/perfetto-consumer");
}

/* ---- a test service ---------------------------------------------------------- */

struct tsvc {
	struct ipc_call *held;
	int calls, connects, disconnects;
	uint64_t last_disconnect_id;
	int pipe_rd; /* read end kept by FdOut */
	int big_replies;
	/* Paced: the call, replies left, the most bytes its queue held, and
	 * the drain cues it took. */
	struct ipc_call *paced;
	int paced_left, paced_drains;
	size_t paced_max_queued;
	bool paced_empty_refused;
};

static void m_echo(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	((struct tsvc *)ctx)->calls++;
	ipc_call_reply(call, a, n, false, -1);
}

static void m_stream(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	int count = n ? a[0] : 1;
	((struct tsvc *)ctx)->calls++;
	for (int i = 0; i < count; i++) {
		uint8_t b = (uint8_t)i;
		ipc_call_reply(call, &b, 1, i + 1 < count, -1);
	}
}

static void m_hold(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	struct tsvc *t = ctx;
	(void)a;
	(void)n;
	t->calls++;
	t->held = call;
	ipc_call_reply(call, "first", 5, true, -1);
}

static void m_fail(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	(void)a;
	(void)n;
	((struct tsvc *)ctx)->calls++;
	ipc_call_fail(call);
}

static void m_fd_in(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	(void)a;
	(void)n;
	((struct tsvc *)ctx)->calls++;
	int fd = ipc_call_take_fd(call);
	if (fd < 0) {
		ipc_call_fail(call);
		return;
	}
	int ok = write(fd, "pong", 4) == 4;
	close(fd);
	if (ok)
		ipc_call_reply(call, NULL, 0, false, -1);
	else
		ipc_call_fail(call);
}

static void m_fd_out(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	struct tsvc *t = ctx;
	int p[2];
	(void)a;
	(void)n;
	t->calls++;
	if (pipe2(p, O_CLOEXEC) < 0) {
		ipc_call_fail(call);
		return;
	}
	t->pipe_rd = p[0];
	ipc_call_reply(call, "fd", 2, false, p[1]);
}

static void m_peer(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	const struct ipc_peer *peer = ipc_call_peer(call);
	int64_t v[2] = {peer->uid, peer->pid};
	(void)a;
	(void)n;
	((struct tsvc *)ctx)->calls++;
	ipc_call_reply(call, v, sizeof v, false, -1);
}

/* Replies args[0] times with 100 KB each, streaming, never finishing. */
static void m_big(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	struct tsvc *t = ctx;
	uint8_t *buf = tb_calloc(1, 100000);
	int count = n ? a[0] : 1;
	t->calls++;
	t->held = call;
	for (int i = 0; i < count; i++)
		if (ipc_call_reply(call, buf, 100000, true, -1) == 0)
			t->big_replies++;
	tb_free(buf);
}

/* Paced: args[0] replies of 100 KB, each sent once the one before has gone
 * into the socket (ipc_call_on_drained), the last one final. */
static void paced_next(void *ctx)
{
	struct tsvc *t = ctx;
	uint8_t *buf = tb_calloc(1, 100000);
	t->paced_drains++;
	while (t->paced_left > 0) {
		size_t q;
		buf[0] = (uint8_t)t->paced_left;
		t->paced_left--;
		ipc_call_reply(t->paced, buf, 100000, t->paced_left > 0, -1);
		if (!t->paced_left) {
			t->paced = NULL;
			break;
		}
		q = ipc_call_queued_bytes(t->paced);
		if (q > t->paced_max_queued)
			t->paced_max_queued = q;
		if (ipc_call_on_drained(t->paced, paced_next, t))
			break;
	}
	tb_free(buf);
}

static void m_paced(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	struct tsvc *t = ctx;
	t->calls++;
	t->paced = call;
	t->paced_left = n ? a[0] : 1;
	t->paced_drains = -1; /* paced_next counts this first step too */
	/* Nothing queued yet: no hook, the caller goes on by itself. */
	t->paced_empty_refused = !ipc_call_on_drained(call, paced_next, t);
	paced_next(t);
}

static const struct ipc_method test_methods[] = {
    {"Echo", m_echo}, {"Stream", m_stream}, {"Hold", m_hold},
    {"Fail", m_fail}, {"FdIn", m_fd_in},    {"FdOut", m_fd_out},
    {"Peer", m_peer}, {"Big", m_big},       {"Paced", m_paced},
};
static const struct ipc_service_desc test_service = {"TestService", test_methods,
                                                     TB_ARRAY_SIZE(test_methods)};
static const struct ipc_method other_methods[] = {{"Ping", m_echo}};
static const struct ipc_service_desc other_service = {"OtherService", other_methods, 1};

static void h_connect(void *ctx, const struct ipc_peer *peer)
{
	(void)peer;
	((struct tsvc *)ctx)->connects++;
}

static void h_disconnect(void *ctx, const struct ipc_peer *peer)
{
	struct tsvc *t = ctx;
	t->disconnects++;
	t->last_disconnect_id = peer->client_id;
}

static const struct ipc_host_ops host_ops = {h_connect, h_disconnect};

/* ---- client-side recording ---------------------------------------------------- */

struct trec {
	int bound, bind_failed;
	int replies, finals, failures;
	int has_more_seen;
	uint8_t last[64];
	size_t last_len;
	int got_fd;
	int disconnected;
	bool take_fd;
};

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	struct trec *r = ctx;
	(void)svc;
	if (ok)
		r->bound = 1;
	else
		r->bind_failed = 1;
}

static void on_reply(void *ctx, const struct ipc_reply *rep)
{
	struct trec *r = ctx;
	r->replies++;
	if (rep->has_more)
		r->has_more_seen++;
	else
		r->finals++;
	if (!rep->success)
		r->failures++;
	r->last_len = rep->len < sizeof r->last ? rep->len : sizeof r->last;
	memcpy(r->last, rep->data, r->last_len);
	if (r->take_fd)
		r->got_fd = ipc_client_take_fd(rep->client);
}

static void on_cl_disconnect(void *ctx, struct ipc_client *c)
{
	(void)c;
	((struct trec *)ctx)->disconnected = 1;
}

static const struct ipc_client_ops client_ops = {on_cl_disconnect};

/* A loop, a host with the test services on an abstract socket, and a
 * client bound to TestService. */
struct rig {
	struct loop *loop;
	struct ipc_host *host;
	struct ipc_client *client;
	struct ipc_svc *svc;
	struct tsvc t;
	struct trec bind;
	char name[64];
};

static int rig_up(struct rig *g)
{
	struct tb_err err = {0};
	memset(g, 0, sizeof *g);
	g->t.pipe_rd = -1;
	g->loop = loop_new(&err);
	if (!g->loop)
		return -1;
	g->host = ipc_host_new(g->loop, &host_ops, &g->t);
	if (ipc_host_add_service(g->host, &test_service, &g->t) != 1 ||
	    ipc_host_add_service(g->host, &other_service, &g->t) != 2 ||
	    ipc_host_add_service(g->host, &other_service, &g->t) != -EEXIST)
		return -2;
	snprintf(g->name, sizeof g->name, "@tb-ipc-test-%d", (int)getpid());
	if (ipc_host_listen(g->host, g->name) < 0)
		return -3;
	g->client = ipc_client_new(g->loop, g->name, &client_ops, &g->bind, &err);
	if (!g->client)
		return -4;
	g->svc = ipc_client_bind(g->client, "TestService", on_bind, &g->bind);
	if (!g->svc || !run_until(g->loop, &g->bind.bound))
		return -5;
	return 0;
}

static void rig_down(struct rig *g)
{
	ipc_client_free(g->client);
	ipc_host_free(g->host);
	loop_free(g->loop);
	tb_close(&g->t.pipe_rd);
}

TEST(ipc_bind_and_invoke)
{
	struct rig g;
	struct trec r = {0}, r2 = {0}, rb = {0};
	int rc = rig_up(&g);
	CHECK_EQ(rc, 0);
	CHECK_EQ(ipc_svc_id(g.svc), 1);
	CHECK_EQ(ipc_svc_method_id(g.svc, "Echo"), 1);
	CHECK_EQ(ipc_svc_method_id(g.svc, "Big"), 8);
	CHECK_EQ(ipc_svc_method_id(g.svc, "Nope"), 0);
	CHECK_EQ(g.t.connects, 1);
	int64_t id =
	    ipc_client_invoke(g.client, g.svc, "Echo", "hello", 5, -1, false, on_reply, &r);
	CHECK_EQ(id, 2); /* BindService was request 1 */
	CHECK(run_until(g.loop, &r.finals));
	CHECK_EQ(r.replies, 1);
	CHECK_EQ(r.failures, 0);
	CHECK_EQ(r.last_len, 5);
	CHECK_MEM_EQ(r.last, "hello", 5);
	/* Unknown method: refused client-side, nothing sent. */
	CHECK_EQ(ipc_client_invoke(g.client, g.svc, "Nope", NULL, 0, -1, false, on_reply, &r),
	         -ENOENT);
	/* A failing method. */
	id = ipc_client_invoke(g.client, g.svc, "Fail", NULL, 0, -1, false, on_reply, &r2);
	CHECK_EQ(id, 3);
	CHECK(run_until(g.loop, &r2.finals));
	CHECK_EQ(r2.failures, 1);
	/* Unknown service: success=false, no error frame. */
	struct ipc_svc *bad = ipc_client_bind(g.client, "NoSuchService", on_bind, &rb);
	CHECK(bad);
	CHECK(run_until(g.loop, &rb.bind_failed));
	CHECK_EQ(rb.bound, 0);
	CHECK_EQ(ipc_client_invoke(g.client, bad, "Echo", NULL, 0, -1, false, on_reply, &r),
	         -ENOTCONN);
	/* A second service gets id 2. */
	struct trec ro = {0};
	struct ipc_svc *other = ipc_client_bind(g.client, "OtherService", on_bind, &ro);
	CHECK(run_until(g.loop, &ro.bound));
	CHECK_EQ(ipc_svc_id(other), 2);
	CHECK_EQ(ipc_svc_method_id(other, "Ping"), 1);
	CHECK_EQ(ipc_client_protocol_errors(g.client), 0);
	rig_down(&g);
}

TEST(ipc_streaming_and_drop_reply)
{
	struct rig g;
	struct trec r = {0}, d = {0}, e = {0};
	CHECK_EQ(rig_up(&g), 0);
	uint8_t n = 4;
	CHECK(ipc_client_invoke(g.client, g.svc, "Stream", &n, 1, -1, false, on_reply, &r) > 0);
	CHECK(run_until(g.loop, &r.finals));
	CHECK_EQ(r.replies, 4);
	CHECK_EQ(r.has_more_seen, 3);
	CHECK_EQ(r.last[0], 3);
	/* drop_reply: the handler runs, nothing comes back; a later call's
	 * reply proves the ordering. */
	int calls = g.t.calls;
	CHECK(ipc_client_invoke(g.client, g.svc, "Stream", &n, 1, -1, true, on_reply, &d) > 0);
	CHECK(ipc_client_invoke(g.client, g.svc, "Echo", "x", 1, -1, false, on_reply, &e) > 0);
	CHECK(run_until(g.loop, &e.finals));
	run_for(g.loop, 5);
	CHECK_EQ(g.t.calls, calls + 2);
	CHECK_EQ(d.replies, 0);
	rig_down(&g);
}

/* A streaming reply paced on the send queue's drain: every part arrives, in
 * order, and the queue never holds more than one part; a client gone
 * mid-stream drops the hook (no cue after it, nothing left to free). */
TEST(ipc_reply_paced_on_drain)
{
	struct rig g;
	struct trec r = {0};
	uint8_t n = 40; /* 4 MB: far more than a socket buffer */
	CHECK_EQ(rig_up(&g), 0);
	CHECK(ipc_client_invoke(g.client, g.svc, "Paced", &n, 1, -1, false, on_reply, &r) > 0);
	CHECK(run_until(g.loop, &r.finals));
	CHECK(g.t.paced_empty_refused);
	CHECK_EQ(r.replies, 40);
	CHECK_EQ(r.failures, 0);
	CHECK_EQ(r.last[0], 1); /* the parts count down: the last one came last */
	CHECK(g.t.paced_drains > 0);
	CHECK(g.t.paced_max_queued <= 100000 + 64);
	CHECK(g.t.paced == NULL);
	/* Again, and the client goes away after the first part. */
	struct trec r2 = {0};
	CHECK(ipc_client_invoke(g.client, g.svc, "Paced", &n, 1, -1, false, on_reply, &r2) > 0);
	CHECK(run_until(g.loop, &r2.replies));
	int drains = g.t.paced_drains;
	ipc_client_free(g.client);
	g.client = NULL;
	CHECK(run_until(g.loop, &g.t.disconnects));
	run_for(g.loop, 20);
	CHECK_EQ(g.t.paced_drains, drains);
	CHECK(g.t.paced_left > 0);
	CHECK(!ipc_call_alive(g.t.paced));
	CHECK(!ipc_call_on_drained(g.t.paced, paced_next, &g.t));
	ipc_call_drop(g.t.paced);
	rig_down(&g);
}

TEST(ipc_fd_passing_both_ways)
{
	struct rig g;
	struct trec r = {0}, o = {0};
	int p[2] = {-1, -1};
	char buf[8] = {0};
	CHECK_EQ(rig_up(&g), 0);
	/* Client -> host: the handler writes into our pipe. */
	CHECK_EQ(pipe2(p, O_CLOEXEC), 0);
	CHECK(ipc_client_invoke(g.client, g.svc, "FdIn", NULL, 0, p[1], false, on_reply, &r) > 0);
	CHECK(run_until(g.loop, &r.finals));
	CHECK_EQ(r.failures, 0);
	CHECK_EQ(read(p[0], buf, sizeof buf), 4);
	CHECK_MEM_EQ(buf, "pong", 4);
	close(p[0]);
	/* Without an fd the handler finds none. */
	struct trec r3 = {0};
	CHECK(ipc_client_invoke(g.client, g.svc, "FdIn", NULL, 0, -1, false, on_reply, &r3) > 0);
	CHECK(run_until(g.loop, &r3.finals));
	CHECK_EQ(r3.failures, 1);
	/* Host -> client: we write into the host's pipe. */
	o.take_fd = true;
	o.got_fd = -1;
	CHECK(ipc_client_invoke(g.client, g.svc, "FdOut", NULL, 0, -1, false, on_reply, &o) > 0);
	CHECK(run_until(g.loop, &o.finals));
	CHECK(o.got_fd >= 0);
	CHECK(fcntl(o.got_fd, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ(write(o.got_fd, "ping", 4), 4);
	close(o.got_fd);
	memset(buf, 0, sizeof buf);
	CHECK_EQ(read(g.t.pipe_rd, buf, sizeof buf), 4);
	CHECK_MEM_EQ(buf, "ping", 4);
	rig_down(&g);
}

TEST(ipc_peer_credentials)
{
	struct rig g;
	struct trec r = {0};
	int64_t v[2];
	CHECK_EQ(rig_up(&g), 0);
	CHECK(ipc_client_invoke(g.client, g.svc, "Peer", NULL, 0, -1, false, on_reply, &r) > 0);
	CHECK(run_until(g.loop, &r.finals));
	CHECK_EQ(r.last_len, sizeof v);
	memcpy(v, r.last, sizeof v);
	CHECK_EQ(v[0], getuid());
	CHECK_EQ(v[1], getpid());
	rig_down(&g);
}

TEST(ipc_client_disconnect_mid_stream)
{
	struct rig g;
	struct trec r = {0};
	CHECK_EQ(rig_up(&g), 0);
	CHECK(ipc_client_invoke(g.client, g.svc, "Hold", NULL, 0, -1, false, on_reply, &r) > 0);
	CHECK(run_until(g.loop, &r.replies));
	CHECK_EQ(r.has_more_seen, 1);
	CHECK(g.t.held);
	CHECK(ipc_call_alive(g.t.held));
	ipc_client_free(g.client);
	g.client = NULL;
	CHECK(run_until(g.loop, &g.t.disconnects));
	CHECK_EQ(ipc_host_num_clients(g.host), 0);
	/* The held call is detached: replying is a no-op, finishing frees it. */
	CHECK(!ipc_call_alive(g.t.held));
	CHECK_EQ(ipc_call_reply(g.t.held, "late", 4, true, -1), -ENOTCONN);
	CHECK_EQ(ipc_call_reply(g.t.held, "end", 3, false, -1), -ENOTCONN);
	g.t.held = NULL;
	CHECK_EQ(r.replies, 1); /* no callbacks after ipc_client_free */
	rig_down(&g);
}

TEST(ipc_host_disconnect_fails_pending)
{
	struct rig g;
	struct trec r = {0}, e = {0};
	CHECK_EQ(rig_up(&g), 0);
	CHECK(ipc_client_invoke(g.client, g.svc, "Hold", NULL, 0, -1, false, on_reply, &r) > 0);
	CHECK(run_until(g.loop, &r.replies));
	/* The host goes away: the pending stream fails, then on_disconnect. */
	ipc_call_drop(g.t.held);
	g.t.held = NULL;
	ipc_host_free(g.host);
	g.host = NULL;
	CHECK(run_until(g.loop, &g.bind.disconnected));
	CHECK_EQ(r.finals, 1);
	CHECK_EQ(r.failures, 1);
	CHECK(!ipc_client_connected(g.client));
	CHECK_EQ(ipc_client_invoke(g.client, g.svc, "Echo", "x", 1, -1, false, on_reply, &e),
	         -ENOTCONN);
	rig_down(&g);
}

/* ---- raw peers ------------------------------------------------------------------- */

/* Send one frame on a raw socket. */
static int raw_send(int fd, const Perfetto__Protos__IPCFrame *f)
{
	uint8_t *buf;
	size_t len;
	if (ipc_frame_encode(f, &buf, &len) < 0)
		return -1;
	int r = tb_write_all(fd, buf, len);
	tb_free(buf);
	return r;
}

/* Pump the loop and read the next frame from a raw socket. */
static Perfetto__Protos__IPCFrame *raw_recv(struct loop *l, int fd, struct ipc_rxbuf *rb)
{
	for (int i = 0; i < 500; i++) {
		const uint8_t *p;
		size_t n;
		if (ipc_rxbuf_next(rb, &p, &n) == 1)
			return ipc_frame_decode(p, n);
		loop_run_once(l, 5);
		size_t avail;
		uint8_t *space = ipc_rxbuf_space(rb, &avail);
		ssize_t r = recv(fd, space, avail, MSG_DONTWAIT);
		if (r > 0)
			ipc_rxbuf_commit(rb, (size_t)r);
	}
	return NULL;
}

/* True once the host closed the raw socket. */
static bool raw_closed(struct loop *l, int fd)
{
	for (int i = 0; i < 500; i++) {
		char b[4096];
		loop_run_once(l, 5);
		ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN))
			return true;
	}
	return false;
}

static void invoke_frame(Perfetto__Protos__IPCFrame *f,
                         Perfetto__Protos__IPCFrame__InvokeMethod *im, uint64_t rid, uint32_t sid,
                         uint32_t mid)
{
	Perfetto__Protos__IPCFrame fi = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__InvokeMethod ii =
	    PERFETTO__PROTOS__IPCFRAME__INVOKE_METHOD__INIT;
	*f = fi;
	*im = ii;
	f->has_request_id = true;
	f->request_id = rid;
	f->msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD;
	f->msg_invoke_method = im;
	im->has_service_id = im->has_method_id = true;
	im->service_id = sid;
	im->method_id = mid;
}

TEST(ipc_host_rejects_unknown_ids)
{
	struct tsvc t = {.pipe_rd = -1};
	struct tb_err err = {0};
	struct loop *l = loop_new(&err);
	struct ipc_host *h = ipc_host_new(l, &host_ops, &t);
	struct ipc_rxbuf rb;
	int sv[2];
	ipc_rxbuf_init(&rb);
	CHECK_EQ(ipc_host_add_service(h, &test_service, &t), 1);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	CHECK(ipc_host_adopt_fd(h, sv[0]) > 0);
	static const struct {
		uint32_t sid, mid;
	} cases[] = {{0, 1}, {2, 1}, {1, 0}, {1, TB_ARRAY_SIZE(test_methods) + 1}, {99, 99}};
	int ok = 1;
	for (size_t i = 0; i < TB_ARRAY_SIZE(cases) && ok; i++) {
		Perfetto__Protos__IPCFrame f;
		Perfetto__Protos__IPCFrame__InvokeMethod im;
		invoke_frame(&f, &im, 10 + i, cases[i].sid, cases[i].mid);
		/* Even with drop_reply, as Perfetto does. */
		im.has_drop_reply = im.drop_reply = i == 4;
		raw_send(sv[1], &f);
		Perfetto__Protos__IPCFrame *rep = raw_recv(l, sv[1], &rb);
		ok = rep && rep->request_id == 10 + i &&
		     rep->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY &&
		     rep->msg_invoke_method_reply->has_success &&
		     !rep->msg_invoke_method_reply->success;
		ipc_frame_free(rep);
	}
	CHECK(ok);
	/* A frame with no recognised msg gets RequestError "unknown request". */
	Perfetto__Protos__IPCFrame empty = PERFETTO__PROTOS__IPCFRAME__INIT;
	empty.has_request_id = true;
	empty.request_id = 77;
	raw_send(sv[1], &empty);
	Perfetto__Protos__IPCFrame *rep = raw_recv(l, sv[1], &rb);
	ok = rep && rep->request_id == 77 &&
	     rep->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_REQUEST_ERROR &&
	     strcmp(rep->msg_request_error->error, "unknown request") == 0;
	ipc_frame_free(rep);
	CHECK(ok);
	CHECK_EQ(t.calls, 0);
	CHECK_EQ(ipc_host_num_clients(h), 1);
	close(sv[1]);
	CHECK(run_until(l, &t.disconnects));
	ipc_rxbuf_release(&rb);
	ipc_host_free(h);
	loop_free(l);
}

TEST(ipc_garbage_disconnects_only_that_client)
{
	struct rig g;
	int sv[2], sv2[2];
	CHECK_EQ(rig_up(&g), 0);
	/* Undecodable payload (a truncated varint). */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	CHECK(ipc_host_adopt_fd(g.host, sv[0]) > 0);
	static const uint8_t junk[] = {3, 0, 0, 0, 0x10, 0xff, 0xff};
	CHECK_EQ(tb_write_all(sv[1], junk, sizeof junk), 0);
	CHECK(raw_closed(g.loop, sv[1]));
	close(sv[1]);
	/* Oversized length prefix. */
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv2), 0);
	CHECK(ipc_host_adopt_fd(g.host, sv2[0]) > 0);
	static const uint8_t huge[] = {0, 0, 2, 0, 0x10, 0x01};
	CHECK_EQ(tb_write_all(sv2[1], huge, sizeof huge), 0);
	CHECK(raw_closed(g.loop, sv2[1]));
	close(sv2[1]);
	CHECK_EQ(ipc_host_stats(g.host)->protocol_errors, 2);
	CHECK_EQ(g.t.disconnects, 2);
	/* The well-behaved client is still served. */
	struct trec r = {0};
	CHECK(ipc_client_invoke(g.client, g.svc, "Echo", "ok", 2, -1, false, on_reply, &r) > 0);
	CHECK(run_until(g.loop, &r.finals));
	CHECK_EQ(r.failures, 0);
	CHECK_EQ(ipc_host_num_clients(g.host), 1);
	rig_down(&g);
}

/* A client that never reads: the queue cap or the stall timeout ends it. */
static void stalled_client(int cap, int count, int timeout_ms, int *overflowed, int *replies)
{
	struct tsvc t = {.pipe_rd = -1};
	struct tb_err err = {0};
	struct loop *l = loop_new(&err);
	struct ipc_host *h = ipc_host_new(l, &host_ops, &t);
	int sv[2];
	*overflowed = -1;
	ipc_host_add_service(h, &test_service, &t);
	ipc_host_set_limits(h, (size_t)cap, (uint32_t)timeout_ms);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		goto out;
	ipc_host_adopt_fd(h, sv[0]);
	Perfetto__Protos__IPCFrame f;
	Perfetto__Protos__IPCFrame__InvokeMethod im;
	uint8_t n = (uint8_t)count;
	invoke_frame(&f, &im, 1, 1, 8); /* Big */
	im.has_args_proto = true;
	im.args_proto.data = &n;
	im.args_proto.len = 1;
	raw_send(sv[1], &f);
	run_until(l, &t.disconnects);
	*overflowed = (int)ipc_host_stats(h)->send_overflows;
	*replies = t.big_replies;
	if (t.held)
		ipc_call_drop(t.held);
	close(sv[1]);
out:
	ipc_host_free(h);
	loop_free(l);
}

TEST(ipc_send_queue_cap_and_stall)
{
	int overflowed, replies;
	/* 30 x 100 KB with a 1 MB cap: overflow. */
	stalled_client(1 << 20, 30, 60000, &overflowed, &replies);
	CHECK_EQ(overflowed, 1);
	CHECK(replies < 30);
	/* 8 x 100 KB fits the default cap, but nobody drains: stall. */
	stalled_client(0, 8, 100, &overflowed, &replies);
	CHECK_EQ(overflowed, 1);
	CHECK_EQ(replies, 8);
}

/* ---- golden replay ------------------------------------------------------------------ */

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Loads the frames of one direction ('C' or 'S') of a transcript, framed
 * bytes back to back, into *out; frame count in *nframes. 1 = skip. */
static int load_stream(const char *name, char dir, uint8_t **out, size_t *len, size_t *nframes,
                       int *fd_frames)
{
	const char *shared = test_shared_dir();
	char path[4096];
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	*out = NULL;
	*len = *nframes = 0;
	*fd_frames = 0;
	if (!shared) {
		test_skip("../shared not found");
		return 1;
	}
	snprintf(path, sizeof path, "%s/reference/golden/ipc/%s", shared, name);
	f = fopen(path, "r");
	if (!f) {
		test_skip("cannot open '%s'", path);
		return 1;
	}
	size_t bcap = 0;
	int ret = 0;
	while (getline(&line, &cap, f) > 0) {
		char d[4];
		unsigned idx, fd;
		int pos = 0;
		if (sscanf(line, "%3s %u fd=%u %n", d, &idx, &fd, &pos) != 3 || pos == 0) {
			ret = -1;
			break;
		}
		if (d[0] != dir)
			continue;
		const char *hex = line + pos;
		size_t hl = strcspn(hex, "\r\n");
		if (*len + hl / 2 > bcap) {
			bcap = (*len + hl / 2) * 2;
			*out = tb_realloc(*out, bcap);
		}
		for (size_t i = 0; i + 1 < hl; i += 2)
			(*out)[(*len)++] = (uint8_t)(hexval(hex[i]) << 4 | hexval(hex[i + 1]));
		(*nframes)++;
		*fd_frames += fd > 0;
	}
	free(line);
	fclose(f);
	return ret;
}

static void m_noop(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	(void)ctx;
	(void)a;
	(void)n;
	ipc_call_drop(call);
}

static const struct ipc_method producer_methods[] = {
    {"InitializeConnection", m_noop},
    {"RegisterDataSource", m_noop},
    {"UnregisterDataSource", m_noop},
    {"CommitData", m_noop},
    {"GetAsyncCommand", m_noop},
    {"RegisterTraceWriter", m_noop},
    {"UnregisterTraceWriter", m_noop},
    {"NotifyDataSourceStarted", m_noop},
    {"NotifyDataSourceStopped", m_noop},
    {"ActivateTriggers", m_noop},
    {"Sync", m_noop},
    {"UpdateDataSource", m_noop},
};
static const struct ipc_service_desc producer_port = {"ProducerPort", producer_methods, 12};

TEST(ipc_golden_producer_replay)
{
	uint8_t *cs = NULL, *sc = NULL;
	size_t cs_len, sc_len, cs_n, sc_n;
	int cs_fd, sc_fd;
	int rc = load_stream("wif-producer.frames.hex", 'C', &cs, &cs_len, &cs_n, &cs_fd);
	if (rc == 0)
		rc = load_stream("wif-producer.frames.hex", 'S', &sc, &sc_len, &sc_n, &sc_fd);
	if (rc > 0) {
		tb_free(cs);
		tb_free(sc);
		return;
	}
	CHECK_EQ(rc, 0);
	CHECK(cs_n > 10);
	CHECK_EQ(sc_fd, 1); /* the SMB on setup_tracing */
	/* Every client frame decodes, whatever the chunking. */
	srand(42);
	struct ipc_rxbuf rb;
	ipc_rxbuf_init(&rb);
	size_t pos = 0, frames = 0, invokes = 0, bad = 0;
	while (pos < cs_len) {
		size_t k = 1 + (size_t)rand() % 700;
		if (k > cs_len - pos)
			k = cs_len - pos;
		k = ipc_rxbuf_write(&rb, cs + pos, k);
		pos += k;
		const uint8_t *p;
		size_t n;
		while (ipc_rxbuf_next(&rb, &p, &n) == 1) {
			Perfetto__Protos__IPCFrame *f = ipc_frame_decode(p, n);
			frames++;
			if (!f || !f->has_request_id)
				bad++;
			else if (f->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD)
				invokes++;
			ipc_frame_free(f);
		}
	}
	ipc_rxbuf_release(&rb);
	CHECK_EQ(frames, cs_n);
	CHECK_EQ(bad, 0);
	CHECK_EQ(invokes, cs_n - 1);

	/* Our host's reply to the golden BindService lists the same table. */
	struct tb_err err = {0};
	struct loop *l = loop_new(&err);
	struct ipc_host *h = ipc_host_new(l, NULL, NULL);
	int sv[2];
	ipc_host_add_service(h, &producer_port, NULL);
	CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ipc_host_adopt_fd(h, sv[0]);
	uint32_t first_len = (uint32_t)cs[0] | (uint32_t)cs[1] << 8;
	CHECK_EQ(tb_write_all(sv[1], cs, 4 + first_len), 0);
	ipc_rxbuf_init(&rb);
	Perfetto__Protos__IPCFrame *ours = raw_recv(l, sv[1], &rb);
	uint32_t glen = (uint32_t)sc[0] | (uint32_t)sc[1] << 8;
	Perfetto__Protos__IPCFrame *gold = ipc_frame_decode(sc + 4, glen);
	int same = ours && gold &&
	           ours->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE_REPLY &&
	           gold->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE_REPLY &&
	           ours->request_id == gold->request_id;
	if (same) {
		const Perfetto__Protos__IPCFrame__BindServiceReply *a =
		                                                       ours->msg_bind_service_reply,
		                                                   *b =
		                                                       gold->msg_bind_service_reply;
		same = a->success == b->success && a->service_id == b->service_id &&
		       a->n_methods == b->n_methods && a->n_methods == 12;
		for (size_t i = 0; same && i < a->n_methods; i++)
			same = a->methods[i]->id == b->methods[i]->id &&
			       strcmp(a->methods[i]->name, b->methods[i]->name) == 0;
	}
	ipc_frame_free(ours);
	ipc_frame_free(gold);
	ipc_rxbuf_release(&rb);
	close(sv[1]);
	ipc_host_free(h);
	loop_free(l);
	tb_free(cs);
	tb_free(sc);
	CHECK(same);
}

/* A host out of file descriptors sheds pending connections with its reserve
 * fd (the clients see EOF at once) instead of spinning on a listener that
 * stays readable (issue 21 #6). The host runs in a child that has used up
 * every fd it may open. */
TEST(ipc_accept_out_of_fds)
{
	char name[64];
	int ready[2], status = -1, eofs = 0;
	char c;
	pid_t pid;
	snprintf(name, sizeof name, "@tb-ipc-emfile-%d", (int)getpid());
	CHECK_EQ(pipe(ready), 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct tb_err err = {0};
		struct loop *l = loop_new(&err);
		struct ipc_host *h = l ? ipc_host_new(l, NULL, NULL) : NULL;
		struct rusage ru;
		int64_t end, cpu_ms;
		close(ready[0]);
		if (!h || ipc_host_listen(h, name) != 0)
			_exit(2);
		while (open("/dev/null", O_RDONLY) >= 0)
			;
		if (write(ready[1], "1", 1) != 1)
			_exit(3);
		/* Serve until the five clients were shed and one more second has
		 * passed (a spinning loop burns that second), 20 s at most: the
		 * parent may be slow to connect on a loaded machine. */
		end = tb_mono_ns() + 20000 * 1000000ll;
		for (bool shed = false; tb_mono_ns() < end;) {
			loop_run_once(l, 100);
			if (!shed && ipc_host_stats(h)->clients_rejected >= 5) {
				shed = true;
				end = tb_mono_ns() + 1000 * 1000000ll;
			}
		}
		getrusage(RUSAGE_SELF, &ru);
		cpu_ms = (int64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000 +
		         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000;
		_exit(ipc_host_stats(h)->clients_rejected >= 5 && cpu_ms < 700 ? 0 : 4);
	}
	close(ready[1]);
	CHECK_EQ(read(ready[0], &c, 1), 1);
	close(ready[0]);
	for (int i = 0; i < 5; i++) {
		struct tb_err err = {0};
		int fd = ipc_sock_connect(name, &err);
		struct pollfd p = {.fd = fd, .events = POLLIN};
		CHECK(fd >= 0);
		if (poll(&p, 1, 10000) == 1 && read(fd, &c, 1) == 0)
			eofs++;
		close(fd);
	}
	CHECK_EQ(waitpid(pid, &status, 0), pid);
	CHECK_EQ(eofs, 5);
	CHECK(WIFEXITED(status));
	CHECK_EQ(WEXITSTATUS(status), 0);
}
