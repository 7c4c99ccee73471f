/*
 * Result writers of `query --format csv|tsv|json|parquet [-o FILE]` (and of
 * any command that prints result sets, such as a batch over many traces):
 * one interface, struct tp_shell_out, fed a statement's columns and rows.
 *
 *   csv      Perfetto's: quoted header names, quoted strings, decimal
 *            integers, doubles with %f, NULL as "[NULL]", a blank line
 *            between result sets (the default, byte for byte as before)
 *   tsv      a header line of names, then values separated by tabs: NULL as
 *            \N; \, tab, newline and carriage return escaped as \\ \t \n \r;
 *            doubles as the shortest text that reads back as the same double
 *   json     each result set an array of objects, one row a line; integers
 *            exact, doubles as JavaScript prints them (shortest round trip),
 *            strings escaped as JSON.stringify does, NULL as null
 *   parquet  one result set as a Parquet file (io/parquet.h); the column
 *            types are the declared ones, else the first value's
 *
 * With a path the output goes to a temporary file beside it that is renamed
 * over it only when complete: a failed query leaves no file that looks
 * complete. Blobs print as "<raw bytes>" (csv, tsv, json) as Perfetto's CSV.
 */
#include "shell.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sqlite3.h"
#include "../io/parquet.h"

struct tp_shell_out {
	enum tp_shell_fmt fmt;
	bool gzip; /* parquet: GZIP pages */
	FILE *fp;
	int fd; /* parquet, or the temporary file behind fp */
	const char *path;
	char tmp[PATH_MAX];
	bool sets, rows_in_set, finished;
	const char *lead; /* the current set's leading column, or NULL */
	int ncol;
	struct tp_pq_writer *pq;
	struct tb_err err;
};

int tp_shell_fmt_parse(const char *s, enum tp_shell_fmt *fmt)
{
	static const char *const names[] = {"csv", "tsv", "json", "parquet"};
	for (int i = 0; i < 4; i++)
		if (strcmp(s, names[i]) == 0) {
			*fmt = (enum tp_shell_fmt)i;
			return 0;
		}
	return -1;
}

struct tp_shell_out *tp_shell_out_new(enum tp_shell_fmt fmt, FILE *out, const char *path,
                                      struct tb_err *err)
{
	struct tp_shell_out *o = tb_calloc(1, sizeof *o);
	o->fmt = fmt;
	o->fd = -1;
	o->fp = out;
	o->path = path;
	if (fmt == TP_SHELL_FMT_PARQUET && !path) {
		tb_err_set(err, -EINVAL, "--format parquet needs -o FILE");
		tb_free(o);
		return NULL;
	}
	if (path) {
		o->fd = tb_create_beside(path, 0644, o->tmp, sizeof o->tmp, err);
		if (o->fd < 0) {
			tb_free(o);
			return NULL;
		}
		o->fp = NULL;
		if (fmt != TP_SHELL_FMT_PARQUET && !(o->fp = fdopen(o->fd, "w"))) {
			tb_err_errno(err, -errno, "cannot write '%s'", path);
			close(o->fd);
			unlink(o->tmp);
			tb_free(o);
			return NULL;
		}
	}
	return o;
}

void tp_shell_out_free(struct tp_shell_out *o)
{
	if (!o)
		return;
	tp_pq_free(o->pq);
	if (o->path && !o->finished) {
		if (o->fp)
			fclose(o->fp);
		else if (o->fd >= 0)
			close(o->fd);
		unlink(o->tmp);
	}
	tb_free(o);
}

const char *tp_shell_out_error(const struct tp_shell_out *o)
{
	return o->err.msg;
}

/* ---- number and string text ----------------------------------------------------- */

/* The shortest %.*e of v that reads back as v: its digits into d (no
 * point), their count in *k, the decimal exponent of the first in *e. */
