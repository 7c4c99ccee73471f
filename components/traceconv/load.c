/*
 * The trace loading and callstack walking that several traceconv modes
 * share: read an input into a trace_processor (folded, profile, report),
 * and hold the callsite tree with its frames in memory so that a sample's
 * stack is a walk of parent ids rather than one query per sample (profile,
 * report). folded keeps its own recursive SQL walk because the naming rules
 * of stackcollapse-perf.pl are written in it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"
#include "traceconv_int.h"

#define TRACECONV_CHUNK ((size_t)1 << 20)

struct tp *traceconv_load(int fd, const char *name, traceconv_peek_fn peek, void *ctx)
{
	unsigned char *buf = tb_malloc(TRACECONV_CHUNK);
	struct tp *tp = tp_new(NULL);

	for (;;) {
		ssize_t n = tb_read_all(fd, buf, TRACECONV_CHUNK);
		if (n < 0) {
			fprintf(stderr, "traceconv: cannot read '%s': %s\n", name,
			        strerror((int)-n));
			goto fail;
		}
		if (n == 0)
			break;
		if (peek)
			peek(ctx, buf, (size_t)n);
		if (tp_parse(tp, buf, (size_t)n) < 0) {
			fprintf(stderr, "traceconv: cannot load '%s': %s\n", name, tp_error(tp));
			goto fail;
		}
		if ((size_t)n < TRACECONV_CHUNK)
			break;
	}
	if (tp_end_of_file(tp) < 0) {
		fprintf(stderr, "traceconv: cannot load '%s': %s\n", name, tp_error(tp));
		goto fail;
	}
	tb_free(buf);
	return tp;
fail:
	tb_free(buf);
	tp_free(tp);
	return NULL;
}

int traceconv_query_rows(struct tp *tp, const char *sql, void (*row)(void *ctx, sqlite3_stmt *st),
                         void *ctx)
{
	sqlite3_stmt *st = NULL;
	int r;

	if (sqlite3_prepare_v2(tp_db(tp), sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(tp)));
		return -1;
	}
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		row(ctx, st);
	if (r != SQLITE_DONE)
		fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(tp)));
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : -1;
}

static uint32_t traceconv_intern_col(struct traceconv_stacks *s, sqlite3_stmt *st, int col)
{
	const char *t = (const char *)sqlite3_column_text(st, col);
	return t ? strpool_intern(&s->strings, t, (size_t)sqlite3_column_bytes(st, col)) : 0;
}

static void traceconv_mapping_row(void *ctx, sqlite3_stmt *st)
{
	struct traceconv_stacks *s = ctx;
	int64_t id = sqlite3_column_int64(st, 0);
	if (id < 0 || (size_t)id != s->mappings.len)
		return; /* ids are row indexes, dense from 0 */
	struct traceconv_mapping m = {
	    .start = sqlite3_column_int64(st, 1),
	    .end = sqlite3_column_int64(st, 2),
	    .exact_offset = sqlite3_column_int64(st, 3),
	    .name = traceconv_intern_col(s, st, 4),
	    .build_id = traceconv_intern_col(s, st, 5),
	};
	vec_push(&s->mappings, m);
}

static void traceconv_frame_row(void *ctx, sqlite3_stmt *st)
{
	struct traceconv_stacks *s = ctx;
	int64_t id = sqlite3_column_int64(st, 0);
	if (id < 0 || (size_t)id != s->frames.len)
		return;
	struct traceconv_frame f = {
	    .name = traceconv_intern_col(s, st, 1),
	    .mapping = (uint32_t)sqlite3_column_int64(st, 2),
	    .rel_pc = sqlite3_column_int64(st, 3),
	    .symbol_set = sqlite3_column_type(st, 4) == SQLITE_NULL
	                      ? UINT32_MAX
	                      : (uint32_t)sqlite3_column_int64(st, 4),
	};
	vec_push(&s->frames, f);
}

static void traceconv_callsite_row(void *ctx, sqlite3_stmt *st)
{
	struct traceconv_stacks *s = ctx;
	int64_t id = sqlite3_column_int64(st, 0);
	if (id < 0 || (size_t)id != s->callsites.len)
		return;
	struct traceconv_callsite c = {
	    .parent = sqlite3_column_type(st, 1) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 1),
	    .frame = (uint32_t)sqlite3_column_int64(st, 2),
	};
	vec_push(&s->callsites, c);
}

int traceconv_stacks_load(struct traceconv_stacks *s, struct tp *tp)
{
	memset(s, 0, sizeof *s);
	strpool_init(&s->strings);
	if (traceconv_query_rows(tp,
	                         "SELECT id, start, end, exact_offset, name, build_id "
	                         "FROM stack_profile_mapping ORDER BY id",
	                         traceconv_mapping_row, s) < 0 ||
	    traceconv_query_rows(tp,
	                         "SELECT f.id, coalesce(f.name, (SELECT y.name FROM "
	                         "stack_profile_symbol y WHERE y.symbol_set_id = f.symbol_set_id "
	                         "ORDER BY y.id LIMIT 1)), f.mapping, f.rel_pc, f.symbol_set_id "
	                         "FROM stack_profile_frame f ORDER BY f.id",
	                         traceconv_frame_row, s) < 0 ||
	    traceconv_query_rows(
	        tp, "SELECT id, parent_id, frame_id FROM stack_profile_callsite ORDER BY id",
	        traceconv_callsite_row, s) < 0)
		return -1;
	return 0;
}

void traceconv_stacks_release(struct traceconv_stacks *s)
{
	vec_release(&s->mappings);
	vec_release(&s->frames);
	vec_release(&s->callsites);
	strpool_release(&s->strings);
}

size_t traceconv_stack_walk(const struct traceconv_stacks *s, int64_t callsite,
                            struct traceconv_ids *out)
{
	vec_clear(out);
	/* A parent is interned before its children, so ids fall on the way to
	 * the root; anything else is a broken table and ends the walk. */
	int64_t prev = INT64_MAX;
	while (callsite >= 0 && callsite < prev && (size_t)callsite < s->callsites.len) {
		const struct traceconv_callsite *c = &s->callsites.data[callsite];
		if (c->frame < s->frames.len)
			vec_push(out, c->frame);
		prev = callsite;
		callsite = c->parent;
	}
	return out->len;
}

const char *traceconv_str(const struct traceconv_stacks *s, uint32_t id)
{
	return strpool_get(&s->strings, id, NULL);
}

int traceconv_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}
