/*
 * Tests of the Chrome JSON importer (components/trace_processor/importers/
 * json): each phase, nesting, overlap spill lanes, args keys and types,
 * streaming (byte-by-byte input gives the same tables), gzip, truncated
 * files, and loading the shared JSON corpus. They inspect tp->t directly.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "test.h"
#include "importers/json/json_int.h"
#include "io/io.h"
#include "tp_int.h"
#include "model/ftrace.h"
#include "sorter/sorter.h"

static struct tp *load_chunked(const char *json, size_t len, size_t chunk)
{
	struct tp *tp = tp_new(NULL);
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		if (tp_parse(tp, (const uint8_t *)json + off, n) != 0)
			break;
	}
	tp_end_of_file(tp);
	return tp;
}

static struct tp *load(const char *json)
{
	return load_chunked(json, strlen(json), strlen(json) + 1);
}

static const char *s_(const struct tp *tp, uint32_t id)
{
	return id ? tp_str(tp, id) : "(null)";
}

/* The first slice called name, or -1. */
static long find_slice(const struct tp *tp, const char *name)
{
	const struct tp_slice_table *t = &tp->t.slice;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->name[i] && strcmp(tp_str(tp, t->name[i]), name) == 0)
			return i;
	return -1;
}

/* The args row of set with key, or -1. */
static long find_arg(const struct tp *tp, uint32_t set, const char *key)
{
	const struct tp_args_table *t = &tp->t.args;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->arg_set_id[i] == set && strcmp(s_(tp, t->key[i]), key) == 0)
			return i;
	return -1;
}

static const char *track_type(const struct tp *tp, long slice)
{
	return s_(tp, tp->t.track.type[tp->t.slice.track_id[slice]]);
}

TEST(tp_json_begin_end_nesting)
{
	struct tp *tp =
	    load("[{\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":10,\"name\":\"outer\",\"cat\":\"c\"},"
	         "{\"ph\":\"B\",\"pid\":1,\"tid\":2,\"ts\":11,\"name\":\"inner\"},"
	         "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":12,\"args\":{\"r\":1}},"
	         "{\"ph\":\"E\",\"pid\":1,\"tid\":2,\"ts\":15,\"name\":\"nomatch\"},"
	         "{\"ph\":\"E\",\"pid\":1,\"tid\":3,\"ts\":16}]");
	CHECK_STR_EQ(tp_trace_type(tp), "json");
	long o = find_slice(tp, "outer"), i = find_slice(tp, "inner");
	CHECK(o >= 0 && i >= 0);
	CHECK_EQ(tp->t.slice.ts[o], 10000);
	CHECK_EQ(tp->t.slice.dur[o], -1); /* never closed: E named "nomatch" */
	CHECK_STR_EQ(s_(tp, tp->t.slice.category[o]), "c");
	CHECK_EQ(tp->t.slice.depth[i], 1);
	CHECK_EQ(tp->t.slice.parent_id[i], o);
	CHECK_EQ(tp->t.slice.dur[i], 1000);
	CHECK(find_arg(tp, tp->t.slice.arg_set_id[i], "args.r") >= 0);
	CHECK_STR_EQ(track_type(tp, i), "thread_execution");
	CHECK_EQ(tp->stats[TP_STAT_misplaced_end_event] + tp->stats[TP_STAT_stackless_end_event],
	         2);
	/* utid of tid 2 belongs to pid 1. */
	uint32_t utid = (uint32_t)tp->t.track.utid[tp->t.slice.track_id[o]];
	CHECK_EQ(tp->t.thread.tid[utid], 2);
	CHECK_EQ(tp->t.process.pid[tp->t.thread.upid[utid]], 1);
	tp_free(tp);
}

TEST(tp_json_complete_order_and_times)
{
	/* Equal ts: the longer X becomes the parent (Perfetto's sorter). */
	struct tp *tp =
	    load("[{\"name\":\"Child\",\"ph\":\"X\",\"ts\":1,\"dur\":5,\"pid\":1},"
	         "{\"name\":\"Parent\",\"ph\":\"X\",\"ts\":1,\"dur\":10,\"pid\":1,\"tid\":1},"
	         "{\"name\":\"S\",\"ph\":\"X\",\"ts\":\"250\",\"dur\":\"50.5\",\"tts\":\"240\","
	         "\"tdur\":\"40.5\",\"pid\":2,\"tid\":3},"
	         "{\"name\":\"F\",\"ph\":\"X\",\"ts\":5.1,\"dur\":500.1,\"pid\":2,\"tid\":4},"
	         "{\"name\":\"Bad\",\"ph\":\"X\",\"ts\":\"100a\",\"dur\":1,\"pid\":2,\"tid\":5},"
	         "{\"name\":\"BadDur\",\"ph\":\"X\",\"ts\":1,\"dur\":\"5x\",\"pid\":2,\"tid\":5},"
	         "{\"name\":\"NoTs\",\"ph\":\"X\",\"dur\":1,\"pid\":2,\"tid\":5}]");
	long c = find_slice(tp, "Child"), p = find_slice(tp, "Parent");
	CHECK(c >= 0 && p >= 0);
	CHECK(p < c);
	CHECK_EQ(tp->t.slice.depth[p], 0);
	CHECK_EQ(tp->t.slice.depth[c], 1);
	long s = find_slice(tp, "S");
	CHECK_EQ(tp->t.slice.ts[s], 250000);
	CHECK_EQ(tp->t.slice.dur[s], 50500);
	CHECK_EQ(tp_get_slice_thread_ts(&tp->t.slice, (uint32_t)s), 240000);
	CHECK_EQ(tp_get_slice_thread_dur(&tp->t.slice, (uint32_t)s), 40500);
	long f = find_slice(tp, "F");
	CHECK_EQ(tp->t.slice.ts[f], 5100);
	CHECK_EQ(tp->t.slice.dur[f], 500100);
	CHECK_EQ(find_slice(tp, "Bad"), -1);
	CHECK_EQ(find_slice(tp, "BadDur"), -1);
	CHECK_EQ(find_slice(tp, "NoTs"), -1);
	/* Bad ts, no ts, and a dur that is no time: tokenizer failures, as in
	 * Perfetto (which stops reading at the last; we drop the event). */
	CHECK_EQ(tp->stats[TP_STAT_json_tokenizer_failure], 3);
	CHECK_EQ(tp->stats[TP_STAT_json_parser_failure], 0);
	tp_free(tp);
}

/* Events in ts order skip the sorter (the tokenizer's log); older ones go
 * through it, and the two are merged in (ts, push order), ties between a
 * logged and a late event included: the slices come out as a full sort of
 * the trace would have them, whatever the chunking. */
TEST(tp_json_late_events_merge_with_the_log)
{
	static const char trace[] = "[{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":10,\"name\":\"a\"},"
	                            "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":20,\"name\":\"b\"},"
	                            "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":5,\"name\":\"c\"},"
	                            "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":20,\"name\":\"d\"},"
	                            "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":20,\"name\":\"e\"},"
	                            "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":10,\"name\":\"f\"},"
	                            "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":30,\"name\":\"g\"},"
	                            "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":20,\"name\":\"h\"},"
	                            "{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":10,\"name\":\"i\"}]";
	static const char want[] = "cafibdehg";
	for (size_t chunk = 1; chunk <= sizeof trace; chunk += sizeof trace - 1) {
		struct tp *tp = load_chunked(trace, sizeof trace - 1, chunk);
		const struct tp_slice_table *t = &tp->t.slice;
		CHECK_EQ(t->n, sizeof want - 1);
		for (uint32_t i = 0; i < t->n && i < sizeof want - 1; i++) {
			CHECK_STR_EQ(s_(tp, t->name[i]), ((char[]){want[i], 0}));
			CHECK(i == 0 || t->ts[i] >= t->ts[i - 1]);
		}
		CHECK_EQ(tp->ts_min, 5000);
		CHECK_EQ(tp->ts_max, 30000);
		tp_free(tp);
	}
}

TEST(tp_json_time_shapes_and_arg_keys)
{
	/* Times through the digit fast path and the general path, as Perfetto
	 * v58.2 converts them (the double its json parser makes of the text,
	 * rounded to ns; a string must be one valid number, no leading
	 * zeros); arg keys that share `key` but not `flat_key`; identical sets
	 * share. */
	struct tp *tp = load(
	    "[{\"name\":\"T1\",\"ph\":\"X\",\"ts\":1.23456,\"dur\":7,\"pid\":1,\"tid\":1},"
	    "{\"name\":\"T2\",\"ph\":\"X\",\"ts\":12.5e1,\"dur\":0.0019,\"pid\":1,\"tid\":2},"
	    "{\"name\":\"T3\",\"ph\":\"X\",\"ts\":\"7.5\",\"dur\":\"3\",\"pid\":1,\"tid\":3},"
	    "{\"name\":\"T5\",\"ph\":\"X\",\"ts\":\"007.5\",\"dur\":1,\"pid\":1,\"tid\":3},"
	    "{\"name\":\"T6\",\"ph\":\"X\",\"ts\":48.09599999999999,\"dur\":1,\"pid\":1,\"tid\":9},"
	    "{\"name\":\"T4\",\"ph\":\"X\",\"ts\":1234567890123456,\"dur\":1,\"pid\":1,\"tid\":4},"
	    "{\"name\":\"K1\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":5,\"args\":{\"a[0]"
	    "\":1}},"
	    "{\"name\":\"K2\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":6,\"args\":{\"a\":["
	    "1]}},"
	    "{\"name\":\"D1\",\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":7,\"args\":{\"x\":"
	    "\"y\"}},"
	    "{\"name\":\"D2\",\"ph\":\"X\",\"ts\":2,\"dur\":1,\"pid\":1,\"tid\":8,\"args\":{\"x\":"
	    "\"y\"}}]");
	const struct tp_slice_table *t = &tp->t.slice;
	long s = find_slice(tp, "T1");
	CHECK_EQ(t->ts[s], 1235);
	CHECK_EQ(t->dur[s], 7000);
	s = find_slice(tp, "T2");
	CHECK_EQ(t->ts[s], 125000);
	CHECK_EQ(t->dur[s], 2);
	CHECK_EQ(find_slice(tp, "T5"), -1);
	s = find_slice(tp, "T6");
	CHECK_EQ(t->ts[s], 48096);
	s = find_slice(tp, "T3");
	CHECK_EQ(t->ts[s], 7500);
	CHECK_EQ(t->dur[s], 3000);
	s = find_slice(tp, "T4");
	CHECK_EQ(t->ts[s], 1234567890123456000);
	long k1 = find_slice(tp, "K1"), k2 = find_slice(tp, "K2");
	long a1 = find_arg(tp, t->arg_set_id[k1], "args.a[0]");
	long a2 = find_arg(tp, t->arg_set_id[k2], "args.a[0]");
	CHECK(a1 >= 0 && a2 >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_row(tp, (uint32_t)a1).flat_key), "args.a[0]");
	CHECK_STR_EQ(s_(tp, tp_args_row(tp, (uint32_t)a2).flat_key), "args.a");
	CHECK_STR_EQ(s_(tp, tp_args_type_name_id(tp, tp_args_row(tp, (uint32_t)a1).type)), "int");
	CHECK_EQ(t->arg_set_id[find_slice(tp, "D1")], t->arg_set_id[find_slice(tp, "D2")]);
	CHECK_EQ(tp->stats[TP_STAT_json_tokenizer_failure], 1);
	tp_free(tp);
}

