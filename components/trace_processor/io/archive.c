/*
 * Streaming reader of zip and tar archives holding traces: bytes go in as
 * they arrive, members come out whole (decompressed, in archive order),
 * for tp.c to sniff and import one after another. The archive itself is
 * never held: tar headers and zip local headers are parsed as the stream
 * passes, deflated zip members are inflated on the fly, so memory is the
 * members' contents (which Perfetto also holds) plus one header.
 *
 * tar (POSIX ustar, GNU, PAX), 512-byte blocks:
 *
 *   +--------------------------------------------------------------+
 *   | header: name[100] mode uid gid size[12] (octal, or base-256   |
 *   | when the top bit is set) mtime chksum typeflag linkname       |
 *   | magic[257] "ustar\0" "00" or "ustar  \0" ... prefix[345..500]|
 *   +--------------------------------------------------------------+
 *   | data, padded to 512 | header | data | ... | 512 zeros x 2    |
 *   +--------------------------------------------------------------+
 *   typeflag '0'/'\0' file, 'L' GNU long name of the next entry, 'x'/'g'
 *   PAX records (skipped: the ustar fields are used), '5' directory;
 *   anything else must be empty.
 *
 * zip, read front to back through the local headers (the central
 * directory at the end is not needed to stream, and ends the read):
 *
 *   +-----------+-----+-------+--------+------+-------+-------+------+------+------+
 *   | 50 4b 03 04| ver | flags | method | time | crc32 | csize | usize| nlen | xlen |
 *   +-----------+-----+-------+--------+------+-------+-------+------+------+------+
 *   | name | extra (0x0001: zip64 usize, csize) | data | [descriptor] |
 *   descriptor (flags bit 3): [50 4b 07 08] crc32 csize usize (8-byte
 *   sizes for zip64). method 0 stored, 8 deflate; a stored member with a
 *   descriptor has no length and is refused. 50 4b 01 02 / 05 06 end it.
 *
 * Paths with a component starting with '.' (macOS resource forks,
 * .DS_Store) and directories are skipped, as Perfetto does.
 */
#include "io.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

enum {
	ST_TAR_HEADER,
	ST_TAR_DATA,
	ST_ZIP_SIG,
	ST_ZIP_LOCAL,
	ST_ZIP_NAME,
	ST_ZIP_DATA,
	ST_ZIP_DESC_SIG,
	ST_ZIP_DESC,
	ST_DONE,
};

#define TAR_BLOCK 512
#define ZIP_LOCAL_FIXED 26 /* local header after its signature */

struct tp_archive {
	enum tp_archive_kind kind;
	int state;
	VEC(uint8_t) hdr; /* header bytes gathered so far */
	VEC(struct tp_archive_member) members;
	uint64_t total;      /* member bytes held */
	uint64_t remaining;  /* data bytes left in the current entry */
	uint64_t pad;        /* tar: padding after the data */
	bool store;          /* the current entry is a member (else skipped) */
	bool long_name_next; /* tar: the current entry is a GNU long name */
	char *long_name;
	unsigned zero_blocks;
	/* zip */
	z_stream zs;
	bool zs_live, deflated, descriptor, zip64;
	uint32_t crc_want;
	uint64_t csize, usize;
	uint64_t inflated_in; /* compressed bytes of the current member so far */
	uint16_t name_len, extra_len;
};

struct tp_archive *tp_archive_new(enum tp_archive_kind kind)
{
	struct tp_archive *a = tb_calloc(1, sizeof *a);
	a->kind = kind;
	a->state = kind == TP_ARCHIVE_TAR ? ST_TAR_HEADER : ST_ZIP_SIG;
	return a;
}

void tp_archive_free(struct tp_archive *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->members.len; i++) {
		tb_free(a->members.data[i].name);
		tb_free(a->members.data[i].data);
	}
	vec_release(&a->members);
	vec_release(&a->hdr);
	tb_free(a->long_name);
	if (a->zs_live)
		inflateEnd(&a->zs);
	tb_free(a);
}

size_t tp_archive_count(const struct tp_archive *a)
{
	return a->members.len;
}

