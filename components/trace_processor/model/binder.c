/*
 * Binder transactions from the binder ftrace events, as Perfetto's
 * BinderTracker builds them (category "binder" slices on thread tracks):
 *
 *   client                              server
 *   BC_TRANSACTION (command)
 *   binder_transaction       begin "binder transaction" ─flow─┐
 *   BR_TRANSACTION_COMPLETE                                    │
 *                           binder_transaction_received  begin "binder reply"
 *                           BR_TRANSACTION, BC_REPLY
 *                           binder_transaction (reply)   end "binder reply"
 *   binder_transaction_received (reply)  end "binder transaction"
 *   BR_REPLY
 *
 * A one-way call is an instant "binder transaction async" on the client and
 * an instant "binder async rcv" on the server, linked by a flow. A failed
 * call (BR_FAILED_REPLY, BR_DEAD_REPLY, BR_FROZEN_REPLY) ends the client's
 * open slice. Each thread keeps a stack of frames (nested calls) whose
 * state follows the commands and returns in between; transactions waiting
 * for their receive are kept by id. binder_lock / locked / unlock give
 * "binder lock waiting" and "binder lock held" slices.
 */
#include "../tp_int.h"
#include "model.h"
#include "ftrace.h"

#include <stdio.h>
#include <string.h>

enum {
	BC_TRANSACTION = 0x40406300,
	BC_REPLY = 0x40406301,
	BC_TRANSACTION_SG = 0x40486311,
	BC_REPLY_SG = 0x40486312,
	BR_TRANSACTION_SEC_CTX = 0x80487202,
	BR_TRANSACTION = 0x80407202,
	BR_REPLY = 0x80407203,
	BR_DEAD_REPLY = 0x7205,
	BR_TRANSACTION_COMPLETE = 0x7206,
	BR_FAILED_REPLY = 0x7211,
	BR_FROZEN_REPLY = 0x7212,
	BR_ONEWAY_SPAM_SUSPECT = 0x7213,
	BR_TRANSACTION_PENDING_FROZEN = 0x7214,
};

/* Frame states, named after the last event seen. */
enum {
	SND_AFTER_BC_TRANSACTION,
	SND_AFTER_TRANSACTION,
	SND_AFTER_BR_TRANSACTION_COMPLETE,
	SND_AFTER_TRANSACTION_RECEIVED,
	RCV_AFTER_TRANSACTION_RECEIVED,
	RCV_AFTER_BR_TRANSACTION,
	RCV_AFTER_BC_REPLY,
	RCV_AFTER_TRANSACTION,
};

struct tp_binder_frame {
	uint32_t prev; /* the frame below, TP_NULL_U32 at the bottom */
	uint8_t state;
	bool has_info, oneway, reply;
};

struct tp_binder_txn {
	bool reply, oneway;
	uint32_t send_track, send_slice; /* TP_NULL_U32: none */
	uint32_t args;
};

struct tp_binder {
	VEC(struct tp_binder_frame) frames;
	uint32_t free_frame; /* free list through prev, TP_NULL_U32 empty */
	struct hmap top;     /* utid -> index of its top frame */
	VEC(struct tp_binder_txn) txns;
	struct hmap outstanding;   /* transaction id -> index in txns */
	struct hmap lock_attempt;  /* tid -> 1 while waiting */
	struct hmap lock_acquired; /* tid -> 1 while held */
	uint32_t cat, transaction, transaction_async, reply, async_rcv, lock_waiting, lock_held;
};

static struct tp_binder *binder(struct tp *tp, struct tp_ftrace *fs)
{
	struct tp_binder *b = fs->binder;
	if (b)
		return b;
	b = fs->binder = tb_calloc(1, sizeof *b);
	b->free_frame = TP_NULL_U32;
	b->cat = tp_intern_cstr(tp, "binder");
	b->transaction = tp_intern_cstr(tp, "binder transaction");
	b->transaction_async = tp_intern_cstr(tp, "binder transaction async");
	b->reply = tp_intern_cstr(tp, "binder reply");
	b->async_rcv = tp_intern_cstr(tp, "binder async rcv");
	b->lock_waiting = tp_intern_cstr(tp, "binder lock waiting");
	b->lock_held = tp_intern_cstr(tp, "binder lock held");
	return b;
}