TEST(tp_json_overlap_spill_lanes)
{
	struct tp *tp =
	    load("{\"traceEvents\":["
	         "{\"ph\":\"X\",\"ts\":100,\"dur\":100,\"pid\":1,\"tid\":1,\"name\":\"outer\"},"
	         "{\"ph\":\"X\",\"ts\":150,\"dur\":100,\"pid\":1,\"tid\":1,\"name\":\"inner\"},"
	         "{\"ph\":\"X\",\"ts\":160,\"dur\":10,\"pid\":1,\"tid\":1,\"name\":\"nested\"},"
	         "{\"ph\":\"X\",\"ts\":170,\"dur\":100,\"pid\":1,\"tid\":1,\"name\":\"third\"},"
	         "{\"ph\":\"X\",\"ts\":300,\"dur\":10,\"pid\":1,\"tid\":1,\"name\":\"after\"}]}");
	CHECK_EQ(tp->t.slice.n, 5);
	CHECK_EQ(tp->stats[TP_STAT_slice_spill_overlapping_complete_event], 2);
	CHECK_EQ(tp->stats[TP_STAT_slice_drop_overlapping_complete_event], 0);
	long o = find_slice(tp, "outer"), i = find_slice(tp, "inner"), n = find_slice(tp, "nested");
	long t3 = find_slice(tp, "third"), a = find_slice(tp, "after");
	CHECK_STR_EQ(track_type(tp, o), "thread_execution");
	CHECK_STR_EQ(track_type(tp, i), "thread_overlapping_slice");
	CHECK_EQ(tp->t.track.name[tp->t.slice.track_id[i]], 0);
	/* nested fits inside outer: normal nesting on the thread track. */
	CHECK_STR_EQ(track_type(tp, n), "thread_execution");
	CHECK_EQ(tp->t.slice.depth[n], 1);
	/* third overlaps outer and does not fit in inner: a second lane. */
	CHECK_STR_EQ(track_type(tp, t3), "thread_overlapping_slice");
	CHECK(tp->t.slice.track_id[t3] != tp->t.slice.track_id[i]);
	CHECK_EQ(tp->t.track.utid[tp->t.slice.track_id[t3]],
	         tp->t.track.utid[tp->t.slice.track_id[o]]);
	CHECK_STR_EQ(track_type(tp, a), "thread_execution");
	tp_free(tp);
}

TEST(tp_json_instants)
{
	struct tp *tp =
	    load("[{\"ph\":\"i\",\"s\":\"g\",\"ts\":1,\"pid\":1,\"tid\":1,\"name\":\"G\"},"
	         "{\"ph\":\"I\",\"s\":\"p\",\"ts\":2,\"pid\":1,\"tid\":1,\"name\":\"P\","
	         "\"args\":{\"scope_val\":\"process\"}},"
	         "{\"ph\":\"R\",\"s\":\"t\",\"ts\":3,\"pid\":1,\"tid\":1,\"name\":\"T\",\"tts\":2},"
	         "{\"ph\":\"i\",\"ts\":4,\"pid\":1,\"tid\":1,\"name\":\"D\"},"
	         "{\"ph\":\"i\",\"s\":\"x\",\"ts\":5,\"pid\":1,\"tid\":1,\"name\":\"U\"}]");
	long g = find_slice(tp, "G"), p = find_slice(tp, "P"), t = find_slice(tp, "T");
	long d = find_slice(tp, "D");
	CHECK(g >= 0 && p >= 0 && t >= 0 && d >= 0);
	CHECK_STR_EQ(track_type(tp, g), "legacy_chrome_global_instants");
	CHECK_STR_EQ(track_type(tp, p), "chrome_process_instant");
	CHECK_STR_EQ(track_type(tp, t), "thread_execution");
	CHECK_STR_EQ(track_type(tp, d), "thread_execution");
	CHECK_EQ(tp->t.slice.dur[g], 0);
	/* An instant keeps its tts, never gets a thread_dur (Perfetto's). */
	CHECK_EQ(tp_get_slice_thread_ts(&tp->t.slice, (uint32_t)t), 2000);
	CHECK_EQ(tp_get_slice_thread_dur(&tp->t.slice, (uint32_t)t), TP_NULL_I64);
	CHECK_EQ(tp_get_slice_thread_dur(&tp->t.slice, (uint32_t)d), TP_NULL_I64);
	long a = find_arg(tp, tp->t.slice.arg_set_id[p], "args.scope_val");
	CHECK(a >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_row(tp, (uint32_t)a).v.s), "process");
	/* A scope Perfetto does not know is none: the thread. */
	CHECK_STR_EQ(track_type(tp, find_slice(tp, "U")), "thread_execution");
	CHECK_EQ(tp->stats[TP_STAT_json_parser_failure], 0);
	tp_free(tp);
}

/* 'T' thread states: state from the name, cpu / io_wait / blocked_function
 * from int or string args; a Running state with a cpu is also a sched row;
 * no dur is a parser failure; args that are not an object are ignored. */
TEST(tp_json_thread_state)
{
	struct tp *tp = load(
	    "[{\"ph\":\"T\",\"name\":\"Running\",\"ts\":1,\"dur\":5,\"pid\":7,\"tid\":8,"
	    "\"args\":{\"cpu\":3}},"
	    "{\"ph\":\"T\",\"name\":\"D\",\"ts\":6,\"dur\":2,\"pid\":7,\"tid\":8,"
	    "\"args\":{\"io_wait\":1,\"blocked_function\":\"f\",\"cpu\":\"x\"}},"
	    "{\"ph\":\"T\",\"name\":\"Running\",\"ts\":8,\"dur\":1,\"pid\":7,\"tid\":8},"
	    "{\"ph\":\"T\",\"name\":\"S\",\"ts\":9,\"pid\":7,\"tid\":8},"
	    "{\"ph\":\"T\",\"name\":\"R\",\"ts\":10,\"dur\":1,\"pid\":7,\"tid\":8,\"args\":[1]}]");
	const struct tp_thread_state_table *t = &tp->t.thread_state;
	CHECK_EQ(t->n, 4);
	CHECK_EQ(t->ts[0], 1000);
	CHECK_EQ(tp_thread_state_dur(tp, 0), 5000);
	CHECK_STR_EQ(s_(tp, t->state[0]), "Running");
	CHECK_EQ(tp_get_thread_state_io_wait(t, 0), TP_NULL_I64);
	uint32_t cpu;
	tp_thread_state_computed_cpu(tp, 0, &cpu);
	CHECK_EQ(cpu, TP_NULL_U32);
	CHECK_EQ(tp->t.thread.tid[t->utid[0]], 8);
	CHECK_STR_EQ(s_(tp, t->state[1]), "D");
	CHECK_EQ(tp_get_thread_state_io_wait(t, 1), 1);
	CHECK_STR_EQ(s_(tp, tp_get_thread_state_blocked_function(t, 1)), "f");
	CHECK_STR_EQ(s_(tp, t->state[3]), "R");
	CHECK_EQ(tp->t.sched.n, 1);
	CHECK_EQ(tp->t.sched.ts[0], 1000);
	CHECK_EQ(tp_sched_dur(tp, 0), 5000);
	tp_sched_computed_cpu(tp, 0, &cpu);
	CHECK_EQ(cpu, 3);
	CHECK_EQ(tp->t.cpu.cpu[tp->t.sched.ucpu[0]], 3);
	/* No dur; args that are not an object are no args, as Perfetto. */
	CHECK_EQ(tp->stats[TP_STAT_json_parser_failure], 1);
	tp_free(tp);
}

/* The SWAR digit fast path agrees with the general number parser on every
 * length and on what may follow, and declines fractions and exponents. */
