/*
 * TAR archives the trace processor opens as one trace (ustar members, as
 * io/archive.c reads them), and the two modes that write them:
 *
 *   bundle IN OUT   Perfetto's `traceconv bundle` / `trace_processor_shell
 *                   bundle`: OUT holds trace.perfetto (IN, as it is) and,
 *                   when any frame of its stack profiles could be resolved,
 *                   symbols.pb (ModuleSymbols packets from the ELF files of
 *                   this machine: the symbolizer of trace_processor, with
 *                   --symbol-paths and PERFETTO_BINARY_PATH as roots).
 *   merge -o OUT [--manifest M] TRACE...   `trace_processor_shell util merge`:
 *                   the traces under their base names, the manifest first as
 *                   perfetto_manifest.json (or one written from per-file
 *                   options: merge.c).
 *
 *   header (512 B): name[100] mode[8] uid[8] gid[8] size[12] mtime[12]
 *                   chksum[8] typeflag magic "ustar\0" version "00" ...
 *   data, padded to 512 B; two zero blocks end the archive
 *
 * The archive is written beside OUT under a temporary name and renamed over
 * it once complete.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "trace_processor.h"
#include "traceconv_int.h"

#define TAR_BLOCK 512
#define COPY_CHUNK ((size_t)1 << 20)

struct tar {
	int fd;
	char tmp[PATH_MAX];
	const char *path;
	int error; /* first -errno */
};

