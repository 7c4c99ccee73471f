/*
 * trace_buffer.c: one central buffer of a tracing session (one
 * TraceConfig.buffers entry), the service side of trace_buffer_v1.
 *
 * Committed chunks are copied in whole as records charged at 16 bytes of
 * header plus the payload rounded up to 16, against the configured size.
 * Records sit on two lists: the buffer-wide FIFO in commit order (what a
 * RING_BUFFER overwrites first) and their sequence's list in chunk_id order
 * (what the reader walks). The sequence list is the in-order walk of a
 * treap keyed by chunk_id (wrap-aware), so a commit lands in its place in
 * O(log n) expected whatever the order producers commit in (appending, the
 * usual case, is O(1)); nodes are removed by pointer, so even chunk ids with
 * no consistent order (a hostile producer) cannot corrupt it. A lookaside
 * map keyed by (producer, writer, chunk_id) finds a record for patches and
 * re-commits. Reading stitches each
 * sequence's fragments back into packets with the tracing reassembler, which
 * keeps a packet split across a read boundary and flags gaps; chunks fed to
 * it are freed. See README.md for the layout.
 *
 * Records live in slabs the buffer owns, in size classes (256 bytes, then
 * sixteen a doubling up to 1 MiB) with a free list each, a record taking a
 * freed block of its class or of up to eight classes above, so a session that commits, overwrites
 * and reads thousands of 32 KiB chunks does not map and unmap a block per chunk (musl maps blocks
 * this large one by one, and every unmap is a TLB shootdown on every CPU). The slabs together hold
 * at most the buffer's size plus a quarter and one slab; past that a record is a heap block of its
 * own. A buffer of 32 MiB or more takes 2 MiB slabs placed on a 2 MiB boundary that ask for
 * transparent huge pages: a slab then costs one page fault instead of 512 (at ~10 us a fault
 * under virtualization, faults were 40 % of traced's CPU in a sched storm).
 */
#include "traced_int.h"
#include "pb_fields.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct tb_chunk;

struct tb_seq {
	uint16_t producer_id, writer_id;
	uint32_t seq_id;
	uid_t uid;
	pid_t pid;
	struct tb_chunk *head, *tail; /* chunk_id order */
	struct tb_chunk *root;        /* the treap whose in-order walk that is */
	struct tracing_reassembler ra;
	struct tb_seq *next;
};

struct tb_chunk {
	struct tb_chunk *prev, *next;         /* buffer FIFO */
	struct tb_chunk *seq_prev, *seq_next; /* sequence order */
	struct tb_chunk *up, *left, *right;   /* the sequence's treap */
	uint32_t prio;                        /* random: a max-heap on it */
	struct tb_seq *seq;
	struct tracing_chunk_header hdr;
	size_t len, cost;
	uint32_t cls; /* its slab block's size class + 1; 0: a heap block */
	uint8_t payload[];
};

/* A record's place on its class's free list. */
struct tb_free_rec {
	struct tb_free_rec *next;
};

#define TB_REC_CLASSES 193u /* 256 B, then 16 a doubling to 1 MiB */
#define TB_SLAB_MIN ((size_t)64 << 10)
#define TB_SLAB_MAX ((size_t)1 << 20)  /* the largest record a slab holds */
#define TB_SLAB_HUGE ((size_t)2 << 20) /* a huge page, the largest slab */

struct traced_buffer {
	uint32_t id;
	size_t size, used;
	bool discard, full;
	uint32_t *next_seq_id;
	struct tb_chunk *head, *tail;
	struct hmap index; /* chunk key -> struct tb_chunk * */
	struct hmap seqs;  /* producer << 16 | writer -> struct tb_seq * */
	struct tb_seq *seq_list;
	uint64_t rng; /* treap priorities */
	struct traced_buffer_stats stats;
	struct tb_free_rec *free_recs[TB_REC_CLASSES];
	VEC(uint8_t *) slabs;
	uint8_t *bump; /* the newest slab's unused tail */
	size_t bump_left, slab_bytes;
};

