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
 *   stacks.cpu_profiling cpu_profiling_samples (not cpu_profiling_summary_tree)
 *   linux.irqs           linux_interrupt_mapping; linux_hard_irqs,
 *                        linux_soft_irqs, linux_irqs (slices of cpu_irq /
 *                        cpu_softirq tracks: empty, irq events are not
 *                        imported as slices yet)
 *   linux.perf.counters  linux_perf_sample_with_counters,
 *                        linux_perf_counter_for_sample(sample_id, name)
 *   android.package_lookup
 *                        android_package_lookup(uid)
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
#include <string.h>

#include "sql_int.h"

/* ---- modules ------------------------------------------------------------- */

#define SLICE_COLS                                                                         \
	"id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id, thread_ts, " \
	"thread_dur"
#define SLICE_COLS_S                                                                \
	"s.id, s.ts, s.dur, s.track_id, s.category, s.name, s.depth, s.parent_id, " \
	"s.arg_set_id, s.thread_ts, s.thread_dur"

static const char *const module_names[] = {
    "slices.with_context", "slices.hierarchy",       "slices.stack",
    "slices.self_dur",     "time.conversion",        "counters.intervals",
    "linux.cpu.idle",      "linux.cpu.idle_stats",   "linux.cpu.idle_time_in_state",
    "linux.cpu.frequency", "stacks.cpu_profiling",   "linux.irqs",
    "linux.perf.counters", "android.package_lookup",
};

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
    /* linux.cpu.frequency: cpufreq counters as intervals, with the ucpu of
     * their machine's cpu (a cpu track always has its cpu row). */
    "CREATE VIEW cpu_frequency_counters AS SELECT i.id AS id, i.track_id AS track_id, "
    "i.ts AS ts, i.dur AS dur, cast_int!(i.value) AS freq, u.ucpu AS ucpu, t.cpu AS cpu "
    "FROM counter_leading_intervals!((SELECT c.* FROM counter AS c JOIN cpu_counter_track "
    "AS k ON k.id = c.track_id WHERE k.name = 'cpufreq')) AS i "
    "JOIN cpu_counter_track AS t ON i.track_id = t.id JOIN cpu AS u "
    "ON t.machine_id IS u.machine_id AND u.cpu = t.cpu",
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
    "s AS (SELECT c.ts AS ts, c.value AS value, c.track_id AS track_id, t.machine_id"
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
    /* stacks.cpu_profiling: the stack samples of profilers that sample
     * on time or on cpu work (a timebase in ns, cycles or instructions, or
     * none known), with their thread and cpu. */
    "CREATE VIEW cpu_profiling_samples AS SELECT s.id AS id, s.ts AS ts, tc.utid AS utid, "
    "t.tid AS tid, t.name AS thread_name, ec.ucpu AS ucpu, c.cpu AS cpu, "
    "s.callsite_id AS callsite_id, s.source AS source FROM stack_sample AS s "
    "LEFT JOIN __intrinsic_profiler_task_context AS tc ON tc.id = s.task_context_id "
    "LEFT JOIN __intrinsic_profiler_execution_context AS ec ON ec.id = s.execution_context_id "
    "LEFT JOIN __intrinsic_profiler_session AS ss ON ss.id = s.session_id "
    "LEFT JOIN thread AS t ON t.utid = tc.utid LEFT JOIN cpu AS c ON c.id = ec.ucpu "
    "WHERE ss.timebase_unit IS NULL OR ss.timebase_unit IN ('ns', 'cycles', 'instructions') "
    "ORDER BY s.ts",
    /* linux.irqs */
    "CREATE VIEW linux_hard_irqs AS SELECT s.ts AS ts, s.dur AS dur, s.name AS name, s.id AS id, "
    "s.parent_id AS parent_id FROM slice AS s JOIN track AS t ON t.id = s.track_id "
    "WHERE t.type = 'cpu_irq'",
    "CREATE VIEW linux_soft_irqs AS SELECT s.ts AS ts, s.dur AS dur, s.name AS name, s.id AS id "
    "FROM slice AS s JOIN track AS t ON t.id = s.track_id WHERE t.type = 'cpu_softirq'",
    "CREATE VIEW linux_irqs AS SELECT ts, dur, name, id, parent_id, 0 AS is_soft_irq "
    "FROM linux_hard_irqs UNION ALL SELECT ts, dur, name, id, NULL, 1 FROM linux_soft_irqs",
    "CREATE VIEW linux_interrupt_mapping AS SELECT id, irq_id, name, machine_id "
    "FROM _linux_interrupt_mapping",
    /* linux.perf.counters: each traced_perf sample with each counter value
     * of its counter set. */
    "CREATE VIEW linux_perf_sample_with_counters AS SELECT s.id AS sample_id, s.ts AS ts, "
    "t.utid AS utid, c.cpu AS cpu, coalesce(e.cpu_mode, 'unknown') AS cpu_mode, "
    "s.callsite_id AS callsite_id, s.unwind_error AS unwind_error, "
    "s.session_id AS perf_session_id, cs.counter_id AS counter_id, v.track_id AS track_id, "
    "v.value AS counter_value FROM __intrinsic_profiler_sample AS s "
    "JOIN __intrinsic_profiler_counter_set AS cs ON cs.counter_set_id = s.counter_set_id "
    "JOIN counter AS v ON v.id = cs.counter_id "
    "LEFT JOIN __intrinsic_profiler_task_context AS t ON t.id = s.task_context_id "
    "LEFT JOIN __intrinsic_profiler_execution_context AS e ON e.id = s.execution_context_id "
    "LEFT JOIN __intrinsic_cpu AS c ON c.id = e.ucpu WHERE s.source = 'linux.perf'",
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
	const char *body;       /* SQL with ?1..?nargs, or $name for arg_names */
	char *const *arg_names; /* CREATE PERFETTO FUNCTION's: bound by name */
};

