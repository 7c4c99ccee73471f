/*
 * Framing of ftrace text: bytes in chunks of any size -> complete lines for
 * line.c, with the wrappers text traces come in:
 *
 *   plain          tracefs trace / trace_pipe, trace-cmd report: every line
 *   "TRACE:\n"     atrace's dump marker; what precedes it is dropped. When a
 *                  zlib header (78 01/5e/9c/da) follows, the rest of the input
 *                  is the compressed text: buffered, inflated at the end and
 *                  framed again
 *   HTML           systrace: only the inside of
 *                  <script class="trace-data" type="application/text"> ...
 *                  </script> sections. A section starting with '#' or an
 *                  event line is systrace text; one starting with '{' or '['
 *                  is a JSON trace, handed to the JSON importer; others
 *                  (PROCESS DUMP, CGROUP DUMP) are skipped
 *   legacy HTML    var linuxPerfData = "\ ... \n\ ... "; a JS string, its
 *                  lines ending in an escaped newline
 */
#include "ftrace_text_int.h"
#include "../importer.h"

#include <string.h>

#include "../../io/io.h"

/* The first occurrence of needle in [p, p + n), or NULL. */
static const char *find(const char *p, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (const char *q = p; k <= n && (q = memchr(q, needle[0], (size_t)(p + n - q))) != NULL;
	     q++) {
		if ((size_t)(p + n - q) < k)
			return NULL;
		if (memcmp(q, needle, k) == 0)
			return q;
	}
	return NULL;
}

static bool contains(const char *p, size_t n, const char *needle)
{
	return find(p, n, needle) != NULL;
}

static bool is_zlib_header(const uint8_t *p, size_t n)
{
	return n >= 2 && p[0] == 0x78 &&
	       (p[1] == 0x01 || p[1] == 0x5e || p[1] == 0x9c || p[1] == 0xda);
}

static void append(struct ft_bytes *b, const char *p, size_t n)
{
	vec_reserve(b, n);
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void json_feed(struct ftrace_text *ft, const char *p, size_t n)
{
	if (!ft->json)
		ft->json = tp_json_importer.create(ft->tp);
	tp_json_importer.parse(ft->json, (const uint8_t *)p, n);
	tp_json_importer.parse(ft->json, (const uint8_t *)"\n", 1);
}

/* One complete line of an HTML trace. */
static void html_line(struct ftrace_text *ft, const char *p, size_t n)
{
	const char *end_tag = find(p, n, "</script>");
	bool end = end_tag != NULL;
	const char *tag;
	switch (ft->mode) {
	case FT_HTML:
		if ((tag = find(p, n, "<script class=\"trace-data\"")) != NULL) {
			ft->mode = FT_HTML_SECTION;
			/* The data may start on the same line. */
			const char *gt = memchr(tag, '>', (size_t)(p + n - tag));
			if (gt && gt + 1 < p + n)
				html_line(ft, gt + 1, (size_t)(p + n - gt - 1));
		} else if (contains(p, n, "var linuxPerfData = \"")) {
			ft->mode = FT_HTML_TEXT;
			ft->legacy_js = true;
		}
		return;
	case FT_HTML_SECTION: {
		size_t i = 0;
		while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
			i++;
		if (end) {
			/* A section on one line: its data, then its end. */
			if (end_tag > p)
				html_line(ft, p, (size_t)(end_tag - p));
			ft->mode = FT_HTML;
			ft->legacy_js = false;
			return;
		}
		if (i == n)
			return;
		if (p[i] == '{' || p[i] == '[') {
			ft->mode = FT_HTML_JSON;
			json_feed(ft, p, n);
			return;
		}
		struct tp_ft_line l;
		if (p[i] == '#' || tp_ft_line_tokenize(p, n, &l)) {
			ft->mode = FT_HTML_TEXT;
			ft->legacy_js = false;
			tp_ft_line(ft, p, n);
			return;
		}
		ft->mode = FT_HTML_OTHER;
		return;
	}
	case FT_HTML_JSON:
		if (end) {
			json_feed(ft, p, (size_t)(end_tag - p));
			ft->mode = FT_HTML;
			return;
		}
		json_feed(ft, p, n);
		return;
	case FT_HTML_TEXT:
		if (end ||
		    (ft->legacy_js && n && contains(p, n, "\";") && !contains(p, n, "\\n\\"))) {
			if (ft->legacy_js && !end)
				tp_ft_line(ft, p, n);
			ft->mode = FT_HTML;
			ft->legacy_js = false;
			return;
		}
		tp_ft_line(ft, p, n);
		return;
	case FT_HTML_OTHER:
		if (end)
			ft->mode = FT_HTML;
		return;
	default:
		return;
	}
}

static void feed_line(struct ftrace_text *ft, const char *p, size_t n)
{
	if (ft->mode == FT_TEXT)
		tp_ft_line(ft, p, n);
	else
		html_line(ft, p, n);
}

static bool starts_with_nocase(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);
	if (n < k)
		return false;
	for (size_t i = 0; i < k; i++) {
		char c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (c != s[i])
			return false;
	}
	return true;
}

