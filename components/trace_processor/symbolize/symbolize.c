/*
 * symbolize.c: offline symbolization of a loaded trace, as Perfetto's
 * `traceconv symbolize` and trace_processor_shell (PERFETTO_BINARY_PATH) do.
 *
 * The frames to resolve are Perfetto's: every stack_profile_frame without a
 * symbol_set_id whose mapping has a build id. Per mapping, the file with its
 * symbols is found on this machine (find.c), each distinct rel_pc is turned
 * into a file address and looked up (symtab.c, names demangled by
 * demangle.c), and one ModuleSymbols packet is written per mapping that
 * resolved anything. When llvm-symbolizer is installed (llvm.c), each named
 * address also gets the source file and line of its file address. The packets are a valid Trace on
 * their own, to be appended to the trace or applied to the loaded one (tp_symbolize_apply).
 *
 * rel_pc -> file address, as Perfetto's local symbolizer: rel_pc is already
 * an address in the ELF's own space when the recorder knew the load bias
 * (traced_perf: pc - start + exact_offset + load_bias). When the recorded
 * load_bias is below what the file's first executable PT_LOAD implies,
 *
 *   real_bias = align_down(p_vaddr, p_align) - align_down(exact_offset - start_offset, p_align)
 *
 * the difference is added (perf and simpleperf imports record no bias).
 */
#include "symbolize_int.h"
#include "../model/model.h"
#include "pb.h"
#include "pb_fields.h"

#include <stdlib.h>

struct pending {
	uint32_t mapping;
	int64_t rel_pc;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;
	if (x->mapping != y->mapping)
		return x->mapping < y->mapping ? -1 : 1;
	return x->rel_pc < y->rel_pc ? -1 : x->rel_pc > y->rel_pc;
}

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = strlen(s);
	if (n == 0 || n % 2 || n / 2 > cap)
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		int v = c >= '0' && c <= '9'   ? c - '0'
		        : c >= 'a' && c <= 'f' ? c - 'a' + 10
		        : c >= 'A' && c <= 'F' ? c - 'A' + 10
		                               : -1;
		if (v < 0)
			return 0;
		out[i / 2] = (uint8_t)(i % 2 ? out[i / 2] | v : v << 4);
	}
	return n / 2;
}

static uint64_t align_down(uint64_t v, uint64_t a)
{
	return a > 1 && (a & (a - 1)) == 0 ? v & ~(a - 1) : v;
}

static uint64_t correction(const struct tp *tp, uint32_t m, const struct sym_found *s)
{
	const struct tp_stack_profile_mapping_table *mt = &tp->t.stack_profile_mapping;
	if (!s->has_load)
		return 0;
	uint64_t off = (uint64_t)mt->exact_offset[m] - (uint64_t)mt->start_offset[m];
	uint64_t real = align_down(s->p_vaddr, s->p_align) - align_down(off, s->p_align);
	uint64_t have = (uint64_t)mt->load_bias[m];
	return real > have ? real - have : 0;
}

/* One ModuleSymbols packet for mapping m's pcs[0, n). Returns frames named. */
static uint32_t emit_module(struct tp *tp, struct pb_writer *w, uint32_t m, const uint8_t *id,
                            size_t id_len, const struct pending *pcs, size_t n,
                            const struct sym_found *s, struct sym_llvm *llvm)
{
	const struct tp_stack_profile_mapping_table *mt = &tp->t.stack_profile_mapping;
	char dem[SYM_MAX_NAME], src[4096];
	uint32_t line_no;
	uint64_t corr = correction(tp, m, s);
	uint32_t named = 0;
	unsigned pkt = 0, mod = 0;
	for (size_t i = 0; i < n; i++) {
		const char *fn = sym_table_lookup(&s->syms, (uint64_t)pcs[i].rel_pc + corr);
		if (!fn)
			continue;
		if (!named) {
			pkt = pb_begin_nested(w, PB_F_Trace_packet);
			mod = pb_begin_nested(w, PB_F_TracePacket_module_symbols);
			pb_put_string(w, PB_F_ModuleSymbols_path, tp_str(tp, mt->name[m]));
			pb_put_bytes(w, PB_F_ModuleSymbols_build_id, id, id_len);
		}
		unsigned as = pb_begin_nested(w, PB_F_ModuleSymbols_address_symbols);
		pb_put_uint64(w, PB_F_AddressSymbols_address, (uint64_t)pcs[i].rel_pc);
		unsigned line = pb_begin_nested(w, PB_F_AddressSymbols_lines);
		pb_put_string(w, PB_F_Line_function_name,
		              sym_demangle(fn, dem, sizeof dem) ? dem : fn);
		if (tp_sym_llvm_lookup(llvm, s->path, (uint64_t)pcs[i].rel_pc + corr, src,
		                       sizeof src, &line_no) == 0) {
			pb_put_string(w, PB_F_Line_source_file_name, src);
			pb_put_uint32(w, PB_F_Line_line_number, line_no);
		}
		pb_end_nested(w, line);
		pb_end_nested(w, as);
		named++;
	}
	if (named) {
		pb_end_nested(w, mod);
		pb_end_nested(w, pkt);
	}
	return named;
}

