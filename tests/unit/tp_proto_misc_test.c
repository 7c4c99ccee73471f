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
#include "../../components/trace_processor/sql/sql.h"
#include "pb.h"
#include "pb_fields.h"
#include "../../components/trace_processor/importers/proto/proto_int.h"
#include "test.h"

/* A trace under construction: one TracePacket open at a time. */
struct mt {
	struct pb_writer w;
	unsigned pkt;
	char out[4096];
};

static void mt_begin(struct mt *t, uint64_t ts)
{
	t->pkt = pb_begin_nested(&t->w, PB_F_Trace_packet);
	pb_put_uint32(&t->w, PB_F_TracePacket_trusted_packet_sequence_id, 1);
	if (ts)
		pb_put_uint64(&t->w, PB_F_TracePacket_timestamp, ts);
}

/* Close message m and the packet around it. */
static void mt_end(struct mt *t, unsigned m)
{
	pb_end_nested(&t->w, m);
	pb_end_nested(&t->w, t->pkt);
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
			                        i     ? "|"
			                        : len ? ";"
			                              : "",
			                        s ? (const char *)s : "NULL");
		}
	}
	sqlite3_finalize(st);
	return t->out;
}

/* ---- CpuInfo ---------------------------------------------------------------- */

static void cpu_msg(struct mt *t, const char *proc, uint32_t max_freq, int64_t capacity,
                    uint64_t features, uint32_t arm_part)
{
	unsigned c = pb_begin_nested(&t->w, PB_F_CpuInfo_cpus);
	if (proc)
		pb_put_string(&t->w, PB_F_CpuInfo_Cpu_processor, proc);
	if (max_freq) {
		pb_put_uint32(&t->w, PB_F_CpuInfo_Cpu_frequencies, max_freq / 2);
		pb_put_uint32(&t->w, PB_F_CpuInfo_Cpu_frequencies, max_freq);
	}
	if (capacity >= 0)
		pb_put_uint32(&t->w, PB_F_CpuInfo_Cpu_capacity, (uint32_t)capacity);
	if (arm_part) {
		unsigned a = pb_begin_nested(&t->w, PB_F_CpuInfo_Cpu_arm_identifier);
		pb_put_uint32(&t->w, PB_F_CpuInfo_ArmCpuIdentifier_implementer, 65);
		pb_put_uint32(&t->w, PB_F_CpuInfo_ArmCpuIdentifier_part, arm_part);
		pb_end_nested(&t->w, a);
	}
	if (features)
		pb_put_uint64(&t->w, PB_F_CpuInfo_Cpu_features, features);
	pb_end_nested(&t->w, c);
}

