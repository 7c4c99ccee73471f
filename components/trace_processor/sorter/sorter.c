/*
 * The sorter: the one place that orders events. Importers push events with
 * their trace-clock timestamp in whatever order the trace has them; at flush
 * the sorter hands them to the parse callback ordered by (ts, push order), so
 * equal timestamps keep the trace's order.
 *
 * Payloads are copied into an arena; the index is 24 bytes an event. Traces
 * are often sorted already, which is detected and costs nothing; otherwise
 * the index is radix-sorted on ts (LSD, 11-bit digits over the bits the ts
 * range needs). LSD radix sort is stable, so push order breaks ties.
 */
#include "../tp_int.h"

#include <string.h>

struct entry {
	int64_t ts;
	uint32_t len;
	void *payload;
};

struct tp_sorter {
	struct arena mem;
	VEC(struct entry) events;
	bool sorted; /* events are in ts order so far */
};

struct tp_sorter *tp_sorter_new(void)
{
	struct tp_sorter *s = tb_calloc(1, sizeof *s);
	arena_init(&s->mem, 1 << 20);
	s->sorted = true;
	return s;
}

void tp_sorter_free(struct tp_sorter *s)
{
	if (!s)
		return;
	arena_release(&s->mem);
	vec_release(&s->events);
	tb_free(s);
}

void *tp_sorter_push(struct tp_sorter *s, int64_t ts, const void *payload, size_t len)
{
	TB_CHECK(len <= UINT32_MAX && s->events.len < UINT32_MAX);
	void *copy = arena_alloc(&s->mem, len ? len : 1, 8);
	if (len && payload)
		memcpy(copy, payload, len);
	if (s->events.len && vec_last(&s->events)->ts > ts)
		s->sorted = false;
	struct entry e = {ts, (uint32_t)len, copy};
	vec_push(&s->events, e);
	return copy;
}

#define RADIX_BITS 11
#define RADIX_SIZE (1u << RADIX_BITS)

/* Stable sort of e[0..n) by ts. */
static void radix_sort(struct entry *e, size_t n)
{
	int64_t lo = e[0].ts, hi = e[0].ts;
	for (size_t i = 1; i < n; i++) {
		lo = e[i].ts < lo ? e[i].ts : lo;
		hi = e[i].ts > hi ? e[i].ts : hi;
	}
	uint64_t span = (uint64_t)hi - (uint64_t)lo;
	struct entry *tmp = tb_malloc(n * sizeof *tmp);
	struct entry *src = e, *dst = tmp;
	size_t *count = tb_malloc(RADIX_SIZE * sizeof *count);
	for (unsigned shift = 0; shift < 64 && (span >> shift) != 0; shift += RADIX_BITS) {
		memset(count, 0, RADIX_SIZE * sizeof *count);
		for (size_t i = 0; i < n; i++)
			count[(((uint64_t)src[i].ts - (uint64_t)lo) >> shift) & (RADIX_SIZE - 1)]++;
		size_t sum = 0;
		for (size_t d = 0; d < RADIX_SIZE; d++) {
			size_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(((uint64_t)src[i].ts - (uint64_t)lo) >> shift) & (RADIX_SIZE - 1)]++] =
				src[i];
		struct entry *t = src;
		src = dst;
		dst = t;
	}
	if (src != e)
		memcpy(e, src, n * sizeof *e);
	tb_free(count);
	tb_free(tmp);
}

void tp_sorter_flush(struct tp_sorter *s, struct tp *tp, tp_sorted_fn fn, void *ctx)
{
	if (!s->sorted)
		radix_sort(s->events.data, s->events.len);
	for (size_t i = 0; i < s->events.len; i++) {
		const struct entry *e = &s->events.data[i];
		fn(tp, e->ts, e->payload, e->len, ctx);
	}
	vec_release(&s->events);
	arena_reset(&s->mem);
	s->sorted = true;
}
