/*
 * The Parquet writer of parquet.h: our own, from the format's
 * specification (parquet-format's parquet.thrift), no library.
 *
 * File layout (all integers little-endian):
 *
 *   "PAR1"
 *   row group 0:  column chunk 0: [PageHeader][data page] ... column chunk N-1
 *   row group 1:  ...
 *   [FileMetaData]  [u32 length of FileMetaData]  "PAR1"
 *
 * One data page (v1, UNCOMPRESSED, or GZIP with tp_pq_set_gzip) per column
 * chunk. Every column is
 * OPTIONAL (max definition level 1), so a page is
 *
 *   [u32 n][definition levels: n bytes of RLE/bit-packed hybrid, width 1]
 *   [the non-NULL values, PLAIN: INT64/DOUBLE 8 bytes, INT32 4 bytes,
 *    BYTE_ARRAY u32 length + bytes]
 *
 * A dictionary-encoded string chunk (tp_pq_str_id) is a dictionary page
 * (its distinct strings, PLAIN) and a data page whose values are
 * [u8 bit width][indices: RLE/bit-packed hybrid] (RLE_DICTIONARY).
 *
 * PageHeader and FileMetaData are Thrift structs in the compact protocol:
 * a field is a byte (delta of field id << 4 | type), or the type byte and a
 * zigzag varint id when the delta is not 1..15; integers are zigzag
 * varints, binaries a varint length and the bytes, lists a byte
 * (size << 4 | element type) or 0xf0 | type and a varint size, structs end
 * with a 0 byte. Column chunks carry min/max statistics for INT64, INT32
 * and DOUBLE columns and NULL counts for all, so engines skip row groups.
 *
 * A row group is buffered in memory (the values already PLAIN-encoded, one
 * definition byte per row) until TP_PQ_GROUP_ROWS rows or
 * TP_PQ_GROUP_BYTES bytes, then written with one write per chunk piece.
 */
#include "parquet.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

/* parquet.thrift enums. */
enum {
	PQ_T_INT32 = 1,
	PQ_T_INT64 = 2,
	PQ_T_DOUBLE = 5,
	PQ_T_BYTE_ARRAY = 6,
	PQ_REP_OPTIONAL = 1,
	PQ_CONV_UTF8 = 0,
	PQ_ENC_PLAIN = 0,
	PQ_ENC_RLE = 3,
	PQ_ENC_RLE_DICTIONARY = 8,
	PQ_CODEC_UNCOMPRESSED = 0,
	PQ_CODEC_GZIP = 2,
	PQ_PAGE_DATA = 0,
	PQ_PAGE_DICTIONARY = 2,
};

/* Thrift compact protocol types. */
enum {
	CT_STOP = 0,
	CT_I32 = 5,
	CT_I64 = 6,
	CT_BINARY = 8,
	CT_LIST = 9,
	CT_STRUCT = 12,
};

/* ---- Thrift compact encoder ------------------------------------------------ */

struct thrift {
	VEC(uint8_t) b;
	int16_t last[16]; /* last field id per open struct */
	int depth;
};

static void th_byte(struct thrift *t, uint8_t v)
{
	vec_push(&t->b, v);
}

