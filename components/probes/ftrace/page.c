/*
 * Ring-buffer pages as read from per_cpu/cpuN/trace_pipe_raw, walked record
 * by record. The layout (README.md has the diagrams) comes from the kernel's
 * ring_buffer.c and events/header_page; the header offsets are parsed at run
 * time (struct ftrace_page_layout), only the 32-bit record header is fixed
 * ABI. Every read is bounds-checked against both the commit size and the
 * bytes actually read: pages are kernel data, but a short read or a
 * corrupted page must end the walk with a status, never read past the end.
 */
#include <string.h>

#include "ftrace_int.h"

#define RB_TYPE_PADDING 29
#define RB_TYPE_TIME_EXTEND 30
#define RB_TYPE_TIME_STAMP 31
#define RB_TS_SHIFT 27
/* commit: bits 31 and 30 are flags, the size fits in the low 27 bits (as
 * trace-cmd and Perfetto read it). */
#define RB_MISSED_EVENTS (1u << 31)
#define RB_MISSED_STORED (1u << 30)
#define RB_COMMIT_MASK ((1u << 27) - 1)
/* Absolute timestamps keep 59 bits; the rest comes from the page stamp. */
#define RB_TS_MSB_MASK (~((1ull << 59) - 1))

int probes_ftrace_page_begin(struct ftrace_page_iter *it, const struct ftrace_page_layout *l,
                             const uint8_t *page, size_t len)
{
	uint64_t commit;
	size_t avail;

	memset(it, 0, sizeof *it);
	it->l = l;
	it->status = FTRACE_STATUS_ABI_INVALID_PAGE_HEADER;
	if (!page || l->page_size <= l->data_off || len < l->data_off ||
	    (size_t)l->ts_off + 8 > l->data_off ||
	    (size_t)l->commit_off + l->commit_size > l->data_off)
		return it->status;
	memcpy(&it->page_ts, page + l->ts_off, 8);
	if (l->commit_size == 8) {
		memcpy(&commit, page + l->commit_off, 8);
	} else {
		commit = tb_ld32(page + l->commit_off);
	}
	/* On little-endian machines the flags sit in the low word either way. */
	it->commit = (uint32_t)commit & RB_COMMIT_MASK;
	it->missed_events = (commit & RB_MISSED_EVENTS) != 0;
	if (it->commit > l->page_size - l->data_off)
		return it->status;
	avail = len < l->page_size ? len - l->data_off : l->page_size - l->data_off;
	/* The kernel stores the missed count right after the data as a local_t,
	 * the commit field's type: the kernel's long, 8 bytes on a 64-bit kernel
	 * even under a 32-bit tracebox (armv7 userland on arm64). */
	if (it->missed_events && (commit & RB_MISSED_STORED) &&
	    (size_t)it->commit + l->commit_size <= avail) {
		const uint8_t *m = page + l->data_off + it->commit;
		if (l->commit_size == 8) {
			memcpy(&it->missed_count, m, 8);
		} else {
			it->missed_count = tb_ld32(m);
		}
	}
	it->p = page + l->data_off;
	it->end = it->p + (it->commit < avail ? it->commit : avail);
	it->ts = it->page_ts;
	it->status = FTRACE_STATUS_OK;
	/* A commit past what was read: report the cut when the walk reaches it. */
	if (it->commit > avail)
		it->partial = true;
	return FTRACE_STATUS_OK;
}

static bool stop(struct ftrace_page_iter *it, int status)
{
	it->status = status;
	it->p = it->end;
	return false;
}

bool probes_ftrace_page_next(struct ftrace_page_iter *it, struct ftrace_record *rec)
{
	const struct ftrace_page_layout *l = it->l;
	while (it->p < it->end) {
		size_t left = (size_t)(it->end - it->p);
		uint32_t hdr, type_len, delta, ext, n;
		const uint8_t *data;

		if (left < 4)
			return stop(it, it->partial ? FTRACE_STATUS_PARTIAL_PAGE_READ
			                            : FTRACE_STATUS_ABI_SHORT_EVENT_HEADER);
		hdr = tb_ld32(it->p);
		type_len = hdr & 0x1f;
		delta = hdr >> 5;
		it->p += 4, left -= 4;

		switch (type_len) {
		case RB_TYPE_PADDING:
			/* time_delta 0: the rest of the page is empty. */
			if (delta == 0)
				return stop(it, FTRACE_STATUS_OK);
			if (left < 4)
				return stop(it, it->partial
				                    ? FTRACE_STATUS_PARTIAL_PAGE_READ
				                    : FTRACE_STATUS_ABI_SHORT_PADDING_LENGTH);
			n = tb_ld32(it->p); /* counts its own 4 bytes */
			if (n < 4)
				return stop(it, FTRACE_STATUS_ABI_INVALID_PADDING_LENGTH);
			if (n > left)
				return stop(it, it->partial
				                    ? FTRACE_STATUS_PARTIAL_PAGE_READ
				                    : FTRACE_STATUS_ABI_INVALID_PADDING_LENGTH);
			it->p += n;
			it->ts += delta;
			continue;
		case RB_TYPE_TIME_EXTEND:
		case RB_TYPE_TIME_STAMP:
			if (left < 4)
				return stop(it, it->partial ? FTRACE_STATUS_PARTIAL_PAGE_READ
				                : type_len == RB_TYPE_TIME_EXTEND
				                    ? FTRACE_STATUS_ABI_SHORT_TIME_EXTEND
				                    : FTRACE_STATUS_ABI_SHORT_TIME_STAMP);
			ext = tb_ld32(it->p);
			it->p += 4;
			if (type_len == RB_TYPE_TIME_EXTEND) {
				it->ts += ((uint64_t)ext << RB_TS_SHIFT) + delta;
			} else {
				it->ts = ((uint64_t)ext << RB_TS_SHIFT) + delta;
				it->ts |= it->page_ts & RB_TS_MSB_MASK;
			}
			continue;
		default:
			break;
		}

		/* A data record: 4 * type_len bytes, or a length word (which
		 * counts itself) when type_len is 0. */
		if (type_len == 0) {
			if (left < 4)
				return stop(it, it->partial ? FTRACE_STATUS_PARTIAL_PAGE_READ
				                            : FTRACE_STATUS_ABI_SHORT_DATA_LENGTH);
			n = tb_ld32(it->p);
			if (n == 0)
				return stop(it, FTRACE_STATUS_ABI_ZERO_DATA_LENGTH);
			if (n < 4)
				return stop(it, FTRACE_STATUS_ABI_INVALID_DATA_LENGTH);
			it->p += 4, left -= 4;
			n -= 4;
		} else {
			n = 4 * type_len;
		}
		if (n > left)
			return stop(it, it->partial ? FTRACE_STATUS_PARTIAL_PAGE_READ
			                            : FTRACE_STATUS_ABI_END_OVERFLOW);
		data = it->p;
		it->p += n;
		it->ts += delta;
		if (l->type_size == 0 || (size_t)l->type_off + l->type_size > n)
			return stop(it, FTRACE_STATUS_ABI_SHORT_EVENT_ID);
		rec->ts = it->ts;
		rec->event_id = l->type_size == 1   ? data[l->type_off]
		                : l->type_size == 2 ? (uint32_t)data[l->type_off] |
		                                          (uint32_t)data[l->type_off + 1] << 8
		                                    : tb_ld32(data + l->type_off);
		rec->data = data;
		rec->len = n;
		return true;
	}
	if (it->partial && it->status == FTRACE_STATUS_OK)
		it->status = FTRACE_STATUS_PARTIAL_PAGE_READ;
	return false;
}
