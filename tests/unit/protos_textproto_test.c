/*
 * Tests for components/protos/textproto.c, the text-format parser behind
 * `perfetto --txt`. Configs are parsed, then decoded with protobuf-c (through
 * a tb_malloc allocator, so the leak check covers it) and compared field by
 * field; the TraceConfigs real perfetto was given for the golden transcripts
 * and traces are cross-checked against stock protoc's encoding
 * (the .bin files in tests/data/protos/textproto, see regen.sh). Our nested sizes
 * are 4-byte redundant varints, so both sides are compared after protobuf-c
 * re-encodes them canonically.
 */
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>

#include "base.h"
#include "pb.h"
#include "protos.h"

static void *tb_pb_alloc(void *data, size_t size)
{
	(void)data;
	return tb_malloc(size ? size : 1);
}

static void tb_pb_free(void *data, void *p)
{
	(void)data;
	tb_free(p);
}

static ProtobufCAllocator pb_alloc = {tb_pb_alloc, tb_pb_free, NULL};

#define TC_DESC (&perfetto__protos__trace_config__descriptor)

/* Parse text as a TraceConfig and decode the result; NULL on any failure
 * (the parse error, if any, is in *err). Free with tc_free. */
static Perfetto__Protos__TraceConfig *tc_parse(const char *text, bool lossy, struct tb_err *err)
{
	Perfetto__Protos__TraceConfig *tc;
	uint8_t *bin = NULL;
	size_t len = 0;
	tb_err_clear(err);
	if (protos_text_to_binary(TC_DESC, NULL, text, strlen(text), lossy, &bin, &len, err) != 0)
		return NULL;
	tc = perfetto__protos__trace_config__unpack(&pb_alloc, len, bin);
	tb_free(bin);
	return tc;
}

static void tc_free(Perfetto__Protos__TraceConfig *tc)
{
	if (tc)
		protobuf_c_message_free_unpacked(&tc->base, &pb_alloc);
}

/* The error message for text (as a TraceConfig), or "" if it parsed. */
static const char *tc_error(const char *text, bool lossy)
{
	static struct tb_err err;
	uint8_t *bin = NULL;
	size_t len = 0;
	int ret;
	tb_err_clear(&err);
	ret = protos_text_to_binary(TC_DESC, NULL, text, strlen(text), lossy, &bin, &len, &err);
	tb_free(bin);
	if (ret == 0)
		return "";
	if (ret != -EINVAL || bin)
		return "(bad return)";
	return err.msg;
}

TEST(protos_textproto_canonical)
{
	/* The example of compat §4.6, on one line. */
	const char *text =
	    "duration_ms: 10000  buffers { size_kb: 65536 fill_policy: RING_BUFFER } "
	    "data_sources { config { name: \"linux.ftrace\" target_buffer: 0 "
	    "ftrace_config { ftrace_events: \"sched_switch\" } } }";
	struct tb_err err;
	Perfetto__Protos__TraceConfig *tc = tc_parse(text, false, &err);
	CHECK(tc);
	CHECK(tc->has_duration_ms);
	CHECK_EQ(tc->duration_ms, 10000);
	CHECK_EQ(tc->n_buffers, 1);
	CHECK_EQ(tc->buffers[0]->size_kb, 65536);
	CHECK_EQ(tc->buffers[0]->fill_policy,
	         PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__RING_BUFFER);
	CHECK_EQ(tc->n_data_sources, 1);
	CHECK(tc->data_sources[0]->config);
	CHECK_STR_EQ(tc->data_sources[0]->config->name, "linux.ftrace");
	CHECK(tc->data_sources[0]->config->has_target_buffer);
	CHECK_EQ(tc->data_sources[0]->config->target_buffer, 0);
	CHECK(tc->data_sources[0]->config->ftrace_config);
	CHECK_EQ(tc->data_sources[0]->config->ftrace_config->n_ftrace_events, 1);
	CHECK_STR_EQ(tc->data_sources[0]->config->ftrace_config->ftrace_events[0], "sched_switch");
	tc_free(tc);
}

/* Parse tests/data/<txt> and compare with protoc's encoding in <bin>, both
 * re-encoded canonically by protobuf-c. */
