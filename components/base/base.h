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

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#define TB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TB_NORETURN __attribute__((noreturn))
#define TB_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TB_LIKELY(x) __builtin_expect(!!(x), 1)
#define TB_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- checks ------------------------------------------------------------ */

/* Abort with file:line and the failed expression. For invariants that must
 * hold in release builds too; never for conditions input can trigger. */
#define TB_CHECK(cond)                                              \
	do {                                                        \
		if (TB_UNLIKELY(!(cond)))                           \
			tb_check_failed(__FILE__, __LINE__, #cond); \
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

/* Make the whole pages inside [p, p + n) resident and writable now, in one
 * call (MADV_POPULATE_WRITE), instead of a page fault per 4 KiB as they are
 * first written: for memory about to be filled front to back. Contents are
 * unchanged. A hint: kernels before 5.14 refuse it and the pages fault in. */
void tb_populate(void *p, size_t n);

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

/* ---- embedded files (embed.c) ---------------------------------------------- */

/* Inflate a file build.sh embedded gzip'd (gz_len bytes) into out, which
 * holds exactly its len bytes. The bytes come from the build, so failing to
 * inflate them is a bug: TB_CHECK. */
void tb_embed_inflate(const unsigned char *gz, size_t gz_len, char *out, size_t len);

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
static inline bool tb_err_is_set(const struct tb_err *e)
{
	return e->code != 0;
}

/* ---- hashing (hash.c) ---------------------------------------------------- */

/* A fast 64-bit hash of n bytes (multiply-mix, 16 bytes per round). Not
 * cryptographic and not stable across versions or byte orders: for in-memory
 * tables only, never for anything written to disk. */
uint64_t tb_hash_bytes(const void *p, size_t n, uint64_t seed);

/* A bijective 64-bit mixer (murmur3's finalizer): spreads integer keys such
 * as pids, pointers or sequential ids over all bits. */
static inline uint64_t tb_hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* ---- unaligned loads ----------------------------------------------------- */

/* Read a little-endian (tb_ldN) or big-endian (tb_ldNbe) integer from p,
 * which need not be aligned; the caller has checked that N / 8 bytes are
 * there. memcpy-based: one load on every target we build. */
static inline uint16_t tb_ld16(const void *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap16(v);
#endif
	return v;
}
static inline uint32_t tb_ld32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap32(v);
#endif
	return v;
}
static inline uint64_t tb_ld64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}
static inline uint16_t tb_ld16be(const void *p)
{
	return __builtin_bswap16(tb_ld16(p));
}
static inline uint32_t tb_ld32be(const void *p)
{
	return __builtin_bswap32(tb_ld32(p));
}
static inline uint64_t tb_ld64be(const void *p)
{
	return __builtin_bswap64(tb_ld64(p));
}

/* ---- arena (arena.c) ----------------------------------------------------- */

/* A bump allocator for data that dies together (per-packet scratch, per-query
 * scratch, the string pool). Memory comes in blocks from tb_malloc; a request
 * bigger than a quarter of a block gets a block of its own so it does not
 * waste the rest of the current one. Pointers stay valid until arena_reset or
 * arena_release. Zero-initialise or arena_init before use. */
struct arena_block;
struct arena {
	struct arena_block *blocks; /* newest first; blocks is the bump block */
	char *cur, *end;            /* free space in the bump block */
	size_t block_size;          /* 0 means ARENA_DEFAULT_BLOCK */
	size_t held;                /* bytes of block memory held */
};

#define ARENA_DEFAULT_BLOCK ((size_t)64 * 1024)

/* Set up an empty arena whose ordinary blocks are block_size bytes (0 for the
 * default). Allocates nothing until the first arena_alloc. */
void arena_init(struct arena *a, size_t block_size);

void *arena_alloc_slow_(struct arena *a, size_t size, size_t align);

/* size bytes aligned to align (a power of two, at most 4096), uninitialised,
 * owned by the arena. Never returns NULL: aborts on OOM like tb_malloc. */
static inline void *arena_alloc(struct arena *a, size_t size, size_t align)
{
	uintptr_t p = ((uintptr_t)a->cur + (align - 1)) & ~(uintptr_t)(align - 1);
	if (TB_LIKELY(a->cur && p <= (uintptr_t)a->end && size <= (uintptr_t)a->end - p)) {
		a->cur = (char *)p + size;
		return (void *)p;
	}
	return arena_alloc_slow_(a, size, align);
}

/* Like arena_alloc but zeroed. */
void *arena_zalloc(struct arena *a, size_t size, size_t align);
/* Copy n bytes (unaligned) into the arena and return the copy. */
void *arena_memdup(struct arena *a, const void *p, size_t n);
/* Copy at most n bytes of s, stopping at a NUL, and NUL-terminate. */
char *arena_strndup(struct arena *a, const char *s, size_t n);
/* Forget every allocation but keep one ordinary block for reuse, so a
 * per-packet or per-query arena stops calling tb_malloc once warm. */
void arena_reset(struct arena *a);
/* Free every block; the arena is empty and may be used again. */
void arena_release(struct arena *a);

/* ---- vectors (vec.c) ----------------------------------------------------- */

