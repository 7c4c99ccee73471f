/*
 * Private declarations shared by the perfetto_cmd files: config loading and
 * finishing (config.c), the output file (output.c) and the consumer session
 * on the service (session.c). perfetto_cmd.c holds the flags and the flow.
 */
#ifndef TB_PERFETTO_CMD_INT_H
#define TB_PERFETTO_CMD_INT_H

#include <signal.h>
#include <sys/types.h>

#include "perfetto_cmd.h"
#include "protos.h"

#define PERFETTO_CMD_TAG "perfetto_cmd"
/* Largest config file read (-c). */
#define PERFETTO_CMD_MAX_CONFIG_BYTES ((size_t)16 * 1024 * 1024)

/* ---- config.c ---------------------------------------------------------- */

enum perfetto_cmd_txt { PERFETTO_CMD_BINARY, PERFETTO_CMD_TXT, PERFETTO_CMD_TXT_LOSSY };

/* Decode the config bytes read from name (binary, or text per mode) into a
 * TraceConfig allocated with protos_allocator(); free it with
 * perfetto_cmd_config_free. On failure returns -EINVAL with the message
 * lines (Perfetto's wording, '\n' separated, including the --txt hint for a
 * printable config given without --txt) in err. */
int perfetto_cmd_config_decode(const char *name, const uint8_t *raw, size_t len,
                               enum perfetto_cmd_txt mode, Perfetto__Protos__TraceConfig **out,
                               struct tb_err *err);
void perfetto_cmd_config_free(Perfetto__Protos__TraceConfig *cfg);

/* Fill a random trace UUID (trace_uuid_msb/lsb) if both are unset. */
void perfetto_cmd_config_set_uuid(Perfetto__Protos__TraceConfig *cfg);

/* What the recorder tells the linux.perf data sources, as words of their
 * DataSourceConfig.legacy_config (Perfetto's free-form text for a
 * producer, which its own traced_perf ignores; appended to one the config
 * already has):
 *   workload_pid=PID  only to sources whose config sets no scope: sample
 *                     the workload's process and the tasks it creates
 *   no_symbolize      --no-symbolize: no ModuleSymbols at the end
 *   control=PATH      --control: start disabled, take enable/disable from
 *                     the recorder's socket at PATH (control.c) */
struct perfetto_cmd_perf_directives {
	pid_t workload_pid; /* 0: none */
	bool no_symbolize;
	const char *control; /* NULL: none */
};
/* Add the directives to every linux.perf source of cfg. Returns how many
 * linux.perf sources there are. */
size_t perfetto_cmd_config_perf_directives(Perfetto__Protos__TraceConfig *cfg,
                                           const struct perfetto_cmd_perf_directives *d);
/* The sampling rate of the first linux.perf source (Hz; its default 10
 * when it sets none; 0 when it samples by period or there is none). */
uint64_t perfetto_cmd_config_sample_hz(const Perfetto__Protos__TraceConfig *cfg);

/* The config as sent to the service: output_path removed (the client opens
 * the file and passes its fd with EnableTracing, see README.md), everything
 * else (unknown fields too) kept. Returns a tb_malloc'd buffer. */
uint8_t *perfetto_cmd_config_pack_for_service(Perfetto__Protos__TraceConfig *cfg, size_t *len);

/* ---- output.c ---------------------------------------------------------- */

/* The trace file being written: a temporary file beside the target,
 * renamed over it once complete (so an interrupted capture never leaves a
 * truncated file), or stdout for "-". Packets are framed as Trace.packet
 * (tag 0x0A, varint length). max_bytes > 0 caps the file: packets that
 * would cross it are dropped and counted. (With write_into_file traced
 * writes and caps the file through fd, and the client passes 0.) */
struct perfetto_cmd_out {
	char *path;     /* target; NULL for stdout */
	char *tmp_path; /* temporary file, NULL for stdout */
	int fd;
	bool anon; /* fd is an unnamed O_TMPFILE: tmp_path is only a template yet */
	bool no_clobber;
	uint64_t max_bytes;
	uint64_t bytes, packets, dropped;
	uint8_t *buf;
	size_t buf_len;
};

/* Open the output ("-" = stdout). With no_clobber an existing path is an
 * error. Returns 0 or a negative code with a message in err. */
int perfetto_cmd_out_open(struct perfetto_cmd_out *o, const char *path, bool no_clobber,
                          uint64_t max_bytes, struct tb_err *err);
