/*
 * Private declarations of the trace-cmd trace.dat importer (README.md):
 *
 *   file.c      the container: v6 header and v7 sections, options,
 *               compression (zstd, zlib), the per-cpu data of each buffer
 *   format.c    the text parts: header_page, event `format` files,
 *               kallsyms, printk formats, saved cmdlines
 *   pages.c     ring-buffer pages -> one record at a time per cpu
 *   events.c    one record -> ftrace_event row, args and the model calls
 *   importer.c  sniffing, buffering, the merge of the cpus in ts order
 */
#ifndef TB_TP_TRACE_DAT_INT_H
#define TB_TP_TRACE_DAT_INT_H

#include "../../tp_int.h"
#include "../../model/ftrace.h"
#include "../../tp_args.h"

#include <string.h>

#define TD_MAX_FILE ((uint64_t)64 << 30)   /* bigger inputs are refused */
#define TD_MAX_SECTION ((uint64_t)1 << 30) /* an inflated metadata section */
#define TD_MAX_CHUNK ((uint32_t)64 << 20)  /* an inflated flyrecord chunk */
#define TD_MAX_CPUS 4096u                  /* cpus of one buffer */
#define TD_MAX_FIELDS 128u                 /* fields of one event format */

enum td_field_kind {
	TD_F_INT,    /* an integer of 1, 2, 4 or 8 bytes */
	TD_F_STR,    /* char NAME[N] (N 0: to the end of the record) */
	TD_F_DYNSTR, /* __data_loc char[] (__rel_loc: relative to the field's end) */
	TD_F_SKIP,   /* arrays of anything else */
};

/* How trace-cmd report prints an address field (its print fmt's %ps or
 * %pS): the kallsyms symbol holding it, "name" or "name+0xoff". */
enum td_sym_mode { TD_SYM_NONE, TD_SYM_NAME, TD_SYM_OFF };

struct td_field {
	uint32_t name; /* pool id */
	uint32_t off, size;
	uint8_t kind;
	uint8_t sym; /* enum td_sym_mode */
	bool is_signed, rel;
};

/* Known events (events.c). */
enum td_kind {
	TD_OTHER,
	TD_SCHED_SWITCH, /* SWITCH..WAKEUP_NEW: together, memoized (events.c) */
	TD_SCHED_WAKING,
	TD_SCHED_WAKEUP,
	TD_SCHED_WAKEUP_NEW,
	TD_SCHED_BLOCKED_REASON,
	TD_TASK_NEWTASK,
	TD_TASK_RENAME,
	TD_PROCESS_FORK,
	TD_PROCESS_EXIT,
	TD_CPU_FREQUENCY,
	TD_CPU_IDLE,
	TD_WORKQUEUE_START,
	TD_WORKQUEUE_END,
	TD_PRINT, /* from here on: print-like, one arg buf (events.c) */
	TD_BPUTS,
	TD_BPRINT,
};

/* Up to this many fields a handler reads, by name, resolved once. */
#define TD_SLOTS 8

struct td_event {
	uint32_t id;
	uint32_t name; /* pool id */
	enum td_kind kind;
	uint32_t nfields;
	struct td_field *fields; /* tb_malloc'd, common_* left out */
	int16_t slot[TD_SLOTS];  /* field index of each handler key, -1 none */
	/* Its args are a function of the record's bytes from args_from on
	 * (no __data_loc field, which may point anywhere): see td_args_cache. */
	bool args_cacheable;
	uint32_t args_from;
};

struct td_sym {
	uint64_t addr;
	const char *name; /* into the kallsyms text, not NUL-terminated */
	uint32_t len;
	bool text; /* t, T, w or W: preferred among symbols of one address */
};

VEC_DEFINE(td_bytes, uint8_t);

/* Per-event caches in front of the pool and the maps (events.c): a
 * char[16] field's bytes -> pool id, direct-mapped; a common_pid -> its
 * saved_cmdlines name. Both only remember answers the pool and the map
 * give, so they change no result. */
#define TD_STR_CACHE 1024u
struct td_str_cache {
	uint64_t a, b; /* the string's bytes, zero past its length */
	uint32_t len, id;
};
/* A record's bytes from its event's args_from on -> what they decode to,
 * which only depends on those bytes:
 *  - the arg set they made (has_set), while the args dedup epoch
 *    (tp_args_dedup_epoch) is the same: committing the same args again
 *    would return that set;
 *  - a sched event's fields (has_vals): sched_switch's prev/next pid,
 *    their comms and prev_state as pool ids and next_prio; the wakee pid
 *    and comm of sched_waking/wakeup. */
#define TD_ARGS_CACHE 4096u
#define TD_ARGS_KEY 64u
struct td_args_cache {
	uint64_t hash;
	uint32_t set, epoch;
	uint32_t id, len; /* event id, record length (0: empty) */
	bool has_set, has_vals;
	int32_t prio;
	int64_t pid[2];
	uint32_t str[3];
	uint8_t key[TD_ARGS_KEY];
};
/* An address -> its symbol text's pool id (%ps / %pS args). */
#define TD_SYM_CACHE 1024u
struct td_sym_cache {
	uint64_t addr;
	uint32_t id, mode;
};
#define TD_COMM_CACHE 256u
struct td_comm_cache {
	int64_t pid; /* -1: empty */
	uint32_t comm;
	bool found;
};

