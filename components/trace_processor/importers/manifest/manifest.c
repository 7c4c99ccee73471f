/*
 * The trace manifest document: parsing and validation into struct
 * tp_manifest, and the importer of a manifest file (trace_type
 * "perfetto_manifest"), sniffed by its first bytes wherever it sits in an
 * archive. The importer records what the manifest says about the trace as a
 * whole (trace_time_clock_id, manifest_attribute.* in metadata) and hands
 * the manifest to tp.c (tp->manifest), which plans the members with it
 * (align.c).
 *
 *   {"perfetto_manifest": {
 *      "version": 1,                                   required, only 1
 *      "trace_time": {"clock": C, "file": F, "machine": M},
 *      "files": [{"path": P,
 *                 "machine": {"name": N}            | "machines": [{"id", "name"}],
 *                 "clocks": {"clock": C, "machine": M, "offset_ns": I,
 *                            "sync_to": {"file": F, "machine": M, "clock": C}}}],
 *      "attributes": {K: string | integer}}}
 *
 * Errors are Perfetto's one-line messages, prefixed "perfetto_manifest: ".
 */
#include "../../tp_int.h"
#include "../../model/model.h"
#include "../importer.h"
#include "manifest.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PREFIX "perfetto_manifest: "
/* A manifest is small; anything bigger is not one. */
#define MAX_MANIFEST_BYTES (16u << 20)

static const char *const clock_names[] = {NULL,        "REALTIME",         "REALTIME_COARSE",
                                          "MONOTONIC", "MONOTONIC_COARSE", "MONOTONIC_RAW",
                                          "BOOTTIME"};

uint32_t tp_manifest_clock_id(const char *name)
{
	for (uint32_t i = 1; i < TB_ARRAY_SIZE(clock_names); i++)
		if (!strcmp(name, clock_names[i]))
			return i;
	return 0;
}

const char *tp_manifest_clock_name(uint32_t id)
{
	return id < TB_ARRAY_SIZE(clock_names) ? clock_names[id] : NULL;
}

bool tp_manifest_sniff(const uint8_t *p, size_t n)
{
	static const char magic[] = "{\"perfetto_manifest\"";
	size_t i = 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	return n - i >= sizeof magic - 1 && !memcmp(p + i, magic, sizeof magic - 1);
}

struct ctx {
	char *err;
	size_t errlen;
	struct tp_manifest *m;
};

