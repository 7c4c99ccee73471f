/*
 * Unit tests for components/base: the allocation funnel, arena, vectors,
 * hash map, string pool, logging, time parsing, fd helpers and the event
 * loop. Loop tests use real pipes, timerfds and signals with short timeouts
 * and bound every wait so a regression fails instead of hanging.
 */
#include "test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base.h"

/* ---- allocation funnel --------------------------------------------------- */

TEST(base_alloc_counting)
{
	size_t before = tb_alloc_live_bytes();
	char *p = tb_malloc(100);
	CHECK_UEQ(tb_alloc_live_bytes(), before + 100);
	p = tb_realloc(p, 300);
	CHECK_UEQ(tb_alloc_live_bytes(), before + 300);
	CHECK(tb_alloc_peak_bytes() >= before + 300);
	char *s = tb_strndup("hello world", 5);
	CHECK_STR_EQ(s, "hello");
	CHECK_UEQ(tb_alloc_live_bytes(), before + 306);
	int *z = tb_calloc(4, sizeof(int));
	CHECK_EQ(z[0] | z[1] | z[2] | z[3], 0);
	tb_free(z);
	tb_free(s);
	tb_free(p);
	tb_free(NULL);
	CHECK_UEQ(tb_alloc_live_bytes(), before);
}

TEST(base_alloc_fail_injection)
{
	tb_alloc_fail_after(2);
	void *a = tb_try_malloc(16);
	void *b = tb_try_malloc(16);
	void *c = tb_try_malloc(16);
	CHECK(a != NULL);
	CHECK(b == NULL);
	CHECK(c != NULL);
	tb_free(a);
	tb_free(c);

	/* Soft mode makes the aborting variants return NULL too. */
	tb_alloc_fail_soft(true);
	tb_alloc_fail_after(1);
	CHECK(tb_malloc(8) == NULL);
	tb_alloc_fail_soft(false);

	/* A failed vec_try_reserve leaves the vector untouched. */
	VEC(int) v = VEC_INIT;
	vec_push(&v, 7);
	int *data = v.data;
	tb_alloc_fail_after(1);
	CHECK_EQ(vec_try_reserve(&v, 1000), -ENOMEM);
	CHECK(v.data == data);
	CHECK_EQ(v.len, 1);
	CHECK_EQ(vec_try_reserve(&v, SIZE_MAX / 2), -ENOMEM);
	CHECK_EQ(vec_try_reserve(&v, 1000), 0);
	CHECK(v.cap >= 1001);
	CHECK_EQ(v.data[0], 7);
	vec_release(&v);
}

TEST(base_err)
{
	struct tb_err e;
	tb_err_clear(&e);
	CHECK(!tb_err_is_set(&e));
	CHECK_EQ(tb_err_errno(&e, -ENOENT, "cannot open '%s'", "x.json"), -ENOENT);
	CHECK_STR_EQ(e.msg, "cannot open 'x.json': No such file or directory");
	/* The first error wins. */
	tb_err_set(&e, -EINVAL, "later");
	CHECK_EQ(e.code, -ENOENT);
	CHECK_EQ(tb_err_set(NULL, -EIO, "ignored"), -EIO);
}

/* ---- arena ---------------------------------------------------------------- */

TEST(base_arena_basic)
{
	struct arena a;
	arena_init(&a, 1024);
	char *p = arena_alloc(&a, 3, 1);
	memcpy(p, "ab", 3);
	for (size_t align = 1; align <= 64; align *= 2) {
		void *q = arena_alloc(&a, 5, align);
		CHECK_UEQ((uintptr_t)q % align, 0);
		memset(q, 0xaa, 5);
	}
	CHECK_STR_EQ(p, "ab");
	char *s = arena_strndup(&a, "trace_processor", 5);
	CHECK_STR_EQ(s, "trace");
	char *t = arena_strndup(&a, "ab", 100);
	CHECK_STR_EQ(t, "ab");
	int *z = arena_zalloc(&a, 16 * sizeof(int), _Alignof(int));
	for (int i = 0; i < 16; i++)
		CHECK_EQ(z[i], 0);
	CHECK_MEM_EQ(arena_memdup(&a, "x\0y", 3), "x\0y", 3);

	/* Fill many blocks; earlier pointers stay valid. */
	char *ptrs[500];
	for (int i = 0; i < 500; i++) {
		ptrs[i] = arena_alloc(&a, 100, 8);
		memset(ptrs[i], i & 0xff, 100);
	}
	for (int i = 0; i < 500; i++)
		CHECK_EQ((unsigned char)ptrs[i][99], i & 0xff);
	CHECK(a.held >= 500 * 100);
	arena_release(&a);
	CHECK(a.blocks == NULL);
	CHECK_UEQ(a.held, 0);
}

TEST(base_arena_large_and_reset)
{
	struct arena a;
	arena_init(&a, 4096);
	char *small = arena_alloc(&a, 10, 1);
	char *cur = a.cur;
	/* A large request gets its own block and keeps the bump block. */
	char *big = arena_alloc(&a, 100000, 16);
	memset(big, 1, 100000);
	CHECK_UEQ((uintptr_t)big % 16, 0);
	CHECK(a.cur == cur);
	char *small2 = arena_alloc(&a, 10, 1);
	CHECK(small2 == small + 10);
	size_t held = a.held;
	CHECK(held >= 4096 + 100000);

	arena_reset(&a);
	CHECK(a.blocks != NULL);
	CHECK(a.held < 4096 + 200);
	/* Warm arena: allocating again reuses the kept block. */
	size_t live = tb_alloc_live_bytes();
	arena_alloc(&a, 100, 8);
	CHECK_UEQ(tb_alloc_live_bytes(), live);
	arena_release(&a);

	/* Zero-initialised arena works and a large first request is fine. */
	struct arena z = {0};
	memset(arena_alloc(&z, 1 << 20, 64), 0, 1 << 20);
	memset(arena_alloc(&z, 8, 8), 0, 8);
	arena_reset(&z);
	arena_release(&z);
}

/* ---- vectors ---------------------------------------------------------------- */

struct point {
	int x, y;
};
VEC_DEFINE(point_vec, struct point);

static size_t sum_points(const struct point_vec *v)
{
	size_t s = 0;
	for (size_t i = 0; i < v->len; i++)
		s += (size_t)(v->data[i].x + v->data[i].y);
	return s;
}

