/*
 * Sorted ftrace text records -> the model (model/ftrace.c), the same rows
 * the proto importer writes for the same events.
 *
 * Each line's task names its thread (not "<...>", which ftrace prints when
 * it lost the comm) and a numeric tgid attaches it to its process. The
 * payload is split into fields: a token "key=value" starts one, tokens
 * without '=' extend the current value (comms with spaces, "7778 [ns]"),
 * text before the first field is kept whole, "==>" separates nothing:
 *
 *   prev_comm=a b prev_pid=1 prev_state=R+ ==> next_comm=c next_pid=2
 *   '---------'   '--------' '----------'      '--------' '--------'
 *
 * Every event becomes a `ftrace_event` row with its fields as args (decimal
 * integers as int, the rest as string; leading text as "payload"; a
 * payload with no field at all is counted in ftrace_text_payload_unparsed),
 * as trace-cmd report lists them all; none with --no-ftrace-raw, as in
 * Perfetto. (Perfetto v58.2's text importer gives a raw row to sched_switch
 * only; we keep every event, which `convert systrace` and to_ftrace() give
 * back.) These events also change the model:
 *
 *   sched_switch               sched, thread_state (letters, numbers, and
 *                              trace-cmd's "a:1 [120] S ==> b:2 [120]")
 *   sched_waking               Runnable thread_state, waker = the line's task
 *   sched_wakeup(_new)         the wakee's name ("comm=", or "comm:pid [prio]")
 *   sched_blocked_reason       io_wait, blocked_function
 *   task_newtask, task_rename  thread creation and names
 *   sched_process_fork         the child's name
 *   sched_process_exit         the thread's end
 *   cpu_frequency, cpu_idle    cpufreq / cpuidle cpu counters
 *   cpu_frequency_limits       "Cpu N Min/Max Freq Limit" cpu counters
 *   clock_set_rate/enable/disable, thermal_temperature, cdev_update
 *                              global counters named as Perfetto names them
 *   workqueue_execute_start/end  slices of the thread
 *   print, tracing_mark_write, 0
 *                              atrace text (B/E/I/C/S/F), after any
 *                              "tracing_mark_write: " / "0x...: " / "buf="
 *   bprint, bputs              arg buf, the text after "SYM: "; arg ip,
 *                              SYM (or 0xADDR)
 *   function, funcgraph_entry/exit  ip/parent_ip, func/depth(/calltime/
 *                              rettime), as the kernel's print fmts print
 * A handled event whose fields do not parse is counted in
 * systrace_parse_failure (its ftrace_event row stays).
 */
#include "ftrace_text_int.h"

#include <stdio.h>
#include <string.h>

struct ft_field {
	const char *k, *v;
	size_t kl, vl;
};

struct ft_fields {
	struct ft_field f[FT_MAX_FIELDS];
	size_t n;
	const char *lead; /* text before the first field */
	size_t lead_len;
};

static bool is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '.';
}

