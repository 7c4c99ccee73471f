/*
 * demangle.c: a compact demangler for the names profiles are full of, so a
 * symbolized trace reads like `perf report` or `c++filt` output without
 * linking a C++ runtime:
 *
 *   Itanium C++ (_Z...): nested names (N...E, const methods), constructors
 *   and destructors, operators, ABI tags, std:: abbreviations, template
 *   arguments (types, integer and bool literals, T_ parameters),
 *   substitutions (S_, S<n>_), builtin, pointer, reference and cv-qualified
 *   parameter types, return types of template functions, and GCC clone
 *   suffixes (".cold", ".isra.0" -> " [clone .cold]"), printed as GNU
 *   c++filt does.
 *   Rust legacy (_ZN...17h<16 hex>E): path components joined by "::", $-escapes
 *   decoded, the hash dropped (as perf does).
 *
 * Anything else (local names, lambdas, function and array types, ...) makes
 * sym_demangle return 0 and the caller keeps the mangled name: a name is
 * never guessed. Output is built append-only in the caller's buffer, so a
 * substitution is a byte range of what was already written.
 */
#include "base.h"

#include <stdio.h>

#define DM_MAX_SUBS 128
#define DM_MAX_DEPTH 64

struct range {
	size_t off, len;
};

struct dm {
	const char *p, *end;
	char *out;
	size_t len, cap;
	bool fail;
	int depth;
	struct range subs[DM_MAX_SUBS];
	size_t n_subs;
	struct range targs[32]; /* the last template argument list, for T_ */
	size_t n_targs;
};

static void put(struct dm *d, const char *s, size_t n)
{
	if (d->fail || n > d->cap - d->len) {
		d->fail = true;
		return;
	}
	memcpy(d->out + d->len, s, n);
	d->len += n;
}

static void puts_(struct dm *d, const char *s)
{
	put(d, s, strlen(s));
}

static void put_range(struct dm *d, struct range r)
{
	if (r.off + r.len > d->len || r.len > d->cap - d->len) {
		d->fail = true;
		return;
	}
	memmove(d->out + d->len, d->out + r.off, r.len);
	d->len += r.len;
}

static void add_sub(struct dm *d, size_t start)
{
	if (d->n_subs < DM_MAX_SUBS)
		d->subs[d->n_subs++] = (struct range){start, d->len - start};
	else
		d->fail = true;
}

static bool peek(const struct dm *d, char c)
{
	return d->p < d->end && *d->p == c;
}

static bool eat(struct dm *d, char c)
{
	if (!peek(d, c))
		return false;
	d->p++;
	return true;
}

static bool number(struct dm *d, size_t *out)
{
	size_t v = 0;
	if (d->p >= d->end || *d->p < '0' || *d->p > '9')
		return false;
	while (d->p < d->end && *d->p >= '0' && *d->p <= '9') {
		v = v * 10 + (size_t)(*d->p++ - '0');
		if (v > 1u << 20)
			return false;
	}
	*out = v;
	return true;
}

/* seq-id: S_ is 0, S<base36>_ is n+1. */
static bool seq_id(struct dm *d, size_t *out)
{
	size_t v = 0;
	if (eat(d, '_')) {
		*out = 0;
		return true;
	}
	while (d->p < d->end && *d->p != '_') {
		char c = *d->p++;
		if (c >= '0' && c <= '9')
			v = v * 36 + (size_t)(c - '0');
		else if (c >= 'A' && c <= 'Z')
			v = v * 36 + (size_t)(c - 'A' + 10);
		else
			return false;
		if (v > 1u << 20)
			return false;
	}
	if (!eat(d, '_'))
		return false;
	*out = v + 1;
	return true;
}

static void type(struct dm *d);

static void source_name(struct dm *d)
{
	size_t n;
	if (!number(d, &n) || n == 0 || n > (size_t)(d->end - d->p)) {
		d->fail = true;
		return;
	}
	if (n >= 10 && memcmp(d->p, "_GLOBAL__N", 10) == 0)
		puts_(d, "(anonymous namespace)");
	else
		put(d, d->p, n);
	d->p += n;
}

static void abi_tags(struct dm *d)
{
	while (!d->fail && eat(d, 'B')) {
		puts_(d, "[abi:");
		source_name(d);
		puts_(d, "]");
	}
}

