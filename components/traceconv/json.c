/*
 * json: Perfetto's `traceconv json` (trace_to_json): a loaded trace as
 * Chrome JSON that chrome://tracing, the Perfetto UI and our own importer
 * open. In the order Perfetto writes them:
 *
 *   {"traceEvents":[
 *     thread_name / process_name / process_uptime_seconds  "M" events
 *     slices       thread tracks: "X" (or "B" still open, "I" instant, s:"t")
 *                  process / global async tracks: "b"/"e" pairs and "n"
 *                  instants (emitted last, merged by ts), "id2":{"local"} or
 *                  "id" the track id; process / global instant tracks: "I"
 *                  with s:"p" / s:"g"
 *     flows        "s" at the source slice, "f" (bp:"e") at the target, on
 *                  thread tracks, id = the flow's row
 *   ],
 *   "metadata":{"trace-config": ..., "trace_processor_stats": {...}},
 *   "androidProcessDump": "...", "systemTraceEvents": "<ftrace text>",
 *   "controllerTraceDataKey": "systraceController"}
 *
 * Times are microseconds (ns / 1000, truncated). A slice's args are its arg
 * set as nested objects (keys "a.b" and "a[0]"), with "debug." lifted to
 * the top and TrackEvent source locations renamed (src_func, src_file,
 * src_line), as Perfetto does. Slices without a category (ftrace's, already
 * in systemTraceEvents) and binder slices are left out, as are counters
 * (Perfetto's export has none). Objects are written with their keys sorted
 * and strings ASCII-only (\uXXXX escapes), as Perfetto's serializer writes.
 * A pid or tid two processes or threads share is written once as itself
 * and then as 4294967295, 4294967294, ... (values no task has).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "sqlite3.h"
#include "trace_processor.h"
#include "traceconv_int.h"

/* ---- a small JSON DOM: objects keep keys sorted when written ---------------- */

enum jtype { JNULL, JBOOL, JINT, JUINT, JREAL, JSTR, JRAW, JOBJ, JARR };

struct jnode {
	enum jtype t;
	char *key; /* member of an object */
	union {
		int64_t i;
		uint64_t u;
		double d;
		char *s; /* JSTR, JRAW */
	} v;
	VEC(struct jnode *) kids;
};

static struct jnode *jnew(enum jtype t, const char *key)
{
	struct jnode *n = tb_calloc(1, sizeof *n);
	n->t = t;
	n->key = key ? tb_strdup(key) : NULL;
	return n;
}

static void jfree(struct jnode *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->kids.len; i++)
		jfree(n->kids.data[i]);
	vec_release(&n->kids);
	if (n->t == JSTR || n->t == JRAW)
		tb_free(n->v.s);
	tb_free(n->key);
	tb_free(n);
}

/* The member key of object o, made (JNULL) if absent. */
static struct jnode *jget(struct jnode *o, const char *key)
{
	for (size_t i = 0; i < o->kids.len; i++)
		if (strcmp(o->kids.data[i]->key, key) == 0)
			return o->kids.data[i];
	struct jnode *n = jnew(JNULL, key);
	vec_push(&o->kids, n);
	return n;
}

/* Remove member key of o; returns it (the caller frees) or NULL. */
static struct jnode *jtake(struct jnode *o, const char *key)
{
	for (size_t i = 0; i < o->kids.len; i++) {
		struct jnode *n = o->kids.data[i];
		if (strcmp(n->key, key) == 0) {
			memmove(o->kids.data + i, o->kids.data + i + 1,
			        (o->kids.len - i - 1) * sizeof *o->kids.data);
			o->kids.len--;
			return n;
		}
	}
	return NULL;
}

/* Make n a value of type t (dropping what it held). */
static struct jnode *jset(struct jnode *n, enum jtype t)
{
	for (size_t i = 0; i < n->kids.len; i++)
		jfree(n->kids.data[i]);
	vec_clear(&n->kids);
	if (n->t == JSTR || n->t == JRAW)
		tb_free(n->v.s);
	n->t = t;
	memset(&n->v, 0, sizeof n->v);
	return n;
}

static void jput_int(struct jnode *o, const char *k, int64_t v)
{
	jset(jget(o, k), JINT)->v.i = v;
}

static void jput_str(struct jnode *o, const char *k, const char *s)
{
	jset(jget(o, k), JSTR)->v.s = tb_strdup(s ? s : "");
}

static void jput_hex(struct jnode *o, const char *k, uint64_t v)
{
	char b[24];
	snprintf(b, sizeof b, "0x%llx", (unsigned long long)v);
	jput_str(o, k, b);
}

