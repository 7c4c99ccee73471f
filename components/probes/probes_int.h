/*
 * probes' private declarations, shared by its folders and its white-box
 * tests (probes.h is the one entry point other components use): the
 * kernel-facing core of the linux.ftrace data source (ftrace/), which the
 * producer in main.c drives,
 *
 *   tracefs.c  find or mount tracefs, change settings and undo every change
 *   format.c   events/<group>/<name>/format files -> struct ftrace_event_format
 *   page.c     ring-buffer pages from per_cpu/cpuN/trace_pipe_raw -> records
 *   encode.c   records -> FtraceEventBundle / FtraceStats protobuf (pb writer)
 *
 * the data sources' instances (ftrace/data_source.c, journald/data_source.c;
 * journald/journald.h is the journal reader's header) and system_info.c.
 *
 * Nothing here is thread-safe; everything runs on the producer's loop. See
 * README.md for the page and record layouts and the journal file format.
 */
#ifndef TB_PROBES_INT_H
#define TB_PROBES_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "pb.h"

/* ---- tracefs (ftrace/tracefs.c) ------------------------------------------ */

#define FTRACE_PATH_MAX 256

/* One setting changed through probes_ftrace_tracefs_write: the file (relative to
 * the tracefs root) and the value to write back. */
struct ftrace_saved_setting {
	char *rel;
	char *value;
};

/* An open tracefs: where it is, whether we mounted it, and every setting
 * changed since probes_ftrace_tracefs_open (first value only), so that
 * probes_ftrace_tracefs_restore puts the kernel back as it was. Embed; release
 * with probes_ftrace_tracefs_close. */
struct ftrace_tracefs {
	char root[FTRACE_PATH_MAX];   /* with a trailing '/' */
	char record[FTRACE_PATH_MAX]; /* the saved settings' file ("" = none) */
	bool record_written;          /* it is ours to rewrite or remove */
	bool mounted_by_us;
	/* probes_ftrace_tracefs_claim: the top level is ours (lock_fd holds an flock),
	 * or root is our private instance and top the top level's root. */
	bool locked;
	int lock_fd;
	char top[FTRACE_PATH_MAX]; /* "" unless root is a private instance */
	VEC(struct ftrace_saved_setting) saved;
	struct tb_err err;
};

/* Find tracefs at /sys/kernel/tracing or /sys/kernel/debug/tracing (a root
 * override first, if root is not NULL: tests use it). When none is mounted
 * and allow_mount is true, mount tracefs at /sys/kernel/tracing (needs
 * CAP_SYS_ADMIN). Returns 0, or -ENOENT / -errno with a message in fs->err. */
int probes_ftrace_tracefs_open(struct ftrace_tracefs *fs, const char *root, bool allow_mount);

/* Share the kernel's tracefs with other tracebox traced_probes (two
 * overlapping captures, each with its own): the first to claim it keeps
 * the top level, holding an flock on "<record>.lock" until close; a later
 * one, while that lock is held (or cannot be taken), moves fs to a private
 * instance <root>instances/tracebox-<pid>/, created now and removed by
 * close, so that neither changes the other's events, buffer size, clock or
 * tracing_on. (A private instance misses what userspace writes to the top
 * level's trace_marker.) Returns 0 (the top level), 1 (a private instance),
 * or -errno when an instance cannot be made (the top level is used, as
 * before; logged by the caller). Call once, right after open. */
int probes_ftrace_tracefs_claim(struct ftrace_tracefs *fs);

/* Remove instances/tracebox-<pid> folders whose process is gone (a
 * traced_probes killed while it used one). Returns how many. */
int probes_ftrace_tracefs_remove_stale_instances(struct ftrace_tracefs *fs);

/* Restore what was changed (probes_ftrace_tracefs_restore) and free the saved
 * state; remove a private instance and drop the claim. A tracefs we mounted
 * stays mounted (others may be using it by then). Safe on a zeroed struct. */
void probes_ftrace_tracefs_close(struct ftrace_tracefs *fs);