TEST(tp_json_uint_fast_matches_general)
{
	static const char *const nums[] = {
	    "0",
	    "7",
	    "42",
	    "1000",
	    "12345678",
	    "123456789",
	    "9007199254740993",
	    "1234567890123456",
	    "12345678901234567",
	    "5.5",
	    "3e2",
	    "8E1",
	    "00012",
	};
	static const char *const tails[] = {",\"x\":1}         ", "}                ",
	                                    " ,               ", "]                "};
	for (size_t i = 0; i < TB_ARRAY_SIZE(nums); i++) {
		for (size_t j = 0; j < TB_ARRAY_SIZE(tails); j++) {
			char buf[64];
			int n = snprintf(buf, sizeof buf, "%s%s", nums[i], tails[j]);
			uint64_t v = 0;
			const char *q = json_uint_fast(buf, buf + n, &v);
			struct json_num num;
			const char *r = tp_json_number(buf, buf + n, &num);
			bool plain = strlen(nums[i]) <= 16 && !strpbrk(nums[i], ".eE");
			CHECK_EQ(q != NULL, plain);
			if (q) {
				CHECK(q == r);
				CHECK(num.is_int);
				CHECK_UEQ(v, (uint64_t)num.i);
			}
		}
	}
	char shorty[] = "123}";
	uint64_t v;
	CHECK(json_uint_fast(shorty, shorty + 4, &v) == NULL); /* too near the end */
}

struct text_sink_buf {
	char text[256];
	size_t len;
	int ends;
};

static void sink_piece(void *ctx, const char *s, size_t n)
{
	struct text_sink_buf *b = ctx;
	if (b->len + n < sizeof b->text) {
		memcpy(b->text + b->len, s, n);
		b->len += n;
	}
}

static void sink_end(void *ctx)
{
	((struct text_sink_buf *)ctx)->ends++;
}

/* The systemTraceEvents string reaches its sink unescaped and whole, with
 * escapes (surrogate pairs included) cut anywhere by chunk ends; the events
 * after it still load. */
TEST(tp_json_system_trace_handoff)
{
	static const char trace[] =
	    "{\"systemTraceEvents\":\"# tracer\\n\\tx\\u00e9\\ud83d\\ude00\\ud800y\\\"\","
	    "\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"a\"}]"
	    "}";
	static const char want[] = "# tracer\n\tx\xc3\xa9\xf0\x9f\x98\x80\xef\xbf\xbdy\"";
	for (size_t chunk = 1; chunk <= sizeof trace; chunk += 3) {
		struct tp *tp = tp_new(NULL);
		struct json_tokenizer *t = tp_json_tokenizer_new(tp);
		struct text_sink_buf b = {{0}, 0, 0};
		struct json_text_sink sink = {sink_piece, sink_end, &b};
		tp_json_tokenizer_set_system_trace_sink(t, &sink);
		for (size_t off = 0; off < sizeof trace - 1; off += chunk) {
			size_t n = sizeof trace - 1 - off < chunk ? sizeof trace - 1 - off : chunk;
			CHECK_EQ(tp_json_tokenizer_feed(t, (const uint8_t *)trace + off, n), 0);
		}
		CHECK_EQ(b.ends, 1);
		CHECK_EQ(b.len, sizeof want - 1);
		CHECK_MEM_EQ(b.text, want, sizeof want - 1);
		CHECK_EQ(tp_json_log_unread(tp_json_tokenizer_log(t)) +
		             tp_sorter_pending(tp->sorter),
		         1);
		CHECK_EQ(tp->stats[TP_STAT_json_tokenizer_failure], 0);
		tp_json_tokenizer_free(t);
		tp_free(tp);
	}
}

TEST(tp_json_counters)
{
	struct tp *tp =
	    load("[{\"ph\":\"C\",\"pid\":300,\"tid\":301,\"ts\":3000,\"name\":\"Ctr\","
	         "\"args\":{\"leading_dot\":\".75\",\"trailing_dot\":\"246.\",\"i\":\"050\","
	         "\"bad\":\"1.5e\",\"plus\":\"+10.5\",\"minus\":\"-\",\"num\":7,\"obj\":{}}},"
	         "{\"ph\":\"C\",\"pid\":300,\"ts\":3001,\"name\":\"Ctr\",\"id\":\"x\","
	         "\"args\":{\"v\":1.5}},"
	         "{\"ph\":\"C\",\"pid\":300,\"ts\":3002,\"name\":\"NoArgs\"}]");
	CHECK_EQ(tp->t.counter.n, 6);
	CHECK_EQ(tp->stats[TP_STAT_json_parser_failure], 4); /* bad, minus, obj, NoArgs */
	int found = 0;
	for (uint32_t i = 0; i < tp->t.counter.n; i++) {
		uint32_t tr = tp->t.counter.track_id[i];
		const char *name = s_(tp, tp->t.track.name[tr]);
		CHECK_STR_EQ(s_(tp, tp->t.track.event_type[tr]), "counter");
		CHECK_EQ(tp->t.process.pid[tp->t.track.upid[tr]], 300);
		if (strcmp(name, "Ctr leading_dot") == 0) {
			CHECK_DBL_EQ(tp->t.counter.value[i], 0.75);
			found++;
		} else if (strcmp(name, "Ctr i") == 0) {
			CHECK_DBL_EQ(tp->t.counter.value[i], 50);
			found++;
		} else if (strcmp(name, "Ctr id: x v") == 0) {
			CHECK_DBL_EQ(tp->t.counter.value[i], 1.5);
			CHECK_EQ(tp->t.counter.ts[i], 3001000);
			found++;
		}
	}
	CHECK_EQ(found, 3);
	tp_free(tp);
}

/* A record bigger than a log chunk (a counter's raw args text of 3 MB)
 * gets a chunk of its own; the events around it load as usual, late ones
 * included. */
TEST(tp_json_record_bigger_than_a_log_chunk)
{
	size_t pad = (size_t)3 << 20, cap = pad + 512, len = 0;
	char *j = malloc(cap);
	len += (size_t)snprintf(
	    j + len, cap - len,
	    "[{\"ph\":\"X\",\"ts\":10,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"a\"},"
	    "{\"ph\":\"C\",\"ts\":20,\"pid\":1,\"name\":\"big\",\"args\":{\"v\":7,\"pad\":\"");
	memset(j + len, 'x', pad);
	len += pad;
	len += (size_t)snprintf(
	    j + len, cap - len,
	    "\"}},{\"ph\":\"X\",\"ts\":30,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"b\"},"
	    "{\"ph\":\"X\",\"ts\":15,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"c\"}]");
	struct tp *tp = load_chunked(j, len, 1 << 20);
	free(j);
	CHECK_EQ(tp->t.counter.n, 1);
	if (tp->t.counter.n == 1) {
		CHECK_DBL_EQ(tp->t.counter.value[0], 7);
		CHECK_EQ(tp->t.counter.ts[0], 20000);
	}
	const struct tp_slice_table *t = &tp->t.slice;
	CHECK_EQ(t->n, 3);
	if (t->n == 3) {
		CHECK_STR_EQ(s_(tp, t->name[0]), "a");
		CHECK_STR_EQ(s_(tp, t->name[1]), "c");
		CHECK_STR_EQ(s_(tp, t->name[2]), "b");
	}
	CHECK_EQ(tp->stats[TP_STAT_json_parser_failure], 1); /* "pad" is no number */
	tp_free(tp);
}

TEST(tp_json_async)
{
	struct tp *tp =
	    load("[{\"ph\":\"b\",\"pid\":400,\"tid\":401,\"ts\":4000,\"name\":\"L\",\"cat\":\"c\","
	         "\"id2\":{\"local\":\"x\"}},"
	         "{\"ph\":\"e\",\"pid\":400,\"tid\":401,\"ts\":4100,\"name\":\"L\",\"cat\":\"c\","
	         "\"id2\":{\"local\":\"x\"}},"
	         "{\"ph\":\"b\",\"pid\":1,\"ts\":0,\"name\":\"A\",\"cat\":\"c\",\"id\":\"0x31\"},"
	         "{\"ph\":\"b\",\"pid\":1,\"ts\":0,\"name\":\"B\",\"cat\":\"c\",\"id\":\"0x31\"},"
	         "{\"ph\":\"e\",\"pid\":1,\"ts\":1,\"name\":\"B\",\"cat\":\"c\",\"id\":\"0x31\"},"
	         "{\"ph\":\"n\",\"pid\":1,\"ts\":2,\"name\":\"N\",\"cat\":\"c\",\"id\":\"0x31\"},"
	         "{\"ph\":\"e\",\"pid\":1,\"ts\":4,\"name\":\"A\",\"cat\":\"c\",\"id\":\"0x31\"},"
	         "{\"ph\":\"b\",\"pid\":1,\"ts\":5,\"name\":\"G\",\"id2\":{\"global\":12}},"
	         "{\"ph\":\"b\",\"pid\":1,\"ts\":5,\"name\":\"NoId\",\"id\":\"\"}]");
	long l = find_slice(tp, "L"), a = find_slice(tp, "A"), b = find_slice(tp, "B");
	long n = find_slice(tp, "N"), g = find_slice(tp, "G");
	CHECK(l >= 0 && a >= 0 && b >= 0 && n >= 0 && g >= 0);
	CHECK_EQ(tp->t.slice.dur[l], 100000);
	CHECK_STR_EQ(track_type(tp, l), "legacy_async_process_slice");
	CHECK_STR_EQ(s_(tp, tp->t.track.name[tp->t.slice.track_id[l]]), "L");
	CHECK_STR_EQ(track_type(tp, a), "legacy_async_global_slice");
	CHECK_EQ(tp->t.slice.track_id[a], tp->t.slice.track_id[b]);
	CHECK_STR_EQ(s_(tp, tp->t.track.name[tp->t.slice.track_id[b]]), "A");
	CHECK_EQ(tp->t.slice.dur[a], 4000);
	CHECK_EQ(tp->t.slice.dur[b], 1000);
	CHECK_EQ(tp->t.slice.depth[b], 1);
	CHECK_EQ(tp->t.slice.dur[n], 0);
	CHECK_STR_EQ(track_type(tp, g), "legacy_async_global_slice");
	CHECK_EQ(tp->t.slice.dur[g], -1);
	/* An empty string is an id too (Perfetto interns it as a string). */
	CHECK(find_slice(tp, "NoId") >= 0);
	CHECK_EQ(tp->stats[TP_STAT_json_parser_failure], 0);
	tp_free(tp);
}

