/*
 * Counters, flows and metadata: the rows that need no nesting logic.
 *
 * Flow ids (proto flow_ids, JSON v2 bind_id) link the last slice seen with an
 * id to the next one; a terminating id closes the chain.
 */
#include "../tp_int.h"
#include "model.h"

#include <string.h>

/* A flow v1 end waiting for the next slice on its track. */
struct tp_pending_flow {
	uint32_t track;
	uint64_t id;
};

/* The open flows and states (struct tp's `events`). */
struct tp_events {
	struct hmap open_flows;    /* flow id -> last slice */
	struct hmap active_states; /* track -> its open state row */
	/* flow v1: (cat << 32 | name) -> index in flow_v1_maps, each map
	 * source id -> flow id; flows waiting for a slice */
	struct hmap flow_v1_keys;
	VEC(struct hmap) flow_v1_maps;
	uint64_t flow_v1_next;
	VEC(uint64_t) flow_v1_names; /* v1 flow n -> cat << 32 | name */
	VEC(struct tp_pending_flow) pending_flows;
};

void tp_events_init(struct tp *tp)
{
	tp->events = tb_calloc(1, sizeof *tp->events);
}

void tp_events_release(struct tp *tp)
{
	struct tp_events *e = tp->events;
	if (!e)
		return;
	hmap_release(&e->open_flows);
	hmap_release(&e->active_states);
	hmap_release(&e->flow_v1_keys);
	for (size_t i = 0; i < e->flow_v1_maps.len; i++)
		hmap_release(&e->flow_v1_maps.data[i]);
	vec_release(&e->flow_v1_maps);
	vec_release(&e->flow_v1_names);
	vec_release(&e->pending_flows);
	tb_free(e);
	tp->events = NULL;
}

uint32_t tp_counter_add(struct tp *tp, uint32_t track, int64_t ts, double value,
                        uint32_t arg_set_id)
{
	struct tp_counter_table *t = &tp->t.counter;
	uint32_t id = tp_counter_append(t);
	t->ts[id] = ts;
	t->track_id[id] = track;
	t->value[id] = value;
	t->arg_set_id[id] = arg_set_id;
	return id;
}

uint32_t tp_state_update(struct tp *tp, uint32_t track, int64_t ts, uint32_t value,
                         uint32_t category, uint32_t arg_set_id)
{
	struct tp_state_table *t = &tp->t.state;
	uint64_t open;
	if (hmap_get(&tp->events->active_states, track, &open)) {
		uint32_t row = (uint32_t)open;
		if (t->value[row] == value) {
			if (arg_set_id != TP_NULL_U32)
				t->arg_set_id[row] =
				    t->arg_set_id[row] == TP_NULL_U32
				        ? arg_set_id
				        : tp_args_merge(tp, t->arg_set_id[row], arg_set_id);
			return row;
		}
		t->dur[row] = ts - t->ts[row];
		hmap_del(&tp->events->active_states, track, NULL);
	}
	if (!value)
		return TP_NULL_U32;
	uint32_t id = tp_state_append(t);
	t->ts[id] = ts;
	t->dur[id] = -1;
	t->track_id[id] = track;
	t->category[id] = category;
	t->value[id] = value;
	t->arg_set_id[id] = arg_set_id;
	hmap_put(&tp->events->active_states, track, id);
	return id;
}

uint32_t tp_flow_add(struct tp *tp, uint32_t slice_out, uint32_t slice_in)
{
	struct tp_flow_table *t = &tp->t.flow;
	uint32_t id = tp_flow_append(t);
	t->slice_out[id] = slice_out;
	t->slice_in[id] = slice_in;
	return id;
}

#define FLOW_V1_BIT (1ull << 63)

/* A flow row for flow id: a v1 flow's row has args name and cat, as
 * Perfetto's FlowTracker gives it. */
