/*
 * tracing: Perfetto's shared memory buffer (SMB) ABI, the producer-side trace
 * writer that fills it, and the service-side chunk reader that gets packets
 * back out of it, and the producer client library (producer.c) that traced_
 * probes, traced_perf and tests use to talk to a service.
 *
 * One concern per file:
 *
 *   smb.c           create/adopt/unmap an SMB; page header bitmap and chunk
 *                   state machine (C11 atomics, the only cross-process
 *                   concurrency in the system); chunk header layout.
 *   trace_writer.c  one (writer_id, target_buffer) sequence of TracePackets
 *                   written through a pb_writer straight into SMB chunks,
 *                   fragmenting packets across chunks and sending nested
 *                   sizes that land in returned chunks as out-of-band patches.
 *   chunk_reader.c  the service side: iterate the fragments of a chunk copied
 *                   out of the SMB (hostile bytes), apply patches, and stitch
 *                   fragments of one writer's consecutive chunks into packets.
 *   commit.c        batch commits into a CommitDataRequest.
 *   producer.c      the producer client library: ProducerPort over ipc,
 *                   SMB adoption, writers and commit batching.
 *
 * Everything here is single-threaded per object except the page bitmap and
 * chunk header fields, which another process may touch concurrently. The
 * layouts are in README.md. All multi-byte fields are little-endian; this
 * code assumes a little-endian host (checked at compile time).
 */
#ifndef TB_TRACING_H
#define TB_TRACING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "pb.h"
#include "protos.h"

/* ---- ABI constants (shared_memory_abi.h) --------------------------------- */

#define TRACING_PAGE_HEADER_SIZE 8
#define TRACING_CHUNK_HEADER_SIZE 8
#define TRACING_PACKET_HEADER_SIZE 4 /* 4-byte redundant varint */
#define TRACING_MAX_CHUNKS_PER_PAGE 14
#define TRACING_MIN_PAGE_SIZE 4096
#define TRACING_MAX_PAGE_SIZE 32768      /* what the service's buffers accept */
#define TRACING_MAX_SMB_SIZE (32u << 20) /* 32 MiB */
#define TRACING_DEFAULT_SMB_SIZE (256u << 10)
#define TRACING_DEFAULT_PAGE_SIZE 4096
#define TRACING_MAX_WRITER_ID 32767          /* writer ids are 1..2^15-1 */
#define TRACING_MAX_PACKET_COUNT 1023        /* 10 bits of ChunkHeader.packets */
#define TRACING_PACKET_SIZE_DROP 0x0FFFFFFFu /* fragment size: discard packet */
#define TRACING_CAS_RETRIES 64

/* Page layouts: bits [30:28] of the page header bitmap. */
enum tracing_page_layout {
	TRACING_LAYOUT_NOT_PARTITIONED = 0,
	TRACING_LAYOUT_DIV1 = 1,
	TRACING_LAYOUT_DIV2 = 2,
	TRACING_LAYOUT_DIV4 = 3,
	TRACING_LAYOUT_DIV7 = 4,
	TRACING_LAYOUT_DIV14 = 5,
	/* 6 and 7 are reserved and treated as invalid. */
};

/* Chunk states: 2 bits per chunk in the page header bitmap. */
enum tracing_chunk_state {
	TRACING_CHUNK_FREE = 0,
	TRACING_CHUNK_BEING_WRITTEN = 1,
	TRACING_CHUNK_BEING_READ = 2,
	TRACING_CHUNK_COMPLETE = 3,
};

/* ChunkHeader.packets flags (the top 6 bits). */
enum {
	TRACING_CHUNK_FIRST_CONTINUES = 1 << 0, /* kFirstPacketContinuesFromPrevChunk */
	TRACING_CHUNK_LAST_CONTINUES = 1 << 1,  /* kLastPacketContinuesOnNextChunk */
	TRACING_CHUNK_NEEDS_PATCHING = 1 << 2,  /* kChunkNeedsPatching */
};

