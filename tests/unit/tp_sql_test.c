/*
 * The trace processor's SQL layer (components/trace_processor/sql): the
 * public views' columns, NULL sentinels, the planner's row ranges (checked
 * by counting the rows cursors step over, not by timing), joins on ids,
 * EXTRACT_ARG, HASH, STR_SPLIT and the stats table. Tables are filled
 * through the model's append functions and trackers, no importer.
 */
#include <math.h>
#include <sqlite3.h>

#include "test.h"

#include "tp_int.h"
#include "model/model.h"

/* The first column of the first row as an integer; INT64_MIN if there is no
 * row or it is NULL, INT64_MAX on an SQL error (which is reported). */
static int64_t q_int(struct tp *tp, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v = INT64_MIN;
	if (sqlite3_prepare_v2(tp->db, sql, -1, &st, NULL) != SQLITE_OK) {
		test_report(__FILE__, __LINE__, "%s: %s", sql, sqlite3_errmsg(tp->db));
		return INT64_MAX;
	}
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		test_report(__FILE__, __LINE__, "%s: %s", sql, sqlite3_errmsg(tp->db));
		v = INT64_MAX;
	}
	sqlite3_finalize(st);
	return v;
}

/* Every row of the result as "a|b|c" lines joined by ';' into buf ("NULL"
 * for NULL); "ERROR: ..." on failure. */
static const char *q_rows(struct tp *tp, const char *sql, char *buf, size_t n)
{
	sqlite3_stmt *st = NULL;
	size_t len = 0;
	buf[0] = 0;
	if (sqlite3_prepare_v2(tp->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(buf, n, "ERROR: %s", sqlite3_errmsg(tp->db));
		return buf;
	}
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *t = sqlite3_column_text(st, i);
			len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s",
			                        i ? "|" : (len ? ";" : ""),
			                        t ? (const char *)t : "NULL");
		}
	}
	if (rc != SQLITE_DONE)
		snprintf(buf, n, "ERROR: %s", sqlite3_errmsg(tp->db));
	sqlite3_finalize(st);
	return buf;
}

/* The result's column names joined by ','. */
static const char *q_cols(struct tp *tp, const char *sql, char *buf, size_t n)
{
	sqlite3_stmt *st = NULL;
	size_t len = 0;
	buf[0] = 0;
	if (sqlite3_prepare_v2(tp->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(buf, n, "ERROR: %s", sqlite3_errmsg(tp->db));
		return buf;
	}
	for (int i = 0; i < sqlite3_column_count(st); i++)
		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", i ? "," : "",
		                        sqlite3_column_name(st, i));
	sqlite3_finalize(st);
	return buf;
}

static int64_t visited(struct tp *tp)
{
	return q_int(tp, "SELECT __intrinsic_rows_visited()");
}

static uint32_t S(struct tp *tp, const char *s)
{
	return tp_intern_cstr(tp, s);
}

TEST(tp_sql_view_columns)
{
	static const struct {
		const char *view, *cols;
	} views[] = {
	    {"slice", "id,ts,dur,track_id,category,name,depth,parent_id,arg_set_id,thread_ts,"
	              "thread_dur,thread_instruction_count,thread_instruction_delta,cat,slice_id"},
	    {"slices", "id,ts,dur,track_id,category,name,depth,parent_id,arg_set_id,thread_ts,"
	               "thread_dur,thread_instruction_count,thread_instruction_delta,cat,slice_id"},
	    {"instant", "ts,track_id,name,arg_set_id"},
	    {"thread", "id,utid,tid,name,start_ts,end_ts,upid,is_main_thread,is_idle,machine_id,"
	               "arg_set_id"},
	    {"process", "id,upid,pid,name,start_ts,end_ts,parent_upid,uid,android_appid,"
	                "android_user_id,cmdline,arg_set_id,machine_id"},
	    {"track", "id,name,type,dimension_arg_set_id,parent_id,source_arg_set_id,machine_id,"
	              "track_group_id"},
	    {"thread_track", "id,name,type,parent_id,source_arg_set_id,machine_id,utid"},
	    {"process_track", "id,name,type,parent_id,source_arg_set_id,machine_id,upid"},
	    {"cpu_track", "id,name,type,parent_id,source_arg_set_id,machine_id,cpu"},
	    {"counter_track", "id,name,parent_id,type,dimension_arg_set_id,source_arg_set_id,"
	                      "machine_id,unit,description"},
	    {"cpu_counter_track", "id,name,type,parent_id,source_arg_set_id,machine_id,unit,"
	                          "description,cpu"},
	    {"process_counter_track", "id,name,type,parent_id,source_arg_set_id,machine_id,unit,"
	                              "description,upid"},
	    {"thread_counter_track", "id,name,type,parent_id,source_arg_set_id,machine_id,unit,"
	                             "description,utid"},
	    {"counter", "id,ts,track_id,value,arg_set_id"},
	    {"counters", "id,ts,track_id,value,arg_set_id,name,unit"},
	    {"flow", "id,slice_out,slice_in,trace_id,arg_set_id"},
	    {"args", "id,arg_set_id,flat_key,key,int_value,string_value,real_value,value_type,"
	             "display_value"},
	    {"metadata", "id,name,key_type,int_value,str_value,machine_id,trace_id"},
	    {"stats", "id,name,key,idx,severity,source,value,description,machine_id,trace_id"},
	    {"thread_slice", "id,ts,dur,category,name,track_id,track_name,thread_name,utid,tid,"
	                     "is_main_thread,process_name,upid,pid,depth,parent_id,arg_set_id,"
	                     "thread_ts,thread_dur"},
	    {"process_slice", "id,ts,dur,category,name,track_id,track_name,process_name,upid,pid,"
	                      "depth,parent_id,arg_set_id,thread_ts,thread_dur"},
	    {"thread_or_process_slice", "id,ts,dur,category,name,track_id,track_name,thread_name,"
	                                "utid,tid,process_name,upid,pid,depth,parent_id,"
	                                "arg_set_id"},
	};
	struct tp *tp = tp_new(NULL);
	char sql[128], buf[1024];
	for (size_t i = 0; i < TB_ARRAY_SIZE(views); i++) {
		snprintf(sql, sizeof sql, "SELECT * FROM %s", views[i].view);
		CHECK_STR_EQ(q_cols(tp, sql, buf, sizeof buf), views[i].cols);
		/* Every view runs (empty or not). */
		CHECK(strncmp(q_rows(tp, sql, buf, sizeof buf), "ERROR", 5) != 0);
	}
	/* The hidden column is selectable by name only. */
	CHECK_STR_EQ(q_cols(tp, "SELECT uuid FROM __intrinsic_track", buf, sizeof buf), "uuid");
	tp_free(tp);
}

TEST(tp_sql_nulls_and_values)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	uint32_t th = tp_thread_append(&tp->t.thread);
	tp->t.thread.tid[th] = 42;
	uint32_t s = tp_slice_append(&tp->t.slice);
	tp->t.slice.ts[s] = 7;
	tp->t.slice.dur[s] = 3;
	tp->t.slice.name[s] = S(tp, "a\"b'c");
	uint32_t a = tp_args_append(&tp->t.args);
	tp->t.args.arg_set_id[a] = 1;
	tp->t.args.key[a] = S(tp, "k");

	char sql[160];
	snprintf(sql, sizeof sql,
	         "SELECT tid, name, upid, start_ts, is_idle, arg_set_id, utid = id FROM thread "
	         "WHERE utid = %u",
	         th);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), "42|NULL|NULL|NULL|0|NULL|1");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT ts, dur, name, category, parent_id, arg_set_id, cat, "
	                    "slice_id = id FROM slice",
	                    buf, sizeof buf),
	             "7|3|a\"b'c|NULL|NULL|NULL|NULL|1");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT typeof(real_value), typeof(int_value), typeof(string_value) "
	                    "FROM args",
	                    buf, sizeof buf),
	             "null|null|null");
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE name = 'a\"b''c'"), 1);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE name = 'nope'"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE category IS NULL"), 1);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE category IS NOT NULL"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE name IS NULL"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE parent_id = NULL"), 0);
	/* Numbers compare as numbers whatever their SQL type. */
	CHECK_EQ(
	    q_int(tp, "SELECT count(*) FROM slice WHERE dur = 3.0 AND dur > 2.5 AND dur < '4'"), 1);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE ts < 'x'"), 1);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE ts > 'x'"), 0);
	/* Case-insensitive equality is SQLite's job, not the pool's. */
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE name = 'A\"B''C' COLLATE NOCASE"), 1);
	tp_free(tp);
}

/* 100k slices, ts = 10 * id, on one track. */
static struct tp *big_slices(uint32_t n)
{
	struct tp *tp = tp_new(NULL);
	uint32_t name = S(tp, "s");
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = tp_slice_append(&tp->t.slice);
		tp->t.slice.ts[r] = 10 * (int64_t)i;
		tp->t.slice.dur[r] = 5;
		tp->t.slice.track_id[r] = tr;
		tp->t.slice.name[r] = name;
	}
	return tp;
}

TEST(tp_sql_id_and_ts_ranges)
{
	struct tp *tp = big_slices(100000);
	char buf[256];
	int64_t v0;

	v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT ts FROM slice WHERE id = 5000"), 50000);
	CHECK_EQ(visited(tp) - v0, 1);

	v0 = visited(tp);
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE id IN (3, 99999, 7, 100000, -1)", buf,
	                    sizeof buf),
	             "3;7;99999");
	CHECK_EQ(visited(tp) - v0, 3);

	v0 = visited(tp);
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT count(*), min(id), max(id) FROM slice "
	                    "WHERE ts >= 1000 AND ts < 2000",
	                    buf, sizeof buf),
	             "100|100|199");
	CHECK(visited(tp) - v0 <= 100);

	v0 = visited(tp);
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT count(*), min(id), max(id) FROM slice "
	                    "WHERE ts > 995.5 AND ts <= 2000.0",
	                    buf, sizeof buf),
	             "101|100|200");
	CHECK(visited(tp) - v0 <= 101);

	v0 = visited(tp);
	CHECK_STR_EQ(
	    q_rows(tp, "SELECT count(*) FROM slice WHERE ts BETWEEN 5 AND 5", buf, sizeof buf),
	    "0");
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE ts = 120", buf, sizeof buf), "12");
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE id > 99997", buf, sizeof buf),
	             "99998;99999");
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE id >= 5 AND id < 8 AND ts != 60", buf,
	                    sizeof buf),
	             "5;7");
	CHECK(visited(tp) - v0 <= 10);

	/* ORDER BY on id or ts is consumed, in both directions. */
	v0 = visited(tp);
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice ORDER BY ts DESC LIMIT 2", buf, sizeof buf),
	             "99999;99998");
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice ORDER BY id LIMIT 2", buf, sizeof buf),
	             "0;1");
	CHECK(visited(tp) - v0 <= 6);

	/* A filter on an unsorted column still scans, but returns only matches. */
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE dur = 5 AND depth = 0"), 100000);
	tp_free(tp);
}

