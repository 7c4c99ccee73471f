/*
 * service.c: the tracing service's state and the session lifecycle.
 *
 * The service owns the two IPC hosts, the connected producers and
 * consumers (keyed by IPC client id) and the tracing sessions. A session is
 * created by a consumer's EnableTracing, starts the matching data sources on
 * producers, optionally stops itself after duration_ms (flush, then stop),
 * and ends DISABLED when every data source has stopped, at which point the
 * EnableTracing call is answered. Its buffers live until the consumer frees
 * them or goes away. Producers and consumers may vanish at any point: every
 * cross reference is by id and looked up again, never a dangling pointer.
 * This file also holds the applet traced_main.
 */
#include "traced_int.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct traced_producer *traced_producer_by_id(struct traced *t, uint16_t id)
{
	for (size_t i = hmap_next(&t->producers, 0); i != HMAP_END;
	     i = hmap_next(&t->producers, i + 1)) {
		struct traced_producer *p = (void *)(uintptr_t)t->producers.slots[i].val;
		if (p->id == id)
			return p;
	}
	return NULL;
}

struct traced_session *traced_session_by_id(struct traced *t, uint64_t id)
{
	for (size_t i = 0; i < t->sessions.len; i++)
		if (t->sessions.data[i]->id == id)
			return t->sessions.data[i];
	return NULL;
}

struct traced_buffer *traced_session_buffer(struct traced_session *s, uint32_t id)
{
	for (size_t i = 0; i < s->buffers.len; i++)
		if (traced_buffer_id(s->buffers.data[i]) == id)
			return s->buffers.data[i];
	return NULL;
}

struct traced_buffer *traced_buffer_for_producer(struct traced *t, struct traced_producer *p,
                                                 uint32_t id)
{
	for (size_t i = 0; i < t->sessions.len; i++) {
		struct traced_session *s = t->sessions.data[i];
		struct traced_buffer *b = traced_session_buffer(s, id);
		if (!b)
			continue;
		for (size_t j = 0; j < s->instances.len; j++)
			if (s->instances.data[j].producer_id == p->id)
				return b;
		return NULL;
	}
	return NULL;
}

/* ---- session lifecycle ---------------------------------------------------- */

static int validate_config(struct traced *t, uid_t uid, const Perfetto__Protos__TraceConfig *cfg,
                           char *errbuf, size_t errlen)
{
	int for_uid = 0;

	if (cfg->n_buffers == 0) {
		snprintf(errbuf, errlen, "trace config has no buffers");
		return -EINVAL;
	}
	if (cfg->n_buffers > TRACED_MAX_BUFFERS_PER_SESSION) {
		snprintf(errbuf, errlen, "too many buffers (%zu)", cfg->n_buffers);
		return -EINVAL;
	}
	for (size_t i = 0; i < cfg->n_buffers; i++) {
		uint64_t bytes = (uint64_t)cfg->buffers[i]->size_kb * 1024;
		if (bytes == 0 || bytes > TRACED_MAX_BUFFER_BYTES) {
			snprintf(errbuf, errlen, "invalid size for buffer %zu: %u kb", i,
			         cfg->buffers[i]->size_kb);
			return -EINVAL;
		}
	}
	for (size_t i = 0; i < cfg->n_data_sources; i++) {
		const Perfetto__Protos__DataSourceConfig *dc = cfg->data_sources[i]->config;
		if (!dc || !dc->name || !dc->name[0]) {
			snprintf(errbuf, errlen, "data source %zu has no name", i);
			return -EINVAL;
		}
		if (dc->target_buffer >= cfg->n_buffers) {
			snprintf(errbuf, errlen, "data source '%s' targets buffer %u of %zu",
			         dc->name, dc->target_buffer, cfg->n_buffers);
			return -EINVAL;
		}
	}
	if (cfg->duration_ms > TRACED_MAX_DURATION_MS) {
		snprintf(errbuf, errlen, "duration_ms %u exceeds 7 days", cfg->duration_ms);
		return -EINVAL;
	}
	if (traced_triggers_validate(cfg, errbuf, errlen))
		return -EINVAL;
	if (cfg->unique_session_name && cfg->unique_session_name[0]) {
		for (size_t i = 0; i < t->sessions.len; i++) {
			const char *n = t->sessions.data[i]->cfg->unique_session_name;
			if (n && strcmp(n, cfg->unique_session_name) == 0) {
				snprintf(errbuf, errlen, "a session named '%s' already exists", n);
				return -EEXIST;
			}
		}
	}
	/* Perfetto's guardrails, in its order and words (sic). */
	for (size_t i = 0; i < t->sessions.len; i++)
		for_uid += t->sessions.data[i]->consumer_uid == uid;
	if (for_uid >= TRACED_MAX_SESSIONS_PER_UID) {
		snprintf(errbuf, errlen,
		         "Too many concurrent tracing sesions (%d) for uid %d limit is %d", for_uid,
		         (int)uid, TRACED_MAX_SESSIONS_PER_UID);
		return -EBUSY;
	}
	if (t->sessions.len >= TRACED_MAX_SESSIONS) {
		snprintf(errbuf, errlen, "Too many concurrent tracing sesions (%zu)",
		         t->sessions.len);
		return -EBUSY;
	}
	return 0;
}

