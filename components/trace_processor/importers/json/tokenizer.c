/*
 * The JSON tokenizer: a byte-resumable state machine over the trace's outer
 * structure, fed chunks of any size (even one byte). It finds each event
 * object of the traceEvents array and decodes it in one pass: its fields
 * into a struct json_event (strings interned, times in ns) and its `args`
 * into encoded arg rows (args.c; the raw text instead for C/M/T events),
 * then pushes the compact record to the sorter. No DOM is built. A
 * top-level "systemTraceEvents" string can be streamed to a text sink for
 * another importer (text_run).
 *
 * An event that lies wholly inside the current chunk is decoded in place.
 * One cut by the chunk's end is copied to `tail` and completed by a
 * resumable brace/string scanner over the following chunks (so each byte is
 * copied at most once, whatever the chunk sizes), then decoded from there.
 * Values of top-level keys we do not use are skipped by the same scanner
 * without being copied; "metadata" is captured like an event.
 *
 *   START --'{'--> KEY <-----------------------------+
 *     |             |"traceEvents" : [               |
 *     |'['          v                                |
 *     +--------> ARRAY --'{'--> event (in place or CAPTURE)
 *                   | ']'                             |
 *                   +--> KEY (outer dict) or DONE     |
 *   KEY --other key--> SKIP (resumable) ------------->+
 *   KEY --"systemTraceEvents" (sink set)--> TEXT ----->+
 */
#include "json_int.h"
#include "../../sorter/sorter.h"

#include <errno.h>
#include <string.h>

enum tok_state {
	S_START,
	S_KEY_OR_END, /* in the outer dict, before a key */
	S_KEY,        /* inside a key string */
	S_COLON,
	S_VALUE,   /* before the value of key */
	S_ARRAY,   /* in traceEvents, between events */
	S_SKIP,    /* skipping a value, then back to ret */
	S_CAPTURE, /* copying a cut value into tail, then process it */
	S_TEXT,    /* inside a top-level string handed to a text sink */
	S_DONE,
};

enum capture_kind { CAP_EVENT, CAP_METADATA };

/* An event cut across chunks is copied whole: past this it is skipped (and
 * counted) instead, so a giant string cannot take the memory with it. */
#define JSON_MAX_EVENT_BYTES ((size_t)256 << 20)

/* Resumable scan of one JSON value for its end: nesting depth and string
 * state survive across chunks. */
struct vscan {
	uint64_t depth;
	bool in_str, esc, scalar, started;
};

/* The event keys we read. */
enum field {
	F_OTHER,
	F_PH,
	F_TS,
	F_ID,
	F_BP,
	F_S,
	F_PID,
	F_TID,
	F_DUR,
	F_TTS,
	F_CAT,
	F_ID2,
	F_NAME,
	F_TDUR,
	F_ARGS,
	F_BIND_ID,
	F_FLOW_IN,
	F_FLOW_OUT,
};

static const struct {
	const char *name;
	enum field f;
} fields[] = {
    {"ph", F_PH},
    {"ts", F_TS},
    {"id", F_ID},
    {"bp", F_BP},
    {"s", F_S},
    {"pid", F_PID},
    {"tid", F_TID},
    {"dur", F_DUR},
    {"tts", F_TTS},
    {"cat", F_CAT},
    {"id2", F_ID2},
    {"name", F_NAME},
    {"tdur", F_TDUR},
    {"args", F_ARGS},
    {"bind_id", F_BIND_ID},
    {"flow_in", F_FLOW_IN},
    {"flow_out", F_FLOW_OUT},
};

/* A key `"name":` that fits a word, for key_fast. */
struct fast_key {
	uint64_t word, mask;
	uint8_t len, f;
};

struct json_tokenizer {
	struct tp *tp;
	struct fast_key fast[24]; /* by the key's first letter */
	uint8_t fast_lo[128], fast_hi[128];
	enum tok_state state, ret;
	enum capture_kind cap;
	bool outer_dict;
	bool bad_time; /* the event being decoded has an invalid dur/tts/tdur */
	/* Perfetto's sorter queue, followed push by push: `slow` once an X is
	 * pushed; an event not newer than max_ts (not equal either, once
	 * slow) is out of order: the first one's index is sort_start (0:
	 * none, as there) and sort_min the oldest ts of those. At the end
	 * the sorter sorts the events from sort_min on, by its slow
	 * comparator if slow. */
	struct {
		bool slow;
		int64_t max_ts, sort_min;
		uint64_t n, sort_start;
	} q;
	int bom; /* UTF-8 BOM bytes skipped so far */
	char key[32];
	size_t key_len;
	bool key_esc;
	struct vscan scan;
	struct json_text_sink system_trace; /* "systemTraceEvents" text */
	char esc[12]; /* an escape of a handed-off string, cut by a chunk end */
	size_t esc_len;
	VEC(char) tail;
	struct json_buf str;      /* unescaped strings of the current event */
	struct json_buf rows;     /* the current event's args as encoded rows */
	struct json_icache names; /* cat, name, string pid/tid */
	struct json_args_ctx args;
	struct json_key_memo memo[JSON_KEY_MEMOS]; /* event keys, by position */
	struct json_log log;                       /* the events that came in ts order */
	struct json_v8 *v8;                        /* V8 profile sessions (v8.c) */
};

