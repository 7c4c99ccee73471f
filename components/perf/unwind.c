/*
 * unwind.c: DWARF unwinding of a copied user stack (UNWIND_DWARF), as
 * Perfetto's traced_perf does with libunwindstack and `perf record
 * --call-graph dwarf` with libunwind. Each sample brings the user registers
 * (PERF_SAMPLE_REGS_USER) and up to 64 KiB of stack from the user sp
 * (PERF_SAMPLE_STACK_USER); libunwind's remote API (the nongnu project,
 * pinned in DEPS) walks it through our accessors:
 *
 *   find_proc_info  the pc's executable mapping -> its ELF file's
 *                   .eh_frame_hdr search table (cached per file and build
 *                   id, shared by every process that maps it) -> libunwind's
 *                   dwarf_search_unwind_table finds and parses the FDE
 *   access_mem      the copied stack bytes, or the cached .eh_frame_hdr /
 *                   .eh_frame of the ELF being looked at; nothing else (no
 *                   /proc/PID/mem: a read past the copy ends the unwind
 *                   with MEMORY_INVALID, as in Perfetto)
 *   access_reg      the sampled registers, renumbered perf -> libunwind
 *
 * Addresses: a mapping [start, end) at file offset `offset` of an ELF whose
 * first executable PT_LOAD has p_vaddr - p_offset = load_bias holds ELF
 * virtual address v at v + (start - offset - load_bias); the cached
 * sections are kept by virtual address, so the eh_frame_hdr's pc- and
 * data-relative pointers stay consistent with the process' pcs.
 *
 * Every file read is bounds-checked and copied (never mmap'd, so a file
 * truncated under us cannot fault); corrupt CFI makes libunwind fail the
 * step, which ends the stack with an error. Not thread-safe: one unwinder
 * per traced_perf instance, driven from its loop.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "perf_int.h"

/* build.sh puts libunwind's headers on the include path of the targets it
 * builds for. */
#if defined(__has_include)
#if __has_include(<libunwind.h>)
#define TB_PERF_HAVE_LIBUNWIND 1
#endif
#endif

#if defined(TB_PERF_HAVE_LIBUNWIND)
#include <libunwind.h>

/* libunwind's search of an .eh_frame_hdr table, exported but not declared
 * in its public headers (perf declares it the same way). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                              unw_dyn_info_t *di, unw_proc_info_t *pi,
                                              int need_unwind_info, void *arg);
#endif

#define UNW_ELF_MAX_HDR ((size_t)16 << 20) /* .eh_frame_hdr bytes kept per file */
#define UNW_ELF_MAX_EH ((size_t)64 << 20)  /* .eh_frame bytes kept per file */
#define UNW_PT_GNU_EH_FRAME 0x6474e550u

/* The unwind tables of one ELF file. */
struct unw_elf {
	uint64_t hash; /* of path and build id */
	char *path;
	uint8_t build_id[PERF_BUILD_ID_MAX];
	size_t build_id_len;
	bool ok;            /* tables found and parsed */
	uint64_t load_bias; /* p_vaddr - p_offset of the first executable PT_LOAD */
	uint64_t hdr_vaddr, eh_vaddr, table_vaddr, fde_count;
	uint8_t *hdr, *eh;
	size_t hdr_len, eh_len;
};

static uint64_t rd_word(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, p, n); /* little endian: every target we build for */
	return v;
}

/* A DW_EH_PE-encoded value at hdr[*off] (the subset .eh_frame_hdr uses:
 * absptr, udata4/sdata4, udata8/sdata8, optionally pc-relative). Returns
 * false when it does not fit or the encoding is another. */
