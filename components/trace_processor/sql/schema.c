/*
 * Opening the trace's SQL database: an in-memory SQLite connection with the
 * storage tables (vtab.c), `__intrinsic_stats` (stats.c), the functions
 * (functions.c) and the public views under Perfetto's names and column
 * orders (the prelude of src/trace_processor/perfetto_sql/stdlib, compat
 * §6). Users paste Perfetto queries, so those names are the contract.
 *
 * The views are single-table SELECTs (or joins on ids) over the eponymous
 * virtual tables, which SQLite flattens into the user's query so WHERE
 * constraints still reach xBestIndex. Perfetto's track views select tracks
 * by their dimension args; ours read the dimension columns of
 * __intrinsic_track directly (utid, upid, cpu) and event_type.
 */
#include <errno.h>
#include <string.h>

#include "sql_int.h"
#include "sql.h"

#define TRACK_COLS "id, name, type, parent_id, source_arg_set_id, machine_id"
#define COUNTER_TRACK_COLS \
	"id, name, type, parent_id, source_arg_set_id, machine_id, unit, description"

static const char *const tp_views[] = {
    "CREATE VIEW slice AS SELECT *, category AS cat, id AS slice_id FROM __intrinsic_slice",
    "CREATE VIEW slices AS SELECT * FROM slice",
    "CREATE VIEW instant AS SELECT ts, track_id, name, arg_set_id FROM slice WHERE dur = 0",
    "CREATE VIEW thread AS SELECT id, id AS utid, tid, name, start_ts, end_ts, upid, "
    "is_main_thread, is_idle, machine_id, arg_set_id FROM __intrinsic_thread",
    "CREATE VIEW process AS SELECT id, id AS upid, pid, name, start_ts, end_ts, parent_upid, "
    "uid, android_appid, android_user_id, cmdline, arg_set_id, machine_id "
    "FROM __intrinsic_process",
    "CREATE VIEW track AS SELECT id, name, type, dimension_arg_set_id, parent_id, "
    "source_arg_set_id, machine_id, track_group_id FROM __intrinsic_track",
    "CREATE VIEW thread_track AS SELECT " TRACK_COLS ", utid FROM __intrinsic_track "
    "WHERE event_type = 'slice' AND utid IS NOT NULL",
    "CREATE VIEW process_track AS SELECT " TRACK_COLS ", upid FROM __intrinsic_track "
    "WHERE event_type = 'slice' AND upid IS NOT NULL AND utid IS NULL",
    "CREATE VIEW cpu_track AS SELECT " TRACK_COLS ", cpu FROM __intrinsic_track "
    "WHERE event_type = 'slice' AND cpu IS NOT NULL",
    "CREATE VIEW counter_track AS SELECT id, name, parent_id, type, dimension_arg_set_id, "
    "source_arg_set_id, machine_id, unit, description FROM __intrinsic_track "
    "WHERE event_type = 'counter'",
    "CREATE VIEW cpu_counter_track AS SELECT " COUNTER_TRACK_COLS ", cpu "
    "FROM __intrinsic_track WHERE event_type = 'counter' AND cpu IS NOT NULL",
    "CREATE VIEW process_counter_track AS SELECT " COUNTER_TRACK_COLS ", upid "
    "FROM __intrinsic_track WHERE event_type = 'counter' AND upid IS NOT NULL",
    "CREATE VIEW thread_counter_track AS SELECT " COUNTER_TRACK_COLS ", utid "
    "FROM __intrinsic_track WHERE event_type = 'counter' AND utid IS NOT NULL",
    "CREATE VIEW counter AS SELECT id, ts, track_id, value, arg_set_id FROM __intrinsic_counter",
    "CREATE VIEW state AS SELECT id, ts, dur, track_id, category, value, arg_set_id "
    "FROM __intrinsic_state",
    "CREATE VIEW state_track AS SELECT id, name, parent_id, type, dimension_arg_set_id, "
    "source_arg_set_id, machine_id FROM __intrinsic_track WHERE event_type = 'state'",
    "CREATE VIEW process_state_track AS SELECT " TRACK_COLS ", upid FROM __intrinsic_track "
    "WHERE event_type = 'state' AND upid IS NOT NULL AND utid IS NULL",
    "CREATE VIEW thread_state_track AS SELECT " TRACK_COLS ", utid FROM __intrinsic_track "
    "WHERE event_type = 'state' AND utid IS NOT NULL",
    "CREATE VIEW counters AS SELECT v.*, t.name, t.unit FROM counter AS v "
    "JOIN counter_track AS t ON v.track_id = t.id ORDER BY ts",
    "CREATE VIEW flow AS SELECT id, slice_out, slice_in, trace_id, arg_set_id "
    "FROM __intrinsic_flow",
    /* display_value as Perfetto's args view: CAST(x AS TEXT) for numbers. */
    "CREATE VIEW args AS SELECT id, arg_set_id, flat_key, key, int_value, string_value, "
    "real_value, value_type, CASE value_type "
    "WHEN 'int' THEN CAST(int_value AS TEXT) "
    "WHEN 'uint' THEN printf('%u', int_value) "
    "WHEN 'string' THEN string_value "
    "WHEN 'real' THEN CAST(real_value AS TEXT) "
    "WHEN 'pointer' THEN printf('0x%x', int_value) "
    "WHEN 'bool' THEN (CASE WHEN int_value != 0 THEN 'true' ELSE 'false' END) "
    "WHEN 'json' THEN string_value "
    "ELSE NULL END AS display_value FROM __intrinsic_args",
    /* stdlib slices.with_context, always present (INCLUDE is then a no-op). */
    "CREATE VIEW thread_slice AS SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id, "
    "tt.name AS track_name, t.name AS thread_name, t.utid, t.tid, t.is_main_thread, "
    "p.name AS process_name, p.upid, p.pid, s.depth, s.parent_id, s.arg_set_id, s.thread_ts, "
    "s.thread_dur FROM slice AS s JOIN thread_track AS tt ON s.track_id = tt.id "
    "JOIN thread AS t USING (utid) LEFT JOIN process AS p ON p.upid = t.upid",
    "CREATE VIEW process_slice AS SELECT s.id, s.ts, s.dur, s.category, s.name, s.track_id, "
    "pt.name AS track_name, p.name AS process_name, p.upid, p.pid, s.depth, s.parent_id, "
    "s.arg_set_id, s.thread_ts, s.thread_dur FROM slice AS s "
    "JOIN process_track AS pt ON s.track_id = pt.id JOIN process AS p USING (upid)",
    "CREATE VIEW thread_or_process_slice AS SELECT id, ts, dur, category, name, track_id, "
    "track_name, thread_name, utid, tid, process_name, upid, pid, depth, parent_id, arg_set_id "
    "FROM thread_slice UNION ALL SELECT id, ts, dur, category, name, track_id, track_name, "
    "NULL, NULL, NULL, process_name, upid, pid, depth, parent_id, arg_set_id FROM process_slice",
    /* Stack profiles (compat §6). Every profiler's samples are rows of
     * __intrinsic_profiler_sample (model/profiler.c); these are the views
     * of Perfetto's prelude over it. perf script text samples ("perf_text")
     * are perf samples here, as they were before the generic table (in
     * Perfetto they are only in cpu_profile_stack_sample). */
    "CREATE VIEW perf_session AS SELECT id, id AS perf_session_id, cmdline "
    "FROM __intrinsic_profiler_session WHERE source IN ('linux.perf', 'perf_text')",
    /* perf samples with the perf script columns traceconv reads. */
    "CREATE VIEW __intrinsic_perf_sample AS SELECT s.id AS id, s.ts AS ts, t.utid AS utid, "
    "c.cpu AS cpu, coalesce(e.cpu_mode, 'unknown') AS cpu_mode, s.callsite_id AS callsite_id, "
    "s.unwind_error AS unwind_error, s.session_id AS perf_session_id, "
    "s.event_name AS event_name, s.comm AS comm, s.period AS period "
    "FROM __intrinsic_profiler_sample AS s "
    "LEFT JOIN __intrinsic_profiler_task_context AS t ON t.id = s.task_context_id "
    "LEFT JOIN __intrinsic_profiler_execution_context AS e ON e.id = s.execution_context_id "
    "LEFT JOIN __intrinsic_cpu AS c ON c.id = e.ucpu "
    "WHERE s.source IN ('linux.perf', 'perf_text')",
    "CREATE VIEW perf_sample AS SELECT id, ts, utid, cpu, cpu_mode, callsite_id, unwind_error, "
    "perf_session_id FROM __intrinsic_perf_sample",
    /* Chrome's sampling profiler (perf script text is in perf_sample). */
    "CREATE VIEW cpu_profile_stack_sample AS SELECT s.id AS id, s.ts AS ts, "
    "s.callsite_id AS callsite_id, t.utid AS utid, "
    "coalesce(x.process_priority, 0) AS process_priority "
    "FROM __intrinsic_profiler_sample AS s "
    "LEFT JOIN __intrinsic_profiler_task_context AS t ON t.id = s.task_context_id "
    "LEFT JOIN __intrinsic_chrome_stack_sample_extras AS x ON x.profiler_sample_id = s.id "
    "WHERE s.source IN ('chrome', 'legacy_v8', 'gecko', 'simpleperf')",
    /* stack_sample: the samples of every profiler that have a callstack;
     * the session, task, execution and async context views list the rows
     * those samples use (an async context's ancestors too). */
    "CREATE VIEW stack_sample AS SELECT id, ts, source, task_context_id, execution_context_id, "
    "callsite_id, session_id FROM __intrinsic_profiler_sample WHERE callsite_id IS NOT NULL",
    "CREATE VIEW stack_sample_session AS SELECT id, source, timebase_unit, cmdline "
    "FROM __intrinsic_profiler_session WHERE id IN (SELECT session_id FROM stack_sample)",
    "CREATE VIEW stack_sample_task_context AS SELECT id, upid, utid, async_context_id "
    "FROM __intrinsic_profiler_task_context "
    "WHERE id IN (SELECT task_context_id FROM stack_sample)",
    "CREATE VIEW stack_sample_execution_context AS SELECT id, ucpu, cpu_mode "
    "FROM __intrinsic_profiler_execution_context "
    "WHERE id IN (SELECT execution_context_id FROM stack_sample)",
    "CREATE VIEW stack_sample_async_context AS WITH RECURSIVE used(id) AS ("
    "SELECT async_context_id FROM stack_sample_task_context "
    "WHERE async_context_id IS NOT NULL UNION "
    "SELECT a.parent_id FROM __intrinsic_profiler_async_context AS a JOIN used ON a.id = used.id "
    "WHERE a.parent_id IS NOT NULL) "
    "SELECT id, name, kind, parent_id FROM __intrinsic_profiler_async_context "
    "WHERE id IN (SELECT id FROM used)",
    /* The counter values recorded at stack samples (their counter sets),
     * and the counter tracks they are on. */
    "CREATE VIEW stack_sample_counter AS SELECT c.id AS id, p.id AS stack_sample_id, "
    "c.track_id AS track_id, c.value AS value FROM __intrinsic_profiler_sample AS p "
    "JOIN __intrinsic_profiler_counter_set AS cs ON cs.counter_set_id = p.counter_set_id "
    "JOIN __intrinsic_counter AS c ON c.id = cs.counter_id WHERE p.callsite_id IS NOT NULL",
    "CREATE VIEW stack_sample_counter_track AS SELECT id, name, type, parent_id, "
    "source_arg_set_id, machine_id, unit, description, "
    "coalesce(extract_arg(dimension_arg_set_id, 'session_id'), "
    "extract_arg(dimension_arg_set_id, 'perf_session_id')) AS session_id, "
    "extract_arg(dimension_arg_set_id, 'cpu') AS cpu, "
    "extract_arg(source_arg_set_id, 'is_timebase') AS is_timebase FROM counter_track "
    "WHERE id IN (SELECT track_id FROM stack_sample_counter)",
    /* Counter tracks of traced_perf's timebases and followers. */
    "CREATE VIEW perf_counter_track AS SELECT id, name, type, parent_id, source_arg_set_id, "
    "machine_id, unit, description, "
    "extract_arg(dimension_arg_set_id, 'perf_session_id') AS perf_session_id, "
    "extract_arg(dimension_arg_set_id, 'cpu') AS cpu, "
    "extract_arg(source_arg_set_id, 'is_timebase') AS is_timebase FROM counter_track "
    "WHERE type IN ('perf_cpu_counter', 'perf_global_counter')",
    "CREATE VIEW stack_profile_callsite AS SELECT id, depth, parent_id, frame_id "
    "FROM __intrinsic_stack_profile_callsite",
    "CREATE VIEW stack_profile_frame AS SELECT id, name, mapping, rel_pc, symbol_set_id, "
    "deobfuscated_name, type FROM __intrinsic_stack_profile_frame",
    "CREATE VIEW stack_profile_mapping AS SELECT id, build_id, exact_offset, start_offset, "
    "start, \"end\", load_bias, name FROM __intrinsic_stack_profile_mapping",
    "CREATE VIEW stack_profile_symbol AS SELECT id, symbol_set_id, name, source_file, "
    "line_number, inlined FROM __intrinsic_stack_profile_symbol",
    "CREATE VIEW metadata AS SELECT id, name, key_type, int_value, str_value, machine_id, "
    "trace_id FROM __intrinsic_metadata",
    "CREATE VIEW trace_file AS SELECT id, parent_id, name, size, trace_type, "
    "processing_order, is_container FROM __intrinsic_trace_file",
    "CREATE VIEW stats AS SELECT id, name, \"key\", idx, severity, source, value, description, "
    "machine_id, trace_id FROM __intrinsic_stats",
    /* Perfetto's prelude: logs of every source, android_logs the logcat
     * ones; import logs with their stat's name and severity. */
    "CREATE VIEW logs AS SELECT id, ts, utid, prio, log_source, tag, msg, arg_set_id "
    "FROM __intrinsic_logs",
    "CREATE VIEW android_logs AS SELECT id, ts, utid, prio, tag, msg FROM __intrinsic_logs "
    "WHERE log_source = 'android_logcat'",
    "CREATE VIEW _trace_import_logs AS SELECT l.id, l.trace_id, l.ts, l.byte_offset, "
    "s.severity, s.name, l.arg_set_id FROM __intrinsic_trace_import_logs AS l "
    "JOIN (SELECT DISTINCT \"key\", severity, name FROM stats) AS s ON l.stat_key = s.\"key\"",
    /* ftrace scheduling (importers/proto/ftrace.c). */
    "CREATE VIEW sched_slice AS SELECT id, ts, dur, cpu, utid, end_state, priority, ucpu "
    "FROM __intrinsic_sched",
    "CREATE VIEW sched AS SELECT id, ts, dur, cpu, utid, end_state, priority, ucpu, "
    "ts + dur AS ts_end FROM __intrinsic_sched",
    "CREATE VIEW thread_state AS SELECT id, ts, dur, cpu, utid, state, io_wait, "
    "blocked_function, waker_utid, waker_id, irq_context, ucpu FROM __intrinsic_thread_state",
    "CREATE VIEW ftrace_event AS SELECT id, ts, name, cpu, utid, arg_set_id, common_flags, ucpu "
    "FROM __intrinsic_ftrace_event",
    "CREATE VIEW raw AS SELECT * FROM ftrace_event",
    /* The cpus seen, of every machine (rows of unseen cpus have no cpu). */
    "CREATE VIEW cpu AS SELECT id, id AS ucpu, cpu, cluster_id, processor, machine_id, "
    "capacity, arg_set_id FROM __intrinsic_cpu WHERE cpu IS NOT NULL",
    "CREATE VIEW cpu_available_frequencies AS SELECT id, ucpu AS cpu, freq, ucpu "
    "FROM __intrinsic_cpu_freq",
    /* label_index: 1, 2 ... for the machines other than the host (raw_id
     * 0) in id order, 0 for the host, as the UI labels them. */
    "CREATE VIEW machine AS SELECT *, iif(raw_id = 0, 0, sum(iif(raw_id = 0, 0, 1)) "
    "OVER (ORDER BY id)) AS label_index FROM __intrinsic_machine",
};

