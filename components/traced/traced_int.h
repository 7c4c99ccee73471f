/*
 * Private declarations shared by the files of components/traced: the
 * service state (service.c), the two IPC ports (producer_port.c,
 * consumer_port.c), the per-buffer chunk store (trace_buffer.c) and the
 * packets the service writes itself (service_packets.c).
 */
#ifndef TB_TRACED_INT_H
#define TB_TRACED_INT_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "ipc.h"
#include "pb.h"
#include "pb_fields.h"
#include "protos.h"
#include "traced.h"
#include "tracing.h"

#define TRACED_LOG "traced"

/* Limits (Perfetto's, compat §1.6). */
#define TRACED_MAX_BUFFERS_PER_SESSION 128
#define TRACED_MAX_SESSIONS 15
#define TRACED_MAX_SESSIONS_PER_UID 5
#define TRACED_MAX_DURATION_MS (7u * 24 * 3600 * 1000)
#define TRACED_MAX_BUFFER_BYTES ((size_t)1 << 30)
#define TRACED_DEFAULT_FLUSH_TIMEOUT_MS 5000u
#define TRACED_DEFAULT_STOP_TIMEOUT_MS 5000u
/* ReadBuffers replies stay below the frame cap with room for the frame. */
#define TRACED_READ_REPLY_MAX ((size_t)128 * 1024 - 1024)
/* ReadBuffers reads this much buffer per step and takes the next step once
 * the consumer's send queue is at most the target (the drain of the queue
 * into the socket is the cue), so a buffer of any size streams out without
 * the queue growing past about a step. */
#define TRACED_READ_STEP_BYTES ((size_t)256 << 10)
#define TRACED_READ_QUEUE_TARGET ((size_t)0)
#define TRACED_SERVICE_SEQ_ID 1u
/* QueryServiceState replies: a TracingServiceState chunk stays below this
 * (Perfetto's kIPCBufferSize - 128), the rest goes in further replies. */
#define TRACED_QUERY_CHUNK_MAX ((size_t)128 * 1024 - 128)
/* write_into_file: drain period default and floor (compat §1.6). */
#define TRACED_DEFAULT_WRITE_PERIOD_MS 5000u
#define TRACED_MIN_WRITE_PERIOD_MS 100u
/* write_into_file into a pipe, socket or terminal: bytes the output has not
 * taken yet, at most (beyond: the data waits in the session's buffers), and
 * how long it may take none of them before its session is stopped. */
#define TRACED_WIF_QUEUE_MAX ((size_t)4 << 20)
#define TRACED_WIF_STALL_MS 10000u
/* flush_period_ms floor, so a tiny value cannot flood producers. */
#define TRACED_MIN_FLUSH_PERIOD_MS 100u
/* builtin_data_sources.snapshot_interval_ms default (Perfetto's), and our
 * floor for it and for incremental_state_config.clear_period_ms. */
#define TRACED_DEFAULT_SNAPSHOT_INTERVAL_MS 10000u
#define TRACED_MIN_PERIOD_MS 10u
/* Clock snapshots kept between two reads (Perfetto's ring size), and the
 * drift that makes a new one replace the last unread one. */
#define TRACED_MAX_CLOCK_SNAPSHOTS 16
#define TRACED_CLOCK_DRIFT_NS 10000000
#define TRACED_NUM_CLOCKS 6
/* TracingServiceEvent field numbers the service records. */
#define TRACED_EV_ALL_STARTED PB_F_TracingServiceEvent_all_data_sources_started
#define TRACED_EV_TRACING_STARTED PB_F_TracingServiceEvent_tracing_started
#define TRACED_EV_ALL_FLUSHED PB_F_TracingServiceEvent_all_data_sources_flushed
#define TRACED_EV_TRACING_DISABLED PB_F_TracingServiceEvent_tracing_disabled
#define TRACED_EV_FLUSH_STARTED PB_F_TracingServiceEvent_flush_started
#define TRACED_EV_MAX 10

/* ---- trace buffer (trace_buffer.c) --------------------------------------- */

struct traced_buffer;

struct traced_buffer_stats {
	uint64_t bytes_written, chunks_written, chunks_overwritten, chunks_rewritten;
	uint64_t chunks_discarded, patches_succeeded, patches_failed, abi_violations;
	uint64_t bytes_read, chunks_read, write_wrap_count, packets_dropped;
};