TEST(tp_sql_sorted_flag_checked)
{
	struct tp *tp = big_slices(1000);
	char buf[256];
	/* Break ts order: the planner must notice and fall back to filtering. */
	tp->t.slice.ts[10] = 5000;
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE ts = 5000", buf, sizeof buf), "10;500");
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE ts < 100"), 10);
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice ORDER BY ts LIMIT 3", buf, sizeof buf),
	             "0;1;2");
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE ts >= 4990 ORDER BY ts, id LIMIT 4",
	                    buf, sizeof buf),
	             "499;10;500;501");
	/* Appending rows re-checks. */
	tp->t.slice.ts[10] = 100;
	uint32_t r = tp_slice_append(&tp->t.slice);
	tp->t.slice.ts[r] = 100000;
	int64_t v0 = visited(tp);
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE ts >= 9990", buf, sizeof buf),
	             "999;1000");
	CHECK(visited(tp) - v0 <= 2);
	tp_free(tp);
}

TEST(tp_sql_join_uses_id_lookups)
{
	struct tp *tp = tp_new(NULL);
	uint32_t name = S(tp, "s");
	uint32_t tracks[50];
	char buf[256];
	for (uint32_t i = 0; i < 50; i++) {
		uint32_t utid = tp_thread_for_tid(tp, 1000 + i, 100 + i / 10);
		tp_thread_set_name(tp, utid, S(tp, i == 7 ? "seven" : "t"));
		tracks[i] = tp_track_for_thread(tp, utid);
	}
	/* A counter track and a process track that thread_track must not list. */
	struct tp_track_key ck = {.type = "c",
	                          .event_type = "counter",
	                          .utid = -1,
	                          .upid = 1,
	                          .cpu = -1,
	                          .name = S(tp, "mem")};
	uint32_t ctr = tp_track_get(tp, &ck);
	struct tp_track_key pk = {.type = "p",
	                          .event_type = "slice",
	                          .utid = -1,
	                          .upid = 1,
	                          .cpu = -1,
	                          .name = S(tp, "async")};
	uint32_t ptr = tp_track_get(tp, &pk);
	for (uint32_t i = 0; i < 100000; i++) {
		uint32_t r = tp_slice_append(&tp->t.slice);
		tp->t.slice.ts[r] = i;
		tp->t.slice.track_id[r] = i == 0 ? ptr : tracks[i % 50];
		tp->t.slice.name[r] = name;
	}
	tp_counter_add(tp, ctr, 5, 1.5, TP_NULL_U32);

	CHECK_EQ(q_int(tp, "SELECT count(*) FROM thread_track"), 50);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM process_track"), 1);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM process_counter_track"), 1);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM thread_counter_track"), 0);
	CHECK_STR_EQ(q_rows(tp, "SELECT ts, value, name FROM counters", buf, sizeof buf),
	             "5|1.5|mem");
	int64_t v1 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM thread_or_process_slice"), 100000);
	CHECK(visited(tp) - v1 <= 8 * 100000);
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT id, track_name, upid, tid FROM thread_or_process_slice "
	                    "WHERE id < 2 ORDER BY id",
	                    buf, sizeof buf),
	             "0|async|1|NULL;1|NULL|1|1001");
	/* Perfetto accepts double-quoted string literals in queries. */
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM thread WHERE name = \"seven\""), 1);

	int64_t v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice JOIN thread_track ON slice.track_id = "
	                   "thread_track.id JOIN thread USING(utid) JOIN process USING(upid)"),
	         99999);
	/* One scan of slice plus one row per id lookup per slice. */
	CHECK(visited(tp) - v0 <= 4 * 100000 + 1000);

	v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice JOIN thread_track ON slice.track_id = "
	                   "thread_track.id JOIN thread USING(utid) JOIN process USING(upid) "
	                   "WHERE thread.name = 'seven' AND process.pid = 100"),
	         2000);
	CHECK(visited(tp) - v0 <= 4 * 100000 + 1000);

	v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice JOIN thread_track ON slice.track_id = "
	                   "thread_track.id JOIN thread USING(utid) WHERE slice.ts < 1000"),
	         999);
	CHECK(visited(tp) - v0 <= 4 * 1000 + 100);
	tp_free(tp);
}

/* A join's inner loop filters by a text operand that changes from row to
 * row (xFilter keeps its plan parsed and the last operand's pool id): each
 * row gets its own operand's rows, present, absent, repeated, longer than
 * the remembered operands, empty or NULL. */
TEST(tp_sql_join_text_operand_per_row)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	const char *names[] = {"t",
	                       "t",
	                       "seven",
	                       "t",
	                       "a thread name longer than 24 bytes",
	                       "a thread name longer than 24 bytes"};
	for (uint32_t i = 0; i < TB_ARRAY_SIZE(names); i++)
		tp_thread_set_name(tp, tp_thread_for_tid(tp, 10 + i, 1), S(tp, names[i]));
#define W_ROWS                                                                                  \
	"WITH w(k, n) AS (VALUES (1, 't'), (2, 'seven'), (3, 'nope'), (4, 't'), (5, 'a thread " \
	"name longer than 24 bytes'), (6, 'a thread name longer than 24 bytes'), (7, 'nope'), " \
	"(8, ''), (9, NULL), (10, 'seven'), (11, 'a thread name longer than 24 bytes!')) "
	/* thread is the inner loop, name = ? pushed to its xFilter. */
	CHECK(strstr(q_rows(tp,
	                    "EXPLAIN QUERY PLAN " W_ROWS
	                    "SELECT w.k, count(*) FROM w CROSS JOIN thread ON thread.name = w.n "
	                    "GROUP BY w.k",
	                    buf, sizeof buf),
	             "SCAN w;") != NULL);
	CHECK(strstr(buf, "__intrinsic_thread VIRTUAL TABLE INDEX 0:2=") != NULL);
	CHECK_STR_EQ(q_rows(tp,
	                    W_ROWS "SELECT group_concat(k || ':' || c, ',') FROM (SELECT w.k, "
	                           "count(*) AS c FROM w CROSS JOIN thread ON thread.name = w.n "
	                           "GROUP BY w.k ORDER BY w.k)",
	                    buf, sizeof buf),
	             "1:3,2:1,4:3,5:2,6:2,10:1");
	CHECK_STR_EQ(q_rows(tp,
	                    W_ROWS "SELECT group_concat(c, ',') FROM (SELECT (SELECT count(*) FROM "
	                           "thread WHERE thread.name = w.n) AS c FROM w ORDER BY w.k)",
	                    buf, sizeof buf),
	             "3,1,0,3,2,2,0,0,0,1,0");
#undef W_ROWS
	tp_free(tp);
}

/* `col = integer` as a cursor's first filter skips rows on the column's
 * array: the same rows as checking each, with other filters, the NULL
 * sentinel and values the column cannot hold, in id order, descending,
 * and grouped (rows collected, then sorted). */
TEST(tp_sql_int_eq_filter_scan)
{
	struct tp *tp = big_slices(5000);
	char buf[512], want[512];
	int64_t depth3 = 0, depth3_dur2 = 0, by_dur[5] = {0};
	for (uint32_t r = 0; r < 5000; r++) {
		tp->t.slice.depth[r] = r % 7;
		tp->t.slice.parent_id[r] = r % 3 == 0 ? TP_NULL_U32 : r / 2;
		tp->t.slice.dur[r] = r % 5;
		if (r % 7 == 3) {
			depth3++;
			depth3_dur2 += r % 5 == 2;
			by_dur[r % 5]++;
		}
	}
	int64_t v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE depth = 3"), depth3);
	CHECK(visited(tp) - v0 <= 5000 + 10);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE depth = 3 AND dur = 2"), depth3_dur2);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE depth = 3.0"), depth3);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE depth = -1"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE depth = 4294967299"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE parent_id = 4294967295"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE parent_id IS NULL"), 1667);
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE parent_id = 10", buf, sizeof buf),
	             "20");
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE parent_id = 2400 AND id > 4000", buf,
	                    sizeof buf),
	             "4801");
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE depth = 6 ORDER BY id DESC LIMIT 3",
	                    buf, sizeof buf),
	             "4997;4990;4983");
	CHECK_STR_EQ(q_rows(tp, "SELECT id FROM slice WHERE depth = 6 LIMIT 3", buf, sizeof buf),
	             "6;13;20");
	snprintf(want, sizeof want, "0|%lld;1|%lld;2|%lld;3|%lld;4|%lld", (long long)by_dur[0],
	         (long long)by_dur[1], (long long)by_dur[2], (long long)by_dur[3],
	         (long long)by_dur[4]);
	CHECK_STR_EQ(q_rows(tp, "SELECT dur, count(*) FROM slice WHERE depth = 3 GROUP BY dur", buf,
	                    sizeof buf),
	             want);
	tp_free(tp);
}

