/*
 * triggers.c: sessions gated by TraceConfig.trigger_config, and the
 * ActivateTriggers method producers (and `perfetto` with activate_triggers,
 * trigger_perfetto) call, as Perfetto's service does:
 *
 *   START_TRACING  the session stays CONFIGURED until a trigger named in
 *                  its config arrives; it then starts with duration_ms =
 *                  that trigger's stop_delay_ms. No trigger within
 *                  trigger_timeout_ms: the session ends, empty.
 *   STOP_TRACING   the session runs; the first matching trigger ends it
 *                  (flush, then disable) stop_delay_ms later (after
 *                  StartTracing when it came before a deferred start). No trigger
 *                  within trigger_timeout_ms: it ends there, and reads
 *                  return nothing (the trace is empty).
 *
 * A trigger matches by name, and by producer_name_regex (POSIX extended,
 * whole name) when one is given. Received triggers go into the trace as
 * Trigger packets (TracePacket.trigger 46: trigger_name 1, producer_name 2,
 * trusted_producer_uid 3, stop_delay_ms 4) on the service's sequence.
 * CLONE_SNAPSHOT, max_per_24_h and skip_probability are not supported (the
 * first is refused at EnableTracing, the others are ignored).
 */
#include "traced_int.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MODE_START 1
#define MODE_STOP 2
#define MODE_CLONE_SNAPSHOT 4

static uint32_t mode_of(const Perfetto__Protos__TraceConfig *cfg)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig *tc = cfg->trigger_config;
	return tc && tc->has_trigger_mode ? (uint32_t)tc->trigger_mode : 0;
}

int traced_triggers_validate(const Perfetto__Protos__TraceConfig *cfg, char *errbuf, size_t errlen)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig *tc = cfg->trigger_config;
	uint32_t mode = mode_of(cfg);
	if (!mode)
		return 0;
	if (mode != MODE_START && mode != MODE_STOP) {
		snprintf(errbuf, errlen, "%s",
		         mode == MODE_CLONE_SNAPSHOT
		             ? "CLONE_SNAPSHOT triggers are not supported"
		             : "The trace config specified an invalid trigger_mode");
		return -EINVAL;
	}
	if (tc->trigger_timeout_ms == 0 || tc->trigger_timeout_ms > TRACED_MAX_DURATION_MS) {
		snprintf(errbuf, errlen,
		         "Traces with START_TRACING triggers must provide a positive "
		         "trigger_timeout_ms < 7 days (received %ums)",
		         tc->trigger_timeout_ms);
		return -EINVAL;
	}
	if (cfg->duration_ms) {
		snprintf(errbuf, errlen,
		         "duration_ms was set, this must not be set for traces with triggers.");
		return -EINVAL;
	}
	if (mode == MODE_STOP && cfg->write_into_file) {
		snprintf(errbuf, errlen,
		         "Specifying trigger mode STOP_TRACING/CLONE_SNAPSHOT and "
		         "write_into_file together is unsupported");
		return -EINVAL;
	}
	for (size_t i = 0; i < tc->n_triggers; i++)
		for (size_t j = 0; j < i; j++)
			if (tc->triggers[i]->name && tc->triggers[j]->name &&
			    strcmp(tc->triggers[i]->name, tc->triggers[j]->name) == 0) {
				snprintf(errbuf, errlen, "Duplicate trigger name: %s",
				         tc->triggers[i]->name);
				return -EINVAL;
			}
	return 0;
}

static void on_start_timeout(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_session *s = ctx;
	s->trigger_timer = 0;
	if (s->state != TRACED_CONFIGURED)
		return;
	log_info(TRACED_LOG, "session %" PRIu64 ": no start trigger in time", s->id);
	traced_session_disable(s);
}

bool traced_triggers_on_create(struct traced_session *s)
{
	uint32_t mode = mode_of(s->cfg);
	if (mode == MODE_START) {
		s->trigger_timer =
		    loop_add_timer(s->svc->loop, s->cfg->trigger_config->trigger_timeout_ms, 0,
		                   on_start_timeout, s);
		return false;
	}
	if (mode == MODE_STOP)
		s->cfg->duration_ms = s->cfg->trigger_config->trigger_timeout_ms;
	return true;
}

bool traced_session_waiting_for_trigger(const struct traced_session *s)
{
	return mode_of(s->cfg) && s->triggers.len == 0;
}

bool traced_session_trigger_owns_stop(const struct traced_session *s)
{
	return mode_of(s->cfg) == MODE_STOP && s->triggers.len > 0;
}

