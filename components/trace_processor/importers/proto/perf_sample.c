/*
 * TracePacket.perf_sample (traced_perf): one perf_sample row per sample,
 * its callstack resolved through the sequence's interned data
 *
 *   callstack_iid -> Callstack{frame_ids, root first}
 *                 -> Frame{function_name_id, mapping_id, rel_pc}
 *                 -> Mapping{build_id, path_string_ids, start, end, ...}
 *
 * into stack_profile_mapping/frame/callsite rows (model/stack_profile.c).
 * Each sequence (one per data source instance) is one perf_session.
 * As Perfetto's ProfileModule: a PerfSample reporting kernel_records_lost
 * adds to perf_cpu_lost_records[cpu] and no row; a skipped sample
 * (sample_skipped_reason) is a row without a callsite, counted in
 * perf_samples_skipped (read / unwind stage) or perf_samples_skipped_dataloss
 * (unwind enqueue); NOT_IN_SCOPE skips are expected and not counted.
 *
 * The interned Mapping/Frame/Callstack entries of a generation cache their
 * resolved row in struct proto_interned.str (these messages have no field 2
 * string, so proto_interned_str never uses it for them).
 */
#include "proto_int.h"

#include <string.h>

#define PERF_MAX_FRAMES 1024 /* frames per callstack */
#define PERF_MAX_PATH 4096   /* mapping path bytes */

/* PerfSample.SampleSkipReason */
enum {
	PERF_SKIP_READ_STAGE = 1,
	PERF_SKIP_UNWIND_STAGE = 2,
	PERF_SKIP_UNWIND_ENQUEUE = 3,
	PERF_SKIP_NOT_IN_SCOPE = 4,
};

static const char *const cpu_modes[] = {"unknown", "kernel", "user",
					"hypervisor", "guest_kernel", "guest_user"};
static const char *const unwind_errors[] = {
	"unknown", "none", "memory_invalid", "unwind_info", "unsupported", "invalid_map",
	"max_frames_exceeded", "repeated_frame", "invalid_elf", "system_call", "thread_timeout",
	"thread_does_not_exist", "bad_arch", "maps_parse", "invalid_parameter", "ptrace_call"};

struct proto_perf {
	struct tp_stack_profile sp;
	struct hmap sessions; /* seq id -> perf_session id */
};

static struct proto_perf *perf_state(struct proto_importer *im)
{
	if (!im->perf) {
		im->perf = tb_calloc(1, sizeof *im->perf);
		tp_stack_profile_init(&im->perf->sp);
		hmap_init(&im->perf->sessions);
	}
	return im->perf;
}

void proto_perf_free(struct proto_importer *im)
{
	if (!im->perf)
		return;
	tp_stack_profile_release(&im->perf->sp);
	hmap_release(&im->perf->sessions);
	tb_free(im->perf);
	im->perf = NULL;
}

/* The interned string iid of field (iid 0 absent: the reserved ""),
 * *found false (and a stat) when unknown. */
