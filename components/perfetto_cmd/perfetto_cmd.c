/*
 * The perfetto applet: command line flags (Perfetto's getopt string
 * "hc:o:dDt:b:s:a:" and long options), choosing the config (-c file or the
 * light config), opening the output, going to the background (-d, -D), and
 * running one session (session.c). tracebox's autostart mode comes in
 * through perfetto_cmd_run's hooks.
 */
#include "perfetto_cmd_int.h"

#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>
#include <limits.h>

#include "ipc.h"
#include "version.h"

/* The data sources' stop timeout given to a config with linux.perf that
 * sets none: the end-of-capture symbolization may fetch from debuginfod. */
#define PERFETTO_CMD_PERF_STOP_TIMEOUT_MS 30000
/* How long -D waits for the session to start (Perfetto: 30 s). */
#define BACKGROUND_WAIT_MS 30000
#define MAX_APPS 64

enum {
	OPT_TXT = 1000,
	OPT_TXT_LOSSY,
	OPT_NO_CLOBBER,
	OPT_VERSION,
	OPT_NOTIFY_FD,
	OPT_QUERY,
	OPT_QUERY_RAW,
	OPT_LONG,
	OPT_NO_SYMBOLIZE,
	OPT_REPORT,
	OPT_CONTROL,
	OPT_UNSUPPORTED,
	OPT_UNSUPPORTED_ARG,
};

static const struct option long_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"config", required_argument, NULL, 'c'},
    {"out", required_argument, NULL, 'o'},
    {"background", no_argument, NULL, 'd'},
    {"background-wait", no_argument, NULL, 'D'},
    {"time", required_argument, NULL, 't'},
    {"buffer", required_argument, NULL, 'b'},
    {"size", required_argument, NULL, 's'},
    {"app", required_argument, NULL, 'a'},
    {"txt", no_argument, NULL, OPT_TXT},
    {"txt-lossy", no_argument, NULL, OPT_TXT_LOSSY},
    {"no-clobber", no_argument, NULL, OPT_NO_CLOBBER},
    {"version", no_argument, NULL, OPT_VERSION},
    {"notify-fd", required_argument, NULL, OPT_NOTIFY_FD},
    /* tracebox's own */
    {"no-symbolize", no_argument, NULL, OPT_NO_SYMBOLIZE},
    {"report", required_argument, NULL, OPT_REPORT},
    {"control", required_argument, NULL, OPT_CONTROL},
    /* Perfetto flags this client does not implement: named, then refused. */
    {"query", no_argument, NULL, OPT_QUERY},
    {"query-raw", no_argument, NULL, OPT_QUERY_RAW},
    {"long", no_argument, NULL, OPT_LONG},
    {"detach", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"attach", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"is_detached", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"stop", no_argument, NULL, OPT_UNSUPPORTED},
    {"clone", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"clone-by-name", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"clone-for-bugreport", no_argument, NULL, OPT_UNSUPPORTED},
    {"save-for-bugreport", no_argument, NULL, OPT_UNSUPPORTED},
    {"save-all-for-bugreport", no_argument, NULL, OPT_UNSUPPORTED},
    {"add-attribute", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"upload", no_argument, NULL, OPT_UNSUPPORTED},
    {"dropbox", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"alert-id", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"config-id", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"config-uid", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"subscription-id", required_argument, NULL, OPT_UNSUPPORTED_ARG},
    {"no-guardrails", no_argument, NULL, OPT_UNSUPPORTED},
    {"reset-guardrails", no_argument, NULL, OPT_UNSUPPORTED},
    {NULL, 0, NULL, 0},
};

struct args {
	const char *config_path, *out_path;
	enum perfetto_cmd_txt txt;
	bool txt_flag, txt_lossy_flag, no_clobber, background, background_wait;
	bool query, query_raw, query_long;
	int notify_fd;
	bool light;
	bool no_symbolize;
	const char *report_path; /* --report */
	const char *control;     /* --control fifo:CTL[,ACK] */
	struct perfetto_cmd_light_opts lo;
	const char *apps[MAX_APPS];
	char **workload; /* after "--": the command to run, NULL-terminated */
};