static void flow_add_id(struct tp *tp, uint32_t slice_out, uint32_t slice_in, uint64_t flow)
{
	uint32_t row = tp_flow_add(tp, slice_out, slice_in);
	uint64_t n = flow & ~FLOW_V1_BIT;
	if (!(flow & FLOW_V1_BIT) || n >= tp->events->flow_v1_names.len)
		return;
	uint64_t cn = tp->events->flow_v1_names.data[n];
	uint32_t kn = tp_intern_cstr(tp, "name"), kc = tp_intern_cstr(tp, "cat");
	struct tp_args_builder *b = &tp->args_scratch;
	tp_args_begin(b);
	tp_args_add_string(b, kn, kn, (uint32_t)cn);
	tp_args_add_string(b, kc, kc, (uint32_t)(cn >> 32));
	tp->t.flow.arg_set_id[row] = tp_args_commit(tp, b);
}

void tp_flow_step(struct tp *tp, uint64_t id, uint32_t slice, bool terminate)
{
	uint64_t prev;
	if (hmap_get(&tp->events->open_flows, id, &prev))
		flow_add_id(tp, (uint32_t)prev, slice, id);
	if (terminate)
		hmap_del(&tp->events->open_flows, id, NULL);
	else
		hmap_put(&tp->events->open_flows, id, slice);
}

void tp_flow_begin(struct tp *tp, uint64_t id, uint32_t slice)
{
	if (hmap_get(&tp->events->open_flows, id, NULL)) {
		tp_stat_inc(tp, TP_STAT_flow_duplicate_id);
		return;
	}
	hmap_put(&tp->events->open_flows, id, slice);
}

/* Link the open flow id to slice, earlier slice first; false if not open. */
static bool flow_link(struct tp *tp, uint64_t id, uint32_t slice)
{
	uint64_t prev;
	if (!hmap_get(&tp->events->open_flows, id, &prev))
		return false;
	const int64_t *ts = tp->t.slice.ts;
	if (ts[prev] > ts[slice])
		flow_add_id(tp, slice, (uint32_t)prev, id);
	else
		flow_add_id(tp, (uint32_t)prev, slice, id);
	return true;
}

void tp_flow_continue(struct tp *tp, uint64_t id, uint32_t slice)
{
	if (!flow_link(tp, id, slice)) {
		tp_stat_inc(tp, TP_STAT_flow_step_without_start);
		return;
	}
	hmap_put(&tp->events->open_flows, id, slice);
}

void tp_flow_end(struct tp *tp, uint64_t id, uint32_t slice, bool close)
{
	if (!flow_link(tp, id, slice)) {
		tp_stat_inc(tp, TP_STAT_flow_end_without_start);
		return;
	}
	if (close)
		hmap_del(&tp->events->open_flows, id, NULL);
}

uint64_t tp_flow_v1_id(struct tp *tp, uint64_t source, uint32_t cat, uint32_t name)
{
	uint64_t idx, id;
	if (!hmap_get(&tp->events->flow_v1_keys, (uint64_t)cat << 32 | name, &idx)) {
		idx = tp->events->flow_v1_maps.len;
		hmap_init(vec_push_zeroed(&tp->events->flow_v1_maps));
		hmap_put(&tp->events->flow_v1_keys, (uint64_t)cat << 32 | name, idx);
	}
	struct hmap *m = &tp->events->flow_v1_maps.data[idx];
	if (!hmap_get(m, source, &id)) {
		id = FLOW_V1_BIT | tp->events->flow_v1_next++;
		vec_push(&tp->events->flow_v1_names, (uint64_t)cat << 32 | name);
		hmap_put(m, source, id);
	}
	return id;
}

void tp_flow_end_pending(struct tp *tp, uint32_t track, uint64_t id)
{
	vec_push(&tp->events->pending_flows, ((struct tp_pending_flow){track, id}));
}

