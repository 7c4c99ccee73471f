/*
 * textproto: Perfetto's protobuf text format to binary, driven by the
 * descriptors protoc-c generates for every message (no schema files at run
 * time). `perfetto --txt -c config.pbtxt` feeds a TraceConfig through here.
 *
 * The dialect is the one Perfetto's own parser (src/protozero/text_to_proto)
 * accepts, plus a few things stock protoc also takes (',' separators, hex
 * and exponent numbers, '...' strings, \xHH escapes, adjacent string
 * literals). Fields are written with the pb writer in the order of the text,
 * nested messages with 4-byte redundant sizes, repeated scalars unpacked: the
 * same bytes Perfetto's protozero-based parser produces. README.md lists the
 * grammar and the error messages, which are worded as Perfetto's.
 *
 * One pass, no tree: a stack of open messages (struct text_frame) and a lexer
 * over the input. The first error stops the parse.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "pb.h"
#include "protos.h"

_Static_assert(PROTOS_TEXT_MAX_DEPTH <= PB_MAX_NESTING, "writer nesting limit");

/* Non-repeated fields seen in a message are tracked for the first this many
 * fields of its descriptor (Perfetto's messages have far fewer). */
#define TEXT_SEEN_FIELDS 512
/* Longest field, extension or enum value name looked up. */
#define TEXT_NAME_MAX 128
/* Longest number token. */
#define TEXT_NUMBER_MAX 128

enum text_kind { TEXT_MESSAGE, TEXT_STRING, TEXT_NUMBER, TEXT_IDENT };

struct text_frame {
	const ProtobufCMessageDescriptor *desc; /* NULL: unknown, being skipped */
	unsigned handle;                        /* pb_begin_nested's, depth > 0 */
	uint8_t seen[TEXT_SEEN_FIELDS / 8];
};

/* A token's text and where it starts. */
struct text_tok {
	const char *s;
	size_t n;
	size_t line, col;
};

struct text_parser {
	const char *p, *end;
	const char *line_start;
	size_t line;
	const char *name; /* shown in messages */
	bool lossy;
	struct tb_err *err;
	struct pb_writer w;
	unsigned depth; /* open braces */
	struct text_frame stack[PROTOS_TEXT_MAX_DEPTH + 1];
	/* The current string value, unescaped and concatenated. */
	char *sbuf;
	size_t slen, scap;
	/* First bad escape in it: the raw literal and what was wrong. */
	const char *esc_err; /* NULL, "unknown", "octal" or "hex" */
	struct text_tok esc_lit;
};

static struct text_tok text_here(const struct text_parser *t, const char *at)
{
	struct text_tok k = {at, 0, t->line, (size_t)(at - t->line_start) + 1};
	return k;
}

static int text_fail(struct text_parser *t, const struct text_tok *at, const char *fmt, ...)
    TB_PRINTF(3, 4);