static void usage(FILE *f, const char *argv0, const struct perfetto_cmd_hooks *hooks)
{
	fprintf(
	    f,
	    "Usage: %s [flags] [FTRACE_GROUP/FTRACE_NAME | ATRACE_CAT ...] [-- CMD [ARGS...]]\n"
	    "  --background     -d      : Exits immediately and continues in the background.\n"
	    "                             Prints the PID; `kill -TERM PID` stops it gracefully.\n"
	    "  --background-wait -D     : Like --background, but waits (up to 30s) until the\n"
	    "                             session has started; the exit code says if it did.\n"
	    "  --config         -c      : /path/to/trace/config/file or - for stdin\n"
	    "  --out            -o      : /path/to/out/trace/file or - for stdout\n"
	    "  --no-clobber             : Do not overwrite an existing output file\n"
	    "  --txt                    : Parse config as pbtxt\n"
	    "  --txt-lossy              : Like --txt, but drops unknown fields and enum values\n"
	    "  --notify-fd      FD      : Write a status byte (0 = ok) to FD once all data\n"
	    "                             sources started, then close it\n"
	    "  --query [--long]         : Print the tracing service state and exit\n"
	    "  --query-raw              : Like --query, as a binary TracingServiceState\n"
	    "  --no-symbolize           : Leave user frames unnamed (no ModuleSymbols at the end\n"
	    "                             of the capture; `traceconv symbolize` can add them)\n"
	    "  --report PATH            : Also write the HTML report (ranked functions, flame\n"
	    "                             graphs) of the trace to PATH\n"
	    "  --control fifo:CTL[,ACK] : Sample only between `enable` and `disable` written to\n"
	    "                             the CTL fifo (also `ping`, `stop`); each is answered\n"
	    "                             `ack` on ACK. The workload gets $TRACEBOX_CONTROL\n"
	    "  --version                : Print the version and exit\n"
	    "  --help           -h\n"
	    "\n"
	    "Light configuration flags: (only when NOT using -c/--config)\n"
	    "  --time           -t      : Trace duration N[ms,s,m,h] (default: 10s)\n"
	    "  --buffer         -b      : Ring buffer size N[kb,mb,gb] (default: 32mb)\n"
	    "  --size           -s      : Max file size N[kb,mb,gb]\n"
	    "  --app            -a      : Android (atrace) app name\n"
	    "  FTRACE_GROUP/FTRACE_NAME : Record ftrace event (e.g. sched/sched_switch)\n"
	    "  ATRACE_CAT               : Record ATRACE_CAT (e.g. wm) (Android only)\n"
	    "\n"
	    "Workload gating:\n"
	    "  -- CMD [ARGS...]         : Start the capture, run CMD once every data source\n"
	    "                             started, stop the trace when CMD exits; print one\n"
	    "                             status line (workload_status=N trace_status=N\n"
	    "                             health_status=N report_status=N ... "
	    "capture_complete=0|1)\n"
	    "                             on stderr and exit with CMD's status (without -c and "
	    "-t:\n"
	    "                             light config, no duration). linux.perf sources without "
	    "a\n"
	    "                             scope sample CMD and the processes it starts\n",
	    argv0);
	if (hooks && hooks->usage_extra)
		fputs(hooks->usage_extra, f);
}

static bool long_option_takes_arg(const char *word)
{
	size_t n = strcspn(word, "=");
	if (word[n] == '=')
		return false; /* --name=value */
	/* getopt_long accepts unambiguous prefixes: any match taking an
	 * argument means the next word may be its value. */
	for (const struct option *o = long_options; o->name; o++)
		if (strncmp(o->name, word, n) == 0 && o->has_arg == required_argument)
			return true;
	return false;
}

/* The index of the "--" that ends perfetto's own arguments (the workload
 * follows it), or argc. A "--" that is the value of an option ("-o --") does
 * not count. */
int perfetto_cmd_workload_split(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i];
		if (strcmp(w, "--") == 0)
			return i;
		if (w[0] != '-' || w[1] == '\0')
			continue;
		if (w[1] == '-') {
			if (long_option_takes_arg(w + 2))
				i++;
			continue;
		}
		for (size_t j = 1; w[j]; j++) {
			if (strchr("cotbsa", w[j])) {
				if (w[j + 1] == '\0')
					i++;
				break;
			}
		}
	}
	return argc;
}

