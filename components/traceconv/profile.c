/*
 * traceconv profile: the trace's perf samples as pprof profiles, one per
 * sampled process, the way Perfetto's `traceconv profile --perf` builds them:
 * sample type ("samples", "count"), one Sample of value 1 per perf_sample row
 * with a callsite (in ts order), its locations leaf first. Each file is
 * gzip'd, as `go tool pprof` writes them (pprof reads both).
 *
 * Encoding (perftools.profiles.Profile, written with pb):
 *
 *   Profile  1 sample_type ValueType*   2 sample Sample*   3 mapping Mapping*
 *            4 location Location*       5 function Function*
 *            6 string_table string*  ("" first)
 *            11 period_type ValueType  12 period int64
 *   Sample   1 location_id uint64* (packed, leaf first)  2 value int64* (packed)
 *   Location 1 id  2 mapping_id  3 address  4 line Line*
 *   Line     1 function_id  2 line
 *   Function 1 id  2 name  3 system_name  4 filename   (string table indexes)
 *   Mapping  1 id  2 memory_start  3 memory_limit  4 file_offset  5 filename
 *            6 build_id  7 has_functions (when all its frames have names)
 *   ValueType 1 type  2 unit
 *
 * Ids are 1-based: location = frame id + 1 (one Location per
 * stack_profile_frame, so unsymbolized frames keep their own address),
 * mapping = stack_profile_mapping id + 1, function = order of first use.
 * Functions are interned by (name, file); a frame with a symbol set gets one
 * Line per stack_profile_symbol row of the set (inlined first). Only the
 * mappings, locations, functions and strings a profile uses are written.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <zlib.h>

#include "base.h"
#include "pb.h"
#include "pb_fields.h"
#include "sqlite3.h"
#include "trace_processor.h"
#include "traceconv_int.h"

/* One stack_profile_symbol row. */
struct profile_line {
	uint32_t name, file;
	int64_t line;
};

/* Per-trace state shared by the per-process profiles. */
struct profile_ctx {
	struct tp *tp;
	struct traceconv_stacks st;
	VEC(struct profile_line) lines; /* by symbol set, then id */
	VEC(uint64_t) set_start;        /* symbol set -> first line, UINT64_MAX if none */
	struct traceconv_ids walk;
};

/* One profile being built. */
struct profile_builder {
	struct pb_writer w;
	struct hmap strmap;        /* stack string id -> table index */
	struct traceconv_ids strs; /* table index -> stack string id */
	struct hmap funcmap;       /* name << 32 | file -> function index */
	struct traceconv_ids funcs_name, funcs_file;
	uint8_t *frame_seen, *mapping_seen;
};

static uint64_t profile_str(struct profile_builder *b, uint32_t id)
{
	bool is_new;
	uint64_t *v = hmap_upsert(&b->strmap, id, &is_new);
	if (is_new) {
		*v = b->strs.len;
		vec_push(&b->strs, id);
	}
	return *v;
}

static uint64_t profile_func(struct profile_builder *b, uint32_t name, uint32_t file)
{
	bool is_new;
	uint64_t *v = hmap_upsert(&b->funcmap, (uint64_t)name << 32 | file, &is_new);
	if (is_new) {
		*v = b->funcs_name.len;
		vec_push(&b->funcs_name, name);
		vec_push(&b->funcs_file, file);
	}
	return *v;
}

static void profile_value_type(struct profile_builder *b, uint32_t field, uint32_t type,
                               uint32_t unit)
{
	unsigned h = pb_begin_nested(&b->w, field);
	pb_put_int64(&b->w, PB_F_profiles_ValueType_type, (int64_t)profile_str(b, type));
	pb_put_int64(&b->w, PB_F_profiles_ValueType_unit, (int64_t)profile_str(b, unit));
	pb_end_nested(&b->w, h);
}

/* One sample, labelled with its thread: "thread" is the thread's name (its
 * tid when it has none), "tid" the number, so `pprof -tagfocus` and
 * `-tags` can split a process' profile by thread. */
