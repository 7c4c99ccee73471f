/*
 * buildid.c: what traced_perf needs from an ELF file: its GNU build id
 * (so frames can be symbolized later against the same binary) and its load
 * bias (so relative pcs are ELF virtual addresses). Only the ELF header,
 * the program headers, the note segments and, as a fallback, the section
 * headers are read; a multi-GB binary costs a few small preads.
 *
 *   ELF note (4-byte aligned):  u32 namesz | u32 descsz | u32 type |
 *                               name[namesz] pad4 | desc[descsz] pad4
 *   build id = desc of the note with name "GNU\0" and type NT_GNU_BUILD_ID (3)
 *
 * Every offset and size comes from the file and is checked against its size
 * before use; the byte order is the file's own (EI_DATA).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf.h"

#define ELF_MAX_PHNUM 4096
#define ELF_MAX_SHNUM 4096
#define ELF_MAX_NOTES (1u << 20) /* bytes of notes read per segment/section */
#define PT_LOAD_ 1
#define PT_NOTE_ 4
#define PF_X_ 1
#define SHT_NOTE_ 7
#define NT_GNU_BUILD_ID_ 3

/* Where the bytes come from: a memory image or a file. */
struct elf_src {
	const uint8_t *buf;
	int fd;
	uint64_t size;
	bool be, is64;
};

