/*
 * Tests of the Perfetto protobuf importer (components/trace_processor/
 * importers/proto): traces built with the pb writer, fed through tp_parse in
 * chunks, checked directly in the tables; plus every track_event difftest
 * trace and golden trace from ../shared loading without error.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "../../components/trace_processor/tp_int.h"
#include "../../components/trace_processor/model/model.h"
#include "../../components/trace_processor/model/ftrace.h"
#include "../../components/trace_processor/sorter/sorter.h"
#include "pb.h"
#include "pb_fields.h"
#include "test.h"

/* ---- trace building ----------------------------------------------------------- */

struct tb {
	struct pb_writer w;
	unsigned pkt;
};

static void tb_init(struct tb *t)
{
	pb_writer_init_growable(&t->w);
}
static void pkt_begin(struct tb *t, uint32_t seq, uint64_t ts)
{
	t->pkt = pb_begin_nested(&t->w, PB_F_Trace_packet);
	if (seq)
		pb_put_uint32(&t->w, PB_F_TracePacket_trusted_packet_sequence_id, seq);
	if (ts != UINT64_MAX)
		pb_put_uint64(&t->w, PB_F_TracePacket_timestamp, ts);
}
static void pkt_end(struct tb *t)
{
	pb_end_nested(&t->w, t->pkt);
}
/* An interned entry of InternedData field `field`: EventName, EventCategory
 * and InternedString share iid and name's numbers. */
_Static_assert(PB_F_EventName_iid == PB_F_EventCategory_iid &&
                   PB_F_EventName_name == PB_F_EventCategory_name &&
                   PB_F_EventName_iid == PB_F_InternedString_iid &&
                   PB_F_EventName_name == PB_F_InternedString_str,
               "interned entry layouts differ");
static void interned_name(struct tb *t, uint32_t field, uint64_t iid, const char *name)
{
	unsigned id = pb_begin_nested(&t->w, PB_F_TracePacket_interned_data);
	unsigned e = pb_begin_nested(&t->w, field);
	pb_put_uint64(&t->w, PB_F_EventName_iid, iid);
	pb_put_string(&t->w, PB_F_EventName_name, name);
	pb_end_nested(&t->w, e);
	pb_end_nested(&t->w, id);
}
static void thread_track(struct tb *t, uint64_t uuid, int pid, int tid, const char *name)
{
	unsigned d = pb_begin_nested(&t->w, PB_F_TracePacket_track_descriptor);
	pb_put_uint64(&t->w, PB_F_TrackDescriptor_uuid, uuid);
	unsigned th = pb_begin_nested(&t->w, PB_F_TrackDescriptor_thread);
	pb_put_int32(&t->w, PB_F_ThreadDescriptor_pid, pid);
	pb_put_int32(&t->w, PB_F_ThreadDescriptor_tid, tid);
	if (name)
		pb_put_string(&t->w, PB_F_ThreadDescriptor_thread_name, name);
	pb_end_nested(&t->w, th);
	pb_end_nested(&t->w, d);
}
/* A TrackEvent of type on uuid (0 = none) named by iid or string. */
static void track_event(struct tb *t, int type, uint64_t uuid, uint64_t name_iid, const char *name,
                        uint64_t cat_iid)
{
	unsigned e = pb_begin_nested(&t->w, PB_F_TracePacket_track_event);
	pb_put_uint32(&t->w, PB_F_TrackEvent_type, (uint32_t)type);
	if (uuid)
		pb_put_uint64(&t->w, PB_F_TrackEvent_track_uuid, uuid);
	if (name_iid)
		pb_put_uint64(&t->w, PB_F_TrackEvent_name_iid, name_iid);
	if (name)
		pb_put_string(&t->w, PB_F_TrackEvent_name, name);
	if (cat_iid)
		pb_put_uint64(&t->w, PB_F_TrackEvent_category_iids, cat_iid);
	pb_end_nested(&t->w, e);
}

static uint8_t *tb_take(struct tb *t, size_t *n)
{
	return pb_writer_take(&t->w, n);
}

static struct tp *load(const uint8_t *p, size_t n, size_t chunk)
{
	struct tp *tp = tp_new(NULL);
	if (!chunk)
		chunk = n;
	for (size_t o = 0; o < n; o += chunk)
		if (tp_parse(tp, p + o, n - o < chunk ? n - o : chunk) != 0)
			break;
	tp_end_of_file(tp);
	return tp;
}

static const char *sname(struct tp *tp, uint32_t id)
{
	const char *s = id ? tp_str(tp, id) : NULL;
	return s ? s : "(null)";
}

/* A typical SDK sequence: thread descriptor track 1, interned names, nested
 * begin/end pairs, an instant, debug annotations. */
static uint8_t *build_basic(size_t *n)
{
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 1, 0);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1 | 2);
	thread_track(&t, 1, 10, 11, "main");
	interned_name(&t, PB_F_InternedData_event_names, 1, "outer");
	interned_name(&t, PB_F_InternedData_event_categories, 1, "cat1");
	{
		unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_trace_packet_defaults);
		unsigned te = pb_begin_nested(&t.w, PB_F_TracePacketDefaults_track_event_defaults);
		pb_put_uint64(&t.w, PB_F_TrackEventDefaults_track_uuid, 1);
		pb_end_nested(&t.w, te);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, 100);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 2);
	track_event(&t, 1, 0, 1, NULL, 1);
	pkt_end(&t);
	pkt_begin(&t, 1, 150);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 2);
	interned_name(&t, PB_F_InternedData_event_names, 2, "inner");
	{
		unsigned e = pb_begin_nested(&t.w, PB_F_TracePacket_track_event);
		pb_put_uint32(&t.w, PB_F_TrackEvent_type, 1);
		pb_put_uint64(&t.w, PB_F_TrackEvent_name_iid, 2);
		pb_put_string(&t.w, PB_F_TrackEvent_categories, "a");
		pb_put_string(&t.w, PB_F_TrackEvent_categories, "b");
		unsigned da = pb_begin_nested(&t.w, PB_F_TrackEvent_debug_annotations);
		pb_put_string(&t.w, PB_F_DebugAnnotation_name, "x");
		pb_put_int64(&t.w, PB_F_DebugAnnotation_int_value, -5);
		pb_end_nested(&t.w, da);
		da = pb_begin_nested(&t.w, PB_F_TrackEvent_debug_annotations);
		pb_put_string(&t.w, PB_F_DebugAnnotation_name, "d");
		unsigned ent = pb_begin_nested(&t.w, PB_F_DebugAnnotation_dict_entries);
		pb_put_string(&t.w, PB_F_DebugAnnotation_name, "k");
		pb_put_string(&t.w, PB_F_DebugAnnotation_string_value, "v");
		pb_end_nested(&t.w, ent);
		unsigned arr = pb_begin_nested(&t.w, PB_F_DebugAnnotation_array_values);
		pb_put_bool(&t.w, PB_F_DebugAnnotation_bool_value, true);
		pb_end_nested(&t.w, arr);
		pb_end_nested(&t.w, da);
		pb_end_nested(&t.w, e);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, 160);
	track_event(&t, 3, 0, 0, "instant", 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 200);
	track_event(&t, 2, 0, 0, NULL, 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 300);
	track_event(&t, 2, 0, 0, NULL, 0);
	pkt_end(&t);
	return tb_take(&t, n);
}

static int find_arg(struct tp *tp, uint32_t set, const char *key)
{
	struct tp_args_table *a = &tp->t.args;
	for (uint32_t i = 0; i < a->n; i++)
		if (a->arg_set_id[i] == set && strcmp(sname(tp, a->key[i]), key) == 0)
			return (int)i;
	return -1;
}

TEST(tp_proto_basic_slices)
{
	size_t n;
	uint8_t *buf = build_basic(&n);
	struct tp *tp = load(buf, n, 0);
	tb_free(buf);
	CHECK_STR_EQ(tp_trace_type(tp), "proto");
	struct tp_slice_table *s = &tp->t.slice;
	int ok = s->n == 3;
	if (ok) {
		CHECK_STR_EQ(sname(tp, s->name[0]), "outer");
		CHECK_STR_EQ(sname(tp, s->category[0]), "cat1");
		CHECK_EQ(s->ts[0], 100);
		CHECK_EQ(s->dur[0], 200);
		CHECK_STR_EQ(sname(tp, s->name[1]), "inner");
		CHECK_STR_EQ(sname(tp, s->category[1]), "a,b");
		CHECK_EQ(s->dur[1], 50);
		CHECK_EQ(s->depth[1], 1);
		CHECK_EQ(s->parent_id[1], 0);
		CHECK_STR_EQ(sname(tp, s->name[2]), "instant");
		CHECK_EQ(s->dur[2], 0);
		CHECK_EQ(s->depth[2], 2);
		uint32_t track = s->track_id[0];
		CHECK_EQ(s->track_id[1], track);
		CHECK_EQ(s->track_id[2], track);
		uint32_t utid = (uint32_t)tp->t.track.utid[track];
		CHECK_EQ(tp->t.thread.tid[utid], 11);
		CHECK_STR_EQ(sname(tp, tp->t.thread.name[utid]), "main");
		CHECK_EQ(tp->t.process.pid[tp->t.thread.upid[utid]], 10);
		uint32_t set = s->arg_set_id[1];
		CHECK(set != TP_NULL_U32);
		int i = find_arg(tp, set, "debug.x");
		CHECK(i >= 0);
		CHECK_EQ(tp_args_row(tp, (uint32_t)i).v.i, -5);
		i = find_arg(tp, set, "debug.d.k");
		CHECK(i >= 0);
		CHECK_STR_EQ(sname(tp, tp_args_row(tp, (uint32_t)i).v.s), "v");
		i = find_arg(tp, set, "debug.d[0]");
		CHECK(i >= 0);
		CHECK_STR_EQ(sname(tp, tp_args_row(tp, (uint32_t)i).flat_key), "debug.d");
	}
	tp_free(tp);
	CHECK(ok);
}

/* Feeding one byte at a time gives the same tables as one chunk. */
TEST(tp_proto_chunked_identical)
{
	size_t n;
	uint8_t *buf = build_basic(&n);
	struct tp *a = load(buf, n, 0), *b = load(buf, n, 1), *c = load(buf, n, 7);
	tb_free(buf);
	int ok = a->t.slice.n == b->t.slice.n && a->t.slice.n == c->t.slice.n &&
	         a->t.args.n == b->t.args.n && a->t.track.n == b->t.track.n;
	for (uint32_t i = 0; ok && i < a->t.slice.n; i++)
		ok = a->t.slice.ts[i] == b->t.slice.ts[i] &&
		     a->t.slice.dur[i] == b->t.slice.dur[i] &&
		     a->t.slice.ts[i] == c->t.slice.ts[i] &&
		     strcmp(sname(a, a->t.slice.name[i]), sname(b, b->t.slice.name[i])) == 0;
	uint64_t f1 = b->stats[TP_STAT_proto_tokenizer_failure];
	tp_free(a);
	tp_free(b);
	tp_free(c);
	CHECK(ok);
	CHECK_EQ(f1, 0);
}

/* Plain events on two sequences, one of them without valid incremental
 * state. pad adds an unknown TracePacket field to every event packet, which
 * sends it down the general path instead of the one-pass decoder. */
