/*
 * One TracePacket at tokenize time, in trace order: sequence flags and
 * incremental state, TracePacketDefaults, interned data, clock snapshots,
 * the packet timestamp (converted to the trace clock), then the payload:
 * events that must be ordered (track events, descriptors, process trees)
 * go to the sorter; compressed_packets are inflated and tokenized in place;
 * metadata-only packets (system_info, trace_uuid, service events) are
 * applied at once.
 */
#include "proto_int.h"
#include "../../sorter/sorter.h"

#include <stdio.h>
#include <string.h>

#include "../../io/io.h"
#include "pb_fields.h"

void tp_proto_scratch_add(struct proto_importer *im, const void *p, size_t n)
{
	vec_reserve(&im->scratch, n);
	memcpy(im->scratch.data + im->scratch.len, p, n);
	im->scratch.len += n;
}

struct proto_ev *tp_proto_push(struct proto_importer *im, int64_t ts, enum proto_ev_kind kind,
                               struct proto_gen *gen, const struct proto_seq *seq, const uint8_t *p,
                               size_t n)
{
	return tp_proto_push_extra(im, ts, kind, gen, seq, p, n, NULL, 0);
}

struct proto_ev *tp_proto_push_extra(struct proto_importer *im, int64_t ts, enum proto_ev_kind kind,
                                     struct proto_gen *gen, const struct proto_seq *seq,
                                     const uint8_t *p, size_t n, const void *extra,
                                     size_t extra_len)
{
	return tp_proto_push_src(im, seq ? seq->src : 0, ts, kind, gen, seq, p, n, extra,
	                         extra_len);
}

struct proto_ev *tp_proto_push_src(struct proto_importer *im, uint32_t src, int64_t ts,
                                   enum proto_ev_kind kind, struct proto_gen *gen,
                                   const struct proto_seq *seq, const uint8_t *p, size_t n,
                                   const void *extra, size_t extra_len)
{
	struct proto_ev h = {
	    .gen = gen,
	    .kind = kind | im->tag,
	    .len = (uint32_t)n,
	    .seq_id = seq ? seq->id : 0,
	    .pid = seq ? seq->pid : -1,
	    .tid = seq ? seq->tid : -1,
	    .thread_ts = TP_NULL_I64,
	    .thread_instr = TP_NULL_I64,
	    .counter_value = NAN,
	};
	uint8_t *dst = tp_sorter_push_src(im->tp->sorter, src, ts, NULL, sizeof h + n + extra_len);
	if (!dst)
		return NULL;
	memcpy(dst, &h, sizeof h);
	if (n)
		memcpy(dst + sizeof h, p, n);
	if (extra_len && extra) /* no extra: the caller fills it */
		memcpy(dst + sizeof h + n, extra, extra_len);
	tp_proto_gen_ref(gen);
	return (struct proto_ev *)(void *)dst;
}

/* A ThreadDescriptor (legacy packet or a thread TrackDescriptor's): the
 * sequence's pid/tid and the bases of legacy delta timestamps. */
static void seq_thread(struct proto_seq *seq, const uint8_t *p, size_t n)
{
	struct pb_reader tr;
	struct pb_field tf = {0};
	pb_reader_init(&tr, p, n);
	while (pb_next(&tr, &tf)) {
		if (tf.wire != PB_WIRE_VARINT)
			continue;
		if (tf.id == PB_F_ThreadDescriptor_pid)
			seq->pid = (int32_t)tf.val;
		else if (tf.id == PB_F_ThreadDescriptor_tid)
			seq->tid = (int64_t)tf.val;
		else if (tf.id == PB_F_ThreadDescriptor_reference_timestamp_us)
			seq->ref_ts_ns = proto_sat_mul_1000((int64_t)tf.val);
		else if (tf.id == PB_F_ThreadDescriptor_reference_thread_time_us)
			seq->ref_thread_ns = (int64_t)(tf.val * 1000);
		else if (tf.id == PB_F_ThreadDescriptor_reference_thread_instruction_count)
			seq->ref_instr = (int64_t)tf.val;
	}
}

