/*
 * Tests of the column reader of trace_processor.h (model/columns.c): for
 * every column table of a loaded trace, every column read a block at a
 * time equals what `SELECT * FROM <table>` gives through SQLite, NULLs,
 * integers, doubles and strings included, in the same column order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"

static const char TRACE[] =
    "{\"traceEvents\":["
    "{\"name\":\"a\",\"cat\":\"c1\",\"ph\":\"X\",\"ts\":1,\"dur\":10,\"pid\":1,\"tid\":2,"
    "\"args\":{\"i\":-5,\"d\":0.25,\"s\":\"str\",\"b\":true,\"big\":9007199254740993}},"
    "{\"name\":\"b\",\"ph\":\"X\",\"ts\":2,\"dur\":3,\"pid\":1,\"tid\":2},"
    "{\"name\":\"\\u00e9t\\u00e9\",\"ph\":\"i\",\"ts\":4,\"pid\":1,\"tid\":3,\"s\":\"t\"},"
    "{\"name\":\"ctr\",\"ph\":\"C\",\"ts\":5,\"pid\":1,\"args\":{\"v\":1.5,\"w\":7}},"
    "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":2,\"args\":{\"name\":\"T\"}}"
    "]}";

/* Does column col of table (rows [0, n)) equal column col of st's rows?
 * Returns the number of mismatching cells. */
static unsigned compare_table(struct tp *tp, uint32_t table, const char *name)
{
	sqlite3 *db = tp_db(tp);
	sqlite3_stmt *st = NULL;
	char sql[256];
	snprintf(sql, sizeof sql, "SELECT * FROM %s", name);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return 1000;
	uint32_t ncol = tp_column_count(table), rows = tp_column_table_rows(tp, table);
	unsigned bad = (uint32_t)sqlite3_column_count(st) != ncol;
	for (uint32_t c = 0; c < ncol && !bad; c++)
		bad += strcmp(sqlite3_column_name(st, (int)c), tp_column_name(table, c)) != 0;
	union tp_value *v = tb_calloc(rows ? rows : 1, sizeof *v);
	uint8_t *null = tb_calloc(rows ? rows : 1, 1);
	for (uint32_t c = 0; c < ncol && !bad; c++) {
		/* Two blocks, to exercise the row offset. */
		uint32_t half = rows / 2;
		uint32_t nulls = tp_column_read(tp, table, c, 0, half, v, null);
		nulls += tp_column_read(tp, table, c, half, rows - half, v + half, null + half);
		uint32_t counted = 0;
		for (uint32_t r = 0; r < rows; r++)
			counted += null[r];
		bad += counted != nulls;
		sqlite3_reset(st);
		for (uint32_t r = 0; r < rows; r++) {
			if (sqlite3_step(st) != SQLITE_ROW) {
				bad++;
				break;
			}
			int type = sqlite3_column_type(st, (int)c);
			if (null[r]) {
				bad += type != SQLITE_NULL;
				continue;
			}
			switch (tp_column_type(table, c)) {
			case TP_VALUE_INT:
				bad += type != SQLITE_INTEGER ||
				       sqlite3_column_int64(st, (int)c) != v[r].i;
				break;
			case TP_VALUE_DOUBLE:
				bad += sqlite3_column_double(st, (int)c) != v[r].d;
				break;
			case TP_VALUE_STRING: {
				size_t len = 0;
				const char *s = tp_string(tp, (uint32_t)v[r].i, &len);
				const unsigned char *t = sqlite3_column_text(st, (int)c);
				bad += type != SQLITE_TEXT || !t ||
				       (size_t)sqlite3_column_bytes(st, (int)c) != len ||
				       memcmp(s, t, len) != 0;
				break;
			}
			}
		}
		if (sqlite3_step(st) != SQLITE_DONE)
			bad++;
	}
	tb_free(v);
	tb_free(null);
	sqlite3_finalize(st);
	return bad;
}

TEST(tp_columns_equal_select)
{
	struct tp *tp = tp_new(NULL);
	CHECK_EQ(tp_parse(tp, (const uint8_t *)TRACE, sizeof TRACE - 1), 0);
	CHECK_EQ(tp_end_of_file(tp), 0);
	CHECK_EQ(tp_column_table_find("no_such_table"), -1);
	int slice = tp_column_table_find("__intrinsic_slice");
	CHECK(slice >= 0);
	CHECK_EQ(tp_column_table_rows(tp, (uint32_t)slice), 3);
	CHECK(strcmp(tp_column_name((uint32_t)slice, 0), "id") == 0);
	const char *name;
	unsigned tables = 0, with_rows = 0;
	for (uint32_t i = 0; (name = tp_column_table_name(i)); i++) {
		CHECK_EQ(tp_column_table_find(name), (int)i);
		unsigned bad = compare_table(tp, i, name);
		if (bad)
			fprintf(stderr, "%s: %u cells differ\n", name, bad);
		CHECK_EQ(bad, 0);
		tables++;
		with_rows += tp_column_table_rows(tp, i) > 0;
	}
	CHECK(tables > 30);
	CHECK(with_rows >= 5); /* slice, args, counter, thread, process, track ... */
	tp_free(tp);
}