TEST(base_vec_growth)
{
	VEC(uint64_t) v = VEC_INIT;
	for (uint64_t i = 0; i < 100000; i++)
		vec_push(&v, i * 3);
	CHECK_UEQ(v.len, 100000);
	CHECK(v.cap >= v.len);
	for (uint64_t i = 0; i < v.len; i++)
		CHECK_UEQ(v.data[i], i * 3);
	CHECK_UEQ(*vec_last(&v), 99999 * 3);
	CHECK_UEQ(vec_pop(&v), 99999 * 3);
	CHECK_UEQ(v.len, 99999);
	vec_clear(&v);
	CHECK_UEQ(v.len, 0);
	vec_release(&v);
	CHECK(v.data == NULL);

	struct point_vec pv = VEC_INIT;
	struct point *p = vec_push_zeroed(&pv);
	CHECK_EQ(p->x, 0);
	p->x = 1;
	p->y = 2;
	vec_push(&pv, ((struct point){3, 4}));
	CHECK_UEQ(sum_points(&pv), 10);
	vec_resize(&pv, 10);
	CHECK_UEQ(pv.len, 10);
	CHECK_EQ(pv.data[9].x, 0);
	vec_resize(&pv, 1);
	CHECK_UEQ(sum_points(&pv), 3);
	vec_reserve(&pv, 500);
	CHECK(pv.cap >= 501);
	vec_release(&pv);
}

/* ---- hash ------------------------------------------------------------------- */

TEST(base_hash)
{
	const char *s = "the quick brown fox jumps over the lazy dog";
	uint64_t h = tb_hash_bytes(s, strlen(s), 0);
	CHECK_UEQ(h, tb_hash_bytes(s, strlen(s), 0));
	CHECK(h != tb_hash_bytes(s, strlen(s), 1));
	/* Every length and every single-byte change gives a different hash. */
	char buf[64];
	memset(buf, 'a', sizeof buf);
	struct hmap seen = {0};
	for (size_t n = 0; n <= sizeof buf; n++)
		CHECK(hmap_put(&seen, tb_hash_bytes(buf, n, 0), n));
	for (size_t i = 0; i < sizeof buf; i++) {
		buf[i] = 'b';
		CHECK(hmap_put(&seen, tb_hash_bytes(buf, sizeof buf, 0), i));
		buf[i] = 'a';
	}
	hmap_release(&seen);
	CHECK(tb_hash_u64(0) != tb_hash_u64(1));
}

/* ---- hash map ---------------------------------------------------------------- */

TEST(base_hmap_u64)
{
	struct hmap m;
	hmap_init(&m);
	uint64_t v = 0;
	CHECK(!hmap_get(&m, 1, &v));
	CHECK(!hmap_del(&m, 1, NULL));
	const uint64_t n = 50000;
	for (uint64_t i = 0; i < n; i++)
		CHECK(hmap_put(&m, i * 7919, i));
	CHECK_UEQ(m.len, n);
	CHECK(!hmap_put(&m, 7919, 42)); /* overwrite */
	CHECK(hmap_get(&m, 7919, &v));
	CHECK_UEQ(v, 42);
	hmap_put(&m, 7919, 1);
	for (uint64_t i = 0; i < n; i++) {
		CHECK(hmap_get(&m, i * 7919, &v));
		CHECK_UEQ(v, i);
	}
	CHECK(!hmap_get(&m, 3, NULL));
	/* Delete every other key; the rest must stay reachable. */
	for (uint64_t i = 0; i < n; i += 2) {
		CHECK(hmap_del(&m, i * 7919, &v));
		CHECK_UEQ(v, i);
	}
	CHECK_UEQ(m.len, n / 2);
	for (uint64_t i = 0; i < n; i++)
		CHECK_EQ(hmap_get(&m, i * 7919, &v), i % 2 == 1);
	size_t count = 0;
	for (size_t i = hmap_next(&m, 0); i != HMAP_END; i = hmap_next(&m, i + 1)) {
		CHECK_UEQ(m.slots[i].key % 7919, 0);
		count++;
	}
	CHECK_UEQ(count, n / 2);

	bool is_new;
	uint64_t *slot = hmap_upsert(&m, 123456789, &is_new);
	CHECK(is_new);
	CHECK_UEQ(*slot, 0);
	(*slot)++;
	slot = hmap_upsert(&m, 123456789, &is_new);
	CHECK(!is_new);
	CHECK_UEQ(*slot, 1);

	int x;
	CHECK(hmap_put_ptr(&m, 5, &x));
	CHECK(hmap_get_ptr(&m, 5) == &x);
	CHECK(hmap_get_ptr(&m, 6) == NULL);

	hmap_clear(&m);
	CHECK_UEQ(m.len, 0);
	CHECK(!hmap_get(&m, 7919, NULL));
	hmap_release(&m);
}

/* All keys share the same hash: one long probe run, deletions from its
 * middle must shift the tail back correctly. */
struct same_hash_ctx {
	uint64_t want;
};

static bool key_eq(const void *ctx, uint64_t key)
{
	return ((const struct same_hash_ctx *)ctx)->want == key;
}

TEST(base_hmap_collisions)
{
	struct hmap m = {0};
	const uint64_t hash = 0xdeadbeef12345678ull;
	for (uint64_t k = 0; k < 200; k++) {
		struct same_hash_ctx c = {k};
		CHECK_UEQ(hmap_lookup(&m, hash, key_eq, &c), HMAP_END);
		hmap_insert(&m, hash, k, k + 1000);
	}
	/* A second cluster that wraps around the end of the table. */
	uint64_t hash2 = ((uint64_t)(m.cap - 2)) << 32;
	for (uint64_t k = 1000; k < 1010; k++)
		hmap_insert(&m, hash2, k, k);
	for (uint64_t k = 0; k < 200; k += 3) {
		struct same_hash_ctx c = {k};
		size_t slot = hmap_lookup(&m, hash, key_eq, &c);
		CHECK(slot != HMAP_END);
		CHECK_UEQ(m.slots[slot].val, k + 1000);
		hmap_remove_at(&m, slot);
	}
	for (uint64_t k = 1000; k < 1010; k += 2) {
		struct same_hash_ctx c = {k};
		size_t slot = hmap_lookup(&m, hash2, key_eq, &c);
		CHECK(slot != HMAP_END);
		hmap_remove_at(&m, slot);
	}
	for (uint64_t k = 0; k < 200; k++) {
		struct same_hash_ctx c = {k};
		size_t slot = hmap_lookup(&m, hash, key_eq, &c);
		CHECK_EQ(slot != HMAP_END, k % 3 != 0);
		if (slot != HMAP_END)
			CHECK_UEQ(m.slots[slot].val, k + 1000);
	}
	for (uint64_t k = 1000; k < 1010; k++) {
		struct same_hash_ctx c = {k};
		CHECK_EQ(hmap_lookup(&m, hash2, key_eq, &c) != HMAP_END, k % 2 == 1);
	}
	hmap_release(&m);
}

/* Random insert/delete against a plain array as the model. */
TEST(base_hmap_churn)
{
	struct hmap m = {0};
	static int8_t present[4096];
	memset(present, 0, sizeof present);
	uint64_t rng = 1;
	for (int step = 0; step < 200000; step++) {
		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t k = (rng >> 33) % 4096;
		if ((rng >> 20) & 1) {
			CHECK_EQ(hmap_put(&m, k, k * 2), !present[k]);
			present[k] = 1;
		} else {
			CHECK_EQ(hmap_del(&m, k, NULL), present[k]);
			present[k] = 0;
		}
	}
	size_t n = 0;
	for (uint64_t k = 0; k < 4096; k++) {
		uint64_t v;
		CHECK_EQ(hmap_get(&m, k, &v), present[k]);
		if (present[k]) {
			CHECK_UEQ(v, k * 2);
			n++;
		}
	}
	CHECK_UEQ(m.len, n);
	hmap_release(&m);
}

