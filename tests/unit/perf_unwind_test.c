/*
 * Unit tests of components/perf/unwind.c (DWARF unwinding of copied user
 * stacks) against stacks captured from this very process: a comparator
 * called by the C library's qsort copies its registers and stack the way
 * PERF_SAMPLE_REGS_USER / STACK_USER do, and the unwinder must walk back
 * through the library's frames (built without frame pointers) into our
 * caller. `readelf --debug-dump=frames-interp` is the reference for the CFA
 * rules of the library frames crossed: each frame's CFA (the caller's sp)
 * and return address must be what readelf's row for that pc says.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <asm/perf_regs.h>
#include <linux/perf_event.h>

#include "perf_int.h"
#include "test.h"

#if (defined(__x86_64__) || defined(__aarch64__)) && defined(TB_TEST_BUILD)
#define CAN_CAPTURE 1

/* The capture: registers in PERF_REGS_MASK order, and the stack from the
 * captured sp up to PERF_STACK_USER_SIZE bytes or the stack's end. */
static uint64_t cap_regs[PERF_REGS_N];
static uint8_t cap_stack[PERF_STACK_USER_SIZE];
static size_t cap_len;
static bool cap_done;
static void *ret_into_test; /* where sorter() returns to */
static void *ret_into_cmp;  /* where capture() returns to (in the comparator) */

/* Byte copy the sanitizer does not check: the stack above us holds other
 * frames' redzones, which a kernel copy ignores too. */
__attribute__((no_sanitize_address, noinline)) static void raw_copy(uint8_t *dst,
                                                                    const uint8_t *src, size_t n)
{
	volatile const uint8_t *s = src;
	for (size_t i = 0; i < n; i++)
		dst[i] = s[i];
}

__attribute__((noinline)) static void capture(void)
{
	uint64_t *r = cap_regs;
	struct perf_maps m = {0};
	const struct perf_mapping *st;
	uint64_t sp;
#if defined(__x86_64__)
	__asm__ volatile("movq %%rax, 0(%0)\n\t"
	                 "movq %%rbx, 8(%0)\n\t"
	                 "movq %%rcx, 16(%0)\n\t"
	                 "movq %%rdx, 24(%0)\n\t"
	                 "movq %%rsi, 32(%0)\n\t"
	                 "movq %%rdi, 40(%0)\n\t"
	                 "movq %%rbp, 48(%0)\n\t"
	                 "movq %%rsp, 56(%0)\n\t"
	                 "leaq 0(%%rip), %%rax\n\t"
	                 "movq %%rax, 64(%0)\n\t"
	                 "movq $0, 72(%0)\n\t"
	                 "movq $0, 80(%0)\n\t"
	                 "movq $0, 88(%0)\n\t"
	                 "movq %%r8, 96(%0)\n\t"
	                 "movq %%r9, 104(%0)\n\t"
	                 "movq %%r10, 112(%0)\n\t"
	                 "movq %%r11, 120(%0)\n\t"
	                 "movq %%r12, 128(%0)\n\t"
	                 "movq %%r13, 136(%0)\n\t"
	                 "movq %%r14, 144(%0)\n\t"
	                 "movq %%r15, 152(%0)\n\t"
	                 :
	                 : "r"(r)
	                 : "rax", "memory");
#else
	__asm__ volatile("stp x0, x1, [%0, #0]\n\t"
	                 "stp x2, x3, [%0, #16]\n\t"
	                 "stp x4, x5, [%0, #32]\n\t"
	                 "stp x6, x7, [%0, #48]\n\t"
	                 "stp x8, x9, [%0, #64]\n\t"
	                 "stp x10, x11, [%0, #80]\n\t"
	                 "stp x12, x13, [%0, #96]\n\t"
	                 "stp x14, x15, [%0, #112]\n\t"
	                 "stp x16, x17, [%0, #128]\n\t"
	                 "stp x18, x19, [%0, #144]\n\t"
	                 "stp x20, x21, [%0, #160]\n\t"
	                 "stp x22, x23, [%0, #176]\n\t"
	                 "stp x24, x25, [%0, #192]\n\t"
	                 "stp x26, x27, [%0, #208]\n\t"
	                 "stp x28, x29, [%0, #224]\n\t"
	                 "str x30, [%0, #240]\n\t"
	                 "mov x9, sp\n\t"
	                 "str x9, [%0, #248]\n\t"
	                 "adr x9, .\n\t"
	                 "str x9, [%0, #256]\n\t"
	                 :
	                 : "r"(r)
	                 : "x9", "memory");
#endif
	ret_into_cmp = __builtin_return_address(0);
	sp = r[PERF_REGS_SP];
	cap_len = 0;
	if (perf_maps_load(&m, (int)getpid(), NULL) == 0 && (st = perf_maps_find(&m, sp))) {
		cap_len =
		    st->end - sp < sizeof cap_stack ? (size_t)(st->end - sp) : sizeof cap_stack;
		raw_copy(cap_stack, (const uint8_t *)(uintptr_t)sp, cap_len);
	}
	perf_maps_release(&m);
}

