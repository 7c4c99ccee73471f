/*
 * Binary protobuf to text format, through the generated descriptors: the
 * rendering Perfetto's trace processor stores as `trace_config_pbtxt`.
 *
 * Layout, one field a line in wire order, two spaces of indent a level:
 *
 *   name: 12            integers in decimal, bools true/false, enums by name
 *   name: "a\"b"        strings and bytes quoted, C escapes, other bytes \ooo
 *   sub {               a message field; an empty one is "sub {\n}"
 *     x: 1.500000       floats and doubles as printf %f
 *   }
 *   7: 42               a field the descriptor lacks: number and raw value
 *   7: 0x0000002a       (fixed32 as 0x%08x, fixed64 as 0x%016x, bytes quoted)
 *
 * A packed repeated field prints one `name: value` line per element. An
 * enum value without a name prints as `number: value`. Bytes that do not
 * parse as fields end the message with a `# Extra bytes: "..."` line.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "pb.h"
#include "protos.h"

struct printer {
	VEC(char) out;
	unsigned depth;
};

static void put(struct printer *pr, const char *s, size_t n)
{
	vec_reserve(&pr->out, n);
	memcpy(pr->out.data + pr->out.len, s, n);
	pr->out.len += n;
}

static void puts_(struct printer *pr, const char *s)
{
	put(pr, s, strlen(s));
}

static void putf(struct printer *pr, const char *fmt, ...) TB_PRINTF(2, 3);
static void putf(struct printer *pr, const char *fmt, ...)
{
	char buf[64];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > 0)
		put(pr, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1);
}

/* A line break and the indent of the current depth. */
static void newline(struct printer *pr)
{
	puts_(pr, "\n");
	for (unsigned i = 0; i < pr->depth; i++)
		puts_(pr, "  ");
}

static void quoted(struct printer *pr, const uint8_t *p, size_t n)
{
	static const char esc_from[] = "\a\b\f\n\r\t\v\\'\"";
	static const char esc_to[] = "abfnrtv\\'\"";
	puts_(pr, "\"");
	for (size_t i = 0; i < n; i++) {
		const char *e = p[i] ? memchr(esc_from, p[i], sizeof esc_from - 1) : NULL;
		if (e) {
			char two[2] = {'\\', esc_to[e - esc_from]};
			put(pr, two, 2);
		} else if (p[i] >= 0x20 && p[i] <= 0x7e) {
			put(pr, (const char *)&p[i], 1);
		} else {
			putf(pr, "\\%o%o%o", (p[i] >> 6) & 3, (p[i] >> 3) & 7, p[i] & 7);
		}
	}
	puts_(pr, "\"");
}

static void enum_value(struct printer *pr, const ProtobufCFieldDescriptor *fd, int32_t v)
{
	const ProtobufCEnumValue *ev =
	    fd->descriptor ? protobuf_c_enum_descriptor_get_value(fd->descriptor, v) : NULL;
	if (ev)
		putf(pr, "%s: %s", fd->name, ev->name);
	else
		putf(pr, "%u: %" PRId32, fd->id, v);
}

/* One scalar of type fd->type from its raw wire value; false if the type
 * does not go with that wire type. */
static bool scalar(struct printer *pr, const ProtobufCFieldDescriptor *fd, uint8_t wire, uint64_t v)
{
	ProtobufCType t = fd->type;
	if (wire == PB_WIRE_VARINT) {
		if (t == PROTOBUF_C_TYPE_ENUM) {
			enum_value(pr, fd, (int32_t)v);
			return true;
		}
		if (t == PROTOBUF_C_TYPE_BOOL) {
			putf(pr, "%s: %s", fd->name, v ? "true" : "false");
			return true;
		}
		if (t != PROTOBUF_C_TYPE_INT32 && t != PROTOBUF_C_TYPE_SINT32 &&
		    t != PROTOBUF_C_TYPE_UINT32 && t != PROTOBUF_C_TYPE_INT64 &&
		    t != PROTOBUF_C_TYPE_SINT64 && t != PROTOBUF_C_TYPE_UINT64)
			return false;
	} else if (wire == PB_WIRE_FIXED32) {
		if (t != PROTOBUF_C_TYPE_SFIXED32 && t != PROTOBUF_C_TYPE_FIXED32 &&
		    t != PROTOBUF_C_TYPE_FLOAT)
			return false;
	} else if (wire == PB_WIRE_FIXED64) {
		if (t != PROTOBUF_C_TYPE_SFIXED64 && t != PROTOBUF_C_TYPE_FIXED64 &&
		    t != PROTOBUF_C_TYPE_DOUBLE)
			return false;
	} else {
		return false;
	}
	putf(pr, "%s: ", fd->name);
	switch (t) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		putf(pr, "%" PRId32, (int32_t)v);
		break;
	case PROTOBUF_C_TYPE_SINT32:
		putf(pr, "%" PRId32, pb_zigzag_dec32((uint32_t)v));
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		putf(pr, "%" PRIu32, (uint32_t)v);
		break;
	case PROTOBUF_C_TYPE_SINT64:
		putf(pr, "%" PRId64, pb_zigzag_dec64(v));
		break;
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_FIXED64:
		putf(pr, "%" PRIu64, v);
		break;
	case PROTOBUF_C_TYPE_FLOAT: {
		uint32_t u = (uint32_t)v;
		float x;
		memcpy(&x, &u, sizeof x);
		putf(pr, "%f", (double)x);
		break;
	}
	case PROTOBUF_C_TYPE_DOUBLE: {
		double x;
		memcpy(&x, &v, sizeof x);
		putf(pr, "%f", x);
		break;
	}
	default: /* INT64, SFIXED64 */
		putf(pr, "%" PRId64, (int64_t)v);
		break;
	}
	return true;
}