/* The length of the "key" of a "key=..." token, 0 if it is not one. */
static size_t key_len(const char *t, size_t n)
{
	if (n == 0 || (t[0] >= '0' && t[0] <= '9') || t[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (t[i] == '=')
			return i;
		if (!is_key_char(t[i]))
			return 0;
	}
	return 0;
}

static void split_fields(const char *p, size_t n, struct ft_fields *fs)
{
	const char *e = p + n;
	fs->n = 0;
	fs->lead = NULL;
	fs->lead_len = 0;
	struct ft_field *cur = NULL;
	while (p < e) {
		while (p < e && (*p == ' ' || *p == '\t'))
			p++;
		if (p == e)
			break;
		const char *t = p;
		while (p < e && *p != ' ' && *p != '\t')
			p++;
		size_t tl = (size_t)(p - t);
		if (tl == 3 && memcmp(t, "==>", 3) == 0) {
			cur = NULL;
			continue;
		}
		size_t kl = key_len(t, tl);
		if (kl && fs->n < FT_MAX_FIELDS) {
			cur = &fs->f[fs->n++];
			cur->k = t;
			cur->kl = kl;
			cur->v = t + kl + 1;
			cur->vl = tl - kl - 1;
		} else if (cur) {
			cur->vl = (size_t)(p - cur->v);
		} else if (fs->n == 0) {
			if (!fs->lead)
				fs->lead = t;
			fs->lead_len = (size_t)(p - fs->lead);
		}
	}
}

static const struct ft_field *field(const struct ft_fields *fs, const char *key)
{
	size_t kl = strlen(key);
	for (size_t i = 0; i < fs->n; i++)
		if (fs->f[i].kl == kl && memcmp(fs->f[i].k, key, kl) == 0)
			return &fs->f[i];
	return NULL;
}

/* A decimal integer (optional sign), the whole of [p, p + n). */
static bool parse_int(const char *p, size_t n, int64_t *v)
{
	bool neg = false;
	if (n && (*p == '-' || *p == '+')) {
		neg = *p == '-';
		p++;
		n--;
	}
	if (n == 0 || n > 19)
		return false;
	uint64_t x;
	if (tb_dec_prefix(p, n, &x) != n || x > (uint64_t)INT64_MAX)
		return false;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return true;
}

static bool fint(const struct ft_fields *fs, const char *key, int64_t *v)
{
	const struct ft_field *f = field(fs, key);
	return f && parse_int(f->v, f->vl, v);
}

/* The number at the start of a value ("0x40406300 BC_TRANSACTION", "0x20"):
 * decimal, or hex with 0x. */
static bool fnum(const struct ft_fields *fs, const char *key, uint64_t *v)
{
	const struct ft_field *f = field(fs, key);
	if (!f)
		return false;
	const char *p = f->v, *e = f->v + f->vl;
	int base = 10;
	if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	}
	uint64_t x = 0;
	const char *d = p;
	for (; p < e && *p != ' '; p++) {
		int c = tb_hex_digit(*p);
		if (c < 0 || c >= base || p - d >= 16)
			return false;
		x = x * (uint64_t)base + (uint64_t)c;
	}
	if (p == d)
		return false;
	*v = x;
	return true;
}

static uint32_t fstr(struct tp *tp, const struct ft_fields *fs, const char *key)
{
	const struct ft_field *f = field(fs, key);
	return f ? tp_intern(tp, f->v, f->vl) : 0;
}

/* ---- trace-cmd's plugin layouts --------------------------------------------- */

/* "comm:pid [prio]" then the rest (state, "success=1 CPU:002"). */
struct ft_task {
	const char *comm, *pid, *prio, *rest;
	size_t comm_len, pid_len, prio_len;
};

static bool task_prio(const char *p, const char *e, struct ft_task *t)
{
	const char *br = NULL;
	for (const char *q = p; q + 1 < e; q++)
		if (q[0] == ' ' && q[1] == '[') {
			br = q;
			break;
		}
	if (!br)
		return false;
	const char *colon = br;
	while (colon > p && colon[-1] != ':')
		colon--;
	int64_t v;
	if (colon == p || !parse_int(colon, (size_t)(br - colon), &v))
		return false;
	const char *close = memchr(br + 2, ']', (size_t)(e - br - 2));
	if (!close || !parse_int(br + 2, (size_t)(close - br - 2), &v))
		return false;
	t->comm = p;
	t->comm_len = (size_t)(colon - 1 - p);
	t->pid = colon;
	t->pid_len = (size_t)(br - colon);
	t->prio = br + 2;
	t->prio_len = (size_t)(close - br - 2);
	t->rest = close + 1;
	while (t->rest < e && *t->rest == ' ')
		t->rest++;
	return true;
}

static void add_field(struct ft_fields *fs, const char *key, const char *v, size_t vl)
{
	if (fs->n == FT_MAX_FIELDS)
		return;
	struct ft_field *f = &fs->f[fs->n++];
	f->k = key;
	f->kl = strlen(key);
	f->v = v;
	f->vl = vl;
}

static void add_task(struct ft_fields *fs, const char *prefix, const struct ft_task *t)
{
	static const char *const keys[2][3] = {
	    {"prev_comm", "prev_pid", "prev_prio"},
	    {"next_comm", "next_pid", "next_prio"},
	};
	const char *const *k = keys[prefix[0] == 'n'];
	add_field(fs, k[0], t->comm, t->comm_len);
	add_field(fs, k[1], t->pid, t->pid_len);
	add_field(fs, k[2], t->prio, t->prio_len);
}

