/*
 * Private declarations shared by the files of components/tracing.
 */
#ifndef TB_TRACING_INT_H
#define TB_TRACING_INT_H

#include <stdatomic.h>

#include "pb.h"
#include "tracing.h"

struct tracing_smb {
	uint8_t *base;
	size_t size, page_size, num_pages;
	int fd;          /* -1 for wrapped memory */
	bool mapped;     /* base came from mmap and is unmapped on free */
	unsigned layout; /* default layout for new partitions */
	size_t cursor;   /* page to start the next free-chunk search at */
};

/* ---- the trace writer (trace_writer.c) ---------------------------------- */

#define TRACING_WRITER_GARBAGE_SIZE 1024

/* A nested size that lay in a chunk already handed to the service: written
 * here and sent as a patch of (chunk_id, offset) once final. */
struct patch_slot {
	bool used;
	uint32_t chunk_id;
	uint32_t offset;
	uint8_t data[4];
};

struct tracing_writer {
	struct tracing_smb *smb;
	uint16_t writer_id;
	uint32_t target_buffer;
	tracing_commit_fn commit_cb;
	void *ctx;

	struct tracing_chunk chunk; /* current chunk, when have_chunk */
	bool have_chunk;
	uint32_t next_chunk_id;
	uint16_t packet_count; /* of the current chunk */
	uint8_t chunk_flags;

	struct pb_writer pb; /* between packets, pb.cur/pb.end: the chunk's free room */
	bool in_packet;      /* between begin and end: fragmenting */
	bool dropping;       /* writing to garbage */
	bool reached_max;    /* packet count limit hit: next packet, new chunk */
	uint8_t *frag_hdr;   /* current fragment's size field in the chunk, or NULL */
	uint8_t *frag_start;

	struct patch_slot slots[PB_MAX_NESTING];
	unsigned slots_used; /* slots[] entries in use: commit's fast path */
	struct tracing_writer_stats stats;
	uint8_t garbage[TRACING_WRITER_GARBAGE_SIZE];
};

/* Store the chunk header's packets word (count and flags) for the service. */
static inline void tracing_writer_publish_count(struct tracing_writer *tw)
{
	uint16_t v = (uint16_t)((tw->packet_count & 0x3ff) | (uint16_t)(tw->chunk_flags << 10));
	atomic_store_explicit((_Atomic uint16_t *)(tw->chunk.begin + 6), v, memory_order_release);
}

/*
 * Fast path for small packets written whole by the caller (TrackEvent): when
 * the current chunk has room for a fragment of up to max_payload bytes and
 * nothing else is pending (no drop, no patch to send, packet count below the
 * limit), the address where the payload goes; else NULL and the caller uses
 * tracing_writer_begin_packet. The caller encodes the payload from there and
 * passes its end to tracing_writer_fast_end. The bytes are the same as
 * through begin/end_packet: a 4-byte fragment size, then the packet.
 */
static inline uint8_t *tracing_writer_fast_begin(struct tracing_writer *tw, size_t max_payload)
{
	/* in_packet: a misuse, which begin_packet's check reports. */
	if (TB_UNLIKELY(!tw->have_chunk || tw->in_packet || tw->dropping || tw->reached_max ||
	                tw->slots_used ||
	                (size_t)(tw->pb.end - tw->pb.cur) <
	                    TRACING_PACKET_HEADER_SIZE + max_payload))
		return NULL;
	return tw->pb.cur + TRACING_PACKET_HEADER_SIZE;
}

/* Close the packet begun by tracing_writer_fast_begin, its payload ending
 * at end. The packet is counted in the chunk header only now, whole. */
static inline void tracing_writer_fast_end(struct tracing_writer *tw, uint8_t *end)
{
	uint8_t *hdr = tw->pb.cur;
	pb_write_redundant_varint4(hdr, (uint32_t)(end - hdr - TRACING_PACKET_HEADER_SIZE));
	tw->pb.cur = end;
	tw->packet_count++;
	tw->reached_max = tw->packet_count == TRACING_MAX_PACKET_COUNT;
	tw->stats.packets_written++;
	tracing_writer_publish_count(tw);
}

#endif /* TB_TRACING_INT_H */
