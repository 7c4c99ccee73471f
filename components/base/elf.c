/*
 * elf.c: a bounded reader of ELF images, shared by traced_perf (build ids
 * and load bias of mapped files) and the trace processor's symbolizer
 * (symbol tables, debug links). It reads only what is asked for: the ELF
 * header on open, then single program or section headers and the byte
 * ranges they name, from memory or with pread, so a multi-GB binary costs a
 * few small reads.
 *
 *   Elf64 header: ident[16] | u16 type machine | u32 version | u64 entry
 *                 phoff shoff | u32 flags | u16 ehsize phentsize phnum
 *                 shentsize shnum shstrndx          (Elf32: u32 addresses)
 *   ELF note (4-byte aligned):  u32 namesz | u32 descsz | u32 type |
 *                               name[namesz] pad4 | desc[descsz] pad4
 *   build id = desc of the note named "GNU\0" of type NT_GNU_BUILD_ID (3)
 *
 * Every offset and size comes from the file and is checked against its size
 * before use; the byte order is the file's own (EI_DATA).
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"

#define ELF_MAX_NOTES (1u << 20) /* bytes of notes read per segment/section */
#define NT_GNU_BUILD_ID 3

uint16_t elf_u16(const struct elf_file *e, const uint8_t *p)
{
	return e->be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint32_t get32(bool be, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return be ? __builtin_bswap32(v) : v;
#else
	return be ? v : __builtin_bswap32(v);
#endif
}

uint32_t elf_u32(const struct elf_file *e, const uint8_t *p)
{
	return get32(e->be, p);
}

uint64_t elf_u64(const struct elf_file *e, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return e->be ? __builtin_bswap64(v) : v;
#else
	return e->be ? v : __builtin_bswap64(v);
#endif
}

/* A target-address-sized field: u64 in ELF64, u32 in ELF32. */
static uint64_t addr(const struct elf_file *e, const uint8_t *p)
{
	return e->is64 ? elf_u64(e, p) : elf_u32(e, p);
}

int elf_read(const struct elf_file *e, uint64_t off, void *out, size_t n)
{
	if (off > e->size || n > e->size - off)
		return -ERANGE;
	if (e->buf) {
		memcpy(out, e->buf + off, n);
		return 0;
	}
	return pread(e->fd, out, n, (off_t)off) == (ssize_t)n ? 0 : -EIO;
}

static int parse_header(struct elf_file *e)
{
	uint8_t h[64];
	if (elf_read(e, 0, h, 52) < 0 || memcmp(h, "\177ELF", 4) != 0)
		return -EINVAL;
	if ((h[4] != 1 && h[4] != 2) || (h[5] != 1 && h[5] != 2))
		return -EINVAL;
	e->is64 = h[4] == 2;
	e->be = h[5] == 2;
	if (e->is64 && elf_read(e, 0, h, 64) < 0)
		return -EINVAL;
	e->type = elf_u16(e, h + 16);
	if (e->is64) {
		e->phoff = elf_u64(e, h + 32), e->shoff = elf_u64(e, h + 40);
		e->phentsize = elf_u16(e, h + 54), e->phnum = elf_u16(e, h + 56);
		e->shentsize = elf_u16(e, h + 58), e->shnum = elf_u16(e, h + 60);
		e->shstrndx = elf_u16(e, h + 62);
	} else {
		e->phoff = elf_u32(e, h + 28), e->shoff = elf_u32(e, h + 32);
		e->phentsize = elf_u16(e, h + 42), e->phnum = elf_u16(e, h + 44);
		e->shentsize = elf_u16(e, h + 46), e->shnum = elf_u16(e, h + 48);
		e->shstrndx = elf_u16(e, h + 50);
	}
	/* Entries smaller than the format's are unusable: treat as absent. */
	if (e->phentsize < (e->is64 ? 56 : 32))
		e->phnum = 0;
	if (e->shentsize < (e->is64 ? 64 : 40))
		e->shnum = 0;
	return 0;
}

int elf_open_mem(struct elf_file *e, const uint8_t *buf, size_t len)
{
	memset(e, 0, sizeof *e);
	e->buf = buf, e->fd = -1, e->size = len;
	return parse_header(e);
}

int elf_open_fd(struct elf_file *e, int fd, uint64_t size)
{
	memset(e, 0, sizeof *e);
	e->fd = fd, e->size = size;
	return parse_header(e);
}

int elf_open_path(struct elf_file *e, const char *path, struct tb_err *err)
{
	struct stat st;
	int rc;
	memset(e, 0, sizeof *e);
	int fd = tb_open_regular(path, 0, &st, err);
	if (fd < 0)
		return fd;
	rc = elf_open_fd(e, fd, (uint64_t)st.st_size);
	if (rc < 0) {
		tb_err_set(err, rc, "'%s' is not an ELF file", path);
		goto fail;
	}
	e->own_fd = true;
	return 0;
fail:
	tb_close(&fd);
	memset(e, 0, sizeof *e);
	e->fd = -1;
	return rc;
}

void elf_close(struct elf_file *e)
{
	if (e->own_fd)
		tb_close(&e->fd);
	e->own_fd = false;
}

int elf_phdr(const struct elf_file *e, unsigned i, struct elf_phdr *out)
{
	uint8_t p[56];
	if (i >= e->phnum)
		return -ERANGE;
	int rc = elf_read(e, e->phoff + (uint64_t)i * e->phentsize, p, e->is64 ? 56 : 32);
	if (rc < 0)
		return rc;
	out->type = elf_u32(e, p);
	if (e->is64) {
		out->flags = elf_u32(e, p + 4), out->offset = elf_u64(e, p + 8);
		out->vaddr = elf_u64(e, p + 16), out->filesz = elf_u64(e, p + 32);
		out->memsz = elf_u64(e, p + 40), out->align = elf_u64(e, p + 48);
	} else {
		out->offset = elf_u32(e, p + 4), out->vaddr = elf_u32(e, p + 8);
		out->filesz = elf_u32(e, p + 16), out->memsz = elf_u32(e, p + 20);
		out->flags = elf_u32(e, p + 24), out->align = elf_u32(e, p + 28);
	}
	return 0;
}

int elf_shdr(const struct elf_file *e, unsigned i, struct elf_shdr *out)
{
	uint8_t s[64];
	if (i >= e->shnum)
		return -ERANGE;
	int rc = elf_read(e, e->shoff + (uint64_t)i * e->shentsize, s, e->is64 ? 64 : 40);
	if (rc < 0)
		return rc;
	out->name = elf_u32(e, s), out->type = elf_u32(e, s + 4);
	size_t w = e->is64 ? 8 : 4;
	out->flags = addr(e, s + 8);
	out->addr = addr(e, s + 8 + w);
	out->offset = addr(e, s + 8 + 2 * w);
	out->size = addr(e, s + 8 + 3 * w);
	out->link = elf_u32(e, s + 8 + 4 * w);
	out->info = elf_u32(e, s + 12 + 4 * w);
	out->entsize = addr(e, s + 16 + 5 * w);
	return 0;
}

int elf_section_by_name(const struct elf_file *e, const char *name, struct elf_shdr *out)
{
	struct elf_shdr strtab;
	size_t want = strlen(name) + 1;
	char got[64];
	if (want > sizeof got || elf_shdr(e, e->shstrndx, &strtab) < 0)
		return -ENOENT;
	for (unsigned i = 1; i < e->shnum; i++) {
		if (elf_shdr(e, i, out) < 0)
			break;
		if (out->name >= strtab.size || want > strtab.size - out->name)
			continue;
		if (elf_read(e, strtab.offset + out->name, got, want) == 0 &&
		    memcmp(got, name, want) == 0)
			return 0;
	}
	return -ENOENT;
}

size_t elf_notes_build_id(const uint8_t *notes, size_t len, bool big_endian, uint8_t *id,
                          size_t max)
{
	size_t off = 0;
	while (len - off >= 12) {
		uint32_t namesz = get32(big_endian, notes + off);
		uint32_t descsz = get32(big_endian, notes + off + 4);
		uint32_t type = get32(big_endian, notes + off + 8);
		uint64_t name_pad = ((uint64_t)namesz + 3) & ~3ull;
		uint64_t desc_pad = ((uint64_t)descsz + 3) & ~3ull;
		const uint8_t *name = notes + off + 12;
		if (name_pad > len - off - 12 || desc_pad > len - off - 12 - name_pad)
			return 0; /* truncated note: nothing after it is trustworthy */
		if (type == NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
		    descsz > 0) {
			size_t n = descsz < max ? descsz : max;
			memcpy(id, name + name_pad, n);
			return n;
		}
		off += 12 + (size_t)name_pad + (size_t)desc_pad;
	}
	return 0;
}

/* Read the note block [off, off+size) and look for the build id in it. */
static size_t notes_at(const struct elf_file *e, uint64_t off, uint64_t size, uint8_t *id,
                       size_t max)
{
	size_t n = 0;
	if (size < 12)
		return 0;
	if (size > ELF_MAX_NOTES)
		size = ELF_MAX_NOTES;
	uint8_t *buf = tb_malloc((size_t)size);
	if (elf_read(e, off, buf, (size_t)size) == 0)
		n = elf_notes_build_id(buf, (size_t)size, e->be, id, max);
	tb_free(buf);
	return n;
}

size_t elf_build_id(const struct elf_file *e, uint8_t *id, size_t max)
{
	struct elf_phdr ph;
	struct elf_shdr sh;
	size_t n;
	for (unsigned i = 0; i < e->phnum && elf_phdr(e, i, &ph) == 0; i++)
		if (ph.type == ELF_PT_NOTE && (n = notes_at(e, ph.offset, ph.filesz, id, max)))
			return n;
	/* Notes outside PT_NOTE (or stripped program headers): try sections. */
	for (unsigned i = 0; i < e->shnum && elf_shdr(e, i, &sh) == 0; i++)
		if (sh.type == ELF_SHT_NOTE && (n = notes_at(e, sh.offset, sh.size, id, max)))
			return n;
	return 0;
}

int elf_first_exec_load(const struct elf_file *e, struct elf_phdr *out)
{
	for (unsigned i = 0; i < e->phnum && elf_phdr(e, i, out) == 0; i++)
		if (out->type == ELF_PT_LOAD && (out->flags & ELF_PF_X))
			return 0;
	return -ENOENT;
}