/* "prev:1 [120] S ==> next:2 [120]" as the fields the kernel prints. */
static bool plugin_switch(const char *p, size_t n, struct ft_fields *fs)
{
	const char *e = p + n, *arrow = NULL;
	for (const char *q = p; q + 5 <= e; q++)
		if (memcmp(q, " ==> ", 5) == 0) {
			arrow = q;
			break;
		}
	struct ft_task prev, next;
	if (!arrow || !task_prio(p, arrow, &prev) || !task_prio(arrow + 5, e, &next))
		return false;
	fs->n = 0;
	fs->lead = NULL;
	fs->lead_len = 0;
	add_task(fs, "prev", &prev);
	add_field(fs, "prev_state", prev.rest, (size_t)(arrow - prev.rest));
	add_task(fs, "next", &next);
	return true;
}

/* "comm:pid [prio] [success=1] CPU:002" as comm= pid= prio= target_cpu=. */
static bool plugin_wakeup(const char *p, size_t n, struct ft_fields *fs)
{
	const char *e = p + n;
	struct ft_task t;
	if (!task_prio(p, e, &t))
		return false;
	fs->n = 0;
	fs->lead = NULL;
	fs->lead_len = 0;
	add_field(fs, "comm", t.comm, t.comm_len);
	add_field(fs, "pid", t.pid, t.pid_len);
	add_field(fs, "prio", t.prio, t.prio_len);
	for (const char *q = t.rest; q + 4 <= e; q++)
		if (memcmp(q, "CPU:", 4) == 0) {
			add_field(fs, "target_cpu", q + 4, (size_t)(e - q - 4));
			break;
		}
	return true;
}

/* ---- handlers ------------------------------------------------------------------ */

#define FT_KINDS(X)                                       \
	X(SCHED_SWITCH, "sched_switch")                   \
	X(SCHED_WAKING, "sched_waking")                   \
	X(SCHED_WAKEUP, "sched_wakeup")                   \
	X(SCHED_WAKEUP_NEW, "sched_wakeup_new")           \
	X(SCHED_BLOCKED_REASON, "sched_blocked_reason")   \
	X(TASK_NEWTASK, "task_newtask")                   \
	X(TASK_RENAME, "task_rename")                     \
	X(PROCESS_FORK, "sched_process_fork")             \
	X(PROCESS_EXIT, "sched_process_exit")             \
	X(CPU_FREQUENCY, "cpu_frequency")                 \
	X(CPU_IDLE, "cpu_idle")                           \
	X(CPU_FREQUENCY_LIMITS, "cpu_frequency_limits")   \
	X(CLOCK_SET_RATE, "clock_set_rate")               \
	X(CLOCK_ENABLE, "clock_enable")                   \
	X(CLOCK_DISABLE, "clock_disable")                 \
	X(THERMAL_TEMPERATURE, "thermal_temperature")     \
	X(CDEV_UPDATE, "cdev_update")                     \
	X(WORKQUEUE_START, "workqueue_execute_start")     \
	X(WORKQUEUE_END, "workqueue_execute_end")         \
	X(PRINT, "print")                                 \
	X(TRACING_MARK_WRITE, "tracing_mark_write")       \
	X(ZERO, "0")                                      \
	X(BPRINT, "bprint")                               \
	X(BPUTS, "bputs")                                 \
	X(FUNCTION, "function")                           \
	X(FUNCGRAPH_ENTRY, "funcgraph_entry")             \
	X(FUNCGRAPH_EXIT, "funcgraph_exit")               \
	X(BINDER_TRANSACTION, "binder_transaction")       \
	X(BINDER_RECEIVED, "binder_transaction_received") \
	X(BINDER_COMMAND, "binder_command")               \
	X(BINDER_RETURN, "binder_return")                 \
	X(BINDER_LOCK, "binder_lock")                     \
	X(BINDER_LOCKED, "binder_locked")                 \
	X(BINDER_UNLOCK, "binder_unlock")                 \
	X(BINDER_ALLOC_BUF, "binder_transaction_alloc_buf")

