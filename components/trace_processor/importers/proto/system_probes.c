/*
 * SysStats (TracePacket field 7), ProcessStats (field 9) and ProcessTree
 * (field 2, at the end of this file) at parse time:
 * the linux.sys_stats and linux.process_stats data sources' polled values
 * become counters at the packet's timestamp, on tracks named, typed and
 * scaled as Perfetto's SystemProbesParser does (ParseSysStats,
 * ParseProcessStats; names from tracks_common.h and sys_stats_counters.h):
 *
 *   type              name                         dims   unit   value
 *   meminfo           MemTotal, Active(anon), ...  -      bytes  kB * 1024
 *   vmstat            nr_free_pages, ...           -      -      as is
 *   cpustat           cpu.times.<field>            cpu    -      ns
 *   num_irq           num_irq (id: N)              -      -      count
 *   num_softirq       num_softirq (id: N)          -      -      count
 *   num_forks, num_irq_total, num_softirq_total    -      -      count
 *   psi               psi.cpu.some, ...            -      -      total ns
 *   thermal_temperature_sys  <zone type>           -      C
 *   cpu_idle_state    cpuidle<N>.<state>           cpu    us
 *   process_memory    mem.virt, mem.rss, ...       upid   -      kB * 1024
 *   smaps             mem.smaps.rss, ...           upid   -      kB * 1024
 *   oom_score_adj     oom_score_adj                upid   -
 *   proc_stat_runtime runtime.user_ns / kernel_ns  upid   -
 *
 * Sub-messages are handled in Perfetto's order (all meminfo values, then
 * vmstat, ...) so counter rows of one packet come out in the same order.
 *   diskstat          diskstat.[<dev>].<counter>   -      MB, MB/s, count, ms
 *   gpu_frequency     gpufreq                      -      kHz    MHz (sic)
 *
 * cpu_idle_state and diskstat tracks carry Perfetto's dimension args (cpu,
 * state; device_name, counter_name). Not yet imported: devfreq,
 * cpufreq_khz, buddy_info, slab_info, cgroup, ProcessStats fds.
 */
#include "proto_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "protos.h"
#include "pb_fields.h"

/* Perfetto's kMeminfoKeys (include/perfetto/ext/traced/sys_stats_counters.h),
 * indexed by MeminfoCounters value: /proc/meminfo's own spelling, which the
 * enum names do not carry (COMMITED_AS = "Committed_AS"). Keys past the end
 * are unknown to Perfetto too and are skipped. */
static const char *const meminfo_names[] = {
    "MemUnspecified", "MemTotal",     "MemFree",        "MemAvailable", "Buffers",
    "Cached",         "SwapCached",   "Active",         "Inactive",     "Active(anon)",
    "Inactive(anon)", "Active(file)", "Inactive(file)", "Unevictable",  "Mlocked",
    "SwapTotal",      "SwapFree",     "Dirty",          "Writeback",    "AnonPages",
    "Mapped",         "Shmem",        "Slab",           "SReclaimable", "SUnreclaim",
    "KernelStack",    "PageTables",   "CommitLimit",    "Committed_AS", "VmallocTotal",
    "VmallocUsed",    "VmallocChunk", "CmaTotal",       "CmaFree",
};

/* A counter track: the same (type, name, dims) gives the same track. */
static uint32_t counter_track(struct tp *tp, const char *type, const char *name, int64_t upid,
                              int64_t cpu, uint64_t extra_dim, const char *unit)
{
	struct tp_track_key key = {
	    .type = type,
	    .event_type = "counter",
	    .utid = -1,
	    .upid = upid,
	    .cpu = cpu,
	    .extra_dim = extra_dim,
	    .name = tp_intern_cstr(tp, name),
	};
	uint32_t id = tp_track_get(tp, &key);
	if (unit && !tp->t.track.unit[id])
		tp->t.track.unit[id] = tp_intern_cstr(tp, unit);
	return id;
}

static void push(struct tp *tp, int64_t ts, uint32_t track, double v)
{
	tp_counter_add(tp, track, ts, v, TP_NULL_U32);
}

/* VmstatCounters value -> Perfetto's name: the enum name without "VMSTAT_",
 * lower case (kVmstatKeys spells every key that way), "VmstatUnspecified"
 * for 0. False for a value the enum does not have. */
static bool vmstat_name(uint64_t key, char *buf, size_t cap)
{
	if (key == 0) {
		snprintf(buf, cap, "VmstatUnspecified");
		return true;
	}
	if (key > INT32_MAX)
		return false;
	const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(
	    &perfetto__protos__vmstat_counters__descriptor, (int)key);
	if (!v || strncmp(v->name, "VMSTAT_", 7) != 0)
		return false;
	size_t i = 0;
	for (const char *s = v->name + 7; *s && i + 1 < cap; s++)
		buf[i++] = (char)(*s >= 'A' && *s <= 'Z' ? *s - 'A' + 'a' : *s);
	buf[i] = 0;
	return true;
}

/* A {key = 1, value = 2} pair message (MeminfoValue, VmstatValue,
 * InterruptCount, DevfreqValue's numeric part). */
static void key_value(const struct pb_field *f, uint64_t *key, uint64_t *val)
{
	struct pb_field k = {0};
	*key = *val = 0;
	if (pb_find_field(f->data, f->len, PB_F_SysStats_MeminfoValue_key, &k) == 1 &&
	    k.wire == PB_WIRE_VARINT)
		*key = k.val;
	if (pb_find_field(f->data, f->len, PB_F_SysStats_MeminfoValue_value, &k) == 1 &&
	    k.wire == PB_WIRE_VARINT)
		*val = k.val;
}

