/*
 * Tests of the RPC server's pure parts (components/trace_processor/rpc/):
 * the WebSocket frame codec and handshake key, the HTTP request parser, the
 * QueryResult / CellsBatch encoder and the RPC stream (framing, seq). The
 * sockets are tested by tests/cli/t1100-tp-server.sh.
 */
#include <errno.h>
#include <string.h>

#include "rpc/rpc.h"
#include "test.h"
#include "pb_fields.h"

/* ---- WebSocket -------------------------------------------------------------- */

TEST(tp_rpc_ws_decode_rfc_example)
{
	/* RFC 6455 §5.7: a masked text frame "Hello". */
	const uint8_t frame[] = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
	uint8_t buf[sizeof frame];
	struct tp_ws_frame f;
	for (size_t n = 0; n < sizeof frame; n++) {
		memcpy(buf, frame, sizeof frame);
		CHECK_EQ(tp_ws_decode(buf, n, 1024, &f), 0); /* every prefix: wait */
	}
	memcpy(buf, frame, sizeof frame);
	CHECK_EQ(tp_ws_decode(buf, sizeof frame, 1024, &f), (long)sizeof frame);
	CHECK(f.fin);
	CHECK_EQ(f.opcode, TP_WS_TEXT);
	CHECK_EQ(f.len, 5);
	CHECK_MEM_EQ(f.payload, "Hello", 5);
}