enum ft_kind {
	FT_OTHER,
#define FT_KIND_ENUM_(e, s) FT_##e,
	FT_KINDS(FT_KIND_ENUM_)
#undef FT_KIND_ENUM_
};

void tp_ft_kinds_init(struct ftrace_text *ft)
{
	static const char *const names[] = {NULL,
#define FT_KIND_NAME_(e, s) s,
	                                    FT_KINDS(FT_KIND_NAME_)
#undef FT_KIND_NAME_
	};
	for (uint64_t k = 1; k < sizeof names / sizeof names[0]; k++)
		hmap_put(&ft->kinds, tp_intern_cstr(ft->tp, names[k]), k);
}

static bool starts_with(const char *p, size_t n, const char *s)
{
	size_t k = strlen(s);
	return n >= k && memcmp(p, s, k) == 0;
}

/* A "0xADDR: " prefix (trace-cmd's print / bprint / bputs ip), skipped. */
static size_t ip_prefix(const char *p, size_t n)
{
	if (!starts_with(p, n, "0x"))
		return 0;
	size_t i = 2;
	while (i < n && ((p[i] >= '0' && p[i] <= '9') || (p[i] >= 'a' && p[i] <= 'f')))
		i++;
	if (i < n && p[i] == 's') /* bputs prints "%ps": "0x...s: " */
		i++;
	if (i + 1 < n && p[i] == ':' && p[i + 1] == ' ') {
		i += 2;
		while (i < n && p[i] == ' ')
			i++;
		return i;
	}
	return 0;
}

/* The atrace text of a print-like payload. */
static void print_text(const char **p, size_t *n)
{
	size_t k;
	if (starts_with(*p, *n, "tracing_mark_write: "))
		k = strlen("tracing_mark_write: ");
	else if ((k = ip_prefix(*p, *n)) == 0 && starts_with(*p, *n, "ip=")) {
		const char *b = NULL;
		for (size_t i = 0; i + 4 <= *n; i++)
			if (memcmp(*p + i, "buf=", 4) == 0) {
				b = *p + i;
				break;
			}
		if (b)
			k = (size_t)(b + 4 - *p);
	}
	*p += k;
	*n -= k;
}

static uint32_t key_id(struct tp *tp, const char *k, size_t kl)
{
	return tp_intern(tp, k, kl);
}

static uint32_t fields_args(struct ftrace_text *ft, const struct ft_fields *fs)
{
	struct tp *tp = ft->tp;
	tp_args_begin(&ft->args);
	if (fs->lead_len) {
		uint32_t k = tp_intern_cstr(tp, "payload");
		tp_args_add_string(&ft->args, k, k, tp_intern(tp, fs->lead, fs->lead_len));
	}
	for (size_t i = 0; i < fs->n; i++) {
		const struct ft_field *f = &fs->f[i];
		uint32_t k = key_id(tp, f->k, f->kl);
		int64_t v;
		if (parse_int(f->v, f->vl, &v))
			tp_args_add_int(&ft->args, k, k, v);
		else
			tp_args_add_string(&ft->args, k, k, tp_intern(tp, f->v, f->vl));
	}
	return tp_args_commit(tp, &ft->args);
}

static void named_counter(struct tp *tp, const char *type, const struct ft_field *f,
                          const char *suffix, int64_t ts, double v)
{
	char buf[256];
	size_t sl = strlen(suffix);
	size_t l = f->vl < sizeof buf - sl ? f->vl : sizeof buf - sl - 1;
	memcpy(buf, f->v, l);
	memcpy(buf + l, suffix, sl);
	struct tp_track_key key = {
	    .type = type,
	    .event_type = "counter",
	    .utid = -1,
	    .upid = -1,
	    .cpu = -1,
	    .name = tp_intern(tp, buf, l + sl),
	};
	tp_counter_add(tp, tp_track_get(tp, &key), ts, v, TP_NULL_U32);
}

