/*
 * The trace model's trackers and sorter, driven directly (no importer):
 * nesting of begin/end/complete slices, overlap handling, arg set sharing and
 * merging, pid/tid reuse, track identity, and the sorter's stable order.
 */
#include "test.h"

#include "tp_int.h"
#include "model/model.h"
#include "model/ftrace.h"
#include "sorter/sorter.h"

static uint32_t S(struct tp *tp, const char *s)
{
	return tp_intern_cstr(tp, s);
}

TEST(tp_model_slices_nest)
{
	struct tp *tp = tp_new(NULL);
	uint32_t utid = tp_thread_for_tid(tp, 11, 10);
	uint32_t tr = tp_track_for_thread(tp, utid);
	CHECK_EQ(tp_track_for_thread(tp, utid), tr);
	uint32_t a = tp_slice_begin(tp, tr, 100, S(tp, "c"), S(tp, "A"), TP_NULL_U32);
	uint32_t b = tp_slice_complete(tp, tr, 110, 20, S(tp, "c"), S(tp, "B"), TP_NULL_U32);
	uint32_t c = tp_slice_complete(tp, tr, 115, 5, 0, S(tp, "C"), TP_NULL_U32);
	/* D starts after B ended: B and C are popped, D nests under A. */
	uint32_t d = tp_slice_complete(tp, tr, 130, 10, 0, S(tp, "D"), TP_NULL_U32);
	CHECK_EQ(tp_slice_end(tp, tr, 200, 0, 0, TP_NULL_U32), a);
	struct tp_slice_table *t = &tp->t.slice;
	CHECK_EQ(t->dur[a], 100);
	CHECK_EQ(t->depth[a], 0);
	CHECK_EQ(t->parent_id[a], TP_NULL_U32);
	CHECK_EQ(t->depth[b], 1);
	CHECK_EQ(t->parent_id[b], a);
	CHECK_EQ(t->depth[c], 2);
	CHECK_EQ(t->parent_id[c], b);
	CHECK_EQ(t->depth[d], 1);
	CHECK_EQ(t->parent_id[d], a);
	/* An end with nothing open is counted, not fatal. */
	CHECK_EQ(tp_slice_end(tp, tr, 300, 0, 0, TP_NULL_U32), TP_NULL_U32);
	CHECK_EQ(tp->stats[TP_STAT_stackless_end_event], 1);
	tp_free(tp);
}

TEST(tp_model_slice_end_matches_name)
{
	struct tp *tp = tp_new(NULL);
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	uint32_t a = tp_slice_begin(tp, tr, 10, 0, S(tp, "A"), TP_NULL_U32);
	uint32_t b = tp_slice_begin(tp, tr, 20, 0, S(tp, "B"), TP_NULL_U32);
	/* E for A while B is open completes A in place; B can still end up
	 * to A's end, as in Perfetto. */
	CHECK_EQ(tp_slice_end(tp, tr, 30, 0, S(tp, "A"), TP_NULL_U32), a);
	CHECK_EQ(tp->t.slice.dur[a], 20);
	CHECK_EQ(tp->t.slice.dur[b], -1);
	CHECK_EQ(tp_slice_end(tp, tr, 30, 0, S(tp, "B"), TP_NULL_U32), b);
	CHECK_EQ(tp->t.slice.dur[b], 10);
	CHECK_EQ(tp->stats[TP_STAT_misplaced_end_event], 0);
	tp_free(tp);
}

TEST(tp_model_slice_end_cuts_open_children)
{
	struct tp *tp = tp_new(NULL);
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	uint32_t a = tp_slice_begin(tp, tr, 10, S(tp, "cat"), S(tp, "A"), TP_NULL_U32);
	uint32_t b = tp_slice_begin(tp, tr, 20, 0, S(tp, "B"), TP_NULL_U32);
	/* A category must match: B (none) is skipped, A ends under it. */
	CHECK_EQ(tp_slice_end(tp, tr, 30, S(tp, "cat"), 0, TP_NULL_U32), a);
	CHECK_EQ(tp->t.slice.dur[b], -1);
	/* Anything after A's end cuts B to it: B's own end finds nothing. */
	CHECK_EQ(tp_slice_end(tp, tr, 40, 0, 0, TP_NULL_U32), TP_NULL_U32);
	CHECK_EQ(tp->t.slice.dur[a], 20);
	CHECK_EQ(tp->t.slice.dur[b], 10);
	CHECK_EQ(tp->stats[TP_STAT_misplaced_end_event], 1);
	/* An end naming a slice that has no name matches it. */
	uint32_t c = tp_slice_begin(tp, tr, 50, 0, 0, TP_NULL_U32);
	CHECK_EQ(tp_slice_end(tp, tr, 60, 0, S(tp, "C"), TP_NULL_U32), c);
	CHECK_EQ(tp->t.slice.depth[c], 0);
	tp_free(tp);
}

TEST(tp_model_slice_end_below_open_cut_later)
{
	struct tp *tp = tp_new(NULL);
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	uint32_t a = tp_slice_begin(tp, tr, 10, 0, S(tp, "A"), TP_NULL_U32);
	uint32_t b = tp_slice_begin(tp, tr, 20, 0, S(tp, "B"), TP_NULL_U32);
	/* E for A while B is open ends A only; A stays below B until an event
	 * past its end, which cuts B at A's end (Perfetto's MaybeCloseStack). */
	CHECK_EQ(tp_slice_end(tp, tr, 30, 0, S(tp, "A"), TP_NULL_U32), a);
	CHECK_EQ(tp->t.slice.dur[a], 20);
	CHECK_EQ(tp->t.slice.dur[b], -1);
	/* At A's end exactly, nothing is cut: C nests in B. */
	uint32_t c = tp_slice_begin(tp, tr, 30, 0, S(tp, "C"), TP_NULL_U32);
	CHECK_EQ(tp->t.slice.depth[c], 2);
	CHECK_EQ(tp->stats[TP_STAT_misplaced_end_event], 0);
	/* Past it: B and C end at 30, and nothing is left for these ends. */
	CHECK_EQ(tp_slice_end(tp, tr, 40, 0, S(tp, "C"), TP_NULL_U32), TP_NULL_U32);
	CHECK_EQ(tp->t.slice.dur[b], 10);
	CHECK_EQ(tp->t.slice.dur[c], 0);
	CHECK_EQ(tp->stats[TP_STAT_misplaced_end_event], 1);
	CHECK_EQ(tp_slice_end(tp, tr, 50, 0, S(tp, "B"), TP_NULL_U32), TP_NULL_U32);
	CHECK_EQ(tp->stats[TP_STAT_stackless_end_event], 2);
	tp_free(tp);
}