void tp_binder_free(struct tp_ftrace *fs)
{
	struct tp_binder *b = fs->binder;
	if (!b)
		return;
	vec_release(&b->frames);
	vec_release(&b->txns);
	hmap_release(&b->top);
	hmap_release(&b->outstanding);
	hmap_release(&b->lock_attempt);
	hmap_release(&b->lock_acquired);
	tb_free(b);
	fs->binder = NULL;
}

/* ---- per-thread frames ------------------------------------------------------ */

static struct tp_binder_frame *top(struct tp_binder *b, uint32_t utid)
{
	uint64_t i;
	return hmap_get(&b->top, utid, &i) ? &b->frames.data[i] : NULL;
}

static struct tp_binder_frame *push(struct tp_binder *b, uint32_t utid)
{
	uint64_t below;
	uint32_t i;
	if (b->free_frame != TP_NULL_U32) {
		i = b->free_frame;
		b->free_frame = b->frames.data[i].prev;
	} else {
		i = (uint32_t)b->frames.len;
		vec_resize(&b->frames, b->frames.len + 1);
	}
	struct tp_binder_frame *f = &b->frames.data[i];
	memset(f, 0, sizeof *f);
	f->prev = hmap_get(&b->top, utid, &below) ? (uint32_t)below : TP_NULL_U32;
	hmap_put(&b->top, utid, i);
	return f;
}

static void pop(struct tp_binder *b, uint32_t utid)
{
	uint64_t i;
	if (!hmap_get(&b->top, utid, &i))
		return;
	struct tp_binder_frame *f = &b->frames.data[i];
	if (f->prev == TP_NULL_U32)
		hmap_del(&b->top, utid, NULL);
	else
		hmap_put(&b->top, utid, f->prev);
	f->prev = b->free_frame;
	b->free_frame = (uint32_t)i;
}

/* ---- events ------------------------------------------------------------------- */

static uint32_t thread_track(struct tp *tp, int64_t tid, uint32_t *utid)
{
	*utid = tp_thread_for_tid(tp, tid, -1);
	return tp_track_for_thread(tp, *utid);
}

/* Args onto the innermost open slice of track if it is cat/name. */
static void add_args_if(struct tp *tp, uint32_t track, int64_t ts, uint32_t name, uint32_t args)
{
	uint32_t s = tp_slice_innermost(tp, track, ts);
	if (s != TP_NULL_U32 && tp->t.slice.name[s] == name)
		tp_slice_add_args(tp, s, args);
}

static void arg_int(struct tp *tp, const char *key, int64_t v)
{
	uint32_t k = tp_intern_cstr(tp, key);
	tp_args_add_int(&tp->args_scratch, k, k, v);
}

static void arg_str(struct tp *tp, const char *key, uint32_t v)
{
	uint32_t k = tp_intern_cstr(tp, key);
	tp_args_add_string(&tp->args_scratch, k, k, v);
}

/* "destination thread" (and its name, when known). */
static uint32_t dest_args(struct tp *tp, int64_t dest_tid, uint32_t dest_utid)
{
	tp_args_begin(&tp->args_scratch);
	arg_int(tp, "destination thread", dest_tid);
	if (tp->t.thread.name[dest_utid])
		arg_str(tp, "destination name", tp->t.thread.name[dest_utid]);
	return tp_args_commit(tp, &tp->args_scratch);
}