static uint8_t *build_plain(size_t *n, bool pad)
{
	enum { UNDECLARED_FIELD = 900 }; /* no TracePacket field has this number */
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 1, 0);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	thread_track(&t, 7, 10, 11, "main");
	interned_name(&t, PB_F_InternedData_event_names, 1, "one");
	interned_name(&t, PB_F_InternedData_event_names, 300, "big");
	interned_name(&t, PB_F_InternedData_event_categories, 1, "cat");
	pkt_end(&t);
	static const struct {
		uint32_t seq, flags;
		uint64_t ts;
		int type;
		uint64_t iid;
		const char *name;
	} ev[] = {
	    {1, 2, 100, 1, 1, NULL},   {1, 2, 110, 1, 300, NULL}, {2, 2, 115, 1, 1, NULL},
	    {1, 0, 120, 3, 0, "inst"}, {1, 2, 130, 1, 9, NULL},   {1, 2, 140, 2, 0, NULL},
	    {1, 2, 150, 2, 0, NULL},   {1, 2, 160, 2, 0, NULL},   {1, 0, 170, 2, 0, NULL},
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(ev); i++) {
		pkt_begin(&t, ev[i].seq, ev[i].ts);
		pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, ev[i].flags);
		if (i == 3)
			pb_put_uint32(&t.w, PB_F_TracePacket_timestamp_clock_id,
			              PB_E_BuiltinClock_BUILTIN_CLOCK_BOOTTIME);
		if (pad)
			pb_put_uint32(&t.w, UNDECLARED_FIELD, 1);
		track_event(&t, ev[i].type, 7, ev[i].iid, ev[i].name, ev[i].type == 1 ? 1 : 0);
		pkt_end(&t);
	}
	return tb_take(&t, n);
}

TEST(tp_proto_fast_path_matches_general)
{
	size_t na, nb;
	uint8_t *a_buf = build_plain(&na, false), *b_buf = build_plain(&nb, true);
	struct tp *a = load(a_buf, na, 0), *b = load(b_buf, nb, 0);
	tb_free(a_buf);
	tb_free(b_buf);
	struct tp_slice_table *s = &a->t.slice, *u = &b->t.slice;
	CHECK_EQ(s->n, 4);
	CHECK_EQ(u->n, s->n);
	for (uint32_t i = 0; i < s->n && i < u->n; i++) {
		CHECK_EQ(s->ts[i], u->ts[i]);
		CHECK_EQ(s->dur[i], u->dur[i]);
		CHECK_EQ(s->depth[i], u->depth[i]);
		CHECK_EQ(s->track_id[i], u->track_id[i]);
		CHECK_STR_EQ(sname(a, s->name[i]), sname(b, u->name[i]));
		CHECK_STR_EQ(sname(a, s->category[i]), sname(b, u->category[i]));
	}
	if (s->n == 4) {
		CHECK_STR_EQ(sname(a, s->name[1]), "big");
		CHECK_STR_EQ(sname(a, s->name[2]), "inst");
		CHECK_EQ(s->dur[0], 60);
		CHECK_EQ(s->dur[3], 10); /* unknown iid: no name */
		CHECK_EQ(s->name[3], 0);
	}
	for (int st = 0; st < TP_STAT_COUNT; st++)
		CHECK_EQ(a->stats[st], b->stats[st]);
	CHECK_EQ(a->stats[TP_STAT_packet_skipped_seq_needs_incremental_state_invalid], 1);
	CHECK_EQ(a->stats[TP_STAT_interned_data_tokenizer_errors], 1);
	tp_free(a);
	tp_free(b);
}

/* iids resolve against the generation in effect when the packet was
 * tokenized, even when sorting moves it after a later reset. */
TEST(tp_proto_interning_generations)
{
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 1, 0);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	thread_track(&t, 1, 5, 6, NULL);
	pkt_end(&t);
	pkt_begin(&t, 1, 500);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1 | 2);
	interned_name(&t, PB_F_InternedData_event_names, 1, "first");
	track_event(&t, 3, 1, 1, NULL, 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 100);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1 | 2);
	interned_name(&t, PB_F_InternedData_event_names, 1, "second");
	track_event(&t, 3, 1, 1, NULL, 0);
	pkt_end(&t);
	/* Dropped packets invalidate the state: skipped and counted. */
	pkt_begin(&t, 1, 600);
	pb_put_uint32(&t.w, PB_F_TracePacket_previous_packet_dropped, 1);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 2);
	track_event(&t, 3, 1, 1, NULL, 0);
	pkt_end(&t);
	/* A sequence that never cleared its state. */
	pkt_begin(&t, 2, 700);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 2);
	track_event(&t, 3, 1, 0, "x", 0);
	pkt_end(&t);
	size_t n;
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	tb_free(buf);
	uint32_t ns = tp->t.slice.n;
	const char *n0 = ns > 0 ? sname(tp, tp->t.slice.name[0]) : "";
	const char *n1 = ns > 1 ? sname(tp, tp->t.slice.name[1]) : "";
	int ok = ns == 2 && strcmp(n0, "second") == 0 && strcmp(n1, "first") == 0;
	uint64_t skipped = tp->stats[TP_STAT_packet_skipped_seq_needs_incremental_state_invalid];
	tp_free(tp);
	CHECK(ok);
	CHECK_EQ(skipped, 2);
}

static void clock_snapshot(struct tb *t, uint32_t id, uint64_t ts, bool inc, uint64_t mult,
                           uint64_t boot)
{
	unsigned cs = pb_begin_nested(&t->w, PB_F_TracePacket_clock_snapshot);
	unsigned c = pb_begin_nested(&t->w, PB_F_ClockSnapshot_clocks);
	pb_put_uint32(&t->w, PB_F_ClockSnapshot_Clock_clock_id, 6);
	pb_put_uint64(&t->w, PB_F_ClockSnapshot_Clock_timestamp, boot);
	pb_end_nested(&t->w, c);
	c = pb_begin_nested(&t->w, PB_F_ClockSnapshot_clocks);
	pb_put_uint32(&t->w, PB_F_ClockSnapshot_Clock_clock_id, id);
	pb_put_uint64(&t->w, PB_F_ClockSnapshot_Clock_timestamp, ts);
	if (inc)
		pb_put_bool(&t->w, PB_F_ClockSnapshot_Clock_is_incremental, true);
	if (mult)
		pb_put_uint64(&t->w, PB_F_ClockSnapshot_Clock_unit_multiplier_ns, mult);
	pb_end_nested(&t->w, c);
	pb_end_nested(&t->w, cs);
}

TEST(tp_proto_clocks)
{
	struct tb t;
	tb_init(&t);
	/* MONOTONIC (3) = BOOTTIME - 1000. */
	pkt_begin(&t, 1, UINT64_MAX);
	clock_snapshot(&t, 3, 4000, false, 0, 5000);
	pkt_end(&t);
	/* Sequence 2: incremental clock 64 in microseconds starting at 10 us
	 * = BOOTTIME 20000. */
	pkt_begin(&t, 2, 20000);
	pb_put_uint32(&t.w, PB_F_TracePacket_timestamp_clock_id, 6);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	clock_snapshot(&t, 64, 10, true, 1000, 20000);
	thread_track(&t, 1, 1, 1, NULL);
	{
		unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_trace_packet_defaults);
		pb_put_uint32(&t.w, PB_F_TracePacketDefaults_timestamp_clock_id, 64);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	pkt_begin(&t, 2, 5); /* +5 us */
	track_event(&t, 1, 1, 0, "a", 0);
	pkt_end(&t);
	pkt_begin(&t, 2, 3); /* +3 us */
	track_event(&t, 2, 1, 0, NULL, 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 6000); /* MONOTONIC 6000 = BOOTTIME 7000 */
	pb_put_uint32(&t.w, PB_F_TracePacket_timestamp_clock_id, 3);
	track_event(&t, 3, 1, 0, "mono", 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 1); /* REALTIME: no snapshot */
	pb_put_uint32(&t.w, PB_F_TracePacket_timestamp_clock_id, 1);
	track_event(&t, 3, 1, 0, "lost", 0);
	pkt_end(&t);
	size_t n;
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 3);
	tb_free(buf);
	struct tp_slice_table *s = &tp->t.slice;
	int ok = s->n == 2 && s->ts[0] == 7000 && s->ts[1] == 25000 && s->dur[1] == 3000;
	if (!ok)
		for (uint32_t i = 0; i < s->n; i++)
			printf("slice %u ts %lld dur %lld\n", i, (long long)s->ts[i],
			       (long long)s->dur[i]);
	uint64_t fail = tp->stats[TP_STAT_clock_sync_failure];
	tp_free(tp);
	CHECK(ok);
	CHECK_EQ(fail, 1);
}

TEST(tp_proto_truncated_packet)
{
	size_t n;
	uint8_t *buf = build_basic(&n);
	struct tp *tp = load(buf, n - 2, 5);
	uint32_t ns = tp->t.slice.n;
	uint64_t fail = tp->stats[TP_STAT_proto_tokenizer_failure];
	tp_free(tp);
	/* Garbage after valid packets: the rest is ignored. */
	uint8_t *bad = tb_malloc(n + 4);
	memcpy(bad, buf, n);
	memcpy(bad + n, "\x12\x02zz", 4);
	tp = load(bad, n + 4, 0);
	uint32_t ns2 = tp->t.slice.n;
	uint64_t fail2 = tp->stats[TP_STAT_proto_tokenizer_failure];
	tp_free(tp);
	tb_free(bad);
	tb_free(buf);
	CHECK_EQ(fail, 1);
	CHECK_EQ(ns, 3); /* the last end is lost: slices stay open */
	CHECK_EQ(fail2, 1);
	CHECK_EQ(ns2, 3);
}

TEST(tp_proto_compressed_packets)
{
	size_t n;
	uint8_t *inner = build_basic(&n);
	uLongf clen = compressBound(n);
	uint8_t *z = tb_malloc(clen);
	int zrc = compress2(z, &clen, inner, n, 6);
	tb_free(inner);
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 0, UINT64_MAX);
	pb_put_bytes(&t.w, PB_F_TracePacket_compressed_packets, z, clen);
	pkt_end(&t);
	pkt_begin(&t, 0, UINT64_MAX);
	pb_put_bytes(&t.w, PB_F_TracePacket_compressed_packets, "garbage", 7);
	pkt_end(&t);
	tb_free(z);
	size_t tn;
	uint8_t *buf = tb_take(&t, &tn);
	struct tp *tp = load(buf, tn, 0);
	tb_free(buf);
	uint32_t ns = tp->t.slice.n;
	uint64_t fail = tp->stats[TP_STAT_compressed_packets_failure];
	tp_free(tp);
	CHECK_EQ(zrc, Z_OK);
	CHECK_EQ(ns, 3);
	CHECK_EQ(fail, 1);
}

TEST(tp_proto_counters)
{
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 1, 0);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	{
		unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_track_descriptor);
		pb_put_uint64(&t.w, PB_F_TrackDescriptor_uuid, 7);
		pb_put_string(&t.w, PB_F_TrackDescriptor_name, "mem");
		unsigned c = pb_begin_nested(&t.w, PB_F_TrackDescriptor_counter);
		pb_put_uint32(&t.w, PB_F_CounterDescriptor_unit, 3);
		pb_put_bool(&t.w, PB_F_CounterDescriptor_is_incremental, true);
		pb_end_nested(&t.w, c);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	for (int i = 0; i < 3; i++) {
		pkt_begin(&t, 1, 100 + (uint64_t)i * 10);
		unsigned e = pb_begin_nested(&t.w, PB_F_TracePacket_track_event);
		pb_put_uint32(&t.w, PB_F_TrackEvent_type, 4);
		pb_put_uint64(&t.w, PB_F_TrackEvent_track_uuid, 7);
		pb_put_int64(&t.w, PB_F_TrackEvent_counter_value, 5);
		pb_end_nested(&t.w, e);
		pkt_end(&t);
	}
	size_t n;
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	tb_free(buf);
	struct tp_counter_table *c = &tp->t.counter;
	int ok = c->n == 3 && c->value[2] == 15.0 && c->ts[2] == 120;
	int named = ok && strcmp(sname(tp, tp->t.track.name[c->track_id[0]]), "mem") == 0 &&
	            strcmp(sname(tp, tp->t.track.unit[c->track_id[0]]), "bytes") == 0;
	tp_free(tp);
	CHECK(ok);
	CHECK(named);
}