TEST(tp_model_open_slice_cut_at_enclosing_complete_end)
{
	struct tp *tp = tp_new(NULL);
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	uint32_t x = tp_slice_complete(tp, tr, 0, 100, 0, S(tp, "X"), TP_NULL_U32);
	uint32_t b = tp_slice_begin(tp, tr, 10, 0, S(tp, "B"), TP_NULL_U32);
	uint32_t c = tp_slice_begin(tp, tr, 100, 0, S(tp, "C"), TP_NULL_U32);
	CHECK_EQ(tp->t.slice.parent_id[c], b);
	CHECK_EQ(tp->t.slice.dur[b], -1);
	/* Past X's end, the slices left open inside it end with it, as in
	 * Perfetto; the next one is a root again. */
	uint32_t d = tp_slice_begin(tp, tr, 150, 0, S(tp, "D"), TP_NULL_U32);
	CHECK_EQ(tp->t.slice.dur[b], 90);
	CHECK_EQ(tp->t.slice.dur[c], 0);
	CHECK_EQ(tp->t.slice.dur[x], 100);
	CHECK_EQ(tp->t.slice.depth[d], 0);
	CHECK_EQ(tp->stats[TP_STAT_misplaced_end_event], 1);
	tp_free(tp);
}

TEST(tp_model_partial_overlap_dropped)
{
	struct tp *tp = tp_new(NULL);
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	tp_slice_complete(tp, tr, 0, 10, 0, S(tp, "A"), TP_NULL_U32);
	struct tp_slice_conflict c;
	CHECK_EQ(tp_slice_complete_or_conflict(tp, tr, 5, 10, 0, S(tp, "B"), TP_NULL_U32, &c),
	         TP_NULL_U32);
	CHECK_EQ(c.end, 10);
	CHECK_EQ(c.slice, 0);
	CHECK_EQ(tp->stats[TP_STAT_slice_drop_overlapping_complete_event], 0);
	CHECK_EQ(tp_slice_complete(tp, tr, 5, 10, 0, S(tp, "B"), TP_NULL_U32), TP_NULL_U32);
	CHECK_EQ(tp->stats[TP_STAT_slice_drop_overlapping_complete_event], 1);
	/* Touching end points nest fine. */
	CHECK(tp_slice_complete(tp, tr, 5, 5, 0, S(tp, "C"), TP_NULL_U32) != TP_NULL_U32);
	CHECK_EQ(tp->t.slice.depth[1], 1);
	CHECK(tp_slice_complete(tp, tr, 10, 5, 0, S(tp, "D"), TP_NULL_U32) != TP_NULL_U32);
	CHECK_EQ(tp->t.slice.depth[2], 0);
	tp_free(tp);
}

/* A slice that ended below one still running (its end matched below the
 * top) pops the top of the stack, not itself, as Perfetto's MaybeCloseStack
 * does; it leaves when the next event passes its end, cutting what was
 * opened above it. */
TEST(tp_model_ended_below_running_pops_the_top)
{
	struct tp *tp = tp_new(NULL);
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	uint32_t a = tp_slice_begin(tp, tr, 0, 0, S(tp, "A"), TP_NULL_U32);
	uint32_t x = tp_slice_complete(tp, tr, 10, 50, 0, S(tp, "X"), TP_NULL_U32);
	CHECK_EQ(tp_slice_end(tp, tr, 30, 0, S(tp, "A"), TP_NULL_U32), a);
	/* At 30, A (ended at 30) pops X, the top; B goes under A. */
	uint32_t b = tp_slice_begin(tp, tr, 30, 0, S(tp, "B"), TP_NULL_U32);
	CHECK_EQ(tp->t.slice.depth[b], 1);
	CHECK_EQ(tp->t.slice.parent_id[b], a);
	CHECK_EQ(tp->t.slice.dur[x], 50);
	/* Past A's end, B is cut at it. */
	uint32_t c = tp_slice_begin(tp, tr, 40, 0, S(tp, "C"), TP_NULL_U32);
	CHECK_EQ(tp->t.slice.dur[b], 0);
	CHECK_EQ(tp->t.slice.depth[c], 0);
	CHECK_EQ(tp->stats[TP_STAT_misplaced_end_event], 1);
	tp_free(tp);
}

/* Slices past depth 512 on a track are dropped and logged. */
TEST(tp_model_max_depth)
{
	struct tp *tp = tp_new(NULL);
	uint32_t tr = tp_track_for_thread(tp, tp_thread_for_tid(tp, 1, 1));
	for (int i = 0; i < 512; i++)
		CHECK(tp_slice_begin(tp, tr, i, 0, S(tp, "B"), TP_NULL_U32) != TP_NULL_U32);
	CHECK_EQ(tp_slice_begin(tp, tr, 600, 0, S(tp, "B"), TP_NULL_U32), TP_NULL_U32);
	CHECK_EQ(tp_slice_complete(tp, tr, 601, 0, 0, S(tp, "I"), TP_NULL_U32), TP_NULL_U32);
	CHECK_EQ(tp->stats[TP_STAT_slice_max_depth_exceeded], 2);
	CHECK_EQ(tp->t.slice.n, 512);
	tp_free(tp);
}