static bool producer_matches(const char *regex, const char *name)
{
	regex_t re;
	regmatch_t m;
	bool ok;
	if (!regex || !regex[0])
		return true;
	if (regcomp(&re, regex, REG_EXTENDED) != 0)
		return false;
	ok = regexec(&re, name, 1, &m, 0) == 0 && m.rm_so == 0 && (size_t)m.rm_eo == strlen(name);
	regfree(&re);
	return ok;
}

static void on_stop_delay(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_session *s = ctx;
	s->trigger_timer = 0;
	if (s->state != TRACED_STARTED)
		return;
	log_info(TRACED_LOG, "session %" PRIu64 ": stopped by a trigger", s->id);
	traced_flush_start(s,
	                   s->cfg->flush_timeout_ms ? s->cfg->flush_timeout_ms
	                                            : TRACED_DEFAULT_FLUSH_TIMEOUT_MS,
	                   2 | 1 << 4, NULL, true);
}

/* One trigger name from producer p, offered to session s. */
static void offer(struct traced_session *s, struct traced_producer *p, const char *name)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig *tc = s->cfg->trigger_config;
	const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *match = NULL;
	struct traced_trigger tr;
	bool first = s->triggers.len == 0;
	uint32_t mode = mode_of(s->cfg);

	if (!mode || s->state == TRACED_DISABLING || s->state == TRACED_DISABLED)
		return;
	for (size_t i = 0; i < tc->n_triggers && !match; i++)
		if (tc->triggers[i]->name && strcmp(tc->triggers[i]->name, name) == 0 &&
		    producer_matches(tc->triggers[i]->producer_name_regex, p->name ? p->name : ""))
			match = tc->triggers[i];
	if (!match)
		return;
	tr.ts = tb_boot_ns();
	tr.name = tb_strdup(name);
	tr.producer = tb_strdup(p->name ? p->name : "");
	tr.uid = p->uid;
	tr.stop_delay_ms = match->stop_delay_ms;
	vec_push(&s->triggers, tr);
	log_info(TRACED_LOG, "session %" PRIu64 ": trigger '%s' from producer %u", s->id, name,
	         p->id);
	if (mode == MODE_START && s->state == TRACED_CONFIGURED) {
		if (s->trigger_timer)
			loop_cancel_timer(s->svc->loop, s->trigger_timer);
		s->trigger_timer = 0;
		s->cfg->duration_ms = match->stop_delay_ms;
		traced_session_start(s);
	} else if (mode == MODE_STOP && first && s->state == TRACED_STARTED) {
		s->trigger_timer =
		    loop_add_timer(s->svc->loop, match->stop_delay_ms, 0, on_stop_delay, s);
	}
}

void traced_triggers_on_start(struct traced_session *s)
{
	/* A STOP trigger held from before StartTracing (deferred_start): its stop
	 * delay runs from the start, as the trigger timeout defers to it. */
	if (traced_session_trigger_owns_stop(s) && !s->trigger_timer)
		s->trigger_timer = loop_add_timer(s->svc->loop, s->triggers.data[0].stop_delay_ms,
		                                  0, on_stop_delay, s);
}

void traced_activate_triggers(struct traced *t, struct traced_producer *p, char *const *names,
                              size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < t->sessions.len; k++)
			if (names[i])
				offer(t->sessions.data[k], p, names[i]);
}

int traced_emit_triggers(struct traced_session *s, struct pb_writer *w, traced_packet_fn cb,
                         void *ctx)
{
	int rc = 0;
	for (; s->triggers_emitted < s->triggers.len && !rc; s->triggers_emitted++) {
		const struct traced_trigger *tr = &s->triggers.data[s->triggers_emitted];
		unsigned m;
		pb_put_uint64(w, 8, (uint64_t)tr->ts);
		m = pb_begin_nested(w, 46);
		pb_put_string(w, 1, tr->name);
		pb_put_string(w, 2, tr->producer);
		pb_put_int32(w, 3, (int32_t)tr->uid);
		pb_put_uint64(w, 4, tr->stop_delay_ms);
		pb_end_nested(w, m);
		pb_put_int32(w, 3, (int32_t)getuid());
		pb_put_uint32(w, 10, TRACED_SERVICE_SEQ_ID);
		rc = cb(ctx, pb_writer_data(w), pb_writer_size(w), NULL, 0);
		pb_writer_reset(w);
	}
	return rc;
}

void traced_triggers_release(struct traced_session *s)
{
	if (s->trigger_timer)
		loop_cancel_timer(s->svc->loop, s->trigger_timer);
	s->trigger_timer = 0;
	for (size_t i = 0; i < s->triggers.len; i++) {
		tb_free(s->triggers.data[i].name);
		tb_free(s->triggers.data[i].producer);
	}
	vec_release(&s->triggers);
}
