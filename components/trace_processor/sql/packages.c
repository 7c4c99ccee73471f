/*
 * SQL packages: the registry behind `INCLUDE PERFETTO MODULE pkg.mod;`.
 *
 * Two kinds of package answer an INCLUDE. Ours (modules.c) are built in:
 * their objects exist from the start, so INCLUDE only checks the name. User
 * packages (tp_register_sql_package: the RPC's REGISTER_SQL_PACKAGE, the
 * shell's --add-sql-package) hold SQL text that runs on the first INCLUDE of
 * each module, as Perfetto's engine does:
 *
 *   module state   NEW --INCLUDE--> RUNNING --ok--> DONE     (INCLUDE: no-op)
 *                                           \--error--> FAILED (INCLUDE: the
 *                                                      error again, "poisoned")
 *
 * An INCLUDE met while its module is RUNNING is a cycle. A module's
 * statements go through tp_prepare, so they may INCLUDE other modules and use
 * the macros. An error inside a module comes back as Perfetto's traceback:
 * one "Module include" frame per module, innermost last, then SQLite's text.
 *
 * Package names follow Perfetto's rules: a module name is the package name,
 * a dot and more; no package name is a prefix (up to a dot) of another's,
 * ours included (their names are the first word of our module names), so a
 * module key has at most one owner. A user package may replace one of ours
 * with allow_override; our objects stay, the INCLUDE goes to the user's SQL.
 */
#include "sql_int.h"
#include "sql.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum module_state { MOD_NEW, MOD_RUNNING, MOD_DONE, MOD_FAILED };

struct pkg_module {
	char *name, *sql;
	enum module_state state;
	char *error; /* MOD_FAILED: the message of the failed run */
};

struct pkg {
	char *name;
	VEC(struct pkg_module) mods;
};

struct tp_sql_packages {
	VEC(struct pkg) v;
	/* Our SQL stdlib modules (stdlib.c), their state per trace processor;
	 * filled on first use. */
	struct pkg stdlib;
	bool stdlib_loaded;
};

/* Name i of our modules: the C ones (modules.c), then the SQL ones
 * (stdlib.c); NULL past the last. */
static const char *builtin_name(size_t i)
{
	const char *m = tp_sql_module_name(i);
	size_t n = 0;
	while (tp_sql_module_name(n))
		n++;
	return m ? m : tp_sql_stdlib_name(i - n);
}

static struct tp_sql_packages *packages(struct tp *tp)
{
	if (!tp->packages)
		tp->packages = tb_calloc(1, sizeof *tp->packages);
	return tp->packages;
}

static struct pkg *stdlib(struct tp *tp)
{
	struct tp_sql_packages *ps = packages(tp);
	if (!ps->stdlib_loaded) {
		const char *n;
		for (size_t i = 0; (n = tp_sql_stdlib_name(i)); i++) {
			struct pkg_module *pm = vec_push_zeroed(&ps->stdlib.mods);
			pm->name = tb_strdup(n);
			pm->sql = tb_strdup(tp_sql_stdlib_sql(i));
		}
		ps->stdlib_loaded = true;
	}
	return &ps->stdlib;
}

/* Is `prefix` (pn bytes) the whole of s (sn bytes) or its part before a dot? */
static bool is_package_prefix(const char *prefix, size_t pn, const char *s, size_t sn)
{
	return pn <= sn && memcmp(prefix, s, pn) == 0 && (pn == sn || s[pn] == '.');
}

/* The length of our package name in module name m (its first word). */
static size_t builtin_package_len(const char *m)
{
	return strcspn(m, ".");
}

static struct pkg *find_user(struct tp *tp, const char *name, size_t n)
{
	struct tp_sql_packages *ps = tp->packages;
	for (size_t i = 0; ps && i < ps->v.len; i++)
		if (strlen(ps->v.data[i].name) == n && memcmp(ps->v.data[i].name, name, n) == 0)
			return &ps->v.data[i];
	return NULL;
}

