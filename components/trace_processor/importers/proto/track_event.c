/*
 * TrackEvent semantics (protos/perfetto/trace/track_event/track_event.proto).
 *
 * Tokenize time: legacy timestamps (timestamp_delta_us / _absolute_us
 * relative to the sequence's ThreadDescriptor), legacy thread time and
 * instruction counts, and incremental counter values, all of which depend
 * on trace order. Parse time (timestamp order): the track (track_uuid, the
 * defaults' track_uuid, legacy pid/tid overrides and instant scopes, the
 * sequence's thread, else the "Default Track"), name and categories
 * (interned or inline, categories joined with ","), debug annotations as
 * `debug.*` args, source locations as `source.*`, slices (BEGIN/END/INSTANT,
 * legacy B/E/X/I/i/R and async b/e/n), counters and extra counter values,
 * thread time, and flows (flow_ids v2, flow_ids_old, legacy bind_id).
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MAX_EXTRA_COUNTERS PROTO_MAX_EXTRA_COUNTERS

/* A legacy 'X' (complete) event: our own type, past TrackEvent.Type's values. */
#define TE_TYPE_LEGACY_COMPLETE 100

/* Values of a repeated scalar field, packed or not: varint or fixed64. */
static void repeated_u64(const struct pb_field *f, uint64_t *out, uint32_t *n, uint32_t cap)
{
	if (f->wire == PB_WIRE_LEN) {
		struct pb_packed it;
		uint64_t v;
		pb_packed_init(&it, f->data, f->len, PB_WIRE_VARINT);
		while (*n < cap && pb_packed_next(&it, &v))
			out[(*n)++] = v;
	} else if (*n < cap) {
		out[(*n)++] = f->val;
	}
}

/* Extra counter uuids and values of a TrackEvent (own fields only). */
struct extra {
	uint64_t ctr_uuids[MAX_EXTRA_COUNTERS], dbl_uuids[MAX_EXTRA_COUNTERS];
	double ctr_vals[MAX_EXTRA_COUNTERS], dbl_vals[MAX_EXTRA_COUNTERS];
	uint32_t n_ctr_uuids, n_dbl_uuids, n_ctr_vals, n_dbl_vals;
};

/* Decode f if it is one of the extra counter fields; false otherwise. */
static bool decode_extra(const struct pb_field *f, struct extra *x)
{
	switch (f->id) {
	case PB_F_TrackEvent_extra_counter_track_uuids:
		repeated_u64(f, x->ctr_uuids, &x->n_ctr_uuids, MAX_EXTRA_COUNTERS);
		return true;
	case PB_F_TrackEvent_extra_double_counter_track_uuids:
		repeated_u64(f, x->dbl_uuids, &x->n_dbl_uuids, MAX_EXTRA_COUNTERS);
		return true;
	case PB_F_TrackEvent_extra_counter_values: {
		uint64_t v[MAX_EXTRA_COUNTERS];
		uint32_t k = 0;
		repeated_u64(f, v, &k, MAX_EXTRA_COUNTERS);
		for (uint32_t i = 0; i < k && x->n_ctr_vals < MAX_EXTRA_COUNTERS; i++)
			x->ctr_vals[x->n_ctr_vals++] = (double)(int64_t)v[i];
		return true;
	}
	case PB_F_TrackEvent_extra_double_counter_values:
		if (f->wire == PB_WIRE_LEN) {
			struct pb_packed it;
			uint64_t v;
			pb_packed_init(&it, f->data, f->len, PB_WIRE_FIXED64);
			while (x->n_dbl_vals < MAX_EXTRA_COUNTERS && pb_packed_next(&it, &v)) {
				struct pb_field tmp = {.val = v};
				x->dbl_vals[x->n_dbl_vals++] = pb_field_double(&tmp);
			}
		} else if (x->n_dbl_vals < MAX_EXTRA_COUNTERS) {
			x->dbl_vals[x->n_dbl_vals++] = pb_field_double(f);
		}
		return true;
	default:
		return false;
	}
}

/* The value of an incremental counter track after adding v (per sequence,
 * reset with the incremental state); v itself for other tracks. */
static double absolute_value(struct proto_importer *im, struct proto_seq *seq, uint64_t uuid,
                             double v, bool *changed)
{
	struct proto_track *t = tp_proto_track_find(im, uuid);
	if (!t || !t->is_incremental)
		return v;
	bool is_new;
	uint64_t *slot = hmap_upsert(&seq->inc_counters, uuid, &is_new);
	double last = 0;
	if (!is_new)
		memcpy(&last, slot, sizeof last);
	v += last;
	memcpy(slot, &v, sizeof v);
	*changed = true;
	return v;
}

/* Make the extra counter values of incremental tracks absolute, in trace
 * order; abs is left empty when no value needed it. */
static void absolute_extra(struct proto_importer *im, struct proto_seq *seq, const struct extra *x,
                           struct proto_abs_counters *abs)
{
	const struct proto_gen *g = seq->gen;
	const uint64_t *uu = x->n_ctr_uuids || !g ? x->ctr_uuids : g->counter_uuids;
	uint32_t nu = x->n_ctr_uuids || !g ? x->n_ctr_uuids : g->n_counter_uuids;
	bool changed = false;
	for (uint32_t i = 0; i < x->n_ctr_vals; i++)
		abs->v[i] = i < nu ? absolute_value(im, seq, uu[i], x->ctr_vals[i], &changed)
		                   : x->ctr_vals[i];
	uu = x->n_dbl_uuids || !g ? x->dbl_uuids : g->dbl_counter_uuids;
	nu = x->n_dbl_uuids || !g ? x->n_dbl_uuids : g->n_dbl_counter_uuids;
	for (uint32_t i = 0; i < x->n_dbl_vals; i++)
		abs->v[x->n_ctr_vals + i] =
		    i < nu ? absolute_value(im, seq, uu[i], x->dbl_vals[i], &changed)
		           : x->dbl_vals[i];
	if (changed) {
		abs->n_int = x->n_ctr_vals;
		abs->n_dbl = x->n_dbl_vals;
	}
}

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

/* ---- tokenize time -------------------------------------------------------------- */

/* Collect f into pl if it is one of a plain event's fields (name,
 * categories, type, track); anything else makes the event not plain. */
static void plain_field(struct proto_te_plain *pl, const struct pb_field *f)
{
	switch (f->id) {
	case PB_F_TrackEvent_type:
	case PB_F_TrackEvent_track_uuid:
		pl->ok &= f->wire == PB_WIRE_VARINT;
		break;
	case PB_F_TrackEvent_name_iid:
	case PB_F_TrackEvent_name:
		pl->ok &=
		    f->wire == (f->id == PB_F_TrackEvent_name ? PB_WIRE_LEN : PB_WIRE_VARINT) &&
		    pl->n_name++ == 0;
		pl->name = *f;
		break;
	case PB_F_TrackEvent_category_iids:
	case PB_F_TrackEvent_categories:
		pl->ok &= f->wire == (f->id == PB_F_TrackEvent_categories ? PB_WIRE_LEN
		                                                          : PB_WIRE_VARINT) &&
		          pl->n_cat < PROTO_PLAIN_MAX_CATS;
		if (pl->ok)
			pl->cats[pl->n_cat++] = *f;
		break;
	default:
		pl->ok = false;
		break;
	}
}

static void set_field(struct pb_field *f, uint64_t tag, uint64_t v, const uint8_t *data)
{
	f->id = (uint32_t)(tag >> 3);
	f->wire = (uint8_t)(tag & 7);
	f->val = v;
	f->data = data;
	f->len = data ? (size_t)v : 0;
}

