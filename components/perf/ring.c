/*
 * ring.c: reading a perf_event mmap ring and parsing its records.
 *
 * The kernel appends records at data_head and we consume from data_tail.
 * Both are free-running byte counters; the position in the data area is the
 * counter modulo data_size (a power of two). data_head is read with acquire
 * ordering so the record bytes before it are visible; data_tail is stored
 * with release ordering after we are done with the bytes, handing the space
 * back to the kernel. A record may wrap the end of the data area: it is then
 * copied into a scratch buffer in two pieces. Every record is parsed from a
 * contiguous copy, so the parser never sees the ring and never reads past
 * the record's own size. Layouts are in README.md.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "perf_int.h"

/* Sample bits whose fields have a fixed size and a place we know. */
#define PERF_ST_SUPPORTED                                                                    \
	(PERF_ST_IDENTIFIER | PERF_ST_IP | PERF_ST_TID | PERF_ST_TIME | PERF_ST_ADDR |       \
	 PERF_ST_ID | PERF_ST_STREAM_ID | PERF_ST_CPU | PERF_ST_PERIOD | PERF_ST_CALLCHAIN | \
	 PERF_ST_REGS_USER | PERF_ST_STACK_USER)

/* Split a callchain into kernel and user pcs (leaf first), dropping markers
 * and pcs of other contexts. */
static void split_callchain(const uint8_t *p, uint64_t nr, struct perf_record *out, uint64_t *ips)
{
	uint64_t *kern = ips, *user = ips + PERF_MAX_FRAMES;
	uint64_t ctx = 0;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = tb_ld64(p + i * 8);
		if (ip >= PERF_CTX_MAX) {
			ctx = ip;
			out->has_user_section |= ip == PERF_CTX_USER;
			continue;
		}
		if (ctx == PERF_CTX_KERNEL) {
			if (out->n_kernel < PERF_MAX_FRAMES)
				kern[out->n_kernel++] = ip;
			else
				out->n_truncated++;
		} else if (ctx == PERF_CTX_USER) {
			if (out->n_user < PERF_MAX_FRAMES)
				user[out->n_user++] = ip;
			else
				out->n_truncated++;
		}
	}
	out->kernel_ips = kern;
	out->user_ips = user;
}

/* The trailing sample_id of a non-sample record (attr.sample_id_all):
 * TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER, those in sample_type, in that
 * order. p[0, n) is what follows the record's body; taken only when its
 * size is exactly the sample_id's, so a record made without sample_id_all
 * is read for its body alone. */
static void parse_sample_id(const uint8_t *p, size_t n, uint64_t sample_type,
                            struct perf_record *out)
{
	static const uint32_t bits[] = {PERF_ST_TID,       PERF_ST_TIME, PERF_ST_ID,
	                                PERF_ST_STREAM_ID, PERF_ST_CPU,  PERF_ST_IDENTIFIER};
	size_t want = 0;
	for (size_t i = 0; i < TB_ARRAY_SIZE(bits); i++)
		want += sample_type & bits[i] ? 8 : 0;
	if (want == 0 || n != want)
		return;
	if (sample_type & PERF_ST_TID)
		p += 8;
	if (sample_type & PERF_ST_TIME)
		out->time = tb_ld64(p), p += 8;
	if (sample_type & PERF_ST_ID)
		p += 8;
	if (sample_type & PERF_ST_STREAM_ID)
		p += 8;
	if (sample_type & PERF_ST_CPU)
		out->cpu = tb_ld32(p);
}

/* COMM:       u32 pid, tid | char comm[] (NUL, padded to 8) | sample_id
 * FORK, EXIT: u32 pid, ppid, tid, ptid | u64 time | sample_id */
static int parse_task(const uint8_t *rec, size_t len, uint64_t sample_type, struct perf_record *out)
{
	uint32_t type = tb_ld32(rec);
	const uint8_t *p = rec + 8;
	size_t n = len - 8;
	if (type == PERF_RECORD_TYPE_COMM) {
		if (n < 16)
			return -EINVAL;
		out->kind = PERF_REC_COMM;
		out->pid = tb_ld32(p);
		out->tid = tb_ld32(p + 4);
		out->comm = (const char *)p + 8;
		out->comm_len = strnlen(out->comm, n - 8);
		if (out->comm_len == n - 8)
			return -EINVAL; /* not terminated inside the record */
		out->comm_exec = (out->misc & PERF_RECORD_MISC_COMM_EXEC_BIT) != 0;
		size_t body = 8 + ((out->comm_len + 1 + 7) & ~(size_t)7);
		if (body <= n)
			parse_sample_id(p + body, n - body, sample_type, out);
		return 0;
	}
	if (n < 24)
		return -EINVAL;
	out->kind = type == PERF_RECORD_TYPE_FORK ? PERF_REC_FORK : PERF_REC_EXIT;
	out->pid = tb_ld32(p);
	out->ppid = tb_ld32(p + 4);
	out->tid = tb_ld32(p + 8);
	out->ptid = tb_ld32(p + 12);
	out->time = tb_ld64(p + 16);
	parse_sample_id(p + 24, n - 24, sample_type, out); /* its cpu */
	return 0;
}