/* Number of chunks of a layout (0 for NOT_PARTITIONED and reserved values). */
unsigned tracing_layout_num_chunks(unsigned layout);

/* Size of each chunk of a layout in a page of page_size bytes, chunk header
 * included: ((page_size - 8) / n) & ~3; 0 when the layout has no chunks. */
size_t tracing_layout_chunk_size(size_t page_size, unsigned layout);

/* ---- chunk header -------------------------------------------------------- */

/* The decoded 8-byte chunk header:
 *   u32 chunk_id | u16 writer_id | u16 packets (count:10 low bits, flags:6). */
struct tracing_chunk_header {
	uint32_t chunk_id;
	uint16_t writer_id;
	uint16_t packet_count; /* 0..1023 */
	uint8_t flags;         /* TRACING_CHUNK_* */
};

/* Encode h into out[0..8) (little-endian; count and flags truncated to their
 * widths). Pure. */
void tracing_chunk_header_encode(uint8_t out[TRACING_CHUNK_HEADER_SIZE],
                                 const struct tracing_chunk_header *h);

/* Decode in[0..8). Any bytes decode; callers validate writer_id etc. Pure. */
void tracing_chunk_header_decode(const uint8_t in[TRACING_CHUNK_HEADER_SIZE],
                                 struct tracing_chunk_header *h);

/* ---- the shared memory buffer (smb.c) ------------------------------------ */

struct tracing_smb; /* opaque */

/* One chunk of an SMB: where it is and how big (header included). Valid while
 * the SMB is mapped; the state machine says who may touch its bytes. */
struct tracing_chunk {
	uint8_t *begin; /* the chunk header */
	size_t size;    /* header + payload */
	uint32_t page;
	uint32_t index; /* within the page, 0..13 */
};

static inline uint8_t *tracing_chunk_payload(const struct tracing_chunk *c)
{
	return c->begin + TRACING_CHUNK_HEADER_SIZE;
}
static inline size_t tracing_chunk_payload_size(const struct tracing_chunk *c)
{
	return c->size - TRACING_CHUNK_HEADER_SIZE;
}

/* 0 if size and page_size form a valid SMB geometry: page_size is 4 KiB
 * times a power of two up to TRACING_MAX_PAGE_SIZE, size a non-zero multiple
 * of it up to TRACING_MAX_SMB_SIZE. Otherwise -EINVAL, recorded in err. */
int tracing_smb_check_geometry(size_t size, size_t page_size, struct tb_err *err);

/* Create a zeroed SMB: a memfd "perfetto_shmem" (close-on-exec, sealed
 * against shrink/grow/further sealing) or, where memfd is unavailable, an
 * unlinked temporary file; mapped shared read-write. Returns 0 and a handle
 * in *out that owns the fd and the mapping, or a negative errno with a
 * message in err. Any thread; the handle then belongs to one thread. */
int tracing_smb_create(size_t size, size_t page_size, struct tracing_smb **out, struct tb_err *err);

/* Map an SMB received over IPC. The size is the file's size and must pass
 * tracing_smb_check_geometry with page_size. With require_seals (the service
 * adopting producer-provided memory) the fd must carry F_SEAL_SHRINK,
 * F_SEAL_GROW and F_SEAL_SEAL. On success the handle owns fd (closed by
 * tracing_smb_free); on failure fd is still the caller's. */
int tracing_smb_adopt(int fd, size_t page_size, bool require_seals, struct tracing_smb **out,
                      struct tb_err *err);

/* View caller memory (size bytes at mem, 4-byte aligned, a multiple of
 * page_size) as an SMB without owning it: for tests, fuzzers and shmem
 * emulation. Geometry is checked as for create except the total size cap.
 * mem is borrowed and must outlive the handle. */
int tracing_smb_wrap(void *mem, size_t size, size_t page_size, struct tracing_smb **out,
                     struct tb_err *err);