TEST(tp_model_args_shared_and_merged)
{
	struct tp *tp = tp_new(NULL);
	struct tp_args_builder b = {VEC_INIT};
	uint32_t k1 = S(tp, "args.x"), k2 = S(tp, "args.y");
	tp_args_add_int(&b, k1, k1, 5);
	uint32_t s1 = tp_args_commit(tp, &b);
	tp_args_add_int(&b, k1, k1, 5);
	CHECK_EQ(tp_args_commit(tp, &b), s1); /* identical content, same set */
	CHECK_EQ(tp_args_commit(tp, &b), TP_NULL_U32);
	tp_args_add_int(&b, k1, k1, 7);
	tp_args_add_string(&b, k2, k2, S(tp, "hello"));
	uint32_t s2 = tp_args_commit(tp, &b);
	CHECK(s2 != s1);
	uint32_t m = tp_args_merge(tp, s1, s2);
	struct tp_args_table *t = &tp->t.args;
	uint32_t rows = 0;
	for (uint32_t r = 0; r < t->n; r++) {
		if (t->arg_set_id[r] != m)
			continue;
		rows++;
		if (t->key[r] == k1)
			CHECK_EQ(tp_args_row(tp, r).v.i, 7); /* the later set wins */
		else
			CHECK_STR_EQ(tp_str(tp, tp_args_row(tp, r).v.s), "hello");
	}
	CHECK_EQ(rows, 2);
	/* Rows are grouped by set in increasing order. */
	for (uint32_t r = 1; r < t->n; r++)
		CHECK(t->arg_set_id[r - 1] <= t->arg_set_id[r]);
	tp_args_builder_release(&b);
	tp_free(tp);
}

/* The dedup map grows from a small table: sets stored before each growth
 * are still found after it, and distinct sets keep distinct ids. */
TEST(tp_model_args_shared_across_growth)
{
	struct tp *tp = tp_new(NULL);
	struct tp_args_builder b = {VEC_INIT};
	uint32_t k = S(tp, "args.n"), ks = S(tp, "args.s");
	enum { N = 20000 };
	uint32_t *ids = tb_calloc(N, sizeof *ids);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < N; i++) {
			tp_args_add_int(&b, k, k, (int64_t)i);
			if (i % 3 == 0)
				tp_args_add_string(&b, ks, ks, k);
			uint32_t set = tp_args_commit(tp, &b);
			if (pass == 0)
				ids[i] = set;
			else
				CHECK_EQ(set, ids[i]);
		}
	}
	/* A set's id is its first row's (Perfetto's numbering). */
	for (uint32_t i = 1; i < N; i++)
		CHECK_EQ(ids[i], ids[i - 1] + ((i - 1) % 3 == 0 ? 2 : 1));
	CHECK_EQ(tp->t.args.n, N + (N + 2) / 3);
	/* A merge finds an existing set the same way. */
	CHECK_EQ(tp_args_merge(tp, ids[1], ids[0]), ids[0]);
	tb_free(ids);
	tp_args_builder_release(&b);
	tp_free(tp);
}

/* Columns of a big table are allocated ahead and made resident in steps:
 * rows survive every step and reallocation, appends never pass the
 * populated rows, and a sparse column created late spans the allocation. */
TEST(tp_model_columns_grow_in_steps)
{
	struct tp *tp = tp_new(NULL);
	struct tp_slice_table *t = &tp->t.slice;
	enum { N = 300000, LATE = 200001 };
	uint32_t base = t->n;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t row = tp_slice_append(t);
		CHECK_EQ(row, base + i);
		CHECK(t->n <= t->cap && t->cap <= t->alloc);
		t->ts[row] = (int64_t)i * 3;
		t->dur[row] = i;
		if (i == LATE)
			tp_set_slice_thread_ts(t, row, 7);
	}
	for (uint32_t i = 0; i < N; i++) {
		CHECK_EQ(t->ts[base + i], (int64_t)i * 3);
		CHECK_EQ(t->dur[base + i], (int64_t)i);
		CHECK_EQ(tp_get_slice_thread_ts(t, base + i), i == LATE ? 7 : TP_NULL_I64);
	}
	/* The rows after the late write, up to the allocation, are writable. */
	for (uint32_t r = t->n; r < t->alloc; r++)
		tp_set_slice_thread_ts(t, r, 1);
	tp_free(tp);
}

TEST(tp_model_threads_and_reuse)
{
	struct tp *tp = tp_new(NULL);
	CHECK_EQ(tp->t.thread.n, 1); /* utid 0: swapper */
	CHECK_EQ(tp->t.process.n, 1);
	uint32_t t1 = tp_thread_for_tid(tp, 42, -1);
	CHECK_EQ(tp->t.thread.upid[t1], TP_NULL_I64);
	CHECK_EQ(tp_thread_for_tid(tp, 42, 40), t1); /* pid learnt later */
	uint32_t p40 = tp_process_for_pid(tp, 40);
	CHECK_EQ(tp->t.thread.upid[t1], p40);
	CHECK_EQ(tp->t.thread.is_main_thread[t1], 0);
	/* The same tid in another process is another thread. */
	uint32_t t2 = tp_thread_for_tid(tp, 42, 50);
	CHECK(t2 != t1);
	tp_thread_end(tp, t2, 1000);
	uint32_t t3 = tp_thread_for_tid(tp, 42, 50);
	CHECK(t3 != t2);
	CHECK_EQ(tp->t.thread.end_ts[t2], 1000);
	tp_free(tp);
}

/* A tid looked up without its pid is the live thread of that tid, after
 * reuse by another process, an end and a tid sharing its cache slot. */
TEST(tp_model_thread_lookup_follows_reuse)
{
	struct tp *tp = tp_new(NULL);
	uint32_t t1 = tp_thread_for_tid(tp, 42, 40);
	CHECK_EQ(tp_thread_for_tid(tp, 42, -1), t1);
	uint32_t t2 = tp_thread_for_tid(tp, 42, 50);
	CHECK(t2 != t1);
	CHECK_EQ(tp_thread_for_tid(tp, 42, -1), t2);
	uint32_t other = tp_thread_for_tid(tp, 42 + 256, -1);
	CHECK(other != t2);
	CHECK_EQ(tp_thread_for_tid(tp, 42, -1), t2);
	CHECK_EQ(tp_thread_for_tid(tp, 42 + 256, -1), other);
	tp_thread_end(tp, t2, 1000);
	uint32_t t3 = tp_thread_for_tid(tp, 42, -1);
	CHECK(t3 != t2 && t3 != t1);
	CHECK_EQ(tp_thread_for_tid(tp, 42, -1), t3);
	CHECK_EQ(tp->t.thread.tid[t3], 42);
	tp_free(tp);
}