/* Returns -1 to continue, else an exit status. */
static int parse_args(int argc, char **argv, struct args *a, const struct perfetto_cmd_hooks *hooks)
{
	int opt, idx;
	char *end;
	int split = perfetto_cmd_workload_split(argc, argv);

	memset(a, 0, sizeof *a);
	a->notify_fd = -1;
	a->lo.apps = a->apps;
	if (split < argc) {
		if (split + 1 == argc) {
			fprintf(stderr, "perfetto: '--' must be followed by the command to run\n");
			return 1;
		}
		a->workload = argv + split + 1;
		argc = split;
	} else if (argc <= 1) {
		usage(stderr, argv[0], hooks);
		return 1;
	}
	optind = 0;
	opterr = 1;
	while ((opt = getopt_long(argc, argv, "hc:o:dDt:b:s:a:", long_options, &idx)) != -1) {
		switch (opt) {
		case 'h':
			usage(stdout, argv[0], hooks);
			return 0;
		case 'c':
			a->config_path = optarg;
			break;
		case 'o':
			a->out_path = optarg;
			break;
		case 'd':
			a->background = true;
			break;
		case 'D':
			a->background = a->background_wait = true;
			break;
		case 't':
			a->lo.time = optarg;
			a->light = true;
			break;
		case 'b':
			a->lo.buffer = optarg;
			a->light = true;
			break;
		case 's':
			a->lo.max_file_size = optarg;
			a->light = true;
			break;
		case 'a':
			if (a->lo.n_apps == MAX_APPS) {
				fprintf(stderr, "perfetto: too many --app flags (at most %d)\n",
				        MAX_APPS);
				return 1;
			}
			a->apps[a->lo.n_apps++] = optarg;
			a->light = true;
			break;
		case OPT_TXT:
			a->txt_flag = true;
			a->txt = PERFETTO_CMD_TXT;
			break;
		case OPT_TXT_LOSSY:
			a->txt_lossy_flag = true;
			a->txt = PERFETTO_CMD_TXT_LOSSY;
			break;
		case OPT_NO_CLOBBER:
			a->no_clobber = true;
			break;
		case OPT_VERSION:
			printf("tracebox perfetto %s (%s)\n", TB_VERSION, TB_REVISION);
			return 0;
		case OPT_NOTIFY_FD: {
			long v;
			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 0 || v > INT32_MAX) {
				fprintf(stderr, "perfetto: bad --notify-fd '%s'\n", optarg);
				return 1;
			}
			a->notify_fd = (int)v;
			break;
		}
		case OPT_NO_SYMBOLIZE:
			a->no_symbolize = true;
			break;
		case OPT_REPORT:
			a->report_path = optarg;
			break;
		case OPT_CONTROL:
			a->control = optarg;
			break;
		case OPT_QUERY:
			a->query = true;
			break;
		case OPT_QUERY_RAW:
			a->query_raw = true;
			break;
		case OPT_LONG:
			a->query_long = true;
			break;
		case OPT_UNSUPPORTED:
		case OPT_UNSUPPORTED_ARG:
			fprintf(stderr, "perfetto: --%s is not supported by this build\n",
			        long_options[idx].name);
			return 1;
		default:
			usage(stderr, argv[0], hooks);
			return 1;
		}
	}
	if (optind < argc) {
		a->lo.events = (const char *const *)argv + optind;
		a->lo.n_events = (size_t)(argc - optind);
		a->light = true;
	}
	if (a->txt_flag && a->txt_lossy_flag) {
		fprintf(stderr, "perfetto: --txt and --txt-lossy are mutually exclusive\n");
		return 1;
	}
	if (a->light && a->config_path) {
		fprintf(stderr, "perfetto: Cannot specify both -c/--config and any of --time, "
		                "--size, --buffer, --app, ATRACE_CAT, FTRACE_EVENT\n");
		return 1;
	}
	if (a->report_path && (!hooks || !hooks->report)) {
		fprintf(stderr, "perfetto: --report is not available here (use tracebox)\n");
		return 1;
	}
	if (a->control && (strncmp(a->control, "fifo:", 5) != 0 || !a->control[5] ||
	                   a->control[5] == ',' || a->control[strlen(a->control) - 1] == ',')) {
		fprintf(stderr, "perfetto: --control takes fifo:CTL[,ACK], not '%s'\n", a->control);
		return 1;
	}
	if ((a->report_path || a->control) && (a->background || a->query || a->query_raw)) {
		fprintf(stderr, "perfetto: --report and --control cannot be combined with %s\n",
		        a->background ? "--background" : "--query");
		return 1;
	}
	if (a->workload) {
		if (a->background || a->query || a->query_raw) {
			fprintf(stderr,
			        "perfetto: a workload (-- CMD) cannot be combined with %s\n",
			        a->background ? "--background" : "--query");
			return 1;
		}
		if (a->out_path && strcmp(a->out_path, "-") == 0) {
			fprintf(stderr,
			        "perfetto: a workload (-- CMD) cannot be combined with -o - "
			        "(it writes to stdout too)\n");
			return 1;
		}
		/* The workload's end is the end of the trace: light config without
		 * a duration unless told otherwise. */
		if (!a->config_path)
			a->light = true;
		if (a->light && !a->lo.time)
			a->lo.time = "0";
	}
	return -1;
}

