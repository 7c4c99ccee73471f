/*
 * Event format files (events/<group>/<name>/format) and events/header_page,
 * parsed into descriptors, so that every offset and size we use comes from
 * the running kernel. A format file looks like:
 *
 *     name: sched_switch
 *     ID: 372
 *     format:
 *     	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *     	...
 *     	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
 *     	field:__data_loc char[] filename;	offset:8;	size:4;	signed:0;
 *
 *     print fmt: ...
 *
 * The field's kind (integer, fixed or dynamic string, array) is inferred
 * from the declaration and size. Lines that do not parse are skipped; a file
 * without a name, an ID or a field is an error. Also the event table
 * (struct ftrace_table) and the field readers used by encode.c.
 */
#include <errno.h>
#include <string.h>

#include "ftrace_int.h"

/* Decimal number at s[0, n) (leading blanks allowed) into *out; false when
 * there are no digits or it exceeds max. */
static bool parse_uint(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	size_t i = 0;
	uint64_t v;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (tb_dec_prefix(s + i, n - i, &v) == 0 || v > max)
		return false;
	*out = v;
	return true;
}

/* The value after `key` (e.g. "offset:") inside line[0, n), up to ';'. */
static bool find_uint(const char *line, size_t n, const char *key, uint64_t max, uint64_t *out)
{
	size_t k = strlen(key);
	for (size_t i = 0; i + k <= n; i++) {
		if (memcmp(line + i, key, k) == 0 &&
		    (i == 0 || line[i - 1] == '\t' || line[i - 1] == ' ' || line[i - 1] == ';'))
			return parse_uint(line + i + k, n - i - k, max, out);
	}
	return false;
}

bool probes_ftrace_parse_field_line(const char *line, size_t n, struct ftrace_field_line *fl)
{
	const char *p = memmem(line, n, "field:", 6), *semi;
	uint64_t off, size, sign = 0;
	if (!p)
		return false;
	p += 6;
	semi = memchr(p, ';', (size_t)(line + n - p));
	if (!semi)
		return false;
	if (!find_uint(semi, (size_t)(line + n - semi), "offset:", UINT16_MAX, &off) ||
	    !find_uint(semi, (size_t)(line + n - semi), "size:", UINT16_MAX, &size))
		return false;
	(void)find_uint(semi, (size_t)(line + n - semi), "signed:", 1, &sign);
	while (p < semi && (*p == ' ' || *p == '\t'))
		p++;
	fl->decl = p;
	fl->decl_len = (size_t)(semi - p);
	while (fl->decl_len && (p[fl->decl_len - 1] == ' ' || p[fl->decl_len - 1] == '\t'))
		fl->decl_len--;
	fl->offset = (uint32_t)off;
	fl->size = (uint32_t)size;
	fl->is_signed = sign != 0;
	return fl->decl_len > 0;
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* True if the type (without array brackets) is a plain char. */
static bool is_char_type(const char *t, size_t n)
{
	static const char *const chars[] = {"char", "const char", "signed char", "unsigned char"};
	for (size_t i = 0; i < TB_ARRAY_SIZE(chars); i++)
		if (strlen(chars[i]) == n && memcmp(t, chars[i], n) == 0)
			return true;
	return false;
}

/* Split a declaration into type and name and infer the kind. Returns false
 * for declarations without a name. */
static bool make_field(const struct ftrace_field_line *fl, struct ftrace_field *f)
{
	const char *d = fl->decl;
	size_t n = fl->decl_len, name_end, name_start, type_end;
	const char *lb = NULL;
	uint64_t dim = 0;
	bool has_dim = false, dim_known = false;

	/* A trailing "[...]" after the name: "char comm[16]", "char buf[]". */
	name_end = n;
	if (n && d[n - 1] == ']') {
		lb = memrchr(d, '[', n);
		if (!lb)
			return false;
		has_dim = true;
		dim_known = parse_uint(lb + 1, (size_t)(d + n - 1 - (lb + 1)), UINT16_MAX, &dim);
		name_end = (size_t)(lb - d);
	}
	name_start = name_end;
	while (name_start > 0 && is_ident(d[name_start - 1]))
		name_start--;
	if (name_start == name_end || name_end - name_start > FTRACE_MAX_NAME)
		return false;
	type_end = name_start;
	while (type_end > 0 && (d[type_end - 1] == ' ' || d[type_end - 1] == '\t'))
		type_end--;
	if (type_end == 0)
		return false;

	f->name = tb_strndup(d + name_start, name_end - name_start);
	f->type = tb_strndup(d, type_end);
	f->offset = (uint16_t)fl->offset;
	f->size = (uint16_t)fl->size;
	f->is_signed = fl->is_signed;
	f->elem_size = 0;
	f->is_char = false;

	if (strncmp(f->type, "__data_loc", 10) == 0 || strncmp(f->type, "__rel_loc", 9) == 0) {
		f->kind = f->type[2] == 'd' ? FTRACE_FIELD_DATA_LOC : FTRACE_FIELD_REL_LOC;
		f->is_char = strstr(f->type, "char") != NULL;
		if (f->size != 4)
			f->kind = FTRACE_FIELD_OTHER;
	} else if (has_dim) {
		if (is_char_type(f->type, strlen(f->type))) {
			f->kind = f->size ? FTRACE_FIELD_CHAR_ARRAY : FTRACE_FIELD_STR_TAIL;
		} else if (dim_known && dim > 0 && f->size % dim == 0 &&
		           (f->size / dim == 1 || f->size / dim == 2 || f->size / dim == 4 ||
		            f->size / dim == 8)) {
			f->kind = FTRACE_FIELD_ARRAY;
			f->elem_size = (uint8_t)(f->size / dim);
		} else {
			f->kind = FTRACE_FIELD_OTHER;
		}
	} else if (f->size == 1 || f->size == 2 || f->size == 4 || f->size == 8) {
		f->kind = FTRACE_FIELD_INT;
		if (strchr(f->type, '*'))
			f->is_signed = false; /* pointers print as unsigned */
	} else {
		f->kind = FTRACE_FIELD_OTHER;
	}
	return true;
}

/* The text after "key" at the start of line[0, n), trimmed. */
static bool line_value(const char *line, size_t n, const char *key, const char **v, size_t *vn)
{
	size_t k = strlen(key);
	if (n < k || memcmp(line, key, k) != 0)
		return false;
	line += k, n -= k;
	while (n && (*line == ' ' || *line == '\t'))
		line++, n--;
	while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\r'))
		n--;
	*v = line;
	*vn = n;
	return true;
}

void probes_ftrace_format_release(struct ftrace_event_format *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n_fields; i++) {
		tb_free(f->fields[i].name);
		tb_free(f->fields[i].type);
	}
	tb_free(f->fields);
	tb_free(f->group);
	tb_free(f->name);
	memset(f, 0, sizeof *f);
}