static int bad(struct ctx *c, const char *fmt, ...) TB_PRINTF(2, 3);
static int bad(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = snprintf(c->err, c->errlen, PREFIX);
	if (k > 0 && (size_t)k < c->errlen)
		vsnprintf(c->err + k, c->errlen - (size_t)k, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int clock_of(struct ctx *c, const struct tp_mjson *v, uint32_t *out)
{
	if (v->type != TP_MJSON_STRING)
		return bad(c, "clock name must be a string");
	*out = tp_manifest_clock_id(v->s);
	if (!*out)
		return bad(c,
		           "unknown clock name: %s. Use one of REALTIME, REALTIME_COARSE, "
		           "MONOTONIC, MONOTONIC_COARSE, MONOTONIC_RAW, BOOTTIME.",
		           v->s);
	return 0;
}

/* An optional string member: 0 (and *out NULL when absent), or an error. */
static int opt_str(struct ctx *c, const struct tp_mjson *o, const char *key, const char *what,
                   const char **out)
{
	const struct tp_mjson *v = tp_mjson_get(o, key);
	*out = NULL;
	if (!v)
		return 0;
	if (v->type != TP_MJSON_STRING)
		return bad(c, "%s must be a string", what);
	*out = v->s;
	return 0;
}

static int parse_clocks(struct ctx *c, const struct tp_mjson *v, struct tp_mf_file *f)
{
	if (v->type != TP_MJSON_OBJECT)
		return bad(c, "clocks must be an object");
	f->has_clocks = true;
	if (opt_str(c, v, "machine", "clocks: machine", &f->clock_machine) < 0)
		return -EINVAL;
	const struct tp_mjson *x = tp_mjson_get(v, "clock");
	if (x && clock_of(c, x, &f->clock) < 0)
		return -EINVAL;
	const struct tp_mjson *s = tp_mjson_get(v, "sync_to");
	if (!s)
		return bad(c, "clocks: a sync_to block is required. Manual clock handling "
		              "relates this file to a clock in another trace, e.g. \"sync_to\": "
		              "{\"file\": \"other.pb\"}.");
	if (s->type != TP_MJSON_OBJECT)
		return bad(c, "clocks: sync_to must be an object");
	x = tp_mjson_get(s, "file");
	if (!x || x->type != TP_MJSON_STRING)
		return bad(c, "clocks: sync_to.file is required and must be a string");
	f->sync_file = x->s;
	if (opt_str(c, s, "machine", "clocks: sync_to.machine", &f->sync_machine) < 0)
		return -EINVAL;
	x = tp_mjson_get(s, "clock");
	if (x && clock_of(c, x, &f->sync_clock) < 0)
		return -EINVAL;
	x = tp_mjson_get(v, "offset_ns");
	if (x) {
		if (x->type != TP_MJSON_INT)
			return bad(c, "clocks: offset_ns must be an integer");
		if (x->i == INT64_MIN)
			return bad(c, "clocks: offset_ns is out of range");
		f->offset_ns = x->i;
	}
	return 0;
}

static int parse_file(struct ctx *c, const struct tp_mjson *v, struct tp_mf_file *f)
{
	const struct tp_mjson *x = tp_mjson_get(v, "path");
	if (v->type != TP_MJSON_OBJECT || !x || x->type != TP_MJSON_STRING)
		return bad(c, "files entries must be objects with a string path");
	f->path = x->s;
	if ((x = tp_mjson_get(v, "clocks")) && parse_clocks(c, x, f) < 0)
		return -EINVAL;
	const struct tp_mjson *one = tp_mjson_get(v, "machine"),
	                      *many = tp_mjson_get(v, "machines");
	if (one && many)
		return bad(c, "machine and machines are mutually exclusive. Use `machine` for a "
		              "single-machine file, or `machines` to remap a multi-machine proto's "
		              "embedded ids; not both.");
	if (one) {
		x = tp_mjson_get(one, "name");
		if (!x || x->type != TP_MJSON_STRING)
			return bad(c, "machine must be an object with a string name, e.g. "
			              "\"machine\": {\"name\": \"phone\"}.");
		if (!x->s[0])
			return bad(c, "machine: name must be non-empty");
		f->machine = x->s;
	}
	if (many) {
		if (many->type != TP_MJSON_ARRAY)
			return bad(c, "machines must be an array");
		f->has_machines = true;
		size_t n = 0;
		for (const struct tp_mjson *e = many->child; e; e = e->next)
			n++;
		f->machines = arena_zalloc(c->m->arena, (n ? n : 1) * sizeof *f->machines,
		                           _Alignof(struct tp_mf_machine_id));
		for (const struct tp_mjson *e = many->child; e; e = e->next) {
			const struct tp_mjson *id = tp_mjson_get(e, "id"),
			                      *nm = tp_mjson_get(e, "name");
			if (!id || (id->type != TP_MJSON_INT && id->type != TP_MJSON_NUMBER) ||
			    !nm || nm->type != TP_MJSON_STRING)
				return bad(
				    c, "machines entries need an integer id and a string name, "
				       "e.g. \"machines\": [{\"id\": 0, \"name\": \"phone\"}].");
			if (id->type != TP_MJSON_INT || id->i < 0 || id->i > (int64_t)UINT32_MAX)
				return bad(c, "machines: id must be in [0, 4294967295]");
			if (!nm->s[0])
				return bad(c, "machines: name must be non-empty");
			f->machines[f->nmachines++] = (struct tp_mf_machine_id){id->i, nm->s};
		}
	}
	return 0;
}

static int parse_attributes(struct ctx *c, const struct tp_mjson *v)
{
	struct tp_manifest *m = c->m;
	if (v->type != TP_MJSON_OBJECT)
		return bad(c, "attributes must be an object of string or integer values, e.g. "
		              "\"attributes\": {\"benchmark\": \"startup\"}.");
	size_t n = 0;
	for (const struct tp_mjson *e = v->child; e; e = e->next)
		n++;
	m->attrs =
	    arena_zalloc(m->arena, (n ? n : 1) * sizeof *m->attrs, _Alignof(struct tp_mf_attr));
	for (const struct tp_mjson *e = v->child; e; e = e->next) {
		if (!e->key[0])
			return bad(c, "attributes: keys must be non-empty");
		if (e->type != TP_MJSON_STRING && e->type != TP_MJSON_INT)
			return bad(c, "attributes: '%s' must be a string or an integer", e->key);
		m->attrs[m->nattrs++] = (struct tp_mf_attr){
		    .key = e->key, .is_int = e->type == TP_MJSON_INT, .i = e->i, .s = e->s};
	}
	return 0;
}

static int parse_root(struct ctx *c, const struct tp_mjson *root)
{
	struct tp_manifest *m = c->m;
	const struct tp_mjson *meta = tp_mjson_get(root, "perfetto_manifest");
	if (!meta || meta->type != TP_MJSON_OBJECT)
		return bad(c, "expected a JSON object with a top-level perfetto_manifest key");
	const struct tp_mjson *v = tp_mjson_get(meta, "version");
	if (!v)
		return bad(c, "missing required field: version");
	if (v->type != TP_MJSON_INT)
		return bad(c, "version must be an integer");
	if (v->i != 1)
		return bad(c,
		           "unsupported version: %" PRId64
		           ". Only version 1 is supported; set \"version\": 1.",
		           v->i);
	if ((v = tp_mjson_get(meta, "trace_time"))) {
		if (v->type != TP_MJSON_OBJECT)
			return bad(c, "trace_time must be an object");
		const struct tp_mjson *x = tp_mjson_get(v, "clock");
		if (!x)
			return bad(c, "trace_time needs a clock");
		if (clock_of(c, x, &m->trace_clock) < 0 ||
		    opt_str(c, v, "file", "trace_time: file", &m->tt_file) < 0 ||
		    opt_str(c, v, "machine", "trace_time: machine", &m->tt_machine) < 0)
			return -EINVAL;
	}
	if ((v = tp_mjson_get(meta, "files"))) {
		if (v->type != TP_MJSON_ARRAY)
			return bad(c, "files must be an array");
		size_t n = 0;
		for (const struct tp_mjson *e = v->child; e; e = e->next)
			n++;
		m->files = arena_zalloc(m->arena, (n ? n : 1) * sizeof *m->files,
		                        _Alignof(struct tp_mf_file));
		for (const struct tp_mjson *e = v->child; e; e = e->next)
			if (parse_file(c, e, &m->files[m->nfiles++]) < 0)
				return -EINVAL;
	}
	if ((v = tp_mjson_get(meta, "attributes")) && parse_attributes(c, v) < 0)
		return -EINVAL;
	return 0;
}

int tp_manifest_parse(const uint8_t *p, size_t n, struct tp_manifest **out, char *err,
                      size_t errlen)
{
	struct tp_manifest *m = tb_calloc(1, sizeof *m);
	m->arena = tb_calloc(1, sizeof *m->arena);
	arena_init(m->arena, 0);
	struct ctx c = {.err = err, .errlen = errlen, .m = m};
	char jerr[128];
	struct tp_mjson *root = tp_mjson_parse(m->arena, p, n, jerr, sizeof jerr);
	int rc = root ? parse_root(&c, root) : bad(&c, "%s", jerr);
	if (rc < 0) {
		tp_manifest_free(m);
		*out = NULL;
		return rc;
	}
	*out = m;
	return 0;
}

void tp_manifest_free(struct tp_manifest *m)
{
	if (!m)
		return;
	arena_release(m->arena);
	tb_free(m->arena);
	tb_free(m);
}

const struct tp_mf_file *tp_manifest_file(const struct tp_manifest *m, const char *name)
{
	if (!m || !name)
		return NULL;
	for (size_t i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i].path, name))
			return &m->files[i];
	return NULL;
}

