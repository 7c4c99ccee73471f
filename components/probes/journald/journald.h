/*
 * journald/: systemd journal files read directly (no libsystemd, which a
 * static binary cannot load), for the linux.systemd_journald data source.
 *
 *   file.c    one journal file: header, objects through a small read cache,
 *             the global entry-array chain as a cursor, entries and their
 *             DATA objects (ZSTD and LZ4 payloads decoded), data and field
 *             hash-table lookups
 *   hash.c    the two hash functions of the format: Jenkins lookup3
 *             (hashlittle2) and siphash24 keyed by the file id
 *   lz4.c     LZ4 block decoding (systemd's LZ4 payloads)
 *   follow.c  the journal folders: every file's tail followed while it
 *             grows, new and rotated files picked up (inotify, and a
 *             periodic rescan), archived files read to their end and closed
 *   data_source.c  linux.systemd_journald: filters, SystemdJournaldEvent
 *
 * Everything is hostile input: every offset, size and count read from a
 * file is checked against the file and the limits below before use; a bad
 * object costs the entry it belongs to (counted), a bad header or chain the
 * rest of that file (counted), never the process. Single-threaded; on the
 * producer's loop. README.md has the on-disk layouts.
 */
#ifndef TB_PROBES_JOURNALD_H
#define TB_PROBES_JOURNALD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"

/* ---- limits ---------------------------------------------------------------- */

/* A field's value is read up to this many bytes (decompressed); the rest is
 * cut off and the entry counted in journal_stats.truncated. */
#define JOURNAL_VALUE_MAX (256u << 10)
/* A compressed payload larger than this is not decoded (undecoded). */
#define JOURNAL_COMPRESSED_MAX (4u << 20)
/* Data items of one entry (journald writes at most 1024 fields). */
#define JOURNAL_ENTRY_ITEMS_MAX 4096u
/* Entry arrays followed per chain (they double in size: 64 is 2^64 items). */
#define JOURNAL_CHAIN_MAX 4096u
/* Objects followed in one hash chain. */
#define JOURNAL_HASH_CHAIN_MAX 65536u
/* n_entries still counting entries the chain does not give after this many
 * refreshes and this long makes the file broken. */
#define JOURNAL_STALL_REFRESHES 8
#define JOURNAL_STALL_NS 2000000000ll
/* Read cache: windows of this size per open file. */
#define JOURNAL_WINDOW 32768u
#define JOURNAL_WINDOWS 4
/* DATA objects remembered per file (offset -> decoded payload), and the
 * payload size up to which one is remembered. */
#define JOURNAL_DCACHE 1024u
#define JOURNAL_DCACHE_VALUE_MAX 192u

/* ---- the format (systemd's "Journal File Format") ---------------------------- */

enum journal_object_type {
	JOURNAL_OBJECT_UNUSED,
	JOURNAL_OBJECT_DATA,
	JOURNAL_OBJECT_FIELD,
	JOURNAL_OBJECT_ENTRY,
	JOURNAL_OBJECT_DATA_HASH_TABLE,
	JOURNAL_OBJECT_FIELD_HASH_TABLE,
	JOURNAL_OBJECT_ENTRY_ARRAY,
	JOURNAL_OBJECT_TAG,
};

/* Object flags (DATA objects only): at most one of these. */
enum {
	JOURNAL_COMPRESSED_XZ = 1 << 0,
	JOURNAL_COMPRESSED_LZ4 = 1 << 1,
	JOURNAL_COMPRESSED_ZSTD = 1 << 2,
};

/* Header incompatible_flags. A file with another bit is refused. */
enum {
	JOURNAL_INCOMPAT_XZ = 1 << 0,
	JOURNAL_INCOMPAT_LZ4 = 1 << 1,
	JOURNAL_INCOMPAT_KEYED_HASH = 1 << 2,
	JOURNAL_INCOMPAT_ZSTD = 1 << 3,
	JOURNAL_INCOMPAT_COMPACT = 1 << 4,
	JOURNAL_INCOMPAT_KNOWN = 0x1f,
};

