/*
 * The trace file the perfetto client writes. Each packet read back from the
 * service becomes one Trace.packet field:
 *
 *     0x0A | varint(len) | TracePacket bytes (len)      ... repeated
 *
 * which is exactly a serialized `Trace` message. A file target is written
 * to an unnamed file in the same folder (O_TMPFILE) and linked into place
 * only once the trace is complete, so an interrupted, failed or killed
 * capture leaves neither a truncated trace nor a hidden temporary file
 * behind. The link goes through a temporary name (".NAME.XXXXXX") renamed
 * over the target; with --no-clobber it is linkat(2) onto the target, which
 * refuses an existing one atomically. Where O_TMPFILE is not supported (or
 * /proc is not mounted) the file is that temporary name from the start,
 * removed on failure. "-" writes straight to stdout.
 */
#include "perfetto_cmd_int.h"
#include "pb.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_BUF_SIZE ((size_t)256 * 1024)

int perfetto_cmd_out_open(struct perfetto_cmd_out *o, const char *path, bool no_clobber,
                          uint64_t max_bytes, struct tb_err *err)
{
	struct stat st;
	const char *slash;
	size_t dir_len, n;

	memset(o, 0, sizeof *o);
	o->fd = -1;
	o->no_clobber = no_clobber;
	o->max_bytes = max_bytes;
	if (strcmp(path, "-") == 0) {
		o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
		if (o->fd < 0)
			return tb_err_errno(err, -errno, "cannot use stdout");
		o->buf = tb_malloc(OUT_BUF_SIZE);
		return 0;
	}
	if (no_clobber && lstat(path, &st) == 0)
		return tb_err_set(err, -EEXIST, "cannot write '%s': File exists (--no-clobber)",
		                  path);
	/* Up front, not after the whole capture when renaming onto it. */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return tb_err_set(err, -EISDIR, "cannot write '%s': Is a directory", path);
	slash = strrchr(path, '/');
	dir_len = slash ? (size_t)(slash - path) + 1 : 0;
	n = strlen(path) + 16;
	o->path = tb_strdup(path);
	o->tmp_path = tb_malloc(n);
	snprintf(o->tmp_path, n, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len);
	if (access("/proc/self/fd", X_OK) == 0) {
		char *dir = dir_len ? tb_strndup(path, dir_len) : tb_strdup(".");
		o->fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
		tb_free(dir);
		if (o->fd >= 0) {
			o->anon = true;
			o->buf = tb_malloc(OUT_BUF_SIZE);
			return 0;
		}
	}
	o->fd = mkstemp(o->tmp_path);
	if (o->fd < 0) {
		int e = -errno;
		tb_free(o->tmp_path);
		o->tmp_path = NULL;
		tb_free(o->path);
		o->path = NULL;
		return tb_err_errno(err, e, "cannot create a file beside '%s'", path);
	}
	tb_set_cloexec(o->fd, true);
	o->buf = tb_malloc(OUT_BUF_SIZE);
	return 0;
}

static int flush_buf(struct perfetto_cmd_out *o, struct tb_err *err)
{
	int rc;
	if (o->buf_len == 0)
		return 0;
	rc = tb_write_all(o->fd, o->buf, o->buf_len);
	o->buf_len = 0;
	if (rc)
		return tb_err_errno(err, rc, "cannot write '%s'", o->path ? o->path : "stdout");
	return 0;
}

int perfetto_cmd_out_packet(struct perfetto_cmd_out *o, const uint8_t *p, size_t n,
                            struct tb_err *err)
{
	uint8_t hdr[11];
	size_t hlen = (size_t)(pb_encode_varint(hdr + 1, n) - hdr);
	int rc;

	hdr[0] = 0x0A;
	if (o->max_bytes && o->bytes + hlen + n > o->max_bytes) {
		o->dropped++;
		return 0;
	}
	if (o->buf_len + hlen + n > OUT_BUF_SIZE && (rc = flush_buf(o, err)))
		return rc;
	if (hlen + n > OUT_BUF_SIZE) {
		if ((rc = tb_write_all(o->fd, hdr, hlen)) || (rc = tb_write_all(o->fd, p, n)))
			return tb_err_errno(err, rc, "cannot write '%s'",
			                    o->path ? o->path : "stdout");
	} else {
		memcpy(o->buf + o->buf_len, hdr, hlen);
		memcpy(o->buf + o->buf_len + hlen, p, n);
		o->buf_len += hlen + n;
	}
	o->bytes += hlen + n;
	o->packets++;
	return 0;
}

static void release(struct perfetto_cmd_out *o)
{
	tb_close(&o->fd);
	tb_free(o->buf);
	tb_free(o->path);
	tb_free(o->tmp_path);
	o->buf = NULL;
	o->path = o->tmp_path = NULL;
}

/* Give the unnamed file o->fd the name o->tmp_path (a fresh random suffix
 * for its XXXXXX), or, with no_clobber, the target itself. 0 or -errno. */
