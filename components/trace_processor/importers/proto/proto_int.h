/*
 * Private declarations of the Perfetto protobuf importer, shared by its
 * files (see README.md for the design):
 *
 *   tokenizer.c    splits the Trace stream into TracePackets across chunks
 *   sequence.c     per-sequence state: interning generations, defaults
 *                  (declared in sequence.h, with clocks and descriptors)
 *   clocks.c       ClockSnapshots and conversion to the trace clock
 *   packets.c      per-packet tokenization, ProcessTree, metadata packets
 *   descriptors.c  TrackDescriptor / ThreadDescriptor -> tracks, threads
 *   track_event.c  TrackEvent semantics (slices, counters, flows, args)
 *   perf_sample.c  PerfSample -> perf_sample, stack_profile_* rows
 *   callstacks.c   TrackEvent callstacks, StreamingProfilePacket samples
 *   importer.c     struct tp_importer_ops glue and the sorted-event dispatch
 *
 * Tokenize time (in trace order): sequence state, interned data and clocks
 * are applied, timestamps converted, and each event pushed into the sorter
 * as a struct proto_ev header followed by the payload bytes it needs. The
 * header holds a reference on the interning generation in effect, so the
 * parse stage (in timestamp order) resolves iids exactly as they were.
 */
#ifndef TB_TP_PROTO_INT_H
#define TB_TP_PROTO_INT_H

#include "../../tp_int.h"
#include "../../model/model.h"
#include "../../model/ftrace.h"
#include "pb.h"
#include "pb_fields.h"

/* Limits. */
#define PROTO_MAX_PACKET ((size_t)256 << 20)   /* one TracePacket */
#define PROTO_MAX_INFLATED ((size_t)512 << 20) /* one compressed_packets */
#define PROTO_MAX_COMPRESSED_DEPTH 4           /* compressed in compressed */
#define PROTO_MAX_ARG_DEPTH 16                 /* nested debug annotations */
#define PROTO_KEY_MAX 512                      /* arg key bytes */
#define PROTO_MAX_EXTRA_COUNTERS 32            /* extra counter values per event */

/* TracePacket field numbers: pb_fields.h's, but for the payloads whose
 * messages TracePacket does not declare here (declaring them would change
 * what decodes them by descriptor: traceconv text, proto content). */
