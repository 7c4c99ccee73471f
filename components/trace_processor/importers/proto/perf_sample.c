/*
 * TracePacket.perf_sample (traced_perf): one profiler sample of source
 * "linux.perf" per sample (the perf_sample view), its callstack resolved
 * through the sequence's interned data
 *
 *   callstack_iid -> Callstack{frame_ids, root first}
 *                 -> Frame{function_name_id, mapping_id, rel_pc, kind}
 *                 -> Mapping{build_id, path_string_ids, start, end, ...}
 *
 * into stack_profile_mapping/frame/callsite rows (model/stack_profile.c),
 * as Perfetto's ProfileModule and PerfSampleTracker:
 *
 * - each sequence (one per data source instance) is one profiler session,
 *   its timebase_unit from the timebase of its PerfSampleDefaults;
 * - each (sequence, cpu) has a perf_cpu_counter track for the timebase
 *   (named after it: its name, else the perf tool's name of its counter or
 *   tracepoint, "raw.TYPE.CONFIG..." for a raw event, ":ukh" modifiers) and
 *   one per follower, dimension args cpu / perf_session_id / name, source
 *   arg is_timebase; the sample's timebase_count and follower_counts are
 *   counter rows on them, grouped as the sample's counter set;
 * - the sample's task context is its thread and process, its execution
 *   context its cpu and mode (no context row when neither is known);
 * - a PerfSample reporting kernel_records_lost adds to
 *   perf_cpu_lost_records[cpu] and no row; a skipped sample
 *   (sample_skipped_reason) is a row without a callsite, counted in
 *   perf_samples_skipped (read / unwind stage) or
 *   perf_samples_skipped_dataloss (unwind enqueue); NOT_IN_SCOPE skips are
 *   expected and not counted.
 *
 * The interned Mapping/Frame/Callstack entries of a generation cache their
 * resolved row in struct proto_interned.str (these messages have no field 2
 * string, so proto_interned_str never uses it for them).
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PERF_MAX_FRAMES 1024 /* frames per callstack */
#define PERF_MAX_PATH 4096   /* mapping path bytes */

static const char *const cpu_modes[] = {"unknown",    "kernel",       "user",
                                        "hypervisor", "guest_kernel", "guest_user"};
static const char *const unwind_errors[] = {
    "unknown",     "none",        "memory_invalid",      "unwind_info",
    "unsupported", "invalid_map", "max_frames_exceeded", "repeated_frame",
    "invalid_elf", "system_call", "thread_timeout",      "thread_does_not_exist",
    "bad_arch",    "maps_parse",  "invalid_parameter",   "ptrace_call"};

/* The counter tracks of one (sequence, cpu): its timebase's and its
 * followers', in the order of the defaults. */
struct perf_stream {
	uint32_t session;
	uint32_t timebase;
	uint32_t first_follower, n_followers; /* in proto_perf.followers */
};

struct proto_perf {
	struct tp_stack_profile sp;
	struct hmap sessions; /* seq id -> profiler_session id */
	struct hmap streams;  /* seq id << 32 | cpu -> index in stream */
	VEC(struct perf_stream) stream;
	VEC(uint32_t) followers; /* follower track ids */
	VEC(uint32_t) counters;  /* scratch: a sample's counter rows */
	uint32_t str_source;     /* "linux.perf" */
};

static struct proto_perf *perf_state(struct proto_importer *im)
{
	if (!im->perf) {
		im->perf = tb_calloc(1, sizeof *im->perf);
		tp_stack_profile_init(&im->perf->sp);
		hmap_init(&im->perf->sessions);
		hmap_init(&im->perf->streams);
		im->perf->str_source = tp_intern_cstr(im->tp, "linux.perf");
	}
	return im->perf;
}

void tp_proto_perf_free(struct proto_importer *im)
{
	if (!im->perf)
		return;
	tp_stack_profile_release(&im->perf->sp);
	hmap_release(&im->perf->sessions);
	hmap_release(&im->perf->streams);
	vec_release(&im->perf->stream);
	vec_release(&im->perf->followers);
	vec_release(&im->perf->counters);
	tb_free(im->perf);
	im->perf = NULL;
}

/* ---- sampling streams: sessions and their counter tracks ------------------ */

