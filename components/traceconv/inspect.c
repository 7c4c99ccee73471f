/*
 * inspect.c: `traceconv inspect MODEL.json`, a terminal view of a report
 * model (`traceconv report --json`, layout in model.c) for people, scripts
 * and agents. It reads the model only, never the trace, and refers to
 * functions and threads by the model's ids, which are stable for a trace.
 *
 *   traceconv inspect MODEL.json [--sort self|inclusive] [--limit N]
 *       the capture and the functions ranked by --sort (default inclusive),
 *       the first N (default 20; 0: all)
 *   traceconv inspect MODEL.json --function ID [--depth N]
 *       one function: its samples overall and per thread, its callers
 *       (bottom-up) and callees (top-down) as trees N levels deep (default 3)
 *   traceconv inspect MODEL.json --interactive
 *       line mode on stdin: each command's answer ends with the line
 *       TRACECONV_INSPECT_END, so a program can read answer by answer:
 *         summary | top [N] [self|inclusive] | function ID [DEPTH] |
 *         callers ID [DEPTH] | callees ID [DEPTH] | threads | find TEXT |
 *         help | quit
 *       an error is one line "error: ..." (then the end line)
 *
 * Trees: for callers, each stack containing the function is walked from the
 * function's innermost occurrence towards the root; for callees, from its
 * outermost occurrence towards the leaf. Nodes merge by function id; a
 * node's samples are the samples of the stacks through it, shares are of
 * the function's inclusive samples. Children are listed by samples, then id.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "traceconv_int.h"

#define TRACECONV_INSPECT_END "--- end ---"
#define INSPECT_MAX_MODEL ((size_t)1 << 30)
#define INSPECT_DEFAULT_LIMIT 20
#define INSPECT_DEFAULT_DEPTH 3
#define INSPECT_MAX_DEPTH 64

struct ifn {
	const char *name, *module;
	uint64_t self, inclusive;
};
struct ithread {
	int64_t tid, pid;
	const char *name, *process;
	uint64_t samples;
};
struct istack {
	uint32_t thread;
	uint64_t samples;
	uint32_t off, n;
};

struct inspect {
	struct arena a;
	struct traceconv_jv root;
	const struct traceconv_jv *capture;
	const char *title;
	VEC(struct ifn) fns;
	VEC(struct ithread) threads;
	VEC(struct istack) stacks;
	VEC(uint32_t) fids;
	uint64_t total; /* samples of all stacks */
};

/* ---- loading ---------------------------------------------------------------- */

