/*
 * kallsyms.c: kernel symbols from /proc/kallsyms, to name kernel addresses
 * (traced_perf's kernel frames, traced_probes' symbolize_ksyms). Lines are "ffffffff81000000 T
 * _stext" with an optional
 * "\t[module]". Only text symbols (t/T/w/W) are kept, sorted by address;
 * a pc belongs to the nearest symbol at or below it. When
 * kernel.kptr_restrict hides addresses the file lists zeros: we then keep
 * nothing and say which setting to change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int ksyms_parse(struct ksyms *k, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	size_t cap = 0, names_cap = 0;
	bool any_nonzero = false;
	memset(k, 0, sizeof *k);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = p, *name;
		uint64_t addr = 0;
		size_t n = 0, name_len;
		for (; q < le && n < 17; q++, n++) {
			char c = *q;
			int d = c >= '0' && c <= '9'   ? c - '0'
			        : c >= 'a' && c <= 'f' ? c - 'a' + 10
			                               : -1;
			if (d < 0)
				break;
			addr = addr << 4 | (uint64_t)d;
		}
		p = nl ? nl + 1 : end;
		if (n == 0 || n > 16 || le - q < 4 || q[0] != ' ' || q[2] != ' ')
			continue;
		if (q[1] != 't' && q[1] != 'T' && q[1] != 'w' && q[1] != 'W')
			continue;
		name = q + 3;
		for (name_len = 0; name + name_len < le && name[name_len] != '\t'; name_len++)
			;
		if (addr)
			any_nonzero = true;
		if (k->n == cap) {
			cap = cap ? cap * 2 : 4096;
			k->syms = tb_realloc(k->syms, cap * sizeof *k->syms);
		}
		while (k->names_len + name_len + 1 > names_cap) {
			names_cap = names_cap ? names_cap * 2 : 65536;
			k->names = tb_realloc(k->names, names_cap);
		}
		if (k->names_len > UINT32_MAX - name_len - 1)
			break;
		k->syms[k->n].addr = addr;
		k->syms[k->n].name_off = (uint32_t)k->names_len;
		memcpy(k->names + k->names_len, name, name_len);
		k->names[k->names_len + name_len] = '\0';
		k->names_len += name_len + 1;
		k->n++;
	}
	if (!any_nonzero) {
		bool had = k->n > 0;
		ksyms_release(k);
		return had ? -EPERM : 0;
	}
	qsort(k->syms, k->n, sizeof *k->syms, cmp_addr);
	return 0;
}

int ksyms_load(struct ksyms *k, const char *path, struct tb_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc = tb_read_file(path ? path : "/proc/kallsyms", &text, &len, KSYMS_MAX_BYTES, err);
	memset(k, 0, sizeof *k);
	if (rc == 0) {
		rc = ksyms_parse(k, text, len);
		if (rc == -EPERM)
			tb_err_set(err, rc,
			           "'%s' shows no addresses (kernel.kptr_restrict "
			           "hides them): run as root with kptr_restrict <= 1 "
			           "(sysctl kernel.kptr_restrict=1) to name kernel addresses",
			           path ? path : "/proc/kallsyms");
	}
	tb_free(text);
	return rc;
}

const char *ksyms_lookup(const struct ksyms *k, uint64_t addr)
{
	size_t lo = 0, hi = k->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? k->names + k->syms[lo - 1].name_off : NULL;
}

void ksyms_release(struct ksyms *k)
{
	tb_free(k->syms);
	tb_free(k->names);
	memset(k, 0, sizeof *k);
}
