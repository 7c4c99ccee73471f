/*
 * symbolize.c: naming the sampled user frames at the end of the capture,
 * so the trace is self-contained: it opens with function names in the
 * Perfetto UI and in Perfetto's own trace processor, which both apply
 * ModuleSymbols packets, exactly as after `traceconv symbolize`.
 *
 * While the capture runs, every user frame written without a name is
 * remembered here by its mapping (path, build id, offset, load bias) and
 * rel_pc. At the end each mapping's file is found by build id (base's
 * sym_finder: the mapped file, /usr/lib/debug/.build-id, .gnu_debuglink,
 * the debuginfod cache and, with $DEBUGINFOD_URLS, the servers) and one
 * ModuleSymbols packet per mapping (split every PERF_SYMQ_ADDRS_PER_PACKET
 * addresses) names the addresses it could:
 *
 *   TracePacket { timestamp (BOOTTIME, after every sample), timestamp_clock_id 6,
 *     module_symbols { path, build_id (raw bytes),
 *                      address_symbols* { address = rel_pc, lines { function_name } } } }
 *
 * rel_pc is already an address in the ELF's own space (pc - start + offset
 * + load bias, emit.c); as the trace processor's symbolizer does, it is
 * corrected when the found file's first executable PT_LOAD implies a
 * larger bias than the one recorded.
 *
 * Mappings without a build id cannot be matched to a file safely and are
 * only counted (a binary stripped of its build id, or one that could not
 * be read when it was first sampled).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf_int.h"
#include "pb_fields.h"

#define PERF_SYMQ_MAX_MODULES 4096
#define PERF_SYMQ_MAX_ADDRS (1u << 20) /* per module */
#define PERF_SYMQ_ADDRS_PER_PACKET 8192

struct perf_symq_module {
	char *path;
	uint8_t build_id[PERF_BUILD_ID_MAX];
	size_t build_id_len;
	uint64_t offset, load_bias;
	struct hmap seen; /* rel_pc -> 1 */
	VEC(uint64_t) pcs;
	uint64_t frames; /* frames written unnamed (with repeats) */
};

void perf_symq_init(struct perf_symq *q)
{
	memset(q, 0, sizeof *q);
	hmap_init(&q->by_key);
}

void perf_symq_release(struct perf_symq *q)
{
	for (size_t i = 0; i < q->mods.len; i++) {
		struct perf_symq_module *m = q->mods.data[i];
		tb_free(m->path);
		hmap_release(&m->seen);
		vec_release(&m->pcs);
		tb_free(m);
	}
	vec_release(&q->mods);
	hmap_release(&q->by_key);
	memset(q, 0, sizeof *q);
}

struct mod_key {
	const struct perf_symq *q;
	const struct perf_frame *f;
};

static bool mod_eq(const void *ctx, uint64_t key)
{
	const struct mod_key *k = ctx;
	const struct perf_symq_module *m = k->q->mods.data[key];
	size_t n = k->f->build_id ? k->f->build_id_len : 0;
	return m->build_id_len == n && (n == 0 || memcmp(m->build_id, k->f->build_id, n) == 0) &&
	       m->offset == k->f->map_offset && m->load_bias == k->f->load_bias &&
	       strcmp(m->path, k->f->mapping_path) == 0;
}

