/*
 * An HTTP/1.1 GET client that streams a trace from an http:// or https://
 * URL straight into a sink (the shell's tp_parse), with no local copy.
 *
 * Three layers, top to bottom of this file: URLs (parse, resolve a redirect's
 * Location, format), the response parser (pure: bytes in, status + headers +
 * de-chunked body out; unit-tested and fuzzed on its own), and the client
 * (getaddrinfo, connect with a timeout on every address, TLS through mbedtls
 * with certificate and host-name verification, redirects).
 *
 * A response as the parser sees it:
 *
 *   HTTP/1.1 200 OK\r\n                  status line (1xx interim ones skipped)
 *   Content-Length: 1234\r\n             or Transfer-Encoding: chunked, or
 *   ...\r\n                              neither: the body ends at close
 *   \r\n
 *   body                                 Content-Length / close framing
 *   1a;ext=1\r\n <0x1a bytes> \r\n       chunked framing: hex size, data, CRLF,
 *   0\r\n trailer lines \r\n             ..., a zero size, trailers, empty line
 *
 * Every limit (line, header block, chunk size, redirects, timeouts) is named
 * in io.h, so a hostile server costs bounded memory and time.
 *
 * mbedtls 2.28 matches only dNSName entries against the expected name, so for
 * an IP-literal host we skip its name check and compare the certificate's
 * iPAddress entries ourselves (verify_ip below). Entropy comes from
 * getrandom(2) directly: the static musl build would otherwise fall back to
 * opening /dev/urandom, which may not exist in a chroot or container.
 */
#include "base.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"
#include "version.h"

#define HTTP_BUF_SIZE (64 * 1024)
#define DEFAULT_CONNECT_TIMEOUT_MS 15000
#define DEFAULT_READ_TIMEOUT_MS 60000
#define CHUNK_SIZE_MAX ((uint64_t)1 << 60)

static const char *const ca_bundles[] = {
    "/etc/ssl/certs/ca-certificates.crt", /* Debian, Ubuntu, Alpine, Arch */
    "/etc/pki/tls/certs/ca-bundle.crt",   /* Fedora, RHEL */
    "/etc/ssl/cert.pem",                  /* Alpine, macOS-like layouts */
};

/* ---- URLs ---------------------------------------------------------------- */

bool http_is_url(const char *s)
{
	return strncasecmp(s, "http://", 7) == 0 || strncasecmp(s, "https://", 8) == 0;
}

static bool url_char_ok(unsigned char c)
{
	return c > 0x20 && c < 0x7f;
}

int http_url_parse(const char *url, struct http_url *u, struct tb_err *err)
{
	memset(u, 0, sizeof *u);
	const char *p;
	if (strncasecmp(url, "http://", 7) == 0) {
		p = url + 7;
	} else if (strncasecmp(url, "https://", 8) == 0) {
		u->https = true;
		p = url + 8;
	} else {
		return tb_err_set(err, -EINVAL, "unsupported URL '%s' (http:// or https:// only)",
		                  url);
	}
	for (const char *q = url; *q; q++)
		if (!url_char_ok((unsigned char)*q))
			return tb_err_set(err, -EINVAL, "invalid character in URL '%s'", url);
	size_t alen = strcspn(p, "/?#");
	const char *aend = p + alen;
	if (memchr(p, '@', alen))
		return tb_err_set(err, -EINVAL, "user names in URLs are not supported: '%s'", url);
	const char *host = p, *hend, *port = NULL;
	if (*p == '[') {
		host = p + 1;
		hend = memchr(host, ']', (size_t)(aend - host));
		if (!hend)
			return tb_err_set(err, -EINVAL, "unterminated '[' in URL '%s'", url);
		if (hend + 1 < aend) {
			if (hend[1] != ':')
				return tb_err_set(err, -EINVAL, "bad host in URL '%s'", url);
			port = hend + 2;
		}
	} else {
		hend = memchr(p, ':', alen);
		if (hend)
			port = hend + 1;
		else
			hend = aend;
	}
	size_t hlen = (size_t)(hend - host);
	if (hlen == 0)
		return tb_err_set(err, -EINVAL, "no host in URL '%s'", url);
	if (hlen >= sizeof u->host)
		return tb_err_set(err, -EINVAL, "host name too long in URL '%s'", url);
	memcpy(u->host, host, hlen);
	u->port = u->https ? 443 : 80;
	if (port && port < aend) {
		unsigned long v = 0;
		for (const char *q = port; q < aend; q++) {
			if (*q < '0' || *q > '9' || v > 65535)
				return tb_err_set(err, -EINVAL, "bad port in URL '%s'", url);
			v = v * 10 + (unsigned long)(*q - '0');
		}
		if (v == 0 || v > 65535)
			return tb_err_set(err, -EINVAL, "bad port in URL '%s'", url);
		u->port = (uint16_t)v;
	}
	size_t plen = strcspn(aend, "#");
	size_t need = plen + (aend[0] != '/');
	if (need >= sizeof u->path)
		return tb_err_set(err, -EINVAL, "URL too long: '%.64s...'", url);
	size_t o = 0;
	if (aend[0] != '/')
		u->path[o++] = '/';
	memcpy(u->path + o, aend, plen);
	u->path[o + plen] = '\0';
	return 0;
}

