/*
 * to_ftrace(id): an `ftrace_event` row as the line the kernel's trace file
 * prints for it, as Perfetto's to_ftrace() writes it (and so systrace
 * conversion, `traceconv systrace`, which is this function over every row):
 *
 *   "        comm-tid   (tgid) [cpu] .... secs.micros: event: args"
 *    <-16 chars-> <-5->  <-5->  3 digits      6 digits
 *
 * comm is the thread's name (`<idle>` for tid 0, `<unknown>` without one;
 * '-' becomes '_'), right-aligned in 16 columns; tgid is `-----` when the
 * thread has no process. print, g2d_ and dpu_tracing_mark_write are written
 * as tracing_mark_write. The args are " key=value" in the arg set's order,
 * except for the events the kernel prints in a format of their own
 * (sched_switch, sched_wakeup, binder, workqueue, irq, softirq, clock,
 * i2c, cgroup_attach_task, the tracing_mark_write family, ...), written as
 * Perfetto writes them. Values: ints in decimal, kernel functions (caller,
 * function) as their symbol or in hex, prev_state as the kernel's letters
 * for the trace's kernel version (metadata system_release; 4.4's layout
 * when unknown, as Perfetto). Differences: gfp_flags is printed as a
 * number, not as the kernel's flag names.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sql_int.h"

struct to_ftrace {
	struct tp_sql *sql;
	bool kver_read;
	int kmajor, kminor; /* 0.0: unknown */
};

/* The arg rows of one set and the line being written. */
struct line {
	const struct tp *tp;
	const struct tp_sql *sql;
	sqlite3_str *s;
	uint32_t set, first, end;
	const uint32_t *sets, *keys;
	struct to_ftrace *tf;
};

/* The row of arg key in the line's set, or UINT32_MAX. */
static uint32_t arg_row(const struct line *l, const char *key)
{
	for (uint32_t r = l->first; r < l->end; r++) {
		if (l->sets[r] != l->set)
			continue;
		if (strcmp(tp_str(l->tp, l->keys[r]), key) == 0)
			return r;
	}
	return UINT32_MAX;
}

static void put_value(const struct line *l, uint32_t row)
{
	struct tp_arg a = tp_args_row(l->tp, row);
	switch (a.type) {
	case TP_ARG_INT:
		sqlite3_str_appendf(l->s, "%lld", (long long)a.v.i);
		break;
	case TP_ARG_UINT:
	case TP_ARG_POINTER:
		sqlite3_str_appendf(l->s, "%llu", (unsigned long long)a.v.i);
		break;
	case TP_ARG_STRING:
	case TP_ARG_JSON:
		sqlite3_str_appendall(l->s, tp_str(l->tp, a.v.s));
		break;
	case TP_ARG_REAL:
		sqlite3_str_appendf(l->s, "%.16g", a.v.d);
		break;
	case TP_ARG_BOOL:
		sqlite3_str_appendall(l->s, a.v.i ? "true" : "false");
		break;
	default:
		sqlite3_str_appendall(l->s, "[NULL]");
	}
}

/* How a value is written. */
enum fmt {
	F_PLAIN,  /* put_value */
	F_KFN,    /* a kernel function: its name, or the address in hex */
	F_HEX,    /* hex digits, no prefix */
	F_U32,    /* an int as unsigned 32 bits */
	F_CPU3,   /* zero-padded to 3 digits */
	F_HEX3,   /* zero-padded hex, 3 digits */
	F_HEX4,   /* zero-padded hex, 4 digits */
	F_CHAR,   /* the value as one character */
	F_BEGIN,  /* B if not 0, else E */
	F_IRQRET, /* handled / unhandled */
	F_SOFTIRQ,
	F_DEV_MAJOR,
	F_DEV_MINOR,
	F_PAGE_OFS, /* index << 12 */
	F_HEXBYTES, /* a string's bytes in hex, '-'-separated, in brackets */
	F_STATE,    /* sched_switch prev_state */
};

static void put_state(const struct line *l, int64_t raw);

