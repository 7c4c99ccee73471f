/*
 * One ring-buffer record -> the tables, as the ftrace text importer
 * (importers/ftrace_text/events.c) and the proto ftrace path write them:
 * every event is a `ftrace_event` row (utid of common_pid, its cpu,
 * common_flags) whose args are the format's fields (integers as int, char
 * arrays and __data_loc strings as string; common_* and arrays of other
 * types left out), and these change the model (model/ftrace.c):
 *
 *   sched_switch               sched, thread_state (prev_state as the
 *                              kernel's bits, as the proto path)
 *   sched_waking               Runnable thread_state, waker = the record's
 *   sched_wakeup(_new)         the wakee's name
 *   sched_blocked_reason       io_wait, blocked_function (kallsyms)
 *   task_newtask               a thread or process (clone_flags)
 *   task_rename, sched_process_fork, sched_process_exit
 *   cpu_frequency, cpu_idle    cpufreq / cpuidle cpu counters
 *   workqueue_execute_start/end  slices of the thread, named after the
 *                              function's symbol
 *   print                      atrace text (one arg, buf)
 *   bputs                      its string from printk_formats (arg buf),
 *                              its caller symbolized (arg ip)
 *
 * Each record's common_pid names its thread from saved_cmdlines, as
 * trace-cmd report prints it.
 */
#include "trace_dat_int.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	enum td_kind kind;
	const char *slots[TD_SLOTS];
} kinds[] = {
    {"sched_switch",
     TD_SCHED_SWITCH,
     {"prev_comm", "prev_pid", "prev_prio", "prev_state", "next_comm", "next_pid", "next_prio"}},
    {"sched_waking", TD_SCHED_WAKING, {"comm", "pid"}},
    {"sched_wakeup", TD_SCHED_WAKEUP, {"comm", "pid"}},
    {"sched_wakeup_new", TD_SCHED_WAKEUP_NEW, {"comm", "pid"}},
    {"sched_blocked_reason", TD_SCHED_BLOCKED_REASON, {"pid", "caller", "io_wait"}},
    {"task_newtask", TD_TASK_NEWTASK, {"pid", "comm", "clone_flags"}},
    {"task_rename", TD_TASK_RENAME, {"pid", "newcomm"}},
    {"sched_process_fork", TD_PROCESS_FORK, {"child_pid", "child_comm"}},
    {"sched_process_exit", TD_PROCESS_EXIT, {"pid"}},
    {"cpu_frequency", TD_CPU_FREQUENCY, {"state", "cpu_id"}},
    {"cpu_idle", TD_CPU_IDLE, {"state", "cpu_id"}},
    {"workqueue_execute_start", TD_WORKQUEUE_START, {"function"}},
    {"workqueue_execute_end", TD_WORKQUEUE_END, {NULL}},
    {"print", TD_PRINT, {"buf"}},
    {"bputs", TD_BPUTS, {"str", "ip"}},
    {"bprint", TD_BPRINT, {"fmt", "buf", "ip"}},
};

void tp_td_events_init(struct trace_dat *td)
{
	struct tp *tp = td->tp;
	tp_ftrace_init(tp, &td->model);
	td->str_cpufreq = tp_intern_cstr(tp, "cpufreq");
	td->str_cpuidle = tp_intern_cstr(tp, "cpuidle");
	td->str_workqueue = tp_intern_cstr(tp, "workqueue");
	td->str_buf = tp_intern_cstr(tp, "buf");
	td->str_ip = tp_intern_cstr(tp, "ip");
}

/* Give each known event its kind and the field index of each slot. */
void tp_td_events_resolve(struct trace_dat *td)
{
	/* Record types are 16 bits: one array lookup per record instead of a
	 * hash probe. */
	tb_free(td->ev_index);
	td->ev_index = tb_calloc(1u << 16, sizeof *td->ev_index);
	for (size_t i = 0; i < td->events.len; i++) {
		uint64_t idx;
		uint32_t id = td->events.data[i].id;
		if (id < (1u << 16) && hmap_get(&td->ev_by_id, id, &idx) && idx == i)
			td->ev_index[id] = (uint32_t)i + 1;
	}
	for (size_t i = 0; i < td->events.len; i++) {
		struct td_event *ev = &td->events.data[i];
		for (int s = 0; s < TD_SLOTS; s++)
			ev->slot[s] = -1;
		ev->args_cacheable = true;
		ev->args_from = 8;
		for (uint32_t f = 0; f < ev->nfields; f++) {
			if (ev->fields[f].kind == TD_F_DYNSTR)
				ev->args_cacheable = false;
			if (ev->fields[f].off < ev->args_from)
				ev->args_from = ev->fields[f].off;
		}
		const char *name = tp_str(td->tp, ev->name);
		for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
			if (strcmp(kinds[k].name, name) != 0)
				continue;
			ev->kind = kinds[k].kind;
			for (int s = 0; s < TD_SLOTS && kinds[k].slots[s]; s++) {
				uint32_t key = tp_intern_cstr(td->tp, kinds[k].slots[s]);
				for (uint32_t f = 0; f < ev->nfields; f++)
					if (ev->fields[f].name == key)
						ev->slot[s] = (int16_t)f;
			}
			break;
		}
	}
}