/* Arguments a table function takes at most (cursor slots). */
#define TF_MAX_ARGS 8

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
                                "WHERE anc.id IS NOT NULL ORDER BY s.id",
     NULL},
    {"descendant_slice", SLICE_ALL_COLS, 1,
     DESCENDANTS_CTE "SELECT s.* FROM d CROSS JOIN slice AS s ON s.id = d.id ORDER BY s.id", NULL},
    {"_slice_ancestor_and_self", SLICE_COLS, 1,
     ANCESTORS_CTE("id") "SELECT " SLICE_COLS_S " FROM anc CROSS JOIN slice AS s "
                         "ON s.id = anc.id ORDER BY s.depth",
     NULL},
    {"_slice_descendant_and_self", SLICE_COLS, 1,
     DESCENDANTS_CTE ", e(id) AS (SELECT ?1 UNION ALL SELECT id FROM d) SELECT " SLICE_COLS_S
                     " FROM e CROSS JOIN slice AS s ON s.id = e.id ORDER BY s.id",
     NULL},
    {"ancestor_slice_by_stack", SLICE_COLS, 1,
     "SELECT DISTINCT a.* FROM slice_with_stack_id AS m CROSS JOIN "
     "_slice_ancestor_and_self(m.id) AS a WHERE m.stack_id = ?1 ORDER BY a.ts",
     NULL},
    /* Flows on the chains through ?1: forward from it, and backward. */
    {"directly_connected_flow", FLOW_COLS, 1,
     "WITH RECURSIVE fwd(fid, sid) AS (SELECT id, slice_in FROM flow WHERE slice_out = ?1 "
     "UNION SELECT f.id, f.slice_in FROM fwd JOIN flow AS f ON f.slice_out = fwd.sid), "
     "bwd(fid, sid) AS (SELECT id, slice_out FROM flow WHERE slice_in = ?1 "
     "UNION SELECT f.id, f.slice_out FROM bwd JOIN flow AS f ON f.slice_in = bwd.sid) "
     "SELECT " FLOW_COLS " FROM flow WHERE id IN (SELECT fid FROM fwd UNION "
     "SELECT fid FROM bwd) ORDER BY id",
     NULL},
    {"following_flow", FLOW_COLS, 1,
     REACH_CTE(
         "slice_out", "slice_in",
         "descendant_slice") "SELECT " FLOW_COLS
                             " FROM flow WHERE slice_out IN (SELECT sid FROM reach) ORDER BY id",
     NULL},
    {"preceding_flow", FLOW_COLS, 1,
     REACH_CTE("slice_in", "slice_out",
               "ancestor_slice") "SELECT " FLOW_COLS
                                 " FROM flow WHERE slice_in IN (SELECT sid FROM reach) ORDER BY id",
     NULL},
    {"descendant_slice_by_stack", SLICE_COLS, 1,
     "SELECT DISTINCT a.* FROM slice_with_stack_id AS m CROSS JOIN "
     "_slice_descendant_and_self(m.id) AS a WHERE m.stack_id = ?1 ORDER BY a.ts",
     NULL},
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
	sqlite3_value *args[TF_MAX_ARGS];
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
		int at = i + 1;
		if (v->fn->arg_names) {
			char p[128];
			snprintf(p, sizeof p, "$%s", v->fn->arg_names[i]);
			at = sqlite3_bind_parameter_index(c->st, p);
		}
		if (at > 0)
			sqlite3_bind_value(c->st, at, argv[i]);
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

