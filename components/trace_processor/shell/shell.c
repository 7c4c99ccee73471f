/*
 * trace_processor_shell: the command line over the trace processor library,
 * with the flags, subcommands and output formats of Perfetto v58.2's shell
 * (compat §5.3).
 *
 *   trace_processor_shell [COMMAND] [FLAGS] [TRACE] ...
 *   COMMAND: query interactive convert summarize bundle util server export
 *            metrics (and `help COMMAND`); none: the classic flat flags
 *            (-q, -Q, -D, --stdiod, -e, --summary, --run-metrics, ...),
 *            translated onto the commands as Perfetto does.
 *
 * The command is the first argument that is not a flag or a flag's value.
 * Each command takes its own flags plus the global ones (the table below,
 * one entry per flag and meaning). This file parses, prints the help texts,
 * turns the global flags into a struct tp_config and loads traces; the
 * commands live in query.c, server.c, export.c and convert.c.
 */
#include "shell.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "version.h"
#include "../io/io.h"
#include "../rpc/rpc.h"
#include "sqlite3.h"

#define READ_CHUNK (1u << 20)
#define PROG "trace_processor_shell"

/* ---- the flags ------------------------------------------------------------- */

struct shell_flag {
	const char *name;
	char short_name; /* 0: none */
	const char *arg; /* NULL: takes no value */
	const char *help;
};

static const struct shell_flag flags[SF_COUNT] = {
    [SF_HELP] = {"help", 'h', NULL, "Prints this guide."},
    [SF_VERSION] = {"version", 'v', NULL, "Prints the version."},
    [SF_FULL_SORT] = {"full-sort", 0, NULL, "Sorts every event before parsing any."},
    [SF_NO_FTRACE_RAW] = {"no-ftrace-raw", 0, NULL,
                          "No ftrace_event (raw) rows for typed ftrace events."},
    [SF_ANALYZE_TRACE_PROTO_CONTENT] = {"analyze-trace-proto-content", 0, NULL,
                                        "Analyzes the trace's protobuf content."},
    [SF_CROP_TRACK_EVENTS] = {"crop-track-events", 0, NULL,
                              "Drops track events outside the range of interest."},
    [SF_ALLOW_SQL_FILE_ACCESS] = {"allow-sql-file-access", 0, NULL,
                                  "Lets SQL read and write files (ATTACH, VACUUM INTO). "
                                  "Never with untrusted SQL."},
    [SF_DEV] = {"dev", 0, NULL, "Enables development features."},
    [SF_DEV_FLAG] = {"dev-flag", 0, "KEY=VALUE", "Sets a development flag (with --dev)."},
    [SF_EXTRA_CHECKS] = {"extra-checks", 0, NULL, "Enables extra SQL checks."},
    [SF_ADD_SQL_PACKAGE] = {"add-sql-package", 0, "PATH[@PKG]",
                            "Registers the .sql files under PATH as package PKG."},
    [SF_OVERRIDE_SQL_PACKAGE] = {"override-sql-package", 0, "PATH[@PKG]",
                                 "As --add-sql-package, replacing a package of that name."},
    [SF_OVERRIDE_STDLIB] = {"override-stdlib", 0, "PATH",
                            "Replaces stdlib modules by the .sql files under PATH (with --dev)."},
    [SF_REGISTER_FILES_DIR] = {"register-files-dir", 0, "PATH",
                               "Registers the files under PATH for importers."},
    [SF_METRIC_EXTENSION] = {"metric-extension", 0, "DISK@VIRTUAL",
                             "Loads v1 metric protos and SQL from DISK onto VIRTUAL."},
    [SF_REMOTE] = {"remote", 0, "ADDR",
                   "Queries a warm `server unix` session (name or socket path) or "
                   "a `server http` (host:port) instead of loading a trace."},
    [SF_METATRACE] = {"metatrace", 'm', "FILE", "Writes a metatrace of the shell to FILE."},
    [SF_METATRACE_BUFFER_CAPACITY] = {"metatrace-buffer-capacity", 0, "N",
                                      "Keeps the last N metatrace events."},
    [SF_METATRACE_CATEGORIES] = {"metatrace-categories", 0, "CATEGORIES",
                                 "Comma-separated metatrace categories."},

    [SF_QUERY_FILE] = {"query-file", 'f', "FILE", "Reads SQL from FILE ('-': stdin)."},
    [SF_STRUCTURED_QUERY_ID] = {"structured-query-id", 0, "ID",
                                "[Advanced] Runs one structured query by ID."},
    [SF_SUMMARY_SPEC] = {"summary-spec", 0, "FILE",
                         "[Advanced] Summary spec file for structured queries (repeatable)."},
    [SF_INTERACTIVE] = {"interactive", 'i', NULL, "Starts the interactive shell afterwards."},
    [SF_WIDE] = {"wide", 'W', NULL, "Double column width in the interactive shell."},
    [SF_PERF_FILE] = {"perf-file", 0, "FILE", "Writes load and query times (ns) to FILE."},
    [SF_QUERY_FORMAT] = {"format", 0, "FORMAT",
                         "Result format: csv (default), tsv, json, parquet."},
    [SF_QUERY_OUTPUT] = {"output", 'o', "FILE", "Writes the result to FILE (parquet needs it)."},

    [SF_PORT] = {"port", 0, "PORT", "HTTP port (default 9001)."},
    [SF_IP_ADDRESS] = {"ip-address", 0, "IP", "HTTP bind address (default localhost)."},
    [SF_ADDITIONAL_CORS_ORIGINS] = {"additional-cors-origins", 0, "O1,O2,...",
                                    "More CORS origins for HTTP mode."},
    [SF_NAME] = {"name", 0, "NAME", "Session name for unix mode (default: generated)."},
    [SF_PATH] = {"path", 0, "PATH", "Socket path for unix mode (instead of --name)."},
    [SF_IDLE_TIMEOUT] = {"idle-timeout", 0, "auto|DUR",
                         "Stops the server after this long idle (30s, 5m, 2h). auto: 30m for "
                         "unix, never for http; 0/never: never."},
    [SF_IDLE_START] = {"idle-start", 0, "auto|orphaned|last-query",
                       "When the idle clock runs (auto: once the owner is gone)."},
    [SF_DAEMONIZE] = {"daemonize", 0, NULL, "Detaches into the background (unix mode)."},

    [SF_EXPORT_OUTPUT] = {"output", 'o', "FILE", "Output file (a directory for parquet)."},
    [SF_TRACE_ID] = {"trace-id", 0, "ID",
                     "parquet: the trace_id column's value (default: the trace's file name)."},
    [SF_GZIP] = {"gzip", 0, NULL, "parquet: GZIP-compressed pages (smaller files, slower export)."},
    [SF_ALL_VIEWS] = {"all-views", 0, NULL,
                      "parquet: every table and view (as export sqlite), not only Perfetto's "
                      "tables."},

    [SF_TRUNCATE] = {"truncate", 't', "start|end", "Keeps only the start or the end."},
    [SF_CONVERT_FULL_SORT] = {"full-sort", 0, NULL, "Sorts the whole trace first."},
    [SF_PID] = {"pid", 0, "PID", "Profiles of this process only."},
    [SF_TIMESTAMPS] = {"timestamps", 0, "T1,T2,...", "Profiles at these timestamps only."},
    [SF_ALLOC] = {"alloc", 0, NULL, "Only the allocator profile."},
    [SF_PERF] = {"perf", 0, NULL, "Only the perf profile."},
    [SF_JAVA_HEAP] = {"java-heap", 0, NULL, "Only the heap graph profile."},
    [SF_NO_ANNOTATIONS] = {"no-annotations", 0, NULL, "No derived frame annotations."},
    [SF_OUTPUT_DIR] = {"output-dir", 0, "DIR", "Directory for the profiles."},
    [SF_VERBOSE] = {"verbose", 0, NULL, "Prints more detail."},
    [SF_SKIP_UNKNOWN] = {"skip-unknown", 0, NULL, "Leaves unknown fields out of text."},

    [SF_SYMBOL_PATHS] = {"symbol-paths", 0, "PATH1,PATH2,...",
                         "More directories to look for symbol files in."},
    [SF_NO_AUTO_SYMBOL_PATHS] = {"no-auto-symbol-paths", 0, NULL,
                                 "Only --symbol-paths: not the mapped files' own paths."},
    [SF_PROGUARD_MAP] = {"proguard-map", 0, "[pkg=]PATH",
                         "ProGuard/R8 mapping for deobfuscation (repeatable)."},
    [SF_NO_AUTO_PROGUARD_MAPS] = {"no-auto-proguard-maps", 0, NULL,
                                  "No automatic ProGuard/R8 mapping discovery."},

    [SF_RUN] = {"run", 0, "NAMES", "Comma-separated metric names."},
    [SF_PRE] = {"pre", 0, "FILE", "SQL file run before the metrics."},
    [SF_METRICS_OUTPUT] = {"output", 0, "FORMAT", "Output format (binary|text|json)."},
    [SF_POST_QUERY] = {"post-query", 0, "FILE", "SQL file run afterwards."},

    [SF_METRICS_V2] = {"metrics-v2", 0, "IDS", "Metric IDs, or \"all\"."},
    [SF_METADATA_QUERY] = {"metadata-query", 0, "ID", "Metadata query ID."},
    [SF_FORMAT] = {"format", 0, "FORMAT", "Output format (text or binary)."},

    [SF_MERGE_OUTPUT] = {"output", 'o', "FILE", "merge: the archive to write."},
    [SF_MANIFEST] = {"manifest", 0, "FILE", "merge: perfetto_manifest JSON file to include."},
    [SF_NO_VALIDATE] = {"no-validate", 0, NULL, "merge: no check of the written archive."},
    [SF_STRICT] = {"strict", 0, NULL, "merge: fail if the check reports dropped events."},

    [SF_BATCH] = {"batch", 0, NULL,
                  "Runs the SQL of -f over every TRACE: one result, a trace column first."},
    [SF_JOBS] = {"jobs", 'j', "N", "--batch: N worker processes (default: online CPUs)."},
    [SF_BATCH_LIST] = {"batch-list", 0, "FILE", "--batch: more traces, one per line ('-': stdin)."},
    [SF_MAX_MEMORY] = {"max-memory", 0, "MB",
                       "--batch: address space per worker (default: RAM / N)."},
    [SF_BATCH_ERRORS] = {"errors", 0, "FILE", "--batch: the failed traces as trace,error."},
};

