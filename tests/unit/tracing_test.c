/*
 * Tests for components/tracing: SMB allocation and seals, the page/chunk
 * state machine, the chunk header layout, the trace writer (packing,
 * fragmentation, patches, exhaustion) read back through the service-side
 * chunk reader, and the golden SMB chunk snapshots of real Perfetto v58.2.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ipc.h"
#include "pb.h"
#include "pb_fields.h"
#include "test.h"
#include "tracing.h"

/* ---- helpers ------------------------------------------------------------ */

/* A heap-backed SMB view (the state machine does not care where memory is). */
struct mem_smb {
	uint8_t *mem;
	struct tracing_smb *smb;
};

static int mem_smb_init(struct mem_smb *m, size_t pages, size_t page_size, unsigned layout)
{
	int rc;
	m->mem = tb_calloc(pages, page_size);
	rc = tracing_smb_wrap(m->mem, pages * page_size, page_size, &m->smb, NULL);
	if (rc == 0)
		tracing_smb_set_default_layout(m->smb, layout);
	return rc;
}

static void mem_smb_release(struct mem_smb *m)
{
	tracing_smb_free(m->smb);
	tb_free(m->mem);
}

/* The service's copy of committed chunks, indexed by chunk_id (< 64). */
struct svc {
	struct tracing_chunk_header hdr[64];
	uint8_t *payload[64];
	size_t len[64];
	bool have[64];
	unsigned n_read, bad;
	VEC(uint8_t) packets; /* reassembled, each prefixed by a u32 length */
	unsigned n_packets, n_prev_dropped;
};

static void svc_release(struct svc *s)
{
	for (int i = 0; i < 64; i++)
		tb_free(s->payload[i]);
	vec_release(&s->packets);
}

/* Read (and free) every chunk the batch moved, as traced would. */
static int svc_read_batch(struct svc *s, struct tracing_smb *smb, struct tracing_commit_batch *b)
{
	for (size_t i = 0; i < b->chunks.len; i++) {
		struct tracing_chunk_header h;
		uint8_t buf[TRACING_MAX_PAGE_SIZE];
		size_t len;
		int rc = tracing_smb_read_chunk(smb, b->chunks.data[i].page,
		                                b->chunks.data[i].chunk, &h, buf, sizeof buf, &len);
		if (rc || h.chunk_id >= 64)
			return rc ? rc : -ERANGE;
		tb_free(s->payload[h.chunk_id]);
		s->hdr[h.chunk_id] = h;
		s->payload[h.chunk_id] = tb_memdup(buf, len);
		s->len[h.chunk_id] = len;
		s->have[h.chunk_id] = true;
		s->n_read++;
	}
	for (size_t i = 0; i < b->patches.len; i++) {
		const struct tracing_patch *p = &b->patches.data[i];
		if (p->chunk_id >= 64 || !s->have[p->chunk_id] ||
		    tracing_chunk_apply_patch(s->payload[p->chunk_id], s->len[p->chunk_id],
		                              p->offset, p->data, 4))
			s->bad++;
	}
	tracing_commit_batch_clear(b);
	return 0;
}

static int collect_packet(void *ctx, const uint8_t *data, size_t len, bool prev_dropped)
{
	struct svc *s = ctx;
	uint32_t n = (uint32_t)len;
	vec_reserve(&s->packets, len + 4);
	memcpy(s->packets.data + s->packets.len, &n, 4);
	memcpy(s->packets.data + s->packets.len + 4, data, len);
	s->packets.len += len + 4;
	s->n_packets++;
	s->n_prev_dropped += prev_dropped;
	return 0;
}

/* Reassemble chunk ids [0, n) through the reader. */
static int svc_reassemble(struct svc *s, unsigned n, struct tracing_reassembler *r)
{
	tracing_reassembler_init(r);
	for (unsigned i = 0; i < n; i++) {
		int rc;
		if (!s->have[i])
			continue;
		rc = tracing_reassembler_push(r, &s->hdr[i], s->payload[i], s->len[i],
		                              collect_packet, s);
		if (rc)
			return rc;
	}
	return 0;
}

/* k-th reassembled packet (data, len), or NULL. */
static const uint8_t *svc_packet(const struct svc *s, unsigned k, size_t *len)
{
	size_t off = 0;
	for (unsigned i = 0; off + 4 <= s->packets.len; i++) {
		uint32_t n;
		memcpy(&n, s->packets.data + off, 4);
		if (i == k) {
			*len = n;
			return s->packets.data + off + 4;
		}
		off += 4 + n;
	}
	return NULL;
}

/* ---- SMB allocation ----------------------------------------------------- */

TEST(tracing_smb_geometry)
{
	struct tb_err err = {0};
	CHECK_EQ(tracing_smb_check_geometry(256 << 10, 4096, NULL), 0);
	CHECK_EQ(tracing_smb_check_geometry(2 << 20, 32768, NULL), 0);
	CHECK_EQ(tracing_smb_check_geometry(32 << 20, 4096, NULL), 0);
	CHECK_EQ(tracing_smb_check_geometry(256 << 10, 2048, NULL), -EINVAL);
	CHECK_EQ(tracing_smb_check_geometry(256 << 10, 12288, NULL), -EINVAL);
	CHECK_EQ(tracing_smb_check_geometry(256 << 10, 65536, NULL), -EINVAL);
	CHECK_EQ(tracing_smb_check_geometry(0, 4096, NULL), -EINVAL);
	CHECK_EQ(tracing_smb_check_geometry(4096 * 3 + 1, 4096, NULL), -EINVAL);
	CHECK_EQ(tracing_smb_check_geometry((32 << 20) + 4096, 4096, &err), -EINVAL);
	CHECK(strstr(err.msg, "invalid smb size") != NULL);
}