/* A tid seen under two pids is one thread in each: looked up with a pid,
 * an older live thread of the tid in that process is found (Perfetto's
 * GetThreadOrNull), unless that process was replaced by a newer one with
 * its pid. */
TEST(tp_model_tid_in_two_pids)
{
	struct tp *tp = tp_new(NULL);
	uint32_t t1 = tp_thread_for_tid(tp, 42, 40);
	uint32_t t2 = tp_thread_for_tid(tp, 42, 50);
	CHECK(t2 != t1);
	CHECK_EQ(tp_thread_for_tid(tp, 42, 40), t1);
	CHECK_EQ(tp_thread_for_tid(tp, 42, 50), t2);
	CHECK_EQ(tp_thread_for_tid(tp, 42, -1), t2); /* the newest */
	uint32_t n = tp->t.thread.n;
	tp_process_start_new(tp, 100, 40, 0, TP_NAME_OTHER);
	uint32_t t3 = tp_thread_for_tid(tp, 42, 40);
	CHECK(t3 != t1 && t3 != t2);
	CHECK(tp->t.thread.n > n);
	CHECK_EQ(tp_thread_for_tid(tp, 42, 50), t2);
	tp_free(tp);
}

TEST(tp_model_track_identity)
{
	struct tp *tp = tp_new(NULL);
	struct tp_track_key k = {.type = "legacy_async_process_slice",
	                         .event_type = "slice",
	                         .utid = -1,
	                         .upid = 3,
	                         .cpu = -1,
	                         .extra_dim = 77,
	                         .name = S(tp, "req")};
	uint32_t a = tp_track_get(tp, &k);
	CHECK_EQ(tp_track_get(tp, &k), a);
	k.extra_dim = 78;
	uint32_t b = tp_track_get(tp, &k);
	CHECK(b != a);
	CHECK(tp_track_new(tp, &k) != b);
	CHECK_STR_EQ(tp_str(tp, tp->t.track.type[a]), "legacy_async_process_slice");
	CHECK_EQ(tp->t.track.upid[a], 3);
	CHECK_EQ(tp->t.track.utid[a], TP_NULL_I64);
	tp_free(tp);
}

struct order_ctx {
	int64_t ts[16];
	int vals[16];
	int n;
};

static void collect(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx)
{
	struct order_ctx *o = ctx;
	(void)tp;
	(void)len;
	o->ts[o->n] = ts;
	o->vals[o->n++] = *(const int *)payload;
}

TEST(tp_model_sorter_stable)
{
	struct tp *tp = tp_new(NULL);
	struct tp_sorter *s = tp_sorter_new();
	int64_t ts[] = {30, 10, 20, 10, 30};
	for (int i = 0; i < 5; i++)
		tp_sorter_push(s, ts[i], &i, sizeof i);
	struct order_ctx o = {0};
	tp_sorter_flush(s, tp, collect, &o);
	CHECK_EQ(o.n, 5);
	int want[] = {1, 3, 2, 0, 4};
	for (int i = 0; i < 5; i++)
		CHECK_EQ(o.vals[i], want[i]);
	tp_sorter_free(s);
	tp_free(tp);
}

/* Ties across own queues (ftrace cpus) as Perfetto's sorter: the queue
 * being drained keeps going while its next event is not later than every
 * other queue's first; else the shared queue, then own queues by age. */
TEST(tp_model_sorter_queue_ties)
{
	struct tp *tp = tp_new(NULL);
	struct tp_sorter *s = tp_sorter_new();
	/* cpu A (run 1) and cpu B (run 2), made in that order; the shared
	 * queue (run 0) pushes last. */
	tp_sorter_own_queue(s, 1);
	tp_sorter_own_queue(s, 2);
	static const struct {
		uint32_t run;
		int64_t ts;
	} ev[] = {{1, 10}, {1, 50}, {2, 20}, {2, 50}, {2, 50}, {0, 50}, {1, 60}, {2, 60}, {0, 60}};
	for (int i = 0; i < (int)TB_ARRAY_SIZE(ev); i++)
		tp_sorter_push_src(s, ev[i].run, ev[i].ts, &i, sizeof i);
	struct order_ctx o = {0};
	tp_sorter_flush(s, tp, collect, &o);
	CHECK_EQ(o.n, 9);
	/* A's 10, B's 20; B is being drained: its two 50s before A's 50 and
	 * the shared 50; then, B's next (60) later than the shared queue's 50:
	 * the shared 50, then A (older) at 50 and its 60, where A goes on,
	 * then the shared queue's 60 before B's. */
	int want[] = {0, 2, 3, 4, 5, 1, 6, 8, 7};
	for (int i = 0; i < 9; i++)
		CHECK_EQ(o.vals[i], want[i]);
	tp_sorter_free(s);
	tp_free(tp);
}

/* Streaming: what a run collects, checked for order as it arrives. */
struct stream_ctx {
	struct tp_sorter *s;
	int64_t last_ts;
	uint64_t last_key;
	size_t n, max_pending;
	bool ordered;
};

static void stream_collect(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx)
{
	struct stream_ctx *o = ctx;
	uint64_t key;
	(void)tp;
	CHECK_EQ(len, sizeof key);
	memcpy(&key, payload, sizeof key);
	/* key = push number: ties must keep push order */
	if (ts < o->last_ts || (ts == o->last_ts && o->n && key < o->last_key))
		o->ordered = false;
	o->last_ts = ts;
	o->last_key = key;
	o->n++;
}

/* A process is created with its main thread (Perfetto's GetOrCreateProcess),
 * before the thread that named it; a main thread seen first is reused. */
TEST(tp_model_process_main_thread)
{
	struct tp *tp = tp_new(NULL);
	struct tp_thread_table *t = &tp->t.thread;
	uint32_t first = t->n;
	uint32_t utid = tp_thread_for_tid(tp, 1, 5);
	CHECK_EQ(t->n, first + 2);
	CHECK_EQ(t->tid[first], 5);
	CHECK_EQ(t->is_main_thread[first], 1);
	CHECK_EQ(utid, first + 1);
	CHECK_EQ(t->upid[utid], t->upid[first]);
	uint32_t main = tp_thread_for_tid(tp, 7, -1);
	CHECK_EQ(tp_thread_for_tid(tp, 7, 7), main);
	CHECK_EQ(t->n, first + 3);
	CHECK_EQ(tp->t.process.pid[t->upid[main]], 7);
	tp_free(tp);
}