void http_url_format(const struct http_url *u, char *buf, size_t size)
{
	bool v6 = strchr(u->host, ':') != NULL;
	bool def = u->port == (u->https ? 443 : 80);
	char port[8] = "";
	if (!def)
		snprintf(port, sizeof port, ":%u", (unsigned)u->port);
	snprintf(buf, size, "%s://%s%s%s%s%s", u->https ? "https" : "http", v6 ? "[" : "", u->host,
	         v6 ? "]" : "", port, u->path);
}

int http_url_resolve(const struct http_url *base, const char *loc, struct http_url *out,
                     struct tb_err *err)
{
	if (http_is_url(loc))
		return http_url_parse(loc, out, err);
	char *s = tb_malloc(HTTP_PATH_MAX * 2 + HTTP_HOST_MAX + 32);
	size_t cap = HTTP_PATH_MAX * 2 + HTTP_HOST_MAX + 32;
	int rc;
	if (loc[0] == '/' && loc[1] == '/') {
		snprintf(s, cap, "%s:%s", base->https ? "https" : "http", loc);
	} else {
		struct http_url root = *base;
		root.path[0] = '\0';
		http_url_format(&root, s, cap);
		size_t n = strlen(s);
		if (loc[0] != '/') {
			/* Relative to the base path's directory (query dropped). */
			size_t dir = strcspn(base->path, "?");
			while (dir > 0 && base->path[dir - 1] != '/')
				dir--;
			if (dir > cap - n - 1)
				dir = cap - n - 1;
			memcpy(s + n, base->path, dir);
			n += dir;
			s[n] = '\0';
		}
		snprintf(s + n, cap - n, "%s", loc);
	}
	rc = http_url_parse(s, out, err);
	tb_free(s);
	return rc;
}

/* ---- the response parser --------------------------------------------------- */

enum {
	S_STATUS,
	S_HEADER,
	S_BODY_LENGTH,
	S_BODY_CLOSE,
	S_CHUNK_SIZE,
	S_CHUNK_DATA,
	S_CHUNK_CRLF,
	S_TRAILER,
	S_DONE,
};

void http_parser_init(struct http_parser *p)
{
	memset(p, 0, offsetof(struct http_parser, line));
	p->line[0] = '\0';
	p->state = S_STATUS;
}

static bool token_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

