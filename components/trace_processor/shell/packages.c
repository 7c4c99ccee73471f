/*
 * --add-sql-package PATH[@PKG] / --override-sql-package PATH[@PKG]: a
 * directory of .sql files as a user SQL package, as Perfetto's shell reads
 * it. The package is PKG, else the directory's name; each file a/b.sql
 * under PATH is the module PKG.a.b (files whose path has another dot are
 * skipped with a warning, other files ignored):
 *
 *   mydir/utils.sql           --add-sql-package ./mydir      mydir.utils
 *   mydir/helpers/common.sql  --add-sql-package ./mydir@foo  foo.helpers.common
 *
 * The packages are handed to the library in struct tp_config, so the RPC
 * server's every new trace processor has them too.
 */
#include "shell.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base.h"

/* Directories nested deeper than this (a symlink loop) are an error. */
#define MAX_DEPTH 32

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* a + sep + b, with sep left out when a or b is empty (tb_free it). */
static char *join(const char *a, const char *sep, const char *b)
{
	if (!*a || !*b)
		sep = "";
	size_t na = strlen(a), ns = strlen(sep), nb = strlen(b);
	char *s = tb_malloc(na + ns + nb + 1);
	memcpy(s, a, na);
	memcpy(s + na, sep, ns);
	memcpy(s + na + ns, b, nb + 1);
	return s;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, len = 0, n;
	char *s = tb_malloc(cap);
	while ((n = fread(s + len, 1, cap - len - 1, f)) > 0) {
		len += n;
		if (cap - len - 1 == 0)
			s = tb_realloc(s, cap *= 2);
	}
	bool bad = ferror(f);
	fclose(f);
	if (bad) {
		tb_free(s);
		return NULL;
	}
	s[len] = '\0';
	return s;
}

/* Add the .sql files under root/rel (rel "" for root itself) to pkg as
 * modules. 0, or -1 with err set. */
static int add_dir(struct tp_shell_package *sp, const char *root, const char *rel, int depth,
                   char *err, size_t err_size)
{
	char *dir = join(root, "/", rel);
	VEC(char *) names = VEC_INIT;
	int rc = 0;
	DIR *d = opendir(dir);
	if (!d || depth > MAX_DEPTH) {
		snprintf(err, err_size, "cannot read directory '%s': %s", dir,
		         d ? "nested too deeply" : strerror(errno));
		rc = -1;
		goto out;
	}
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			vec_push(&names, tb_strdup(e->d_name));
	qsort(names.data, names.len, sizeof *names.data, cmp_str);
	for (size_t i = 0; i < names.len && rc == 0; i++) {
		char *sub = join(rel, "/", names.data[i]);
		char *path = join(root, "/", sub);
		struct stat st;
		size_t len = strlen(sub);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = add_dir(sp, root, sub, depth + 1, err, err_size);
		} else if (len > 4 && strcmp(sub + len - 4, ".sql") == 0) {
			sub[len - 4] = '\0';
			if (strchr(sub, '.')) {
				fprintf(stderr,
				        "trace_processor_shell: Skipping module %s as it contains "
				        "a dot "
				        "in its path.\n",
				        sub);
			} else {
				char *sql = read_file(path);
				if (!sql) {
					snprintf(err, err_size, "Cannot read file %s", path);
					rc = -1;
				} else {
					for (char *c = sub; *c; c++)
						if (*c == '/')
							*c = '.';
					struct tp_sql_module *m = vec_push_zeroed(&sp->modules);
					m->name = join(sp->pkg.name, ".", sub);
					m->sql = sql;
				}
			}
		}
		tb_free(path);
		tb_free(sub);
	}
out:
	if (d)
		closedir(d);
	for (size_t i = 0; i < names.len; i++)
		tb_free(names.data[i]);
	vec_release(&names);
	tb_free(dir);
	return rc;
}