static struct proto_interned *interned_string(struct proto_importer *im,
					      const struct proto_gen *g, uint32_t field,
					      uint64_t iid, struct pb_field *out)
{
	struct proto_interned *e = proto_gen_lookup(g, field, iid);
	memset(out, 0, sizeof *out);
	if (!e) {
		if (iid != 0)
			tp_stat_inc(im->tp, TP_STAT_stackprofile_invalid_string_id);
		return NULL;
	}
	if (pb_find_field(e->data, e->len, 2, out) != 1 || out->wire != PB_WIRE_LEN)
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
		proto_scratch_add(im, c, 2);
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
		if (f.id == 2 && f.wire == PB_WIRE_VARINT) {
			build_id = f.val;
		} else if (f.id >= 3 && f.id <= 6 && f.wire == PB_WIRE_VARINT) {
			v[f.id - 3] = f.val;
		} else if (f.id == 8 && f.wire == PB_WIRE_VARINT) {
			v[4] = f.val;
		} else if (f.id == 7) {
			/* path_string_ids, packed or not: "/" before each. */
			struct pb_packed it;
			uint64_t pid;
			bool packed = f.wire == PB_WIRE_LEN;
			if (packed)
				pb_packed_init(&it, f.data, f.len, PB_WIRE_VARINT);
			else if (f.wire != PB_WIRE_VARINT)
				continue;
			for (bool more = packed ? pb_packed_next(&it, &pid) : (pid = f.val, true);
			     more; more = packed && pb_packed_next(&it, &pid)) {
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
	uint64_t fn = 0, mapping = 0, rel_pc = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, e->data, e->len);
	while (pb_next(&r, &f)) {
		if (f.wire != PB_WIRE_VARINT)
			continue;
		if (f.id == 2)
			fn = f.val;
		else if (f.id == 3)
			mapping = f.val;
		else if (f.id == 4)
			rel_pc = f.val;
	}
	uint32_t m = mapping_row(im, g, mapping);
	if (m == TP_NULL_U32)
		return TP_NULL_U32;
	struct pb_field s;
	uint32_t name = 0;
	if (interned_string(im, g, INTERN_FUNCTION_NAMES, fn, &s))
		name = tp_intern(tp, s.len ? (const char *)s.data : "", s.len);
	e->str = tp_stack_profile_frame(tp, &im->perf->sp, m, (int64_t)rel_pc, name);
	return e->str;
}

struct tp_stack_profile *proto_stack_profile(struct proto_importer *im)
{
	return &perf_state(im)->sp;
}

uint32_t proto_callstack_row(struct proto_importer *im, const struct proto_gen *g, uint64_t iid)
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
		if (f.id != 2)
			continue;
		struct pb_packed it;
		uint64_t fid;
		bool packed = f.wire == PB_WIRE_LEN;
		if (packed)
			pb_packed_init(&it, f.data, f.len, PB_WIRE_VARINT);
		else if (f.wire != PB_WIRE_VARINT)
			continue;
		for (bool more = packed ? pb_packed_next(&it, &fid) : (fid = f.val, true);
		     more && depth < PERF_MAX_FRAMES; more = packed && pb_packed_next(&it, &fid)) {
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

void proto_perf_sample_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
			     const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct proto_perf *ps = perf_state(im);
	uint64_t cpu = 0, pid = 0, tid = 0, cs_iid = 0, mode = 0, unwind = 0, lost = 0;
	bool has_cs = false, has_unwind = false, has_skip = false;
	bool has_producer_event = false;
	uint64_t skip = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == 19 && f.wire == PB_WIRE_LEN) {
			has_producer_event = true;
			continue;
		}
		if (f.wire != PB_WIRE_VARINT)
			continue;
		switch (f.id) {
		case 1: cpu = f.val; break;
		case 2: pid = f.val; break;
		case 3: tid = f.val; break;
		case 4: cs_iid = f.val; has_cs = true; break;
		case 5: mode = f.val; break;
		case 16: unwind = f.val; has_unwind = true; break;
		case 17: lost = f.val; break;
		case 18: skip = f.val; has_skip = true; break;
		default: break;
		}
	}
	if (pb_reader_error(&r) || cpu >= TP_MAX_CPUS) {
		tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
		return;
	}
	/* Not a sample: the kernel's ring buffer of cpu dropped records. */
	if (lost > 0) {
		int64_t v = 0;
		tp_istat_get(tp, TP_ISTAT_perf_cpu_lost_records, (int64_t)cpu, &v);
		tp_istat_set(tp, TP_ISTAT_perf_cpu_lost_records, (int64_t)cpu, v + (int64_t)lost);
		return;
	}
	if (has_producer_event)
		return;
	/* A sample without its callstack: still a row (its cpu, thread and
	 * mode count); only skips of in-scope samples are worth a stat. */
	if (has_skip) {
		if (skip == PERF_SKIP_READ_STAGE || skip == PERF_SKIP_UNWIND_STAGE)
			tp_stat_inc(tp, TP_STAT_perf_samples_skipped);
		else if (skip == PERF_SKIP_UNWIND_ENQUEUE)
			tp_stat_inc(tp, TP_STAT_perf_samples_skipped_dataloss);
	}

	uint64_t session;
	if (!hmap_get(&ps->sessions, ev->seq_id, &session)) {
		session = tp_perf_session_new(tp, 0);
		hmap_put(&ps->sessions, ev->seq_id, session);
		if (ev->gen && ev->gen->perf_shard_count) {
			tp_istat_set(tp, TP_ISTAT_perf_process_shard_count, (int64_t)session,
				     ev->gen->perf_shard_count);
			tp_istat_set(tp, TP_ISTAT_perf_chosen_process_shard, (int64_t)session,
				     ev->gen->perf_chosen_shard);
		}
	}
	uint32_t utid = tp_thread_for_tid(tp, (int64_t)(uint32_t)tid, (int64_t)(uint32_t)pid);
	uint32_t cs = has_cs ? proto_callstack_row(im, ev->gen, cs_iid) : TP_NULL_U32;

	struct tp_perf_sample_table *t = &tp->t.perf_sample;
	uint32_t row = tp_perf_sample_append(t);
	t->ts[row] = ts;
	t->utid[row] = utid == TP_NULL_U32 ? TP_NULL_I64 : (int64_t)utid;
	t->cpu[row] = (uint32_t)cpu;
	t->cpu_mode[row] = tp_intern_cstr(tp, mode < TB_ARRAY_SIZE(cpu_modes) ? cpu_modes[mode]
									 : "unknown");
	t->callsite_id[row] = cs == TP_NULL_U32 ? TP_NULL_I64 : (int64_t)cs;
	t->unwind_error[row] =
		has_unwind ? tp_intern_cstr(tp, unwind < TB_ARRAY_SIZE(unwind_errors)
							? unwind_errors[unwind]
							: "unknown")
			   : 0;
	t->perf_session_id[row] = (int64_t)session;
	t->event_name[row] = 0;
	t->comm[row] = 0;
	t->period[row] = TP_NULL_I64;
}