enum {
	PKT_FTRACE_EVENTS = PB_F_TracePacket_ftrace_events,
	PKT_PROCESS_TREE = PB_F_TracePacket_process_tree,
	PKT_TRUSTED_UID = PB_F_TracePacket_trusted_uid,
	PKT_CLOCK_SNAPSHOT = PB_F_TracePacket_clock_snapshot,
	PKT_SYS_STATS = PB_F_TracePacket_sys_stats,
	PKT_PROCESS_STATS = PB_F_TracePacket_process_stats,
	PKT_TIMESTAMP = PB_F_TracePacket_timestamp,
	PKT_SEQ_ID = PB_F_TracePacket_trusted_packet_sequence_id,
	PKT_TRACK_EVENT = PB_F_TracePacket_track_event,
	PKT_INTERNED_DATA = PB_F_TracePacket_interned_data,
	PKT_SEQUENCE_FLAGS = PB_F_TracePacket_sequence_flags,
	PKT_TRACE_CONFIG = PB_F_TracePacket_trace_config,
	PKT_FTRACE_STATS = PB_F_TracePacket_ftrace_stats,
	PKT_TRACE_STATS = PB_F_TracePacket_trace_stats,
	PKT_INCREMENTAL_STATE_CLEARED = PB_F_TracePacket_incremental_state_cleared,
	PKT_PREVIOUS_PACKET_DROPPED = PB_F_TracePacket_previous_packet_dropped,
	PKT_PROCESS_DESCRIPTOR = PB_F_TracePacket_process_descriptor,
	PKT_THREAD_DESCRIPTOR = PB_F_TracePacket_thread_descriptor,
	PKT_SYSTEM_INFO = PB_F_TracePacket_system_info,
	PKT_COMPRESSED_PACKETS = PB_F_TracePacket_compressed_packets,
	PKT_TIMESTAMP_CLOCK_ID = PB_F_TracePacket_timestamp_clock_id,
	PKT_DEFAULTS = PB_F_TracePacket_trace_packet_defaults,
	PKT_TRACK_DESCRIPTOR = PB_F_TracePacket_track_descriptor,
	PKT_MODULE_SYMBOLS = PB_F_TracePacket_module_symbols,
	PKT_PERF_SAMPLE = PB_F_TracePacket_perf_sample,
	PKT_STREAMING_PROFILE = PB_F_TracePacket_streaming_profile_packet,
	PKT_CPU_INFO = PB_F_TracePacket_cpu_info,
	PKT_TRIGGER = PB_F_TracePacket_trigger,
	PKT_CHROME_METADATA = 51,
	PKT_INITIAL_DISPLAY_STATE = 70,
	PKT_CHROME_TRIGGER = 109,
	PKT_CLONE_SNAPSHOT_TRIGGER = PB_F_TracePacket_clone_snapshot_trigger,
	PKT_CONCURRENT_SESSION_EVENT = 134,
	PKT_JOURNALD_EVENT = PB_F_TracePacket_journald_event,
	PKT_GENERIC_KERNEL_TASK_STATE = PB_F_TracePacket_generic_kernel_task_state_event,
	PKT_GENERIC_KERNEL_CPU_FREQ = PB_F_TracePacket_generic_kernel_cpu_freq_event,
	PKT_GENERIC_KERNEL_TASK_RENAME = PB_F_TracePacket_generic_kernel_task_rename_event,
	PKT_GENERIC_KERNEL_PROCESS_TREE = PB_F_TracePacket_generic_kernel_process_tree,
	PKT_SERVICE_EVENT = PB_F_TracePacket_service_event,
	PKT_TRUSTED_PID = PB_F_TracePacket_trusted_pid,
	PKT_FIRST_PACKET_ON_SEQUENCE = PB_F_TracePacket_first_packet_on_sequence,
	PKT_TRACE_UUID = PB_F_TracePacket_trace_uuid,
	PKT_TRACE_ATTRIBUTES = PB_F_TracePacket_trace_attributes,
	PKT_TRACK_EVENT_RANGE_OF_INTEREST = PB_F_TracePacket_track_event_range_of_interest,
	PKT_SYNCHRONIZATION_MARKER = PB_F_TracePacket_synchronization_marker,
	PKT_MACHINE_ID = PB_F_TracePacket_machine_id,
	PKT_STACK_SAMPLE = PB_F_TracePacket_stack_sample,
	PKT_INTERRUPT_INFO = PB_F_TracePacket_interrupt_info,
	PKT_EXTENSION_DESCRIPTOR = 72,
	PKT_PACKAGES_LIST = PB_F_TracePacket_packages_list,
	PKT_USER_LIST = PB_F_TracePacket_user_list,
	PKT_REMOTE_CLOCK_SYNC = 107,
};
#define SEQ_INCREMENTAL_STATE_CLEARED \
	((unsigned)PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED)
#define SEQ_NEEDS_INCREMENTAL_STATE \
	((unsigned)PB_E_TracePacket_SequenceFlags_SEQ_NEEDS_INCREMENTAL_STATE)

/* InternedData field numbers used here. */
enum {
	INTERN_EVENT_CATEGORIES = PB_F_InternedData_event_categories,
	INTERN_EVENT_NAMES = PB_F_InternedData_event_names,
	INTERN_DEBUG_ANNOTATION_NAMES = PB_F_InternedData_debug_annotation_names,
	INTERN_SOURCE_LOCATIONS = PB_F_InternedData_source_locations,
	INTERN_FUNCTION_NAMES = PB_F_InternedData_function_names,
	INTERN_FRAMES = PB_F_InternedData_frames,
	INTERN_CALLSTACKS = PB_F_InternedData_callstacks,
	INTERN_BUILD_IDS = PB_F_InternedData_build_ids,
	INTERN_MAPPING_PATHS = PB_F_InternedData_mapping_paths,
	INTERN_SOURCE_PATHS = PB_F_InternedData_source_paths,
	INTERN_MAPPINGS = PB_F_InternedData_mappings,
	INTERN_LOG_MESSAGE_BODY = PB_F_InternedData_log_message_body,
	INTERN_HISTOGRAM_NAMES = PB_F_InternedData_histogram_names,
	INTERN_KERNEL_SYMBOLS = PB_F_InternedData_kernel_symbols,
	INTERN_DEBUG_ANNOTATION_STRING_VALUES = PB_F_InternedData_debug_annotation_string_values,
	INTERN_STACK_SAMPLE_TASK_CONTEXTS = PB_F_InternedData_stack_sample_task_contexts,
	INTERN_STACK_SAMPLE_EXECUTION_CONTEXTS = PB_F_InternedData_stack_sample_execution_contexts,
	INTERN_STACK_SAMPLE_COUNTER_DESCRIPTORS =
	    PB_F_InternedData_stack_sample_counter_descriptors,
	INTERN_STACK_SAMPLE_ASYNC_CONTEXTS =
	    PB_F_InternedData_stack_sample_async_context_descriptors,
};

