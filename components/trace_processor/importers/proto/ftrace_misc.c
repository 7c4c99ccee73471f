/*
 * Typed ftrace events outside the scheduling hot paths, as Perfetto's
 * FtraceParser imports them (its ParseIonStat and ParseOOMKill). ftrace.c
 * names them (for the ftrace_event table, without args: our protos do not
 * describe them) and hands them here from its typed-event dispatch; the
 * display drivers' tracing_mark_write variants (mdss 80, dpu 348, g2d 349)
 * are only named here: ftrace.c's kernel_mark imports them.
 *
 *   field  event                    into
 *   334    mark_victim              "mem.oom_kill" instant on the victim thread
 *   335    ion_stat                 "mem.ion" and per-thread "mem.ion_change" counters
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <stdio.h>
#include <string.h>

/* FtraceEvent fields whose messages protos/ does not define yet (defining
 * them would give their events args). */
enum {
	FE_MARK_VICTIM = 334,
	FE_ION_STAT = 335,
};

const char *tp_proto_ftrace_misc_name(uint32_t id)
{
	switch (id) {
	case PB_F_FtraceEvent_tracing_mark_write:
		return "tracing_mark_write";
	case FE_MARK_VICTIM:
		return "mark_victim";
	case FE_ION_STAT:
		return "ion_stat";
	case PB_F_FtraceEvent_dpu_tracing_mark_write:
		return "dpu_tracing_mark_write";
	case PB_F_FtraceEvent_g2d_tracing_mark_write:
		return "g2d_tracing_mark_write";
	default:
		return NULL;
	}
}

/* The fields of an event body this file reads: varints by id (0 if
 * absent), the string fields 2 and 4 (the tracing_mark_write events share
 * one layout; DpuTracingMarkWriteFtraceEvent has both strings). */
struct body {
	uint64_t v[8];
	bool has[8];
	struct pb_field s2, s4;
};

static void read_body(struct body *b, const uint8_t *p, size_t n)
{
	struct pb_reader r;
	struct pb_field f = {0};
	memset(b, 0, sizeof *b);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire == PB_WIRE_LEN && f.id == PB_F_DpuTracingMarkWriteFtraceEvent_trace_name)
			b->s2 = f;
		else if (f.wire == PB_WIRE_LEN && f.id == PB_F_DpuTracingMarkWriteFtraceEvent_name)
			b->s4 = f;
		else if (f.wire == PB_WIRE_VARINT && f.id < 8) {
			b->v[f.id] = f.val;
			b->has[f.id] = true;
		}
	}
}

static void ion_stat(struct proto_importer *im, int64_t ts, int64_t pid, const struct body *b)
{
	struct tp *tp = im->tp;
	struct tp_track_key key = {.type = "ion",
	                           .event_type = "counter",
	                           .utid = -1,
	                           .upid = -1,
	                           .cpu = -1,
	                           .name = tp_intern_cstr(tp, "mem.ion")};
	tp_counter_add(tp, tp_track_get(tp, &key), ts, (double)b->v[3], TP_NULL_U32);
	key.type = "ion_change";
	key.name = tp_intern_cstr(tp, "mem.ion_change");
	key.utid = tp_thread_for_tid(tp, pid, -1);
	tp_counter_add(tp, tp_track_get(tp, &key), ts, (double)(int64_t)b->v[2], TP_NULL_U32);
}

void tp_proto_ftrace_misc_parse(struct proto_importer *im, struct tp_ftrace *model, int64_t ts,
                                int64_t pid, uint32_t id, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct body b;
	if (!tp_proto_ftrace_misc_name(id))
		return;
	read_body(&b, p, n);
	int64_t tgid = (int32_t)b.v[1];
	switch (id) {
	case FE_MARK_VICTIM: {
		uint32_t utid = tp_thread_for_tid(tp, tgid, -1);
		tp_slice_complete(tp, tp_track_for_thread(tp, utid), ts, 0, 0,
		                  tp_intern_cstr(tp, "mem.oom_kill"), TP_NULL_U32);
		break;
	}
	case FE_ION_STAT:
		ion_stat(im, ts, pid, &b);
		break;
	default:
		break;
	}
}