int probes_ftrace_format_parse(const char *group, const char *text, size_t len,
                               struct ftrace_event_format *out, struct tb_err *err)
{
	const char *p = text, *end = text + len;
	bool have_id = false;
	size_t cap = 0;
	int rc = 0;

	memset(out, 0, sizeof *out);
	out->common_pid = out->common_type = -1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *v;
		size_t n = (size_t)((nl ? nl : end) - p), vn;
		struct ftrace_field_line fl;
		uint64_t id;

		if (!out->name && line_value(p, n, "name:", &v, &vn) && vn &&
		    vn <= FTRACE_MAX_NAME) {
			out->name = tb_strndup(v, vn);
		} else if (!have_id && line_value(p, n, "ID:", &v, &vn) &&
		           parse_uint(v, vn, UINT16_MAX, &id)) {
			out->id = (uint32_t)id;
			have_id = true;
		} else if (out->n_fields < FTRACE_MAX_FIELDS &&
		           probes_ftrace_parse_field_line(p, n, &fl)) {
			if (out->n_fields == cap) {
				cap = cap ? cap * 2 : 16;
				out->fields = tb_realloc(out->fields, cap * sizeof *out->fields);
			}
			if (make_field(&fl, &out->fields[out->n_fields])) {
				const char *fname = out->fields[out->n_fields].name;
				if (strcmp(fname, "common_pid") == 0)
					out->common_pid = (int)out->n_fields;
				else if (strcmp(fname, "common_type") == 0)
					out->common_type = (int)out->n_fields;
				out->n_fields++;
			}
		}
		p = nl ? nl + 1 : end;
	}
	if (!out->name || !have_id || out->n_fields == 0) {
		rc = tb_err_set(err, -EINVAL, "bad event format '%s/%s': %s", group ? group : "",
		                out->name ? out->name : "?",
		                !out->name ? "no name"
		                : !have_id ? "no ID"
		                           : "no fields");
		probes_ftrace_format_release(out);
		return rc;
	}
	out->group = tb_strdup(group ? group : "");
	return 0;
}

