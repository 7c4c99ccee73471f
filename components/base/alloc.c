/*
 * The allocation funnel. Every component allocates through tb_malloc & co. so
 * that live bytes can be counted (bench/ and the trace processor's memory
 * figures read them) and so tests can fail the Nth allocation to exercise
 * every error path, as SQLite's test_malloc and curl's torture mode do.
 *
 * Each block carries a 16-byte header holding its size, which keeps the count
 * exact without malloc_usable_size (absent on some libcs) and keeps the user
 * pointer 16-byte aligned.
 */
#include "base.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HDR 16

static atomic_size_t live_bytes;
static atomic_size_t peak_bytes;
static atomic_ulong fail_countdown;
static atomic_bool fail_soft;

static TB_NORETURN void oom(size_t n)
{
	char buf[96];
	int len = snprintf(buf, sizeof buf, "tracebox: out of memory allocating %zu bytes\n", n);
	if (len > 0 && write(2, buf, (size_t)len) < 0) {
		/* nothing more we can do */
	}
	abort();
}

/* True when the injected failure is due now. */
static bool should_fail(void)
{
	unsigned long c = atomic_load_explicit(&fail_countdown, memory_order_relaxed);
	while (c != 0) {
		if (atomic_compare_exchange_weak(&fail_countdown, &c, c - 1))
			return c == 1;
	}
	return false;
}

static void account(size_t add, size_t sub)
{
	size_t now = atomic_fetch_add(&live_bytes, add) + add;
	atomic_fetch_sub(&live_bytes, sub);
	now -= sub;
	size_t peak = atomic_load(&peak_bytes);
	while (now > peak && !atomic_compare_exchange_weak(&peak_bytes, &peak, now)) {
	}
}

void *tb_try_realloc(void *p, size_t n)
{
	if (n == 0) {
		tb_free(p);
		return NULL;
	}
	if (should_fail() || n > SIZE_MAX - HDR)
		return NULL;
	char *base = p ? (char *)p - HDR : NULL;
	size_t old = base ? *(size_t *)base : 0;
	char *nb = realloc(base, n + HDR);
	if (!nb)
		return NULL;
	*(size_t *)nb = n;
	account(n, old);
	return nb + HDR;
}

void *tb_try_malloc(size_t n)
{
	return tb_try_realloc(NULL, n ? n : 1);
}

void *tb_realloc(void *p, size_t n)
{
	if (n == 0) {
		tb_free(p);
		return NULL;
	}
	void *r = tb_try_realloc(p, n);
	if (!r && !atomic_load(&fail_soft))
		oom(n);
	return r;
}

void *tb_malloc(size_t n)
{
	return tb_realloc(NULL, n ? n : 1);
}

void *tb_calloc(size_t count, size_t size)
{
	size_t n;
	if (!tb_mul_ok(count, size, &n))
		oom(SIZE_MAX);
	void *p = tb_malloc(n);
	if (p)
		memset(p, 0, n);
	return p;
}

void tb_free(void *p)
{
	if (!p)
		return;
	char *base = (char *)p - HDR;
	account(0, *(size_t *)base);
	free(base);
}

void *tb_memdup(const void *p, size_t n)
{
	void *r = tb_malloc(n);
	if (r && n)
		memcpy(r, p, n);
	return r;
}

char *tb_strndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *r = tb_malloc(len + 1);
	if (!r)
		return NULL;
	memcpy(r, s, len);
	r[len] = '\0';
	return r;
}

char *tb_strdup(const char *s)
{
	return tb_strndup(s, SIZE_MAX);
}

size_t tb_alloc_live_bytes(void)
{
	return atomic_load(&live_bytes);
}

size_t tb_alloc_peak_bytes(void)
{
	return atomic_load(&peak_bytes);
}

void tb_alloc_fail_after(unsigned long n)
{
	atomic_store(&fail_countdown, n);
}

void tb_alloc_fail_soft(bool soft)
{
	atomic_store(&fail_soft, soft);
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; not in musl's headers yet */
#endif

void tb_populate(void *p, size_t n)
{
	static uintptr_t page;
	if (!page)
		page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(page - 1);
	uintptr_t to = ((uintptr_t)p + n) & ~(page - 1);
	if (to > from)
		(void)madvise((void *)from, to - from, MADV_POPULATE_WRITE);
}
