/*
 * TrackEvent on one trace writer, as a Perfetto SDK producer writes it: a
 * sequence of TracePackets whose event names are interned (sent once per
 * sequence in interned_data and referenced by iid afterwards) and whose
 * default track and clock come from trace_packet_defaults.
 *
 * The state a reader needs to decode an event (interned names, defaults,
 * track descriptors) is the sequence's incremental state. It is written
 * again after tracing_te_clear (the data source's ClearIncrementalState) and
 * before the first event:
 *
 *   packet {timestamp, sequence_flags: SEQ_INCREMENTAL_STATE_CLEARED (1),
 *           trace_packet_defaults {timestamp_clock_id: BOOTTIME (6),
 *                                  track_event_defaults {track_uuid}}}
 *   packet {timestamp, track_descriptor {uuid, name, thread {pid, tid}}}
 *   packet {timestamp, track_descriptor {uuid, name, counter {}}}   per counter track
 *   packet {timestamp, sequence_flags: SEQ_NEEDS_INCREMENTAL_STATE (2),
 *           [interned_data {event_names {iid, name}}],              new names only
 *           track_event {type, name_iid | track_uuid + counter_value}}
 *
 * Field numbers: TracePacket timestamp 8, track_event 11, interned_data 12,
 * sequence_flags 13, trace_packet_defaults 59, track_descriptor 60;
 * TrackEvent category_iids 3, type 9, name_iid 10, track_uuid 11,
 * counter_value 30; InternedData event_names 2 (iid 1, name 2);
 * TrackDescriptor uuid 1, name 2, thread 4 (pid 1, tid 2), counter 8;
 * TracePacketDefaults track_event_defaults 11 (track_uuid 11),
 * timestamp_clock_id 58.
 *
 * Hot path: an event whose name is already interned goes straight into the
 * writer's current chunk (tracing_writer_fast_begin) with every field
 * encoded unchecked, the TrackEvent's size as one byte (it is < 128). The
 * name is found by its address in a small direct-mapped cache (names are
 * mostly string literals), confirmed by comparing the text, so a reused
 * buffer with new text is interned anew rather than mistaken.
 */
#include "tracing_int.h"
#include "pb_fields.h"

#include <string.h>

#define SEQ_INCREMENTAL_STATE_CLEARED PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED
#define SEQ_NEEDS_INCREMENTAL_STATE PB_E_TracePacket_SequenceFlags_SEQ_NEEDS_INCREMENTAL_STATE
/* Names longer than this are sent inline (TrackEvent.name), not interned. */
#define MAX_INTERNED_NAME 1024
#define NAME_CACHE_SIZE 64 /* power of two */
/* Largest fast-path payloads: timestamp (11) + sequence_flags (2) + the
 * track_event tag and size (2) + its fields. */
#define FAST_SLICE_MAX (11 + 2 + 2 + 2 + 11)
#define FAST_COUNTER_MAX (11 + 2 + 2 + 2 + 11 + 12)

/* Tags of the fast path's fields (field number << 3 | wire type): one byte
 * each, but counter_value's, which takes two (checked below). */
#define TAG_(field, wire) ((PB_F_##field) << 3 | (wire))
#define TAG_TIMESTAMP TAG_(TracePacket_timestamp, PB_WIRE_VARINT)
#define TAG_SEQUENCE_FLAGS TAG_(TracePacket_sequence_flags, PB_WIRE_VARINT)
#define TAG_TRACK_EVENT TAG_(TracePacket_track_event, PB_WIRE_LEN)
#define TAG_TYPE TAG_(TrackEvent_type, PB_WIRE_VARINT)
#define TAG_NAME_IID TAG_(TrackEvent_name_iid, PB_WIRE_VARINT)
#define TAG_TRACK_UUID TAG_(TrackEvent_track_uuid, PB_WIRE_VARINT)
#define TAG_COUNTER_VALUE TAG_(TrackEvent_counter_value, PB_WIRE_VARINT)
_Static_assert(TAG_TIMESTAMP < 0x80 && TAG_SEQUENCE_FLAGS < 0x80 && TAG_TRACK_EVENT < 0x80 &&
                   TAG_TYPE < 0x80 && TAG_NAME_IID < 0x80 && TAG_TRACK_UUID < 0x80,
               "fast-path tags are one byte");
_Static_assert(TAG_COUNTER_VALUE >= 0x80 && TAG_COUNTER_VALUE < 0x4000,
               "counter_value's tag is two bytes");