/* The fields of a TracePacket the tokenizer looks at. */
struct pkt {
	bool has_ts, has_clock;
	uint64_t ts;
	uint32_t clock_id, seq_id, flags;
	bool cleared, first_on_seq;
	uint32_t dropped;    /* previous_packet_dropped: DATA_LOSS_* reasons, or 1 */
	uint64_t machine_id; /* 0: the host */
	bool sync_marker;
	/* for --analyze-trace-proto-content: a track_event; a field that
	 * keeps Perfetto's reader from analysing the packet */
	bool has_track_event, not_analysed;
	struct pb_field defaults, interned, snapshot, payload;
	bool has_defaults, has_snapshot, has_payload;
	unsigned n_interned;
};

static void compressed(struct proto_importer *im, const uint8_t *p, size_t n)
{
	uint8_t *out = NULL;
	size_t out_len = 0;
	if (im->depth >= PROTO_MAX_COMPRESSED_DEPTH ||
	    tp_zlib_inflate(p, n, PROTO_MAX_INFLATED, &out, &out_len) != 0) {
		tp_stat_inc(im->tp, TP_STAT_compressed_packets_failure);
		tb_free(out);
		return;
	}
	bool was_failed = im->failed;
	im->depth++;
	tp_proto_tokenize(im, out, out_len, false);
	im->depth--;
	if (!was_failed && im->failed) {
		/* A bad inner stream loses that payload, not the trace. */
		im->failed = false;
		tp_stat_inc(im->tp, TP_STAT_compressed_packets_failure);
	}
	tb_free(out);
}

/* The packet's timestamp on the trace clock (its clock: its own, the
 * defaults', else BOOTTIME); false (counted) when it cannot be converted. */
static inline bool packet_ts(struct proto_importer *im, const struct proto_seq *seq, bool has_clock,
                             uint32_t clock_id, uint64_t raw, int64_t *ts)
{
	uint32_t clock = has_clock                        ? clock_id
	                 : seq->gen && seq->gen->clock_id ? seq->gen->clock_id
	                                                  : PROTO_CLOCK_BOOTTIME;
	if (!tp_proto_clocks_to_trace(im->clocks, seq->id, clock, raw, ts)) {
		tp_stat_inc(im->tp, TP_STAT_clock_sync_failure);
		return false;
	}
	if (*ts > im->last_ts)
		im->last_ts = *ts;
	return true;
}

/*
 * Most packets of a TrackEvent trace have one shape: timestamp (and maybe
 * its clock), sequence id and flags, trusted uid/pid, and a plain
 * TrackEvent. fast_packet() decodes that shape in one pass over the bytes
 * and handles it exactly as tp_proto_packet() would. For anything else it
 * returns false having changed nothing, and the general path takes over.
 */