/* One cpu of one buffer: its data, read page by page (pages.c). */
struct td_cpu {
	uint32_t cpu;
	const uint8_t *data, *end; /* raw pages, or the compressed chunks */
	bool compressed;
	uint32_t chunks_left;
	struct td_bytes chunk;      /* the inflated chunk being read */
	const uint8_t *pg, *pg_end; /* pages still to read in data or chunk */
	const uint8_t *p, *pe;      /* records left in the current page */
	int64_t page_ts, ts;
	/* The record at hand (has: valid). */
	bool has;
	int64_t ev_ts;
	const uint8_t *ev;
	uint32_t ev_len;
};

enum td_comp { TD_COMP_NONE, TD_COMP_ZSTD, TD_COMP_ZLIB };

struct trace_dat {
	struct tp *tp;
	struct td_bytes in; /* the whole file, as it arrived */
	/* The file file.c reads: in's bytes, or the caller's whole input
	 * (tp_parse_file), read in place. */
	const uint8_t *data;
	size_t len;
	bool borrowed;
	bool too_big;
	/* file.c */
	bool be;
	uint32_t version, long_size, page_size;
	enum td_comp comp;
	void *zstd;           /* ZSTD_DCtx, on first use */
	VEC(uint8_t *) owned; /* inflated sections the parse points into */
	/* header_page */
	uint32_t hp_ts_off, hp_commit_off, hp_commit_size, hp_data_off;
	/* format.c */
	VEC(struct td_event) events;
	struct hmap ev_by_id;    /* id -> index into events */
	VEC(struct td_sym) syms; /* sorted by addr */
	/* The kallsyms text not yet read into syms: read on the first
	 * lookup, as most traces (sched, irq) never look one up. */
	const char *ksyms_text;
	size_t ksyms_len;
	const uint8_t *ksyms_z; /* a v7 compressed kallsyms section, not inflated yet */
	struct hmap printk;     /* addr -> offset | len << 32 into printk_text */
	const char *printk_text;
	struct hmap comms; /* pid -> pool id */
	/* options */
	int64_t ts_offset;
	bool tsc2nsec;
	uint32_t tsc_mult, tsc_shift;
	int64_t tsc_off;
	VEC(struct td_cpu) cpus;
	/* events.c */
	uint32_t *ev_index;            /* record type -> index into events + 1 (0: none) */
	struct td_str_cache *strs;     /* TD_STR_CACHE entries, on first use */
	struct td_comm_cache *comm_at; /* TD_COMM_CACHE entries, on first use */
	struct td_args_cache *args_at; /* TD_ARGS_CACHE entries, on first use */
	struct td_sym_cache *syms_at;  /* TD_SYM_CACHE entries, on first use */
	struct td_bytes msg;           /* a bprint record's formatted text */
	struct tp_ftrace model;
	struct tp_args_builder args;
	uint32_t str_cpufreq, str_cpuidle, str_workqueue, str_buf, str_ip;
};

/* Endian-aware reads of the file's numbers (p must hold enough bytes). */
static inline uint16_t td_r16(const struct trace_dat *td, const uint8_t *p)
{
	return td->be ? tb_ld16be(p) : tb_ld16(p);
}
static inline uint32_t td_r32(const struct trace_dat *td, const uint8_t *p)
{
	return td->be ? tb_ld32be(p) : tb_ld32(p);
}
static inline uint64_t td_r64(const struct trace_dat *td, const uint8_t *p)
{
	return td->be ? tb_ld64be(p) : tb_ld64(p);
}

/* file.c: parse the buffered file; 0, or a negative code after tp_fail. */
int tp_td_file_parse(struct trace_dat *td);
/* Inflate n bytes at p into exactly out_len bytes (tb_malloc'd in *out). */
int tp_td_inflate(struct trace_dat *td, const uint8_t *p, size_t n, size_t out_len, uint8_t **out);
void tp_td_file_release(struct trace_dat *td);

/* format.c */
int tp_td_header_page(struct trace_dat *td, const char *s, size_t n);
/* One event format file of system sys; false if it does not parse. */
bool tp_td_event_format(struct trace_dat *td, const char *s, size_t n);
/* The kallsyms text at s, which stays valid while td lives (the file or
 * td->owned): kept, and read into syms on the first lookup. */
void tp_td_kallsyms(struct trace_dat *td, const char *s, size_t n);
/* file.c: inflate td->ksyms_z and read it (failures counted in stats). */
void tp_td_kallsyms_inflate(struct trace_dat *td);
void tp_td_printk(struct trace_dat *td, const char *s, size_t n);
void tp_td_cmdlines(struct trace_dat *td, const char *s, size_t n);
/* The symbol of addr ("name" exact, else NULL). */
const struct td_sym *tp_td_sym_at(struct trace_dat *td, uint64_t addr);
/* The symbol holding addr as trace-cmd finds it (the last at or below
 * addr, if a higher one follows: the last symbol has no known end), *off
 * the distance; NULL if none. A binary search of the sorted array. */
const struct td_sym *tp_td_sym_find(struct trace_dat *td, uint64_t addr, uint64_t *off);
/* The printk format at addr, or NULL (*len set). */
const char *tp_td_printk_at(const struct trace_dat *td, uint64_t addr, size_t *len);
void tp_td_formats_release(struct trace_dat *td);

/* pages.c: the next record of c (c->has false at its end). */
void tp_td_cpu_next(struct trace_dat *td, struct td_cpu *c);
void tp_td_cpu_release(struct td_cpu *c);

/* events.c */
void tp_td_events_init(struct trace_dat *td);
/* After the formats: each known event's kind and handler fields. */
void tp_td_events_resolve(struct trace_dat *td);
void tp_td_event(struct trace_dat *td, uint32_t cpu, int64_t ts, const uint8_t *p, uint32_t n);

#endif /* TB_TP_TRACE_DAT_INT_H */