static int flow_between(const struct tp *tp, const char *out, const char *in)
{
	long o = find_slice(tp, out), i = find_slice(tp, in);
	int n = 0;
	for (uint32_t f = 0; f < tp->t.flow.n; f++)
		n += (int64_t)tp->t.flow.slice_out[f] == o && (int64_t)tp->t.flow.slice_in[f] == i;
	return n;
}

TEST(tp_json_flows)
{
	struct tp *tp = load(
	    "[{\"ph\":\"X\",\"ts\":0,\"dur\":10,\"pid\":1,\"tid\":1,\"name\":\"S1\"},"
	    "{\"ph\":\"s\",\"ts\":1,\"pid\":1,\"tid\":1,\"name\":\"f\",\"cat\":\"c\",\"id\":\"a\"},"
	    "{\"ph\":\"X\",\"ts\":20,\"dur\":10,\"pid\":1,\"tid\":2,\"name\":\"S2\"},"
	    "{\"ph\":\"t\",\"ts\":21,\"pid\":1,\"tid\":2,\"name\":\"f\",\"cat\":\"c\",\"id\":"
	    "\"0xa\"},"
	    "{\"ph\":\"f\",\"ts\":35,\"pid\":1,\"tid\":3,\"name\":\"f\",\"cat\":\"c\",\"id\":10},"
	    "{\"ph\":\"X\",\"ts\":40,\"dur\":10,\"pid\":1,\"tid\":3,\"name\":\"S3\"},"
	    "{\"ph\":\"s\",\"ts\":41,\"pid\":1,\"tid\":3,\"name\":\"f\",\"id\":\"zz\"},"
	    "{\"ph\":\"X\",\"ts\":60,\"dur\":1,\"pid\":1,\"tid\":4,\"name\":\"V1\","
	    "\"bind_id\":\"0x5\",\"flow_out\":true},"
	    "{\"ph\":\"B\",\"ts\":70,\"pid\":1,\"tid\":5,\"name\":\"V2\","
	    "\"bind_id\":5,\"flow_in\":true,\"flow_out\":true},"
	    "{\"ph\":\"X\",\"ts\":80,\"dur\":1,\"pid\":1,\"tid\":6,\"name\":\"V3\","
	    "\"bind_id\":\"0x5\",\"flow_in\":true},"
	    "{\"ph\":\"X\",\"ts\":90,\"dur\":1,\"pid\":1,\"tid\":6,\"name\":\"V4\","
	    "\"bind_id\":\"0x6\"}]");
	CHECK_EQ(flow_between(tp, "S1", "S2"), 1);
	CHECK_EQ(flow_between(tp, "S2", "S3"), 1);
	CHECK_EQ(flow_between(tp, "V1", "V2"), 1);
	CHECK_EQ(flow_between(tp, "V2", "V3"), 1);
	CHECK_EQ(tp->t.flow.n, 4);
	CHECK_EQ(tp->stats[TP_STAT_flow_invalid_id], 1);
	CHECK_EQ(tp->stats[TP_STAT_flow_without_direction], 1);
	tp_free(tp);
}

TEST(tp_json_metadata_events)
{
	struct tp *tp =
	    load("[{\"ph\":\"M\",\"pid\":30,\"tid\":0,\"name\":\"process_sort_index\","
	         "\"args\":{\"sort_index\":-2}},"
	         "{\"ph\":\"M\",\"pid\":30,\"tid\":31,\"name\":\"thread_sort_index\","
	         "\"args\":{\"sort_index\":5}},"
	         "{\"ph\":\"M\",\"pid\":30,\"tid\":31,\"name\":\"thread_name\",\"args\":{\"name\":"
	         "\"T1\"}},"
	         "{\"ph\":\"M\",\"pid\":30,\"tid\":31,\"ts\":5,\"name\":\"thread_name\","
	         "\"args\":{\"name\":\"T2\"}},"
	         "{\"ph\":\"M\",\"pid\":30,\"name\":\"process_name\",\"args\":{\"name\":\"P\"}},"
	         "{\"pid\":\"foo\",\"tid\":\"bar\",\"ts\":5.1,\"dur\":500.1,\"name\":\"n\",\"ph\":"
	         "\"XXX\"}]");
	const struct tp_thread_table *th = &tp->t.thread;
	const struct tp_process_table *pr = &tp->t.process;
	int seen = 0;
	for (uint32_t u = 0; u < th->n; u++) {
		if (th->tid[u] == 31) {
			CHECK_STR_EQ(s_(tp, th->name[u]), "T2");
			long a = find_arg(tp, th->arg_set_id[u], "thread_sort_index_hint");
			CHECK(a >= 0);
			CHECK_EQ(tp_args_row(tp, (uint32_t)a).v.i, 5);
			seen++;
		}
	}
	for (uint32_t u = 0; u < pr->n; u++) {
		if (pr->pid[u] == 30) {
			CHECK_STR_EQ(s_(tp, pr->name[u]), "P");
			long a = find_arg(tp, pr->arg_set_id[u], "process_sort_index_hint");
			CHECK(a >= 0);
			CHECK_EQ(tp_args_row(tp, (uint32_t)a).v.i, -2);
			seen++;
		}
	}
	CHECK_EQ(seen, 2);
	long n = find_slice(tp, "n");
	CHECK(n >= 0);
	CHECK_EQ(tp->t.slice.ts[n], 5100);
	uint32_t utid = (uint32_t)tp->t.track.utid[tp->t.slice.track_id[n]];
	CHECK_STR_EQ(s_(tp, th->name[utid]), "bar");
	CHECK_STR_EQ(s_(tp, pr->name[th->upid[utid]]), "foo");
	tp_free(tp);
}

TEST(tp_json_args_types)
{
	struct tp *tp =
	    load("[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"a\","
	         "\"args\":{\"i\":-5,\"r\":1.5,\"s\":\"h\\u00e9\\n\",\"t\":true,\"f\":false,"
	         "\"n\":null,\"o\":{\"x\":{\"y\":1}},\"arr\":[1,null,{\"k\":\"v\"},[2]],\"e\":{},"
	         "\"big\":18446744073709551615}}]");
	long s = find_slice(tp, "a");
	CHECK(s >= 0);
	uint32_t set = tp->t.slice.arg_set_id[s];
	long a;
	CHECK((a = find_arg(tp, set, "args.i")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_type_name_id(tp, tp_args_row(tp, (uint32_t)a).type)), "int");
	CHECK_EQ(tp_args_row(tp, (uint32_t)a).v.i, -5);
	CHECK((a = find_arg(tp, set, "args.r")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_type_name_id(tp, tp_args_row(tp, (uint32_t)a).type)), "real");
	CHECK_DBL_EQ(tp_args_row(tp, (uint32_t)a).v.d, 1.5);
	CHECK((a = find_arg(tp, set, "args.s")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_row(tp, (uint32_t)a).v.s), "h\xc3\xa9\n");
	CHECK((a = find_arg(tp, set, "args.t")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_type_name_id(tp, tp_args_row(tp, (uint32_t)a).type)), "bool");
	CHECK_EQ(tp_args_row(tp, (uint32_t)a).v.i, 1);
	CHECK((a = find_arg(tp, set, "args.f")) >= 0);
	CHECK_EQ(tp_args_row(tp, (uint32_t)a).v.i, 0);
	CHECK_EQ(find_arg(tp, set, "args.n"), -1);
	CHECK((a = find_arg(tp, set, "args.o.x.y")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_row(tp, (uint32_t)a).flat_key), "args.o.x.y");
	CHECK((a = find_arg(tp, set, "args.arr[0]")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_row(tp, (uint32_t)a).flat_key), "args.arr");
	CHECK((a = find_arg(tp, set, "args.arr[1].k")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_row(tp, (uint32_t)a).flat_key), "args.arr.k");
	CHECK((a = find_arg(tp, set, "args.arr[2][0]")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_row(tp, (uint32_t)a).flat_key), "args.arr");
	CHECK_EQ(find_arg(tp, set, "args.e"), -1);
	CHECK((a = find_arg(tp, set, "args.big")) >= 0);
	CHECK_STR_EQ(s_(tp, tp_args_type_name_id(tp, tp_args_row(tp, (uint32_t)a).type)), "real");
	/* Keys in document order. */
	CHECK(find_arg(tp, set, "args.i") < find_arg(tp, set, "args.r"));
	tp_free(tp);
}

/* The args object's keys are remembered by position from one event to the
 * next: a key that differs from last time's at its position (another key,
 * a prefix of it, spaces, an escape, a key too long to remember, a nested
 * object) still gets its own name and value. */
