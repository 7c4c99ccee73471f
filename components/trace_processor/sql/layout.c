/*
 * experimental_slice_layout(track_ids): the rows the UI uses to draw the
 * slices of several tracks in one (the async slices of a process, say)
 * without overlaps. track_ids is a comma separated list of track ids; the
 * result is (id, layout_depth) for every slice on those tracks, in id order.
 *
 * Layout, as Perfetto's: the slices of one root (a slice without parent)
 * and its descendants form a group spanning [root ts, latest end) (an
 * unfinished slice, dur -1, runs forever) and max_depth + 1 rows. Groups
 * are placed deepest first, then by start, each at the lowest row from
 * which max_depth + 1 consecutive rows are free over its whole span; a
 * slice's layout_depth is its depth plus its group's row. Results are
 * cached per track list (the UI asks for the same lists at every redraw).
 */
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

struct lay_group {
	int64_t start, end;
	uint32_t max_depth, row, order;
};

/* One row of the layout: the [start, end) spans marked on it, sorted. */
struct lay_span {
	int64_t start, end;
};
struct lay_row {
	VEC(struct lay_span) v;
};

struct lay_result {
	char *key;
	VEC(uint32_t) ids;
	VEC(uint32_t) depths;
	struct lay_result *next;
};

#define LAY_CACHE_MAX 256

struct lay_vtab {
	sqlite3_vtab base;
	struct tp_sql *sql;
	struct lay_result *cache;
	unsigned ncache;
};

struct lay_cursor {
	sqlite3_vtab_cursor base;
	const struct lay_result *res;
	size_t at;
	sqlite3_value *arg;
};

static size_t span_lower_bound(const struct lay_row *r, int64_t ts)
{
	size_t lo = 0, hi = r->v.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->v.data[mid].start < ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool row_free(const struct lay_row *r, int64_t start, int64_t end)
{
	if (!r->v.len || start >= r->v.data[r->v.len - 1].end)
		return true;
	size_t i = span_lower_bound(r, start);
	if (i < r->v.len && r->v.data[i].start < end)
		return false;
	return !(i > 0 && r->v.data[i - 1].end > start);
}

static void row_mark(struct lay_row *r, int64_t start, int64_t end)
{
	size_t i = span_lower_bound(r, start);
	vec_push_zeroed(&r->v);
	memmove(r->v.data + i + 1, r->v.data + i, (r->v.len - 1 - i) * sizeof *r->v.data);
	r->v.data[i] = (struct lay_span){start, end};
}

static const struct lay_group *sort_groups;

static int group_cmp(const void *a, const void *b)
{
	const struct lay_group *x = &sort_groups[*(const uint32_t *)a],
	                       *y = &sort_groups[*(const uint32_t *)b];
	if (x->max_depth != y->max_depth)
		return x->max_depth > y->max_depth ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Compute the layout of the tracks listed in key into res. */
static void layout(const struct tp *tp, const char *key, struct lay_result *res)
{
	const struct tp_slice_table *s = &tp->t.slice;
	VEC(uint32_t) tracks = VEC_INIT, slice_group = VEC_INIT, order = VEC_INIT;
	VEC(struct lay_group) groups = VEC_INIT;
	VEC(struct lay_row) rows = VEC_INIT;
	uint32_t *group_of = NULL; /* slice row -> group, for parents */
	for (const char *p = key; *p;) {
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (end != p && v <= UINT32_MAX && (*end == ',' || !*end))
			vec_push(&tracks, (uint32_t)v);
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	qsort(tracks.data, tracks.len, sizeof *tracks.data, u32_cmp);
	if (!tracks.len || !s->n)
		goto out;
	group_of = tb_malloc((size_t)s->n * sizeof *group_of);
	for (uint32_t i = 0; i < s->n; i++) {
		group_of[i] = UINT32_MAX;
		if (!bsearch(&s->track_id[i], tracks.data, tracks.len, sizeof *tracks.data,
		             u32_cmp))
			continue;
		int64_t start = s->ts[i], dur = s->dur[i];
		int64_t end = dur == -1 ? INT64_MAX : start + dur;
		uint32_t parent = s->parent_id[i], g;
		if (parent != TP_NULL_U32 && parent < i && group_of[parent] != UINT32_MAX) {
			g = group_of[parent];
			struct lay_group *gr = &groups.data[g];
			if (s->depth[i] > gr->max_depth)
				gr->max_depth = s->depth[i];
			if (end > gr->end)
				gr->end = end;
		} else {
			g = (uint32_t)groups.len;
			struct lay_group *gr = vec_push_zeroed(&groups);
			gr->start = start, gr->end = end, gr->max_depth = s->depth[i];
		}
		group_of[i] = g;
		vec_push(&res->ids, i);
		vec_push(&slice_group, g);
	}
	for (uint32_t g = 0; g < groups.len; g++)
		vec_push(&order, g);
	sort_groups = groups.data;
	qsort(order.data, order.len, sizeof *order.data, group_cmp);
	for (size_t k = 0; k < order.len; k++) {
		struct lay_group *gr = &groups.data[order.data[k]];
		uint32_t first = 0, run = 0;
		for (uint32_t r = 0;; r++) {
			if (r >= rows.len || row_free(&rows.data[r], gr->start, gr->end)) {
				if (run == 0)
					first = r;
				if (++run == gr->max_depth + 1)
					break;
			} else {
				run = 0;
			}
		}
		gr->row = first;
		uint32_t top = first + gr->max_depth;
		if (rows.len <= top)
			vec_resize(&rows, (size_t)top + 1);
		for (uint32_t r = first; r <= top; r++)
			row_mark(&rows.data[r], gr->start, gr->end);
	}
	for (size_t i = 0; i < res->ids.len; i++)
		vec_push(&res->depths,
		         s->depth[res->ids.data[i]] + groups.data[slice_group.data[i]].row);
out:
	for (size_t r = 0; r < rows.len; r++)
		vec_release(&rows.data[r].v);
	vec_release(&rows);
	vec_release(&tracks);
	vec_release(&slice_group);
	vec_release(&order);
	vec_release(&groups);
	tb_free(group_of);
}

static int lay_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                       sqlite3_vtab **out, char **err)
{
	(void)argc, (void)argv, (void)err;
	int rc = sqlite3_declare_vtab(
	    db, "CREATE TABLE x(id BIGINT, layout_depth BIGINT, filter_track_ids HIDDEN)");
	if (rc != SQLITE_OK)
		return rc;
	struct lay_vtab *v = tb_calloc(1, sizeof *v);
	v->sql = aux;
	*out = &v->base;
	return SQLITE_OK;
}

static int lay_disconnect(sqlite3_vtab *vt)
{
	struct lay_vtab *v = (struct lay_vtab *)vt;
	while (v->cache) {
		struct lay_result *r = v->cache;
		v->cache = r->next;
		tb_free(r->key);
		vec_release(&r->ids);
		vec_release(&r->depths);
		tb_free(r);
	}
	sqlite3_free(v->base.zErrMsg);
	tb_free(v);
	return SQLITE_OK;
}

static int lay_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		if (c->iColumn != 2)
			continue;
		if (c->op != SQLITE_INDEX_CONSTRAINT_EQ || !c->usable)
			return SQLITE_CONSTRAINT;
		info->aConstraintUsage[i].argvIndex = 1;
		info->aConstraintUsage[i].omit = 1;
		info->estimatedCost = 1000;
		return SQLITE_OK;
	}
	return SQLITE_CONSTRAINT;
}