static int parse_status(struct http_parser *p, const char *l, size_t n, struct tb_err *err)
{
	if (n < 12 || strncmp(l, "HTTP/1.", 7) != 0 || l[8] != ' ' || l[9] < '1' || l[9] > '5' ||
	    l[10] < '0' || l[10] > '9' || l[11] < '0' || l[11] > '9' || (n > 12 && l[12] != ' '))
		return tb_err_set(err, -EPROTO, "malformed status line '%.64s'", l);
	p->status = (l[9] - '0') * 100 + (l[10] - '0') * 10 + (l[11] - '0');
	snprintf(p->reason, sizeof p->reason, "%s", n > 13 ? l + 13 : "");
	p->chunked = p->has_length = false;
	p->content_length = 0;
	p->location[0] = '\0';
	return 0;
}

static int parse_header(struct http_parser *p, char *l, size_t n, struct tb_err *err)
{
	char *colon = memchr(l, ':', n);
	if (!colon || colon == l || l[0] == ' ' || l[0] == '\t')
		return tb_err_set(err, -EPROTO, "malformed header line '%.64s'", l);
	size_t nlen = (size_t)(colon - l);
	char *v = colon + 1, *vend = l + n;
	while (v < vend && (*v == ' ' || *v == '\t'))
		v++;
	while (vend > v && (vend[-1] == ' ' || vend[-1] == '\t'))
		vend--;
	*vend = '\0';
	size_t vlen = (size_t)(vend - v);
	if (token_eq(l, nlen, "content-length")) {
		uint64_t len = 0;
		if (vlen == 0 || vlen > 18)
			return tb_err_set(err, -EPROTO, "bad Content-Length '%.32s'", v);
		for (size_t i = 0; i < vlen; i++) {
			if (v[i] < '0' || v[i] > '9')
				return tb_err_set(err, -EPROTO, "bad Content-Length '%.32s'", v);
			len = len * 10 + (uint64_t)(v[i] - '0');
		}
		if (p->has_length && len != p->content_length)
			return tb_err_set(err, -EPROTO, "conflicting Content-Length headers");
		p->has_length = true;
		p->content_length = len;
	} else if (token_eq(l, nlen, "transfer-encoding")) {
		/* Chunked when it is the last coding; anything else is close-delimited. */
		const char *last = strrchr(v, ',');
		last = last ? last + 1 : v;
		while (*last == ' ' || *last == '\t')
			last++;
		p->chunked = token_eq(last, strlen(last), "chunked");
	} else if (token_eq(l, nlen, "location")) {
		if (vlen >= sizeof p->location)
			return tb_err_set(err, -EPROTO, "redirect location too long");
		memcpy(p->location, v, vlen + 1);
	}
	return 0;
}

/* The empty line after the headers: pick the body framing. */
static void end_headers(struct http_parser *p)
{
	p->header_bytes = 0;
	if (p->status < 200 && p->status != 101) {
		p->state = S_STATUS; /* interim response: the real one follows */
		return;
	}
	p->headers_done = true;
	if (p->status < 200 || p->status == 204 || p->status == 304) {
		p->state = S_DONE;
	} else if (p->chunked) {
		p->state = S_CHUNK_SIZE;
	} else if (p->has_length) {
		p->remaining = p->content_length;
		p->state = p->remaining ? S_BODY_LENGTH : S_DONE;
	} else {
		p->state = S_BODY_CLOSE;
	}
	p->done = p->state == S_DONE;
}

static int parse_chunk_size(struct http_parser *p, const char *l, size_t n, struct tb_err *err)
{
	uint64_t v = 0;
	size_t i = 0;
	for (; i < n; i++) {
		int c = (unsigned char)l[i], d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			d = (c | 0x20) - 'a' + 10;
		else
			break;
		v = v * 16 + (uint64_t)d;
		if (v > CHUNK_SIZE_MAX)
			return tb_err_set(err, -EPROTO, "chunk size too large");
	}
	if (i == 0 || (i < n && l[i] != ';' && l[i] != ' ' && l[i] != '\t'))
		return tb_err_set(err, -EPROTO, "malformed chunk size line '%.32s'", l);
	if (v == 0) {
		p->header_bytes = 0;
		p->state = S_TRAILER;
	} else {
		p->remaining = v;
		p->state = S_CHUNK_DATA;
	}
	return 0;
}