/* PerfEvents.Counter as the perf tool names it (Perfetto's names). */
static const char *counter_name(uint64_t c)
{
	static const char *const names[] = {
	    [1] = "cpu-clock",
	    [2] = "page-faults",
	    [3] = "task-clock",
	    [4] = "context-switches",
	    [5] = "cpu-migrations",
	    [6] = "minor-faults",
	    [7] = "major-faults",
	    [8] = "alignment-faults",
	    [9] = "emulation-faults",
	    [10] = "cpu-cycles",
	    [11] = "instructions",
	    [12] = "cache-references",
	    [13] = "cache-misses",
	    [14] = "branch-instructions",
	    [15] = "branch-misses",
	    [16] = "bus-cycles",
	    [17] = "stalled-cycles-frontend",
	    [18] = "stalled-cycles-backend",
	    [19] = "ref-cycles",
	    [20] = "dummy",
	};
	return c < TB_ARRAY_SIZE(names) && names[c] ? names[c] : "unknown";
}

/* The unit a Timebase counts in (Perfetto's TimebaseUnit), or NULL. */
static const char *timebase_unit(const uint8_t *p, size_t n)
{
	struct pb_field f;
	if (pb_find_field(p, n, PB_F_PerfEvents_Timebase_counter, &f) == 1 &&
	    f.wire == PB_WIRE_VARINT) {
		switch (f.val) {
		case PB_E_PerfEvents_Counter_SW_CPU_CLOCK:
		case PB_E_PerfEvents_Counter_SW_TASK_CLOCK:
			return "ns";
		case PB_E_PerfEvents_Counter_HW_CPU_CYCLES:
		case PB_E_PerfEvents_Counter_HW_BUS_CYCLES:
		case PB_E_PerfEvents_Counter_HW_REF_CPU_CYCLES:
			return "cycles";
		case PB_E_PerfEvents_Counter_HW_INSTRUCTIONS:
			return "instructions";
		default:
			return "count";
		}
	}
	if (pb_find_field(p, n, PB_F_PerfEvents_Timebase_tracepoint, &f) == 1)
		return "count";
	return NULL;
}

/* The name of a Timebase or FollowerEvent (fields: counter, tracepoint,
 * raw_event, name, modifiers), as Perfetto's InternCounterName: the
 * explicit name, else the counter's, the tracepoint's, or raw.TYPE.CONFIG...,
 * suffixed ":ukh" by its modifiers. */
static uint32_t event_counter_name(struct proto_importer *im, const uint8_t *p, size_t n,
                                   bool follower)
{
#define FIELD_(name) (follower ? PB_F_FollowerEvent_##name : PB_F_PerfEvents_Timebase_##name)
	uint32_t f_counter = FIELD_(counter), f_tracepoint = FIELD_(tracepoint),
	         f_raw = FIELD_(raw_event), f_name = FIELD_(name), f_mods = FIELD_(modifiers);
#undef FIELD_
	char buf[256];
	struct pb_field f;
	proto_scratch_reset(im);
	if (pb_find_field(p, n, f_name, &f) == 1 && f.wire == PB_WIRE_LEN && f.len) {
		tp_proto_scratch_add(im, f.data, f.len);
	} else if (pb_find_field(p, n, f_counter, &f) == 1 && f.wire == PB_WIRE_VARINT) {
		const char *c = counter_name(f.val);
		tp_proto_scratch_add(im, c, strlen(c));
	} else if (pb_find_field(p, n, f_tracepoint, &f) == 1 && f.wire == PB_WIRE_LEN) {
		struct pb_field tn;
		if (pb_find_field(f.data, f.len, PB_F_PerfEvents_Tracepoint_name, &tn) == 1 &&
		    tn.wire == PB_WIRE_LEN)
			tp_proto_scratch_add(im, tn.data, tn.len);
	} else if (pb_find_field(p, n, f_raw, &f) == 1 && f.wire == PB_WIRE_LEN) {
		uint64_t v[5] = {0};
		struct pb_reader r;
		struct pb_field rf = {0};
		pb_reader_init_field(&r, &f);
		while (pb_next(&r, &rf))
			if (rf.id >= 1 && rf.id <= 4 && rf.wire == PB_WIRE_VARINT)
				v[rf.id] = rf.val;
		int len = snprintf(buf, sizeof buf,
		                   "raw.0x%" PRIx32 ".0x%" PRIx64 ".0x%" PRIx64 ".0x%" PRIx64,
		                   (uint32_t)v[1], v[2], v[3], v[4]);
		tp_proto_scratch_add(im, buf, (size_t)len);
	} else {
		tp_proto_scratch_add(im, "unknown", 7);
	}
	/* Modifiers, packed or not: u (user), k (kernel), h (hypervisor). */
	size_t base = im->scratch.len;
	struct pb_reader r;
	struct pb_field mf = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &mf)) {
		if (mf.id != f_mods)
			continue;
		struct pb_varints it;
		uint64_t m;
		for (pb_varints_init(&it, &mf); pb_varints_next(&it, &m);) {
			if (m < 1 || m > 3)
				continue;
			if (im->scratch.len == base)
				tp_proto_scratch_add(im, ":", 1);
			tp_proto_scratch_add(im, &"ukh"[m - 1], 1);
		}
	}
	return tp_intern(im->tp, im->scratch.data, im->scratch.len);
}

