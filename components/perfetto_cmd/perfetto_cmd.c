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

#include "ipc.h"
#include "version.h"

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
	struct perfetto_cmd_light_opts lo;
	const char *apps[MAX_APPS];
};

static void usage(FILE *f, const char *argv0, const struct perfetto_cmd_hooks *hooks)
{
	fprintf(
	    f,
	    "Usage: %s [flags] [FTRACE_GROUP/FTRACE_NAME | ATRACE_CAT ...]\n"
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
	    "  --version                : Print the version and exit\n"
	    "  --help           -h\n"
	    "\n"
	    "Light configuration flags: (only when NOT using -c/--config)\n"
	    "  --time           -t      : Trace duration N[ms,s,m,h] (default: 10s)\n"
	    "  --buffer         -b      : Ring buffer size N[kb,mb,gb] (default: 32mb)\n"
	    "  --size           -s      : Max file size N[kb,mb,gb]\n"
	    "  --app            -a      : Android (atrace) app name\n"
	    "  FTRACE_GROUP/FTRACE_NAME : Record ftrace event (e.g. sched/sched_switch)\n"
	    "  ATRACE_CAT               : Record ATRACE_CAT (e.g. wm) (Android only)\n",
	    argv0);
	if (hooks && hooks->usage_extra)
		fputs(hooks->usage_extra, f);
}

/* Returns -1 to continue, else an exit status. */
static int parse_args(int argc, char **argv, struct args *a, const struct perfetto_cmd_hooks *hooks)
{
	int opt, idx;
	char *end;

	memset(a, 0, sizeof *a);
	a->notify_fd = -1;
	a->lo.apps = a->apps;
	if (argc <= 1) {
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

int perfetto_cmd_run(int argc, char **argv, const struct perfetto_cmd_hooks *hooks)
{
	struct args a;
	struct tb_err err = {0};
	struct perfetto_cmd_out out;
	struct perfetto_cmd_session_opts so = {0};
	Perfetto__Protos__TraceConfig *cfg = NULL;
	const char *out_path;
	bool out_open = false, services = false;
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
	/* write_into_file: traced writes (and caps) the file through our fd. */
	if (perfetto_cmd_out_open(&out, out_path, a.no_clobber, 0, &err)) {
		fprintf(stderr, "perfetto: %s\n", err.msg);
		goto out;
	}
	out_open = true;

	if (a.background) {
		int r = daemonize(a.background_wait, &a.notify_fd);
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

	so.socket = ipc_consumer_socket_name();
	so.config = perfetto_cmd_config_pack_for_service(cfg, &so.config_len);
	so.out = &out;
	so.write_into_file = cfg->write_into_file;
	so.notify_fd = a.notify_fd;
	signal(SIGPIPE, SIG_IGN);
	if (perfetto_cmd_session_run(&so, &err)) {
		fprintf(stderr, "perfetto: %s\n", err.msg);
		goto out;
	}
	{
		struct stat st;
		uint64_t bytes = out.bytes;
		char *name = tb_strdup(out.path ? out.path : "stdout");
		if (so.write_into_file && out.path && fstat(out.fd, &st) == 0)
			bytes = (uint64_t)st.st_size;
		if (perfetto_cmd_out_finish(&out, &err)) {
			out_open = false;
			tb_free(name);
			fprintf(stderr, "perfetto: %s\n", err.msg);
			goto out;
		}
		out_open = false;
		log_info(PERFETTO_CMD_TAG, "Wrote %" PRIu64 " bytes into %s", bytes, name);
		tb_free(name);
	}
	rc = 0;
out:
	if (out_open)
		perfetto_cmd_out_abort(&out);
	if (services && hooks->stop_services)
		hooks->stop_services(hooks->ctx);
	tb_free((void *)so.config);
	perfetto_cmd_config_free(cfg);
	return rc;
}

int perfetto_cmd_main(int argc, char **argv)
{
	return perfetto_cmd_run(argc, argv, NULL);
}