static int on_line(struct http_parser *p, char *l, size_t n, struct tb_err *err)
{
	switch (p->state) {
	case S_STATUS:
		if (n == 0 && p->status != 0)
			return 0; /* tolerate a stray CRLF between responses */
		p->state = S_HEADER;
		return parse_status(p, l, n, err);
	case S_HEADER:
		if (n == 0) {
			end_headers(p);
			return 0;
		}
		return parse_header(p, l, n, err);
	case S_CHUNK_SIZE:
		return parse_chunk_size(p, l, n, err);
	case S_CHUNK_CRLF:
		if (n != 0)
			return tb_err_set(err, -EPROTO, "missing CRLF after a chunk");
		p->state = S_CHUNK_SIZE;
		return 0;
	case S_TRAILER:
		if (n == 0) {
			p->state = S_DONE;
			p->done = true;
		}
		return 0;
	}
	return 0;
}

static bool line_state(int s)
{
	return s == S_STATUS || s == S_HEADER || s == S_CHUNK_SIZE || s == S_CHUNK_CRLF ||
	       s == S_TRAILER;
}

int http_parser_feed(struct http_parser *p, const uint8_t *buf, size_t n, size_t *used,
                     http_sink sink, void *ctx, struct tb_err *err)
{
	size_t i = 0;
	int rc = 0;
	while (i < n && p->state != S_DONE) {
		if (line_state(p->state)) {
			const uint8_t *nl = memchr(buf + i, '\n', n - i);
			size_t take = nl ? (size_t)(nl - (buf + i)) + 1 : n - i;
			if (p->line_len + take > sizeof p->line) {
				rc = tb_err_set(err, -EPROTO, "response line longer than %d bytes",
				                HTTP_LINE_MAX);
				break;
			}
			bool block =
			    p->state == S_STATUS || p->state == S_HEADER || p->state == S_TRAILER;
			if (block && (p->header_bytes += take) > HTTP_HEADERS_MAX) {
				rc = tb_err_set(err, -EPROTO,
				                "response headers larger than %d bytes",
				                HTTP_HEADERS_MAX);
				break;
			}
			memcpy(p->line + p->line_len, buf + i, take);
			p->line_len += take;
			i += take;
			if (!nl)
				break;
			size_t len = p->line_len - 1;
			if (len && p->line[len - 1] == '\r')
				len--;
			p->line[len] = '\0';
			p->line_len = 0;
			if (memchr(p->line, '\0', len)) {
				rc = tb_err_set(err, -EPROTO, "NUL byte in a response line");
				break;
			}
			bool before = p->headers_done;
			if ((rc = on_line(p, p->line, len, err)) < 0)
				break;
			if (!before && p->headers_done)
				break; /* let the caller look at the status first */
		} else if (p->state == S_BODY_CLOSE) {
			p->body_bytes += n - i;
			rc = sink(ctx, buf + i, n - i);
			i = n;
			if (rc < 0)
				break;
		} else { /* S_BODY_LENGTH, S_CHUNK_DATA */
			size_t take = n - i;
			if (take > p->remaining)
				take = (size_t)p->remaining;
			p->remaining -= take;
			p->body_bytes += take;
			rc = sink(ctx, buf + i, take);
			i += take;
			if (rc < 0)
				break;
			if (p->remaining == 0) {
				p->state = p->state == S_CHUNK_DATA ? S_CHUNK_CRLF : S_DONE;
				p->done = p->state == S_DONE;
			}
		}
	}
	if (p->state == S_DONE)
		i = n; /* whatever follows the body is not ours */
	*used = i;
	return rc < 0 ? rc : 0;
}

