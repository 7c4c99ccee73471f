/*
 * Chrome JSON (Trace Event Format) importer, private declarations shared by
 * its files:
 *
 *   tokenizer.c  the container state machine: finds each event object in
 *                the byte stream (chunks of any size), keeps only the
 *                unfinished tail between chunks, decodes the event's fields
 *                (and its args, as encoded rows) in one pass into a struct
 *                json_event and pushes it to the sorter.
 *   lex.c        JSON lexing helpers on complete text: strings (with
 *                unescaping), numbers, value skipping, object members,
 *                Perfetto's µs -> ns.
 *   args.c       the `args` value -> encoded arg rows -> args builder;
 *                top-level metadata.
 *   log.c        the in-order event log: records of events that arrive in
 *                ts order, kept out of the sorter.
 *   parser.c     event semantics in timestamp order (slices, instants,
 *                counters, async, flows, metadata, thread states) and the
 *                tp_importer_ops glue.
 */
#ifndef TB_TP_JSON_INT_H
#define TB_TP_JSON_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../tp_int.h"

/* ---- the event record (sorter payload) -------------------------------- */

#define JSON_EV_PID 0x001u      /* pid present (numeric or name) */
#define JSON_EV_TID 0x002u      /* tid present */
#define JSON_EV_PID_NAME 0x004u /* pid was a string: pid_name is its name */
#define JSON_EV_TID_NAME 0x008u /* tid was a string */
#define JSON_EV_V1_ID 0x010u    /* v1_id (from "id") is valid */
#define JSON_EV_BIND_ID 0x020u  /* bind_id is valid */
#define JSON_EV_BIND_KEY 0x040u /* "bind_id" key present (even if invalid) */
#define JSON_EV_FLOW_IN 0x080u
#define JSON_EV_FLOW_OUT 0x100u
#define JSON_EV_BP_E 0x200u      /* "bp": "e" */
#define JSON_EV_HAS_ARGS 0x400u  /* "args" key present */
#define JSON_EV_ARGS_ROWS 0x800u /* args holds encoded rows, not JSON text */
#define JSON_EV_ARGS_BAD 0x1000u /* args present but not importable */
#define JSON_EV_HASHED 0x2000u   /* args_hash is set (parser only, not stored) */
#define JSON_EV_ID_NUM 0x4000u   /* "id" was an integer, not a string */
#define JSON_EV_ID2_NUM 0x8000u  /* the id2 kept was an integer */

/* One event as the tokenizer decoded it. Strings are pool ids (0 = absent
 * or empty). Times are ns; TP_NULL_I64 when absent or not a valid number.
 * The sorter holds it in the compact record form below (tp_json_event_encode);
 * the parser gets it back with tp_json_event_decode. */
struct json_event {
	int64_t ts, dur, tts, tdur;
	int64_t pid, tid; /* valid when JSON_EV_PID / JSON_EV_TID */
	uint64_t v1_id, bind_id;
	uint32_t name, cat;
	uint32_t id;                    /* "id" as a string (integers as their text) */
	uint32_t id2_local, id2_global; /* one of them: global wins */
	uint32_t args_len;              /* bytes at args */
	uint64_t args_hash;             /* with JSON_EV_HASHED: the hash of the args rows */
	/* With JSON_EV_HASHED, when not NULL: the rows already decoded (the
	 * parser's ring does it while hashing them). */
	struct tp_args_builder *decoded;
	uint16_t flags;
	char ph;
	char scope; /* "s": 'g' 'p' 't', else 0 (none: the thread) */
	/* With JSON_EV_ARGS_ROWS: the arg rows as tp_json_args_encode made them
	 * (phases whose args become args rows); else the raw JSON text of the
	 * args value (C, M, T: read by their own rules at parse time). */
	const char *args;
};

static inline const char *json_event_args(const struct json_event *e)
{
	return e->args;
}

/* The sorter record of e and its args_len bytes of args: its size, and
 * written to out (tp_json_event_size bytes). ts is not stored: the sorter
 * keeps it. */
size_t tp_json_event_size(const struct json_event *e);
void tp_json_event_encode(const struct json_event *e, const char *args, char *out);
/* Decode a record made by tp_json_event_encode; e->args points into rec. */
void tp_json_event_decode(const void *rec, int64_t ts, struct json_event *e);

/* ---- lex.c: helpers on complete JSON text ----------------------------- */

/* A scratch buffer for unescaped strings and built keys. */
struct json_buf {
	VEC(char) v;
};