/* One packet read out of a buffer: the producer's bytes (borrowed) and the
 * trusted trailer the service appends (borrowed). Non-zero return stops. */
typedef int (*traced_packet_fn)(void *ctx, const uint8_t *data, size_t len, const uint8_t *trailer,
                                size_t trailer_len);

struct traced_buffer *traced_buffer_new(uint32_t id, size_t size, bool discard,
                                        uint32_t *next_seq_id);
void traced_buffer_free(struct traced_buffer *b);
uint32_t traced_buffer_id(const struct traced_buffer *b);
size_t traced_buffer_size(const struct traced_buffer *b);
/* Bytes of slab memory the buffer holds for its records (records past the
 * slabs' bound are heap blocks of their own, not counted). */
size_t traced_buffer_mem(const struct traced_buffer *b);
const struct traced_buffer_stats *traced_buffer_stats(const struct traced_buffer *b);
/* Copy one committed chunk (payload borrowed) in; replaces an earlier copy
 * of the same (producer, writer, chunk_id). Returns 0 or -ENOSPC when the
 * buffer's policy dropped it. */
int traced_buffer_copy_chunk(struct traced_buffer *b, uint16_t producer_id, uid_t uid, pid_t pid,
                             const struct tracing_chunk_header *h, const uint8_t *payload,
                             size_t len);
/* Apply one 4-byte patch at offset of a stored chunk's payload; has_more =
 * false makes the chunk readable. 0, or -ENOENT / -EINVAL (counted). */
int traced_buffer_patch(struct traced_buffer *b, uint16_t producer_id, uint16_t writer_id,
                        uint32_t chunk_id, uint32_t offset, const uint8_t *data, size_t len);
void traced_buffer_patch_done(struct traced_buffer *b, uint16_t producer_id, uint16_t writer_id,
                              uint32_t chunk_id);
/* Hand every whole readable packet to cb (sequence by sequence) and forget
 * the chunks they came from. Packets with reserved fields are dropped and
 * counted in *invalid. Returns 0 or cb's non-zero return. */
int traced_buffer_read(struct traced_buffer *b, traced_packet_fn cb, void *ctx, uint64_t *invalid);
/* traced_buffer_read in steps: stops at a chunk boundary once at least
 * budget bytes of chunk records were read, with *more set when readable
 * chunks remain (a later call goes on from there). */
int traced_buffer_read_some(struct traced_buffer *b, traced_packet_fn cb, void *ctx,
                            uint64_t *invalid, size_t budget, bool *more);
/* True if a top-level field of the packet is one only the service may set,
 * or the packet does not parse. */
bool traced_packet_is_reserved(const uint8_t *data, size_t len);

/* ---- service state (service.c) ------------------------------------------- */

struct traced_cmd {
	uint8_t *buf;
	size_t len;
	int fd;
};

struct traced_ds_reg {
	char *name;
	uint64_t id;
	bool notify_on_start, notify_on_stop, no_flush, clear_incremental;
};

struct traced_producer {
	struct traced *svc;
	uint64_t client_id;
	uint16_t id;
	uid_t uid;
	pid_t pid;
	char *name, *sdk_version;
	bool initialized;
	uint32_t page_hint, size_hint;
	bool provided_shmem;
	struct tracing_smb *smb;
	bool setup_sent;
	struct ipc_call *async_call;   /* the pending GetAsyncCommand */
	VEC(struct traced_cmd) queued; /* commands before GetAsyncCommand */
	VEC(struct traced_ds_reg) sources;
	VEC(uint32_t) writers; /* registered trace writer ids (informational) */
	uint8_t *scratch;      /* one page, for copying chunks out */
};

struct traced_instance {
	uint64_t id;
	uint16_t producer_id;
	char *name;
	bool notify_start, notify_stop, started, stopped;
	bool clear_incremental; /* registered handles_incremental_state_clear */
};

/* One clock snapshot: the TRACED_NUM_CLOCKS clocks read back to back,
 * BOOTTIME first (service_packets.c has the list). */
struct traced_clocks {
	uint64_t ns[TRACED_NUM_CLOCKS];
};

enum traced_session_state {
	TRACED_CONFIGURED,
	TRACED_STARTED,
	TRACED_DISABLING,
	TRACED_DISABLED,
};

struct traced_consumer;

/* write_into_file's output (write_into_file.c). The service loop never
 * blocks on it: see that file. */
