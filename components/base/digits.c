/*
 * Digits in text: the one hex-digit decoder, the one decimal-run
 * reader and the one decimal writer that the text parsers and
 * writers share (JSON escapes, perf script addresses,
 * ftrace text fields, tracefs format files, journal ids and fields), so
 * none of them carries its own copy. Pure, any thread.
 */
#include "base.h"

int tb_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

size_t tb_dec_prefix(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	size_t i = 0;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		unsigned d = (unsigned)(s[i] - '0');
		x = x > (UINT64_MAX - d) / 10 ? UINT64_MAX : x * 10 + d;
	}
	*v = x;
	return i;
}

size_t tb_u64_dec(char *out, uint64_t v)
{
	char tmp[20];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}
