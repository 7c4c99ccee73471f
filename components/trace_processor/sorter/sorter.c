/*
 * The sorter: the one place that orders events. Importers push events with
 * their trace-clock timestamp in whatever order the trace has them; the
 * sorter hands them to the parse callback ordered by (ts, push order), so
 * equal timestamps keep the trace's order.
 *
 * Events are kept in runs, one per source (a packet sequence): a source's
 * events are nearly always in order already, so ordering is a k-way merge
 * of the runs' heads (a winner tree). A run that went out of order is
 * radix-sorted (LSD, 11-bit digits over the bits its ts range needs;
 * stable, so push order breaks ties) before it is merged.
 *
 * Equal timestamps across runs are ordered as Perfetto's sorter orders its
 * queues: runs are one shared queue (ties by push order) unless the
 * importer gave a run a queue of its own (tp_sorter_own_queue: an ftrace
 * cpu's events, as Perfetto's per-cpu queues). Perfetto drains the queue
 * with the earliest event while its events are not later than every other
 * queue's first, so at equal ts the queue being drained goes on; else the
 * shared queue, then own queues by age, win.
 *
 * Streaming: once the buffered events pass the window (1 MiB), the importer
 * may extract every event no source can still precede: ts <= the minimum,
 * over runs that have pending events or pushed recently (within the last
 * 64 MiB of events), of the latest ts the run has seen; and nothing while a
 * run the importer said to expect (tp_sorter_expect: a cpu whose ftrace data
 * has not come yet) has pushed nothing and is not idle. Their memory is
 * released as they go; held-back data only doubles the window for the next
 * round. An event pushed later with a ts older than the
 * last one extracted is dropped and counted (sorter_push_event_out_of_order,
 * as Perfetto does). tp_sorter_flush extracts everything (end of file,
 * --full-sort); while it drains, the pages of the dispatched part of the
 * index are given back (madvise) and freed blocks are not kept as spares,
 * so a fully sorted trace's buffers shrink as its tables grow.
 *
 *   run:    [ entry | entry | ... ]  head ─▶ first pending entry
 *   entry:  ts (8) | push number (8) | payload* (8) | len (4) | block (4)
 *   block:  refcounted payload memory (256 KiB), freed when its last event
 *           was dispatched; a few are kept for reuse.
 */
#include "../tp_int.h"
#include "sorter.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define BLOCK_SIZE ((size_t)256 << 10)
#define SPARE_BLOCKS 64
/* Small enough that extracted events are still in cache. */
#define DEFAULT_WINDOW ((size_t)1 << 20)
/* A run that got nothing while this many bytes of events arrived is taken
 * as finished: it no longer holds the others back. */
#define IDLE_BYTES ((uint64_t)64 << 20)

struct entry {
	int64_t ts;
	uint64_t ord;
	void *payload;
	uint32_t len;
	uint32_t blk;
};

struct block {
	uint32_t live; /* undispatched events in it */
	size_t used, cap;
	uint8_t *data;
};

struct run {
	VEC(struct entry) q;
	size_t head;        /* q[head, len) are pending */
	size_t dropped;     /* q's first bytes whose pages were given back */
	int64_t latest;     /* the largest ts pushed */
	uint64_t last_push; /* the sorter's pushed bytes at its last push */
	bool sorted;        /* pending entries are in ts order */
	bool expected;      /* tp_sorter_expect: holds everything back until its
	                     * first push, or until it has been idle for long */
	uint32_t rank;      /* RANK_SHARED, or its queue's (tp_sorter_own_queue) */
};

/* Queue ranks (Perfetto's queue order): equal timestamps go to the current
 * own queue, then to the shared queue, then to own queues in the order
 * they were made. */
#define RANK_CURRENT 0u
#define RANK_SHARED 1u

/* A merge leaf: the head of a run. */
struct head {
	int64_t ts;
	uint32_t rank;
	uint32_t run;
	uint64_t ord;
};