/* The track of the slice named name, or TP_NULL_U32. */
static uint32_t slice_track(struct tp *tp, const char *name)
{
	for (uint32_t i = 0; i < tp->t.slice.n; i++)
		if (strcmp(sname(tp, tp->t.slice.name[i]), name) == 0)
			return tp->t.slice.track_id[i];
	return TP_NULL_U32;
}

/* Descriptor tracks carry Perfetto's source args; a child track without a
 * name takes its first event's; a uuid without a descriptor is an implicit
 * global track; the thread track of a separate thread descriptor is its own. */
TEST(tp_proto_track_source_args)
{
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 1, 0);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	pb_put_bool(&t.w, PB_F_TracePacket_first_packet_on_sequence, true);
	{
		unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_track_descriptor);
		pb_put_uint64(&t.w, PB_F_TrackDescriptor_uuid, 1);
		unsigned th = pb_begin_nested(&t.w, PB_F_TrackDescriptor_thread);
		pb_put_int32(&t.w, PB_F_ThreadDescriptor_pid, 5);
		pb_put_int32(&t.w, PB_F_ThreadDescriptor_tid, 6);
		pb_end_nested(&t.w, th);
		pb_put_string(&t.w, PB_F_TrackDescriptor_description, "the thread");
		pb_put_bool(&t.w, PB_F_TrackDescriptor_disallow_merging_with_system_tracks, true);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, 0);
	{
		unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_track_descriptor);
		pb_put_uint64(&t.w, PB_F_TrackDescriptor_uuid, 2);
		pb_put_uint64(&t.w, PB_F_TrackDescriptor_parent_uuid, 1);
		pb_put_int32(&t.w, PB_F_TrackDescriptor_sibling_order_rank, -3);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, 10);
	track_event(&t, 3, 1, 0, "on_thread", 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 20);
	track_event(&t, 3, 2, 0, "on_child", 0);
	pkt_end(&t);
	pkt_begin(&t, 2, 30);
	track_event(&t, 3, 99, 0, "on_implicit", 0);
	pkt_end(&t);
	size_t n;
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	tb_free(buf);
	struct tp_track_table *tr = &tp->t.track;
	uint32_t th = slice_track(tp, "on_thread"), ch = slice_track(tp, "on_child"),
	         im = slice_track(tp, "on_implicit");
	int ok = th != TP_NULL_U32 && ch != TP_NULL_U32 && im != TP_NULL_U32 && th != ch;
	int first = -1, desc = -1, rank = -1, root = -1, id = -1;
	char child_name[32] = "", implicit_name[32] = "";
	int64_t child_utid = -1, implicit_parent = 0;
	if (ok) {
		first = find_arg(tp, tr->source_arg_set_id[th], "has_first_packet_on_sequence");
		desc = find_arg(tp, tr->source_arg_set_id[th], "description");
		root = find_arg(tp, tr->source_arg_set_id[th], "is_root_in_scope");
		rank = find_arg(tp, tr->source_arg_set_id[ch], "sibling_order_rank");
		id = find_arg(tp, tr->source_arg_set_id[im], "trace_id");
		snprintf(child_name, sizeof child_name, "%s", sname(tp, tr->name[ch]));
		child_utid = tr->utid[ch];
		snprintf(implicit_name, sizeof implicit_name, "%s", sname(tp, tr->name[im]));
		implicit_parent = tr->parent_id[im];
		ok = first >= 0 && tp_args_row(tp, (uint32_t)first).v.i == 1 && desc >= 0 &&
		     strcmp(sname(tp, tp_args_row(tp, (uint32_t)desc).v.s), "the thread") == 0 &&
		     root >= 0 && tp_args_row(tp, (uint32_t)root).v.i == 1 && rank >= 0 &&
		     tp_args_row(tp, (uint32_t)rank).v.i == -3 && id >= 0 &&
		     tp_args_row(tp, (uint32_t)id).v.i == 99 &&
		     find_arg(tp, tr->source_arg_set_id[im], "has_first_packet_on_sequence") < 0;
	}
	tp_free(tp);
	CHECK(ok);
	CHECK_STR_EQ(child_name, "on_child");
	CHECK(child_utid != TP_NULL_I64);
	CHECK_STR_EQ(implicit_name, "on_implicit");
	CHECK_EQ(implicit_parent, TP_NULL_I64);
}

/* A re-emitted descriptor renames a track only when merging is disabled. */
TEST(tp_proto_track_rename_merge_none)
{
	struct tb t;
	tb_init(&t);
	const char *names[] = {"first", "second"};
	for (int i = 0; i < 2; i++) {
		pkt_begin(&t, 1, 100 + (uint64_t)i);
		unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_track_descriptor);
		pb_put_uint64(&t.w, PB_F_TrackDescriptor_uuid, 1);
		pb_put_string(&t.w, PB_F_TrackDescriptor_name, names[i]);
		pb_put_uint32(&t.w, PB_F_TrackDescriptor_sibling_merge_behavior, 2);
		pb_end_nested(&t.w, d);
		pkt_end(&t);
		pkt_begin(&t, 1, 100 + (uint64_t)i);
		d = pb_begin_nested(&t.w, PB_F_TracePacket_track_descriptor);
		pb_put_uint64(&t.w, PB_F_TrackDescriptor_uuid, 2);
		pb_put_string(&t.w, PB_F_TrackDescriptor_name, names[i]);
		pb_end_nested(&t.w, d);
		pkt_end(&t);
	}
	pkt_begin(&t, 1, 300);
	track_event(&t, 3, 1, 0, "a", 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 300);
	track_event(&t, 3, 2, 0, "b", 0);
	pkt_end(&t);
	size_t n;
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	tb_free(buf);
	uint32_t a = slice_track(tp, "a"), b = slice_track(tp, "b");
	char na[16] = "", nb[16] = "";
	if (a != TP_NULL_U32 && b != TP_NULL_U32) {
		snprintf(na, sizeof na, "%s", sname(tp, tp->t.track.name[a]));
		snprintf(nb, sizeof nb, "%s", sname(tp, tp->t.track.name[b]));
	}
	tp_free(tp);
	CHECK_STR_EQ(na, "second");
	CHECK_STR_EQ(nb, "first");
}

/* Extra counter values of incremental tracks are deltas in trace order,
 * reset with the sequence's incremental state; legacy thread time fields
 * become "thread_time" counters on the thread. */
TEST(tp_proto_incremental_extra_counters)
{
	struct tb t;
	tb_init(&t);
	for (int gen = 0; gen < 2; gen++) {
		pkt_begin(&t, 1, 1000 * (uint64_t)gen);
		pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
		thread_track(&t, 1, 5, 6, "t");
		unsigned df = pb_begin_nested(&t.w, PB_F_TracePacket_trace_packet_defaults);
		unsigned te = pb_begin_nested(&t.w, PB_F_TracePacketDefaults_track_event_defaults);
		pb_put_uint64(&t.w, PB_F_TrackEventDefaults_track_uuid, 1);
		pb_put_uint64(&t.w, PB_F_TrackEventDefaults_extra_counter_track_uuids, 10);
		pb_end_nested(&t.w, te);
		pb_end_nested(&t.w, df);
		pkt_end(&t);
		pkt_begin(&t, 1, 1000 * (uint64_t)gen);
		unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_track_descriptor);
		pb_put_uint64(&t.w, PB_F_TrackDescriptor_uuid, 10);
		pb_put_uint64(&t.w, PB_F_TrackDescriptor_parent_uuid, 1);
		unsigned c = pb_begin_nested(&t.w, PB_F_TrackDescriptor_counter);
		pb_put_uint32(&t.w, PB_F_CounterDescriptor_type, 1);
		pb_put_int64(&t.w, PB_F_CounterDescriptor_unit_multiplier, 1000);
		pb_put_bool(&t.w, PB_F_CounterDescriptor_is_incremental, true);
		pb_end_nested(&t.w, c);
		pb_end_nested(&t.w, d);
		pkt_end(&t);
		for (int i = 0; i < 2; i++) {
			pkt_begin(&t, 1, 1000 * (uint64_t)gen + 10 + (uint64_t)i);
			pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 2);
			unsigned e = pb_begin_nested(&t.w, PB_F_TracePacket_track_event);
			pb_put_uint32(&t.w, PB_F_TrackEvent_type, (uint32_t)(i + 1));
			pb_put_string(&t.w, PB_F_TrackEvent_name, "s");
			pb_put_int64(&t.w, PB_F_TrackEvent_extra_counter_values, gen ? 7 : 3);
			pb_end_nested(&t.w, e);
			pkt_end(&t);
		}
	}
	pkt_begin(&t, 2, 5000);
	{
		unsigned e = pb_begin_nested(&t.w, PB_F_TracePacket_track_event);
		pb_put_uint32(&t.w, PB_F_TrackEvent_type, 3);
		pb_put_uint64(&t.w, PB_F_TrackEvent_track_uuid, 1);
		pb_put_string(&t.w, PB_F_TrackEvent_name, "legacy");
		pb_put_int64(&t.w, PB_F_TrackEvent_thread_time_absolute_us, 42);
		pb_end_nested(&t.w, e);
	}
	pkt_end(&t);
	size_t n;
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	tb_free(buf);
	struct tp_counter_table *c = &tp->t.counter;
	double v[5] = {0};
	const char *last_name = "";
	for (uint32_t i = 0; i < c->n && i < 5; i++)
		v[i] = c->value[i];
	if (c->n == 5)
		last_name = sname(tp, tp->t.track.name[c->track_id[4]]);
	uint32_t cn = c->n;
	int thread_dur =
	    tp->t.slice.n > 0 && tp_get_slice_thread_dur(&tp->t.slice, (uint32_t)0) == 3000;
	char name[32];
	snprintf(name, sizeof name, "%s", last_name);
	tp_free(tp);
	CHECK_EQ(cn, 5);
	CHECK_DBL_EQ(v[0], 3000.0);
	CHECK_DBL_EQ(v[1], 6000.0);
	CHECK_DBL_EQ(v[2], 7000.0);
	CHECK_DBL_EQ(v[3], 14000.0);
	CHECK_DBL_EQ(v[4], 42000.0);
	CHECK_STR_EQ(name, "thread_time");
	CHECK(thread_dur);
}

/* Legacy µs timestamps are MONOTONIC and converted to the trace clock;
 * negative ones (overflowed deltas included) are dropped and counted. */
