/*
 * A small unit-test harness. A test is `TEST(name) { ... }` in a file
 * tests/unit/<component>_test.c; build.sh finds every TEST(...) line and
 * generates the list the runner (main.c) walks, so nothing is registered by
 * hand. CHECK* macros print both sides on failure and end the test.
 *
 * The runner checks each test for leaks through the base allocation funnel:
 * a test must free what it allocates through tb_malloc & co.
 *
 * A test that cannot run here (no root, no ../shared, a tool missing) ends
 * with TEST_SKIP("why"): the runner prints `SKIP unit/<name>: why`, which
 * tests/run.sh counts as skipped, never as passed.
 */
#ifndef TB_TEST_H
#define TB_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define TEST(name) void test_##name(void)

extern int test_failed; /* set by a failing CHECK in the current test */
void test_report(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void test_hexdump(const char *label, const void *p, size_t n);
/* Mark the current test skipped, with printf-style reason; the runner
 * prints `SKIP unit/<name>: <reason>` for it unless a CHECK failed. For
 * helpers that find the test cannot run (they return and the test returns
 * after them); a test itself uses TEST_SKIP, which also returns. */
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define TEST_SKIP(...)                  \
	do {                            \
		test_skip(__VA_ARGS__); \
		return;                 \
	} while (0)
/* Was test_skip called in the current test? */
int test_skipped(void);
/* Path of a data file under tests/data/ (resolved against TB_TEST_ROOT). */
const char *test_data_path(const char *rel);
/* ../shared, or NULL when it is not beside the checkout. */
const char *test_shared_dir(void);

#define CHECK(cond)                                                          \
	do {                                                                 \
		if (!(cond)) {                                               \
			test_report(__FILE__, __LINE__, "CHECK(%s)", #cond); \
			return;                                              \
		}                                                            \
	} while (0)

#define CHECK_EQ(a, b)                                                                            \
	do {                                                                                      \
		long long a_ = (long long)(a), b_ = (long long)(b);                               \
		if (a_ != b_) {                                                                   \
			test_report(__FILE__, __LINE__, "CHECK_EQ(%s, %s): %lld != %lld", #a, #b, \
			            a_, b_);                                                      \
			return;                                                                   \
		}                                                                                 \
	} while (0)

#define CHECK_UEQ(a, b)                                                                          \
	do {                                                                                     \
		unsigned long long a_ = (unsigned long long)(a), b_ = (unsigned long long)(b);   \
		if (a_ != b_) {                                                                  \
			test_report(__FILE__, __LINE__,                                          \
			            "CHECK_UEQ(%s, %s): %llu (0x%llx) != %llu (0x%llx)", #a, #b, \
			            a_, a_, b_, b_);                                             \
			return;                                                                  \
		}                                                                                \
	} while (0)

#define CHECK_DBL_EQ(a, b)                                                                      \
	do {                                                                                    \
		double a_ = (a), b_ = (b);                                                      \
		if (a_ != b_) {                                                                 \
			test_report(__FILE__, __LINE__, "CHECK_DBL_EQ(%s, %s): %.17g != %.17g", \
			            #a, #b, a_, b_);                                            \
			return;                                                                 \
		}                                                                               \
	} while (0)

#define CHECK_STR_EQ(a, b)                                                                        \
	do {                                                                                      \
		const char *a_ = (a), *b_ = (b);                                                  \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                          \
			test_report(__FILE__, __LINE__, "CHECK_STR_EQ(%s, %s): \"%s\" != \"%s\"", \
			            #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)");              \
			return;                                                                   \
		}                                                                                 \
	} while (0)

#define CHECK_MEM_EQ(a, b, n)                                                                     \
	do {                                                                                      \
		const void *a_ = (a), *b_ = (b);                                                  \
		size_t n_ = (n);                                                                  \
		if (memcmp(a_, b_, n_) != 0) {                                                    \
			test_report(__FILE__, __LINE__, "CHECK_MEM_EQ(%s, %s, %zu)", #a, #b, n_); \
			test_hexdump(#a, a_, n_);                                                 \
			test_hexdump(#b, b_, n_);                                                 \
			return;                                                                   \
		}                                                                                 \
	} while (0)

#endif /* TB_TEST_H */