static int load_text(struct inspect *in, const char *text, size_t len, const char *path,
                     struct tb_err *err)
{
	int rc;
	arena_init(&in->a, 0);
	if ((rc = traceconv_jv_parse(text, len, &in->a, &in->root, err)) < 0)
		return rc;
	if (traceconv_jv_num(traceconv_jv_get(&in->root, "tracebox_report_model"), 0) != 1)
		return tb_err_set(err, -EINVAL,
		                  "'%s' is not a report model (traceconv report --json writes one)",
		                  path);
	in->title = traceconv_jv_text(traceconv_jv_get(&in->root, "title"), "");
	in->capture = traceconv_jv_get(&in->root, "capture");
	const struct traceconv_jv *fns = traceconv_jv_get(&in->root, "functions");
	const struct traceconv_jv *ths = traceconv_jv_get(&in->root, "threads");
	const struct traceconv_jv *sts = traceconv_jv_get(&in->root, "stacks");
	if (!fns || fns->type != TRACECONV_JV_ARR || !ths || ths->type != TRACECONV_JV_ARR ||
	    !sts || sts->type != TRACECONV_JV_ARR)
		return tb_err_set(err, -EINVAL, "'%s': functions, threads or stacks missing", path);
	for (size_t i = 0; i < fns->n; i++) {
		const struct traceconv_jv *f = &fns->items[i];
		if (traceconv_jv_num(traceconv_jv_get(f, "id"), -1) != (double)i)
			return tb_err_set(err, -EINVAL, "'%s': function %zu has id %g", path, i,
			                  traceconv_jv_num(traceconv_jv_get(f, "id"), -1));
		vec_push(&in->fns,
		         ((struct ifn){
		             traceconv_jv_text(traceconv_jv_get(f, "name"), "?"),
		             traceconv_jv_text(traceconv_jv_get(f, "module"), ""),
		             (uint64_t)traceconv_jv_num(traceconv_jv_get(f, "self"), 0),
		             (uint64_t)traceconv_jv_num(traceconv_jv_get(f, "inclusive"), 0)}));
	}
	for (size_t i = 0; i < ths->n; i++) {
		const struct traceconv_jv *t = &ths->items[i];
		vec_push(&in->threads,
		         ((struct ithread){
		             (int64_t)traceconv_jv_num(traceconv_jv_get(t, "tid"), 0),
		             (int64_t)traceconv_jv_num(traceconv_jv_get(t, "pid"), -1),
		             traceconv_jv_text(traceconv_jv_get(t, "name"), ""),
		             traceconv_jv_text(traceconv_jv_get(t, "process"), ""),
		             (uint64_t)traceconv_jv_num(traceconv_jv_get(t, "samples"), 0)}));
	}
	for (size_t i = 0; i < sts->n; i++) {
		const struct traceconv_jv *s = &sts->items[i];
		const struct traceconv_jv *fr = traceconv_jv_get(s, "frames");
		double th = traceconv_jv_num(traceconv_jv_get(s, "thread"), -1);
		double n = traceconv_jv_num(traceconv_jv_get(s, "samples"), -1);
		if (!fr || fr->type != TRACECONV_JV_ARR || !fr->n || th < 0 ||
		    th >= (double)in->threads.len || n < 0)
			return tb_err_set(err, -EINVAL, "'%s': stack %zu is malformed", path, i);
		struct istack k = {(uint32_t)th, (uint64_t)n, (uint32_t)in->fids.len,
		                   (uint32_t)fr->n};
		for (size_t j = 0; j < fr->n; j++) {
			double id = traceconv_jv_num(&fr->items[j], -1);
			if (id < 0 || id >= (double)in->fns.len || id != (double)(uint32_t)id)
				return tb_err_set(err, -EINVAL, "'%s': stack %zu names no function",
				                  path, i);
			vec_push(&in->fids, (uint32_t)id);
		}
		vec_push(&in->stacks, k);
		in->total += k.samples;
	}
	return 0;
}

static int load(struct inspect *in, const char *path, struct tb_err *err)
{
	char *text = NULL;
	size_t len = 0;
	int rc;
	if ((rc = tb_read_file(path, &text, &len, INSPECT_MAX_MODEL, err)) < 0)
		return rc;
	rc = load_text(in, text, len, path, err);
	tb_free(text);
	return rc;
}

static void release(struct inspect *in)
{
	vec_release(&in->fns);
	vec_release(&in->threads);
	vec_release(&in->stacks);
	vec_release(&in->fids);
	arena_release(&in->a);
}

/* ---- answers -------------------------------------------------------------- */

static double pct(uint64_t a, uint64_t b)
{
	return b ? (double)a * 100.0 / (double)b : 0;
}

static void summary(const struct inspect *in, FILE *out)
{
	const struct traceconv_jv *c = in->capture;
	uint64_t hz = (uint64_t)traceconv_jv_num(traceconv_jv_get(c, "sample_hz"), 0);
	double dur = traceconv_jv_num(traceconv_jv_get(c, "duration_ns"), 0) / 1e9;
	const struct traceconv_jv *cpus = traceconv_jv_get(c, "cpus");
	const struct traceconv_jv *probs = traceconv_jv_get(c, "problems");
	const struct traceconv_jv *unsym = traceconv_jv_get(c, "unsymbolized");
	bool healthy = traceconv_jv_num(traceconv_jv_get(c, "healthy"), 0) != 0;

	fprintf(out, "report model: %s\n", in->title);
	fprintf(out, "capture: %llu samples (%s)", (unsigned long long)in->total,
	        traceconv_jv_text(traceconv_jv_get(c, "event"), "samples"));
	if (hz)
		fprintf(out, " at %llu Hz", (unsigned long long)hz);
	fprintf(out, " over %.3f s; %s\n", dur, healthy ? "healthy" : "NOT healthy");
	fputs("cpus:", out);
	for (size_t i = 0; cpus && cpus->type == TRACECONV_JV_ARR && i < cpus->n; i++) {
		const struct traceconv_jv *cpu = traceconv_jv_get(&cpus->items[i], "cpu");
		if (cpu && cpu->type == TRACECONV_JV_NUM)
			fprintf(out, " %g", cpu->num);
		else
			fputs(" ?", out);
		fprintf(out, " (%g)",
		        traceconv_jv_num(traceconv_jv_get(&cpus->items[i], "samples"), 0));
	}
	fputc('\n', out);
	for (size_t i = 0; probs && probs->type == TRACECONV_JV_ARR && i < probs->n; i++)
		fprintf(out, "problem: %s\n", traceconv_jv_text(&probs->items[i], "?"));
	for (size_t i = 0; unsym && unsym->type == TRACECONV_JV_ARR && i < unsym->n; i++) {
		const struct traceconv_jv *u = &unsym->items[i];
		fprintf(out, "unsymbolized: %s: %s, %g samples\n",
		        traceconv_jv_text(traceconv_jv_get(u, "mapping"), "?"),
		        traceconv_jv_text(traceconv_jv_get(u, "reason"), "?"),
		        traceconv_jv_num(traceconv_jv_get(u, "samples"), 0));
	}
	fprintf(out, "threads: %zu, functions: %zu, distinct stacks: %zu\n", in->threads.len,
	        in->fns.len, in->stacks.len);
}

