/*
 * query.c: `perfetto --query` / `--query-raw`. One QueryServiceState call on
 * the consumer socket; the streamed replies are merged (repeated fields
 * concatenate in protobuf) and printed: the raw TracingServiceState bytes,
 * or a human-readable summary in the spirit of Perfetto's (service version,
 * connected producers, registered data sources, tracing sessions). --long
 * keeps long names unshortened.
 */
#include "perfetto_cmd_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "ipc.h"
#include "pb.h"
#include "pb_fields.h"

struct query {
	struct loop *l;
	struct ipc_client *c;
	struct tb_err *err;
	VEC(uint8_t) state; /* the service_state fields of every reply */
	bool done;
};

static void q_finish(struct query *q, int rc, const char *msg)
{
	if (q->done)
		return;
	q->done = true;
	if (msg)
		tb_err_set(q->err, rc, "%s", msg);
	loop_quit(q->l, rc);
}

static void on_reply(void *ctx, const struct ipc_reply *r)
{
	struct query *q = ctx;
	struct pb_reader rd;
	struct pb_field f = {0};
	if (!r->success) {
		q_finish(q, -EIO, "QueryServiceState failed");
		return;
	}
	pb_reader_init(&rd, r->data, r->len);
	while (pb_next(&rd, &f))
		if (f.id == PB_F_QueryServiceStateResponse_service_state && f.wire == PB_WIRE_LEN)
			for (size_t i = 0; i < f.len; i++)
				vec_push(&q->state, f.data[i]);
	if (!r->has_more)
		q_finish(q, 0, NULL);
}

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	struct query *q = ctx;
	if (!ok) {
		q_finish(q, -EIO, "the tracing service has no ConsumerPort");
		return;
	}
	if (ipc_client_invoke(q->c, svc, "QueryServiceState", NULL, 0, -1, false, on_reply, q) < 0)
		q_finish(q, -EIO, "cannot send QueryServiceState to the tracing service");
}

static void on_disconnect(void *ctx, struct ipc_client *c)
{
	q_finish(ctx, -EIO, "the tracing service closed the connection");
}

static const char *str_or(const char *s, const char *dflt)
{
	return s && s[0] ? s : dflt;
}

static void print_state(const Perfetto__Protos__TracingServiceState *st, bool verbose)
{
	int w = verbose ? 0 : 40; /* name column; 0 = unshortened */
	printf("Not meant for machine consumption. Use --query-raw for scripts.\n\n");
	printf("Service: %s\n", str_or(st->tracing_service_version, "unknown"));
	printf("Tracing sessions: %d (started: %d)\n\n", st->num_sessions,
	       st->num_sessions_started);

	printf("PRODUCER PROCESSES CONNECTED:\n\n");
	printf("%-6s %-8s %-8s %-*s %s\n", "ID", "PID", "UID", w ? w : 1, "NAME", "SDK");
	printf("%-6s %-8s %-8s %-*s %s\n", "==", "===", "===", w ? w : 1, "====", "===");
	for (size_t i = 0; i < st->n_producers; i++) {
		const Perfetto__Protos__TracingServiceState__Producer *p = st->producers[i];
		printf("%-6d %-8d %-8d %-*.*s %s\n", p->id, p->pid, p->uid, w ? w : 1,
		       w ? w : 1 << 20, str_or(p->name, "-"), str_or(p->sdk_version, "-"));
	}

	printf("\nDATA SOURCES REGISTERED:\n\n");
	printf("%-*s %s\n", w ? w : 1, "NAME", "PRODUCER");
	printf("%-*s %s\n", w ? w : 1, "====", "========");
	for (size_t i = 0; i < st->n_data_sources; i++) {
		const Perfetto__Protos__TracingServiceState__DataSource *d = st->data_sources[i];
		const char *pname = "";
		for (size_t j = 0; j < st->n_producers; j++)
			if (st->producers[j]->id == d->producer_id)
				pname = str_or(st->producers[j]->name, "");
		printf("%-*.*s %d %s\n", w ? w : 1, w ? w : 1 << 20,
		       d->ds_descriptor ? str_or(d->ds_descriptor->name, "-") : "-", d->producer_id,
		       pname);
	}

	printf("\nTRACING SESSIONS:\n\n");
	printf("%-8s %-8s %-28s %-12s %-8s %-5s %s\n", "ID", "UID", "STATE", "BUF (#) KB",
	       "DUR (s)", "#DS", "NAME");
	printf("%-8s %-8s %-28s %-12s %-8s %-5s %s\n",
	       "==", "===", "=====", "==========", "=======", "===", "====");
	for (size_t i = 0; i < st->n_tracing_sessions; i++) {
		const Perfetto__Protos__TracingServiceState__TracingSession *s =
		    st->tracing_sessions[i];
		uint64_t kb = 0;
		char buf[32];
		for (size_t j = 0; j < s->n_buffer_size_kb; j++)
			kb += s->buffer_size_kb[j];
		snprintf(buf, sizeof buf, "(%zu) %" PRIu64, s->n_buffer_size_kb, kb);
		printf("%-8" PRIu64 " %-8d %-28s %-12s %-8u %-5u %s\n", s->id, s->consumer_uid,
		       str_or(s->state, "-"), buf, s->duration_ms / 1000, s->num_data_sources,
		       str_or(s->unique_session_name, ""));
	}
}

int perfetto_cmd_query_run(const char *socket, bool raw, bool verbose, struct tb_err *err)
{
	struct query q = {.err = err};
	struct ipc_client_ops ops = {.on_disconnect = on_disconnect};
	struct tb_err cerr = {0};
	Perfetto__Protos__TracingServiceState *st = NULL;
	int rc = -EIO;

	if (!(q.l = loop_new(err)))
		return -ENOMEM;
	q.c = ipc_client_new(q.l, socket, &ops, &q, &cerr);
	if (!q.c) {
		rc = tb_err_set(err, -ECONNREFUSED,
		                "cannot connect to the tracing service at '%s' (%s): traced is not "
		                "running",
		                socket, cerr.msg);
		goto out;
	}
	if (!ipc_client_bind(q.c, "ConsumerPort", on_bind, &q)) {
		rc = tb_err_set(err, -ENOTCONN, "cannot talk to the tracing service at '%s'",
		                socket);
		goto out;
	}
	if ((rc = loop_run(q.l)) != 0) {
		if (!tb_err_is_set(err))
			tb_err_errno(err, rc, "event loop failed");
		goto out;
	}
	if (raw) {
		if (q.state.len && tb_write_all(STDOUT_FILENO, q.state.data, q.state.len) != 0)
			rc = tb_err_errno(err, -errno, "cannot write to stdout");
		goto out;
	}
	st = perfetto__protos__tracing_service_state__unpack(
	    protos_allocator(), q.state.len, q.state.data ? q.state.data : (const uint8_t *)"");
	if (!st) {
		rc = tb_err_set(err, -EBADMSG, "cannot decode the service state");
		goto out;
	}
	print_state(st, verbose);
	fflush(stdout);
out:
	if (st)
		protobuf_c_message_free_unpacked(&st->base, protos_allocator());
	if (q.c)
		ipc_client_free(q.c);
	vec_release(&q.state);
	loop_free(q.l);
	return rc;
}
