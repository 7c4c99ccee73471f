/*
 * Slices: begin/end pairs, complete events and instants on tracks, nested by
 * a stack of open slices per track (depth and parent_id come from it).
 *
 * A stack entry is either open-ended (a begin waiting for its end) or a
 * complete slice with a known end. Before anything happens on a track at ts,
 * the stack is closed up to ts exactly as Perfetto's SliceTracker does it
 * (close_stack). A complete slice that starts inside a running one but ends
 * after it would break nesting: it is dropped (and counted), or, for JSON,
 * spilled by the importer onto an overlap track
 * (tp_slice_complete_or_conflict). More than 512 deep is dropped.
 */
#include "../tp_int.h"
#include "model.h"
#include "slices.h"

#include <string.h>

#define OPEN_END INT64_MAX
/* Slices deeper than this on one track are dropped, as in Perfetto. */
#define MAX_DEPTH 512

struct open_slice {
	uint32_t id;
	bool instant;     /* known end, dur 0 */
	uint32_t pending; /* its args not committed yet (a builder), NO_PENDING */
	int64_t end;      /* OPEN_END for a begin without end yet */
};
#define NO_PENDING UINT32_MAX

/* A track's stack (the vec_* macros apply). */
struct open_stack {
	struct open_slice *data;
	size_t len, cap;
};
typedef struct open_stack stack_t_;

struct tp_slice_stacks {
	VEC(struct open_stack) by_track;
	/* The args of open slices, kept until they leave their stack (as
	 * Perfetto's SliceTracker keeps an ArgsTracker per open slice), so a
	 * begin's and its end's args are one set; free ones listed. */
	VEC(struct tp_args_builder) pending;
	VEC(uint32_t) free_pending;
};

void tp_slices_init(struct tp *tp)
{
	tp->stacks = tb_calloc(1, sizeof *tp->stacks);
}

void tp_slices_release(struct tp *tp)
{
	if (!tp->stacks)
		return;
	for (size_t i = 0; i < tp->stacks->by_track.len; i++)
		vec_release(&tp->stacks->by_track.data[i]);
	vec_release(&tp->stacks->by_track);
	for (size_t i = 0; i < tp->stacks->pending.len; i++)
		tp_args_builder_release(&tp->stacks->pending.data[i]);
	vec_release(&tp->stacks->pending);
	vec_release(&tp->stacks->free_pending);
	tb_free(tp->stacks);
	tp->stacks = NULL;
}

/* o leaves its stack: its pending args become its arg set. */
static void commit_pending(struct tp *tp, struct open_slice *o)
{
	if (__builtin_expect(o->pending == NO_PENDING, 1))
		return;
	struct tp_slice_stacks *s = tp->stacks;
	tp->t.slice.arg_set_id[o->id] = tp_args_commit(tp, &s->pending.data[o->pending]);
	vec_push(&s->free_pending, o->pending);
	o->pending = NO_PENDING;
}

/* Drop entries [from, len), committing their pending args. */
static void truncate_stack(struct tp *tp, stack_t_ *st, size_t from)
{
	for (size_t j = from; j < st->len; j++)
		commit_pending(tp, &st->data[j]);
	st->len = from;
}

void tp_slices_finish(struct tp *tp)
{
	/* Open slices already have dur = -1; their args are committed now. */
	struct tp_slice_stacks *s = tp->stacks;
	for (size_t i = 0; i < s->by_track.len; i++) {
		struct open_stack *st = &s->by_track.data[i];
		for (size_t j = 0; j < st->len; j++)
			commit_pending(tp, &st->data[j]);
	}
}

static stack_t_ *stack_for(struct tp *tp, uint32_t track)
{
	struct tp_slice_stacks *s = tp->stacks;
	if (track >= s->by_track.len)
		vec_resize(&s->by_track, (size_t)track + 1);
	return &s->by_track.data[track];
}

