/*
 * Input stages of the trace processor that sit before format sniffing:
 * gzip unwrapping (gunzip.c) and zlib inflation of in-trace payloads such as
 * compressed_packets (inflate.c). Traces from http:// or https:// URLs come
 * through base's HTTP client (base/http.c), streamed without a local copy.
 */
#ifndef TB_TP_IO_H
#define TB_TP_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

struct tp_gunzip;
typedef int (*tp_gunzip_sink)(void *ctx, const uint8_t *p, size_t n);

struct tp_gunzip *tp_gunzip_new(void);
/* The same, inflating on a helper thread when the machine has more than one
 * CPU: feed then hands sink what has come out so far (always on the
 * caller's thread, in order), and finish the rest; an error in the data
 * may surface at a later feed or at finish. */
struct tp_gunzip *tp_gunzip_new_async(void);
void tp_gunzip_free(struct tp_gunzip *g);
/* Inflate n more bytes of a gzip stream, passing decoded bytes to sink as
 * they come. Returns 0, a sink's negative code, or -EINVAL (err set) on
 * corrupt data. The sink and ctx are the same at every call. */
int tp_gunzip_feed(struct tp_gunzip *g, const uint8_t *p, size_t n, tp_gunzip_sink sink, void *ctx,
                   struct tb_err *err);
/* End of input: the decoded bytes still queued go to sink; -EINVAL (err
 * set) if a member was cut short or the data was corrupt. */
int tp_gunzip_finish(struct tp_gunzip *g, tp_gunzip_sink sink, void *ctx, struct tb_err *err);

/* Inflate a zlib (RFC 1950) buffer of at most max_out bytes into *out
 * (tb_malloc'd, caller frees). Returns 0 or -EINVAL / -EFBIG. */
int tp_zlib_inflate(const uint8_t *p, size_t n, size_t max_out, uint8_t **out, size_t *out_len);

/* ---- zip and tar archives (archive.c) ------------------------------------ */

#define TP_ARCHIVE_MAX_MEMBERS 65536
#define TP_ARCHIVE_MAX_BYTES ((uint64_t)16 << 30) /* all members, decompressed */
#define TP_ARCHIVE_NAME_MAX 4096                  /* a GNU long name */
#define TP_ARCHIVE_PREALLOC_MAX (64u << 20)       /* trust in a header's size */
/* A member (deflated, or gzip'd) that inflates past TP_ARCHIVE_BOMB_MIN and
 * more than TP_ARCHIVE_MAX_RATIO times its compressed size is a
 * decompression bomb: real traces compress 5 to 50 fold, a run of one byte
 * 1000 fold. Refused as soon as it crosses the line, not after inflating. */
#define TP_ARCHIVE_BOMB_MIN ((uint64_t)64 << 20)
#define TP_ARCHIVE_MAX_RATIO 200u

static inline bool tp_archive_is_bomb(uint64_t compressed, uint64_t inflated)
{
	return inflated > TP_ARCHIVE_BOMB_MIN && inflated / TP_ARCHIVE_MAX_RATIO > compressed;
}

enum tp_archive_kind { TP_ARCHIVE_ZIP, TP_ARCHIVE_TAR };

/* One file of an archive, decompressed. size is what the archive says of
 * it (zip: the compressed size; tar: the size), as Perfetto's trace_file
 * table reports. */
struct tp_archive_member {
	char *name;
	uint8_t *data;
	size_t len, cap;
	uint64_t size;
};

struct tp_archive;

/* True if p[0, n) starts a zip (local header) or tar (ustar/GNU magic at
 * 257) archive; *kind says which. A tar needs 263 bytes to be seen. */
bool tp_archive_sniff(const uint8_t *p, size_t n, enum tp_archive_kind *kind);
struct tp_archive *tp_archive_new(enum tp_archive_kind kind);
void tp_archive_free(struct tp_archive *a);
/* Parse n more bytes of the archive. Returns 0, or -EINVAL with one line in
 * err (corrupt header, CRC mismatch, unsupported compression or entry type,
 * too large), -EFBIG for a decompression bomb (tp_archive_is_bomb). Bytes
 * after the end of the archive are ignored. */
int tp_archive_feed(struct tp_archive *a, const uint8_t *p, size_t n, struct tb_err *err);
/* End of input: -EINVAL (err set) if it stopped inside an entry. */
int tp_archive_finish(struct tp_archive *a, struct tb_err *err);
/* The members read so far, in archive order (directories and hidden paths
 * left out). The archive owns them; a caller may take data (set it NULL). */
size_t tp_archive_count(const struct tp_archive *a);
struct tp_archive_member *tp_archive_member(struct tp_archive *a, size_t i);

#endif /* TB_TP_IO_H */
