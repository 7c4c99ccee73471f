/*
 * `util merge -o OUT [--manifest M] TRACE...`: pack traces into one TAR
 * (ustar) that the trace processor opens as one trace, each member named
 * after its input's base name, the manifest first as
 * perfetto_manifest.json. Then, unless --no-validate, the archive is
 * loaded once and the events its members could not place on the shared
 * timeline are counted (clock sync failures, negative timestamps): a
 * warning, or with --strict an error.
 *
 *   header (512 B): name[100] mode[8] uid[8] gid[8] size[12] mtime[12]
 *                   chksum[8] typeflag magic "ustar\0" version "00" ...
 *   data, padded to 512 B; two zero blocks end the archive
 */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sqlite3.h"

#define TAR_BLOCK 512
#define COPY_CHUNK ((size_t)1 << 20)

static void octal(char *dst, size_t n, uint64_t v)
{
	snprintf(dst, n, "%0*llo", (int)n - 1, (unsigned long long)v);
}

/* Write one member header for a file of size bytes. */
static int tar_header(int fd, const char *name, uint64_t size)
{
	uint8_t h[TAR_BLOCK] = {0};
	if (strlen(name) >= 100)
		return -ENAMETOOLONG;
	memcpy(h, name, strlen(name));
	octal((char *)h + 100, 8, 0644);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, size);
	octal((char *)h + 136, 12, 0);
	h[156] = '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (size_t i = 0; i < TAR_BLOCK; i++)
		sum += h[i];
	snprintf((char *)h + 148, 8, "%06o", sum);
	h[155] = ' ';
	return tb_write_all(fd, h, TAR_BLOCK);
}