static const enum shell_flag_id query_flags[] = {
    SF_QUERY_FILE, SF_STRUCTURED_QUERY_ID, SF_SUMMARY_SPEC, SF_INTERACTIVE, SF_WIDE,
    SF_PERF_FILE,  SF_QUERY_FORMAT,        SF_QUERY_OUTPUT, SF_BATCH,       SF_JOBS,
    SF_BATCH_LIST, SF_MAX_MEMORY,          SF_BATCH_ERRORS, SF_COUNT};
static const enum shell_flag_id interactive_flags[] = {SF_WIDE, SF_COUNT};
static const enum shell_flag_id server_flags[] = {
    SF_PORT,       SF_IP_ADDRESS, SF_ADDITIONAL_CORS_ORIGINS,
    SF_NAME,       SF_PATH,       SF_IDLE_TIMEOUT,
    SF_IDLE_START, SF_DAEMONIZE,  SF_COUNT};
static const enum shell_flag_id export_flags[] = {SF_EXPORT_OUTPUT, SF_TRACE_ID, SF_ALL_VIEWS,
                                                  SF_GZIP, SF_COUNT};
static const enum shell_flag_id convert_flags[] = {
    SF_TRUNCATE,  SF_CONVERT_FULL_SORT, SF_PID,        SF_TIMESTAMPS, SF_ALLOC,        SF_PERF,
    SF_JAVA_HEAP, SF_NO_ANNOTATIONS,    SF_OUTPUT_DIR, SF_VERBOSE,    SF_SKIP_UNKNOWN, SF_COUNT};
static const enum shell_flag_id bundle_flags[] = {SF_SYMBOL_PATHS, SF_NO_AUTO_SYMBOL_PATHS,
                                                  SF_PROGUARD_MAP, SF_NO_AUTO_PROGUARD_MAPS,
                                                  SF_VERBOSE,      SF_COUNT};
static const enum shell_flag_id metrics_flags[] = {
    SF_RUN, SF_PRE, SF_METRICS_OUTPUT, SF_POST_QUERY, SF_PERF_FILE, SF_INTERACTIVE, SF_COUNT};
static const enum shell_flag_id summarize_flags[] = {
    SF_METRICS_V2, SF_METADATA_QUERY, SF_FORMAT, SF_POST_QUERY,
    SF_PERF_FILE,  SF_INTERACTIVE,    SF_COUNT};
static const enum shell_flag_id util_flags[] = {SF_VERBOSE,     SF_MERGE_OUTPUT, SF_MANIFEST,
                                                SF_NO_VALIDATE, SF_STRICT,       SF_COUNT};