static int text_fail(struct text_parser *t, const struct text_tok *at, const char *fmt, ...)
{
	char msg[TB_ERR_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return tb_err_set(t->err, -EINVAL, "%s:%zu:%zu error: %s", t->name, at->line, at->col, msg);
}

static bool is_ident_start(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_ident_body(char c)
{
	return is_ident_start(c) || is_digit(c);
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static void text_newline(struct text_parser *t, const char *nl)
{
	t->line++;
	t->line_start = nl + 1;
}

/* Skip whitespace and '#' comments. */
static void text_skip_space(struct text_parser *t)
{
	while (t->p < t->end) {
		char c = *t->p;
		if (c == '\n') {
			text_newline(t, t->p);
			t->p++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			t->p++;
		} else if (c == '#') {
			while (t->p < t->end && *t->p != '\n')
				t->p++;
		} else {
			break;
		}
	}
}

static void text_sput(struct text_parser *t, char c)
{
	if (t->slen == t->scap) {
		t->scap = t->scap ? t->scap * 2 : 64;
		t->sbuf = tb_realloc(t->sbuf, t->scap);
	}
	t->sbuf[t->slen++] = c;
}

static void text_esc_error(struct text_parser *t, const char *what, const struct text_tok *lit)
{
	if (!t->esc_err) {
		t->esc_err = what;
		t->esc_lit = *lit;
	}
}

/* Lex one quoted literal at t->p, appending its unescaped bytes to sbuf.
 * Escape errors are remembered (reported only if the field is a string). */
static int text_lex_literal(struct text_parser *t)
{
	const char q = *t->p;
	struct text_tok open = text_here(t, t->p);
	struct text_tok lit = text_here(t, t->p + 1);
	const char *p = t->p + 1;
	bool bad = false;

	while (p < t->end && *p != q) {
		char c = *p++;
		if (c == '\n') {
			/* Perfetto keeps raw newlines in strings; so do we. */
			text_newline(t, p - 1);
			text_sput(t, c);
		} else if (c == '\\') {
			if (p >= t->end)
				break;
			c = *p++;
			switch (c) {
			case '\\':
			case '\'':
			case '"':
			case '?':
				text_sput(t, c);
				break;
			case 'a':
				text_sput(t, '\a');
				break;
			case 'b':
				text_sput(t, '\b');
				break;
			case 'f':
				text_sput(t, '\f');
				break;
			case 'n':
				text_sput(t, '\n');
				break;
			case 'r':
				text_sput(t, '\r');
				break;
			case 't':
				text_sput(t, '\t');
				break;
			case 'v':
				text_sput(t, '\v');
				break;
			case 'x':
			case 'X': {
				int v = 0, nd = 0, d;
				while (nd < 2 && p < t->end && (d = hex_digit(*p)) >= 0) {
					v = v * 16 + d;
					p++;
					nd++;
				}
				if (!nd) {
					bad = true;
					text_esc_error(t, "hex", &lit);
				}
				text_sput(t, (char)v);
				break;
			}
			default:
				if (is_digit(c)) {
					/* Exactly three octal digits, at most \377. */
					if (t->end - p >= 2 && c <= '7' && p[0] >= '0' &&
					    p[0] <= '7' && p[1] >= '0' && p[1] <= '7' && c <= '3') {
						text_sput(t,
						          (char)((c - '0') << 6 |
						                 (p[0] - '0') << 3 | (p[1] - '0')));
						p += 2;
					} else {
						bad = true;
						text_esc_error(t, "octal", &lit);
					}
				} else {
					bad = true;
					text_esc_error(t, "unknown", &lit);
				}
			}
		} else {
			text_sput(t, c);
		}
	}
	if (p >= t->end)
		return text_fail(t, &open, "Unterminated string");
	if (bad && t->esc_lit.s == lit.s)
		t->esc_lit.n = (size_t)(p - lit.s);
	t->p = p + 1;
	return 0;
}

/* Lex the value at t->p into *v (kind and raw text). Strings are unescaped
 * into sbuf; adjacent literals are joined. */
static int text_lex_value(struct text_parser *t, enum text_kind *kind, struct text_tok *v)
{
	char c = *t->p;
	*v = text_here(t, t->p);
	if (c == '{') {
		*kind = TEXT_MESSAGE;
		v->n = 1;
		t->p++;
		return 0;
	}
	if (c == '"' || c == '\'') {
		int ret;
		*kind = TEXT_STRING;
		t->slen = 0;
		t->esc_err = NULL;
		if ((ret = text_lex_literal(t)) < 0)
			return ret;
		/* The raw text of the first literal, for messages. */
		v->s++;
		v->n = (size_t)(t->p - 1 - v->s);
		for (;;) {
			text_skip_space(t);
			if (t->p >= t->end || (*t->p != '"' && *t->p != '\''))
				return 0;
			if ((ret = text_lex_literal(t)) < 0)
				return ret;
		}
	}
	if (c == '-' || c == '.' || is_digit(c)) {
		const char *p = t->p + 1;
		*kind = TEXT_NUMBER;
		while (p < t->end) {
			if (is_ident_body(*p) || *p == '.')
				p++;
			else if ((*p == '-' || *p == '+') && (p[-1] == 'e' || p[-1] == 'E'))
				p++;
			else
				break;
		}
		v->n = (size_t)(p - t->p);
		t->p = p;
		return 0;
	}
	if (is_ident_start(c)) {
		const char *p = t->p + 1;
		*kind = TEXT_IDENT;
		while (p < t->end && is_ident_body(*p))
			p++;
		v->n = (size_t)(p - t->p);
		t->p = p;
		return 0;
	}
	return text_fail(t, v, "Unexpected character '%c'", c);
}

static const char *type_name(ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_INT32:
		return "int32";
	case PROTOBUF_C_TYPE_SINT32:
		return "sint32";
	case PROTOBUF_C_TYPE_SFIXED32:
		return "sfixed32";
	case PROTOBUF_C_TYPE_INT64:
		return "int64";
	case PROTOBUF_C_TYPE_SINT64:
		return "sint64";
	case PROTOBUF_C_TYPE_SFIXED64:
		return "sfixed64";
	case PROTOBUF_C_TYPE_UINT32:
		return "uint32";
	case PROTOBUF_C_TYPE_FIXED32:
		return "fixed32";
	case PROTOBUF_C_TYPE_UINT64:
		return "uint64";
	case PROTOBUF_C_TYPE_FIXED64:
		return "fixed64";
	case PROTOBUF_C_TYPE_FLOAT:
		return "float";
	case PROTOBUF_C_TYPE_DOUBLE:
		return "double";
	case PROTOBUF_C_TYPE_BOOL:
		return "bool";
	case PROTOBUF_C_TYPE_ENUM:
		return "enum";
	case PROTOBUF_C_TYPE_STRING:
		return "string";
	case PROTOBUF_C_TYPE_BYTES:
		return "bytes";
	case PROTOBUF_C_TYPE_MESSAGE:
		return "message";
	}
	return "?";
}

static bool kind_fits(enum text_kind kind, ProtobufCType type)
{
	switch (type) {
	case PROTOBUF_C_TYPE_MESSAGE:
		return kind == TEXT_MESSAGE;
	case PROTOBUF_C_TYPE_STRING:
	case PROTOBUF_C_TYPE_BYTES:
		return kind == TEXT_STRING;
	case PROTOBUF_C_TYPE_BOOL:
	case PROTOBUF_C_TYPE_ENUM:
		return kind == TEXT_IDENT;
	default:
		return kind == TEXT_NUMBER;
	}
}

/* Copy tok into a NUL-terminated buffer of size cap; false if too long. */
static bool tok_cstr(const struct text_tok *k, char *buf, size_t cap)
{
	if (k->n >= cap)
		return false;
	memcpy(buf, k->s, k->n);
	buf[k->n] = '\0';
	return true;
}

/* Parse an integer token: optional '-', then decimal digits or 0x hex.
 * Returns 0, -1 if malformed, -2 if the magnitude exceeds 64 bits. */
static int parse_int(const struct text_tok *k, bool *neg, uint64_t *mag)
{
	const char *p = k->s, *e = k->s + k->n;
	unsigned base = 10;
	uint64_t v = 0;
	*neg = false;
	if (p < e && *p == '-') {
		*neg = true;
		p++;
	}
	if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	if (p == e)
		return -1;
	for (; p < e; p++) {
		int d = hex_digit(*p);
		if (d < 0 || (unsigned)d >= base)
			return -1;
		if (v > (UINT64_MAX - (unsigned)d) / base)
			return -2;
		v = v * base + (unsigned)d;
	}
	*mag = v;
	return 0;
}

static int text_number(struct text_parser *t, const ProtobufCFieldDescriptor *f,
                       const struct text_tok *key, const struct text_tok *v)
{
	const char *proto = t->stack[t->depth].desc->short_name;
	struct pb_writer *w = &t->w;
	uint64_t mag = 0, max;
	bool neg, is_signed = false;
	int r;

	if (f->type == PROTOBUF_C_TYPE_FLOAT || f->type == PROTOBUF_C_TYPE_DOUBLE) {
		char buf[TEXT_NUMBER_MAX];
		char *endp;
		double d;
		if (!tok_cstr(v, buf, sizeof buf))
			goto bad;
		d = strtod(buf, &endp);
		if (endp != buf + v->n)
			goto bad;
		if (f->type == PROTOBUF_C_TYPE_FLOAT)
			pb_put_float(w, f->id, (float)d);
		else
			pb_put_double(w, f->id, d);
		return 0;
	}

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_SINT32:
	case PROTOBUF_C_TYPE_SFIXED32:
		is_signed = true;
		max = INT32_MAX;
		break;
	case PROTOBUF_C_TYPE_INT64:
	case PROTOBUF_C_TYPE_SINT64:
	case PROTOBUF_C_TYPE_SFIXED64:
		is_signed = true;
		max = INT64_MAX;
		break;
	case PROTOBUF_C_TYPE_UINT32:
	case PROTOBUF_C_TYPE_FIXED32:
		max = UINT32_MAX;
		break;
	default:
		max = UINT64_MAX;
		break;
	}
	r = parse_int(v, &neg, &mag);
	if (r == -1)
		goto bad;
	if (r == -2 || (neg && !is_signed && mag != 0) || (!neg && mag > max) ||
	    (neg && mag > max + 1))
		return text_fail(t, v, "Value '%.*s' out of range for %s field %.*s in proto %s",
		                 (int)v->n, v->s, type_name(f->type), (int)key->n, key->s, proto);

	switch (f->type) {
	case PROTOBUF_C_TYPE_INT32:
	case PROTOBUF_C_TYPE_INT64:
		pb_put_int64(w, f->id, neg ? (int64_t)(0 - mag) : (int64_t)mag);
		break;
	case PROTOBUF_C_TYPE_SINT32:
		pb_put_sint32(w, f->id, (int32_t)(neg ? 0 - mag : mag));
		break;
	case PROTOBUF_C_TYPE_SINT64:
		pb_put_sint64(w, f->id, (int64_t)(neg ? 0 - mag : mag));
		break;
	case PROTOBUF_C_TYPE_SFIXED32:
	case PROTOBUF_C_TYPE_FIXED32:
		pb_put_fixed32(w, f->id, (uint32_t)(neg ? 0 - mag : mag));
		break;
	case PROTOBUF_C_TYPE_SFIXED64:
	case PROTOBUF_C_TYPE_FIXED64:
		pb_put_fixed64(w, f->id, neg ? 0 - mag : mag);
		break;
	default: /* uint32, uint64 */
		pb_put_uint64(w, f->id, mag);
		break;
	}
	return 0;
bad:
	return text_fail(t, v,
	                 "Expected value of type %s for field %.*s in proto %s instead saw '%.*s'",
	                 type_name(f->type), (int)key->n, key->s, proto, (int)v->n, v->s);
}

static int text_ident(struct text_parser *t, const ProtobufCFieldDescriptor *f,
                      const struct text_tok *key, const struct text_tok *v)
{
	const char *proto = t->stack[t->depth].desc->short_name;
	const ProtobufCEnumValue *ev = NULL;
	char buf[TEXT_NAME_MAX];

	if (f->type == PROTOBUF_C_TYPE_BOOL) {
		if (v->n == 4 && !memcmp(v->s, "true", 4)) {
			pb_put_bool(&t->w, f->id, true);
			return 0;
		}
		if (v->n == 5 && !memcmp(v->s, "false", 5)) {
			pb_put_bool(&t->w, f->id, false);
			return 0;
		}
		return text_fail(
		    t, v,
		    "Expected 'true' or 'false' for boolean field %.*s in proto %s instead "
		    "saw '%.*s'",
		    (int)key->n, key->s, proto, (int)v->n, v->s);
	}
	if (tok_cstr(v, buf, sizeof buf))
		ev = protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, buf);
	if (!ev) {
		if (t->lossy)
			return 0;
		return text_fail(t, v, "Unexpected value '%.*s' for enum field %.*s in proto %s",
		                 (int)v->n, v->s, (int)key->n, key->s, proto);
	}
	pb_put_int32(&t->w, f->id, ev->value);
	return 0;
}

