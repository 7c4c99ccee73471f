/*
 * The text parts of a trace.dat: header_page (where a ring-buffer page
 * keeps its timestamp, commit size and data), the event `format` files
 * (so any event decodes: each field's offset, size, signedness and kind),
 * /proc/kallsyms (addresses of workqueue functions, blocked callers),
 * printk_formats (bputs strings) and saved_cmdlines (thread names).
 *
 * A format file, as tracefs prints it:
 *
 *   name: sched_switch
 *   ID: 316
 *   format:
 *   	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *   	...
 *   	field:char prev_comm[16];	offset:8;	size:16;	signed:0;
 *   	field:__data_loc char[] name;	offset:24;	size:4;	signed:0;
 *
 *   print fmt: "prev_comm=%s ...", REC->prev_comm, ...
 *
 * Fields named common_* are the record header; they are left out of the
 * args, as the text importer and Perfetto's generic events leave them.
 */
#include "trace_dat_int.h"

#include <stdlib.h>
#include <string.h>

/* The next line of [*p, e), without its '\n'. */
static bool next_line(const char **p, const char *e, const char **l, size_t *n)
{
	if (*p >= e)
		return false;
	const char *nl = memchr(*p, '\n', (size_t)(e - *p));
	*l = *p;
	*n = (size_t)((nl ? nl : e) - *p);
	*p = nl ? nl + 1 : e;
	return true;
}

static const char *find(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);
	for (size_t i = 0; i + k <= n; i++)
		if (p[i] == s[0] && memcmp(p + i, s, k) == 0)
			return p + i;
	return NULL;
}

/* The decimal number after key ("offset:") in the line, or false. */
static bool num_after(const char *l, size_t n, const char *key, uint64_t *v)
{
	const char *k = find(l, n, key);
	if (!k)
		return false;
	k += strlen(key);
	return tb_dec_prefix(k, (size_t)(l + n - k), v) > 0;
}

/* A field line's numbers ("\toffset:8;\tsize:4;\tsigned:1;"), in one
 * pass over its ';'-separated parts: v[k] and got[k] of the first part
 * starting with offset:, size:, signed: (got false when that part has no
 * number after the key). */
static void field_nums(const char *l, size_t n, uint64_t v[3], bool got[3])
{
	static const struct {
		const char *key;
		size_t len;
	} keys[3] = {{"offset:", 7}, {"size:", 5}, {"signed:", 7}};
	bool seen[3] = {false, false, false};
	const char *p = l, *e = l + n;
	for (int k = 0; k < 3; k++)
		got[k] = false;
	while (p < e) {
		const char *semi = memchr(p, ';', (size_t)(e - p));
		const char *te = semi ? semi : e;
		while (p < te && (*p == ' ' || *p == '\t'))
			p++;
		for (int k = 0; k < 3; k++) {
			size_t kl = keys[k].len;
			if (!seen[k] && (size_t)(te - p) >= kl && memcmp(p, keys[k].key, kl) == 0) {
				seen[k] = true;
				got[k] = tb_dec_prefix(p + kl, (size_t)(e - p - kl), &v[k]) > 0;
			}
		}
		p = semi ? semi + 1 : e;
	}
}

struct td_decl {
	const char *type, *name;
	size_t type_len, name_len;
	bool array;
	uint64_t array_len; /* 0: unsized "[]" */
};

/* "field:TYPE NAME[N];" -> its parts. */
static bool split_decl(const char *l, size_t n, struct td_decl *d)
{
	const char *f = find(l, n, "field:");
	if (!f)
		return false;
	f += 6;
	const char *semi = memchr(f, ';', (size_t)(l + n - f));
	if (!semi)
		return false;
	const char *e = semi;
	while (e > f && e[-1] == ' ')
		e--;
	d->array = false;
	d->array_len = 0;
	if (e > f && e[-1] == ']') {
		const char *ob = e;
		while (ob > f && ob[-1] != '[')
			ob--;
		if (ob == f)
			return false;
		d->array = true;
		uint64_t v = 0;
		if (tb_dec_prefix(ob, (size_t)(e - 1 - ob), &v) == (size_t)(e - 1 - ob))
			d->array_len = v;
		e = ob - 1;
	}
	const char *s = e;
	while (s > f && (s[-1] == '_' || (s[-1] >= 'a' && s[-1] <= 'z') ||
	                 (s[-1] >= 'A' && s[-1] <= 'Z') || (s[-1] >= '0' && s[-1] <= '9')))
		s--;
	if (s == e)
		return false;
	d->name = s;
	d->name_len = (size_t)(e - s);
	while (f < s && *f == ' ')
		f++;
	d->type = f;
	d->type_len = (size_t)(s - f);
	return true;
}

static bool type_is_char(const char *t, size_t n)
{
	return find(t, n, "char") != NULL && !find(t, n, "*");
}