TEST(tp_json_args_keys_by_position)
{
	static const char *const args[] = {
	    "{\"a\":1,\"bb\":2}",
	    "{\"a\":3,\"bc\":4}",
	    "{\"bc\":5,\"a\":6}",
	    "{ \"a\" : 7 ,\"b\\u0062\":8}",
	    "{\"a\":9,\"bb\":{\"a\":10}}",
	    "{\"a\":11,\"bb\":12}",
	    "{\"abcdefghijklmnop\":13,\"a\":14}",
	    "{\"ab\":15,,\"a\":16}",
	};
	static const char *const want[][2] = {
	    {"args.a", "args.bb"},
	    {"args.a", "args.bc"},
	    {"args.bc", "args.a"},
	    {"args.a", "args.bb"},
	    {"args.a", "args.bb.a"},
	    {"args.a", "args.bb"},
	    {"args.abcdefghijklmnop", "args.a"},
	    {"args.ab", "args.a"},
	};
	static char j[4096];
	size_t len = 0;
	j[len++] = '[';
	for (size_t i = 0; i < TB_ARRAY_SIZE(args); i++)
		len += (size_t)snprintf(j + len, sizeof j - len,
		                        "%s{\"ph\":\"X\",\"ts\":%zu,\"dur\":1,\"pid\":1,\"tid\":1,"
		                        "\"name\":\"e%zu\",\"args\":%s}",
		                        i ? "," : "", i * 10, i, args[i]);
	j[len++] = ']';
	struct tp *tp = load_chunked(j, len, len);
	const struct tp_slice_table *t = &tp->t.slice;
	CHECK_EQ(t->n, TB_ARRAY_SIZE(args));
	for (uint32_t i = 0; i < t->n && i < TB_ARRAY_SIZE(args); i++) {
		long a0 = find_arg(tp, t->arg_set_id[i], want[i][0]);
		long a1 = find_arg(tp, t->arg_set_id[i], want[i][1]);
		CHECK(a0 >= 0 && a1 == a0 + 1);
		if (a0 < 0 || a1 < 0)
			continue;
		int64_t v0 = tp_args_row(tp, (uint32_t)a0).v.i,
		        v1 = tp_args_row(tp, (uint32_t)a1).v.i;
		CHECK_EQ(v0, (int64_t)(2 * i + 1));
		CHECK_EQ(v1, v0 + 1);
	}
	tp_free(tp);
}

/* Event keys are remembered by position too: events whose keys come in
 * another order, spelled with spaces or escapes, or missing, are read as
 * well as those that repeat the last shape. */
TEST(tp_json_event_keys_by_position)
{
	static const char trace[] =
	    "[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"a\"},"
	    "{\"ph\":\"X\",\"ts\":2,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"b\"},"
	    "{\"ts\":3,\"ph\":\"X\",\"tid\":1,\"dur\":3,\"pid\":1,\"name\":\"c\"},"
	    "{ \"ph\" : \"X\" , \"ts\":4,\"d\\u0075r\":4,\"pid\":1,\"tid\":1,\"n\\u0061me\":\"d\"},"
	    "{\"ph\":\"X\",\"tss\":9,\"ts\":5,\"dur\":5,\"pid\":1,\"tid\":1,\"name\":\"e\"},"
	    "{\"ph\":\"X\",\"ts\":6,\"pid\":1,\"tid\":1,\"name\":\"f\",\"dur\":6},"
	    "{\"ph\":\"X\",\"ts\":7,\"dur\":7,\"pid\":1,\"tid\":1,\"name\":\"g\"}]";
	struct tp *tp = load(trace);
	const struct tp_slice_table *t = &tp->t.slice;
	CHECK_EQ(t->n, 7);
	for (uint32_t i = 0; i < t->n && i < 7; i++) {
		CHECK_STR_EQ(s_(tp, t->name[i]), ((char[]){(char)('a' + i), 0}));
		CHECK_EQ(t->ts[i], (int64_t)(i + 1) * 1000);
		CHECK_EQ(t->dur[i], (int64_t)(i + 1) * 1000);
	}
	tp_free(tp);
}

/* Events with identical args share one arg set, whether they are parsed
 * straight away or held in an equal-ts group, and whatever lies between
 * them (events are parsed a few behind the sorter, their sets prefetched). */
TEST(tp_json_args_sets_shared)
{
	static char j[16384];
	size_t len = 0;
	j[len++] = '[';
	for (int i = 0; i < 100; i++)
		len += (size_t)snprintf(j + len, sizeof j - len,
		                        "%s{\"ph\":\"X\",\"ts\":%d,\"dur\":1,\"pid\":1,\"tid\":1,"
		                        "\"name\":\"e%d\",\"args\":{\"v\":%d,\"s\":\"x\"}}",
		                        i ? "," : "", i / 2, i, i % 7);
	j[len++] = ']';
	struct tp *tp = load_chunked(j, len, len);
	const struct tp_slice_table *t = &tp->t.slice;
	CHECK_EQ(t->n, 100);
	uint32_t first[7];
	for (uint32_t i = 0; i < t->n; i++) {
		long e = strtol(s_(tp, t->name[i]) + 1, NULL, 10);
		if (e < 7)
			first[e] = t->arg_set_id[i];
	}
	for (int e = 0; e < 7; e++)
		for (int f = e + 1; f < 7; f++)
			CHECK(first[e] != first[f]);
	for (uint32_t i = 0; i < t->n; i++) {
		long e = strtol(s_(tp, t->name[i]) + 1, NULL, 10);
		CHECK_EQ(t->arg_set_id[i], first[e % 7]);
	}
	/* 7 shared sets of 2 rows, and the thread track's utid dimension. */
	CHECK_EQ(tp->t.args.n, 15);
	tp_free(tp);
}

/* Arg rows keep every integer width and sign, and long keys, exactly. */
TEST(tp_json_args_int_widths)
{
	struct tp *tp = load("[{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"pid\":1,\"tid\":1,\"name\":\"a\","
	                     "\"args\":{\"a\":127,\"b\":-128,\"c\":300,\"d\":-32769,\"e\":70000,"
	                     "\"f\":-2147483649,\"g\":5000000000,\"h\":-9223372036854775807,"
	                     "\"a_key_longer_than_sixteen\":{\"and_another_long_one\":7}}}]");
	static const struct {
		const char *key;
		int64_t v;
	} want[] = {{"args.a", 127},
	            {"args.b", -128},
	            {"args.c", 300},
	            {"args.d", -32769},
	            {"args.e", 70000},
	            {"args.f", -2147483649LL},
	            {"args.g", 5000000000LL},
	            {"args.h", -9223372036854775807LL},
	            {"args.a_key_longer_than_sixteen.and_another_long_one", 7}};
	uint32_t set = tp->t.slice.arg_set_id[find_slice(tp, "a")];
	for (size_t i = 0; i < TB_ARRAY_SIZE(want); i++) {
		long a = find_arg(tp, set, want[i].key);
		CHECK(a >= 0);
		CHECK_EQ(tp_args_row(tp, (uint32_t)a).v.i, want[i].v);
	}
	tp_free(tp);
}

static const char mixed_trace[] =
    "\xef\xbb\xbf {\"displayTimeUnit\":\"ns\",\"stackFrames\":{\"1\":{\"name\":\"x]}\\\"\"}},"
    "\"metadata\":{\"source\":\"DevTools\",\"n\":12,\"obj\":{\"a\":[1]}},"
    "\"traceEvents\":[\n"
    "{\"ph\":\"B\",\"pid\":1,\"tid\":1,\"ts\":1,\"name\":\"b \\\"q\\\" "
    "{\",\"args\":{\"a\":[1,2,{\"b\":\"}\"}]}},\n"
    "{\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":3,\"name\":\"x\",\"args\":{\"v\":1.25}},\n"
    "{},\n"
    "{\"ts\":3,\"name\":\"noph\"},\n"
    "{\"ph\":\"C\",\"pid\":1,\"ts\":4,\"name\":\"c\",\"args\":{\"v\":3}},\n"
    "{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":9},\n"
    "{\"ph\":\"b\",\"pid\":1,\"ts\":5,\"name\":\"as\",\"cat\":\"k\",\"id\":7},\n"
    "{\"ph\":\"e\",\"pid\":1,\"ts\":6,\"name\":\"as\",\"cat\":\"k\",\"id\":7},\n"
    "],\"systemTraceEvents\":\"# tracer: nop\\n\",\"other\":[1,2,{\"}\":\"]\"}]}";

/* Every row of the slice, counter and args tables, as text. */
static char *dump(const struct tp *tp)
{
	size_t cap = 1 << 16, len = 0;
	char *out = tb_malloc(cap);
	for (uint32_t i = 0; i < tp->t.slice.n && len + 256 < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "s %lld %lld %s %u %u\n",
		                        (long long)tp->t.slice.ts[i], (long long)tp->t.slice.dur[i],
		                        s_(tp, tp->t.slice.name[i]), tp->t.slice.depth[i],
		                        tp->t.slice.arg_set_id[i]);
	for (uint32_t i = 0; i < tp->t.counter.n && len + 256 < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "c %lld %g\n",
		                        (long long)tp->t.counter.ts[i], tp->t.counter.value[i]);
	for (uint32_t i = 0; i < tp->t.args.n && len + 256 < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "a %u %s %s\n",
		                        tp->t.args.arg_set_id[i], s_(tp, tp->t.args.key[i]),
		                        s_(tp, tp_args_row(tp, (uint32_t)i).flat_key));
	for (uint32_t i = 0; i < tp->t.metadata.n && len + 256 < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "m %s\n",
		                        s_(tp, tp->t.metadata.name[i]));
	for (int i = 0; i < TP_STAT_COUNT && len + 256 < cap; i++)
		len += (size_t)snprintf(out + len, cap - len, "%llu ",
		                        (unsigned long long)tp->stats[i]);
	return out;
}

TEST(tp_json_container_and_chunking)
{
	size_t len = sizeof mixed_trace - 1;
	struct tp *whole = load_chunked(mixed_trace, len, len);
	CHECK_STR_EQ(tp_error(whole), "");
	CHECK_EQ(whole->t.slice.n, 3);
	long b = find_slice(whole, "b \"q\" {");
	CHECK(b >= 0);
	CHECK_EQ(whole->t.slice.dur[b], 8000);
	CHECK(find_arg(whole, whole->t.slice.arg_set_id[b], "args.a[2].b") >= 0);
	CHECK_EQ(whole->t.counter.n, 1);
	CHECK_EQ(whole->stats[TP_STAT_json_display_time_unit], 1);
	CHECK_EQ(whole->stats[TP_STAT_json_tokenizer_failure], 1);
	int md = 0;
	for (uint32_t i = 0; i < whole->t.metadata.n; i++) {
		const char *n = s_(whole, whole->t.metadata.name[i]);
		if (strcmp(n, "json_metadata.source") == 0) {
			CHECK_STR_EQ(s_(whole, whole->t.metadata.str_value[i]), "DevTools");
			md++;
		} else if (strcmp(n, "json_metadata.n") == 0) {
			CHECK_EQ(whole->t.metadata.int_value[i], 12);
			md++;
		}
	}
	CHECK_EQ(md, 2);
	char *want = dump(whole);
	tp_free(whole);
	static const size_t chunks[] = {1, 2, 3, 7, 64};
	for (size_t c = 0; c < TB_ARRAY_SIZE(chunks); c++) {
		struct tp *tp = load_chunked(mixed_trace, len, chunks[c]);
		char *got = dump(tp);
		tp_free(tp);
		int same = strcmp(got, want) == 0;
		if (!same)
			fprintf(stderr, "chunk %zu:\n%s\nwant:\n%s\n", chunks[c], got, want);
		tb_free(got);
		if (!same)
			tb_free(want);
		CHECK(same);
	}
	tb_free(want);
}