static void put_fmt(const struct line *l, uint32_t row, enum fmt f)
{
	struct tp_arg a = tp_args_row(l->tp, row);
	uint64_t u = (uint64_t)a.v.i;
	static const char *const softirqs[] = {"HI",      "TIMER",        "NET_TX",  "NET_RX",
	                                       "BLOCK",   "BLOCK_IOPOLL", "TASKLET", "SCHED",
	                                       "HRTIMER", "RCU"};
	if (a.type == TP_ARG_STRING && f != F_HEXBYTES) {
		put_value(l, row);
		return;
	}
	switch (f) {
	case F_PLAIN:
		put_value(l, row);
		break;
	case F_KFN:
	case F_HEX:
		sqlite3_str_appendf(l->s, "%llx", (unsigned long long)u);
		break;
	case F_U32:
		sqlite3_str_appendf(l->s, "%u", (unsigned)(uint32_t)u);
		break;
	case F_CPU3:
		sqlite3_str_appendf(l->s, "%03lld", (long long)a.v.i);
		break;
	case F_HEX3:
		sqlite3_str_appendf(l->s, "%03llx", (unsigned long long)u);
		break;
	case F_HEX4:
		sqlite3_str_appendf(l->s, "%04llx", (unsigned long long)u);
		break;
	case F_CHAR:
		sqlite3_str_appendchar(l->s, 1, (char)u);
		break;
	case F_BEGIN:
		sqlite3_str_appendchar(l->s, 1, u ? 'B' : 'E');
		break;
	case F_IRQRET:
		sqlite3_str_appendall(l->s, a.v.i ? "handled" : "unhandled");
		break;
	case F_SOFTIRQ:
		if (u < sizeof softirqs / sizeof softirqs[0])
			sqlite3_str_appendall(l->s, softirqs[u]);
		else
			sqlite3_str_appendf(l->s, "%llu", (unsigned long long)u);
		break;
	case F_DEV_MAJOR:
		sqlite3_str_appendf(l->s, "%llu", (unsigned long long)(u >> 20));
		break;
	case F_DEV_MINOR:
		sqlite3_str_appendf(l->s, "%llu", (unsigned long long)(u & ((1u << 20) - 1)));
		break;
	case F_PAGE_OFS:
		sqlite3_str_appendf(l->s, "%llu", (unsigned long long)(u << 12));
		break;
	case F_HEXBYTES: {
		const char *b = a.type == TP_ARG_STRING ? tp_str(l->tp, a.v.s) : "";
		size_t n = strlen(b);
		sqlite3_str_appendall(l->s, " [");
		for (size_t i = 0; i < n && i < 64; i++)
			sqlite3_str_appendf(l->s, "%s%02x", i ? "-" : "", (unsigned char)b[i]);
		sqlite3_str_appendall(l->s, "]");
		break;
	}
	case F_STATE:
		put_state(l, a.v.i);
		break;
	}
}

/* " key=value" of field (as shown_key if not NULL); nothing if absent. */
static void arg(const struct line *l, const char *field, const char *shown_key, enum fmt f)
{
	uint32_t r = arg_row(l, field);
	if (r == UINT32_MAX)
		return;
	sqlite3_str_appendf(l->s, " %s=", shown_key ? shown_key : field);
	put_fmt(l, r, f);
}

/* The value of field alone; nothing if absent. */
static void val(const struct line *l, const char *field, enum fmt f)
{
	uint32_t r = arg_row(l, field);
	if (r != UINT32_MAX)
		put_fmt(l, r, f);
}

static void lit(const struct line *l, const char *s)
{
	sqlite3_str_appendall(l->s, s);
}

/* ---- prev_state ------------------------------------------------------------- */

