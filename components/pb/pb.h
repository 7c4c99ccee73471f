/*
 * pb: a zero-copy protobuf wire reader and a streaming writer with patchable
 * sizes. It knows the wire format only (no schemas, no descriptors): the
 * trace processor decodes TracePackets with the reader, and the trace writer
 * and the probes encode packets with the writer straight into shared-memory
 * chunks. protobuf-c is used elsewhere for small messages; this is the hot path.
 *
 * Reader: struct pb_reader walks one message's fields in place. Nothing is
 * allocated; length-delimited values point into the caller's buffer. A
 * malformed field ends the iteration and leaves an error code in the reader.
 *
 * Writer: struct pb_writer appends to a current span [cur, end). When a span
 * is full a backend callback supplies the next one: a growable heap buffer, a
 * fixed caller buffer, or (later) shared-memory chunks. Nested messages
 * reserve a 4-byte redundant varint size that is patched through a plain
 * pointer when the message ends. See README.md for the format and invariants.
 *
 * Neither is thread-safe; each reader or writer belongs to one thread.
 */
#ifndef TB_PB_H
#define TB_PB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base.h"

/* ---- wire format -------------------------------------------------------- */

enum pb_wire {
	PB_WIRE_VARINT = 0,
	PB_WIRE_FIXED64 = 1,
	PB_WIRE_LEN = 2,
	PB_WIRE_SGROUP = 3, /* deprecated groups: rejected by the reader */
	PB_WIRE_EGROUP = 4,
	PB_WIRE_FIXED32 = 5,
};

#define PB_MAX_FIELD_ID ((1u << 29) - 1)   /* largest valid field number */
#define PB_VARINT_MAX_LEN 10               /* bytes in the longest varint */
#define PB_REDUNDANT4_MAX ((1u << 28) - 1) /* largest 4-byte redundant size */
#define PB_MAX_NESTING 32                  /* writer nesting depth limit */

/* ---- helpers shared by reader and writer -------------------------------- */

/* Zigzag mapping of sint32/sint64: 0,-1,1,-2 <-> 0,1,2,3. Pure. */
static inline uint32_t pb_zigzag_enc32(int32_t v)
{
	return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}
static inline uint64_t pb_zigzag_enc64(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}
static inline int32_t pb_zigzag_dec32(uint32_t v)
{
	return (int32_t)((v >> 1) ^ (0u - (v & 1)));
}
static inline int64_t pb_zigzag_dec64(uint64_t v)
{
	return (int64_t)((v >> 1) ^ (0ull - (v & 1)));
}

/* Number of bytes the minimal varint encoding of v takes (1..10). Pure. */
static inline size_t pb_varint_size(uint64_t v)
{
	/* ceil(bits / 7) with bits = 0 counted as one: (9 bits + 64) / 64 is
	 * equal for bits 1..64 and a multiply-add instead of a division. */
	unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
	return (size_t)(bits * 9 + 64) >> 6;
}

/* Write the minimal varint encoding of v at out, which must have room for
 * PB_VARINT_MAX_LEN bytes. Returns the byte after the last one written. */
