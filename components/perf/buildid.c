/*
 * buildid.c: what traced_perf needs from an ELF file: its GNU build id (so
 * frames can be symbolized later against the same binary) and its load bias
 * (so relative pcs are ELF virtual addresses). The reading itself is base's
 * bounded ELF reader (base/elf.c, shared with the trace processor's
 * symbolizer); only the ELF header, program headers and note blocks are
 * read, so a multi-GB binary costs a few small preads.
 */
#include "perf_int.h"

static void elf_info(const struct elf_file *e, struct perf_elf_info *out)
{
	struct elf_phdr ph;
	out->is_elf = true;
	if (elf_first_exec_load(e, &ph) == 0)
		out->load_bias = ph.vaddr - ph.offset;
	out->build_id_len = elf_build_id(e, out->build_id, PERF_BUILD_ID_MAX);
}

int perf_elf_info_mem(const uint8_t *buf, size_t len, struct perf_elf_info *out)
{
	struct elf_file e;
	memset(out, 0, sizeof *out);
	if (elf_open_mem(&e, buf, len) < 0)
		return -EINVAL;
	elf_info(&e, out);
	return 0;
}

int perf_elf_info_file(const char *path, struct perf_elf_info *out, struct tb_err *err)
{
	struct elf_file e;
	memset(out, 0, sizeof *out);
	int rc = elf_open_path(&e, path, err);
	if (rc < 0)
		return rc;
	elf_info(&e, out);
	elf_close(&e);
	return 0;
}

size_t perf_elf_notes_build_id(const uint8_t *notes, size_t len, bool big_endian,
                               uint8_t id[PERF_BUILD_ID_MAX])
{
	return elf_notes_build_id(notes, len, big_endian, id, PERF_BUILD_ID_MAX);
}