/* Build the TraceConfig from -c or the light flags. Returns 0 or an exit
 * status after printing the error. */
static int load_config(const struct args *a, Perfetto__Protos__TraceConfig **cfg)
{
	struct tb_err err = {0};
	uint8_t *raw = NULL;
	size_t len = 0;
	int rc;

	if (a->config_path && strcmp(a->config_path, ":test") == 0) {
		/* Perfetto's built-in test config: 2 s of scheduling and power events. */
		static const char *const events[] = {"sched/sched_switch", "power/cpu_idle",
		                                     "power/cpu_frequency", "power/gpu_frequency"};
		struct perfetto_cmd_light_opts t = {
		    .time = "2s", .events = events, .n_events = TB_ARRAY_SIZE(events)};
		if (perfetto_cmd_light_config(&t, &raw, &len, &err)) {
			fprintf(stderr, "perfetto: %s\n", err.msg);
			return 1;
		}
		rc = perfetto_cmd_config_decode(":test", raw, len, PERFETTO_CMD_BINARY, cfg, &err);
	} else if (a->config_path) {
		const char *path = strcmp(a->config_path, "-") == 0 ? "/dev/stdin" : a->config_path;
		char *buf = NULL;
		if (tb_read_file(path, &buf, &len, PERFETTO_CMD_MAX_CONFIG_BYTES, &err)) {
			fprintf(stderr, "perfetto: could not read the config: %s\n", err.msg);
			return 1;
		}
		raw = (uint8_t *)buf;
		rc = perfetto_cmd_config_decode(a->config_path, raw, len, a->txt, cfg, &err);
	} else if (a->light) {
		if (perfetto_cmd_light_config(&a->lo, &raw, &len, &err)) {
			fprintf(stderr, "perfetto: %s\n", err.msg);
			return 1;
		}
		rc = perfetto_cmd_config_decode("light config", raw, len, PERFETTO_CMD_BINARY, cfg,
		                                &err);
	} else {
		rc = perfetto_cmd_config_decode("config", NULL, 0, PERFETTO_CMD_BINARY, cfg, &err);
	}
	tb_free(raw);
	if (rc) {
		fprintf(stderr, "%s\n", err.msg);
		return 1;
	}
	return 0;
}

/* -d / -D: the parent prints the child's pid and exits (with -D once the
 * child reports that tracing is enabled); the child returns 0 and records.
 * Returns -1 in the child, an exit status in the parent (or on error). */
static int daemonize(bool wait_started, int *notify_fd)
{
	int pfd[2] = {-1, -1};
	pid_t pid;
	int devnull;

	fflush(stdout);
	fflush(stderr);
	if (wait_started && pipe2(pfd, O_CLOEXEC) != 0) {
		perror("perfetto: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("perfetto: fork");
		return 1;
	}
	if (pid > 0) {
		uint8_t status = 1;
		struct pollfd p = {.fd = pfd[0], .events = POLLIN};
		printf("%d\n", (int)pid);
		fflush(stdout);
		if (!wait_started)
			_exit(0);
		close(pfd[1]);
		if (poll(&p, 1, BACKGROUND_WAIT_MS) == 1 && read(pfd[0], &status, 1) == 1 &&
		    status == 0)
			_exit(0);
		fprintf(stderr, "perfetto: the tracing session did not start\n");
		_exit(1);
	}
	setsid();
	if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		close(devnull);
	}
	if (wait_started) {
		close(pfd[0]);
		if (*notify_fd >= 0)
			close(*notify_fd);
		*notify_fd = pfd[1];
	}
	return -1;
}