TEST(tp_sql_extract_arg_and_args_view)
{
	struct tp *tp = tp_new(NULL);
	struct tp_args_builder b = {0};
	char buf[512], sql[400];
	uint32_t sets[300];

	for (uint32_t i = 0; i < 300; i++) {
		tp_args_begin(&b);
		tp_args_add_int(&b, S(tp, "args.i"), S(tp, "args.i"), -(int64_t)i);
		tp_args_add_string(&b, S(tp, "args.s"), S(tp, "args.s"),
		                   S(tp, i % 2 ? "odd" : "even"));
		if (i == 5) {
			tp_args_add_real(&b, S(tp, "args.r"), S(tp, "args.r"), 2.5);
			tp_args_add_bool(&b, S(tp, "args.b"), S(tp, "args.b"), true);
			tp_args_add_uint(&b, S(tp, "args.u"), S(tp, "args.u"), 7);
			tp_args_add_pointer(&b, S(tp, "args.p"), S(tp, "args.p"), 0xbeef);
			tp_args_add_null(&b, S(tp, "args.n"), S(tp, "args.n"));
			tp_args_add_real(&b, S(tp, "args.w"), S(tp, "args.w"), 1.0);
			tp_args_add_string(&b, S(tp, "args.a"), S(tp, "args.a[0]"), S(tp, "x"));
		}
		sets[i] = tp_args_commit(tp, &b);
	}
	tp_args_builder_release(&b);

	snprintf(sql, sizeof sql,
	         "SELECT EXTRACT_ARG(%u, 'args.i'), extract_arg(%u, 'args.s'), "
	         "extract_arg(%u, 'args.s')",
	         sets[200], sets[200], sets[201]);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), "-200|even|odd");
	snprintf(sql, sizeof sql,
	         "SELECT typeof(extract_arg(%u, 'args.r')), extract_arg(%u, 'args.r'), "
	         "extract_arg(%u, 'args.b'), extract_arg(%u, 'args.u'), extract_arg(%u, 'args.p'), "
	         "typeof(extract_arg(%u, 'args.n'))",
	         sets[5], sets[5], sets[5], sets[5], sets[5], sets[5]);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), "real|2.5|1|7|48879|null");
	snprintf(sql, sizeof sql,
	         "SELECT extract_arg(%u, 'args.a[0]'), extract_arg(%u, 'args.a'), "
	         "extract_arg(%u, 'args.r'), extract_arg(NULL, 'args.i'), "
	         "extract_arg(%u, 'no.such.key'), extract_arg(123456, 'args.i')",
	         sets[5], sets[5], sets[6], sets[5]);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), "x|NULL|NULL|NULL|NULL|NULL");
	CHECK(strncmp(q_rows(tp, "SELECT extract_arg('a', 'b')", buf, sizeof buf), "ERROR", 5) ==
	      0);

	snprintf(
	    sql, sizeof sql,
	    "SELECT key, value_type, display_value FROM args WHERE arg_set_id = %u ORDER BY id",
	    sets[5]);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf),
	             "args.i|int|-5;args.s|string|odd;args.r|real|2.5;args.b|bool|true;"
	             "args.u|uint|7;args.p|pointer|0xbeef;args.n|null|NULL;args.w|real|1.0;"
	             "args.a[0]|string|x");
	/* arg_set_id = ? is a binary search, not a scan. */
	int64_t v0 = visited(tp);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM args WHERE arg_set_id = %u", sets[100]);
	CHECK_EQ(q_int(tp, sql), 2);
	CHECK(visited(tp) - v0 <= 2);
	tp_free(tp);
}

/* Sparse columns (thread_ts & co.) have no array until written: reads,
 * filters and ORDER BY see NULL; the first write allocates the column and
 * later appends grow it. */
TEST(tp_sql_sparse_columns)
{
	struct tp *tp = big_slices(100);
	char buf[256];
	CHECK(tp->t.slice.thread_ts == NULL);
	tp_set_slice_thread_ts(&tp->t.slice, 3, TP_NULL_I64); /* NULL: stays unallocated */
	CHECK(tp->t.slice.thread_ts == NULL);
	CHECK_EQ(tp_get_slice_thread_ts(&tp->t.slice, 3), TP_NULL_I64);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE thread_ts IS NULL"), 100);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE thread_ts IS NOT NULL"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE thread_dur >= 0"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE thread_instruction_count < 5"), 0);
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT typeof(thread_ts), typeof(thread_instruction_delta) "
	                    "FROM slice WHERE id = 7",
	                    buf, sizeof buf),
	             "null|null");
	CHECK_EQ(q_int(tp, "SELECT id FROM slice ORDER BY thread_ts DESC, id LIMIT 1"), 0);

	tp_set_slice_thread_ts(&tp->t.slice, 5, 42);
	tp_set_slice_thread_dur(&tp->t.slice, 5, 0);
	CHECK(tp->t.slice.thread_ts != NULL && tp->t.slice.thread_instruction_count == NULL);
	for (uint32_t i = 0; i < 200; i++) { /* grows past the capacity it was made with */
		uint32_t r = tp_slice_append(&tp->t.slice);
		tp->t.slice.ts[r] = 1000 + (int64_t)i;
	}
	tp_set_slice_thread_ts(&tp->t.slice, 299, 7);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE thread_ts IS NOT NULL"), 2);
	CHECK_EQ(q_int(tp, "SELECT id FROM slice WHERE thread_ts = 42"), 5);
	CHECK_EQ(q_int(tp, "SELECT id FROM slice WHERE thread_ts < 10"), 299);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM slice WHERE thread_dur = 0"), 1);
	CHECK_EQ(q_int(tp, "SELECT id FROM slice ORDER BY thread_ts DESC, id LIMIT 1"), 5);
	CHECK_EQ(q_int(tp, "SELECT thread_ts FROM slice WHERE id = 250"), INT64_MIN);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM thread_slice WHERE thread_ts = 42"), 1);
	tp_free(tp);
}

/* args stores one value + a type per row and flat_key only where it differs
 * from key; the view computes Perfetto's columns, filters work on them. */
TEST(tp_sql_args_computed_columns)
{
	struct tp *tp = tp_new(NULL);
	struct tp_args_builder b = {0};
	char buf[512];
	uint32_t k = S(tp, "args.k");

	tp_args_begin(&b);
	tp_args_add_int(&b, k, k, 1);
	tp_args_add_real(&b, S(tp, "args.r"), S(tp, "args.r"), -0.5);
	tp_args_add_json(&b, S(tp, "args.j"), S(tp, "args.j"), S(tp, "{}"));
	uint32_t s1 = tp_args_commit(tp, &b);
	CHECK(tp->t.args.flat_key_diff == NULL); /* no array keys yet */
	tp_args_begin(&b);
	tp_args_add_string(&b, S(tp, "args.a"), S(tp, "args.a[1]"), S(tp, "x"));
	tp_args_add_int(&b, k, k, (int64_t)1 << 40);
	uint32_t s2 = tp_args_commit(tp, &b);
	CHECK(tp->t.args.flat_key_diff != NULL);
	/* Identical content shares a set. */
	tp_args_begin(&b);
	tp_args_add_int(&b, k, k, 1);
	tp_args_add_real(&b, S(tp, "args.r"), S(tp, "args.r"), -0.5);
	tp_args_add_json(&b, S(tp, "args.j"), S(tp, "args.j"), S(tp, "{}"));
	CHECK_EQ(tp_args_commit(tp, &b), s1);
	/* A merge re-reads stored rows: b's value wins, others are kept. */
	uint32_t m = tp_args_merge(tp, s1, s2);
	tp_args_builder_release(&b);

	CHECK_STR_EQ(q_rows(tp, "SELECT * FROM args WHERE id < 5", buf, sizeof buf),
	             "0|0|args.k|args.k|1|NULL|NULL|int|1;"
	             "1|0|args.r|args.r|NULL|NULL|-0.5|real|-0.5;"
	             "2|0|args.j|args.j|NULL|{}|NULL|json|{};"
	             "3|3|args.a|args.a[1]|NULL|x|NULL|string|x;"
	             "4|3|args.k|args.k|1099511627776|NULL|NULL|int|1099511627776");
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM args WHERE flat_key = 'args.a'"), 2);
	CHECK_EQ(
	    q_int(tp, "SELECT count(*) FROM args WHERE flat_key = 'args.k' AND key = 'args.k'"), 3);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM args WHERE int_value > 1"), 2);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM args WHERE real_value < 0"), 2);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM args WHERE value_type = 'json'"), 2);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM args WHERE string_value IS NULL"), 5);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM args WHERE value_type = 'pointer'"), 0);
	char sql[200];
	snprintf(
	    sql, sizeof sql,
	    "SELECT extract_arg(%u, 'args.k'), extract_arg(%u, 'args.r'), "
	    "extract_arg(%u, 'args.j'), extract_arg(%u, 'args.a[1]'), extract_arg(%u, 'args.a')",
	    m, m, m, m, m);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), "1099511627776|-0.5|{}|x|NULL");
	struct tp_arg a = tp_args_row(tp, 3);
	CHECK_EQ(a.type, TP_ARG_STRING);
	CHECK_STR_EQ(tp_str(tp, a.flat_key), "args.a");
	CHECK_STR_EQ(tp_str(tp, a.key), "args.a[1]");
	tp_free(tp);
}

TEST(tp_sql_extract_arg_unsorted_args)
{
	struct tp *tp = tp_new(NULL);
	/* Rows appended out of set order: EXTRACT_ARG must still find them. */
	for (uint32_t i = 0; i < 10; i++) {
		uint32_t r = tp_args_append(&tp->t.args);
		tp->t.args.arg_set_id[r] = 10 - i;
		tp->t.args.key[r] = S(tp, "k");
		tp->t.args.value[r] = i;
		tp->t.args.type[r] = TP_ARG_INT;
	}
	CHECK_EQ(q_int(tp, "SELECT extract_arg(3, 'k')"), 7);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM args WHERE arg_set_id >= 3"), 8);
	tp_free(tp);
}

TEST(tp_sql_functions)
{
	struct tp *tp = tp_new(NULL);
	char buf[256];
	CHECK_EQ(q_int(tp, "SELECT hash('a')"), -5808556873153909620LL);
	CHECK_EQ(q_int(tp, "SELECT hash(1)"), -8517097267634966620LL);
	CHECK_EQ(q_int(tp, "SELECT hash('ab', 7)"), 3564328792904902669LL);
	CHECK(strncmp(q_rows(tp, "SELECT hash(1.5)", buf, sizeof buf), "ERROR", 5) == 0);
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT str_split('a.bc..d', '.', 1), str_split('a.bc', '.', 5), "
	                    "str_split(NULL, '.', 0), str_split('a::b', '::', 1)",
	                    buf, sizeof buf),
	             "bc|NULL|NULL|b");
	tp_free(tp);
}

