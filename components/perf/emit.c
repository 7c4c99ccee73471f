/*
 * emit.c: samples as Perfetto's traced_perf writes them (compat §3.6, §3.8).
 *
 * Per sequence (one data source instance's writer):
 *   1. {timestamp (BOOTTIME), timestamp_clock_id=6, sequence_flags=CLEARED,
 *       trace_packet_defaults{timestamp_clock_id=<sample clock>,
 *                             perf_sample_defaults{timebase{...}}}}
 *   2. {interned_data{build_ids{0,""} mapping_paths{0,""} function_names{0,""}},
 *       sequence_flags=NEEDS_INCREMENTAL_STATE}
 *   3. per sample {timestamp, perf_sample{cpu pid tid callstack_iid cpu_mode},
 *       interned_data{what this sample used first}, sequence_flags=NEEDS}
 *      per skipped sample {timestamp, perf_sample{cpu pid tid cpu_mode
 *       sample_skipped_reason}, sequence_flags=NEEDS}
 *      per ring loss {timestamp (BOOTTIME), timestamp_clock_id=6,
 *       perf_sample{cpu kernel_records_lost}, sequence_flags=NEEDS}
 *
 * Everything is interned once per sequence: strings (build ids, path
 * components, function names) by content, mappings, frames and callstacks
 * by the tuple of iids and numbers that define them. A callstack lists its
 * frames root first. Each packet is written as a Trace.packet field
 * (0a len TracePacket) into the caller's pb_writer.
 */
#include <string.h>

#include "perf_int.h"
#include "pb_fields.h"

enum { STR_BUILD_ID, STR_PATH, STR_FUNC };
enum { TUP_MAPPING, TUP_FRAME, TUP_CALLSTACK };
static const uint32_t str_field[3] = {PB_F_InternedData_build_ids, PB_F_InternedData_mapping_paths,
                                      PB_F_InternedData_function_names};

void perf_emitter_init(struct perf_emitter *e, uint32_t clock_id, uint32_t counter,
                       uint64_t frequency, uint64_t period)
{
	memset(e, 0, sizeof *e);
	e->clock_id = clock_id;
	e->counter = counter;
	e->frequency = frequency;
	e->period = period;
	pb_writer_init_growable(&e->scratch);
}

void perf_emitter_release(struct perf_emitter *e)
{
	for (int t = 0; t < 3; t++) {
		for (size_t i = 0; i < e->str_vals[t].len; i++)
			tb_free(e->str_vals[t].data[i]);
		vec_release(&e->str_vals[t]);
		hmap_release(&e->strs[t]);
		hmap_release(&e->tuples[t]);
	}
	vec_release(&e->keys);
	pb_writer_release(&e->scratch);
}

/* ---- interning ---------------------------------------------------------- */

struct str_key {
	const struct perf_emitter *e;
	int table;
	const void *p;
	uint32_t n;
};

static bool str_eq(const void *ctx, uint64_t key)
{
	const struct str_key *k = ctx;
	const uint8_t *v = k->e->str_vals[k->table].data[key];
	uint32_t n;
	memcpy(&n, v, 4);
	return n == k->n && memcmp(v + 4, k->p, n) == 0;
}

/* The iid of a string (0 for the empty one), adding it to the packet's
 * interned data when new. */
static uint64_t intern_str(struct perf_emitter *e, int table, const void *p, size_t n)
{
	struct str_key k = {e, table, p, (uint32_t)n};
	uint64_t h;
	size_t slot;
	uint8_t *v;
	if (n == 0)
		return 0;
	if (n > 4096)
		k.n = 4096, n = 4096; /* a bounded name is still a name */
	h = tb_hash_bytes(p, n, (uint64_t)table);
	slot = hmap_lookup(&e->strs[table], h, str_eq, &k);
	if (slot != HMAP_END)
		return e->strs[table].slots[slot].val;
	v = tb_malloc(4 + n);
	memcpy(v, &k.n, 4);
	memcpy(v + 4, p, n);
	vec_push(&e->str_vals[table], v);
	uint64_t iid = e->str_vals[table].len;
	hmap_insert(&e->strs[table], h, iid - 1, iid);
	unsigned m = pb_begin_nested(&e->scratch, str_field[table]);
	pb_put_uint64(&e->scratch, PB_F_InternedString_iid, iid);
	pb_put_bytes(&e->scratch, PB_F_InternedString_str, p, n);
	pb_end_nested(&e->scratch, m);
	return iid;
}

