/*
 * Input stages of the trace processor that sit before format sniffing:
 * gzip unwrapping (gunzip.c), zlib inflation of in-trace payloads such as
 * compressed_packets (inflate.c), and an HTTP/1.1 client that streams a trace
 * from an http:// or https:// URL without a local copy (http.c).
 */
#ifndef TB_TP_IO_H
#define TB_TP_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

struct tp_gunzip;
typedef int (*tp_gunzip_sink)(void *ctx, const uint8_t *p, size_t n);

struct tp_gunzip *tp_gunzip_new(void);
void tp_gunzip_free(struct tp_gunzip *g);
/* Inflate n more bytes of a gzip stream, passing decoded bytes to sink as
 * they come. Returns 0, a sink's negative code, or -EINVAL (err set) on
 * corrupt data. */
int tp_gunzip_feed(struct tp_gunzip *g, const uint8_t *p, size_t n, tp_gunzip_sink sink, void *ctx,
		   struct tb_err *err);
/* End of input: -EINVAL (err set) if a member was cut short. */
int tp_gunzip_finish(struct tp_gunzip *g, struct tb_err *err);

/* Inflate a zlib (RFC 1950) buffer of at most max_out bytes into *out
 * (tb_malloc'd, caller frees). Returns 0 or -EINVAL / -EFBIG. */
int tp_zlib_inflate(const uint8_t *p, size_t n, size_t max_out, uint8_t **out, size_t *out_len);

/* ---- zip and tar archives (archive.c) ------------------------------------ */

#define TP_ARCHIVE_MAX_MEMBERS 65536
#define TP_ARCHIVE_MAX_BYTES ((uint64_t)16 << 30) /* all members, decompressed */
#define TP_ARCHIVE_NAME_MAX 4096		  /* a GNU long name */
#define TP_ARCHIVE_PREALLOC_MAX (64u << 20)	  /* trust in a header's size */
/* A member (deflated, or gzip'd) that inflates past TP_ARCHIVE_BOMB_MIN and
 * more than TP_ARCHIVE_MAX_RATIO times its compressed size is a
 * decompression bomb: real traces compress 5 to 50 fold, a run of one byte
 * 1000 fold. Refused as soon as it crosses the line, not after inflating. */
#define TP_ARCHIVE_BOMB_MIN ((uint64_t)64 << 20)
#define TP_ARCHIVE_MAX_RATIO 200u

static inline bool tp_archive_is_bomb(uint64_t compressed, uint64_t inflated)
{
	return inflated > TP_ARCHIVE_BOMB_MIN && inflated / TP_ARCHIVE_MAX_RATIO > compressed;
}

enum tp_archive_kind { TP_ARCHIVE_ZIP, TP_ARCHIVE_TAR };

/* One file of an archive, decompressed. size is what the archive says of
 * it (zip: the compressed size; tar: the size), as Perfetto's trace_file
 * table reports. */
struct tp_archive_member {
	char *name;
	uint8_t *data;
	size_t len, cap;
	uint64_t size;
};

struct tp_archive;

/* True if p[0, n) starts a zip (local header) or tar (ustar/GNU magic at
 * 257) archive; *kind says which. A tar needs 263 bytes to be seen. */
bool tp_archive_sniff(const uint8_t *p, size_t n, enum tp_archive_kind *kind);
struct tp_archive *tp_archive_new(enum tp_archive_kind kind);
void tp_archive_free(struct tp_archive *a);
/* Parse n more bytes of the archive. Returns 0, or -EINVAL with one line in
 * err (corrupt header, CRC mismatch, unsupported compression or entry type,
 * too large), -EFBIG for a decompression bomb (tp_archive_is_bomb). Bytes
 * after the end of the archive are ignored. */
int tp_archive_feed(struct tp_archive *a, const uint8_t *p, size_t n, struct tb_err *err);
/* End of input: -EINVAL (err set) if it stopped inside an entry. */
int tp_archive_finish(struct tp_archive *a, struct tb_err *err);
/* The members read so far, in archive order (directories and hidden paths
 * left out). The archive owns them; a caller may take data (set it NULL). */
size_t tp_archive_count(const struct tp_archive *a);
struct tp_archive_member *tp_archive_member(struct tp_archive *a, size_t i);

/* ---- HTTP (http.c) ------------------------------------------------------ */