static void pkg_release(struct pkg *p)
{
	for (size_t i = 0; i < p->mods.len; i++) {
		tb_free(p->mods.data[i].name);
		tb_free(p->mods.data[i].sql);
		tb_free(p->mods.data[i].error);
	}
	vec_release(&p->mods);
	tb_free(p->name);
}

void tp_sql_packages_free(struct tp *tp)
{
	struct tp_sql_packages *ps = tp->packages;
	tp_sql_defs_free(tp);
	if (!ps)
		return;
	for (size_t i = 0; i < ps->v.len; i++)
		pkg_release(&ps->v.data[i]);
	vec_release(&ps->v);
	pkg_release(&ps->stdlib);
	tb_free(ps);
	tp->packages = NULL;
}

void tp_sql_packages_forget_includes(struct tp *tp)
{
	struct tp_sql_packages *ps = tp->packages;
	for (size_t i = 0; ps && i < ps->v.len; i++) {
		for (size_t j = 0; j < ps->v.data[i].mods.len; j++) {
			struct pkg_module *m = &ps->v.data[i].mods.data[j];
			m->state = MOD_NEW;
			tb_free(m->error);
			m->error = NULL;
		}
	}
	for (size_t j = 0; ps && j < ps->stdlib.mods.len; j++) {
		struct pkg_module *m = &ps->stdlib.mods.data[j];
		if (strncmp(m->name, "prelude.", 8) == 0)
			continue; /* run when the database opened: part of the initial tables */
		m->state = MOD_NEW;
		tb_free(m->error);
		m->error = NULL;
	}
}

/* A package name, other than `skip`, that name is a prefix of or that is a
 * prefix of name, into *clash (n bytes); false if none. */
static bool find_clash(struct tp *tp, const char *name, const struct pkg *skip, const char **clash,
                       size_t *clash_n)
{
	size_t n = strlen(name);
	struct tp_sql_packages *ps = tp->packages;
	for (size_t i = 0; ps && i < ps->v.len; i++) {
		const char *o = ps->v.data[i].name;
		if (&ps->v.data[i] == skip)
			continue;
		if (is_package_prefix(o, strlen(o), name, n) ||
		    is_package_prefix(name, n, o, strlen(o))) {
			*clash = o, *clash_n = strlen(o);
			return true;
		}
	}
	const char *m;
	for (size_t i = 0; (m = builtin_name(i)); i++) {
		size_t pn = builtin_package_len(m);
		if ((pn == n && memcmp(m, name, n) == 0) || find_user(tp, m, pn))
			continue; /* replaced by this package, or by another user one */
		if (is_package_prefix(m, pn, name, n) || is_package_prefix(name, n, m, pn)) {
			*clash = m, *clash_n = pn;
			return true;
		}
	}
	return false;
}