static bool eh_read(const struct unw_elf *e, size_t *off, uint8_t enc, uint64_t *out)
{
	size_t n;
	uint64_t v;
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
		n = sizeof(void *);
		break;
	case 0x03: /* udata4 */
	case 0x0b: /* sdata4 */
		n = 4;
		break;
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		n = 8;
		break;
	default:
		return false;
	}
	if (e->hdr_len < n || *off > e->hdr_len - n)
		return false;
	v = rd_word(e->hdr + *off, n);
	if ((enc & 0x0f) == 0x0b)
		v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10: /* pcrel */
		v += e->hdr_vaddr + *off;
		break;
	case 0x30: /* datarel: relative to the start of .eh_frame_hdr */
		v += e->hdr_vaddr;
		break;
	default:
		return false;
	}
	*off += n;
	*out = v;
	return true;
}

/* Parse the .eh_frame_hdr header: version 1, the encodings, eh_frame_ptr,
 * fde_count, then a table of {initial location, FDE address} pairs, each a
 * datarel sdata4 (0x3b), sorted by location: libunwind's binary search
 * needs that form. */
static bool parse_hdr(struct unw_elf *e)
{
	size_t off = 4;
	uint64_t eh_ptr, count;
	if (e->hdr_len < 4 || e->hdr[0] != 1 || e->hdr[3] != 0x3b)
		return false;
	if (!eh_read(e, &off, e->hdr[1], &eh_ptr) || !eh_read(e, &off, e->hdr[2], &count))
		return false;
	if (count > (e->hdr_len - off) / 8)
		return false;
	e->eh_vaddr = eh_ptr;
	e->table_vaddr = e->hdr_vaddr + off;
	e->fde_count = count;
	return true;
}

/* Copy [off, off + len) of the file into a new buffer, or NULL. */
static uint8_t *read_range(const struct elf_file *f, uint64_t off, uint64_t len)
{
	uint8_t *b;
	if (len == 0 || off > f->size || len > f->size - off)
		return NULL;
	b = tb_malloc((size_t)len);
	if (elf_read(f, off, b, (size_t)len) < 0) {
		tb_free(b);
		return NULL;
	}
	return b;
}

/* The file range of virtual address v up to the end of its PT_LOAD's file
 * bytes, when .eh_frame has no section header (a stripped file). */
static bool vaddr_range(const struct elf_file *f, uint64_t v, uint64_t *off, uint64_t *len)
{
	struct elf_phdr ph;
	for (unsigned i = 0; i < f->phnum; i++) {
		if (elf_phdr(f, i, &ph) < 0 || ph.type != ELF_PT_LOAD)
			continue;
		if (v >= ph.vaddr && v - ph.vaddr < ph.filesz) {
			*off = ph.offset + (v - ph.vaddr);
			*len = ph.filesz - (v - ph.vaddr);
			return true;
		}
	}
	return false;
}

static const uint8_t *own_vdso(size_t *len);

/* Read the unwind tables of path: .eh_frame_hdr (section, else the
 * PT_GNU_EH_FRAME segment) and .eh_frame (section, else from the header's
 * eh_frame_ptr to the end of its segment). e->ok tells whether they are
 * usable. */
