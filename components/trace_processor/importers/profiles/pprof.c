/*
 * pprof profiles (perftools.profiles.Profile, profile.proto): what Go's
 * runtime/pprof, `go test -cpuprofile/-memprofile`, `go tool pprof -proto`
 * and many other profilers write, usually gzip'd (tp.c unwraps gzip). As
 * Perfetto's pprof importer, the file is held until its end, then:
 *
 *   Profile   1 sample_type ValueType*   2 sample Sample*    3 mapping Mapping*
 *             4 location Location*       5 function Function*
 *             6 string_table string*     ("" first; the other fields index it)
 *             7 drop_frames  8 keep_frames  9 time_nanos  10 duration_nanos
 *             11 period_type ValueType   12 period  13 comment*  14 default_sample_type
 *   ValueType 1 type  2 unit             Sample   1 location_id* (leaf first)  2 value*  3 label*
 *   Mapping   1 id  2 memory_start  3 memory_limit  4 file_offset  5 filename  6 build_id
 *   Location  1 id  2 mapping_id  3 address  4 line Line*   Line 1 function_id  2 line
 *   Function  1 id  2 name  3 system_name  4 filename  5 start_line
 *
 * - each sample type is an aggregate_profile (scope "pprof_file", name
 *   "pprof TYPE", type and unit; "unknown" / "count" when absent);
 * - each mapping a stack_profile_mapping (start, end = limit, exact_offset =
 *   file_offset, build_id the hex of its bytes, name its file or "[unknown]");
 *   a location without one gets a "[unknown]" dummy mapping of its own;
 * - each location a frame (rel_pc = address - mapping start when the start is
 *   non-zero), named after its first line's function (the innermost inlined
 *   one, or "[unknown]"), with one stack_profile_symbol per line: function,
 *   file, line (else the function's start line), inlined for all but the last;
 * - each sample one aggregate_sample per value, at the callsite of its
 *   locations from the root (unknown location ids are left out; a sample
 *   with none is skipped).
 *
 * Labels, period and times have no place in Perfetto's tables and are not
 * kept. A profile without a string table fails the load, as in Perfetto; a
 * malformed message inside it counts pprof_parse_error and is skipped.
 */
#include "profiles.h"

#include <stdio.h>
#include <string.h>

#include "pb.h"

#define PPROF_MAX_BYTES (1ull << 30) /* a profile is held whole; beyond this, refused */

enum {
	PPROF_SAMPLE_TYPE = 1,
	PPROF_SAMPLE = 2,
	PPROF_MAPPING = 3,
	PPROF_LOCATION = 4,
	PPROF_FUNCTION = 5,
	PPROF_STRING_TABLE = 6,
	PPROF_DROP_FRAMES = 7,
	PPROF_KEEP_FRAMES = 8,
	PPROF_TIME_NANOS = 9,
	PPROF_DURATION_NANOS = 10,
	PPROF_PERIOD_TYPE = 11,
	PPROF_PERIOD = 12,
	PPROF_COMMENT = 13,
	PPROF_DEFAULT_SAMPLE_TYPE = 14,
	/* ValueType */
	PPROF_VALUE_TYPE_TYPE = 1,
	PPROF_VALUE_TYPE_UNIT = 2,
	/* Sample */
	PPROF_SAMPLE_LOCATION_ID = 1,
	PPROF_SAMPLE_VALUE = 2,
	/* Mapping */
	PPROF_MAPPING_ID = 1,
	PPROF_MAPPING_MEMORY_START = 2,
	PPROF_MAPPING_MEMORY_LIMIT = 3,
	PPROF_MAPPING_FILE_OFFSET = 4,
	PPROF_MAPPING_FILENAME = 5,
	PPROF_MAPPING_BUILD_ID = 6,
	/* Location */
	PPROF_LOCATION_ID = 1,
	PPROF_LOCATION_MAPPING_ID = 2,
	PPROF_LOCATION_ADDRESS = 3,
	PPROF_LOCATION_LINE = 4,
	/* Line */
	PPROF_LINE_FUNCTION_ID = 1,
	PPROF_LINE_LINE = 2,
	/* Function */
	PPROF_FUNCTION_ID = 1,
	PPROF_FUNCTION_NAME = 2,
	PPROF_FUNCTION_FILENAME = 4,
	PPROF_FUNCTION_START_LINE = 5,
};

VEC_DEFINE(pprof_bytes, uint8_t);
VEC_DEFINE(pprof_u32s, uint32_t);
VEC_DEFINE(pprof_u64s, uint64_t);