static void kernel_version(struct to_ftrace *tf)
{
	sqlite3_stmt *st = NULL;
	tf->kver_read = true;
	if (sqlite3_prepare_v2(tf->sql->tp->db,
	                       "SELECT str_value FROM metadata WHERE name = 'system_release'", -1,
	                       &st, NULL) != SQLITE_OK)
		return;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
		const char *v = (const char *)sqlite3_column_text(st, 0);
		char *end;
		tf->kmajor = (int)strtol(v, &end, 10);
		tf->kminor = *end == '.' ? (int)strtol(end + 1, NULL, 10) : 0;
	}
	sqlite3_finalize(st);
}

static bool kver_at_least(const struct to_ftrace *tf, int major, int minor)
{
	int ma = tf->kmajor ? tf->kmajor : 4, mi = tf->kmajor ? tf->kminor : 4;
	return ma > major || (ma == major && mi >= minor);
}

/* The kernel's letters for a sched_switch prev_state: its low bits are the
 * same in every kernel; above 0x40 the layout changed with 4.14 (and 4.8
 * moved the preemption bit). '|' between letters, "R+" when preempted. */
static void put_state(const struct line *l, int64_t raw)
{
	enum {
		S = 1,
		D = 2,
		T = 4,
		t = 8,
		X = 16,
		Z = 32,
		P = 64,
		x = 128,
		K = 256,
		W = 512,
		N = 1024,
		I = 2048,
		PREEMPTED = 4096,
		INVALID = 8192
	};
	struct to_ftrace *tf = l->tf;
	uint32_t s = (uint32_t)raw & 0xffff, f = s & 0x3f;
	if (!tf->kver_read)
		kernel_version(tf);
	if (kver_at_least(tf, 4, 14)) {
		if (s & 0x40)
			f |= P;
		if (s & 0x80)
			f |= I;
		if (s & 0x100)
			f |= PREEMPTED;
		if (s & 0xfe00)
			f = INVALID;
	} else {
		if (s & 0x40)
			f |= x;
		if (s & 0x80)
			f |= K;
		if (s & 0x100)
			f |= W;
		if (s & 0x200)
			f |= P;
		if (s & 0x400)
			f |= N;
		if (f == (D | N))
			f = I;
		if (s & (kver_at_least(tf, 4, 8) ? 0x1000 : 0x800))
			f |= PREEMPTED;
	}
	if (f == INVALID) {
		lit(l, "?");
		return;
	}
	if ((f & ~(uint32_t)PREEMPTED) == 0) {
		lit(l, f & PREEMPTED ? "R+" : "R");
		return;
	}
	static const struct {
		uint32_t bit;
		char c;
	} letters[] = {{S, 'S'}, {D, 'D'}, {T, 'T'}, {t, 't'}, {X, 'X'}, {Z, 'Z'},
	               {P, 'P'}, {x, 'x'}, {K, 'K'}, {W, 'W'}, {N, 'N'}, {I, 'I'}};
	bool first = true;
	for (size_t i = 0; i < sizeof letters / sizeof letters[0]; i++) {
		if (!(f & letters[i].bit))
			continue;
		if (!first)
			sqlite3_str_appendchar(l->s, 1, '|');
		sqlite3_str_appendchar(l->s, 1, letters[i].c);
		first = false;
	}
}

/* ---- the events with a format of their own ---------------------------------------- */

static void i2c_head(const struct line *l)
{
	lit(l, " i2c-");
	val(l, "adapter_nr", F_PLAIN);
	lit(l, " #");
	val(l, "msg_nr", F_PLAIN);
	arg(l, "addr", "a", F_HEX3);
	arg(l, "flags", "f", F_HEX4);
	arg(l, "len", "l", F_PLAIN);
}

/* The " |pid|name|value" style markers of display drivers. */
static void marker(const struct line *l, const char *type, const char *name)
{
	val(l, type, F_CHAR);
	lit(l, "|");
	val(l, "pid", F_PLAIN);
	lit(l, "|");
	val(l, name, F_PLAIN);
	lit(l, "|");
	val(l, "value", F_PLAIN);
}

