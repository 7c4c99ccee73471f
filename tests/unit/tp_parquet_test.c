/*
 * The Parquet writer (io/parquet.c), read back by a small independent
 * reader here: the footer (Thrift compact), every column chunk's page
 * header, definition levels (RLE/bit-packed hybrid) and PLAIN values.
 * Edge cases: an empty table, an all-NULL column, long strings, many row
 * groups, a column typed by its first value, a failing write. tests/cli/
 * t1300 reads real exports back with DuckDB.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

#include "base.h"
#include "io/parquet.h"

/* ---- a reader ---------------------------------------------------------------- */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;
	for (int s = 0; s < 64; s += 7) {
		if (r->p >= r->end) {
			r->bad = 1;
			return 0;
		}
		uint8_t b = *r->p++;
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return v;
	}
	r->bad = 1;
	return 0;
}

static int64_t rd_zz(struct rd *r)
{
	uint64_t v = rd_varint(r);
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* Next field of a struct: its id and compact type, false at STOP. */
static int rd_field(struct rd *r, int *last, int *id, int *type)
{
	if (r->p >= r->end) {
		r->bad = 1;
		return 0;
	}
	uint8_t b = *r->p++;
	if (b == 0)
		return 0;
	*type = b & 0x0f;
	*id = (b >> 4) ? *last + (b >> 4) : (int)rd_zz(r);
	*last = *id;
	return 1;
}

static void rd_skip(struct rd *r, int type);

static void rd_skip_struct(struct rd *r)
{
	int last = 0, id, type;
	while (!r->bad && rd_field(r, &last, &id, &type))
		rd_skip(r, type);
}

static size_t rd_list(struct rd *r, int *elem)
{
	if (r->p >= r->end) {
		r->bad = 1;
		return 0;
	}
	uint8_t b = *r->p++;
	*elem = b & 0x0f;
	return (b >> 4) == 15 ? (size_t)rd_varint(r) : (size_t)(b >> 4);
}

static void rd_skip(struct rd *r, int type)
{
	switch (type) {
	case 1:
	case 2:
		break;
	case 3:
		r->p++;
		break;
	case 4:
	case 5:
	case 6:
		rd_varint(r);
		break;
	case 7:
		r->p += 8;
		break;
	case 8:
		r->p += rd_varint(r);
		break;
	case 9: {
		int elem;
		size_t n = rd_list(r, &elem);
		for (size_t i = 0; i < n && !r->bad; i++)
			rd_skip(r, elem);
		break;
	}
	case 12:
		rd_skip_struct(r);
		break;
	default:
		r->bad = 1;
	}
	if (r->p > r->end)
		r->bad = 1;
}

struct chunk {
	int64_t offset, dict_offset, nvalues, nulls, type;
	int64_t min, max;
	int has_min;
};

#define MAXC 8
#define MAXG 64
struct meta {
	int64_t rows, ncols_schema, types[MAXC];
	size_t ngroups;
	int64_t group_rows[MAXG];
	struct chunk ch[MAXG][MAXC];
};

static void rd_stats(struct rd *r, struct chunk *c)
{
	int last = 0, id, type;
	while (!r->bad && rd_field(r, &last, &id, &type)) {
		if (id == 3 && type == 6) {
			c->nulls = rd_zz(r);
		} else if ((id == 5 || id == 6) && type == 8) {
			size_t n = (size_t)rd_varint(r);
			int64_t v = 0;
			if (n == 8)
				memcpy(&v, r->p, 8);
			else if (n == 4) {
				int32_t x;
				memcpy(&x, r->p, 4);
				v = x;
			}
			r->p += n;
			if (id == 5)
				c->max = v;
			else
				c->min = v, c->has_min = 1;
		} else {
			rd_skip(r, type);
		}
	}
}

static void rd_chunk(struct rd *r, struct chunk *c)
{
	int last = 0, id, type;
	while (!r->bad && rd_field(r, &last, &id, &type)) {
		if (id != 3 || type != 12) {
			rd_skip(r, type);
			continue;
		}
		int l2 = 0;
		while (!r->bad && rd_field(r, &l2, &id, &type)) {
			if (id == 1)
				c->type = rd_zz(r);
			else if (id == 5)
				c->nvalues = rd_zz(r);
			else if (id == 9)
				c->offset = rd_zz(r);
			else if (id == 11)
				c->dict_offset = rd_zz(r);
			else if (id == 12)
				rd_stats(r, c);
			else
				rd_skip(r, type);
		}
	}
}

static int read_meta(const uint8_t *f, size_t n, struct meta *m)
{
	memset(m, 0, sizeof *m);
	if (n < 12 || memcmp(f, "PAR1", 4) || memcmp(f + n - 4, "PAR1", 4))
		return -1;
	uint32_t len;
	memcpy(&len, f + n - 8, 4);
	if (len > n - 12)
		return -1;
	struct rd r = {f + n - 8 - len, f + n - 8, 0};
	int last = 0, id, type, elem;
	while (!r.bad && rd_field(&r, &last, &id, &type)) {
		if (id == 3) {
			m->rows = rd_zz(&r);
		} else if (id == 2) {
			size_t k = rd_list(&r, &elem);
			m->ncols_schema = (int64_t)k - 1;
			for (size_t i = 0; i < k; i++) {
				int l2 = 0;
				m->types[i < MAXC ? i : 0] = -1;
				while (!r.bad && rd_field(&r, &l2, &id, &type)) {
					if (id == 1 && i > 0 && i <= MAXC)
						m->types[i - 1] = rd_zz(&r);
					else
						rd_skip(&r, type);
				}
			}
		} else if (id == 4) {
			m->ngroups = rd_list(&r, &elem);
			for (size_t g = 0; g < m->ngroups && g < MAXG; g++) {
				int l2 = 0;
				while (!r.bad && rd_field(&r, &l2, &id, &type)) {
					if (id == 1) {
						size_t k = rd_list(&r, &elem);
						for (size_t c = 0; c < k && c < MAXC; c++)
							rd_chunk(&r, &m->ch[g][c]);
					} else if (id == 3) {
						m->group_rows[g] = rd_zz(&r);
					} else {
						rd_skip(&r, type);
					}
				}
			}
		} else {
			rd_skip(&r, type);
		}
	}
	return r.bad ? -1 : 0;
}

/* One column chunk's definition levels into def (n of them) and the
 * position of its PLAIN values in *vals. */
static int read_page(const uint8_t *f, size_t fn, int64_t off, uint8_t *def, size_t n,
                     const uint8_t **vals)
{
	struct rd r = {f + off, f + fn, 0};
	int last = 0, id, type;
	int64_t nvalues = -1;
	while (!r.bad && rd_field(&r, &last, &id, &type)) {
		if (id == 5 && type == 12) {
			int l2 = 0;
			while (!r.bad && rd_field(&r, &l2, &id, &type))
				if (id == 1)
					nvalues = rd_zz(&r);
				else
					rd_skip(&r, type);
		} else {
			rd_skip(&r, type);
		}
	}
	if (r.bad || nvalues != (int64_t)n)
		return -1;
	uint32_t lvlen;
	memcpy(&lvlen, r.p, 4);
	struct rd l = {r.p + 4, r.p + 4 + lvlen, 0};
	size_t at = 0;
	while (at < n && l.p < l.end && !l.bad) {
		uint64_t h = rd_varint(&l);
		if (h & 1) {
			for (uint64_t g = 0; g < (h >> 1); g++) {
				uint8_t b = *l.p++;
				for (int k = 0; k < 8; k++)
					if (at < n)
						def[at++] = (uint8_t)(b >> k & 1);
					else if (b >> k & 1)
						return -1;
			}
		} else {
			uint8_t v = *l.p++;
			for (uint64_t k = 0; k < (h >> 1); k++) {
				if (at >= n)
					return -1;
				def[at++] = v;
			}
		}
	}
	if (at != n || l.bad)
		return -1;
	*vals = r.p + 4 + lvlen;
	return 0;
}

/* Skip a page header at f + off; the page body's position, or NULL. */
static const uint8_t *page_body(const uint8_t *f, size_t fn, int64_t off)
{
	struct rd r = {f + off, f + fn, 0};
	rd_skip_struct(&r);
	return r.bad ? NULL : r.p;
}

/* The strings of a dictionary-encoded chunk of n rows (at most 4096
 * values, 64 entries): def levels into def, each non-NULL row's bytes into
 * s[i] / len[i]. */
static int read_dict_strings(const uint8_t *f, size_t fn, const struct chunk *c, uint8_t *def,
                             size_t n, const uint8_t **s, uint32_t *len)
{
	const uint8_t *d = c->dict_offset ? page_body(f, fn, c->dict_offset) : NULL, *v;
	if (!d || read_page(f, fn, c->offset, def, n, &v) < 0)
		return -1;
	const uint8_t *entries[64];
	uint32_t lens[64];
	size_t nd = 0;
	while (d < f + c->offset && nd < 64) {
		memcpy(&lens[nd], d, 4);
		entries[nd] = d + 4;
		d += 4 + lens[nd++];
	}
	int width = *v++;
	size_t at = 0, nv = 0;
	uint32_t idx[4096];
	for (size_t i = 0; i < n; i++)
		nv += def[i];
	if (nv > 4096 || width < 1 || width > 31)
		return -1;
	struct rd r = {v, f + fn, 0};
	while (at < nv && !r.bad) {
		uint64_t h = rd_varint(&r);
		if (h & 1) {
			uint64_t acc = 0;
			int bits = 0;
			for (uint64_t k = 0; k < (h >> 1) * 8; k++) {
				while (bits < width) {
					acc |= (uint64_t)*r.p++ << bits;
					bits += 8;
				}
				if (at < nv)
					idx[at++] = (uint32_t)(acc & ((1ull << width) - 1));
				acc >>= width;
				bits -= width;
			}
		} else {
			uint32_t x = 0;
			for (int b = 0; b < (width + 7) / 8; b++)
				x |= (uint32_t)*r.p++ << (8 * b);
			for (uint64_t k = 0; k < (h >> 1) && at < nv; k++)
				idx[at++] = x;
		}
	}
	if (at != nv)
		return -1;
	for (size_t i = 0, j = 0; i < n; i++) {
		if (!def[i])
			continue;
		if (idx[j] >= nd)
			return -1;
		s[i] = entries[idx[j]];
		len[i] = lens[idx[j++]];
	}
	return 0;
}

/* ---- helpers -------------------------------------------------------------------- */

static int tmp_fd(char *path, size_t n)
{
	snprintf(path, n, "/tmp/tp_parquet_test.XXXXXX");
	return mkstemp(path);
}

static uint8_t *slurp(const char *path, size_t *n)
{
	char *buf = NULL;
	if (tb_read_file(path, &buf, n, (size_t)1 << 30, NULL) < 0)
		return NULL;
	return (uint8_t *)buf;
}

/* ---- tests ----------------------------------------------------------------------- */

TEST(tp_parquet_empty_table)
{
	char path[64];
	int fd = tmp_fd(path, sizeof path);
	CHECK(fd >= 0);
	const char *names[] = {"a", "b"};
	enum tp_pq_type types[] = {TP_PQ_INT64, TP_PQ_STRING};
	struct tp_pq_writer *w = tp_pq_new(fd, 2, names, types);
	int rc = tp_pq_finish(w);
	tp_pq_free(w);
	close(fd);
	size_t n;
	uint8_t *f = slurp(path, &n);
	unlink(path);
	CHECK_EQ(rc, 0);
	CHECK(f != NULL);
	struct meta m;
	int mrc = read_meta(f, n, &m);
	tb_free(f);
	CHECK_EQ(mrc, 0);
	CHECK_EQ(m.rows, 0);
	CHECK_EQ(m.ngroups, 0);
	CHECK_EQ(m.ncols_schema, 2);
	CHECK_EQ(m.types[0], 2); /* INT64 */
	CHECK_EQ(m.types[1], 6); /* BYTE_ARRAY */
}

TEST(tp_parquet_nulls_and_row_groups)
{
	char path[64];
	int fd = tmp_fd(path, sizeof path);
	CHECK(fd >= 0);
	const char *names[] = {"i", "d", "none", "s"};
	enum tp_pq_type types[] = {TP_PQ_INT64, TP_PQ_DOUBLE, TP_PQ_UNSET, TP_PQ_UNSET};
	struct tp_pq_writer *w = tp_pq_new(fd, 4, names, types);
	tp_pq_set_limits(w, 1000, 0);
	const uint32_t rows = 4321;
	int rc = 0;
	for (uint32_t r = 0; r < rows && rc == 0; r++) {
		if (r % 9 == 4)
			tp_pq_null(w, 0);
		else
			tp_pq_i64(w, 0, r == 7 ? INT64_MIN + 1 : (int64_t)r * 3000000019LL);
		if (r < 20 || r % 2)
			tp_pq_null(w, 1);
		else
			tp_pq_dbl(w, 1, 0.1 * r);
		tp_pq_null(w, 2);
		if (r % 100 < 50)
			tp_pq_null(w, 3);
		else
			tp_pq_str(w, 3, "h\xc3\xa9llo", 6); /* types the column STRING */
		rc = tp_pq_end_rows(w, 1);
	}
	if (rc == 0)
		rc = tp_pq_finish(w);
	CHECK_EQ(tp_pq_rows(w), rows);
	tp_pq_free(w);
	close(fd);
	size_t n;
	uint8_t *f = slurp(path, &n);
	unlink(path);
	CHECK_EQ(rc, 0);
	CHECK(f != NULL);
	struct meta m;
	uint8_t *def = tb_malloc(1000);
	const uint8_t **strs = tb_calloc(1000, sizeof *strs);
	uint32_t *lens = tb_calloc(1000, sizeof *lens);
	int bad = read_meta(f, n, &m) < 0;
	int64_t seen = 0, values_ok = 1;
	for (size_t g = 0; !bad && g < m.ngroups; g++) {
		for (int c = 0; c < 4 && !bad; c++) {
			const uint8_t *v = NULL;
			size_t nr = (size_t)m.group_rows[g];
			if (c == 3) {
				if (read_dict_strings(f, n, &m.ch[g][c], def, nr, strs, lens) < 0) {
					bad = 1;
					break;
				}
			} else if (read_page(f, n, m.ch[g][c].offset, def, nr, &v) < 0) {
				bad = 1;
				break;
			}
			for (size_t k = 0; k < nr; k++) {
				uint32_t r = (uint32_t)(seen + (int64_t)k);
				int want = c == 0   ? r % 9 != 4
				           : c == 1 ? !(r < 20 || r % 2)
				           : c == 2 ? 0
				                    : r % 100 >= 50;
				if (def[k] != want)
					values_ok = 0;
				if (!def[k])
					continue;
				if (c == 0) {
					int64_t x;
					memcpy(&x, v, 8);
					v += 8;
					if (x !=
					    (r == 7 ? INT64_MIN + 1 : (int64_t)r * 3000000019LL))
						values_ok = 0;
				} else if (c == 1) {
					double x;
					memcpy(&x, v, 8);
					v += 8;
					if (x != 0.1 * r)
						values_ok = 0;
				} else if (c == 3) {
					if (lens[k] != 6 || memcmp(strs[k], "h\xc3\xa9llo", 6))
						values_ok = 0;
				}
			}
		}
		seen += m.group_rows[g];
	}
	tb_free(def);
	tb_free(strs);
	tb_free(lens);
	tb_free(f);
	CHECK(!bad);
	CHECK_EQ(m.rows, rows);
	CHECK_EQ(m.ngroups, 5);
	CHECK_EQ(m.group_rows[0], 1000);
	CHECK_EQ(m.group_rows[4], 321);
	CHECK_EQ(seen, rows);
	CHECK(values_ok);
	CHECK_EQ(m.types[2], 6); /* never typed: BYTE_ARRAY, all NULL */
	CHECK_EQ(m.types[3], 6);
	CHECK_EQ(m.ch[0][2].nulls, 1000);
	CHECK_EQ(m.ch[0][0].has_min, 1);
	CHECK_EQ(m.ch[0][0].min, INT64_MIN + 1);
	CHECK_EQ(m.ch[0][0].max, 999LL * 3000000019LL);
}

TEST(tp_parquet_long_strings)
{
	char path[64];
	int fd = tmp_fd(path, sizeof path);
	CHECK(fd >= 0);
	const char *names[] = {"s"};
	struct tp_pq_writer *w = tp_pq_new(fd, 1, names, NULL);
	/* Each string a bit over a third of the byte bound: a group per two. */
	tp_pq_set_limits(w, 0, 700000);
	size_t len = 400000;
	char *s = tb_malloc(len);
	int rc = 0;
	for (int r = 0; r < 5 && rc == 0; r++) {
		memset(s, 'a' + r, len);
		tp_pq_str(w, 0, s, len);
		rc = tp_pq_end_rows(w, 1);
	}
	if (rc == 0)
		rc = tp_pq_finish(w);
	tp_pq_free(w);
	close(fd);
	size_t n;
	uint8_t *f = slurp(path, &n);
	unlink(path);
	struct meta m;
	int mrc = f ? read_meta(f, n, &m) : -1;
	int ok = 1;
	if (mrc == 0) {
		for (size_t g = 0, r = 0; g < m.ngroups; g++) {
			uint8_t def[4];
			const uint8_t *strs[4];
			uint32_t lens[4];
			if (m.group_rows[g] > 4 ||
			    read_dict_strings(f, n, &m.ch[g][0], def, (size_t)m.group_rows[g], strs,
			                      lens) < 0) {
				ok = 0;
				break;
			}
			for (int64_t k = 0; k < m.group_rows[g]; k++, r++)
				if (lens[k] != len || strs[k][0] != 'a' + r ||
				    strs[k][len - 1] != 'a' + r)
					ok = 0;
		}
	}
	tb_free(s);
	tb_free(f);
	CHECK_EQ(rc, 0);
	CHECK_EQ(mrc, 0);
	CHECK_EQ(m.rows, 5);
	CHECK_EQ(m.ngroups, 3);
	CHECK(ok);
}

TEST(tp_parquet_mixed_values_convert)
{
	char path[64];
	int fd = tmp_fd(path, sizeof path);
	CHECK(fd >= 0);
	const char *names[] = {"x"};
	struct tp_pq_writer *w = tp_pq_new(fd, 1, names, NULL);
	tp_pq_i64(w, 0, 5); /* the first value types the column INT64 */
	tp_pq_dbl(w, 0, 2.75);
	tp_pq_str(w, 0, "text", 4);
	int rc = tp_pq_end_rows(w, 3);
	CHECK_EQ(tp_pq_col_type(w, 0), TP_PQ_INT64);
	if (rc == 0)
		rc = tp_pq_finish(w);
	tp_pq_free(w);
	close(fd);
	size_t n;
	uint8_t *f = slurp(path, &n);
	unlink(path);
	struct meta m;
	int mrc = f ? read_meta(f, n, &m) : -1;
	uint8_t def[3] = {9, 9, 9};
	const uint8_t *v = NULL;
	int prc = mrc == 0 ? read_page(f, n, m.ch[0][0].offset, def, 3, &v) : -1;
	int64_t a = 0, b = 0;
	if (prc == 0) {
		memcpy(&a, v, 8);
		memcpy(&b, v + 8, 8);
	}
	tb_free(f);
	CHECK_EQ(rc, 0);
	CHECK_EQ(prc, 0);
	CHECK_EQ(a, 5);
	CHECK_EQ(b, 2);
	CHECK_EQ(def[2], 0); /* text in a number column: NULL */
}

TEST(tp_parquet_write_error)
{
	/* A pipe with no reader: the first write fails with EPIPE. */
	int p[2];
	CHECK(pipe(p) == 0);
	close(p[0]);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	const char *names[] = {"a"};
	struct tp_pq_writer *w = tp_pq_new(p[1], 1, names, NULL);
	tp_pq_i64(w, 0, 1);
	int rc = tp_pq_end_rows(w, 1);
	if (rc == 0)
		rc = tp_pq_finish(w);
	char msg[TB_ERR_MSG_MAX];
	snprintf(msg, sizeof msg, "%s", tp_pq_error(w));
	tp_pq_free(w);
	close(p[1]);
	signal(SIGPIPE, old);
	CHECK_EQ(rc, -EPIPE);
	CHECK(strstr(msg, "cannot write") != NULL);
}

TEST(tp_parquet_dictionary)
{
	char path[64];
	int fd = tmp_fd(path, sizeof path);
	CHECK(fd >= 0);
	const char *names[] = {"by_id", "by_bytes", "constant"};
	struct tp_pq_writer *w = tp_pq_new(fd, 3, names, NULL);
	static const char *const words[] = {"zero", "one", "two", "three", "four", "five"};
	const uint32_t rows = 3000;
	int rc = 0;
	for (uint32_t r = 0; r < rows && rc == 0; r++) {
		const char *s = words[(r * 7) % 6];
		if (r % 11 == 0)
			tp_pq_null(w, 0);
		else
			tp_pq_str_id(w, 0, (r * 7) % 6, s, strlen(s));
		tp_pq_str(w, 1, s, strlen(s));
		tp_pq_str_id(w, 2, 0, "trace.pb", 8);
		rc = tp_pq_end_rows(w, 1);
	}
	if (rc == 0)
		rc = tp_pq_finish(w);
	tp_pq_free(w);
	close(fd);
	size_t n = 0;
	uint8_t *f = slurp(path, &n);
	unlink(path);
	struct meta m;
	int mrc = f ? read_meta(f, n, &m) : -1;
	uint8_t *def = tb_malloc(rows);
	const uint8_t **strs = tb_calloc(rows, sizeof *strs);
	uint32_t *lens = tb_calloc(rows, sizeof *lens);
	int ok = mrc == 0 && m.ngroups == 1;
	for (int c = 0; c < 3 && ok; c++) {
		if (read_dict_strings(f, n, &m.ch[0][c], def, rows, strs, lens) < 0) {
			ok = 0;
			break;
		}
		for (uint32_t r = 0; r < rows; r++) {
			const char *want = c == 2 ? "trace.pb" : words[(r * 7) % 6];
			if (c == 0 && r % 11 == 0) {
				if (def[r])
					ok = 0;
				continue;
			}
			if (!def[r] || lens[r] != strlen(want) || memcmp(strs[r], want, lens[r]))
				ok = 0;
		}
	}
	tb_free(def);
	tb_free(strs);
	tb_free(lens);
	tb_free(f);
	CHECK_EQ(rc, 0);
	CHECK_EQ(mrc, 0);
	CHECK(ok);
	/* Six words in 3000 rows, three columns: far smaller than PLAIN. */
	CHECK(n < 6000);
}

TEST(tp_parquet_bulk_ints)
{
	char path[64];
	int fd = tmp_fd(path, sizeof path);
	CHECK(fd >= 0);
	const char *names[] = {"v"};
	struct tp_pq_writer *w = tp_pq_new(fd, 1, names, NULL);
	int64_t v[300];
	for (int i = 0; i < 300; i++)
		v[i] = (int64_t)(i - 150) * 1000000007LL;
	tp_pq_i64s(w, 0, v, 100);
	tp_pq_null(w, 0);
	tp_pq_i64s(w, 0, v + 100, 200);
	int rc = tp_pq_end_rows(w, 301);
	if (rc == 0)
		rc = tp_pq_finish(w);
	tp_pq_free(w);
	close(fd);
	size_t n = 0;
	uint8_t *f = slurp(path, &n);
	unlink(path);
	struct meta m;
	int mrc = f ? read_meta(f, n, &m) : -1;
	uint8_t def[301];
	const uint8_t *p = NULL;
	int prc = mrc == 0 ? read_page(f, n, m.ch[0][0].offset, def, 301, &p) : -1;
	int ok = prc == 0 && def[100] == 0;
	for (int i = 0, j = 0; ok && i < 301; i++) {
		if (i == 100)
			continue;
		int64_t x;
		memcpy(&x, p + 8 * j, 8);
		ok = def[i] == 1 && x == v[j];
		j++;
	}
	tb_free(f);
	CHECK_EQ(rc, 0);
	CHECK_EQ(mrc, 0);
	CHECK(ok);
	CHECK_EQ(m.ch[0][0].min, -150LL * 1000000007LL);
	CHECK_EQ(m.ch[0][0].max, 149LL * 1000000007LL);
	CHECK_EQ(m.ch[0][0].nulls, 1);
}

static const char *bulk_text(void *ctx, uint32_t id, size_t *len)
{
	static const char *const words[] = {"", "alpha", "beta", "gamma"};
	(*(int *)ctx)++;
	*len = strlen(words[id]);
	return words[id];
}

/* The bulk appends of export parquet's direct path: numbers with NULL flags
 * (NaN a NULL too), strings by id looked up once per row group, a constant. */
TEST(tp_parquet_bulk_nulls_ids)
{
	char path[64];
	int fd = tmp_fd(path, sizeof path);
	CHECK(fd >= 0);
	const char *names[] = {"i", "d", "s", "c"};
	struct tp_pq_writer *w = tp_pq_new(fd, 4, names, NULL);
	enum { N = 1000 };
	int64_t iv[N], ids[N];
	double dv[N];
	uint8_t null[N];
	for (int k = 0; k < N; k++) {
		null[k] = k % 7 == 3;
		iv[k] = null[k] ? 0 : (int64_t)(k - 500) * 3;
		dv[k] = k % 5 == 1 ? NAN : k * 0.5 - 100;
		ids[k] = null[k] ? 0 : 1 + k % 3;
	}
	int lookups = 0;
	tp_pq_nums(w, 0, iv, null, N, false);
	tp_pq_nums(w, 1, dv, NULL, N, true);
	tp_pq_str_ids(w, 2, ids, null, N, bulk_text, &lookups);
	tp_pq_str_repeat(w, 3, "trace.pb", 8, N);
	int rc = tp_pq_end_rows(w, N);
	if (rc == 0)
		rc = tp_pq_finish(w);
	tp_pq_free(w);
	close(fd);
	size_t n = 0;
	uint8_t *f = slurp(path, &n);
	unlink(path);
	struct meta m;
	int mrc = f ? read_meta(f, n, &m) : -1;
	uint8_t *def = tb_malloc(N);
	const uint8_t **strs = tb_calloc(N, sizeof *strs);
	uint32_t *lens = tb_calloc(N, sizeof *lens);
	const uint8_t *p = NULL;
	int ok = mrc == 0 && m.ngroups == 1 && lookups == 3;
	/* Integers: NULL where flagged, the others in order. */
	if (ok && read_page(f, n, m.ch[0][0].offset, def, N, &p) == 0) {
		for (int k = 0, j = 0; k < N && ok; k++) {
			int64_t x;
			if (def[k] != !null[k]) {
				ok = 0;
				break;
			}
			if (!def[k])
				continue;
			memcpy(&x, p + 8 * j++, 8);
			ok = x == iv[k];
		}
	} else {
		ok = 0;
	}
	/* Doubles: NaN is NULL. */
	if (ok && read_page(f, n, m.ch[0][1].offset, def, N, &p) == 0) {
		for (int k = 0, j = 0; k < N && ok; k++) {
			double x;
			if (def[k] != !isnan(dv[k])) {
				ok = 0;
				break;
			}
			if (!def[k])
				continue;
			memcpy(&x, p + 8 * j++, 8);
			ok = x == dv[k];
		}
	} else {
		ok = 0;
	}
	static const char *const words[] = {"", "alpha", "beta", "gamma"};
	for (int c = 2; c < 4 && ok; c++) {
		if (read_dict_strings(f, n, &m.ch[0][c], def, N, strs, lens) < 0) {
			ok = 0;
			break;
		}
		for (int k = 0; k < N && ok; k++) {
			const char *want = c == 3 ? "trace.pb" : words[ids[k]];
			if (c == 2 && null[k])
				ok = !def[k];
			else
				ok = def[k] && lens[k] == strlen(want) &&
				     !memcmp(strs[k], want, lens[k]);
		}
	}
	tb_free(def);
	tb_free(strs);
	tb_free(lens);
	tb_free(f);
	CHECK_EQ(rc, 0);
	CHECK_EQ(mrc, 0);
	CHECK(ok);
	CHECK_EQ(m.ch[0][0].min, -1500);
	CHECK_EQ(m.ch[0][0].max, 499 * 3);
	CHECK_EQ(m.ch[0][0].nulls, 143);
	CHECK_EQ(m.ch[0][1].nulls, 200);
	CHECK_EQ(m.ch[0][2].nulls, 143);
}