/* ---- the importer --------------------------------------------------------- */

struct tp_importer {
	struct tp *tp;
	VEC(uint8_t) buf;
};

static bool manifest_sniff(const uint8_t *p, size_t n)
{
	return tp_manifest_sniff(p, n);
}

static struct tp_importer *manifest_create(struct tp *tp)
{
	struct tp_importer *imp = tb_calloc(1, sizeof *imp);
	imp->tp = tp;
	return imp;
}

static int manifest_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	if (imp->buf.len + n > MAX_MANIFEST_BYTES)
		return tp_fail(imp->tp, -EFBIG, PREFIX "the manifest is larger than %u bytes",
		               MAX_MANIFEST_BYTES);
	if (n) {
		vec_reserve(&imp->buf, n);
		memcpy(imp->buf.data + imp->buf.len, p, n);
		imp->buf.len += n;
	}
	return 0;
}

static int manifest_eof(struct tp_importer *imp)
{
	struct tp *tp = imp->tp;
	char err[512];
	if (tp->manifest)
		return tp_fail(tp, -EINVAL, "multiple perfetto_manifest files in archive");
	struct tp_manifest *m;
	if (tp_manifest_parse(imp->buf.data, imp->buf.len, &m, err, sizeof err) < 0)
		return tp_fail(tp, -EINVAL, "%s", err);
	tp->manifest = m;
	if (m->trace_clock)
		tp_metadata_set_int(tp, "trace_time_clock_id", m->trace_clock);
	for (size_t i = 0; i < m->nattrs; i++) {
		char name[256];
		snprintf(name, sizeof name, "manifest_attribute.%s", m->attrs[i].key);
		if (m->attrs[i].is_int)
			tp_metadata_set_int(tp, name, m->attrs[i].i);
		else
			tp_metadata_set_str(tp, name, tp_intern_cstr(tp, m->attrs[i].s));
	}
	return 0;
}

static void manifest_destroy(struct tp_importer *imp)
{
	vec_release(&imp->buf);
	tb_free(imp);
}

const struct tp_importer_ops tp_manifest_importer = {
    .name = "perfetto_manifest",
    .sniff = manifest_sniff,
    .create = manifest_create,
    .parse = manifest_parse,
    .eof = manifest_eof,
    .destroy = manifest_destroy,
};
