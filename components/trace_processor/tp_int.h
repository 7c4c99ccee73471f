/*
 * The trace processor's context, struct tp: what every stage shares (the
 * tables, the string pool, stats, the importer and sorter of the input, the
 * database) and the state of the trackers cheap to keep inline. Each
 * concept has its own header, included only where it is needed:
 *
 *   tp_schema.h   every table's columns (X-macro lists)
 *   tp_tables.h   column types, the generated table structs and appends
 *   tp_stats.h    the stat lists and API          tp_args.h  arg sets
 *   model/model.h the trackers (processes, threads, tracks, slices ...)
 *   model/ftrace.h the ftrace model               sorter/sorter.h  the sorter
 *   importers/importer.h the importer interface    sql/sql.h  the SQL layer
 *
 *   bytes -> io (gzip) -> sniff -> tokenizer -> sorter -> parser -> trackers -> tables -> sql
 */
#ifndef TB_TP_INT_H
#define TB_TP_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "trace_processor.h"
#include "tp_args.h"
#include "tp_stats.h"
#include "tp_tables.h"

/* ---- the context ---------------------------------------------------------- */

struct tp_sorter;
struct tp_importer;
struct tp_manifest;
struct tp_mf_plan;

/* The clock snapshots of the first protobuf file of an archive, which
 * convert the timestamps of the files after it (systrace, perf script text:
 * MONOTONIC) to its trace clock, as Perfetto's global clock graph does.
 * convert is NULL until a protobuf file with snapshots was imported. */
struct tp_clock_sync {
	void *ctx;
	/* ts on clock into the trace clock; false when no path links them. */
	bool (*convert)(void *ctx, uint32_t clock, int64_t ts, int64_t *out);
	void (*free)(void *ctx);
};

/* One machine's pid and tid lookups (model/machine.c). */
struct tp_machine_maps {
	struct hmap pid_to_upid, tid_to_utid;
	struct tp_tid_slot *tid_cache;
};

/* Rows of ftrace_event per stored ts base. */
#define TP_FTRACE_TS_BLOCK 1024

struct tp {
	struct tp_config cfg;
	struct tb_err err;
	struct strpool strings;
	struct tp_tables t;
	uint64_t stats[TP_STAT_COUNT];
	/* Indexed stats in arrival order (sorted by (stat, idx) when
	 * istats_sorted); istat_pos: hash of (stat, idx) -> position. */
	VEC(struct tp_istat_val) istats;
	struct hmap istat_pos;
	bool istats_sorted;
	/* Bytes all members of an archive may hold once decompressed
	 * (TP_ARCHIVE_MAX_BYTES; tests lower it). */
	uint64_t archive_max_bytes;
	uint64_t bytes_parsed;
	uint64_t bytes_decoded; /* out of the gzip wrapper, when there is one */
	uint64_t head_hash;     /* FNV-1a of the first input bytes (tp.c) */
	/* tp_parse_file's buffer: the whole input, valid until the end of
	 * file (tp_whole_input). whole_done: no more input may follow. */
	const uint8_t *whole;
	size_t whole_len;
	bool whole_done;
	/* ModuleSymbols whose mapping was not (yet) there: a bundle's
	 * symbols.pb member is read before its trace.perfetto. Tried again at
	 * the end (symbolize/import.c). */
	VEC(uint8_t *) pending_symbols; /* each: 8-byte length, then the message */
	bool symbols_final;

	struct tp_ftrace_rows *ftrace_rows; /* ftrace_event's narrow columns (model/ftrace.c) */
	/* sched and thread_state durations that do not fit dur_lo. */
	struct hmap sched_dur_wide, thread_state_dur_wide;
	struct hmap sched_prio_wide; /* sched priorities not in priority_lo */

