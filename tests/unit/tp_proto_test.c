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
	t->pkt = pb_begin_nested(&t->w, 1);
	if (seq)
		pb_put_uint32(&t->w, 10, seq);
	if (ts != UINT64_MAX)
		pb_put_uint64(&t->w, 8, ts);
}
static void pkt_end(struct tb *t)
{
	pb_end_nested(&t->w, t->pkt);
}
static void interned_name(struct tb *t, uint32_t field, uint64_t iid, const char *name)
{
	unsigned id = pb_begin_nested(&t->w, 12);
	unsigned e = pb_begin_nested(&t->w, field);
	pb_put_uint64(&t->w, 1, iid);
	pb_put_string(&t->w, 2, name);
	pb_end_nested(&t->w, e);
	pb_end_nested(&t->w, id);
}
static void thread_track(struct tb *t, uint64_t uuid, int pid, int tid, const char *name)
{
	unsigned d = pb_begin_nested(&t->w, 60);
	pb_put_uint64(&t->w, 1, uuid);
	unsigned th = pb_begin_nested(&t->w, 4);
	pb_put_int32(&t->w, 1, pid);
	pb_put_int32(&t->w, 2, tid);
	if (name)
		pb_put_string(&t->w, 5, name);
	pb_end_nested(&t->w, th);
	pb_end_nested(&t->w, d);
}
/* A TrackEvent of type on uuid (0 = none) named by iid or string. */
static void track_event(struct tb *t, int type, uint64_t uuid, uint64_t name_iid, const char *name,
                        uint64_t cat_iid)
{
	unsigned e = pb_begin_nested(&t->w, 11);
	pb_put_uint32(&t->w, 9, (uint32_t)type);
	if (uuid)
		pb_put_uint64(&t->w, 11, uuid);
	if (name_iid)
		pb_put_uint64(&t->w, 10, name_iid);
	if (name)
		pb_put_string(&t->w, 23, name);
	if (cat_iid)
		pb_put_uint64(&t->w, 3, cat_iid);
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
	pb_put_uint32(&t.w, 13, 1 | 2);
	thread_track(&t, 1, 10, 11, "main");
	interned_name(&t, 2, 1, "outer");
	interned_name(&t, 1, 1, "cat1");
	{
		unsigned d = pb_begin_nested(&t.w, 59);
		unsigned te = pb_begin_nested(&t.w, 11);
		pb_put_uint64(&t.w, 11, 1);
		pb_end_nested(&t.w, te);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, 100);
	pb_put_uint32(&t.w, 13, 2);
	track_event(&t, 1, 0, 1, NULL, 1);
	pkt_end(&t);
	pkt_begin(&t, 1, 150);
	pb_put_uint32(&t.w, 13, 2);
	interned_name(&t, 2, 2, "inner");
	{
		unsigned e = pb_begin_nested(&t.w, 11);
		pb_put_uint32(&t.w, 9, 1);
		pb_put_uint64(&t.w, 10, 2);
		pb_put_string(&t.w, 22, "a");
		pb_put_string(&t.w, 22, "b");
		unsigned da = pb_begin_nested(&t.w, 4);
		pb_put_string(&t.w, 10, "x");
		pb_put_int64(&t.w, 4, -5);
		pb_end_nested(&t.w, da);
		da = pb_begin_nested(&t.w, 4);
		pb_put_string(&t.w, 10, "d");
		unsigned ent = pb_begin_nested(&t.w, 11);
		pb_put_string(&t.w, 10, "k");
		pb_put_string(&t.w, 6, "v");
		pb_end_nested(&t.w, ent);
		unsigned arr = pb_begin_nested(&t.w, 12);
		pb_put_bool(&t.w, 2, true);
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
	struct tb t;
	tb_init(&t);
	pkt_begin(&t, 1, 0);
	pb_put_uint32(&t.w, 13, 1);
	thread_track(&t, 7, 10, 11, "main");
	interned_name(&t, 2, 1, "one");
	interned_name(&t, 2, 300, "big");
	interned_name(&t, 1, 1, "cat");
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
		pb_put_uint32(&t.w, 13, ev[i].flags);
		if (i == 3)
			pb_put_uint32(&t.w, 58, 6); /* timestamp_clock_id BOOTTIME */
		if (pad)
			pb_put_uint32(&t.w, 900, 1);
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
	pb_put_uint32(&t.w, 13, 1);
	thread_track(&t, 1, 5, 6, NULL);
	pkt_end(&t);
	pkt_begin(&t, 1, 500);
	pb_put_uint32(&t.w, 13, 1 | 2);
	interned_name(&t, 2, 1, "first");
	track_event(&t, 3, 1, 1, NULL, 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 100);
	pb_put_uint32(&t.w, 13, 1 | 2);
	interned_name(&t, 2, 1, "second");
	track_event(&t, 3, 1, 1, NULL, 0);
	pkt_end(&t);
	/* Dropped packets invalidate the state: skipped and counted. */
	pkt_begin(&t, 1, 600);
	pb_put_uint32(&t.w, 42, 1);
	pb_put_uint32(&t.w, 13, 2);
	track_event(&t, 3, 1, 1, NULL, 0);
	pkt_end(&t);
	/* A sequence that never cleared its state. */
	pkt_begin(&t, 2, 700);
	pb_put_uint32(&t.w, 13, 2);
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
	unsigned cs = pb_begin_nested(&t->w, 6);
	unsigned c = pb_begin_nested(&t->w, 1);
	pb_put_uint32(&t->w, 1, 6);
	pb_put_uint64(&t->w, 2, boot);
	pb_end_nested(&t->w, c);
	c = pb_begin_nested(&t->w, 1);
	pb_put_uint32(&t->w, 1, id);
	pb_put_uint64(&t->w, 2, ts);
	if (inc)
		pb_put_bool(&t->w, 3, true);
	if (mult)
		pb_put_uint64(&t->w, 4, mult);
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
	pb_put_uint32(&t.w, 58, 6);
	pb_put_uint32(&t.w, 13, 1);
	clock_snapshot(&t, 64, 10, true, 1000, 20000);
	thread_track(&t, 1, 1, 1, NULL);
	{
		unsigned d = pb_begin_nested(&t.w, 59);
		pb_put_uint32(&t.w, 58, 64);
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
	pb_put_uint32(&t.w, 58, 3);
	track_event(&t, 3, 1, 0, "mono", 0);
	pkt_end(&t);
	pkt_begin(&t, 1, 1); /* REALTIME: no snapshot */
	pb_put_uint32(&t.w, 58, 1);
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
	pb_put_bytes(&t.w, 50, z, clen);
	pkt_end(&t);
	pkt_begin(&t, 0, UINT64_MAX);
	pb_put_bytes(&t.w, 50, "garbage", 7);
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
	pb_put_uint32(&t.w, 13, 1);
	{
		unsigned d = pb_begin_nested(&t.w, 60);
		pb_put_uint64(&t.w, 1, 7);
		pb_put_string(&t.w, 2, "mem");
		unsigned c = pb_begin_nested(&t.w, 8);
		pb_put_uint32(&t.w, 3, 3);
		pb_put_bool(&t.w, 5, true);
		pb_end_nested(&t.w, c);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	for (int i = 0; i < 3; i++) {
		pkt_begin(&t, 1, 100 + (uint64_t)i * 10);
		unsigned e = pb_begin_nested(&t.w, 11);
		pb_put_uint32(&t.w, 9, 4);
		pb_put_uint64(&t.w, 11, 7);
		pb_put_int64(&t.w, 30, 5);
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
	pb_put_uint32(&t.w, 13, 1);
	pb_put_bool(&t.w, 87, true);
	{
		unsigned d = pb_begin_nested(&t.w, 60);
		pb_put_uint64(&t.w, 1, 1);
		unsigned th = pb_begin_nested(&t.w, 4);
		pb_put_int32(&t.w, 1, 5);
		pb_put_int32(&t.w, 2, 6);
		pb_end_nested(&t.w, th);
		pb_put_string(&t.w, 14, "the thread");
		pb_put_bool(&t.w, 9, true);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, 0);
	{
		unsigned d = pb_begin_nested(&t.w, 60);
		pb_put_uint64(&t.w, 1, 2);
		pb_put_uint64(&t.w, 5, 1);
		pb_put_int32(&t.w, 12, -3);
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
		unsigned d = pb_begin_nested(&t.w, 60);
		pb_put_uint64(&t.w, 1, 1);
		pb_put_string(&t.w, 2, names[i]);
		pb_put_uint32(&t.w, 15, 2);
		pb_end_nested(&t.w, d);
		pkt_end(&t);
		pkt_begin(&t, 1, 100 + (uint64_t)i);
		d = pb_begin_nested(&t.w, 60);
		pb_put_uint64(&t.w, 1, 2);
		pb_put_string(&t.w, 2, names[i]);
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
		pb_put_uint32(&t.w, 13, 1);
		thread_track(&t, 1, 5, 6, "t");
		unsigned df = pb_begin_nested(&t.w, 59);
		unsigned te = pb_begin_nested(&t.w, 11);
		pb_put_uint64(&t.w, 11, 1);
		pb_put_uint64(&t.w, 31, 10);
		pb_end_nested(&t.w, te);
		pb_end_nested(&t.w, df);
		pkt_end(&t);
		pkt_begin(&t, 1, 1000 * (uint64_t)gen);
		unsigned d = pb_begin_nested(&t.w, 60);
		pb_put_uint64(&t.w, 1, 10);
		pb_put_uint64(&t.w, 5, 1);
		unsigned c = pb_begin_nested(&t.w, 8);
		pb_put_uint32(&t.w, 1, 1);
		pb_put_int64(&t.w, 4, 1000);
		pb_put_bool(&t.w, 5, true);
		pb_end_nested(&t.w, c);
		pb_end_nested(&t.w, d);
		pkt_end(&t);
		for (int i = 0; i < 2; i++) {
			pkt_begin(&t, 1, 1000 * (uint64_t)gen + 10 + (uint64_t)i);
			pb_put_uint32(&t.w, 13, 2);
			unsigned e = pb_begin_nested(&t.w, 11);
			pb_put_uint32(&t.w, 9, (uint32_t)(i + 1));
			pb_put_string(&t.w, 23, "s");
			pb_put_int64(&t.w, 12, gen ? 7 : 3);
			pb_end_nested(&t.w, e);
			pkt_end(&t);
		}
	}
	pkt_begin(&t, 2, 5000);
	{
		unsigned e = pb_begin_nested(&t.w, 11);
		pb_put_uint32(&t.w, 9, 3);
		pb_put_uint64(&t.w, 11, 1);
		pb_put_string(&t.w, 23, "legacy");
		pb_put_int64(&t.w, 17, 42);
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
		unsigned cs = pb_begin_nested(&t.w, 6);
		unsigned c = pb_begin_nested(&t.w, 1);
		pb_put_uint32(&t.w, 1, 3);
		pb_put_uint64(&t.w, 2, 1);
		pb_end_nested(&t.w, c);
		c = pb_begin_nested(&t.w, 1);
		pb_put_uint32(&t.w, 1, 6);
		pb_put_uint64(&t.w, 2, 0);
		pb_end_nested(&t.w, c);
		pb_end_nested(&t.w, cs);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	pb_put_uint32(&t.w, 13, 1);
	pkt_end(&t);
	int64_t abs_us[] = {1000, -9223372036854776LL};
	for (int i = 0; i < 2; i++) {
		pkt_begin(&t, 1, UINT64_MAX);
		unsigned e = pb_begin_nested(&t.w, 11);
		pb_put_uint32(&t.w, 9, 3);
		pb_put_string(&t.w, 23, i ? "bad" : "good");
		pb_put_int64(&t.w, 16, abs_us[i]);
		pb_end_nested(&t.w, e);
		pkt_end(&t);
	}
	pkt_begin(&t, 1, UINT64_MAX);
	{
		unsigned d = pb_begin_nested(&t.w, 44);
		pb_put_int64(&t.w, 6, -9223372036854775LL);
		pb_end_nested(&t.w, d);
	}
	pkt_end(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	{
		unsigned e = pb_begin_nested(&t.w, 11);
		pb_put_uint32(&t.w, 9, 3);
		pb_put_string(&t.w, 23, "bad2");
		pb_put_int64(&t.w, 1, -1);
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
	pb_put_uint32(&t.w, 13, 1);
	thread_track(&t, 1, 5, 7, "t");
	pkt_end(&t);
	pkt_begin(&t, 1, 10);
	{
		unsigned e = pb_begin_nested(&t.w, 11);
		pb_put_uint64(&t.w, 11, 0);
		pb_put_string(&t.w, 23, "legacy");
		unsigned l = pb_begin_nested(&t.w, 6);
		pb_put_int32(&t.w, 2, 'I');
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

static void kv(struct tb *t, uint32_t field, uint64_t key, uint64_t value)
{
	unsigned m = pb_begin_nested(&t->w, field);
	pb_put_uint64(&t->w, 1, key);
	pb_put_uint64(&t->w, 2, value);
	pb_end_nested(&t->w, m);
}

/* The shape of the golden sched traces' linux.sys_stats packets: four
 * meminfo keys, cpu times of two cpus, num_forks. */
static void sys_stats_golden_packet(struct tb *t, uint64_t ts, uint64_t mem_free)
{
	pkt_begin(t, 1, ts);
	unsigned s = pb_begin_nested(&t->w, 7);
	kv(t, 1, 1, 24684092); /* MEMINFO_MEM_TOTAL */
	kv(t, 1, 2, mem_free); /* MEMINFO_MEM_FREE */
	kv(t, 1, 3, 24228912); /* MEMINFO_MEM_AVAILABLE */
	kv(t, 1, 5, 1689028);  /* MEMINFO_CACHED */
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		unsigned c = pb_begin_nested(&t->w, 3);
		pb_put_uint32(&t->w, 1, cpu);
		for (uint32_t f = 2; f <= 9; f++)
			pb_put_uint64(&t->w, f, (uint64_t)f * 1000000000 + cpu);
		pb_end_nested(&t->w, c);
	}
	pb_put_uint64(&t->w, 4, 63308);
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
	unsigned s = pb_begin_nested(&t.w, 7);
	kv(&t, 1, 28, 100);   /* MEMINFO_COMMITED_AS */
	kv(&t, 1, 9, 7);      /* MEMINFO_ACTIVE_ANON */
	kv(&t, 1, 1000, 1);   /* unknown: skipped */
	kv(&t, 2, 1, 4242);   /* VMSTAT_NR_FREE_PAGES */
	kv(&t, 2, 127, 5);    /* VMSTAT_SWAP_RA_HIT */
	kv(&t, 2, 100000, 5); /* unknown: skipped */
	kv(&t, 6, 27, 900);   /* num_irq */
	kv(&t, 8, 3, 80);     /* num_softirq */
	pb_put_uint64(&t.w, 5, 11);
	pb_put_uint64(&t.w, 7, 12);
	kv(&t, 14, 5, 777); /* PSI_RESOURCE_MEMORY_SOME */
	{
		unsigned z = pb_begin_nested(&t.w, 15);
		pb_put_string(&t.w, 1, "thermal_zone0");
		pb_put_uint64(&t.w, 2, 45);
		pb_put_string(&t.w, 3, "cpu-thermal");
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
		unsigned ps = pb_begin_nested(&t.w, 9);
		unsigned p = pb_begin_nested(&t.w, 1);
		pb_put_uint64(&t.w, 2, 1000 + ts); /* vm_size_kb, before pid */
		pb_put_int32(&t.w, 1, 42);
		pb_put_uint64(&t.w, 3, 10);   /* vm_rss_kb */
		pb_put_uint64(&t.w, 4, 4);    /* rss_anon_kb */
		pb_put_uint64(&t.w, 5, 5);    /* rss_file_kb */
		pb_put_uint64(&t.w, 6, 1);    /* rss_shmem_kb */
		pb_put_uint64(&t.w, 7, 2);    /* vm_swap_kb */
		pb_put_uint64(&t.w, 8, 3);    /* vm_locked_kb */
		pb_put_uint64(&t.w, 9, 11);   /* vm_hwm_kb */
		pb_put_int64(&t.w, 10, -100); /* oom_score_adj */
		pb_put_uint64(&t.w, 17, 6);   /* smr_pss_kb */
		pb_put_uint64(&t.w, 21, 999); /* runtime_user_mode */
		unsigned th = pb_begin_nested(&t.w, 11);
		pb_put_int32(&t.w, 1, 43);
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
	unsigned e = pb_begin_nested(&t->w, 2);
	pb_put_uint64(&t->w, 1, ts);
	pb_put_uint32(&t->w, 2, (uint32_t)pid);
	unsigned s = pb_begin_nested(&t->w, 4);
	pb_put_string(&t->w, 1, prev_comm);
	pb_put_int32(&t->w, 2, prev_pid);
	pb_put_int32(&t->w, 3, 120);
	pb_put_int64(&t->w, 4, prev_state);
	pb_put_string(&t->w, 5, next_comm);
	pb_put_int32(&t->w, 6, next_pid);
	pb_put_int32(&t->w, 7, next_prio);
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
	unsigned b = pb_begin_nested(&t.w, 1); /* ftrace_events */
	pb_put_uint32(&t.w, 1, 1);             /* cpu */
	ft_switch(&t, 1000, 0, "swapper/1", 0, 0, "a", 10, 110);
	ft_switch(&t, 2000, 10, "a", 10, 1, "swapper/1", 0, 120);
	unsigned e = pb_begin_nested(&t.w, 2);
	pb_put_uint64(&t.w, 1, 2500);
	pb_put_uint32(&t.w, 2, 0);
	unsigned w = pb_begin_nested(&t.w, 20); /* sched_waking */
	pb_put_string(&t.w, 1, "a");
	pb_put_int32(&t.w, 2, 10);
	pb_put_int32(&t.w, 5, 1);
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
	unsigned e = pb_begin_nested(&t->w, 2);
	pb_put_uint64(&t->w, 1, ts);
	pb_put_uint32(&t->w, 2, (uint32_t)pid);
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
	enum { NEWTASK = 235, RENAME = 236, FREE = 240 };
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 1, 500);
	unsigned pt = pb_begin_nested(&t.w, 2);
	unsigned pr = pb_begin_nested(&t.w, 1);
	pb_put_int32(&t.w, 1, 100);
	pb_put_int32(&t.w, 2, 1);
	pb_put_string(&t.w, 3, "parent");
	pb_end_nested(&t.w, pr);
	unsigned th = pb_begin_nested(&t.w, 2);
	pb_put_int32(&t.w, 1, 100);
	pb_put_int32(&t.w, 3, 100);
	pb_put_string(&t.w, 2, "ptname");
	pb_end_nested(&t.w, th);
	pb_end_nested(&t.w, pt);
	pkt_end(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	unsigned b = pb_begin_nested(&t.w, 1);
	pb_put_uint32(&t.w, 1, 0);
	ft_event(&t, 1000, 100, NEWTASK, 1, 200, 2, "child", 3, 0x11);
	ft_switch(&t, 1500, 100, "ftname", 100, 1, "child", 200, 120);
	ft_event(&t, 2000, 200, NEWTASK, 1, 201, 2, "worker", 3, 0x10000 | 0x100);
	ft_event(&t, 2500, 201, RENAME, 1, 201, 3, "w2", 0, 0);
	ft_event(&t, 2600, 200, RENAME, 1, 200, 3, "child2", 0, 0);
	ft_event(&t, 3000, 0, FREE, 2, 201, 1, "w2", 0, 0);
	ft_event(&t, 4000, 0, FREE, 2, 200, 1, "child2", 0, 0);
	ft_event(&t, 5000, 100, NEWTASK, 1, 200, 2, "again", 3, 0x11);
	ft_event(&t, 5100, 1, NEWTASK, 1, 0, 2, "swapper/0", 3, 0x100);
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
	enum { BLOCKED = 18 };
	struct tb t;
	size_t n;
	tb_init(&t);
	pkt_begin(&t, 1, UINT64_MAX);
	pb_put_uint32(&t.w, 13, 1); /* incremental state cleared */
	interned_name(&t, 26, 7, "filemap_fault");
	unsigned b = pb_begin_nested(&t.w, 1);
	pb_put_uint32(&t.w, 1, 0);
	ft_switch(&t, 1000, 0, "swapper/0", 0, 0, "a", 10, 120);
	ft_switch(&t, 2000, 10, "a", 10, 2, "b", 11, 120);
	ft_event(&t, 2010, 0, BLOCKED, 1, 10, 0, NULL, 2, 7);
	ft_switch(&t, 3000, 11, "b", 11, 2, "a", 10, 120);
	ft_event(&t, 3010, 0, BLOCKED, 1, 11, 0, NULL, 2, 99);
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
	unsigned b = pb_begin_nested(&t.w, 1);
	pb_put_uint32(&t.w, 1, 0);
	unsigned c = pb_begin_nested(&t.w, 4);
	pb_put_string(&t.w, 5, "a");
	pb_put_string(&t.w, 5, "swapper/0");
	packed_put(&t, 1, (const uint64_t[]){1000, 1000}, 2);
	packed_put(&t, 2, (const uint64_t[]){0, 2}, 2);
	packed_put(&t, 3, (const uint64_t[]){10, 0}, 2);
	packed_put(&t, 4, (const uint64_t[]){120, 120}, 2);
	packed_put(&t, 6, (const uint64_t[]){0, 1}, 2);
	packed_put(&t, 7, (const uint64_t[]){2500}, 1);
	packed_put(&t, 8, (const uint64_t[]){10}, 1);
	packed_put(&t, 9, (const uint64_t[]){0}, 1);
	packed_put(&t, 10, (const uint64_t[]){120}, 1);
	packed_put(&t, 11, (const uint64_t[]){0}, 1);
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
	unsigned b = pb_begin_nested(&t->w, 1);
	pb_put_uint32(&t->w, 1, cpu);
	unsigned c = pb_begin_nested(&t->w, 4);
	pb_put_string(&t->w, 5, "w");
	packed_put(t, 1, (const uint64_t[]){t0, step, step}, 3);
	packed_put(t, 2, (const uint64_t[]){1, 1, 1}, 3);
	packed_put(t, 3, (const uint64_t[]){(uint64_t)base, (uint64_t)base + 1, (uint64_t)base}, 3);
	packed_put(t, 4, (const uint64_t[]){120, 120, 120}, 3);
	packed_put(t, 6, (const uint64_t[]){0, 0, 0}, 3);
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
	unsigned b = pb_begin_nested(&t->w, 1);
	pb_put_uint32(&t->w, 1, cpu);
	for (int k = 0; k < n; k++) {
		unsigned e = pb_begin_nested(&t->w, 2);
		pb_put_uint64(&t->w, 1, t0 + (uint64_t)k * step);
		pb_put_uint32(&t->w, 2, 7);
		unsigned pr = pb_begin_nested(&t->w, 3);
		pb_put_string(&t->w, 2, "x");
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
	unsigned si = pb_begin_nested(&t.w, 45);
	pb_put_uint32(&t.w, 8, 2);
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
	unsigned id = pb_begin_nested(&t->w, 12);
	unsigned e = pb_begin_nested(&t->w, 16); /* build_ids */
	pb_put_uint64(&t->w, 1, 1);
	pb_put_bytes(&t->w, 2, (const uint8_t *)"\xab\x01", 2);
	pb_end_nested(&t->w, e);
	const char *comps[] = {"usr", "lib", "libc.so"};
	for (unsigned i = 0; i < 3; i++) {
		e = pb_begin_nested(&t->w, 17); /* mapping_paths */
		pb_put_uint64(&t->w, 1, i + 1);
		pb_put_string(&t->w, 2, comps[i]);
		pb_end_nested(&t->w, e);
	}
	const char *fns[] = {"main", "work"};
	for (unsigned i = 0; i < 2; i++) {
		e = pb_begin_nested(&t->w, 5); /* function_names */
		pb_put_uint64(&t->w, 1, i + 1);
		pb_put_string(&t->w, 2, fns[i]);
		pb_end_nested(&t->w, e);
	}
	e = pb_begin_nested(&t->w, 19); /* mappings */
	pb_put_uint64(&t->w, 1, 1);
	pb_put_uint64(&t->w, 2, 1);
	pb_put_uint64(&t->w, 4, 0x1000);
	pb_put_uint64(&t->w, 5, 0x5000);
	packed_put(t, 7, (const uint64_t[]){1, 2, 3}, 3);
	pb_end_nested(&t->w, e);
	for (unsigned i = 0; i < 2; i++) {
		e = pb_begin_nested(&t->w, 6); /* frames */
		pb_put_uint64(&t->w, 1, i + 1);
		pb_put_uint64(&t->w, 2, i + 1);
		pb_put_uint64(&t->w, 3, 1);
		pb_put_uint64(&t->w, 4, 0x10 * (i + 1));
		pb_end_nested(&t->w, e);
	}
	e = pb_begin_nested(&t->w, 7); /* callstacks: main -> work */
	pb_put_uint64(&t->w, 1, 1);
	packed_put(t, 2, (const uint64_t[]){1, 2}, 2);
	pb_end_nested(&t->w, e);
	e = pb_begin_nested(&t->w, 7); /* main alone */
	pb_put_uint64(&t->w, 1, 2);
	pb_put_uint64(&t->w, 2, 1);
	pb_end_nested(&t->w, e);
	pb_end_nested(&t->w, id);
}

static void perf_sample(struct tb *t, uint64_t ts, uint64_t cs, uint32_t mode)
{
	pkt_begin(t, 7, ts);
	pb_put_uint32(&t->w, 13, 2);
	unsigned s = pb_begin_nested(&t->w, 66);
	pb_put_uint32(&t->w, 1, 3);
	pb_put_uint32(&t->w, 2, 40);
	pb_put_uint32(&t->w, 3, 41);
	pb_put_uint64(&t->w, 4, cs);
	pb_put_uint32(&t->w, 5, mode);
	pb_put_uint32(&t->w, 16, 1);
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
	pb_put_uint32(&t.w, 13, 1);
	perf_interned(&t);
	pkt_end(&t);
	perf_sample(&t, 200, 1, 2);
	perf_sample(&t, 300, 2, 1);
	pkt_begin(&t, 7, 400);
	pb_put_uint32(&t.w, 13, 2);
	unsigned s = pb_begin_nested(&t.w, 66);
	pb_put_uint32(&t.w, 1, 0);
	pb_put_uint64(&t.w, 17, 5);
	pb_end_nested(&t.w, s);
	pkt_end(&t);
	pkt_begin(&t, 7, 500);
	pb_put_uint32(&t.w, 13, 2);
	s = pb_begin_nested(&t.w, 66);
	pb_put_uint32(&t.w, 18, 1);
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
	pb_put_uint32(&t->w, 13, 2);
	unsigned s = pb_begin_nested(&t->w, 66);
	pb_put_uint32(&t->w, 1, cpu);
	pb_put_uint32(&t->w, 2, tid);
	pb_put_uint32(&t->w, 3, tid);
	pb_put_uint32(&t->w, 5, 2);
	pb_put_uint32(&t->w, 18, reason);
	pb_end_nested(&t->w, s);
	pkt_end(t);
}

static void perf_lost(struct tb *t, uint64_t ts, uint32_t cpu, uint64_t lost)
{
	pkt_begin(t, 7, ts);
	pb_put_uint32(&t->w, 13, 2);
	unsigned s = pb_begin_nested(&t->w, 66);
	pb_put_uint32(&t->w, 1, cpu);
	pb_put_uint64(&t->w, 17, lost);
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
	pb_put_uint32(&t.w, 13, 1);
	unsigned d = pb_begin_nested(&t.w, 59), psd = pb_begin_nested(&t.w, 12);
	pb_put_uint32(&t.w, 2, 4); /* process_shard_count */
	pb_put_uint32(&t.w, 3, 3); /* chosen_process_shard */
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
	pb_put_uint32(&t.w, 13, 1);
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