/* What a recording left behind. */
struct record_result {
	uint64_t bytes;                       /* size of the trace written */
	uint64_t lost;                        /* the service's loss counters (gated captures) */
	bool ended_by_workload;               /* the workload's exit ended the session */
	struct perfetto_cmd_control *control; /* --control, opened by record() */
};

/* The capture broke off: keep the trace's whole packets written so far
 * (write_into_file: by the service; else: read back before the end) and
 * say so. out is finished or aborted. */
static void keep_partial(struct perfetto_cmd_out *out, const char *path, struct record_result *res)
{
	struct tb_err err = {0};
	uint64_t kept = 0;
	int rc = perfetto_cmd_out_finish_partial(out, &kept, &err);
	if (rc == 0) {
		res->bytes = kept;
		fprintf(stderr,
		        "perfetto: kept the %" PRIu64 " bytes of whole packets written before "
		        "in '%s' (the trace is cut short there)\n",
		        kept, path);
	} else if (rc != -ENODATA) {
		fprintf(stderr, "perfetto: %s\n", err.msg);
	} else if (strcmp(path, "-") != 0) {
		fprintf(stderr, "perfetto: nothing had been written: no trace file\n");
	}
}

/* Open the output, go to the background (-d/-D), start the services
 * (hooks), record one session and rename the trace into place. Errors are
 * printed. With a workload, signals are blocked once the services run and
 * the workload is started by the session. Returns 0, or 1 after a failure
 * (the workload may be running then, or not started yet). */
static int record(struct args *a, Perfetto__Protos__TraceConfig *cfg, const char *out_path,
                  const struct perfetto_cmd_hooks *hooks, struct perfetto_cmd_workload *wl,
                  struct record_result *res)
{
	struct tb_err err = {0};
	struct perfetto_cmd_out out;
	struct perfetto_cmd_session_opts so = {0};
	bool out_open = false, services = false;
	int rc = 1, srv;

	/* write_into_file: traced writes (and caps) the file through our fd. */
	if (perfetto_cmd_out_open(&out, out_path, a->no_clobber, 0, &err)) {
		fprintf(stderr, "perfetto: %s\n", err.msg);
		goto out;
	}
	out_open = true;

	if (a->background) {
		int r = daemonize(a->background_wait, &a->notify_fd);
		if (r >= 0) {
			rc = r;
			goto out;
		}
	}
	if (hooks && hooks->start_services) {
		services = true;
		if (hooks->start_services(hooks->ctx, &err)) {
			fprintf(stderr, "perfetto: %s\n", err.msg);
			goto out;
		}
	}
	/* After the services: they must not inherit the blocked signals. */
	if (wl && perfetto_cmd_workload_block_signals(wl)) {
		fprintf(stderr, "perfetto: cannot block signals\n");
		goto out;
	}

	/* --control: the fifos, the socket the linux.perf instances take their
	 * commands from, and the workload's $TRACEBOX_CONTROL. */
	if (a->control) {
		char env[2 * PATH_MAX + 8];
		if (!(res->control = perfetto_cmd_control_new(a->control, &err))) {
			fprintf(stderr, "perfetto: %s\n", err.msg);
			goto out;
		}
		perfetto_cmd_control_env(res->control, env, sizeof env);
		setenv("TRACEBOX_CONTROL", env, 1);
	}
	/* The workload's process exists (held before exec) before the session
	 * does, so a linux.perf source without a scope can follow it. */
	{
		struct perfetto_cmd_perf_directives d = {
		    .workload_pid = wl ? perfetto_cmd_workload_prepare(wl) : 0,
		    .no_symbolize = a->no_symbolize,
		    .control = res->control ? perfetto_cmd_control_socket(res->control) : NULL,
		};
		if (d.workload_pid < 0)
			d.workload_pid = 0;
		so.perf_sources = perfetto_cmd_config_perf_directives(cfg, &d);
		/* Symbolizing at the end of the capture may fetch from debuginfod:
		 * give the data sources time to stop unless the config says. */
		if (so.perf_sources && !d.no_symbolize && !cfg->has_data_source_stop_timeout_ms) {
			cfg->has_data_source_stop_timeout_ms = true;
			cfg->data_source_stop_timeout_ms = PERFETTO_CMD_PERF_STOP_TIMEOUT_MS;
		}
	}

