/*
 * One recording session of the perfetto client, as a consumer of the
 * service (ConsumerPort over components/ipc), on its own event loop:
 *
 *   connect ─▶ BindService("ConsumerPort") ─▶ [ObserveEvents(all data
 *      │          sources started), for --notify-fd / -D]
 *      │        ─▶ EnableTracing(config [+ the output fd: write_into_file])
 *      ▼
 *   EnableTracing reply arrives when the session ends (duration elapsed,
 *   max_file_size_bytes reached, or SIGINT/SIGTERM here ─▶ Flush ─▶
 *   DisableTracing); {error} fails the run
 *      ▼
 *   write_into_file: the service already wrote the file ─▶ FreeBuffers
 *   else ReadBuffers (streamed; slices joined until last_slice_for_packet,
 *   each packet appended to the output) ─▶ FreeBuffers ─▶ done
 *
 * A second SIGINT/SIGTERM abandons the capture.
 *
 * A gated capture (opts.workload) always observes all_data_sources_started
 * and starts the workload on it (or on a timeout); the workload's exit
 * stops the session like a signal does, and SIGINT/SIGTERM go to the
 * workload instead. With opts.lost the loss counters are fetched
 * (GetTraceStats) between the end of the session and the read back.
 */
#include "perfetto_cmd_int.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "ipc.h"
#include "pb.h"
#include "pb_fields.h"

/* Largest packet accepted from ReadBuffers; bigger ones are dropped. */
#define MAX_PACKET_BYTES ((size_t)64 * 1024 * 1024)
/* Flush flags: reason "trace stop" (2), initiator perfetto_cmd (2). */
#define FLUSH_FLAGS_STOP (2u | 2u << 4)

struct session {
	const struct perfetto_cmd_session_opts *o;
	struct loop *l;
	struct ipc_client *c;
	struct ipc_svc *svc;
	struct tb_err *err;
	bool stopping, disabled, done, dropping, observing;
	int signals;
	uint64_t start_timer; /* gated capture: workload start timeout */
	int notify_fd;        /* -1 once written */
	VEC(uint8_t) partial;
	uint64_t oversized;
};

static void finish(struct session *s, int rc)
{
	if (s->done)
		return;
	s->done = true;
	loop_quit(s->l, rc);
}

static void fail_code(struct session *s, int code, const char *msg)
{
	if (s->done)
		return;
	tb_err_set(s->err, code, "%s", msg);
	finish(s, code);
}

static void fail(struct session *s, const char *msg)
{
	fail_code(s, -EIO, msg);
}

/* The service's end of the connection closed before the session was over:
 * traced died (or was killed). -EPIPE tells the caller to keep what the
 * trace file already holds. */
static void service_lost(struct session *s)
{
	fail_code(s, -EPIPE,
	          "the tracing service went away during the capture (traced died or was killed)");
}

static int64_t invoke_fd(struct session *s, const char *method, const void *args, size_t len,
                         int fd, ipc_reply_fn cb)
{
	int64_t id = ipc_client_invoke(s->c, s->svc, method, args, len, fd, false, cb, s);
	if (id < 0) {
		char msg[128];
		snprintf(msg, sizeof msg, "cannot send %s to the tracing service", method);
		fail(s, msg);
	}
	return id;
}

static int64_t invoke(struct session *s, const char *method, const void *args, size_t len,
                      ipc_reply_fn cb)
{
	return invoke_fd(s, method, args, len, -1, cb);
}

static void notify(struct session *s, uint8_t status)
{
	if (s->notify_fd < 0)
		return;
	(void)tb_write_all(s->notify_fd, &status, 1);
	tb_close(&s->notify_fd);
}

static void on_free(void *ctx, const struct ipc_reply *r)
{
	finish(ctx, 0);
}