struct tp_sorter {
	VEC(struct run) runs;
	VEC(struct block) blocks; /* indexed by entry.blk; data NULL when free */
	VEC(uint32_t) free_slots; /* block indexes whose data is NULL */
	VEC(uint8_t *) spare;     /* BLOCK_SIZE buffers for reuse */
	uint32_t cur;             /* block being filled, UINT32_MAX none */
	uint64_t next_ord;
	size_t pending, bytes;  /* buffered events and payload bytes */
	size_t window, trigger; /* extract once bytes passes trigger */
	bool extracted;         /* something was extracted: late events drop */
	bool flushing;          /* no more pushes: blocks are not kept */
	int64_t last_ts;        /* ts of the last extracted event */
	uint64_t late;          /* dropped, not yet added to the stats */
	uint64_t pushed;        /* bytes ever pushed */
	uint32_t queues;        /* own queues made */
	VEC(struct head) heap;  /* extract: the merge tree's leaves */
	VEC(uint32_t) nodes;    /* extract: its inner nodes (losers) */
};

struct tp_sorter *tp_sorter_new(void)
{
	struct tp_sorter *s = tb_calloc(1, sizeof *s);
	s->cur = UINT32_MAX;
	s->window = s->trigger = DEFAULT_WINDOW;
	return s;
}

void tp_sorter_free(struct tp_sorter *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->runs.len; i++)
		vec_release(&s->runs.data[i].q);
	vec_release(&s->runs);
	for (size_t i = 0; i < s->blocks.len; i++)
		tb_free(s->blocks.data[i].data);
	vec_release(&s->blocks);
	vec_release(&s->free_slots);
	for (size_t i = 0; i < s->spare.len; i++)
		tb_free(s->spare.data[i]);
	vec_release(&s->spare);
	vec_release(&s->heap);
	vec_release(&s->nodes);
	tb_free(s);
}

void tp_sorter_set_window(struct tp_sorter *s, size_t bytes)
{
	s->window = s->trigger = bytes;
}

size_t tp_sorter_pending(const struct tp_sorter *s)
{
	return s->pending;
}

bool tp_sorter_want_extract(const struct tp_sorter *s)
{
	return s->bytes > s->trigger;
}

/* Payload bytes an event takes in its block (8-aligned, at least 8). */
static size_t slot_size(size_t len)
{
	return len ? (len + 7) & ~(size_t)7 : 8;
}

static uint32_t new_block(struct tp_sorter *s, size_t cap)
{
	uint32_t i;
	if (s->free_slots.len) {
		i = vec_pop(&s->free_slots);
	} else {
		TB_CHECK(s->blocks.len < UINT32_MAX);
		i = (uint32_t)s->blocks.len;
		vec_push_zeroed(&s->blocks);
	}
	struct block *b = &s->blocks.data[i];
	b->data = cap == BLOCK_SIZE && s->spare.len ? vec_pop(&s->spare) : tb_malloc(cap);
	b->cap = cap;
	b->used = 0;
	b->live = 0;
	return i;
}

static void drop_block(struct tp_sorter *s, uint32_t i)
{
	struct block *b = &s->blocks.data[i];
	if (b->cap == BLOCK_SIZE && s->spare.len < SPARE_BLOCKS && !s->flushing)
		vec_push(&s->spare, b->data);
	else
		tb_free(b->data);
	b->data = NULL;
	if (s->cur == i)
		s->cur = UINT32_MAX;
	vec_push(&s->free_slots, i);
}

/* Run src, created (empty, sorted) on first use. */
static struct run *run_of(struct tp_sorter *s, uint32_t src)
{
	if (src >= s->runs.len) {
		TB_CHECK(src < UINT32_MAX);
		size_t old = s->runs.len;
		vec_resize(&s->runs, (size_t)src + 1);
		for (size_t i = old; i < s->runs.len; i++) {
			s->runs.data[i].latest = INT64_MIN;
			s->runs.data[i].sorted = true;
			s->runs.data[i].rank = RANK_SHARED;
		}
	}
	return &s->runs.data[src];
}

