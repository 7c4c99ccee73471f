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
/* The terms of a plan a cursor keeps parsed (vt_best_index writes at most
 * TP_VTAB_MAX_TERMS constraints and TP_VTAB_MAX_GROUP ORDER BY columns;
 * more is a malformed plan), and the text operands it remembers (shorter
 * than this). */
#define TP_VTAB_MAX_PLAN 32
#define TP_VTAB_STR_CACHE 24
#define TP_VTAB_MAX_PREFETCH 6
#define TP_VTAB_PREFETCH 16
#define TP_VTAB_READERS 64

enum tp_vtab_op {
	OP_EQ = '=',
	OP_GT = 'g',
	OP_GE = 'G',
	OP_LT = 'l',
	OP_LE = 'L',
	OP_ISNULL = 'n',
	OP_NOTNULL = 'N',
	OP_ORDER = 'o',      /* rows ordered by this column (no argument) */
	OP_ORDER_DESC = 'O', /* the same, descending */
	OP_USED = 'u',       /* "<mask>u": the described columns SQLite reads */
	OP_KEYED = 'k',      /* = through the column's cached row order */
};

/* `col = ?` from a join on an integer column that is not sorted is
 * served through the table's cached order by that column (binary search
 * to the run of equal keys, in id order) once the table has this many
 * rows; each row of the run is priced at this many rows of a scan. Cheap
 * enough that a join of a big table to a small one runs the small one
 * outside, a run of the big one per row, as Perfetto v58.2 plans it (its
 * rows come out in that order: `slice JOIN thread_track ON track_id = id`
 * grouped by track, then by slice id), and 2.9x faster than an id lookup
 * per row of the big table (bench: slice-thread_track count, counter join
 * track count). It was 16 until stop 32, pricing each row as a cache miss;
 * the runs are read in id order, which the prefetcher follows. */
#define TP_VTAB_KEYED_MIN_ROWS 1024
#define TP_VTAB_KEYED_COST 1.5

/* SQLite 3.40 charges no sort to a join whose outer loop is a virtual
 * table it cannot prove ordered, so a GROUP BY on this table's columns
 * looks free when the table is an inner loop; a lookup from a join
 * (`col = ?` on another table's value) then pays this much per row it
 * gives for the sorter that follows, so that the plan with this table
 * outer, grouped and without a sorter, can win. Only when no two rows
 * share the keys (group_unique): a group of several outer rows would
 * reach real sums and group_concat in another order than the sorter's. */
#define TP_VTAB_GROUP_SORT_COST 32.0

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
	uint8_t ty; /* the column's enum tp_col_type (filter_bind) */
	enum tp_vtab_rhs rhs;
	int64_t i;
	double d;
	uint32_t s;
	const void *data; /* its stored array, NULL if unwritten */
	bool computed;    /* read through cell() */
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
	/* Grouped output: rows in the order of order[0, norder) instead of
	 * id order; own is order when built for this xFilter alone (freed
	 * with the cursor), whole that order holds every row of the table
	 * (the range and filters are then checked per row). */
	const uint32_t *order;
	uint32_t *own;
	uint32_t norder, pos;
	bool grouped, whole;
	/* Column arrays to prefetch TP_VTAB_PREFETCH rows ahead in order. */
	uint32_t npf;
	const char *pf_base[TP_VTAB_MAX_PREFETCH];
	uint8_t pf_size[TP_VTAB_MAX_PREFETCH];
	/* How xColumn reads column c < TP_VTAB_READERS, set on its first
	 * read after each xFilter (bit c of rd_set), so that a grouped scan's
	 * millions of reads skip the column description. */
	uint64_t rd_set;
	struct tp_vtab_reader {
		const void *data; /* a stored column's array */
		uint8_t type;     /* enum tp_col_type, or TP_VTAB_RD_COMPUTED */
	} rd[TP_VTAB_READERS];
	/* A grouped scan through a cached order with runs: the key columns
	 * (bit c: described column c) are read from key_row, the first row
	 * of the run holding pos (same keys, same values), which stays in
	 * cache, instead of from each row: one random read fewer per key. */
	uint64_t key_mask;
	uint32_t key_row, run_end, run_next, nruns;
	const uint32_t *runs;
	/* The rows array of the cached order this cursor scans (its users
	 * count holds it in the cache), NULL for none. */
	const uint32_t *pinned;
	/* idx_str parsed, so that a join's inner loop (an xFilter per outer
	 * row, the same plan each time) parses it once. plan_str is the
	 * string it came from: a cursor given another (a multi-index OR runs
	 * one cursor through several plans) parses that one. */
	const char *plan_str;
	uint64_t plan_used;
	/* next_match's skipping (eq_scan_setup): the column array of the first
	 * filter's `= integer`, NULL for none; eq_none: no row can match. */
	const void *eq_col;
	uint8_t eq_type;
	bool eq_none;
	uint32_t nplan;
	/* The plan is `id =` then filters only (a join's per-row lookup):
	 * vt_filter takes lookup_filter's short path. */
	bool plan_lookup;
	uint32_t lookup_term; /* its `id =` term */
	int lookup_arg;       /* and that term's argv index */
	/* Row count the readers (rd, rd_set) were set up for: kept across
	 * xFilters while the trace is complete and the count stays, as the
	 * cached orders are. */
	uint32_t rd_n;
	struct tp_vtab_term {
		int32_t col; /* 0: id, else described column + 1 */
		char op;
		/* A text operand's last value and its pool id (found), so
		 * that repeated lookups skip the pool's hash. */
		bool str_cached, str_found;
		uint8_t str_len;
		uint32_t str_id;
		char str[TP_VTAB_STR_CACHE];
	} plan[TP_VTAB_MAX_PLAN];
};

/* A row order by up to TP_VTAB_MAX_GROUP columns (keys of cols[], in
 * SQLite's order for each: NULL first, numbers by value, text by BINARY;
 * reversed where desc), equal keys in id order. */
#define TP_VTAB_MAX_GROUP 4
_Static_assert(TP_VTAB_MAX_TERMS + 1 + TP_VTAB_MAX_GROUP <= TP_VTAB_MAX_PLAN,
               "a plan of every term fits in a cursor");
struct tp_sql_order {
	uint32_t n; /* rows of the table when built */
	uint32_t ncols;
	uint32_t cols[TP_VTAB_MAX_GROUP]; /* described columns */
	uint32_t desc;                    /* bit i: cols[i] descending */
	uint32_t *rows;
	/* Where the keys change: runs[k] is the first position of run k
	 * (runs[0] = 0); NULL when there are more than n / 16 runs or a key
	 * column is real (not built for those). */
	uint32_t *runs;
	uint32_t nruns;
	uint32_t users; /* cursors scanning rows: not evicted while any is */
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

/* Row `row` of a stored column of type ty whose array is p (NULL: never
 * written, every row NULL or 0). */
static union tp_cell stored_cell(enum tp_col_type ty, const void *p, uint32_t row)
{
	union tp_cell v;