static void cpu_times(struct tp *tp, int64_t ts, const struct pb_field *f)
{
#define CPU_TIMES_(name) [PB_F_SysStats_CpuTimes_##name] = "cpu.times." #name
	static const char *const names[] = {
	    CPU_TIMES_(user_ns),    CPU_TIMES_(user_nice_ns), CPU_TIMES_(system_mode_ns),
	    CPU_TIMES_(idle_ns),    CPU_TIMES_(io_wait_ns),   CPU_TIMES_(irq_ns),
	    CPU_TIMES_(softirq_ns), CPU_TIMES_(steal_ns),
	};
#undef CPU_TIMES_
	uint64_t v[PB_F_SysStats_CpuTimes_steal_ns + 1] = {0};
	bool has_cpu = false;
	struct pb_reader r;
	struct pb_field c = {0};
	pb_reader_init_field(&r, f);
	while (pb_next(&r, &c)) {
		if (c.wire != PB_WIRE_VARINT || c.id < PB_F_SysStats_CpuTimes_cpu_id ||
		    c.id > PB_F_SysStats_CpuTimes_steal_ns)
			continue;
		v[c.id] = c.val;
		has_cpu |= c.id == PB_F_SysStats_CpuTimes_cpu_id;
	}
	if (!has_cpu) /* Perfetto: invalid_cpu_times */
		return;
	uint32_t cpu = (uint32_t)v[PB_F_SysStats_CpuTimes_cpu_id];
	for (unsigned i = PB_F_SysStats_CpuTimes_user_ns; i <= PB_F_SysStats_CpuTimes_steal_ns;
	     i++) {
		uint32_t track = counter_track(tp, "cpustat", names[i], -1, cpu, 0, NULL);
		if (tp->t.track.dimension_arg_set_id[track] == TP_NULL_U32) {
			/* Perfetto's dimensions: the cpu and the field ("idle_ns"). */
			uint32_t kc = tp_intern_cstr(tp, "cpu"),
			         kk = tp_intern_cstr(tp, "cpustat_key");
			tp_args_begin(&tp->args_scratch);
			tp_args_add_int(&tp->args_scratch, kc, kc, cpu);
			tp_args_add_string(&tp->args_scratch, kk, kk,
			                   tp_intern_cstr(tp, names[i] + strlen("cpu.times.")));
			tp->t.track.dimension_arg_set_id[track] =
			    tp_args_commit(tp, &tp->args_scratch);
		}
		push(tp, ts, track, (double)v[i]);
	}
}

static const char *psi_key(uint64_t resource)
{
	static const char *const keys[] = {"resource.unspecified",
	                                   "cpu.some",
	                                   "cpu.full",
	                                   "io.some",
	                                   "io.full",
	                                   "mem.some",
	                                   "mem.full"};
	return resource < sizeof keys / sizeof keys[0] ? keys[resource] : NULL;
}

/* Perfetto's dimension args of a blueprint track, set once when the track is
 * new: (key, value) pairs, an int when str is NULL. */
struct dim {
	const char *key;
	const char *str;
	int64_t num;
};

static void track_dims(struct proto_importer *im, uint32_t track, const struct dim *d, size_t n)
{
	struct tp *tp = im->tp;
	if (tp->t.track.dimension_arg_set_id[track] != TP_NULL_U32)
		return;
	tp_args_begin(&im->args);
	for (size_t i = 0; i < n; i++) {
		uint32_t k = tp_intern_cstr(tp, d[i].key);
		if (d[i].str)
			tp_args_add_string(&im->args, k, k, tp_intern_cstr(tp, d[i].str));
		else
			tp_args_add_int(&im->args, k, k, d[i].num);
	}
	tp->t.track.dimension_arg_set_id[track] = tp_args_commit(tp, &im->args);
}

static void cpuidle(struct proto_importer *im, int64_t ts, const struct pb_field *f)
{
	struct tp *tp = im->tp;
	struct pb_field c = {0};
	uint32_t cpu = 0;
	if (pb_find_field(f->data, f->len, PB_F_SysStats_CpuIdleState_cpu_id, &c) == 1 &&
	    c.wire == PB_WIRE_VARINT)
		cpu = (uint32_t)c.val;
	struct pb_reader r;
	pb_reader_init_field(&r, f);
	while (pb_next(&r, &c)) {
		if (c.id != PB_F_SysStats_CpuIdleState_cpuidle_state_entry || c.wire != PB_WIRE_LEN)
			continue;
		struct pb_field s = {0}, d = {0};
		char state[257] = "";
		if (pb_find_field(c.data, c.len, PB_F_SysStats_CpuIdleStateEntry_state, &s) == 1 &&
		    s.wire == PB_WIRE_LEN)
			snprintf(state, sizeof state, "%.*s", s.len > 256 ? 256 : (int)s.len,
			         (const char *)s.data);
		uint64_t us = 0;
		if (pb_find_field(c.data, c.len, PB_F_SysStats_CpuIdleStateEntry_duration_us, &d) ==
		        1 &&
		    d.wire == PB_WIRE_VARINT)
			us = d.val;
		char name[300];
		snprintf(name, sizeof name, "cpuidle%u.%s", cpu, state);
		uint32_t track = counter_track(tp, "cpu_idle_state", name, -1, cpu, 0, "us");
		track_dims(im, track, (struct dim[]){{"cpu", NULL, cpu}, {"state", state, 0}}, 2);
		push(tp, ts, track, (double)us);
	}
}

