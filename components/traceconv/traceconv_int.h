/*
 * Private declarations shared by traceconv's files: one function per mode.
 * Each reads its input from in_fd, writes to out (a stdio stream the applet
 * owns) and returns 0, or -1 after printing one error line to stderr.
 */
#ifndef TB_TRACECONV_INT_H
#define TB_TRACECONV_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "base.h"

struct tp;
struct sqlite3_stmt;

/* stackcollapse-perf.pl's options. */
struct traceconv_folded_opts {
	bool pid;    /* --pid: "comm-PID" */
	bool tid;    /* --tid: "comm-PID/TID" */
	bool kernel; /* --kernel: kernel frames get "_[k]" */
	bool jit;    /* --jit: JIT frames (/tmp/perf-PID.map) get "_[j]" */
};

/* ---- load.c: shared by the modes ---- */

/* Sees every chunk of the raw input before the trace processor does. */
typedef void (*traceconv_peek_fn)(void *ctx, const unsigned char *p, size_t n);

/* Read fd to the end into a new trace processor and finish loading it.
 * Returns it (the caller frees it with tp_free), or NULL after printing one
 * error line naming `name`. peek (may be NULL) sees the raw bytes. */
struct tp *traceconv_load(int fd, const char *name, traceconv_peek_fn peek, void *ctx);

/* Run sql on tp's database and call row(ctx, st) for each result row.
 * Returns 0, or -1 after printing the SQLite error. */
int traceconv_query_rows(struct tp *tp, const char *sql,
                         void (*row)(void *ctx, struct sqlite3_stmt *st), void *ctx);

/* The stack_profile tables in memory; ids are the tables' row ids. Strings
 * are ids in `strings` (0 = NULL or empty). */
struct traceconv_mapping {
	int64_t start, end, exact_offset;
	uint32_t name, build_id;
};
struct traceconv_frame {
	uint32_t name;       /* 0 when the frame has no name */
	uint32_t mapping;    /* stack_profile_mapping id */
	uint32_t symbol_set; /* stack_profile_symbol set, UINT32_MAX if none */
	int64_t rel_pc;
};
struct traceconv_callsite {
	int64_t parent; /* -1 at the root */
	uint32_t frame;
};
VEC_DEFINE(traceconv_ids, uint32_t);
struct traceconv_stacks {
	struct strpool strings;
	VEC(struct traceconv_mapping) mappings;
	VEC(struct traceconv_frame) frames;
	VEC(struct traceconv_callsite) callsites;
};

/* Read the mapping, frame and callsite tables of a loaded trace. Returns 0,
 * or -1 after printing an error; release s either way. */
int traceconv_stacks_load(struct traceconv_stacks *s, struct tp *tp);
void traceconv_stacks_release(struct traceconv_stacks *s);
/* The frame ids of callsite's stack into out, leaf first. Returns their
 * number (0 for an unknown callsite). */
size_t traceconv_stack_walk(const struct traceconv_stacks *s, int64_t callsite,
                            struct traceconv_ids *out);
/* The string for id (borrowed from s). */
const char *traceconv_str(const struct traceconv_stacks *s, uint32_t id);

/* The label of a frame as flame graphs merge them: its name (or its
 * symbol's), else "[file]" after its mapping, else its address (into buf).
 * Borrowed from s or buf. The report page's script labels frames alike. */
const char *traceconv_frame_label(const struct traceconv_stacks *s, uint32_t frame, char *buf,
                                  size_t cap);
/* s as a JSON string, '<' escaped so it can sit inside a <script>. */
void traceconv_json_str(FILE *out, const char *s);

/* ---- model.c: the report model ---- */

struct traceconv_model_fn {
	uint32_t label, module; /* strings */
	uint64_t self, inclusive;
};
struct traceconv_model_thread {
	int64_t utid, tid, pid; /* pid -1: unknown */
	uint32_t name, process; /* strings; 0: none */
	uint64_t samples;
};
struct traceconv_model_stack {
	uint32_t thread;
	uint64_t samples;
	uint32_t off, n; /* function ids in fids[off, off + n), root first */
};
struct traceconv_model_cpu {
	int64_t cpu; /* -1: unknown */
	uint64_t samples;
};
struct traceconv_model_count {
	uint32_t key; /* string */
	uint64_t value;
};
struct traceconv_model_unsym {
	uint32_t mapping, reason; /* strings */
	uint64_t samples;
};
/* What `report` shows and `report --json` writes (layout in model.c).
 * Strings are ids in st.strings. Function ids are indexes into fns, by rank. */