/* Read the tracefs file rel (e.g. "trace_clock") into a tb_malloc'd,
 * NUL-terminated buffer the caller frees. Returns 0 or -errno (message in
 * fs->err). */
int probes_ftrace_tracefs_read(struct ftrace_tracefs *fs, const char *rel, char **buf, size_t *len);

/* Write value to rel, first saving the current value (once per file) so
 * restore can put it back. Returns 0 or -errno (message in fs->err). */
int probes_ftrace_tracefs_write(struct ftrace_tracefs *fs, const char *rel, const char *value);

/* Enable or disable events/<group>/<name> (name "*" for the whole group).
 * Returns 0 or -errno (-ENOENT: no such event). */
int probes_ftrace_tracefs_enable_event(struct ftrace_tracefs *fs, const char *group,
                                       const char *name, bool on);

/* Per-CPU ring-buffer size in KiB (buffer_size_kb), the trace clock
 * ("boot", "global", ...; -EINVAL if the kernel lacks it) and tracing_on.
 * Saved for restore like any write. Return 0 or -errno. */
int probes_ftrace_tracefs_set_buffer_size_kb(struct ftrace_tracefs *fs, uint32_t kb);
int probes_ftrace_tracefs_set_clock(struct ftrace_tracefs *fs, const char *clock);
int probes_ftrace_tracefs_set_tracing_on(struct ftrace_tracefs *fs, bool on);

/* The selected trace clock (the bracketed entry of trace_clock) into
 * out[0, n). Returns 0 or -errno. */
int probes_ftrace_tracefs_get_clock(struct ftrace_tracefs *fs, char *out, size_t n);

/* Call fn(ctx, group, name) for every line of available_events (the top
 * level's, for a private instance); stops early when fn returns non-zero.
 * Returns 0, fn's value, or -errno. */
typedef int (*ftrace_event_name_fn)(void *ctx, const char *group, const char *name);
int probes_ftrace_tracefs_list_events(struct ftrace_tracefs *fs, ftrace_event_name_fn fn,
                                      void *ctx);

/* Number of per_cpu/cpuN folders (CPUs the kernel keeps buffers for). */
int probes_ftrace_tracefs_num_cpus(struct ftrace_tracefs *fs);

/* Open per_cpu/cpu<cpu>/trace_pipe_raw, non-blocking and close-on-exec.
 * Returns the fd (the caller closes it) or -errno. */
int probes_ftrace_tracefs_open_pipe_raw(struct ftrace_tracefs *fs, int cpu);

/* Write back every saved setting, newest first, and forget them. Returns 0
 * or the first -errno (the others are still attempted). */
int probes_ftrace_tracefs_restore(struct ftrace_tracefs *fs);

/* Where the saved settings of the tracefs at root (NULL: the system's) are
 * recorded while changed: "<root>.tb-saved" for an override, else
 * /run/tracebox-ftrace.saved (/tmp when /run is not writable). */
void probes_ftrace_tracefs_record_path(const char *root, char *out, size_t n);

/* Undo what a dead traced_probes changed: if fs's record file exists and
 * its owner is gone, write its values back newest first, remove it and set
 * *restored to the number written. No record: 0, *restored 0. -EBUSY
 * (message in fs->err) while the owner is alive; else 0 or the first
 * -errno of a write. */
int probes_ftrace_tracefs_recover(struct ftrace_tracefs *fs, size_t *restored);

/* The last-resort reset of --cleanup-after-crash without a record, as
 * Perfetto does it: tracing_on 0, buffer_size_kb 4, every event disabled,
 * current_tracer nop, the trace buffer cleared. Saves nothing. Returns 0 or
 * -errno. */
int probes_ftrace_tracefs_reset(struct ftrace_tracefs *fs);

/* Counters of per_cpu/cpuN/stats (FtraceCpuStats). */
struct ftrace_cpu_stats {
	uint32_t cpu;
	uint64_t entries, overrun, commit_overrun, bytes_read;
	uint64_t dropped_events, read_events;
	double oldest_event_ts, now_ts; /* seconds */
	bool has_read_events;           /* the file had a "read events:" line */
};

