/*
 * Tests of the symbolizer (components/trace_processor/symbolize): the
 * demangler against c++filt's answers, symbol tables and file finding on a
 * small program this test compiles with gcc (SKIP without it), and the
 * whole round trip: a trace whose frames point into that program gets
 * ModuleSymbols packets, and loading them fills stack_profile_symbol.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../components/trace_processor/symbolize/symbolize_int.h"
#include "pb.h"
#include "pb_fields.h"
#include "test.h"

TEST(tp_symbolize_demangle)
{
	static const char *const cases[][2] = {
	    {"_Z3foov", "foo()"},
	    {"_Z3fooi", "foo(int)"},
	    {"_ZN3foo3barEv", "foo::bar()"},
	    {"_ZNK3Foo3getEv", "Foo::get() const"},
	    {"_ZN2ns5Klass6methodEPKcRKSs",
	     "ns::Klass::method(char const*, std::basic_string<char, std::char_traits<char>, "
	     "std::allocator<char> > const&)"},
	    {"_ZN3FooC2Ev", "Foo::Foo()"},
	    {"_ZN3FooD1Ev", "Foo::~Foo()"},
	    {"_ZNSt6vectorIiSaIiEE9push_backERKi",
	     "std::vector<int, std::allocator<int> >::push_back(int const&)"},
	    {"_Z3maxIiET_S0_S0_", "int max<int>(int, int)"},
	    {"_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv",
	     "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)"},
	    {"_Z4hot_v.cold", "hot_() [clone .cold]"},
	    {"_Z5cold_i.isra.0", "cold_(int) [clone .isra.0]"},
	    {"_ZN3Foo3barIiEEvT_", "void Foo::bar<int>(int)"},
	    {"_ZN12_GLOBAL__N_14workEv", "(anonymous namespace)::work()"},
	    {"_ZN3FooplERKS_", "Foo::operator+(Foo const&)"},
	    {"_ZSt4swapIiEvRT_S1_", "void std::swap<int>(int&, int&)"},
	    {"_ZN5Outer5InnerC1ERKS0_", "Outer::Inner::Inner(Outer::Inner const&)"},
	    {"_Z1fILi3EEvv", "void f<3>()"},
	    {"_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE4sizeEv",
	     "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
	     ">::size()"},
	    /* Rust legacy: escapes decoded, hash dropped */
	    {"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write"},
	    {"_ZN49_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$Drop$GT$4drop17h5a2b6bb3d3f1e2f0E",
	     "<alloc::vec::Vec<T> as Drop>::drop"},
	    /* not handled: kept mangled by the caller */
	    {"_Z1fPFvvE", ""},
	    {"_ZZ4mainE1x", ""},
	    {"main", ""},
	    {"_Z", ""},
	    {"_ZN3fooE", "foo"},
	    {"_ZN3foo", ""},
	    {"_Z3fooPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPPi", ""},
	    {"_Z1fS0_", ""},
	    {"_Z1fT_", ""},
	};
	char out[SYM_MAX_NAME];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		size_t n = sym_demangle(cases[i][0], out, sizeof out);
		if (!n)
			out[0] = 0;
		if (strcmp(out, cases[i][1]) != 0)
			printf("  %s\n", cases[i][0]);
		CHECK_STR_EQ(out, cases[i][1]);
		CHECK_EQ(n, strlen(cases[i][1]));
	}
	/* a small buffer fails cleanly */
	CHECK_EQ(sym_demangle("_ZN3foo3barEv", out, 8), 0);
}

/* ---- a program compiled here ------------------------------------------------ */

static const char prog_src[] =
    "int hot_a(int x) { int s = 0; for (int i = 0; i < x; i++) s += i * x; return s; }\n"
    "int hot_b(int x) { return hot_a(x) + 1; }\n"
    "namespace ns { struct K { int m(int x) const { return x + hot_b(x); } }; }\n"
    "int main(int argc, char **argv) { (void)argv; ns::K k; return k.m(argc); }\n";

struct prog {
	char dir[64];
	char bin[128];
	uint8_t id[SYM_BUILD_ID_MAX];
	size_t id_len;
	uint64_t exec_off; /* file offset of the executable segment */
};