TEST(tp_proto_legacy_timestamps)
{
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	{
		unsigned cs = pb_begin_nested(&t.w, PB_F_TracePacket_clock_snapshot);
		unsigned c = pb_begin_nested(&t.w, PB_F_ClockSnapshot_clocks);
		pb_put_uint32(&t.w, PB_F_ClockSnapshot_Clock_clock_id, 3);
		pb_put_uint64(&t.w, PB_F_ClockSnapshot_Clock_timestamp, 1);
		pb_end_nested(&t.w, c);
		c = pb_begin_nested(&t.w, PB_F_ClockSnapshot_clocks);
		pb_put_uint32(&t.w, PB_F_ClockSnapshot_Clock_clock_id, 6);
		pb_put_uint64(&t.w, PB_F_ClockSnapshot_Clock_timestamp, 0);
		pb_end_nested(&t.w, c);
		pb_end_nested(&t.w, cs);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	pkt_end(&t);
	int64_t abs_us[] = {1000, -9223372036854776LL};
	for (int i = 0; i < 2; i++) {
		pkt_begin(&t, 1, UINT64_MAX);
		unsigned e = pb_begin_nested(&t.w, PB_F_TracePacket_track_event);
		pb_put_uint32(&t.w, PB_F_TrackEvent_type, 3);
		pb_put_string(&t.w, PB_F_TrackEvent_name, i ? "bad" : "good");
		pb_put_int64(&t.w, PB_F_TrackEvent_timestamp_absolute_us, abs_us[i]);
		pb_end_nested(&t.w, e);
		pkt_end(&t);
	}
	pkt_begin(&t, 1, UINT64_MAX);
	{
		unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_thread_descriptor);
		pb_put_int64(&t.w, PB_F_ThreadDescriptor_reference_timestamp_us,
		             -9223372036854775LL);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	{
		unsigned e = pb_begin_nested(&t.w, PB_F_TracePacket_track_event);
		pb_put_uint32(&t.w, PB_F_TrackEvent_type, 3);
		pb_put_string(&t.w, PB_F_TrackEvent_name, "bad2");
		pb_put_int64(&t.w, PB_F_TrackEvent_timestamp_delta_us, -1);
		pb_end_nested(&t.w, e);
	}
	pkt_end(&t);
	size_t n;
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	tb_free(buf);
	uint32_t ns = tp->t.slice.n;
	int64_t ts = ns ? tp->t.slice.ts[0] : -1;
	uint64_t bad = tp->stats[TP_STAT_track_event_invalid_timestamp];
	tp_free(tp);
	CHECK_EQ(ns, 1);
	CHECK_EQ(ts, 999999);
	CHECK_EQ(bad, 2);
}

/* A thread TrackDescriptor is also the sequence's thread: legacy events
 * with track_uuid 0 land on that thread. */
TEST(tp_proto_thread_descriptor_track_sets_sequence_thread)
{
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 1, 0);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	thread_track(&t, 1, 5, 7, "t");
	pkt_end(&t);
	pkt_begin(&t, 1, 10);
	{
		unsigned e = pb_begin_nested(&t.w, PB_F_TracePacket_track_event);
		pb_put_uint64(&t.w, PB_F_TrackEvent_track_uuid, 0);
		pb_put_string(&t.w, PB_F_TrackEvent_name, "legacy");
		unsigned l = pb_begin_nested(&t.w, PB_F_TrackEvent_legacy_event);
		pb_put_int32(&t.w, PB_F_TrackEvent_LegacyEvent_phase, 'I');
		pb_end_nested(&t.w, l);
		pb_end_nested(&t.w, e);
	}
	pkt_end(&t);
	size_t n;
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	tb_free(buf);
	uint32_t tr = slice_track(tp, "legacy");
	int64_t tid = -1;
	if (tr != TP_NULL_U32 && tp->t.track.utid[tr] != TP_NULL_I64)
		tid = tp->t.thread.tid[tp->t.track.utid[tr]];
	tp_free(tp);
	CHECK_EQ(tid, 7);
}

static uint32_t load_file(const char *path, uint32_t *nslices)
{
	char *data = NULL;
	size_t len = 0;
	struct tb_err err = {0};
	if (tb_read_file(path, &data, &len, (size_t)1 << 30, &err) != 0) {
		printf("cannot read %s\n", path);
		return 1;
	}
	struct tp *tp = tp_new(NULL);
	int rc = tp_parse(tp, (const uint8_t *)data, len);
	if (rc == 0)
		rc = tp_end_of_file(tp);
	uint32_t bad = rc != 0 || tp->stats[TP_STAT_proto_tokenizer_failure] ||
	               tp->stats[TP_STAT_invalid_trace_packet] ||
	               strcmp(tp_trace_type(tp), "proto") != 0;
	if (bad)
		printf("%s: rc %d (%s) type %s\n", path, rc, tp_error(tp), tp_trace_type(tp));
	*nslices += tp->t.slice.n;
	tp_free(tp);
	tb_free(data);
	return bad;
}

/* Every track_event difftest and golden trace loads without error. */
TEST(tp_proto_corpus_loads)
{
	const char *shared = test_shared_dir();
	if (!shared)
		TEST_SKIP("../shared not found");
	static const char *const dirs[] = {"corpus/perfetto_difftests", "reference/golden/traces",
	                                   "reference/golden/ipc"};
	uint32_t files = 0, bad = 0, slices = 0;
	char path[1024];
	for (size_t d = 0; d < 3; d++) {
		snprintf(path, sizeof path, "%s/%s", shared, dirs[d]);
		DIR *dir = opendir(path);
		if (!dir)
			continue;
		struct dirent *de;
		while ((de = readdir(dir))) {
			if (d == 0) {
				if (strncmp(de->d_name, "parser_track_event__", 20) != 0)
					continue;
				snprintf(path, sizeof path, "%s/%s/%s/trace.pb", shared, dirs[d],
				         de->d_name);
			} else {
				size_t l = strlen(de->d_name);
				if (l < 8 || strcmp(de->d_name + l - 8, ".pftrace") != 0)
					continue;
				snprintf(path, sizeof path, "%s/%s/%s", shared, dirs[d],
				         de->d_name);
			}
			FILE *f = fopen(path, "rb");
			if (!f)
				continue;
			fclose(f);
			files++;
			bad += load_file(path, &slices);
		}
		closedir(dir);
	}
	CHECK(files > 40);
	CHECK_EQ(bad, 0);
	CHECK(slices > 100);
}

/* ---- SysStats / ProcessStats (system_probes.c) ---------------------------------- */

/* The counter track named name (with cpu/upid -1 = any), or UINT32_MAX. */
static uint32_t find_counter_track(struct tp *tp, const char *name, int64_t cpu, int64_t upid)
{
	const struct tp_track_table *t = &tp->t.track;
	for (uint32_t i = 0; i < t->n; i++) {
		if (strcmp(sname(tp, t->event_type[i]), "counter") != 0 ||
		    strcmp(sname(tp, t->name[i]), name) != 0)
			continue;
		if ((cpu < 0 || t->cpu[i] == cpu) && (upid < 0 || t->upid[i] == upid))
			return i;
	}
	return UINT32_MAX;
}

/* The value of the n-th counter on track (NaN if none). */
static double counter_value(struct tp *tp, uint32_t track, uint32_t nth, int64_t *ts)
{
	const struct tp_counter_table *c = &tp->t.counter;
	for (uint32_t i = 0; i < c->n; i++) {
		if (c->track_id[i] != track)
			continue;
		if (nth-- == 0) {
			if (ts)
				*ts = c->ts[i];
			return c->value[i];
		}
	}
	return NAN;
}

/* A key/value entry of SysStats field `field` (meminfo, vmstat, num_irq,
 * num_softirq, psi: one layout). */
_Static_assert(PB_F_SysStats_MeminfoValue_key == PB_F_SysStats_VmstatValue_key &&
                   PB_F_SysStats_MeminfoValue_value == PB_F_SysStats_VmstatValue_value &&
                   PB_F_SysStats_MeminfoValue_key == PB_F_SysStats_InterruptCount_irq &&
                   PB_F_SysStats_MeminfoValue_value == PB_F_SysStats_InterruptCount_count &&
                   PB_F_SysStats_MeminfoValue_key == PB_F_SysStats_PsiSample_resource &&
                   PB_F_SysStats_MeminfoValue_value == PB_F_SysStats_PsiSample_total_ns,
               "sys_stats entry layouts differ");
static void kv(struct tb *t, uint32_t field, uint64_t key, uint64_t value)
{
	unsigned m = pb_begin_nested(&t->w, field);
	pb_put_uint64(&t->w, PB_F_SysStats_MeminfoValue_key, key);
	pb_put_uint64(&t->w, PB_F_SysStats_MeminfoValue_value, value);
	pb_end_nested(&t->w, m);
}

/* The shape of the golden sched traces' linux.sys_stats packets: four
 * meminfo keys, cpu times of two cpus, num_forks. */
static void sys_stats_golden_packet(struct tb *t, uint64_t ts, uint64_t mem_free)
{
	pkt_begin(t, 1, ts);
	unsigned s = pb_begin_nested(&t->w, PB_F_TracePacket_sys_stats);
	kv(t, PB_F_SysStats_meminfo, PB_E_MeminfoCounters_MEMINFO_MEM_TOTAL, 24684092);
	kv(t, PB_F_SysStats_meminfo, PB_E_MeminfoCounters_MEMINFO_MEM_FREE, mem_free);
	kv(t, PB_F_SysStats_meminfo, PB_E_MeminfoCounters_MEMINFO_MEM_AVAILABLE, 24228912);
	kv(t, PB_F_SysStats_meminfo, PB_E_MeminfoCounters_MEMINFO_CACHED, 1689028);
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		unsigned c = pb_begin_nested(&t->w, PB_F_SysStats_cpu_stat);
		pb_put_uint32(&t->w, PB_F_SysStats_CpuTimes_cpu_id, cpu);
		for (uint32_t f = PB_F_SysStats_CpuTimes_user_ns;
		     f <= PB_F_SysStats_CpuTimes_steal_ns; f++)
			pb_put_uint64(&t->w, f, (uint64_t)f * 1000000000 + cpu);
		pb_end_nested(&t->w, c);
	}
	pb_put_uint64(&t->w, PB_F_SysStats_num_forks, 63308);
	pb_end_nested(&t->w, s);
	pkt_end(t);
}

TEST(tp_proto_sys_stats_golden_shape)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	sys_stats_golden_packet(&t, 2000, 22653464);
	sys_stats_golden_packet(&t, 1000, 22653720); /* out of order: sorted */
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 7);
	/* 2 x (4 meminfo + 2 x 8 cpu times + num_forks), as the golden trace's
	 * 7 packets give 147 counters on 13 distinct track names. */
	CHECK_EQ(tp->t.counter.n, 42);
	CHECK_EQ(tp->t.track.n, 4 + 16 + 1);
	static const char *const names[] = {
	    "Cached",
	    "MemAvailable",
	    "MemFree",
	    "MemTotal",
	    "cpu.times.idle_ns",
	    "cpu.times.io_wait_ns",
	    "cpu.times.irq_ns",
	    "cpu.times.softirq_ns",
	    "cpu.times.steal_ns",
	    "cpu.times.system_mode_ns",
	    "cpu.times.user_nice_ns",
	    "cpu.times.user_ns",
	    "num_forks",
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		CHECK(find_counter_track(tp, names[i], -1, -1) != UINT32_MAX);

	uint32_t mf = find_counter_track(tp, "MemFree", -1, -1);
	CHECK(mf != UINT32_MAX);
	if (mf != UINT32_MAX) {
		int64_t ts = 0;
		CHECK_STR_EQ(sname(tp, tp->t.track.type[mf]), "meminfo");
		CHECK_STR_EQ(sname(tp, tp->t.track.unit[mf]), "bytes");
		CHECK_EQ(tp->t.track.cpu[mf], TP_NULL_I64);
		CHECK_DBL_EQ(counter_value(tp, mf, 0, &ts), 22653720.0 * 1024);
		CHECK_EQ(ts, 1000);
		CHECK_DBL_EQ(counter_value(tp, mf, 1, &ts), 22653464.0 * 1024);
		CHECK_EQ(ts, 2000);
	}
	uint32_t u1 = find_counter_track(tp, "cpu.times.user_ns", 1, -1);
	uint32_t u0 = find_counter_track(tp, "cpu.times.user_ns", 0, -1);
	CHECK(u0 != UINT32_MAX && u1 != UINT32_MAX && u0 != u1);
	if (u1 != UINT32_MAX) {
		CHECK_STR_EQ(sname(tp, tp->t.track.type[u1]), "cpustat");
		CHECK_EQ(tp->t.track.unit[u1], 0);
		CHECK_DBL_EQ(counter_value(tp, u1, 0, NULL), 2000000001.0);
	}
	uint32_t st = find_counter_track(tp, "cpu.times.steal_ns", 0, -1);
	if (st != UINT32_MAX)
		CHECK_DBL_EQ(counter_value(tp, st, 0, NULL), 9000000000.0);
	uint32_t nf = find_counter_track(tp, "num_forks", -1, -1);
	if (nf != UINT32_MAX) {
		CHECK_STR_EQ(sname(tp, tp->t.track.type[nf]), "num_forks");
		CHECK_DBL_EQ(counter_value(tp, nf, 1, NULL), 63308.0);
	}
	tp_free(tp);
	tb_free(buf);
}

