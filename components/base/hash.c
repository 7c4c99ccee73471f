/*
 * Hash functions for the in-memory tables (hmap, the string pool). Bytes are
 * consumed 16 at a time and folded with a 64x64->128-bit multiply whose
 * halves are xored together, which mixes every input bit into every output
 * bit in one step; tails of 1..16 bytes are read as two possibly overlapping
 * words so there is no byte loop. Integer keys use tb_hash_u64 (base.h).
 */
#include "base.h"

#define K0 0x9e3779b97f4a7c15ull /* odd constants with balanced bits */
#define K1 0xd6e8feb86659fd93ull
#define K2 0xa0761d6478bd642full

static inline uint64_t mix(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	unsigned __int128 r = (unsigned __int128)a * b;
	return (uint64_t)r ^ (uint64_t)(r >> 64);
#else
	uint64_t lo = a * b;
	uint64_t hi = (a >> 32) * (b >> 32) + (((a >> 32) * (b & 0xffffffffu)) >> 32) +
	              (((a & 0xffffffffu) * (b >> 32)) >> 32);
	return lo ^ hi;
#endif
}

static inline uint64_t rd64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static inline uint64_t rd32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return v;
}

uint64_t tb_hash_bytes(const void *data, size_t n, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ mix(seed ^ K0, K1);
	uint64_t a = 0, b = 0;
	size_t len = n;

	while (n > 16) {
		h = mix(rd64(p) ^ K1, rd64(p + 8) ^ h);
		p += 16;
		n -= 16;
	}
	if (n >= 8) {
		a = rd64(p);
		b = rd64(p + n - 8);
	} else if (n >= 4) {
		a = rd32(p);
		b = rd32(p + n - 4);
	} else if (n > 0) {
		a = ((uint64_t)p[0] << 16) | ((uint64_t)p[n >> 1] << 8) | p[n - 1];
	}
	return mix(K2 ^ len, mix(a ^ K1, b ^ h));
}