/* ---- string pool ------------------------------------------------------------- */

TEST(base_strpool_intern)
{
	struct strpool p;
	strpool_init(&p);
	CHECK_EQ(strpool_intern(&p, NULL, 0), 0);
	CHECK_EQ(strpool_intern(&p, "", 0), 0);
	size_t len = 99;
	CHECK_STR_EQ(strpool_get(&p, 0, &len), "");
	CHECK_UEQ(len, 0);

	uint32_t a = strpool_intern_cstr(&p, "sched_switch");
	uint32_t b = strpool_intern_cstr(&p, "sched_waking");
	CHECK(a != 0 && b != 0 && a != b);
	CHECK_EQ(strpool_intern(&p, "sched_switch", 12), a);
	CHECK_EQ(strpool_intern(&p, "sched_switchX", 12), a);
	CHECK(strpool_intern(&p, "sched_switch", 5) != a);
	CHECK_STR_EQ(strpool_get(&p, a, &len), "sched_switch");
	CHECK_UEQ(len, 12);

	/* Embedded NULs are part of the string. */
	uint32_t z = strpool_intern(&p, "a\0b", 3);
	CHECK(z != strpool_intern(&p, "a", 1));
	CHECK_MEM_EQ(strpool_get(&p, z, &len), "a\0b", 4);
	CHECK_UEQ(len, 3);

	uint32_t id;
	CHECK(strpool_find(&p, "sched_waking", 12, &id));
	CHECK_EQ(id, b);
	size_t size = strpool_size(&p);
	CHECK(!strpool_find(&p, "nope", 4, &id));
	CHECK_UEQ(strpool_size(&p), size);
	CHECK(strpool_find(&p, "", 0, &id));
	CHECK_EQ(id, 0);
	strpool_release(&p);
}

/* A present but empty string has an id of its own, stable, reading as "",
 * while interning "" still gives 0 (none). */
TEST(base_strpool_empty)
{
	struct strpool p;
	strpool_init(&p);
	uint32_t e = strpool_empty(&p);
	CHECK(e != 0);
	CHECK_EQ(strpool_empty(&p), e);
	CHECK_EQ(strpool_intern(&p, "", 0), 0);
	uint32_t a = strpool_intern_cstr(&p, "a");
	CHECK(a != e);
	size_t len = 99;
	CHECK_STR_EQ(strpool_get(&p, e, &len), "");
	CHECK_UEQ(len, 0);
	uint32_t id = 99;
	CHECK(strpool_find(&p, "", 0, &id)); /* what SQL's name = '' looks up */
	CHECK_EQ(id, e);
	strpool_release(&p);
}

TEST(base_strpool_many)
{
	struct strpool p;
	strpool_init(&p);
	enum { N = 100000 };
	uint32_t *ids = tb_malloc(N * sizeof *ids);
	const char **ptrs = tb_malloc(N * sizeof *ptrs);
	char buf[64];
	for (int i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof buf, "thread-%d", i);
		ids[i] = strpool_intern(&p, buf, (size_t)n);
		ptrs[i] = strpool_get(&p, ids[i], NULL);
	}
	CHECK_UEQ(strpool_size(&p), N + 1);
	/* A string longer than the pool's block goes to its own block. */
	size_t big_len = 3 << 20;
	char *big = tb_malloc(big_len);
	memset(big, 'x', big_len);
	uint32_t big_id = strpool_intern(&p, big, big_len);
	CHECK_EQ(strpool_intern(&p, big, big_len), big_id);
	tb_free(big);

	/* Ids and pointers are stable after all the growth; dedup holds. */
	for (int i = 0; i < N; i++) {
		int n = snprintf(buf, sizeof buf, "thread-%d", i);
		CHECK_EQ(strpool_intern(&p, buf, (size_t)n), ids[i]);
		size_t len;
		const char *s = strpool_get(&p, ids[i], &len);
		CHECK(s == ptrs[i]);
		CHECK_UEQ(len, (size_t)n);
		CHECK_STR_EQ(s, buf);
	}
	CHECK_UEQ(strpool_size(&p), N + 2);
	CHECK(strpool_bytes(&p) > big_len);
	tb_free(ptrs);
	tb_free(ids);
	strpool_release(&p);
}

/* ---- logging ------------------------------------------------------------------ */

struct log_capture {
	int count;
	char last[256];
	char last_tag[32];
	enum log_level last_level;
};

static void capture_sink(void *ctx, enum log_level level, const char *tag, const char *msg)
{
	struct log_capture *c = ctx;
	c->count++;
	c->last_level = level;
	snprintf(c->last, sizeof c->last, "%s", msg);
	snprintf(c->last_tag, sizeof c->last_tag, "%s", tag);
}

TEST(base_log_filter)
{
	struct log_capture c = {0};
	struct tb_err err;
	tb_err_clear(&err);
	log_set_sink(capture_sink, &c);
	CHECK_EQ(log_set_spec("warn,ipc=debug,traced=error", &err), 0);

	log_debug("ipc", "frame of %d bytes", 42);
	CHECK_EQ(c.count, 1);
	CHECK_STR_EQ(c.last, "frame of 42 bytes");
	CHECK_STR_EQ(c.last_tag, "ipc");
	CHECK_EQ(c.last_level, LOG_LEVEL_DEBUG);

	log_warn("traced", "dropped");
	log_info("probes", "not shown");
	CHECK_EQ(c.count, 1);
	log_error("traced", "shown");
	log_warn("probes", "shown too");
	CHECK_EQ(c.count, 3);
	CHECK_STR_EQ(c.last, "shown too");
	CHECK(log_enabled("ipc", LOG_LEVEL_DEBUG));
	CHECK(!log_enabled("ftrace", LOG_LEVEL_INFO));

	CHECK_EQ(log_set_spec("debug", &err), 0);
	CHECK(log_enabled("anything", LOG_LEVEL_DEBUG));

	/* Bad specs are refused and change nothing. */
	CHECK_EQ(log_set_spec("ipc=loud", &err), -EINVAL);
	CHECK(strstr(err.msg, "ipc=loud") != NULL);
	tb_err_clear(&err);
	CHECK_EQ(log_set_spec("verbose", &err), -EINVAL);
	tb_err_clear(&err);
	CHECK_EQ(log_set_spec("=info", &err), -EINVAL);
	CHECK(log_enabled("anything", LOG_LEVEL_DEBUG));

	/* Long messages are truncated, not overflowed. */
	char longmsg[LOG_LINE_MAX * 2];
	memset(longmsg, 'y', sizeof longmsg - 1);
	longmsg[sizeof longmsg - 1] = '\0';
	log_info("ipc", "%s", longmsg);
	CHECK_EQ(c.count, 4);
	CHECK_UEQ(strlen(c.last), 255);

	log_set_sink(NULL, NULL);
	CHECK_EQ(log_set_spec("info", &err), 0);
}