static int link_anon(struct perfetto_cmd_out *o, struct tb_err *err)
{
	char proc[32];
	size_t n = strlen(o->tmp_path);
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", o->fd);
	if (o->no_clobber) {
		if (linkat(AT_FDCWD, proc, AT_FDCWD, o->path, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		return tb_err_errno(err, -errno, "cannot write '%s'%s", o->path,
		                    errno == EEXIST ? " (--no-clobber)" : "");
	}
	for (unsigned attempt = 0; attempt < 64; attempt++) {
		static const char chars[] =
		    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
		uint64_t r =
		    tb_hash_u64((uint64_t)tb_mono_ns() ^ (uint64_t)getpid() << 32 ^ attempt);
		for (size_t i = n - 6; i < n; i++, r /= 62)
			o->tmp_path[i] = chars[r % 62];
		if (linkat(AT_FDCWD, proc, AT_FDCWD, o->tmp_path, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	return tb_err_errno(err, -errno, "cannot create a file beside '%s'", o->path);
}

int perfetto_cmd_out_finish(struct perfetto_cmd_out *o, struct tb_err *err)
{
	int rc = flush_buf(o, err);
	if (rc)
		goto fail;
	if (o->anon) {
		/* Named only now, complete. */
		if ((rc = link_anon(o, err)) < 0)
			goto fail;
		o->anon = false;
		if (o->no_clobber) {
			if (close(o->fd) != 0) {
				o->fd = -1;
				rc = tb_err_errno(err, -errno, "cannot write '%s'", o->path);
				unlink(o->path);
				goto fail;
			}
			o->fd = -1;
			release(o);
			return 0;
		}
	}
	if (close(o->fd) != 0) {
		o->fd = -1;
		rc = tb_err_errno(err, -errno, "cannot write '%s'", o->path ? o->path : "stdout");
		goto fail;
	}
	o->fd = -1;
	if (!o->tmp_path) {
		release(o);
		return 0;
	}
	if (o->no_clobber) {
		if (link(o->tmp_path, o->path) != 0) {
			rc = tb_err_errno(err, -errno, "cannot write '%s'%s", o->path,
			                  errno == EEXIST ? " (--no-clobber)" : "");
			goto fail;
		}
		unlink(o->tmp_path);
	} else if (rename(o->tmp_path, o->path) != 0) {
		rc = tb_err_errno(err, -errno, "cannot rename '%s' to '%s'", o->tmp_path, o->path);
		goto fail;
	}
	release(o);
	return 0;
fail:
	perfetto_cmd_out_abort(o);
	return rc;
}

/* The end of the last whole Trace.packet record of fd (0x0A, varint
 * length, that many bytes), read in blocks. */
static uint64_t whole_records_end(int fd)
{
	enum { BLOCK = 1 << 20 };
	struct stat st;
	uint8_t *buf;
	uint64_t pos = 0, wstart = 0, wlen = 0, size;

	if (fstat(fd, &st) != 0 || st.st_size <= 0)
		return 0;
	size = (uint64_t)st.st_size;
	buf = tb_malloc(BLOCK);
	while (pos < size) {
		uint64_t len = 0, off;
		size_t i = 1;
		unsigned shift = 0;
		if (pos < wstart || pos + 11 > wstart + wlen) {
			ssize_t n = pread(fd, buf, BLOCK, (off_t)pos);
			if (n <= 0)
				break;
			wstart = pos;
			wlen = (uint64_t)n;
		}
		off = pos - wstart;
		if (buf[off] != 0x0A)
			break;
		for (; off + i < wlen && i <= 10; i++, shift += 7) {
			len |= (uint64_t)(buf[off + i] & 0x7f) << shift;
			if (!(buf[off + i] & 0x80))
				break;
		}
		if (off + i >= wlen || i > 10 || (buf[off + i] & 0x80))
			break; /* a length cut short */
		if (len > size - pos - (i + 1))
			break; /* a record cut short */
		pos += i + 1 + len;
	}
	tb_free(buf);
	return pos;
}

int perfetto_cmd_out_finish_partial(struct perfetto_cmd_out *o, uint64_t *kept, struct tb_err *err)
{
	uint64_t end;
	int rc;
	*kept = 0;
	if (!o->tmp_path) {
		(void)flush_buf(o, err);
		release(o);
		return -ENODATA;
	}
	if ((rc = flush_buf(o, err)) == 0 && (end = whole_records_end(o->fd)) > 0) {
		if (ftruncate(o->fd, (off_t)end) != 0) {
			rc = tb_err_errno(err, -errno, "cannot cut '%s'", o->tmp_path);
		} else if ((rc = perfetto_cmd_out_finish(o, err)) == 0) {
			*kept = end;
			return 0;
		}
		return rc;
	}
	perfetto_cmd_out_abort(o);
	return rc ? rc : -ENODATA;
}

void perfetto_cmd_out_abort(struct perfetto_cmd_out *o)
{
	if (o->tmp_path && !o->anon)
		unlink(o->tmp_path); /* an unnamed file goes with its fd */
	release(o);
}
