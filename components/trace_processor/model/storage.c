/*
 * Column storage. Every table of tp_int.h's TP_TABLES list gets, from its
 * X-macro column lists: the grow function behind the inline append
 * (tp_int.h) that grows all of its columns together (sparse columns only
 * once they exist), a release function, and the column descriptors the SQL layer
 * serves the table from (stored columns, then computed ones). Nothing here
 * is written by hand per table.
 *
 * Columns double when full. Big ones are mmapped and grow with mremap, so
 * the unused tail costs address space, not resident memory (1.5x growth
 * measured no different in peak RSS).
 */
#include "../tp_int.h"

#include <stddef.h>
#include <string.h>

static void *grow(void *p, uint32_t cap, size_t esz)
{
	size_t bytes;
	TB_CHECK(tb_mul_ok(cap, esz, &bytes));
	return tb_realloc(p, bytes);
}

static uint32_t next_cap(uint32_t cap)
{
	TB_CHECK(cap < UINT32_MAX / 2);
	return cap ? cap * 2 : 64;
}

#define POPULATE_ROWS ((uint32_t)1 << 15)

/* The rows appends may use after growing from cap: all of a small table's
 * allocation, a big table's next step. */
static uint32_t populate_to(uint32_t cap, uint32_t alloc)
{
	return alloc <= POPULATE_ROWS || alloc - cap <= POPULATE_ROWS ? alloc : cap + POPULATE_ROWS;
}

void *tp_col_materialize(enum tp_col_type type, uint32_t cap, uint32_t n)
{
	switch (type) {
	case TP_I64:
	case TP_I64N: {
		int64_t *a = grow(NULL, cap, sizeof *a);
		for (uint32_t i = 0; i < n; i++)
			a[i] = type == TP_I64N ? TP_NULL_I64 : 0;
		return a;
	}
	case TP_U32:
	case TP_U32N:
	case TP_STR: {
		uint32_t *a = grow(NULL, cap, sizeof *a);
		for (uint32_t i = 0; i < n; i++)
			a[i] = type == TP_U32N ? TP_NULL_U32 : 0;
		return a;
	}
	case TP_DBL:
	case TP_DBLN: {
		double *a = grow(NULL, cap, sizeof *a);
		for (uint32_t i = 0; i < n; i++)
			a[i] = type == TP_DBLN ? TP_NULL_DBL : 0.0;
		return a;
	}
	case TP_I32: {
		int32_t *a = grow(NULL, cap, sizeof *a);
		memset(a, 0, (size_t)n * sizeof *a);
		return a;
	}
	case TP_U8:
		break;
	}
	return memset(grow(NULL, cap, 1), 0, n);
}

/* Sparse columns that do not exist yet stay NULL. */
#define GROW_COL_(s, name, type, flags)          \
	if (!((flags)&TP_COL_SPARSE) || t->name) \
		t->name = grow(t->name, alloc, sizeof *t->name);
#define POPULATE_COL_(s, name, type, flags)      \
	if (!((flags)&TP_COL_SPARSE) || t->name) \
		tb_populate(t->name + t->cap, (size_t)(cap - t->cap) * sizeof *t->name);
/* Appends may use rows up to cap; a big table's columns are allocated
 * (alloc) ahead of that and made resident POPULATE_ROWS at a time, one
 * madvise a column instead of a page fault per 4 KiB of each. */
#define APPEND_FN_(sql, s, COLS, COMP)                        \
	void tp_##s##_grow(struct tp_##s##_table *t)          \
	{                                                     \
		if (t->cap == t->alloc) {                     \
			uint32_t alloc = next_cap(t->alloc);  \
			COLS(GROW_COL_, s)                    \
			t->alloc = alloc;                     \
		}                                             \
		uint32_t cap = populate_to(t->cap, t->alloc); \
		if (t->alloc > POPULATE_ROWS) {               \
			COLS(POPULATE_COL_, s)                \
		}                                             \
		t->cap = cap;                                 \
	}
TP_TABLES(APPEND_FN_)

#define COL_DESC_(s, name, type, flags) \
	{#name, type, flags, offsetof(struct tp_##s##_table, name), NULL},
#define COMPUTED_DESC_(s, name, type, flags) {#name, type, flags, 0, tp_##s##_computed_##name},
#define DESC_ARRAY_(sql, s, COLS, COMP) \
	static const struct tp_col_desc s##_cols[] = {COLS(COL_DESC_, s) COMP(COMPUTED_DESC_, s)};
TP_TABLES(DESC_ARRAY_)

#define TABLE_DESC_(sql, s, COLS, COMP) \
	{#sql, offsetof(struct tp_tables, s), s##_cols, TB_ARRAY_SIZE(s##_cols)},
const struct tp_table_desc tp_table_descs[] = {TP_TABLES(TABLE_DESC_)};
const uint32_t tp_table_count = TB_ARRAY_SIZE(tp_table_descs);

const char *tp_column_table_name(uint32_t i)
{
	return i < tp_table_count ? tp_table_descs[i].sql_name : NULL;
}

#define FREE_COL_(s, name, type, flags) tb_free(t->name);
#define RELEASE_FN_(sql, s, COLS, COMP)                   \
	static void release_##s(struct tp_##s##_table *t) \
	{                                                 \
		COLS(FREE_COL_, s)                        \
		memset(t, 0, sizeof *t);                  \
	}
TP_TABLES(RELEASE_FN_)

void tp_tables_release(struct tp_tables *tables)
{
#define CALL_RELEASE_(sql, s, COLS, COMP) release_##s(&tables->s);
	TP_TABLES(CALL_RELEASE_)
}

#define STAT_INFO_(n, sev, src, desc) {#n, sev, src, desc},
const struct tp_stat_info tp_stat_infos[TP_STAT_COUNT] = {TP_STATS(STAT_INFO_)};
const struct tp_stat_info tp_istat_infos[TP_ISTAT_COUNT] = {TP_ISTATS(STAT_INFO_)};