/* Inlined: sched_switch alone reads four of these a record. */
__attribute__((always_inline)) static inline bool read_int(const struct trace_dat *td,
                                                           const struct td_field *f,
                                                           const uint8_t *p, uint32_t n, int64_t *v)
{
	if (f->kind != TD_F_INT || f->off > n || f->size > n - f->off)
		return false;
	const uint8_t *q = p + f->off;
	switch (f->size) {
	case 1:
		*v = f->is_signed ? (int8_t)q[0] : q[0];
		return true;
	case 2: {
		uint16_t x = td_r16(td, q);
		*v = f->is_signed ? (int16_t)x : x;
		return true;
	}
	case 4: {
		uint32_t x = td_r32(td, q);
		*v = f->is_signed ? (int64_t)(int32_t)x : (int64_t)x;
		return true;
	}
	default:
		*v = (int64_t)td_r64(td, q);
		return true;
	}
}

static const char *read_str(const struct trace_dat *td, const struct td_field *f, const uint8_t *p,
                            uint32_t n, size_t *len)
{
	if (f->off > n || f->size > n - f->off)
		return NULL;
	const uint8_t *s;
	size_t max;
	if (f->kind == TD_F_STR) {
		s = p + f->off;
		max = f->size ? f->size : n - f->off;
	} else if (f->kind == TD_F_DYNSTR) {
		uint32_t loc = td_r32(td, p + f->off);
		size_t off = loc & 0xffff, l = loc >> 16;
		if (f->rel)
			off += f->off + f->size;
		if (off > n || l > n - off)
			return NULL;
		s = p + off;
		max = l;
	} else {
		return NULL;
	}
	const uint8_t *z = memchr(s, 0, max);
	*len = z ? (size_t)(z - s) : max;
	return (const char *)s;
}

/* The pool id of 16 NUL-padded bytes at s (a comm: char[16]), through
 * td->strs: two loads, the length from the first zero byte, one compare. */
__attribute__((always_inline)) static inline uint32_t str16_id(struct trace_dat *td,
                                                               const uint8_t *s)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t a = tb_ld64(s), b = tb_ld64(s + 8);
	uint64_t za = (a - ones) & ~a & highs, zb = (b - ones) & ~b & highs;
	uint32_t len;
	if (za) {
		len = (uint32_t)__builtin_ctzll(za) / 8;
		a &= len ? ~0ull >> (64 - 8 * len) : 0;
		b = 0;
	} else if (zb) {
		len = 8 + (uint32_t)__builtin_ctzll(zb) / 8;
		b &= len > 8 ? ~0ull >> (64 - 8 * (len - 8)) : 0;
	} else {
		len = 16;
	}
	if (!td->strs)
		td->strs = tb_calloc(TD_STR_CACHE, sizeof *td->strs);
	struct td_str_cache *e =
	    &td->strs[tb_hash_u64(a ^ (b * 0x9e3779b97f4a7c15ull) ^ len) & (TD_STR_CACHE - 1)];
	if (e->a == a && e->b == b && e->len == len && e->id)
		return e->id;
	uint32_t id = tp_intern(td->tp, (const char *)s, len);
	*e = (struct td_str_cache){a, b, len, id};
	return id;
}

/* A string field's pool id (0: empty or unreadable; *ok false: unreadable). */
static uint32_t field_str_id(struct trace_dat *td, const struct td_field *f, const uint8_t *p,
                             uint32_t n, bool *ok)
{
	if (f->kind == TD_F_STR && f->size == 16 && f->off <= n && 16 <= n - f->off) {
		*ok = true;
		return str16_id(td, p + f->off);
	}
	size_t l;
	const char *v = read_str(td, f, p, n, &l);
	*ok = v != NULL;
	return v ? tp_intern(td->tp, v, l) : 0;
}