static void elf_load(struct unw_elf *e, const char *path)
{
	struct elf_file f;
	struct elf_shdr sh;
	struct elf_phdr ph;
	uint64_t hoff = 0, hlen = 0, eoff = 0, elen = 0;
	uint8_t *vdso = NULL;
	if (strcmp(path, "[vdso]") == 0) {
		/* The kernel maps one vDSO image into every process of an ABI:
		 * ours is theirs (a clock_gettime in it is a common leaf). */
		size_t len = 0;
		const uint8_t *img = own_vdso(&len);
		if (!img)
			return;
		vdso = tb_memdup(img, len);
		if (elf_open_mem(&f, vdso, len) < 0)
			goto out_free;
	} else if (elf_open_path(&f, path, NULL) < 0) {
		return;
	}
	if (elf_first_exec_load(&f, &ph) == 0)
		e->load_bias = ph.vaddr - ph.offset;
	if (elf_section_by_name(&f, ".eh_frame_hdr", &sh) == 0 && sh.type != ELF_SHT_NOBITS) {
		e->hdr_vaddr = sh.addr, hoff = sh.offset, hlen = sh.size;
	} else {
		for (unsigned i = 0; i < f.phnum; i++) {
			if (elf_phdr(&f, i, &ph) == 0 && ph.type == UNW_PT_GNU_EH_FRAME) {
				e->hdr_vaddr = ph.vaddr, hoff = ph.offset, hlen = ph.filesz;
				break;
			}
		}
	}
	if (hlen == 0 || hlen > UNW_ELF_MAX_HDR || !(e->hdr = read_range(&f, hoff, hlen)))
		goto out;
	e->hdr_len = (size_t)hlen;
	if (!parse_hdr(e))
		goto out;
	if (elf_section_by_name(&f, ".eh_frame", &sh) == 0 && sh.type != ELF_SHT_NOBITS &&
	    sh.addr == e->eh_vaddr) {
		eoff = sh.offset, elen = sh.size;
	} else if (!vaddr_range(&f, e->eh_vaddr, &eoff, &elen)) {
		goto out;
	}
	if (elen > UNW_ELF_MAX_EH)
		elen = UNW_ELF_MAX_EH;
	if (!(e->eh = read_range(&f, eoff, elen)))
		goto out;
	e->eh_len = (size_t)elen;
	e->ok = true;
out:
	elf_close(&f);
out_free:
	tb_free(vdso);
}

/* This process' own vDSO image and its length, or NULL. */
static const uint8_t *own_vdso(size_t *len)
{
	static const uint8_t *img;
	static size_t img_len;
	static bool looked;
	if (!looked) {
		struct perf_maps m = {0};
		looked = true;
		if (perf_maps_load(&m, (int)getpid(), NULL) == 0) {
			for (size_t i = 0; i < m.n; i++) {
				if (strcmp(m.v[i].path, "[vdso]") == 0 && m.v[i].offset == 0) {
					img = (const uint8_t *)(uintptr_t)m.v[i].start;
					img_len = (size_t)(m.v[i].end - m.v[i].start);
					break;
				}
			}
		}
		perf_maps_release(&m);
	}
	*len = img_len;
	return img;
}

static void elf_free(struct unw_elf *e)
{
	tb_free(e->path);
	tb_free(e->hdr);
	tb_free(e->eh);
	tb_free(e);
}

/* The cached tables of the file behind m (loaded on first use). */
static struct unw_elf *elf_get(struct perf_unwinder *u, const struct perf_mapping *m)
{
	size_t plen = strlen(m->path);
	size_t idlen = m->elf_loaded ? m->elf.build_id_len : 0;
	uint64_t h = tb_hash_bytes(m->path, plen, tb_hash_bytes(m->elf.build_id, idlen, 0));
	struct unw_elf *e;
	for (size_t i = 0; i < u->elves.len; i++) {
		e = u->elves.data[i];
		if (e->hash == h && e->build_id_len == idlen && strcmp(e->path, m->path) == 0 &&
		    memcmp(e->build_id, m->elf.build_id, idlen) == 0)
			return e;
	}
	if (u->bytes > PERF_UNWIND_CACHE_BYTES)
		perf_unwinder_clear(u);
	e = tb_calloc(1, sizeof *e);
	e->hash = h;
	e->path = tb_strdup(m->path);
	memcpy(e->build_id, m->elf.build_id, idlen);
	e->build_id_len = idlen;
	elf_load(e, m->path);
	u->bytes += e->hdr_len + e->eh_len + sizeof *e + plen;
	vec_push(&u->elves, e);
	u->stats.files++;
	if (!e->ok)
		u->stats.files_without_cfi++;
	return e;
}

void perf_unwinder_clear(struct perf_unwinder *u)
{
	for (size_t i = 0; i < u->elves.len; i++)
		elf_free(u->elves.data[i]);
	vec_clear(&u->elves);
	u->bytes = 0;
	u->cur = NULL;
#if defined(TB_PERF_HAVE_LIBUNWIND)
	if (u->as)
		unw_flush_cache((unw_addr_space_t)u->as, 0, 0);
#endif
}

