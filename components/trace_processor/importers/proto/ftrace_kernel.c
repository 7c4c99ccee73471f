/*
 * Kernel ftrace events with their own placement or tracks, as Perfetto's
 * FtraceTokenizer / FtraceParser import them, and the cropping of the
 * start of per-cpu ftrace data. ftrace.c calls in at three points:
 *
 *   bundle      the first bundle of each cpu: its data is valid from
 *               previous_bundle_end_timestamp (v47+) or
 *               last_read_event_timestamp (v44-46); the latest of those
 *               over all cpus is metadata `ftrace_latest_data_start_ns`
 *   place       events whose time of effect is not their ftrace time:
 *               thermal_exynos_acpm_bulk (firmware sample time) and
 *               kgsl_adreno_cmdbatch_retired (GPU start, from the GPU
 *               ticks of the matching cmdbatch_sync, which may come later
 *               in the file) get two sorter records: the `ftrace_event`
 *               row at the ftrace time, the effect at the other time
 *   parse       the effects below; events before the crop time (ftrace
 *               time, not placement) only get their `ftrace_event` row, so
 *               an operation that starts before every cpu's buffer is
 *               valid and ends on another cpu does not dangle
 *
 *   field  event                          into
 *   437/8  funcgraph_entry / _exit        slice named by the kernel symbol on
 *                                         the thread's "Funcgraph" track (the
 *                                         swapper: per cpu)
 *   506    thermal_exynos_acpm_bulk       "<zone> Temperature" and
 *   507    thermal_exynos_acpm_high_ovh.  "Tj-<zone> Cooling Device" counters
 *   534    kgsl_adreno_cmdbatch_queued    context id -> queueing thread
 *   537    kgsl_adreno_cmdbatch_retired   "GPU" slice on an adreno_gpu_cmdbatch
 *                                         track per (context, prio)
 *   542    kprobe_event                   slice / instant on the thread
 *   546/7  block_io_start / _done         "block_io" slice per block device
 *
 * The sorter record of a placed event: proto_ev | FtraceEvent | struct
 * ftrace_placed (cpu first, as EV_FTRACE's trailer).
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The Adreno always-on counter runs at 19.2 MHz. */
#define ADRENO_XO_HZ 19200000

/* Exynos ACPM thermal zones by tz_id. */
static const char *const acpm_zones[] = {"BIG", "MID", "LITTLE", "GPU", "ISP", "TPU", "AUR"};

struct adreno_sync {
	int64_t ts;     /* trace time of the sync event */
	uint64_t ticks; /* GPU ticks then */
};

/* A retired cmdbatch whose sync has not been seen yet. */
struct adreno_pending {
	uint32_t cpu;
	int64_t raw_ts;
	uint64_t start; /* GPU ticks */
	struct proto_seq *seq;
	uint8_t *event; /* FtraceEvent bytes (tb_malloc) */
	size_t len;
};

struct adreno_lane {
	uint64_t key; /* context_id << 32 | prio */
	uint32_t lane;
	int64_t end;
};

struct proto_ftrace_kernel {
	VEC(uint8_t) cpu_seen; /* a first bundle was seen on the cpu */
	bool has_data_start;
	int64_t data_start; /* ftrace_latest_data_start_ns */
	bool crop_known;    /* crop fixed at the first parsed event */
	int64_t crop;
	/* adreno, keyed by the cmdbatch's `timestamp` (its sequence number) */
	struct hmap sync_of; /* -> index in syncs + 1 */
	VEC(struct adreno_sync) syncs;
	struct hmap pending_of; /* -> index in pending + 1 */
	VEC(struct adreno_pending) pending;
	struct hmap ctx_tid; /* context id -> tid that queued on it */
	VEC(struct adreno_lane) lanes;
};

static struct proto_ftrace_kernel *kstate(struct proto_importer *im)
{
	if (!im->ftrace_kernel)
		im->ftrace_kernel = tb_calloc(1, sizeof *im->ftrace_kernel);
	return im->ftrace_kernel;
}