static void profile_sample(struct profile_ctx *c, struct profile_builder *b, int64_t callsite,
                           int64_t tid, const char *thread)
{
	char num[24];
	size_t n = traceconv_stack_walk(&c->st, callsite, &c->walk);
	if (n == 0)
		return;
	unsigned h = pb_begin_nested(&b->w, PB_F_profiles_Profile_sample);
	unsigned p = pb_begin_nested(&b->w, PB_F_profiles_Sample_location_id);
	for (size_t i = 0; i < n; i++) {
		uint32_t f = c->walk.data[i];
		b->frame_seen[f] = 1;
		pb_put_raw_varint(&b->w, (uint64_t)f + 1);
	}
	pb_end_nested(&b->w, p);
	uint64_t one = 1;
	pb_put_packed_varint(&b->w, PB_F_profiles_Sample_value, &one, 1);
	if (!thread || !thread[0]) {
		snprintf(num, sizeof num, "%lld", (long long)tid);
		thread = num;
	}
	unsigned l = pb_begin_nested(&b->w, PB_F_profiles_Sample_label);
	pb_put_int64(&b->w, PB_F_profiles_Label_key,
	             (int64_t)profile_str(b, strpool_intern_cstr(&c->st.strings, "thread")));
	pb_put_int64(&b->w, PB_F_profiles_Label_str,
	             (int64_t)profile_str(b, strpool_intern_cstr(&c->st.strings, thread)));
	pb_end_nested(&b->w, l);
	l = pb_begin_nested(&b->w, PB_F_profiles_Sample_label);
	pb_put_int64(&b->w, PB_F_profiles_Label_key,
	             (int64_t)profile_str(b, strpool_intern_cstr(&c->st.strings, "tid")));
	pb_put_int64(&b->w, PB_F_profiles_Label_num, tid);
	pb_end_nested(&b->w, l);
	pb_end_nested(&b->w, h);
}

static void profile_location(struct profile_ctx *c, struct profile_builder *b, uint32_t id)
{
	const struct traceconv_frame *f = &c->st.frames.data[id];
	const struct traceconv_mapping *m =
	    f->mapping < c->st.mappings.len ? &c->st.mappings.data[f->mapping] : NULL;
	uint64_t first =
	    f->symbol_set < c->set_start.len ? c->set_start.data[f->symbol_set] : UINT64_MAX;
	unsigned h = pb_begin_nested(&b->w, PB_F_profiles_Profile_location);
	pb_put_uint64(&b->w, PB_F_profiles_Location_id, (uint64_t)id + 1);
	if (m) {
		/* 1: used, every frame named so far; 2: used, a frame unnamed. */
		if (b->mapping_seen[f->mapping] < 2)
			b->mapping_seen[f->mapping] = f->name || first != UINT64_MAX ? 1 : 2;
		pb_put_uint64(&b->w, PB_F_profiles_Location_mapping_id, (uint64_t)f->mapping + 1);
		/* rel_pc is relative to the file; back to the address in memory. */
		pb_put_uint64(&b->w, PB_F_profiles_Location_address,
		              (uint64_t)m->start + (uint64_t)f->rel_pc - (uint64_t)m->exact_offset);
	} else {
		pb_put_uint64(&b->w, PB_F_profiles_Location_address, (uint64_t)f->rel_pc);
	}
	if (first == UINT64_MAX) {
		unsigned l = pb_begin_nested(&b->w, PB_F_profiles_Location_line);
		pb_put_uint64(&b->w, PB_F_profiles_Line_function_id,
		              profile_func(b, f->name, 0) + 1);
		pb_end_nested(&b->w, l);
	}
	for (uint64_t i = first; first != UINT64_MAX && c->lines.data[i].name != UINT32_MAX; i++) {
		const struct profile_line *ln = &c->lines.data[i];
		unsigned l = pb_begin_nested(&b->w, PB_F_profiles_Location_line);
		pb_put_uint64(&b->w, PB_F_profiles_Line_function_id,
		              profile_func(b, ln->name, ln->file) + 1);
		if (ln->line > 0)
			pb_put_int64(&b->w, PB_F_profiles_Line_line, ln->line);
		pb_end_nested(&b->w, l);
	}
	pb_end_nested(&b->w, h);
}