/* A perf_cpu_counter track of (cpu, session, name), as Perfetto's: dimension
 * args cpu, perf_session_id, name; source arg is_timebase. */
static uint32_t perf_counter_track(struct proto_importer *im, uint32_t cpu, uint32_t session,
                                   uint32_t name, bool is_timebase)
{
	struct tp *tp = im->tp;
	struct tp_track_key key = {.type = "perf_cpu_counter",
	                           .event_type = "counter",
	                           .utid = -1,
	                           .upid = -1,
	                           .cpu = cpu,
	                           .extra_dim = session,
	                           .name = name};
	uint32_t track = tp_track_get(tp, &key);
	struct tp_track_table *t = &tp->t.track;
	if (t->dimension_arg_set_id[track] != TP_NULL_U32)
		return track;
	uint32_t k;
	tp_args_begin(&im->args);
	k = tp_intern_cstr(tp, "cpu");
	tp_args_add_int(&im->args, k, k, cpu);
	k = tp_intern_cstr(tp, "perf_session_id");
	tp_args_add_int(&im->args, k, k, session);
	k = tp_intern_cstr(tp, "name");
	tp_args_add_string(&im->args, k, k, name);
	t->dimension_arg_set_id[track] = tp_args_commit(tp, &im->args);
	tp_args_begin(&im->args);
	k = tp_intern_cstr(tp, "is_timebase");
	tp_args_add_bool(&im->args, k, k, is_timebase);
	t->source_arg_set_id[track] = tp_args_commit(tp, &im->args);
	return track;
}

/* The stream of (seq, cpu): its session (one per sequence, made on its first
 * sample, as Perfetto's PerfSampleTracker) and counter tracks (made on the
 * first sample of each cpu, from the generation's PerfSampleDefaults: the
 * timebase, then each follower; without defaults a legacy producer, whose
 * timebase is the cpu-clock). */