int probes_ftrace_parse_header_page(const char *text, size_t len, struct ftrace_page_layout *l,
                                    struct tb_err *err)
{
	const char *p = text, *end = text + len;
	unsigned found = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);
		struct ftrace_field_line fl;
		struct ftrace_field f;
		if (probes_ftrace_parse_field_line(p, n, &fl) && make_field(&fl, &f)) {
			if (strcmp(f.name, "timestamp") == 0 && f.size == 8) {
				l->ts_off = f.offset, l->ts_size = f.size, found |= 1;
			} else if (strcmp(f.name, "commit") == 0 && (f.size == 4 || f.size == 8)) {
				l->commit_off = f.offset, l->commit_size = f.size, found |= 2;
			} else if (strcmp(f.name, "data") == 0) {
				l->data_off = f.offset;
				l->page_size = (uint32_t)f.offset + f.size;
				found |= 4;
			}
			tb_free(f.name);
			tb_free(f.type);
		}
		p = nl ? nl + 1 : end;
	}
	if (found != 7 || l->ts_off + 8u > l->data_off ||
	    (uint32_t)l->commit_off + l->commit_size > l->data_off || l->page_size <= l->data_off)
		return tb_err_set(err, -EINVAL,
		                  "bad 'events/header_page': no timestamp, commit or data field");
	return 0;
}

const struct ftrace_field *probes_ftrace_format_field(const struct ftrace_event_format *f,
                                                      const char *name)
{
	for (size_t i = 0; i < f->n_fields; i++)
		if (strcmp(f->fields[i].name, name) == 0)
			return &f->fields[i];
	return NULL;
}

bool probes_ftrace_field_int(const struct ftrace_field *fd, const uint8_t *rec, size_t len,
                             uint64_t *out)
{
	return ftrace_rd_int(fd, rec, len, out);
}

/* Bytes [*b, *b + *n) of a dynamic (__data_loc / __rel_loc) field. */
static bool dyn_span(const struct ftrace_field *fd, const uint8_t *rec, size_t len, size_t *b,
                     size_t *n)
{
	uint32_t loc;
	size_t start;
	if ((size_t)fd->offset + 4 > len)
		return false;
	memcpy(&loc, rec + fd->offset, 4);
	start = loc & 0xffff;
	if (fd->kind == FTRACE_FIELD_REL_LOC)
		start += (size_t)fd->offset + 4;
	if (start > len || (loc >> 16) > len - start)
		return false;
	*b = start;
	*n = loc >> 16;
	return true;
}

bool probes_ftrace_field_str(const struct ftrace_field *fd, const uint8_t *rec, size_t len,
                             const uint8_t **s, size_t *n)
{
	size_t b, m;
	const uint8_t *nul;
	switch (fd->kind) {
	case FTRACE_FIELD_CHAR_ARRAY:
		if ((size_t)fd->offset + fd->size > len)
			return false;
		b = fd->offset, m = fd->size;
		break;
	case FTRACE_FIELD_STR_TAIL:
		if (fd->offset > len)
			return false;
		b = fd->offset, m = len - fd->offset;
		break;
	case FTRACE_FIELD_DATA_LOC:
	case FTRACE_FIELD_REL_LOC:
		if (!fd->is_char || !dyn_span(fd, rec, len, &b, &m))
			return false;
		break;
	default:
		return false;
	}
	nul = m ? memchr(rec + b, 0, m) : NULL;
	*s = rec + b;
	*n = nul ? (size_t)(nul - (rec + b)) : m;
	return true;
}

/* ---- the table ---------------------------------------------------------- */

void probes_ftrace_table_init(struct ftrace_table *t)
{
	memset(t, 0, sizeof *t);
	hmap_init(&t->by_id);
}

void probes_ftrace_table_release(struct ftrace_table *t)
{
	for (size_t i = 0; i < t->events.len; i++) {
		probes_ftrace_format_release(t->events.data[i]);
		tb_free(t->events.data[i]);
	}
	vec_release(&t->events);
	hmap_release(&t->by_id);
	memset(t, 0, sizeof *t);
}

int probes_ftrace_table_add_format(struct ftrace_table *t, const char *group, const char *text,
                                   size_t len, struct tb_err *err)
{
	struct ftrace_event_format *f = tb_calloc(1, sizeof *f);
	uint64_t idx;
	int rc = probes_ftrace_format_parse(group, text, len, f, err);
	if (rc < 0) {
		tb_free(f);
		return rc;
	}
	probes_ftrace_proto_resolve(f);
	if (!t->have_type && f->common_type >= 0) {
		const struct ftrace_field *ct = &f->fields[f->common_type];
		if (ct->kind == FTRACE_FIELD_INT && ct->size <= 4) {
			t->layout.type_off = ct->offset;
			t->layout.type_size = ct->size;
			t->have_type = true;
		}
	}
	if (hmap_get(&t->by_id, f->id, &idx)) {
		probes_ftrace_format_release(t->events.data[idx]);
		tb_free(t->events.data[idx]);
		t->events.data[idx] = f;
		return 0;
	}
	hmap_put(&t->by_id, f->id, t->events.len);
	vec_push(&t->events, f);
	return 0;
}

const struct ftrace_event_format *probes_ftrace_table_find(const struct ftrace_table *t,
                                                           uint32_t id)
{
	uint64_t idx;
	return hmap_get(&t->by_id, id, &idx) ? t->events.data[idx] : NULL;
}
