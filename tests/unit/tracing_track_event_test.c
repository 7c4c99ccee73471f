/*
 * TrackEvent writing (components/tracing/track_event.c) end to end: a
 * producer-library data source that handles ClearIncrementalState writes
 * slices, instants and counters through the in-process traced
 * (traced_fixture.h); the packets read back are checked field by field
 * (incremental state, interning, sequence flags) and loaded into our trace
 * processor, which must give the slices their names across a clear.
 */
#include <sqlite3.h>
#include <unistd.h>

#include "pb.h"
#include "pb_fields.h"
#include "test.h"
#include "trace_processor.h"
#include "traced_fixture.h"
#include "tracing.h"

#define TRACK_UUID 42
#define COUNTER_UUID 43

struct teprod {
	struct tracing_producer *p;
	struct tracing_writer *w;
	struct tracing_te *te;
	bool started;
	int clears;
};

static void te_start(void *ctx, struct tracing_producer *p, uint64_t id, const uint8_t *cfg,
                     size_t len, uint32_t target_buffer)
{
	struct teprod *tp = ctx;
	tp->w = tracing_producer_new_writer(p, target_buffer);
	tp->te = tracing_te_new(tp->w, TRACK_UUID, "main", getpid(), getpid());
	tracing_te_add_counter_track(tp->te, COUNTER_UUID, "queue_depth");
	tp->started = true;
}

static void te_clear(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n)
{
	struct teprod *tp = ctx;
	tracing_te_clear(tp->te);
	tp->clears++;
}

static int te_connect(struct tfx *e, struct teprod *tp)
{
	struct tracing_producer_opts o = {0};
	memset(tp, 0, sizeof *tp);
	o.name = "te";
	o.socket_name = e->pname;
	o.ctx = tp;
	o.start = te_start;
	o.clear_incremental_state = te_clear;
	if (!(tp->p = tracing_producer_new(e->l, &o, NULL)))
		return -1;
	return tracing_producer_register_data_source(tp->p, "test.te", false, false, true);
}

/* A top-level varint field of packet i, or -1. */
static int64_t pkt_varint(struct tfx *e, size_t i, uint32_t id)
{
	struct pb_field f = {0};
	return pb_find_field(e->packets.data[i], e->lens.data[i], id, &f) == 1 ? (int64_t)f.val
	                                                                       : -1;
}

/* The interned event name of packet i ("" if none). */
static void interned_event_name(struct tfx *e, size_t i, char *out, size_t cap, uint64_t *iid)
{
	struct pb_field idata = {0}, en = {0}, f = {0};
	out[0] = '\0';
	*iid = 0;
	if (pb_find_field(e->packets.data[i], e->lens.data[i], PB_F_TracePacket_interned_data,
	                  &idata) != 1 ||
	    pb_find_field(idata.data, idata.len, PB_F_InternedData_event_names, &en) != 1)
		return;
	if (pb_find_field(en.data, en.len, PB_F_EventName_iid, &f) == 1)
		*iid = f.val;
	if (pb_find_field(en.data, en.len, PB_F_EventName_name, &f) == 1 && f.len < cap) {
		memcpy(out, f.data, f.len);
		out[f.len] = '\0';
	}
}