#define PROTO_CLOCK_MONOTONIC ((unsigned)PB_E_BuiltinClock_BUILTIN_CLOCK_MONOTONIC)
#define PROTO_CLOCK_BOOTTIME ((unsigned)PB_E_BuiltinClock_BUILTIN_CLOCK_BOOTTIME)

#include "sequence.h"

/* ---- the importer ------------------------------------------------------------ */

/* Kinds of sorter events. */
enum proto_ev_kind {
	EV_TRACK_EVENT = 1,
	EV_TRACK_DESCRIPTOR,
	EV_THREAD_DESCRIPTOR,
	EV_PROCESS_DESCRIPTOR,
	EV_PROCESS_TREE,
	EV_TE_SIMPLE, /* struct proto_te_rec, no payload */
	EV_SYS_STATS,
	EV_PROCESS_STATS,
	EV_FTRACE,                /* one FtraceEvent, its cpu (uint32) after it */
	EV_FTRACE_COMPACT_SWITCH, /* struct ftrace_compact_rec, no header */
	EV_FTRACE_COMPACT_WAKING,
	EV_PERF_SAMPLE,
	EV_MODULE_SYMBOLS,
	EV_TRIGGER,
	EV_CLONE_SNAPSHOT_TRIGGER,
	EV_CHROME_TRIGGER,
	EV_INITIAL_DISPLAY_STATE,
	EV_SESSION_EVENT,
	EV_FTRACE_PLACED,    /* one FtraceEvent, struct ftrace_placed after it */
	EV_GENERIC_KERNEL,   /* a generic_kernel_* payload, its field id (uint32) after it */
	EV_STREAMING_SAMPLE, /* callstack iid (u64), process priority (i64) */
	EV_STACK_SAMPLE,
	EV_JOURNALD, /* a SystemdJournaldEvent */
};

/* The trailer of an ftrace event whose `ftrace_event` row and effect are
 * two sorter records at different times (ftrace_kernel.c). */
enum { FTRACE_PLACED_ROW = 1, FTRACE_PLACED_EFFECT = 2 };
struct ftrace_placed {
	uint32_t cpu;   /* first, as EV_FTRACE's trailer */
	uint32_t mode;  /* FTRACE_PLACED_ROW or FTRACE_PLACED_EFFECT */
	int64_t raw_ts; /* the event's ftrace time (crop decisions) */
};

/* The sorter record of a plain TrackEvent (SLICE_BEGIN/END/INSTANT with
 * only a track, a name and categories), decoded once at tokenize time:
 * names are resolved against the generation in effect then, so it needs
 * neither the payload nor a reference on the generation. */
struct proto_te_rec {
	uint32_t kind; /* EV_TE_SIMPLE */
	uint32_t seq_id;
	uint32_t type;
	uint32_t has_uuid; /* track_uuid or the defaults' */
	uint64_t uuid;
	uint32_t name, cat; /* pool ids, 0 none */
	int64_t pid, tid;   /* the sequence's thread at tokenize time, -1 */
};

/* The fields of a plain TrackEvent before its strings are resolved. */
#define PROTO_PLAIN_MAX_CATS 4
struct proto_te_plain {
	bool ok; /* no field but these so far */
	uint32_t type;
	bool has_uuid;
	uint64_t uuid;
	unsigned n_name, n_cat;
	struct pb_field name;                       /* name_iid or name */
	struct pb_field cats[PROTO_PLAIN_MAX_CATS]; /* category_iids or categories */
};