static bool sh(const char *cmd)
{
	return system(cmd) == 0;
}

/* Compile prog_src into a temporary folder; false (SKIP) without g++. */
static bool prog_build(struct prog *p)
{
	char cmd[2048];
	snprintf(p->dir, sizeof p->dir, "/tmp/tb_sym_XXXXXX");
	if (!mkdtemp(p->dir))
		return false;
	snprintf(p->bin, sizeof p->bin, "%s/prog", p->dir);
	snprintf(cmd, sizeof cmd,
	         "printf '%%s' '%s' > %s/prog.cc && g++ -O1 -g -fno-inline -Wl,--build-id "
	         "-o %s %s/prog.cc 2>/dev/null",
	         prog_src, p->dir, p->bin, p->dir);
	if (!sh(cmd)) {
		test_skip("g++ is not available");
		return false;
	}
	struct elf_file e;
	if (elf_open_path(&e, p->bin, NULL) < 0)
		return false;
	p->id_len = elf_build_id(&e, p->id, sizeof p->id);
	struct elf_phdr ph;
	p->exec_off = elf_first_exec_load(&e, &ph) == 0 ? ph.offset & ~0xfffull : 0;
	elf_close(&e);
	return p->id_len > 0;
}

static void prog_remove(struct prog *p)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf %s", p->dir);
	sh(cmd);
}

/* The address nm reports for sym in file. */
static uint64_t nm_addr(const char *file, const char *sym)
{
	char cmd[2048], line[512];
	uint64_t addr = 0;
	snprintf(cmd, sizeof cmd, "nm %s", file);
	FILE *f = popen(cmd, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		char name[256], type;
		unsigned long long a;
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && strcmp(name, sym) == 0)
			addr = a;
	}
	pclose(f);
	return addr;
}