/* A DiskStat: from a device's second sample on, the change since the
 * previous one as Perfetto's ParseDiskStats (MB from 512-byte sectors,
 * MB/s over the time the kernel spent on them). */
static void disk_stat(struct proto_importer *im, int64_t ts, const struct pb_field *f)
{
	static const struct {
		const char *name, *unit;
	} counters[] = {
	    {"read_amount", "MB"},     {"read_throughput", "MB/s"},
	    {"write_amount", "MB"},    {"write_throughput", "MB/s"},
	    {"discard_amount", "MB"},  {"discard_throughput", "MB/s"},
	    {"flush_amount", "count"}, {"flush_time", "ms"},
	};
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field c = {0};
	struct proto_disk_prev cur = {{0}};
	uint32_t dev = tp_intern(tp, "", 0);
	pb_reader_init_field(&r, f);
	while (pb_next(&r, &c)) {
		if (c.id == PB_F_SysStats_DiskStat_device_name && c.wire == PB_WIRE_LEN)
			dev = tp_intern(tp, (const char *)c.data, c.len);
		else if (c.id >= PB_F_SysStats_DiskStat_read_sectors &&
		         c.id <= PB_F_SysStats_DiskStat_flush_time_ms && c.wire == PB_WIRE_VARINT)
			cur.v[c.id] = (int64_t)c.val;
	}
	bool is_new;
	uint64_t *slot = hmap_upsert(&im->disk_by_name, dev, &is_new);
	if (is_new) {
		*slot = im->disks.len;
		vec_push(&im->disks, cur);
		return;
	}
	struct proto_disk_prev *prev = &im->disks.data[*slot];
	int64_t dv[10];
	for (int i = 2; i <= 9; i++)
		dv[i] = cur.v[i] - prev->v[i];
	*prev = cur;
	/* sectors (fields 2, 4, 6) over their times (3, 5, 7) */
	double v[8];
	for (int i = 0; i < 3; i++) {
		double mb = (double)dv[2 + 2 * i] / 2048.0;
		int64_t ms = dv[3 + 2 * i];
		v[2 * i] = mb;
		v[2 * i + 1] = ms == 0 ? 0 : mb * 1000.0 / (double)ms;
	}
	v[6] = (double)dv[8];
	v[7] = (double)dv[9];
	const char *dname = tp_str(tp, dev);
	if (!dname)
		dname = "";
	for (size_t i = 0; i < TB_ARRAY_SIZE(counters); i++) {
		char name[320];
		snprintf(name, sizeof name, "diskstat.[%.256s].%s", dname, counters[i].name);
		uint32_t track = counter_track(tp, "diskstat", name, -1, -1, 0, counters[i].unit);
		track_dims(im, track,
		           (struct dim[]){{"device_name", dname, 0},
		                          {"counter_name", counters[i].name, 0}},
		           2);
		push(tp, ts, track, v[i]);
	}
}

void tp_proto_sys_stats_parse(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	uint64_t key, val;
	char name[96];

	/* One pass per kind, in ParseSysStats' order. */
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_SysStats_meminfo || f.wire != PB_WIRE_LEN)
			continue;
		key_value(&f, &key, &val);
		if (key >= sizeof meminfo_names / sizeof meminfo_names[0])
			continue; /* Perfetto: meminfo_unknown_keys */
		push(tp, ts, counter_track(tp, "meminfo", meminfo_names[key], -1, -1, 0, "bytes"),
		     (double)val * 1024);
	}
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_SysStats_vmstat || f.wire != PB_WIRE_LEN)
			continue;
		key_value(&f, &key, &val);
		if (!vmstat_name(key, name, sizeof name))
			continue; /* Perfetto: vmstat_unknown_keys */
		push(tp, ts, counter_track(tp, "vmstat", name, -1, -1, 0, NULL), (double)val);
	}
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_SysStats_cpu_stat && f.wire == PB_WIRE_LEN)
			cpu_times(tp, ts, &f);
	for (int k = 0; k < 2; k++) {
		uint32_t id = k ? PB_F_SysStats_num_softirq : PB_F_SysStats_num_irq;
		const char *type = k ? "num_softirq" : "num_irq";
		pb_reader_init(&r, p, n);
		while (pb_next(&r, &f)) {
			if (f.id != id || f.wire != PB_WIRE_LEN)
				continue;
			key_value(&f, &key, &val);
			snprintf(name, sizeof name, "%s (id: %u)", type, (uint32_t)key);
			push(tp, ts, counter_track(tp, type, name, -1, -1, (uint32_t)key, NULL),
			     (double)val);
		}
	}
	static const struct {
		uint32_t id;
		const char *name;
	} totals[] = {{PB_F_SysStats_num_forks, "num_forks"},
	              {PB_F_SysStats_num_irq_total, "num_irq_total"},
	              {PB_F_SysStats_num_softirq_total, "num_softirq_total"}};
	for (size_t i = 0; i < sizeof totals / sizeof totals[0]; i++)
		if (pb_find_field(p, n, totals[i].id, &f) == 1 && f.wire == PB_WIRE_VARINT)
			push(tp, ts,
			     counter_track(tp, totals[i].name, totals[i].name, -1, -1, 0, NULL),
			     (double)f.val);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_SysStats_disk_stat && f.wire == PB_WIRE_LEN)
			disk_stat(im, ts, &f);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_SysStats_psi || f.wire != PB_WIRE_LEN)
			continue;
		key_value(&f, &key, &val);
		const char *res = psi_key(key);
		if (!res)
			return; /* as Perfetto (psi_unknown_resource): the rest is lost */
		snprintf(name, sizeof name, "psi.%s", res);
		push(tp, ts, counter_track(tp, "psi", name, -1, -1, 0, NULL), (double)val);
	}
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_SysStats_thermal_zone || f.wire != PB_WIRE_LEN)
			continue;
		struct pb_field t = {0};
		uint64_t temp = 0;
		uint32_t zone = tp_intern(tp, "", 0);
		if (pb_find_field(f.data, f.len, PB_F_SysStats_ThermalZone_type, &t) == 1 &&
		    t.wire == PB_WIRE_LEN)
			zone = tp_intern(tp, (const char *)t.data, t.len);
		if (pb_find_field(f.data, f.len, PB_F_SysStats_ThermalZone_temp, &t) == 1 &&
		    t.wire == PB_WIRE_VARINT)
			temp = t.val;
		push(tp, ts,
		     counter_track(tp, "thermal_temperature_sys", tp_str(tp, zone), -1, -1, 0, "C"),
		     (double)temp);
	}
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_SysStats_cpuidle_state && f.wire == PB_WIRE_LEN)
			cpuidle(im, ts, &f);
	/* gpufreq_mhz (packed or not): gpu 0's frequency; Perfetto's track says
	 * kHz. */
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_SysStats_gpufreq_mhz)
			continue;
		struct pb_varints it;
		uint64_t v;
		for (pb_varints_init(&it, &f); pb_varints_next(&it, &v);) {
			uint32_t track =
			    counter_track(tp, "gpu_frequency", "gpufreq", -1, -1, 0, "kHz");
			track_dims(im, track, (struct dim[]){{"ugpu", NULL, 0}, {"gpu", NULL, 0}},
			           2);
			push(tp, ts, track, (double)v);
		}
	}
}

