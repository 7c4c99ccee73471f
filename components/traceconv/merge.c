/*
 * `traceconv merge`: traces into one TAR that the trace processor opens as
 * one trace, with a trace manifest (perfetto_manifest.json) either given
 * (--manifest M) or written from the command line:
 *
 *   merge -o OUT [--trace-time CLOCK [--trace-time-file F]] [--attribute K=V]
 *         [--machine NAME] [--clock CLOCK] [--offset NS]
 *         [--sync-to FILE [--sync-clock CLOCK] [--sync-machine NAME]] TRACE ...
 *
 * The per-file options apply to the next TRACE:
 *   --machine NAME   the file is machine NAME ("machine": {"name"})
 *   --sync-to FILE   relate its clock to FILE's (another input, by name):
 *                    at one instant FILE's clock reads this file's + NS
 *   --clock CLOCK    which of its own clocks (omit for clockless formats:
 *                    JSON, text), --sync-clock FILE's clock (omit: FILE's
 *                    own timeline), --offset NS (default 0)
 * Clocks: REALTIME, REALTIME_COARSE, MONOTONIC, MONOTONIC_COARSE,
 * MONOTONIC_RAW, BOOTTIME. Members are named after the inputs' base names.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "trace_processor.h"
#include "traceconv_int.h"

struct mf_file {
	const char *path, *base;
	const char *machine, *clock, *sync_to, *sync_clock, *sync_machine;
	bool has_offset;
	int64_t offset;
};

struct mf_buf {
	char *p;
	size_t len, cap;
};

static void put(struct mf_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = b->cap ? b->cap : 256;
		while (b->len + n + 1 > b->cap)
			b->cap *= 2;
		b->p = tb_realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static void puts_(struct mf_buf *b, const char *s)
{
	put(b, s, strlen(s));
}

/* s as a JSON string. */
static void put_str(struct mf_buf *b, const char *s)
{
	puts_(b, "\"");
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		char esc[8];
		if (*c == '"' || *c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*c;
			put(b, esc, 2);
		} else if (*c < 0x20) {
			snprintf(esc, sizeof esc, "\\u%04x", *c);
			puts_(b, esc);
		} else {
			put(b, (const char *)c, 1);
		}
	}
	puts_(b, "\"");
}

static bool clock_ok(const char *name)
{
	static const char *const names[] = {"REALTIME",         "REALTIME_COARSE", "MONOTONIC",
	                                    "MONOTONIC_COARSE", "MONOTONIC_RAW",   "BOOTTIME"};
	for (size_t i = 0; i < TB_ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	fprintf(stderr,
	        "traceconv: merge: unknown clock '%s' (REALTIME, REALTIME_COARSE, MONOTONIC, "
	        "MONOTONIC_COARSE, MONOTONIC_RAW or BOOTTIME)\n",
	        name);
	return false;
}

static const char *base_of(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The input named name (its path or base name), or NULL. */
static const struct mf_file *input_named(const struct mf_file *f, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].path, name) || !strcmp(f[i].base, name))
			return &f[i];
	return NULL;
}

struct mf_attr {
	const char *key, *value;
};

/* The manifest of the options, or NULL after a message. */
static char *manifest_json(const struct mf_file *f, size_t n, const char *trace_time,
                           const char *tt_file, const struct mf_attr *attrs, size_t nattrs)
{
	struct mf_buf b = {0};
	char num[32];
	puts_(&b, "{\"perfetto_manifest\": {\"version\": 1");
	if (trace_time) {
		puts_(&b, ", \"trace_time\": {\"clock\": ");
		put_str(&b, trace_time);
		if (tt_file) {
			const struct mf_file *r = input_named(f, n, tt_file);
			if (!r) {
				fprintf(
				    stderr,
				    "traceconv: merge: --trace-time-file '%s' is not an input\n",
				    tt_file);
				goto fail;
			}
			puts_(&b, ", \"file\": ");
			put_str(&b, r->base);
		}
		puts_(&b, "}");
	}
	puts_(&b, ", \"files\": [");
	bool first = true;
	for (size_t i = 0; i < n; i++) {
		/* Every input has an entry: a reference (sync_to, trace_time)
		 * must name one. */
		const struct mf_file *x = &f[i];
		puts_(&b, first ? "\n  {\"path\": " : ",\n  {\"path\": ");
		first = false;
		put_str(&b, x->base);
		if (x->machine) {
			puts_(&b, ", \"machine\": {\"name\": ");
			put_str(&b, x->machine);
			puts_(&b, "}");
		}
		if (x->sync_to) {
			const struct mf_file *r = input_named(f, n, x->sync_to);
			if (!r) {
				fprintf(stderr,
				        "traceconv: merge: --sync-to '%s' is not an input\n",
				        x->sync_to);
				goto fail;
			}
			puts_(&b, ", \"clocks\": {");
			if (x->clock) {
				puts_(&b, "\"clock\": ");
				put_str(&b, x->clock);
				puts_(&b, ", ");
			}
			snprintf(num, sizeof num, "%" PRId64, x->offset);
			puts_(&b, "\"offset_ns\": ");
			puts_(&b, num);
			puts_(&b, ", \"sync_to\": {\"file\": ");
			put_str(&b, r->base);
			if (x->sync_machine) {
				puts_(&b, ", \"machine\": ");
				put_str(&b, x->sync_machine);
			}
			if (x->sync_clock) {
				puts_(&b, ", \"clock\": ");
				put_str(&b, x->sync_clock);
			}
			puts_(&b, "}}");
		}
		puts_(&b, "}");
	}
	puts_(&b, "]");
	if (nattrs) {
		puts_(&b, ", \"attributes\": {");
		for (size_t i = 0; i < nattrs; i++) {
			if (i)
				puts_(&b, ", ");
			put_str(&b, attrs[i].key);
			puts_(&b, ": ");
			char *end = NULL;
			errno = 0;
			long long v = strtoll(attrs[i].value, &end, 10);
			if (*attrs[i].value && !*end && !errno) {
				snprintf(num, sizeof num, "%lld", v);
				puts_(&b, num);
			} else {
				put_str(&b, attrs[i].value);
			}
		}
		puts_(&b, "}");
	}
	puts_(&b, "}}\n");
	return b.p;
fail:
	tb_free(b.p);
	return NULL;
}

