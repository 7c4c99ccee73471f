/*
 * LZ4 block decoding, for journal DATA objects compressed with LZ4
 * (systemd writes a little-endian u64 of the decompressed size, then one
 * LZ4 block; file.c strips the size). Written from the LZ4 block format
 * description:
 *
 *   sequence := token [literal-length bytes] literals [offset match-length bytes]
 *   token    := high nibble: literal count (15: add following bytes while 255)
 *               low nibble:  match length - 4 (15: likewise)
 *   offset   := u16 little-endian, 1..bytes already decoded
 *
 * The last sequence has literals only. Matches may overlap their own output
 * (offset < length), so they are copied forward byte by byte when close.
 */
#include "journald.h"

/* A length continued by 255-bytes: add them to *len. false when the input
 * ends inside it or the total overflows. */
static bool more_len(const uint8_t **p, const uint8_t *end, size_t *len)
{
	uint8_t b;
	do {
		if (*p >= end)
			return false;
		b = *(*p)++;
		if (*len > SIZE_MAX - 255)
			return false;
		*len += b;
	} while (b == 255);
	return true;
}

ssize_t probes_journal_lz4_block(const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                                 bool *truncated)
{
	const uint8_t *p = src, *end = src + n;
	size_t out = 0;

	*truncated = false;
	if (n == 0)
		return -EINVAL;
	for (;;) {
		if (p >= end)
			return -EINVAL;
		uint8_t token = *p++;
		size_t lit = token >> 4;
		if (lit == 15 && !more_len(&p, end, &lit))
			return -EINVAL;
		if (lit > (size_t)(end - p))
			return -EINVAL;
		size_t take = lit <= cap - out ? lit : cap - out;
		memcpy(dst + out, p, take);
		out += take;
		p += lit;
		if (take < lit) {
			*truncated = true;
			return (ssize_t)out;
		}
		if (p == end)
			return (ssize_t)out; /* the last sequence: literals only */
		if (end - p < 2)
			return -EINVAL;
		size_t off = (size_t)p[0] | (size_t)p[1] << 8;
		p += 2;
		if (off == 0 || off > out)
			return -EINVAL;
		size_t mlen = token & 15;
		if (mlen == 15 && !more_len(&p, end, &mlen))
			return -EINVAL;
		mlen += 4;
		if (mlen > cap - out) {
			mlen = cap - out;
			*truncated = true;
		}
		const uint8_t *from = dst + out - off;
		if (off >= mlen) {
			memcpy(dst + out, from, mlen);
		} else {
			for (size_t i = 0; i < mlen; i++)
				dst[out + i] = from[i];
		}
		out += mlen;
		if (*truncated)
			return (ssize_t)out;
	}
}