int tp_sql_create_views(sqlite3 *db, char **errmsg)
{
	for (size_t i = 0; i < TB_ARRAY_SIZE(tp_views); i++) {
		int rc = sqlite3_exec(db, tp_views[i], NULL, NULL, errmsg);
		if (rc != SQLITE_OK)
			return rc;
	}
	return SQLITE_OK;
}

/* Without --allow-sql-file-access, SQL may not touch the filesystem: ATTACH
 * only of an in-memory (":memory:") or temporary ("", kept in memory by
 * temp_store) database, which also refuses VACUUM INTO a file (it attaches
 * its output), and no pragma that names a directory. The check runs when a
 * statement is prepared, before any file is looked at, so a refused ATTACH
 * says the same whether the path exists or not. */
static int authorize(void *ctx, int action, const char *a1, const char *a2, const char *db,
                     const char *trigger)
{
	(void)ctx, (void)a2, (void)db, (void)trigger;
	if (action == SQLITE_ATTACH)
		return a1 && (a1[0] == '\0' || strcmp(a1, ":memory:") == 0) ? SQLITE_OK
		                                                            : SQLITE_DENY;
	if (action == SQLITE_PRAGMA && a1 &&
	    (sqlite3_stricmp(a1, "temp_store_directory") == 0 ||
	     sqlite3_stricmp(a1, "data_store_directory") == 0))
		return SQLITE_DENY;
	return SQLITE_OK;
}