/* Intervals are closed on the left, open on the right: a slice ending at
 * ts is popped by anything at ts, except that instants at one ts stack. */
TEST(tp_model_slices_same_ts_instants_nest)
{
	struct tp *tp = tp_new(NULL);
	struct tp_slice_table *t = &tp->t.slice;
	uint32_t a = tp_slice_complete(tp, 1, 100, 0, 0, 0, TP_NULL_U32);
	uint32_t b = tp_slice_complete(tp, 1, 100, 0, 0, 0, TP_NULL_U32);
	uint32_t c = tp_slice_complete(tp, 1, 100, 10, 0, 0, TP_NULL_U32);
	uint32_t d = tp_slice_complete(tp, 1, 110, 0, 0, 0, TP_NULL_U32);
	CHECK_EQ(t->depth[a], 0);
	CHECK_EQ(t->depth[b], 1);
	CHECK_EQ(t->parent_id[b], a);
	CHECK_EQ(t->depth[c], 0);
	CHECK_EQ(t->depth[d], 0);
	tp_free(tp);
}

/* FlowTracker semantics: begin / continue / end (closing or not), links
 * from the earlier slice, v1 ids per (source, cat, name), and ends pending
 * until the next slice on their track. */
TEST(tp_model_flows)
{
	struct tp *tp = tp_new(NULL);
	uint32_t a = tp_slice_complete(tp, 1, 10, 5, 0, 0, TP_NULL_U32);
	uint32_t b = tp_slice_complete(tp, 2, 20, 5, 0, 0, TP_NULL_U32);
	uint32_t c = tp_slice_complete(tp, 1, 30, 5, 0, 0, TP_NULL_U32);
	tp_flow_begin(tp, 7, a);
	tp_flow_begin(tp, 7, b); /* duplicate: ignored */
	tp_flow_end(tp, 7, b, false);
	tp_flow_continue(tp, 7, c);
	tp_flow_end(tp, 7, b, true); /* b is earlier than c: b -> c */
	tp_flow_end(tp, 7, c, true); /* closed */
	tp_flow_continue(tp, 8, c);
	struct tp_flow_table *f = &tp->t.flow;
	CHECK_EQ(f->n, 3);
	CHECK_EQ(f->slice_out[0], a);
	CHECK_EQ(f->slice_in[0], b);
	CHECK_EQ(f->slice_out[1], a);
	CHECK_EQ(f->slice_in[1], c);
	CHECK_EQ(f->slice_out[2], b);
	CHECK_EQ(f->slice_in[2], c);
	CHECK_EQ(tp->stats[TP_STAT_flow_duplicate_id], 1);
	CHECK_EQ(tp->stats[TP_STAT_flow_end_without_start], 1);
	CHECK_EQ(tp->stats[TP_STAT_flow_step_without_start], 1);
	uint64_t v1 = tp_flow_v1_id(tp, 5, 1, 2);
	CHECK(v1 != tp_flow_v1_id(tp, 5, 1, 3));
	CHECK(v1 != tp_flow_v1_id(tp, 6, 1, 2));
	CHECK_UEQ(tp_flow_v1_id(tp, 5, 1, 2), v1);
	tp_flow_begin(tp, v1, c);
	tp_flow_end_pending(tp, 2, v1);
	uint32_t d = tp_slice_complete(tp, 1, 40, 5, 0, 0, TP_NULL_U32);
	CHECK_EQ(f->n, 3); /* another track */
	uint32_t e = tp_slice_complete(tp, 2, 50, 5, 0, 0, TP_NULL_U32);
	CHECK_EQ(f->n, 4);
	CHECK_EQ(f->slice_out[3], c);
	CHECK_EQ(f->slice_in[3], e);
	CHECK_EQ(tp_slice_top(tp, 1), d);
	tp_free(tp);
}

/* Perfetto's StateTracker: a new value closes the open state, the same
 * value keeps it, no value only closes; tracks are independent. */
TEST(tp_model_state_update)
{
	struct tp *tp = tp_new(NULL);
	uint32_t on = tp_intern_cstr(tp, "on"), off = tp_intern_cstr(tp, "off");
	uint32_t cat = tp_intern_cstr(tp, "cat");
	CHECK_EQ(tp_state_update(tp, 1, 100, on, cat, TP_NULL_U32), 0);
	CHECK_EQ(tp_state_update(tp, 2, 120, off, 0, TP_NULL_U32), 1);
	CHECK_EQ(tp_state_update(tp, 1, 150, on, cat, TP_NULL_U32), 0);
	CHECK_EQ(tp_state_update(tp, 1, 200, off, cat, TP_NULL_U32), 2);
	CHECK_EQ(tp_state_update(tp, 1, 260, 0, 0, TP_NULL_U32), TP_NULL_U32);
	CHECK_EQ(tp_state_update(tp, 1, 300, 0, 0, TP_NULL_U32), TP_NULL_U32);
	struct tp_state_table *t = &tp->t.state;
	CHECK_EQ(t->n, 3);
	CHECK_EQ(t->dur[0], 100);
	CHECK_EQ(t->dur[1], -1);
	CHECK_EQ(t->dur[2], 60);
	CHECK_EQ(t->value[2], off);
	CHECK_EQ(t->category[1], 0);
	tp_free(tp);
}

TEST(tp_model_sorter_runs_merge)
{
	struct tp *tp = tp_new(NULL);
	struct tp_sorter *s = tp_sorter_new();
	struct stream_ctx o = {.s = s, .last_ts = INT64_MIN, .ordered = true};
	int64_t ts[4] = {0, 5, 3, 5};
	uint64_t key = 0;
	/* Four interleaved sources, each in order, with equal timestamps across
	 * them; source 3 goes backwards once (its run gets sorted). */
	for (int i = 0; i < 4000; i++) {
		uint32_t src = (uint32_t)(i * 7 % 4);
		ts[src] += src == 3 && i == 2001 ? -40 : (i % 3) * 10;
		CHECK(tp_sorter_push_src(s, src, ts[src], &key, sizeof key) != NULL);
		key++;
	}
	CHECK_EQ(tp_sorter_pending(s), 4000);
	tp_sorter_flush(s, tp, stream_collect, &o);
	CHECK_EQ(o.n, 4000);
	CHECK(o.ordered);
	CHECK_EQ(tp_sorter_pending(s), 0);
	tp_sorter_free(s);
	tp_free(tp);
}