/* Every sorter record starts with its uint32_t kind: the enum
 * proto_ev_kind in the low PROTO_KIND_BITS, and above them the importer
 * that pushed it (its proto_importer.tag: 0 the root, else which machine's
 * child), so the one sorter callback can hand it to the right one. */
#define PROTO_KIND_BITS 8
#define PROTO_KIND_MASK ((1u << PROTO_KIND_BITS) - 1)

/* Sorter payload header; the payload bytes follow (8-aligned). */
struct proto_ev {
	uint32_t kind;
	uint32_t len;          /* payload bytes after the header */
	struct proto_gen *gen; /* referenced; may be NULL */
	uint32_t seq_id;       /* trusted_packet_sequence_id */
	/* EV_TRACK_EVENT under --analyze-trace-proto-content: the bytes of
	 * its whole TracePacket follow the extra counter values; 0 none */
	uint32_t pkt_len;
	int64_t pid, tid;     /* the sequence's thread at tokenize time, -1 */
	int64_t thread_ts;    /* legacy thread time (ns), TP_NULL_I64 */
	int64_t thread_instr; /* legacy instruction count, TP_NULL_I64 */
	double counter_value; /* COUNTER events: the absolute value, or NaN */
	/* Extra counter values made absolute at tokenize time (incremental
	 * counters): n_abs_int int values then n_abs_dbl double values follow
	 * the payload as doubles; 0 when the event's own values are absolute. */
	uint32_t n_abs_int, n_abs_dbl;
};

/* Tokenize-time absolute extra counter values of one event. */
struct proto_abs_counters {
	uint32_t n_int, n_dbl;
	double v[2 * PROTO_MAX_EXTRA_COUNTERS];
};

struct proto_importer {
	struct tp *tp;
	/* Machines. The importer the trace was given to (the root) imports
	 * the host's packets and hands those of each other machine
	 * (TracePacket.machine_id) to a child importer of its own, with its
	 * own sequences, clocks, tracks and ftrace state, as Perfetto forks a
	 * reader per machine. When the first packet from another machine comes
	 * before any of the host's, the host adopts that machine id (its
	 * machine row is relabelled) and the root imports its packets. */
	struct proto_importer *root;           /* itself for the root */
	uint32_t machine;                      /* machine row of the packets it imports */
	uint32_t tag;                          /* kind bits of its sorter records */
	uint32_t n_srcs;                       /* root: sorter runs handed out */
	bool host_used;                        /* root: a host packet came */
	bool adoption_done;                    /* root: the first machine packet came */
	uint64_t adopted_raw;                  /* root: the machine id it adopted, 0 none */
	VEC(struct proto_importer *) children; /* root: by tag >> PROTO_KIND_BITS, - 1 */
	/* tokenizer */
	VEC(uint8_t) tail; /* an incomplete packet carried between chunks */
	bool failed;       /* bad framing: ignore the rest of the stream */
	unsigned depth;    /* compressed_packets nesting */
	/* sequences */
	struct hmap seqs;  /* seq id -> struct proto_seq * */
	uint32_t num_cpus; /* SystemInfo.num_cpus, 0 unknown */
#define PROTO_SEQ_CACHE 256
	struct proto_seq *seq_cache[PROTO_SEQ_CACHE]; /* by id, for small ids */
	struct proto_seq *last_seq;
	struct proto_gen *gens; /* every live generation */
	struct proto_clocks *clocks;
	int64_t last_ts;
	/* tracks */
	struct hmap tracks_by_uuid; /* uuid -> index in tracks */
#define PROTO_TRACK_CACHE 64
	struct proto_track_slot {
		uint64_t uuid;
		uint32_t idx1; /* index in tracks + 1, 0 empty */
	} track_cache[PROTO_TRACK_CACHE];
	VEC(struct proto_track) tracks;
	uint32_t default_track;               /* uuid 0, TP_NULL_U32 until used */
	struct hmap desc_of_tid, desc_of_pid; /* tid/pid -> uuid of its descriptor */
	struct hmap first_packet_seqs;        /* seq ids with first_packet_on_sequence */
	struct hmap ftrace_error_seqs;        /* seq ids whose ftrace setup errors were counted */
	bool uuid_from_packet;     /* trace_uuid came from the trace (TraceUuid or config) */
	VEC(uint8_t) trace_config; /* the last TraceConfig, for end-of-file checks */
	int service_major;         /* N of tracing_service_version "Perfetto vN.", -1 unknown */
	/* upid / utid -> sibling_order_rank (as uint32) of its descriptor under
	 * explicit ordering: *_sort_index_hint args at end of file. */
	struct hmap process_rank, thread_rank;
	/* track_event_range_of_interest start (ns), INT64_MIN none */
	int64_t roi_start_ns;
	/* parse scratch */
	VEC(char) scratch;
	struct tp_args_builder args;
	struct proto_ftrace *ftrace;                 /* ftrace.c state, NULL until used */
	struct proto_ftrace_kernel *ftrace_kernel;   /* ftrace_kernel.c, NULL until used */
	struct proto_generic_kernel *generic_kernel; /* generic_kernel.c, NULL until used */
	struct proto_perf *perf;                     /* perf_sample.c state, NULL until used */
	struct proto_callstacks *callstacks;         /* callstacks.c state, NULL until used */
	struct proto_stack_sample *stack_sample;     /* stack_sample.c state, NULL until used */
	struct proto_legacy_async *legacy_async;     /* legacy_async.c state, NULL until used */
	struct tp_json_args *json_args; /* legacy_json_value parsing, NULL until used */
	/* PackagesList / AndroidUserList (system_probes.c): package names
	 * inserted (pool id -> 1), android user id -> its package_list row */
	struct hmap packages_seen, user_rows;
	/* root: --analyze-trace-proto-content's samples (content.c), NULL off */
	struct proto_content *content;
	/* SysStats disk_stat: device name (pool id) -> index in disks, whose
	 * previous cumulative values the next sample is a delta from. */
	struct hmap disk_by_name;
	struct hmap irq_ids; /* irq ids with a linux_interrupt_mapping row */
	/* misc_packets.c: where trace_trigger came from (0 none, 1 a trigger,
	 * 2 a clone-snapshot trigger); ChromeMetadata packets seen */
	int trigger_kind;
	uint32_t chrome_metadata_count;
	VEC(struct proto_disk_prev { int64_t v[10]; }) disks;
};