struct traced_wif {
	int fd;        /* -1: none, or closed (complete, full or failed) */
	bool pollable; /* non-blocking; watched for LOOP_OUT while it is full */
	bool watching;
	bool draining;         /* a drain is between steps, waiting for room */
	bool final;            /* the session ended: one last drain, then close */
	bool final_drained;    /* that last drain has started */
	bool notify_when_done; /* answer EnableTracing once the file is closed */
	size_t buf;            /* the buffer the drain is at */
	VEC(uint8_t) q;        /* bytes the output has not taken, from head */
	size_t head;
	int64_t progress_ns; /* the output last took bytes, or began waiting */
	uint64_t stall_timer;
	char error[192]; /* why the session was stopped ("" if it was not) */
};

/* A matched trigger activation remembered for max_per_24_h (triggers.c). */
struct traced_trigger_hit {
	int64_t ts;
	uint64_t name_hash;
};

/* A trigger a session received (triggers.c). */
struct traced_trigger {
	int64_t ts; /* BOOTTIME ns */
	char *name, *producer;
	uid_t uid;
	uint32_t stop_delay_ms;
};

struct traced_session {
	struct traced *svc;
	uint64_t id;
	struct traced_consumer *consumer; /* NULL once it went away */
	uid_t consumer_uid;
	enum traced_session_state state;
	uint8_t *config; /* the TraceConfig bytes as received */
	size_t config_len;
	Perfetto__Protos__TraceConfig *cfg;
	VEC(struct traced_buffer *) buffers; /* config index -> buffer */
	VEC(struct traced_instance) instances;
	uint32_t next_seq_id;
	uint64_t duration_timer, stop_timer;
	struct ipc_call *enable_call;
	int64_t start_ns;
	bool emitted_header;
	/* Service packets due at the next read: the snapshot taken at start,
	 * the periodic ones that drifted, a sync marker, trace stats, and the
	 * lifecycle events not emitted yet (BOOTTIME ns by TracingServiceEvent
	 * field, 0 = none pending). */
	bool has_initial_clocks, emit_sync_marker, emit_stats;
	struct traced_clocks initial_clocks;
	struct traced_clocks clocks[TRACED_MAX_CLOCK_SNAPSHOTS];
	size_t n_clocks;
	int64_t events_ns[TRACED_EV_MAX];
	uint64_t snapshot_timer, clear_timer;
	/* trigger_config: the triggers received, how many went into the trace,
	 * the start-timeout or stop-delay timer. */
	VEC(struct traced_trigger) triggers;
	size_t triggers_emitted;
	uint64_t trigger_timer;
	/* write_into_file: the output, bytes written, the cap (0: none), the
	 * drain and periodic flush timers. */
	struct traced_wif wif;
	bool write_into_file, file_full;
	uint64_t file_bytes, max_file_bytes;
	uint64_t write_timer, flush_timer;
	bool all_started_sent; /* ObserveEvents got all_data_sources_started */
	bool all_started_seen; /* the lifecycle event was recorded */
};

struct traced_consumer {
	struct traced *svc;
	uint64_t client_id;
	uid_t uid;
	struct traced_session *session;
	struct ipc_call *observe_call; /* ObserveEvents stream, or NULL */
	bool observe_all_started;      /* TYPE_ALL_DATA_SOURCES_STARTED asked */
	/* A ReadBuffers in progress: its call, the buffer it is at, whether
	 * the service packets went out, the timer of its next step. */
	struct ipc_call *read_call;
	size_t read_buf;
	bool read_header_done;
	uint64_t read_timer;
	struct pb_writer read_w; /* its replies, kept between reads */
	bool read_w_ready;
};

/* A flush in progress: producers that still owe an ack. */
struct traced_flush {
	struct traced *svc;
	uint64_t id;
	uint64_t session_id;
	VEC(uint16_t) pending;
	uint64_t timer;
	struct ipc_call *call; /* consumer Flush, or NULL */
	bool disable_after;    /* no call: disable the session when done */
};