bool tp_proto_te_decode_plain(const uint8_t *p, size_t n, struct proto_te_plain *pl)
{
	const uint8_t *end = p + n;
	pl->ok = true;
	pl->type = 0;
	pl->has_uuid = false;
	pl->uuid = 0;
	pl->n_name = pl->n_cat = 0;
	while (p < end) {
		uint64_t tag, v;
		const uint8_t *data = NULL;
		if (!(p = pb_read_varint(p, end, &tag)) || !(p = pb_read_varint_short(p, end, &v)))
			return false;
		if ((tag & 7) == PB_WIRE_LEN) {
			if (v > (uint64_t)(end - p))
				return false;
			data = p;
			p += v;
		}
		switch (tag) {
		case PB_F_TrackEvent_type << 3 | PB_WIRE_VARINT:
			pl->type = (uint32_t)v;
			break;
		case PB_F_TrackEvent_track_uuid << 3 | PB_WIRE_VARINT:
			pl->has_uuid = true;
			pl->uuid = v;
			break;
		case PB_F_TrackEvent_name_iid << 3 | PB_WIRE_VARINT:
		case PB_F_TrackEvent_name << 3 | PB_WIRE_LEN:
			if (pl->n_name++)
				return false;
			set_field(&pl->name, tag, v, data);
			break;
		case PB_F_TrackEvent_category_iids << 3 | PB_WIRE_VARINT:
		case PB_F_TrackEvent_categories << 3 | PB_WIRE_LEN:
			if (pl->n_cat == PROTO_PLAIN_MAX_CATS)
				return false;
			set_field(&pl->cats[pl->n_cat++], tag, v, data);
			break;
		default:
			return false;
		}
	}
	return pl->type >= PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN &&
	       pl->type <= PB_E_TrackEvent_Type_TYPE_INSTANT;
}

/* Resolve a plain event's strings now, as decode() would at parse time
 * against the same generation. */
void tp_proto_te_plain_record(struct proto_importer *im, const struct proto_seq *seq,
                              const struct proto_te_plain *sf, struct proto_te_rec *rec)
{
	struct tp *tp = im->tp;
	const struct proto_gen *g = seq->gen;
	bool has_uuid = sf->has_uuid;
	uint64_t uuid = sf->uuid;
	memset(rec, 0, sizeof *rec);
	rec->kind = EV_TE_SIMPLE | im->tag;
	rec->type = sf->type;
	rec->seq_id = seq->id;
	rec->pid = seq->pid;
	rec->tid = seq->tid;
	if (!has_uuid && g && g->has_track_uuid) {
		has_uuid = true;
		uuid = g->track_uuid;
	}
	rec->has_uuid = has_uuid;
	rec->uuid = uuid;
	if (sf->n_name)
		rec->name = sf->name.id == PB_F_TrackEvent_name
		                ? tp_intern(tp, (const char *)sf->name.data, sf->name.len)
		                : proto_interned_str(tp, g, INTERN_EVENT_NAMES, sf->name.val);
	proto_scratch_reset(im);
	for (unsigned i = 0; i < sf->n_cat; i++) {
		const struct pb_field *f = &sf->cats[i];
		uint32_t id = f->id == PB_F_TrackEvent_categories
		                  ? tp_intern(tp, (const char *)f->data, f->len)
		                  : proto_interned_str(tp, g, INTERN_EVENT_CATEGORIES, f->val);
		if (!id)
			continue;
		if (!rec->cat) {
			rec->cat = id;
			continue;
		}
		if (!im->scratch.len) {
			const char *c = tp_str(tp, rec->cat);
			tp_proto_scratch_add(im, c, strlen(c));
		}
		const char *c = tp_str(tp, id);
		tp_proto_scratch_add(im, ",", 1);
		tp_proto_scratch_add(im, c, strlen(c));
	}
	if (im->scratch.len)
		rec->cat = tp_intern(tp, im->scratch.data, im->scratch.len);
}

bool tp_proto_track_event_tokenize(struct proto_importer *im, struct proto_seq *seq,
                                   const uint8_t *p, size_t n, int64_t *ts, bool has_ts,
                                   struct proto_ev *out, struct proto_abs_counters *abs,
                                   struct proto_te_rec *simple)
{
	struct proto_te_plain sf;
	struct extra x;
	int64_t legacy_ts = 0;
	bool has_legacy_ts = false;
	uint32_t type = 0;
	bool has_uuid = false, has_value = false;
	uint64_t uuid = 0;
	double value = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	(void)has_ts;
	x.n_ctr_uuids = x.n_dbl_uuids = x.n_ctr_vals = x.n_dbl_vals = 0;
	sf.ok = true;
	sf.n_name = sf.n_cat = 0;
	memset(&sf.name, 0, sizeof sf.name);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		plain_field(&sf, &f);
		if (decode_extra(&f, &x))
			continue;
		switch (f.id) {
		case PB_F_TrackEvent_timestamp_delta_us:
			seq->ref_ts_ns =
			    sat_add(seq->ref_ts_ns, proto_sat_mul_1000((int64_t)f.val));
			legacy_ts = seq->ref_ts_ns;
			has_legacy_ts = true;
			break;
		case PB_F_TrackEvent_timestamp_absolute_us:
			if (f.val) {
				legacy_ts = proto_sat_mul_1000((int64_t)f.val);
				has_legacy_ts = true;
			}
			break;
		case PB_F_TrackEvent_thread_time_delta_us:
			seq->ref_thread_ns = (int64_t)((uint64_t)seq->ref_thread_ns + f.val * 1000);
			out->thread_ts = seq->ref_thread_ns;
			break;
		case PB_F_TrackEvent_thread_time_absolute_us:
			out->thread_ts = (int64_t)(f.val * 1000);
			break;
		case PB_F_TrackEvent_thread_instruction_count_delta:
			seq->ref_instr = (int64_t)((uint64_t)seq->ref_instr + f.val);
			out->thread_instr = seq->ref_instr;
			break;
		case PB_F_TrackEvent_thread_instruction_count_absolute:
			out->thread_instr = (int64_t)f.val;
			break;
		case PB_F_TrackEvent_type:
			type = (uint32_t)f.val;
			break;
		case PB_F_TrackEvent_track_uuid:
			has_uuid = true;
			uuid = f.val;
			break;
		case PB_F_TrackEvent_counter_value:
			has_value = true;
			value = (double)(int64_t)f.val;
			break;
		case PB_F_TrackEvent_double_counter_value:
			has_value = true;
			value = pb_field_double(&f);
			break;
		default:
			break;
		}
	}
	if (pb_reader_error(&r)) {
		tp_stat_inc(im->tp, TP_STAT_track_event_tokenizer_errors);
		return false;
	}
	if (has_legacy_ts) {
		/* Legacy timestamps are MONOTONIC; negative ones are dropped
		 * before conversion, where an offset could hide them. */
		if (legacy_ts < 0) {
			tp_stat_inc(im->tp, TP_STAT_track_event_invalid_timestamp);
			return false;
		}
		if (!tp_proto_clocks_to_trace(im->clocks, seq->id, PROTO_CLOCK_MONOTONIC,
		                              (uint64_t)legacy_ts, ts))
			*ts = legacy_ts;
	} else if (*ts < 0) {
		tp_stat_inc(im->tp, TP_STAT_track_event_invalid_timestamp);
		return false;
	}
	if (x.n_ctr_vals || x.n_dbl_vals)
		absolute_extra(im, seq, &x, abs);
	if (type == PB_E_TrackEvent_Type_TYPE_COUNTER && has_value) {
		if (!has_uuid && seq->gen && seq->gen->has_track_uuid) {
			has_uuid = true;
			uuid = seq->gen->track_uuid;
		}
		bool changed = false;
		if (has_uuid)
			value = absolute_value(im, seq, uuid, value, &changed);
		out->counter_value = value;
	}
	if (sf.ok && type >= PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN &&
	    type <= PB_E_TrackEvent_Type_TYPE_INSTANT) {
		sf.type = type;
		sf.has_uuid = has_uuid;
		sf.uuid = uuid;
		tp_proto_te_plain_record(im, seq, &sf, simple);
	}
	return true;
}