static void check_against_protoc(const char *txt, const char *bin)
{
	Perfetto__Protos__TraceConfig *ours = NULL, *ref = NULL;
	char *text = NULL, *refbin = NULL;
	uint8_t *enc = NULL, *a = NULL, *b = NULL;
	size_t text_len, ref_len, enc_len, a_len, b_len;
	struct tb_err err;

	tb_err_clear(&err);
	if (tb_read_file(test_data_path(txt), &text, &text_len, 1 << 20, &err) != 0 ||
	    tb_read_file(test_data_path(bin), &refbin, &ref_len, 1 << 20, &err) != 0) {
		test_report(__FILE__, __LINE__, "%s", err.msg);
		goto out;
	}
	if (protos_text_to_binary(TC_DESC, txt, text, text_len, false, &enc, &enc_len, &err) != 0) {
		test_report(__FILE__, __LINE__, "%s: %s", txt, err.msg);
		goto out;
	}
	ours = perfetto__protos__trace_config__unpack(&pb_alloc, enc_len, enc);
	ref = perfetto__protos__trace_config__unpack(&pb_alloc, ref_len, (uint8_t *)refbin);
	if (!ours || !ref) {
		test_report(__FILE__, __LINE__, "%s: cannot unpack (ours %p, protoc %p)", txt,
		            (void *)ours, (void *)ref);
		goto out;
	}
	a_len = protobuf_c_message_get_packed_size(&ours->base);
	b_len = protobuf_c_message_get_packed_size(&ref->base);
	a = tb_malloc(a_len + 1);
	b = tb_malloc(b_len + 1);
	protobuf_c_message_pack(&ours->base, a);
	protobuf_c_message_pack(&ref->base, b);
	if (a_len != b_len || memcmp(a, b, a_len) != 0) {
		test_report(__FILE__, __LINE__, "%s: differs from protoc's encoding", txt);
		test_hexdump("ours", a, a_len);
		test_hexdump("protoc", b, b_len);
	}
	/* Without nested messages the bytes must match as they are. */
	if (enc_len == ref_len && memcmp(enc, refbin, ref_len) == 0)
		fprintf(stderr, "  %s: byte-identical to protoc\n", txt);
out:
	tc_free(ours);
	tc_free(ref);
	tb_free(a);
	tb_free(b);
	tb_free(enc);
	tb_free(text);
	tb_free(refbin);
}

TEST(protos_textproto_golden_configs)
{
	static const char *const names[] = {
	    "ipc_readbuffers",        "ipc_readbuffers_large", "ipc_wif",
	    "traces_ftrace_generic",  "traces_sched",          "traces_sched_compact",
	    "traces_sched_nocompact", "edge_syntax",
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(names); i++) {
		char txt[256], bin[256];
		snprintf(txt, sizeof txt, "protos/textproto/%s.pbtxt", names[i]);
		snprintf(bin, sizeof bin, "protos/textproto/%s.bin", names[i]);
		check_against_protoc(txt, bin);
		if (test_failed)
			return;
	}
	check_against_protoc("protos/trace_config.txt", "protos/trace_config.bin");
}

TEST(protos_textproto_golden_values)
{
	/* traces/sched.config.pbtxt, checked field by field. */
	char *text = NULL;
	size_t len;
	struct tb_err err;
	Perfetto__Protos__TraceConfig *tc;
	Perfetto__Protos__DataSourceConfig *c;

	tb_err_clear(&err);
	CHECK_EQ(tb_read_file(test_data_path("protos/textproto/traces_sched.pbtxt"), &text, &len,
	                      1 << 20, &err),
	         0);
	tc = tc_parse(text, false, &err);
	tb_free(text);
	CHECK(tc);
	CHECK_EQ(tc->n_buffers, 1);
	CHECK_EQ(tc->buffers[0]->size_kb, 32768);
	CHECK_EQ(tc->n_data_sources, 3);
	c = tc->data_sources[0]->config;
	CHECK_STR_EQ(c->name, "linux.ftrace");
	CHECK_EQ(c->ftrace_config->n_ftrace_events, 4);
	CHECK_STR_EQ(c->ftrace_config->ftrace_events[3], "task/task_rename");
	c = tc->data_sources[1]->config;
	CHECK_STR_EQ(c->name, "linux.process_stats");
	CHECK(c->process_stats_config->has_scan_all_processes_on_start);
	CHECK(c->process_stats_config->scan_all_processes_on_start);
	c = tc->data_sources[2]->config;
	CHECK_EQ(c->sys_stats_config->meminfo_period_ms, 500);
	CHECK_EQ(c->sys_stats_config->n_meminfo_counters, 4);
	CHECK_EQ(c->sys_stats_config->meminfo_counters[3],
	         PERFETTO__PROTOS__MEMINFO_COUNTERS__MEMINFO_CACHED);
	CHECK_EQ(c->sys_stats_config->n_stat_counters, 2);
	CHECK_EQ(c->sys_stats_config->stat_counters[1],
	         PERFETTO__PROTOS__SYS_STATS_CONFIG__STAT_COUNTERS__STAT_FORK_COUNT);
	CHECK_EQ(tc->duration_ms, 3000);
	tc_free(tc);
}

