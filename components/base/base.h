/*
 * base: the foundations every other component stands on.
 *
 * One allocation funnel (tb_malloc & co.) that counts live bytes and, in test
 * builds, can be told to fail the Nth allocation; one error type (struct
 * tb_err) that lower layers fill and applets print. The rest of this header
 * (arena, vec, hmap, strpool, log, clocks, fd helpers, event loop) follows the
 * same rules: plain structs, `_init`/`_release` for embedded values,
 * `_new`/`_free` for heap handles, 0 / negative errno-style returns.
 *
 * Nothing here is thread-safe unless it says so; each daemon runs one loop.
 */
#ifndef TB_BASE_H
#define TB_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <sys/types.h>

#define TB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TB_NORETURN __attribute__((noreturn))
#define TB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TB_LIKELY(x) __builtin_expect(!!(x), 1)
#define TB_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- checks ------------------------------------------------------------ */

/* Abort with file:line and the failed expression. For invariants that must
 * hold in release builds too; never for conditions input can trigger. */
#define TB_CHECK(cond)                                                         \
	do {                                                                   \
		if (TB_UNLIKELY(!(cond)))                                      \
			tb_check_failed(__FILE__, __LINE__, #cond);            \
	} while (0)
#ifdef NDEBUG
#define TB_DCHECK(cond) ((void)0)
#else
#define TB_DCHECK(cond) TB_CHECK(cond)
#endif
TB_NORETURN void tb_check_failed(const char *file, int line, const char *expr);

/* ---- allocation funnel (alloc.c) ---------------------------------------- */

/* All heap memory goes through these. They never return NULL for a non-zero
 * size: on exhaustion (or an injected failure, see tb_alloc_fail_after) they
 * print one line and abort. tb_free(NULL) is a no-op. Thread-safe. */
void *tb_malloc(size_t n);
void *tb_calloc(size_t count, size_t size); /* overflow-checked, zeroed */
void *tb_realloc(void *p, size_t n);        /* n == 0 frees, returns NULL */
void tb_free(void *p);
char *tb_strdup(const char *s);
char *tb_strndup(const char *s, size_t n);
void *tb_memdup(const void *p, size_t n);

/* Fallible variants for sizes that come from input: return NULL instead of
 * aborting, so the caller can record an error and carry on. */
void *tb_try_malloc(size_t n);
void *tb_try_realloc(void *p, size_t n);

/* Bytes currently allocated through the funnel, and the high-water mark. */
size_t tb_alloc_live_bytes(void);
size_t tb_alloc_peak_bytes(void);

/* Test hook: the n-th allocation from now (1 = the next one) fails; 0 turns
 * injection off. tb_try_* return NULL for it, the others abort as on OOM
 * unless tb_alloc_fail_soft(true) made them return NULL too (tests only). */
void tb_alloc_fail_after(unsigned long n);
void tb_alloc_fail_soft(bool soft);

/* a*b and a+b with overflow checks: return false if it overflows. */
static inline bool tb_mul_ok(size_t a, size_t b, size_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}
static inline bool tb_add_ok(size_t a, size_t b, size_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* ---- errors (err.c) ------------------------------------------------------ */

#define TB_ERR_MSG_MAX 512

/* An error slot embedded in a handle. Lower layers record the first error
 * (later ones do not overwrite it); the applet fetches and prints msg. code is
 * a negative errno-style value (-EINVAL, -ENOENT, ...). */
struct tb_err {
	int code;
	char msg[TB_ERR_MSG_MAX];
};

void tb_err_clear(struct tb_err *e);
/* Record an error and return code (so `return tb_err_set(e, -EINVAL, ...)`).
 * A NULL e is allowed and only returns code. */
int tb_err_set(struct tb_err *e, int code, const char *fmt, ...) TB_PRINTF(3, 4);
/* Like tb_err_set but appends ": strerror(-code)". */
int tb_err_errno(struct tb_err *e, int code, const char *fmt, ...) TB_PRINTF(3, 4);
static inline bool tb_err_is_set(const struct tb_err *e) { return e->code != 0; }

#endif /* TB_BASE_H */