static void th_varint(struct thrift *t, uint64_t v)
{
	while (v >= 0x80) {
		th_byte(t, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	th_byte(t, (uint8_t)v);
}

static void th_zigzag(struct thrift *t, int64_t v)
{
	th_varint(t, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void th_field(struct thrift *t, int16_t id, uint8_t type)
{
	int16_t delta = (int16_t)(id - t->last[t->depth]);
	if (delta > 0 && delta <= 15) {
		th_byte(t, (uint8_t)(delta << 4 | type));
	} else {
		th_byte(t, type);
		th_zigzag(t, id);
	}
	t->last[t->depth] = id;
}

static void th_i32(struct thrift *t, int16_t id, int32_t v)
{
	th_field(t, id, CT_I32);
	th_zigzag(t, v);
}

static void th_i64(struct thrift *t, int16_t id, int64_t v)
{
	th_field(t, id, CT_I64);
	th_zigzag(t, v);
}

static void th_bin(struct thrift *t, int16_t id, const void *p, size_t n)
{
	th_field(t, id, CT_BINARY);
	th_varint(t, n);
	vec_reserve(&t->b, n);
	memcpy(t->b.data + t->b.len, p, n);
	t->b.len += n;
}

static void th_list(struct thrift *t, int16_t id, uint8_t elem, size_t n)
{
	th_field(t, id, CT_LIST);
	if (n < 15) {
		th_byte(t, (uint8_t)(n << 4 | elem));
	} else {
		th_byte(t, (uint8_t)(0xf0 | elem));
		th_varint(t, n);
	}
}

/* A struct: as a field (id > 0) or as a list element (id 0). */
static void th_begin(struct thrift *t, int16_t id)
{
	if (id > 0)
		th_field(t, id, CT_STRUCT);
	TB_CHECK(t->depth + 1 < (int)(sizeof t->last / sizeof t->last[0]));
	t->last[++t->depth] = 0;
}

static void th_end(struct thrift *t)
{
	th_byte(t, CT_STOP);
	t->depth--;
}

/* ---- the writer ------------------------------------------------------------ */

/* A number as the statistics keep it: int64 for integer columns (INT32
 * ones too), double for DOUBLE ones. */
union pq_num {
	int64_t i;
	double d;
};

/* What the footer needs of one written column chunk. */
struct pq_chunk {
	uint64_t offset, size, nvalues, nnulls;
	uint64_t usize;       /* size with the pages uncompressed */
	uint64_t data_offset; /* offset is the dictionary page's when dict */
	bool has_minmax, dict;
	union pq_num min, max;
};

struct pq_col {
	char *name;
	enum tp_pq_type type;
	VEC(uint8_t) def;  /* per buffered row: 1 value, 0 NULL */
	VEC(uint8_t) vals; /* the non-NULL values, PLAIN */
	uint64_t nnulls;
	bool has_minmax;
	union pq_num min, max;
	/* Dictionary mode (tp_pq_str_id) for the buffered row group: vals
	 * holds the dictionary (PLAIN), idx an index per non-NULL value. */
	bool dict, by_bytes;  /* by_bytes: tp_pq_str's, keyed by hash */
	struct hmap dict_map; /* by_bytes: entry (by hash) -> index */
	VEC(size_t) dict_at;  /* by_bytes: entry -> its offset in vals */
	uint32_t ndict;       /* entries in the dictionary */
	/* By id: slot[id] is the id's index + 1 (0: not in the dictionary),
	 * ids the ids in the dictionary (to clear slot per row group). */
	uint32_t *slot;
	size_t nslot;
	VEC(uint32_t) ids;
	VEC(uint32_t) idx;
	VEC(struct pq_chunk) chunks; /* one per written row group */
};

struct pq_group {
	uint64_t rows, bytes;
};

struct tp_pq_writer {
	int fd;
	uint32_t ncols;
	struct pq_col *cols;
	uint32_t max_rows;
	size_t max_bytes;
	uint32_t rows;   /* buffered rows */
	size_t buffered; /* buffered bytes */
	uint64_t offset; /* bytes written */
	uint64_t total_rows;
	VEC(struct pq_group) groups;
	struct tb_err err;
	bool finished;
	bool gzip;              /* pages GZIP-compressed */
	VEC(uint8_t) raw, zout; /* a page before and after compression */
};

static int pq_write(struct tp_pq_writer *w, const void *p, size_t n)
{
	if (w->err.code)
		return w->err.code;
	int rc = tb_write_all(w->fd, p, n);
	if (rc < 0)
		return tb_err_errno(&w->err, rc, "cannot write");
	w->offset += n;
	return 0;
}

struct tp_pq_writer *tp_pq_new(int fd, uint32_t ncols, const char *const *names,
                               const enum tp_pq_type *types)
{
	struct tp_pq_writer *w = tb_calloc(1, sizeof *w);
	w->fd = fd;
	w->ncols = ncols;
	w->cols = tb_calloc(ncols ? ncols : 1, sizeof *w->cols);
	for (uint32_t i = 0; i < ncols; i++) {
		w->cols[i].name = tb_strdup(names[i]);
		w->cols[i].type = types ? types[i] : TP_PQ_UNSET;
	}
	w->max_rows = TP_PQ_GROUP_ROWS;
	w->max_bytes = TP_PQ_GROUP_BYTES;
	pq_write(w, "PAR1", 4);
	return w;
}

void tp_pq_free(struct tp_pq_writer *w)
{
	if (!w)
		return;
	for (uint32_t i = 0; i < w->ncols; i++) {
		tb_free(w->cols[i].name);
		vec_release(&w->cols[i].def);
		vec_release(&w->cols[i].vals);
		vec_release(&w->cols[i].chunks);
		vec_release(&w->cols[i].idx);
		vec_release(&w->cols[i].dict_at);
		vec_release(&w->cols[i].ids);
		tb_free(w->cols[i].slot);
		hmap_release(&w->cols[i].dict_map);
	}
	tb_free(w->cols);
	vec_release(&w->groups);
	vec_release(&w->raw);
	vec_release(&w->zout);
	tb_free(w);
}

void tp_pq_set_gzip(struct tp_pq_writer *w, bool on)
{
	w->gzip = on;
}

void tp_pq_set_limits(struct tp_pq_writer *w, uint32_t rows, size_t bytes)
{
	if (rows)
		w->max_rows = rows;
	if (bytes)
		w->max_bytes = bytes;
}

enum tp_pq_type tp_pq_col_type(const struct tp_pq_writer *w, uint32_t col)
{
	return w->cols[col].type;
}

void tp_pq_set_type(struct tp_pq_writer *w, uint32_t col, enum tp_pq_type type)
{
	if (w->cols[col].type == TP_PQ_UNSET)
		w->cols[col].type = type;
}

const char *tp_pq_error(const struct tp_pq_writer *w)
{
	return w->err.msg;
}

uint64_t tp_pq_rows(const struct tp_pq_writer *w)
{
	return w->total_rows + w->rows;
}

uint64_t tp_pq_bytes(const struct tp_pq_writer *w)
{
	return w->offset;
}

/* ---- appending values -------------------------------------------------------- */

/* vec_reserve only when full: these run once per value. */
#define PQ_ROOM(v, n) ((v)->cap - (v)->len >= (n) ? (void)0 : vec_reserve(v, n))

static inline void put_bytes(struct pq_col *c, const void *p, size_t n)
{
	PQ_ROOM(&c->vals, n);
	memcpy(c->vals.data + c->vals.len, p, n);
	c->vals.len += n;
}

static inline void put_def(struct pq_col *c, uint8_t d)
{
	PQ_ROOM(&c->def, 1);
	c->def.data[c->def.len++] = d;
}

void tp_pq_null(struct tp_pq_writer *w, uint32_t col)
{
	struct pq_col *c = &w->cols[col];
	put_def(c, 0);
	c->nnulls++;
	w->buffered++;
}

/* One non-NULL number of a number column: into the statistics (compared
 * as the column's type) and PLAIN into vals, width bytes of it (8; 4 for
 * INT32, the low half of the int64, little-endian). */
static inline void put_num(struct pq_col *c, union pq_num v, size_t width)
{
	bool dbl = c->type == TP_PQ_DOUBLE;
	if (!c->has_minmax) {
		c->min = c->max = v;
		c->has_minmax = true;
	} else if (dbl ? v.d < c->min.d : v.i < c->min.i) {
		c->min = v;
	} else if (dbl ? v.d > c->max.d : v.i > c->max.i) {
		c->max = v;
	}
	put_bytes(c, &v, width);
}

static inline void put_str(struct pq_col *c, const char *s, size_t n)
{
	uint32_t len = (uint32_t)n;
	PQ_ROOM(&c->vals, 4 + n);
	memcpy(c->vals.data + c->vals.len, &len, 4);
	if (n)
		memcpy(c->vals.data + c->vals.len + 4, s, n);
	c->vals.len += 4 + n;
}

void tp_pq_i64(struct tp_pq_writer *w, uint32_t col, int64_t v)
{
	struct pq_col *c = &w->cols[col];
	size_t before = c->vals.len;
	char buf[24];
	if (c->type == TP_PQ_UNSET)
		c->type = TP_PQ_INT64;
	switch (c->type) {
	case TP_PQ_INT64:
		put_num(c, (union pq_num){.i = v}, 8);
		break;
	case TP_PQ_INT32:
		put_num(c, (union pq_num){.i = (int32_t)v}, 4);
		break;
	case TP_PQ_DOUBLE:
		put_num(c, (union pq_num){.d = (double)v}, 8);
		break;
	default:
		tp_pq_str(w, col, buf, (size_t)snprintf(buf, sizeof buf, "%" PRId64, v));
		return;
	}
	put_def(c, 1);
	w->buffered += 1 + c->vals.len - before;
}

void tp_pq_i64s(struct tp_pq_writer *w, uint32_t col, const int64_t *v, size_t n)
{
	struct pq_col *c = &w->cols[col];
	if (c->type == TP_PQ_UNSET)
		c->type = TP_PQ_INT64;
	if (c->type != TP_PQ_INT64 || n == 0) {
		for (size_t i = 0; i < n; i++)
			tp_pq_i64(w, col, v[i]);
		return;
	}
	int64_t lo = c->has_minmax ? c->min.i : v[0], hi = c->has_minmax ? c->max.i : v[0];
	for (size_t i = 0; i < n; i++) {
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	c->min.i = lo;
	c->max.i = hi;
	c->has_minmax = true;
	put_bytes(c, v, n * 8);
	PQ_ROOM(&c->def, n);
	memset(c->def.data + c->def.len, 1, n);
	c->def.len += n;
	w->buffered += 9 * n;
}

void tp_pq_dbl(struct tp_pq_writer *w, uint32_t col, double v)
{
	struct pq_col *c = &w->cols[col];
	size_t before = c->vals.len;
	char buf[32];
	if (isnan(v)) {
		tp_pq_null(w, col);
		return;
	}
	if (c->type == TP_PQ_UNSET)
		c->type = TP_PQ_DOUBLE;
	switch (c->type) {
	case TP_PQ_DOUBLE:
		put_num(c, (union pq_num){.d = v}, 8);
		break;
	case TP_PQ_INT64:
		put_num(c,
		        (union pq_num){.i = v >= 9.2233720368547758e18    ? INT64_MAX
		                            : v <= -9.2233720368547758e18 ? INT64_MIN
		                                                          : (int64_t)v},
		        8);
		break;
	case TP_PQ_INT32:
		put_num(c,
		        (union pq_num){.i = v >= 2147483647.0    ? INT32_MAX
		                            : v <= -2147483648.0 ? INT32_MIN
		                                                 : (int32_t)v},
		        4);
		break;
	default:
		tp_pq_str(w, col, buf, (size_t)snprintf(buf, sizeof buf, "%.17g", v));
		return;
	}
	put_def(c, 1);
	w->buffered += 1 + c->vals.len - before;
}

struct dict_key {
	const struct pq_col *c;
	const char *s;
	uint32_t len;
};

static bool dict_eq(const void *ctx, uint64_t entry)
{
	const struct dict_key *k = ctx;
	const uint8_t *at = k->c->vals.data + k->c->dict_at.data[entry];
	uint32_t len;
	memcpy(&len, at, 4);
	return len == k->len && memcmp(at + 4, k->s, len) == 0;
}

void tp_pq_str(struct tp_pq_writer *w, uint32_t col, const char *s, size_t len)
{
	struct pq_col *c = &w->cols[col];
	if (c->type == TP_PQ_UNSET)
		c->type = TP_PQ_STRING;
	if (c->type != TP_PQ_STRING) {
		tp_pq_null(w, col);
		return;
	}
	/* Strings are dictionary-encoded, keyed by their bytes. */
	if (!c->dict && c->def.len == c->nnulls)
		c->dict = c->by_bytes = true;
	TB_CHECK(c->by_bytes); /* one way per row group */
	struct dict_key k = {c, s, (uint32_t)len};
	uint64_t h = tb_hash_bytes(s, len, 0);
	size_t slot = hmap_lookup(&c->dict_map, h, dict_eq, &k);
	uint32_t index;
	if (slot == HMAP_END) {
		index = (uint32_t)c->dict_at.len;
		vec_push(&c->dict_at, c->vals.len);
		hmap_insert(&c->dict_map, h, index, index);
		put_str(c, s, len);
		w->buffered += 4 + len;
	} else {
		index = (uint32_t)c->dict_map.slots[slot].val;
	}
	PQ_ROOM(&c->idx, 1);
	c->idx.data[c->idx.len++] = index;
	put_def(c, 1);
	w->buffered += 5;
}

/* Start a column's strings by id (dictionary by id) if it has no value in
 * this row group: false when the column is not a STRING one. */
static bool begin_ids(struct tp_pq_writer *w, uint32_t col)
{
	struct pq_col *c = &w->cols[col];
	if (c->type == TP_PQ_UNSET)
		c->type = TP_PQ_STRING;
	if (c->type != TP_PQ_STRING)
		return false;
	if (!c->dict && c->def.len == c->nnulls)
		c->dict = true;            /* no value yet in this row group */
	TB_CHECK(c->dict && !c->by_bytes); /* one way per row group */
	return true;
}

/* The dictionary index of id, adding it (its bytes from text) if new. */
static inline uint32_t id_index(struct tp_pq_writer *w, struct pq_col *c, uint32_t id,
                                tp_pq_text_fn text, void *ctx)
{
	if (id >= c->nslot) {
		size_t n = c->nslot ? c->nslot : 1024;
		while (n <= id)
			n *= 2;
		c->slot = tb_realloc(c->slot, n * sizeof *c->slot);
		memset(c->slot + c->nslot, 0, (n - c->nslot) * sizeof *c->slot);
		c->nslot = n;
	}
	if (!c->slot[id]) {
		size_t len;
		const char *s = text(ctx, id, &len);
		c->slot[id] = ++c->ndict;
		vec_push(&c->ids, id);
		put_str(c, s, len);
		w->buffered += 4 + len;
	}
	return c->slot[id] - 1;
}

struct one_text {
	const char *s;
	size_t len;
};

static const char *one_text(void *ctx, uint32_t id, size_t *len)
{
	const struct one_text *t = ctx;
	(void)id;
	*len = t->len;
	return t->s;
}

void tp_pq_str_id(struct tp_pq_writer *w, uint32_t col, uint32_t id, const char *s, size_t len)
{
	struct pq_col *c = &w->cols[col];
	if (!begin_ids(w, col)) {
		tp_pq_null(w, col);
		return;
	}
	struct one_text t = {s, len};
	uint32_t index = id_index(w, c, id, one_text, &t);
	PQ_ROOM(&c->idx, 1);
	c->idx.data[c->idx.len++] = index;
	put_def(c, 1);
	w->buffered += 5;
}

void tp_pq_str_ids(struct tp_pq_writer *w, uint32_t col, const void *ids, const uint8_t *null,
                   size_t n, tp_pq_text_fn text, void *ctx)
{
	struct pq_col *c = &w->cols[col];
	if (!begin_ids(w, col)) {
		for (size_t k = 0; k < n; k++)
			tp_pq_null(w, col);
		return;
	}
	PQ_ROOM(&c->idx, n);
	PQ_ROOM(&c->def, n);
	uint32_t *idx = c->idx.data + c->idx.len;
	uint8_t *def = c->def.data + c->def.len;
	size_t m = 0;
	uint32_t last_id = UINT32_MAX, last = 0;
	for (size_t k = 0; k < n; k++) {
		def[k] = !(null && null[k]);
		if (!def[k])
			continue;
		int64_t x;
		memcpy(&x, (const uint8_t *)ids + 8 * k, 8);
		uint32_t id = (uint32_t)x;
		if (id != last_id) {
			last = id_index(w, c, id, text, ctx);
			last_id = id;
		}
		idx[m++] = last;
	}
	c->idx.len += m;
	c->def.len += n;
	c->nnulls += n - m;
	w->buffered += n + 4 * m;
}

void tp_pq_str_repeat(struct tp_pq_writer *w, uint32_t col, const char *s, size_t len, size_t n)
{
	struct pq_col *c = &w->cols[col];
	if (!begin_ids(w, col)) {
		for (size_t k = 0; k < n; k++)
			tp_pq_null(w, col);
		return;
	}
	struct one_text t = {s, len};
	uint32_t index = id_index(w, c, 0, one_text, &t);
	PQ_ROOM(&c->idx, n);
	PQ_ROOM(&c->def, n);
	for (size_t k = 0; k < n; k++)
		c->idx.data[c->idx.len + k] = index;
	memset(c->def.data + c->def.len, 1, n);
	c->idx.len += n;
	c->def.len += n;
	w->buffered += 5 * n;
}

void tp_pq_nums(struct tp_pq_writer *w, uint32_t col, const void *v, const uint8_t *null, size_t n,
                bool dbl)
{
	struct pq_col *c = &w->cols[col];
	const uint8_t *p = v;
	if (c->type == TP_PQ_UNSET)
		c->type = dbl ? TP_PQ_DOUBLE : TP_PQ_INT64;
	if (c->type != (dbl ? TP_PQ_DOUBLE : TP_PQ_INT64)) {
		/* A conversion: value by value. */
		for (size_t k = 0; k < n; k++) {
			union pq_num x;
			memcpy(&x, p + 8 * k, 8);
			if (null && null[k])
				tp_pq_null(w, col);
			else if (dbl)
				tp_pq_dbl(w, col, x.d);
			else
				tp_pq_i64(w, col, x.i);
		}
		return;
	}
	PQ_ROOM(&c->vals, 8 * n);
	PQ_ROOM(&c->def, n);
	uint8_t *out = c->vals.data + c->vals.len, *def = c->def.data + c->def.len;
	union pq_num lo = c->min, hi = c->max;
	bool any = c->has_minmax;
	size_t m = 0;
	if (!dbl) {
		for (size_t k = 0; k < n; k++) {
			int64_t x;
			memcpy(&x, p + 8 * k, 8);
			def[k] = !(null && null[k]);
			if (!def[k])
				continue;
			if (!any) {
				lo.i = hi.i = x;
				any = true;
			}
			lo.i = x < lo.i ? x : lo.i;
			hi.i = x > hi.i ? x : hi.i;
			memcpy(out + 8 * m++, &x, 8);
		}
	} else {
		for (size_t k = 0; k < n; k++) {
			double x;
			memcpy(&x, p + 8 * k, 8);
			def[k] = !(null && null[k]) && !isnan(x);
			if (!def[k])
				continue;
			if (!any) {
				lo.d = hi.d = x;
				any = true;
			}
			lo.d = x < lo.d ? x : lo.d;
			hi.d = x > hi.d ? x : hi.d;
			memcpy(out + 8 * m++, &x, 8);
		}
	}
	c->min = lo;
	c->max = hi;
	c->has_minmax = any;
	c->vals.len += 8 * m;
	c->def.len += n;
	c->nnulls += n - m;
	w->buffered += n + 8 * m;
}

/* ---- writing a row group ----------------------------------------------------- */

/* Definition levels (width 1) of n rows as RLE/bit-packed hybrid runs. */
static void encode_levels(const uint8_t *lv, size_t n, struct thrift *out)
{
	size_t i = 0;
	while (i < n) {
		size_t run = 1;
		while (i + run < n && lv[i + run] == lv[i])
			run++;
		if (run >= 8) {
			th_varint(out, (uint64_t)run << 1);
			th_byte(out, lv[i]);
			i += run;
			continue;
		}
		/* Groups of 8 bit-packed values until a long run starts. */
		size_t start = i, groups = 0;
		do {
			groups++;
			i += 8;
			size_t r = 1;
			while (i < n && i + r < n && r < 8 && lv[i + r] == lv[i])
				r++;
			if (i < n && r >= 8)
				break;
		} while (i < n);
		th_varint(out, (uint64_t)groups << 1 | 1);
		for (size_t g = 0; g < groups; g++) {
			uint8_t byte = 0;
			for (size_t k = 0; k < 8; k++) {
				size_t at = start + g * 8 + k;
				if (at < n && lv[at])
					byte |= (uint8_t)(1u << k);
			}
			th_byte(out, byte);
		}
		if (i > n)
			i = n;
	}
}

/* Dictionary indices of n values: one RLE run when there is one entry,
 * else bit-packed groups of 8 at the smallest width that holds them. */
static void encode_indices(const uint32_t *v, size_t n, uint32_t ndict, struct thrift *out)
{
	int width = 1;
	while (width < 32 && (ndict - 1) >> width)
		width++;
	th_byte(out, (uint8_t)width);
	if (n == 0)
		return;
	if (ndict == 1) {
		th_varint(out, (uint64_t)n << 1);
		for (int b = 0; b < (width + 7) / 8; b++)
			th_byte(out, 0);
		return;
	}
	size_t groups = (n + 7) / 8;
	th_varint(out, (uint64_t)groups << 1 | 1);
	vec_reserve(&out->b, groups * (size_t)width);
	uint64_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < groups * 8; i++) {
		acc |= (uint64_t)(i < n ? v[i] : 0) << bits;
		bits += width;
		while (bits >= 8) {
			out->b.data[out->b.len++] = (uint8_t)acc;
			acc >>= 8;
			bits -= 8;
		}
	}
}

static int32_t pq_physical(enum tp_pq_type t)
{
	switch (t) {
	case TP_PQ_INT32:
		return PQ_T_INT32;
	case TP_PQ_INT64:
		return PQ_T_INT64;
	case TP_PQ_DOUBLE:
		return PQ_T_DOUBLE;
	default:
		return PQ_T_BYTE_ARRAY;
	}
}

/* The min/max of a chunk as its statistics' binaries. */
static size_t stat_bytes(enum tp_pq_type t, const void *v, uint8_t out[8])
{
	if (t == TP_PQ_INT32) {
		int32_t x = (int32_t) * (const int64_t *)v;
		memcpy(out, &x, 4);
		return 4;
	}
	memcpy(out, v, 8);
	return 8;
}

static void th_stats(struct thrift *t, int16_t id, enum tp_pq_type type, uint64_t nnulls,
                     bool has_minmax, const void *min, const void *max)
{
	uint8_t b[8];
	size_t n;
	th_begin(t, id);
	th_i64(t, 3, (int64_t)nnulls);
	if (has_minmax && type != TP_PQ_STRING && type != TP_PQ_UNSET) {
		n = stat_bytes(type, max, b);
		th_bin(t, 5, b, n);
		n = stat_bytes(type, min, b);
		th_bin(t, 6, b, n);
	}
	th_end(t);
}

/* n bytes at p as a GZIP member into w->zout (fastest level: the codec is
 * for size on disk, the export's speed comes first). */
static int gzip_page(struct tp_pq_writer *w, const void *p, size_t n)
{
	z_stream z = {0};
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return tb_err_set(&w->err, -ENOMEM, "cannot start zlib");
	size_t bound = deflateBound(&z, (uLong)n);
	vec_clear(&w->zout);
	vec_reserve(&w->zout, bound);
	z.next_in = (Bytef *)(uintptr_t)p;
	z.avail_in = (uInt)n;
	z.next_out = w->zout.data;
	z.avail_out = (uInt)bound;
	int zrc = deflate(&z, Z_FINISH);
	w->zout.len = bound - z.avail_out;
	deflateEnd(&z);
	return zrc == Z_STREAM_END ? 0 : tb_err_set(&w->err, -EIO, "zlib failed");
}

/* A page: its header (type, the sizes, then the rest in extra) and body,
 * GZIP-compressed when the writer says. *usize grows by the page's
 * uncompressed size with its header. */
static int write_page(struct tp_pq_writer *w, int32_t type, const struct thrift *extra,
                      const void *body, size_t n, uint64_t *usize)
{
	struct thrift hdr = {0};
	const void *out = body;
	size_t out_len = n;
	int rc;
	if (w->gzip) {
		if ((rc = gzip_page(w, body, n)) < 0)
			return rc;
		out = w->zout.data;
		out_len = w->zout.len;
	}
	if (n > INT32_MAX || out_len > INT32_MAX)
		return -EFBIG; /* flush_col names the column */
	th_i32(&hdr, 1, type);
	th_i32(&hdr, 2, (int32_t)n);
	th_i32(&hdr, 3, (int32_t)out_len);
	hdr.last[0] = 3;
	vec_reserve(&hdr.b, extra->b.len);
	memcpy(hdr.b.data + hdr.b.len, extra->b.data, extra->b.len);
	hdr.b.len += extra->b.len;
	*usize += hdr.b.len + n;
	rc = pq_write(w, hdr.b.data, hdr.b.len);
	if (rc == 0 && out_len)
		rc = pq_write(w, out, out_len);
	vec_release(&hdr.b);
	return rc;
}

static int flush_col(struct tp_pq_writer *w, struct pq_col *c, struct pq_chunk *ch)
{
	struct thrift lv = {0}, ex = {0}, dex = {0}, ix = {0};
	uint32_t n = w->rows;
	int rc;

	/* A column that has no value yet stays UNSET: it is all NULL here. */
	if (c->nnulls == 0)
		th_varint(&lv, (uint64_t)n << 1), th_byte(&lv, 1);
	else if (c->nnulls == n)
		th_varint(&lv, (uint64_t)n << 1), th_byte(&lv, 0);
	else
		encode_levels(c->def.data, n, &lv);
	uint32_t lvlen = (uint32_t)lv.b.len;
	/* With a dictionary, the data page holds indices and vals the
	 * dictionary page. */
	uint32_t ndict = c->by_bytes ? (uint32_t)c->dict_map.len : c->ndict;
	if (c->dict)
		encode_indices(c->idx.data, c->idx.len, ndict, &ix);
	const uint8_t *body = c->dict ? ix.b.data : c->vals.data;
	size_t body_len = c->dict ? ix.b.len : c->vals.len;
	/* The data page: [u32 levels' length][levels][values]. */
	vec_clear(&w->raw);
	vec_reserve(&w->raw, 4 + lv.b.len + body_len);
	memcpy(w->raw.data, &lvlen, 4);
	memcpy(w->raw.data + 4, lv.b.data, lv.b.len);
	if (body_len)
		memcpy(w->raw.data + 4 + lv.b.len, body, body_len);
	w->raw.len = 4 + lv.b.len + body_len;
	/* The rest of the PageHeaders after the sizes (fields 1-3). */
	ex.last[0] = 3;
	th_begin(&ex, 5);
	th_i32(&ex, 1, (int32_t)n);
	th_i32(&ex, 2, c->dict ? PQ_ENC_RLE_DICTIONARY : PQ_ENC_PLAIN);
	th_i32(&ex, 3, PQ_ENC_RLE);
	th_i32(&ex, 4, PQ_ENC_RLE);
	th_end(&ex);
	th_byte(&ex, CT_STOP);

	ch->offset = w->offset;
	ch->dict = c->dict;
	ch->usize = 0;
	if (c->dict) {
		dex.last[0] = 3;
		th_begin(&dex, 7);
		th_i32(&dex, 1, (int32_t)ndict);
		th_i32(&dex, 2, PQ_ENC_PLAIN);
		th_end(&dex);
		th_byte(&dex, CT_STOP);
		if ((rc = write_page(w, PQ_PAGE_DICTIONARY, &dex, c->vals.data, c->vals.len,
		                     &ch->usize)) < 0)
			goto out;
	}
	ch->data_offset = w->offset;
	ch->nvalues = n;
	ch->nnulls = c->nnulls;
	ch->has_minmax = c->has_minmax;
	ch->min.i = c->min.i;
	ch->max.i = c->max.i;
	if ((rc = write_page(w, PQ_PAGE_DATA, &ex, w->raw.data, w->raw.len, &ch->usize)) < 0)
		goto out;
	ch->size = w->offset - ch->offset;
	rc = 0;
out:
	if (rc < 0 && !w->err.code)
		tb_err_set(&w->err, rc, "page of column '%s' too large", c->name);
	vec_release(&lv.b);
	vec_release(&ex.b);
	vec_release(&ix.b);
	vec_release(&dex.b);
	return rc;
}

static int flush_group(struct tp_pq_writer *w)
{
	if (w->rows == 0)
		return w->err.code;
	uint64_t start = w->offset;
	for (uint32_t i = 0; i < w->ncols; i++) {
		struct pq_col *c = &w->cols[i];
		struct pq_chunk *ch = (vec_push_zeroed(&c->chunks), vec_last(&c->chunks));
		int rc = flush_col(w, c, ch);
		if (rc < 0)
			return rc;
		vec_clear(&c->def);
		vec_clear(&c->vals);
		vec_clear(&c->idx);
		vec_clear(&c->dict_at);
		hmap_clear(&c->dict_map);
		for (size_t k = 0; k < c->ids.len; k++)
			c->slot[c->ids.data[k]] = 0;
		vec_clear(&c->ids);
		c->ndict = 0;
		c->dict = c->by_bytes = false;
		c->nnulls = 0;
		c->has_minmax = false;
	}
	vec_push(&w->groups, ((struct pq_group){w->rows, w->offset - start}));
	w->total_rows += w->rows;
	w->rows = 0;
	w->buffered = 0;
	return 0;
}

int tp_pq_end_rows(struct tp_pq_writer *w, uint32_t n)
{
	w->rows += n;
	for (uint32_t i = 0; i < w->ncols; i++)
		TB_CHECK(w->cols[i].def.len == w->rows);
	if (w->rows >= w->max_rows || w->buffered >= w->max_bytes)
		return flush_group(w);
	return w->err.code;
}

/* ---- the footer ----------------------------------------------------------------- */

static void th_schema(struct thrift *t, const struct tp_pq_writer *w)
{
	th_list(t, 2, CT_STRUCT, (size_t)w->ncols + 1);
	th_begin(t, 0);
	th_bin(t, 4, "schema", 6);
	th_i32(t, 5, (int32_t)w->ncols);
	th_end(t);
	for (uint32_t i = 0; i < w->ncols; i++) {
		const struct pq_col *c = &w->cols[i];
		th_begin(t, 0);
		th_i32(t, 1, pq_physical(c->type));
		th_i32(t, 3, PQ_REP_OPTIONAL);
		th_bin(t, 4, c->name, strlen(c->name));
		if (pq_physical(c->type) == PQ_T_BYTE_ARRAY) {
			th_i32(t, 6, PQ_CONV_UTF8);
			th_begin(t, 10); /* LogicalType, the union */
			th_begin(t, 1);  /* STRING: StringType {} */
			th_end(t);
			th_end(t);
		}
		th_end(t);
	}
}

static void th_chunk(struct thrift *t, const struct pq_col *c, const struct pq_chunk *ch, bool gzip)
{
	th_begin(t, 0);
	th_i64(t, 2, (int64_t)ch->offset);
	th_begin(t, 3);
	th_i32(t, 1, pq_physical(c->type));
	th_list(t, 2, CT_I32, ch->dict ? 3 : 2);
	th_zigzag(t, PQ_ENC_PLAIN);
	th_zigzag(t, PQ_ENC_RLE);
	if (ch->dict)
		th_zigzag(t, PQ_ENC_RLE_DICTIONARY);
	th_list(t, 3, CT_BINARY, 1);
	th_varint(t, strlen(c->name));
	for (const char *p = c->name; *p; p++)
		th_byte(t, (uint8_t)*p);
	th_i32(t, 4, gzip ? PQ_CODEC_GZIP : PQ_CODEC_UNCOMPRESSED);
	th_i64(t, 5, (int64_t)ch->nvalues);
	th_i64(t, 6, (int64_t)ch->usize);
	th_i64(t, 7, (int64_t)ch->size);
	th_i64(t, 9, (int64_t)ch->data_offset);
	if (ch->dict)
		th_i64(t, 11, (int64_t)ch->offset);
	th_stats(t, 12, c->type, ch->nnulls, ch->has_minmax, &ch->min, &ch->max);
	th_end(t);
	th_end(t);
}

int tp_pq_finish(struct tp_pq_writer *w)
{
	struct thrift t = {0};
	int rc = flush_group(w);
	if (rc < 0)
		return rc;
	th_i32(&t, 1, 1);
	th_schema(&t, w);
	th_i64(&t, 3, (int64_t)w->total_rows);
	th_list(&t, 4, CT_STRUCT, w->groups.len);
	for (size_t g = 0; g < w->groups.len; g++) {
		th_begin(&t, 0);
		th_list(&t, 1, CT_STRUCT, w->ncols);
		for (uint32_t i = 0; i < w->ncols; i++)
			th_chunk(&t, &w->cols[i], &w->cols[i].chunks.data[g], w->gzip);
		th_i64(&t, 2, (int64_t)w->groups.data[g].bytes);
		th_i64(&t, 3, (int64_t)w->groups.data[g].rows);
		th_end(&t);
	}
	th_bin(&t, 6, "tracebox", 8);
	/* column_orders: every column in its type's order (TypeDefinedOrder),
	 * which tells readers that min_value/max_value are usable. */
	th_list(&t, 7, CT_STRUCT, w->ncols);
	for (uint32_t i = 0; i < w->ncols; i++) {
		th_begin(&t, 0);
		th_begin(&t, 1);
		th_end(&t);
		th_end(&t);
	}
	th_byte(&t, CT_STOP);
	uint32_t len = (uint32_t)t.b.len;
	if ((rc = pq_write(w, t.b.data, t.b.len)) == 0 && (rc = pq_write(w, &len, 4)) == 0)
		rc = pq_write(w, "PAR1", 4);
	vec_release(&t.b);
	if (rc == 0)
		w->finished = true;
	return rc;
}