/* The key_fast candidates: every field whose `"name":` fits a word,
 * grouped by the name's first letter. */
static void fast_keys_init(struct json_tokenizer *t)
{
	unsigned n = 0;
	for (unsigned c = 'a'; c <= 'z'; c++) {
		t->fast_lo[c] = (uint8_t)n;
		for (size_t i = 0; i < TB_ARRAY_SIZE(fields); i++) {
			size_t len = strlen(fields[i].name) + 3;
			if (fields[i].name[0] != (char)c || len > 8)
				continue;
			TB_CHECK(n < TB_ARRAY_SIZE(t->fast));
			struct fast_key *k = &t->fast[n++];
			char text[8] = {'"'};
			memcpy(text + 1, fields[i].name, len - 3);
			text[len - 2] = '"';
			text[len - 1] = ':';
			k->word = 0;
			memcpy(&k->word, text, len);
			k->mask = len == 8 ? ~0ull : (1ull << (8 * len)) - 1;
			k->len = (uint8_t)len;
			k->f = (uint8_t)fields[i].f;
		}
		t->fast_hi[c] = (uint8_t)n;
	}
}

struct json_tokenizer *tp_json_tokenizer_new(struct tp *tp)
{
	struct json_tokenizer *t = tb_calloc(1, sizeof *t);
	t->tp = tp;
	fast_keys_init(t);
	tp_json_log_init(&t->log);
	t->v8 = tp_json_v8_new();
	return t;
}

void tp_json_tokenizer_free(struct json_tokenizer *t)
{
	if (!t)
		return;
	vec_release(&t->tail);
	vec_release(&t->str.v);
	vec_release(&t->rows.v);
	tp_json_args_ctx_release(&t->args);
	tp_json_log_release_all(&t->log);
	tp_json_v8_free(t->v8);
	tb_free(t);
}

bool tp_json_tokenizer_reorders(const struct json_tokenizer *t, int64_t ts)
{
	return t->q.slow && t->q.sort_start && ts >= t->q.sort_min;
}

/* An event enters Perfetto's sorter queue (see struct json_tokenizer). */
static void queue_append(struct json_tokenizer *t, char ph, int64_t ts)
{
	if (ph == 'X')
		t->q.slow = true;
	if (ts > t->q.max_ts || (!t->q.slow && ts == t->q.max_ts)) {
		t->q.max_ts = ts;
	} else if (!t->q.sort_start) {
		t->q.sort_start = t->q.n;
		t->q.sort_min = ts;
	} else if (ts < t->q.sort_min) {
		t->q.sort_min = ts;
	}
	t->q.n++;
}

struct json_v8 *tp_json_tokenizer_v8(struct json_tokenizer *t)
{
	return t->v8;
}

struct json_log *tp_json_tokenizer_log(struct json_tokenizer *t)
{
	return &t->log;
}

/* ---- the resumable value scanner -------------------------------------- */

/* Scan [p, end) of a value; returns true and *used = bytes of the value
 * when it ends inside, else false (all consumed). A scalar ends before the
 * delimiter that follows it. */
static bool vscan_run(struct vscan *s, const char *p, const char *end, size_t *used)
{
	const char *start = p;
	if (!s->started) {
		s->started = true;
		if (*p == '"') {
			s->in_str = true;
			p++;
		} else if (*p != '{' && *p != '[') {
			/* A scalar (or a stray byte): its first byte always counts,
			 * so a stray ',' '}' ']' is consumed and the scan progresses. */
			s->scalar = true;
			p++;
		}
	}
	if (s->scalar) {
		for (; p < end; p++) {
			char c = *p;
			if (c == ',' || c == '}' || c == ']' || json_is_ws((unsigned char)c)) {
				*used = (size_t)(p - start);
				return true;
			}
		}
		return false;
	}
	while (p < end) {
		if (s->in_str) {
			if (s->esc) {
				s->esc = false;
				p++;
				continue;
			}
			p = json_find_quote_or_bs(p, end);
			if (p == end)
				break;
			if (*p == '\\') {
				s->esc = true;
				p++;
				continue;
			}
			s->in_str = false;
			p++;
			if (s->depth == 0) {
				*used = (size_t)(p - start);
				return true;
			}
			continue;
		}
		char c = *p++;
		if (c == '"') {
			s->in_str = true;
		} else if (c == '{' || c == '[') {
			s->depth++;
		} else if (c == '}' || c == ']') {
			if (s->depth)
				s->depth--;
			if (s->depth == 0) {
				*used = (size_t)(p - start);
				return true;
			}
		}
	}
	return false;
}

/* ---- the event record (log / sorter payload) ------------------------------
 *
 *  0      4      8      12         16  17     18
 *  +------+------+------+----------+---+-----+------------------------+------+
 *  |flags | name | cat  | args_len |ph |scope| present fields, in the | args |
 *  | u32  | u32  | u32  | u32      |   |     | order below, unaligned |      |
 *  +------+------+------+----------+---+-----+------------------------+------+
 *
 * flags is json_event.flags plus REC_* bits saying which optional fields
 * follow: dur tts tdur (i64), pid tid (u32: numbers < 2^32 or pool ids),
 * v1_id bind_id (u64), id id2_local id2_global (u32). args: encoded arg rows
 * (JSON_EV_ARGS_ROWS) or the args text. A typical X event is 34 bytes
 * before its args instead of sizeof(struct json_event). */
