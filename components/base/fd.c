/*
 * File descriptor helpers: whole reads and writes that survive EINTR, short
 * transfers and non-blocking fds (they wait with poll instead of spinning),
 * flag setters, a capped whole-file read for procfs, sysfs and config files,
 * an open that refuses FIFOs and devices without waiting on them, temporary
 * files beside an output for replace-on-success writes, and a close that
 * cannot be done twice.
 */
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Wait until fd is ready for events; 0 or -errno. */
static int wait_fd(int fd, short events)
{
	struct pollfd pfd = {.fd = fd, .events = events};
	for (;;) {
		int r = poll(&pfd, 1, -1);
		if (r >= 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

ssize_t tb_read_all(int fd, void *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = read(fd, (char *)buf + done, n - done);
		if (r > 0) {
			done += (size_t)r;
		} else if (r == 0) {
			break;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = wait_fd(fd, POLLIN);
			if (w < 0)
				return w;
		} else if (errno != EINTR) {
			return -errno;
		}
	}
	return (ssize_t)done;
}

int tb_write_all(int fd, const void *buf, size_t n)
{
	size_t done = 0;
	while (done < n) {
		ssize_t r = write(fd, (const char *)buf + done, n - done);
		if (r >= 0) {
			done += (size_t)r;
		} else if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = wait_fd(fd, POLLOUT);
			if (w < 0)
				return w;
		} else if (errno != EINTR) {
			return -errno;
		}
	}
	return 0;
}

static int set_flag(int fd, int get, int set, int flag, bool on)
{
	int fl = fcntl(fd, get);
	if (fl < 0)
		return -errno;
	int nfl = on ? fl | flag : fl & ~flag;
	if (nfl != fl && fcntl(fd, set, nfl) < 0)
		return -errno;
	return 0;
}

int tb_set_nonblock(int fd, bool on)
{
	return set_flag(fd, F_GETFL, F_SETFL, O_NONBLOCK, on);
}

int tb_set_cloexec(int fd, bool on)
{
	return set_flag(fd, F_GETFD, F_SETFD, FD_CLOEXEC, on);
}

int tb_open_regular(const char *path, int extra_flags, struct stat *st, struct tb_err *err)
{
	struct stat tmp;
	int rc, fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | extra_flags);
	if (fd < 0)
		return tb_err_errno(err, -errno, "cannot open '%s'", path);
	if (!st)
		st = &tmp;
	if (fstat(fd, st) < 0) {
		rc = tb_err_errno(err, -errno, "cannot stat '%s'", path);
		goto fail;
	}
	if (!S_ISREG(st->st_mode)) {
		rc = tb_err_set(err, -EINVAL, "'%s' is not a regular file", path);
		goto fail;
	}
	if ((rc = tb_set_nonblock(fd, false)) < 0) {
		tb_err_errno(err, rc, "cannot read '%s'", path);
		goto fail;
	}
	return fd;
fail:
	tb_close(&fd);
	return rc;
}

int tb_create_beside(const char *path, unsigned mode, char *tmp, size_t n, struct tb_err *err)
{
	int k = snprintf(tmp, n, "%s.XXXXXX", path);
	if (k < 0 || (size_t)k >= n)
		return tb_err_set(err, -ENAMETOOLONG, "path '%s' is too long", path);
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return tb_err_errno(err, -errno, "cannot create '%s'", path);
	if ((mode & 07777) == 0600)
		return fd; /* mkostemp's mode: no need to ask for the umask */
	/* umask can only be read by setting it; the window is a few
	 * instructions wide and only files created meanwhile by other threads
	 * could see 077. */
	mode_t mask = umask(077);
	umask(mask);
	if (fchmod(fd, (mode_t)mode & ~mask & 07777) < 0) {
		int rc = tb_err_errno(err, -errno, "cannot create '%s'", path);
		tb_close(&fd);
		unlink(tmp);
		return rc;
	}
	return fd;
}