int http_parser_eof(struct http_parser *p, struct tb_err *err)
{
	if (p->state == S_BODY_CLOSE)
		p->state = S_DONE, p->done = true;
	if (p->state == S_DONE)
		return 0;
	if (!p->headers_done)
		return tb_err_set(err, -EPROTO,
		                  "connection closed before the end of the response headers");
	if (p->state == S_BODY_LENGTH)
		return tb_err_set(err, -EPROTO, "connection closed after %llu of %llu body bytes",
		                  (unsigned long long)p->body_bytes,
		                  (unsigned long long)p->content_length);
	return tb_err_set(err, -EPROTO,
	                  "connection closed inside the chunked body (after %llu bytes)",
	                  (unsigned long long)p->body_bytes);
}

/* ---- connections -------------------------------------------------------------- */

struct conn {
	int fd;
	bool tls, tls_ready, timed_out;
	const char *host;
	char where[HTTP_HOST_MAX + 16]; /* host:port for messages */
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt ca;
	mbedtls_ctr_drbg_context drbg;
	struct in6_addr ip; /* the host as an address, when it is an IP literal */
	int ip_len;         /* 4, 16, or 0 for a name */
};

static int connect_one(const struct addrinfo *ai, int timeout_ms)
{
	int fd =
	    socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
	if (fd < 0)
		return -errno;
	int rc = 0;
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
		if (errno != EINPROGRESS) {
			rc = -errno;
			goto out;
		}
		struct pollfd pfd = {.fd = fd, .events = POLLOUT};
		int n;
		while ((n = poll(&pfd, 1, timeout_ms)) < 0 && errno == EINTR)
			;
		if (n <= 0) {
			rc = n == 0 ? -ETIMEDOUT : -errno;
			goto out;
		}
		int soerr = 0;
		socklen_t sl = sizeof soerr;
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0)
			soerr = errno;
		if (soerr) {
			rc = -soerr;
			goto out;
		}
	}
	/* Blocking from here on, with the read timeout on each operation. */
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
		rc = -errno;
out:
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

static int conn_tcp(struct conn *c, const struct http_url *u, int connect_ms, int read_ms,
                    struct tb_err *err)
{
	char port[8];
	snprintf(port, sizeof port, "%u", (unsigned)u->port);
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int g = getaddrinfo(u->host, port, &hints, &res);
	if (g != 0)
		return tb_err_set(err, -EHOSTUNREACH, "cannot resolve '%s': %s", u->host,
		                  g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
	int rc = -ENOENT;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		rc = connect_one(ai, connect_ms);
		if (rc >= 0)
			break;
	}
	freeaddrinfo(res);
	if (rc < 0)
		return tb_err_errno(err, rc, "cannot connect to %s", c->where);
	c->fd = rc;
	struct timeval tv = {.tv_sec = read_ms / 1000, .tv_usec = (read_ms % 1000) * 1000};
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	return 0;
}

static int bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	struct conn *c = ctx;
	ssize_t n = send(c->fd, buf, len, MSG_NOSIGNAL);
	if (n >= 0)
		return (int)n;
	if (errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_WRITE;
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		c->timed_out = true;
		return MBEDTLS_ERR_SSL_TIMEOUT;
	}
	return errno == EPIPE || errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET
	                                             : MBEDTLS_ERR_NET_SEND_FAILED;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	struct conn *c = ctx;
	ssize_t n = recv(c->fd, buf, len, 0);
	if (n >= 0)
		return (int)n;
	if (errno == EINTR)
		return MBEDTLS_ERR_SSL_WANT_READ;
	if (errno == EAGAIN || errno == EWOULDBLOCK) {
		c->timed_out = true;
		return MBEDTLS_ERR_SSL_TIMEOUT;
	}
	return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET : MBEDTLS_ERR_NET_RECV_FAILED;
}