/* ProcessStats.Process field -> "mem.<key>" (GetProcessMemoryKey) or
 * "mem.smaps.<key>" (GetSmapsKey); NULL otherwise. */
static const char *process_memory_name(uint32_t id, const char **type)
{
	static const char *const mem[] = {
	    [PB_F_ProcessStats_Process_vm_size_kb] = "mem.virt",
	    [PB_F_ProcessStats_Process_vm_rss_kb] = "mem.rss",
	    [PB_F_ProcessStats_Process_rss_anon_kb] = "mem.rss.anon",
	    [PB_F_ProcessStats_Process_rss_file_kb] = "mem.rss.file",
	    [PB_F_ProcessStats_Process_rss_shmem_kb] = "mem.rss.shmem",
	    [PB_F_ProcessStats_Process_vm_swap_kb] = "mem.swap",
	    [PB_F_ProcessStats_Process_vm_locked_kb] = "mem.locked",
	    [PB_F_ProcessStats_Process_vm_hwm_kb] = "mem.rss.watermark",
	    [PB_F_ProcessStats_Process_dmabuf_rss_kb] = "mem.dmabuf_rss",
	    [PB_F_ProcessStats_Process_smr_rss_kb] = "mem.smaps.rss",
	    [PB_F_ProcessStats_Process_smr_pss_kb] = "mem.smaps.pss",
	    [PB_F_ProcessStats_Process_smr_pss_anon_kb] = "mem.smaps.pss.anon",
	    [PB_F_ProcessStats_Process_smr_pss_file_kb] = "mem.smaps.pss.file",
	    [PB_F_ProcessStats_Process_smr_pss_shmem_kb] = "mem.smaps.pss.smem",
	    [PB_F_ProcessStats_Process_smr_swap_pss_kb] = "mem.smaps.swap.pss",
	};
	if (id >= sizeof mem / sizeof mem[0] || !mem[id])
		return NULL;
	*type = id >= PB_F_ProcessStats_Process_smr_rss_kb &&
	                id <= PB_F_ProcessStats_Process_smr_swap_pss_kb
	            ? "smaps"
	            : "process_memory";
	return mem[id];
}

static void process_stats_process(struct tp *tp, int64_t ts, const uint8_t *p, size_t n)
{
	struct pb_field f = {0};
	int64_t pid = 0;
	if (pb_find_field(p, n, PB_F_ProcessStats_Process_pid, &f) == 1 && f.wire == PB_WIRE_VARINT)
		pid = (uint32_t)f.val;
	struct pb_reader r;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ProcessStats_Process_pid ||
		    f.id == PB_F_ProcessStats_Process_is_peak_rss_resettable ||
		    f.id == PB_F_ProcessStats_Process_chrome_private_footprint_kb ||
		    f.id == PB_F_ProcessStats_Process_fds)
			continue; /* pid; chrome fields; fds (no filedescriptor table yet) */
		if (f.id == PB_F_ProcessStats_Process_threads) {
			struct pb_field t = {0};
			if (f.wire == PB_WIRE_LEN &&
			    pb_find_field(f.data, f.len, PB_F_ProcessStats_Thread_tid, &t) == 1 &&
			    t.wire == PB_WIRE_VARINT)
				tp_thread_for_tid(tp, (int32_t)t.val, pid);
			continue;
		}
		uint32_t upid = tp_process_for_pid(tp, pid);
		if (f.wire != PB_WIRE_VARINT)
			continue;
		const char *type = NULL;
		const char *name = process_memory_name(f.id, &type);
		if (f.id == PB_F_ProcessStats_Process_oom_score_adj) {
			push(tp, ts,
			     counter_track(tp, "oom_score_adj", "oom_score_adj", upid, -1, 0, NULL),
			     (double)(int64_t)f.val);
		} else if (name) {
			/* kB, kept in bytes */
			push(tp, ts, counter_track(tp, type, name, upid, -1, 0, NULL),
			     (double)((int64_t)f.val * 1024));
		} else if (f.id == PB_F_ProcessStats_Process_runtime_user_mode ||
		           f.id == PB_F_ProcessStats_Process_runtime_kernel_mode) {
			push(tp, ts,
			     counter_track(tp, "proc_stat_runtime",
			                   f.id == PB_F_ProcessStats_Process_runtime_user_mode
			                       ? "runtime.user_ns"
			                       : "runtime.kernel_ns",
			                   upid, -1, 0, NULL),
			     (double)(int64_t)f.val);
		}
		/* else Perfetto: proc_stat_unknown_counters */
	}
}