bool tp_ft_is_html(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	return starts_with_nocase(p + i, n - i, "<!doctype html") ||
	       starts_with_nocase(p + i, n - i, "<html");
}

/* The first bytes decide the wrapper. Returns how many to skip (the
 * "TRACE:\n" marker and what precedes it). */
static size_t start(struct ftrace_text *ft, const char *p, size_t n)
{
	if (tp_ft_is_html(p, n)) {
		ft->mode = FT_HTML;
		return 0;
	}
	ft->mode = FT_TEXT;
	/* The marker within the first 64 KiB (as Perfetto looks for it). */
	size_t lim = n < 65536 ? n : 65536;
	for (size_t j = 0; j + 7 <= lim; j++) {
		if (p[j] == 'T' && memcmp(p + j, "TRACE:\n", 7) == 0) {
			if (is_zlib_header((const uint8_t *)p + j + 7, n - j - 7))
				ft->mode = FT_ZLIB;
			return j + 7;
		}
		if (p[j] == 'T' && j + 8 <= lim && memcmp(p + j, "TRACE:\r\n", 8) == 0)
			return j + 8;
	}
	return 0;
}

void tp_ft_feed(struct ftrace_text *ft, const char *p, size_t n)
{
	const char *e = p + n;
	if (ft->mode == FT_START) {
		/* Decide on what arrived; the importer hands over >= 512 bytes
		 * (or the whole input) first. */
		p += start(ft, p, n);
	}
	if (ft->mode == FT_ZLIB) {
		if (ft->zbuf.len + (size_t)(e - p) > FT_MAX_COMPRESSED)
			ft->zbuf_too_long = true;
		else
			append(&ft->zbuf, p, (size_t)(e - p));
		return;
	}
	while (p < e) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl) {
			if (ft->partial.len + (size_t)(e - p) <= FT_MAX_LINE)
				append(&ft->partial, p, (size_t)(e - p));
			else
				ft->partial_too_long = true;
			return;
		}
		if (ft->partial.len || ft->partial_too_long) {
			if (!ft->partial_too_long &&
			    ft->partial.len + (size_t)(nl - p) <= FT_MAX_LINE) {
				append(&ft->partial, p, (size_t)(nl - p));
				feed_line(ft, ft->partial.data, ft->partial.len);
			} else {
				tp_stat_inc(ft->tp, TP_STAT_systrace_parse_failure);
			}
			ft->partial.len = 0;
			ft->partial_too_long = false;
		} else {
			feed_line(ft, p, (size_t)(nl - p));
		}
		p = nl + 1;
	}
}

/* The compressed TRACE: body, inflated and framed as text. */
static void inflate_body(struct ftrace_text *ft)
{
	uint8_t *out = NULL;
	size_t out_len = 0;
	if (ft->zbuf_too_long || tp_zlib_inflate((const uint8_t *)ft->zbuf.data, ft->zbuf.len,
	                                         FT_MAX_INFLATED, &out, &out_len) != 0) {
		tp_stat_inc(ft->tp, TP_STAT_compressed_packets_failure);
		tb_free(out);
		return;
	}
	vec_release(&ft->zbuf);
	ft->mode = FT_START;
	ft->depth++;
	if (ft->depth == 1) {
		tp_ft_feed(ft, (const char *)out, out_len);
		if (ft->mode == FT_ZLIB) { /* compressed again: not read, counted */
			tp_stat_inc(ft->tp, TP_STAT_compressed_packets_failure);
			vec_release(&ft->zbuf);
			ft->zbuf_too_long = false;
			ft->mode = FT_TEXT;
		}
		tp_ft_feed_end(ft);
	}
	tb_free(out);
}

void tp_ft_feed_end(struct ftrace_text *ft)
{
	if (ft->mode == FT_ZLIB) {
		inflate_body(ft);
		return;
	}
	if (ft->partial.len && !ft->partial_too_long)
		feed_line(ft, ft->partial.data, ft->partial.len);
	else if (ft->partial_too_long)
		tp_stat_inc(ft->tp, TP_STAT_systrace_parse_failure);
	ft->partial.len = 0;
	ft->partial_too_long = false;
}
