/*
 * The service's and traced_probes' own accounting, imported into `stats` at
 * tokenize time as Perfetto's trace processor does:
 *
 *  - TracePacket.trace_stats (35), written by the service when the trace is
 *    read: producer/data source/session counts and flush outcomes as single
 *    stats `traced_*`, the trace filter's `filter_*`, and per trace buffer
 *    (the index is the buffer's position in buffer_stats) `traced_buf_*`.
 *    A later packet overwrites the values of an earlier one, except the
 *    final flush outcome, which counts.
 *  - TracePacket.ftrace_stats (34), written by the ftrace data source at the
 *    start and the end of the trace: per cpu (the index is the cpu)
 *    `ftrace_cpu_<counter>_begin` / `_end`, and at the end `_delta` where
 *    a begin value exists; kprobe hits/misses; and, at the start, one
 *    `ftrace_setup_errors` per event or category that failed to enable
 *    (counted once per sequence). ftrace_parse_errors (9) mean traced_probes
 *    misread the kernel's ring buffer: like Perfetto, the trace is refused
 *    (zero-length-data errors, which do not corrupt events, are only
 *    counted in `ftrace_abi_errors_skipped_zero_data_length`).
 *
 *  TraceStats                       FtraceStats
 *  ├ buffer_stats[i] (1) ─▶ idx i   ├ phase (1): START_OF_TRACE 1, END_OF_TRACE 2
 *  ├ producers_connected (2) ...    ├ cpu_stats (2): cpu 1, entries 2, overrun 3,
 *  ├ filter_stats (11)              │  commit_overrun 4, bytes_read 5,
 *  ├ flushes_* (12..14)             │  oldest_event_ts 6 (s, double), now_ts 7
 *  └ final_flush_outcome (15)       │  (s, double), dropped_events 8, read_events 9
 *                                   ├ atrace_errors 5, unknown_ 6 / failed_ftrace_events 7
 *                                   ├ ftrace_parse_errors 9 (FtraceParseStatus)
 *                                   ├ kprobe_stats (10): hits 1, misses 2
 *                                   └ exclusive_feature_error 13
 */
#include "proto_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "protos.h"
#include "pb_fields.h"

/* TraceStats.BufferStats field -> indexed stat. */
static const struct {
	uint32_t field;
	enum tp_istat stat;
} buffer_fields[] = {
    {1, TP_ISTAT_traced_buf_bytes_written},
    {2, TP_ISTAT_traced_buf_chunks_written},
    {3, TP_ISTAT_traced_buf_chunks_overwritten},
    {4, TP_ISTAT_traced_buf_write_wrap_count},
    {5, TP_ISTAT_traced_buf_patches_succeeded},
    {6, TP_ISTAT_traced_buf_patches_failed},
    {7, TP_ISTAT_traced_buf_readaheads_succeeded},
    {8, TP_ISTAT_traced_buf_readaheads_failed},
    {9, TP_ISTAT_traced_buf_abi_violations},
    {10, TP_ISTAT_traced_buf_chunks_rewritten},
    {11, TP_ISTAT_traced_buf_chunks_committed_out_of_order},
    {12, TP_ISTAT_traced_buf_buffer_size},
    {13, TP_ISTAT_traced_buf_bytes_overwritten},
    {14, TP_ISTAT_traced_buf_bytes_read},
    {15, TP_ISTAT_traced_buf_padding_bytes_written},
    {16, TP_ISTAT_traced_buf_padding_bytes_cleared},
    {17, TP_ISTAT_traced_buf_chunks_read},
    {18, TP_ISTAT_traced_buf_chunks_discarded},
    {19, TP_ISTAT_traced_buf_trace_writer_packet_loss},
    {20, TP_ISTAT_traced_buf_chunks_relocated},
};

/* A message's field and the single stat it sets. */
struct field_stat {
	uint32_t field;
	enum tp_stat stat;
};