TEST(tracing_smb_create_sealed)
{
	struct tracing_smb *smb = NULL, *smb2 = NULL;
	struct tb_err err = {0};
	int seals, fd2 = -1;
	CHECK_EQ(tracing_smb_create(256 << 10, 4096, &smb, &err), 0);
	CHECK_EQ(tracing_smb_size(smb), 256 << 10);
	CHECK_EQ(tracing_smb_num_pages(smb), 64);
	CHECK_EQ(tracing_smb_page_size(smb), 4096);
	CHECK(tracing_smb_fd(smb) >= 0);
	CHECK(fcntl(tracing_smb_fd(smb), F_GETFD) & FD_CLOEXEC);
	seals = fcntl(tracing_smb_fd(smb), F_GET_SEALS);
	CHECK_UEQ(seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
	          F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
	CHECK(ftruncate(tracing_smb_fd(smb), 4096) < 0);
	CHECK_EQ(tracing_smb_base(smb)[12345], 0);

	/* Adopting a sealed memfd: both mappings see the same bytes. */
	fd2 = dup(tracing_smb_fd(smb));
	CHECK(fd2 >= 0);
	if (tracing_smb_adopt(fd2, 4096, true, &smb2, &err)) {
		close(fd2);
		tracing_smb_free(smb);
		CHECK(!"adopt failed");
	}
	tracing_smb_base(smb)[4100] = 0x5a;
	CHECK_EQ(tracing_smb_base(smb2)[4100], 0x5a);
	tracing_smb_free(smb2);
	tracing_smb_free(smb);
}

TEST(tracing_smb_adopt_checks)
{
	struct tracing_smb *smb = NULL;
	struct tb_err err = {0};
	int fd = memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(fd >= 0);
	CHECK_EQ(ftruncate(fd, 8192), 0);
	CHECK_EQ(tracing_smb_adopt(fd, 4096, true, &smb, &err), -EPERM);
	CHECK(smb == NULL);
	CHECK(strstr(err.msg, "not sealed") != NULL);
	CHECK_EQ(tracing_smb_adopt(fd, 16384, false, &smb, NULL), -EINVAL);
	CHECK_EQ(ftruncate(fd, 8192 + 100), 0);
	CHECK_EQ(tracing_smb_adopt(fd, 4096, false, &smb, NULL), -EINVAL);
	CHECK_EQ(ftruncate(fd, 8192), 0);
	CHECK_EQ(tracing_smb_adopt(fd, 4096, false, &smb, NULL), 0); /* takes fd */
	CHECK_EQ(tracing_smb_num_pages(smb), 2);
	tracing_smb_free(smb);
	CHECK(fcntl(fd, F_GETFD) < 0); /* closed by free */
}

/* ---- state machine ------------------------------------------------------ */

TEST(tracing_layout_sizes)
{
	static const size_t want4k[] = {0, 4088, 2044, 1020, 584, 292, 0, 0};
	for (unsigned l = 0; l < 8; l++)
		CHECK_EQ(tracing_layout_chunk_size(4096, l), want4k[l]);
	CHECK_EQ(tracing_layout_chunk_size(32768, TRACING_LAYOUT_DIV1), 32760);
	CHECK_EQ(tracing_layout_chunk_size(32768, TRACING_LAYOUT_DIV7), 4680);
	CHECK_EQ(tracing_layout_num_chunks(TRACING_LAYOUT_DIV14), 14);
	CHECK_EQ(tracing_layout_num_chunks(6), 0);
	CHECK_EQ(tracing_layout_num_chunks(99), 0);
}

TEST(tracing_chunk_states)
{
	struct mem_smb m;
	struct tracing_chunk c, c2;
	struct tracing_chunk_header h = {.chunk_id = 7, .writer_id = 3};
	CHECK_EQ(mem_smb_init(&m, 4, 4096, TRACING_LAYOUT_DIV1), 0);
	struct tracing_smb *smb = m.smb;

	CHECK_EQ(tracing_chunk_at(smb, 1, 0, &c), -EINVAL); /* not partitioned */
	CHECK_EQ(tracing_page_partition(smb, 1, 6), -EINVAL);
	CHECK_EQ(tracing_page_partition(smb, 4, TRACING_LAYOUT_DIV1), -EINVAL);
	CHECK_EQ(tracing_page_partition(smb, 1, TRACING_LAYOUT_DIV14), 0);
	CHECK_UEQ(tracing_page_bitmap(smb, 1), 0x50000000u);
	CHECK_EQ(tracing_page_partition(smb, 1, TRACING_LAYOUT_DIV1), -EBUSY);
	CHECK_EQ(tracing_chunk_at(smb, 1, 14, &c), -EINVAL);
	CHECK_EQ(tracing_chunk_at(smb, 1, 13, &c), 0);
	CHECK(c.begin == m.mem + 4096 + 8 + 13 * 292);
	CHECK_EQ(c.size, 292);

	/* Free -> BeingWritten -> Complete -> BeingRead -> Free, and every
	 * out-of-order step refused. */
	CHECK_EQ(tracing_chunk_state(smb, 1, 3), TRACING_CHUNK_FREE);
	CHECK_EQ(tracing_chunk_complete(smb, 1, 3), -EBUSY);
	CHECK_EQ(tracing_chunk_acquire_for_reading(smb, 1, 3, &c), -EBUSY);
	CHECK_EQ(tracing_chunk_release(smb, 1, 3, false), -EBUSY);
	CHECK_EQ(tracing_chunk_acquire_for_writing(smb, 1, 3, &h, &c), 0);
	CHECK(c.begin == m.mem + 4096 + 8 + 3 * 292);
	CHECK_UEQ(tracing_page_bitmap(smb, 1), 0x50000000u | 1u << 6);
	CHECK_EQ(tracing_chunk_acquire_for_writing(smb, 1, 3, &h, &c2), -EBUSY);
	CHECK_EQ(tracing_chunk_acquire_for_reading(smb, 1, 3, &c2), -EBUSY);
	CHECK_EQ(tracing_chunk_release(smb, 1, 3, false), -EBUSY);
	CHECK_EQ(tracing_chunk_complete(smb, 1, 3), 0);
	CHECK_EQ(tracing_chunk_state(smb, 1, 3), TRACING_CHUNK_COMPLETE);
	CHECK_EQ(tracing_chunk_complete(smb, 1, 3), -EBUSY);
	CHECK_EQ(tracing_chunk_acquire_for_writing(smb, 1, 3, &h, &c2), -EBUSY);
	CHECK_EQ(tracing_chunk_acquire_for_writing(smb, 1, 5, &h, &c2), 0);
	CHECK_EQ(tracing_chunk_acquire_for_reading(smb, 1, 3, &c2), 0);
	CHECK(c2.begin == c.begin);
	CHECK_EQ(tracing_chunk_state(smb, 1, 3), TRACING_CHUNK_BEING_READ);
	CHECK_EQ(tracing_chunk_release(smb, 1, 3, true), -EBUSY);
	CHECK_EQ(tracing_chunk_release(smb, 1, 3, false), 0);
	/* Chunk 5 still being written: the page stays partitioned. */
	CHECK_UEQ(tracing_page_bitmap(smb, 1), 0x50000000u | 1u << 10);
	CHECK_EQ(tracing_chunk_complete(smb, 1, 5), 0);
	CHECK_EQ(tracing_chunk_release(smb, 1, 5, true), 0); /* emulation path */
	CHECK_UEQ(tracing_page_bitmap(smb, 1), 0);           /* bitmap reset */
	CHECK_EQ(tracing_chunk_state(smb, 1, 5), -EINVAL);

	/* Hostile bitmaps: reserved layouts and out-of-range pages. */
	memcpy(m.mem + 2 * 4096, &(uint32_t){0x70000003u}, 4);
	CHECK_EQ(tracing_chunk_acquire_for_reading(smb, 2, 0, &c), -EINVAL);
	CHECK_EQ(tracing_chunk_state(smb, 2, 0), -EINVAL);
	CHECK_EQ(tracing_chunk_acquire_for_reading(smb, 9, 0, &c), -EINVAL);
	CHECK_EQ(tracing_chunk_acquire_for_reading(smb, UINT32_MAX, 0, &c), -EINVAL);
	mem_smb_release(&m);
}

TEST(tracing_get_new_chunk_exhausts)
{
	struct mem_smb m;
	struct tracing_chunk c;
	struct tracing_chunk_header h = {.writer_id = 1};
	CHECK_EQ(mem_smb_init(&m, 2, 4096, TRACING_LAYOUT_DIV4), 0);
	for (int i = 0; i < 8; i++)
		CHECK_EQ(tracing_smb_get_new_chunk(m.smb, &h, &c), 0);
	CHECK_EQ(tracing_smb_get_new_chunk(m.smb, &h, &c), -ENOSPC);
	CHECK_EQ(tracing_chunk_complete(m.smb, 1, 2), 0);
	CHECK_EQ(tracing_chunk_acquire_for_reading(m.smb, 1, 2, &c), 0);
	CHECK_EQ(tracing_chunk_release(m.smb, 1, 2, false), 0);
	CHECK_EQ(tracing_smb_get_new_chunk(m.smb, &h, &c), 0);
	CHECK_EQ(c.page, 1);
	CHECK_EQ(c.index, 2);
	mem_smb_release(&m);
}

TEST(tracing_chunk_header_bytes)
{
	static const uint8_t want[8] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x05, 0x1c};
	struct tracing_chunk_header h = {
	    .chunk_id = 0x04030201, .writer_id = 0x0605, .packet_count = 5, .flags = 7};
	struct tracing_chunk_header d;
	uint8_t out[8];
	struct mem_smb m;
	struct tracing_chunk c;
	tracing_chunk_header_encode(out, &h);
	CHECK_MEM_EQ(out, want, 8);
	tracing_chunk_header_decode(want, &d);
	CHECK_UEQ(d.chunk_id, 0x04030201);
	CHECK_UEQ(d.writer_id, 0x0605);
	CHECK_EQ(d.packet_count, 5);
	CHECK_EQ(d.flags, 7);
	tracing_chunk_header_decode((const uint8_t[8]){0, 0, 0, 0, 0, 0, 0xff, 0xff}, &d);
	CHECK_EQ(d.packet_count, 1023);
	CHECK_EQ(d.flags, 63);
	/* The same bytes land in the SMB when a chunk is acquired. */
	CHECK_EQ(mem_smb_init(&m, 1, 4096, TRACING_LAYOUT_DIV2), 0);
	CHECK_EQ(tracing_page_partition(m.smb, 0, TRACING_LAYOUT_DIV2), 0);
	CHECK_EQ(tracing_chunk_acquire_for_writing(m.smb, 0, 1, &h, &c), 0);
	CHECK_MEM_EQ(m.mem + 8 + 2044, want, 8);
	tracing_chunk_read_header(&c, &d);
	CHECK_UEQ(d.chunk_id, 0x04030201);
	mem_smb_release(&m);
}