TEST(tp_proto_sys_stats_vmstat_irq_psi)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 1, 500);
	unsigned s = pb_begin_nested(&t.w, PB_F_TracePacket_sys_stats);
	kv(&t, PB_F_SysStats_meminfo, PB_E_MeminfoCounters_MEMINFO_COMMITED_AS, 100);
	kv(&t, PB_F_SysStats_meminfo, PB_E_MeminfoCounters_MEMINFO_ACTIVE_ANON, 7);
	kv(&t, PB_F_SysStats_meminfo, 1000, 1); /* unknown: skipped */
	kv(&t, PB_F_SysStats_vmstat, PB_E_VmstatCounters_VMSTAT_NR_FREE_PAGES, 4242);
	kv(&t, PB_F_SysStats_vmstat, PB_E_VmstatCounters_VMSTAT_SWAP_RA_HIT, 5);
	kv(&t, PB_F_SysStats_vmstat, 100000, 5); /* unknown: skipped */
	kv(&t, PB_F_SysStats_num_irq, 27, 900);
	kv(&t, PB_F_SysStats_num_softirq, 3, 80);
	pb_put_uint64(&t.w, PB_F_SysStats_num_irq_total, 11);
	pb_put_uint64(&t.w, PB_F_SysStats_num_softirq_total, 12);
	kv(&t, PB_F_SysStats_psi, PB_E_SysStats_PsiSample_PsiResource_PSI_RESOURCE_MEMORY_SOME,
	   777);
	{
		unsigned z = pb_begin_nested(&t.w, PB_F_SysStats_thermal_zone);
		pb_put_string(&t.w, PB_F_SysStats_ThermalZone_name, "thermal_zone0");
		pb_put_uint64(&t.w, PB_F_SysStats_ThermalZone_temp, 45);
		pb_put_string(&t.w, PB_F_SysStats_ThermalZone_type, "cpu-thermal");
		pb_end_nested(&t.w, z);
	}
	pb_end_nested(&t.w, s);
	pkt_end(&t);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	CHECK_EQ(tp->t.counter.n, 10);
	static const struct {
		const char *name, *type, *unit;
		double v;
	} want[] = {
	    {"Committed_AS", "meminfo", "bytes", 102400},
	    {"Active(anon)", "meminfo", "bytes", 7168},
	    {"nr_free_pages", "vmstat", NULL, 4242},
	    {"swap_ra_hit", "vmstat", NULL, 5},
	    {"num_irq (id: 27)", "num_irq", NULL, 900},
	    {"num_softirq (id: 3)", "num_softirq", NULL, 80},
	    {"num_irq_total", "num_irq_total", NULL, 11},
	    {"num_softirq_total", "num_softirq_total", NULL, 12},
	    {"psi.mem.some", "psi", NULL, 777},
	    {"cpu-thermal", "thermal_temperature_sys", "C", 45},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint32_t id = find_counter_track(tp, want[i].name, -1, -1);
		if (id == UINT32_MAX)
			printf("missing track '%s'\n", want[i].name);
		CHECK(id != UINT32_MAX);
		CHECK_STR_EQ(sname(tp, tp->t.track.type[id]), want[i].type);
		CHECK_STR_EQ(sname(tp, tp->t.track.unit[id]),
		             want[i].unit ? want[i].unit : "(null)");
		CHECK_DBL_EQ(counter_value(tp, id, 0, NULL), want[i].v);
	}
	tp_free(tp);
	tb_free(buf);
}

TEST(tp_proto_process_stats_memory)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	for (uint64_t ts = 100; ts <= 200; ts += 100) {
		pkt_begin(&t, 1, ts);
		unsigned ps = pb_begin_nested(&t.w, PB_F_TracePacket_process_stats);
		unsigned p = pb_begin_nested(&t.w, PB_F_ProcessStats_processes);
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_vm_size_kb,
		              1000 + ts); /* vm_size_kb, before pid */
		pb_put_int32(&t.w, PB_F_ProcessStats_Process_pid, 42);
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_vm_rss_kb, 10);   /* vm_rss_kb */
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_rss_anon_kb, 4);  /* rss_anon_kb */
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_rss_file_kb, 5);  /* rss_file_kb */
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_rss_shmem_kb, 1); /* rss_shmem_kb */
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_vm_swap_kb, 2);   /* vm_swap_kb */
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_vm_locked_kb, 3); /* vm_locked_kb */
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_vm_hwm_kb, 11);   /* vm_hwm_kb */
		pb_put_int64(&t.w, PB_F_ProcessStats_Process_oom_score_adj,
		             -100);                                           /* oom_score_adj */
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_smr_pss_kb, 6); /* smr_pss_kb */
		pb_put_uint64(&t.w, PB_F_ProcessStats_Process_runtime_user_mode,
		              999); /* runtime_user_mode */
		unsigned th = pb_begin_nested(&t.w, PB_F_ProcessStats_Process_threads);
		pb_put_int32(&t.w, PB_F_ProcessStats_Thread_tid, 43);
		pb_end_nested(&t.w, th);
		pb_end_nested(&t.w, p);
		pb_end_nested(&t.w, ps);
		pkt_end(&t);
	}
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	uint32_t upid = tp_process_for_pid(tp, 42);
	CHECK_EQ(tp->t.counter.n, 2 * 11);
	static const struct {
		const char *name, *type;
		double v;
	} want[] = {
	    {"mem.virt", "process_memory", 1100.0 * 1024},
	    {"mem.rss", "process_memory", 10240},
	    {"mem.rss.anon", "process_memory", 4096},
	    {"mem.rss.file", "process_memory", 5120},
	    {"mem.rss.shmem", "process_memory", 1024},
	    {"mem.swap", "process_memory", 2048},
	    {"mem.locked", "process_memory", 3072},
	    {"mem.rss.watermark", "process_memory", 11264},
	    {"oom_score_adj", "oom_score_adj", -100},
	    {"mem.smaps.pss", "smaps", 6144},
	    {"runtime.user_ns", "proc_stat_runtime", 999},
	};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		uint32_t id = find_counter_track(tp, want[i].name, -1, upid);
		if (id == UINT32_MAX)
			printf("missing track '%s'\n", want[i].name);
		CHECK(id != UINT32_MAX);
		int64_t ts = 0;
		CHECK_STR_EQ(sname(tp, tp->t.track.type[id]), want[i].type);
		CHECK_EQ(tp->t.track.unit[id], 0);
		CHECK_EQ(tp->t.track.cpu[id], TP_NULL_I64);
		CHECK_DBL_EQ(counter_value(tp, id, 0, &ts), want[i].v);
		CHECK_EQ(ts, 100);
	}
	uint32_t virt = find_counter_track(tp, "mem.virt", -1, upid);
	if (virt != UINT32_MAX)
		CHECK_DBL_EQ(counter_value(tp, virt, 1, NULL), 1200.0 * 1024);
	uint32_t utid = tp_thread_for_tid(tp, 43, 42);
	CHECK_EQ(tp->t.thread.upid[utid], upid);
	tp_free(tp);
	tb_free(buf);
}

/* ---- ftrace ------------------------------------------------------------------- */

static void ft_switch(struct tb *t, uint64_t ts, int pid, const char *prev_comm, int prev_pid,
                      int64_t prev_state, const char *next_comm, int next_pid, int next_prio)
{
	unsigned e = pb_begin_nested(&t->w, PB_F_FtraceEventBundle_event);
	pb_put_uint64(&t->w, PB_F_FtraceEvent_timestamp, ts);
	pb_put_uint32(&t->w, PB_F_FtraceEvent_pid, (uint32_t)pid);
	unsigned s = pb_begin_nested(&t->w, PB_F_FtraceEvent_sched_switch);
	pb_put_string(&t->w, PB_F_SchedSwitchFtraceEvent_prev_comm, prev_comm);
	pb_put_int32(&t->w, PB_F_SchedSwitchFtraceEvent_prev_pid, prev_pid);
	pb_put_int32(&t->w, PB_F_SchedSwitchFtraceEvent_prev_prio, 120);
	pb_put_int64(&t->w, PB_F_SchedSwitchFtraceEvent_prev_state, prev_state);
	pb_put_string(&t->w, PB_F_SchedSwitchFtraceEvent_next_comm, next_comm);
	pb_put_int32(&t->w, PB_F_SchedSwitchFtraceEvent_next_pid, next_pid);
	pb_put_int32(&t->w, PB_F_SchedSwitchFtraceEvent_next_prio, next_prio);
	pb_end_nested(&t->w, s);
	pb_end_nested(&t->w, e);
}

static uint32_t tid_utid(struct tp *tp, int64_t tid)
{
	for (uint32_t i = tp->t.thread.n; i-- > 0;)
		if (tp->t.thread.tid[i] == tid)
			return i;
	return UINT32_MAX;
}

/* Typed sched_switch / sched_waking on cpu 1: sched rows per switch,
 * thread_state Running / end state / Runnable with the waker. */
TEST(tp_proto_ftrace_sched_switch)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	unsigned b = pb_begin_nested(&t.w, PB_F_TracePacket_ftrace_events); /* ftrace_events */
	pb_put_uint32(&t.w, PB_F_FtraceEventBundle_cpu, 1);                 /* cpu */
	ft_switch(&t, 1000, 0, "swapper/1", 0, 0, "a", 10, 110);
	ft_switch(&t, 2000, 10, "a", 10, 1, "swapper/1", 0, 120);
	unsigned e = pb_begin_nested(&t.w, PB_F_FtraceEventBundle_event);
	pb_put_uint64(&t.w, PB_F_FtraceEvent_timestamp, 2500);
	pb_put_uint32(&t.w, PB_F_FtraceEvent_pid, 0);
	unsigned w = pb_begin_nested(&t.w, PB_F_FtraceEvent_sched_waking); /* sched_waking */
	pb_put_string(&t.w, PB_F_SchedWakingFtraceEvent_comm, "a");
	pb_put_int32(&t.w, PB_F_SchedWakingFtraceEvent_pid, 10);
	pb_put_int32(&t.w, PB_F_SchedWakingFtraceEvent_target_cpu, 1);
	pb_end_nested(&t.w, w);
	pb_end_nested(&t.w, e);
	ft_switch(&t, 3000, 0, "swapper/1", 0, 0x100, "a", 10, 110);
	pb_end_nested(&t.w, b);
	pkt_end(&t);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	uint32_t a = tid_utid(tp, 10);
	CHECK(a != UINT32_MAX);
	CHECK_STR_EQ(sname(tp, tp->t.thread.name[a]), "a");

	struct tp_sched_table *s = &tp->t.sched;
	CHECK_EQ(s->n, 3);
	CHECK_EQ(s->ts[0], 1000);
	CHECK_EQ(tp_sched_dur(tp, 0), 1000);
	CHECK_EQ(s->utid[0], a);
	uint32_t cpu;
	tp_sched_computed_cpu(tp, 0, &cpu);
	CHECK_EQ(cpu, 1);
	CHECK_EQ(tp_sched_priority(tp, 0), 110);
	CHECK_STR_EQ(sname(tp, s->end_state[0]), "S");
	CHECK_EQ(s->utid[1], 0);
	CHECK_STR_EQ(sname(tp, s->end_state[1]), "R+");
	CHECK_EQ(tp_sched_dur(tp, 2), -1);
	CHECK_EQ(s->end_state[2], 0);

	struct tp_thread_state_table *ts = &tp->t.thread_state;
	CHECK_EQ(ts->n, 4); /* the swapper has none */
	static const struct {
		int64_t ts, dur;
		const char *state;
		uint32_t cpu;
	} want[] = {
	    {1000, 1000, "Running", 1},
	    {2000, 500, "S", UINT32_MAX},
	    {2500, 500, "R", UINT32_MAX},
	    {3000, -1, "Running", 1},
	};
	for (uint32_t i = 0; i < 4 && i < ts->n; i++) {
		CHECK_EQ(ts->utid[i], a);
		CHECK_EQ(ts->ts[i], want[i].ts);
		CHECK_EQ(tp_thread_state_dur(tp, i), want[i].dur);
		CHECK_STR_EQ(sname(tp, ts->state[i]), want[i].state);
		tp_thread_state_computed_cpu(tp, i, &cpu);
		CHECK_EQ(cpu, want[i].cpu);
	}
	uint32_t waker;
	tp_thread_state_computed_waker_utid(tp, 2, &waker);
	CHECK_EQ(waker, 0);

	struct tp_ftrace_event_table *fe = &tp->t.ftrace_event;
	CHECK_EQ(fe->n, 4);
	uint32_t name;
	tp_ftrace_event_computed_name(tp, 0, &name);
	CHECK_STR_EQ(sname(tp, name), "sched_switch");
	tp_ftrace_event_computed_name(tp, 2, &name);
	CHECK_STR_EQ(sname(tp, name), "sched_waking");
	CHECK_EQ(fe->utid[1], a);
	CHECK(find_arg(tp, fe->arg_set_id[0], "next_comm") >= 0);
	/* Perfetto's layout: the host's cpu N is ucpu N; cpu 0 was not seen. */
	CHECK_EQ(tp->t.cpu.n, 2);
	CHECK_EQ(tp->t.cpu.cpu[1], 1);
	CHECK_EQ(tp->t.cpu.cpu[0], TP_NULL_U32);
	tp_free(tp);
	tb_free(buf);
}

