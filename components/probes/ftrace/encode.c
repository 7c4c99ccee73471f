/*
 * Records -> protobuf. Events Perfetto has typed messages for (the table
 * below: FtraceEvent oneof numbers and message field numbers from Perfetto's
 * protos/perfetto/trace/ftrace/ files, mirrored in components/protos) are
 * written with those fields, taken by name from the event's format, so a
 * kernel that moves or drops a field still decodes. Every other event is
 * written as the legacy GenericFtraceEvent (327) with each non-common field
 * by name, so nothing enabled is lost. Also FtraceStats.
 *
 * Output goes through the pb writer (nested sizes patched in place); the
 * caller owns the enclosing TracePacket.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ftrace_int.h"
#include "pb_fields.h"

#define S FTRACE_PT_STRING
#define I32 FTRACE_PT_INT32
#define I64 FTRACE_PT_INT64
#define U32 FTRACE_PT_UINT32
#define U64 FTRACE_PT_UINT64

static const struct ftrace_proto_field k_print[] = {{"ip", 1, U64}, {"buf", 2, S}};
static const struct ftrace_proto_field k_sched_switch[] = {
    {"prev_comm", 1, S}, {"prev_pid", 2, I32}, {"prev_prio", 3, I32}, {"prev_state", 4, I64},
    {"next_comm", 5, S}, {"next_pid", 6, I32}, {"next_prio", 7, I32},
};
static const struct ftrace_proto_field k_cpu_state[] = {{"state", 1, U32}, {"cpu_id", 2, U32}};
static const struct ftrace_proto_field k_wakeup[] = {
    {"comm", 1, S}, {"pid", 2, I32}, {"prio", 3, I32}, {"success", 4, I32}, {"target_cpu", 5, I32},
};
static const struct ftrace_proto_field k_newtask[] = {
    {"pid", 1, I32},
    {"comm", 2, S},
    {"clone_flags", 3, U64},
    {"oom_score_adj", 4, I32},
};
static const struct ftrace_proto_field k_rename[] = {
    {"pid", 1, I32},
    {"oldcomm", 2, S},
    {"newcomm", 3, S},
    {"oom_score_adj", 4, I32},
};
static const struct ftrace_proto_field k_exec[] = {
    {"filename", 1, S},
    {"pid", 2, I32},
    {"old_pid", 3, I32},
};
static const struct ftrace_proto_field k_exit[] = {
    {"comm", 1, S},
    {"pid", 2, I32},
    {"tgid", 3, I32},
    {"prio", 4, I32},
};
static const struct ftrace_proto_field k_fork[] = {
    {"parent_comm", 1, S},
    {"parent_pid", 2, I32},
    {"child_comm", 3, S},
    {"child_pid", 4, I32},
};
static const struct ftrace_proto_field k_free[] = {
    {"comm", 1, S}, {"pid", 2, I32}, {"prio", 3, I32}};
static const struct ftrace_proto_field k_blocked_reason[] = {
    {"pid", 1, I32}, {"caller", 2, FTRACE_PT_KSYM}, {"io_wait", 3, U32}};

#define EV(g, n, id, f)                       \
	{                                     \
		g, n, id, f, TB_ARRAY_SIZE(f) \
	}
static const struct ftrace_proto_event k_events[] = {
    EV("ftrace", "print", 3, k_print),
    EV("sched", "sched_switch", 4, k_sched_switch),
    EV("power", "cpu_frequency", 11, k_cpu_state),
    EV("power", "cpu_idle", 13, k_cpu_state),
    EV("sched", "sched_wakeup", 17, k_wakeup),
    EV("sched", "sched_blocked_reason", 18, k_blocked_reason),
    EV("sched", "sched_waking", 20, k_wakeup),
    EV("sched", "sched_wakeup_new", 114, k_wakeup),
    EV("task", "task_newtask", 235, k_newtask),
    EV("task", "task_rename", 236, k_rename),
    EV("sched", "sched_process_exec", 237, k_exec),
    EV("sched", "sched_process_exit", 238, k_exit),
    EV("sched", "sched_process_fork", 239, k_fork),
    EV("sched", "sched_process_free", 240, k_free),
};

/* The fields compact_sched keeps, in the order of compact_field. */
static const char *const k_compact_switch[] = {"prev_state", "next_pid", "next_prio", "next_comm"};
static const char *const k_compact_waking[] = {"pid", "target_cpu", "prio", "comm", "common_flags"};

