/*
 * The stdlib modules we provide for `INCLUDE PERFETTO MODULE name;` (see
 * include.c): Perfetto's public names and columns, our own SQL and C.
 *
 *   slices.with_context  thread_slice, process_slice, thread_or_process_slice
 *                        (schema.c, part of the prelude here)
 *   slices.hierarchy     _slice_ancestor_and_self(id), _slice_descendant_and_self(id)
 *   slices.stack         slice_with_stack_id, ancestor_slice_by_stack(hash),
 *                        descendant_slice_by_stack(hash)
 *   slices.self_dur      slice_self_dur
 *   time.conversion      time_from_ns/us/ms/s/min/hours/days(x),
 *                        time_to_ns/us/ms/s/min/hours/days(x)
 *   counters.intervals   counter_leading_intervals!() (a macro, include.c)
 *   linux.cpu.idle       cpu_idle_counters
 *   linux.cpu.frequency  cpu_frequency_counters
 *   linux.cpu.idle_stats cpu_idle_stats
 *   linux.cpu.idle_time_in_state
 *                        linux_per_cpu_idle_time_in_state_counters,
 *                        linux_cpu_idle_time_in_state_counters
 *
 * Every module's objects exist from the start (views are free until
 * queried; their text may use the macros), so INCLUDE only checks the name
 * (packages.c). Also here, because
 * Perfetto has them in its prelude: the table functions ancestor_slice(id) and
 * descendant_slice(id).
 *
 * Table functions are one generic eponymous virtual table per entry of
 * tablefns[]: a SQL body with ?1..?n for the arguments, which are the
 * table's hidden columns (`FROM f(x)` binds them). The body is prepared per
 * xFilter and its rows handed through.
 *
 * A slice's stack id is HASH() of the '|'-joined decimal HASH()es of
 * "category|name" (NULL category as '') of the slice, then its parent, up to
 * the root: equal for slices with the same names on the same path.
 */
#include <stdio.h>

#include "sql_int.h"

/* ---- modules ------------------------------------------------------------- */

#define SLICE_COLS                                                                         \
	"id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts, " \
	"thread_dur"
#define SLICE_COLS_S                                                                \
	"s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id, " \
	"s.arg_set_id, s.thread_ts, s.thread_dur"

static const char *const module_names[] = {
    "slices.with_context", "slices.hierarchy",     "slices.stack",
    "slices.self_dur",     "time.conversion",      "counters.intervals",
    "linux.cpu.idle",      "linux.cpu.idle_stats", "linux.cpu.idle_time_in_state",
    "linux.cpu.frequency",
};

/* Tracks of this machine have machine_id NULL in our track table; Perfetto
 * reports them as machine 0. */
#define MACHINE "coalesce(t.machine_id, 0)"