static int cmp_capture(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	if (!cap_done) {
		cap_done = true;
		capture();
	}
	return x < y ? -1 : x > y;
}

typedef void (*qsort_fn)(void *, size_t, size_t, int (*)(const void *, const void *));

/* The C library's own qsort: the sanitizer's runtime intercepts qsort
 * with a sort of its own, built with frame pointers. */
static qsort_fn libc_qsort(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), *f = h ? dlsym(h, "qsort") : NULL;
	if (h)
		dlclose(h);
	return f ? (qsort_fn)f : qsort;
}

__attribute__((noinline)) static void sorter(void)
{
	qsort_fn sort = libc_qsort();
	int v[64];
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	ret_into_test = __builtin_return_address(0);
	sort(v, 64, sizeof v[0], cmp_capture);
	__asm__ volatile("" : : "r"(v) : "memory"); /* no tail call */
}

/* Capture once, load our maps with build ids, unwind; pcs/sps get n. */
static uint32_t unwind_capture(struct perf_maps *m, size_t len, uint64_t *pcs, uint64_t *sps,
                               size_t max, size_t *n)
{
	struct perf_unwinder u;
	uint32_t err;
	perf_unwinder_init(&u);
	err = perf_unwind(&u, 1, m, (const uint8_t *)cap_regs, PERF_REGS_N, cap_stack, len, pcs,
	                  sps, max, n);
	perf_unwinder_release(&u);
	return err;
}

static bool is_libc(const struct perf_mapping *mp)
{
	const char *b = mp ? strrchr(mp->path, '/') : NULL;
	return b && strncmp(b, "/libc.so", 8) == 0;
}

/* readelf's CFA rule ("rsp+48", "sp+32") and return-address rule ("c-8")
 * for the ELF address `at` of file path; false when no row covers it or a
 * rule is another form (an expression, a register other than the sp). */
static bool readelf_rule(const char *path, uint64_t at, long *cfa_off, long *ra_off)
{
	char cmd[600], line[512], cie_cfa[64] = "", cfa[64] = "", ra[64] = "";
	int ra_col = -1, cie_ra_col = -1;
	char cie_ra[64] = "";
	bool in_fde = false, in_cie = false, found = false;
	FILE *f;
	snprintf(cmd, sizeof cmd, "readelf --debug-dump=frames-interp '%s' 2>/dev/null", path);
	if (!(f = popen(cmd, "r")))
		return false;
	while (fgets(line, sizeof line, f)) {
		unsigned long long lo, hi, loc;
		char *pc = strstr(line, " pc=");
		if (strstr(line, " CIE")) {
			in_cie = true, in_fde = false;
			continue;
		}
		if (strstr(line, " FDE ") && pc) {
			in_cie = false;
			if (found)
				break;
			in_fde = sscanf(pc, " pc=%llx..%llx", &lo, &hi) == 2 && lo <= at && at < hi;
			if (in_fde) {
				found = true;
				snprintf(cfa, sizeof cfa, "%s", cie_cfa);
				snprintf(ra, sizeof ra, "%s", cie_ra);
			}
			continue;
		}
		if (strstr(line, "LOC") && strstr(line, "CFA")) {
			/* the column of the return address: "ra" (x86-64), "x30" (arm64) */
			char tok[64];
			int col = 0, c = -1, used;
			for (const char *q = line; sscanf(q, "%63s%n", tok, &used) == 1;
			     q += used, col++)
				if (strcmp(tok, "ra") == 0 || strcmp(tok, "x30") == 0)
					c = col;
			if (in_cie)
				cie_ra_col = c;
			else
				ra_col = c;
			continue;
		}
		if ((in_cie || in_fde) && sscanf(line, "%llx", &loc) == 1 && line[0] != ' ') {
			char tok[8][64];
			int nt = sscanf(line, "%*s %63s %63s %63s %63s %63s %63s %63s %63s", tok[0],
			                tok[1], tok[2], tok[3], tok[4], tok[5], tok[6], tok[7]);
			if (in_cie && nt >= 1) {
				snprintf(cie_cfa, sizeof cie_cfa, "%s", tok[0]);
				if (cie_ra_col >= 1 && cie_ra_col - 1 < nt)
					snprintf(cie_ra, sizeof cie_ra, "%s", tok[cie_ra_col - 1]);
			} else if (in_fde && loc <= at && nt >= 1) {
				snprintf(cfa, sizeof cfa, "%s", tok[0]);
				if (ra_col >= 1 && ra_col - 1 < nt)
					snprintf(ra, sizeof ra, "%s", tok[ra_col - 1]);
			}
		}
		if (line[0] == '\n')
			in_cie = false;
	}
	pclose(f);
	if (!found)
		return false;
	if (sscanf(cfa, "rsp+%ld", cfa_off) != 1 && sscanf(cfa, "sp+%ld", cfa_off) != 1)
		return false;
	return sscanf(ra, "c%ld", ra_off) == 1;
}
#endif

