/*
 * The trace's tables (model/storage.c, sql/vtab.c): column storage
 * declared once as X-macro lists.
 *
 * Tables are structs of column arrays. A table is declared by a list
 *   #define TP_FOO_COLUMNS(X, T) X(T, name, TYPE, FLAGS) ...
 * from which the struct, the append function and the column descriptors the
 * SQL layer uses are all generated (storage.c, sql/). The row id is the row
 * index (column `id`, not stored).
 *
 * Nullable columns use sentinels, so a column is one plain array:
 *   TP_I64N  INT64_MIN is NULL      TP_U32N  UINT32_MAX is NULL
 *   TP_DBLN  NaN is NULL            TP_STR   string id 0 is NULL
 *
 * A TP_COL_SPARSE column (one that is nearly always NULL) has no array until
 * its first value is set: a NULL pointer reads as all NULL. Write it only
 * through the generated setter tp_set_<table>_<column>(t, row, v), which
 * allocates it (filled with NULL up to the table's capacity) unless v is
 * NULL; once it exists
 * the append grows it with the others. Read it through
 * tp_get_<table>_<column>(t, row) (generated for every column).
 *
 * A table may also have computed columns (TP_COL_COMPUTED, the second list
 * of its TP_TABLES entry): no storage, the SQL layer asks a getter
 * tp_<table>_computed_<column>() written by hand for each row's value.
 */
#ifndef TB_TP_TABLES_H
#define TB_TP_TABLES_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp_schema.h"

/* ---- column types ------------------------------------------------------- */

enum tp_col_type {
	TP_I64,  /* int64_t */
	TP_I64N, /* int64_t, INT64_MIN = NULL */
	TP_U32,  /* uint32_t */
	TP_U32N, /* uint32_t, UINT32_MAX = NULL */
	TP_DBL,  /* double */
	TP_DBLN, /* double, NaN = NULL */
	TP_STR,  /* uint32_t string pool id, 0 = NULL */
	TP_U8,   /* uint8_t (small enums) */
	TP_I32,  /* int32_t (values known to fit: priorities) */
};
#define TP_CTYPE_TP_I64 int64_t
#define TP_CTYPE_TP_I64N int64_t
#define TP_CTYPE_TP_U32 uint32_t
#define TP_CTYPE_TP_U32N uint32_t
#define TP_CTYPE_TP_DBL double
#define TP_CTYPE_TP_DBLN double
#define TP_CTYPE_TP_STR uint32_t
#define TP_CTYPE_TP_U8 uint8_t
#define TP_CTYPE_TP_I32 int32_t

#define TP_NULL_I64 INT64_MIN
#define TP_NULL_U32 UINT32_MAX
#define TP_NULL_DBL NAN
#define TP_NULL_STR 0u

/* The value of a new row, per column type: NULL where nullable, else 0. */
#define TP_NEW_TP_I64 0
#define TP_NEW_TP_I64N TP_NULL_I64
#define TP_NEW_TP_U32 0
#define TP_NEW_TP_U32N TP_NULL_U32
#define TP_NEW_TP_DBL 0.0
#define TP_NEW_TP_DBLN TP_NULL_DBL
#define TP_NEW_TP_STR TP_NULL_STR
#define TP_NEW_TP_U8 0
#define TP_NEW_TP_I32 0
/* Is v the new-row value (then a sparse column need not exist to hold it)? */
#define TP_ISNEW_TP_I64(v) ((v) == 0)
#define TP_ISNEW_TP_I64N(v) ((v) == TP_NULL_I64)
#define TP_ISNEW_TP_U32(v) ((v) == 0)
#define TP_ISNEW_TP_U32N(v) ((v) == TP_NULL_U32)
#define TP_ISNEW_TP_DBL(v) false /* keep -0.0 */
#define TP_ISNEW_TP_DBLN(v) isnan(v)
#define TP_ISNEW_TP_STR(v) ((v) == TP_NULL_STR)
#define TP_ISNEW_TP_U8(v) ((v) == 0)
#define TP_ISNEW_TP_I32(v) ((v) == 0)

/* Column flags. */
#define TP_COL_SORTED 0x1u   /* non-decreasing by row (checked at end of file) */
#define TP_COL_HIDDEN 0x2u   /* not in SELECT * */
#define TP_COL_SPARSE 0x4u   /* array allocated on first non-NULL write */
#define TP_COL_COMPUTED 0x8u /* no storage: a getter computes it (SQL only) */

/* ---- tables ------------------------------------------------------------- */

#define TP_COL_FIELD_(s, name, type, flags) TP_CTYPE_##type *name;
#define TP_TABLE_STRUCT_(sql, s, COLS, COMP)                                   \
	struct tp_##s##_table {                                                \
		uint32_t n, cap, alloc; /* rows: used, populated, allocated */ \
		bool sparse_live;       /* some sparse column exists */        \
		COLS(TP_COL_FIELD_, s)                                         \
	};