static void on_read(void *ctx, const struct ipc_reply *r)
{
	struct session *s = ctx;
	struct pb_reader rd, sr;
	struct pb_field f = {0}, g = {0};

	if (!r->success) {
		if (!ipc_client_connected(s->c))
			service_lost(s);
		else
			fail(s, "ReadBuffers failed");
		return;
	}
	pb_reader_init(&rd, r->data, r->len);
	while (pb_next(&rd, &f)) {
		bool last = false;
		if (f.id != PB_F_ReadBuffersResponse_slices || f.wire != PB_WIRE_LEN)
			continue;
		pb_reader_init_field(&sr, &f);
		while (pb_next(&sr, &g)) {
			if (g.id == PB_F_ReadBuffersResponse_Slice_data && g.wire == PB_WIRE_LEN &&
			    !s->dropping) {
				if (s->partial.len + g.len > MAX_PACKET_BYTES ||
				    vec_try_reserve(&s->partial, g.len)) {
					s->dropping = true;
					vec_release(&s->partial);
					continue;
				}
				memcpy(s->partial.data + s->partial.len, g.data, g.len);
				s->partial.len += g.len;
			} else if (g.id == PB_F_ReadBuffersResponse_Slice_last_slice_for_packet) {
				last = g.val != 0;
			}
		}
		if (!last)
			continue;
		if (s->dropping) {
			s->oversized++;
		} else if (perfetto_cmd_out_packet(
		               s->o->out, s->partial.data ? s->partial.data : (const uint8_t *)"",
		               s->partial.len, s->err)) {
			finish(s, -EIO);
			return;
		}
		s->dropping = false;
		vec_clear(&s->partial);
	}
	if (r->has_more)
		return;
	if (s->oversized)
		log_warn(PERFETTO_CMD_TAG, "dropped %" PRIu64 " packets over %zu bytes",
		         s->oversized, MAX_PACKET_BYTES);
	invoke(s, "FreeBuffers", NULL, 0, on_free);
}

/* The session ended: read the trace back (or, write_into_file, just free
 * the buffers). */
static void collect(struct session *s)
{
	if (s->o->write_into_file)
		invoke(s, "FreeBuffers", NULL, 0, on_free);
	else
		invoke(s, "ReadBuffers", NULL, 0, on_read);
}

static void on_final_stats(void *ctx, const struct ipc_reply *r)
{
	struct session *s = ctx;
	Perfetto__Protos__GetTraceStatsResponse *resp = NULL;
	uint64_t lost = 0;

	if (r->success)
		resp = perfetto__protos__get_trace_stats_response__unpack(
		    protos_allocator(), r->len, r->data ? r->data : (const uint8_t *)"");
	if (resp && resp->trace_stats) {
		for (size_t i = 0; i < resp->trace_stats->n_buffer_stats; i++) {
			const Perfetto__Protos__TraceStats__BufferStats *b =
			    resp->trace_stats->buffer_stats[i];
			lost += b->chunks_overwritten + b->chunks_discarded + b->abi_violations;
		}
	}
	*s->o->lost = lost;
	if (resp)
		protobuf_c_message_free_unpacked(&resp->base, protos_allocator());
	collect(s);
}

static void start_workload(struct session *s)
{
	if (!s->o->workload)
		return;
	if (s->start_timer)
		loop_cancel_timer(s->l, s->start_timer);
	s->start_timer = 0;
	perfetto_cmd_workload_start(s->o->workload);
}

static void on_start_timeout(struct loop *l, uint64_t id, void *ctx)
{
	struct session *s = ctx;
	s->start_timer = 0;
	log_warn(PERFETTO_CMD_TAG,
	         "not every data source started within %d ms; running the "
	         "workload anyway",
	         PERFETTO_CMD_WORKLOAD_START_TIMEOUT_MS);
	start_workload(s);
}

static void on_enable(void *ctx, const struct ipc_reply *r)
{
	struct session *s = ctx;
	Perfetto__Protos__EnableTracingResponse *resp;

	s->disabled = true;
	if (!r->success) {
		/* A disconnect fails every pending call too: say which it was. */
		if (!ipc_client_connected(s->c))
			service_lost(s);
		else
			fail(s, "the tracing service rejected EnableTracing");
		return;
	}
	resp = perfetto__protos__enable_tracing_response__unpack(
	    protos_allocator(), r->len, r->data ? r->data : (const uint8_t *)"");
	if (resp && resp->error && resp->error[0]) {
		char msg[TB_ERR_MSG_MAX];
		snprintf(msg, sizeof msg, "Service error: %s", resp->error);
		notify(s, 1);
		fail_code(s, -EREMOTEIO, msg);
	} else if (s->o->lost) {
		invoke(s, "GetTraceStats", NULL, 0, on_final_stats);
	} else {
		collect(s);
	}
	if (resp)
		protobuf_c_message_free_unpacked(&resp->base, protos_allocator());
}

