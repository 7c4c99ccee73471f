/*
 * Bump arena. Allocation is a pointer increment inside the newest ordinary
 * block (the fast path is inline in base.h); when it does not fit, a new
 * block is chained in front. Requests over a quarter of the block size get a
 * block of their own, chained behind the bump block, so one big string does
 * not throw away the free tail of the current block. Nothing is freed
 * individually: arena_reset keeps one ordinary block for reuse and
 * arena_release frees everything.
 */
#include "base.h"

struct arena_block {
	struct arena_block *next;
	size_t size; /* usable bytes after the header */
	bool own;    /* a dedicated block for one large request */
	_Alignas(16) char data[];
};

void arena_init(struct arena *a, size_t block_size)
{
	a->blocks = NULL;
	a->cur = a->end = NULL;
	a->block_size = block_size ? block_size : ARENA_DEFAULT_BLOCK;
	a->held = 0;
}

static struct arena_block *block_new(struct arena *a, size_t size, bool own)
{
	size_t total;
	if (!tb_add_ok(sizeof(struct arena_block), size, &total))
		TB_CHECK(!"arena allocation size overflows");
	struct arena_block *b = tb_malloc(total);
	b->size = size;
	b->own = own;
	a->held += total;
	return b;
}

void *arena_alloc_slow_(struct arena *a, size_t size, size_t align)
{
	TB_DCHECK(align > 0 && (align & (align - 1)) == 0 && align <= 4096);
	if (!a->block_size)
		a->block_size = ARENA_DEFAULT_BLOCK;
	size_t need;
	if (!tb_add_ok(size, align, &need))
		TB_CHECK(!"arena allocation size overflows");

	if (need > a->block_size / 4) {
		struct arena_block *b = block_new(a, need, true);
		/* Behind the bump block so its free space stays in use. */
		if (a->blocks && !a->blocks->own) {
			b->next = a->blocks->next;
			a->blocks->next = b;
		} else {
			b->next = a->blocks;
			a->blocks = b;
		}
		uintptr_t p = ((uintptr_t)b->data + (align - 1)) & ~(uintptr_t)(align - 1);
		return (void *)p;
	}

	struct arena_block *b = block_new(a, a->block_size, false);
	b->next = a->blocks;
	a->blocks = b;
	a->cur = b->data;
	a->end = b->data + b->size;
	return arena_alloc(a, size, align);
}

void *arena_zalloc(struct arena *a, size_t size, size_t align)
{
	void *p = arena_alloc(a, size, align);
	memset(p, 0, size);
	return p;
}

void *arena_memdup(struct arena *a, const void *p, size_t n)
{
	void *r = arena_alloc(a, n, 1);
	if (n)
		memcpy(r, p, n);
	return r;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *r = arena_alloc(a, len + 1, 1);
	memcpy(r, s, len);
	r[len] = '\0';
	return r;
}

void arena_reset(struct arena *a)
{
	struct arena_block *keep = NULL;
	struct arena_block *b = a->blocks;
	while (b) {
		struct arena_block *next = b->next;
		if (!keep && !b->own && b->size == a->block_size) {
			keep = b;
		} else {
			a->held -= sizeof *b + b->size;
			tb_free(b);
		}
		b = next;
	}
	a->blocks = keep;
	if (keep) {
		keep->next = NULL;
		a->cur = keep->data;
		a->end = keep->data + keep->size;
	} else {
		a->cur = a->end = NULL;
	}
}

void arena_release(struct arena *a)
{
	struct arena_block *b = a->blocks;
	while (b) {
		struct arena_block *next = b->next;
		tb_free(b);
		b = next;
	}
	a->blocks = NULL;
	a->cur = a->end = NULL;
	a->held = 0;
}
