/*
 * Callstacks outside perf samples, as Perfetto's TrackEvent importer and
 * ProfileModule have them:
 *
 * - TrackEvent.callstack (55, InlineCallstack: frames root first, each a
 *   function name, source file and line) or callstack_iid (56, an interned
 *   Callstack, resolved as a perf sample's is) with callstack_weight (57):
 *   a track_event_callstacks row on the slice the event began (callsite_id),
 *   ended (end_callsite_id) or was. Inline frames live in a dummy mapping,
 *   "track_event_inline" ("stack_sample_inline" for StackSample's), one
 *   frame per (function, file, line), each with a stack_profile_symbol row
 *   of its own (symbol_set_id = that row's id).
 *
 * - StreamingProfilePacket (TracePacket 54): callstack_iid[i] sampled at the
 *   sequence's delta-coded TrackEvent time advanced by timestamp_delta_us[i]
 *   (tokenize time, MONOTONIC, saturating); a negative time drops the rest
 *   of the packet (streaming_profile_invalid_timestamp), a callstack
 *   without its delta too (stackprofile_parser_error), both with an import
 *   log row. Parse time: a profiler sample of source "chrome" (the
 *   cpu_profile_stack_sample view) on the sequence's thread and process,
 *   its process priority, when not 0, in chrome_stack_sample_extras; an
 *   unknown callstack is a stackprofile_parser_error log row with its
 *   callstack_iid.
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <string.h>

#define INLINE_MAX_FRAMES 1024

/* The dummy mappings of inline frames, by enum proto_inline_mapping. */
static const char *const inline_mapping_names[] = {"track_event_inline", "stack_sample_inline", ""};

struct proto_callstacks {
	/* per dummy mapping: its row (TP_NULL_U32 until made), its frames by
	 * hash(name, file, line) */
	uint32_t mapping[PROTO_INLINE_MAPPINGS];
	struct hmap frames[PROTO_INLINE_MAPPINGS];
};

static struct proto_callstacks *state(struct proto_importer *im)
{
	if (!im->callstacks) {
		im->callstacks = tb_calloc(1, sizeof *im->callstacks);
		for (int i = 0; i < PROTO_INLINE_MAPPINGS; i++) {
			im->callstacks->mapping[i] = TP_NULL_U32;
			hmap_init(&im->callstacks->frames[i]);
		}
	}
	return im->callstacks;
}

void tp_proto_callstacks_free(struct proto_importer *im)
{
	if (!im->callstacks)
		return;
	for (int i = 0; i < PROTO_INLINE_MAPPINGS; i++)
		hmap_release(&im->callstacks->frames[i]);
	tb_free(im->callstacks);
	im->callstacks = NULL;
}

struct frame_key {
	const struct tp *tp;
	uint32_t name, file, line; /* line TP_NULL_U32: none */
};

static bool frame_eq(const void *ctx, uint64_t row)
{
	const struct frame_key *k = ctx;
	const struct tp_stack_profile_frame_table *f = &k->tp->t.stack_profile_frame;
	const struct tp_stack_profile_symbol_table *s = &k->tp->t.stack_profile_symbol;
	uint32_t sym = f->symbol_set_id[row];
	return f->name[row] == k->name && s->source_file[sym] == k->file &&
	       s->line_number[sym] == k->line;
}

/* The frame of one InlineCallstack.Frame in dummy mapping which. */
static uint32_t inline_frame(struct proto_importer *im, enum proto_inline_mapping which,
                             const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	uint32_t name = 0, file = 0, line = TP_NULL_U32;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_InlineCallstack_Frame_function_name && f.wire == PB_WIRE_LEN)
			name = tp_intern(tp, (const char *)f.data, f.len);
		else if (f.id == PB_F_InlineCallstack_Frame_source_file && f.wire == PB_WIRE_LEN)
			file = tp_intern(tp, (const char *)f.data, f.len);
		else if (f.id == PB_F_InlineCallstack_Frame_line_number && f.wire == PB_WIRE_VARINT)
			line = (uint32_t)f.val;
	}
	return tp_proto_dummy_frame(im, which, name, file, line);
}