/* A table function defined in SQL: every string is ours, freed with the
 * module. */
struct user_tablefn {
	struct tablefn fn;
	char *name, *cols, *body;
	char **args;
	size_t nargs;
};

static void user_tablefn_free(void *p)
{
	struct user_tablefn *u = p;
	for (size_t i = 0; i < u->nargs; i++)
		tb_free(u->args[i]);
	tb_free(u->args);
	tb_free(u->name);
	tb_free(u->cols);
	tb_free(u->body);
	tb_free(u);
}

int tp_sql_register_table_function(sqlite3 *db, const char *name, const char *cols, size_t nargs,
                                   char *const *arg_names, const char *body)
{
	if (nargs > TF_MAX_ARGS)
		return SQLITE_TOOBIG;
	struct user_tablefn *u = tb_calloc(1, sizeof *u);
	u->name = tb_strdup(name);
	u->cols = tb_strdup(cols);
	u->body = tb_strdup(body);
	u->nargs = nargs;
	u->args = tb_calloc(nargs + 1, sizeof *u->args);
	for (size_t i = 0; i < nargs; i++)
		u->args[i] = tb_strdup(arg_names[i]);
	u->fn = (struct tablefn){u->name, u->cols, (int)nargs, u->body, u->args};
	/* A module of the same name is replaced (CREATE OR REPLACE). */
	return sqlite3_create_module_v2(db, u->name, &tf_module, &u->fn, user_tablefn_free);
}

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

/* ---- linux.perf.counters --------------------------------------------------- */

/* linux_perf_counter_for_sample(sample_id, counter_name): the value of the
 * counter named counter_name (its track's name) in the sample's counter
 * set; NULL when the sample has none of that name. */
static void fn_perf_counter_for_sample(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const struct tp *tp = ((struct tp_sql *)sqlite3_user_data(ctx))->tp;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(
		    ctx, "linux_perf_counter_for_sample: the sample id is not an integer", -1);
		return;
	}
	if (sqlite3_value_type(argv[1]) != SQLITE_TEXT) {
		sqlite3_result_error(
		    ctx, "linux_perf_counter_for_sample: the counter name is not a string", -1);
		return;
	}
	const struct tp_profiler_sample_table *ps = &tp->t.profiler_sample;
	int64_t id = sqlite3_value_int64(argv[0]);
	if (id < 0 || id >= ps->n) {
		sqlite3_result_error(ctx, "linux_perf_counter_for_sample: no such sample", -1);
		return;
	}
	const struct tp_profiler_counter_set_table *cs = &tp->t.profiler_counter_set;
	const char *want = (const char *)sqlite3_value_text(argv[1]);
	for (uint32_t row = ps->counter_set_id[id];
	     row < cs->n && cs->counter_set_id[row] == ps->counter_set_id[id]; row++) {
		uint32_t c = cs->counter_id[row];
		const char *name = tp_str(tp, tp->t.track.name[tp->t.counter.track_id[c]]);
		if (name && strcmp(name, want) == 0) {
			sqlite3_result_double(ctx, tp->t.counter.value[c]);
			return;
		}
	}
}