	so.socket = ipc_consumer_socket_name();
	so.same_uid_service = hooks && hooks->private_sockets;
	so.config = perfetto_cmd_config_pack_for_service(cfg, &so.config_len);
	so.out = &out;
	so.write_into_file = cfg->write_into_file;
	so.notify_fd = a->notify_fd;
	so.workload = wl;
	so.lost = wl ? &res->lost : NULL;
	so.ended_by_workload = &res->ended_by_workload;
	so.control = res->control;
	signal(SIGPIPE, SIG_IGN);
	if ((srv = perfetto_cmd_session_run(&so, &err))) {
		fprintf(stderr, "perfetto: %s\n", err.msg);
		if (srv == -EPIPE || srv == -EREMOTEIO) {
			/* The beginning of the trace is worth keeping. */
			out_open = false;
			keep_partial(&out, out_path, res);
		}
		goto out;
	}
	{
		struct stat st;
		uint64_t bytes = out.bytes;
		char *name = tb_strdup(out.path ? out.path : "stdout");
		if (so.write_into_file && out.path && fstat(out.fd, &st) == 0)
			bytes = (uint64_t)st.st_size;
		out_open = false;
		if (perfetto_cmd_out_finish(&out, &err)) {
			tb_free(name);
			fprintf(stderr, "perfetto: %s\n", err.msg);
			goto out;
		}
		log_info(PERFETTO_CMD_TAG, "Wrote %" PRIu64 " bytes into %s", bytes, name);
		tb_free(name);
		res->bytes = bytes;
	}
	rc = 0;
out:
	if (out_open)
		perfetto_cmd_out_abort(&out);
	if (services && hooks->stop_services)
		hooks->stop_services(hooks->ctx);
	tb_free((void *)so.config);
	return rc;
}

/* The trace path in the status line: bytes that would break a
 * whitespace-separated key=value line (space, control characters, '%', '=')
 * as %XX. */
static void print_path(FILE *f, const char *path)
{
	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		if (*p <= ' ' || *p == 0x7f || *p == '%' || *p == '=')
			fprintf(f, "%%%02X", *p);
		else
			fputc(*p, f);
	}
}

/* Write the report of the finished trace (--report). Returns the
 * report_status: 0 written, 1 failed (the reason printed). */
static int write_report(const struct args *a, const char *trace,
                        const struct perfetto_cmd_hooks *hooks)
{
	struct tb_err err = {0};
	if (hooks->report(hooks->ctx, trace, a->report_path, &err) < 0) {
		fprintf(stderr, "perfetto: cannot write the report '%s': %s\n", a->report_path,
		        err.msg);
		return 1;
	}
	return 0;
}

/* A gated capture: record around the workload, print the status line and
 * return the workload's status. Stages that did not run report 125. */
