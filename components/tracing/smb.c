/*
 * The shared memory buffer: allocation (memfd with seals, or an unlinked
 * temp file), adoption of a received fd, and the page/chunk state machine.
 *
 * The producer and the service are different processes that share only this
 * memory, so every state change is a compare-and-swap on the page's 32-bit
 * header bitmap, retried a bounded number of times. The service must assume
 * the producer is hostile: every page index, layout and chunk index read
 * from the bitmap is validated before it is used to compute an address.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracing_int.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the SMB ABI is little-endian; this code stores fields natively"
#endif

#define LAYOUT_SHIFT 28
#define LAYOUT_MASK 0x70000000u
#define ALL_CHUNKS_MASK 0x0FFFFFFFu

static const unsigned layout_chunks[8] = {0, 1, 2, 4, 7, 14, 0, 0};

unsigned tracing_layout_num_chunks(unsigned layout)
{
	return layout < 8 ? layout_chunks[layout] : 0;
}

size_t tracing_layout_chunk_size(size_t page_size, unsigned layout)
{
	unsigned n = tracing_layout_num_chunks(layout);
	if (!n || page_size < TRACING_PAGE_HEADER_SIZE)
		return 0;
	return ((page_size - TRACING_PAGE_HEADER_SIZE) / n) & ~(size_t)3;
}

/* ---- chunk header -------------------------------------------------------- */

void tracing_chunk_header_encode(uint8_t out[TRACING_CHUNK_HEADER_SIZE],
                                 const struct tracing_chunk_header *h)
{
	uint16_t packets =
	    (uint16_t)((h->packet_count & 0x3ff) | (uint16_t)((h->flags & 0x3f) << 10));
	out[0] = (uint8_t)h->chunk_id;
	out[1] = (uint8_t)(h->chunk_id >> 8);
	out[2] = (uint8_t)(h->chunk_id >> 16);
	out[3] = (uint8_t)(h->chunk_id >> 24);
	out[4] = (uint8_t)h->writer_id;
	out[5] = (uint8_t)(h->writer_id >> 8);
	out[6] = (uint8_t)packets;
	out[7] = (uint8_t)(packets >> 8);
}

void tracing_chunk_header_decode(const uint8_t in[TRACING_CHUNK_HEADER_SIZE],
                                 struct tracing_chunk_header *h)
{
	uint16_t packets = (uint16_t)(in[6] | in[7] << 8);
	h->chunk_id =
	    (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
	h->writer_id = (uint16_t)(in[4] | in[5] << 8);
	h->packet_count = packets & 0x3ff;
	h->flags = (uint8_t)(packets >> 10);
}

void tracing_chunk_read_header(const struct tracing_chunk *c, struct tracing_chunk_header *h)
{
	uint8_t raw[TRACING_CHUNK_HEADER_SIZE];
	uint16_t packets =
	    atomic_load_explicit((_Atomic uint16_t *)(c->begin + 6), memory_order_acquire);
	memcpy(raw, c->begin, 6);
	raw[6] = (uint8_t)packets;
	raw[7] = (uint8_t)(packets >> 8);
	tracing_chunk_header_decode(raw, h);
}

/* ---- allocation ---------------------------------------------------------- */

int tracing_smb_check_geometry(size_t size, size_t page_size, struct tb_err *err)
{
	size_t p;
	for (p = TRACING_MIN_PAGE_SIZE; p <= TRACING_MAX_PAGE_SIZE; p *= 2)
		if (p == page_size)
			break;
	if (p > TRACING_MAX_PAGE_SIZE)
		return tb_err_set(err, -EINVAL, "invalid smb page size %zu", page_size);
	if (size == 0 || size % page_size || size > TRACING_MAX_SMB_SIZE)
		return tb_err_set(err, -EINVAL, "invalid smb size %zu (page size %zu)", size,
		                  page_size);
	return 0;
}

static struct tracing_smb *smb_alloc(uint8_t *base, size_t size, size_t page_size, int fd,
                                     bool mapped)
{
	struct tracing_smb *smb = tb_calloc(1, sizeof *smb);
	smb->base = base;
	smb->size = size;
	smb->page_size = page_size;
	smb->num_pages = size / page_size;
	smb->fd = fd;
	smb->mapped = mapped;
	smb->layout = TRACING_LAYOUT_DIV1;
	return smb;
}

/* An unlinked temp file for kernels without memfd_create. */
static int temp_fd(struct tb_err *err)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;
	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(path, sizeof path, "%s/perfetto-shmem-XXXXXX", dir) >= sizeof path)
		return tb_err_set(err, -ENAMETOOLONG, "temp dir name too long");
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0)
		return tb_err_errno(err, -errno, "cannot create '%s'", path);
	unlink(path);
	return fd;
}

