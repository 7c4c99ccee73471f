/*
 * SUM, TOTAL and AVG as SQLite 3.43 and later compute them, which is what
 * Perfetto v58's trace processor (SQLite 3.50) answers. The SQLite 3.40 we
 * link adds reals plainly, so over millions of rows a float sum differed
 * from Perfetto's in the last digits (issue 20); integer sums were already
 * the same and still are.
 *
 *   - While every input is an INTEGER the sum is an exact int64.
 *   - The first REAL (or TEXT/BLOB, read as a number), or the first int64
 *     overflow, switches to a compensated (Kahan-Babuska-Neumaier) sum of
 *     doubles started from the integer sum; an integer of magnitude 2^52 or
 *     more is added as a multiple of 16384 plus the rest, so no bit is lost
 *     on the way to double.
 *   - SUM: NULL over no non-NULL input; the int64 while exact; "integer
 *     overflow" when the integer sum overflowed and no real came after it;
 *     else the real sum plus its error term (the term alone is dropped when
 *     it is infinite or NaN). TOTAL: always a real, 0.0 over nothing. AVG:
 *     the real sum over the count.
 *   - As window functions the inverse step subtracts a row leaving the
 *     frame the same way.
 *
 * Registered over the built-ins on each connection (SQLite looks up
 * functions a connection defines before its built-ins).
 */
#include <math.h>

#include "sql_int.h"

/* Zeroed by SQLite. */
struct sum_acc {
	double r, err; /* the compensated sum is r + err */
	int64_t i;     /* the exact sum while !real */
	int64_t n;     /* non-NULL inputs in the frame */
	bool real;     /* r/err hold the sum */
	bool overflow; /* i overflowed and no real came since */
};

#define KBN_SPLIT 4503599627370496LL /* 2^52 */

static void kbn_add(struct sum_acc *s, double v)
{
	double r = s->r, t = r + v;
	/* The larger operand first (as selects, not a branch: sums of mixed
	 * magnitudes would mispredict it). */
	bool r_big = fabs(r) > fabs(v);
	double big = r_big ? r : v, small = r_big ? v : r;
	s->err += (big - t) + small;
	s->r = t;
}

static void kbn_add_int(struct sum_acc *s, int64_t v)
{
	if (v <= -KBN_SPLIT || v >= KBN_SPLIT) {
		int64_t small = v % 16384;
		kbn_add(s, (double)(v - small));
		kbn_add(s, (double)small);
	} else {
		kbn_add(s, (double)v);
	}
}

/* From here on the sum is real, starting from the integer sum so far. */
static void go_real(struct sum_acc *s)
{
	int64_t v = s->i;
	s->real = true;
	if (v <= -KBN_SPLIT || v >= KBN_SPLIT) {
		int64_t small = v % 16384;
		s->r = (double)(v - small);
		s->err = (double)small;
	} else {
		s->r = (double)v;
		s->err = 0;
	}
}

static void sum_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	int type = sqlite3_value_numeric_type(argv[0]);
	if (type == SQLITE_NULL)
		return;
	struct sum_acc *s = sqlite3_aggregate_context(ctx, sizeof *s);
	if (!s) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	s->n++;
	if (type == SQLITE_INTEGER) {
		int64_t v = sqlite3_value_int64(argv[0]);
		if (!s->real) {
			int64_t x;
			if (!__builtin_add_overflow(s->i, v, &x)) {
				s->i = x;
				return;
			}
			s->overflow = true;
			go_real(s);
		}
		kbn_add_int(s, v);
	} else {
		if (!s->real)
			go_real(s);
		s->overflow = false;
		kbn_add(s, sqlite3_value_double(argv[0]));
	}
}

static void sum_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	int type = sqlite3_value_numeric_type(argv[0]);
	if (type == SQLITE_NULL)
		return;
	struct sum_acc *s = sqlite3_aggregate_context(ctx, sizeof *s);
	if (!s || s->n == 0)
		return;
	s->n--;
	if (type == SQLITE_INTEGER) {
		int64_t v = sqlite3_value_int64(argv[0]);
		if (!s->real) {
			int64_t x;
			if (!__builtin_sub_overflow(s->i, v, &x)) {
				s->i = x;
				return;
			}
			s->overflow = true;
			go_real(s);
		}
		if (v != INT64_MIN) {
			kbn_add_int(s, -v);
		} else {
			kbn_add_int(s, INT64_MAX);
			kbn_add_int(s, 1);
		}
	} else {
		if (!s->real)
			go_real(s);
		kbn_add(s, -sqlite3_value_double(argv[0]));
	}
}

static double real_of(const struct sum_acc *s)
{
	if (!s->real)
		return (double)s->i;
	return isfinite(s->err) ? s->r + s->err : s->r;
}

static void sum_value(sqlite3_context *ctx)
{
	struct sum_acc *s = sqlite3_aggregate_context(ctx, 0);
	if (!s || s->n == 0)
		return; /* NULL */
	if (!s->real)
		sqlite3_result_int64(ctx, s->i);
	else if (s->overflow)
		sqlite3_result_error(ctx, "integer overflow", -1);
	else
		sqlite3_result_double(ctx, real_of(s));
}

static void total_value(sqlite3_context *ctx)
{
	struct sum_acc *s = sqlite3_aggregate_context(ctx, 0);
	sqlite3_result_double(ctx, s ? real_of(s) : 0.0);
}

static void avg_value(sqlite3_context *ctx)
{
	struct sum_acc *s = sqlite3_aggregate_context(ctx, 0);
	if (s && s->n > 0)
		sqlite3_result_double(ctx, real_of(s) / (double)s->n);
}

int tp_sql_register_sums(sqlite3 *db)
{
	static const struct {
		const char *name;
		void (*value)(sqlite3_context *);
	} fns[] = {{"sum", sum_value}, {"total", total_value}, {"avg", avg_value}};
	for (size_t i = 0; i < TB_ARRAY_SIZE(fns); i++) {
		int rc = sqlite3_create_window_function(
		    db, fns[i].name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
		    sum_step, fns[i].value, fns[i].value, sum_inverse, NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}