struct tup_key {
	const struct perf_emitter *e;
	uint64_t kind;
	const uint64_t *v;
	size_t n;
};

static bool tup_eq(const void *ctx, uint64_t key)
{
	const struct tup_key *k = ctx;
	const uint64_t *s = k->e->keys.data + key;
	return s[0] == k->kind && s[1] == k->n && memcmp(s + 2, k->v, k->n * 8) == 0;
}

/* Look up a tuple; returns its iid or 0 with *slot_key set to where a new
 * one would go (call tup_add to add it). */
static uint64_t tup_find(struct perf_emitter *e, int kind, const uint64_t *v, size_t n,
                         uint64_t *hash)
{
	struct tup_key k = {e, (uint64_t)kind, v, n};
	size_t slot;
	*hash = tb_hash_bytes(v, n * 8, (uint64_t)kind + 7);
	slot = hmap_lookup(&e->tuples[kind], *hash, tup_eq, &k);
	return slot == HMAP_END ? 0 : e->tuples[kind].slots[slot].val;
}

static uint64_t tup_add(struct perf_emitter *e, int kind, const uint64_t *v, size_t n,
                        uint64_t hash)
{
	uint64_t off = e->keys.len;
	vec_reserve(&e->keys, n + 2);
	e->keys.data[e->keys.len++] = (uint64_t)kind;
	e->keys.data[e->keys.len++] = n;
	memcpy(e->keys.data + e->keys.len, v, n * 8);
	e->keys.len += n;
	uint64_t iid = ++e->next_iid[kind];
	hmap_insert(&e->tuples[kind], hash, off, iid);
	return iid;
}

/* Path components as Perfetto interns them: split on '/', empties dropped. */
static size_t intern_path(struct perf_emitter *e, const char *path, uint64_t *ids, size_t cap)
{
	size_t n = 0;
	const char *p = path;
	while (*p && n < cap) {
		size_t len = strcspn(p, "/");
		if (len)
			ids[n++] = intern_str(e, STR_PATH, p, len);
		p += len;
		if (*p == '/')
			p++;
	}
	return n;
}

#define MAX_PATH_PARTS 64

static uint64_t intern_mapping(struct perf_emitter *e, const struct perf_frame *f)
{
	uint64_t key[5 + MAX_PATH_PARTS], h, iid;
	size_t n;
	key[0] = intern_str(e, STR_BUILD_ID, f->build_id, f->build_id ? f->build_id_len : 0);
	key[1] = f->map_offset;
	key[2] = f->map_start;
	key[3] = f->map_end;
	key[4] = f->load_bias;
	n = 5 + intern_path(e, f->mapping_path ? f->mapping_path : "", key + 5, MAX_PATH_PARTS);
	if ((iid = tup_find(e, TUP_MAPPING, key, n, &h)))
		return iid;
	iid = tup_add(e, TUP_MAPPING, key, n, h);
	struct pb_writer *w = &e->scratch;
	unsigned m = pb_begin_nested(w, PB_F_InternedData_mappings);
	pb_put_uint64(w, PB_F_Mapping_iid, iid);
	pb_put_uint64(w, PB_F_Mapping_build_id, key[0]);
	pb_put_uint64(w, PB_F_Mapping_start_offset,
	              0); /* start_offset: the ELF starts at file offset 0 */
	pb_put_uint64(w, PB_F_Mapping_start, f->map_start);
	pb_put_uint64(w, PB_F_Mapping_end, f->map_end);
	pb_put_uint64(w, PB_F_Mapping_load_bias, f->load_bias);
	/* repeated, not [packed] in profile_common.proto: one varint each
	 * (Perfetto's decoders read no packed form) */
	for (size_t i = 5; i < n; i++)
		pb_put_uint64(w, PB_F_Mapping_path_string_ids, key[i]);
	pb_put_uint64(w, PB_F_Mapping_exact_offset, f->map_offset);
	pb_end_nested(w, m);
	return iid;
}

