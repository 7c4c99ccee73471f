/*
 * One systemd journal file, read with pread through a few cached windows
 * (never mmap: a file truncated under a mapping would kill the process with
 * SIGBUS). The writer appends objects and links them afterwards, so the
 * reader trusts only what the header's n_entries says is linked, and checks
 * every offset, size, type and hash before it uses them: a bad object costs
 * its entry or item (counted), a bad chain the rest of the file.
 *
 * The cursor follows the global entry-array chain (header.entry_array_offset
 * -> ENTRY_ARRAY -> next ...), whose items are the entries in write order;
 * probes_journal_file_seek_tail puts it after the last entry so a capture reads only
 * what is appended while it runs. README.md has the layouts.
 */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDCtx_advanced: our allocator */
#include "journald.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

/* Header layout (little-endian). Fields up to n_data exist in every
 * version; the reader needs nothing past tail_entry_monotonic. */
enum {
	H_SIGNATURE = 0,
	H_COMPATIBLE = 8,
	H_INCOMPATIBLE = 12,
	H_STATE = 16,
	H_FILE_ID = 24,
	H_MACHINE_ID = 40,
	H_TAIL_BOOT_ID = 56,
	H_SEQNUM_ID = 72,
	H_HEADER_SIZE = 88,
	H_ARENA_SIZE = 96,
	H_DATA_HT_OFF = 104,
	H_DATA_HT_SIZE = 112,
	H_FIELD_HT_OFF = 120,
	H_FIELD_HT_SIZE = 128,
	H_TAIL_OBJECT = 136,
	H_N_OBJECTS = 144,
	H_N_ENTRIES = 152,
	H_TAIL_SEQNUM = 160,
	H_HEAD_SEQNUM = 168,
	H_ENTRY_ARRAY = 176,
	H_HEAD_REALTIME = 184,
	H_TAIL_REALTIME = 192,
	H_TAIL_MONOTONIC = 200,
	H_MIN_SIZE = 208, /* n_data: the first field that may be missing */
	H_READ = 272,     /* as much as any version has so far */
};

/* Object layouts: a 16-byte header {type u8, flags u8, reserved[6], size
 * le64}, then per type: */
enum {
	O_HEADER = 16,
	DATA_HASH = 16,
	DATA_NEXT_HASH = 24,
	DATA_NEXT_FIELD = 32,
	DATA_ENTRY = 40,
	DATA_ENTRY_ARRAY = 48,
	DATA_N_ENTRIES = 56,
	DATA_PAYLOAD = 64,         /* regular layout */
	DATA_PAYLOAD_COMPACT = 72, /* compact: le32 tail array offset, le32 count first */
	FIELD_HASH = 16,
	FIELD_NEXT_HASH = 24,
	FIELD_HEAD_DATA = 32,
	FIELD_PAYLOAD = 40,
	ENTRY_SEQNUM = 16,
	ENTRY_REALTIME = 24,
	ENTRY_MONOTONIC = 32,
	ENTRY_BOOT_ID = 40,
	ENTRY_XOR_HASH = 56,
	ENTRY_ITEMS = 64, /* {le64 offset, le64 hash} or compact {le32 offset} */
	ARRAY_NEXT = 16,
	ARRAY_ITEMS = 24, /* le64 or compact le32 entry offsets */
	HASH_ITEM = 16,   /* {le64 head, le64 tail} per bucket */
};

static const char journal_signature[8] = {'L', 'P', 'K', 'S', 'H', 'H', 'R', 'H'};