/* TraceStats field -> single stat (each is set, 0 when absent). */
static const struct field_stat trace_fields[] = {
    {2, TP_STAT_traced_producers_connected},     {3, TP_STAT_traced_producers_seen},
    {4, TP_STAT_traced_data_sources_registered}, {5, TP_STAT_traced_data_sources_seen},
    {6, TP_STAT_traced_tracing_sessions},        {7, TP_STAT_traced_total_buffers},
    {8, TP_STAT_traced_chunks_discarded},        {9, TP_STAT_traced_patches_discarded},
    {12, TP_STAT_traced_flushes_requested},      {13, TP_STAT_traced_flushes_succeeded},
    {14, TP_STAT_traced_flushes_failed},
};

/* FilterStats field -> single stat (set only when filter_stats is there). */
static const struct field_stat filter_fields[] = {
    {1, TP_STAT_filter_input_packets}, {2, TP_STAT_filter_input_bytes},
    {3, TP_STAT_filter_output_bytes},  {4, TP_STAT_filter_errors},
    {5, TP_STAT_filter_time_taken_ns},
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

static void buffer_stats(struct tp *tp, int64_t buf, const uint8_t *p, size_t n)
{
	uint64_t v[21] = {0};
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.wire == PB_WIRE_VARINT && f.id < N_OF(v))
			v[f.id] = f.val;
	for (size_t i = 0; i < N_OF(buffer_fields); i++)
		tp_istat_set(tp, buffer_fields[i].stat, buf, (int64_t)v[buffer_fields[i].field]);
}

static void filter_stats(struct tp *tp, const uint8_t *p, size_t n)
{
	uint64_t v[6] = {0};
	int64_t buf = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_TraceStats_FilterStats_bytes_discarded_per_buffer &&
		    f.wire == PB_WIRE_VARINT) {
			tp_istat_set(tp, TP_ISTAT_traced_buf_bytes_filtered_out, buf++,
			             (int64_t)f.val);
		} else if (f.id == PB_F_TraceStats_FilterStats_bytes_discarded_per_buffer &&
		           f.wire == PB_WIRE_LEN) { /* packed */
			struct pb_packed it;
			uint64_t x;
			pb_packed_init(&it, f.data, f.len, PB_WIRE_VARINT);
			while (pb_packed_next(&it, &x))
				tp_istat_set(tp, TP_ISTAT_traced_buf_bytes_filtered_out, buf++,
				             (int64_t)x);
		} else if (f.wire == PB_WIRE_VARINT && f.id < N_OF(v)) {
			v[f.id] = f.val;
		}
	}
	for (size_t i = 0; i < N_OF(filter_fields); i++)
		tp_stat_set(tp, filter_fields[i].stat, (int64_t)v[filter_fields[i].field]);
}

void tp_proto_seq_count_loss(struct proto_seq *seq, uint32_t reasons)
{
	seq->loss.dropped++;
	for (unsigned i = 0; i < 8; i++)
		seq->loss.causes[i] += (reasons >> (i + 1)) & 1;
}

/* Per-buffer loss stats, by DATA_LOSS_* bit 1 << (i + 1). */
static const enum tp_istat cause_stats[8] = {
    TP_ISTAT_traced_buf_data_loss_read_gap,
    TP_ISTAT_traced_buf_data_loss_chunk_corrupted,
    TP_ISTAT_traced_buf_data_loss_orphan_continuation,
    TP_ISTAT_traced_buf_data_loss_reassembly_gap,
    TP_ISTAT_traced_buf_data_loss_reassembly_broken_chain,
    TP_ISTAT_traced_buf_data_loss_overwrite,
    TP_ISTAT_traced_buf_data_loss_writer_abort,
    TP_ISTAT_traced_buf_data_loss_smb_full,
};

/* TraceStats.writer_stats: what each known sequence lost, summed per
 * trace buffer (a sequence writes into one); every stat of such a buffer
 * is set, zero or not. */