static const struct perf_stream *perf_stream(struct proto_importer *im, const struct proto_ev *ev,
                                             uint32_t cpu)
{
	struct tp *tp = im->tp;
	struct proto_perf *ps = im->perf;
	uint64_t v;
	if (hmap_get(&ps->streams, (uint64_t)ev->seq_id << 32 | cpu, &v))
		return &ps->stream.data[v];
	uint64_t session;
	if (!hmap_get(&ps->sessions, ev->seq_id, &session)) {
		session = tp_profiler_session_new(tp, ps->str_source, 0);
		hmap_put(&ps->sessions, ev->seq_id, session);
	}
	const struct proto_gen *g = ev->gen;
	bool has_defaults = g && g->has_perf_defaults;
	const uint8_t *d = has_defaults ? g->perf_defaults : NULL;
	size_t dn = has_defaults ? g->perf_defaults_len : 0;
	struct pb_field tb = {0};
	uint32_t name;
	const char *unit;
	if (has_defaults) {
		if (pb_find_field(d, dn, PB_F_PerfSampleDefaults_timebase, &tb) != 1 ||
		    tb.wire != PB_WIRE_LEN)
			memset(&tb, 0, sizeof tb);
		name = event_counter_name(im, tb.data, tb.len, false);
		unit = timebase_unit(tb.data, tb.len);
	} else {
		name = tp_intern_cstr(tp, counter_name(1));
		unit = "ns";
	}
	struct tp_profiler_session_table *st = &tp->t.profiler_session;
	if (unit && !st->timebase_unit[session])
		st->timebase_unit[session] = tp_intern_cstr(tp, unit);
	struct perf_stream s = {
	    .session = (uint32_t)session,
	    .timebase = perf_counter_track(im, cpu, (uint32_t)session, name, true),
	    .first_follower = (uint32_t)ps->followers.len,
	};
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, d, dn);
	while (has_defaults && pb_next(&r, &f)) {
		if (f.id != PB_F_PerfSampleDefaults_followers || f.wire != PB_WIRE_LEN)
			continue;
		uint32_t fname = event_counter_name(im, f.data, f.len, true);
		vec_push(&ps->followers,
		         perf_counter_track(im, cpu, (uint32_t)session, fname, false));
		s.n_followers++;
	}
	if (has_defaults) {
		struct pb_field sf;
		if (pb_find_field(d, dn, PB_F_PerfSampleDefaults_process_shard_count, &sf) == 1 &&
		    sf.wire == PB_WIRE_VARINT && sf.val) {
			tp_istat_set(tp, TP_ISTAT_perf_process_shard_count, (int64_t)session,
			             (int64_t)sf.val);
			uint64_t chosen = 0;
			if (pb_find_field(d, dn, PB_F_PerfSampleDefaults_chosen_process_shard,
			                  &sf) == 1 &&
			    sf.wire == PB_WIRE_VARINT)
				chosen = sf.val;
			tp_istat_set(tp, TP_ISTAT_perf_chosen_process_shard, (int64_t)session,
			             (int64_t)chosen);
		}
	}
	hmap_put(&ps->streams, (uint64_t)ev->seq_id << 32 | cpu, ps->stream.len);
	vec_push(&ps->stream, s);
	return vec_last(&ps->stream);
}

/* The interned string iid of field (iid 0 absent: the reserved ""),
 * *found false (and a stat) when unknown. */
static struct proto_interned *interned_string(struct proto_importer *im, const struct proto_gen *g,
                                              uint32_t field, uint64_t iid, struct pb_field *out)
{
	struct proto_interned *e = proto_gen_lookup(g, field, iid);
	memset(out, 0, sizeof *out);
	if (!e) {
		if (iid != 0)
			tp_stat_inc(im->tp, TP_STAT_stackprofile_invalid_string_id);
		return NULL;
	}
	if (pb_find_field(e->data, e->len, PB_F_InternedString_str, out) != 1 ||
	    out->wire != PB_WIRE_LEN)
		memset(out, 0, sizeof *out);
	return e;
}

/* Build ids are stored in hex, except 33-character Breakpad ids (already
 * hex), as Perfetto does. */
static uint32_t build_id_str(struct proto_importer *im, const struct proto_gen *g, uint64_t iid)
{
	struct pb_field f;
	struct proto_interned *e = interned_string(im, g, INTERN_BUILD_IDS, iid, &f);
	if (!e)
		return 0;
	if (e->str != UINT32_MAX)
		return e->str;
	if (f.len == 33) {
		e->str = tp_intern(im->tp, (const char *)f.data, f.len);
		return e->str;
	}
	static const char hex[] = "0123456789abcdef";
	proto_scratch_reset(im);
	for (size_t i = 0; i < f.len; i++) {
		char c[2] = {hex[f.data[i] >> 4], hex[f.data[i] & 15]};
		tp_proto_scratch_add(im, c, 2);
	}
	e->str = tp_intern(im->tp, im->scratch.data ? im->scratch.data : "", im->scratch.len);
	return e->str;
}