static inline uint8_t *pb_encode_varint(uint8_t *out, uint64_t v)
{
	while (v >= 0x80) {
		*out++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*out++ = (uint8_t)v;
	return out;
}

/* Write v (<= PB_REDUNDANT4_MAX) as a 4-byte redundant varint: the first
 * three bytes always carry the continuation bit, so the size of a message can
 * be reserved before it is known and patched in place later. 5 encodes as
 * 85 80 80 00; 2^28-1 (the SMB "drop packet" size) as ff ff ff 7f. Used for
 * nested sizes here and for SMB fragment headers in tracing. */
static inline void pb_write_redundant_varint4(uint8_t out[4], uint32_t v)
{
	out[0] = (uint8_t)(0x80 | (v & 0x7f));
	out[1] = (uint8_t)(0x80 | ((v >> 7) & 0x7f));
	out[2] = (uint8_t)(0x80 | ((v >> 14) & 0x7f));
	out[3] = (uint8_t)((v >> 21) & 0x7f);
}

/* ---- reader ------------------------------------------------------------- */

/* Reader error codes (pb_reader.error). Input errors, never crashes. */
enum pb_error {
	PB_OK = 0,
	PB_ERR_VARINT = 1,    /* varint truncated or longer than 10 bytes */
	PB_ERR_FIELD_ID = 2,  /* field number 0 or above PB_MAX_FIELD_ID */
	PB_ERR_WIRE = 3,      /* wire type 6 or 7 */
	PB_ERR_GROUP = 4,     /* wire type 3 or 4 (groups are not supported) */
	PB_ERR_TRUNCATED = 5, /* fixed32/fixed64 or length past the end */
	PB_ERR_PACKED = 6,    /* packed fixed payload not a multiple of the width */
};

/* One decoded field. For PB_WIRE_VARINT, FIXED32 and FIXED64 the raw value is
 * in val (fixed32 zero-extended) and data is NULL. For PB_WIRE_LEN, data/len
 * point into the reader's buffer (borrowed, valid while it is) and val == len. */
struct pb_field {
	uint32_t id;
	uint8_t wire;
	uint64_t val;
	const uint8_t *data;
	size_t len;
};

/* Iterates the fields of one message in place. Embed it; no release needed. */
struct pb_reader {
	const uint8_t *p, *end; /* unread input */
	const uint8_t *start;   /* for error offsets */
	int error;              /* enum pb_error; sticky once set */
	size_t error_off;       /* offset of the field that failed */
};

/* Out-of-line parts; use the inline functions below. */
const uint8_t *pb_read_varint_slow(const uint8_t *p, const uint8_t *end, uint64_t *out);
bool pb_reader_fail(struct pb_reader *r, const uint8_t *at, int error);

/* Decode one varint from [p, end) into *out. Returns the byte after it, or
 * NULL when it is truncated or longer than 10 bytes (*out is then unset). A
 * 10th byte's bits beyond 64 are ignored, as protobuf does. */
static inline const uint8_t *pb_read_varint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	if (TB_LIKELY(p < end && *p < 0x80)) {
		*out = *p;
		return p + 1;
	}
	return pb_read_varint_slow(p, end, out);
}

/* pb_read_varint with varints of up to 4 bytes decoded inline from one
 * 32-bit load: timestamps, uuids and the 4-byte redundant lengths protozero
 * writes for nested messages. For the hottest decoders only (bigger code). */
static inline const uint8_t *pb_read_varint_short(const uint8_t *p, const uint8_t *end,
                                                  uint64_t *out)
{
	if (TB_LIKELY(end - p >= 4)) {
		uint32_t w = tb_ld32(p);
		uint32_t v = w & 0x7f;
		if (!(w & 0x80)) {
			*out = v;
			return p + 1;
		}
		v |= (w >> 1) & 0x3f80;
		if (!(w & 0x8000)) {
			*out = v;
			return p + 2;
		}
		v |= (w >> 2) & 0x1fc000;
		if (!(w & 0x800000)) {
			*out = v;
			return p + 3;
		}
		v |= (w >> 3) & 0xfe00000;
		if (!(w & 0x80000000u)) {
			*out = v;
			return p + 4;
		}
	} else if (end - p >= 2 && p[0] >= 0x80 && p[1] < 0x80) {
		*out = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
		return p + 2;
	}
	return pb_read_varint(p, end, out);
}

/* Start reading the message in buf[0, len). buf is borrowed and must outlive
 * the reader and every field it yields. */
static inline void pb_reader_init(struct pb_reader *r, const void *buf, size_t len)
{
	r->start = r->p = (const uint8_t *)buf;
	r->end = len ? r->p + len : r->p; /* NULL + 0 is undefined */
	r->error = PB_OK;
	r->error_off = 0;
}

/* Start reading the payload of a length-delimited field as a message. */
static inline void pb_reader_init_field(struct pb_reader *r, const struct pb_field *f)
{
	pb_reader_init(r, f->data, f->len);
}

/* Decode the next field into *f. Returns true if one was decoded; false at
 * the end of the buffer or on malformed input, which sets r->error (check
 * with pb_reader_error) and stops all later calls. Groups (wire types 3/4)
 * are an error, not skipped: Perfetto's protos never use them. */
