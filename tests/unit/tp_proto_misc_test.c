/*
 * The protobuf importer's less common packets (CpuInfo, SysStats cpuidle and
 * disk stats, tracing service events, triggers, Chrome metadata, the initial
 * display state, miscellaneous typed ftrace events): traces built with the
 * pb writer, loaded, and answered through the SQL views exactly as a user's
 * query would see them.
 */
#include <sqlite3.h>
#include <stdio.h>

#include "../../components/trace_processor/tp_int.h"
#include "pb.h"
#include "test.h"

/* A trace under construction: one TracePacket open at a time. */
struct mt {
	struct pb_writer w;
	unsigned pkt;
	char out[4096];
};

static void mt_begin(struct mt *t, uint64_t ts)
{
	t->pkt = pb_begin_nested(&t->w, 1);
	pb_put_uint32(&t->w, 10, 1);
	if (ts)
		pb_put_uint64(&t->w, 8, ts);
}

/* Load the trace built so far; NULL (reported) if it does not load. */
static struct tp *mt_load(struct mt *t)
{
	size_t n;
	uint8_t *buf = pb_writer_take(&t->w, &n);
	struct tp *tp = tp_new(NULL);
	int rc = tp_parse(tp, buf, n);
	if (rc == 0)
		rc = tp_end_of_file(tp);
	if (rc == 0)
		rc = tp_sql_open(tp);
	tb_free(buf);
	if (rc != 0) {
		test_report(__FILE__, __LINE__, "trace did not load: %d", rc);
		tp_free(tp);
		return NULL;
	}
	return tp;
}

/* The rows of sql, "a|b" joined by ';' ("NULL" for NULL) into t->out. */
static const char *mt_rows(struct mt *t, struct tp *tp, const char *sql)
{
	sqlite3_stmt *st = NULL;
	size_t len = 0, cap = sizeof t->out;
	t->out[0] = 0;
	if (sqlite3_prepare_v2(tp->db, sql, -1, &st, NULL) != SQLITE_OK) {
		snprintf(t->out, cap, "ERROR: %s", sqlite3_errmsg(tp->db));
		return t->out;
	}
	while (sqlite3_step(st) == SQLITE_ROW && len < cap) {
		for (int i = 0; i < sqlite3_column_count(st) && len < cap; i++) {
			const unsigned char *s = sqlite3_column_text(st, i);
			len += (size_t)snprintf(t->out + len, cap - len, "%s%s",
						i ? "|" : len ? ";" : "", s ? (const char *)s : "NULL");
		}
	}
	sqlite3_finalize(st);
	return t->out;
}

/* ---- CpuInfo ---------------------------------------------------------------- */

static void cpu_msg(struct mt *t, const char *proc, uint32_t max_freq, int64_t capacity,
		    uint64_t features, uint32_t arm_part)
{
	unsigned c = pb_begin_nested(&t->w, 1);
	if (proc)
		pb_put_string(&t->w, 1, proc);
	if (max_freq) {
		pb_put_uint32(&t->w, 2, max_freq / 2);
		pb_put_uint32(&t->w, 2, max_freq);
	}
	if (capacity >= 0)
		pb_put_uint32(&t->w, 3, (uint32_t)capacity);
	if (arm_part) {
		unsigned a = pb_begin_nested(&t->w, 4);
		pb_put_uint32(&t->w, 1, 65);
		pb_put_uint32(&t->w, 4, arm_part);
		pb_end_nested(&t->w, a);
	}
	if (features)
		pb_put_uint64(&t->w, 5, features);
	pb_end_nested(&t->w, c);
}

