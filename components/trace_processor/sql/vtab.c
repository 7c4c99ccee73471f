/*
 * The one SQLite virtual-table module behind every storage table
 * (`__intrinsic_slice`, `__intrinsic_track`, ...): a read-only view of the
 * column arrays described by tp_table_descs[], modelled on SQLite's
 * ext/misc/series.c.
 *
 * Each table is an eponymous-only module named after its sql_name, so
 * `SELECT * FROM __intrinsic_slice` works without CREATE VIRTUAL TABLE and
 * the public views (schema.c) are plain SELECTs over it that SQLite
 * flattens, keeping WHERE constraints pushed down to xBestIndex.
 *
 * Schema: `id` (the row index, also the rowid) then the described columns,
 * TP_COL_HIDDEN ones declared HIDDEN, then the computed ones. NULL
 * sentinels become SQL NULL; a sparse column that was never written (NULL
 * array) is NULL on every row. Every read goes through cell(), so filters,
 * the sortedness scan and xColumn agree on what a row holds.
 *
 * Planning (xBestIndex) turns constraints into a row range plus per-row
 * filters, and says so in idxStr ("<col><op>" items, e.g. "0= 1g 1l 4="),
 * which also shows up in EXPLAIN QUERY PLAN:
 *   - id =, >, >=, <, <=          narrow the row range directly (id = ?: one row)
 *   - =, >, >=, <, <= on a column that really is sorted (TP_COL_SORTED and
 *     confirmed by a scan, cached per row count): binary search
 *   - other =, >, >=, <, <= on numbers, = on strings (pool id compare),
 *     IS NULL / IS NOT NULL: checked inside the cursor, so SQLite never
 *     sees the rejected rows
 * IN lists on id are served by SQLite calling xFilter once per value.
 * Rows come out in id order (or reverse), so ORDER BY id or a sorted column
 * is consumed. Costs count the rows a plan steps over; a scan with filters
 * still costs the whole table, so joins look up by id instead of scanning
 * the inner table once per outer row.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sql_int.h"

#define TP_VTAB_MAX_TERMS 16

enum tp_vtab_op {
	OP_EQ = '=',
	OP_GT = 'g',
	OP_GE = 'G',
	OP_LT = 'l',
	OP_LE = 'L',
	OP_ISNULL = 'n',
	OP_NOTNULL = 'N',
};

/* How a filter's right-hand value compares, decided once per xFilter. */
enum tp_vtab_rhs {
	RHS_NONE, /* no row can match (NULL operand, missing string, ...) */
	RHS_ALL,  /* every non-NULL row matches (number < text) */
	RHS_INT,
	RHS_DBL,
	RHS_STR,
};

struct tp_vtab_filter {
	uint32_t col; /* described column (0-based) */
	char op;
	enum tp_vtab_rhs rhs;
	int64_t i;
	double d;
	uint32_t s;
};

struct tp_vtab {
	sqlite3_vtab base;
	struct tp_sql_table *t;
};

struct tp_vtab_cursor {
	sqlite3_vtab_cursor base;
	struct tp_sql_table *t;
	uint32_t lo, hi; /* candidate rows [lo, hi) */
	uint32_t row;
	bool desc, eof;
	uint32_t nfilters;
	struct tp_vtab_filter filters[TP_VTAB_MAX_TERMS];
};

static bool is_int_type(enum tp_col_type ty)
{
	return ty == TP_I64 || ty == TP_I64N || ty == TP_U32 || ty == TP_U32N || ty == TP_U8 ||
	       ty == TP_I32;
}

/* One cell in its column type's C representation (NULL as the sentinel). */
union tp_cell {
	int64_t i;  /* TP_I64, TP_I64N, TP_I32 */
	uint32_t u; /* TP_U32, TP_U32N, TP_STR */
	double d;   /* TP_DBL, TP_DBLN */
	uint8_t b;  /* TP_U8 */
};

static union tp_cell cell(const struct tp_sql_table *t, uint32_t c, uint32_t row)
{
	const struct tp_col_desc *cd = &t->desc->cols[c];
	const void *p;
	union tp_cell v;