/* A new sorter run for im (dense across the root and its children). */
static inline uint32_t proto_new_src(struct proto_importer *im)
{
	return im->root->n_srcs++;
}

static inline struct proto_seq *proto_seq_get(struct proto_importer *im, uint32_t id)
{
	if (id < PROTO_SEQ_CACHE && im->seq_cache[id])
		return im->seq_cache[id];
	return tp_proto_seq_get_slow(im, id);
}

/* The importer of the packets of raw machine id raw (nonzero) under root:
 * root itself when the host adopted it, else the machine's child, made on
 * first use (importer.c). NULL past 2^24 machines. */
struct proto_importer *tp_proto_machine_importer(struct proto_importer *root, uint64_t raw);

/* Tokenize the concatenated `0a len packet` records in p[0, n) (tokenizer.c).
 * Keeps an incomplete tail when `stream`; else a tail is a failure. */
void tp_proto_tokenize(struct proto_importer *im, const uint8_t *p, size_t n, bool stream);
void tp_proto_tokenize_eof(struct proto_importer *im);
/* One TracePacket (packets.c). */
void tp_proto_packet(struct proto_importer *im, const uint8_t *p, size_t n);
/* The sorter callback: dispatch one event to its parse-time handler
 * (importer.c). */
void tp_proto_on_sorted(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx);
/* Push an event for parsing at ts (packets.c); NULL when the sorter
 * dropped it as late. */
struct proto_ev *tp_proto_push(struct proto_importer *im, int64_t ts, enum proto_ev_kind kind,
                               struct proto_gen *gen, const struct proto_seq *seq, const uint8_t *p,
                               size_t n);
/* The same with extra bytes copied after the payload. */
struct proto_ev *tp_proto_push_extra(struct proto_importer *im, int64_t ts, enum proto_ev_kind kind,
                                     struct proto_gen *gen, const struct proto_seq *seq,
                                     const uint8_t *p, size_t n, const void *extra,
                                     size_t extra_len);
