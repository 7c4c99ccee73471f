/*
 * trace_processor: load a trace (Perfetto protobuf, Chrome JSON, ...) into
 * column storage and answer Perfetto SQL over it.
 *
 * A library first: push bytes in chunks of any size with tp_parse(), call
 * tp_end_of_file(), then run queries. The shell, `query`, the RPC server and
 * the tests are all clients of this API; nothing assumes the input is a file.
 * Single-threaded: one struct tp is used from one thread at a time.
 */
#ifndef TB_TRACE_PROCESSOR_H
#define TB_TRACE_PROCESSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp;
struct sqlite3;
struct tp_sql_package;

struct tp_config {
	bool
	    full_sort; /* --full-sort: sort everything at the end (proto traces otherwise stream) */
	/* --crop-track-events: drop TrackEvents before the trace's
	 * track_event_range_of_interest start */
	bool crop_track_events;
	/* --no-ftrace-raw (Perfetto's ingest_ftrace_in_raw_table = false): typed
	 * and generic ftrace events of proto traces get no `ftrace_event` row
	 * (nor args); their effects (sched, thread_state, counters) stay. */
	bool no_ftrace_raw;
	/* --analyze-trace-proto-content: the bytes of each field path of the
	 * protobuf packets, by TrackEvent category and name, into
	 * experimental_proto_path / experimental_proto_content */
	bool analyze_trace_proto_content;
	/* --allow-sql-file-access: SQL may ATTACH files and VACUUM INTO a file;
	 * without it an authorizer refuses both (sql/schema.c). */
	bool allow_sql_file_access;
	/* --dev / --extra-checks: Perfetto's enable_dev_features and
	 * enable_extra_checks. */
	bool dev, extra_checks;
	/* User SQL packages tp_new registers, in order (--add-sql-package): a
	 * config copied into the RPC server gives every trace processor it
	 * creates the same packages. The array and its strings must outlive
	 * every tp_new that uses the config. A package that fails to register
	 * is a fatal error: tp_error() says why. */
	const struct tp_sql_package *packages;
	size_t npackages;
};

/* A new, empty trace processor. cfg may be NULL. Never fails (aborts on OOM). */
struct tp *tp_new(const struct tp_config *cfg);
void tp_free(struct tp *tp);

/* Push the next len bytes of the trace. The format is sniffed from the first
 * bytes (gzip is unwrapped first). Returns 0, or a negative code when the
 * trace cannot be read at all (unknown format, corrupt gzip); tp_error() then
 * says why. Bad events inside a readable trace are counted in `stats`, not
 * errors. The bytes are copied or consumed; the caller may reuse buf. */
int tp_parse(struct tp *tp, const uint8_t *buf, size_t len);

/* tp_parse of the whole trace in one call (a mapped file), buf staying valid
 * and unchanged until tp_end_of_file returns: importers that need the whole
 * file at once (perf.data, trace.dat) read it in place instead of copying
 * it. Only as the first and only input: a later tp_parse fails. */
int tp_parse_file(struct tp *tp, const uint8_t *buf, size_t len);

/* No more bytes: flush the sorter, close what is still open, build indexes.
 * Returns 0 or a negative code (tp_error()). Queries work after this. */
int tp_end_of_file(struct tp *tp);

/* The message of the first fatal error, or "" if none. */
const char *tp_error(const struct tp *tp);

/* The name of the detected trace format ("proto", "json", ...) or "unknown". */
const char *tp_trace_type(const struct tp *tp);

/* The SQLite connection holding the trace's tables and views. Owned by tp;
 * valid until tp_free. Use sqlite3_prepare_v2 & co. on it. */
struct sqlite3 *tp_db(struct tp *tp);

struct sqlite3_stmt;
/* Prepare the first statement of sql on tp_db(tp), like sqlite3_prepare_v2,
 * plus PerfettoSQL's `INCLUDE PERFETTO MODULE m;` (the modules of
 * sql/modules.c and of registered user packages, whose SQL it runs then:
 * *st is NULL) and the prelude's cast_*!() macros.
 * Returns an SQLite result code; on error err holds the message. *tail is
 * where the next statement starts, in sql. */
int tp_prepare(struct tp *tp, const char *sql, struct sqlite3_stmt **st, const char **tail,
               char *err, size_t err_size);
/* The message of the last error on db: SQLite's, or for a statement the
 * authorizer refused (file access), one that says why. */
const char *tp_sql_errmsg(struct sqlite3 *db);
/* The report of the error msg the last tp_prepare(tp, stmt, ...) failed
 * with, stmt being where that call started in the query text sql
 * (tb_malloc'd): tp_sql_traceback's at the token SQLite stopped at (its
 * syntax errors worded as Perfetto's parser words them), or an INCLUDE's
 * error as it is, as Perfetto gives that one no frame. */
char *tp_prepare_error_report(struct tp *tp, const char *sql, const char *stmt, const char *msg);
/* An error in the SQL text sql, given at the top level (a query), as
 * Perfetto reports it (tb_malloc'd):
 *
 *   Traceback (most recent call last):
 *     File "stdin" line L col C
 *       <the line of `at`, from the statement's start if on its first line>
 *       <a caret under `at`>
 *   msg
 *
 * stmt is where the statement's text starts in sql (its first token is
 * found past white space and comments), at where the error is (NULL: the
 * statement's first token, as for an error while it ran); L and C count
 * from 1 in the whole of sql. A msg that is itself a traceback (of module
 * includes) keeps its frames after this one. */