/* Parse the text of a per_cpu/cpuN/stats file. Unknown lines are ignored.
 * Pure. */
void probes_ftrace_parse_cpu_stats(const char *text, size_t len, struct ftrace_cpu_stats *st);

/* Read per_cpu/cpu<cpu>/stats. Returns 0 or -errno. */
int probes_ftrace_tracefs_read_cpu_stats(struct ftrace_tracefs *fs, int cpu,
                                         struct ftrace_cpu_stats *st);

/* ---- event formats (ftrace/format.c) ------------------------------------- */

/* How a field's bytes are read. */
enum ftrace_field_kind {
	FTRACE_FIELD_INT,        /* integer, bool or pointer of 1, 2, 4 or 8 bytes */
	FTRACE_FIELD_CHAR_ARRAY, /* char name[N]: string, NUL-terminated within N */
	FTRACE_FIELD_STR_TAIL,   /* char name[] (size 0): string to the record's end */
	FTRACE_FIELD_DATA_LOC,   /* __data_loc T[]: u32, len << 16 | offset in record */
	FTRACE_FIELD_REL_LOC,    /* __rel_loc T[]: u32, len << 16 | offset after field */
	FTRACE_FIELD_ARRAY,      /* T name[N], T not char: N elements of size/N bytes */
	FTRACE_FIELD_OTHER,      /* anything else: skipped */
};

struct ftrace_field {
	char *name; /* "prev_comm" */
	char *type; /* "char[16]"-less declaration type: "char", "__data_loc char[]" */
	uint16_t offset, size;
	uint8_t kind;      /* enum ftrace_field_kind */
	uint8_t elem_size; /* ARRAY: bytes per element */
	bool is_signed;
	bool is_char; /* DATA_LOC / REL_LOC of char: a string */
};

struct ftrace_proto_event;

/* One event's layout, from its format file. Owned by an ftrace_table (or by
 * the caller of probes_ftrace_format_parse, who releases it). */
struct ftrace_event_format {
	char *group, *name;
	uint32_t id;
	struct ftrace_field *fields; /* common_* first, as in the file */
	size_t n_fields;
	int common_pid;  /* index of common_pid in fields, or -1 */
	int common_type; /* index of common_type in fields, or -1 */
	/* Set by ftrace_table_add: the typed FtraceEvent message, or NULL for
	 * `generic`, and for each of its fields the index in fields (or -1). */
	const struct ftrace_proto_event *proto;
	int8_t proto_field[8];
	/* Also set by ftrace_table_add: FTRACE_COMPACT_SWITCH / _WAKING when
	 * this is sched_switch / sched_waking and its format has every field
	 * compact_sched needs (their indexes in compact_field), else 0. */
	uint8_t compact;
	int8_t compact_field[5];
	/* Also set there (pids.c): the record offsets of common_pid and its
	 * pid_t fields (at most 5 in all; 4 bytes each; fewer than 3 padded
	 * with the first), the record length they all fit in (pid_end) and
	 * whether it is task_rename. */
	uint8_t n_pid_offs;
	uint16_t pid_off[5], pid_end;
	bool is_rename;
	/* Also set there: when every typed field is an integer or a fixed char
	 * array and a whole FtraceEvent fits in 127 bytes, the most it can take
	 * (fast_max), the record bytes its fields span (fast_len) and each
	 * field's encoding, precomputed (fast[0, n_fast)); else fast_max 0. */
	uint16_t fast_max, fast_len;
	uint8_t n_fast;
	struct ftrace_fast_field {
		uint16_t offset;
		uint8_t size; /* bytes in the record */
		uint8_t tag;  /* the field's one-byte protobuf tag */
		uint8_t op;   /* encode.c's FAST_* */
	} fast[8];
};

enum { FTRACE_COMPACT_SWITCH = 1, FTRACE_COMPACT_WAKING = 2 };