enum journal_state { JOURNAL_OFFLINE, JOURNAL_ONLINE, JOURNAL_ARCHIVED };

/* The header fields the reader uses, host order. */
struct journal_header {
	uint32_t compatible_flags, incompatible_flags;
	uint8_t state;
	uint8_t file_id[16], machine_id[16], tail_entry_boot_id[16], seqnum_id[16];
	uint64_t header_size, arena_size;
	uint64_t data_hash_table_offset, data_hash_table_size;
	uint64_t field_hash_table_offset, field_hash_table_size;
	uint64_t tail_object_offset, n_objects, n_entries;
	uint64_t tail_entry_seqnum, head_entry_seqnum, entry_array_offset;
	uint64_t head_entry_realtime, tail_entry_realtime, tail_entry_monotonic;
};

/* Parse the first n bytes of a file as a journal header. Returns 0, or
 * -EINVAL (not a journal, or a header that contradicts itself) /
 * -EPROTONOSUPPORT (incompatible flags this reader does not know) with a
 * message in err. Pure. */
int probes_journal_header_parse(const uint8_t *p, size_t n, struct journal_header *h,
                                struct tb_err *err);

/* The format's hashes (hash.c). probes_journal_jenkins64 is lookup3's hashlittle2
 * with both seeds 0, first result in the high half; probes_journal_siphash24 is
 * SipHash-2-4 with a 16-byte key (a file's file_id). */
uint64_t probes_journal_jenkins64(const void *p, size_t n);
uint64_t probes_journal_siphash24(const void *p, size_t n, const uint8_t key[16]);

/* LZ4 block (lz4.c): decode src[0, n) into dst[0, cap). Returns the bytes
 * written, or -EINVAL for a malformed block. Output past cap is not
 * written; *truncated says whether the block had more (then the return is
 * cap). Pure; never reads or writes out of bounds. */
ssize_t probes_journal_lz4_block(const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
                                 bool *truncated);

/* ---- one journal file (file.c) --------------------------------------------- */

/* What went wrong in a file, for the data source's num_failed and logs. */
struct journal_stats {
	uint64_t entries;     /* entries read */
	uint64_t bad_entries; /* entries skipped: a bad ENTRY object */
	uint64_t bad_items;   /* DATA items skipped: bad offset, object or hash */
	uint64_t undecoded;   /* DATA items whose compression could not be decoded */
	uint64_t truncated;   /* values cut at JOURNAL_VALUE_MAX */
	uint64_t bad_chain;   /* the entry-array chain broke (the file was given up) */
};

/* Flags of a field passed to a journal_field_fn. */
enum {
	JOURNAL_FIELD_TRUNCATED = 1, /* the value was cut at JOURNAL_VALUE_MAX */
	JOURNAL_FIELD_UNDECODED = 2, /* compressed with XZ (or broken): data is
	                              * NULL; the field's name is unknown */
};

/* One field of an entry: data[0, len) is "NAME=value" as written (values
 * may be binary), valid during the call. Return non-zero to stop. */
typedef int (*journal_field_fn)(void *ctx, const uint8_t *data, size_t len, unsigned flags);

/* An entry's fixed part. */
struct journal_entry {
	uint64_t offset, seqnum;
	uint64_t realtime_us, monotonic_us;
	uint8_t boot_id[16];
	uint64_t xor_hash;
	uint32_t n_items;
};

struct journal_window {
	uint64_t off;  /* file offset of buf[0] */
	size_t len;    /* valid bytes */
	uint64_t used; /* LRU clock */
	uint8_t *buf;
};

struct journal_dcache_slot {
	uint64_t off; /* 0: empty */
	uint32_t len;
	uint8_t flags;
	uint8_t *val;
};

/* An open journal file and a cursor in its global entry-array chain.
 * Embed; zero before probes_journal_file_open, release with probes_journal_file_close. */
