/*
 * Indexed stats: values keyed by (stat, index), such as a trace buffer's
 * bytes written or a cpu's ftrace overruns. The index comes from the trace
 * (a buffer's position in TraceStats, a cpu number), so there can be any
 * number of them: they are appended to tp->istats in arrival order and found
 * through tp->istat_pos, a map from the hash of (stat, idx) to the entry's
 * position. The `stats` table lists them sorted by (stat, idx); tp_istats_sort
 * puts the vector in that order when the table is read.
 *
 * Import logs: a stat counted together with a trace_import_logs row saying
 * where (ts) and what (args), for the problems a user wants to find in the
 * trace rather than only count.
 */
#include "../tp_int.h"

#include <stdlib.h>
#include <string.h>

struct istat_key {
	const struct tp *tp;
	uint32_t stat;
	int64_t idx;
};

static uint64_t istat_hash(uint32_t stat, int64_t idx)
{
	return tb_hash_u64((uint64_t)idx ^ tb_hash_u64(stat));
}

static bool istat_eq(const void *ctx, uint64_t pos)
{
	const struct istat_key *k = ctx;
	const struct tp_istat_val *v = &k->tp->istats.data[pos];
	return v->stat == k->stat && v->idx == k->idx;
}

static size_t istat_slot(const struct tp *tp, enum tp_istat s, int64_t idx)
{
	struct istat_key k = {tp, (uint32_t)s, idx};
	return hmap_lookup(&tp->istat_pos, istat_hash(k.stat, idx), istat_eq, &k);
}

void tp_istat_set(struct tp *tp, enum tp_istat s, int64_t idx, int64_t v)
{
	size_t slot = istat_slot(tp, s, idx);
	if (slot != HMAP_END) {
		tp->istats.data[tp->istat_pos.slots[slot].val].value = v;
		return;
	}
	hmap_insert(&tp->istat_pos, istat_hash((uint32_t)s, idx), tp->istats.len, tp->istats.len);
	vec_push(&tp->istats, ((struct tp_istat_val){.stat = (uint32_t)s, .idx = idx, .value = v}));
	tp->istats_sorted = false;
}

bool tp_istat_get(const struct tp *tp, enum tp_istat s, int64_t idx, int64_t *v)
{
	size_t slot = istat_slot(tp, s, idx);
	if (slot == HMAP_END)
		return false;
	*v = tp->istats.data[tp->istat_pos.slots[slot].val].value;
	return true;
}

static int istat_cmp(const void *a, const void *b)
{
	const struct tp_istat_val *x = a, *y = b;
	if (x->stat != y->stat)
		return x->stat < y->stat ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void tp_istats_sort(struct tp *tp)
{
	if (tp->istats_sorted || !tp->istats.len)
		return;
	qsort(tp->istats.data, tp->istats.len, sizeof tp->istats.data[0], istat_cmp);
	hmap_clear(&tp->istat_pos);
	for (size_t i = 0; i < tp->istats.len; i++) {
		const struct tp_istat_val *v = &tp->istats.data[i];
		hmap_insert(&tp->istat_pos, istat_hash(v->stat, v->idx), i, i);
	}
	tp->istats_sorted = true;
}

void tp_import_log(struct tp *tp, enum tp_stat s, int64_t ts, uint32_t arg_set_id)
{
	tp_stat_inc(tp, s);
	struct tp_trace_import_logs_table *t = &tp->t.trace_import_logs;
	uint32_t row = tp_trace_import_logs_append(t);
	t->trace_id[row] = 0;
	t->ts[row] = ts;
	t->stat_key[row] = (int64_t)s;
	t->arg_set_id[row] = arg_set_id;
}
