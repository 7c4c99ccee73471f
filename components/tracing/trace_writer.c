/*
 * The trace writer: one (writer_id, target_buffer) sequence of TracePackets
 * encoded with a pb_writer straight into SMB chunks.
 *
 * Each packet is a fragment: a 4-byte redundant varint size, then the bytes.
 * The pb_writer's span backend is this file's next_span(): when a chunk is
 * full in the middle of a packet it
 *   1. backfills the fragment header with the bytes written so far and sets
 *      LAST_CONTINUES on the chunk;
 *   2. redirects every open nested size that lies in the chunk to a patch
 *      slot of the writer (the chunk is about to belong to the service) and
 *      sets NEEDS_PATCHING;
 *   3. completes the chunk and reports it, with the patches that are ready;
 *   4. continues in a new chunk (chunk_id + 1, FIRST_CONTINUES, count 1).
 * A patch slot is ready once no open nested message points at it, i.e. once
 * pb_end_nested has written the final size into it.
 *
 * When no chunk is free the writer drops: the rest of the packet goes to a
 * scratch buffer, a fragment already in a returned chunk has its size
 * replaced by TRACING_PACKET_SIZE_DROP so the service discards it, and the
 * next packet that makes it into a chunk says previous_packet_dropped.
 */
#include "tracing_int.h"
#include "pb_fields.h"

#define MIN_PACKET_ROOM (TRACING_PACKET_HEADER_SIZE + 8)

static bool slot_is_open(const struct tracing_writer *tw, const struct patch_slot *s)
{
	for (unsigned i = 0; i < pb_writer_open_depth(&tw->pb); i++)
		if (tw->pb.nest[i].size_ptr == s->data)
			return true;
	return false;
}

/* Report the current chunk (if has_chunk) with every ready patch. */
static void commit(struct tracing_writer *tw, bool has_chunk)
{
	struct tracing_patch ready[PB_MAX_NESTING];
	struct tracing_commit c = {0};
	size_t n = 0;
	bool open[PB_MAX_NESTING];

	if (!has_chunk && tw->slots_used == 0)
		return; /* the common case: nothing to report, once per packet */
	for (unsigned i = 0; i < PB_MAX_NESTING; i++)
		open[i] = tw->slots[i].used && tw->in_packet && slot_is_open(tw, &tw->slots[i]);
	for (unsigned i = 0; i < PB_MAX_NESTING; i++) {
		struct patch_slot *s = &tw->slots[i];
		if (!s->used || open[i])
			continue;
		ready[n] = (struct tracing_patch){.target_buffer = tw->target_buffer,
		                                  .writer_id = tw->writer_id,
		                                  .chunk_id = s->chunk_id,
		                                  .offset = s->offset};
		memcpy(ready[n].data, s->data, 4);
		for (unsigned j = 0; j < PB_MAX_NESTING; j++)
			if (open[j] && tw->slots[j].chunk_id == s->chunk_id)
				ready[n].has_more = true;
		s->used = false;
		tw->slots_used--;
		n++;
	}
	if (!has_chunk && n == 0)
		return;
	if (has_chunk) {
		c.has_chunk = true;
		c.page = tw->chunk.page;
		c.chunk = tw->chunk.index;
		tw->stats.chunks_committed++;
	}
	c.target_buffer = tw->target_buffer;
	c.patches = ready;
	c.n_patches = n;
	tw->stats.patches_sent += n;
	tw->commit_cb(tw->ctx, &c);
}

/* Mark the current chunk Complete and report it. */
static void return_chunk(struct tracing_writer *tw)
{
	tracing_writer_publish_count(tw);
	TB_CHECK(tracing_chunk_complete(tw->smb, tw->chunk.page, tw->chunk.index) == 0);
	commit(tw, true);
	tw->have_chunk = false;
}

static uint8_t *chunk_end(const struct tracing_writer *tw)
{
	return tw->chunk.begin + tw->chunk.size;
}

static bool in_chunk(const struct tracing_writer *tw, const uint8_t *p)
{
	const uint8_t *lo = tracing_chunk_payload(&tw->chunk);
	return p && p >= lo && p + 4 <= chunk_end(tw);
}

