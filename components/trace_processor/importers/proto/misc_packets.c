/*
 * TracePacket kinds with one small handler each, as Perfetto's modules
 * import them:
 *
 *   field  packet                    when        into
 *   46     trigger                   parse time  "Trace Triggers" slice,
 *   113    clone_snapshot_trigger                metadata trace_trigger
 *   109    chrome_trigger            parse time  "Trace Triggers" slice,
 *                                                cr-triggered_rule_name_hash
 *   51     chrome_metadata           tokenize    cr-<a..z>-* metadata
 *   70     initial_display_state     parse time  ScreenState counter
 *   134    concurrent_session_event  parse time  a state track per session
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <stdio.h>
#include <string.h>

/* The string field id of p[0, n) into the pool (0 if absent). */
static uint32_t str_field(struct tp *tp, const uint8_t *p, size_t n, uint32_t id)
{
	struct pb_field f = {0};
	if (pb_find_field(p, n, id, &f) == 1 && f.wire == PB_WIRE_LEN)
		return tp_intern(tp, (const char *)f.data, f.len);
	return 0;
}

static bool varint_field(const uint8_t *p, size_t n, uint32_t id, uint64_t *v)
{
	struct pb_field f = {0};
	if (pb_find_field(p, n, id, &f) != 1)
		return false;
	*v = f.val; /* fixed32 is zero-extended */
	return f.wire != PB_WIRE_LEN;
}

static void add_str_arg(struct tp *tp, struct tp_args_builder *b, const char *key, uint32_t s)
{
	uint32_t k = tp_intern_cstr(tp, key);
	tp_args_add_string(b, k, k, s);
}

static void add_int_arg(struct tp *tp, struct tp_args_builder *b, const char *key, int64_t v)
{
	uint32_t k = tp_intern_cstr(tp, key);
	tp_args_add_int(b, k, k, v);
}

static uint32_t trigger_track(struct tp *tp)
{
	struct tp_track_key key = {.type = "triggers",
	                           .event_type = "slice",
	                           .utid = -1,
	                           .upid = -1,
	                           .cpu = -1,
	                           .name = tp_intern_cstr(tp, "Trace Triggers")};
	return tp_track_get(tp, &key);
}

/* Trigger / clone_snapshot_trigger: an instant on the triggers track. The
 * trace's trigger (metadata trace_trigger) is the first trace trigger, or
 * the first clone-snapshot trigger, which wins over trace triggers. */
void tp_proto_trigger_parse(struct proto_importer *im, int64_t ts, bool clone, const uint8_t *p,
                            size_t n)
{
	struct tp *tp = im->tp;
	struct tp_args_builder *b = &im->args;
	uint32_t name = str_field(tp, p, n, PB_F_Trigger_trigger_name);
	if (!name)
		name = tp_intern(tp, "", 0);
	tp_args_begin(b);
	uint32_t producer = str_field(tp, p, n, PB_F_Trigger_producer_name);
	if (producer)
		add_str_arg(tp, b, "producer_name", producer);
	uint64_t uid;
	if (varint_field(p, n, PB_F_Trigger_trusted_producer_uid, &uid))
		add_int_arg(tp, b, "trusted_producer_uid", (int32_t)uid);
	tp_slice_complete(tp, trigger_track(tp), ts, 0, 0, name, tp_args_commit(tp, b));
	if (clone && im->trigger_kind != 2) {
		im->trigger_kind = 2;
		tp_metadata_set_str(tp, "trace_trigger", name);
		tp_stat_set(tp, TP_STAT_traced_clone_trigger_timestamp_ns, ts);
	} else if (!clone && im->trigger_kind == 0) {
		im->trigger_kind = 1;
		tp_metadata_set_str(tp, "trace_trigger", name);
	}
}