int tp_td_header_page(struct trace_dat *td, const char *s, size_t n)
{
	const char *p = s, *e = s + n, *l;
	size_t ln;
	bool ts = false, commit = false, data = false;
	while (next_line(&p, e, &l, &ln)) {
		struct td_decl d;
		uint64_t off, size;
		if (!split_decl(l, ln, &d) || !num_after(l, ln, "offset:", &off) ||
		    !num_after(l, ln, "size:", &size) || off > 64)
			continue;
		if (d.name_len == 9 && memcmp(d.name, "timestamp", 9) == 0 && size == 8) {
			td->hp_ts_off = (uint32_t)off;
			ts = true;
		} else if (d.name_len == 6 && memcmp(d.name, "commit", 6) == 0 &&
		           (size == 4 || size == 8)) {
			td->hp_commit_off = (uint32_t)off;
			td->hp_commit_size = (uint32_t)size;
			commit = true;
		} else if (d.name_len == 4 && memcmp(d.name, "data", 4) == 0) {
			td->hp_data_off = (uint32_t)off;
			data = true;
		}
	}
	if (!ts || !commit || !data || td->hp_data_off < td->hp_commit_off + td->hp_commit_size ||
	    td->hp_data_off >= td->page_size)
		return tp_fail(td->tp, -EINVAL, "trace.dat: cannot parse its header_page format");
	return 0;
}

/* The next conversion of a printf format at [*p, e) ("%%" skipped):
 * how many arguments it takes ('*' width and precision take one each) and,
 * for a "%p" followed by s/f (TD_SYM_NAME) or S/F (TD_SYM_OFF), that mode.
 * false at the end of the format. */
static bool next_conv(const char **p, const char *e, uint32_t *nargs, uint8_t *sym)
{
	const char *q = *p;
	for (;;) {
		while (q < e && *q != '%')
			q++;
		if (q + 1 >= e) {
			*p = e;
			return false;
		}
		q++;
		if (*q == '%') {
			q++;
			continue;
		}
		break;
	}
	*nargs = 1;
	*sym = TD_SYM_NONE;
	while (q < e && *q && strchr("-+ #0", *q))
		q++;
	for (int part = 0; part < 2; part++) {
		if (q < e && *q == '*') {
			(*nargs)++;
			q++;
		}
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (part == 0 && q < e && *q == '.')
			q++;
		else
			break;
	}
	while (q < e && *q && strchr("hlLqjzt", *q))
		q++;
	if (q < e && *q == 'p') {
		q++;
		if (q < e && (*q == 's' || *q == 'f'))
			*sym = TD_SYM_NAME;
		else if (q < e && (*q == 'S' || *q == 'F'))
			*sym = TD_SYM_OFF;
		while (q < e && ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
		                 (*q >= '0' && *q <= '9')))
			q++;
	} else if (q < e) {
		q++;
	}
	*p = q;
	return true;
}

/* A print fmt `"...", ARG, ARG...`: each field printed as a symbol
 * (`%ps`/`%pS` of `REC->NAME`, after any cast) gets that mode, since
 * trace-cmd report prints it so. */
static void mark_sym_fields(struct trace_dat *td, const char *s, size_t n, struct td_field *fields,
                            uint32_t nf)
{
	const char *p = s, *e = s + n;
	if (p == e || *p != '"')
		return;
	const char *fb = ++p;
	while (p < e && *p != '"')
		p += *p == '\\' && p + 1 < e ? 2 : 1;
	if (p == e)
		return;
	const char *fe = p++;
	/* The arguments, split at top-level commas. */
	const char *args[64];
	size_t alen[64], na = 0;
	int depth = 0;
	bool quote = false;
	const char *a = NULL;
	for (; p <= e; p++) {
		char c = p < e ? *p : ',';
		if (quote) {
			if (c == '\\')
				p++;
			else if (c == '"')
				quote = false;
			continue;
		}
		if (c == '"')
			quote = true;
		else if (c == '(' || c == '{' || c == '[')
			depth++;
		else if (c == ')' || c == '}' || c == ']')
			depth--;
		else if (c == ',' && depth <= 0) {
			if (a && na < 64) {
				args[na] = a;
				alen[na++] = (size_t)(p - a);
			}
			a = p + 1;
		}
	}
	uint32_t idx = 0, k;
	uint8_t sym;
	const char *q = fb;
	while (next_conv(&q, fe, &k, &sym)) {
		idx += k;
		if (sym == TD_SYM_NONE || idx > na)
			continue;
		const char *v = args[idx - 1], *ve = v + alen[idx - 1];
		while (v < ve && *v == ' ')
			v++;
		while (ve > v && ve[-1] == ' ')
			ve--;
		while (v < ve && *v == '(') { /* casts */
			const char *c = memchr(v, ')', (size_t)(ve - v));
			if (!c)
				break;
			v = c + 1;
			while (v < ve && *v == ' ')
				v++;
		}
		if (ve - v <= 5 || memcmp(v, "REC->", 5) != 0)
			continue;
		uint32_t name = tp_intern(td->tp, v + 5, (size_t)(ve - v - 5));
		for (uint32_t f = 0; f < nf; f++)
			if (fields[f].name == name && fields[f].kind == TD_F_INT &&
			    fields[f].size == td->long_size)
				fields[f].sym = sym;
	}
}

