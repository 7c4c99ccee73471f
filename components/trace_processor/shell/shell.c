/*
 * trace_processor_shell: the command line over the trace processor library,
 * with Perfetto's flags and output formats (compat §5.3).
 *
 *   trace_processor_shell query TRACE "SQL"      query -f FILE TRACE     SQL on stdin
 *   trace_processor_shell -q FILE | -Q SQL TRACE    (classic flags)
 *   trace_processor_shell [-i] TRACE              interactive shell
 *   trace_processor_shell server http|stdio [TRACE]   -D / --stdiod (rpc/)
 *
 * Query results print as Perfetto's CSV: quoted header names, quoted
 * strings, decimal integers, doubles with %f, NULL as "[NULL]", one blank
 * line between result sets.
 */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "version.h"
#include "../io/io.h"
#include "../rpc/rpc.h"
#include "../tp_int.h"
#include "sqlite3.h"

#define READ_CHUNK (1u << 20)

struct opts {
	const char *trace;
	const char *query_file;   /* -q / query -f */
	const char *query_string; /* -Q / query "SQL" */
	bool interactive, wide, full_sort, crop_track_events, query_mode;
	enum { SERVE_NONE, SERVE_HTTP, SERVE_STDIO } serve;
	struct tp_httpd_opts http;
	/* --add-sql-package / --override-sql-package arguments, in order */
	VEC(const char *) add_packages;
	VEC(const char *) override_packages;
};

static void usage(FILE *out, const char *argv0)
{
	fprintf(out,
		"Usage: %s [FLAGS] TRACE\n"
		"       %s query [-f FILE] TRACE [SQL]   (SQL from FILE, the argument or stdin)\n"
		"       %s interactive TRACE\n"
		"       %s server http [--port PORT] [--ip-address IP]\n"
		"                 [--additional-cors-origins O1,O2] [TRACE]   Perfetto UI accelerator\n"
		"       %s server stdio [TRACE]          the RPC on stdin/stdout\n"
		"\n"
		"TRACE is a Perfetto protobuf or JSON trace, gzip'd or not, - for stdin, or an\n"
		"http:// or https:// URL (streamed; SSL_CERT_FILE names the CA bundle).\n"
		"\n"
		"Flags:\n"
		"  -q, --query-file FILE    run the SQL in FILE and print the results as CSV\n"
		"  -Q, --query-string SQL   run SQL and print the results as CSV\n"
		"  -i, --interactive        interactive shell (also the default without -q/-Q)\n"
		"  -W, --wide               wider columns in the interactive shell\n"
		"      --full-sort          sort every event before parsing any (default: stream\n"
		"                           with a window that holds back what can still\n"
		"                           come out of order)\n"
		"      --crop-track-events  ignore track events before the range of interest\n"
		"      --add-sql-package PATH[@PKG]  the .sql files under PATH as package PKG\n"
		"                           (default: the directory's name): a/b.sql is the module\n"
		"                           PKG.a.b for INCLUDE PERFETTO MODULE\n"
		"      --override-sql-package PATH[@PKG]  the same, replacing a package of that name\n"
		"  -D, --httpd              serve the Perfetto UI over HTTP (as server http)\n"
		"      --http-port PORT     port for -D (default 9001)\n"
		"      --http-ip-address IP address for -D (default localhost: 127.0.0.1 and ::1)\n"
		"      --http-additional-cors-origins O1,O2  origins allowed besides ui.perfetto.dev\n"
		"      --stdiod             serve the RPC on stdin/stdout (as server stdio)\n"
		"  -v, --version            print the version\n"
		"  -h, --help               this text\n",
		argv0, argv0, argv0, argv0, argv0);
}

/* ---- loading ------------------------------------------------------------ */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Feeds a trace to tp from any source, with progress on a terminal. */
struct loader {
	struct tp *tp;
	bool tty;
	double start, last_progress;
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
	double t = now_s();
	if (l->tty && t - l->last_progress > 0.25) {
		fprintf(stderr, "\rLoading trace: %.2f MB (%.1f MB/s)", (double)l->total / 1e6,
			(double)l->total / 1e6 / (t - l->start));
		l->last_progress = t;
	}
	return 0;
}

/* A regular file is mapped, not copied (tb_feed_fd), unless
 * TRACE_PROCESSOR_NO_MMAP=1 (Perfetto's switch); stdin, pipes and gzip'd
 * files go through the same tp_parse either way. */