/* ObserveEvents stream: all_data_sources_started answers --notify-fd. A
 * service without ObserveEvents fails the call; then the session existing
 * (GetTraceStats answered) has to do. */
static void on_observe(void *ctx, const struct ipc_reply *r)
{
	struct session *s = ctx;
	struct pb_field f = {0}, g = {0};
	if (!r->success) {
		s->observing = false;
		return;
	}
	if (pb_find_field(r->data, r->len, PB_F_ObserveEventsResponse_events, &f) == 1 &&
	    f.wire == PB_WIRE_LEN &&
	    pb_find_field(f.data, f.len, PB_F_ObservableEvents_all_data_sources_started, &g) == 1 &&
	    g.val && !s->disabled) {
		notify(s, 0);
		start_workload(s);
		if (s->o->control)
			perfetto_cmd_control_started(s->o->control);
	}
}

static void on_started(void *ctx, const struct ipc_reply *r)
{
	struct session *s = ctx;
	if (!s->disabled && !s->observing) {
		notify(s, 0);
		start_workload(s);
		if (s->o->control)
			perfetto_cmd_control_started(s->o->control);
	}
}

static void on_flushed(void *ctx, const struct ipc_reply *r)
{
	struct session *s = ctx;
	if (!r->success)
		log_warn(PERFETTO_CMD_TAG, "final flush unsuccessful");
	if (!s->disabled)
		invoke(s, "DisableTracing", NULL, 0, NULL);
}

/* Flush, then DisableTracing: the graceful end of the session. */
static void stop(struct session *s)
{
	s->stopping = true;
	{
		uint8_t args[16], *p = args;
		*p++ = 0x08; /* timeout_ms: 0 = the service's default */
		*p++ = 0x00;
		*p++ = 0x10; /* flags */
		p = pb_encode_varint(p, FLUSH_FLAGS_STOP);
		invoke(s, "Flush", args, (size_t)(p - args), on_flushed);
	}
}

static void on_signal(struct loop *l, int signo, void *ctx)
{
	struct session *s = ctx;
	struct perfetto_cmd_workload *w = s->o->workload;
	if (w && w->started && !w->exited) {
		perfetto_cmd_workload_forward(w, l, signo); /* its exit stops us */
		return;
	}
	if (w)
		perfetto_cmd_workload_cancel(w, signo);
	if (++s->signals == 1 && s->disabled)
		return; /* already reading the trace back */
	if (s->signals > 1 || !s->svc) {
		fail(s, "interrupted");
		return;
	}
	log_info(PERFETTO_CMD_TAG, "SIGINT/SIGTERM received: disabling tracing.");
	stop(s);
}

static void on_child(struct loop *l, int signo, void *ctx)
{
	struct session *s = ctx;
	if (!perfetto_cmd_workload_reap(s->o->workload) || s->disabled || s->stopping || !s->svc)
		return;
	log_info(PERFETTO_CMD_TAG, "the workload exited: disabling tracing.");
	if (s->o->ended_by_workload)
		*s->o->ended_by_workload = true;
	stop(s);
}