/* Through libc's qsort: the comparator's capture unwinds to the test. */
TEST(perf_unwind_through_libc_qsort)
{
#if defined(CAN_CAPTURE) && defined(TB_TEST_BUILD)
	/* The sanitizer build has CFI for our own code (the release flags
	 * drop it: -fno-asynchronous-unwind-tables) and links libc.so. */
	struct perf_maps m = {0};
	uint64_t pcs[PERF_UNWIND_MAX_FRAMES], sps[PERF_UNWIND_MAX_FRAMES];
	size_t n = 0, libc_frames = 0, i_test = 0, i_cmp = 0;
	uint32_t err;
	if (!perf_unwind_supported())
		return;
	cap_done = false;
	sorter();
	CHECK(cap_done);
	CHECK(cap_len > 0);
	CHECK_EQ(perf_maps_load(&m, (int)getpid(), NULL), 0);
	perf_maps_load_elf(&m);
	err = unwind_capture(&m, cap_len, pcs, sps, PERF_UNWIND_MAX_FRAMES, &n);
	CHECK(n >= 4);
	CHECK_UEQ(pcs[0], cap_regs[PERF_REGS_PC]);
	CHECK_UEQ(sps[0], cap_regs[PERF_REGS_SP]);
	/* callers: inside their call instruction, just before the return address */
	CHECK_UEQ(pcs[1], (uintptr_t)ret_into_cmp - PERF_CALLER_PC_ADJUST);
	for (size_t i = 0; i < n; i++) {
		if ((uintptr_t)ret_into_test - PERF_CALLER_PC_ADJUST == pcs[i] && !i_test)
			i_test = i;
		if (i > 1 && !i_cmp && is_libc(perf_maps_find(&m, pcs[i])))
			i_cmp = i; /* the first library frame: qsort's msort calling us */
		libc_frames += is_libc(perf_maps_find(&m, pcs[i]));
	}
	if (!(i_cmp > 0 && i_test > i_cmp)) {
		for (size_t i = 0; i < n; i++) {
			const struct perf_mapping *mp = perf_maps_find(&m, pcs[i]);
			fprintf(stderr, "  #%zu pc %#llx sp %#llx %s\n", i,
			        (unsigned long long)pcs[i], (unsigned long long)sps[i],
			        mp ? mp->path : "?");
		}
		fprintf(stderr, "  err %u, want %p (test) %p (cmp)\n", err, ret_into_test,
		        ret_into_cmp);
	}
	CHECK(i_cmp > 0);      /* the comparator returned into libc */
	CHECK(i_test > i_cmp); /* and libc's frames led back to the test */
	CHECK(libc_frames >= 2);
	/* The stack copy covers the whole (shallow) stack: the walk ends at
	 * the outermost frame, or at the copy's end for a deep runner. */
	CHECK(err == PERF_UNWIND_ERROR_NONE || err == PERF_UNWIND_ERROR_MEMORY_INVALID);

	/* readelf's CFI rows for the library frames crossed: the caller's sp
	 * is the CFA, the return address is stored at CFA + ra offset. */
	size_t checked = 0;
	for (size_t i = i_cmp; i + 1 < n && i < i_test; i++) {
		const struct perf_mapping *mp = perf_maps_find(&m, pcs[i]);
		long cfa_off, ra_off;
		uint64_t rel, ra;
		if (!is_libc(mp) || !mp->elf_loaded)
			continue;
		rel = perf_rel_pc(pcs[i], mp->start, mp->offset, mp->elf.load_bias);
		if (!readelf_rule(mp->path, rel, &cfa_off, &ra_off))
			continue;
		CHECK_UEQ(sps[i + 1], sps[i] + (uint64_t)cfa_off);
		CHECK(sps[i + 1] + (uint64_t)ra_off >= cap_regs[PERF_REGS_SP]);
		memcpy(&ra, cap_stack + (sps[i + 1] + (uint64_t)ra_off - cap_regs[PERF_REGS_SP]),
		       8);
		CHECK_UEQ(pcs[i + 1], ra - PERF_CALLER_PC_ADJUST);
		checked++;
	}
	if (system("readelf --version >/dev/null 2>&1") == 0)
		CHECK(checked >= 1);
	perf_maps_release(&m);
#endif
}