void tp_proto_ftrace_kernel_free(struct proto_importer *im)
{
	struct proto_ftrace_kernel *k = im->ftrace_kernel;
	if (!k)
		return;
	for (size_t i = 0; i < k->pending.len; i++)
		tb_free(k->pending.data[i].event);
	vec_release(&k->cpu_seen);
	hmap_release(&k->sync_of);
	vec_release(&k->syncs);
	hmap_release(&k->pending_of);
	vec_release(&k->pending);
	hmap_release(&k->ctx_tid);
	vec_release(&k->lanes);
	tb_free(k);
	im->ftrace_kernel = NULL;
}

/* ---- tokenize ------------------------------------------------------------- */

void tp_proto_ftrace_kernel_bundle(struct proto_importer *im, const struct proto_seq *seq,
                                   uint32_t cpu, int64_t clock_off, const uint8_t *p, size_t n)
{
	struct proto_ftrace_kernel *k = kstate(im);
	if (cpu < k->cpu_seen.len && k->cpu_seen.data[cpu])
		return;
	if (cpu >= k->cpu_seen.len) {
		size_t old = k->cpu_seen.len;
		vec_resize(&k->cpu_seen, (size_t)cpu + 1);
		memset(k->cpu_seen.data + old, 0, k->cpu_seen.len - old);
	}
	k->cpu_seen.data[cpu] = 1;
	/* At most one of the two is set; the newer field wins if both are. */
	struct pb_field f = {0};
	if (pb_find_field(p, n, PB_F_FtraceEventBundle_previous_bundle_end_timestamp, &f) < 1 &&
	    pb_find_field(p, n, PB_F_FtraceEventBundle_last_read_event_timestamp, &f) < 1)
		return;
	if (f.wire != PB_WIRE_VARINT)
		return;
	int64_t ts;
	if (!tp_proto_clocks_to_trace(im->clocks, seq->id, PROTO_CLOCK_BOOTTIME,
	                              (uint64_t)((int64_t)f.val + clock_off), &ts)) {
		tp_stat_inc(im->tp, TP_STAT_clock_sync_failure);
		return;
	}
	if (!k->has_data_start || ts > k->data_start) {
		k->has_data_start = true;
		k->data_start = ts;
		tp_metadata_set_int(im->tp, "ftrace_latest_data_start_ns", ts);
	}
}

/* Push the two records of a placed event: the ftrace_event row at its
 * ftrace time, the effect at `at`. */
static void push_placed(struct proto_importer *im, const struct proto_seq *seq, uint32_t cpu,
                        int64_t raw_ts, int64_t at, const uint8_t *p, size_t n)
{
	struct ftrace_placed t = {.cpu = cpu, .mode = FTRACE_PLACED_ROW, .raw_ts = raw_ts};
	tp_proto_push_extra(im, raw_ts, EV_FTRACE_PLACED, NULL, seq, p, n, &t, sizeof t);
	t.mode = FTRACE_PLACED_EFFECT;
	tp_proto_push_extra(im, at, EV_FTRACE_PLACED, NULL, seq, p, n, &t, sizeof t);
}

static uint64_t body_u64(const uint8_t *p, size_t n, uint32_t id, bool *has)
{
	struct pb_field f = {0};
	*has = pb_find_field(p, n, id, &f) >= 1 && f.wire == PB_WIRE_VARINT;
	return *has ? f.val : 0;
}

static int64_t adreno_start(const struct adreno_sync *s, uint64_t start)
{
	return s->ts + (int64_t)(start - s->ticks) * 1000000000 / ADRENO_XO_HZ;
}

static void adreno_sync(struct proto_importer *im, const struct proto_seq *seq, uint32_t cpu,
                        int64_t ts, const uint8_t *ev, size_t evn, const uint8_t *p, size_t n)
{
	struct proto_ftrace_kernel *k = kstate(im);
	bool has;
	uint64_t key = body_u64(p, n, PB_F_KgslAdrenoCmdbatchSyncFtraceEvent_timestamp, &has);
	struct adreno_sync s = {
	    .ts = ts, .ticks = body_u64(p, n, PB_F_KgslAdrenoCmdbatchSyncFtraceEvent_ticks, &has)};
	uint64_t i;
	if (hmap_del(&k->pending_of, key, &i)) {
		/* The retired event came first: its effect can be placed now. */
		struct adreno_pending *r = &k->pending.data[i - 1];
		struct ftrace_placed t = {
		    .cpu = r->cpu, .mode = FTRACE_PLACED_EFFECT, .raw_ts = r->raw_ts};
		tp_proto_push_extra(im, adreno_start(&s, r->start), EV_FTRACE_PLACED, NULL, r->seq,
		                    r->event, r->len, &t, sizeof t);
		tb_free(r->event);
		r->event = NULL;
	} else if (hmap_get(&k->sync_of, key, &i)) {
		k->syncs.data[i - 1] = s;
	} else {
		vec_push(&k->syncs, s);
		hmap_put(&k->sync_of, key, k->syncs.len);
	}
	tp_proto_push_extra(im, ts, EV_FTRACE, NULL, seq, ev, evn, &cpu, sizeof cpu);
}