static int load_fd(struct loader *l, int fd, const char *path)
{
	const char *no_mmap = getenv("TRACE_PROCESSOR_NO_MMAP");
	bool map = !no_mmap || strcmp(no_mmap, "1") != 0;
	int rc = tb_feed_fd(fd, READ_CHUNK, map, loader_feed, l);
	if (rc < 0 && !l->parse_failed)
		fprintf(stderr, "trace_processor_shell: cannot read '%s': %s\n", path, strerror(-rc));
	return rc < 0 ? -1 : 0;
}

/* As Perfetto's shell: with PERFETTO_BINARY_PATH set, unsymbolized frames
 * of a proto trace are symbolized once it is loaded (symbolize/README.md)
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
	if (strcmp(tp_trace_type(tp), "proto") != 0) {
		fprintf(stderr, "trace_processor_shell: skipping symbolization for non-proto trace\n");
		return;
	}
	if (tp_symbolize(tp, &o, &res) < 0)
		return;
	tp_symbolize_apply(tp, res.packets, res.len);
	if (res.frames_failed)
		fprintf(stderr,
			"trace_processor_shell: %u frames from %u mappings could not be symbolized\n",
			res.frames_failed, res.mappings_failed);
	tp_symbolize_result_release(&res);
}

static int load_trace(struct tp *tp, const char *path)
{
	struct loader l = {.tp = tp, .tty = isatty(2)};
	struct tb_err err = {0};
	l.start = l.last_progress = now_s();
	int rc;
	if (http_is_url(path)) {
		/* Streamed without a local copy; tp_parse errors surface via tp_error. */
		rc = http_get(path, NULL, loader_feed, &l, &err) < 0 ? -1 : 0;
	} else {
		int fd = strcmp(path, "-") == 0 ? 0 : open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "trace_processor_shell: cannot open '%s': %s\n", path,
				strerror(errno));
			return -1;
		}
		rc = load_fd(&l, fd, path);
		if (fd != 0)
			close(fd);
	}
	if (l.tty && l.last_progress != l.start)
		fputc('\n', stderr);
	if (tb_err_is_set(&err))
		fprintf(stderr, "trace_processor_shell: %s\n", err.msg);
	if (rc == 0 && tp_end_of_file(tp) < 0)
		rc = -1;
	if (rc < 0 && tp_error(tp)[0]) {
		fprintf(stderr, "trace_processor_shell: cannot load '%s': %s\n", path, tp_error(tp));
		return -1;
	}
	if (rc < 0)
		return -1;
	symbolize_at_load(tp);
	double secs = now_s() - l.start;
	fprintf(stderr, "Trace loaded: %.2f MB in %.2fs (%.1f MB/s)\n", (double)l.total / 1e6, secs,
		secs > 0 ? (double)l.total / 1e6 / secs : 0.0);
	return 0;
}

/* ---- CSV output (query mode) --------------------------------------------- */

static void print_csv_value(FILE *out, sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		fprintf(out, "%f", sqlite3_column_double(st, i));
		break;
	case SQLITE_TEXT:
		fprintf(out, "\"%s\"", (const char *)sqlite3_column_text(st, i));
		break;
	case SQLITE_BLOB:
		fputs("\"<raw bytes>\"", out);
		break;
	default:
		fputs("\"[NULL]\"", out);
	}
}

/* Run every statement of sql, printing each result set. Returns 0, or -1
 * after printing the error and the failing statement. */
static int run_queries_csv(struct tp *tp, const char *sql, FILE *out)
{
	sqlite3 *db = tp_db(tp);
	const char *tail = sql;
	bool printed_any = false;
	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		const char *start = tail;
		char err[1024];
		if (tp_prepare(tp, tail, &st, &tail, err, sizeof err) != SQLITE_OK) {
			fprintf(stderr, "Error in statement: %.*s\n%s\n", (int)strcspn(start, ";"), start,
				err);
			return -1;
		}
		if (!st)
			continue; /* whitespace or a comment */
		int ncol = sqlite3_column_count(st);
		bool suppress = ncol == 1 && strcmp(sqlite3_column_name(st, 0), "suppress_query_output") == 0;
		bool print = ncol > 0 && !suppress;
		if (print) {
			if (printed_any)
				fputc('\n', out);
			for (int i = 0; i < ncol; i++)
				fprintf(out, "%s\"%s\"", i ? "," : "", sqlite3_column_name(st, i));
			fputc('\n', out);
			printed_any = true;
		}
		int rc;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			if (!print)
				continue;
			for (int i = 0; i < ncol; i++) {
				if (i)
					fputc(',', out);
				print_csv_value(out, st, i);
			}
			fputc('\n', out);
		}
		if (rc != SQLITE_DONE) {
			fprintf(stderr, "Error in statement: %s\n%s\n", sqlite3_sql(st), sqlite3_errmsg(db));
			sqlite3_finalize(st);
			return -1;
		}
		sqlite3_finalize(st);
	}
	return 0;
}