static bool fast_packet(struct proto_importer *im, const uint8_t *p, size_t n)
{
	const uint8_t *end = p + n, *te = NULL;
	uint64_t ts = 0, seq_id = 0, flags = 0, clock_id = 0, te_len = 0;
	bool has_ts = false, has_clock = false;
	while (p < end) {
		uint64_t tag, v;
		if (!(p = pb_read_varint(p, end, &tag)) || !(p = pb_read_varint_short(p, end, &v)))
			return false;
		switch (tag) {
		case PKT_TIMESTAMP << 3 | PB_WIRE_VARINT:
			has_ts = true;
			ts = v;
			break;
		case PKT_SEQ_ID << 3 | PB_WIRE_VARINT:
			seq_id = v;
			break;
		case PKT_SEQUENCE_FLAGS << 3 | PB_WIRE_VARINT:
			flags = v;
			break;
		case PKT_TIMESTAMP_CLOCK_ID << 3 | PB_WIRE_VARINT:
			has_clock = true;
			clock_id = v;
			break;
		case PKT_TRUSTED_UID << 3 | PB_WIRE_VARINT:
		case PKT_TRUSTED_PID << 3 | PB_WIRE_VARINT:
			break;
		case PKT_TRACK_EVENT << 3 | PB_WIRE_LEN:
			if (te || v > (uint64_t)(end - p))
				return false;
			te = p;
			te_len = v;
			p += v;
			break;
		default:
			return false;
		}
	}
	struct proto_te_plain pl;
	if (!te || !has_ts || (flags & SEQ_INCREMENTAL_STATE_CLEARED) ||
	    !tp_proto_te_decode_plain(te, (size_t)te_len, &pl))
		return false;

	struct proto_seq *seq = proto_seq_get(im, (uint32_t)seq_id);
	if ((flags & SEQ_NEEDS_INCREMENTAL_STATE) && !seq->valid) {
		tp_stat_inc(im->tp, TP_STAT_packet_skipped_seq_needs_incremental_state_invalid);
		return true;
	}
	int64_t t;
	if (!packet_ts(im, seq, has_clock, (uint32_t)clock_id, ts, &t))
		return true;
	if (t < 0) {
		tp_stat_inc(im->tp, TP_STAT_track_event_invalid_timestamp);
		return true;
	}
	/* Built in place; a late event (no slot) still resolves its names,
	 * for the same stats as the general path. */
	struct proto_te_rec late, *rec;
	rec = tp_sorter_push_src(im->tp->sorter, seq->src, t, NULL, sizeof *rec);
	tp_proto_te_plain_record(im, seq, &pl, rec ? rec : &late);
	return true;
}

/* The sorter event of a packet misc_packets.c parses. */
static enum proto_ev_kind misc_kind(uint32_t field)
{
	switch (field) {
	case PKT_TRIGGER:
		return EV_TRIGGER;
	case PKT_CLONE_SNAPSHOT_TRIGGER:
		return EV_CLONE_SNAPSHOT_TRIGGER;
	case PKT_CHROME_TRIGGER:
		return EV_CHROME_TRIGGER;
	case PKT_INITIAL_DISPLAY_STATE:
		return EV_INITIAL_DISPLAY_STATE;
	default:
		return EV_SESSION_EVENT;
	}
}

