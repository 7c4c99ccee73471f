/*
 * tracebox: the multi-call binary's applet table.
 *
 * Each applet is `int <component>_main(int argc, char **argv)` in its own
 * component; this component only knows their names and dispatches to them on
 * basename(argv[0]) or on argv[1], the way Perfetto's tracebox does.
 */
#ifndef TB_TRACEBOX_H
#define TB_TRACEBOX_H

struct tracebox_applet {
	const char *name;
	const char *summary; /* one line for `tracebox --help` */
	int (*main)(int argc, char **argv);
};

/* The registered applets, terminated by an entry with name == NULL. Only
 * applets that work are registered. */
extern const struct tracebox_applet tracebox_applets[];

/* The applet called `name` (aliases included), or NULL. */
const struct tracebox_applet *tracebox_find_applet(const char *name);

/* The perfetto applet, with tracebox's --report (traceconv writes it). */
int tracebox_perfetto_main(int argc, char **argv);
/* The `skill` applet (skill.c): print the embedded agent skill, or write it
 * as DIR/tracebox/SKILL.md with --install DIR. Returns the exit code. */
int tracebox_skill_main(int argc, char **argv);

/* main() of the binary: dispatch, --help, --version. Returns the exit code. */
int tracebox_main(int argc, char **argv);

#endif /* TB_TRACEBOX_H */