static struct patch_slot *new_slot(struct tracing_writer *tw)
{
	for (unsigned i = 0; i < PB_MAX_NESTING; i++)
		if (!tw->slots[i].used) {
			tw->slots[i].used = true;
			tw->slots_used++;
			return &tw->slots[i];
		}
	/* At most one slot per open nesting level, and ready ones are sent at
	 * every chunk switch: running out is a bug. */
	TB_CHECK(!"out of patch slots");
	return NULL;
}

static void use_garbage(struct tracing_writer *tw)
{
	tw->pb.cur = tw->pb.span_start = tw->garbage;
	tw->pb.end = tw->garbage + TRACING_WRITER_GARBAGE_SIZE;
}

/* Switch to a new chunk, or to the garbage buffer when the SMB is full. The
 * pb_writer's cur/end are pointed at the new span. */
static void get_new_buffer(struct tracing_writer *tw)
{
	struct tracing_chunk_header h = {
	    .chunk_id = tw->next_chunk_id,
	    .writer_id = tw->writer_id,
	    .packet_count = tw->in_packet ? 1 : 0,
	    .flags = tw->in_packet ? TRACING_CHUNK_FIRST_CONTINUES : 0,
	};
	struct tracing_chunk next;
	uint8_t *p;

	if (tw->in_packet && tw->dropping) {
		use_garbage(tw); /* wrap around until the packet ends */
		return;
	}
	if (tracing_smb_get_new_chunk(tw->smb, &h, &next) != 0) {
		tw->stats.exhausted++;
		if (tw->in_packet) {
			/* The fragment in the current chunk must be thrown
			 * away by the service; no patches for it. */
			if (tw->frag_hdr)
				pb_write_redundant_varint4(tw->frag_hdr, TRACING_PACKET_SIZE_DROP);
			tw->frag_hdr = NULL;
			for (unsigned i = 0; i < pb_writer_open_depth(&tw->pb); i++)
				if (tw->have_chunk && in_chunk(tw, tw->pb.nest[i].size_ptr))
					tw->pb.nest[i].size_ptr = NULL;
			tw->stats.packets_dropped++;
		}
		if (tw->have_chunk)
			return_chunk(tw);
		tw->dropping = true;
		tw->reached_max = false;
		use_garbage(tw);
		return;
	}

	if (tw->in_packet && tw->have_chunk) {
		bool needs_patching = false;
		pb_write_redundant_varint4(tw->frag_hdr, (uint32_t)(tw->pb.cur - tw->frag_start));
		tw->chunk_flags |= TRACING_CHUNK_LAST_CONTINUES;
		for (unsigned i = 0; i < pb_writer_open_depth(&tw->pb); i++) {
			uint8_t *sp = tw->pb.nest[i].size_ptr;
			struct patch_slot *s;
			if (!in_chunk(tw, sp))
				continue;
			s = new_slot(tw);
			s->chunk_id = tw->next_chunk_id - 1;
			s->offset = (uint32_t)(sp - tracing_chunk_payload(&tw->chunk));
			memcpy(s->data, sp, 4);
			tw->pb.nest[i].size_ptr = s->data;
			needs_patching = true;
		}
		if (needs_patching)
			tw->chunk_flags |= TRACING_CHUNK_NEEDS_PATCHING;
	}
	if (tw->have_chunk)
		return_chunk(tw);

	tw->dropping = false;
	tw->reached_max = false;
	tw->next_chunk_id++;
	tw->chunk = next;
	tw->have_chunk = true;
	tw->packet_count = h.packet_count;
	tw->chunk_flags = h.flags;
	p = tracing_chunk_payload(&next);
	if (tw->in_packet) {
		tw->frag_hdr = p;
		pb_write_redundant_varint4(p, 0);
		p += TRACING_PACKET_HEADER_SIZE;
		tw->frag_start = p;
	}
	tw->pb.cur = tw->pb.span_start = p;
	tw->pb.end = chunk_end(tw);
}