	if (cd->flags & TP_COL_COMPUTED) {
		cd->get(t->sql->tp, row, &v);
		return v;
	}
	p = tp_sql_col_data(t, c);
	switch (cd->type) {
	case TP_I64:
	case TP_I64N:
		v.i = p ? ((const int64_t *)p)[row] : cd->type == TP_I64N ? TP_NULL_I64 : 0;
		break;
	case TP_U32:
	case TP_U32N:
	case TP_STR:
		v.u = p ? ((const uint32_t *)p)[row] : cd->type == TP_U32N ? TP_NULL_U32 : 0;
		break;
	case TP_DBL:
	case TP_DBLN:
		v.d = p ? ((const double *)p)[row] : cd->type == TP_DBLN ? TP_NULL_DBL : 0.0;
		break;
	case TP_U8:
		v.b = p ? ((const uint8_t *)p)[row] : 0;
		break;
	case TP_I32:
		v.i = p ? ((const int32_t *)p)[row] : 0;
		break;
	}
	return v;
}

/* Value of an integer column; false if it is NULL. */
static bool col_int(const struct tp_sql_table *t, uint32_t c, uint32_t row, int64_t *out)
{
	union tp_cell v = cell(t, c, row);
	switch (t->desc->cols[c].type) {
	case TP_I64:
	case TP_I32:
		*out = v.i;
		return true;
	case TP_I64N:
		*out = v.i;
		return *out != TP_NULL_I64;
	case TP_U32:
		*out = v.u;
		return true;
	case TP_U32N:
		*out = v.u;
		return *out != TP_NULL_U32;
	case TP_U8:
		*out = v.b;
		return true;
	default:
		return false;
	}
}

/* ---- sortedness ---------------------------------------------------------- */

static bool scan_sorted(const struct tp_sql_table *t, uint32_t c, uint32_t n)
{
	int64_t prev = INT64_MIN, v;
	for (uint32_t r = 0; r < n; r++) {
		if (!col_int(t, c, r, &v) || v < prev)
			return false;
		prev = v;
	}
	return true;
}

bool tp_sql_col_sorted(struct tp_sql_table *t, uint32_t c)
{
	uint32_t n = tp_sql_table_rows(t);
	if (!t->checked || t->checked_n != n) {
		t->sorted_mask = 0;
		for (uint32_t i = 0; i < t->desc->ncols && i < 64; i++) {
			const struct tp_col_desc *cd = &t->desc->cols[i];
			if ((cd->flags & TP_COL_SORTED) && is_int_type(cd->type) &&
			    scan_sorted(t, i, n))
				t->sorted_mask |= 1ull << i;
		}
		t->checked = true;
		t->checked_n = n;
	}
	return c < 64 && (t->sorted_mask >> c & 1);
}

/* First row in [0, n) whose value is >= v (> v when upper). */
static uint32_t sorted_bound(const struct tp_sql_table *t, uint32_t c, int64_t v, bool upper)
{
	uint32_t lo = 0, hi = tp_sql_table_rows(t);
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int64_t x = 0;
		col_int(t, c, mid, &x);
		if (upper ? x <= v : x < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void tp_sql_sorted_range(const struct tp_sql_table *t, uint32_t c, int64_t lo, int64_t hi,
                         uint32_t *first, uint32_t *end)
{
	if (lo > hi) {
		*first = *end = 0;
		return;
	}
	*first = sorted_bound(t, c, lo, false);
	*end = sorted_bound(t, c, hi, true);
	if (*end < *first)
		*end = *first;
}

/* ---- connect ------------------------------------------------------------- */

static const char *decl_type(enum tp_col_type ty)
{
	switch (ty) {
	case TP_DBL:
	case TP_DBLN:
		return "REAL";
	case TP_STR:
		return "TEXT";
	default:
		return "INTEGER";
	}
}

static int vt_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **err)
{
	struct tp_sql_table *t = aux;
	const struct tp_table_desc *d = t->desc;
	struct tp_vtab *vt;
	sqlite3_str *s = sqlite3_str_new(db);
	char *sql;
	int rc;

	sqlite3_str_appendall(s, "CREATE TABLE x(\"id\" INTEGER");
	for (uint32_t i = 0; i < d->ncols; i++)
		sqlite3_str_appendf(s, ", \"%w\" %s%s", d->cols[i].name, decl_type(d->cols[i].type),
		                    (d->cols[i].flags & TP_COL_HIDDEN) ? " HIDDEN" : "");
	sqlite3_str_appendall(s, ")");
	sql = sqlite3_str_finish(s);
	if (!sql)
		return SQLITE_NOMEM;
	rc = sqlite3_declare_vtab(db, sql);
	sqlite3_free(sql);
	if (rc != SQLITE_OK) {
		*err = sqlite3_mprintf("cannot declare '%s': %s", d->sql_name, sqlite3_errmsg(db));
		return rc;
	}
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	vt = sqlite3_malloc(sizeof *vt);
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof *vt);
	vt->t = t;
	*out = &vt->base;
	return SQLITE_OK;
}