TEST(tp_json_truncated_and_trailing)
{
	/* Perfetto's test_json_incomplete: the last event is cut off. */
	struct tp *tp = load("\n[\n{\"name\":\"typecheck\",\"ph\":\"X\",\"ts\":4619295550.000,"
	                     "\"dur\":8000.000,\"pid\":306339,\"tid\":3},\n"
	                     "{\"name\":\"cut\",\"ph\":\"X\",\"ts\":46192955");
	CHECK_EQ(tp->t.slice.n, 1);
	CHECK_EQ(tp->t.slice.ts[0], 4619295550000LL);
	CHECK_EQ(tp->t.slice.dur[0], 8000000);
	tp_free(tp);
	tp = load("{\"traceEvents\":[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,"
	          "\"name\":\"real_event\",},{},]}");
	CHECK_EQ(tp->t.slice.n, 1);
	CHECK_EQ(tp->stats[TP_STAT_json_tokenizer_failure], 0);
	tp_free(tp);
	/* Malformed events are counted and skipped; later ones still load. */
	tp = load("[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":},"
	          "{\"ph\":\"X\",\"ts\":3,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"ok\"}]");
	CHECK_EQ(tp->t.slice.n, 1);
	CHECK_EQ(tp->stats[TP_STAT_json_tokenizer_failure], 1);
	tp_free(tp);
	/* Stray closers and scalars in the array are skipped (used to hang). */
	tp = load(
	    "[{\"ph\":\"X\",\"pid\":1,]},}, 5, \"s\", {\"ph\":\"X\",\"ts\":3,\"dur\":2,\"pid\":1,"
	    "\"name\":\"ok\"}]");
	CHECK_EQ(tp->t.slice.n, 1);
	tp_free(tp);
	tp = tp_new(NULL);
	CHECK(tp_parse(tp, (const uint8_t *)"  x", 3) == 0 || tp_error(tp)[0]);
	tp_free(tp);
}

/* Load a file in 64 KiB chunks; returns the tp or NULL. */
static struct tp *load_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct tp *tp = tp_new(NULL);
	static uint8_t buf[1 << 16];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, f)) > 0)
		if (tp_parse(tp, buf, n) != 0)
			break;
	fclose(f);
	tp_end_of_file(tp);
	return tp;
}

TEST(tp_json_gzip)
{
	const char *shared = test_shared_dir();
	if (!shared)
		TEST_SKIP("../shared not found");
	char path[1024];
	snprintf(path, sizeof path,
	         "%s/corpus/chrome_json/GoogleChrome+lighthouse__lh-animation-trace.json.gz",
	         shared);
	struct tp *tp = load_file(path);
	if (!tp)
		TEST_SKIP("%s not found", path);
	CHECK_STR_EQ(tp_error(tp), "");
	CHECK_STR_EQ(tp_trace_type(tp), "json");
	CHECK(tp->t.slice.n > 100);
	tp_free(tp);
}

/* What each JSON file of ../shared/corpus imports, loaded in 64 KiB chunks:
 * its type and rows of slice, counter, thread, process, flow and args. The corpus tier
 * (tests/corpus/) holds these files to Perfetto's answers through the
 * shell; this holds the library, under the sanitizers, to the same rows
 * whatever the chunking. */