static const char *const module_views[] = {
    "CREATE VIEW slice_with_stack_id AS SELECT " SLICE_COLS
    ", thread_instruction_count, thread_instruction_delta, "
    "__intrinsic_slice_stack_hash(id) AS stack_id, "
    "coalesce(__intrinsic_slice_stack_hash(parent_id), 0) AS parent_stack_id FROM slice",
    /* One pass over the children grouped by parent, not a subquery per slice. */
    "CREATE VIEW slice_self_dur AS SELECT s.id AS id, s.dur - coalesce(c.total, 0) AS self_dur "
    "FROM slice AS s LEFT JOIN (SELECT parent_id, sum(dur) AS total FROM slice "
    "WHERE parent_id IS NOT NULL GROUP BY parent_id) AS c ON c.parent_id = s.id",
    /* linux.cpu.idle: cpuidle counters as intervals; idle -1 = not idle. */
    "CREATE VIEW cpu_idle_counters AS SELECT i.id AS id, i.track_id AS track_id, i.ts AS ts, "
    "i.dur AS dur, cast_int!(iif(i.value = 4294967295, -1, i.value)) AS idle, t.cpu AS cpu "
    "FROM counter_leading_intervals!((SELECT c.* FROM counter AS c JOIN cpu_counter_track "
    "AS k ON k.id = c.track_id WHERE k.name = 'cpuidle')) AS i "
    "JOIN cpu_counter_track AS t ON i.track_id = t.id",
    /* linux.cpu.frequency: cpufreq counters as intervals. A LEFT JOIN on
     * cpu: a cpu without a cpu row keeps its intervals (ucpu NULL). */
    "CREATE VIEW cpu_frequency_counters AS SELECT i.id AS id, i.track_id AS track_id, "
    "i.ts AS ts, i.dur AS dur, cast_int!(i.value) AS freq, u.ucpu AS ucpu, t.cpu AS cpu "
    "FROM counter_leading_intervals!((SELECT c.* FROM counter AS c JOIN cpu_counter_track "
    "AS k ON k.id = c.track_id WHERE k.name = 'cpufreq')) AS i "
    "JOIN cpu_counter_track AS t ON i.track_id = t.id LEFT JOIN cpu AS u "
    "ON " MACHINE " = coalesce(u.machine_id, 0) AND u.cpu = t.cpu",
    /* linux.cpu.idle_stats: per cpu and state (idle + 1), share of the cpu's
     * counted time. */
    "CREATE VIEW cpu_idle_stats AS SELECT g.cpu AS cpu, g.state AS state, g.count AS count, "
    "g.dur AS dur, g.avg_dur AS avg_dur, g.dur * 100.0 / a.dur AS idle_percent FROM "
    "(SELECT cpu, idle + 1 AS state, count(*) AS count, sum(dur) AS dur, "
    "sum(dur) / count(*) AS avg_dur FROM cpu_idle_counters WHERE idle >= 0 "
    "GROUP BY cpu, idle) AS g JOIN (SELECT cpu, sum(dur) AS dur FROM cpu_idle_counters "
    "GROUP BY cpu) AS a USING (cpu)",
    /* linux.cpu.idle_time_in_state: from the cumulative residency counters
     * (sys_stats cpuidle_state), the share of each interval between two
     * samples spent in each state, C0 being the rest. */
    "CREATE VIEW linux_per_cpu_idle_time_in_state_counters AS WITH "
    "s AS (SELECT c.ts AS ts, c.value AS value, c.track_id AS track_id, " MACHINE
    " AS machine_id, extract_arg(t.dimension_arg_set_id, 'state') AS state, "
    "extract_arg(t.dimension_arg_set_id, 'cpu') AS cpu FROM counter AS c JOIN track AS t "
    "ON c.track_id = t.id WHERE t.type = 'cpu_idle_state'), "
    "d AS (SELECT ts, state, cpu, machine_id, value - lag(value) OVER w AS total_residency, "
    "time_to_us(ts - lag(ts) OVER w) AS time_slice FROM s "
    "WINDOW w AS (PARTITION BY track_id ORDER BY ts)) "
    "SELECT ts, machine_id, state, cpu, min(100, total_residency / time_slice * 100) "
    "AS idle_percentage, total_residency, time_slice FROM d WHERE time_slice IS NOT NULL "
    "UNION ALL SELECT ts, machine_id, 'C0', cpu, "
    "max(0, (time_slice - sum(total_residency)) / time_slice * 100), "
    "max(0, time_slice - sum(total_residency)), time_slice FROM d "
    "WHERE time_slice IS NOT NULL GROUP BY ts, cpu, machine_id",
    "CREATE VIEW linux_cpu_idle_time_in_state_counters AS SELECT ts, machine_id, state, "
    "min(100, sum(total_residency) / sum(time_slice) * 100) AS idle_percentage, "
    "sum(total_residency) AS total_residency, sum(time_slice) AS time_slice "
    "FROM linux_per_cpu_idle_time_in_state_counters GROUP BY ts, state, machine_id",
};

const char *tp_sql_module_name(size_t i)
{
	return i < TB_ARRAY_SIZE(module_names) ? module_names[i] : NULL;
}

