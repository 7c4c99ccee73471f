/*
 * The linux.process_stats data source (Perfetto's ProcessStatsDataSource):
 *
 *   start      scan_all_processes_on_start: one TracePacket{timestamp,
 *              process_tree{processes.., threads.., collection_end_timestamp}}
 *              with every process of /proc; the first packet of the
 *              sequence carries incremental_state_cleared, as Perfetto's.
 *   poll       proc_stats_poll_ms: every period (first at start) one
 *              TracePacket{timestamp, process_stats{processes{pid, memory
 *              counters, oom_score_adj}.., collection_end_timestamp}} for
 *              every process with memory (kernel threads are skipped).
 *   on_pids    tids first seen by another data source (ftrace) resolved
 *              into a ProcessTree packet of their own; renamed tids are
 *              forgotten first so they are written again (Perfetto's
 *              OnRenamePids / OnPids). Quirk DISABLE_ON_DEMAND: neither.
 *
 * Timestamps are CLOCK_BOOTTIME (the trace clock; no timestamp_clock_id).
 * Everything runs on the producer's loop.
 */
#include "procfs.h"
#include "pb_fields.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

struct probes_process_stats {
	struct loop *loop;
	struct tracing_writer *w;
	struct probes_procfs_config cfg;
	char *root;
	uint64_t poll_timer;
	struct hmap seen;         /* tids already in a ProcessTree: key tid */
	struct pb_writer scratch; /* on_pids' ProcessTree body */
	bool wrote_first;
};

/* Begin a packet stamped now; the first of the sequence clears state. */
static struct pb_writer *begin(struct probes_process_stats *ps)
{
	struct pb_writer *pw = tracing_writer_begin_packet(ps->w);
	pb_put_uint64(pw, PB_F_TracePacket_timestamp, (uint64_t)tb_boot_ns());
	if (!ps->wrote_first) {
		pb_put_bool(pw, PB_F_TracePacket_incremental_state_cleared, true);
		ps->wrote_first = true;
	}
	return pw;
}

static void poll_tick(struct loop *l, uint64_t id, void *ctx)
{
	struct probes_process_stats *ps = ctx;
	struct pb_writer *pw = begin(ps);
	unsigned h = pb_begin_nested(pw, PB_F_TracePacket_process_stats);
	DIR *d = opendir(ps->root);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end || pid <= 0 || pid > INT32_MAX)
			continue;
		probes_procfs_write_mem_counters(pw, ps->root, (int32_t)pid);
	}
	if (d)
		closedir(d);
	pb_put_uint64(pw, PB_F_ProcessStats_collection_end_timestamp, (uint64_t)tb_boot_ns());
	pb_end_nested(pw, h);
	tracing_writer_end_packet(ps->w);
}

struct probes_process_stats *probes_process_stats_new(struct loop *l, struct tracing_writer *w,
                                                      const uint8_t *cfg, size_t len,
                                                      const char *root)
{
	struct probes_process_stats *ps = tb_calloc(1, sizeof *ps);
	ps->loop = l;
	ps->w = w;
	ps->root = tb_strdup(root ? root : PROBES_PROC_ROOT);
	probes_procfs_config_parse(cfg, len, &ps->cfg);
	hmap_init(&ps->seen);
	pb_writer_init_growable(&ps->scratch);
	return ps;
}

void probes_process_stats_start(struct probes_process_stats *ps)
{
	if (ps->cfg.scan_all_processes_on_start) {
		struct pb_writer *pw = begin(ps);
		unsigned h = pb_begin_nested(pw, PB_F_TracePacket_process_tree);
		probes_procfs_write_all(pw, ps->root, &ps->cfg, &ps->seen);
		pb_put_uint64(pw, PB_F_ProcessTree_collection_end_timestamp,
		              (uint64_t)tb_boot_ns());
		pb_end_nested(pw, h);
		tracing_writer_end_packet(ps->w);
	}
	if (ps->cfg.proc_stats_poll_ms) {
		poll_tick(ps->loop, 0, ps);
		ps->poll_timer = loop_add_timer(ps->loop, ps->cfg.proc_stats_poll_ms,
		                                ps->cfg.proc_stats_poll_ms, poll_tick, ps);
		if (!ps->poll_timer)
			log_warn("probes", "process_stats: %s", loop_err(ps->loop)->msg);
	}
}

void probes_process_stats_on_pids(struct probes_process_stats *ps, const int32_t *tids, size_t n)
{
	/* Built aside: no packet when every tid is known or gone. */
	if (ps->cfg.disable_on_demand || !n)
		return;
	pb_writer_reset(&ps->scratch);
	if (!probes_procfs_write_pids(&ps->scratch, ps->root, tids, n, &ps->cfg, &ps->seen))
		return;
	pb_put_uint64(&ps->scratch, PB_F_ProcessTree_collection_end_timestamp,
	              (uint64_t)tb_boot_ns());
	struct pb_writer *pw = begin(ps);
	pb_put_bytes(pw, PB_F_TracePacket_process_tree, pb_writer_data(&ps->scratch),
	             pb_writer_size(&ps->scratch));
	tracing_writer_end_packet(ps->w);
}

void probes_process_stats_on_rename_pids(struct probes_process_stats *ps, const int32_t *tids,
                                         size_t n)
{
	if (ps->cfg.disable_on_demand)
		return;
	for (size_t i = 0; i < n; i++)
		hmap_del(&ps->seen, (uint64_t)(uint32_t)tids[i], NULL);
}

void probes_process_stats_free(struct probes_process_stats *ps)
{
	if (!ps)
		return;
	if (ps->poll_timer)
		loop_cancel_timer(ps->loop, ps->poll_timer);
	hmap_release(&ps->seen);
	pb_writer_release(&ps->scratch);
	tb_free(ps->root);
	tb_free(ps);
}