/* ---- parse time ---------------------------------------------------------------- */

struct te {
	uint32_t type;
	bool has_type, has_uuid, has_legacy;
	uint64_t uuid;
	uint32_t name, cat;
	bool has_value;
	double value;
	bool has_args, has_flows;
	/* legacy_event */
	int32_t phase;
	int64_t duration_us, thread_duration_us;
	int64_t pid_override, tid_override;
	uint32_t instant_scope;
	bool has_id, global_id, unscoped_id, bind_to_enclosing;
	struct pb_field id_scope; /* LegacyEvent.id_scope, len 0 none */
	uint64_t id;
	uint64_t bind_id;
	uint32_t flow_direction;
	struct extra x;
	struct proto_te_callstack cs;
};

static void add_category(struct proto_importer *im, struct te *e, uint32_t id)
{
	if (!id)
		return;
	if (!e->cat) {
		e->cat = id;
		return;
	}
	if (!im->scratch.len) {
		const char *s = tp_str(im->tp, e->cat);
		tp_proto_scratch_add(im, s, strlen(s));
	}
	const char *s = tp_str(im->tp, id);
	tp_proto_scratch_add(im, ",", 1);
	tp_proto_scratch_add(im, s, strlen(s));
}

static void decode_legacy(struct te *e, const struct pb_field *lf)
{
	struct pb_reader r;
	struct pb_field f = {0};
	e->has_legacy = true;
	pb_reader_init_field(&r, lf);
	while (pb_next(&r, &f)) {
		switch (f.id) {
		case PB_F_TrackEvent_LegacyEvent_phase:
			e->phase = (int32_t)f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_duration_us:
			e->duration_us = (int64_t)f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_thread_duration_us:
			e->thread_duration_us = (int64_t)f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_unscoped_id:
		case PB_F_TrackEvent_LegacyEvent_local_id:
			e->has_id = true;
			e->unscoped_id = f.id == PB_F_TrackEvent_LegacyEvent_unscoped_id;
			e->id = f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_bind_to_enclosing:
			e->bind_to_enclosing = f.val != 0;
			break;
		case PB_F_TrackEvent_LegacyEvent_id_scope:
			if (f.wire == PB_WIRE_LEN)
				e->id_scope = f;
			break;
		case PB_F_TrackEvent_LegacyEvent_global_id:
			e->has_id = true;
			e->global_id = true;
			e->id = f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_bind_id:
			e->bind_id = f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_flow_direction:
			e->flow_direction = (uint32_t)f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_instant_event_scope:
			e->instant_scope = (uint32_t)f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_pid_override:
			e->pid_override = (int32_t)f.val;
			break;
		case PB_F_TrackEvent_LegacyEvent_tid_override:
			e->tid_override = (int32_t)f.val;
			break;
		default:
			break;
		}
	}
}

static bool decode(struct proto_importer *im, const struct proto_gen *g, const uint8_t *p, size_t n,
                   struct te *e)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	proto_scratch_reset(im);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (decode_extra(&f, &e->x))
			continue;
		switch (f.id) {
		case PB_F_TrackEvent_type:
			e->has_type = true;
			e->type = (uint32_t)f.val;
			break;
		case PB_F_TrackEvent_track_uuid:
			e->has_uuid = true;
			e->uuid = f.val;
			break;
		case PB_F_TrackEvent_name:
			if (f.wire == PB_WIRE_LEN)
				e->name = tp_intern(tp, (const char *)f.data, f.len);
			break;
		case PB_F_TrackEvent_name_iid:
			e->name = proto_interned_str(tp, g, INTERN_EVENT_NAMES, f.val);
			break;
		case PB_F_TrackEvent_category_iids: {
			uint64_t iids[16];
			uint32_t k = 0;
			repeated_u64(&f, iids, &k, 16);
			for (uint32_t i = 0; i < k; i++)
				add_category(
				    im, e,
				    proto_interned_str(tp, g, INTERN_EVENT_CATEGORIES, iids[i]));
			break;
		}
		case PB_F_TrackEvent_categories:
			if (f.wire == PB_WIRE_LEN)
				add_category(im, e, tp_intern(tp, (const char *)f.data, f.len));
			break;
		case PB_F_TrackEvent_counter_value:
			e->has_value = true;
			e->value = (double)(int64_t)f.val;
			break;
		case PB_F_TrackEvent_double_counter_value:
			e->has_value = true;
			e->value = pb_field_double(&f);
			break;
		case PB_F_TrackEvent_debug_annotations:
		case PB_F_TrackEvent_task_execution:
		case PB_F_TrackEvent_log_message:
		case PB_F_TrackEvent_chrome_histogram_sample:
		case PB_F_TrackEvent_source_location:
		case PB_F_TrackEvent_source_location_iid:
			e->has_args = true;
			break;
		case PB_F_TrackEvent_flow_ids:
		case PB_F_TrackEvent_terminating_flow_ids:
		case PB_F_TrackEvent_flow_ids_old:
		case PB_F_TrackEvent_terminating_flow_ids_old:
			e->has_flows = true;
			break;
		case PB_F_TrackEvent_legacy_event:
			if (f.wire == PB_WIRE_LEN)
				decode_legacy(e, &f);
			break;
		case PB_F_TrackEvent_callstack:
			if (f.wire == PB_WIRE_LEN) {
				e->cs.inline_data = f.data;
				e->cs.inline_len = f.len;
			}
			break;
		case PB_F_TrackEvent_callstack_iid:
			e->cs.has_iid = true;
			e->cs.iid = f.val;
			break;
		case PB_F_TrackEvent_callstack_weight:
			e->cs.has_weight = f.wire == PB_WIRE_FIXED64;
			e->cs.weight = pb_field_double(&f);
			break;
		default:
			break;
		}
	}
	if (im->scratch.len)
		e->cat = tp_intern(tp, im->scratch.data, im->scratch.len);
	return pb_reader_error(&r) == PB_OK;
}

/* ---- args ------------------------------------------------------------------------ */

struct keybuf {
	char key[PROTO_KEY_MAX], flat[PROTO_KEY_MAX];
	size_t kn, fn;
};

static void kb_add(struct keybuf *kb, const char *s, size_t n, bool flat_too)
{
	if (kb->kn + n < PROTO_KEY_MAX) {
		memcpy(kb->key + kb->kn, s, n);
		kb->kn += n;
	}
	if (flat_too && kb->fn + n < PROTO_KEY_MAX) {
		memcpy(kb->flat + kb->fn, s, n);
		kb->fn += n;
	}
}

static void kb_ids(struct tp *tp, const struct keybuf *kb, uint32_t *flat, uint32_t *key)
{
	*key = tp_intern(tp, kb->key, kb->kn);
	*flat = kb->fn == kb->kn && memcmp(kb->key, kb->flat, kb->fn) == 0
	            ? *key
	            : tp_intern(tp, kb->flat, kb->fn);
}

static void nested_value(struct proto_importer *im, const uint8_t *p, size_t n, struct keybuf *kb,
                         int depth);

static void annotation_value(struct proto_importer *im, const struct proto_gen *g, const uint8_t *p,
                             size_t n, struct keybuf *kb, int depth);

/* A DebugAnnotation with a name: appends ".name" and adds its value. */
static void annotation(struct proto_importer *im, const struct proto_gen *g, const uint8_t *p,
                       size_t n, struct keybuf *kb, int depth)
{
	struct pb_field f = {0};
	const char *name = NULL;
	size_t nlen = 0;
	if (pb_find_field(p, n, PB_F_DebugAnnotation_name, &f) == 1 && f.wire == PB_WIRE_LEN) {
		name = (const char *)f.data;
		nlen = f.len;
	} else if (pb_find_field(p, n, PB_F_DebugAnnotation_name_iid, &f) == 1 &&
	           f.wire == PB_WIRE_VARINT) {
		uint32_t id = proto_interned_str(im->tp, g, INTERN_DEBUG_ANNOTATION_NAMES, f.val);
		if (id) {
			name = tp_str(im->tp, id);
			nlen = strlen(name);
		}
	}
	if (!name)
		return;
	size_t kn = kb->kn, fn = kb->fn;
	kb_add(kb, ".", 1, true);
	kb_add(kb, name, nlen, true);
	annotation_value(im, g, p, n, kb, depth);
	kb->kn = kn;
	kb->fn = fn;
}