static int vt_disconnect(sqlite3_vtab *vtab)
{
	sqlite3_free(vtab);
	return SQLITE_OK;
}

/* ---- planning ------------------------------------------------------------ */

static char map_op(unsigned char op)
{
	switch (op) {
	case SQLITE_INDEX_CONSTRAINT_EQ:
		return OP_EQ;
	case SQLITE_INDEX_CONSTRAINT_GT:
		return OP_GT;
	case SQLITE_INDEX_CONSTRAINT_GE:
		return OP_GE;
	case SQLITE_INDEX_CONSTRAINT_LT:
		return OP_LT;
	case SQLITE_INDEX_CONSTRAINT_LE:
		return OP_LE;
	case SQLITE_INDEX_CONSTRAINT_ISNULL:
		return OP_ISNULL;
	case SQLITE_INDEX_CONSTRAINT_ISNOTNULL:
		return OP_NOTNULL;
	default:
		return 0;
	}
}

static bool op_has_rhs(char op)
{
	return op != OP_ISNULL && op != OP_NOTNULL;
}

/* Can the cursor evaluate op on SQL column col (0 = id)? */
static bool term_usable(sqlite3_index_info *info, int i, const struct tp_table_desc *d, int col,
                        char op)
{
	enum tp_col_type ty;
	if (col == 0)
		return op_has_rhs(op);
	ty = d->cols[col - 1].type;
	if (!op_has_rhs(op))
		return true;
	/* An IN on a column that is not sorted would cost a scan per value
	 * and give the rows in the values' order: SQLite checks it instead,
	 * in one scan, rows in id order. */
	if (op == OP_EQ && sqlite3_vtab_in(info, i, -1) &&
	    !(d->cols[col - 1].flags & TP_COL_SORTED))
		return false;
	if (ty == TP_STR) {
		const char *coll = sqlite3_vtab_collation(info, i);
		return op == OP_EQ && (!coll || sqlite3_stricmp(coll, "BINARY") == 0);
	}
	return true;
}

static int vt_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
	struct tp_sql_table *t = ((struct tp_vtab *)vtab)->t;
	const struct tp_table_desc *d = t->desc;
	double n = tp_sql_table_rows(t), scanned = n, out;
	double filter_sel = 1.0;
	bool id_eq = false, has_in = false;
	int id_bounds = 0, sorted_bounds = 0, argv = 0, nterms = 0;
	sqlite3_str *s = sqlite3_str_new(NULL);

	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		/* iColumn is 0 for id, k for described column k-1; -1 is the rowid (= id). */
		int col = c->iColumn < 0 ? 0 : c->iColumn;
		char op = map_op(c->op);

		if (!c->usable || !op || nterms >= TP_VTAB_MAX_TERMS ||
		    !term_usable(info, i, d, col, op))
			continue;
		sqlite3_str_appendf(s, "%s%d%c", nterms ? " " : "", col, op);
		nterms++;
		if (op_has_rhs(op)) {
			info->aConstraintUsage[i].argvIndex = ++argv;
			info->aConstraintUsage[i].omit = 1;
			if (op == OP_EQ && sqlite3_vtab_in(info, i, -1))
				has_in = true;
		}
		if (col == 0) {
			if (op == OP_EQ)
				id_eq = true;
			else
				id_bounds++;
		} else if (op_has_rhs(op) && (d->cols[col - 1].flags & TP_COL_SORTED) &&
		           tp_sql_col_sorted(t, (uint32_t)col - 1)) {
			sorted_bounds += op == OP_EQ ? 8 : 1;
		} else {
			filter_sel *= op == OP_EQ ? 0.5 : op_has_rhs(op) ? 0.5 : 0.9;
		}
	}

	if (id_eq) {
		scanned = 1;
		info->idxFlags |= SQLITE_INDEX_SCAN_UNIQUE;
	} else {
		for (int k = 0; k < id_bounds && scanned > 1; k++)
			scanned /= 4;
		if (sorted_bounds >= 8)
			scanned = scanned < 8 ? scanned : 8;
		else
			for (int k = 0; k < sorted_bounds && scanned > 1; k++)
				scanned /= 4;
	}
	out = scanned * filter_sel;
	if (out < 1)
		out = 1;
	if (scanned < 1)
		scanned = 1;
	info->estimatedCost = scanned + (sorted_bounds ? log2(n + 1) : 0);
	info->estimatedRows = (sqlite3_int64)out;

	/* Rows come out in id order; columns that are sorted follow it. */
	if (info->nOrderBy > 0 && !has_in) {
		bool ok = true;
		unsigned char desc = info->aOrderBy[0].desc;
		for (int i = 0; i < info->nOrderBy && ok; i++) {
			int col = info->aOrderBy[i].iColumn < 0 ? 0 : info->aOrderBy[i].iColumn;
			if (info->aOrderBy[i].desc != desc)
				ok = false;
			else if (col > 0 && !((d->cols[col - 1].flags & TP_COL_SORTED) &&
			                      tp_sql_col_sorted(t, (uint32_t)col - 1)))
				ok = false;
		}
		if (ok) {
			info->orderByConsumed = 1;
			info->idxNum = desc ? 1 : 0;
		}
	}

	info->idxStr = sqlite3_str_finish(s);
	info->needToFreeIdxStr = 1;
	if (!info->idxStr && nterms)
		return SQLITE_NOMEM;
	return SQLITE_OK;
}