/* MMAP:  u32 pid, tid | u64 addr, len, pgoff | char filename[] | sample_id
 * MMAP2: u32 pid, tid | u64 addr, len, pgoff | u32 maj, min | u64 ino,
 *        ino_generation (or u8 build_id_size, 3 reserved, u8 build_id[20])
 *        | u32 prot, flags | char filename[] (NUL, padded to 8) | sample_id
 * (with sample_id_all, the time the mapping was made) */
static int parse_mmap(const uint8_t *rec, size_t len, uint64_t sample_type, struct perf_record *out)
{
	const uint8_t *p = rec + 8;
	size_t n = len - 8, head = tb_ld32(rec) == PERF_RECORD_TYPE_MMAP2 ? 64 : 32;
	if (n <= head)
		return -EINVAL;
	out->kind = PERF_REC_MMAP;
	out->pid = tb_ld32(p);
	out->tid = tb_ld32(p + 4);
	out->map_addr = tb_ld64(p + 8);
	out->map_len = tb_ld64(p + 16);
	out->map_pgoff = tb_ld64(p + 24);
	out->filename = (const char *)p + head;
	out->filename_len = strnlen(out->filename, n - head);
	if (out->filename_len == n - head)
		return -EINVAL; /* not terminated inside the record */
	size_t body = head + ((out->filename_len + 1 + 7) & ~(size_t)7);
	if (body <= n)
		parse_sample_id(p + body, n - body, sample_type, out); /* its time */
	return 0;
}

int perf_record_parse(const uint8_t *rec, size_t len, uint64_t sample_type, struct perf_record *out,
                      uint64_t *ips_out)
{
	size_t off = 8;
	uint32_t type;
	memset(out, 0, sizeof *out);
	if (len < 8 || tb_ld32(rec + 4) >> 16 != len)
		return -EINVAL;
	type = tb_ld32(rec);
	out->misc = (uint16_t)tb_ld32(rec + 4);
	if (type == PERF_RECORD_TYPE_LOST) {
		if (len < 24)
			return -EINVAL;
		out->kind = PERF_REC_LOST;
		out->lost = tb_ld64(rec + 16);
		return 0;
	}
	if (type == PERF_RECORD_TYPE_COMM || type == PERF_RECORD_TYPE_FORK ||
	    type == PERF_RECORD_TYPE_EXIT)
		return parse_task(rec, len, sample_type, out);
	if (type == PERF_RECORD_TYPE_MMAP || type == PERF_RECORD_TYPE_MMAP2)
		return parse_mmap(rec, len, sample_type, out);
	if (type != PERF_RECORD_TYPE_SAMPLE) {
		out->kind = PERF_REC_OTHER;
		return 0;
	}
	if (sample_type & ~(uint64_t)PERF_ST_SUPPORTED)
		return -EINVAL;
	out->kind = PERF_REC_SAMPLE;
	/* Fixed-size fields, in the order the kernel writes them. */
	static const struct {
		uint32_t bit;
		uint8_t size;
	} fixed[] = {
	    {PERF_ST_IDENTIFIER, 8}, {PERF_ST_IP, 8},   {PERF_ST_TID, 8},
	    {PERF_ST_TIME, 8},       {PERF_ST_ADDR, 8}, {PERF_ST_ID, 8},
	    {PERF_ST_STREAM_ID, 8},  {PERF_ST_CPU, 8},  {PERF_ST_PERIOD, 8},
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(fixed); i++) {
		if (!(sample_type & fixed[i].bit))
			continue;
		if (len - off < fixed[i].size)
			return -EINVAL;
		const uint8_t *p = rec + off;
		switch (fixed[i].bit) {
		case PERF_ST_IP:
			out->ip = tb_ld64(p);
			break;
		case PERF_ST_TID:
			out->pid = tb_ld32(p);
			out->tid = tb_ld32(p + 4);
			break;
		case PERF_ST_TIME:
			out->time = tb_ld64(p);
			break;
		case PERF_ST_CPU:
			out->cpu = tb_ld32(p);
			break;
		case PERF_ST_PERIOD:
			out->period = tb_ld64(p);
			break;
		default:
			break;
		}
		off += fixed[i].size;
	}
	out->kernel_ips = ips_out;
	out->user_ips = ips_out + PERF_MAX_FRAMES;
	if (sample_type & PERF_ST_CALLCHAIN) {
		uint64_t nr;
		if (len - off < 8)
			return -EINVAL;
		nr = tb_ld64(rec + off);
		off += 8;
		if (nr > (len - off) / 8)
			return -EINVAL;
		split_callchain(rec + off, nr, out, ips_out);
		off += nr * 8;
	}
	/* u64 abi | u64 regs[PERF_REGS_N] (abi 0: none, e.g. a kernel thread) */
	if (sample_type & PERF_ST_REGS_USER) {
		if (len - off < 8)
			return -EINVAL;
		out->regs_abi = tb_ld64(rec + off);
		off += 8;
		if (out->regs_abi) {
			if ((len - off) / 8 < PERF_REGS_N)
				return -EINVAL;
			out->regs = rec + off;
			out->n_regs = PERF_REGS_N;
			off += (size_t)PERF_REGS_N * 8;
		}
	}
	/* u64 size | u8 data[size] | u64 dyn_size (only when size != 0);
	 * the first dyn_size bytes of data are the stack from the user sp. */
	if (sample_type & PERF_ST_STACK_USER) {
		uint64_t size, dyn;
		if (len - off < 8)
			return -EINVAL;
		size = tb_ld64(rec + off);
		off += 8;
		if (size) {
			if (size > len - off || len - off - size < 8)
				return -EINVAL;
			dyn = tb_ld64(rec + off + size);
			out->stack = rec + off;
			out->stack_len = dyn < size ? (size_t)dyn : (size_t)size;
			out->stack_maxed = dyn >= size;
		}
	}
	return 0;
}