/* Unmap, close the fd if owned and free the handle. NULL is a no-op. */
void tracing_smb_free(struct tracing_smb *smb);

/* Accessors. The fd is -1 for wrapped memory; it stays owned by the SMB. */
int tracing_smb_fd(const struct tracing_smb *smb);
uint8_t *tracing_smb_base(const struct tracing_smb *smb);
size_t tracing_smb_size(const struct tracing_smb *smb);
size_t tracing_smb_page_size(const struct tracing_smb *smb);
size_t tracing_smb_num_pages(const struct tracing_smb *smb);
/* Bytes of smb in free chunks (pages not partitioned yet count whole): what
 * writers can still fill before the service takes committed chunks. A
 * snapshot, as writers and the service change it concurrently. Any thread. */
size_t tracing_smb_free_bytes(const struct tracing_smb *smb);

/* Layout the producer uses when it partitions a free page for a new chunk
 * (default TRACING_LAYOUT_DIV1, as Perfetto's arbiter). */
void tracing_smb_set_default_layout(struct tracing_smb *smb, unsigned layout);

/* ---- page and chunk state machine (smb.c) -------------------------------- */

/* The page header bitmap of page (acquire load), or 0 if page is out of
 * range. */
uint32_t tracing_page_bitmap(const struct tracing_smb *smb, uint32_t page);

/* Producer: partition a free page (bitmap 0) into `layout` by CAS. 0 on
 * success, -EBUSY if the page is not free, -EINVAL for a bad page or layout. */
int tracing_page_partition(struct tracing_smb *smb, uint32_t page, unsigned layout);

/* Locate chunk `index` of a partitioned page, validating the page index, the
 * layout in the bitmap and the chunk index (hostile memory: never crashes).
 * 0 and *out, or -EINVAL. Does not look at or change the state. */
int tracing_chunk_at(const struct tracing_smb *smb, uint32_t page, uint32_t index,
                     struct tracing_chunk *out);

/* The state of a chunk, or -EINVAL if it does not exist. */
int tracing_chunk_state(const struct tracing_smb *smb, uint32_t page, uint32_t index);

/* Producer: Free -> BeingWritten, then write h into the chunk header.
 * 0 and *out; -EBUSY if the chunk is not free; -EINVAL if it does not exist;
 * -EAGAIN if 64 CAS attempts lost races. */
int tracing_chunk_acquire_for_writing(struct tracing_smb *smb, uint32_t page, uint32_t index,
                                      const struct tracing_chunk_header *h,
                                      struct tracing_chunk *out);

/* Producer: BeingWritten -> Complete (release order: the chunk's bytes are
 * visible before the state). Errors as above (-EBUSY: not BeingWritten). */
int tracing_chunk_complete(struct tracing_smb *smb, uint32_t page, uint32_t index);

/* Service: Complete -> BeingRead; fills *out. Errors as above. */
int tracing_chunk_acquire_for_reading(struct tracing_smb *smb, uint32_t page, uint32_t index,
                                      struct tracing_chunk *out);

/* Service: BeingRead -> Free (or, with from_complete, Complete -> Free as a
 * shmem-emulation producer does). When every chunk of the page is then free,
 * the whole bitmap is reset to 0 (page not partitioned). Errors as above. */
int tracing_chunk_release(struct tracing_smb *smb, uint32_t page, uint32_t index,
                          bool from_complete);

/* Producer: find and acquire a free chunk anywhere in the SMB, partitioning
 * free pages with the default layout as needed, starting after the last page
 * used. 0 and *out, or -ENOSPC when the SMB is exhausted. */
int tracing_smb_get_new_chunk(struct tracing_smb *smb, const struct tracing_chunk_header *h,
                              struct tracing_chunk *out);

/* Read the header of a chunk in the SMB (the packets field with an acquire
 * load, since the producer updates it while writing). */
void tracing_chunk_read_header(const struct tracing_chunk *c, struct tracing_chunk_header *h);