/* JSON string escapes as Perfetto's serializer: printable ASCII as is. */
static void jesc(sqlite3_str *s, const char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	sqlite3_str_appendchar(s, 1, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		switch (c) {
		case '"':
			sqlite3_str_appendall(s, "\\\"");
			continue;
		case '\\':
			sqlite3_str_appendall(s, "\\\\");
			continue;
		case '\n':
			sqlite3_str_appendall(s, "\\n");
			continue;
		case '\b':
			sqlite3_str_appendall(s, "\\b");
			continue;
		case '\f':
			sqlite3_str_appendall(s, "\\f");
			continue;
		case '\r':
			sqlite3_str_appendall(s, "\\r");
			continue;
		case '\t':
			sqlite3_str_appendall(s, "\\t");
			continue;
		}
		if (c >= 0x20 && c <= 0x7e) {
			sqlite3_str_appendchar(s, 1, (char)c);
			continue;
		}
		size_t extra = 1 + (c >= 0xc0) + (c >= 0xe0) + (c >= 0xf0);
		size_t stop = i + extra < n ? i + extra : n;
		uint32_t cp = c & (0xffu >> (extra + 1));
		for (size_t j = i + 1; j < stop; j++)
			cp = cp << 6 | ((unsigned char)p[j] & 0x3f);
		i = stop - 1;
		uint32_t units[2] = {cp, 0};
		int nu = 1;
		if (cp > 0xffff) {
			units[0] = ((cp - 0x10000) >> 10) + 0xd800;
			units[1] = (cp & 0x3ff) + 0xdc00;
			nu = 2;
		}
		for (int u = 0; u < nu; u++) {
			char e[7] = {'\\',
			             'u',
			             hex[(units[u] >> 12) & 15],
			             hex[(units[u] >> 8) & 15],
			             hex[(units[u] >> 4) & 15],
			             hex[units[u] & 15],
			             0};
			sqlite3_str_appendall(s, e);
		}
	}
	sqlite3_str_appendchar(s, 1, '"');
}

static int key_cmp(const void *a, const void *b)
{
	const struct jnode *x = *(struct jnode *const *)a, *y = *(struct jnode *const *)b;
	return strcmp(x->key, y->key);
}