static const struct json_corpus_file {
	const char *path; /* under ../shared/corpus */
	const char *type; /* tp_trace_type: "json", or the archive's */
	uint32_t slices, counters, threads, processes, flows, args;
} json_corpus[] = {
    {"chrome_json/GoogleChrome+lighthouse__lh-animation-trace.json.gz", "json", 25327, 0, 28, 6,
     301, 15056},
    {"chrome_json/GoogleChrome+lighthouse__lh-bad-nav-start-ts.json", "json", 3144, 0, 3, 2, 0,
     2281},
    {"chrome_json/GoogleChrome+lighthouse__lh-cpu-profiler-m86.trace.json", "json", 77, 0, 34, 4, 0,
     338},
    {"chrome_json/GoogleChrome+lighthouse__lh-lcp-m78.json", "json", 350, 0, 5, 3, 0, 1747},
    {"chrome_json/GoogleChrome+lighthouse__lh-load.json", "json", 8531, 0, 43, 4, 0, 3340},
    {"chrome_json/GoogleChrome+lighthouse__lh-no-tracingstarted-m74.json", "json", 1741, 0, 20, 4,
     0, 690},
    {"chrome_json/GoogleChrome+lighthouse__lh-pid-change.json", "json", 9254, 0, 42, 6, 436, 13166},
    {"chrome_json/GoogleChrome+lighthouse__lh-progressive-app.json", "json", 10390, 0, 53, 8, 0,
     6367},
    {"chrome_json/GoogleChrome+lighthouse__lh-timespan-responsiveness-m103.trace.json", "json", 429,
     0, 34, 5, 0, 920},
    {"chrome_json/GoogleChrome+lighthouse__lh-tracingstarted-after-navstart.json", "json", 3331, 0,
     280, 7, 14, 5509},
    {"chrome_json/GoogleChrome+lighthouse__lh-user-timing-trace.json", "json", 2250, 0, 25, 5, 32,
     2305},
    {"chrome_json/catapult-project+catapult__async_begin_end.json", "json", 4, 0, 9, 5, 0, 1},
    {"chrome_json/catapult-project+catapult__big_trace.json", "json", 933, 0, 5, 5, 0, 10},
    {"chrome_json/catapult-project+catapult__chromeos_system_trace.json", "json", 0, 0, 17, 7, 0,
     4},
    {"chrome_json/catapult-project+catapult__flow.json", "json", 1625, 0, 28, 5, 886, 248},
    {"chrome_json/catapult-project+catapult__flow_simple.json", "json", 5, 0, 11, 6, 2, 7},
    {"chrome_json/catapult-project+catapult__fuchsia_trace.json.gz", "json", 67047, 1612, 19, 6,
     2160, 2774},
    {"chrome_json/catapult-project+catapult__google_cloud_trace.json", "json", 0, 0, 1, 1, 0, 0},
    {"chrome_json/catapult-project+catapult__instance_counters.json", "json", 2, 8, 3, 2, 0, 2},
    {"chrome_json/catapult-project+catapult__instant_events.json", "json", 5, 0, 6, 3, 0, 18},
    {"chrome_json/catapult-project+catapult__lthi_cats.json.gz", "json", 57782, 1627, 49, 8, 697,
     10302},
    {"chrome_json/catapult-project+catapult__main_thread_has_unclosed_slices.json", "json", 1684, 0,
     23, 3, 0, 354},
    {"chrome_json/catapult-project+catapult__multiple_input_latency.json", "json", 10814, 0, 12, 4,
     2452, 283},
    {"chrome_json/catapult-project+catapult__nanoseconds.json", "json", 8, 0, 2, 2, 0, 1},
    {"chrome_json/catapult-project+catapult__nestable_async.json", "json", 11, 0, 3, 2, 0, 8},
    {"chrome_json/catapult-project+catapult__nestable_async_annotation.json", "json", 11, 0, 4, 2,
     0, 8},
    {"chrome_json/catapult-project+catapult__perf_sampling_trace_with_trace_events.json.gz", "json",
     41996, 179, 15, 3, 118, 4588},
    {"chrome_json/catapult-project+catapult__profile-chrome_systrace_perf_chrome_data.json", "json",
     6, 0, 3, 2, 0, 7},
    {"chrome_json/catapult-project+catapult__quads_with_render_passes.json", "json", 0, 0, 12, 5, 0,
     4},
    {"chrome_json/catapult-project+catapult__simple_trace.json", "json", 18, 5, 5, 3, 0, 5},
    {"chrome_json/catapult-project+catapult__simple_trace_gz.gz", "json", 16, 5, 4, 2, 0, 5},
    {"chrome_json/catapult-project+catapult__simple_trace_zip.zip", "zip", 16, 5, 4, 2, 0, 5},
    {"chrome_json/catapult-project+catapult__tall_trace.json", "json", 18, 0, 18, 3, 0, 16},
    {"chrome_json/catapult-project+catapult__tcmalloc_trace.json", "json", 2639, 0, 9, 5, 0, 1005},
    {"chrome_json/catapult-project+catapult__thread_time_visualisation.json.gz", "json", 43020, 161,
     29, 3, 196, 3942},
    {"chrome_json/catapult-project+catapult__trace-with-bad-world-bounds.json", "json", 0, 0, 13, 5,
     0, 0},
    {"chrome_json/catapult-project+catapult__traceviewify.json", "json", 656, 0, 2, 2, 0, 1},
    {"chrome_json/catapult-project+catapult__trivial_trace.json", "json", 2, 0, 3, 2, 0, 1},
    {"chrome_json/catapult-project+catapult__v8_runtime_call_stats.json", "json", 1305, 0, 24, 7, 0,
     332},
    {"chrome_json/catapult-project+catapult__webview.json.gz", "json", 8695, 0, 39, 2, 624, 927},
    {"chrome_json/catapult-project+catapult__x_event_trace.json", "json", 3300, 42, 7, 2, 0, 1910},
    {"chrome_json/firefox-devtools+profiler__chrome-trace-issue-5429.json.gz", "json", 51, 0, 4, 3,
     0, 10},
    {"chrome_json/firefox-devtools+profiler__chrome-tracing.json.gz", "json", 194, 0, 99, 14, 0,
     131},
    {"chrome_json/firefox-devtools+profiler__test.chrome-unchunked.json", "json", 100, 0, 32, 5, 0,
     1112},
    {"chrome_json/firefox-devtools+profiler__test.chrome.gz", "json", 4490, 0, 26, 4, 0, 739},
    {"chrome_json/jlfwong+speedscope__speedscope-te__bex-interaction.json", "json", 12, 0, 2, 2, 0,
     1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__end-event-with-empty-stack.json", "json", 1, 0,
     2, 2, 0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__end-non-top-of-stack.json", "json", 3, 0, 2, 2,
     0, 3},
    {"chrome_json/jlfwong+speedscope__speedscope-te__event-reordering-name-match.json", "json", 3,
     0, 3, 2, 0, 3},
    {"chrome_json/jlfwong+speedscope__speedscope-te__hermes-multiple-frames.json", "json", 4, 0, 2,
     2, 0, 25},
    {"chrome_json/jlfwong+speedscope__speedscope-te__invalid-x-nesting.json", "json", 2, 0, 2, 2, 0,
     10},
    {"chrome_json/jlfwong+speedscope__speedscope-te__matching-x.json", "json", 5, 0, 2, 2, 0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__mismatched-args.json", "json", 1, 0, 2, 2, 0,
     2},
    {"chrome_json/jlfwong+speedscope__speedscope-te__mismatched-name.json", "json", 1, 0, 2, 2, 0,
     1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__multi-thread-with-samples.json", "json", 2, 0,
     5, 2, 0, 2},
    {"chrome_json/jlfwong+speedscope__speedscope-te__multiprocess.json", "json", 8, 0, 8, 5, 0, 7},
    {"chrome_json/jlfwong+speedscope__speedscope-te__must-retain-original-order.json", "json", 7, 0,
     3, 2, 0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__not-enough-end-events.json", "json", 3, 0, 2,
     2, 0, 3},
    {"chrome_json/jlfwong+speedscope__speedscope-te__only-begin-events.json", "json", 3, 0, 2, 2, 0,
     3},
    {"chrome_json/jlfwong+speedscope__speedscope-te__out-of-order-unbalanced-name.json", "json", 2,
     0, 2, 2, 0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__out-of-order.json", "json", 3, 0, 2, 2, 0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__simple-hermes.json", "json", 2, 0, 2, 2, 0,
     15},
    {"chrome_json/jlfwong+speedscope__speedscope-te__simple-object.json", "json", 2, 0, 2, 2, 0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__simple-partial-trailing-comma.json", "json", 3,
     0, 2, 2, 0, 2},
    {"chrome_json/jlfwong+speedscope__speedscope-te__simple-partial-whitespace.json", "json", 3, 0,
     2, 2, 0, 2},
    {"chrome_json/jlfwong+speedscope__speedscope-te__simple-partial.json", "json", 3, 0, 2, 2, 0,
     2},
    {"chrome_json/jlfwong+speedscope__speedscope-te__simple-with-samples.json", "json", 0, 0, 4, 2,
     0, 0},
    {"chrome_json/jlfwong+speedscope__speedscope-te__simple.json", "json", 3, 0, 2, 2, 0, 2},
    {"chrome_json/jlfwong+speedscope__speedscope-te__simultaneous-anonymous-calls.json", "json", 6,
     0, 2, 2, 0, 5},
    {"chrome_json/jlfwong+speedscope__speedscope-te__too-many-end-events.json", "json", 2, 0, 2, 2,
     0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__unbalanced-args.json", "json", 2, 0, 2, 2, 0,
     3},
    {"chrome_json/jlfwong+speedscope__speedscope-te__unbalanced-name.json", "json", 2, 0, 2, 2, 0,
     1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__x-events-matching-end.json", "json", 9, 0, 2,
     2, 0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__x-events-matching-start.json", "json", 9, 0, 2,
     2, 0, 1},
    {"chrome_json/jlfwong+speedscope__speedscope-te__zero-duration-events.json", "json", 4, 0, 2, 2,
     0, 1},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-b200-eager_trace.json.gz", "json", 22355, 0, 4, 3,
     929, 140555},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-h100-bert-small.json.gz", "json", 2298, 0, 24, 21,
     61, 15084},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-h100-qwen1.5-0.5b.json.gz", "json", 14532, 0, 24,
     21, 1198, 133699},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-mi210-gpu_only_trace.json.gz", "json", 1196, 0,
     24, 21, 562, 11404},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-mi300-bert-small.json.gz", "json", 2371, 0, 23,
     21, 61, 18099},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-mi300-resnet_act_checkpoint.json.gz", "json",
     49210, 0, 25, 21, 2817, 295764},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-sglang-qwen3-8b-decode.json.gz", "json", 1471, 0,
     5, 3, 14, 3638},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-torch_compile_triton.json.gz", "json", 117, 0, 23,
     21, 12, 1235},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-vllm-graph_capture_rank_0.pt.trace.json.gz",
     "json", 128047, 0, 24, 21, 10, 443320},
    {"pytorch_kineto/AMD-AGI+TraceLens__tracelens-xdit-sd3.5-profile_rank0.json.gz", "json", 200516,
     0, 23, 21, 8065, 1189697},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__alexnet_trace.json.gz", "json", 870, 0,
     17, 13, 117, 3943},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__amd_mi250_rocm62.json.gz", "json", 115,
     0, 24, 21, 20, 1278},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__backward_thread.json", "json", 7, 0, 5,
     3, 0, 56},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__cuda_event_sync_multi_stream.json.gz",
     "json", 59, 0, 18, 13, 8, 285},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__cupti_profiler_trace.json.gz", "json",
     2327, 0, 17, 13, 0, 6911},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__df_index_resolver.json.gz", "json",
     151391, 0, 18, 13, 22290, 794471},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__distributed_info_not_found.json.gz",
     "json", 2467, 0, 2, 2, 0, 30200},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__mtia_inference_rank_0.json.gz", "json",
     14181, 0, 70, 7, 1166, 144684},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__mtia_rank_0.json.gz", "json", 138377,
     0, 18, 6, 3658, 1476746},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__nccl_data.json.gz", "json", 26935, 0,
     18, 13, 4317, 127938},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__negative_queue_length_rank0.json.gz",
     "json", 67219, 0, 24, 13, 6875, 382179},
    {"pytorch_kineto/"
     "facebookresearch+HolisticTraceAnalysis__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
     "json", 45422, 0, 17, 13, 7000, 193588},
    {"pytorch_kineto/"
     "facebookresearch+HolisticTraceAnalysis__rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz",
     "json", 18, 0, 9, 5, 0, 133},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__timeline_sampled_rank-0.json.gz",
     "json", 4811, 0, 18, 11, 0, 49657},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__trace_diff_test.json.gz", "json",
     68326, 0, 20, 13, 15018, 573454},
    {"pytorch_kineto/facebookresearch+HolisticTraceAnalysis__triton_example.json.gz", "json", 10, 0,
     25, 22, 1, 86},
    {"go_trace_json/golang+go__nethttp-tests.jsontrace.goid1.json", "json", 280, 2458, 26, 3, 104,
     40},
    {"go_trace_json/golang+go__nethttp-tests.jsontrace.json", "json", 952, 6147, 8, 3, 132, 26},
    {"go_trace_json/golang+go__sync-tests.jsontrace.json", "json", 3832, 32942, 10, 3, 3579, 24},
    {"node_trace_events/nodejs__npm-version.node_trace.log", "json", 1828, 44, 7, 2, 0, 1012},
    {"node_trace_events/nodejs__timeout-loop.node_trace.log", "json", 32, 0, 7, 2, 0, 23},
    {"devtools/jlfwong+speedscope__chrome116-Trace-20230603T221323.json", "json", 2800, 0, 20, 5,
     13, 1009},
    {"devtools/jlfwong+speedscope__chrome141-no-arg-data.json", "json", 0, 0, 49, 5, 0, 0},
    {"devtools/jlfwong+speedscope__chrome65-simple-timeline.json", "json", 2943, 0, 49, 7, 0, 9769},
    {"devtools/jlfwong+speedscope__chrome66-worker.json", "json", 2021, 0, 50, 5, 0, 17694},
    {"devtools/jlfwong+speedscope__chrome69-simple.json", "json", 1125, 0, 33, 3, 0, 519},
    {"devtools/jlfwong+speedscope__chrome70-worker.json", "json", 2275, 0, 62, 4, 0, 909},
    {"devtools/jlfwong+speedscope__chrome85-parcel.json", "json", 3609, 0, 29, 5, 8, 8182},
};

static const struct json_corpus_file *json_corpus_find(const char *path)
{
	for (size_t i = 0; i < TB_ARRAY_SIZE(json_corpus); i++)
		if (strcmp(json_corpus[i].path, path) == 0)
			return &json_corpus[i];
	return NULL;
}