/* Before a slice event of duration dur (-1: open-ended) at ts, as
 * Perfetto's SliceTracker::MaybeCloseStack, step for step: from the top
 * down, a slice with a known end that has ended (before ts, or at ts unless
 * both are instants: intervals are closed on the left, open on the right)
 * pops the top of the stack, which is that slice when the stack nests
 * properly (and the slice above it when not: Perfetto's rule too); one that
 * ended below open slices (an end matched below the top) waits until ts
 * passes its end, then cuts the slices above it at its end and leaves with
 * them (misplaced_end_event). A complete slice that would start inside a
 * slice still running and end after it is refused: false, with *conflict
 * its index. */
static bool close_stack(struct tp *tp, stack_t_ *st, int64_t ts, int64_t dur, size_t *conflict)
{
	bool open_above = false;
	for (size_t i = st->len; i-- > 0;) {
		const struct open_slice *o = &st->data[i];
		if (o->end == OPEN_END) {
			open_above = true;
			continue;
		}
		if (open_above) {
			if (ts <= o->end)
				continue;
			tp_stat_inc(tp, TP_STAT_misplaced_end_event);
			struct tp_slice_table *t = &tp->t.slice;
			for (size_t j = i + 1; j < st->len; j++)
				t->dur[st->data[j].id] = o->end - t->ts[st->data[j].id];
			truncate_stack(tp, st, i);
			open_above = false;
			continue;
		}
		if (o->end < ts || (o->end == ts && !(o->instant && dur == 0))) {
			truncate_stack(tp, st, st->len - 1);
			continue;
		}
		if (dur < 0)
			continue;
		if (ts < o->end && ts + dur > o->end) {
			*conflict = i;
			return false;
		}
	}
	return true;
}

/* Room for one more slice on st, else the drop is logged as Perfetto's
 * slice_max_depth_exceeded (parent_slice_name, current_slice_name). */
static bool depth_ok(struct tp *tp, const stack_t_ *st, int64_t ts, uint32_t name)
{
	if (st->len < MAX_DEPTH)
		return true;
	uint32_t kp = tp_intern_cstr(tp, "parent_slice_name");
	uint32_t kc = tp_intern_cstr(tp, "current_slice_name");
	struct tp_args_builder *b = &tp->args_scratch;
	tp_args_begin(b);
	tp_args_add_string(b, kp, kp, tp->t.slice.name[st->data[st->len - 1].id]);
	tp_args_add_string(b, kc, kc, name);
	tp_import_log(tp, TP_STAT_slice_max_depth_exceeded, ts, tp_args_commit(tp, b));
	return false;
}

static uint32_t insert(struct tp *tp, stack_t_ *st, uint32_t track, int64_t ts, int64_t dur,
                       uint32_t cat, uint32_t name, uint32_t arg_set_id)
{
	struct tp_slice_table *t = &tp->t.slice;
	uint32_t id = tp_slice_append(t);
	t->ts[id] = ts;
	t->dur[id] = dur;
	t->track_id[id] = track;
	t->category[id] = cat;
	t->name[id] = name;
	t->depth[id] = (uint32_t)st->len;
	t->parent_id[id] = st->len ? st->data[st->len - 1].id : TP_NULL_U32;
	t->arg_set_id[id] = arg_set_id;
	tp_flow_bind_pending(tp, track, id);
	return id;
}

uint32_t tp_slice_begin(struct tp *tp, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
                        uint32_t arg_set_id)
{
	stack_t_ *st = stack_for(tp, track);
	size_t unused;
	close_stack(tp, st, ts, -1, &unused);
	if (!depth_ok(tp, st, ts, name))
		return TP_NULL_U32;
	uint32_t id = insert(tp, st, track, ts, -1, cat, name, arg_set_id);
	vec_push(st, ((struct open_slice){id, false, NO_PENDING, OPEN_END}));
	return id;
}

/* A pending builder of o's args: the set it has, if any, to start. */
static struct tp_args_builder *pending_of(struct tp *tp, struct open_slice *o)
{
	struct tp_slice_stacks *s = tp->stacks;
	if (o->pending == NO_PENDING) {
		if (s->free_pending.len) {
			o->pending = vec_pop(&s->free_pending);
		} else {
			o->pending = (uint32_t)s->pending.len;
			vec_push_zeroed(&s->pending);
		}
		struct tp_args_builder *b = &s->pending.data[o->pending];
		tp_args_begin(b);
		tp_args_load(tp, tp->t.slice.arg_set_id[o->id], b);
		tp->t.slice.arg_set_id[o->id] = TP_NULL_U32;
	}
	return &s->pending.data[o->pending];
}

