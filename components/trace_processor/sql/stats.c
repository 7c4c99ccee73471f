/*
 * `__intrinsic_stats`: one row per stat of TP_STATS (tp_int.h), zero ones
 * included, as Perfetto lists every single-valued stat of the trace:
 *
 *   id, name, key, idx, severity, source, value, description, machine_id, trace_id
 *
 * then one row per index set of each indexed stat (TP_ISTATS: per cpu, per
 * trace buffer), in (stat, idx) order. key is the stat's position in
 * TP_STATS, or TP_STAT_COUNT plus its position in TP_ISTATS (Perfetto's is
 * its own enum value); idx is NULL for single-valued stats. machine_id and
 * trace_id are 0 (the host machine, the first trace); values are read live
 * from tp->stats[] and tp->istats.
 * The public `stats` view (schema.c) selects from it.
 *
 * This module also owns the connection's struct tp_sql: its destructor,
 * which SQLite runs at sqlite3_close after every virtual table was
 * disconnected, frees it.
 */
#include "sql_int.h"

enum {
	ST_ID,
	ST_NAME,
	ST_KEY,
	ST_IDX,
	ST_SEVERITY,
	ST_SOURCE,
	ST_VALUE,
	ST_DESCRIPTION,
	ST_MACHINE_ID,
	ST_TRACE_ID
};

struct st_vtab {
	sqlite3_vtab base;
	struct tp_sql *sql;
};

struct st_cursor {
	sqlite3_vtab_cursor base;
	struct tp_sql *sql;
	uint32_t row;
};

static int st_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out,
                      char **err)
{
	struct st_vtab *vt;
	int rc =
	    sqlite3_declare_vtab(db, "CREATE TABLE x(id INTEGER, name TEXT, \"key\" INTEGER, "
	                             "idx INTEGER, severity TEXT, source TEXT, value INTEGER, "
	                             "description TEXT, machine_id INTEGER, trace_id INTEGER)");
	if (rc != SQLITE_OK)
		return rc;
	sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	vt = sqlite3_malloc(sizeof *vt);
	if (!vt)
		return SQLITE_NOMEM;
	memset(vt, 0, sizeof *vt);
	vt->sql = aux;
	*out = &vt->base;
	return SQLITE_OK;
}

static int st_disconnect(sqlite3_vtab *vtab)
{
	sqlite3_free(vtab);
	return SQLITE_OK;
}

static int st_best_index(sqlite3_vtab *vtab, sqlite3_index_info *info)
{
	info->estimatedCost = TP_STAT_COUNT;
	info->estimatedRows = TP_STAT_COUNT;
	return SQLITE_OK;
}

static int st_open(sqlite3_vtab *vtab, sqlite3_vtab_cursor **out)
{
	struct st_cursor *c = sqlite3_malloc(sizeof *c);
	if (!c)
		return SQLITE_NOMEM;
	memset(c, 0, sizeof *c);
	c->sql = ((struct st_vtab *)vtab)->sql;
	*out = &c->base;
	return SQLITE_OK;
}

static int st_close(sqlite3_vtab_cursor *cur)
{
	sqlite3_free(cur);
	return SQLITE_OK;
}

static int st_filter(sqlite3_vtab_cursor *cur, int idx_num, const char *idx_str, int argc,
                     sqlite3_value **argv)
{
	struct st_cursor *c = (struct st_cursor *)cur;
	tp_istats_sort(c->sql->tp);
	c->row = 0;
	return SQLITE_OK;
}

static int st_next(sqlite3_vtab_cursor *cur)
{
	((struct st_cursor *)cur)->row++;
	return SQLITE_OK;
}

static int st_eof(sqlite3_vtab_cursor *cur)
{
	const struct st_cursor *c = (const struct st_cursor *)cur;
	return c->row >= TP_STAT_COUNT + c->sql->tp->istats.len;
}

static int st_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int i)
{
	struct st_cursor *c = (struct st_cursor *)cur;
	const struct tp *tp = c->sql->tp;
	const struct tp_istat_val *iv = NULL;
	const struct tp_stat_info *s;
	const char *text = NULL;

	if (c->row < TP_STAT_COUNT) {
		s = &tp_stat_infos[c->row];
	} else {
		iv = &tp->istats.data[c->row - TP_STAT_COUNT];
		s = &tp_istat_infos[iv->stat];
	}
	switch (i) {
	case ST_ID:
		sqlite3_result_int64(ctx, c->row);
		return SQLITE_OK;
	case ST_KEY:
		sqlite3_result_int64(ctx, iv ? TP_STAT_COUNT + iv->stat : c->row);
		return SQLITE_OK;
	case ST_IDX:
		if (iv)
			sqlite3_result_int64(ctx, iv->idx);
		return SQLITE_OK;
	case ST_VALUE:
		sqlite3_result_int64(ctx, iv ? iv->value : (sqlite3_int64)tp->stats[c->row]);
		return SQLITE_OK;
	case ST_MACHINE_ID:
	case ST_TRACE_ID:
		sqlite3_result_int64(ctx, 0);
		return SQLITE_OK;
	case ST_NAME:
		text = s->name;
		break;
	case ST_SEVERITY:
		text = s->severity;
		break;
	case ST_SOURCE:
		text = s->source;
		break;
	default: /* ST_DESCRIPTION */
		text = s->description;
		break;
	}
	sqlite3_result_text(ctx, text, -1, SQLITE_STATIC);
	return SQLITE_OK;
}

static int st_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = ((struct st_cursor *)cur)->row;
	return SQLITE_OK;
}

static const sqlite3_module st_module = {
    .xConnect = st_connect,
    .xBestIndex = st_best_index,
    .xDisconnect = st_disconnect,
    .xDestroy = st_disconnect,
    .xOpen = st_open,
    .xClose = st_close,
    .xFilter = st_filter,
    .xNext = st_next,
    .xEof = st_eof,
    .xColumn = st_column,
    .xRowid = st_rowid,
};

static void sql_state_free(void *p)
{
	tp_sql_tables_release(p);
	tb_free(p);
}

int tp_sql_register_stats(sqlite3 *db, struct tp_sql *sql)
{
	/* On failure SQLite calls the destructor too: sql is owned either way. */
	return sqlite3_create_module_v2(db, "__intrinsic_stats", &st_module, sql, sql_state_free);
}