static uint64_t intern_frame(struct perf_emitter *e, const struct perf_frame *f)
{
	uint64_t key[3], h, iid;
	const char *fn = f->function_name ? f->function_name : "";
	key[0] = intern_str(e, STR_FUNC, fn, strlen(fn));
	key[1] = intern_mapping(e, f);
	key[2] = f->rel_pc;
	if ((iid = tup_find(e, TUP_FRAME, key, 3, &h)))
		return iid;
	iid = tup_add(e, TUP_FRAME, key, 3, h);
	unsigned m = pb_begin_nested(&e->scratch, PB_F_InternedData_frames);
	pb_put_uint64(&e->scratch, PB_F_Frame_iid, iid);
	pb_put_uint64(&e->scratch, PB_F_Frame_function_name_id, key[0]);
	pb_put_uint64(&e->scratch, PB_F_Frame_mapping_id, key[1]);
	pb_put_uint64(&e->scratch, PB_F_Frame_rel_pc, key[2]);
	pb_end_nested(&e->scratch, m);
	return iid;
}

/* ---- packets -------------------------------------------------------------- */

static uint32_t perf_clock_of(uint32_t builtin)
{
	switch (builtin) {
	case PB_E_BuiltinClock_BUILTIN_CLOCK_REALTIME:
		return PERF_CLOCK_REALTIME;
	case PB_E_BuiltinClock_BUILTIN_CLOCK_MONOTONIC:
		return PERF_CLOCK_MONOTONIC;
	case PB_E_BuiltinClock_BUILTIN_CLOCK_BOOTTIME:
		return PERF_CLOCK_BOOTTIME;
	default:
		return PERF_CLOCK_MONOTONIC_RAW;
	}
}

void perf_emit_start(struct perf_emitter *e, struct pb_writer *w, uint64_t boot_ts)
{
	unsigned pkt = pb_begin_nested(w, PB_F_Trace_packet), d, psd, tb;
	pb_put_uint64(w, PB_F_TracePacket_timestamp, boot_ts);
	pb_put_uint32(w, PB_F_TracePacket_timestamp_clock_id,
	              PB_E_BuiltinClock_BUILTIN_CLOCK_BOOTTIME);
	pb_put_uint32(w, PB_F_TracePacket_sequence_flags,
	              PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED);
	d = pb_begin_nested(w, PB_F_TracePacket_trace_packet_defaults);
	pb_put_uint32(w, PB_F_TracePacketDefaults_timestamp_clock_id, e->clock_id);
	psd = pb_begin_nested(w, PB_F_TracePacketDefaults_perf_sample_defaults);
	tb = pb_begin_nested(w, PB_F_PerfSampleDefaults_timebase);
	if (e->period)
		pb_put_uint64(w, PB_F_PerfEvents_Timebase_period, e->period);
	else
		pb_put_uint64(w, PB_F_PerfEvents_Timebase_frequency, e->frequency);
	pb_put_uint32(w, PB_F_PerfEvents_Timebase_counter,
	              e->counter ? e->counter : PERF_COUNTER_SW_CPU_CLOCK);
	pb_put_uint32(w, PB_F_PerfEvents_Timebase_timestamp_clock, perf_clock_of(e->clock_id));
	pb_end_nested(w, tb);
	if (e->shard_count) {
		pb_put_uint32(w, PB_F_PerfSampleDefaults_process_shard_count, e->shard_count);
		pb_put_uint32(w, PB_F_PerfSampleDefaults_chosen_process_shard, e->chosen_shard);
	}
	pb_end_nested(w, psd);
	pb_end_nested(w, d);
	pb_end_nested(w, pkt);

	pkt = pb_begin_nested(w, PB_F_Trace_packet);
	d = pb_begin_nested(w, PB_F_TracePacket_interned_data);
	for (int t = 0; t < 3; t++) {
		unsigned m = pb_begin_nested(w, str_field[t]);
		pb_put_uint64(w, PB_F_InternedString_iid, 0);
		pb_put_bytes(w, PB_F_InternedString_str, "", 0);
		pb_end_nested(w, m);
	}
	pb_end_nested(w, d);
	pb_put_uint32(w, PB_F_TracePacket_sequence_flags,
	              PB_E_TracePacket_SequenceFlags_SEQ_NEEDS_INCREMENTAL_STATE);
	pb_end_nested(w, pkt);
	e->started = true;
}

void perf_emit_sample(struct perf_emitter *e, struct pb_writer *w, uint64_t ts, uint32_t cpu,
                      uint32_t pid, uint32_t tid, uint32_t cpu_mode,
                      const struct perf_frame *frames, size_t n_frames)
{
	perf_emit_sample_unwound(e, w, ts, cpu, pid, tid, cpu_mode, frames, n_frames, 0);
}