static void add_index(struct keybuf *kb, uint32_t i)
{
	char b[24];
	size_t o = 1;
	b[0] = '[';
	o += tb_u64_dec(b + 1, i);
	b[o++] = ']';
	kb_add(kb, b, o, false);
}

static void annotation_value(struct proto_importer *im, const struct proto_gen *g, const uint8_t *p,
                             size_t n, struct keybuf *kb, int depth)
{
	struct tp *tp = im->tp;
	struct tp_args_builder *b = &im->args;
	struct pb_reader r;
	struct pb_field f = {0};
	uint32_t fk, k, idx = 0;
	if (depth > PROTO_MAX_ARG_DEPTH)
		return;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		switch (f.id) {
		case PB_F_DebugAnnotation_bool_value:
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_bool(b, fk, k, f.val != 0);
			break;
		case PB_F_DebugAnnotation_uint_value:
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_uint(b, fk, k, f.val);
			break;
		case PB_F_DebugAnnotation_int_value:
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_int(b, fk, k, (int64_t)f.val);
			break;
		case PB_F_DebugAnnotation_double_value:
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_real(b, fk, k, pb_field_double(&f));
			break;
		case PB_F_DebugAnnotation_string_value:
			if (f.wire != PB_WIRE_LEN)
				break;
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_string(b, fk, k, tp_intern(tp, (const char *)f.data, f.len));
			break;
		case PB_F_DebugAnnotation_string_value_iid:
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_string(b, fk, k,
			                   proto_interned_str(tp, g,
			                                      INTERN_DEBUG_ANNOTATION_STRING_VALUES,
			                                      f.val));
			break;
		case PB_F_DebugAnnotation_pointer_value:
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_pointer(b, fk, k, f.val);
			break;
		case PB_F_DebugAnnotation_legacy_json_value:
			if (f.wire != PB_WIRE_LEN)
				break;
			kb_ids(tp, kb, &fk, &k);
			/* legacy_json_value: its JSON as args under the key, as
			 * Perfetto's ArgsParser; kept whole when it is not JSON
			 * (or below an array, where the flat key differs). */
			if (fk == k) {
				if (!im->json_args)
					im->json_args = tp_json_args_new();
				if (tp_json_args_add(tp, im->json_args, k, (const char *)f.data,
				                     f.len, b))
					break;
			}
			tp_args_add_json(b, fk, k, tp_intern(tp, (const char *)f.data, f.len));
			break;
		case PB_F_DebugAnnotation_nested_value:
			if (f.wire == PB_WIRE_LEN)
				nested_value(im, f.data, f.len, kb, depth + 1);
			break;
		case PB_F_DebugAnnotation_dict_entries:
			if (f.wire == PB_WIRE_LEN)
				annotation(im, g, f.data, f.len, kb, depth + 1);
			break;
		case PB_F_DebugAnnotation_array_values:
			if (f.wire == PB_WIRE_LEN) {
				size_t kn = kb->kn;
				add_index(kb, idx++);
				annotation_value(im, g, f.data, f.len, kb, depth + 1);
				kb->kn = kn;
			}
			break;
		default:
			break;
		}
	}
}

/* Legacy NestedValue: DICT (keys[i] -> values[i]), ARRAY, or a scalar. */
static void nested_value(struct proto_importer *im, const uint8_t *p, size_t n, struct keybuf *kb,
                         int depth)
{
	struct tp *tp = im->tp;
	struct tp_args_builder *b = &im->args;
	struct pb_reader r;
	struct pb_field f = {0};
	uint32_t fk, k, type = 0, ki = 0, vi = 0, ai = 0;
	if (depth > PROTO_MAX_ARG_DEPTH)
		return;
	if (pb_find_field(p, n, PB_F_DebugAnnotation_NestedValue_nested_type, &f) == 1)
		type = (uint32_t)f.val;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (type == PB_E_DebugAnnotation_NestedValue_NestedType_DICT &&
		    f.id == PB_F_DebugAnnotation_NestedValue_dict_values && f.wire == PB_WIRE_LEN) {
			/* The vi-th value pairs with the vi-th key. */
			struct pb_reader kr;
			struct pb_field kf = {0};
			ki = 0;
			pb_reader_init(&kr, p, n);
			while (pb_next(&kr, &kf)) {
				if (kf.id != PB_F_DebugAnnotation_NestedValue_dict_keys)
					continue;
				if (ki++ != vi)
					continue;
				size_t kn = kb->kn, fn = kb->fn;
				kb_add(kb, ".", 1, true);
				kb_add(kb, (const char *)kf.data, kf.len, true);
				nested_value(im, f.data, f.len, kb, depth + 1);
				kb->kn = kn;
				kb->fn = fn;
				break;
			}
			vi++;
		} else if (type == PB_E_DebugAnnotation_NestedValue_NestedType_ARRAY &&
		           f.id == PB_F_DebugAnnotation_NestedValue_array_values &&
		           f.wire == PB_WIRE_LEN) {
			size_t kn = kb->kn;
			add_index(kb, ai++);
			nested_value(im, f.data, f.len, kb, depth + 1);
			kb->kn = kn;
		} else if (type == PB_E_DebugAnnotation_NestedValue_NestedType_UNSPECIFIED &&
		           f.id == PB_F_DebugAnnotation_NestedValue_int_value) {
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_int(b, fk, k, (int64_t)f.val);
		} else if (type == PB_E_DebugAnnotation_NestedValue_NestedType_UNSPECIFIED &&
		           f.id == PB_F_DebugAnnotation_NestedValue_double_value) {
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_real(b, fk, k, pb_field_double(&f));
		} else if (type == PB_E_DebugAnnotation_NestedValue_NestedType_UNSPECIFIED &&
		           f.id == PB_F_DebugAnnotation_NestedValue_bool_value) {
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_bool(b, fk, k, f.val != 0);
		} else if (type == PB_E_DebugAnnotation_NestedValue_NestedType_UNSPECIFIED &&
		           f.id == PB_F_DebugAnnotation_NestedValue_string_value &&
		           f.wire == PB_WIRE_LEN) {
			kb_ids(tp, kb, &fk, &k);
			tp_args_add_string(b, fk, k, tp_intern(tp, (const char *)f.data, f.len));
		}
	}
}

/* An interned SourceLocation as Perfetto's `<prefix>.file_name` (path
 * separators as '/'), `.function_name` and `.line_number` (uint), each
 * present even when the message lacks it; false if iid is unknown. */
static bool interned_location(struct proto_importer *im, const struct proto_gen *g, uint64_t iid,
                              const char *prefix)
{
	struct tp *tp = im->tp;
	const struct proto_interned *e =
	    iid ? proto_gen_lookup(g, INTERN_SOURCE_LOCATIONS, iid) : NULL;
	if (!e)
		return false;
	struct pb_field f = {0};
	uint32_t file = tp_intern(tp, "", 0), func = file;
	uint64_t line = 0;
	if (pb_find_field(e->data, e->len, PB_F_SourceLocation_file_name, &f) == 1 &&
	    f.wire == PB_WIRE_LEN) {
		proto_scratch_reset(im);
		tp_proto_scratch_add(im, f.data, f.len);
		for (size_t i = 0; i < im->scratch.len; i++)
			if (im->scratch.data[i] == '\\')
				im->scratch.data[i] = '/';
		file = tp_intern(tp, im->scratch.data ? im->scratch.data : "", im->scratch.len);
	}
	if (pb_find_field(e->data, e->len, PB_F_SourceLocation_function_name, &f) == 1 &&
	    f.wire == PB_WIRE_LEN)
		func = tp_intern(tp, (const char *)f.data, f.len);
	if (pb_find_field(e->data, e->len, PB_F_SourceLocation_line_number, &f) == 1 &&
	    f.wire == PB_WIRE_VARINT)
		line = (uint32_t)f.val;
	char key[64];
	uint32_t k;
	snprintf(key, sizeof key, "%s.file_name", prefix);
	k = tp_intern_cstr(tp, key);
	tp_args_add_string(&im->args, k, k, file);
	snprintf(key, sizeof key, "%s.function_name", prefix);
	k = tp_intern_cstr(tp, key);
	tp_args_add_string(&im->args, k, k, func);
	snprintf(key, sizeof key, "%s.line_number", prefix);
	k = tp_intern_cstr(tp, key);
	tp_args_add_uint(&im->args, k, k, line);
	return true;
}