static void jwrite(sqlite3_str *s, struct jnode *n)
{
	switch (n->t) {
	case JNULL:
		sqlite3_str_appendall(s, "null");
		break;
	case JBOOL:
		sqlite3_str_appendall(s, n->v.i ? "true" : "false");
		break;
	case JINT:
		sqlite3_str_appendf(s, "%lld", (long long)n->v.i);
		break;
	case JUINT:
		sqlite3_str_appendf(s, "%llu", (unsigned long long)n->v.u);
		break;
	case JREAL:
		if (isnan(n->v.d))
			sqlite3_str_appendall(s, "\"NaN\"");
		else if (isinf(n->v.d))
			sqlite3_str_appendall(s, n->v.d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
		else
			sqlite3_str_appendf(s, "%!.16g", n->v.d);
		break;
	case JSTR:
		jesc(s, n->v.s, strlen(n->v.s));
		break;
	case JRAW:
		sqlite3_str_appendall(s, n->v.s);
		break;
	case JOBJ:
		if (n->kids.len)
			qsort(n->kids.data, n->kids.len, sizeof *n->kids.data, key_cmp);
		sqlite3_str_appendchar(s, 1, '{');
		for (size_t i = 0; i < n->kids.len; i++) {
			if (i)
				sqlite3_str_appendchar(s, 1, ',');
			jesc(s, n->kids.data[i]->key, strlen(n->kids.data[i]->key));
			sqlite3_str_appendchar(s, 1, ':');
			jwrite(s, n->kids.data[i]);
		}
		sqlite3_str_appendchar(s, 1, '}');
		break;
	case JARR:
		sqlite3_str_appendchar(s, 1, '[');
		for (size_t i = 0; i < n->kids.len; i++) {
			if (i)
				sqlite3_str_appendchar(s, 1, ',');
			jwrite(s, n->kids.data[i]);
		}
		sqlite3_str_appendchar(s, 1, ']');
		break;
	}
}

/* ---- the exporter ------------------------------------------------------------ */

struct pidtid {
	int64_t pid, tid;
};

struct async_ev {
	int64_t ts;
	size_t seq; /* queue order */
	char *text;
};
VEC_DEFINE(async_vec, struct async_ev);

struct jx {
	struct tp *tp;
	sqlite3 *db;
	struct traceconv_sink *k;
	bool first;
	int64_t *upid_pid; /* exported pid of each upid */
	size_t nproc;
	struct pidtid *utid_pt; /* exported pid and tid of each utid */
	size_t nthread;
	uint64_t next_dup;
	sqlite3_stmt *args_st, *valid_st;
	struct async_vec abegin, ainstant, aend;
	int rc;
};

static void emit_text(struct jx *x, const char *text)
{
	if (!x->first)
		traceconv_sink_str(x->k, ",\n");
	x->first = false;
	traceconv_sink_str(x->k, text);
}

static char *serialize(struct jnode *n)
{
	sqlite3_str *s = sqlite3_str_new(NULL);
	jwrite(s, n);
	return sqlite3_str_finish(s);
}

static void emit(struct jx *x, struct jnode *ev)
{
	char *t = serialize(ev);
	emit_text(x, t ? t : "{}");
	sqlite3_free(t);
}

static void queue_async(struct async_vec *list, struct jnode *ev, int64_t ts)
{
	char *t = serialize(ev);
	struct async_ev a = {ts, list->len, tb_strdup(t ? t : "{}")};
	sqlite3_free(t);
	vec_push(list, a);
}

/* Does any process or thread use pid_or_tid? */
static bool valid_id(struct jx *x, int64_t v)
{
	sqlite3_bind_int64(x->valid_st, 1, v);
	bool used = sqlite3_step(x->valid_st) == SQLITE_ROW;
	sqlite3_reset(x->valid_st);
	return used;
}

static int64_t next_dup(struct jx *x)
{
	while (valid_id(x, (int64_t)x->next_dup))
		x->next_dup--;
	return (int64_t)x->next_dup--;
}

/* Perfetto's exported ids: a pid (a (pid, tid)) a second task has is
 * replaced by one no task has. */
static int map_ids(struct jx *x)
{
	sqlite3_stmt *st = NULL;
	struct hmap seen_pid;
	hmap_init(&seen_pid);
	x->next_dup = UINT32_MAX;
	if (sqlite3_prepare_v2(x->db, "SELECT upid, pid FROM process ORDER BY upid", -1, &st, NULL))
		goto fail;
	while (sqlite3_step(st) == SQLITE_ROW) {
		size_t upid = (size_t)sqlite3_column_int64(st, 0);
		int64_t pid = sqlite3_column_int64(st, 1);
		if (upid >= x->nproc) {
			x->upid_pid = tb_realloc(x->upid_pid, (upid + 1) * sizeof *x->upid_pid);
			for (size_t i = x->nproc; i <= upid; i++)
				x->upid_pid[i] = 0;
			x->nproc = upid + 1;
		}
		if (hmap_get(&seen_pid, (uint64_t)pid, NULL))
			pid = next_dup(x);
		hmap_put(&seen_pid, (uint64_t)pid, 1);
		x->upid_pid[upid] = pid;
	}
	sqlite3_finalize(st);
	struct hmap seen_pt;
	hmap_init(&seen_pt);
	if (sqlite3_prepare_v2(x->db, "SELECT utid, tid, upid FROM thread ORDER BY utid", -1, &st,
	                       NULL)) {
		hmap_release(&seen_pt);
		goto fail;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		size_t utid = (size_t)sqlite3_column_int64(st, 0);
		int64_t tid = sqlite3_column_int64(st, 1), pid = 0;
		if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			size_t upid = (size_t)sqlite3_column_int64(st, 2);
			pid = upid < x->nproc ? x->upid_pid[upid] : 0;
		}
		if (utid >= x->nthread) {
			x->utid_pt = tb_realloc(x->utid_pt, (utid + 1) * sizeof *x->utid_pt);
			memset(x->utid_pt + x->nthread, 0,
			       (utid + 1 - x->nthread) * sizeof *x->utid_pt);
			x->nthread = utid + 1;
		}
		uint64_t key = tb_hash_u64((uint64_t)pid) ^ (uint64_t)tid;
		if (hmap_get(&seen_pt, key, NULL))
			tid = next_dup(x);
		hmap_put(&seen_pt, tb_hash_u64((uint64_t)pid) ^ (uint64_t)tid, 1);
		x->utid_pt[utid] = (struct pidtid){pid, tid};
	}
	sqlite3_finalize(st);
	hmap_release(&seen_pt);
	hmap_release(&seen_pid);
	return 0;
fail:
	fprintf(stderr, "traceconv: json: %s\n", sqlite3_errmsg(x->db));
	sqlite3_finalize(st);
	hmap_release(&seen_pid);
	return -1;
}

static struct pidtid utid_pt(const struct jx *x, int64_t utid)
{
	return utid >= 0 && (size_t)utid < x->nthread ? x->utid_pt[utid] : (struct pidtid){0, 0};
}

static int64_t upid_pid(const struct jx *x, int64_t upid)
{
	return upid >= 0 && (size_t)upid < x->nproc ? x->upid_pid[upid] : 0;
}

/* Put value (one args row's columns) at the path key under root. Keys are
 * "a.b" (members) and "a[2]" (array elements). */
