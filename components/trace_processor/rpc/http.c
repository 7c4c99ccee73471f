/*
 * HTTP/1.1 request parser of the RPC server: one request (request line,
 * headers, Content-Length body) out of the bytes a connection has received,
 * pointing into them. Pure and bounded: the request line and headers may
 * take TP_HTTP_MAX_HEADER_BYTES, at most TP_HTTP_MAX_HEADERS headers, and the
 * body TP_HTTP_MAX_BODY (Perfetto's 64 MiB), so the server can refuse a
 * request before buffering it.
 *
 *   METHOD SP URI SP HTTP/1.x CRLF
 *   (Name ":" OWS value OWS CRLF)*        a bare LF is accepted for CRLF
 *   CRLF
 *   body                                  Content-Length bytes
 */
#include <errno.h>
#include <string.h>

#include "rpc.h"

bool tp_http_token_eq(const char *s, size_t n, const char *t)
{
	size_t i;
	for (i = 0; i < n; i++) {
		char a = s[i], b = t[i];
		if (!b)
			return false;
		if (a >= 'A' && a <= 'Z')
			a = (char)(a - 'A' + 'a');
		if (b >= 'A' && b <= 'Z')
			b = (char)(b - 'A' + 'a');
		if (a != b)
			return false;
	}
	return t[i] == '\0';
}

const char *tp_http_header(const struct tp_http_request *req, const char *name, size_t *len)
{
	for (unsigned i = 0; i < req->num_headers; i++) {
		const struct tp_http_header *h = &req->headers[i];
		if (tp_http_token_eq(h->name, h->name_len, name)) {
			if (len)
				*len = h->value_len;
			return h->value;
		}
	}
	return NULL;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

/* The next line of [*p, end) without its CR LF (or LF), or NULL when the line
 * is not complete yet. */
static const char *next_line(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl)
		return NULL;
	*len = (size_t)(nl - s);
	if (*len && s[*len - 1] == '\r')
		(*len)--;
	*p = nl + 1;
	return s;
}

static bool parse_request_line(const char *s, size_t n, struct tp_http_request *req)
{
	const char *end = s + n, *sp1 = memchr(s, ' ', n), *sp2;
	if (!sp1 || sp1 == s)
		return false;
	sp2 = memchr(sp1 + 1, ' ', (size_t)(end - sp1 - 1));
	if (!sp2 || sp2 == sp1 + 1)
		return false;
	req->method = s;
	req->method_len = (size_t)(sp1 - s);
	req->uri = sp1 + 1;
	req->uri_len = (size_t)(sp2 - sp1 - 1);
	size_t vlen = (size_t)(end - sp2 - 1);
	if (vlen != 8 || memcmp(sp2 + 1, "HTTP/1.", 7) != 0 || sp2[8] < '0' || sp2[8] > '9')
		return false;
	req->minor_version = sp2[8] - '0';
	return true;
}

/* Content-Length: digits only, no larger than the limit. */
static int parse_length(const char *v, size_t n, size_t *out)
{
	size_t x = 0;
	if (n == 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (v[i] < '0' || v[i] > '9')
			return -1;
		if (x > TP_HTTP_MAX_BODY)
			return -2;
		x = x * 10 + (size_t)(v[i] - '0');
	}
	*out = x;
	return x > TP_HTTP_MAX_BODY ? -2 : 0;
}

/* Fold the comma-separated tokens of a Connection header into req. */
static void parse_connection(const char *v, size_t n, struct tp_http_request *req)
{
	const char *end = v + n;
	while (v < end) {
		const char *comma = memchr(v, ',', (size_t)(end - v));
		const char *e = comma ? comma : end;
		const char *a = v;
		while (a < e && is_space(*a))
			a++;
		const char *b = e;
		while (b > a && is_space(b[-1]))
			b--;
		if (tp_http_token_eq(a, (size_t)(b - a), "keep-alive"))
			req->keep_alive = true;
		else if (tp_http_token_eq(a, (size_t)(b - a), "close"))
			req->keep_alive = false;
		else if (tp_http_token_eq(a, (size_t)(b - a), "upgrade"))
			req->upgrade = true;
		v = comma ? comma + 1 : end;
	}
}

int tp_http_parse_request(const uint8_t *buf, size_t len, struct tp_http_request *req,
                          const char **status)
{
	const char *p = (const char *)buf, *end = p + len, *line;
	size_t n, body_len = 0;
	bool have_length = false, expect_continue = false;
	memset(req, 0, sizeof *req);
	*status = "400 Bad Request";
	/* Tolerate empty lines before a request (RFC 9112 §2.2). */
	while (p < end && (*p == '\r' || *p == '\n'))
		p++;
	if (p == end)
		return 0;
	const char *hdr_end =
	    len > TP_HTTP_MAX_HEADER_BYTES ? (const char *)buf + TP_HTTP_MAX_HEADER_BYTES : end;
	if (!(line = next_line(&p, hdr_end, &n)))
		goto need_more;
	if (!parse_request_line(line, n, req)) {
		if (n > 8 && memcmp(line + n - 8, "HTTP/", 5) == 0 && line[n - 3] != '1')
			*status = "505 HTTP Version Not Supported";
		return -1;
	}
	req->keep_alive = req->minor_version >= 1;
	for (;;) {
		if (!(line = next_line(&p, hdr_end, &n)))
			goto need_more;
		if (n == 0)
			break;
		const char *colon = memchr(line, ':', n);
		if (!colon || colon == line || is_space(line[0]))
			return -1; /* no name, or obsolete line folding */
		if (req->num_headers == TP_HTTP_MAX_HEADERS) {
			*status = "431 Request Header Fields Too Large";
			return -1;
		}
		struct tp_http_header *h = &req->headers[req->num_headers++];
		const char *v = colon + 1, *ve = line + n;
		while (v < ve && is_space(*v))
			v++;
		while (ve > v && is_space(ve[-1]))
			ve--;
		h->name = line;
		h->name_len = (size_t)(colon - line);
		h->value = v;
		h->value_len = (size_t)(ve - v);
		if (tp_http_token_eq(h->name, h->name_len, "content-length")) {
			size_t l;
			int rc = parse_length(h->value, h->value_len, &l);
			if (rc == -2)
				*status = "413 Payload Too Large";
			if (rc < 0 || (have_length && l != body_len))
				return -1;
			body_len = l;
			have_length = true;
		} else if (tp_http_token_eq(h->name, h->name_len, "transfer-encoding")) {
			*status = "411 Length Required";
			return -1;
		} else if (tp_http_token_eq(h->name, h->name_len, "connection")) {
			parse_connection(h->value, h->value_len, req);
		} else if (tp_http_token_eq(h->name, h->name_len, "expect")) {
			if (!tp_http_token_eq(h->value, h->value_len, "100-continue")) {
				*status = "417 Expectation Failed";
				return -1;
			}
			expect_continue = true;
		}
	}
	if ((size_t)(end - p) < body_len) {
		req->expect_continue = expect_continue;
		return 0;
	}
	req->body = (const uint8_t *)p;
	req->body_len = body_len;
	req->size = (size_t)(p - (const char *)buf) + body_len;
	return 1;
need_more:
	if (hdr_end != end) {
		*status = "431 Request Header Fields Too Large";
		return -1;
	}
	return 0;
}