TEST(base_log_stderr)
{
	/* The real sink: capture fd 2 through a pipe. */
	int fds[2];
	CHECK_EQ(pipe(fds), 0);
	int saved = dup(2);
	CHECK(saved >= 0);
	dup2(fds[1], 2);
	log_set_name("traced");
	CHECK_EQ(log_set_spec("info", NULL), 0);
	log_info("ipc", "hello %s", "world");
	log_debug("ipc", "hidden");
	log_set_name(NULL);
	dup2(saved, 2);
	close(saved);
	close(fds[1]);
	char buf[256];
	ssize_t n = tb_read_all(fds[0], buf, sizeof buf - 1);
	close(fds[0]);
	CHECK(n > 0);
	buf[n] = '\0';
	CHECK(buf[0] == '[');
	CHECK(strstr(buf, " traced] I ipc: hello world\n") != NULL);
	CHECK(strstr(buf, "hidden") == NULL);
}

/* ---- time ---------------------------------------------------------------------- */

TEST(base_time_clocks)
{
	int64_t a = tb_mono_ns(), b = tb_mono_ns();
	CHECK(a > 0 && b >= a);
	CHECK(tb_boot_ns() >= a - 1000000000ll * 0); /* boottime >= monotonic */
	CHECK(tb_realtime_ns() > 1600000000ll * 1000000000ll);
	CHECK(tb_now_ns(CLOCK_MONOTONIC) >= b);
}

TEST(base_time_parse_duration)
{
	struct tb_err err;
	uint64_t ms = 0;
	tb_err_clear(&err);
	CHECK_EQ(tb_parse_duration_ms("10s", &ms, &err), 0);
	CHECK_UEQ(ms, 10000);
	CHECK_EQ(tb_parse_duration_ms("500ms", &ms, &err), 0);
	CHECK_UEQ(ms, 500);
	CHECK_EQ(tb_parse_duration_ms("2m", &ms, &err), 0);
	CHECK_UEQ(ms, 120000);
	CHECK_EQ(tb_parse_duration_ms("1h", &ms, &err), 0);
	CHECK_UEQ(ms, 3600000);
	CHECK_EQ(tb_parse_duration_ms("0s", &ms, &err), 0);
	CHECK_UEQ(ms, 0);
	CHECK(!tb_err_is_set(&err));

	const char *bad[] = {"",    "s",    "10",  "10x",   "10 s", "-1s",
	                     "+1s", "1.5s", "10S", "10sec", "ms10"};
	for (size_t i = 0; i < TB_ARRAY_SIZE(bad); i++) {
		tb_err_clear(&err);
		CHECK_EQ(tb_parse_duration_ms(bad[i], &ms, &err), -EINVAL);
		CHECK(strstr(err.msg, "duration") != NULL);
	}
	tb_err_clear(&err);
	CHECK_EQ(tb_parse_duration_ms("99999999999999999999s", &ms, &err), -ERANGE);
	CHECK_EQ(tb_parse_duration_ms("18446744073709551h", &ms, NULL), -ERANGE);
	CHECK_EQ(tb_parse_duration_ms(NULL, &ms, NULL), -EINVAL);
}

TEST(base_time_parse_size)
{
	uint64_t b = 0;
	struct {
		const char *s;
		uint64_t want;
	} good[] = {
	    {"32mb", 32ull << 20}, {"64k", 64ull << 10}, {"1g", 1ull << 30},
	    {"7kb", 7 << 10},      {"2m", 2ull << 20},   {"3gb", 3ull << 30},
	};
	for (size_t i = 0; i < TB_ARRAY_SIZE(good); i++) {
		CHECK_EQ(tb_parse_size(good[i].s, &b, NULL), 0);
		CHECK_UEQ(b, good[i].want);
	}
	struct tb_err err;
	const char *bad[] = {"", "32", "mb", "32b", "32 mb", "32tb", "-1k", "0x10k"};
	for (size_t i = 0; i < TB_ARRAY_SIZE(bad); i++) {
		tb_err_clear(&err);
		CHECK_EQ(tb_parse_size(bad[i], &b, &err), -EINVAL);
		CHECK(strstr(err.msg, "size") != NULL);
	}
	CHECK_EQ(tb_parse_size("17179869184g", &b, NULL), -ERANGE);
}

/* ---- fd helpers ------------------------------------------------------------------ */

TEST(base_fd_pipe)
{
	int fds[2] = {-1, -1};
	CHECK_EQ(pipe(fds), 0);
	CHECK_EQ(tb_set_nonblock(fds[0], true), 0);
	CHECK(fcntl(fds[0], F_GETFL) & O_NONBLOCK);
	CHECK_EQ(tb_set_nonblock(fds[0], false), 0);
	CHECK(!(fcntl(fds[0], F_GETFL) & O_NONBLOCK));
	CHECK_EQ(tb_set_cloexec(fds[1], true), 0);
	CHECK(fcntl(fds[1], F_GETFD) & FD_CLOEXEC);
	CHECK_EQ(tb_set_nonblock(-1, true), -EBADF);

	/* More than the pipe buffer, through a non-blocking reader and
	 * writer in one process: the writer waits in poll, so use a child. */
	size_t n = 256 * 1024;
	char *out = tb_malloc(n), *in = tb_malloc(n);
	for (size_t i = 0; i < n; i++)
		out[i] = (char)(i * 31);
	tb_set_nonblock(fds[0], true);
	tb_set_nonblock(fds[1], true);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		_exit(tb_write_all(fds[1], out, n) == 0 ? 0 : 1);
	}
	CHECK(pid > 0);
	tb_close(&fds[1]);
	CHECK_EQ(fds[1], -1);
	tb_close(&fds[1]); /* twice is harmless */
	CHECK_EQ(tb_read_all(fds[0], in, n), (ssize_t)n);
	CHECK_EQ(tb_read_all(fds[0], in, 1), 0); /* EOF */
	int status = -1;
	waitpid(pid, &status, 0);
	CHECK_EQ(status, 0);
	CHECK_MEM_EQ(in, out, n);
	tb_close(&fds[0]);
	tb_free(in);
	tb_free(out);
	CHECK_EQ(tb_write_all(-1, "x", 1), -EBADF);
}