/* Append one packet (its TracePacket bytes). Returns 0 or -errno. */
int perfetto_cmd_out_packet(struct perfetto_cmd_out *o, const uint8_t *p, size_t n,
                            struct tb_err *err);
/* Flush, fsync-free close, and rename onto the target. 0 or -errno. */
int perfetto_cmd_out_finish(struct perfetto_cmd_out *o, struct tb_err *err);
/* Close and remove the temporary file (no-op after finish). */
void perfetto_cmd_out_abort(struct perfetto_cmd_out *o);
/* The capture broke off (the service died or stopped writing): flush, cut
 * the file after its last whole Trace.packet record and rename it onto the
 * target as finish does; *kept is its size. -ENODATA (the file removed as
 * by abort) when no whole record was written, or when the output is stdout
 * (nothing to cut: what went out stays out). */
int perfetto_cmd_out_finish_partial(struct perfetto_cmd_out *o, uint64_t *kept, struct tb_err *err);

struct perfetto_cmd_control; /* control.c */

/* ---- workload.c -------------------------------------------------------- */

/* The command of a gated capture (`-- CMD [ARGS...]`), run like a shell
 * runs a simple command. Main thread only. */
struct perfetto_cmd_workload {
	char *const *argv;   /* NULL-terminated, borrowed */
	pid_t pid;           /* > 0 while running */
	bool started;        /* start was called (it may have failed) */
	bool exited;         /* status is final */
	int status;          /* exit code, 128 + signal, 126/127 (cannot run / not found) */
	sigset_t child_mask; /* the signal mask the command starts with */
	bool blocked;        /* block_signals ran */
	int gate_fd;         /* prepared: the pipe that lets the child exec; -1 */
};

void perfetto_cmd_workload_init(struct perfetto_cmd_workload *w, char *const *argv);
/* Block SIGINT, SIGTERM and SIGCHLD for the rest of the run (loops take them
 * through signalfds; none is lost between loops) and remember the previous
 * mask for the command. Once only (later calls do nothing). 0 or -errno. */
int perfetto_cmd_workload_block_signals(struct perfetto_cmd_workload *w);
/* Fork the command's process now and hold it before exec(2), so its pid is
 * known before the session starts (the perf data source follows it from
 * its first instruction). Signals must be blocked first. A fork failure
 * leaves it unprepared (start then forks as usual). Returns the pid or -1. */
pid_t perfetto_cmd_workload_prepare(struct perfetto_cmd_workload *w);
/* Run the command: release the prepared process, or fork and exec it
 * (PATH search) with inherited stdio. Once only; a failure to fork ends it
 * with status 126 (message on stderr); a failed exec is reported by the
 * child, which exits 127 or 126. */
void perfetto_cmd_workload_start(struct perfetto_cmd_workload *w);
/* The capture was interrupted by signo before the command started: it
 * never will, its status is 128 + signo. */
void perfetto_cmd_workload_cancel(struct perfetto_cmd_workload *w, int signo);
/* Collect the command's exit without blocking (call on SIGCHLD). True once
 * it has exited. */
bool perfetto_cmd_workload_reap(struct perfetto_cmd_workload *w);
/* In a SIGINT/SIGTERM callback of loop l: pass signo on to the running
 * command unless the terminal sent it (then the command got it too). */
void perfetto_cmd_workload_forward(struct perfetto_cmd_workload *w, struct loop *l, int signo);
/* Wait for the started command to exit, forwarding SIGINT/SIGTERM and
 * answering control (may be NULL) commands meanwhile. Returns its status. */
int perfetto_cmd_workload_wait(struct perfetto_cmd_workload *w,
                               struct perfetto_cmd_control *control);

/* ---- health.c ---------------------------------------------------------- */

/* What a trace file holds of perf sampling (see health.c). */
struct perfetto_cmd_trace_counts {
	uint64_t samples;                  /* PerfSamples of a task, not skipped */
	uint64_t samples_skipped;          /* skipped, other than NOT_IN_SCOPE */
	uint64_t samples_without_callsite; /* samples with no callstack */
	uint64_t lost_records;             /* sum of kernel_records_lost */
};
/* Count the trace at path. Returns 0 or -errno (err set). */
int perfetto_cmd_trace_counts(const char *path, struct perfetto_cmd_trace_counts *c,
                              struct tb_err *err);
/* The same over a Trace in memory (tests). */
void perfetto_cmd_trace_counts_mem(const uint8_t *p, size_t n, struct perfetto_cmd_trace_counts *c);