/* Service: the whole CommitData path for one chunk: validate, Complete ->
 * BeingRead, copy header and payload out (payload into buf, cap >= the
 * chunk's payload size, *len set), release to Free. A writer_id of 0 or above
 * TRACING_MAX_WRITER_ID is -EBADMSG (the chunk is still released). */
int tracing_smb_read_chunk(struct tracing_smb *smb, uint32_t page, uint32_t index,
                           struct tracing_chunk_header *h, uint8_t *buf, size_t cap, size_t *len);

/* ---- producer: commits and patches --------------------------------------- */

/* A nested size that lives in a chunk already handed to the service: 4 bytes
 * to write at `offset` of that chunk's payload. has_more: more patches for
 * the same chunk are still to come. */
struct tracing_patch {
	uint32_t target_buffer;
	uint16_t writer_id;
	uint32_t chunk_id;
	uint32_t offset;
	uint8_t data[4];
	bool has_more;
};

/* What a writer reports: an optional completed chunk to move, plus patches
 * that became ready. Pointers are borrowed for the duration of the call. */
struct tracing_commit {
	bool has_chunk;
	uint32_t page, chunk, target_buffer;
	const struct tracing_patch *patches;
	size_t n_patches;
};

typedef void (*tracing_commit_fn)(void *ctx, const struct tracing_commit *c);

/* Accumulates commits of any number of writers for one CommitDataRequest.
 * Embed it; init/release. Not thread-safe. */
struct tracing_commit_batch {
	VEC(struct tracing_commit) chunks; /* patches field unused */
	VEC(struct tracing_patch) patches;
};

void tracing_commit_batch_init(struct tracing_commit_batch *b);
void tracing_commit_batch_release(struct tracing_commit_batch *b);
void tracing_commit_batch_clear(struct tracing_commit_batch *b);
static inline bool tracing_commit_batch_empty(const struct tracing_commit_batch *b)
{
	return b->chunks.len == 0 && b->patches.len == 0;
}

/* A tracing_commit_fn: append c to the batch passed as ctx (copies). */
void tracing_commit_batch_add(void *batch, const struct tracing_commit *c);

/* Serialize the batch as a CommitDataRequest (chunks_to_move in order, then
 * chunks_to_patch grouping consecutive patches of one (buffer, writer, chunk);
 * flush_request_id if non-zero). Returns 0 and a tb_malloc'd buffer in *out
 * (caller frees) with its length in *len. The batch is left as is. */
int tracing_commit_batch_encode(const struct tracing_commit_batch *b, uint64_t flush_request_id,
                                uint8_t **out, size_t *len);

/* ---- producer: the trace writer (trace_writer.c) ------------------------- */

struct tracing_writer; /* opaque */

struct tracing_writer_stats {
	uint64_t packets_written; /* ended in SMB chunks */
	uint64_t packets_dropped; /* lost to SMB exhaustion */
	uint64_t chunks_committed;
	uint64_t patches_sent;
	uint64_t exhausted; /* times no chunk was available */
	uint64_t errors;    /* packets whose pb_writer recorded an error */
};

/* A writer for one (writer_id 1..32767, target_buffer) sequence in smb
 * (borrowed; must outlive the writer). Completed chunks and ready patches go
 * to commit_cb(ctx, ...) synchronously, from inside begin/end/flush calls.
 * Chunk ids start at 0. Never NULL. One thread (the producer's loop). */
struct tracing_writer *tracing_writer_new(struct tracing_smb *smb, uint16_t writer_id,
                                          uint32_t target_buffer, tracing_commit_fn commit_cb,
                                          void *ctx);

/* Flush (ending an open packet first) and free. NULL is a no-op. */
void tracing_writer_free(struct tracing_writer *tw);

