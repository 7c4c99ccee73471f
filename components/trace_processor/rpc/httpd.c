/*
 * `trace_processor_shell server http`: the HTTP/1.1 + WebSocket server the
 * Perfetto UI uses as its "native acceleration" (compat §5.4), on one base
 * loop. Keep-alive and pipelined requests are supported (in order, per
 * connection); request bodies need a Content-Length.
 *
 * Nothing a client does blocks the loop or locks others out:
 * - Output is queued per connection and written as the socket drains. A
 *   query's results are made as the client takes them: a /query result
 *   (pulled batch by batch) or a streaming query of the RPC (paused by
 *   rpc.c's flow control) stops once OUT_HIGH_WATER bytes wait unread, so
 *   a client that stops reading costs that much memory and no time; one
 *   that reads nothing for STALL_MS while output waits is dropped.
 * - The RPC stream (WebSocket, /rpc) and the requests that change the
 *   trace (/parse, /notify_eof, /restore_initial_tables) run one at a time:
 *   while one stream query is paused the others wait their turn, while
 *   /status and /query go on.
 * - A request must arrive whole within REQUEST_MS of its first byte
 *   (slowloris), a new connection must send one within REQUEST_MS too.
 *   When all MAX_CONNS slots are taken, a new connection evicts the one
 *   that has been idle longest (nothing in progress), so idle connections
 *   cannot lock anyone out; an idle keep-alive or WebSocket connection is
 *   otherwise kept (the UI and the Python API hold theirs for hours).
 *
 * Endpoints: /  /status  /websocket  /rpc  /parse  /notify_eof
 * /restore_initial_tables  /query  /compute_metric  /trace_summary
 * /enable_metatrace  /disable_and_read_metatrace  /export (501, said in
 * the body); anything else is 404.
 * A request whose Origin is not allowed gets 403, and so does a WebSocket
 * handshake without an allowed Origin; allowed origins get CORS headers.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rpc.h"
#include "pb_fields.h"

#define DEFAULT_PORT "9001"
#define MAX_LISTENERS 8
#define MAX_CONNS 128
#define READ_CHUNK ((size_t)256 << 10)
#define OUT_HIGH_WATER ((size_t)1 << 20)
#define STALL_MS 30000
#define REQUEST_MS 30000
#define TICK_MS 1000
#define LINGER_MS 2000
#define KEEP_BYTES ((size_t)1 << 20) /* buffer memory kept between requests */
#define MAX_ORIGINS 32
#define MAX_ORIGIN_LEN 256

static const char *const default_origins[] = {
    "https://ui.perfetto.dev",
    "http://localhost:10000",
    "http://127.0.0.1:10000",
};

struct conn;

struct httpd {
	struct loop *loop;
	struct tp_rpc *rpc;
	int listeners[MAX_LISTENERS];
	unsigned num_listeners;
	struct conn *conns[MAX_CONNS];
	char origins[MAX_ORIGINS][MAX_ORIGIN_LEN];
	unsigned num_origins;
	bool origin_warned;
	struct conn *stream_owner; /* whose RPC stream query is paused */
	struct tp_idle_clock idle;
};

struct conn {
	struct httpd *h;
	int fd;
	VEC(uint8_t) rx;
	VEC(uint8_t) out;
	size_t out_off;     /* bytes of out already written */
	bool websocket;     /* upgraded */
	bool ws_in_msg;     /* a fragmented message is in progress */
	bool keep_alive;    /* of the request being answered */
	bool closing;       /* close once out is written */
	bool dead;          /* the peer is gone or stuck: drop all output */
	bool rpc_stream;    /* has posted to /rpc */
	bool sent_continue; /* "100 Continue" sent for the request being received */
	bool lingering;     /* our side is shut: discarding input until EOF */
	bool served;        /* has had a whole request */
	bool rpc_post_open; /* a /rpc reply is waiting for its paused stream */
	bool partial;       /* rx ends in an incomplete request or frame */
	uint64_t linger_timer;
	int64_t last_in_ns, last_out_ns, request_start_ns;
	struct tp_result *query; /* a /query being sent, batch by batch */
	struct pb_writer qw;
	char origin[MAX_ORIGIN_LEN]; /* the request's Origin if allowed, else "" */
};

/* ---- output ------------------------------------------------------------------ */

