/*
 * The ftrace text parser as a library, for importers that carry ftrace text
 * inside another format (the JSON importer's "systemTraceEvents" string).
 * The standalone importer (tp_ftrace_text_importer) is built on the same
 * calls.
 */
#ifndef TB_TP_FTRACE_TEXT_H
#define TB_TP_FTRACE_TEXT_H

#include <stddef.h>

struct tp;
struct ftrace_text;

/* A parser writing into tp's tables. It keeps its own sorter, so it can
 * run next to another importer's events. Free with tp_ftrace_text_free. */
struct ftrace_text *tp_ftrace_text_new(struct tp *tp);
/* Feed the next n bytes of text (any split, lines may straddle chunks):
 * tracefs trace / trace_pipe, trace-cmd report, systrace text or HTML, the
 * "TRACE:" atrace dump (zlib-compressed or not). Bad lines are counted in
 * tp's stats; nothing here fails. Runs on the parsing thread. */
void tp_ftrace_text_parse_chunk(struct ftrace_text *ft, const char *p, size_t n);
/* End of the text: parse the last line, then every buffered event in
 * timestamp order into the tables. Call once, before tp's own end of
 * file work (slice finishing) is done. */
void tp_ftrace_text_end(struct ftrace_text *ft);
void tp_ftrace_text_free(struct ftrace_text *ft);

#endif /* TB_TP_FTRACE_TEXT_H */