void *tp_sorter_push_src(struct tp_sorter *s, uint32_t src, int64_t ts, const void *payload,
                         size_t len)
{
	TB_CHECK(len <= UINT32_MAX - 8);
	if (s->extracted && ts < s->last_ts) {
		s->late++;
		return NULL;
	}
	run_of(s, src);
	size_t need = slot_size(len);
	uint32_t bi;
	if (need > BLOCK_SIZE / 4) {
		bi = new_block(s, need); /* its own block */
	} else {
		if (s->cur == UINT32_MAX ||
		    s->blocks.data[s->cur].cap - s->blocks.data[s->cur].used < need) {
			uint32_t old = s->cur;
			s->cur = UINT32_MAX;
			if (old != UINT32_MAX && !s->blocks.data[old].live)
				drop_block(s, old);
			s->cur = new_block(s, BLOCK_SIZE);
		}
		bi = s->cur;
	}
	struct block *b = &s->blocks.data[bi];
	void *copy = b->data + b->used;
	b->used += need;
	b->live++;
	if (len && payload)
		memcpy(copy, payload, len);

	struct run *r = &s->runs.data[src];
	r->expected = false;
	if (r->q.len > r->head && r->q.data[r->q.len - 1].ts > ts)
		r->sorted = false;
	if (ts > r->latest)
		r->latest = ts;
	struct entry e = {ts, s->next_ord++, copy, (uint32_t)len, bi};
	vec_push(&r->q, e);
	s->pending++;
	s->bytes += need + sizeof e;
	s->pushed += need + sizeof e;
	r->last_push = s->pushed;
	return copy;
}

void *tp_sorter_push(struct tp_sorter *s, int64_t ts, const void *payload, size_t len)
{
	return tp_sorter_push_src(s, 0, ts, payload, len);
}

size_t tp_sorter_push_many(struct tp_sorter *s, uint32_t src, const int64_t *ts, const void *recs,
                           size_t size, size_t n)
{
	TB_CHECK(size <= 256);
	struct run *r = run_of(s, src);
	size_t need = slot_size(size), kept = 0, i = 0;
	const uint8_t *rec = recs;
	int64_t floor = s->extracted ? s->last_ts : INT64_MIN;
	vec_reserve(&r->q, n);
	while (i < n) {
		/* Fill the current block with as many as fit, then take a new
		 * one: the block checks are per block, not per event. */
		struct block *b = s->cur == UINT32_MAX ? NULL : &s->blocks.data[s->cur];
		if (!b || b->cap - b->used < need) {
			uint32_t old = s->cur;
			s->cur = UINT32_MAX;
			if (old != UINT32_MAX && !s->blocks.data[old].live)
				drop_block(s, old);
			s->cur = new_block(s, BLOCK_SIZE);
			b = &s->blocks.data[s->cur];
		}
		size_t room = (b->cap - b->used) / need, end = n - i < room ? n : i + room;
		uint8_t *dst = b->data + b->used;
		struct entry *e = r->q.data + r->q.len;
		int64_t last = r->q.len > r->head ? e[-1].ts : INT64_MIN;
		size_t put = 0;
		for (; i < end; i++, rec += size) {
			int64_t t = ts[i];
			if (t < floor) {
				s->late++;
				continue;
			}
			memcpy(dst, rec, size);
			*e++ = (struct entry){t, s->next_ord++, dst, (uint32_t)size, s->cur};
			r->sorted &= t >= last;
			last = t > last ? t : last;
			dst += need;
			put++;
		}
		if (last > r->latest)
			r->latest = last;
		b->used += put * need;
		b->live += (uint32_t)put;
		r->q.len += put;
		kept += put;
	}
	s->pending += kept;
	s->bytes += kept * (need + sizeof(struct entry));
	s->pushed += kept * (need + sizeof(struct entry));
	r->last_push = s->pushed;
	r->expected = false;
	return kept;
}