/* Returns false for an event printed as plain " key=value" pairs. */
static bool special(const struct line *l, const char *ev)
{
	if (strcmp(ev, "sched_switch") == 0) {
		arg(l, "prev_comm", NULL, F_PLAIN);
		arg(l, "prev_pid", NULL, F_PLAIN);
		arg(l, "prev_prio", NULL, F_PLAIN);
		arg(l, "prev_state", NULL, F_STATE);
		lit(l, " ==>");
		arg(l, "next_comm", NULL, F_PLAIN);
		arg(l, "next_pid", NULL, F_PLAIN);
		arg(l, "next_prio", NULL, F_PLAIN);
	} else if (strcmp(ev, "sched_wakeup") == 0) {
		arg(l, "comm", NULL, F_PLAIN);
		arg(l, "pid", NULL, F_PLAIN);
		arg(l, "prio", NULL, F_PLAIN);
		arg(l, "target_cpu", NULL, F_CPU3);
	} else if (strcmp(ev, "clock_set_rate") == 0) {
		lit(l, " ");
		val(l, "name", F_PLAIN);
		arg(l, "state", NULL, F_PLAIN);
		arg(l, "cpu_id", NULL, F_PLAIN);
	} else if (strcmp(ev, "clk_set_rate") == 0) {
		lit(l, " ");
		val(l, "name", F_PLAIN);
		lit(l, " ");
		val(l, "rate", F_PLAIN);
	} else if (strcmp(ev, "clock_enable") == 0 || strcmp(ev, "clock_disable") == 0) {
		val(l, "name", F_PLAIN);
		arg(l, "state", NULL, F_PLAIN);
		arg(l, "cpu_id", NULL, F_PLAIN);
	} else if (strcmp(ev, "binder_transaction") == 0) {
		lit(l, " transaction=");
		val(l, "debug_id", F_U32);
		lit(l, " dest_node=");
		val(l, "target_node", F_U32);
		lit(l, " dest_proc=");
		val(l, "to_proc", F_PLAIN);
		lit(l, " dest_thread=");
		val(l, "to_thread", F_PLAIN);
		lit(l, " reply=");
		val(l, "reply", F_PLAIN);
		lit(l, " flags=0x");
		val(l, "flags", F_HEX);
		lit(l, " code=0x");
		val(l, "code", F_HEX);
	} else if (strcmp(ev, "binder_transaction_alloc_buf") == 0) {
		lit(l, " transaction=");
		val(l, "debug_id", F_U32);
		arg(l, "data_size", NULL, F_PLAIN);
		arg(l, "offsets_size", NULL, F_PLAIN);
	} else if (strcmp(ev, "binder_transaction_received") == 0) {
		lit(l, " transaction=");
		val(l, "debug_id", F_U32);
	} else if (strcmp(ev, "mm_filemap_add_to_page_cache") == 0) {
		lit(l, " dev ");
		val(l, "s_dev", F_DEV_MAJOR);
		lit(l, ":");
		val(l, "s_dev", F_DEV_MINOR);
		lit(l, " ino ");
		val(l, "i_ino", F_HEX);
		lit(l, " page=0000000000000000 pfn=");
		val(l, "pfn", F_PLAIN);
		lit(l, " ofs=");
		val(l, "index", F_PAGE_OFS);
	} else if (strcmp(ev, "print") == 0) {
		uint32_t r = arg_row(l, "buf");
		lit(l, " ");
		if (r != UINT32_MAX) {
			struct tp_arg a = tp_args_row(l->tp, r);
			const char *b = a.type == TP_ARG_STRING ? tp_str(l->tp, a.v.s) : "";
			size_t n = strlen(b);
			if (n && b[n - 1] == '\n')
				n--; /* the kernel's trailing newline */
			sqlite3_str_append(l->s, b, (int)n);
		}
	} else if (strcmp(ev, "sched_blocked_reason") == 0) {
		arg(l, "pid", NULL, F_PLAIN);
		arg(l, "io_wait", "iowait", F_PLAIN);
		arg(l, "caller", NULL, F_KFN);
	} else if (strcmp(ev, "workqueue_activate_work") == 0 ||
	           strcmp(ev, "workqueue_execute_end") == 0) {
		lit(l, " work struct ");
		val(l, "work", F_HEX);
	} else if (strcmp(ev, "workqueue_execute_start") == 0) {
		lit(l, " work struct ");
		val(l, "work", F_HEX);
		lit(l, ": function ");
		val(l, "function", F_KFN);
	} else if (strcmp(ev, "workqueue_queue_work") == 0) {
		lit(l, " work struct=");
		val(l, "work", F_HEX);
		arg(l, "function", NULL, F_KFN);
		arg(l, "workqueue", NULL, F_HEX);
		val(l, "req_cpu", F_PLAIN);
		val(l, "cpu", F_PLAIN);
	} else if (strcmp(ev, "irq_handler_entry") == 0) {
		arg(l, "irq", NULL, F_PLAIN);
		arg(l, "name", NULL, F_PLAIN);
	} else if (strcmp(ev, "irq_handler_exit") == 0) {
		arg(l, "irq", NULL, F_PLAIN);
		lit(l, " ret=");
		val(l, "ret", F_IRQRET);
	} else if (strcmp(ev, "softirq_entry") == 0 || strcmp(ev, "softirq_exit") == 0) {
		arg(l, "vec", NULL, F_PLAIN);
		lit(l, " [action=");
		val(l, "vec", F_SOFTIRQ);
		lit(l, "]");
	} else if (strcmp(ev, "tracing_mark_write") == 0) {
		val(l, "trace_begin", F_BEGIN);
		lit(l, "|");
		val(l, "pid", F_PLAIN);
		lit(l, "|");
		val(l, "trace_name", F_PLAIN);
	} else if (strcmp(ev, "dpu_tracing_mark_write") == 0 ||
	           strcmp(ev, "panel_write_generic") == 0 ||
	           strcmp(ev, "g2d_tracing_mark_write") == 0) {
		marker(l, "type", "name");
	} else if (strcmp(ev, "samsung_tracing_mark_write") == 0) {
		marker(l, "trace_type", "trace_name");
	} else if (strcmp(ev, "cgroup_attach_task") == 0) {
		arg(l, "dst_root", NULL, F_PLAIN);
		arg(l, "dst_id", NULL, F_PLAIN);
		arg(l, "cname", "cgroup", F_PLAIN);
		arg(l, "dst_level", NULL, F_PLAIN);
		arg(l, "dst_path", NULL, F_PLAIN);
		arg(l, "pid", NULL, F_PLAIN);
		arg(l, "comm", NULL, F_PLAIN);
	} else if (strcmp(ev, "hrtimer_expire_entry") == 0) {
		arg(l, "function", NULL, F_KFN);
	} else if (strcmp(ev, "i2c_write") == 0 || strcmp(ev, "i2c_reply") == 0) {
		i2c_head(l);
		val(l, "buf", F_HEXBYTES);
	} else if (strcmp(ev, "i2c_read") == 0) {
		i2c_head(l);
	} else if (strcmp(ev, "i2c_result") == 0) {
		lit(l, " i2c-");
		val(l, "adapter_nr", F_PLAIN);
		arg(l, "nr_msgs", "n", F_PLAIN);
		arg(l, "ret", "ret", F_PLAIN);
	} else {
		return false;
	}
	return true;
}