/* A growable array of any element type, type-checked by the compiler:
 *
 *     VEC(uint32_t) ids = VEC_INIT;          (an anonymous vector)
 *     VEC_DEFINE(slice_vec, struct slice);   (a named one, for prototypes)
 *     vec_push(&ids, 42);
 *     for (size_t i = 0; i < ids.len; i++) use(ids.data[i]);
 *     vec_release(&ids);
 *
 * data is owned by the vector (tb_malloc'd) and moves when it grows, so
 * pointers into it are valid only until the next push or reserve. Growth
 * doubles the capacity with overflow checks (an impossible size aborts like
 * OOM; vec_try_reserve returns -ENOMEM instead, for sizes from input).
 * The macros evaluate v more than once: pass a plain pointer expression. */
#define VEC(type)                \
	struct {                 \
		type *data;      \
		size_t len, cap; \
	}
#define VEC_DEFINE(name, type)   \
	struct name {            \
		type *data;      \
		size_t len, cap; \
	}
#define VEC_INIT           \
	{                  \
		NULL, 0, 0 \
	}

/* Grow the array whose T* lives at pdata to hold len + add elements of esz
 * bytes. Returns 0, or -ENOMEM when soft and the size overflows or the
 * allocation fails (then nothing changed). Used by the macros below. */
int vec_grow_(void *pdata, size_t *cap, size_t len, size_t add, size_t esz, bool soft);

/* Make room for n more elements without changing len. */
#define vec_reserve(v, n) \
	((void)vec_grow_(&(v)->data, &(v)->cap, (v)->len, (n), sizeof *(v)->data, false))
/* The same, returning 0 or -ENOMEM instead of aborting. */
#define vec_try_reserve(v, n) \
	vec_grow_(&(v)->data, &(v)->cap, (v)->len, (n), sizeof *(v)->data, true)
/* Append val (an expression of the element type). */
#define vec_push(v, val)                                        \
	((void)((v)->len < (v)->cap || (vec_reserve(v, 1), 1)), \
	 (void)((v)->data[(v)->len++] = (val)))
/* Append one zeroed element and return a pointer to it. */
#define vec_push_zeroed(v)                                      \
	((void)((v)->len < (v)->cap || (vec_reserve(v, 1), 1)), \
	 memset(&(v)->data[(v)->len++], 0, sizeof *(v)->data))
/* Remove and return the last element (the vector must not be empty). */
#define vec_pop(v) ((v)->data[--(v)->len])
/* Pointer to the last element (the vector must not be empty). */
#define vec_last(v) (&(v)->data[(v)->len - 1])
/* Set len to n; new elements are zeroed. */
#define vec_resize(v, n)                                                                     \
	((void)((n) <= (v)->len ||                                                           \
	        (vec_reserve(v, (n) - (v)->len),                                             \
	         memset(&(v)->data[(v)->len], 0, ((n) - (v)->len) * sizeof *(v)->data), 1)), \
	 (void)((v)->len = (n)))
/* Forget the elements, keep the memory. */
#define vec_clear(v) ((void)((v)->len = 0))
/* Free the memory; the vector is empty and may be used again. */
#define vec_release(v) (tb_free((v)->data), (v)->data = NULL, (v)->len = (v)->cap = 0)

/* ---- hash map (hmap.c) --------------------------------------------------- */

/* One open-addressing hash map with linear probing and backward-shift
 * deletion (no tombstones), keyed by uint64_t with a uint64_t value.
 *
 * Two ways to use it:
 *  - integer keys: hmap_get/hmap_put/hmap_del hash the key with tb_hash_u64
 *    and compare keys directly;
 *  - any other key (byte strings, structs): the caller computes the hash
 *    (tb_hash_bytes), stores a handle to the key in `key` (an id, an index, a
 *    pointer) and supplies an equality callback to hmap_lookup. The map never
 *    touches the key itself, so keys stored elsewhere (the string pool) are
 *    not duplicated. A map must use one way only.
 *
 * A parallel meta array keeps 32 bits of each hash, so lookups scan dense
 * memory, compare keys only on a likely match, and growth never rehashes
 * keys; key and value share a slot, so a hit costs one more cache line.
 * Load factor stays <= 3/4.
 * Slot indexes (size_t) are valid until the next insert or delete.
 * Zero-initialise or hmap_init before use. */
struct hmap_slot {
	uint64_t key;
	uint64_t val;
};
struct hmap {
	uint32_t *meta; /* 0 = empty, else hash bits with bit 31 set */
	struct hmap_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t len;
};

#define HMAP_END ((size_t)-1)

typedef bool (*hmap_eq_fn)(const void *ctx, uint64_t key);

void hmap_init(struct hmap *m);
/* Free the slots; the map is empty and may be used again. */
void hmap_release(struct hmap *m);
/* Remove every entry, keep the memory. */
void hmap_clear(struct hmap *m);
/* Make room for n entries in total without growing again. */
void hmap_reserve(struct hmap *m, size_t n);

/* Integer keys. hmap_get copies the value of key into *val (if val) and
 * returns true when present. hmap_put inserts or overwrites and returns true
 * if key was new. hmap_del removes key, copies its value to *val (if val) and
 * returns true if it was present. hmap_upsert returns a pointer to key's
 * value, inserting it with value 0 (and *is_new = true) when absent; the
 * pointer is valid until the next insert or delete. */
