/*
 * Tests for components/traced/trace_buffer.c on its own (no sockets): chunks
 * committed in any order come back in chunk_id order per sequence, across a
 * chunk_id wrap, with evictions and re-commits in between, and a sequence
 * of chunk ids no honest producer sends does not break the buffer; and
 * records of every size reuse the buffer's memory.
 */
#include <stdlib.h>

#include "pb.h"
#include "pb_fields.h"
#include "test.h"
#include "traced_int.h"

/* One chunk holding one whole packet {timestamp: ts}. */
static int put(struct traced_buffer *b, uint16_t producer, uint16_t writer, uint32_t chunk_id,
               uint64_t ts)
{
	struct tracing_chunk_header h = {
	    .chunk_id = chunk_id, .writer_id = writer, .packet_count = 1};
	uint8_t payload[32], *q = payload + 4;
	size_t n;
	*q++ = 8 << 3;
	q = pb_encode_varint(q, ts);
	n = (size_t)(q - payload) - 4;
	payload[0] = (uint8_t)(n | 0x80);
	payload[1] = 0x80;
	payload[2] = 0x80;
	payload[3] = 0;
	return traced_buffer_copy_chunk(b, producer, 0, 1, &h, payload, n + 4);
}

struct seen {
	uint64_t ts[70000];
	size_t n;
};

static int on_packet(void *ctx, const uint8_t *data, size_t len, const uint8_t *trailer,
                     size_t trailer_len)
{
	struct seen *s = ctx;
	struct pb_field f;
	if (pb_find_field(data, len, PB_F_TracePacket_timestamp, &f) == 1 &&
	    s->n < TB_ARRAY_SIZE(s->ts))
		s->ts[s->n++] = f.val;
	return 0;
}

static uint32_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (uint32_t)(*x >> 32);
}

/* ids base + perm[i] for a permutation of 0..n-1 (reverse, zigzag or
 * shuffled), read back: timestamps come out 0..n-1. */
static int order_roundtrip(uint32_t base, uint32_t n, int kind)
{
	uint32_t seq_id = 2;
	uint64_t invalid = 0, x = 88172645463325252ull;
	struct traced_buffer *b = traced_buffer_new(1, 64u << 20, true, &seq_id);
	struct seen *s = tb_calloc(1, sizeof *s);
	uint32_t *perm = tb_calloc(n, sizeof *perm);
	int ok = 1;
	for (uint32_t i = 0; i < n; i++)
		perm[i] = kind == 0 ? n - 1 - i : kind == 1 ? (i % 2 ? n - 1 - i / 2 : i / 2) : i;
	if (kind == 2)
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t j = rnd(&x) % (i + 1), t = perm[i];
			perm[i] = perm[j];
			perm[j] = t;
		}
	for (uint32_t i = 0; i < n; i++)
		ok &= put(b, 1, 1, base + perm[i], perm[i]) == 0;
	traced_buffer_read(b, on_packet, s, &invalid);
	ok &= s->n == n && invalid == 0;
	for (uint32_t i = 0; ok && i < n; i++)
		ok &= s->ts[i] == i;
	if (!ok)
		printf("  kind %d base %u: %zu packets read, invalid %" PRIu64 "\n", kind, base,
		       s->n, invalid);
	tb_free(perm);
	tb_free(s);
	traced_buffer_free(b);
	return ok;
}

TEST(traced_buffer_any_commit_order)
{
	CHECK(order_roundtrip(0, 20000, 0));          /* decreasing */
	CHECK(order_roundtrip(0, 20000, 1));          /* zigzag: always the middle */
	CHECK(order_roundtrip(0, 20000, 2));          /* shuffled */
	CHECK(order_roundtrip(0xFFFFF000u, 8192, 0)); /* across the chunk_id wrap */
	CHECK(order_roundtrip(0xFFFFF000u, 8192, 2));
}

/* A small ring buffer: shuffled commits, re-commits and evictions in
 * between, then a read: whatever is left comes out in increasing order. */
TEST(traced_buffer_order_with_evictions)
{
	uint32_t seq_id = 2;
	uint64_t invalid = 0, x = 2463534242ull;
	struct traced_buffer *b = traced_buffer_new(1, 64 * 1024, false, &seq_id);
	struct seen *s = tb_calloc(1, sizeof *s);
	for (int i = 0; i < 30000; i++) {
		uint32_t id = rnd(&x) % 50000;
		put(b, 1, (uint16_t)(1 + id % 3), id, id);
	}
	traced_buffer_read(b, on_packet, s, &invalid);
	CHECK(s->n > 100);
	CHECK(traced_buffer_stats(b)->chunks_overwritten > 0);
	CHECK(traced_buffer_stats(b)->chunks_rewritten > 0);
	/* Three sequences (writers), each increasing. */
	{
		size_t runs = 1;
		for (size_t i = 1; i < s->n; i++)
			runs += s->ts[i] < s->ts[i - 1];
		CHECK(runs <= 3);
	}
	tb_free(s);
	traced_buffer_free(b);
}