static int lay_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	(void)vt;
	struct lay_cursor *c = tb_calloc(1, sizeof *c);
	*out = &c->base;
	return SQLITE_OK;
}

static int lay_close(sqlite3_vtab_cursor *cur)
{
	struct lay_cursor *c = (struct lay_cursor *)cur;
	sqlite3_value_free(c->arg);
	tb_free(c);
	return SQLITE_OK;
}

static int lay_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc,
                      sqlite3_value **argv)
{
	struct lay_cursor *c = (struct lay_cursor *)cur;
	struct lay_vtab *v = (struct lay_vtab *)cur->pVtab;
	(void)idx, (void)idx_str;
	c->res = NULL, c->at = 0;
	sqlite3_value_free(c->arg);
	c->arg = NULL;
	if (argc != 1 || sqlite3_value_type(argv[0]) != SQLITE_TEXT) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg = sqlite3_mprintf("invalid input track id list");
		return SQLITE_ERROR;
	}
	c->arg = sqlite3_value_dup(argv[0]);
	const char *key = (const char *)sqlite3_value_text(argv[0]);
	for (struct lay_result *r = v->cache; r; r = r->next) {
		if (strcmp(r->key, key) == 0) {
			c->res = r;
			return SQLITE_OK;
		}
	}
	if (v->ncache >= LAY_CACHE_MAX) { /* drop the cache rather than grow it */
		struct lay_result *keep = NULL;
		while (v->cache) {
			struct lay_result *r = v->cache;
			v->cache = r->next;
			tb_free(r->key);
			vec_release(&r->ids);
			vec_release(&r->depths);
			tb_free(r);
		}
		v->cache = keep;
		v->ncache = 0;
	}
	struct lay_result *r = tb_calloc(1, sizeof *r);
	r->key = tb_strdup(key);
	layout(v->sql->tp, key, r);
	r->next = v->cache;
	v->cache = r;
	v->ncache++;
	c->res = r;
	return SQLITE_OK;
}

static int lay_next(sqlite3_vtab_cursor *cur)
{
	((struct lay_cursor *)cur)->at++;
	return SQLITE_OK;
}

static int lay_eof(sqlite3_vtab_cursor *cur)
{
	struct lay_cursor *c = (struct lay_cursor *)cur;
	return !c->res || c->at >= c->res->ids.len;
}

static int lay_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct lay_cursor *c = (struct lay_cursor *)cur;
	if (i == 0)
		sqlite3_result_int64(ctx, c->res->ids.data[c->at]);
	else if (i == 1)
		sqlite3_result_int64(ctx, c->res->depths.data[c->at]);
	else if (c->arg)
		sqlite3_result_value(ctx, c->arg);
	return SQLITE_OK;
}

static int lay_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((struct lay_cursor *)cur)->at;
	return SQLITE_OK;
}

static const sqlite3_module lay_module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only */
    .xConnect = lay_connect,
    .xBestIndex = lay_best_index,
    .xDisconnect = lay_disconnect,
    .xDestroy = lay_disconnect,
    .xOpen = lay_open,
    .xClose = lay_close,
    .xFilter = lay_filter,
    .xNext = lay_next,
    .xEof = lay_eof,
    .xColumn = lay_column,
    .xRowid = lay_rowid,
};

int tp_sql_register_layout(sqlite3 *db, struct tp_sql *sql)
{
	return sqlite3_create_module_v2(db, "experimental_slice_layout", &lay_module, sql, NULL);
}
