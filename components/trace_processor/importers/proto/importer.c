/*
 * The Perfetto protobuf importer's entry points (struct tp_importer_ops):
 * sniffing, lifetime, streaming bytes into the tokenizer, and dispatching
 * the sorted events to the parse-time handlers at end of file.
 */
#include "proto_int.h"
#include "../../sorter/sorter.h"
#include "../importer.h"
#include "../manifest/manifest.h"

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

/* A new importer of the packets of machine (a row), under root (NULL:
 * it is the root). */
static struct proto_importer *importer_new(struct tp *tp, struct proto_importer *root,
                                           uint32_t machine, uint64_t raw)
{
	bool drop;
	int64_t shift = tp_manifest_shift(tp, raw, &drop);
	struct proto_importer *im = tb_calloc(1, sizeof *im);
	im->tp = tp;
	im->root = root ? root : im;
	im->machine = machine;
	hmap_init(&im->seqs);
	hmap_init(&im->tracks_by_uuid);
	hmap_init(&im->desc_of_tid);
	hmap_init(&im->desc_of_pid);
	hmap_init(&im->first_packet_seqs);
	hmap_init(&im->ftrace_error_seqs);
	im->service_major = -1;
	hmap_init(&im->process_rank);
	hmap_init(&im->thread_rank);
	hmap_init(&im->irq_ids);
	hmap_init(&im->packages_seen);
	hmap_init(&im->user_rows);
	im->clocks = tp_proto_clocks_new();
	tp_proto_clocks_set_shift(im->clocks, shift, drop);
	im->default_track = TP_NULL_U32;
	im->roi_start_ns = INT64_MIN;
	return im;
}

static struct tp_importer *proto_create(struct tp *tp)
{
	/* The member's machine: the host unless a manifest names it. */
	uint32_t machine = tp->machine;
	tp_machine_use(tp, 0);
	tp_thread_name_idle(tp);
	tp_machine_use(tp, machine);
	struct proto_importer *im = importer_new(tp, NULL, machine, 0);
	if (tp->cfg.analyze_trace_proto_content)
		tp_proto_content_enable(im);
	return (struct tp_importer *)(void *)im;
}

struct proto_importer *tp_proto_machine_importer(struct proto_importer *root, uint64_t raw)
{
	TB_DCHECK(root->root == root);
	uint32_t named;
	if (tp_manifest_machine(root->tp, raw, &named)) {
		/* The manifest says which machine it is (or failed the import). */
		if (tb_err_is_set(&root->tp->err))
			return NULL;
		if (named == root->machine)
			return root;
		for (size_t i = 0; i < root->children.len; i++)
			if (root->children.data[i]->machine == named)
				return root->children.data[i];
		if (root->children.len >= (1u << (32 - PROTO_KIND_BITS)) - 1)
			return NULL;
		struct proto_importer *c = importer_new(root->tp, root, named, raw);
		vec_push(&root->children, c);
		c->tag = (uint32_t)root->children.len << PROTO_KIND_BITS;
		return c;
	}
	if (!root->adoption_done) {
		/* Perfetto's rule: the host takes the first other machine's id
		 * as its own when it has no packet of its own yet and its row is
		 * not already another machine's. */
		struct tp_machine_table *mt = &root->tp->t.machine;
		root->adoption_done = true;
		if (!root->host_used && mt->raw_id[root->machine] == 0) {
			bool taken = false;
			for (uint32_t i = 0; i < mt->n; i++)
				taken |= mt->raw_id[i] == (int64_t)raw;
			if (!taken) {
				mt->raw_id[root->machine] = (int64_t)raw;
				root->adopted_raw = raw;
			}
		}
	}
	if (raw == root->adopted_raw)
		return root;
	for (size_t i = 0; i < root->children.len; i++)
		if (root->tp->t.machine.raw_id[root->children.data[i]->machine] == (int64_t)raw)
			return root->children.data[i];
	/* The tag must fit above the kind bits of a uint32_t. */
	if (root->children.len >= (1u << (32 - PROTO_KIND_BITS)) - 1)
		return NULL;
	uint32_t machine = tp_machine_for_raw(root->tp, (int64_t)raw);
	struct proto_importer *c = importer_new(root->tp, root, machine, raw);
	vec_push(&root->children, c);
	c->tag = (uint32_t)root->children.len << PROTO_KIND_BITS;
	return c;
}

static int proto_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	tp_proto_tokenize((struct proto_importer *)(void *)imp, p, n, true);
	return 0;
}