static bool slot_int(const struct trace_dat *td, const struct td_event *ev, int s, const uint8_t *p,
                     uint32_t n, int64_t *v)
{
	return ev->slot[s] >= 0 && read_int(td, &ev->fields[ev->slot[s]], p, n, v);
}

static uint32_t slot_str(struct trace_dat *td, const struct td_event *ev, int s, const uint8_t *p,
                         uint32_t n)
{
	bool ok;
	return ev->slot[s] >= 0 ? field_str_id(td, &ev->fields[ev->slot[s]], p, n, &ok) : 0;
}

/* The symbol name of addr (pool id), the address in hex if none. */
static uint32_t sym_name(struct trace_dat *td, uint64_t addr)
{
	const struct td_sym *s = tp_td_sym_at(td, addr);
	if (s)
		return tp_intern(td->tp, s->name, s->len);
	char buf[24];
	int k = snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)addr);
	return tp_intern(td->tp, buf, (size_t)k);
}

/* addr as trace-cmd report prints a %ps (mode TD_SYM_NAME) or %pS
 * (TD_SYM_OFF): the symbol holding it, "name" or "name+0xoff"; "0xaddr"
 * when none does. Returns the length written to buf (at most cap - 1). */
static size_t sym_text(struct trace_dat *td, uint64_t addr, int mode, char *buf, size_t cap)
{
	uint64_t off;
	const struct td_sym *s = tp_td_sym_find(td, addr, &off);
	int k;
	if (!s)
		k = snprintf(buf, cap, "0x%llx", (unsigned long long)addr);
	else if (mode == TD_SYM_NAME)
		k = snprintf(buf, cap, "%.*s", (int)s->len, s->name);
	else
		k = snprintf(buf, cap, "%.*s+0x%llx", (int)s->len, s->name,
		             (unsigned long long)off);
	return k < 0 ? 0 : (size_t)k < cap ? (size_t)k : cap - 1;
}

/* sym_text's pool id, through td->syms_at (direct-mapped by address:
 * timer and workqueue functions repeat). */
static uint32_t sym_id(struct trace_dat *td, uint64_t addr, int mode)
{
	if (!td->syms_at)
		td->syms_at = tb_calloc(TD_SYM_CACHE, sizeof *td->syms_at);
	struct td_sym_cache *e =
	    &td->syms_at[tb_hash_u64(addr * 2 + (uint64_t)(mode == TD_SYM_OFF)) &
	                 (TD_SYM_CACHE - 1)];
	if (e->id && e->addr == addr && e->mode == (uint32_t)mode)
		return e->id;
	char buf[640];
	uint32_t id = tp_intern(td->tp, buf, sym_text(td, addr, mode, buf, sizeof buf));
	*e = (struct td_sym_cache){addr, id, (uint32_t)mode};
	return id;
}

static uint32_t build_args(struct trace_dat *td, const struct td_event *ev, const uint8_t *p,
                           uint32_t n)
{
	tp_args_begin(&td->args);
	for (uint32_t i = 0; i < ev->nfields; i++) {
		const struct td_field *f = &ev->fields[i];
		int64_t v;
		bool ok;
		if (f->kind == TD_F_INT && f->sym != TD_SYM_NONE) {
			if (read_int(td, f, p, n, &v))
				tp_args_add_string(&td->args, f->name, f->name,
				                   sym_id(td, (uint64_t)v, f->sym));
		} else if (f->kind == TD_F_INT) {
			if (read_int(td, f, p, n, &v))
				tp_args_add_int(&td->args, f->name, f->name, v);
		} else {
			uint32_t id = field_str_id(td, f, p, n, &ok);
			if (ok)
				tp_args_add_string(&td->args, f->name, f->name, id);
		}
	}
	return tp_args_commit(td->tp, &td->args);
}

/* a[0, n) == b[0, n) for short keys, 8 bytes a step (libc's memcmp may go
 * a byte at a time). */
static bool key_eq(const uint8_t *a, const uint8_t *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		if (tb_ld64(a + i) != tb_ld64(b + i))
			return false;
	for (; i < n; i++)
		if (a[i] != b[i])
			return false;
	return true;
}