/* Parse the text of events/<group>/<name>/format. group is not in the file
 * and is copied from the argument. Returns 0, or -EINVAL with a message in
 * err for a file without name, ID or fields; bad field lines are skipped.
 * On success the caller owns *out (probes_ftrace_format_release). Pure. */
int probes_ftrace_format_parse(const char *group, const char *text, size_t len,
                               struct ftrace_event_format *out, struct tb_err *err);
void probes_ftrace_format_release(struct ftrace_event_format *f);

/* The field called name, or NULL. */
const struct ftrace_field *probes_ftrace_format_field(const struct ftrace_event_format *f,
                                                      const char *name);

/* Read an INT field (sign- or zero-extended to 64 bits) from a record's
 * payload rec[0, len). Returns false if it lies outside the payload or is
 * not an INT field. */
bool probes_ftrace_field_int(const struct ftrace_field *fd, const uint8_t *rec, size_t len,
                             uint64_t *out);
/* A string field (CHAR_ARRAY, STR_TAIL, char DATA_LOC/REL_LOC) as bytes in
 * rec, up to its first NUL: *s points into rec. false if out of bounds or
 * not a string field. */
bool probes_ftrace_field_str(const struct ftrace_field *fd, const uint8_t *rec, size_t len,
                             const uint8_t **s, size_t *n);

/* Where a ring-buffer page keeps its header fields, from events/header_page
 * (see README.md), and where every record keeps its event id (common_type,
 * from any event's format). */
struct ftrace_page_layout {
	uint16_t ts_off, ts_size;         /* u64 timestamp */
	uint16_t commit_off, commit_size; /* local_t commit: size and flags */
	uint16_t data_off;                /* first record */
	uint32_t page_size;               /* data_off + data size */
	uint16_t type_off, type_size;     /* common_type inside a record */
};

/* Parse events/header_page into the page part of *l (type_* untouched).
 * Returns 0 or -EINVAL (message in err). Pure. */
int probes_ftrace_parse_header_page(const char *text, size_t len, struct ftrace_page_layout *l,
                                    struct tb_err *err);

/* The layouts of the events of one tracefs, by id. Embed; zero or
 * probes_ftrace_table_init, then probes_ftrace_table_release. */
struct ftrace_table {
	struct ftrace_page_layout layout;
	bool have_type; /* layout.type_* come from a format */
	VEC(struct ftrace_event_format *) events;
	struct hmap by_id; /* id -> index in events */
};

void probes_ftrace_table_init(struct ftrace_table *t);
void probes_ftrace_table_release(struct ftrace_table *t);

/* Parse a format file and add the event (replacing one with the same id).
 * The first event added also sets layout.type_off/type_size from its
 * common_type field. Returns 0 or -EINVAL (message in err). */
int probes_ftrace_table_add_format(struct ftrace_table *t, const char *group, const char *text,
                                   size_t len, struct tb_err *err);

/* The event with this id, or NULL. */
const struct ftrace_event_format *probes_ftrace_table_find(const struct ftrace_table *t,
                                                           uint32_t id);

/* Read events/header_page and events/<group>/<name>/format from tracefs into
 * t. Returns 0 or -errno (message in fs->err). */
int probes_ftrace_table_load_header(struct ftrace_table *t, struct ftrace_tracefs *fs);
int probes_ftrace_table_load_event(struct ftrace_table *t, struct ftrace_tracefs *fs,
                                   const char *group, const char *name);

/* ---- ring-buffer pages (ftrace/page.c) ----------------------------------- */

/* Perfetto's FtraceParseStatus values (ftrace_stats.proto): why decoding a
 * page stopped early. */