int tp_shell_package_load(struct tp_shell_package *sp, const char *arg, bool allow_override,
                          char *err, size_t err_size)
{
	memset(sp, 0, sizeof *sp);
	const char *at = strrchr(arg, '@');
	char *root = at ? tb_strndup(arg, (size_t)(at - arg)) : tb_strdup(arg);
	size_t n = strlen(root);
	int rc = -1;
	if (n > 0 && root[n - 1] == '/')
		root[n - 1] = '\0';
	struct stat st;
	if (stat(root, &st) != 0) {
		snprintf(err, err_size, "Directory %s does not exist.", root);
		goto out;
	}
	if (at && at[1]) {
		sp->pkg.name = tb_strdup(at + 1);
	} else {
		const char *slash = strrchr(root, '/');
		if (!slash) {
			snprintf(err, err_size, "Package path must point to a directory: %s", root);
			goto out;
		}
		sp->pkg.name = tb_strdup(slash + 1);
	}
	sp->pkg.allow_override = allow_override;
	rc = add_dir(sp, root, "", 0, err, err_size);
	sp->pkg.modules = sp->modules.data;
	sp->pkg.nmodules = sp->modules.len;
out:
	tb_free(root);
	if (rc < 0)
		tp_shell_package_release(sp);
	return rc;
}

/* --override-stdlib: every module of root, grouped into one package per
 * first path component (slices/with_context.sql is the module
 * slices.with_context of package slices), as Perfetto's shell does. */
int tp_shell_stdlib_load(const char *root_arg, struct tp_shell_package **out, size_t *n, char *err,
                         size_t err_size)
{
	struct tp_shell_package all;
	char *root = tb_strdup(root_arg);
	size_t len = strlen(root);
	int rc = -1;
	*out = NULL;
	*n = 0;
	if (len > 1 && root[len - 1] == '/')
		root[len - 1] = '\0';
	struct stat st;
	memset(&all, 0, sizeof all);
	if (stat(root, &st) != 0) {
		snprintf(err, err_size, "Directory '%s' does not exist.", root);
		goto out;
	}
	all.pkg.name = tb_strdup("");
	if (add_dir(&all, root, "", 0, err, err_size) < 0)
		goto out;
	VEC(struct tp_shell_package) pkgs = VEC_INIT;
	for (size_t i = 0; i < all.modules.len; i++) {
		struct tp_sql_module *m = &all.modules.data[i];
		size_t pn = strcspn(m->name, ".");
		struct tp_shell_package *sp = NULL;
		for (size_t j = 0; j < pkgs.len && !sp; j++)
			if (strlen(pkgs.data[j].pkg.name) == pn &&
			    memcmp(pkgs.data[j].pkg.name, m->name, pn) == 0)
				sp = &pkgs.data[j];
		if (!sp) {
			sp = vec_push_zeroed(&pkgs);
			sp->pkg.name = tb_strndup(m->name, pn);
			sp->pkg.allow_override = true;
		}
		vec_push(&sp->modules, *m);
	}
	for (size_t j = 0; j < pkgs.len; j++) {
		pkgs.data[j].pkg.modules = pkgs.data[j].modules.data;
		pkgs.data[j].pkg.nmodules = pkgs.data[j].modules.len;
	}
	vec_release(&all.modules); /* the modules' strings moved to pkgs */
	*out = pkgs.data;
	*n = pkgs.len;
	rc = 0;
out:
	if (rc < 0)
		tp_shell_package_release(&all);
	else
		tb_free((char *)all.pkg.name);
	tb_free(root);
	return rc;
}

void tp_shell_package_release(struct tp_shell_package *sp)
{
	for (size_t i = 0; i < sp->modules.len; i++) {
		tb_free((char *)sp->modules.data[i].name);
		tb_free((char *)sp->modules.data[i].sql);
	}
	vec_release(&sp->modules);
	tb_free((char *)sp->pkg.name);
	memset(sp, 0, sizeof *sp);
}