static int tar_pad(int fd, uint64_t size)
{
	static const uint8_t zero[TAR_BLOCK];
	size_t pad = (size_t)((TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
	return pad ? tb_write_all(fd, zero, pad) : 0;
}

/* Append the file at path as member name. Returns 0 or -1 after printing. */
static int tar_add_file(int fd, const char *name, const char *path)
{
	int in = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		shell_error("merge: cannot read '%s': %s", path,
			    in < 0 || errno ? strerror(errno) : "not a regular file");
		if (in >= 0)
			close(in);
		return -1;
	}
	int rc = tar_header(fd, name, (uint64_t)st.st_size);
	uint8_t *buf = tb_malloc(COPY_CHUNK);
	uint64_t left = (uint64_t)st.st_size;
	while (rc == 0 && left) {
		ssize_t n = tb_read_all(in, buf, left < COPY_CHUNK ? (size_t)left : COPY_CHUNK);
		if (n <= 0) {
			rc = n < 0 ? (int)n : -EIO; /* the file shrank */
			break;
		}
		rc = tb_write_all(fd, buf, (size_t)n);
		left -= (uint64_t)n;
	}
	if (rc == 0)
		rc = tar_pad(fd, (uint64_t)st.st_size);
	tb_free(buf);
	close(in);
	if (rc < 0) {
		shell_error("merge: cannot add '%s': %s", path, strerror(-rc));
		return -1;
	}
	return 0;
}

static int tar_add_bytes(int fd, const char *name, const char *p, size_t n)
{
	int rc = tar_header(fd, name, n);
	if (rc == 0)
		rc = tb_write_all(fd, p, n);
	if (rc == 0)
		rc = tar_pad(fd, n);
	return rc;
}

/* Load the archive and count the events that could not be placed. */
static int validate(const char *path, bool strict)
{
	const struct shell_opts none = {0};
	struct shell_config sc;
	int status = 1;
	if (shell_config_build(&none, &sc) < 0)
		goto out;
	struct tp *tp = shell_load(&none, &sc, path, NULL);
	if (!tp) {
		shell_error("merge: the archive does not load");
		goto out;
	}
	sqlite3_stmt *st = NULL;
	long long dropped = 0;
	if (sqlite3_prepare_v2(tp_db(tp),
			       "SELECT COALESCE(SUM(value), 0) FROM stats WHERE name IN "
			       "('clock_sync_unrelatable_clock_domains', 'clock_sync_failure_no_path', "
			       "'clock_sync_failure', 'trace_sorter_negative_timestamp_dropped')",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		dropped = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	tp_free(tp);
	if (dropped == 0) {
		printf("Validation: all traces line up on the shared timeline.\n");
		status = 0;
	} else if (strict) {
		shell_error("merge: %lld events would be dropped when this archive is opened: they "
			    "cannot be placed on the shared timeline. Adjust the clocks in the "
			    "manifest.",
			    dropped);
	} else {
		fprintf(stderr,
			"Warning: %lld events would be dropped when this archive is opened: they "
			"cannot be placed on the shared timeline. Adjust the clocks in the manifest.\n",
			dropped);
		status = 0;
	}
out:
	shell_config_release(&sc);
	return status;
}

int shell_util_merge(struct shell_opts *o)
{
	size_t n = o->pos.len - 1;
	const char *const *inputs = o->pos.data + 1;
	if (n == 0) {
		shell_error("merge: at least one input trace file is required.");
		return 1;
	}
	if (!o->output) {
		shell_error("merge: an output path is required (-o FILE).");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *bi = strrchr(inputs[i], '/') ? strrchr(inputs[i], '/') + 1 : inputs[i];
		for (size_t j = 0; j < i; j++) {
			const char *bj =
			    strrchr(inputs[j], '/') ? strrchr(inputs[j], '/') + 1 : inputs[j];
			if (strcmp(bi, bj) == 0) {
				shell_error("merge: two input files share the name '%s'; archive members "
					    "must be unique. Rename one of the files.",
					    bi);
				return 1;
			}
		}
		if (strlen(bi) >= 100) {
			shell_error("merge: the name '%s' is too long for an archive member", bi);
			return 1;
		}
	}
	char *manifest = NULL;
	size_t mlen = 0;
	if (o->manifest) {
		if (!(manifest = shell_read_file(o->manifest, &mlen))) {
			shell_error("merge: cannot read manifest file '%s'.", o->manifest);
			return 1;
		}
		if (!strstr(manifest, "\"perfetto_manifest\"")) {
			shell_error("merge: the manifest must be a JSON object with a top-level "
				    "perfetto_manifest key.");
			tb_free(manifest);
			return 1;
		}
	}
	struct tb_err err = {0};
	char tmp[PATH_MAX];
	int fd = tb_create_beside(o->output, 0644, tmp, sizeof tmp, &err);
	if (fd < 0) {
		shell_error("merge: %s", err.msg);
		tb_free(manifest);
		return 1;
	}
	int rc = 0;
	if (manifest && tar_add_bytes(fd, "perfetto_manifest.json", manifest, mlen) < 0) {
		shell_error("merge: cannot write '%s': %s", o->output, strerror(errno));
		rc = -1;
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		const char *b = strrchr(inputs[i], '/') ? strrchr(inputs[i], '/') + 1 : inputs[i];
		rc = tar_add_file(fd, b, inputs[i]);
	}
	static const uint8_t end[2 * TAR_BLOCK];
	if (rc == 0 && tb_write_all(fd, end, sizeof end) < 0) {
		shell_error("merge: cannot write '%s': %s", o->output, strerror(errno));
		rc = -1;
	}
	if (close(fd) < 0 && rc == 0) {
		shell_error("merge: cannot write '%s': %s", o->output, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && rename(tmp, o->output) < 0) {
		shell_error("merge: cannot create '%s': %s", o->output, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	tb_free(manifest);
	if (rc < 0)
		return 1;
	printf("Wrote %s (%zu trace%s%s).\n", o->output, n, n == 1 ? "" : "s",
	       o->manifest ? " plus manifest" : "");
	fflush(stdout);
	return o->no_validate ? 0 : validate(o->output, o->strict);
}