static bool sched_switch(struct ftrace_text *ft, int64_t ts, uint32_t cpu,
                         const struct ft_fields *fs)
{
	struct tp *tp = ft->tp;
	int64_t prev_pid, next_pid, prev_prio, next_prio, raw;
	const struct ft_field *st = field(fs, "prev_state");
	if (!fint(fs, "prev_pid", &prev_pid) || !fint(fs, "next_pid", &next_pid) ||
	    !fint(fs, "prev_prio", &prev_prio) || !fint(fs, "next_prio", &next_prio) || !st)
		return false;
	uint32_t end = parse_int(st->v, st->vl, &raw) ? tp_ftrace_end_state_raw(tp, raw)
	                                              : tp_ftrace_end_state_text(tp, st->v, st->vl);
	tp_ftrace_sched_switch(tp, &ft->model, ts, cpu, false, prev_pid, fstr(tp, fs, "prev_comm"),
	                       end, next_pid, fstr(tp, fs, "next_comm"), (int32_t)next_prio);
	return true;
}

static bool freq_limits(struct ftrace_text *ft, int64_t ts, const struct ft_fields *fs)
{
	int64_t cpu, lo, hi;
	if (!fint(fs, "cpu_id", &cpu) || cpu < 0 || cpu >= FT_MAX_CPU)
		return false;
	if (!(fint(fs, "min", &lo) || fint(fs, "min_freq", &lo)) ||
	    !(fint(fs, "max", &hi) || fint(fs, "max_freq", &hi)))
		return false;
	tp_ftrace_freq_limits(ft->tp, (uint32_t)cpu, ts, (double)lo, (double)hi);
	return true;
}

static bool binder_transaction(struct ftrace_text *ft, int64_t ts, int64_t pid,
                               const struct ft_fields *fs)
{
	struct tp *tp = ft->tp;
	int64_t id, node, proc, thread, reply;
	uint64_t flags;
	if (!fint(fs, "transaction", &id) || !fint(fs, "dest_node", &node) ||
	    !fint(fs, "dest_proc", &proc) || !fint(fs, "dest_thread", &thread) ||
	    !fint(fs, "reply", &reply) || !fnum(fs, "flags", &flags))
		return false;
	/* As Perfetto: the text's code, marked as Java-layer dependent. */
	const struct ft_field *c = field(fs, "code");
	char buf[128];
	int n = snprintf(buf, sizeof buf, "%.*s Java Layer Dependent",
	                 c ? (int)(c->vl < 64 ? c->vl : 64) : 0, c ? c->v : "");
	tp_binder_transaction(tp, &ft->model, ts, pid, (int32_t)id, (int32_t)node, proc, thread,
	                      reply == 1, (uint32_t)flags, tp_intern(tp, buf, (size_t)n));
	return true;
}