/* Perfetto reflects some TrackEvent fields into args by name: a message's
 * fields 1..n as `key`, by type ('s' string, 'i' int, 'u' uint), those
 * present in wire order. */
struct reflected {
	const char *key;
	char type;
};

static void reflect_fields(struct proto_importer *im, const struct reflected *fields,
                           uint32_t n_fields, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id < 1 || f.id > n_fields)
			continue;
		const struct reflected *rf = &fields[f.id - 1];
		if ((rf->type == 's') != (f.wire == PB_WIRE_LEN))
			continue;
		uint32_t k = tp_intern_cstr(tp, rf->key);
		if (rf->type == 's')
			tp_args_add_string(&im->args, k, k,
			                   tp_intern(tp, (const char *)f.data, f.len));
		else if (rf->type == 'i')
			tp_args_add_int(&im->args, k, k, (int64_t)f.val);
		else
			tp_args_add_uint(&im->args, k, k, f.val);
	}
}

/* An inline SourceLocation (TrackEvent field 33). */
static const struct reflected inline_location[] = {
    {"source_location.iid", 'u'},
    {"source_location.file_name", 's'},
    {"source_location.function_name", 's'},
    {"source_location.line_number", 'u'},
};

/* ChromeHistogramSample (TrackEvent field 28). */
static const struct reflected histogram_fields[] = {
    {"chrome_histogram_sample.name_hash", 'u'},
    {"chrome_histogram_sample.name", 's'},
    {"chrome_histogram_sample.sample", 'i'},
    {"chrome_histogram_sample.name_iid", 'u'},
};

/* A LogMessage (body and source location by iid, priority): a `logs` row
 * ("android_logcat", tag "file:line", priority INFO unless given, as
 * Perfetto's, whose LogMessage priorities equal Android's) and
 * `track_event.log_message.*` args. Needs the event's thread. */
static void log_message(struct proto_importer *im, const struct proto_gen *g, const uint8_t *p,
                        size_t n, int64_t ts, uint32_t utid)
{
	struct tp *tp = im->tp;
	uint64_t body_iid = 0, loc_iid = 0;
	bool has_loc = false, has_prio = false;
	int64_t prio = 4;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire != PB_WIRE_VARINT)
			continue;
		if (f.id == PB_F_LogMessage_source_location_iid) {
			has_loc = true;
			loc_iid = f.val;
		} else if (f.id == PB_F_LogMessage_body_iid) {
			body_iid = f.val;
		} else if (f.id == PB_F_LogMessage_prio) {
			has_prio = true;
			prio = f.val <= 7 ? (int64_t)f.val : 0;
		}
	}
	uint32_t body = proto_interned_str(tp, g, INTERN_LOG_MESSAGE_BODY, body_iid);
	const struct proto_interned *loc =
	    has_loc ? proto_gen_lookup(g, INTERN_SOURCE_LOCATIONS, loc_iid) : NULL;
	if (utid == TP_NULL_U32 || !body || (has_loc && !loc)) {
		tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
		return;
	}
	uint32_t k = tp_intern_cstr(tp, "track_event.log_message.message");
	tp_args_add_string(&im->args, k, k, body);
	uint32_t tag = 0;
	if (loc) {
		struct pb_field lf = {0};
		uint32_t file = 0, func = 0;
		uint64_t line = 0;
		if (pb_find_field(loc->data, loc->len, PB_F_SourceLocation_file_name, &lf) == 1 &&
		    lf.wire == PB_WIRE_LEN)
			file = tp_intern(tp, (const char *)lf.data, lf.len);
		if (pb_find_field(loc->data, loc->len, PB_F_SourceLocation_function_name, &lf) ==
		        1 &&
		    lf.wire == PB_WIRE_LEN)
			func = tp_intern(tp, (const char *)lf.data, lf.len);
		if (pb_find_field(loc->data, loc->len, PB_F_SourceLocation_line_number, &lf) == 1)
			line = (uint32_t)lf.val;
		char buf[PROTO_KEY_MAX];
		const char *fs = file ? tp_str(tp, file) : "";
		int len = snprintf(buf, sizeof buf, "%s:%" PRIu64, fs, line);
		tag = tp_intern(tp, buf, len < (int)sizeof buf ? (size_t)len : sizeof buf - 1);
		k = tp_intern_cstr(tp, "track_event.log_message.file_name");
		tp_args_add_string(&im->args, k, k, file ? file : tp_intern(tp, "", 0));
		k = tp_intern_cstr(tp, "track_event.log_message.function_name");
		tp_args_add_string(&im->args, k, k, func ? func : tp_intern(tp, "", 0));
		k = tp_intern_cstr(tp, "track_event.log_message.line_number");
		tp_args_add_int(&im->args, k, k, (int64_t)line);
	}
	if (has_prio) {
		k = tp_intern_cstr(tp, "track_event.priority");
		tp_args_add_int(&im->args, k, k, prio);
	}
	struct tp_logs_table *t = &tp->t.logs;
	uint32_t row = tp_logs_append(t);
	t->ts[row] = ts;
	t->utid[row] = utid;
	t->prio[row] = prio;
	t->log_source[row] = tp_intern_cstr(tp, "android_logcat");
	t->tag[row] = tag;
	t->msg[row] = body;
}

/* ChromeHistogramSample, as Perfetto: the interned HistogramName as
 * `chrome_histogram_sample.name` when only name_iid is given (both, or an
 * unknown iid: track_event_parser_errors); its fields are reflected too. */
static void histogram_name(struct proto_importer *im, const struct proto_gen *g, const uint8_t *p,
                           size_t n)
{
	struct tp *tp = im->tp;
	struct pb_field f = {0};
	if (pb_find_field(p, n, PB_F_ChromeHistogramSample_name_iid, &f) != 1 ||
	    f.wire != PB_WIRE_VARINT)
		return;
	/* Only one of name and name_iid may be given. */
	bool inline_name =
	    pb_find_field(p, n, PB_F_ChromeHistogramSample_name, &(struct pb_field){0}) != 0;
	uint32_t name = inline_name ? 0 : proto_interned_str(tp, g, INTERN_HISTOGRAM_NAMES, f.val);
	if (!name) {
		tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
		return;
	}
	uint32_t k = tp_intern_cstr(tp, "chrome_histogram_sample.name");
	tp_args_add_string(&im->args, k, k, name);
}

/* What the legacy event adds to a slice's args (Perfetto's JSON export
 * hints): the async id, the thread the event came from, the phase. */
struct legacy_args {
	bool has_source_id;
	int64_t source_id;         /* legacy_trace_source_id */
	uint32_t passthrough_utid; /* legacy_event.passthrough_utid, or TP_NULL_U32 */
	char phase;                /* legacy_event.phase, or 0 */
};

/* The slice args of a TrackEvent in Perfetto's order: the interned source
 * location (source.*), the task's (task.posted_from.*), the log message,
 * the interned histogram name, legacy_trace_source_id, the reflected typed
 * fields in wire order (chrome_histogram_sample, source_location,
 * source_location_iid), debug annotations, then the passthrough utid and
 * the phase. */