static void fn_line(const struct inspect *in, FILE *out, uint32_t id)
{
	const struct ifn *f = &in->fns.data[id];
	fprintf(out, "%6u %9llu %6.2f%% %9llu %6.2f%%  %s", id, (unsigned long long)f->self,
	        pct(f->self, in->total), (unsigned long long)f->inclusive,
	        pct(f->inclusive, in->total), f->name);
	if (f->module[0])
		fprintf(out, "  (%s)", f->module);
	fputc('\n', out);
}

static const struct inspect *sort_in;
static bool sort_self;
static int cmp_fn(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct ifn *fx = &sort_in->fns.data[x], *fy = &sort_in->fns.data[y];
	uint64_t kx = sort_self ? fx->self : fx->inclusive,
	         ky = sort_self ? fy->self : fy->inclusive;
	if (kx != ky)
		return kx > ky ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void top(const struct inspect *in, FILE *out, size_t limit, bool self)
{
	size_t n = in->fns.len;
	uint32_t *order = tb_malloc((n + 1) * sizeof *order);
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	sort_in = in;
	sort_self = self;
	qsort(order, n, sizeof *order, cmp_fn);
	sort_in = NULL;
	fprintf(out, "functions by %s samples (of %llu):\n", self ? "self" : "inclusive",
	        (unsigned long long)in->total);
	fprintf(out, "%6s %9s %7s %9s %7s  %s\n", "id", "self", "self%", "inclusive", "incl%",
	        "function");
	for (size_t i = 0; i < n && (!limit || i < limit); i++)
		fn_line(in, out, order[i]);
	if (limit && n > limit)
		fprintf(out, "(%zu more)\n", n - limit);
	tb_free(order);
}

static void threads(const struct inspect *in, FILE *out)
{
	fprintf(out, "%6s %8s %8s %9s %7s  %s\n", "id", "tid", "pid", "samples", "share",
	        "thread (process)");
	for (size_t i = 0; i < in->threads.len; i++) {
		const struct ithread *t = &in->threads.data[i];
		fprintf(out, "%6zu %8lld %8lld %9llu %6.2f%%  %s (%s)\n", i, (long long)t->tid,
		        (long long)t->pid, (unsigned long long)t->samples,
		        pct(t->samples, in->total), t->name[0] ? t->name : "?",
		        t->process[0] ? t->process : "?");
	}
}

static void find(const struct inspect *in, FILE *out, const char *text)
{
	size_t hits = 0;
	for (size_t i = 0; i < in->fns.len; i++)
		if (strcasestr(in->fns.data[i].name, text) ||
		    strcasestr(in->fns.data[i].module, text)) {
			if (!hits++)
				fprintf(out, "%6s %9s %7s %9s %7s  %s\n", "id", "self", "self%",
				        "inclusive", "incl%", "function");
			fn_line(in, out, (uint32_t)i);
		}
	if (!hits)
		fprintf(out, "no function matches '%s'\n", text);
}

/* A caller or callee tree: nodes in flat arrays, node 0 the function. */
struct tree {
	VEC(uint32_t) fn, parent;
	VEC(uint64_t) samples;
};

static uint32_t tree_child(struct tree *t, uint32_t parent, uint32_t fn)
{
	for (size_t i = 1; i < t->fn.len; i++)
		if (t->parent.data[i] == parent && t->fn.data[i] == fn)
			return (uint32_t)i;
	vec_push(&t->fn, fn);
	vec_push(&t->parent, parent);
	vec_push(&t->samples, 0);
	return (uint32_t)t->fn.len - 1;
}

static const struct tree *print_tree_t;
static int cmp_node(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct tree *t = print_tree_t;
	if (t->samples.data[x] != t->samples.data[y])
		return t->samples.data[x] > t->samples.data[y] ? -1 : 1;
	return t->fn.data[x] < t->fn.data[y] ? -1 : t->fn.data[x] > t->fn.data[y];
}

static void print_node(const struct inspect *in, const struct tree *t, FILE *out, uint32_t node,
                       int depth, uint64_t base)
{
	const struct ifn *f = &in->fns.data[t->fn.data[node]];
	fprintf(out, "%*s[%u] %s  %llu (%.2f%%)\n", 2 + 2 * depth, "", t->fn.data[node], f->name,
	        (unsigned long long)t->samples.data[node], pct(t->samples.data[node], base));
	VEC(uint32_t) kids = VEC_INIT;
	for (size_t i = 1; i < t->fn.len; i++)
		if (t->parent.data[i] == node)
			vec_push(&kids, (uint32_t)i);
	print_tree_t = t;
	if (kids.len > 1)
		qsort(kids.data, kids.len, sizeof *kids.data, cmp_node);
	for (size_t i = 0; i < kids.len; i++)
		print_node(in, t, out, kids.data[i], depth + 1, base);
	vec_release(&kids);
}

static void tree(const struct inspect *in, FILE *out, uint32_t id, int depth, bool callers)
{
	struct tree t = {0};
	vec_push(&t.fn, id);
	vec_push(&t.parent, UINT32_MAX);
	vec_push(&t.samples, 0);
	for (size_t i = 0; i < in->stacks.len; i++) {
		const struct istack *s = &in->stacks.data[i];
		const uint32_t *f = in->fids.data + s->off;
		int at = -1;
		for (uint32_t j = 0; j < s->n; j++)
			if (f[j] == id && (callers || at < 0))
				at = (int)j; /* callers: innermost; callees: outermost */
		if (at < 0)
			continue;
		t.samples.data[0] += s->samples;
		uint32_t node = 0;
		for (int d = 1; d <= depth; d++) {
			int j = callers ? at - d : at + d;
			if (j < 0 || j >= (int)s->n)
				break;
			node = tree_child(&t, node, f[j]);
			t.samples.data[node] += s->samples;
		}
	}
	fprintf(out, "%s of [%u] %s, %d levels:\n",
	        callers ? "callers (bottom-up)" : "callees (top-down)", id, in->fns.data[id].name,
	        depth);
	print_node(in, &t, out, 0, 0, t.samples.data[0]);
	vec_release(&t.fn);
	vec_release(&t.parent);
	vec_release(&t.samples);
}

static void function(const struct inspect *in, FILE *out, uint32_t id, int depth)
{
	const struct ifn *f = &in->fns.data[id];
	fprintf(out, "function %u: %s", id, f->name);
	if (f->module[0])
		fprintf(out, " (%s)", f->module);
	fprintf(out, "\nself %llu (%.2f%%), inclusive %llu (%.2f%%) of %llu samples\n",
	        (unsigned long long)f->self, pct(f->self, in->total),
	        (unsigned long long)f->inclusive, pct(f->inclusive, in->total),
	        (unsigned long long)in->total);
	/* per thread */
	uint64_t *self = tb_calloc(in->threads.len + 1, sizeof *self);
	uint64_t *incl = tb_calloc(in->threads.len + 1, sizeof *incl);
	for (size_t i = 0; i < in->stacks.len; i++) {
		const struct istack *s = &in->stacks.data[i];
		const uint32_t *fr = in->fids.data + s->off;
		for (uint32_t j = 0; j < s->n; j++)
			if (fr[j] == id) {
				incl[s->thread] += s->samples;
				break;
			}
		if (fr[s->n - 1] == id)
			self[s->thread] += s->samples;
	}
	fputs("by thread:\n", out);
	for (size_t i = 0; i < in->threads.len; i++)
		if (incl[i])
			fprintf(out,
			        "  thread %zu %s %lld: self %llu, inclusive %llu (%.2f%% of the "
			        "thread)\n",
			        i, in->threads.data[i].name[0] ? in->threads.data[i].name : "?",
			        (long long)in->threads.data[i].tid, (unsigned long long)self[i],
			        (unsigned long long)incl[i],
			        pct(incl[i], in->threads.data[i].samples));
	tb_free(self);
	tb_free(incl);
	tree(in, out, id, depth, true);
	tree(in, out, id, depth, false);
}

/* ---- the command line --------------------------------------------------------- */

static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || s[0] == '-' || v > max)
		return -1;
	*out = v;
	return 0;
}

