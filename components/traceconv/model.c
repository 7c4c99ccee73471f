/*
 * model.c: the report model, what `traceconv report` shows and what
 * `report --json` writes for scripts, agents and `traceconv inspect`: the
 * capture (sampling rate, the CPUs that contributed samples, its health),
 * the sampled threads, the functions ranked by samples, and the distinct
 * stacks as lists of function ids, from which any caller/callee view is
 * computed without the trace.
 *
 * Functions are frames merged by label, as flame graphs merge them (the
 * page's script labels frames the same way): a frame's name (its own, else
 * its symbol's), else "[file]" after its mapping's file name, else its
 * address. A sample counts once for every function on its stack
 * (inclusive; recursion counted once) and for its leaf (self). Ids are the
 * ranks by inclusive, then self samples, then name: the same trace gives
 * the same ids. Only samples of the trace's first event type are counted
 * (as `folded` does), and only those with a callstack.
 *
 *   {"tracebox_report_model": 1, "title": "...",
 *    "capture": {"event": "cpu-clock", "sample_hz": 1000, "samples": N,
 *                "samples_total": N, "duration_ns": N,
 *                "cpus": [{"cpu": 0, "samples": N}, ...],
 *                "data_loss": [{"name": "perf_cpu_lost_records", "value": N}, ...],
 *                "unsymbolized": [{"mapping": "/x", "reason": "no build id",
 *                                  "samples": N}, ...],
 *                "healthy": true, "problems": ["...", ...]},
 *    "threads": [{"id": 0, "tid": N, "pid": N, "name": "...", "process": "...",
 *                 "samples": N}, ...],
 *    "functions": [{"id": 0, "name": "...", "module": "...", "self": N,
 *                   "inclusive": N, "self_pct": 12.5, "inclusive_pct": 50}, ...],
 *    "stacks": [{"thread": 0, "samples": N, "frames": [root id, ..., leaf id]}, ...]}
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"
#include "traceconv_int.h"

#define MODEL_MAX_DEPTH 4096 /* frames of one stack kept */

const char *traceconv_frame_label(const struct traceconv_stacks *s, uint32_t frame, char *buf,
                                  size_t cap)
{
	const struct traceconv_frame *f = &s->frames.data[frame];
	const char *name = f->name ? traceconv_str(s, f->name) : NULL;
	if (name && *name && strcmp(name, "[unknown]") != 0)
		return name;
	const char *map = f->mapping < s->mappings.len
	                      ? traceconv_str(s, s->mappings.data[f->mapping].name)
	                      : NULL;
	if (!map || !*map) {
		snprintf(buf, cap, "0x%llx", (unsigned long long)f->rel_pc);
		return buf;
	}
	const char *b = strrchr(map, '/');
	b = b ? b + 1 : map;
	if (b[0] == '[')
		return b;
	snprintf(buf, cap, "[%s]", b);
	return buf;
}

static uint32_t model_intern(struct traceconv_model *m, const char *s)
{
	return strpool_intern_cstr(&m->st.strings, s ? s : "");
}

/* The function index (before ranking) of a frame, made on first use. */
static uint32_t model_fn(struct traceconv_model *m, struct hmap *by_label, uint32_t *frame_fn,
                         uint32_t frame)
{
	char buf[64];
	if (frame_fn[frame])
		return frame_fn[frame] - 1;
	uint32_t label = model_intern(m, traceconv_frame_label(&m->st, frame, buf, sizeof buf));
	bool is_new;
	uint64_t *v = hmap_upsert(by_label, label, &is_new);
	if (is_new) {
		const struct traceconv_frame *f = &m->st.frames.data[frame];
		const char *map = f->mapping < m->st.mappings.len
		                      ? traceconv_str(&m->st, m->st.mappings.data[f->mapping].name)
		                      : "";
		const char *b = map ? strrchr(map, '/') : NULL;
		*v = m->fns.len;
		vec_push(&m->fns, ((struct traceconv_model_fn){
		                      .label = label, .module = model_intern(m, b ? b + 1 : map)}));
	}
	frame_fn[frame] = (uint32_t)*v + 1;
	return (uint32_t)*v;
}

struct stack_key {
	const struct traceconv_model *m;
	uint32_t thread;
	const uint32_t *fids;
	uint32_t n;
};

static bool stack_eq(const void *ctx, uint64_t key)
{
	const struct stack_key *k = ctx;
	const struct traceconv_model_stack *s = &k->m->stacks.data[key];
	return s->thread == k->thread && s->n == k->n &&
	       memcmp(k->m->fids.data + s->off, k->fids, k->n * sizeof *k->fids) == 0;
}