/* A masked client frame of n payload bytes (mask 01 02 03 04) into out. */
static size_t client_frame(uint8_t *out, uint8_t h0, const uint8_t *p, size_t n)
{
	size_t off = 0;
	out[off++] = h0;
	if (n < 126) {
		out[off++] = (uint8_t)(0x80 | n);
	} else if (n <= 0xffff) {
		out[off++] = 0x80 | 126;
		out[off++] = (uint8_t)(n >> 8);
		out[off++] = (uint8_t)n;
	} else {
		out[off++] = 0x80 | 127;
		for (int i = 7; i >= 0; i--)
			out[off++] = (uint8_t)((uint64_t)n >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		out[off++] = (uint8_t)(i + 1);
	for (size_t i = 0; i < n; i++)
		out[off++] = p[i] ^ (uint8_t)((i & 3) + 1);
	return off;
}

TEST(tp_rpc_ws_decode_lengths)
{
	static uint8_t payload[70000], buf[70016];
	struct tp_ws_frame f;
	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (uint8_t)(i * 7);
	static const size_t sizes[] = {0, 125, 126, 65535, 65536, 70000};
	for (size_t k = 0; k < TB_ARRAY_SIZE(sizes); k++) {
		size_t n = client_frame(buf, 0x82, payload, sizes[k]);
		CHECK_EQ(tp_ws_decode(buf, n, sizeof payload, &f), (long)n);
		CHECK_EQ(f.opcode, TP_WS_BINARY);
		CHECK_EQ(f.len, sizes[k]);
		CHECK(sizes[k] == 0 || memcmp(f.payload, payload, sizes[k]) == 0);
		CHECK_EQ(tp_ws_decode(buf, n - 1, sizeof payload, &f), 0);
	}
	/* Over the limit: refused from the header alone. */
	size_t n = client_frame(buf, 0x82, payload, 70000);
	CHECK_EQ(tp_ws_decode(buf, 12, 69999, &f), -EMSGSIZE);
	(void)n;
}

TEST(tp_rpc_ws_decode_protocol_errors)
{
	uint8_t buf[64];
	struct tp_ws_frame f;
	const uint8_t p[4] = {1, 2, 3, 4};
	/* Unmasked. */
	buf[0] = 0x82, buf[1] = 0x01, buf[2] = 0;
	CHECK_EQ(tp_ws_decode(buf, 3, 64, &f), -EPROTO);
	/* RSV1 set, unknown opcode, fragmented ping, long close. */
	client_frame(buf, 0xc2, p, 4);
	CHECK_EQ(tp_ws_decode(buf, 10, 64, &f), -EPROTO);
	client_frame(buf, 0x83, p, 4);
	CHECK_EQ(tp_ws_decode(buf, 10, 64, &f), -EPROTO);
	client_frame(buf, 0x09, p, 4);
	CHECK_EQ(tp_ws_decode(buf, 10, 64, &f), -EPROTO);
	buf[0] = 0x88, buf[1] = 0x80 | 126, buf[2] = 0, buf[3] = 200;
	CHECK_EQ(tp_ws_decode(buf, 4, 64, &f), -EPROTO);
	/* A 16-bit length that fits in 7 bits is not minimal. */
	buf[0] = 0x82, buf[1] = 0x80 | 126, buf[2] = 0, buf[3] = 5;
	CHECK_EQ(tp_ws_decode(buf, 4, 64, &f), -EPROTO);
	/* Continuation and ping frames decode (their order is the server's job). */
	size_t n = client_frame(buf, 0x00, p, 4);
	CHECK_EQ(tp_ws_decode(buf, n, 64, &f), (long)n);
	CHECK(!f.fin);
	CHECK_EQ(f.opcode, TP_WS_CONT);
}

TEST(tp_rpc_ws_header)
{
	uint8_t h[10];
	CHECK_EQ(tp_ws_header(h, TP_WS_BINARY, 5), 2);
	CHECK_MEM_EQ(h, "\x82\x05", 2);
	CHECK_EQ(tp_ws_header(h, TP_WS_PONG, 300), 4);
	CHECK_MEM_EQ(h, "\x8a\x7e\x01\x2c", 4);
	CHECK_EQ(tp_ws_header(h, TP_WS_BINARY, 65535), 4);
	CHECK_MEM_EQ(h, "\x82\x7e\xff\xff", 4);
	CHECK_EQ(tp_ws_header(h, TP_WS_BINARY, 70000), 10);
	CHECK_MEM_EQ(h, "\x82\x7f\x00\x00\x00\x00\x00\x01\x11\x70", 10);
}

TEST(tp_rpc_ws_accept_key)
{
	char out[29];
	/* RFC 6455 §1.3. */
	CHECK_EQ(tp_ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", 24, out), 0);
	CHECK_STR_EQ(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
	CHECK_EQ(tp_ws_accept_key("short", 5, out), -EINVAL);
}

/* ---- HTTP requests ---------------------------------------------------------- */

static int parse(const char *s, struct tp_http_request *req, const char **status)
{
	return tp_http_parse_request((const uint8_t *)s, strlen(s), req, status);
}

TEST(tp_rpc_http_request)
{
	const char *s = "POST /parse HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n"
	                "Origin:  https://ui.perfetto.dev \r\n\r\nhelloGET / HTTP/1.1\r\n\r\n";
	struct tp_http_request req;
	const char *status;
	size_t first = strlen(s) - strlen("GET / HTTP/1.1\r\n\r\n");
	/* Any shorter prefix of the first request needs more bytes. */
	for (size_t n = 0; n < first; n++)
		CHECK_EQ(tp_http_parse_request((const uint8_t *)s, n, &req, &status), 0);
	CHECK_EQ(parse(s, &req, &status), 1);
	CHECK_EQ(req.size, first);
	CHECK(tp_http_token_eq(req.method, req.method_len, "POST"));
	CHECK_EQ(req.uri_len, 6);
	CHECK_MEM_EQ(req.uri, "/parse", 6);
	CHECK_EQ(req.body_len, 5);
	CHECK_MEM_EQ(req.body, "hello", 5);
	CHECK(req.keep_alive);
	size_t n = 0;
	const char *origin = tp_http_header(&req, "ORIGIN", &n);
	CHECK(origin && n == 23 && memcmp(origin, "https://ui.perfetto.dev", 23) == 0);
	/* The pipelined second request. */
	CHECK_EQ(
	    tp_http_parse_request((const uint8_t *)s + first, strlen(s) - first, &req, &status), 1);
	CHECK_EQ(req.body_len, 0);
}

TEST(tp_rpc_http_connection)
{
	struct tp_http_request req;
	const char *status;
	CHECK_EQ(parse("GET / HTTP/1.0\r\n\r\n", &req, &status), 1);
	CHECK(!req.keep_alive);
	CHECK_EQ(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", &req, &status), 1);
	CHECK(req.keep_alive);
	CHECK_EQ(parse("GET / HTTP/1.1\r\nConnection: close\r\n\r\n", &req, &status), 1);
	CHECK(!req.keep_alive);
	CHECK_EQ(
	    parse("GET /websocket HTTP/1.1\nConnection: keep-alive, Upgrade\n\n", &req, &status),
	    1);
	CHECK(req.upgrade && req.keep_alive);
}

TEST(tp_rpc_http_bad_requests)
{
	struct tp_http_request req;
	const char *status;
	CHECK_EQ(parse("GARBAGE\r\n\r\n", &req, &status), -1);
	CHECK_STR_EQ(status, "400 Bad Request");
	CHECK_EQ(parse("GET / HTTP/2.0\r\n\r\n", &req, &status), -1);
	CHECK_STR_EQ(status, "505 HTTP Version Not Supported");
	CHECK_EQ(parse("GET / HTTP/1.1\r\nNoColon\r\n\r\n", &req, &status), -1);
	CHECK_STR_EQ(status, "400 Bad Request");
	CHECK_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n", &req, &status),
	         -1);
	CHECK_STR_EQ(status, "413 Payload Too Large");
	CHECK_EQ(parse("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", &req, &status), -1);
	CHECK_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", &req,
	               &status),
	         -1);
	CHECK_EQ(parse("POST / HTTP/1.1\r\nExpect: something\r\n\r\n", &req, &status), -1);
	CHECK_STR_EQ(status, "417 Expectation Failed");
	/* Headers in, body not: 0, and whether to send "100 Continue". */
	CHECK_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-Continue\r\n\r\n", &req,
	               &status),
	         0);
	CHECK(req.expect_continue);
	CHECK_EQ(parse("POST / HTTP/1.1\r\nContent-Length: 3\r\nExpect: 100-continue\r\n", &req,
	               &status),
	         0);
	CHECK(!req.expect_continue);
	CHECK_EQ(parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", &req, &status), -1);
	CHECK_STR_EQ(status, "411 Length Required");
	/* Headers that never end within the limit. */
	static char big[TP_HTTP_MAX_HEADER_BYTES + 64];
	memset(big, 'a', sizeof big - 1);
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	CHECK_EQ(parse(big, &req, &status), -1);
	CHECK_STR_EQ(status, "431 Request Header Fields Too Large");
}

/* ---- query results ---------------------------------------------------------- */

/* One decoded CellsBatch. */
struct batch {
	uint8_t cells[64];
	size_t ncells, nvarints, ndoubles, nblobs;
	int64_t varints[64];
	double doubles[64];
	size_t doubles_off; /* offset of the packed doubles in the whole message */
	char strings[256];
	size_t strings_len;
	bool last, padded;
};

/* The varint field result.c pads a CellsBatch with (CellsBatch declares no 7). */
enum { CELLS_BATCH_PADDING = 7 };

static void decode_batch(const uint8_t *msg, const struct pb_field *bf, struct batch *b)
{
	struct pb_reader r;
	struct pb_field f = {0};
	uint64_t v;
	memset(b, 0, sizeof *b);
	pb_reader_init_field(&r, bf);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_QueryResult_CellsBatch_cells) {
			memcpy(b->cells, f.data, f.len);
			b->ncells = f.len;
		} else if (f.id == PB_F_QueryResult_CellsBatch_varint_cells) {
			struct pb_packed it;
			pb_packed_init(&it, f.data, f.len, PB_WIRE_VARINT);
			while (pb_packed_next(&it, &v))
				b->varints[b->nvarints++] = (int64_t)v;
		} else if (f.id == PB_F_QueryResult_CellsBatch_float64_cells) {
			b->doubles_off = (size_t)(f.data - msg);
			memcpy(b->doubles, f.data, f.len);
			b->ndoubles = f.len / 8;
		} else if (f.id == PB_F_QueryResult_CellsBatch_blob_cells) {
			b->nblobs++;
		} else if (f.id == PB_F_QueryResult_CellsBatch_string_cells) {
			memcpy(b->strings, f.data, f.len);
			b->strings_len = f.len;
		} else if (f.id == PB_F_QueryResult_CellsBatch_is_last_batch) {
			b->last = f.val;
		} else if (f.id == CELLS_BATCH_PADDING) {
			b->padded = true;
		}
	}
}

