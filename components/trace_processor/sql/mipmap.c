/*
 * The UI's bucketing operators, virtual tables it creates per track:
 *
 *   CREATE VIRTUAL TABLE t USING __intrinsic_slice_mipmap((SELECT id, ts, dur, depth ...));
 *   SELECT ts, id, count, dur, depth FROM t WHERE in_window_start = S
 *     AND in_window_end = E AND in_window_step = W;
 *
 *   CREATE VIRTUAL TABLE t USING __intrinsic_counter_mipmap((SELECT ts, value ...));
 *   SELECT min_value, max_value, last_ts, last_value FROM t WHERE in_window_start = S ...;
 *
 * The window [S, E) is cut into buckets of W; the bucket edges are the
 * boundaries S, S + W, ..., up to the first >= E. Rows are assigned to
 * buckets by their ts: the rows with ts in [edge_i, edge_i+1), the first
 * bucket also taking the row just before S when it still runs at S (a
 * slice) or when no row starts exactly at S (a counter, whose value holds).
 * A bucket without rows yields nothing. Per bucket:
 *
 *   slices (per depth, depth by depth): the longest slice (the first of
 *     equals) gives ts, id, dur; count is the number of slices;
 *   counters: min and max of the values, the last row's ts and value.
 *
 * As in Perfetto, the rows are read once at CREATE (their order is the
 * subquery's; ts must not decrease within a depth) and each query is
 * answered from segment trees: O(buckets x log rows).
 *
 *   segment tree over n leaves, node i has children 2i, 2i+1, leaves at n+i:
 *
 *        [1: whole]
 *       /          \
 *     [2]          [3]      query [l, r): walk up from n+l and n+r,
 *     / \          / \      folding left and right parts separately so
 *   n+0 n+1 ...  ...  n+r   that "first of equals" keeps its order.
 */
#include <string.h>

#include "sql_int.h"

enum { MM_START, MM_END, MM_STEP, MM_NARGS };

/* ---- slices ------------------------------------------------------------- */

struct mm_slice {
	int64_t dur;
	uint32_t count, idx;
};

static struct mm_slice mm_slice_join(struct mm_slice a, struct mm_slice b)
{
	struct mm_slice r = a.dur < b.dur ? b : a;
	r.count = a.count + b.count;
	return r;
}

struct mm_depth {
	VEC(int64_t) ts;
	VEC(uint32_t) id;
	VEC(struct mm_slice) tree; /* 2n nodes once built */
};

/* Slice query results, then counter ones (union: one cursor type). */
struct mm_row {
	int64_t ts, id, dur, depth;
	uint32_t count;
	double min, max, last;
};

struct mm_vtab {
	sqlite3_vtab base;
	bool counter;
	/* slices */
	struct mm_depth *depths;
	uint32_t ndepths;
	/* counters */
	VEC(int64_t) cts;
	VEC(double) cmin, cmax; /* trees of 2n nodes */
	uint32_t cn;
};

struct mm_cursor {
	sqlite3_vtab_cursor base;
	VEC(struct mm_row) rows;
	size_t at;
};

static const char slice_schema[] =
    "CREATE TABLE x(in_window_start BIGINT HIDDEN, in_window_end BIGINT HIDDEN, "
    "in_window_step BIGINT HIDDEN, ts BIGINT, id BIGINT, count INTEGER, dur BIGINT, "
    "depth INTEGER, PRIMARY KEY(id)) WITHOUT ROWID";
static const char counter_schema[] =
    "CREATE TABLE x(in_window_start BIGINT HIDDEN, in_window_end BIGINT HIDDEN, "
    "in_window_step BIGINT HIDDEN, min_value DOUBLE, max_value DOUBLE, last_ts BIGINT, "
    "last_value DOUBLE, PRIMARY KEY(last_ts)) WITHOUT ROWID";

static void mm_free(struct mm_vtab *v)
{
	for (uint32_t d = 0; d < v->ndepths; d++) {
		vec_release(&v->depths[d].ts);
		vec_release(&v->depths[d].id);
		vec_release(&v->depths[d].tree);
	}
	tb_free(v->depths);
	vec_release(&v->cts);
	vec_release(&v->cmin);
	vec_release(&v->cmax);
	sqlite3_free(v->base.zErrMsg);
	tb_free(v);
}