TEST(protos_textproto_nested_ftrace)
{
	const char *text = "data_sources {\n"
	                   "  config {\n"
	                   "    name: \"linux.ftrace\"\n"
	                   "    ftrace_config {\n"
	                   "      ftrace_events: \"sched/sched_switch\"\n"
	                   "      ftrace_events: \"sched/sched_waking\"\n"
	                   "      atrace_categories: \"gfx\"\n"
	                   "      compact_sched { enabled: true }\n"
	                   "      buffer_size_kb: 2048\n"
	                   "    }\n"
	                   "  }\n"
	                   "  producer_name_filter: \"perfetto.traced_probes\"\n"
	                   "}\n"
	                   "data_sources: { config: { name: \"linux.process_stats\" } }\n";
	struct tb_err err;
	Perfetto__Protos__TraceConfig *tc = tc_parse(text, false, &err);
	Perfetto__Protos__FtraceConfig *fc;
	CHECK(tc);
	CHECK_EQ(tc->n_data_sources, 2);
	fc = tc->data_sources[0]->config->ftrace_config;
	CHECK(fc);
	CHECK_EQ(fc->n_ftrace_events, 2);
	CHECK_STR_EQ(fc->ftrace_events[0], "sched/sched_switch");
	CHECK_STR_EQ(fc->ftrace_events[1], "sched/sched_waking");
	CHECK_EQ(fc->n_atrace_categories, 1);
	CHECK(fc->compact_sched && fc->compact_sched->enabled);
	CHECK_EQ(fc->buffer_size_kb, 2048);
	CHECK_STR_EQ(tc->data_sources[0]->producer_name_filter[0], "perfetto.traced_probes");
	CHECK_STR_EQ(tc->data_sources[1]->config->name, "linux.process_stats");
	tc_free(tc);
}

TEST(protos_textproto_repeated_order)
{
	/* Repeated messages, strings and enums keep the text's order; the
	 * bytes follow the text too (duration_ms 3 before buffers 1). */
	const char *text = "duration_ms: 5 buffers { size_kb: 1 } activate_triggers: \"b\"\n"
	                   "buffers { size_kb: 2 fill_policy: DISCARD } activate_triggers: \"a\"\n"
	                   "buffers { size_kb: 3 }";
	struct tb_err err;
	uint8_t *bin = NULL;
	size_t len = 0;
	struct pb_reader r;
	struct pb_field f;
	Perfetto__Protos__TraceConfig *tc = tc_parse(text, false, &err);
	CHECK(tc);
	CHECK_EQ(tc->n_buffers, 3);
	CHECK_EQ(tc->buffers[0]->size_kb, 1);
	CHECK_EQ(tc->buffers[1]->size_kb, 2);
	CHECK_EQ(tc->buffers[1]->fill_policy,
	         PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD);
	CHECK_EQ(tc->buffers[2]->size_kb, 3);
	CHECK_EQ(tc->n_activate_triggers, 2);
	CHECK_STR_EQ(tc->activate_triggers[0], "b");
	CHECK_STR_EQ(tc->activate_triggers[1], "a");
	tc_free(tc);

	CHECK_EQ(protos_text_to_binary(TC_DESC, NULL, text, strlen(text), false, &bin, &len, &err),
	         0);
	pb_reader_init(&r, bin, len);
	CHECK(pb_next(&r, &f));
	CHECK_EQ(f.id, 3);
	CHECK_EQ(f.val, 5);
	CHECK(pb_next(&r, &f));
	CHECK_EQ(f.id, 1);
	/* The nested size is a 4-byte redundant varint, as protozero writes. */
	CHECK_EQ(bin[3], 0x80 | 2);
	CHECK_EQ(bin[6], 0x00);
	tb_free(bin);
}

