/*
 * One-shot zlib inflation for payloads embedded in traces (TracePacket
 * compressed_packets, zlib'd systrace sections), capped so a small hostile
 * payload cannot expand without bound.
 */
#include "io.h"

#include <errno.h>
#include <zlib.h>

int tp_zlib_inflate(const uint8_t *p, size_t n, size_t max_out, uint8_t **out, size_t *out_len)
{
	z_stream zs = {0};
	size_t cap = n * 4 + 1024, len = 0;
	if (cap > max_out)
		cap = max_out;
	uint8_t *buf = tb_malloc(cap);
	int rc = -EINVAL;
	if (n > UINT32_MAX || inflateInit(&zs) != Z_OK)
		goto out;
	zs.next_in = (Bytef *)p;
	zs.avail_in = (uInt)n;
	for (;;) {
		if (len == cap) {
			if (cap >= max_out) {
				rc = -EFBIG;
				goto out;
			}
			cap = cap * 2 > max_out ? max_out : cap * 2;
			buf = tb_realloc(buf, cap);
		}
		zs.next_out = buf + len;
		zs.avail_out = (uInt)(cap - len > UINT32_MAX ? UINT32_MAX : cap - len);
		size_t before = zs.avail_out;
		int z = inflate(&zs, Z_NO_FLUSH);
		len += before - zs.avail_out;
		if (z == Z_STREAM_END) {
			rc = 0;
			goto out;
		}
		if (z != Z_OK && !(z == Z_BUF_ERROR && zs.avail_out == 0))
			goto out;
	}
out:
	inflateEnd(&zs);
	if (rc == 0) {
		*out = buf;
		*out_len = len;
	} else {
		tb_free(buf);
	}
	return rc;
}