bool hmap_get(const struct hmap *m, uint64_t key, uint64_t *val);
bool hmap_put(struct hmap *m, uint64_t key, uint64_t val);
bool hmap_del(struct hmap *m, uint64_t key, uint64_t *val);
uint64_t *hmap_upsert(struct hmap *m, uint64_t key, bool *is_new);

/* Pointer values on integer keys; NULL when absent. */
static inline void *hmap_get_ptr(const struct hmap *m, uint64_t key)
{
	uint64_t v;
	return hmap_get(m, key, &v) ? (void *)(uintptr_t)v : NULL;
}
static inline bool hmap_put_ptr(struct hmap *m, uint64_t key, void *p)
{
	return hmap_put(m, key, (uint64_t)(uintptr_t)p);
}

/* Caller-hashed keys. hmap_lookup returns the slot index of the entry with
 * this hash for which eq(ctx, stored key) is true, or HMAP_END. hmap_insert
 * adds an entry without looking for a duplicate (look up first) and returns
 * its slot index. hmap_remove_at removes the entry at a slot index. */
size_t hmap_lookup(const struct hmap *m, uint64_t hash, hmap_eq_fn eq, const void *ctx);
size_t hmap_insert(struct hmap *m, uint64_t hash, uint64_t key, uint64_t val);
void hmap_remove_at(struct hmap *m, size_t slot);
/* A hint: start loading the home slot of hash, which a lookup or insert
 * will touch soon. For big maps, whose probes miss the caches. */
void hmap_prefetch(const struct hmap *m, uint64_t hash);

/* Iteration: the first occupied slot index >= i, or HMAP_END.
 *     for (size_t i = hmap_next(m, 0); i != HMAP_END; i = hmap_next(m, i + 1))
 *             use(m->slots[i].key, m->slots[i].val);
 * Do not insert or delete while iterating (deletion shifts entries back). */
size_t hmap_next(const struct hmap *m, size_t i);

/* ---- string pool (strpool.c) ------------------------------------------- */

/* Interns byte strings to dense 32-bit ids, each distinct string stored
 * once. Id 0 is the empty string (and NULL). Strings live in large arena
 * blocks, NUL-terminated, at pointers that never move while the pool lives,
 * so the trace processor can keep `const char *` and ids alike. Not
 * thread-safe. Strings may contain NUL bytes; lengths are at most
 * STRPOOL_MAX_LEN. */
struct strpool {
	struct hmap map;   /* key = pointer to the bytes, val = id */
	struct arena mem;  /* [u32 len][bytes][NUL] records */
	const char **strs; /* id -> bytes; strs[0] = "" */
	size_t count, cap; /* ids in use (including 0), capacity of strs */
	uint32_t empty;    /* strpool_empty's id, 0 until asked for */
};

#define STRPOOL_MAX_LEN ((size_t)UINT32_MAX - 1)

void strpool_init(struct strpool *p);
/* Free every string; pointers from strpool_get become invalid. */
void strpool_release(struct strpool *p);
/* The id of the len bytes at s, adding them if new. s == NULL or len == 0
 * gives 0. The pool copies the bytes; the caller keeps s. Aborts if len is
 * over STRPOOL_MAX_LEN or the pool is out of ids (callers cap lengths). */
uint32_t strpool_intern(struct strpool *p, const char *s, size_t len);
/* strpool_intern of a NUL-terminated string. */
uint32_t strpool_intern_cstr(struct strpool *p, const char *s);
/* An id for a string that is present but empty, unlike id 0 (none): its
 * bytes are "". The same id every call; strpool_intern("") still gives 0. */
uint32_t strpool_empty(struct strpool *p);
/* Like strpool_intern but never adds: true and *id when present. The empty
 * string finds strpool_empty's id once there is one (0 before). */
bool strpool_find(const struct strpool *p, const char *s, size_t len, uint32_t *id);
/* The NUL-terminated bytes for id (owned by the pool, stable until release)
 * and their length in *len (if len). id must come from this pool. */
const char *strpool_get(const struct strpool *p, uint32_t id, size_t *len);
/* Number of ids in use, counting the empty string. */
static inline size_t strpool_size(const struct strpool *p)
{
	return p->count ? p->count : 1;
}
/* Bytes of memory the pool holds (strings, index and map). */
size_t strpool_bytes(const struct strpool *p);

/* ---- logging (log.c) ----------------------------------------------------- */

/* Tagged, levelled logging to stderr, one write(2) per line:
 *
 *     [    12.345678 traced] I ipc: producer 'x' connected
 *
 * (seconds of CLOCK_MONOTONIC, the process name if log_set_name was called,
 * the level letter, the tag). The threshold comes from TRACEBOX_LOG, read on
 * first use: a level (`debug`), per-tag levels (`ipc=debug,traced=info`), or
 * both (`warn,ipc=debug`). The default is info. Levels: error, warn, info,
 * debug. Messages are formatted only when enabled. Safe to call from any
 * thread; configuration calls are for startup. */
enum log_level {
	LOG_LEVEL_ERROR = 0,
	LOG_LEVEL_WARN = 1,
	LOG_LEVEL_INFO = 2,
	LOG_LEVEL_DEBUG = 3,
};

#define LOG_LINE_MAX 1024 /* longer messages are truncated */

