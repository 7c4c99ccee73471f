/*
 * Dispatch for the multi-call binary. Like Perfetto's tracebox:
 *   - basename(argv[0]) names an applet -> run it with argv unchanged
 *     (so `ln -s tracebox traced; ./traced` works);
 *   - else argv[1] names an applet -> run it with argv shifted by one;
 *   - `--help`, `--version`, `help [APPLET]` are answered here;
 *   - autostart mode: a first argument that is a flag ("-t", "--txt", ...) or
 *     an ftrace event ("sched/sched_switch") runs the perfetto client with
 *     private traced, traced_probes and traced_perf children on private sockets
 *     (Perfetto's tracebox autostart), see autostart() below;
 *   - any other word that is not an applet is one error line and exit
 *     status 2 (a typo of an applet name should not start a recording).
 */
#include "tracebox.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"
#include "perfetto_cmd.h"
#include "traceconv.h"
#include "version.h"

/* How long autostart waits for a service child to say it is ready, and for
 * it to exit after SIGTERM before SIGKILL. */
#define AUTOSTART_READY_TIMEOUT_MS 10000
#define AUTOSTART_STOP_TIMEOUT_MS 5000

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void usage(FILE *out)
{
	fprintf(out,
	        "tracebox %s: Perfetto's tracebox and trace_processor_shell in one static binary.\n"
	        "\n"
	        "Usage: tracebox APPLET [ARGS...]   run an applet\n"
	        "       APPLET [ARGS...]            the same, through a symlink named APPLET\n"
	        "       tracebox help APPLET        an applet's help (also: APPLET --help)\n"
	        "       tracebox --version\n"
	        "\n"
	        "Applets:\n",
	        TB_VERSION);
	int n = 0;
	for (const struct tracebox_applet *a = tracebox_applets; a->name; a++, n++)
		fprintf(out, "  %-22s %s\n", a->name, a->summary);
	if (n == 0)
		fprintf(out, "  (none in this build yet)\n");
	fprintf(out, "\n"
	             "Autostart mode: tracebox followed by perfetto's own arguments, e.g.\n"
	             "  tracebox -t 10s -o trace.pftrace sched/sched_switch\n"
	             "  tracebox -c config.pbtx --txt -o trace.pftrace\n"
	             "records with private traced, traced_probes and traced_perf children on\n"
	             "private sockets (@traced-c-PID, @traced-p-PID), as Perfetto's tracebox\n"
	             "does, and stops them afterwards.\n"
	             "--system-sockets uses the system socket names instead. The first argument\n"
	             "must be a flag or an ftrace event; see `tracebox perfetto --help`.\n"
	             "\n"
	             "Workload gating: tracebox [perfetto flags] -- CMD [ARGS...] records around\n"
	             "CMD, prints one status line on stderr and exits with CMD's status.\n");
}

/* ---- autostart mode ------------------------------------------------------- */

struct autostart {
	pid_t traced; /* leader of the services' process group */
	pid_t probes;
	pid_t perf;
	bool private_sockets; /* the services accept and trust only our uid */
};

/* Fork `<self> APPLET [ARG]` with a pipe in the environment variable
 * notify_env, in process group pgid (0: a new group led by the child), and
 * wait for the "1" it writes once ready (compat §5.2). The child's pid in
 * *out (also on failure after the fork, so it can be stopped). */
static int spawn_service(const struct autostart *as, const char *applet, const char *arg,
                         const char *notify_env, pid_t pgid, pid_t *out, struct tb_err *err)
{
	int pfd[2];
	char c = 0;
	struct pollfd p;
	pid_t pid;

	pid_t parent = getpid();

	if (pipe2(pfd, O_CLOEXEC) != 0)
		return tb_err_errno(err, -errno, "cannot create a pipe");
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return tb_err_errno(err, -errno, "cannot fork %s", applet);
	}
	if (pid == 0) {
		char fdstr[16];
		/* A service must not outlive the recording that started it (kept
		 * across exec): SIGTERM, so traced_probes restores tracefs on its
		 * way out. A parent already gone before that: do not start. */
		if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
			_exit(127);
		setpgid(0, pgid);
		close(pfd[0]);
		tb_set_cloexec(pfd[1], false);
		snprintf(fdstr, sizeof fdstr, "%d", pfd[1]);
		setenv(notify_env, fdstr, 1);
		setenv("TRACEBOX_LOG", "warn", 0); /* keep the recording's terminal quiet */
		if (as->private_sockets)
			setenv("TRACEBOX_PRIVATE_SOCKETS", "1", 1);
		execl("/proc/self/exe", "tracebox", applet, arg, (char *)NULL);
		_exit(127);
	}
	*out = pid;
	setpgid(pid, pgid ? pgid : pid); /* also here, so the group exists before we signal it */
	close(pfd[1]);
	p.fd = pfd[0];
	p.events = POLLIN;
	if (poll(&p, 1, AUTOSTART_READY_TIMEOUT_MS) != 1 || read(pfd[0], &c, 1) != 1 || c != '1') {
		close(pfd[0]);
		return tb_err_set(err, -EIO, "the private %s did not start", applet);
	}
	close(pfd[0]);
	return 0;
}

/* Spawn `<self> traced` in a new process group with TRACED_NOTIFY_FD, then
 * `<self> traced_probes --reset-ftrace` in the same group with
 * TRACED_PROBES_NOTIFY_FD, then `<self> traced_perf` with
 * TRACED_PERF_NOTIFY_FD, waiting for each one's "1". */