/* The model side of one event; false when its fields do not parse. */
static bool handle(struct ftrace_text *ft, enum ft_kind kind, int64_t ts, uint32_t cpu, int64_t pid,
                   uint32_t utid, const struct ft_fields *fs, const char *pl, size_t pn)
{
	struct tp *tp = ft->tp;
	int64_t a, b;
	switch (kind) {
	case FT_SCHED_SWITCH:
		return sched_switch(ft, ts, cpu, fs);
	case FT_SCHED_WAKING:
	case FT_SCHED_WAKEUP:
	case FT_SCHED_WAKEUP_NEW: {
		if (!fint(fs, "pid", &a))
			return false;
		uint32_t wakee = tp_ftrace_thread_named(tp, a, fstr(tp, fs, "comm"));
		if (kind == FT_SCHED_WAKING)
			tp_ftrace_waking(tp, &ft->model, ts, wakee, utid);
		return true;
	}
	case FT_SCHED_BLOCKED_REASON: {
		if (!fint(fs, "pid", &a))
			return false;
		if (!fint(fs, "iowait", &b))
			b = TP_NULL_I64;
		tp_ftrace_blocked_reason(tp, &ft->model, tp_thread_for_tid(tp, a, -1), b,
		                         fstr(tp, fs, "caller"));
		return true;
	}
	case FT_TASK_NEWTASK:
		if (!fint(fs, "pid", &a))
			return false;
		tp_ftrace_new_task(tp, &ft->model, ts, a, fstr(tp, fs, "comm"), -1, utid);
		return true;
	case FT_TASK_RENAME:
		if (!fint(fs, "pid", &a))
			return false;
		tp_thread_rename(tp, tp_thread_for_tid(tp, a, -1), fstr(tp, fs, "newcomm"),
		                 TP_NAME_FTRACE);
		return true;
	case FT_PROCESS_FORK:
		if (!fint(fs, "child_pid", &a))
			return false;
		tp_ftrace_thread_named(tp, a, fstr(tp, fs, "child_comm"));
		return true;
	case FT_PROCESS_EXIT:
		if (!fint(fs, "pid", &a))
			return false;
		tp_ftrace_process_exit(tp, ts, a);
		return true;
	case FT_CPU_FREQUENCY:
	case FT_CPU_IDLE:
		if (!fint(fs, "state", &a) || !fint(fs, "cpu_id", &b) || b < 0 || b >= FT_MAX_CPU)
			return false;
		tp_ftrace_cpu_counter(tp, kind == FT_CPU_IDLE ? "cpu_idle" : "cpu_frequency",
		                      kind == FT_CPU_IDLE ? ft->str_cpuidle : ft->str_cpufreq,
		                      (uint32_t)b, ts, (double)(uint32_t)a);
		return true;
	case FT_CPU_FREQUENCY_LIMITS:
		return freq_limits(ft, ts, fs);
	case FT_CLOCK_SET_RATE:
	case FT_CLOCK_ENABLE:
	case FT_CLOCK_DISABLE: {
		/* "NAME state=N cpu_id=N": the name is the leading text. */
		struct ft_field name = {.v = fs->lead, .vl = fs->lead_len};
		if (!fs->lead_len || !fint(fs, "state", &a))
			return false;
		if (kind == FT_CLOCK_SET_RATE)
			named_counter(tp, "clock_frequency", &name, " Frequency", ts, (double)a);
		else
			named_counter(tp, "clock_state", &name, " State", ts, (double)a);
		return true;
	}
	case FT_THERMAL_TEMPERATURE: {
		const struct ft_field *z = field(fs, "thermal_zone");
		if (!z || !fint(fs, "temp", &a))
			return false;
		named_counter(tp, "thermal_temperature", z, " Temperature", ts, (double)a);
		return true;
	}
	case FT_CDEV_UPDATE: {
		const struct ft_field *t = field(fs, "type");
		if (!t || !fint(fs, "target", &a))
			return false;
		named_counter(tp, "cooling_device_counter", t, " Cooling Device", ts, (double)a);
		return true;
	}
	case FT_WORKQUEUE_START: {
		const char *f = NULL;
		for (size_t i = 0; i + 9 <= pn; i++)
			if (memcmp(pl + i, "function ", 9) == 0) {
				f = pl + i + 9;
				break;
			}
		if (!f)
			return false;
		tp_slice_begin(tp, tp_track_for_thread(tp, utid), ts, ft->str_workqueue,
		               tp_intern(tp, f, (size_t)(pl + pn - f)), TP_NULL_U32);
		return true;
	}
	case FT_WORKQUEUE_END:
		tp_slice_end(tp, tp_track_for_thread(tp, utid), ts, 0, 0, TP_NULL_U32);
		return true;
	case FT_BINDER_TRANSACTION:
		return binder_transaction(ft, ts, pid, fs);
	case FT_BINDER_RECEIVED:
		if (!fint(fs, "transaction", &a))
			return false;
		tp_binder_transaction_received(tp, &ft->model, ts, pid, (int32_t)a);
		return true;
	case FT_BINDER_COMMAND:
	case FT_BINDER_RETURN: {
		uint64_t cmd;
		if (!fnum(fs, "cmd", &cmd))
			return false;
		if (kind == FT_BINDER_COMMAND)
			tp_binder_command(tp, &ft->model, pid, (uint32_t)cmd);
		else
			tp_binder_return(tp, &ft->model, ts, pid, (uint32_t)cmd);
		return true;
	}
	case FT_BINDER_LOCK:
	case FT_BINDER_LOCKED:
	case FT_BINDER_UNLOCK:
		tp_binder_lock(tp, &ft->model, ts, pid, kind - FT_BINDER_LOCK);
		return true;
	case FT_BINDER_ALLOC_BUF:
		if (!fint(fs, "data_size", &a) || !fint(fs, "offsets_size", &b))
			return false;
		tp_binder_alloc_buf(tp, &ft->model, ts, pid, (uint64_t)a, (uint64_t)b);
		return true;
	default:
		return true;
	}
}

