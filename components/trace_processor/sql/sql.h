/*
 * The SQL layer as the rest of trace_processor sees it: the database over
 * a trace's tables opened and closed. sql/'s own declarations are in
 * sql_int.h.
 */
#ifndef TB_TP_SQL_H
#define TB_TP_SQL_H

/* Open the in-memory database, register the virtual tables over tp->t, the
 * views and the functions. */
int tp_sql_open(struct tp *tp);
void tp_sql_close(struct tp *tp);
/* Free the user SQL packages (sql/packages.c). */
void tp_sql_packages_free(struct tp *tp);
/* The message of the last error on db: SQLite's, or for a statement the
 * authorizer refused (file access), one that says why (sql/schema.c). */
const char *tp_sql_errmsg(struct sqlite3 *db);

#endif /* TB_TP_SQL_H */