/* In Perfetto's order (its help lists them so). */
static const struct shell_cmd commands[] = {
    {"query", "Load a trace and run a SQL query.", "<trace_file> [SQL]",
     "Runs SQL against a trace and prints every statement's result set as CSV, one\n"
     "blank line between result sets. The SQL is the second argument, or the file\n"
     "of -f, or stdin when it is not a terminal:\n"
     "  tp query trace.pb \"SELECT ts FROM slice LIMIT 10\"\n"
     "  tp query -f queries.sql trace.pb\n"
     "  cat q.sql | tp query trace.pb\n"
     "-i opens the interactive shell afterwards. --remote ADDR runs the SQL on a\n"
     "warm `server unix` session (or a `server http`) instead of a trace file.\n"
     "--batch runs the SQL of -f over many traces with -j N worker processes:\n"
     "  tp query --batch -j 2 -f q.sql [-o OUT.csv] [--errors ERR.csv] T1 T2 ...\n"
     "one result (csv, or --format tsv) with a trace column first, in the order\n"
     "of the traces; a trace that fails is reported and skipped (exit 2; 1 if\n"
     "every trace failed).",
     query_flags, tp_shell_run_query},
    {"interactive", "Interactive SQL shell.", "<trace_file>",
     "A prompt for SQL against a trace: statements end with ';', results print as\n"
     "tables, .help lists the dot-commands. The default when no command is given.",
     interactive_flags, tp_shell_run_interactive},
    {"convert", "Convert trace format.", "<format> [input] [output]",
     "Converts a trace to another format:\n"
     "  json      Chrome JSON (slices, counters, flows, metadata)\n"
     "  systrace  ftrace text, as the kernel's trace file\n"
     "  ctrace    systrace, zlib-compressed\n"
     "  text      the trace's packets in protobuf text format\n"
     "  profile   perf samples as gzip'd pprof, one file per process (--output-dir)\n"
     "  firefox   Firefox profiler format (not in tracebox)\n"
     "The input defaults to stdin and the output to stdout. See util for\n"
     "symbolize, decompress_packets and text_to_binary, bundle for a\n"
     "self-contained trace.",
     convert_flags, tp_shell_run_convert},
    {"summarize", "Run trace summarization.", "<trace_file> [spec_file ...]",
     "Computes a trace summary (TraceSummary) from spec files and v2 metrics.\n"
     "Not in tracebox: there is no summarizer; the command says so and fails.",
     summarize_flags, tp_shell_run_summarize},
    {"bundle", "Bundle a trace with symbols and deobfuscation data.", "<input> <output>",
     "Writes a TAR holding the trace plus the symbols its stack profiles need\n"
     "(ModuleSymbols packets from the ELF files on this machine, in the\n"
     "mapped files' paths, /usr/lib/debug, PERFETTO_BINARY_PATH and\n"
     "--symbol-paths), so that it symbolizes anywhere. <input> and <output> are\n"
     "file paths (not stdin or stdout).",
     bundle_flags, tp_shell_run_bundle},
    {"util", "Low-level trace utilities (symbolize, deobfuscate, etc.).",
     "<merge|symbolize|deobfuscate|decompress_packets|text_to_binary> [args]",
     "  merge -o OUT [--manifest M] TRACE...  packs traces (and a perfetto_manifest)\n"
     "                        into a TAR that opens as one trace, then checks it\n"
     "                        opens cleanly (unless --no-validate; --strict fails)\n"
     "  symbolize [in] [out]  ModuleSymbols packets for the trace's frames\n"
     "  deobfuscate           Java deobfuscation packets (not in tracebox)\n"
     "  decompress_packets [in] [out]  the trace with compressed packets inflated\n"
     "  text_to_binary [in] [out]      a textproto trace to binary\n"
     "in defaults to stdin, out to stdout.",
     util_flags, tp_shell_run_util},
    {"server", "Start an RPC server.", "<mode> [trace_file|name]",
     "  http   the Perfetto UI's RPC over HTTP and WebSocket (default\n"
     "         127.0.0.1:9001 and [::1]:9001; --port, --ip-address)\n"
     "  stdio  the RPC stream on stdin/stdout\n"
     "  unix   the RPC over an AF_UNIX socket, the trace kept warm for\n"
     "         'query --remote NAME' (--name, or --path for the socket); runs in\n"
     "         the foreground unless --daemonize, stops on Ctrl-C or when idle\n"
     "  kill   stops a `server unix` session by name or socket path\n"
     "The trace is optional in http and unix modes: a client can load one.",
     server_flags, tp_shell_run_server},
    {"export", "Export the contents of Trace Processor.", "<format> -o FILE <trace_file>",
     "Loads a trace and exports it:\n"
     "  sqlite     a SQLite database file: every table, and every view as a\n"
     "             table, with Perfetto's names (opens in sqlite3, DuckDB, ...)\n"
     "  parquet    a directory (-o DIR) of NAME.parquet files, one per table\n"
     "             (Perfetto's: slice, thread, process, track, counter, sched,\n"
     "             args, ...; --all-views: every table and view, as sqlite),\n"
     "             each with a leading trace_id column (--trace-id ID,\n"
     "             default the trace's file name) so many traces concatenate\n"
     "  arrow_tar  (not in tracebox)\n"
     "  perfetto   (not in tracebox)",
     export_flags, tp_shell_run_export},
    {"metrics", "Run v1 metrics (deprecated; use 'summarize --metrics-v2').", "<trace_file>",
     "Runs v1 metrics (--run NAMES). Not in tracebox: there is no metrics\n"
     "engine; the command says so and fails.",
     metrics_flags, tp_shell_run_metrics},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

/* ---- small helpers ------------------------------------------------------------ */

void tp_shell_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

int64_t tp_shell_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tp_shell_opts_release(struct shell_opts *o)
{
	vec_release(&o->dev_flags);
	vec_release(&o->add_packages);
	vec_release(&o->override_packages);
	vec_release(&o->metric_extensions);
	vec_release(&o->summary_specs);
	vec_release(&o->proguard_maps);
	vec_release(&o->pos);
}

const char *tp_shell_trace_arg(const struct shell_opts *o, const char *cmd)
{
	if (o->pos.len == 0) {
		tp_shell_error("%s: trace file is required", cmd);
		return NULL;
	}
	return o->pos.data[0];
}

int tp_shell_reject_extra(const struct shell_opts *o, const char *cmd, size_t max, const char *hint)
{
	if (o->pos.len <= max)
		return 0;
	fprintf(stderr, PROG ": %s: expected at most %zu positional argument(s), got %zu:", cmd,
	        max, o->pos.len);
	for (size_t i = max; i < o->pos.len; i++)
		fprintf(stderr, " '%s'", o->pos.data[i]);
	fprintf(stderr,
	        ". Extra arguments are rejected to catch mistakes; use a "
	        "comma-separated list for flags that take several values.%s%s\n",
	        hint ? " " : "", hint ? hint : "");
	return -1;
}

char *tp_shell_read_file(const char *path, size_t *len)
{
	int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	size_t cap = 4096, n = 0;
	char *s = tb_malloc(cap);
	for (;;) {
		if (cap - n < 2)
			s = tb_realloc(s, cap *= 2);
		ssize_t r = read(fd, s + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			tb_free(s);
			if (fd != 0)
				close(fd);
			errno = e;
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (fd != 0)
		close(fd);
	s[n] = '\0';
	if (len)
		*len = n;
	return s;
}

/* ---- help ------------------------------------------------------------------------ */

static void print_flag_list(FILE *out, const enum shell_flag_id *ids, size_t n)
{
	for (size_t i = 0; i < n && ids[i] != SF_COUNT; i++) {
		const struct shell_flag *f = &flags[ids[i]];
		char name[64];
		snprintf(name, sizeof name, "%s%s%s", f->name, f->arg ? " " : "",
		         f->arg ? f->arg : "");
		if (f->short_name)
			fprintf(out, "  -%c, --%-24s", f->short_name, name);
		else
			fprintf(out, "      --%-24s", name);
		/* A long name gets its help on the next line. */
		fprintf(out, strlen(name) > 24 ? "\n%33s%s\n" : "%.0s %s\n", "", f->help);
	}
}

static void print_global_flags(FILE *out)
{
	enum shell_flag_id ids[SF_NGLOBAL];
	for (int i = 0; i < SF_NGLOBAL; i++)
		ids[i] = (enum shell_flag_id)i;
	fputs("Global flags:\n", out);
	print_flag_list(out, ids, SF_NGLOBAL);
}

static void print_command_usage(FILE *out, const char *argv0, const struct shell_cmd *c)
{
	fprintf(out, "Usage: %s %s [FLAGS] %s\n\n%s\n\n%s\n\n", argv0, c->name, c->usage_args,
	        c->description, c->detailed_help);
	if (c->flags[0] != SF_COUNT) {
		fputs("Subcommand flags:\n", out);
		print_flag_list(out, c->flags, SIZE_MAX);
		fputc('\n', out);
	}
	print_global_flags(out);
}

static void print_overview(FILE *out, const char *argv0)
{
	fprintf(out,
	        "Perfetto Trace Processor (tracebox %s).\n"
	        "Usage: %s [command] [flags] [trace_file]\n"
	        "\n"
	        "If no command is given, opens an interactive SQL shell on the trace file.\n"
	        "\n"
	        "trace_file is a Perfetto protobuf trace, Chrome JSON, ftrace/systrace text,\n"
	        "perf script output, gzip'd or not, alone or in a zip/tar, a local path, '-'\n"
	        "for stdin, or an http(s):// URL (streamed; SSL_CERT_FILE names the CA\n"
	        "bundle).\n"
	        "\n"
	        "Commands:\n",
	        TB_VERSION, argv0);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].description);
	fputc('\n', out);
	print_global_flags(out);
	fprintf(out,
	        "\n"
	        "Run '%s help <command>' for per-command flags and details.\n"
	        "\n"
	        "Examples:\n"
	        "  tp trace.pb                                       Interactive shell.\n"
	        "  tp query trace.pb \"SELECT ts, dur FROM slice\"     Run a query.\n"
	        "  tp query -f queries.sql trace.pb                  Run queries from file.\n"
	        "  tp server http                                    Start HTTP server.\n"
	        "  tp convert json trace.pb out.json                 Convert to JSON.\n"
	        "  tp export sqlite -o trace.db trace.pb             Export to SQLite.\n"
	        "\n"
	        "Classic interface:\n"
	        "  The flat flags (-q, -Q, -D, --stdiod, -e, --summary, --run-metrics, ...)\n"
	        "  work as in Perfetto. Run '%s --help-classic' for their reference.\n",
	        argv0, argv0);
}

static void print_classic_usage(FILE *out, const char *argv0)
{
	fprintf(out,
	        "Interactive trace processor shell.\n"
	        "Usage: %s [FLAGS] trace_file.pb\n"
	        "\n"
	        "General purpose:\n"
	        " -h, --help                           Prints the command overview.\n"
	        "     --help-classic                   Prints this guide.\n"
	        " -v, --version                        Prints the version.\n"
	        "\n"
	        "Behavioural:\n"
	        " -D, --httpd                          Serves the HTTP RPC (server http).\n"
	        " --http-port PORT                     Port of the HTTP RPC server.\n"
	        " --http-ip-address IP                 Address of the HTTP RPC server.\n"
	        " --http-additional-cors-origins O1,O2,...\n"
	        "                                      CORS origins besides\n"
	        "                                      https://ui.perfetto.dev,\n"
	        "                                      http://localhost:10000 and\n"
	        "                                      http://127.0.0.1:10000.\n"
	        " --stdiod                             Serves the RPC on stdin/stdout.\n"
	        " -i, --interactive                    The interactive shell after -q, -Q,\n"
	        "                                      --run-metrics or --summary.\n"
	        "\n"
	        "Parsing:\n"
	        " --full-sort                          Sorts every event before parsing.\n"
	        " --no-ftrace-raw                      No ftrace_event (raw) rows for typed\n"
	        "                                      ftrace events: less memory.\n"
	        "\n"
	        "PerfettoSQL:\n"
	        " -q, --query-file FILE                Runs the SQL in FILE.\n"
	        " -Q, --query-string QUERY             Runs QUERY.\n"
	        " --add-sql-package PATH[@PACKAGE]     The .sql files under PATH as a\n"
	        "                                      package for INCLUDE PERFETTO MODULE:\n"
	        "                                      mydir/helpers/common.sql is\n"
	        "                                      mydir.helpers.common (or, with\n"
	        "                                      @foo, foo.helpers.common).\n"
	        "\n"
	        "Trace summarization (not in tracebox):\n"
	        " --summary                            Computes a trace summary.\n"
	        " --summary-metrics-v2 ID1,ID2,...     The v2 metrics to compute, or all.\n"
	        " --summary-metadata-query ID          The query filling `metadata`.\n"
	        " --summary-spec SUMMARY_PATH          A TraceSummarySpec file.\n"
	        " --summary-format [text,binary]       Output format.\n"
	        "\n"
	        "Metatracing:\n"
	        " -m, --metatrace FILE                 Writes a metatrace to FILE.\n"
	        " --metatrace-buffer-capacity N        Keeps the last N events.\n"
	        " --metatrace-categories CATEGORIES    Comma-separated categories.\n"
	        "\n"
	        "Advanced:\n"
	        " --allow-sql-file-access              Lets SQL touch files (ATTACH,\n"
	        "                                      VACUUM INTO). Not with untrusted SQL.\n"
	        " --dev                                Development features.\n"
	        " --dev-flag KEY=VALUE                 A development flag (with --dev).\n"
	        " --extra-checks                       Extra SQL checks.\n"
	        " -e, --export FILE                    Exports the database to the SQLite\n"
	        "                                      file FILE.\n"
	        " -p, --perf-file FILE                 Writes load and query times (ns),\n"
	        "                                      with -q or --run-metrics.\n"
	        " -W, --wide                           Double column width.\n"
	        " --analyze-trace-proto-content        Analyzes the protobuf content.\n"
	        " --crop-track-events                  Drops track events outside the\n"
	        "                                      range of interest.\n"
	        " --register-files-dir PATH            Files for importers.\n"
	        " --override-stdlib=[path_to_stdlib]   Replaces stdlib modules (with --dev).\n"
	        " --override-sql-package PATH[@PKG]    As --add-sql-package, replacing a\n"
	        "                                      package of that name.\n"
	        "\n"
	        "Structured queries (not in tracebox):\n"
	        " --structured-query-spec SPEC_PATH    A TraceSummarySpec file.\n"
	        " --structured-query-id ID             The structured query to run.\n"
	        "\n"
	        "Metrics (v1, not in tracebox):\n"
	        " --run-metrics x,y,z                  Runs metrics.\n"
	        " --pre-metrics FILE                   SQL run before the metrics.\n"
	        " --metrics-output=[binary|text|json]  Output format.\n"
	        " --metric-extension DISK_PATH@VIRTUAL_PATH\n"
	        "                                      Metric protos and SQL.\n",
	        argv0);
}

static void print_version(void)
{
	printf("tracebox %s (%s)\nTrace Processor RPC API version: %d\n", TB_VERSION, TB_REVISION,
	       TP_RPC_API_VERSION);
}

/* ---- parsing a command's flags ----------------------------------------------- */

static const struct shell_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* Store the value of flag id. Returns 0, or -1 after printing. */
static int apply_flag(struct shell_opts *o, enum shell_flag_id id, const char *v)
{
	switch (id) {
	case SF_HELP:
		o->help = true;
		break;
	case SF_VERSION:
		o->version = true;
		break;
	case SF_FULL_SORT:
		o->full_sort = true;
		break;
	case SF_NO_FTRACE_RAW:
		o->no_ftrace_raw = true;
		break;
	case SF_ANALYZE_TRACE_PROTO_CONTENT:
		o->analyze_trace_proto_content = true;
		break;
	case SF_CROP_TRACK_EVENTS:
		o->crop_track_events = true;
		break;
	case SF_ALLOW_SQL_FILE_ACCESS:
		o->allow_sql_file_access = true;
		break;
	case SF_DEV:
		o->dev = true;
		break;
	case SF_DEV_FLAG:
		vec_push(&o->dev_flags, v);
		break;
	case SF_EXTRA_CHECKS:
		o->extra_checks = true;
		break;
	case SF_ADD_SQL_PACKAGE:
		vec_push(&o->add_packages, v);
		break;
	case SF_OVERRIDE_SQL_PACKAGE:
		vec_push(&o->override_packages, v);
		break;
	case SF_OVERRIDE_STDLIB:
		o->override_stdlib = v;
		break;
	case SF_REGISTER_FILES_DIR:
		o->register_files_dir = v;
		break;
	case SF_METRIC_EXTENSION:
		vec_push(&o->metric_extensions, v);
		break;
	case SF_REMOTE:
		o->remote = v;
		break;
	case SF_METATRACE:
		o->metatrace = v;
		break;
	case SF_METATRACE_BUFFER_CAPACITY: {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		if (errno || end == v || *end || *v == '-') {
			tp_shell_error("--metatrace-buffer-capacity: '%s' is not a count", v);
			return -1;
		}
		o->metatrace_capacity = n;
		break;
	}
	case SF_METATRACE_CATEGORIES:
		o->metatrace_categories = v;
		break;
	case SF_QUERY_FILE:
		o->query_file = v;
		break;
	case SF_STRUCTURED_QUERY_ID:
		o->structured_query_id = v;
		break;
	case SF_SUMMARY_SPEC:
		vec_push(&o->summary_specs, v);
		break;
	case SF_INTERACTIVE:
		o->interactive = true;
		break;
	case SF_WIDE:
		o->wide = true;
		break;
	case SF_PERF_FILE:
		o->perf_file = v;
		break;
	case SF_QUERY_FORMAT:
		o->format = v;
		break;
	case SF_QUERY_OUTPUT:
		o->query_output = v;
		break;
	case SF_TRACE_ID:
		o->trace_id = v;
		break;
	case SF_ALL_VIEWS:
		o->all_views = true;
		break;
	case SF_GZIP:
		o->gzip = true;
		break;
	case SF_PORT:
		o->port = v;
		break;
	case SF_IP_ADDRESS:
		o->ip = v;
		break;
	case SF_ADDITIONAL_CORS_ORIGINS:
		o->cors = v;
		break;
	case SF_NAME:
		o->name = v;
		break;
	case SF_PATH:
		o->path = v;
		break;
	case SF_IDLE_TIMEOUT:
		o->idle_timeout = v;
		break;
	case SF_IDLE_START:
		o->idle_start = v;
		break;
	case SF_DAEMONIZE:
		o->daemonize = true;
		break;
	case SF_EXPORT_OUTPUT:
	case SF_MERGE_OUTPUT:
		o->output = v;
		break;
	case SF_TRUNCATE:
		o->truncate = v;
		break;
	case SF_CONVERT_FULL_SORT:
		o->convert_full_sort = true;
		break;
	case SF_PID:
		o->pid = v;
		break;
	case SF_TIMESTAMPS:
		o->timestamps = v;
		break;
	case SF_ALLOC:
		o->alloc = true;
		break;
	case SF_PERF:
		o->perf = true;
		break;
	case SF_JAVA_HEAP:
		o->java_heap = true;
		break;
	case SF_NO_ANNOTATIONS:
		o->no_annotations = true;
		break;
	case SF_OUTPUT_DIR:
		o->output_dir = v;
		break;
	case SF_VERBOSE:
		o->verbose = true;
		break;
	case SF_SKIP_UNKNOWN:
		o->skip_unknown = true;
		break;
	case SF_SYMBOL_PATHS:
		o->symbol_paths = v;
		break;
	case SF_NO_AUTO_SYMBOL_PATHS:
		o->no_auto_symbol_paths = true;
		break;
	case SF_PROGUARD_MAP:
		vec_push(&o->proguard_maps, v);
		break;
	case SF_NO_AUTO_PROGUARD_MAPS:
		o->no_auto_proguard_maps = true;
		break;
	case SF_RUN:
		o->run = v;
		break;
	case SF_PRE:
		o->pre = v;
		break;
	case SF_METRICS_OUTPUT:
		o->metrics_output = v;
		break;
	case SF_POST_QUERY:
		o->post_query = v;
		break;
	case SF_METRICS_V2:
		o->metrics_v2 = v;
		break;
	case SF_METADATA_QUERY:
		o->metadata_query = v;
		break;
	case SF_FORMAT:
		o->format = v;
		break;
	case SF_MANIFEST:
		o->manifest = v;
		break;
	case SF_NO_VALIDATE:
		o->no_validate = true;
		break;
	case SF_STRICT:
		o->strict = true;
		break;
	case SF_BATCH:
		o->batch = true;
		break;
	case SF_JOBS:
		o->jobs = v;
		break;
	case SF_BATCH_LIST:
		o->batch_list = v;
		break;
	case SF_MAX_MEMORY:
		o->max_memory = v;
		break;
	case SF_BATCH_ERRORS:
		o->errors_file = v;
		break;
	case SF_COUNT:
		break;
	}
	return 0;
}

/* The flag of cmd (or a global one) whose short name is c. */
static int short_flag(const struct shell_cmd *cmd, int c)
{
	for (size_t i = 0; cmd->flags[i] != SF_COUNT; i++)
		if (flags[cmd->flags[i]].short_name == c)
			return (int)cmd->flags[i];
	for (int i = 0; i < SF_NGLOBAL; i++)
		if (flags[i].short_name == c)
			return i;
	return -1;
}

/* getopt_long over cmd's flags, then the global ones (a spelling both have
 * is the command's). Positionals go to o->pos. Returns 0, or -1 after
 * printing the problem and the command's usage. */
static int parse_command(const struct shell_cmd *cmd, int argc, char **argv, struct shell_opts *o)
{
	struct option longopts[SF_COUNT + 1];
	char optstring[2 * SF_COUNT + 2];
	size_t nl = 0, ns = 0;
	int rc = 0;
	optstring[ns++] = ':';
	for (int pass = 0; pass < 2; pass++) {
		size_t n = pass == 0 ? SIZE_MAX : SF_NGLOBAL;
		for (size_t i = 0; i < n; i++) {
			enum shell_flag_id id = pass == 0 ? cmd->flags[i] : (enum shell_flag_id)i;
			if (id == SF_COUNT)
				break;
			const struct shell_flag *f = &flags[id];
			longopts[nl++] = (struct option){
			    f->name, f->arg ? required_argument : no_argument, NULL, 256 + (int)id};
			if (f->short_name && !memchr(optstring, f->short_name, ns)) {
				optstring[ns++] = f->short_name;
				if (f->arg)
					optstring[ns++] = ':';
			}
		}
	}
	longopts[nl] = (struct option){NULL, 0, NULL, 0};
	optstring[ns] = '\0';
	optind = 0; /* a full re-initialisation (glibc) */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		int id = c >= 256 ? c - 256 : -1;
		if (c == '?' || c == ':') {
			const char *what = argv[optind - 1];
			if (c == ':')
				tp_shell_error("option '%s' needs a value", what);
			else if (optopt && optopt < 256)
				tp_shell_error("%s: unrecognized option '-%c'", cmd->name, optopt);
			else
				tp_shell_error("%s: unrecognized option '%s'", cmd->name, what);
			rc = -1;
			break;
		}
		if (id < 0)
			id = short_flag(cmd, c);
		if (id < 0 || apply_flag(o, (enum shell_flag_id)id, optarg) < 0) {
			rc = -1;
			break;
		}
	}
	if (rc < 0) {
		fputc('\n', stderr);
		print_command_usage(stderr, PROG, cmd);
		return -1;
	}
	for (int i = optind; i < argc; i++)
		vec_push(&o->pos, argv[i]);
	return 0;
}