static inline bool json_is_ws(unsigned char c)
{
	return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}
/* Whitespace is rare in big traces: one compare tells most bytes apart (the
 * four whitespace bytes are all <= ' '). */
static inline const char *json_skip_ws(const char *p, const char *end)
{
	while (p < end && (unsigned char)*p <= ' ' && json_is_ws((unsigned char)*p))
		p++;
	return p;
}

/* Past whitespace and the ',' separators between members or elements (a
 * missing or doubled comma is tolerated). */
static inline const char *json_skip_sep(const char *p, const char *end)
{
	p = json_skip_ws(p, end);
	while (p < end && *p == ',')
		p = json_skip_ws(p + 1, end);
	return p;
}

/* The first '"' or '\\' in [p, end), or end. SWAR: 8 bytes at a time. */
static inline const char *json_find_quote_or_bs(const char *p, const char *end)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	while (end - p >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		uint64_t q = w ^ (ones * 0x22), b = w ^ (ones * 0x5c);
		uint64_t hit = ((q - ones) & ~q & highs) | ((b - ones) & ~b & highs);
		if (hit)
			return p + (__builtin_ctzll(hit) >> 3);
		p += 8;
	}
	while (p < end && *p != '"' && *p != '\\')
		p++;
	return p;
}

/* A string starting at p (which is '"'). On success returns the byte after
 * the closing quote and points *s and *n at the unescaped text: into the input
 * when it has no escapes, else into buf. NULL when malformed or cut off.
 * tp_json_string_escaped is the general path, taken at the first backslash. */
const char *tp_json_string_escaped(const char *p, const char *end, struct json_buf *buf,
                                   const char **s, size_t *n);
static inline const char *json_string(const char *p, const char *end, struct json_buf *buf,
                                      const char **s, size_t *n)
{
	const char *q = json_find_quote_or_bs(p + 1, end);
	if (q < end && *q == '"') {
		*s = p + 1;
		*n = (size_t)(q - p - 1);
		return q + 1;
	}
	return tp_json_string_escaped(p, end, buf, s, n);
}

/* A number token: its extent, and whether it is integral. */
struct json_num {
	const char *s;
	size_t n;
	bool is_int; /* no '.', 'e', 'E' and fits int64 */
	int64_t i;   /* when is_int */
	double d;    /* always; as Perfetto's json parser makes it */
};
/* The number of leading ASCII digits of the 8 bytes in w (0-8): a byte is a
 * digit when its high nibble is 3 and adding 6 keeps it so. A carry out of
 * a non-digit byte only reaches later bytes. */
static inline unsigned json_digits8(uint64_t w)
{
	const uint64_t hi = 0xf0f0f0f0f0f0f0f0ull, threes = 0x3030303030303030ull;
	uint64_t bad = ((w & hi) ^ threes) | (((w + 0x0606060606060606ull) & hi) ^ threes);
	return bad ? (unsigned)__builtin_ctzll(bad) >> 3 : 8;
}

/* The value of the first n (1-8) digits in w. */
static inline uint64_t json_digits8_value(uint64_t w, unsigned n)
{
	uint64_t v = (w & 0x0f0f0f0f0f0f0f0full) << (8 * (8 - n));
	v = (v * 10 + (v >> 8)) & 0x00ff00ff00ff00ffull;
	v = (v * 100 + (v >> 16)) & 0x0000ffff0000ffffull;
	return (v * 10000 + (v >> 32)) & 0xffffffffull;
}

/* The common number: 1 to 16 plain digits, not followed by another digit, a
 * fraction or an exponent. Returns the byte after it, or NULL for any other
 * shape, or when fewer than 17 bytes are left (the caller takes the general
 * path then). Forced inline: called for most numbers of a trace. */