/* Chunk ids spread over the whole 32-bit space (no consistent wrap-aware
 * order exists): the buffer stays intact, every chunk is read or evicted
 * exactly once. */
TEST(traced_buffer_hostile_chunk_ids)
{
	uint32_t seq_id = 2;
	uint64_t invalid = 0, x = 1234567ull;
	struct traced_buffer *b = traced_buffer_new(1, 256 * 1024, false, &seq_id);
	struct seen *s = tb_calloc(1, sizeof *s);
	const struct traced_buffer_stats *st = traced_buffer_stats(b);
	for (int i = 0; i < 20000; i++)
		put(b, 1, 1, rnd(&x), (uint64_t)i);
	traced_buffer_read(b, on_packet, s, &invalid);
	CHECK_UEQ(s->n + st->chunks_overwritten + st->chunks_rewritten, 20000);
	tb_free(s);
	traced_buffer_free(b);
}

/* One chunk of one packet {timestamp: ts, field 99: pad bytes}: about
 * pad + 16 bytes of payload. */
static int put_big(struct traced_buffer *b, uint32_t chunk_id, uint64_t ts, size_t pad)
{
	struct tracing_chunk_header h = {.chunk_id = chunk_id, .writer_id = 1, .packet_count = 1};
	static uint8_t payload[300000];
	uint8_t *q = payload + 4;
	*q++ = 8 << 3;
	q = pb_encode_varint(q, ts);
	q = pb_encode_varint(q, 99u << 3 | 2);
	q = pb_encode_varint(q, pad);
	memset(q, 0x5a, pad);
	q += pad;
	size_t n = (size_t)(q - payload) - 4;
	payload[0] = (uint8_t)(n | 0x80);
	payload[1] = (uint8_t)(n >> 7 | 0x80);
	payload[2] = (uint8_t)(n >> 14 | 0x80);
	payload[3] = (uint8_t)(n >> 21);
	return traced_buffer_copy_chunk(b, 1, 0, 1, &h, payload, n + 4);
}

/* Rounds of commits overwriting the oldest, then a read: every packet is
 * read or overwritten exactly once, in order. With chunks of one size (a
 * producer's full SMB chunks) the memory the buffer holds for its records
 * stops growing after the first round; with sizes from 100 bytes to 32 KiB
 * it stays within its bound (the size plus a quarter plus one slab, at most
 * 2 MiB). A buffer of 32 MiB or more holds its records in 2 MiB slabs (huge
 * pages where the kernel has them), so its memory is a multiple of 2 MiB. */
static void reuse_rounds(size_t size, int chunks_a_round, bool mixed)
{
	uint32_t seq_id = 2, id = 0;
	uint64_t invalid = 0, x = 88172645463325252ull;
	size_t after_first = 0;
	struct traced_buffer *b = traced_buffer_new(1, size, false, &seq_id);
	const struct traced_buffer_stats *st = traced_buffer_stats(b);
	struct seen *s = tb_calloc(1, sizeof *s);
	for (int round = 0; round < 20; round++) {
		for (int i = 0; i < chunks_a_round; i++, id++) {
			size_t pad = !mixed || rnd(&x) % 2 ? 32000 : 100 + rnd(&x) % 20000;
			CHECK(put_big(b, id, id, pad) == 0);
		}
		traced_buffer_read(b, on_packet, s, &invalid);
		if (round == 0)
			after_first = traced_buffer_mem(b);
		if (!mixed)
			CHECK_UEQ(traced_buffer_mem(b), after_first);
		CHECK(traced_buffer_mem(b) <= size + size / 4 + (2u << 20));
		if (size >= (32u << 20))
			CHECK_UEQ(traced_buffer_mem(b) % (2u << 20), 0);
	}
	CHECK(after_first > 0);
	CHECK_UEQ(s->n + st->chunks_overwritten, id);
	for (size_t i = 1; i < s->n; i++)
		CHECK(s->ts[i] > s->ts[i - 1]);
	CHECK_UEQ(invalid, 0);
	tb_free(s);
	traced_buffer_free(b);
}

TEST(traced_buffer_reuses_record_memory)
{
	reuse_rounds(512 * 1024, 200, false);
	reuse_rounds(512 * 1024, 200, true);
	reuse_rounds(32u << 20, 1400, false);
	reuse_rounds(32u << 20, 1400, true);
}

/* Records larger than a slab (a 1 MiB buffer makes 64 KiB slabs): each
 * gets a block that holds it, and reads back whole. */
TEST(traced_buffer_record_larger_than_slab)
{
	uint32_t seq_id = 2;
	uint64_t invalid = 0;
	struct traced_buffer *b = traced_buffer_new(1, 1u << 20, false, &seq_id);
	struct seen *s = tb_calloc(1, sizeof *s);
	for (uint32_t id = 0; id < 3; id++)
		CHECK(put_big(b, id, id, 200000) == 0);
	traced_buffer_read(b, on_packet, s, &invalid);
	CHECK_UEQ(s->n, 3);
	CHECK_UEQ(invalid, 0);
	tb_free(s);
	traced_buffer_free(b);
}