/* A stack copy cut below a frame's return address ends the walk there
 * with MEMORY_INVALID, keeping the frames found before it. */
TEST(perf_unwind_truncated_stack)
{
#if defined(CAN_CAPTURE) && defined(TB_TEST_BUILD)
	struct perf_maps m = {0};
	uint64_t pcs[PERF_UNWIND_MAX_FRAMES], sps[PERF_UNWIND_MAX_FRAMES];
	uint64_t pcs2[PERF_UNWIND_MAX_FRAMES];
	size_t n = 0, n2 = 0, k;
	if (!perf_unwind_supported())
		return;
	cap_done = false;
	sorter();
	CHECK_EQ(perf_maps_load(&m, (int)getpid(), NULL), 0);
	perf_maps_load_elf(&m);
	unwind_capture(&m, cap_len, pcs, sps, PERF_UNWIND_MAX_FRAMES, &n);
	CHECK(n >= 4);
	k = 3; /* keep frames 0..k-1 whole: cut the copy at frame k's sp */
	CHECK_EQ(
	    unwind_capture(&m, (size_t)(sps[k] - sps[0]), pcs2, NULL, PERF_UNWIND_MAX_FRAMES, &n2),
	    PERF_UNWIND_ERROR_MEMORY_INVALID);
	CHECK(n2 >= 1 && n2 <= k + 1);
	CHECK_MEM_EQ(pcs2, pcs, n2 * sizeof pcs[0]);
	/* the frame limit: MAX_FRAMES_EXCEEDED with exactly that many */
	CHECK_EQ(unwind_capture(&m, cap_len, pcs2, NULL, 3, &n2),
	         PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED);
	CHECK_EQ(n2, 3);
	CHECK_MEM_EQ(pcs2, pcs, 3 * sizeof pcs[0]);
	perf_maps_release(&m);
#endif
}

/* Registers and stacks that make no sense end the walk with an error, and
 * never read outside what was given. */