struct name_cache_entry {
	const char *ptr; /* the caller's pointer last seen for ... */
	uint64_t iid;    /* ... this interned name */
};

struct te_counter {
	uint64_t uuid;
	char *name;
};

struct tracing_te {
	struct tracing_writer *w;
	uint64_t track_uuid;
	char *track_name;
	int32_t pid, tid;
	bool need_reset;
	struct hmap names;   /* hash of the name -> iid (key: iid) */
	VEC(char *) strings; /* iid - 1 -> the interned name */
	VEC(struct te_counter) counters;
	struct name_cache_entry cache[NAME_CACHE_SIZE];
};

struct tracing_te *tracing_te_new(struct tracing_writer *w, uint64_t track_uuid,
                                  const char *track_name, int32_t pid, int32_t tid)
{
	struct tracing_te *te = tb_calloc(1, sizeof *te);
	te->w = w;
	te->track_uuid = track_uuid;
	te->track_name = tb_strdup(track_name ? track_name : "");
	te->pid = pid;
	te->tid = tid;
	te->need_reset = true;
	hmap_init(&te->names);
	return te;
}

static void forget_names(struct tracing_te *te)
{
	for (size_t i = 0; i < te->strings.len; i++)
		tb_free(te->strings.data[i]);
	vec_clear(&te->strings);
	hmap_clear(&te->names);
	memset(te->cache, 0, sizeof te->cache);
}

void tracing_te_free(struct tracing_te *te)
{
	if (!te)
		return;
	forget_names(te);
	vec_release(&te->strings);
	hmap_release(&te->names);
	for (size_t i = 0; i < te->counters.len; i++)
		tb_free(te->counters.data[i].name);
	vec_release(&te->counters);
	tb_free(te->track_name);
	tb_free(te);
}

void tracing_te_add_counter_track(struct tracing_te *te, uint64_t uuid, const char *name)
{
	struct te_counter c = {uuid, tb_strdup(name ? name : "")};
	vec_push(&te->counters, c);
	te->need_reset = true; /* its descriptor goes out before the next event */
}

void tracing_te_clear(struct tracing_te *te)
{
	forget_names(te);
	te->need_reset = true;
}

static int end_packet(struct tracing_te *te)
{
	return tracing_writer_end_packet(te->w);
}

static int write_descriptor(struct tracing_te *te, uint64_t ts, uint64_t uuid, const char *name,
                            bool counter)
{
	struct pb_writer *w = tracing_writer_begin_packet(te->w);
	unsigned td, sub;
	pb_put_uint64(w, PB_F_TracePacket_timestamp, ts);
	td = pb_begin_nested(w, PB_F_TracePacket_track_descriptor);
	pb_put_uint64(w, PB_F_TrackDescriptor_uuid, uuid);
	pb_put_string(w, PB_F_TrackDescriptor_name, name);
	if (counter) {
		pb_put_bytes(w, PB_F_TrackDescriptor_counter, "", 0);
	} else if (te->pid || te->tid) {
		sub = pb_begin_nested(w, PB_F_TrackDescriptor_thread);
		pb_put_int32(w, PB_F_ThreadDescriptor_pid, te->pid);
		pb_put_int32(w, PB_F_ThreadDescriptor_tid, te->tid);
		pb_end_nested(w, sub);
	}
	pb_end_nested(w, td);
	return end_packet(te);
}

/* The incremental state: defaults, then the track descriptors. */
static int reset(struct tracing_te *te, uint64_t ts)
{
	struct pb_writer *w = tracing_writer_begin_packet(te->w);
	unsigned d, ted;
	int rc;
	pb_put_uint64(w, PB_F_TracePacket_timestamp, ts);
	pb_put_uint32(w, PB_F_TracePacket_sequence_flags, SEQ_INCREMENTAL_STATE_CLEARED);
	d = pb_begin_nested(w, PB_F_TracePacket_trace_packet_defaults);
	ted = pb_begin_nested(w, PB_F_TracePacketDefaults_track_event_defaults);
	pb_put_uint64(w, PB_F_TrackEventDefaults_track_uuid, te->track_uuid);
	pb_end_nested(w, ted);
	pb_put_uint32(w, PB_F_TracePacketDefaults_timestamp_clock_id,
	              PB_E_BuiltinClock_BUILTIN_CLOCK_BOOTTIME);
	pb_end_nested(w, d);
	rc = end_packet(te);
	if (!rc)
		rc = write_descriptor(te, ts, te->track_uuid, te->track_name, false);
	for (size_t i = 0; i < te->counters.len && !rc; i++)
		rc = write_descriptor(te, ts, te->counters.data[i].uuid, te->counters.data[i].name,
		                      true);
	te->need_reset = false;
	return rc;
}