uint32_t tp_slice_begin_args(struct tp *tp, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
                             struct tp_args_builder *b)
{
	uint32_t id = tp_slice_begin(tp, track, ts, cat, name, TP_NULL_U32);
	if (id != TP_NULL_U32 && b && b->args.len) {
		stack_t_ *st = stack_for(tp, track);
		struct tp_args_builder *p = pending_of(tp, &st->data[st->len - 1]);
		tp_args_merge_into(tp, p, b->args.data, b->args.len, 0);
	}
	if (b)
		tp_args_begin(b);
	return id;
}

void tp_slice_defer_args(struct tp *tp, uint32_t track, uint32_t slice, struct tp_args_builder *b)
{
	if (!b)
		return;
	stack_t_ *st = stack_for(tp, track);
	if (slice != TP_NULL_U32 && b->args.len && st->len && st->data[st->len - 1].id == slice) {
		struct tp_args_builder *p = pending_of(tp, &st->data[st->len - 1]);
		tp_args_merge_into(tp, p, b->args.data, b->args.len, 0);
	}
	tp_args_begin(b);
}

/* The stack index + 1 of the open slice an end on track matches, or 0
 * (counted). */
static size_t end_match(struct tp *tp, stack_t_ *st, uint32_t cat, uint32_t name)
{
	const struct tp_slice_table *t = &tp->t.slice;
	size_t i = st->len;
	while (i > 0) {
		struct open_slice *o = &st->data[i - 1];
		/* As Perfetto: a category must be the slice's; a name must be the
		 * slice's unless the slice has none. */
		if (o->end == OPEN_END && (!cat || t->category[o->id] == cat) &&
		    (!name || !t->name[o->id] || t->name[o->id] == name))
			break;
		i--;
	}
	if (i == 0)
		tp_stat_inc(tp,
		            st->len ? TP_STAT_misplaced_end_event : TP_STAT_stackless_end_event);
	return i;
}

uint32_t tp_slice_end_args(struct tp *tp, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
                           struct tp_args_builder *b, uint32_t keep_key)
{
	stack_t_ *st = stack_for(tp, track);
	size_t unused;
	close_stack(tp, st, ts, -1, &unused);
	size_t i = end_match(tp, st, cat, name);
	if (i && b && b->args.len && ts >= tp->t.slice.ts[st->data[i - 1].id]) {
		struct tp_args_builder *p = pending_of(tp, &st->data[i - 1]);
		tp_args_merge_into(tp, p, b->args.data, b->args.len, keep_key);
	}
	if (b)
		tp_args_begin(b);
	/* end_match counted a missing slice already: tp_slice_end must not
	 * count it again. */
	if (!i)
		return TP_NULL_U32;
	return tp_slice_end(tp, track, ts, cat, name, TP_NULL_U32);
}

uint32_t tp_slice_end(struct tp *tp, uint32_t track, int64_t ts, uint32_t cat, uint32_t name,
                      uint32_t arg_set_id)
{
	stack_t_ *st = stack_for(tp, track);
	size_t unused;
	close_stack(tp, st, ts, -1, &unused);
	struct tp_slice_table *t = &tp->t.slice;
	size_t i = end_match(tp, st, cat, name);
	if (i == 0)
		return TP_NULL_U32;
	uint32_t id = st->data[i - 1].id;
	if (ts < t->ts[id]) {
		tp_stat_inc(tp, TP_STAT_slice_negative_duration);
		return TP_NULL_U32;
	}
	t->dur[id] = ts - t->ts[id];
	if (arg_set_id != TP_NULL_U32) {
		if (st->data[i - 1].pending != NO_PENDING) {
			struct tp_args_builder add = {VEC_INIT};
			tp_args_load(tp, arg_set_id, &add);
			tp_args_merge_into(tp, pending_of(tp, &st->data[i - 1]), add.args.data,
			                   add.args.len, 0);
			tp_args_builder_release(&add);
		} else {
			tp_slice_add_args(tp, id, arg_set_id);
		}
	}
	/* The top slice leaves the stack; one below open slices stays, ended,
	 * until an event past its end cuts them (close_stack), as in Perfetto. */
	if (i == st->len) {
		truncate_stack(tp, st, st->len - 1);
	} else {
		st->data[i - 1].end = ts;
		st->data[i - 1].instant = ts == t->ts[id];
	}
	return id;
}