struct sample_ctx {
	struct traceconv_model *m;
	struct hmap by_label, by_stack, thread_idx;
	struct hmap unsym;  /* mapping id -> samples with an unnamed frame of it */
	struct hmap counts; /* utid << 32 | callsite -> samples (first event) */
	uint32_t event;     /* string of the first event seen, +1; 0 none yet */
	int64_t t_min, t_max;
	traceconv_row_fn row;
	void *row_ctx;
	uint32_t *frame_fn;
	struct traceconv_ids walk;
	uint32_t fids[MODEL_MAX_DEPTH];
};

static uint32_t model_thread(struct sample_ctx *c, int64_t utid)
{
	bool is_new;
	uint64_t *v = hmap_upsert(&c->thread_idx, (uint64_t)utid, &is_new);
	if (is_new) {
		*v = c->m->threads.len;
		vec_push(&c->m->threads, ((struct traceconv_model_thread){.utid = utid}));
	}
	return (uint32_t)*v;
}

/* One (thread, callsite) with its sample count. */
static void model_stack(struct sample_ctx *c, int64_t utid, int64_t callsite, uint64_t n)
{
	struct traceconv_model *m = c->m;
	uint32_t th = model_thread(c, utid);
	size_t depth = traceconv_stack_walk(&m->st, callsite, &c->walk);
	if (depth == 0)
		return;
	if (depth > MODEL_MAX_DEPTH)
		depth = MODEL_MAX_DEPTH;   /* keep the leaf end */
	for (size_t i = 0; i < depth; i++) /* walk is leaf first; fids root first */
		c->fids[depth - 1 - i] = model_fn(m, &c->by_label, c->frame_fn, c->walk.data[i]);
	/* Unnamed frames: their mapping's sample count, once per stack. */
	uint32_t counted[32];
	size_t n_counted = 0;
	for (size_t i = 0; i < depth; i++) {
		const struct traceconv_frame *f = &m->st.frames.data[c->walk.data[i]];
		const char *name = f->name ? traceconv_str(&m->st, f->name) : NULL;
		size_t j = 0;
		if ((name && *name && strcmp(name, "[unknown]") != 0) ||
		    f->mapping >= m->st.mappings.len)
			continue;
		while (j < n_counted && counted[j] != f->mapping)
			j++;
		if (j < n_counted)
			continue;
		if (n_counted < TB_ARRAY_SIZE(counted))
			counted[n_counted++] = f->mapping;
		bool is_new;
		uint64_t *v = hmap_upsert(&c->unsym, f->mapping, &is_new);
		*v = (is_new ? 0 : *v) + n;
	}
	struct stack_key k = {m, th, c->fids, (uint32_t)depth};
	uint64_t h = tb_hash_bytes(c->fids, depth * sizeof *c->fids, th);
	size_t slot = hmap_lookup(&c->by_stack, h, stack_eq, &k);
	if (slot != HMAP_END) {
		m->stacks.data[c->by_stack.slots[slot].val].samples += n;
	} else {
		uint32_t off = (uint32_t)m->fids.len;
		for (size_t i = 0; i < depth; i++)
			vec_push(&m->fids, c->fids[i]);
		hmap_insert(&c->by_stack, h, m->stacks.len, m->stacks.len);
		vec_push(&m->stacks, ((struct traceconv_model_stack){th, n, off, (uint32_t)depth}));
	}
	m->threads.data[th].samples += n;
	m->samples += n;
}

/* self and inclusive counts; recursion counted once per stack. */
static void model_counts(struct traceconv_model *m)
{
	uint32_t *seen = tb_calloc(m->fns.len + 1, sizeof *seen);
	for (size_t i = 0; i < m->stacks.len; i++) {
		const struct traceconv_model_stack *s = &m->stacks.data[i];
		const uint32_t *f = m->fids.data + s->off;
		for (uint32_t j = 0; j < s->n; j++) {
			if (seen[f[j]] == i + 1)
				continue;
			seen[f[j]] = (uint32_t)i + 1;
			m->fns.data[f[j]].inclusive += s->samples;
		}
		m->fns.data[f[s->n - 1]].self += s->samples;
	}
	tb_free(seen);
}