struct tp_archive_member *tp_archive_member(struct tp_archive *a, size_t i)
{
	return &a->members.data[i];
}

bool tp_archive_sniff(const uint8_t *p, size_t n, enum tp_archive_kind *kind)
{
	if (n >= 4 && !memcmp(p, "PK\3\4", 4)) {
		*kind = TP_ARCHIVE_ZIP;
		return true;
	}
	if ((n >= 263 && !memcmp(p + 257, "ustar", 6)) ||
	    (n >= 265 && !memcmp(p + 257, "ustar  ", 8))) {
		*kind = TP_ARCHIVE_TAR;
		return true;
	}
	return false;
}

static int bad(struct tb_err *err, const char *fmt, const char *subject)
{
	if (!tb_err_is_set(err)) {
		err->code = -EINVAL;
		snprintf(err->msg, sizeof err->msg, fmt, subject);
	}
	return -EINVAL;
}

static const char *cur_name(const struct tp_archive *a)
{
	return a->store && a->members.len ? a->members.data[a->members.len - 1].name : "?";
}

/* Append up to want - hdr.len bytes of the input to hdr; true once it
 * holds want bytes. */
static bool gather(struct tp_archive *a, const uint8_t **p, size_t *n, size_t want)
{
	size_t take = want - a->hdr.len;
	if (take > *n)
		take = *n;
	vec_reserve(&a->hdr, take);
	memcpy(a->hdr.data + a->hdr.len, *p, take);
	a->hdr.len += take;
	*p += take;
	*n -= take;
	return a->hdr.len == want;
}

/* A path Perfetto ignores: a component starting with '.' (but . and ..). */
static bool hidden(const char *path)
{
	for (const char *c = path; *c; c = strchr(c, '/') ? strchr(c, '/') + 1 : c + strlen(c)) {
		size_t len = strcspn(c, "/");
		if (len && c[0] == '.' && !(len == 1 || (len == 2 && c[1] == '.')))
			return true;
		if (!c[len])
			break;
	}
	return false;
}

/* Start a member called name (taken over) of expected size hint. */
static int member_begin(struct tp_archive *a, char *name, uint64_t size, uint64_t hint,
                        struct tb_err *err)
{
	size_t len = strlen(name);
	a->store = len && name[len - 1] != '/' && !hidden(name);
	if (!a->store) {
		tb_free(name);
		return 0;
	}
	if (a->members.len >= TP_ARCHIVE_MAX_MEMBERS) {
		tb_free(name);
		return bad(err, "too many members in the archive (more than %s)", "65536");
	}
	struct tp_archive_member *m = vec_push_zeroed(&a->members);
	m->name = name;
	m->size = size;
	/* The size is a claim of the input: preallocate at most a bit of it. */
	if (hint > TP_ARCHIVE_PREALLOC_MAX)
		hint = TP_ARCHIVE_PREALLOC_MAX;
	if (hint) {
		m->data = tb_malloc(hint);
		m->cap = hint;
	}
	return 0;
}

/* Room for n more bytes in the current member. */
static int member_room(struct tp_archive *a, size_t n, struct tb_err *err)
{
	struct tp_archive_member *m = &a->members.data[a->members.len - 1];
	if (n > TP_ARCHIVE_MAX_BYTES - a->total)
		return bad(err, "archive member '%s' is too large to load", m->name);
	if (m->len + n > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;
		while (cap < m->len + n)
			cap *= 2;
		/* A small deflated member can claim a lot: fail, not abort. */
		uint8_t *data = tb_try_realloc(m->data, cap);
		if (!data)
			return bad(err, "archive member '%s' is too large to load", m->name);
		m->data = data;
		m->cap = cap;
	}
	return 0;
}

static int member_put(struct tp_archive *a, const uint8_t *p, size_t n, struct tb_err *err)
{
	if (!a->store || !n)
		return 0;
	if (member_room(a, n, err) < 0)
		return -EINVAL;
	struct tp_archive_member *m = &a->members.data[a->members.len - 1];
	memcpy(m->data + m->len, p, n);
	m->len += n;
	a->total += n;
	return 0;
}

/* ---- tar ---------------------------------------------------------------- */