bool tp_td_event_format(struct trace_dat *td, const char *s, size_t n)
{
	const char *p = s, *e = s + n, *l;
	size_t ln;
	uint64_t id = UINT64_MAX;
	uint32_t name = 0;
	struct td_field fields[TD_MAX_FIELDS];
	uint32_t nf = 0;
	const char *pfmt = NULL;
	size_t pfmt_len = 0;
	while (next_line(&p, e, &l, &ln)) {
		if (ln >= 6 && memcmp(l, "name: ", 6) == 0) {
			name = tp_intern(td->tp, l + 6, ln - 6);
			continue;
		}
		if (ln >= 4 && memcmp(l, "ID: ", 4) == 0) {
			if (tb_dec_prefix(l + 4, ln - 4, &id) == 0)
				return false;
			continue;
		}
		if (ln >= 11 && memcmp(l, "print fmt: ", 11) == 0) {
			pfmt = l + 11;
			pfmt_len = ln - 11;
			break;
		}
		struct td_decl d;
		uint64_t num[3];
		bool got[3];
		if (!split_decl(l, ln, &d))
			continue;
		field_nums(l, ln, num, got);
		uint64_t off = num[0], size = num[1], sgn = got[2] ? num[2] : 0;
		if (!got[0] || !got[1] || off > 65535 || size > 65535)
			return false;
		if (d.name_len > 7 && memcmp(d.name, "common_", 7) == 0)
			continue;
		if (nf == TD_MAX_FIELDS)
			continue;
		struct td_field *f = &fields[nf++];
		f->name = tp_intern(td->tp, d.name, d.name_len);
		f->off = (uint32_t)off;
		f->size = (uint32_t)size;
		f->is_signed = sgn != 0;
		f->rel = false;
		f->sym = TD_SYM_NONE;
		bool dyn = find(d.type, d.type_len, "__data_loc") != NULL;
		if (find(d.type, d.type_len, "__rel_loc")) {
			dyn = true;
			f->rel = true;
		}
		bool chr = type_is_char(d.type, d.type_len);
		if (dyn)
			f->kind = chr && size == 4 ? TD_F_DYNSTR : TD_F_SKIP;
		else if (d.array)
			f->kind = chr ? TD_F_STR : TD_F_SKIP;
		else if (size == 1 || size == 2 || size == 4 || size == 8)
			f->kind = TD_F_INT;
		else
			f->kind = TD_F_SKIP;
	}
	if (id == UINT64_MAX || id > UINT32_MAX || !name)
		return false;
	if (pfmt)
		mark_sym_fields(td, pfmt, pfmt_len, fields, nf);
	struct td_event ev = {.id = (uint32_t)id, .name = name, .nfields = nf};
	ev.fields = tb_malloc((nf ? nf : 1) * sizeof *ev.fields);
	memcpy(ev.fields, fields, nf * sizeof *fields);
	uint64_t old;
	if (hmap_get(&td->ev_by_id, ev.id, &old)) {
		/* The same id again (another instance's copy): keep the first. */
		tb_free(ev.fields);
		return true;
	}
	vec_push(&td->events, ev);
	hmap_put(&td->ev_by_id, ev.id, td->events.len - 1);
	return true;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct td_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->text != y->text)
		return x->text ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/* Lines "ffffffff81000000 T _stext" (a module's with "\t[mod]"). */
static void read_kallsyms(struct trace_dat *td, const char *s, size_t n)
{
	const char *p = s, *e = s + n, *l;
	size_t ln;
	while (next_line(&p, e, &l, &ln)) {
		uint64_t a = 0;
		size_t i = 0;
		int d;
		while (i < ln && i < 16 && (d = tb_hex_digit(l[i])) >= 0) {
			a = a << 4 | (uint64_t)d;
			i++;
		}
		if (i == 0 || i + 3 >= ln || l[i] != ' ' || l[i + 2] != ' ')
			continue;
		char t = l[i + 1];
		const char *nm = l + i + 3;
		size_t nl = (size_t)(l + ln - nm);
		const char *tab = memchr(nm, '\t', nl);
		if (tab)
			nl = (size_t)(tab - nm);
		struct td_sym sym = {a, nm, (uint32_t)nl,
		                     t == 't' || t == 'T' || t == 'w' || t == 'W'};
		vec_push(&td->syms, sym);
	}
	/* /proc/kallsyms is in address order as a rule: sort only if not
	 * (lookups pick the text symbol among those of one address). */
	bool sorted = true;
	for (size_t i = 1; i < td->syms.len && sorted; i++)
		sorted = td->syms.data[i - 1].addr <= td->syms.data[i].addr;
	if (!sorted)
		qsort(td->syms.data, td->syms.len, sizeof *td->syms.data, sym_cmp);
}