/* A drain of hundreds of thousands of events gives the dispatched part of
 * the index back to the kernel as it goes: every event still arrives once,
 * in order and intact, across a partial extract, compaction, more pushes
 * and the final flush. */
TEST(tp_model_sorter_long_drain)
{
	struct tp *tp = tp_new(NULL);
	struct tp_sorter *s = tp_sorter_new();
	struct stream_ctx o = {.s = s, .last_ts = INT64_MIN, .ordered = true};
	uint64_t key = 0;
	for (int i = 0; i < 300000; i++, key++) /* run 0 far ahead of run 1 */
		CHECK(tp_sorter_push_src(s, 0, i, &key, sizeof key) != NULL);
	for (int i = 0; i < 100000; i++, key++)
		CHECK(tp_sorter_push_src(s, 1, 2 * i, &key, sizeof key) != NULL);
	tp_sorter_extract(s, tp, stream_collect, &o); /* up to run 1's latest */
	CHECK(o.ordered);
	CHECK_EQ(o.n, 199999 + 100000); /* run 0 up to ts 199998 */
	for (int i = 300000; i < 400000; i++, key++)
		CHECK(tp_sorter_push_src(s, 0, i, &key, sizeof key) != NULL);
	tp_sorter_flush(s, tp, stream_collect, &o);
	CHECK_EQ(o.n, 500000);
	CHECK(o.ordered);
	CHECK_EQ(tp_sorter_pending(s), 0);
	tp_sorter_free(s);
	tp_free(tp);
}

/* Run counts that are not powers of two (the merge tree is padded), runs
 * that stay empty, a single run: every event comes out, in order. */
TEST(tp_model_sorter_odd_run_counts)
{
	static const uint32_t runs[] = {1, 3, 5, 7};
	for (size_t r = 0; r < TB_ARRAY_SIZE(runs); r++) {
		struct tp *tp = tp_new(NULL);
		struct tp_sorter *s = tp_sorter_new();
		struct stream_ctx o = {.s = s, .last_ts = INT64_MIN, .ordered = true};
		int64_t ts[8] = {0};
		uint64_t key = 0;
		for (int i = 0; i < 3000; i++) {
			/* every other run index stays empty when there are several */
			uint32_t src = runs[r] == 1 ? 0 : (uint32_t)(i % runs[r]) * 2 % 8;
			ts[src] += 10 + (i * 7919) % 13 - (src == 2 ? 5 : 0);
			CHECK(tp_sorter_push_src(s, src, ts[src], &key, sizeof key) != NULL);
			key++;
		}
		tp_sorter_flush(s, tp, stream_collect, &o);
		CHECK_EQ(o.n, 3000);
		CHECK(o.ordered);
		tp_sorter_free(s);
		tp_free(tp);
	}
}

TEST(tp_model_sorter_streams)
{
	struct tp *tp = tp_new(NULL);
	struct tp_sorter *s = tp_sorter_new();
	struct stream_ctx o = {.s = s, .last_ts = INT64_MIN, .ordered = true};
	tp_sorter_set_window(s, 4096);
	int64_t ts[8] = {0};
	uint64_t key = 0;
	size_t extracts = 0;
	for (int i = 0; i < 100000; i++) {
		uint32_t src = (uint32_t)((i * 2654435761u) >> 7) % 8;
		ts[src] += 1 + (int64_t)((i * 40503u) % 100);
		CHECK(tp_sorter_push_src(s, src, ts[src], &key, sizeof key) != NULL);
		key++;
		if (tp_sorter_want_extract(s)) {
			tp_sorter_extract(s, tp, stream_collect, &o);
			extracts++;
		}
		if (tp_sorter_pending(s) > o.max_pending)
			o.max_pending = tp_sorter_pending(s);
	}
	CHECK(extracts > 100);
	/* Memory is released as it goes: the buffer stays near the window. */
	CHECK(o.max_pending < 2000);
	CHECK(o.n > 90000);
	tp_sorter_flush(s, tp, stream_collect, &o);
	CHECK_EQ(o.n, 100000);
	CHECK(o.ordered);
	CHECK_EQ(tp->stats[TP_STAT_sorter_push_event_out_of_order], 0);
	tp_sorter_free(s);
	tp_free(tp);
}

/* Runs that win several events in a row (bursts) and tie across runs:
 * the order is (ts, push order) with 5 runs (a tree padded to 8 leaves),
 * streaming and at the flush. */
TEST(tp_model_sorter_bursts_in_order)
{
	for (int stream = 0; stream < 2; stream++) {
		struct tp *tp = tp_new(NULL);
		struct tp_sorter *s = tp_sorter_new();
		struct stream_ctx o = {.s = s, .last_ts = INT64_MIN, .ordered = true};
		if (stream)
			tp_sorter_set_window(s, 8192);
		int64_t ts[5] = {0};
		uint64_t key = 0;
		uint32_t x = 12345;
		/* Every run has pushed before anything goes (a run never heard
		 * from holds nothing back). */
		for (uint32_t src = 0; src < 5; src++, key++)
			CHECK(tp_sorter_push_src(s, src, 0, &key, sizeof key) != NULL);
		while (key < 60000) {
			x = x * 1103515245u + 12345u;
			uint32_t src = (x >> 16) % 5, burst = 1 + (x >> 8) % 40;
			for (uint32_t i = 0; i < burst; i++, key++) {
				/* steps of 0 or 1 on a coarse clock: many ties */
				ts[src] += (x >> (i % 24)) & 1;
				CHECK(tp_sorter_push_src(s, src, ts[src], &key, sizeof key) !=
				      NULL);
			}
			if (stream && tp_sorter_want_extract(s))
				tp_sorter_extract(s, tp, stream_collect, &o);
		}
		tp_sorter_flush(s, tp, stream_collect, &o);
		CHECK_EQ(o.n, key);
		CHECK(o.ordered);
		CHECK_EQ(tp->stats[TP_STAT_sorter_push_event_out_of_order], 0);
		tp_sorter_free(s);
		tp_free(tp);
	}
}