/* Start a TracePacket and return the pb_writer to encode its fields into
 * (borrowed, valid until tracing_writer_end_packet). Never fails: when the
 * SMB is exhausted the packet goes to a scratch buffer and is counted as
 * dropped, and the first packet written after recovery carries
 * previous_packet_dropped = true. A packet must not already be open. */
struct pb_writer *tracing_writer_begin_packet(struct tracing_writer *tw);

/* Finish the open packet: every nested message must be closed. Returns 0, or
 * the pb_writer's error (the packet is then malformed but framed). */
int tracing_writer_end_packet(struct tracing_writer *tw);

/* Complete the current chunk (if any) and report it with every pending
 * patch. No packet may be open. The next packet starts a new chunk. */
void tracing_writer_flush(struct tracing_writer *tw);

uint16_t tracing_writer_id(const struct tracing_writer *tw);
const struct tracing_writer_stats *tracing_writer_stats(const struct tracing_writer *tw);

/* ---- TrackEvent on a writer (track_event.c) ------------------------------ */

/* TrackEvents on one writer's sequence, as a Perfetto SDK writes them:
 * event names interned (interned_data, then name_iid), the default track and
 * BOOTTIME clock in trace_packet_defaults, track descriptors, and the
 * sequence's incremental state written again (first packet flagged
 * SEQ_INCREMENTAL_STATE_CLEARED) before the first event and after
 * tracing_te_clear. Event packets carry SEQ_NEEDS_INCREMENTAL_STATE. The
 * writer stays the caller's (free it after this). Same thread as the writer.
 * Timestamps are BOOTTIME ns. */
struct tracing_te; /* opaque */

/* Events default to the track track_uuid, described as track_name (a thread
 * track of pid/tid when either is non-zero). Free with tracing_te_free. */
struct tracing_te *tracing_te_new(struct tracing_writer *w, uint64_t track_uuid,
                                  const char *track_name, int32_t pid, int32_t tid);
void tracing_te_free(struct tracing_te *te);
/* Declare a counter track (its descriptor is part of the incremental state,
 * written before the next event). */
void tracing_te_add_counter_track(struct tracing_te *te, uint64_t uuid, const char *name);
/* ClearIncrementalState: forget interned names; the next event first writes
 * the state again. */
void tracing_te_clear(struct tracing_te *te);
/* Slice begin (name interned), slice end, instant, counter value on a
 * declared counter track. Return 0 or the writer's error. */
int tracing_te_begin(struct tracing_te *te, uint64_t ts, const char *name);
int tracing_te_end(struct tracing_te *te, uint64_t ts);
int tracing_te_instant(struct tracing_te *te, uint64_t ts, const char *name);
int tracing_te_counter(struct tracing_te *te, uint64_t ts, uint64_t counter_uuid, int64_t value);

/* ---- service: chunk reading and reassembly (chunk_reader.c) -------------- */

/* One fragment of a chunk. data/len point into the payload given to the
 * iterator (borrowed). offset: where data starts in the payload. */
struct tracing_fragment {
	const uint8_t *data;
	size_t len;
	uint32_t offset;
	bool continues_from_prev; /* first fragment of a FIRST_CONTINUES chunk */
	bool continues_on_next;   /* last counted fragment of a LAST_CONTINUES chunk */
	bool drop;                /* size was TRACING_PACKET_SIZE_DROP: discard packet */
};

/* Walks the packet_count fragments of one chunk payload copied out of the
 * SMB. Every size is checked against the payload bound; a violation ends the
 * walk with error = -EBADMSG. Embed; no release. */
struct tracing_chunk_iter {
	const uint8_t *payload;
	size_t size, off;
	unsigned index, count;
	uint8_t flags;
	int error;
};

/* Start walking payload[0, size) (borrowed) with header h. */
void tracing_chunk_iter_init(struct tracing_chunk_iter *it, const struct tracing_chunk_header *h,
                             const uint8_t *payload, size_t size);

/* The next fragment in *f: true, or false at the end (it->error 0) or on a
 * malformed size (it->error -EBADMSG). A drop fragment ends the walk. */