static uint32_t mapping_row(struct proto_importer *im, const struct proto_gen *g, uint64_t iid)
{
	struct tp *tp = im->tp;
	struct proto_interned *e = proto_gen_lookup(g, INTERN_MAPPINGS, iid);
	if (!e) {
		tp_stat_inc(tp, TP_STAT_stackprofile_invalid_mapping_id);
		return TP_NULL_U32;
	}
	if (e->str != UINT32_MAX)
		return e->str;
	uint64_t build_id = 0, v[5] = {0}; /* start_offset start end load_bias exact_offset */
	char path[PERF_MAX_PATH];
	size_t plen = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, e->data, e->len);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_Mapping_build_id && f.wire == PB_WIRE_VARINT) {
			build_id = f.val;
		} else if (f.id >= PB_F_Mapping_start_offset && f.id <= PB_F_Mapping_load_bias &&
		           f.wire == PB_WIRE_VARINT) {
			v[f.id - PB_F_Mapping_start_offset] = f.val;
		} else if (f.id == PB_F_Mapping_exact_offset && f.wire == PB_WIRE_VARINT) {
			v[4] = f.val;
		} else if (f.id == PB_F_Mapping_path_string_ids) {
			/* path_string_ids, packed or not: "/" before each. */
			struct pb_varints it;
			uint64_t pid;
			for (pb_varints_init(&it, &f); pb_varints_next(&it, &pid);) {
				struct pb_field s;
				if (!interned_string(im, g, INTERN_MAPPING_PATHS, pid, &s))
					continue;
				if (plen + 1 + s.len >= sizeof path)
					break;
				path[plen++] = '/';
				if (s.len)
					memcpy(path + plen, s.data, s.len);
				plen += s.len;
			}
		}
	}
	struct tp_stack_profile_mapping_table *t = &tp->t.stack_profile_mapping;
	uint32_t n_before = t->n;
	uint32_t row = tp_stack_profile_mapping(tp, &im->perf->sp, tp_intern(tp, path, plen),
	                                        build_id_str(im, g, build_id));
	if (t->n != n_before) {
		t->start_offset[row] = (int64_t)v[0];
		t->start[row] = (int64_t)v[1];
		t->end[row] = (int64_t)v[2];
		t->load_bias[row] = (int64_t)v[3];
		t->exact_offset[row] = (int64_t)v[4];
	}
	e->str = row;
	return row;
}

/* Frame.kind as Perfetto labels it in stack_profile_frame.type. */
static const char *frame_kind(uint64_t kind)
{
	static const char *const kinds[] = {NULL,  "native", "kernel", "interpreted",
	                                    "jit", "gc",     "runtime"};
	return kind < TB_ARRAY_SIZE(kinds) ? kinds[kind] : NULL;
}

/* The frame row of interned Frame iid, as Perfetto's FindOrInsertFrame:
 * an unknown function name or source path fails the frame (and its
 * callstack); a frame without a mapping is a dummy frame of the ""
 * mapping, one per (name, file, line); a frame in a mapping is interned by
 * (mapping, rel_pc, name), with a symbol row of its file and line when it
 * has either. Its kind / kind_str becomes the frame's type. */