void tp_sorter_own_queue(struct tp_sorter *s, uint32_t src)
{
	struct run *r = run_of(s, src);
	if (r->rank == RANK_SHARED)
		r->rank = RANK_SHARED + 1 + s->queues++;
}

void tp_sorter_expect(struct tp_sorter *s, uint32_t src, bool on)
{
	struct run *r = run_of(s, src);
	if (on && (r->q.len > r->head || r->latest != INT64_MIN))
		return; /* it has pushed already */
	r->expected = on;
	r->last_push = s->pushed;
}

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)

/* Stable sort of e[0..n) by ts. */
static void radix_sort(struct entry *e, size_t n)
{
	int64_t lo = e[0].ts, hi = e[0].ts;
	for (size_t i = 1; i < n; i++) {
		lo = e[i].ts < lo ? e[i].ts : lo;
		hi = e[i].ts > hi ? e[i].ts : hi;
	}
	uint64_t span = (uint64_t)hi - (uint64_t)lo;
	struct entry *tmp = tb_malloc(n * sizeof *tmp);
	struct entry *src = e, *dst = tmp;
	size_t *count = tb_malloc(RADIX_SIZE * sizeof *count);
	for (unsigned shift = 0; shift < 64 && (span >> shift) != 0; shift += RADIX_BITS) {
		memset(count, 0, RADIX_SIZE * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(((uint64_t)src[i].ts - (uint64_t)lo) >> shift) & (RADIX_SIZE - 1)]++;
		size_t sum = 0;
		for (size_t d = 0; d < RADIX_SIZE; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(((uint64_t)src[i].ts - (uint64_t)lo) >> shift) &
			          (RADIX_SIZE - 1)]++] = src[i];
		struct entry *t = src;
		src = dst;
		dst = t;
	}
	if (src != e)
		memcpy(e, src, n * sizeof *e);
	tb_free(count);
	tb_free(tmp);
}

static bool before(const struct head *x, const struct head *y)
{
	if (x->ts != y->ts)
		return x->ts < y->ts;
	if (x->rank != y->rank)
		return x->rank < y->rank;
	return x->ord < y->ord;
}

/* A leaf of the merge tree whose run has nothing left to give (ord of a
 * real event is never UINT64_MAX, so every event beats it). */
#define DONE_ORD UINT64_MAX

/* The head entry of run r as a leaf key (rank: its own, or RANK_CURRENT),
 * or DONE once past limit. */
static struct head leaf_of(const struct run *r, uint32_t run, int64_t limit, uint32_t rank)
{
	if (r->head == r->q.len || r->q.data[r->head].ts > limit)
		return (struct head){INT64_MAX, UINT32_MAX, run, DONE_ORD};
	return (struct head){r->q.data[r->head].ts, rank, run, r->q.data[r->head].ord};
}

/* Play the tournament over leaf[0, k): win[n] (scratch, k entries) is the
 * winner below inner node n, loser[n] the leaf it beat there. */
static void merge_build(const struct head *leaf, uint32_t *loser, uint32_t *win, size_t k)
{
	loser[0] = 0;
	for (size_t n = k - 1; n >= 1; n--) {
		uint32_t x = 2 * n >= k ? (uint32_t)(2 * n - k) : win[2 * n];
		uint32_t y = 2 * n + 1 >= k ? (uint32_t)(2 * n + 1 - k) : win[2 * n + 1];
		bool y_wins = before(&leaf[y], &leaf[x]);
		win[n] = y_wins ? y : x;
		loser[n] = y_wins ? x : y;
	}
	if (k > 1)
		loser[0] = win[1];
}

/* The winner w's leaf changed: replay its path, one match per level. */
static void merge_replay(const struct head *leaf, uint32_t *loser, size_t k, uint32_t w)
{
	for (size_t n = (w + k) >> 1; n; n >>= 1) {
		uint32_t l = loser[n];
		if (before(&leaf[l], &leaf[w])) {
			loser[n] = w;
			w = l;
		}
	}
	loser[0] = w;
}

