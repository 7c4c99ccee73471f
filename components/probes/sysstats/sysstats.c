/*
 * linux.sys_stats: /proc/meminfo, /proc/vmstat and /proc/stat polled into
 * SysStats packets (see sysstats.h for the packet shape). The key tables are
 * Perfetto's (include/perfetto/ext/traced/sys_stats_counters.h): meminfo
 * keys are listed below; every vmstat key is the lower-case VmstatCounters
 * name without its VMSTAT_ prefix, so vmstat keys are looked up in the
 * generated enum descriptor instead of a second copy of 188 names.
 *
 *   /proc/meminfo  "MemTotal:       24684092 kB"
 *   /proc/vmstat   "nr_free_pages 5663366"
 *   /proc/stat     "cpu0 user nice system idle iowait irq softirq steal ..."
 *                  "intr TOTAL irq0 irq1 ..."   "softirq TOTAL s0 s1 ..."
 *                  "processes FORKS"
 */
#include "sysstats.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "protos.h"
#include "pb_fields.h"

#define PROC_FILE_MAX ((size_t)4 << 20)
#define MIN_PERIOD_MS 10

static const struct {
	const char *key;
	int id;
} meminfo_keys[] = {
    {"MemTotal", PB_E_MeminfoCounters_MEMINFO_MEM_TOTAL},
    {"MemFree", PB_E_MeminfoCounters_MEMINFO_MEM_FREE},
    {"MemAvailable", PB_E_MeminfoCounters_MEMINFO_MEM_AVAILABLE},
    {"Buffers", PB_E_MeminfoCounters_MEMINFO_BUFFERS},
    {"Cached", PB_E_MeminfoCounters_MEMINFO_CACHED},
    {"SwapCached", PB_E_MeminfoCounters_MEMINFO_SWAP_CACHED},
    {"Active", PB_E_MeminfoCounters_MEMINFO_ACTIVE},
    {"Inactive", PB_E_MeminfoCounters_MEMINFO_INACTIVE},
    {"Active(anon)", PB_E_MeminfoCounters_MEMINFO_ACTIVE_ANON},
    {"Inactive(anon)", PB_E_MeminfoCounters_MEMINFO_INACTIVE_ANON},
    {"Active(file)", PB_E_MeminfoCounters_MEMINFO_ACTIVE_FILE},
    {"Inactive(file)", PB_E_MeminfoCounters_MEMINFO_INACTIVE_FILE},
    {"Unevictable", PB_E_MeminfoCounters_MEMINFO_UNEVICTABLE},
    {"Mlocked", PB_E_MeminfoCounters_MEMINFO_MLOCKED},
    {"SwapTotal", PB_E_MeminfoCounters_MEMINFO_SWAP_TOTAL},
    {"SwapFree", PB_E_MeminfoCounters_MEMINFO_SWAP_FREE},
    {"Dirty", PB_E_MeminfoCounters_MEMINFO_DIRTY},
    {"Writeback", PB_E_MeminfoCounters_MEMINFO_WRITEBACK},
    {"AnonPages", PB_E_MeminfoCounters_MEMINFO_ANON_PAGES},
    {"Mapped", PB_E_MeminfoCounters_MEMINFO_MAPPED},
    {"Shmem", PB_E_MeminfoCounters_MEMINFO_SHMEM},
    {"Slab", PB_E_MeminfoCounters_MEMINFO_SLAB},
    {"SReclaimable", PB_E_MeminfoCounters_MEMINFO_SLAB_RECLAIMABLE},
    {"SUnreclaim", PB_E_MeminfoCounters_MEMINFO_SLAB_UNRECLAIMABLE},
    {"KernelStack", PB_E_MeminfoCounters_MEMINFO_KERNEL_STACK},
    {"PageTables", PB_E_MeminfoCounters_MEMINFO_PAGE_TABLES},
    {"CommitLimit", PB_E_MeminfoCounters_MEMINFO_COMMIT_LIMIT},
    {"Committed_AS", PB_E_MeminfoCounters_MEMINFO_COMMITED_AS},
    {"VmallocTotal", PB_E_MeminfoCounters_MEMINFO_VMALLOC_TOTAL},
    {"VmallocUsed", PB_E_MeminfoCounters_MEMINFO_VMALLOC_USED},
    {"VmallocChunk", PB_E_MeminfoCounters_MEMINFO_VMALLOC_CHUNK},
    {"CmaTotal", PB_E_MeminfoCounters_MEMINFO_CMA_TOTAL},
    {"CmaFree", PB_E_MeminfoCounters_MEMINFO_CMA_FREE},
};

int probes_sysstats_meminfo_key(const char *name, size_t len)
{
	for (size_t i = 0; i < TB_ARRAY_SIZE(meminfo_keys); i++)
		if (strlen(meminfo_keys[i].key) == len &&
		    memcmp(meminfo_keys[i].key, name, len) == 0)
			return meminfo_keys[i].id;
	return 0;
}