static void adreno_retired(struct proto_importer *im, struct proto_seq *seq, uint32_t cpu,
                           int64_t ts, const uint8_t *ev, size_t evn, const uint8_t *p, size_t n)
{
	struct proto_ftrace_kernel *k = kstate(im);
	bool has;
	uint64_t key = body_u64(p, n, PB_F_KgslAdrenoCmdbatchRetiredFtraceEvent_timestamp, &has);
	uint64_t start = body_u64(p, n, PB_F_KgslAdrenoCmdbatchRetiredFtraceEvent_start, &has);
	uint64_t i;
	if (hmap_del(&k->sync_of, key, &i)) {
		push_placed(im, seq, cpu, ts, adreno_start(&k->syncs.data[i - 1], start), ev, evn);
		return;
	}
	/* No sync yet: the row now, the effect when the sync comes. */
	struct ftrace_placed t = {.cpu = cpu, .mode = FTRACE_PLACED_ROW, .raw_ts = ts};
	tp_proto_push_extra(im, ts, EV_FTRACE_PLACED, NULL, seq, ev, evn, &t, sizeof t);
	struct adreno_pending r = {.cpu = cpu,
	                           .raw_ts = ts,
	                           .start = start,
	                           .seq = seq,
	                           .event = tb_malloc(evn ? evn : 1),
	                           .len = evn};
	memcpy(r.event, ev, evn);
	if (hmap_get(&k->pending_of, key, &i)) {
		tb_free(k->pending.data[i - 1].event);
		k->pending.data[i - 1] = r;
	} else {
		vec_push(&k->pending, r);
		hmap_put(&k->pending_of, key, k->pending.len);
	}
}

bool tp_proto_ftrace_kernel_place(struct proto_importer *im, struct proto_seq *seq, uint32_t cpu,
                                  int64_t ts, uint32_t id, const uint8_t *ev, size_t evn)
{
	if (id != PB_F_FtraceEvent_thermal_exynos_acpm_bulk &&
	    id != PB_F_FtraceEvent_kgsl_adreno_cmdbatch_sync &&
	    id != PB_F_FtraceEvent_kgsl_adreno_cmdbatch_retired)
		return false;
	struct pb_field body = {0};
	if (pb_find_field(ev, evn, id, &body) != 1 || body.wire != PB_WIRE_LEN) {
		tp_stat_inc(im->tp, TP_STAT_ftrace_bundle_tokenizer_errors);
		return true;
	}
	if (id == PB_F_FtraceEvent_kgsl_adreno_cmdbatch_sync) {
		adreno_sync(im, seq, cpu, ts, ev, evn, body.data, body.len);
	} else if (id == PB_F_FtraceEvent_kgsl_adreno_cmdbatch_retired) {
		adreno_retired(im, seq, cpu, ts, ev, evn, body.data, body.len);
	} else {
		bool has;
		uint64_t at = body_u64(body.data, body.len,
		                       PB_F_ThermalExynosAcpmBulkFtraceEvent_timestamp, &has);
		if (!has) {
			tp_stat_inc(im->tp, TP_STAT_ftrace_bundle_tokenizer_errors);
			return true;
		}
		push_placed(im, seq, cpu, ts, (int64_t)at, ev, evn);
	}
	return true;
}

/* ---- parse ---------------------------------------------------------------- */

int64_t tp_proto_ftrace_kernel_crop(struct proto_importer *im)
{
	struct proto_ftrace_kernel *k = kstate(im);
	if (!k->crop_known) {
		/* As Perfetto, fixed when the first ftrace event is parsed. */
		k->crop_known = true;
		k->crop = k->has_data_start ? k->data_start : INT64_MIN;
	}
	return k->crop;
}

