/*
 * Fuzz target for the service side of the SMB: the input is hostile shared
 * memory. Byte 0 picks the page size (4 KiB << (b & 3)); the rest, zero
 * padded to whole pages, is the SMB. Every chunk of every page goes through
 * the CommitData path (validate, Complete -> BeingRead, copy, release), its
 * fragments are walked and fed to a per-writer reassembler together with
 * patches taken from the input. Then the bytes after the first page header
 * are read once more as a single chunk (header + payload) pushed twice, so
 * continuation and gap handling see the same bytes from both sides.
 */
#include <stdint.h>
#include <string.h>

#include "tracing.h"

#define FUZZ_MAX_INPUT (256u << 10)
#define WRITERS 4

static int touch(void *ctx, const uint8_t *data, size_t len, bool prev_dropped)
{
	uint64_t *sum = ctx;
	for (size_t i = 0; i < len; i++)
		*sum += data[i];
	*sum += prev_dropped;
	return 0;
}

static void read_smb(struct tracing_smb *smb, const uint8_t *data, size_t size)
{
	struct tracing_reassembler r[WRITERS];
	uint8_t *buf = tb_malloc(TRACING_MAX_PAGE_SIZE);
	uint64_t sum = 0;
	for (int i = 0; i < WRITERS; i++)
		tracing_reassembler_init(&r[i]);
	for (uint32_t page = 0; page < tracing_smb_num_pages(smb); page++) {
		for (uint32_t c = 0; c < TRACING_MAX_CHUNKS_PER_PAGE + 1; c++) {
			struct tracing_chunk_header h;
			size_t len;
			if (tracing_smb_read_chunk(smb, page, c, &h, buf, TRACING_MAX_PAGE_SIZE,
			                           &len))
				continue;
			/* A patch from the input bytes, as chunks_to_patch would. */
			if (size >= 8) {
				uint32_t off;
				memcpy(&off, data + (page * 8 + c) % (size - 7), 4);
				tracing_chunk_apply_patch(buf, len, off % (uint32_t)(len + 8),
				                          data + 4, 4);
			}
			tracing_reassembler_push(&r[h.writer_id % WRITERS], &h, buf, len, touch,
			                         &sum);
		}
	}
	for (int i = 0; i < WRITERS; i++)
		tracing_reassembler_release(&r[i]);
	tb_free(buf);
}

static void read_raw_chunk(const uint8_t *p, size_t n)
{
	struct tracing_chunk_header h;
	struct tracing_chunk_iter it;
	struct tracing_fragment f;
	struct tracing_reassembler r;
	uint64_t sum = 0;
	if (n < TRACING_CHUNK_HEADER_SIZE)
		return;
	tracing_chunk_header_decode(p, &h);
	tracing_chunk_iter_init(&it, &h, p + 8, n - 8);
	while (tracing_chunk_iter_next(&it, &f))
		if (f.len)
			sum += f.data[0] + f.data[f.len - 1];
	tracing_reassembler_init(&r);
	r.max_packet_size = 4096; /* exercise the oversize path */
	tracing_reassembler_push(&r, &h, p + 8, n - 8, touch, &sum);
	h.chunk_id++;
	tracing_reassembler_push(&r, &h, p + 8, n - 8, touch, &sum);
	h.chunk_id += 2;
	h.flags ^= TRACING_CHUNK_FIRST_CONTINUES;
	tracing_reassembler_push(&r, &h, p + 8, n - 8, touch, &sum);
	tracing_reassembler_release(&r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t page_size, len, pages;
	struct tracing_smb *smb = NULL;
	uint8_t *mem;
	if (size < 1 || size > FUZZ_MAX_INPUT)
		return 0;
	page_size = (size_t)TRACING_MIN_PAGE_SIZE << (data[0] & 3);
	len = size - 1;
	pages = len / page_size + 1;
	mem = tb_calloc(pages, page_size);
	memcpy(mem, data + 1, len);
	if (tracing_smb_wrap(mem, pages * page_size, page_size, &smb, NULL) == 0) {
		read_smb(smb, data + 1, len);
		tracing_smb_free(smb);
	}
	/* The chunk at the start of page 0 (after the page header). */
	if (len > TRACING_PAGE_HEADER_SIZE)
		read_raw_chunk(data + 1 + TRACING_PAGE_HEADER_SIZE, len - TRACING_PAGE_HEADER_SIZE);
	tb_free(mem);
	return 0;
}
