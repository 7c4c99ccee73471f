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
#include <stdio.h>
#include <string.h>

#include "ftrace_int.h"

/* FtraceEventBundle / FtraceEvent / GenericFtraceEvent / FtraceStats fields. */
enum {
	BUNDLE_CPU = 1,
	BUNDLE_EVENT = 2,
	BUNDLE_LOST_EVENTS = 3,
	BUNDLE_ERROR = 8,
	ERROR_TIMESTAMP = 1,
	ERROR_STATUS = 2,
	EVENT_TIMESTAMP = 1,
	EVENT_PID = 2,
	EVENT_GENERIC = 327,
	GENERIC_EVENT_NAME = 1,
	GENERIC_FIELD = 2,
	GFIELD_NAME = 1,
	GFIELD_STR = 3,
	GFIELD_INT = 4,
	GFIELD_UINT = 5,
	STATS_PHASE = 1,
	STATS_CPU_STATS = 2,
};

#define S FTRACE_PT_STRING
#define I32 FTRACE_PT_INT32
#define I64 FTRACE_PT_INT64
#define U32 FTRACE_PT_UINT32
#define U64 FTRACE_PT_UINT64

static const struct ftrace_proto_field k_print[] = {{"ip", 1, U64}, {"buf", 2, S}};
static const struct ftrace_proto_field k_sched_switch[] = {
    {"prev_comm", 1, S}, {"prev_pid", 2, I32},  {"prev_prio", 3, I32}, {"prev_state", 4, I64},
    {"next_comm", 5, S}, {"next_pid", 6, I32},  {"next_prio", 7, I32},
};
static const struct ftrace_proto_field k_cpu_state[] = {{"state", 1, U32}, {"cpu_id", 2, U32}};
static const struct ftrace_proto_field k_wakeup[] = {
    {"comm", 1, S}, {"pid", 2, I32}, {"prio", 3, I32}, {"success", 4, I32}, {"target_cpu", 5, I32},
};
static const struct ftrace_proto_field k_newtask[] = {
    {"pid", 1, I32}, {"comm", 2, S}, {"clone_flags", 3, U64}, {"oom_score_adj", 4, I32},
};
static const struct ftrace_proto_field k_rename[] = {
    {"pid", 1, I32}, {"oldcomm", 2, S}, {"newcomm", 3, S}, {"oom_score_adj", 4, I32},
};
static const struct ftrace_proto_field k_exec[] = {
    {"filename", 1, S}, {"pid", 2, I32}, {"old_pid", 3, I32},
};
static const struct ftrace_proto_field k_exit[] = {
    {"comm", 1, S}, {"pid", 2, I32}, {"tgid", 3, I32}, {"prio", 4, I32},
};
static const struct ftrace_proto_field k_fork[] = {
    {"parent_comm", 1, S}, {"parent_pid", 2, I32}, {"child_comm", 3, S}, {"child_pid", 4, I32},
};
static const struct ftrace_proto_field k_free[] = {{"comm", 1, S}, {"pid", 2, I32}, {"prio", 3, I32}};

#define EV(g, n, id, f) {g, n, id, f, TB_ARRAY_SIZE(f)}
static const struct ftrace_proto_event k_events[] = {
    EV("ftrace", "print", 3, k_print),
    EV("sched", "sched_switch", 4, k_sched_switch),
    EV("power", "cpu_frequency", 11, k_cpu_state),
    EV("power", "cpu_idle", 13, k_cpu_state),
    EV("sched", "sched_wakeup", 17, k_wakeup),
    EV("sched", "sched_waking", 20, k_wakeup),
    EV("sched", "sched_wakeup_new", 114, k_wakeup),
    EV("task", "task_newtask", 235, k_newtask),
    EV("task", "task_rename", 236, k_rename),
    EV("sched", "sched_process_exec", 237, k_exec),
    EV("sched", "sched_process_exit", 238, k_exit),
    EV("sched", "sched_process_fork", 239, k_fork),
    EV("sched", "sched_process_free", 240, k_free),
};

