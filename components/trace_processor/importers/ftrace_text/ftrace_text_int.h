/*
 * Private declarations of the ftrace text importer (see README.md):
 *
 *   framing.c   chunks -> lines: HTML sections, the "TRACE:" marker and its
 *               zlib form, JSON blocks of an HTML trace, escaped line ends
 *   line.c      one line -> struct tp_ft_line (task, pid, tgid, cpu, ts, event,
 *               payload), pushed to the sorter
 *   events.c    sorted records -> model: payload fields, per-event handlers
 *   importer.c  sniffing and the struct tp_importer_ops glue
 */
#ifndef TB_TP_FTRACE_TEXT_INT_H
#define TB_TP_FTRACE_TEXT_INT_H

#include "../../tp_int.h"
#include "../../model/ftrace.h"
#include "ftrace_text.h"

#define FT_MAX_LINE (1u << 20)            /* longer lines are dropped and counted */
#define FT_MAX_INFLATED ((size_t)1 << 30) /* the zlib "TRACE:" form, inflated */
#define FT_MAX_COMPRESSED ((size_t)512 << 20)
#define FT_MAX_CPU 4096u
#define FT_MAX_FIELDS 64 /* key=value fields of one payload */

/* One tokenized event line; pointers into the line. */
struct tp_ft_line {
	const char *task;
	size_t task_len;
	int64_t pid;
	int64_t tgid; /* -1: absent or "-----" */
	uint32_t cpu;
	int64_t ts;
	const char *event, *payload;
	size_t event_len, payload_len;
};

/* Split an event line; false if it is not one. */
bool tp_ft_line_tokenize(const char *p, size_t n, struct tp_ft_line *l);

/* The sorter record of a line: this header, then task, event and payload
 * bytes. */
struct ft_rec {
	int64_t pid, tgid;
	uint32_t cpu;
	uint32_t task_len, event_len, payload_len;
};

enum ft_mode {
	FT_START,        /* nothing seen yet */
	FT_TEXT,         /* plain text lines */
	FT_HTML,         /* HTML, outside a trace section */
	FT_HTML_SECTION, /* just inside <script class="trace-data">: kind unknown */
	FT_HTML_TEXT,    /* systrace text inside a section */
	FT_HTML_JSON,    /* a JSON block inside a section, fed to the JSON importer */
	FT_HTML_OTHER,   /* a section we skip (process / cgroup dumps) */
	FT_ZLIB,         /* after "TRACE:\n" + zlib header: buffering until the end */
};

VEC_DEFINE(ft_bytes, char);

struct ftrace_text {
	struct tp *tp;
	struct tp_sorter *sorter;
	enum ft_mode mode;
	bool legacy_js;          /* lines of a JS string literal ("...\n\") */
	struct ft_bytes partial; /* an incomplete last line */
	bool partial_too_long;
	struct ft_bytes zbuf; /* the compressed TRACE: body */
	bool zbuf_too_long;
	uint32_t depth; /* inflated text fed back in: not again */
	/* A JSON block of an HTML trace, handed to the JSON importer. */
	struct tp_importer *json;
	/* parse time */
	struct tp_ftrace model;
	struct tp_args_builder args;
	struct hmap kinds;     /* event name (pool id) -> enum ft_kind (events.c) */
	uint32_t unknown_task; /* "<...>" */
	uint32_t str_cpufreq, str_cpuidle, str_workqueue;
};

/* Framing (framing.c). Does the text start an HTML document? */
bool tp_ft_is_html(const char *p, size_t n);
void tp_ft_feed(struct ftrace_text *ft, const char *p, size_t n);
void tp_ft_feed_end(struct ftrace_text *ft);
/* One complete line (no '\n'): tokenize and push it (line.c). */
void tp_ft_line(struct ftrace_text *ft, const char *p, size_t n);
/* Fill ft->kinds (events.c). */
void tp_ft_kinds_init(struct ftrace_text *ft);
/* The sorter callback (events.c). */
void tp_ft_on_sorted(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx);

#endif /* TB_TP_FTRACE_TEXT_INT_H */