static const struct traceconv_model *sort_model;
static int cmp_rank(const void *a, const void *b)
{
	const struct traceconv_model_fn *x = &sort_model->fns.data[*(const uint32_t *)a];
	const struct traceconv_model_fn *y = &sort_model->fns.data[*(const uint32_t *)b];
	if (x->inclusive != y->inclusive)
		return x->inclusive > y->inclusive ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(traceconv_str(&sort_model->st, x->label),
	              traceconv_str(&sort_model->st, y->label));
}

/* Ids are ranks: sort, then renumber the stacks' function ids. */
static void model_rank(struct traceconv_model *m)
{
	size_t n = m->fns.len;
	uint32_t *order = tb_malloc((n + 1) * sizeof *order),
	         *rank = tb_malloc((n + 1) * sizeof *rank);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	sort_model = m;
	qsort(order, n, sizeof *order, cmp_rank);
	sort_model = NULL;
	struct traceconv_model_fn *sorted = tb_malloc((n + 1) * sizeof *sorted);
	for (size_t i = 0; i < n; i++) {
		rank[order[i]] = (uint32_t)i;
		sorted[i] = m->fns.data[order[i]];
	}
	if (n)
		memcpy(m->fns.data, sorted, n * sizeof *sorted);
	for (size_t i = 0; i < m->fids.len; i++)
		m->fids.data[i] = rank[m->fids.data[i]];
	tb_free(sorted);
	tb_free(order);
	tb_free(rank);
}

struct thread_ctx {
	struct traceconv_model *m;
	struct traceconv_model_thread *t;
};

static void thread_row(void *ctx, sqlite3_stmt *row)
{
	struct thread_ctx *c = ctx;
	c->t->tid = sqlite3_column_int64(row, 0);
	c->t->pid = sqlite3_column_int64(row, 1);
	c->t->name = model_intern(c->m, (const char *)sqlite3_column_text(row, 2));
	c->t->process = model_intern(c->m, (const char *)sqlite3_column_text(row, 3));
}

static void loss_row(void *ctx, sqlite3_stmt *row)
{
	struct traceconv_model *m = ctx;
	vec_push(&m->data_loss, ((struct traceconv_model_count){
	                            model_intern(m, (const char *)sqlite3_column_text(row, 0)),
	                            (uint64_t)sqlite3_column_int64(row, 1)}));
}

/* Why a mapping's frames have no names. */
static const char *unsym_reason(const char *map, const char *build_id)
{
	if (!map || !*map)
		return "anonymous memory (no perf map)";
	if (strcmp(map, "kernel") == 0 || strncmp(map, "[kernel", 7) == 0 || strstr(map, "vmlinux"))
		return "kernel (no readable kallsyms)";
	if (map[0] == '[')
		return "not a file";
	return !build_id || !*build_id ? "no build id" : "no symbols found";
}

static void cpu_count(struct traceconv_model *m, int64_t cpu)
{
	for (size_t i = 0; i < m->cpus.len; i++)
		if (m->cpus.data[i].cpu == cpu) {
			m->cpus.data[i].samples++;
			return;
		}
	vec_push(&m->cpus, ((struct traceconv_model_cpu){cpu, 1}));
}

/* One sample with a callsite: counted in the model when of the first event
 * type, and passed on to the caller's row function. */
static void sample_row(void *ctx, sqlite3_stmt *row)
{
	struct sample_ctx *c = ctx;
	struct traceconv_model *m = c->m;
	int64_t ts = sqlite3_column_int64(row, 0);
	int64_t utid =
	    sqlite3_column_type(row, 1) == SQLITE_NULL ? 0 : sqlite3_column_int64(row, 1);
	int64_t cs = sqlite3_column_int64(row, 2);
	const char *ev = (const char *)sqlite3_column_text(row, 4);
	uint32_t evid = model_intern(m, ev) + 1;
	if (c->row)
		c->row(c->row_ctx, ts, utid, cs, ev);
	if (!c->event)
		c->event = evid;
	if (evid != c->event || cs < 0 || utid < 0 || utid > UINT32_MAX || cs > UINT32_MAX)
		return;
	if (!m->samples_counted++ || ts < c->t_min)
		c->t_min = ts;
	if (m->samples_counted == 1 || ts > c->t_max)
		c->t_max = ts;
	cpu_count(m,
	          sqlite3_column_type(row, 3) == SQLITE_NULL ? -1 : sqlite3_column_int64(row, 3));
	bool is_new;
	uint64_t *v = hmap_upsert(&c->counts, (uint64_t)utid << 32 | (uint64_t)cs, &is_new);
	*v = (is_new ? 0 : *v) + 1;
}