/* ---- control.c --------------------------------------------------------- */

struct perfetto_cmd_control;
/* Parse "fifo:CTL[,ACK]", make and open the fifos, make the private socket
 * the linux.perf instances connect to. NULL with err set on failure. */
struct perfetto_cmd_control *perfetto_cmd_control_new(const char *spec, struct tb_err *err);
/* Remove what _new made (fifos it created, the socket and its folder). */
void perfetto_cmd_control_free(struct perfetto_cmd_control *c);
/* The socket path for the linux.perf sources' control= directive. */
const char *perfetto_cmd_control_socket(const struct perfetto_cmd_control *c);
/* $TRACEBOX_CONTROL for the workload: "fifo:CTL[,ACK]", absolute. */
void perfetto_cmd_control_env(const struct perfetto_cmd_control *c, char *out, size_t cap);
/* Take commands on loop l: expected linux.perf instances will connect;
 * on_stop(ctx) ends the capture ("stop"). Returns 0 or -EIO. */
int perfetto_cmd_control_attach(struct perfetto_cmd_control *c, struct loop *l, size_t expected,
                                void (*on_stop)(void *ctx), void *ctx);
void perfetto_cmd_control_detach(struct perfetto_cmd_control *c);
/* Every data source started: "enable" may be carried out. */
void perfetto_cmd_control_started(struct perfetto_cmd_control *c);
/* The capture is over: commands are acknowledged without effect. */
void perfetto_cmd_control_stopped(struct perfetto_cmd_control *c);

/* ---- session.c --------------------------------------------------------- */

struct perfetto_cmd_session_opts {
	const char *socket;    /* consumer socket name */
	bool same_uid_service; /* refuse a service that runs as another uid */
	const uint8_t *config; /* binary TraceConfig */
	size_t config_len;
	struct perfetto_cmd_out *out;
	/* write_into_file: the service writes into out->fd (passed with
	 * EnableTracing); nothing is read back. */
	bool write_into_file;
	int notify_fd; /* -1, or written one status byte once all data sources
	                * started (ObserveEvents) */
	/* A gated capture: the command starts once every data source started
	 * (or after PERFETTO_CMD_WORKLOAD_START_TIMEOUT_MS), its exit stops the
	 * session, SIGINT/SIGTERM go to it. NULL: none. */
	struct perfetto_cmd_workload *workload;
	/* Non-NULL: set to the data the service lost (the session's buffers'
	 * chunks_overwritten + chunks_discarded + abi_violations, from
	 * GetTraceStats once the session ended). */
	uint64_t *lost;
	/* Non-NULL: set when the workload's exit is what ended the session
	 * (not the duration, the size cap, a signal or a control "stop"). */
	bool *ended_by_workload;
	/* --control, or NULL; perf_sources: linux.perf instances that will
	 * connect to it. */
	struct perfetto_cmd_control *control;
	size_t perf_sources;
};

/* How long a gated capture waits for all_data_sources_started before it
 * runs the workload anyway. */
#define PERFETTO_CMD_WORKLOAD_START_TIMEOUT_MS 10000

/* Record one session on a new loop: connect, bind, EnableTracing, wait for
 * the end (duration or SIGINT/SIGTERM -> Flush + DisableTracing), read the
 * buffers into out (unless write_into_file), FreeBuffers. Returns 0, or a
 * negative code with one line in err: -EPIPE when the service went away
 * during the session, -EREMOTEIO when it ended the session with an error
 * (both: the output may hold a usable beginning of the trace). */
int perfetto_cmd_session_run(const struct perfetto_cmd_session_opts *o, struct tb_err *err);

/* ---- trigger.c --------------------------------------------------------- */

/* ActivateTriggers{names} on the producer socket, as a producer named
 * perfetto_cmd_producer; waits (10 s at most) for the service's answer.
 * Returns 0 or a negative code with one line in err. */
int perfetto_cmd_activate_triggers(const char *socket, char *const *names, size_t n,
                                   struct tb_err *err);

/* ---- query.c ----------------------------------------------------------- */

/* --query / --query-raw: QueryServiceState on socket, printed to stdout as
 * text (raw: the TracingServiceState bytes). Returns 0 or a negative code
 * with one line in err. Applet-only (writes stdout). */
int perfetto_cmd_query_run(const char *socket, bool raw, bool verbose, struct tb_err *err);

#endif /* TB_PERFETTO_CMD_INT_H */