enum ftrace_parse_status {
	FTRACE_STATUS_OK = 1,
	FTRACE_STATUS_PARTIAL_PAGE_READ = 3,
	FTRACE_STATUS_ABI_INVALID_PAGE_HEADER = 4,
	FTRACE_STATUS_ABI_SHORT_EVENT_HEADER = 5,
	FTRACE_STATUS_ABI_NULL_PADDING = 6,
	FTRACE_STATUS_ABI_SHORT_PADDING_LENGTH = 7,
	FTRACE_STATUS_ABI_INVALID_PADDING_LENGTH = 8,
	FTRACE_STATUS_ABI_SHORT_TIME_EXTEND = 9,
	FTRACE_STATUS_ABI_SHORT_TIME_STAMP = 10,
	FTRACE_STATUS_ABI_SHORT_DATA_LENGTH = 11,
	FTRACE_STATUS_ABI_ZERO_DATA_LENGTH = 12,
	FTRACE_STATUS_ABI_INVALID_DATA_LENGTH = 13,
	FTRACE_STATUS_ABI_SHORT_EVENT_ID = 14,
	FTRACE_STATUS_ABI_END_OVERFLOW = 15,
	FTRACE_STATUS_INVALID_EVENT = 17,
};

/* One data record: its timestamp (ftrace clock, ns), event id and payload
 * (common fields included; borrowed from the page). */
struct ftrace_record {
	uint64_t ts;
	uint32_t event_id;
	const uint8_t *data;
	size_t len;
};

/* Walks the records of one page in place. */
struct ftrace_page_iter {
	const struct ftrace_page_layout *l;
	const uint8_t *p, *end; /* unread records */
	uint64_t ts;            /* running timestamp */
	uint64_t page_ts;       /* from the page header */
	uint32_t commit;        /* bytes of records */
	bool missed_events;     /* the kernel lost events before this page */
	uint64_t missed_count;  /* how many, when the kernel stored it (else 0) */
	bool partial;           /* commit runs past the bytes read */
	int status;             /* enum ftrace_parse_status; OK until an error */
};

/* Start walking page[0, len) (one page; len may be short if the read was).
 * Returns FTRACE_STATUS_OK, or an error status (then next yields nothing):
 * ABI_INVALID_PAGE_HEADER when the header is cut off or commit runs past
 * the page. A commit past len (a short read) is clipped and reported as
 * PARTIAL_PAGE_READ by next at the cut. Pure; never reads outside page. */
int probes_ftrace_page_begin(struct ftrace_page_iter *it, const struct ftrace_page_layout *l,
                             const uint8_t *page, size_t len);

/* The next data record into *rec: true, or false at the end of the page or
 * on malformed data (it->status says which: OK at a clean end). Padding,
 * time extends and absolute timestamps are consumed silently. */
bool probes_ftrace_page_next(struct ftrace_page_iter *it, struct ftrace_record *rec);

/* ---- encoding (ftrace/encode.c) ------------------------------------------ */

/* Counters kept while encoding (for FtraceStats and tests). */
struct probes_ftrace_encode_stats {
	uint64_t pages, events, generic_events, unknown_events;
	uint64_t records;        /* data records walked, wanted or not */
	uint64_t compact_events; /* of events, those put in compact_sched */
	uint64_t lost_pages;     /* pages with the missed-events flag */
	uint64_t parse_errors;   /* pages that stopped on a bad record */
	uint64_t fields_skipped; /* fields outside their record */
	int last_status;         /* enum ftrace_parse_status of the last error */
	/* Set by the data source when it stops: the events the kernel's
	 * per_cpu stats ("read events") say it handed out during the last run
	 * of the instance, to set against the records walked meanwhile. */
	bool kernel_read_known;
	uint64_t kernel_read_events;
};

/* Write one FtraceEvent (as field 2, FtraceEventBundle.event) for rec:
 * timestamp, pid and either the typed message or GenericFtraceEvent. Events
 * whose id t does not know are skipped (false). */
bool probes_ftrace_encode_event(struct pb_writer *w, const struct ftrace_table *t,
                                const struct ftrace_record *rec,
                                struct probes_ftrace_encode_stats *st);

/* Tasks the encoded events mention, for the process_stats data source to
 * describe (Perfetto's FtraceMetadata): every event's common_pid and pid_t
 * fields (sched_switch's prev/next_pid, sched_waking's pid, ...), and the
 * tasks task_rename renamed. pids holds each value once until cleared (a
 * bitmap of the first 32768 pids skips repeats cheaply); renamed keeps
 * every rename. Zero it, then probes_ftrace_pids_clear between batches and
 * probes_ftrace_pids_release. */