TEST(tp_symbolize_symtab_and_finder)
{
	struct prog p;
	if (!prog_build(&p))
		return;
	uint64_t a = nm_addr(p.bin, "_Z5hot_ai"), k = nm_addr(p.bin, "_ZNK2ns1K1mEi");
	CHECK(a != 0 && k != 0);

	struct elf_file e;
	struct sym_table t;
	CHECK_EQ(elf_open_path(&e, p.bin, NULL), 0);
	CHECK_EQ(sym_table_load(&t, &e), 0);
	elf_close(&e);
	CHECK(t.has_symtab);
	CHECK_STR_EQ(sym_table_lookup(&t, a), "_Z5hot_ai");
	CHECK_STR_EQ(sym_table_lookup(&t, a + 3), "_Z5hot_ai");
	CHECK_STR_EQ(sym_table_lookup(&t, k + 1), "_ZNK2ns1K1mEi");
	CHECK(sym_table_lookup(&t, 0) == NULL);
	sym_table_release(&t);

	/* Found at its own path; a different build id finds nothing. */
	struct sym_finder f;
	struct sym_found found;
	char dbg[128], cmd[2048], hex[2 * SYM_BUILD_ID_MAX + 1];
	sym_finder_init(&f, NULL, false, false);
	snprintf(dbg, sizeof dbg, "%s/debug", p.dir);
	f.debug_root = dbg;
	CHECK_EQ(sym_finder_find(&f, p.bin, p.id, p.id_len, &found), 0);
	CHECK_STR_EQ(found.path, p.bin);
	sym_found_release(&found);
	uint8_t other[SYM_BUILD_ID_MAX];
	memcpy(other, p.id, p.id_len);
	other[0] ^= 0xff;
	CHECK_EQ(sym_finder_find(&f, p.bin, other, p.id_len, &found), -ENOENT);

	/* Stripped binary: the .debug file under DEBUG/.build-id/xx/yyyy.debug wins. */
	for (size_t i = 0; i < p.id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", p.id[i]);
	snprintf(cmd, sizeof cmd,
	         "mkdir -p %s/.build-id/%.2s && objcopy --only-keep-debug %s "
	         "%s/.build-id/%.2s/%s.debug && strip %s",
	         dbg, hex, p.bin, dbg, hex, hex + 2, p.bin);
	CHECK(sh(cmd));
	CHECK_EQ(sym_finder_find(&f, p.bin, p.id, p.id_len, &found), 0);
	CHECK(strstr(found.path, "/.build-id/") != NULL);
	CHECK(found.syms.has_symtab);
	CHECK_STR_EQ(sym_table_lookup(&found.syms, a + 3), "_Z5hot_ai");
	sym_found_release(&found);

	/* Without it, the stripped file alone has no .symtab: only dynsym, so no
	 * hit for hot_a; PERFETTO_BINARY_PATH in find mode finds ROOT/<basename>. */
	snprintf(cmd, sizeof cmd, "mkdir -p %s/syms && mv %s/.build-id/%.2s/%s.debug %s/syms/prog",
	         p.dir, dbg, hex, hex + 2, p.dir);
	CHECK(sh(cmd));
	int rc = sym_finder_find(&f, p.bin, p.id, p.id_len, &found);
	CHECK(rc != 0 || sym_table_lookup(&found.syms, a + 3) == NULL);
	sym_found_release(&found);
	sym_finder_release(&f);
	snprintf(cmd, sizeof cmd, "/nonexistent:%s/syms", p.dir);
	sym_finder_init(&f, cmd, true, true);
	CHECK_EQ(sym_finder_find(&f, "/some/where/prog", p.id, p.id_len, &found), 0);
	CHECK_STR_EQ(sym_table_lookup(&found.syms, a + 3), "_Z5hot_ai");
	sym_found_release(&found);
	sym_finder_release(&f);
	/* index mode finds it by build id whatever its name */
	snprintf(cmd, sizeof cmd, "%s", p.dir);
	sym_finder_init(&f, cmd, false, true);
	CHECK_EQ(sym_finder_find(&f, "/elsewhere/renamed", p.id, p.id_len, &found), 0);
	CHECK(strstr(found.path, "/syms/prog") != NULL);
	sym_found_release(&found);
	sym_finder_release(&f);
	/* ... also through a symlink (how .build-id trees are made) */
	snprintf(cmd, sizeof cmd, "mkdir %s/links && ln -s ../syms/prog %s/links/p", p.dir, p.dir);
	CHECK(sh(cmd));
	snprintf(cmd, sizeof cmd, "%s/links", p.dir);
	sym_finder_init(&f, cmd, false, true);
	CHECK_EQ(sym_finder_find(&f, "/elsewhere/renamed", p.id, p.id_len, &found), 0);
	CHECK(strstr(found.path, "/links/p") != NULL);
	sym_found_release(&found);
	sym_finder_release(&f);

	/* .gnu_debuglink next to the binary (CRC-checked). */
	snprintf(cmd, sizeof cmd,
	         "cd %s && mv syms/prog prog.dbg && objcopy --add-gnu-debuglink=prog.dbg prog",
	         p.dir);
	CHECK(sh(cmd));
	sym_finder_init(&f, NULL, false, false);
	f.debug_root = dbg;
	CHECK_EQ(sym_finder_find(&f, p.bin, p.id, p.id_len, &found), 0);
	CHECK(strstr(found.path, "prog.dbg") != NULL);
	sym_found_release(&found);
	sym_finder_release(&f);
	prog_remove(&p);
}

/* Every truncation of a real binary reads safely. */
TEST(tp_symbolize_truncated_elf)
{
	struct prog p;
	if (!prog_build(&p))
		return;
	char *buf;
	size_t len;
	CHECK_EQ(tb_read_file(p.bin, &buf, &len, 16 << 20, NULL), 0);
	for (size_t cut = 0; cut <= len; cut += cut < 256 ? 1 : 97) {
		struct elf_file e;
		struct sym_table t;
		uint8_t id[SYM_BUILD_ID_MAX];
		if (elf_open_mem(&e, (const uint8_t *)buf, cut) < 0)
			continue;
		elf_build_id(&e, id, sizeof id);
		sym_table_load(&t, &e);
		sym_table_lookup(&t, 0x1000);
		sym_table_release(&t);
	}
	tb_free(buf);
	prog_remove(&p);
}

/* ---- trace round trip ---------------------------------------------------------- */

/* One sequence: a mapping of p.bin (with its build id), frames at the given
 * rel_pcs without names, one sample per frame. */
static uint8_t *trace_for(const struct prog *p, const uint64_t *pcs, size_t n, size_t *len)
{
	struct pb_writer w;
	pb_writer_init_growable(&w);
	unsigned pkt = pb_begin_nested(&w, PB_F_Trace_packet);
	pb_put_uint32(&w, PB_F_TracePacket_trusted_packet_sequence_id, 7);
	pb_put_uint64(&w, PB_F_TracePacket_timestamp, 100);
	pb_put_uint32(&w, PB_F_TracePacket_sequence_flags,
	              PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED);
	unsigned id = pb_begin_nested(&w, PB_F_TracePacket_interned_data);
	unsigned e = pb_begin_nested(&w, PB_F_InternedData_build_ids);
	pb_put_uint64(&w, PB_F_InternedString_iid, 1);
	pb_put_bytes(&w, PB_F_InternedString_str, p->id, p->id_len);
	pb_end_nested(&w, e);
	/* path components of p->bin */
	uint64_t comps[16];
	size_t nc = 0;
	char tmp[128];
	snprintf(tmp, sizeof tmp, "%s", p->bin);
	for (char *s = tmp + 1, *q; s && *s && nc < 16; s = q ? q + 1 : NULL) {
		q = strchr(s, '/');
		if (q)
			*q = 0;
		e = pb_begin_nested(&w, PB_F_InternedData_mapping_paths);
		pb_put_uint64(&w, PB_F_InternedString_iid, nc + 1);
		pb_put_string(&w, PB_F_InternedString_str, s);
		pb_end_nested(&w, e);
		comps[nc] = nc + 1;
		nc++;
	}
	e = pb_begin_nested(&w, PB_F_InternedData_mappings);
	pb_put_uint64(&w, PB_F_Mapping_iid, 1);
	pb_put_uint64(&w, PB_F_Mapping_build_id, 1);
	pb_put_uint64(&w, PB_F_Mapping_start, 0x555500000000 + p->exec_off);
	pb_put_uint64(&w, PB_F_Mapping_end, 0x555500100000);
	pb_put_packed_varint(&w, PB_F_Mapping_path_string_ids, comps, nc);
	pb_put_uint64(&w, PB_F_Mapping_exact_offset, p->exec_off);
	pb_end_nested(&w, e);
	for (size_t i = 0; i < n; i++) {
		e = pb_begin_nested(&w, PB_F_InternedData_frames);
		pb_put_uint64(&w, PB_F_Frame_iid, i + 1);
		pb_put_uint64(&w, PB_F_Frame_mapping_id, 1);
		pb_put_uint64(&w, PB_F_Frame_rel_pc, pcs[i]);
		pb_end_nested(&w, e);
		e = pb_begin_nested(&w, PB_F_InternedData_callstacks);
		pb_put_uint64(&w, PB_F_Callstack_iid, i + 1);
		pb_put_uint64(&w, PB_F_Callstack_frame_ids, i + 1);
		pb_end_nested(&w, e);
	}
	pb_end_nested(&w, id);
	pb_end_nested(&w, pkt);
	for (size_t i = 0; i < n; i++) {
		pkt = pb_begin_nested(&w, PB_F_Trace_packet);
		pb_put_uint32(&w, PB_F_TracePacket_trusted_packet_sequence_id, 7);
		pb_put_uint64(&w, PB_F_TracePacket_timestamp, 200 + i);
		pb_put_uint32(&w, PB_F_TracePacket_sequence_flags,
		              PB_E_TracePacket_SequenceFlags_SEQ_NEEDS_INCREMENTAL_STATE);
		unsigned s = pb_begin_nested(&w, PB_F_TracePacket_perf_sample);
		pb_put_uint32(&w, PB_F_PerfSample_pid, 40);
		pb_put_uint32(&w, PB_F_PerfSample_tid, 40);
		pb_put_uint64(&w, PB_F_PerfSample_callstack_iid, i + 1);
		pb_end_nested(&w, s);
		pb_end_nested(&w, pkt);
	}
	return pb_writer_take(&w, len);
}

static struct tp *load2(const uint8_t *a, size_t an, const uint8_t *b, size_t bn)
{
	struct tp *tp = tp_new(NULL);
	tp_parse(tp, a, an);
	if (b)
		tp_parse(tp, b, bn);
	tp_end_of_file(tp);
	return tp;
}

TEST(tp_symbolize_trace_round_trip)
{
	struct prog p;
	if (!prog_build(&p))
		return;
	uint64_t pcs[3] = {nm_addr(p.bin, "_Z5hot_ai") + 2, nm_addr(p.bin, "_ZNK2ns1K1mEi") + 1,
	                   0x10};
	size_t n;
	uint8_t *trace = trace_for(&p, pcs, 3, &n);
	struct tp *tp = load2(trace, n, NULL, 0);
	CHECK_EQ(tp->t.stack_profile_frame.n, 3);
	struct tp_symbolize_opts o = {
	    .no_system = false, .debug_root = "/nonexistent", .llvm_symbolizer = ""};
	struct tp_symbolize_result res;
	CHECK_EQ(tp_symbolize(tp, &o, &res), 0);
	CHECK_EQ(res.mappings_symbolized, 1);
	CHECK_EQ(res.addresses_symbolized, 2); /* 0x10 is in no function */
	CHECK(res.len > 0);
	/* applied to the loaded trace, or appended to the file: the same rows */
	tp_symbolize_apply(tp, res.packets, res.len);
	struct tp *tp2 = load2(trace, n, res.packets, res.len);
	for (int k = 0; k < 2; k++) {
		struct tp *x = k ? tp2 : tp;
		const struct tp_stack_profile_frame_table *fr = &x->t.stack_profile_frame;
		const struct tp_stack_profile_symbol_table *sy = &x->t.stack_profile_symbol;
		CHECK_EQ(sy->n, 2);
		CHECK_EQ(fr->symbol_set_id[0], 0);
		CHECK_EQ(fr->symbol_set_id[1], 1);
		CHECK_EQ(fr->symbol_set_id[2], TP_NULL_U32);
		CHECK_EQ(fr->name[0], 0); /* frame names stay as recorded */
		CHECK_STR_EQ(tp_str(x, sy->name[0]), "hot_a(int)");
		CHECK_STR_EQ(tp_str(x, sy->name[1]), "ns::K::m(int) const");
		CHECK_EQ(sy->source_file[0], 0);
		CHECK_EQ(sy->line_number[0], TP_NULL_U32);
		CHECK_EQ(x->stats[TP_STAT_stackprofile_invalid_mapping_id], 0);
	}
	/* symbolized frames are not symbolized again */
	struct tp_symbolize_result again;
	CHECK_EQ(tp_symbolize(tp, &o, &again), 0);
	CHECK_EQ(again.mappings_symbolized, 0);
	tp_symbolize_result_release(&again);
	tp_free(tp2);
	tp_symbolize_result_release(&res);
	tp_free(tp);
	tb_free(trace);
	prog_remove(&p);
}

TEST(tp_symbolize_llvm_answer_parse)
{
	char f[32];
	uint32_t line = 0;
	static const char a[] = "/src/dir:x/a.c:12:3\n\n";
	CHECK(tp_sym_llvm_parse(a, sizeof a - 1, f, sizeof f, &line));
	CHECK_STR_EQ(f, "/src/dir:x/a.c");
	CHECK_EQ(line, 12);
	CHECK(!tp_sym_llvm_parse("??:0:0\n\n", 8, f, sizeof f, &line));
	CHECK(!tp_sym_llvm_parse("a.c:0:0\n\n", 9, f, sizeof f, &line));
	CHECK(!tp_sym_llvm_parse("a.c:x:1\n", 8, f, sizeof f, &line));
	CHECK(!tp_sym_llvm_parse(":5:1\n", 5, f, sizeof f, &line));
	CHECK(!tp_sym_llvm_parse("a.c:99999999999:1\n", 18, f, sizeof f, &line));
	CHECK(!tp_sym_llvm_parse("\n", 1, f, sizeof f, &line));
	CHECK(!tp_sym_llvm_parse(a, sizeof a - 1, f, 8, &line));    /* no room for the name */
	CHECK(tp_sym_llvm_parse("b.c:4:0", 7, f, sizeof f, &line)); /* unterminated */
	CHECK_EQ(line, 4);
}

/* With llvm-symbolizer installed, named addresses also get the source file
 * and line (prog_src puts hot_a on line 1 and ns::K::m on line 3); a broken
 * or missing llvm-symbolizer leaves names only. */
TEST(tp_symbolize_llvm_file_and_line)
{
	struct prog p;
	char exe[4096];
	if (!tp_sym_llvm_locate(exe, sizeof exe))
		TEST_SKIP("llvm-symbolizer is not installed");
	if (!prog_build(&p))
		return;
	uint64_t pcs[2] = {nm_addr(p.bin, "_Z5hot_ai") + 2, nm_addr(p.bin, "_ZNK2ns1K1mEi") + 1};
	size_t n;
	char src[256];
	uint8_t *trace = trace_for(&p, pcs, 2, &n);
	snprintf(src, sizeof src, "%s/prog.cc", p.dir);
	static const char *const exes[] = {NULL, "/bin/false", "/nonexistent/llvm-symbolizer"};
	for (size_t k = 0; k < TB_ARRAY_SIZE(exes); k++) {
		struct tp *tp = load2(trace, n, NULL, 0);
		struct tp_symbolize_opts o = {.debug_root = "/nonexistent",
		                              .llvm_symbolizer = exes[k]};
		struct tp_symbolize_result res;
		CHECK_EQ(tp_symbolize(tp, &o, &res), 0);
		CHECK_EQ(res.addresses_symbolized, 2);
		tp_symbolize_apply(tp, res.packets, res.len);
		const struct tp_stack_profile_symbol_table *sy = &tp->t.stack_profile_symbol;
		CHECK_EQ(sy->n, 2);
		CHECK_STR_EQ(tp_str(tp, sy->name[0]), "hot_a(int)");
		CHECK_STR_EQ(tp_str(tp, sy->name[1]), "ns::K::m(int) const");
		if (k == 0) {
			CHECK_STR_EQ(tp_str(tp, sy->source_file[0]), src);
			CHECK_EQ(sy->line_number[0], 1);
			CHECK_STR_EQ(tp_str(tp, sy->source_file[1]), src);
			CHECK_EQ(sy->line_number[1], 3);
		} else {
			CHECK_EQ(sy->source_file[0], 0);
			CHECK_EQ(sy->line_number[1], TP_NULL_U32);
		}
		tp_symbolize_result_release(&res);
		tp_free(tp);
	}
	tb_free(trace);
	prog_remove(&p);
}

TEST(tp_symbolize_unknown_module_counted)
{
	struct pb_writer w;
	size_t n;
	pb_writer_init_growable(&w);
	unsigned pkt = pb_begin_nested(&w, PB_F_Trace_packet);
	unsigned m = pb_begin_nested(&w, PB_F_TracePacket_module_symbols);
	pb_put_string(&w, PB_F_ModuleSymbols_path, "/no/such/lib.so");
	pb_put_bytes(&w, PB_F_ModuleSymbols_build_id, "\x01\x02", 2);
	unsigned a = pb_begin_nested(&w, PB_F_ModuleSymbols_address_symbols);
	pb_put_uint64(&w, PB_F_AddressSymbols_address, 0x10);
	unsigned l = pb_begin_nested(&w, PB_F_AddressSymbols_lines);
	pb_put_string(&w, PB_F_Line_function_name, "f");
	pb_end_nested(&w, l);
	pb_end_nested(&w, a);
	pb_end_nested(&w, m);
	pb_end_nested(&w, pkt);
	uint8_t *buf = pb_writer_take(&w, &n);
	struct tp *tp = load2(buf, n, NULL, 0);
	CHECK_EQ(tp->stats[TP_STAT_stackprofile_invalid_mapping_id], 1);
	CHECK_EQ(tp->t.stack_profile_symbol.n, 0);
	tp_free(tp);
	tb_free(buf);
}