int tp_register_sql_package(struct tp *tp, const struct tp_sql_package *pkg, char *err,
                            size_t err_size)
{
	const char *name = pkg->name ? pkg->name : "";
	size_t n = strlen(name);
	struct pkg *old = find_user(tp, name, n);
	bool taken = old;
	const char *m;
	for (size_t i = 0; !taken && (m = builtin_name(i)); i++)
		taken = builtin_package_len(m) == n && memcmp(m, name, n) == 0;
	if (taken && !pkg->allow_override) {
		snprintf(
		    err, err_size,
		    "Package '%s' is already registered. Choose a different name.\n"
		    "If you want to replace the existing package using trace processor shell, "
		    "you need to pass the --dev flag and use --override-sql-package to pass the "
		    "module path.",
		    name);
		return -EEXIST;
	}
	for (size_t i = 0; i < pkg->nmodules; i++) {
		const char *mn = pkg->modules[i].name ? pkg->modules[i].name : "";
		if (!is_package_prefix(name, n, mn, strlen(mn)) || strlen(mn) == n) {
			snprintf(err, err_size,
			         "Module name '%s' must start with package name '%s.' as prefix.",
			         mn, name);
			return -EINVAL;
		}
	}
	const char *clash;
	size_t clash_n;
	if (find_clash(tp, name, old, &clash, &clash_n)) {
		snprintf(
		    err, err_size,
		    "Package '%s' clashes with existing package '%.*s'. Package names cannot be "
		    "prefixes of each other.",
		    name, (int)clash_n, clash);
		return -EINVAL;
	}

	packages(tp);
	if (old) {
		pkg_release(old);
	} else {
		vec_push_zeroed(&tp->packages->v);
		old = vec_last(&tp->packages->v);
	}
	memset(old, 0, sizeof *old);
	old->name = tb_strdup(name);
	for (size_t i = 0; i < pkg->nmodules; i++) {
		const char *mn = pkg->modules[i].name;
		bool dup = false; /* the first of two modules of one name wins, as Perfetto */
		for (size_t j = 0; j < old->mods.len && !dup; j++)
			dup = strcmp(old->mods.data[j].name, mn) == 0;
		if (dup)
			continue;
		struct pkg_module *pm = vec_push_zeroed(&old->mods);
		pm->name = tb_strdup(mn);
		pm->sql = tb_strdup(pkg->modules[i].sql ? pkg->modules[i].sql : "");
	}
	return 0;
}

/* ---- running a module ----------------------------------------------------- */

/* err = the traceback frame of the statement at stmt in module m's SQL,
 * then inner (an error that may already be a traceback: the frame goes
 * between its head and its frames). */
static void add_frame(const struct pkg_module *m, const char *stmt, const char *inner, char *err,
                      size_t err_size)
{
	unsigned line = 1, col = 1;
	const char *bol = m->sql;
	for (const char *p = m->sql; p < stmt; p++) {
		if (*p == '\n')
			line++, col = 1, bol = p + 1;
		else
			col++;
	}
	size_t head = strlen(TP_SQL_TRACEBACK_HEAD);
	if (strncmp(inner, TP_SQL_TRACEBACK_HEAD, head) == 0)
		inner += head;
	snprintf(err, err_size, "%s  Module include \"%s\" line %u col %u\n    %.*s\n    %*s^\n%s",
	         TP_SQL_TRACEBACK_HEAD, m->name, line, col, (int)strcspn(bol, "\n"), bol,
	         (int)(col - 1), "", inner);
}

/* Run every statement of m's SQL to completion. */
static int run_module(struct tp *tp, struct pkg_module *m, char *err, size_t err_size)
{
	/* The registry does not change while a module runs (SQL cannot
	 * register packages), so m and its SQL stay put. */
	const char *p = m->sql, *tail = NULL;
	char *inner = tb_malloc(err_size);
	int rc = SQLITE_OK;
	m->state = MOD_RUNNING;
	while (*p) {
		sqlite3_stmt *st = NULL;
		while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')
			p++;
		rc = tp_prepare(tp, p, &st, &tail, inner, err_size);
		if (rc == SQLITE_OK && st) {
			while ((rc = sqlite3_step(st)) == SQLITE_ROW)
				;
			if (rc == SQLITE_DONE)
				rc = SQLITE_OK;
			else
				snprintf(inner, err_size, "%s", sqlite3_errmsg(tp->db));
			sqlite3_finalize(st);
		}
		if (rc != SQLITE_OK) {
			add_frame(m, p, inner, err, err_size);
			break;
		}
		if (!st && tail == p)
			break; /* only white space or comments left */
		p = tail;
	}
	m->state = rc == SQLITE_OK ? MOD_DONE : MOD_FAILED;
	if (rc != SQLITE_OK)
		m->error = tb_strdup(err);
	tb_free(inner);
	return rc;
}