static int run_gated(struct args *a, Perfetto__Protos__TraceConfig *cfg, const char *out_path,
                     const struct perfetto_cmd_hooks *hooks)
{
	struct perfetto_cmd_workload wl;
	struct record_result res = {0};
	struct perfetto_cmd_trace_counts counts = {0};
	struct tb_err err = {0};
	int trace_status, health_status = 125, report_status = 125, status;
	uint64_t hz = perfetto_cmd_config_sample_hz(cfg);
	bool has_perf = false;

	for (size_t i = 0; i < cfg->n_data_sources; i++)
		has_perf |= cfg->data_sources[i] && cfg->data_sources[i]->config &&
		            cfg->data_sources[i]->config->name &&
		            strcmp(cfg->data_sources[i]->config->name, "linux.perf") == 0;
	perfetto_cmd_workload_init(&wl, a->workload);
	trace_status = record(a, cfg, out_path, hooks, &wl, &res);
	if (trace_status)
		res.lost = 0; /* bytes: what a broken-off capture kept */
	/* A failed capture still runs the workload (signals blocked first, if
	 * the capture did not get that far, so none is lost before the wait). */
	perfetto_cmd_workload_block_signals(&wl);
	perfetto_cmd_workload_start(&wl);
	status = perfetto_cmd_workload_wait(&wl, res.control);
	if (trace_status == 0) {
		if (perfetto_cmd_trace_counts(out_path, &counts, &err) < 0) {
			fprintf(stderr, "perfetto: %s\n", err.msg);
			health_status = 1;
		} else {
			/* Healthy: nothing lost, and samples when perf was asked for. */
			health_status = res.lost || counts.lost_records || counts.samples_skipped ||
			                (has_perf && !counts.samples);
		}
		if (a->report_path)
			report_status = write_report(a, out_path, hooks);
	}
	fprintf(stderr,
	        "workload_status=%d trace_status=%d health_status=%d report_status=%d "
	        "sample_hz=%" PRIu64 " trace=",
	        status, trace_status, health_status, report_status, hz);
	print_path(stderr, out_path);
	fputs(" report=", stderr);
	if (a->report_path)
		print_path(stderr, a->report_path);
	fprintf(stderr,
	        " bytes=%" PRIu64 " packets_lost=%" PRIu64 " samples=%" PRIu64
	        " samples_skipped=%" PRIu64 " samples_without_callsite=%" PRIu64
	        " lost_records=%" PRIu64 " capture_complete=%d\n",
	        res.bytes, res.lost, counts.samples, counts.samples_skipped,
	        counts.samples_without_callsite, counts.lost_records,
	        trace_status == 0 && res.ended_by_workload && !res.lost && !counts.lost_records);
	fflush(stderr);
	perfetto_cmd_control_free(res.control);
	return status;
}

int perfetto_cmd_run(int argc, char **argv, const struct perfetto_cmd_hooks *hooks)
{
	struct args a;
	struct tb_err err = {0};
	struct record_result res = {0};
	Perfetto__Protos__TraceConfig *cfg = NULL;
	const char *out_path;
	int rc;

	umask(0); /* as Perfetto: file modes are exactly what we ask for */
	log_set_name("perfetto");
	if ((rc = parse_args(argc, argv, &a, hooks)) >= 0)
		return rc;
	rc = 1;
	if (a.notify_fd >= 0 && tb_set_cloexec(a.notify_fd, true) != 0) {
		fprintf(stderr, "perfetto: --notify-fd %d is not an open file descriptor\n",
		        a.notify_fd);
		return 1;
	}
	if (a.query || a.query_raw) {
		signal(SIGPIPE, SIG_IGN);
		if (perfetto_cmd_query_run(ipc_consumer_socket_name(), a.query_raw, a.query_long,
		                           &err)) {
			fprintf(stderr, "perfetto: %s\n", err.msg);
			return 1;
		}
		return 0;
	}
	if (load_config(&a, &cfg))
		goto out;
	if (cfg->n_activate_triggers) {
		/* Perfetto's shorthand: activate the triggers, record nothing. */
		signal(SIGPIPE, SIG_IGN);
		if (perfetto_cmd_activate_triggers(ipc_producer_socket_name(),
		                                   cfg->activate_triggers, cfg->n_activate_triggers,
		                                   &err)) {
			fprintf(stderr, "perfetto: %s\n", err.msg);
			goto out;
		}
		rc = 0;
		goto out;
	}
	perfetto_cmd_config_set_uuid(cfg);

	out_path = a.out_path;
	if (cfg->output_path && cfg->output_path[0]) {
		if (out_path) {
			fprintf(stderr, "perfetto: can't pass --out and set output_path in the "
			                "trace config at the same time\n");
			goto out;
		}
		out_path = cfg->output_path;
	}
	if (!out_path) {
		fprintf(stderr, "perfetto: --out is required (-o FILE, or - for stdout)\n");
		goto out;
	}
	if (a.background && strcmp(out_path, "-") == 0) {
		fprintf(stderr, "perfetto: --background cannot write the trace to stdout\n");
		goto out;
	}
	if (a.workload) {
		rc = run_gated(&a, cfg, out_path, hooks);
	} else {
		rc = record(&a, cfg, out_path, hooks, NULL, &res);
		perfetto_cmd_control_free(res.control);
		if (rc == 0 && a.report_path)
			rc = write_report(&a, out_path, hooks);
	}
out:
	perfetto_cmd_config_free(cfg);
	return rc;
}

int perfetto_cmd_main(int argc, char **argv)
{
	return perfetto_cmd_run(argc, argv, NULL);
}