/* Read through one set of numbers for both thermal_exynos events. */
_Static_assert(PB_F_ThermalExynosAcpmBulkFtraceEvent_tz_id ==
                       PB_F_ThermalExynosAcpmHighOverheadFtraceEvent_tz_id &&
                   PB_F_ThermalExynosAcpmBulkFtraceEvent_current_temp ==
                       PB_F_ThermalExynosAcpmHighOverheadFtraceEvent_current_temp &&
                   PB_F_ThermalExynosAcpmBulkFtraceEvent_cdev_state ==
                       PB_F_ThermalExynosAcpmHighOverheadFtraceEvent_cdev_state,
               "thermal_exynos event fields differ");

static void thermal_exynos(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	bool has;
	uint64_t tz = body_u64(p, n, PB_F_ThermalExynosAcpmBulkFtraceEvent_tz_id, &has);
	if (tz >= sizeof acpm_zones / sizeof acpm_zones[0]) {
		tp_stat_inc(tp, TP_STAT_ftrace_thermal_exynos_acpm_unknown_tz_id);
		return;
	}
	static const struct {
		const char *type, *fmt;
		uint32_t field;
	} c[] = {
	    {"acpm_thermal_temperature", "%s Temperature",
	     PB_F_ThermalExynosAcpmBulkFtraceEvent_current_temp},
	    {"acpm_cooling_device_counter", "Tj-%s Cooling Device",
	     PB_F_ThermalExynosAcpmBulkFtraceEvent_cdev_state},
	};
	uint32_t k_tz = tp_intern_cstr(tp, "thermal_zone_id");
	uint32_t k_zone = tp_intern_cstr(tp, "thermal_zone");
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		char name[64];
		snprintf(name, sizeof name, c[i].fmt, acpm_zones[tz]);
		struct tp_track_key key = {.type = c[i].type,
		                           .event_type = "counter",
		                           .utid = -1,
		                           .upid = -1,
		                           .cpu = -1,
		                           .name = tp_intern_cstr(tp, name)};
		uint32_t track = tp_track_get(tp, &key);
		if (tp->t.track.dimension_arg_set_id[track] == TP_NULL_U32) {
			tp_args_begin(&im->args);
			tp_args_add_string(&im->args, k_zone, k_zone,
			                   tp_intern_cstr(tp, acpm_zones[tz]));
			tp->t.track.dimension_arg_set_id[track] = tp_args_commit(tp, &im->args);
		}
		tp_args_begin(&im->args);
		tp_args_add_int(&im->args, k_tz, k_tz, (int64_t)tz);
		tp_counter_add(tp, track, ts, (double)(uint32_t)body_u64(p, n, c[i].field, &has),
		               tp_args_commit(tp, &im->args));
	}
}

/* The lane of (context, prio) free at ts, as Perfetto's TrackCompressor
 * spreads overlapping scoped slices over sibling tracks. */
static uint32_t adreno_lane(struct proto_ftrace_kernel *k, uint64_t key, int64_t ts, int64_t dur)
{
	uint32_t lane = 0;
	for (size_t i = 0; i < k->lanes.len; i++) {
		struct adreno_lane *l = &k->lanes.data[i];
		if (l->key != key)
			continue;
		if (l->end <= ts) {
			l->end = ts + dur;
			return l->lane;
		}
		lane = l->lane + 1 > lane ? l->lane + 1 : lane;
	}
	struct adreno_lane l = {.key = key, .lane = lane, .end = ts + dur};
	vec_push(&k->lanes, l);
	return lane;
}