/* sched_switch / sched_waking can go to compact_sched when every field it
 * keeps is there, an integer (or the comm a fixed char array). */
static void resolve_compact(struct ftrace_event_format *f)
{
	const char *const *names;
	size_t n;
	uint8_t kind;

	f->compact = 0;
	if (strcmp(f->group, "sched") != 0)
		return;
	if (strcmp(f->name, "sched_switch") == 0) {
		names = k_compact_switch, n = TB_ARRAY_SIZE(k_compact_switch);
		kind = FTRACE_COMPACT_SWITCH;
	} else if (strcmp(f->name, "sched_waking") == 0) {
		names = k_compact_waking, n = TB_ARRAY_SIZE(k_compact_waking);
		kind = FTRACE_COMPACT_WAKING;
	} else {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ftrace_field *fd = probes_ftrace_format_field(f, names[i]);
		bool comm = i == 3; /* next_comm / comm */
		if (!fd || fd->kind != (comm ? FTRACE_FIELD_CHAR_ARRAY : FTRACE_FIELD_INT))
			return;
		f->compact_field[i] = (int8_t)(fd - f->fields);
	}
	f->compact = kind;
}

/* How put_typed_fast encodes a field: a string up to its NUL, or an
 * integer read zero-extended, then sign-extended from its size (_S*),
 * then as the proto type wants it (int32 sign-extended from 32 bits,
 * uint32 truncated, 64-bit kept). */
enum {
	FAST_STR,
	FAST_U64,
	FAST_S64,
	FAST_U_I32,
	FAST_S_I32,
	FAST_U_U32,
	FAST_S_U32,
};

/* Bounds and plan of the single-byte-size path of put_event
 * (put_typed_fast). */
static void resolve_fast(struct ftrace_event_format *f)
{
	const struct ftrace_proto_event *e = f->proto;
	size_t inner = 0, len = 0, outer;

	f->fast_max = f->fast_len = 0;
	f->n_fast = 0;
	for (size_t j = 0; j < e->n_fields; j++) {
		const struct ftrace_field *fd;
		struct ftrace_fast_field *ff = &f->fast[f->n_fast];
		uint8_t t = e->fields[j].type;
		if (f->proto_field[j] < 0)
			continue;
		fd = &f->fields[f->proto_field[j]];
		if (e->fields[j].id >= 16)
			return;
		if (t == FTRACE_PT_KSYM)
			return; /* put_typed maps it through kaddrs */
		if (t == FTRACE_PT_STRING) {
			if (fd->kind != FTRACE_FIELD_CHAR_ARRAY || fd->size > 100)
				return;
			inner += 2 + fd->size;
			ff->op = FAST_STR;
			ff->tag = (uint8_t)(e->fields[j].id << 3 | PB_WIRE_LEN);
		} else {
			if (fd->kind != FTRACE_FIELD_INT)
				return;
			inner += 1 + 10;
			ff->op = t == FTRACE_PT_INT32    ? FAST_U_I32
			         : t == FTRACE_PT_UINT32 ? FAST_U_U32
			                                 : FAST_U64;
			ff->op += fd->is_signed && fd->size < 8; /* the _S twin */
			ff->tag = (uint8_t)(e->fields[j].id << 3 | PB_WIRE_VARINT);
		}
		ff->offset = fd->offset;
		ff->size = (uint8_t)fd->size;
		f->n_fast++;
		if ((size_t)fd->offset + fd->size > len)
			len = (size_t)fd->offset + fd->size;
	}
	if (f->common_pid >= 0) {
		const struct ftrace_field *fd = &f->fields[f->common_pid];
		if (fd->kind != FTRACE_FIELD_INT)
			return;
		if ((size_t)fd->offset + fd->size > len)
			len = (size_t)fd->offset + fd->size;
	}
	/* timestamp, pid, the typed message's tag and size byte. */
	outer = 11 + 6 + (e->id < 16 ? 1 : 2) + 1 + inner;
	if (inner > 127 || outer > 127 || e->id >= 2048)
		return;
	f->fast_max = (uint16_t)(outer + 2);
	f->fast_len = (uint16_t)len;
}