TEST(tp_model_sorter_late_dropped)
{
	struct tp *tp = tp_new(NULL);
	struct tp_sorter *s = tp_sorter_new();
	struct stream_ctx o = {.s = s, .last_ts = INT64_MIN, .ordered = true};
	tp_sorter_set_window(s, 64);
	uint64_t key = 0;
	for (int i = 0; i < 10; i++, key++)
		CHECK(tp_sorter_push_src(s, 0, 100 + i, &key, sizeof key) != NULL);
	CHECK(tp_sorter_want_extract(s));
	tp_sorter_extract(s, tp, stream_collect, &o);
	CHECK_EQ(o.n, 10); /* one run: everything up to its latest ts */
	CHECK_EQ(o.last_ts, 109);
	/* A second source appears with events older than what went out. */
	CHECK(tp_sorter_push_src(s, 1, 50, &key, sizeof key) == NULL);
	CHECK(tp_sorter_push_src(s, 1, 108, &key, sizeof key) == NULL);
	key++;
	CHECK(tp_sorter_push_src(s, 1, 109, &key, sizeof key) != NULL); /* a tie is in time */
	key++;
	CHECK(tp_sorter_push_src(s, 0, 120, &key, sizeof key) != NULL);
	tp_sorter_flush(s, tp, stream_collect, &o);
	CHECK_EQ(o.n, 12);
	CHECK(o.ordered);
	CHECK_EQ(tp->stats[TP_STAT_sorter_push_event_out_of_order], 2);
	tp_sorter_free(s);
	tp_free(tp);
}

/* What a sorter hands out: (ts, 24-byte record) in order. */
struct batch_ctx {
	int64_t *ts;
	uint64_t *rec;
	size_t n;
};

static void batch_collect(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx)
{
	struct batch_ctx *o = ctx;
	(void)tp;
	CHECK_EQ(len, 24);
	o->ts[o->n] = ts;
	memcpy(&o->rec[3 * o->n++], payload, 24);
}

/* tp_sorter_push_many hands out exactly what one tp_sorter_push_src per
 * event would: the same order (ties by push order, across runs and blocks),
 * the same late drops, an out-of-order batch sorted. */