TEST(protos_textproto_escapes)
{
	const char *text =
	    "unique_session_name: \"a\\n\\t\\\\\\\"\\'\\?\\a\\b\\f\\r\\v\\101\\377\\x41\\x9z\"\n"
	    "activate_triggers: 'sq\"x' \"+dq\" # comment between\n"
	    "  'tail'\n"
	    "activate_triggers: \"\\000\"\n"
	    "activate_triggers: \"multi\nline\"\n";
	static const char want[] = "a\n\t\\\"'?\a\b\f\r\vA\377A\x09z";
	struct tb_err err;
	Perfetto__Protos__TraceConfig *tc = tc_parse(text, false, &err);
	if (!tc)
		test_report(__FILE__, __LINE__, "%s", err.msg);
	CHECK(tc);
	CHECK_STR_EQ(tc->unique_session_name, want);
	CHECK_EQ(tc->n_activate_triggers, 3);
	CHECK_STR_EQ(tc->activate_triggers[0], "sq\"x+dqtail");
	CHECK_EQ(tc->activate_triggers[1][0], '\0');
	CHECK_STR_EQ(tc->activate_triggers[2], "multi\nline");
	tc_free(tc);
}

TEST(protos_textproto_comments_and_separators)
{
	const char *text = "# leading comment\n"
	                   "duration_ms: 1; # trailing\n"
	                   "buffers { size_kb: 2, fill_policy: DISCARD; }, \n"
	                   "flush_period_ms 7\n" /* no colon, as Perfetto allows */
	                   "write_into_file: true;\n"
	                   "unique_session_name:\"x\"#no space\n";
	struct tb_err err;
	Perfetto__Protos__TraceConfig *tc = tc_parse(text, false, &err);
	if (!tc)
		test_report(__FILE__, __LINE__, "%s", err.msg);
	CHECK(tc);
	CHECK_EQ(tc->duration_ms, 1);
	CHECK_EQ(tc->buffers[0]->size_kb, 2);
	CHECK_EQ(tc->flush_period_ms, 7);
	CHECK(tc->write_into_file);
	CHECK_STR_EQ(tc->unique_session_name, "x");
	tc_free(tc);
}

TEST(protos_textproto_numbers)
{
	const char *text = "duration_ms: 0xFFFFFFFF\n"
	                   "max_file_size_bytes: 18446744073709551615\n"
	                   "trace_uuid_msb: -9223372036854775808\n"
	                   "trace_uuid_lsb: -0x10\n"
	                   "trigger_config { triggers { name: \"t\" skip_probability: 2.5e-1 }\n"
	                   "                 triggers { skip_probability: 1 }\n"
	                   "                 triggers { skip_probability: .5 } }\n";
	struct tb_err err;
	Perfetto__Protos__TraceConfig *tc = tc_parse(text, false, &err);
	if (!tc)
		test_report(__FILE__, __LINE__, "%s", err.msg);
	CHECK(tc);
	CHECK_UEQ(tc->duration_ms, 0xFFFFFFFFu);
	CHECK_UEQ(tc->max_file_size_bytes, UINT64_MAX);
	CHECK_EQ(tc->trace_uuid_msb, INT64_MIN);
	CHECK_EQ(tc->trace_uuid_lsb, -16);
	CHECK_EQ(tc->trigger_config->n_triggers, 3);
	CHECK_DBL_EQ(tc->trigger_config->triggers[0]->skip_probability, 0.25);
	CHECK_DBL_EQ(tc->trigger_config->triggers[1]->skip_probability, 1.0);
	CHECK_DBL_EQ(tc->trigger_config->triggers[2]->skip_probability, 0.5);
	tc_free(tc);
}

TEST(protos_textproto_int32_and_fixed64)
{
	/* A TracePacket root: int32 (sign-extended), fixed64, repeated double. */
	const char *text = "trusted_pid: -2147483648 timestamp: 7\n"
	                   "track_event { flow_ids: 0xffffffffffffffff flow_ids: 1\n"
	                   "  extra_double_counter_values: -1.5 }";
	const ProtobufCMessageDescriptor *d = &perfetto__protos__trace_packet__descriptor;
	struct tb_err err;
	uint8_t *bin = NULL;
	size_t len = 0;
	Perfetto__Protos__TracePacket *p;
	tb_err_clear(&err);
	CHECK_EQ(protos_text_to_binary(d, NULL, text, strlen(text), false, &bin, &len, &err), 0);
	p = perfetto__protos__trace_packet__unpack(&pb_alloc, len, bin);
	tb_free(bin);
	CHECK(p);
	CHECK_EQ(p->trusted_pid, INT32_MIN);
	CHECK_EQ(p->timestamp, 7);
	CHECK(p->track_event);
	CHECK_EQ(p->track_event->n_flow_ids, 2);
	CHECK_UEQ(p->track_event->flow_ids[0], UINT64_MAX);
	CHECK_DBL_EQ(p->track_event->extra_double_counter_values[0], -1.5);
	protobuf_c_message_free_unpacked(&p->base, &pb_alloc);

	tb_err_clear(&err);
	CHECK_EQ(
	    protos_text_to_binary(d, "pkt", "trusted_pid: 2147483648", 23, false, &bin, &len, &err),
	    -EINVAL);
	CHECK_STR_EQ(err.msg, "pkt:1:14 error: Value '2147483648' out of range for int32 field "
	                      "trusted_pid in proto TracePacket");
}

