/*
 * Private to the shell: the interactive loop (interactive.c) and the SQL
 * package directories (packages.c) used by shell.c.
 */
#ifndef TB_TP_SHELL_H
#define TB_TP_SHELL_H

#include <stdbool.h>

#include "base.h"
#include "../trace_processor.h"

/* Read statements from stdin until EOF or .quit, printing aligned tables.
 * SQL errors are printed and the shell carries on. Returns 0. */
int tp_shell_interactive(struct tp *tp, bool wide);

/* A package read from a directory: pkg points into modules. */
struct tp_shell_package {
	struct tp_sql_package pkg;
	VEC(struct tp_sql_module) modules;
};

/* Read the package of --add-sql-package (or, allow_override,
 * --override-sql-package) argument arg, "PATH[@PKG]", into *sp (release
 * it with tp_shell_package_release). Returns 0, or -1 with Perfetto's
 * message in err (no such directory, unreadable file). */
int tp_shell_package_load(struct tp_shell_package *sp, const char *arg, bool allow_override,
                          char *err, size_t err_size);
void tp_shell_package_release(struct tp_shell_package *sp);

#endif /* TB_TP_SHELL_H */