TEST(tp_rpc_result_cells)
{
	struct tp *tp = tp_new(NULL);
	const char *sql = "select 1 as i, 2.5 as d, 'ab' as s, null as n, x'0102' as b, -3 as neg";
	struct tp_result *r = tp_result_new(tp, sql, strlen(sql));
	struct pb_writer w;
	struct pb_field f;
	struct batch b;
	pb_writer_init_growable(&w);
	CHECK(!tp_result_next(r, &w));
	const uint8_t *msg = pb_writer_data(&w);
	size_t len = pb_writer_size(&w);
	/* column_names, statement counts, last_statement_sql, batch, elapsed. */
	CHECK_EQ(pb_find_field(msg, len, PB_F_QueryResult_statement_count, &f), 1);
	CHECK_EQ(f.val, 1);
	CHECK_EQ(pb_find_field(msg, len, PB_F_QueryResult_statement_with_output_count, &f), 1);
	CHECK_EQ(f.val, 1);
	CHECK_EQ(pb_find_field(msg, len, PB_F_QueryResult_last_statement_sql, &f), 1);
	CHECK_EQ(f.len, strlen(sql));
	CHECK_EQ(pb_find_field(msg, len, PB_F_QueryResult_error, &f), 0); /* no error */
	CHECK_EQ(pb_find_field(msg, len, PB_F_QueryResult_batch, &f), 1);
	decode_batch(msg, &f, &b);
	CHECK_EQ(b.ncells, 6);
	CHECK_MEM_EQ(b.cells, "\x02\x03\x04\x01\x05\x02", 6);
	CHECK_EQ(b.nvarints, 2);
	CHECK_EQ(b.varints[0], 1);
	CHECK_EQ(b.varints[1], -3);
	CHECK_EQ(b.ndoubles, 1);
	CHECK_DBL_EQ(b.doubles[0], 2.5);
	CHECK_EQ(b.doubles_off % 8, 0); /* aligned in the message, as Perfetto's */
	CHECK_EQ(b.strings_len, 3);
	CHECK_MEM_EQ(b.strings, "ab", 3);
	CHECK_EQ(b.nblobs, 1);
	CHECK(b.last);
	pb_writer_release(&w);
	tp_result_free(r);
	tp_free(tp);
}