static void writer_stats(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct {
		int64_t buf;
		struct proto_seq_loss sum;
		uint32_t inc_dropped;
	} per[64];
	size_t n_per = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_TraceStats_writer_stats || f.wire != PB_WIRE_LEN)
			continue;
		struct pb_field w = {0};
		uint64_t seq_id = 0;
		int64_t buf = 0;
		if (pb_find_field(f.data, f.len, PB_F_TraceStats_WriterStats_sequence_id, &w) == 1)
			seq_id = w.val;
		if (pb_find_field(f.data, f.len, PB_F_TraceStats_WriterStats_buffer, &w) == 1)
			buf = (int32_t)w.val;
		const struct proto_seq *seq =
		    seq_id <= UINT32_MAX ? hmap_get_ptr(&im->seqs, seq_id) : NULL;
		if (!seq)
			continue;
		size_t i = 0;
		while (i < n_per && per[i].buf != buf)
			i++;
		if (i == n_per) {
			if (n_per == sizeof per / sizeof per[0])
				continue; /* more buffers than a service has */
			memset(&per[i], 0, sizeof per[i]);
			per[i].buf = buf;
			n_per++;
		}
		per[i].sum.dropped += seq->loss.dropped;
		per[i].inc_dropped += seq->loss.needs_inc_skipped > 0 &&
		                      seq->loss.needs_inc_skipped == seq->loss.needs_inc;
		for (unsigned c = 0; c < 8; c++)
			per[i].sum.causes[c] += seq->loss.causes[c];
	}
	for (size_t i = 0; i < n_per; i++) {
		tp_istat_set(tp, TP_ISTAT_traced_buf_sequence_packet_loss, per[i].buf,
		             per[i].sum.dropped);
		tp_istat_set(tp, TP_ISTAT_traced_buf_incremental_sequences_dropped, per[i].buf,
		             per[i].inc_dropped);
		for (unsigned c = 0; c < 8; c++)
			tp_istat_set(tp, cause_stats[c], per[i].buf, per[i].sum.causes[c]);
	}
}

void tp_proto_trace_stats(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	uint64_t v[16] = {0};
	int64_t buf = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_TraceStats_buffer_stats && f.wire == PB_WIRE_LEN)
			buffer_stats(tp, buf++, f.data, f.len);
		else if (f.id == PB_F_TraceStats_filter_stats && f.wire == PB_WIRE_LEN)
			filter_stats(tp, f.data, f.len);
		else if (f.wire == PB_WIRE_VARINT && f.id < N_OF(v))
			v[f.id] = f.val;
	}
	for (size_t i = 0; i < N_OF(trace_fields); i++)
		tp_stat_set(tp, trace_fields[i].stat, (int64_t)v[trace_fields[i].field]);
	if (v[15] == 1)
		tp_stat_inc(tp, TP_STAT_traced_final_flush_succeeded);
	else if (v[15] == 2)
		tp_stat_inc(tp, TP_STAT_traced_final_flush_failed);
	writer_stats(im, p, n);
}

/* ---- FtraceStats ---------------------------------------------------------- */

/* FtraceCpuStats counter fields and their _begin stat (_end follows it,
 * then _delta). */
static const struct {
	uint32_t field;
	enum tp_istat begin;
} cpu_counters[] = {
    {2, TP_ISTAT_ftrace_cpu_entries_begin},        {3, TP_ISTAT_ftrace_cpu_overrun_begin},
    {4, TP_ISTAT_ftrace_cpu_commit_overrun_begin}, {5, TP_ISTAT_ftrace_cpu_bytes_begin},
    {8, TP_ISTAT_ftrace_cpu_dropped_events_begin}, {9, TP_ISTAT_ftrace_cpu_read_events_begin},
};

/* Seconds as a double to ns, truncated, saturated at INT64_MAX (oldest
 * event timestamps can be garbage). */
static int64_t secs_to_ns(double s)
{
	double ns = s * 1e9;
	if (isnan(ns))
		return 0;
	if (ns >= (double)INT64_MAX)
		return INT64_MAX;
	if (ns <= (double)INT64_MIN)
		return INT64_MIN;
	return (int64_t)ns;
}