char *tp_sql_traceback(const char *sql, const char *stmt, const char *at, const char *msg);
/* The SQL name of the i-th of the trace's column tables (eponymous virtual
 * tables, so not in sqlite_schema; __intrinsic_slice & co.), in declaration
 * order; NULL past the last. */
const char *tp_column_table_name(uint32_t i);

/* ---- reading column tables (model/columns.c) ------------------------------ */

/* The column tables read a block of rows at a time, with the values SQL
 * shows (`SELECT * FROM __intrinsic_slice`): what export parquet writes
 * without stepping SQLite row by row. Tables are numbered as for
 * tp_column_table_name; their columns are those of SELECT *, column 0
 * being id. */
enum tp_value_type { TP_VALUE_INT, TP_VALUE_DOUBLE, TP_VALUE_STRING };
/* The number of the column table called name, or -1. */
int tp_column_table_find(const char *name);
uint32_t tp_column_table_rows(const struct tp *tp, uint32_t table);
uint32_t tp_column_count(uint32_t table);
const char *tp_column_name(uint32_t table, uint32_t col);
enum tp_value_type tp_column_type(uint32_t table, uint32_t col);
/* Rows [row, row + n) of a column (row + n <= the table's rows): out[k]
 * the value (INT columns the integer, DOUBLE ones the double, STRING ones
 * the string's id for tp_string), null[k] 1 for NULL (out[k] then 0) and
 * 0 otherwise. Returns the number of NULLs. */
union tp_value {
	int64_t i;
	double d;
};
uint32_t tp_column_read(const struct tp *tp, uint32_t table, uint32_t col, uint32_t row, uint32_t n,
                        union tp_value *out, uint8_t *null);
/* The text of string id (from tp_column_read; never 0) and its length. */
const char *tp_string(const struct tp *tp, uint32_t id, size_t *len);

/* ---- user SQL packages (sql/packages.c) ---------------------------------- */

/* A module of a package: `INCLUDE PERFETTO MODULE <name>` runs sql, once. */
struct tp_sql_module {
	const char *name; /* "<package>.<a>.<b>", e.g. from the file a/b.sql */
	const char *sql;
};

/* Perfetto's RegisterSqlPackageArgs / SqlPackage. */
struct tp_sql_package {
	const char *name; /* "pkg" or "pkg.sub"; not a prefix of another package */
	const struct tp_sql_module *modules;
	size_t nmodules;
	bool allow_override; /* replace a package of the same name */
};

/* Register pkg (copied) on tp as Perfetto's RegisterSqlPackage: its
 * modules' SQL runs on their first INCLUDE (a module already included is a
 * no-op; `pkg.*` includes every module of pkg; a module whose SQL failed
 * fails every later INCLUDE). Returns 0, or -EEXIST (the name is taken by
 * a package, ours or a user's, and allow_override is false) / -EINVAL (a
 * module outside the package, a package name that is a prefix of another's
 * or the other way round) with Perfetto's message in err. */
int tp_register_sql_package(struct tp *tp, const struct tp_sql_package *pkg, char *err,
                            size_t err_size);

/* Forget which user modules were included, so that the next INCLUDE runs
 * them again (the RPC's RESTORE_INITIAL_TABLES dropped what they made). */
void tp_sql_packages_forget_includes(struct tp *tp);

/* Bytes of trace pushed so far. */
uint64_t tp_bytes_parsed(const struct tp *tp);

/* ---- symbolization (symbolize/) ------------------------------------------ */

/* Where symbols are looked for (see symbolize/README.md). */
struct tp_symbolize_opts {
	const char *binary_path; /* PERFETTO_BINARY_PATH: colon-separated roots, or NULL */
	bool find_mode;          /* PERFETTO_SYMBOLIZER_MODE=find (default: index the roots) */
	bool no_system;          /* only the roots: not the mapped files, not /usr/lib/debug */
	const char *debug_root;  /* NULL: "/usr/lib/debug" */
	/* Source files and lines: NULL asks llvm-symbolizer from PATH when one
	 * is installed, "" asks none, else the path of the one to ask. */
	const char *llvm_symbolizer;
};

struct tp_symbolize_result {
	uint8_t *packets; /* Trace bytes: one ModuleSymbols packet per resolved mapping */
	size_t len;
	uint32_t mappings_symbolized, addresses_symbolized;
	uint32_t mappings_failed, frames_failed; /* no matching file, or no symbol hit */
};

/* After tp_end_of_file: resolve every frame without a symbol set whose
 * mapping has a build id against ELF files on this machine, as Perfetto's
 * symbolizer does, and encode the results as ModuleSymbols packets in
 * res->packets (tb_malloc'd, freed by tp_symbolize_result_release; NULL when
 * nothing resolved). The trace itself is not changed. Returns 0 or -EMSGSIZE. */
int tp_symbolize(struct tp *tp, const struct tp_symbolize_opts *o, struct tp_symbolize_result *res);
void tp_symbolize_result_release(struct tp_symbolize_result *res);
/* Import the ModuleSymbols packets of trace[0, len) into the loaded trace
 * (stack_profile_symbol rows, frame symbol_set_id), as if they had been at
 * its end. Other packets are ignored. */
void tp_symbolize_apply(struct tp *tp, const uint8_t *trace, size_t len);

/* The trace_processor_shell applet (alias trace_processor). */
int trace_processor_shell_main(int argc, char **argv);

#endif /* TB_TRACE_PROCESSOR_H */