TEST(tp_rpc_result_batches)
{
	/* 7 rows of 2 cells, at most 4 cells a batch: rows 2, 2, 2, 1. */
	struct tp *tp = tp_new(NULL);
	const char *sql =
	    "with recursive r(i) as (select 0 union all select i + 1 from r where i < 6) "
	    "select i, i * 10 from r";
	struct tp_result *r = tp_result_new(tp, sql, strlen(sql));
	struct pb_writer w;
	struct pb_field f;
	struct batch b;
	int64_t next = 0;
	unsigned batches = 0;
	bool more = true;
	tp_result_set_batch_limits(r, 4, 1 << 20);
	pb_writer_init_growable(&w);
	while (more) {
		pb_writer_reset(&w);
		more = tp_result_next(r, &w);
		const uint8_t *msg = pb_writer_data(&w);
		CHECK_EQ(pb_find_field(msg, pb_writer_size(&w), PB_F_QueryResult_column_names, &f),
		         batches == 0); /* names once */
		CHECK_EQ(pb_find_field(msg, pb_writer_size(&w), PB_F_QueryResult_batch, &f), 1);
		decode_batch(msg, &f, &b);
		CHECK_EQ(b.ncells, more ? 4 : 2);
		for (size_t i = 0; i < b.nvarints; i += 2, next++) {
			CHECK_EQ(b.varints[i], next);
			CHECK_EQ(b.varints[i + 1], next * 10);
		}
		CHECK_EQ(b.last, !more);
		batches++;
	}
	CHECK_EQ(batches, 4);
	CHECK_EQ(next, 7);
	pb_writer_release(&w);
	tp_result_free(r);
	tp_free(tp);
}