/* ---- the classic flags ----------------------------------------------------------- */

enum {
	CL_HELP_CLASSIC = 512,
	CL_HTTP_PORT,
	CL_HTTP_IP,
	CL_HTTP_CORS,
	CL_STDIOD,
	CL_FULL_SORT,
	CL_NO_FTRACE_RAW,
	CL_ADD_SQL_PACKAGE,
	CL_OVERRIDE_SQL_PACKAGE,
	CL_STRUCTURED_QUERY_SPEC,
	CL_STRUCTURED_QUERY_ID,
	CL_SUMMARY,
	CL_SUMMARY_METRICS_V2,
	CL_SUMMARY_METADATA_QUERY,
	CL_SUMMARY_SPEC,
	CL_SUMMARY_FORMAT,
	CL_METATRACE_BUFFER_CAPACITY,
	CL_METATRACE_CATEGORIES,
	CL_DEV,
	CL_DEV_FLAG,
	CL_EXTRA_CHECKS,
	CL_ANALYZE_TRACE_PROTO_CONTENT,
	CL_CROP_TRACK_EVENTS,
	CL_ALLOW_SQL_FILE_ACCESS,
	CL_REGISTER_FILES_DIR,
	CL_OVERRIDE_STDLIB,
	CL_RUN_METRICS,
	CL_PRE_METRICS,
	CL_METRICS_OUTPUT,
	CL_METRIC_EXTENSION,
};