/* The write_into_file output: the consumer's fd, else output_path (created,
 * never an existing file, as Perfetto). Only a consumer of the service's
 * own uid (or root) may have the service create a file: another uid would
 * create files it could not create itself. -1 with a message in errbuf. */
static int open_output(const struct traced *t, uid_t uid, const Perfetto__Protos__TraceConfig *cfg,
                       int *fd, char *errbuf, size_t errlen)
{
	if (!cfg->write_into_file) {
		tb_close(fd);
		return 0;
	}
	if (cfg->output_path && cfg->output_path[0]) {
		tb_close(fd);
		if (uid != t->uid && uid != 0) {
			snprintf(errbuf, errlen,
			         "output_path refused: the consumer's uid %d is not the service's "
			         "(%d); pass the output file descriptor with EnableTracing",
			         (int)uid, (int)t->uid);
			return -EPERM;
		}
		*fd = open(cfg->output_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (*fd < 0) {
			snprintf(errbuf, errlen, "cannot open '%s': %s", cfg->output_path,
			         strerror(errno));
			return -EIO;
		}
		return 0;
	}
	if (*fd < 0) {
		snprintf(errbuf, errlen, "write_into_file without an output fd or output_path");
		return -EINVAL;
	}
	return 0;
}

static void on_write_period(struct loop *l, uint64_t id, void *ctx)
{
	traced_session_write_file(ctx, false);
}

static void on_flush_period(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_session *s = ctx;
	if (s->state == TRACED_STARTED)
		traced_flush_start(s, s->cfg->flush_timeout_ms, 1 | 1 << 4, NULL, false);
}

int traced_session_create(struct traced *t, struct traced_consumer *c, const uint8_t *cfg_bytes,
                          size_t cfg_len, struct ipc_call *call, int fd, char *errbuf,
                          size_t errlen)
{
	Perfetto__Protos__TraceConfig *cfg;
	struct traced_session *s;
	int rc;

	cfg = perfetto__protos__trace_config__unpack(protos_allocator(), cfg_len, cfg_bytes);
	if (!cfg) {
		tb_close(&fd);
		snprintf(errbuf, errlen, "cannot decode the trace config");
		return -EINVAL;
	}
	if (cfg->lockdown_mode ==
	    PERFETTO__PROTOS__TRACE_CONFIG__LOCKDOWN_MODE_OPERATION__LOCKDOWN_SET)
		t->lockdown = true;
	else if (cfg->lockdown_mode ==
	         PERFETTO__PROTOS__TRACE_CONFIG__LOCKDOWN_MODE_OPERATION__LOCKDOWN_CLEAR)
		t->lockdown = false;
	if ((rc = validate_config(t, c->uid, cfg, errbuf, errlen)) ||
	    (rc = open_output(t, c->uid, cfg, &fd, errbuf, errlen))) {
		tb_close(&fd);
		protobuf_c_message_free_unpacked(&cfg->base, protos_allocator());
		return rc;
	}
	s = tb_calloc(1, sizeof *s);
	s->write_into_file = cfg->write_into_file;
	s->max_file_bytes = cfg->write_into_file ? cfg->max_file_size_bytes : 0;
	s->svc = t;
	traced_wif_init(s, fd);
	s->id = ++t->next_session_id;
	s->consumer = c;
	s->consumer_uid = c->uid;
	s->cfg = cfg;
	s->config = tb_memdup(cfg_bytes, cfg_len ? cfg_len : 1);
	s->config_len = cfg_len;
	s->next_seq_id = TRACED_SERVICE_SEQ_ID + 1;
	s->enable_call = call;
	for (size_t i = 0; i < cfg->n_buffers; i++) {
		bool discard = cfg->buffers[i]->fill_policy ==
		               PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD;
		vec_push(&s->buffers, traced_buffer_new(++t->next_buffer_id,
		                                        (size_t)cfg->buffers[i]->size_kb * 1024,
		                                        discard, &s->next_seq_id));
	}
	vec_push(&t->sessions, s);
	c->session = s;
	t->stats.tracing_sessions++;
	log_info(TRACED_LOG, "session %" PRIu64 ": %zu buffers, %zu data sources, %u ms", s->id,
	         cfg->n_buffers, cfg->n_data_sources, cfg->duration_ms);
	if (traced_triggers_on_create(s) && !cfg->deferred_start)
		traced_session_start(s);
	return 0;
}

static bool producer_matches(const Perfetto__Protos__TraceConfig__DataSource *ds,
                             const struct traced_producer *p)
{
	if (ds->n_producer_name_filter == 0)
		return true;
	for (size_t i = 0; i < ds->n_producer_name_filter; i++)
		if (p->name && strcmp(ds->producer_name_filter[i], p->name) == 0)
			return true;
	return false;
}

/* Start one config data source on one producer. */
static void start_instance(struct traced_session *s, struct traced_producer *p,
                           const Perfetto__Protos__TraceConfig__DataSource *ds,
                           const struct traced_ds_reg *reg)
{
	Perfetto__Protos__DataSourceConfig dc = *ds->config;
	struct traced_instance in = {0};
	if (s->svc->lockdown && p->uid != s->svc->uid) {
		log_info(TRACED_LOG, "lockdown mode: not starting '%s' on producer %u (uid %d)",
		         reg->name, p->id, (int)p->uid);
		return;
	}
	if (traced_producer_setup_smb(p, s->cfg))
		return;
	in.id = ++s->svc->next_instance_id;
	in.producer_id = p->id;
	in.name = tb_strdup(reg->name);
	in.notify_start = reg->notify_on_start;
	in.notify_stop = reg->notify_on_stop;
	in.started = !reg->notify_on_start;
	in.clear_incremental = reg->clear_incremental;
	vec_push(&s->instances, in);
	dc.has_target_buffer = true;
	dc.target_buffer = traced_buffer_id(s->buffers.data[ds->config->target_buffer]);
	dc.has_tracing_session_id = true;
	dc.tracing_session_id = s->id;
	traced_producer_send_setup_start(p, in.id, &dc);
}

static void match_sources(struct traced_session *s, struct traced_producer *only,
                          const struct traced_ds_reg *only_reg)
{
	struct traced *t = s->svc;
	for (size_t i = 0; i < s->cfg->n_data_sources; i++) {
		const Perfetto__Protos__TraceConfig__DataSource *ds = s->cfg->data_sources[i];
		if (only) {
			if (strcmp(only_reg->name, ds->config->name) == 0 &&
			    producer_matches(ds, only))
				start_instance(s, only, ds, only_reg);
			continue;
		}
		for (size_t k = hmap_next(&t->producers, 0); k != HMAP_END;
		     k = hmap_next(&t->producers, k + 1)) {
			struct traced_producer *p = (void *)(uintptr_t)t->producers.slots[k].val;
			if (!p->initialized || !producer_matches(ds, p))
				continue;
			for (size_t j = 0; j < p->sources.len; j++)
				if (strcmp(p->sources.data[j].name, ds->config->name) == 0)
					start_instance(s, p, ds, &p->sources.data[j]);
		}
	}
}

static void on_duration(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_session *s = ctx;
	s->duration_timer = 0;
	if (traced_session_trigger_owns_stop(s))
		return; /* the trigger's stop delay ends it */
	log_info(TRACED_LOG, "session %" PRIu64 ": duration elapsed", s->id);
	traced_flush_start(s,
	                   s->cfg->flush_timeout_ms ? s->cfg->flush_timeout_ms
	                                            : TRACED_DEFAULT_FLUSH_TIMEOUT_MS,
	                   2 | 1 << 4, NULL, true);
}

static void on_snapshot_period(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_session *s = ctx;
	if (s->state == TRACED_STARTED)
		traced_session_snapshot(s);
}

static void on_clear_period(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_session *s = ctx;
	if (s->state == TRACED_STARTED)
		traced_session_clear_incremental_state(s);
}

void traced_session_clear_incremental_state(struct traced_session *s)
{
	struct traced *t = s->svc;
	VEC(uint64_t) ids = {0};
	bool *done = tb_calloc(s->instances.len ? s->instances.len : 1, sizeof *done);
	for (size_t i = 0; i < s->instances.len; i++) {
		const struct traced_instance *in = &s->instances.data[i];
		struct traced_producer *p;
		if (done[i] || !in->clear_incremental || in->stopped ||
		    !(p = traced_producer_by_id(t, in->producer_id)))
			continue;
		vec_clear(&ids);
		for (size_t j = i; j < s->instances.len; j++) {
			const struct traced_instance *o = &s->instances.data[j];
			if (o->producer_id == in->producer_id && o->clear_incremental &&
			    !o->stopped) {
				done[j] = true;
				vec_push(&ids, o->id);
			}
		}
		traced_producer_send_clear_incremental_state(p, ids.data, ids.len);
	}
	vec_release(&ids);
	tb_free(done);
}

static uint32_t at_least(uint32_t v, uint32_t min)
{
	return v < min ? min : v;
}

/* A periodic timer whose ticks fall on multiples of period_ms of wall time,
 * as Perfetto aligns its periodic tasks. */
static uint64_t aligned_timer(struct loop *l, uint32_t period_ms, loop_timer_fn cb, void *ctx)
{
	uint64_t wall_ms = (uint64_t)tb_now_ns(CLOCK_REALTIME) / 1000000u;
	return loop_add_timer(l, period_ms - wall_ms % period_ms, period_ms, cb, ctx);
}

/* The periodic snapshot runs at once, then every snapshot_interval_ms;
 * clear_period_ms starts the ClearIncrementalState timer. */
static void start_periodic_tasks(struct traced_session *s)
{
	const Perfetto__Protos__TraceConfig__BuiltinDataSource *b = s->cfg->builtin_data_sources;
	const Perfetto__Protos__TraceConfig__IncrementalStateConfig *inc =
	    s->cfg->incremental_state_config;
	struct loop *l = s->svc->loop;
	uint32_t period =
	    at_least(b && b->snapshot_interval_ms ? b->snapshot_interval_ms
	                                          : TRACED_DEFAULT_SNAPSHOT_INTERVAL_MS,
	             TRACED_MIN_PERIOD_MS);
	if (!(b && b->disable_clock_snapshotting)) {
		traced_clocks_capture(&s->initial_clocks);
		s->has_initial_clocks = true;
	}
	traced_session_snapshot(s);
	s->snapshot_timer = loop_add_timer(l, period, period, on_snapshot_period, s);
	if (inc && inc->clear_period_ms)
		s->clear_timer = aligned_timer(
		    l, at_least(inc->clear_period_ms, TRACED_MIN_PERIOD_MS), on_clear_period, s);
}

void traced_session_start(struct traced_session *s)
{
	struct loop *l = s->svc->loop;
	if (s->state != TRACED_CONFIGURED)
		return;
	s->state = TRACED_STARTED;
	s->start_ns = tb_boot_ns();
	traced_session_event(s, TRACED_EV_TRACING_STARTED);
	start_periodic_tasks(s);
	match_sources(s, NULL, NULL);
	if (s->cfg->duration_ms)
		s->duration_timer = loop_add_timer(l, s->cfg->duration_ms, 0, on_duration, s);
	traced_triggers_on_start(s);
	if (s->write_into_file) {
		uint32_t ms = s->cfg->file_write_period_ms ? s->cfg->file_write_period_ms
		                                           : TRACED_DEFAULT_WRITE_PERIOD_MS;
		if (ms < TRACED_MIN_WRITE_PERIOD_MS)
			ms = TRACED_MIN_WRITE_PERIOD_MS;
		s->write_timer = loop_add_timer(l, ms, ms, on_write_period, s);
	}
	if (s->cfg->flush_period_ms) {
		uint32_t ms = s->cfg->flush_period_ms;
		if (ms < TRACED_MIN_FLUSH_PERIOD_MS)
			ms = TRACED_MIN_FLUSH_PERIOD_MS;
		s->flush_timer = loop_add_timer(l, ms, ms, on_flush_period, s);
	}
	traced_session_check_all_started(s);
}

bool traced_session_all_started(const struct traced_session *s)
{
	if (s->state != TRACED_STARTED)
		return false;
	for (size_t i = 0; i < s->instances.len; i++)
		if (!s->instances.data[i].started && !s->instances.data[i].stopped)
			return false;
	return true;
}

void traced_session_check_all_started(struct traced_session *s)
{
	if (!traced_session_all_started(s))
		return;
	if (!s->all_started_seen) {
		s->all_started_seen = true;
		traced_session_event(s, TRACED_EV_ALL_STARTED);
	}
	if (!s->all_started_sent)
		traced_consumer_notify_all_started(s);
}

void traced_session_instance_started(struct traced_session *s, uint64_t instance_id)
{
	for (size_t i = 0; i < s->instances.len; i++)
		if (s->instances.data[i].id == instance_id)
			s->instances.data[i].started = true;
	traced_session_check_all_started(s);
}

void traced_sessions_on_new_source(struct traced *t, struct traced_producer *p,
                                   const struct traced_ds_reg *reg)
{
	for (size_t i = 0; i < t->sessions.len; i++)
		if (t->sessions.data[i]->state == TRACED_STARTED)
			match_sources(t->sessions.data[i], p, reg);
}

static void cancel_timer(struct traced_session *s, uint64_t *timer)
{
	if (*timer)
		loop_cancel_timer(s->svc->loop, *timer);
	*timer = 0;
}

static void session_finish(struct traced_session *s)
{
	if (s->state == TRACED_DISABLED)
		return;
	s->state = TRACED_DISABLED;
	cancel_timer(s, &s->stop_timer);
	cancel_timer(s, &s->write_timer);
	cancel_timer(s, &s->flush_timer);
	cancel_timer(s, &s->snapshot_timer);
	cancel_timer(s, &s->clear_timer);
	traced_session_event(s, TRACED_EV_TRACING_DISABLED);
	s->emit_stats = true;
	log_info(TRACED_LOG, "session %" PRIu64 ": disabled", s->id);
	if (s->write_into_file) {
		traced_session_write_file(s, true);
		if (s->wif.fd >= 0) {
			/* The output is slow: answered once the file is complete. */
			s->wif.notify_when_done = true;
			return;
		}
	}
	traced_session_notify_disabled(s, s->wif.error[0] ? s->wif.error : NULL);
}

static void check_all_stopped(struct traced_session *s)
{
	if (s->state != TRACED_DISABLING)
		return;
	for (size_t i = 0; i < s->instances.len; i++)
		if (!s->instances.data[i].stopped)
			return;
	session_finish(s);
}

static void on_stop_timeout(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_session *s = ctx;
	s->stop_timer = 0;
	log_warn(TRACED_LOG, "session %" PRIu64 ": data sources did not stop in time", s->id);
	session_finish(s);
}

void traced_session_disable(struct traced_session *s)
{
	struct traced *t = s->svc;
	if (s->state == TRACED_CONFIGURED) {
		/* never started (deferred, or waiting for a start trigger) */
		s->state = TRACED_DISABLING;
		check_all_stopped(s);
		return;
	}
	if (s->state == TRACED_DISABLING || s->state == TRACED_DISABLED)
		return;
	cancel_timer(s, &s->duration_timer);
	cancel_timer(s, &s->flush_timer);
	cancel_timer(s, &s->clear_timer);
	s->state = TRACED_DISABLING;
	for (size_t i = 0; i < s->instances.len; i++) {
		struct traced_instance *in = &s->instances.data[i];
		struct traced_producer *p = traced_producer_by_id(t, in->producer_id);
		if (p && !in->stopped)
			traced_producer_send_stop(p, in->id);
		if (!p || !in->notify_stop)
			in->stopped = true;
	}
	s->stop_timer =
	    loop_add_timer(t->loop,
	                   s->cfg->data_source_stop_timeout_ms ? s->cfg->data_source_stop_timeout_ms
	                                                       : TRACED_DEFAULT_STOP_TIMEOUT_MS,
	                   0, on_stop_timeout, s);
	check_all_stopped(s);
}

void traced_session_instance_stopped(struct traced_session *s, uint64_t instance_id)
{
	for (size_t i = 0; i < s->instances.len; i++)
		if (s->instances.data[i].id == instance_id)
			s->instances.data[i].stopped = true;
	check_all_stopped(s);
	traced_session_check_all_started(s);
}

void traced_session_free(struct traced_session *s)
{
	struct traced *t = s->svc;
	if (s->state == TRACED_STARTED || s->state == TRACED_DISABLING) {
		for (size_t i = 0; i < s->instances.len; i++) {
			struct traced_producer *p =
			    traced_producer_by_id(t, s->instances.data[i].producer_id);
			if (p && !s->instances.data[i].stopped)
				traced_producer_send_stop(p, s->instances.data[i].id);
		}
	}
	cancel_timer(s, &s->duration_timer);
	cancel_timer(s, &s->stop_timer);
	cancel_timer(s, &s->write_timer);
	cancel_timer(s, &s->flush_timer);
	cancel_timer(s, &s->snapshot_timer);
	cancel_timer(s, &s->clear_timer);
	traced_triggers_release(s);
	traced_wif_release(s);
	if (s->enable_call)
		ipc_call_drop(s->enable_call);
	if (s->consumer)
		s->consumer->session = NULL;
	for (size_t i = 0; i < t->sessions.len; i++)
		if (t->sessions.data[i] == s)
			t->sessions.data[i] = t->sessions.data[--t->sessions.len];
	for (size_t i = 0; i < s->buffers.len; i++)
		traced_buffer_free(s->buffers.data[i]);
	vec_release(&s->buffers);
	for (size_t i = 0; i < s->instances.len; i++)
		tb_free(s->instances.data[i].name);
	vec_release(&s->instances);
	protobuf_c_message_free_unpacked(&s->cfg->base, protos_allocator());
	tb_free(s->config);
	tb_free(s);
}

/* ---- flushes -------------------------------------------------------------- */

static void flush_finish(struct traced *t, struct traced_flush *f, bool ok)
{
	struct traced_session *s;
	for (size_t i = 0; i < t->flushes.len; i++)
		if (t->flushes.data[i] == f)
			t->flushes.data[i] = t->flushes.data[--t->flushes.len];
	if (f->timer)
		loop_cancel_timer(t->loop, f->timer);
	if (ok)
		t->stats.flushes_succeeded++;
	else
		t->stats.flushes_failed++;
	if (ok && (s = traced_session_by_id(t, f->session_id)))
		traced_session_event(s, TRACED_EV_ALL_FLUSHED);
	if (f->call) {
		if (ok)
			ipc_call_reply(f->call, NULL, 0, false, -1);
		else
			ipc_call_fail(f->call);
	} else if (f->disable_after && (s = traced_session_by_id(t, f->session_id))) {
		traced_session_disable(s);
	}
	vec_release(&f->pending);
	tb_free(f);
}

static void on_flush_timeout(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_flush *f = ctx;
	f->timer = 0;
	for (size_t i = 0; i < f->pending.len; i++)
		log_warn(TRACED_LOG, "flush %" PRIu64 ": producer %u did not ack", f->id,
		         f->pending.data[i]);
	flush_finish(f->svc, f, false);
}

void traced_flush_start(struct traced_session *s, uint32_t timeout_ms, uint64_t flags,
                        struct ipc_call *call, bool disable_after)
{
	struct traced *t = s->svc;
	struct traced_flush *f = tb_calloc(1, sizeof *f);
	f->svc = t;
	f->disable_after = disable_after;
	f->id = ++t->next_flush_id;
	f->session_id = s->id;
	f->call = call;
	t->stats.flushes_requested++;
	traced_session_event(s, TRACED_EV_FLUSH_STARTED);
	for (size_t i = 0; i < s->instances.len; i++) {
		struct traced_instance *in = &s->instances.data[i];
		struct traced_producer *p = traced_producer_by_id(t, in->producer_id);
		bool seen = false;
		if (!p || in->stopped)
			continue;
		for (size_t j = 0; j < f->pending.len; j++)
			seen |= f->pending.data[j] == p->id;
		if (seen)
			continue;
		vec_push(&f->pending, p->id);
		{
			uint64_t ids[64];
			size_t n = 0;
			for (size_t j = i; j < s->instances.len && n < TB_ARRAY_SIZE(ids); j++)
				if (s->instances.data[j].producer_id == p->id &&
				    !s->instances.data[j].stopped)
					ids[n++] = s->instances.data[j].id;
			traced_producer_send_flush(p, ids, n, f->id, flags);
		}
	}
	vec_push(&t->flushes, f);
	if (f->pending.len == 0) {
		flush_finish(t, f, true);
		return;
	}
	f->timer =
	    loop_add_timer(t->loop, timeout_ms ? timeout_ms : TRACED_DEFAULT_FLUSH_TIMEOUT_MS, 0,
	                   on_flush_timeout, f);
}

void traced_flush_ack(struct traced *t, uint16_t producer_id, uint64_t flush_id)
{
	/* An ack covers every flush up to its id, as in Perfetto. */
	for (size_t i = 0; i < t->flushes.len;) {
		struct traced_flush *f = t->flushes.data[i];
		bool removed = false;
		if (f->id <= flush_id) {
			for (size_t j = 0; j < f->pending.len; j++)
				if (f->pending.data[j] == producer_id) {
					f->pending.data[j] = f->pending.data[--f->pending.len];
					break;
				}
			if (f->pending.len == 0) {
				flush_finish(t, f, true);
				removed = true;
			}
		}
		if (!removed)
			i++;
	}
}

/* ---- the service ---------------------------------------------------------- */

static void prod_connect(void *ctx, const struct ipc_peer *peer)
{
	traced_producer_on_connect(ctx, peer);
}
static void prod_disconnect(void *ctx, const struct ipc_peer *peer)
{
	traced_producer_on_disconnect(ctx, peer);
}
static void cons_connect(void *ctx, const struct ipc_peer *peer)
{
	traced_consumer_on_connect(ctx, peer);
}
static void cons_disconnect(void *ctx, const struct ipc_peer *peer)
{
	traced_consumer_on_disconnect(ctx, peer);
}

/* A 4-digit octal mode ("0660"), as Perfetto's SetFilePermissions wants.
 * -1 if it is not one. */
static int parse_mode(const char *s)
{
	int v = 0;
	if (strlen(s) != 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		if (s[i] < '0' || s[i] > '7')
			return -1;
		v = v * 8 + (s[i] - '0');
	}
	return v;
}

/* chgrp and chmod one filesystem socket (Perfetto's SetFilePermissions:
 * its checks, in its order and words). */
static int set_permissions(const char *path, const char *group, const char *mode,
                           struct tb_err *err)
{
	gid_t gid;
	char *end;
	unsigned long n;
	int m;

	if (path[0] == '@')
		return tb_err_set(err, -EINVAL,
		                  "--set-socket-permissions: '%s' is an abstract socket, which has "
		                  "no file permissions",
		                  path);
	errno = 0;
	n = strtoul(group, &end, 10);
	if (*group && !*end && !errno && n <= UINT32_MAX) {
		gid = (gid_t)n;
	} else {
		struct group *g;
		do {
			errno = 0;
			g = getgrnam(group);
		} while (!g && errno == EINTR);
		if (!g)
			return tb_err_set(err, -ENOENT, "Failed to get group information of %s",
			                  group);
		gid = g->gr_gid;
	}
	if (chown(path, geteuid(), gid) != 0)
		return tb_err_errno(err, -errno, "Failed to chown %s", path);
	if ((m = parse_mode(mode)) < 0)
		return tb_err_set(err, -EINVAL,
		                  "The chmod mode bits must be a 4-digit octal number, e.g. 0660");
	if (chmod(path, (mode_t)m) != 0)
		return tb_err_errno(err, -errno, "Failed to chmod %s", path);
	return 0;
}

/* --set-socket-permissions on every filesystem socket of the comma-separated
 * producer list and on the consumer socket. */
static int apply_permissions(const struct traced_opts *o, const char *pname, const char *cname,
                             struct tb_err *err)
{
	const char *p = pname;
	int rc;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n > 0) {
			char *name = tb_strndup(p, n);
			rc = set_permissions(name, o->producer_group, o->producer_mode, err);
			tb_free(name);
			if (rc)
				return rc;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	return set_permissions(cname, o->consumer_group, o->consumer_mode, err);
}

struct traced *traced_new(struct loop *l, const struct traced_opts *opts, struct tb_err *err)
{
	static const struct ipc_host_ops pops = {prod_connect, prod_disconnect};
	static const struct ipc_host_ops cops = {cons_connect, cons_disconnect};
	const char *pname =
	    opts && opts->producer_socket ? opts->producer_socket : ipc_producer_socket_name();
	const char *cname =
	    opts && opts->consumer_socket ? opts->consumer_socket : ipc_consumer_socket_name();
	bool perms = opts && opts->producer_group;
	mode_t old_umask = 0;
	struct traced *t = tb_calloc(1, sizeof *t);
	t->loop = l;
	t->uid = geteuid();
	hmap_init(&t->producers);
	hmap_init(&t->consumers);
	t->prod_host = ipc_host_new(l, &pops, t);
	t->cons_host = ipc_host_new(l, &cops, t);
	if (ipc_host_add_service(t->prod_host, &traced_producer_port, t) < 0 ||
	    ipc_host_add_service(t->cons_host, &traced_consumer_port, t) < 0) {
		tb_err_set(err, -EINVAL, "cannot register the IPC services");
		goto fail;
	}
	if (opts && opts->private_sockets) {
		ipc_host_set_allowed_uid(t->prod_host, t->uid);
		ipc_host_set_allowed_uid(t->cons_host, t->uid);
	}
	/* With --set-socket-permissions the sockets are private from bind()
	 * until chmod, not open to the umask's audience meanwhile. */
	if (perms)
		old_umask = umask(0177);
	if (ipc_host_listen(t->prod_host, pname) < 0) {
		tb_err_set(err, ipc_host_err(t->prod_host)->code, "%s",
		           ipc_host_err(t->prod_host)->msg);
		goto fail;
	}
	if (ipc_host_listen(t->cons_host, cname) < 0) {
		tb_err_set(err, ipc_host_err(t->cons_host)->code, "%s",
		           ipc_host_err(t->cons_host)->msg);
		goto fail;
	}
	if (perms) {
		umask(old_umask);
		perms = false;
		if (apply_permissions(opts, pname, cname, err))
			goto fail;
	}
	log_info(TRACED_LOG, "listening on '%s' (producers) and '%s' (consumers)", pname, cname);
	return t;
fail:
	if (perms)
		umask(old_umask);
	traced_free(t);
	return NULL;
}

void traced_free(struct traced *t)
{
	if (!t)
		return;
	while (t->flushes.len) {
		struct traced_flush *f = vec_pop(&t->flushes);
		if (f->timer)
			loop_cancel_timer(t->loop, f->timer);
		if (f->call)
			ipc_call_drop(f->call);
		vec_release(&f->pending);
		tb_free(f);
	}
	vec_release(&t->flushes);
	while (t->sessions.len) {
		struct traced_session *s = t->sessions.data[0];
		s->state = TRACED_DISABLED; /* nobody to tell: the hosts go too */
		traced_session_free(s);
	}
	vec_release(&t->sessions);
	traced_triggers_free_history(t);
	for (size_t i = hmap_next(&t->producers, 0); i != HMAP_END;
	     i = hmap_next(&t->producers, i + 1))
		traced_producer_free((void *)(uintptr_t)t->producers.slots[i].val);
	for (size_t i = hmap_next(&t->consumers, 0); i != HMAP_END;
	     i = hmap_next(&t->consumers, i + 1)) {
		struct traced_consumer *c = (void *)(uintptr_t)t->consumers.slots[i].val;
		if (c->observe_call)
			ipc_call_drop(c->observe_call);
		traced_consumer_free(c);
	}
	hmap_release(&t->producers);
	hmap_release(&t->consumers);
	ipc_host_free(t->prod_host);
	ipc_host_free(t->cons_host);
	tb_free(t);
}

const struct traced_stats *traced_get_stats(const struct traced *t)
{
	return &t->stats;
}
size_t traced_num_sessions(const struct traced *t)
{
	return t->sessions.len;
}

/* ---- the applet ----------------------------------------------------------- */

/* tracebox autostart passes a pipe in TRACED_NOTIFY_FD and waits for the
 * byte "1", written once both sockets listen (as Perfetto's traced does). */
static void notify_listening(void)
{
	if (tb_notify_ready("TRACED_NOTIFY_FD") != 0)
		log_warn(TRACED_LOG, "cannot write to TRACED_NOTIFY_FD");
}

static const char traced_usage[] =
    "usage: traced [--background] [--version]\n"
    "              [--set-socket-permissions PROD_GROUP:PROD_MODE:CONS_GROUP:CONS_MODE]\n"
    "The Perfetto tracing service. Sockets: $PERFETTO_PRODUCER_SOCK_NAME,\n"
    "$PERFETTO_CONSUMER_SOCK_NAME (defaults under /run/perfetto or /tmp).\n"
    "--set-socket-permissions chgrps and chmods them once they listen, e.g.\n"
    "traced-producer:0660:traced-consumer:0660.\n";

static int parse_permissions(const char *arg, char *buf, size_t n, struct traced_opts *o)
{
	char *part[4];
	int k = 0;
	if (strlen(arg) >= n)
		goto bad;
	snprintf(buf, n, "%s", arg);
	for (char *p = buf; k < 4; k++) {
		char *colon = strchr(p, ':');
		part[k] = p;
		if (!colon)
			break;
		*colon = '\0';
		p = colon + 1;
	}
	if (k != 3 || strchr(part[3], ':'))
		goto bad;
	for (int i = 0; i < 4; i++)
		if (!part[i][0])
			goto bad;
	if (parse_mode(part[1]) < 0 || parse_mode(part[3]) < 0) {
		fprintf(stderr, "traced: The chmod mode bits must be a 4-digit octal number, "
		                "e.g. 0660\n");
		return -1;
	}
	o->producer_group = part[0];
	o->producer_mode = part[1];
	o->consumer_group = part[2];
	o->consumer_mode = part[3];
	return 0;
bad:
	fprintf(stderr,
	        "traced: --set-socket-permissions wants "
	        "<prod_group>:<prod_mode>:<cons_group>:<cons_mode>, not '%s'\n",
	        arg);
	return -1;
}

/* The applet's state between tb_daemon_main's callbacks. */
struct traced_applet {
	struct traced_opts opts;
	char perm_buf[512];
	struct traced *t;
};

static enum tb_daemon_flag traced_flag(void *ctx, int argc, char **argv, int *i)
{
	struct traced_applet *a = ctx;
	const char *arg = argv[*i];
	if (strcmp(arg, "--set-socket-permissions") == 0 && *i + 1 < argc) {
		*i += 1;
		return parse_permissions(argv[*i], a->perm_buf, sizeof a->perm_buf, &a->opts)
		           ? TB_DAEMON_EXIT_FAIL
		           : TB_DAEMON_FLAG_TAKEN;
	} else if (strncmp(arg, "--set-socket-permissions=", 25) == 0) {
		return parse_permissions(arg + 25, a->perm_buf, sizeof a->perm_buf, &a->opts)
		           ? TB_DAEMON_EXIT_FAIL
		           : TB_DAEMON_FLAG_TAKEN;
	} else if (strncmp(arg, "--enable-relay-endpoint", 23) == 0) {
		fprintf(stderr, "traced: ignoring unsupported option '%s'\n", arg);
		return TB_DAEMON_FLAG_TAKEN;
	}
	return TB_DAEMON_FLAG_UNKNOWN;
}

static int traced_start(void *ctx, struct loop *l, struct tb_err *err)
{
	struct traced_applet *a = ctx;
	/* tracebox autostart: the sockets are private to the uid that started
	 * the capture. */
	const char *priv = getenv("TRACEBOX_PRIVATE_SOCKETS");
	a->opts.private_sockets = priv && strcmp(priv, "1") == 0;
	if (!(a->t = traced_new(l, &a->opts, err)))
		return err->code ? err->code : -EINVAL;
	notify_listening();
	return 0;
}

static void traced_stop(void *ctx)
{
	struct traced_applet *a = ctx;
	traced_free(a->t);
}

int traced_main(int argc, char **argv)
{
	struct traced_applet a = {0};
	const struct tb_daemon d = {
	    .name = "traced",
	    .log_tag = TRACED_LOG,
	    .usage = traced_usage,
	    .flag = traced_flag,
	    .start = traced_start,
	    .stop = traced_stop,
	    .ctx = &a,
	};
	return tb_daemon_main(&d, argc, argv);
}