static void args_put(struct jnode *root, const char *key, sqlite3_stmt *st)
{
	struct jnode *n = root;
	char seg[512];
	const char *p = key;
	while (*p) {
		size_t len = strcspn(p, ".[");
		if (len) {
			snprintf(seg, sizeof seg, "%.*s", (int)len, p);
			if (n->t != JOBJ)
				jset(n, JOBJ);
			n = jget(n, seg);
			p += len;
		}
		while (*p == '[') {
			unsigned long idx = strtoul(p + 1, NULL, 10);
			const char *close = strchr(p, ']');
			if (!close || idx > (1u << 20))
				return;
			if (n->t != JARR)
				jset(n, JARR);
			while (n->kids.len <= idx)
				vec_push(&n->kids, jnew(JNULL, NULL));
			n = n->kids.data[idx];
			p = close + 1;
		}
		if (*p == '.')
			p++;
	}
	const char *type = (const char *)sqlite3_column_text(st, 1);
	type = type ? type : "null";
	if (strcmp(type, "int") == 0) {
		jset(n, JINT)->v.i = sqlite3_column_int64(st, 2);
	} else if (strcmp(type, "uint") == 0) {
		jset(n, JUINT)->v.u = (uint64_t)sqlite3_column_int64(st, 2);
	} else if (strcmp(type, "real") == 0) {
		jset(n, JREAL)->v.d = sqlite3_column_double(st, 4);
	} else if (strcmp(type, "bool") == 0) {
		jset(n, JBOOL)->v.i = sqlite3_column_int64(st, 2) != 0;
	} else if (strcmp(type, "pointer") == 0) {
		char b[24];
		snprintf(b, sizeof b, "0x%llx", (unsigned long long)sqlite3_column_int64(st, 2));
		jset(n, JSTR)->v.s = tb_strdup(b);
	} else if (strcmp(type, "json") == 0) {
		const char *s = (const char *)sqlite3_column_text(st, 3);
		jset(n, JRAW)->v.s = tb_strdup(s && *s ? s : "null");
	} else if (strcmp(type, "string") == 0) {
		const char *s = (const char *)sqlite3_column_text(st, 3);
		jset(n, JSTR)->v.s = tb_strdup(s ? s : "");
	} else {
		jset(n, JSTR)->v.s = tb_strdup("0x0");
	}
}

/* Move member `from` of src into dst as `to`, if src has it. */
static void rename_member(struct jnode *dst, const char *to, struct jnode *src, const char *from)
{
	struct jnode *v = jtake(src, from);
	if (!v)
		return;
	jfree(jtake(dst, to));
	tb_free(v->key);
	v->key = tb_strdup(to);
	vec_push(&dst->kids, v);
}

/* The args object of set (empty without one), as Perfetto builds it. */
static struct jnode *args_json(struct jx *x, sqlite3_stmt *st, bool has_set, int64_t set)
{
	struct jnode *a = jnew(JOBJ, "args");
	if (!has_set)
		return a;
	sqlite3_bind_int64(st, 1, set);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0);
		if (key)
			args_put(a, key, st);
	}
	sqlite3_reset(st);
	(void)x;
	struct jnode *debug = jtake(a, "debug");
	if (debug && debug->t == JOBJ) {
		jfree(jtake(debug, "legacy_event"));
		while (debug->kids.len) {
			struct jnode *m = debug->kids.data[0];
			memmove(debug->kids.data, debug->kids.data + 1,
			        (debug->kids.len - 1) * sizeof *debug->kids.data);
			debug->kids.len--;
			jfree(jtake(a, m->key));
			vec_push(&a->kids, m);
		}
	}
	jfree(debug);
	jfree(jtake(a, "legacy_trace_source_id"));
	struct jnode *task = jtake(a, "task");
	if (task && task->t == JOBJ) {
		struct jnode *pf = jtake(task, "posted_from");
		if (pf && pf->t == JOBJ) {
			bool fn = false;
			for (size_t i = 0; i < pf->kids.len; i++)
				fn |= strcmp(pf->kids.data[i]->key, "function_name") == 0;
			if (fn) {
				rename_member(a, "src_func", pf, "function_name");
				rename_member(a, "src_file", pf, "file_name");
				rename_member(a, "src_line", pf, "line_number");
			} else {
				rename_member(a, "src", pf, "file_name");
			}
		}
		jfree(pf);
		if (task->kids.len) {
			vec_push(&a->kids, task);
			task = NULL;
		}
	}
	jfree(task);
	struct jnode *src = jtake(a, "source");
	if (src && src->t == JOBJ) {
		bool fn = false;
		for (size_t i = 0; i < src->kids.len; i++)
			fn |= strcmp(src->kids.data[i]->key, "function_name") == 0;
		if (fn) {
			rename_member(a, "function_name", src, "function_name");
			rename_member(a, "file_name", src, "file_name");
			rename_member(a, "line_number", src, "line_number");
			jfree(src);
			src = NULL;
		}
	}
	if (src)
		vec_push(&a->kids, src);
	return a;
}