/* Operator names: two-letter code -> spelling. */
static const char *const ops[][2] = {
    {"nw", "new"}, {"na", "new[]"}, {"dl", "delete"}, {"da", "delete[]"}, {"ps", "+"},
    {"ng", "-"},   {"ad", "&"},     {"de", "*"},      {"co", "~"},        {"pl", "+"},
    {"mi", "-"},   {"ml", "*"},     {"dv", "/"},      {"rm", "%"},        {"an", "&"},
    {"or", "|"},   {"eo", "^"},     {"aS", "="},      {"pL", "+="},       {"mI", "-="},
    {"mL", "*="},  {"dV", "/="},    {"rM", "%="},     {"aN", "&="},       {"oR", "|="},
    {"eO", "^="},  {"ls", "<<"},    {"rs", ">>"},     {"lS", "<<="},      {"rS", ">>="},
    {"eq", "=="},  {"ne", "!="},    {"lt", "<"},      {"gt", ">"},        {"le", "<="},
    {"ge", ">="},  {"ss", "<=>"},   {"nt", "!"},      {"aa", "&&"},       {"oo", "||"},
    {"pp", "++"},  {"mm", "--"},    {"cm", ","},      {"pm", "->*"},      {"pt", "->"},
    {"cl", "()"},  {"ix", "[]"},
};

/* An unqualified name; last is the previous component (for ctor/dtor). */
static void unqualified(struct dm *d, struct range last, bool *ctor_dtor)
{
	*ctor_dtor = false;
	if (d->p >= d->end) {
		d->fail = true;
		return;
	}
	char c = *d->p;
	if (c >= '0' && c <= '9') {
		source_name(d);
	} else if (c == 'C' ||
	           (c == 'D' && d->end - d->p >= 2 && d->p[1] >= '0' && d->p[1] <= '5')) {
		if (last.len == 0 || d->end - d->p < 2) {
			d->fail = true;
			return;
		}
		if (c == 'D')
			puts_(d, "~");
		d->p += 2;
		/* The class name without its template arguments. */
		size_t n = 0;
		while (n < last.len && d->out[last.off + n] != '<')
			n++;
		put_range(d, (struct range){last.off, n});
		*ctor_dtor = true;
	} else if (d->end - d->p >= 2) {
		for (size_t i = 0; i < TB_ARRAY_SIZE(ops); i++) {
			if (memcmp(d->p, ops[i][0], 2) == 0) {
				d->p += 2;
				puts_(d, "operator");
				puts_(d, ops[i][1]);
				abi_tags(d);
				return;
			}
		}
		d->fail = true;
		return;
	} else {
		d->fail = true;
		return;
	}
	abi_tags(d);
}

static void template_args(struct dm *d)
{
	/* 'I' already eaten */
	struct range args[32];
	size_t n = 0;
	if (d->len && d->out[d->len - 1] == '<')
		d->fail = true;
	puts_(d, "<");
	while (!d->fail && !eat(d, 'E')) {
		if (n)
			puts_(d, ", ");
		size_t start = d->len;
		if (eat(d, 'L')) {
			/* <literal>: integer or bool */
			bool neg;
			if (eat(d, 'b')) {
				puts_(d, eat(d, '0') ? "false" : eat(d, '1') ? "true" : "");
			} else if (eat(d, 'i')) {
				neg = eat(d, 'n');
				size_t v;
				char buf[24];
				if (!number(d, &v)) {
					d->fail = true;
					break;
				}
				snprintf(buf, sizeof buf, "%s%zu", neg ? "-" : "", v);
				puts_(d, buf);
			} else {
				d->fail = true;
			}
			if (!eat(d, 'E'))
				d->fail = true;
		} else {
			type(d);
		}
		if (n < TB_ARRAY_SIZE(args))
			args[n] = (struct range){start, d->len - start};
		n++;
		if (d->p >= d->end)
			d->fail = true;
	}
	if (d->len && d->out[d->len - 1] == '>')
		puts_(d, " ");
	puts_(d, ">");
	d->n_targs = n < TB_ARRAY_SIZE(args) ? n : TB_ARRAY_SIZE(args);
	memcpy(d->targs, args, d->n_targs * sizeof args[0]);
}