static const char classic_short[] = "hvWiDm:p:q:Q:e:";

static const struct option classic_long[] = {
    {"help", no_argument, NULL, 'h'},
    {"help-classic", no_argument, NULL, CL_HELP_CLASSIC},
    {"version", no_argument, NULL, 'v'},
    {"httpd", no_argument, NULL, 'D'},
    {"http-port", required_argument, NULL, CL_HTTP_PORT},
    {"http-ip-address", required_argument, NULL, CL_HTTP_IP},
    {"http-additional-cors-origins", required_argument, NULL, CL_HTTP_CORS},
    {"stdiod", no_argument, NULL, CL_STDIOD},
    {"interactive", no_argument, NULL, 'i'},
    {"full-sort", no_argument, NULL, CL_FULL_SORT},
    {"no-ftrace-raw", no_argument, NULL, CL_NO_FTRACE_RAW},
    {"query-file", required_argument, NULL, 'q'},
    {"query-string", required_argument, NULL, 'Q'},
    {"add-sql-package", required_argument, NULL, CL_ADD_SQL_PACKAGE},
    {"override-sql-package", required_argument, NULL, CL_OVERRIDE_SQL_PACKAGE},
    {"structured-query-spec", required_argument, NULL, CL_STRUCTURED_QUERY_SPEC},
    {"structured-query-id", required_argument, NULL, CL_STRUCTURED_QUERY_ID},
    {"summary", no_argument, NULL, CL_SUMMARY},
    {"summary-metrics-v2", required_argument, NULL, CL_SUMMARY_METRICS_V2},
    {"summary-metadata-query", required_argument, NULL, CL_SUMMARY_METADATA_QUERY},
    {"summary-spec", required_argument, NULL, CL_SUMMARY_SPEC},
    {"summary-format", required_argument, NULL, CL_SUMMARY_FORMAT},
    {"metatrace", required_argument, NULL, 'm'},
    {"metatrace-buffer-capacity", required_argument, NULL, CL_METATRACE_BUFFER_CAPACITY},
    {"metatrace-categories", required_argument, NULL, CL_METATRACE_CATEGORIES},
    {"dev", no_argument, NULL, CL_DEV},
    {"dev-flag", required_argument, NULL, CL_DEV_FLAG},
    {"extra-checks", no_argument, NULL, CL_EXTRA_CHECKS},
    {"export", required_argument, NULL, 'e'},
    {"perf-file", required_argument, NULL, 'p'},
    {"wide", no_argument, NULL, 'W'},
    {"analyze-trace-proto-content", no_argument, NULL, CL_ANALYZE_TRACE_PROTO_CONTENT},
    {"crop-track-events", no_argument, NULL, CL_CROP_TRACK_EVENTS},
    {"allow-sql-file-access", no_argument, NULL, CL_ALLOW_SQL_FILE_ACCESS},
    {"register-files-dir", required_argument, NULL, CL_REGISTER_FILES_DIR},
    {"override-stdlib", required_argument, NULL, CL_OVERRIDE_STDLIB},
    {"run-metrics", required_argument, NULL, CL_RUN_METRICS},
    {"pre-metrics", required_argument, NULL, CL_PRE_METRICS},
    {"metrics-output", required_argument, NULL, CL_METRICS_OUTPUT},
    {"metric-extension", required_argument, NULL, CL_METRIC_EXTENSION},
    {NULL, 0, NULL, 0},
};