/* The td->args_at entry of a record (see td_args_cache), NULL when its
 * event's args may depend on bytes past the key (a __data_loc field) or
 * the record is longer than the key. A new entry keys the record and
 * holds nothing yet. */
static struct td_args_cache *memo_of(struct trace_dat *td, const struct td_event *ev,
                                     const uint8_t *p, uint32_t n)
{
	uint32_t from = ev->args_from;
	if (!ev->args_cacheable || n < from || n - from > TD_ARGS_KEY)
		return NULL;
	if (!td->args_at)
		td->args_at = tb_calloc(TD_ARGS_CACHE, sizeof *td->args_at);
	uint64_t h = tb_hash_bytes(p + from, n - from, (uint64_t)ev->id << 32 | n);
	struct td_args_cache *e = &td->args_at[h & (TD_ARGS_CACHE - 1)];
	if (e->hash == h && e->len == n && e->id == ev->id && key_eq(e->key, p + from, n - from))
		return e;
	e->hash = h;
	e->id = ev->id;
	e->len = n;
	e->has_set = false;
	e->has_vals = false;
	memcpy(e->key, p + from, n - from);
	return e;
}

/* The arg set of a record's fields, through its memo entry e (may be
 * NULL). */
static uint32_t generic_args(struct trace_dat *td, const struct td_event *ev, const uint8_t *p,
                             uint32_t n, struct td_args_cache *e)
{
	if (e && e->has_set && e->epoch == tp_args_dedup_epoch(td->tp))
		return e->set;
	uint32_t set = build_args(td, ev, p, n);
	if (e) {
		/* After the commit, which may have emptied the dedup map. */
		e->set = set;
		e->epoch = tp_args_dedup_epoch(td->tp);
		e->has_set = true;
	}
	return set;
}

#define TD_MSG_MAX 65536u /* a formatted bprint message is cut here */

static void msg_add(struct td_bytes *m, const char *s, size_t n)
{
	if (n > TD_MSG_MAX - m->len)
		n = TD_MSG_MAX - m->len;
	vec_reserve(m, n);
	memcpy(m->data + m->len, s, n);
	m->len += n;
}

/* The next size-byte number of a bprint buf at *b: numbers of 4 bytes or
 * more are 4-byte aligned, shorter ones to their size (the kernel's
 * vbin_printf); false when it does not fit before e. */
static bool bin_num(const struct trace_dat *td, const uint8_t *base, const uint8_t **b,
                    const uint8_t *e, uint32_t size, bool sgn, uint64_t *v)
{
	if (size != 1 && size != 2 && size != 4 && size != 8)
		return false;
	size_t al = size >= 4 ? 4 : size;
	size_t at = (size_t)(*b - base);
	at = (at + al - 1) / al * al;
	if (at > (size_t)(e - base) || size > (size_t)(e - base) - at)
		return false;
	const uint8_t *q = base + at;
	switch (size) {
	case 1:
		*v = sgn ? (uint64_t)(int64_t)(int8_t)q[0] : q[0];
		break;
	case 2:
		*v = sgn ? (uint64_t)(int64_t)(int16_t)td_r16(td, q) : td_r16(td, q);
		break;
	case 4:
		*v = sgn ? (uint64_t)(int64_t)(int32_t)td_r32(td, q) : td_r32(td, q);
		break;
	default:
		*v = td_r64(td, q);
		break;
	}
	*b = q + size;
	return true;
}

/* The text of a bprint record, as trace-cmd report prints it, into out:
 * its printk format f (escapes as the file keeps them: "\n") with the
 * arguments the kernel's vbin_printf packed into [b, e): integers by their
 * length modifier (long: the file's long size), strings inline and
 * NUL-terminated, %ps/%pS and the other address pointers as numbers
 * (symbolized), other %p<x> as the text the kernel made. false when the
 * arguments do not fit (malformed). */
