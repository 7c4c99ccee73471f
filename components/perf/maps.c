/*
 * maps.c: a process' memory mappings from /proc/PID/maps, and the lookup
 * from a sampled pc to its mapping. Lines look like
 *
 *   start-end         perms offset   dev   inode  path
 *   55d0c8a00000-55d0c8a02000 r-xp 00002000 fd:01 1234   /usr/bin/x
 *
 * (addresses and offset in hex, path optional and may contain spaces).
 * The kernel lists mappings in address order; we sort anyway, so lookups
 * are a binary search whatever the input.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_int.h"

/* Parse a hex number at *p (up to 16 digits), advancing *p. */
static bool hex(const char **p, const char *end, uint64_t *out)
{
	const char *q = *p;
	uint64_t v = 0;
	int n = 0;
	for (; q < end && n < 17; q++, n++) {
		int d;
		if (*q >= '0' && *q <= '9')
			d = *q - '0';
		else if (*q >= 'a' && *q <= 'f')
			d = *q - 'a' + 10;
		else if (*q >= 'A' && *q <= 'F')
			d = *q - 'A' + 10;
		else
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (n == 0 || n > 16)
		return false;
	*p = q;
	*out = v;
	return true;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p != ' ')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

static bool parse_line(const char *p, const char *end, struct perf_mapping *m)
{
	if (!hex(&p, end, &m->start) || p >= end || *p++ != '-' || !hex(&p, end, &m->end) ||
	    m->end < m->start || p >= end || *p++ != ' ' || end - p < 5)
		return false;
	m->exec = p[2] == 'x';
	p = skip_field(p, end);
	if (!hex(&p, end, &m->offset))
		return false;
	p = skip_field(p, end); /* the spaces after the offset */
	p = skip_field(p, end); /* dev */
	p = skip_field(p, end); /* inode, then the spaces before the path */
	m->path = tb_strndup(p, (size_t)(end - p));
	return true;
}

static int cmp_start(const void *a, const void *b)
{
	const struct perf_mapping *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int perf_maps_parse(struct perf_maps *m, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	int rc = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		struct perf_mapping map;
		memset(&map, 0, sizeof map);
		if (le > p) {
			if (m->n >= PERF_MAX_MAPS) {
				rc = -E2BIG;
				break;
			}
			if (parse_line(p, le, &map)) {
				if (m->n == m->cap) {
					m->cap = m->cap ? m->cap * 2 : 64;
					m->v = tb_realloc(m->v, m->cap * sizeof *m->v);
				}
				m->v[m->n++] = map;
			} else {
				m->bad_lines++;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (m->n > 1)
		qsort(m->v, m->n, sizeof *m->v, cmp_start);
	return rc;
}

int perf_maps_load(struct perf_maps *m, int pid, struct tb_err *err)
{
	char path[64], *text = NULL;
	size_t len = 0;
	int rc;
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	rc = tb_read_file(path, &text, &len, PERF_MAPS_MAX_BYTES, err);
	if (rc == 0)
		rc = perf_maps_parse(m, text, len);
	tb_free(text);
	return rc;
}

void perf_maps_load_elf(struct perf_maps *m)
{
	for (size_t i = 0; i < m->n; i++) {
		struct perf_mapping *map = &m->v[i];
		if (!map->exec || map->path[0] != '/' || map->elf_loaded)
			continue;
		map->elf_loaded = true;
		/* Mappings of one file are usually adjacent: reuse its info. */
		for (size_t j = i; j-- > 0;) {
			if (m->v[j].elf_loaded && strcmp(m->v[j].path, map->path) == 0) {
				map->elf = m->v[j].elf;
				break;
			}
		}
		if (!map->elf.is_elf)
			perf_elf_info_file(map->path, &map->elf, NULL);
	}
}

const struct perf_mapping *perf_maps_find(const struct perf_maps *m, uint64_t pc)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc >= m->v[lo - 1].end)
		return NULL;
	return &m->v[lo - 1];
}

void perf_maps_add(struct perf_maps *m, uint64_t start, uint64_t end, uint64_t offset, bool exec,
                   const char *path, size_t path_len)
{
	size_t k = 0;
	if (end <= start)
		return;
	/* What the new mapping covers is gone from the old ones: those inside
	 * it are dropped, those across one of its ends are cut there. */
	for (size_t i = 0; i < m->n; i++) {
		struct perf_mapping *o = &m->v[i];
		if (o->end <= start || o->start >= end) {
			m->v[k++] = *o;
			continue;
		}
		if (o->start < start) {
			o->end = start;
			m->v[k++] = *o;
		} else if (o->end > end) {
			o->offset += end - o->start;
			o->start = end;
			m->v[k++] = *o;
		} else {
			tb_free(o->path);
		}
	}
	m->n = k;
	if (m->n >= PERF_MAX_MAPS)
		return;
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 64;
		m->v = tb_realloc(m->v, m->cap * sizeof *m->v);
	}
	memset(&m->v[m->n], 0, sizeof m->v[m->n]);
	m->v[m->n].start = start;
	m->v[m->n].end = end;
	m->v[m->n].offset = offset;
	m->v[m->n].exec = exec;
	m->v[m->n].path = tb_strndup(path, path_len);
	m->n++;
	qsort(m->v, m->n, sizeof *m->v, cmp_start);
}

void perf_maps_copy(struct perf_maps *dst, const struct perf_maps *src)
{
	perf_maps_release(dst);
	if (!src->n)
		return;
	dst->v = tb_malloc(src->n * sizeof *dst->v);
	dst->n = dst->cap = src->n;
	for (size_t i = 0; i < src->n; i++) {
		dst->v[i] = src->v[i];
		dst->v[i].path = tb_strdup(src->v[i].path);
	}
}

void perf_maps_release(struct perf_maps *m)
{
	for (size_t i = 0; i < m->n; i++)
		tb_free(m->v[i].path);
	tb_free(m->v);
	memset(m, 0, sizeof *m);
}