const char *tp_sql_errmsg(sqlite3 *db)
{
	if (sqlite3_errcode(db) == SQLITE_AUTH)
		return "not authorized: SQL may not read or write files (ATTACH of a file, VACUUM "
		       "INTO) unless trace_processor_shell runs with --allow-sql-file-access";
	return sqlite3_errmsg(db);
}

int tp_sql_open(struct tp *tp)
{
	sqlite3 *db = NULL;
	struct tp_sql *sql;
	char *msg = NULL;
	const char *what = "cannot open the sql database";
	int rc, ret = 0;

	if (tp->db)
		return 0;
	sql = tb_calloc(1, sizeof *sql + tp_table_count * sizeof sql->tables[0]);
	sql->tp = tp;
	sql->ntables = tp_table_count;
	for (uint32_t i = 0; i < tp_table_count; i++) {
		sql->tables[i].sql = sql;
		sql->tables[i].desc = &tp_table_descs[i];
	}

	rc = sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
	if (rc != SQLITE_OK) {
		tb_free(sql);
		goto out;
	}
	/* Perfetto accepts "double-quoted" string literals in queries (its
	 * difftests use them); the build's SQLITE_DQS=0 only sets the default. */
	sqlite3_db_config(db, SQLITE_DBCONFIG_DQS_DML, 1, (int *)NULL);
	/* Temporary tables, indexes and sorts in memory, as Perfetto's. */
	sqlite3_exec(db, "PRAGMA temp_store=2", NULL, NULL, NULL);
	if (!tp->cfg.allow_sql_file_access)
		sqlite3_set_authorizer(db, authorize, NULL);
	rc = tp_sql_register_stats(db, sql); /* db owns sql from here on */
	if (rc == SQLITE_OK)
		rc = tp_sql_register_tables(db, sql);
	if (rc == SQLITE_OK)
		rc = tp_sql_register_functions(db, sql);
	if (rc == SQLITE_OK)
		rc = tp_sql_register_to_ftrace(db, sql);
	if (rc == SQLITE_OK)
		rc = tp_sql_register_mipmaps(db);
	if (rc == SQLITE_OK)
		rc = tp_sql_register_layout(db, sql);
	if (rc != SQLITE_OK) {
		what = "cannot register the sql tables";
		goto out;
	}
	what = "cannot create the sql views";
	rc = tp_sql_create_views(db, &msg);
	if (rc == SQLITE_OK)
		rc = tp_sql_create_module_views(db, &msg);
	if (rc == SQLITE_OK)
		rc = tp_sql_create_stdlib_objects(db);

out:
	if (rc != SQLITE_OK) {
		ret = tp_fail(tp, rc == SQLITE_NOMEM ? -ENOMEM : -EIO, "%s: %s", what,
		              msg  ? msg
		              : db ? sqlite3_errmsg(db)
		                   : sqlite3_errstr(rc));
		sqlite3_free(msg);
		sqlite3_close(db);
		return ret;
	}
	tp->db = db;
	/* Perfetto's prelude objects written in SQL (stdlib/prelude/). */
	char err[1024];
	if (tp_sql_include(tp, "prelude.*", strlen("prelude.*"), err, sizeof err) != SQLITE_OK)
		return tp_fail(tp, -EIO, "cannot create the sql prelude: %s", err);
	return 0;
}

void tp_sql_close(struct tp *tp)
{
	if (!tp->db)
		return;
	/* A statement still open keeps the connection (and sql) alive until it
	 * is finalized; the tables must outlive it then. */
	sqlite3_close_v2(tp->db);
	tp->db = NULL;
}