static bool bprint_text(struct trace_dat *td, const char *f, size_t fl, const uint8_t *b,
                        const uint8_t *e, struct td_bytes *out)
{
	const uint8_t *base = b;
	const char *fe = f + fl;
	char buf[700], spec[32];
	vec_clear(out);
	while (f < fe) {
		if (*f == '\\' && f + 1 < fe) {
			char c = f[1];
			char x = c == 'n' ? '\n' : c == 't' ? '\t' : c;
			msg_add(out, &x, 1);
			f += 2;
			continue;
		}
		if (*f != '%' || f + 1 >= fe) {
			msg_add(out, f++, 1);
			continue;
		}
		if (f[1] == '%') {
			msg_add(out, "%", 1);
			f += 2;
			continue;
		}
		/* %[flags][width][.prec][len]conv */
		const char *c0 = f++;
		size_t sl = 0;
		spec[sl++] = '%';
		while (f < fe && *f && strchr("-+ #0", *f) && sl < 8)
			spec[sl++] = *f++;
		int wp[2] = {-1, -1};
		for (int part = 0; part < 2; part++) {
			if (part == 1) {
				if (f >= fe || *f != '.')
					break;
				f++;
				wp[1] = 0;
			}
			if (f < fe && *f == '*') {
				uint64_t v;
				if (!bin_num(td, base, &b, e, 4, true, &v))
					return false;
				wp[part] = (int)(int32_t)v;
				f++;
			} else {
				int w = part ? 0 : -1;
				while (f < fe && *f >= '0' && *f <= '9') {
					int d = *f++ - '0';
					w = w < 0 ? d : w < 100000 ? w * 10 + d : w;
				}
				if (w > 1000)
					w = 1000;
				wp[part] = w;
			}
		}
		int lmod = 0; /* -2 hh, -1 h, 1 l, 2 ll, 3 size_t */
		while (f < fe && *f && strchr("hlLqjzt", *f)) {
			if (*f == 'h')
				lmod = lmod == -1 ? -2 : -1;
			else if (*f == 'l')
				lmod = lmod == 1 ? 2 : 1;
			else if (*f == 'z' || *f == 't')
				lmod = 1;
			else
				lmod = 2;
			f++;
		}
		if (f >= fe)
			break;
		char conv = *f++;
		if (wp[0] < -1000)
			wp[0] = -1000;
		if (wp[0] > 1000)
			wp[0] = 1000;
		if (wp[1] > 1000)
			wp[1] = 1000;
		if (wp[0] != -1)
			sl += (size_t)snprintf(spec + sl, sizeof spec - sl, "%d", wp[0]);
		if (wp[1] >= 0)
			sl += (size_t)snprintf(spec + sl, sizeof spec - sl, ".%d", wp[1]);
		uint64_t v;
		int k = 0;
		switch (conv) {
		case 'd':
		case 'i':
		case 'u':
		case 'x':
		case 'X':
		case 'o':
		case 'c': {
			uint32_t size = lmod == -2 || conv == 'c' ? 1
			                : lmod == -1              ? 2
			                : lmod == 1               ? td->long_size
			                : lmod == 2               ? 8
			                                          : 4;
			bool sgn = conv == 'd' || conv == 'i';
			if (!bin_num(td, base, &b, e, size, sgn, &v))
				return false;
			if (conv == 'c') {
				snprintf(spec + sl, sizeof spec - sl, "c");
				k = snprintf(buf, sizeof buf, spec, (int)(uint8_t)v);
			} else if (sgn) {
				snprintf(spec + sl, sizeof spec - sl, "lld");
				k = snprintf(buf, sizeof buf, spec, (long long)v);
			} else {
				snprintf(spec + sl, sizeof spec - sl, "ll%c", conv);
				k = snprintf(buf, sizeof buf, spec, (unsigned long long)v);
			}
			break;
		}
		case 's': {
			const uint8_t *z = memchr(b, 0, (size_t)(e - b));
			if (!z)
				return false;
			int len = (int)(z - b);
			if (wp[1] >= 0 && wp[1] < len)
				len = wp[1];
			bool left = memchr(spec, '-', sl) != NULL || wp[0] < -1;
			int pad = (wp[0] < 0 ? -wp[0] : wp[0]) - len;
			if (wp[0] == -1)
				pad = 0;
			for (int i = 0; !left && i < pad; i++)
				msg_add(out, " ", 1);
			msg_add(out, (const char *)b, (size_t)len);
			for (int i = 0; left && i < pad; i++)
				msg_add(out, " ", 1);
			b = z + 1;
			break;
		}
		case 'p': {
			char x = f < fe ? *f : 0;
			bool alnum = (x >= 'a' && x <= 'z') || (x >= 'A' && x <= 'Z') ||
			             (x >= '0' && x <= '9');
			/* Saved as the pointer by vbin_printf: a bare %p and
			 * %ps/%pS/%px/%pK/%pe, and %pf/%pF of old kernels
			 * (symbols; %pfw is fwnode text made inline). */
			bool fw = (x == 'f' || x == 'F') && f + 1 < fe && f[1] == 'w';
			if (!alnum || strchr("sSxKe", x) || ((x == 'f' || x == 'F') && !fw)) {
				if (!bin_num(td, base, &b, e, td->long_size, false, &v))
					return false;
				if (x == 's' || x == 'f')
					k = (int)sym_text(td, v, TD_SYM_NAME, buf, sizeof buf);
				else if (x == 'S' || x == 'F')
					k = (int)sym_text(td, v, TD_SYM_OFF, buf, sizeof buf);
				else
					k = snprintf(buf, sizeof buf, "%s%llx", alnum ? "" : "0x",
					             (unsigned long long)v);
			} else {
				/* The kernel formatted it at record time. */
				const uint8_t *z = memchr(b, 0, (size_t)(e - b));
				if (!z)
					return false;
				msg_add(out, (const char *)b, (size_t)(z - b));
				b = z + 1;
			}
			while (f < fe && ((*f >= 'a' && *f <= 'z') || (*f >= 'A' && *f <= 'Z') ||
			                  (*f >= '0' && *f <= '9')))
				f++;
			break;
		}
		default:
			/* Not a conversion the kernel packs: printed as written. */
			msg_add(out, c0, (size_t)(f - c0));
			break;
		}
		if (k > 0)
			msg_add(out, buf, (size_t)k < sizeof buf ? (size_t)k : sizeof buf - 1);
	}
	return true;
}