int tp_sql_create_module_views(sqlite3 *db, char **errmsg)
{
	for (size_t i = 0; i < TB_ARRAY_SIZE(module_views); i++) {
		char *sql = NULL, err[256];
		int rc = tp_sql_expand_macros(module_views[i], &sql, err, sizeof err);
		if (rc != SQLITE_OK) {
			*errmsg = sqlite3_mprintf("%s", err);
			return rc;
		}
		rc = sqlite3_exec(db, sql, NULL, NULL, errmsg);
		sqlite3_free(sql);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* ---- table functions ----------------------------------------------------- */

struct tablefn {
	const char *name;
	const char *cols; /* the result's column names, comma separated */
	int nargs;
	const char *body; /* SQL with ?1..?nargs */
};

/* Ancestors of ?1 (parent first), optionally with ?1 itself. */
#define ANCESTORS_CTE(self)                                                                \
	"WITH RECURSIVE anc(id) AS (SELECT " self " FROM __intrinsic_slice WHERE id = ?1 " \
	"UNION ALL SELECT s.parent_id FROM anc CROSS JOIN __intrinsic_slice AS s "         \
	"ON s.id = anc.id WHERE s.parent_id IS NOT NULL) "
/* Descendants of ?1: among the slices of its track that start within it and
 * are deeper, those whose parent chain reaches it. */
#define DESCENDANTS_CTE                                                                \
	"WITH RECURSIVE x AS (SELECT ts, dur, track_id, depth FROM __intrinsic_slice " \
	"WHERE id = ?1), cand AS (SELECT s.id, s.parent_id FROM x CROSS JOIN "         \
	"__intrinsic_slice AS s WHERE s.track_id = x.track_id AND s.ts >= x.ts AND "   \
	"(x.dur < 0 OR s.ts <= x.ts + x.dur) AND s.depth > x.depth), "                 \
	"d(id) AS (SELECT id FROM cand WHERE parent_id = ?1 UNION ALL "                \
	"SELECT cand.id FROM d JOIN cand ON cand.parent_id = d.id) "
#define SLICE_ALL_COLS \
	SLICE_COLS ", thread_instruction_count, thread_instruction_delta, cat, slice_id"

/* Slices reached from ?1 by following flows forward (slice_out to
 * slice_in) and stepping down to descendants, or backward and up to
 * ancestors; UNION keeps cycles finite. */
#define REACH_CTE(from, to, family)                                                           \
	"WITH RECURSIVE reach(sid) AS (SELECT ?1 UNION SELECT f." to " FROM reach JOIN flow " \
	"AS f ON f." from " = reach.sid UNION SELECT r.id FROM reach CROSS JOIN " family      \
	"(reach.sid) AS r) "
#define FLOW_COLS "id, slice_out, slice_in, trace_id, arg_set_id"

static const struct tablefn tablefns[] = {
    {"ancestor_slice", SLICE_ALL_COLS, 1,
     ANCESTORS_CTE("parent_id") "SELECT s.* FROM anc CROSS JOIN slice AS s ON s.id = anc.id "
                                "WHERE anc.id IS NOT NULL ORDER BY s.id"},
    {"descendant_slice", SLICE_ALL_COLS, 1,
     DESCENDANTS_CTE "SELECT s.* FROM d CROSS JOIN slice AS s ON s.id = d.id ORDER BY s.id"},
    {"_slice_ancestor_and_self", SLICE_COLS, 1,
     ANCESTORS_CTE("id") "SELECT " SLICE_COLS_S " FROM anc CROSS JOIN slice AS s "
                         "ON s.id = anc.id ORDER BY s.depth"},
    {"_slice_descendant_and_self", SLICE_COLS, 1,
     DESCENDANTS_CTE ", e(id) AS (SELECT ?1 UNION ALL SELECT id FROM d) SELECT " SLICE_COLS_S
                     " FROM e CROSS JOIN slice AS s ON s.id = e.id ORDER BY s.id"},
    {"ancestor_slice_by_stack", SLICE_COLS, 1,
     "SELECT DISTINCT a.* FROM slice_with_stack_id AS m CROSS JOIN "
     "_slice_ancestor_and_self(m.id) AS a WHERE m.stack_id = ?1 ORDER BY a.ts"},
    /* Flows on the chains through ?1: forward from it, and backward. */
    {"directly_connected_flow", FLOW_COLS, 1,
     "WITH RECURSIVE fwd(fid, sid) AS (SELECT id, slice_in FROM flow WHERE slice_out = ?1 "
     "UNION SELECT f.id, f.slice_in FROM fwd JOIN flow AS f ON f.slice_out = fwd.sid), "
     "bwd(fid, sid) AS (SELECT id, slice_out FROM flow WHERE slice_in = ?1 "
     "UNION SELECT f.id, f.slice_out FROM bwd JOIN flow AS f ON f.slice_in = bwd.sid) "
     "SELECT " FLOW_COLS " FROM flow WHERE id IN (SELECT fid FROM fwd UNION "
     "SELECT fid FROM bwd) ORDER BY id"},
    {"following_flow", FLOW_COLS, 1,
     REACH_CTE(
         "slice_out", "slice_in",
         "descendant_slice") "SELECT " FLOW_COLS
                             " FROM flow WHERE slice_out IN (SELECT sid FROM reach) ORDER BY id"},
    {"preceding_flow", FLOW_COLS, 1,
     REACH_CTE(
         "slice_in", "slice_out",
         "ancestor_slice") "SELECT " FLOW_COLS
                           " FROM flow WHERE slice_in IN (SELECT sid FROM reach) ORDER BY id"},
    {"descendant_slice_by_stack", SLICE_COLS, 1,
     "SELECT DISTINCT a.* FROM slice_with_stack_id AS m CROSS JOIN "
     "_slice_descendant_and_self(m.id) AS a WHERE m.stack_id = ?1 ORDER BY a.ts"},
};

struct tf_vtab {
	sqlite3_vtab base;
	sqlite3 *db;
	const struct tablefn *fn;
	int ncols; /* result columns, then fn->nargs hidden argument columns */
};

struct tf_cursor {
	sqlite3_vtab_cursor base;
	sqlite3_stmt *st;
	sqlite3_value *args[4];
	sqlite3_int64 rowid;
	bool eof;
};

static int tf_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **err)
{
	const struct tablefn *fn = aux;
	struct tf_vtab *v;
	int ncols = 1;
	for (const char *c = fn->cols; *c; c++)
		ncols += *c == ',';
	sqlite3_str *s = sqlite3_str_new(db);
	sqlite3_str_appendf(s, "CREATE TABLE x(%s", fn->cols);
	for (int i = 0; i < fn->nargs; i++)
		sqlite3_str_appendf(s, ", __arg%d HIDDEN", i);
	sqlite3_str_appendall(s, ")");
	char *decl = sqlite3_str_finish(s);
	if (!decl)
		return SQLITE_NOMEM;
	int rc = sqlite3_declare_vtab(db, decl);
	sqlite3_free(decl);
	if (rc != SQLITE_OK)
		return rc;
	v = sqlite3_malloc(sizeof *v);
	if (!v)
		return SQLITE_NOMEM;
	memset(v, 0, sizeof *v);
	v->db = db;
	v->fn = fn;
	v->ncols = ncols;
	*out = &v->base;
	return SQLITE_OK;
}

static int tf_disconnect(sqlite3_vtab *vt)
{
	sqlite3_free(vt);
	return SQLITE_OK;
}

/* Every argument needs an equality constraint; without one the plan is
 * impossible and SQLite reports it. */
static int tf_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	struct tf_vtab *v = (struct tf_vtab *)vt;
	int found = 0;
	for (int i = 0; i < info->nConstraint; i++) {
		const struct sqlite3_index_constraint *c = &info->aConstraint[i];
		int a = c->iColumn - v->ncols;
		if (a < 0 || c->op != SQLITE_INDEX_CONSTRAINT_EQ)
			continue;
		if (!c->usable)
			return SQLITE_CONSTRAINT;
		info->aConstraintUsage[i].argvIndex = a + 1;
		info->aConstraintUsage[i].omit = 1;
		found |= 1 << a;
	}
	if (found != (1 << v->fn->nargs) - 1)
		return SQLITE_CONSTRAINT;
	info->estimatedCost = 100;
	info->estimatedRows = 100;
	return SQLITE_OK;
}