static inline bool pb_next(struct pb_reader *r, struct pb_field *f)
{
	const uint8_t *p = r->p, *end = r->end, *q;
	uint64_t tag, v;
	if (p >= end)
		return false;
	if (TB_LIKELY(*p < 0x80)) {
		tag = *p;
		q = p + 1;
	} else if (!(q = pb_read_varint_slow(p, end, &tag))) {
		return pb_reader_fail(r, p, PB_ERR_VARINT);
	}
	if (TB_UNLIKELY(tag < 8 || tag > ((uint64_t)PB_MAX_FIELD_ID << 3 | 7)))
		return pb_reader_fail(r, p, PB_ERR_FIELD_ID);
	f->id = (uint32_t)(tag >> 3);
	f->wire = (uint8_t)(tag & 7);
	f->data = NULL;
	f->len = 0;
	switch (f->wire) {
	case PB_WIRE_VARINT:
		if (!(q = pb_read_varint(q, end, &v)))
			return pb_reader_fail(r, p, PB_ERR_VARINT);
		f->val = v;
		break;
	case PB_WIRE_LEN:
		if (!(q = pb_read_varint(q, end, &v)))
			return pb_reader_fail(r, p, PB_ERR_VARINT);
		if (TB_UNLIKELY(v > (uint64_t)(end - q)))
			return pb_reader_fail(r, p, PB_ERR_TRUNCATED);
		f->val = v;
		f->data = q;
		f->len = (size_t)v;
		q += v;
		break;
	case PB_WIRE_FIXED32:
		if (TB_UNLIKELY(end - q < 4))
			return pb_reader_fail(r, p, PB_ERR_TRUNCATED);
		f->val = tb_ld32(q);
		q += 4;
		break;
	case PB_WIRE_FIXED64:
		if (TB_UNLIKELY(end - q < 8))
			return pb_reader_fail(r, p, PB_ERR_TRUNCATED);
		f->val = tb_ld64(q);
		q += 8;
		break;
	case PB_WIRE_SGROUP:
	case PB_WIRE_EGROUP:
		return pb_reader_fail(r, p, PB_ERR_GROUP);
	default:
		return pb_reader_fail(r, p, PB_ERR_WIRE);
	}
	r->p = q;
	return true;
}

/* The reader's enum pb_error; PB_OK after a clean end. */
static inline int pb_reader_error(const struct pb_reader *r)
{
	return r->error;
}

/* A static lower-case description of an enum pb_error ("ok" for PB_OK). */
const char *pb_strerror(int error);

/* Find the last occurrence of field id in buf[0, len) (the one protobuf
 * semantics say wins) and copy it to *f. Returns 1 if found, 0 if not, or
 * -enum pb_error if the message is malformed before the end. */
int pb_find_field(const void *buf, size_t len, uint32_t id, struct pb_field *f);

/* Typed views of a field's raw value. Callers check f->wire first when the
 * input is untrusted; mismatched views return the truncated raw bits. */
static inline uint64_t pb_field_uint64(const struct pb_field *f)
{
	return f->val;
}
static inline uint32_t pb_field_uint32(const struct pb_field *f)
{
	return (uint32_t)f->val;
}
static inline int64_t pb_field_int64(const struct pb_field *f)
{
	return (int64_t)f->val;
}
static inline int32_t pb_field_int32(const struct pb_field *f)
{
	return (int32_t)f->val;
}
static inline bool pb_field_bool(const struct pb_field *f)
{
	return f->val != 0;
}
static inline int32_t pb_field_sint32(const struct pb_field *f)
{
	return pb_zigzag_dec32((uint32_t)f->val);
}
static inline int64_t pb_field_sint64(const struct pb_field *f)
{
	return pb_zigzag_dec64(f->val);
}
static inline double pb_field_double(const struct pb_field *f)
{
	double d;
	memcpy(&d, &f->val, 8);
	return d;
}
static inline float pb_field_float(const struct pb_field *f)
{
	uint32_t u = (uint32_t)f->val;
	float x;
	memcpy(&x, &u, 4);
	return x;
}

/* Iterates a packed repeated field: varints, fixed32 or fixed64 elements
 * back to back in one length-delimited payload. Embed; no release needed. */
struct pb_packed {
	const uint8_t *p, *end;
	uint8_t wire; /* element encoding: PB_WIRE_VARINT, _FIXED32 or _FIXED64 */
	int error;    /* enum pb_error; sticky once set */
};