int probes_journal_header_parse(const uint8_t *p, size_t n, struct journal_header *h,
                                struct tb_err *err)
{
	memset(h, 0, sizeof *h);
	if (n < H_MIN_SIZE || memcmp(p, journal_signature, sizeof journal_signature) != 0)
		return tb_err_set(err, -EINVAL, "not a journal file (no LPKSHHRH header)");
	h->compatible_flags = tb_ld32(p + H_COMPATIBLE);
	h->incompatible_flags = tb_ld32(p + H_INCOMPATIBLE);
	h->state = p[H_STATE];
	memcpy(h->file_id, p + H_FILE_ID, 16);
	memcpy(h->machine_id, p + H_MACHINE_ID, 16);
	memcpy(h->tail_entry_boot_id, p + H_TAIL_BOOT_ID, 16);
	memcpy(h->seqnum_id, p + H_SEQNUM_ID, 16);
	h->header_size = tb_ld64(p + H_HEADER_SIZE);
	h->arena_size = tb_ld64(p + H_ARENA_SIZE);
	h->data_hash_table_offset = tb_ld64(p + H_DATA_HT_OFF);
	h->data_hash_table_size = tb_ld64(p + H_DATA_HT_SIZE);
	h->field_hash_table_offset = tb_ld64(p + H_FIELD_HT_OFF);
	h->field_hash_table_size = tb_ld64(p + H_FIELD_HT_SIZE);
	h->tail_object_offset = tb_ld64(p + H_TAIL_OBJECT);
	h->n_objects = tb_ld64(p + H_N_OBJECTS);
	h->n_entries = tb_ld64(p + H_N_ENTRIES);
	h->tail_entry_seqnum = tb_ld64(p + H_TAIL_SEQNUM);
	h->head_entry_seqnum = tb_ld64(p + H_HEAD_SEQNUM);
	h->entry_array_offset = tb_ld64(p + H_ENTRY_ARRAY);
	h->head_entry_realtime = tb_ld64(p + H_HEAD_REALTIME);
	h->tail_entry_realtime = tb_ld64(p + H_TAIL_REALTIME);
	h->tail_entry_monotonic = tb_ld64(p + H_TAIL_MONOTONIC);
	if (h->incompatible_flags & ~(uint32_t)JOURNAL_INCOMPAT_KNOWN)
		return tb_err_set(
		    err, -EPROTONOSUPPORT,
		    "journal file has incompatible flags 0x%x this reader does not know",
		    h->incompatible_flags & ~(uint32_t)JOURNAL_INCOMPAT_KNOWN);
	if (h->header_size < H_MIN_SIZE || h->header_size % 8 ||
	    h->header_size > UINT64_MAX - h->arena_size)
		return tb_err_set(err, -EINVAL, "journal header size %llu is invalid",
		                  (unsigned long long)h->header_size);
	return 0;
}

/* ---- reads --------------------------------------------------------------------- */

static void drop_windows(struct journal_file *f)
{
	for (int i = 0; i < JOURNAL_WINDOWS; i++)
		f->win[i].len = 0;
}

/* [off, off + len) of the file into *out, valid until the next read. The
 * range must lie below f->size (the caller checks object bounds against
 * f->limit). Returns 0 or -EINVAL (outside the file, or a short read: the
 * file shrank). */
static int rd(struct journal_file *f, uint64_t off, size_t len, const uint8_t **out)
{
	if (len == 0 || off > f->size || len > f->size - off)
		return -EINVAL;
	for (int i = 0; i < JOURNAL_WINDOWS; i++) {
		struct journal_window *w = &f->win[i];
		if (w->len && off >= w->off && off - w->off <= w->len &&
		    len <= w->len - (off - w->off)) {
			w->used = ++f->clock;
			*out = w->buf + (off - w->off);
			return 0;
		}
	}
	if (len > JOURNAL_WINDOW / 2) {
		/* Large objects bypass the windows. */
		vec_clear(&f->big);
		if (vec_try_reserve(&f->big, len) < 0)
			return -ENOMEM;
		ssize_t got = pread(f->fd, f->big.data, len, (off_t)off);
		if (got < 0 || (size_t)got != len)
			return -EINVAL;
		*out = f->big.data;
		return 0;
	}
	struct journal_window *w = &f->win[0];
	for (int i = 1; i < JOURNAL_WINDOWS; i++)
		if (f->win[i].used < w->used)
			w = &f->win[i];
	if (!w->buf)
		w->buf = tb_malloc(JOURNAL_WINDOW);
	/* Start on a 4 KiB boundary when the range still fits. */
	uint64_t start = off & ~(uint64_t)4095;
	if (off - start + len > JOURNAL_WINDOW)
		start = off;
	size_t want = JOURNAL_WINDOW;
	if (want > f->size - start)
		want = (size_t)(f->size - start);
	ssize_t got = pread(f->fd, w->buf, want, (off_t)start);
	if (got < 0 || (uint64_t)got < off - start + len) {
		w->len = 0;
		return -EINVAL;
	}
	w->off = start;
	w->len = (size_t)got;
	w->used = ++f->clock;
	*out = w->buf + (off - start);
	return 0;
}