TEST(base_fd_read_file)
{
	char path[] = "/tmp/tb_base_test_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ(tb_write_all(fd, "hello\nworld\n", 12), 0);
	tb_close(&fd);

	struct tb_err err;
	tb_err_clear(&err);
	char *buf = NULL;
	size_t len = 0;
	CHECK_EQ(tb_read_file(path, &buf, &len, 1024, &err), 0);
	CHECK_UEQ(len, 12);
	CHECK_STR_EQ(buf, "hello\nworld\n");
	tb_free(buf);

	CHECK_EQ(tb_read_file(path, &buf, &len, 12, &err), 0);
	tb_free(buf);
	CHECK_EQ(tb_read_file(path, &buf, &len, 11, &err), -EFBIG);
	CHECK(buf == NULL);
	CHECK(strstr(err.msg, "larger than 11 bytes") != NULL);
	unlink(path);

	tb_err_clear(&err);
	CHECK_EQ(tb_read_file(path, &buf, &len, 1024, &err), -ENOENT);
	CHECK(strstr(err.msg, "cannot open '/tmp/tb_base_test_") == err.msg);
	CHECK(strstr(err.msg, "No such file or directory") != NULL);

	/* procfs reports size 0; the whole content still comes back. */
	CHECK_EQ(tb_read_file("/proc/self/status", &buf, &len, 1 << 20, NULL), 0);
	CHECK(len > 0 && strlen(buf) == len);
	CHECK(strstr(buf, "Pid:") != NULL);
	tb_free(buf);

	/* Empty file. */
	memcpy(path + strlen(path) - 6, "XXXXXX", 6);
	fd = mkstemp(path);
	CHECK(fd >= 0);
	tb_close(&fd);
	CHECK_EQ(tb_read_file(path, &buf, &len, 0, NULL), 0);
	CHECK_UEQ(len, 0);
	CHECK_STR_EQ(buf, "");
	tb_free(buf);
	unlink(path);
}

/* tb_feed_fd: what arrived, in pieces of at most max bytes; stops with
 * stop_at's error on that call; the first call appends `grow` to append_fd. */
struct feed_ctx {
	VEC(uint8_t) got;
	size_t max, calls, stop_at;
	int append_fd;
	const char *grow;
	bool bad; /* a piece was empty or too big, or the append failed */
};

static int feed_collect(void *ctx, const uint8_t *p, size_t n)
{
	struct feed_ctx *c = ctx;
	if (n == 0 || n > c->max)
		c->bad = true;
	if (++c->calls == c->stop_at)
		return -77;
	if (c->calls == 1 && c->append_fd >= 0 &&
	    tb_write_all(c->append_fd, c->grow, strlen(c->grow)) != 0)
		c->bad = true;
	vec_reserve(&c->got, n);
	memcpy(c->got.data + c->got.len, p, n);
	c->got.len += n;
	return 0;
}

TEST(base_fd_feed)
{
	enum { N = 100003 };
	uint8_t *data = tb_malloc(N);
	for (size_t i = 0; i < N; i++)
		data[i] = (uint8_t)(i * 131 + i / 7);
	char path[] = "/tmp/tb_base_test_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ(tb_write_all(fd, data, N), 0);
	tb_close(&fd);

	/* A regular file (mapped), in order, bytes appended while it is fed
	 * included. */
	struct feed_ctx c = {.max = 4096, .append_fd = open(path, O_WRONLY | O_APPEND)};
	c.grow = "tail";
	fd = open(path, O_RDONLY);
	CHECK(fd >= 0 && c.append_fd >= 0);
	CHECK_EQ(tb_feed_fd(fd, 4096, true, feed_collect, &c), 0);
	CHECK_UEQ(c.got.len, N + 4);
	CHECK_MEM_EQ(c.got.data, data, N);
	CHECK_MEM_EQ(c.got.data + N, "tail", 4);
	CHECK(!c.bad);
	tb_close(&fd);
	tb_close(&c.append_fd);
	vec_release(&c.got);

	/* From a non-zero offset: read(), the rest of the file. */
	struct feed_ctx off = {.max = 1000, .append_fd = -1};
	fd = open(path, O_RDONLY);
	CHECK_EQ(lseek(fd, 10, SEEK_SET), 10);
	CHECK_EQ(tb_feed_fd(fd, 1000, true, feed_collect, &off), 0);
	CHECK_UEQ(off.got.len, N - 10 + 4);
	CHECK_MEM_EQ(off.got.data, data + 10, N - 10);
	CHECK(!off.bad);
	tb_close(&fd);
	vec_release(&off.got);

	/* Not mapped: the same bytes through read(). */
	struct feed_ctx rd = {.max = 3000, .append_fd = -1};
	fd = open(path, O_RDONLY);
	CHECK_EQ(tb_feed_fd(fd, 3000, false, feed_collect, &rd), 0);
	CHECK_UEQ(rd.got.len, N + 4);
	CHECK_MEM_EQ(rd.got.data, data, N);
	CHECK(!rd.bad);
	tb_close(&fd);
	vec_release(&rd.got);

	/* The feed's error stops it. */
	struct feed_ctx stop = {.max = 512, .stop_at = 3, .append_fd = -1};
	fd = open(path, O_RDONLY);
	CHECK_EQ(tb_feed_fd(fd, 512, true, feed_collect, &stop), -77);
	CHECK_UEQ(stop.calls, 3);
	CHECK_UEQ(stop.got.len, 1024);
	tb_close(&fd);
	vec_release(&stop.got);

	/* A pipe. */
	int fds[2];
	CHECK_EQ(pipe(fds), 0);
	CHECK_EQ(tb_write_all(fds[1], data, 5000), 0);
	tb_close(&fds[1]);
	struct feed_ctx p = {.max = 8192, .append_fd = -1};
	CHECK_EQ(tb_feed_fd(fds[0], 8192, true, feed_collect, &p), 0);
	CHECK_UEQ(p.got.len, 5000);
	CHECK_MEM_EQ(p.got.data, data, 5000);
	CHECK(!p.bad);
	tb_close(&fds[0]);
	vec_release(&p.got);

	/* An empty file: no call. */
	CHECK_EQ(truncate(path, 0), 0);
	struct feed_ctx e = {.max = 1, .append_fd = -1};
	fd = open(path, O_RDONLY);
	CHECK_EQ(tb_feed_fd(fd, 1, true, feed_collect, &e), 0);
	CHECK_UEQ(e.calls, 0);
	tb_close(&fd);
	unlink(path);
	tb_free(data);
	CHECK_EQ(tb_feed_fd(-1, 16, true, feed_collect, &e), -EBADF);
}

/* ---- event loop ------------------------------------------------------------------ */

/* Run iterations until *done or 2 s pass. */
static void run_until(struct loop *l, const int *done)
{
	int64_t deadline = tb_mono_ns() + 2000000000ll;
	while (!*done && tb_mono_ns() < deadline)
		loop_run_once(l, 50);
}

struct fd_ctx {
	int calls;
	char got[16];
	uint32_t events;
};

static void on_readable(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct fd_ctx *c = ctx;
	c->calls++;
	c->events = events;
	ssize_t n = read(fd, c->got, sizeof c->got - 1);
	c->got[n > 0 ? n : 0] = '\0';
}