/* An FtraceEvent at ts by pid with a body message of field id: one int
 * field (f1 = v1), one string (fs = str) and one more int (f2 = v2); 0
 * field numbers are left out. */
static void ft_event(struct tb *t, uint64_t ts, int pid, uint32_t id, uint32_t f1, int64_t v1,
                     uint32_t fs, const char *str, uint32_t f2, int64_t v2)
{
	unsigned e = pb_begin_nested(&t->w, PB_F_FtraceEventBundle_event);
	pb_put_uint64(&t->w, PB_F_FtraceEvent_timestamp, ts);
	pb_put_uint32(&t->w, PB_F_FtraceEvent_pid, (uint32_t)pid);
	unsigned b = pb_begin_nested(&t->w, id);
	if (f1)
		pb_put_int64(&t->w, f1, v1);
	if (fs)
		pb_put_string(&t->w, fs, str);
	if (f2)
		pb_put_int64(&t->w, f2, v2);
	pb_end_nested(&t->w, b);
	pb_end_nested(&t->w, e);
}

static uint32_t nth_upid(struct tp *tp, int64_t pid, int nth)
{
	for (uint32_t i = 0; i < tp->t.process.n; i++)
		if (tp->t.process.pid[i] == pid && nth-- == 0)
			return i;
	return UINT32_MAX;
}

/* Process and thread lifetimes from ftrace, as Perfetto's FtraceParser:
 * task_newtask without CLONE_THREAD starts a process (child of the
 * creator's), with it a thread of the creator's process; task_rename of a
 * main thread renames the process; sched_process_free ends a thread (and
 * its process with the main thread); a reused pid is a new process; init
 * "forking" the idle task is ignored; a ProcessTree name outranks ftrace
 * comms. */
TEST(tp_proto_ftrace_process_lifetimes)
{
	enum {
		NEWTASK = PB_F_FtraceEvent_task_newtask,
		RENAME = PB_F_FtraceEvent_task_rename,
		FREE = PB_F_FtraceEvent_sched_process_free
	};
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 1, 500);
	unsigned pt = pb_begin_nested(&t.w, PB_F_TracePacket_process_tree);
	unsigned pr = pb_begin_nested(&t.w, PB_F_ProcessTree_processes);
	pb_put_int32(&t.w, PB_F_ProcessTree_Process_pid, 100);
	pb_put_int32(&t.w, PB_F_ProcessTree_Process_ppid, 1);
	pb_put_string(&t.w, PB_F_ProcessTree_Process_cmdline, "parent");
	pb_end_nested(&t.w, pr);
	unsigned th = pb_begin_nested(&t.w, PB_F_ProcessTree_threads);
	pb_put_int32(&t.w, PB_F_ProcessTree_Thread_tid, 100);
	pb_put_int32(&t.w, PB_F_ProcessTree_Thread_tgid, 100);
	pb_put_string(&t.w, PB_F_ProcessTree_Thread_name, "ptname");
	pb_end_nested(&t.w, th);
	pb_end_nested(&t.w, pt);
	pkt_end(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	unsigned b = pb_begin_nested(&t.w, PB_F_TracePacket_ftrace_events);
	pb_put_uint32(&t.w, PB_F_FtraceEventBundle_cpu, 0);
	ft_event(&t, 1000, 100, NEWTASK, PB_F_TaskNewtaskFtraceEvent_pid, 200,
	         PB_F_TaskNewtaskFtraceEvent_comm, "child", PB_F_TaskNewtaskFtraceEvent_clone_flags,
	         0x11);
	ft_switch(&t, 1500, 100, "ftname", 100, 1, "child", 200, 120);
	ft_event(&t, 2000, 200, NEWTASK, PB_F_TaskNewtaskFtraceEvent_pid, 201,
	         PB_F_TaskNewtaskFtraceEvent_comm, "worker",
	         PB_F_TaskNewtaskFtraceEvent_clone_flags, 0x10000 | 0x100);
	ft_event(&t, 2500, 201, RENAME, PB_F_TaskRenameFtraceEvent_pid, 201,
	         PB_F_TaskRenameFtraceEvent_newcomm, "w2", 0, 0);
	ft_event(&t, 2600, 200, RENAME, PB_F_TaskRenameFtraceEvent_pid, 200,
	         PB_F_TaskRenameFtraceEvent_newcomm, "child2", 0, 0);
	ft_event(&t, 3000, 0, FREE, PB_F_SchedProcessFreeFtraceEvent_pid, 201,
	         PB_F_SchedProcessFreeFtraceEvent_comm, "w2", 0, 0);
	ft_event(&t, 4000, 0, FREE, PB_F_SchedProcessFreeFtraceEvent_pid, 200,
	         PB_F_SchedProcessFreeFtraceEvent_comm, "child2", 0, 0);
	ft_event(&t, 5000, 100, NEWTASK, PB_F_TaskNewtaskFtraceEvent_pid, 200,
	         PB_F_TaskNewtaskFtraceEvent_comm, "again", PB_F_TaskNewtaskFtraceEvent_clone_flags,
	         0x11);
	ft_event(&t, 5100, 1, NEWTASK, PB_F_TaskNewtaskFtraceEvent_pid, 0,
	         PB_F_TaskNewtaskFtraceEvent_comm, "swapper/0",
	         PB_F_TaskNewtaskFtraceEvent_clone_flags, 0x100);
	pb_end_nested(&t.w, b);
	pkt_end(&t);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	struct tp_process_table *p = &tp->t.process;
	struct tp_thread_table *th_t = &tp->t.thread;

	uint32_t parent = nth_upid(tp, 100, 0), first = nth_upid(tp, 200, 0);
	uint32_t second = nth_upid(tp, 200, 1);
	CHECK(parent != UINT32_MAX && first != UINT32_MAX && second != UINT32_MAX);
	CHECK_EQ(nth_upid(tp, 200, 2), UINT32_MAX);
	if (second == UINT32_MAX)
		goto out;
	CHECK_STR_EQ(sname(tp, p->name[first]), "child2");
	CHECK_EQ(p->start_ts[first], 1000);
	CHECK_EQ(p->end_ts[first], 4000);
	CHECK_EQ(p->parent_upid[first], parent);
	CHECK_STR_EQ(sname(tp, p->name[second]), "again");
	CHECK_EQ(p->start_ts[second], 5000);
	CHECK_EQ(p->end_ts[second], TP_NULL_I64);
	CHECK_EQ(p->parent_upid[second], parent);

	uint32_t worker = tid_utid(tp, 201), main1 = UINT32_MAX;
	for (uint32_t i = 0; i < th_t->n; i++)
		if (th_t->tid[i] == 200 && th_t->upid[i] == first)
			main1 = i;
	CHECK(worker != UINT32_MAX && main1 != UINT32_MAX);
	if (worker == UINT32_MAX || main1 == UINT32_MAX)
		goto out;
	CHECK_EQ(th_t->upid[worker], first);
	CHECK_EQ(th_t->is_main_thread[worker], 0);
	CHECK_EQ(th_t->start_ts[worker], 2000);
	CHECK_EQ(th_t->end_ts[worker], 3000);
	CHECK_STR_EQ(sname(tp, th_t->name[worker]), "w2");
	CHECK_EQ(th_t->start_ts[main1], 1000);
	CHECK_EQ(th_t->end_ts[main1], 4000);
	CHECK_STR_EQ(sname(tp, th_t->name[main1]), "child2");
	CHECK_STR_EQ(sname(tp, th_t->name[tid_utid(tp, 100)]), "ptname");
	CHECK_STR_EQ(sname(tp, th_t->name[0]), "swapper");
	CHECK_EQ(th_t->start_ts[0], TP_NULL_I64);
out:
	tp_free(tp);
	tb_free(buf);
}

/* sched_blocked_reason: io_wait and the blocking function (an interned
 * kernel symbol of the bundle's sequence) on the thread's D state; an
 * unknown iid leaves the function NULL. */
TEST(tp_proto_ftrace_blocked_reason)
{
	enum { BLOCKED = PB_F_FtraceEvent_sched_blocked_reason };
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1); /* incremental state cleared */
	interned_name(&t, PB_F_InternedData_kernel_symbols, 7, "filemap_fault");
	unsigned b = pb_begin_nested(&t.w, PB_F_TracePacket_ftrace_events);
	pb_put_uint32(&t.w, PB_F_FtraceEventBundle_cpu, 0);
	ft_switch(&t, 1000, 0, "swapper/0", 0, 0, "a", 10, 120);
	ft_switch(&t, 2000, 10, "a", 10, 2, "b", 11, 120);
	ft_event(&t, 2010, 0, BLOCKED, PB_F_SchedBlockedReasonFtraceEvent_pid, 10, 0, NULL,
	         PB_F_SchedBlockedReasonFtraceEvent_caller, 7);
	ft_switch(&t, 3000, 11, "b", 11, 2, "a", 10, 120);
	ft_event(&t, 3010, 0, BLOCKED, PB_F_SchedBlockedReasonFtraceEvent_pid, 11, 0, NULL,
	         PB_F_SchedBlockedReasonFtraceEvent_caller, 99);
	pb_end_nested(&t.w, b);
	pkt_end(&t);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	struct tp_thread_state_table *ts = &tp->t.thread_state;
	int seen = 0;
	for (uint32_t i = 0; i < ts->n; i++) {
		if (strcmp(sname(tp, ts->state[i]), "D") != 0)
			continue;
		seen++;
		if (ts->utid[i] == tid_utid(tp, 10)) {
			CHECK_STR_EQ(sname(tp, ts->blocked_function[i]), "filemap_fault");
		} else {
			CHECK_EQ(ts->blocked_function[i], 0);
		}
		CHECK_EQ(ts->io_wait[i], 0);
	}
	CHECK_EQ(seen, 2);
	tp_free(tp);
	tb_free(buf);
}

static void packed_put(struct tb *t, uint32_t field, const uint64_t *v, size_t n)
{
	uint8_t tmp[64];
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len = (size_t)(pb_encode_varint(tmp + len, v[i]) - tmp);
	pb_put_bytes(&t->w, field, tmp, len);
}

