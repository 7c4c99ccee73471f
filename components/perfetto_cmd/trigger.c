/*
 * Activating triggers, as Perfetto's TriggerProducer: connect to the
 * producer socket as "perfetto_cmd_producer", InitializeConnection, then
 * ActivateTriggers{trigger_names} (ProducerPort, compat §1.5 method 10).
 * Used by `perfetto` when the config has activate_triggers (it then records
 * nothing) and by the trigger_perfetto applet. We wait for the
 * ActivateTriggers reply (10 s at most), so success means the service has
 * the triggers.
 */
#include "perfetto_cmd_int.h"

#include <signal.h>
#include <stdio.h>

#include "ipc.h"
#include "pb.h"
#include "pb_fields.h"

#define TRIGGER_TIMEOUT_MS 10000

struct trig {
	struct loop *l;
	struct ipc_client *c;
	char *const *names;
	size_t n;
	struct tb_err *err;
};

static void on_activated(void *ctx, const struct ipc_reply *r)
{
	struct trig *t = ctx;
	if (!r->success)
		tb_err_set(t->err, -EIO, "the tracing service refused ActivateTriggers");
	loop_quit(t->l, r->success ? 0 : -EIO);
}

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	struct trig *t = ctx;
	struct ipc_client *c = t->c;
	struct pb_writer w;

	if (!ok) {
		tb_err_set(t->err, -EIO, "the tracing service has no ProducerPort");
		loop_quit(t->l, -EIO);
		return;
	}
	pb_writer_init_growable(&w);
	pb_put_string(&w, PB_F_InitializeConnectionRequest_producer_name, "perfetto_cmd_producer");
	ipc_client_invoke(c, svc, "InitializeConnection", pb_writer_data(&w), pb_writer_size(&w),
	                  -1, true, NULL, NULL);
	pb_writer_reset(&w);
	for (size_t i = 0; i < t->n; i++)
		pb_put_string(&w, PB_F_ActivateTriggersRequest_trigger_names, t->names[i]);
	if (ipc_client_invoke(c, svc, "ActivateTriggers", pb_writer_data(&w), pb_writer_size(&w),
	                      -1, false, on_activated, t) < 0) {
		tb_err_set(t->err, -EIO, "cannot send ActivateTriggers");
		loop_quit(t->l, -EIO);
	}
	pb_writer_release(&w);
}

static void on_timeout(struct loop *l, uint64_t id, void *ctx)
{
	struct trig *t = ctx;
	tb_err_set(t->err, -ETIMEDOUT, "the tracing service did not answer ActivateTriggers");
	loop_quit(l, -ETIMEDOUT);
}

static void on_disconnect(void *ctx, struct ipc_client *c)
{
	struct trig *t = ctx;
	tb_err_set(t->err, -EIO, "the tracing service closed the connection");
	loop_quit(t->l, -EIO);
}

int perfetto_cmd_activate_triggers(const char *socket, char *const *names, size_t n,
                                   struct tb_err *err)
{
	struct trig t = {.names = names, .n = n, .err = err};
	struct ipc_client_ops ops = {.on_disconnect = on_disconnect};
	struct ipc_client *c = NULL;
	struct tb_err cerr = {0};
	int rc;

	if (!(t.l = loop_new(err)))
		return -ENOMEM;
	c = t.c = ipc_client_new(t.l, socket, &ops, &t, &cerr);
	if (!c) {
		rc = tb_err_set(err, -ECONNREFUSED,
		                "cannot connect to the tracing service at '%s' (%s)", socket,
		                cerr.msg);
		goto out;
	}
	if (!ipc_client_bind(c, "ProducerPort", on_bind, &t) ||
	    !loop_add_timer(t.l, TRIGGER_TIMEOUT_MS, 0, on_timeout, &t)) {
		rc = tb_err_set(err, -ENOTCONN, "cannot talk to the tracing service at '%s'",
		                socket);
		goto out;
	}
	rc = loop_run(t.l);
out:
	if (c)
		ipc_client_free(c);
	loop_free(t.l);
	return rc;
}

int perfetto_cmd_trigger_main(int argc, char **argv)
{
	struct tb_err err = {0};
	int first = 1;

	log_set_name("trigger_perfetto");
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		printf("Usage: %s TRIGGER...\n"
		       "Activates each TRIGGER (a trigger_config trigger name) on the tracing\n"
		       "service, as a producer named perfetto_cmd_producer.\n",
		       argv[0]);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--") == 0)
		first = 2;
	if (argc <= first) {
		fprintf(stderr,
		        "trigger_perfetto: At least one trigger must be specified.\n"
		        "Usage: %s TRIGGER...\n",
		        argv[0]);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	if (perfetto_cmd_activate_triggers(ipc_producer_socket_name(), argv + first,
	                                   (size_t)(argc - first), &err)) {
		fprintf(stderr, "trigger_perfetto: %s\n", err.msg);
		return 1;
	}
	return 0;
}