#define REC_DUR (1u << 16)
#define REC_TTS (1u << 17)
#define REC_TDUR (1u << 18)
#define REC_ID (1u << 19)
#define REC_ID2L (1u << 20)
#define REC_ID2G (1u << 21)
#define REC_HDR 18

static char *put(char *q, const void *v, size_t n)
{
	memcpy(q, v, n);
	return q + n;
}

static uint32_t rec_flags(const struct json_event *e)
{
	return e->flags | (e->dur != TP_NULL_I64 ? REC_DUR : 0) |
	       (e->tts != TP_NULL_I64 ? REC_TTS : 0) | (e->tdur != TP_NULL_I64 ? REC_TDUR : 0) |
	       (e->id ? REC_ID : 0) | (e->id2_local ? REC_ID2L : 0) |
	       (e->id2_global ? REC_ID2G : 0);
}

/* The record's size for its rec_flags f. */
static size_t event_size(const struct json_event *e, uint32_t f)
{
	/* Bit tests, not popcount: without -mpopcnt that is a libgcc call. */
	size_t wide = !!(f & REC_DUR) + !!(f & REC_TTS) + !!(f & REC_TDUR) + !!(f & JSON_EV_V1_ID) +
	              !!(f & JSON_EV_BIND_ID);
	size_t narrow = !!(f & JSON_EV_PID) + !!(f & JSON_EV_TID) + !!(f & REC_ID) +
	                !!(f & REC_ID2L) + !!(f & REC_ID2G);
	return REC_HDR + 8 * wide + 4 * narrow + e->args_len;
}

size_t tp_json_event_size(const struct json_event *e)
{
	return event_size(e, rec_flags(e));
}

/* tp_json_event_encode with e's rec_flags already known. */
static void event_encode(const struct json_event *e, uint32_t flags, const char *args, char *out)
{
	char *q = out;
	q = put(q, &flags, 4);
	q = put(q, &e->name, 4);
	q = put(q, &e->cat, 4);
	q = put(q, &e->args_len, 4);
	*q++ = e->ph;
	*q++ = e->scope;
	if (flags & REC_DUR)
		q = put(q, &e->dur, 8);
	if (flags & REC_TTS)
		q = put(q, &e->tts, 8);
	if (flags & REC_TDUR)
		q = put(q, &e->tdur, 8);
	uint32_t u;
	if (flags & JSON_EV_PID) {
		u = (uint32_t)e->pid;
		q = put(q, &u, 4);
	}
	if (flags & JSON_EV_TID) {
		u = (uint32_t)e->tid;
		q = put(q, &u, 4);
	}
	if (flags & JSON_EV_V1_ID)
		q = put(q, &e->v1_id, 8);
	if (flags & JSON_EV_BIND_ID)
		q = put(q, &e->bind_id, 8);
	if (flags & REC_ID)
		q = put(q, &e->id, 4);
	if (flags & REC_ID2L)
		q = put(q, &e->id2_local, 4);
	if (flags & REC_ID2G)
		q = put(q, &e->id2_global, 4);
	if (e->args_len)
		put(q, args, e->args_len);
}

void tp_json_event_encode(const struct json_event *e, const char *args, char *out)
{
	event_encode(e, rec_flags(e), args, out);
}

static const char *get(const char *q, void *v, size_t n)
{
	memcpy(v, q, n);
	return q + n;
}

void tp_json_event_decode(const void *rec, int64_t ts, struct json_event *e)
{
	const char *q = rec;
	uint32_t flags, u;
	memset(e, 0, sizeof *e);
	e->ts = ts;
	e->dur = e->tts = e->tdur = TP_NULL_I64;
	q = get(q, &flags, 4);
	q = get(q, &e->name, 4);
	q = get(q, &e->cat, 4);
	q = get(q, &e->args_len, 4);
	e->ph = *q++;
	e->scope = *q++;
	e->flags = (uint16_t)flags;
	if (flags & REC_DUR)
		q = get(q, &e->dur, 8);
	if (flags & REC_TTS)
		q = get(q, &e->tts, 8);
	if (flags & REC_TDUR)
		q = get(q, &e->tdur, 8);
	if (flags & JSON_EV_PID) {
		q = get(q, &u, 4);
		e->pid = u;
	}
	if (flags & JSON_EV_TID) {
		q = get(q, &u, 4);
		e->tid = u;
	}
	if (flags & JSON_EV_V1_ID)
		q = get(q, &e->v1_id, 8);
	if (flags & JSON_EV_BIND_ID)
		q = get(q, &e->bind_id, 8);
	if (flags & REC_ID)
		q = get(q, &e->id, 4);
	if (flags & REC_ID2L)
		q = get(q, &e->id2_local, 4);
	if (flags & REC_ID2G)
		q = get(q, &e->id2_global, 4);
	e->args = q;
}

/* ---- decoding one event ------------------------------------------------- */

static const char *str_value(struct json_tokenizer *t, const char *p, const char *end, uint32_t *id)
{
	const char *s;
	size_t n;
	p = json_string(p, end, &t->str, &s, &n);
	if (p)
		*id = json_intern(t->tp, &t->names, s, n);
	return p;
}

