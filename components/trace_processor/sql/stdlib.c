/*
 * The stdlib modules written in SQL: components/trace_processor/sql/stdlib/
 * <pkg>/<path>.sql is module `<pkg>.<path with dots>`. build.sh embeds the
 * files into out/gen/tp_stdlib.h (names sorted, each with the offset of its
 * SQL) and their SQL, one text gzip'd, into out/gen/tp_stdlib_gz.h; the text
 * is inflated into a static buffer when a module's SQL is first asked for
 * (one process-wide copy, not thread-safe: the trace processor runs on one
 * thread). packages.c runs a module's statements on its first INCLUDE, as it
 * does for user packages.
 */
#include <string.h>
#include <strings.h>

#include "sql_int.h"

struct tp_stdlib_file {
	const char *name;
	size_t offset; /* of its NUL-terminated SQL in the text */
};

#include "tp_stdlib.h"
#include "tp_stdlib_gz.h"

static char stdlib_text[tp_stdlib_len];
static bool stdlib_inflated;

const char *tp_sql_stdlib_name(size_t i)
{
	return i < TB_ARRAY_SIZE(tp_stdlib_files) ? tp_stdlib_files[i].name : NULL;
}

const char *tp_sql_stdlib_sql(size_t i)
{
	if (i >= TB_ARRAY_SIZE(tp_stdlib_files))
		return NULL;
	if (!stdlib_inflated) {
		tb_embed_inflate(tp_stdlib_gz, sizeof tp_stdlib_gz, stdlib_text,
		                 sizeof stdlib_text);
		TB_CHECK(stdlib_text[sizeof stdlib_text - 1] == '\0');
		stdlib_inflated = true;
	}
	return stdlib_text + tp_stdlib_files[i].offset;
}

/* The objects a module's SQL defines: each `CREATE [OR REPLACE] PERFETTO
 * TABLE|VIEW|FUNCTION|MACRO name` at the start of a line. */
static void insert_objects(sqlite3_stmt *ins, const char *pkg, size_t pn, const char *mod,
                           const char *sql)
{
	static const char *const kinds[] = {"TABLE", "VIEW", "FUNCTION", "MACRO"};
	for (const char *line = sql; line && *line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *p = line;
		if (strncasecmp(p, "CREATE ", 7) != 0)
			continue;
		p += 7;
		if (strncasecmp(p, "OR REPLACE ", 11) == 0)
			p += 11;
		if (strncasecmp(p, "PERFETTO ", 9) != 0)
			continue;
		p += 9;
		for (size_t k = 0; k < TB_ARRAY_SIZE(kinds); k++) {
			size_t kn = strlen(kinds[k]);
			if (strncasecmp(p, kinds[k], kn) != 0 || p[kn] != ' ')
				continue;
			const char *name = p + kn + 1;
			size_t n = strspn(
			    name,
			    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_");
			sqlite3_bind_text(ins, 1, pkg, (int)pn, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 2, mod, -1, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 3, name, (int)n, SQLITE_TRANSIENT);
			sqlite3_bind_text(ins, 4, kinds[k], -1, SQLITE_STATIC);
			sqlite3_bind_int(ins, 5, name[0] != '_');
			sqlite3_step(ins);
			sqlite3_reset(ins);
		}
	}
}

int tp_sql_create_stdlib_objects(sqlite3 *db)
{
	sqlite3_stmt *ins = NULL;
	int rc = sqlite3_exec(db,
	                      "CREATE TABLE __intrinsic_stdlib_objects(package TEXT, module TEXT, "
	                      "name TEXT, object_type TEXT, description TEXT, exposed INT, "
	                      "return_type TEXT, return_description TEXT, args TEXT, cols TEXT)",
	                      NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
		    db,
		    "INSERT INTO __intrinsic_stdlib_objects VALUES (?1, ?2, ?3, ?4, "
		    "'', ?5, '', '', '[]', '[]')",
		    -1, &ins, NULL);
	if (rc != SQLITE_OK)
		return rc;
	const char *m;
	for (size_t i = 0; (m = tp_sql_module_name(i)); i++) {
		sqlite3_bind_text(ins, 1, m, (int)strcspn(m, "."), SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 2, m, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, m, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 4, "MODULE", -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 5, 1);
		sqlite3_step(ins);
		sqlite3_reset(ins);
	}
	for (size_t i = 0; (m = tp_sql_stdlib_name(i)); i++) {
		if (strncmp(m, "prelude.", 8) == 0)
			continue;
		size_t pn = strcspn(m, ".");
		sqlite3_bind_text(ins, 1, m, (int)pn, SQLITE_TRANSIENT);
		sqlite3_bind_text(ins, 2, m, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 3, m, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 4, "MODULE", -1, SQLITE_STATIC);
		sqlite3_bind_int(ins, 5, 1);
		sqlite3_step(ins);
		sqlite3_reset(ins);
		insert_objects(ins, m, pn, m, tp_sql_stdlib_sql(i));
	}
	return sqlite3_finalize(ins);
}