/* ---- trace writer ------------------------------------------------------- */

/* Field numbers of the writer tests' own packets, beside TracePacket's
 * timestamp: the writer and the reassembler do not look at them. */
enum { TW_BYTES = 1, TW_STRING = 2, TW_INNER = 2, TW_VARINT = 3, TW_OUTER = 5, TW_AFTER = 6 };

static void small_packet(struct pb_writer *w, unsigned i)
{
	pb_put_varint(w, PB_F_TracePacket_timestamp, 1000 + i);
	pb_put_string(w, TW_STRING, "hello");
}

TEST(tracing_writer_small_packets)
{
	struct mem_smb m;
	struct tracing_commit_batch b;
	struct svc s = {0};
	struct tracing_chunk_iter it;
	struct tracing_fragment f;
	struct tracing_writer *tw;
	uint8_t ref[64];
	struct pb_writer rw;
	unsigned n = 0;

	CHECK_EQ(mem_smb_init(&m, 4, 4096, TRACING_LAYOUT_DIV1), 0);
	tracing_commit_batch_init(&b);
	tw = tracing_writer_new(m.smb, 1, 7, tracing_commit_batch_add, &b);
	for (unsigned i = 0; i < 10; i++) {
		small_packet(tracing_writer_begin_packet(tw), i);
		CHECK_EQ(tracing_writer_end_packet(tw), 0);
	}
	CHECK(tracing_commit_batch_empty(&b)); /* nothing completed yet */
	tracing_writer_flush(tw);
	CHECK_EQ(b.chunks.len, 1);
	CHECK_EQ(b.chunks.data[0].target_buffer, 7);
	CHECK_EQ(b.patches.len, 0);
	CHECK_EQ(tracing_chunk_state(m.smb, b.chunks.data[0].page, b.chunks.data[0].chunk),
	         TRACING_CHUNK_COMPLETE);
	CHECK_EQ(svc_read_batch(&s, m.smb, &b), 0);
	CHECK(s.have[0]);
	CHECK_EQ(s.hdr[0].writer_id, 1);
	CHECK_EQ(s.hdr[0].packet_count, 10);
	CHECK_EQ(s.hdr[0].flags, 0);
	CHECK_UEQ(tracing_page_bitmap(m.smb, 0), 0); /* freed by the read */
	tracing_chunk_iter_init(&it, &s.hdr[0], s.payload[0], s.len[0]);
	while (tracing_chunk_iter_next(&it, &f)) {
		const uint8_t *hdr = f.data - 4;
		pb_writer_init_fixed(&rw, ref, sizeof ref);
		small_packet(&rw, n);
		CHECK_EQ(f.len, pb_writer_size(&rw));
		CHECK_MEM_EQ(f.data, ref, f.len);
		CHECK((hdr[0] & 0x80) && (hdr[1] & 0x80) && (hdr[2] & 0x80) && hdr[3] == 0);
		CHECK(!f.continues_from_prev && !f.continues_on_next && !f.drop);
		n++;
	}
	CHECK_EQ(it.error, 0);
	CHECK_EQ(n, 10);
	CHECK_EQ(tracing_writer_stats(tw)->packets_written, 10);
	CHECK_EQ(tracing_writer_stats(tw)->chunks_committed, 1);
	tracing_writer_free(tw);
	CHECK(tracing_commit_batch_empty(&b)); /* free: nothing left to flush */
	tracing_commit_batch_release(&b);
	svc_release(&s);
	mem_smb_release(&m);
}