void tp_proto_packet(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	/* Between two packets the sorter may have parsed another machine's
	 * events. */
	tp_machine_use(tp, im->machine);
	bool analyze = im->root->content != NULL;
	if (!analyze && fast_packet(im, p, n)) {
		im->host_used = true; /* no machine_id: the fast path has none */
		return;
	}
	struct pkt k;
	memset(&k, 0, sizeof k);
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		switch (f.id) {
		case PKT_TIMESTAMP:
			k.has_ts = true;
			k.ts = f.val;
			break;
		case PKT_TIMESTAMP_CLOCK_ID:
			k.has_clock = true;
			k.clock_id = (uint32_t)f.val;
			break;
		case PKT_SEQ_ID:
			k.seq_id = (uint32_t)f.val;
			break;
		case PKT_SEQUENCE_FLAGS:
			k.flags = (uint32_t)f.val;
			break;
		case PKT_INCREMENTAL_STATE_CLEARED:
			k.cleared = f.val != 0;
			break;
		case PKT_PREVIOUS_PACKET_DROPPED:
			k.dropped = (uint32_t)f.val;
			break;
		case PKT_FIRST_PACKET_ON_SEQUENCE:
			k.first_on_seq = f.val != 0;
			break;
		case PKT_MACHINE_ID:
			k.machine_id = (uint32_t)f.val;
			break;
		case PKT_SYNCHRONIZATION_MARKER:
			k.sync_marker = true;
			break;
		case PKT_DEFAULTS:
			k.defaults = f;
			k.has_defaults = f.wire == PB_WIRE_LEN;
			break;
		case PKT_INTERNED_DATA:
			k.interned = f;
			k.n_interned += f.wire == PB_WIRE_LEN;
			break;
		case PKT_REMOTE_CLOCK_SYNC:
		case PKT_EXTENSION_DESCRIPTOR:
			k.not_analysed = true;
			break;
		case PKT_CLOCK_SNAPSHOT:
			k.not_analysed = true;
			k.snapshot = f;
			k.has_snapshot = f.wire == PB_WIRE_LEN;
			break;
		case PKT_FTRACE_EVENTS:
		case PKT_PROCESS_TREE:
		case PKT_SYS_STATS:
		case PKT_PROCESS_STATS:
		case PKT_TRACK_EVENT:
		case PKT_TRACE_CONFIG:
		case PKT_TRACE_STATS:
		case PKT_FTRACE_STATS:
		case PKT_PROCESS_DESCRIPTOR:
		case PKT_THREAD_DESCRIPTOR:
		case PKT_SYSTEM_INFO:
		case PKT_PACKAGES_LIST:
		case PKT_USER_LIST:
		case PKT_COMPRESSED_PACKETS:
		case PKT_TRACK_DESCRIPTOR:
		case PKT_SERVICE_EVENT:
		case PKT_TRACE_UUID:
		case PKT_TRACE_ATTRIBUTES:
		case PKT_TRACK_EVENT_RANGE_OF_INTEREST:
		case PKT_PERF_SAMPLE:
		case PKT_STACK_SAMPLE:
		case PKT_STREAMING_PROFILE:
		case PKT_MODULE_SYMBOLS:
		case PKT_CPU_INFO:
		case PKT_INTERRUPT_INFO:
		case PKT_TRIGGER:
		case PKT_CHROME_METADATA:
		case PKT_INITIAL_DISPLAY_STATE:
		case PKT_CHROME_TRIGGER:
		case PKT_CLONE_SNAPSHOT_TRIGGER:
		case PKT_CONCURRENT_SESSION_EVENT:
		case PKT_GENERIC_KERNEL_TASK_STATE:
		case PKT_GENERIC_KERNEL_CPU_FREQ:
		case PKT_GENERIC_KERNEL_TASK_RENAME:
		case PKT_GENERIC_KERNEL_PROCESS_TREE:
		case PKT_JOURNALD_EVENT:
			if (f.wire == PB_WIRE_LEN) {
				k.payload = f;
				k.has_payload = true;
			}
			break;
		default:
			break;
		}
		k.has_track_event |= f.id == PKT_TRACK_EVENT;
		k.not_analysed |= f.id == PKT_SERVICE_EVENT;
	}
	if (pb_reader_error(&r)) {
		tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
		return;
	}
	if (k.has_payload && k.payload.id == PKT_COMPRESSED_PACKETS) {
		/* The inner packets carry their own machine ids. */
		compressed(im, k.payload.data, k.payload.len);
		return;
	}
	if (im->root == im) {
		if (k.machine_id) {
			struct proto_importer *m = tp_proto_machine_importer(im, k.machine_id);
			if (!m) {
				tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
				return;
			}
			if (m != im) {
				tp_proto_packet(m, p, n);
				return;
			}
		} else if (!k.sync_marker) {
			im->host_used = true;
		}
	}

	struct proto_seq *seq = proto_seq_get(im, k.seq_id);
	proto_seq_note_loss(seq, k.dropped);
	if (k.first_on_seq)
		hmap_put(&im->first_packet_seqs, k.seq_id, 1);
	if ((k.flags & SEQ_INCREMENTAL_STATE_CLEARED) || k.cleared) {
		tp_proto_seq_new_gen(im, seq, false);
		seq->valid = true;
	} else if (k.dropped) {
		seq->valid = false;
	}
	if (k.has_defaults)
		tp_proto_seq_set_defaults(im, seq, k.defaults.data, k.defaults.len);
	if (k.n_interned == 1) {
		tp_proto_seq_add_interned(im, seq, k.interned.data, k.interned.len);
	} else if (k.n_interned > 1) {
		/* Repeated occurrences of a message field merge. */
		pb_reader_init(&r, p, n);
		while (pb_next(&r, &f))
			if (f.id == PKT_INTERNED_DATA && f.wire == PB_WIRE_LEN)
				tp_proto_seq_add_interned(im, seq, f.data, f.len);
	}
	seq->loss.needs_inc += (k.flags & SEQ_NEEDS_INCREMENTAL_STATE) != 0;
	if ((k.flags & SEQ_NEEDS_INCREMENTAL_STATE) && !seq->valid) {
		seq->loss.needs_inc_skipped++;
		tp_stat_inc(tp, TP_STAT_packet_skipped_seq_needs_incremental_state_invalid);
		if (analyze && !k.not_analysed)
			tp_proto_content_packet(im, p, n, PROTO_CONTENT_SKIPPED, 0, 0);
		return;
	}
	if (analyze && !k.not_analysed && !k.has_track_event)
		tp_proto_content_packet(im, p, n, PROTO_CONTENT_PLAIN, 0, 0);
	if (k.has_snapshot) {
		tp_proto_clocks_add_snapshot(im->clocks, k.seq_id, k.snapshot.data, k.snapshot.len);
		tp_proto_clocks_snapshot_rows(im->clocks, tp, im->machine, k.snapshot.data,
		                              k.snapshot.len);
	}

	int64_t ts = im->last_ts;
	if (k.has_ts && !packet_ts(im, seq, k.has_clock, k.clock_id, k.ts, &ts))
		return;
	if (!k.has_payload)
		return;
	const uint8_t *pp = k.payload.data;
	size_t pn = k.payload.len;
	struct proto_ev *ev;
	switch (k.payload.id) {
	case PKT_TRACK_EVENT: {
		struct proto_ev tmp = {
		    .thread_ts = TP_NULL_I64, .thread_instr = TP_NULL_I64, .counter_value = NAN};
		struct proto_abs_counters abs;
		struct proto_te_rec rec;
		abs.n_int = abs.n_dbl = 0;
		rec.kind = 0;
		if (!tp_proto_track_event_tokenize(im, seq, pp, pn, &ts, k.has_ts, &tmp, &abs,
		                                   &rec))
			return;
		if ((rec.kind & PROTO_KIND_MASK) == EV_TE_SIMPLE && !analyze) {
			tp_sorter_push_src(tp->sorter, seq->src, ts, &rec, sizeof rec);
			break;
		}
		size_t abs_len = (abs.n_int + abs.n_dbl) * sizeof abs.v[0];
		ev = tp_proto_push_extra(im, ts, EV_TRACK_EVENT, seq->gen, seq, pp, pn, NULL,
		                         abs_len + (analyze ? n : 0));
		if (!ev)
			return;
		/* after the payload: the absolute counter values, then (when
		 * analysing) the packet */
		memcpy((uint8_t *)(ev + 1) + pn, abs.v, abs_len);
		if (analyze) {
			memcpy((uint8_t *)(ev + 1) + pn + abs_len, p, n);
			ev->pkt_len = (uint32_t)n;
		}
		ev->n_abs_int = abs.n_int;
		ev->n_abs_dbl = abs.n_dbl;
		ev->thread_ts = tmp.thread_ts;
		ev->thread_instr = tmp.thread_instr;
		ev->counter_value = tmp.counter_value;
		break;
	}
	case PKT_TRACK_DESCRIPTOR: {
		/* A thread's descriptor is also the sequence's thread, as a
		 * legacy ThreadDescriptor would be (if the state is valid). */
		struct pb_field tf = {0};
		int64_t tid = tp_proto_descriptor_tokenize(im, pp, pn);
		if (seq->valid && pb_find_field(pp, pn, PB_F_TrackDescriptor_thread, &tf) == 1 &&
		    tf.wire == PB_WIRE_LEN &&
		    pb_find_field(tf.data, tf.len, PB_F_ThreadDescriptor_pid,
		                  &(struct pb_field){0}) == 1 &&
		    pb_find_field(tf.data, tf.len, PB_F_ThreadDescriptor_tid,
		                  &(struct pb_field){0}) == 1) {
			seq_thread(seq, tf.data, tf.len);
			if (tid >= 0)
				seq->tid = tid; /* synthetic when sandboxed */
		}
		tp_proto_push(im, ts, EV_TRACK_DESCRIPTOR, NULL, seq, pp, pn);
		break;
	}
	case PKT_THREAD_DESCRIPTOR:
		seq_thread(seq, pp, pn);
		tp_proto_push(im, ts, EV_THREAD_DESCRIPTOR, NULL, seq, pp, pn);
		break;
	case PKT_PROCESS_DESCRIPTOR:
		tp_proto_push(im, ts, EV_PROCESS_DESCRIPTOR, NULL, seq, pp, pn);
		break;
	case PKT_PROCESS_TREE:
		tp_proto_push(im, ts, EV_PROCESS_TREE, NULL, seq, pp, pn);
		break;
	case PKT_SYS_STATS:
		tp_proto_push(im, ts, EV_SYS_STATS, NULL, seq, pp, pn);
		break;
	case PKT_PROCESS_STATS:
		tp_proto_push(im, ts, EV_PROCESS_STATS, NULL, seq, pp, pn);
		break;
	case PKT_FTRACE_EVENTS:
		tp_proto_ftrace_tokenize(im, seq, pp, pn);
		break;
	case PKT_PERF_SAMPLE:
		tp_proto_push(im, ts, EV_PERF_SAMPLE, seq->gen, seq, pp, pn);
		break;
	case PKT_STACK_SAMPLE:
		tp_proto_push(im, ts, EV_STACK_SAMPLE, seq->gen, seq, pp, pn);
		break;
	case PKT_STREAMING_PROFILE:
		tp_proto_streaming_profile_tokenize(im, seq, pp, pn);
		break;
	case PKT_FTRACE_STATS:
		tp_proto_ftrace_stats(im, k.seq_id, pp, pn);
		break;
	case PKT_MODULE_SYMBOLS:
		/* At the latest timestamp so far: after the frames it names. */
		tp_proto_push(im, ts, EV_MODULE_SYMBOLS, NULL, seq, pp, pn);
		break;
	case PKT_TRIGGER:
	case PKT_CLONE_SNAPSHOT_TRIGGER:
	case PKT_CHROME_TRIGGER:
	case PKT_INITIAL_DISPLAY_STATE:
	case PKT_CONCURRENT_SESSION_EVENT:
		tp_proto_push(im, ts, misc_kind(k.payload.id), NULL, seq, pp, pn);
		break;
	case PKT_JOURNALD_EVENT:
		tp_proto_push(im, ts, EV_JOURNALD, NULL, seq, pp, pn);
		break;
	case PKT_GENERIC_KERNEL_TASK_STATE:
	case PKT_GENERIC_KERNEL_CPU_FREQ:
	case PKT_GENERIC_KERNEL_TASK_RENAME:
	case PKT_GENERIC_KERNEL_PROCESS_TREE:
		tp_proto_push_extra(im, ts, EV_GENERIC_KERNEL, NULL, seq, pp, pn, &k.payload.id,
		                    sizeof k.payload.id);
		break;
	default:
		tp_proto_metadata_packet(im, k.payload.id, ts, pp, pn);
		break;
	}
}

