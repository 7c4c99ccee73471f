/*
 * The Perfetto protobuf importer's entry points (struct tp_importer_ops):
 * sniffing, lifetime, streaming bytes into the tokenizer, and dispatching
 * the sorted events to the parse-time handlers at end of file.
 */
#include "proto_int.h"

#include <string.h>

/* Perfetto guesses a proto trace from a first byte of 0x0a (field 1,
 * length-delimited). We also want the length varint to be well formed. */
static bool proto_sniff(const uint8_t *p, size_t n)
{
	if (n == 0 || p[0] != 0x0a)
		return false;
	/* JSON after a newline: Perfetto tries JSON before proto. */
	size_t i = 0;
	while (i < n && (p[i] == '\n' || p[i] == ' ' || p[i] == '\t' || p[i] == '\r'))
		i++;
	if (i < n && (p[i] == '{' || p[i] == '['))
		return false;
	uint64_t len;
	const uint8_t *end = p + (n < 1 + PB_VARINT_MAX_LEN ? n : 1 + PB_VARINT_MAX_LEN);
	if (!pb_read_varint(p + 1, end, &len))
		return n < 1 + PB_VARINT_MAX_LEN; /* cut short: give it the benefit */
	return len <= PROTO_MAX_PACKET;
}

static struct tp_importer *proto_create(struct tp *tp)
{
	struct proto_importer *im = tb_calloc(1, sizeof *im);
	im->tp = tp;
	hmap_init(&im->seqs);
	hmap_init(&im->tracks_by_uuid);
	hmap_init(&im->desc_of_tid);
	hmap_init(&im->desc_of_pid);
	hmap_init(&im->first_packet_seqs);
	hmap_init(&im->ftrace_error_seqs);
	im->service_major = -1;
	hmap_init(&im->process_rank);
	hmap_init(&im->thread_rank);
	im->clocks = proto_clocks_new();
	im->default_track = TP_NULL_U32;
	im->roi_start_ns = INT64_MIN;
	tp_thread_name_idle(tp);
	return (struct tp_importer *)(void *)im;
}

static int proto_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	proto_tokenize((struct proto_importer *)(void *)imp, p, n, true);
	return 0;
}

void proto_on_sorted(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx)
{
	struct proto_importer *im = ctx;
	struct proto_ev ev;
	uint32_t kind;
	memcpy(&kind, payload, sizeof kind);
	if ((kind == EV_TE_SIMPLE || kind == EV_TRACK_EVENT) && ts < im->roi_start_ns &&
	    tp->cfg.crop_track_events) {
		tp_stat_inc(tp, TP_STAT_track_event_dropped_packets_outside_of_range_of_interest);
		if (kind == EV_TRACK_EVENT) {
			memcpy(&ev, payload, sizeof ev);
			proto_gen_unref(im, ev.gen);
		}
		return;
	}
	if (kind == EV_TE_SIMPLE) {
		proto_track_event_parse_simple(im, ts, payload);
		return;
	}
	if (kind == EV_FTRACE_COMPACT_SWITCH || kind == EV_FTRACE_COMPACT_WAKING) {
		proto_ftrace_compact_parse(im, ts, payload);
		return;
	}
	TB_DCHECK(len >= sizeof ev);
	memcpy(&ev, payload, sizeof ev);
	const uint8_t *p = (const uint8_t *)payload + sizeof ev;
	switch (ev.kind) {
	case EV_TRACK_EVENT:
		proto_track_event_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_TRACK_DESCRIPTOR:
		proto_descriptor_parse(im, p, ev.len);
		break;
	case EV_THREAD_DESCRIPTOR:
		proto_thread_descriptor_parse(im, p, ev.len);
		break;
	case EV_PROCESS_DESCRIPTOR:
		proto_process_descriptor_parse(im, p, ev.len);
		break;
	case EV_PROCESS_TREE:
		proto_process_tree_parse(im, &ev, p, ev.len);
		break;
	case EV_SYS_STATS:
		proto_sys_stats_parse(im, ts, p, ev.len);
		break;
	case EV_PROCESS_STATS:
		proto_process_stats_parse(im, ts, p, ev.len);
		break;
	case EV_FTRACE:
	case EV_FTRACE_PLACED:
		proto_ftrace_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_STREAMING_SAMPLE:
		proto_streaming_sample_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_PERF_SAMPLE:
		proto_perf_sample_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_MODULE_SYMBOLS:
		tp_module_symbols_import(im->tp, p, ev.len);
		break;
	case EV_TRIGGER:
	case EV_CLONE_SNAPSHOT_TRIGGER:
		proto_trigger_parse(im, ts, ev.kind == EV_CLONE_SNAPSHOT_TRIGGER, p, ev.len);
		break;
	case EV_CHROME_TRIGGER:
		proto_chrome_trigger_parse(im, ts, p, ev.len);
		break;
	case EV_INITIAL_DISPLAY_STATE:
		proto_initial_display_state_parse(im, ts, p, ev.len);
		break;
	case EV_SESSION_EVENT:
		proto_session_event_parse(im, ts, p, ev.len);
		break;
	case EV_JOURNALD:
		proto_journald_parse(im, ts, p, ev.len);
		break;
	case EV_GENERIC_KERNEL:
		proto_generic_kernel_parse(im, ts, p, ev.len);
		break;
	default:
		break;
	}
	proto_gen_unref(im, ev.gen);
}

static int proto_eof(struct tp_importer *imp)
{
	struct proto_importer *im = (struct proto_importer *)(void *)imp;
	proto_tokenize_eof(im);
	tp_sorter_flush(im->tp->sorter, im->tp, proto_on_sorted, im);
	proto_tracks_finish(im);
	proto_config_stats_eof(im);
	tp_metadata_set_int(im->tp, "trace_time_clock_id", proto_clocks_trace_clock(im->clocks));
	return 0;
}

static void proto_destroy(struct tp_importer *imp)
{
	struct proto_importer *im = (struct proto_importer *)(void *)imp;
	if (!im)
		return;
	vec_release(&im->tail);
	proto_seqs_free(im);
	proto_clocks_free(im->clocks);
	proto_tracks_free(im);
	proto_ftrace_free(im);
	proto_ftrace_kernel_free(im);
	proto_generic_kernel_free(im);
	proto_perf_free(im);
	proto_callstacks_free(im);
	hmap_release(&im->ftrace_error_seqs);
	hmap_release(&im->disk_by_name);
	vec_release(&im->disks);
	vec_release(&im->trace_config);
	vec_release(&im->scratch);
	tp_args_builder_release(&im->args);
	tb_free(im);
}

const struct tp_importer_ops tp_proto_importer = {
	.name = "proto",
	.sniff = proto_sniff,
	.create = proto_create,
	.parse = proto_parse,
	.eof = proto_eof,
	.destroy = proto_destroy,
};