void ftrace_proto_resolve(struct ftrace_event_format *f)
{
	f->proto = NULL;
	for (size_t i = 0; i < TB_ARRAY_SIZE(k_events); i++) {
		const struct ftrace_proto_event *e = &k_events[i];
		if (strcmp(e->group, f->group) != 0 || strcmp(e->name, f->name) != 0)
			continue;
		TB_CHECK(e->n_fields <= TB_ARRAY_SIZE(f->proto_field));
		for (size_t j = 0; j < e->n_fields; j++) {
			const struct ftrace_field *fd = ftrace_format_field(f, e->fields[j].name);
			f->proto_field[j] = fd ? (int8_t)(fd - f->fields) : -1;
		}
		f->proto = e;
		return;
	}
}

static void put_typed(struct pb_writer *w, const struct ftrace_event_format *f,
		      const struct ftrace_record *rec, struct ftrace_encode_stats *st)
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
			if (ftrace_field_str(fd, rec->data, rec->len, &s, &n))
				pb_put_bytes(w, pf->id, s, n);
			else
				st->fields_skipped++;
			continue;
		}
		if (!ftrace_field_int(fd, rec->data, rec->len, &v)) {
			st->fields_skipped++;
			continue;
		}
		switch (pf->type) {
		case FTRACE_PT_INT32:
			pb_put_int32(w, pf->id, (int32_t)v);
			break;
		case FTRACE_PT_UINT32:
			pb_put_uint32(w, pf->id, (uint32_t)v);
			break;
		default: /* int64 and uint64 share the varint of the raw bits */
			pb_put_varint(w, pf->id, v);
			break;
		}
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
			o += (size_t)snprintf(out + o, cap - o, "%s%lld", i ? ", " : "", (long long)v);
		else
			o += (size_t)snprintf(out + o, cap - o, "%s%llu", i ? ", " : "",
					      (unsigned long long)v);
	}
	out[o++] = ']';
	return o;
}

static void put_generic_field(struct pb_writer *w, const struct ftrace_field *fd,
			      const struct ftrace_record *rec, struct ftrace_encode_stats *st)
{
	const uint8_t *s;
	size_t n, b;
	uint64_t v;
	uint32_t loc;
	char buf[512];
	unsigned h;

	if (fd->kind == FTRACE_FIELD_OTHER)
		return;
	h = pb_begin_nested(w, GENERIC_FIELD);
	pb_put_string(w, GFIELD_NAME, fd->name);
	if (ftrace_field_int(fd, rec->data, rec->len, &v)) {
		if (fd->is_signed)
			pb_put_int64(w, GFIELD_INT, (int64_t)v);
		else
			pb_put_uint64(w, GFIELD_UINT, v);
	} else if (ftrace_field_str(fd, rec->data, rec->len, &s, &n)) {
		pb_put_bytes(w, GFIELD_STR, s, n);
	} else if (fd->kind == FTRACE_FIELD_ARRAY && (size_t)fd->offset + fd->size <= rec->len) {
		n = render_array(rec->data + fd->offset, fd->size, fd->elem_size, fd->is_signed, buf,
				 sizeof buf);
		pb_put_bytes(w, GFIELD_STR, buf, n);
	} else if ((fd->kind == FTRACE_FIELD_DATA_LOC || fd->kind == FTRACE_FIELD_REL_LOC) &&
		   (size_t)fd->offset + 4 <= rec->len) {
		/* A non-char dynamic array: its bytes, as [b0, b1, ...]. */
		memcpy(&loc, rec->data + fd->offset, 4);
		b = (loc & 0xffff) + (fd->kind == FTRACE_FIELD_REL_LOC ? (size_t)fd->offset + 4 : 0);
		n = loc >> 16;
		if (b <= rec->len && n <= rec->len - b) {
			n = render_array(rec->data + b, n, 1, false, buf, sizeof buf);
			pb_put_bytes(w, GFIELD_STR, buf, n);
		} else {
			st->fields_skipped++;
		}
	} else {
		st->fields_skipped++;
	}
	pb_end_nested(w, h);
}

