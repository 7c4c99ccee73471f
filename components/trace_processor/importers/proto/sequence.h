/*
 * The protobuf importer's per-sequence state (sequence.c, clocks.c,
 * descriptors.c): interning generations and sequence defaults, packet loss
 * per sequence, clock snapshots and conversion to the trace clock, and the
 * tracks TrackDescriptors declare. Private to importers/proto/, included
 * through proto_int.h.
 */
#ifndef TB_TP_PROTO_SEQUENCE_H
#define TB_TP_PROTO_SEQUENCE_H

#include "../../tp_int.h"

struct proto_importer;

/* ---- sequences and interning (sequence.c) ------------------------------- */

/* One interned message, copied into its generation's arena. str caches the
 * pool id of its field 2 (the name/str of every interned type we read);
 * UINT32_MAX until first resolved. */
struct proto_interned {
	const uint8_t *data;
	uint32_t len;
	uint32_t str;
};

#define PROTO_DENSE_FIELDS 4 /* categories, names, debug annotation names */
#define PROTO_DENSE_IIDS 65536

/* A generation of a sequence's incremental state: the interned messages and
 * the TracePacketDefaults in effect between two resets. Refcounted: the
 * sequence holds one reference while it is current, each sorter event
 * another. */
struct proto_gen {
	uint32_t refs;
	struct proto_gen *parent;      /* inherited entries live in its arena */
	struct proto_gen *next, *prev; /* the importer's list of live gens */
	struct arena mem;
	struct hmap interned; /* proto_intern_key(field, iid) -> struct proto_interned * */
	/* The same entries of fields below PROTO_DENSE_FIELDS with iids below
	 * PROTO_DENSE_IIDS, indexed by iid: the lookups of every event. */
	struct proto_interned **dense[PROTO_DENSE_FIELDS];
	uint32_t dense_cap[PROTO_DENSE_FIELDS];
	/* TracePacketDefaults */
	uint32_t clock_id; /* 0 = none */
	bool has_track_uuid;
	uint64_t track_uuid;
	uint64_t *counter_uuids, *dbl_counter_uuids;
	uint32_t n_counter_uuids, n_dbl_counter_uuids;
	/* PerfSampleDefaults (TracePacketDefaults 12) and StackSampleDefaults
	 * (100), copied into the arena when present. */
	bool has_perf_defaults, has_stack_defaults;
	const uint8_t *perf_defaults, *stack_defaults;
	uint32_t perf_defaults_len, stack_defaults_len;
};

/* What a sequence lost, for the per-buffer stats of TraceStats.writer_stats
 * (trace_stats.c). */
struct proto_seq_loss {
	bool seen;                             /* a packet of the sequence came before */
	uint32_t dropped;                      /* later packets with previous_packet_dropped */
	uint32_t causes[8];                    /* of those, per DATA_LOSS_* bit 1 << (i + 1) */
	uint32_t needs_inc, needs_inc_skipped; /* SEQ_NEEDS_INCREMENTAL_STATE packets */
};

/* One trusted_packet_sequence_id. */
struct proto_seq {
	struct proto_seq_loss loss;
	uint32_t id;
	uint32_t src; /* the sequence's sorter run: dense, in order of appearance */
	bool valid;   /* incremental state usable */
	struct proto_gen *gen;
	int64_t pid, tid;                            /* from ThreadDescriptor; -1 unknown */
	int64_t ref_ts_ns, ref_thread_ns, ref_instr; /* legacy delta bases */
	struct hmap inc_counters;                    /* uuid -> double bits: incremental counters */
	/* ftrace events of each cpu: three sorter runs of their own (compact
	 * switches, compact wakings, other events; each already in ts order, so
	 * merged without sorting), UINT32_MAX until first used. */
	VEC(uint32_t) cpu_src;
	/* cpus whose first FtraceEventBundle was seen; ftrace_started once
	 * the sequence's first one was (the sorter then waits for the rest) */
	VEC(bool) cpu_seen;
	bool ftrace_started;
};

struct proto_importer;

/* The sequence of id, created on first use (proto_seq_get, inline below). */
struct proto_seq *tp_proto_seq_get_slow(struct proto_importer *im, uint32_t id);
/* Start a new generation: fresh (inherit == false: incremental state
 * cleared) or a copy of the current one's interned data (new defaults). */
void tp_proto_seq_new_gen(struct proto_importer *im, struct proto_seq *seq, bool inherit);
void tp_proto_seq_set_defaults(struct proto_importer *im, struct proto_seq *seq, const uint8_t *p,
                               size_t n);
void tp_proto_seq_add_interned(struct proto_importer *im, struct proto_seq *seq, const uint8_t *p,
                               size_t n);
void tp_proto_gen_ref(struct proto_gen *g);
void tp_proto_gen_unref(struct proto_importer *im, struct proto_gen *g);
void tp_proto_seqs_free(struct proto_importer *im);

static inline uint64_t proto_intern_key(uint32_t field, uint64_t iid)
{
	return iid << 8 | (field & 0xff);
}
/* The interned message (field, iid) of generation g, or NULL. */
static inline struct proto_interned *proto_gen_lookup(const struct proto_gen *g, uint32_t field,
                                                      uint64_t iid)
{
	if (!g)
		return NULL;
	if (field < PROTO_DENSE_FIELDS && iid < g->dense_cap[field])
		return g->dense[field][iid];
	return hmap_get_ptr(&g->interned, proto_intern_key(field, iid));
}
/* The pool id of the interned entry's field 2 string; 0 (and a stat) if the
 * iid is unknown. Resolved once per entry (tp_proto_interned_str_slow). */