TEST(tp_sql_stats)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM stats"), TP_STAT_COUNT);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM stats WHERE value = 0"), TP_STAT_COUNT);
	tp->stats[TP_STAT_json_parser_failure] = 3;
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT value, severity, source, idx, key = id FROM stats "
	                    "WHERE name = 'json_parser_failure'",
	                    buf, sizeof buf),
	             "3|error|trace|NULL|1");
	CHECK_EQ(
	    q_int(tp,
	          "SELECT value FROM stats WHERE name = 'slice_drop_overlapping_complete_event'"),
	    0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM stats WHERE description IS NULL"), 0);
	tp_free(tp);
}

/* ---- prelude functions and stdlib modules (strings.c, window.c,
 * args_json.c, modules.c, include.c) ------------------------------------- */

static bool is_error(const char *res, const char *prefix)
{
	return strncmp(res, "ERROR: ", 7) == 0 && strncmp(res + 7, prefix, strlen(prefix)) == 0;
}

/* The statement fails with a message starting with prefix. */
#define CHECK_SQL_ERROR(tp, sql, prefix)                                             \
	do {                                                                         \
		char err_buf_[512];                                                  \
		CHECK(is_error(q_rows(tp, sql, err_buf_, sizeof err_buf_), prefix)); \
	} while (0)

TEST(tp_sql_arg_set_to_json)
{
	struct tp *tp = tp_new(NULL);
	struct tp_args_builder b = {0};
	char buf[512], sql[160];

	tp_args_begin(&b);
	tp_args_add_string(&b, S(tp, "debug.z"), S(tp, "debug.z"),
	                   S(tp, "q\"\n\xc3\xa9\xf0\x9f\x98\x80"));
	tp_args_add_int(&b, S(tp, "debug.a"), S(tp, "debug.a"), -1);
	tp_args_add_uint(&b, S(tp, "debug.n.x"), S(tp, "debug.n.x"), UINT64_MAX);
	tp_args_add_bool(&b, S(tp, "debug.arr"), S(tp, "debug.arr[1]"), true);
	tp_args_add_pointer(&b, S(tp, "debug.p"), S(tp, "debug.p"), 0xBEEF);
	tp_args_add_real(&b, S(tp, "debug.n.r"), S(tp, "debug.n.r"), 0.1);
	tp_args_add_real(&b, S(tp, "debug.inf"), S(tp, "debug.inf"), -INFINITY);
	tp_args_add_null(&b, S(tp, "debug.nul"), S(tp, "debug.nul"));
	tp_args_add_string(&b, S(tp, "debug.m.k"), S(tp, "debug.m[0][1].k"), S(tp, "v"));
	uint32_t s1 = tp_args_commit(tp, &b);
	/* A value under a value is an error naming the key. */
	tp_args_begin(&b);
	tp_args_add_int(&b, S(tp, "a"), S(tp, "a"), 1);
	tp_args_add_int(&b, S(tp, "a.b"), S(tp, "a.b"), 2);
	uint32_t s2 = tp_args_commit(tp, &b);
	tp_args_begin(&b);
	tp_args_add_int(&b, S(tp, "x.y"), S(tp, "x.y"), 1);
	tp_args_add_int(&b, S(tp, "x"), S(tp, "x[0]"), 2);
	uint32_t s3 = tp_args_commit(tp, &b);
	tp_args_builder_release(&b);

	snprintf(sql, sizeof sql, "SELECT __intrinsic_arg_set_to_json(%u)", s1);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf),
	             "{\"debug\":{\"z\":\"q\\\"\\n\\u00e9\\ud83d\\ude00\",\"a\":-1,"
	             "\"n\":{\"x\":18446744073709551615,\"r\":0.1},\"arr\":[null,true],"
	             "\"p\":\"0xbeef\",\"inf\":\"-Infinity\",\"nul\":null,"
	             "\"m\":[[null,{\"k\":\"v\"}]]}}");
	snprintf(sql, sizeof sql, "SELECT __intrinsic_arg_set_to_json(%u)", s2);
	CHECK_SQL_ERROR(tp, sql,
	                "Failed to insert key a.b: tried to insert b into a non-dictionary");
	snprintf(sql, sizeof sql, "SELECT __intrinsic_arg_set_to_json(%u)", s3);
	CHECK_SQL_ERROR(tp, sql,
	                "Failed to insert key x[0]: tried to insert x[0] into a non-array");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT __intrinsic_arg_set_to_json(NULL), "
	                    "__intrinsic_arg_set_to_json(99999)",
	                    buf, sizeof buf),
	             "NULL|{}");
	CHECK_SQL_ERROR(tp, "SELECT __intrinsic_arg_set_to_json('x')",
	                "PRINT_ARGS: 1st argument should be arg set id");
	tp_free(tp);
}

TEST(tp_sql_regexp_functions)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	CHECK_STR_EQ(
	    q_rows(tp,
	           "SELECT 'abc' REGEXP 'b', regexp('B', 'abc'), regexp('B', 'abc', 'ci'), "
	           "regexp('B', 'abc', 'ic'), regexp(NULL, 'a'), regexp('a', NULL), "
	           "regexp('^[\\d-]+$', '12-3'), regexp('^\\d+$', '1a'), "
	           "regexp('binder:\\d+_\\D', 'binder:12_x')",
	           buf, sizeof buf),
	    "1|0|1|0|NULL|NULL|1|0|1");
	CHECK_SQL_ERROR(tp, "SELECT regexp('a', 'b', 'x')", "regexp: unknown flag 'x'");
	CHECK_SQL_ERROR(tp, "SELECT regexp('(', 'b')", "regexp: invalid pattern '('");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT regexp_extract('ab12cd', '\\d+'), regexp_extract('x', 'y'), "
	                    "regexp_extract('ac', 'a(b)?c'), regexp_extract('abc', 'a(b)c'), "
	                    "regexp_extract(NULL, 'a')",
	                    buf, sizeof buf),
	             "12|NULL|ac|b|NULL");
	CHECK_SQL_ERROR(tp, "SELECT regexp_extract('ab', '(a)(b)')",
	                "REGEXP_EXTRACT: pattern has more than one group.");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT regexp_replace_simple('a1b22', '(\\d+)', '<$1>'), "
	                    "regexp_replace_simple('aaa', 'a*', '-'), "
	                    "regexp_replace_simple('abc', '', '|'), "
	                    "regexp_replace_simple('a.b', '\\.', '$$${0}'), "
	                    "regexp_replace_simple('ab', 'b', '$x'), "
	                    "regexp_replace_simple('ab', 'z', 'y'), "
	                    "regexp_replace_simple(NULL, 'a', 'b')",
	                    buf, sizeof buf),
	             "a<1>b<22>|--||a|b|c||a$.b|ab|ab|NULL");
	/* A pattern from a column is compiled per row, not cached wrongly. */
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(regexp(p, 'xay'), ',') FROM "
	                    "(SELECT 'a' AS p UNION ALL SELECT 'b' UNION ALL SELECT 'A')",
	                    buf, sizeof buf),
	             "1,0,0");
	tp_free(tp);
}

TEST(tp_sql_unhex)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT unhex(' 0x1f\n'), unhex('F'), unhex('0'), unhex(NULL), "
	                    "unhex('7fffffffffffffff')",
	                    buf, sizeof buf),
	             "31|15|0|NULL|9223372036854775807");
	static const char *const bad[][2] = {
	    {"' '", "input is empty or only whitespace"},
	    {"'0x'", "hex string is empty after prefix"},
	    {"'zz'", "invalid or out of range hex string"},
	    {"'8000000000000000'", "invalid or out of range hex string"},
	    {"12", "argument must be text"},
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(bad); i++) {
		char sql[64], want[64];
		snprintf(sql, sizeof sql, "SELECT unhex(%s)", bad[i][0]);
		snprintf(want, sizeof want, "UNHEX: %s", bad[i][1]);
		CHECK_SQL_ERROR(tp, sql, want);
	}
	tp_free(tp);
}

TEST(tp_sql_window_functions)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	CHECK_EQ(q_int(tp, "CREATE TABLE w(id INT, v, ts INT, dur INT)"), INT64_MIN);
	CHECK_EQ(q_int(tp,
	               "INSERT INTO w VALUES (1, 'a', 0, 10), (2, NULL, 2, 0), (3, 3.5, 4, -1), "
	               "(4, NULL, 11, 5), (5, NULL, 12, 1)"),
	         INT64_MIN);
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(coalesce(x, '-'), ',') FROM (SELECT "
	                    "last_non_null(v) OVER (ORDER BY id) AS x FROM w ORDER BY id)",
	                    buf, sizeof buf),
	             "a,a,3.5,3.5,3.5");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(coalesce(x, '-'), ',') FROM (SELECT "
	                    "last_non_null(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND "
	                    "CURRENT ROW) AS x FROM w ORDER BY id)",
	                    buf, sizeof buf),
	             "a,a,3.5,3.5,-");
	CHECK_STR_EQ(q_rows(tp, "SELECT last_non_null(v) FROM w", buf, sizeof buf), "3.5");
	/* Lanes: [0,10) lane 0; instant at 2 lane 1 (freed at once); [4,inf)
	 * lane 1; at 11 lane 0 is free again; [12,13) lane 2. */
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(d, ',') FROM (SELECT internal_layout(ts, dur) "
	                    "OVER (ORDER BY ts ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) "
	                    "AS d FROM w ORDER BY ts)",
	                    buf, sizeof buf),
	             "0,1,1,0,2");
	CHECK_SQL_ERROR(tp,
	                "SELECT internal_layout(ts, dur) OVER (ORDER BY ts DESC ROWS "
	                "BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM w",
	                "INTERNAL_LAYOUT: rows are not sorted by ts");
	CHECK_SQL_ERROR(tp,
	                "SELECT internal_layout(ts, dur) OVER (ORDER BY ts ROWS BETWEEN "
	                "1 PRECEDING AND CURRENT ROW) FROM w",
	                "INTERNAL_LAYOUT: the window clause should be");
	CHECK_SQL_ERROR(tp,
	                "SELECT internal_layout(-1, 1) OVER (ORDER BY id ROWS BETWEEN "
	                "UNBOUNDED PRECEDING AND CURRENT ROW) FROM w",
	                "INTERNAL_LAYOUT: ts cannot be negative.");
	CHECK_SQL_ERROR(tp,
	                "SELECT internal_layout(ts, -2) OVER (ORDER BY ts ROWS BETWEEN "
	                "UNBOUNDED PRECEDING AND CURRENT ROW) FROM w",
	                "INTERNAL_LAYOUT: dur cannot be < -1.");
	tp_free(tp);
}