void tp_td_kallsyms(struct trace_dat *td, const char *s, size_t n)
{
	if (td->ksyms_text)
		read_kallsyms(td, td->ksyms_text, td->ksyms_len);
	td->ksyms_text = s;
	td->ksyms_len = n;
}

static void syms_ready(struct trace_dat *td)
{
	if (td->ksyms_z)
		tp_td_kallsyms_inflate(td);
	if (td->ksyms_text) {
		read_kallsyms(td, td->ksyms_text, td->ksyms_len);
		td->ksyms_text = NULL;
	}
}

const struct td_sym *tp_td_sym_at(struct trace_dat *td, uint64_t addr)
{
	syms_ready(td);
	size_t lo = 0, hi = td->syms.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (td->syms.data[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < td->syms.len && td->syms.data[lo].addr == addr; lo++)
		if (td->syms.data[lo].text)
			return &td->syms.data[lo];
	return NULL;
}

const struct td_sym *tp_td_sym_find(struct trace_dat *td, uint64_t addr, uint64_t *off)
{
	syms_ready(td);
	/* hi: the first symbol above addr. */
	size_t lo = 0, hi = td->syms.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (td->syms.data[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (hi == 0 || hi == td->syms.len)
		return NULL;
	/* Of the symbols at that address, the first text one, else the first. */
	size_t i = hi - 1, t = hi - 1;
	while (i > 0 && td->syms.data[i - 1].addr == td->syms.data[i].addr)
		i--;
	for (size_t j = i; j < hi; j++)
		if (td->syms.data[j].text) {
			t = j;
			break;
		}
	if (!td->syms.data[t].text)
		t = i;
	*off = addr - td->syms.data[t].addr;
	return &td->syms.data[t];
}

/* Lines `0xffffffff82a0b5c8 : "format\n"`. */
void tp_td_printk(struct trace_dat *td, const char *s, size_t n)
{
	const char *p = s, *e = s + n, *l;
	size_t ln;
	td->printk_text = s;
	while (next_line(&p, e, &l, &ln)) {
		if (ln < 3 || l[0] != '0' || l[1] != 'x')
			continue;
		uint64_t a = 0;
		size_t i = 2;
		int d;
		while (i < ln && i < 18 && (d = tb_hex_digit(l[i])) >= 0) {
			a = a << 4 | (uint64_t)d;
			i++;
		}
		const char *q = memchr(l + i, '"', ln - i);
		if (!q || l[ln - 1] != '"' || q == l + ln - 1)
			continue;
		uint64_t off = (uint64_t)(q + 1 - s), len = (uint64_t)(l + ln - 1 - (q + 1));
		if (off > UINT32_MAX || len > UINT32_MAX)
			continue;
		hmap_put(&td->printk, a, off | len << 32);
	}
}

const char *tp_td_printk_at(const struct trace_dat *td, uint64_t addr, size_t *len)
{
	uint64_t v;
	if (!td->printk_text || !hmap_get(&td->printk, addr, &v))
		return NULL;
	*len = (size_t)(v >> 32);
	return td->printk_text + (uint32_t)v;
}

/* Lines "PID COMM". */
void tp_td_cmdlines(struct trace_dat *td, const char *s, size_t n)
{
	const char *p = s, *e = s + n, *l;
	size_t ln;
	while (next_line(&p, e, &l, &ln)) {
		uint64_t pid;
		size_t k = tb_dec_prefix(l, ln, &pid);
		if (k == 0 || k >= ln || l[k] != ' ' || pid > INT32_MAX)
			continue;
		hmap_put(&td->comms, pid, tp_intern(td->tp, l + k + 1, ln - k - 1));
	}
}

void tp_td_formats_release(struct trace_dat *td)
{
	for (size_t i = 0; i < td->events.len; i++)
		tb_free(td->events.data[i].fields);
	vec_release(&td->events);
	hmap_release(&td->ev_by_id);
	vec_release(&td->syms);
	td->ksyms_text = NULL;
	td->ksyms_z = NULL;
	hmap_release(&td->printk);
	hmap_release(&td->comms);
	tb_free(td->ev_index);
	tb_free(td->strs);
	tb_free(td->comm_at);
	tb_free(td->args_at);
	tb_free(td->syms_at);
}