/* ---- cursor -------------------------------------------------------------- */

static int vt_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
	struct tp_vtab_cursor *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->t = ((struct tp_vtab *)vtab)->t;
	*out = &c->base;
	return SQLITE_OK;
}

static int vt_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static bool dbl_cmp(double x, char op, double v)
{
	switch (op) {
	case OP_EQ:
		return x == v;
	case OP_GT:
		return x > v;
	case OP_GE:
		return x >= v;
	case OP_LT:
		return x < v;
	default:
		return x <= v;
	}
}

static bool int_cmp(int64_t x, char op, int64_t v)
{
	switch (op) {
	case OP_EQ:
		return x == v;
	case OP_GT:
		return x > v;
	case OP_GE:
		return x >= v;
	case OP_LT:
		return x < v;
	default:
		return x <= v;
	}
}

static bool filter_match(const struct tp_sql_table *t, const struct tp_vtab_filter *f, uint32_t row)
{
	enum tp_col_type ty = t->desc->cols[f->col].type;
	bool null;
	int64_t iv = 0;
	double dv = 0;

	if (ty == TP_STR) {
		uint32_t id = cell(t, f->col, row).u;
		null = id == TP_NULL_STR;
		if (!op_has_rhs(f->op))
			return null == (f->op == OP_ISNULL);
		return !null && f->rhs == RHS_STR && id == f->s;
	}
	if (ty == TP_DBL || ty == TP_DBLN) {
		dv = cell(t, f->col, row).d;
		null = ty == TP_DBLN && isnan(dv);
	} else {
		null = !col_int(t, f->col, row, &iv);
		dv = (double)iv;
	}
	if (!op_has_rhs(f->op))
		return null == (f->op == OP_ISNULL);
	if (null)
		return false;
	switch (f->rhs) {
	case RHS_ALL:
		return true;
	case RHS_INT:
		if (ty == TP_DBL || ty == TP_DBLN)
			return dbl_cmp(dv, f->op, (double)f->i);
		return int_cmp(iv, f->op, f->i);
	case RHS_DBL:
		return dbl_cmp(dv, f->op, f->d);
	default:
		return false;
	}
}

static bool row_matches(const struct tp_vtab_cursor *c, uint32_t row)
{
	for (uint32_t i = 0; i < c->nfilters; i++)
		if (!filter_match(c->t, &c->filters[i], row))
			return false;
	return true;
}

/* Step to the next matching row at or after (before, if desc) c->row. */
static void seek_match(struct tp_vtab_cursor *c)
{
	for (;;) {
		if (c->desc ? c->row < c->lo || c->row == UINT32_MAX : c->row >= c->hi) {
			c->eof = true;
			return;
		}
		c->t->sql->rows_visited++;
		if (row_matches(c, c->row))
			return;
		if (c->desc)
			c->row--;
		else
			c->row++;
	}
}