bool probes_ftrace_format_has_kaddr(const struct ftrace_event_format *f)
{
	for (size_t j = 0; f->proto && j < f->proto->n_fields; j++)
		if (f->proto->fields[j].type == FTRACE_PT_KSYM && f->proto_field[j] >= 0)
			return true;
	return false;
}

void probes_ftrace_proto_resolve(struct ftrace_event_format *f)
{
	f->proto = NULL;
	for (size_t i = 0; i < TB_ARRAY_SIZE(k_events); i++) {
		const struct ftrace_proto_event *e = &k_events[i];
		if (strcmp(e->group, f->group) != 0 || strcmp(e->name, f->name) != 0)
			continue;
		TB_CHECK(e->n_fields <= TB_ARRAY_SIZE(f->proto_field));
		for (size_t j = 0; j < e->n_fields; j++) {
			const struct ftrace_field *fd =
			    probes_ftrace_format_field(f, e->fields[j].name);
			f->proto_field[j] = fd ? (int8_t)(fd - f->fields) : -1;
		}
		f->proto = e;
		resolve_fast(f);
		break;
	}
	resolve_compact(f);
	probes_ftrace_pids_resolve(f);
}

/* A short length-delimited field: s[0, n), with s[0, avail) readable.
 * Strings of events are a few dozen bytes at most; copy them inline (16
 * bytes at once when they fit) rather than through pb_put_bytes. */
static inline void put_short_bytes(struct pb_writer *w, uint32_t id, const uint8_t *s, size_t n,
                                   size_t avail)
{
	if (n < 128 && id < 16 && w->end - w->cur >= (ptrdiff_t)n + 18) {
		uint8_t *o = w->cur;
		*o++ = (uint8_t)(id << 3 | PB_WIRE_LEN);
		*o++ = (uint8_t)n;
		if (n <= 16 && avail >= 16)
			memcpy(o, s, 16); /* the bytes past n are overwritten later */
		else
			memcpy(o, s, n);
		w->cur = o + n;
		return;
	}
	pb_put_bytes(w, id, s, n);
}

static void put_typed(struct pb_writer *w, const struct ftrace_event_format *f,
                      const struct ftrace_record *rec, struct ftrace_kaddrs *ka,
                      struct probes_ftrace_encode_stats *st)
{
	const struct ftrace_proto_event *e = f->proto;
	unsigned h = pb_begin_nested(w, e->id);
	for (size_t j = 0; j < e->n_fields; j++) {
		const struct ftrace_proto_field *pf = &e->fields[j];
		const struct ftrace_field *fd;
		const uint8_t *s;
		size_t n;
		uint64_t v;
		if (f->proto_field[j] < 0)
			continue;
		fd = &f->fields[f->proto_field[j]];
		if (pf->type == FTRACE_PT_STRING) {
			if (fd->kind == FTRACE_FIELD_CHAR_ARRAY
			        ? ftrace_rd_char_array(fd, rec->data, rec->len, &s, &n)
			        : probes_ftrace_field_str(fd, rec->data, rec->len, &s, &n))
				put_short_bytes(w, pf->id, s, n,
				                fd->kind == FTRACE_FIELD_CHAR_ARRAY ? fd->size : n);
			else
				st->fields_skipped++;
			continue;
		}
		if (!ftrace_rd_int(fd, rec->data, rec->len, &v)) {
			st->fields_skipped++;
			continue;
		}
		/* int32 values are sign-extended (negative ones take 10 bytes, as
		 * protobuf says); uint32 ones truncated; 64-bit ones as they are. */
		if (pf->type == FTRACE_PT_INT32)
			v = (uint64_t)(int64_t)(int32_t)v;
		else if (pf->type == FTRACE_PT_UINT32)
			v = (uint32_t)v;
		else if (pf->type == FTRACE_PT_KSYM && ka)
			v = probes_ftrace_kaddrs_add(ka, v);
		pb_put_varint(w, pf->id, v);
	}
	pb_end_nested(w, h);
}

/* Array elements as text, "[1, 2, 3]" (signed when the field is), capped. */
static size_t render_array(const uint8_t *p, size_t bytes, unsigned esz, bool sign, char *out,
                           size_t cap)
{
	size_t o = 0;
	out[o++] = '[';
	for (size_t i = 0; i + esz <= bytes && o + 24 < cap; i += esz) {
		uint64_t v = 0;
		memcpy(&v, p + i, esz); /* little-endian */
		if (sign && esz < 8 && (v >> (esz * 8 - 1)) & 1)
			v |= ~0ull << (esz * 8);
		if (sign)
			o += (size_t)snprintf(out + o, cap - o, "%s%lld", i ? ", " : "",
			                      (long long)v);
		else
			o += (size_t)snprintf(out + o, cap - o, "%s%llu", i ? ", " : "",
			                      (unsigned long long)v);
	}
	out[o++] = ']';
	return o;
}

