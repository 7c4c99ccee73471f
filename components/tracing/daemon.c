/*
 * The producer daemons' connection: a tracing_producer that is always
 * being kept connected. traced_probes and traced_perf (and any producer
 * that must outlive a restart of traced) need the same plumbing around the
 * producer library: connect at start, register their data sources on every
 * new connection, report readiness once, and after a failed connect or a
 * lost connection retry every retry_ms. This file is that plumbing; the
 * daemons keep only their data sources.
 *
 *   new ──connect──▶ connected ──lost──▶ (on_disconnect, producer freed)
 *    │  (register      │                       │
 *    │   data sources, └── ready once          ▼
 *    └──failed──────────────────────────▶ retry timer ──▶ connect ...
 *
 * The caller's setup/start/stop/flush/clear callbacks are forwarded with its
 * ctx; on_disconnect tells it to drop its instances (their writers die with
 * the producer).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tracing.h"

#define DAEMON_LOG "producer"
#define DAEMON_DEFAULT_RETRY_MS 1000

struct tracing_daemon {
	struct loop *loop;
	struct tracing_daemon_opts o; /* strings and data sources copied */
	struct tracing_producer *p;   /* NULL while disconnected */
	uint64_t retry_timer;
	bool ready_sent, warned;
	unsigned connections;
};

static struct tracing_daemon *of(void *ctx)
{
	return ctx;
}

static void fwd_connect(void *ctx, struct tracing_producer *p)
{
	struct tracing_daemon *d = of(ctx);
	d->warned = false;
	d->connections++;
	log_info(DAEMON_LOG, "%s: connected to the tracing service", d->o.producer.name);
	if (!d->ready_sent) {
		d->ready_sent = true;
		if (d->o.ready_fd_env && tb_notify_ready(d->o.ready_fd_env) != 0)
			log_warn(DAEMON_LOG, "cannot write to %s", d->o.ready_fd_env);
	}
	if (d->o.producer.on_connect)
		d->o.producer.on_connect(d->o.producer.ctx, p);
}

static void fwd_setup(void *ctx, struct tracing_producer *p, uint64_t id, const char *ds_name,
                      const uint8_t *config, size_t config_len)
{
	struct tracing_daemon *d = of(ctx);
	if (d->o.producer.setup)
		d->o.producer.setup(d->o.producer.ctx, p, id, ds_name, config, config_len);
}

static void fwd_start(void *ctx, struct tracing_producer *p, uint64_t id, const uint8_t *config,
                      size_t config_len, uint32_t target_buffer)
{
	struct tracing_daemon *d = of(ctx);
	if (d->o.producer.start)
		d->o.producer.start(d->o.producer.ctx, p, id, config, config_len, target_buffer);
	else
		tracing_producer_notify_started(p, id);
}

static void fwd_stop(void *ctx, struct tracing_producer *p, uint64_t id)
{
	struct tracing_daemon *d = of(ctx);
	if (d->o.producer.stop)
		d->o.producer.stop(d->o.producer.ctx, p, id);
	else
		tracing_producer_notify_stopped(p, id);
}

static void fwd_flush(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n,
                      uint64_t request_id)
{
	struct tracing_daemon *d = of(ctx);
	if (d->o.producer.flush)
		d->o.producer.flush(d->o.producer.ctx, p, ids, n, request_id);
	else
		tracing_producer_flush_done(p, request_id);
}

static void fwd_clear(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n)
{
	struct tracing_daemon *d = of(ctx);
	if (d->o.producer.clear_incremental_state)
		d->o.producer.clear_incremental_state(d->o.producer.ctx, p, ids, n);
}

static void schedule_retry(struct tracing_daemon *d);

static void on_lost(void *ctx, struct tracing_producer *p)
{
	struct tracing_daemon *d = of(ctx);
	log_warn(DAEMON_LOG, "%s: disconnected from the tracing service: %s", d->o.producer.name,
	         tracing_producer_err(p)->msg);
	if (d->o.producer.on_disconnect)
		d->o.producer.on_disconnect(d->o.producer.ctx, p);
	tracing_producer_free(p); /* deferred until this callback returns */
	d->p = NULL;
	schedule_retry(d);
}

