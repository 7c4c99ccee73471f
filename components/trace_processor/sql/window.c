/*
 * Window functions of Perfetto's prelude:
 *
 *   LAST_NON_NULL(v)        the last non-NULL value of the window frame, any
 *                           frame (the inverse step drops the frame's first
 *                           row), NULL if there is none
 *   INTERNAL_LAYOUT(ts, dur) the lane of each interval when intervals are
 *                           packed greedily in ts order: the lowest lane
 *                           free at ts (a lane frees when its interval ends;
 *                           dur 0 takes a lane only for that row, dur -1
 *                           never ends). Only the frame "ROWS BETWEEN
 *                           UNBOUNDED PRECEDING AND CURRENT ROW" ORDER BY ts
 *                           makes sense; anything else is an error.
 *
 * The state lives in SQLite's aggregate context: one per partition.
 */
#include "sql_int.h"

/* ---- LAST_NON_NULL --------------------------------------------------------- */

/* Zeroed by SQLite. `idx` is the position of `v` among the frame's rows. */
struct last_non_null {
	int64_t rows, idx;
	sqlite3_value *v;
};

static void lnn_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct last_non_null *s = sqlite3_aggregate_context(ctx, sizeof *s);
	if (!s) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	s->rows++;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	sqlite3_value *v = sqlite3_value_dup(argv[0]);
	if (!v) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_value_free(s->v);
	s->v = v;
	s->idx = s->rows - 1;
}

static void lnn_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct last_non_null *s = sqlite3_aggregate_context(ctx, sizeof *s);
	if (!s || s->rows == 0)
		return;
	s->rows--;
	if (!s->v)
		return;
	if (s->idx == 0) { /* the value's row left the frame */
		sqlite3_value_free(s->v);
		s->v = NULL;
	} else {
		s->idx--;
	}
}

static void lnn_value(sqlite3_context *ctx)
{
	struct last_non_null *s = sqlite3_aggregate_context(ctx, 0);
	if (s && s->v)
		sqlite3_result_value(ctx, s->v);
}

static void lnn_final(sqlite3_context *ctx)
{
	struct last_non_null *s = sqlite3_aggregate_context(ctx, 0);
	if (!s)
		return;
	if (s->v)
		sqlite3_result_value(ctx, s->v);
	sqlite3_value_free(s->v);
	s->v = NULL;
}

/* ---- INTERNAL_LAYOUT ------------------------------------------------------- */

struct lane_end {
	int64_t ts;
	uint32_t lane;
};

/* Lanes in use and a min-heap of when they end. */
struct layout {
	bool stepped; /* a step not yet followed by a value */
	int64_t last_ts;
	uint32_t last_lane;
	VEC(bool) busy;
	VEC(struct lane_end) ends;
};

static void heap_push(struct layout *l, struct lane_end e)
{
	vec_push(&l->ends, e);
	size_t i = l->ends.len - 1;
	while (i > 0 && l->ends.data[(i - 1) / 2].ts > l->ends.data[i].ts) {
		struct lane_end t = l->ends.data[i];
		l->ends.data[i] = l->ends.data[(i - 1) / 2];
		l->ends.data[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static void heap_pop(struct layout *l)
{
	l->ends.data[0] = l->ends.data[--l->ends.len];
	for (size_t i = 0;;) {
		size_t m = i, a = 2 * i + 1, b = a + 1;
		if (a < l->ends.len && l->ends.data[a].ts < l->ends.data[m].ts)
			m = a;
		if (b < l->ends.len && l->ends.data[b].ts < l->ends.data[m].ts)
			m = b;
		if (m == i)
			break;
		struct lane_end t = l->ends.data[i];
		l->ends.data[i] = l->ends.data[m];
		l->ends.data[m] = t;
		i = m;
	}
}

static struct layout **layout_ctx(sqlite3_context *ctx, bool create)
{
	return sqlite3_aggregate_context(ctx, create ? (int)sizeof(struct layout *) : 0);
}

static void layout_free(struct layout *l)
{
	vec_release(&l->busy);
	vec_release(&l->ends);
	tb_free(l);
}

static const char *layout_add(struct layout *l, int64_t ts, int64_t dur)
{
	if (l->stepped)
		return "INTERNAL_LAYOUT: two steps without a value: the window clause should be "
		       "\"ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW\"";
	if (ts < l->last_ts)
		return "INTERNAL_LAYOUT: rows are not sorted by ts: add \"ORDER BY ts\" to the "
		       "window clause";
	l->stepped = true;
	l->last_ts = ts;
	while (l->ends.len && l->ends.data[0].ts <= ts) {
		l->busy.data[l->ends.data[0].lane] = false;
		heap_pop(l);
	}
	uint32_t lane = 0;
	while (lane < l->busy.len && l->busy.data[lane])
		lane++;
	if (lane == l->busy.len)
		vec_push(&l->busy, false);
	/* An instant leaves its lane free for the next row. */
	l->busy.data[lane] = dur != 0;
	if (dur != 0)
		heap_push(l, (struct lane_end){dur == -1 ? INT64_MAX : ts + dur, lane});
	l->last_lane = lane;
	return NULL;
}

static void layout_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct layout **pl = layout_ctx(ctx, true);
	if (!pl) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (!*pl)
		*pl = tb_calloc(1, sizeof **pl);
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "INTERNAL_LAYOUT: ts must be an integer", -1);
		return;
	}
	if (sqlite3_value_type(argv[1]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "INTERNAL_LAYOUT: dur must be an integer", -1);
		return;
	}
	int64_t ts = sqlite3_value_int64(argv[0]), dur = sqlite3_value_int64(argv[1]);
	const char *err = ts < 0     ? "INTERNAL_LAYOUT: ts cannot be negative."
	                  : dur < -1 ? "INTERNAL_LAYOUT: dur cannot be < -1."
	                             : layout_add(*pl, ts, dur);
	if (err)
		sqlite3_result_error(ctx, err, -1);
}

static void layout_inverse(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	sqlite3_result_error(ctx,
	                     "INTERNAL_LAYOUT: the window clause should be \"ROWS BETWEEN "
	                     "UNBOUNDED PRECEDING AND CURRENT ROW\"",
	                     -1);
}

static void layout_value(sqlite3_context *ctx)
{
	struct layout **pl = layout_ctx(ctx, false);
	if (!pl || !*pl)
		return;
	(*pl)->stepped = false;
	sqlite3_result_int64(ctx, (*pl)->last_lane);
}

static void layout_final(sqlite3_context *ctx)
{
	struct layout **pl = layout_ctx(ctx, false);
	if (!pl || !*pl)
		return;
	sqlite3_result_int64(ctx, (*pl)->last_lane);
	layout_free(*pl);
	*pl = NULL;
}

int tp_sql_register_window(sqlite3 *db)
{
	int rc = sqlite3_create_window_function(db, "last_non_null", 1,
	                                        SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, lnn_step,
	                                        lnn_final, lnn_value, lnn_inverse, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_window_function(
		    db, "internal_layout", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, layout_step,
		    layout_final, layout_value, layout_inverse, NULL);
	return rc;
}