bool tracing_chunk_iter_next(struct tracing_chunk_iter *it, struct tracing_fragment *f);

/* Write a patch (len must be 4) at payload[offset]. -EINVAL, and nothing
 * written, if it does not fit in payload[0, size). */
int tracing_chunk_apply_patch(uint8_t *payload, size_t size, uint32_t offset, const uint8_t *data,
                              size_t len);

/* A reassembled packet: data/len borrowed for the call. previous_dropped:
 * packets of this sequence were lost before this one. A non-zero return
 * stops tracing_reassembler_push, which returns it. */
typedef int (*tracing_packet_fn)(void *ctx, const uint8_t *data, size_t len, bool previous_dropped);

struct tracing_reassembly_stats {
	uint64_t chunks, fragments, packets;
	uint64_t empty_packets;   /* zero-length fragments, skipped */
	uint64_t dropped_packets; /* partial packets discarded */
	uint64_t drop_markers;    /* TRACING_PACKET_SIZE_DROP fragments */
	uint64_t chunk_gaps;      /* chunk_id not previous + 1 */
	uint64_t bad_chunks;      /* malformed fragment sizes */
	uint64_t oversized;       /* packets over max_packet_size */
};

/* Stitches the fragments of one (producer, writer) sequence, fed chunk by
 * chunk in chunk_id order, into whole packets. Knows nothing about buffer
 * policy. Embed; init/release. */
struct tracing_reassembler {
	VEC(uint8_t) partial;
	bool have_partial, discarding, have_last, prev_dropped;
	uint32_t last_chunk_id;
	size_t max_packet_size;
	struct tracing_reassembly_stats stats;
};

#define TRACING_MAX_PACKET_SIZE ((size_t)64 << 20)

void tracing_reassembler_init(struct tracing_reassembler *r);
void tracing_reassembler_release(struct tracing_reassembler *r);

/* Feed one chunk (payload borrowed; patches already applied) and call cb for
 * every packet it completes. Returns 0, the callback's non-zero return, or
 * -EBADMSG after delivering what preceded a malformed fragment (the partial
 * packet is dropped and counted). */
int tracing_reassembler_push(struct tracing_reassembler *r, const struct tracing_chunk_header *h,
                             const uint8_t *payload, size_t size, tracing_packet_fn cb, void *ctx);

/* ---- producer client library (producer.c) -------------------------------- */

/* A Perfetto producer: connects to a tracing service's producer socket,
 * speaks ProducerPort (compat §1.5), adopts the SMB the service hands over,
 * hands out trace writers on it and batches their commits into CommitData.
 * What traced_probes, traced_perf and tests build on. Everything runs on the
 * loop given to tracing_producer_new; every function must be called on its
 * thread. No reconnection: a lost connection is reported once through
 * on_disconnect and the producer is inert afterwards (free it, make a new
 * one). */
struct tracing_producer; /* opaque */

/* Callbacks, all optional, all called on the loop with opts.ctx. Config
 * bytes are the serialized DataSourceConfig exactly as the service sent it
 * (borrowed for the call). Any of them may call tracing_producer_free. */