static void put_generic_field(struct pb_writer *w, const struct ftrace_field *fd,
                              const struct ftrace_record *rec,
                              struct probes_ftrace_encode_stats *st)
{
	const uint8_t *s;
	size_t n, b;
	uint64_t v;
	uint32_t loc;
	char buf[512];
	unsigned h;

	if (fd->kind == FTRACE_FIELD_OTHER)
		return;
	h = pb_begin_nested(w, PB_F_GenericFtraceEvent_field);
	pb_put_string(w, PB_F_GenericFtraceEvent_Field_name, fd->name);
	if (probes_ftrace_field_int(fd, rec->data, rec->len, &v)) {
		if (fd->is_signed)
			pb_put_int64(w, PB_F_GenericFtraceEvent_Field_int_value, (int64_t)v);
		else
			pb_put_uint64(w, PB_F_GenericFtraceEvent_Field_uint_value, v);
	} else if (probes_ftrace_field_str(fd, rec->data, rec->len, &s, &n)) {
		pb_put_bytes(w, PB_F_GenericFtraceEvent_Field_str_value, s, n);
	} else if (fd->kind == FTRACE_FIELD_ARRAY && (size_t)fd->offset + fd->size <= rec->len) {
		n = render_array(rec->data + fd->offset, fd->size, fd->elem_size, fd->is_signed,
		                 buf, sizeof buf);
		pb_put_bytes(w, PB_F_GenericFtraceEvent_Field_str_value, buf, n);
	} else if ((fd->kind == FTRACE_FIELD_DATA_LOC || fd->kind == FTRACE_FIELD_REL_LOC) &&
	           (size_t)fd->offset + 4 <= rec->len) {
		/* A non-char dynamic array: its bytes, as [b0, b1, ...]. */
		memcpy(&loc, rec->data + fd->offset, 4);
		b = (loc & 0xffff) +
		    (fd->kind == FTRACE_FIELD_REL_LOC ? (size_t)fd->offset + 4 : 0);
		n = loc >> 16;
		if (b <= rec->len && n <= rec->len - b) {
			n = render_array(rec->data + b, n, 1, false, buf, sizeof buf);
			pb_put_bytes(w, PB_F_GenericFtraceEvent_Field_str_value, buf, n);
		} else {
			st->fields_skipped++;
		}
	} else {
		st->fields_skipped++;
	}
	pb_end_nested(w, h);
}

/* put_event for typed events whose encoding is known to stay under 128
 * bytes (resolve_fast): straight into the writer's span, with one-byte
 * sizes patched at the end. The caller checked the room and the record's
 * length, so no field read can fail. */