#define log_error(tag, ...) log_at_(LOG_LEVEL_ERROR, tag, __VA_ARGS__)
#define log_warn(tag, ...) log_at_(LOG_LEVEL_WARN, tag, __VA_ARGS__)
#define log_info(tag, ...) log_at_(LOG_LEVEL_INFO, tag, __VA_ARGS__)
#define log_debug(tag, ...) log_at_(LOG_LEVEL_DEBUG, tag, __VA_ARGS__)
#define log_at_(lvl, tag, ...)                            \
	do {                                              \
		if (log_enabled(tag, lvl))                \
			log_write(lvl, tag, __VA_ARGS__); \
	} while (0)

/* True if a message of this level and tag would be written. */
bool log_enabled(const char *tag, enum log_level level);
/* Write one message (no trailing newline needed) if enabled. */
void log_write(enum log_level level, const char *tag, const char *fmt, ...) TB_PRINTF(3, 4);
void log_vwrite(enum log_level level, const char *tag, const char *fmt, va_list ap);
/* Replace the thresholds with spec (the TRACEBOX_LOG syntax). Returns 0, or
 * -EINVAL with a message in err (then nothing changed). */
int log_set_spec(const char *spec, struct tb_err *err);
/* Name shown in every line (e.g. the applet); copied, NULL for none. */
void log_set_name(const char *name);
/* Parse "error", "warn", "info" or "debug"; -EINVAL otherwise. */
int log_level_parse(const char *s, size_t n, enum log_level *out);

/* Redirect output (tests): fn gets the level, tag and formatted message
 * (without prefix or newline) instead of stderr. NULL restores stderr. */
typedef void (*log_sink_fn)(void *ctx, enum log_level level, const char *tag, const char *msg);
void log_set_sink(log_sink_fn fn, void *ctx);

/* ---- time (time.c) ------------------------------------------------------- */

/* Nanoseconds on a clock (CLOCK_BOOTTIME, CLOCK_MONOTONIC, ...); 0 if the
 * clock is not available. Trace timestamps are BOOTTIME (tb_boot_ns). */
int64_t tb_now_ns(clockid_t clk);
int64_t tb_boot_ns(void);
int64_t tb_mono_ns(void);
int64_t tb_realtime_ns(void);

/* Perfetto's -t format: digits then one of ms, s, m, h ("10s", "500ms",
 * "2m", "1h"). Stores milliseconds in *ms and returns 0, or returns -EINVAL
 * (bad syntax, no or unknown suffix) / -ERANGE (overflow) with a message in
 * err. */
int tb_parse_duration_ms(const char *s, uint64_t *ms, struct tb_err *err);
/* Perfetto's -b/-s format: digits then one of kb, mb, gb, k, m, g (powers of
 * 1024: "64k", "32mb", "1g"). Stores bytes in *bytes; errors as above. */
int tb_parse_size(const char *s, uint64_t *bytes, struct tb_err *err);

/* ---- memcmp (memcmp.c) --------------------------------------------------- */

/* memcmp a word at a time (the release builds' memcmp; see memcmp.c):
 * negative, 0 or positive as the first differing byte of a is below,
 * equal to or above b's, read as unsigned char. Pure. */
int tb_memcmp(const void *a, const void *b, size_t n);

/* ---- digits in text (digits.c) ------------------------------------------ */

/* The value of the hex digit c (0-9, a-f, A-F), or -1. Pure. */
int tb_hex_digit(int c);
/* The run of decimal digits that starts s[0, n): returns its length (0
 * when s does not start with a digit) and stores its value in *v (0 for no
 * digits), saturated at UINT64_MAX when it does not fit, so a caller's
 * "v > max" check also catches overflow. No sign, no blanks. Pure. */
size_t tb_dec_prefix(const char *s, size_t n, uint64_t *v);
/* v in decimal at out (at most 20 bytes, no NUL); returns the length.
 * For hot paths, where snprintf costs ~1,000 instructions a call. Pure. */
size_t tb_u64_dec(char *out, uint64_t v);

/* ---- file descriptors (fd.c) --------------------------------------------- */

/* Read up to n bytes, retrying on EINTR and short reads and waiting with
 * poll on EAGAIN. Returns the bytes read (< n only at end of file) or -errno. */
ssize_t tb_read_all(int fd, void *buf, size_t n);
/* Write all n bytes, retrying like tb_read_all. Returns 0 or -errno. */
int tb_write_all(int fd, const void *buf, size_t n);
/* Turn O_NONBLOCK / FD_CLOEXEC on or off. Return 0 or -errno. */
int tb_set_nonblock(int fd, bool on);
int tb_set_cloexec(int fd, bool on);
/* Read a whole file (regular, procfs or a pipe) into a new tb_malloc'd
 * buffer, NUL-terminated (not counted in *len), which the caller frees.
 * Returns 0, or -errno with a message in err: -EFBIG when it holds more than
 * max_bytes. On failure *buf is NULL. */
int tb_read_file(const char *path, char **buf, size_t *len, size_t max_bytes, struct tb_err *err);
/* Hand every byte of fd, from its current offset to end of file, to
 * feed(ctx, p, n) in pieces of at most chunk bytes, in order. With map, a
 * regular file read from offset 0 is mapped in windows (populated in one call each and
 * unmapped once fed) instead of copied by read(); bytes appended after its
 * fstat, and every other fd, are read into a buffer. A truncation while a
 * window is mapped raises SIGBUS, as for any mmap reader. Returns 0, feed's
 * negative return (which stops feeding), or -errno from reading. */