struct journal_file {
	int fd;
	char *path;
	uint64_t dev, ino;
	struct journal_header h;
	uint64_t size;  /* file size at the last refresh */
	uint64_t limit; /* objects lie below this: min(size, header + arena) */
	bool compact, keyed;
	/* Cursor: `consumed` entries of the chain have been returned; the next
	 * is item arr_idx of the array at arr_off (0: not reached yet). */
	uint64_t consumed;
	uint64_t arr_off, arr_idx, arr_cap;
	uint64_t chain_len;
	uint64_t last_entry;  /* offset of the last entry returned */
	bool waiting;         /* next found n_entries ahead of the chain ... */
	uint64_t waited_at;   /* ... at this many consumed ... */
	unsigned stalls;      /* ... for this many refreshes */
	int64_t waited_since; /* ... since then (CLOCK_MONOTONIC ns) */
	struct journal_window win[JOURNAL_WINDOWS];
	uint64_t clock;
	VEC(uint8_t) big;     /* objects larger than a window */
	VEC(uint8_t) inflate; /* decompressed payloads */
	struct journal_dcache_slot *dcache;
	void *zstd;  /* ZSTD_DCtx, made on first use */
	bool broken; /* the chain broke: nothing more is read */
	struct journal_stats stats;
	struct tb_err err;
};

/* Open path read-only (a regular file; not through a symlink's target if
 * it is not one) and read its header. Returns 0 or -errno / -EINVAL /
 * -EPROTONOSUPPORT (message in f->err; close still needed). */
int probes_journal_file_open(struct journal_file *f, const char *path);

/* The same over an open fd, which f then owns (fuzzing, tests). */
int probes_journal_file_open_fd(struct journal_file *f, int fd, const char *name);

void probes_journal_file_close(struct journal_file *f);

/* Read the header and size again (the file grows; cached reads are
 * dropped). Returns 0, or < 0 when the file is no longer readable as a
 * journal (message in f->err). */
int probes_journal_file_refresh(struct journal_file *f);

/* Put the cursor after the last entry now in the file: only entries
 * appended from here on are returned. Returns 0 or < 0 (a broken chain). */
int probes_journal_file_seek_tail(struct journal_file *f);

/* The offset of the next entry into *off: 1, or 0 when there is none yet
 * (the chain ends, or its next item is not written yet), or < 0 when the
 * chain is broken (f->broken; counted in stats.bad_chain). */
int probes_journal_file_next(struct journal_file *f, uint64_t *off);

/* Read the ENTRY object at off into *e and call fn for each of its fields
 * in item order (fn NULL: none). Bad items are skipped (stats.bad_items);
 * XZ payloads are reported with JOURNAL_FIELD_UNDECODED. Returns 0, fn's
 * non-zero value, or -EINVAL when off is not a readable entry
 * (stats.bad_entries). */
int probes_journal_file_read_entry(struct journal_file *f, uint64_t off, struct journal_entry *e,
                                   journal_field_fn fn, void *ctx);

/* The DATA object holding exactly data[0, n) ("NAME=value"), found through
 * the data hash table: its offset in *off. Returns 1, 0 when the file has
 * none, < 0 on a broken table or chain. */
int probes_journal_file_find_data(struct journal_file *f, const void *data, size_t n,
                                  uint64_t *off);

/* The same for a FIELD object (a field name without '='). */
int probes_journal_file_find_field(struct journal_file *f, const void *name, size_t n,
                                   uint64_t *off);

/* Call fn(ctx, entry offset) for every entry that references the DATA
 * object at data_off (its inline entry, then its entry-array chain), in
 * file order. Returns 0, fn's non-zero value, or < 0 on a broken chain. */
int probes_journal_file_data_entries(struct journal_file *f, uint64_t data_off,
                                     int (*fn)(void *ctx, uint64_t entry_off), void *ctx);

/* Call fn(ctx, payload, len) for every value of field name (through the
 * FIELD object's list of DATA objects): how `journalctl -F` lists them.
 * Returns 0, fn's value, or < 0. */
int probes_journal_file_field_values(struct journal_file *f, const void *name, size_t n,
                                     journal_field_fn fn, void *ctx);