#define TP_HTTP_HOST_MAX 256
#define TP_HTTP_PATH_MAX 4096
#define TP_HTTP_LINE_MAX 8192		/* one status, header, chunk-size or trailer line */
#define TP_HTTP_HEADERS_MAX (64 * 1024) /* all header (or trailer) lines of a response */
#define TP_HTTP_MAX_REDIRECTS 8

/* A parsed http:// or https:// URL. host has no brackets (an IPv6 literal
 * `[::1]` is stored as `::1`); path starts with '/' and keeps the query. */
struct tp_http_url {
	bool https;
	uint16_t port;
	char host[TP_HTTP_HOST_MAX];
	char path[TP_HTTP_PATH_MAX];
};

/* True if s starts with http:// or https:// (any case). */
bool tp_http_is_url(const char *s);
/* Parse url into *u. Returns 0, or -EINVAL with err set (bad scheme, host,
 * port, user-info, or a part too long). */
int tp_http_url_parse(const char *url, struct tp_http_url *u, struct tb_err *err);
/* Resolve a redirect's Location (absolute URL, //host/path, /path or a path
 * relative to base's) into *out. Returns 0 or -EINVAL (err set). */
int tp_http_url_resolve(const struct tp_http_url *base, const char *loc, struct tp_http_url *out,
			struct tb_err *err);
/* Format u back as a URL into buf (always NUL-terminated). */
void tp_http_url_format(const struct tp_http_url *u, char *buf, size_t size);

typedef int (*tp_http_sink)(void *ctx, const uint8_t *p, size_t n);

/* The response parser: status line, headers, then a body delimited by
 * Content-Length, chunked transfer encoding or the end of the connection.
 * Interim 1xx responses are skipped. Pure (no I/O), so it is unit-tested and
 * fuzzed on its own. Embed it; tp_http_parser_init before use. */
struct tp_http_parser {
	int state;
	int status;		  /* final status code, once headers_done */
	bool headers_done;	  /* status and headers of the final response parsed */
	bool done;		  /* the whole body has been delivered */
	bool chunked, has_length; /* body framing */
	uint64_t content_length;
	uint64_t remaining; /* body bytes left (length framing or current chunk) */
	uint64_t body_bytes;
	size_t header_bytes; /* bytes of the current header or trailer block */
	size_t line_len;
	char reason[128];
	char location[TP_HTTP_PATH_MAX + TP_HTTP_HOST_MAX + 16];
	char line[TP_HTTP_LINE_MAX];
};

void tp_http_parser_init(struct tp_http_parser *p);
/* Parse up to n bytes of the response. Stops right after the final
 * response's headers (headers_done becomes true, so the caller can look at
 * status before any body byte is passed on), and otherwise consumes
 * everything, passing body bytes (de-chunked) to sink. *used is set to the
 * bytes consumed. Bytes after the end of the body are ignored. Returns 0, a
 * sink's negative code, or -EPROTO (err set) on a malformed response. */
int tp_http_parser_feed(struct tp_http_parser *p, const uint8_t *buf, size_t n, size_t *used,
			tp_http_sink sink, void *ctx, struct tb_err *err);
/* The peer closed the connection: 0 if the body is complete (or delimited by
 * the close), else -EPROTO (err set). */
int tp_http_parser_eof(struct tp_http_parser *p, struct tb_err *err);

struct tp_http_opts {
	int connect_timeout_ms; /* per address tried; 0 = 15 s */
	int read_timeout_ms;	/* per read or write; 0 = 60 s */
};

/* GET url, following up to TP_HTTP_MAX_REDIRECTS redirects (301, 302, 303,
 * 307, 308; http and https), and stream the final 2xx response's body to
 * sink in chunks as it arrives. https:// verifies the server's certificate
 * and host name against the CA bundle named by $SSL_CERT_FILE, or else the
 * first of the system bundles found. opts may be NULL. Blocks; runs on the
 * caller's thread. Returns 0, a sink's negative code (err untouched), or a
 * negative errno-style code with one line in err: cannot resolve, cannot
 * connect, certificate verification failed, HTTP status, timeout, ... */
int tp_http_get(const char *url, const struct tp_http_opts *opts, tp_http_sink sink, void *ctx,
		struct tb_err *err);

#endif /* TB_TP_IO_H */