static int entropy_getrandom(void *ctx, unsigned char *out, size_t len)
{
	while (len > 0) {
		ssize_t n = getrandom(out, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
		out += n;
		len -= (size_t)n;
	}
	return 0;
}

/* mbedtls 2.28 ignores iPAddress names: check them for IP-literal hosts. */
static int verify_ip(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	const struct conn *c = ctx;
	if (depth != 0 || c->ip_len == 0)
		return 0;
	for (const mbedtls_x509_sequence *s = &crt->subject_alt_names; s && s->buf.p; s = s->next) {
		if ((s->buf.tag & MBEDTLS_ASN1_TAG_VALUE_MASK) == MBEDTLS_X509_SAN_IP_ADDRESS &&
		    s->buf.len == (size_t)c->ip_len && memcmp(s->buf.p, &c->ip, s->buf.len) == 0)
			return 0;
	}
	*flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
	return 0;
}

static int load_ca(struct conn *c, struct tb_err *err)
{
	const char *path = getenv("SSL_CERT_FILE");
	if (!path || !*path) {
		path = NULL;
		for (size_t i = 0; i < sizeof ca_bundles / sizeof ca_bundles[0] && !path; i++)
			if (access(ca_bundles[i], R_OK) == 0)
				path = ca_bundles[i];
	}
	if (!path)
		return tb_err_set(
		    err, -ENOENT,
		    "no CA certificates for '%s' (none of /etc/ssl/certs/ca-certificates.crt, "
		    "/etc/pki/tls/certs/ca-bundle.crt, /etc/ssl/cert.pem; set SSL_CERT_FILE)",
		    c->host);
	if (access(path, R_OK) != 0)
		return tb_err_errno(err, -errno, "cannot load CA certificates from '%s'", path);
	/* A positive result counts certificates that failed to parse; the rest load. */
	int rc = mbedtls_x509_crt_parse_file(&c->ca, path);
	if (rc < 0 || c->ca.version == 0) {
		char msg[128];
		mbedtls_strerror(rc, msg, sizeof msg);
		return tb_err_set(err, -EINVAL, "cannot load CA certificates from '%s': %s", path,
		                  rc < 0 ? msg : "no certificate parsed");
	}
	return 0;
}

static int conn_tls(struct conn *c, struct tb_err *err)
{
	static const char pers[] = "tracebox http";
	char msg[256];
	int rc;
	mbedtls_ssl_init(&c->ssl);
	mbedtls_ssl_config_init(&c->conf);
	mbedtls_x509_crt_init(&c->ca);
	mbedtls_ctr_drbg_init(&c->drbg);
	c->tls_ready = true;
	if ((rc = mbedtls_ctr_drbg_seed(&c->drbg, entropy_getrandom, NULL,
	                                (const unsigned char *)pers, sizeof pers - 1)) != 0)
		return tb_err_set(err, -EIO, "cannot seed the TLS random generator");
	if ((rc = load_ca(c, err)) < 0)
		return rc;
	if (mbedtls_ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_CLIENT,
	                                MBEDTLS_SSL_TRANSPORT_STREAM,
	                                MBEDTLS_SSL_PRESET_DEFAULT) != 0)
		return tb_err_set(err, -EIO, "cannot set up TLS");
	mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
	mbedtls_ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, &c->drbg);
	mbedtls_ssl_conf_verify(&c->conf, verify_ip, c);
	if (mbedtls_ssl_setup(&c->ssl, &c->conf) != 0)
		return tb_err_set(err, -ENOMEM, "cannot set up TLS");
	/* A name is sent for SNI and checked against the certificate; an IP
	 * literal is neither (RFC 6066) and is checked by verify_ip. */
	if (c->ip_len == 0 && mbedtls_ssl_set_hostname(&c->ssl, c->host) != 0)
		return tb_err_set(err, -EINVAL, "bad TLS host name '%s'", c->host);
	mbedtls_ssl_set_bio(&c->ssl, c, bio_send, bio_recv, NULL);
	while ((rc = mbedtls_ssl_handshake(&c->ssl)) != 0) {
		if (rc == MBEDTLS_ERR_SSL_WANT_READ || rc == MBEDTLS_ERR_SSL_WANT_WRITE)
			continue;
		uint32_t flags = mbedtls_ssl_get_verify_result(&c->ssl);
		if (rc == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED && flags != 0 &&
		    flags != (uint32_t)-1) {
			char info[512];
			mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
			/* One line: the flags' sentences joined with "; ". */
			char line[512];
			size_t o = 0;
			for (const char *q = info; *q && o + 3 < sizeof line; q++) {
				if (*q != '\n')
					line[o++] = *q;
				else if (q[1])
					line[o++] = ';', line[o++] = ' ';
			}
			line[o] = '\0';
			return tb_err_set(err, -EACCES,
			                  "certificate verification failed for '%s': %s", c->host,
			                  line);
		}
		if (c->timed_out)
			return tb_err_set(err, -ETIMEDOUT, "timed out in the TLS handshake with %s",
			                  c->where);
		mbedtls_strerror(rc, msg, sizeof msg);
		return tb_err_set(err, -EPROTO, "TLS handshake with %s failed: %s", c->where, msg);
	}
	return 0;
}