#define TB_RECORD_HEADER 16u

static uint64_t chunk_key(uint16_t producer, uint16_t writer, uint32_t chunk_id)
{
	return (uint64_t)producer << 48 | (uint64_t)writer << 32 | chunk_id;
}

struct traced_buffer *traced_buffer_new(uint32_t id, size_t size, bool discard,
                                        uint32_t *next_seq_id)
{
	struct traced_buffer *b = tb_calloc(1, sizeof *b);
	b->id = id;
	b->size = size;
	b->discard = discard;
	b->next_seq_id = next_seq_id;
	b->rng = tb_hash_u64((uint64_t)tb_mono_ns() ^ (uint64_t)(uintptr_t)b) | 1;
	hmap_init(&b->index);
	hmap_init(&b->seqs);
	return b;
}

/* The size class of n bytes (n <= TB_SLAB_MAX) and its block size. */
static uint32_t rec_class(size_t n, size_t *block)
{
	if (n <= 256) {
		*block = 256;
		return 0;
	}
	uint32_t p = 63u - (uint32_t)__builtin_clzll((unsigned long long)(n - 1)); /* 2^p < n */
	size_t step = (size_t)1 << (p - 4);
	size_t k = (n - ((size_t)1 << p) + step - 1) / step; /* 1..16 */
	*block = ((size_t)1 << p) + k * step;
	return (p - 8) * 16 + (uint32_t)k;
}

/* A record of bytes: a freed block of its class or of up to eight classes
 * above, else one carved from a slab, else (slabs at their bound, or a
 * record past 1 MiB) a heap block of its own. */
static struct tb_chunk *rec_alloc(struct traced_buffer *b, size_t bytes)
{
	struct tb_chunk *c;
	size_t sz;
	uint32_t cls;
	if (bytes > TB_SLAB_MAX)
		goto heap;
	cls = rec_class(bytes, &sz);
	for (uint32_t k = cls; k <= cls + 8 && k < TB_REC_CLASSES; k++) {
		struct tb_free_rec *f = b->free_recs[k];
		if (f) {
			b->free_recs[k] = f->next;
			c = (struct tb_chunk *)f;
			cls = k;
			goto done;
		}
	}
	if (b->bump_left < sz) {
		size_t slab = b->size / 16;
		slab = slab < TB_SLAB_MIN ? TB_SLAB_MIN : slab > TB_SLAB_HUGE ? TB_SLAB_HUGE : slab;
		if (slab < sz)
			slab = sz;
		if (b->slab_bytes + slab > b->size + b->size / 4 + TB_SLAB_HUGE)
			goto heap;
		if (slab == TB_SLAB_HUGE) {
			/* Twice the size mapped (untouched pages cost nothing), the
			 * aligned half used; the block's start kept for the free. */
			uint8_t *block = tb_malloc(2 * TB_SLAB_HUGE);
			uintptr_t at = ((uintptr_t)block + TB_SLAB_HUGE - 1) & ~(TB_SLAB_HUGE - 1);
			(void)madvise((void *)at, TB_SLAB_HUGE, MADV_HUGEPAGE); /* a hint only */
			vec_push(&b->slabs, block);
			b->bump = (uint8_t *)at;
		} else {
			b->bump = tb_malloc(slab);
			vec_push(&b->slabs, b->bump);
		}
		b->bump_left = slab;
		b->slab_bytes += slab;
	}
	c = (struct tb_chunk *)b->bump;
	b->bump += sz;
	b->bump_left -= sz;
done:
	memset(c, 0, sizeof *c);
	c->cls = cls + 1;
	return c;
heap:
	c = tb_malloc(bytes);
	memset(c, 0, sizeof *c);
	return c;
}

static void rec_free(struct traced_buffer *b, struct tb_chunk *c)
{
	if (!c->cls) {
		tb_free(c);
		return;
	}
	struct tb_free_rec *f = (struct tb_free_rec *)c;
	f->next = b->free_recs[c->cls - 1];
	b->free_recs[c->cls - 1] = f;
}