static void profile_tail(struct profile_ctx *c, struct profile_builder *b)
{
	for (size_t i = 0; i < c->st.frames.len; i++)
		if (b->frame_seen[i])
			profile_location(c, b, (uint32_t)i);
	for (size_t i = 0; i < b->funcs_name.len; i++) {
		unsigned h = pb_begin_nested(&b->w, PB_F_profiles_Profile_function);
		pb_put_uint64(&b->w, PB_F_profiles_Function_id, i + 1);
		uint64_t name = profile_str(b, b->funcs_name.data[i]);
		pb_put_int64(&b->w, PB_F_profiles_Function_name, (int64_t)name);
		pb_put_int64(&b->w, PB_F_profiles_Function_system_name, (int64_t)name);
		if (b->funcs_file.data[i])
			pb_put_int64(&b->w, PB_F_profiles_Function_filename,
			             (int64_t)profile_str(b, b->funcs_file.data[i]));
		pb_end_nested(&b->w, h);
	}
	for (size_t i = 0; i < c->st.mappings.len; i++) {
		if (!b->mapping_seen[i])
			continue;
		const struct traceconv_mapping *m = &c->st.mappings.data[i];
		unsigned h = pb_begin_nested(&b->w, PB_F_profiles_Profile_mapping);
		pb_put_uint64(&b->w, PB_F_profiles_Mapping_id, i + 1);
		pb_put_uint64(&b->w, PB_F_profiles_Mapping_memory_start, (uint64_t)m->start);
		pb_put_uint64(&b->w, PB_F_profiles_Mapping_memory_limit, (uint64_t)m->end);
		pb_put_uint64(&b->w, PB_F_profiles_Mapping_file_offset, (uint64_t)m->exact_offset);
		pb_put_int64(&b->w, PB_F_profiles_Mapping_filename,
		             (int64_t)profile_str(b, m->name));
		pb_put_int64(&b->w, PB_F_profiles_Mapping_build_id,
		             (int64_t)profile_str(b, m->build_id));
		/* Every frame already has its function: pprof must not look the
		 * addresses up again in whatever file has that name here. */
		if (b->mapping_seen[i] == 1)
			pb_put_bool(&b->w, PB_F_profiles_Mapping_has_functions, true);
		pb_end_nested(&b->w, h);
	}
	/* Strings last: everything above interned what it uses. */
	for (size_t i = 0; i < b->strs.len; i++)
		pb_put_string(&b->w, PB_F_profiles_Profile_string_table,
		              traceconv_str(&c->st, b->strs.data[i]));
}

/* The event, and the period when every sample of the process printed the
 * same one (perf script's period field): pprof's period_type and period. */
static void profile_period(struct profile_ctx *c, struct profile_builder *b, int64_t upid)
{
	sqlite3_stmt *st = NULL;
	const char *sql = "SELECT min(s.event_name), count(DISTINCT s.event_name), min(s.period),"
	                  " count(DISTINCT s.period), count(s.period) = count(*)"
	                  " FROM __intrinsic_perf_sample s JOIN thread t USING (utid)"
	                  " WHERE t.upid = ?1 AND s.callsite_id IS NOT NULL";
	if (sqlite3_prepare_v2(tp_db(c->tp), sql, -1, &st, NULL) != SQLITE_OK)
		return;
	sqlite3_bind_int64(st, 1, upid);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 1) == 1) {
		const char *ev = (const char *)sqlite3_column_text(st, 0);
		bool clock = strcmp(ev, "cpu-clock") == 0 || strcmp(ev, "task-clock") == 0;
		profile_value_type(
		    b, PB_F_profiles_Profile_period_type, strpool_intern_cstr(&c->st.strings, ev),
		    strpool_intern_cstr(&c->st.strings, clock ? "nanoseconds" : "count"));
		if (sqlite3_column_int(st, 3) == 1 && sqlite3_column_int(st, 4))
			pb_put_int64(&b->w, PB_F_profiles_Profile_period,
			             sqlite3_column_int64(st, 2));
	}
	sqlite3_finalize(st);
}