#define FTRACE_PIDS_CACHE 32768
struct ftrace_pids {
	uint64_t cache[FTRACE_PIDS_CACHE / 64];
	VEC(int32_t) pids, renamed;
	struct hmap big; /* pids >= FTRACE_PIDS_CACHE already in pids */
};
void probes_ftrace_pids_clear(struct ftrace_pids *p);
void probes_ftrace_pids_release(struct ftrace_pids *p);

/* Kernel addresses in events (sched_blocked_reason's caller), as
 * Perfetto's FtraceMetadata keeps them: the event carries an index instead
 * of the address (so the trace does not disclose the kernel's KASLR
 * layout), 1, 2, ... in order of first appearance; the data source writes
 * the symbol name of each new index as InternedData.kernel_symbols
 * (symbolize_ksyms) and clears the table after every drain. Zero it, then
 * probes_ftrace_kaddrs_clear / probes_ftrace_kaddrs_release. */
struct ftrace_kaddrs {
	struct hmap index;   /* address -> index */
	VEC(uint64_t) addrs; /* index - 1 -> address */
	size_t written;      /* indexes <= written have their name in the trace */
};
/* The index of addr, added when new. */
uint32_t probes_ftrace_kaddrs_add(struct ftrace_kaddrs *k, uint64_t addr);
void probes_ftrace_kaddrs_clear(struct ftrace_kaddrs *k);
void probes_ftrace_kaddrs_release(struct ftrace_kaddrs *k);
/* Into the TracePacket being written (after its ftrace_events): the names
 * of the indexes added since the last call that syms knows, as
 * interned_data.kernel_symbols {iid, str}, with sequence_flags
 * SEQ_INCREMENTAL_STATE_CLEARED when they are the first since a clear.
 * Nothing when there is no new named index. */
void probes_ftrace_kaddrs_write_names(struct pb_writer *w, struct ftrace_kaddrs *k,
                                      const struct ksyms *syms);

/* How bundles are encoded. compact_sched: write sched_switch and
 * sched_waking into FtraceEventBundle.compact_sched (Perfetto's
 * structure-of-arrays form, README.md) instead of one FtraceEvent each.
 * scratch is the encoder's reusable memory: zero it with the struct, free
 * it with probes_ftrace_encode_opts_release. */
struct ftrace_compact_buf;
struct ftrace_encode_opts {
	bool compact_sched;
	struct ftrace_compact_buf *scratch;
	/* Bit id % 64 of word id / 64 set for each event id to write (65536
	 * bits); NULL: every event. Events left out are skipped silently
	 * (another session's). Borrowed. */
	const uint64_t *id_mask;
	/* Where to add the tasks the written events mention; NULL: nowhere.
	 * Borrowed. */
	struct ftrace_pids *pids;
	/* Where kernel address fields get their index; NULL: the address
	 * itself is written. Borrowed. */
	struct ftrace_kaddrs *kaddrs;
};
void probes_ftrace_encode_opts_release(struct ftrace_encode_opts *o);

/* Write the body of an FtraceEventBundle for the pages in buf[0, len)
 * (consecutive layout.page_size pages, the last one possibly short) read
 * from cpu: cpu, every event (compact_sched as o says; o NULL: none),
 * lost_events if a page had the missed-events flag, and an error entry
 * {timestamp, status} for each page that could not be fully decoded. The
 * caller opens and closes the enclosing message (TracePacket.ftrace_events
 * = 1). Returns the number of events written. */
size_t probes_ftrace_encode_bundle_opts(struct pb_writer *w, const struct ftrace_table *t,
                                        struct ftrace_encode_opts *o, uint32_t cpu,
                                        const uint8_t *buf, size_t len,
                                        struct probes_ftrace_encode_stats *st);