TEST(tp_rpc_result_errors)
{
	struct tp *tp = tp_new(NULL);
	struct pb_writer w;
	struct pb_field f;
	pb_writer_init_growable(&w);
	/* As Perfetto v58.2 words them: a traceback ("stdin" frame: line,
	 * column, the line from the statement's start, a caret) at the token
	 * SQLite stopped at, its syntax errors as Perfetto's parser words
	 * them, the statement's start for an error while it ran. */
	static const char *const bad[] = {
	    "select * from nope",
	    "",
	    "  ; ",
	    "select 1;\n  select bad from slice",
	    "select 1; select\n bad2",
	    "  /* c */ select nosuchfn(3) as c;\nselect 4",
	    "select 1 from slice where",
	    "selec 1",
	    "select 'abc",
	    "select 1; select abs(-9223372036854775808)",
	    "select 1;\n\n  select x from (select 1 as y) where",
	    "create perfetto table t2(x INT) as\n  select bad from slice",
	};
	static const char *const msg[] = {
	    "Traceback (most recent call last):\n  File \"stdin\" line 1 col 1\n"
	    "    select * from nope\n    ^\nno such table: nope",
	    "No valid SQL to run",
	    "No valid SQL to run",
	    "Traceback (most recent call last):\n  File \"stdin\" line 2 col 10\n"
	    "    select bad from slice\n           ^\nno such column: bad",
	    "Traceback (most recent call last):\n  File \"stdin\" line 2 col 2\n"
	    "     bad2\n     ^\nno such column: bad2",
	    "Traceback (most recent call last):\n  File \"stdin\" line 1 col 18\n"
	    "    select nosuchfn(3) as c\n           ^\nno such function: nosuchfn",
	    "Traceback (most recent call last):\n  File \"stdin\" line 1 col 26\n"
	    "    select 1 from slice where\n                             ^\nincomplete SQL "
	    "statement",
	    "Traceback (most recent call last):\n  File \"stdin\" line 1 col 1\n"
	    "    selec 1\n    ^\nsyntax error near 'selec'",
	    "Traceback (most recent call last):\n  File \"stdin\" line 1 col 8\n"
	    "    select 'abc\n           ^\nsyntax error near ''abc'",
	    "Traceback (most recent call last):\n  File \"stdin\" line 1 col 11\n"
	    "    select abs(-9223372036854775808)\n    ^\ninteger overflow",
	    "Traceback (most recent call last):\n  File \"stdin\" line 3 col 38\n"
	    "      select x from (select 1 as y) where\n"
	    "                                         ^\nincomplete SQL statement",
	    "Traceback (most recent call last):\n  File \"stdin\" line 2 col 10\n"
	    "    select bad from slice\n           ^\nno such column: bad",
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(bad); i++) {
		struct tp_result *r = tp_result_new(tp, bad[i], strlen(bad[i]));
		pb_writer_reset(&w);
		CHECK(!tp_result_next(r, &w));
		CHECK_EQ(pb_find_field(pb_writer_data(&w), pb_writer_size(&w),
		                       PB_F_QueryResult_error, &f),
		         1);
		if (f.len != strlen(msg[i]) || memcmp(f.data, msg[i], f.len) != 0)
			fprintf(stderr, "  %zu: %.*s\n", i, (int)f.len, (const char *)f.data);
		CHECK_EQ(f.len, strlen(msg[i]));
		CHECK_MEM_EQ(f.data, msg[i], f.len);
		tp_result_free(r);
	}
	pb_writer_release(&w);
	tp_free(tp);
}

/* ---- the RPC stream ------------------------------------------------------------ */

struct capture {
	uint8_t buf[4096];
	size_t len;
	unsigned disconnects;
};

static void capture_send(void *ctx, const uint8_t *p, size_t n)
{
	struct capture *c = ctx;
	if (!p) {
		c->disconnects++;
		return;
	}
	if (c->len + n <= sizeof c->buf) {
		memcpy(c->buf + c->len, p, n);
		c->len += n;
	}
}

/* The string field id of the first TraceProcessorRpc in c, as a C string. */
static const char *first_string(const struct capture *c, uint32_t id, char *out, size_t size)
{
	struct pb_field m, f;
	out[0] = '\0';
	if (pb_find_field(c->buf, c->len, PB_F_TraceProcessorRpcStream_msg, &m) == 1 &&
	    pb_find_field(m.data, m.len, id, &f) == 1 && f.len < size) {
		memcpy(out, f.data, f.len);
		out[f.len] = '\0';
	}
	return out;
}