/* ---- metadata packets ------------------------------------------------------- */

/* A TraceUuid packet's uuid takes precedence over the config's. */
static void trace_uuid(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct pb_field f = {0};
	uint64_t msb = 0, lsb = 0;
	if (pb_find_field(p, n, PB_F_TraceUuid_msb, &f) == 1)
		msb = f.val;
	if (pb_find_field(p, n, PB_F_TraceUuid_lsb, &f) == 1)
		lsb = f.val;
	if (msb || lsb) {
		tp_metadata_set_uuid(im->tp, msb, lsb);
		im->uuid_from_packet = true;
	}
}

/* "producer data_source" of each slow-starting data source. */
static void slow_data_sources(struct proto_importer *im, const struct pb_field *list)
{
	struct pb_reader r;
	struct pb_field ds = {0}, f = {0};
	pb_reader_init_field(&r, list);
	while (pb_next(&r, &ds)) {
		if (ds.id != PB_F_TracingServiceEvent_DataSources_data_source ||
		    ds.wire != PB_WIRE_LEN)
			continue;
		proto_scratch_reset(im);
		if (pb_find_field(ds.data, ds.len,
		                  PB_F_TracingServiceEvent_DataSources_DataSource_producer_name,
		                  &f) == 1 &&
		    f.wire == PB_WIRE_LEN)
			tp_proto_scratch_add(im, f.data, f.len);
		tp_proto_scratch_add(im, " ", 1);
		if (pb_find_field(ds.data, ds.len,
		                  PB_F_TracingServiceEvent_DataSources_DataSource_data_source_name,
		                  &f) == 1 &&
		    f.wire == PB_WIRE_LEN)
			tp_proto_scratch_add(im, f.data, f.len);
		tp_metadata_append_str(im->tp, "slow_start_data_source",
		                       tp_intern(im->tp, im->scratch.data, im->scratch.len));
	}
}