static void build_args(struct proto_importer *im, const struct proto_gen *g, const uint8_t *p,
                       size_t n, const struct legacy_args *la, int64_t ts, uint32_t utid)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0}, tf = {0};
	struct keybuf kb;
	uint32_t k;
	tp_args_begin(&im->args);
	if (pb_find_field(p, n, PB_F_TrackEvent_source_location_iid, &f) == 1 &&
	    !interned_location(im, g, f.val, "source"))
		tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
	if (pb_find_field(p, n, PB_F_TrackEvent_task_execution, &f) == 1 && f.wire == PB_WIRE_LEN &&
	    (pb_find_field(f.data, f.len, PB_F_TaskExecution_posted_from_iid, &tf) != 1 ||
	     !interned_location(im, g, tf.val, "task.posted_from")))
		tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_TrackEvent_log_message && f.wire == PB_WIRE_LEN)
			log_message(im, g, f.data, f.len, ts, utid);
		else if (f.id == PB_F_TrackEvent_chrome_histogram_sample && f.wire == PB_WIRE_LEN)
			histogram_name(im, g, f.data, f.len);
	}
	if (la->has_source_id) {
		k = tp_intern_cstr(tp, "legacy_trace_source_id");
		tp_args_add_int(&im->args, k, k, la->source_id);
	}
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_TrackEvent_chrome_histogram_sample && f.wire == PB_WIRE_LEN) {
			reflect_fields(im, histogram_fields, TB_ARRAY_SIZE(histogram_fields),
			               f.data, f.len);
		} else if (f.id == PB_F_TrackEvent_source_location && f.wire == PB_WIRE_LEN) {
			reflect_fields(im, inline_location, TB_ARRAY_SIZE(inline_location), f.data,
			               f.len);
		} else if (f.id == PB_F_TrackEvent_source_location_iid &&
		           f.wire == PB_WIRE_VARINT) {
			k = tp_intern_cstr(tp, "source_location_iid");
			tp_args_add_uint(&im->args, k, k, f.val);
		}
	}
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_TrackEvent_debug_annotations && f.wire == PB_WIRE_LEN) {
			kb.kn = kb.fn = 0;
			kb_add(&kb, "debug", 5, true);
			annotation(im, g, f.data, f.len, &kb, 0);
		}
	}
	if (la->passthrough_utid != TP_NULL_U32) {
		k = tp_intern_cstr(tp, "legacy_event.passthrough_utid");
		tp_args_add_uint(&im->args, k, k, la->passthrough_utid);
	}
	if (la->phase) {
		k = tp_intern_cstr(tp, "legacy_event.phase");
		tp_args_add_string(&im->args, k, k, tp_intern(tp, &la->phase, 1));
	}
}

/* ---- flows ------------------------------------------------------------------------ */

static void flows(struct proto_importer *im, const uint8_t *p, size_t n, uint32_t slice)
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		bool term = f.id == PB_F_TrackEvent_terminating_flow_ids ||
		            f.id == PB_F_TrackEvent_terminating_flow_ids_old;
		enum pb_wire w;
		if (f.id == PB_F_TrackEvent_flow_ids ||
		    f.id == PB_F_TrackEvent_terminating_flow_ids)
			w = PB_WIRE_FIXED64;
		else if (f.id == PB_F_TrackEvent_flow_ids_old ||
		         f.id == PB_F_TrackEvent_terminating_flow_ids_old)
			w = PB_WIRE_VARINT;
		else
			continue;
		if (f.wire == PB_WIRE_LEN) {
			struct pb_packed it;
			uint64_t v;
			pb_packed_init(&it, f.data, f.len, w);
			while (pb_packed_next(&it, &v))
				tp_flow_step(im->tp, v, slice, term);
		} else {
			tp_flow_step(im->tp, f.val, slice, term);
		}
	}
}

/* ---- tracks ------------------------------------------------------------------------ */

static bool is_async_phase(int ph)
{
	return ph == 'b' || ph == 'e' || ph == 'n' || ph == 'S' || ph == 'F' || ph == 'T' ||
	       ph == 'p';
}

static uint32_t legacy_track(struct proto_importer *im, const struct proto_ev *ev, struct te *e,
                             uint32_t *utid_out)
{
	struct tp *tp = im->tp;
	int64_t pid = e->pid_override ? e->pid_override : ev->pid;
	int64_t tid = e->tid_override ? e->tid_override : ev->tid;
	if (e->pid_override && !e->tid_override)
		tid = -1;
	int ph = e->phase;
	if (e->has_id && is_async_phase(ph)) {
		/* The event's thread still is its passthrough utid. */
		if (tid >= 0)
			*utid_out = tp_thread_for_tid(tp, tid, pid > 0 ? pid : -1);
		/* Only local ids are scoped to the process (which they need). */
		uint32_t upid = TP_NULL_U32,
		         event_upid = pid > 0 ? tp_process_for_pid(tp, pid) : TP_NULL_U32;
		if (!e->global_id && !e->unscoped_id) {
			if (event_upid == TP_NULL_U32) {
				tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
				return TP_NULL_U32;
			}
			upid = event_upid;
		}
		/* Catapult's rule: b/e/n of one id but different categories are
		 * different tracks, S/T/p/F of different names. */
		bool old_async = ph == 'S' || ph == 'T' || ph == 'p' || ph == 'F';
		uint32_t scope = old_async ? e->name : e->cat;
		if (e->id_scope.len) {
			proto_scratch_reset(im);
			const char *c = e->cat ? tp_str(tp, e->cat) : "";
			tp_proto_scratch_add(im, c, strlen(c));
			tp_proto_scratch_add(im, ":", 1);
			tp_proto_scratch_add(im, e->id_scope.data, e->id_scope.len);
			scope = tp_intern(tp, im->scratch.data, im->scratch.len);
		}
		return tp_proto_legacy_async_track(im, ph, e->name, upid, event_upid, e->id, scope);
	}
	if ((ph == 'I' || ph == 'i' || ph == 'R') && e->instant_scope == 1) {
		return tp_proto_track_resolve(im, 0);
	}
	if ((ph == 'I' || ph == 'i' || ph == 'R') && e->instant_scope == 2 && pid >= 0) {
		struct tp_track_key key = {.type = "legacy_chrome_global_instants",
		                           .event_type = "slice",
		                           .utid = -1,
		                           .upid = tp_process_for_pid(tp, pid),
		                           .cpu = -1};
		return tp_track_get(tp, &key);
	}
	if (tid >= 0) {
		uint32_t utid = tp_thread_for_tid(tp, tid, pid > 0 ? pid : -1);
		*utid_out = utid;
		return tp_track_for_thread(tp, utid);
	}
	return tp_proto_track_resolve(im, 0);
}

static uint32_t event_track(struct proto_importer *im, const struct proto_ev *ev, struct te *e,
                            uint32_t *utid_out)
{
	const struct proto_gen *g = ev->gen;
	bool legacy_fallback = e->has_legacy && !e->has_type &&
	                       (e->has_uuid ? e->uuid == 0 : !(g && g->has_track_uuid));
	if (legacy_fallback || e->pid_override || e->tid_override)
		return legacy_track(im, ev, e, utid_out);
	uint64_t uuid = 0;
	if (e->has_uuid) {
		uuid = e->uuid;
	} else if (g && g->has_track_uuid) {
		uuid = g->track_uuid;
	} else if (ev->tid >= 0) {
		uint32_t utid = tp_thread_for_tid(im->tp, ev->tid, ev->pid > 0 ? ev->pid : -1);
		*utid_out = utid;
		return tp_track_for_thread(im->tp, utid);
	}
	uint32_t track = tp_proto_track_resolve_for(im, uuid, e->name, ev->seq_id);
	struct proto_track *t = track != TP_NULL_U32 ? tp_proto_track_find(im, uuid) : NULL;
	if (t)
		*utid_out = tp_proto_track_utid(im, t);
	return track;
}