static void metadata_event(struct jx *x, const char *type, const char *arg, const char *value,
                           int64_t pid, int64_t tid)
{
	struct jnode *e = jnew(JOBJ, NULL);
	jput_str(e, "ph", "M");
	jput_str(e, "cat", "__metadata");
	jput_int(e, "ts", 0);
	jput_str(e, "name", type);
	jput_int(e, "pid", (int32_t)pid);
	jput_int(e, "tid", (int32_t)tid);
	jput_str(jset(jget(e, "args"), JOBJ), arg, value);
	emit(x, e);
	jfree(e);
}

static int export_names(struct jx *x)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(x->db,
	                            "SELECT utid, name FROM thread WHERE name IS NOT NULL "
	                            "ORDER BY utid",
	                            -1, &st, NULL);
	while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		struct pidtid pt = utid_pt(x, sqlite3_column_int64(st, 0));
		metadata_event(x, "thread_name", "name", (const char *)sqlite3_column_text(st, 1),
		               pt.pid, pt.tid);
	}
	sqlite3_finalize(st);
	rc = rc ? rc
	        : sqlite3_prepare_v2(x->db,
	                             "SELECT upid, name FROM process WHERE name IS NOT NULL "
	                             "ORDER BY upid",
	                             -1, &st, NULL);
	while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		metadata_event(x, "process_name", "name", (const char *)sqlite3_column_text(st, 1),
		               upid_pid(x, sqlite3_column_int64(st, 0)), 0);
	sqlite3_finalize(st);
	/* An approximate uptime: from the process start to the trace's last
	 * slice end. */
	rc =
	    rc ? rc
	       : sqlite3_prepare_v2(x->db,
	                            "SELECT upid, start_ts, (SELECT max(ts + dur) FROM slice) FROM "
	                            "process WHERE start_ts IS NOT NULL ORDER BY upid",
	                            -1, &st, NULL);
	while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		int64_t last = sqlite3_column_int64(st, 2);
		if (last <= 0)
			break;
		char up[32];
		snprintf(up, sizeof up, "%lld",
		         (long long)((last - sqlite3_column_int64(st, 1)) / 1000000000));
		metadata_event(x, "process_uptime_seconds", "uptime", up,
		               upid_pid(x, sqlite3_column_int64(st, 0)), 0);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? 0 : -1;
}

#define SLICE_SQL                                                                         \
	"SELECT s.ts, s.dur, s.category, s.name, s.arg_set_id, s.track_id, s.thread_ts, " \
	"s.thread_dur, s.thread_instruction_count, s.thread_instruction_delta, tt.utid, " \
	"pt.upid, t.type FROM slice s JOIN track t ON s.track_id = t.id LEFT JOIN "       \
	"thread_track tt ON tt.id = s.track_id LEFT JOIN process_track pt ON pt.id = "    \
	"s.track_id ORDER BY s.id"

static int64_t col_or(sqlite3_stmt *st, int c, int64_t def)
{
	return sqlite3_column_type(st, c) == SQLITE_NULL ? def : sqlite3_column_int64(st, c);
}