/* S-prefixed abbreviations and substitutions. */
static bool substitution(struct dm *d)
{
	static const char *const abbrev[][2] = {
	    {"a", "std::allocator"},
	    {"b", "std::basic_string"},
	    {"s", "std::basic_string<char, std::char_traits<char>, std::allocator<char> >"},
	    {"i", "std::basic_istream<char, std::char_traits<char> >"},
	    {"o", "std::basic_ostream<char, std::char_traits<char> >"},
	    {"d", "std::basic_iostream<char, std::char_traits<char> >"},
	};
	/* 'S' already eaten */
	for (size_t i = 0; i < TB_ARRAY_SIZE(abbrev); i++) {
		if (eat(d, abbrev[i][0][0])) {
			puts_(d, abbrev[i][1]);
			return true;
		}
	}
	size_t id;
	if (!seq_id(d, &id) || id >= d->n_subs) {
		d->fail = true;
		return false;
	}
	put_range(d, d->subs[id]);
	return true;
}

/* A nested name N [K] [V] [r] [R|O] prefix... E. *is_const for methods. */
static void nested(struct dm *d, bool *is_const, bool *is_template, bool *ctor_dtor)
{
	size_t start = d->len;
	struct range last = {0, 0};
	bool first = true;
	*is_const = false;
	while (d->p < d->end && (*d->p == 'K' || *d->p == 'V' || *d->p == 'r')) {
		if (*d->p == 'K')
			*is_const = true;
		d->p++;
	}
	if (!eat(d, 'R'))
		eat(d, 'O');
	while (!d->fail && !eat(d, 'E')) {
		*is_template = false;
		if (d->p >= d->end) {
			d->fail = true;
			break;
		}
		if (peek(d, 'I')) {
			d->p++;
			if (first) {
				d->fail = true;
				break;
			}
			template_args(d);
			*is_template = true;
			if (!peek(d, 'E'))
				add_sub(d, start);
			continue;
		}
		if (!first)
			puts_(d, "::");
		size_t comp = d->len;
		if (eat(d, 'S')) {
			if (eat(d, 't')) {
				puts_(d, "std");
			} else if (!substitution(d)) {
				break;
			}
			last = (struct range){comp, d->len - comp};
			first = false;
			continue; /* a substitution is not itself a new candidate */
		}
		if (peek(d, 'T')) {
			type(d);
		} else {
			unqualified(d, last, ctor_dtor);
		}
		last = (struct range){comp, d->len - comp};
		first = false;
		if (!peek(d, 'E'))
			add_sub(d, start);
	}
}

static void builtin(struct dm *d, char c)
{
	static const char *const names[26] = {
	    ['a' - 'a'] = "signed char", ['b' - 'a'] = "bool",
	    ['c' - 'a'] = "char",        ['d' - 'a'] = "double",
	    ['e' - 'a'] = "long double", ['f' - 'a'] = "float",
	    ['g' - 'a'] = "__float128",  ['h' - 'a'] = "unsigned char",
	    ['i' - 'a'] = "int",         ['j' - 'a'] = "unsigned int",
	    ['l' - 'a'] = "long",        ['m' - 'a'] = "unsigned long",
	    ['n' - 'a'] = "__int128",    ['o' - 'a'] = "unsigned __int128",
	    ['s' - 'a'] = "short",       ['t' - 'a'] = "unsigned short",
	    ['v' - 'a'] = "void",        ['w' - 'a'] = "wchar_t",
	    ['x' - 'a'] = "long long",   ['y' - 'a'] = "unsigned long long",
	    ['z' - 'a'] = "...",
	};
	if (c >= 'a' && c <= 'z' && names[c - 'a'])
		puts_(d, names[c - 'a']);
	else
		d->fail = true;
}