/* A time: number or numeric string. Invalid -> TP_NULL_I64. */
static const char *time_value(struct json_tokenizer *t, const char *p, const char *end,
                              int64_t *out)
{
	*out = TP_NULL_I64;
	if (*p == '"') {
		const char *s;
		size_t n;
		p = json_string(p, end, &t->str, &s, &n);
		int64_t v;
		if (p && tp_json_string_to_ns(s, n, &v))
			*out = v;
		return p;
	}
	uint64_t u;
	const char *q = json_uint_fast(p, end, &u);
	if (q && u < (1ull << 53)) {
		*out = (int64_t)u * 1000;
		return q;
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		/* As Perfetto: a whole number exactly, else its double rounded. */
		q = tp_json_time_number(p, end, out);
		if (q)
			return q;
		struct json_num num;
		p = tp_json_number(p, end, &num);
		int64_t v;
		if (p && tp_json_number_to_ns(&num, &v))
			*out = v;
		return p;
	}
	return tp_json_skip_value(p, end);
}

static void set_pid(struct json_event *e, bool is_tid, int64_t v, bool is_name)
{
	if (is_tid) {
		e->tid = v;
		e->flags |= JSON_EV_TID | (is_name ? JSON_EV_TID_NAME : 0);
	} else {
		e->pid = v;
		e->flags |= JSON_EV_PID | (is_name ? JSON_EV_PID_NAME : 0);
	}
}

/* pid/tid: a number (truncated if fractional; outside [0, 2^32) it is 0,
 * as Perfetto coerces it) or a string, which Perfetto treats as a name
 * with a synthetic id: the pool id of the name (the empty name too, which
 * is a string there, not none). */
static const char *pid_value(struct json_tokenizer *t, const char *p, const char *end,
                             struct json_event *e, bool is_tid)
{
	if (*p == '"') {
		uint32_t id = 0;
		p = str_value(t, p, end, &id);
		if (p)
			set_pid(e, is_tid, id ? id : strpool_empty(&t->tp->strings), true);
		return p;
	}
	uint64_t u;
	const char *q = json_uint_fast(p, end, &u);
	if (q) {
		set_pid(e, is_tid, u <= UINT32_MAX ? (int64_t)u : 0, false);
		return q;
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		struct json_num num;
		p = tp_json_number(p, end, &num);
		if (!p)
			return NULL;
		double d = num.is_int ? (double)num.i : num.d;
		bool in = d > -1.0 && d < 4294967296.0;
		set_pid(e, is_tid, in ? (num.is_int ? num.i : (int64_t)d) : 0, false);
		return p;
	}
	return tp_json_skip_value(p, end);
}

/* "id" / "bind_id" / id2's "local" and "global", as Perfetto's ExtractId:
 * a string (as a flow id: hex) or an integer; anything else is no id and
 * leaves the outputs as they were. *is_num tells which (string ids and
 * integer ids are different async cookies). */
static const char *id_value(struct json_tokenizer *t, const char *p, const char *end,
                            uint32_t *as_str, bool *is_num, uint64_t *flow_id, bool *flow_ok)
{
	*flow_ok = false;
	if (*p == '"') {
		const char *s;
		size_t n;
		p = json_string(p, end, &t->str, &s, &n);
		if (!p)
			return NULL;
		if (as_str) {
			*as_str = n ? tp_intern(t->tp, s, n) : strpool_empty(&t->tp->strings);
			*is_num = false;
		}
		*flow_ok = tp_json_parse_u64(s, n, 16, flow_id);
		return p;
	}
	if (*p == '-' || (*p >= '0' && *p <= '9')) {
		struct json_num num;
		p = tp_json_number(p, end, &num);
		if (!p || !num.is_int)
			return p;
		if (as_str) {
			*as_str = tp_intern(t->tp, num.s, num.n);
			*is_num = true;
		}
		*flow_id = (uint64_t)num.i;
		*flow_ok = true;
		return p;
	}
	return tp_json_skip_value(p, end);
}

/* "id2": {"local": ..., "global": ...}. The one that counts is kept (global
 * before local, as Perfetto), with whether it is an integer. */
static const char *id2_value(struct json_tokenizer *t, const char *p, const char *end,
                             struct json_event *e)
{
	if (*p != '{')
		return tp_json_skip_value(p, end);
	const char *vend = tp_json_skip_value(p, end);
	if (!vend)
		return NULL;
	uint64_t unused;
	bool ok, lnum = false, gnum = false;
	uint32_t local = 0, global = 0;
	const char *v = tp_json_object_find(p, vend, "local", &t->str);
	if (v && v < vend)
		id_value(t, v, vend, &local, &lnum, &unused, &ok);
	v = tp_json_object_find(p, vend, "global", &t->str);
	if (v && v < vend)
		id_value(t, v, vend, &global, &gnum, &unused, &ok);
	e->id2_global = global;
	e->id2_local = global ? 0 : local;
	bool num = global ? gnum : lnum;
	e->flags = (uint16_t)(num ? e->flags | JSON_EV_ID2_NUM : e->flags & ~JSON_EV_ID2_NUM);
	return vend;
}

static const char *bool_value(const char *p, const char *end, bool *out)
{
	*out = end - p >= 4 && memcmp(p, "true", 4) == 0;
	return tp_json_skip_value(p, end);
}