/* compact_sched: the first switch of a cpu only sets its current task. */
TEST(tp_proto_ftrace_compact_sched)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	unsigned b = pb_begin_nested(&t.w, PB_F_TracePacket_ftrace_events);
	pb_put_uint32(&t.w, PB_F_FtraceEventBundle_cpu, 0);
	unsigned c = pb_begin_nested(&t.w, PB_F_FtraceEventBundle_compact_sched);
	pb_put_string(&t.w, PB_F_FtraceEventBundle_CompactSched_intern_table, "a");
	pb_put_string(&t.w, PB_F_FtraceEventBundle_CompactSched_intern_table, "swapper/0");
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_switch_timestamp,
	           (const uint64_t[]){1000, 1000}, 2);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_switch_prev_state,
	           (const uint64_t[]){0, 2}, 2);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_switch_next_pid,
	           (const uint64_t[]){10, 0}, 2);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_switch_next_prio,
	           (const uint64_t[]){120, 120}, 2);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_switch_next_comm_index,
	           (const uint64_t[]){0, 1}, 2);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_waking_timestamp,
	           (const uint64_t[]){2500}, 1);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_waking_pid, (const uint64_t[]){10}, 1);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_waking_target_cpu, (const uint64_t[]){0},
	           1);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_waking_prio, (const uint64_t[]){120}, 1);
	packed_put(&t, PB_F_FtraceEventBundle_CompactSched_waking_comm_index, (const uint64_t[]){0},
	           1);
	pb_end_nested(&t.w, c);
	pb_end_nested(&t.w, b);
	pkt_end(&t);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	uint32_t a = tid_utid(tp, 10);
	CHECK(a != UINT32_MAX);
	CHECK_EQ(tp->stats[TP_STAT_compact_sched_switch_skipped], 1);
	CHECK_EQ(tp->t.sched.n, 1);
	CHECK_EQ(tp->t.sched.ts[0], 2000);
	CHECK_EQ(tp->t.sched.utid[0], 0);
	CHECK_EQ(tp->t.thread_state.n, 2);
	CHECK_EQ(tp->t.thread_state.utid[0], a);
	CHECK_STR_EQ(sname(tp, tp->t.thread_state.state[0]), "D");
	CHECK_EQ(tp_thread_state_dur(tp, 0), 500);
	CHECK_STR_EQ(sname(tp, tp->t.thread_state.state[1]), "R");
	uint32_t waker;
	tp_thread_state_computed_waker_utid(tp, 1, &waker);
	CHECK_EQ(waker, 0);
	CHECK_EQ(tp->t.ftrace_event.n, 2);
	CHECK_EQ(tp->t.ftrace_event.utid[0], a); /* the prev task */
	tp_free(tp);
	tb_free(buf);
}

/* A compact_sched bundle of 3 switches on cpu (timestamps t0 + k * step),
 * to tids base, base + 1, base. */
static void compact_bundle(struct tb *t, uint32_t cpu, uint64_t t0, uint64_t step, int base)
{
	pkt_begin(t, 1, UINT64_MAX);
	unsigned b = pb_begin_nested(&t->w, PB_F_TracePacket_ftrace_events);
	pb_put_uint32(&t->w, PB_F_FtraceEventBundle_cpu, cpu);
	unsigned c = pb_begin_nested(&t->w, PB_F_FtraceEventBundle_compact_sched);
	pb_put_string(&t->w, PB_F_FtraceEventBundle_CompactSched_intern_table, "w");
	packed_put(t, PB_F_FtraceEventBundle_CompactSched_switch_timestamp,
	           (const uint64_t[]){t0, step, step}, 3);
	packed_put(t, PB_F_FtraceEventBundle_CompactSched_switch_prev_state,
	           (const uint64_t[]){1, 1, 1}, 3);
	packed_put(t, PB_F_FtraceEventBundle_CompactSched_switch_next_pid,
	           (const uint64_t[]){(uint64_t)base, (uint64_t)base + 1, (uint64_t)base}, 3);
	packed_put(t, PB_F_FtraceEventBundle_CompactSched_switch_next_prio,
	           (const uint64_t[]){120, 120, 120}, 3);
	packed_put(t, PB_F_FtraceEventBundle_CompactSched_switch_next_comm_index,
	           (const uint64_t[]){0, 0, 0}, 3);
	pb_end_nested(&t->w, c);
	pb_end_nested(&t->w, b);
	pkt_end(t);
}

/* The cpus of one sequence take turns, each bundle overlapping the other
 * cpu's in time: while the sorter streams (here after every packet), a
 * cpu's events must not be dropped as late because another cpu's bundle of
 * the same drain came first (each cpu is its own sorter run). */
TEST(tp_proto_ftrace_compact_sched_cpus_interleave)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	compact_bundle(&t, 0, 1000, 1000, 10);
	compact_bundle(&t, 1, 3100, 100, 20);
	compact_bundle(&t, 0, 4000, 1000, 10); /* 4000 .. 6000 */
	compact_bundle(&t, 1, 4500, 1000, 20); /* 4500 .. 6500: behind cpu 0 */
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = tp_new(NULL);
	tp_sorter_set_window(tp->sorter, 1);
	CHECK_EQ(tp_parse(tp, buf, n), 0);
	CHECK_EQ(tp_end_of_file(tp), 0);
	CHECK_EQ(tp->stats[TP_STAT_sorter_push_event_out_of_order], 0);
	CHECK_EQ(tp->stats[TP_STAT_compact_sched_switch_skipped], 2);
	CHECK_EQ(tp->t.sched.n, 10);
	CHECK_EQ(tp->t.ftrace_event.n, 10);
	for (uint32_t i = 1; i < tp->t.sched.n; i++)
		CHECK(tp->t.sched.ts[i - 1] <= tp->t.sched.ts[i]);
	CHECK_EQ(tp->t.sched.ts[9], 6500);
	tp_free(tp);
	tb_free(buf);
}

/* A bundle of plain FtraceEvents on cpu: n print events at t0 + k * step
 * (FtraceEvent timestamp 1, pid 2, print 3 { buf 2 }). */
static void print_bundle(struct tb *t, uint32_t cpu, uint64_t t0, uint64_t step, int n)
{
	pkt_begin(t, 1, UINT64_MAX);
	unsigned b = pb_begin_nested(&t->w, PB_F_TracePacket_ftrace_events);
	pb_put_uint32(&t->w, PB_F_FtraceEventBundle_cpu, cpu);
	for (int k = 0; k < n; k++) {
		unsigned e = pb_begin_nested(&t->w, PB_F_FtraceEventBundle_event);
		pb_put_uint64(&t->w, PB_F_FtraceEvent_timestamp, t0 + (uint64_t)k * step);
		pb_put_uint32(&t->w, PB_F_FtraceEvent_pid, 7);
		unsigned pr = pb_begin_nested(&t->w, PB_F_FtraceEvent_print);
		pb_put_string(&t->w, PB_F_PrintFtraceEvent_buf, "x");
		pb_end_nested(&t->w, pr);
		pb_end_nested(&t->w, e);
	}
	pb_end_nested(&t->w, b);
	pkt_end(t);
}

static struct tp *load_streaming(const uint8_t *buf, size_t n)
{
	struct tp *tp = tp_new(NULL);
	tp_sorter_set_window(tp->sorter, 1);
	if (tp_parse(tp, buf, n) != 0 || tp_end_of_file(tp) != 0)
		tp->stats[TP_STAT_sorter_push_event_out_of_order] = 999999; /* fails the test */
	return tp;
}

/* Regression: plain FtraceEvents of all cpus of a sequence shared one sorter
 * run, so a cpu's bundle behind another cpu's bundle of the same drain was
 * dropped as late while the sorter streamed (a 2 s context-switch storm
 * recorded without compact_sched lost 18 % of its events). */
TEST(tp_proto_ftrace_plain_cpus_interleave)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	print_bundle(&t, 0, 1000, 1000, 3); /* 1000 .. 3000 */
	print_bundle(&t, 1, 3100, 100, 3);
	print_bundle(&t, 0, 4000, 1000, 3); /* 4000 .. 6000 */
	print_bundle(&t, 1, 4500, 1000, 3); /* 4500 .. 6500: behind cpu 0 */
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load_streaming(buf, n);
	CHECK_EQ(tp->stats[TP_STAT_sorter_push_event_out_of_order], 0);
	CHECK_EQ(tp->t.ftrace_event.n, 12);
	tp_free(tp);
	tb_free(buf);
}

/* Regression: with SystemInfo.num_cpus known, the first bundle of a cpu
 * that comes after other cpus' bundles of the same drain (a recorder reads
 * cpu after cpu) is not dropped: the sorter holds back until every cpu of
 * the sequence has been heard from (or has been silent for long). */
TEST(tp_proto_ftrace_first_bundle_of_a_cpu_late)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 0, UINT64_MAX); /* SystemInfo { num_cpus: 2 } */
	unsigned si = pb_begin_nested(&t.w, PB_F_TracePacket_system_info);
	pb_put_uint32(&t.w, PB_F_SystemInfo_num_cpus, 2);
	pb_end_nested(&t.w, si);
	pkt_end(&t);
	compact_bundle(&t, 0, 1000, 1000, 10); /* 1000 .. 3000 */
	compact_bundle(&t, 0, 4000, 1000, 10); /* 4000 .. 6000 */
	print_bundle(&t, 0, 6100, 100, 2);
	compact_bundle(&t, 1, 1500, 1000, 20); /* cpu 1's first: 1500 .. 3500 */
	print_bundle(&t, 1, 3600, 100, 2);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load_streaming(buf, n);
	CHECK_EQ(tp->stats[TP_STAT_sorter_push_event_out_of_order], 0);
	CHECK_EQ(tp->stats[TP_STAT_compact_sched_switch_skipped], 2);
	CHECK_EQ(tp->t.ftrace_event.n, 11);
	for (uint32_t i = 1; i < tp->t.ftrace_event.n; i++) {
		int64_t a, b;
		tp_ftrace_event_computed_ts(tp, i - 1, &a);
		tp_ftrace_event_computed_ts(tp, i, &b);
		CHECK(a <= b);
	}
	tp_free(tp);
	tb_free(buf);
}

/* ---- perf_sample ---------------------------------------------------------- */

/* Sample i as the perf_sample view shows it. */
#define PS(tp, i) tp_profiler_sample_row(tp, i)

