/*
 * A streaming Parquet writer (parquet.c): the trace processor's tables and
 * query results as files that DuckDB, Spark, pandas or ClickHouse read
 * without tracebox. Flat schemas only (no nesting, no repetition), every
 * column OPTIONAL so NULLs are nulls.
 *
 * Values are appended column by column; tp_pq_end_rows() says that every
 * column received n more values and flushes a row group once it reaches
 * the row or byte bound, so memory stays bounded by one row group whatever
 * the table's size. The file layout is described in parquet.c.
 *
 * Single-threaded; one writer per file descriptor.
 */
#ifndef TB_TP_PARQUET_H
#define TB_TP_PARQUET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

/* Physical types we write. TP_PQ_STRING is BYTE_ARRAY annotated UTF8
 * (logical type STRING). TP_PQ_UNSET is a column whose type is decided by
 * its first value (tp_pq_set_type or the first typed append); a column that
 * never gets one is written as STRING (all its values are NULL). */
enum tp_pq_type {
	TP_PQ_UNSET,
	TP_PQ_INT32,
	TP_PQ_INT64,
	TP_PQ_DOUBLE,
	TP_PQ_STRING,
};

/* Row group bounds: whichever is reached first closes the group. */
#define TP_PQ_GROUP_ROWS (1u << 17)
#define TP_PQ_GROUP_BYTES ((size_t)32 << 20)

struct tp_pq_writer;

/* A writer of ncols columns named names[i] (copied) of types types[i] (NULL:
 * all TP_PQ_UNSET) onto fd, which must be open for writing at offset 0 and
 * stays the caller's. Writes the leading magic; errors (write failures)
 * show up on the first call that returns one. Never NULL. */
struct tp_pq_writer *tp_pq_new(int fd, uint32_t ncols, const char *const *names,
                               const enum tp_pq_type *types);
void tp_pq_free(struct tp_pq_writer *w);

/* Compress every page with GZIP (the codec every engine reads; zlib's
 * fastest level); call before the first tp_pq_end_rows. Default off
 * (uncompressed: the fastest to write). */
void tp_pq_set_gzip(struct tp_pq_writer *w, bool on);

/* Lower the row group bounds (tests; 0 keeps a bound as it is). */
void tp_pq_set_limits(struct tp_pq_writer *w, uint32_t rows, size_t bytes);

/* The type of column col: its given type, or the one its first value gave. */
enum tp_pq_type tp_pq_col_type(const struct tp_pq_writer *w, uint32_t col);
/* Fix an UNSET column's type (no-op if it already has one). */
void tp_pq_set_type(struct tp_pq_writer *w, uint32_t col, enum tp_pq_type type);

/* Append one value to column col. An UNSET column takes the value's type.
 * A value of another type than the column's is converted (an integer into a
 * DOUBLE column; a double truncated into an integer one; a number printed
 * into a STRING one; a string into a number column becomes NULL): the
 * callers that can mix types (SQL results) pick the type first. */
void tp_pq_null(struct tp_pq_writer *w, uint32_t col);
void tp_pq_i64(struct tp_pq_writer *w, uint32_t col, int64_t v);
void tp_pq_dbl(struct tp_pq_writer *w, uint32_t col, double v);
/* n non-NULL integers at once (the fast path of storage columns). */
void tp_pq_i64s(struct tp_pq_writer *w, uint32_t col, const int64_t *v, size_t n);
void tp_pq_str(struct tp_pq_writer *w, uint32_t col, const char *s, size_t len);
/* A string the caller identifies by id (the same bytes whenever the id is
 * the same; a small one, a string pool's: each id is a slot of an array;
 * tp_pq_str_repeat uses id 0): the column is dictionary-encoded, each
 * distinct id stored once per row group. A column takes its strings one
 * way per row group: only tp_pq_str_id (and tp_pq_null) from the first. */
void tp_pq_str_id(struct tp_pq_writer *w, uint32_t col, uint32_t id, const char *s, size_t len);

/* The bytes of string id, for the calls that take ids in bulk. */
typedef const char *(*tp_pq_text_fn)(void *ctx, uint32_t id, size_t *len);
/* n strings at once (the direct path of export parquet): ids holds n
 * 8-byte integers, string ids as tp_pq_str_id takes them (small: a string pool's, each id a slot of
 * an array), their bytes from text(ctx, id) the first time an id appears in a row group; null[k]
 * nonzero for NULL (null may be NULL: none). */
void tp_pq_str_ids(struct tp_pq_writer *w, uint32_t col, const void *ids, const uint8_t *null,
                   size_t n, tp_pq_text_fn text, void *ctx);
/* The same string n times (a constant column such as trace_id). */
void tp_pq_str_repeat(struct tp_pq_writer *w, uint32_t col, const char *s, size_t len, size_t n);
/* n numbers at once: v holds n 8-byte values, doubles when dbl (NaN is
 * NULL) else int64_t; null[k] nonzero for NULL (null may be NULL). */
void tp_pq_nums(struct tp_pq_writer *w, uint32_t col, const void *v, const uint8_t *null, size_t n,
                bool dbl);

/* Every column received n more values: count them as rows, and write the
 * row group out when it is full. Returns 0 or -errno (write failure; the
 * message in tp_pq_error). */
int tp_pq_end_rows(struct tp_pq_writer *w, uint32_t n);

/* Write what is buffered and the footer. Returns 0 or -errno. The file is
 * complete (but not synced) when it returns 0. */
int tp_pq_finish(struct tp_pq_writer *w);

/* Rows and bytes written so far (bytes: the file size after finish). */
uint64_t tp_pq_rows(const struct tp_pq_writer *w);
uint64_t tp_pq_bytes(const struct tp_pq_writer *w);

/* The message of the first error, "" if none. */
const char *tp_pq_error(const struct tp_pq_writer *w);

#endif /* TB_TP_PARQUET_H */