void tp_slice_log_overlap(struct tp *tp, enum tp_stat stat, int64_t ts, int64_t conflict_end,
                          uint32_t conflict, const struct tp_slice_event *ev)
{
	static const char *const keys[] = {
	    "event_name",
	    "event_phase",
	    "overlap_start",
	    "overlap_end",
	    "conflicting_slice_name",
	    "conflicting_slice_ts",
	    "conflicting_slice_dur",
	};
	uint32_t k[7];
	for (int i = 0; i < 7; i++)
		k[i] = tp_intern_cstr(tp, keys[i]);
	const struct tp_slice_table *t = &tp->t.slice;
	struct tp_args_builder *b = &tp->args_scratch;
	tp_args_begin(b);
	if (ev) {
		tp_args_add_string(b, k[0], k[0], ev->name);
		tp_args_add_string(b, k[1], k[1], tp_intern(tp, &ev->phase, 1));
	}
	tp_args_add_int(b, k[2], k[2], ts);
	tp_args_add_int(b, k[3], k[3], conflict_end);
	tp_args_add_string(b, k[4], k[4], t->name[conflict]);
	tp_args_add_int(b, k[5], k[5], t->ts[conflict]);
	tp_args_add_int(b, k[6], k[6], t->dur[conflict]);
	tp_import_log(tp, stat, ts, tp_args_commit(tp, b));
}

uint32_t tp_slice_complete_or_conflict(struct tp *tp, uint32_t track, int64_t ts, int64_t dur,
                                       uint32_t cat, uint32_t name, uint32_t arg_set_id,
                                       struct tp_slice_conflict *c)
{
	c->slice = TP_NULL_U32;
	if (dur < 0) {
		tp_stat_inc(tp, TP_STAT_slice_negative_duration);
		return TP_NULL_U32;
	}
	stack_t_ *st = stack_for(tp, track);
	size_t at;
	if (!close_stack(tp, st, ts, dur, &at)) {
		c->slice = st->data[at].id;
		c->end = st->data[at].end;
		return TP_NULL_U32;
	}
	if (!depth_ok(tp, st, ts, name))
		return TP_NULL_U32;
	uint32_t id = insert(tp, st, track, ts, dur, cat, name, arg_set_id);
	vec_push(st, ((struct open_slice){id, dur == 0, NO_PENDING, ts + dur}));
	return id;
}

uint32_t tp_slice_complete(struct tp *tp, uint32_t track, int64_t ts, int64_t dur, uint32_t cat,
                           uint32_t name, uint32_t arg_set_id)
{
	struct tp_slice_conflict c;
	uint32_t id = tp_slice_complete_or_conflict(tp, track, ts, dur, cat, name, arg_set_id, &c);
	if (c.slice != TP_NULL_U32)
		tp_slice_log_overlap(tp, TP_STAT_slice_drop_overlapping_complete_event, ts, c.end,
		                     c.slice, NULL);
	return id;
}

uint32_t tp_slice_top(struct tp *tp, uint32_t track)
{
	stack_t_ *st = stack_for(tp, track);
	return st->len ? st->data[st->len - 1].id : TP_NULL_U32;
}

uint32_t tp_slice_innermost(struct tp *tp, uint32_t track, int64_t ts)
{
	stack_t_ *st = stack_for(tp, track);
	size_t unused;
	close_stack(tp, st, ts, -1, &unused);
	return st->len ? st->data[st->len - 1].id : TP_NULL_U32;
}

void tp_slice_add_args(struct tp *tp, uint32_t slice, uint32_t arg_set_id)
{
	if (arg_set_id == TP_NULL_U32)
		return;
	uint32_t *cur = &tp->t.slice.arg_set_id[slice];
	*cur = *cur == TP_NULL_U32 ? arg_set_id : tp_args_merge(tp, *cur, arg_set_id);
}