int tb_feed_fd(int fd, size_t chunk, bool map, int (*feed)(void *ctx, const uint8_t *p, size_t n),
               void *ctx);
/* Open a regular file for reading without blocking on the way: a FIFO or a
 * device at path is refused before anything waits for a writer. extra_flags
 * adds open flags (O_NOFOLLOW). The returned fd is blocking and close-on-exec;
 * its fstat goes to *st when st is not NULL. Returns the fd, or -errno with
 * a message in err (-EINVAL: not a regular file). */
struct stat;
int tb_open_regular(const char *path, int extra_flags, struct stat *st, struct tb_err *err);
/* Create a new, empty file beside path ("<path>.XXXXXX", O_EXCL, never
 * through a symlink) for writing output that replaces path only when it is
 * complete: the caller renames tmp over path on success and unlinks tmp on
 * failure. The file gets mode & ~umask. The name goes to tmp (n bytes).
 * Returns the fd (close-on-exec), or -errno with a message in err. */
int tb_create_beside(const char *path, unsigned mode, char *tmp, size_t n, struct tb_err *err);
/* close(*fd) if it is >= 0 and set it to -1. Keeps errno. */
void tb_close(int *fd);

/* Readiness handshake of tracebox autostart (compat §5.2): if the environment
 * variable `env` names an fd, write "1" to it, close it and unset `env`, so
 * the parent waiting on the pipe knows we are up. Returns 0 (also when `env`
 * is unset), or -errno when the fd is bad or the write fails. */
int tb_notify_ready(const char *env);

/* ---- kernel symbols (kallsyms.c) ------------------------------------------ */

#define KSYMS_MAX_BYTES (64u << 20) /* /proc/kallsyms read cap */

struct ksym {
	uint64_t addr;
	uint32_t name_off; /* into names */
};

/* The text symbols of /proc/kallsyms, sorted by address. */
struct ksyms {
	struct ksym *syms; /* sorted by addr */
	size_t n;
	char *names;
	size_t names_len;
};

/* Parse kallsyms text ("addr type name [module]" lines), keeping text
 * symbols. Returns 0, or -EPERM when every address is zero (kptr_restrict
 * hides them; the table is then left empty). */
int ksyms_parse(struct ksyms *k, const char *text, size_t len);

/* Load path (NULL: /proc/kallsyms). Returns 0, -EPERM with a message
 * naming kernel.kptr_restrict when addresses are hidden, or -errno. */
int ksyms_load(struct ksyms *k, const char *path, struct tb_err *err);

/* Name of the symbol containing addr (the nearest at or below it), or
 * NULL; borrowed from k. */
const char *ksyms_lookup(const struct ksyms *k, uint64_t addr);

void ksyms_release(struct ksyms *k);

/* ---- ELF images (elf.c) --------------------------------------------------- */

/* An ELF file being read (32/64-bit, either byte order), from memory or an
 * fd; only the header is read on open. Every read is bounds-checked against
 * size, so any bytes are safe input. */
struct elf_file {
	const uint8_t *buf; /* memory image, or NULL to pread fd */
	int fd;
	bool own_fd; /* elf_open_path opened it: elf_close closes it */
	bool is64, be;
	uint64_t size;
	uint16_t type; /* e_type: 2 EXEC, 3 DYN, ... */
	uint64_t phoff, shoff;
	uint16_t phentsize, phnum, shentsize, shnum, shstrndx;
};
struct elf_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, filesz, memsz, align;
};
struct elf_shdr {
	uint32_t name, type, link, info;
	uint64_t flags, addr, offset, size, entsize;
};
#define ELF_PT_LOAD 1
#define ELF_PT_NOTE 4
#define ELF_PF_X 1
#define ELF_SHT_SYMTAB 2
#define ELF_SHT_NOTE 7
#define ELF_SHT_NOBITS 8
#define ELF_SHT_DYNSYM 11

/* Open an image in buf[0, len) (not copied: it must outlive e), an open fd
 * of size bytes (not owned), or a path (owned; elf_close closes it).
 * Return 0, -EINVAL when the bytes are not ELF, or -errno (path, with a
 * message in err). */
int elf_open_mem(struct elf_file *e, const uint8_t *buf, size_t len);
int elf_open_fd(struct elf_file *e, int fd, uint64_t size);
int elf_open_path(struct elf_file *e, const char *path, struct tb_err *err);
void elf_close(struct elf_file *e);
/* Copy n bytes at file offset off. Returns 0, -ERANGE past the end, -EIO. */
int elf_read(const struct elf_file *e, uint64_t off, void *out, size_t n);
/* Program header / section header i. Return 0 or -ERANGE / -EIO. */
int elf_phdr(const struct elf_file *e, unsigned i, struct elf_phdr *out);
int elf_shdr(const struct elf_file *e, unsigned i, struct elf_shdr *out);
/* The section named name (e.g. ".gnu_debuglink"); 0 or -ENOENT. */
int elf_section_by_name(const struct elf_file *e, const char *name, struct elf_shdr *out);
/* The first executable PT_LOAD (what load bias is computed from); 0 or -ENOENT. */
int elf_first_exec_load(const struct elf_file *e, struct elf_phdr *out);
/* The GNU build id: from PT_NOTE segments, else SHT_NOTE sections. Copies
 * at most max bytes to id and returns that length, 0 when there is none. */
