/*
 * The error type. Lower layers record what failed, in a sentence a user can
 * act on; applets print it. The first error recorded on a handle wins, since
 * later failures are usually consequences of it.
 */
#include "base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tb_check_failed(const char *file, int line, const char *expr)
{
	char buf[512];
	int n =
	    snprintf(buf, sizeof buf, "tracebox: check failed at %s:%d: %s\n", file, line, expr);
	if (n > 0 && write(2, buf, (size_t)n) < 0) {
		/* nothing more we can do */
	}
	abort();
}

void tb_err_clear(struct tb_err *e)
{
	e->code = 0;
	e->msg[0] = '\0';
}

static int err_vset(struct tb_err *e, int code, bool with_errno, const char *fmt, va_list ap)
{
	if (!e || e->code != 0)
		return code;
	e->code = code ? code : -1;
	int n = vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	if (with_errno && n >= 0 && (size_t)n < sizeof e->msg)
		snprintf(e->msg + n, sizeof e->msg - (size_t)n, ": %s", strerror(-code));
	return code;
}

int tb_err_set(struct tb_err *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(e, code, false, fmt, ap);
	va_end(ap);
	return code;
}

int tb_err_errno(struct tb_err *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	err_vset(e, code, true, fmt, ap);
	va_end(ap);
	return code;
}
