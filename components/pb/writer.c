/*
 * The protobuf streaming writer: span management, the growable and fixed
 * backends, field writers that are not worth inlining, and nested messages
 * with 4-byte redundant varint sizes patched through plain pointers.
 *
 * The writer only ever sees the current span [cur, end). Whenever it needs
 * room it asks next_span for a new one and keeps a running byte count (base)
 * so nested sizes can be computed across spans. A backend that moves or
 * hands off old spans fixes up w->nest[].size_ptr itself: the growable
 * backend below rebases them after tb_realloc; a chunked SMB backend would
 * point them at patch slots. See README.md.
 */
#include <errno.h>

#include "pb.h"

/* Record the first error and make every later fast path fall into a slow
 * path, which sees the error and drops the write. */
static void writer_fail(struct pb_writer *w, int code)
{
	if (!w->error)
		w->error = code;
	w->end = w->cur;
}

/* Make sure at least need (<= 16) contiguous bytes are free at cur. */
static bool writer_room(struct pb_writer *w, size_t need)
{
	int rc;
	if ((size_t)(w->end - w->cur) >= need)
		return true;
	if (w->error)
		return false;
	w->base += (uint64_t)(w->cur - w->span_start);
	w->span_start = w->cur;
	rc = w->next_span(w, need);
	if (rc == 0 && (size_t)(w->end - w->cur) < need)
		rc = -EINVAL; /* a backend bug, but bad output is not a crash */
	if (rc) {
		writer_fail(w, rc);
		return false;
	}
	w->span_start = w->cur;
	return true;
}

static int fixed_span(struct pb_writer *w, size_t need)
{
	return -ENOSPC;
}

#define PB_GROWABLE_MIN 256

static int growable_span(struct pb_writer *w, size_t need)
{
	size_t used = w->buf ? (size_t)(w->cur - w->buf) : 0;
	size_t cap = w->cap ? w->cap : PB_GROWABLE_MIN / 2, want;
	size_t off[PB_MAX_NESTING];
	unsigned depth = pb_writer_open_depth(w);
	uint8_t *nb;

	if (!tb_add_ok(used, need, &want))
		return -ENOMEM;
	do {
		if (!tb_mul_ok(cap, 2, &cap))
			return -ENOMEM;
	} while (cap < want);
	/* Offsets, not pointers: the old block is gone after realloc. */
	for (unsigned i = 0; i < depth; i++)
		off[i] = w->nest[i].size_ptr ? (size_t)(w->nest[i].size_ptr - w->buf) : SIZE_MAX;
	nb = tb_try_realloc(w->buf, cap);
	if (!nb)
		return -ENOMEM;
	for (unsigned i = 0; i < depth; i++)
		if (off[i] != SIZE_MAX)
			w->nest[i].size_ptr = nb + off[i];
	w->buf = nb;
	w->cap = cap;
	w->cur = nb + used;
	w->end = nb + cap;
	return 0;
}

static void writer_init(struct pb_writer *w, pb_span_fn fn, void *ctx)
{
	memset(w, 0, sizeof *w);
	w->next_span = fn;
	w->ctx = ctx;
}

void pb_writer_init_growable(struct pb_writer *w)
{
	writer_init(w, growable_span, NULL);
}

void pb_writer_init_fixed(struct pb_writer *w, uint8_t *buf, size_t cap)
{
	writer_init(w, fixed_span, NULL);
	w->buf = buf;
	w->cap = cap;
	w->cur = w->span_start = buf;
	w->end = cap ? buf + cap : buf;
}

void pb_writer_init_spans(struct pb_writer *w, pb_span_fn fn, void *ctx)
{
	TB_CHECK(fn);
	writer_init(w, fn, ctx);
}

void pb_writer_release(struct pb_writer *w)
{
	if (w->next_span == growable_span)
		tb_free(w->buf);
	memset(w, 0, sizeof *w);
}

void pb_writer_reset(struct pb_writer *w)
{
	TB_CHECK(w->next_span == growable_span || w->next_span == fixed_span);
	w->cur = w->span_start = w->buf;
	w->end = w->cap ? w->buf + w->cap : w->buf;
	w->base = 0;
	w->error = 0;
	w->depth = 0;
}

uint8_t *pb_writer_take(struct pb_writer *w, size_t *len)
{
	uint8_t *out = NULL;
	TB_CHECK(w->next_span == growable_span);
	TB_CHECK(w->depth == 0);
	*len = 0;
	if (!w->error && w->buf) {
		out = w->buf;
		*len = pb_writer_size(w);
	} else {
		tb_free(w->buf);
	}
	writer_init(w, growable_span, NULL);
	return out;
}

