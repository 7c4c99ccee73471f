/*
 * The out-of-line half of the protobuf wire reader: multi-byte varints, the
 * error exit of pb_next, packed-field setup and field lookup. The hot loop
 * (pb_next, pb_read_varint's one-byte case, pb_packed_next) is inline in
 * pb.h so decoders in the trace processor compile to straight-line code.
 */
#include "pb.h"

const uint8_t *pb_read_varint_slow(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	if (end - p >= PB_VARINT_MAX_LEN) {
		/* Room for the longest varint: no bounds checks, unrolled
		 * into constant shifts. */
#pragma GCC unroll 10
		for (unsigned i = 0; i < PB_VARINT_MAX_LEN; i++) {
			uint64_t b = p[i];
			v |= (b & 0x7f) << (7 * i);
			if (b < 0x80) {
				*out = v;
				return p + i + 1;
			}
		}
		return NULL;
	}
	for (unsigned i = 0; i < PB_VARINT_MAX_LEN; i++) {
		if (p >= end)
			return NULL;
		uint8_t b = *p++;
		/* At i == 9 the shift is 63: only the lowest bit survives, the
		 * rest of a 10th byte is ignored, as protobuf does. */
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			*out = v;
			return p;
		}
	}
	return NULL;
}

bool pb_reader_fail(struct pb_reader *r, const uint8_t *at, int error)
{
	r->error = error;
	r->error_off = (size_t)(at - r->start);
	r->p = r->end;
	return false;
}

const char *pb_strerror(int error)
{
	switch (error) {
	case PB_OK:
		return "ok";
	case PB_ERR_VARINT:
		return "varint truncated or longer than 10 bytes";
	case PB_ERR_FIELD_ID:
		return "invalid field number";
	case PB_ERR_WIRE:
		return "invalid wire type";
	case PB_ERR_GROUP:
		return "groups are not supported";
	case PB_ERR_TRUNCATED:
		return "field extends past the end of the message";
	case PB_ERR_PACKED:
		return "packed payload is not a whole number of elements";
	}
	return "unknown protobuf error";
}

int pb_find_field(const void *buf, size_t len, uint32_t id, struct pb_field *f)
{
	struct pb_reader r;
	struct pb_field cur;
	int found = 0;
	pb_reader_init(&r, buf, len);
	while (pb_next(&r, &cur)) {
		if (cur.id == id) {
			*f = cur;
			found = 1;
		}
	}
	if (r.error)
		return -r.error;
	return found;
}

void pb_packed_init(struct pb_packed *it, const uint8_t *data, size_t len, enum pb_wire elem_wire)
{
	it->p = data;
	it->end = len ? data + len : data;
	it->wire = (uint8_t)elem_wire;
	it->error = PB_OK;
	switch (elem_wire) {
	case PB_WIRE_VARINT:
		return;
	case PB_WIRE_FIXED32:
		if (len % 4)
			break;
		return;
	case PB_WIRE_FIXED64:
		if (len % 8)
			break;
		return;
	default:
		it->error = PB_ERR_WIRE;
		it->p = it->end;
		return;
	}
	it->error = PB_ERR_PACKED;
	it->p = it->end;
}