int tp_symbolize(struct tp *tp, const struct tp_symbolize_opts *o, struct tp_symbolize_result *res)
{
	const struct tp_stack_profile_frame_table *ft = &tp->t.stack_profile_frame;
	const struct tp_stack_profile_mapping_table *mt = &tp->t.stack_profile_mapping;
	struct sym_finder finder;
	struct sym_llvm llvm;
	struct pb_writer w;
	struct pending *v = NULL;
	size_t n = 0;
	uint8_t id[SYM_BUILD_ID_MAX];

	memset(res, 0, sizeof *res);
	for (uint32_t i = 0; i < ft->n; i++) {
		uint32_t m = ft->mapping[i];
		if (ft->symbol_set_id[i] != TP_NULL_U32 || m >= mt->n || mt->build_id[m] == 0)
			continue;
		if (n % 1024 == 0)
			v = tb_realloc(v, (n + 1024) * sizeof *v);
		v[n++] = (struct pending){m, ft->rel_pc[i]};
	}
	if (n)
		qsort(v, n, sizeof *v, cmp_pending);

	sym_finder_init(&finder, o->binary_path, o->find_mode, o->no_system);
	if (o->debug_root)
		finder.debug_root = o->debug_root;
	tp_sym_llvm_init(&llvm, n ? o->llvm_symbolizer : "");
	pb_writer_init_growable(&w);
	for (size_t i = 0, j; i < n; i = j) {
		size_t uniq = 0;
		for (j = i; j < n && v[j].mapping == v[i].mapping; j++)
			if (j == i || v[j].rel_pc != v[j - 1].rel_pc)
				v[i + uniq++] = v[j];
		uint32_t m = v[i].mapping;
		size_t frames = j - i;
		struct sym_found found;
		size_t id_len = unhex(tp_str(tp, mt->build_id[m]), id, sizeof id);
		uint32_t named = 0;
		if (id_len &&
		    sym_finder_find(&finder, tp_str(tp, mt->name[m]), id, id_len, &found) == 0) {
			named = emit_module(tp, &w, m, id, id_len, v + i, uniq, &found, &llvm);
			sym_found_release(&found);
		}
		if (named) {
			res->mappings_symbolized++;
			res->addresses_symbolized += named;
		} else {
			res->mappings_failed++;
			res->frames_failed += (uint32_t)frames;
		}
	}
	sym_finder_release(&finder);
	tp_sym_llvm_release(&llvm);
	tb_free(v);
	if (pb_writer_error(&w)) {
		pb_writer_release(&w);
		return -EMSGSIZE;
	}
	res->packets = pb_writer_take(&w, &res->len);
	pb_writer_release(&w);
	return 0;
}

void tp_symbolize_result_release(struct tp_symbolize_result *res)
{
	tb_free(res->packets);
	memset(res, 0, sizeof *res);
}

void tp_symbolize_apply(struct tp *tp, const uint8_t *trace, size_t len)
{
	struct pb_reader r, pr;
	struct pb_field f = {0}, pf = {0};
	pb_reader_init(&r, trace, len);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_Trace_packet || f.wire != PB_WIRE_LEN)
			continue;
		pb_reader_init_field(&pr, &f);
		while (pb_next(&pr, &pf))
			if (pf.id == PB_F_TracePacket_module_symbols && pf.wire == PB_WIRE_LEN)
				tp_module_symbols_import(tp, pf.data, pf.len);
	}
}