bool ftrace_encode_event(struct pb_writer *w, const struct ftrace_table *t,
			 const struct ftrace_record *rec, struct ftrace_encode_stats *st)
{
	const struct ftrace_event_format *f = ftrace_table_find(t, rec->event_id);
	uint64_t pid;
	unsigned h, g;

	if (!f) {
		st->unknown_events++;
		return false;
	}
	h = pb_begin_nested(w, BUNDLE_EVENT);
	pb_put_uint64(w, EVENT_TIMESTAMP, rec->ts);
	if (f->common_pid >= 0 && ftrace_field_int(&f->fields[f->common_pid], rec->data, rec->len, &pid))
		pb_put_uint32(w, EVENT_PID, (uint32_t)pid);
	if (f->proto) {
		put_typed(w, f, rec, st);
	} else {
		g = pb_begin_nested(w, EVENT_GENERIC);
		pb_put_string(w, GENERIC_EVENT_NAME, f->name);
		for (size_t i = 0; i < f->n_fields; i++)
			if (strncmp(f->fields[i].name, "common_", 7) != 0)
				put_generic_field(w, &f->fields[i], rec, st);
		pb_end_nested(w, g);
		st->generic_events++;
	}
	pb_end_nested(w, h);
	st->events++;
	return true;
}

size_t ftrace_encode_bundle(struct pb_writer *w, const struct ftrace_table *t, uint32_t cpu,
			    const uint8_t *buf, size_t len, struct ftrace_encode_stats *st)
{
	size_t page = t->layout.page_size, written = 0;
	bool lost = false;

	pb_put_uint32(w, BUNDLE_CPU, cpu);
	if (page == 0)
		return 0;
	for (size_t off = 0; off < len; off += page) {
		struct ftrace_page_iter it;
		struct ftrace_record rec;
		size_t n = len - off < page ? len - off : page;
		unsigned h;

		st->pages++;
		if (ftrace_page_begin(&it, &t->layout, buf + off, n) == FTRACE_STATUS_OK) {
			if (it.missed_events) {
				lost = true;
				st->lost_pages++;
			}
			while (ftrace_page_next(&it, &rec))
				written += ftrace_encode_event(w, t, &rec, st);
		}
		if (it.status == FTRACE_STATUS_OK)
			continue;
		st->parse_errors++;
		st->last_status = it.status;
		h = pb_begin_nested(w, BUNDLE_ERROR);
		pb_put_uint64(w, ERROR_TIMESTAMP, it.ts);
		pb_put_varint(w, ERROR_STATUS, (uint64_t)it.status);
		pb_end_nested(w, h);
	}
	if (lost)
		pb_put_bool(w, BUNDLE_LOST_EVENTS, true);
	return written;
}

void ftrace_encode_stats(struct pb_writer *w, enum ftrace_stats_phase phase,
			 const struct ftrace_cpu_stats *cpus, size_t n)
{
	pb_put_varint(w, STATS_PHASE, (uint64_t)phase);
	for (size_t i = 0; i < n; i++) {
		const struct ftrace_cpu_stats *c = &cpus[i];
		unsigned h = pb_begin_nested(w, STATS_CPU_STATS);
		pb_put_uint64(w, 1, c->cpu);
		pb_put_uint64(w, 2, c->entries);
		pb_put_uint64(w, 3, c->overrun);
		pb_put_uint64(w, 4, c->commit_overrun);
		pb_put_uint64(w, 5, c->bytes_read);
		pb_put_double(w, 6, c->oldest_event_ts);
		pb_put_double(w, 7, c->now_ts);
		pb_put_uint64(w, 8, c->dropped_events);
		pb_put_uint64(w, 9, c->read_events);
		pb_end_nested(w, h);
	}
}