/* Start iterating data[0, len) (usually f->data, f->len) as elements of wire
 * type elem_wire. The data is borrowed. A fixed payload whose length is not a
 * multiple of the width yields no element and sets PB_ERR_PACKED. */
void pb_packed_init(struct pb_packed *it, const uint8_t *data, size_t len, enum pb_wire elem_wire);

/* Next element's raw value (convert as for pb_field: (int32_t), zigzag, ...).
 * Returns false at the end or on a malformed varint (it->error is set). */
static inline bool pb_packed_next(struct pb_packed *it, uint64_t *out)
{
	const uint8_t *q;
	if (it->p >= it->end)
		return false;
	switch (it->wire) {
	case PB_WIRE_VARINT:
		if (!(q = pb_read_varint(it->p, it->end, out))) {
			it->error = PB_ERR_VARINT;
			it->p = it->end;
			return false;
		}
		it->p = q;
		return true;
	case PB_WIRE_FIXED32:
		*out = tb_ld32(it->p);
		it->p += 4;
		return true;
	default:
		*out = tb_ld64(it->p);
		it->p += 8;
		return true;
	}
}

/* The values of one occurrence f of a repeated varint field, packed (a
 * length-delimited run) or not (one varint); none for another wire type:
 *   struct pb_varints it;
 *   for (pb_varints_init(&it, &f); pb_varints_next(&it, &v);) ... */
struct pb_varints {
	struct pb_packed packed;
	uint64_t one;
	int state; /* 0: `one` is next, 1: packed, 2: done */
};

static inline void pb_varints_init(struct pb_varints *it, const struct pb_field *f)
{
	it->one = f->val;
	it->state = f->wire == PB_WIRE_VARINT ? 0 : f->wire == PB_WIRE_LEN ? 1 : 2;
	if (it->state == 1)
		pb_packed_init(&it->packed, f->data, f->len, PB_WIRE_VARINT);
}

static inline bool pb_varints_next(struct pb_varints *it, uint64_t *v)
{
	if (it->state == 1)
		return pb_packed_next(&it->packed, v);
	if (it->state != 0)
		return false;
	*v = it->one;
	it->state = 2;
	return true;
}

/* ---- writer ------------------------------------------------------------- */

struct pb_writer;

/* Backend callback: the current span is full. On entry [span_start, cur) of
 * the old span is final except for nested sizes still open; the callback
 * must point cur/end at a new span with at least `need` bytes (need <= 16)
 * and return 0, or return a negative errno-style code, which the writer
 * records and after which it drops all output. A backend that gives up the
 * old span's memory (a chunked SMB writer returning a chunk, a realloc) must
 * redirect any w->nest[i].size_ptr, i < pb_writer_open_depth(w), pointing
 * into it: at a moved copy, or at a patch slot it sends on later. */
typedef int (*pb_span_fn)(struct pb_writer *w, size_t need);

/* One open nested message: where its size goes and where its payload began
 * (as a pb_writer_size() position). */
struct pb_nest {
	uint8_t *size_ptr; /* 4 bytes, patched by pb_end_nested; NULL after errors */
	uint64_t start;
};

/* A streaming writer. Embed it; init with one of the pb_writer_init_*
 * functions and end with pb_writer_release. Fields are public for backends
 * and the inline fast paths; other code uses the functions. */
struct pb_writer {
	uint8_t *cur, *end;  /* free room in the current span */
	uint8_t *span_start; /* where the current span began */
	uint64_t base;       /* bytes written before span_start */
	pb_span_fn next_span;
	void *ctx;    /* for the backend */
	uint8_t *buf; /* growable/fixed backends: the whole buffer */
	size_t cap;
	int error;      /* 0 or negative errno-style; sticky */
	unsigned depth; /* open nested messages (may exceed PB_MAX_NESTING
	                 * after an error) */
	struct pb_nest nest[PB_MAX_NESTING];
};

/* Write into a heap buffer grown with tb_realloc; the writer owns it until
 * pb_writer_take or pb_writer_release. */
void pb_writer_init_growable(struct pb_writer *w);