/* Write what is queued without blocking. Returns false when the peer is gone. */
static bool flush_some(struct conn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			c->dead = true;
			return false;
		}
		c->out_off += (size_t)n;
		c->last_out_ns = tb_mono_ns();
	}
	if (c->out_off == c->out.len) {
		if (c->out.cap > KEEP_BYTES)
			vec_release(&c->out);
		vec_clear(&c->out);
		c->out_off = 0;
	}
	return true;
}

/* Is the peer behind by OUT_HIGH_WATER bytes? Then no more is made for it
 * until it reads. */
static bool conn_full(void *ctx)
{
	struct conn *c = ctx;
	return c->dead || c->out.len - c->out_off > OUT_HIGH_WATER;
}

static void out_put(struct conn *c, const void *p, size_t n)
{
	if (c->dead || n == 0)
		return;
	if (c->out.len == 0)
		c->last_out_ns = tb_mono_ns(); /* the stall clock starts with the output */
	vec_reserve(&c->out, n);
	memcpy(c->out.data + c->out.len, p, n);
	c->out.len += n;
	if (c->out.len - c->out_off > OUT_HIGH_WATER)
		flush_some(c);
}

static void out_str(struct conn *c, const char *s)
{
	out_put(c, s, strlen(s));
}

/* Status line and headers. content_length < 0: chunked. */
static void send_headers(struct conn *c, const char *status, const char *const *headers,
                         long content_length)
{
	char line[64];
	out_str(c, "HTTP/1.1 ");
	out_str(c, status);
	out_str(c, "\r\n");
	for (; headers && *headers; headers++) {
		out_str(c, *headers);
		out_str(c, "\r\n");
	}
	if (content_length >= 0) {
		snprintf(line, sizeof line, "Content-Length: %ld\r\n", content_length);
		out_str(c, line);
	} else {
		out_str(c, "Transfer-Encoding: chunked\r\n");
	}
	out_str(c, c->keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n");
	if (c->origin[0]) {
		out_str(c, "Access-Control-Allow-Origin: ");
		out_str(c, c->origin);
		out_str(c, "\r\nVary: Origin\r\n");
	}
	out_str(c, "\r\n");
}

static const char *const proto_headers[] = {"Cache-Control: no-cache",
                                            "Content-Type: application/x-protobuf", NULL};

static void send_response(struct conn *c, const char *status, const char *const *headers,
                          const void *body, size_t n)
{
	send_headers(c, status, headers, (long)n);
	out_put(c, body, n);
	if (!c->keep_alive)
		c->closing = true;
}

static void send_error(struct conn *c, const char *status, const char *body)
{
	static const char *const text[] = {"Content-Type: text/plain", NULL};
	c->keep_alive = false;
	send_response(c, status, text, body, strlen(body));
}

static void send_chunk(void *ctx, const uint8_t *p, size_t n)
{
	struct conn *c = ctx;
	char hdr[24];
	if (!p) { /* a fatal RPC error: end the body, then the connection */
		out_str(c, "0\r\n\r\n");
		c->closing = true;
		return;
	}
	if (n == 0 || c->closing)
		return;
	snprintf(hdr, sizeof hdr, "%zx\r\n", n);
	out_str(c, hdr);
	out_put(c, p, n);
	out_str(c, "\r\n");
}

static void send_pb(struct conn *c, struct pb_writer *w)
{
	send_response(c, "200 OK", proto_headers, pb_writer_data(w), pb_writer_size(w));
}

/* ---- WebSocket ------------------------------------------------------------- */

static void ws_frame(struct conn *c, enum tp_ws_opcode op, const void *p, size_t n)
{
	uint8_t hdr[10];
	out_put(c, hdr, tp_ws_header(hdr, op, n));
	out_put(c, p, n);
}

static void ws_close(struct conn *c, unsigned code)
{
	uint8_t b[2] = {(uint8_t)(code >> 8), (uint8_t)code};
	if (!c->closing)
		ws_frame(c, TP_WS_CLOSE, b, code ? 2 : 0);
	c->closing = true;
}

static void ws_send(void *ctx, const uint8_t *p, size_t n)
{
	struct conn *c = ctx;
	if (!p) {
		ws_close(c, 1011); /* the RPC hit a fatal error (already sent) */
		return;
	}
	if (!c->closing)
		ws_frame(c, TP_WS_BINARY, p, n);
}

/* Handle one frame at the start of rx; returns the bytes it took (0: wait). */
static size_t ws_process(struct conn *c)
{
	struct tp_ws_frame f;
	long rc = tp_ws_decode(c->rx.data, c->rx.len, TP_RPC_MAX_MSG + 64, &f);
	if (rc <= 0) {
		if (rc < 0) {
			log_warn("httpd", "websocket %s: closing",
			         rc == -EMSGSIZE ? "message too big" : "protocol error");
			ws_close(c, rc == -EMSGSIZE ? 1009 : 1002);
		}
		return 0;
	}
	switch (f.opcode) {
	case TP_WS_CONT:
	case TP_WS_TEXT:
	case TP_WS_BINARY:
		if ((f.opcode == TP_WS_CONT) != c->ws_in_msg) {
			ws_close(c, 1002); /* a continuation of nothing, or an unfinished message */
			return 0;
		}
		c->ws_in_msg = !f.fin;
		/* The RPC is a byte stream: fragments feed it as they come. */
		if (tp_rpc_feed(c->h->rpc, f.payload, f.len, ws_send, c) == TP_RPC_PAUSED)
			c->h->stream_owner = c;
		break;
	case TP_WS_PING:
		ws_frame(c, TP_WS_PONG, f.payload, f.len);
		break;
	case TP_WS_CLOSE:
		ws_close(c, f.len >= 2 ? (unsigned)(f.payload[0] << 8 | f.payload[1]) : 0);
		break;
	default: /* pong */
		break;
	}
	return (size_t)rc;
}

static void ws_upgrade(struct conn *c, const struct tp_http_request *req)
{
	size_t vlen = 0, klen = 0;
	const char *ver = tp_http_header(req, "sec-websocket-version", &vlen);
	const char *key = tp_http_header(req, "sec-websocket-key", &klen);
	char accept[29], hdr[64];
	if (!c->origin[0]) {
		send_error(c, "403 Forbidden", "Origin not allowed");
		return;
	}
	if (!ver || !tp_http_token_eq(ver, vlen, "13")) {
		static const char *const h[] = {"Sec-WebSocket-Version: 13", NULL};
		c->keep_alive = false;
		send_response(c, "426 Upgrade Required", h, NULL, 0);
		return;
	}
	if (!key || tp_ws_accept_key(key, klen, accept) < 0) {
		send_error(c, "400 Bad Request", "bad Sec-WebSocket-Key");
		return;
	}
	snprintf(hdr, sizeof hdr, "Sec-WebSocket-Accept: %s", accept);
	const char *const h[] = {"Upgrade: websocket", "Connection: Upgrade", hdr, NULL};
	/* No Content-Length and no Connection header of our own on a 101. */
	out_str(c, "HTTP/1.1 101 Switching Protocols\r\n");
	for (const char *const *p = h; *p; p++) {
		out_str(c, *p);
		out_str(c, "\r\n");
	}
	out_str(c, "Access-Control-Allow-Origin: ");
	out_str(c, c->origin);
	out_str(c, "\r\nVary: Origin\r\n\r\n");
	c->websocket = true;
	c->ws_in_msg = false;
	tp_rpc_reset_stream(c->h->rpc);
	log_info("httpd", "websocket connected (origin %s)", c->origin);
}

/* ---- requests ---------------------------------------------------------------- */

static const char help_page[] =
    "tracebox trace processor: Perfetto UI accelerator (trace_processor_shell server http)\n"
    "\n"
    "Open https://ui.perfetto.dev and answer YES when it offers to use the trace processor\n"
    "running on this machine: the trace loaded here is queried here instead of in the\n"
    "browser. The Perfetto Python API connects too: TraceProcessor(addr='localhost:9001').\n"
    "\n"
    "Endpoints: /status /websocket /rpc /parse /notify_eof /restore_initial_tables /query\n";

static bool origin_allowed(struct httpd *h, const char *o, size_t n)
{
	for (unsigned i = 0; i < h->num_origins; i++)
		if (tp_http_token_eq(o, n, h->origins[i]))
			return true;
	return false;
}

static bool uri_is(const struct tp_http_request *req, const char *path)
{
	size_t n = strlen(path);
	/* A query string does not change the endpoint. */
	return req->uri_len >= n && memcmp(req->uri, path, n) == 0 &&
	       (req->uri_len == n || req->uri[n] == '?');
}

/* The end of a /rpc reply: the last chunk. */
static void end_rpc_post(struct conn *c)
{
	if (!c->closing)
		out_str(c, "0\r\n\r\n");
	if (!c->keep_alive)
		c->closing = true;
}

/* Make the next QueryResults of c's /query, one chunk each, while the peer
 * keeps up; the last one ends the reply. */
static void produce_query(struct conn *c)
{
	while (c->query && !conn_full(c)) {
		pb_writer_reset(&c->qw);
		bool more = tp_result_next(c->query, &c->qw);
		send_chunk(c, pb_writer_data(&c->qw), pb_writer_size(&c->qw));
		if (!more) {
			tp_result_free(c->query);
			c->query = NULL;
			out_str(c, "0\r\n\r\n");
			if (!c->keep_alive)
				c->closing = true;
		}
	}
}

/* Does the request need the RPC stream to itself (it changes the trace or
 * feeds the stream)? Such requests wait while a stream query is paused. */
static bool needs_stream(const struct tp_http_request *req)
{
	return uri_is(req, "/rpc") || uri_is(req, "/parse") || uri_is(req, "/notify_eof") ||
	       uri_is(req, "/restore_initial_tables") || uri_is(req, "/websocket");
}

static void handle_rest(struct conn *c, const struct tp_http_request *req)
{
	struct tp_rpc *rpc = c->h->rpc;
	struct pb_writer w;
	pb_writer_init_growable(&w);
	if (uri_is(req, "/status")) {
		tp_rpc_status(rpc, &w);
		send_pb(c, &w);
	} else if (uri_is(req, "/rpc")) {
		if (!c->rpc_stream) { /* a new client of the stream */
			c->rpc_stream = true;
			tp_rpc_reset_stream(rpc);
		}
		send_headers(c, "200 OK", proto_headers, -1);
		if (tp_rpc_feed(rpc, req->body, req->body_len, send_chunk, c) == TP_RPC_PAUSED) {
			c->h->stream_owner = c;
			c->rpc_post_open = true; /* ends once the stream is through */
		} else {
			end_rpc_post(c);
		}
	} else if (uri_is(req, "/parse")) {
		tp_rpc_parse(rpc, req->body, req->body_len, &w);
		send_pb(c, &w);
	} else if (uri_is(req, "/notify_eof")) {
		tp_rpc_notify_eof(rpc);
		send_pb(c, &w);
	} else if (uri_is(req, "/restore_initial_tables")) {
		tp_rpc_restore_initial_tables(rpc);
		send_pb(c, &w);
	} else if (uri_is(req, "/query")) {
		send_headers(c, "200 OK", proto_headers, -1);
		c->query = tp_rpc_query_start(rpc, req->body, req->body_len);
		produce_query(c);
	} else if (uri_is(req, "/compute_metric")) {
		pb_put_string(&w, PB_F_ComputeMetricResult_error,
		              "tracebox's trace processor has no metrics engine (v1 metrics); "
		              "query the tables with SQL");
		send_pb(c, &w);
	} else if (uri_is(req, "/trace_summary")) {
		pb_put_string(&w, PB_F_TraceSummaryResult_error,
		              "tracebox's trace processor does not compute trace summaries");
		send_pb(c, &w);
	} else if (uri_is(req, "/export")) {
		/* The Python API's export() (ExportArgs: PERFETTO or ARROW_TAR
		 * archives) copies whatever comes back into its file: say why
		 * in it, and on our side, rather than leave it empty. */
		static const char msg[] =
		    "tracebox's trace processor cannot export Perfetto or Arrow archives "
		    "(trace_processor_shell export sqlite writes a SQLite file)\n";
		static const char *const text[] = {"Content-Type: text/plain", NULL};
		log_warn("httpd", "/export: %.*s", (int)sizeof msg - 2, msg);
		send_response(c, "501 Not Implemented", text, msg, sizeof msg - 1);
	} else if (uri_is(req, "/enable_metatrace")) {
		send_pb(c, &w);
	} else if (uri_is(req, "/disable_and_read_metatrace")) {
		pb_put_string(&w, PB_F_DisableAndReadMetatraceResult_error,
		              "tracebox's trace processor does not record metatraces");
		send_pb(c, &w);
	} else {
		c->keep_alive = false;
		send_response(c, "404 Not Found", proto_headers, NULL, 0);
	}
	pb_writer_release(&w);
}

static void handle_request(struct conn *c, const struct tp_http_request *req)
{
	struct httpd *h = c->h;
	size_t olen = 0;
	const char *origin = tp_http_header(req, "origin", &olen);
	c->keep_alive = req->keep_alive;
	c->origin[0] = '\0';
	log_debug("httpd", "%.*s %.*s [body=%zuB, origin=\"%.*s\"]", (int)req->method_len,
	          req->method, (int)req->uri_len, req->uri, req->body_len, origin ? (int)olen : 0,
	          origin ? origin : "");
	if (origin && olen < MAX_ORIGIN_LEN && origin_allowed(h, origin, olen)) {
		memcpy(c->origin, origin, olen);
		c->origin[olen] = '\0';
	} else if (origin && olen && !h->origin_warned) {
		h->origin_warned = true;
		log_warn("httpd", "origin \"%.*s\" is not allowed (see --additional-cors-origins)",
		         (int)(olen > 200 ? 200 : olen), origin);
	}
	if (tp_http_token_eq(req->method, req->method_len, "OPTIONS")) {
		static const char *const cors[] = {
		    "Access-Control-Allow-Methods: POST, GET, OPTIONS",
		    "Access-Control-Allow-Headers: *", "Access-Control-Max-Age: 86400",
		    "Access-Control-Allow-Private-Network: true", NULL};
		c->keep_alive = false;
		send_response(c, "204 No Content", cors, NULL, 0);
		return;
	}
	if (origin && !c->origin[0]) {
		send_error(c, "403 Forbidden", "Origin not allowed");
		return;
	}
	if (uri_is(req, "/")) {
		static const char *const text[] = {"Content-Type: text/plain", NULL};
		send_response(c, "200 OK", text, help_page, sizeof help_page - 1);
	} else if (uri_is(req, "/websocket") && req->upgrade) {
		ws_upgrade(c, req);
	} else {
		handle_rest(c, req);
	}
}

/* Handle what rx holds: requests, or frames once upgraded. A request waits
 * while the connection's /query is being sent, or while the RPC stream is
 * paused if it needs the stream. */
static void process(struct conn *c)
{
	size_t off = 0;
	c->partial = false;
	while (!c->closing && !c->dead && off < c->rx.len && !c->query) {
		size_t used;
		if (c->h->stream_owner && (c->websocket || c->h->stream_owner == c))
			break;
		if (c->websocket) {
			/* ws_process decodes at rx start: keep the frame there. */
			if (off) {
				memmove(c->rx.data, c->rx.data + off, c->rx.len - off);
				c->rx.len -= off;
				off = 0;
			}
			if (!(used = ws_process(c))) {
				c->partial = true;
				break;
			}
			c->served = true;
			tp_idle_activity(&c->h->idle);
		} else {
			struct tp_http_request req;
			const char *status;
			int rc =
			    tp_http_parse_request(c->rx.data + off, c->rx.len - off, &req, &status);
			if (rc == 0) {
				/* curl waits a second for this before sending a body. */
				if (req.expect_continue && !c->sent_continue) {
					out_str(c, "HTTP/1.1 100 Continue\r\n\r\n");
					c->sent_continue = true;
				}
				c->partial = true;
				break;
			}
			if (rc < 0) {
				send_error(c, status, status);
				break;
			}
			if (c->h->stream_owner && needs_stream(&req))
				break; /* its turn comes when the stream is through */
			c->sent_continue = false;
			c->served = true;
			tp_idle_activity(&c->h->idle);
			handle_request(c, &req);
			used = req.size;
		}
		off += used;
		c->request_start_ns = tb_mono_ns(); /* the next one starts now */
	}
	if (off) { /* (never a no-op memmove of a big frame per read) */
		memmove(c->rx.data, c->rx.data + off, c->rx.len - off);
		c->rx.len -= off;
	}
	if (c->rx.len == 0 && c->rx.cap > KEEP_BYTES)
		vec_release(&c->rx); /* after a big upload, give the memory back */
}

/* ---- connections and listeners ---------------------------------------------- */

static void update_events(struct conn *c)
{
	loop_mod_fd(c->h->loop, c->fd, (c->closing ? 0 : LOOP_IN) | (c->out.len ? LOOP_OUT : 0));
}

/* The stream is free again: run what waited for it, connection by
 * connection, until one pauses it again. */
static void process_all(struct loop *l, void *ctx)
{
	struct httpd *h = ctx;
	(void)l;
	for (unsigned i = 0; i < MAX_CONNS && !h->stream_owner; i++) {
		struct conn *c = h->conns[i];
		if (!c || c->lingering || c->dead || !c->rx.len)
			continue;
		process(c);
		if (!c->dead)
			flush_some(c);
		if (!c->dead)
			update_events(c);
	}
}

/* The paused stream query of the owner c may go on: its peer read enough. */
static void resume_stream(struct conn *c)
{
	struct httpd *h = c->h;
	if (h->stream_owner != c || conn_full(c))
		return;
	/* Not the owner while its queued messages run: a RESET among them
	 * (on_rpc_reset) must not take c for the owner of a query of the
	 * old trace processor; it owns the stream again if one pauses. */
	h->stream_owner = NULL;
	int rc = tp_rpc_resume(h->rpc, c->websocket ? ws_send : send_chunk, c);
	if (rc == TP_RPC_PAUSED) {
		h->stream_owner = c;
		return;
	}
	if (c->rpc_post_open) {
		c->rpc_post_open = false;
		end_rpc_post(c);
	}
	loop_post(h->loop, process_all, h);
}

static void conn_free(struct conn *c)
{
	struct httpd *h = c->h;
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (h->conns[i] == c)
			h->conns[i] = NULL;
	if (h->stream_owner == c) {
		tp_rpc_abort(h->rpc); /* its client is gone: so is the rest of its query */
		h->stream_owner = NULL;
		loop_post(h->loop, process_all, h);
	}
	tp_result_free(c->query);
	pb_writer_release(&c->qw);
	if (c->linger_timer)
		loop_cancel_timer(h->loop, c->linger_timer);
	loop_del_fd(h->loop, c->fd);
	close(c->fd);
	vec_release(&c->rx);
	vec_release(&c->out);
	tb_free(c);
}

static void on_linger_timeout(struct loop *l, uint64_t id, void *ctx)
{
	struct conn *c = ctx;
	(void)l;
	(void)id;
	c->linger_timer = 0;
	conn_free(c);
}

/* Our reply is out: shut our side, and read (and drop) what the peer still
 * sends until it closes, so that closing with unread input does not reset
 * the connection under the reply's last bytes. Bounded by LINGER_MS. */
static void conn_linger(struct loop *l, struct conn *c)
{
	shutdown(c->fd, SHUT_WR);
	c->lingering = true;
	vec_release(&c->rx);
	c->linger_timer = loop_add_timer(l, LINGER_MS, 0, on_linger_timeout, c);
	if (!c->linger_timer || loop_mod_fd(l, c->fd, LOOP_IN) < 0)
		conn_free(c);
}

static void on_conn(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct conn *c = ctx;
	bool eof = false;
	(void)fd;
	if (c->lingering) {
		char buf[4096];
		ssize_t n;
		while ((n = recv(c->fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
			;
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			conn_free(c);
		return;
	}
	if (events & LOOP_OUT) {
		flush_some(c);
		produce_query(c);
		resume_stream(c);
		if (!c->query && c->h->stream_owner != c && c->rx.len && !c->partial)
			process(c); /* a pipelined request that waited for this one */
	}
	if (events & (LOOP_IN | LOOP_HUP | LOOP_ERR)) {
		/* Read what is there, but no more than a whole request can be. */
		size_t cap = TP_HTTP_MAX_HEADER_BYTES + TP_RPC_MAX_MSG + 64;
		while (!c->dead && c->rx.len < cap) {
			size_t want = cap - c->rx.len < READ_CHUNK ? cap - c->rx.len : READ_CHUNK;
			vec_reserve(&c->rx, want);
			ssize_t n = recv(c->fd, c->rx.data + c->rx.len, want, MSG_DONTWAIT);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (n <= 0) {
				eof = true;
				break;
			}
			if (c->rx.len == 0)
				c->request_start_ns = tb_mono_ns();
			c->rx.len += (size_t)n;
			c->last_in_ns = tb_mono_ns();
			if ((size_t)n < want)
				break;
		}
		process(c);
	}
	if (!c->dead)
		flush_some(c);
	if (c->dead || (eof && !c->out.len)) {
		conn_free(c);
		return;
	}
	if (c->closing && !c->out.len) {
		conn_linger(l, c);
		return;
	}
	if (eof)
		c->closing = true; /* write what is left, then close */
	update_events(c);
}

/* All slots are taken: close the connection idle longest among those with
 * nothing in progress (no output waiting, no query, no whole request
 * waiting its turn) and return its slot, or MAX_CONNS if every one is busy. */
static unsigned evict(struct httpd *h)
{
	unsigned victim = MAX_CONNS;
	int64_t oldest = INT64_MAX;
	for (unsigned i = 0; i < MAX_CONNS; i++) {
		struct conn *c = h->conns[i];
		if (!c || c->query || c->out.len || h->stream_owner == c ||
		    (c->rx.len && !c->partial))
			continue;
		int64_t t = c->last_in_ns > c->last_out_ns ? c->last_in_ns : c->last_out_ns;
		if (t < oldest)
			oldest = t, victim = i;
	}
	if (victim < MAX_CONNS)
		conn_free(h->conns[victim]);
	return victim;
}

/* Once a second: drop peers that stopped reading while output waits,
 * requests that do not arrive whole in time, connections that never send
 * one; and the --idle-timeout. */
static void on_tick(struct loop *l, uint64_t id, void *ctx)
{
	struct httpd *h = ctx;
	int64_t now = tb_mono_ns();
	(void)id;
	for (unsigned i = 0; i < MAX_CONNS; i++) {
		struct conn *c = h->conns[i];
		if (!c || c->lingering)
			continue;
		const char *why = NULL;
		if (c->dead)
			why = "";
		else if (c->out.len && now - c->last_out_ns > (int64_t)STALL_MS * 1000000)
			why = "read nothing";
		else if (c->partial && now - c->request_start_ns > (int64_t)REQUEST_MS * 1000000)
			why = "sent no whole request";
		else if (!c->served && !c->rx.len &&
		         now - c->last_in_ns > (int64_t)REQUEST_MS * 1000000)
			why = "sent nothing";
		if (!why)
			continue;
		if (*why)
			log_warn("httpd", "a client %s in time: closing it", why);
		conn_free(c);
	}
	if (!h->stream_owner && tp_idle_expired(&h->idle)) {
		log_info("httpd", "no request for %u ms: stopping", h->idle.cfg.timeout_ms);
		loop_quit(l, 0);
	}
}

/* The RPC is about to replace its trace processor: the /query results
 * being sent refer to the old one. Their replies cannot be finished. */
static void on_rpc_reset(void *ctx)
{
	struct httpd *h = ctx;
	for (unsigned i = 0; i < MAX_CONNS; i++) {
		struct conn *c = h->conns[i];
		if (c && c->query) {
			tp_result_free(c->query);
			c->query = NULL;
			c->dead = true; /* freed by its next event or the tick */
		}
	}
	if (h->stream_owner) {
		h->stream_owner->dead = true;
		h->stream_owner = NULL;
	}
}

static void on_accept(struct loop *l, int lfd, uint32_t events, void *ctx)
{
	struct httpd *h = ctx;
	(void)events;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		unsigned slot = MAX_CONNS;
		for (unsigned i = 0; i < MAX_CONNS && slot == MAX_CONNS; i++)
			if (!h->conns[i])
				slot = i;
		if (slot == MAX_CONNS && (slot = evict(h)) < MAX_CONNS)
			log_warn("httpd", "%d connections: closing the one idle longest",
			         MAX_CONNS);
		if (slot == MAX_CONNS) {
			log_warn("httpd", "too many busy connections: refusing one");
			close(fd);
			continue;
		}
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		struct conn *c = tb_calloc(1, sizeof *c);
		c->h = h;
		c->fd = fd;
		c->last_in_ns = c->last_out_ns = c->request_start_ns = tb_mono_ns();
		pb_writer_init_growable(&c->qw);
		if (loop_add_fd(l, fd, LOOP_IN, on_conn, c) < 0) {
			close(fd);
			tb_free(c);
			continue;
		}
		h->conns[slot] = c;
		log_debug("httpd", "new connection");
	}
}

/* Listen on addr; returns 0 or -errno with a message in err. */
static int listen_addr(struct httpd *h, const struct sockaddr *sa, socklen_t len, const char *name,
                       struct tb_err *err)
{
	int one = 1, fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return tb_err_errno(err, -errno, "cannot create a socket for %s", name);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (sa->sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, sa, len) < 0 || listen(fd, SOMAXCONN) < 0) {
		int e = -errno;
		close(fd);
		return tb_err_errno(err, e, "cannot listen on %s", name);
	}
	if (h->num_listeners == MAX_LISTENERS ||
	    loop_add_fd(h->loop, fd, LOOP_IN, on_accept, h) < 0) {
		close(fd);
		return tb_err_set(err, -ENOSPC, "cannot listen on %s: too many addresses", name);
	}
	h->listeners[h->num_listeners++] = fd;
	log_info("httpd", "[HTTP] Starting HTTP server on %s", name);
	return 0;
}

/* Resolve ip (numeric or a name) and listen on each address it has. */
static int listen_host(struct httpd *h, const char *ip, const char *port, bool optional,
                       struct tb_err *err)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
	                         .ai_socktype = SOCK_STREAM,
	                         .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
	                *res = NULL;
	int rc = getaddrinfo(ip, port, &hints, &res);
	if (rc != 0)
		return optional ? 0
		                : tb_err_set(err, -EINVAL, "cannot resolve '%s': %s", ip,
		                             gai_strerror(rc));
	for (struct addrinfo *a = res; a && rc == 0; a = a->ai_next) {
		char name[300];
		snprintf(name, sizeof name, a->ai_family == AF_INET6 ? "[%s]:%s" : "%s:%s", ip,
		         port);
		struct tb_err e = {0};
		rc = listen_addr(h, a->ai_addr, a->ai_addrlen, name, &e);
		/* ::1 on a machine without IPv6 is no reason to fail. */
		if (rc < 0 && optional && rc != -EADDRINUSE)
			rc = 0;
		else if (rc < 0)
			*err = e;
	}
	freeaddrinfo(res);
	return rc;
}

static int parse_port(const char *s, struct tb_err *err)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (!*s || *end || v < 1 || v > 65535)
		return tb_err_set(err, -EINVAL, "invalid port '%s'", s);
	return 0;
}