	switch (ty) {
	case TP_I64:
	case TP_I64N:
		v.i = p ? ((const int64_t *)p)[row] : ty == TP_I64N ? TP_NULL_I64 : 0;
		break;
	case TP_U32:
	case TP_U32N:
	case TP_STR:
		v.u = p ? ((const uint32_t *)p)[row] : ty == TP_U32N ? TP_NULL_U32 : 0;
		break;
	case TP_DBL:
	case TP_DBLN:
		v.d = p ? ((const double *)p)[row] : ty == TP_DBLN ? TP_NULL_DBL : 0.0;
		break;
	case TP_U8:
		v.b = p ? ((const uint8_t *)p)[row] : 0;
		break;
	case TP_I32:
	default:
		v.i = p ? ((const int32_t *)p)[row] : 0;
		break;
	}
	return v;
}

static union tp_cell cell(const struct tp_sql_table *t, uint32_t c, uint32_t row)
{
	const struct tp_col_desc *cd = &t->desc->cols[c];
	union tp_cell v;

	if (cd->flags & TP_COL_COMPUTED) {
		cd->get(t->sql->tp, row, &v);
		return v;
	}
	return stored_cell(cd->type, tp_sql_col_data(t, c), row);
}

/* A cell of an integer type ty as int64; false if it is NULL. */
static bool cell_int(enum tp_col_type ty, union tp_cell v, int64_t *out)
{
	switch (ty) {
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

/* Value of an integer column; false if it is NULL. */
static bool col_int(const struct tp_sql_table *t, uint32_t c, uint32_t row, int64_t *out)
{
	return cell_int(t->desc->cols[c].type, cell(t, c, row), out);
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

/* A GROUP BY on the table's own columns (SQLite then needs equal keys
 * adjacent, not sorted): the cursor hands rows out sorted by
 * those columns as SQLite's sorter would order them, equal keys in id
 * order, so SQLite skips its sorter and the groups still come out in the
 * same order. Items "<col>o" / "<col>O" (descending) follow the
 * constraints in idxStr. Not with id among the keys past the first
 * descending one; columns after id are dropped (id is unique). */
static bool plan_grouped(sqlite3_index_info *info, sqlite3_str *s, int nterms)
{
	int distinct = sqlite3_vtab_distinct(info), ncols = 0;

	/* Not for DISTINCT (2): SQLite's answer lists rows in order of first
	 * appearance, a sorted one would differ. */
	if (distinct != 1)
		return false;
	for (int i = 0; i < info->nOrderBy; i++) {
		if (info->aOrderBy[i].iColumn <= 0) {
			if (info->aOrderBy[i].desc)
				return false;
			break;
		}
		if (++ncols > TP_VTAB_MAX_GROUP)
			return false;
	}
	for (int i = 0; i < ncols; i++)
		sqlite3_str_appendf(s, "%s%d%c", nterms || i ? " " : "", info->aOrderBy[i].iColumn,
		                    info->aOrderBy[i].desc ? OP_ORDER_DESC : OP_ORDER);
	/* The columns SQLite reads (bit c: described column c), for the
	 * cursor to prefetch rows ahead of the order. */
	sqlite3_str_appendf(s, " %llu%c", (unsigned long long)(info->colUsed >> 1), OP_USED);
	return true;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Rows per value of integer column c among t's n rows, NULLs apart,
 * estimated from up to 256 rows spread evenly over the table: when the
 * sample holds few values they are taken as all there are, else the
 * number of values is scaled up with the table. */
static double eq_rows(const struct tp_sql_table *t, uint32_t c, uint32_t n)
{
	int64_t v[256];
	uint32_t s = n < 256 ? n : 256, m = 0, d = 0;
	double distinct, rows;

	for (uint32_t i = 0; i < s; i++)
		if (col_int(t, c, (uint32_t)((uint64_t)i * n / s), &v[m]))
			m++;
	if (!m)
		return 1;
	qsort(v, m, sizeof v[0], i64_cmp);
	for (uint32_t i = 0; i < m; i++)
		if (i == 0 || v[i] != v[i - 1])
			d++;
	distinct = d * 4 <= m ? d : (double)d * n / s;
	rows = (double)n * m / s / distinct;
	return rows < 1 ? 1 : rows;
}

/* The constraint a keyed lookup (OP_KEYED) serves, or -1: an `=` whose
 * right side is not a constant (a join's) on an integer column that is
 * not sorted, on a complete trace's table of TP_VTAB_KEYED_MIN_ROWS rows
 * or more, when no `id =` is usable; the one matching fewest rows. */
static int keyed_term(sqlite3_index_info *info, struct tp_sql_table *t, uint32_t n, double *rows)
{
	const struct tp_table_desc *d = t->desc;
	int best = -1;

	if (!t->sql->tp->eof || n < TP_VTAB_KEYED_MIN_ROWS)
		return -1;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		sqlite3_value *v;
		double r;
		int col = c->iColumn < 0 ? 0 : c->iColumn;

		if (!c->usable || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		if (col == 0)
			return -1;
		if (!is_int_type(d->cols[col - 1].type) || sqlite3_vtab_in(info, i, -1) ||
		    ((d->cols[col - 1].flags & TP_COL_SORTED) &&
		     tp_sql_col_sorted(t, (uint32_t)col - 1)) ||
		    sqlite3_vtab_rhs_value(info, i, &v) == SQLITE_OK)
			continue;
		r = eq_rows(t, (uint32_t)col - 1, n);
		if (best < 0 || r < *rows) {
			best = i;
			*rows = r;
		}
	}
	return best;
}

static bool group_unique(struct tp_sql_table *t, const sqlite3_index_info *info);

static int vt_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
	struct tp_sql_table *t = ((struct tp_vtab *)vtab)->t;
	const struct tp_table_desc *d = t->desc;
	double n = tp_sql_table_rows(t), scanned = n, out;
	double filter_sel = 1.0;
	double key_rows = 0;
	int keyed = keyed_term(info, t, (uint32_t)n, &key_rows);
	bool id_eq = false, has_in = false, grouped = false, joined = keyed >= 0;
	int id_bounds = 0, sorted_bounds = 0, argv = 0, nterms = 0;
	sqlite3_str *s = sqlite3_str_new(NULL);

	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		/* iColumn is 0 for id, k for described column k-1; -1 is the rowid (= id). */
		int col = c->iColumn < 0 ? 0 : c->iColumn;
		char op = map_op(c->op);

		if (i == keyed) {
			sqlite3_str_appendf(s, "%s%d%c", nterms ? " " : "", col, OP_KEYED);
			nterms++;
			info->aConstraintUsage[i].argvIndex = ++argv;
			info->aConstraintUsage[i].omit = 1;
			continue;
		}
		if (!c->usable || !op || nterms >= TP_VTAB_MAX_TERMS ||
		    !term_usable(info, i, d, col, op))
			continue;
		sqlite3_str_appendf(s, "%s%d%c", nterms ? " " : "", col, op);
		nterms++;
		if (op_has_rhs(op)) {
			sqlite3_value *rhs;
			info->aConstraintUsage[i].argvIndex = ++argv;
			info->aConstraintUsage[i].omit = 1;
			if (sqlite3_vtab_rhs_value(info, i, &rhs) != SQLITE_OK)
				joined = true;
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
	if (keyed >= 0) {
		double cost = log2(n + 1) + TP_VTAB_KEYED_COST * key_rows;
		if (cost < info->estimatedCost)
			info->estimatedCost = cost;
		if (key_rows * filter_sel < out)
			out = key_rows * filter_sel < 1 ? 1 : key_rows * filter_sel;
		/* The columns SQLite reads, prefetched along the run. */
		sqlite3_str_appendf(s, " %llu%c", (unsigned long long)(info->colUsed >> 1),
		                    OP_USED);
	}
	info->estimatedRows = (sqlite3_int64)out;
	if (joined && info->nOrderBy > 0 && sqlite3_vtab_distinct(info) == 1 &&
	    group_unique(t, info))
		info->estimatedCost += TP_VTAB_GROUP_SORT_COST * out;

	/* Rows come out in id order; columns that are sorted follow it. */
	if (info->nOrderBy > 0 && !has_in && keyed < 0) {
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
		} else if (plan_grouped(info, s, nterms)) {
			info->orderByConsumed = 1;
			grouped = true;
		}
	}

	info->idxStr = sqlite3_str_finish(s);
	info->needToFreeIdxStr = 1;
	if (!info->idxStr && (nterms || grouped))
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

static void unpin_order(struct tp_vtab_cursor *c);

static int vt_close(sqlite3_vtab_cursor *cur)
{
	unpin_order((struct tp_vtab_cursor *)cur);
	tb_free(((struct tp_vtab_cursor *)cur)->own);
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

/* Bind a filter (its col set) to its column's type and stored array, read
 * directly by filter_match for every row the xFilter checks. */
static void filter_bind(const struct tp_sql_table *t, struct tp_vtab_filter *f)
{
	f->ty = (uint8_t)t->desc->cols[f->col].type;
	f->data = tp_sql_col_data(t, f->col);
	f->computed = t->desc->cols[f->col].flags & TP_COL_COMPUTED;
}

static bool filter_match(const struct tp_sql_table *t, const struct tp_vtab_filter *f, uint32_t row)
{
	enum tp_col_type ty = f->ty;
	union tp_cell v = f->computed ? cell(t, f->col, row) : stored_cell(ty, f->data, row);
	bool null;
	int64_t iv = 0;
	double dv = 0;

	if (ty == TP_STR) {
		null = v.u == TP_NULL_STR;
		if (!op_has_rhs(f->op))
			return null == (f->op == OP_ISNULL);
		return !null && f->rhs == RHS_STR && v.u == f->s;
	}
	if (ty == TP_DBL || ty == TP_DBLN) {
		dv = v.d;
		null = ty == TP_DBLN && isnan(dv);
	} else {
		null = !cell_int(ty, v, &iv);
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

/* The first row of [r, to) whose value in a stored integer column a is v,
 * else `to`. */
#define SCAN_EQ_FN(name, type)                                               \
	static uint32_t name(const void *a, type v, uint32_t r, uint32_t to) \
	{                                                                    \
		const type *x = a;                                           \
		while (r < to && x[r] != v)                                  \
			r++;                                                 \
		return r;                                                    \
	}
SCAN_EQ_FN(scan_eq_u32, uint32_t)
SCAN_EQ_FN(scan_eq_i64, int64_t)
SCAN_EQ_FN(scan_eq_i32, int32_t)

/* Set up next_match's skipping for this xFilter's filters: when the first
 * is `=` an integer on a stored integer column, rows are skipped on that
 * column's array alone (`utid = ?` over millions of thread_state rows)
 * and the other filters checked on its matches. */
static void eq_scan_setup(struct tp_vtab_cursor *c)
{
	const struct tp_vtab_filter *f = &c->filters[0];
	c->eq_col = NULL;
	c->eq_none = false;
	if (!c->nfilters || f->op != OP_EQ || f->rhs != RHS_INT ||
	    (c->t->desc->cols[f->col].flags & TP_COL_COMPUTED))
		return;
	enum tp_col_type ty = c->t->desc->cols[f->col].type;
	if (ty != TP_U32 && ty != TP_U32N && ty != TP_I64 && ty != TP_I64N && ty != TP_I32)
		return;
	c->eq_col = tp_sql_col_data(c->t, f->col);
	c->eq_type = (uint8_t)ty;
	/* A value the column cannot hold, or its NULL: no row. */
	c->eq_none = ((ty == TP_U32 || ty == TP_U32N) &&
	              (f->i < 0 || f->i > (int64_t)UINT32_MAX ||
	               (ty == TP_U32N && f->i == (int64_t)TP_NULL_U32))) ||
	             (ty == TP_I32 && (f->i < INT32_MIN || f->i > INT32_MAX)) ||
	             (ty == TP_I64N && f->i == TP_NULL_I64);
}

/* The first row of [from, to) that matches every filter, else `to`; each
 * row stepped over counts as visited. */
static uint32_t next_match(const struct tp_vtab_cursor *c, uint32_t from, uint32_t to)
{
	uint32_t r = from;
	if (r >= to)
		return to;
	if (!c->eq_col) {
		for (; r < to; r++) {
			c->t->sql->rows_visited++;
			if (row_matches(c, r))
				return r;
		}
		return to;
	}
	if (c->eq_none) {
		c->t->sql->rows_visited += to - r;
		return to;
	}
	for (; r < to; r++) {
		uint32_t s = r;
		int64_t v = c->filters[0].i;
		switch (c->eq_type) {
		case TP_U32:
		case TP_U32N:
			r = scan_eq_u32(c->eq_col, (uint32_t)v, r, to);
			break;
		case TP_I64:
		case TP_I64N:
			r = scan_eq_i64(c->eq_col, v, r, to);
			break;
		default:
			r = scan_eq_i32(c->eq_col, (int32_t)v, r, to);
			break;
		}
		c->t->sql->rows_visited += r - s;
		if (r >= to)
			return to;
		c->t->sql->rows_visited++;
		if (row_matches(c, r))
			return r;
	}
	return to;
}

static size_t col_size(enum tp_col_type ty)
{
	switch (ty) {
	case TP_I64:
	case TP_I64N:
	case TP_DBL:
	case TP_DBLN:
		return 8;
	case TP_U8:
		return 1;
	default:
		return 4;
	}
}

/* The stored arrays a grouped scan reads out of order: the columns SQLite
 * uses (bit c of used: described column c), and when it uses a computed
 * one, the hidden columns (computed columns read those). */
static void prefetch_cols(struct tp_vtab_cursor *c, uint64_t used)
{
	const struct tp_table_desc *d = c->t->desc;
	bool computed = false;

	c->npf = 0;
	for (uint32_t i = 0; i < d->ncols; i++)
		if ((d->cols[i].flags & TP_COL_COMPUTED) && (i >= 62 || (used >> i & 1)))
			computed = true;
	for (uint32_t i = 0; i < d->ncols && c->npf < TP_VTAB_MAX_PREFETCH; i++) {
		const struct tp_col_desc *cd = &d->cols[i];
		const void *data = tp_sql_col_data(c->t, i);
		if (!data || (cd->flags & TP_COL_COMPUTED))
			continue;
		if ((i < 62 && (used >> i & 1)) || (computed && (cd->flags & TP_COL_HIDDEN))) {
			c->pf_base[c->npf] = data;
			c->pf_size[c->npf++] = (uint8_t)col_size(cd->type);
		}
	}
}

/* key_row and run_end for the run holding c->pos (past every position
 * when the order has no runs). */
static void next_run(struct tp_vtab_cursor *c)
{
	if (!c->nruns) {
		c->run_end = UINT32_MAX;
		return;
	}
	while (c->run_next < c->nruns && c->runs[c->run_next] <= c->pos)
		c->run_next++;
	c->key_row = c->order[c->runs[c->run_next - 1]];
	c->run_end = c->run_next < c->nruns ? c->runs[c->run_next] : UINT32_MAX;
}

/* Step to the next matching row at or after (before, if desc) c->row. */
static void seek_match(struct tp_vtab_cursor *c)
{
	if (c->grouped) {
		for (; c->pos < c->norder; c->pos++) {
			uint32_t row = c->order[c->pos];
			if (c->pos + TP_VTAB_PREFETCH < c->norder) {
				uint32_t ahead = c->order[c->pos + TP_VTAB_PREFETCH];
				for (uint32_t k = 0; k < c->npf; k++)
					__builtin_prefetch(c->pf_base[k] +
					                   (size_t)ahead * c->pf_size[k]);
			}
			if (c->pos >= c->run_end)
				next_run(c);
			if (!c->whole) {
				c->row = row;
				return;
			}
			c->t->sql->rows_visited++;
			if (row >= c->lo && row < c->hi && (!c->nfilters || row_matches(c, row))) {
				c->row = row;
				return;
			}
		}
		c->eof = true;
		return;
	}
	for (;;) {
		if (c->desc ? c->row < c->lo || c->row == UINT32_MAX : c->row >= c->hi) {
			c->eof = true;
			return;
		}
		c->t->sql->rows_visited++;
		if (row_matches(c, c->row))
			return;
		/* Checked on a miss only: scans without filters pay nothing. */
		if (c->eq_col && !c->desc) {
			c->row = next_match(c, c->row + 1, c->hi);
			c->eof = c->row >= c->hi;
			return;
		}
		if (c->desc)
			c->row--;
		else
			c->row++;
	}
}

/* ---- grouped output ------------------------------------------------------ */

/* How one column of an order compares: its key is a uint64 in SQLite's
 * order (NULL 0; integers by value; reals by value, -0.0 = 0.0; text by
 * its rank among the strings present, by BINARY), inverted if desc. */
struct order_key {
	const struct tp_sql_table *t;
	uint32_t col;
	bool desc;
	const uint32_t *rank; /* text: string id -> rank (0 for NULL) */
};

static uint64_t order_key(const struct order_key *k, uint32_t row)
{
	uint64_t key;

	switch (k->t->desc->cols[k->col].type) {
	case TP_STR:
		key = k->rank[cell(k->t, k->col, row).u];
		break;
	case TP_DBL:
	case TP_DBLN: {
		double d = cell(k->t, k->col, row).d;
		uint64_t b;
		if (isnan(d)) {
			key = 0;
			break;
		}
		if (d == 0)
			d = 0; /* -0.0 groups with 0.0 */
		memcpy(&b, &d, sizeof b);
		key = b >> 63 ? ~b : b | 1ull << 63;
		break;
	}
	default: {
		int64_t v;
		/* INT64_MIN maps to 0 too, but only TP_I64N (where it is
		 * NULL) can hold both. */
		key = col_int(k->t, k->col, row, &v) ? (uint64_t)v ^ 1ull << 63 : 0;
		break;
	}
	}
	return k->desc ? ~key : key;
}

struct str_ent {
	const char *s;
	size_t len;
	uint32_t id;
};

static int str_ent_cmp(const void *a, const void *b)
{
	const struct str_ent *x = a, *y = b;
	int c = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
	if (c)
		return c;
	return (x->len > y->len) - (x->len < y->len);
}

/* Ranks by BINARY of the strings text column col holds on rows[0, m):
 * string id -> 1 + position among them (equal text, equal rank); id 0
 * (NULL) -> 0. tb_free the result. */
static uint32_t *str_ranks(const struct tp_sql_table *t, uint32_t col, const uint32_t *rows,
                           uint32_t m)
{
	const struct strpool *pool = &t->sql->tp->strings;
	size_t np = strpool_size(pool), nd = 0;
	uint32_t *rank = tb_calloc(np, sizeof *rank), r = 0;
	struct str_ent *e;

	for (uint32_t i = 0; i < m; i++) {
		uint32_t id = cell(t, col, rows[i]).u;
		if (id && id < np && !rank[id]) {
			rank[id] = 1;
			nd++;
		}
	}
	e = tb_malloc((nd ? nd : 1) * sizeof *e);
	nd = 0;
	for (size_t id = 1; id < np; id++)
		if (rank[id]) {
			e[nd].s = strpool_get(pool, (uint32_t)id, &e[nd].len);
			e[nd++].id = (uint32_t)id;
		}
	qsort(e, nd, sizeof *e, str_ent_cmp);
	for (size_t i = 0; i < nd; i++) {
		if (i == 0 || str_ent_cmp(&e[i - 1], &e[i]) != 0)
			r++;
		rank[e[i].id] = r;
	}
	tb_free(e);
	return rank;
}

/* Stable sort of rows[0, m) by k's key: one counting pass when the keys
 * span few values, else LSD radix. tmp holds m rows; returns the buffer
 * holding the result (rows or tmp). */
static uint32_t *sort_rows(const struct order_key *k, uint32_t *rows, uint32_t *tmp, uint32_t m)
{
	uint64_t lo = UINT64_MAX, hi = 0, range;
	uint32_t *cnt;

	if (m < 2)
		return rows;
	for (uint32_t i = 0; i < m; i++) {
		uint64_t key = order_key(k, rows[i]);
		if (key < lo)
			lo = key;
		if (key > hi)
			hi = key;
	}
	range = hi - lo;
	if (range == 0)
		return rows;
	if (range < (1u << 22) && range <= 4ull * m + 1024) {
		cnt = tb_calloc(range + 2, sizeof *cnt);
		for (uint32_t i = 0; i < m; i++)
			cnt[order_key(k, rows[i]) - lo + 1]++;
		for (uint64_t b = 1; b <= range + 1; b++)
			cnt[b] += cnt[b - 1];
		for (uint32_t i = 0; i < m; i++)
			tmp[cnt[order_key(k, rows[i]) - lo]++] = rows[i];
		tb_free(cnt);
		return tmp;
	}
	{
		unsigned bits = m < 65536 ? 8 : 16;
		uint64_t mask = (1ull << bits) - 1;
		cnt = tb_malloc(((size_t)mask + 1) * sizeof *cnt);
		for (unsigned sh = 0; sh < 64 && range >> sh; sh += bits) {
			uint32_t *sw, sum = 0;
			memset(cnt, 0, ((size_t)mask + 1) * sizeof *cnt);
			for (uint32_t i = 0; i < m; i++)
				cnt[(order_key(k, rows[i]) - lo) >> sh & mask]++;
			for (uint64_t b = 0; b <= mask; b++) {
				uint32_t c = cnt[b];
				cnt[b] = sum;
				sum += c;
			}
			for (uint32_t i = 0; i < m; i++)
				tmp[cnt[(order_key(k, rows[i]) - lo) >> sh & mask]++] = rows[i];
			sw = rows;
			rows = tmp;
			tmp = sw;
		}
		tb_free(cnt);
		return rows;
	}
}

/* Row a against row b by o's columns, in the order order_key gives. */
static int order_cmp(const struct tp_sql_table *t, const struct tp_sql_order *o, uint32_t a,
                     uint32_t b)
{
	for (uint32_t i = 0; i < o->ncols; i++) {
		uint32_t c = o->cols[i];
		int r;
		if (t->desc->cols[c].type == TP_STR) {
			uint32_t x = cell(t, c, a).u, y = cell(t, c, b).u;
			struct str_ent ex, ey;
			if (x == y)
				continue;
			if (!x || !y) {
				r = x ? 1 : -1;
			} else {
				ex.s = strpool_get(&t->sql->tp->strings, x, &ex.len);
				ey.s = strpool_get(&t->sql->tp->strings, y, &ey.len);
				r = str_ent_cmp(&ex, &ey);
				if (r == 0)
					continue;
			}
		} else {
			struct order_key k = {t, c, false, NULL};
			uint64_t x = order_key(&k, a), y = order_key(&k, b);
			if (x == y)
				continue;
			r = x < y ? -1 : 1;
		}
		return (o->desc >> i & 1) ? -r : r;
	}
	return 0;
}

/* Stable merge sort of rows[0, m) by order_cmp; tmp holds m rows. */
static void merge_sort_rows(const struct tp_sql_table *t, const struct tp_sql_order *o,
                            uint32_t *rows, uint32_t *tmp, uint32_t m)
{
	uint32_t h = m / 2, i = 0, j = h, k = 0;
	if (m < 2)
		return;
	merge_sort_rows(t, o, rows, tmp, h);
	merge_sort_rows(t, o, rows + h, tmp, m - h);
	while (i < h && j < m)
		tmp[k++] = order_cmp(t, o, rows[j], rows[i]) < 0 ? rows[j++] : rows[i++];
	while (i < h)
		tmp[k++] = rows[i++];
	while (j < m)
		tmp[k++] = rows[j++];
	memcpy(rows, tmp, (size_t)m * sizeof *rows);
}

/* rows[0, m) (tb_malloc'd, in id order) sorted by o's columns, each
 * column a stable pass from the last to the first; returns the sorted
 * buffer (rows or a new one; the other is freed). A few rows against a
 * large string pool (an inner loop's lookup, a narrow range) are merge
 * sorted instead: the text ranks cost the pool's size. */
static uint32_t *order_rows(const struct tp_sql_table *t, const struct tp_sql_order *o,
                            uint32_t *rows, uint32_t m)
{
	uint32_t *tmp;
	bool text = false;

	if (m < 2)
		return rows;
	for (uint32_t i = 0; i < o->ncols; i++)
		text |= t->desc->cols[o->cols[i]].type == TP_STR;
	tmp = tb_malloc(m * sizeof *tmp);
	if (text && (size_t)m * 16 < strpool_size(&t->sql->tp->strings)) {
		merge_sort_rows(t, o, rows, tmp, m);
		tb_free(tmp);
		return rows;
	}

	for (uint32_t i = o->ncols; i-- > 0;) {
		struct order_key k = {t, o->cols[i], o->desc >> i & 1, NULL};
		uint32_t *rank = NULL, *res;
		if (t->desc->cols[k.col].type == TP_STR)
			k.rank = rank = str_ranks(t, k.col, rows, m);
		res = sort_rows(&k, rows, tmp, m);
		if (res != rows) {
			tmp = rows;
			rows = res;
		}
		tb_free(rank);
	}
	tb_free(tmp);
	return rows;
}

#define TP_VTAB_MAX_ORDERS 3

/* The cached order of every row of t for o's columns, or NULL. */
static struct tp_sql_order *find_order(const struct tp_sql_table *t, const struct tp_sql_order *o)
{
	uint32_t n = tp_sql_table_rows(t);

	for (uint32_t i = 0; i < t->norders; i++) {
		struct tp_sql_order *c = &t->orders[i];
		if (c->n == n && c->ncols == o->ncols && c->desc == o->desc &&
		    memcmp(c->cols, o->cols, o->ncols * sizeof o->cols[0]) == 0)
			return c;
	}
	return NULL;
}

/* Whether rows a and b hold the same value in column c (not real). */
static bool same_key(const struct tp_sql_table *t, uint32_t c, const char *data, size_t size,
                     uint32_t a, uint32_t b)
{
	int64_t x = 0, y = 0;

	switch (data ? size : 0) {
	case 1:
		return ((const uint8_t *)data)[a] == ((const uint8_t *)data)[b];
	case 4:
		return ((const uint32_t *)data)[a] == ((const uint32_t *)data)[b];
	case 8:
		return ((const uint64_t *)data)[a] == ((const uint64_t *)data)[b];
	}
	if (t->desc->cols[c].type == TP_STR)
		return cell(t, c, a).u == cell(t, c, b).u;
	return col_int(t, c, a, &x) == col_int(t, c, b, &y) && x == y;
}

/* o->runs of o->rows (see struct tp_sql_order): one pass over the keys
 * in order, stored ones compared as bytes (equal bytes, equal values). */
static void order_runs(const struct tp_sql_table *t, struct tp_sql_order *o)
{
	uint32_t cap = o->n / 16, m = 0, *runs;
	const char *data[TP_VTAB_MAX_GROUP];
	size_t size[TP_VTAB_MAX_GROUP];

	o->runs = NULL;
	o->nruns = 0;
	for (uint32_t i = 0; i < o->ncols; i++) {
		const struct tp_col_desc *cd = &t->desc->cols[o->cols[i]];
		if (cd->type == TP_DBL || cd->type == TP_DBLN)
			return;
		data[i] = tp_sql_col_data(t, o->cols[i]);
		size[i] = col_size(cd->type);
	}
	if (!cap)
		return;
	runs = tb_malloc(cap * sizeof *runs);
	runs[m++] = 0;
	for (uint32_t p = 1; p < o->n; p++) {
		uint32_t a = o->rows[p - 1], b = o->rows[p], i;
		if (p + TP_VTAB_PREFETCH < o->n)
			for (i = 0; i < o->ncols; i++)
				if (data[i])
					__builtin_prefetch(data[i] +
					                   (size_t)o->rows[p + TP_VTAB_PREFETCH] *
					                       size[i]);
		for (i = 0; i < o->ncols; i++)
			if (!same_key(t, o->cols[i], data[i], size[i], a, b))
				break;
		if (i == o->ncols)
			continue;
		if (m == cap) {
			tb_free(runs);
			return;
		}
		runs[m++] = p;
	}
	o->runs = runs;
	o->nruns = m;
}

/* c scans co's rows: co stays cached until c is filtered again or
 * closed. */
static void pin_order(struct tp_vtab_cursor *c, struct tp_sql_order *co)
{
	co->users++;
	c->pinned = co->rows;
}

static void unpin_order(struct tp_vtab_cursor *c)
{
	struct tp_sql_table *t = c->t;
	for (uint32_t i = 0; c->pinned && i < t->norders; i++)
		if (t->orders[i].rows == c->pinned && t->orders[i].users) {
			t->orders[i].users--;
			break;
		}
	c->pinned = NULL;
}

/* The same, built if missing (evicting the oldest no cursor scans, past
 * TP_VTAB_MAX_ORDERS). */
static struct tp_sql_order *cached_order(struct tp_sql_table *t, const struct tp_sql_order *o)
{
	uint32_t n = tp_sql_table_rows(t), *rows;
	struct tp_sql_order *found = find_order(t, o);

	if (found)
		return found;
	if (t->norders >= TP_VTAB_MAX_ORDERS) {
		/* The oldest order no cursor is scanning. */
		uint32_t i = 0;
		while (i < t->norders && t->orders[i].users)
			i++;
		if (i < t->norders) {
			tb_free(t->orders[i].rows);
			tb_free(t->orders[i].runs);
			memmove(t->orders + i, t->orders + i + 1,
			        (t->norders - i - 1) * sizeof *t->orders);
			t->norders--;
		}
	}
	if (t->norders == t->orders_cap) {
		/* Past TP_VTAB_MAX_ORDERS only while nested scans hold them. */
		t->orders_cap = t->orders_cap ? t->orders_cap * 2 : TP_VTAB_MAX_ORDERS;
		t->orders = tb_realloc(t->orders, t->orders_cap * sizeof *t->orders);
	}
	rows = tb_malloc((n ? n : 1) * sizeof *rows);
	for (uint32_t r = 0; r < n; r++)
		rows[r] = r;
	t->orders[t->norders] = *o;
	t->orders[t->norders].users = 0;
	t->orders[t->norders].n = n;
	t->orders[t->norders].rows = order_rows(t, o, rows, n);
	order_runs(t, &t->orders[t->norders]);
	return &t->orders[t->norders++];
}

/* Whether no two rows of t share the ORDER BY's keys (a key on id: yes),
 * checked on a complete trace's table of up to 65536 rows through its
 * cached order. Then each group of a join with t outer is one row of t,
 * whose inner rows reach the aggregates in the order the sorter would
 * give them. */
static bool group_unique(struct tp_sql_table *t, const sqlite3_index_info *info)
{
	uint32_t n = tp_sql_table_rows(t);
	struct tp_sql_order o = {0};
	const uint32_t *rows;

	for (int i = 0; i < info->nOrderBy; i++) {
		if (info->aOrderBy[i].iColumn <= 0)
			return true;
		if (o.ncols == TP_VTAB_MAX_GROUP)
			return false;
		o.cols[o.ncols++] = (uint32_t)info->aOrderBy[i].iColumn - 1;
	}
	if (!t->sql->tp->eof || n > 65536)
		return false;
	rows = cached_order(t, &o)->rows;
	for (uint32_t i = 1; i < n; i++)
		if (order_cmp(t, &o, rows[i - 1], rows[i]) == 0)
			return false;
	return true;
}

void tp_sql_tables_release(struct tp_sql *sql)
{
	for (uint32_t i = 0; i < sql->ntables; i++) {
		struct tp_sql_table *t = &sql->tables[i];
		for (uint32_t k = 0; k < t->norders; k++) {
			tb_free(t->orders[k].rows);
			tb_free(t->orders[k].runs);
		}
		tb_free(t->orders);
		t->orders = NULL;
		t->norders = t->orders_cap = 0;
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

/* Parse idx_str ("<col><op> ..." terms and "<mask>u", see vt_best_index)
 * into c->plan; false when it is malformed. */
static bool parse_plan(struct tp_vtab_cursor *c, const char *p)
{
	c->plan_lookup = false;
	c->plan_str = NULL;
	c->plan_used = 0;
	c->nplan = 0;
	while (*p) {
		char *endp;
		long col = strtol(p, &endp, 10);
		char op = *endp;

		if (op == OP_USED && endp != p) {
			c->plan_used = strtoull(p, NULL, 10);
			p = endp + 1;
			while (*p == ' ')
				p++;
			continue;
		}
		if (endp == p || !op || col < 0 || col > (long)c->t->desc->ncols ||
		    c->nplan >= TP_VTAB_MAX_PLAN)
			return false;
		p = endp + 1;
		while (*p == ' ')
			p++;
		c->plan[c->nplan++] = (struct tp_vtab_term){.col = (int32_t)col, .op = op};
	}
	/* One `id =` term, the others filters: a per-row lookup. */
	int ids = 0, arg = 0;
	c->plan_lookup = !c->plan_used && c->nplan >= 1 && c->nplan - 1 <= TP_VTAB_MAX_TERMS;
	for (uint32_t i = 0; i < c->nplan && c->plan_lookup; i++) {
		char op = c->plan[i].op;
		if (op == OP_ORDER || op == OP_ORDER_DESC || op == OP_KEYED)
			c->plan_lookup = false;
		if (c->plan[i].col == 0) {
			if (op != OP_EQ || ids++)
				c->plan_lookup = false;
			c->lookup_term = i;
			c->lookup_arg = arg;
		}
		if (op_has_rhs(op))
			arg++;
	}
	if (!ids)
		c->plan_lookup = false;
	return true;
}

/* The pool id of a text operand (false: not in the pool, no row has it),
 * through the term's cache of its last value. */
static bool term_str(struct tp_vtab_cursor *c, struct tp_vtab_term *tm, sqlite3_value *v,
                     uint32_t *id)
{
	const unsigned char *txt = sqlite3_value_text(v);
	int len = sqlite3_value_bytes(v);
	if (!txt)
		return false;
	if (tm->str_cached && tm->str_len == len && memcmp(tm->str, txt, (size_t)len) == 0) {
		*id = tm->str_id;
		return tm->str_found;
	}
	*id = 0;
	bool found = strpool_find(&c->t->sql->tp->strings, (const char *)txt, (size_t)len, id);
	if (len < TP_VTAB_STR_CACHE) {
		memcpy(tm->str, txt, (size_t)len);
		tm->str_len = (uint8_t)len;
		tm->str_id = *id;
		tm->str_found = found;
		tm->str_cached = true;
	}
	return found;
}

/* vt_filter's short path for a plan of `id =` an integer then filters
 * (c->plan_lookup; the inner side of most joins, called once per outer
 * row): that one row, checked against the filters. */
static int lookup_filter(struct tp_vtab_cursor *c, uint32_t n, int argc, sqlite3_value **argv)
{
	int64_t id = sqlite3_value_int64(argv[c->lookup_arg]);
	int arg = 0;

	for (uint32_t ti = 0; ti < c->nplan; ti++) {
		struct tp_vtab_term *tm = &c->plan[ti];
		struct tp_vtab_filter *f;

		if (ti == c->lookup_term) {
			arg++;
			continue;
		}
		f = &c->filters[c->nfilters++];

		f->col = (uint32_t)tm->col - 1;
		filter_bind(c->t, f);
		f->op = tm->op;
		f->rhs = RHS_NONE;
		f->i = 0;
		f->d = 0;
		f->s = 0;
		if (!op_has_rhs(tm->op))
			continue;
		if (arg >= argc)
			return SQLITE_ERROR;
		if (c->t->desc->cols[f->col].type == TP_STR) {
			if (term_str(c, tm, argv[arg], &f->s) && f->s != 0)
				f->rhs = RHS_STR;
		} else {
			prepare_numeric(f, argv[arg]);
		}
		arg++;
	}
	if (id < 0 || id >= (int64_t)n) {
		c->hi = c->lo;
		c->eof = true;
		return SQLITE_OK;
	}
	c->lo = c->row = (uint32_t)id;
	c->hi = c->lo + 1;
	c->t->sql->rows_visited++;
	c->eof = !row_matches(c, c->row);
	return SQLITE_OK;
}

static int vt_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                     sqlite3_value **argv)
{
	struct tp_vtab_cursor *c = (struct tp_vtab_cursor *)cur;
	struct tp_sql_table *t = c->t;
	uint32_t n = tp_sql_table_rows(t);
	const char *p = idx_str ? idx_str : "";
	struct tp_sql_order o;
	uint64_t used, key = 0;
	int arg = 0;
	long keyed = -1;
	struct tp_vtab_filter keyf = {0}, spare;

	if (c->plan_str != p) {
		if (!parse_plan(c, p))
			return SQLITE_ERROR;
		c->plan_str = p;
	}
	used = c->plan_used;

	c->lo = 0;
	c->hi = n;
	c->nfilters = 0;
	c->eq_col = NULL;
	c->desc = idx_num & 1;
	c->eof = false;
	tb_free(c->own);
	c->own = NULL;
	unpin_order(c);
	c->order = NULL;
	c->grouped = c->whole = false;
	if (c->rd_n != n || !t->sql->tp->eof) {
		c->rd_set = 0;
		c->rd_n = t->sql->tp->eof ? n : UINT32_MAX;
	}
	c->key_mask = 0;
	c->runs = NULL;
	c->nruns = c->run_next = 0;
	c->run_end = UINT32_MAX;
	o.ncols = 0;
	o.desc = 0;
	if (c->plan_lookup && c->lookup_arg < argc &&
	    sqlite3_value_type(argv[c->lookup_arg]) == SQLITE_INTEGER)
		return lookup_filter(c, n, argc, argv);

	for (uint32_t ti = 0; ti < c->nplan; ti++) {
		struct tp_vtab_term *tm = &c->plan[ti];
		long col = tm->col;
		char op = tm->op;
		/* Built in place in the cursor (spare: past the last slot,
		 * an error if it would be kept). */
		struct tp_vtab_filter *f =
		    c->nfilters < TP_VTAB_MAX_TERMS ? &c->filters[c->nfilters] : &spare;

		if (op == OP_ORDER || op == OP_ORDER_DESC) {
			if (col == 0 || o.ncols >= TP_VTAB_MAX_GROUP)
				return SQLITE_ERROR;
			if (op == OP_ORDER_DESC)
				o.desc |= 1u << o.ncols;
			o.cols[o.ncols++] = (uint32_t)col - 1;
			continue;
		}
		f->op = op == OP_KEYED ? OP_EQ : op;
		f->rhs = RHS_NONE;
		f->i = 0;
		f->d = 0;
		f->s = 0;
		if (op == OP_KEYED &&
		    (col == 0 || keyed >= 0 || !is_int_type(t->desc->cols[col - 1].type)))
			return SQLITE_ERROR;
		if (op_has_rhs(op)) {
			if (arg >= argc)
				return SQLITE_ERROR;
			if (col > 0 && t->desc->cols[col - 1].type == TP_STR) {
				if (term_str(c, tm, argv[arg], &f->s) && f->s != 0)
					f->rhs = RHS_STR;
			} else {
				prepare_numeric(f, argv[arg]);
			}
			arg++;
		}
		if (col == 0) {
			int64_t lo, hi;
			bool empty;
			filter_interval(f, &lo, &hi, &empty);
			if (empty || hi < 0 || lo >= (int64_t)n) {
				c->hi = c->lo;
				continue;
			}
			narrow(c, lo < 0 ? 0 : (uint32_t)lo,
			       hi >= (int64_t)n - 1 ? n : (uint32_t)(hi + 1));
			continue;
		}
		f->col = (uint32_t)col - 1;
		filter_bind(t, f);
		if (op == OP_KEYED) {
			int64_t lo, hi;
			bool empty;
			filter_interval(f, &lo, &hi, &empty);
			key = (uint64_t)lo ^ 1ull << 63;
			/* Key 0 is NULL's, unless the column has no NULL. */
			if (empty || (key == 0 && t->desc->cols[f->col].type != TP_I64 &&
			              t->desc->cols[f->col].type != TP_I32)) {
				c->hi = c->lo;
				continue;
			}
			if (t->sql->tp->eof) {
				keyed = col - 1;
				keyf = *f;
				continue;
			}
			/* Not cacheable yet: a filter like any other. */
		}
		if (op_has_rhs(op) && (t->desc->cols[f->col].flags & TP_COL_SORTED) &&
		    tp_sql_col_sorted(t, f->col)) {
			int64_t lo, hi;
			bool empty;
			uint32_t first, end;
			filter_interval(f, &lo, &hi, &empty);
			if (empty) {
				c->hi = c->lo;
				continue;
			}
			tp_sql_sorted_range(t, f->col, lo, hi, &first, &end);
			narrow(c, first, end);
			continue;
		}
		if (f == &spare)
			return SQLITE_ERROR;
		c->nfilters++;
	}
	if (c->hi < c->lo)
		c->hi = c->lo;
	if (keyed >= 0 && !o.ncols) {
		/* The run of key in the column's order, rows in id order;
		 * the range and filters checked per row. */
		struct order_key k = {t, (uint32_t)keyed, false, NULL};
		struct tp_sql_order *ko;
		const uint32_t *rows;
		uint32_t first = 0, end = n, hi = n;

		o.ncols = 1;
		o.cols[0] = (uint32_t)keyed;
		ko = cached_order(t, &o);
		rows = ko->rows;
		while (first < end) {
			uint32_t mid = first + (end - first) / 2;
			if (order_key(&k, rows[mid]) < key)
				first = mid + 1;
			else
				end = mid;
		}
		end = first;
		while (end < hi) {
			uint32_t mid = end + (hi - end) / 2;
			if (order_key(&k, rows[mid]) <= key)
				end = mid + 1;
			else
				hi = mid;
		}
		if (end - first <= c->hi - c->lo || c->nfilters >= TP_VTAB_MAX_TERMS) {
			c->grouped = c->whole = true;
			pin_order(c, ko);
			c->order = rows + first;
			c->norder = end - first;
			c->pos = 0;
			prefetch_cols(c, used);
			seek_match(c);
			return SQLITE_OK;
		}
		/* An id or sorted-column range shorter than the run: scan
		 * it, the key a filter like the others. */
		c->filters[c->nfilters++] = keyf;
		o.ncols = 0;
		keyed = -1;
	}
	if (keyed >= 0)
		return SQLITE_ERROR;
	if (o.ncols) {
		c->grouped = true;
		c->pos = 0;
		prefetch_cols(c, used);
		if (c->lo == 0 && c->hi == n && t->sql->tp->eof &&
		    (!c->nfilters || find_order(t, &o))) {
			/* The whole table: one cached order, filters checked
			 * per row (without a cached order, sorting only the
			 * rows that match is cheaper). */
			struct tp_sql_order *co = cached_order(t, &o);
			pin_order(c, co);
			c->order = co->rows;
			c->norder = n;
			c->whole = true;
			if (co->runs) {
				c->runs = co->runs;
				c->nruns = co->nruns;
				c->run_end = 0;
				for (uint32_t k = 0; k < o.ncols; k++)
					if (o.cols[k] < TP_VTAB_READERS)
						c->key_mask |= 1ull << o.cols[k];
				prefetch_cols(c, used & ~c->key_mask);
			}
		} else {
			uint32_t m = 0, *rows = tb_malloc((c->hi > c->lo ? c->hi - c->lo : 1) *
			                                  sizeof *rows);
			eq_scan_setup(c);
			for (uint32_t r = next_match(c, c->lo, c->hi); r < c->hi;
			     r = next_match(c, r + 1, c->hi))
				rows[m++] = r;
			c->order = c->own = order_rows(t, &o, rows, m);
			c->norder = m;
		}
		seek_match(c);
		return SQLITE_OK;
	}
	if (c->lo == c->hi) {
		c->eof = true;
		return SQLITE_OK;
	}
	c->row = c->desc ? c->hi - 1 : c->lo;
	eq_scan_setup(c);
	seek_match(c);
	return SQLITE_OK;
}

static int vt_next(sqlite3_vtab_cursor *cur)
{
	struct tp_vtab_cursor *c = (struct tp_vtab_cursor *)cur;
	if (c->grouped)
		c->pos++;
	else if (c->desc)
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

static void result_str(const struct tp_sql_table *t, sqlite3_context *ctx, uint32_t id)
{
	if (id != TP_NULL_STR) {
		size_t len;
		const char *str = strpool_get(&t->sql->tp->strings, id, &len);
		sqlite3_result_text64(ctx, str, len, SQLITE_STATIC, SQLITE_UTF8);
	}
}

/* A cell of a column of type ty as SQL (NULL sentinels as NULL), as
 * col_int() and cell() read it. */
static void result_cell(const struct tp_sql_table *t, sqlite3_context *ctx, enum tp_col_type ty,
                        union tp_cell v)
{
	switch (ty) {
	case TP_I64:
	case TP_I32:
		sqlite3_result_int64(ctx, v.i);
		break;
	case TP_I64N:
		if (v.i != TP_NULL_I64)
			sqlite3_result_int64(ctx, v.i);
		break;
	case TP_U32:
		sqlite3_result_int64(ctx, v.u);
		break;
	case TP_U32N:
		if (v.u != TP_NULL_U32)
			sqlite3_result_int64(ctx, v.u);
		break;
	case TP_U8:
		sqlite3_result_int64(ctx, v.b);
		break;
	case TP_DBL:
	case TP_DBLN:
		if (!isnan(v.d))
			sqlite3_result_double(ctx, v.d);
		break;
	case TP_STR:
		result_str(t, ctx, v.u);
		break;
	}
}

/* The reader kind of a computed column (other kinds: its enum tp_col_type). */
#define TP_VTAB_RD_COMPUTED 0xff

/* xColumn of a computed column: its getter, then as its type says. Out of
 * line, as column_other(), so that vt_column's array reads need no frame. */
static __attribute__((noinline)) void
column_computed(const struct tp_sql_table *t, sqlite3_context *ctx, uint32_t col, uint32_t row)
{
	const struct tp_col_desc *cd = &t->desc->cols[col];
	union tp_cell v;

	cd->get(t->sql->tp, row, &v);
	result_cell(t, ctx, cd->type, v);
}

/* xColumn for the id, sparse columns never written and columns past
 * TP_VTAB_READERS; it sets up the reader of any other. */
static __attribute__((noinline)) int column_other(struct tp_vtab_cursor *c, sqlite3_context *ctx,
                                                  int i)
{
	const struct tp_sql_table *t = c->t;
	const struct tp_col_desc *cd;
	uint32_t row = c->row, col;

	if (i <= 0) {
		sqlite3_result_int64(ctx, row);
		return SQLITE_OK;
	}
	col = (uint32_t)i - 1;
	cd = &t->desc->cols[col];
	if (col < TP_VTAB_READERS && (c->key_mask >> col & 1))
		row = c->key_row;
	if (col < TP_VTAB_READERS) {
		const void *data = tp_sql_col_data(t, col);
		if (cd->flags & TP_COL_COMPUTED) {
			c->rd[col].type = TP_VTAB_RD_COMPUTED;
			c->rd_set |= 1ull << col;
		} else if (data) {
			c->rd[col].data = data;
			c->rd[col].type = (uint8_t)cd->type;
			c->rd_set |= 1ull << col;
		}
	}
	if (cd->flags & TP_COL_COMPUTED)
		column_computed(t, ctx, col, row);
	else
		result_cell(t, ctx, cd->type, cell(t, col, row));
	return SQLITE_OK;
}

static int vt_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct tp_vtab_cursor *c = (struct tp_vtab_cursor *)cur;
	uint32_t col = (uint32_t)i - 1, row = c->row;
	const void *data;

	if (col >= TP_VTAB_READERS || !(c->rd_set >> col & 1))
		return column_other(c, ctx, i);
	if (c->key_mask >> col & 1)
		row = c->key_row;
	data = c->rd[col].data;
	switch (c->rd[col].type) {
	case TP_VTAB_RD_COMPUTED:
		column_computed(c->t, ctx, col, row);
		break;
	case TP_I64:
		sqlite3_result_int64(ctx, ((const int64_t *)data)[row]);
		break;
	case TP_I64N: {
		int64_t x = ((const int64_t *)data)[row];
		if (x != TP_NULL_I64)
			sqlite3_result_int64(ctx, x);
		break;
	}
	case TP_U32:
		sqlite3_result_int64(ctx, ((const uint32_t *)data)[row]);
		break;
	case TP_U32N: {
		uint32_t x = ((const uint32_t *)data)[row];
		if (x != TP_NULL_U32)
			sqlite3_result_int64(ctx, x);
		break;
	}
	case TP_U8:
		sqlite3_result_int64(ctx, ((const uint8_t *)data)[row]);
		break;
	case TP_I32:
		sqlite3_result_int64(ctx, ((const int32_t *)data)[row]);
		break;
	case TP_DBL:
	case TP_DBLN: {
		double x = ((const double *)data)[row];
		if (!isnan(x))
			sqlite3_result_double(ctx, x);
		break;
	}
	case TP_STR:
		result_str(c->t, ctx, ((const uint32_t *)data)[row]);
		break;
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