void traced_buffer_free(struct traced_buffer *b)
{
	if (!b)
		return;
	for (struct tb_chunk *c = b->head, *n; c; c = n) {
		n = c->next;
		if (!c->cls)
			tb_free(c);
	}
	for (size_t i = 0; i < b->slabs.len; i++)
		tb_free(b->slabs.data[i]);
	vec_release(&b->slabs);
	for (struct tb_seq *s = b->seq_list, *n; s; s = n) {
		n = s->next;
		tracing_reassembler_release(&s->ra);
		tb_free(s);
	}
	hmap_release(&b->index);
	hmap_release(&b->seqs);
	tb_free(b);
}

uint32_t traced_buffer_id(const struct traced_buffer *b)
{
	return b->id;
}
size_t traced_buffer_size(const struct traced_buffer *b)
{
	return b->size;
}
size_t traced_buffer_mem(const struct traced_buffer *b)
{
	return b->slab_bytes;
}
const struct traced_buffer_stats *traced_buffer_stats(const struct traced_buffer *b)
{
	return &b->stats;
}

static struct tb_seq *seq_get(struct traced_buffer *b, uint16_t producer, uint16_t writer,
                              uid_t uid, pid_t pid)
{
	uint64_t key = (uint64_t)producer << 16 | writer;
	struct tb_seq *s = hmap_get_ptr(&b->seqs, key);
	if (s)
		return s;
	s = tb_calloc(1, sizeof *s);
	s->producer_id = producer;
	s->writer_id = writer;
	s->seq_id = (*b->next_seq_id)++;
	s->uid = uid;
	s->pid = pid;
	tracing_reassembler_init(&s->ra);
	s->next = b->seq_list;
	b->seq_list = s;
	hmap_put_ptr(&b->seqs, key, s);
	return s;
}

/* Chunk ids wrap: a is before b if the forward distance from a is short. */
static bool chunk_id_before(uint32_t a, uint32_t b)
{
	return (uint32_t)(b - a) < 0x80000000u && a != b;
}

/* ---- the sequence treap ---------------------------------------------------
 * A binary tree in chunk_id order that is also a max-heap on random
 * priorities, so its depth is O(log n) expected for any insertion order.
 * Rotations keep the in-order walk, which the seq_prev/seq_next list mirrors:
 * a new leaf is linked between its in-order neighbours (the last nodes the
 * descent turned right and left at), a node is rotated down to a leaf and
 * cut off by pointer. */

/* Rotate x above its parent. */
static void treap_rotate_up(struct tb_seq *s, struct tb_chunk *x)
{
	struct tb_chunk *p = x->up, *g = p->up;
	if (p->left == x) {
		p->left = x->right;
		if (x->right)
			x->right->up = p;
		x->right = p;
	} else {
		p->right = x->left;
		if (x->left)
			x->left->up = p;
		x->left = p;
	}
	p->up = x;
	x->up = g;
	if (!g)
		s->root = x;
	else if (g->left == p)
		g->left = x;
	else
		g->right = x;
}

static void treap_insert(struct traced_buffer *b, struct tb_seq *s, struct tb_chunk *c)
{
	struct tb_chunk *at = s->root, *pred = NULL, *succ = NULL;
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	c->prio = (uint32_t)(b->rng >> 32);
	c->left = c->right = NULL;
	if (!at) {
		s->root = c;
		c->up = NULL;
	} else if (chunk_id_before(s->tail->hdr.chunk_id, c->hdr.chunk_id)) {
		/* The usual case: after the last one, i.e. the rightmost node. */
		pred = s->tail;
		pred->right = c;
		c->up = pred;
	} else {
		for (;;) {
			if (chunk_id_before(c->hdr.chunk_id, at->hdr.chunk_id)) {
				succ = at;
				if (!at->left) {
					at->left = c;
					break;
				}
				at = at->left;
			} else {
				pred = at;
				if (!at->right) {
					at->right = c;
					break;
				}
				at = at->right;
			}
		}
		c->up = at;
	}
	c->seq_prev = pred;
	c->seq_next = succ;
	if (pred)
		pred->seq_next = c;
	else
		s->head = c;
	if (succ)
		succ->seq_prev = c;
	else
		s->tail = c;
	while (c->up && c->up->prio < c->prio)
		treap_rotate_up(s, c);
}