struct traced {
	struct loop *loop;
	struct ipc_host *prod_host, *cons_host;
	struct hmap producers; /* client_id -> producer */
	struct hmap consumers; /* client_id -> consumer */
	VEC(struct traced_session *) sessions;
	VEC(struct traced_flush *) flushes;
	uint16_t last_producer_id;
	uint64_t next_session_id, next_instance_id, next_flush_id;
	uint32_t next_buffer_id;
	struct traced_stats stats;
	uid_t uid;     /* the service's own (effective) uid */
	bool lockdown; /* TraceConfig.lockdown_mode SET: other uids' producers are refused */
	/* triggers.c: matched trigger activations of the last 24 h (boot ns,
	 * name hash), oldest first, for TriggerConfig.Trigger.max_per_24_h */
	VEC(struct traced_trigger_hit) trigger_history;
	uint64_t trigger_rng; /* xorshift state for skip_probability */
};

struct traced_producer *traced_producer_by_id(struct traced *t, uint16_t id);
struct traced_session *traced_session_by_id(struct traced *t, uint64_t id);
/* The buffer with global id in s, or NULL. */
struct traced_buffer *traced_session_buffer(struct traced_session *s, uint32_t id);
/* True if producer p has an instance in a session owning buffer id. */
struct traced_buffer *traced_buffer_for_producer(struct traced *t, struct traced_producer *p,
                                                 uint32_t id);

/* Session lifecycle. */
/* fd: the output file passed with EnableTracing (ownership passes, also
 * on failure), or -1. */
int traced_session_create(struct traced *t, struct traced_consumer *c, const uint8_t *cfg,
                          size_t cfg_len, struct ipc_call *call, int fd, char *errbuf,
                          size_t errlen);
void traced_session_start(struct traced_session *s);
/* Begin stopping data sources; the session becomes DISABLED (and the
 * EnableTracing call gets disabled=true) when they are all stopped. */
void traced_session_disable(struct traced_session *s);
void traced_session_free(struct traced_session *s);
/* Offer producer p's data source reg to every started session. */
void traced_sessions_on_new_source(struct traced *t, struct traced_producer *p,
                                   const struct traced_ds_reg *reg);
void traced_session_instance_stopped(struct traced_session *s, uint64_t instance_id);
void traced_session_instance_started(struct traced_session *s, uint64_t instance_id);
/* True once every data source instance of s reported started. */
bool traced_session_all_started(const struct traced_session *s);
/* Answer s's pending ObserveEvents calls if all its sources started. */
void traced_session_check_all_started(struct traced_session *s);
/* write_into_file: take over fd as s's output (-1: none). A pipe, socket or
 * terminal is made non-blocking on a description of its own where possible. */
void traced_wif_init(struct traced_session *s, int fd);
/* Stop watching, close the output, free the queue. */
void traced_wif_release(struct traced_session *s);
/* write_into_file: drain s's buffers into its file (service packets first;
 * final: once more, with the trailer packets, then close the file). As much
 * as the output takes now; the rest goes on when it is writable. Stops the
 * session when max_file_size_bytes is reached, a write fails or the output
 * stalls (s->wif.error says why). */
void traced_session_write_file(struct traced_session *s, bool final);

/* ClearIncrementalState to every producer with started instances of s
 * that registered handles_incremental_state_clear, one command per producer
 * with its instance ids (the incremental_state_config.clear_period_ms
 * timer). */
void traced_session_clear_incremental_state(struct traced_session *s);

/* Flushes: ask every producer with an instance in s; call (if any) gets the
 * outcome, else with disable_after the session is disabled when the flush
 * ends. */
void traced_flush_start(struct traced_session *s, uint32_t timeout_ms, uint64_t flags,
                        struct ipc_call *call, bool disable_after);
void traced_flush_ack(struct traced *t, uint16_t producer_id, uint64_t flush_id);

/* ---- triggers (triggers.c) ------------------------------------------------ */

/* EnableTracing checks of trigger_config (Perfetto's messages). 0 or
 * -EINVAL with errbuf. */
int traced_triggers_validate(const Perfetto__Protos__TraceConfig *cfg, char *errbuf, size_t errlen);
/* At session creation: START_TRACING arms the trigger timeout and returns
 * false (do not start now); STOP_TRACING makes trigger_timeout_ms the
 * duration. True: start as usual. */
bool traced_triggers_on_create(struct traced_session *s);
/* At StartTracing: arm the stop delay of a STOP trigger received before. */
void traced_triggers_on_start(struct traced_session *s);
/* ActivateTriggers from producer p: each name offered to every session. */
void traced_activate_triggers(struct traced *t, struct traced_producer *p, char *const *names,
                              size_t n);
