/*
 * procfs: the linux.process_stats data source of traced_probes, and the
 * /proc readers behind it. Private to components/probes (main.c, the ftrace
 * hook and the unit tests include it); other components use probes.h.
 *
 * Every reader takes the /proc root as a parameter (PROBES_PROC_ROOT in
 * production, a fixture directory in tests) and writes protobuf fields with
 * pb straight into the TracePacket being built, so nothing is copied into
 * intermediate structs. A process that exits mid-read is skipped, never an
 * error: /proc is a moving target.
 */
#ifndef TB_PROBES_PROCFS_H
#define TB_PROBES_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "pb.h"
#include "tracing.h"

#define PROBES_PROC_ROOT "/proc"

/* Perfetto clamps proc_stats_poll_ms below this to this. */
#define PROBES_PROC_MIN_POLL_MS 100

/* The ProcessStatsConfig fields we act on (DataSourceConfig field 103). */
struct probes_procfs_config {
	bool scan_all_processes_on_start;
	bool record_thread_names;
	bool record_process_age;
	bool skip_main_thread_message;
	bool disable_on_demand;      /* quirk DISABLE_ON_DEMAND: on_pids ignored */
	uint32_t proc_stats_poll_ms; /* 0: no ProcessStats polling */
};

/* Decode the process_stats_config of a serialized DataSourceConfig (borrowed)
 * into *out; absent or malformed fields stay zero. Pure. */
void probes_procfs_config_parse(const uint8_t *ds_config, size_t len,
                                struct probes_procfs_config *out);

/* Append one ProcessTree.processes entry for pid (pid, ppid, uid, cmdline
 * args, or the comm with cmdline_is_comm for kernel threads, is_kthread,
 * nspid inside a pid namespace, process_start_from_boot when
 * cfg->record_process_age) followed by ProcessTree.threads entries for its
 * tasks (main thread first unless cfg->skip_main_thread_message; names when
 * cfg->record_thread_names). w must be positioned inside a ProcessTree.
 * When seen is not NULL, every tid written is added to it (key = tid).
 * Returns 0, or -ENOENT (nothing written) if the process is gone. */
int probes_procfs_write_process(struct pb_writer *w, const char *root, int32_t pid,
                                const struct probes_procfs_config *cfg, struct hmap *seen);

/* probes_procfs_write_process for every numeric directory of root, in
 * ascending pid order. Returns the number of processes written. */
size_t probes_procfs_write_all(struct pb_writer *w, const char *root,
                               const struct probes_procfs_config *cfg, struct hmap *seen);

/* ProcessTree entries for tasks first seen elsewhere (ftrace): for each tid
 * of tids[0, n) not in seen, its process (with its threads, as
 * probes_procfs_write_process) or, when the process is in seen already,
 * just a threads entry {tid, tgid}. Vanished tids write nothing. Every tid
 * handled is added to seen. w must be inside a ProcessTree. Returns the
 * number of entries written. */
size_t probes_procfs_write_pids(struct pb_writer *w, const char *root, const int32_t *tids,
                                size_t n, const struct probes_procfs_config *cfg,
                                struct hmap *seen);

/* Append one ProcessStats.processes entry for pid with the memory counters
 * of /proc/PID/status (VmSize, VmRSS, RssAnon, RssFile, RssShmem, VmSwap,
 * VmLck, VmHWM, in kB) and oom_score_adj. w must be inside a ProcessStats.
 * Returns 0, -ENOENT if the process is gone, or -ENODATA (nothing written)
 * for a process without memory (kernel threads, zombies). */
int probes_procfs_write_mem_counters(struct pb_writer *w, const char *root, int32_t pid);

/* ---- the data source (process_stats.c) ------------------------------------ */

struct probes_process_stats; /* opaque */

/* A linux.process_stats instance writing through w (borrowed; the caller
 * frees it after this) on loop l, configured by the serialized
 * DataSourceConfig cfg (borrowed for the call), reading root (copied).
 * Never NULL. Loop thread only. */
struct probes_process_stats *probes_process_stats_new(struct loop *l, struct tracing_writer *w,
                                                      const uint8_t *cfg, size_t len,
                                                      const char *root);

/* Start: the initial ProcessTree dump (scan_all_processes_on_start) and the
 * ProcessStats poll timer (proc_stats_poll_ms). */
void probes_process_stats_start(struct probes_process_stats *ps);

/* Resolve pids/tids seen elsewhere (the ftrace data source's hook): each one
 * not written before gets its process (and threads), or its thread entry if
 * the process is known, in one ProcessTree packet. */
void probes_process_stats_on_pids(struct probes_process_stats *ps, const int32_t *tids, size_t n);

/* Tasks renamed since (task_rename): forgotten, so that the next
 * probes_process_stats_on_pids naming them writes them again with their new
 * names. Call it before on_pids with the same batch's pids. */
void probes_process_stats_on_rename_pids(struct probes_process_stats *ps, const int32_t *tids,
                                         size_t n);

/* Cancel timers and free. NULL is a no-op. Does not touch the writer. */
void probes_process_stats_free(struct probes_process_stats *ps);

#endif /* TB_PROBES_PROCFS_H */
