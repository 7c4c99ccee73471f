/*
 * Commit batching: the producer client collects what its writers report
 * (completed chunks and ready patches) and sends them as one
 * CommitDataRequest. Encoding goes through protobuf-c: the message is small
 * and its layout is not on a hot path.
 */
#include "tracing_int.h"

typedef Perfetto__Protos__CommitDataRequest Req;
typedef Perfetto__Protos__CommitDataRequest__ChunksToMove Move;
typedef Perfetto__Protos__CommitDataRequest__ChunkToPatch ToPatch;
typedef Perfetto__Protos__CommitDataRequest__ChunkToPatch__Patch Patch;

void tracing_commit_batch_init(struct tracing_commit_batch *b)
{
	memset(b, 0, sizeof *b);
}

void tracing_commit_batch_release(struct tracing_commit_batch *b)
{
	vec_release(&b->chunks);
	vec_release(&b->patches);
}

void tracing_commit_batch_clear(struct tracing_commit_batch *b)
{
	vec_clear(&b->chunks);
	vec_clear(&b->patches);
}

void tracing_commit_batch_add(void *batch, const struct tracing_commit *c)
{
	struct tracing_commit_batch *b = batch;
	if (c->has_chunk) {
		struct tracing_commit copy = *c;
		copy.patches = NULL;
		copy.n_patches = 0;
		vec_push(&b->chunks, copy);
	}
	for (size_t i = 0; i < c->n_patches; i++)
		vec_push(&b->patches, c->patches[i]);
}

static bool same_chunk(const struct tracing_patch *a, const struct tracing_patch *b)
{
	return a->target_buffer == b->target_buffer && a->writer_id == b->writer_id &&
	       a->chunk_id == b->chunk_id;
}

int tracing_commit_batch_encode(const struct tracing_commit_batch *b, uint64_t flush_request_id,
                                uint8_t **out, size_t *len)
{
	size_t nc = b->chunks.len, np = b->patches.len, ng = 0;
	Req req = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__INIT;
	Move *moves = tb_calloc(nc ? nc : 1, sizeof *moves);
	Move **move_ptrs = tb_calloc(nc ? nc : 1, sizeof *move_ptrs);
	ToPatch *groups = tb_calloc(np ? np : 1, sizeof *groups);
	ToPatch **group_ptrs = tb_calloc(np ? np : 1, sizeof *group_ptrs);
	Patch *patches = tb_calloc(np ? np : 1, sizeof *patches);
	Patch **patch_ptrs = tb_calloc(np ? np : 1, sizeof *patch_ptrs);

	for (size_t i = 0; i < nc; i++) {
		Move m = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNKS_TO_MOVE__INIT;
		m.has_page = m.has_chunk = m.has_target_buffer = 1;
		m.page = b->chunks.data[i].page;
		m.chunk = b->chunks.data[i].chunk;
		m.target_buffer = b->chunks.data[i].target_buffer;
		moves[i] = m;
		move_ptrs[i] = &moves[i];
	}
	for (size_t i = 0; i < np; i++) {
		const struct tracing_patch *p = &b->patches.data[i];
		Patch pp = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNK_TO_PATCH__PATCH__INIT;
		ToPatch *g;
		pp.has_offset = pp.has_data = 1;
		pp.offset = p->offset;
		pp.data.data = (uint8_t *)p->data;
		pp.data.len = 4;
		patches[i] = pp;
		patch_ptrs[i] = &patches[i];
		if (i == 0 || !same_chunk(p, &b->patches.data[i - 1])) {
			ToPatch t = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNK_TO_PATCH__INIT;
			t.has_target_buffer = t.has_writer_id = t.has_chunk_id = 1;
			t.target_buffer = p->target_buffer;
			t.writer_id = p->writer_id;
			t.chunk_id = p->chunk_id;
			t.patches = &patch_ptrs[i];
			groups[ng] = t;
			group_ptrs[ng] = &groups[ng];
			ng++;
		}
		g = &groups[ng - 1];
		g->n_patches++;
		/* The last patch of a group decides. */
		g->has_has_more_patches = p->has_more;
		g->has_more_patches = p->has_more;
	}
	req.n_chunks_to_move = nc;
	req.chunks_to_move = move_ptrs;
	req.n_chunks_to_patch = ng;
	req.chunks_to_patch = group_ptrs;
	if (flush_request_id) {
		req.has_flush_request_id = 1;
		req.flush_request_id = flush_request_id;
	}
	*len = perfetto__protos__commit_data_request__get_packed_size(&req);
	*out = tb_malloc(*len ? *len : 1);
	perfetto__protos__commit_data_request__pack(&req, *out);
	tb_free(moves);
	tb_free(move_ptrs);
	tb_free(groups);
	tb_free(group_ptrs);
	tb_free(patches);
	tb_free(patch_ptrs);
	return 0;
}