static void treap_remove(struct tb_seq *s, struct tb_chunk *c)
{
	while (c->left || c->right) {
		struct tb_chunk *k = !c->left                         ? c->right
		                     : !c->right                      ? c->left
		                     : c->left->prio > c->right->prio ? c->left
		                                                      : c->right;
		treap_rotate_up(s, k);
	}
	if (!c->up)
		s->root = NULL;
	else if (c->up->left == c)
		c->up->left = NULL;
	else
		c->up->right = NULL;
	if (c->seq_prev)
		c->seq_prev->seq_next = c->seq_next;
	else
		s->head = c->seq_next;
	if (c->seq_next)
		c->seq_next->seq_prev = c->seq_prev;
	else
		s->tail = c->seq_prev;
}

/* Unlink c from both lists, its treap and the index, and free it. */
static void chunk_remove(struct traced_buffer *b, struct tb_chunk *c)
{
	struct tb_seq *s = c->seq;
	if (c->prev)
		c->prev->next = c->next;
	else
		b->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		b->tail = c->prev;
	treap_remove(s, c);
	hmap_del(&b->index, chunk_key(s->producer_id, s->writer_id, c->hdr.chunk_id), NULL);
	b->used -= c->cost;
	rec_free(b, c);
}

int traced_buffer_copy_chunk(struct traced_buffer *b, uint16_t producer_id, uid_t uid, pid_t pid,
                             const struct tracing_chunk_header *h, const uint8_t *payload,
                             size_t len)
{
	size_t cost = TB_RECORD_HEADER + ((len + 15) & ~(size_t)15);
	struct tb_chunk *c, *old;
	struct tb_seq *s;
	uint64_t key = chunk_key(producer_id, h->writer_id, h->chunk_id);

	if ((old = hmap_get_ptr(&b->index, key))) {
		b->stats.chunks_rewritten++;
		chunk_remove(b, old);
	}
	if (cost > b->size || (b->discard && (b->full || b->used + cost > b->size))) {
		b->full = b->discard;
		b->stats.chunks_discarded++;
		return -ENOSPC;
	}
	while (b->used + cost > b->size && b->head) {
		b->stats.chunks_overwritten++;
		chunk_remove(b, b->head);
	}
	if (b->stats.bytes_written + cost > 0 &&
	    (b->stats.bytes_written % b->size) + cost > b->size)
		b->stats.write_wrap_count++;
	c = rec_alloc(b, sizeof *c + len);
	c->hdr = *h;
	c->len = len;
	c->cost = cost;
	memcpy(c->payload, payload, len);
	s = seq_get(b, producer_id, h->writer_id, uid, pid);
	c->seq = s;
	c->prev = b->tail;
	if (b->tail)
		b->tail->next = c;
	else
		b->head = c;
	b->tail = c;
	treap_insert(b, s, c);
	hmap_put_ptr(&b->index, key, c);
	b->used += cost;
	b->stats.bytes_written += cost;
	b->stats.chunks_written++;
	return 0;
}

int traced_buffer_patch(struct traced_buffer *b, uint16_t producer_id, uint16_t writer_id,
                        uint32_t chunk_id, uint32_t offset, const uint8_t *data, size_t len)
{
	struct tb_chunk *c = hmap_get_ptr(&b->index, chunk_key(producer_id, writer_id, chunk_id));
	if (!c || len != 4 || tracing_chunk_apply_patch(c->payload, c->len, offset, data, len)) {
		b->stats.patches_failed++;
		return c ? -EINVAL : -ENOENT;
	}
	b->stats.patches_succeeded++;
	return 0;
}