static int export_slices(struct jx *x)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(x->db, SLICE_SQL, -1, &st, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = SQLITE_OK;
		const char *cat = (const char *)sqlite3_column_text(st, 2);
		if (!cat || strcmp(cat, "binder") == 0)
			continue; /* ftrace's (in systemTraceEvents), or binder's */
		int64_t ts = sqlite3_column_int64(st, 0), dur = sqlite3_column_int64(st, 1);
		int64_t track = sqlite3_column_int64(st, 5);
		int64_t tts = col_or(st, 6, 0), tdur = col_or(st, 7, -1);
		int64_t tic = col_or(st, 8, 0), tidelta = col_or(st, 9, -1);
		bool has_tdur = sqlite3_column_type(st, 7) != SQLITE_NULL;
		bool thread = sqlite3_column_type(st, 10) != SQLITE_NULL;
		bool process = sqlite3_column_type(st, 11) != SQLITE_NULL;
		const char *type = (const char *)sqlite3_column_text(st, 12);
		bool instant_track = type && strstr(type, "instant");

		struct jnode *e = jnew(JOBJ, NULL);
		jput_int(e, "ts", ts / 1000);
		jput_str(e, "cat", cat);
		jput_str(e, "name", (const char *)sqlite3_column_text(st, 3));
		jput_int(e, "pid", 0);
		jput_int(e, "tid", 0);
		struct jnode *args =
		    args_json(x, x->args_st, sqlite3_column_type(st, 4) != SQLITE_NULL,
		              sqlite3_column_int64(st, 4));
		jfree(jtake(e, "args"));
		vec_push(&e->kids, args);

		if (thread) {
			struct pidtid pt = utid_pt(x, sqlite3_column_int64(st, 10));
			jput_int(e, "pid", (int32_t)pt.pid);
			jput_int(e, "tid", (int32_t)pt.tid);
			if (dur == 0) {
				jput_str(e, "ph", "I");
				if (tts > 0)
					jput_int(e, "tts", tts / 1000);
				if (tic > 0)
					jput_int(e, "ticount", tic);
				jput_str(e, "s", "t");
			} else {
				if (dur > 0) {
					jput_str(e, "ph", "X");
					jput_int(e, "dur", dur / 1000);
				} else {
					jput_str(e, "ph", "B"); /* never ended */
				}
				if (tts > 0) {
					jput_int(e, "tts", tts / 1000);
					if (dur > 0 && has_tdur)
						jput_int(e, "tdur", tdur / 1000);
				}
				if (tic > 0) {
					jput_int(e, "ticount", tic);
					if (dur > 0 && tidelta >= 0)
						jput_int(e, "tidelta", tidelta);
				}
			}
			emit(x, e);
		} else if (!instant_track) {
			/* An async slice: begin and end (or an instant), merged by ts
			 * at the end. */
			if (process) {
				int64_t pid = upid_pid(x, sqlite3_column_int64(st, 11));
				jput_int(e, "pid", (int32_t)pid);
				jput_int(e, "tid", (int32_t)pid);
				jput_hex(jset(jget(e, "id2"), JOBJ), "local", (uint64_t)track);
			} else {
				jput_hex(e, "id", (uint64_t)track);
			}
			if (tts > 0) {
				jput_int(e, "tts", tts / 1000);
				jput_int(e, "use_async_tts", 1);
			}
			if (tic > 0) {
				jput_int(e, "ticount", tic);
				jput_int(e, "use_async_tts", 1);
			}
			if (dur == 0) {
				jput_str(e, "ph", "n");
				queue_async(&x->ainstant, e, ts / 1000);
			} else {
				jput_str(e, "ph", "b");
				queue_async(&x->abegin, e, ts / 1000);
				if (dur > 0) {
					jput_str(e, "ph", "e");
					jput_int(e, "ts", (ts + dur) / 1000);
					if (tts > 0 && has_tdur)
						jput_int(e, "tts", (tts + tdur) / 1000);
					if (tic > 0 && tidelta >= 0)
						jput_int(e, "ticount", tic + tidelta);
					jset(jget(e, "args"), JOBJ);
					queue_async(&x->aend, e, (ts + dur) / 1000);
				}
			}
		} else if (dur == 0) {
			/* A process or global instant. */
			jput_str(e, "ph", "I");
			if (process) {
				int64_t pid = upid_pid(x, sqlite3_column_int64(st, 11));
				jput_int(e, "pid", (int32_t)pid);
				jput_int(e, "tid", (int32_t)pid);
				jput_str(e, "s", "p");
			} else {
				jput_str(e, "s", "g");
			}
			emit(x, e);
		}
		jfree(e);
	}
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "traceconv: json: %s\n", sqlite3_errmsg(x->db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

/* One end of a flow, on a thread-track slice only (what catapult reads). */
static struct jnode *flow_event(struct jx *x, sqlite3_stmt *sl, int64_t flow, int64_t slice,
                                const char *cat, const char *name, bool begin)
{
	sqlite3_bind_int64(sl, 1, slice);
	struct jnode *e = NULL;
	if (sqlite3_step(sl) == SQLITE_ROW && sqlite3_column_type(sl, 1) != SQLITE_NULL) {
		struct pidtid pt = utid_pt(x, sqlite3_column_int64(sl, 1));
		e = jnew(JOBJ, NULL);
		jset(jget(e, "id"), JUINT)->v.u = (uint64_t)flow;
		jput_int(e, "pid", (int32_t)pt.pid);
		jput_int(e, "tid", (int32_t)pt.tid);
		jput_str(e, "cat", cat);
		jput_str(e, "name", name);
		jput_str(e, "ph", begin ? "s" : "f");
		jput_int(e, "ts", sqlite3_column_int64(sl, 0) / 1000);
		if (!begin)
			jput_str(e, "bp", "e");
	}
	sqlite3_reset(sl);
	return e;
}

static int export_flows(struct jx *x)
{
	sqlite3_stmt *st = NULL, *sl = NULL;
	int rc = sqlite3_prepare_v2(
	    x->db,
	    "SELECT f.id, f.slice_out, f.slice_in, f.arg_set_id, s.category, "
	    "s.name FROM flow f JOIN slice s ON s.id = f.slice_out ORDER BY f.id",
	    -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
		    x->db,
		    "SELECT s.ts, tt.utid FROM slice s LEFT JOIN thread_track tt "
		    "ON tt.id = s.track_id WHERE s.id = ?1",
		    -1, &sl, NULL);
	int64_t row = 0;
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		rc = SQLITE_OK;
		bool has_set = sqlite3_column_type(st, 3) != SQLITE_NULL;
		struct jnode *args = args_json(x, x->args_st, has_set, sqlite3_column_int64(st, 3));
		char *cat = NULL, *name = NULL;
		if (has_set) {
			struct jnode *c = jtake(args, "cat"), *n = jtake(args, "name");
			cat = tb_strdup(c && c->t == JSTR ? c->v.s : "");
			name = tb_strdup(n && n->t == JSTR ? n->v.s : "");
			jfree(c);
			jfree(n);
		} else {
			const char *c = (const char *)sqlite3_column_text(st, 4);
			const char *n = (const char *)sqlite3_column_text(st, 5);
			cat = tb_strdup(c ? c : "");
			name = tb_strdup(n ? n : "");
		}
		struct jnode *out =
		    flow_event(x, sl, row, sqlite3_column_int64(st, 1), cat, name, true);
		struct jnode *in =
		    flow_event(x, sl, row, sqlite3_column_int64(st, 2), cat, name, false);
		if (out && in) {
			char *a = serialize(args);
			jset(jget(out, "args"), JRAW)->v.s = tb_strdup(a ? a : "{}");
			jset(jget(in, "args"), JRAW)->v.s = tb_strdup(a ? a : "{}");
			sqlite3_free(a);
			emit(x, out);
			emit(x, in);
		}
		jfree(out);
		jfree(in);
		jfree(args);
		tb_free(cat);
		tb_free(name);
		row++;
	}
	sqlite3_finalize(st);
	sqlite3_finalize(sl);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "traceconv: json: %s\n", sqlite3_errmsg(x->db));
		return -1;
	}
	return 0;
}