/* ---- matches (filter.c) ------------------------------------------------------- */

/* The data source's filters as journalctl matches: PRIORITY=0 .. PRIORITY=
 * min_prio (min_prio 7: no priority match at all, so entries without a
 * PRIORITY field pass, as with `journalctl -p 7`), one of idents as
 * SYSLOG_IDENTIFIER, one of units as _SYSTEMD_UNIT; empty lists match
 * everything; the three must all hold. Lists are borrowed. */
struct journal_filter {
	uint32_t min_prio;
	char *const *idents;
	size_t n_idents;
	char *const *units;
	size_t n_units;
};

/* Which of the three an entry satisfied so far. */
struct journal_match {
	bool prio, ident, unit;
};

void probes_journal_match_begin(const struct journal_filter *flt, struct journal_match *m);
/* Feed one field ("NAME=value") of the entry. */
void probes_journal_match_field(const struct journal_filter *flt, struct journal_match *m,
                                const uint8_t *d, size_t n);
static inline bool journal_match_ok(const struct journal_match *m)
{
	return m->prio && m->ident && m->unit;
}

/* ---- following the journal folders (follow.c) -------------------------------- */

#define JOURNAL_MAX_DIRS 8
#define JOURNAL_MAX_FILES 256  /* files followed at once; more are logged and skipped */
#define JOURNAL_RESCAN_MS 1000 /* rescans and re-reads without inotify news */

/* An entry found by probes_journal_follow_poll. The fields are reported through
 * fn as for probes_journal_file_read_entry. */
typedef int (*journal_entry_fn)(void *ctx, struct journal_file *file,
                                const struct journal_entry *e);

struct probes_journal_follow_file {
	struct journal_file jf;
	bool from_start; /* appeared after the start: all its entries are new */
	bool done;       /* archived and read to its end, or broken: closed */
};

struct journal_follow {
	char *dirs[JOURNAL_MAX_DIRS];
	int wd[JOURNAL_MAX_DIRS]; /* inotify watch per folder, -1 none */
	size_t n_dirs;
	int inotify_fd;
	VEC(struct probes_journal_follow_file *) files;
	struct hmap seen; /* (dev, ino) hash -> followed, or put aside (follow.c) */
	/* The start, for files that appear later: their entries from before it
	 * (a copy of older entries, journald's /run to /var flush) are skipped. */
	uint8_t boot_id[16];
	int64_t start_mono_us, start_real_us;
	bool skipped_files_logged;
	uint64_t old_entries_skipped;
	struct journal_stats closed_stats; /* of files closed since the start */
};

/* The folders journald writes for this machine: /run/log/journal/<id> and
 * /var/log/journal/<id> (<id> from /etc/machine-id; without one, every
 * 32-hex-digit subfolder of both). Into dirs (tb_strdup'd; caller frees
 * each), at most max. Returns the number. */
size_t probes_journal_default_dirs(char **dirs, size_t max);

/* Follow the journal files in dirs[0, n) (copied; missing folders are
 * looked for again on each rescan): every file there now is positioned at
 * its tail. Never fails: problems are logged. f must be zeroed. */
void probes_journal_follow_open(struct journal_follow *f, const char *const *dirs, size_t n);

/* The inotify fd to watch for readability (-1 without inotify). */
int probes_journal_follow_fd(const struct journal_follow *f);

/* Consume pending inotify events, rescan the folders when files may have
 * appeared, then read up to max entries that are new since the last call
 * from every file, calling fn for each; 0 == no limit. Returns the number
 * read; a return of max means more may be pending. rescan: look at the
 * folders even without inotify news. */
size_t probes_journal_follow_poll(struct journal_follow *f, bool rescan, size_t max,
                                  journal_entry_fn fn, void *ctx);

/* Totals over every file followed so far (open and closed). */
void probes_journal_follow_stats(const struct journal_follow *f, struct journal_stats *out);

void probes_journal_follow_close(struct journal_follow *f);

#endif /* TB_PROBES_JOURNALD_H */