struct traceconv_model {
	struct traceconv_stacks st;
	VEC(struct traceconv_model_fn) fns;
	VEC(struct traceconv_model_thread) threads;
	VEC(struct traceconv_model_stack) stacks;
	VEC(uint32_t) fids;
	VEC(struct traceconv_model_cpu) cpus;
	VEC(struct traceconv_model_count) data_loss;
	VEC(struct traceconv_model_unsym) unsymbolized;
	VEC(uint32_t) problems; /* strings */
	uint32_t event;         /* the event type counted */
	uint64_t sample_hz;     /* from the trace's config; 0 unknown */
	uint64_t samples, samples_total;
	uint64_t samples_counted; /* rows of the counted event (build's tally) */
	int64_t duration_ns;
	bool healthy;
};

/* Sees every sample with a callsite, in ts order, while the model is
 * built (report.c collects its timeline from it). event may be NULL. */
typedef void (*traceconv_row_fn)(void *ctx, int64_t ts, int64_t utid, int64_t callsite,
                                 const char *event);
/* Build the model of a loaded trace in one pass over its samples (row, if
 * not NULL, sees each). Returns 0, or -1 after printing an error; release m
 * either way. */
int traceconv_model_build(struct traceconv_model *m, struct tp *tp, traceconv_row_fn row,
                          void *row_ctx);
/* qsort comparator of uint64_t. */
int traceconv_cmp_u64(const void *a, const void *b);
void traceconv_model_release(struct traceconv_model *m);
/* The model as JSON (report --json), and its capture object alone. */
void traceconv_model_json(const struct traceconv_model *m, FILE *out, const char *title);
void traceconv_model_capture_json(const struct traceconv_model *m, FILE *out);
/* The sampling rate of the first linux.perf source in a config's text form
 * (metadata trace_config_pbtxt); 0 when none or by period. */
uint64_t traceconv_config_sample_hz(const char *cfg);

/* ---- jsonread.c: a small JSON reader (inspect reads report models) ---- */

enum {
	TRACECONV_JV_NULL,
	TRACECONV_JV_BOOL,
	TRACECONV_JV_NUM,
	TRACECONV_JV_STR,
	TRACECONV_JV_ARR,
	TRACECONV_JV_OBJ,
};
/* A parsed value; everything lives in the arena given to the parser. */
struct traceconv_jv {
	int type;
	double num;                 /* NUM; BOOL: 0 or 1 */
	char *str;                  /* STR: unescaped, NUL-terminated */
	size_t n;                   /* STR: bytes; ARR/OBJ: items */
	struct traceconv_jv *items; /* ARR/OBJ */
	char **keys;                /* OBJ: items[i]'s key */
};
/* Parse text[0, len) (one value, whitespace around it) into *out. Returns
 * 0, or -EINVAL with the byte offset and what was wrong in err. */
int traceconv_jv_parse(const char *text, size_t len, struct arena *a, struct traceconv_jv *out,
                       struct tb_err *err);
/* An object's member (the first with that key), or NULL. */
const struct traceconv_jv *traceconv_jv_get(const struct traceconv_jv *v, const char *key);
/* A number (or bool), else dflt; a string, else dflt. */
double traceconv_jv_num(const struct traceconv_jv *v, double dflt);
const char *traceconv_jv_text(const struct traceconv_jv *v, const char *dflt);

/* ---- one function per mode ---- */

/* Perfetto's `profile` options (perf samples only). */
struct traceconv_profile_opts {
	uint64_t pid;       /* --pid: only this process (0: all) */
	const char *outdir; /* --output-dir (or the second operand); NULL: a new temp dir */
	const char *heap;   /* --alloc / --java-heap: the heap profile asked for */
};