uint32_t tp_proto_interned_str_slow(struct tp *tp, const struct proto_gen *g, uint32_t field,
                                    uint64_t iid);
static inline uint32_t proto_interned_str(struct tp *tp, const struct proto_gen *g, uint32_t field,
                                          uint64_t iid)
{
	const struct proto_interned *e = proto_gen_lookup(g, field, iid);
	if (e && e->str != UINT32_MAX)
		return e->str;
	return tp_proto_interned_str_slow(tp, g, field, iid);
}

/* ---- clocks (clocks.c) ----------------------------------------------------- */

struct proto_clocks;
struct proto_clocks *tp_proto_clocks_new(void);
void tp_proto_clocks_free(struct proto_clocks *c);
/* Apply a ClockSnapshot seen on sequence seq_id. */
void tp_proto_clocks_add_snapshot(struct proto_clocks *c, uint32_t seq_id, const uint8_t *p,
                                  size_t n);
/* The clock_snapshot rows of that ClockSnapshot (machine: its machine row),
 * when it holds the trace clock. Call after tp_proto_clocks_add_snapshot. */
void tp_proto_clocks_snapshot_rows(struct proto_clocks *c, struct tp *tp, uint32_t machine,
                                   const uint8_t *p, size_t n);
/* Convert a packet timestamp on clock_id (seen on seq_id) to trace time.
 * Incremental clocks advance. Returns false when no path exists. */
bool tp_proto_clocks_to_trace(struct proto_clocks *c, uint32_t seq_id, uint32_t clock_id,
                              uint64_t raw, int64_t *out);
uint32_t tp_proto_clocks_trace_clock(const struct proto_clocks *c);
/* Add shift to every converted timestamp (a manifest's placement of this
 * machine's clock on the merged timeline); drop: fail every conversion. */
void tp_proto_clocks_set_shift(struct proto_clocks *c, int64_t shift, bool drop);
/* At the end of a trace: when no earlier file's clocks are the trace's and
 * *c saw a snapshot, *c becomes tp->clock_sync (tp owns it, *c is NULL), to
 * convert the timestamps of the files after it. */
void tp_proto_clocks_share(struct tp *tp, struct proto_clocks **c);

/* ---- tracks from descriptors (descriptors.c) ------------------------------ */

enum proto_track_kind { PT_GLOBAL, PT_PROCESS, PT_THREAD };
struct proto_track {
	uint64_t uuid, parent_uuid;
	bool has_parent;
	enum proto_track_kind kind;
	int64_t pid, tid;
	uint32_t name;         /* pool id, 0 none */
	uint32_t process_name; /* ProcessDescriptor.process_name */
	uint32_t thread_name;
	uint32_t host_app; /* chrome_process.host_app_package_name */
	uint32_t description;
	bool separate;   /* disallow_merging_with_system_tracks */
	bool merge_none; /* sibling_merge_behavior NONE: names may change */
	bool has_rank;
	int32_t rank;      /* sibling_order_rank */
	uint32_t ordering; /* child_ordering: 1 lexicographic .. 3 explicit */
	uint32_t category; /* counter categories joined with "," */
	uint32_t y_axis_share_key;
	bool is_counter;
	bool is_state;                          /* TrackDescriptor.state: holds TYPE_STATE events */
	bool process_explicit, thread_explicit; /* root: *_ordering EXPLICIT */
	uint32_t counter_type;                  /* 1 thread time, 2 instruction count */
	uint32_t unit;                          /* pool id */
	int64_t unit_multiplier;
	bool is_incremental;
	double last_value;   /* incremental counters */
	uint32_t track_id;   /* TP_NULL_U32 until materialised */
	uint32_t utid, upid; /* thread/process bound to, TP_NULL_U32 until then */
};

/* Record a TrackDescriptor (tokenize time). Returns the tid of a thread
 * descriptor (pid << 32 | tid for a Chrome sandboxed tid, as Perfetto's
 * synthetic tids), else -1. */
int64_t tp_proto_descriptor_tokenize(struct proto_importer *im, const uint8_t *p, size_t n);
/* Parse time: materialise the track, name its process/thread. */
void tp_proto_descriptor_parse(struct proto_importer *im, const uint8_t *p, size_t n);
/* The descriptor of uuid, or NULL. */
struct proto_track *tp_proto_track_find(struct proto_importer *im, uint64_t uuid);
/* The track id of uuid (materialised on first use), or TP_NULL_U32. */
uint32_t tp_proto_track_resolve(struct proto_importer *im, uint64_t uuid);
/* The same for an event: a child track without a name of its own takes
 * event_name (pool id, 0 none) when materialised; seq_id is the event's
 * sequence (PROTO_NO_SEQ: none), recorded in the track's source args. */
#define PROTO_NO_SEQ UINT32_MAX
uint32_t tp_proto_track_resolve_for(struct proto_importer *im, uint64_t uuid, uint32_t event_name,
                                    uint32_t seq_id);
/* The utid of a thread descriptor track (or the thread its ancestors
 * name), or TP_NULL_U32. */
uint32_t tp_proto_track_utid(struct proto_importer *im, struct proto_track *t);
/* Parse time: a legacy ThreadDescriptor / ProcessDescriptor packet. */
void tp_proto_thread_descriptor_parse(struct proto_importer *im, const uint8_t *p, size_t n);
void tp_proto_process_descriptor_parse(struct proto_importer *im, const uint8_t *p, size_t n);
/* End of file: the sort index hints into the process / thread args. */
void tp_proto_tracks_finish(struct proto_importer *im);
void tp_proto_tracks_free(struct proto_importer *im);

#endif /* TB_TP_PROTO_SEQUENCE_H */