static void shortest_digits(double v, char *d, int *k, int *e)
{
	char buf[40];
	for (int p = 1; p <= 17; p++) {
		snprintf(buf, sizeof buf, "%.*e", p - 1, v);
		if (strtod(buf, NULL) == v || p == 17)
			break;
	}
	const char *s = buf;
	int n = 0;
	for (; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			d[n++] = *s;
	while (n > 1 && d[n - 1] == '0')
		n--;
	d[n] = '\0';
	*k = n;
	*e = *s == 'e' ? (int)strtol(s + 1, NULL, 10) : 0;
}

/* v as JavaScript's Number.prototype.toString prints it ("null" for
 * infinities, which JSON lacks). */
void tp_shell_format_double(double v, char *out, size_t size)
{
	char d[24], buf[48];
	size_t at = 0;
	int k, e;
	if (isinf(v) || isnan(v)) {
		snprintf(out, size, "null");
		return;
	}
	if (v == 0) {
		snprintf(out, size, "0");
		return;
	}
	if (v < 0)
		buf[at++] = '-';
	shortest_digits(fabs(v), d, &k, &e);
	int n = e + 1; /* digits before the point */
	if (k <= n && n <= 21) {
		memcpy(buf + at, d, (size_t)k);
		at += (size_t)k;
		for (int i = k; i < n; i++)
			buf[at++] = '0';
	} else if (0 < n && n <= 21) {
		memcpy(buf + at, d, (size_t)n);
		at += (size_t)n;
		buf[at++] = '.';
		memcpy(buf + at, d + n, (size_t)(k - n));
		at += (size_t)(k - n);
	} else if (-6 < n && n <= 0) {
		buf[at++] = '0';
		buf[at++] = '.';
		for (int i = n; i < 0; i++)
			buf[at++] = '0';
		memcpy(buf + at, d, (size_t)k);
		at += (size_t)k;
	} else {
		buf[at++] = d[0];
		if (k > 1) {
			buf[at++] = '.';
			memcpy(buf + at, d + 1, (size_t)(k - 1));
			at += (size_t)(k - 1);
		}
		at += (size_t)snprintf(buf + at, sizeof buf - at, "e%c%d", n - 1 >= 0 ? '+' : '-',
		                       abs(n - 1));
	}
	buf[at] = '\0';
	snprintf(out, size, "%s", buf);
}

static void json_string(FILE *fp, const unsigned char *s, size_t n)
{
	fputc('"', fp);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		switch (c) {
		case '"':
			fputs("\\\"", fp);
			break;
		case '\\':
			fputs("\\\\", fp);
			break;
		case '\b':
			fputs("\\b", fp);
			break;
		case '\f':
			fputs("\\f", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		case '\r':
			fputs("\\r", fp);
			break;
		case '\t':
			fputs("\\t", fp);
			break;
		default:
			if (c < 0x20)
				fprintf(fp, "\\u%04x", c);
			else
				fputc(c, fp);
		}
	}
	fputc('"', fp);
}

static void tsv_string(FILE *fp, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (s[i]) {
		case '\\':
			fputs("\\\\", fp);
			break;
		case '\t':
			fputs("\\t", fp);
			break;
		case '\n':
			fputs("\\n", fp);
			break;
		case '\r':
			fputs("\\r", fp);
			break;
		default:
			fputc(s[i], fp);
		}
	}
}

/* ---- result sets ------------------------------------------------------------- */

static enum tp_pq_type decl_pq_type(const char *decl)
{
	if (!decl)
		return TP_PQ_UNSET;
	if (sqlite3_strlike("%INT%", decl, 0) == 0)
		return TP_PQ_INT64;
	if (sqlite3_strlike("%CHAR%", decl, 0) == 0 || sqlite3_strlike("%TEXT%", decl, 0) == 0 ||
	    sqlite3_strlike("%STRING%", decl, 0) == 0)
		return TP_PQ_STRING;
	if (sqlite3_strlike("%REAL%", decl, 0) == 0 || sqlite3_strlike("%FLOA%", decl, 0) == 0 ||
	    sqlite3_strlike("%DOUB%", decl, 0) == 0)
		return TP_PQ_DOUBLE;
	return TP_PQ_UNSET;
}

