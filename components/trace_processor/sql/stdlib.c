/*
 * The stdlib modules written in SQL: components/trace_processor/sql/stdlib/
 * <pkg>/<path>.sql is module `<pkg>.<path with dots>`. build.sh embeds the
 * files into out/gen/tp_stdlib.h (sorted by name); packages.c runs a
 * module's statements on its first INCLUDE, as it does for user packages.
 */
#include <string.h>

#include "sql_int.h"

struct tp_stdlib_file {
	const char *name, *sql;
};

#include "tp_stdlib.h"

const char *tp_sql_stdlib_name(size_t i)
{
	return i < TB_ARRAY_SIZE(tp_stdlib_files) ? tp_stdlib_files[i].name : NULL;
}

const char *tp_sql_stdlib_sql(size_t i)
{
	return i < TB_ARRAY_SIZE(tp_stdlib_files) ? tp_stdlib_files[i].sql : NULL;
}
