/*
 * Private to the shell: the command line of trace_processor_shell as
 * Perfetto v58.2 has it, a table of subcommands each with its own flags on
 * top of the global ones, plus the classic flat flags translated onto them.
 *
 *   shell.c        entry point, dispatch, help, the flag tables, global
 *                  flags into struct tp_config, loading a trace
 *   query.c        query, interactive, metrics, summarize
 *   query_out.c    result writers: csv, tsv, json, parquet (query --format)
 *   server.c       server http | stdio | unix | kill, query --remote
 *   export.c       export sqlite (and -e): the database as a SQLite file
 *   export_parquet.c  export parquet: one Parquet file per table
 *   convert.c      convert, util, bundle: traceconv's converters
 *   merge.c        util merge: traces into one TAR
 *   metatrace.c    -m FILE: a trace of what the shell did
 *   interactive.c  the interactive loop
 *   packages.c     --add-sql-package / --override-stdlib directories
 *   batch.c        query --batch: one query over many traces, N workers
 */
#ifndef TB_TP_SHELL_H
#define TB_TP_SHELL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base.h"
#include "../trace_processor.h"

/* ---- flags ------------------------------------------------------------------ */

/* Every flag of every subcommand, global ones first. Two flags of one
 * spelling with different meanings (export's -o/--output and metrics'
 * --output) are two entries. */
enum shell_flag_id {
	/* global */
	SF_HELP,
	SF_VERSION,
	SF_FULL_SORT,
	SF_NO_FTRACE_RAW,
	SF_ANALYZE_TRACE_PROTO_CONTENT,
	SF_CROP_TRACK_EVENTS,
	SF_ALLOW_SQL_FILE_ACCESS,
	SF_DEV,
	SF_DEV_FLAG,
	SF_EXTRA_CHECKS,
	SF_ADD_SQL_PACKAGE,
	SF_OVERRIDE_SQL_PACKAGE,
	SF_OVERRIDE_STDLIB,
	SF_REGISTER_FILES_DIR,
	SF_METRIC_EXTENSION,
	SF_REMOTE,
	SF_METATRACE,
	SF_METATRACE_BUFFER_CAPACITY,
	SF_METATRACE_CATEGORIES,
	SF_NGLOBAL,
	/* query */
	SF_QUERY_FILE = SF_NGLOBAL,
	SF_STRUCTURED_QUERY_ID,
	SF_SUMMARY_SPEC,
	SF_INTERACTIVE,
	SF_WIDE,
	SF_PERF_FILE,
	SF_QUERY_FORMAT,
	SF_QUERY_OUTPUT,
	/* server */
	SF_PORT,
	SF_IP_ADDRESS,
	SF_ADDITIONAL_CORS_ORIGINS,
	SF_NAME,
	SF_PATH,
	SF_IDLE_TIMEOUT,
	SF_IDLE_START,
	SF_DAEMONIZE,
	/* export */
	SF_EXPORT_OUTPUT,
	SF_TRACE_ID,
	SF_ALL_VIEWS,
	SF_GZIP,
	/* convert */
	SF_TRUNCATE,
	SF_CONVERT_FULL_SORT,
	SF_PID,
	SF_TIMESTAMPS,
	SF_ALLOC,
	SF_PERF,
	SF_JAVA_HEAP,
	SF_NO_ANNOTATIONS,
	SF_OUTPUT_DIR,
	SF_VERBOSE,
	SF_SKIP_UNKNOWN,
	/* bundle */
	SF_SYMBOL_PATHS,
	SF_NO_AUTO_SYMBOL_PATHS,
	SF_PROGUARD_MAP,
	SF_NO_AUTO_PROGUARD_MAPS,
	/* metrics */
	SF_RUN,
	SF_PRE,
	SF_METRICS_OUTPUT,
	SF_POST_QUERY,
	/* summarize */
	SF_METRICS_V2,
	SF_METADATA_QUERY,
	SF_FORMAT,
	/* util */
	SF_MERGE_OUTPUT,
	SF_MANIFEST,
	SF_NO_VALIDATE,
	SF_STRICT,
	/* query --batch */
	SF_BATCH,
	SF_JOBS,
	SF_BATCH_LIST,
	SF_MAX_MEMORY,
	SF_BATCH_ERRORS,
	SF_COUNT
};