struct tracing_producer_opts {
	const char *name;        /* producer_name, e.g. "perfetto.traced_probes" */
	const char *socket_name; /* NULL: ipc_producer_socket_name() */
	const char *sdk_version; /* NULL: "tracebox <version>" */
	uint32_t smb_size_hint;  /* bytes; 0: the service's default */
	uint32_t smb_page_hint;  /* bytes; 0: the service's default */
	/* Refuse a service that does not run as this process's uid (tracebox's
	 * private autostart sockets: someone else may have taken the name). */
	bool same_uid_service;
	void *ctx;
	/* InitializeConnection succeeded; data sources registered before this
	 * are sent just before it is called. */
	void (*on_connect)(void *ctx, struct tracing_producer *p);
	/* The connection is gone (service exit, protocol error, an SMB that
	 * could not be adopted). Called once; never from tracing_producer_free. */
	void (*on_disconnect)(void *ctx, struct tracing_producer *p);
	/* SetupDataSource: always before start for the same instance, and only
	 * once the SMB exists (commands that arrive earlier are held back and
	 * replayed in order). */
	void (*setup)(void *ctx, struct tracing_producer *p, uint64_t instance_id,
	              const char *ds_name, const uint8_t *config, size_t config_len);
	/* StartDataSource. target_buffer is the service's global buffer id to
	 * pass to tracing_producer_new_writer. Without this callback a data
	 * source that will_notify_on_start is reported started at once. */
	void (*start)(void *ctx, struct tracing_producer *p, uint64_t instance_id,
	              const uint8_t *config, size_t config_len, uint32_t target_buffer);
	/* StopDataSource. Without this callback a data source that
	 * will_notify_on_stop is reported stopped at once. */
	void (*stop)(void *ctx, struct tracing_producer *p, uint64_t instance_id);
	/* Flush of the given instances: write what is pending, then call
	 * tracing_producer_flush_done(p, request_id), now or later. Without
	 * this callback the flush is acknowledged at once. */
	void (*flush)(void *ctx, struct tracing_producer *p, const uint64_t *instance_ids, size_t n,
	              uint64_t request_id);
	/* ClearIncrementalState (only for data sources registered with
	 * handles_incremental_state_clear). */
	void (*clear_incremental_state)(void *ctx, struct tracing_producer *p,
	                                const uint64_t *instance_ids, size_t n);
};

/* Connect to the producer socket on l and start the handshake: BindService
 * ("ProducerPort"), then InitializeConnection and GetAsyncCommand pipelined
 * (kept pending for the service's commands). opts is copied (its strings
 * too). Returns the producer, or NULL with a message in err when the socket
 * cannot be connected. Free with tracing_producer_free. */
struct tracing_producer *
tracing_producer_new(struct loop *l, const struct tracing_producer_opts *opts, struct tb_err *err);

/* Free writers (flushing and committing what they hold), the SMB, the
 * connection and the producer. From inside one of its callbacks the free
 * happens when the callback returns. NULL is a no-op. */
void tracing_producer_free(struct tracing_producer *p);

/* Register a data source (RegisterDataSource; queued until the connection
 * is initialized). Returns 0, -EINVAL for an empty name, or -ENOTCONN once
 * disconnected. */
int tracing_producer_register_data_source(struct tracing_producer *p, const char *name,
                                          bool will_notify_on_start, bool will_notify_on_stop,
                                          bool handles_incremental_state_clear);

/* A new writer on the SMB for target_buffer with a writer id unique in the
 * producer (1..32767), announced with RegisterTraceWriter. Completed chunks
 * go to the commit batch, sent once per loop iteration. The producer owns
 * the writer: release it with tracing_producer_free_writer (or let
 * tracing_producer_free do it). NULL before SetupTracing gave us an SMB,
 * after a disconnect, or when all writer ids are taken. */
struct tracing_writer *tracing_producer_new_writer(struct tracing_producer *p,
                                                   uint32_t target_buffer);

/* Flush w (its last chunk joins the commit batch), free it, send
 * UnregisterTraceWriter and make its id reusable. NULL is a no-op. */
void tracing_producer_free_writer(struct tracing_producer *p, struct tracing_writer *w);

/* Flush every writer (completing its current chunk) and send the commit
 * batch now as one CommitData, if it holds anything. Returns 0 or
 * -ENOTCONN. */
int tracing_producer_commit(struct tracing_producer *p);

/* Send what the writers reported so far (completed chunks, ready patches)
 * as one CommitData now instead of at the next loop iteration; the writers
 * keep their current chunks. For a caller writing much in one go (an
 * ftrace drain), so that the service frees chunks before the SMB fills and
 * the writers drop. Returns 0 or -ENOTCONN. Loop thread. */