/* [p, p + n) as a hex number of 1 to 16 digits, no 0x. */
static bool hex_num(const char *p, size_t n, uint64_t *v)
{
	if (n == 0 || n > 16)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		int d = tb_hex_digit(p[i]);
		if (d < 0)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	*v = x;
	return true;
}

/* The text between a and b in [*p, e) ("" for a: from *p; NULL b: to the
 * end), *p moved past b; false if a or b is missing. */
static bool cut(const char **p, const char *e, const char *a, const char *b, const char **v,
                size_t *vl)
{
	const char *q = *p;
	size_t al = strlen(a);
	if ((size_t)(e - q) < al || memcmp(q, a, al) != 0)
		return false;
	q += al;
	if (!b) {
		*v = q;
		*vl = (size_t)(e - q);
		*p = e;
		return true;
	}
	size_t bl = strlen(b);
	for (const char *r = q; r + bl <= e; r++)
		if (memcmp(r, b, bl) == 0) {
			*v = q;
			*vl = (size_t)(r - q);
			*p = r + bl;
			return true;
		}
	return false;
}

/* The fields of function / funcgraph lines, as the kernel's print fmts
 * print them (trace-cmd report -N):
 *   function         " %ps <-- %ps"               ip, parent_ip
 *   funcgraph_entry  "--> %ps (%u)"               func, depth
 *   funcgraph_exit   "<-- %ps (%u) (start: %llx  end: %llx) over: %u"
 *                    func, depth, calltime, rettime ("over" prints the
 *                    depth again, not the overrun: left out)
 * The symbols as strings, the numbers as ints. false if it does not
 * match. */
static bool func_args(struct ftrace_text *ft, enum ft_kind kind, const char *p, size_t n,
                      uint32_t *set)
{
	struct tp *tp = ft->tp;
	const char *e = p + n, *a, *b, *c, *d;
	size_t al, bl, cl, dl;
	int64_t depth;
	uint64_t x = 0, y = 0;
	tp_args_begin(&ft->args);
	if (kind == FT_FUNCTION) {
		if (!cut(&p, e, "", " <-- ", &a, &al) || !cut(&p, e, "", NULL, &b, &bl) || !al ||
		    !bl)
			return false;
		uint32_t k1 = tp_intern_cstr(tp, "ip"), k2 = tp_intern_cstr(tp, "parent_ip");
		tp_args_add_string(&ft->args, k1, k1, tp_intern(tp, a, al));
		tp_args_add_string(&ft->args, k2, k2, tp_intern(tp, b, bl));
		*set = tp_args_commit(tp, &ft->args);
		return true;
	}
	bool entry = kind == FT_FUNCGRAPH_ENTRY;
	if (!cut(&p, e, entry ? "--> " : "<-- ", " (", &a, &al) || !cut(&p, e, "", ")", &b, &bl) ||
	    !parse_int(b, bl, &depth))
		return false;
	if (!entry) {
		if (!cut(&p, e, " (start: ", "  end: ", &c, &cl) || !cut(&p, e, "", ")", &d, &dl) ||
		    !hex_num(c, cl, &x) || !hex_num(d, dl, &y))
			return false;
	}
	uint32_t kf = tp_intern_cstr(tp, "func"), kd = tp_intern_cstr(tp, "depth");
	if (!entry) {
		uint32_t kc = tp_intern_cstr(tp, "calltime");
		tp_args_add_int(&ft->args, kc, kc, (int64_t)x);
	}
	tp_args_add_int(&ft->args, kd, kd, depth);
	tp_args_add_string(&ft->args, kf, kf, tp_intern(tp, a, al));
	if (!entry) {
		uint32_t kr = tp_intern_cstr(tp, "rettime");
		tp_args_add_int(&ft->args, kr, kr, (int64_t)y);
	}
	*set = tp_args_commit(tp, &ft->args);
	return true;
}