/* INCLUDE of user module m. */
static int include_module(struct tp *tp, struct pkg_module *m, char *err, size_t err_size)
{
	switch (m->state) {
	case MOD_DONE:
		return SQLITE_OK;
	case MOD_RUNNING:
		snprintf(
		    err, err_size,
		    "INCLUDE: cycle detected \xe2\x80\x94 module '%s' is already mid-import in "
		    "this execution.",
		    m->name);
		return SQLITE_ERROR;
	case MOD_FAILED:
		snprintf(err, err_size, "INCLUDE: module '%s' poisoned by earlier failure: %s",
		         m->name, m->error);
		return SQLITE_ERROR;
	case MOD_NEW:
		break;
	}
	return run_module(tp, m, err, err_size);
}

/* INCLUDE key (n bytes) of user package p: one module, or with a trailing
 * `*` every module whose name starts with what precedes it (the `*` alone:
 * all of them). */
static int include_user(struct tp *tp, struct pkg *p, const char *key, size_t n, char *err,
                        size_t err_size)
{
	bool wildcard = n > 0 && key[n - 1] == '*';
	size_t pn = wildcard ? n - 1 : n;
	if (n == 1 && wildcard)
		pn = 0;
	/* Modules are addressed by index: running one never adds any. */
	for (size_t i = 0; i < p->mods.len; i++) {
		struct pkg_module *m = &p->mods.data[i];
		bool match = wildcard ? strncmp(m->name, key, pn) == 0
		                      : strlen(m->name) == n && memcmp(m->name, key, n) == 0;
		if (!match)
			continue;
		int rc = include_module(tp, m, err, err_size);
		if (rc != SQLITE_OK || !wildcard)
			return rc;
	}
	if (wildcard)
		return SQLITE_OK;
	snprintf(err, err_size, "INCLUDE: unknown module '%.*s'", (int)n, key);
	return SQLITE_ERROR;
}

/* Do our modules answer key (n bytes; `*` wildcards match any of ours)? */
static bool builtin_known(const char *key, size_t n)
{
	bool wildcard = n > 0 && key[n - 1] == '*';
	size_t pn = wildcard ? n - 1 : n;
	const char *m;
	for (size_t i = 0; (m = builtin_name(i)); i++) {
		if (wildcard ? strncmp(m, key, pn) == 0 : strlen(m) == n && memcmp(m, key, n) == 0)
			return true;
	}
	return false;
}

int tp_sql_include(struct tp *tp, const char *key, size_t n, char *err, size_t err_size)
{
	struct tp_sql_packages *ps = tp->packages;
	if (n == 1 && key[0] == '*') { /* every module of every package */
		for (size_t i = 0; ps && i < ps->v.len; i++) {
			int rc = include_user(tp, &ps->v.data[i], key, n, err, err_size);
			if (rc != SQLITE_OK)
				return rc;
		}
		return SQLITE_OK;
	}
	for (size_t i = 0; ps && i < ps->v.len; i++) {
		struct pkg *p = &ps->v.data[i];
		if (is_package_prefix(p->name, strlen(p->name), key, n))
			return include_user(tp, p, key, n, err, err_size);
	}
	/* Our SQL modules: the one named, or every one a wildcard matches. */
	struct pkg *sp = stdlib(tp);
	bool wildcard = n > 0 && key[n - 1] == '*', any = false;
	for (size_t i = 0; i < sp->mods.len; i++) {
		struct pkg_module *m = &sp->mods.data[i];
		bool match = wildcard ? strncmp(m->name, key, n - 1) == 0
		                      : strlen(m->name) == n && memcmp(m->name, key, n) == 0;
		if (!match)
			continue;
		int rc = include_module(tp, m, err, err_size);
		if (rc != SQLITE_OK)
			return rc;
		any = true;
		if (!wildcard)
			return SQLITE_OK;
	}
	if (any || builtin_known(key, n))
		return SQLITE_OK;
	snprintf(err, err_size, "unknown module '%.*s' in INCLUDE PERFETTO MODULE", (int)n, key);
	return SQLITE_ERROR;
}