void perf_emit_sample_unwound(struct perf_emitter *e, struct pb_writer *w, uint64_t ts,
                              uint32_t cpu, uint32_t pid, uint32_t tid, uint32_t cpu_mode,
                              const struct perf_frame *frames, size_t n_frames,
                              uint32_t unwind_error)
{
	uint64_t ids[2 * PERF_MAX_FRAMES], h, cs = 0;
	size_t n = n_frames < TB_ARRAY_SIZE(ids) ? n_frames : TB_ARRAY_SIZE(ids);
	unsigned pkt, ps;

	TB_DCHECK(e->started);
	pb_writer_reset(&e->scratch);
	/* frames arrive leaf first; callstacks list the root first */
	for (size_t i = 0; i < n; i++)
		ids[i] = intern_frame(e, &frames[n - 1 - i]);
	if (n) {
		if (!(cs = tup_find(e, TUP_CALLSTACK, ids, n, &h))) {
			cs = tup_add(e, TUP_CALLSTACK, ids, n, h);
			unsigned m = pb_begin_nested(&e->scratch, PB_F_InternedData_callstacks);
			pb_put_uint64(&e->scratch, PB_F_Callstack_iid, cs);
			for (size_t i = 0; i < n; i++) /* not [packed], as above */
				pb_put_uint64(&e->scratch, PB_F_Callstack_frame_ids, ids[i]);
			pb_end_nested(&e->scratch, m);
		}
	}
	pkt = pb_begin_nested(w, PB_F_Trace_packet);
	pb_put_uint64(w, PB_F_TracePacket_timestamp, ts);
	ps = pb_begin_nested(w, PB_F_TracePacket_perf_sample);
	pb_put_uint32(w, PB_F_PerfSample_cpu, cpu);
	pb_put_uint32(w, PB_F_PerfSample_pid, pid);
	pb_put_uint32(w, PB_F_PerfSample_tid, tid);
	if (cs)
		pb_put_uint64(w, PB_F_PerfSample_callstack_iid, cs);
	pb_put_uint32(w, PB_F_PerfSample_cpu_mode, cpu_mode);
	if (unwind_error)
		pb_put_uint32(w, PB_F_PerfSample_unwind_error, unwind_error);
	pb_end_nested(w, ps);
	if (pb_writer_size(&e->scratch))
		pb_put_bytes(w, PB_F_TracePacket_interned_data, pb_writer_data(&e->scratch),
		             pb_writer_size(&e->scratch));
	pb_put_uint32(w, PB_F_TracePacket_sequence_flags,
	              PB_E_TracePacket_SequenceFlags_SEQ_NEEDS_INCREMENTAL_STATE);
	pb_end_nested(w, pkt);
}

void perf_emit_lost(struct perf_emitter *e, struct pb_writer *w, uint64_t boot_ts, uint32_t cpu,
                    uint64_t lost)
{
	unsigned pkt = pb_begin_nested(w, PB_F_Trace_packet), ps;
	(void)e;
	pb_put_uint64(w, PB_F_TracePacket_timestamp, boot_ts);
	pb_put_uint32(w, PB_F_TracePacket_timestamp_clock_id,
	              PB_E_BuiltinClock_BUILTIN_CLOCK_BOOTTIME);
	ps = pb_begin_nested(w, PB_F_TracePacket_perf_sample);
	pb_put_uint32(w, PB_F_PerfSample_cpu, cpu);
	pb_put_uint64(w, PB_F_PerfSample_kernel_records_lost, lost);
	pb_end_nested(w, ps);
	pb_put_uint32(w, PB_F_TracePacket_sequence_flags,
	              PB_E_TracePacket_SequenceFlags_SEQ_NEEDS_INCREMENTAL_STATE);
	pb_end_nested(w, pkt);
}

