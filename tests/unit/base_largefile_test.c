/*
 * Files past 4 GiB on every target: the 32-bit ones (armv7) have a 32-bit
 * size_t and long but musl's 64-bit off_t, so an offset that passes through
 * either is cut. A sparse file keeps these tests a few KiB of real I/O.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

#include "base.h"

#define GIB (1ull << 30)

static int put(int fd, uint64_t off, const void *p, size_t n)
{
	return pwrite(fd, p, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static void le16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void le32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void le64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* An ELF64 file whose build-id note (PT_NOTE) lies at 5 GiB and whose
 * section headers, section names and .gnu_debuglink lie past 4 GiB: the
 * reader finds and reads each of them with pread at its 64-bit offset. */
TEST(base_elf_offsets_past_4gib)
{
	char path[] = "/tmp/tb-largefile-XXXXXX";
	static const uint8_t id[8] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};
	static const char names[] = "\0.shstrtab\0.gnu_debuglink";
	static const char link[] = "app.debug";
	const uint64_t note_off = 5 * GIB + 8, sh_off = 4 * GIB + 256, str_off = 4 * GIB + 1024,
	               link_off = 6 * GIB + 4096 - 4;
	uint8_t eh[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1}, ph[56] = {0}, sh[3][64], note[24];
	struct elf_file e;
	struct elf_phdr p;
	struct elf_shdr s;
	struct tb_err err = {0};
	uint8_t got[16];
	char text[16] = "";
	int fd = mkstemp(path);
	CHECK(fd >= 0);

	le16(eh + 16, 2);      /* ET_EXEC */
	le16(eh + 18, 62);     /* EM_X86_64: any machine will do */
	le64(eh + 32, 64);     /* phoff */
	le64(eh + 40, sh_off); /* shoff */
	le16(eh + 54, 56), le16(eh + 56, 1);
	le16(eh + 58, 64), le16(eh + 60, 3), le16(eh + 62, 1);
	le32(ph, ELF_PT_NOTE);
	le64(ph + 8, note_off);
	le64(ph + 32, sizeof note);
	le32(note, 4), le32(note + 4, sizeof id), le32(note + 8, 3);
	memcpy(note + 12, "GNU", 4);
	memcpy(note + 16, id, sizeof id);
	memset(sh, 0, sizeof sh);
	le32(sh[1], 1), le32(sh[1] + 4, 3); /* .shstrtab, SHT_STRTAB */
	le64(sh[1] + 24, str_off), le64(sh[1] + 32, sizeof names);
	le32(sh[2], 11), le32(sh[2] + 4, 1); /* .gnu_debuglink, PROGBITS */
	le64(sh[2] + 24, link_off), le64(sh[2] + 32, sizeof link);
	int w = put(fd, 0, eh, sizeof eh) | put(fd, 64, ph, sizeof ph) |
	        put(fd, note_off, note, sizeof note) | put(fd, sh_off, sh, sizeof sh) |
	        put(fd, str_off, names, sizeof names) | put(fd, link_off, link, sizeof link);
	close(fd);
	if (w)
		unlink(path);
	CHECK_EQ(w, 0);

	int rc = elf_open_path(&e, path, &err);
	unlink(path);
	CHECK_EQ(rc, 0);
	CHECK_UEQ(e.size, link_off + sizeof link);
	CHECK_UEQ(e.shoff, sh_off);
	CHECK_EQ(elf_phdr(&e, 0, &p), 0);
	CHECK_UEQ(p.offset, note_off);
	CHECK_EQ(elf_build_id(&e, got, sizeof got), sizeof id);
	CHECK(memcmp(got, id, sizeof id) == 0);
	CHECK_EQ(elf_section_by_name(&e, ".gnu_debuglink", &s), 0);
	CHECK_UEQ(s.offset, link_off);
	CHECK_EQ(elf_read(&e, s.offset, text, sizeof link), 0);
	CHECK_STR_EQ(text, link);
	CHECK_EQ(elf_read(&e, s.offset + 1, text, sizeof link), -ERANGE); /* past the end */
	elf_close(&e);
}