/* ---- reading SQL ------------------------------------------------------------ */

static char *read_stream(FILE *f)
{
	size_t cap = 4096, len = 0;
	char *s = tb_malloc(cap);
	size_t n;
	while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len - 1 == 0)
			s = tb_realloc(s, cap *= 2);
	}
	s[len] = '\0';
	return s;
}

static char *read_sql_file(const char *path)
{
	if (strcmp(path, "-") == 0)
		return read_stream(stdin);
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "trace_processor_shell: cannot open '%s': %s\n", path, strerror(errno));
		return NULL;
	}
	char *s = read_stream(f);
	fclose(f);
	return s;
}

/* ---- argument parsing ---------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum {
		OPT_FULL_SORT = 256,
		OPT_VERSION,
		OPT_CROP_TRACK_EVENTS,
		OPT_PORT,
		OPT_IP,
		OPT_CORS,
		OPT_STDIOD,
		OPT_ADD_SQL_PACKAGE,
		OPT_OVERRIDE_SQL_PACKAGE,
	};
	static const struct option longopts[] = {
		{"query-file", required_argument, NULL, 'q'},
		{"query-string", required_argument, NULL, 'Q'},
		{"interactive", no_argument, NULL, 'i'},
		{"wide", no_argument, NULL, 'W'},
		{"full-sort", no_argument, NULL, OPT_FULL_SORT},
		{"crop-track-events", no_argument, NULL, OPT_CROP_TRACK_EVENTS},
		{"httpd", no_argument, NULL, 'D'},
		{"http-port", required_argument, NULL, OPT_PORT},
		{"http-ip-address", required_argument, NULL, OPT_IP},
		{"http-additional-cors-origins", required_argument, NULL, OPT_CORS},
		{"port", required_argument, NULL, OPT_PORT},
		{"ip-address", required_argument, NULL, OPT_IP},
		{"additional-cors-origins", required_argument, NULL, OPT_CORS},
		{"stdiod", no_argument, NULL, OPT_STDIOD},
		{"add-sql-package", required_argument, NULL, OPT_ADD_SQL_PACKAGE},
		{"override-sql-package", required_argument, NULL, OPT_OVERRIDE_SQL_PACKAGE},
		{"version", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;
	/* Subcommands: `query` and `interactive` take the trace positionally. */
	if (argc > 1 && (strcmp(argv[1], "query") == 0 || strcmp(argv[1], "interactive") == 0)) {
		o->query_mode = strcmp(argv[1], "query") == 0;
		o->interactive = !o->query_mode;
		argv++;
		argc--;
	} else if (argc > 1 && strcmp(argv[1], "server") == 0) {
		const char *mode = argc > 2 ? argv[2] : "";
		if (strcmp(mode, "http") == 0) {
			o->serve = SERVE_HTTP;
		} else if (strcmp(mode, "stdio") == 0) {
			o->serve = SERVE_STDIO;
		} else {
			fprintf(stderr, "trace_processor_shell: server: %s mode '%s' (expected http or stdio)\n",
				*mode ? "unsupported" : "missing", mode);
			return -1;
		}
		argv += 2;
		argc -= 2;
	}
	optind = 1;
	/* server takes flags after the trace too, as Perfetto's. */
	const char *optstring = o->serve != SERVE_NONE ? "q:Q:f:iWvhD" : "+q:Q:f:iWvhD";
	while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
		case 'f':
			o->query_file = optarg;
			break;
		case 'Q':
			o->query_string = optarg;
			break;
		case 'i':
			o->interactive = true;
			break;
		case 'W':
			o->wide = true;
			break;
		case OPT_FULL_SORT:
			o->full_sort = true;
			break;
		case OPT_CROP_TRACK_EVENTS:
			o->crop_track_events = true;
			break;
		case 'D':
			o->serve = SERVE_HTTP;
			break;
		case OPT_STDIOD:
			o->serve = SERVE_STDIO;
			break;
		case OPT_PORT:
			o->http.port = optarg;
			break;
		case OPT_IP:
			o->http.ip = optarg;
			break;
		case OPT_CORS:
			o->http.additional_cors_origins = optarg;
			break;
		case OPT_ADD_SQL_PACKAGE:
			vec_push(&o->add_packages, optarg);
			break;
		case OPT_OVERRIDE_SQL_PACKAGE:
			vec_push(&o->override_packages, optarg);
			break;
		case 'v':
			printf("tracebox %s (%s)\nTrace Processor RPC API version: %d\n", TB_VERSION,
			       TB_REVISION, TP_RPC_API_VERSION);
			return 1;
		case 'h':
			usage(stdout, "trace_processor_shell");
			return 1;
		default:
			usage(stderr, "trace_processor_shell");
			return -1;
		}
	}
	if (optind < argc)
		o->trace = argv[optind++];
	if (o->query_mode && optind < argc && !o->query_string && !o->query_file)
		o->query_string = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "trace_processor_shell: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	if (!o->trace && o->serve == SERVE_NONE) {
		fprintf(stderr, "trace_processor_shell: no trace file given (see --help)\n");
		return -1;
	}
	return 0;
}