/* The field of an (unescaped) key: the general path. */
static enum field field_of(const char *k, size_t kn)
{
	for (size_t i = 0; i < TB_ARRAY_SIZE(fields); i++)
		if (strlen(fields[i].name) == kn && memcmp(fields[i].name, k, kn) == 0)
			return fields[i].f;
	return F_OTHER;
}

/* The fast path for the usual compact `"key":`: with p at its quote and at
 * least 8 bytes left, one 8-byte load compared (masked) with the few known
 * keys whose name starts with p[1]. The field and the length of `"key":`,
 * or 0. The candidates are built from fields[] (fast_keys_init). */
static inline size_t key_fast(const struct json_tokenizer *t, const char *p, enum field *f)
{
	unsigned char c = (unsigned char)p[1];
	if (c >= 128)
		return 0;
	uint64_t w;
	memcpy(&w, p, 8);
	for (unsigned i = t->fast_lo[c]; i < t->fast_hi[c]; i++) {
		const struct fast_key *k = &t->fast[i];
		if ((w & k->mask) == k->word) {
			*f = (enum field)k->f;
			return k->len;
		}
	}
	return 0;
}

/* A short string value ("X", "g", "e"): its first byte (0 if empty) and
 * its length, p moved past it; -1 when malformed. One-byte strings skip the
 * general string path. */
static inline int char_value(struct json_tokenizer *t, const char **pp, const char *end, size_t *n)
{
	const char *p = *pp;
	if (end - p >= 3 && p[2] == '"' && p[1] != '\\' && p[1] != '"') {
		*pp = p + 3;
		*n = 1;
		return (unsigned char)p[1];
	}
	const char *s;
	p = json_string(p, end, &t->str, &s, n);
	if (!p)
		return -1;
	*pp = p;
	return *n ? (unsigned char)s[0] : 0;
}

/* Decode the value of one event field. */
static const char *event_field(struct json_tokenizer *t, enum field f, const char *p,
                               const char *end, struct json_event *e, const char **args,
                               const char **args_end)
{
	bool b, ok;
	int c;
	size_t n;
	switch (f) {
	case F_PH:
	case F_S:
	case F_BP:
		/* As Perfetto: a value that is not a string reads as "" (a
		 * scope of none), and a scope it does not know leaves the one
		 * before. */
		if (*p != '"') {
			c = 0;
			n = 0;
			if (!(p = tp_json_skip_value(p, end)))
				return NULL;
		} else if ((c = char_value(t, &p, end, &n)) < 0) {
			return NULL;
		}
		if (f == F_PH)
			e->ph = (char)c;
		else if (f == F_S && n == 1 && (c == 'g' || c == 'p' || c == 't'))
			e->scope = (char)c;
		else if (f == F_S && n == 0)
			e->scope = 0;
		else if (f == F_BP && n == 1 && c == 'e')
			e->flags |= JSON_EV_BP_E;
		else if (f == F_BP)
			e->flags &= ~JSON_EV_BP_E;
		return p;
	case F_TS:
		return time_value(t, p, end, &e->ts);
	case F_DUR:
	case F_TTS:
	case F_TDUR: {
		int64_t *to = f == F_DUR ? &e->dur : f == F_TTS ? &e->tts : &e->tdur;
		p = time_value(t, p, end, to);
		if (*to == TP_NULL_I64)
			t->bad_time = true; /* present but not a time */
		return p;
	}
	case F_PID:
		return pid_value(t, p, end, e, false);
	case F_TID:
		return pid_value(t, p, end, e, true);
	case F_CAT:
	case F_NAME: {
		uint32_t *to = f == F_CAT ? &e->cat : &e->name;
		if (*p == '"')
			return str_value(t, p, end, to);
		*to = 0; /* not a string: none, as Perfetto */
		break;
	}
	case F_ID: {
		bool num = (e->flags & JSON_EV_ID_NUM) != 0;
		p = id_value(t, p, end, &e->id, &num, &e->v1_id, &ok);
		e->flags = (uint16_t)(num ? e->flags | JSON_EV_ID_NUM : e->flags & ~JSON_EV_ID_NUM);
		if (p && ok)
			e->flags |= JSON_EV_V1_ID;
		return p;
	}
	case F_ID2:
		return id2_value(t, p, end, e);
	case F_ARGS: {
		/* Rows now, in the same pass; the text's extent is kept too for
		 * the phases that read it their own way. Only an object is
		 * args (Perfetto ignores other values). */
		if (*p != '{')
			break;
		vec_clear(&t->rows.v);
		e->flags &= ~JSON_EV_ARGS_BAD;
		const char *q = tp_json_args_encode(t->tp, &t->args, p, end, &t->rows);
		if (!q) {
			q = tp_json_skip_value(p, end);
			e->flags |= JSON_EV_ARGS_BAD;
		}
		if (q) {
			*args = p;
			*args_end = q;
			e->flags |= JSON_EV_HAS_ARGS;
		}
		return q;
	}
	case F_BIND_ID:
		e->flags |= JSON_EV_BIND_KEY;
		p = id_value(t, p, end, NULL, NULL, &e->bind_id, &ok);
		if (p && ok)
			e->flags |= JSON_EV_BIND_ID;
		return p;
	case F_FLOW_IN:
	case F_FLOW_OUT: {
		uint32_t bit = f == F_FLOW_IN ? JSON_EV_FLOW_IN : JSON_EV_FLOW_OUT;
		if (*p != 't' && *p != 'f')
			break; /* not a bool: ignored */
		p = bool_value(p, end, &b);
		e->flags = (uint16_t)(b ? e->flags | bit : e->flags & ~bit);
		return p;
	}
	case F_OTHER:
		break;
	}
	return tp_json_skip_value(p, end);
}