static void big_packet(struct pb_writer *w, size_t n)
{
	uint8_t *buf = tb_malloc(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = (uint8_t)(i * 7 + (i >> 8));
	pb_put_varint(w, PB_F_TracePacket_timestamp, 42);
	pb_put_bytes(w, TW_BYTES, buf, n);
	tb_free(buf);
}

TEST(tracing_writer_fragments_large_packet)
{
	struct mem_smb m;
	struct tracing_commit_batch b;
	struct svc s = {0};
	struct tracing_reassembler r;
	struct tracing_writer *tw;
	struct pb_writer rw;
	const uint8_t *pkt;
	size_t len, nchunks;
	uint8_t *ref;

	CHECK_EQ(mem_smb_init(&m, 4, 4096, TRACING_LAYOUT_DIV4), 0); /* 1012-byte payloads */
	tracing_commit_batch_init(&b);
	tw = tracing_writer_new(m.smb, 5, 1, tracing_commit_batch_add, &b);
	small_packet(tracing_writer_begin_packet(tw), 0);
	tracing_writer_end_packet(tw);
	big_packet(tracing_writer_begin_packet(tw), 5000);
	CHECK_EQ(tracing_writer_end_packet(tw), 0);
	small_packet(tracing_writer_begin_packet(tw), 1);
	tracing_writer_end_packet(tw);
	tracing_writer_flush(tw);
	nchunks = b.chunks.len;
	CHECK_EQ(nchunks, 5); /* 2 x 13 + 5009 + 4 x 4 bytes in 1012-byte payloads */
	CHECK_EQ(svc_read_batch(&s, m.smb, &b), 0);
	for (size_t i = 0; i < nchunks; i++) {
		uint8_t want = (i > 0 ? TRACING_CHUNK_FIRST_CONTINUES : 0) |
		               (i + 1 < nchunks ? TRACING_CHUNK_LAST_CONTINUES : 0);
		CHECK(s.have[i]);
		CHECK_EQ(s.hdr[i].chunk_id, i);
		CHECK_EQ(s.hdr[i].writer_id, 5);
		CHECK_EQ(s.hdr[i].flags, want);
		CHECK_EQ(s.hdr[i].packet_count, i == 0 || i + 1 == nchunks ? 2 : 1);
	}
	CHECK_EQ(svc_reassemble(&s, (unsigned)nchunks, &r), 0);
	CHECK_EQ(s.n_packets, 3);
	CHECK_EQ(r.stats.dropped_packets, 0);
	pb_writer_init_growable(&rw);
	big_packet(&rw, 5000);
	ref = pb_writer_take(&rw, &len);
	pkt = svc_packet(&s, 1, &len);
	CHECK(pkt != NULL);
	CHECK_EQ(len, 5000 + 2 + 1 + 2);
	CHECK_MEM_EQ(pkt, ref, len);
	tb_free(ref);
	tracing_reassembler_release(&r);
	tracing_writer_free(tw);
	tracing_commit_batch_release(&b);
	svc_release(&s);
	mem_smb_release(&m);
}

/* TW_OUTER { timestamp: 42, TW_BYTES: bytes(n), TW_INNER { TW_VARINT: 99 } },
 * TW_AFTER: 7 */
static void nested_packet(struct pb_writer *w, size_t n)
{
	unsigned outer = pb_begin_nested(w, TW_OUTER), inner;
	big_packet(w, n);
	inner = pb_begin_nested(w, TW_INNER);
	pb_put_varint(w, TW_VARINT, 99);
	pb_end_nested(w, inner);
	pb_end_nested(w, outer);
	pb_put_varint(w, TW_AFTER, 7);
}

TEST(tracing_writer_patches_nested_sizes)
{
	struct mem_smb m;
	struct tracing_commit_batch b;
	struct svc s = {0};
	struct tracing_reassembler r;
	struct tracing_writer *tw;
	struct pb_writer rw;
	struct pb_reader rd, in;
	struct pb_field f;
	const uint8_t *pkt;
	uint8_t *ref, *enc;
	size_t len, rlen, enc_len;
	Perfetto__Protos__CommitDataRequest *req;

	CHECK_EQ(mem_smb_init(&m, 8, 4096, TRACING_LAYOUT_DIV4), 0);
	tracing_commit_batch_init(&b);
	tw = tracing_writer_new(m.smb, 9, 3, tracing_commit_batch_add, &b);
	nested_packet(tracing_writer_begin_packet(tw), 2500);
	CHECK_EQ(tracing_writer_end_packet(tw), 0);
	/* Patches are complete once the packet ends but wait for a commit. */
	tracing_writer_flush(tw);
	CHECK_EQ(b.chunks.len, 3);
	CHECK_EQ(b.patches.len, 1); /* the size of field 5, in chunk 0 */
	CHECK_EQ(b.patches.data[0].chunk_id, 0);
	CHECK_EQ(b.patches.data[0].writer_id, 9);
	CHECK_EQ(b.patches.data[0].offset, 4 + 1);
	CHECK(!b.patches.data[0].has_more);

	/* The same batch as a CommitDataRequest. */
	CHECK_EQ(tracing_commit_batch_encode(&b, 77, &enc, &enc_len), 0);
	req = perfetto__protos__commit_data_request__unpack(protos_allocator(), enc_len, enc);
	tb_free(enc);
	CHECK(req != NULL);
	CHECK_EQ(req->n_chunks_to_move, 3);
	CHECK_EQ(req->chunks_to_move[2]->target_buffer, 3);
	CHECK_EQ(req->n_chunks_to_patch, 1);
	CHECK_EQ(req->chunks_to_patch[0]->writer_id, 9);
	CHECK_EQ(req->chunks_to_patch[0]->n_patches, 1);
	CHECK_EQ(req->chunks_to_patch[0]->patches[0]->offset, 5);
	CHECK_EQ(req->chunks_to_patch[0]->patches[0]->data.len, 4);
	CHECK_EQ(req->flush_request_id, 77);
	protobuf_c_message_free_unpacked(&req->base, protos_allocator());

	CHECK_EQ(svc_read_batch(&s, m.smb, &b), 0);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.hdr[0].flags, TRACING_CHUNK_LAST_CONTINUES | TRACING_CHUNK_NEEDS_PATCHING);
	CHECK_EQ(s.hdr[1].flags, TRACING_CHUNK_FIRST_CONTINUES | TRACING_CHUNK_LAST_CONTINUES);
	CHECK_EQ(s.hdr[2].flags, TRACING_CHUNK_FIRST_CONTINUES);
	CHECK_EQ(svc_reassemble(&s, 3, &r), 0);
	CHECK_EQ(s.n_packets, 1);

	pb_writer_init_growable(&rw);
	nested_packet(&rw, 2500);
	ref = pb_writer_take(&rw, &rlen);
	pkt = svc_packet(&s, 0, &len);
	CHECK_EQ(len, rlen);
	CHECK_MEM_EQ(pkt, ref, len);
	tb_free(ref);
	pb_reader_init(&rd, pkt, len);
	CHECK(pb_next(&rd, &f));
	CHECK_EQ(f.id, TW_OUTER);
	CHECK_EQ(f.len, 2 + 1 + 2 + 2500 + 1 + 4 + 2);
	pb_reader_init_field(&in, &f);
	CHECK(pb_next(&in, &f) && f.id == PB_F_TracePacket_timestamp && f.val == 42);
	CHECK(pb_next(&in, &f) && f.id == TW_BYTES && f.len == 2500);
	CHECK(pb_next(&in, &f) && f.id == TW_INNER && f.len == 2);
	CHECK(!pb_next(&in, &f) && pb_reader_error(&in) == PB_OK);
	CHECK(pb_next(&rd, &f) && f.id == TW_AFTER && f.val == 7);
	CHECK(!pb_next(&rd, &f) && pb_reader_error(&rd) == PB_OK);
	tracing_reassembler_release(&r);
	tracing_writer_free(tw);
	tracing_commit_batch_release(&b);
	svc_release(&s);
	mem_smb_release(&m);
}