uint32_t tp_proto_dummy_frame(struct proto_importer *im, enum proto_inline_mapping which,
                              uint32_t name, uint32_t file, uint32_t line)
{
	struct tp *tp = im->tp;
	struct proto_callstacks *cs = state(im);
	struct frame_key k = {tp, name, file, line};
	uint64_t v[3] = {k.name, k.file, k.line};
	uint64_t h = tb_hash_bytes(v, sizeof v, 0x1f1e);
	size_t slot = hmap_lookup(&cs->frames[which], h, frame_eq, &k);
	if (slot != HMAP_END)
		return (uint32_t)cs->frames[which].slots[slot].key;
	if (cs->mapping[which] == TP_NULL_U32) {
		struct tp_stack_profile_mapping_table *m = &tp->t.stack_profile_mapping;
		uint32_t row = tp_stack_profile_mapping_append(m);
		m->name[row] = tp_intern_cstr(tp, inline_mapping_names[which]);
		m->end[row] = -1; /* the whole address space, as Perfetto's */
		cs->mapping[which] = row;
	}
	struct tp_stack_profile_symbol_table *s = &tp->t.stack_profile_symbol;
	uint32_t sym = tp_stack_profile_symbol_append(s);
	s->symbol_set_id[sym] = sym;
	s->name[sym] = k.name;
	s->source_file[sym] = k.file;
	s->line_number[sym] = k.line;
	struct tp_stack_profile_frame_table *ft = &tp->t.stack_profile_frame;
	uint32_t row = tp_stack_profile_frame_append(ft);
	ft->name[row] = k.name;
	ft->mapping[row] = cs->mapping[which];
	ft->rel_pc[row] = 0;
	ft->symbol_set_id[row] = sym;
	hmap_insert(&cs->frames[which], h, row, row);
	return row;
}

uint32_t tp_proto_inline_callstack(struct proto_importer *im, enum proto_inline_mapping which,
                                   const uint8_t *p, size_t n)
{
	struct tp_stack_profile *sp = tp_proto_stack_profile(im);
	uint32_t parent = TP_NULL_U32, depth = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f) && depth < INLINE_MAX_FRAMES) {
		if (f.id != PB_F_InlineCallstack_frames || f.wire != PB_WIRE_LEN)
			continue;
		parent = tp_stack_profile_callsite(im->tp, sp, parent,
		                                   inline_frame(im, which, f.data, f.len));
		depth++;
	}
	return parent;
}

void tp_proto_te_callstack_add(struct proto_importer *im, const struct proto_gen *g,
                               const struct proto_te_callstack *cs, uint32_t slice, uint32_t track,
                               bool end)
{
	struct tp *tp = im->tp;
	uint32_t callsite = TP_NULL_U32;
	if (cs->has_iid) {
		callsite = tp_proto_callstack_row(im, g, cs->iid);
		if (callsite == TP_NULL_U32)
			tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
	} else if (cs->inline_data) {
		callsite = tp_proto_inline_callstack(im, PROTO_INLINE_TRACK_EVENT, cs->inline_data,
		                                     cs->inline_len);
	}
	if (callsite == TP_NULL_U32)
		return;
	struct tp_track_event_callstacks_table *t = &tp->t.track_event_callstacks;
	uint32_t row = tp_track_event_callstacks_append(t);
	t->slice_id[row] = slice;
	t->track_id[row] = track;
	t->callsite_id[row] = end ? TP_NULL_U32 : callsite;
	t->end_callsite_id[row] = end ? callsite : TP_NULL_U32;
	t->weight[row] = cs->has_weight ? cs->weight : TP_NULL_DBL;
}

/* ---- StreamingProfilePacket ------------------------------------------------ */

struct sample_rec {
	uint64_t iid;
	int64_t priority;
};

static int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/* Advance the sequence's TrackEvent time by delta_us; false (and the
 * stat) once it is negative. */
static bool advance(struct proto_importer *im, struct proto_seq *seq, int64_t delta_us,
                    int64_t *delta_ns)
{
	*delta_ns = proto_sat_mul_1000(delta_us);
	seq->ref_ts_ns = sat_add(seq->ref_ts_ns, *delta_ns);
	if (seq->ref_ts_ns >= 0)
		return true;
	tp_import_log(im->tp, TP_STAT_streaming_profile_invalid_timestamp, TP_NULL_I64,
	              TP_NULL_U32);
	return false;
}

/* The values of one repeated varint field, packed or not, in any number
 * of runs. */
struct repeated {
	struct pb_reader r;
	struct pb_packed run;
	bool in_run;
	uint32_t id;
};

static void repeated_init(struct repeated *it, const uint8_t *p, size_t n, uint32_t id)
{
	pb_reader_init(&it->r, p, n);
	it->in_run = false;
	it->id = id;
}