const char *perf_unwind_error_name(uint32_t e)
{
	/* Profiling.StackUnwindError, as Perfetto's error frames spell them */
	static const char *const names[] = {
	    "UNKNOWN",     "NONE",        "MEMORY_INVALID",     "UNWIND_INFO",
	    "UNSUPPORTED", "INVALID_MAP", "MAX_FRAME_EXCEEDED", "REPEATED_FRAME",
	    "INVALID_ELF", "SYSTEM_CALL", "THREAD_TIMEOUT",     "THREAD_DOES_NOT_EXIST",
	    "BAD_ARCH",    "MAPS_PARSE",  "INVALID_PARAMETER",  "PTRACE_CALL",
	};
	return e < TB_ARRAY_SIZE(names) ? names[e] : "UNKNOWN";
}

#if defined(TB_PERF_HAVE_LIBUNWIND)

bool perf_unwind_supported(void)
{
	return PERF_REGS_N > 0;
}

/* libunwind register number -> index among the sampled registers, or -1. */
static int reg_index(unw_regnum_t r)
{
#if defined(__x86_64__)
	/* libunwind: RAX RDX RCX RBX RSI RDI RBP RSP R8..R15 RIP
	 * perf:      AX BX CX DX SI DI BP SP IP FLAGS CS SS R8..R15 */
	static const int8_t map[] = {0, 3, 2, 1, 4, 5, 6, 7, 12, 13, 14, 15, 16, 17, 18, 19, 8};
	return r >= 0 && (size_t)r < sizeof map ? map[r] : -1;
#elif defined(__aarch64__) || defined(__arm__)
	return r >= 0 && r < PERF_REGS_N ? (int)r : -1; /* the same numbering */
#elif defined(__riscv)
	if (r == UNW_RISCV_PC)
		return PERF_REGS_PC;
	return r >= 1 && r < 32 ? (int)r : -1; /* x1..x31 = perf's RA..T6 */
#else
	return -1;
#endif
}

static int acc_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi, int need,
                              void *arg)
{
	struct perf_unwinder *u = arg;
	const struct perf_mapping *m = u->maps ? perf_maps_find(u->maps, ip) : NULL;
	struct unw_elf *e;
	unw_dyn_info_t di;
	if (!m || !m->exec || (m->path[0] != '/' && strcmp(m->path, "[vdso]") != 0)) {
		u->why = PERF_UNWIND_ERROR_INVALID_MAP;
		return -UNW_ENOINFO;
	}
	e = elf_get(u, m);
	if (!e->ok) {
		u->why = PERF_UNWIND_ERROR_INVALID_ELF;
		return -UNW_ENOINFO;
	}
	u->cur = e;
	u->cur_bias = m->start - m->offset - e->load_bias;
	memset(&di, 0, sizeof di);
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = (unw_word_t)(e->hdr_vaddr + u->cur_bias);
	di.u.rti.table_data = (unw_word_t)(e->table_vaddr + u->cur_bias);
	di.u.rti.table_len = (unw_word_t)(e->fde_count * 8 / sizeof(unw_word_t));
	u->why = PERF_UNWIND_ERROR_UNWIND_INFO;
	return UNW_OBJ(dwarf_search_unwind_table)(as, ip, &di, pi, need, arg);
}

static void acc_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg) {}

static int acc_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO;
}

/* Copy what of [v, v + n) lies in region [base, base + len) into out
 * (zeros elsewhere): libunwind reads single bytes as the aligned word
 * around them, which may reach past a section's end. */
static bool from_region(uint64_t v, size_t n, uint64_t base, const uint8_t *b, size_t len,
                        uint8_t *out)
{
	if (!b || v < base || v - base >= len)
		return false;
	size_t at = (size_t)(v - base), k = len - at < n ? len - at : n;
	memset(out, 0, n);
	memcpy(out, b + at, k);
	return true;
}