TEST(tracing_writer_smb_exhaustion_drops)
{
	struct mem_smb m;
	struct tracing_commit_batch b;
	struct svc s = {0};
	struct tracing_reassembler r;
	struct tracing_writer *tw;
	struct tracing_chunk_iter it;
	struct tracing_fragment f;
	struct pb_reader rd;
	struct pb_field fld;
	const uint8_t *pkt;
	size_t len;
	unsigned frags = 0;
	bool saw_drop = false;

	CHECK_EQ(mem_smb_init(&m, 1, 4096, TRACING_LAYOUT_DIV1), 0); /* one 4088-byte chunk */
	tracing_commit_batch_init(&b);
	tw = tracing_writer_new(m.smb, 2, 1, tracing_commit_batch_add, &b);
	for (int i = 0; i < 8; i++) { /* 1114 bytes each: the 4th does not fit */
		unsigned outer;
		struct pb_writer *w = tracing_writer_begin_packet(tw);
		outer = pb_begin_nested(w, TW_OUTER);
		big_packet(w, 1100);
		pb_end_nested(w, outer);
		CHECK_EQ(tracing_writer_end_packet(tw), 0);
	}
	CHECK_EQ(b.chunks.len, 1);
	CHECK_EQ(b.patches.len, 0); /* no patches for a dropped fragment */
	CHECK_EQ(tracing_writer_stats(tw)->packets_written, 3);
	CHECK_EQ(tracing_writer_stats(tw)->packets_dropped, 5);
	CHECK(tracing_writer_stats(tw)->exhausted >= 5);
	CHECK_EQ(svc_read_batch(&s, m.smb, &b), 0);
	CHECK_EQ(s.hdr[0].packet_count, 4);
	CHECK_EQ(s.hdr[0].flags, 0);
	tracing_chunk_iter_init(&it, &s.hdr[0], s.payload[0], s.len[0]);
	while (tracing_chunk_iter_next(&it, &f)) {
		frags++;
		saw_drop |= f.drop;
	}
	CHECK_EQ(it.error, 0);
	CHECK_EQ(frags, 4);
	CHECK(saw_drop);

	/* The service freed the chunk: the writer recovers and says so. */
	small_packet(tracing_writer_begin_packet(tw), 3);
	tracing_writer_end_packet(tw);
	tracing_writer_flush(tw);
	CHECK_EQ(b.chunks.len, 1);
	CHECK_EQ(svc_read_batch(&s, m.smb, &b), 0);
	CHECK_EQ(s.hdr[1].chunk_id, 1);
	CHECK_EQ(svc_reassemble(&s, 2, &r), 0);
	CHECK_EQ(s.n_packets, 4);
	CHECK_EQ(r.stats.drop_markers, 1);
	CHECK_EQ(r.stats.dropped_packets, 1);
	pkt = svc_packet(&s, 3, &len);
	CHECK(pkt != NULL);
	CHECK_EQ(pb_find_field(pkt, len, PB_F_TracePacket_previous_packet_dropped, &fld), 1);
	CHECK_EQ(fld.val, 1);
	pb_reader_init(&rd, pkt, len);
	while (pb_next(&rd, &fld))
		;
	CHECK_EQ(pb_reader_error(&rd), PB_OK);
	tracing_reassembler_release(&r);
	tracing_writer_free(tw);
	tracing_commit_batch_release(&b);
	svc_release(&s);
	mem_smb_release(&m);
}

TEST(tracing_writer_max_packets_per_chunk)
{
	struct mem_smb m;
	struct tracing_commit_batch b;
	struct svc s = {0};
	struct tracing_writer *tw;
	CHECK_EQ(mem_smb_init(&m, 2, 32768, TRACING_LAYOUT_DIV1), 0);
	tracing_commit_batch_init(&b);
	tw = tracing_writer_new(m.smb, 1, 1, tracing_commit_batch_add, &b);
	for (int i = 0; i < 1100; i++) {
		pb_put_varint(tracing_writer_begin_packet(tw), TW_BYTES, 1);
		tracing_writer_end_packet(tw);
	}
	tracing_writer_flush(tw);
	CHECK_EQ(b.chunks.len, 2);
	CHECK_EQ(svc_read_batch(&s, m.smb, &b), 0);
	CHECK_EQ(s.hdr[0].packet_count, 1023);
	CHECK_EQ(s.hdr[1].packet_count, 1100 - 1023);
	tracing_writer_free(tw);
	tracing_commit_batch_release(&b);
	svc_release(&s);
	mem_smb_release(&m);
}

/* The slow path's packet for a name new on the sequence: interned_data then
 * name_iid, every nested size a 4-byte redundant varint. */
static size_t slow_named_event(uint8_t *out, size_t cap, uint64_t ts, uint64_t iid,
                               const char *name)
{
	struct pb_writer w;
	unsigned m, sub;
	pb_writer_init_fixed(&w, out, cap);
	pb_put_uint64(&w, PB_F_TracePacket_timestamp, ts);
	pb_put_uint32(&w, PB_F_TracePacket_sequence_flags,
	              PB_E_TracePacket_SequenceFlags_SEQ_NEEDS_INCREMENTAL_STATE);
	m = pb_begin_nested(&w, PB_F_TracePacket_interned_data);
	sub = pb_begin_nested(&w, PB_F_InternedData_event_names);
	pb_put_uint64(&w, PB_F_EventName_iid, iid);
	pb_put_string(&w, PB_F_EventName_name, name);
	pb_end_nested(&w, sub);
	pb_end_nested(&w, m);
	m = pb_begin_nested(&w, PB_F_TracePacket_track_event);
	pb_put_uint32(&w, PB_F_TrackEvent_type, PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN);
	pb_put_uint64(&w, PB_F_TrackEvent_name_iid, iid);
	pb_end_nested(&w, m);
	return pb_writer_size(&w);
}