/* Phases whose args the parser reads from the JSON text by their own rules
 * (counter values, metadata names, thread state fields), not as arg rows. */
static bool raw_args_phase(char ph)
{
	return ph == 'C' || ph == 'M' || ph == 'T';
}

/* Append e (args: its rows or raw text, args_end past them) to the log
 * when in ts order, else to the sorter. Written straight into their
 * memory: the JSON importer never extracts while tokenizing, so nothing
 * runs between the two. */
static void push_record(struct json_tokenizer *t, struct json_event *e, const char *args,
                        const char *args_end)
{
	struct tp *tp = t->tp;
	size_t alen = args ? (size_t)(args_end - args) : 0;
	if (alen > UINT32_MAX - sizeof *e - 8) {
		tp_stat_inc(tp, TP_STAT_json_tokenizer_failure);
		return;
	}
	e->args_len = (uint32_t)alen;
	uint32_t flags = rec_flags(e);
	size_t size = event_size(e, flags);
	char *rec;
	if (e->ts >= t->log.last_ts) {
		rec = tp_json_log_append(&t->log, e->ts, size);
	} else {
		rec = tp_sorter_push(tp->sorter, e->ts, NULL, size);
		if (!rec)
			return;
	}
	event_encode(e, flags, args, rec);
}

/* A V8 profile sample at ts of node, from the 'P' event e: a record with
 * ph 'P', the session id as v1_id and the node as bind_id. */
static void push_v8_sample(void *ctx, const struct json_event *e, int64_t ts, uint32_t node)
{
	struct json_tokenizer *t = ctx;
	if (ts < 0) {
		tp_stat_inc(t->tp, TP_STAT_trace_sorter_negative_timestamp_dropped);
		return;
	}
	struct json_event s;
	memset(&s, 0, sizeof s);
	s.ts = ts;
	s.dur = s.tts = s.tdur = TP_NULL_I64;
	s.ph = 'P';
	s.flags = (uint16_t)((e->flags &
	                      (JSON_EV_PID | JSON_EV_TID | JSON_EV_PID_NAME | JSON_EV_TID_NAME)) |
	                     JSON_EV_V1_ID | JSON_EV_BIND_ID);
	s.pid = e->pid;
	s.tid = e->tid;
	s.v1_id = e->v1_id;
	s.bind_id = node;
	push_record(t, &s, NULL, NULL);
}

/* Decode the event object at p; returns the byte after its '}', or NULL
 * when it is malformed or cut off by end. */
static const char *decode_event(struct json_tokenizer *t, const char *p, const char *end)
{
	struct json_event e;
	memset(&e, 0, sizeof e);
	e.ts = e.dur = e.tts = e.tdur = TP_NULL_I64;
	t->bad_time = false;
	const char *args = NULL, *args_end = NULL;
	bool empty = true;

	p = json_skip_ws(p, end);
	if (p >= end || *p != '{')
		return NULL;
	p++;
	for (unsigned pos = 0;; pos++) {
		enum field f;
		uint32_t id;
		const char *v;
		if (pos < JSON_KEY_MEMOS && (v = json_key_memo_match(&t->memo[pos], p, end, &id))) {
			p = v;
			f = (enum field)id;
		} else {
			p = json_skip_sep(p, end);
			if (p >= end)
				return NULL;
			if (*p == '}')
				break;
			if (*p != '"')
				return NULL;
			const char *from = p, *k = p + 1;
			size_t kl = end - p >= 8 ? key_fast(t, p, &f) : 0, kn = kl - 3;
			if (kl) {
				p += kl;
			} else {
				p = json_string(p, end, &t->str, &k, &kn);
				if (!p)
					return NULL;
				f = field_of(k, kn);
				p = json_skip_ws(p, end);
				if (p >= end || *p != ':')
					return NULL;
				p++;
			}
			if (pos < JSON_KEY_MEMOS)
				tp_json_key_memo_set(&t->memo[pos], from, end, k, kn, f);
			p = json_skip_ws(p, end);
			if (p >= end)
				return NULL;
		}
		empty = false;
		p = event_field(t, f, p, end, &e, &args, &args_end);
		if (!p)
			return NULL;
	}
	p++;
	struct tp *tp = t->tp;
	if (empty)
		return p; /* {} is skipped silently */
	if (!e.ph || t->bad_time) {
		/* A dur, tts or tdur that is no time: Perfetto counts it and
		 * goes no further (it then waits for more input forever); the
		 * event is dropped here, the rest read. */
		tp_stat_inc(tp, TP_STAT_json_tokenizer_failure);
		return p;
	}
	if (e.ts == TP_NULL_I64) {
		if (e.ph != 'M') {
			tp_stat_inc(tp, TP_STAT_json_tokenizer_failure);
			return p;
		}
		e.ts = 0;
	}
	if (e.ph == 'P') {
		/* V8 profile: read now, in file order; its samples are pushed
		 * as records of their own (v8.c). */
		if (!tp_json_v8_event(t->v8, tp, &e, args, args_end, push_v8_sample, t))
			tp_stat_inc(tp, TP_STAT_json_tokenizer_failure);
		return p;
	}
	if (e.ts < 0) {
		tp_stat_inc(tp, TP_STAT_trace_sorter_negative_timestamp_dropped);
		return p;
	}
	queue_append(t, e.ph, e.ts);
	if (args && !raw_args_phase(e.ph)) {
		static const char no_rows[1];
		args = t->rows.v.len ? t->rows.v.data : no_rows; /* "{}": no rows */
		args_end = args + t->rows.v.len;
		e.flags |= JSON_EV_ARGS_ROWS;
	} else {
		e.flags &= ~JSON_EV_ARGS_BAD;
	}
	push_record(t, &e, args, args_end);
	return p;
}