TEST(base_loop_fd)
{
	struct tb_err err;
	tb_err_clear(&err);
	struct loop *l = loop_new(&err);
	CHECK(l != NULL);
	int fds[2];
	CHECK_EQ(pipe(fds), 0);
	struct fd_ctx c = {0};
	CHECK_EQ(loop_add_fd(l, fds[0], LOOP_IN, on_readable, &c), 0);
	CHECK_EQ(loop_add_fd(l, fds[0], LOOP_IN, on_readable, &c), -EEXIST);
	CHECK(strstr(loop_err(l)->msg, "already watched") != NULL);
	CHECK_EQ(loop_run_once(l, 0), 0);
	CHECK_EQ(write(fds[1], "ping", 4), 4);
	CHECK_EQ(loop_run_once(l, 1000), 1);
	CHECK_EQ(c.calls, 1);
	CHECK_STR_EQ(c.got, "ping");
	CHECK(c.events & LOOP_IN);

	/* Watching nothing: data waits, no callback. */
	CHECK_EQ(loop_mod_fd(l, fds[0], 0), 0);
	CHECK_EQ(write(fds[1], "x", 1), 1);
	CHECK_EQ(loop_run_once(l, 10), 0);
	CHECK_EQ(loop_mod_fd(l, fds[0], LOOP_IN), 0);
	CHECK_EQ(loop_run_once(l, 1000), 1);
	CHECK_STR_EQ(c.got, "x");

	CHECK_EQ(loop_del_fd(l, fds[0]), 0);
	CHECK_EQ(loop_del_fd(l, fds[0]), -ENOENT);
	CHECK_EQ(loop_mod_fd(l, fds[0], LOOP_IN), -ENOENT);
	CHECK_EQ(write(fds[1], "y", 1), 1);
	CHECK_EQ(loop_run_once(l, 10), 0);
	CHECK_EQ(c.calls, 2);

	/* Hang-up is reported. */
	CHECK_EQ(loop_add_fd(l, fds[0], LOOP_IN, on_readable, &c), 0);
	close(fds[1]);
	CHECK_EQ(loop_run_once(l, 1000), 1);
	CHECK_EQ(c.calls, 3);
	CHECK_STR_EQ(c.got, "y");
	/* Left registered on purpose: loop_free releases it. */
	loop_free(l);
	close(fds[0]);
}

/* Two pipes ready in the same batch; whichever callback runs first removes
 * and closes the other, which must then not be called. */
struct pair_ctx {
	int *fd_a, *fd_b;
	int calls;
	int fresh[2]; /* the pipe opened in place of the deleted one */
	int fresh_calls;
};

static void on_fresh(struct loop *l, int fd, uint32_t events, void *ctx)
{
	((struct pair_ctx *)ctx)->fresh_calls++;
}

static void on_pair(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct pair_ctx *c = ctx;
	int *other = fd == *c->fd_a ? c->fd_b : c->fd_a;
	char ch;
	TB_CHECK(read(fd, &ch, 1) == 1);
	c->calls++;
	if (c->calls > 1)
		return;
	TB_CHECK(loop_del_fd(l, *other) == 0);
	int old = *other;
	tb_close(other);
	/* Reuse the fd number at once (the lowest free one, so the same) and
	 * watch it: the stale event in this batch must not reach it. */
	TB_CHECK(pipe(c->fresh) == 0);
	TB_CHECK(c->fresh[0] == old);
	TB_CHECK(loop_add_fd(l, c->fresh[0], LOOP_IN, on_fresh, c) == 0);
}

TEST(base_loop_delete_in_batch)
{
	struct loop *l = loop_new(NULL);
	int a[2], b[2];
	CHECK_EQ(pipe(a), 0);
	CHECK_EQ(pipe(b), 0);
	struct pair_ctx c = {&a[0], &b[0], 0, {-1, -1}, 0};
	CHECK_EQ(loop_add_fd(l, a[0], LOOP_IN, on_pair, &c), 0);
	CHECK_EQ(loop_add_fd(l, b[0], LOOP_IN, on_pair, &c), 0);
	CHECK_EQ(write(a[1], "1", 1), 1);
	CHECK_EQ(write(b[1], "2", 1), 1);
	CHECK_EQ(loop_run_once(l, 1000), 1);
	CHECK_EQ(c.calls, 1);
	CHECK_EQ(c.fresh_calls, 0);
	CHECK_EQ(loop_run_once(l, 10), 0);
	/* Both survivors still work. */
	CHECK_EQ(write(c.fresh[1], "3", 1), 1);
	CHECK_EQ(loop_run_once(l, 1000), 1);
	CHECK_EQ(c.fresh_calls, 1);
	int *live = a[0] >= 0 ? a : b;
	CHECK_EQ(write(live[1], "4", 1), 1);
	CHECK_EQ(loop_run_once(l, 1000), 2); /* fresh is still readable too */
	CHECK_EQ(c.calls, 2);
	loop_free(l);
	for (int i = 0; i < 2; i++) {
		tb_close(&a[i]);
		tb_close(&b[i]);
		tb_close(&c.fresh[i]);
	}
}

static void self_delete(struct loop *l, int fd, uint32_t events, void *ctx)
{
	(*(int *)ctx)++;
	TB_CHECK(loop_del_fd(l, fd) == 0);
	/* Re-adding the same fd from its own callback is allowed too. */
	TB_CHECK(loop_add_fd(l, fd, LOOP_IN, self_delete, ctx) == 0);
	TB_CHECK(loop_del_fd(l, fd) == 0);
}

TEST(base_loop_delete_self)
{
	struct loop *l = loop_new(NULL);
	int p[2];
	CHECK_EQ(pipe(p), 0);
	int calls = 0;
	CHECK_EQ(loop_add_fd(l, p[0], LOOP_IN | LOOP_OUT, self_delete, &calls), 0);
	CHECK_EQ(write(p[1], "z", 1), 1);
	CHECK_EQ(loop_run_once(l, 1000), 1);
	CHECK_EQ(loop_run_once(l, 10), 0);
	CHECK_EQ(calls, 1);
	loop_free(l);
	close(p[0]);
	close(p[1]);
}

struct timer_ctx {
	int oneshot;
	int periodic;
	uint64_t periodic_id;
	int done;
	int64_t start_ns, oneshot_ns;
};

static void on_oneshot(struct loop *l, uint64_t id, void *ctx)
{
	struct timer_ctx *c = ctx;
	c->oneshot++;
	c->oneshot_ns = tb_mono_ns();
	/* A one-shot timer is gone by the time its callback runs. */
	TB_CHECK(!loop_cancel_timer(l, id));
}

static void on_periodic(struct loop *l, uint64_t id, void *ctx)
{
	struct timer_ctx *c = ctx;
	TB_CHECK(id == c->periodic_id);
	if (++c->periodic == 3) {
		TB_CHECK(loop_cancel_timer(l, id));
		c->done = 1;
	}
}

static void never(struct loop *l, uint64_t id, void *ctx)
{
	TB_CHECK(!"cancelled timer fired");
}

/* A FIFO named where an ELF file is expected (a mapping renamed by a
 * profiled process, a mapping name in a trace) is refused at once: opening
 * it for reading must not wait for a writer. The alarm turns a hang into a
 * failure. */
