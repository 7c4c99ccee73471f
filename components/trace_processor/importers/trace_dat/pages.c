/*
 * Ring-buffer pages -> records, one cpu at a time (the kernel's format,
 * described by header_page and header_event; README.md has the layout).
 *
 *   page:   timestamp u64 | commit (bytes of records; high bits are flags)
 *           | records ... (data at hp_data_off)
 *   record: u32 header: type_len (5 bits) | time_delta (27 bits)
 *           type_len 1..28   data of type_len * 4 bytes follows
 *           type_len 0       u32 length (itself included), then data
 *           29 padding       time_delta 0: the rest of the page is empty;
 *                            else u32 length of a discarded record
 *           30 time extend   u32 array: delta += array << 27
 *           31 time stamp    u32 array: absolute ts (array << 27 | delta)
 *
 * A page whose commit has bit 31 set follows lost events (the ring buffer
 * overwrote or dropped them): their number (stored after the records when
 * bit 30 is set, else 1) is added to trace_dat_missed_events, as
 * trace-cmd report prints "[N EVENTS DROPPED]".
 * A record's ts is the page's plus every delta before it. A page whose
 * commit does not fit is skipped (trace_dat_page_corrupt); a record that
 * runs past its page ends the page.
 */
#include "trace_dat_int.h"

#define TD_COMMIT_MASK ((1ull << 27) - 1) /* the flags live above */
#define TD_MISSED_EVENTS (1ull << 31)     /* events were lost before the page */
#define TD_MISSED_STORED (1ull << 30)     /* ... and their count follows its records */
#define TD_ABS_TS_MASK ((1ull << 59) - 1)

/* The next area of pages: the raw data, or the next inflated chunk. */
static bool next_area(struct trace_dat *td, struct td_cpu *c)
{
	if (!c->compressed || !c->chunks_left)
		return false;
	c->chunks_left--;
	if (c->end - c->data < 8) {
		tp_stat_inc(td->tp, TP_STAT_trace_dat_truncated);
		c->chunks_left = 0;
		return false;
	}
	uint32_t csize = td_r32(td, c->data), usize = td_r32(td, c->data + 4);
	c->data += 8;
	if (csize > (size_t)(c->end - c->data) || usize > TD_MAX_CHUNK) {
		tp_stat_inc(td->tp, TP_STAT_trace_dat_truncated);
		c->chunks_left = 0;
		return false;
	}
	uint8_t *out;
	const uint8_t *src = c->data;
	c->data += csize;
	if (tp_td_inflate(td, src, csize, usize, &out) < 0) {
		tp_stat_inc(td->tp, TP_STAT_trace_dat_decompress_failure);
		return next_area(td, c);
	}
	vec_release(&c->chunk);
	c->chunk.data = out;
	c->chunk.len = c->chunk.cap = usize;
	c->pg = out;
	c->pg_end = out + usize;
	return true;
}

/* Events were lost before this page: how many is stored after its
 * records when the kernel had room (bit 30), else it is not known (1). */
static void missed(struct trace_dat *td, const uint8_t *pg, size_t avail, uint64_t commit,
                   uint64_t flags)
{
	uint64_t n = 1, at = td->hp_data_off + commit;
	if ((flags & TD_MISSED_STORED) && at + td->hp_commit_size <= avail &&
	    at + td->hp_commit_size <= td->page_size)
		n = td->hp_commit_size == 8 ? td_r64(td, pg + at) : td_r32(td, pg + at);
	if (n > INT32_MAX)
		n = 1;
	tp_stat_set(td->tp, TP_STAT_trace_dat_missed_events,
	            (int64_t)(td->tp->stats[TP_STAT_trace_dat_missed_events] + n));
}

/* The next page with records into c->p / c->pe; false at the end. */
static bool next_page(struct trace_dat *td, struct td_cpu *c)
{
	for (;;) {
		if (c->pg >= c->pg_end && !next_area(td, c))
			return false;
		const uint8_t *pg = c->pg;
		size_t avail = (size_t)(c->pg_end - pg);
		c->pg += avail < td->page_size ? avail : td->page_size;
		if (avail < td->hp_data_off) {
			tp_stat_inc(td->tp, TP_STAT_trace_dat_truncated);
			continue;
		}
		uint64_t commit = td->hp_commit_size == 8 ? td_r64(td, pg + td->hp_commit_off)
		                                          : td_r32(td, pg + td->hp_commit_off);
		uint64_t flags = commit;
		commit &= TD_COMMIT_MASK;
		if (commit > td->page_size - td->hp_data_off) {
			tp_stat_inc(td->tp, TP_STAT_trace_dat_page_corrupt);
			continue;
		}
		if (commit > avail - td->hp_data_off) {
			tp_stat_inc(td->tp, TP_STAT_trace_dat_truncated);
			commit = avail - td->hp_data_off;
		}
		if (flags & TD_MISSED_EVENTS)
			missed(td, pg, avail, commit, flags);
		c->ts = (int64_t)td_r64(td, pg + td->hp_ts_off);
		c->p = pg + td->hp_data_off;
		c->pe = c->p + commit;
		return true;
	}
}

void tp_td_cpu_next(struct trace_dat *td, struct td_cpu *c)
{
	for (;;) {
		if (c->pe - c->p < 4) {
			if (!next_page(td, c)) {
				c->has = false;
				return;
			}
			continue;
		}
		uint32_t h = td_r32(td, c->p);
		uint32_t type_len = td->be ? h >> 27 : h & 31;
		uint32_t delta = td->be ? h & ((1u << 27) - 1) : h >> 5;
		size_t left = (size_t)(c->pe - c->p);
		if (type_len >= 29) {
			if (type_len == 29 && delta == 0) {
				c->p = c->pe;
				continue;
			}
			if (left < 8) {
				tp_stat_inc(td->tp, TP_STAT_trace_dat_page_corrupt);
				c->p = c->pe;
				continue;
			}
			uint32_t a = td_r32(td, c->p + 4);
			if (type_len == 29) {
				if (a > left - 4) {
					tp_stat_inc(td->tp, TP_STAT_trace_dat_page_corrupt);
					c->p = c->pe;
					continue;
				}
				c->p += 4 + (size_t)a;
			} else if (type_len == 30) {
				c->ts += (int64_t)((uint64_t)a << 27 | delta);
				c->p += 8;
			} else {
				uint64_t abs = ((uint64_t)a << 27 | delta) & TD_ABS_TS_MASK;
				c->ts = (int64_t)(((uint64_t)c->ts & ~TD_ABS_TS_MASK) | abs);
				c->p += 8;
			}
			continue;
		}
		const uint8_t *d;
		uint32_t len;
		if (type_len == 0) {
			uint32_t a = left >= 8 ? td_r32(td, c->p + 4) : 0;
			if (left < 8 || a < 4 || a > left - 4) {
				tp_stat_inc(td->tp, TP_STAT_trace_dat_page_corrupt);
				c->p = c->pe;
				continue;
			}
			d = c->p + 8;
			len = a - 4;
			c->p += 4 + (size_t)a;
		} else {
			len = type_len * 4;
			if (len > left - 4) {
				tp_stat_inc(td->tp, TP_STAT_trace_dat_page_corrupt);
				c->p = c->pe;
				continue;
			}
			d = c->p + 4;
			c->p += 4 + (size_t)len;
		}
		c->ts += delta;
		c->ev = d;
		c->ev_len = len;
		c->ev_ts = c->ts;
		c->has = true;
		return;
	}
}

void tp_td_cpu_release(struct td_cpu *c)
{
	vec_release(&c->chunk);
}