TEST(tp_proto_cpu_info)
{
	struct mt t;
	pb_writer_init_growable(&t.w);
	/* Clusters by maximum frequency when a capacity is missing. */
	mt_begin(&t, 0);
	unsigned ci = pb_begin_nested(&t.w, 67);
	cpu_msg(&t, "big", 2000, -1, 0, 0);
	cpu_msg(&t, "little", 1000, 512, 1, 0);
	cpu_msg(&t, "", 2000, 1024, (1ull << 40) | 2, 3336);
	pb_end_nested(&t.w, ci);
	pb_end_nested(&t.w, t.pkt);
	/* An empty CpuInfo is an error stat. */
	mt_begin(&t, 0);
	pb_put_bytes(&t.w, 67, "", 0);
	pb_end_nested(&t.w, t.pkt);
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	CHECK_STR_EQ(mt_rows(&t, tp,
			     "select ucpu, cpu, cluster_id, capacity, processor, machine_id from cpu "
			     "order by cpu"),
		     "0|0|1|NULL|big|0;1|1|0|512|little|0;2|2|1|1024|NULL|0");
	CHECK_STR_EQ(mt_rows(&t, tp,
			     "select cpu, extract_arg(arg_set_id, 'cpu_features.mte'), "
			     "extract_arg(arg_set_id, 'cpu_features.mte3'), "
			     "extract_arg(arg_set_id, 'cpu_features.raw_bitmap'), "
			     "extract_arg(arg_set_id, 'arm_cpu_implementer'), "
			     "extract_arg(arg_set_id, 'arm_cpu_part'), "
			     "extract_arg(arg_set_id, 'arm_cpu_variant') from cpu order by cpu"),
		     "0|NULL|NULL|NULL|NULL|NULL|NULL;1|1|NULL|1|NULL|NULL|NULL;"
		     "2|NULL|1|1099511627778|65|3336|0");
	CHECK_STR_EQ(mt_rows(&t, tp,
			     "select name, value from stats where name like 'cpu_info%' order by name"),
		     "cpu_info_empty|1;cpu_info_unknown_cpu_features|1");
	tp_free(tp);
}

/* ---- SysStats cpuidle_state and disk_stat ------------------------------------- */

static void disk(struct mt *t, const char *dev, uint64_t sectors, uint64_t ms, uint64_t flushes)
{
	unsigned d = pb_begin_nested(&t->w, 13);
	pb_put_string(&t->w, 1, dev);
	pb_put_uint64(&t->w, 2, sectors);     /* read */
	pb_put_uint64(&t->w, 3, ms);
	pb_put_uint64(&t->w, 4, sectors * 2); /* write */
	pb_put_uint64(&t->w, 5, ms);
	pb_put_uint64(&t->w, 8, flushes);
	pb_end_nested(&t->w, d);
}

TEST(tp_proto_sys_stats_cpuidle_disk)
{
	struct mt t;
	pb_writer_init_growable(&t.w);
	for (uint64_t i = 0; i < 2; i++) {
		mt_begin(&t, 1000 + i * 1000);
		unsigned s = pb_begin_nested(&t.w, 7);
		disk(&t, "sda", 2048 + i * 4096, 100 + i * 500, 3 + i * 4);
		unsigned c = pb_begin_nested(&t.w, 16);
		pb_put_uint32(&t.w, 1, 3);
		unsigned e = pb_begin_nested(&t.w, 2);
		pb_put_string(&t.w, 1, "C1");
		pb_put_uint64(&t.w, 2, 40 + i);
		pb_end_nested(&t.w, e);
		pb_end_nested(&t.w, c);
		pb_end_nested(&t.w, s);
		pb_end_nested(&t.w, t.pkt);
	}
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	CHECK_STR_EQ(mt_rows(&t, tp,
			     "select c.ts, t.name, t.type, t.unit, c.value, "
			     "extract_arg(t.dimension_arg_set_id, 'cpu'), "
			     "extract_arg(t.dimension_arg_set_id, 'state') from counter c "
			     "join counter_track t on c.track_id = t.id where t.type = 'cpu_idle_state' "
			     "order by c.ts"),
		     "1000|cpuidle3.C1|cpu_idle_state|us|40.0|3|C1;"
		     "2000|cpuidle3.C1|cpu_idle_state|us|41.0|3|C1");
	/* The first sample of a disk only sets the baseline: 4096 sectors =
	 * 2 MB read in 500 ms, 4 MB written, 4 flushes. */
	CHECK_STR_EQ(mt_rows(&t, tp,
			     "select c.ts, t.name, t.unit, c.value, "
			     "extract_arg(t.dimension_arg_set_id, 'device_name'), "
			     "extract_arg(t.dimension_arg_set_id, 'counter_name') from counter c "
			     "join counter_track t on c.track_id = t.id where t.type = 'diskstat' "
			     "order by t.name"),
		     "2000|diskstat.[sda].discard_amount|MB|0.0|sda|discard_amount;"
		     "2000|diskstat.[sda].discard_throughput|MB/s|0.0|sda|discard_throughput;"
		     "2000|diskstat.[sda].flush_amount|count|4.0|sda|flush_amount;"
		     "2000|diskstat.[sda].flush_time|ms|0.0|sda|flush_time;"
		     "2000|diskstat.[sda].read_amount|MB|2.0|sda|read_amount;"
		     "2000|diskstat.[sda].read_throughput|MB/s|4.0|sda|read_throughput;"
		     "2000|diskstat.[sda].write_amount|MB|4.0|sda|write_amount;"
		     "2000|diskstat.[sda].write_throughput|MB/s|8.0|sda|write_throughput");
	tp_free(tp);
}
