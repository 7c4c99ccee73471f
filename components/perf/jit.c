/*
 * jit.c: names of JIT-compiled code from perf map files, the convention of
 * `node --perf-basic-prof`, Python's `-X perf`, Java agents and most JITs:
 * the process writes one line per function it generates to
 * /tmp/perf-PID.map,
 *
 *   START SIZE NAME\n        START and SIZE in hex (an optional 0x), NAME
 *                            the rest of the line (may hold spaces)
 *
 * and a profiler names pcs in the process' anonymous executable memory
 * from it. Lines are appended while the process runs, so traced_perf reads
 * the file again when a pc is not in it and the file has grown.
 *
 * Entries are kept sorted by start; a later line for the same start (code
 * that was replaced) wins. Malformed lines are counted and skipped.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "perf_int.h"

static bool hex64(const char **p, const char *end, uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;
	int n = 0;
	if (end - q > 2 && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	for (; q < end; q++, n++) {
		int d;
		if (*q >= '0' && *q <= '9')
			d = *q - '0';
		else if (*q >= 'a' && *q <= 'f')
			d = *q - 'a' + 10;
		else if (*q >= 'A' && *q <= 'F')
			d = *q - 'A' + 10;
		else
			break;
		if (n == 16)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (n == 0)
		return false;
	*p = q;
	*out = v;
	return true;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct perf_jit_sym *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq; /* file order */
}

void perf_jitmap_parse(struct perf_jitmap *m, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	perf_jitmap_release(m);
	while (p < end && m->n < PERF_JIT_MAX_SYMS) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p;
		uint64_t start, size;
		if (!nl)
			break; /* a line still being written */
		if (hex64(&q, le, &start) && q < le && *q++ == ' ' && hex64(&q, le, &size) &&
		    q < le && *q++ == ' ' && q < le && size && start + size > start) {
			size_t n = (size_t)(le - q);
			if (n > PERF_JIT_MAX_NAME)
				n = PERF_JIT_MAX_NAME;
			if (m->names_len + n + 1 > m->names_cap) {
				size_t cap = m->names_cap ? m->names_cap * 2 : 4096;
				while (cap < m->names_len + n + 1)
					cap *= 2;
				m->names = tb_realloc(m->names, cap);
				m->names_cap = cap;
			}
			if (m->n == m->cap) {
				m->cap = m->cap ? m->cap * 2 : 256;
				m->v = tb_realloc(m->v, m->cap * sizeof *m->v);
			}
			m->v[m->n] = (struct perf_jit_sym){start, size, (uint32_t)m->names_len,
			                                   (uint32_t)m->n};
			memcpy(m->names + m->names_len, q, n);
			m->names[m->names_len + n] = 0;
			m->names_len += n + 1;
			m->n++;
		} else if (le > p) {
			m->bad_lines++;
		}
		p = le + 1;
	}
	m->bytes = (size_t)(p - text);
	if (m->n > 1)
		qsort(m->v, m->n, sizeof *m->v, cmp_sym);
	/* Keep the last entry of each start. */
	size_t k = 0;
	for (size_t i = 0; i < m->n; i++) {
		if (k && m->v[k - 1].start == m->v[i].start)
			k--;
		m->v[k++] = m->v[i];
	}
	m->n = k;
}

const char *perf_jitmap_lookup(const struct perf_jitmap *m, uint64_t pc)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) { /* first entry starting after pc */
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* The closest start below, or one a little further down that is
	 * larger and still covers pc. */
	for (size_t i = lo, k = 0; i > 0 && k < 8; i--, k++) {
		const struct perf_jit_sym *s = &m->v[i - 1];
		if (pc - s->start < s->size)
			return m->names + s->name;
	}
	return NULL;
}

void perf_jitmap_release(struct perf_jitmap *m)
{
	tb_free(m->v);
	tb_free(m->names);
	uint64_t bad = m->bad_lines;
	memset(m, 0, sizeof *m);
	m->bad_lines = bad;
}

int perf_jitmap_load(struct perf_jitmap *m, int32_t pid)
{
	char path[64];
	struct stat st, owner;
	char *text = NULL;
	ssize_t n;
	int fd, rc = 0;

	/* As perf: only a file owned by the process' user (or root), and not
	 * through a symlink, so a daemon reading it cannot be pointed at
	 * another file. */
	snprintf(path, sizeof path, "/proc/%d", (int)pid);
	if (stat(path, &owner) < 0)
		return -errno;
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)pid);
	if ((fd = tb_open_regular(path, O_NOFOLLOW, &st, NULL)) < 0)
		return fd;
	if (st.st_uid != owner.st_uid && st.st_uid != 0) {
		rc = -EPERM;
		goto out;
	}
	if ((uint64_t)st.st_size <= m->bytes && m->v) {
		rc = 0; /* nothing new */
		goto out;
	}
	size_t cap = st.st_size > 0 && (uint64_t)st.st_size < PERF_JIT_MAX_BYTES
	                 ? (size_t)st.st_size
	                 : PERF_JIT_MAX_BYTES;
	text = tb_malloc(cap + 1);
	if ((n = tb_read_all(fd, text, cap)) < 0) {
		rc = (int)n;
		goto out;
	}
	perf_jitmap_parse(m, text, (size_t)n);
out:
	tb_free(text);
	tb_close(&fd);
	return rc;
}