void tp_ft_on_sorted(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx)
{
	struct ftrace_text *ft = ctx;
	struct ft_rec r;
	TB_CHECK(len >= sizeof r);
	memcpy(&r, payload, sizeof r);
	const char *task = (const char *)payload + sizeof r;
	const char *event = task + r.task_len;
	const char *pl = event + r.event_len;
	size_t pn = r.payload_len;

	uint32_t utid = tp_thread_for_tid(tp, r.pid, r.tgid);
	uint32_t task_id = tp_intern(tp, task, r.task_len);
	if (task_id && task_id != ft->unknown_task && r.pid != 0)
		tp_thread_set_name_prio(tp, utid, task_id, TP_NAME_FTRACE);
	uint32_t name = tp_intern(tp, event, r.event_len);
	uint64_t k = FT_OTHER;
	hmap_get(&ft->kinds, name, &k);
	enum ft_kind kind = (enum ft_kind)k;

	if (kind == FT_PRINT || kind == FT_TRACING_MARK_WRITE || kind == FT_ZERO) {
		print_text(&pl, &pn);
		if (!tp->cfg.no_ftrace_raw) {
			uint32_t key = tp_intern_cstr(tp, "buf");
			tp_args_begin(&ft->args);
			tp_args_add_string(&ft->args, key, key, tp_intern(tp, pl, pn));
			tp_ftrace_raw(tp, &ft->model, ts, r.cpu, name, utid, TP_NULL_U32,
			              tp_args_commit(tp, &ft->args));
		}
		tp_ftrace_print(tp, &ft->model, ts, r.pid, pl, pn);
		return;
	}
	if (kind == FT_BPRINT || kind == FT_BPUTS) {
		/* "%ps: TEXT": the text (the symbol, or 0xADDR, has no ": "), one
		 * arg buf, as print has. */
		size_t skip = ip_prefix(pl, pn), il = 0;
		for (size_t i = 0; !skip && i + 1 < pn; i++)
			if (pl[i] == ':' && pl[i + 1] == ' ')
				skip = i + 2;
		/* The caller, arg ip: the symbol, or 0xADDR (bputs' "0x...s"
		 * without its s). */
		while (il < skip && pl[il] != ':')
			il++;
		if (il > 2 && pl[0] == '0' && pl[1] == 'x' && pl[il - 1] == 's')
			il--;
		const char *ip = pl;
		pl += skip;
		pn -= skip;
		if (!tp->cfg.no_ftrace_raw) {
			uint32_t key = tp_intern_cstr(tp, "buf");
			tp_args_begin(&ft->args);
			tp_args_add_string(&ft->args, key, key, tp_intern(tp, pl, pn));
			if (il) {
				key = tp_intern_cstr(tp, "ip");
				tp_args_add_string(&ft->args, key, key, tp_intern(tp, ip, il));
			}
			tp_ftrace_raw(tp, &ft->model, ts, r.cpu, name, utid, TP_NULL_U32,
			              tp_args_commit(tp, &ft->args));
		}
		return;
	}
	uint32_t fset;
	if (kind == FT_FUNCTION || kind == FT_FUNCGRAPH_ENTRY || kind == FT_FUNCGRAPH_EXIT) {
		while (pn && *pl == ' ') {
			pl++;
			pn--;
		}
		if (tp->cfg.no_ftrace_raw)
			return;
		if (func_args(ft, kind, pl, pn, &fset)) {
			tp_ftrace_raw(tp, &ft->model, ts, r.cpu, name, utid, TP_NULL_U32, fset);
			return;
		}
	}
	struct ft_fields fs;
	split_fields(pl, pn, &fs);
	if (kind == FT_SCHED_SWITCH && !field(&fs, "prev_pid"))
		plugin_switch(pl, pn, &fs);
	else if ((kind == FT_SCHED_WAKEUP || kind == FT_SCHED_WAKING ||
	          kind == FT_SCHED_WAKEUP_NEW) &&
	         !field(&fs, "pid"))
		plugin_wakeup(pl, pn, &fs);
	if (fs.n == 0 && pn)
		tp_stat_inc(tp, TP_STAT_ftrace_text_payload_unparsed);
	if (!tp->cfg.no_ftrace_raw)
		tp_ftrace_raw(tp, &ft->model, ts, r.cpu, name, utid, TP_NULL_U32,
		              fields_args(ft, &fs));
	if (!handle(ft, kind, ts, r.cpu, r.pid, utid, &fs, pl, pn))
		tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
}
