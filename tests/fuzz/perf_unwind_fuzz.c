/*
 * Fuzz target for traced_perf's DWARF unwinding entry point (perf_unwind,
 * components/perf/unwind.c) and the sample parser's register and stack
 * fields. The unwinder walks real unwind tables of this machine's C
 * library, mapped at a fixed address so inputs mean the same in every run:
 *
 *   byte 0         mode: bit 0 set = the tables come from the input too
 *   PERF_REGS_N*8  the sampled registers (zero-filled when short)
 *   mode 0:        the rest is the stack from the sampled sp; the process'
 *                  mappings are libc's, at LIBC_AT + (address - libc base)
 *   mode 1:        u32 n | n bytes of an ELF file (written to a temporary
 *                  file mapped executable at ELF_AT) | the stack
 * The same bytes are also parsed as a sample record with user registers
 * and stack. Seeds (tests/fuzz/corpus/perf_unwind/), made on this machine:
 * libc_qsort by PERF_UNWIND_FUZZ_SEED=DIR (a stack captured inside libc's
 * qsort, from the comparator's caller on, relocated to LIBC_AT); elf_tiny
 * and elf_truncated: a two-function library of ours (`gcc -O2 -shared
 * -nostdlib`, its PLT's CFA a DWARF expression), whole and cut after its
 * headers, with a stack through both functions.
 *
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run the corpus in every CI build.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "perf_int.h"

#define LIBC_AT 0x10000000000ull
#define ELF_AT 0x20000000000ull

static struct perf_maps libc_maps, elf_maps;
static struct perf_unwinder unw;
static char elf_path[64];
static uint64_t libc_base, libc_end;
static bool ready;

/* libc's mappings relocated to LIBC_AT, the input ELF's mapping. */
static void setup(void)
{
	struct perf_maps m = {0};
	const char *path = NULL;
	ready = true;
	perf_unwinder_init(&unw);
	snprintf(elf_path, sizeof elf_path, "/tmp/tb-unwind-fuzz-%d.elf", (int)getpid());
	if (perf_maps_load(&m, (int)getpid(), NULL) != 0)
		return;
	for (size_t i = 0; i < m.n && !path; i++) {
		const char *b = strrchr(m.v[i].path, '/');
		if (m.v[i].exec && b && strncmp(b, "/libc", 5) == 0)
			path = m.v[i].path;
	}
	libc_base = UINT64_MAX;
	for (size_t i = 0; path && i < m.n; i++) {
		if (strcmp(m.v[i].path, path) != 0)
			continue;
		libc_base = m.v[i].start < libc_base ? m.v[i].start : libc_base;
		libc_end = m.v[i].end > libc_end ? m.v[i].end : libc_end;
	}
	char text[256 * 8];
	size_t len = 0;
	for (size_t i = 0; path && i < m.n && len < sizeof text - 256; i++) {
		if (strcmp(m.v[i].path, path) != 0)
			continue;
		len += (size_t)snprintf(
		    text + len, sizeof text - len, "%llx-%llx %s %llx 00:00 0 %s\n",
		    (unsigned long long)(m.v[i].start - libc_base + LIBC_AT),
		    (unsigned long long)(m.v[i].end - libc_base + LIBC_AT),
		    m.v[i].exec ? "r-xp" : "r--p", (unsigned long long)m.v[i].offset, path);
	}
	perf_maps_parse(&libc_maps, text, len);
	perf_maps_load_elf(&libc_maps);
	perf_maps_release(&m);
	len = (size_t)snprintf(text, sizeof text, "%llx-%llx r-xp 0 00:00 0 %s\n",
	                       (unsigned long long)ELF_AT,
	                       (unsigned long long)(ELF_AT + (1u << 20)), elf_path);
	perf_maps_parse(&elf_maps, text, len);
}

static void parse_as_record(const uint8_t *data, size_t size)
{
	const uint64_t st = (1u << 1) | (1u << 2) | PERF_ST_REGS_USER | PERF_ST_STACK_USER;
	uint8_t *rec;
	uint64_t *ips;
	struct perf_record r;
	volatile uint64_t sink = 0;
	if (size < 8 || size > PERF_MAX_RECORD)
		return;
	rec = malloc(size);
	ips = malloc(2 * PERF_MAX_FRAMES * sizeof *ips);
	memcpy(rec, data, size);
	if (perf_record_parse(rec, size, st, &r, ips) == 0) {
		for (size_t i = 0; i < r.n_regs * 8; i++)
			sink += r.regs[i];
		for (size_t i = 0; i < r.stack_len; i++)
			sink += r.stack[i];
	}
	free(ips);
	free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t regs[PERF_REGS_N * 8 + 8] = {0};
	uint64_t pcs[PERF_UNWIND_MAX_FRAMES];
	const struct perf_maps *maps = &libc_maps;
	uint8_t *stack;
	size_t n, k, stack_len;
	if (!ready)
		setup();
	parse_as_record(data, size);
	if (size < 1)
		return 0;
	uint8_t mode = data[0];
	data++, size--;
	k = size < sizeof regs - 8 ? size : sizeof regs - 8;
	memcpy(regs, data, k);
	data += k, size -= k;
	if (mode & 1) {
		uint32_t elf_len = 0;
		FILE *f;
		if (size >= 4)
			memcpy(&elf_len, data, 4), data += 4, size -= 4;
		if (elf_len > size)
			elf_len = (uint32_t)size;
		if ((f = fopen(elf_path, "wb"))) {
			fwrite(data, 1, elf_len, f);
			fclose(f);
		}
		data += elf_len, size -= elf_len;
		perf_unwinder_clear(&unw); /* the file changed under the same path */
		for (size_t i = 0; i < elf_maps.n; i++)
			elf_maps.v[i].elf_loaded = false;
		perf_maps_load_elf(&elf_maps);
		maps = &elf_maps;
	}
	/* an exact-size copy, so reads past the stack are caught */
	stack_len = size;
	stack = malloc(stack_len ? stack_len : 1);
	memcpy(stack, data, stack_len);
	perf_unwind(&unw, 1, maps, regs, PERF_REGS_N, stack, stack_len, pcs, NULL,
	            PERF_UNWIND_MAX_FRAMES, &n);
	free(stack);
	if (mode & 1)
		unlink(elf_path);
	return 0;
}