static void adreno_slice(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct proto_ftrace_kernel *k = kstate(im);
	bool has;
	uint32_t ctx = (uint32_t)body_u64(p, n, PB_F_KgslAdrenoCmdbatchRetiredFtraceEvent_id, &has);
	uint32_t prio =
	    (uint32_t)body_u64(p, n, PB_F_KgslAdrenoCmdbatchRetiredFtraceEvent_prio, &has);
	uint64_t start = body_u64(p, n, PB_F_KgslAdrenoCmdbatchRetiredFtraceEvent_start, &has),
	         retire = body_u64(p, n, PB_F_KgslAdrenoCmdbatchRetiredFtraceEvent_retire, &has);
	if (retire < start)
		return;
	int64_t dur = (int64_t)(retire - start) * 1000000000 / ADRENO_XO_HZ;
	/* The process of the thread that queued on the context names it. */
	uint32_t pname = 0;
	uint64_t tid;
	if (hmap_get(&k->ctx_tid, ctx, &tid)) {
		uint32_t utid = tp_thread_for_tid(tp, (int64_t)tid, -1);
		int64_t upid = tp->t.thread.upid[utid];
		if (upid != TP_NULL_I64)
			pname = tp->t.process.name[upid];
	}
	char name[320];
	if (pname)
		snprintf(name, sizeof name, "GPU %s (Ctx=%u, Prio=%u)", tp_str(tp, pname), ctx,
		         prio);
	else
		snprintf(name, sizeof name, "GPU (Ctx=%u, Prio=%u)", ctx, prio);
	uint64_t key = (uint64_t)ctx << 32 | prio;
	struct tp_track_key tk = {.type = "adreno_gpu_cmdbatch",
	                          .event_type = "slice",
	                          .utid = -1,
	                          .upid = -1,
	                          .cpu = -1,
	                          .extra_dim = key << 8 | adreno_lane(k, key, ts, dur)};
	uint32_t track = tp_track_get(tp, &tk);
	if (tp->t.track.dimension_arg_set_id[track] == TP_NULL_U32) {
		uint32_t k_ctx = tp_intern_cstr(tp, "context_id"),
		         k_prio = tp_intern_cstr(tp, "prio");
		tp_args_begin(&im->args);
		tp_args_add_uint(&im->args, k_ctx, k_ctx, ctx);
		tp_args_add_uint(&im->args, k_prio, k_prio, prio);
		tp->t.track.dimension_arg_set_id[track] = tp_args_commit(tp, &im->args);
		tp->t.track.name[track] = tp_intern_cstr(tp, name);
	} else if (pname) {
		tp->t.track.name[track] = tp_intern_cstr(tp, name);
	}
	tp_slice_complete(tp, track, ts, dur, 0, tp_intern_cstr(tp, "GPU"), TP_NULL_U32);
}

static void kprobe(struct proto_importer *im, int64_t ts, int64_t pid, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_field f = {0};
	uint32_t name = 0;
	bool has;
	if (pb_find_field(p, n, PB_F_KprobeEvent_name, &f) >= 1 && f.wire == PB_WIRE_LEN)
		name = tp_intern(tp, (const char *)f.data, f.len);
	uint32_t track = tp_track_for_thread(tp, tp_thread_for_tid(tp, pid, -1));
	switch (body_u64(p, n, PB_F_KprobeEvent_type, &has)) {
	case PB_E_KprobeEvent_KprobeType_KPROBE_TYPE_BEGIN:
		tp_slice_begin(tp, track, ts, 0, name, TP_NULL_U32);
		break;
	case PB_E_KprobeEvent_KprobeType_KPROBE_TYPE_END:
		tp_slice_end(tp, track, ts, 0, name, TP_NULL_U32);
		break;
	case PB_E_KprobeEvent_KprobeType_KPROBE_TYPE_INSTANT:
		tp_slice_complete(tp, track, ts, 0, 0, name, TP_NULL_U32);
		break;
	default:
		break;
	}
}

_Static_assert(PB_F_BlockIoStartFtraceEvent_dev == PB_F_BlockIoDoneFtraceEvent_dev &&
                   PB_F_BlockIoStartFtraceEvent_sector == PB_F_BlockIoDoneFtraceEvent_sector,
               "block_io event fields differ");

/* block_io_start / _done: a "block_io" slice on the device's track, with
 * the sector as an arg. */