/* A hand-made descriptor for the types our protos don't use (sint, float,
 * sfixed, fixed32, bytes): fields must be sorted by number, names sorted. */
static const ProtobufCFieldDescriptor odd_fields[] = {
    {.name = "s32", .id = 1, .label = PROTOBUF_C_LABEL_OPTIONAL, .type = PROTOBUF_C_TYPE_SINT32},
    {.name = "s64", .id = 2, .label = PROTOBUF_C_LABEL_OPTIONAL, .type = PROTOBUF_C_TYPE_SINT64},
    {.name = "f", .id = 3, .label = PROTOBUF_C_LABEL_OPTIONAL, .type = PROTOBUF_C_TYPE_FLOAT},
    {.name = "sf32", .id = 4, .label = PROTOBUF_C_LABEL_OPTIONAL, .type = PROTOBUF_C_TYPE_SFIXED32},
    {.name = "fx32", .id = 5, .label = PROTOBUF_C_LABEL_OPTIONAL, .type = PROTOBUF_C_TYPE_FIXED32},
    {.name = "b", .id = 6, .label = PROTOBUF_C_LABEL_REPEATED, .type = PROTOBUF_C_TYPE_BYTES},
};
/* Indexes of odd_fields in name order: b f fx32 s32 s64 sf32. */
static const unsigned odd_by_name[] = {5, 2, 4, 0, 1, 3};
static const ProtobufCMessageDescriptor odd_desc = {
    .magic = PROTOBUF_C__MESSAGE_DESCRIPTOR_MAGIC,
    .name = "test.Odd",
    .short_name = "Odd",
    .n_fields = TB_ARRAY_SIZE(odd_fields),
    .fields = odd_fields,
    .fields_sorted_by_name = odd_by_name,
};

TEST(protos_textproto_other_types)
{
	const char *text =
	    "s32: -1 s64: -3 f: 1.5 sf32: -2 fx32: 0xdeadbeef b: \"\\001\\000\\377\"";
	static const uint8_t want[] = {
	    0x08, 0x01,                   /* s32 zigzag(-1) = 1 */
	    0x10, 0x05,                   /* s64 zigzag(-3) = 5 */
	    0x1d, 0x00, 0x00, 0xc0, 0x3f, /* f 1.5f */
	    0x25, 0xfe, 0xff, 0xff, 0xff, /* sf32 -2 */
	    0x2d, 0xef, 0xbe, 0xad, 0xde, /* fx32 */
	    0x32, 0x03, 0x01, 0x00, 0xff, /* b */
	};
	struct tb_err err;
	uint8_t *bin = NULL;
	size_t len = 0;
	tb_err_clear(&err);
	CHECK_EQ(
	    protos_text_to_binary(&odd_desc, NULL, text, strlen(text), false, &bin, &len, &err), 0);
	CHECK_EQ(len, sizeof want);
	CHECK_MEM_EQ(bin, want, len);
	tb_free(bin);
	CHECK_STR_EQ(tc_error("", false), "");
}

TEST(protos_textproto_empty)
{
	struct tb_err err;
	uint8_t *bin = (uint8_t *)"x";
	size_t len = 99;
	const char *text = "  # nothing\n\n";
	tb_err_clear(&err);
	CHECK_EQ(protos_text_to_binary(TC_DESC, NULL, text, strlen(text), false, &bin, &len, &err),
	         0);
	CHECK(bin == NULL);
	CHECK_EQ(len, 0);
	CHECK_EQ(protos_text_to_binary(TC_DESC, NULL, NULL, 0, false, &bin, &len, &err), 0);
	CHECK(bin == NULL);
}