static void help(FILE *out)
{
	fputs("commands:\n"
	      "  summary                    the capture: samples, rate, cpus, health\n"
	      "  top [N] [self|inclusive]   the N first functions by samples (N 0: all)\n"
	      "  function ID [DEPTH]        one function, its callers and callees\n"
	      "  callers ID [DEPTH]         who calls it (bottom-up tree)\n"
	      "  callees ID [DEPTH]         what it calls (top-down tree)\n"
	      "  threads                    the sampled threads\n"
	      "  find TEXT                  functions whose name or module has TEXT\n"
	      "  help, quit\n"
	      "every answer ends with the line '" TRACECONV_INSPECT_END "'\n",
	      out);
}

/* One interactive command line. Returns false on quit. */
static bool command(const struct inspect *in, char *line, FILE *out)
{
	char *argv[4] = {0};
	int argc = 0;
	for (char *p = line; *p && argc < 4;) {
		p += strspn(p, " \t\r\n");
		if (!*p)
			break;
		argv[argc++] = p;
		if (argc == 2 && strcmp(argv[0], "find") == 0) { /* the rest is the text */
			p[strcspn(p, "\r\n")] = 0;
			break;
		}
		p += strcspn(p, " \t\r\n");
		if (*p)
			*p++ = 0;
	}
	uint64_t id, n;
	if (!argc) {
		/* an empty line gets an empty answer */
	} else if (strcmp(argv[0], "quit") == 0 || strcmp(argv[0], "exit") == 0) {
		return false;
	} else if (strcmp(argv[0], "help") == 0) {
		help(out);
	} else if (strcmp(argv[0], "summary") == 0) {
		summary(in, out);
	} else if (strcmp(argv[0], "threads") == 0) {
		threads(in, out);
	} else if (strcmp(argv[0], "find") == 0) {
		if (argc < 2)
			fputs("error: find needs a text\n", out);
		else
			find(in, out, argv[1]);
	} else if (strcmp(argv[0], "top") == 0) {
		bool self = false;
		n = INSPECT_DEFAULT_LIMIT;
		for (int i = 1; i < argc; i++) {
			if (strcmp(argv[i], "self") == 0)
				self = true;
			else if (strcmp(argv[i], "inclusive") == 0)
				self = false;
			else if (parse_uint(argv[i], 1u << 30, &n) < 0) {
				fprintf(out, "error: bad count '%s'\n", argv[i]);
				goto end;
			}
		}
		top(in, out, (size_t)n, self);
	} else if (strcmp(argv[0], "function") == 0 || strcmp(argv[0], "callers") == 0 ||
	           strcmp(argv[0], "callees") == 0) {
		n = INSPECT_DEFAULT_DEPTH;
		if (argc < 2 || parse_uint(argv[1], UINT32_MAX, &id) < 0 || id >= in->fns.len)
			fprintf(out, "error: no function '%s' (ids 0..%zu)\n",
			        argc < 2 ? "" : argv[1], in->fns.len ? in->fns.len - 1 : 0);
		else if (argc > 2 && (parse_uint(argv[2], INSPECT_MAX_DEPTH, &n) < 0 || !n))
			fprintf(out, "error: bad depth '%s' (1..%d)\n", argv[2], INSPECT_MAX_DEPTH);
		else if (argv[0][0] == 'f')
			function(in, out, (uint32_t)id, (int)n);
		else
			tree(in, out, (uint32_t)id, (int)n, argv[0][5] == 'r');
	} else {
		fprintf(out, "error: unknown command '%s' (try help)\n", argv[0]);
	}
end:
	fputs(TRACECONV_INSPECT_END "\n", out);
	fflush(out);
	return true;
}