/* ---- counters ------------------------------------------------------------------------ */

/* Add value to the counter track of uuid; returns the track's descriptor. */
static struct proto_track *counter_value(struct proto_importer *im, uint64_t uuid, int64_t ts,
                                         double v, uint32_t seq_id)
{
	struct proto_track *t = tp_proto_track_find(im, uuid);
	if (!t || !t->is_counter) {
		tp_stat_inc(im->tp, TP_STAT_track_event_parser_errors);
		return NULL;
	}
	uint32_t track = tp_proto_track_resolve_for(im, uuid, 0, seq_id);
	if (t->unit_multiplier > 0)
		v *= (double)t->unit_multiplier;
	tp_counter_add(im->tp, track, ts, v, TP_NULL_U32);
	return t;
}

struct thread_counters {
	int64_t time, instr; /* TP_NULL_I64 when absent */
};

static void extra_counters(struct proto_importer *im, const struct proto_gen *g, struct te *e,
                           int64_t ts, uint32_t seq_id, struct thread_counters *tc)
{
	const uint64_t *uu = e->x.ctr_uuids;
	uint32_t nu = e->x.n_ctr_uuids;
	if (!nu && g) {
		uu = g->counter_uuids;
		nu = g->n_counter_uuids;
	}
	for (uint32_t i = 0; i < e->x.n_ctr_vals; i++) {
		if (i >= nu) {
			tp_stat_inc(im->tp, TP_STAT_track_event_parser_errors);
			break;
		}
		struct proto_track *t = counter_value(im, uu[i], ts, e->x.ctr_vals[i], seq_id);
		double v = e->x.ctr_vals[i] *
		           (t && t->unit_multiplier > 0 ? (double)t->unit_multiplier : 1);
		if (t && t->counter_type == 1)
			tc->time = (int64_t)v;
		else if (t && t->counter_type == 2)
			tc->instr = (int64_t)v;
	}
	uu = e->x.dbl_uuids;
	nu = e->x.n_dbl_uuids;
	if (!nu && g) {
		uu = g->dbl_counter_uuids;
		nu = g->n_dbl_counter_uuids;
	}
	for (uint32_t i = 0; i < e->x.n_dbl_vals; i++) {
		if (i >= nu) {
			tp_stat_inc(im->tp, TP_STAT_track_event_parser_errors);
			break;
		}
		counter_value(im, uu[i], ts, e->x.dbl_vals[i], seq_id);
	}
}

/* Legacy thread time / instruction count fields also become counters on
 * the thread ("thread_time", "thread_instruction_count", no unit). */
static void legacy_thread_counters(struct proto_importer *im, const struct proto_ev *ev, int64_t ts,
                                   uint32_t utid)
{
	struct tp *tp = im->tp;
	struct tp_track_key key = {.event_type = "counter", .utid = utid, .upid = -1, .cpu = -1};
	if (ev->thread_ts != TP_NULL_I64) {
		key.type = "thread_time";
		key.name = tp_intern_cstr(tp, "thread_time");
		tp_counter_add(tp, tp_track_get(tp, &key), ts, (double)ev->thread_ts, TP_NULL_U32);
	}
	if (ev->thread_instr != TP_NULL_I64) {
		key.type = "thread_instructions";
		key.name = tp_intern_cstr(tp, "thread_instruction_count");
		tp_counter_add(tp, tp_track_get(tp, &key), ts, (double)ev->thread_instr,
		               TP_NULL_U32);
	}
}

/* ---- the event ------------------------------------------------------------------------ */

void tp_proto_track_event_parse_simple(struct proto_importer *im, int64_t ts,
                                       const struct proto_te_rec *r)
{
	struct tp *tp = im->tp;
	uint32_t track;
	if (r->has_uuid) {
		/* A materialised track needs nothing but its id (its thread is
		 * bound since); else the full resolution of event_track(). */
		struct proto_track *t = tp_proto_track_find(im, r->uuid);
		if (t && t->track_id != TP_NULL_U32) {
			track = t->track_id;
		} else {
			track = tp_proto_track_resolve_for(im, r->uuid, r->name, r->seq_id);
			t = track != TP_NULL_U32 ? tp_proto_track_find(im, r->uuid) : NULL;
			if (t)
				tp_proto_track_utid(im, t);
		}
	} else if (r->tid >= 0) {
		uint32_t utid = tp_thread_for_tid(tp, r->tid, r->pid > 0 ? r->pid : -1);
		track = tp_track_for_thread(tp, utid);
	} else {
		track = tp_proto_track_resolve_for(im, 0, r->name, r->seq_id);
	}
	if (track == TP_NULL_U32)
		return;
	switch (r->type) {
	case PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN:
		tp_slice_begin(tp, track, ts, r->cat, r->name, TP_NULL_U32);
		break;
	case PB_E_TrackEvent_Type_TYPE_SLICE_END:
		tp_slice_end(tp, track, ts, r->cat, r->name, TP_NULL_U32);
		break;
	default:
		tp_slice_complete(tp, track, ts, 0, r->cat, r->name, TP_NULL_U32);
		break;
	}
}

/* Flow v1: 's' starts the flow (keyed by unscoped id, category and name)
 * at the slice on top of the track's stack, 't' continues it there, 'f'
 * ends it there when bound to the enclosing slice, else in the next slice
 * that begins on the track. */
static void flow_v1(struct proto_importer *im, const struct te *e, uint32_t track)
{
	struct tp *tp = im->tp;
	if (!e->has_id || !e->unscoped_id) {
		tp_stat_inc(tp, TP_STAT_flow_invalid_id);
		tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
		return;
	}
	uint64_t id = tp_flow_v1_id(tp, e->id, e->cat, e->name);
	if (e->phase == 'f' && !e->bind_to_enclosing) {
		tp_flow_end_pending(tp, track, id);
		return;
	}
	uint32_t slice = tp_slice_top(tp, track);
	if (slice == TP_NULL_U32) {
		tp_stat_inc(tp, TP_STAT_flow_no_enclosing_slice);
		return;
	}
	if (e->phase == 's')
		tp_flow_begin(tp, id, slice);
	else if (e->phase == 't')
		tp_flow_continue(tp, id, slice);
	else
		tp_flow_end(tp, id, slice, false);
}

/* A PB_E_TrackEvent_Type_TYPE_STATE event: the state of its track (which must be a state
 * track; uuid 0 or none is an error, there is no legacy fallback) becomes
 * the event's name from ts on; no name ends the current state. */
static void state_event(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                        const struct te *e, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	uint64_t uuid = e->has_uuid                          ? e->uuid
	                : ev->gen && ev->gen->has_track_uuid ? ev->gen->track_uuid
	                                                     : 0;
	struct proto_track *t = uuid ? tp_proto_track_find(im, uuid) : NULL;
	if (!t || !t->is_state) {
		tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
		return;
	}
	uint32_t track = tp_proto_track_resolve_for(im, uuid, e->name, ev->seq_id);
	if (track == TP_NULL_U32)
		return;
	struct legacy_args la = {.passthrough_utid = TP_NULL_U32};
	uint32_t args = TP_NULL_U32;
	if (e->name && e->has_args) {
		tp_args_begin(&im->args);
		build_args(im, ev->gen, p, n, &la, ts, TP_NULL_U32);
		args = tp_args_commit(tp, &im->args);
	}
	tp_state_update(tp, track, ts, e->name, e->cat, args);
}