static uint32_t flags_str(struct tp *tp, uint32_t flags)
{
	char buf[160];
	int n = snprintf(buf, sizeof buf, "0x%02x ", flags);
	static const struct {
		uint32_t bit;
		const char *text;
	} t[] = {
	    {0x01, "this is a one-way call: async, no return; "},
	    {0x04, "contents are the components root object; "},
	    {0x08, "contents are a 32-bit status code; "},
	    {0x10, "allow replies with file descriptors; "},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (flags & t[i].bit)
			n += snprintf(buf + n, sizeof buf - (size_t)n, "%s", t[i].text);
	if (flags == 0)
		snprintf(buf + n, sizeof buf - (size_t)n, "No Flags Set");
	return tp_intern_cstr(tp, buf);
}

void tp_binder_transaction(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t tid,
                           int32_t txn_id, int32_t dest_node, int64_t dest_tgid, int64_t dest_tid,
                           bool is_reply, uint32_t flags, uint32_t code)
{
	struct tp_binder *b = binder(tp, fs);
	uint32_t utid, track = thread_track(tp, tid, &utid);
	bool oneway = flags & 0x01;
	tp_args_begin(&tp->args_scratch);
	arg_int(tp, "transaction id", txn_id);
	arg_int(tp, "destination node", dest_node);
	arg_int(tp, "destination process", dest_tgid);
	uint32_t k = tp_intern_cstr(tp, "reply transaction?");
	tp_args_add_bool(&tp->args_scratch, k, k, is_reply);
	arg_str(tp, "flags", flags_str(tp, flags));
	arg_str(tp, "code", code);
	k = tp_intern_cstr(tp, "calling tid");
	tp_args_add_uint(&tp->args_scratch, k, k, (uint64_t)tid);
	uint32_t args = tp_args_commit(tp, &tp->args_scratch);

	uint32_t slice;
	if (is_reply) {
		uint32_t dest_utid = tp_thread_for_tid(tp, dest_tid, -1);
		add_args_if(tp, track, ts, b->reply, dest_args(tp, dest_tid, dest_utid));
		slice = tp_slice_end(tp, track, ts, 0, 0, args);
	} else if (oneway) {
		slice = tp_slice_complete(tp, track, ts, 0, b->cat, b->transaction_async, args);
	} else {
		slice = tp_slice_begin(tp, track, ts, b->cat, b->transaction, args);
	}
	struct tp_binder_txn t = {is_reply, oneway, track, slice, args};
	uint64_t i;
	if (hmap_get(&b->outstanding, (uint32_t)txn_id, &i)) {
		b->txns.data[i] = t;
	} else {
		vec_push(&b->txns, t);
		hmap_put(&b->outstanding, (uint32_t)txn_id, b->txns.len - 1);
	}
	struct tp_binder_frame *f = top(b, utid);
	if (!f)
		return;
	if (f->state == SND_AFTER_BC_TRANSACTION || f->state == RCV_AFTER_BC_REPLY) {
		f->state = f->state == SND_AFTER_BC_TRANSACTION ? SND_AFTER_TRANSACTION
		                                                : RCV_AFTER_TRANSACTION;
		f->has_info = true;
		f->oneway = oneway;
		f->reply = is_reply;
	} else if (f->state == RCV_AFTER_TRANSACTION_RECEIVED) {
		pop(b, utid); /* command events are not recorded */
	}
}

void tp_binder_transaction_received(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t tid,
                                    int32_t txn_id)
{
	struct tp_binder *b = binder(tp, fs);
	uint64_t i;
	if (!hmap_get(&b->outstanding, (uint32_t)txn_id, &i))
		return; /* its kind is unknown: nothing to draw */
	struct tp_binder_txn t = b->txns.data[i];
	hmap_del(&b->outstanding, (uint32_t)txn_id, NULL);
	/* Reuse the slot when it is the last one (the common nesting). */
	if (i == b->txns.len - 1)
		b->txns.len--;
	uint32_t utid, track = thread_track(tp, tid, &utid);
	if (!t.oneway) {
		if (!t.reply) {
			struct tp_binder_frame *f = push(b, utid);
			f->state = RCV_AFTER_TRANSACTION_RECEIVED;
			f->has_info = true;
		} else {
			struct tp_binder_frame *f = top(b, utid);
			if (f && f->state == SND_AFTER_BR_TRANSACTION_COMPLETE)
				f->state = SND_AFTER_TRANSACTION_RECEIVED;
		}
	}
	if (t.reply) {
		tp_slice_end(tp, track, ts, 0, 0, TP_NULL_U32);
		return;
	}
	uint32_t recv;
	if (t.oneway) {
		recv = tp_slice_complete(tp, track, ts, 0, b->cat, b->async_rcv, t.args);
	} else {
		if (t.send_track != TP_NULL_U32)
			add_args_if(tp, t.send_track, ts, b->transaction, dest_args(tp, tid, utid));
		recv = tp_slice_begin(tp, track, ts, b->cat, b->reply, TP_NULL_U32);
	}
	if (t.send_slice != TP_NULL_U32 && recv != TP_NULL_U32)
		tp_flow_add(tp, t.send_slice, recv);
}

void tp_binder_command(struct tp *tp, struct tp_ftrace *fs, int64_t tid, uint32_t cmd)
{
	struct tp_binder *b = binder(tp, fs);
	uint32_t utid = tp_thread_for_tid(tp, tid, -1);
	if (cmd == BC_TRANSACTION || cmd == BC_TRANSACTION_SG) {
		push(b, utid)->state = SND_AFTER_BC_TRANSACTION;
	} else if (cmd == BC_REPLY || cmd == BC_REPLY_SG) {
		struct tp_binder_frame *f = top(b, utid);
		if (f && f->state == RCV_AFTER_BR_TRANSACTION)
			f->state = RCV_AFTER_BC_REPLY;
	}
}

void tp_binder_return(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t tid, uint32_t cmd)
{
	struct tp_binder *b = binder(tp, fs);
	uint32_t utid = tp_thread_for_tid(tp, tid, -1);
	struct tp_binder_frame *f = top(b, utid);
	if (!f)
		return;
	switch (cmd) {
	case BR_DEAD_REPLY:
	case BR_FAILED_REPLY:
	case BR_FROZEN_REPLY:
	case BR_TRANSACTION_PENDING_FROZEN:
		if (f->state == SND_AFTER_BC_TRANSACTION) {
			pop(b, utid); /* failed before any slice opened */
		} else if (f->state == RCV_AFTER_BC_REPLY || f->state == SND_AFTER_TRANSACTION ||
		           f->state == RCV_AFTER_TRANSACTION ||
		           f->state == SND_AFTER_BR_TRANSACTION_COMPLETE) {
			if (f->has_info && !f->oneway && !f->reply)
				tp_slice_end(tp, tp_track_for_thread(tp, utid), ts, 0, 0,
				             TP_NULL_U32);
			pop(b, utid);
		}
		break;
	case BR_TRANSACTION_COMPLETE:
	case BR_ONEWAY_SPAM_SUSPECT:
		if (f->state == RCV_AFTER_TRANSACTION || f->state == SND_AFTER_BC_TRANSACTION)
			pop(b, utid);
		else if (f->state == SND_AFTER_TRANSACTION && f->has_info && !f->oneway)
			f->state = SND_AFTER_BR_TRANSACTION_COMPLETE;
		else if (f->state == SND_AFTER_TRANSACTION)
			pop(b, utid); /* one-way: its last event */
		break;
	case BR_REPLY:
		if (f->state == SND_AFTER_TRANSACTION_RECEIVED)
			pop(b, utid);
		break;
	case BR_TRANSACTION:
	case BR_TRANSACTION_SEC_CTX:
		if (f->state == RCV_AFTER_TRANSACTION_RECEIVED)
			f->state = RCV_AFTER_BR_TRANSACTION;
		break;
	default:
		break;
	}
}

void tp_binder_lock(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t tid, int step)
{
	struct tp_binder *b = binder(tp, fs);
	uint32_t utid, track = thread_track(tp, tid, &utid);
	uint64_t key = (uint64_t)tid;
	switch (step) {
	case 0: /* binder_lock */
		hmap_put(&b->lock_attempt, key, 1);
		tp_slice_begin(tp, track, ts, b->cat, b->lock_waiting, TP_NULL_U32);
		break;
	case 1: /* binder_locked */
		if (!hmap_get(&b->lock_attempt, key, NULL))
			break;
		tp_slice_end(tp, track, ts, 0, 0, TP_NULL_U32);
		tp_slice_begin(tp, track, ts, b->cat, b->lock_held, TP_NULL_U32);
		hmap_put(&b->lock_acquired, key, 1);
		hmap_del(&b->lock_attempt, key, NULL);
		break;
	default: /* binder_unlock */
		if (!hmap_get(&b->lock_acquired, key, NULL))
			break;
		tp_slice_end(tp, track, ts, b->cat, b->lock_held, TP_NULL_U32);
		hmap_del(&b->lock_acquired, key, NULL);
		break;
	}
}

void tp_binder_alloc_buf(struct tp *tp, struct tp_ftrace *fs, int64_t ts, int64_t tid,
                         uint64_t data_size, uint64_t offsets_size)
{
	struct tp_binder *b = binder(tp, fs);
	uint32_t utid, track = thread_track(tp, tid, &utid);
	tp_args_begin(&tp->args_scratch);
	uint32_t k = tp_intern_cstr(tp, "data size");
	tp_args_add_uint(&tp->args_scratch, k, k, data_size);
	k = tp_intern_cstr(tp, "offsets size");
	tp_args_add_uint(&tp->args_scratch, k, k, offsets_size);
	add_args_if(tp, track, ts, b->transaction, tp_args_commit(tp, &tp->args_scratch));
}