TP_TABLES(TP_TABLE_STRUCT_)
#undef TP_TABLE_STRUCT_

/* Append a row to a table: every column grows (sparse ones only once they
 * exist), the new row's values are their NULLs (or 0 for non-nullable).
 * Returns the row id. Inline: row appends are the parsers' hot path, and
 * the caller's stores then overwrite the NULLs in place; only growing
 * (tp_<table>_grow, storage.c) is a call. */
#define TP_INIT_COL_(s, name, type, flags) \
	if (!((flags)&TP_COL_SPARSE))      \
		t->name[row] = TP_NEW_##type;
/* Sparse columns are tested only once one of the table's exists. */
#define TP_INIT_SPARSE_(s, name, type, flags)   \
	if (((flags)&TP_COL_SPARSE) && t->name) \
		t->name[row] = TP_NEW_##type;
#define TP_APPEND_DECL_(sql, s, COLS, COMP)                              \
	void tp_##s##_grow(struct tp_##s##_table *t);                    \
	static inline uint32_t tp_##s##_append(struct tp_##s##_table *t) \
	{                                                                \
		if (__builtin_expect(t->n == t->cap, 0))                 \
			tp_##s##_grow(t);                                \
		uint32_t row = t->n++;                                   \
		COLS(TP_INIT_COL_, s)                                    \
		if (__builtin_expect(t->sparse_live, 0)) {               \
			COLS(TP_INIT_SPARSE_, s)                         \
		}                                                        \
		return row;                                              \
	}
TP_TABLES(TP_APPEND_DECL_)
#undef TP_APPEND_DECL_

/* Allocate a sparse column of cap rows, the first n (the table's rows) set
 * to NULL; the append initialises the rest as they are used, so the unused
 * tail is never touched (storage.c). */
void *tp_col_materialize(enum tp_col_type type, uint32_t cap, uint32_t n);

/* tp_get_<table>_<column>(t, row) and tp_set_<table>_<column>(t, row, v):
 * the only way to touch a TP_COL_SPARSE column; fine for any other. */
#define TP_COL_ACCESS_(s, name, type, flags)                                              \
	static inline TP_CTYPE_##type tp_get_##s##_##name(const struct tp_##s##_table *t, \
	                                                  uint32_t row)                   \
	{                                                                                 \
		return t->name ? t->name[row] : (TP_CTYPE_##type)TP_NEW_##type;           \
	}                                                                                 \
	static inline void tp_set_##s##_##name(struct tp_##s##_table *t, uint32_t row,    \
	                                       TP_CTYPE_##type v)                         \
	{                                                                                 \
		if (((flags)&TP_COL_SPARSE) && !t->name) {                                \
			if (TP_ISNEW_##type(v))                                           \
				return;                                                   \
			t->name = tp_col_materialize(type, t->alloc, t->n);               \
			t->sparse_live = true;                                            \
		}                                                                         \
		t->name[row] = v;                                                         \
	}
#define TP_TABLE_ACCESS_(sql, s, COLS, COMP) COLS(TP_COL_ACCESS_, s)
TP_TABLES(TP_TABLE_ACCESS_)
#undef TP_TABLE_ACCESS_

/* Column descriptors for the SQL layer, generated from the lists. */
struct tp;
/* A computed column's value at row, in the C type of its column type
 * (NULL as its sentinel), written to *out. */
typedef void (*tp_col_compute_fn)(const struct tp *tp, uint32_t row, void *out);
struct tp_col_desc {
	const char *name;
	enum tp_col_type type;
	uint32_t flags;
	size_t offset;         /* of the column pointer in the table struct */
	tp_col_compute_fn get; /* TP_COL_COMPUTED only */
};
#define TP_COMPUTED_DECL_(s, name, type, flags) \
	void tp_##s##_computed_##name(const struct tp *tp, uint32_t row, void *out);
#define TP_TABLE_COMPUTED_DECL_(sql, s, COLS, COMP) COMP(TP_COMPUTED_DECL_, s)
TP_TABLES(TP_TABLE_COMPUTED_DECL_)
#undef TP_TABLE_COMPUTED_DECL_
struct tp_table_desc {
	const char *sql_name;
	size_t offset; /* of the table struct in struct tp_tables */
	const struct tp_col_desc *cols;
	uint32_t ncols;
};
extern const struct tp_table_desc tp_table_descs[];
extern const uint32_t tp_table_count;

struct tp_tables {
#define TP_TABLE_MEMBER_(sql, s, COLS, COMP) struct tp_##s##_table s;
	TP_TABLES(TP_TABLE_MEMBER_)
#undef TP_TABLE_MEMBER_
};

/* Free every column of every table. */
void tp_tables_release(struct tp_tables *tables);

#endif /* TB_TP_TABLES_H */