static void unknown(struct printer *pr, const struct pb_field *f)
{
	if (f->wire == PB_WIRE_VARINT)
		putf(pr, "%u: %" PRId64, f->id, (int64_t)f->val);
	else if (f->wire == PB_WIRE_FIXED32)
		putf(pr, "%u: 0x%08" PRIx32, f->id, (uint32_t)f->val);
	else if (f->wire == PB_WIRE_FIXED64)
		putf(pr, "%u: 0x%016" PRIx64, f->id, f->val);
	else
		putf(pr, "%u: ", f->id), quoted(pr, f->data, f->len);
}

/* The element wire type of a packable scalar type, or -1. */
static int packed_wire(ProtobufCType t)
{
	switch (t) {
	case PROTOBUF_C_TYPE_DOUBLE:
	case PROTOBUF_C_TYPE_FIXED64:
	case PROTOBUF_C_TYPE_SFIXED64:
		return PB_WIRE_FIXED64;
	case PROTOBUF_C_TYPE_FLOAT:
	case PROTOBUF_C_TYPE_FIXED32:
	case PROTOBUF_C_TYPE_SFIXED32:
		return PB_WIRE_FIXED32;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_UINT64:
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_ENUM:
		return PB_WIRE_VARINT;
	default:
		return -1;
	}
}

static void message(struct printer *pr, const ProtobufCMessageDescriptor *d, const uint8_t *p,
                    size_t n);

static void packed(struct printer *pr, const ProtobufCFieldDescriptor *fd, int wire,
                   const struct pb_field *f)
{
	struct pb_packed it;
	uint64_t v;
	bool first = true;
	pb_packed_init(&it, f->data, f->len, (enum pb_wire)wire);
	while (pb_packed_next(&it, &v)) {
		if (!first)
			newline(pr);
		scalar(pr, fd, (uint8_t)wire, v);
		first = false;
	}
	if (it.error) {
		if (!first)
			newline(pr);
		putf(pr, "# Packed decoding failure for field %s\n", fd->name);
	}
}

static void field(struct printer *pr, const ProtobufCMessageDescriptor *d, const struct pb_field *f)
{
	const ProtobufCFieldDescriptor *fd =
	    d ? protobuf_c_message_descriptor_get_field(d, f->id) : NULL;
	if (!fd) {
		unknown(pr, f);
		return;
	}
	if (f->wire != PB_WIRE_LEN) {
		if (!scalar(pr, fd, f->wire, f->val))
			unknown(pr, f);
		return;
	}
	int pw = packed_wire(fd->type);
	if (fd->type == PROTOBUF_C_TYPE_STRING || fd->type == PROTOBUF_C_TYPE_BYTES) {
		putf(pr, "%s: ", fd->name);
		quoted(pr, f->data, f->len);
	} else if (fd->type == PROTOBUF_C_TYPE_MESSAGE && pr->depth < PROTOS_TEXT_MAX_DEPTH) {
		putf(pr, "%s {", fd->name);
		pr->depth++;
		message(pr, fd->descriptor, f->data, f->len);
		pr->depth--;
		newline(pr);
		puts_(pr, "}");
	} else if (pw >= 0) {
		packed(pr, fd, pw, f);
	} else {
		unknown(pr, f);
	}
}

static void message(struct printer *pr, const ProtobufCMessageDescriptor *d, const uint8_t *p,
                    size_t n)
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (pr->out.len)
			newline(pr);
		field(pr, d, &f);
	}
	if (pb_reader_error(&r)) {
		if (pr->out.len)
			newline(pr);
		puts_(pr, "# Extra bytes: ");
		quoted(pr, p + r.error_off, n - r.error_off);
		puts_(pr, "\n");
	}
}

char *protos_binary_to_text(const ProtobufCMessageDescriptor *root, const uint8_t *p, size_t n,
                            size_t *out_len)
{
	struct printer pr = {0};
	message(&pr, root, p, n);
	vec_push(&pr.out, '\0');
	*out_len = pr.out.len - 1;
	return pr.out.data;
}