bool tp_json_tokenizer_event(struct json_tokenizer *t, const char *p, const char *end)
{
	return decode_event(t, p, end) != NULL;
}

/* ---- the outer state machine ------------------------------------------- */

static void start_skip(struct json_tokenizer *t, enum tok_state ret)
{
	memset(&t->scan, 0, sizeof t->scan);
	t->state = S_SKIP;
	t->ret = ret;
}

static void finish_capture(struct json_tokenizer *t)
{
	const char *p = t->tail.data, *end = p + t->tail.len;
	if (t->cap == CAP_EVENT) {
		if (!tp_json_tokenizer_event(t, p, end))
			tp_stat_inc(t->tp, TP_STAT_json_tokenizer_failure);
	} else {
		tp_json_metadata_add(t->tp, &t->args, p, end);
	}
	vec_clear(&t->tail);
}

static void tail_append(struct json_tokenizer *t, const char *p, size_t n)
{
	vec_reserve(&t->tail, n);
	memcpy(t->tail.data + t->tail.len, p, n);
	t->tail.len += n;
}

/* An event starting at p: decode it in place when it is complete here,
 * else start capturing it. Returns the position after what was used. */
static const char *event_at(struct json_tokenizer *t, const char *p, const char *end)
{
	const char *q = decode_event(t, p, end);
	if (q)
		return q;
	/* Malformed, or cut off by the chunk's end: find out which. */
	memset(&t->scan, 0, sizeof t->scan);
	size_t used;
	if (!vscan_run(&t->scan, p, end, &used)) {
		tail_append(t, p, (size_t)(end - p));
		t->cap = CAP_EVENT;
		t->state = S_CAPTURE;
		t->ret = S_ARRAY;
		return end;
	}
	tp_stat_inc(t->tp, TP_STAT_json_tokenizer_failure);
	return p + used;
}

static bool key_eq(const struct json_tokenizer *t, const char *lit)
{
	return t->key_len == strlen(lit) && memcmp(t->key, lit, t->key_len) == 0;
}

/* ---- handing a top-level string to another importer -----------------------
 *
 * The value of "systemTraceEvents" (systrace text) is not JSON to us: when a
 * sink is set it is streamed there, unescaped, in pieces (runs without
 * escapes go out straight from the input), then `end` is called at its
 * closing quote. An escape cut by a chunk end waits in `esc`. */

void tp_json_tokenizer_set_system_trace_sink(struct json_tokenizer *t,
                                             const struct json_text_sink *sink)
{
	t->system_trace = *sink;
}

/* Bytes the escape in esc needs in all, or 0 when it is complete. After a
 * high surrogate \uD8xx-\uDBxx a second escape may follow to pair with it:
 * `next` is the byte after the first (-1 when not here yet). */
static size_t esc_need(const char *e, size_t n, int next)
{
	if (n < 2)
		return 2;
	if (e[1] != 'u')
		return 0;
	if (n < 6)
		return 6;
	char c = e[3];
	bool high = (e[2] == 'd' || e[2] == 'D') &&
	            (c == '8' || c == '9' || (c >= 'a' && c <= 'b') || (c >= 'A' && c <= 'B'));
	if (!high || (n == 6 && next >= 0 && next != '\\'))
		return 0;
	if (n < 8)
		return 8;
	return e[7] == 'u' && n < 12 ? 12 : 0;
}

/* Consume string text for the sink; returns where it stopped. */
static const char *text_run(struct json_tokenizer *t, const char *p, const char *end)
{
	const struct json_text_sink *k = &t->system_trace;
	while (p < end) {
		if (t->esc_len) {
			while (esc_need(t->esc, t->esc_len, p < end ? (unsigned char)*p : -1)) {
				if (p == end)
					return p;
				t->esc[t->esc_len++] = *p++;
			}
			char tmp[sizeof t->esc + 2];
			tmp[0] = '"';
			memcpy(tmp + 1, t->esc, t->esc_len);
			tmp[t->esc_len + 1] = '"';
			const char *u;
			size_t un;
			const char *q =
			    tp_json_string_escaped(tmp, tmp + t->esc_len + 2, &t->str, &u, &un);
			t->esc_len = 0;
			if (!q) { /* a bad escape: the rest of the string is skipped */
				tp_stat_inc(t->tp, TP_STAT_json_tokenizer_failure);
				memset(&t->scan, 0, sizeof t->scan);
				t->scan.started = t->scan.in_str = true;
				t->state = S_SKIP;
				t->ret = S_KEY_OR_END;
				return p;
			}
			k->piece(k->ctx, u, un);
			continue;
		}
		const char *q = json_find_quote_or_bs(p, end);
		if (q > p)
			k->piece(k->ctx, p, (size_t)(q - p));
		p = q;
		if (p == end)
			break;
		if (*p == '"') {
			k->end(k->ctx);
			t->state = S_KEY_OR_END;
			return p + 1;
		}
		t->esc[t->esc_len++] = *p++; /* the backslash */
	}
	return p;
}