int tp_shell_out_begin(struct tp_shell_out *o, struct sqlite3_stmt *st, const char *lead)
{
	int ncol = sqlite3_column_count(st), at = lead ? 1 : 0;
	o->ncol = ncol;
	o->lead = lead;
	o->rows_in_set = false;
	switch (o->fmt) {
	case TP_SHELL_FMT_CSV:
		if (o->sets)
			fputc('\n', o->fp);
		if (lead)
			fprintf(o->fp, "\"%s\"", lead);
		for (int i = 0; i < ncol; i++)
			fprintf(o->fp, "%s\"%s\"", i + at ? "," : "", sqlite3_column_name(st, i));
		fputc('\n', o->fp);
		break;
	case TP_SHELL_FMT_TSV:
		if (o->sets)
			fputc('\n', o->fp);
		if (lead)
			tsv_string(o->fp, (const unsigned char *)lead, strlen(lead));
		for (int i = 0; i < ncol; i++) {
			const char *name = sqlite3_column_name(st, i);
			if (i + at)
				fputc('\t', o->fp);
			tsv_string(o->fp, (const unsigned char *)name, strlen(name));
		}
		fputc('\n', o->fp);
		break;
	case TP_SHELL_FMT_JSON:
		fputc('[', o->fp);
		break;
	case TP_SHELL_FMT_PARQUET: {
		if (o->sets)
			return tb_err_set(
			    &o->err, -EINVAL,
			    "--format parquet holds one result set; the SQL has more");
		const char **names = tb_calloc((size_t)ncol + 1, sizeof *names);
		enum tp_pq_type *types = tb_calloc((size_t)ncol + 1, sizeof *types);
		if (lead) {
			names[0] = lead;
			types[0] = TP_PQ_STRING;
		}
		for (int i = 0; i < ncol; i++) {
			names[i + at] = sqlite3_column_name(st, i);
			types[i + at] = decl_pq_type(sqlite3_column_decltype(st, i));
		}
		o->pq = tp_pq_new(o->fd, (uint32_t)(ncol + at), names, types);
		tp_pq_set_gzip(o->pq, o->gzip);
		tb_free(names);
		tb_free(types);
		break;
	}
	}
	o->sets = true;
	return 0;
}

static void text_value(struct tp_shell_out *o, struct sqlite3_stmt *st, int i)
{
	FILE *fp = o->fp;
	char buf[40];
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		fprintf(fp, "%lld", (long long)sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		if (o->fmt == TP_SHELL_FMT_CSV) {
			fprintf(fp, "%f", sqlite3_column_double(st, i));
		} else {
			tp_shell_format_double(sqlite3_column_double(st, i), buf, sizeof buf);
			fputs(buf, fp);
		}
		break;
	case SQLITE_TEXT: {
		const unsigned char *s = sqlite3_column_text(st, i);
		size_t n = (size_t)sqlite3_column_bytes(st, i);
		if (o->fmt == TP_SHELL_FMT_CSV)
			fprintf(fp, "\"%s\"", (const char *)s);
		else if (o->fmt == TP_SHELL_FMT_JSON)
			json_string(fp, s, n);
		else
			tsv_string(fp, s, n);
		break;
	}
	case SQLITE_BLOB:
		fputs(o->fmt == TP_SHELL_FMT_TSV ? "<raw bytes>" : "\"<raw bytes>\"", fp);
		break;
	default:
		fputs(o->fmt == TP_SHELL_FMT_CSV   ? "\"[NULL]\""
		      : o->fmt == TP_SHELL_FMT_TSV ? "\\N"
		                                   : "null",
		      fp);
	}
}

static void pq_value(struct tp_pq_writer *w, uint32_t col, struct sqlite3_stmt *st, int i)
{
	switch (sqlite3_column_type(st, i)) {
	case SQLITE_INTEGER:
		tp_pq_i64(w, col, sqlite3_column_int64(st, i));
		break;
	case SQLITE_FLOAT:
		tp_pq_dbl(w, col, sqlite3_column_double(st, i));
		break;
	case SQLITE_TEXT:
	case SQLITE_BLOB: {
		if (tp_pq_col_type(w, col) == TP_PQ_INT64 ||
		    tp_pq_col_type(w, col) == TP_PQ_DOUBLE) {
			/* A declared number column holding text: as SQLite would read it. */
			if (tp_pq_col_type(w, col) == TP_PQ_INT64)
				tp_pq_i64(w, col, sqlite3_column_int64(st, i));
			else
				tp_pq_dbl(w, col, sqlite3_column_double(st, i));
			break;
		}
		const char *s = (const char *)sqlite3_column_text(st, i);
		tp_pq_str(w, col, s ? s : "", (size_t)sqlite3_column_bytes(st, i));
		break;
	}
	default:
		tp_pq_null(w, col);
	}
}