/* Write into buf[0, cap), borrowed. Running out of room sets -ENOSPC. */
void pb_writer_init_fixed(struct pb_writer *w, uint8_t *buf, size_t cap);

/* Write into spans supplied by fn (see pb_span_fn); ctx is for fn. The first
 * write calls fn. pb_writer_data is NULL for this backend. */
void pb_writer_init_spans(struct pb_writer *w, pb_span_fn fn, void *ctx);

/* Free the growable buffer (if any); the writer must be re-initialised before
 * reuse. Open nested messages are abandoned. */
void pb_writer_release(struct pb_writer *w);

/* Forget everything written (and any error) but keep the buffer, so one
 * writer can encode many messages. Growable and fixed backends only. */
void pb_writer_reset(struct pb_writer *w);

/* Total bytes written so far, across spans. */
static inline size_t pb_writer_size(const struct pb_writer *w)
{
	return (size_t)(w->base + (uint64_t)(w->cur - w->span_start));
}

/* Start of the output of a growable or fixed writer (borrowed; moves when a
 * growable buffer grows), NULL for span writers or before the first write. */
static inline uint8_t *pb_writer_data(const struct pb_writer *w)
{
	return w->buf;
}

/* 0, or the first error: -ENOSPC (fixed buffer full), -ENOMEM, -EMSGSIZE
 * (nested message over PB_REDUNDANT4_MAX bytes), -E2BIG (nesting deeper
 * than PB_MAX_NESTING), or what a span callback returned. */
static inline int pb_writer_error(const struct pb_writer *w)
{
	return w->error;
}

/* Number of nested messages currently open. */
static inline unsigned pb_writer_open_depth(const struct pb_writer *w)
{
	return w->depth < PB_MAX_NESTING ? w->depth : PB_MAX_NESTING;
}

/* Hand the growable buffer to the caller (free with tb_free) and its length
 * in *len; the writer is left empty as after init. Returns NULL (and len 0)
 * if nothing was written or the writer has an error. All nested messages must
 * be closed. */
uint8_t *pb_writer_take(struct pb_writer *w, size_t *len);

/* Slow paths behind the inline writers. */
void pb_put_raw_varint_slow(struct pb_writer *w, uint64_t v);

/* Append n raw bytes from p (borrowed), split across spans as needed. */
void pb_put_raw(struct pb_writer *w, const void *p, size_t n);

/* Append v as a bare varint (no tag): for tags, packed payloads, sizes. */
static inline void pb_put_raw_varint(struct pb_writer *w, uint64_t v)
{
	if (TB_LIKELY(w->end - w->cur >= PB_VARINT_MAX_LEN)) {
		w->cur = pb_encode_varint(w->cur, v);
		return;
	}
	pb_put_raw_varint_slow(w, v);
}

/* Append the tag of field id (1..PB_MAX_FIELD_ID) with wire type wire. */
static inline void pb_put_tag(struct pb_writer *w, uint32_t id, enum pb_wire wire)
{
	TB_DCHECK(id >= 1 && id <= PB_MAX_FIELD_ID);
	pb_put_raw_varint(w, (uint64_t)id << 3 | (uint64_t)wire);
}

/* Field writers: append tag and value of field id. Errors are recorded in
 * the writer (pb_writer_error), never returned, so encoders stay linear. */