/* Read the rows of the subquery `sql` into v. An SQLite code, *err set. */
static int mm_load(sqlite3 *db, struct mm_vtab *v, const char *sql, char **err)
{
	sqlite3_stmt *st = NULL;
	char *q = sqlite3_mprintf("SELECT * FROM %s", sql);
	int rc = q ? sqlite3_prepare_v2(db, q, -1, &st, NULL) : SQLITE_NOMEM;
	sqlite3_free(q);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
		return rc;
	}
	VEC(double) vals = VEC_INIT;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (v->counter) {
			vec_push(&v->cts, sqlite3_column_int64(st, 0));
			vec_push(&vals, sqlite3_column_double(st, 1));
			continue;
		}
		int64_t id = sqlite3_column_int64(st, 0), depth = sqlite3_column_int64(st, 3);
		if (id < 0 || id > UINT32_MAX || depth < 0 || depth > 100000) {
			*err = sqlite3_mprintf("slice_mipmap: id %lld or depth %lld out of range",
			                       (long long)id, (long long)depth);
			rc = SQLITE_ERROR;
			break;
		}
		if ((uint32_t)depth >= v->ndepths) {
			v->depths = tb_realloc(v->depths, ((size_t)depth + 1) * sizeof *v->depths);
			memset(v->depths + v->ndepths, 0,
			       ((size_t)depth + 1 - v->ndepths) * sizeof *v->depths);
			v->ndepths = (uint32_t)depth + 1;
		}
		struct mm_depth *d = &v->depths[depth];
		vec_push(&d->ts, sqlite3_column_int64(st, 1));
		vec_push(&d->id, (uint32_t)id);
		struct mm_slice leaf = {sqlite3_column_int64(st, 2), 1, (uint32_t)d->ts.len - 1};
		vec_push(&d->tree, leaf);
	}
	if (rc == SQLITE_DONE)
		rc = SQLITE_OK;
	else if (rc != SQLITE_OK && !*err)
		*err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	if (rc != SQLITE_OK) {
		vec_release(&vals);
		return rc;
	}
	/* Build the trees: leaves at n..2n-1, internal nodes below. */
	for (uint32_t k = 0; k < v->ndepths; k++) {
		struct mm_depth *d = &v->depths[k];
		size_t n = d->tree.len;
		vec_resize(&d->tree, 2 * n);
		memmove(d->tree.data + n, d->tree.data, n * sizeof *d->tree.data);
		for (size_t i = n; i-- > 1;)
			d->tree.data[i] =
			    mm_slice_join(d->tree.data[2 * i], d->tree.data[2 * i + 1]);
	}
	if (v->counter) {
		size_t n = vals.len;
		v->cn = (uint32_t)n;
		vec_reserve(&v->cmin, 2 * n + 1);
		vec_reserve(&v->cmax, 2 * n + 1);
		v->cmin.len = v->cmax.len = 2 * n;
		for (size_t i = 0; i < n; i++)
			v->cmin.data[n + i] = v->cmax.data[n + i] = vals.data[i];
		for (size_t i = n; i-- > 1;) {
			double a = v->cmin.data[2 * i], b = v->cmin.data[2 * i + 1];
			v->cmin.data[i] = b < a ? b : a;
			a = v->cmax.data[2 * i], b = v->cmax.data[2 * i + 1];
			v->cmax.data[i] = b > a ? b : a;
		}
	}
	vec_release(&vals);
	return SQLITE_OK;
}

/* The longest slice of rows [l, r) of d, in order. */
static struct mm_slice slice_query(const struct mm_depth *d, size_t l, size_t r)
{
	size_t n = d->ts.len;
	struct mm_slice left = {INT64_MIN, 0, 0}, right = {INT64_MIN, 0, 0};
	bool hl = false, hr = false;
	for (l += n, r += n; l < r; l /= 2, r /= 2) {
		if (l & 1) {
			left = hl ? mm_slice_join(left, d->tree.data[l]) : d->tree.data[l];
			hl = true, l++;
		}
		if (r & 1) {
			--r;
			right = hr ? mm_slice_join(d->tree.data[r], right) : d->tree.data[r];
			hr = true;
		}
	}
	return !hl ? right : !hr ? left : mm_slice_join(left, right);
}

