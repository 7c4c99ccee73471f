/*
 * Clocks and the human duration and size formats of the command line.
 * Timestamps are int64 nanoseconds; traces use CLOCK_BOOTTIME, timeouts and
 * log lines CLOCK_MONOTONIC. The parsers accept exactly Perfetto's -t and -b
 * syntax (digits, then a lower-case unit suffix) and reject everything else
 * with a message, including a missing suffix, signs, spaces and overflow.
 */
#include "base.h"

#include <errno.h>
#include <time.h>

int64_t tb_now_ns(clockid_t clk)
{
	struct timespec ts;
	if (clock_gettime(clk, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tb_boot_ns(void)
{
	return tb_now_ns(CLOCK_BOOTTIME);
}

int64_t tb_mono_ns(void)
{
	return tb_now_ns(CLOCK_MONOTONIC);
}

int64_t tb_realtime_ns(void)
{
	return tb_now_ns(CLOCK_REALTIME);
}

struct unit {
	const char *suffix;
	uint64_t mult;
};

static const struct unit time_units[] = {
    {"ms", 1},
    {"s", 1000},
    {"m", 60 * 1000},
    {"h", 60 * 60 * 1000},
};

static const struct unit size_units[] = {
    {"kb", 1ull << 10}, {"mb", 1ull << 20}, {"gb", 1ull << 30},
    {"k", 1ull << 10},  {"m", 1ull << 20},  {"g", 1ull << 30},
};

static int parse_units(const char *what, const char *s, const struct unit *units, size_t nunits,
                       uint64_t *out, struct tb_err *err)
{
	uint64_t v = 0;
	const char *p = s;

	if (!s)
		return tb_err_set(err, -EINVAL, "missing %s", what);
	if (*p < '0' || *p > '9')
		return tb_err_set(err, -EINVAL, "bad %s '%s': expected digits then a unit", what,
		                  s);
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*p - '0'), &v))
			return tb_err_set(err, -ERANGE, "%s '%s' is too large", what, s);
	}
	for (size_t i = 0; i < nunits; i++) {
		if (strcmp(p, units[i].suffix) == 0) {
			if (__builtin_mul_overflow(v, units[i].mult, out))
				return tb_err_set(err, -ERANGE, "%s '%s' is too large", what, s);
			return 0;
		}
	}
	return tb_err_set(err, -EINVAL, "bad %s '%s': unknown or missing unit '%s'", what, s, p);
}

int tb_parse_duration_ms(const char *s, uint64_t *ms, struct tb_err *err)
{
	return parse_units("duration", s, time_units, TB_ARRAY_SIZE(time_units), ms, err);
}

int tb_parse_size(const char *s, uint64_t *bytes, struct tb_err *err)
{
	return parse_units("size", s, size_units, TB_ARRAY_SIZE(size_units), bytes, err);
}