static inline void pb_put_varint(struct pb_writer *w, uint32_t id, uint64_t v)
{
	pb_put_tag(w, id, PB_WIRE_VARINT);
	pb_put_raw_varint(w, v);
}
static inline void pb_put_uint64(struct pb_writer *w, uint32_t id, uint64_t v)
{
	pb_put_varint(w, id, v);
}
static inline void pb_put_uint32(struct pb_writer *w, uint32_t id, uint32_t v)
{
	pb_put_varint(w, id, v);
}
/* Negative int32 values take 10 bytes (sign-extended), as protobuf says. */
static inline void pb_put_int32(struct pb_writer *w, uint32_t id, int32_t v)
{
	pb_put_varint(w, id, (uint64_t)(int64_t)v);
}
static inline void pb_put_int64(struct pb_writer *w, uint32_t id, int64_t v)
{
	pb_put_varint(w, id, (uint64_t)v);
}
static inline void pb_put_sint32(struct pb_writer *w, uint32_t id, int32_t v)
{
	pb_put_varint(w, id, pb_zigzag_enc32(v));
}
static inline void pb_put_sint64(struct pb_writer *w, uint32_t id, int64_t v)
{
	pb_put_varint(w, id, pb_zigzag_enc64(v));
}
static inline void pb_put_bool(struct pb_writer *w, uint32_t id, bool v)
{
	pb_put_varint(w, id, v ? 1 : 0);
}
void pb_put_fixed32(struct pb_writer *w, uint32_t id, uint32_t v);
void pb_put_fixed64(struct pb_writer *w, uint32_t id, uint64_t v);
static inline void pb_put_sfixed32(struct pb_writer *w, uint32_t id, int32_t v)
{
	pb_put_fixed32(w, id, (uint32_t)v);
}
static inline void pb_put_sfixed64(struct pb_writer *w, uint32_t id, int64_t v)
{
	pb_put_fixed64(w, id, (uint64_t)v);
}
void pb_put_double(struct pb_writer *w, uint32_t id, double v);
void pb_put_float(struct pb_writer *w, uint32_t id, float v);
/* Length-delimited field with n bytes from p (borrowed; copied). */
void pb_put_bytes(struct pb_writer *w, uint32_t id, const void *p, size_t n);
/* Length-delimited field with the NUL-terminated string s (not the NUL). */
void pb_put_string(struct pb_writer *w, uint32_t id, const char *s);

/* Packed repeated fields with a minimal length prefix (byte-identical to
 * protoc). Varint elements are raw values: sign-extend int32, zigzag sint.
 * n == 0 writes nothing. vals is borrowed. */
void pb_put_packed_varint(struct pb_writer *w, uint32_t id, const uint64_t *vals, size_t n);
void pb_put_packed_fixed32(struct pb_writer *w, uint32_t id, const uint32_t *vals, size_t n);
void pb_put_packed_fixed64(struct pb_writer *w, uint32_t id, const uint64_t *vals, size_t n);

/* Open a nested message (or any length-delimited field written piecewise)
 * as field id: writes the tag and reserves a 4-byte redundant varint size.
 * Returns a handle to pass to pb_end_nested. Opening more than
 * PB_MAX_NESTING levels records -E2BIG; the handle still pairs. */
unsigned pb_begin_nested_slow(struct pb_writer *w, uint32_t id);
static inline unsigned pb_begin_nested(struct pb_writer *w, uint32_t id)
{
	unsigned h = w->depth;
	TB_DCHECK(id >= 1 && id <= PB_MAX_FIELD_ID);
	/* Room for the tag (<= 5 bytes) and the size in this span: inline. */
	if (TB_LIKELY(h < PB_MAX_NESTING && w->end - w->cur >= 5 + 4)) {
		uint8_t *p = pb_encode_varint(w->cur, (uint64_t)id << 3 | PB_WIRE_LEN);
		p[0] = 0x80, p[1] = 0x80, p[2] = 0x80, p[3] = 0x00; /* size 0, 4 bytes */
		w->nest[h].size_ptr = p;
		w->cur = p + 4;
		w->nest[h].start = pb_writer_size(w);
		w->depth = h + 1;
		return h;
	}
	return pb_begin_nested_slow(w, id);
}

/* Close the innermost nested message, which must be `handle`, and patch its
 * size through the reserved pointer. Sizes above PB_REDUNDANT4_MAX record
 * -EMSGSIZE. */
void pb_end_nested_slow(struct pb_writer *w, unsigned handle);
static inline void pb_end_nested(struct pb_writer *w, unsigned handle)
{
	if (TB_LIKELY(handle + 1 == w->depth && handle < PB_MAX_NESTING && !w->error &&
	              w->nest[handle].size_ptr)) {
		uint64_t size = pb_writer_size(w) - w->nest[handle].start;
		if (TB_LIKELY(size <= PB_REDUNDANT4_MAX)) {
			pb_write_redundant_varint4(w->nest[handle].size_ptr, (uint32_t)size);
			w->nest[handle].size_ptr = NULL;
			w->depth = handle;
			return;
		}
	}
	pb_end_nested_slow(w, handle);
}

#endif /* TB_PB_H */