TEST(perf_unwind_bad_input)
{
	struct perf_unwinder u;
	struct perf_maps m = {0};
	uint8_t regs[PERF_REGS_N * 8 + 8];
	uint8_t stack[256];
	uint64_t pcs[PERF_UNWIND_MAX_FRAMES], x = 0x9e3779b97f4a7c15ull;
	size_t n = 99;
	perf_unwinder_init(&u);
	CHECK_EQ(perf_maps_load(&m, (int)getpid(), NULL), 0);
	perf_maps_load_elf(&m);
	/* too few registers */
	if (perf_unwind_supported()) {
		memset(regs, 0, sizeof regs);
		CHECK_EQ(perf_unwind(&u, 1, &m, regs, PERF_REGS_N - 1, stack, sizeof stack, pcs,
		                     NULL, PERF_UNWIND_MAX_FRAMES, &n),
		         PERF_UNWIND_ERROR_INVALID_PARAMETER);
		CHECK_EQ(n, 0);
	}
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof regs; i++)
			regs[i] = (uint8_t)((x = x * 6364136223846793005ull + 1) >> 56);
		for (size_t i = 0; i < sizeof stack; i++)
			stack[i] = (uint8_t)((x = x * 6364136223846793005ull + 1) >> 56);
		if (round & 1) { /* a pc inside a real library, a garbage stack */
			const struct perf_mapping *mp = NULL;
			for (size_t i = 0; i < m.n && !mp; i++)
				if (m.v[i].exec && m.v[i].path[0] == '/')
					mp = &m.v[i];
			if (mp) {
				uint64_t pc = mp->start + (x % (mp->end - mp->start));
				memcpy(regs + PERF_REGS_PC * 8, &pc, 8);
			}
		}
		uint32_t err =
		    perf_unwind(&u, round % 3, round & 2 ? &m : NULL, regs, PERF_REGS_N, stack,
		                (size_t)(x % sizeof stack), pcs, NULL, PERF_UNWIND_MAX_FRAMES, &n);
		CHECK(n <= PERF_UNWIND_MAX_FRAMES);
		CHECK(err <= PERF_UNWIND_ERROR_INVALID_PARAMETER);
	}
	perf_maps_release(&m);
	perf_unwinder_release(&u);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* PERF_SAMPLE_REGS_USER and STACK_USER in a sample record. */
TEST(perf_record_parse_regs_stack)
{
	const uint64_t st = PERF_ST_TID | PERF_ST_TIME | PERF_ST_REGS_USER | PERF_ST_STACK_USER;
	uint8_t rec[8 + 8 + 8 + 8 + PERF_REGS_N * 8 + 8 + 64 + 8];
	uint64_t ips[2 * PERF_MAX_FRAMES];
	struct perf_record r;
	size_t off = 0, len;
	uint32_t h[2] = {PERF_RECORD_TYPE_SAMPLE, 2u};
	off = 8;
	put64(rec + off, (uint64_t)11 << 32 | 10), off += 8; /* pid 10, tid 11 */
	put64(rec + off, 12345), off += 8;
	put64(rec + off, 2), off += 8; /* abi 64 */
	for (int i = 0; i < PERF_REGS_N; i++)
		put64(rec + off, 0x1000 + (uint64_t)i), off += 8;
	put64(rec + off, 64), off += 8;
	for (int i = 0; i < 64; i++)
		rec[off + (size_t)i] = (uint8_t)i;
	off += 64;
	put64(rec + off, 40), off += 8; /* dyn_size */
	len = off;
	h[1] |= (uint32_t)len << 16;
	memcpy(rec, h, 8);
	CHECK_EQ(perf_record_parse(rec, len, st, &r, ips), 0);
	CHECK_EQ(r.pid, 10);
	CHECK_EQ(r.tid, 11);
	CHECK_UEQ(r.regs_abi, 2);
	CHECK_EQ(r.n_regs, PERF_REGS_N);
	if (PERF_REGS_N) {
		uint64_t v;
		memcpy(&v, r.regs + 8 * (PERF_REGS_N - 1), 8);
		CHECK_UEQ(v, 0x1000 + PERF_REGS_N - 1);
	}
	CHECK_EQ(r.stack_len, 40);
	CHECK(!r.stack_maxed);
	CHECK_EQ(r.stack[39], 39);
	/* dyn_size past size: the copy was cut, only size bytes are there */
	put64(rec + len - 8, 1000);
	CHECK_EQ(perf_record_parse(rec, len, st, &r, ips), 0);
	CHECK_EQ(r.stack_len, 64);
	CHECK(r.stack_maxed);
	/* a stack size longer than the record */
	put64(rec + len - 8 - 64 - 8, 72);
	CHECK_EQ(perf_record_parse(rec, len, st, &r, ips), -EINVAL);
	/* abi 0 (no user registers: a kernel thread), then an empty stack */
	{
		uint8_t k[8 + 8 + 8 + 8 + 8];
		uint32_t kh[2] = {PERF_RECORD_TYPE_SAMPLE, 1u | (uint32_t)sizeof k << 16};
		memcpy(k, kh, 8);
		put64(k + 8, 0), put64(k + 16, 5), put64(k + 24, 0), put64(k + 32, 0);
		CHECK_EQ(perf_record_parse(k, sizeof k, st, &r, ips), 0);
		CHECK_UEQ(r.regs_abi, 0);
		CHECK_EQ(r.n_regs, 0);
		CHECK_EQ(r.stack_len, 0);
	}
}