struct name_key {
	const struct tracing_te *te;
	const char *name;
	size_t len;
};

static bool name_eq(const void *ctx, uint64_t iid)
{
	const struct name_key *k = ctx;
	const char *s = k->te->strings.data[iid - 1];
	return strncmp(s, k->name, k->len) == 0 && s[k->len] == '\0';
}

/* The cache set (two entries, most recent first) of the address name. */
static inline struct name_cache_entry *cache_set(struct tracing_te *te, const char *name)
{
	uint64_t h = (uint64_t)(uintptr_t)name * 0x9e3779b97f4a7c15ull;
	return &te->cache[(h >> 58 & (NAME_CACHE_SIZE / 2 - 1)) * 2];
}

static inline bool same_text(const char *a, const char *b)
{
	for (; *a == *b; a++, b++)
		if (!*a)
			return true;
	return false;
}

/* The iid of name if the cache knows its address and the text still
 * matches, else 0. */
static inline uint64_t cached_iid(struct tracing_te *te, const char *name)
{
	const struct name_cache_entry *e = cache_set(te, name);
	if (e[0].ptr == name && same_text(te->strings.data[e[0].iid - 1], name))
		return e[0].iid;
	if (e[1].ptr == name && same_text(te->strings.data[e[1].iid - 1], name))
		return e[1].iid;
	return 0;
}

static void cache_put(struct tracing_te *te, const char *name, uint64_t iid)
{
	struct name_cache_entry *e = cache_set(te, name);
	if (e[0].ptr != name)
		e[1] = e[0];
	e[0] = (struct name_cache_entry){name, iid};
}

/* The iid of name (len bytes, hash h) if interned on this sequence (then
 * cached by address), else 0. */
static uint64_t find_name(struct tracing_te *te, const char *name, size_t len, uint64_t h)
{
	struct name_key k = {te, name, len};
	size_t slot = hmap_lookup(&te->names, h, name_eq, &k);
	uint64_t iid;
	if (slot == HMAP_END)
		return 0;
	iid = te->names.slots[slot].key;
	cache_put(te, name, iid);
	return iid;
}

/* The iid of name when interned already (cached or not), else 0. */
static inline uint64_t known_iid(struct tracing_te *te, const char *name)
{
	uint64_t iid = cached_iid(te, name);
	size_t len;
	if (TB_LIKELY(iid))
		return iid;
	len = strlen(name);
	return len <= MAX_INTERNED_NAME ? find_name(te, name, len, tb_hash_bytes(name, len, 0)) : 0;
}

/* The iid of name, and whether it is new on this sequence. */
static uint64_t intern(struct tracing_te *te, const char *name, size_t len, bool *is_new)
{
	uint64_t h = tb_hash_bytes(name, len, 0);
	uint64_t iid = find_name(te, name, len, h);
	*is_new = iid == 0;
	if (iid)
		return iid;
	vec_push(&te->strings, tb_strndup(name, len));
	iid = te->strings.len;
	hmap_insert(&te->names, h, iid, 0);
	cache_put(te, name, iid);
	return iid;
}

/* TracePacket{timestamp, sequence_flags, track_event{ at p: returns where
 * the TrackEvent's fields go; fast_event_end sets its one-byte size. */
static inline uint8_t *fast_event_begin(uint8_t *p, uint64_t ts)
{
	*p++ = TAG_TIMESTAMP;
	p = pb_encode_varint(p, ts);
	*p++ = TAG_SEQUENCE_FLAGS;
	*p++ = SEQ_NEEDS_INCREMENTAL_STATE;
	*p++ = TAG_TRACK_EVENT;
	return p + 1;
}

static inline void fast_event_end(struct tracing_te *te, uint8_t *fields, uint8_t *end)
{
	fields[-1] = (uint8_t)(end - fields); /* < 128 by FAST_*_MAX */
	tracing_writer_fast_end(te->w, end);
}

