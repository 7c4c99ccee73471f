/*
 * Private to the shell: the interactive loop (interactive.c) used by
 * shell.c.
 */
#ifndef TB_TP_SHELL_H
#define TB_TP_SHELL_H

#include <stdbool.h>

#include "../trace_processor.h"

/* Read statements from stdin until EOF or .quit, printing aligned tables.
 * SQL errors are printed and the shell carries on. Returns 0. */
int tp_shell_interactive(struct tp *tp, bool wide);

#endif /* TB_TP_SHELL_H */