static uint32_t frame_row(struct proto_importer *im, const struct proto_gen *g, uint64_t iid)
{
	struct tp *tp = im->tp;
	struct proto_interned *e = proto_gen_lookup(g, INTERN_FRAMES, iid);
	if (!e) {
		tp_stat_inc(tp, TP_STAT_stackprofile_invalid_frame_id);
		return TP_NULL_U32;
	}
	if (e->str != UINT32_MAX)
		return e->str;
	uint64_t fn = 0, mapping = 0, rel_pc = 0, src = 0, kind = 0;
	uint32_t line = TP_NULL_U32, type = 0;
	bool has_src = false, has_kind = false;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, e->data, e->len);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_Frame_kind_str && f.wire == PB_WIRE_LEN) { /* kind_str */
			type = tp_intern(tp, (const char *)f.data, f.len);
			has_kind = false;
			continue;
		}
		if (f.wire != PB_WIRE_VARINT)
			continue;
		if (f.id == PB_F_Frame_function_name_id)
			fn = f.val;
		else if (f.id == PB_F_Frame_mapping_id)
			mapping = f.val;
		else if (f.id == PB_F_Frame_rel_pc)
			rel_pc = f.val;
		else if (f.id == PB_F_Frame_source_path_iid)
			src = f.val, has_src = true;
		else if (f.id == PB_F_Frame_line_number)
			line = (uint32_t)f.val;
		else if (f.id == PB_F_Frame_kind)
			kind = f.val, has_kind = true;
	}
	if (has_kind) /* the oneof's last member wins */
		type = frame_kind(kind) ? tp_intern_cstr(tp, frame_kind(kind)) : 0;
	struct pb_field s;
	uint32_t name = 0, file = 0;
	if (fn) {
		if (!interned_string(im, g, INTERN_FUNCTION_NAMES, fn, &s))
			return TP_NULL_U32;
		name = tp_intern(tp, s.len ? (const char *)s.data : "", s.len);
	}
	if (has_src) {
		if (!interned_string(im, g, INTERN_SOURCE_PATHS, src, &s))
			return TP_NULL_U32;
		file = tp_intern(tp, s.len ? (const char *)s.data : "", s.len);
	}
	uint32_t row;
	if (mapping == 0) {
		row = tp_proto_dummy_frame(im, PROTO_INLINE_INTERNED, name, file, line);
	} else {
		uint32_t m = mapping_row(im, g, mapping);
		if (m == TP_NULL_U32)
			return TP_NULL_U32;
		struct tp_stack_profile_frame_table *ft = &tp->t.stack_profile_frame;
		uint32_t n_before = ft->n;
		row = tp_stack_profile_frame(tp, &im->perf->sp, m, (int64_t)rel_pc, name);
		if (ft->n != n_before && (has_src || line != TP_NULL_U32)) {
			struct tp_stack_profile_symbol_table *st = &tp->t.stack_profile_symbol;
			uint32_t sym = tp_stack_profile_symbol_append(st);
			st->symbol_set_id[sym] = sym;
			st->name[sym] = name;
			st->source_file[sym] = file;
			st->line_number[sym] = line;
			ft->symbol_set_id[row] = sym;
		}
	}
	if (type)
		tp->t.stack_profile_frame.type[row] = type;
	e->str = row;
	return row;
}

struct tp_stack_profile *tp_proto_stack_profile(struct proto_importer *im)
{
	return &perf_state(im)->sp;
}

uint32_t tp_proto_callstack_row(struct proto_importer *im, const struct proto_gen *g, uint64_t iid)
{
	struct tp *tp = im->tp;
	perf_state(im);
	struct proto_interned *e = proto_gen_lookup(g, INTERN_CALLSTACKS, iid);
	if (!e) {
		tp_stat_inc(tp, TP_STAT_stackprofile_invalid_callstack_id);
		return TP_NULL_U32;
	}
	if (e->str != UINT32_MAX)
		return e->str;
	uint32_t parent = TP_NULL_U32, depth = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, e->data, e->len);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_Callstack_frame_ids)
			continue;
		struct pb_varints it;
		uint64_t fid;
		for (pb_varints_init(&it, &f);
		     depth < PERF_MAX_FRAMES && pb_varints_next(&it, &fid);) {
			uint32_t fr = frame_row(im, g, fid);
			if (fr == TP_NULL_U32)
				return TP_NULL_U32;
			parent = tp_stack_profile_callsite(tp, &im->perf->sp, parent, fr);
			depth++;
		}
	}
	e->str = parent;
	return parent;
}