static int conn_open(struct conn *c, const struct http_url *u, const struct http_opts *o,
                     struct tb_err *err)
{
	bool v6 = strchr(u->host, ':') != NULL;
	snprintf(c->where, sizeof c->where, "%s%s%s:%u", v6 ? "[" : "", u->host, v6 ? "]" : "",
	         (unsigned)u->port);
	c->host = u->host;
	c->tls = u->https;
	if (inet_pton(AF_INET, u->host, &c->ip) == 1)
		c->ip_len = 4;
	else if (inet_pton(AF_INET6, u->host, &c->ip) == 1)
		c->ip_len = 16;
	int rc = conn_tcp(c, u, o->connect_timeout_ms, o->read_timeout_ms, err);
	if (rc == 0 && c->tls)
		rc = conn_tls(c, err);
	return rc;
}

static void conn_close(struct conn *c)
{
	if (c->tls_ready) {
		mbedtls_ssl_free(&c->ssl);
		mbedtls_ssl_config_free(&c->conf);
		mbedtls_x509_crt_free(&c->ca);
		mbedtls_ctr_drbg_free(&c->drbg);
		c->tls_ready = false;
	}
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

static int conn_write(struct conn *c, const char *p, size_t n, struct tb_err *err)
{
	while (n > 0) {
		int w = c->tls ? mbedtls_ssl_write(&c->ssl, (const unsigned char *)p, n)
		               : bio_send(c, (const unsigned char *)p, n);
		if (w == MBEDTLS_ERR_SSL_WANT_READ || w == MBEDTLS_ERR_SSL_WANT_WRITE)
			continue;
		if (w < 0) {
			if (c->timed_out)
				return tb_err_set(err, -ETIMEDOUT, "timed out sending to %s",
				                  c->where);
			return tb_err_set(err, -EIO, "cannot send the request to %s", c->where);
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Up to n bytes into buf: their count, 0 at the end of the stream, or a
 * negative code (err set). */
static int conn_read(struct conn *c, uint8_t *buf, size_t n, struct tb_err *err)
{
	for (;;) {
		int r = c->tls ? mbedtls_ssl_read(&c->ssl, buf, n) : bio_recv(c, buf, n);
		if (r >= 0)
			return r;
		if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE)
			continue;
		if (r == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || r == MBEDTLS_ERR_SSL_CONN_EOF)
			return 0;
		if (c->timed_out)
			return tb_err_set(err, -ETIMEDOUT, "timed out reading from %s", c->where);
		if (r == MBEDTLS_ERR_NET_CONN_RESET)
			return tb_err_set(err, -ECONNRESET, "connection to %s reset", c->where);
		char msg[128];
		mbedtls_strerror(r, msg, sizeof msg);
		return tb_err_set(err, -EIO, "cannot read from %s: %s", c->where, msg);
	}
}

/* ---- GET ------------------------------------------------------------------------- */

static bool is_redirect(int status)
{
	return status == 301 || status == 302 || status == 303 || status == 307 || status == 308;
}

/* One request on one connection. *next is set (and 1 returned) for a redirect. */
static int get_once(const struct http_url *u, const struct http_opts *o, uint8_t *buf,
                    http_sink sink, void *ctx, struct http_url *next, struct tb_err *err)
{
	struct conn c = {.fd = -1};
	struct http_parser *p = tb_malloc(sizeof *p);
	char *url = tb_malloc(HTTP_PATH_MAX + HTTP_HOST_MAX + 32);
	http_url_format(u, url, HTTP_PATH_MAX + HTTP_HOST_MAX + 32);
	struct tb_err perr = {0};
	int rc = conn_open(&c, u, o, err);
	if (rc < 0)
		goto out;

	bool v6 = strchr(u->host, ':') != NULL;
	char port[8] = "";
	if (u->port != (u->https ? 443 : 80))
		snprintf(port, sizeof port, ":%u", (unsigned)u->port);
	int len = snprintf((char *)buf, HTTP_BUF_SIZE,
	                   "GET %s HTTP/1.1\r\nHost: %s%s%s%s\r\nUser-Agent: tracebox/%s\r\n"
	                   "Accept: */*\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n",
	                   u->path, v6 ? "[" : "", u->host, v6 ? "]" : "", port, TB_VERSION);
	TB_CHECK(len > 0 && len < HTTP_BUF_SIZE);
	if ((rc = conn_write(&c, (const char *)buf, (size_t)len, err)) < 0)
		goto out;

	http_parser_init(p);
	bool checked = false;
	while (!p->done) {
		int n = conn_read(&c, buf, HTTP_BUF_SIZE, err);
		if (n < 0) {
			rc = n;
			goto out;
		}
		if (n == 0) {
			rc = http_parser_eof(p, &perr);
			break;
		}
		for (size_t off = 0; off < (size_t)n && !p->done;) {
			size_t used = 0;
			rc = http_parser_feed(p, buf + off, (size_t)n - off, &used, sink, ctx,
			                      &perr);
			off += used;
			if (rc < 0)
				goto out;
			if (p->headers_done && !checked) {
				checked = true;
				if (is_redirect(p->status) && p->location[0]) {
					rc = http_url_resolve(u, p->location, next, err) < 0
					         ? -EINVAL
					         : 1;
					goto out;
				}
				if (p->status < 200 || p->status > 299) {
					/* -ENOENT: the server has no such thing (a
					 * debuginfod answer for an unknown build id) */
					bool gone = p->status == 404 || p->status == 410;
					rc = tb_err_set(err, gone ? -ENOENT : -EIO,
					                "HTTP %d%s%s from '%s'", p->status,
					                p->reason[0] ? " " : "", p->reason, url);
					goto out;
				}
			}
		}
	}
out:
	if (rc < 0 && tb_err_is_set(&perr))
		tb_err_set(err, rc, "bad HTTP response from '%s': %s", url, perr.msg);
	conn_close(&c);
	tb_free(url);
	tb_free(p);
	return rc;
}

int http_get(const char *url, const struct http_opts *opts, http_sink sink, void *ctx,
             struct tb_err *err)
{
	struct http_opts o = opts ? *opts : (struct http_opts){0};
	if (o.connect_timeout_ms <= 0)
		o.connect_timeout_ms = DEFAULT_CONNECT_TIMEOUT_MS;
	if (o.read_timeout_ms <= 0)
		o.read_timeout_ms = DEFAULT_READ_TIMEOUT_MS;
	struct http_url *u = tb_malloc(2 * sizeof *u);
	uint8_t *buf = tb_malloc(HTTP_BUF_SIZE);
	int rc = http_url_parse(url, &u[0], err);
	for (int hops = 0; rc == 0; hops++) {
		rc = get_once(&u[0], &o, buf, sink, ctx, &u[1], err);
		if (rc != 1)
			break;
		if (hops == HTTP_MAX_REDIRECTS) {
			rc = tb_err_set(err, -ELOOP, "more than %d redirects from '%s'",
			                HTTP_MAX_REDIRECTS, url);
			break;
		}
		u[0] = u[1];
		rc = 0;
	}
	tb_free(buf);
	tb_free(u);
	return rc;
}