/* Give the pages of q's dispatched entries [0, upto) back to the kernel
 * while a long drain runs, so the index of a fully sorted trace (32 bytes an
 * event) does not stay resident under the growing tables. The pages are
 * never read again: compaction only reads the pending tail. */
#define DROP_STEP ((size_t)1 << 20)
static void drop_dispatched(struct run *r, size_t upto)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t base = (uintptr_t)r->q.data;
	uintptr_t from = (base + r->dropped + page - 1) & ~(uintptr_t)(page - 1);
	uintptr_t to = (base + upto * sizeof *r->q.data) & ~(uintptr_t)(page - 1);
	if (to <= from || to - from < DROP_STEP)
		return;
	madvise((void *)from, to - from, MADV_DONTNEED);
	r->dropped = to - base;
}

/* Dispatch every pending event with ts <= limit, in Perfetto's order: by
 * ts; at equal ts the current own queue first (the one the last event came
 * from: Perfetto drains a queue while its next event is not later than
 * every other queue's first), then the shared queue, then own queues in the
 * order they were made, then push order. A k-way merge of the runs' heads
 * on a tournament tree of losers: leaf[0, k) hold the heads (k a power of
 * two, padded with DONE leaves); loser[n] (1 <= n < k) is the leaf that
 * lost the match at inner node n, loser[0] the overall winner. Taking an
 * event replays only the winner's path: one comparison per level.
 *
 * Only a tie needs the current queue: when the next event of the queue an
 * event was just taken from has the ts of the new winner, that head takes
 * RANK_CURRENT and the tree is played again. When another queue takes
 * over, the old one's leaf keeps RANK_CURRENT until it wins a match: a
 * leaf's key only ever looks smaller than it is, so if it is not the winner
 * the winner is right, and if it is, it is put right (its rank restored, its
 * path replayed, which is valid for the winner) before anything is taken. */
static void extract(struct tp_sorter *s, int64_t limit, struct tp *tp, tp_sorted_fn fn, void *ctx)
{
	vec_clear(&s->heap);
	for (size_t i = 0; i < s->runs.len; i++) {
		struct run *r = &s->runs.data[i];
		if (r->head == r->q.len)
			continue;
		if (!r->sorted) {
			radix_sort(r->q.data + r->head, r->q.len - r->head);
			r->sorted = true;
		}
		if (r->q.data[r->head].ts <= limit)
			vec_push(&s->heap, leaf_of(r, (uint32_t)i, limit, r->rank));
	}
	if (!s->heap.len)
		goto out;
	size_t k = 1;
	while (k < s->heap.len)
		k *= 2;
	while (s->heap.len < k)
		vec_push(&s->heap, ((struct head){INT64_MAX, UINT32_MAX, 0, DONE_ORD}));
	vec_resize(&s->nodes, 2 * k);
	struct head *leaf = s->heap.data;
	uint32_t *loser = s->nodes.data;
	merge_build(leaf, loser, loser + k, k);
	uint64_t n_done = 0;
	size_t freed = 0;
	uint32_t current = UINT32_MAX; /* the run of the current own queue */
	for (;;) {
		uint32_t w = loser[0];
		if (leaf[w].ord == DONE_ORD)
			break;
		uint32_t run = leaf[w].run;
		struct run *r = &s->runs.data[run];
		if (__builtin_expect(leaf[w].rank == RANK_CURRENT && run != current, 0)) {
			/* A queue that was current before: not any more. */
			leaf[w].rank = r->rank;
			merge_replay(leaf, loser, k, w);
			continue;
		}
		current = r->rank != RANK_SHARED ? run : UINT32_MAX;
		const struct entry *e = &r->q.data[r->head];
		if (r->head + 1 < r->q.len)
			__builtin_prefetch(e[1].payload);
		n_done++;
		s->last_ts = e->ts;
		s->extracted = true;
		fn(tp, e->ts, e->payload, e->len, ctx);
		freed += slot_size(e->len) + sizeof *e;
		struct block *b = &s->blocks.data[e->blk];
		if (--b->live == 0 && e->blk != s->cur)
			drop_block(s, e->blk);
		r->head++;
		if ((r->head & 0xffff) == 0)
			drop_dispatched(r, r->head);
		leaf[w] = leaf_of(r, run, limit, r->rank);
		merge_replay(leaf, loser, k, w);
		/* The current queue's next event at the ts of another queue's
		 * first goes first (rare: equal timestamps across queues): it
		 * takes RANK_CURRENT, and the tree is played again. */
		if (__builtin_expect(current != UINT32_MAX && loser[0] != w &&
		                         leaf[w].ord != DONE_ORD && leaf[loser[0]].ts == leaf[w].ts,
		                     0)) {
			leaf[w].rank = RANK_CURRENT;
			merge_build(leaf, loser, loser + k, k);
		}
	}
	s->pending -= n_done;
	s->bytes -= freed;
out:
	/* Compact the runs: drop dispatched entries. */
	for (size_t i = 0; i < s->runs.len; i++) {
		struct run *r = &s->runs.data[i];
		r->dropped = 0;
		if (r->head == r->q.len) {
			r->q.len = r->head = 0;
			if (r->q.cap > 4096) /* do not keep a big idle index */
				vec_release(&r->q);
		} else if (r->head > r->q.len / 2) {
			memmove(r->q.data, r->q.data + r->head,
			        (r->q.len - r->head) * sizeof *r->q.data);
			r->q.len -= r->head;
			r->head = 0;
		}
	}
	if (s->late) {
		tp->stats[TP_STAT_sorter_push_event_out_of_order] += s->late;
		s->late = 0;
	}
}