/* Everything the command line said. Strings point into argv. */
struct shell_opts {
	/* global flags */
	bool full_sort, no_ftrace_raw, analyze_trace_proto_content, crop_track_events;
	bool allow_sql_file_access, dev, extra_checks, help, version;
	VEC(const char *) dev_flags;
	VEC(const char *) add_packages;
	VEC(const char *) override_packages;
	VEC(const char *) metric_extensions;
	const char *override_stdlib, *register_files_dir, *remote;
	const char *metatrace;            /* -m FILE */
	const char *metatrace_categories; /* as given */
	uint64_t metatrace_capacity;      /* 0: the default */

	/* subcommand flags */
	const char *query_file, *structured_query_id, *perf_file;
	VEC(const char *) summary_specs;
	bool interactive, wide;
	const char *port, *ip, *cors, *name, *path, *idle_timeout, *idle_start;
	bool daemonize;
	const char *output;       /* export -o, util merge -o */
	const char *query_output; /* query -o */
	const char *trace_id;     /* export parquet --trace-id */
	bool all_views;           /* export parquet --all-views */
	bool gzip;                /* export parquet --gzip */
	const char *truncate, *pid, *timestamps, *output_dir;
	bool convert_full_sort, alloc, perf, java_heap, no_annotations, verbose, skip_unknown;
	const char *symbol_paths;
	VEC(const char *) proguard_maps;
	bool no_auto_symbol_paths, no_auto_proguard_maps;
	const char *run, *pre, *metrics_output, *post_query;
	const char *metrics_v2, *metadata_query, *format, *manifest;
	bool no_validate, strict;
	bool batch; /* query --batch */
	const char *jobs, *batch_list, *max_memory, *errors_file;

	/* what is left */
	VEC(const char *) pos;
	const char *argv0;
};

void tp_shell_opts_release(struct shell_opts *o);

/* ---- subcommands ------------------------------------------------------------- */

struct shell_cmd {
	const char *name, *description, *usage_args, *detailed_help;
	const enum shell_flag_id *flags; /* its own flags, SF_COUNT-terminated */
	/* Returns the exit status (0 or 1); prints its own errors. */
	int (*run)(struct shell_opts *o);
};

int tp_shell_run_query(struct shell_opts *o);
int tp_shell_run_interactive(struct shell_opts *o);
int tp_shell_run_metrics(struct shell_opts *o);
int tp_shell_run_summarize(struct shell_opts *o);
int tp_shell_run_server(struct shell_opts *o);
int tp_shell_run_export(struct shell_opts *o);
int tp_shell_run_convert(struct shell_opts *o);
int tp_shell_run_bundle(struct shell_opts *o);
int tp_shell_run_util(struct shell_opts *o);
/* query --batch (batch.c): the SQL of -f over every trace, one result
 * with a trace column. Returns 0, 2 if some traces failed, 1 if all did
 * or on a usage error. */
int tp_shell_run_batch(struct shell_opts *o);
/* util merge (merge.c). */
int tp_shell_util_merge(struct shell_opts *o);
/* query --remote ADDR (server.c): run sql on a warm session or server. */
int tp_shell_remote_query(struct shell_opts *o, const char *sql);

/* ---- shared by the subcommands (shell.c) ------------------------------------ */

/* Print "trace_processor_shell: " and the formatted message, a newline. */
void tp_shell_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The trace processor config the global flags ask for, with the SQL
 * packages of --add-sql-package & co. read and checked. Returns 0, or -1
 * after printing; release *cfg with tp_shell_config_release either way. */