void tp_proto_process_stats_parse(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_ProcessStats_processes && f.wire == PB_WIRE_LEN)
			process_stats_process(im->tp, ts, f.data, f.len);
}

/* ---- InterruptInfo (TracePacket field 130) ------------------------------------ */

/* Each irq_mapping {irq_id, name} with both, the first of an irq_id on this
 * machine (one importer per machine), as Perfetto's SystemProbesParser. */
void tp_proto_interrupt_info_parse(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct tp_interrupt_mapping_table *t = &tp->t.interrupt_mapping;
	struct pb_reader r;
	struct pb_field f = {0}, id, name;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_InterruptInfo_irq_mapping || f.wire != PB_WIRE_LEN)
			continue;
		if (pb_find_field(f.data, f.len, PB_F_InterruptInfo_InterruptMapping_irq_id, &id) !=
		        1 ||
		    id.wire != PB_WIRE_VARINT ||
		    pb_find_field(f.data, f.len, PB_F_InterruptInfo_InterruptMapping_name, &name) !=
		        1 ||
		    name.wire != PB_WIRE_LEN)
			continue;
		uint32_t irq = (uint32_t)id.val;
		if (hmap_get(&im->irq_ids, irq, NULL))
			continue;
		hmap_put(&im->irq_ids, irq, 1);
		uint32_t row = tp_interrupt_mapping_append(t);
		t->irq_id[row] = irq;
		t->name[row] = tp_intern(tp, (const char *)name.data, name.len);
		t->machine_id[row] = tp->machine;
	}
}

/* ---- PackagesList (47) and AndroidUserList (123) ----------------------------- */

/* Each package a package_list row, the first of a name only; the error
 * flags set stats (as Perfetto's AndroidProbesModule). */
void tp_proto_packages_list_parse(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0}, g = {0};
	pb_reader_init(&r, p, n);
	bool parse_error = false, read_error = false;
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_PackagesList_parse_error && f.wire == PB_WIRE_VARINT)
			parse_error = f.val != 0;
		else if (f.id == PB_F_PackagesList_read_error && f.wire == PB_WIRE_VARINT)
			read_error = f.val != 0;
		if (f.id != PB_F_PackagesList_packages || f.wire != PB_WIRE_LEN)
			continue;
		uint32_t name = 0;
		int64_t uid = 0, debuggable = 0, profileable = 0, version = 0;
		struct pb_reader pr;
		pb_reader_init(&pr, f.data, f.len);
		while (pb_next(&pr, &g)) {
			if (g.id == PB_F_PackagesList_PackageInfo_name && g.wire == PB_WIRE_LEN)
				name = tp_intern(tp, (const char *)g.data, g.len);
			else if (g.wire != PB_WIRE_VARINT)
				continue;
			else if (g.id == PB_F_PackagesList_PackageInfo_uid)
				uid = (int64_t)g.val;
			else if (g.id == PB_F_PackagesList_PackageInfo_debuggable)
				debuggable = g.val != 0;
			else if (g.id == PB_F_PackagesList_PackageInfo_profileable_from_shell)
				profileable = g.val != 0;
			else if (g.id == PB_F_PackagesList_PackageInfo_version_code)
				version = (int64_t)g.val;
		}
		if (!hmap_put(&im->packages_seen, name, 1))
			continue;
		struct tp_package_list_table *t = &tp->t.package_list;
		uint32_t row = tp_package_list_append(t);
		t->package_name[row] = name;
		t->uid[row] = uid;
		t->debuggable[row] = debuggable;
		t->profileable_from_shell[row] = profileable;
		t->version_code[row] = version;
	}
	tp_stat_set(tp, TP_STAT_packages_list_has_parse_errors, parse_error);
	tp_stat_set(tp, TP_STAT_packages_list_has_read_errors, read_error);
}

/* Each user an android_user_list row; a user seen again gets the new
 * type. A negative error counts in user_list_errors. */
void tp_proto_user_list_parse(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0}, g = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_AndroidUserList_error && f.wire == PB_WIRE_VARINT &&
		    (int32_t)f.val < 0)
			tp_stat_inc(tp, TP_STAT_user_list_errors);
		if (f.id != PB_F_AndroidUserList_users || f.wire != PB_WIRE_LEN)
			continue;
		uint32_t type = 0;
		int64_t uid = 0;
		struct pb_reader ur;
		pb_reader_init(&ur, f.data, f.len);
		while (pb_next(&ur, &g)) {
			if (g.id == PB_F_AndroidUserList_UserInfo_type && g.wire == PB_WIRE_LEN)
				type = tp_intern(tp, (const char *)g.data, g.len);
			else if (g.id == PB_F_AndroidUserList_UserInfo_uid &&
			         g.wire == PB_WIRE_VARINT)
				uid = (int32_t)g.val;
		}
		struct tp_android_user_list_table *t = &tp->t.android_user_list;
		uint64_t row;
		if (!hmap_get(&im->user_rows, (uint64_t)uid, &row)) {
			row = tp_android_user_list_append(t);
			t->android_user_id[row] = uid;
			hmap_put(&im->user_rows, (uint64_t)uid, row);
		}
		t->type[row] = type;
	}
}