int tb_read_file(const char *path, char **buf, size_t *len, size_t max_bytes, struct tb_err *err)
{
	int fd = -1, ret = 0;
	char *data = NULL;
	size_t used = 0, cap = 0;
	struct stat st;

	*buf = NULL;
	*len = 0;
	if (max_bytes > SIZE_MAX / 4)
		max_bytes = SIZE_MAX / 4; /* keeps the growth arithmetic below exact */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		ret = tb_err_errno(err, -errno, "cannot open '%s'", path);
		goto out;
	}
	/* procfs and pipes report size 0: start small and grow. */
	cap = 4096;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
		cap = (uint64_t)st.st_size < max_bytes ? (size_t)st.st_size + 1 : max_bytes + 1;
	for (;;) {
		if (used == cap || !data) {
			size_t ncap = data ? cap * 2 : cap;
			if (ncap > max_bytes + 1)
				ncap = max_bytes + 1;
			char *nd = tb_try_realloc(data, ncap + 1);
			if (!nd) {
				ret = tb_err_set(err, -ENOMEM,
				                 "cannot read '%s': out of memory for %zu bytes",
				                 path, ncap);
				goto out;
			}
			data = nd;
			cap = ncap;
		}
		ssize_t r = tb_read_all(fd, data + used, cap - used);
		if (r < 0) {
			ret = tb_err_errno(err, (int)r, "cannot read '%s'", path);
			goto out;
		}
		used += (size_t)r;
		if (used > max_bytes) {
			ret = tb_err_set(err, -EFBIG, "'%s' is larger than %zu bytes", path,
			                 max_bytes);
			goto out;
		}
		if (used < cap)
			break; /* end of file */
	}
	data[used] = '\0';
	*buf = data;
	*len = used;
	data = NULL;
out:
	tb_free(data);
	tb_close(&fd);
	return ret;
}

void tb_close(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
		*fd = -1;
	}
}

int tb_notify_ready(const char *env)
{
	const char *s = getenv(env);
	char *end;
	int rc = 0;

	if (!s)
		return 0;
	errno = 0;
	long fd = strtol(s, &end, 10);
	if (errno || end == s || *end || fd < 0 || fd > INT32_MAX) {
		rc = -EBADF;
	} else {
		int f = (int)fd;
		rc = tb_write_all(f, "1", 1);
		tb_close(&f);
	}
	unsetenv(env);
	return rc;
}

#define FEED_WINDOW ((size_t)4 << 20)
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14; not in musl's headers yet */
#endif

/* Feed [*off, size) of a regular file by mmap windows; *off advances. */
static int feed_mapped(int fd, off_t size, off_t *off, size_t chunk,
                       int (*feed)(void *ctx, const uint8_t *p, size_t n), void *ctx)
{
	while (*off < size) {
		/* Compared as off_t: a 32-bit size_t would wrap past 4 GiB. */
		size_t len = size - *off < (off_t)FEED_WINDOW ? (size_t)(size - *off) : FEED_WINDOW;
		uint8_t *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, *off);
		if (map == MAP_FAILED)
			return 0; /* the rest is read() */
		/* One call maps the window's page-cache pages instead of a fault
		 * per page; refused before Linux 5.14 (then the pages fault in). */
		(void)madvise(map, len, MADV_POPULATE_READ);
		int rc = 0;
		for (size_t done = 0; done < len && rc >= 0; done += chunk)
			rc = feed(ctx, map + done, len - done < chunk ? len - done : chunk);
		munmap(map, len);
		if (rc < 0)
			return rc;
		*off += (off_t)len;
	}
	return 0;
}

int tb_feed_fd(int fd, size_t chunk, bool map, int (*feed)(void *ctx, const uint8_t *p, size_t n),
               void *ctx)
{
	struct stat st;
	TB_CHECK(chunk > 0);
	off_t off = 0;
	if (map && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) == 0) {
		int rc = feed_mapped(fd, st.st_size, &off, chunk, feed, ctx);
		if (rc < 0)
			return rc;
		if (off > 0 && lseek(fd, off, SEEK_SET) != off)
			return -errno;
	}
	uint8_t *buf = tb_malloc(chunk);
	int rc = 0;
	for (;;) {
		ssize_t n = read(fd, buf, chunk);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n < 0 ? -errno : 0;
			break;
		}
		if ((rc = feed(ctx, buf, (size_t)n)) < 0)
			break;
	}
	tb_free(buf);
	return rc;
}