void tp_proto_track_event_parse(struct proto_importer *im, int64_t ts, const struct proto_ev *ev,
                                const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct te e;
	memset(&e, 0, sizeof e);
	if (!decode(im, ev->gen, p, n, &e)) {
		tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
		return;
	}
	/* --analyze-trace-proto-content: an event with a type or a legacy
	 * phase, by its category and name, as Perfetto's importer. */
	if (ev->pkt_len && (e.type || e.phase))
		tp_proto_content_packet(im,
		                        p + n + (ev->n_abs_int + ev->n_abs_dbl) * sizeof(double),
		                        ev->pkt_len, PROTO_CONTENT_TRACK_EVENT, e.cat, e.name);
	uint32_t type = e.type;
	if (!e.has_type && e.has_legacy) {
		switch (e.phase) {
		case 'B':
			type = PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN;
			break;
		case 'E':
			type = PB_E_TrackEvent_Type_TYPE_SLICE_END;
			break;
		case 'I':
		case 'i':
		case 'R':
		case 'n':
			type = PB_E_TrackEvent_Type_TYPE_INSTANT;
			break;
		case 'b':
		case 'S':
			type = PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN;
			break;
		case 'e':
		case 'F':
			type = PB_E_TrackEvent_Type_TYPE_SLICE_END;
			break;
		case 'T':
		case 'p':
			type = PB_E_TrackEvent_Type_TYPE_INSTANT; /* async steps: instants, as
			                                             Perfetto */
			break;
		case 'X':
			type = TE_TYPE_LEGACY_COMPLETE;
			break;
		case 's':
		case 't':
		case 'f':
			type = 101; /* flow v1 */
			break;
		default:
			tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
			return;
		}
	}
	if (type == PB_E_TrackEvent_Type_TYPE_STATE) {
		state_event(im, ts, ev, &e, p, n);
		return;
	}
	uint32_t utid = TP_NULL_U32;
	uint32_t track = event_track(im, ev, &e, &utid);
	if (track == TP_NULL_U32)
		return;
	if (type == 101) {
		flow_v1(im, &e, track);
		return;
	}
	if (type == PB_E_TrackEvent_Type_TYPE_COUNTER) {
		double v = !isnan(ev->counter_value) ? ev->counter_value : e.value;
		if (!e.has_value && isnan(ev->counter_value)) {
			tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
			return;
		}
		uint64_t uuid = e.has_uuid                           ? e.uuid
		                : ev->gen && ev->gen->has_track_uuid ? ev->gen->track_uuid
		                                                     : 0;
		counter_value(im, uuid, ts, v, ev->seq_id);
		return;
	}
	/* Values made absolute at tokenize time replace the event's own. */
	const uint8_t *abs = p + n;
	for (uint32_t i = 0; i < ev->n_abs_int && i < e.x.n_ctr_vals; i++)
		memcpy(&e.x.ctr_vals[i], abs + i * sizeof(double), sizeof(double));
	abs += ev->n_abs_int * sizeof(double);
	for (uint32_t i = 0; i < ev->n_abs_dbl && i < e.x.n_dbl_vals; i++)
		memcpy(&e.x.dbl_vals[i], abs + i * sizeof(double), sizeof(double));
	if (utid != TP_NULL_U32)
		legacy_thread_counters(im, ev, ts, utid);
	struct thread_counters tc = {ev->thread_ts, ev->thread_instr};
	if (e.x.n_ctr_vals || e.x.n_dbl_vals)
		extra_counters(im, ev->gen, &e, ts, ev->seq_id, &tc);
	struct legacy_args la = {.passthrough_utid = TP_NULL_U32};
	if (e.has_legacy && !e.has_type && is_async_phase(e.phase) && e.has_id) {
		la.has_source_id = true;
		la.source_id = (int64_t)e.id;
		la.passthrough_utid = utid;
	}
	if (e.has_legacy && !e.has_type &&
	    (e.phase == 'S' || e.phase == 'T' || e.phase == 'p' || e.phase == 'R'))
		la.phase = (char)e.phase;
	bool legacy_args = la.has_source_id || la.passthrough_utid != TP_NULL_U32 || la.phase;
	/* The args, in im->args: a begin's and an end's stay with the open
	 * slice until it leaves its stack (one set for both, as Perfetto). */
	tp_args_begin(&im->args);
	if (e.has_args || legacy_args)
		build_args(im, ev->gen, p, n, &la, ts, utid);
	uint32_t args = TP_NULL_U32;
	if (type != PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN &&
	    type != PB_E_TrackEvent_Type_TYPE_SLICE_END)
		args = tp_args_commit(tp, &im->args);
	struct tp_slice_table *st = &tp->t.slice;
	uint32_t slice = TP_NULL_U32;
	switch (type) {
	case PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN:
		slice = tp_slice_begin_args(tp, track, ts, e.cat, e.name, &im->args);
		if (slice != TP_NULL_U32) {
			tp_set_slice_thread_ts(st, slice, tc.time);
			tp_set_slice_thread_instruction_count(st, slice, tc.instr);
		}
		break;
	case PB_E_TrackEvent_Type_TYPE_SLICE_END:
		/* The begin's passthrough utid stays (Perfetto's kSkipIfExists). */
		slice = tp_slice_end_args(tp, track, ts, e.cat, e.name, &im->args,
		                          tp_intern_cstr(tp, "legacy_event.passthrough_utid"));
		if (slice != TP_NULL_U32) {
			if (tc.time != TP_NULL_I64 &&
			    tp_get_slice_thread_ts(st, slice) != TP_NULL_I64)
				tp_set_slice_thread_dur(
				    st, slice, tc.time - tp_get_slice_thread_ts(st, slice));
			if (tc.instr != TP_NULL_I64 &&
			    tp_get_slice_thread_instruction_count(st, slice) != TP_NULL_I64)
				tp_set_slice_thread_instruction_delta(
				    st, slice,
				    tc.instr - tp_get_slice_thread_instruction_count(st, slice));
		}
		break;
	case PB_E_TrackEvent_Type_TYPE_INSTANT:
		slice = tp_slice_complete(tp, track, ts, 0, e.cat, e.name, args);
		if (slice != TP_NULL_U32 && tc.time != TP_NULL_I64) {
			tp_set_slice_thread_ts(st, slice, tc.time);
			tp_set_slice_thread_dur(st, slice, 0);
		}
		break;
	case TE_TYPE_LEGACY_COMPLETE:
		slice = tp_slice_complete(tp, track, ts, (int64_t)((uint64_t)e.duration_us * 1000),
		                          e.cat, e.name, args);
		if (slice != TP_NULL_U32 && tc.time != TP_NULL_I64) {
			tp_set_slice_thread_ts(st, slice, tc.time);
			tp_set_slice_thread_dur(st, slice,
			                        (int64_t)((uint64_t)e.thread_duration_us * 1000));
		}
		break;
	default:
		/* PB_E_TrackEvent_Type_TYPE_STATE and unknown types are not imported yet. */
		tp_stat_inc(tp, TP_STAT_track_event_parser_errors);
		return;
	}
	if (slice == TP_NULL_U32)
		return;
	if (e.cs.has_iid || e.cs.inline_data)
		tp_proto_te_callstack_add(im, ev->gen, &e.cs, slice, track,
		                          type == PB_E_TrackEvent_Type_TYPE_SLICE_END);
	if (e.has_flows)
		flows(im, p, n, slice);
	/* Flow v2 through the legacy event's bind_id, in the id space of
	 * flow_ids as in Perfetto. */
	if (e.bind_id) {
		switch (e.flow_direction) {
		case PB_E_TrackEvent_LegacyEvent_FlowDirection_FLOW_IN:
			tp_flow_end(tp, e.bind_id, slice, false);
			break;
		case PB_E_TrackEvent_LegacyEvent_FlowDirection_FLOW_OUT:
			tp_flow_begin(tp, e.bind_id, slice);
			break;
		case PB_E_TrackEvent_LegacyEvent_FlowDirection_FLOW_INOUT:
			tp_flow_continue(tp, e.bind_id, slice);
			break;
		default:
			tp_stat_inc(tp, TP_STAT_flow_without_direction);
			break;
		}
	}
}
