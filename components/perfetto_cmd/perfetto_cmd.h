/*
 * perfetto_cmd: the `perfetto` command line client (Perfetto's
 * src/perfetto_cmd), the consumer that records a trace.
 *
 * It builds a TraceConfig (a binary or text config file, or the "light
 * config" made from -t/-b/-s/-a and positional ftrace events), connects to
 * the service's consumer socket, binds ConsumerPort, calls EnableTracing,
 * turns SIGINT/SIGTERM into a graceful stop, reads the buffers back and
 * writes them as a Trace proto file. tracebox's autostart mode runs the same
 * client with hooks that start and stop private service processes. See
 * README.md for the flow, the output file rules and the gaps.
 */
#ifndef TB_PERFETTO_CMD_H
#define TB_PERFETTO_CMD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

/* Ways to bend the client for tracebox's autostart mode. Every member is
 * optional. */
struct perfetto_cmd_hooks {
	/* Printed after the client's own usage text. */
	const char *usage_extra;
	/* Called once, after the command line is parsed, the config built and
	 * the output opened, and after -d/-D put the client in the background
	 * (so services end up children of the recording process), before
	 * connecting. Returns 0, or a negative code with a message in err
	 * (the client then exits with status 1). */
	int (*start_services)(void *ctx, struct tb_err *err);
	/* Called before the recording process returns, if start_services was
	 * called (also when it failed). */
	void (*stop_services)(void *ctx);
	/* --report PATH: write the HTML report of the finished trace at
	 * trace_path to report_path (the layers below the applets cannot load
	 * a trace; tracebox passes traceconv's). Returns 0, or a negative code
	 * with a message in err. NULL: --report is refused. */
	int (*report)(void *ctx, const char *trace_path, const char *report_path,
	              struct tb_err *err);
	void *ctx;
	/* The services are private to this uid (autostart's own sockets):
	 * refuse a service on them that runs as another uid. */
	bool private_sockets;
};

/* The applet: `perfetto [flags] [ftrace_group/event | atrace_category ...]`.
 * Returns the process exit status. Main thread only; installs signal
 * handling and may fork (-d, -D). */
int perfetto_cmd_main(int argc, char **argv);

/* The trigger_perfetto applet: `trigger_perfetto TRIGGER...` activates the
 * triggers on the service (ProducerPort ActivateTriggers). Exit status. */
int perfetto_cmd_trigger_main(int argc, char **argv);

/* perfetto_cmd_main with hooks (NULL: none). */
int perfetto_cmd_run(int argc, char **argv, const struct perfetto_cmd_hooks *hooks);

/* The index in argv of the "--" that ends perfetto's arguments and starts
 * the workload of a gated capture, or argc if there is none. A "--" that is
 * an option's value (`-o --`) does not count. Pure. */
int perfetto_cmd_workload_split(int argc, char **argv);

/* ---- light config (config.c) ---------------------------------------------- */

/* The flags of Perfetto's light config. NULL strings take the defaults
 * (time "10s", buffer "32mb", no max file size). */
struct perfetto_cmd_light_opts {
	const char *time;          /* -t N[ms,s,m,h] */
	const char *buffer;        /* -b N[kb,mb,gb,k,m,g] */
	const char *max_file_size; /* -s N[kb,mb,gb,k,m,g] */
	const char *const *apps;   /* -a NAME, repeatable */
	size_t n_apps;
	const char *const *events; /* positional: group/event or atrace category */
	size_t n_events;
};

/* Encode the light config of o as a binary TraceConfig (Perfetto's
 * CreateConfigFromOptions): duration_ms, max_file_size_bytes,
 * flush_period_ms = 30000, write_into_file if -s, one buffer of size_kb,
 * data sources linux.ftrace (ftrace_events for words with '/', atrace
 * categories for the others, atrace apps, symbolize_ksyms), then
 * linux.process_stats and linux.system_info on buffer 0 (plus
 * android.surfaceflinger.frametimeline for "gfx" and linux.sys_stats disk
 * stats for "disk"). On success stores a tb_malloc'd buffer in *out (caller
 * frees) and returns 0; returns -EINVAL with Perfetto's message
 * ("--time argument is invalid", ...) in err. Pure, any thread. */
int perfetto_cmd_light_config(const struct perfetto_cmd_light_opts *o, uint8_t **out, size_t *len,
                              struct tb_err *err);

/* Parse a -t value to milliseconds ("0" and "" are 0). 0 or -EINVAL. */
int perfetto_cmd_parse_time_ms(const char *s, uint64_t *ms);
/* Parse a -b/-s value to KiB ("0" and "" are 0). 0 or -EINVAL. */
int perfetto_cmd_parse_size_kb(const char *s, uint64_t *kb);

#endif /* TB_PERFETTO_CMD_H */