size_t elf_build_id(const struct elf_file *e, uint8_t *id, size_t max);
/* Find NT_GNU_BUILD_ID in a block of notes[0, len) (headers in big_endian
 * order if set); same return as elf_build_id. Pure. */
size_t elf_notes_build_id(const uint8_t *notes, size_t len, bool big_endian, uint8_t *id,
                          size_t max);
/* Integers in the file's byte order, from p (caller-checked bounds). */
uint16_t elf_u16(const struct elf_file *e, const uint8_t *p);
uint32_t elf_u32(const struct elf_file *e, const uint8_t *p);
uint64_t elf_u64(const struct elf_file *e, const uint8_t *p);

/* ---- symbols (symtab.c, symfind.c, demangle.c) ----------------------------- */

/* Function names of addresses in ELF files: the symbol tables of a file,
 * finding the file that holds a mapping's symbols on this machine by build
 * id, and demangling. Shared by the trace processor's symbolizer
 * (traceconv symbolize, PERFETTO_BINARY_PATH) and traced_perf's
 * end-of-capture symbolization. Not thread-safe; no global state. */

#define SYM_MAX_SYMBOLS (4u << 20)           /* symbols kept per file */
#define SYM_MAX_STRTAB ((uint64_t)256 << 20) /* string table bytes read */
#define SYM_BUILD_ID_MAX 64
#define SYM_MAX_NAME 4096 /* demangled name bytes */

struct sym_entry {
	uint64_t addr, size;
	uint32_t name; /* offset into names */
};

/* The function symbols of one ELF file, sorted by address. */
struct sym_table {
	struct sym_entry *v;
	size_t n;
	char *names; /* NUL-terminated strings (copies of the string tables) */
	size_t names_len;
	bool has_symtab; /* .symtab present (else only .dynsym) */
};

/* Load STT_FUNC (and STT_GNU_IFUNC) symbols with a defined section from
 * .symtab and .dynsym; every header, offset and name bounds-checked.
 * Returns 0 (possibly with no symbols) or -EINVAL when the sections are
 * unusable. t is released first by the caller (sym_table_release). */
int sym_table_load(struct sym_table *t, const struct elf_file *e);
void sym_table_release(struct sym_table *t);
/* The symbol covering file address addr: [addr, addr+size), or for a
 * zero-size symbol the closest one below when no sized one covers it.
 * Returns the raw (mangled) name or NULL. */
const char *sym_table_lookup(const struct sym_table *t, uint64_t addr);

/* Finding the file with a mapping's symbols (symfind.c). */

/* Where symbols are looked for (Perfetto's PERFETTO_BINARY_PATH semantics,
 * plus the machine's own files). */
struct sym_finder {
	char **roots; /* PERFETTO_BINARY_PATH entries */
	size_t n_roots;
	bool find_mode;         /* PERFETTO_SYMBOLIZER_MODE=find: path-based lookup in roots */
	bool no_system;         /* skip the mapping's own path and /usr/lib/debug */
	const char *debug_root; /* "/usr/lib/debug" (tests may override) */
	bool indexed;
	struct index_entry *entries; /* index mode: every ELF file under the roots */
	size_t n_entries, cap_entries;
	/* debuginfod (sym_finder_use_debuginfod): the client cache, servers */
	char *dbgd_cache;
	char **dbgd_urls;
	size_t n_dbgd_urls;
	int dbgd_timeout_ms;      /* per file fetched */
	int64_t dbgd_deadline_ns; /* no fetch starts after this (mono ns; 0 none) */
	struct sym_dbgd_stats {
		uint32_t cached;    /* found in the cache */
		uint32_t fetched;   /* downloaded into the cache */
		uint32_t not_found; /* every server answered 404/410 */
		uint32_t timed_out; /* a server stalled past the time per file */
		uint32_t failed;    /* other errors (connect, HTTP status, cache) */
		uint32_t skipped;   /* not tried: the time budget was spent */
	} dbgd;
	char dbgd_error[TB_ERR_MSG_MAX]; /* the last fetch error */
};

/* A resolved file: its symbols and the load segment to correct rel_pcs. */
struct sym_found {
	char *path;
	struct sym_table syms;
	bool has_load;
	uint64_t p_vaddr, p_align;
};

void sym_finder_init(struct sym_finder *f, const char *binary_path, bool find_mode, bool no_system);
void sym_finder_release(struct sym_finder *f);
/* Also look in a debuginfod client cache, and fetch what is missing from
 * debuginfod servers (as libdebuginfod: GET URL/buildid/HEX/debuginfo,
 * kept as CACHE/HEX/debuginfo). cache: the cache folder (NULL: the client's
 * default, $DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client,
 * else $HOME/.cache/debuginfod_client); urls: space-separated server URLs
 * (NULL or "": cache only); timeout_ms bounds each file; budget_ms (0: none)
 * bounds the fetching of one finder's life. Outcomes are counted in
 * f->dbgd; a failed fetch is never an error of sym_finder_find. */
void sym_finder_use_debuginfod(struct sym_finder *f, const char *cache, const char *urls,
                               int timeout_ms, int64_t budget_ms);
/* Find the file for mapping name with raw build id[len] (len > 0) and load
 * its symbols into out. Returns 0, or -ENOENT when no file on this machine
 * matches (out is then empty). */