TEST(tp_rpc_stream_seq_and_framing)
{
	struct tp_rpc *rpc = tp_rpc_new(NULL, NULL, NULL);
	struct capture c = {0};
	char s[256];
	/* GET_STATUS with seq 1, split in two pieces: one response, seq 0. */
	const uint8_t status1[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x0a};
	CHECK_EQ(tp_rpc_feed(rpc, status1, 3, capture_send, &c), 0);
	CHECK_EQ(c.len, 0);
	CHECK_EQ(tp_rpc_feed(rpc, status1 + 3, 3, capture_send, &c), 0);
	struct pb_field m, f;
	CHECK_EQ(pb_find_field(c.buf, c.len, PB_F_TraceProcessorRpcStream_msg, &m), 1);
	CHECK_EQ(pb_find_field(m.data, m.len, PB_F_TraceProcessorRpc_seq, &f), 1);
	CHECK_EQ(f.val, 0);
	CHECK_EQ(pb_find_field(m.data, m.len, PB_F_TraceProcessorRpc_response, &f), 1);
	CHECK_EQ(f.val, 10);
	CHECK_EQ(pb_find_field(m.data, m.len, PB_F_TraceProcessorRpc_status, &f), 1);
	/* seq 5 after 1: fatal, and the stream is dead until reset. */
	const uint8_t status5[] = {0x0a, 0x04, 0x08, 0x05, 0x10, 0x0a};
	c.len = 0;
	CHECK_EQ(tp_rpc_feed(rpc, status5, sizeof status5, capture_send, &c), -EPROTO);
	CHECK_STR_EQ(first_string(&c, PB_F_TraceProcessorRpc_fatal_error, s, sizeof s),
	             "RPC request out of order. Expected 2, got 5 (ERR:rpc_seq)");
	CHECK_EQ(c.disconnects, 1);
	CHECK_EQ(tp_rpc_feed(rpc, status1, sizeof status1, capture_send, &c), -EPROTO);
	/* After a reset, seq 0 restarts the count; then a framing error. */
	tp_rpc_reset_stream(rpc);
	const uint8_t status0[] = {0x0a, 0x04, 0x08, 0x00, 0x10, 0x0a};
	CHECK_EQ(tp_rpc_feed(rpc, status0, sizeof status0, capture_send, &c), 0);
	c.len = 0;
	const uint8_t bad[] = {0x08, 0x01};
	CHECK_EQ(tp_rpc_feed(rpc, bad, sizeof bad, capture_send, &c), -EPROTO);
	CHECK_STR_EQ(first_string(&c, PB_F_TraceProcessorRpc_fatal_error, s, sizeof s),
	             "RPC framing error");
	/* A message over the size cap is a framing error from its header. */
	tp_rpc_reset_stream(rpc);
	c.len = 0;
	const uint8_t huge[] = {0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f};
	CHECK_EQ(tp_rpc_feed(rpc, huge, sizeof huge, capture_send, &c), -EPROTO);
	CHECK_STR_EQ(first_string(&c, PB_F_TraceProcessorRpc_fatal_error, s, sizeof s),
	             "RPC framing error");
	tp_rpc_free(rpc);
}

/* RESET_TRACE_PROCESSOR among messages queued in one read: the ones after
 * it still run (a fuzz find: the reset emptied the queue being drained,
 * and the drain then moved a negative size). */
TEST(tp_rpc_stream_reset_among_queued)
{
	struct tp_rpc *rpc = tp_rpc_new(NULL, NULL, NULL);
	struct capture c = {0};
	/* seq 1 GET_STATUS, seq 2 RESET_TRACE_PROCESSOR, seq 3 GET_STATUS */
	const uint8_t msgs[] = {0x0a, 0x04, 0x08, 0x01, 0x10, 0x0a, 0x0a, 0x04, 0x08,
	                        0x02, 0x10, 0x0b, 0x0a, 0x04, 0x08, 0x03, 0x10, 0x0a};
	/* The first piece ends inside a message, so the rest is queued. */
	CHECK_EQ(tp_rpc_feed(rpc, msgs, 3, capture_send, &c), 0);
	CHECK_EQ(tp_rpc_feed(rpc, msgs + 3, sizeof msgs - 3, capture_send, &c), 0);
	struct pb_reader r;
	struct pb_field m = {0}, f;
	size_t n = 0, statuses = 0;
	pb_reader_init(&r, c.buf, c.len);
	while (pb_next(&r, &m)) {
		n += m.id == PB_F_TraceProcessorRpcStream_msg;
		statuses += m.id == PB_F_TraceProcessorRpcStream_msg &&
		            pb_find_field(m.data, m.len, PB_F_TraceProcessorRpc_status, &f) == 1;
	}
	CHECK_EQ(n, 3);
	CHECK_EQ(statuses, 2);
	CHECK_EQ(c.disconnects, 0);
	tp_rpc_free(rpc);
}