/* True while a session with trigger_config has received no trigger (its
 * reads give nothing, as Perfetto's). */
bool traced_session_waiting_for_trigger(const struct traced_session *s);
/* True when a STOP_TRACING trigger arrived: its stop delay, not
 * duration_ms, ends the session. */
bool traced_session_trigger_owns_stop(const struct traced_session *s);
/* Trigger packets for the triggers not emitted yet (w: scratch). */
int traced_emit_triggers(struct traced_session *s, struct pb_writer *w, traced_packet_fn cb,
                         void *ctx);
void traced_triggers_release(struct traced_session *s);
/* Free the service-wide trigger history. */
void traced_triggers_free_history(struct traced *t);

/* ---- producer port (producer_port.c) -------------------------------------- */

extern const struct ipc_service_desc traced_producer_port;
void traced_producer_on_connect(struct traced *t, const struct ipc_peer *peer);
void traced_producer_on_disconnect(struct traced *t, const struct ipc_peer *peer);
void traced_producer_free(struct traced_producer *p);
/* Queue or send a GetAsyncCommandResponse (ownership of the packed bytes and
 * fd passes). */
void traced_producer_send(struct traced_producer *p, uint8_t *buf, size_t len, int fd);
/* Make sure p has an SMB and was sent SetupTracing. 0 or -errno. */
int traced_producer_setup_smb(struct traced_producer *p, const Perfetto__Protos__TraceConfig *cfg);
void traced_producer_send_setup_start(struct traced_producer *p, uint64_t instance_id,
                                      const Perfetto__Protos__DataSourceConfig *cfg);
void traced_producer_send_stop(struct traced_producer *p, uint64_t instance_id);
void traced_producer_send_flush(struct traced_producer *p, const uint64_t *ids, size_t n,
                                uint64_t flush_id, uint64_t flags);
void traced_producer_send_clear_incremental_state(struct traced_producer *p, const uint64_t *ids,
                                                  size_t n);

/* ---- consumer port (consumer_port.c) -------------------------------------- */

extern const struct ipc_service_desc traced_consumer_port;
void traced_consumer_on_connect(struct traced *t, const struct ipc_peer *peer);
void traced_consumer_on_disconnect(struct traced *t, const struct ipc_peer *peer);
/* Free a consumer (its session and calls already dealt with). */
void traced_consumer_free(struct traced_consumer *c);
/* Send all_data_sources_started on the consumer's ObserveEvents stream if
 * it asked and every data source of its session started (once). */
void traced_consumer_notify_all_started(struct traced_session *s);
/* Reply disabled=true (and error if non-NULL) to the session's EnableTracing. */
void traced_session_notify_disabled(struct traced_session *s, const char *error);

/* ---- service packets (service_packets.c) ---------------------------------- */

/* Emit the packets due at the start of a read, through cb with an empty
 * trailer: clock snapshots (the one taken at start, then the periodic
 * ones), the sync marker when due, and on the first read the trace config
 * and system info; then the lifecycle events recorded since the last read
 * (oldest first). builtin_data_sources.disable_* are honoured. */
int traced_emit_header_packets(struct traced_session *s, traced_packet_fn cb, void *ctx);
/* Emit the end-of-read packets: lifecycle events recorded meanwhile (such as
 * tracing_disabled) and trace_stats when due (after each snapshot period and
 * once the session ended). */
int traced_emit_trailer_packets(struct traced_session *s, traced_packet_fn cb, void *ctx);
/* Read every clock now, BOOTTIME first. */
void traced_clocks_capture(struct traced_clocks *c);
/* The periodic snapshot (Perfetto's): a sync marker and trace stats become
 * due, and the clocks are kept if none is waiting to be read or they
 * drifted from the last one waiting by TRACED_CLOCK_DRIFT_NS or more. */
void traced_session_snapshot(struct traced_session *s);
/* Record lifecycle event field (TRACED_EV_*) at BOOTTIME now; a later one of
 * the same kind replaces one not emitted yet. */
void traced_session_event(struct traced_session *s, unsigned field);
/* Fill a TraceStats for s (NULL: service-wide only). Free with
 * traced_trace_stats_release. */
void traced_trace_stats_fill(struct traced *t, struct traced_session *s,
                             Perfetto__Protos__TraceStats *ts);
void traced_trace_stats_release(Perfetto__Protos__TraceStats *ts);

#endif /* TB_TRACED_INT_H */