static void service_event(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_TracingServiceEvent_slow_starting_data_sources &&
		    f.wire == PB_WIRE_LEN)
			slow_data_sources(im, &f);
		if (f.wire != PB_WIRE_VARINT || !f.val)
			continue;
		if (f.id == PB_F_TracingServiceEvent_all_data_sources_started)
			tp_metadata_set_int(im->tp, "all_data_source_started_ns", ts);
		else if (f.id == PB_F_TracingServiceEvent_tracing_started)
			tp_metadata_set_int(im->tp, "tracing_started_ns", ts);
		else if (f.id == PB_F_TracingServiceEvent_all_data_sources_flushed)
			tp_metadata_append_int(im->tp, "all_data_source_flushed_ns", ts);
		else if (f.id == PB_F_TracingServiceEvent_tracing_disabled)
			tp_metadata_set_int(im->tp, "tracing_disabled_ns", ts);
	}
}

void tp_proto_metadata_packet(struct proto_importer *im, uint32_t field, int64_t ts,
                              const uint8_t *p, size_t n)
{
	switch (field) {
	case PKT_CPU_INFO:
		tp_proto_cpu_info_parse(im, p, n);
		break;
	case PKT_INTERRUPT_INFO:
		tp_proto_interrupt_info_parse(im, p, n);
		break;
	case PKT_PACKAGES_LIST:
		tp_proto_packages_list_parse(im, p, n);
		break;
	case PKT_USER_LIST:
		tp_proto_user_list_parse(im, p, n);
		break;
	case PKT_CHROME_METADATA:
		tp_proto_chrome_metadata(im, p, n);
		break;
	case PKT_SYSTEM_INFO:
		tp_proto_system_info(im, p, n);
		break;
	case PKT_TRACE_UUID:
		trace_uuid(im, p, n);
		break;
	case PKT_SERVICE_EVENT:
		service_event(im, ts, p, n);
		break;
	case PKT_TRACK_EVENT_RANGE_OF_INTEREST: {
		struct pb_field f = {0};
		if (pb_find_field(p, n, PB_F_TrackEventRangeOfInterest_start_us, &f) != 1 ||
		    f.wire != PB_WIRE_VARINT) {
			tp_stat_inc(im->tp, TP_STAT_track_event_range_of_interest_missing_start_us);
			break;
		}
		im->roi_start_ns = proto_sat_mul_1000((int64_t)f.val);
		tp_metadata_set_int(im->tp, "range_of_interest_start_us", (int64_t)f.val);
		break;
	}
	case PKT_TRACE_STATS:
		tp_proto_trace_stats(im, p, n);
		break;
	case PKT_TRACE_ATTRIBUTES:
		tp_proto_trace_attributes(im, p, n);
		break;
	case PKT_TRACE_CONFIG:
		tp_proto_trace_config(im, p, n);
		break;
	default:
		break;
	}
}
