/*
 * The service side of the SMB: walking the fragments of a chunk that was
 * copied out of shared memory, applying out-of-band patches, and stitching
 * the fragments of one writer's consecutive chunks into whole packets.
 *
 * The bytes come from another process and are hostile: a fragment size is
 * a varint read within the payload bound and must fit in what is left of
 * the payload; a chunk that lies about its packet count or sizes ends early
 * with -EBADMSG and whatever packet it was building is dropped. Nothing here
 * knows about ring buffers, sessions or read order beyond "consecutive".
 */
#include "tracing_int.h"

void tracing_chunk_iter_init(struct tracing_chunk_iter *it, const struct tracing_chunk_header *h,
                             const uint8_t *payload, size_t size)
{
	it->payload = payload;
	it->size = size;
	it->off = 0;
	it->index = 0;
	it->count = h->packet_count;
	it->flags = h->flags;
	it->error = 0;
}

bool tracing_chunk_iter_next(struct tracing_chunk_iter *it, struct tracing_fragment *f)
{
	const uint8_t *p, *end, *q;
	uint64_t len;
	if (it->error || it->index >= it->count)
		return false;
	p = it->payload + it->off;
	end = it->payload + it->size;
	q = it->size ? pb_read_varint(p, end, &len) : NULL;
	if (!q) {
		it->error = -EBADMSG;
		return false;
	}
	memset(f, 0, sizeof *f);
	f->continues_from_prev = it->index == 0 && (it->flags & TRACING_CHUNK_FIRST_CONTINUES);
	f->continues_on_next =
	    it->index + 1 == it->count && (it->flags & TRACING_CHUNK_LAST_CONTINUES);
	f->offset = (uint32_t)(q - it->payload);
	f->data = q;
	if (len == TRACING_PACKET_SIZE_DROP) {
		/* Nothing after a drop marker is meaningful. */
		f->drop = true;
		it->index = it->count;
		return true;
	}
	if (len > (uint64_t)(end - q)) {
		it->error = -EBADMSG;
		return false;
	}
	f->len = (size_t)len;
	it->off = (size_t)(q - it->payload) + f->len;
	it->index++;
	return true;
}

int tracing_chunk_apply_patch(uint8_t *payload, size_t size, uint32_t offset, const uint8_t *data,
                              size_t len)
{
	if (len != 4 || offset > size || size - offset < len)
		return -EINVAL;
	memcpy(payload + offset, data, len);
	return 0;
}

/* ---- reassembly ---------------------------------------------------------- */

void tracing_reassembler_init(struct tracing_reassembler *r)
{
	memset(r, 0, sizeof *r);
	r->max_packet_size = TRACING_MAX_PACKET_SIZE;
}

void tracing_reassembler_release(struct tracing_reassembler *r)
{
	vec_release(&r->partial);
	tracing_reassembler_init(r);
}

static void drop_partial(struct tracing_reassembler *r)
{
	if (r->have_partial || r->discarding) {
		r->stats.dropped_packets++;
		r->prev_dropped = true;
	}
	vec_clear(&r->partial);
	r->have_partial = false;
	r->discarding = false;
}

static void append(struct tracing_reassembler *r, const uint8_t *p, size_t n)
{
	if (r->discarding)
		return;
	if (n > r->max_packet_size || r->partial.len > r->max_packet_size - n ||
	    vec_try_reserve(&r->partial, n)) {
		/* Keep swallowing fragments until the packet ends. */
		r->stats.oversized++;
		vec_clear(&r->partial);
		r->have_partial = false;
		r->discarding = true;
		return;
	}
	if (n)
		memcpy(r->partial.data + r->partial.len, p, n);
	r->partial.len += n;
	r->have_partial = true;
}

static int deliver(struct tracing_reassembler *r, const uint8_t *p, size_t n, tracing_packet_fn cb,
                   void *ctx)
{
	bool prev = r->prev_dropped;
	if (n == 0) {
		r->stats.empty_packets++;
		return 0;
	}
	r->prev_dropped = false;
	r->stats.packets++;
	return cb(ctx, p, n, prev);
}

int tracing_reassembler_push(struct tracing_reassembler *r, const struct tracing_chunk_header *h,
                             const uint8_t *payload, size_t size, tracing_packet_fn cb, void *ctx)
{
	struct tracing_chunk_iter it;
	struct tracing_fragment f;
	int rc = 0;

	r->stats.chunks++;
	if (r->have_last && h->chunk_id != r->last_chunk_id + 1) {
		r->stats.chunk_gaps++;
		drop_partial(r);
		r->prev_dropped = true;
	} else if (!r->have_last && (h->flags & TRACING_CHUNK_FIRST_CONTINUES)) {
		r->prev_dropped = true;
	}
	r->have_last = true;
	r->last_chunk_id = h->chunk_id;

	tracing_chunk_iter_init(&it, h, payload, size);
	while (rc == 0 && tracing_chunk_iter_next(&it, &f)) {
		bool open = r->have_partial || r->discarding;
		r->stats.fragments++;
		if (f.drop) {
			r->stats.drop_markers++;
			if (!open) {
				r->stats.dropped_packets++;
				r->prev_dropped = true;
			}
			drop_partial(r);
			break;
		}
		if (f.continues_from_prev) {
			if (!open) {
				/* Its beginning is gone: skip, and if it does
				 * not end here, what follows too. */
				r->prev_dropped = true;
				if (f.continues_on_next)
					r->discarding = true;
				else
					r->stats.dropped_packets++;
				continue;
			}
		} else if (open) {
			/* The previous chunk promised a continuation that
			 * this chunk does not carry. */
			drop_partial(r);
		}
		if (f.continues_on_next) {
			append(r, f.data, f.len);
			continue;
		}
		if (r->discarding) {
			drop_partial(r);
			continue;
		}
		if (r->have_partial) {
			append(r, f.data, f.len);
			if (r->discarding) {
				drop_partial(r);
				continue;
			}
			rc = deliver(r, r->partial.data, r->partial.len, cb, ctx);
			vec_clear(&r->partial);
			r->have_partial = false;
		} else {
			rc = deliver(r, f.data, f.len, cb, ctx);
		}
	}
	if (rc)
		return rc;
	if (it.error) {
		r->stats.bad_chunks++;
		drop_partial(r);
		return it.error;
	}
	return 0;
}