static int event_slow(struct tracing_te *te, uint64_t ts, uint32_t type, const char *name)
{
	struct pb_writer *w;
	uint64_t iid = 0;
	bool is_new = false;
	size_t len = name ? strlen(name) : 0;
	unsigned m, sub;
	int rc;

	if (te->need_reset && (rc = reset(te, ts)))
		return rc;
	if (name && len <= MAX_INTERNED_NAME)
		iid = intern(te, name, len, &is_new);
	w = tracing_writer_begin_packet(te->w);
	pb_put_uint64(w, PB_F_TracePacket_timestamp, ts);
	pb_put_uint32(w, PB_F_TracePacket_sequence_flags, SEQ_NEEDS_INCREMENTAL_STATE);
	if (is_new) {
		m = pb_begin_nested(w, PB_F_TracePacket_interned_data);
		sub = pb_begin_nested(w, PB_F_InternedData_event_names);
		pb_put_uint64(w, PB_F_EventName_iid, iid);
		pb_put_bytes(w, PB_F_EventName_name, name, len);
		pb_end_nested(w, sub);
		pb_end_nested(w, m);
	}
	m = pb_begin_nested(w, PB_F_TracePacket_track_event);
	pb_put_uint32(w, PB_F_TrackEvent_type, type);
	if (iid)
		pb_put_uint64(w, PB_F_TrackEvent_name_iid, iid);
	else if (name)
		pb_put_bytes(w, PB_F_TrackEvent_name, name, len);
	pb_end_nested(w, m);
	return end_packet(te);
}

/* A slice event (type 1, 2 or 3) with the name already interned (iid) or
 * none (iid 0, name NULL), straight into the chunk; else the slow path. */
static inline int event(struct tracing_te *te, uint64_t ts, uint32_t type, const char *name)
{
	uint8_t *fields, *q;
	uint64_t iid = 0;

	if (TB_UNLIKELY(te->need_reset) || (name && !(iid = known_iid(te, name))) ||
	    !(q = tracing_writer_fast_begin(te->w, FAST_SLICE_MAX)))
		return event_slow(te, ts, type, name);
	q = fields = fast_event_begin(q, ts);
	*q++ = TAG_TYPE;
	*q++ = (uint8_t)type;
	if (iid) {
		*q++ = TAG_NAME_IID;
		q = pb_encode_varint(q, iid);
	}
	fast_event_end(te, fields, q);
	return 0;
}

int tracing_te_begin(struct tracing_te *te, uint64_t ts, const char *name)
{
	return event(te, ts, 1, name);
}

int tracing_te_end(struct tracing_te *te, uint64_t ts)
{
	return event(te, ts, 2, NULL);
}

int tracing_te_instant(struct tracing_te *te, uint64_t ts, const char *name)
{
	return event(te, ts, 3, name);
}

int tracing_te_counter(struct tracing_te *te, uint64_t ts, uint64_t counter_uuid, int64_t value)
{
	struct pb_writer *w;
	uint8_t *fields, *q;
	unsigned m;
	int rc;
	if (te->need_reset && (rc = reset(te, ts)))
		return rc;
	if (TB_LIKELY((q = tracing_writer_fast_begin(te->w, FAST_COUNTER_MAX)) != NULL)) {
		q = fields = fast_event_begin(q, ts);
		*q++ = TAG_TYPE;
		*q++ = PB_E_TrackEvent_Type_TYPE_COUNTER;
		*q++ = TAG_TRACK_UUID;
		q = pb_encode_varint(q, counter_uuid);
		*q++ = (uint8_t)(TAG_COUNTER_VALUE | 0x80);
		*q++ = (uint8_t)(TAG_COUNTER_VALUE >> 7);
		q = pb_encode_varint(q, (uint64_t)value);
		fast_event_end(te, fields, q);
		return 0;
	}
	w = tracing_writer_begin_packet(te->w);
	pb_put_uint64(w, PB_F_TracePacket_timestamp, ts);
	pb_put_uint32(w, PB_F_TracePacket_sequence_flags, SEQ_NEEDS_INCREMENTAL_STATE);
	m = pb_begin_nested(w, PB_F_TracePacket_track_event);
	pb_put_uint32(w, PB_F_TrackEvent_type, PB_E_TrackEvent_Type_TYPE_COUNTER);
	pb_put_uint64(w, PB_F_TrackEvent_track_uuid, counter_uuid);
	pb_put_int64(w, PB_F_TrackEvent_counter_value, value);
	pb_end_nested(w, m);
	return end_packet(te);
}