static void cpu_stats(struct tp *tp, int phase, const uint8_t *p, size_t n)
{
	uint64_t v[10] = {0};
	double now = 0, oldest = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire == PB_WIRE_VARINT && f.id < N_OF(v)) {
			v[f.id] = f.val;
		} else if (f.wire == PB_WIRE_FIXED64 &&
		           f.id == PB_F_FtraceCpuStats_oldest_event_ts) {
			oldest = pb_field_double(&f);
		} else if (f.wire == PB_WIRE_FIXED64 && f.id == PB_F_FtraceCpuStats_now_ts) {
			now = pb_field_double(&f);
		}
	}
	int64_t cpu = (int64_t)(int32_t)v[1];
	if (cpu < 0 || cpu >= TP_MAX_CPUS) {
		tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
		return;
	}
	for (size_t i = 0; i < N_OF(cpu_counters); i++) {
		int64_t x = (int64_t)v[cpu_counters[i].field], begin;
		enum tp_istat s = cpu_counters[i].begin;
		tp_istat_set(tp, s + phase, cpu, x);
		if (phase == 1 && tp_istat_get(tp, s, cpu, &begin))
			tp_istat_set(tp, s + 2, cpu, (int64_t)((uint64_t)x - (uint64_t)begin));
	}
	tp_istat_set(tp, TP_ISTAT_ftrace_cpu_now_ts_begin + phase, cpu, secs_to_ns(now));
	tp_istat_set(tp, TP_ISTAT_ftrace_cpu_oldest_event_ts_begin + phase, cpu,
	             secs_to_ns(oldest));
}

#define FTRACE_STATUS_ABI_ZERO_DATA_LENGTH 12

/* One FtraceParseStatus: counted if harmless, else named into msg. */
static void parse_error(struct tp *tp, uint64_t code, char *msg, size_t cap, size_t *len)
{
	if (code == FTRACE_STATUS_ABI_ZERO_DATA_LENGTH) {
		tp_stat_inc(tp, TP_STAT_ftrace_abi_errors_skipped_zero_data_length);
		return;
	}
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
	    &perfetto__protos__ftrace_parse_status__descriptor, (int)(int32_t)code);
	if (*len < cap) {
		int w = snprintf(msg + *len, cap - *len, "%s%s", *len ? ", " : "",
		                 v ? v->name : "FTRACE_STATUS_UNKNOWN");
		*len += w > 0 ? (size_t)w : 0;
	}
}

/* Perfetto refuses a trace whose recorder reported ring-buffer parse errors. */
static void parse_errors(struct tp *tp, const uint8_t *p, size_t n)
{
	char msg[256];
	size_t len = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_FtraceStats_ftrace_parse_errors)
			continue;
		if (f.wire == PB_WIRE_VARINT) {
			parse_error(tp, f.val, msg, sizeof msg, &len);
		} else if (f.wire == PB_WIRE_LEN) {
			struct pb_packed it;
			uint64_t v;
			pb_packed_init(&it, f.data, f.len, PB_WIRE_VARINT);
			while (pb_packed_next(&it, &v))
				parse_error(tp, v, msg, sizeof msg, &len);
		}
	}
	if (len)
		tp_fail(tp, -EINVAL,
		        "the trace was recorded with critical ftrace parse errors (a bug in the "
		        "recorder or the kernel): %s",
		        msg);
}