/* SUM/TOTAL/AVG give SQLite 3.43+'s (Perfetto v58's) answers: compensated
 * real sums, exact integers, the overflow rule, and the window inverse. The
 * plain sums of SQLite 3.40 give 0.99999999999999989, 0.0 and an overflow
 * error for the first three. */
TEST(tp_sql_compensated_sums)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	CHECK_STR_EQ(q_rows(tp,
	                    "WITH RECURSIVE t(i, x) AS (SELECT 1, 0.1 UNION ALL SELECT i + 1, 0.1 "
	                    "FROM t WHERE i < 10) SELECT printf('%.17g', sum(x)), "
	                    "printf('%.17g', total(x)), printf('%.17g', avg(x) * 10) FROM t",
	                    buf, sizeof buf),
	             "1|1|1");
	CHECK_STR_EQ(
	    q_rows(tp,
	           "SELECT sum(x), total(x), avg(x) FROM (SELECT column1 AS x FROM (VALUES "
	           "(1e100), (1), (-1e100)))",
	           buf, sizeof buf),
	    "1.0|1.0|0.333333333333333");
	/* Past int64 and then a real: the real sum, every integer bit kept. */
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT printf('%.17g', sum(column1)) FROM (VALUES "
	                    "(9223372036854775807), (1), (0.5), (-9223372036854775807))",
	                    buf, sizeof buf),
	             "1.5");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT sum(column1), typeof(sum(column1)), total(column1), "
	                    "avg(column1) FROM (VALUES (9007199254740993), (1), (NULL))",
	                    buf, sizeof buf),
	             "9007199254740994|integer|9.00719925474099e+15|4.5035996273705e+15");
	CHECK_SQL_ERROR(tp, "SELECT sum(column1) FROM (VALUES (9223372036854775807), (1), (-5))",
	                "integer overflow");
	CHECK_STR_EQ(q_rows(tp, "SELECT total(column1) FROM (VALUES (9223372036854775807), (1))",
	                    buf, sizeof buf),
	             "9.22337203685478e+18");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT sum(x), typeof(total(x)), total(x), avg(x) FROM (SELECT 1 AS x "
	                    "WHERE 0)",
	                    buf, sizeof buf),
	             "NULL|real|0.0|NULL");
	CHECK_STR_EQ(
	    q_rows(tp,
	           "SELECT sum(column1), avg(column1) FROM (VALUES ('2'), ('3.5'), (NULL), "
	           "(4))",
	           buf, sizeof buf),
	    "9.5|3.16666666666667");
	/* The inverse step takes the leaving row off the compensated sum. */
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(s, ',') FROM (SELECT sum(x) OVER (ORDER BY i ROWS "
	                    "BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM (SELECT column1 AS i, "
	                    "column2 AS x FROM (VALUES (1, 1e100), "
	                    "(2, 1), (3, -1e100), (4, 1e100), (5, 7))) ORDER BY i)",
	                    buf, sizeof buf),
	             "1.0e+100,1.0e+100,1.0,1.0,7.0");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(s, ',') FROM (SELECT sum(x) OVER (ORDER BY i ROWS "
	                    "BETWEEN 1 PRECEDING AND CURRENT ROW) AS s FROM (SELECT column1 AS i, "
	                    "column2 AS x FROM (VALUES (1, 5), (2, 6), "
	                    "(3, NULL), (4, 8))) ORDER BY i)",
	                    buf, sizeof buf),
	             "5,11,6,8");
	tp_free(tp);
}

TEST(tp_sql_time_conversion)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT time_from_ms(2), time_from_us(-3), time_to_s(1999999999), "
	                    "time_to_min(-60000000000), time_to_us(1500.0), time_from_ns(NULL), "
	                    "typeof(time_from_days(200000)), time_to_hours('7200000000000')",
	                    buf, sizeof buf),
	             "2000000|-3000|1|-1|1.5|NULL|real|2");
	tp_free(tp);
}

TEST(tp_sql_slice_modules)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	/* A[0,100) > B[10,50) > C[20,30); A[200,300) > B[210,220); D[400,400). */
	static const struct {
		int64_t ts, dur;
		const char *name;
		uint32_t depth, parent;
	} sl[] = {{0, 100, "A", 0, TP_NULL_U32}, {10, 40, "B", 1, 0},
	          {20, 10, "C", 2, 1},           {200, 100, "A", 0, TP_NULL_U32},
	          {210, 10, "B", 1, 3},          {400, 0, "D", 0, TP_NULL_U32}};
	for (size_t i = 0; i < TB_ARRAY_SIZE(sl); i++) {
		uint32_t r = tp_slice_append(&tp->t.slice);
		tp->t.slice.ts[r] = sl[i].ts;
		tp->t.slice.dur[r] = sl[i].dur;
		tp->t.slice.track_id[r] = tr;
		tp->t.slice.name[r] = S(tp, sl[i].name);
		tp->t.slice.depth[r] = sl[i].depth;
		tp->t.slice.parent_id[r] = sl[i].parent;
	}
	/* Perfetto's stack ids of A and A > B (its difftest's values). */
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT stack_id, parent_stack_id FROM slice_with_stack_id "
	                    "WHERE id IN (0, 1) ORDER BY id",
	                    buf, sizeof buf),
	             "1905114530773834795|0;6901956697539716495|1905114530773834795");
	CHECK_EQ(q_int(tp, "SELECT count(DISTINCT stack_id) FROM slice_with_stack_id"), 4);
	CHECK_STR_EQ(q_rows(tp, "SELECT group_concat(id) FROM ancestor_slice(2)", buf, sizeof buf),
	             "0,1");
	CHECK_STR_EQ(
	    q_rows(tp, "SELECT group_concat(id) FROM descendant_slice(0)", buf, sizeof buf), "1,2");
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM descendant_slice(5)"), 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM ancestor_slice(NULL)"), 0);
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(id) FROM descendant_slice_by_stack((SELECT "
	                    "stack_id FROM slice_with_stack_id WHERE id = 1))",
	                    buf, sizeof buf),
	             "1,2,4");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(id) FROM ancestor_slice_by_stack((SELECT "
	                    "stack_id FROM slice_with_stack_id WHERE id = 4))",
	                    buf, sizeof buf),
	             "0,1,3,4");
	CHECK_STR_EQ(
	    q_rows(tp, "SELECT group_concat(self_dur) FROM slice_self_dur", buf, sizeof buf),
	    "60,30,10,90,10,0");
	/* The argument is required. */
	CHECK_SQL_ERROR(tp, "SELECT * FROM ancestor_slice", "");
	tp_free(tp);
}

TEST(tp_sql_prepare_include_and_macros)
{
	struct tp *tp = tp_new(NULL);
	sqlite3_stmt *st = NULL;
	const char *tail = NULL;
	char err[256];
	static const char two[] = "SELECT cast_int!(1e3) AS a, cast_string!( cast_double!(2) ), "
	                          "'cast_int!(x)', 1 != 2; SELECT 2";
	CHECK_EQ(tp_prepare(tp, two, &st, &tail, err, sizeof err), SQLITE_OK);
	CHECK_STR_EQ(tail, " SELECT 2");
	if (st && sqlite3_step(st) == SQLITE_ROW) {
		CHECK_EQ(sqlite3_column_int64(st, 0), 1000);
		CHECK_STR_EQ((const char *)sqlite3_column_text(st, 1), "2.0");
		CHECK_STR_EQ((const char *)sqlite3_column_text(st, 2), "cast_int!(x)");
		CHECK_EQ(sqlite3_column_int64(st, 3), 1);
	} else {
		CHECK(!"no row");
	}
	sqlite3_finalize(st);
	CHECK(tp_prepare(tp, "SELECT nope!(1)", &st, &tail, err, sizeof err) != SQLITE_OK);
	CHECK_STR_EQ(err, "unknown macro 'nope!'");
	CHECK(tp_prepare(tp, "SELECT cast_int!(1", &st, &tail, err, sizeof err) != SQLITE_OK);
	CHECK_STR_EQ(err, "unterminated call of macro 'cast_int!'");
	CHECK_EQ(tp_prepare(tp, "INCLUDE PERFETTO MODULE slices.stack; SELECT 1", &st, &tail, err,
	                    sizeof err),
	         SQLITE_OK);
	CHECK(st == NULL);
	CHECK_STR_EQ(tail, " SELECT 1");
	CHECK(tp_prepare(tp, "INCLUDE PERFETTO MODULE android.nope;", &st, &tail, err,
	                 sizeof err) != SQLITE_OK);
	CHECK_STR_EQ(err, "unknown module 'android.nope' in INCLUDE PERFETTO MODULE");
	tp_free(tp);
}

/* directly_connected_flow / following_flow / preceding_flow on slices
 * 0 > 1 (child) on one thread, 2 and 3 on another:
 *   flow a: 1 -> 2, flow b: 2 -> 3, flow c: 0 -> 3 */
