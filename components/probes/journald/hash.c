/*
 * The two hash functions of the journal format. Files with the KEYED_HASH
 * flag hash DATA and FIELD payloads with SipHash-2-4 keyed by the file's
 * file_id; older files, and every entry's xor_hash, use Bob Jenkins'
 * lookup3 hashlittle2 (both seeds 0; its first 32-bit result is the high
 * half). Both are written here from their published descriptions; they read
 * bytes one at a time as little-endian words, so alignment and host byte
 * order do not matter.
 */
#include "journald.h"

static inline uint32_t rol32(uint32_t x, unsigned k)
{
	return (x << k) | (x >> (32 - k));
}

static inline uint64_t rol64(uint64_t x, unsigned k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

/* lookup3's mix and final rounds. */
#define JENKINS_MIX(a, b, c)                       \
	do {                                       \
		a -= c, a ^= rol32(c, 4), c += b;  \
		b -= a, b ^= rol32(a, 6), a += c;  \
		c -= b, c ^= rol32(b, 8), b += a;  \
		a -= c, a ^= rol32(c, 16), c += b; \
		b -= a, b ^= rol32(a, 19), a += c; \
		c -= b, c ^= rol32(b, 4), b += a;  \
	} while (0)

#define JENKINS_FINAL(a, b, c)             \
	do {                               \
		c ^= b, c -= rol32(b, 14); \
		a ^= c, a -= rol32(c, 11); \
		b ^= a, b -= rol32(a, 25); \
		c ^= b, c -= rol32(b, 16); \
		a ^= c, a -= rol32(c, 4);  \
		b ^= a, b -= rol32(a, 14); \
		c ^= b, c -= rol32(b, 24); \
	} while (0)

uint64_t probes_journal_jenkins64(const void *data, size_t n)
{
	const uint8_t *k = data;
	uint32_t a, b, c;
	a = b = c = 0xdeadbeefu + (uint32_t)n;
	while (n > 12) {
		a += le32(k);
		b += le32(k + 4);
		c += le32(k + 8);
		JENKINS_MIX(a, b, c);
		n -= 12;
		k += 12;
	}
	if (n == 0) /* only for empty input: no final round */
		return (uint64_t)c << 32 | b;
	/* The last 1..12 bytes, zero-padded. */
	uint8_t tail[12] = {0};
	memcpy(tail, k, n);
	a += le32(tail);
	b += le32(tail + 4);
	c += le32(tail + 8);
	JENKINS_FINAL(a, b, c);
	return (uint64_t)c << 32 | b;
}

#define SIP_ROUND(v0, v1, v2, v3)                                           \
	do {                                                                \
		v0 += v1, v1 = rol64(v1, 13), v1 ^= v0, v0 = rol64(v0, 32); \
		v2 += v3, v3 = rol64(v3, 16), v3 ^= v2;                     \
		v0 += v3, v3 = rol64(v3, 21), v3 ^= v0;                     \
		v2 += v1, v1 = rol64(v1, 17), v1 ^= v2, v2 = rol64(v2, 32); \
	} while (0)

uint64_t probes_journal_siphash24(const void *data, size_t n, const uint8_t key[16])
{
	const uint8_t *p = data;
	uint64_t k0 = le64(key), k1 = le64(key + 8);
	uint64_t v0 = k0 ^ 0x736f6d6570736575ull;
	uint64_t v1 = k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ull;
	uint64_t v3 = k1 ^ 0x7465646279746573ull;
	size_t left = n;

	for (; left >= 8; left -= 8, p += 8) {
		uint64_t m = le64(p);
		v3 ^= m;
		SIP_ROUND(v0, v1, v2, v3);
		SIP_ROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	uint8_t tail[8] = {0};
	memcpy(tail, p, left);
	uint64_t m = le64(tail) | (uint64_t)(n & 0xff) << 56;
	v3 ^= m;
	SIP_ROUND(v0, v1, v2, v3);
	SIP_ROUND(v0, v1, v2, v3);
	v0 ^= m;
	v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		SIP_ROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