void perf_emit_skipped(struct perf_emitter *e, struct pb_writer *w, uint64_t ts, uint32_t cpu,
                       uint32_t pid, uint32_t tid, uint32_t cpu_mode, uint32_t reason)
{
	unsigned pkt = pb_begin_nested(w, PB_F_Trace_packet), ps;
	(void)e;
	pb_put_uint64(w, PB_F_TracePacket_timestamp, ts);
	ps = pb_begin_nested(w, PB_F_TracePacket_perf_sample);
	pb_put_uint32(w, PB_F_PerfSample_cpu, cpu);
	pb_put_uint32(w, PB_F_PerfSample_pid, pid);
	pb_put_uint32(w, PB_F_PerfSample_tid, tid);
	pb_put_uint32(w, PB_F_PerfSample_cpu_mode, cpu_mode);
	pb_put_uint32(w, PB_F_PerfSample_sample_skipped_reason, reason);
	pb_end_nested(w, ps);
	pb_put_uint32(w, PB_F_TracePacket_sequence_flags,
	              PB_E_TracePacket_SequenceFlags_SEQ_NEEDS_INCREMENTAL_STATE);
	pb_end_nested(w, pkt);
}

void perf_emit_process_tree(struct perf_emitter *e, struct pb_writer *w, uint64_t ts,
                            const struct perf_pt_process *proc, const struct perf_pt_thread *thr)
{
	unsigned pkt, tree, m;
	(void)e;
	if (!proc && !thr)
		return;
	pkt = pb_begin_nested(w, PB_F_Trace_packet);
	pb_put_uint64(w, PB_F_TracePacket_timestamp, ts);
	tree = pb_begin_nested(w, PB_F_TracePacket_process_tree);
	if (proc) {
		m = pb_begin_nested(w, PB_F_ProcessTree_processes);
		pb_put_int32(w, PB_F_ProcessTree_Process_pid, (int32_t)proc->pid);
		pb_put_int32(w, PB_F_ProcessTree_Process_ppid, (int32_t)proc->ppid);
		/* argv: NUL-separated, the last one may lack its NUL */
		for (size_t off = 0; off < proc->cmdline_len;) {
			const char *a = proc->cmdline + off;
			size_t n = strnlen(a, proc->cmdline_len - off);
			pb_put_bytes(w, PB_F_ProcessTree_Process_cmdline, a, n);
			off += n + 1;
		}
		if (proc->cmdline_is_comm)
			pb_put_uint32(w, PB_F_ProcessTree_Process_cmdline_is_comm, 1);
		pb_end_nested(w, m);
	}
	if (thr) {
		m = pb_begin_nested(w, PB_F_ProcessTree_threads);
		pb_put_int32(w, PB_F_ProcessTree_Thread_tid, (int32_t)thr->tid);
		if (thr->name && thr->name[0])
			pb_put_bytes(w, PB_F_ProcessTree_Thread_name, thr->name, strlen(thr->name));
		pb_put_int32(w, PB_F_ProcessTree_Thread_tgid, (int32_t)thr->tgid);
		pb_end_nested(w, m);
	}
	pb_end_nested(w, tree);
	pb_end_nested(w, pkt);
}

/* ---- resolving pcs to frames ---------------------------------------------- */

size_t perf_resolve_frames(const struct perf_record *rec, const struct perf_maps *maps,
                           const struct ksyms *ksyms, struct perf_frame *out)
{
	size_t n = 0;
	for (size_t i = 0; i < rec->n_kernel && n < 2 * PERF_MAX_FRAMES; i++) {
		struct perf_frame *f = &out[n++];
		memset(f, 0, sizeof *f);
		f->mapping_path = PERF_KERNEL_MAPPING_NAME;
		f->rel_pc = rec->kernel_ips[i];
		f->function_name = ksyms ? ksyms_lookup(ksyms, rec->kernel_ips[i]) : NULL;
	}
	for (size_t i = 0; i < rec->n_user && n < 2 * PERF_MAX_FRAMES; i++) {
		uint64_t pc = rec->user_ips[i];
		const struct perf_mapping *m = maps ? perf_maps_find(maps, pc) : NULL;
		struct perf_frame *f = &out[n++];
		memset(f, 0, sizeof *f);
		f->mapping_path = "";
		f->rel_pc = pc;
		if (!m)
			continue;
		f->mapping_path = m->path;
		f->map_start = m->start;
		f->map_end = m->end;
		f->map_offset = m->offset;
		if (m->elf.is_elf) {
			f->load_bias = m->elf.load_bias;
			f->build_id = m->elf.build_id;
			f->build_id_len = m->elf.build_id_len;
		}
		f->rel_pc = perf_rel_pc(pc, m->start, m->offset, f->load_bias);
	}
	return n;
}
