/*
 * Dispatch for the multi-call binary. Like Perfetto's tracebox:
 *   - basename(argv[0]) names an applet -> run it with argv unchanged
 *     (so `ln -s tracebox traced; ./traced` works);
 *   - else argv[1] names an applet -> run it with argv shifted by one;
 *   - `--help`, `--version`, `help [APPLET]` are answered here;
 *   - an unknown applet name is one error line and exit status 2.
 * Autostart mode (any other arguments: record with private daemons) is
 * handled here once the recorder applets exist.
 */
#include "tracebox.h"

#include <stdio.h>
#include <string.h>

#include "version.h"

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
	fprintf(out,
		"\n"
		"Autostart mode (tracebox followed by perfetto's own arguments, e.g.\n"
		"`tracebox -t 10s -o trace.pftrace sched/sched_switch`) records with private\n"
		"traced, traced_probes and traced_perf children, as Perfetto's tracebox does;\n"
		"it becomes available when those applets are in the list above.\n");
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
			fprintf(stderr, "tracebox: unknown applet '%s' (see tracebox --help)\n", argv[2]);
			return 2;
		}
		char help[] = "--help";
		char *hargv[] = {argv[2], help, NULL};
		return run_applet(a, 2, hargv);
	}
	a = tracebox_find_applet(arg);
	if (a)
		return run_applet(a, argc - 1, argv + 1);
	fprintf(stderr, "tracebox: unknown applet '%s' (see tracebox --help)\n", arg);
	return 2;
}