__attribute__((always_inline)) static inline const char *
json_uint_fast(const char *p, const char *end, uint64_t *v)
{
	if (end - p < 17)
		return NULL;
	uint64_t w;
	memcpy(&w, p, 8);
	unsigned n = json_digits8(w);
	if (n == 0)
		return NULL;
	uint64_t x = json_digits8_value(w, n);
	if (n == 8) {
		memcpy(&w, p + 8, 8);
		unsigned m = json_digits8(w);
		if (m) {
			static const uint64_t pow10[9] = {
			    1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
			x = x * pow10[m] + json_digits8_value(w, m);
			n += m;
		}
	}
	char c = p[n];
	if (c == '.' || c == 'e' || c == 'E' || (unsigned)(c - '0') < 10)
		return NULL;
	*v = x;
	return p + n;
}
/* Parse a number at p. Returns the byte after it, NULL if not a number. */
const char *tp_json_number(const char *p, const char *end, struct json_num *out);

/* Skip one value at p (after whitespace). Returns the byte after it or
 * NULL when malformed or cut off. depth bounds nesting. */
const char *tp_json_skip_value(const char *p, const char *end);

/* Perfetto's CoerceToTs: a JSON number (µs) to ns, integers exactly,
 * other numbers as the double Perfetto's json parser makes of their text
 * (not strtod's), whole ones exactly and others rounded to the nearest ns;
 * a string must be one number, all of it, converted the same way. false if
 * not a valid time. */
bool tp_json_number_to_ns(const struct json_num *num, int64_t *ns);
bool tp_json_string_to_ns(const char *s, size_t n, int64_t *ns);
/* Fast path for a JSON number at p that is a time: plain [-]digits[.digits]
 * (<= 18 digits each) -> ns as tp_json_number_to_ns would, returning the byte
 * after it. NULL when the number has another shape (use tp_json_number and
 * tp_json_number_to_ns then). */
const char *tp_json_time_number(const char *p, const char *end, int64_t *ns);

/* strtod over the whole of s (Perfetto's CStringToDouble): false unless
 * every byte was consumed. */
bool tp_json_parse_double(const char *s, size_t n, double *out);
/* strtoull base 10/16 over the whole of s. */
bool tp_json_parse_u64(const char *s, size_t n, int base, uint64_t *out);

/* The next member of an object whose '{' was consumed: p is after it or
 * after the previous member's value. Returns the member's value (after
 * whitespace) with its key in *k, *kn (unescaped, maybe into buf); at the
 * closing '}' sets *closed and returns the byte after it; NULL when the
 * text is malformed or cut off. Forced inline: it is the args hot loop. */
__attribute__((always_inline)) static inline const char *json_member(const char *p, const char *end,
                                                                     struct json_buf *buf,
                                                                     const char **k, size_t *kn,
                                                                     bool *closed)
{
	*closed = false;
	p = json_skip_sep(p, end);
	if (p < end && *p == '}') {
		*closed = true;
		return p + 1;
	}
	if (p >= end || *p != '"')
		return NULL;
	p = json_string(p, end, buf, k, kn);
	if (!p)
		return NULL;
	p = json_skip_ws(p, end);
	if (p >= end || *p != ':')
		return NULL;
	p = json_skip_ws(p + 1, end);
	return p < end ? p : NULL;
}

/* Find key in the object text [p, end) (top level only). Returns a pointer
 * to its value or NULL. */
const char *tp_json_object_find(const char *p, const char *end, const char *key,
                                struct json_buf *buf);

/* Byte equality a word at a time (musl's memcmp goes byte by byte). */
static inline bool json_same_bytes(const char *a, const char *b, size_t n)
{
	for (; n >= 8; a += 8, b += 8, n -= 8) {
		uint64_t x, y;
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
	}
	while (n--)
		if (*a++ != *b++)
			return false;
	return true;
}

/* A direct-mapped cache in front of the string pool: traces repeat a few
 * names, categories, arg keys and values. A string of at most 16 bytes is
 * identified exactly by its length and two (overlapping) words, so a hit
 * costs two loads and a compare; longer ones by a hash, checked against the
 * pool. */
struct json_icache {
	struct {
		uint64_t a, b;  /* the words, or the hash and 0 */
		uint32_t n, id; /* id 0 = empty */
	} e[2048];
};
uint32_t tp_json_intern_slow(struct tp *tp, struct json_icache *c, const char *s, size_t n);

/* Two words that, with n, identify the n <= 16 bytes at s exactly (they may
 * overlap); false when n > 16. */
static inline bool json_words(const char *s, size_t n, uint64_t *a, uint64_t *b)
{
	if (n >= 8 && n <= 16) {
		memcpy(a, s, 8);
		memcpy(b, s + n - 8, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t x, y;
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		*a = x;
		*b = y;
	} else if (n < 4) {
		*a = n ? (uint64_t)(unsigned char)s[0] << 16 |
		             (uint64_t)(unsigned char)s[n >> 1] << 8 | (unsigned char)s[n - 1]
		       : 0;
		*b = 0;
	} else {
		return false;
	}
	return true;
}

static inline uint64_t json_words_hash(uint64_t a, uint64_t b, size_t n)
{
	return (a ^ n) * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full;
}

static inline uint32_t json_intern(struct tp *tp, struct json_icache *c, const char *s, size_t n)
{
	uint64_t a, b;
	if (!n)
		return 0;
	if (!json_words(s, n, &a, &b))
		return tp_json_intern_slow(tp, c, s, n);
	size_t i = (size_t)(json_words_hash(a, b, n) >> 53);
	if (c->e[i].n == n && c->e[i].a == a && c->e[i].b == b && c->e[i].id)
		return c->e[i].id;
	uint32_t id = tp_intern(tp, s, n);
	c->e[i].a = a;
	c->e[i].b = b;
	c->e[i].n = (uint32_t)n;
	c->e[i].id = id;
	return id;
}

/* The members of an object are remembered by position: a trace repeats a
 * few shapes (event fields, args), so the member at position i usually has
 * the key it had at i last time. A memo holds that key's `"key":` text (at
 * most 16 bytes) and what it stands for (a field, a key id). */
struct json_key_memo {
	uint64_t w[2], m[2]; /* the text's bytes, and their mask */
	uint32_t len, id;    /* len 0: empty */
};
#define JSON_KEY_MEMOS 8 /* positions remembered */

/* A hit: the member at p (after at most one comma) has the memo's key
 * text, compared two words at a time; returns its value's first byte (after
 * whitespace) and the memo's id in *id. NULL on a miss. */
static inline const char *json_key_memo_match(const struct json_key_memo *m, const char *p,
                                              const char *end, uint32_t *id)
{
	if (p < end && *p == ',')
		p++;
	if (!m->len || end - p < 16)
		return NULL;
	uint64_t w0, w1;
	memcpy(&w0, p, 8);
	memcpy(&w1, p + 8, 8);
	if ((w0 & m->m[0]) != m->w[0] || (w1 & m->m[1]) != m->w[1])
		return NULL;
	p = json_skip_ws(p + m->len, end);
	if (p >= end)
		return NULL;
	*id = m->id;
	return p;
}
/* Remember a member whose key text k (kn bytes, unescaped) was read from
 * the input after `from`: kept when `"key":` is there as is (not unescaped
 * into a buffer, no spaces before the colon) and fits 16 bytes. */
void tp_json_key_memo_set(struct json_key_memo *m, const char *from, const char *end, const char *k,
                          size_t kn, uint32_t id);

/* ---- args.c --------------------------------------------------------------- */

/* A remembered key id of "<parent>.<member>", by parent id and member. */
struct json_child_key {
	uint64_t a, b; /* member text words (<= 16 bytes) or its hash */
	uint32_t n, parent, id;
};
#define JSON_CHILD_KEYS 256 /* entries, a power of two */

struct json_args_ctx {
	uint32_t args_key;                         /* the pool id of "args", once interned */
	struct json_key_memo memo[JSON_KEY_MEMOS]; /* the args object's keys */
	struct json_buf flat, key, str;
	struct json_icache keys, values;
	struct json_child_key children[JSON_CHILD_KEYS];
};
/* Encode the JSON value at [p, end) as arg rows under "args", appended to
 * out, Perfetto-style: objects -> dotted keys, arrays
 * -> [i] in key only, nulls skipped, ints/reals/strings/bools typed. Keys and
 * strings are interned now. Returns the byte after the value, or NULL (and
 * out unchanged) when it is malformed or cut off. */
const char *tp_json_args_encode(struct tp *tp, struct json_args_ctx *c, const char *p,
                                const char *end, struct json_buf *out);
/* Append the n bytes of rows made by tp_json_args_encode to b. */
void tp_json_args_decode(const char *rows, size_t n, struct tp_args_builder *b);
/* tp_json_args_decode, returning the tp_args_hash_add hash of the set the
 * rows decode to (what tp_args_commit would compute). */
uint64_t tp_json_args_decode_hash(const char *rows, size_t n, struct tp_args_builder *b);
/* The top-level "metadata" object: json_metadata.<key> metadata rows. */
void tp_json_metadata_add(struct tp *tp, struct json_args_ctx *c, const char *p, const char *end);
void tp_json_args_ctx_release(struct json_args_ctx *c);

/* ---- log.c ------------------------------------------------------------------ */

struct json_log_chunk {
	char *data; /* NULL once freed */
	size_t used, cap;
	uint32_t held; /* records handed out by tp_json_log_next, not yet done */
};

/* Records in ts order (each ts >= the one before), appended by the
 * tokenizer and read back once, in order, by the parser. */
struct json_log {
	VEC(struct json_log_chunk) chunks;
	int64_t last_ts;             /* of the newest record; INT64_MIN when empty */
	size_t n;                    /* records appended */
	size_t rchunk, roff, rindex; /* the reader: chunk, offset, records read */
};
void tp_json_log_init(struct json_log *l);
void tp_json_log_release_all(struct json_log *l);
/* Room for a record of len bytes with timestamp ts (>= last_ts), to be
 * written by the caller before the next call. */
char *tp_json_log_append(struct json_log *l, int64_t ts, size_t len);
/* The ts of the oldest unread record in *ts; false when all were read. */
bool tp_json_log_peek(struct json_log *l, int64_t *ts);
/* The oldest unread record (NULL when none), its ts, length and chunk. It
 * stays valid until tp_json_log_done(chunk) is called for it. */
const char *tp_json_log_next(struct json_log *l, int64_t *ts, size_t *len, uint32_t *chunk);
void tp_json_log_done(struct json_log *l, uint32_t chunk);
/* Records appended and not read yet. */
size_t tp_json_log_unread(const struct json_log *l);

/* ---- tokenizer.c ----------------------------------------------------------- */

struct json_tokenizer;
struct json_tokenizer *tp_json_tokenizer_new(struct tp *tp);
void tp_json_tokenizer_free(struct json_tokenizer *t);
/* Feed the next n bytes. An event not older than the newest logged goes to
 * the tokenizer's log, an older one to tp->sorter. Returns 0 or a negative
 * code after tp_fail() (input is not JSON at all). */
int tp_json_tokenizer_feed(struct json_tokenizer *t, const uint8_t *p, size_t n);
/* Whether the events at ts are re-ordered by Perfetto's slow comparator
 * (E first, then X longest first; see parser.c): an X was pushed and ts is
 * in the range Perfetto's sorter sorts (from the oldest ts pushed out of
 * order on). Elsewhere push order holds. Valid once all are pushed. */
bool tp_json_tokenizer_reorders(const struct json_tokenizer *t, int64_t ts);
/* The log of in-order events (read by the parser at end of file). */
struct json_log *tp_json_tokenizer_log(struct json_tokenizer *t);
/* The tokenizer's V8 profile sessions (for the parser's samples). */
struct json_v8 *tp_json_tokenizer_v8(struct json_tokenizer *t);

/* ---- V8 CPU profiles ('P' events, v8.c) ---------------------------------- */

struct json_v8;
struct json_v8 *tp_json_v8_new(void);
void tp_json_v8_free(struct json_v8 *v);
/* A sample of a 'P' event e at ts, of profile node `node`. */
typedef void (*json_v8_sample_fn)(void *ctx, const struct json_event *e, int64_t ts, uint32_t node);
/* Read the 'P' event e (args: its raw args text, NULL if none) at tokenize
 * time: a "Profile" starts its session (event id, pid), a "ProfileChunk"
 * adds its nodes as callsites and hands each sample with its time to push.
 * false when Perfetto would count json_tokenizer_failure (an id that is
 * not hex, samples and timeDeltas of different lengths, samples of a
 * session not started). */
bool tp_json_v8_event(struct json_v8 *v, struct tp *tp, const struct json_event *e,
                      const char *args, const char *args_end, json_v8_sample_fn push, void *ctx);
/* At parse time: the callsite row of node in session (id, pid), if any. */
bool tp_json_v8_sample_callsite(struct json_v8 *v, uint64_t id, int64_t pid, uint32_t node,
                                uint32_t *callsite);
/* A consumer of a top-level string value: `piece` gets its unescaped text
 * in order, in pieces of any size (valid only during the call), then `end`
 * at the closing quote. Called on the tokenizer's thread, during feed. */
struct json_text_sink {
	void (*piece)(void *ctx, const char *s, size_t n);
	void (*end)(void *ctx);
	void *ctx;
};
/* The sink for the "systemTraceEvents" string (systrace text) of an object
 * trace; without one (the default) that value is skipped. */
void tp_json_tokenizer_set_system_trace_sink(struct json_tokenizer *t,
                                             const struct json_text_sink *sink);
/* Decode one complete event object [p, end) and push it. Returns false when
 * the text is not a well-formed object. Exposed for the parser tests. */
bool tp_json_tokenizer_event(struct json_tokenizer *t, const char *p, const char *end);

#endif /* TB_TP_JSON_INT_H */