/* ---- android.package_lookup ------------------------------------------------ */

/* Android's reserved app ids (android_filesystem_config.h), as Perfetto
 * names them. */
static const struct {
	uint16_t id;
	const char *name;
} android_aids[] = {
    {0, "ROOT"},
    {1000, "SYSTEM_USER"},
    {1001, "RADIO"},
    {1002, "BLUETOOTH"},
    {1003, "GRAPHICS"},
    {1004, "INPUT"},
    {1005, "AUDIO"},
    {1006, "CAMERA"},
    {1007, "LOG"},
    {1008, "COMPASS"},
    {1009, "MOUNT"},
    {1010, "WIFI"},
    {1011, "ADB"},
    {1012, "INSTALL"},
    {1013, "MEDIA"},
    {1014, "DHCP"},
    {1015, "SDCARD_RW"},
    {1016, "VPN"},
    {1017, "KEYSTORE"},
    {1018, "USB"},
    {1019, "DRM"},
    {1020, "MDNSR"},
    {1021, "GPS"},
    {1022, "UNUSED1"},
    {1023, "MEDIA_RW"},
    {1024, "MTP"},
    {1025, "UNUSED2"},
    {1026, "DRMRPC"},
    {1027, "NFC"},
    {1028, "SDCARD_R"},
    {1029, "CLAT"},
    {1030, "LOOP_RADIO"},
    {1031, "MEDIA_DRM"},
    {1032, "PACKAGE_INFO"},
    {1033, "SDCARD_PICS"},
    {1034, "SDCARD_AV"},
    {1035, "SDCARD_ALL"},
    {1036, "LOGD"},
    {1037, "SHARED_RELRO"},
    {1038, "DBUS"},
    {1039, "TLSDATE"},
    {1040, "MEDIA_EX"},
    {1041, "AUDIOSERVER"},
    {1042, "METRICS_COLL"},
    {1043, "METRICSD"},
    {1044, "WEBSERV"},
    {1045, "DEBUGGERD"},
    {1046, "MEDIA_CODEC"},
    {1047, "CAMERASERVER"},
    {1048, "FIREWALL"},
    {1049, "TRUNKS"},
    {1050, "NVRAM"},
    {1051, "DNS"},
    {1052, "DNS_TETHER"},
    {1053, "WEBVIEW_ZYGOTE"},
    {1054, "VEHICLE_NETWORK"},
    {1055, "MEDIA_AUDIO"},
    {1056, "MEDIA_VIDEO"},
    {1057, "MEDIA_IMAGE"},
    {1058, "TOMBSTONED"},
    {1059, "MEDIA_OBB"},
    {1060, "ESE"},
    {1061, "OTA_UPDATE"},
    {1062, "AUTOMOTIVE_EVS"},
    {1063, "LOWPAN"},
    {1064, "HSM"},
    {1065, "RESERVED_DISK"},
    {1066, "STATSD"},
    {1067, "INCIDENTD"},
    {1068, "SECURE_ELEMENT"},
    {1069, "LMKD"},
    {1070, "LLKD"},
    {1071, "IORAPD"},
    {1072, "GPU_SERVICE"},
    {1073, "NETWORK_STACK"},
    {1074, "GSID"},
    {1075, "FSVERITY_CERT"},
    {1076, "CREDSTORE"},
    {1077, "EXTERNAL_STORAGE"},
    {1078, "EXT_DATA_RW"},
    {1079, "EXT_OBB_RW"},
    {1080, "CONTEXT_HUB"},
    {1081, "VIRTMANAGER"},
    {1082, "ARTD"},
    {1083, "UWB"},
    {1084, "THREAD_NETWORK"},
    {1085, "DICED"},
    {1086, "DMESGD"},
    {1087, "JC_WEAVER"},
    {1088, "JC_STRONGBOX"},
    {1089, "JC_IDENTITYCRED"},
    {1090, "SDK_SANDBOX"},
    {1091, "SECURITY_LOG_WRITER"},
    {1092, "PRNG_SEEDER"},
    {1093, "UPROBESTATS"},
    {2000, "SHELL"},
    {2001, "CACHE"},
    {2002, "DIAG"},
    {9999, "NOBODY"},
};

