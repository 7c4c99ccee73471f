/*
 * Splits a serialized `Trace` into TracePackets:
 *
 *   +------+------------+----------------------+------+-----
 *   | 0x0a | varint len | TracePacket (len B)  | 0x0a | ...
 *   +------+------------+----------------------+------+-----
 *
 * Input arrives in chunks of any size. Complete packets are handed to
 * tp_proto_packet() straight from the caller's buffer; only an incomplete tail
 * is copied and carried to the next chunk. Anything but field 1 length-
 * delimited, or a length over PROTO_MAX_PACKET, is not a trace: it counts
 * proto_tokenizer_failure once and the rest of the stream is ignored.
 */
#include "proto_int.h"
#include "../../sorter/sorter.h"

#include <string.h>

/* Frame the record at p[0, n): 1 and its header/payload sizes when the
 * header is complete, 0 when more bytes are needed, -1 when it is bogus. */
static inline int frame(const uint8_t *p, size_t n, size_t *hdr, size_t *len)
{
	if (TB_LIKELY(n >= 2 && p[0] == 0x0a && p[1] < 0x80)) {
		*hdr = 2;
		*len = p[1];
		return 1;
	}
	if (n == 0)
		return 0;
	if (p[0] != 0x0a)
		return -1;
	uint64_t v;
	const uint8_t *q = pb_read_varint(p + 1, p + n, &v);
	if (!q)
		return n >= 1 + PB_VARINT_MAX_LEN ? -1 : 0;
	if (v > PROTO_MAX_PACKET)
		return -1;
	*hdr = (size_t)(q - p);
	*len = (size_t)v;
	return 1;
}

/* After a top-level packet: let the sorter dispatch what can no longer be
 * preceded, unless the user asked for a full sort. */
static inline void maybe_extract(struct proto_importer *im)
{
	struct tp *tp = im->tp;
	if (im->depth == 0 && !tp->cfg.full_sort && tp_sorter_want_extract(tp->sorter))
		tp_sorter_extract(tp->sorter, tp, tp_proto_on_sorted, im->root);
}

static void fail(struct proto_importer *im)
{
	if (!im->failed)
		tp_stat_inc(im->tp, TP_STAT_proto_tokenizer_failure);
	im->failed = true;
	vec_clear(&im->tail);
}

/* Complete the carried tail from p; returns the bytes of p consumed. */
static size_t finish_tail(struct proto_importer *im, const uint8_t *p, size_t n)
{
	size_t used = 0, hdr, len;
	for (;;) {
		int rc = frame(im->tail.data, im->tail.len, &hdr, &len);
		if (rc < 0) {
			fail(im);
			return n;
		}
		if (rc > 0)
			break;
		if (used == n)
			return used;
		vec_push(&im->tail, p[used]);
		used++;
	}
	size_t need = hdr + len - im->tail.len;
	size_t take = n - used < need ? n - used : need;
	vec_reserve(&im->tail, take);
	memcpy(im->tail.data + im->tail.len, p + used, take);
	im->tail.len += take;
	used += take;
	if (im->tail.len == hdr + len) {
		/* tp_proto_packet may recurse (compressed packets) but never into
		 * the streaming tail, so the buffer stays put. */
		tp_proto_packet(im, im->tail.data + hdr, len);
		vec_clear(&im->tail);
		maybe_extract(im);
	}
	return used;
}

void tp_proto_tokenize(struct proto_importer *im, const uint8_t *p, size_t n, bool stream)
{
	if (im->failed)
		return;
	if (stream && im->tail.len) {
		size_t used = finish_tail(im, p, n);
		p += used;
		n -= used;
		if (im->failed || im->tail.len)
			return;
	}
	while (n) {
		size_t hdr, len;
		int rc = frame(p, n, &hdr, &len);
		if (rc < 0) {
			fail(im);
			return;
		}
		if (rc == 0 || hdr + len > n) {
			if (!stream) {
				fail(im);
				return;
			}
			vec_reserve(&im->tail, n);
			memcpy(im->tail.data, p, n);
			im->tail.len = n;
			return;
		}
		tp_proto_packet(im, p + hdr, len);
		maybe_extract(im);
		p += hdr + len;
		n -= hdr + len;
	}
}

void tp_proto_tokenize_eof(struct proto_importer *im)
{
	if (im->tail.len && !im->failed)
		fail(im);
	vec_release(&im->tail);
}