TEST(base_elf_open_fifo)
{
	char dir[] = "/tmp/tb_base_fifo_XXXXXX", path[64];
	struct elf_file e;
	struct tb_err err = {0};

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof path, "%s/fifo", dir);
	CHECK_EQ(mkfifo(path, 0600), 0);
	alarm(10);
	CHECK_EQ(elf_open_path(&e, path, &err), -EINVAL);
	CHECK(strstr(err.msg, "is not a regular file") != NULL);
	CHECK_EQ(tb_open_regular(path, 0, NULL, &err), -EINVAL);
	alarm(0);
	unlink(path);
	rmdir(dir);
}

TEST(base_loop_timers)
{
	struct loop *l = loop_new(NULL);
	struct timer_ctx c = {0};
	c.start_ns = tb_mono_ns();
	uint64_t t1 = loop_add_timer(l, 20, 0, on_oneshot, &c);
	c.periodic_id = loop_add_timer(l, 5, 5, on_periodic, &c);
	uint64_t t3 = loop_add_timer(l, 1, 0, never, NULL);
	CHECK(t1 > 0 && c.periodic_id > t1 && t3 > c.periodic_id);
	CHECK(loop_cancel_timer(l, t3));
	CHECK(!loop_cancel_timer(l, t3));
	run_until(l, &c.done);
	CHECK_EQ(c.periodic, 3);
	int oneshot_done = 0;
	while (!oneshot_done && tb_mono_ns() < c.start_ns + 2000000000ll) {
		loop_run_once(l, 50);
		oneshot_done = c.oneshot > 0;
	}
	CHECK_EQ(c.oneshot, 1);
	CHECK(c.oneshot_ns - c.start_ns >= 20 * 1000000ll);
	/* Nothing fires again. */
	CHECK_EQ(loop_run_once(l, 30), 0);
	CHECK_EQ(c.periodic, 3);
	CHECK_EQ(c.oneshot, 1);

	/* Delay 0 fires on the next iteration. */
	uint64_t t4 = loop_add_timer(l, 0, 0, on_oneshot, &c);
	CHECK(t4 > 0);
	int64_t deadline = tb_mono_ns() + 1000000000ll;
	while (c.oneshot == 1 && tb_mono_ns() < deadline)
		loop_run_once(l, 50);
	CHECK_EQ(c.oneshot, 2);

	/* A pending timer is released by loop_free. */
	CHECK(loop_add_timer(l, 100000, 0, never, NULL) > 0);
	loop_free(l);
}

struct imm_ctx {
	struct loop *l;
	int order[8], n;
	uint64_t victim, chained;
};

static void on_imm(struct loop *l, uint64_t id, void *ctx)
{
	struct imm_ctx *c = ctx;
	if (c->n < 8)
		c->order[c->n++] = (int)id;
}

/* Cancels c->victim, due in the same iteration, and adds another one. */
static void on_imm_cancel(struct loop *l, uint64_t id, void *ctx)
{
	struct imm_ctx *c = ctx;
	on_imm(l, id, ctx);
	CHECK(loop_cancel_timer(l, c->victim));
	c->chained = loop_add_timer(l, 0, 0, on_imm, c);
}

