/*
 * The scaffold every daemon applet (traced, traced_probes, traced_perf)
 * runs around its service: the shared flags (--version, --help,
 * --background), the applet's own flags through its callback, the log
 * name, SIGPIPE ignored, an event loop that SIGINT and SIGTERM end,
 * daemonizing after the service is up (so its sockets exist before the
 * parent returns), and the one error line "NAME: message" on failure. The
 * applet keeps only its service: start it on the loop, free it after.
 */
#include "base.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "version.h"

static void daemon_on_signal(struct loop *l, int signo, void *ctx)
{
	const struct tb_daemon *d = ctx;
	log_info(d->log_tag, "signal %d, exiting", signo);
	loop_quit(l, 0);
}

/* The shared flags and the applet's: -1 to run, else the exit status to
 * return now. */
static int daemon_flags(const struct tb_daemon *d, int argc, char **argv, bool *background)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--version") == 0 || strcmp(a, "-v") == 0) {
			printf("tracebox %s %s (%s)\n", d->name, TB_VERSION, TB_REVISION);
			return 0;
		} else if (strcmp(a, "--background") == 0) {
			*background = true;
			continue;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			fputs(d->usage, stdout);
			return 0;
		}
		switch (d->flag ? d->flag(d->ctx, argc, argv, &i) : TB_DAEMON_FLAG_UNKNOWN) {
		case TB_DAEMON_FLAG_TAKEN:
			break;
		case TB_DAEMON_EXIT_OK:
			return 0;
		case TB_DAEMON_EXIT_FAIL:
			return 1;
		default:
			fprintf(stderr, "%s: unknown option '%s'\n", d->name, a);
			fputs(d->usage, stderr);
			return 1;
		}
	}
	return -1;
}

int tb_daemon_main(const struct tb_daemon *d, int argc, char **argv)
{
	struct tb_err err = {0};
	struct loop *l = NULL;
	bool background = false, started = false;
	int rc = daemon_flags(d, argc, argv, &background);

	if (rc >= 0)
		return rc;
	rc = 1;
	log_set_name(d->name);
	signal(SIGPIPE, SIG_IGN);
	if (!(l = loop_new(&err)))
		goto out;
	if (loop_add_signal(l, SIGINT, daemon_on_signal, (void *)d) ||
	    loop_add_signal(l, SIGTERM, daemon_on_signal, (void *)d)) {
		tb_err_set(&err, -EINVAL, "%s", loop_err(l)->msg);
		goto out;
	}
	started = true;
	if (d->start(d->ctx, l, &err) < 0)
		goto out;
	if (background && daemon(0, 0) != 0) {
		tb_err_errno(&err, -errno, "cannot daemonize");
		goto out;
	}
	rc = loop_run(l) < 0 ? 1 : 0;
out:
	if (tb_err_is_set(&err))
		fprintf(stderr, "%s: %s\n", d->name, err.msg);
	if (started && d->stop)
		d->stop(d->ctx);
	if (l)
		loop_free(l);
	return rc;
}
