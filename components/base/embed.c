/*
 * Text files build.sh embeds gzip'd (gen_embeds, gen_stdlib: `gzip -9 -n`,
 * the same bytes every build), inflated when first used. The caller owns a
 * static buffer of the text's size, so the text costs the binary only its
 * compressed bytes and the heap nothing; zlib's state is the funnel's only
 * while inflating.
 */
#include "base.h"

#include <zlib.h>

static voidpf embed_zalloc(voidpf opaque, uInt n, uInt size)
{
	return tb_calloc(n, size);
}

static void embed_zfree(voidpf opaque, voidpf p)
{
	tb_free(p);
}

void tb_embed_inflate(const unsigned char *gz, size_t gz_len, char *out, size_t len)
{
	TB_CHECK(gz_len <= UINT32_MAX && len <= UINT32_MAX);
	z_stream z;
	memset(&z, 0, sizeof z);
	z.zalloc = embed_zalloc;
	z.zfree = embed_zfree;
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gz_len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)len;
	TB_CHECK(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK); /* gzip framing */
	int r = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	TB_CHECK(r == Z_STREAM_END && z.total_out == len);
}