static int add_origins(struct httpd *h, const char *list, struct tb_err *err)
{
	while (list && *list) {
		const char *comma = strchr(list, ',');
		size_t n = comma ? (size_t)(comma - list) : strlen(list);
		while (n && (*list == ' '))
			list++, n--;
		while (n && list[n - 1] == ' ')
			n--;
		if (n) {
			if (n >= MAX_ORIGIN_LEN || h->num_origins == MAX_ORIGINS)
				return tb_err_set(err, -EINVAL,
				                  "too many or too long CORS origins");
			memcpy(h->origins[h->num_origins], list, n);
			h->origins[h->num_origins++][n] = '\0';
		}
		list = comma ? comma + 1 : NULL;
	}
	return 0;
}

static void on_signal(struct loop *l, int signo, void *ctx)
{
	(void)ctx;
	log_info("httpd", "%s: stopping", signo == SIGINT ? "SIGINT" : "SIGTERM");
	loop_quit(l, 0);
}

int tp_httpd_run(struct tp_rpc *rpc, const struct tp_httpd_opts *o)
{
	struct httpd h = {.rpc = rpc};
	struct tb_err err = {0};
	const char *port = o->port ? o->port : DEFAULT_PORT;
	int status = 1;
	for (size_t i = 0; i < TB_ARRAY_SIZE(default_origins); i++)
		snprintf(h.origins[h.num_origins++], MAX_ORIGIN_LEN, "%s", default_origins[i]);
	if (parse_port(port, &err) < 0 || add_origins(&h, o->additional_cors_origins, &err) < 0)
		goto out;
	if (!(h.loop = loop_new(&err)))
		goto out;
	if (!o->ip || !*o->ip || strcmp(o->ip, "localhost") == 0) {
		/* Both loopbacks, as Perfetto's: browsers may resolve localhost to ::1. */
		if (listen_host(&h, "127.0.0.1", port, false, &err) < 0 ||
		    listen_host(&h, "::1", port, true, &err) < 0)
			goto out;
	} else if (listen_host(&h, o->ip, port, false, &err) < 0) {
		goto out;
	}
	/* A shell starts background jobs with SIGINT ignored, and an ignored
	 * signal never reaches the loop's signalfd: take both back. */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	loop_add_signal(h.loop, SIGINT, on_signal, NULL);
	loop_add_signal(h.loop, SIGTERM, on_signal, NULL);
	tp_idle_init(&h.idle, &o->idle);
	tp_rpc_set_flow(rpc, conn_full);
	tp_rpc_set_reset_hook(rpc, on_rpc_reset, &h);
	if (!loop_add_timer(h.loop, TICK_MS, TICK_MS, on_tick, &h)) {
		tb_err_set(&err, -ENOMEM, "cannot start the server's timer");
		goto out;
	}
	log_info("httpd",
	         "[HTTP] This server can be used by reloading https://ui.perfetto.dev and "
	         "clicking on YES on the \"Trace Processor native acceleration\" dialog, or "
	         "through the Python API");
	status = loop_run(h.loop) < 0 ? 1 : 0;
out:
	if (tb_err_is_set(&err))
		fprintf(stderr, "trace_processor_shell: %s\n", err.msg);
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (h.conns[i])
			conn_free(h.conns[i]);
	tp_rpc_set_flow(rpc, NULL);
	tp_rpc_set_reset_hook(rpc, NULL, NULL);
	for (unsigned i = 0; i < h.num_listeners; i++) {
		loop_del_fd(h.loop, h.listeners[i]);
		close(h.listeners[i]);
	}
	if (h.loop)
		loop_free(h.loop);
	return status;
}