#if defined(__x86_64__)
/* ---- seeds: PERF_UNWIND_FUZZ_SEED=DIR ------------------------------------- */

static uint64_t seed_regs[PERF_REGS_N];
static uint8_t seed_stack[PERF_STACK_USER_SIZE];
static size_t seed_len;
static int seed_done;

__attribute__((no_sanitize_address, noinline)) static void seed_copy(uint8_t *d, uint64_t sp,
                                                                     size_t n)
{
	volatile const uint8_t *s = (const uint8_t *)(uintptr_t)sp;
	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

__attribute__((noinline)) static void seed_capture(void)
{
	uint64_t *r = seed_regs;
	struct perf_maps m = {0};
	const struct perf_mapping *st;
	__asm__ volatile("movq %%rbx, 8(%0)\n\tmovq %%rbp, 48(%0)\n\tmovq %%rsp, 56(%0)\n\t"
	                 "leaq 0(%%rip), %%rax\n\tmovq %%rax, 64(%0)\n\tmovq %%r12, 128(%0)\n\t"
	                 "movq %%r13, 136(%0)\n\tmovq %%r14, 144(%0)\n\tmovq %%r15, 152(%0)\n\t"
	                 :
	                 : "r"(r)
	                 : "rax", "memory");
	if (perf_maps_load(&m, (int)getpid(), NULL) == 0 && (st = perf_maps_find(&m, r[7]))) {
		seed_len = st->end - r[7] < sizeof seed_stack ? (size_t)(st->end - r[7])
		                                              : sizeof seed_stack;
		seed_copy(seed_stack, r[7], seed_len);
	}
	perf_maps_release(&m);
}

static int seed_cmp(const void *a, const void *b)
{
	if (!seed_done++)
		seed_capture();
	return *(const int *)a - *(const int *)b;
}

/* Unwind the capture with our real maps, then write the stack from the
 * first libc frame on with every libc address relocated to LIBC_AT. */
__attribute__((constructor)) static void make_seed(void)
{
	const char *dir = getenv("PERF_UNWIND_FUZZ_SEED");
	int v[64];
	struct perf_maps m = {0};
	struct perf_unwinder u;
	uint64_t pcs[PERF_UNWIND_MAX_FRAMES], sps[PERF_UNWIND_MAX_FRAMES];
	size_t n = 0;
	char path[512];
	FILE *f;
	if (!dir)
		return;
	if (!ready)
		setup();
	for (int i = 0; i < 64; i++)
		v[i] = (i * 37) % 64;
	/* libc's own qsort (a sanitizer runtime intercepts qsort) */
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), *fn = h ? dlsym(h, "qsort") : NULL;
	if (h)
		dlclose(h);
	if (fn)
		((void (*)(void *, size_t, size_t, int (*)(const void *, const void *)))fn)(
		    v, 64, sizeof v[0], seed_cmp);
	else
		qsort(v, 64, sizeof v[0], seed_cmp);
	perf_maps_load(&m, (int)getpid(), NULL);
	perf_maps_load_elf(&m);
	perf_unwinder_init(&u);
	perf_unwind(&u, 1, &m, (const uint8_t *)seed_regs, PERF_REGS_N, seed_stack, seed_len, pcs,
	            sps, PERF_UNWIND_MAX_FRAMES, &n);
	for (size_t i = 1; i < n; i++) {
		uint8_t out[1 + PERF_REGS_N * 8];
		uint64_t r[PERF_REGS_N] = {0};
		size_t off;
		if (pcs[i] < libc_base || pcs[i] >= libc_end)
			continue;
		off = (size_t)(sps[i] - sps[0]);
		r[PERF_REGS_PC] = pcs[i] - libc_base + LIBC_AT;
		r[PERF_REGS_SP] = sps[i];
		for (size_t w = off; w + 8 <= seed_len; w += 8) {
			uint64_t x;
			memcpy(&x, seed_stack + w, 8);
			if (x >= libc_base && x < libc_end)
				x = x - libc_base + LIBC_AT;
			memcpy(seed_stack + w, &x, 8);
		}
		out[0] = 0;
		memcpy(out + 1, r, sizeof r);
		snprintf(path, sizeof path, "%s/libc_qsort", dir);
		if ((f = fopen(path, "wb"))) {
			fwrite(out, 1, sizeof out, f);
			fwrite(seed_stack + off, 1, seed_len - off, f);
			fclose(f);
		}
		fprintf(stderr, "seed %s: %zu libc frames from frame %zu\n", path, n - i, i);
		break;
	}
	perf_unwinder_release(&u);
	perf_maps_release(&m);
}
#endif