static void counter_query(const struct mm_vtab *v, size_t l, size_t r, double *mn, double *mx)
{
	size_t n = v->cn;
	*mn = v->cmin.data[n + l], *mx = v->cmax.data[n + l];
	for (l += n, r += n; l < r; l /= 2, r /= 2) {
		if (l & 1) {
			if (v->cmin.data[l] < *mn)
				*mn = v->cmin.data[l];
			if (v->cmax.data[l] > *mx)
				*mx = v->cmax.data[l];
			l++;
		}
		if (r & 1) {
			--r;
			if (v->cmin.data[r] < *mn)
				*mn = v->cmin.data[r];
			if (v->cmax.data[r] > *mx)
				*mx = v->cmax.data[r];
		}
	}
}

/* First index of ts[0..n) with ts >= x. */
static size_t lower_bound(const int64_t *ts, size_t n, int64_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ts[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- the module ----------------------------------------------------------- */

static int mm_create(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                     char **err)
{
	bool counter = aux != NULL;
	if (argc != 4) {
		*err = sqlite3_mprintf("%s: wrong number of arguments",
		                       counter ? "counter_mipmap" : "slice_mipmap");
		return SQLITE_ERROR;
	}
	int rc = sqlite3_declare_vtab(db, counter ? counter_schema : slice_schema);
	if (rc != SQLITE_OK)
		return rc;
	struct mm_vtab *v = tb_calloc(1, sizeof *v);
	v->counter = counter;
	rc = mm_load(db, v, argv[3], err);
	if (rc != SQLITE_OK) {
		mm_free(v);
		return rc;
	}
	*out = &v->base;
	return SQLITE_OK;
}

static int mm_disconnect(sqlite3_vtab *vt)
{
	mm_free((struct mm_vtab *)vt);
	return SQLITE_OK;
}

/* The three window arguments must all be bound by equality. */
static int mm_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	int found = 0;
	(void)vt;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		if (c->iColumn < 0 || c->iColumn >= MM_NARGS)
			continue;
		if (c->op != SQLITE_INDEX_CONSTRAINT_EQ || !c->usable)
			return SQLITE_CONSTRAINT;
		info->aConstraintUsage[i].argvIndex = c->iColumn + 1;
		info->aConstraintUsage[i].omit = 1;
		found |= 1 << c->iColumn;
	}
	if (found != (1 << MM_NARGS) - 1)
		return SQLITE_CONSTRAINT;
	info->estimatedCost = 1000;
	return SQLITE_OK;
}

static int mm_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	(void)vt;
	struct mm_cursor *c = tb_calloc(1, sizeof *c);
	*out = &c->base;
	return SQLITE_OK;
}

static int mm_close(sqlite3_vtab_cursor *cur)
{
	struct mm_cursor *c = (struct mm_cursor *)cur;
	vec_release(&c->rows);
	tb_free(c);
	return SQLITE_OK;
}

/* The bucket edges of [start, end) by step: start, then start + step, ...
 * up to the first >= end. */
#define MM_MAX_BUCKETS 1000000