struct pprof_function {
	uint32_t name, filename; /* pool ids (filename 0: NULL) */
	int64_t start_line;
};

struct pprof_mapping {
	uint32_t row;
	int64_t start;
};

struct tp_importer {
	struct tp *tp;
	struct pprof_bytes buf;
	bool too_big;
};

/* The state of one ParseProfile. */
struct pprof {
	struct tp *tp;
	struct tp_stack_profile sp;
	struct pprof_u32s strings;
	struct hmap mappings, functions, locations; /* id -> index / frame row */
	VEC(struct pprof_mapping) maps;
	VEC(struct pprof_function) funcs;
	struct pprof_u32s profiles, lines;
	struct pprof_u64s ids, prev_locs; /* prev_*: the last sample's, root first */
	struct pprof_u32s prev_cs;
	uint32_t unknown;
};

/* pb_next, out of line: this importer is not a hot path worth its copies. */
static __attribute__((noinline)) bool pprof_next(struct pb_reader *r, struct pb_field *f)
{
	return pb_next(r, f);
}

static uint32_t pprof_str(const struct pprof *pp, uint64_t i)
{
	return i < pp->strings.len ? pp->strings.data[i] : 0;
}

static void pprof_bad(struct pprof *pp)
{
	tp_stat_inc(pp->tp, TP_STAT_pprof_parse_error);
}

static void pprof_mapping(struct pprof *pp, const struct pb_field *m)
{
	struct tp *tp = pp->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	uint64_t id = 0, start = 0, limit = 0, off = 0, file = 0, build = 0;
	bool has_id = false, has_file = false, has_build = false;
	pb_reader_init_field(&r, m);
	while (pprof_next(&r, &f)) {
		if (f.wire != PB_WIRE_VARINT)
			continue;
		switch (f.id) {
		case PPROF_MAPPING_ID:
			id = f.val, has_id = true;
			break;
		case PPROF_MAPPING_MEMORY_START:
			start = f.val;
			break;
		case PPROF_MAPPING_MEMORY_LIMIT:
			limit = f.val;
			break;
		case PPROF_MAPPING_FILE_OFFSET:
			off = f.val;
			break;
		case PPROF_MAPPING_FILENAME:
			file = f.val, has_file = true;
			break;
		case PPROF_MAPPING_BUILD_ID:
			build = f.val, has_build = true;
			break;
		}
	}
	if (r.error)
		pprof_bad(pp);
	if (!has_id)
		return;
	struct tp_stack_profile_mapping_table *t = &tp->t.stack_profile_mapping;
	uint32_t row = tp_stack_profile_mapping_append(t);
	t->name[row] = has_file ? pprof_str(pp, file) : pp->unknown;
	size_t bn = 0;
	const char *b = has_build ? strpool_get(&tp->strings, pprof_str(pp, build), &bn) : NULL;
	char hex[2 * 256];
	static const char digits[] = "0123456789abcdef";
	if (bn > 256)
		bn = 256;
	for (size_t i = 0; b && i < bn; i++) {
		hex[2 * i] = digits[(unsigned char)b[i] >> 4];
		hex[2 * i + 1] = digits[(unsigned char)b[i] & 15];
	}
	t->build_id[row] = bn ? tp_intern(tp, hex, 2 * bn) : strpool_empty(&tp->strings);
	t->exact_offset[row] = (int64_t)off;
	t->start[row] = (int64_t)start;
	t->end[row] = (int64_t)limit;
	hmap_put(&pp->mappings, id, pp->maps.len);
	struct pprof_mapping pm = {row, (int64_t)start};
	vec_push(&pp->maps, pm);
}

static void pprof_function(struct pprof *pp, const struct pb_field *m)
{
	struct pb_reader r;
	struct pb_field f = {0};
	uint64_t id = 0;
	bool has_id = false;
	struct pprof_function fn = {pp->unknown, 0, 0};
	pb_reader_init_field(&r, m);
	while (pprof_next(&r, &f)) {
		if (f.wire != PB_WIRE_VARINT)
			continue;
		switch (f.id) {
		case PPROF_FUNCTION_ID:
			id = f.val, has_id = true;
			break;
		case PPROF_FUNCTION_NAME:
			fn.name = pprof_str(pp, f.val);
			break;
		case PPROF_FUNCTION_FILENAME:
			fn.filename = pprof_str(pp, f.val);
			break;
		case PPROF_FUNCTION_START_LINE:
			fn.start_line = (int64_t)f.val;
			break;
		}
	}
	if (r.error)
		pprof_bad(pp);
	if (!has_id)
		return;
	hmap_put(&pp->functions, id, pp->funcs.len);
	vec_push(&pp->funcs, fn);
}