/* TrackEvents on the writer's fast path (name already interned, room in the
 * chunk) are written whole with a one-byte TrackEvent size; a name is found
 * again by its address only while the text there is unchanged, and
 * ClearIncrementalState forgets the cached addresses too. */
TEST(tracing_te_fast_path_bytes)
{
	static const uint8_t end_ev[] = {0x40, 0xe9, 0x07, 0x68, 0x02, 0x5a, 0x02, 0x48, 0x02};
	static const uint8_t begin_ev[] = {0x40, 0xea, 0x07, 0x68, 0x02, 0x5a,
	                                   0x04, 0x48, 0x01, 0x50, 0x01};
	static const uint8_t counter_ev[] = {0x40, 0xec, 0x07, 0x68, 0x02, 0x5a, 0x11, 0x48,
	                                     0x04, 0x58, 0xc8, 0x01, 0xf0, 0x01, 0xfb, 0xff,
	                                     0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	struct mem_smb m;
	struct tracing_commit_batch b;
	struct svc s = {0};
	struct tracing_reassembler r;
	struct tracing_writer *tw;
	struct tracing_te *te;
	uint8_t ref[128];
	char name[16];
	const uint8_t *pkt;
	size_t len, n;

	CHECK_EQ(mem_smb_init(&m, 4, 4096, TRACING_LAYOUT_DIV1), 0);
	tracing_commit_batch_init(&b);
	tw = tracing_writer_new(m.smb, 1, 7, tracing_commit_batch_add, &b);
	te = tracing_te_new(tw, 100, "t", 0, 0);
	tracing_te_add_counter_track(te, 200, "c");
	snprintf(name, sizeof name, "alpha");
	CHECK_EQ(tracing_te_begin(te, 1000, name), 0); /* 0-2: state, 3: alpha interned */
	CHECK_EQ(tracing_te_end(te, 1001), 0);         /* 4 */
	CHECK_EQ(tracing_te_begin(te, 1002, name), 0); /* 5: alpha by address */
	snprintf(name, sizeof name, "beta");
	CHECK_EQ(tracing_te_begin(te, 1003, name), 0);      /* 6: same address, new text */
	CHECK_EQ(tracing_te_counter(te, 1004, 200, -5), 0); /* 7 */
	tracing_te_clear(te);
	CHECK_EQ(tracing_te_begin(te, 1005, name), 0); /* 8-10: state, 11: beta again iid 1 */
	tracing_writer_flush(tw);
	CHECK_EQ(b.chunks.len, 1);
	CHECK_EQ(svc_read_batch(&s, m.smb, &b), 0);
	CHECK_EQ(s.hdr[0].packet_count, 12);
	CHECK_EQ(tracing_writer_stats(tw)->packets_written, 12);
	CHECK_EQ(svc_reassemble(&s, 1, &r), 0);
	CHECK_EQ(s.n_packets, 12);

	n = slow_named_event(ref, sizeof ref, 1000, 1, "alpha");
	CHECK((pkt = svc_packet(&s, 3, &len)) && len == n);
	CHECK_MEM_EQ(pkt, ref, n);
	CHECK((pkt = svc_packet(&s, 4, &len)) && len == sizeof end_ev);
	CHECK_MEM_EQ(pkt, end_ev, sizeof end_ev);
	CHECK((pkt = svc_packet(&s, 5, &len)) && len == sizeof begin_ev);
	CHECK_MEM_EQ(pkt, begin_ev, sizeof begin_ev);
	n = slow_named_event(ref, sizeof ref, 1003, 2, "beta");
	CHECK((pkt = svc_packet(&s, 6, &len)) && len == n);
	CHECK_MEM_EQ(pkt, ref, n);
	CHECK((pkt = svc_packet(&s, 7, &len)) && len == sizeof counter_ev);
	CHECK_MEM_EQ(pkt, counter_ev, sizeof counter_ev);
	n = slow_named_event(ref, sizeof ref, 1005, 1, "beta");
	CHECK((pkt = svc_packet(&s, 11, &len)) && len == n);
	CHECK_MEM_EQ(pkt, ref, n);

	tracing_reassembler_release(&r);
	tracing_te_free(te);
	tracing_writer_free(tw);
	tracing_commit_batch_release(&b);
	svc_release(&s);
	mem_smb_release(&m);
}

/* ---- hostile input ------------------------------------------------------ */

TEST(tracing_reader_hostile)
{
	struct tracing_chunk_header h = {.chunk_id = 0, .writer_id = 1, .packet_count = 2};
	struct tracing_chunk_iter it;
	struct tracing_fragment f;
	struct tracing_reassembler r;
	struct svc s = {0};
	struct mem_smb m;
	uint8_t buf[4096];
	size_t len;
	/* second fragment claims 100 bytes in a 12-byte payload */
	uint8_t p1[12] = {0x82, 0x80, 0x80, 0x00, 0x08, 0x01, 0xe4, 0x80, 0x80, 0x00, 0x08, 0x01};
	/* truncated varint */
	uint8_t p2[3] = {0x82, 0x80, 0x80};
	/* drop marker then garbage */
	uint8_t p3[8] = {0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4};

	tracing_chunk_iter_init(&it, &h, p1, sizeof p1);
	CHECK(tracing_chunk_iter_next(&it, &f) && f.len == 2 && f.offset == 4);
	CHECK(!tracing_chunk_iter_next(&it, &f));
	CHECK_EQ(it.error, -EBADMSG);
	h.packet_count = 1;
	tracing_chunk_iter_init(&it, &h, p2, sizeof p2);
	CHECK(!tracing_chunk_iter_next(&it, &f));
	CHECK_EQ(it.error, -EBADMSG);
	tracing_chunk_iter_init(&it, &h, p2, 0);
	CHECK(!tracing_chunk_iter_next(&it, &f));
	CHECK_EQ(it.error, -EBADMSG);
	h.packet_count = 3;
	tracing_chunk_iter_init(&it, &h, p3, sizeof p3);
	CHECK(tracing_chunk_iter_next(&it, &f) && f.drop);
	CHECK(!tracing_chunk_iter_next(&it, &f));
	CHECK_EQ(it.error, 0);

	CHECK_EQ(tracing_chunk_apply_patch(p1, sizeof p1, 8, p3, 4), 0);
	CHECK_EQ(tracing_chunk_apply_patch(p1, sizeof p1, 9, p3, 4), -EINVAL);
	CHECK_EQ(tracing_chunk_apply_patch(p1, sizeof p1, UINT32_MAX, p3, 4), -EINVAL);
	CHECK_EQ(tracing_chunk_apply_patch(p1, sizeof p1, 0, p3, 3), -EINVAL);

	/* A bad chunk mid-packet drops the packet, later chunks still work. */
	tracing_reassembler_init(&r);
	h = (struct tracing_chunk_header){.chunk_id = 0,
	                                  .writer_id = 1,
	                                  .packet_count = 1,
	                                  .flags = TRACING_CHUNK_LAST_CONTINUES};
	CHECK_EQ(tracing_reassembler_push(&r, &h, p1, 6, collect_packet, &s), 0);
	h = (struct tracing_chunk_header){.chunk_id = 1,
	                                  .writer_id = 1,
	                                  .packet_count = 2,
	                                  .flags = TRACING_CHUNK_FIRST_CONTINUES};
	CHECK_EQ(tracing_reassembler_push(&r, &h, p2, sizeof p2, collect_packet, &s), -EBADMSG);
	h = (struct tracing_chunk_header){.chunk_id = 5, .writer_id = 1, .packet_count = 1};
	CHECK_EQ(tracing_reassembler_push(&r, &h, p1, 6, collect_packet, &s), 0);
	CHECK_EQ(s.n_packets, 1);
	CHECK_EQ(s.n_prev_dropped, 1);
	CHECK_EQ(r.stats.bad_chunks, 1);
	CHECK_EQ(r.stats.chunk_gaps, 1);
	tracing_reassembler_release(&r);

	/* A committed chunk with writer id 0 is refused but still freed. */
	CHECK_EQ(mem_smb_init(&m, 1, 4096, TRACING_LAYOUT_DIV1), 0);
	memcpy(m.mem, &(uint32_t){0x10000003u}, 4);
	CHECK_EQ(tracing_smb_read_chunk(m.smb, 0, 0, &h, buf, sizeof buf, &len), -EBADMSG);
	CHECK_UEQ(tracing_page_bitmap(m.smb, 0), 0);
	CHECK_EQ(tracing_smb_read_chunk(m.smb, 0, 0, &h, buf, sizeof buf, &len), -EINVAL);
	mem_smb_release(&m);
	svc_release(&s);
}

/* ---- golden: real Perfetto v58.2 SMB chunks ----------------------------- */

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n;
	*len = 0;
	if (!f)
		return NULL;
	do {
		if (*len == cap)
			buf = tb_realloc(buf, cap = cap ? cap * 2 : 1 << 16);
		n = fread(buf + *len, 1, cap - *len, f);
		*len += n;
	} while (n > 0);
	fclose(f);
	buf = tb_realloc(buf, *len + 1);
	buf[*len] = 0;
	return buf;
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Decode hex at s (up to a space/newline) into out (cap bytes); -1 on error. */
static long unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	if (*s == '-')
		return 0;
	while (hexval(s[0]) >= 0 && hexval(s[1]) >= 0) {
		if (n == cap)
			return -1;
		out[n++] = (uint8_t)(hexval(s[0]) << 4 | hexval(s[1]));
		s += 2;
	}
	return (long)n;
}