/* Maps kept from MMAP2 records: a new mapping replaces what it covers. */
TEST(perf_maps_add_from_records)
{
	struct perf_maps m = {0}, c = {0};
	const struct perf_mapping *f;
	perf_maps_add(&m, 0x1000, 0x3000, 0, true, "/bin/a", 6);
	perf_maps_add(&m, 0x5000, 0x6000, 0x2000, true, "/lib/b.so", 9);
	CHECK_EQ(m.n, 2);
	CHECK((f = perf_maps_find(&m, 0x5800)) != NULL);
	CHECK_STR_EQ(f->path, "/lib/b.so");
	CHECK_UEQ(f->offset, 0x2000);
	/* over the end of a: a is cut, c takes its place */
	perf_maps_add(&m, 0x2000, 0x4000, 0, true, "/lib/c.so", 9);
	CHECK_EQ(m.n, 3);
	CHECK_UEQ(m.v[0].end, 0x2000);
	CHECK_STR_EQ(perf_maps_find(&m, 0x2800)->path, "/lib/c.so");
	/* over the start of b: b starts later, at the matching file offset */
	perf_maps_add(&m, 0x4800, 0x5400, 0, true, "/lib/d.so", 9);
	f = perf_maps_find(&m, 0x5800);
	CHECK(f != NULL);
	CHECK_STR_EQ(f->path, "/lib/b.so");
	CHECK_UEQ(f->start, 0x5400);
	CHECK_UEQ(f->offset, 0x2400);
	/* covering c whole: c is gone */
	perf_maps_add(&m, 0x1800, 0x4400, 0, true, "/lib/e.so", 9);
	for (size_t i = 0; i < m.n; i++)
		CHECK(strcmp(m.v[i].path, "/lib/c.so") != 0);
	for (size_t i = 1; i < m.n; i++)
		CHECK(m.v[i - 1].end <= m.v[i].start);
	perf_maps_copy(&c, &m);
	CHECK_EQ(c.n, m.n);
	CHECK_STR_EQ(perf_maps_find(&c, 0x2000)->path, "/lib/e.so");
	perf_maps_release(&c);
	perf_maps_release(&m);
}

/* PERF_RECORD_MMAP2 with a TID|TIME sample_id, and a bad one. */
TEST(perf_record_parse_mmap2)
{
	uint8_t rec[8 + 64 + 16 + 16];
	uint64_t ips[2 * PERF_MAX_FRAMES];
	struct perf_record r;
	uint32_t h[2] = {PERF_RECORD_TYPE_MMAP2, 2u | (uint32_t)sizeof rec << 16};
	memset(rec, 0, sizeof rec);
	memcpy(rec, h, 8);
	put64(rec + 8, (uint64_t)43 << 32 | 42);
	put64(rec + 16, 0x7f0000001000ull);
	put64(rec + 24, 0x2000);
	put64(rec + 32, 0x1000);
	memcpy(rec + 8 + 64, "/lib/x.so", 9);
	put64(rec + 8 + 64 + 16, (uint64_t)43 << 32 | 42); /* sample_id: tid */
	put64(rec + 8 + 64 + 24, 777);                     /* time */
	CHECK_EQ(perf_record_parse(rec, sizeof rec, PERF_ST_TID | PERF_ST_TIME, &r, ips), 0);
	CHECK_EQ(r.kind, PERF_REC_MMAP);
	CHECK_EQ(r.pid, 42);
	CHECK_EQ(r.tid, 43);
	CHECK_UEQ(r.map_addr, 0x7f0000001000ull);
	CHECK_UEQ(r.map_len, 0x2000);
	CHECK_UEQ(r.map_pgoff, 0x1000);
	CHECK_EQ(r.filename_len, 9);
	CHECK_MEM_EQ(r.filename, "/lib/x.so", 9);
	CHECK_UEQ(r.time, 777); /* when it was mapped, to order it among samples */
	/* made without sample_id_all: no time */
	h[1] = 2u | (uint32_t)(8 + 64 + 16) << 16;
	memcpy(rec, h, 8);
	CHECK_EQ(perf_record_parse(rec, 8 + 64 + 16, PERF_ST_TID | PERF_ST_TIME, &r, ips), 0);
	CHECK_EQ(r.filename_len, 9);
	CHECK_UEQ(r.time, 0);
	h[1] = 2u | (uint32_t)sizeof rec << 16;
	memcpy(rec, h, 8);
	/* a file name that is not terminated inside the record */
	memset(rec + 8 + 64, 'a', sizeof rec - 8 - 64);
	CHECK_EQ(perf_record_parse(rec, sizeof rec, PERF_ST_TID | PERF_ST_TIME, &r, ips), -EINVAL);
	/* too short for its fixed part */
	h[1] = 2u | 48u << 16;
	memcpy(rec, h, 8);
	CHECK_EQ(perf_record_parse(rec, 48, 0, &r, ips), -EINVAL);
}

