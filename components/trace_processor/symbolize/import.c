/*
 * import.c: TracePacket.module_symbols (field 61), what `traceconv
 * symbolize` writes and what a symbolized trace carries at its end:
 *
 *   ModuleSymbols  { 1: path  2: build_id (raw bytes)  3: AddressSymbols* }
 *   AddressSymbols { 1: address (a frame's rel_pc)  2: Line* }
 *   Line           { 1: function_name  2: source_file_name  3: line_number }
 *
 * As Perfetto's importer does: the module is matched to every
 * stack_profile_mapping with that name and build id (none:
 * stackprofile_invalid_mapping_id); each address with lines becomes one
 * symbol set (contiguous stack_profile_symbol rows, set id = the first
 * row's id, source_file NULL when empty, line_number only with a file) and
 * every frame of those mappings at that rel_pc gets its symbol_set_id
 * (none: stackprofile_invalid_frame_id). Frame names are left as they were.
 */
#include "symbolize_int.h"
#include "../model/model.h"
#include "pb.h"
#include "pb_fields.h"

#include <string.h>

#define MOD_MAX_MAPPINGS 4096 /* mappings matched by one module */
#define MOD_MAX_PENDING 65536 /* ModuleSymbols kept for mappings to come */

/* The mapping table's spelling of a raw build id: hex, except a 33-byte
 * (Breakpad) id which is already text. */
static uint32_t build_id_string(struct tp *tp, const uint8_t *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char buf[2 * SYM_BUILD_ID_MAX];
	if (n == 33)
		return tp_intern(tp, (const char *)p, n);
	if (n > SYM_BUILD_ID_MAX)
		return TP_NULL_U32;
	for (size_t i = 0; i < n; i++)
		buf[2 * i] = hex[p[i] >> 4], buf[2 * i + 1] = hex[p[i] & 15];
	return tp_intern(tp, buf, 2 * n);
}

/* Rows of one AddressSymbols; returns its set id or TP_NULL_U32 (no lines). */
static uint32_t address_lines(struct tp *tp, const uint8_t *p, size_t n, uint64_t *addr)
{
	struct tp_stack_profile_symbol_table *t = &tp->t.stack_profile_symbol;
	uint32_t set = t->n;
	bool any = false;
	struct pb_reader r, lr;
	struct pb_field f = {0}, lf = {0};
	*addr = 0;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_AddressSymbols_address && f.wire == PB_WIRE_VARINT) {
			*addr = f.val;
		} else if (f.id == PB_F_AddressSymbols_lines && f.wire == PB_WIRE_LEN) {
			uint32_t fn = 0, file = 0, line = TP_NULL_U32;
			bool has_line = false;
			pb_reader_init_field(&lr, &f);
			while (pb_next(&lr, &lf)) {
				if (lf.id == PB_F_Line_function_name && lf.wire == PB_WIRE_LEN)
					fn = tp_intern(tp, (const char *)lf.data, lf.len);
				else if (lf.id == PB_F_Line_source_file_name &&
				         lf.wire == PB_WIRE_LEN)
					file = tp_intern(tp, (const char *)lf.data, lf.len);
				else if (lf.id == PB_F_Line_line_number &&
				         lf.wire == PB_WIRE_VARINT)
					line = (uint32_t)lf.val, has_line = true;
			}
			if (pb_reader_error(&lr))
				continue;
			uint32_t row = tp_stack_profile_symbol_append(t);
			t->symbol_set_id[row] = set;
			t->name[row] = fn;
			t->source_file[row] = file;
			t->line_number[row] = has_line && file ? line : TP_NULL_U32;
			t->inlined[row] = TP_NULL_I64;
			any = true;
		}
	}
	return any ? set : TP_NULL_U32;
}

void tp_module_symbols_import(struct tp *tp, const uint8_t *p, size_t n)
{
	struct pb_field path = {0}, bid = {0}, f = {0};
	struct pb_reader r;
	uint32_t maps[MOD_MAX_MAPPINGS];
	size_t n_maps = 0, missing = 0;
	struct hmap by_addr; /* rel_pc -> set id | found << 32 */

	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ModuleSymbols_path && f.wire == PB_WIRE_LEN)
			path = f;
		else if (f.id == PB_F_ModuleSymbols_build_id && f.wire == PB_WIRE_LEN)
			bid = f;
	}
	if (pb_reader_error(&r)) {
		tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
		return;
	}
	const struct tp_stack_profile_mapping_table *mt = &tp->t.stack_profile_mapping;
	uint32_t name = tp_intern(tp, (const char *)path.data, path.len);
	uint32_t build_id = build_id_string(tp, bid.data, bid.len);
	for (uint32_t i = 0; i < mt->n && n_maps < MOD_MAX_MAPPINGS; i++)
		if (mt->name[i] == name && mt->build_id[i] == build_id)
			maps[n_maps++] = i;
	if (n_maps == 0 && !tp->symbols_final && tp->pending_symbols.len < MOD_MAX_PENDING) {
		uint8_t *copy = tb_malloc(n + 8);
		uint64_t len = n;
		memcpy(copy, &len, 8);
		memcpy(copy + 8, p, n);
		vec_push(&tp->pending_symbols, copy);
		return;
	}
	if (n_maps == 0) {
		tp_stat_inc(tp, TP_STAT_stackprofile_invalid_mapping_id);
		return;
	}

	hmap_init(&by_addr);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id != PB_F_ModuleSymbols_address_symbols || f.wire != PB_WIRE_LEN)
			continue;
		uint64_t addr;
		uint32_t set = address_lines(tp, f.data, f.len, &addr);
		if (set != TP_NULL_U32)
			hmap_put(&by_addr, addr, set);
	}
	struct tp_stack_profile_frame_table *ft = &tp->t.stack_profile_frame;
	for (uint32_t i = 0; i < ft->n && by_addr.len; i++) {
		size_t k = 0;
		while (k < n_maps && maps[k] != ft->mapping[i])
			k++;
		if (k == n_maps)
			continue;
		uint64_t v;
		if (!hmap_get(&by_addr, (uint64_t)ft->rel_pc[i], &v))
			continue;
		ft->symbol_set_id[i] = (uint32_t)v;
		hmap_put(&by_addr, (uint64_t)ft->rel_pc[i], v | 1ull << 32);
	}
	for (size_t it = hmap_next(&by_addr, 0); it != HMAP_END; it = hmap_next(&by_addr, it + 1))
		missing += !(by_addr.slots[it].val >> 32);
	tp->stats[TP_STAT_stackprofile_invalid_frame_id] += missing;
	hmap_release(&by_addr);
}

void tp_module_symbols_finish(struct tp *tp)
{
	tp->symbols_final = true;
	for (size_t i = 0; i < tp->pending_symbols.len; i++) {
		uint64_t len;
		memcpy(&len, tp->pending_symbols.data[i], 8);
		tp_module_symbols_import(tp, tp->pending_symbols.data[i] + 8, (size_t)len);
		tb_free(tp->pending_symbols.data[i]);
	}
	vec_release(&tp->pending_symbols);
}