static bool tar_number(const uint8_t *f, size_t size, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;
	if (f[0] & 0x80) { /* base-256, big-endian, positive only */
		if (f[0] & 0x40)
			return false;
		v = f[0] & 0x3f;
		for (i = 1; i < size; i++) {
			if (v >> 56)
				return false;
			v = v << 8 | f[i];
		}
		*out = v;
		return true;
	}
	while (i < size && f[i] == ' ')
		i++;
	for (; i < size && f[i] && f[i] != ' '; i++) {
		if (f[i] < '0' || f[i] > '7' || v >> 60)
			return false;
		v = v << 3 | (uint64_t)(f[i] - '0');
	}
	*out = v;
	return true;
}

static char *field_str(const uint8_t *f, size_t size)
{
	size_t n = strnlen((const char *)f, size);
	char *s = tb_malloc(n + 1);
	memcpy(s, f, n);
	s[n] = '\0';
	return s;
}

static int tar_header(struct tp_archive *a, struct tb_err *err)
{
	const uint8_t *h = a->hdr.data;
	uint64_t size;
	bool zero = true;
	for (size_t i = 0; i < TAR_BLOCK && zero; i++)
		zero = h[i] == 0;
	if (zero) {
		if (++a->zero_blocks == 2)
			a->state = ST_DONE;
		return 0;
	}
	a->zero_blocks = 0;
	if (memcmp(h + 257, "ustar", 5) != 0)
		return bad(err, "corrupt tar archive: %s", "bad header magic");
	if (!tar_number(h + 124, 12, &size))
		return bad(err, "corrupt tar archive: %s", "bad size field");
	uint8_t type = h[156];
	a->remaining = size;
	a->pad = (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK;
	a->store = false;
	a->long_name_next = false;
	a->state = ST_TAR_DATA;
	if (type == 'L') {
		if (size > TP_ARCHIVE_NAME_MAX)
			return bad(err, "corrupt tar archive: %s", "long name too long");
		a->long_name_next = true;
		tb_free(a->long_name);
		a->long_name = NULL;
		return 0;
	}
	/* A GNU long name belongs to the entry right after it, whatever its
	 * type: a directory or PAX header consumes it too. */
	char *name = a->long_name;
	a->long_name = NULL;
	if (type != '0' && type != '\0') {
		tb_free(name);
		if (size && type != 'x' && type != 'g' && type != '5')
			return bad(err, "unsupported tar entry type '%s'",
			           (char[]){(char)type, '\0'});
		return 0;
	}
	if (!name) {
		char *base = field_str(h, 100), *prefix = field_str(h + 345, 155);
		if (*prefix) {
			size_t len = strlen(prefix) + 1 + strlen(base) + 1;
			name = tb_malloc(len);
			snprintf(name, len, "%s/%s", prefix, base);
			tb_free(base);
		} else {
			name = base;
		}
		tb_free(prefix);
	}
	return member_begin(a, name, size, size, err);
}

static int tar_data(struct tp_archive *a, const uint8_t **p, size_t *n, struct tb_err *err)
{
	if (a->remaining) {
		size_t take = *n < a->remaining ? *n : (size_t)a->remaining;
		if (a->long_name_next) {
			vec_reserve(&a->hdr, take);
			memcpy(a->hdr.data + a->hdr.len, *p, take);
			a->hdr.len += take;
		} else if (member_put(a, *p, take, err) < 0) {
			return -EINVAL;
		}
		*p += take;
		*n -= take;
		a->remaining -= take;
		if (a->remaining)
			return 0;
		if (a->long_name_next)
			a->long_name = field_str(a->hdr.data, a->hdr.len);
	}
	size_t skip = *n < a->pad ? *n : (size_t)a->pad;
	*p += skip;
	*n -= skip;
	a->pad -= skip;
	if (!a->pad) {
		a->state = ST_TAR_HEADER;
		vec_clear(&a->hdr);
	}
	return 0;
}

/* ---- zip ---------------------------------------------------------------- */

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static int zip_local(struct tp_archive *a, struct tb_err *err)
{
	const uint8_t *h = a->hdr.data;
	uint16_t flags = le16(h + 2), method = le16(h + 4);
	if (flags & 1)
		return bad(err, "cannot read the zip archive: %s", "encrypted members");
	if (method != 0 && method != 8) {
		char m[8];
		snprintf(m, sizeof m, "%u", method);
		return bad(err, "cannot read the zip archive: compression method %s", m);
	}
	a->deflated = method == 8;
	a->descriptor = flags & 8;
	a->crc_want = le32(h + 10);
	a->csize = le32(h + 14);
	a->usize = le32(h + 18);
	a->name_len = le16(h + 22);
	a->extra_len = le16(h + 24);
	a->zip64 = false;
	a->state = ST_ZIP_NAME;
	return 0;
}

static int zip_name(struct tp_archive *a, struct tb_err *err)
{
	const uint8_t *x = a->hdr.data + a->name_len, *end = x + a->extra_len;
	while (end - x >= 4) { /* the zip64 extra field: sizes that did not fit */
		uint16_t id = le16(x), len = le16(x + 2);
		if ((size_t)(end - x - 4) < len)
			break;
		if (id == 1) {
			const uint8_t *v = x + 4;
			a->zip64 = true;
			if (a->usize == UINT32_MAX && len >= 8)
				a->usize = le64(v), v += 8, len -= 8;
			if (a->csize == UINT32_MAX && len >= 8)
				a->csize = le64(v);
		}
		x += 4 + le16(x + 2);
	}
	if (!a->deflated && a->descriptor)
		return bad(err, "cannot read the zip archive: %s",
		           "stored member of unknown length");
	char *name = field_str(a->hdr.data, a->name_len);
	if (member_begin(a, name, a->csize, a->descriptor ? 0 : a->usize, err) < 0)
		return -EINVAL;
	if (a->deflated) {
		memset(&a->zs, 0, sizeof a->zs);
		if (inflateInit2(&a->zs, -MAX_WBITS) != Z_OK)
			return bad(err, "cannot read the zip archive: %s", "inflateInit failed");
		a->zs_live = true;
		a->inflated_in = 0;
	}
	a->remaining = a->csize;
	a->state = ST_ZIP_DATA;
	return 0;
}

/* The current member is complete: check its CRC. */
static int zip_member_end(struct tp_archive *a, struct tb_err *err)
{
	if (a->store) {
		const struct tp_archive_member *m = &a->members.data[a->members.len - 1];
		uLong crc = crc32(0L, Z_NULL, 0);
		for (size_t o = 0; o < m->len;) {
			uInt chunk = m->len - o > UINT32_MAX ? UINT32_MAX : (uInt)(m->len - o);
			crc = crc32(crc, m->data + o, chunk);
			o += chunk;
		}
		if ((uint32_t)crc != a->crc_want)
			return bad(err, "corrupt zip archive: CRC mismatch in '%s'", m->name);
	}
	a->state = ST_ZIP_SIG;
	vec_clear(&a->hdr);
	return 0;
}

static int zip_inflate(struct tp_archive *a, const uint8_t **p, size_t *n, struct tb_err *err)
{
	while (*n) {
		uint8_t out[16384];
		size_t in = *n;
		if (!a->descriptor && in > a->remaining)
			in = (size_t)a->remaining;
		if (in > UINT32_MAX)
			in = UINT32_MAX;
		a->zs.next_in = (Bytef *)*p;
		a->zs.avail_in = (uInt)in;
		a->zs.next_out = out;
		a->zs.avail_out = sizeof out;
		int z = inflate(&a->zs, Z_NO_FLUSH);
		size_t used = in - a->zs.avail_in;
		*p += used;
		*n -= used;
		a->remaining -= a->descriptor ? 0 : used;
		a->inflated_in += used;
		if (member_put(a, out, sizeof out - a->zs.avail_out, err) < 0)
			return -EINVAL;
		if (a->store &&
		    tp_archive_is_bomb(a->inflated_in, a->members.data[a->members.len - 1].len)) {
			tb_err_set(err, -EFBIG,
			           "archive member '%s' inflates more than %u times its compressed "
			           "size (a decompression bomb?): refused",
			           cur_name(a), TP_ARCHIVE_MAX_RATIO);
			return -EFBIG;
		}
		if (z == Z_STREAM_END) {
			inflateEnd(&a->zs);
			a->zs_live = false;
			if (a->descriptor) {
				a->state = ST_ZIP_DESC_SIG;
				vec_clear(&a->hdr);
				return 0;
			}
			/* Bytes after the deflate stream but inside csize are
			 * skipped by zip_data. */
			return a->remaining ? 0 : zip_member_end(a, err);
		}
		if (z != Z_OK && z != Z_BUF_ERROR)
			return bad(err, "corrupt zip archive: cannot inflate '%s'", cur_name(a));
		if (!a->descriptor && !a->remaining && a->zs.avail_out)
			return bad(err, "corrupt zip archive: '%s' is cut short", cur_name(a));
		if (!used && a->zs.avail_out)
			return 0; /* needs more input */
	}
	return 0;
}

static int zip_data(struct tp_archive *a, const uint8_t **p, size_t *n, struct tb_err *err)
{
	if (a->zs_live)
		return zip_inflate(a, p, n, err);
	/* Stored data, or what follows a finished deflate stream in csize. */
	size_t take = *n < a->remaining ? *n : (size_t)a->remaining;
	if (!a->deflated && member_put(a, *p, take, err) < 0)
		return -EINVAL;
	*p += take;
	*n -= take;
	a->remaining -= take;
	return a->remaining ? 0 : zip_member_end(a, err);
}

static int zip_step(struct tp_archive *a, const uint8_t **p, size_t *n, struct tb_err *err)
{
	switch (a->state) {
	case ST_ZIP_SIG:
		if (!gather(a, p, n, 4))
			return 0;
		if (!memcmp(a->hdr.data, "PK\1\2", 4) || !memcmp(a->hdr.data, "PK\5\6", 4)) {
			a->state = ST_DONE;
			return 0;
		}
		if (memcmp(a->hdr.data, "PK\3\4", 4) != 0)
			return bad(err, "corrupt zip archive: %s", "bad local header signature");
		vec_clear(&a->hdr);
		a->state = ST_ZIP_LOCAL;
		return 0;
	case ST_ZIP_LOCAL:
		if (!gather(a, p, n, ZIP_LOCAL_FIXED))
			return 0;
		if (zip_local(a, err) < 0)
			return -EINVAL;
		vec_clear(&a->hdr);
		return 0;
	case ST_ZIP_NAME:
		if (!gather(a, p, n, (size_t)a->name_len + a->extra_len))
			return 0;
		return zip_name(a, err);
	case ST_ZIP_DATA:
		return zip_data(a, p, n, err);
	case ST_ZIP_DESC_SIG: /* the optional descriptor signature */
		if (!gather(a, p, n, 4))
			return 0;
		if (!memcmp(a->hdr.data, "PK\7\10", 4))
			vec_clear(&a->hdr);
		a->state = ST_ZIP_DESC;
		return 0;
	case ST_ZIP_DESC:
		if (!gather(a, p, n, a->zip64 ? 20 : 12))
			return 0;
		a->crc_want = le32(a->hdr.data);
		return zip_member_end(a, err);
	default:
		return 0;
	}
}

int tp_archive_feed(struct tp_archive *a, const uint8_t *p, size_t n, struct tb_err *err)
{
	while (n && a->state != ST_DONE) {
		int rc = 0;
		if (a->state == ST_TAR_HEADER) {
			if (gather(a, &p, &n, TAR_BLOCK)) {
				rc = tar_header(a, err);
				vec_clear(&a->hdr);
			}
		} else if (a->state == ST_TAR_DATA) {
			rc = tar_data(a, &p, &n, err);
		} else {
			rc = zip_step(a, &p, &n, err);
		}
		if (rc < 0)
			return rc;
	}
	return 0;
}

int tp_archive_finish(struct tp_archive *a, struct tb_err *err)
{
	bool clean = a->state == ST_DONE ||
	             ((a->state == ST_TAR_HEADER || a->state == ST_ZIP_SIG) && a->hdr.len == 0);
	if (!clean)
		return bad(err, "truncated %s archive", a->kind == TP_ARCHIVE_TAR ? "tar" : "zip");
	return 0;
}