/* ChromeTrigger: an instant named by the trigger (or "chrome_trigger"). */
void tp_proto_chrome_trigger_parse(struct proto_importer *im, int64_t ts, const uint8_t *p,
                                   size_t n)
{
	struct tp *tp = im->tp;
	struct tp_args_builder *b = &im->args;
	uint32_t name = str_field(tp, p, n, PB_F_ChromeTrigger_trigger_name);
	uint64_t hash = 0;
	varint_field(p, n, PB_F_ChromeTrigger_trigger_name_hash, &hash);
	tp_args_begin(b);
	uint32_t k = tp_intern_cstr(tp, "chrome_trigger.name_hash");
	tp_args_add_uint(b, k, k, hash);
	if (name)
		add_str_arg(tp, b, "chrome_trigger.name", name);
	else
		name = tp_intern_cstr(tp, "chrome_trigger");
	tp_slice_complete(tp, trigger_track(tp), ts, 0, 0, name, tp_args_commit(tp, b));
	tp_metadata_set_int(tp, "cr-triggered_rule_name_hash", (int64_t)hash);
}

static void base64(struct proto_importer *im, const uint8_t *p, size_t n)
{
	static const char abc[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	proto_scratch_reset(im);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;
		if (i + 1 < n)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < n)
			v |= p[i + 2];
		char q[4] = {abc[v >> 18], abc[(v >> 12) & 63],
		             i + 1 < n ? abc[(v >> 6) & 63] : '=', i + 2 < n ? abc[v & 63] : '='};
		tp_proto_scratch_add(im, q, 4);
	}
}

/* ChromeMetadataPacket: the n-th packet's values under "cr-<a + n % 26>-". */
void tp_proto_chrome_metadata(struct proto_importer *im, const uint8_t *p, size_t n)
{
	static const struct {
		uint32_t id;
		bool is_str;
		const char *key;
	} keys[] = {
	    {PB_F_ChromeMetadataPacket_chrome_version_code, false, "playstore_version_code"},
	    {PB_F_ChromeMetadataPacket_app_version, true, "product-version"},
	    {PB_F_ChromeMetadataPacket_os_name, true, "os-name"},
	    {PB_F_ChromeMetadataPacket_app_package_name, true, "package-name"},
	    {PB_F_ChromeMetadataPacket_channel, false, "channel"},
	    {PB_F_ChromeMetadataPacket_enabled_categories, true, "enabled_categories"},
	};
	struct tp *tp = im->tp;
	char name[64];
	char prefix = (char)('a' + im->chrome_metadata_count++ % 26);
	struct pb_field f = {0};
	for (size_t i = 0; i < TB_ARRAY_SIZE(keys); i++) {
		snprintf(name, sizeof name, "cr-%c-%s", prefix, keys[i].key);
		uint64_t v;
		if (keys[i].is_str && pb_find_field(p, n, keys[i].id, &f) == 1 &&
		    f.wire == PB_WIRE_LEN)
			tp_metadata_set_str(tp, name, tp_intern(tp, (const char *)f.data, f.len));
		else if (!keys[i].is_str && varint_field(p, n, keys[i].id, &v))
			tp_metadata_set_int(tp, name,
			                    keys[i].id ==
			                            PB_F_ChromeMetadataPacket_chrome_version_code
			                        ? (int64_t)(int32_t)v
			                        : (int64_t)(uint32_t)v);
	}
	/* Field trials, a line break after every two. */
	struct pb_reader r;
	unsigned on_line = 0;
	bool any = false;
	proto_scratch_reset(im);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_ChromeMetadataPacket_field_trial_hashes || f.wire != PB_WIRE_LEN)
			continue;
		uint64_t trial = 0, group = 0;
		varint_field(f.data, f.len, PB_F_ChromeMetadataPacket_FinchHash_name, &trial);
		varint_field(f.data, f.len, PB_F_ChromeMetadataPacket_FinchHash_group, &group);
		if (on_line == 2) {
			tp_proto_scratch_add(im, "\n", 1);
			on_line = 1;
		} else {
			on_line++;
		}
		char s[64];
		int len = snprintf(s, sizeof s, "{ name: %u, group: %u } ", (uint32_t)trial,
		                   (uint32_t)group);
		tp_proto_scratch_add(im, s, (size_t)len);
		any = true;
	}
	if (any) {
		snprintf(name, sizeof name, "cr-%c-field_trial_hashes", prefix);
		tp_metadata_set_str(tp, name, tp_intern(tp, im->scratch.data, im->scratch.len));
	}
	if (pb_find_field(p, n, PB_F_ChromeMetadataPacket_background_tracing_metadata, &f) == 1 &&
	    f.wire == PB_WIRE_LEN) {
		const uint8_t *bp = f.data;
		size_t bn = f.len;
		base64(im, bp, bn);
		tp_metadata_set_str(tp, "cr-background_tracing_metadata",
		                    tp_intern(tp, im->scratch.data, im->scratch.len));
		uint64_t hash;
		if (varint_field(bp, bn, PB_F_BackgroundTracingMetadata_scenario_name_hash, &hash))
			tp_metadata_set_int(tp, "cr-scenario_name_hash", (int64_t)(uint32_t)hash);
	}
}

