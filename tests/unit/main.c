/*
 * Unit-test runner. Runs every TEST() that build.sh listed in unit_tests.h
 * (or those whose names contain argv[1]), each checked for leaks through the
 * allocation funnel, and prints one line per test: `PASS unit/<name>`,
 * `FAIL unit/<name>` or `SKIP unit/<name>: why` (TEST_SKIP), the protocol
 * tests/run.sh counts.
 */
#include "test.h"

#include <stdarg.h>
#include <stdlib.h>

#include "base.h"

#define X(name) void test_##name(void);
#include "unit_tests.h"
#undef X

static const struct {
	const char *name;
	void (*fn)(void);
} tests[] = {
#define X(name) {#name, test_##name},
#include "unit_tests.h"
#undef X
};

int test_failed;
static char skip_reason[512]; /* "" unless the current test skipped */

void test_skip(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(skip_reason, sizeof skip_reason, fmt, ap);
	va_end(ap);
	if (!skip_reason[0])
		snprintf(skip_reason, sizeof skip_reason, "skipped");
}

int test_skipped(void)
{
	return skip_reason[0] != '\0';
}

void test_report(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "  %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	test_failed = 1;
}

void test_hexdump(const char *label, const void *p, size_t n)
{
	const unsigned char *b = p;
	fprintf(stderr, "  %s:", label);
	for (size_t i = 0; i < n && i < 256; i++)
		fprintf(stderr, "%s%02x", i % 32 ? " " : "\n    ", b[i]);
	fputc('\n', stderr);
}

const char *test_data_path(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("TB_TEST_ROOT");
	snprintf(buf, sizeof buf, "%s/tests/data/%s", root ? root : ".", rel);
	return buf;
}

const char *test_shared_dir(void)
{
	static char buf[4096];
	const char *root = getenv("TB_TEST_ROOT");
	snprintf(buf, sizeof buf, "%s/../shared", root ? root : ".");
	FILE *f = fopen(buf, "r");
	if (!f)
		return NULL;
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	int failed = 0;
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (filter && !strstr(tests[i].name, filter))
			continue;
		size_t live = tb_alloc_live_bytes();
		test_failed = 0;
		skip_reason[0] = '\0';
		tests[i].fn();
		tb_alloc_fail_after(0);
		tb_alloc_fail_soft(false);
		if (!test_failed && tb_alloc_live_bytes() != live) {
			fprintf(stderr, "  leak: %zu bytes still allocated through tb_malloc\n",
			        tb_alloc_live_bytes() - live);
			test_failed = 1;
		}
		if (!test_failed && skip_reason[0])
			printf("SKIP unit/%s: %s\n", tests[i].name, skip_reason);
		else
			printf("%s unit/%s\n", test_failed ? "FAIL" : "PASS", tests[i].name);
		failed += test_failed;
	}
	return failed ? 1 : 0;
}