/* probes_ftrace_encode_bundle_opts without compact_sched. */
size_t probes_ftrace_encode_bundle(struct pb_writer *w, const struct ftrace_table *t, uint32_t cpu,
                                   const uint8_t *buf, size_t len,
                                   struct probes_ftrace_encode_stats *st);

/* FtraceStats.Phase values. */
enum ftrace_stats_phase {
	FTRACE_STATS_START_OF_TRACE = 1,
	FTRACE_STATS_END_OF_TRACE = 2,
};

/* Write the body of an FtraceStats message (TracePacket.ftrace_stats = 34):
 * the phase and one FtraceCpuStats per entry of cpus. */
void probes_ftrace_encode_stats(struct pb_writer *w, enum ftrace_stats_phase phase,
                                const struct ftrace_cpu_stats *cpus, size_t n);

/* ---- the linux.ftrace data source (ftrace/data_source.c) ----------------- */

#define FTRACE_DS_DEFAULT_DRAIN_MS 100 /* Perfetto's kDefaultTickPeriodMs */
#define FTRACE_DS_MAX_PAGES 256        /* pages a periodic drain reads per CPU */
#define FTRACE_DS_BATCH_PAGES 32       /* pages per read batch and bundle */

struct loop;
struct tracing_writer;
struct probes_ftrace; /* opaque */

/* A linux.ftrace instance writing into w (borrowed; must outlive it) on
 * loop l. cfg[0, len) is the serialized DataSourceConfig (its ftrace_config
 * = 100 is decoded here; ftrace_events, buffer_size_kb, drain_period_ms,
 * use_monotonic_raw_clock, compact_sched, symbolize_ksyms are used).
 * tracefs_root: NULL for the system's
 * (tests may pass a directory). Nothing touches tracefs until start. Never
 * NULL; free with probes_ftrace_free. Loop thread. */
struct probes_ftrace *probes_ftrace_new(struct loop *l, struct tracing_writer *w,
                                        const uint8_t *cfg, size_t len, const char *tracefs_root);

/* Start recording. The first running instance of the process configures
 * tracefs (tracing_on 0, buffer size, clock); every instance then enables
 * its configured events (refcounted across instances; unknown events are
 * logged and skipped), writes FtraceStats{START_OF_TRACE}, turns tracing on
 * and drains every drain_period_ms on the loop (a drain feeds every running
 * instance the events it asked for). Returns 0, or -errno when tracefs
 * cannot be used (logged; whatever was changed is restored), or -EBUSY
 * while instances on another tracefs root run. */
int probes_ftrace_start(struct probes_ftrace *ft);

/* Read every CPU's pending pages now, up to its buffer size: one
 * TracePacket{ftrace_events} per FTRACE_DS_BATCH_PAGES pages read. What a
 * flush does before it is acknowledged. */
void probes_ftrace_drain(struct probes_ftrace *ft);

/* Drain a last time, write FtraceStats{END_OF_TRACE} and disable the
 * events no other running instance holds. The last running instance also
 * turns tracing off first and restores every tracefs setting changed.
 * Idempotent; a stopped instance can be started again. */
void probes_ftrace_stop(struct probes_ftrace *ft);

/* probes_ftrace_stop, then free. NULL is a no-op. */
void probes_ftrace_free(struct probes_ftrace *ft);

/* --reset-ftrace (hard false) and --cleanup-after-crash (hard true) on
 * tracefs_root (NULL: the system's; never mounted for this): the settings a
 * dead traced_probes recorded are written back (probes_ftrace_tracefs_recover);
 * without a record, hard resets tracefs as Perfetto's
 * HardResetFtraceState does (probes_ftrace_tracefs_reset), and !hard leaves it
 * alone. Returns 0 or -errno (message in err). Logs what it did. */
int probes_ftrace_cleanup(const char *tracefs_root, bool hard, struct tb_err *err);

/* After each drain, fn(ctx, renamed, n_renamed, pids, n_pids) with the
 * tasks this instance's events mentioned since the last call (renamed
 * first, as Perfetto's OnRenamePids precedes OnPids), when any; arrays
 * borrowed for the call. fn NULL: pids are not collected. Set before
 * start. Loop thread. */