/* The same into sorter run src instead of the sequence's. */
struct proto_ev *tp_proto_push_src(struct proto_importer *im, uint32_t src, int64_t ts,
                                   enum proto_ev_kind kind, struct proto_gen *gen,
                                   const struct proto_seq *seq, const uint8_t *p, size_t n,
                                   const void *extra, size_t extra_len);
/* Parse-time handlers. */
void tp_proto_track_event_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                                const uint8_t *p, size_t n);
void tp_proto_process_tree_parse(struct proto_importer *im, const struct proto_ev *ev,
                                 const uint8_t *p, size_t n);
/* SysStats / ProcessStats at ts → counter tracks (system_probes.c). */
/* misc_packets.c: triggers, Chrome metadata, the initial display state,
 * tracing session events. */
/* journald.c: a SystemdJournaldEvent into logs (or its counters into stats). */
void tp_proto_journald_parse(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n);
void tp_proto_trigger_parse(struct proto_importer *im, int64_t ts, bool clone, const uint8_t *p,
                            size_t n);
void tp_proto_chrome_trigger_parse(struct proto_importer *im, int64_t ts, const uint8_t *p,
                                   size_t n);
void tp_proto_chrome_metadata(struct proto_importer *im, const uint8_t *p, size_t n);
void tp_proto_initial_display_state_parse(struct proto_importer *im, int64_t ts, const uint8_t *p,
                                          size_t n);
void tp_proto_session_event_parse(struct proto_importer *im, int64_t ts, const uint8_t *p,
                                  size_t n);
/* InterruptInfo: the machine's linux_interrupt_mapping rows. */
/* PackagesList (47) and AndroidUserList (123) at tokenize time (they
 * have no timestamp), system_probes.c. */
void tp_proto_packages_list_parse(struct proto_importer *im, const uint8_t *p, size_t n);
void tp_proto_user_list_parse(struct proto_importer *im, const uint8_t *p, size_t n);
void tp_proto_interrupt_info_parse(struct proto_importer *im, const uint8_t *p, size_t n);
/* CpuInfo: the cpu table's processor, cluster_id, capacity and args. */
void tp_proto_cpu_info_parse(struct proto_importer *im, const uint8_t *p, size_t n);
void tp_proto_sys_stats_parse(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n);
void tp_proto_process_stats_parse(struct proto_importer *im, int64_t ts, const uint8_t *p,
                                  size_t n);
/* Ftrace bundles (ftrace.c): tokenize pushes each event at its own ts;
 * parse fills sched, thread_state, ftrace_event and friends. */
void tp_proto_ftrace_tokenize(struct proto_importer *im, struct proto_seq *seq, const uint8_t *p,
                              size_t n);
void tp_proto_ftrace_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                           const uint8_t *p, size_t n);
void tp_proto_ftrace_compact_parse(struct proto_importer *im, int64_t ts, const void *payload);
void tp_proto_ftrace_free(struct proto_importer *im);
/* ftrace_misc.c: the name of a typed ftrace event it handles (NULL if it
 * does not), and its parse-time import; model is ftrace.c's. */
const char *tp_proto_ftrace_misc_name(uint32_t id);
void tp_proto_ftrace_misc_parse(struct proto_importer *im, struct tp_ftrace *model, int64_t ts,
                                int64_t pid, uint32_t id, const uint8_t *p, size_t n);
/* ftrace_kernel.c. Tokenize time: a bundle (its cpu's first one sets the
 * crop time, metadata ftrace_latest_data_start_ns); an event of field id
 * that it places itself (true: pushed or counted, the caller skips it).
 * Parse time: the crop time (events before it only get their ftrace_event
 * row), and the effect of event id (false: not one of its events). */
void tp_proto_ftrace_kernel_bundle(struct proto_importer *im, const struct proto_seq *seq,
                                   uint32_t cpu, int64_t clock_off, const uint8_t *p, size_t n);
bool tp_proto_ftrace_kernel_place(struct proto_importer *im, struct proto_seq *seq, uint32_t cpu,
                                  int64_t ts, uint32_t id, const uint8_t *ev, size_t evn);
int64_t tp_proto_ftrace_kernel_crop(struct proto_importer *im);
bool tp_proto_ftrace_kernel_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                                  uint32_t cpu, int64_t pid, uint32_t id, const uint8_t *p,
                                  size_t n);
