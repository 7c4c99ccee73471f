/*
 * Private declarations shared by the files of components/probes/ftrace/.
 */
#ifndef TB_PROBES_FTRACE_INT_H
#define TB_PROBES_FTRACE_INT_H

#include <string.h>

#include "probes_int.h"

/* Limits on what format files may declare (they come from the kernel, but a
 * corrupt or hostile file must not make us allocate without bound). */
#define FTRACE_MAX_FIELDS 256
#define FTRACE_MAX_NAME 128

/* One `field:DECL; offset:N; size:N; signed:N;` line, split. decl points
 * into the line (not NUL-terminated). */
struct ftrace_field_line {
	const char *decl;
	size_t decl_len;
	uint32_t offset, size;
	bool is_signed;
};

/* Parse line[0, n) if it is a field line. Returns true and fills *fl. */
bool probes_ftrace_parse_field_line(const char *line, size_t n, struct ftrace_field_line *fl);

/* Attach the typed FtraceEvent message (encode.c's table) to f, resolving
 * its fields; leaves f->proto NULL for events encoded as generic. */
void probes_ftrace_proto_resolve(struct ftrace_event_format *f);
/* Whether f's typed message has a kernel address field (FTRACE_PT_KSYM)
 * that its format provides: what symbolize_ksyms needs kallsyms for. */
bool probes_ftrace_format_has_kaddr(const struct ftrace_event_format *f);
/* Set f's pid_off / is_rename (pids.c); called by probes_ftrace_proto_resolve. */
void probes_ftrace_pids_resolve(struct ftrace_event_format *f);
/* Add the tasks rec mentions to p, one by one: the slow path of
 * ftrace_pids_collect (a pid not seen yet, a short record, task_rename). */
void probes_ftrace_pids_collect_slow(struct ftrace_pids *p, const struct ftrace_event_format *f,
                                     const struct ftrace_record *rec);

/* Whether the pid at data + off is in p's bitmap. */
static inline bool ftrace_pid_seen(const struct ftrace_pids *p, const uint8_t *data, unsigned off)
{
	uint32_t pid;
	memcpy(&pid, data + off, 4);
	return pid < FTRACE_PIDS_CACHE && (p->cache[pid / 64] >> (pid % 64) & 1);
}

/* Add the tasks record rec of event f mentions to p; inline for the
 * encoder's per-event path. Nearly every event has all its pids in the
 * bitmap already: the first three (pid_off pads them with pid_off[0]) are
 * tested together, one range test on their OR (each is below the power of
 * two FTRACE_PIDS_CACHE iff the OR is) and one on the AND of their bits; a
 * pid not seen yet, a short record or task_rename takes the call. */
static inline void ftrace_pids_collect(struct ftrace_pids *p, const struct ftrace_event_format *f,
                                       const struct ftrace_record *rec)
{
	unsigned n = f->n_pid_offs;
	if (!n)
		return;
	if (TB_LIKELY(rec->len >= f->pid_end && !f->is_rename)) {
		uint32_t a, b, c;
		memcpy(&a, rec->data + f->pid_off[0], 4);
		memcpy(&b, rec->data + f->pid_off[1], 4);
		memcpy(&c, rec->data + f->pid_off[2], 4);
		if (TB_LIKELY((a | b | c) < FTRACE_PIDS_CACHE &&
		              (p->cache[a / 64] >> (a % 64) & p->cache[b / 64] >> (b % 64) &
		               p->cache[c / 64] >> (c % 64) & 1))) {
			for (unsigned i = 3; i < n; i++)
				if (!ftrace_pid_seen(p, rec->data, f->pid_off[i]))
					goto slow;
			return;
		}
	}
slow:
	probes_ftrace_pids_collect_slow(p, f, rec);
}

/* Typed field value kinds of the FtraceEvent messages we write. */
enum ftrace_proto_type {
	FTRACE_PT_STRING,
	FTRACE_PT_INT32,
	FTRACE_PT_INT64,
	FTRACE_PT_UINT32,
	FTRACE_PT_UINT64,
	FTRACE_PT_KSYM, /* uint64: a kernel address, written as its kaddrs index */
};

struct ftrace_proto_field {
	const char *name; /* the format field it comes from */
	uint32_t id;
	uint8_t type; /* enum ftrace_proto_type */
};

/* A typed FtraceEvent payload: group/name of the kernel event, its oneof
 * field number in FtraceEvent and its message's fields (at most 8). */
struct ftrace_proto_event {
	const char *group, *name;
	uint32_t id;
	const struct ftrace_proto_field *fields;
	size_t n_fields;
};

/* probes_ftrace_field_int, inline for the encoder's per-event path. */
static inline bool ftrace_rd_int(const struct ftrace_field *fd, const uint8_t *rec, size_t len,
                                 uint64_t *out)
{
	uint64_t v;
	unsigned shift;
	if (fd->kind != FTRACE_FIELD_INT || (size_t)fd->offset + fd->size > len)
		return false;
	switch (fd->size) {
	case 1:
		v = rec[fd->offset];
		break;
	case 2: {
		uint16_t b;
		memcpy(&b, rec + fd->offset, 2);
		v = b;
		break;
	}
	case 4: {
		uint32_t b;
		memcpy(&b, rec + fd->offset, 4);
		v = b;
		break;
	}
	default:
		memcpy(&v, rec + fd->offset, 8);
		break;
	}
	shift = 64 - fd->size * 8u;
	*out = fd->is_signed && shift ? (uint64_t)((int64_t)(v << shift) >> shift) : v;
	return true;
}

/* Length of the string at p up to its first NUL, at most max: a word at a
 * time for the 16-byte comms that fill sched events. */
static inline size_t ftrace_strnlen(const uint8_t *p, size_t max)
{
	size_t i = 0;
	for (; i + 8 <= max; i += 8) {
		uint64_t w, z;
		memcpy(&w, p + i, 8);
		z = (w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull;
		if (z) /* little-endian: the lowest flagged byte is the first NUL */
			return i + (size_t)__builtin_ctzll(z) / 8;
	}
	while (i < max && p[i])
		i++;
	return i;
}

/* A CHAR_ARRAY field (char name[N]) up to its first NUL, inline for the
 * encoder; other string kinds go through probes_ftrace_field_str. */
static inline bool ftrace_rd_char_array(const struct ftrace_field *fd, const uint8_t *rec,
                                        size_t len, const uint8_t **s, size_t *n)
{
	if ((size_t)fd->offset + fd->size > len)
		return false;
	*s = rec + fd->offset;
	*n = ftrace_strnlen(*s, fd->size);
	return true;
}

#endif /* TB_PROBES_FTRACE_INT_H */