/* One connection attempt; on success the data sources are queued for
 * registration (sent with InitializeConnection's reply). */
static int try_connect(struct tracing_daemon *d)
{
	struct tracing_producer_opts po = d->o.producer;
	struct tb_err err = {0};

	po.ctx = d;
	po.on_connect = fwd_connect;
	po.on_disconnect = on_lost;
	po.setup = fwd_setup;
	po.start = fwd_start;
	po.stop = fwd_stop;
	po.flush = fwd_flush;
	po.clear_incremental_state = fwd_clear;
	if (!(d->p = tracing_producer_new(d->loop, &po, &err))) {
		/* Once per outage, not once per retry. */
		if (!d->warned)
			log_warn(DAEMON_LOG, "%s: %s; retrying every %u ms", d->o.producer.name,
			         err.msg, d->o.retry_ms);
		d->warned = true;
		return err.code ? err.code : -ECONNREFUSED;
	}
	for (size_t i = 0; i < d->o.n_data_sources; i++) {
		const struct tracing_ds_desc *ds = &d->o.data_sources[i];
		tracing_producer_register_data_source(d->p, ds->name, ds->will_notify_on_start,
		                                      ds->will_notify_on_stop,
		                                      ds->handles_incremental_state_clear);
	}
	return 0;
}

static void on_retry(struct loop *l, uint64_t id, void *ctx)
{
	struct tracing_daemon *d = ctx;
	d->retry_timer = 0;
	if (try_connect(d) != 0)
		schedule_retry(d);
}

static void schedule_retry(struct tracing_daemon *d)
{
	d->retry_timer = loop_add_timer(d->loop, d->o.retry_ms, 0, on_retry, d);
	if (!d->retry_timer)
		log_error(DAEMON_LOG, "%s: cannot schedule a reconnect: %s", d->o.producer.name,
		          loop_err(d->loop)->msg);
}

struct tracing_daemon *tracing_daemon_new(struct loop *l, const struct tracing_daemon_opts *o)
{
	struct tracing_daemon *d = tb_calloc(1, sizeof *d);
	struct tracing_ds_desc *ds;
	const char *priv;

	d->loop = l;
	d->o = *o;
	d->o.producer.name = tb_strdup(o->producer.name ? o->producer.name : "");
	d->o.producer.socket_name =
	    o->producer.socket_name ? tb_strdup(o->producer.socket_name) : NULL;
	d->o.producer.sdk_version =
	    o->producer.sdk_version ? tb_strdup(o->producer.sdk_version) : NULL;
	d->o.ready_fd_env = o->ready_fd_env ? tb_strdup(o->ready_fd_env) : NULL;
	priv = getenv("TRACEBOX_PRIVATE_SOCKETS");
	if (priv && strcmp(priv, "1") == 0)
		d->o.producer.same_uid_service = true;
	if (!d->o.retry_ms)
		d->o.retry_ms = DAEMON_DEFAULT_RETRY_MS;
	ds = tb_calloc(o->n_data_sources ? o->n_data_sources : 1, sizeof *ds);
	for (size_t i = 0; i < o->n_data_sources; i++) {
		ds[i] = o->data_sources[i];
		ds[i].name = tb_strdup(o->data_sources[i].name);
	}
	d->o.data_sources = ds;
	if (try_connect(d) != 0)
		schedule_retry(d);
	return d;
}

void tracing_daemon_free(struct tracing_daemon *d)
{
	if (!d)
		return;
	if (d->retry_timer)
		loop_cancel_timer(d->loop, d->retry_timer);
	tracing_producer_free(d->p);
	for (size_t i = 0; i < d->o.n_data_sources; i++)
		tb_free((char *)d->o.data_sources[i].name);
	tb_free((void *)d->o.data_sources);
	tb_free((char *)d->o.producer.name);
	tb_free((char *)d->o.producer.socket_name);
	tb_free((char *)d->o.producer.sdk_version);
	tb_free((char *)d->o.ready_fd_env);
	tb_free(d);
}

struct tracing_producer *tracing_daemon_producer(const struct tracing_daemon *d)
{
	return d->p;
}

unsigned tracing_daemon_connections(const struct tracing_daemon *d)
{
	return d->connections;
}