static void profile_builder_release(struct profile_builder *b)
{
	pb_writer_release(&b->w);
	hmap_release(&b->strmap);
	hmap_release(&b->funcmap);
	vec_release(&b->strs);
	vec_release(&b->funcs_name);
	vec_release(&b->funcs_file);
	tb_free(b->frame_seen);
	tb_free(b->mapping_seen);
}

/* Encode the profile of process upid into *out (tb_free), uncompressed. */
static int profile_build(struct profile_ctx *c, int64_t upid, uint8_t **out, size_t *len)
{
	struct profile_builder b = {0};
	sqlite3_stmt *st = NULL;
	int rc = -1, r;

	pb_writer_init_growable(&b.w);
	hmap_init(&b.strmap);
	hmap_init(&b.funcmap);
	b.frame_seen = tb_calloc(c->st.frames.len + 1, 1);
	b.mapping_seen = tb_calloc(c->st.mappings.len + 1, 1);
	profile_str(&b, 0); /* "" is index 0 */
	profile_value_type(&b, PB_F_profiles_Profile_sample_type,
	                   strpool_intern_cstr(&c->st.strings, "samples"),
	                   strpool_intern_cstr(&c->st.strings, "count"));
	const char *sql =
	    "SELECT s.callsite_id, t.tid, t.name FROM __intrinsic_perf_sample s"
	    " JOIN thread t USING (utid) WHERE t.upid = ?1 AND s.callsite_id IS NOT NULL"
	    " ORDER BY s.ts, s.id";
	if (sqlite3_prepare_v2(tp_db(c->tp), sql, -1, &st, NULL) != SQLITE_OK)
		goto out;
	sqlite3_bind_int64(st, 1, upid);
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		profile_sample(c, &b, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
		               (const char *)sqlite3_column_text(st, 2));
	if (r != SQLITE_DONE)
		goto out;
	profile_period(c, &b, upid);
	profile_tail(c, &b);
	if (pb_writer_error(&b.w)) {
		fprintf(stderr, "traceconv: cannot encode the profile: %s\n",
		        strerror(-pb_writer_error(&b.w)));
		goto done;
	}
	*out = pb_writer_take(&b.w, len);
	rc = 0;
	goto done;
out:
	fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(c->tp)));
done:
	sqlite3_finalize(st);
	profile_builder_release(&b);
	return rc;
}

/* gzip data into a new file path: written beside it and renamed into place,
 * so a failure leaves no partial profile. Input is fed to deflate in pieces
 * that fit its 32-bit counters. */
static int profile_write(const char *path, const uint8_t *data, size_t len)
{
	z_stream z = {0};
	uint8_t buf[65536];
	char tmp[PATH_MAX];
	struct tb_err err = {0};
	int fd, rc = -1, zr = Z_OK, e;

	if ((fd = tb_create_beside(path, 0644, tmp, sizeof tmp, &err)) < 0) {
		fprintf(stderr, "traceconv: %s\n", err.msg);
		return -1;
	}
	if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		goto out;
	z.next_in = (uint8_t *)data;
	while (zr != Z_STREAM_END) {
		if (z.avail_in == 0 && len > 0) {
			z.avail_in = len > UINT_MAX ? UINT_MAX : (uInt)len;
			len -= z.avail_in;
		}
		z.next_out = buf;
		z.avail_out = sizeof buf;
		zr = deflate(&z, len > 0 ? Z_NO_FLUSH : Z_FINISH);
		if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
			break;
		if ((e = tb_write_all(fd, buf, sizeof buf - z.avail_out)) < 0) {
			fprintf(stderr, "traceconv: cannot write '%s': %s\n", path, strerror(-e));
			goto out;
		}
	}
	rc = zr == Z_STREAM_END ? 0 : -1;
	if (rc < 0)
		fprintf(stderr, "traceconv: cannot compress '%s'\n", path);
out:
	deflateEnd(&z);
	if (close(fd) != 0 && rc == 0) {
		fprintf(stderr, "traceconv: cannot write '%s': %s\n", path, strerror(errno));
		rc = -1;
	}
	if (rc == 0 && rename(tmp, path) != 0) {
		fprintf(stderr, "traceconv: cannot create '%s': %s\n", path, strerror(errno));
		rc = -1;
	}
	if (rc < 0)
		unlink(tmp);
	return rc;
}