void pb_put_raw(struct pb_writer *w, const void *p, size_t n)
{
	const uint8_t *s = p;
	while (n) {
		if (w->cur == w->end && !writer_room(w, 1))
			return;
		size_t k = (size_t)(w->end - w->cur);
		if (k > n)
			k = n;
		memcpy(w->cur, s, k);
		w->cur += k;
		s += k;
		n -= k;
	}
}

void pb_put_raw_varint_slow(struct pb_writer *w, uint64_t v)
{
	uint8_t tmp[PB_VARINT_MAX_LEN];
	pb_put_raw(w, tmp, (size_t)(pb_encode_varint(tmp, v) - tmp));
}

static void put_le32(struct pb_writer *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	pb_put_raw(w, b, 4);
}

static void put_le64(struct pb_writer *w, uint64_t v)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	pb_put_raw(w, b, 8);
}

void pb_put_fixed32(struct pb_writer *w, uint32_t id, uint32_t v)
{
	pb_put_tag(w, id, PB_WIRE_FIXED32);
	put_le32(w, v);
}

void pb_put_fixed64(struct pb_writer *w, uint32_t id, uint64_t v)
{
	pb_put_tag(w, id, PB_WIRE_FIXED64);
	put_le64(w, v);
}

void pb_put_double(struct pb_writer *w, uint32_t id, double v)
{
	uint64_t u;
	memcpy(&u, &v, 8);
	pb_put_fixed64(w, id, u);
}

void pb_put_float(struct pb_writer *w, uint32_t id, float v)
{
	uint32_t u;
	memcpy(&u, &v, 4);
	pb_put_fixed32(w, id, u);
}

void pb_put_bytes(struct pb_writer *w, uint32_t id, const void *p, size_t n)
{
	pb_put_tag(w, id, PB_WIRE_LEN);
	pb_put_raw_varint(w, n);
	pb_put_raw(w, p, n);
}

void pb_put_string(struct pb_writer *w, uint32_t id, const char *s)
{
	pb_put_bytes(w, id, s, strlen(s));
}

void pb_put_packed_varint(struct pb_writer *w, uint32_t id, const uint64_t *vals, size_t n)
{
	uint64_t size = 0;
	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		size += pb_varint_size(vals[i]);
	pb_put_tag(w, id, PB_WIRE_LEN);
	pb_put_raw_varint(w, size);
	for (size_t i = 0; i < n; i++)
		pb_put_raw_varint(w, vals[i]);
}

void pb_put_packed_fixed32(struct pb_writer *w, uint32_t id, const uint32_t *vals, size_t n)
{
	if (!n)
		return;
	pb_put_tag(w, id, PB_WIRE_LEN);
	pb_put_raw_varint(w, (uint64_t)n * 4);
	for (size_t i = 0; i < n; i++)
		put_le32(w, vals[i]);
}

void pb_put_packed_fixed64(struct pb_writer *w, uint32_t id, const uint64_t *vals, size_t n)
{
	if (!n)
		return;
	pb_put_tag(w, id, PB_WIRE_LEN);
	pb_put_raw_varint(w, (uint64_t)n * 8);
	for (size_t i = 0; i < n; i++)
		put_le64(w, vals[i]);
}

unsigned pb_begin_nested_slow(struct pb_writer *w, uint32_t id)
{
	static const uint8_t zero_size[4] = {0x80, 0x80, 0x80, 0x00};
	unsigned h = w->depth;
	/* The slot must be valid before any span callback can look at it. */
	if (h < PB_MAX_NESTING)
		w->nest[h].size_ptr = NULL;
	w->depth++;
	pb_put_tag(w, id, PB_WIRE_LEN);
	if (h >= PB_MAX_NESTING) {
		writer_fail(w, -E2BIG);
		return h;
	}
	/* The size must be contiguous: the patch is one 4-byte store. */
	if (writer_room(w, 4)) {
		memcpy(w->cur, zero_size, 4);
		w->nest[h].size_ptr = w->cur;
		w->cur += 4;
	}
	w->nest[h].start = pb_writer_size(w);
	return h;
}

void pb_end_nested_slow(struct pb_writer *w, unsigned handle)
{
	uint64_t size;
	TB_CHECK(w->depth > 0 && handle == w->depth - 1);
	w->depth--;
	if (handle >= PB_MAX_NESTING || w->error || !w->nest[handle].size_ptr)
		return;
	size = pb_writer_size(w) - w->nest[handle].start;
	if (size > PB_REDUNDANT4_MAX) {
		writer_fail(w, -EMSGSIZE);
		return;
	}
	pb_write_redundant_varint4(w->nest[handle].size_ptr, (uint32_t)size);
	w->nest[handle].size_ptr = NULL;
}
