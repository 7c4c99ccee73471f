/*
 * perf: traced_perf, the producer of Perfetto's linux.perf data source:
 * perf_event_open sampling on every CPU (or one workload's tasks), ring
 * buffers drained on a timer, user stacks unwound from frame pointers or
 * DWARF CFI, and PerfSample packets with interned callstacks written as
 * Perfetto's traced_perf writes them (compat §3.6, §3.8). README.md has the
 * design; perf_int.h the internals, which only this folder and its tests
 * use.
 */
#ifndef TB_PERF_H
#define TB_PERF_H

/* The traced_perf applet: the producer "perfetto.traced_perf" serving the
 * linux.perf data source on $PERFETTO_PRODUCER_SOCK_NAME. Flags:
 * --background, --version, --help. Writes "1" to $TRACED_PERF_NOTIFY_FD once
 * its data source is registered. Runs its own loop until SIGINT/SIGTERM;
 * returns the process exit status (0, or 1 on a bad flag or setup error). */
int traced_perf_main(int argc, char **argv);

#endif /* TB_PERF_H */