/* server http / -D, server stdio / --stdiod: load TRACE if given, then
 * serve the RPC (rpc/). */
static int serve(const struct opts *o, const struct tp_config *cfg)
{
	struct tp *tp = NULL;
	if (o->trace) {
		tp = tp_new(cfg);
		if (load_trace(tp, o->trace) < 0) {
			tp_free(tp);
			return 1;
		}
	}
	struct tp_rpc *rpc = tp_rpc_new(cfg, tp, o->trace);
	int status = o->serve == SERVE_HTTP ? tp_httpd_run(rpc, &o->http) : tp_stdiod_run(rpc);
	tp_rpc_free(rpc);
	return status;
}

/* The SQL packages of the flags, as Perfetto's shell applies them: the
 * overrides first, then the others. Each is registered on a scratch trace
 * processor to report the first failure with its flag; the caller passes
 * the list on in struct tp_config. Returns 0, or -1 after printing. */
static int load_packages(const struct opts *o, struct tp_shell_package **out, size_t *n)
{
	size_t total = o->override_packages.len + o->add_packages.len;
	struct tp_shell_package *sps = tb_calloc(total ? total : 1, sizeof *sps);
	struct tp *probe = total ? tp_new(NULL) : NULL;
	char err[1024];
	size_t i = 0;
	int rc = 0;
	for (; i < total && rc == 0; i++) {
		bool override = i < o->override_packages.len;
		const char *arg = override ? o->override_packages.data[i]
					   : o->add_packages.data[i - o->override_packages.len];
		if (tp_shell_package_load(&sps[i], arg, override, err, sizeof err) < 0 ||
		    tp_register_sql_package(probe, &sps[i].pkg, err, sizeof err) < 0) {
			fprintf(stderr, "trace_processor_shell: %s: %s\n",
				override ? "Couldn't override stdlib package" : "Couldn't add SQL package",
				err);
			rc = -1;
		}
	}
	tp_free(probe);
	if (rc < 0) {
		while (i-- > 0)
			tp_shell_package_release(&sps[i]);
		tb_free(sps);
		sps = NULL;
		total = 0;
	}
	*out = sps;
	*n = total;
	return rc;
}

int trace_processor_shell_main(int argc, char **argv)
{
	struct opts o = {0};
	struct tp_shell_package *sps = NULL;
	size_t nsps = 0;
	struct tp_sql_package *pkgs = NULL;
	int rc = parse_args(argc, argv, &o);
	if (rc == 0 && load_packages(&o, &sps, &nsps) < 0)
		rc = -1;
	vec_release(&o.add_packages);
	vec_release(&o.override_packages);
	if (rc != 0)
		return rc > 0 ? 0 : 1;
	pkgs = tb_calloc(nsps ? nsps : 1, sizeof *pkgs);
	for (size_t i = 0; i < nsps; i++)
		pkgs[i] = sps[i].pkg;

	char *sql = NULL;
	struct tp *tp = NULL;
	int status = 0;
	if (o.query_file) {
		sql = read_sql_file(o.query_file);
		if (!sql) {
			status = 1;
			goto out;
		}
	} else if (o.query_string) {
		sql = tb_strdup(o.query_string);
	} else if (o.query_mode) {
		sql = read_stream(stdin);
	}

	struct tp_config cfg = {.full_sort = o.full_sort,
	                        .crop_track_events = o.crop_track_events,
	                        .packages = pkgs,
	                        .npackages = nsps};
	if (o.serve != SERVE_NONE) {
		status = serve(&o, &cfg);
		goto out;
	}
	tp = tp_new(&cfg);
	if (load_trace(tp, o.trace) < 0) {
		status = 1;
		goto out;
	}
	if (sql && run_queries_csv(tp, sql, stdout) < 0)
		status = 1;
	if (status == 0 && (o.interactive || !sql))
		status = tp_shell_interactive(tp, o.wide) < 0;
out:
	fflush(stdout);
	tb_free(sql);
	tp_free(tp);
	for (size_t i = 0; i < nsps; i++)
		tp_shell_package_release(&sps[i]);
	tb_free(sps);
	tb_free(pkgs);
	return status;
}