static int run(struct json_tokenizer *t, const char *p, const char *end)
{
	while (p < end) {
		switch (t->state) {
		case S_START: {
			unsigned char c = (unsigned char)*p;
			static const unsigned char bom[3] = {0xef, 0xbb, 0xbf};
			if (t->bom < 3 && c == bom[t->bom]) {
				t->bom++;
				p++;
				break;
			}
			t->bom = 3;
			if (json_is_ws(c)) {
				p++;
			} else if (c == '{') {
				t->outer_dict = true;
				t->state = S_KEY_OR_END;
				p++;
			} else if (c == '[') {
				t->state = S_ARRAY;
				p++;
			} else {
				return tp_fail(
				    t->tp, -EINVAL,
				    "cannot parse json: the first character is not '{' or '['");
			}
			break;
		}
		case S_KEY_OR_END:
			p = json_skip_ws(p, end);
			if (p == end)
				break;
			if (*p == ',') {
				p++;
			} else if (*p == '}') {
				t->state = S_DONE;
				p++;
			} else if (*p == '"') {
				t->key_len = 0;
				t->key_esc = false;
				t->state = S_KEY;
				p++;
			} else {
				tp_stat_inc(t->tp, TP_STAT_json_tokenizer_failure);
				t->state = S_DONE;
			}
			break;
		case S_KEY:
			for (; p < end; p++) {
				char c = *p;
				if (t->key_esc) {
					t->key_esc = false;
				} else if (c == '\\') {
					t->key_esc = true;
				} else if (c == '"') {
					t->state = S_COLON;
					p++;
					break;
				}
				if (t->key_len < sizeof t->key)
					t->key[t->key_len] = c;
				t->key_len++; /* > sizeof key: matches nothing */
			}
			break;
		case S_COLON:
			p = json_skip_ws(p, end);
			if (p == end)
				break;
			if (*p != ':') {
				tp_stat_inc(t->tp, TP_STAT_json_tokenizer_failure);
				t->state = S_DONE;
				break;
			}
			p++;
			t->state = S_VALUE;
			break;
		case S_VALUE:
			p = json_skip_ws(p, end);
			if (p == end)
				break;
			if (key_eq(t, "traceEvents") && *p == '[') {
				t->state = S_ARRAY;
				p++;
			} else if (key_eq(t, "metadata") && *p == '{') {
				memset(&t->scan, 0, sizeof t->scan);
				t->cap = CAP_METADATA;
				t->state = S_CAPTURE;
				t->ret = S_KEY_OR_END;
			} else if (key_eq(t, "systemTraceEvents") && *p == '"' &&
			           t->system_trace.piece) {
				t->esc_len = 0;
				t->state = S_TEXT;
				p++;
			} else {
				if (key_eq(t, "displayTimeUnit"))
					tp_stat_inc(t->tp, TP_STAT_json_display_time_unit);
				start_skip(t, S_KEY_OR_END);
			}
			break;
		case S_ARRAY:
			p = json_skip_ws(p, end);
			if (p == end)
				break;
			if (*p == ',') {
				p++;
			} else if (*p == ']') {
				t->state = t->outer_dict ? S_KEY_OR_END : S_DONE;
				p++;
			} else if (*p == '{') {
				p = event_at(t, p, end);
			} else {
				tp_stat_inc(t->tp, TP_STAT_json_tokenizer_failure);
				start_skip(t, S_ARRAY);
			}
			break;
		case S_SKIP: {
			size_t used;
			if (vscan_run(&t->scan, p, end, &used)) {
				p += used;
				t->state = t->ret;
			} else {
				p = end;
			}
			break;
		}
		case S_CAPTURE: {
			size_t used;
			if (vscan_run(&t->scan, p, end, &used)) {
				tail_append(t, p, used);
				p += used;
				t->state = t->ret;
				finish_capture(t);
			} else if (t->tail.len + (size_t)(end - p) > JSON_MAX_EVENT_BYTES) {
				vec_release(&t->tail);
				tp_stat_inc(t->tp, TP_STAT_json_event_too_large);
				t->state = S_SKIP; /* the scan goes on uncopied; ret stays */
				p = end;
			} else {
				tail_append(t, p, (size_t)(end - p));
				p = end;
			}
			break;
		}
		case S_TEXT:
			p = text_run(t, p, end);
			break;
		case S_DONE:
			return 0; /* trailing bytes after the trace are ignored */
		}
	}
	return 0;
}

int tp_json_tokenizer_feed(struct json_tokenizer *t, const uint8_t *p, size_t n)
{
	return run(t, (const char *)p, (const char *)p + n);
}
