/*
 * memcmp a word at a time. musl's compares a byte at a time; SQLite's
 * text comparisons (BINARY collation, the sorter of GROUP BY / ORDER BY on
 * text) and the string pool's lookups spend a tenth of a text-keyed
 * query in it. The release builds (static, musl) take this one as
 * memcmp; glibc builds (development, ASan, fuzzing) keep glibc's and its
 * sanitizer interceptors, and test tb_memcmp by name. Pure, any thread.
 */
#include "base.h"

#include <string.h>

/* Big-endian order of 8 or 4 little-endian bytes, so that an integer
 * compare orders them as memcmp does. */
static inline uint64_t load_be64(const unsigned char *p)
{
	uint64_t x;
	memcpy(&x, p, sizeof x);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x);
#endif
	return x;
}

static inline uint32_t load_be32(const unsigned char *p)
{
	uint32_t x;
	memcpy(&x, p, sizeof x);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap32(x);
#endif
	return x;
}

int tb_memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *l = a, *r = b;

	for (; n >= 8; n -= 8, l += 8, r += 8) {
		uint64_t x = load_be64(l), y = load_be64(r);
		if (x != y)
			return x < y ? -1 : 1;
	}
	if (n >= 4) {
		/* The first 4 and the last 4 (overlapping when n < 8). */
		uint32_t x = load_be32(l), y = load_be32(r);
		if (x != y)
			return x < y ? -1 : 1;
		x = load_be32(l + n - 4);
		y = load_be32(r + n - 4);
		if (x != y)
			return x < y ? -1 : 1;
		return 0;
	}
	for (; n; n--, l++, r++)
		if (*l != *r)
			return *l < *r ? -1 : 1;
	return 0;
}

#if !defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
int memcmp(const void *a, const void *b, size_t n) __attribute__((alias("tb_memcmp")));
#endif