/* The DWARF sampling ABI values of perf_int.h against the kernel's headers
 * (the target's own, under its emulator). */
TEST(perf_abi_dwarf_matches_kernel_headers)
{
	struct perf_event_attr a;
	uint64_t flags;
	CHECK_EQ(PERF_ST_REGS_USER, PERF_SAMPLE_REGS_USER);
	CHECK_EQ(PERF_ST_STACK_USER, PERF_SAMPLE_STACK_USER);
	CHECK_EQ(PERF_RECORD_TYPE_MMAP, PERF_RECORD_MMAP);
	CHECK_EQ(PERF_RECORD_TYPE_MMAP2, PERF_RECORD_MMAP2);
	CHECK_EQ(offsetof(struct perf_attr, sample_regs_user),
	         offsetof(struct perf_event_attr, sample_regs_user));
	CHECK_EQ(offsetof(struct perf_attr, sample_stack_user),
	         offsetof(struct perf_event_attr, sample_stack_user));
	memset(&a, 0, sizeof a);
	a.mmap = 1, a.mmap2 = 1, a.exclude_callchain_user = 1, a.sample_id_all = 1;
	memcpy(&flags, (const uint8_t *)&a + offsetof(struct perf_attr, flags), 8);
	CHECK_UEQ(flags, 1ull << PERF_FLAG_BIT_MMAP | 1ull << PERF_FLAG_BIT_MMAP2 |
	                     1ull << PERF_FLAG_BIT_EXCLUDE_CALLCHAIN_USER |
	                     1ull << PERF_FLAG_BIT_SAMPLE_ID_ALL);
	CHECK_EQ(PERF_STACK_USER_SIZE % 256, 0);
#if defined(__x86_64__)
	CHECK_UEQ(PERF_REGS_MASK, ((1ull << PERF_REG_X86_64_MAX) - 1) &
	                              ~(1ull << PERF_REG_X86_DS | 1ull << PERF_REG_X86_ES |
	                                1ull << PERF_REG_X86_FS | 1ull << PERF_REG_X86_GS));
	CHECK_EQ(PERF_REGS_SP, PERF_REG_X86_SP);
	CHECK_EQ(PERF_REGS_PC, PERF_REG_X86_IP);
#elif defined(__aarch64__)
	CHECK_UEQ(PERF_REGS_MASK, (1ull << PERF_REG_ARM64_MAX) - 1);
	CHECK_EQ(PERF_REGS_SP, PERF_REG_ARM64_SP);
	CHECK_EQ(PERF_REGS_PC, PERF_REG_ARM64_PC);
#elif defined(__arm__)
	CHECK_UEQ(PERF_REGS_MASK, (1ull << PERF_REG_ARM_MAX) - 1);
	CHECK_EQ(PERF_REGS_SP, PERF_REG_ARM_SP);
	CHECK_EQ(PERF_REGS_PC, PERF_REG_ARM_PC);
#elif defined(__riscv)
	CHECK_UEQ(PERF_REGS_MASK, (1ull << PERF_REG_RISCV_MAX) - 1);
	CHECK_EQ(PERF_REGS_SP, PERF_REG_RISCV_SP);
	CHECK_EQ(PERF_REGS_PC, PERF_REG_RISCV_PC);
#endif
	CHECK_EQ(__builtin_popcountll(PERF_REGS_MASK), PERF_REGS_N);
}