static void put_typed_fast(struct pb_writer *w, const struct ftrace_event_format *f,
                           const struct ftrace_record *rec)
{
	uint8_t *o = w->cur, *outer, *inner;
	uint64_t v = 0;

	*o++ = PB_F_FtraceEventBundle_event << 3 | PB_WIRE_LEN;
	outer = o++;
	*o++ = PB_F_FtraceEvent_timestamp << 3 | PB_WIRE_VARINT;
	o = pb_encode_varint(o, rec->ts);
	if (f->common_pid >= 0) {
		ftrace_rd_int(&f->fields[f->common_pid], rec->data, rec->len, &v);
		*o++ = PB_F_FtraceEvent_pid << 3 | PB_WIRE_VARINT;
		o = pb_encode_varint(o, (uint32_t)v);
	}
	o = pb_encode_varint(o, (uint64_t)f->proto->id << 3 | PB_WIRE_LEN);
	inner = o++;
	for (unsigned j = 0; j < f->n_fast; j++) {
		const struct ftrace_fast_field *ff = &f->fast[j];
		const uint8_t *src = rec->data + ff->offset;
		unsigned shift;
		*o++ = ff->tag;
		if (ff->op == FAST_STR) {
			size_t n = ftrace_strnlen(src, ff->size);
			*o++ = (uint8_t)n;
			if (ff->size == 16)
				memcpy(o, src, 16); /* bytes past n are overwritten next */
			else
				memcpy(o, src, n);
			o += n;
			continue;
		}
		switch (ff->size) {
		case 1:
			v = src[0];
			break;
		case 2: {
			uint16_t b;
			memcpy(&b, src, 2);
			v = b;
			break;
		}
		case 4: {
			uint32_t b;
			memcpy(&b, src, 4);
			v = b;
			break;
		}
		default:
			memcpy(&v, src, 8);
			break;
		}
		shift = 64 - 8u * ff->size;
		switch (ff->op) {
		case FAST_S64:
		case FAST_S_U32:
			v = (uint64_t)((int64_t)(v << shift) >> shift);
			break;
		case FAST_S_I32:
			v = (uint64_t)((int64_t)(v << shift) >> shift);
			v = (uint64_t)(int64_t)(int32_t)v;
			break;
		case FAST_U_I32:
			v = (uint64_t)(int64_t)(int32_t)v;
			break;
		default:
			break;
		}
		if (ff->op == FAST_U_U32 || ff->op == FAST_S_U32)
			v = (uint32_t)v;
		o = pb_encode_varint(o, v);
	}
	*inner = (uint8_t)(o - inner - 1);
	*outer = (uint8_t)(o - outer - 1);
	w->cur = o;
}

/* Cache-line aligned: its branches' placement alone moved the plain
 * FtraceEvent benchmark by 2.5 ns an event (same instructions). */
static __attribute__((aligned(64))) void
put_event(struct pb_writer *w, const struct ftrace_event_format *f, const struct ftrace_record *rec,
          struct ftrace_kaddrs *ka, struct probes_ftrace_encode_stats *st)
{
	uint64_t pid;
	unsigned h, g;

	if (f->fast_max && rec->len >= f->fast_len && w->end - w->cur >= f->fast_max + 16) {
		put_typed_fast(w, f, rec);
		st->events++;
		return;
	}
	h = pb_begin_nested(w, PB_F_FtraceEventBundle_event);
	pb_put_uint64(w, PB_F_FtraceEvent_timestamp, rec->ts);
	if (f->common_pid >= 0 &&
	    ftrace_rd_int(&f->fields[f->common_pid], rec->data, rec->len, &pid))
		pb_put_uint32(w, PB_F_FtraceEvent_pid, (uint32_t)pid);
	if (f->proto) {
		put_typed(w, f, rec, ka, st);
	} else {
		g = pb_begin_nested(w, PB_F_FtraceEvent_generic);
		pb_put_string(w, PB_F_GenericFtraceEvent_event_name, f->name);
		for (size_t i = 0; i < f->n_fields; i++)
			if (strncmp(f->fields[i].name, "common_", 7) != 0)
				put_generic_field(w, &f->fields[i], rec, st);
		pb_end_nested(w, g);
		st->generic_events++;
	}
	pb_end_nested(w, h);
	st->events++;
}

bool probes_ftrace_encode_event(struct pb_writer *w, const struct ftrace_table *t,
                                const struct ftrace_record *rec,
                                struct probes_ftrace_encode_stats *st)
{
	const struct ftrace_event_format *f = probes_ftrace_table_find(t, rec->event_id);
	if (!f) {
		st->unknown_events++;
		return false;
	}
	put_event(w, f, rec, NULL, st);
	return true;
}

/* ---- compact_sched ------------------------------------------------------- */

/* One bundle's CompactSched, built while its pages are walked and written
 * at the end: one array per field (values as the varints they become),
 * timestamps as deltas from the previous one of their kind, comms interned
 * into a per-bundle table (open addressing on the 16 comm bytes). */
#define COMM_MAX 16

/* One packed field: its values and the bytes their varints take. */
struct packed {
	VEC(uint64_t) v;
	size_t bytes;
};

enum {
	SW_TS,
	SW_STATE,
	SW_PID,
	SW_PRIO,
	SW_COMM,
	WK_TS,
	WK_PID,
	WK_CPU,
	WK_PRIO,
	WK_COMM,
	WK_FLAGS,
	N_PACKED
};

struct ftrace_compact_buf {
	struct packed a[N_PACKED];
	uint64_t last_sw, last_wk;
	VEC(uint64_t) strs; /* two words per interned comm, NUL padded */
	size_t n_strs;
	uint32_t *slots; /* index + 1, 0 = empty */
	size_t n_slots;
};