int probes_sysstats_vmstat_key(const char *name, size_t len)
{
	char buf[96] = "VMSTAT_";
	const ProtobufCEnumValue *v;
	size_t p = 7;
	if (!len || len >= sizeof buf - p)
		return 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (!islower(c) && !isdigit(c) && c != '_')
			return 0; /* vmstat keys are lower case; this also rejects "UNSPECIFIED" */
		buf[p++] = (char)toupper(c);
	}
	buf[p] = '\0';
	v = protobuf_c_enum_descriptor_get_value_by_name(
	    &perfetto__protos__vmstat_counters__descriptor, buf);
	return v && v->value > 0 ? v->value : 0;
}

/* Clamp a configured period the way Perfetto does (>= 10 ms, 0 = off). */
static uint32_t clamp_period(uint64_t ms)
{
	if (!ms)
		return 0;
	if (ms < MIN_PERIOD_MS)
		return MIN_PERIOD_MS;
	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

/* Calls add(ctx, value) for a repeated varint field, packed or not. */
static void each_varint(const struct pb_field *f, void (*add)(void *, uint64_t), void *ctx)
{
	if (f->wire == PB_WIRE_VARINT) {
		add(ctx, f->val);
	} else if (f->wire == PB_WIRE_LEN) {
		struct pb_packed it;
		uint64_t v;
		pb_packed_init(&it, f->data, f->len, PB_WIRE_VARINT);
		while (pb_packed_next(&it, &v))
			add(ctx, v);
	}
}

static void add_meminfo(void *ctx, uint64_t v)
{
	if (v > 0 && v <= PROBES_MEMINFO_MAX_KEY)
		*(uint64_t *)ctx |= 1ull << v;
}
static void add_vmstat(void *ctx, uint64_t v)
{
	if (v > 0 && v <= PROBES_VMSTAT_MAX_KEY)
		((uint64_t *)ctx)[v / 64] |= 1ull << (v % 64);
}
static void add_stat(void *ctx, uint64_t v)
{
	if (v < 32)
		*(uint32_t *)ctx |= 1u << v;
}

void probes_sysstats_config_parse(const uint8_t *ds_config, size_t len,
                                  struct probes_sysstats_config *out)
{
	bool has_mem = false, has_vm = false, has_stat = false;
	uint32_t *periods[3];
	uint32_t *ticks[3];
	struct pb_field f = {0};
	struct pb_reader r;

	memset(out, 0, sizeof *out);
	if (pb_find_field(ds_config, len, PB_F_DataSourceConfig_sys_stats_config, &f) == 1 &&
	    f.wire == PB_WIRE_LEN) {
		pb_reader_init_field(&r, &f);
		while (pb_next(&r, &f)) {
			switch (f.id) {
			case PB_F_SysStatsConfig_meminfo_period_ms:
				out->meminfo_period_ms = clamp_period(f.val);
				break;
			case PB_F_SysStatsConfig_meminfo_counters:
				has_mem = true;
				each_varint(&f, add_meminfo, &out->meminfo_mask);
				break;
			case PB_F_SysStatsConfig_vmstat_period_ms:
				out->vmstat_period_ms = clamp_period(f.val);
				break;
			case PB_F_SysStatsConfig_vmstat_counters:
				has_vm = true;
				each_varint(&f, add_vmstat, out->vmstat_mask);
				break;
			case PB_F_SysStatsConfig_stat_period_ms:
				out->stat_period_ms = clamp_period(f.val);
				break;
			case PB_F_SysStatsConfig_stat_counters:
				has_stat = true;
				each_varint(&f, add_stat, &out->stat_mask);
				break;
			}
		}
	}
	if (!has_mem)
		out->meminfo_mask = ~0ull;
	if (!has_vm)
		memset(out->vmstat_mask, 0xff, sizeof out->vmstat_mask);
	if (!has_stat)
		out->stat_mask = ~0u;

	periods[0] = &out->meminfo_period_ms, ticks[0] = &out->meminfo_ticks;
	periods[1] = &out->vmstat_period_ms, ticks[1] = &out->vmstat_ticks;
	periods[2] = &out->stat_period_ms, ticks[2] = &out->stat_ticks;
	for (int i = 0; i < 3; i++)
		if (*periods[i] && (!out->tick_ms || *periods[i] < out->tick_ms))
			out->tick_ms = *periods[i];
	for (int i = 0; i < 3 && out->tick_ms; i++) {
		if (*periods[i] % out->tick_ms) {
			log_warn("probes", "sys_stats periods are not multiples of each other");
			out->tick_ms = out->meminfo_ticks = out->vmstat_ticks = out->stat_ticks = 0;
			return;
		}
		*ticks[i] = *periods[i] / out->tick_ms;
	}
}

/* Iterate the lines of a NUL-terminated text: *line and its length. */
static bool next_line(const char **p, const char **line, size_t *len)
{
	const char *nl;
	if (!**p)
		return false;
	*line = *p;
	nl = strchr(*p, '\n');
	*len = nl ? (size_t)(nl - *p) : strlen(*p);
	*p = nl ? nl + 1 : *p + *len;
	return true;
}

/* A MeminfoValue or VmstatValue: both are {key = 1, value = 2}. */
_Static_assert(PB_F_SysStats_MeminfoValue_key == PB_F_SysStats_VmstatValue_key &&
                   PB_F_SysStats_MeminfoValue_value == PB_F_SysStats_VmstatValue_value,
               "put_kv writes both");
static void put_kv(struct pb_writer *w, uint32_t field, int key, uint64_t value)
{
	unsigned h = pb_begin_nested(w, field);
	pb_put_uint64(w, PB_F_SysStats_MeminfoValue_key, (uint64_t)key);
	pb_put_uint64(w, PB_F_SysStats_MeminfoValue_value, value);
	pb_end_nested(w, h);
}

void probes_sysstats_write_meminfo(struct pb_writer *w, const char *text,
                                   const struct probes_sysstats_config *cfg)
{
	const char *p = text, *line;
	size_t n;
	while (next_line(&p, &line, &n)) {
		const char *colon = memchr(line, ':', n);
		char *end;
		unsigned long long v;
		int key;
		if (!colon || !(key = probes_sysstats_meminfo_key(line, (size_t)(colon - line))))
			continue;
		if (!(cfg->meminfo_mask & (1ull << key)))
			continue;
		v = strtoull(colon + 1, &end, 10);
		if (end == colon + 1 || end > line + n)
			continue;
		put_kv(w, PB_F_SysStats_meminfo, key, v);
	}
}

void probes_sysstats_write_vmstat(struct pb_writer *w, const char *text,
                                  const struct probes_sysstats_config *cfg)
{
	const char *p = text, *line;
	size_t n;
	while (next_line(&p, &line, &n)) {
		const char *sp = memchr(line, ' ', n);
		char *end;
		unsigned long long v;
		int key;
		if (!sp || !(key = probes_sysstats_vmstat_key(line, (size_t)(sp - line))))
			continue;
		if (!(cfg->vmstat_mask[key / 64] & (1ull << (key % 64))))
			continue;
		v = strtoull(sp + 1, &end, 10);
		if (end == sp + 1 || end > line + n)
			continue;
		put_kv(w, PB_F_SysStats_vmstat, key, v);
	}
}

/* "intr"/"softirq" lines: the total, then one count per irq number. */
static void write_irqs(struct pb_writer *w, const char *s, const char *eol, uint32_t total_field,
                       uint32_t each_field)
{
	char *end;
	for (int i = -1;; i++) {
		unsigned long long v = strtoull(s, &end, 10);
		if (end == s || end > eol)
			break;
		s = end;
		if (i < 0) {
			pb_put_uint64(w, total_field, v);
		} else {
			unsigned h = pb_begin_nested(w, each_field);
			pb_put_int32(w, PB_F_SysStats_InterruptCount_irq, i);
			pb_put_uint64(w, PB_F_SysStats_InterruptCount_count, v);
			pb_end_nested(w, h);
		}
	}
}

void probes_sysstats_write_stat(struct pb_writer *w, const char *text,
                                const struct probes_sysstats_config *cfg, uint64_t ns_per_tick)
{
	const char *p = text, *line;
	size_t n;
	while (next_line(&p, &line, &n)) {
		const char *eol = line + n, *s;
		size_t wl = strcspn(line, " \n");
		if (wl > n)
			wl = n;
		s = line + wl;
		if (wl > 3 && memcmp(line, "cpu", 3) == 0 &&
		    (cfg->stat_mask & (1u << PROBES_STAT_CPU_TIMES))) {
			uint64_t t[8] = {0};
			char *end;
			unsigned long cpu = strtoul(line + 3, &end, 10);
			unsigned h;
			if (end == line + 3)
				continue;
			for (int i = 0; i < 8; i++) {
				unsigned long long v = strtoull(s, &end, 10);
				if (end == s || end > eol)
					break;
				t[i] = v;
				s = end;
			}
			h = pb_begin_nested(w, PB_F_SysStats_cpu_stat);
			pb_put_uint32(w, PB_F_SysStats_CpuTimes_cpu_id, (uint32_t)cpu);
			/* user_ns .. steal_ns are fields 2 .. 9, in /proc/stat's order */
			_Static_assert(PB_F_SysStats_CpuTimes_steal_ns ==
			                   PB_F_SysStats_CpuTimes_user_ns + 7,
			               "CpuTimes fields are consecutive");
			for (int i = 0; i < 8; i++)
				pb_put_uint64(w, PB_F_SysStats_CpuTimes_user_ns + (uint32_t)i,
				              t[i] * ns_per_tick);
			pb_end_nested(w, h);
		} else if (wl == 4 && memcmp(line, "intr", 4) == 0 &&
		           (cfg->stat_mask & (1u << PROBES_STAT_IRQ_COUNTS))) {
			write_irqs(w, s, eol, PB_F_SysStats_num_irq_total, PB_F_SysStats_num_irq);
		} else if (wl == 7 && memcmp(line, "softirq", 7) == 0 &&
		           (cfg->stat_mask & (1u << PROBES_STAT_SOFTIRQ_COUNTS))) {
			write_irqs(w, s, eol, PB_F_SysStats_num_softirq_total,
			           PB_F_SysStats_num_softirq);
		} else if (wl == 9 && memcmp(line, "processes", 9) == 0 &&
		           (cfg->stat_mask & (1u << PROBES_STAT_FORK_COUNT))) {
			char *end;
			unsigned long long v = strtoull(s, &end, 10);
			if (end != s && end <= eol)
				pb_put_uint64(w, PB_F_SysStats_num_forks, v);
		}
	}
}

static char *read_proc(const char *root, const char *name)
{
	char path[512], *buf = NULL;
	size_t len = 0;
	snprintf(path, sizeof path, "%s/%s", root, name);
	if (tb_read_file(path, &buf, &len, PROC_FILE_MAX, NULL) != 0)
		return NULL;
	return buf;
}

void probes_sysstats_collect(struct pb_writer *w, const char *root,
                             const struct probes_sysstats_config *cfg, uint64_t tick)
{
	char *text;
	if (cfg->meminfo_ticks && tick % cfg->meminfo_ticks == 0 &&
	    (text = read_proc(root, "meminfo"))) {
		probes_sysstats_write_meminfo(w, text, cfg);
		tb_free(text);
	}
	if (cfg->vmstat_ticks && tick % cfg->vmstat_ticks == 0 &&
	    (text = read_proc(root, "vmstat"))) {
		probes_sysstats_write_vmstat(w, text, cfg);
		tb_free(text);
	}
	if (cfg->stat_ticks && tick % cfg->stat_ticks == 0 && (text = read_proc(root, "stat"))) {
		long hz = sysconf(_SC_CLK_TCK);
		probes_sysstats_write_stat(w, text, cfg,
		                           1000000000ull / (uint64_t)(hz > 0 ? hz : 100));
		tb_free(text);
	}
	pb_put_uint64(w, PB_F_SysStats_collection_end_timestamp, (uint64_t)tb_boot_ns());
}

/* ---- the data source ------------------------------------------------------ */

struct probes_sys_stats {
	struct loop *loop;
	struct tracing_writer *w;
	struct probes_sysstats_config cfg;
	char *root;
	uint64_t timer, tick;
};

static void tick(struct loop *l, uint64_t id, void *ctx)
{
	struct probes_sys_stats *s = ctx;
	uint64_t wall_ms = (uint64_t)tb_now_ns(CLOCK_REALTIME) / 1000000u;
	struct pb_writer *pw;
	unsigned h;

	/* Next tick on the next wall-clock multiple of the period, so ticks of
	 * different sessions and machines line up (Perfetto's scheme). */
	s->timer = loop_add_timer(l, s->cfg.tick_ms - wall_ms % s->cfg.tick_ms, 0, tick, s);
	pw = tracing_writer_begin_packet(s->w);
	pb_put_uint64(pw, PB_F_TracePacket_timestamp, (uint64_t)tb_boot_ns());
	h = pb_begin_nested(pw, PB_F_TracePacket_sys_stats);
	probes_sysstats_collect(pw, s->root, &s->cfg, s->tick++);
	pb_end_nested(pw, h);
	tracing_writer_end_packet(s->w);
}

struct probes_sys_stats *probes_sys_stats_new(struct loop *l, struct tracing_writer *w,
                                              const uint8_t *cfg, size_t len, const char *root)
{
	struct probes_sys_stats *s = tb_calloc(1, sizeof *s);
	s->loop = l;
	s->w = w;
	s->root = tb_strdup(root ? root : "/proc");
	probes_sysstats_config_parse(cfg, len, &s->cfg);
	return s;
}

void probes_sys_stats_start(struct probes_sys_stats *s)
{
	if (s->cfg.tick_ms)
		tick(s->loop, 0, s);
}

void probes_sys_stats_free(struct probes_sys_stats *s)
{
	if (!s)
		return;
	if (s->timer)
		loop_cancel_timer(s->loop, s->timer);
	tb_free(s->root);
	tb_free(s);
}