static int tf_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct tf_cursor *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	*out = &c->base;
	return SQLITE_OK;
}

static void tf_reset(struct tf_cursor *c)
{
	sqlite3_finalize(c->st);
	c->st = NULL;
	for (size_t i = 0; i < TB_ARRAY_SIZE(c->args); i++) {
		sqlite3_value_free(c->args[i]);
		c->args[i] = NULL;
	}
}

static int tf_close(sqlite3_vtab_cursor *cur)
{
	tf_reset((struct tf_cursor *)cur);
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int tf_step(struct tf_cursor *c)
{
	int rc = sqlite3_step(c->st);
	c->rowid++;
	c->eof = rc != SQLITE_ROW;
	if (rc == SQLITE_ROW || rc == SQLITE_DONE)
		return SQLITE_OK;
	struct tf_vtab *v = (struct tf_vtab *)c->base.pVtab;
	sqlite3_free(v->base.zErrMsg);
	v->base.zErrMsg = sqlite3_mprintf("%s: %s", v->fn->name, sqlite3_errmsg(v->db));
	return rc;
}

static int tf_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc,
                     sqlite3_value **argv)
{
	struct tf_cursor *c = (struct tf_cursor *)cur;
	struct tf_vtab *v = (struct tf_vtab *)cur->pVtab;
	tf_reset(c);
	c->rowid = 0;
	int rc = sqlite3_prepare_v2(v->db, v->fn->body, -1, &c->st, NULL);
	if (rc != SQLITE_OK) {
		sqlite3_free(v->base.zErrMsg);
		v->base.zErrMsg = sqlite3_mprintf("%s: %s", v->fn->name, sqlite3_errmsg(v->db));
		return rc;
	}
	for (int i = 0; i < argc && i < (int)TB_ARRAY_SIZE(c->args); i++) {
		c->args[i] = sqlite3_value_dup(argv[i]);
		sqlite3_bind_value(c->st, i + 1, argv[i]);
	}
	return tf_step(c);
}

