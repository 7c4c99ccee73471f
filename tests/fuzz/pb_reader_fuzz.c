/*
 * Fuzz target for components/pb. Walks the input as a protobuf message,
 * treating every length-delimited field that parses cleanly as a nested
 * message (up to FUZZ_MAX_DEPTH) and iterating every payload as packed
 * varints, fixed32 and fixed64, so each reader path sees hostile bytes. It
 * then re-encodes what it read with the writer (nested sizes as 4-byte
 * redundant varints) and checks that reading the output gives back the same
 * fields: a round-trip oracle for reader and writer together.
 *
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/pb_reader/ in every CI build.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "pb.h"

#define FUZZ_MAX_DEPTH 8

static volatile uint64_t sink; /* keeps the conversions from being optimised out */

static void touch_field(const struct pb_field *f)
{
	sink += (uint64_t)pb_field_int32(f) + (uint64_t)pb_field_int64(f) + pb_field_uint32(f) +
	        pb_field_bool(f) + (uint64_t)pb_field_sint32(f) + (uint64_t)pb_field_sint64(f);
	sink += (uint64_t)(pb_field_double(f) == 0.0) + (uint64_t)(pb_field_float(f) == 0.0f);
}

static void walk_packed(const uint8_t *p, size_t n)
{
	static const enum pb_wire kinds[] = {PB_WIRE_VARINT, PB_WIRE_FIXED32, PB_WIRE_FIXED64};
	for (size_t k = 0; k < TB_ARRAY_SIZE(kinds); k++) {
		struct pb_packed it;
		uint64_t v;
		pb_packed_init(&it, p, n, kinds[k]);
		while (pb_packed_next(&it, &v))
			sink +=
			    (uint64_t)pb_zigzag_dec64(v) + (uint64_t)pb_zigzag_dec32((uint32_t)v);
	}
}

/* True if buf parses to its end without error. */
static bool is_message(const uint8_t *buf, size_t len)
{
	struct pb_reader r;
	struct pb_field f;
	pb_reader_init(&r, buf, len);
	while (pb_next(&r, &f))
		;
	return pb_reader_error(&r) == PB_OK;
}

/* Read buf and write what was read to w. Nested messages are written with
 * pb_begin_nested, other length-delimited fields as bytes. */
static void walk(const uint8_t *buf, size_t len, int depth, struct pb_writer *w)
{
	struct pb_reader r;
	struct pb_field f;
	pb_reader_init(&r, buf, len);
	while (pb_next(&r, &f)) {
		touch_field(&f);
		switch (f.wire) {
		case PB_WIRE_VARINT:
			pb_put_varint(w, f.id, f.val);
			break;
		case PB_WIRE_FIXED32:
			pb_put_fixed32(w, f.id, (uint32_t)f.val);
			break;
		case PB_WIRE_FIXED64:
			pb_put_fixed64(w, f.id, f.val);
			break;
		case PB_WIRE_LEN:
			walk_packed(f.data, f.len);
			if (depth < FUZZ_MAX_DEPTH && is_message(f.data, f.len)) {
				unsigned h = pb_begin_nested(w, f.id);
				walk(f.data, f.len, depth + 1, w);
				pb_end_nested(w, h);
			} else {
				pb_put_bytes(w, f.id, f.data, f.len);
			}
			break;
		default:
			abort(); /* the reader never yields other wire types */
		}
	}
	if (pb_reader_error(&r) != PB_OK && r.error_off > len)
		abort();
}

/* a is the input, b the writer's output: the same fields in the same order,
 * nested messages compared recursively (their size encodings differ). */
static void compare(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen, int depth)
{
	struct pb_reader ra, rb;
	struct pb_field fa, fb;
	pb_reader_init(&ra, a, alen);
	pb_reader_init(&rb, b, blen);
	while (pb_next(&ra, &fa)) {
		if (!pb_next(&rb, &fb) || fa.id != fb.id || fa.wire != fb.wire)
			abort();
		if (fa.wire != PB_WIRE_LEN) {
			if (fa.val != fb.val)
				abort();
		} else if (depth < FUZZ_MAX_DEPTH && is_message(fa.data, fa.len)) {
			compare(fa.data, fa.len, fb.data, fb.len, depth + 1);
		} else if (fa.len != fb.len || memcmp(fa.data, fb.data, fa.len) != 0) {
			abort();
		}
	}
	/* The output has nothing more, and no error where the input had none. */
	if (pb_next(&rb, &fb))
		abort();
	if (pb_reader_error(&ra) == PB_OK && pb_reader_error(&rb) != PB_OK)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pb_writer w;
	struct pb_field f;
	uint8_t fixed[64];

	pb_writer_init_growable(&w);
	walk(data, size, 0, &w);
	if (pb_writer_error(&w) != 0)
		abort();
	compare(data, size, pb_writer_data(&w), pb_writer_size(&w), 0);
	pb_writer_release(&w);

	/* A small fixed buffer: overflow must be an error, never a write past. */
	pb_writer_init_fixed(&w, fixed, size < sizeof fixed ? size : sizeof fixed);
	walk(data, size, 0, &w);
	if (pb_writer_size(&w) > sizeof fixed)
		abort();
	pb_writer_release(&w);

	if (size > 0)
		sink += (uint64_t)pb_find_field(data, size, data[0] & 0x1f, &f);
	walk_packed(data, size);
	return 0;
}