void tp_proto_on_sorted(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx)
{
	struct proto_importer *im = ctx;
	struct proto_ev ev;
	uint32_t kind;
	memcpy(&kind, payload, sizeof kind);
	if (__builtin_expect(kind > PROTO_KIND_MASK, 0))
		im = im->children.data[(kind >> PROTO_KIND_BITS) - 1];
	kind &= PROTO_KIND_MASK;
	tp_machine_use(tp, im->machine);
	if ((kind == EV_TE_SIMPLE || kind == EV_TRACK_EVENT) && ts < im->roi_start_ns &&
	    tp->cfg.crop_track_events) {
		tp_stat_inc(tp, TP_STAT_track_event_dropped_packets_outside_of_range_of_interest);
		if (kind == EV_TRACK_EVENT) {
			memcpy(&ev, payload, sizeof ev);
			tp_proto_gen_unref(im, ev.gen);
		}
		return;
	}
	if (kind == EV_TE_SIMPLE) {
		tp_proto_track_event_parse_simple(im, ts, payload);
		return;
	}
	if (kind == EV_FTRACE_COMPACT_SWITCH || kind == EV_FTRACE_COMPACT_WAKING) {
		tp_proto_ftrace_compact_parse(im, ts, payload);
		return;
	}
	TB_DCHECK(len >= sizeof ev);
	memcpy(&ev, payload, sizeof ev);
	ev.kind = kind;
	const uint8_t *p = (const uint8_t *)payload + sizeof ev;
	switch (ev.kind) {
	case EV_TRACK_EVENT:
		tp_proto_track_event_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_TRACK_DESCRIPTOR:
		tp_proto_descriptor_parse(im, p, ev.len);
		break;
	case EV_THREAD_DESCRIPTOR:
		tp_proto_thread_descriptor_parse(im, p, ev.len);
		break;
	case EV_PROCESS_DESCRIPTOR:
		tp_proto_process_descriptor_parse(im, p, ev.len);
		break;
	case EV_PROCESS_TREE:
		tp_proto_process_tree_parse(im, &ev, p, ev.len);
		break;
	case EV_SYS_STATS:
		tp_proto_sys_stats_parse(im, ts, p, ev.len);
		break;
	case EV_PROCESS_STATS:
		tp_proto_process_stats_parse(im, ts, p, ev.len);
		break;
	case EV_FTRACE:
	case EV_FTRACE_PLACED:
		tp_proto_ftrace_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_STREAMING_SAMPLE:
		tp_proto_streaming_sample_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_PERF_SAMPLE:
		tp_proto_perf_sample_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_STACK_SAMPLE:
		tp_proto_stack_sample_parse(im, ts, &ev, p, ev.len);
		break;
	case EV_MODULE_SYMBOLS:
		tp_module_symbols_import(im->tp, p, ev.len);
		break;
	case EV_TRIGGER:
	case EV_CLONE_SNAPSHOT_TRIGGER:
		tp_proto_trigger_parse(im, ts, ev.kind == EV_CLONE_SNAPSHOT_TRIGGER, p, ev.len);
		break;
	case EV_CHROME_TRIGGER:
		tp_proto_chrome_trigger_parse(im, ts, p, ev.len);
		break;
	case EV_INITIAL_DISPLAY_STATE:
		tp_proto_initial_display_state_parse(im, ts, p, ev.len);
		break;
	case EV_SESSION_EVENT:
		tp_proto_session_event_parse(im, ts, p, ev.len);
		break;
	case EV_JOURNALD:
		tp_proto_journald_parse(im, ts, p, ev.len);
		break;
	case EV_GENERIC_KERNEL:
		tp_proto_generic_kernel_parse(im, ts, p, ev.len);
		break;
	default:
		break;
	}
	tp_proto_gen_unref(im, ev.gen);
}

static int proto_eof(struct tp_importer *imp)
{
	struct proto_importer *im = (struct proto_importer *)(void *)imp;
	struct tp *tp = im->tp;
	tp_proto_tokenize_eof(im);
	tp_sorter_flush(tp->sorter, tp, tp_proto_on_sorted, im);
	for (size_t i = 0; i < im->children.len; i++) {
		tp_machine_use(tp, im->children.data[i]->machine);
		tp_proto_tracks_finish(im->children.data[i]);
	}
	tp_machine_use(tp, im->machine);
	tp_proto_tracks_finish(im);
	tp_proto_config_stats_eof(im);
	tp_proto_content_finish(im);
	uint32_t trace_clock = tp_manifest_trace_clock(tp);
	tp_metadata_set_int(tp, "trace_time_clock_id",
	                    trace_clock ? trace_clock : tp_proto_clocks_trace_clock(im->clocks));
	tp_machine_use(tp, 0);
	return 0;
}

static void proto_destroy(struct tp_importer *imp)
{
	struct proto_importer *im = (struct proto_importer *)(void *)imp;
	if (!im)
		return;
	for (size_t i = 0; i < im->children.len; i++)
		proto_destroy((struct tp_importer *)(void *)im->children.data[i]);
	vec_release(&im->children);
	vec_release(&im->tail);
	tp_proto_seqs_free(im);
	if (im->root == im)
		tp_proto_clocks_share(im->tp, &im->clocks);
	tp_proto_clocks_free(im->clocks);
	tp_proto_tracks_free(im);
	tp_proto_ftrace_free(im);
	tp_proto_ftrace_kernel_free(im);
	tp_proto_generic_kernel_free(im);
	tp_proto_perf_free(im);
	tp_proto_callstacks_free(im);
	tp_proto_stack_sample_free(im);
	tp_proto_legacy_async_free(im);
	tp_proto_content_free(im);
	tp_json_args_free(im->json_args);
	hmap_release(&im->ftrace_error_seqs);
	hmap_release(&im->disk_by_name);
	hmap_release(&im->irq_ids);
	hmap_release(&im->packages_seen);
	hmap_release(&im->user_rows);
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