static bool repeated_next(struct repeated *it, uint64_t *v)
{
	struct pb_field f = {0};
	for (;;) {
		if (it->in_run && pb_packed_next(&it->run, v))
			return true;
		it->in_run = false;
		if (!pb_next(&it->r, &f))
			return false;
		if (f.id != it->id)
			continue;
		if (f.wire == PB_WIRE_LEN) {
			pb_packed_init(&it->run, f.data, f.len, PB_WIRE_VARINT);
			it->in_run = true;
		} else if (f.wire == PB_WIRE_VARINT) {
			*v = f.val;
			return true;
		}
	}
}

void tp_proto_streaming_profile_tokenize(struct proto_importer *im, struct proto_seq *seq,
                                         const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_field f = {0};
	int64_t priority = 0;
	struct pb_reader r;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_StreamingProfilePacket_process_priority &&
		    f.wire == PB_WIRE_VARINT)
			priority = (int32_t)f.val;
	}
	if (seq->ref_ts_ns < 0) {
		tp_import_log(tp, TP_STAT_streaming_profile_invalid_timestamp, TP_NULL_I64,
		              TP_NULL_U32);
		return;
	}
	int64_t sample_ts = seq->ref_ts_ns;
	int64_t conv;
	if (tp_proto_clocks_to_trace(im->clocks, seq->id, PROTO_CLOCK_MONOTONIC,
	                             (uint64_t)sample_ts, &conv))
		sample_ts = conv;

	/* Walk the two repeated fields in step: the i-th delta times the i-th
	 * callstack; deltas left over still advance the sequence's time. */
	struct repeated iids, deltas;
	repeated_init(&iids, p, n, PB_F_StreamingProfilePacket_callstack_iid);
	repeated_init(&deltas, p, n, PB_F_StreamingProfilePacket_timestamp_delta_us);
	for (;;) {
		uint64_t iid = 0, d = 0;
		bool got_iid = repeated_next(&iids, &iid);
		bool got_d = repeated_next(&deltas, &d);
		if (!got_iid && !got_d)
			return;
		if (got_iid && !got_d) {
			tp_import_log(tp, TP_STAT_stackprofile_parser_error, TP_NULL_I64,
			              TP_NULL_U32);
			return;
		}
		int64_t delta_ns;
		if (!advance(im, seq, (int64_t)d, &delta_ns))
			return;
		if (!got_iid)
			continue;
		sample_ts = sat_add(sample_ts, delta_ns);
		struct sample_rec rec = {iid, priority};
		tp_proto_push(im, sample_ts, EV_STREAMING_SAMPLE, seq->gen, seq,
		              (const uint8_t *)&rec, sizeof rec);
	}
}

void tp_proto_streaming_sample_parse(struct proto_importer *im, int64_t ts,
                                     const struct proto_ev *ev, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct sample_rec rec;
	if (n != sizeof rec)
		return;
	memcpy(&rec, p, sizeof rec);
	/* Without a ThreadDescriptor, pid and tid are 0, as Perfetto's. */
	int64_t pid = ev->pid > 0 ? ev->pid : 0;
	uint32_t utid = tp_thread_for_tid(tp, ev->tid > 0 ? ev->tid : 0, pid);
	uint32_t upid = tp_process_for_pid(tp, pid);
	uint32_t callsite = tp_proto_callstack_row(im, ev->gen, rec.iid);
	if (callsite == TP_NULL_U32) {
		struct tp_args_builder *b = &tp->args_scratch;
		uint32_t k = tp_intern_cstr(tp, "callstack_iid");
		tp_args_begin(b);
		tp_args_add_uint(b, k, k, rec.iid);
		tp_import_log(tp, TP_STAT_stackprofile_parser_error, ts, tp_args_commit(tp, b));
		return;
	}
	struct tp_profiler_sample s = {
	    .ts = ts,
	    .source = tp_intern_cstr(tp, "chrome"),
	    .task_context = tp_profiler_task_context(tp, upid, utid, TP_NULL_U32),
	    .execution_context = TP_NULL_U32,
	    .callsite = callsite,
	    .session = TP_NULL_U32,
	    .counter_set = TP_NULL_U32,
	};
	uint32_t id = tp_profiler_sample_add(tp, &s);
	if (rec.priority != 0) {
		struct tp_chrome_stack_sample_extras_table *x = &tp->t.chrome_stack_sample_extras;
		uint32_t row = tp_chrome_stack_sample_extras_append(x);
		x->profiler_sample_id[row] = id;
		x->process_priority[row] = rec.priority;
	}
}
