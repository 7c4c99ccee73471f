/*
 * Streaming gzip decoding for tp_parse(): the trace processor accepts gzip'd
 * traces of any size without a temporary copy. Multi-member streams (several
 * gzip files concatenated, as `cat a.gz b.gz` or pigz make) are decoded
 * member after member; a truncated or corrupt stream is a fatal error.
 */
#include "io.h"

#include <zlib.h>

#define OUT_CHUNK (256 * 1024)

struct tp_gunzip {
	z_stream zs;
	bool in_member; /* inside a member (not between members) */
	uint8_t *out;
};

struct tp_gunzip *tp_gunzip_new(void)
{
	struct tp_gunzip *g = tb_calloc(1, sizeof *g);
	g->out = tb_malloc(OUT_CHUNK);
	/* 16 + MAX_WBITS: gzip wrapper only. */
	if (inflateInit2(&g->zs, 16 + MAX_WBITS) != Z_OK)
		TB_CHECK(!"inflateInit2");
	return g;
}

void tp_gunzip_free(struct tp_gunzip *g)
{
	if (!g)
		return;
	inflateEnd(&g->zs);
	tb_free(g->out);
	tb_free(g);
}

int tp_gunzip_feed(struct tp_gunzip *g, const uint8_t *p, size_t n, tp_gunzip_sink sink, void *ctx,
                   struct tb_err *err)
{
	g->zs.next_in = (Bytef *)p;
	while (n > 0 || g->zs.avail_in > 0) {
		if (g->zs.avail_in == 0) {
			size_t take = n > UINT32_MAX ? UINT32_MAX : n;
			g->zs.next_in = (Bytef *)p;
			g->zs.avail_in = (uInt)take;
			p += take;
			n -= take;
		}
		if (!g->in_member) {
			/* Bytes after a finished member: another member, or padding. */
			if (g->zs.next_in[0] != 0x1f) {
				if (g->zs.next_in[0] == 0) {
					g->zs.next_in++;
					g->zs.avail_in--;
					continue;
				}
				return tb_err_set(err, -EINVAL, "trailing garbage after gzip data");
			}
			g->in_member = true;
		}
		g->zs.next_out = g->out;
		g->zs.avail_out = OUT_CHUNK;
		int rc = inflate(&g->zs, Z_NO_FLUSH);
		size_t produced = OUT_CHUNK - g->zs.avail_out;
		if (produced) {
			int r = sink(ctx, g->out, produced);
			if (r < 0)
				return r;
		}
		if (rc == Z_STREAM_END) {
			g->in_member = false;
			inflateReset(&g->zs);
		} else if (rc == Z_BUF_ERROR && g->zs.avail_in == 0) {
			break;
		} else if (rc != Z_OK) {
			return tb_err_set(err, -EINVAL, "corrupt gzip data: %s",
			                  g->zs.msg ? g->zs.msg : "inflate failed");
		}
	}
	return 0;
}

int tp_gunzip_finish(struct tp_gunzip *g, struct tb_err *err)
{
	if (g->in_member)
		return tb_err_set(err, -EINVAL, "truncated gzip data");
	return 0;
}