static void pprof_location(struct pprof *pp, const struct pb_field *m)
{
	struct tp *tp = pp->tp;
	struct pb_reader r, lr;
	struct pb_field f = {0}, g = {0};
	uint64_t id = 0, mapping_id = 0, addr = 0, ix;
	bool has_id = false, has_mapping = false;
	pp->lines.len = 0; /* (function index, line) pairs of the lines whose function is known */
	pb_reader_init_field(&r, m);
	while (pprof_next(&r, &f)) {
		if (f.id == PPROF_LOCATION_LINE && f.wire == PB_WIRE_LEN) {
			uint64_t fid = 0, line = 0;
			bool has_fid = false;
			pb_reader_init_field(&lr, &f);
			while (pprof_next(&lr, &g)) {
				if (g.wire != PB_WIRE_VARINT)
					continue;
				if (g.id == PPROF_LINE_FUNCTION_ID)
					fid = g.val, has_fid = true;
				else if (g.id == PPROF_LINE_LINE)
					line = g.val;
			}
			if (lr.error)
				pprof_bad(pp);
			if (has_fid && hmap_get(&pp->functions, fid, &ix)) {
				vec_push(&pp->lines, (uint32_t)ix);
				vec_push(
				    &pp->lines,
				    (uint32_t)((int64_t)line > 0 && line < UINT32_MAX ? line : 0));
			}
			continue;
		}
		if (f.wire != PB_WIRE_VARINT)
			continue;
		if (f.id == PPROF_LOCATION_ID)
			id = f.val, has_id = true;
		else if (f.id == PPROF_LOCATION_MAPPING_ID)
			mapping_id = f.val, has_mapping = true;
		else if (f.id == PPROF_LOCATION_ADDRESS)
			addr = f.val;
	}
	if (r.error)
		pprof_bad(pp);
	if (!has_id)
		return;
	uint32_t mapping;
	int64_t start = 0;
	if (has_mapping && hmap_get(&pp->mappings, mapping_id, &ix)) {
		mapping = pp->maps.data[ix].row;
		start = pp->maps.data[ix].start;
	} else {
		mapping = tp_profiles_dummy_mapping(tp, "[unknown]");
	}
	if (start > 0 && addr >= (uint64_t)start)
		addr -= (uint64_t)start;
	size_t nl = pp->lines.len / 2;
	uint32_t name = nl ? pp->funcs.data[pp->lines.data[0]].name : pp->unknown;
	uint32_t frame = tp_stack_profile_frame(tp, &pp->sp, mapping, (int64_t)addr, name);
	hmap_put(&pp->locations, id, frame);
	if (!nl)
		return;
	struct tp_stack_profile_symbol_table *y = &tp->t.stack_profile_symbol;
	uint32_t set = y->n;
	for (size_t i = 0; i < nl; i++) {
		const struct pprof_function *fn = &pp->funcs.data[pp->lines.data[2 * i]];
		int64_t line = pp->lines.data[2 * i + 1];
		if (line <= 0)
			line =
			    fn->start_line > 0 && fn->start_line < UINT32_MAX ? fn->start_line : 0;
		uint32_t s = tp_stack_profile_symbol_append(y);
		y->symbol_set_id[s] = set;
		y->name[s] = fn->name;
		y->source_file[s] = fn->filename;
		y->line_number[s] = line > 0 ? (uint32_t)line : TP_NULL_U32;
		y->inlined[s] = nl > 1 && i < nl - 1;
	}
	tp->t.stack_profile_frame.symbol_set_id[frame] = set;
}

static void pprof_sample_type(struct pprof *pp, const struct pb_field *m)
{
	struct tp *tp = pp->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	uint32_t type = tp_intern_cstr(tp, "unknown"), unit = tp_intern_cstr(tp, "count");
	pb_reader_init_field(&r, m);
	while (pprof_next(&r, &f)) {
		if (f.wire == PB_WIRE_VARINT && f.id == PPROF_VALUE_TYPE_TYPE)
			type = pprof_str(pp, f.val);
		else if (f.wire == PB_WIRE_VARINT && f.id == PPROF_VALUE_TYPE_UNIT)
			unit = pprof_str(pp, f.val);
	}
	if (r.error)
		pprof_bad(pp);
	size_t tn;
	const char *ts = type ? strpool_get(&tp->strings, type, &tn) : "";
	if (!type)
		tn = 0;
	char name[256];
	int n = snprintf(name, sizeof name, "pprof %.*s", (int)(tn < 240 ? tn : 240), ts);
	uint32_t id = tp_profiles_agg_profile(tp, tp_intern_cstr(tp, "pprof_file"),
	                                      tp_intern(tp, name, (size_t)n), type, unit);
	vec_push(&pp->profiles, id);
}