static int tar_open(struct tar *t, const char *path)
{
	struct tb_err err = {0};
	memset(t, 0, sizeof *t);
	t->path = path;
	t->fd = tb_create_beside(path, 0644, t->tmp, sizeof t->tmp, &err);
	if (t->fd < 0) {
		fprintf(stderr, "traceconv: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static void tar_put(struct tar *t, const void *p, size_t n)
{
	if (!t->error && n)
		t->error = tb_write_all(t->fd, p, n);
}

static void octal(char *dst, size_t n, uint64_t v)
{
	snprintf(dst, n, "%0*llo", (int)n - 1, (unsigned long long)v);
}

static int tar_header(struct tar *t, const char *name, uint64_t size)
{
	uint8_t h[TAR_BLOCK] = {0};
	if (strlen(name) >= 100) {
		fprintf(stderr, "traceconv: the name '%s' is too long for an archive member\n",
		        name);
		return -1;
	}
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
	tar_put(t, h, TAR_BLOCK);
	return 0;
}

static void tar_pad(struct tar *t, uint64_t size)
{
	static const uint8_t zero[TAR_BLOCK];
	tar_put(t, zero, (size_t)((TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK));
}

static int tar_add_bytes(struct tar *t, const char *name, const void *p, size_t n)
{
	if (tar_header(t, name, n) < 0)
		return -1;
	tar_put(t, p, n);
	tar_pad(t, n);
	return 0;
}

static int tar_add_file(struct tar *t, const char *name, const char *path)
{
	struct stat st;
	int in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
		fprintf(stderr, "traceconv: cannot read '%s': %s\n", path,
		        in < 0 ? strerror(errno) : "not a regular file");
		if (in >= 0)
			close(in);
		return -1;
	}
	int rc = tar_header(t, name, (uint64_t)st.st_size);
	uint8_t *buf = tb_malloc(COPY_CHUNK);
	uint64_t left = (uint64_t)st.st_size;
	while (rc == 0 && left && !t->error) {
		ssize_t n = tb_read_all(in, buf, left < COPY_CHUNK ? (size_t)left : COPY_CHUNK);
		if (n <= 0) {
			fprintf(stderr, "traceconv: cannot read '%s': %s\n", path,
			        n < 0 ? strerror((int)-n) : "it shrank while read");
			rc = -1;
			break;
		}
		tar_put(t, buf, (size_t)n);
		left -= (uint64_t)n;
	}
	tb_free(buf);
	close(in);
	if (rc == 0)
		tar_pad(t, (uint64_t)st.st_size);
	return rc;
}

/* End the archive and put it in place (rc 0), or drop it (rc < 0). */
static int tar_close(struct tar *t, int rc)
{
	static const uint8_t end[2 * TAR_BLOCK];
	if (rc == 0)
		tar_put(t, end, sizeof end);
	if (close(t->fd) < 0 && !t->error)
		t->error = -errno;
	if (rc == 0 && t->error) {
		fprintf(stderr, "traceconv: cannot write '%s': %s\n", t->path, strerror(-t->error));
		rc = -1;
	}
	if (rc == 0 && rename(t->tmp, t->path) < 0) {
		fprintf(stderr, "traceconv: cannot create '%s': %s\n", t->path, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(t->tmp);
	return rc;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

int traceconv_merge_bytes(const char *out, const char *manifest_path, const char *bytes, size_t len,
                          const char *const *inputs, size_t n)
{
	struct tar t;
	char *manifest = NULL;
	size_t mlen = 0;
	if (bytes) {
		manifest = tb_malloc(len ? len : 1);
		memcpy(manifest, bytes, len);
		mlen = len;
	} else if (manifest_path) {
		FILE *f = fopen(manifest_path, "rbe");
		if (!f) {
			fprintf(stderr, "traceconv: merge: cannot read manifest file '%s'.\n",
			        manifest_path);
			return -1;
		}
		size_t cap = 4096;
		manifest = tb_malloc(cap);
		size_t r;
		while ((r = fread(manifest + mlen, 1, cap - mlen, f)) > 0)
			if ((mlen += r) == cap)
				manifest = tb_realloc(manifest, cap *= 2);
		fclose(f);
	}
	if (tar_open(&t, out) < 0) {
		tb_free(manifest);
		return -1;
	}
	int rc = 0;
	if (manifest)
		rc = tar_add_bytes(&t, "perfetto_manifest.json", manifest, mlen);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = tar_add_file(&t, base_name(inputs[i]), inputs[i]);
	tb_free(manifest);
	return tar_close(&t, rc);
}

int traceconv_bundle(const char *in, const char *out, const struct traceconv_bundle_opts *o)
{
	int fd = open(in, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "traceconv: cannot open '%s': %s\n", in, strerror(errno));
		return -1;
	}
	struct tp *tp = traceconv_load_cfg(fd, in, false);
	close(fd);
	if (!tp)
		return -1;
	/* The roots: --symbol-paths, and PERFETTO_BINARY_PATH unless
	 * --no-auto-symbol-paths, which also leaves out the mapped files' own
	 * paths and /usr/lib/debug. */
	char roots[8192] = "";
	size_t len = 0;
	if (o->symbol_paths)
		for (const char *p = o->symbol_paths; *p && len + 2 < sizeof roots; p++)
			roots[len++] = *p == ',' ? ':' : *p;
	const char *env = getenv("PERFETTO_BINARY_PATH");
	if (!o->no_auto_symbol_paths && env && *env)
		len +=
		    (size_t)snprintf(roots + len, sizeof roots - len, "%s%s", len ? ":" : "", env);
	roots[len < sizeof roots ? len : sizeof roots - 1] = '\0';
	const char *mode = getenv("PERFETTO_SYMBOLIZER_MODE");
	struct tp_symbolize_opts so = {.binary_path = *roots ? roots : NULL,
	                               .find_mode = mode && strcmp(mode, "find") == 0,
	                               .no_system = o->no_auto_symbol_paths};
	struct tp_symbolize_result res = {0};
	bool proto = strcmp(tp_trace_type(tp), "proto") == 0;
	int rc = -1;
	if (proto && tp_symbolize(tp, &so, &res) < 0) {
		fprintf(stderr, "traceconv: bundle: too many symbols\n");
		goto out;
	}
	if (!proto)
		fprintf(stderr,
		        "traceconv: bundle: '%s' is not a Perfetto protobuf trace: no symbols "
		        "are added\n",
		        in);
	if (o->verbose || res.frames_failed)
		fprintf(
		    stderr,
		    "traceconv: bundle: %u mappings (%u addresses) symbolized; %u frames from %u "
		    "mappings could not be (no file with a matching build id and symbols)\n",
		    res.mappings_symbolized, res.addresses_symbolized, res.frames_failed,
		    res.mappings_failed);
	struct tar t;
	if (tar_open(&t, out) < 0)
		goto out;
	rc = tar_add_file(&t, "trace.perfetto", in);
	if (rc == 0 && res.len)
		rc = tar_add_bytes(&t, "symbols.pb", res.packets, res.len);
	rc = tar_close(&t, rc);
out:
	tp_symbolize_result_release(&res);
	tp_free(tp);
	return rc;
}