static void profile_line_row(void *ctx, sqlite3_stmt *st)
{
	struct profile_ctx *c = ctx;
	int64_t set = sqlite3_column_int64(st, 0);
	if (set < 0 || set > UINT32_MAX - 1)
		return;
	if ((size_t)set >= c->set_start.len) {
		size_t old = c->set_start.len;
		vec_resize(&c->set_start, (size_t)set + 1);
		memset(&c->set_start.data[old], 0xff, ((size_t)set + 1 - old) * sizeof(uint64_t));
	}
	if (c->set_start.data[set] == UINT64_MAX) {
		if (c->lines.len) /* close the previous set */
			vec_push(&c->lines, ((struct profile_line){UINT32_MAX, 0, 0}));
		c->set_start.data[set] = c->lines.len;
	}
	const char *name = (const char *)sqlite3_column_text(st, 1);
	const char *file = (const char *)sqlite3_column_text(st, 2);
	struct profile_line ln = {
	    .name = name ? strpool_intern_cstr(&c->st.strings, name) : 0,
	    .file = file ? strpool_intern_cstr(&c->st.strings, file) : 0,
	    .line = sqlite3_column_int64(st, 3),
	};
	vec_push(&c->lines, ln);
}

/* stack_profile_symbol into lines[], each set's rows together. */
static int profile_load_symbols(struct profile_ctx *c)
{
	int rc = traceconv_query_rows(c->tp,
	                              "SELECT symbol_set_id, name, source_file, line_number"
	                              " FROM stack_profile_symbol ORDER BY symbol_set_id, id",
	                              profile_line_row, c);
	vec_push(&c->lines, ((struct profile_line){UINT32_MAX, 0, 0}));
	return rc;
}

/* Perfetto's warnings about samples the trace says were lost. */
static void profile_warn_loss(struct tp *tp)
{
	sqlite3_stmt *st = NULL;
	const char *sql = "SELECT name, idx, value FROM stats WHERE value > 0 AND name IN"
	                  " ('perf_samples_skipped', 'perf_samples_skipped_dataloss',"
	                  " 'perf_cpu_lost_records') ORDER BY name, idx";
	if (sqlite3_prepare_v2(tp_db(tp), sql, -1, &st, NULL) != SQLITE_OK)
		return;
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		long long v = sqlite3_column_int64(st, 2);
		if (strcmp(name, "perf_samples_skipped") == 0)
			fprintf(stderr,
			        "traceconv: warning: the trace recorded %lld skipped samples;"
			        " a process may be missing from the profiles\n",
			        v);
		else if (strcmp(name, "perf_samples_skipped_dataloss") == 0)
			fprintf(stderr,
			        "traceconv: data loss: the trace recorded %lld lost perf"
			        " samples; the profiles miss them\n",
			        v);
		else
			fprintf(stderr,
			        "traceconv: data loss: the kernel ring buffer of cpu %lld"
			        " lost %lld samples; the profiles miss them\n",
			        (long long)sqlite3_column_int64(st, 1), v);
	}
	sqlite3_finalize(st);
}

/* The output directory: the given one (created if absent), or a new
 * $TMPDIR/perf_profile-YYMMDDhhmmss<random>. Returns a tb_malloc'd path. */