static bool offset_of(const char *s, int64_t *out)
{
	char *end = NULL;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (!*s || *end || errno || v == LLONG_MIN) {
		fprintf(stderr, "traceconv: merge: --offset '%s' is not an integer (ns)\n", s);
		return false;
	}
	*out = v;
	return true;
}

int traceconv_merge_main(int argc, char **argv, int first)
{
	const char *out = NULL, *manifest = NULL, *trace_time = NULL, *tt_file = NULL;
	struct mf_file *f = tb_calloc((size_t)argc + 1, sizeof *f);
	struct mf_attr *attrs = tb_calloc((size_t)argc + 1, sizeof *attrs);
	const char **inputs = tb_calloc((size_t)argc + 1, sizeof *inputs);
	size_t n = 0, nattrs = 0;
	bool per_file = false, ok = true;
	char *json = NULL;
	int rc = 1;
	for (int i = first; i < argc && ok; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		struct mf_file *x = &f[n];
		bool takes = a[0] == '-' && a[1] && strcmp(a, "-") != 0;
		if (takes && !v) {
			fprintf(stderr, "traceconv: merge: %s needs a value\n", a);
			ok = false;
			break;
		}
		if (!strcmp(a, "-o") || !strcmp(a, "--output"))
			out = v;
		else if (!strcmp(a, "--manifest"))
			manifest = v;
		else if (!strcmp(a, "--trace-time"))
			ok = clock_ok(trace_time = v);
		else if (!strcmp(a, "--trace-time-file"))
			tt_file = v;
		else if (!strcmp(a, "--attribute")) {
			const char *eq = strchr(v, '=');
			if (!eq || eq == v) {
				fprintf(stderr, "traceconv: merge: --attribute wants KEY=VALUE\n");
				ok = false;
			} else {
				attrs[nattrs].key = tb_strndup(v, (size_t)(eq - v));
				attrs[nattrs++].value = eq + 1;
			}
		} else if (!strcmp(a, "--machine"))
			x->machine = v, per_file = true;
		else if (!strcmp(a, "--clock"))
			ok = clock_ok(x->clock = v), per_file = true;
		else if (!strcmp(a, "--offset"))
			ok = offset_of(v, &x->offset), x->has_offset = true, per_file = true;
		else if (!strcmp(a, "--sync-to"))
			x->sync_to = v, per_file = true;
		else if (!strcmp(a, "--sync-clock"))
			ok = clock_ok(x->sync_clock = v), per_file = true;
		else if (!strcmp(a, "--sync-machine"))
			x->sync_machine = v, per_file = true;
		else if (takes) {
			fprintf(stderr, "traceconv: unknown option '%s'\n", a);
			ok = false;
		} else {
			x->path = a;
			x->base = base_of(a);
			inputs[n++] = a;
			continue;
		}
		i++; /* the value */
	}
	if (!ok)
		goto out;
	if (f[n].machine || f[n].clock || f[n].has_offset || f[n].sync_to || f[n].sync_clock ||
	    f[n].sync_machine) {
		fprintf(stderr,
		        "traceconv: merge: per-file options must come before their TRACE\n");
		goto out;
	}
	if (!out || !n) {
		fprintf(stderr, "traceconv: merge: -o OUT and at least one trace are needed\n");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if ((f[i].clock || f[i].has_offset || f[i].sync_clock || f[i].sync_machine) &&
		    !f[i].sync_to) {
			fprintf(stderr,
			        "traceconv: merge: '%s': --clock, --offset, --sync-clock and "
			        "--sync-machine need --sync-to FILE\n",
			        f[i].path);
			goto out;
		}
		for (size_t j = 0; j < i; j++)
			if (!strcmp(f[i].base, f[j].base)) {
				fprintf(stderr,
				        "traceconv: merge: two inputs share the name '%s'; archive "
				        "members must be unique\n",
				        f[i].base);
				goto out;
			}
	}
	bool generated = per_file || trace_time || nattrs;
	if (generated && manifest) {
		fprintf(stderr, "traceconv: merge: --manifest and the manifest options "
		                "(--machine, --sync-to, --trace-time ...) exclude each other\n");
		goto out;
	}
	if (tt_file && !trace_time) {
		fprintf(stderr, "traceconv: merge: --trace-time-file needs --trace-time CLOCK\n");
		goto out;
	}
	if (generated && !(json = manifest_json(f, n, trace_time, tt_file, attrs, nattrs)))
		goto out;
	rc = traceconv_merge_bytes(out, manifest, json, json ? strlen(json) : 0, inputs, n) < 0 ? 1
	                                                                                        : 0;
out:
	for (size_t i = 0; i < nattrs; i++)
		tb_free((char *)attrs[i].key);
	tb_free(json);
	tb_free(attrs);
	tb_free(inputs);
	tb_free(f);
	return rc;
}