/* Ends by ts; at one ts the last queued first (a child slice's end
 * before its parent's), as Perfetto's reverse walk of a stable sort. */
static int cmp_end(const void *a, const void *b)
{
	const struct async_ev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq > y->seq ? -1 : x->seq < y->seq;
}

/* The async events by ts: at one ts instants first, then ends, then
 * begins, as Perfetto merges them. */
static void emit_async(struct jx *x)
{
	if (x->aend.len)
		qsort(x->aend.data, x->aend.len, sizeof *x->aend.data, cmp_end);
	size_t ii = 0, bi = 0, ei = 0;
	while (ii < x->ainstant.len || ei < x->aend.len || bi < x->abegin.len) {
		const struct async_ev *in = ii < x->ainstant.len ? &x->ainstant.data[ii] : NULL;
		const struct async_ev *en = ei < x->aend.len ? &x->aend.data[ei] : NULL;
		const struct async_ev *be = bi < x->abegin.len ? &x->abegin.data[bi] : NULL;
		const struct async_ev *pick;
		if (in && (!en || in->ts <= en->ts) && (!be || in->ts <= be->ts))
			pick = in, ii++;
		else if (en && (!be || en->ts <= be->ts))
			pick = en, ei++;
		else
			pick = be, bi++;
		emit_text(x, pick->text);
	}
}