/* A word of e's tables at process address addr (bias: see the top). */
static bool read_tables(const struct unw_elf *e, uint64_t bias, uint64_t addr, uint8_t *w)
{
	uint64_t v = addr - bias;
	return from_region(v, sizeof(unw_word_t), e->hdr_vaddr, e->hdr, e->hdr_len, w) ||
	       from_region(v, sizeof(unw_word_t), e->eh_vaddr, e->eh, e->eh_len, w);
}

/* The same through the file mapped at addr (its tables are in a read-only
 * mapping; the bias comes from the file's executable one). */
static bool read_other_tables(struct perf_unwinder *u, uint64_t addr, uint8_t *w)
{
	const struct perf_mapping *m = perf_maps_find(u->maps, addr), *x = NULL;
	struct unw_elf *e;
	if (!m || (m->path[0] != '/' && strcmp(m->path, "[vdso]") != 0))
		return false;
	for (size_t i = 0; i < u->maps->n && !x; i++)
		if (u->maps->v[i].exec && strcmp(u->maps->v[i].path, m->path) == 0)
			x = &u->maps->v[i];
	if (!x || !(e = elf_get(u, x))->ok)
		return false;
	return read_tables(e, x->start - x->offset - e->load_bias, addr, w);
}

static int acc_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
                          void *arg)
{
	struct perf_unwinder *u = arg;
	uint8_t w[sizeof(unw_word_t)];
	if (write)
		return -UNW_EINVAL;
	if (addr >= u->sp && addr - u->sp <= u->stack_len &&
	    u->stack_len - (addr - u->sp) >= sizeof w) {
		memcpy(valp, u->stack + (addr - u->sp), sizeof w);
		return 0;
	}
	if (u->cur && read_tables(u->cur, u->cur_bias, addr, w)) {
		memcpy(valp, w, sizeof w);
		return 0;
	}
	/* Another file's tables: libunwind's cache may apply a rule found
	 * earlier (a DWARF expression it reads again) without asking for
	 * the proc info that would have made that file the current one. */
	if (u->maps && read_other_tables(u, addr, w)) {
		memcpy(valp, w, sizeof w);
		return 0;
	}
	u->mem_error = true;
	return -UNW_EINVAL;
}

static int acc_access_reg(unw_addr_space_t as, unw_regnum_t r, unw_word_t *valp, int write,
                          void *arg)
{
	struct perf_unwinder *u = arg;
	int i = reg_index(r);
	if (write)
		return -UNW_EINVAL;
	if (i < 0 || (size_t)i >= u->n_regs) {
#if defined(__riscv)
		if (r == 0) { /* x0 */
			*valp = 0;
			return 0;
		}
#endif
		return -UNW_EBADREG;
	}
	*valp = (unw_word_t)rd_word(u->regs + (size_t)i * 8, 8);
	return 0;
}

static int acc_access_fpreg(unw_addr_space_t as, unw_regnum_t r, unw_fpreg_t *val, int write,
                            void *arg)
{
	return -UNW_EINVAL;
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int acc_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
                             unw_word_t *off, void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
    .find_proc_info = acc_find_proc_info,
    .put_unwind_info = acc_put_unwind_info,
    .get_dyn_info_list_addr = acc_get_dyn_info_list_addr,
    .access_mem = acc_access_mem,
    .access_reg = acc_access_reg,
    .access_fpreg = acc_access_fpreg,
    .resume = acc_resume,
    .get_proc_name = acc_get_proc_name,
};

void perf_unwinder_init(struct perf_unwinder *u)
{
	memset(u, 0, sizeof *u);
	u->last_pid = -1;
	unw_addr_space_t as = unw_create_addr_space(&accessors, 0);
	if (as)
		unw_set_caching_policy(as, UNW_CACHE_GLOBAL);
	u->as = as;
}

void perf_unwinder_release(struct perf_unwinder *u)
{
	perf_unwinder_clear(u);
	vec_release(&u->elves);
	if (u->as)
		unw_destroy_addr_space((unw_addr_space_t)u->as);
	u->as = NULL;
}