/* InitialDisplayState: the screen state at the start of the trace. */
void tp_proto_initial_display_state_parse(struct proto_importer *im, int64_t ts, const uint8_t *p,
                                          size_t n)
{
	struct tp *tp = im->tp;
	uint64_t state = 0;
	varint_field(p, n, PB_F_InitialDisplayState_display_state, &state);
	struct tp_track_key key = {.type = "screen_state",
	                           .event_type = "counter",
	                           .utid = -1,
	                           .upid = -1,
	                           .cpu = -1,
	                           .name = tp_intern_cstr(tp, "ScreenState")};
	tp_counter_add(tp, tp_track_get(tp, &key), ts, (double)(int32_t)state, TP_NULL_U32);
}

/* ConcurrentSessionEvent: the session's state on its own state track
 * (dimension session_id, named by its first event). DISABLED ends the
 * session: a zero-length marker. */
void tp_proto_session_event_parse(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	static const char *const states[] = {NULL,
	                                     "DISABLED",
	                                     "CONFIGURED",
	                                     "STARTED",
	                                     "DISABLING_WAITING_STOP_ACKS",
	                                     "CLONED_READ_ONLY"};
	struct tp *tp = im->tp;
	struct tp_args_builder *b = &im->args;
	uint64_t state = 0, id = 0, uid = 0, nds = 0;
	varint_field(p, n, PB_F_ConcurrentSessionEvent_state, &state);
	if (state >= TB_ARRAY_SIZE(states) || !states[state]) {
		tp_stat_inc(tp, TP_STAT_concurrent_session_event_unknown_state);
		return;
	}
	varint_field(p, n, PB_F_ConcurrentSessionEvent_session_id, &id);
	varint_field(p, n, PB_F_ConcurrentSessionEvent_consumer_uid, &uid);
	varint_field(p, n, PB_F_ConcurrentSessionEvent_num_data_sources, &nds);
	struct tp_track_key key = {.type = "concurrent_tracing_sessions",
	                           .event_type = "state",
	                           .utid = -1,
	                           .upid = -1,
	                           .cpu = -1,
	                           .extra_dim = id};
	uint32_t track = tp_track_get(tp, &key);
	if (!tp->t.track.name[track]) {
		struct pb_field f = {0};
		char name[300];
		int len;
		if (pb_find_field(p, n, PB_F_ConcurrentSessionEvent_session_name, &f) == 1 &&
		    f.wire == PB_WIRE_LEN && f.len)
			len = snprintf(name, sizeof name, "%.*s", f.len > 256 ? 256 : (int)f.len,
			               (const char *)f.data);
		else
			len = snprintf(name, sizeof name, "Session %llu", (unsigned long long)id);
		if (state == PB_E_ConcurrentSessionEvent_State_STATE_CLONED_READ_ONLY)
			snprintf(name + len, sizeof name - (size_t)len, " (clone)");
		tp->t.track.name[track] = tp_intern_cstr(tp, name);
		tp_args_begin(b);
		add_int_arg(tp, b, "session_id", (int64_t)id);
		tp->t.track.dimension_arg_set_id[track] = tp_args_commit(tp, b);
	}
	tp_args_begin(b);
	add_int_arg(tp, b, "consumer_uid", (int32_t)uid);
	add_int_arg(tp, b, "num_data_sources", (uint32_t)nds);
	tp_state_update(tp, track, ts, tp_intern_cstr(tp, states[state]), 0, tp_args_commit(tp, b));
	if (state == PB_E_ConcurrentSessionEvent_State_STATE_DISABLED)
		tp_state_update(tp, track, ts, 0, 0, TP_NULL_U32);
}