static void block_io(struct proto_importer *im, int64_t ts, bool start, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	bool has;
	uint64_t dev = body_u64(p, n, PB_F_BlockIoStartFtraceEvent_dev, &has);
	struct tp_track_key key = {.type = "block_io",
	                           .event_type = "slice",
	                           .utid = -1,
	                           .upid = -1,
	                           .cpu = -1,
	                           .extra_dim = dev};
	uint32_t track = tp_track_get(tp, &key);
	if (tp->t.track.dimension_arg_set_id[track] == TP_NULL_U32) {
		uint32_t k_dev = tp_intern_cstr(tp, "block_device");
		tp_args_begin(&im->args);
		tp_args_add_uint(&im->args, k_dev, k_dev, dev);
		tp->t.track.dimension_arg_set_id[track] = tp_args_commit(tp, &im->args);
	}
	uint32_t k_sector = tp_intern_cstr(tp, "sector");
	tp_args_begin(&im->args);
	tp_args_add_uint(&im->args, k_sector, k_sector,
	                 body_u64(p, n, PB_F_BlockIoStartFtraceEvent_sector, &has));
	uint32_t args = tp_args_commit(tp, &im->args);
	uint32_t name = tp_intern_cstr(tp, "block_io");
	if (start)
		tp_slice_begin(tp, track, ts, 0, name, args);
	else
		tp_slice_end(tp, track, ts, 0, name, args);
}

/* function_graph entry / exit: a slice named by the interned kernel
 * symbol (or its address in hex) on the thread's funcgraph track; idle
 * tasks all have tid 0, so theirs are per cpu. */
static void funcgraph(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                      uint32_t cpu, int64_t pid, bool entry, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	bool has;
	uint64_t func = body_u64(
	    p, n, entry ? PB_F_FuncgraphEntryFtraceEvent_func : PB_F_FuncgraphExitFtraceEvent_func,
	    &has);
	uint32_t name = 0;
	if (ev->gen && proto_gen_lookup(ev->gen, INTERN_KERNEL_SYMBOLS, func))
		name = proto_interned_str(tp, ev->gen, INTERN_KERNEL_SYMBOLS, func);
	if (!name) {
		char hex[24];
		snprintf(hex, sizeof hex, "%#" PRIx64, func);
		name = tp_intern_cstr(tp, hex);
	}
	struct tp_track_key key = {.event_type = "slice", .utid = -1, .upid = -1, .cpu = -1};
	if (pid != 0) {
		key.type = "thread_funcgraph";
		key.utid = tp_thread_for_tid(tp, pid, -1);
		key.name = tp_intern_cstr(tp, "Funcgraph");
	} else {
		char track[48];
		snprintf(track, sizeof track, "swapper%u -funcgraph", cpu);
		key.type = "cpu_funcgraph";
		key.cpu = cpu;
		key.name = tp_intern_cstr(tp, track);
	}
	uint32_t track = tp_track_get(tp, &key);
	if (entry)
		tp_slice_begin(tp, track, ts, 0, name, TP_NULL_U32);
	else
		tp_slice_end(tp, track, ts, 0, name, TP_NULL_U32);
}

bool tp_proto_ftrace_kernel_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                                  uint32_t cpu, int64_t pid, uint32_t id, const uint8_t *p,
                                  size_t n)
{
	bool has;
	switch (id) {
	case PB_F_FtraceEvent_funcgraph_entry:
	case PB_F_FtraceEvent_funcgraph_exit:
		funcgraph(im, ts, ev, cpu, pid, id == PB_F_FtraceEvent_funcgraph_entry, p, n);
		return true;
	case PB_F_FtraceEvent_thermal_exynos_acpm_bulk:
		thermal_exynos(im, ts, p, n);
		return true;
	case PB_F_FtraceEvent_thermal_exynos_acpm_high_overhead:
		thermal_exynos(im, ts, p, n);
		return true;
	case PB_F_FtraceEvent_kgsl_adreno_cmdbatch_queued:
		hmap_put(&kstate(im)->ctx_tid,
		         body_u64(p, n, PB_F_KgslAdrenoCmdbatchQueuedFtraceEvent_id, &has),
		         (uint64_t)pid);
		return true;
	case PB_F_FtraceEvent_kgsl_adreno_cmdbatch_retired:
		adreno_slice(im, ts, p, n);
		return true;
	case PB_F_FtraceEvent_kprobe_event:
		kprobe(im, ts, pid, p, n);
		return true;
	case PB_F_FtraceEvent_block_io_start:
	case PB_F_FtraceEvent_block_io_done:
		block_io(im, ts, id == PB_F_FtraceEvent_block_io_start, p, n);
		return true;
	default:
		return false;
	}
}