static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Zero-delay one-shot timers: no fd, fire in order at the next iteration,
 * cancellable before they fire (also from another's callback), one added
 * by a callback waits for the iteration after, and loop_free releases any
 * still due (ASan checks the memory). */
TEST(base_loop_immediate_timers)
{
	struct loop *l = loop_new(NULL);
	struct imm_ctx c = {.l = l};
	int fds = open_fds();
	uint64_t a = loop_add_timer(l, 0, 0, on_imm, &c);
	uint64_t b = loop_add_timer(l, 0, 0, on_imm_cancel, &c);
	c.victim = loop_add_timer(l, 0, 0, on_imm, &c);
	uint64_t gone = loop_add_timer(l, 0, 0, on_imm, &c);
	CHECK_EQ(open_fds(), fds);
	CHECK(loop_cancel_timer(l, gone));
	CHECK(!loop_cancel_timer(l, gone));
	CHECK_EQ(loop_run_once(l, 0), 2); /* a, b; b cancelled the victim */
	CHECK_EQ(c.n, 2);
	CHECK_EQ(c.order[0], (int)a);
	CHECK_EQ(c.order[1], (int)b);
	CHECK(c.chained > 0);
	CHECK(!loop_cancel_timer(l, b)); /* fired: gone */
	int64_t t0 = tb_mono_ns();
	CHECK_EQ(loop_run_once(l, 1000), 1); /* the chained one, without waiting */
	CHECK(tb_mono_ns() - t0 < 500 * 1000000ll);
	CHECK_EQ(c.order[2], (int)c.chained);
	CHECK_EQ(loop_run_once(l, 0), 0);
	CHECK(loop_add_timer(l, 0, 0, never, NULL) > 0);
	CHECK(loop_add_timer(l, 0, 0, never, NULL) > 0);
	loop_free(l);
}

struct sig_ctx {
	int got;
	int signo;
};

static void on_signal(struct loop *l, int signo, void *ctx)
{
	struct sig_ctx *c = ctx;
	c->got++;
	c->signo = signo;
	loop_quit(l, 7);
}

TEST(base_loop_signal)
{
	struct loop *l = loop_new(NULL);
	struct sig_ctx c = {0};
	CHECK_EQ(loop_add_signal(l, SIGUSR1, on_signal, &c), 0);
	CHECK_EQ(loop_add_signal(l, SIGUSR2, on_signal, &c), 0);
	CHECK_EQ(loop_add_signal(l, 0, on_signal, &c), -EINVAL);
	CHECK_EQ(raise(SIGUSR1), 0);
	/* loop_run returns the code the signal handler quit with. */
	CHECK_EQ(loop_run(l), 7);
	CHECK_EQ(c.got, 1);
	CHECK_EQ(c.signo, SIGUSR1);
	CHECK_EQ(raise(SIGUSR2), 0);
	CHECK_EQ(loop_run(l), 7);
	CHECK_EQ(c.got, 2);
	CHECK_EQ(c.signo, SIGUSR2);
	loop_free(l);
	/* loop_free unblocked what it blocked. */
	sigset_t cur;
	pthread_sigmask(SIG_BLOCK, NULL, &cur);
	CHECK(!sigismember(&cur, SIGUSR1));
	CHECK(!sigismember(&cur, SIGUSR2));
}

static void on_signal_code(struct loop *l, int signo, void *ctx)
{
	*(int *)ctx = loop_signal_code(l);
	loop_quit(l, 0);
}

/* The si_code tells a kill(2) from another process (SI_USER) apart from a
 * raise (SI_TKILL); outside a callback it is 0. */
TEST(base_loop_signal_code)
{
	struct loop *l = loop_new(NULL);
	int code = -1;
	CHECK_EQ(loop_add_signal(l, SIGUSR1, on_signal_code, &code), 0);
	CHECK_EQ(kill(getpid(), SIGUSR1), 0);
	CHECK_EQ(loop_run(l), 0);
	CHECK_EQ(code, SI_USER);
	CHECK_EQ(raise(SIGUSR1), 0);
	CHECK_EQ(loop_run(l), 0);
	CHECK_EQ(code, SI_TKILL);
	CHECK_EQ(loop_signal_code(l), 0);
	loop_free(l);
}

struct post_ctx {
	int order[8];
	int n;
};

static void task_b(struct loop *l, void *ctx)
{
	struct post_ctx *c = ctx;
	c->order[c->n++] = 2;
	loop_quit(l, 3);
}

static void task_a(struct loop *l, void *ctx)
{
	struct post_ctx *c = ctx;
	c->order[c->n++] = 1;
	loop_post(l, task_b, ctx); /* runs one iteration later */
}

TEST(base_loop_post_quit)
{
	struct loop *l = loop_new(NULL);
	struct post_ctx c = {{0}, 0};
	loop_post(l, task_a, &c);
	CHECK_EQ(loop_run_once(l, 1000), 1);
	CHECK_EQ(c.n, 1);
	/* A pending task makes the wait non-blocking; run() returns quit code. */
	CHECK_EQ(loop_run(l), 3);
	CHECK_EQ(c.n, 2);
	CHECK_EQ(c.order[0], 1);
	CHECK_EQ(c.order[1], 2);
	loop_free(l);
}

TEST(base_notify_ready)
{
	int fds[2];
	char buf[4] = {0};
	char val[16];
	CHECK_EQ(pipe(fds), 0);
	snprintf(val, sizeof val, "%d", fds[1]);
	CHECK_EQ(setenv("TB_TEST_NOTIFY_FD", val, 1), 0);
	CHECK_EQ(tb_notify_ready("TB_TEST_NOTIFY_FD"), 0);
	CHECK(getenv("TB_TEST_NOTIFY_FD") == NULL);
	/* The write end was closed: "1" then end of file. */
	CHECK_EQ(read(fds[0], buf, sizeof buf), 1);
	CHECK_EQ(buf[0], '1');
	CHECK_EQ(read(fds[0], buf, sizeof buf), 0);
	close(fds[0]);
	/* Unset: nothing to do. A bad value: an error, and the variable goes. */
	CHECK_EQ(tb_notify_ready("TB_TEST_NOTIFY_FD"), 0);
	CHECK_EQ(setenv("TB_TEST_NOTIFY_FD", "x1", 1), 0);
	CHECK_EQ(tb_notify_ready("TB_TEST_NOTIFY_FD"), -EBADF);
	CHECK(getenv("TB_TEST_NOTIFY_FD") == NULL);
}

TEST(base_hex_digit)
{
	const char *digits = "0123456789abcdefABCDEF";
	for (int i = 0; digits[i]; i++)
		CHECK_EQ(tb_hex_digit(digits[i]), i < 16 ? i : i - 6);
	CHECK_EQ(tb_hex_digit('g'), -1);
	CHECK_EQ(tb_hex_digit('G'), -1);
	CHECK_EQ(tb_hex_digit('/'), -1);
	CHECK_EQ(tb_hex_digit(':'), -1);
	CHECK_EQ(tb_hex_digit('@'), -1);
	CHECK_EQ(tb_hex_digit('`'), -1);
	CHECK_EQ(tb_hex_digit(-1), -1);
	CHECK_EQ(tb_hex_digit((char)0xe9), -1);
}

TEST(base_u64_dec)
{
	static const uint64_t vals[] = {0, 7, 10, 99, 1234, 4294967296ull, UINT64_MAX};
	for (size_t i = 0; i < sizeof vals / sizeof *vals; i++) {
		char want[32], got[24];
		int wn = snprintf(want, sizeof want, "%llu", (unsigned long long)vals[i]);
		size_t n = tb_u64_dec(got, vals[i]);
		CHECK_EQ(n, (size_t)wn);
		CHECK(memcmp(got, want, n) == 0);
	}
}

TEST(base_dec_prefix)
{
	uint64_t v = 7;
	CHECK_EQ(tb_dec_prefix("1234;x", 6, &v), 4);
	CHECK_EQ(v, 1234);
	CHECK_EQ(tb_dec_prefix("123", 2, &v), 2); /* stops at n */
	CHECK_EQ(v, 12);
	CHECK_EQ(tb_dec_prefix("x1", 2, &v), 0);
	CHECK_EQ(v, 0);
	CHECK_EQ(tb_dec_prefix("", 0, &v), 0);
	CHECK_EQ(tb_dec_prefix(" 1", 2, &v), 0); /* no blanks */
	CHECK_EQ(tb_dec_prefix("-1", 2, &v), 0); /* no sign */
	CHECK_EQ(tb_dec_prefix("007", 3, &v), 3);
	CHECK_EQ(v, 7);
	CHECK_EQ(tb_dec_prefix("18446744073709551615", 20, &v), 20);
	CHECK_EQ(v, UINT64_MAX);
	CHECK_EQ(tb_dec_prefix("18446744073709551614", 20, &v), 20);
	CHECK_EQ(v, UINT64_MAX - 1);
	/* Past UINT64_MAX the value saturates instead of wrapping. */
	CHECK_EQ(tb_dec_prefix("18446744073709551616", 20, &v), 20);
	CHECK_EQ(v, UINT64_MAX);
	CHECK_EQ(tb_dec_prefix("99999999999999999999999", 23, &v), 23);
	CHECK_EQ(v, UINT64_MAX);
}

static int ref_cmp(const unsigned char *a, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* tb_memcmp (the release builds' memcmp) orders as a byte-by-byte compare
 * of unsigned chars: every length to 40, a difference at every position
 * (bytes 0x00/0x7f/0x80/0xff, so a signed or word-order slip shows), at
 * every alignment, and equal buffers. */
TEST(base_memcmp_orders_bytes)
{
	static const unsigned char vals[] = {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff};
	unsigned char a[64], b[64];
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n <= 40; n++) {
			for (size_t i = 0; i < n; i++) {
				h = h * 6364136223846793005ull + 1442695040888963407ull;
				a[off + i] = b[(off * 3) % 8 + i] = (unsigned char)(h >> 56);
			}
			const unsigned char *x = a + off, *y = b + (off * 3) % 8;
			CHECK_EQ(tb_memcmp(x, y, n), 0);
			for (size_t p = 0; p < n; p++)
				for (size_t v = 0; v < TB_ARRAY_SIZE(vals); v++) {
					unsigned char keep = y[p];
					b[(off * 3) % 8 + p] = vals[v];
					/* A later byte differing the other way must not
					 * decide. */
					unsigned char keep2 = p + 1 < n ? y[p + 1] : 0;
					if (p + 1 < n)
						b[(off * 3) % 8 + p + 1] = (unsigned char)~x[p + 1];
					CHECK_EQ(tb_memcmp(x, y, n), ref_cmp(x, y, n));
					CHECK_EQ(tb_memcmp(y, x, n), ref_cmp(y, x, n));
					CHECK_EQ(tb_memcmp(x, y, p), 0);
					b[(off * 3) % 8 + p] = keep;
					if (p + 1 < n)
						b[(off * 3) % 8 + p + 1] = keep2;
				}
		}
}