static int cmp_unsym(const void *a, const void *b)
{
	const struct traceconv_model_unsym *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return x->mapping < y->mapping ? -1 : x->mapping > y->mapping;
}

static int cmp_cpu(const void *a, const void *b)
{
	const struct traceconv_model_cpu *x = a, *y = b;
	return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static void total_row(void *ctx, sqlite3_stmt *row)
{
	*(int64_t *)ctx = sqlite3_column_int64(row, 0);
}

static void config_row(void *ctx, sqlite3_stmt *row)
{
	static const struct {
		const char *counter, *event;
	} events[] = {
	    {"SW_CPU_CLOCK", "cpu-clock"},     {"SW_TASK_CLOCK", "task-clock"},
	    {"HW_CPU_CYCLES", "cycles"},       {"HW_INSTRUCTIONS", "instructions"},
	    {"SW_PAGE_FAULTS", "page-faults"}, {"SW_CONTEXT_SWITCHES", "context-switches"}};
	struct traceconv_model *m = ctx;
	const char *cfg = (const char *)sqlite3_column_text(row, 0);
	const char *ds = cfg ? strstr(cfg, "name: \"linux.perf\"") : NULL;
	const char *c = ds ? strstr(ds, "counter: ") : NULL;
	m->sample_hz = traceconv_config_sample_hz(cfg);
	/* A recorded trace names no event per sample: its timebase does. */
	if (c && !*traceconv_str(&m->st, m->event)) {
		m->event = model_intern(m, "cpu-clock"); /* Perfetto's default */
		for (size_t i = 0; i < TB_ARRAY_SIZE(events); i++)
			if (strncmp(c + 9, events[i].counter, strlen(events[i].counter)) == 0 &&
			    !isalnum((unsigned char)c[9 + strlen(events[i].counter)]) &&
			    c[9 + strlen(events[i].counter)] != '_')
				m->event = model_intern(m, events[i].event);
	}
}

uint64_t traceconv_config_sample_hz(const char *cfg)
{
	/* The first linux.perf source of the config's text form: its
	 * timebase frequency, else the legacy sampling_frequency, else
	 * Perfetto's default 10 Hz; 0 when it samples by period. */
	const char *ds = cfg ? strstr(cfg, "name: \"linux.perf\"") : NULL;
	if (!ds)
		return 0;
	const char *next = strstr(ds + 1, "\ndata_sources {");
	size_t len = next ? (size_t)(next - ds) : strlen(ds);
	char *block = tb_strndup(ds, len);
	uint64_t hz = 10;
	const char *p;
	if ((p = strstr(block, "\n        frequency: ")) || (p = strstr(block, " frequency: ")))
		hz = strtoull(strchr(p, ':') + 1, NULL, 10);
	else if ((p = strstr(block, "sampling_frequency: ")))
		hz = strtoull(p + 20, NULL, 10);
	else if (strstr(block, " period: "))
		hz = 0;
	tb_free(block);
	return hz;
}

int traceconv_model_build(struct traceconv_model *m, struct tp *tp, traceconv_row_fn row,
                          void *row_ctx)
{
	struct sample_ctx c = {.m = m, .row = row, .row_ctx = row_ctx};
	int64_t total = 0;
	int rc = -1;

	memset(m, 0, sizeof *m);
	if (traceconv_stacks_load(&m->st, tp) < 0)
		return -1;
	model_intern(m, ""); /* id 0 is "" */
	hmap_init(&c.by_label);
	hmap_init(&c.by_stack);
	hmap_init(&c.thread_idx);
	hmap_init(&c.unsym);
	hmap_init(&c.counts);
	c.frame_fn = tb_calloc(m->st.frames.len + 1, sizeof *c.frame_fn);
	/* One pass over the samples; everything else is small. */
	if (traceconv_query_rows(tp,
	                         "SELECT ts, utid, callsite_id, cpu, event_name "
	                         "FROM __intrinsic_perf_sample WHERE callsite_id IS NOT NULL "
	                         "ORDER BY ts, id",
	                         sample_row, &c) < 0 ||
	    traceconv_query_rows(tp, "SELECT count(*) FROM __intrinsic_perf_sample", total_row,
	                         &total) < 0 ||
	    traceconv_query_rows(tp,
	                         "SELECT name || CASE WHEN idx IS NULL THEN '' "
	                         "ELSE '[' || idx || ']' END, value FROM stats "
	                         "WHERE severity = 'data_loss' AND value > 0 ORDER BY name, idx",
	                         loss_row, m) < 0)
		goto out;
	m->event = c.event ? c.event - 1 : 0;
	if (traceconv_query_rows(tp,
	                         "SELECT str_value FROM metadata WHERE name = 'trace_config_pbtxt'",
	                         config_row, m) < 0)
		goto out;
	m->duration_ns = c.t_max - c.t_min;
	m->samples_total = (uint64_t)total;
	if (m->cpus.len > 1)
		qsort(m->cpus.data, m->cpus.len, sizeof *m->cpus.data, cmp_cpu);
	/* (thread, callsite) pairs in a fixed order, so ids do not depend on
	 * the hash table's. */
	{
		VEC(uint64_t) keys = VEC_INIT;
		for (size_t i = hmap_next(&c.counts, 0); i != HMAP_END;
		     i = hmap_next(&c.counts, i + 1))
			vec_push(&keys, c.counts.slots[i].key);
		if (keys.len > 1)
			qsort(keys.data, keys.len, sizeof *keys.data, traceconv_cmp_u64);
		for (size_t i = 0; i < keys.len; i++) {
			uint64_t n = 0;
			hmap_get(&c.counts, keys.data[i], &n);
			model_stack(&c, (int64_t)(keys.data[i] >> 32),
			            (int64_t)(keys.data[i] & 0xffffffffu), n);
		}
		vec_release(&keys);
	}
	for (size_t i = 0; i < m->threads.len; i++) {
		struct thread_ctx tc = {m, &m->threads.data[i]};
		char sql[160];
		tc.t->pid = -1;
		snprintf(sql, sizeof sql,
		         "SELECT t.tid, coalesce(p.pid, -1), t.name, p.name FROM thread t "
		         "LEFT JOIN process p USING (upid) WHERE t.utid = %lld",
		         (long long)tc.t->utid);
		if (traceconv_query_rows(tp, sql, thread_row, &tc) < 0)
			goto out;
	}
	/* Mappings with unnamed frames, most samples first. */
	for (size_t i = hmap_next(&c.unsym, 0); i != HMAP_END; i = hmap_next(&c.unsym, i + 1)) {
		const struct traceconv_mapping *mp = &m->st.mappings.data[c.unsym.slots[i].key];
		const char *name = traceconv_str(&m->st, mp->name);
		vec_push(
		    &m->unsymbolized,
		    ((struct traceconv_model_unsym){
		        model_intern(m, name),
		        model_intern(m, unsym_reason(name, traceconv_str(&m->st, mp->build_id))),
		        c.unsym.slots[i].val}));
	}
	if (m->unsymbolized.len > 1)
		qsort(m->unsymbolized.data, m->unsymbolized.len, sizeof *m->unsymbolized.data,
		      cmp_unsym);
	model_counts(m);
	model_rank(m);
	/* Health: samples to look at, nothing lost. */
	if (!m->samples)
		vec_push(&m->problems, model_intern(m, "no samples with a callstack"));
	for (size_t i = 0; i < m->data_loss.len; i++) {
		char msg[256];
		snprintf(msg, sizeof msg, "data lost: %s = %llu",
		         traceconv_str(&m->st, m->data_loss.data[i].key),
		         (unsigned long long)m->data_loss.data[i].value);
		vec_push(&m->problems, model_intern(m, msg));
	}
	m->healthy = m->problems.len == 0;
	rc = 0;
out:
	hmap_release(&c.by_label);
	hmap_release(&c.by_stack);
	hmap_release(&c.thread_idx);
	hmap_release(&c.unsym);
	hmap_release(&c.counts);
	vec_release(&c.walk);
	tb_free(c.frame_fn);
	return rc;
}

void traceconv_model_release(struct traceconv_model *m)
{
	traceconv_stacks_release(&m->st);
	vec_release(&m->fns);
	vec_release(&m->threads);
	vec_release(&m->stacks);
	vec_release(&m->fids);
	vec_release(&m->cpus);
	vec_release(&m->data_loss);
	vec_release(&m->unsymbolized);
	vec_release(&m->problems);
}

/* ---- JSON ------------------------------------------------------------------ */

void traceconv_json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static double pct(uint64_t a, uint64_t b)
{
	return b ? (double)a * 100.0 / (double)b : 0;
}

/* The capture object (also embedded in the HTML report). */
void traceconv_model_capture_json(const struct traceconv_model *m, FILE *out)
{
	const struct traceconv_stacks *s = &m->st;
	fputs("{\"event\":", out);
	traceconv_json_str(out, traceconv_str(s, m->event));
	fprintf(out,
	        ",\"sample_hz\":%llu,\"samples\":%llu,\"samples_total\":%llu,\"duration_ns\":%lld",
	        (unsigned long long)m->sample_hz, (unsigned long long)m->samples,
	        (unsigned long long)m->samples_total, (long long)m->duration_ns);
	fputs(",\"cpus\":[", out);
	for (size_t i = 0; i < m->cpus.len; i++) {
		const struct traceconv_model_cpu *c = &m->cpus.data[i];
		if (c->cpu < 0)
			fprintf(out, "%s{\"cpu\":null", i ? "," : "");
		else
			fprintf(out, "%s{\"cpu\":%lld", i ? "," : "", (long long)c->cpu);
		fprintf(out, ",\"samples\":%llu}", (unsigned long long)c->samples);
	}
	fputs("],\"data_loss\":[", out);
	for (size_t i = 0; i < m->data_loss.len; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", out);
		traceconv_json_str(out, traceconv_str(s, m->data_loss.data[i].key));
		fprintf(out, ",\"value\":%llu}", (unsigned long long)m->data_loss.data[i].value);
	}
	fputs("],\"unsymbolized\":[", out);
	for (size_t i = 0; i < m->unsymbolized.len; i++) {
		const struct traceconv_model_unsym *u = &m->unsymbolized.data[i];
		fputs(i ? ",{\"mapping\":" : "{\"mapping\":", out);
		traceconv_json_str(out, traceconv_str(s, u->mapping));
		fputs(",\"reason\":", out);
		traceconv_json_str(out, traceconv_str(s, u->reason));
		fprintf(out, ",\"samples\":%llu}", (unsigned long long)u->samples);
	}
	fprintf(out, "],\"healthy\":%s,\"problems\":[", m->healthy ? "true" : "false");
	for (size_t i = 0; i < m->problems.len; i++) {
		if (i)
			fputc(',', out);
		traceconv_json_str(out, traceconv_str(s, m->problems.data[i]));
	}
	fputs("]}", out);
}

void traceconv_model_json(const struct traceconv_model *m, FILE *out, const char *title)
{
	const struct traceconv_stacks *s = &m->st;
	fputs("{\"tracebox_report_model\":1,\"title\":", out);
	traceconv_json_str(out, title);
	fputs(",\n\"capture\":", out);
	traceconv_model_capture_json(m, out);
	fputs(",\n\"threads\":[", out);
	for (size_t i = 0; i < m->threads.len; i++) {
		const struct traceconv_model_thread *t = &m->threads.data[i];
		fprintf(out, "%s\n{\"id\":%zu,\"tid\":%lld,\"pid\":%lld,\"name\":", i ? "," : "", i,
		        (long long)t->tid, (long long)t->pid);
		traceconv_json_str(out, traceconv_str(s, t->name));
		fputs(",\"process\":", out);
		traceconv_json_str(out, traceconv_str(s, t->process));
		fprintf(out, ",\"samples\":%llu}", (unsigned long long)t->samples);
	}
	fputs("],\n\"functions\":[", out);
	for (size_t i = 0; i < m->fns.len; i++) {
		const struct traceconv_model_fn *f = &m->fns.data[i];
		fprintf(out, "%s\n{\"id\":%zu,\"name\":", i ? "," : "", i);
		traceconv_json_str(out, traceconv_str(s, f->label));
		fputs(",\"module\":", out);
		traceconv_json_str(out, traceconv_str(s, f->module));
		fprintf(
		    out,
		    ",\"self\":%llu,\"inclusive\":%llu,\"self_pct\":%.2f,\"inclusive_pct\":%.2f}",
		    (unsigned long long)f->self, (unsigned long long)f->inclusive,
		    pct(f->self, m->samples), pct(f->inclusive, m->samples));
	}
	fputs("],\n\"stacks\":[", out);
	for (size_t i = 0; i < m->stacks.len; i++) {
		const struct traceconv_model_stack *k = &m->stacks.data[i];
		fprintf(out, "%s\n{\"thread\":%u,\"samples\":%llu,\"frames\":[", i ? "," : "",
		        k->thread, (unsigned long long)k->samples);
		for (uint32_t j = 0; j < k->n; j++)
			fprintf(out, j ? ",%u" : "%u", m->fids.data[k->off + j]);
		fputs("]}", out);
	}
	fputs("]}\n", out);
}