/* ---- CpuInfo (TracePacket field 67) ------------------------------------------- */

/* Perfetto's kCpuInfoFeatures allowlist: bit i of Cpu.features is the
 * cpu_features.<name> arg. */
static const char *const cpu_feature_names[] = {"mte", "mte3"};

struct cpu_desc {
	struct pb_field cpu; /* the Cpu message */
	uint32_t capacity, max_freq;
	bool has_capacity, has_freq;
};

/* Cluster ids as Perfetto's SystemProbesParser: cpus of equal capacity (if
 * every cpu has one), else of equal maximum frequency (if every cpu lists
 * frequencies), share a cluster, numbered from the smallest; else 0. */
static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void cpu_clusters(const struct cpu_desc *d, uint32_t n, uint32_t *cluster)
{
	bool caps = true, freqs = true;
	for (uint32_t i = 0; i < n; i++) {
		caps &= d[i].has_capacity;
		freqs &= d[i].has_freq;
	}
	if (!caps && !freqs) {
		memset(cluster, 0, n * sizeof *cluster);
		return;
	}
	/* The cluster is the rank of the cpu's key among the distinct keys. */
	uint32_t *keys = tb_calloc(n, sizeof *keys);
	for (uint32_t i = 0; i < n; i++)
		keys[i] = caps ? d[i].capacity : d[i].max_freq;
	qsort(keys, n, sizeof *keys, cmp_u32);
	uint32_t nkeys = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!nkeys || keys[nkeys - 1] != keys[i])
			keys[nkeys++] = keys[i];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t key = caps ? d[i].capacity : d[i].max_freq;
		uint32_t *at = bsearch(&key, keys, nkeys, sizeof *keys, cmp_u32);
		cluster[i] = (uint32_t)(at - keys);
	}
	tb_free(keys);
}

/* The order Perfetto fills the tables in: by capacity when every cpu has
 * one (cpus of equal capacity in cpu order), else by cpu. */
static void cpu_order(const struct cpu_desc *d, uint32_t n, uint32_t *order)
{
	bool caps = true;
	for (uint32_t i = 0; i < n; i++)
		caps &= d[i].has_capacity;
	for (uint32_t i = 0; i < n; i++) {
		/* Insertion: stable, and n is a cpu count. */
		uint32_t j = i;
		while (caps && j > 0 && d[order[j - 1]].capacity > d[i].capacity) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
	}
}

/* A cpu_freq row of ucpu for each of the Cpu's frequencies (field 2, packed
 * or not), in their order. */
static void cpu_freqs(struct tp *tp, uint32_t ucpu, const struct pb_field *cpu)
{
	struct tp_cpu_freq_table *t = &tp->t.cpu_freq;
	struct pb_reader r;
	struct pb_field f = {0};
	uint64_t v;
	pb_reader_init_field(&r, cpu);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_CpuInfo_Cpu_frequencies)
			continue;
		if (f.wire == PB_WIRE_VARINT) {
			uint32_t row = tp_cpu_freq_append(t);
			t->ucpu[row] = ucpu;
			t->freq[row] = (uint32_t)f.val;
		} else if (f.wire == PB_WIRE_LEN) {
			struct pb_packed it;
			pb_packed_init(&it, f.data, f.len, PB_WIRE_VARINT);
			while (pb_packed_next(&it, &v)) {
				uint32_t row = tp_cpu_freq_append(t);
				t->ucpu[row] = ucpu;
				t->freq[row] = (uint32_t)v;
			}
		}
	}
}

static void cpu_args(struct proto_importer *im, uint32_t ucpu, const struct pb_field *cpu)
{
	static const char *const arm_keys[] = {
	    NULL,           "arm_cpu_implementer", "arm_cpu_architecture", "arm_cpu_variant",
	    "arm_cpu_part", "arm_cpu_revision"};
	struct tp *tp = im->tp;
	struct tp_args_builder *b = &im->args;
	struct pb_field f = {0}, a = {0};
	uint64_t features = 0;
	uint32_t k;
	tp_args_begin(b);
	if (pb_find_field(cpu->data, cpu->len, PB_F_CpuInfo_Cpu_arm_identifier, &f) == 1 &&
	    f.wire == PB_WIRE_LEN) {
		for (uint32_t id = PB_F_CpuInfo_ArmCpuIdentifier_implementer;
		     id <= PB_F_CpuInfo_ArmCpuIdentifier_revision; id++) {
			uint64_t v = 0;
			if (pb_find_field(f.data, f.len, id, &a) == 1 && a.wire == PB_WIRE_VARINT)
				v = (uint32_t)a.val;
			k = tp_intern_cstr(tp, arm_keys[id]);
			tp_args_add_uint(b, k, k, v);
		}
	}
	if (pb_find_field(cpu->data, cpu->len, PB_F_CpuInfo_Cpu_features, &f) == 1 &&
	    f.wire == PB_WIRE_VARINT)
		features = f.val;
	uint32_t nnamed = TB_ARRAY_SIZE(cpu_feature_names);
	for (uint32_t i = 0; i < nnamed; i++) {
		if (!(features & (1ull << i)))
			continue;
		char key[64];
		snprintf(key, sizeof key, "cpu_features.%s", cpu_feature_names[i]);
		k = tp_intern_cstr(tp, key);
		tp_args_add_bool(b, k, k, true);
	}
	if (features) {
		k = tp_intern_cstr(tp, "cpu_features.raw_bitmap");
		tp_args_add_uint(b, k, k, features);
	}
	if (features >> nnamed)
		tp_stat_inc(tp, TP_STAT_cpu_info_unknown_cpu_features);
	uint32_t set = tp_args_commit(tp, b);
	if (set != TP_NULL_U32)
		tp->t.cpu.arg_set_id[ucpu] = set;
}