uint32_t perf_unwind(struct perf_unwinder *u, int32_t pid, const struct perf_maps *maps,
                     const uint8_t *regs, size_t n_regs, const uint8_t *stack, size_t stack_len,
                     uint64_t *pcs, uint64_t *sps, size_t max, size_t *n_out)
{
	unw_cursor_t c;
	unw_word_t ip, sp, last_ip = 0, last_sp = 0;
	uint32_t err = PERF_UNWIND_ERROR_NONE;
	size_t n = 0;
	bool exact = true; /* ip is the sampled pc, not a return address */
	int rc;

	*n_out = 0;
	if (!u->as || n_regs < PERF_REGS_N || PERF_REGS_N == 0)
		return PERF_UNWIND_ERROR_INVALID_PARAMETER;
	/* libunwind caches per address space by pc: another process may
	 * have other code at the same address. */
	if (pid != u->last_pid) {
		unw_flush_cache((unw_addr_space_t)u->as, 0, 0);
		u->last_pid = pid;
	}
	u->maps = maps;
	u->regs = regs;
	u->n_regs = n_regs;
	u->sp = rd_word(regs + (size_t)PERF_REGS_SP * 8, 8);
	u->stack = stack;
	u->stack_len = stack ? stack_len : 0;
	u->cur = NULL;
	u->mem_error = false;
	u->why = 0;
	u->stats.samples++;
	if (unw_init_remote(&c, (unw_addr_space_t)u->as, u) < 0) {
		err = PERF_UNWIND_ERROR_UNWIND_INFO;
		goto out;
	}
	for (;;) {
		if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || unw_get_reg(&c, UNW_REG_SP, &sp) < 0) {
			err = PERF_UNWIND_ERROR_UNWIND_INFO;
			break;
		}
		if (ip == 0)
			break;
		if (n && ip == last_ip && sp == last_sp) {
			err = PERF_UNWIND_ERROR_REPEATED_FRAME;
			break;
		}
		if (n == max) {
			err = PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED;
			break;
		}
		if (sps)
			sps[n] = sp;
		pcs[n++] = exact || ip < PERF_CALLER_PC_ADJUST ? ip : ip - PERF_CALLER_PC_ADJUST;
		last_ip = ip, last_sp = sp;
		u->mem_error = false;
		u->why = 0;
		/* From here on each ip is a return address (a frame a signal
		 * interrupted is not told apart: that takes its code bytes,
		 * which are never read). */
		exact = false;
		rc = unw_step(&c);
		if (rc == 0)
			break;
		if (rc < 0) {
			err = u->mem_error ? PERF_UNWIND_ERROR_MEMORY_INVALID
			      : u->why     ? u->why
			                   : PERF_UNWIND_ERROR_UNWIND_INFO;
			break;
		}
	}
out:
	u->cur = NULL;
	u->stack = NULL;
	u->regs = NULL;
	u->maps = NULL;
	*n_out = n;
	u->stats.frames += n;
	if (err != PERF_UNWIND_ERROR_NONE)
		u->stats.errors++;
	return err;
}

#else /* no libunwind for this target: DWARF falls back to frame pointers */

bool perf_unwind_supported(void)
{
	return false;
}

void perf_unwinder_init(struct perf_unwinder *u)
{
	memset(u, 0, sizeof *u);
	u->last_pid = -1;
}

void perf_unwinder_release(struct perf_unwinder *u)
{
	perf_unwinder_clear(u);
	vec_release(&u->elves);
}

uint32_t perf_unwind(struct perf_unwinder *u, int32_t pid, const struct perf_maps *maps,
                     const uint8_t *regs, size_t n_regs, const uint8_t *stack, size_t stack_len,
                     uint64_t *pcs, uint64_t *sps, size_t max, size_t *n_out)
{
	(void)elf_get;
	*n_out = 0;
	return PERF_UNWIND_ERROR_UNSUPPORTED;
}

#endif