static char *profile_outdir(const char *dir)
{
	if (dir) {
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			fprintf(stderr, "traceconv: cannot create '%s': %s\n", dir,
			        strerror(errno));
			return NULL;
		}
		return tb_strdup(dir);
	}
	const char *tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = getenv("TEMP");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	strftime(stamp, sizeof stamp, "%y%m%d%H%M%S", localtime_r(&now, &tm));
	size_t n = strlen(tmp) + sizeof "/perf_profile-" + strlen(stamp) + 6;
	char *path = tb_malloc(n);
	snprintf(path, n, "%s/perf_profile-%sXXXXXX", tmp, stamp);
	if (!mkdtemp(path)) {
		fprintf(stderr, "traceconv: cannot create '%s': %s\n", path, strerror(errno));
		tb_free(path);
		return NULL;
	}
	return path;
}

/* Whether the trace has perf samples with callstacks; -1 on error. */
static int profile_has_samples(struct tp *tp)
{
	sqlite3_stmt *st = NULL;
	int has = -1;
	const char *sql = "SELECT EXISTS (SELECT 1 FROM perf_sample WHERE callsite_id IS NOT NULL)";
	if (sqlite3_prepare_v2(tp_db(tp), sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		has = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	return has;
}

/* One file per sampled process (with the pid filter): profile.N.pid.PID.pb. */
static int profile_processes(struct profile_ctx *c, const struct traceconv_profile_opts *o)
{
	sqlite3_stmt *st = NULL;
	char *dir = NULL;
	int rc = -1, r, n = 0;
	const char *sql = "SELECT DISTINCT p.upid, p.pid FROM __intrinsic_perf_sample s"
	                  " JOIN thread t USING (utid) JOIN process p USING (upid)"
	                  " WHERE s.callsite_id IS NOT NULL ORDER BY p.upid";

	if (sqlite3_prepare_v2(tp_db(c->tp), sql, -1, &st, NULL) != SQLITE_OK)
		goto sql_err;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		int64_t upid = sqlite3_column_int64(st, 0), pid = sqlite3_column_int64(st, 1);
		uint8_t *data = NULL;
		size_t len = 0;
		if (o->pid && (uint64_t)pid != o->pid)
			continue;
		if (!dir && !(dir = profile_outdir(o->outdir)))
			goto out;
		if (profile_build(c, upid, &data, &len) < 0)
			goto out;
		size_t plen = strlen(dir) + 64;
		char *path = tb_malloc(plen);
		snprintf(path, plen, "%s/profile.%d.pid.%lld.pb", dir, ++n, (long long)pid);
		int w = profile_write(path, data, len);
		tb_free(path);
		tb_free(data);
		if (w < 0)
			goto out;
	}
	if (r != SQLITE_DONE)
		goto sql_err;
	if (n)
		fprintf(stderr, "Wrote profiles to %s\n", dir);
	else
		fprintf(stderr, "traceconv: no perf samples %s; nothing written\n",
		        o->pid ? "of that pid"
		               : "of a known process (perf script printed no pids)");
	rc = 0;
	goto out;
sql_err:
	fprintf(stderr, "traceconv: %s\n", sqlite3_errmsg(tp_db(c->tp)));
out:
	sqlite3_finalize(st);
	tb_free(dir);
	return rc;
}

int traceconv_profile(int in_fd, const char *in_name, const struct traceconv_profile_opts *o)
{
	struct profile_ctx c = {0};
	int rc = -1;

	if (!(c.tp = traceconv_load(in_fd, in_name, NULL, NULL)))
		return -1;
	int has = profile_has_samples(c.tp);
	if (o->heap) {
		/* Heap profiles (heapprofd, Java heap graphs) are not imported. */
		fprintf(stderr,
		        "traceconv: convert profile: no %s profile in the trace"
		        " (perf samples convert with --perf)\n",
		        o->heap);
		goto out;
	}
	if (has <= 0) {
		fprintf(stderr, "traceconv: convert profile: no profile found in the trace\n");
		goto out;
	}
	if (traceconv_stacks_load(&c.st, c.tp) < 0 || profile_load_symbols(&c) < 0)
		goto out;
	profile_warn_loss(c.tp);
	rc = profile_processes(&c, o);
out:
	traceconv_stacks_release(&c.st);
	vec_release(&c.lines);
	vec_release(&c.set_start);
	vec_release(&c.walk);
	tp_free(c.tp);
	return rc;
}
