/*
 * Reading the column tables a block at a time (trace_processor.h): the
 * values SELECT * shows, from the column arrays and the computed columns'
 * getters, without SQLite. Column 0 is the row id; the others are the
 * table's described columns that are not TP_COL_HIDDEN, in order.
 */
#include "../tp_int.h"

#include <string.h>

int tp_column_table_find(const char *name)
{
	for (uint32_t i = 0; i < tp_table_count; i++)
		if (strcmp(tp_table_descs[i].sql_name, name) == 0)
			return (int)i;
	return -1;
}

uint32_t tp_column_table_rows(const struct tp *tp, uint32_t table)
{
	/* Every table struct starts with its row count. */
	return *(const uint32_t *)((const char *)&tp->t + tp_table_descs[table].offset);
}

/* The described column of visible column col (>= 1). */
static const struct tp_col_desc *visible(uint32_t table, uint32_t col)
{
	const struct tp_table_desc *d = &tp_table_descs[table];
	for (uint32_t i = 0; i < d->ncols; i++)
		if (!(d->cols[i].flags & TP_COL_HIDDEN) && --col == 0)
			return &d->cols[i];
	return NULL;
}

uint32_t tp_column_count(uint32_t table)
{
	const struct tp_table_desc *d = &tp_table_descs[table];
	uint32_t n = 1;
	for (uint32_t i = 0; i < d->ncols; i++)
		n += !(d->cols[i].flags & TP_COL_HIDDEN);
	return n;
}

const char *tp_column_name(uint32_t table, uint32_t col)
{
	const struct tp_col_desc *cd = col ? visible(table, col) : NULL;
	return col == 0 ? "id" : cd ? cd->name : NULL;
}

enum tp_value_type tp_column_type(uint32_t table, uint32_t col)
{
	const struct tp_col_desc *cd = col ? visible(table, col) : NULL;
	if (!cd)
		return TP_VALUE_INT;
	switch (cd->type) {
	case TP_DBL:
	case TP_DBLN:
		return TP_VALUE_DOUBLE;
	case TP_STR:
		return TP_VALUE_STRING;
	default:
		return TP_VALUE_INT;
	}
}

const char *tp_string(const struct tp *tp, uint32_t id, size_t *len)
{
	return strpool_get(&tp->strings, id, len);
}

/* One computed value as the SQL layer reads it. */
static bool computed(const struct tp *tp, const struct tp_col_desc *cd, uint32_t r,
                     union tp_value *out)
{
	union {
		int64_t i;
		uint32_t u;
		double f;
		uint8_t b;
	} v = {0};
	cd->get(tp, r, &v);
	switch (cd->type) {
	case TP_I64N:
		out->i = v.i;
		return v.i == TP_NULL_I64;
	case TP_U32:
	case TP_STR:
		out->i = v.u;
		return cd->type == TP_STR && v.u == TP_NULL_STR;
	case TP_U32N:
		out->i = v.u;
		return v.u == TP_NULL_U32;
	case TP_DBL:
	case TP_DBLN:
		out->d = v.f;
		return isnan(v.f);
	case TP_U8:
		out->i = v.b;
		return false;
	default: /* TP_I64; TP_I32's getters write an int64 */
		out->i = v.i;
		return false;
	}
}

uint32_t tp_column_read(const struct tp *tp, uint32_t table, uint32_t col, uint32_t row, uint32_t n,
                        union tp_value *out, uint8_t *null)
{
	const struct tp_table_desc *d = &tp_table_descs[table];
	uint32_t nulls = 0;
	if (col == 0) {
		for (uint32_t k = 0; k < n; k++)
			out[k].i = row + k;
		memset(null, 0, n);
		return 0;
	}
	const struct tp_col_desc *cd = visible(table, col);
	if (cd->flags & TP_COL_COMPUTED) {
		for (uint32_t k = 0; k < n; k++) {
			null[k] = computed(tp, cd, row + k, &out[k]);
			if (null[k])
				out[k].i = 0;
			nulls += null[k];
		}
		return nulls;
	}
	const void *data = *(const void *const *)((const char *)&tp->t + d->offset + cd->offset);
	if (!data) {
		/* A sparse column never set: its new-row value everywhere. */
		bool is_null = cd->type == TP_I64N || cd->type == TP_U32N || cd->type == TP_DBLN ||
		               cd->type == TP_STR;
		memset(out, 0, n * sizeof *out);
		memset(null, is_null, n);
		return is_null ? n : 0;
	}
	switch (cd->type) {
	case TP_I64:
		memcpy(out, (const int64_t *)data + row, n * sizeof *out);
		memset(null, 0, n);
		break;
	case TP_I64N: {
		const int64_t *p = (const int64_t *)data + row;
		for (uint32_t k = 0; k < n; k++) {
			null[k] = p[k] == TP_NULL_I64;
			out[k].i = null[k] ? 0 : p[k];
			nulls += null[k];
		}
		break;
	}
	case TP_U32:
	case TP_U32N:
	case TP_STR: {
		const uint32_t *p = (const uint32_t *)data + row;
		uint32_t sentinel = cd->type == TP_U32N ? TP_NULL_U32 : TP_NULL_STR;
		bool nullable = cd->type != TP_U32;
		for (uint32_t k = 0; k < n; k++) {
			null[k] = nullable && p[k] == sentinel;
			out[k].i = null[k] ? 0 : p[k];
			nulls += null[k];
		}
		break;
	}
	case TP_DBL:
	case TP_DBLN: {
		const double *p = (const double *)data + row;
		for (uint32_t k = 0; k < n; k++) {
			null[k] = isnan(p[k]);
			out[k].d = null[k] ? 0 : p[k];
			nulls += null[k];
		}
		break;
	}
	case TP_U8:
		for (uint32_t k = 0; k < n; k++)
			out[k].i = ((const uint8_t *)data)[row + k];
		memset(null, 0, n);
		break;
	case TP_I32:
		for (uint32_t k = 0; k < n; k++)
			out[k].i = ((const int32_t *)data)[row + k];
		memset(null, 0, n);
		break;
	}
	return nulls;
}