/* Does the flag argument a (as written, "--name" or "-c") take a value? */
static bool flag_takes_value(const char *a)
{
	if (a[0] != '-' || !a[1])
		return false;
	if (a[1] != '-') {
		if (a[2])
			return false;
		const char *p = strchr(classic_short, a[1]);
		if (p && p[1] == ':')
			return true;
		for (int i = 0; i < SF_COUNT; i++)
			if (flags[i].short_name == a[1] && flags[i].arg)
				return true;
		return false;
	}
	for (const struct option *o = classic_long; o->name; o++)
		if (strcmp(o->name, a + 2) == 0 && o->has_arg == required_argument)
			return true;
	for (int i = 0; i < SF_COUNT; i++)
		if (strcmp(flags[i].name, a + 2) == 0 && flags[i].arg)
			return true;
	return false;
}

/* The index in argv of the command's name, or -1 (classic flags). As
 * Perfetto: the first argument that is neither a flag nor a flag's value,
 * if it names a command. */
static int find_command_arg(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-') {
			if (flag_takes_value(argv[i]))
				i++;
			continue;
		}
		return find_command(argv[i]) ? i : -1;
	}
	return -1;
}

/* Parse the classic flags into o and pick the command they amount to.
 * Returns the command, or NULL with *status the exit status (after help,
 * version or an error). */
static const struct shell_cmd *parse_classic(int argc, char **argv, struct shell_opts *o,
                                             int *status)
{
	bool httpd = false, stdiod = false, summary = false;
	const char *export_file = NULL, *query_string = NULL, *run_metrics = NULL;
	const char *sq_spec = NULL;
	int c;
	*status = 1;
	optind = 0;
	opterr = 1;
	while ((c = getopt_long(argc, argv, classic_short, classic_long, NULL)) != -1) {
		switch (c) {
		case 'h':
			print_overview(stdout, PROG);
			*status = 0;
			return NULL;
		case CL_HELP_CLASSIC:
			print_classic_usage(stdout, PROG);
			*status = 0;
			return NULL;
		case 'v':
			print_version();
			*status = 0;
			return NULL;
		case 'D':
			httpd = true;
			break;
		case CL_HTTP_PORT:
			o->port = optarg;
			break;
		case CL_HTTP_IP:
			o->ip = optarg;
			break;
		case CL_HTTP_CORS:
			o->cors = optarg;
			break;
		case CL_STDIOD:
			stdiod = true;
			break;
		case 'i':
			o->interactive = true;
			break;
		case CL_FULL_SORT:
			o->full_sort = true;
			break;
		case CL_NO_FTRACE_RAW:
			o->no_ftrace_raw = true;
			break;
		case 'q':
			o->query_file = optarg;
			break;
		case 'Q':
			query_string = optarg;
			break;
		case CL_ADD_SQL_PACKAGE:
			vec_push(&o->add_packages, optarg);
			break;
		case CL_OVERRIDE_SQL_PACKAGE:
			vec_push(&o->override_packages, optarg);
			break;
		case CL_STRUCTURED_QUERY_SPEC:
			sq_spec = optarg;
			break;
		case CL_STRUCTURED_QUERY_ID:
			o->structured_query_id = optarg;
			break;
		case CL_SUMMARY:
			summary = true;
			break;
		case CL_SUMMARY_METRICS_V2:
			o->metrics_v2 = optarg;
			break;
		case CL_SUMMARY_METADATA_QUERY:
			o->metadata_query = optarg;
			break;
		case CL_SUMMARY_SPEC:
			vec_push(&o->summary_specs, optarg);
			break;
		case CL_SUMMARY_FORMAT:
			o->format = optarg;
			break;
		case 'm':
			o->metatrace = optarg;
			break;
		case CL_METATRACE_BUFFER_CAPACITY:
			if (apply_flag(o, SF_METATRACE_BUFFER_CAPACITY, optarg) < 0)
				return NULL;
			break;
		case CL_METATRACE_CATEGORIES:
			o->metatrace_categories = optarg;
			break;
		case CL_DEV:
			o->dev = true;
			break;
		case CL_DEV_FLAG:
			vec_push(&o->dev_flags, optarg);
			break;
		case CL_EXTRA_CHECKS:
			o->extra_checks = true;
			break;
		case 'e':
			export_file = optarg;
			break;
		case 'p':
			o->perf_file = optarg;
			break;
		case 'W':
			o->wide = true;
			break;
		case CL_ANALYZE_TRACE_PROTO_CONTENT:
			o->analyze_trace_proto_content = true;
			break;
		case CL_CROP_TRACK_EVENTS:
			o->crop_track_events = true;
			break;
		case CL_ALLOW_SQL_FILE_ACCESS:
			o->allow_sql_file_access = true;
			break;
		case CL_REGISTER_FILES_DIR:
			o->register_files_dir = optarg;
			break;
		case CL_OVERRIDE_STDLIB:
			o->override_stdlib = optarg;
			break;
		case CL_RUN_METRICS:
			run_metrics = optarg;
			break;
		case CL_PRE_METRICS:
			o->pre = optarg;
			break;
		case CL_METRICS_OUTPUT:
			o->metrics_output = optarg;
			break;
		case CL_METRIC_EXTENSION:
			vec_push(&o->metric_extensions, optarg);
			break;
		default:
			print_classic_usage(stderr, PROG);
			return NULL;
		}
	}
	if (sq_spec)
		vec_push(&o->summary_specs, sq_spec);
	bool queries = o->query_file || query_string;
	bool shell = o->interactive || (!run_metrics && !queries && !export_file && !summary);
	if (o->perf_file && shell) {
		print_classic_usage(stderr, PROG);
		return NULL;
	}
	if (summary && run_metrics) {
		tp_shell_error("Cannot specify both metrics v1 and trace summarization");
		return NULL;
	}
	const char *trace = NULL;
	if (optind == argc - 1)
		trace = argv[optind];
	else if (!httpd && !stdiod) {
		print_classic_usage(stderr, PROG);
		return NULL;
	}
	const struct shell_cmd *cmd;
	if (httpd || stdiod) {
		cmd = find_command("server");
		vec_push(&o->pos, httpd ? "http" : "stdio");
	} else if (summary) {
		cmd = find_command("summarize");
		o->post_query = o->query_file;
	} else if (run_metrics) {
		cmd = find_command("metrics");
		o->run = run_metrics;
		o->post_query = o->query_file;
	} else if (export_file) {
		if (o->query_file) {
			tp_shell_error(
			    "Cannot combine -e (export) with -q (query). Use the 'export' "
			    "subcommand directly.");
			return NULL;
		}
		cmd = find_command("export");
		o->output = export_file;
		vec_push(&o->pos, "sqlite");
	} else if (queries || o->structured_query_id) {
		cmd = find_command("query");
	} else {
		cmd = find_command("interactive");
	}
	if (trace)
		vec_push(&o->pos, trace);
	if (query_string && cmd == find_command("query"))
		vec_push(&o->pos, query_string);
	for (size_t i = 0; i < o->summary_specs.len && cmd == find_command("summarize"); i++)
		vec_push(&o->pos, o->summary_specs.data[i]);
	*status = 0;
	return cmd;
}

/* ---- the entry point ----------------------------------------------------------- */