/* The CompactSched field number of each packed array. */
static const uint8_t k_packed_id[N_PACKED] = {
    [SW_TS] = PB_F_FtraceEventBundle_CompactSched_switch_timestamp,
    [SW_STATE] = PB_F_FtraceEventBundle_CompactSched_switch_prev_state,
    [SW_PID] = PB_F_FtraceEventBundle_CompactSched_switch_next_pid,
    [SW_PRIO] = PB_F_FtraceEventBundle_CompactSched_switch_next_prio,
    [SW_COMM] = PB_F_FtraceEventBundle_CompactSched_switch_next_comm_index,
    [WK_TS] = PB_F_FtraceEventBundle_CompactSched_waking_timestamp,
    [WK_PID] = PB_F_FtraceEventBundle_CompactSched_waking_pid,
    [WK_CPU] = PB_F_FtraceEventBundle_CompactSched_waking_target_cpu,
    [WK_PRIO] = PB_F_FtraceEventBundle_CompactSched_waking_prio,
    [WK_COMM] = PB_F_FtraceEventBundle_CompactSched_waking_comm_index,
    [WK_FLAGS] = PB_F_FtraceEventBundle_CompactSched_waking_common_flags,
};

static void compact_reset(struct ftrace_compact_buf *c)
{
	for (int i = 0; i < N_PACKED; i++)
		c->a[i].v.len = c->a[i].bytes = 0;
	c->last_sw = c->last_wk = 0;
	c->strs.len = 0;
	c->n_strs = 0;
	if (c->slots)
		memset(c->slots, 0, c->n_slots * sizeof *c->slots);
}

void probes_ftrace_encode_opts_release(struct ftrace_encode_opts *o)
{
	struct ftrace_compact_buf *c = o->scratch;
	if (!c)
		return;
	for (int i = 0; i < N_PACKED; i++)
		vec_release(&c->a[i].v);
	vec_release(&c->strs);
	tb_free(c->slots);
	tb_free(c);
	o->scratch = NULL;
}

static inline void packed_push(struct packed *p, uint64_t v)
{
	vec_push(&p->v, v);
	p->bytes += pb_varint_size(v);
}

static inline size_t comm_hash(uint64_t a, uint64_t b)
{
	a = (a ^ (b * 0x9e3779b97f4a7c15ull)) * 0xff51afd7ed558ccdull;
	return (size_t)(a ^ (a >> 32));
}

static void compact_rehash(struct ftrace_compact_buf *c)
{
	size_t n = c->n_slots ? c->n_slots * 2 : 64;
	tb_free(c->slots);
	c->slots = tb_calloc(n, sizeof *c->slots);
	c->n_slots = n;
	for (size_t i = 0; i < c->n_strs; i++) {
		size_t s = comm_hash(c->strs.data[2 * i], c->strs.data[2 * i + 1]) & (n - 1);
		while (c->slots[s])
			s = (s + 1) & (n - 1);
		c->slots[s] = (uint32_t)i + 1;
	}
}

/* The intern_table index of the comm s[0, n), n <= COMM_MAX, s[0, avail)
 * readable. */
static uint32_t compact_intern(struct ftrace_compact_buf *c, const uint8_t *s, size_t n,
                               size_t avail)
{
	uint64_t k[2] = {0, 0};
	size_t slot;

	if (avail >= COMM_MAX) {
		memcpy(k, s, COMM_MAX);
		/* Clear what follows the NUL (the kernel may leave old bytes). */
		if (n < 8)
			k[0] &= n ? ~0ull >> (64 - 8 * n) : 0, k[1] = 0;
		else if (n < 16)
			k[1] &= n > 8 ? ~0ull >> (64 - 8 * (n - 8)) : 0;
	} else {
		memcpy(k, s, n);
	}
	if (2 * (c->n_strs + 1) > c->n_slots)
		compact_rehash(c);
	slot = comm_hash(k[0], k[1]) & (c->n_slots - 1);
	for (;;) {
		uint32_t v = c->slots[slot];
		if (!v)
			break;
		if (c->strs.data[2 * (v - 1)] == k[0] && c->strs.data[2 * (v - 1) + 1] == k[1])
			return v - 1;
		slot = (slot + 1) & (c->n_slots - 1);
	}
	vec_push(&c->strs, k[0]);
	vec_push(&c->strs, k[1]);
	c->slots[slot] = (uint32_t)++c->n_strs;
	return (uint32_t)c->n_strs - 1;
}