static int export_metadata(struct jx *x, struct jnode *meta)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(x->db, "SELECT name, str_value, int_value FROM metadata ORDER BY id",
	                       -1, &st, NULL) != SQLITE_OK)
		return -1;
	static const struct {
		const char *name, *key;
		char kind; /* s: string list, i: int list, b: bool list, t: timestamp */
	} telemetry[] = {
	    {"benchmark_description", "benchmarkDescriptions", 's'},
	    {"benchmark_name", "benchmarks", 's'},
	    {"benchmark_start_time_us", "benchmarkStart", 't'},
	    {"benchmark_had_failures", "hadFailures", 'b'},
	    {"benchmark_label", "labels", 's'},
	    {"benchmark_story_name", "stories", 's'},
	    {"benchmark_story_run_index", "storysetRepeats", 'i'},
	    {"benchmark_story_run_time_us", "traceStart", 't'},
	    {"benchmark_story_tags", "storyTags", 's'},
	};
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		const char *sv = (const char *)sqlite3_column_text(st, 1);
		int64_t iv = sqlite3_column_int64(st, 2);
		if (!name)
			continue;
		if (strcmp(name, "trace_config_pbtxt") == 0) {
			jput_str(meta, "trace-config", sv);
			continue;
		}
		for (size_t i = 0; i < sizeof telemetry / sizeof telemetry[0]; i++) {
			if (strcmp(name, telemetry[i].name) != 0)
				continue;
			struct jnode *t = jget(meta, "telemetry");
			if (t->t != JOBJ)
				jset(t, JOBJ);
			struct jnode *v = jget(t, telemetry[i].key);
			if (telemetry[i].kind == 't') {
				jset(v, JREAL)->v.d = (double)iv / 1000.0;
				continue;
			}
			if (v->t != JARR)
				jset(v, JARR);
			struct jnode *el = jnew(JNULL, NULL);
			if (telemetry[i].kind == 's')
				jset(el, JSTR)->v.s = tb_strdup(sv ? sv : "");
			else if (telemetry[i].kind == 'b')
				jset(el, JBOOL)->v.i = iv != 0;
			else
				jset(el, JINT)->v.i = iv;
			vec_push(&v->kids, el);
		}
	}
	sqlite3_finalize(st);
	/* Every stat, as trace_processor_stats; indexed ones by index, the
	 * traced_buf_* ones grouped per buffer. */
	struct jnode *stats = jset(jget(meta, "trace_processor_stats"), JOBJ);
	if (sqlite3_prepare_v2(x->db, "SELECT name, idx, value FROM stats ORDER BY name, idx", -1,
	                       &st, NULL) != SQLITE_OK)
		return -1;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int64_t v = sqlite3_column_int64(st, 2);
		if (!name)
			continue;
		if (sqlite3_column_type(st, 1) == SQLITE_NULL) {
			jput_int(stats, name, v);
			continue;
		}
		char idx[24];
		snprintf(idx, sizeof idx, "%lld", (long long)sqlite3_column_int64(st, 1));
		if (strncmp(name, "traced_buf_", 11) == 0) {
			struct jnode *b = jget(stats, "traced_buf");
			if (b->t != JOBJ)
				jset(b, JOBJ);
			struct jnode *one = jget(b, idx);
			if (one->t != JOBJ)
				jset(one, JOBJ);
			jput_int(one, name + 11, v);
		} else {
			struct jnode *s = jget(stats, name);
			if (s->t != JOBJ)
				jset(s, JOBJ);
			jput_int(s, idx, v);
		}
	}
	sqlite3_finalize(st);
	return 0;
}

int traceconv_json(int in_fd, const char *in_name, FILE *out, const struct traceconv_text_opts *o)
{
	struct tp *tp = traceconv_load_cfg(in_fd, in_name, o->full_sort);
	if (!tp)
		return -1;
	struct traceconv_sink k;
	struct jx x = {.tp = tp, .db = tp_db(tp), .k = &k, .first = true};
	struct jnode *meta = jnew(JOBJ, NULL);
	int rc = -1;
	traceconv_sink_init(&k, out, false);
	if (sqlite3_prepare_v2(
	        x.db,
	        "SELECT key, value_type, int_value, string_value, real_value FROM args "
	        "WHERE arg_set_id = ?1 ORDER BY id",
	        -1, &x.args_st, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(
	        x.db,
	        "SELECT 1 FROM process WHERE pid = ?1 UNION ALL SELECT 1 FROM thread "
	        "WHERE tid = ?1 LIMIT 1",
	        -1, &x.valid_st, NULL) != SQLITE_OK) {
		fprintf(stderr, "traceconv: json: %s\n", sqlite3_errmsg(x.db));
		goto out;
	}
	traceconv_sink_str(&k, "{\"traceEvents\":[\n");
	if (map_ids(&x) < 0 || export_names(&x) < 0 || export_slices(&x) < 0 ||
	    export_flows(&x) < 0 || export_metadata(&x, meta) < 0)
		goto out;
	emit_async(&x);
	traceconv_sink_str(&k, "]");
	char *m = serialize(meta);
	traceconv_sink_str(&k, ",\"metadata\":\n");
	traceconv_sink_str(&k, m ? m : "{}");
	sqlite3_free(m);
	/* Perfetto's trace_to_json goes on where the exporter's closing brace
	 * would be: the process dump and the ftrace text. */
	traceconv_sink_str(&k, ",\n");
	if (traceconv_systrace_json(tp, &k, o->keep) < 0)
		goto out;
	traceconv_sink_str(&k, ",\n  \"controllerTraceDataKey\": \"systraceController\"\n}");
	rc = 0;
out:
	if (traceconv_sink_finish(&k) < 0 && rc == 0) {
		fprintf(stderr, "traceconv: cannot write the output: %s\n", strerror(k.error));
		rc = -1;
	}
	sqlite3_finalize(x.args_st);
	sqlite3_finalize(x.valid_st);
	for (size_t i = 0; i < x.abegin.len; i++)
		tb_free(x.abegin.data[i].text);
	for (size_t i = 0; i < x.ainstant.len; i++)
		tb_free(x.ainstant.data[i].text);
	for (size_t i = 0; i < x.aend.len; i++)
		tb_free(x.aend.data[i].text);
	vec_release(&x.abegin);
	vec_release(&x.ainstant);
	vec_release(&x.aend);
	tb_free(x.upid_pid);
	tb_free(x.utid_pt);
	jfree(meta);
	tp_free(tp);
	return rc;
}
