/*
 * symtab.c: the function symbols of an ELF file, for address -> name.
 *
 *   Elf64_Sym (24 B): u32 name | u8 info | u8 other | u16 shndx | u64 value | u64 size
 *   Elf32_Sym (16 B): u32 name | u32 value | u32 size | u8 info | u8 other | u16 shndx
 *   info & 15 = type (2 FUNC, 10 GNU_IFUNC); shndx 0 = undefined
 *   the names live in the section named by the symbol section's sh_link
 *
 * Both .symtab (full, absent when stripped) and .dynsym (exported only) are
 * read; .symtab entries win where both name one address. Symbol sections
 * are read in blocks, the string table whole (capped), and only function
 * names are kept, so a large debug file costs its string table once.
 */
#include "base.h"

#include <stdlib.h>

#define STT_FUNC 2
#define STT_GNU_IFUNC 10
#define SYM_BLOCK 4096                    /* symbols read per pread */
#define SYM_MAX_ENTSIZE 64                /* bytes per symbol entry (24 or 16 in practice) */
#define SYM_MAX_NAMES ((size_t)512 << 20) /* bytes of kept names */

struct sort_entry {
	struct sym_entry e;
	uint32_t seq; /* load order: .symtab first */
};

struct loader {
	const struct elf_file *elf;
	struct sort_entry *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
};

static void add_name(struct loader *l, const char *s, size_t len, uint32_t *off)
{
	if (l->names_len + len + 1 > l->names_cap) {
		size_t cap = l->names_cap ? l->names_cap * 2 : 65536;
		while (cap < l->names_len + len + 1)
			cap *= 2;
		l->names = tb_realloc(l->names, cap);
		l->names_cap = cap;
	}
	memcpy(l->names + l->names_len, s, len);
	l->names[l->names_len + len] = 0;
	*off = (uint32_t)l->names_len;
	l->names_len += len + 1;
}

/* Read the symbols of section sh (with names from its linked section). */
static int load_section(struct loader *l, const struct elf_shdr *sh)
{
	const struct elf_file *e = l->elf;
	size_t esz = e->is64 ? 24 : 16;
	struct elf_shdr strsec;
	char *str = NULL;
	uint8_t *blk = NULL;
	int rc = -EINVAL;
	if (sh->entsize != 0 && (sh->entsize < esz || sh->entsize > SYM_MAX_ENTSIZE))
		goto out;
	size_t stride = sh->entsize ? (size_t)sh->entsize : esz;
	if (sh->link == 0 || elf_shdr(e, sh->link, &strsec) < 0 || strsec.size == 0 ||
	    strsec.size > SYM_MAX_STRTAB || strsec.type == ELF_SHT_NOBITS)
		goto out;
	str = tb_try_malloc((size_t)strsec.size + 1);
	if (!str || elf_read(e, strsec.offset, str, (size_t)strsec.size) < 0)
		goto out;
	str[strsec.size] = 0;
	uint64_t count = sh->size / stride;
	blk = tb_malloc(SYM_BLOCK * stride);
	for (uint64_t i = 0; i < count && l->n < SYM_MAX_SYMBOLS; i += SYM_BLOCK) {
		size_t k = count - i < SYM_BLOCK ? (size_t)(count - i) : SYM_BLOCK;
		if (elf_read(e, sh->offset + i * stride, blk, k * stride) < 0)
			break;
		for (size_t j = 0; j < k && l->n < SYM_MAX_SYMBOLS; j++) {
			const uint8_t *s = blk + j * stride;
			uint32_t name = elf_u32(e, s);
			uint8_t info = e->is64 ? s[4] : s[12];
			uint16_t shndx = elf_u16(e, e->is64 ? s + 6 : s + 14);
			uint64_t value = e->is64 ? elf_u64(e, s + 8) : elf_u32(e, s + 4);
			uint64_t size = e->is64 ? elf_u64(e, s + 16) : elf_u32(e, s + 8);
			int type = info & 15;
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || shndx == 0 ||
			    name == 0 || name >= strsec.size)
				continue;
			const char *nm = str + name;
			size_t nlen = strnlen(nm, (size_t)(strsec.size - name));
			if (nlen == 0 || nlen > SYM_MAX_NAME)
				continue;
			if (l->names_len + nlen + 1 > SYM_MAX_NAMES)
				break;
			if (l->n == l->cap) {
				l->cap = l->cap ? l->cap * 2 : 1024;
				l->v = tb_realloc(l->v, l->cap * sizeof *l->v);
			}
			struct sort_entry *se = &l->v[l->n];
			se->e.addr = value, se->e.size = size, se->seq = (uint32_t)l->n;
			add_name(l, nm, nlen, &se->e.name);
			l->n++;
		}
	}
	rc = 0;
out:
	tb_free(blk);
	tb_free(str);
	return rc;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct sort_entry *x = a, *y = b;
	if (x->e.addr != y->e.addr)
		return x->e.addr < y->e.addr ? -1 : 1;
	if ((x->e.size == 0) != (y->e.size == 0))
		return x->e.size == 0 ? 1 : -1; /* sized first */
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int sym_table_load(struct sym_table *t, const struct elf_file *e)
{
	struct loader l = {.elf = e};
	struct elf_shdr sh;
	memset(t, 0, sizeof *t);
	/* .symtab before .dynsym, so its names win ties. */
	for (int pass = 0; pass < 2; pass++) {
		uint32_t want = pass == 0 ? ELF_SHT_SYMTAB : ELF_SHT_DYNSYM;
		for (unsigned i = 1; i < e->shnum && elf_shdr(e, i, &sh) == 0; i++) {
			if (sh.type != want)
				continue;
			if (load_section(&l, &sh) == 0 && pass == 0)
				t->has_symtab = true;
		}
	}
	if (l.n)
		qsort(l.v, l.n, sizeof *l.v, cmp_entry);
	/* One entry per address: the first after sorting. */
	t->v = l.n ? tb_malloc(l.n * sizeof *t->v) : NULL;
	for (size_t i = 0; i < l.n; i++)
		if (t->n == 0 || t->v[t->n - 1].addr != l.v[i].e.addr)
			t->v[t->n++] = l.v[i].e;
	tb_free(l.v);
	t->names = l.names;
	t->names_len = l.names_len;
	return 0;
}

void sym_table_release(struct sym_table *t)
{
	tb_free(t->v);
	tb_free(t->names);
	memset(t, 0, sizeof *t);
}

const char *sym_table_lookup(const struct sym_table *t, uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) { /* first entry with .addr > addr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct sym_entry *s = &t->v[lo - 1];
	if (s->size == 0)
		return t->names + s->name; /* nearest below, up to the next symbol */
	/* Covered by this one, or by an enclosing sized symbol a little below. */
	for (size_t i = lo, k = 0; i > 0 && k < 16; i--, k++) {
		s = &t->v[i - 1];
		if (s->size && addr - s->addr < s->size)
			return t->names + s->name;
	}
	return NULL;
}