TEST(tp_json_corpus_loads)
{
	const char *shared = test_shared_dir();
	if (!shared)
		TEST_SKIP("../shared not found");
	static const char *const dirs[] = {"chrome_json", "pytorch_kineto", "go_trace_json",
	                                   "node_trace_events", "devtools"};
	/* Every file of those folders has its expected rows here. */
	size_t files = 0;
	for (size_t d = 0; d < TB_ARRAY_SIZE(dirs); d++) {
		char dir[1024];
		snprintf(dir, sizeof dir, "%s/corpus/%s", shared, dirs[d]);
		DIR *dp = opendir(dir);
		CHECK(dp);
		struct dirent *de;
		while ((de = readdir(dp))) {
			char rel[1024];
			if (de->d_name[0] == '.')
				continue;
			snprintf(rel, sizeof rel, "%s/%s", dirs[d], de->d_name);
			if (!json_corpus_find(rel))
				test_report(__FILE__, __LINE__, "%s: not in json_corpus[]", rel);
			files++;
		}
		closedir(dp);
	}
	CHECK_EQ(files, TB_ARRAY_SIZE(json_corpus));
	for (size_t i = 0; i < TB_ARRAY_SIZE(json_corpus); i++) {
		const struct json_corpus_file *w = &json_corpus[i];
		char path[2048];
		snprintf(path, sizeof path, "%s/corpus/%s", shared, w->path);
		struct tp *tp = load_file(path);
		if (!tp) {
			test_report(__FILE__, __LINE__, "cannot open '%s'", path);
			continue;
		}
		const struct tp_tables *t = &tp->t;
		if (tp_error(tp)[0] || strcmp(tp_trace_type(tp), w->type) != 0 ||
		    t->slice.n != w->slices || t->counter.n != w->counters ||
		    t->thread.n != w->threads || t->process.n != w->processes ||
		    t->flow.n != w->flows || t->args.n != w->args)
			test_report(
			    __FILE__, __LINE__,
			    "%s: type %s error '%s', rows slice %u counter %u thread %u "
			    "process %u flow %u args %u; want %s, no error, %u %u %u %u %u %u",
			    w->path, tp_trace_type(tp), tp_error(tp), t->slice.n, t->counter.n,
			    t->thread.n, t->process.n, t->flow.n, t->args.n, w->type, w->slices,
			    w->counters, w->threads, w->processes, w->flows, w->args);
		tp_free(tp);
	}
}

/* ---- archives of gzip'd members --------------------------------------------- */

/* Append a ustar entry (header, data, padding) to a growable buffer. */
static void tar_entry(uint8_t **buf, size_t *len, const char *name, const uint8_t *p, size_t n)
{
	size_t pad = (512 - n % 512) % 512;
	*buf = tb_realloc(*buf, *len + 512 + n + pad);
	uint8_t *h = *buf + *len;
	memset(h, 0, 512);
	snprintf((char *)h, 100, "%s", name);
	snprintf((char *)h + 124, 12, "%011o", (unsigned)n);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 512, p, n);
	memset(h + 512 + n, 0, pad);
	*len += 512 + n + pad;
}

static size_t gzip_bytes(const char *s, size_t n, uint8_t *out, size_t cap)
{
	z_stream z = {0};
	if (deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	z.next_in = (Bytef *)s;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	deflateEnd(&z);
	return rc == Z_STREAM_END ? z.total_out : 0;
}

/* Decompressed gzip members count towards the archive's byte cap, all
 * together: three members of 40 KiB each do not fit in 100 KiB, although
 * each alone does (and the archive itself is a few KiB). */
TEST(tp_json_archive_gzip_members_share_the_cap)
{
	enum { MEMBER = 40 << 10 };
	char *json = tb_malloc(MEMBER);
	memset(json, ' ', MEMBER);
	static const char ev[] =
	    "[{\"ph\":\"X\",\"name\":\"g\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]";
	memcpy(json, ev, sizeof ev - 1);
	uint8_t gz[4096];
	size_t gzn = gzip_bytes(json, MEMBER, gz, sizeof gz);
	CHECK(gzn > 0);
	uint8_t *tar = NULL;
	size_t len = 0;
	static const char *const names[] = {"a.json.gz", "b.json.gz", "c.json.gz"};
	for (int i = 0; i < 3; i++)
		tar_entry(&tar, &len, names[i], gz, gzn);
	tar = tb_realloc(tar, len + 1024);
	memset(tar + len, 0, 1024);
	len += 1024;

	const uint64_t caps[] = {100 << 10, 1 << 20};
	for (int i = 0; i < 2; i++) {
		struct tp *tp = tp_new(NULL);
		tp->archive_max_bytes = caps[i];
		int rc = tp_parse(tp, tar, len);
		if (rc == 0)
			rc = tp_end_of_file(tp);
		if (i == 0) {
			CHECK(rc < 0);
			CHECK(strstr(tp_error(tp), "more than 102400 bytes") != NULL);
		} else {
			CHECK_EQ(rc, 0);
			CHECK_EQ(tp->t.slice.n, 3);
		}
		tp_free(tp);
	}
	tb_free(tar);
	tb_free(json);
}

/* ---- gzip on a helper thread (io/gunzip.c) -------------------------------- */

struct gz_sink {
	uint8_t *buf;
	size_t len, cap;
	int fail_at; /* return -EIO at this call (0: never) */
	int calls;
};

static int gz_sink_fn(void *ctx, const uint8_t *p, size_t n)
{
	struct gz_sink *s = ctx;
	if (++s->calls == s->fail_at)
		return -EIO;
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->buf = tb_realloc(s->buf, s->cap);
	}
	memcpy(s->buf + s->len, p, n);
	s->len += n;
	return 0;
}

/* gzip members of src[0, n) cut at the given points, concatenated. */
static uint8_t *gz_members(const uint8_t *src, size_t n, size_t members, size_t *out_len)
{
	size_t cap = n + 1024 * (members + 1), len = 0;
	uint8_t *out = tb_malloc(cap);
	for (size_t m = 0; m < members; m++) {
		size_t a = n * m / members, b = n * (m + 1) / members;
		z_stream zs = {0};
		TB_CHECK(deflateInit2(&zs, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) ==
		         Z_OK);
		zs.next_in = (Bytef *)src + a;
		zs.avail_in = (uInt)(b - a);
		zs.next_out = out + len;
		zs.avail_out = (uInt)(cap - len);
		TB_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
		len = cap - zs.avail_out;
		deflateEnd(&zs);
	}
	*out_len = len;
	return out;
}

/* Feed gz in pieces of `piece` bytes to a fresh (async or not) stream. */
static int gz_run(bool async, const uint8_t *gz, size_t n, size_t piece, struct gz_sink *s,
                  struct tb_err *err)
{
	struct tp_gunzip *g = async ? tp_gunzip_new_async() : tp_gunzip_new();
	int rc = 0;
	for (size_t off = 0; off < n && rc == 0; off += piece)
		rc = tp_gunzip_feed(g, gz + off, n - off < piece ? n - off : piece, gz_sink_fn, s,
		                    err);
	if (rc == 0)
		rc = tp_gunzip_finish(g, gz_sink_fn, s, err);
	tp_gunzip_free(g);
	return rc;
}

/* The helper-thread gunzip hands on the original bytes, in order, as the
 * inline one does, for streams larger than its queues (12 MiB over 3
 * members, fed whole, in 1 MiB and in 4 KiB pieces); reports corrupt, truncated and
 * trailing-garbage streams with the same errors; and stops cleanly when
 * the sink fails or the caller frees it mid-stream. */
TEST(tp_gunzip_async_matches_inline)
{
	size_t n = 12u << 20, gz_len;
	uint8_t *src = tb_malloc(n);
	uint64_t h = 1;
	for (size_t i = 0; i < n; i++) {
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		src[i] = (uint8_t)("event,ts,dur,name\n"[(h >> 59) % 18] ^ ((h >> 40) & 1));
	}
	uint8_t *gz = gz_members(src, n, 3, &gz_len);
	static const size_t pieces[] = {(size_t)-1, 1u << 20, 4096};

	for (size_t k = 0; k <= TB_ARRAY_SIZE(pieces); k++) {
		/* Each piece size on the helper thread, then inline once. */
		bool async = k < TB_ARRAY_SIZE(pieces);
		struct gz_sink a = {0};
		struct tb_err ea = {0};
		CHECK_EQ(gz_run(async, gz, gz_len, async ? pieces[k] : 1u << 16, &a, &ea), 0);
		CHECK_EQ(a.len, n);
		CHECK(memcmp(a.buf, src, n) == 0);
		tb_free(a.buf);
	}
	/* Cut short, corrupt in the middle, garbage after: same error text. */
	static const char *const want[] = {"truncated gzip data", "corrupt gzip data",
	                                   "trailing garbage after gzip data"};
	for (int bad = 0; bad < 3; bad++) {
		size_t len = bad == 0 ? gz_len - 5 : gz_len;
		uint8_t *copy = tb_malloc(gz_len + 8);
		memcpy(copy, gz, gz_len);
		if (bad == 1)
			for (size_t i = gz_len / 2; i < gz_len / 2 + 64; i++)
				copy[i] ^= 0x5a;
		if (bad == 2) {
			memcpy(copy + gz_len, "garbage!", 8);
			len += 8;
		}
		for (int async = 0; async < 2; async++) {
			struct gz_sink s = {0};
			struct tb_err e = {0};
			CHECK(gz_run(async, copy, len, 1u << 16, &s, &e) < 0);
			CHECK(strstr(e.msg, want[bad]) != NULL);
			tb_free(s.buf);
		}
		tb_free(copy);
	}
	/* The sink fails at its 3rd and its 40th call: its code comes back. */
	for (int at = 3; at <= 40; at += 37) {
		struct gz_sink s = {.fail_at = at};
		struct tb_err e = {0};
		CHECK_EQ(gz_run(true, gz, gz_len, 1u << 16, &s, &e), -EIO);
		tb_free(s.buf);
	}
	/* Freed mid-stream, with the helper blocked on a full queue. */
	{
		struct gz_sink s = {0};
		struct tb_err e = {0};
		struct tp_gunzip *g = tp_gunzip_new_async();
		CHECK_EQ(tp_gunzip_feed(g, gz, gz_len / 2, gz_sink_fn, &s, &e), 0);
		tp_gunzip_free(g);
		CHECK(s.len <= n);
		tb_free(s.buf);
	}
	tb_free(gz);
	tb_free(src);
}