static int64_t sql_int(struct tp *tp, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char err[256];
	int64_t v = -1;
	if (tp_prepare(tp, sql, &st, NULL, err, sizeof err) != SQLITE_OK || !st) {
		test_report(__FILE__, __LINE__, "%s: %s", sql, err);
		return -2;
	}
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The packets read back, as a trace file, loaded. */
static struct tp *load_packets(struct tfx *e)
{
	struct pb_writer w;
	struct tp *tp = tp_new(NULL);
	pb_writer_init_growable(&w);
	for (size_t i = 0; i < e->packets.len; i++)
		pb_put_bytes(&w, PB_F_Trace_packet, e->packets.data[i], e->lens.data[i]);
	if (tp_parse(tp, pb_writer_data(&w), pb_writer_size(&w)) || tp_end_of_file(tp)) {
		tp_free(tp);
		tp = NULL;
	}
	pb_writer_release(&w);
	return tp;
}

TEST(tracing_te_incremental_state_and_clear)
{
	struct tfx e;
	struct teprod p;
	struct tp *tp;
	int64_t base = tb_boot_ns();
	int cleared_packets = 0, a_interned = 0, first_producer = -1;
	char name[64];
	uint64_t iid;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(te_connect(&e, &p), 0);
	e.clear_period_ms = 50;
	CHECK_EQ(tfx_enable(&e, "test.te", NULL, 256, false, 0), 0);
	CHECK(tfx_pump(&e, &p.started) && p.te);
	CHECK_EQ(tracing_te_begin(p.te, (uint64_t)base + 100, "a"), 0);
	CHECK_EQ(tracing_te_end(p.te, (uint64_t)base + 110), 0);
	CHECK_EQ(tracing_te_begin(p.te, (uint64_t)base + 120, "a"), 0);
	CHECK_EQ(tracing_te_end(p.te, (uint64_t)base + 130), 0);
	CHECK_EQ(tracing_te_instant(p.te, (uint64_t)base + 140, "b"), 0);
	CHECK_EQ(tracing_te_counter(p.te, (uint64_t)base + 150, COUNTER_UUID, 5), 0);
	for (int i = 0; i < 100 && p.clears == 0; i++)
		tfx_spin(&e, 1, 10);
	CHECK(p.clears >= 1);
	CHECK_EQ(tracing_te_begin(p.te, (uint64_t)base + 200, "a"), 0);
	CHECK_EQ(tracing_te_end(p.te, (uint64_t)base + 210), 0);
	CHECK_EQ(tracing_producer_commit(p.p), 0);
	CHECK(tfx_disable(&e));
	CHECK(tfx_read(&e));

	for (size_t i = 0; i < e.packets.len; i++) {
		int64_t seq = pkt_varint(&e, i, PB_F_TracePacket_trusted_packet_sequence_id),
		        flags = pkt_varint(&e, i, PB_F_TracePacket_sequence_flags);
		if (seq < 2)
			continue; /* the service's own */
		if (first_producer < 0)
			first_producer = (int)i;
		cleared_packets +=
		    flags == PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED;
		interned_event_name(&e, i, name, sizeof name, &iid);
		if (strcmp(name, "a") == 0) {
			/* interned again from iid 1 after each clear */
			CHECK_UEQ(iid, 1);
			a_interned++;
		}
	}
	CHECK(first_producer >= 0);
	/* the sequence starts with its incremental state */
	CHECK_EQ(pkt_varint(&e, (size_t)first_producer, PB_F_TracePacket_sequence_flags), 1);
	CHECK_EQ(cleared_packets, 1 + p.clears);
	CHECK_EQ(a_interned, 2);

	tp = load_packets(&e);
	CHECK(tp != NULL);
	CHECK_EQ(sql_int(tp, "select count(*) from slice where name = 'a' and dur = 10"), 3);
	CHECK_EQ(sql_int(tp, "select count(*) from slice where name = 'b' and dur = 0"), 1);
	CHECK_EQ(sql_int(tp, "select count(*) from slice where name is null"), 0);
	CHECK_EQ(sql_int(tp, "select cast(value as int) from counter join counter_track ct "
	                     "on counter.track_id = ct.id where ct.name = 'queue_depth'"),
	         5);
	tp_free(tp);
	tracing_te_free(p.te);
	tracing_producer_free(p.p);
	tfx_release(&e);
}

static void on_synced(void *ctx, bool ok)
{
	*(int *)ctx = ok ? 1 : -1;
}

/* tracing_producer_sync: commits, and calls back once the service has
 * processed everything sent before (one sync at a time). */
TEST(tracing_producer_sync_after_commits)
{
	struct tfx e;
	struct teprod p;
	int synced = 0;
	CHECK_EQ(tfx_init(&e), 0);
	CHECK_EQ(te_connect(&e, &p), 0);
	CHECK_EQ(tfx_enable(&e, "test.te", NULL, 256, false, 0), 0);
	CHECK(tfx_pump(&e, &p.started) && p.te);
	for (int i = 0; i < 1000; i++) {
		CHECK_EQ(tracing_te_begin(p.te, 1000 + 2 * (uint64_t)i, "s"), 0);
		CHECK_EQ(tracing_te_end(p.te, 1001 + 2 * (uint64_t)i), 0);
	}
	CHECK_EQ(tracing_producer_sync(p.p, on_synced, &synced), 0);
	CHECK_EQ(tracing_producer_sync(p.p, on_synced, &synced), -EBUSY);
	for (int i = 0; i < 400 && !synced; i++)
		tfx_spin(&e, 1, 10);
	CHECK_EQ(synced, 1);
	/* everything is in the service's buffer now: disable without a flush */
	CHECK(tfx_disable(&e));
	CHECK(tfx_read(&e));
	{
		struct tp *tp = load_packets(&e);
		CHECK(tp != NULL);
		CHECK_EQ(sql_int(tp, "select count(*) from slice where name = 's'"), 1000);
		tp_free(tp);
	}
	tracing_te_free(p.te);
	tracing_producer_free(p.p);
	tfx_release(&e);
}