int tp_shell_out_row(struct tp_shell_out *o, struct sqlite3_stmt *st, const char *lead_value)
{
	int at = o->lead ? 1 : 0;
	FILE *fp = o->fp;
	switch (o->fmt) {
	case TP_SHELL_FMT_CSV:
	case TP_SHELL_FMT_TSV: {
		char sep = o->fmt == TP_SHELL_FMT_CSV ? ',' : '\t';
		if (o->lead) {
			if (o->fmt == TP_SHELL_FMT_CSV)
				fprintf(fp, "\"%s\"", lead_value);
			else
				tsv_string(fp, (const unsigned char *)lead_value,
				           strlen(lead_value));
		}
		for (int i = 0; i < o->ncol; i++) {
			if (i + at)
				fputc(sep, fp);
			text_value(o, st, i);
		}
		fputc('\n', fp);
		break;
	}
	case TP_SHELL_FMT_JSON:
		fputs(o->rows_in_set ? ",\n{" : "\n{", fp);
		if (o->lead) {
			json_string(fp, (const unsigned char *)o->lead, strlen(o->lead));
			fputc(':', fp);
			json_string(fp, (const unsigned char *)lead_value, strlen(lead_value));
		}
		for (int i = 0; i < o->ncol; i++) {
			const char *name = sqlite3_column_name(st, i);
			if (i + at)
				fputc(',', fp);
			json_string(fp, (const unsigned char *)name, strlen(name));
			fputc(':', fp);
			text_value(o, st, i);
		}
		fputc('}', fp);
		break;
	case TP_SHELL_FMT_PARQUET:
		if (o->lead)
			tp_pq_str(o->pq, 0, lead_value, strlen(lead_value));
		for (int i = 0; i < o->ncol; i++)
			pq_value(o->pq, (uint32_t)(i + at), st, i);
		if (tp_pq_end_rows(o->pq, 1) < 0)
			return tb_err_set(&o->err, -EIO, "cannot write '%s': %s", o->path,
			                  tp_pq_error(o->pq));
		break;
	}
	o->rows_in_set = true;
	return 0;
}

int tp_shell_out_end(struct tp_shell_out *o)
{
	if (o->fmt == TP_SHELL_FMT_JSON)
		fputs(o->rows_in_set ? "\n]\n" : "]\n", o->fp);
	return 0;
}

int tp_shell_out_finish(struct tp_shell_out *o)
{
	if (o->fmt == TP_SHELL_FMT_PARQUET) {
		if (!o->pq) {
			/* No result set: an empty file with no columns. */
			o->pq = tp_pq_new(o->fd, 0, NULL, NULL);
		}
		if (tp_pq_finish(o->pq) < 0)
			return tb_err_set(&o->err, -EIO, "cannot write '%s': %s", o->path,
			                  tp_pq_error(o->pq));
	}
	if (!o->path)
		return fflush(o->fp) == 0 ? 0
		                          : tb_err_errno(&o->err, -errno, "cannot write output");
	int rc = 0;
	if (o->fp) {
		rc = fclose(o->fp);
		o->fp = NULL;
		o->fd = -1;
	} else {
		rc = close(o->fd);
		o->fd = -1;
	}
	if (rc != 0)
		return tb_err_errno(&o->err, -errno, "cannot write '%s'", o->path);
	if (rename(o->tmp, o->path) != 0)
		return tb_err_errno(&o->err, -errno, "cannot create '%s'", o->path);
	o->finished = true;
	return 0;
}

void tp_shell_out_set_gzip(struct tp_shell_out *o, bool on)
{
	o->gzip = on;
}