TEST(tp_proto_cpu_info)
{
	struct mt t;
	pb_writer_init_growable(&t.w);
	/* Clusters by maximum frequency when a capacity is missing. */
	mt_begin(&t, 0);
	unsigned ci = pb_begin_nested(&t.w, PB_F_TracePacket_cpu_info);
	cpu_msg(&t, "big", 2000, -1, 0, 0);
	cpu_msg(&t, "little", 1000, 512, 1, 0);
	cpu_msg(&t, "", 2000, 1024, (1ull << 40) | 2, 3336);
	mt_end(&t, ci);
	/* An empty CpuInfo is an error stat. */
	mt_begin(&t, 0);
	pb_put_bytes(&t.w, PB_F_TracePacket_cpu_info, "", 0);
	pb_end_nested(&t.w, t.pkt);
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	CHECK_STR_EQ(
	    mt_rows(&t, tp,
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
	CHECK_STR_EQ(
	    mt_rows(&t, tp,
	            "select name, value from stats where name like 'cpu_info%' order by name"),
	    "cpu_info_empty|1;cpu_info_unknown_cpu_features|1");
	tp_free(tp);
}

/* ---- SysStats cpuidle_state and disk_stat ------------------------------------- */

static void disk(struct mt *t, const char *dev, uint64_t sectors, uint64_t ms, uint64_t flushes)
{
	unsigned d = pb_begin_nested(&t->w, PB_F_SysStats_disk_stat);
	pb_put_string(&t->w, PB_F_SysStats_DiskStat_device_name, dev);
	pb_put_uint64(&t->w, PB_F_SysStats_DiskStat_read_sectors, sectors); /* read */
	pb_put_uint64(&t->w, PB_F_SysStats_DiskStat_read_time_ms, ms);
	pb_put_uint64(&t->w, PB_F_SysStats_DiskStat_write_sectors, sectors * 2); /* write */
	pb_put_uint64(&t->w, PB_F_SysStats_DiskStat_write_time_ms, ms);
	pb_put_uint64(&t->w, PB_F_SysStats_DiskStat_flush_count, flushes);
	pb_end_nested(&t->w, d);
}

TEST(tp_proto_sys_stats_cpuidle_disk)
{
	struct mt t;
	pb_writer_init_growable(&t.w);
	for (uint64_t i = 0; i < 2; i++) {
		mt_begin(&t, 1000 + i * 1000);
		unsigned s = pb_begin_nested(&t.w, PB_F_TracePacket_sys_stats);
		disk(&t, "sda", 2048 + i * 4096, 100 + i * 500, 3 + i * 4);
		unsigned c = pb_begin_nested(&t.w, PB_F_SysStats_cpuidle_state);
		pb_put_uint32(&t.w, PB_F_SysStats_CpuIdleState_cpu_id, 3);
		unsigned e = pb_begin_nested(&t.w, PB_F_SysStats_CpuIdleState_cpuidle_state_entry);
		pb_put_string(&t.w, PB_F_SysStats_CpuIdleStateEntry_state, "C1");
		pb_put_uint64(&t.w, PB_F_SysStats_CpuIdleStateEntry_duration_us, 40 + i);
		pb_end_nested(&t.w, e);
		pb_end_nested(&t.w, c);
		mt_end(&t, s);
	}
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	CHECK_STR_EQ(
	    mt_rows(&t, tp,
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

/* ---- triggers, Chrome metadata, display state, session events (misc_packets.c) */

static void trigger(struct mt *t, uint64_t ts, uint32_t field, const char *name, int uid)
{
	mt_begin(t, ts);
	unsigned m = pb_begin_nested(&t->w, field);
	pb_put_string(&t->w, PB_F_Trigger_trigger_name, name);
	pb_put_string(&t->w, PB_F_Trigger_producer_name, "producer");
	pb_put_int32(&t->w, PB_F_Trigger_trusted_producer_uid, uid);
	mt_end(t, m);
}

TEST(tp_proto_triggers)
{
	struct mt t;
	pb_writer_init_growable(&t.w);
	/* In timestamp order: trigger "b" (the trace's, until), clone "c"
	 * (wins), trigger "a", clone "d" (too late). */
	trigger(&t, 300, PB_F_TracePacket_trigger, "a", 1);
	trigger(&t, 100, PB_F_TracePacket_trigger, "b", -2);
	trigger(&t, 200, PB_F_TracePacket_clone_snapshot_trigger, "c", 3);
	trigger(&t, 400, PB_F_TracePacket_clone_snapshot_trigger, "d", 4);
	mt_begin(&t, 500);
	unsigned m = pb_begin_nested(&t.w, PKT_CHROME_TRIGGER);
	pb_put_fixed32(&t.w, PB_F_ChromeTrigger_trigger_name_hash, 0xdeadbeef);
	mt_end(&t, m);
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	CHECK_STR_EQ(mt_rows(&t, tp,
	                     "select s.ts, s.dur, s.name, t.name, t.type, "
	                     "extract_arg(s.arg_set_id, 'producer_name'), "
	                     "extract_arg(s.arg_set_id, 'trusted_producer_uid'), "
	                     "extract_arg(s.arg_set_id, 'chrome_trigger.name_hash') "
	                     "from slice s join track t on s.track_id = t.id order by s.ts"),
	             "100|0|b|Trace Triggers|triggers|producer|-2|NULL;"
	             "200|0|c|Trace Triggers|triggers|producer|3|NULL;"
	             "300|0|a|Trace Triggers|triggers|producer|1|NULL;"
	             "400|0|d|Trace Triggers|triggers|producer|4|NULL;"
	             "500|0|chrome_trigger|Trace Triggers|triggers|NULL|NULL|3735928559");
	CHECK_STR_EQ(mt_rows(&t, tp,
	                     "select name, int_value, str_value from metadata where name in "
	                     "('trace_trigger', 'cr-triggered_rule_name_hash') order by name"),
	             "cr-triggered_rule_name_hash|3735928559|NULL;trace_trigger|NULL|c");
	CHECK_STR_EQ(
	    mt_rows(&t, tp,
	            "select value from stats where name = 'traced_clone_trigger_timestamp_ns'"),
	    "200");
	tp_free(tp);
}

TEST(tp_proto_chrome_metadata)
{
	struct mt t;
	pb_writer_init_growable(&t.w);
	for (int i = 0; i < 2; i++) {
		mt_begin(&t, 10);
		unsigned m = pb_begin_nested(&t.w, PKT_CHROME_METADATA);
		if (i == 0) {
			unsigned b = pb_begin_nested(
			    &t.w, PB_F_ChromeMetadataPacket_background_tracing_metadata);
			pb_put_fixed32(&t.w, PB_F_BackgroundTracingMetadata_scenario_name_hash, 7);
			pb_end_nested(&t.w, b);
		}
		pb_put_int32(&t.w, PB_F_ChromeMetadataPacket_chrome_version_code, 100 + i);
		for (uint32_t k = 1; k <= 3; k++) {
			unsigned h =
			    pb_begin_nested(&t.w, PB_F_ChromeMetadataPacket_field_trial_hashes);
			pb_put_uint32(&t.w, PB_F_ChromeMetadataPacket_FinchHash_name, k);
			pb_put_uint32(&t.w, PB_F_ChromeMetadataPacket_FinchHash_group, k * 10);
			pb_end_nested(&t.w, h);
		}
		pb_put_string(&t.w, PB_F_ChromeMetadataPacket_os_name, "Linux");
		mt_end(&t, m);
	}
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	/* The background tracing metadata {3: fixed32 7} is 1d 07 00 00 00. */
	CHECK_STR_EQ(mt_rows(&t, tp,
	                     "select name, key_type, int_value, replace(str_value, char(10), '/') "
	                     "from metadata where name like 'cr-%' order by name"),
	             "cr-a-field_trial_hashes|single|NULL|{ name: 1, group: 10 } "
	             "{ name: 2, group: 20 } /{ name: 3, group: 30 } ;"
	             "cr-a-os-name|single|NULL|Linux;cr-a-playstore_version_code|single|100|NULL;"
	             "cr-b-field_trial_hashes|single|NULL|{ name: 1, group: 10 } "
	             "{ name: 2, group: 20 } /{ name: 3, group: 30 } ;"
	             "cr-b-os-name|single|NULL|Linux;cr-b-playstore_version_code|single|101|NULL;"
	             "cr-background_tracing_metadata|single|NULL|HQcAAAA=;"
	             "cr-scenario_name_hash|single|7|NULL");
	tp_free(tp);
}

static void session(struct mt *t, uint64_t ts, uint32_t state, const char *name, uint64_t id)
{
	mt_begin(t, ts);
	unsigned m = pb_begin_nested(&t->w, PKT_CONCURRENT_SESSION_EVENT);
	pb_put_uint32(&t->w, PB_F_ConcurrentSessionEvent_state, state);
	if (name)
		pb_put_string(&t->w, PB_F_ConcurrentSessionEvent_session_name, name);
	pb_put_uint64(&t->w, PB_F_ConcurrentSessionEvent_session_id, id);
	pb_put_int32(&t->w, PB_F_ConcurrentSessionEvent_consumer_uid, 1000);
	pb_put_uint32(&t->w, PB_F_ConcurrentSessionEvent_num_data_sources, 2);
	mt_end(t, m);
}

TEST(tp_proto_display_state_and_sessions)
{
	struct mt t;
	pb_writer_init_growable(&t.w);
	mt_begin(&t, 5);
	unsigned m = pb_begin_nested(&t.w, PKT_INITIAL_DISPLAY_STATE);
	pb_put_int32(&t.w, PB_F_InitialDisplayState_display_state, 2);
	mt_end(&t, m);
	session(&t, 10, PB_E_ConcurrentSessionEvent_State_STATE_CONFIGURED, NULL, 4); /* unnamed */
	session(&t, 20, PB_E_ConcurrentSessionEvent_State_STATE_STARTED, "renamed",
	        4); /* the first name stays */
	session(&t, 25, PB_E_ConcurrentSessionEvent_State_STATE_CLONED_READ_ONLY, "snap", 9);
	session(&t, 30, PB_E_ConcurrentSessionEvent_State_STATE_DISABLED, NULL, 4);   /* a marker */
	session(&t, 40, PB_E_ConcurrentSessionEvent_State_STATE_UNSPECIFIED, "x", 4); /* skipped */
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	CHECK_STR_EQ(mt_rows(&t, tp,
	                     "select c.ts, c.value, t.name, t.type from counter c "
	                     "join counter_track t on c.track_id = t.id"),
	             "5|2.0|ScreenState|screen_state");
	CHECK_STR_EQ(
	    mt_rows(&t, tp,
	            "select t.name, extract_arg(t.dimension_arg_set_id, 'session_id'), s.ts, "
	            "s.dur, s.value, extract_arg(s.arg_set_id, 'consumer_uid'), "
	            "extract_arg(s.arg_set_id, 'num_data_sources') from state s "
	            "join track t on s.track_id = t.id "
	            "where t.type = 'concurrent_tracing_sessions' order by t.name, s.ts"),
	    "Session 4|4|10|10|CONFIGURED|1000|2;Session 4|4|20|10|STARTED|1000|2;"
	    "Session 4|4|30|0|DISABLED|1000|2;snap (clone)|9|25|-1|CLONED_READ_ONLY|1000|2");
	CHECK_STR_EQ(mt_rows(&t, tp,
	                     "select value from stats where name = "
	                     "'concurrent_session_event_unknown_state'"),
	             "1");
	tp_free(tp);
}

/* ---- ftrace_misc.c and gpufreq ------------------------------------------------- */

/* One ftrace event of thread pid: body field id with (varint id, value)
 * pairs and an optional string field. */
static void ft_event(struct mt *t, uint64_t ts, int pid, uint32_t id, const uint64_t *kv,
                     size_t nkv, uint32_t str_id, const char *str)
{
	mt_begin(t, 0);
	unsigned b = pb_begin_nested(&t->w, PB_F_TracePacket_ftrace_events);
	pb_put_uint32(&t->w, PB_F_FtraceEventBundle_cpu, 0);
	unsigned e = pb_begin_nested(&t->w, PB_F_FtraceEventBundle_event);
	pb_put_uint64(&t->w, PB_F_FtraceEvent_timestamp, ts);
	pb_put_uint32(&t->w, PB_F_FtraceEvent_pid, (uint32_t)pid);
	unsigned m = pb_begin_nested(&t->w, id);
	for (size_t i = 0; i + 1 < nkv; i += 2)
		pb_put_uint64(&t->w, (uint32_t)kv[i], kv[i + 1]);
	if (str)
		pb_put_string(&t->w, str_id, str);
	pb_end_nested(&t->w, m);
	pb_end_nested(&t->w, e);
	mt_end(t, b);
}

TEST(tp_proto_ftrace_misc_events)
{
	struct mt t;
	pb_writer_init_growable(&t.w);
	/* mdss tracing_mark_write begin/end on thread 50 of process 40 */
	/* FtraceEvent fields (and their messages) protos/ does not declare. */
	enum { FE_MARK_VICTIM = 334, FE_ION_STAT = 335 };
	enum { MDSS = PB_F_FtraceEvent_tracing_mark_write };
	enum { MDSS_PID = PB_F_TracingMarkWriteFtraceEvent_pid };
	enum { MDSS_BEGIN = PB_F_TracingMarkWriteFtraceEvent_trace_begin };
	enum { MDSS_NAME = PB_F_TracingMarkWriteFtraceEvent_trace_name };
	enum { G2D = PB_F_FtraceEvent_g2d_tracing_mark_write };
	enum { DPU = PB_F_FtraceEvent_dpu_tracing_mark_write };
	enum { DPU_PID = PB_F_DpuTracingMarkWriteFtraceEvent_pid };
	enum { DPU_TYPE = PB_F_DpuTracingMarkWriteFtraceEvent_type };
	enum { DPU_VALUE = PB_F_DpuTracingMarkWriteFtraceEvent_value };
	enum { DPU_NAME = PB_F_DpuTracingMarkWriteFtraceEvent_name };
	_Static_assert(PB_F_G2dTracingMarkWriteFtraceEvent_pid == DPU_PID &&
	                   PB_F_G2dTracingMarkWriteFtraceEvent_type == DPU_TYPE &&
	                   PB_F_G2dTracingMarkWriteFtraceEvent_value == DPU_VALUE &&
	                   PB_F_G2dTracingMarkWriteFtraceEvent_name == DPU_NAME,
	               "g2d and dpu marks differ");
	ft_event(&t, 100, 50, MDSS, (uint64_t[]){MDSS_PID, 40, MDSS_BEGIN, 1}, 4, MDSS_NAME,
	         "mdss");
	ft_event(&t, 150, 50, MDSS, (uint64_t[]){MDSS_PID, 40, MDSS_BEGIN, 0}, 4, MDSS_NAME,
	         "mdss");
	ft_event(&t, 160, 50, MDSS, (uint64_t[]){MDSS_PID, 40}, 2, MDSS_NAME,
	         "no begin"); /* parse failure */
	/* g2d counter of process 40 from thread 7; dpu instant: tgid ignored */
	ft_event(&t, 200, 7, G2D, (uint64_t[]){DPU_PID, 40, DPU_TYPE, 'C', DPU_VALUE, 3}, 6,
	         DPU_NAME, "g2d_frame");
	ft_event(&t, 210, 50, DPU, (uint64_t[]){DPU_PID, 40, DPU_TYPE, 'I', DPU_VALUE, 0}, 6,
	         DPU_NAME, "dpu_i");
	ft_event(&t, 220, 50, DPU, (uint64_t[]){DPU_PID, 40, DPU_TYPE, 'X'}, 4, DPU_NAME,
	         "bad"); /* failure */
	/* ion (buffer_id 1, len 2, total_allocated 3): 4096 bytes more on
	 * thread 50, 8192 in all */
	ft_event(&t, 300, 50, FE_ION_STAT, (uint64_t[]){1, 9, 2, 4096, 3, 8192}, 6, 0, NULL);
	/* the oom killer (mark_victim pid 1) picks thread 50 */
	ft_event(&t, 400, 1, FE_MARK_VICTIM, (uint64_t[]){1, 50}, 2, 0, NULL);
	/* gpufreq, twice in one SysStats */
	mt_begin(&t, 500);
	unsigned s = pb_begin_nested(&t.w, PB_F_TracePacket_sys_stats);
	pb_put_uint64(&t.w, PB_F_SysStats_gpufreq_mhz, 300);
	pb_put_uint64(&t.w, PB_F_SysStats_gpufreq_mhz, 350);
	mt_end(&t, s);
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	CHECK_STR_EQ(
	    mt_rows(&t, tp,
	            "select s.ts, s.dur, s.name, th.tid, p.pid from slice s "
	            "join thread_track tt on s.track_id = tt.id join thread th using (utid) "
	            "left join process p using (upid) order by s.ts"),
	    "100|50|mdss|50|40;210|0|dpu_i|50|40;400|0|mem.oom_kill|50|40");
	CHECK_STR_EQ(
	    mt_rows(&t, tp,
	            "select c.ts, t.name, t.type, c.value, "
	            "(select pid from process p where p.upid = t.upid), "
	            "(select tid from thread h where h.utid = t.utid) from counter c "
	            "join __intrinsic_track t on c.track_id = t.id order by c.ts, t.name"),
	    "200|g2d_frame|atrace_counter|3.0|40|NULL;300|mem.ion|ion|8192.0|NULL|NULL;"
	    "300|mem.ion_change|ion_change|4096.0|NULL|50;"
	    "500|gpufreq|gpu_frequency|300.0|NULL|NULL;500|gpufreq|gpu_frequency|350.0|NULL|NULL");
	CHECK_STR_EQ(
	    mt_rows(&t, tp, "select name, count(*) from ftrace_event group by name order by name"),
	    "dpu_tracing_mark_write|2;g2d_tracing_mark_write|1;ion_stat|1;mark_victim|1;"
	    "tracing_mark_write|3");
	CHECK_STR_EQ(
	    mt_rows(&t, tp, "select value from stats where name = 'systrace_parse_failure'"), "2");
	tp_free(tp);
}

/* ---- Indexed stats at scale ------------------------------------------------ */

/* Indexes come from the trace: a TraceStats with tens of thousands of
 * buffers must load in linear time (a sorted vector with a memmove per
 * insert took minutes here) and list its rows sorted by (name, idx). An
 * FtraceStats cpu outside [0, 4096) is counted in invalid_trace_packet, not
 * kept. */
TEST(tp_proto_istats_many_indexes)
{
	enum { NBUF = 60000 };
	struct mt t;
	pb_writer_init_growable(&t.w);
	mt_begin(&t, 100);
	unsigned s = pb_begin_nested(&t.w, PB_F_TracePacket_trace_stats);
	for (unsigned i = 0; i < NBUF; i++) {
		unsigned b = pb_begin_nested(&t.w, PB_F_TraceStats_buffer_stats);
		pb_put_uint64(&t.w, PB_F_TraceStats_BufferStats_bytes_written,
		              (uint64_t)i * 10 + 1);
		pb_end_nested(&t.w, b);
	}
	mt_end(&t, s);
	mt_begin(&t, 200);
	s = pb_begin_nested(&t.w, PB_F_TracePacket_ftrace_stats);
	pb_put_uint32(&t.w, PB_F_FtraceStats_phase, 1);
	int32_t cpus[] = {3, 4095, 4096, -1, 70000};
	for (unsigned i = 0; i < sizeof cpus / sizeof cpus[0]; i++) {
		unsigned c = pb_begin_nested(&t.w, PB_F_FtraceStats_cpu_stats);
		pb_put_uint64(&t.w, PB_F_FtraceCpuStats_cpu, (uint64_t)(int64_t)cpus[i]);
		pb_put_uint64(&t.w, PB_F_FtraceCpuStats_overrun, 7);
		pb_end_nested(&t.w, c);
	}
	mt_end(&t, s);
	struct tp *tp = mt_load(&t);
	if (!tp)
		return;
	CHECK_STR_EQ(mt_rows(&t, tp,
	                     "select count(*), min(idx), max(idx), sum(value) from stats "
	                     "where name = 'traced_buf_bytes_written'"),
	             "60000|0|59999|17999760000");
	/* Row order: by stat, then by index. */
	CHECK_STR_EQ(
	    mt_rows(&t, tp,
	            "select count(*) from (select id, idx, lag(id) over w pid, "
	            "lag(idx) over w pidx from stats where name = 'traced_buf_bytes_written' "
	            "window w as (order by id)) where id = pid + 1 and idx = pidx + 1"),
	    "59999");
	CHECK_STR_EQ(mt_rows(&t, tp,
	                     "select idx, value from stats where name = 'ftrace_cpu_overrun_begin' "
	                     "order by id"),
	             "3|7;4095|7");
	CHECK_STR_EQ(mt_rows(&t, tp, "select value from stats where name = 'invalid_trace_packet'"),
	             "3");
	tp_free(tp);
}
