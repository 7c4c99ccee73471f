/*
 * sysstats: the linux.sys_stats data source of traced_probes (Perfetto's
 * SysStatsDataSource) and its /proc readers. Private to components/probes.
 *
 * One timer ticks at the smallest configured period; each tick writes one
 * TracePacket{timestamp, sys_stats{...}} holding the sources whose period is
 * due (period / tick divides the tick count), then collection_end_timestamp.
 * Sources: /proc/meminfo -> meminfo{key: MeminfoCounters, value (kB)},
 * /proc/vmstat -> vmstat{key: VmstatCounters, value}, /proc/stat -> cpu_stat
 * (per CPU, ticks * ns per USER_HZ), num_irq_total/num_irq,
 * num_softirq_total/num_softirq, num_forks. The /proc root is a parameter.
 */
#ifndef TB_PROBES_SYSSTATS_H
#define TB_PROBES_SYSSTATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "pb.h"
#include "pb_fields.h"
#include "tracing.h"

#define PROBES_MEMINFO_MAX_KEY 63 /* MeminfoCounters values fit a uint64 mask */
#define PROBES_VMSTAT_MAX_KEY 255 /* VmstatCounters values fit 4 uint64 words */

/* SysStatsConfig.StatCounters bits (1 << value). */
enum {
	PROBES_STAT_CPU_TIMES = PB_E_SysStatsConfig_StatCounters_STAT_CPU_TIMES,
	PROBES_STAT_IRQ_COUNTS = PB_E_SysStatsConfig_StatCounters_STAT_IRQ_COUNTS,
	PROBES_STAT_SOFTIRQ_COUNTS = PB_E_SysStatsConfig_StatCounters_STAT_SOFTIRQ_COUNTS,
	PROBES_STAT_FORK_COUNT = PB_E_SysStatsConfig_StatCounters_STAT_FORK_COUNT,
};

/* The SysStatsConfig fields we act on (DataSourceConfig field 104). An
 * absent counter list enables every counter, as in Perfetto. Periods are
 * clamped to at least 10 ms; 0 disables a source. */
struct probes_sysstats_config {
	uint32_t meminfo_period_ms, vmstat_period_ms, stat_period_ms;
	uint64_t meminfo_mask;   /* bit k: MeminfoCounters k enabled */
	uint64_t vmstat_mask[4]; /* bit k: VmstatCounters k enabled */
	uint32_t stat_mask;      /* bit k: StatCounters k enabled */
	/* Derived by parse: the tick period and each source's tick divisor
	 * (0 = off). All zero when nothing is polled or the periods are not
	 * multiples of the smallest (Perfetto then polls nothing either). */
	uint32_t tick_ms, meminfo_ticks, vmstat_ticks, stat_ticks;
};

/* Decode the sys_stats_config of a serialized DataSourceConfig (borrowed).
 * Pure. */
void probes_sysstats_config_parse(const uint8_t *ds_config, size_t len,
                                  struct probes_sysstats_config *out);

/* MeminfoCounters value of a /proc/meminfo key ("MemTotal", "Active(anon)")
 * or 0 when Perfetto has none. Pure. */
int probes_sysstats_meminfo_key(const char *name, size_t len);

/* VmstatCounters value of a /proc/vmstat key ("nr_free_pages") or 0. Pure. */
int probes_sysstats_vmstat_key(const char *name, size_t len);

/* Append to w (inside a SysStats) the entries for one file's text (NUL-
 * terminated, borrowed), filtered by cfg. ns_per_tick converts /proc/stat
 * cpu times (1e9 / sysconf(_SC_CLK_TCK)). Malformed lines are skipped. */
void probes_sysstats_write_meminfo(struct pb_writer *w, const char *text,
                                   const struct probes_sysstats_config *cfg);
void probes_sysstats_write_vmstat(struct pb_writer *w, const char *text,
                                  const struct probes_sysstats_config *cfg);
void probes_sysstats_write_stat(struct pb_writer *w, const char *text,
                                const struct probes_sysstats_config *cfg, uint64_t ns_per_tick);

/* The body of tick number `tick` into w (inside a SysStats): the sources
 * due on that tick, read from root/{meminfo,vmstat,stat}, then
 * collection_end_timestamp. Unreadable files are skipped. */
void probes_sysstats_collect(struct pb_writer *w, const char *root,
                             const struct probes_sysstats_config *cfg, uint64_t tick);

/* ---- the data source ------------------------------------------------------ */

struct probes_sys_stats; /* opaque */

/* A linux.sys_stats instance writing through w (borrowed) on l, configured
 * by the serialized DataSourceConfig cfg (borrowed for the call), reading
 * root (copied; NULL = /proc). Never NULL. Loop thread only. */
struct probes_sys_stats *probes_sys_stats_new(struct loop *l, struct tracing_writer *w,
                                              const uint8_t *cfg, size_t len, const char *root);

/* Write the first tick now and schedule the next ones on the wall-clock
 * multiples of the tick period (as Perfetto does). */
void probes_sys_stats_start(struct probes_sys_stats *s);

/* Cancel the timer and free. NULL is a no-op. Does not touch the writer. */
void probes_sys_stats_free(struct probes_sys_stats *s);

#endif /* TB_PROBES_SYSSTATS_H */