TEST(tp_model_sorter_push_many_as_single)
{
	enum { N = 30000 }; /* 24-byte records over several 256 KiB blocks */
	static int64_t ts[2][N], got_ts[2][2 * N + 8];
	static uint64_t recs[2][3 * N], got[2][3 * (2 * N + 8)];
	for (size_t i = 0; i < N; i++) {
		for (int r = 0; r < 2; r++) {
			/* run 0 sorted with ties, run 1 with inversions */
			ts[r][i] =
			    r == 0 ? 1000 + (int64_t)(i / 3) : 1000 + (int64_t)((i * 7919) % N);
			recs[r][3 * i] = (uint64_t)r << 32 | i;
			recs[r][3 * i + 1] = ~(uint64_t)i;
			recs[r][3 * i + 2] = i * 3;
		}
	}
	for (int way = 0; way < 2; way++) {
		struct tp *tp = tp_new(NULL);
		struct tp_sorter *s = tp_sorter_new();
		struct batch_ctx o = {got_ts[way], got[way], 0};
		for (int r = 0; r < 2; r++) {
			if (way == 0) {
				for (size_t i = 0; i < N; i++)
					CHECK(tp_sorter_push_src(s, (uint32_t)r, ts[r][i],
					                         &recs[r][3 * i], 24));
			} else {
				CHECK_EQ(tp_sorter_push_many(s, (uint32_t)r, ts[r], recs[r], 24, N),
				         N);
			}
		}
		tp_sorter_set_window(s, 64);
		tp_sorter_extract(s, tp, batch_collect, &o);
		/* Late events: two older than what went out, one tie kept. */
		int64_t late_ts[3] = {o.ts[o.n - 1] - 5, o.ts[o.n - 1], o.ts[o.n - 1] - 1};
		uint64_t late[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
		if (way == 0) {
			for (size_t i = 0; i < 3; i++)
				tp_sorter_push_src(s, 1, late_ts[i], &late[3 * i], 24);
		} else {
			CHECK_EQ(tp_sorter_push_many(s, 1, late_ts, late, 24, 3), 1);
		}
		tp_sorter_flush(s, tp, batch_collect, &o);
		CHECK_EQ(o.n, 2 * N + 1);
		CHECK_EQ(tp->stats[TP_STAT_sorter_push_event_out_of_order], 2);
		if (way == 1) {
			CHECK_EQ(memcmp(got_ts[0], got_ts[1], o.n * sizeof(int64_t)), 0);
			CHECK_EQ(memcmp(got[0], got[1], 3 * o.n * sizeof(uint64_t)), 0);
		}
		for (size_t i = 1; i < o.n; i++)
			CHECK(got_ts[way][i - 1] <= got_ts[way][i]);
		tp_sorter_free(s);
		tp_free(tp);
	}
}

/* ftrace_event rows keep ts as a 32-bit offset in blocks of rows and
 * (name, ucpu, common_flags) as a kind: every row reads back exactly what
 * was written, with offsets that do not fit (a long gap, ts going back as
 * between archive members, the extremes) and rows over several blocks. */
TEST(tp_model_ftrace_event_narrow_rows)
{
	enum { N = 3 * TP_FTRACE_TS_BLOCK + 7 };
	static int64_t ts[N];
	struct tp *tp = tp_new(NULL);
	struct tp_ftrace f;
	tp_ftrace_init(tp, &f);
	uint32_t names[3] = {tp_intern_cstr(tp, "a"), tp_intern_cstr(tp, "b"),
	                     tp_intern_cstr(tp, "c")};
	int64_t t = 1000;
	for (uint32_t i = 0; i < N; i++) {
		t += i % 97 == 5 ? (int64_t)UINT32_MAX : 13;
		ts[i] = i == 40 ? 7 : i == 41 ? INT64_MAX : i == 42 ? INT64_MIN + 1 : t;
		if (i == 43 || i == 44) /* the largest offset stored, the first not */
			ts[i] = ts[0] + (int64_t)UINT32_MAX - 1 + (i - 43);
		uint32_t flags = i % 5 == 0 ? TP_NULL_U32 : i % 7;
		CHECK_EQ(tp_ftrace_raw(tp, &f, ts[i], i % 4, names[i % 3], i, flags, i + 1), i);
	}
	size_t kinds, ts_wide;
	tp_ftrace_rows_counts(tp, &kinds, &ts_wide);
	CHECK(ts_wide > N / 97);
	CHECK(kinds <= 3 * 4 * 8);
	for (uint32_t i = 0; i < N; i++) {
		int64_t got_ts;
		uint32_t name, flags, ucpu, cpu;
		tp_ftrace_event_computed_ts(tp, i, &got_ts);
		tp_ftrace_event_computed_name(tp, i, &name);
		tp_ftrace_event_computed_common_flags(tp, i, &flags);
		tp_ftrace_event_computed_ucpu(tp, i, &ucpu);
		tp_ftrace_event_computed_cpu(tp, i, &cpu);
		CHECK_EQ(got_ts, ts[i]);
		CHECK_EQ(name, names[i % 3]);
		CHECK_EQ(flags, i % 5 == 0 ? TP_NULL_U32 : i % 7);
		CHECK_EQ(cpu, i % 4);
		CHECK_EQ(tp->t.cpu.cpu[ucpu], i % 4);
		CHECK_EQ(tp->t.ftrace_event.utid[i], i);
		CHECK_EQ(tp->t.ftrace_event.arg_set_id[i], i + 1);
	}
	tp_ftrace_release(&f);
	tp_free(tp);
}

/* sched and thread_state keep dur in 32 bits, sched its priority in 8:
 * every value reads back as written, through the getters and the SQL
 * column, at the edges of what fits (the largest stored, the first in the
 * side map), open rows (-1), other negative ones and a slice over the
 * 4.29 s of 32 bits; a row rewritten from wide to narrow reads the narrow
 * value. */
TEST(tp_model_sched_narrow_columns)
{
	static const int64_t durs[] = {
	    0,  1,  TP_DUR_WIDE - 1, TP_DUR_WIDE, TP_DUR_OPEN, (int64_t)1 << 40,
	    -1, -2, INT64_MAX,       INT64_MIN};
	enum { N = sizeof durs / sizeof durs[0] };
	struct tp *tp = tp_new(NULL);
	for (uint32_t i = 0; i < N; i++) {
		uint32_t s = tp_sched_append(&tp->t.sched);
		uint32_t t = tp_thread_state_append(&tp->t.thread_state);
		tp_sched_set_dur(tp, s, durs[i]);
		tp_thread_state_set_dur(tp, t, durs[N - 1 - i]);
	}
	for (uint32_t i = 0; i < N; i++) {
		int64_t v;
		CHECK_EQ(tp_sched_dur(tp, i), durs[i]);
		CHECK_EQ(tp_thread_state_dur(tp, i), durs[N - 1 - i]);
		tp_sched_computed_dur(tp, i, &v);
		CHECK_EQ(v, durs[i]);
		tp_thread_state_computed_dur(tp, i, &v);
		CHECK_EQ(v, durs[N - 1 - i]);
	}
	tp_sched_set_dur(tp, 5, 77);
	CHECK_EQ(tp_sched_dur(tp, 5), 77);

	/* priority in 8 bits, the rest in a side map. */
	static const int32_t prios[] = {0,   120, 139,       TP_PRIO_WIDE - 1, TP_PRIO_WIDE,
	                                256, -1,  INT32_MIN, INT32_MAX,        100};
	for (uint32_t i = 0; i < N; i++)
		tp_sched_set_priority(tp, i, prios[i]);
	for (uint32_t i = 0; i < N; i++) {
		int64_t v;
		CHECK_EQ(tp_sched_priority(tp, i), prios[i]);
		tp_sched_computed_priority(tp, i, &v);
		CHECK_EQ(v, prios[i]);
	}

	/* Through the ftrace model: a thread running for 10 s, then switched
	 * out; its sched slice and Running state both last 10 s. */
	struct tp *tq = tp_new(NULL);
	struct tp_ftrace f;
	tp_ftrace_init(tq, &f);
	uint32_t a = tp_intern_cstr(tq, "a"), b = tp_intern_cstr(tq, "b");
	tp_ftrace_sched_switch(tq, &f, 1000, 0, false, 0, 0, 0, 10, a, 120);
	tp_ftrace_sched_switch(tq, &f, 1000 + 10000000000, 0, false, 10, a, tp_intern_cstr(tq, "S"),
	                       11, b, 120);
	CHECK_EQ(tq->t.sched.n, 2);
	CHECK_EQ(tp_sched_dur(tq, 0), 10000000000);
	CHECK_EQ(tp_sched_dur(tq, 1), -1);
	CHECK_EQ(tp_thread_state_dur(tq, 0), 10000000000);
	CHECK_EQ(tp_thread_state_dur(tq, tq->t.thread_state.n - 1), -1);
	tp_ftrace_release(&f);
	tp_free(tq);
	tp_free(tp);
}

/* A process started anew under a pid whose thread the lookup cache still
 * holds (ftrace fork after pid reuse): the next lookup of that tid finds the
 * new main thread, not the dead one. */
TEST(tp_model_thread_cache_follows_new_process)
{
	struct tp *tp = tp_new(NULL);
	uint32_t old = tp_thread_for_tid(tp, 42, 42);
	CHECK_EQ(tp_thread_for_tid(tp, 42, -1), old); /* now in the cache */
	uint32_t upid = tp_process_start_new(tp, 100, 42, 0, TP_NAME_OTHER);
	uint32_t now = tp_thread_for_tid(tp, 42, -1);
	CHECK(now != old);
	CHECK_EQ(tp->t.thread.upid[now], upid);
	tp_free(tp);
}