/* Field i of the compact list as a varint value (int32s sign-extended);
 * always inlined: it runs three or four times an event. */
static inline __attribute__((always_inline)) bool compact_int(const struct ftrace_event_format *f,
                                                              int i,
                                                              const struct ftrace_record *rec,
                                                              uint64_t *v)
{
	const struct ftrace_field *fd = &f->fields[f->compact_field[i]];
	if (!ftrace_rd_int(fd, rec->data, rec->len, v))
		return false;
	if (fd->size <= 4 && fd->is_signed)
		*v = (uint64_t)(int64_t)(int32_t)*v;
	return true;
}

/* Append rec to c; false (nothing appended) when a field lies outside the
 * record, so the caller writes it as a plain event instead. */
static bool compact_add(struct ftrace_compact_buf *c, const struct ftrace_event_format *f,
                        const struct ftrace_record *rec)
{
	const struct ftrace_field *comm = &f->fields[f->compact_field[3]];
	uint64_t a, b, d, fl = 0;
	const uint8_t *s;
	size_t n;
	uint32_t idx;

	if (!compact_int(f, 0, rec, &a) || !compact_int(f, 1, rec, &b) ||
	    !compact_int(f, 2, rec, &d) ||
	    !ftrace_rd_char_array(comm, rec->data, rec->len, &s, &n) || n > COMM_MAX ||
	    (f->compact == FTRACE_COMPACT_WAKING && !compact_int(f, 4, rec, &fl)))
		return false;
	idx = compact_intern(c, s, n, comm->size);
	/* Both kinds' arrays run ts, three integers, comm (then waking's flags):
	 * SW_TS.. and WK_TS.. follow that order. */
	{
		bool sw = f->compact == FTRACE_COMPACT_SWITCH;
		struct packed *p = &c->a[sw ? SW_TS : WK_TS];
		uint64_t *last = sw ? &c->last_sw : &c->last_wk;
		packed_push(&p[0], rec->ts - *last);
		*last = rec->ts;
		packed_push(&p[1], a);
		packed_push(&p[2], b);
		packed_push(&p[3], d);
		packed_push(&p[4], idx);
		if (!sw)
			packed_push(&p[5], (uint32_t)fl);
	}
	return true;
}

static void compact_write(struct pb_writer *w, struct ftrace_compact_buf *c)
{
	unsigned h;
	if (!c->a[SW_TS].v.len && !c->a[WK_TS].v.len)
		return;
	h = pb_begin_nested(w, PB_F_FtraceEventBundle_compact_sched);
	for (size_t i = 0; i < c->n_strs; i++) {
		const uint8_t *k = (const uint8_t *)&c->strs.data[2 * i];
		put_short_bytes(w, PB_F_FtraceEventBundle_CompactSched_intern_table, k,
		                ftrace_strnlen(k, COMM_MAX), COMM_MAX);
	}
	for (int i = 0; i < N_PACKED; i++) {
		const struct packed *p = &c->a[i];
		if (!p->v.len)
			continue;
		pb_put_tag(w, k_packed_id[i], PB_WIRE_LEN);
		pb_put_raw_varint(w, p->bytes);
		for (size_t j = 0; j < p->v.len; j++)
			pb_put_raw_varint(w, p->v.data[j]);
	}
	pb_end_nested(w, h);
}

size_t probes_ftrace_encode_bundle_opts(struct pb_writer *w, const struct ftrace_table *t,
                                        struct ftrace_encode_opts *o, uint32_t cpu,
                                        const uint8_t *buf, size_t len,
                                        struct probes_ftrace_encode_stats *st)
{
	size_t page = t->layout.page_size, written = 0;
	struct ftrace_compact_buf *c = NULL;
	const struct ftrace_event_format *f = NULL, *prev_f = NULL;
	uint32_t last_id = UINT32_MAX, prev_id = UINT32_MAX;
	const uint64_t *mask = o ? o->id_mask : NULL;
	struct ftrace_pids *pids = o ? o->pids : NULL;
	struct ftrace_kaddrs *kaddrs = o ? o->kaddrs : NULL;
	bool lost = false, wanted = false, prev_wanted = false;