void tp_proto_ftrace_stats(struct proto_importer *im, uint32_t seq_id, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_field f = {0};
	uint64_t phase_v = 0;
	if (pb_find_field(p, n, PB_F_FtraceStats_phase, &f) == 1 && f.wire == PB_WIRE_VARINT)
		phase_v = f.val;
	if (phase_v != PB_E_FtraceStats_Phase_START_OF_TRACE &&
	    phase_v != PB_E_FtraceStats_Phase_END_OF_TRACE)
		return; /* Perfetto ignores other phases */
	int phase = phase_v == PB_E_FtraceStats_Phase_END_OF_TRACE;
	int64_t hits = 0, misses = 0;
	uint64_t setup_errors = 0;
	struct pb_reader r;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire != PB_WIRE_LEN)
			continue;
		if (f.id == PB_F_FtraceStats_cpu_stats) {
			cpu_stats(tp, phase, f.data, f.len);
		} else if (f.id == PB_F_FtraceStats_kprobe_stats) {
			struct pb_field k = {0};
			if (pb_find_field(f.data, f.len, PB_F_FtraceKprobeStats_hits, &k) == 1)
				hits = (int64_t)k.val;
			if (pb_find_field(f.data, f.len, PB_F_FtraceKprobeStats_misses, &k) == 1)
				misses = (int64_t)k.val;
		} else if (f.id == PB_F_FtraceStats_unknown_ftrace_events ||
		           f.id == PB_F_FtraceStats_failed_ftrace_events ||
		           ((f.id == PB_F_FtraceStats_atrace_errors ||
		             f.id == PB_F_FtraceStats_exclusive_feature_error) &&
		            f.len)) {
			setup_errors++;
		}
	}
	tp_stat_set(tp, TP_STAT_ftrace_kprobe_hits_begin + phase, hits);
	tp_stat_set(tp, TP_STAT_ftrace_kprobe_misses_begin + phase, misses);
	/* As Perfetto, a begin value of 0 counts as none: no delta then. */
	if (phase == 1) {
		int64_t hb = (int64_t)tp->stats[TP_STAT_ftrace_kprobe_hits_begin];
		int64_t mb = (int64_t)tp->stats[TP_STAT_ftrace_kprobe_misses_begin];
		if (hb)
			tp_stat_set(tp, TP_STAT_ftrace_kprobe_hits_delta, hits - hb);
		if (mb)
			tp_stat_set(tp, TP_STAT_ftrace_kprobe_misses_delta, misses - mb);
	} else if (setup_errors && hmap_put(&im->ftrace_error_seqs, seq_id, 1)) {
		tp->stats[TP_STAT_ftrace_setup_errors] += setup_errors;
	}
	parse_errors(tp, p, n);
}

/* ---- the config against the outcome (end of file) -------------------------- */

/* A file_write_period_ms of a day or more still means a ring-buffer trace
 * (Perfetto's service uses the same cutoff for "long trace" mode). */
#define RING_BUFFER_INTENT_PERIOD_MS (24u * 60 * 60 * 1000)

void tp_proto_config_stats_eof(struct proto_importer *im)
{
	struct tp *tp = im->tp;
	const uint8_t *p = im->trace_config.data;
	size_t n = im->trace_config.len;
	struct pb_field f = {0};
	if (!n || pb_find_field(p, n, PB_F_TraceConfig_write_into_file, &f) != 1 || !f.val)
		return;
	uint64_t period =
	    pb_find_field(p, n, PB_F_TraceConfig_file_write_period_ms, &f) == 1 ? f.val : 0;
	if (period < RING_BUFFER_INTENT_PERIOD_MS) {
		/* Overwritten bytes never reached the file: data loss. */
		int64_t buf = 0, v;
		struct pb_reader r;
		pb_reader_init(&r, p, n);
		while (pb_next(&r, &f)) {
			if (f.id != PB_F_TraceConfig_buffers || f.wire != PB_WIRE_LEN)
				continue;
			if (tp_istat_get(tp, TP_ISTAT_traced_buf_bytes_overwritten, buf, &v) &&
			    v > 0)
				tp_istat_set(tp, TP_ISTAT_long_trace_mode_bytes_overwritten, buf,
				             v);
			buf++;
		}
	}
	/* Since v54 the service flushes on every file write by itself. */
	if (!(pb_find_field(p, n, PB_F_TraceConfig_flush_period_ms, &f) == 1 && f.val) &&
	    im->service_major < 54)
		tp_stat_inc(tp, TP_STAT_config_write_into_file_no_flush);
}