static int text_string(struct text_parser *t, const ProtobufCFieldDescriptor *f,
                       const struct text_tok *key)
{
	const char *proto = t->stack[t->depth].desc->short_name;
	const struct text_tok *lit = &t->esc_lit;
	if (!t->esc_err) {
		pb_put_bytes(&t->w, f->id, t->sbuf, t->slen);
		return 0;
	}
	if (!strcmp(t->esc_err, "octal"))
		return text_fail(
		    t, lit,
		    "Malformed string escape in %.*s in proto %s on '%.*s'. \\NNN escapes "
		    "must be exactly three octal digits <= \\377 (0xff).",
		    (int)key->n, key->s, proto, (int)lit->n, lit->s);
	if (!strcmp(t->esc_err, "hex"))
		return text_fail(
		    t, lit,
		    "Malformed string escape in %.*s in proto %s on '%.*s'. \\x escapes "
		    "need one or two hex digits.",
		    (int)key->n, key->s, proto, (int)lit->n, lit->s);
	return text_fail(t, lit, "Unknown string escape in %.*s in proto %s: '%.*s'", (int)key->n,
	                 key->s, proto, (int)lit->n, lit->s);
}

/* Look up key in the current message. Sets *f to the field, or NULL when the
 * key is unknown and the value is to be skipped (lossy mode or a skipped
 * message). Checks for repeats of non-repeated fields and the value's kind. */