void tp_sorter_extract(struct tp_sorter *s, struct tp *tp, tp_sorted_fn fn, void *ctx)
{
	int64_t limit = INT64_MAX;
	bool any = false;
	for (size_t i = 0; i < s->runs.len; i++) {
		const struct run *r = &s->runs.data[i];
		bool pending = r->head != r->q.len;
		bool idle = s->pushed - r->last_push > IDLE_BYTES;
		/* An expected run that has not pushed yet may still bring
		 * anything: nothing goes until it does, or goes idle. */
		if (r->expected && !idle) {
			limit = INT64_MIN;
			continue;
		}
		/* A run without pending events still holds the others back
		 * until it has been idle for a while: its next events may be
		 * as old as its latest. */
		if (!pending && (r->latest == INT64_MIN || idle))
			continue;
		any |= pending;
		if (r->latest < limit)
			limit = r->latest;
	}
	if (any && limit != INT64_MIN)
		extract(s, limit, tp, fn, ctx);
	/* Whatever is still held back waits for the buffer to double, so a
	 * slow source does not make every push extract. */
	s->trigger = s->bytes * 2 > s->window ? s->bytes * 2 : s->window;
}

void tp_sorter_flush(struct tp_sorter *s, struct tp *tp, tp_sorted_fn fn, void *ctx)
{
	s->flushing = true;
	extract(s, INT64_MAX, tp, fn, ctx);
	s->flushing = false;
	for (size_t i = 0; i < s->runs.len; i++) {
		vec_release(&s->runs.data[i].q);
		s->runs.data[i].head = s->runs.data[i].dropped = 0;
		s->runs.data[i].latest = INT64_MIN;
		s->runs.data[i].sorted = true;
		s->runs.data[i].expected = false;
	}
	for (size_t i = 0; i < s->blocks.len; i++) {
		if (s->blocks.data[i].data) {
			tb_free(s->blocks.data[i].data);
			s->blocks.data[i].data = NULL;
		}
	}
	vec_release(&s->blocks);
	vec_release(&s->free_slots);
	for (size_t i = 0; i < s->spare.len; i++)
		tb_free(s->spare.data[i]);
	vec_release(&s->spare);
	s->cur = UINT32_MAX;
	s->bytes = s->pending = 0;
	s->trigger = s->window;
}
