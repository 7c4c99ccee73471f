/*
 * probes: traced_probes, the producer that records the kernel: linux.ftrace,
 * linux.process_stats, linux.sys_stats, linux.system_info and
 * linux.systemd_journald. Its one entry point is the applet; everything
 * else is private (probes_int.h). See README.md.
 */
#ifndef TB_PROBES_H
#define TB_PROBES_H

/* The traced_probes applet: connect to the producer socket as
 * "perfetto.traced_probes", register linux.ftrace, linux.process_stats,
 * linux.sys_stats and linux.system_info, write "1" to $TRACED_PROBES_NOTIFY_FD once they are
 * registered, serve sessions until SIGINT/SIGTERM or the service goes away.
 * Flags: --background, --reset-ftrace, --cleanup-after-crash, --version.
 * Returns the exit status. Main thread only. */
int traced_probes_main(int argc, char **argv);

#endif /* TB_PROBES_H */