	pb_put_uint32(w, PB_F_FtraceEventBundle_cpu, cpu);
	if (page == 0)
		return 0;
	if (o && o->compact_sched) {
		if (!o->scratch)
			o->scratch = tb_calloc(1, sizeof *o->scratch);
		c = o->scratch;
		compact_reset(c);
	}
	for (size_t off = 0; off < len; off += page) {
		struct ftrace_page_iter it;
		struct ftrace_record rec;
		size_t n = len - off < page ? len - off : page;
		unsigned h;

		st->pages++;
		if (probes_ftrace_page_begin(&it, &t->layout, buf + off, n) == FTRACE_STATUS_OK) {
			if (it.missed_events) {
				lost = true;
				st->lost_pages++;
			}
			while (probes_ftrace_page_next(&it, &rec)) {
				st->records++;
				/* Runs of one event id, or two alternating
				 * (sched_waking, sched_switch), are the common
				 * case: the last two lookups are kept. */
				if (rec.event_id != last_id) {
					const struct ftrace_event_format *tf = f;
					uint32_t ti = last_id;
					bool tw = wanted;
					if (rec.event_id == prev_id) {
						f = prev_f;
						wanted = prev_wanted;
					} else {
						f = probes_ftrace_table_find(t, rec.event_id);
						wanted = !mask || (rec.event_id < 65536 &&
						                   (mask[rec.event_id / 64] >>
						                        (rec.event_id % 64) &
						                    1));
					}
					last_id = rec.event_id;
					prev_f = tf;
					prev_id = ti;
					prev_wanted = tw;
				}
				if (!f) {
					st->unknown_events++;
					continue;
				}
				if (!wanted)
					continue;
				if (pids)
					ftrace_pids_collect(pids, f, &rec);
				if (c && f->compact && compact_add(c, f, &rec)) {
					st->events++;
					st->compact_events++;
				} else {
					put_event(w, f, &rec, kaddrs, st);
				}
				written++;
			}
		}
		if (it.status == FTRACE_STATUS_OK)
			continue;
		st->parse_errors++;
		st->last_status = it.status;
		h = pb_begin_nested(w, PB_F_FtraceEventBundle_error);
		pb_put_uint64(w, PB_F_FtraceEventBundle_FtraceError_timestamp, it.ts);
		pb_put_varint(w, PB_F_FtraceEventBundle_FtraceError_status, (uint64_t)it.status);
		pb_end_nested(w, h);
	}
	if (c)
		compact_write(w, c);
	if (lost)
		pb_put_bool(w, PB_F_FtraceEventBundle_lost_events, true);
	return written;
}

size_t probes_ftrace_encode_bundle(struct pb_writer *w, const struct ftrace_table *t, uint32_t cpu,
                                   const uint8_t *buf, size_t len,
                                   struct probes_ftrace_encode_stats *st)
{
	return probes_ftrace_encode_bundle_opts(w, t, NULL, cpu, buf, len, st);
}

void probes_ftrace_encode_stats(struct pb_writer *w, enum ftrace_stats_phase phase,
                                const struct ftrace_cpu_stats *cpus, size_t n)
{
	pb_put_varint(w, PB_F_FtraceStats_phase, (uint64_t)phase);
	for (size_t i = 0; i < n; i++) {
		const struct ftrace_cpu_stats *c = &cpus[i];
		unsigned h = pb_begin_nested(w, PB_F_FtraceStats_cpu_stats);
		pb_put_uint64(w, PB_F_FtraceCpuStats_cpu, c->cpu);
		pb_put_uint64(w, PB_F_FtraceCpuStats_entries, c->entries);
		pb_put_uint64(w, PB_F_FtraceCpuStats_overrun, c->overrun);
		pb_put_uint64(w, PB_F_FtraceCpuStats_commit_overrun, c->commit_overrun);
		pb_put_uint64(w, PB_F_FtraceCpuStats_bytes_read, c->bytes_read);
		pb_put_double(w, PB_F_FtraceCpuStats_oldest_event_ts, c->oldest_event_ts);
		pb_put_double(w, PB_F_FtraceCpuStats_now_ts, c->now_ts);
		pb_put_uint64(w, PB_F_FtraceCpuStats_dropped_events, c->dropped_events);
		pb_put_uint64(w, PB_F_FtraceCpuStats_read_events, c->read_events);
		pb_end_nested(w, h);
	}
}