static void type(struct dm *d)
{
	size_t start = d->len;
	if (d->p >= d->end || ++d->depth > DM_MAX_DEPTH) {
		d->fail = true;
		return;
	}
	char c = *d->p++;
	bool is_const, is_template, ctor_dtor;
	/* Qualified and compound types print as a suffix: "char const*". */
	static const char quals[] = "PROKV";
	static const char *const qual_text[] = {"*", "&", "&&", " const", " volatile"};
	const char *q = c ? strchr(quals, c) : NULL;
	if (q) {
		type(d);
		puts_(d, qual_text[q - quals]);
		add_sub(d, start);
		d->depth--;
		return;
	}
	switch (c) {
	case 'N':
		nested(d, &is_const, &is_template, &ctor_dtor);
		add_sub(d, start); /* a nested type name is a candidate as a whole */
		break;
	case 'S':
		if (eat(d, 't')) {
			puts_(d, "std::");
			unqualified(d, (struct range){0, 0}, &ctor_dtor);
			add_sub(d, start);
		} else {
			substitution(d);
		}
		if (!d->fail && eat(d, 'I')) {
			template_args(d);
			add_sub(d, start);
		}
		break;
	case 'T': {
		size_t id;
		if (!seq_id(d, &id) || id >= d->n_targs) {
			d->fail = true;
			break;
		}
		put_range(d, d->targs[id]);
		add_sub(d, start);
		break;
	}
	case 'D':
		if (eat(d, 'n'))
			puts_(d, "decltype(nullptr)");
		else if (eat(d, 'i'))
			puts_(d, "char32_t");
		else if (eat(d, 's'))
			puts_(d, "char16_t");
		else if (eat(d, 'u'))
			puts_(d, "char8_t");
		else
			d->fail = true;
		break;
	default:
		if (c >= '0' && c <= '9') {
			d->p--;
			source_name(d);
			add_sub(d, start);
			if (!d->fail && eat(d, 'I')) {
				template_args(d);
				add_sub(d, start);
			}
		} else {
			builtin(d, c);
		}
		break;
	}
	d->depth--;
}

/* The function name; sets *is_template when it ends with template args. */
static void name(struct dm *d, bool *is_template, bool *ctor_dtor, bool *is_const)
{
	size_t start = d->len;
	*is_template = false;
	*ctor_dtor = false;
	*is_const = false;
	if (eat(d, 'N')) {
		nested(d, is_const, is_template, ctor_dtor);
	} else if (eat(d, 'S')) {
		if (eat(d, 't')) {
			puts_(d, "std::");
			unqualified(d, (struct range){0, 0}, ctor_dtor);
		} else {
			substitution(d);
		}
		if (!d->fail && eat(d, 'I')) {
			add_sub(d, start);
			template_args(d);
			*is_template = true;
		}
	} else if (peek(d, 'Z')) {
		d->fail = true; /* local names */
	} else {
		unqualified(d, (struct range){0, 0}, ctor_dtor);
		if (!d->fail && eat(d, 'I')) {
			add_sub(d, start);
			template_args(d);
			*is_template = true;
		}
	}
}

/* GCC clone suffixes: ".cold", ".isra.0", ".constprop.0.isra.1", ... */
static void clones(struct dm *d)
{
	while (!d->fail && d->p < d->end) {
		const char *s = d->p;
		if (*s != '.' || s + 1 >= d->end ||
		    !((s[1] >= 'a' && s[1] <= 'z') || s[1] == '_')) {
			d->fail = true;
			return;
		}
		const char *q = s + 1;
		while (q < d->end && *q != '.')
			q++;
		while (q + 1 < d->end && *q == '.' && q[1] >= '0' && q[1] <= '9') {
			q++;
			while (q < d->end && *q >= '0' && *q <= '9')
				q++;
		}
		puts_(d, " [clone ");
		put(d, s, (size_t)(q - s));
		puts_(d, "]");
		d->p = q;
	}
}

/* Rotate out[0, a+b) so that [a, a+b) comes first, fixing ranges. */
static void rotate(struct dm *d, size_t a, size_t b)
{
	char tmp[SYM_MAX_NAME];
	if (b > sizeof tmp) {
		d->fail = true;
		return;
	}
	memcpy(tmp, d->out + a, b);
	memmove(d->out + b, d->out, a);
	memcpy(d->out, tmp, b);
	for (size_t i = 0; i < d->n_subs; i++)
		d->subs[i].off = d->subs[i].off < a ? d->subs[i].off + b : d->subs[i].off - a;
	for (size_t i = 0; i < d->n_targs; i++)
		d->targs[i].off = d->targs[i].off < a ? d->targs[i].off + b : d->targs[i].off - a;
}