void perf_symq_add(struct perf_symq *q, const struct perf_frame *f)
{
	struct mod_key k = {q, f};
	size_t bl = f->build_id ? f->build_id_len : 0, slot;
	struct perf_symq_module *m;
	uint64_t h;

	if (!f->mapping_path || !f->mapping_path[0] || (f->function_name && f->function_name[0]))
		return;
	h = tb_hash_bytes(f->mapping_path, strlen(f->mapping_path), bl) ^
	    tb_hash_u64(f->map_offset + 31 * f->load_bias);
	if (bl)
		h ^= tb_hash_bytes(f->build_id, bl, 7);
	slot = hmap_lookup(&q->by_key, h, mod_eq, &k);
	if (slot != HMAP_END) {
		m = q->mods.data[q->by_key.slots[slot].val];
	} else {
		if (q->mods.len >= PERF_SYMQ_MAX_MODULES) {
			q->dropped++;
			return;
		}
		m = tb_calloc(1, sizeof *m);
		m->path = tb_strdup(f->mapping_path);
		m->build_id_len = bl > sizeof m->build_id ? sizeof m->build_id : bl;
		if (m->build_id_len)
			memcpy(m->build_id, f->build_id, m->build_id_len);
		m->offset = f->map_offset;
		m->load_bias = f->load_bias;
		hmap_init(&m->seen);
		hmap_insert(&q->by_key, h, q->mods.len, q->mods.len);
		vec_push(&q->mods, m);
	}
	m->frames++;
	if (m->build_id_len && m->pcs.len < PERF_SYMQ_MAX_ADDRS && hmap_put(&m->seen, f->rel_pc, 1))
		vec_push(&m->pcs, f->rel_pc);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t align_down(uint64_t v, uint64_t a)
{
	return a > 1 && (a & (a - 1)) == 0 ? v & ~(a - 1) : v;
}

/* Name m's addresses from the found file; returns how many were named. */
static uint32_t emit_module(const struct perf_symq_module *m, const struct sym_found *s,
                            struct pb_writer *w, uint64_t boot_ts)
{
	char dem[SYM_MAX_NAME];
	uint64_t corr = 0;
	uint32_t named = 0, in_packet = 0;
	unsigned pkt = 0, mod = 0;
	if (s->has_load) {
		uint64_t real =
		    align_down(s->p_vaddr, s->p_align) - align_down(m->offset, s->p_align);
		corr = real > m->load_bias ? real - m->load_bias : 0;
	}
	for (size_t i = 0; i < m->pcs.len; i++) {
		const char *fn = sym_table_lookup(&s->syms, m->pcs.data[i] + corr);
		if (!fn)
			continue;
		if (!in_packet) {
			pkt = pb_begin_nested(w, PB_F_Trace_packet);
			pb_put_uint64(w, PB_F_TracePacket_timestamp, boot_ts);
			pb_put_uint32(w, PB_F_TracePacket_timestamp_clock_id,
			              PB_E_BuiltinClock_BUILTIN_CLOCK_BOOTTIME);
			mod = pb_begin_nested(w, PB_F_TracePacket_module_symbols);
			pb_put_string(w, PB_F_ModuleSymbols_path, m->path);
			pb_put_bytes(w, PB_F_ModuleSymbols_build_id, m->build_id, m->build_id_len);
		}
		unsigned as = pb_begin_nested(w, PB_F_ModuleSymbols_address_symbols);
		pb_put_uint64(w, PB_F_AddressSymbols_address, m->pcs.data[i]);
		unsigned line = pb_begin_nested(w, PB_F_AddressSymbols_lines);
		pb_put_string(w, PB_F_Line_function_name,
		              sym_demangle(fn, dem, sizeof dem) ? dem : fn);
		pb_end_nested(w, line);
		pb_end_nested(w, as);
		named++;
		if (++in_packet == PERF_SYMQ_ADDRS_PER_PACKET) {
			pb_end_nested(w, mod);
			pb_end_nested(w, pkt);
			in_packet = 0;
		}
	}
	if (in_packet) {
		pb_end_nested(w, mod);
		pb_end_nested(w, pkt);
	}
	return named;
}

void perf_symq_emit(struct perf_symq *q, struct sym_finder *finder, struct pb_writer *w,
                    uint64_t boot_ts, perf_symq_flush_fn flush, void *ctx,
                    struct perf_symq_result *res)
{
	memset(res, 0, sizeof *res);
	res->dropped = q->dropped;
	for (size_t i = 0; i < q->mods.len; i++) {
		struct perf_symq_module *m = q->mods.data[i];
		struct sym_found found;
		res->modules++;
		if (!m->build_id_len) {
			res->no_build_id++;
			res->frames_no_build_id += m->frames;
			if (res->n_examples < PERF_SYMQ_EXAMPLES)
				snprintf(res->examples[res->n_examples++], sizeof res->examples[0],
				         "%s (no build id)", m->path);
			continue;
		}
		res->addresses += m->pcs.len;
		if (m->pcs.len > 1)
			qsort(m->pcs.data, m->pcs.len, sizeof *m->pcs.data, cmp_u64);
		uint32_t named = 0;
		if (sym_finder_find(finder, m->path, m->build_id, m->build_id_len, &found) == 0) {
			named = emit_module(m, &found, w, boot_ts);
			sym_found_release(&found);
			if (flush)
				flush(ctx);
		}
		res->addresses_named += named;
		if (named) {
			res->modules_named++;
		} else {
			res->no_symbols++;
			res->frames_no_symbols += m->frames;
			if (res->n_examples < PERF_SYMQ_EXAMPLES)
				snprintf(res->examples[res->n_examples++], sizeof res->examples[0],
				         "%s (no symbols found)", m->path);
		}
	}
}