TEST(tp_rpc_stream_big_message_in_pieces)
{
	/* A 4 MiB APPEND_TRACE_DATA (a JSON trace padded with spaces) arriving
	 * in 4 KiB pieces, then FINALIZE and a query in one piece. (The stream
	 * once moved its whole pending buffer for every piece: rpc_bench.) */
	const char head[] =
	    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,"
	    "\"tid\":1}";
	size_t tlen = (size_t)4 << 20;
	char *trace = tb_malloc(tlen);
	memset(trace, ' ', tlen);
	memcpy(trace, head, sizeof head - 1);
	memcpy(trace + tlen - 2, "]}", 2);
	struct pb_writer w;
	pb_writer_init_growable(&w);
	unsigned h = pb_begin_nested(&w, PB_F_TraceProcessorRpcStream_msg);
	pb_put_int64(&w, PB_F_TraceProcessorRpc_seq, 1);
	pb_put_int32(&w, PB_F_TraceProcessorRpc_request,
	             PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_APPEND_TRACE_DATA);
	pb_put_bytes(&w, PB_F_TraceProcessorRpc_append_trace_data, trace, tlen);
	pb_end_nested(&w, h);
	h = pb_begin_nested(&w, PB_F_TraceProcessorRpcStream_msg);
	pb_put_int64(&w, PB_F_TraceProcessorRpc_seq, 2);
	pb_put_int32(&w, PB_F_TraceProcessorRpc_request,
	             PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_FINALIZE_TRACE_DATA);
	pb_end_nested(&w, h);
	size_t split = pb_writer_size(&w);
	h = pb_begin_nested(&w, PB_F_TraceProcessorRpcStream_msg);
	pb_put_int64(&w, PB_F_TraceProcessorRpc_seq, 3);
	pb_put_int32(&w, PB_F_TraceProcessorRpc_request,
	             PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_QUERY_STREAMING);
	unsigned q = pb_begin_nested(&w, PB_F_TraceProcessorRpc_query_args);
	pb_put_string(&w, PB_F_QueryArgs_sql_query, "select name, dur from slice");
	pb_end_nested(&w, q);
	pb_end_nested(&w, h);

	struct tp_rpc *rpc = tp_rpc_new(NULL, NULL, NULL);
	struct capture c = {0};
	const uint8_t *p = pb_writer_data(&w);
	for (size_t off = 0; off < split; off += 4096)
		CHECK_EQ(tp_rpc_feed(rpc, p + off, split - off < 4096 ? split - off : 4096,
		                     capture_send, &c),
		         0);
	CHECK_EQ(tp_rpc_feed(rpc, p + split, pb_writer_size(&w) - split, capture_send, &c), 0);
	/* Three responses: append_result and finalize_data_result without
	 * errors, then the row. */
	struct pb_reader r;
	struct pb_field m = {0}, f = {0};
	unsigned n = 0;
	pb_reader_init(&r, c.buf, c.len);
	while (pb_next(&r, &m)) {
		n++;
		if (n == 1) {
			CHECK_EQ(
			    pb_find_field(m.data, m.len, PB_F_TraceProcessorRpc_append_result, &f),
			    1);
			CHECK_EQ(f.len, 0);
		} else if (n == 2) {
			CHECK_EQ(pb_find_field(m.data, m.len,
			                       PB_F_TraceProcessorRpc_finalize_data_result, &f),
			         1);
			CHECK_EQ(f.len, 0);
		} else {
			struct pb_field qr, b, s;
			CHECK_EQ(
			    pb_find_field(m.data, m.len, PB_F_TraceProcessorRpc_query_result, &qr),
			    1);
			CHECK_EQ(pb_find_field(qr.data, qr.len, PB_F_QueryResult_batch, &b), 1);
			CHECK_EQ(pb_find_field(b.data, b.len,
			                       PB_F_QueryResult_CellsBatch_string_cells, &s),
			         1);
			CHECK_EQ(s.len, 2);
			CHECK_MEM_EQ(s.data, "a", 2);
		}
	}
	CHECK_EQ(n, 3);
	tp_rpc_free(rpc);
	pb_writer_release(&w);
	tb_free(trace);
}