TEST(protos_textproto_errors)
{
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
	    {"duration_ms: 1\nbogus: 2",
	     "config:2:1 error: No field named \"bogus\" in proto TraceConfig"},
	    {"buffers { sizekb: 1 }",
	     "config:1:11 error: No field named \"sizekb\" in proto BufferConfig"},
	    {"buffers { fill_policy: NOPE }",
	     "config:1:24 error: Unexpected value 'NOPE' for enum field fill_policy in proto "
	     "BufferConfig"},
	    {"buffers { fill_policy: 1 }",
	     "config:1:24 error: Expected value of type enum for field fill_policy in proto "
	     "BufferConfig instead saw '1'"},
	    {"duration_ms: \"10\"",
	     "config:1:14 error: Expected value of type uint32 for field duration_ms in proto "
	     "TraceConfig instead saw '10'"},
	    {"duration_ms { }",
	     "config:1:13 error: Expected value of type uint32 for field duration_ms in proto "
	     "TraceConfig instead saw '{'"},
	    {"buffers: 3",
	     "config:1:10 error: Expected value of type message for field buffers in proto "
	     "TraceConfig instead saw '3'"},
	    {"write_into_file: 1",
	     "config:1:18 error: Expected value of type bool for field write_into_file in proto "
	     "TraceConfig instead saw '1'"},
	    {"write_into_file: yes",
	     "config:1:18 error: Expected 'true' or 'false' for boolean field write_into_file in "
	     "proto TraceConfig instead saw 'yes'"},
	    {"unique_session_name: \"abc", "config:1:22 error: Unterminated string"},
	    {"unique_session_name: \"abc\\", "config:1:22 error: Unterminated string"},
	    {"duration_ms: 12x", "config:1:14 error: Expected value of type uint32 for field "
	                         "duration_ms in proto TraceConfig instead saw '12x'"},
	    {"duration_ms: 1.5", "config:1:14 error: Expected value of type uint32 for field "
	                         "duration_ms in proto TraceConfig instead saw '1.5'"},
	    {"duration_ms: -", "config:1:14 error: Expected value of type uint32 for field "
	                       "duration_ms in proto TraceConfig instead saw '-'"},
	    {"duration_ms: 4294967296", "config:1:14 error: Value '4294967296' out of range for "
	                                "uint32 field duration_ms in proto TraceConfig"},
	    {"duration_ms: -1", "config:1:14 error: Value '-1' out of range for uint32 field "
	                        "duration_ms in proto TraceConfig"},
	    {"max_file_size_bytes: 18446744073709551616",
	     "config:1:22 error: Value '18446744073709551616' out of range for uint64 field "
	     "max_file_size_bytes in proto TraceConfig"},
	    {"trace_uuid_msb: 9223372036854775808",
	     "config:1:17 error: Value '9223372036854775808' out of range for int64 field "
	     "trace_uuid_msb in proto TraceConfig"},
	    {"trigger_config { triggers { skip_probability: 1.5.5 } }",
	     "config:1:47 error: Expected value of type double for field skip_probability in "
	     "proto Trigger instead saw '1.5.5'"},
	    {"duration_ms: 1 duration_ms: 2",
	     "config:1:16 error: Saw non-repeating field 'duration_ms' more than once"},
	    {"unique_session_name: \"a\\qb\"",
	     "config:1:23 error: Unknown string escape in unique_session_name in proto "
	     "TraceConfig: 'a\\qb'"},
	    {"unique_session_name: \"\\400\"",
	     "config:1:23 error: Malformed string escape in unique_session_name in proto "
	     "TraceConfig on '\\400'. \\NNN escapes must be exactly three octal digits <= \\377 "
	     "(0xff)."},
	    {"unique_session_name: \"\\12\"",
	     "config:1:23 error: Malformed string escape in unique_session_name in proto "
	     "TraceConfig on '\\12'. \\NNN escapes must be exactly three octal digits <= \\377 "
	     "(0xff)."},
	    {"unique_session_name: \"\\xg\"",
	     "config:1:23 error: Malformed string escape in unique_session_name in proto "
	     "TraceConfig on '\\xg'. \\x escapes need one or two hex digits."},
	    {"buffers { size_kb: 1 }\n}", "config:2:1 error: Unmatched closing brace"},
	    {"buffers { size_kb: 1\n", "config:2:1 error: Nested message not closed"},
	    {"duration_ms", "config:1:12 error: Unexpected end of input"},
	    {"duration_ms:  # c\n", "config:2:1 error: Unexpected end of input"},
	    {"duration_ms: 1;;", "config:1:16 error: Unexpected character ';'"},
	    {";duration_ms: 1", "config:1:1 error: Unexpected character ';'"},
	    {"buffers {; }", "config:1:10 error: Unexpected character ';'"},
	    {"duration_ms: @", "config:1:14 error: Unexpected character '@'"},
	    {"buffers < size_kb: 1 >", "config:1:9 error: Unexpected character '<'"},
	    {"activate_triggers: [\"a\", \"b\"]", "config:1:20 error: Unexpected character '['"},
	    {"duration_ms:: 1", "config:1:13 error: Unexpected character ':'"},
	    {"[perfetto.protos.ext]: 1",
	     "config:1:1 error: No extension named \"perfetto.protos.ext\" registered"},
	    {"[]: 1", "config:1:1 error: Empty extension name"},
	    {"[a b]: 1", "config:1:3 error: Unexpected character ' '"},
	    {"buffers { size_kb: 1 } 7", "config:1:24 error: Unexpected character '7'"},
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(cases); i++) {
		const char *got = tc_error(cases[i].text, false);
		if (strcmp(got, cases[i].msg) != 0) {
			test_report(__FILE__, __LINE__,
			            "case %zu: '%s'\n    got  '%s'\n    want '%s'", i,
			            cases[i].text, got, cases[i].msg);
			return;
		}
	}
}

