/*
 * The trace.dat importer's glue: sniffing (the magic "\x17\x08\x44tracing"),
 * buffering the file (its parts are found by offset, so it is held once,
 * as it arrives), and at the end the merge of every cpu of every buffer in
 * timestamp order (ties: the cpu listed first, as trace-cmd report orders
 * them) into events.c. Each cpu's records are in ts order already, so no
 * sorter is needed.
 */
#include "trace_dat_int.h"
#include "../importer.h"

#include <string.h>

static bool trace_dat_sniff(const uint8_t *p, size_t n)
{
	static const uint8_t magic[] = {0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g'};
	size_t k = n < sizeof magic ? n : sizeof magic;
	return n >= 3 && memcmp(p, magic, k) == 0;
}

static struct tp_importer *trace_dat_create(struct tp *tp)
{
	struct trace_dat *td = tb_calloc(1, sizeof *td);
	td->tp = tp;
	hmap_init(&td->ev_by_id);
	hmap_init(&td->printk);
	hmap_init(&td->comms);
	tp_thread_name_idle(tp);
	tp_td_events_init(td);
	return (struct tp_importer *)(void *)td;
}

static int trace_dat_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	struct trace_dat *td = (struct trace_dat *)(void *)imp;
	if (n == 0)
		return 0;
	if (!td->borrowed && td->in.len == 0) {
		size_t wl = 0;
		const uint8_t *w = tp_whole_input(td->tp, &wl);
		uint64_t size = wl; /* a 64-bit compare on every target */
		if (w && size <= TD_MAX_FILE) {
			td->borrowed = true;
			td->data = w;
			td->len = wl;
		}
	}
	if (td->borrowed)
		return 0; /* all of it is in td->data already */
	if ((uint64_t)td->in.len + n > TD_MAX_FILE || vec_try_reserve(&td->in, n) < 0)
		return tp_fail(td->tp, -EFBIG, "trace.dat: the file is too large to load");
	if (n >= (1u << 20))
		tb_populate(td->in.data + td->in.len, n); /* one call, not a fault a page */
	memcpy(td->in.data + td->in.len, p, n);
	td->in.len += n;
	return 0;
}

/* (a * m) >> s on the 96-bit product, in 64-bit arithmetic (no __int128
 * on 32-bit targets; the same result on every target). */
static uint64_t mul_shift(uint64_t a, uint32_t m, uint32_t s)
{
	uint64_t lo = (a & 0xffffffffu) * m, hi = (a >> 32) * m;
	uint64_t mid = (lo >> 32) + (hi & 0xffffffffu);
	uint64_t top = (hi >> 32) + (mid >> 32);
	uint64_t low = (mid << 32) | (lo & 0xffffffffu);
	if (s == 0)
		return low;
	if (s >= 64)
		return s >= 96 ? 0 : top >> (s - 64);
	return (low >> s) | (top << (64 - s));
}

static int64_t convert_ts(const struct trace_dat *td, int64_t ts)
{
	if (td->tsc2nsec)
		ts = (int64_t)mul_shift((uint64_t)ts, td->tsc_mult, td->tsc_shift) + td->tsc_off;
	return ts + td->ts_offset;
}

static int trace_dat_eof(struct tp_importer *imp)
{
	struct trace_dat *td = (struct trace_dat *)(void *)imp;
	if (!td->borrowed) {
		td->data = td->in.data;
		td->len = td->in.len;
	}
	int rc = tp_td_file_parse(td);
	if (rc < 0)
		return rc;
	tp_td_events_resolve(td);
	size_t ncpu = td->cpus.len;
	for (size_t i = 0; i < ncpu; i++)
		tp_td_cpu_next(td, &td->cpus.data[i]);
	bool convert = td->tsc2nsec || td->ts_offset;
	for (;;) {
		struct td_cpu *best = NULL;
		for (size_t i = 0; i < ncpu; i++) {
			struct td_cpu *c = &td->cpus.data[i];
			if (c->has && (!best || c->ev_ts < best->ev_ts))
				best = c;
		}
		if (!best)
			break;
		int64_t ts = convert ? convert_ts(td, best->ev_ts) : best->ev_ts;
		ts += td->tp->ts_shift; /* a trace manifest's offset, 0 without one */
		tp_td_event(td, best->cpu, ts, best->ev, best->ev_len);
		tp_td_cpu_next(td, best);
	}
	return 0;
}

static void trace_dat_destroy(struct tp_importer *imp)
{
	struct trace_dat *td = (struct trace_dat *)(void *)imp;
	if (!td)
		return;
	tp_td_file_release(td);
	tp_td_formats_release(td);
	tp_ftrace_release(&td->model);
	tp_args_builder_release(&td->args);
	vec_release(&td->msg);
	vec_release(&td->in);
	tb_free(td);
}

const struct tp_importer_ops tp_trace_dat_importer = {
    .name = "trace_dat",
    .sniff = trace_dat_sniff,
    .create = trace_dat_create,
    .parse = trace_dat_parse,
    .eof = trace_dat_eof,
    .destroy = trace_dat_destroy,
};
