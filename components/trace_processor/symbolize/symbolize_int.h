/*
 * Private declarations of the symbolizer (see README.md in this folder):
 *
 *   symtab.c    FUNC symbols of .symtab/.dynsym, address -> name
 *   find.c      which file on this machine holds a mapping's symbols
 *   demangle.c  compact Itanium C++ and Rust legacy demangler
 *   llvm.c      source file and line from llvm-symbolizer, when installed
 *   symbolize.c the trace-level driver: unsymbolized frames -> ModuleSymbols
 *   import.c    ModuleSymbols -> stack_profile_symbol, frame.symbol_set_id
 *               (tp_module_symbols_import, declared in tp_int.h)
 */
#ifndef TB_TP_SYMBOLIZE_INT_H
#define TB_TP_SYMBOLIZE_INT_H

#include "../tp_int.h"

#define SYM_MAX_SYMBOLS (4u << 20)  /* symbols kept per file */
#define SYM_MAX_STRTAB ((uint64_t)256 << 20) /* string table bytes read */
#define SYM_BUILD_ID_MAX 64
#define SYM_MAX_NAME 4096 /* demangled name bytes */

/* ---- symtab.c ---------------------------------------------------------------- */

struct sym_entry {
	uint64_t addr, size;
	uint32_t name; /* offset into names */
};

/* The function symbols of one ELF file, sorted by address. */
struct sym_table {
	struct sym_entry *v;
	size_t n;
	char *names; /* NUL-terminated strings (copies of the string tables) */
	size_t names_len;
	bool has_symtab; /* .symtab present (else only .dynsym) */
};

/* Load STT_FUNC (and STT_GNU_IFUNC) symbols with a defined section from
 * .symtab and .dynsym; every header, offset and name bounds-checked.
 * Returns 0 (possibly with no symbols) or -EINVAL when the sections are
 * unusable. t is released first by the caller (sym_table_release). */
int sym_table_load(struct sym_table *t, const struct elf_file *e);
void sym_table_release(struct sym_table *t);
/* The symbol covering file address addr: [addr, addr+size), or for a
 * zero-size symbol the closest one below when no sized one covers it.
 * Returns the raw (mangled) name or NULL. */
const char *sym_table_lookup(const struct sym_table *t, uint64_t addr);

/* ---- find.c ------------------------------------------------------------------ */

/* Where symbols are looked for (Perfetto's PERFETTO_BINARY_PATH semantics,
 * plus the machine's own files). */
struct sym_finder {
	char **roots; /* PERFETTO_BINARY_PATH entries */
	size_t n_roots;
	bool find_mode;   /* PERFETTO_SYMBOLIZER_MODE=find: path-based lookup in roots */
	bool no_system;   /* skip the mapping's own path and /usr/lib/debug */
	const char *debug_root; /* "/usr/lib/debug" (tests may override) */
	bool indexed;
	struct index_entry *entries; /* index mode: every ELF file under the roots */
	size_t n_entries, cap_entries;
};

/* A resolved file: its symbols and the load segment to correct rel_pcs. */
struct sym_found {
	char *path;
	struct sym_table syms;
	bool has_load;
	uint64_t p_vaddr, p_align;
};

void sym_finder_init(struct sym_finder *f, const char *binary_path, bool find_mode,
		     bool no_system);
void sym_finder_release(struct sym_finder *f);
/* Find the file for mapping name with raw build id[len] (len > 0) and load
 * its symbols into out. Returns 0, or -ENOENT when no file on this machine
 * matches (out is then empty). */
int sym_finder_find(struct sym_finder *f, const char *name, const uint8_t *id, size_t len,
		    struct sym_found *out);
void sym_found_release(struct sym_found *s);
/* Does the ELF at path carry build id id[len]? Loads its symbols when it
 * does and they are not empty. */
bool sym_try_file(const char *path, const uint8_t *id, size_t len, struct sym_found *out);

/* ---- demangle.c -------------------------------------------------------------- */

/* Demangle an Itanium C++ (_Z...) or Rust legacy (_ZN...17h<hash>E) symbol
 * into out[cap]. Returns the length written, or 0 when name is not mangled
 * or uses something this demangler does not handle (the caller keeps the
 * mangled name then). */
size_t sym_demangle(const char *name, char *out, size_t cap);

/* ---- llvm.c ------------------------------------------------------------------ */

/* A conversation with one llvm-symbolizer child (started on first use). */
struct sym_llvm {
	bool enabled;   /* an executable is known and has not failed */
	char exe[4096]; /* its path */
	int pid, fd;    /* child and our end of its stdin/stdout; -1 */
	char buf[8192]; /* answer bytes read so far */
	size_t len;
};

/* The path of llvm-symbolizer on PATH into out[cap] (else the highest
 * llvm-symbolizer-<N>). Returns false when there is none. */
bool sym_llvm_locate(char *out, size_t cap);
/* exe: NULL to locate one on PATH, "" for none, else its path. Nothing is
 * started yet. */
void sym_llvm_init(struct sym_llvm *l, const char *exe);
/* End the child (EOF, then SIGKILL if it lingers) and reap it. */
void sym_llvm_release(struct sym_llvm *l);
/* Parse one answer ans[0, n): its first line "FILE:LINE:COLUMN" into
 * file[cap] (NUL-terminated) and *line. False for "??:0:0", line 0, or
 * anything else. */
bool sym_llvm_parse(const char *ans, size_t n, char *file, size_t cap, uint32_t *line);
/* Source file (into file[cap]) and line of file address addr in the ELF at
 * path elf. Returns 0, or -1 when unknown or when there is no usable
 * llvm-symbolizer (after a failure or a timeout none is asked again). */
int sym_llvm_lookup(struct sym_llvm *l, const char *elf, uint64_t addr, char *file,
		    size_t cap, uint32_t *line);

#endif /* TB_TP_SYMBOLIZE_INT_H */