static int mm_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc,
                     sqlite3_value **argv)
{
	struct mm_cursor *c = (struct mm_cursor *)cur;
	struct mm_vtab *v = (struct mm_vtab *)cur->pVtab;
	(void)idx, (void)idx_str;
	vec_clear(&c->rows);
	c->at = 0;
	if (argc != MM_NARGS)
		return SQLITE_ERROR;
	int64_t start = sqlite3_value_int64(argv[0]), end = sqlite3_value_int64(argv[1]),
	        step = sqlite3_value_int64(argv[2]);
	if (step <= 0 || end < start || (end - start) / step > MM_MAX_BUCKETS) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg =
		    sqlite3_mprintf("mipmap: bad window (start %lld, end %lld, step %lld)",
		                    (long long)start, (long long)end, (long long)step);
		return SQLITE_ERROR;
	}
	if (v->counter) {
		const int64_t *ts = v->cts.data;
		size_t n = v->cts.len, s = lower_bound(ts, n, start);
		if (s != 0 && (s == n || ts[s] != start))
			s--;
		for (int64_t e = start; e < end;) {
			e = e > INT64_MAX - step ? INT64_MAX : e + step;
			size_t t = lower_bound(ts, n, e);
			if (t == s)
				continue;
			struct mm_row *r = vec_push_zeroed(&c->rows);
			counter_query(v, s, t, &r->min, &r->max);
			r->ts = ts[t - 1];
			r->last = v->cmin.data[v->cn + t - 1];
			s = t;
		}
		return SQLITE_OK;
	}
	for (uint32_t k = 0; k < v->ndepths; k++) {
		const struct mm_depth *d = &v->depths[k];
		const int64_t *ts = d->ts.data;
		size_t n = d->ts.len, s = lower_bound(ts, n, start);
		/* The slice just before the window joins the first bucket while it
		 * still runs at start. */
		if (s != 0 &&
		    (s == n || (ts[s] != start && ts[s] + d->tree.data[n + s].dur > start)))
			s--;
		for (int64_t e = start; e < end;) {
			e = e > INT64_MAX - step ? INT64_MAX : e + step;
			size_t t = lower_bound(ts, n, e);
			if (t == s)
				continue;
			struct mm_slice m = slice_query(d, s, t);
			struct mm_row *r = vec_push_zeroed(&c->rows);
			r->ts = ts[m.idx];
			r->id = d->id.data[m.idx];
			r->dur = m.dur;
			r->count = m.count;
			r->depth = k;
			s = t;
		}
	}
	return SQLITE_OK;
}

static int mm_next(sqlite3_vtab_cursor *cur)
{
	((struct mm_cursor *)cur)->at++;
	return SQLITE_OK;
}

static int mm_eof(sqlite3_vtab_cursor *cur)
{
	struct mm_cursor *c = (struct mm_cursor *)cur;
	return c->at >= c->rows.len;
}

static int mm_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct mm_cursor *c = (struct mm_cursor *)cur;
	const struct mm_row *r = &c->rows.data[c->at];
	if (((struct mm_vtab *)cur->pVtab)->counter) {
		switch (i) {
		case 3:
			sqlite3_result_double(ctx, r->min);
			break;
		case 4:
			sqlite3_result_double(ctx, r->max);
			break;
		case 5:
			sqlite3_result_int64(ctx, r->ts);
			break;
		case 6:
			sqlite3_result_double(ctx, r->last);
			break;
		}
		return SQLITE_OK;
	}
	switch (i) {
	case 3:
		sqlite3_result_int64(ctx, r->ts);
		break;
	case 4:
		sqlite3_result_int64(ctx, r->id);
		break;
	case 5:
		sqlite3_result_int64(ctx, r->count);
		break;
	case 6:
		sqlite3_result_int64(ctx, r->dur);
		break;
	case 7:
		sqlite3_result_int64(ctx, r->depth);
		break;
	}
	return SQLITE_OK;
}

static int mm_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct mm_cursor *)cur)->at;
	return SQLITE_OK;
}

static const sqlite3_module mm_module = {
    .iVersion = 0,
    .xCreate = mm_create,
    .xConnect = mm_create, /* the rows are read again */
    .xBestIndex = mm_best_index,
    .xDisconnect = mm_disconnect,
    .xDestroy = mm_disconnect,
    .xOpen = mm_open,
    .xClose = mm_close,
    .xFilter = mm_filter,
    .xNext = mm_next,
    .xEof = mm_eof,
    .xColumn = mm_column,
    .xRowid = mm_rowid,
};

int tp_sql_register_mipmaps(sqlite3 *db)
{
	static const int counter = 1;
	int rc = sqlite3_create_module_v2(db, "__intrinsic_slice_mipmap", &mm_module, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_module_v2(db, "__intrinsic_counter_mipmap", &mm_module,
		                              (void *)&counter, NULL);
	return rc;
}
