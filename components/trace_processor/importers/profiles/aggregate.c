/*
 * The aggregate tables and dummy frames the profile importers share
 * (profiles.h). The aggregate tables are SQLite tables, so rows go in
 * through two prepared INSERTs inside one transaction per import.
 */
#include "profiles.h"

static bool agg_begin(struct tp *tp, struct tp_profiles_agg *a)
{
	sqlite3 *db = tp_db(tp);
	sqlite3_stmt *st = NULL;
	if (a->begun)
		return a->profile != NULL;
	a->begun = true;
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
	        db,
	        "SELECT (SELECT coalesce(max(id) + 1, 0) FROM __intrinsic_aggregate_profile),"
	        " (SELECT coalesce(max(id) + 1, 0) FROM __intrinsic_aggregate_sample)",
	        -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW)
		goto fail;
	a->next_profile = sqlite3_column_int64(st, 0);
	a->next_sample = sqlite3_column_int64(st, 1);
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_prepare_v2(db, "INSERT INTO __intrinsic_aggregate_profile VALUES (?,?,?,?,?)",
	                       -1, &a->profile, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO __intrinsic_aggregate_sample VALUES (?,?,?,?)", -1,
	                       &a->sample, NULL) != SQLITE_OK)
		goto fail;
	return true;
fail:
	tp_fail(tp, -EIO, "cannot write the aggregate profile tables: %s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	sqlite3_finalize(a->profile);
	a->profile = NULL;
	return false;
}

static void bind_str(struct tp *tp, sqlite3_stmt *st, int i, uint32_t id)
{
	size_t n;
	const char *s = id ? strpool_get(&tp->strings, id, &n) : NULL;
	if (s)
		sqlite3_bind_text(st, i, s, (int)n, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

int64_t tp_profiles_agg_profile(struct tp *tp, struct tp_profiles_agg *a, uint32_t scope,
                                uint32_t name, uint32_t type, uint32_t unit)
{
	if (!agg_begin(tp, a))
		return -1;
	sqlite3_stmt *st = a->profile;
	int64_t id = a->next_profile;
	sqlite3_bind_int64(st, 1, id);
	bind_str(tp, st, 2, scope);
	bind_str(tp, st, 3, name);
	bind_str(tp, st, 4, type);
	bind_str(tp, st, 5, unit);
	int rc = sqlite3_step(st);
	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		tp_fail(tp, -EIO, "cannot write the aggregate profile tables: %s",
		        sqlite3_errmsg(tp_db(tp)));
		return -1;
	}
	a->next_profile++;
	return id;
}

void tp_profiles_agg_sample(struct tp *tp, struct tp_profiles_agg *a, int64_t profile,
                            uint32_t callsite, double value)
{
	if (!agg_begin(tp, a))
		return;
	sqlite3_stmt *st = a->sample;
	sqlite3_bind_int64(st, 1, a->next_sample);
	sqlite3_bind_int64(st, 2, profile);
	sqlite3_bind_int64(st, 3, callsite);
	sqlite3_bind_double(st, 4, value);
	if (sqlite3_step(st) == SQLITE_DONE)
		a->next_sample++;
	else
		tp_fail(tp, -EIO, "cannot write the aggregate profile tables: %s",
		        sqlite3_errmsg(tp_db(tp)));
	sqlite3_reset(st);
}

int tp_profiles_agg_end(struct tp *tp, struct tp_profiles_agg *a)
{
	int rc = 0;
	if (!a->begun)
		return 0;
	sqlite3_finalize(a->profile);
	sqlite3_finalize(a->sample);
	a->profile = a->sample = NULL;
	if (!sqlite3_get_autocommit(tp_db(tp)) &&
	    sqlite3_exec(tp_db(tp), "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		rc = tp_fail(tp, -EIO, "cannot write the aggregate profile tables: %s",
		             sqlite3_errmsg(tp_db(tp)));
	a->begun = false;
	return rc;
}

uint32_t tp_profiles_dummy_mapping(struct tp *tp, const char *name)
{
	struct tp_stack_profile_mapping_table *t = &tp->t.stack_profile_mapping;
	uint32_t m = tp_stack_profile_mapping_append(t);
	t->build_id[m] = strpool_empty(&tp->strings);
	t->end[m] = -1; /* 2^64 - 1, as an int64 */
	t->name[m] = tp_intern_cstr(tp, name);
	return m;
}

uint32_t tp_profiles_dummy_frame(struct tp *tp, struct hmap *frames, uint32_t mapping,
                                 uint32_t name, uint32_t source_file, uint32_t line)
{
	uint64_t k = (uint64_t)name << 32 | source_file, row;
	if (hmap_get(frames, k, &row))
		return (uint32_t)row;
	struct tp_stack_profile_symbol_table *y = &tp->t.stack_profile_symbol;
	uint32_t s = tp_stack_profile_symbol_append(y);
	y->symbol_set_id[s] = s;
	y->name[s] = name;
	y->source_file[s] = source_file;
	y->line_number[s] = line;
	struct tp_stack_profile_frame_table *t = &tp->t.stack_profile_frame;
	uint32_t r = tp_stack_profile_frame_append(t);
	t->name[r] = name;
	t->mapping[r] = mapping;
	t->symbol_set_id[r] = s;
	hmap_put(frames, k, r);
	return r;
}