void perf_ring_init_raw(struct perf_ring *r, volatile uint64_t *head, volatile uint64_t *tail,
                        const uint8_t *data, uint64_t data_size, uint64_t sample_type)
{
	TB_CHECK(data_size >= 8 && (data_size & (data_size - 1)) == 0);
	r->head = head;
	r->tail = tail;
	r->data = data;
	r->data_size = data_size;
	r->sample_type = sample_type;
	r->scratch = tb_malloc(PERF_MAX_RECORD + 2 * PERF_MAX_FRAMES * sizeof(uint64_t));
}

void perf_ring_init(struct perf_ring *r, void *map, uint64_t data_size, uint64_t sample_type)
{
	uint8_t *m = map;
	perf_ring_init_raw(r, (volatile uint64_t *)(m + PERF_MMAP_DATA_HEAD_OFF),
	                   (volatile uint64_t *)(m + PERF_MMAP_DATA_TAIL_OFF),
	                   m + (size_t)sysconf(_SC_PAGESIZE), data_size, sample_type);
}

void perf_ring_release(struct perf_ring *r)
{
	tb_free(r->scratch);
	r->scratch = NULL;
}

/* Copy n bytes starting at ring counter pos into out, across the wrap. */
static void ring_copy(const struct perf_ring *r, uint64_t pos, uint8_t *out, size_t n)
{
	uint64_t off = pos & (r->data_size - 1);
	size_t first = (size_t)(r->data_size - off);
	if (first >= n) {
		memcpy(out, r->data + off, n);
		return;
	}
	memcpy(out, r->data + off, first);
	memcpy(out + first, r->data, n - first);
}

uint64_t perf_ring_read(struct perf_ring *r, uint64_t max_bytes, perf_record_fn fn, void *ctx,
                        struct perf_ring_stats *stats)
{
	uint64_t head = __atomic_load_n(r->head, __ATOMIC_ACQUIRE);
	uint64_t tail = *r->tail, start;
	uint8_t *rec = r->scratch;
	uint64_t *ips = (uint64_t *)(void *)(r->scratch + PERF_MAX_RECORD);
	struct perf_record pr;

	/* A 32-bit kernel (armv7, say) keeps both counters in a long: data_head
	 * wraps at 4 GiB and the kernel reads only our tail's low word. When
	 * only the 32-bit distance is sane, rebase the tail onto the kernel's
	 * counter: same ring position, as the ring is a power of two <= 4 GiB. */
	if (head - tail > r->data_size && (uint32_t)(head - tail) <= r->data_size)
		tail = head - (uint32_t)(head - tail);
	start = tail;
	if (head - tail > r->data_size) {
		/* The kernel never runs ahead of the tail by more than the
		 * ring; counters this far apart are corrupt. Skip them. */
		stats->bad_records++;
		tail = head;
		goto out;
	}
	while (head - tail >= 8 && (!max_bytes || tail - start < max_bytes)) {
		uint8_t hdr[8];
		uint16_t size;
		ring_copy(r, tail, hdr, 8);
		size = (uint16_t)(tb_ld32(hdr + 4) >> 16);
		if (size < 8 || (size & 7) || size > head - tail) {
			stats->bad_records++;
			tail = head; /* record boundaries are lost */
			break;
		}
		ring_copy(r, tail, rec, size);
		tail += size;
		if (perf_record_parse(rec, size, r->sample_type, &pr, ips) < 0) {
			stats->bad_records++;
			continue;
		}
		switch (pr.kind) {
		case PERF_REC_SAMPLE:
			stats->samples++;
			break;
		case PERF_REC_LOST:
			stats->lost_events++;
			stats->lost_records += pr.lost;
			break;
		case PERF_REC_COMM:
		case PERF_REC_FORK:
		case PERF_REC_EXIT:
		case PERF_REC_MMAP:
			stats->tasks++;
			break;
		default:
			stats->other++;
			continue;
		}
		if (fn)
			fn(ctx, &pr);
	}
out:
	__atomic_store_n(r->tail, tail, __ATOMIC_RELEASE);
	return tail - start;
}
