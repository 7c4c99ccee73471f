/*
 * Private declarations of the symbolizer (see README.md in this folder).
 * Reading symbols from ELF files (symbol tables, finding the file of a
 * build id, demangling) is base's (base.h "symbols"), shared with
 * traced_perf's end-of-capture symbolization:
 *
 *   llvm.c      source file and line from llvm-symbolizer, when installed
 *   symbolize.c the trace-level driver: unsymbolized frames -> ModuleSymbols
 *   import.c    ModuleSymbols -> stack_profile_symbol, frame.symbol_set_id
 *               (tp_module_symbols_import, declared in tp_int.h)
 */
#ifndef TB_TP_SYMBOLIZE_INT_H
#define TB_TP_SYMBOLIZE_INT_H

#include "../tp_int.h"

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
bool tp_sym_llvm_locate(char *out, size_t cap);
/* exe: NULL to locate one on PATH, "" for none, else its path. Nothing is
 * started yet. */
void tp_sym_llvm_init(struct sym_llvm *l, const char *exe);
/* End the child (EOF, then SIGKILL if it lingers) and reap it. */
void tp_sym_llvm_release(struct sym_llvm *l);
/* Parse one answer ans[0, n): its first line "FILE:LINE:COLUMN" into
 * file[cap] (NUL-terminated) and *line. False for "??:0:0", line 0, or
 * anything else. */
bool tp_sym_llvm_parse(const char *ans, size_t n, char *file, size_t cap, uint32_t *line);
/* Source file (into file[cap]) and line of file address addr in the ELF at
 * path elf. Returns 0, or -1 when unknown or when there is no usable
 * llvm-symbolizer (after a failure or a timeout none is asked again). */
int tp_sym_llvm_lookup(struct sym_llvm *l, const char *elf, uint64_t addr, char *file, size_t cap,
                       uint32_t *line);

#endif /* TB_TP_SYMBOLIZE_INT_H */