TEST(tp_sql_flow_functions)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	uint32_t t1 = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	uint32_t t2 = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 2));
	uint32_t n = S(tp, "s");
	uint32_t s0 = tp_slice_complete(tp, t1, 0, 100, 0, n, TP_NULL_U32);
	uint32_t s1 = tp_slice_complete(tp, t1, 10, 10, 0, n, TP_NULL_U32);
	uint32_t s2 = tp_slice_complete(tp, t2, 30, 10, 0, n, TP_NULL_U32);
	uint32_t s3 = tp_slice_complete(tp, t2, 50, 10, 0, n, TP_NULL_U32);
	CHECK_EQ(s0 + 1, s1);
	uint32_t fa = tp_flow_add(tp, s1, s2), fb = tp_flow_add(tp, s2, s3),
	         fc = tp_flow_add(tp, s0, s3);
	char sql[200], want[64];
	/* 1: forward a, b; nothing flows into 1. */
	snprintf(sql, sizeof sql, "SELECT group_concat(id) FROM directly_connected_flow(%u)", s1);
	snprintf(want, sizeof want, "%u,%u", fa, fb);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), want);
	/* 3: backward b, a and c. */
	snprintf(sql, sizeof sql, "SELECT group_concat(id) FROM directly_connected_flow(%u)", s3);
	snprintf(want, sizeof want, "%u,%u,%u", fa, fb, fc);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), want);
	/* Following from 0 takes its child 1 too: all three. */
	snprintf(sql, sizeof sql, "SELECT group_concat(id) FROM following_flow(%u)", s0);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), want);
	/* Preceding 1 climbs to its parent 0: nothing flows into either. */
	snprintf(sql, sizeof sql, "SELECT count(*) FROM preceding_flow(%u)", s1);
	CHECK_EQ(q_int(tp, sql), 0);
	snprintf(sql, sizeof sql, "SELECT group_concat(id) FROM preceding_flow(%u)", s2);
	snprintf(want, sizeof want, "%u", fa);
	CHECK_STR_EQ(q_rows(tp, sql, buf, sizeof buf), want);
	tp_free(tp);
}

/* linux.cpu.idle & co. over a cpuidle counter track; the intervals follow
 * counter_leading_intervals!: inside a run of equal values only the first
 * two and (if a different value follows) the last row are kept. */
TEST(tp_sql_linux_cpu_modules)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	struct tp_track_key k = {.type = "cpu_idle",
	                         .event_type = "counter",
	                         .utid = -1,
	                         .upid = -1,
	                         .cpu = 0,
	                         .name = S(tp, "cpuidle")};
	uint32_t tr = tp_track_get(tp, &k);
	static const double v[] = {4294967295.0, 1, 1, 1, 1, 4294967295.0, 0, 0, 0};
	for (size_t i = 0; i < TB_ARRAY_SIZE(v); i++)
		tp_counter_add(tp, tr, 10 * (int64_t)i, v[i], TP_NULL_U32);
	tp->ts_min = 0;
	tp->ts_max = 100;
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT group_concat(ts || ':' || dur || ':' || idle, ',') FROM "
	                    "cpu_idle_counters",
	                    buf, sizeof buf),
	             "0:10:-1,10:10:1,20:20:1,40:10:1,50:10:-1,60:10:0,70:30:0");
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT cpu, state, count, dur, avg_dur, idle_percent FROM "
	                    "cpu_idle_stats",
	                    buf, sizeof buf),
	             "0|1|2|40|20|40.0;0|2|3|40|13|40.0");
	tp_free(tp);
}

/* IN on a column that is neither id nor sorted is left to SQLite: one scan
 * (not one per value) and rows in id order, as Perfetto answers
 * `WHERE name IN ('b', 'a')` (the UI's clock_snapshot query relies on it). */
TEST(tp_sql_in_on_unsorted_column)
{
	struct tp *tp = big_slices(1000);
	char buf[256];
	tp->t.slice.name[3] = S(tp, "b");
	tp->t.slice.name[7] = S(tp, "a");
	tp->t.slice.name[9] = S(tp, "b");
	int64_t v0 = visited(tp);
	CHECK_STR_EQ(
	    q_rows(tp, "SELECT id, name FROM slice WHERE name IN ('b', 'a')", buf, sizeof buf),
	    "3|b;7|a;9|b");
	CHECK_EQ(visited(tp) - v0, 1000);
	tp_free(tp);
}

/* ---- grouped output (vtab.c plan_grouped) -------------------------------- */

/* sql with its GROUP BY / DISTINCT keys left to the table (grouped output)
 * answers exactly as the same query whose keys are written `+col`, which
 * SQLite cannot hand to the table and so sorts itself. */
static void check_grouped_same(struct tp *tp, const char *sql, const char *plus_sql)
{
	static char a[16384], b[16384];
	q_rows(tp, sql, a, sizeof a);
	q_rows(tp, plus_sql, b, sizeof b);
	if (strcmp(a, b) != 0 || strncmp(a, "ERROR", 5) == 0)
		test_report(__FILE__, __LINE__, "%s\n  gave %.300s\n  sorter %.300s", sql, a, b);
}

/* The EXPLAIN QUERY PLAN lines of sql joined by ';'. */
static const char *q_plan(struct tp *tp, const char *sql, char *buf, size_t n)
{
	char eqp[1024];
	snprintf(eqp, sizeof eqp, "EXPLAIN QUERY PLAN %s", sql);
	sqlite3_stmt *st = NULL;
	size_t len = 0;
	buf[0] = 0;
	if (sqlite3_prepare_v2(tp->db, eqp, -1, &st, NULL) != SQLITE_OK) {
		snprintf(buf, n, "ERROR: %s", sqlite3_errmsg(tp->db));
		return buf;
	}
	while (sqlite3_step(st) == SQLITE_ROW)
		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s", len ? ";" : "",
		                        (const char *)sqlite3_column_text(st, 3));
	sqlite3_finalize(st);
	return buf;
}

/* Slices whose names, depths, durs and parents repeat, with NULLs: name
 * NULL (id 0) and "" (the pool's empty id), names sharing prefixes and
 * interned out of text order, negative and wide durs. */
static struct tp *group_slices(uint32_t n)
{
	static const char *const names[] = {"b", "a", "ab", "B", "", "a b", "zz", "aa"};
	struct tp *tp = tp_new(NULL);
	uint32_t ids[TB_ARRAY_SIZE(names) + 1];
	for (size_t i = 0; i < TB_ARRAY_SIZE(names); i++)
		ids[i] = names[i][0] ? S(tp, names[i]) : strpool_empty(&tp->strings);
	ids[TB_ARRAY_SIZE(names)] = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = tp_slice_append(&tp->t.slice);
		uint32_t h = i * 2654435761u;
		tp->t.slice.ts[r] = 10 * (int64_t)i;
		tp->t.slice.dur[r] = (int64_t)(h % 7) - 3 + (h % 5 == 0 ? (int64_t)h << 20 : 0);
		tp->t.slice.track_id[r] = h % 3;
		tp->t.slice.name[r] = ids[(h >> 8) % (TB_ARRAY_SIZE(names) + 1)];
		tp->t.slice.depth[r] = (h >> 4) % 4 == 0 ? 70000 + h % 2 : (h >> 4) % 4;
		tp->t.slice.parent_id[r] = i % 3 == 0 ? TP_NULL_U32 : (h >> 12) % 5;
	}
	return tp;
}

/* A grouped scan keeps reading its cached order while subqueries of the
 * same statement make more orders of the same table than the cache keeps:
 * the order in use must not be evicted (it was freed under the scan:
 * heap-use-after-free under ASan). */
TEST(tp_sql_vtab_order_in_use_not_evicted)
{
	struct tp *tp = group_slices(3000);
	tp->eof = true;
	check_grouped_same(
	    tp,
	    "SELECT name, count(*), max(id + (SELECT count(*) FROM (SELECT depth FROM slice GROUP "
	    "BY depth)) + (SELECT count(*) FROM (SELECT parent_id FROM slice GROUP BY parent_id)) "
	    "+ (SELECT count(*) FROM (SELECT dur FROM slice GROUP BY dur)) + (SELECT count(*) FROM "
	    "(SELECT ts FROM slice GROUP BY ts))) FROM slice s GROUP BY name",
	    "SELECT name, count(*), max(id + (SELECT count(*) FROM (SELECT depth FROM slice GROUP "
	    "BY +depth)) + (SELECT count(*) FROM (SELECT parent_id FROM slice GROUP BY "
	    "+parent_id)) "
	    "+ (SELECT count(*) FROM (SELECT dur FROM slice GROUP BY +dur)) + (SELECT count(*) "
	    "FROM "
	    "(SELECT ts FROM slice GROUP BY +ts))) FROM slice s GROUP BY +name");
	tp_free(tp);
}