int tracing_producer_commit_completed(struct tracing_producer *p);

/* tracing_producer_commit, then CommitData{flush_request_id} to acknowledge
 * the service's Flush. Returns 0 or -ENOTCONN. */
int tracing_producer_flush_done(struct tracing_producer *p, uint64_t request_id);

/* tracing_producer_commit, then Sync: done(ctx, ok) runs on the loop once
 * the service answered, i.e. processed every CommitData sent before (ok
 * false: the connection closed first). One at a time. Returns 0, -EBUSY
 * (a sync is pending) or -ENOTCONN; done is not called then, nor after
 * tracing_producer_free. */
typedef void (*tracing_sync_fn)(void *ctx, bool ok);
int tracing_producer_sync(struct tracing_producer *p, tracing_sync_fn done, void *ctx);

/* NotifyDataSourceStarted / NotifyDataSourceStopped for instance_id (for data
 * sources registered with will_notify_on_start / _stop). Returns 0 or
 * -ENOTCONN. */
int tracing_producer_notify_started(struct tracing_producer *p, uint64_t instance_id);
int tracing_producer_notify_stopped(struct tracing_producer *p, uint64_t instance_id);

/* True from InitializeConnection's reply until the connection closes. */
bool tracing_producer_connected(const struct tracing_producer *p);

/* The adopted SMB, or NULL before SetupTracing (borrowed). */
struct tracing_smb *tracing_producer_smb(const struct tracing_producer *p);

/* The first error recorded (disconnect reason, rejected SMB, ...). */
const struct tb_err *tracing_producer_err(const struct tracing_producer *p);

/* ---- producer daemons (daemon.c) ----------------------------------------- */

/* An auto-reconnecting producer, what traced_probes and traced_perf run: it
 * connects at once, registers the data sources on every new connection,
 * writes "1" to the fd named by $ready_fd_env after the first connection
 * (tracebox autostart waits for it), and when connecting fails or the
 * connection is lost (traced restarted) tries again every retry_ms.
 * Everything runs on the loop given to tracing_daemon_new. */
struct tracing_daemon; /* opaque */

/* One data source to register: RegisterDataSource's fields. */
struct tracing_ds_desc {
	const char *name;
	bool will_notify_on_start, will_notify_on_stop, handles_incremental_state_clear;
};

struct tracing_daemon_opts {
	/* name, socket_name, sdk_version, SMB hints, ctx and the callbacks, as
	 * for tracing_producer_new; the callbacks get producer.ctx and the
	 * current producer. on_disconnect must drop what belongs to the lost
	 * producer (its writers are freed with it right after). A missing
	 * start/stop/flush acknowledges at once. */
	struct tracing_producer_opts producer;
	const struct tracing_ds_desc *data_sources;
	size_t n_data_sources;
	const char *ready_fd_env; /* e.g. "TRACED_PROBES_NOTIFY_FD"; NULL: none */
	uint32_t retry_ms;        /* 0: 1000 (Perfetto's producers retry too) */
};
/* With TRACEBOX_PRIVATE_SOCKETS=1 in the environment (tracebox autostart)
 * the daemon sets producer.same_uid_service. */

/* Start connecting (a first failure is logged and retried, never fatal).
 * opts is copied, its strings and data sources too. Never NULL. */
struct tracing_daemon *tracing_daemon_new(struct loop *l, const struct tracing_daemon_opts *opts);

/* Cancel retries and free the current producer (writers included). Not
 * from inside one of its callbacks. NULL is a no-op. */
void tracing_daemon_free(struct tracing_daemon *d);

/* The current producer (borrowed), or NULL while disconnected. */
struct tracing_producer *tracing_daemon_producer(const struct tracing_daemon *d);

/* Connections made so far (InitializeConnection replies). */
unsigned tracing_daemon_connections(const struct tracing_daemon *d);

#endif /* TB_TRACING_H */