static void usage(FILE *f)
{
	fputs("usage: traceconv inspect MODEL.json [--function ID] [--depth N]\n"
	      "                 [--sort self|inclusive] [--limit N] [--interactive]\n"
	      "Walk a report model (traceconv report --json TRACE MODEL.json).\n",
	      f);
}

int traceconv_inspect_main(int argc, char **argv)
{
	struct inspect in;
	struct tb_err err = {0};
	const char *path = NULL;
	uint64_t fn = UINT64_MAX, depth = INSPECT_DEFAULT_DEPTH, limit = INSPECT_DEFAULT_LIMIT;
	bool self = false, interactive = false;
	int rc = 1;

	memset(&in, 0, sizeof in);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool val = strcmp(a, "--function") == 0 || strcmp(a, "--depth") == 0 ||
		           strcmp(a, "--sort") == 0 || strcmp(a, "--limit") == 0;
		if (val && i + 1 >= argc) {
			fprintf(stderr, "traceconv: %s needs a value\n", a);
			return 1;
		}
		const char *v = val ? argv[++i] : NULL;
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			usage(stdout);
			return 0;
		} else if (strcmp(a, "--interactive") == 0) {
			interactive = true;
		} else if (strcmp(a, "--function") == 0) {
			if (parse_uint(v, UINT32_MAX, &fn) < 0)
				goto bad_value;
		} else if (strcmp(a, "--depth") == 0) {
			if (parse_uint(v, INSPECT_MAX_DEPTH, &depth) < 0 || !depth)
				goto bad_value;
		} else if (strcmp(a, "--limit") == 0) {
			if (parse_uint(v, 1u << 30, &limit) < 0)
				goto bad_value;
		} else if (strcmp(a, "--sort") == 0) {
			if (strcmp(v, "self") != 0 && strcmp(v, "inclusive") != 0)
				goto bad_value;
			self = strcmp(v, "self") == 0;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "traceconv: unknown option '%s'\n", a);
			return 1;
		} else if (!path) {
			path = a;
		} else {
			fprintf(stderr, "traceconv: too many arguments: '%s'\n", a);
			return 1;
		}
		continue;
	bad_value:
		fprintf(stderr, "traceconv: invalid %s '%s'\n", a, v);
		return 1;
	}
	if (!path) {
		usage(stderr);
		return 1;
	}
	if (load(&in, path, &err) < 0) {
		fprintf(stderr, "traceconv: %s\n", err.msg);
		goto out;
	}
	if (interactive) {
		char line[4096];
		while (fgets(line, sizeof line, stdin))
			if (!command(&in, line, stdout))
				break;
	} else if (fn != UINT64_MAX) {
		if (fn >= in.fns.len) {
			fprintf(stderr, "traceconv: no function %llu in '%s' (ids 0..%zu)\n",
			        (unsigned long long)fn, path, in.fns.len ? in.fns.len - 1 : 0);
			goto out;
		}
		function(&in, stdout, (uint32_t)fn, (int)depth);
	} else {
		summary(&in, stdout);
		top(&in, stdout, (size_t)limit, self);
	}
	rc = 0;
out:
	release(&in);
	return rc;
}

int traceconv_inspect_text(const char *model, size_t len, const char *commands, FILE *out)
{
	struct inspect in;
	struct tb_err err = {0};
	int rc = -1;
	memset(&in, 0, sizeof in);
	if (load_text(&in, model, len, "model", &err) < 0) {
		fprintf(out, "error: %s\n", err.msg);
		goto out;
	}
	for (const char *p = commands; p && *p;) {
		char line[4096];
		size_t n = strcspn(p, "\n");
		snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line ? n : sizeof line - 1),
		         p);
		if (!command(&in, line, out))
			break;
		p += n + (p[n] == '\n');
	}
	rc = 0;
out:
	release(&in);
	return rc;
}
