/*
 * The ftrace text importer's glue: sniffing, the public parser API
 * (ftrace_text.h) and struct tp_importer_ops.
 *
 * A text trace is recognised by its first bytes: a "# tracer" header, the
 * atrace "TRACE:" marker, trace-cmd's "cpus=N" / "version = N" lines, an
 * HTML document (systrace), or a first event line that splits as one
 * (line.c).
 */
#include "ftrace_text_int.h"
#include "../../sorter/sorter.h"
#include "../importer.h"

#include <string.h>

struct ftrace_text *tp_ftrace_text_new(struct tp *tp)
{
	struct ftrace_text *ft = tb_calloc(1, sizeof *ft);
	ft->tp = tp;
	ft->sorter = tp_sorter_new();
	ft->mode = FT_START;
	tp_ftrace_init(tp, &ft->model);
	hmap_init(&ft->kinds);
	tp_ft_kinds_init(ft);
	ft->unknown_task = tp_intern_cstr(tp, "<...>");
	ft->str_cpufreq = tp_intern_cstr(tp, "cpufreq");
	ft->str_cpuidle = tp_intern_cstr(tp, "cpuidle");
	ft->str_workqueue = tp_intern_cstr(tp, "workqueue");
	return ft;
}

void tp_ftrace_text_parse_chunk(struct ftrace_text *ft, const char *p, size_t n)
{
	struct tp *tp = ft->tp;
	tp_ft_feed(ft, p, n);
	if (!tp->cfg.full_sort && tp_sorter_want_extract(ft->sorter))
		tp_sorter_extract(ft->sorter, tp, tp_ft_on_sorted, ft);
}

void tp_ftrace_text_end(struct ftrace_text *ft)
{
	tp_ft_feed_end(ft);
	tp_sorter_flush(ft->sorter, ft->tp, tp_ft_on_sorted, ft);
	if (ft->json)
		tp_json_importer.eof(ft->json);
}

void tp_ftrace_text_free(struct ftrace_text *ft)
{
	if (!ft)
		return;
	if (ft->json)
		tp_json_importer.destroy(ft->json);
	tp_sorter_free(ft->sorter);
	tp_ftrace_release(&ft->model);
	tp_args_builder_release(&ft->args);
	hmap_release(&ft->kinds);
	vec_release(&ft->partial);
	vec_release(&ft->zbuf);
	tb_free(ft);
}

/* ---- the importer ------------------------------------------------------------- */

static bool has(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);
	for (size_t i = 0; i + k <= n; i++)
		if (p[i] == s[0] && memcmp(p + i, s, k) == 0)
			return true;
	return false;
}

static bool ftrace_text_sniff(const uint8_t *up, size_t n)
{
	const char *p = (const char *)up, *e = p + n;
	/* Not a protobuf trace (a 0x0a tag and then a length varint that is no
	 * text byte), and not JSON (whose "systemTraceEvents" may hold a
	 * "# tracer" header of its own). */
	if (n >= 2 && up[0] == 0x0a &&
	    (up[1] >= 0x80 || (up[1] < 0x20 && up[1] != '\n' && up[1] != '\r' && up[1] != '\t')))
		return false;
	size_t i = n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
		i++;
	if (i < n && (p[i] == '{' || p[i] == '['))
		return false;
	if (has(p, n, "# tracer") || has(p, n, "TRACE:\n") || has(p, n, "TRACE:\r\n"))
		return true;
	if (tp_ft_is_html(p, n) || (n >= 5 && memcmp(p, "cpus=", 5) == 0) ||
	    (n >= 10 && memcmp(p, "version = ", 10) == 0))
		return true;
	/* Else the first complete lines that are not comments: one must be an
	 * event line. */
	int tried = 0;
	while (p < e && tried < 3) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		if (!nl)
			break;
		size_t len = (size_t)(nl - p);
		size_t j = 0;
		while (j < len && (p[j] == ' ' || p[j] == '\t' || p[j] == '\r'))
			j++;
		if (j < len && p[j] != '#') {
			struct tp_ft_line l;
			if (tp_ft_line_tokenize(p, len, &l))
				return true;
			tried++;
		}
		p = nl + 1;
	}
	return false;
}

static struct tp_importer *ftrace_text_create(struct tp *tp)
{
	tp_thread_name_idle(tp);
	return (struct tp_importer *)(void *)tp_ftrace_text_new(tp);
}

static int ftrace_text_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	tp_ftrace_text_parse_chunk((struct ftrace_text *)(void *)imp, (const char *)p, n);
	return 0;
}

static int ftrace_text_eof(struct tp_importer *imp)
{
	tp_ftrace_text_end((struct ftrace_text *)(void *)imp);
	return 0;
}

static void ftrace_text_destroy(struct tp_importer *imp)
{
	tp_ftrace_text_free((struct ftrace_text *)(void *)imp);
}

const struct tp_importer_ops tp_ftrace_text_importer = {
    .name = "systrace",
    .sniff = ftrace_text_sniff,
    .create = ftrace_text_create,
    .parse = ftrace_text_parse,
    .eof = ftrace_text_eof,
    .destroy = ftrace_text_destroy,
};