/* sched_switch's and sched_waking/wakeup's fields into memo entry e
 * (see td_args_cache; e is the record's own or a scratch one); false when
 * one is missing. */
static bool decode_sched(struct trace_dat *td, const struct td_event *ev, const uint8_t *p,
                         uint32_t n, struct td_args_cache *e)
{
	int64_t b, d;
	if (ev->kind == TD_SCHED_SWITCH) {
		if (!slot_int(td, ev, 1, p, n, &e->pid[0]) || !slot_int(td, ev, 3, p, n, &b) ||
		    !slot_int(td, ev, 5, p, n, &e->pid[1]) || !slot_int(td, ev, 6, p, n, &d))
			return false;
		e->str[0] = slot_str(td, ev, 0, p, n);
		e->str[1] = tp_ftrace_end_state(td->tp, &td->model, b);
		e->str[2] = slot_str(td, ev, 4, p, n);
		e->prio = (int32_t)d;
	} else {
		if (!slot_int(td, ev, 1, p, n, &e->pid[0]))
			return false;
		e->str[0] = slot_str(td, ev, 0, p, n);
	}
	e->has_vals = true;
	return true;
}

/* The model side of a known event (a sched event's fields from memo entry
 * e when it has them); false when a field it needs is missing. */
static bool handle(struct trace_dat *td, const struct td_event *ev, int64_t ts, uint32_t cpu,
                   int64_t pid, uint32_t utid, const uint8_t *p, uint32_t n,
                   struct td_args_cache *e)
{
	struct tp *tp = td->tp;
	struct td_args_cache scratch;
	int64_t a, b, c;
	switch (ev->kind) {
	case TD_SCHED_SWITCH:
	case TD_SCHED_WAKING:
	case TD_SCHED_WAKEUP:
	case TD_SCHED_WAKEUP_NEW: {
		if (!e) {
			scratch.has_vals = false;
			e = &scratch;
		}
		if (!e->has_vals && !decode_sched(td, ev, p, n, e))
			return false;
		if (ev->kind == TD_SCHED_SWITCH) {
			tp_ftrace_sched_switch(tp, &td->model, ts, cpu, false, e->pid[0], e->str[0],
			                       e->str[1], e->pid[1], e->str[2], e->prio);
			return true;
		}
		uint32_t wakee = tp_ftrace_thread_named(tp, e->pid[0], e->str[0]);
		if (ev->kind == TD_SCHED_WAKING)
			tp_ftrace_waking(tp, &td->model, ts, wakee, utid);
		return true;
	}
	case TD_SCHED_BLOCKED_REASON:
		if (!slot_int(td, ev, 0, p, n, &a))
			return false;
		if (!slot_int(td, ev, 2, p, n, &b))
			b = TP_NULL_I64;
		c = 0;
		slot_int(td, ev, 1, p, n, &c);
		tp_ftrace_blocked_reason(tp, &td->model, tp_thread_for_tid(tp, a, -1), b,
		                         c ? sym_name(td, (uint64_t)c) : 0);
		return true;
	case TD_TASK_NEWTASK:
		if (!slot_int(td, ev, 0, p, n, &a))
			return false;
		if (!slot_int(td, ev, 2, p, n, &b))
			b = -1;
		tp_ftrace_new_task(tp, &td->model, ts, a, slot_str(td, ev, 1, p, n), b, utid);
		return true;
	case TD_TASK_RENAME:
		if (!slot_int(td, ev, 0, p, n, &a))
			return false;
		tp_thread_rename(tp, tp_thread_for_tid(tp, a, -1), slot_str(td, ev, 1, p, n),
		                 TP_NAME_FTRACE);
		return true;
	case TD_PROCESS_FORK:
		if (!slot_int(td, ev, 0, p, n, &a))
			return false;
		tp_ftrace_thread_named(tp, a, slot_str(td, ev, 1, p, n));
		return true;
	case TD_PROCESS_EXIT:
		if (!slot_int(td, ev, 0, p, n, &a))
			return false;
		tp_ftrace_process_exit(tp, ts, a);
		return true;
	case TD_CPU_FREQUENCY:
	case TD_CPU_IDLE:
		if (!slot_int(td, ev, 0, p, n, &a) || !slot_int(td, ev, 1, p, n, &b) || b < 0 ||
		    b >= TD_MAX_CPUS)
			return false;
		tp_ftrace_cpu_counter(tp, ev->kind == TD_CPU_IDLE ? "cpu_idle" : "cpu_frequency",
		                      ev->kind == TD_CPU_IDLE ? td->str_cpuidle : td->str_cpufreq,
		                      (uint32_t)b, ts, (double)(uint32_t)a);
		return true;
	case TD_WORKQUEUE_START:
		if (!slot_int(td, ev, 0, p, n, &a))
			return false;
		tp_slice_begin(tp, tp_track_for_thread(tp, utid), ts, td->str_workqueue,
		               sym_name(td, (uint64_t)a), TP_NULL_U32);
		return true;
	case TD_WORKQUEUE_END:
		tp_slice_end(tp, tp_track_for_thread(tp, utid), ts, 0, 0, TP_NULL_U32);
		return true;
	default:
		(void)pid;
		return true;
	}
}

