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
 * A trigger is let through with probability 1 - skip_probability, and at
 * most max_per_24_h times in any 24 h: the service remembers when each trigger
 * name matched a session (the history is service-wide, as Perfetto's, and
 * counted before the name is offered to the sessions). A session keeps at
 * most TRACED_MAX_SESSION_TRIGGERS received triggers and the history at most
 * TRACED_MAX_TRIGGER_HISTORY entries (oldest dropped), so a producer
 * flooding ActivateTriggers cannot grow the service without bound.
 * CLONE_SNAPSHOT is refused at EnableTracing.
 */
#include "traced_int.h"
#include "pb_fields.h"

#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TRACED_MAX_SESSION_TRIGGERS 1024
#define TRACED_MAX_TRIGGER_HISTORY 65536
#define DAY_NS ((int64_t)24 * 3600 * 1000000000)

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

/* A uniform double in [0, 1) (xorshift64*, seeded from the clock). */
static double next_random(struct traced *t)
{
	uint64_t x = t->trigger_rng;
	if (!x)
		x = (uint64_t)tb_boot_ns() * 0x9e3779b97f4a7c15ull | 1;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->trigger_rng = x;
	return (double)((x * 0x2545f4914f6cdd1dull) >> 11) / (double)(1ull << 53);
}

/* Drop history older than 24 h; how many of the rest are name_hash. */
static uint32_t count_in_window(struct traced *t, int64_t now, uint64_t name_hash)
{
	size_t old = 0;
	uint32_t n = 0;
	while (old < t->trigger_history.len && now - t->trigger_history.data[old].ts > DAY_NS)
		old++;
	if (old) {
		memmove(t->trigger_history.data, t->trigger_history.data + old,
		        (t->trigger_history.len - old) * sizeof *t->trigger_history.data);
		t->trigger_history.len -= old;
	}
	for (size_t i = 0; i < t->trigger_history.len; i++)
		n += t->trigger_history.data[i].name_hash == name_hash;
	return n;
}

static void remember(struct traced *t, int64_t now, uint64_t name_hash)
{
	struct traced_trigger_hit h = {now, name_hash};
	if (t->trigger_history.len >= TRACED_MAX_TRIGGER_HISTORY) {
		memmove(t->trigger_history.data, t->trigger_history.data + 1,
		        (t->trigger_history.len - 1) * sizeof *t->trigger_history.data);
		t->trigger_history.len--;
	}
	vec_push(&t->trigger_history, h);
}

void traced_triggers_free_history(struct traced *t)
{
	vec_release(&t->trigger_history);
}

/* One trigger name from producer p, offered to session s (seen: matched
 * activations of this name in the last 24 h). True when it matched. */
static bool offer(struct traced_session *s, struct traced_producer *p, const char *name,
                  uint32_t seen)
{
	const Perfetto__Protos__TraceConfig__TriggerConfig *tc = s->cfg->trigger_config;
	const Perfetto__Protos__TraceConfig__TriggerConfig__Trigger *match = NULL;
	struct traced_trigger tr;
	bool first = s->triggers.len == 0;
	uint32_t mode = mode_of(s->cfg);

	if (!mode || s->state == TRACED_DISABLING || s->state == TRACED_DISABLED)
		return false;
	for (size_t i = 0; i < tc->n_triggers && !match; i++)
		if (tc->triggers[i]->name && strcmp(tc->triggers[i]->name, name) == 0 &&
		    producer_matches(tc->triggers[i]->producer_name_regex, p->name ? p->name : ""))
			match = tc->triggers[i];
	if (!match)
		return false;
	if (match->has_skip_probability && next_random(s->svc) < match->skip_probability) {
		log_info(TRACED_LOG, "session %" PRIu64 ": trigger '%s' skipped (skip_probability)",
		         s->id, name);
		return false;
	}
	if (match->max_per_24_h && seen >= match->max_per_24_h) {
		log_info(TRACED_LOG, "session %" PRIu64 ": trigger '%s' over max_per_24_h (%u)",
		         s->id, name, match->max_per_24_h);
		return false;
	}
	if (s->triggers.len >= TRACED_MAX_SESSION_TRIGGERS)
		return true; /* matched, but this session has kept enough of them */
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
	return true;
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
	for (size_t i = 0; i < n; i++) {
		int64_t now = tb_boot_ns();
		uint64_t h;
		uint32_t seen;
		bool matched = false;
		if (!names[i])
			continue;
		h = tb_hash_bytes(names[i], strlen(names[i]), 0);
		seen = count_in_window(t, now, h);
		for (size_t k = 0; k < t->sessions.len; k++)
			matched |= offer(t->sessions.data[k], p, names[i], seen);
		if (matched)
			remember(t, now, h);
	}
}

int traced_emit_triggers(struct traced_session *s, struct pb_writer *w, traced_packet_fn cb,
                         void *ctx)
{
	int rc = 0;
	for (; s->triggers_emitted < s->triggers.len && !rc; s->triggers_emitted++) {
		const struct traced_trigger *tr = &s->triggers.data[s->triggers_emitted];
		unsigned m;
		pb_put_uint64(w, PB_F_TracePacket_timestamp, (uint64_t)tr->ts);
		m = pb_begin_nested(w, PB_F_TracePacket_trigger);
		pb_put_string(w, PB_F_Trigger_trigger_name, tr->name);
		pb_put_string(w, PB_F_Trigger_producer_name, tr->producer);
		pb_put_int32(w, PB_F_Trigger_trusted_producer_uid, (int32_t)tr->uid);
		pb_put_uint64(w, PB_F_Trigger_stop_delay_ms, tr->stop_delay_ms);
		pb_end_nested(w, m);
		pb_put_int32(w, PB_F_TracePacket_trusted_uid, (int32_t)getuid());
		pb_put_uint32(w, PB_F_TracePacket_trusted_packet_sequence_id,
		              TRACED_SERVICE_SEQ_ID);
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