void probes_ftrace_set_pids_cb(struct probes_ftrace *ft,
                               void (*fn)(void *ctx, const int32_t *renamed, size_t n_renamed,
                                          const int32_t *pids, size_t n_pids),
                               void *ctx);

/* Read kernel symbols (symbolize_ksyms) from path instead of
 * /proc/kallsyms: for tests. Before start. */
void probes_ftrace_set_kallsyms(struct probes_ftrace *ft, const char *path);

/* After each batch of pages written into its writer, fn(ctx): the
 * caller sends the completed chunks to the service then
 * (tracing_producer_commit_completed), so that a drain of many pages does
 * not fill the SMB before its commit goes out. fn NULL: none. Loop
 * thread. */
void probes_ftrace_set_commit_cb(struct probes_ftrace *ft, void (*fn)(void *ctx), void *ctx);

/* The SMB ft's writer writes into (borrowed; NULL: none). Before each batch
 * a drain waits, sleeping on the loop thread, until every instance's SMB
 * has FTRACE_DS_BATCH_ROOM free (at most half of it), i.e. the service has
 * taken the chunks committed so far: Perfetto's writers stall on an
 * exhausted SMB, ours would drop the bundle. A drain stalls
 * FTRACE_DS_STALL_MS in all at most, then lets the writer drop (a service
 * that stopped reading must not stop the loop). */
#define FTRACE_DS_BATCH_ROOM (4 * FTRACE_DS_BATCH_PAGES * 4096)
#define FTRACE_DS_STALL_MS 500
struct tracing_smb;
void probes_ftrace_set_smb(struct probes_ftrace *ft, const struct tracing_smb *smb);

/* The encoder's counters so far (pages, events, lost pages, errors). */
const struct probes_ftrace_encode_stats *probes_ftrace_stats(const struct probes_ftrace *ft);

/* ---- the linux.systemd_journald data source (journald/data_source.c) ------ */

struct probes_journald; /* opaque */

/* A linux.systemd_journald instance writing into w (borrowed; must outlive
 * it) on loop l. cfg[0, len) is the serialized DataSourceConfig (its
 * journald_config = 141: min_prio, filter_identifiers, filter_units).
 * dirs[0, n_dirs): the journal folders to follow; NULL for journald's own
 * (/run/log/journal/<machine-id>, /var/log/journal/<machine-id>). Nothing
 * is read until start. Never NULL; free with probes_journald_free. Loop
 * thread. */
struct probes_journald *probes_journald_new(struct loop *l, struct tracing_writer *w,
                                            const uint8_t *cfg, size_t len, const char *const *dirs,
                                            size_t n_dirs);

/* Put every journal file at its tail and from then on write one
 * SystemdJournaldEvent packet per entry appended that passes the filters
 * (inotify wakes the loop; the folders are rescanned every second). A
 * missing folder or journald not running is logged, not an error. */
void probes_journald_start(struct probes_journald *jd);

/* Read every entry appended so far, then write the counters packet
 * (num_total, num_failed), as Perfetto's data source does on Flush. */
void probes_journald_flush(struct probes_journald *jd);

/* Entries written and entries that could not be read whole, so far. */
void probes_journald_counts(const struct probes_journald *jd, uint64_t *total, uint64_t *failed);

/* Read what was appended since the last flush (and write the counters if
 * they changed), then free. NULL is a no-op. */
void probes_journald_free(struct probes_journald *jd);

/* ---- linux.system_info (system_info.c) ----------------------------------- */

/* Write the linux.system_info data source's TracePacket field cpu_info (67,
 * a CpuInfo) into w, positioned inside a TracePacket: one Cpu per
 * processor of PROC/cpuinfo with capacity and frequencies from SYS (NULL
 * roots: /proc and /sys; tests pass fixture directories). Loop thread. */
void probes_system_info_write_cpu_info(struct pb_writer *w, const char *proc_root,
                                       const char *sys_root);

#endif /* TB_PROBES_INT_H */