void tp_proto_cpu_info_parse(struct proto_importer *im, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	VEC(struct cpu_desc) cpus = {0};
	struct pb_reader r, cr;
	struct pb_field f = {0}, c = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_CpuInfo_cpus || f.wire != PB_WIRE_LEN)
			continue;
		struct cpu_desc d = {.cpu = f};
		pb_reader_init_field(&cr, &f);
		while (pb_next(&cr, &c)) {
			uint64_t v;
			if (c.id == PB_F_CpuInfo_Cpu_capacity && c.wire == PB_WIRE_VARINT) {
				d.capacity = (uint32_t)c.val;
				d.has_capacity = true;
			} else if (c.id == PB_F_CpuInfo_Cpu_frequencies &&
			           c.wire == PB_WIRE_VARINT) {
				d.max_freq = d.has_freq && d.max_freq > (uint32_t)c.val
				                 ? d.max_freq
				                 : (uint32_t)c.val;
				d.has_freq = true;
			} else if (c.id == PB_F_CpuInfo_Cpu_frequencies &&
			           c.wire == PB_WIRE_LEN) { /* packed */
				struct pb_packed it;
				pb_packed_init(&it, c.data, c.len, PB_WIRE_VARINT);
				while (pb_packed_next(&it, &v)) {
					if (!d.has_freq || (uint32_t)v > d.max_freq)
						d.max_freq = (uint32_t)v;
					d.has_freq = true;
				}
			}
		}
		vec_push(&cpus, d);
	}
	if (!cpus.len) {
		tp_stat_inc(tp, TP_STAT_cpu_info_empty);
		vec_release(&cpus);
		return;
	}
	if (cpus.len > TP_MAX_CPUS) {
		tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
		cpus.len = TP_MAX_CPUS;
	}
	uint32_t ncpus = (uint32_t)cpus.len;
	uint32_t *cluster = tb_calloc(ncpus, sizeof *cluster);
	uint32_t *order = tb_calloc(ncpus, sizeof *order);
	cpu_clusters(cpus.data, ncpus, cluster);
	cpu_order(cpus.data, ncpus, order);
	struct tp_cpu_table *t = &tp->t.cpu;
	for (uint32_t o = 0; o < ncpus; o++) {
		uint32_t i = order[o];
		const struct pb_field *cpu = &cpus.data[i].cpu;
		uint32_t ucpu = tp_cpu_for(tp, i);
		if (pb_find_field(cpu->data, cpu->len, PB_F_CpuInfo_Cpu_processor, &c) == 1 &&
		    c.wire == PB_WIRE_LEN && c.len)
			t->processor[ucpu] = tp_intern(tp, (const char *)c.data, c.len);
		t->cluster_id[ucpu] = cluster[i];
		if (cpus.data[i].has_capacity)
			t->capacity[ucpu] = cpus.data[i].capacity;
		cpu_freqs(tp, ucpu, cpu);
		cpu_args(im, ucpu, cpu);
	}
	tb_free(order);
	tb_free(cluster);
	vec_release(&cpus);
}

/* ---- ProcessTree ------------------------------------------------------------ */

/* A workqueue worker's comm carries the last queue it ran work from
 * ("kworker/45:2-mm_percpu_wq", "kworker/1:0+events"): transient, so the
 * name is cut to the worker ("kworker/45:2"), as Perfetto does. Returns the
 * length to keep. */
static size_t kworker_name_len(const char *s, size_t n)
{
	if (n < 8 || memcmp(s, "kworker/", 8) != 0)
		return n;
	for (size_t i = 8; i < n; i++)
		if (s[i] == '-' || s[i] == '+')
			return i;
	return n;
}

#define KTHREADD_PID 2