void tp_proto_ftrace_kernel_free(struct proto_importer *im);
/* generic_kernel.c: a generic_kernel_* packet payload at parse time (its
 * TracePacket field id after the payload). */
void tp_proto_generic_kernel_parse(struct proto_importer *im, int64_t ts, const uint8_t *p,
                                   size_t n);
void tp_proto_generic_kernel_free(struct proto_importer *im);
/* PerfSample (perf_sample.c): a perf_sample row, its callstack resolved
 * through the event's generation into stack_profile_* rows. */
void tp_proto_perf_sample_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                                const uint8_t *p, size_t n);
void tp_proto_perf_free(struct proto_importer *im);
/* The importer's stack profile interning (perf_sample.c), made on first use. */
struct tp_stack_profile *tp_proto_stack_profile(struct proto_importer *im);
/* The leaf callsite of interned Callstack iid (frames root first, resolved
 * through g's Frames and Mappings), or TP_NULL_U32 (and a stat). */
uint32_t tp_proto_callstack_row(struct proto_importer *im, const struct proto_gen *g, uint64_t iid);

/* Callstacks of TrackEvents and Chrome's sampling profiler (callstacks.c). */
struct proto_te_callstack {
	const uint8_t *inline_data; /* TrackEvent.callstack (InlineCallstack) */
	size_t inline_len;
	bool has_iid, has_weight;
	uint64_t iid;  /* callstack_iid */
	double weight; /* callstack_weight */
};
/* A track_event_callstacks row for the slice an event began, ended (end) or
 * was (an instant), when it has a callstack. */
void tp_proto_te_callstack_add(struct proto_importer *im, const struct proto_gen *g,
                               const struct proto_te_callstack *cs, uint32_t slice, uint32_t track,
                               bool end);
/* Tokenize time: a StreamingProfilePacket's samples at the sequence's
 * delta-coded timestamps, each pushed to the sorter as EV_STREAMING_SAMPLE. */
void tp_proto_streaming_profile_tokenize(struct proto_importer *im, struct proto_seq *seq,
                                         const uint8_t *p, size_t n);
/* The leaf callsite of an InlineCallstack p[0, n) (frames root first, each
 * a function name, source file and line), its frames in the dummy mapping
 * which; TP_NULL_U32 without frames. */
enum proto_inline_mapping {
	PROTO_INLINE_TRACK_EVENT,  /* "track_event_inline" */
	PROTO_INLINE_STACK_SAMPLE, /* "stack_sample_inline" */
	PROTO_INLINE_INTERNED,     /* "": interned Frames without a mapping */
	PROTO_INLINE_MAPPINGS
};
uint32_t tp_proto_inline_callstack(struct proto_importer *im, enum proto_inline_mapping which,
                                   const uint8_t *p, size_t n);
/* The frame (name, file, line; pool ids, line TP_NULL_U32 for none) in dummy
 * mapping which, made once with a stack_profile_symbol row of its own. */
uint32_t tp_proto_dummy_frame(struct proto_importer *im, enum proto_inline_mapping which,
                              uint32_t name, uint32_t file, uint32_t line);
/* The track of a legacy async event (legacy_async.c): phase b/e/n or
 * S/T/p/F, its name (pool id), upid (TP_NULL_U32: a global or unscoped
 * id), the event's process (TP_NULL_U32 unknown), id and scope (pool id:
 * the category, the name for S/T/p/F). */
uint32_t tp_proto_legacy_async_track(struct proto_importer *im, int phase, uint32_t name,
                                     uint32_t upid, uint32_t event_upid, uint64_t id,
                                     uint32_t scope);
void tp_proto_legacy_async_free(struct proto_importer *im);
/* --analyze-trace-proto-content (content.c): a packet's field sizes under
 * its annotation (a TrackEvent's: its category and name, pool ids or
 * TP_NULL_STR), kept by the root importer; at end of file the
 * experimental_proto_path / experimental_proto_content rows. */
enum proto_content_kind {
	PROTO_CONTENT_PLAIN,       /* no annotation */
	PROTO_CONTENT_SKIPPED,     /* skipped_packet: invalid_incremental_state */
	PROTO_CONTENT_TRACK_EVENT, /* event.category, event.name */
};
void tp_proto_content_enable(struct proto_importer *im);
void tp_proto_content_packet(struct proto_importer *im, const uint8_t *p, size_t n,
                             enum proto_content_kind kind, uint32_t cat, uint32_t name);