static void perf_interned(struct tb *t)
{
	unsigned id = pb_begin_nested(&t->w, PB_F_TracePacket_interned_data);
	unsigned e = pb_begin_nested(&t->w, PB_F_InternedData_build_ids);
	pb_put_uint64(&t->w, PB_F_InternedString_iid, 1);
	pb_put_bytes(&t->w, PB_F_InternedString_str, (const uint8_t *)"\xab\x01", 2);
	pb_end_nested(&t->w, e);
	const char *comps[] = {"usr", "lib", "libc.so"};
	for (unsigned i = 0; i < 3; i++) {
		e = pb_begin_nested(&t->w, PB_F_InternedData_mapping_paths);
		pb_put_uint64(&t->w, PB_F_InternedString_iid, i + 1);
		pb_put_string(&t->w, PB_F_InternedString_str, comps[i]);
		pb_end_nested(&t->w, e);
	}
	const char *fns[] = {"main", "work"};
	for (unsigned i = 0; i < 2; i++) {
		e = pb_begin_nested(&t->w, PB_F_InternedData_function_names);
		pb_put_uint64(&t->w, PB_F_InternedString_iid, i + 1);
		pb_put_string(&t->w, PB_F_InternedString_str, fns[i]);
		pb_end_nested(&t->w, e);
	}
	e = pb_begin_nested(&t->w, PB_F_InternedData_mappings);
	pb_put_uint64(&t->w, PB_F_Mapping_iid, 1);
	pb_put_uint64(&t->w, PB_F_Mapping_build_id, 1);
	pb_put_uint64(&t->w, PB_F_Mapping_start, 0x1000);
	pb_put_uint64(&t->w, PB_F_Mapping_end, 0x5000);
	packed_put(t, PB_F_Mapping_path_string_ids, (const uint64_t[]){1, 2, 3}, 3);
	pb_end_nested(&t->w, e);
	for (unsigned i = 0; i < 2; i++) {
		e = pb_begin_nested(&t->w, PB_F_InternedData_frames);
		pb_put_uint64(&t->w, PB_F_Frame_iid, i + 1);
		pb_put_uint64(&t->w, PB_F_Frame_function_name_id, i + 1);
		pb_put_uint64(&t->w, PB_F_Frame_mapping_id, 1);
		pb_put_uint64(&t->w, PB_F_Frame_rel_pc, 0x10 * (i + 1));
		pb_end_nested(&t->w, e);
	}
	e = pb_begin_nested(&t->w, PB_F_InternedData_callstacks); /* main -> work */
	pb_put_uint64(&t->w, PB_F_Callstack_iid, 1);
	packed_put(t, PB_F_Callstack_frame_ids, (const uint64_t[]){1, 2}, 2);
	pb_end_nested(&t->w, e);
	e = pb_begin_nested(&t->w, PB_F_InternedData_callstacks); /* main alone */
	pb_put_uint64(&t->w, PB_F_Callstack_iid, 2);
	pb_put_uint64(&t->w, PB_F_Callstack_frame_ids, 1);
	pb_end_nested(&t->w, e);
	pb_end_nested(&t->w, id);
}

static void perf_sample(struct tb *t, uint64_t ts, uint64_t cs, uint32_t mode)
{
	pkt_begin(t, 7, ts);
	pb_put_uint32(&t->w, PB_F_TracePacket_sequence_flags, 2);
	unsigned s = pb_begin_nested(&t->w, PB_F_TracePacket_perf_sample);
	pb_put_uint32(&t->w, PB_F_PerfSample_cpu, 3);
	pb_put_uint32(&t->w, PB_F_PerfSample_pid, 40);
	pb_put_uint32(&t->w, PB_F_PerfSample_tid, 41);
	pb_put_uint64(&t->w, PB_F_PerfSample_callstack_iid, cs);
	pb_put_uint32(&t->w, PB_F_PerfSample_cpu_mode, mode);
	pb_put_uint32(&t->w, PB_F_PerfSample_unwind_error, 1);
	pb_end_nested(&t->w, s);
	pkt_end(t);
}

/* Two samples sharing the root callsite, a lost-records and a skipped one. */
TEST(tp_proto_perf_sample_callstacks)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 7, 100);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	perf_interned(&t);
	pkt_end(&t);
	perf_sample(&t, 200, 1, 2);
	perf_sample(&t, 300, 2, 1);
	pkt_begin(&t, 7, 400);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 2);
	unsigned s = pb_begin_nested(&t.w, PB_F_TracePacket_perf_sample);
	pb_put_uint32(&t.w, PB_F_PerfSample_cpu, 0);
	pb_put_uint64(&t.w, PB_F_PerfSample_kernel_records_lost, 5);
	pb_end_nested(&t.w, s);
	pkt_end(&t);
	pkt_begin(&t, 7, 500);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 2);
	s = pb_begin_nested(&t.w, PB_F_TracePacket_perf_sample);
	pb_put_uint32(&t.w, PB_F_PerfSample_sample_skipped_reason, 1);
	pb_end_nested(&t.w, s);
	pkt_end(&t);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 7);

	int64_t lost = 0;
	CHECK_EQ(tp->t.profiler_sample.n, 3); /* the skipped sample is a row without a callsite */
	CHECK_EQ(PS(tp, 2).ts, 500);
	CHECK_EQ(PS(tp, 2).callsite, TP_NULL_U32);
	CHECK_EQ(tp->t.profiler_session.n, 1);
	CHECK(tp_istat_get(tp, TP_ISTAT_perf_cpu_lost_records, 0, &lost));
	CHECK_EQ(lost, 5);
	CHECK_EQ(tp->stats[TP_STAT_perf_samples_skipped_dataloss], 0);
	CHECK_EQ(tp->stats[TP_STAT_perf_samples_skipped], 1);
	CHECK_EQ(PS(tp, 0).ts, 200);
	CHECK_EQ(PS(tp, 1).ts, 300);
	CHECK_EQ(PS(tp, 0).cpu, 3);
	CHECK_EQ(PS(tp, 0).utid, tid_utid(tp, 41));
	CHECK_EQ(PS(tp, 1).utid, PS(tp, 0).utid);
	CHECK_STR_EQ(sname(tp, PS(tp, 0).cpu_mode), "user");
	CHECK_STR_EQ(sname(tp, PS(tp, 1).cpu_mode), "kernel");
	CHECK_STR_EQ(sname(tp, PS(tp, 0).unwind_error), "none");
	CHECK_EQ(PS(tp, 0).session, 0);
	CHECK_EQ(PS(tp, 1).session, 0);

	const struct tp_stack_profile_mapping_table *m = &tp->t.stack_profile_mapping;
	CHECK_EQ(m->n, 1);
	CHECK_STR_EQ(sname(tp, m->name[0]), "/usr/lib/libc.so");
	CHECK_STR_EQ(sname(tp, m->build_id[0]), "ab01");
	CHECK_EQ(m->start[0], 0x1000);
	CHECK_EQ(m->end[0], 0x5000);
	const struct tp_stack_profile_frame_table *fr = &tp->t.stack_profile_frame;
	CHECK_EQ(fr->n, 2);
	CHECK_STR_EQ(sname(tp, fr->name[0]), "main");
	CHECK_STR_EQ(sname(tp, fr->name[1]), "work");
	CHECK_EQ(fr->rel_pc[1], 0x20);
	CHECK_EQ(fr->mapping[1], 0);
	const struct tp_stack_profile_callsite_table *cs = &tp->t.stack_profile_callsite;
	CHECK_EQ(cs->n, 2);
	CHECK_EQ(cs->depth[0], 0);
	CHECK_EQ(cs->parent_id[0], TP_NULL_I64);
	CHECK_EQ(cs->frame_id[0], 0);
	CHECK_EQ(cs->depth[1], 1);
	CHECK_EQ(cs->parent_id[1], 0);
	CHECK_EQ(cs->frame_id[1], 1);
	CHECK_EQ(PS(tp, 0).callsite, 1); /* leaf: work */
	CHECK_EQ(PS(tp, 1).callsite, 0); /* main, shared */
	tp_free(tp);
	tb_free(buf);
}

static void perf_skipped(struct tb *t, uint64_t ts, uint32_t cpu, uint32_t tid, uint32_t reason)
{
	pkt_begin(t, 7, ts);
	pb_put_uint32(&t->w, PB_F_TracePacket_sequence_flags, 2);
	unsigned s = pb_begin_nested(&t->w, PB_F_TracePacket_perf_sample);
	pb_put_uint32(&t->w, PB_F_PerfSample_cpu, cpu);
	pb_put_uint32(&t->w, PB_F_PerfSample_pid, tid);
	pb_put_uint32(&t->w, PB_F_PerfSample_tid, tid);
	pb_put_uint32(&t->w, PB_F_PerfSample_cpu_mode, 2);
	pb_put_uint32(&t->w, PB_F_PerfSample_sample_skipped_reason, reason);
	pb_end_nested(&t->w, s);
	pkt_end(t);
}

static void perf_lost(struct tb *t, uint64_t ts, uint32_t cpu, uint64_t lost)
{
	pkt_begin(t, 7, ts);
	pb_put_uint32(&t->w, PB_F_TracePacket_sequence_flags, 2);
	unsigned s = pb_begin_nested(&t->w, PB_F_TracePacket_perf_sample);
	pb_put_uint32(&t->w, PB_F_PerfSample_cpu, cpu);
	pb_put_uint64(&t->w, PB_F_PerfSample_kernel_records_lost, lost);
	pb_end_nested(&t->w, s);
	pkt_end(t);
}

/* Perfetto's accounting of what traced_perf did not unwind: lost records
 * per cpu, skips by reason (NOT_IN_SCOPE uncounted), every skipped sample a
 * row without a callsite, and the process sharding of the defaults. */
TEST(tp_proto_perf_sample_skips_and_losses)
{
	struct tb t;
	size_t n;
	int64_t v;
	tb_init(&t);
	pkt_begin(&t, 7, 100);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	unsigned d = pb_begin_nested(&t.w, PB_F_TracePacket_trace_packet_defaults),
	         psd = pb_begin_nested(&t.w, PB_F_TracePacketDefaults_perf_sample_defaults);
	pb_put_uint32(&t.w, PB_F_PerfSampleDefaults_process_shard_count,
	              4); /* process_shard_count */
	pb_put_uint32(&t.w, PB_F_PerfSampleDefaults_chosen_process_shard,
	              3); /* chosen_process_shard */
	pb_end_nested(&t.w, psd);
	pb_end_nested(&t.w, d);
	pkt_end(&t);
	perf_lost(&t, 150, 2, 7);
	perf_lost(&t, 160, 2, 3);
	perf_lost(&t, 170, 0, 0); /* no loss: a (sample) row, as in Perfetto */
	perf_lost(&t, 180, 1, 1);
	perf_skipped(&t, 200, 1, 50, 4);
	perf_skipped(&t, 210, 1, 51, 3);
	perf_skipped(&t, 220, 1, 51, 3);
	perf_skipped(&t, 230, 0, 52, 2);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	CHECK_EQ(tp->t.profiler_sample.n, 5);
	for (uint32_t i = 0; i < tp->t.profiler_sample.n; i++)
		CHECK_EQ(PS(tp, i).callsite, TP_NULL_U32);
	CHECK_EQ(PS(tp, 1).ts, 200);
	CHECK_EQ(PS(tp, 1).utid, tid_utid(tp, 50));
	CHECK_EQ(PS(tp, 1).cpu, 1);
	CHECK_STR_EQ(sname(tp, PS(tp, 1).cpu_mode), "user");
	CHECK(tp_istat_get(tp, TP_ISTAT_perf_cpu_lost_records, 2, &v));
	CHECK_EQ(v, 10);
	CHECK(tp_istat_get(tp, TP_ISTAT_perf_cpu_lost_records, 1, &v));
	CHECK_EQ(v, 1);
	CHECK(!tp_istat_get(tp, TP_ISTAT_perf_cpu_lost_records, 0, &v));
	CHECK_EQ(tp->stats[TP_STAT_perf_samples_skipped_dataloss], 2);
	CHECK_EQ(tp->stats[TP_STAT_perf_samples_skipped], 1);
	CHECK(tp_istat_get(tp, TP_ISTAT_perf_process_shard_count, 0, &v));
	CHECK_EQ(v, 4);
	CHECK(tp_istat_get(tp, TP_ISTAT_perf_chosen_process_shard, 0, &v));
	CHECK_EQ(v, 3);
	tp_free(tp);
	tb_free(buf);
}

/* An unknown callstack iid still gives a sample, without a callsite. */
TEST(tp_proto_perf_sample_unknown_callstack)
{
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 7, 100);
	pb_put_uint32(&t.w, PB_F_TracePacket_sequence_flags, 1);
	pkt_end(&t);
	perf_sample(&t, 200, 9, 7);
	uint8_t *buf = tb_take(&t, &n);
	struct tp *tp = load(buf, n, 0);
	CHECK_EQ(tp->t.profiler_sample.n, 1);
	CHECK_EQ(PS(tp, 0).callsite, TP_NULL_U32);
	CHECK_STR_EQ(sname(tp, PS(tp, 0).cpu_mode), "unknown");
	CHECK_EQ(tp->stats[TP_STAT_stackprofile_invalid_callstack_id], 1);
	tp_free(tp);
	tb_free(buf);
}