int sym_finder_find(struct sym_finder *f, const char *name, const uint8_t *id, size_t len,
                    struct sym_found *out);
void sym_found_release(struct sym_found *s);
/* Does the ELF at path carry build id id[len]? Loads its symbols when it
 * does and they are not empty. */
bool sym_try_file(const char *path, const uint8_t *id, size_t len, struct sym_found *out);

/* Names as a person reads them (demangle.c). */

/* Demangle an Itanium C++ (_Z...) or Rust legacy (_ZN...17h<hash>E) symbol
 * into out[cap]. Returns the length written, or 0 when name is not mangled
 * or uses something this demangler does not handle (the caller keeps the
 * mangled name then). */
size_t sym_demangle(const char *name, char *out, size_t cap);

/* ---- event loop (loop.c) ------------------------------------------------- */

/* One epoll loop per daemon: fds, timers (a timerfd each, CLOCK_BOOTTIME),
 * signals (one signalfd) and posted tasks, all run on the thread that calls
 * loop_run. Every loop_* function must be called on that thread (or before
 * the loop runs). Callbacks may add and delete anything, including the source
 * being dispatched: a deleted source gets no further callbacks, even for
 * events already returned in the same epoll batch, and is freed only after
 * the batch. Delete an fd from the loop before closing it. */
struct loop;

/* Event bits for loop_add_fd (the epoll values). */
#define LOOP_IN 0x001u
#define LOOP_OUT 0x004u
#define LOOP_ERR 0x008u
#define LOOP_HUP 0x010u

typedef void (*loop_fd_fn)(struct loop *l, int fd, uint32_t events, void *ctx);
typedef void (*loop_timer_fn)(struct loop *l, uint64_t timer_id, void *ctx);
typedef void (*loop_signal_fn)(struct loop *l, int signo, void *ctx);
typedef void (*loop_task_fn)(struct loop *l, void *ctx);

/* A new loop, or NULL with a message in err. Free with loop_free. */
struct loop *loop_new(struct tb_err *err);
/* Free the loop and its sources (it does not close user fds) and unblock the
 * signals loop_add_signal blocked. Not from inside a callback. */
void loop_free(struct loop *l);
/* The loop's error slot: loop_* failures record their message here. */
struct tb_err *loop_err(struct loop *l);

/* Watch fd for events (LOOP_IN | LOOP_OUT; ERR and HUP are always
 * reported); cb gets the events that fired. The caller keeps owning fd.
 * Returns 0 or -errno (-EEXIST if fd is already watched). */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn cb, void *ctx);
/* Change the events watched on fd. Returns 0 or -errno (-ENOENT). */
int loop_mod_fd(struct loop *l, int fd, uint32_t events);
/* Stop watching fd. Returns 0 or -ENOENT. */
int loop_del_fd(struct loop *l, int fd);

/* Run cb after delay_ms, then every period_ms if period_ms > 0 (a one-shot
 * timer is gone after its callback). Returns a timer id (> 0, never reused),
 * or 0 on failure with a message in loop_err. */
uint64_t loop_add_timer(struct loop *l, uint64_t delay_ms, uint64_t period_ms, loop_timer_fn cb,
                        void *ctx);
/* Cancel a pending or periodic timer. Returns true if it existed. */
bool loop_cancel_timer(struct loop *l, uint64_t timer_id);

/* Block signo for the calling thread and deliver it through the loop to cb
 * (one handler per signal; a second call replaces it). Returns 0 or -errno. */
int loop_add_signal(struct loop *l, int signo, loop_signal_fn cb, void *ctx);
/* Inside a signal callback: the si_code of the signal being handled
 * (SI_USER when a process sent it with kill(2), SI_KERNEL when the terminal
 * did, e.g. ^C to the foreground process group); 0 outside one. */
int loop_signal_code(const struct loop *l);

/* Run cb(l, ctx) once at the start of the next iteration (tasks posted by a
 * task run one iteration later). */
void loop_post(struct loop *l, loop_task_fn cb, void *ctx);

/* Run until loop_quit; returns its code, or -errno if epoll fails. */
int loop_run(struct loop *l);
/* Make loop_run return code at the end of the current iteration. */
void loop_quit(struct loop *l, int code);
/* One iteration: posted tasks, then wait up to timeout_ms (-1 forever, 0 not
 * at all; 0 anyway if tasks are pending) and dispatch what fired. Returns the
 * number of callbacks run, or -errno. */
int loop_run_once(struct loop *l, int timeout_ms);

/* ---- daemon applets (daemon.c) ------------------------------------------ */

/* What a flag callback tells tb_daemon_main. */
enum tb_daemon_flag {
	TB_DAEMON_FLAG_TAKEN,   /* the applet's flag: carry on */
	TB_DAEMON_FLAG_UNKNOWN, /* not the applet's: usage error, exit 1 */
	TB_DAEMON_EXIT_OK,      /* done (e.g. a one-shot cleanup): exit 0 now */
	TB_DAEMON_EXIT_FAIL,    /* a bad value, already reported: exit 1 now */
};

/* One daemon applet (traced, traced_probes, traced_perf) for
 * tb_daemon_main. Strings are borrowed. */