/* The right-hand value of a numeric comparison, with SQLite's rules: NULL
 * matches nothing, text that is not a number is greater than any number. */
static void prepare_numeric(struct tp_vtab_filter *f, sqlite3_value *v)
{
	switch (sqlite3_value_numeric_type(v)) {
	case SQLITE_INTEGER:
		f->rhs = RHS_INT;
		f->i = sqlite3_value_int64(v);
		break;
	case SQLITE_FLOAT:
		f->d = sqlite3_value_double(v);
		f->rhs = isnan(f->d) ? RHS_NONE : RHS_DBL;
		break;
	case SQLITE_NULL:
		f->rhs = RHS_NONE;
		break;
	default:
		f->rhs = (f->op == OP_LT || f->op == OP_LE) ? RHS_ALL : RHS_NONE;
		break;
	}
}

/* The inclusive int64 interval a prepared comparison allows, or false if it
 * cannot be expressed (then nothing is narrowed). *empty if nothing can match. */
static bool filter_interval(const struct tp_vtab_filter *f, int64_t *lo, int64_t *hi, bool *empty)
{
	*lo = INT64_MIN;
	*hi = INT64_MAX;
	*empty = false;
	if (f->rhs == RHS_NONE) {
		*empty = true;
		return true;
	}
	if (f->rhs == RHS_ALL)
		return true;
	if (f->rhs == RHS_INT) {
		int64_t v = f->i;
		switch (f->op) {
		case OP_EQ:
			*lo = *hi = v;
			break;
		case OP_GT:
			if (v == INT64_MAX)
				*empty = true;
			else
				*lo = v + 1;
			break;
		case OP_GE:
			*lo = v;
			break;
		case OP_LT:
			if (v == INT64_MIN)
				*empty = true;
			else
				*hi = v - 1;
			break;
		default:
			*hi = v;
			break;
		}
		return true;
	}
	/* A double bound: round towards the allowed side, clamp to int64. */
	{
		double v = f->d, fl = floor(v), ce = ceil(v);
		double lim = 9223372036854775807.0; /* 2^63 */
		switch (f->op) {
		case OP_EQ:
			if (fl != v || v >= lim || v < -lim)
				*empty = true;
			else
				*lo = *hi = (int64_t)v;
			break;
		case OP_GT:
		case OP_GE: {
			double b = f->op == OP_GT ? fl + 1 : ce;
			if (b >= lim)
				*empty = true;
			else if (b > -lim)
				*lo = (int64_t)b;
			break;
		}
		default: {
			double b = f->op == OP_LT ? ce - 1 : fl;
			if (b < -lim)
				*empty = true;
			else if (b < lim)
				*hi = (int64_t)b;
			break;
		}
		}
		return true;
	}
}

static void narrow(struct tp_vtab_cursor *c, uint32_t first, uint32_t end)
{
	if (first > c->lo)
		c->lo = first;
	if (end < c->hi)
		c->hi = end;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                     sqlite3_value **argv)
{
	struct tp_vtab_cursor *c = (struct tp_vtab_cursor *)cur;
	struct tp_sql_table *t = c->t;
	uint32_t n = tp_sql_table_rows(t);
	const char *p = idx_str ? idx_str : "";
	int arg = 0;

	c->lo = 0;
	c->hi = n;
	c->nfilters = 0;
	c->desc = idx_num & 1;
	c->eof = false;

	while (*p) {
		char *endp;
		long col = strtol(p, &endp, 10);
		char op = *endp;
		struct tp_vtab_filter f = {0};

		if (endp == p || !op || col < 0 || col > (long)t->desc->ncols)
			return SQLITE_ERROR;
		p = endp + 1;
		while (*p == ' ')
			p++;
		f.op = op;
		if (op_has_rhs(op)) {
			if (arg >= argc)
				return SQLITE_ERROR;
			if (col > 0 && t->desc->cols[col - 1].type == TP_STR) {
				const unsigned char *txt = sqlite3_value_text(argv[arg]);
				int len = sqlite3_value_bytes(argv[arg]);
				f.rhs = RHS_NONE;
				if (txt &&
				    strpool_find(&t->sql->tp->strings, (const char *)txt,
				                 (size_t)len, &f.s) &&
				    f.s != 0)
					f.rhs = RHS_STR;
			} else {
				prepare_numeric(&f, argv[arg]);
			}
			arg++;
		}
		if (col == 0) {
			int64_t lo, hi;
			bool empty;
			filter_interval(&f, &lo, &hi, &empty);
			if (empty || hi < 0 || lo >= (int64_t)n) {
				c->hi = c->lo;
				continue;
			}
			narrow(c, lo < 0 ? 0 : (uint32_t)lo,
			       hi >= (int64_t)n - 1 ? n : (uint32_t)(hi + 1));
			continue;
		}
		f.col = (uint32_t)col - 1;
		if (op_has_rhs(op) && (t->desc->cols[f.col].flags & TP_COL_SORTED) &&
		    tp_sql_col_sorted(t, f.col)) {
			int64_t lo, hi;
			bool empty;
			uint32_t first, end;
			filter_interval(&f, &lo, &hi, &empty);
			if (empty) {
				c->hi = c->lo;
				continue;
			}
			tp_sql_sorted_range(t, f.col, lo, hi, &first, &end);
			narrow(c, first, end);
			continue;
		}
		if (c->nfilters >= TP_VTAB_MAX_TERMS)
			return SQLITE_ERROR;
		c->filters[c->nfilters++] = f;
	}
	if (c->hi < c->lo)
		c->hi = c->lo;
	if (c->lo == c->hi) {
		c->eof = true;
		return SQLITE_OK;
	}
	c->row = c->desc ? c->hi - 1 : c->lo;
	seek_match(c);
	return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct tp_vtab_cursor *c = (struct tp_vtab_cursor *)cur;
	if (c->desc)
		c->row--;
	else
		c->row++;
	seek_match(c);
	return SQLITE_OK;
}