static int tf_next(sqlite3_vtab_cursor *cur)
{
	return tf_step((struct tf_cursor *)cur);
}

static int tf_eof(sqlite3_vtab_cursor *cur)
{
	return ((struct tf_cursor *)cur)->eof;
}

static int tf_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct tf_cursor *c = (struct tf_cursor *)cur;
	struct tf_vtab *v = (struct tf_vtab *)cur->pVtab;
	if (i < v->ncols)
		sqlite3_result_value(ctx, sqlite3_column_value(c->st, i));
	else if (i - v->ncols < (int)TB_ARRAY_SIZE(c->args) && c->args[i - v->ncols])
		sqlite3_result_value(ctx, c->args[i - v->ncols]);
	return SQLITE_OK;
}

static int tf_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct tf_cursor *)cur)->rowid;
	return SQLITE_OK;
}

static const sqlite3_module tf_module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only */
    .xConnect = tf_connect,
    .xBestIndex = tf_best_index,
    .xDisconnect = tf_disconnect,
    .xDestroy = tf_disconnect,
    .xOpen = tf_open,
    .xClose = tf_close,
    .xFilter = tf_filter,
    .xNext = tf_next,
    .xEof = tf_eof,
    .xColumn = tf_column,
    .xRowid = tf_rowid,
};

/* ---- slice stack hashes -------------------------------------------------- */