/* ---- the line --------------------------------------------------------------------- */

static void fn_to_ftrace(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct to_ftrace *tf = sqlite3_user_data(ctx);
	struct tp_sql *sql = tf->sql;
	const struct tp *tp = sql->tp;
	const struct tp_ftrace_event_table *t = &tp->t.ftrace_event;
	(void)argc;
	if (sqlite3_value_type(argv[0]) != SQLITE_INTEGER) {
		sqlite3_result_error(ctx, "Usage: to_ftrace(id)", -1);
		return;
	}
	int64_t id = sqlite3_value_int64(argv[0]);
	uint32_t name_id = 0, cpu = 0;
	if (id >= 0 && id < t->n)
		tp_ftrace_event_computed_name(tp, (uint32_t)id, &name_id);
	const char *ev = name_id ? tp_str(tp, name_id) : NULL;
	if (!ev || strncmp(ev, "chrome_event.", 13) == 0 || strncmp(ev, "track_event.", 12) == 0) {
		char msg[80];
		snprintf(msg, sizeof msg, "to_ftrace: Cannot serialize row id %u", (unsigned)id);
		sqlite3_result_error(ctx, msg, -1);
		return;
	}
	uint32_t row = (uint32_t)id;
	int64_t ts = 0;
	tp_ftrace_event_computed_ts(tp, row, &ts);
	tp_ftrace_event_computed_cpu(tp, row, &cpu);
	if (cpu == TP_NULL_U32)
		cpu = 0;
	uint32_t utid = t->utid[row];
	int64_t tid = 0, tgid = 0;
	const char *comm = "";
	if (utid < tp->t.thread.n) {
		tid = tp->t.thread.tid[utid];
		comm = tp->t.thread.name[utid] ? tp_str(tp, tp->t.thread.name[utid]) : "";
		int64_t upid = tp->t.thread.upid[utid];
		if (upid != INT64_MIN && upid >= 0 && upid < tp->t.process.n)
			tgid = tp->t.process.pid[upid];
	}
	if (tid == 0)
		comm = "<idle>";
	else if (!*comm)
		comm = "<unknown>";

	sqlite3_str *s = sqlite3_str_new(sql->tp->db);
	size_t clen = strlen(comm);
	if (clen < 16)
		sqlite3_str_appendchar(s, (int)(16 - clen), ' ');
	for (size_t i = 0; i < clen; i++)
		sqlite3_str_appendchar(s, 1, comm[i] == '-' ? '_' : comm[i]);
	char num[32];
	int n = snprintf(num, sizeof num, "%lld", (long long)tid);
	sqlite3_str_appendf(s, "-%s", num);
	if (n < 5)
		sqlite3_str_appendchar(s, 5 - n, ' ');
	if (tgid == 0)
		sqlite3_str_appendall(s, " (-----)");
	else
		sqlite3_str_appendf(s, " (%5lld)", (long long)tgid);
	int64_t secs = ts / 1000000000, micros = (ts - secs * 1000000000) / 1000;
	sqlite3_str_appendf(s, " [%03u] .... %lld.%06lld: %s:", cpu, (long long)secs,
	                    (long long)micros,
	                    strcmp(ev, "print") == 0 || strcmp(ev, "g2d_tracing_mark_write") == 0 ||
	                            strcmp(ev, "dpu_tracing_mark_write") == 0
	                        ? "tracing_mark_write"
	                        : ev);

	uint32_t set = t->arg_set_id[row];
	struct line l = {.tp = tp, .sql = sql, .s = s, .set = set, .tf = tf};
	if (set != TP_NULL_U32 && sql->args && sql->args_cols.ok) {
		tp_sql_args_range(sql, set, &l.first, &l.end);
		l.sets = tp_sql_col_data(sql->args, (uint32_t)sql->args_cols.set);
		l.keys = tp_sql_col_data(sql->args, (uint32_t)sql->args_cols.key);
		if (!special(&l, ev)) {
			for (uint32_t r = l.first; r < l.end; r++) {
				if (l.sets[r] != set)
					continue;
				sqlite3_str_appendf(s, " %s=", tp_str(tp, l.keys[r]));
				put_value(&l, r);
			}
		}
	}
	int len = sqlite3_str_length(s);
	char *res = sqlite3_str_finish(s);
	if (!res) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	sqlite3_result_text64(ctx, res, (sqlite3_uint64)len, sqlite3_free, SQLITE_UTF8);
}

int tp_sql_register_to_ftrace(sqlite3 *db, struct tp_sql *sql)
{
	struct to_ftrace *tf = tb_calloc(1, sizeof *tf);
	tf->sql = sql;
	return sqlite3_create_function_v2(db, "to_ftrace", 1, SQLITE_UTF8, tf, fn_to_ftrace, NULL,
	                                  NULL, tb_free);
}