static int src_read(const struct elf_src *s, uint64_t off, void *out, size_t n)
{
	if (off > s->size || n > s->size - off)
		return -1;
	if (s->buf) {
		memcpy(out, s->buf + off, n);
		return 0;
	}
	return pread(s->fd, out, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static uint16_t u16(const struct elf_src *s, const uint8_t *p)
{
	return s->be ? (uint16_t)(p[0] << 8 | p[1]) : (uint16_t)(p[1] << 8 | p[0]);
}

static uint32_t u32(bool be, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return be ? __builtin_bswap32(v) : v;
#else
	return be ? v : __builtin_bswap32(v);
#endif
}

static uint64_t u64(bool be, const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return be ? __builtin_bswap64(v) : v;
#else
	return be ? v : __builtin_bswap64(v);
#endif
}

size_t perf_elf_notes_build_id(const uint8_t *notes, size_t len, bool big_endian,
                               uint8_t id[PERF_BUILD_ID_MAX])
{
	size_t off = 0;
	while (len - off >= 12) {
		uint32_t namesz = u32(big_endian, notes + off);
		uint32_t descsz = u32(big_endian, notes + off + 4);
		uint32_t type = u32(big_endian, notes + off + 8);
		uint64_t name_pad = ((uint64_t)namesz + 3) & ~3ull;
		uint64_t desc_pad = ((uint64_t)descsz + 3) & ~3ull;
		const uint8_t *name = notes + off + 12;
		if (name_pad > len - off - 12 || desc_pad > len - off - 12 - name_pad)
			return 0; /* truncated note: nothing after it is trustworthy */
		if (type == NT_GNU_BUILD_ID_ && namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
		    descsz > 0) {
			size_t n = descsz < PERF_BUILD_ID_MAX ? descsz : PERF_BUILD_ID_MAX;
			memcpy(id, name + name_pad, n);
			return n;
		}
		off += 12 + (size_t)name_pad + (size_t)desc_pad;
	}
	return 0;
}

/* Read a note block [off, off+size) and look for the build id in it. */
static bool notes_at(const struct elf_src *s, uint64_t off, uint64_t size,
                     struct perf_elf_info *out)
{
	uint8_t *buf;
	bool found = false;
	if (size < 12)
		return false;
	if (size > ELF_MAX_NOTES)
		size = ELF_MAX_NOTES;
	buf = tb_malloc((size_t)size);
	if (src_read(s, off, buf, (size_t)size) == 0) {
		out->build_id_len =
		    perf_elf_notes_build_id(buf, (size_t)size, s->be, out->build_id);
		found = out->build_id_len > 0;
	}
	tb_free(buf);
	return found;
}

static int elf_info(struct elf_src *s, struct perf_elf_info *out)
{
	uint8_t eh[64], ph[56], sh[64];
	uint64_t phoff, shoff;
	uint16_t phentsize, phnum, shentsize, shnum;
	bool have_bias = false;

	memset(out, 0, sizeof *out);
	if (src_read(s, 0, eh, 52) < 0 || memcmp(eh, "\177ELF", 4) != 0)
		return -EINVAL;
	if ((eh[4] != 1 && eh[4] != 2) || (eh[5] != 1 && eh[5] != 2))
		return -EINVAL;
	s->is64 = eh[4] == 2;
	s->be = eh[5] == 2;
	if (s->is64 && src_read(s, 0, eh, 64) < 0)
		return -EINVAL;
	out->is_elf = true;
	if (s->is64) {
		phoff = u64(s->be, eh + 32), shoff = u64(s->be, eh + 40);
		phentsize = u16(s, eh + 54), phnum = u16(s, eh + 56);
		shentsize = u16(s, eh + 58), shnum = u16(s, eh + 60);
	} else {
		phoff = u32(s->be, eh + 28), shoff = u32(s->be, eh + 32);
		phentsize = u16(s, eh + 42), phnum = u16(s, eh + 44);
		shentsize = u16(s, eh + 46), shnum = u16(s, eh + 48);
	}
	if (phentsize >= (s->is64 ? 56 : 32) && phnum <= ELF_MAX_PHNUM) {
		for (uint16_t i = 0; i < phnum; i++) {
			uint32_t type, flags;
			uint64_t off, vaddr, filesz;
			if (src_read(s, phoff + (uint64_t)i * phentsize, ph, s->is64 ? 56 : 32) < 0)
				break;
			type = u32(s->be, ph);
			if (s->is64) {
				flags = u32(s->be, ph + 4), off = u64(s->be, ph + 8);
				vaddr = u64(s->be, ph + 16), filesz = u64(s->be, ph + 32);
			} else {
				off = u32(s->be, ph + 4), vaddr = u32(s->be, ph + 8);
				filesz = u32(s->be, ph + 16), flags = u32(s->be, ph + 24);
			}
			if (type == PT_LOAD_ && (flags & PF_X_) && !have_bias) {
				out->load_bias = vaddr - off;
				have_bias = true;
			} else if (type == PT_NOTE_ && !out->build_id_len) {
				notes_at(s, off, filesz, out);
			}
		}
	}
	if (out->build_id_len || shentsize < (s->is64 ? 64 : 40) || shnum > ELF_MAX_SHNUM)
		return 0;
	/* Stripped program headers or notes outside PT_NOTE: try sections. */
	for (uint16_t i = 0; i < shnum; i++) {
		if (src_read(s, shoff + (uint64_t)i * shentsize, sh, s->is64 ? 64 : 40) < 0)
			break;
		if (u32(s->be, sh + 4) != SHT_NOTE_)
			continue;
		uint64_t off = s->is64 ? u64(s->be, sh + 24) : u32(s->be, sh + 16);
		uint64_t size = s->is64 ? u64(s->be, sh + 32) : u32(s->be, sh + 20);
		if (notes_at(s, off, size, out))
			break;
	}
	return 0;
}

int perf_elf_info_mem(const uint8_t *buf, size_t len, struct perf_elf_info *out)
{
	struct elf_src s = {.buf = buf, .fd = -1, .size = len};
	return elf_info(&s, out);
}

int perf_elf_info_file(const char *path, struct perf_elf_info *out, struct tb_err *err)
{
	struct elf_src s = {.fd = -1};
	struct stat st;
	int rc;
	memset(out, 0, sizeof *out);
	s.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (s.fd < 0)
		return tb_err_errno(err, -errno, "cannot open '%s'", path);
	if (fstat(s.fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = tb_err_set(err, -EINVAL, "'%s' is not a regular file", path);
		goto out;
	}
	s.size = (uint64_t)st.st_size;
	rc = elf_info(&s, out);
	if (rc < 0)
		tb_err_set(err, rc, "'%s' is not an ELF file", path);
out:
	tb_close(&s.fd);
	return rc;
}