/* Value of key= in the line [line, eol), or NULL. */
static const char *field(const char *line, const char *eol, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = line; p + kl < eol; p++)
		if ((p == line || p[-1] == ' ') && !memcmp(p, key, kl) && p[kl] == '=')
			return p + kl + 1;
	return NULL;
}

struct golden_patch {
	uint32_t writer_id, chunk_id, offset;
	uint8_t data[4];
};

/* Every CommitData patch in a producer transcript. */
static size_t golden_patches(const char *path, struct golden_patch *out, size_t cap)
{
	size_t flen, n = 0;
	uint8_t *file = slurp(path, &flen), *frame = tb_malloc(flen / 2 + 1);
	char *line = (char *)file;
	while (file && line && *line) {
		char *eol = strchr(line, '\n'), *hex;
		long fl;
		Perfetto__Protos__IPCFrame *fr;
		if (!eol)
			eol = line + strlen(line);
		hex = strstr(line, "fd=");
		if (!strncmp(line, "C>S", 3) && hex && (hex = strchr(hex, ' ')) &&
		    (fl = unhex(hex + 1, frame, flen / 2 + 1)) > 4 &&
		    (fr = perfetto__protos__ipcframe__unpack(protos_allocator(), (size_t)fl - 4,
		                                             frame + 4))) {
			if (fr->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD &&
			    fr->msg_invoke_method->method_id == 4) {
				ProtobufCBinaryData *a = &fr->msg_invoke_method->args_proto;
				Perfetto__Protos__CommitDataRequest *req =
				    perfetto__protos__commit_data_request__unpack(
				        protos_allocator(), a->len, a->data);
				for (size_t i = 0; req && i < req->n_chunks_to_patch; i++) {
					Perfetto__Protos__CommitDataRequest__ChunkToPatch *c =
					    req->chunks_to_patch[i];
					for (size_t j = 0; j < c->n_patches && n < cap; j++) {
						if (c->patches[j]->data.len != 4)
							continue;
						out[n].writer_id = c->writer_id;
						out[n].chunk_id = c->chunk_id;
						out[n].offset = c->patches[j]->offset;
						memcpy(out[n].data, c->patches[j]->data.data, 4);
						n++;
					}
				}
				if (req)
					protobuf_c_message_free_unpacked(&req->base,
					                                 protos_allocator());
			}
			protobuf_c_message_free_unpacked(&fr->base, protos_allocator());
		}
		line = *eol ? eol + 1 : NULL;
	}
	tb_free(frame);
	tb_free(file);
	return n;
}

struct golden_ctx {
	const uint8_t *trace;
	size_t trace_len;
	unsigned packets, found, bad_pb;
};

/* Walk a packet with pb, descending into field 1 (ftrace bundle) and 10
 * (process tree); a packet must decode cleanly and occur verbatim in the
 * trace the real service wrote (it appends its trusted fields after it). */
static int golden_packet(void *ctx, const uint8_t *data, size_t len, bool prev_dropped)
{
	struct golden_ctx *g = ctx;
	struct pb_reader rd, in;
	struct pb_field f;
	g->packets++;
	pb_reader_init(&rd, data, len);
	while (pb_next(&rd, &f)) {
		if (f.wire == PB_WIRE_LEN && (f.id == PB_F_TracePacket_ftrace_events ||
		                              f.id == PB_F_TracePacket_process_tree)) {
			pb_reader_init_field(&in, &f);
			while (pb_next(&in, &f))
				;
			g->bad_pb += pb_reader_error(&in) != PB_OK;
		}
	}
	g->bad_pb += pb_reader_error(&rd) != PB_OK;
	g->found += memmem(g->trace, g->trace_len, data, len) != NULL;
	return 0;
}