static int vt_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct tp_vtab_cursor *)cur)->eof;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct tp_vtab_cursor *c = (struct tp_vtab_cursor *)cur;
	const struct tp_sql_table *t = c->t;
	uint32_t row = c->row, col;

	if (i <= 0) {
		sqlite3_result_int64(ctx, row);
		return SQLITE_OK;
	}
	col = (uint32_t)i - 1;
	switch (t->desc->cols[col].type) {
	case TP_I64:
	case TP_I64N:
	case TP_U32:
	case TP_U32N:
	case TP_U8:
	case TP_I32: {
		int64_t v;
		if (col_int(t, col, row, &v))
			sqlite3_result_int64(ctx, v);
		break;
	}
	case TP_DBL:
	case TP_DBLN: {
		double v = cell(t, col, row).d;
		if (!isnan(v))
			sqlite3_result_double(ctx, v);
		break;
	}
	case TP_STR: {
		uint32_t id = cell(t, col, row).u;
		if (id != TP_NULL_STR) {
			size_t len;
			const char *str = strpool_get(&t->sql->tp->strings, id, &len);
			sqlite3_result_text64(ctx, str, len, SQLITE_STATIC, SQLITE_UTF8);
		}
		break;
	}
	}
	return SQLITE_OK;
}

static int vt_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct tp_vtab_cursor *)cur)->row;
	return SQLITE_OK;
}

static const sqlite3_module tp_vtab_module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous-only */
    .xConnect = vt_connect,
    .xBestIndex = vt_best_index,
    .xDisconnect = vt_disconnect,
    .xDestroy = vt_disconnect,
    .xOpen = vt_open,
    .xClose = vt_close,
    .xFilter = vt_filter,
    .xNext = vt_next,
    .xEof = vt_eof,
    .xColumn = vt_column,
    .xRowid = vt_rowid,
};

/* ---- registration -------------------------------------------------------- */

struct tp_sql_table *tp_sql_table_find(struct tp_sql *sql, const char *sql_name)
{
	for (uint32_t i = 0; i < sql->ntables; i++)
		if (strcmp(sql->tables[i].desc->sql_name, sql_name) == 0)
			return &sql->tables[i];
	return NULL;
}

int tp_sql_col_find(const struct tp_table_desc *d, const char *name)
{
	for (uint32_t i = 0; i < d->ncols; i++)
		if (strcmp(d->cols[i].name, name) == 0)
			return (int)i;
	return -1;
}

int tp_sql_register_tables(sqlite3 *db, struct tp_sql *sql)
{
	for (uint32_t i = 0; i < sql->ntables; i++) {
		int rc = sqlite3_create_module_v2(db, sql->tables[i].desc->sql_name,
		                                  &tp_vtab_module, &sql->tables[i], NULL);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}