TEST(tp_sql_vtab_group_by_matches_sorter)
{
	static const struct {
		const char *sql, *plus;
	} q[] = {
	    {"SELECT name, count(*), sum(dur), group_concat(id) FROM slice GROUP BY name",
	     "SELECT name, count(*), sum(dur), group_concat(id) FROM slice GROUP BY +name"},
	    {"SELECT depth, count(*), group_concat(id) FROM slice GROUP BY depth",
	     "SELECT depth, count(*), group_concat(id) FROM slice GROUP BY +depth"},
	    {"SELECT parent_id, count(*) FROM slice GROUP BY parent_id",
	     "SELECT parent_id, count(*) FROM slice GROUP BY +parent_id"},
	    {"SELECT dur, count(*), min(id) FROM slice GROUP BY dur",
	     "SELECT dur, count(*), min(id) FROM slice GROUP BY +dur"},
	    {"SELECT name, depth, count(*), group_concat(id) FROM slice GROUP BY name, depth",
	     "SELECT name, depth, count(*), group_concat(id) FROM slice GROUP BY +name, +depth"},
	    {"SELECT depth, name, parent_id, count(*) FROM slice GROUP BY depth, name, parent_id",
	     "SELECT depth, name, parent_id, count(*) FROM slice GROUP BY +depth, +name, "
	     "+parent_id"},
	    {"SELECT name, count(*) FROM slice WHERE dur > 0 GROUP BY name",
	     "SELECT name, count(*) FROM slice WHERE dur > 0 GROUP BY +name"},
	    {"SELECT name, count(*) FROM slice WHERE ts >= 500 AND ts < 1500 GROUP BY name",
	     "SELECT name, count(*) FROM slice WHERE ts >= 500 AND ts < 1500 GROUP BY +name"},
	    {"SELECT depth, count(*) FROM slice WHERE name = 'a' GROUP BY depth",
	     "SELECT depth, count(*) FROM slice WHERE name = 'a' GROUP BY +depth"},
	    {"SELECT depth, count(*) FROM slice WHERE name = 'missing' GROUP BY depth",
	     "SELECT depth, count(*) FROM slice WHERE name = 'missing' GROUP BY +depth"},
	    {"SELECT name, count(*) FROM slice WHERE name IS NULL GROUP BY name",
	     "SELECT name, count(*) FROM slice WHERE name IS NULL GROUP BY +name"},
	    {"SELECT name, count(*) FROM slice GROUP BY name ORDER BY name DESC",
	     "SELECT name, count(*) FROM slice GROUP BY +name ORDER BY +name DESC"},
	    {"SELECT depth, name, count(*) FROM slice GROUP BY depth, name ORDER BY depth DESC, "
	     "name",
	     "SELECT depth, name, count(*) FROM slice GROUP BY +depth, +name ORDER BY +depth DESC, "
	     "+name"},
	    {"SELECT name, count(*) FROM slice GROUP BY name ORDER BY count(*), name",
	     "SELECT name, count(*) FROM slice GROUP BY +name ORDER BY count(*), +name"},
	    {"SELECT depth, id, name FROM slice WHERE id < 50 GROUP BY depth, id, name",
	     "SELECT depth, id, name FROM slice WHERE id < 50 GROUP BY +depth, +id, +name"},
	    {"SELECT DISTINCT name FROM slice", "SELECT DISTINCT +name FROM slice"},
	    {"SELECT DISTINCT depth, name FROM slice", "SELECT DISTINCT +depth, +name FROM slice"},
	    {"SELECT count(DISTINCT name) FROM slice", "SELECT count(DISTINCT +name) FROM slice"},
	    {"SELECT name COLLATE NOCASE, count(*) FROM slice GROUP BY name COLLATE NOCASE",
	     "SELECT name COLLATE NOCASE, count(*) FROM slice GROUP BY +name COLLATE NOCASE"},
	    {"SELECT s.name, t.depth, count(*) FROM slice s JOIN slice t ON t.id = s.parent_id "
	     "GROUP BY s.name, t.depth",
	     "SELECT s.name, t.depth, count(*) FROM slice s JOIN slice t ON t.id = s.parent_id "
	     "GROUP BY +s.name, +t.depth"},
	};
	struct tp *tp = group_slices(3000);
	char buf[1024];

	for (int pass = 0; pass < 2; pass++) {
		/* Once as while loading (orders built per query), once as after
		 * the end of the trace (orders cached per table). */
		tp->eof = pass == 1;
		for (size_t i = 0; i < TB_ARRAY_SIZE(q); i++)
			check_grouped_same(tp, q[i].sql, q[i].plus);
	}
	/* The cache follows the row count. */
	uint32_t r = tp_slice_append(&tp->t.slice);
	tp->t.slice.ts[r] = 1000000;
	tp->t.slice.name[r] = S(tp, "0 first");
	tp->t.slice.depth[r] = 2;
	for (size_t i = 0; i < TB_ARRAY_SIZE(q); i++)
		check_grouped_same(tp, q[i].sql, q[i].plus);

	/* The plan: GROUP BY name handed to the table ("5o": column 5 = name),
	 * no temp b-tree. */
	CHECK_STR_EQ(q_plan(tp, "SELECT name, count(*) FROM slice GROUP BY name", buf, sizeof buf),
	             "SCAN __intrinsic_slice VIRTUAL TABLE INDEX 0:5o 16u");
	CHECK_STR_EQ(q_plan(tp, "SELECT depth, count(*) FROM slice WHERE dur > 0 GROUP BY depth",
	                    buf, sizeof buf),
	             "SCAN __intrinsic_slice VIRTUAL TABLE INDEX 0:2g 6o 34u");
	CHECK_STR_EQ(q_plan(tp, "SELECT count(*) FROM slice GROUP BY +name", buf, sizeof buf),
	             "SCAN __intrinsic_slice VIRTUAL TABLE INDEX 0:;USE TEMP B-TREE FOR GROUP BY");
	tp_free(tp);
}

TEST(tp_sql_vtab_group_by_rows_visited)
{
	struct tp *tp = group_slices(1000);
	char buf[256];
	int64_t v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM (SELECT name FROM slice GROUP BY name)"), 9);
	CHECK_EQ(visited(tp) - v0, 1000);
	/* A ts range is sorted alone. */
	v0 = visited(tp);
	CHECK_STR_EQ(q_rows(tp,
	                    "SELECT depth, count(*) FROM slice WHERE ts >= 100 AND ts < 200 "
	                    "GROUP BY depth",
	                    buf, sizeof buf),
	             q_rows(tp,
	                    "SELECT depth, count(*) FROM slice WHERE ts >= 100 AND ts < 200 "
	                    "GROUP BY +depth",
	                    buf + 128, 128));
	CHECK(visited(tp) - v0 <= 20);
	/* Cached after the end of the trace: filters checked per row. */
	tp->eof = true;
	q_int(tp, "SELECT count(*) FROM (SELECT name FROM slice GROUP BY name)");
	v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM (SELECT name FROM slice WHERE dur > 0 GROUP BY "
	                   "name)"),
	         9);
	CHECK_EQ(visited(tp) - v0, 1000);
	tp_free(tp);
}

TEST(tp_sql_vtab_group_by_empty_and_reals)
{
	struct tp *tp = tp_new(NULL);
	char buf[512];
	CHECK_STR_EQ(q_rows(tp, "SELECT name, count(*) FROM slice GROUP BY name", buf, sizeof buf),
	             "");
	CHECK_STR_EQ(q_rows(tp, "SELECT DISTINCT depth FROM slice", buf, sizeof buf), "");
	/* Reals: -0.0 groups with 0.0, negatives before positives. */
	struct tp_track_key ck = {.type = "c",
	                          .event_type = "counter",
	                          .utid = -1,
	                          .upid = -1,
	                          .cpu = -1,
	                          .name = S(tp, "c")};
	uint32_t ctr = tp_track_get(tp, &ck);
	static const double v[] = {2.5,   -0.0, -1e300,    0.0,      7,
	                           -3.25, 2.5,  -HUGE_VAL, HUGE_VAL, 1e-300};
	for (size_t i = 0; i < TB_ARRAY_SIZE(v); i++)
		tp_counter_add(tp, ctr, (int64_t)i, v[i], TP_NULL_U32);
	check_grouped_same(tp,
	                   "SELECT value, count(*), group_concat(id) FROM counter GROUP BY value",
	                   "SELECT value, count(*), group_concat(id) FROM counter GROUP BY +value");
	CHECK_STR_EQ(
	    q_rows(tp, "SELECT value, count(*) FROM counter GROUP BY value", buf, sizeof buf),
	    "-Inf|1;-1.0e+300|1;-3.25|1;0.0|2;1.0e-300|1;2.5|2;7.0|1;Inf|1");
	tp_free(tp);
}

/* A few rows against a large string pool are merge sorted (no ranks over
 * the whole pool); the answers stay the sorter's, and one-row lookups of an
 * inner loop with a grouped plan stay one row. */
TEST(tp_sql_vtab_group_by_few_rows_large_pool)
{
	struct tp *tp = group_slices(3000);
	char name[32];
	for (uint32_t i = 0; i < 60000; i++) {
		snprintf(name, sizeof name, "pool %u", i);
		S(tp, name);
	}
	for (int pass = 0; pass < 2; pass++) {
		tp->eof = pass == 1;
		check_grouped_same(tp,
		                   "SELECT name, count(*), group_concat(id) FROM slice WHERE ts < "
		                   "3000 GROUP BY name",
		                   "SELECT name, count(*), group_concat(id) FROM slice WHERE ts < "
		                   "3000 GROUP BY +name");
		check_grouped_same(
		    tp,
		    "SELECT depth, name, count(*), group_concat(id) FROM slice WHERE ts "
		    "< 5000 GROUP BY depth, name ORDER BY depth DESC, name DESC",
		    "SELECT depth, name, count(*), group_concat(id) FROM slice WHERE ts "
		    "< 5000 GROUP BY +depth, +name ORDER BY +depth DESC, +name DESC");
		check_grouped_same(tp,
		                   "SELECT p.name, count(*) FROM slice s JOIN slice p ON p.id = "
		                   "s.parent_id GROUP BY p.name",
		                   "SELECT p.name, count(*) FROM slice s JOIN slice p ON p.id = "
		                   "s.parent_id GROUP BY +p.name");
	}
	tp_free(tp);
}

/* ---- keyed lookups (vtab.c keyed_term) ----------------------------------- */

/* 20 counter tracks named "c<k>" (text order differs from id order), 6000
 * values spread over them, reals that round differently by order. */
static struct tp *keyed_counters(uint32_t names)
{
	struct tp *tp = tp_new(NULL);
	uint32_t tr[20];
	for (uint32_t k = 0; k < 20; k++) {
		char name[16];
		snprintf(name, sizeof name, "c%u", (k * 7) % names);
		struct tp_track_key ck = {.type = k < 10 ? "c" : "d",
		                          .event_type = "counter",
		                          .utid = -1,
		                          .upid = -1,
		                          .cpu = -1,
		                          .name = S(tp, name)};
		tr[k] = tp_track_get(tp, &ck);
	}
	for (uint32_t i = 0; i < 6000; i++) {
		uint32_t h = i * 2654435761u;
		tp_counter_add(tp, tr[(h >> 7) % 20], (int64_t)i, (double)(h % 1000) / 7.0 + 1e9,
		               TP_NULL_U32);
	}
	tp->eof = true;
	return tp;
}

/* A GROUP BY on the small table's columns: it is the outer loop, grouped,
 * and the counters of each track are one run of the cached track_id order
 * ("2k": column 2 = track_id, by key), no sorter; the answers (real sums
 * and group_concat included) are the sorter's. Without a GROUP BY the
 * small table is outside all the same, as Perfetto v58.2 plans it: rows
 * come grouped by track, in id order within each. */