void tp_proto_perf_sample_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                                const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct proto_perf *ps = perf_state(im);
	uint64_t cpu = 0, pid = 0, tid = 0, cs_iid = 0, mode = 0, unwind = 0, lost = 0;
	uint64_t timebase_count = 0;
	bool has_cs = false, has_unwind = false, has_skip = false, has_cpu = false;
	bool has_producer_event = false, has_timebase_count = false;
	uint64_t skip = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_PerfSample_producer_event && f.wire == PB_WIRE_LEN) {
			has_producer_event = true;
			continue;
		}
		if (f.wire != PB_WIRE_VARINT)
			continue;
		switch (f.id) {
		case PB_F_PerfSample_cpu:
			cpu = f.val;
			has_cpu = true;
			break;
		case PB_F_PerfSample_pid:
			pid = f.val;
			break;
		case PB_F_PerfSample_tid:
			tid = f.val;
			break;
		case PB_F_PerfSample_callstack_iid:
			cs_iid = f.val;
			has_cs = true;
			break;
		case PB_F_PerfSample_cpu_mode:
			mode = f.val;
			break;
		case PB_F_PerfSample_timebase_count:
			timebase_count = f.val;
			has_timebase_count = true;
			break;
		case PB_F_PerfSample_unwind_error:
			unwind = f.val;
			has_unwind = true;
			break;
		case PB_F_PerfSample_kernel_records_lost:
			lost = f.val;
			break;
		case PB_F_PerfSample_sample_skipped_reason:
			skip = f.val;
			has_skip = true;
			break;
		default:
			break;
		}
	}
	if (pb_reader_error(&r) || cpu >= TP_MAX_CPUS) {
		tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
		return;
	}
	const struct perf_stream *stream = perf_stream(im, ev, (uint32_t)cpu);
	uint32_t session = stream->session;
	/* Not a sample: the kernel's ring buffer of cpu dropped records. */
	if (lost > 0) {
		int64_t v = 0;
		tp_istat_get(tp, TP_ISTAT_perf_cpu_lost_records, (int64_t)cpu, &v);
		tp_istat_set(tp, TP_ISTAT_perf_cpu_lost_records, (int64_t)cpu, v + (int64_t)lost);
		return;
	}
	if (has_producer_event)
		return;
	/* A sample without its callstack: still a row (its cpu, thread, mode
	 * and counters count); only skips of in-scope samples are worth a
	 * stat. */
	if (has_skip) {
		if (skip == PB_E_PerfSample_SampleSkipReason_PROFILER_SKIP_READ_STAGE ||
		    skip == PB_E_PerfSample_SampleSkipReason_PROFILER_SKIP_UNWIND_STAGE)
			tp_stat_inc(tp, TP_STAT_perf_samples_skipped);
		else if (skip == PB_E_PerfSample_SampleSkipReason_PROFILER_SKIP_UNWIND_ENQUEUE)
			tp_stat_inc(tp, TP_STAT_perf_samples_skipped_dataloss);
	}

	/* The counter values: the timebase's, then the followers' in order. */
	vec_clear(&ps->counters);
	if (has_timebase_count)
		vec_push(&ps->counters, tp_counter_add(tp, stream->timebase, ts,
		                                       (double)timebase_count, TP_NULL_U32));
	pb_reader_init(&r, p, n);
	uint32_t i = 0;
	while (pb_next(&r, &f) && i < stream->n_followers) {
		if (f.id != PB_F_PerfSample_follower_counts)
			continue;
		struct pb_varints it;
		uint64_t v;
		for (pb_varints_init(&it, &f);
		     i < stream->n_followers && pb_varints_next(&it, &v);) {
			uint32_t track = ps->followers.data[stream->first_follower + i++];
			vec_push(&ps->counters,
			         tp_counter_add(tp, track, ts, (double)v, TP_NULL_U32));
		}
	}
	uint32_t counter_set = tp_profiler_counter_set(tp, ps->counters.data, ps->counters.len);

	uint32_t utid = tp_thread_for_tid(tp, (int64_t)(uint32_t)tid, (int64_t)(uint32_t)pid);
	uint32_t upid = tp_process_for_pid(tp, (int64_t)(uint32_t)pid);
	uint32_t cs = has_cs ? tp_proto_callstack_row(im, ev->gen, cs_iid) : TP_NULL_U32;
	uint32_t ucpu = has_cpu ? tp_cpu_for(tp, (uint32_t)cpu) : TP_NULL_U32;
	uint32_t mode_id =
	    mode == 0
	        ? 0
	        : tp_intern_cstr(tp, mode < TB_ARRAY_SIZE(cpu_modes) ? cpu_modes[mode] : "unknown");
	struct tp_profiler_sample s = {
	    .ts = ts,
	    .source = ps->str_source,
	    .task_context = tp_profiler_task_context(tp, upid, utid, TP_NULL_U32),
	    .execution_context = ucpu != TP_NULL_U32 || mode_id
	                             ? tp_profiler_execution_context(tp, ucpu, mode_id)
	                             : TP_NULL_U32,
	    .callsite = cs,
	    .unwind_error = has_unwind ? tp_intern_cstr(tp, unwind < TB_ARRAY_SIZE(unwind_errors)
	                                                        ? unwind_errors[unwind]
	                                                        : "unknown")
	                               : 0,
	    .session = session,
	    .counter_set = counter_set,
	};
	tp_profiler_sample_add(tp, &s);
}