static int next_span(struct pb_writer *w, size_t need)
{
	struct tracing_writer *tw = w->ctx;
	get_new_buffer(tw);
	return (size_t)(w->end - w->cur) >= need ? 0 : -ENOSPC;
}

struct tracing_writer *tracing_writer_new(struct tracing_smb *smb, uint16_t writer_id,
                                          uint32_t target_buffer, tracing_commit_fn commit_cb,
                                          void *ctx)
{
	struct tracing_writer *tw;
	TB_CHECK(writer_id >= 1 && writer_id <= TRACING_MAX_WRITER_ID);
	TB_CHECK(commit_cb);
	tw = tb_calloc(1, sizeof *tw);
	tw->smb = smb;
	tw->writer_id = writer_id;
	tw->target_buffer = target_buffer;
	tw->commit_cb = commit_cb;
	tw->ctx = ctx;
	pb_writer_init_spans(&tw->pb, next_span, tw);
	return tw;
}

void tracing_writer_free(struct tracing_writer *tw)
{
	if (!tw)
		return;
	if (tw->in_packet) {
		while (tw->pb.depth)
			pb_end_nested(&tw->pb, tw->pb.depth - 1);
		tracing_writer_end_packet(tw);
	}
	tracing_writer_flush(tw);
	pb_writer_release(&tw->pb);
	tb_free(tw);
}

struct pb_writer *tracing_writer_begin_packet(struct tracing_writer *tw)
{
	bool was_dropping = tw->dropping;
	uint8_t *cur = tw->pb.cur, *end = tw->pb.end;

	TB_CHECK(!tw->in_packet);
	/* A fresh packet on the same span backend: what pb_writer_init_spans
	 * would reset, without clearing the whole nesting array each time. */
	tw->pb.base = 0;
	tw->pb.error = 0;
	tw->pb.depth = 0;
	if (!tw->have_chunk || tw->dropping || tw->reached_max ||
	    (size_t)(end - cur) < MIN_PACKET_ROOM) {
		get_new_buffer(tw);
	} else {
		tw->pb.cur = tw->pb.span_start = cur;
		tw->pb.end = end;
	}
	/* Patches left over from the previous packet are complete now. */
	if (tw->slots_used)
		commit(tw, false);

	tw->frag_hdr = tw->dropping ? NULL : tw->pb.cur;
	pb_write_redundant_varint4(tw->pb.cur, 0);
	tw->pb.cur += TRACING_PACKET_HEADER_SIZE;
	tw->pb.span_start = tw->frag_start = tw->pb.cur;
	tw->in_packet = true;
	if (tw->dropping) {
		tw->stats.packets_dropped++;
	} else {
		tw->packet_count++;
		tw->reached_max = tw->packet_count == TRACING_MAX_PACKET_COUNT;
		tracing_writer_publish_count(tw);
		if (was_dropping)
			pb_put_varint(&tw->pb, PB_F_TracePacket_previous_packet_dropped, 1);
	}
	return &tw->pb;
}

int tracing_writer_end_packet(struct tracing_writer *tw)
{
	int rc = pb_writer_error(&tw->pb);
	TB_CHECK(tw->in_packet);
	TB_CHECK(tw->pb.depth == 0);
	if (tw->frag_hdr && !tw->dropping) {
		pb_write_redundant_varint4(tw->frag_hdr, (uint32_t)(tw->pb.cur - tw->frag_start));
		tw->stats.packets_written++;
	}
	if (rc)
		tw->stats.errors++;
	tw->frag_hdr = NULL;
	tw->in_packet = false;
	return rc;
}

void tracing_writer_flush(struct tracing_writer *tw)
{
	TB_CHECK(!tw->in_packet);
	if (tw->have_chunk)
		return_chunk(tw);
	else
		commit(tw, false);
	tw->pb.cur = tw->pb.end = tw->pb.span_start = NULL;
}

uint16_t tracing_writer_id(const struct tracing_writer *tw)
{
	return tw->writer_id;
}

const struct tracing_writer_stats *tracing_writer_stats(const struct tracing_writer *tw)
{
	return &tw->stats;
}