struct shell_config {
	struct tp_config cfg;
	struct tp_shell_package *pkgs; /* the directories read */
	size_t npkgs;
	struct tp_sql_package *list; /* cfg.packages */
};
int tp_shell_config_build(const struct shell_opts *o, struct shell_config *sc);
void tp_shell_config_release(struct shell_config *sc);

/* A new trace processor for sc that has loaded path (a file, "-" for stdin,
 * or an http(s) URL) through tp_end_of_file, with the "Trace loaded" line
 * and the trace health summary on stderr. *load_ns (may be NULL) gets the
 * time it took. NULL after printing an error. */
struct tp *tp_shell_load(const struct shell_opts *o, const struct shell_config *sc,
                         const char *path, int64_t *load_ns);

/* The same into tp, a new trace processor (tp_new) that has loaded
 * nothing yet. Returns 0, or -1 after printing; the caller frees tp. */
int tp_shell_load_into(const struct shell_opts *o, struct tp *tp, const char *path,
                       int64_t *load_ns);

/* Monotonic nanoseconds. */
int64_t tp_shell_now_ns(void);

/* The trace file argument: the first positional, or an error naming cmd. */
const char *tp_shell_trace_arg(const struct shell_opts *o, const char *cmd);

/* At most max positionals, else Perfetto's error (with hint, if not NULL). */
int tp_shell_reject_extra(const struct shell_opts *o, const char *cmd, size_t max,
                          const char *hint);

/* A whole file (or stdin for "-") as a NUL-terminated string, or NULL with
 * errno set. *len (may be NULL) gets its length. */
char *tp_shell_read_file(const char *path, size_t *len);

/* Is [p, end) of a query only white space, semicolons and comments? */
bool tp_shell_is_comment_only(const char *p, const char *end);

/* ---- query output (query.c) ------------------------------------------------- */

/* Run every statement of sql, printing each result set as Perfetto's CSV.
 * Returns 0, or -1 after printing the error. */
int tp_shell_run_queries_csv(struct tp *tp, const char *sql, FILE *out);
struct tp_shell_out;
/* The same into any result writer (query_out.c). */
int tp_shell_run_queries(struct tp *tp, const char *sql, struct tp_shell_out *out);

/* ---- result writers (query_out.c) --------------------------------------------- */

/* query --format: CSV (Perfetto's, the default), TSV, JSON, Parquet. */
enum tp_shell_fmt {
	TP_SHELL_FMT_CSV,
	TP_SHELL_FMT_TSV,
	TP_SHELL_FMT_JSON,
	TP_SHELL_FMT_PARQUET,
};
/* "csv", "tsv", "json" or "parquet" into *fmt; -1 for anything else. */
int tp_shell_fmt_parse(const char *s, enum tp_shell_fmt *fmt);

struct sqlite3_stmt;
/* A writer of result sets in fmt: onto out, or with path (not NULL) into a
 * temporary file beside path that tp_shell_out_finish renames over it
 * (parquet needs a path). NULL with err set when the file cannot be made.
 * Free with tp_shell_out_free, which removes an unfinished file. */
struct tp_shell_out *tp_shell_out_new(enum tp_shell_fmt fmt, FILE *out, const char *path,
                                      struct tb_err *err);
void tp_shell_out_free(struct tp_shell_out *o);
/* A result set with the columns of st, after a leading text column named
 * lead (NULL: none; the string must outlive the set): its header. Parquet
 * holds one set: a second one is an error. Returns 0 or -errno
 * (tp_shell_out_error says why). */
int tp_shell_out_begin(struct tp_shell_out *o, struct sqlite3_stmt *st, const char *lead);
/* The current row of st (after sqlite3_step gave SQLITE_ROW), led by
 * lead_value when the set has a leading column. Returns 0 or -errno. */
int tp_shell_out_row(struct tp_shell_out *o, struct sqlite3_stmt *st, const char *lead_value);
/* The end of the current result set. */
int tp_shell_out_end(struct tp_shell_out *o);
/* Complete the output (flush; write the Parquet footer; rename into
 * place). Returns 0 or -errno. */