int traceconv_folded(int in_fd, const char *in_name, FILE *out,
                     const struct traceconv_folded_opts *o);
int traceconv_binary(const char *in_path, const char *in_name, FILE *out);
/* Writes its files itself (profile.N.pid.PID.pb under the output dir). */
int traceconv_profile(int in_fd, const char *in_name, const struct traceconv_profile_opts *o);
struct traceconv_report_opts {
	bool json; /* --json: the report model, not the page */
};
int traceconv_report(int in_fd, const char *in_name, FILE *out,
                     const struct traceconv_report_opts *o);
/* inspect: its own arguments (argv[0] is "inspect"); the exit status. */
int traceconv_inspect_main(int argc, char **argv);
/* The interactive mode over a model in memory, with the commands (lines)
 * given: every answer goes to out. Returns 0, or -1 when the model does not
 * load ("error: ..." written). For tests and fuzzing. */
int traceconv_inspect_text(const char *model, size_t len, const char *commands, FILE *out);
/* symbolize: the ModuleSymbols packets for the trace's unsymbolized frames. */
int traceconv_symbolize(int in_fd, const char *in_name, FILE *out);

/* ---- json, systrace, ctrace, text, decompress_packets, bundle, merge ---- */

/* Options of the text-producing modes. */
struct traceconv_text_opts {
	bool full_sort;    /* --full-sort */
	int keep;          /* --truncate: 1 start, -1 end, 0 everything */
	bool skip_unknown; /* text --skip-unknown */
};

struct traceconv_bundle_opts {
	const char *symbol_paths; /* --symbol-paths, comma-separated */
	bool no_auto_symbol_paths, verbose;
};

/* Where a text mode writes: out directly, or zlib-deflated (ctrace).
 * Writes after an error are dropped; finish reports it. */
struct traceconv_sink {
	FILE *out;
	bool deflate;
	void *z; /* z_stream */
	int error;
};
int traceconv_sink_init(struct traceconv_sink *k, FILE *out, bool compress);
void traceconv_sink_write(struct traceconv_sink *k, const void *p, size_t n);
void traceconv_sink_str(struct traceconv_sink *k, const char *s);
/* Flush (ending the deflate stream). 0, or -1 with k->error (errno). */
int traceconv_sink_finish(struct traceconv_sink *k);
/* s[0, n) escaped as the inside of a JSON string. */
void traceconv_json_escaped(struct traceconv_sink *k, const char *s, size_t n);

/* Load fd into a new trace processor (sorting everything first with
 * full_sort); NULL after printing one line naming `name`. */
struct tp *traceconv_load_cfg(int fd, const char *name, bool full_sort);

/* systrace.c: the ftrace text (ctrace: compressed); and, for json, the
 * "androidProcessDump" and "systemTraceEvents" members. */
int traceconv_systrace(int in_fd, const char *in_name, FILE *out,
                       const struct traceconv_text_opts *o, bool ctrace);
int traceconv_systrace_json(struct tp *tp, struct traceconv_sink *k, int keep);
/* json.c: Chrome JSON, as Perfetto's trace_to_json. */
int traceconv_json(int in_fd, const char *in_name, FILE *out, const struct traceconv_text_opts *o);
/* text.c: the packets in text format; the trace with packets decompressed. */
int traceconv_text(int in_fd, const char *in_name, FILE *out, const struct traceconv_text_opts *o);
int traceconv_decompress_packets(int in_fd, const char *in_name, FILE *out);
/* tar.c: a trace and its symbols as one TAR; traces merged into one TAR. */
int traceconv_bundle(const char *in, const char *out, const struct traceconv_bundle_opts *o);
/* Write OUT: the manifest (bytes[0, len), else the file manifest_path, else
 * none) as perfetto_manifest.json, then the inputs under their base names.
 * 0 or -1 after a message. */
int traceconv_merge_bytes(const char *out, const char *manifest_path, const char *bytes, size_t len,
                          const char *const *inputs, size_t n);
/* `merge` with its options from argv[first] (merge.c); the exit status. */
int traceconv_merge_main(int argc, char **argv, int first);

#endif /* TB_TRACECONV_INT_H */