/* android_package_lookup(uid): for an app id >= 10000 the package of
 * package_list with that uid (com.google.android.gms first, then any but
 * com.android.providers.*, first in table order within a rank); else
 * AID_<name> of a reserved id, SHARED_GID, ISOLATED_UID, or "uid=N". */
static void fn_android_package_lookup(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	const struct tp *tp = ((struct tp_sql *)sqlite3_user_data(ctx))->tp;
	int type = sqlite3_value_type(argv[0]);
	if (type == SQLITE_NULL)
		return;
	if (type != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "PACKAGE_LOOKUP: uid must be an integer", -1);
		return;
	}
	uint32_t uid = (uint32_t)sqlite3_value_int64(argv[0]);
	uint32_t app = uid % 100000;
	if (app >= 10000) {
		const struct tp_package_list_table *pl = &tp->t.package_list;
		int best_rank = -1;
		const char *best = NULL;
		for (uint32_t r = 0; r < pl->n; r++) {
			if (pl->uid[r] != (int64_t)app)
				continue;
			const char *pkg = tp_str(tp, pl->package_name[r]);
			if (!pkg)
				pkg = "";
			int rank = strncmp(pkg, "com.android.providers.", 22) == 0 ? 0
			           : strcmp(pkg, "com.google.android.gms") == 0    ? 2
			                                                           : 1;
			if (rank > best_rank) {
				best_rank = rank;
				best = pkg;
			}
		}
		if (best && *best) {
			sqlite3_result_text(ctx, best, -1, SQLITE_TRANSIENT);
			return;
		}
	}
	char buf[40];
	const char *name = NULL;
	for (size_t i = 0; i < TB_ARRAY_SIZE(android_aids) && !name; i++)
		if (android_aids[i].id == app)
			name = android_aids[i].name;
	if (name)
		snprintf(buf, sizeof buf, "AID_%s", name);
	else if (app >= 50000 && app < 60000)
		snprintf(buf, sizeof buf, "SHARED_GID");
	else if (app >= 90000)
		snprintf(buf, sizeof buf, "ISOLATED_UID");
	else
		snprintf(buf, sizeof buf, "uid=%u", uid);
	sqlite3_result_text(ctx, buf, -1, SQLITE_TRANSIENT);
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
			    (void *)&units[i].factor[dir], fn_time_scale, NULL, NULL, NULL);
		}
	}
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "__intrinsic_slice_stack_hash", 1,
		                                SQLITE_UTF8 | SQLITE_DETERMINISTIC, sql,
		                                fn_slice_stack_hash, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "linux_perf_counter_for_sample", 2, SQLITE_UTF8,
		                                sql, fn_perf_counter_for_sample, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_create_function_v2(db, "android_package_lookup", 1, SQLITE_UTF8, sql,
		                                fn_android_package_lookup, NULL, NULL, NULL);
	for (size_t i = 0; i < TB_ARRAY_SIZE(tablefns) && rc == SQLITE_OK; i++)
		rc = sqlite3_create_module_v2(db, tablefns[i].name, &tf_module,
		                              (void *)&tablefns[i], NULL);
	return rc;
}
