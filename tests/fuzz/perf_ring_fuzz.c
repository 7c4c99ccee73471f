/*
 * Fuzz target for components/perf's parsers of untrusted bytes. The first
 * input byte picks what the rest is:
 *   0..127   a ring buffer data area (rounded down to a power of two), read
 *            from a tail taken from the next 8 bytes with data_head at its end
 *   128..191 one record for perf_record_parse
 *   192..255 an ELF image (build id, load bias) and, as raw notes, its bytes
 * plus the maps, JIT perf map and kallsyms text parsers over the same bytes.
 *
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/perf_ring/ in every CI build.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "perf_int.h"

static volatile uint64_t sink;

static void on_record(void *ctx, const struct perf_record *r)
{
	(void)ctx;
	sink += r->pid + r->tid + r->time + r->lost;
	for (size_t i = 0; i < r->n_kernel; i++)
		sink += r->kernel_ips[i];
	for (size_t i = 0; i < r->n_user; i++)
		sink += r->user_ips[i];
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint64_t st = (1u << 1) | (1u << 2) | (1u << 5) | (1u << 7);
	if (size < 1)
		return 0;
	uint8_t mode = data[0];
	data++, size--;
	if (mode < 128 && size >= 16) {
		uint64_t start, sz = 8;
		memcpy(&start, data, 8);
		data += 8, size -= 8;
		while (sz * 2 <= size)
			sz *= 2;
		if (sz <= size) {
			/* copy so the ring is exactly sz bytes (ASan sees overreads) */
			uint8_t *ring = malloc(sz);
			volatile uint64_t head, tail;
			struct perf_ring r;
			struct perf_ring_stats stats = {0};
			memcpy(ring, data, sz);
			tail = start;
			head = start + (mode & 1 ? sz : (size % (sz + 1)));
			perf_ring_init_raw(&r, &head, &tail, ring, sz, st);
			perf_ring_read(&r, 0, on_record, NULL, &stats);
			perf_ring_release(&r);
			free(ring);
		}
	} else if (mode < 192) {
		static uint64_t ips[2 * PERF_MAX_FRAMES];
		struct perf_record rec;
		if (perf_record_parse(data, size, st | (mode & 1 ? 1u : 0u), &rec, ips) == 0)
			on_record(NULL, &rec);
	} else {
		struct perf_elf_info info;
		uint8_t id[PERF_BUILD_ID_MAX];
		perf_elf_info_mem(data, size, &info);
		sink += info.build_id_len + info.load_bias;
		sink += perf_elf_notes_build_id(data, size, mode & 1, id);
	}
	/* the text parsers see the same bytes */
	struct perf_maps m = {0};
	perf_maps_parse(&m, (const char *)data, size);
	if (m.n)
		sink += (uintptr_t)perf_maps_find(&m, m.v[0].start);
	perf_maps_release(&m);
	struct perf_jitmap jm = {0};
	perf_jitmap_parse(&jm, (const char *)data, size);
	if (jm.n)
		sink += (uintptr_t)perf_jitmap_lookup(&jm, jm.v[jm.n - 1].start);
	perf_jitmap_release(&jm);
	struct ksyms k;
	ksyms_parse(&k, (const char *)data, size);
	if (k.n)
		sink += (uintptr_t)ksyms_lookup(&k, k.syms[0].addr);
	ksyms_release(&k);
	return 0;
}