int trace_processor_shell_main(int argc, char **argv)
{
	struct shell_opts o = {.argv0 = PROG};
	const struct shell_cmd *cmd = NULL;
	char **args = tb_calloc((size_t)argc + 1, sizeof *args);
	int status = 1;

	/* `help` and `help COMMAND`. */
	for (int i = 1; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		if (strcmp(argv[i], "help") == 0) {
			if (i + 1 >= argc) {
				print_overview(stdout, PROG);
				status = 0;
			} else if ((cmd = find_command(argv[i + 1]))) {
				print_command_usage(stdout, PROG, cmd);
				status = 0;
			} else {
				tp_shell_error("Unknown command '%s'.", argv[i + 1]);
			}
			goto out;
		}
		break;
	}

	int at = find_command_arg(argc, argv);
	if (at > 0) {
		cmd = find_command(argv[at]);
		struct stat st;
		if (stat(argv[at], &st) == 0)
			fprintf(stderr,
			        PROG ": note: '%s' is both a command and a file here; taken as the "
			             "command (write './%s' for the file)\n",
			        argv[at], argv[at]);
		int n = 0;
		for (int i = 0; i < argc; i++)
			if (i != at)
				args[n++] = argv[i];
		if (parse_command(cmd, n, args, &o) < 0)
			goto out;
		if (o.help) {
			print_command_usage(stdout, PROG, cmd);
			status = 0;
			goto out;
		}
		if (o.version) {
			print_version();
			status = 0;
			goto out;
		}
	} else if (argc <= 1) {
		print_overview(stdout, PROG);
		status = 0;
		goto out;
	} else {
		memcpy(args, argv, (size_t)argc * sizeof *args);
		cmd = parse_classic(argc, args, &o, &status);
		if (!cmd)
			goto out;
	}
	if (o.metric_extensions.len && cmd != find_command("metrics")) {
		tp_shell_error("--metric-extension: v1 metrics are not implemented in tracebox");
		goto out;
	}
	if (tp_shell_metatrace_start(&o) < 0)
		goto out;
	status = cmd->run(&o);
	if (tp_shell_metatrace_write() < 0)
		status = 1;
out:
	fflush(stdout);
	tp_shell_opts_release(&o);
	tb_free(args);
	return status;
}

/* ---- the trace processor config ---------------------------------------------- */

/* --register-files-dir: Perfetto hands every file under PATH to its
 * importers (ETM decoding reads them). No importer of ours reads such
 * files, so they are only checked to be there and readable, as Perfetto
 * maps each; a trace loads the same with or without them. */
static int check_files_dir(const char *root, const char *rel, int depth)
{
	char path[4096];
	snprintf(path, sizeof path, "%s%s%s", root, *rel ? "/" : "", rel);
	struct stat st;
	if (stat(path, &st) != 0) {
		tp_shell_error("--register-files-dir: cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			tp_shell_error("--register-files-dir: cannot read '%s': %s", path,
			               strerror(errno));
			return -1;
		}
		close(fd);
		return 0;
	}
	if (depth > 32) {
		tp_shell_error("--register-files-dir: '%s' is nested too deeply", path);
		return -1;
	}
	DIR *d = opendir(path);
	if (!d) {
		tp_shell_error("--register-files-dir: cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	int rc = 0;
	for (struct dirent *e; rc == 0 && (e = readdir(d));) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		rc = check_files_dir(root, sub, depth + 1);
	}
	closedir(d);
	return rc;
}

/* --dev-flag KEY=VALUE: the keys Perfetto's trace processor reads are
 * benchmarking switches of its sorter and ftrace parser, which ours does
 * not have; they are accepted (with --dev) and said to be unused. */
static int check_dev_flags(const struct shell_opts *o)
{
	for (size_t i = 0; i < o->dev_flags.len; i++) {
		const char *f = o->dev_flags.data[i];
		const char *eq = strchr(f, '=');
		if (!eq || strchr(eq + 1, '=')) {
			tp_shell_error("Ignoring unknown dev flag format %s", f);
			continue;
		}
		if (!o->dev)
			continue; /* without --dev, dev flags do nothing (as Perfetto) */
		if (strncmp(f, "extra_parsing_descriptors=", 26) == 0) {
			/* Perfetto reads each file (';'-separated) and fails on a
			 * missing one; the descriptors describe protos of its
			 * descriptor-driven importers, which we do not have. */
			char *list = tb_strdup(eq + 1), *save = list;
			for (char *p = list; p && *p;) {
				char *semi = strchr(p, ';');
				if (semi)
					*semi = '\0';
				struct stat st;
				if (*p && stat(p, &st) != 0) {
					tp_shell_error("File %s does not exist", p);
					tb_free(save);
					return -1;
				}
				p = semi ? semi + 1 : NULL;
			}
			tb_free(save);
		}
		tp_shell_error("--dev-flag %.*s: not used by tracebox's trace processor",
		               (int)(eq - f), f);
	}
	return 0;
}

int tp_shell_config_build(const struct shell_opts *o, struct shell_config *sc)
{
	memset(sc, 0, sizeof *sc);
	sc->cfg = (struct tp_config){
	    .full_sort = o->full_sort || o->convert_full_sort,
	    .crop_track_events = o->crop_track_events,
	    .no_ftrace_raw = o->no_ftrace_raw,
	    .analyze_trace_proto_content = o->analyze_trace_proto_content,
	    .allow_sql_file_access = o->allow_sql_file_access,
	    .dev = o->dev,
	    .extra_checks = o->extra_checks,
	};
	if (check_dev_flags(o) < 0)
		return -1;
	if (o->register_files_dir && check_files_dir(o->register_files_dir, "", 0) < 0)
		return -1;
	char err[1024];
	if (o->override_stdlib) {
		if (!o->dev) {
			tp_shell_error("Overriding stdlib requires --dev flag");
			return -1;
		}
		if (tp_shell_stdlib_load(o->override_stdlib, &sc->pkgs, &sc->npkgs, err,
		                         sizeof err) < 0) {
			tp_shell_error("Couldn't override stdlib: %s", err);
			return -1;
		}
	}
	/* As Perfetto's shell applies them: the stdlib override, the package
	 * overrides, then the others. Each is registered on a scratch trace
	 * processor to report the first failure with its flag. */
	size_t nstd = sc->npkgs;
	size_t total = nstd + o->override_packages.len + o->add_packages.len;
	sc->pkgs = tb_realloc(sc->pkgs, (total ? total : 1) * sizeof *sc->pkgs);
	struct tp *probe = total ? tp_new(NULL) : NULL;
	int rc = 0;
	for (size_t i = 0; i < nstd && rc == 0; i++) {
		if (tp_register_sql_package(probe, &sc->pkgs[i].pkg, err, sizeof err) < 0) {
			tp_shell_error("Couldn't override stdlib: %s", err);
			rc = -1;
		}
	}
	for (size_t i = nstd; i < total && rc == 0; i++) {
		bool override = i - nstd < o->override_packages.len;
		const char *arg = override
		                      ? o->override_packages.data[i - nstd]
		                      : o->add_packages.data[i - nstd - o->override_packages.len];
		if (tp_shell_package_load(&sc->pkgs[i], arg, override, err, sizeof err) < 0) {
			tp_shell_error("%s: %s",
			               override ? "Couldn't override stdlib package"
			                        : "Couldn't add SQL package",
			               err);
			rc = -1;
			break;
		}
		sc->npkgs = i + 1;
		if (tp_register_sql_package(probe, &sc->pkgs[i].pkg, err, sizeof err) < 0) {
			tp_shell_error("%s: %s",
			               override ? "Couldn't override stdlib package"
			                        : "Couldn't add SQL package",
			               err);
			rc = -1;
		}
	}
	tp_free(probe);
	sc->list = tb_calloc(sc->npkgs ? sc->npkgs : 1, sizeof *sc->list);
	for (size_t i = 0; i < sc->npkgs; i++)
		sc->list[i] = sc->pkgs[i].pkg;
	sc->cfg.packages = sc->list;
	sc->cfg.npackages = sc->npkgs;
	return rc;
}

void tp_shell_config_release(struct shell_config *sc)
{
	for (size_t i = 0; i < sc->npkgs; i++)
		tp_shell_package_release(&sc->pkgs[i]);
	tb_free(sc->pkgs);
	tb_free(sc->list);
	memset(sc, 0, sizeof *sc);
}

/* ---- loading a trace --------------------------------------------------------- */

/* Feeds a trace to tp from any source, with progress on a terminal. */
struct loader {
	struct tp *tp;
	bool tty;
	int64_t start, last_progress;
	uint64_t total;
	bool parse_failed; /* tp_parse refused the input (tp_error says why) */
};

