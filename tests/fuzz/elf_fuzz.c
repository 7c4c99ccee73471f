/*
 * Fuzz target for the ELF reader and symbolizer: the input is read as an
 * ELF image (base/elf.c: headers, notes, sections) and its symbol tables
 * loaded and queried (symbolize/symtab.c); the same bytes, NUL-terminated,
 * go through the demangler (symbolize/demangle.c) and, as an answer of
 * llvm-symbolizer, its parser (symbolize/llvm.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "../../components/trace_processor/symbolize/symbolize_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file e;
	if (elf_open_mem(&e, data, size) == 0) {
		uint8_t id[SYM_BUILD_ID_MAX];
		struct elf_phdr ph;
		struct elf_shdr sh;
		struct sym_table t;
		elf_build_id(&e, id, sizeof id);
		elf_first_exec_load(&e, &ph);
		elf_section_by_name(&e, ".gnu_debuglink", &sh);
		sym_table_load(&t, &e);
		for (size_t i = 0; i < t.n; i++) {
			sym_table_lookup(&t, t.v[i].addr);
			sym_table_lookup(&t, t.v[i].addr + t.v[i].size / 2);
		}
		sym_table_lookup(&t, 0);
		sym_table_lookup(&t, UINT64_MAX);
		sym_table_release(&t);
	}
	char *s = tb_malloc(size + 1);
	char out[SYM_MAX_NAME];
	memcpy(s, data, size);
	s[size] = 0;
	sym_demangle(s, out, sizeof out);
	sym_demangle(s, out, 16);
	uint32_t line;
	tp_sym_llvm_parse((const char *)data, size, out, sizeof out, &line);
	tp_sym_llvm_parse((const char *)data, size, out, 4, &line);
	tb_free(s);
	return 0;
}