int tp_shell_out_finish(struct tp_shell_out *o);
const char *tp_shell_out_error(const struct tp_shell_out *o);
/* Parquet: GZIP-compressed pages (before tp_shell_out_begin). */
void tp_shell_out_set_gzip(struct tp_shell_out *o, bool on);
/* v as JavaScript prints a number (shortest text that reads back as v;
 * "null" for infinities): JSON and TSV doubles. */
void tp_shell_format_double(double v, char *out, size_t size);

/* The tables and views export writes (export.c): the column tables, then
 * the schema's tables and views by name. A NULL-terminated array of n
 * strings (tb_free each and the array), or NULL with err set. */
char **tp_shell_export_names(struct tp *tp, size_t *n, struct tb_err *err);
/* Export tp as a SQLite database at path (export sqlite, -e, the
 * interactive .dump), through a temporary file beside it. Returns 0 or 1
 * (after printing). */
int tp_shell_export_sqlite(struct tp *tp, const char *path);

/* ---- export parquet (export_parquet.c) ----------------------------------------- */

/* The trace's tables as DIR/NAME.parquet, each with a leading trace_id
 * column holding trace_id: Perfetto's tables (slice, thread, process, track,
 * counter, sched, args, ..., export_parquet.c's list) and the user's, or
 * with all_views every table and view export sqlite writes; with gzip
 * GZIP-compressed pages. Storage tables
 * and the views that only pick their columns are read from column storage,
 * the other views through SQL. Returns 0 or 1 (after printing). */
int tp_shell_export_parquet(struct tp *tp, const char *dir, const char *trace_id, bool all_views,
                            bool gzip);

/* ---- the interactive loop (interactive.c) ----------------------------------- */

/* Perfetto's interactive shell on stdin until EOF or .quit: each line a
 * query whose last statement's rows print as a table, or a dot-command;
 * SQL errors are printed and the shell carries on. .reset goes back to
 * the schema loaded holds (tp_schema_snapshot once the trace was loaded;
 * NULL: as it is now). Returns 0. */
int tp_shell_interactive(struct tp *tp, bool wide, const struct hmap *loaded);

/* ---- metatrace (metatrace.c) ------------------------------------------------- */

/* -m FILE: the shell's own activity as a Perfetto trace (TrackEvent slices
 * on one track per category). Inactive unless tp_shell_metatrace_start was
 * called; every function is then cheap. */
int tp_shell_metatrace_start(const struct shell_opts *o);
/* A slice [begin_ns, end_ns) named name, in category cat ("QUERY_TIMELINE",
 * "API_TIMELINE", ...), with an optional "sql" argument. */
void tp_shell_metatrace_slice(const char *cat, const char *name, int64_t begin_ns, int64_t end_ns,
                              const char *sql);
/* Write the file (if started). Returns 0, or -1 after printing. */
int tp_shell_metatrace_write(void);

/* ---- SQL package directories (packages.c) ------------------------------------ */

/* A package read from a directory: pkg points into modules. */
struct tp_shell_package {
	struct tp_sql_package pkg;
	VEC(struct tp_sql_module) modules;
};

/* Read the package of --add-sql-package (or, allow_override,
 * --override-sql-package) argument arg, "PATH[@PKG]", into *sp (release
 * it with tp_shell_package_release). Returns 0, or -1 with Perfetto's
 * message in err (no such directory, unreadable file). */
int tp_shell_package_load(struct tp_shell_package *sp, const char *arg, bool allow_override,
                          char *err, size_t err_size);
/* --override-stdlib PATH: every a/b.sql under PATH is the module a.b of the
 * package a (replacing ours of that name). Appends one package per first
 * path component to *out (n of them). Returns 0, or -1 with err set. */
int tp_shell_stdlib_load(const char *root, struct tp_shell_package **out, size_t *n, char *err,
                         size_t err_size);
void tp_shell_package_release(struct tp_shell_package *sp);

#endif /* TB_TP_SHELL_H */
