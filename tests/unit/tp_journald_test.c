/*
 * The trace processor's import of TracePacket.journald_event
 * (importers/proto/journald.c): SystemdJournaldEvent packets built with the
 * pb writer become logs rows with Perfetto's columns, args and stats.
 */
#include <sqlite3.h>

#include "base.h"
#include "pb.h"
#include "pb_fields.h"
#include "test.h"
#include "trace_processor.h"

static void journald_packet(struct pb_writer *w, uint64_t ts, int pid, int tid, int prio,
                            const char *tag, const char *msg, int uid, const char *unit)
{
	unsigned p = pb_begin_nested(w, PB_F_Trace_packet);
	pb_put_uint64(w, PB_F_TracePacket_timestamp, ts);
	unsigned e = pb_begin_nested(w, PB_F_TracePacket_journald_event);
	if (pid >= 0)
		pb_put_uint32(w, PB_F_SystemdJournaldEvent_pid, (uint32_t)pid);
	if (tid >= 0)
		pb_put_uint32(w, PB_F_SystemdJournaldEvent_tid, (uint32_t)tid);
	if (uid >= 0)
		pb_put_uint32(w, PB_F_SystemdJournaldEvent_uid, (uint32_t)uid);
	if (prio >= 0)
		pb_put_uint32(w, PB_F_SystemdJournaldEvent_prio, (uint32_t)prio);
	if (tag)
		pb_put_string(w, PB_F_SystemdJournaldEvent_tag, tag);
	if (msg)
		pb_put_string(w, PB_F_SystemdJournaldEvent_message, msg);
	if (unit)
		pb_put_string(w, PB_F_SystemdJournaldEvent_systemd_unit, unit);
	pb_end_nested(w, e);
	pb_end_nested(w, p);
}

/* The first column of the first row of sql, as text (tb_malloc'd). */
static char *query1(struct tp *tp, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char err[256], *out;
	if (tp_prepare(tp, sql, &st, NULL, err, sizeof err) != SQLITE_OK || !st)
		return tb_strdup(err);
	if (sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *v = sqlite3_column_text(st, 0);
		out = tb_strdup(v ? (const char *)v : "(null)");
	} else {
		out = tb_strdup("(no row)");
	}
	sqlite3_finalize(st);
	return out;
}

TEST(tp_journald_import)
{
	struct pb_writer w;
	pb_writer_init_growable(&w);
	journald_packet(&w, 300, 42, 43, 6, "app", "later", 1000, "app.service");
	journald_packet(&w, 200, 42, -1, 3, NULL, "no tag, main thread", -1, NULL);
	journald_packet(&w, 250, -1, -1, -1, "kernel", NULL, 0, NULL);
	/* The counters packet: stats, not a row. */
	unsigned p = pb_begin_nested(&w, PB_F_Trace_packet);
	pb_put_uint64(&w, PB_F_TracePacket_timestamp, 400);
	unsigned e = pb_begin_nested(&w, PB_F_TracePacket_journald_event);
	pb_put_uint64(&w, PB_F_SystemdJournaldEvent_num_total, 3);
	pb_put_uint64(&w, PB_F_SystemdJournaldEvent_num_failed, 1);
	pb_end_nested(&w, e);
	pb_end_nested(&w, p);
	size_t n;
	uint8_t *buf = pb_writer_take(&w, &n);
	struct tp *tp = tp_new(NULL);
	CHECK_EQ(tp_parse(tp, buf, n), 0);
	tp_end_of_file(tp);
	tb_free(buf);

	static const struct {
		const char *sql, *want;
	} cases[] = {
	    {"select count(*) from logs", "3"},
	    {"select count(*) from android_logs", "0"},
	    /* No message: NULL, as Perfetto's empty StringView interns. */
	    {"select group_concat(ts || ':' || prio || ':' || coalesce(tag, 'NULL') || ':' ||"
	     " coalesce(msg, 'NULL'), '|') from (select * from logs order by ts)",
	     "200:3:NULL:no tag, main thread|250:0:kernel:NULL|300:6:app:later"},
	    {"select group_concat(distinct log_source) from logs", "systemd_journald"},
	    /* pid 42 tid 43; tid defaults to pid; no pid: no thread. */
	    {"select group_concat(coalesce(t.tid, 'NULL') || '/' || coalesce(p.pid, 'NULL'), '|') "
	     "from"
	     " (select * from logs order by ts) l left join thread t using (utid)"
	     " left join process p using (upid)",
	     "42/42|NULL/NULL|43/42"},
	    {"select extract_arg(arg_set_id, 'uid') || ',' || extract_arg(arg_set_id, "
	     "'systemd_unit')"
	     " from logs where ts = 300",
	     "1000,app.service"},
	    {"select coalesce(arg_set_id, 'NULL') from logs where ts = 200", "NULL"},
	    {"select extract_arg(arg_set_id, 'uid') from logs where ts = 250", "0"},
	    {"select value from stats where name = 'systemd_journal_num_total'", "3"},
	    {"select value from stats where name = 'systemd_journal_num_failed'", "1"},
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(cases); i++) {
		char *got = query1(tp, cases[i].sql);
		bool ok = strcmp(got, cases[i].want) == 0;
		if (!ok)
			test_report(__FILE__, __LINE__, "%s: got \"%s\", want \"%s\"", cases[i].sql,
			            got, cases[i].want);
		tb_free(got);
		if (!ok)
			break;
	}
	tp_free(tp);
}
