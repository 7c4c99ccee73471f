/*
 * Tests of the HTTP client's pure parts (components/trace_processor/io/
 * http.c): URL parsing, formatting and redirect resolution, and the response
 * parser (status, headers, Content-Length, chunked and close-delimited
 * bodies, interim 1xx responses, malformed input), fed whole and byte by
 * byte. The network side is tested by tests/cli/t1020-tp-http.sh.
 */
#include <errno.h>
#include <string.h>

#include "base.h"
#include "test.h"

struct body {
	char data[256];
	size_t len;
};

static int body_sink(void *ctx, const uint8_t *p, size_t n)
{
	struct body *b = ctx;
	if (b->len + n >= sizeof b->data)
		return -ENOSPC;
	memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

/* Parse resp in pieces of at most step bytes, then signal EOF. Returns the
 * first negative code, or 0. */
static int parse_all(struct http_parser *p, const char *resp, size_t step, struct body *b,
                     struct tb_err *err)
{
	size_t n = strlen(resp), off = 0;
	http_parser_init(p);
	memset(b, 0, sizeof *b);
	while (off < n && !p->done) {
		size_t len = n - off < step ? n - off : step, used = 0;
		int rc =
		    http_parser_feed(p, (const uint8_t *)resp + off, len, &used, body_sink, b, err);
		if (rc < 0)
			return rc;
		off += used;
	}
	return http_parser_eof(p, err);
}

static struct http_parser parser; /* big (line buffer): not on the stack */

TEST(tp_http_url_parse_forms)
{
	struct http_url u;
	struct tb_err err = {0};
	CHECK_EQ(http_url_parse("http://example.com/a/b?c=d#frag", &u, &err), 0);
	CHECK(!u.https);
	CHECK_STR_EQ(u.host, "example.com");
	CHECK_EQ(u.port, 80);
	CHECK_STR_EQ(u.path, "/a/b?c=d");
	CHECK_EQ(http_url_parse("HTTPS://h:8443", &u, &err), 0);
	CHECK(u.https);
	CHECK_EQ(u.port, 8443);
	CHECK_STR_EQ(u.path, "/");
	CHECK_EQ(http_url_parse("https://[::1]:9/x", &u, &err), 0);
	CHECK_STR_EQ(u.host, "::1");
	CHECK_EQ(u.port, 9);
	CHECK_EQ(http_url_parse("http://h?q", &u, &err), 0);
	CHECK_STR_EQ(u.path, "/?q");
	CHECK_EQ(http_url_parse("https://[::1]", &u, &err), 0);
	CHECK_EQ(u.port, 443);
	CHECK(http_is_url("Http://x"));
	CHECK(!http_is_url("ftp://x"));
	CHECK(!http_is_url("trace.json"));
}

TEST(tp_http_url_parse_errors)
{
	static const char *const bad[] = {
	    "ftp://h/",       "http://",      "http:///p",      "http://h:0/",
	    "http://h:65536", "http://h:8x/", "http://u@h/",    "http://[::1/",
	    "http://[::1]x/", "http://h/a b", "http://h:/\x01",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct http_url u;
		struct tb_err err = {0};
		if (http_url_parse(bad[i], &u, &err) != -EINVAL || !err.msg[0]) {
			test_report(__FILE__, __LINE__, "accepted '%s'", bad[i]);
			return;
		}
	}
	struct http_url u;
	struct tb_err err = {0};
	CHECK_EQ(http_url_parse("http://h:/", &u, &err), 0); /* empty port: default */
	CHECK_EQ(u.port, 80);
}

TEST(tp_http_url_resolve_and_format)
{
	struct http_url base, out;
	struct tb_err err = {0};
	char s[512];
	CHECK_EQ(http_url_parse("http://h:81/dir/file?q=1", &base, &err), 0);
	http_url_format(&base, s, sizeof s);
	CHECK_STR_EQ(s, "http://h:81/dir/file?q=1");
	CHECK_EQ(http_url_resolve(&base, "/abs", &out, &err), 0);
	http_url_format(&out, s, sizeof s);
	CHECK_STR_EQ(s, "http://h:81/abs");
	CHECK_EQ(http_url_resolve(&base, "rel.json", &out, &err), 0);
	http_url_format(&out, s, sizeof s);
	CHECK_STR_EQ(s, "http://h:81/dir/rel.json");
	CHECK_EQ(http_url_resolve(&base, "//other/x", &out, &err), 0);
	http_url_format(&out, s, sizeof s);
	CHECK_STR_EQ(s, "http://other/x");
	CHECK_EQ(http_url_resolve(&base, "https://[::1]:443/y", &out, &err), 0);
	http_url_format(&out, s, sizeof s);
	CHECK_STR_EQ(s, "https://[::1]/y");
}

TEST(tp_http_content_length)
{
	static const char resp[] =
	    "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhelloEXTRA";
	for (size_t step = 1; step <= sizeof resp; step++) {
		struct body b;
		struct tb_err err = {0};
		CHECK_EQ(parse_all(&parser, resp, step, &b, &err), 0);
		CHECK_EQ(parser.status, 200);
		CHECK_STR_EQ(parser.reason, "OK");
		CHECK_STR_EQ(b.data, "hello");
		CHECK(parser.done);
	}
}

TEST(tp_http_stops_after_headers)
{
	static const char resp[] = "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabc";
	struct body b = {{0}, 0};
	struct tb_err err = {0};
	size_t used = 0;
	http_parser_init(&parser);
	CHECK_EQ(http_parser_feed(&parser, (const uint8_t *)resp, strlen(resp), &used, body_sink,
	                          &b, &err),
	         0);
	CHECK(parser.headers_done);
	CHECK_EQ(parser.status, 404);
	CHECK_STR_EQ(parser.reason, "Not Found");
	CHECK_EQ(used, strlen(resp) - 3);
	CHECK_EQ(b.len, 0);
}

TEST(tp_http_chunked)
{
	static const char resp[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
	                           "3;ext=1\r\nabc\r\n"
	                           "A\r\n0123456789\r\n"
	                           "0\r\nTrailer: x\r\n\r\nGARBAGE";
	for (size_t step = 1; step <= sizeof resp; step++) {
		struct body b;
		struct tb_err err = {0};
		CHECK_EQ(parse_all(&parser, resp, step, &b, &err), 0);
		CHECK_STR_EQ(b.data, "abc0123456789");
	}
}

TEST(tp_http_close_delimited_and_interim)
{
	struct body b;
	struct tb_err err = {0};
	CHECK_EQ(parse_all(&parser, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 200 OK\r\n\r\nall of it",
	                   4, &b, &err),
	         0);
	CHECK_EQ(parser.status, 200);
	CHECK_STR_EQ(b.data, "all of it");
	CHECK_EQ(parse_all(&parser, "HTTP/1.1 204 No Content\r\n\r\n", 100, &b, &err), 0);
	CHECK(parser.done);
	CHECK_EQ(parse_all(&parser, "HTTP/1.1 302 Found\nLocation:  /next \n\n", 7, &b, &err), 0);
	CHECK_STR_EQ(parser.location, "/next");
}

TEST(tp_http_malformed)
{
	static const char *const bad[] = {
	    "HTTP/2 200 OK\r\n\r\n",
	    "HTTP/1.1 20 OK\r\n\r\n",
	    "xyz",
	    "HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
	    "HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n",
	    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffff\r\n",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct body b;
		struct tb_err err = {0};
		int rc = parse_all(&parser, bad[i], 3, &b, &err);
		if (rc != -EPROTO || !err.msg[0]) {
			test_report(__FILE__, __LINE__, "case %zu: rc %d, err '%s'", i, rc,
			            err.msg);
			return;
		}
	}
}

TEST(tp_http_limits)
{
	/* A header line longer than the line buffer, and a header block over the cap. */
	static char resp[HTTP_HEADERS_MAX + 1024];
	struct body b;
	struct tb_err err = {0};
	size_t n = (size_t)snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nX: ");
	memset(resp + n, 'a', HTTP_LINE_MAX + 10);
	resp[n + HTTP_LINE_MAX + 10] = '\0';
	CHECK_EQ(parse_all(&parser, resp, 1000, &b, &err), -EPROTO);
	n = (size_t)snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\n");
	while (n + 20 < sizeof resp - 1)
		n += (size_t)snprintf(resp + n, sizeof resp - n, "X-Header: 12345678\r\n");
	tb_err_clear(&err);
	CHECK_EQ(parse_all(&parser, resp, 4096, &b, &err), -EPROTO);
	CHECK(strstr(err.msg, "headers larger") != NULL);
}

TEST(tp_http_sink_error)
{
	struct body b;
	struct tb_err err = {0};
	static char resp[600];
	size_t n =
	    (size_t)snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nContent-Length: 400\r\n\r\n");
	memset(resp + n, 'x', 400);
	resp[n + 400] = '\0';
	CHECK_EQ(parse_all(&parser, resp, 64, &b, &err), -ENOSPC);
	CHECK_EQ(err.code, 0);
}