/* The object at off: checks alignment, bounds, type (any when type is
 * JOURNAL_OBJECT_UNUSED) and a minimum size; *size gets its size. Reads
 * its first `want` bytes (<= min_size) into *out. */
static int object(struct journal_file *f, uint64_t off, int type, uint64_t min_size, size_t want,
                  const uint8_t **out, uint64_t *size)
{
	const uint8_t *p;
	if (off % 8 || off < f->h.header_size || off >= f->limit || f->limit - off < O_HEADER)
		return -EINVAL;
	if (rd(f, off, want > O_HEADER ? want : O_HEADER, &p) < 0)
		return -EINVAL;
	uint64_t sz = tb_ld64(p + 8);
	if ((type != JOURNAL_OBJECT_UNUSED && p[0] != type) || sz < min_size || sz < O_HEADER ||
	    sz > f->limit - off)
		return -EINVAL;
	if (want > sz)
		return -EINVAL;
	*out = p;
	*size = sz;
	return 0;
}

/* ---- open, refresh ------------------------------------------------------------- */

static int broken(struct journal_file *f, const char *what);

int probes_journal_file_refresh(struct journal_file *f)
{
	uint8_t buf[H_READ];
	struct stat st;
	if (fstat(f->fd, &st) != 0)
		return tb_err_errno(&f->err, -errno, "cannot stat '%s'", f->path);
	ssize_t got = pread(f->fd, buf, sizeof buf, 0);
	if (got < 0)
		return tb_err_errno(&f->err, -errno, "cannot read '%s'", f->path);
	struct tb_err e = {0};
	struct journal_header h;
	if (probes_journal_header_parse(buf, (size_t)got, &h, &e) < 0)
		return tb_err_set(&f->err, e.code, "'%s': %s", f->path, e.msg);
	/* n_entries says more is linked than the chain gives, refresh after
	 * refresh: the header lies (a writer only links before counting). */
	if (f->waiting && f->consumed == f->waited_at && ++f->stalls >= JOURNAL_STALL_REFRESHES &&
	    tb_mono_ns() - f->waited_since > JOURNAL_STALL_NS) {
		broken(f, "n_entries is beyond the end of the entry-array chain");
		return -EINVAL;
	}
	if (f->h.header_size &&
	    (h.header_size != f->h.header_size || memcmp(h.file_id, f->h.file_id, 16) != 0 ||
	     h.incompatible_flags != f->h.incompatible_flags || h.n_entries < f->consumed))
		return tb_err_set(&f->err, -EINVAL, "'%s' was rewritten under the reader", f->path);
	if ((uint64_t)st.st_size < h.header_size)
		return tb_err_set(&f->err, -EINVAL, "'%s' is shorter than its header", f->path);
	f->h = h;
	f->size = (uint64_t)st.st_size;
	f->limit = h.header_size + h.arena_size;
	if (f->limit > f->size)
		f->limit = f->size;
	f->compact = (h.incompatible_flags & JOURNAL_INCOMPAT_COMPACT) != 0;
	f->keyed = (h.incompatible_flags & JOURNAL_INCOMPAT_KEYED_HASH) != 0;
	drop_windows(f);
	return 0;
}

int probes_journal_file_open_fd(struct journal_file *f, int fd, const char *name)
{
	struct stat st;
	f->fd = fd;
	f->path = tb_strdup(name);
	if (fstat(fd, &st) != 0)
		return tb_err_errno(&f->err, -errno, "cannot stat '%s'", name);
	if (!S_ISREG(st.st_mode))
		return tb_err_set(&f->err, -EINVAL, "'%s' is not a regular file", name);
	f->dev = (uint64_t)st.st_dev;
	f->ino = (uint64_t)st.st_ino;
	f->dcache = tb_calloc(JOURNAL_DCACHE, sizeof *f->dcache);
	return probes_journal_file_refresh(f);
}