void traced_buffer_patch_done(struct traced_buffer *b, uint16_t producer_id, uint16_t writer_id,
                              uint32_t chunk_id)
{
	struct tb_chunk *c = hmap_get_ptr(&b->index, chunk_key(producer_id, writer_id, chunk_id));
	if (c)
		c->hdr.flags &= (uint8_t)~TRACING_CHUNK_NEEDS_PATCHING;
}

/* Top-level TracePacket fields only the service may write (compat §2.6). */
static bool reserved_field(uint32_t id)
{
	switch (id) {
	case PB_F_TracePacket_trusted_uid:
	case PB_F_TracePacket_trusted_packet_sequence_id:
	case PB_F_TracePacket_trace_config:
	case PB_F_TracePacket_trace_stats:
	case PB_F_TracePacket_synchronization_marker:
	case PB_F_TracePacket_compressed_packets:
	case PB_F_TracePacket_service_event:
	case PB_F_TracePacket_trusted_pid:
	case PB_F_TracePacket_machine_id:
	case PB_F_TracePacket_trace_provenance:
	case PB_F_TracePacket_protovms:
	case PB_F_TracePacket_zstd_compressed_packets:
		return true;
	default:
		return false;
	}
}

bool traced_packet_is_reserved(const uint8_t *data, size_t len)
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, data, len);
	while (pb_next(&r, &f))
		if (reserved_field(f.id))
			return true;
	return pb_reader_error(&r) != PB_OK;
}

struct read_ctx {
	struct traced_buffer *b;
	struct tb_seq *seq;
	traced_packet_fn cb;
	void *ctx;
	uint64_t *invalid;
};

static int on_packet(void *ctx, const uint8_t *data, size_t len, bool previous_dropped)
{
	struct read_ctx *rc = ctx;
	uint8_t trailer[40];
	struct pb_writer w;
	if (traced_packet_is_reserved(data, len)) {
		(*rc->invalid)++;
		return 0;
	}
	pb_writer_init_fixed(&w, trailer, sizeof trailer);
	pb_put_int32(&w, PB_F_TracePacket_trusted_uid, (int32_t)rc->seq->uid);
	pb_put_uint32(&w, PB_F_TracePacket_trusted_packet_sequence_id, rc->seq->seq_id);
	if (rc->seq->pid > 0)
		pb_put_int32(&w, PB_F_TracePacket_trusted_pid, (int32_t)rc->seq->pid);
	if (previous_dropped)
		pb_put_uint32(&w, PB_F_TracePacket_previous_packet_dropped, 1);
	TB_CHECK(pb_writer_error(&w) == 0);
	return rc->cb(rc->ctx, data, len, trailer, pb_writer_size(&w));
}

int traced_buffer_read_some(struct traced_buffer *b, traced_packet_fn cb, void *ctx,
                            uint64_t *invalid, size_t budget, bool *more)
{
	struct read_ctx rc = {b, NULL, cb, ctx, invalid};
	size_t done = 0;
	int ret = 0;
	*more = false;
	for (struct tb_seq *s = b->seq_list; s && !ret; s = s->next) {
		rc.seq = s;
		while (s->head && !(s->head->hdr.flags & TRACING_CHUNK_NEEDS_PATCHING)) {
			struct tb_chunk *c = s->head;
			uint64_t before = s->ra.stats.dropped_packets;
			if (done >= budget) {
				*more = true;
				return 0;
			}
			ret = tracing_reassembler_push(&s->ra, &c->hdr, c->payload, c->len,
			                               on_packet, &rc);
			if (ret == -EBADMSG) {
				b->stats.abi_violations++;
				ret = 0;
			}
			b->stats.packets_dropped += s->ra.stats.dropped_packets - before;
			b->stats.chunks_read++;
			b->stats.bytes_read += c->cost;
			done += c->cost;
			chunk_remove(b, c);
			if (ret)
				break;
		}
	}
	return ret;
}

int traced_buffer_read(struct traced_buffer *b, traced_packet_fn cb, void *ctx, uint64_t *invalid)
{
	bool more;
	return traced_buffer_read_some(b, cb, ctx, invalid, SIZE_MAX, &more);
}