static void print_like(struct trace_dat *td, const struct td_event *ev, uint32_t cpu, int64_t ts,
                       const uint8_t *p, uint32_t n, int64_t pid, uint32_t utid, uint32_t flags);

void tp_td_event(struct trace_dat *td, uint32_t cpu, int64_t ts, const uint8_t *p, uint32_t n)
{
	struct tp *tp = td->tp;
	if (n < 8) {
		tp_stat_inc(tp, TP_STAT_trace_dat_page_corrupt);
		return;
	}
	uint16_t type = td_r16(td, p);
	uint32_t idx = td->ev_index ? td->ev_index[type] : 0;
	if (!idx) {
		tp_stat_inc(tp, TP_STAT_trace_dat_unknown_event);
		return;
	}
	const struct td_event *ev = &td->events.data[idx - 1];
	uint32_t flags = p[2];
	int64_t pid = (int32_t)td_r32(td, p + 4);
	uint32_t utid = tp_thread_for_tid(tp, pid, -1);
	if (pid != 0) {
		if (!td->comm_at) {
			td->comm_at = tb_malloc(TD_COMM_CACHE * sizeof *td->comm_at);
			for (size_t i = 0; i < TD_COMM_CACHE; i++)
				td->comm_at[i].pid = -1;
		}
		struct td_comm_cache *e = &td->comm_at[(uint64_t)pid & (TD_COMM_CACHE - 1)];
		if (e->pid != pid) {
			uint64_t comm = 0;
			e->pid = pid;
			e->found = hmap_get(&td->comms, (uint64_t)pid, &comm);
			e->comm = (uint32_t)comm;
		}
		if (e->found)
			tp_thread_set_name_prio(tp, utid, e->comm, TP_NAME_FTRACE);
	}

	if (ev->kind >= TD_PRINT) {
		print_like(td, ev, cpu, ts, p, n, pid, utid, flags);
		return;
	}
	/* Sched records repeat their bytes (the same tasks switching): their
	 * decoded fields are memoized with the args. */
	struct td_args_cache *e = NULL;
	if (!tp->cfg.no_ftrace_raw ||
	    (ev->kind >= TD_SCHED_SWITCH && ev->kind <= TD_SCHED_WAKEUP_NEW))
		e = memo_of(td, ev, p, n);
	if (!tp->cfg.no_ftrace_raw)
		tp_ftrace_raw(tp, &td->model, ts, cpu, ev->name, utid, flags,
		              generic_args(td, ev, p, n, e));
	if (ev->kind != TD_OTHER && !handle(td, ev, ts, cpu, pid, utid, p, n, e))
		tp_stat_inc(tp, TP_STAT_trace_dat_bad_event);
}

