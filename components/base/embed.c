/*
 * Text files build.sh embeds gzip'd (gen_embeds, gen_stdlib: `gzip -9 -n`,
 * the same bytes every build), inflated when first used. The caller owns a
 * static buffer of the text's size, so the text costs the binary only its
 * compressed bytes; zlib's state (about 7 KB, and the 32 KB window) comes
 * from a static scratch area, not the heap, so inflating cannot fail and
 * never shows in the funnel's counts or its failure injection. Not
 * thread-safe: each embedded file is inflated once, on the thread that
 * first needs it.
 */
#include "base.h"

#include <zlib.h>

static _Alignas(16) unsigned char embed_scratch[48 << 10];
static size_t embed_used;

static voidpf embed_zalloc(voidpf opaque, uInt n, uInt size)
{
	size_t bytes;
	if (!tb_mul_ok(n, size, &bytes) || bytes > sizeof embed_scratch - embed_used)
		return Z_NULL;
	void *p = embed_scratch + embed_used;
	embed_used += (bytes + 15) & ~(size_t)15;
	return p;
}

static void embed_zfree(voidpf opaque, voidpf p) {}

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
	embed_used = 0;
	TB_CHECK(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK); /* gzip framing */
	int r = inflate(&z, Z_FINISH);
	inflateEnd(&z);
	TB_CHECK(r == Z_STREAM_END && z.total_out == len);
}