int probes_journal_file_open(struct journal_file *f, const char *path)
{
	/* O_NONBLOCK: a FIFO planted under a journal name must not block. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		f->fd = -1;
		f->path = tb_strdup(path);
		return tb_err_errno(&f->err, -errno, "cannot open '%s'", path);
	}
	return probes_journal_file_open_fd(f, fd, path);
}

void probes_journal_file_close(struct journal_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	for (int i = 0; i < JOURNAL_WINDOWS; i++)
		tb_free(f->win[i].buf);
	if (f->dcache)
		for (size_t i = 0; i < JOURNAL_DCACHE; i++)
			tb_free(f->dcache[i].val);
	tb_free(f->dcache);
	vec_release(&f->big);
	vec_release(&f->inflate);
	ZSTD_freeDCtx(f->zstd);
	tb_free(f->path);
	memset(f, 0, sizeof *f);
	f->fd = -1;
}

/* ---- the entry-array chain ------------------------------------------------------ */

static size_t item_size(const struct journal_file *f)
{
	return f->compact ? 4 : 8;
}

/* Load the ENTRY_ARRAY at off as the cursor's array. */
static int load_array(struct journal_file *f, uint64_t off)
{
	const uint8_t *p;
	uint64_t size;
	if (++f->chain_len > JOURNAL_CHAIN_MAX ||
	    object(f, off, JOURNAL_OBJECT_ENTRY_ARRAY, ARRAY_ITEMS + item_size(f), O_HEADER, &p,
	           &size) < 0)
		return -EINVAL;
	f->arr_off = off;
	f->arr_idx = 0;
	f->arr_cap = (size - ARRAY_ITEMS) / item_size(f);
	return 0;
}

/* Item i of the array at arr (offset of an entry; 0 = not written). */
static int array_item(struct journal_file *f, uint64_t arr, uint64_t i, uint64_t *out)
{
	const uint8_t *p;
	if (rd(f, arr + ARRAY_ITEMS + i * item_size(f), item_size(f), &p) < 0)
		return -EINVAL;
	*out = f->compact ? tb_ld32(p) : tb_ld64(p);
	return 0;
}

static int array_next(struct journal_file *f, uint64_t arr, uint64_t *next)
{
	const uint8_t *p;
	if (rd(f, arr + ARRAY_NEXT, 8, &p) < 0)
		return -EINVAL;
	*next = tb_ld64(p);
	return 0;
}

static int broken(struct journal_file *f, const char *what)
{
	if (!f->broken) {
		f->broken = true;
		f->stats.bad_chain++;
		tb_err_set(&f->err, -EINVAL,
		           "'%s': %s after entry %llu; the rest of the file is skipped", f->path,
		           what, (unsigned long long)f->consumed);
	}
	return -EINVAL;
}

int probes_journal_file_seek_tail(struct journal_file *f)
{
	uint64_t left = f->h.n_entries, arr = f->h.entry_array_offset;
	f->consumed = 0;
	f->arr_off = f->arr_idx = f->arr_cap = 0;
	f->chain_len = 0;
	f->last_entry = 0;
	if (left == 0)
		return 0;
	if (arr == 0 || load_array(f, arr) < 0)
		return broken(f, "bad first entry array");
	while (left > f->arr_cap) {
		uint64_t next;
		left -= f->arr_cap;
		if (array_next(f, f->arr_off, &next) < 0 || next <= f->arr_off ||
		    load_array(f, next) < 0)
			return broken(f, "entry-array chain shorter than n_entries");
	}
	f->arr_idx = left;
	f->consumed = f->h.n_entries;
	if (array_item(f, f->arr_off, left - 1, &f->last_entry) < 0)
		return broken(f, "unreadable entry array");
	return 0;
}

/* n_entries counts an entry the chain does not give yet: a writer between
 * linking and counting would be the other way round, so this resolves
 * itself or is a lie (see refresh). */
static int not_yet(struct journal_file *f)
{
	if (!f->waiting) {
		f->waiting = true;
		f->waited_at = f->consumed;
		f->waited_since = tb_mono_ns();
		f->stalls = 0;
	}
	return 0;
}

int probes_journal_file_next(struct journal_file *f, uint64_t *off)
{
	uint64_t e;
	if (f->broken)
		return -EINVAL;
	if (f->consumed >= f->h.n_entries)
		return 0;
	if (f->waiting && f->consumed != f->waited_at)
		f->waiting = false;
	if (f->arr_off == 0) {
		if (f->h.entry_array_offset == 0)
			return not_yet(f); /* not linked yet */
		if (load_array(f, f->h.entry_array_offset) < 0)
			return broken(f, "bad first entry array");
	}
	while (f->arr_idx >= f->arr_cap) {
		uint64_t next;
		if (array_next(f, f->arr_off, &next) < 0)
			return broken(f, "unreadable entry array");
		if (next == 0)
			return not_yet(f); /* the next array is not linked yet */
		if (next <= f->arr_off || load_array(f, next) < 0)
			return broken(f, "bad entry array");
	}
	if (array_item(f, f->arr_off, f->arr_idx, &e) < 0)
		return broken(f, "unreadable entry array");
	if (e == 0)
		return not_yet(f); /* not written yet */
	if (e >= f->limit)
		return broken(f, "an entry beyond the end of the file");
	if (e <= f->last_entry || e % 8 || e < f->h.header_size)
		return broken(f, "entry offsets out of order");
	f->arr_idx++;
	f->consumed++;
	f->last_entry = e;
	f->waiting = false;
	f->stalls = 0;
	*off = e;
	return 1;
}

/* ---- DATA payloads -------------------------------------------------------------- */

static void *zstd_alloc(void *opaque, size_t n)
{
	return tb_try_malloc(n);
}

static void zstd_free(void *opaque, void *p)
{
	tb_free(p);
}

/* Decompress src[0, n) (XZ, LZ4 or ZSTD per flags) into f->inflate, at
 * most JOURNAL_VALUE_MAX bytes. Returns 0 (*trunc set when cut), or < 0
 * when it cannot be decoded. */
static int decompress(struct journal_file *f, unsigned flags, const uint8_t *src, size_t n,
                      bool *trunc)
{
	*trunc = false;
	vec_clear(&f->inflate);
	vec_reserve(&f->inflate, JOURNAL_VALUE_MAX);
	uint8_t *dst = f->inflate.data;
	if (flags == JOURNAL_COMPRESSED_LZ4) {
		/* systemd: le64 decompressed size, then one LZ4 block. */
		if (n < 8)
			return -EINVAL;
		uint64_t want = tb_ld64(src);
		ssize_t got =
		    probes_journal_lz4_block(src + 8, n - 8, dst, JOURNAL_VALUE_MAX, trunc);
		if (got < 0 || (!*trunc && (uint64_t)got != want))
			return -EINVAL;
		f->inflate.len = (size_t)got;
		return 0;
	}
	if (flags != JOURNAL_COMPRESSED_ZSTD)
		return -ENOTSUP; /* XZ: no decoder here */
	if (!f->zstd) {
		ZSTD_customMem mem = {zstd_alloc, zstd_free, NULL};
		f->zstd = ZSTD_createDCtx_advanced(mem);
		if (!f->zstd)
			return -ENOMEM;
		/* A frame may ask for a window up to 8 MiB, not the 128 MiB
		 * default: larger ones are refused (undecoded). */
		ZSTD_DCtx_setParameter(f->zstd, ZSTD_d_windowLogMax, 23);
	}
	ZSTD_DCtx_reset(f->zstd, ZSTD_reset_session_only);
	ZSTD_inBuffer in = {src, n, 0};
	ZSTD_outBuffer out = {dst, JOURNAL_VALUE_MAX, 0};
	for (;;) {
		size_t in_before = in.pos, out_before = out.pos;
		size_t r = ZSTD_decompressStream(f->zstd, &out, &in);
		if (ZSTD_isError(r) || (r && in.pos == in_before && out.pos == out_before))
			return -EINVAL;
		if (r == 0)
			break; /* frame complete */
		if (out.pos == out.size) {
			*trunc = true;
			break;
		}
		if (in.pos == in.size)
			return -EINVAL; /* the frame is cut off */
	}
	f->inflate.len = out.pos;
	return 0;
}

static uint64_t payload_hash(const struct journal_file *f, const uint8_t *p, size_t n)
{
	return f->keyed ? probes_journal_siphash24(p, n, f->h.file_id)
	                : probes_journal_jenkins64(p, n);
}

/* The payload of the DATA object at off ("NAME=value"), decoded, in
 * *p[0, *n), valid until the next read; *flags JOURNAL_FIELD_*. Returns 0,
 * or -EINVAL for a bad object (also when the payload's hash is wrong). An
 * undecodable payload is 0 with JOURNAL_FIELD_UNDECODED and *p NULL. */
static int data_payload(struct journal_file *f, uint64_t off, const uint8_t **p, size_t *n,
                        unsigned *flags)
{
	struct journal_dcache_slot *slot = NULL;
	if (f->dcache) {
		slot = &f->dcache[(off / 8) % JOURNAL_DCACHE];
		if (slot->off == off) {
			*p = slot->val;
			*n = slot->len;
			*flags = slot->flags;
			return 0;
		}
	}
	const size_t poff = f->compact ? DATA_PAYLOAD_COMPACT : DATA_PAYLOAD;
	const uint8_t *o;
	uint64_t size;
	if (object(f, off, JOURNAL_OBJECT_DATA, poff + 1, poff, &o, &size) < 0)
		return -EINVAL;
	unsigned comp =
	    o[1] & (JOURNAL_COMPRESSED_XZ | JOURNAL_COMPRESSED_LZ4 | JOURNAL_COMPRESSED_ZSTD);
	uint64_t stored = tb_ld64(o + DATA_HASH);
	uint64_t psize = size - poff;
	const uint8_t *pl;
	*flags = 0;
	if (comp == 0) {
		size_t take = psize > JOURNAL_VALUE_MAX ? JOURNAL_VALUE_MAX : (size_t)psize;
		if (rd(f, off + poff, take, &pl) < 0)
			return -EINVAL;
		if (take < psize) {
			*flags = JOURNAL_FIELD_TRUNCATED;
		} else if (payload_hash(f, pl, take) != stored) {
			return -EINVAL;
		}
		*p = pl;
		*n = take;
	} else {
		bool trunc;
		if ((comp & (comp - 1)) || psize > JOURNAL_COMPRESSED_MAX ||
		    rd(f, off + poff, (size_t)psize, &pl) < 0 ||
		    decompress(f, comp, pl, (size_t)psize, &trunc) < 0) {
			*p = NULL;
			*n = 0;
			*flags = JOURNAL_FIELD_UNDECODED;
			return 0;
		}
		if (trunc)
			*flags = JOURNAL_FIELD_TRUNCATED;
		else if (payload_hash(f, f->inflate.data, f->inflate.len) != stored)
			return -EINVAL;
		*p = f->inflate.data;
		*n = f->inflate.len;
	}
	if (slot && *n && *n <= JOURNAL_DCACHE_VALUE_MAX) {
		tb_free(slot->val);
		slot->val = tb_memdup(*p, *n);
		slot->len = (uint32_t)*n;
		slot->flags = (uint8_t)*flags;
		slot->off = off;
		*p = slot->val;
	}
	return 0;
}

int probes_journal_file_read_entry(struct journal_file *f, uint64_t off, struct journal_entry *e,
                                   journal_field_fn fn, void *ctx)
{
	const uint8_t *o;
	uint64_t size;
	size_t isz = f->compact ? 4 : 16;
	memset(e, 0, sizeof *e);
	if (object(f, off, JOURNAL_OBJECT_ENTRY, ENTRY_ITEMS, ENTRY_ITEMS, &o, &size) < 0 ||
	    (size - ENTRY_ITEMS) / isz > JOURNAL_ENTRY_ITEMS_MAX) {
		f->stats.bad_entries++;
		return -EINVAL;
	}
	e->offset = off;
	e->seqnum = tb_ld64(o + ENTRY_SEQNUM);
	e->realtime_us = tb_ld64(o + ENTRY_REALTIME);
	e->monotonic_us = tb_ld64(o + ENTRY_MONOTONIC);
	memcpy(e->boot_id, o + ENTRY_BOOT_ID, 16);
	e->xor_hash = tb_ld64(o + ENTRY_XOR_HASH);
	e->n_items = (uint32_t)((size - ENTRY_ITEMS) / isz);
	if (!fn)
		return 0;
	/* The item offsets, copied: reading the DATA objects moves windows. */
	uint64_t items[256], *it = items;
	if (e->n_items > TB_ARRAY_SIZE(items))
		it = tb_malloc(e->n_items * sizeof *it);
	int rc = 0;
	if (e->n_items && rd(f, off + ENTRY_ITEMS, e->n_items * isz, &o) < 0) {
		f->stats.bad_entries++;
		rc = -EINVAL;
		goto out;
	}
	for (uint32_t i = 0; i < e->n_items; i++)
		it[i] = f->compact ? tb_ld32(o + i * isz) : tb_ld64(o + i * isz);
	for (uint32_t i = 0; i < e->n_items; i++) {
		const uint8_t *p;
		size_t n;
		unsigned flags;
		if (data_payload(f, it[i], &p, &n, &flags) < 0) {
			f->stats.bad_items++;
			continue;
		}
		f->stats.undecoded += (flags & JOURNAL_FIELD_UNDECODED) != 0;
		f->stats.truncated += (flags & JOURNAL_FIELD_TRUNCATED) != 0;
		if ((rc = fn(ctx, p, n, flags)) != 0)
			break;
	}
out:
	if (it != items)
		tb_free(it);
	return rc;
}

/* ---- hash tables ---------------------------------------------------------------- */

/* The bucket head for hash h of the table whose items are at off (the
 * header points past the object header), size bytes. */
static int bucket_head(struct journal_file *f, uint64_t off, uint64_t size, int type, uint64_t h,
                       uint64_t *head)
{
	const uint8_t *p;
	uint64_t osize;
	if (size < HASH_ITEM || size % HASH_ITEM || size > f->limit || off < O_HEADER ||
	    object(f, off - O_HEADER, type, O_HEADER + size, O_HEADER, &p, &osize) < 0)
		return -EINVAL;
	uint64_t b = h % (size / HASH_ITEM);
	if (rd(f, off + b * HASH_ITEM, 8, &p) < 0)
		return -EINVAL;
	*head = tb_ld64(p);
	return 0;
}

int probes_journal_file_find_data(struct journal_file *f, const void *data, size_t n, uint64_t *off)
{
	if (f->h.data_hash_table_size == 0)
		return 0;
	uint64_t h = payload_hash(f, data, n), o;
	if (bucket_head(f, f->h.data_hash_table_offset, f->h.data_hash_table_size,
	                JOURNAL_OBJECT_DATA_HASH_TABLE, h, &o) < 0)
		return -EINVAL;
	for (unsigned steps = 0; o; steps++) {
		const uint8_t *p, *pl;
		uint64_t size, stored, next;
		size_t pn;
		unsigned flags;
		if (steps >= JOURNAL_HASH_CHAIN_MAX ||
		    object(f, o, JOURNAL_OBJECT_DATA, DATA_PAYLOAD, DATA_PAYLOAD, &p, &size) < 0)
			return -EINVAL;
		next = tb_ld64(p + DATA_NEXT_HASH);
		stored = tb_ld64(p + DATA_HASH);
		if (stored == h && data_payload(f, o, &pl, &pn, &flags) == 0 &&
		    !(flags & (JOURNAL_FIELD_UNDECODED | JOURNAL_FIELD_TRUNCATED)) && pn == n &&
		    memcmp(pl, data, n) == 0) {
			*off = o;
			return 1;
		}
		if (next && next <= o)
			return -EINVAL; /* chains grow towards the end of the file */
		o = next;
	}
	return 0;
}

int probes_journal_file_find_field(struct journal_file *f, const void *name, size_t n,
                                   uint64_t *off)
{
	if (f->h.field_hash_table_size == 0)
		return 0;
	uint64_t h = payload_hash(f, name, n), o;
	if (bucket_head(f, f->h.field_hash_table_offset, f->h.field_hash_table_size,
	                JOURNAL_OBJECT_FIELD_HASH_TABLE, h, &o) < 0)
		return -EINVAL;
	for (unsigned steps = 0; o; steps++) {
		const uint8_t *p;
		uint64_t size, next;
		if (steps >= JOURNAL_HASH_CHAIN_MAX ||
		    object(f, o, JOURNAL_OBJECT_FIELD, FIELD_PAYLOAD, FIELD_PAYLOAD, &p, &size) < 0)
			return -EINVAL;
		next = tb_ld64(p + FIELD_NEXT_HASH);
		if (tb_ld64(p + FIELD_HASH) == h && size - FIELD_PAYLOAD == n &&
		    (n == 0 || (rd(f, o + FIELD_PAYLOAD, n, &p) == 0 && memcmp(p, name, n) == 0))) {
			*off = o;
			return 1;
		}
		if (next && next <= o)
			return -EINVAL;
		o = next;
	}
	return 0;
}

int probes_journal_file_data_entries(struct journal_file *f, uint64_t data_off,
                                     int (*fn)(void *ctx, uint64_t entry_off), void *ctx)
{
	const uint8_t *p;
	uint64_t size;
	if (object(f, data_off, JOURNAL_OBJECT_DATA, DATA_PAYLOAD, DATA_PAYLOAD, &p, &size) < 0)
		return -EINVAL;
	uint64_t n = tb_ld64(p + DATA_N_ENTRIES), first = tb_ld64(p + DATA_ENTRY);
	uint64_t arr = tb_ld64(p + DATA_ENTRY_ARRAY), last = 0;
	int rc;
	if (n == 0)
		return 0;
	if ((rc = fn(ctx, first)) != 0)
		return rc;
	last = first;
	n--;
	for (unsigned links = 0; n && arr; links++) {
		uint64_t asize, next;
		if (links >= JOURNAL_CHAIN_MAX ||
		    object(f, arr, JOURNAL_OBJECT_ENTRY_ARRAY, ARRAY_ITEMS, ARRAY_NEXT + 8, &p,
		           &asize) < 0)
			return -EINVAL;
		next = tb_ld64(p + ARRAY_NEXT);
		uint64_t cap = (asize - ARRAY_ITEMS) / item_size(f);
		for (uint64_t i = 0; i < cap && n; i++, n--) {
			uint64_t e;
			if (array_item(f, arr, i, &e) < 0 || e <= last)
				return -EINVAL;
			if ((rc = fn(ctx, e)) != 0)
				return rc;
			last = e;
		}
		if (next && next <= arr)
			return -EINVAL;
		arr = next;
	}
	return 0;
}

int probes_journal_file_field_values(struct journal_file *f, const void *name, size_t n,
                                     journal_field_fn fn, void *ctx)
{
	uint64_t fo, o;
	const uint8_t *p;
	uint64_t size;
	int rc = probes_journal_file_find_field(f, name, n, &fo);
	if (rc <= 0)
		return rc;
	if (object(f, fo, JOURNAL_OBJECT_FIELD, FIELD_PAYLOAD, FIELD_PAYLOAD, &p, &size) < 0)
		return -EINVAL;
	o = tb_ld64(p + FIELD_HEAD_DATA);
	/* Newest first: each new DATA object is put at the head of its list. */
	for (unsigned steps = 0; o; steps++) {
		const uint8_t *pl;
		size_t pn;
		unsigned flags;
		uint64_t next;
		if (steps >= JOURNAL_HASH_CHAIN_MAX ||
		    object(f, o, JOURNAL_OBJECT_DATA, DATA_PAYLOAD, DATA_PAYLOAD, &p, &size) < 0)
			return -EINVAL;
		next = tb_ld64(p + DATA_NEXT_FIELD);
		if (data_payload(f, o, &pl, &pn, &flags) == 0 && (rc = fn(ctx, pl, pn, flags)))
			return rc;
		if (next && next >= o)
			return -EINVAL;
		o = next;
	}
	return 0;
}