static void process_tree_process(struct proto_importer *im, const struct proto_ev *ev,
                                 const uint8_t *p, size_t n, struct hmap *kthreads)
{
	struct tp *tp = im->tp;
	int64_t pid = 0, ppid = 0, uid = -1;
	bool cmdline_is_comm = false, has_age = false, has_kthread = false, is_kthread = false;
	uint64_t age = 0;
	const char *argv0 = NULL;
	size_t argv0_len = 0, nargs = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	proto_scratch_reset(im);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ProcessTree_Process_pid && f.wire == PB_WIRE_VARINT) {
			pid = (int32_t)f.val;
		} else if (f.id == PB_F_ProcessTree_Process_ppid && f.wire == PB_WIRE_VARINT) {
			ppid = (int32_t)f.val;
		} else if (f.id == PB_F_ProcessTree_Process_uid && f.wire == PB_WIRE_VARINT) {
			uid = (int32_t)f.val;
		} else if (f.id == PB_F_ProcessTree_Process_process_start_from_boot &&
		           f.wire == PB_WIRE_VARINT) {
			has_age = true;
			age = f.val;
		} else if (f.id == PB_F_ProcessTree_Process_is_kthread &&
		           f.wire == PB_WIRE_VARINT) {
			has_kthread = true;
			is_kthread = f.val != 0;
		} else if (f.id == PB_F_ProcessTree_Process_cmdline_is_comm &&
		           f.wire == PB_WIRE_VARINT) {
			cmdline_is_comm = f.val != 0;
		} else if (f.id == PB_F_ProcessTree_Process_cmdline && f.wire == PB_WIRE_LEN) {
			if (nargs++ == 0) {
				argv0 = (const char *)f.data;
				argv0_len = f.len;
			} else {
				tp_proto_scratch_add(im, " ", 1);
			}
			tp_proto_scratch_add(im, f.data, f.len);
		}
	}
	/* As Perfetto: a process without a cmdline is not described. */
	if (nargs == 0)
		return;
	const char *cmdline = im->scratch.data;
	size_t cmdline_len = im->scratch.len;
	if (ppid == KTHREADD_PID) {
		hmap_put(kthreads, (uint64_t)pid, 1);
		size_t k = kworker_name_len(argv0, argv0_len);
		if (k != argv0_len)
			cmdline = argv0, cmdline_len = argv0_len = k;
	}
	/* A lone cmdline element with spaces is a cmdline rewritten with
	 * spaces for NULs: the name is up to the first space. */
	if (nargs == 1) {
		const char *sp = memchr(argv0, ' ', argv0_len);
		if (sp)
			argv0_len = (size_t)(sp - argv0);
	}
	uint32_t parent = tp_process_for_pid(tp, ppid);
	uint32_t upid = tp_process_for_pid(tp, pid);
	struct tp_process_table *t = &tp->t.process;
	/* A changed parent is a reparenting: the first parent is kept. */
	if (t->parent_upid[upid] == TP_NULL_I64 && upid != parent)
		t->parent_upid[upid] = parent;
	tp_process_set_name(tp, upid, tp_intern(tp, argv0, argv0_len));
	uint32_t cmd = tp_intern(tp, cmdline, cmdline_len);
	t->cmdline[upid] = cmd;
	/* The cmdline is the comm (kernel threads): it names the thread too. */
	if (cmdline_is_comm)
		tp_thread_set_name_prio(tp, tp_thread_for_tid(tp, pid, pid), cmd,
		                        TP_NAME_PROCESS_TREE);
	t = &tp->t.process; /* the main thread may have grown the tables */
	if (uid >= 0) {
		/* Perfetto's SetProcessUid: the app id and user of any uid
		 * (UserHandle's arithmetic). */
		t->uid[upid] = uid;
		t->android_appid[upid] = uid % 100000;
		t->android_user_id[upid] = uid / 100000;
	}
	/* Age: the start in BOOTTIME (early kernel threads have 0). */
	int64_t start;
	if (has_age && t->start_ts[upid] == TP_NULL_I64 &&
	    tp_proto_clocks_to_trace(im->clocks, ev->seq_id, PROTO_CLOCK_BOOTTIME, age, &start))
		t->start_ts[upid] = start;
	if (has_kthread && t->arg_set_id[upid] == TP_NULL_U32) {
		uint32_t k = tp_intern_cstr(tp, "is_kthread");
		tp_args_begin(&im->args);
		tp_args_add_bool(&im->args, k, k, is_kthread);
		t->arg_set_id[upid] = tp_args_commit(tp, &im->args);
	}
	/* The main thread is known as soon as the process is. */
	tp_thread_for_tid(tp, pid, pid);
}

static void process_tree_thread(struct proto_importer *im, const uint8_t *p, size_t n,
                                const struct hmap *kthreads)
{
	int64_t tid = 0, tgid = 0;
	const char *name = NULL;
	size_t name_len = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ProcessTree_Thread_tid && f.wire == PB_WIRE_VARINT) {
			tid = (int32_t)f.val;
		} else if (f.id == PB_F_ProcessTree_Thread_tgid && f.wire == PB_WIRE_VARINT) {
			tgid = (int32_t)f.val;
		} else if (f.id == PB_F_ProcessTree_Thread_name && f.wire == PB_WIRE_LEN) {
			name = (const char *)f.data;
			name_len = f.len;
		}
	}
	uint32_t utid = tp_thread_for_tid(im->tp, tid, tgid);
	if (!name)
		return;
	if (tid == tgid && hmap_get(kthreads, (uint64_t)tid, NULL))
		name_len = kworker_name_len(name, name_len);
	tp_thread_set_name_prio(im->tp, utid, tp_intern(im->tp, name, name_len),
	                        TP_NAME_PROCESS_TREE);
}

void tp_proto_process_tree_parse(struct proto_importer *im, const struct proto_ev *ev,
                                 const uint8_t *p, size_t n)
{
	/* Processes first, then threads (a kworker main thread's name is cut
	 * when its process is a child of kthreadd). */
	struct hmap kthreads;
	struct pb_reader r;
	struct pb_field f = {0};
	hmap_init(&kthreads);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_ProcessTree_processes && f.wire == PB_WIRE_LEN)
			process_tree_process(im, ev, f.data, f.len, &kthreads);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_ProcessTree_threads && f.wire == PB_WIRE_LEN)
			process_tree_thread(im, f.data, f.len, &kthreads);
	hmap_release(&kthreads);
}