/* The ids of a repeated varint field, packed or not, appended to out. */
static bool pprof_varints(const struct pb_field *f, struct pprof_u64s *out)
{
	if (f->wire == PB_WIRE_VARINT) {
		vec_push(out, f->val);
		return true;
	}
	if (f->wire != PB_WIRE_LEN)
		return false;
	struct pb_packed it;
	uint64_t v;
	pb_packed_init(&it, f->data, f->len, PB_WIRE_VARINT);
	while (pb_packed_next(&it, &v))
		vec_push(out, v);
	return it.error == 0;
}

static void pprof_sample(struct pprof *pp, const struct pb_field *m)
{
	struct tp *tp = pp->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	bool ok = true;
	size_t nvals;
	pp->ids.len = 0;
	pb_reader_init_field(&r, m);
	while (pprof_next(&r, &f))
		if (f.id == PPROF_SAMPLE_LOCATION_ID)
			ok &= pprof_varints(&f, &pp->ids);
	nvals = pp->ids.len;
	pb_reader_init_field(&r, m);
	while (pprof_next(&r, &f))
		if (f.id == PPROF_SAMPLE_VALUE)
			ok &= pprof_varints(&f, &pp->ids);
	if (r.error || !ok)
		pprof_bad(pp);
	/* Root first. The first locations are often the previous sample's
	 * (runtime.main, main.main ...): their callsites are taken from it. */
	uint32_t cs = TP_NULL_U32;
	uint64_t frame;
	size_t j = 0;
	while (j < nvals && j < pp->prev_locs.len &&
	       pp->prev_locs.data[j] == pp->ids.data[nvals - 1 - j])
		cs = pp->prev_cs.data[j++];
	pp->prev_locs.len = pp->prev_cs.len = j;
	for (; j < nvals; j++) {
		uint64_t loc = pp->ids.data[nvals - 1 - j];
		if (hmap_get(&pp->locations, loc, &frame))
			cs = tp_stack_profile_callsite(tp, &pp->sp, cs, (uint32_t)frame);
		vec_push(&pp->prev_locs, loc);
		vec_push(&pp->prev_cs, cs);
	}
	if (cs == TP_NULL_U32)
		return;
	for (size_t i = nvals, k = 0; i < pp->ids.len && k < pp->profiles.len; i++, k++)
		tp_profiles_agg_sample(tp, pp->profiles.data[k], cs,
		                       (double)(int64_t)pp->ids.data[i]);
}

/* Call fn on each top-level field of number id. */
static void pprof_each(struct pprof *pp, const uint8_t *buf, size_t n, uint32_t id,
                       void (*fn)(struct pprof *, const struct pb_field *))
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, buf, n);
	while (pprof_next(&r, &f))
		if (f.id == id && f.wire == PB_WIRE_LEN)
			fn(pp, &f);
}

static int pprof_load(struct tp *tp, const uint8_t *buf, size_t n)
{
	struct pprof pp = {.tp = tp};
	struct pb_reader r;
	struct pb_field f = {0};
	int rc = 0;
	tp_stack_profile_init(&pp.sp);
	hmap_init(&pp.mappings);
	hmap_init(&pp.functions);
	hmap_init(&pp.locations);
	pp.unknown = tp_intern_cstr(tp, "[unknown]");
	pb_reader_init(&r, buf, n);
	while (pprof_next(&r, &f)) {
		if (f.id == PPROF_STRING_TABLE && f.wire == PB_WIRE_LEN) {
			uint32_t s = f.len ? tp_intern(tp, (const char *)f.data, f.len)
			                   : strpool_empty(&tp->strings);
			vec_push(&pp.strings, s);
		}
	}
	if (r.error)
		pprof_bad(&pp);
	if (!pp.strings.len) {
		rc = tp_fail(tp, -EINVAL, "invalid pprof: empty string table");
		goto out;
	}
	pprof_each(&pp, buf, n, PPROF_MAPPING, pprof_mapping);
	pprof_each(&pp, buf, n, PPROF_FUNCTION, pprof_function);
	pprof_each(&pp, buf, n, PPROF_LOCATION, pprof_location);
	pprof_each(&pp, buf, n, PPROF_SAMPLE_TYPE, pprof_sample_type);
	pprof_each(&pp, buf, n, PPROF_SAMPLE, pprof_sample);
out:
	tp_stack_profile_release(&pp.sp);
	hmap_release(&pp.mappings);
	hmap_release(&pp.functions);
	hmap_release(&pp.locations);
	vec_release(&pp.maps);
	vec_release(&pp.funcs);
	vec_release(&pp.strings);
	vec_release(&pp.profiles);
	vec_release(&pp.lines);
	vec_release(&pp.ids);
	vec_release(&pp.prev_locs);
	vec_release(&pp.prev_cs);
	return tb_err_is_set(&tp->err) ? tp->err.code : rc;
}