void tp_flow_bind_pending(struct tp *tp, uint32_t track, uint32_t slice)
{
	size_t keep = 0;
	for (size_t i = 0; i < tp->events->pending_flows.len; i++) {
		struct tp_pending_flow p = tp->events->pending_flows.data[i];
		uint64_t from;
		if (p.track != track) {
			tp->events->pending_flows.data[keep++] = p;
			continue;
		}
		/* An end whose flow never began links from slice id 0 and
		 * leaves the flow open there, as Perfetto's FlowTracker does
		 * (its lookup inserts a default slice id). */
		if (!hmap_get(&tp->events->open_flows, p.id, &from)) {
			from = 0;
			hmap_put(&tp->events->open_flows, p.id, from);
		}
		flow_add_id(tp, (uint32_t)from, slice, p.id);
	}
	tp->events->pending_flows.len = keep;
}

/* Perfetto's scope of a metadata key: which of machine_id and trace_id
 * its rows carry (one row per machine / trace for a single-valued key).
 * Keys not listed (trace_attribute.*, Chrome's and JSON's own) have both,
 * as Perfetto's dynamic keys. */
enum { MD_MACHINE = 1, MD_TRACE = 2 };
static unsigned metadata_scope(const char *name)
{
	static const struct {
		const char *name;
		unsigned scope;
	} keys[] = {
	    {"trace_time_clock_id", 0},
	    {"all_data_source_flushed_ns", MD_MACHINE | MD_TRACE},
	    {"all_data_source_started_ns", MD_MACHINE | MD_TRACE},
	    {"ftrace_latest_data_start_ns", MD_MACHINE | MD_TRACE},
	    {"slow_start_data_source", MD_MACHINE | MD_TRACE},
	    {"tracing_disabled_ns", MD_MACHINE | MD_TRACE},
	    {"tracing_started_ns", MD_MACHINE | MD_TRACE},
	    {"android_profile_boot_classpath", MD_TRACE},
	    {"android_profile_system_server", MD_TRACE},
	    {"benchmark_description", MD_TRACE},
	    {"benchmark_had_failures", MD_TRACE},
	    {"benchmark_label", MD_TRACE},
	    {"benchmark_name", MD_TRACE},
	    {"benchmark_start_time_us", MD_TRACE},
	    {"benchmark_story_name", MD_TRACE},
	    {"benchmark_story_run_index", MD_TRACE},
	    {"benchmark_story_run_time_us", MD_TRACE},
	    {"benchmark_story_tags", MD_TRACE},
	    {"range_of_interest_start_us", MD_TRACE},
	    {"statsd_triggering_subscription_id", MD_TRACE},
	    {"trace_config_pbtxt", MD_TRACE},
	    {"trace_size_bytes", MD_TRACE},
	    {"trace_trigger", MD_TRACE},
	    {"trace_type", MD_TRACE},
	    {"trace_uuid", MD_TRACE},
	    {"unique_session_name", MD_TRACE},
	    {"ui_state", MD_TRACE},
	    {"android_build_fingerprint", MD_MACHINE},
	    {"android_device_manufacturer", MD_MACHINE},
	    {"android_guest_soc_model", MD_MACHINE},
	    {"android_hardware_revision", MD_MACHINE},
	    {"android_incremental_build", MD_MACHINE},
	    {"android_ram_model", MD_MACHINE},
	    {"android_sdk_version", MD_MACHINE},
	    {"android_serial_console", MD_MACHINE},
	    {"android_soc_model", MD_MACHINE},
	    {"android_storage_model", MD_MACHINE},
	    {"system_machine", MD_MACHINE},
	    {"system_name", MD_MACHINE},
	    {"system_ram_bytes", MD_MACHINE},
	    {"system_ram_gb", MD_MACHINE},
	    {"system_release", MD_MACHINE},
	    {"system_version", MD_MACHINE},
	    {"tracing_service_version", MD_MACHINE},
	    {"timezone_off_mins", MD_MACHINE},
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(keys); i++)
		if (!strcmp(keys[i].name, name))
			return keys[i].scope;
	if (!strncmp(name, "manifest_attribute.", 19))
		return 0; /* the archive's, as trace_time_clock_id */
	return MD_MACHINE | MD_TRACE;
}