static int spawn_services(void *ctx, struct tb_err *err)
{
	struct autostart *as = ctx;
	int rc = spawn_service(as, "traced", NULL, "TRACED_NOTIFY_FD", 0, &as->traced, err);
	if (rc == 0)
		rc = spawn_service(as, "traced_probes", "--reset-ftrace", "TRACED_PROBES_NOTIFY_FD",
		                   as->traced, &as->probes, err);
	if (rc == 0)
		rc = spawn_service(as, "traced_perf", NULL, "TRACED_PERF_NOTIFY_FD", as->traced,
		                   &as->perf, err);
	return rc;
}

/* Wait up to the stop timeout for pid to exit; false if it did not. */
static bool reap(pid_t pid, int *waited)
{
	for (; *waited < AUTOSTART_STOP_TIMEOUT_MS; *waited += 10) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return true;
		usleep(10 * 1000);
	}
	return false;
}

/* SIGTERM the producers, reap them, then the service's process group (so
 * no producer sees the service vanish under it and reports a lost
 * connection); SIGKILL what lingers. */
static void stop_children(void *ctx)
{
	struct autostart *as = ctx;
	pid_t pid = as->traced, others[2] = {as->probes, as->perf};
	int waited = 0;
	bool gone = true;

	if (pid <= 0)
		return;
	as->traced = as->probes = as->perf = 0;
	for (size_t i = 0; i < TB_ARRAY_SIZE(others); i++)
		if (others[i] > 0)
			kill(others[i], SIGTERM);
	for (size_t i = 0; i < TB_ARRAY_SIZE(others); i++)
		if (others[i] > 0 && reap(others[i], &waited))
			others[i] = 0;
		else if (others[i] > 0)
			gone = false;
	if (kill(-pid, SIGTERM) != 0)
		kill(pid, SIGTERM);
	gone = reap(pid, &waited) && gone;
	if (gone)
		return;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (size_t i = 0; i < TB_ARRAY_SIZE(others); i++) {
		if (others[i] > 0) {
			kill(others[i], SIGKILL);
			waitpid(others[i], NULL, 0);
		}
	}
}

/* --report: the recorder cannot load a trace (its layers stop below the
 * trace processor); traceconv writes the report. */
static int write_report(void *ctx, const char *trace, const char *report, struct tb_err *err)
{
	(void)ctx;
	return traceconv_write_report(trace, report, err);
}

int tracebox_perfetto_main(int argc, char **argv)
{
	struct perfetto_cmd_hooks hooks = {.report = write_report};
	return perfetto_cmd_run(argc, argv, &hooks);
}

static bool is_autostart_arg(const char *arg)
{
	return arg[0] == '-' || strchr(arg, '/') != NULL;
}

static int autostart(int argc, char **argv)
{
	struct autostart as = {0};
	struct perfetto_cmd_hooks hooks = {
	    .usage_extra = "\nAutostart mode (tracebox without an applet name):\n"
	                   "  --system-sockets         : Use the system's socket names instead "
	                   "of private ones\n",
	    .start_services = spawn_services,
	    .stop_services = stop_children,
	    .report = write_report,
	    .ctx = &as,
	};
	char **args = tb_calloc((size_t)argc + 1, sizeof *args);
	bool system_sockets = false;
	int n = 0, rc, split = perfetto_cmd_workload_split(argc, argv);

	/* --system-sockets is ours; after "--" everything belongs to the workload. */
	for (int i = 0; i < argc; i++) {
		if (i > 0 && i < split && !system_sockets &&
		    strcmp(argv[i], "--system-sockets") == 0) {
			system_sockets = true;
			continue;
		}
		args[n++] = argv[i];
	}
	as.private_sockets = hooks.private_sockets = !system_sockets;
	if (!system_sockets) {
		char name[64];
		snprintf(name, sizeof name, "@traced-c-%d", (int)getpid());
		setenv("PERFETTO_CONSUMER_SOCK_NAME", name, 0);
		snprintf(name, sizeof name, "@traced-p-%d", (int)getpid());
		setenv("PERFETTO_PRODUCER_SOCK_NAME", name, 0);
	}
	rc = perfetto_cmd_run(n, args, &hooks);
	stop_children(&as);
	tb_free(args);
	return rc;
}

static int run_applet(const struct tracebox_applet *a, int argc, char **argv)
{
	return a->main(argc, argv);
}

int tracebox_main(int argc, char **argv)
{
	const char *self = argc > 0 ? base_name(argv[0]) : "tracebox";
	const struct tracebox_applet *a = tracebox_find_applet(self);
	if (a)
		return run_applet(a, argc, argv);

	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	const char *arg = argv[1];
	if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(arg, "--version") == 0 || strcmp(arg, "-v") == 0) {
		printf("tracebox %s (%s)\n", TB_VERSION, TB_REVISION);
		return 0;
	}
	if (strcmp(arg, "help") == 0) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		a = tracebox_find_applet(argv[2]);
		if (!a) {
			fprintf(stderr, "tracebox: unknown applet '%s' (see tracebox --help)\n",
			        argv[2]);
			return 2;
		}
		char help[] = "--help";
		char *hargv[] = {argv[2], help, NULL};
		return run_applet(a, 2, hargv);
	}
	a = tracebox_find_applet(arg);
	if (a)
		return run_applet(a, argc - 1, argv + 1);
	if (is_autostart_arg(arg))
		return autostart(argc, argv);
	fprintf(stderr, "tracebox: unknown applet '%s' (see tracebox --help)\n", arg);
	return 2;
}