static void fn_slice_stack_hash(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct tp *tp = ((struct tp_sql *)sqlite3_user_data(ctx))->tp;
	const struct tp_slice_table *s = &tp->t.slice;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER)
		return;
	int64_t id = sqlite3_value_int64(argv[0]);
	if (id < 0 || id >= s->n)
		return;
	uint64_t h = TP_SQL_FNV1A_OFFSET;
	/* The parent chain is at most n long; a longer one would be a cycle. */
	for (uint32_t row = (uint32_t)id, steps = 0; row < s->n && steps <= s->n; steps++) {
		size_t clen = 0, nlen = 0;
		const char *cat = strpool_get(&tp->strings, s->category[row], &clen);
		const char *name = strpool_get(&tp->strings, s->name[row], &nlen);
		uint64_t e = tp_sql_fnv1a(TP_SQL_FNV1A_OFFSET, cat, clen);
		e = tp_sql_fnv1a(tp_sql_fnv1a(e, "|", 1), name, nlen);
		char dec[24];
		int n = snprintf(dec, sizeof dec, "%lld", (long long)(int64_t)e);
		if (steps)
			h = tp_sql_fnv1a(h, "|", 1);
		h = tp_sql_fnv1a(h, dec, (size_t)n);
		row = s->parent_id[row]; /* TP_NULL_U32 ends the walk */
	}
	sqlite3_result_int64(ctx, (sqlite3_int64)h);
}

/* ---- time.conversion ----------------------------------------------------- */

/* time_from_<unit>(x) = x * factor, time_to_<unit>(x) = x / factor, with
 * SQLite's arithmetic: integers stay integers (division truncates; a
 * product that overflows becomes real), reals stay real, text is read as a
 * number (0 if it is none), NULL stays NULL. */
static void fn_time_scale(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	/* > 0 multiply, < 0 divide; behind a pointer, as it does not fit one on
	 * 32-bit targets. */
	int64_t f = *(const int64_t *)sqlite3_user_data(ctx);
	int type = sqlite3_value_numeric_type(argv[0]);
	if (type == SQLITE_NULL)
		return;
	if (type == SQLITE_FLOAT) {
		double d = sqlite3_value_double(argv[0]);
		sqlite3_result_double(ctx, f > 0 ? d * (double)f : d / (double)-f);
		return;
	}
	int64_t v = type == SQLITE_INTEGER ? sqlite3_value_int64(argv[0]) : 0, r;
	if (f < 0)
		sqlite3_result_int64(ctx, v / -f);
	else if (__builtin_mul_overflow(v, f, &r))
		sqlite3_result_double(ctx, (double)v * (double)f);
	else
		sqlite3_result_int64(ctx, r);
}

int tp_sql_register_modules(sqlite3 *db, struct tp_sql *sql)
{
	/* fn_time_scale's factors: [0] time_from_<unit>, [1] time_to_<unit>. */
	static const struct {
		const char *unit;
		int64_t factor[2];
	} units[] = {
	    {"ns", {1, -1}},
	    {"us", {1000, -1000}},
	    {"ms", {1000000, -1000000}},
	    {"s", {1000000000, -1000000000}},
	    {"min", {60 * 1000000000ll, -60 * 1000000000ll}},
	    {"hours", {3600 * 1000000000ll, -3600 * 1000000000ll}},
	    {"days", {86400 * 1000000000ll, -86400 * 1000000000ll}},
	};
	int rc = SQLITE_OK;
	for (size_t i = 0; i < TB_ARRAY_SIZE(units) && rc == SQLITE_OK; i++) {
		char name[32];
		for (int dir = 0; dir < 2 && rc == SQLITE_OK; dir++) {
			snprintf(name, sizeof name, "time_%s_%s", dir ? "to" : "from",
			         units[i].unit);
			rc = sqlite3_create_function_v2(
			    db, name, 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS,
			    (void *)&units[i].factor[dir], fn_time_scale,
			    NULL, NULL, NULL);
		}
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "__intrinsic_slice_stack_hash", 1,
		                                SQLITE_UTF8 | SQLITE_DETERMINISTIC, sql,
		                                fn_slice_stack_hash, NULL, NULL, NULL);
	for (size_t i = 0; i < TB_ARRAY_SIZE(tablefns) && rc == SQLITE_OK; i++)
		rc = sqlite3_create_module_v2(db, tablefns[i].name, &tf_module,
		                              (void *)&tablefns[i], NULL);
	return rc;
}