static int text_lookup(struct text_parser *t, const struct text_tok *key, bool ext,
                       enum text_kind kind, const struct text_tok *v,
                       const ProtobufCFieldDescriptor **f)
{
	struct text_frame *fr = &t->stack[t->depth];
	char buf[TEXT_NAME_MAX];
	size_t idx;

	*f = NULL;
	if (!fr->desc)
		return 0;
	if (ext) {
		/* None of our protos declares extensions. */
		if (t->lossy)
			return 0;
		return text_fail(t, key, "No extension named \"%.*s\" registered", (int)key->n,
		                 key->s);
	}
	if (tok_cstr(key, buf, sizeof buf))
		*f = protobuf_c_message_descriptor_get_field_by_name(fr->desc, buf);
	if (!*f) {
		if (t->lossy)
			return 0;
		return text_fail(t, key, "No field named \"%.*s\" in proto %s", (int)key->n, key->s,
		                 fr->desc->short_name);
	}
	idx = (size_t)(*f - fr->desc->fields);
	if ((*f)->label != PROTOBUF_C_LABEL_REPEATED && idx < TEXT_SEEN_FIELDS) {
		if (fr->seen[idx / 8] & (1u << (idx % 8)))
			return text_fail(t, key, "Saw non-repeating field '%.*s' more than once",
			                 (int)key->n, key->s);
		fr->seen[idx / 8] |= (uint8_t)(1u << (idx % 8));
	}
	if (!kind_fits(kind, (*f)->type))
		return text_fail(t, v,
		                 "Expected value of type %s for field %.*s in proto %s instead saw "
		                 "'%.*s'",
		                 type_name((*f)->type), (int)key->n, key->s, fr->desc->short_name,
		                 (int)v->n, v->s);
	return 0;
}