/* A ValueType: varints 1 and 2 only (a JSON text's newline, read as field
 * 1, is followed by spaces, which are not). */
static bool pprof_value_type(const struct pb_field *f)
{
	struct pb_reader r;
	struct pb_field g = {0};
	pb_reader_init_field(&r, f);
	while (pprof_next(&r, &g))
		if (g.wire != PB_WIRE_VARINT ||
		    (g.id != PPROF_VALUE_TYPE_TYPE && g.id != PPROF_VALUE_TYPE_UNIT))
			return false;
	return !r.error;
}

/* Perfetto's test: every top-level field in the window is a Profile field
 * of its wire type, and one of them is more than a sample type; and ours:
 * sample and period types read as ValueTypes. */
static bool pprof_sniff(const uint8_t *p, size_t n)
{
	struct pb_reader r;
	struct pb_field f = {0};
	bool core = false;
	if (n < 10)
		return false;
	pb_reader_init(&r, p, n);
	while (pprof_next(&r, &f)) {
		switch (f.id) {
		case PPROF_SAMPLE:
		case PPROF_MAPPING:
		case PPROF_LOCATION:
		case PPROF_FUNCTION:
		case PPROF_STRING_TABLE:
			core = true;
			/* fall through */
		case PPROF_SAMPLE_TYPE:
		case PPROF_PERIOD_TYPE:
			if (f.wire != PB_WIRE_LEN ||
			    (f.id != PPROF_SAMPLE && f.id != PPROF_MAPPING &&
			     f.id != PPROF_LOCATION && f.id != PPROF_FUNCTION &&
			     f.id != PPROF_STRING_TABLE && !pprof_value_type(&f)))
				return false;
			break;
		case PPROF_COMMENT:
			if (f.wire != PB_WIRE_LEN && f.wire != PB_WIRE_VARINT)
				return false;
			break;
		case PPROF_DROP_FRAMES:
		case PPROF_KEEP_FRAMES:
			core = true;
			/* fall through */
		case PPROF_TIME_NANOS:
		case PPROF_DURATION_NANOS:
		case PPROF_PERIOD:
		case PPROF_DEFAULT_SAMPLE_TYPE:
			if (f.wire != PB_WIRE_VARINT)
				return false;
			break;
		default:
			return false;
		}
	}
	return core;
}

static struct tp_importer *pprof_create(struct tp *tp)
{
	struct tp_importer *imp = tb_calloc(1, sizeof *imp);
	imp->tp = tp;
	return imp;
}

static int pprof_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	imp->tp->bytes_parsed += n;
	if (n == 0)
		return 0;
	if (imp->too_big || imp->buf.len + n > PPROF_MAX_BYTES) {
		imp->too_big = true;
		return tp_fail(imp->tp, -EFBIG, "pprof profile larger than %llu bytes",
		               (unsigned long long)PPROF_MAX_BYTES);
	}
	vec_reserve(&imp->buf, n);
	memcpy(imp->buf.data + imp->buf.len, p, n);
	imp->buf.len += n;
	return 0;
}

static int pprof_eof(struct tp_importer *imp)
{
	int rc =
	    pprof_load(imp->tp, imp->buf.len ? imp->buf.data : (const uint8_t *)"", imp->buf.len);
	vec_release(&imp->buf);
	return rc;
}

static void pprof_destroy(struct tp_importer *imp)
{
	vec_release(&imp->buf);
	tb_free(imp);
}

const struct tp_importer_ops tp_pprof_importer = {
    .name = "pprof",
    .sniff = pprof_sniff,
    .create = pprof_create,
    .parse = pprof_parse,
    .eof = pprof_eof,
    .destroy = pprof_destroy,
};