TEST(tp_sql_vtab_join_keyed_group_by)
{
	struct tp *tp = keyed_counters(20);
	char buf[1024];
	int64_t v0;

	check_grouped_same(
	    tp,
	    "SELECT t.name, count(*), sum(c.value), group_concat(c.id) FROM counter c "
	    "JOIN counter_track t ON c.track_id = t.id GROUP BY t.name",
	    "SELECT t.name, count(*), sum(c.value), group_concat(c.id) FROM counter c "
	    "JOIN counter_track t ON c.track_id = t.id GROUP BY +t.name");
	check_grouped_same(tp,
	                   "SELECT t.id, avg(c.value), max(c.ts) FROM counter c JOIN counter_track "
	                   "t ON c.track_id = t.id WHERE c.ts >= 1000 GROUP BY t.id",
	                   "SELECT t.id, avg(c.value), max(c.ts) FROM counter c JOIN counter_track "
	                   "t ON c.track_id = t.id WHERE c.ts >= 1000 GROUP BY +t.id");
	CHECK_STR_EQ(q_plan(tp,
	                    "SELECT t.name, count(*) FROM counter c JOIN counter_track t ON "
	                    "c.track_id = t.id GROUP BY t.name",
	                    buf, sizeof buf),
	             "SCAN __intrinsic_track VIRTUAL TABLE INDEX 0:8= 1o 129u;"
	             "SCAN __intrinsic_counter VIRTUAL TABLE INDEX 0:2k 2u");
	CHECK_STR_EQ(q_plan(tp,
	                    "SELECT count(*), sum(c.value) FROM counter c JOIN counter_track t ON "
	                    "c.track_id = t.id",
	                    buf, sizeof buf),
	             "SCAN __intrinsic_track VIRTUAL TABLE INDEX 0:8=;"
	             "SCAN __intrinsic_counter VIRTUAL TABLE INDEX 0:2k 6u");
	{
		/* The first track's counters, in id order, then the next track's. */
		sqlite3_stmt *st;
		int64_t prev_track = -1, prev_id = -1, tracks = 0, rows = 0, ordered = 1;
		CHECK_EQ(
		    sqlite3_prepare_v2(tp_db(tp),
		                       "SELECT c.id, c.track_id FROM counter c JOIN counter_track "
		                       "t ON c.track_id = t.id",
		                       -1, &st, NULL),
		    SQLITE_OK);
		while (sqlite3_step(st) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(st, 0),
			        track = sqlite3_column_int64(st, 1);
			if (track != prev_track) {
				ordered &= track > prev_track;
				tracks++;
			} else {
				ordered &= id > prev_id;
			}
			prev_track = track;
			prev_id = id;
			rows++;
		}
		sqlite3_finalize(st);
		CHECK_EQ(rows, 6000);
		CHECK_EQ(tracks, 20);
		CHECK(ordered);
	}
	/* Each lookup steps over its own run only. */
	q_int(tp, "SELECT count(*) FROM counter c JOIN counter_track t ON c.track_id = t.id "
	          "GROUP BY t.name");
	v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT sum(n) FROM (SELECT count(*) AS n FROM counter c JOIN "
	                   "counter_track t ON c.track_id = t.id GROUP BY t.name)"),
	         6000);
	CHECK_EQ(visited(tp) - v0, 6000 + 20);
	tp_free(tp);

	/* Two tracks per name: a group is two runs, handed out track by track
	 * (in id order within each), with `GROUP BY +t.name` as well, as
	 * Perfetto's tables hand SQLite their rows in the order asked. (Until
	 * the keyed lookup got cheaper in stop 32, a sorter ran here.) */
	tp = keyed_counters(10);
	check_grouped_same(
	    tp,
	    "SELECT t.name, count(*), sum(c.value), group_concat(c.id) FROM counter c "
	    "JOIN counter_track t ON c.track_id = t.id GROUP BY t.name",
	    "SELECT t.name, count(*), sum(c.value), group_concat(c.id) FROM counter c "
	    "JOIN counter_track t ON c.track_id = t.id GROUP BY +t.name");
	CHECK_STR_EQ(q_plan(tp,
	                    "SELECT t.name, count(*) FROM counter c JOIN counter_track t ON "
	                    "c.track_id = t.id GROUP BY t.name",
	                    buf, sizeof buf),
	             "SCAN __intrinsic_track VIRTUAL TABLE INDEX 0:8= 1o 129u;"
	             "SCAN __intrinsic_counter VIRTUAL TABLE INDEX 0:2k 2u");
	tp_free(tp);
}

/* The lookup itself: right-hand values that are NULL, reals, text, out of
 * range, on a nullable column (parent_id, NULL on a third of the rows),
 * give what the filter in the cursor gives (the plan before the end of the
 * trace, when no order is cached). */
TEST(tp_sql_vtab_join_keyed_values)
{
	struct tp *tp = group_slices(3000);
	static char a[1024], b[1024], buf[2048];
	static const char *const sql =
	    "SELECT x.v, count(s.id), sum(s.dur), min(s.id) FROM (SELECT 2 AS v UNION ALL SELECT "
	    "2.0 UNION ALL SELECT 2.5 UNION ALL SELECT NULL UNION ALL SELECT '2' UNION ALL SELECT "
	    "'x' UNION ALL SELECT -1 UNION ALL SELECT 4294967295 UNION ALL SELECT 4 UNION ALL "
	    "SELECT -9223372036854775808) x CROSS JOIN slice s ON s.parent_id = x.v GROUP BY x.v";
	int64_t n2 = 0;

	CHECK(strstr(q_plan(tp, sql, buf, sizeof buf), "INDEX 0:7=") != NULL);
	q_rows(tp, sql, b, sizeof b);
	tp->eof = true;
	CHECK(strstr(q_plan(tp, sql, buf, sizeof buf), "INDEX 0:7k") != NULL);
	CHECK_STR_EQ(q_rows(tp, sql, a, sizeof a), b);
	for (uint32_t i = 0; i < 3000; i++)
		n2 += tp->t.slice.parent_id[i] == 2;
	CHECK(n2 > 0);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM (SELECT 2 AS v) x CROSS JOIN slice s ON "
	                   "s.parent_id = x.v + 0"),
	         n2);
	/* A ts range shorter than the run is scanned, the key checked per
	 * row: 20 rows stepped over, not the run. */
	n2 = 0;
	for (uint32_t i = 100; i < 120; i++)
		n2 += tp->t.slice.parent_id[i] == 2;
	int64_t v0 = visited(tp);
	CHECK_EQ(q_int(tp, "SELECT count(*) FROM (SELECT 2 AS v) x CROSS JOIN slice s ON "
	                   "s.parent_id = x.v + 0 AND s.ts >= 1000 AND s.ts < 1200"),
	         n2);
	CHECK_EQ(visited(tp) - v0, 20);
	CHECK(strstr(q_plan(tp,
	                    "SELECT count(*) FROM (SELECT 2 AS v) x CROSS JOIN slice s ON "
	                    "s.parent_id = x.v + 0 AND s.ts >= 1000 AND s.ts < 1200",
	                    buf, sizeof buf),
	             "7k") != NULL);
	tp_free(tp);
}

/* A join's inner `id =` lookup with other filters (vt_filter's short path,
 * a row per outer row) gives the rows SQLite's own evaluation of the same
 * join gives (CAST keeps a column's affinity, and the constraint out of
 * xFilter): operands of
 * every type, out of range, NULL; text, integer and NULL filters beside
 * it; before and after the trace is complete (the column readers then
 * outlive each xFilter). */
TEST(tp_sql_join_id_lookup_filters)
{
	struct tp *tp = group_slices(3000);
	static char a[4096], b[4096], buf[1024];
	static const char *const w =
	    "WITH w(v, n) AS (VALUES (5, 'a'), (5, 'b'), (6, 'a'), (2999, 'zz'), (3000, 'a'), "
	    "(-1, 'a'), (7.0, 'ab'), (7.5, 'ab'), ('8', 'a'), ('x', 'a'), (NULL, 'a'), (9, NULL), "
	    "(10, ''), (11, 'nope'), (12, 'aa'), (12, 'aa'), (13, 'B'), (9223372036854775807, "
	    "'a'), (1, 'a'), (2, 'b'), (3, 'ab'), (4, 'a b') UNION ALL SELECT id, name FROM slice "
	    "WHERE id % 97 = 0 UNION ALL SELECT id + 1, name FROM slice WHERE id % 89 = 0 UNION "
	    "ALL SELECT CAST(id AS REAL), name FROM slice WHERE id % 83 = 0) ";
	static const char *const joins[][2] = {
	    {"s.id = w.v AND s.name = w.n",
	     "CAST(s.id AS INT) = w.v AND CAST(s.name AS TEXT) = w.n"},
	    {"s.id = w.v AND s.parent_id IS NOT NULL AND s.depth = 2",
	     "CAST(s.id AS INT) = w.v AND +s.parent_id IS NOT NULL AND +s.depth = 2"},
	    {"s.id = w.v AND s.parent_id IS NULL AND s.depth < 3",
	     "CAST(s.id AS INT) = w.v AND +s.parent_id IS NULL AND +s.depth < 3"},
	    {"s.id = w.v AND s.dur >= 0", "CAST(s.id AS INT) = w.v AND +s.dur >= 0"},
	};

	static const char *const sel =
	    "%sSELECT group_concat(quote(w.v) || ':' || s.id || ':' || ifnull(s.name, 'N') || ':' "
	    "|| "
	    "s.dur || ':' || ifnull(s.parent_id, 'N'), ',') FROM w CROSS JOIN slice s ON %s";

	for (int pass = 0; pass < 2; pass++) {
		for (size_t j = 0; j < TB_ARRAY_SIZE(joins); j++) {
			char q[1024];
			snprintf(q, sizeof q, sel, w, joins[j][0]);
			CHECK(strstr(q_plan(tp, q, buf, sizeof buf), "INDEX 0:") != NULL);
			CHECK(strstr(buf, "0=") != NULL);
			q_rows(tp, q, a, sizeof a);
			snprintf(q, sizeof q, sel, w, joins[j][1]);
			CHECK_STR_EQ(a, q_rows(tp, q, b, sizeof b));
			CHECK(strlen(a) > 10);
		}
		/* Exact count: each slice of id % 97 = 0 meets its own name. */
		CHECK_EQ(
		    q_int(tp, "SELECT count(*) FROM (SELECT id AS v, name AS n FROM slice "
		              "WHERE id % 97 = 0) w CROSS JOIN slice s ON s.id = w.v AND "
		              "s.name = w.n"),
		    q_int(tp, "SELECT count(*) FROM slice WHERE id % 97 = 0 AND name IS NOT NULL"));
		tp->eof = true;
	}
	tp_free(tp);
}