static int loader_feed(void *ctx, const uint8_t *p, size_t n)
{
	struct loader *l = ctx;
	l->total += n;
	if (tp_parse(l->tp, p, n) < 0) {
		l->parse_failed = true;
		return -1;
	}
	int64_t t = tp_shell_now_ns();
	if (l->tty && t - l->last_progress > 250000000) {
		fprintf(stderr, "\rLoading trace: %.2f MB (%.1f MB/s)", (double)l->total / 1e6,
		        (double)l->total / 1e6 / ((double)(t - l->start) / 1e9));
		l->last_progress = t;
	}
	return 0;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; not in musl's headers yet */
#endif

/* A regular perf.data or trace.dat file (their importers need all of it at
 * once) mapped whole and given to tp_parse_file, which reads it in place
 * instead of copying it; *map (*map_len bytes) is unmapped by the caller
 * after tp_end_of_file. 1: not such a file, nothing done. */
static int load_whole(struct loader *l, int fd, void **map, size_t *map_len)
{
	struct stat st;
	uint8_t head[10];
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 16 ||
	    (uint64_t)st.st_size > SIZE_MAX || lseek(fd, 0, SEEK_CUR) != 0 ||
	    pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head ||
	    (memcmp(head, "PERFILE2", 8) != 0 && memcmp(head, "\x17\x08\x44tracing", 10) != 0))
		return 1;
	size_t n = (size_t)st.st_size;
	void *m = mmap(NULL, n, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return 1;
	(void)madvise(m, n, MADV_POPULATE_READ); /* one call, not a fault a page */
	*map = m;
	*map_len = n;
	l->total += n;
	if (tp_parse_file(l->tp, m, n) < 0) {
		l->parse_failed = true;
		return -1;
	}
	return 0;
}

/* A regular file is mapped, not copied (tb_feed_fd), unless
 * TRACE_PROCESSOR_NO_MMAP=1 (Perfetto's switch); stdin, pipes and gzip'd
 * files go through the same tp_parse either way. */
static int load_fd(struct loader *l, int fd, const char *path, void **whole, size_t *whole_len)
{
	const char *no_mmap = getenv("TRACE_PROCESSOR_NO_MMAP");
	bool map = !no_mmap || strcmp(no_mmap, "1") != 0;
	if (map) {
		int w = load_whole(l, fd, whole, whole_len);
		if (w <= 0)
			return w;
	}
	int rc = tb_feed_fd(fd, READ_CHUNK, map, loader_feed, l);
	if (rc < 0 && !l->parse_failed)
		tp_shell_error("cannot read '%s': %s", path, strerror(-rc));
	return rc < 0 ? -1 : 0;
}

/* As Perfetto's shell: with PERFETTO_BINARY_PATH set, unsymbolized frames
 * of a proto trace (or a perf.data file) are symbolized once it is loaded (symbolize/README.md)
 * and the symbols applied as if appended to the trace. */
static void symbolize_at_load(struct tp *tp)
{
	const char *paths = getenv("PERFETTO_BINARY_PATH");
	const char *mode = getenv("PERFETTO_SYMBOLIZER_MODE");
	struct tp_symbolize_opts o = {.binary_path = paths,
	                              .find_mode = mode && strcmp(mode, "find") == 0};
	struct tp_symbolize_result res;
	if (!paths || !*paths)
		return;
	if (strcmp(tp_trace_type(tp), "proto") != 0 && strcmp(tp_trace_type(tp), "perf") != 0) {
		tp_shell_error("skipping symbolization for non-proto trace");
		return;
	}
	if (tp_symbolize(tp, &o, &res) < 0)
		return;
	tp_symbolize_apply(tp, res.packets, res.len);
	if (res.frames_failed)
		tp_shell_error("%u frames from %u mappings could not be symbolized",
		               res.frames_failed, res.mappings_failed);
	tp_symbolize_result_release(&res);
}

/* One section of the trace health summary: the stats rows of where. */
static void print_stats_section(struct tp *tp, const char *title, const char *where)
{
	char sql[512];
	snprintf(sql, sizeof sql,
	         "select name, idx, value, description from stats where %s and value > 0 "
	         "order by name, idx",
	         where);
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(tp_db(tp), sql, -1, &st, NULL) != SQLITE_OK)
		return;
	bool first = true;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (first)
			fprintf(stderr, "  %s\n", title);
		first = false;
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *desc = (const char *)sqlite3_column_text(st, 3);
		if (sqlite3_column_type(st, 1) == SQLITE_NULL)
			fprintf(stderr, "    %s: %lld", name,
			        (long long)sqlite3_column_int64(st, 2));
		else
			fprintf(stderr, "    %s[%lld]: %lld", name,
			        (long long)sqlite3_column_int64(st, 1),
			        (long long)sqlite3_column_int64(st, 2));
		if (desc && *desc)
			fprintf(stderr, " | %s", desc);
		fputc('\n', stderr);
	}
	if (!first)
		fputc('\n', stderr);
	sqlite3_finalize(st);
}

/* As Perfetto's shell after a load: the stats that are errors or data
 * losses, if any. */
static void print_health(struct tp *tp)
{
	sqlite3_stmt *st = NULL;
	bool any = false;
	if (sqlite3_prepare_v2(tp_db(tp),
	                       "select 1 from stats where severity in ('error', 'data_loss') "
	                       "and value > 0 limit 1",
	                       -1, &st, NULL) == SQLITE_OK)
		any = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (!any)
		return;
	fputs("\nTrace health issues:\n\n", stderr);
	print_stats_section(tp, "Trace errors", "severity = 'error' and source = 'trace'");
	print_stats_section(tp, "Import errors", "severity = 'error' and source = 'analysis'");
	print_stats_section(tp, "Data losses", "severity = 'data_loss'");
}

struct tp *tp_shell_load(const struct shell_opts *o, const struct shell_config *sc,
                         const char *path, int64_t *load_ns)
{
	struct tp *tp = tp_new(&sc->cfg);
	if (tp_error(tp)[0]) {
		tp_shell_error("%s", tp_error(tp));
		tp_free(tp);
		return NULL;
	}
	if (tp_shell_load_into(o, tp, path, load_ns) < 0) {
		tp_free(tp);
		return NULL;
	}
	return tp;
}

int tp_shell_load_into(const struct shell_opts *o, struct tp *tp, const char *path,
                       int64_t *load_ns)
{
	(void)o;
	struct loader l = {.tp = tp, .tty = isatty(2)};
	struct tb_err err = {0};
	void *whole = NULL; /* a file mapped whole by load_whole */
	size_t whole_len = 0;
	l.start = l.last_progress = tp_shell_now_ns();
	int rc;
	if (http_is_url(path)) {
		/* Streamed without a local copy; tp_parse errors surface via tp_error. */
		rc = http_get(path, NULL, loader_feed, &l, &err) < 0 ? -1 : 0;
	} else {
		int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			tp_shell_error("cannot open '%s': %s", path, strerror(errno));
			return -1;
		}
		rc = load_fd(&l, fd, path, &whole, &whole_len);
		if (fd != 0)
			close(fd);
	}
	if (l.tty && l.last_progress != l.start)
		fputc('\n', stderr);
	if (tb_err_is_set(&err))
		tp_shell_error("%s", err.msg);
	if (rc == 0 && tp_end_of_file(tp) < 0)
		rc = -1;
	if (whole)
		munmap(whole, whole_len);
	if (rc < 0) {
		if (tp_error(tp)[0])
			tp_shell_error("cannot load '%s': %s", path, tp_error(tp));
		return -1;
	}
	symbolize_at_load(tp);
	int64_t ns = tp_shell_now_ns() - l.start;
	double secs = (double)ns / 1e9;
	fprintf(stderr, "Trace loaded: %.2f MB in %.2fs (%.1f MB/s)\n", (double)l.total / 1e6, secs,
	        secs > 0 ? (double)l.total / 1e6 / secs : 0.0);
	tp_shell_metatrace_slice("API_TIMELINE", "LOAD_TRACE", l.start, l.start + ns, NULL);
	print_health(tp);
	if (load_ns)
		*load_ns = ns;
	return 0;
}
