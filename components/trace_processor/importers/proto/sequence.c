/*
 * Packet sequences (one per trusted_packet_sequence_id, i.e. one per
 * producer TraceWriter) and their incremental state. Interned data and
 * TracePacketDefaults live in a generation; clearing the incremental state
 * starts an empty generation, new defaults start one that inherits the
 * interned entries. Generations are refcounted so events still in the
 * sorter resolve their iids against the state in effect when they were
 * tokenized, as Perfetto does.
 */
#include "proto_int.h"
#include "pb_fields.h"

#include <string.h>

struct proto_seq *tp_proto_seq_get_slow(struct proto_importer *im, uint32_t id)
{
	if (im->last_seq && im->last_seq->id == id)
		return im->last_seq;
	if (id < PROTO_SEQ_CACHE && im->seq_cache[id])
		return im->last_seq = im->seq_cache[id];
	struct proto_seq *s = hmap_get_ptr(&im->seqs, id);
	if (!s) {
		s = tb_calloc(1, sizeof *s);
		s->id = id;
		s->src = proto_new_src(im);
		s->valid = false; /* until a packet clears the incremental state */
		s->pid = s->tid = -1;
		hmap_init(&s->inc_counters);
		hmap_put_ptr(&im->seqs, id, s);
	}
	if (id < PROTO_SEQ_CACHE)
		im->seq_cache[id] = s;
	im->last_seq = s;
	return s;
}

/* Record e as (field, iid) of g, in the dense arrays too when it fits. */
static void gen_put(struct proto_gen *g, uint32_t field, uint64_t iid, struct proto_interned *e)
{
	hmap_put_ptr(&g->interned, proto_intern_key(field, iid), e);
	if (field >= PROTO_DENSE_FIELDS || iid >= PROTO_DENSE_IIDS)
		return;
	if (iid >= g->dense_cap[field]) {
		uint32_t cap = g->dense_cap[field] ? g->dense_cap[field] : 64;
		while (cap <= iid)
			cap *= 2;
		g->dense[field] = tb_realloc(g->dense[field], cap * sizeof *g->dense[field]);
		memset(g->dense[field] + g->dense_cap[field], 0,
		       (cap - g->dense_cap[field]) * sizeof *g->dense[field]);
		g->dense_cap[field] = cap;
	}
	g->dense[field][iid] = e;
}

static void gen_release(struct proto_gen *g)
{
	hmap_release(&g->interned);
	for (int i = 0; i < PROTO_DENSE_FIELDS; i++)
		tb_free(g->dense[i]);
	arena_release(&g->mem);
}

void tp_proto_gen_ref(struct proto_gen *g)
{
	if (g)
		g->refs++;
}

static void gen_destroy(struct proto_importer *im, struct proto_gen *g)
{
	if (g->prev)
		g->prev->next = g->next;
	else
		im->gens = g->next;
	if (g->next)
		g->next->prev = g->prev;
	gen_release(g);
	struct proto_gen *parent = g->parent;
	tb_free(g);
	if (parent)
		tp_proto_gen_unref(im, parent);
}

void tp_proto_gen_unref(struct proto_importer *im, struct proto_gen *g)
{
	if (g && --g->refs == 0)
		gen_destroy(im, g);
}

void tp_proto_seq_new_gen(struct proto_importer *im, struct proto_seq *seq, bool inherit)
{
	struct proto_gen *g = tb_calloc(1, sizeof *g);
	struct proto_gen *old = seq->gen;
	g->refs = 1;
	arena_init(&g->mem, 4096);
	hmap_init(&g->interned);
	g->next = im->gens;
	if (im->gens)
		im->gens->prev = g;
	im->gens = g;
	if (inherit && old) {
		for (size_t i = hmap_next(&old->interned, 0); i != HMAP_END;
		     i = hmap_next(&old->interned, i + 1)) {
			uint64_t key = old->interned.slots[i].key;
			gen_put(g, (uint32_t)(key & 0xff), key >> 8,
			        (void *)(uintptr_t)old->interned.slots[i].val);
		}
		g->parent = old;
		tp_proto_gen_ref(old);
		g->clock_id = old->clock_id;
		g->has_track_uuid = old->has_track_uuid;
		g->track_uuid = old->track_uuid;
		g->counter_uuids = old->counter_uuids;
		g->n_counter_uuids = old->n_counter_uuids;
		g->dbl_counter_uuids = old->dbl_counter_uuids;
		g->n_dbl_counter_uuids = old->n_dbl_counter_uuids;
	}
	seq->gen = g;
	if (!inherit)
		hmap_clear(&seq->inc_counters);
	tp_proto_gen_unref(im, old);
}

/* Repeated uint64 field values (packed or not) gathered into the arena. */
static void add_uuid(struct arena *a, uint64_t **arr, uint32_t *n, uint64_t v)
{
	uint64_t *na = arena_alloc(a, sizeof(uint64_t) * (*n + 1), 8);
	if (*n)
		memcpy(na, *arr, sizeof(uint64_t) * *n);
	na[(*n)++] = v;
	*arr = na;
}

static void add_uuids(struct arena *a, const struct pb_field *f, uint64_t **arr, uint32_t *n)
{
	if (f->wire == PB_WIRE_VARINT) {
		add_uuid(a, arr, n, f->val);
	} else if (f->wire == PB_WIRE_LEN) {
		struct pb_packed it;
		uint64_t v;
		pb_packed_init(&it, f->data, f->len, PB_WIRE_VARINT);
		while (*n < 64 && pb_packed_next(&it, &v))
			add_uuid(a, arr, n, v);
	}
}

