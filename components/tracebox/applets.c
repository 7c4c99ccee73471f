/*
 * The applet table. A new applet is one line here plus its component; it is
 * added only when it really works, so `tracebox --help` never lists a stub.
 * Names are Perfetto's: traced, traced_probes, traced_perf, perfetto,
 * trace_processor_shell (alias trace_processor), traceconv.
 */
#include "tracebox.h"

#include <string.h>

#include "perf.h"
#include "perfetto_cmd.h"
#include "probes.h"
#include "trace_processor.h"
#include "traceconv.h"
#include "traced.h"

const struct tracebox_applet tracebox_applets[] = {
    {"perfetto", "record a trace (Perfetto's command line client)", tracebox_perfetto_main},
    {"trace_processor_shell", "SQL over Perfetto protobuf and JSON traces",
     trace_processor_shell_main},
    {"traceconv", "convert traces: folded stacks, textproto to binary", traceconv_main},
    {"traced", "the tracing service", traced_main},
    {"traced_probes", "ftrace, process and system stats data sources", traced_probes_main},
    {"traced_perf", "callstack sampling data source", traced_perf_main},
    {"trigger_perfetto", "activate trace triggers (trigger_config) on the service",
     perfetto_cmd_trigger_main},
    {"skill", "the agent skill (SKILL.md) teaching coding agents to record and query traces",
     tracebox_skill_main},
    {NULL, NULL, NULL},
};

/* Other names an applet answers to (argv[0] symlinks, Perfetto's aliases). */
static const struct {
	const char *alias, *name;
} aliases[] = {
    {"trace_processor", "trace_processor_shell"},
};

const struct tracebox_applet *tracebox_find_applet(const char *name)
{
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcmp(name, aliases[i].alias) == 0)
			name = aliases[i].name;
	for (const struct tracebox_applet *a = tracebox_applets; a->name; a++)
		if (strcmp(a->name, name) == 0)
			return a;
	return NULL;
}