/* One `key[:] value` entry, t->p at the key. */
static int text_entry(struct text_parser *t)
{
	const ProtobufCFieldDescriptor *f;
	struct text_tok key = text_here(t, t->p), v;
	enum text_kind kind;
	bool ext = false;
	int ret;

	if (is_ident_start(*t->p)) {
		const char *p = t->p + 1;
		while (p < t->end && is_ident_body(*p))
			p++;
		key.n = (size_t)(p - t->p);
		t->p = p;
	} else if (*t->p == '[') {
		const char *p = t->p + 1;
		ext = true;
		while (p < t->end && (is_ident_body(*p) || *p == '.'))
			p++;
		if (p >= t->end)
			goto eof;
		if (*p != ']') {
			struct text_tok at = text_here(t, p);
			return text_fail(t, &at, "Unexpected character '%c'", *p);
		}
		if (p == t->p + 1)
			return text_fail(t, &key, "Empty extension name");
		key.s = t->p + 1;
		key.n = (size_t)(p - key.s);
		t->p = p + 1;
	} else {
		return text_fail(t, &key, "Unexpected character '%c'", *t->p);
	}

	text_skip_space(t);
	if (t->p < t->end && *t->p == ':') {
		t->p++;
		text_skip_space(t);
	}
	if (t->p >= t->end)
		goto eof;
	if ((ret = text_lex_value(t, &kind, &v)) < 0)
		return ret;
	if ((ret = text_lookup(t, &key, ext, kind, &v, &f)) < 0)
		return ret;

	if (kind == TEXT_MESSAGE) {
		struct text_frame *fr;
		if (t->depth >= PROTOS_TEXT_MAX_DEPTH)
			return text_fail(t, &v, "Nesting deeper than %d levels",
			                 PROTOS_TEXT_MAX_DEPTH);
		fr = &t->stack[++t->depth];
		memset(fr, 0, sizeof *fr);
		if (f) {
			fr->desc = f->descriptor;
			fr->handle = pb_begin_nested(&t->w, f->id);
		}
		return 0;
	}
	if (!f)
		return 0;
	if (kind == TEXT_STRING)
		return text_string(t, f, &key);
	if (kind == TEXT_NUMBER)
		return text_number(t, f, &key, &v);
	return text_ident(t, f, &key, &v);
eof:
	v = text_here(t, t->p);
	return text_fail(t, &v, "Unexpected end of input");
}