TEST(protos_textproto_error_name)
{
	struct tb_err err;
	uint8_t *bin = NULL;
	size_t len = 0;
	const char *text = "duration_ms: 1\n  nope: 1";
	tb_err_clear(&err);
	CHECK_EQ(protos_text_to_binary(TC_DESC, "cfg.pbtxt", text, strlen(text), false, &bin, &len,
	                               &err),
	         -EINVAL);
	CHECK(bin == NULL);
	CHECK_EQ(err.code, -EINVAL);
	CHECK_STR_EQ(err.msg, "cfg.pbtxt:2:3 error: No field named \"nope\" in proto TraceConfig");
}

TEST(protos_textproto_lossy)
{
	const char *text = "duration_ms: 100\n"
	                   "future_field: 42\n"
	                   "future_msg { a: 1 b { c: \"}\" } d: ENUM_X }\n"
	                   "[some.ext] { x: 1 }\n"
	                   "[other.ext]: \"s\"\n"
	                   "buffers { size_kb: 8 fill_policy: NEW_POLICY unknown: true }\n"
	                   "data_sources { config { name: \"linux.ftrace\" new_cfg { z: 1 } } }\n"
	                   "flush_period_ms: 5\n";
	struct tb_err err;
	Perfetto__Protos__TraceConfig *tc;

	CHECK_STR_EQ(tc_error(text, false),
	             "config:2:1 error: No field named \"future_field\" in proto TraceConfig");
	tc = tc_parse(text, true, &err);
	if (!tc)
		test_report(__FILE__, __LINE__, "%s", err.msg);
	CHECK(tc);
	CHECK_EQ(tc->duration_ms, 100);
	CHECK_EQ(tc->n_buffers, 1);
	CHECK_EQ(tc->buffers[0]->size_kb, 8);
	CHECK(!tc->buffers[0]->has_fill_policy);
	CHECK_STR_EQ(tc->data_sources[0]->config->name, "linux.ftrace");
	CHECK_EQ(tc->flush_period_ms, 5);
	tc_free(tc);

	/* Lossy mode still rejects type mismatches and syntax errors, and
	 * skipped messages must still be well-formed. */
	CHECK_STR_EQ(tc_error("duration_ms: \"x\"", true),
	             "config:1:14 error: Expected value of type uint32 for field duration_ms in "
	             "proto TraceConfig instead saw 'x'");
	CHECK_STR_EQ(tc_error("future { a: 1 ", true),
	             "config:1:15 error: Nested message not closed");
	CHECK_STR_EQ(tc_error("future { a: @ }", true),
	             "config:1:13 error: Unexpected character '@'");
}

TEST(protos_textproto_depth)
{
	/* PROTOS_TEXT_MAX_DEPTH levels are fine (inside a skipped message, in
	 * lossy mode); one more is an error. */
	char text[5 * (PROTOS_TEXT_MAX_DEPTH + 2) + 8];
	size_t n = 0;
	for (int i = 0; i < PROTOS_TEXT_MAX_DEPTH; i++) {
		memcpy(text + n, "x { ", 4);
		n += 4;
	}
	for (int i = 0; i < PROTOS_TEXT_MAX_DEPTH; i++)
		text[n++] = '}';
	text[n] = '\0';
	CHECK_STR_EQ(tc_error(text, true), "");

	n = 0;
	for (int i = 0; i <= PROTOS_TEXT_MAX_DEPTH; i++) {
		memcpy(text + n, "x { ", 4);
		n += 4;
	}
	text[n] = '\0';
	char want[128];
	snprintf(want, sizeof want, "config:1:%d error: Nesting deeper than %d levels",
	         4 * PROTOS_TEXT_MAX_DEPTH + 3, PROTOS_TEXT_MAX_DEPTH);
	CHECK_STR_EQ(tc_error(text, true), want);
}