int tracing_smb_create(size_t size, size_t page_size, struct tracing_smb **out, struct tb_err *err)
{
	int fd = -1, rc;
	bool memfd = true;
	void *p;
	*out = NULL;
	if ((rc = tracing_smb_check_geometry(size, page_size, err)))
		return rc;
	fd = memfd_create("perfetto_shmem", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		memfd = false;
		if ((fd = temp_fd(err)) < 0)
			return fd;
	}
	if (ftruncate(fd, (off_t)size) < 0) {
		rc = tb_err_errno(err, -errno, "cannot size smb to %zu bytes", size);
		goto out;
	}
	if (memfd && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		rc = tb_err_errno(err, -errno, "cannot seal smb");
		goto out;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		rc = tb_err_errno(err, -errno, "cannot map smb of %zu bytes", size);
		goto out;
	}
	*out = smb_alloc(p, size, page_size, fd, true);
	fd = -1;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

int tracing_smb_adopt(int fd, size_t page_size, bool require_seals, struct tracing_smb **out,
                      struct tb_err *err)
{
	const int want = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
	struct stat st;
	void *p;
	int rc, seals;
	*out = NULL;
	if (fstat(fd, &st) < 0)
		return tb_err_errno(err, -errno, "cannot stat smb fd %d", fd);
	if (st.st_size < 0 || (uint64_t)st.st_size > TRACING_MAX_SMB_SIZE)
		return tb_err_set(err, -EINVAL, "invalid smb size %lld", (long long)st.st_size);
	if ((rc = tracing_smb_check_geometry((size_t)st.st_size, page_size, err)))
		return rc;
	if (require_seals) {
		seals = fcntl(fd, F_GET_SEALS);
		if (seals < 0)
			return tb_err_errno(err, -errno, "smb fd %d has no seals", fd);
		if ((seals & want) != want)
			return tb_err_set(err, -EPERM, "smb fd %d is not sealed (seals 0x%x)", fd,
			                  seals);
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return tb_err_errno(err, -errno, "cannot map smb fd %d", fd);
	*out = smb_alloc(p, (size_t)st.st_size, page_size, fd, true);
	return 0;
}

int tracing_smb_wrap(void *mem, size_t size, size_t page_size, struct tracing_smb **out,
                     struct tb_err *err)
{
	int rc;
	*out = NULL;
	if ((uintptr_t)mem & 3)
		return tb_err_set(err, -EINVAL, "smb memory not 4-byte aligned");
	if (size <= TRACING_MAX_SMB_SIZE) {
		if ((rc = tracing_smb_check_geometry(size, page_size, err)))
			return rc;
	} else if ((rc = tracing_smb_check_geometry(page_size, page_size, err)) ||
	           size % page_size) {
		return tb_err_set(err, -EINVAL, "invalid smb size %zu", size);
	}
	*out = smb_alloc(mem, size, page_size, -1, false);
	return 0;
}

void tracing_smb_free(struct tracing_smb *smb)
{
	if (!smb)
		return;
	if (smb->mapped)
		munmap(smb->base, smb->size);
	if (smb->fd >= 0)
		close(smb->fd);
	tb_free(smb);
}

int tracing_smb_fd(const struct tracing_smb *smb)
{
	return smb->fd;
}
uint8_t *tracing_smb_base(const struct tracing_smb *smb)
{
	return smb->base;
}
size_t tracing_smb_size(const struct tracing_smb *smb)
{
	return smb->size;
}
size_t tracing_smb_page_size(const struct tracing_smb *smb)
{
	return smb->page_size;
}
size_t tracing_smb_num_pages(const struct tracing_smb *smb)
{
	return smb->num_pages;
}

void tracing_smb_set_default_layout(struct tracing_smb *smb, unsigned layout)
{
	TB_CHECK(tracing_layout_num_chunks(layout) > 0);
	smb->layout = layout;
}

/* ---- state machine ------------------------------------------------------- */

static _Atomic uint32_t *bitmap_ptr(const struct tracing_smb *smb, uint32_t page)
{
	return (_Atomic uint32_t *)(smb->base + (size_t)page * smb->page_size);
}

uint32_t tracing_page_bitmap(const struct tracing_smb *smb, uint32_t page)
{
	if (page >= smb->num_pages)
		return 0;
	return atomic_load_explicit(bitmap_ptr(smb, page), memory_order_acquire);
}

int tracing_page_partition(struct tracing_smb *smb, uint32_t page, unsigned layout)
{
	uint32_t expected = 0;
	if (page >= smb->num_pages || !tracing_layout_num_chunks(layout))
		return -EINVAL;
	if (atomic_compare_exchange_strong_explicit(bitmap_ptr(smb, page), &expected,
	                                            (uint32_t)layout << LAYOUT_SHIFT,
	                                            memory_order_acq_rel, memory_order_acquire))
		return 0;
	return -EBUSY;
}

/* Address of chunk index given the bitmap's layout; -EINVAL if the layout or
 * index is not valid. The bitmap comes from shared memory: trust nothing. */
static int locate(const struct tracing_smb *smb, uint32_t page, uint32_t index, uint32_t bitmap,
                  struct tracing_chunk *out)
{
	unsigned layout = (bitmap & LAYOUT_MASK) >> LAYOUT_SHIFT;
	unsigned n = tracing_layout_num_chunks(layout);
	size_t csize = tracing_layout_chunk_size(smb->page_size, layout);
	if (page >= smb->num_pages || index >= n)
		return -EINVAL;
	out->begin = smb->base + (size_t)page * smb->page_size + TRACING_PAGE_HEADER_SIZE +
	             (size_t)index * csize;
	out->size = csize;
	out->page = page;
	out->index = index;
	return 0;
}

int tracing_chunk_at(const struct tracing_smb *smb, uint32_t page, uint32_t index,
                     struct tracing_chunk *out)
{
	if (page >= smb->num_pages)
		return -EINVAL;
	return locate(smb, page, index, tracing_page_bitmap(smb, page), out);
}

int tracing_chunk_state(const struct tracing_smb *smb, uint32_t page, uint32_t index)
{
	struct tracing_chunk c;
	uint32_t bitmap;
	if (page >= smb->num_pages)
		return -EINVAL;
	bitmap = tracing_page_bitmap(smb, page);
	if (locate(smb, page, index, bitmap, &c))
		return -EINVAL;
	return (int)((bitmap >> (2 * index)) & 3);
}

/* CAS chunk index of page from state `from` to `to`. Going to Free, a page
 * whose chunks are then all free has its whole bitmap reset to 0. */
static int transition(struct tracing_smb *smb, uint32_t page, uint32_t index, unsigned from,
                      unsigned to, struct tracing_chunk *out)
{
	_Atomic uint32_t *bm;
	uint32_t cur, next;
	struct tracing_chunk c;
	if (page >= smb->num_pages)
		return -EINVAL;
	bm = bitmap_ptr(smb, page);
	cur = atomic_load_explicit(bm, memory_order_acquire);
	for (int attempt = 0; attempt < TRACING_CAS_RETRIES; attempt++) {
		if (locate(smb, page, index, cur, &c))
			return -EINVAL;
		if (((cur >> (2 * index)) & 3) != from)
			return -EBUSY;
		next = (cur & ~(3u << (2 * index))) | (uint32_t)to << (2 * index);
		if (to == TRACING_CHUNK_FREE && (next & ALL_CHUNKS_MASK) == 0)
			next = 0;
		if (atomic_compare_exchange_weak_explicit(bm, &cur, next, memory_order_acq_rel,
		                                          memory_order_acquire)) {
			if (out)
				*out = c;
			return 0;
		}
	}
	return -EAGAIN;
}

int tracing_chunk_acquire_for_writing(struct tracing_smb *smb, uint32_t page, uint32_t index,
                                      const struct tracing_chunk_header *h,
                                      struct tracing_chunk *out)
{
	uint8_t raw[TRACING_CHUNK_HEADER_SIZE];
	int rc = transition(smb, page, index, TRACING_CHUNK_FREE, TRACING_CHUNK_BEING_WRITTEN, out);
	if (rc)
		return rc;
	tracing_chunk_header_encode(raw, h);
	memcpy(out->begin, raw, 6);
	atomic_store_explicit((_Atomic uint16_t *)(out->begin + 6),
	                      (uint16_t)(raw[6] | raw[7] << 8), memory_order_release);
	return 0;
}

int tracing_chunk_complete(struct tracing_smb *smb, uint32_t page, uint32_t index)
{
	return transition(smb, page, index, TRACING_CHUNK_BEING_WRITTEN, TRACING_CHUNK_COMPLETE,
	                  NULL);
}

int tracing_chunk_acquire_for_reading(struct tracing_smb *smb, uint32_t page, uint32_t index,
                                      struct tracing_chunk *out)
{
	struct tracing_chunk c;
	return transition(smb, page, index, TRACING_CHUNK_COMPLETE, TRACING_CHUNK_BEING_READ,
	                  out ? out : &c);
}

int tracing_chunk_release(struct tracing_smb *smb, uint32_t page, uint32_t index,
                          bool from_complete)
{
	return transition(smb, page, index,
	                  from_complete ? TRACING_CHUNK_COMPLETE : TRACING_CHUNK_BEING_READ,
	                  TRACING_CHUNK_FREE, NULL);
}

int tracing_smb_get_new_chunk(struct tracing_smb *smb, const struct tracing_chunk_header *h,
                              struct tracing_chunk *out)
{
	for (size_t i = 0; i < smb->num_pages; i++) {
		uint32_t page = (uint32_t)((smb->cursor + i) % smb->num_pages);
		uint32_t bitmap = tracing_page_bitmap(smb, page);
		unsigned n;
		if (bitmap == 0) {
			/* Losing the race is fine: someone else partitioned it. */
			tracing_page_partition(smb, page, smb->layout);
			bitmap = tracing_page_bitmap(smb, page);
		}
		n = tracing_layout_num_chunks((bitmap & LAYOUT_MASK) >> LAYOUT_SHIFT);
		for (unsigned c = 0; c < n; c++) {
			if (((bitmap >> (2 * c)) & 3) != TRACING_CHUNK_FREE)
				continue;
			if (tracing_chunk_acquire_for_writing(smb, page, c, h, out) == 0) {
				smb->cursor = page;
				return 0;
			}
		}
	}
	return -ENOSPC;
}

size_t tracing_smb_free_bytes(const struct tracing_smb *smb)
{
	size_t free_bytes = 0;
	for (size_t i = 0; i < smb->num_pages; i++) {
		uint32_t bitmap = tracing_page_bitmap(smb, (uint32_t)i);
		unsigned n = tracing_layout_num_chunks((bitmap & LAYOUT_MASK) >> LAYOUT_SHIFT);
		if (bitmap == 0) {
			free_bytes += smb->page_size;
			continue;
		}
		for (unsigned c = 0; c < n; c++)
			if (((bitmap >> (2 * c)) & 3) == TRACING_CHUNK_FREE)
				free_bytes += smb->page_size / n;
	}
	return free_bytes;
}

int tracing_smb_read_chunk(struct tracing_smb *smb, uint32_t page, uint32_t index,
                           struct tracing_chunk_header *h, uint8_t *buf, size_t cap, size_t *len)
{
	struct tracing_chunk c;
	int rc;
	*len = 0;
	if ((rc = tracing_chunk_acquire_for_reading(smb, page, index, &c)))
		return rc;
	tracing_chunk_read_header(&c, h);
	if (tracing_chunk_payload_size(&c) > cap) {
		rc = -ENOBUFS;
	} else {
		memcpy(buf, tracing_chunk_payload(&c), tracing_chunk_payload_size(&c));
		*len = tracing_chunk_payload_size(&c);
		if (h->writer_id == 0 || h->writer_id > TRACING_MAX_WRITER_ID)
			rc = -EBADMSG;
	}
	tracing_chunk_release(smb, page, index, false);
	return rc;
}