void tp_proto_seq_set_defaults(struct proto_importer *im, struct proto_seq *seq, const uint8_t *p,
                               size_t n)
{
	tp_proto_seq_new_gen(im, seq, true);
	struct proto_gen *g = seq->gen;
	g->clock_id = 0;
	g->has_track_uuid = false;
	g->counter_uuids = g->dbl_counter_uuids = NULL;
	g->n_counter_uuids = g->n_dbl_counter_uuids = 0;
	g->has_perf_defaults = g->has_stack_defaults = false;
	g->perf_defaults = g->stack_defaults = NULL;
	g->perf_defaults_len = g->stack_defaults_len = 0;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_TracePacketDefaults_timestamp_clock_id &&
		    f.wire == PB_WIRE_VARINT) {
			g->clock_id = (uint32_t)f.val;
		} else if (f.id == PB_F_TracePacketDefaults_perf_sample_defaults &&
		           f.wire == PB_WIRE_LEN) {
			g->has_perf_defaults = true;
			g->perf_defaults = arena_memdup(&g->mem, f.data, f.len);
			g->perf_defaults_len = (uint32_t)f.len;
		} else if (f.id == PB_F_TracePacketDefaults_stack_sample_defaults &&
		           f.wire == PB_WIRE_LEN) {
			g->has_stack_defaults = true;
			g->stack_defaults = arena_memdup(&g->mem, f.data, f.len);
			g->stack_defaults_len = (uint32_t)f.len;
		} else if (f.id == PB_F_TracePacketDefaults_track_event_defaults &&
		           f.wire == PB_WIRE_LEN) {
			struct pb_reader tr;
			struct pb_field tf = {0};
			pb_reader_init_field(&tr, &f);
			while (pb_next(&tr, &tf)) {
				if (tf.id == PB_F_TrackEventDefaults_track_uuid &&
				    tf.wire == PB_WIRE_VARINT) {
					g->has_track_uuid = true;
					g->track_uuid = tf.val;
				} else if (tf.id ==
				           PB_F_TrackEventDefaults_extra_counter_track_uuids) {
					add_uuids(&g->mem, &tf, &g->counter_uuids,
					          &g->n_counter_uuids);
				} else if (
				    tf.id ==
				    PB_F_TrackEventDefaults_extra_double_counter_track_uuids) {
					add_uuids(&g->mem, &tf, &g->dbl_counter_uuids,
					          &g->n_dbl_counter_uuids);
				}
			}
		}
	}
}

void tp_proto_seq_add_interned(struct proto_importer *im, struct proto_seq *seq, const uint8_t *p,
                               size_t n)
{
	if (!seq->gen)
		tp_proto_seq_new_gen(im, seq, false);
	struct proto_gen *g = seq->gen;
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire != PB_WIRE_LEN || f.id > 0xff)
			continue;
		uint64_t iid = 0;
		struct pb_field idf = {0};
		/* Every interned message has its iid in field 1, as InternedString. */
		if (pb_find_field(f.data, f.len, PB_F_InternedString_iid, &idf) == 1 &&
		    idf.wire == PB_WIRE_VARINT)
			iid = idf.val;
		struct proto_interned *e = arena_alloc(&g->mem, sizeof *e, 8);
		e->data = arena_memdup(&g->mem, f.data, f.len);
		e->len = (uint32_t)f.len;
		e->str = UINT32_MAX;
		gen_put(g, f.id, iid, e);
	}
	if (pb_reader_error(&r))
		tp_stat_inc(im->tp, TP_STAT_interned_data_tokenizer_errors);
}

uint32_t tp_proto_interned_str_slow(struct tp *tp, const struct proto_gen *g, uint32_t field,
                                    uint64_t iid)
{
	struct proto_interned *e = proto_gen_lookup(g, field, iid);
	if (!e) {
		tp_stat_inc(tp, TP_STAT_interned_data_tokenizer_errors);
		return 0;
	}
	if (e->str == UINT32_MAX) {
		struct pb_field f = {0};
		e->str = 0;
		/* The string of EventName, EventCategory, DebugAnnotationName, ...
		 * is field 2, as InternedString's. */
		if (pb_find_field(e->data, e->len, PB_F_InternedString_str, &f) == 1 &&
		    f.wire == PB_WIRE_LEN)
			e->str = tp_intern(tp, (const char *)f.data, f.len);
	}
	return e->str;
}

void tp_proto_seqs_free(struct proto_importer *im)
{
	for (size_t i = hmap_next(&im->seqs, 0); i != HMAP_END; i = hmap_next(&im->seqs, i + 1)) {
		struct proto_seq *s = (void *)(uintptr_t)im->seqs.slots[i].val;
		hmap_release(&s->inc_counters);
		vec_release(&s->cpu_src);
		vec_release(&s->cpu_seen);
		tb_free(s);
	}
	hmap_release(&im->seqs);
	/* Generations still referenced by undispatched sorter events. */
	while (im->gens) {
		struct proto_gen *g = im->gens;
		im->gens = g->next;
		gen_release(g);
		tb_free(g);
	}
}