static size_t itanium(const char *s, size_t n, char *out, size_t cap)
{
	struct dm d = {.p = s + 2, .end = s + n, .out = out, .cap = cap};
	bool is_template, ctor_dtor, is_const;
	name(&d, &is_template, &ctor_dtor, &is_const);
	if (d.fail)
		return 0;
	if (d.p < d.end && *d.p != '.') {
		if (is_template && !ctor_dtor) {
			/* the return type comes first: "int foo<int>(int)" */
			size_t name_len = d.len;
			type(&d);
			puts_(&d, " ");
			if (d.fail)
				return 0;
			rotate(&d, name_len, d.len - name_len);
		}
		puts_(&d, "(");
		if (d.end - d.p >= 1 && *d.p == 'v' && (d.end - d.p == 1 || d.p[1] == '.')) {
			d.p++;
		} else {
			for (bool first = true; !d.fail && d.p < d.end && *d.p != '.';
			     first = false) {
				if (!first)
					puts_(&d, ", ");
				type(&d);
			}
		}
		puts_(&d, ")");
		if (is_const)
			puts_(&d, " const");
	}
	clones(&d);
	if (d.fail || d.len >= cap)
		return 0;
	out[d.len] = 0;
	return d.len;
}

/* Rust legacy: _ZN (len name)+ 17h<16 hex> E, with $-escapes. */
static size_t rust_legacy(const char *s, size_t n, char *out, size_t cap)
{
	static const char *const esc[][2] = {
	    {"$SP$", "@"},  {"$BP$", "*"},  {"$RF$", "&"},   {"$LT$", "<"},  {"$GT$", ">"},
	    {"$LP$", "("},  {"$RP$", ")"},  {"$C$", ","},    {"$u7e$", "~"}, {"$u20$", " "},
	    {"$u27$", "'"}, {"$u5b$", "["}, {"$u5d$", "]"},  {"$u7b$", "{"}, {"$u7d$", "}"},
	    {"$u3b$", ";"}, {"$u2b$", "+"}, {"$u22$", "\""},
	};
	struct dm d = {.p = s + 3, .end = s + n, .out = out, .cap = cap};
	const char *hash = NULL;
	/* find the hash component first: the last before E */
	while (d.p < d.end && *d.p != 'E') {
		size_t len;
		if (!number(&d, &len) || len == 0 || len > (size_t)(d.end - d.p))
			return 0;
		if (len == 17 && d.p[0] == 'h' && d.end - d.p > 17 && d.p[17] == 'E') {
			for (int i = 1; i < 17; i++)
				if (!((d.p[i] >= '0' && d.p[i] <= '9') ||
				      (d.p[i] >= 'a' && d.p[i] <= 'f')))
					return 0;
			hash = d.p;
			d.p += 17;
			break;
		}
		if (d.len)
			puts_(&d, "::");
		const char *c = d.p, *ce = d.p + len;
		if (ce - c >= 2 && c[0] == '_' && c[1] == '$')
			c++; /* a leading '_' only protects a '$' */
		while (c < ce && !d.fail) {
			if (*c == '.' && ce - c >= 2 && c[1] == '.') {
				puts_(&d, "::");
				c += 2;
				continue;
			}
			if (*c == '$') {
				size_t k = 0;
				for (; k < TB_ARRAY_SIZE(esc); k++) {
					size_t el = strlen(esc[k][0]);
					if ((size_t)(ce - c) >= el &&
					    memcmp(c, esc[k][0], el) == 0) {
						puts_(&d, esc[k][1]);
						c += el;
						break;
					}
				}
				if (k == TB_ARRAY_SIZE(esc))
					return 0;
				continue;
			}
			put(&d, c++, 1);
		}
		d.p = ce;
	}
	if (!hash || d.fail || d.len == 0 || !eat(&d, 'E'))
		return 0;
	clones(&d);
	if (d.fail || d.len >= cap)
		return 0;
	out[d.len] = 0;
	return d.len;
}

size_t sym_demangle(const char *mangled, char *out, size_t cap)
{
	size_t n = strlen(mangled);
	if (n < 3 || memcmp(mangled, "_Z", 2) != 0 || cap < 2)
		return 0;
	if (mangled[2] == 'N') {
		size_t r = rust_legacy(mangled, n, out, cap - 1);
		if (r)
			return r;
	}
	return itanium(mangled, n, out, cap - 1);
}