/* The machine_id and trace_id of a row of key name set now. */
static void metadata_ids(const struct tp *tp, const char *name, int64_t *machine, int64_t *trace)
{
	unsigned scope = metadata_scope(name);
	*machine = scope & MD_MACHINE ? (int64_t)tp->machine : TP_NULL_I64;
	*trace = scope & MD_TRACE ? (int64_t)tp->trace_id : TP_NULL_I64;
}

static uint32_t metadata_new_row(struct tp *tp, const char *name, const char *key_type)
{
	struct tp_metadata_table *t = &tp->t.metadata;
	uint32_t name_id = tp_intern_cstr(tp, name);
	uint32_t row = tp_metadata_append(t);
	t->name[row] = name_id;
	t->key_type[row] = tp_intern_cstr(tp, key_type);
	metadata_ids(tp, name, &t->machine_id[row], &t->trace_id[row]);
	return row;
}

/* The row of key name in the current machine / trace, as its scope says. */
static bool metadata_find(struct tp *tp, const char *name, uint32_t *row)
{
	const struct tp_metadata_table *t = &tp->t.metadata;
	uint32_t name_id = tp_intern_cstr(tp, name);
	int64_t machine, trace;
	metadata_ids(tp, name, &machine, &trace);
	for (uint32_t i = 0; i < t->n; i++) {
		if (t->name[i] == name_id && t->machine_id[i] == machine &&
		    t->trace_id[i] == trace) {
			*row = i;
			return true;
		}
	}
	return false;
}

/* The single-valued metadata row called name, created when missing. */
static uint32_t metadata_row(struct tp *tp, const char *name)
{
	uint32_t row;
	if (!metadata_find(tp, name, &row))
		row = metadata_new_row(tp, name, "single");
	return row;
}

void tp_metadata_set_int(struct tp *tp, const char *name, int64_t v)
{
	uint32_t row = metadata_row(tp, name); /* may grow the columns */
	tp->t.metadata.int_value[row] = v;
	tp->t.metadata.str_value[row] = 0; /* one value a key: the last */
}

void tp_metadata_set_str(struct tp *tp, const char *name, uint32_t str_id)
{
	uint32_t row = metadata_row(tp, name);
	tp->t.metadata.str_value[row] = str_id;
	tp->t.metadata.int_value[row] = TP_NULL_I64;
}

void tp_metadata_append_int(struct tp *tp, const char *name, int64_t v)
{
	uint32_t row = metadata_new_row(tp, name, "multi");
	tp->t.metadata.int_value[row] = v;
}

void tp_metadata_append_str(struct tp *tp, const char *name, uint32_t str_id)
{
	uint32_t row = metadata_new_row(tp, name, "multi");
	tp->t.metadata.str_value[row] = str_id;
}

bool tp_metadata_has(struct tp *tp, const char *name)
{
	uint32_t row;
	return metadata_find(tp, name, &row);
}

/* Perfetto's pretty form of a uuid: the 16 bytes msb then lsb, each
 * big-endian, as 8-4-4-4-12 lower-case hex. */
void tp_metadata_set_uuid(struct tp *tp, uint64_t msb, uint64_t lsb)
{
	static const char hex[] = "0123456789abcdef";
	char s[37];
	size_t o = 0;
	for (int i = 0; i < 16; i++) {
		uint64_t half = i < 8 ? msb : lsb;
		unsigned byte = (unsigned)(half >> (8 * (7 - i % 8))) & 0xff;
		if (i == 4 || i == 6 || i == 8 || i == 10)
			s[o++] = '-';
		s[o++] = hex[byte >> 4];
		s[o++] = hex[byte & 15];
	}
	tp_metadata_set_str(tp, "trace_uuid", tp_intern(tp, s, o));
}