	/* The machine (row of the machine table) whose events are being
	 * imported: the processes, threads, tracks and cpus made now are its,
	 * and pids and tids are looked up among its own (model/machine.c,
	 * tp_machine_use). 0, the host, unless a proto trace says otherwise. */
	uint32_t machine;
	/* The trace file (trace_file row) being imported: the trace_id of its
	 * metadata. */
	uint32_t trace_id;
	/* The current machine's lookups: pid -> upid, tid -> utid ... */
	struct hmap pid_to_upid; /* pid -> upid of the live process */
	struct hmap tid_to_utid; /* tid -> utid of the live thread */
	/* A direct-mapped copy of recent tid_to_utid entries (utid + 1, 0 =
	 * empty), kept equal to the map where it holds a tid: sched events look
	 * up the same few threads over and over (process_tracker.c).
	 * TP_TID_CACHE slots. */
	struct tp_tid_slot {
		int64_t tid;
		uint32_t utid1;
	} * tid_cache;
	/* utid -> the utid its tid mapped to before it (TP_NULL_U32: none):
	 * the older threads of a tid, newest first (process_tracker.c). */
	VEC(uint32_t) tid_prev;
	/* Every machine's lookups by machine row, while another one is
	 * current (the current one's are the three fields above). */
	VEC(struct tp_machine_maps) machine_maps;
	VEC(uint8_t) thread_name_prio;  /* utid -> enum tp_name_prio of its name */
	struct tp_tracks *tracks;       /* track lookups (model/track_tracker.c) */
	struct tp_arg_dedup *arg_dedup; /* identical arg sets' ids (model/args.c) */
	struct tp_slice_stacks *stacks; /* open slices per track (slices.c) */
	struct tp_events *events;       /* open flows and states (model/events.c) */
	struct tp_args_builder args_scratch;
	struct tp_profiler *profiler;    /* context interning (profiler.c), NULL until used */
	struct tp_clock_sync clock_sync; /* an archive's first proto file's clocks */
	/* The archive's trace manifest and the plan made from it
	 * (importers/manifest/), NULL without one; ts_shift: what the current
	 * non-protobuf member's timestamps move by on the merged timeline
	 * (tp_trace_time, the JSON parser); ts_raw: its clock is related by the
	 * manifest itself, so tp_trace_time leaves clock_sync out. */
	struct tp_manifest *manifest;
	struct tp_mf_plan *mplan;
	int64_t ts_shift;
	bool ts_raw;
	uint32_t track_groups; /* track_group_id values handed out */

	struct tp_sorter *sorter;
	const struct tp_importer_ops *importer_ops; /* chosen by sniffing */
	struct tp_importer *importer;
	struct tp_gunzip *gunzip;   /* when the input is gzip'd */
	struct tp_archive *archive; /* when the input is a zip or tar */
	uint8_t *sniff_buf;         /* the first bytes, held until sniffed */
	size_t sniff_len;
	const char *trace_type;
	struct sqlite3 *db;
	struct tp_sql_packages *packages; /* user SQL packages (sql/packages.c), or NULL */
	struct tp_sql_defs *sql_defs;     /* CREATE PERFETTO MACROs (sql/include.c), or NULL */
	const char *prepare_err_at;       /* where in its text the last failed
	                                     tp_prepare stopped (SQLite's error
	                                     offset), or NULL */
	bool prepare_err_as_is;           /* it was an INCLUDE's error (its own
	                                     form: tp_prepare_error_report) */
	const char *prepare_err_stmt;     /* the statement SQLite saw began here
	                                     (a CREATE PERFETTO's body), or NULL */
	bool eof;
	/* The trace bounds (trace_start() and trace_end() in SQL), set from
	 * the event tables' rows at the end of the file (tp_bounds_finish);
	 * start > end until then. */
	int64_t ts_min, ts_max;
};

/* The whole input when tp_parse_file gave it and the importer reads it
 * from its first byte (no gzip, no archive member), else NULL: importers
 * that hold the whole file read it in place instead of copying it. */
static inline const uint8_t *tp_whole_input(const struct tp *tp, size_t *len)
{
	if (!tp->whole || tp->gunzip || tp->archive)
		return NULL;
	*len = tp->whole_len;
	return tp->whole;
}

/* Record a fatal error (the first wins); returns code. */
int tp_fail(struct tp *tp, int code, const char *fmt, ...) TB_PRINTF(3, 4);

static inline void tp_stat_inc(struct tp *tp, enum tp_stat s)
{
	tp->stats[s]++;
}
static inline void tp_stat_set(struct tp *tp, enum tp_stat s, int64_t v)
{
	tp->stats[s] = (uint64_t)v;
}
/* Cpu numbers above this are taken as corrupt (ftrace bundles, stats);
 * also the cpu table rows each machine has (Perfetto's kMaxCpusPerMachine). */
#define TP_MAX_CPUS 4096u
#define TP_TID_CACHE 256u

/* Intern into the trace's string pool (0 for NULL / empty). */
static inline uint32_t tp_intern(struct tp *tp, const char *s, size_t n)
{
	return strpool_intern(&tp->strings, s, n);
}
uint32_t tp_intern_cstr(struct tp *tp, const char *s);
static inline const char *tp_str(const struct tp *tp, uint32_t id)
{
	return strpool_get(&tp->strings, id, NULL);
}

#endif /* TB_TP_INT_H */