struct tb_daemon {
	const char *name;    /* the applet: --version, log name, error prefix */
	const char *log_tag; /* tag of the "signal N, exiting" line */
	const char *usage;   /* --help text (and after an unknown flag) */
	/* A flag other than --version/-v, --help/-h and --background at
	 * argv[*i]; it may take values by advancing *i. NULL: none. */
	enum tb_daemon_flag (*flag)(void *ctx, int argc, char **argv, int *i);
	/* Create the service on l (SIGINT and SIGTERM already end the loop).
	 * Returns 0, or < 0 with a message in err (then stop still runs). */
	int (*start)(void *ctx, struct loop *l, struct tb_err *err);
	/* Free what start made, after the loop has ended. NULL: nothing. */
	void (*stop)(void *ctx);
	void *ctx;
};

/* The daemon applets' main: parse the flags (printing --version and --help
 * itself), name the log, ignore SIGPIPE, make the loop, start the service,
 * daemonize for --background once it is up, run until SIGINT/SIGTERM or
 * the service quits the loop, stop. On failure prints "NAME: message" to
 * stderr. Returns the exit status. Main thread only. */
int tb_daemon_main(const struct tb_daemon *d, int argc, char **argv);

/* ---- HTTP client (http.c) ------------------------------------------------ */

/* An HTTP/1.1 GET client over TCP or TLS (mbedtls): the trace processor
 * streams traces from URLs with it, traced_perf fetches debug files from
 * debuginfod servers. */

#define HTTP_HOST_MAX 256
#define HTTP_PATH_MAX 4096
#define HTTP_LINE_MAX 8192           /* one status, header, chunk-size or trailer line */
#define HTTP_HEADERS_MAX (64 * 1024) /* all header (or trailer) lines of a response */
#define HTTP_MAX_REDIRECTS 8

/* A parsed http:// or https:// URL. host has no brackets (an IPv6 literal
 * `[::1]` is stored as `::1`); path starts with '/' and keeps the query. */
struct http_url {
	bool https;
	uint16_t port;
	char host[HTTP_HOST_MAX];
	char path[HTTP_PATH_MAX];
};

/* True if s starts with http:// or https:// (any case). */
bool http_is_url(const char *s);
/* Parse url into *u. Returns 0, or -EINVAL with err set (bad scheme, host,
 * port, user-info, or a part too long). */
int http_url_parse(const char *url, struct http_url *u, struct tb_err *err);
/* Resolve a redirect's Location (absolute URL, //host/path, /path or a path
 * relative to base's) into *out. Returns 0 or -EINVAL (err set). */
int http_url_resolve(const struct http_url *base, const char *loc, struct http_url *out,
                     struct tb_err *err);
/* Format u back as a URL into buf (always NUL-terminated). */
void http_url_format(const struct http_url *u, char *buf, size_t size);

typedef int (*http_sink)(void *ctx, const uint8_t *p, size_t n);

/* The response parser: status line, headers, then a body delimited by
 * Content-Length, chunked transfer encoding or the end of the connection.
 * Interim 1xx responses are skipped. Pure (no I/O), so it is unit-tested and
 * fuzzed on its own. Embed it; http_parser_init before use. */
struct http_parser {
	int state;
	int status;               /* final status code, once headers_done */
	bool headers_done;        /* status and headers of the final response parsed */
	bool done;                /* the whole body has been delivered */
	bool chunked, has_length; /* body framing */
	uint64_t content_length;
	uint64_t remaining; /* body bytes left (length framing or current chunk) */
	uint64_t body_bytes;
	size_t header_bytes; /* bytes of the current header or trailer block */
	size_t line_len;
	char reason[128];
	char location[HTTP_PATH_MAX + HTTP_HOST_MAX + 16];
	char line[HTTP_LINE_MAX];
};

void http_parser_init(struct http_parser *p);
/* Parse up to n bytes of the response. Stops right after the final
 * response's headers (headers_done becomes true, so the caller can look at
 * status before any body byte is passed on), and otherwise consumes
 * everything, passing body bytes (de-chunked) to sink. *used is set to the
 * bytes consumed. Bytes after the end of the body are ignored. Returns 0, a
 * sink's negative code, or -EPROTO (err set) on a malformed response. */
int http_parser_feed(struct http_parser *p, const uint8_t *buf, size_t n, size_t *used,
                     http_sink sink, void *ctx, struct tb_err *err);
/* The peer closed the connection: 0 if the body is complete (or delimited by
 * the close), else -EPROTO (err set). */
int http_parser_eof(struct http_parser *p, struct tb_err *err);

struct http_opts {
	int connect_timeout_ms; /* per address tried; 0 = 15 s */
	int read_timeout_ms;    /* per read or write; 0 = 60 s */
};

/* GET url, following up to HTTP_MAX_REDIRECTS redirects (301, 302, 303,
 * 307, 308; http and https), and stream the final 2xx response's body to
 * sink in chunks as it arrives. https:// verifies the server's certificate
 * and host name against the CA bundle named by $SSL_CERT_FILE, or else the
 * first of the system bundles found. opts may be NULL. Blocks; runs on the
 * caller's thread. Returns 0, a sink's negative code (err untouched), or a
 * negative errno-style code with one line in err: cannot resolve, cannot
 * connect, certificate verification failed, HTTP status (-ENOENT for 404
 * and 410), -ETIMEDOUT, ... */
int http_get(const char *url, const struct http_opts *opts, http_sink sink, void *ctx,
             struct tb_err *err);

#endif /* TB_BASE_H */
