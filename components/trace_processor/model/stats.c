/*
 * Indexed stats: values keyed by (stat, index), such as a trace buffer's
 * bytes written or a cpu's ftrace overruns. There are a few dozen of them in
 * a trace at most, so they live in one vector kept sorted by (stat, idx),
 * which is also the order the `stats` table lists them in.
 */
#include "../tp_int.h"

#include <string.h>

/* Position of (s, idx) in tp->istats, or where it would be inserted. */
static size_t istat_find(const struct tp *tp, enum tp_istat s, int64_t idx)
{
	size_t lo = 0, hi = tp->istats.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tp_istat_val *v = &tp->istats.data[mid];
		if (v->stat < (uint32_t)s || (v->stat == (uint32_t)s && v->idx < idx))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void tp_istat_set(struct tp *tp, enum tp_istat s, int64_t idx, int64_t v)
{
	size_t i = istat_find(tp, s, idx);
	if (i < tp->istats.len && tp->istats.data[i].stat == (uint32_t)s &&
	    tp->istats.data[i].idx == idx) {
		tp->istats.data[i].value = v;
		return;
	}
	vec_reserve(&tp->istats, 1);
	memmove(&tp->istats.data[i + 1], &tp->istats.data[i],
		(tp->istats.len - i) * sizeof tp->istats.data[0]);
	tp->istats.data[i] = (struct tp_istat_val){.stat = (uint32_t)s, .idx = idx, .value = v};
	tp->istats.len++;
}

bool tp_istat_get(const struct tp *tp, enum tp_istat s, int64_t idx, int64_t *v)
{
	size_t i = istat_find(tp, s, idx);
	if (i >= tp->istats.len || tp->istats.data[i].stat != (uint32_t)s ||
	    tp->istats.data[i].idx != idx)
		return false;
	*v = tp->istats.data[i].value;
	return true;
}