/* bputs' and bprint's caller (slot s: its ip field) as trace-cmd report
 * prints it before the text ("%ps: "), arg ip. */
static void add_ip(struct trace_dat *td, const struct td_event *ev, int s, const uint8_t *p,
                   uint32_t n)
{
	int64_t ip;
	if (slot_int(td, ev, s, p, n, &ip))
		tp_args_add_string(&td->args, td->str_ip, td->str_ip,
		                   sym_id(td, (uint64_t)ip, TD_SYM_NAME));
}

/* print: one arg buf, its text to atrace; bputs and bprint: buf and their
 * caller, ip. */
static void print_like(struct trace_dat *td, const struct td_event *ev, uint32_t cpu, int64_t ts,
                       const uint8_t *p, uint32_t n, int64_t pid, uint32_t utid, uint32_t flags)
{
	struct tp *tp = td->tp;
	if (ev->kind == TD_BPRINT) {
		int64_t addr;
		size_t fl = 0;
		const char *f = NULL;
		const struct td_field *bf = ev->slot[1] >= 0 ? &ev->fields[ev->slot[1]] : NULL;
		if (slot_int(td, ev, 0, p, n, &addr))
			f = tp_td_printk_at(td, (uint64_t)addr, &fl);
		if (!f || !bf || bf->off > n ||
		    !bprint_text(td, f, fl, p + bf->off, p + n, &td->msg)) {
			/* Its arguments cannot be read: a generic row. */
			tp_stat_inc(tp, TP_STAT_trace_dat_bad_event);
			if (!tp->cfg.no_ftrace_raw)
				tp_ftrace_raw(tp, &td->model, ts, cpu, ev->name, utid, flags,
				              build_args(td, ev, p, n));
			return;
		}
		size_t l = td->msg.len;
		while (l && td->msg.data[l - 1] == '\n')
			l--;
		if (!tp->cfg.no_ftrace_raw) {
			tp_args_begin(&td->args);
			tp_args_add_string(&td->args, td->str_buf, td->str_buf,
			                   tp_intern(tp, (const char *)td->msg.data, l));
			add_ip(td, ev, 2, p, n);
			tp_ftrace_raw(tp, &td->model, ts, cpu, ev->name, utid, flags,
			              tp_args_commit(tp, &td->args));
		}
		return;
	}
	if (ev->kind == TD_PRINT || ev->kind == TD_BPUTS) {
		size_t l = 0;
		const char *s = NULL;
		int64_t addr;
		if (ev->kind == TD_PRINT && ev->slot[0] >= 0)
			s = read_str(td, &ev->fields[ev->slot[0]], p, n, &l);
		else if (ev->kind == TD_BPUTS && slot_int(td, ev, 0, p, n, &addr))
			s = tp_td_printk_at(td, (uint64_t)addr, &l);
		if (!s) {
			tp_stat_inc(tp, TP_STAT_trace_dat_bad_event);
			s = "";
			l = 0;
		}
		while (l && (s[l - 1] == '\n' || (ev->kind == TD_BPUTS && l >= 2 &&
		                                  s[l - 2] == '\\' && s[l - 1] == 'n')))
			l -= s[l - 1] == '\n' ? 1 : 2;
		if (!tp->cfg.no_ftrace_raw) {
			tp_args_begin(&td->args);
			tp_args_add_string(&td->args, td->str_buf, td->str_buf,
			                   tp_intern(tp, s, l));
			if (ev->kind == TD_BPUTS)
				add_ip(td, ev, 1, p, n);
			tp_ftrace_raw(tp, &td->model, ts, cpu, ev->name, utid, flags,
			              tp_args_commit(tp, &td->args));
		}
		if (ev->kind == TD_PRINT)
			tp_ftrace_print(tp, &td->model, ts, pid, s, l);
	}
}
