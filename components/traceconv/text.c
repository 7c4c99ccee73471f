/*
 * text and decompress_packets: Perfetto's `traceconv text` and
 * `decompress_packets`, read straight from the trace's packets (no trace
 * processor), streaming:
 *
 *   Trace := ( packet (1) TracePacket )*
 *
 * text prints each packet in protobuf text format through our descriptors
 * (components/protos, the same printer as trace_config_pbtxt):
 *
 *   packet {
 *     timestamp: 12
 *     ...
 *   }
 *
 * A packet's compressed_packets (50, zlib) are inflated and printed as
 * `compressed_packets {` with the inner packets indented; fields our subset
 * of Perfetto's protos does not name print as `NUMBER: value` (with
 * --skip-unknown they are left out). decompress_packets writes the trace
 * with every compressed_packets packet replaced by the packets it holds.
 * Input that is not a Perfetto protobuf trace is an error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "base.h"
#include "pb.h"
#include "pb_fields.h"
#include "protos.h"
#include "traceconv_int.h"

#define READ_CHUNK ((size_t)1 << 20)
#define MAX_PACKET ((size_t)256 << 20)
#define MAX_INFLATED ((size_t)512 << 20)

typedef int (*packet_fn)(void *ctx, const uint8_t *p, size_t n);

/* Call fn for every packet of the Trace read from fd. */
static int each_packet(int fd, const char *name, packet_fn fn, void *ctx)
{
	VEC(uint8_t) buf = VEC_INIT;
	size_t off = 0;
	int rc = 0;
	bool eof = false;
	while (rc == 0) {
		/* Whole fields at buf[off...). */
		for (;;) {
			const uint8_t *p = buf.data + off, *end = buf.data + buf.len;
			uint64_t tag, size;
			const uint8_t *q = p < end ? pb_read_varint(p, end, &tag) : NULL;
			if (!q && (size_t)(end - p) >= PB_VARINT_MAX_LEN)
				goto corrupt;
			const uint8_t *b = q ? pb_read_varint(q, end, &size) : NULL;
			if (q && (tag & 7) != PB_WIRE_LEN)
				goto corrupt;
			if (q && !b && (size_t)(end - q) >= PB_VARINT_MAX_LEN)
				goto corrupt;
			if (!b)
				break;
			if (size > MAX_PACKET)
				goto corrupt;
			if ((size_t)(end - b) < size)
				break;
			if (tag >> 3 == PB_F_Trace_packet && (rc = fn(ctx, b, (size_t)size)) != 0)
				goto out;
			off = (size_t)(b - buf.data) + (size_t)size;
		}
		if (eof) {
			if (off != buf.len)
				goto corrupt;
			break;
		}
		if (off) {
			memmove(buf.data, buf.data + off, buf.len - off);
			buf.len -= off;
			off = 0;
		}
		vec_reserve(&buf, READ_CHUNK);
		ssize_t n = tb_read_all(fd, buf.data + buf.len, READ_CHUNK);
		if (n < 0) {
			fprintf(stderr, "traceconv: cannot read '%s': %s\n", name,
			        strerror((int)-n));
			rc = -1;
			break;
		}
		if (buf.len == 0 && n >= 2 && buf.data[0] == 0x1f && buf.data[1] == 0x8b) {
			fprintf(stderr, "traceconv: '%s' is gzip'd: gunzip it first\n", name);
			rc = -1;
			break;
		}
		buf.len += (size_t)n;
		eof = n == 0;
	}
	goto out;
corrupt:
	fprintf(stderr,
	        "traceconv: '%s' is not a Perfetto protobuf trace (or is cut short): "
	        "failed to tokenize trace packet\n",
	        name);
	rc = -1;
out:
	vec_release(&buf);
	return rc;
}

/* Inflate a zlib stream of at most MAX_INFLATED bytes. */
static int inflate_all(const uint8_t *p, size_t n, uint8_t **out, size_t *out_len)
{
	z_stream z = {0};
	VEC(uint8_t) o = VEC_INIT;
	if (inflateInit(&z) != Z_OK)
		return -1;
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	int zr = Z_OK;
	while (zr == Z_OK) {
		if (o.len >= MAX_INFLATED)
			break;
		vec_reserve(&o, 1 << 16);
		z.next_out = o.data + o.len;
		z.avail_out = (uInt)(o.cap - o.len);
		zr = inflate(&z, Z_NO_FLUSH);
		o.len = o.cap - z.avail_out;
	}
	inflateEnd(&z);
	if (zr != Z_STREAM_END) {
		vec_release(&o);
		return -1;
	}
	*out = o.data;
	*out_len = o.len;
	return 0;
}

/* ---- text -------------------------------------------------------------------- */

struct text_ctx {
	FILE *out;
	bool skip_unknown;
	int rc;
};