static void golden_session(const char *shared, const char *session, unsigned min_chunks)
{
	char path[4096];
	size_t flen, tlen, n_patches, n_chunks = 0;
	uint8_t *file, *trace;
	struct golden_patch *patches = tb_calloc(256, sizeof *patches);
	struct svc *s = tb_calloc(3, sizeof *s);
	unsigned max_id[3] = {0};
	struct golden_ctx g = {0};
	char *line;

	snprintf(path, sizeof path, "%s/reference/golden/ipc/%s-producer.frames.hex", shared,
	         session);
	n_patches = golden_patches(path, patches, 256);
	snprintf(path, sizeof path, "%s/reference/golden/ipc/%s.trace.pftrace", shared, session);
	trace = slurp(path, &tlen);
	snprintf(path, sizeof path, "%s/reference/golden/ipc/%s-producer.chunks.hex", shared,
	         session);
	file = slurp(path, &flen);
	if (!file || !trace) {
		test_report(__FILE__, __LINE__, "cannot read golden files of '%s'", session);
		goto out;
	}
	for (line = (char *)file; line && *line;) {
		char *eol = strchr(line, '\n');
		const char *v;
		struct tracing_chunk_header h;
		struct tracing_chunk_iter it;
		struct tracing_fragment f;
		uint8_t *payload;
		long used, rest;
		size_t csize;
		unsigned frags = 0;
		if (!eol)
			eol = line + strlen(line);
		if (*line == '#')
			goto next;
		csize = strtoul(field(line, eol, "chunk_size"), NULL, 10);
		if (csize != 32760) {
			test_report(__FILE__, __LINE__, "unexpected chunk size %zu", csize);
			goto out;
		}
		payload = tb_calloc(1, csize - 8);
		used = unhex(field(line, eol, "payload"), payload, csize - 8);
		rest = used < 0 ? -1
		                : unhex(field(line, eol, "rest"), payload + used,
		                        csize - 8 - (size_t)used);
		h.chunk_id = (uint32_t)strtoul(field(line, eol, "chunk_id"), NULL, 10);
		h.writer_id = (uint16_t)strtoul(field(line, eol, "writer_id"), NULL, 10);
		h.packet_count = (uint16_t)strtoul(field(line, eol, "packet_count"), NULL, 10);
		h.flags = (uint8_t)strtoul(field(line, eol, "flags"), NULL, 16);
		v = field(line, eol, "layout");
		if (used < 0 || rest < 0 || !v || *v != '1' || h.writer_id == 0 ||
		    h.writer_id > 2 || h.chunk_id >= 64) {
			tb_free(payload);
			test_report(__FILE__, __LINE__, "bad golden line");
			goto out;
		}
		/* Header round trip through the byte layout. */
		{
			uint8_t raw[8];
			struct tracing_chunk_header d;
			tracing_chunk_header_encode(raw, &h);
			tracing_chunk_header_decode(raw, &d);
			if (d.chunk_id != h.chunk_id || d.writer_id != h.writer_id ||
			    d.packet_count != h.packet_count || d.flags != h.flags)
				test_report(__FILE__, __LINE__, "header round trip");
		}
		/* Fragment walk: sizes fit, count matches, flags consistent;
		 * the fragments cover exactly used_bytes. */
		tracing_chunk_iter_init(&it, &h, payload, csize - 8);
		while (tracing_chunk_iter_next(&it, &f)) {
			if (f.drop || f.continues_from_prev != (frags == 0 && (h.flags & 1)))
				test_report(__FILE__, __LINE__, "fragment flags");
			frags++;
		}
		if (it.error || frags != h.packet_count || it.off != (size_t)used ||
		    (h.chunk_id == 0 && (h.flags & TRACING_CHUNK_FIRST_CONTINUES))) {
			test_report(__FILE__, __LINE__, "chunk %u/%u: error %d frags %u off %zu",
			            h.writer_id, h.chunk_id, it.error, frags, it.off);
			tb_free(payload);
			goto out;
		}
		for (size_t i = 0; i < n_patches; i++)
			if (patches[i].writer_id == h.writer_id &&
			    patches[i].chunk_id == h.chunk_id &&
			    tracing_chunk_apply_patch(payload, csize - 8, patches[i].offset,
			                              patches[i].data, 4))
				test_report(__FILE__, __LINE__, "patch out of bounds");
		tb_free(s[h.writer_id].payload[h.chunk_id]);
		s[h.writer_id].hdr[h.chunk_id] = h;
		s[h.writer_id].payload[h.chunk_id] = payload;
		s[h.writer_id].len[h.chunk_id] = csize - 8;
		s[h.writer_id].have[h.chunk_id] = true;
		if (h.chunk_id + 1 > max_id[h.writer_id])
			max_id[h.writer_id] = h.chunk_id + 1;
		n_chunks++;
	next:
		line = *eol ? eol + 1 : NULL;
	}
	if (test_failed)
		goto out;
	if (n_chunks < min_chunks) {
		test_report(__FILE__, __LINE__, "only %zu chunks", n_chunks);
		goto out;
	}
	g.trace = trace;
	g.trace_len = tlen;
	for (int w = 1; w <= 2; w++) {
		struct tracing_reassembler r;
		tracing_reassembler_init(&r);
		for (unsigned i = 0; i < max_id[w]; i++) {
			if (!s[w].have[i])
				continue;
			if (tracing_reassembler_push(&r, &s[w].hdr[i], s[w].payload[i], s[w].len[i],
			                             golden_packet, &g))
				test_report(__FILE__, __LINE__, "reassembly failed");
		}
		if (r.stats.dropped_packets || r.stats.chunk_gaps || r.stats.bad_chunks)
			test_report(__FILE__, __LINE__,
			            "writer %d: dropped %llu gaps %llu bad %llu", w,
			            (unsigned long long)r.stats.dropped_packets,
			            (unsigned long long)r.stats.chunk_gaps,
			            (unsigned long long)r.stats.bad_chunks);
		tracing_reassembler_release(&r);
	}
	if (g.packets == 0 || g.bad_pb || g.found != g.packets)
		test_report(__FILE__, __LINE__, "%s: %u packets, %u malformed, %u found in trace",
		            session, g.packets, g.bad_pb, g.found);
	printf("  %s: %zu chunks, %zu patches, %u packets reassembled, all in the trace\n", session,
	       n_chunks, n_patches, g.packets);
out:
	for (int w = 0; w < 3; w++)
		svc_release(&s[w]);
	tb_free(s);
	tb_free(patches);
	tb_free(file);
	tb_free(trace);
}

TEST(tracing_golden_chunks)
{
	const char *shared = test_shared_dir();
	if (!shared)
		TEST_SKIP("../shared not found");
	golden_session(shared, "readbuffers_large", 11);
	if (test_failed)
		return;
	golden_session(shared, "readbuffers", 2);
	if (test_failed)
		return;
	golden_session(shared, "wif", 3);
}