/* --control "stop": end the capture as the workload's exit would. */
static void on_control_stop(void *ctx)
{
	struct session *s = ctx;
	if (s->disabled || s->stopping || !s->svc)
		return;
	log_info(PERFETTO_CMD_TAG, "--control stop: disabling tracing.");
	stop(s);
}

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	struct session *s = ctx;
	const struct perfetto_cmd_session_opts *o = s->o;
	uint8_t *req, *p;
	size_t n;

	if (!ok) {
		fail(s, "the tracing service has no ConsumerPort");
		return;
	}
	s->svc = svc;
	/* EnableTracingRequest { trace_config (1) = the config bytes } */
	req = tb_malloc(o->config_len + 11);
	req[0] = 0x0A;
	p = pb_encode_varint(req + 1, o->config_len);
	memcpy(p, o->config, o->config_len);
	n = (size_t)(p - req) + o->config_len;
	if (s->notify_fd >= 0 || o->workload) {
		/* ObserveEventsRequest { events_to_observe: TYPE_ALL_DATA_SOURCES_STARTED } */
		static const uint8_t observe[] = {0x08, 0x02};
		s->observing = invoke(s, "ObserveEvents", observe, sizeof observe, on_observe) > 0;
	}
	if (o->write_into_file) {
		/* Like Perfetto, the service writes the trace into our fd. */
		int fd = fcntl(o->out->fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			fail(s, "cannot duplicate the output file descriptor");
			tb_free(req);
			return;
		}
		if (invoke_fd(s, "EnableTracing", req, n, fd, on_enable) > 0)
			invoke(s, "GetTraceStats", NULL, 0, on_started);
	} else if (invoke(s, "EnableTracing", req, n, on_enable) > 0) {
		invoke(s, "GetTraceStats", NULL, 0, on_started);
	}
	tb_free(req);
	/* The start cap ran the workload before the service answered, and it
	 * has already exited (on_child had no session to stop then). */
	if (o->workload && o->workload->exited && !s->stopping) {
		log_info(PERFETTO_CMD_TAG, "the workload exited: disabling tracing.");
		if (o->ended_by_workload)
			*o->ended_by_workload = true;
		stop(s);
	}
}

static void on_disconnect(void *ctx, struct ipc_client *c)
{
	service_lost(ctx);
}

int perfetto_cmd_session_run(const struct perfetto_cmd_session_opts *o, struct tb_err *err)
{
	struct session s = {.o = o, .err = err, .notify_fd = o->notify_fd};
	struct ipc_client_ops ops = {.on_disconnect = on_disconnect};
	struct tb_err cerr = {0};
	int rc = -EIO;

	if (!(s.l = loop_new(err)))
		return -ENOMEM;
	if (loop_add_signal(s.l, SIGINT, on_signal, &s) ||
	    loop_add_signal(s.l, SIGTERM, on_signal, &s) ||
	    (o->workload && loop_add_signal(s.l, SIGCHLD, on_child, &s))) {
		rc = tb_err_set(err, -EINVAL, "%s", loop_err(s.l)->msg);
		goto out;
	}
	s.c = ipc_client_new(s.l, o->socket, &ops, &s, &cerr);
	if (!s.c) {
		rc = tb_err_set(err, -ECONNREFUSED,
		                "cannot connect to the tracing service at '%s' (%s): traced is not "
		                "running; start it with `tracebox traced &`, or record with "
		                "`tracebox -t 10s -o FILE ...` (autostart mode)",
		                o->socket, cerr.msg);
		goto out;
	}
	if (o->same_uid_service && ipc_client_peer_uid(s.c) != geteuid()) {
		rc = tb_err_set(err, -EPERM,
		                "the tracing service on '%s' runs as uid %d, not as ours (%d): "
		                "refusing it",
		                o->socket, (int)ipc_client_peer_uid(s.c), (int)geteuid());
		goto out;
	}
	if (!ipc_client_bind(s.c, "ConsumerPort", on_bind, &s)) {
		rc = tb_err_set(err, -ENOTCONN, "cannot talk to the tracing service at '%s'",
		                o->socket);
		goto out;
	}
	if (o->workload &&
	    !(s.start_timer = loop_add_timer(s.l, PERFETTO_CMD_WORKLOAD_START_TIMEOUT_MS, 0,
	                                     on_start_timeout, &s))) {
		rc = tb_err_set(err, -EIO, "%s", loop_err(s.l)->msg);
		goto out;
	}
	if (o->control && perfetto_cmd_control_attach(o->control, s.l, o->perf_sources,
	                                              on_control_stop, &s) < 0) {
		rc = tb_err_set(err, -EIO, "--control: %s", loop_err(s.l)->msg);
		goto out;
	}
	rc = loop_run(s.l);
	if (rc && !tb_err_is_set(err))
		tb_err_errno(err, rc, "event loop failed");
	if (rc == 0 && o->out->dropped)
		log_warn(PERFETTO_CMD_TAG, "max file size reached: %" PRIu64 " packets not written",
		         o->out->dropped);
out:
	if (rc)
		notify(&s, 1);
	if (o->control) {
		perfetto_cmd_control_stopped(o->control);
		perfetto_cmd_control_detach(o->control);
	}
	if (s.c)
		ipc_client_free(s.c);
	vec_release(&s.partial);
	loop_free(s.l);
	return rc;
}