static int text_parse(struct text_parser *t)
{
	bool may_separate = false; /* a ';' or ',' may follow */
	unsigned depth;
	int ret;

	for (;;) {
		text_skip_space(t);
		if (t->p >= t->end)
			break;
		if (*t->p == '}') {
			struct text_tok at = text_here(t, t->p);
			if (t->depth == 0)
				return text_fail(t, &at, "Unmatched closing brace");
			if (t->stack[t->depth].desc)
				pb_end_nested(&t->w, t->stack[t->depth].handle);
			t->depth--;
			t->p++;
			may_separate = true;
			continue;
		}
		if (may_separate && (*t->p == ';' || *t->p == ',')) {
			t->p++;
			may_separate = false;
			continue;
		}
		depth = t->depth;
		if ((ret = text_entry(t)) < 0)
			return ret;
		/* After an opening brace a key comes, not a separator. */
		may_separate = t->depth == depth;
	}
	if (t->depth > 0) {
		struct text_tok at = text_here(t, t->p);
		return text_fail(t, &at, "Nested message not closed");
	}
	return 0;
}

int protos_text_to_binary(const ProtobufCMessageDescriptor *root, const char *name,
                          const char *text, size_t len, bool lossy, uint8_t **out, size_t *out_len,
                          struct tb_err *err)
{
	struct text_parser *t = tb_calloc(1, sizeof *t);
	int ret;

	*out = NULL;
	*out_len = 0;
	if (!text)
		text = ""; /* NULL + 0 is undefined */
	t->p = t->line_start = text;
	t->end = text + len;
	t->line = 1;
	t->name = name ? name : "config";
	t->lossy = lossy;
	t->err = err;
	t->stack[0].desc = root;
	pb_writer_init_growable(&t->w);

	if ((ret = text_parse(t)) < 0)
		goto out;
	if ((ret = pb_writer_error(&t->w)) < 0) {
		tb_err_errno(err, ret, "%s: cannot encode %s", t->name, root->short_name);
		goto out;
	}
	*out = pb_writer_take(&t->w, out_len);
out:
	pb_writer_release(&t->w);
	tb_free(t->sbuf);
	tb_free(t);
	return ret;
}
