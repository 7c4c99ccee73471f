/*
 * trace_inject: the trace modifier of Perfetto's diff-test runner
 * (TraceInjector), for tests/tp/run.sh. Built by build.sh into out/tools/.
 *
 *   trace_inject IN OUT FIELDS NAME=VALUE...
 *
 * Copies the binary Trace IN to OUT, setting the integer TracePacket field
 * NAME to VALUE (e.g. machine_id=1001) in every packet that has one of the
 * comma-separated TracePacket fields FIELDS (e.g. ftrace_events,cpu_info),
 * as Perfetto's runner does before it runs such a test. Field names are
 * resolved through our TracePacket descriptor. The value is appended to
 * the packet as one more occurrence of the field: for a scalar the last
 * one wins, so a field the packet had is replaced. Exits 0, or 1 with one
 * line on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "pb.h"
#include "pb_fields.h"
#include "protos.h"

#define MAX_FIELDS 32

VEC_DEFINE(bytes, uint8_t);

static const ProtobufCMessageDescriptor *packet_desc = &perfetto__protos__trace_packet__descriptor;

static int die(const char *what, const char *arg)
{
	fprintf(stderr, "trace_inject: %s '%s'\n", what, arg);
	return 1;
}

/* Append the varint v to the buffer. */
static void put_varint(struct bytes *out, uint64_t v)
{
	do {
		uint8_t b = v & 0x7f;
		v >>= 7;
		vec_push(out, (uint8_t)(b | (v ? 0x80 : 0)));
	} while (v);
}

static void put_bytes(struct bytes *out, const void *p, size_t n)
{
	vec_reserve(out, n);
	memcpy(out->data + out->len, p, n);
	out->len += n;
}

/* Does packet p[0, n) have one of the fields ids[0, nids)? */
static bool has_field(const uint8_t *p, size_t n, const uint32_t *ids, size_t nids)
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		for (size_t i = 0; i < nids; i++)
			if (f.id == ids[i])
				return true;
	return false;
}

int main(int argc, char **argv)
{
	uint32_t ids[MAX_FIELDS], set_ids[MAX_FIELDS];
	uint64_t set_vals[MAX_FIELDS];
	size_t nids = 0, nsets = 0;
	if (argc < 5) {
		fprintf(stderr, "usage: trace_inject IN OUT FIELDS NAME=VALUE...\n");
		return 1;
	}
	char *fields = argv[3];
	for (char *tok = fields, *next; tok && *tok; tok = next) {
		next = strchr(tok, ',');
		if (next)
			*next++ = 0;
		const ProtobufCFieldDescriptor *fd =
		    protobuf_c_message_descriptor_get_field_by_name(packet_desc, tok);
		if (!fd || nids == MAX_FIELDS)
			return die("unknown TracePacket field", tok);
		ids[nids++] = fd->id;
	}
	for (int i = 4; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq || nsets == MAX_FIELDS)
			return die("not NAME=VALUE", argv[i]);
		*eq = 0;
		const ProtobufCFieldDescriptor *fd =
		    protobuf_c_message_descriptor_get_field_by_name(packet_desc, argv[i]);
		if (!fd || fd->type == PROTOBUF_C_TYPE_MESSAGE ||
		    fd->type == PROTOBUF_C_TYPE_BYTES || fd->type == PROTOBUF_C_TYPE_STRING)
			return die("not an integer TracePacket field", argv[i]);
		char *end;
		errno = 0;
		long long v = strtoll(eq + 1, &end, 10);
		if (errno || *end || end == eq + 1)
			return die("not an integer", eq + 1);
		set_ids[nsets] = fd->id;
		set_vals[nsets++] = (uint64_t)v;
	}

	FILE *in = fopen(argv[1], "rb");
	if (!in)
		return die("cannot open", argv[1]);
	struct bytes src = VEC_INIT, out = VEC_INIT, pkt = VEC_INIT;
	uint8_t buf[65536];
	size_t got;
	while ((got = fread(buf, 1, sizeof buf, in)) > 0)
		put_bytes(&src, buf, got);
	fclose(in);

	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, src.data, src.len);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_Trace_packet || f.wire != PB_WIRE_LEN)
			return die("not a Trace", argv[1]);
		vec_clear(&pkt);
		put_bytes(&pkt, f.data, f.len);
		if (has_field(f.data, f.len, ids, nids))
			for (size_t i = 0; i < nsets; i++) {
				put_varint(&pkt, (uint64_t)set_ids[i] << 3 | PB_WIRE_VARINT);
				put_varint(&pkt, set_vals[i]);
			}
		put_varint(&out, 1u << 3 | PB_WIRE_LEN);
		put_varint(&out, pkt.len);
		put_bytes(&out, pkt.data, pkt.len);
	}
	if (pb_reader_error(&r))
		return die("not a Trace", argv[1]);

	FILE *o = fopen(argv[2], "wb");
	if (!o || fwrite(out.data, 1, out.len, o) != out.len || fclose(o) != 0)
		return die("cannot write", argv[2]);
	vec_release(&src);
	vec_release(&out);
	vec_release(&pkt);
	return 0;
}
