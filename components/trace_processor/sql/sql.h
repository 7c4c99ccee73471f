/*
 * The SQL layer as the rest of trace_processor sees it: the database over
 * a trace's tables opened and closed. sql/'s own declarations are in
 * sql_int.h.
 */
#ifndef TB_TP_SQL_H
#define TB_TP_SQL_H

struct tp;

/* Open the in-memory database, register the virtual tables over tp->t, the
 * views and the functions. */
int tp_sql_open(struct tp *tp);
void tp_sql_close(struct tp *tp);
/* Free the user SQL packages (sql/packages.c). */
void tp_sql_packages_free(struct tp *tp);

#endif /* TB_TP_SQL_H */