void tp_proto_content_finish(struct proto_importer *im);
void tp_proto_content_free(struct proto_importer *im);
/* StackSample (TracePacket 135, stack_sample.c) at parse time. */
void tp_proto_stack_sample_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                                 const uint8_t *p, size_t n);
void tp_proto_stack_sample_free(struct proto_importer *im);
void tp_proto_streaming_sample_parse(struct proto_importer *im, int64_t ts,
                                     const struct proto_ev *ev, const uint8_t *p, size_t n);
void tp_proto_callstacks_free(struct proto_importer *im);
/* Tokenize-time metadata packets (packets.c). */
void tp_proto_metadata_packet(struct proto_importer *im, uint32_t field, int64_t ts,
                              const uint8_t *p, size_t n);
/* Tokenize time: TraceConfig (33) and SystemInfo (45) into metadata
 * (metadata.c). */
void tp_proto_trace_config(struct proto_importer *im, const uint8_t *p, size_t n);
void tp_proto_system_info(struct proto_importer *im, const uint8_t *p, size_t n);
/* TraceAttributes (TracePacket 126, TraceConfig 48): `trace_attribute.<key>`. */
void tp_proto_trace_attributes(struct proto_importer *im, const uint8_t *p, size_t n);
/* Tokenize time: TraceStats (35) and FtraceStats (34) into `stats`
 * (trace_stats.c). */
void tp_proto_trace_stats(struct proto_importer *im, const uint8_t *p, size_t n);
void tp_proto_ftrace_stats(struct proto_importer *im, uint32_t seq_id, const uint8_t *p, size_t n);
/* End of file: the stats that judge the config against what happened
 * (long_trace_mode_bytes_overwritten, config_write_into_file_no_flush). */
void tp_proto_config_stats_eof(struct proto_importer *im);
/* Every packet of seq: count a previous_packet_dropped (reasons) on a
 * sequence seen before (inline: it runs for every packet). */
void tp_proto_seq_count_loss(struct proto_seq *seq, uint32_t reasons);
static inline void proto_seq_note_loss(struct proto_seq *seq, uint32_t reasons)
{
	if (TB_UNLIKELY(reasons) && seq->loss.seen && seq->id)
		tp_proto_seq_count_loss(seq, reasons);
	seq->loss.seen = true;
}
/* TrackEvent tokenize-time timestamps: legacy *_us fields (track_event.c).
 * Returns false to drop the event. */
bool tp_proto_track_event_tokenize(struct proto_importer *im, struct proto_seq *seq,
                                   const uint8_t *p, size_t n, int64_t *ts, bool has_ts,
                                   struct proto_ev *out, struct proto_abs_counters *abs,
                                   struct proto_te_rec *simple);
void tp_proto_track_event_parse_simple(struct proto_importer *im, int64_t ts,
                                       const struct proto_te_rec *r);
/* Decode p[0, n) as a plain TrackEvent (type BEGIN/END/INSTANT, track_uuid,
 * one name, up to PROTO_PLAIN_MAX_CATS categories, nothing else) in one
 * pass. False, for the general path to handle, if it is anything else or
 * malformed. Pure: no state changes. */
bool tp_proto_te_decode_plain(const uint8_t *p, size_t n, struct proto_te_plain *pl);
/* The sorter record of a plain event on seq: defaults' track, names and
 * categories resolved against seq's current generation. */
void tp_proto_te_plain_record(struct proto_importer *im, const struct proto_seq *seq,
                              const struct proto_te_plain *pl, struct proto_te_rec *rec);

/* v * 1000 (µs to ns), saturated at the int64 limits. */
static inline int64_t proto_sat_mul_1000(int64_t v)
{
	if (v > INT64_MAX / 1000)
		return INT64_MAX;
	if (v < INT64_MIN / 1000)
		return INT64_MIN;
	return v * 1000;
}

/* Intern a string made of the scratch buffer. */
static inline void proto_scratch_reset(struct proto_importer *im)
{
	vec_clear(&im->scratch);
}
void tp_proto_scratch_add(struct proto_importer *im, const void *p, size_t n);

#endif /* TB_TP_PROTO_INT_H */