/* The data source config named name in tc, or NULL. */
static const Perfetto__Protos__DataSourceConfig *tc_source(const Perfetto__Protos__TraceConfig *tc,
                                                           const char *name)
{
	for (size_t i = 0; i < tc->n_data_sources; i++) {
		const Perfetto__Protos__DataSourceConfig *c = tc->data_sources[i]->config;
		if (c && c->name && strcmp(c->name, name) == 0)
			return c;
	}
	return NULL;
}

/* Every config shipped in configs/ parses as a TraceConfig, has buffers and
 * data sources, and sets what its comments promise. */
TEST(protos_textproto_shipped_configs)
{
	const char *root = getenv("TB_TEST_ROOT");
	char dir[512];
	snprintf(dir, sizeof dir, "%s/configs", root ? root : ".");
	DIR *d = opendir(dir);
	CHECK(d != NULL);
	if (!d)
		return;
	int n = 0;
	bool sched = false, longt = false, perf = false, stream = false, pctx = false,
	     journald = false;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 6 || strcmp(e->d_name + l - 5, ".pbtx") != 0)
			continue;
		char path[1024], *text = NULL;
		size_t len;
		struct tb_err err;
		tb_err_clear(&err);
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		CHECK_EQ(tb_read_file(path, &text, &len, 1 << 20, &err), 0);
		Perfetto__Protos__TraceConfig *tc = text ? tc_parse(text, false, &err) : NULL;
		tb_free(text);
		if (!tc) {
			test_report(__FILE__, __LINE__, "%s: %s", e->d_name, err.msg);
			break;
		}
		n++;
		CHECK(tc->n_buffers >= 1);
		CHECK(tc->n_data_sources >= 1);
		const Perfetto__Protos__DataSourceConfig *c;
		if (strcmp(e->d_name, "sched.pbtx") == 0) {
			sched = true;
			c = tc_source(tc, "linux.ftrace");
			CHECK(c && c->ftrace_config && c->ftrace_config->compact_sched &&
			      c->ftrace_config->compact_sched->enabled);
			CHECK(tc_source(tc, "linux.process_stats") != NULL);
		} else if (strcmp(e->d_name, "journald.pbtx") == 0) {
			journald = true;
			c = tc_source(tc, "linux.systemd_journald");
			CHECK(c && c->journald_config && c->journald_config->has_min_prio);
			if (c && c->journald_config)
				CHECK_EQ(c->journald_config->min_prio, 6);
			CHECK(tc_source(tc, "linux.ftrace") != NULL);
			CHECK(tc_source(tc, "linux.process_stats") != NULL);
		} else if (strcmp(e->d_name, "long-trace.pbtx") == 0) {
			longt = true;
			CHECK(tc->write_into_file);
			CHECK_EQ(tc->max_file_size_bytes, 512ull << 20);
			CHECK(tc->file_write_period_ms > 0);
		} else if (strcmp(e->d_name, "perf-1000hz.pbtx") == 0 ||
		           strcmp(e->d_name, "perf-stream.pbtx") == 0 ||
		           strcmp(e->d_name, "perf-sched.pbtx") == 0) {
			bool fast = e->d_name[5] == '1';
			perf |= fast;
			stream |= e->d_name[6] == 't';
			pctx |= e->d_name[6] == 'c';
			c = tc_source(tc, "linux.perf");
			CHECK(c && c->perf_event_config && c->perf_event_config->timebase);
			if (c && c->perf_event_config && c->perf_event_config->timebase)
				CHECK_EQ(c->perf_event_config->timebase->frequency,
				         fast ? 1000 : 100);
			/* no scope: a gated capture samples its workload */
			if (c && c->perf_event_config && c->perf_event_config->callstack_sampling)
				CHECK(c->perf_event_config->callstack_sampling->scope == NULL);
			CHECK(tc->duration_ms > 0);
			if (e->d_name[6] == 't') {
				CHECK(tc->write_into_file);
				CHECK_EQ(tc->max_file_size_bytes, 512ull << 20);
				CHECK(tc->file_write_period_ms > 0);
			}
			if (e->d_name[6] == 'c') {
				c = tc_source(tc, "linux.ftrace");
				CHECK(c && c->ftrace_config &&
				      c->ftrace_config->n_ftrace_events >= 2);
			}
		}
		tc_free(tc);
	}
	closedir(d);
	CHECK(sched && longt && perf && stream && pctx && journald);
	CHECK(n >= 6);
}