/* Print the text of packet p (indented by indent spaces), without its
 * closing newline. */
static void print_packet(struct text_ctx *t, const uint8_t *p, size_t n, int indent)
{
	size_t len;
	char *s = protos_binary_to_text(&perfetto__protos__trace_packet__descriptor, p, n, &len);
	bool first = true;
	for (char *line = s; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t ll = nl ? (size_t)(nl - line) : strlen(line);
		size_t lead = strspn(line, " ");
		/* A field our descriptors do not name: "NUMBER: value". */
		bool unknown = lead < ll && line[lead] >= '0' && line[lead] <= '9';
		if (!(unknown && t->skip_unknown)) {
			if (!first)
				fputc('\n', t->out);
			fprintf(t->out, "%*s%.*s", indent, "", (int)ll, line);
			first = false;
		}
		line = nl ? nl + 1 : line + ll;
	}
	tb_free(s);
}

static int text_packet(void *ctx, const uint8_t *p, size_t n)
{
	struct text_ctx *t = ctx;
	struct pb_field f = {0};
	if (pb_find_field(p, n, PB_F_TracePacket_zstd_compressed_packets, &f) >= 1 &&
	    f.wire == PB_WIRE_LEN) {
		fputs(
		    "zstd_compressed_packets {\nCannot decode compressed packets: the codec is not "
		    "enabled in the build config}\n",
		    t->out);
		return 0;
	}
	if (pb_find_field(p, n, PB_F_TracePacket_compressed_packets, &f) >= 1 &&
	    f.wire == PB_WIRE_LEN) {
		uint8_t *in;
		size_t in_len;
		fputs("compressed_packets {\n", t->out);
		if (inflate_all(f.data, f.len, &in, &in_len) < 0) {
			fputs("  # Failed to decompress: corrupt or truncated packets\n", t->out);
		} else {
			struct pb_reader r;
			struct pb_field g;
			pb_reader_init(&r, in, in_len);
			while (pb_next(&r, &g)) {
				if (g.id != PB_F_Trace_packet || g.wire != PB_WIRE_LEN)
					continue;
				fputs("  packet {\n", t->out);
				print_packet(t, g.data, g.len, 4);
				fputs("\n  }\n", t->out);
			}
			tb_free(in);
		}
		fputs("}\n", t->out);
		return 0;
	}
	fputs("packet {\n", t->out);
	print_packet(t, p, n, 2);
	fputs("\n}\n", t->out);
	return ferror(t->out) ? -1 : 0;
}

int traceconv_text(int in_fd, const char *in_name, FILE *out, const struct traceconv_text_opts *o)
{
	struct text_ctx t = {.out = out, .skip_unknown = o->skip_unknown};
	int rc = each_packet(in_fd, in_name, text_packet, &t);
	if (rc == 0 && ferror(out)) {
		fprintf(stderr, "traceconv: cannot write the output: %s\n", strerror(errno));
		rc = -1;
	}
	return rc;
}

/* ---- decompress_packets -------------------------------------------------------- */

static void put_packet(FILE *out, const uint8_t *p, size_t n)
{
	uint8_t hdr[1 + PB_VARINT_MAX_LEN];
	hdr[0] = PB_F_Trace_packet << 3 | PB_WIRE_LEN;
	size_t h = (size_t)(pb_encode_varint(hdr + 1, n) - hdr);
	fwrite(hdr, 1, h, out);
	fwrite(p, 1, n, out);
}

static int unpack_packet(void *ctx, const uint8_t *p, size_t n)
{
	FILE *out = ctx;
	struct pb_field f = {0};
	if (pb_find_field(p, n, PB_F_TracePacket_compressed_packets, &f) >= 1 &&
	    f.wire == PB_WIRE_LEN) {
		uint8_t *in;
		size_t in_len;
		if (inflate_all(f.data, f.len, &in, &in_len) < 0) {
			fprintf(stderr,
			        "traceconv: cannot decompress a packet: corrupt or truncated\n");
			return -1;
		}
		struct pb_reader r;
		struct pb_field g;
		pb_reader_init(&r, in, in_len);
		while (pb_next(&r, &g))
			if (g.id == PB_F_Trace_packet && g.wire == PB_WIRE_LEN)
				put_packet(out, g.data, g.len);
		tb_free(in);
		return 0;
	}
	if (pb_find_field(p, n, PB_F_TracePacket_zstd_compressed_packets, &f) >= 1 &&
	    f.wire == PB_WIRE_LEN) {
		fprintf(stderr,
		        "traceconv: zstd-compressed packets cannot be decompressed: the codec "
		        "is not in this build\n");
		return -1;
	}
	put_packet(out, p, n);
	return ferror(out) ? -1 : 0;
}

int traceconv_decompress_packets(int in_fd, const char *in_name, FILE *out)
{
	return each_packet(in_fd, in_name, unpack_packet, out);
}
