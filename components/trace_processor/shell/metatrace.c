/*
 * -m / --metatrace FILE: a trace of what the shell itself did, written when
 * the command ends (also when it fails), as Perfetto's shell writes one.
 * Ours records, in categories named as Perfetto's:
 *
 *   api        LOAD_TRACE (reading and importing the trace), EXPORT_SQLITE
 *   query_toplevel  QUERY_EXECUTE: one slice per statement run, with its SQL
 *
 * (query_detailed, function_call and db are accepted and record nothing:
 * they are the internals of Perfetto's engine.) The file is a Perfetto
 * protobuf trace: one TrackDescriptor per category and TrackEvent slices on
 * it, so the UI and trace_processor_shell open it. At most
 * --metatrace-buffer-capacity events are kept, the last ones.
 *
 *   TracePacket { track_descriptor (60) { uuid (1), name (2) } }
 *   TracePacket { timestamp (8), trusted_packet_sequence_id (10),
 *                 track_event (11) { type (9), track_uuid (11), name (23),
 *                 debug_annotations (4) { name (10), string_value (6) } } }
 */
#include "shell.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pb.h"
#include "pb_fields.h"

#define DEFAULT_CAPACITY 65536u
#define SEQ_ID 1
#define MAX_SQL_ARG 4096

enum {
	CAT_QUERY_TIMELINE = 1,
	CAT_QUERY_DETAILED = 2,
	CAT_FUNCTION_CALL = 4,
	CAT_DB = 8,
	CAT_API_TIMELINE = 16,
	CAT_ALL = 31
};

struct mt_event {
	unsigned cat;
	const char *name;
	int64_t begin, end;
	char *sql;
};

static struct {
	const char *path;
	unsigned cats;
	size_t cap, next, count;
	struct mt_event *ev; /* a ring of cap */
} mt;

static unsigned cat_bit(const char *name)
{
	if (strcmp(name, "QUERY_TIMELINE") == 0)
		return CAT_QUERY_TIMELINE;
	if (strcmp(name, "API_TIMELINE") == 0)
		return CAT_API_TIMELINE;
	return 0;
}

/* Perfetto's category names, case-insensitive, comma-separated. */
static int parse_categories(const char *s, unsigned *out)
{
	unsigned r = 0;
	char tok[64];
	while (s && *s) {
		size_t n = strcspn(s, ",");
		snprintf(tok, sizeof tok, "%.*s", (int)(n < 63 ? n : 63), s);
		for (char *p = tok; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		if (strcmp(tok, "all") == 0 || strcmp(tok, "*") == 0)
			r = CAT_ALL;
		else if (strcmp(tok, "query_toplevel") == 0)
			r |= CAT_QUERY_TIMELINE;
		else if (strcmp(tok, "query_detailed") == 0)
			r |= CAT_QUERY_DETAILED;
		else if (strcmp(tok, "function_call") == 0)
			r |= CAT_FUNCTION_CALL;
		else if (strcmp(tok, "db") == 0)
			r |= CAT_DB;
		else if (strcmp(tok, "api") == 0)
			r |= CAT_API_TIMELINE;
		else {
			tp_shell_error("Unknown metatrace category %s", tok);
			return -1;
		}
		s += n + (s[n] == ',');
	}
	*out = r;
	return 0;
}

int tp_shell_metatrace_start(const struct shell_opts *o)
{
	if (!o->metatrace)
		return 0;
	mt.cats = CAT_QUERY_TIMELINE | CAT_API_TIMELINE;
	if (o->metatrace_categories && parse_categories(o->metatrace_categories, &mt.cats) < 0)
		return -1;
	mt.cap = o->metatrace_capacity ? o->metatrace_capacity : DEFAULT_CAPACITY;
	if (mt.cap > (1u << 24))
		mt.cap = 1u << 24;
	mt.ev = tb_calloc(mt.cap, sizeof *mt.ev);
	mt.path = o->metatrace;
	return 0;
}

void tp_shell_metatrace_slice(const char *cat, const char *name, int64_t begin_ns, int64_t end_ns,
                              const char *sql)
{
	unsigned bit = cat_bit(cat);
	if (!mt.path || !(mt.cats & bit))
		return;
	struct mt_event *e = &mt.ev[mt.next];
	tb_free(e->sql);
	*e = (struct mt_event){.cat = bit, .name = name, .begin = begin_ns, .end = end_ns};
	if (sql) {
		sql += strspn(sql, " \t\r\n");
		e->sql = tb_strndup(sql, strnlen(sql, MAX_SQL_ARG));
	}
	mt.next = (mt.next + 1) % mt.cap;
	if (mt.count < mt.cap)
		mt.count++;
}

static uint64_t track_uuid(unsigned bit)
{
	return 0x6d657461000000ull | bit; /* "meta" and the category */
}

static void put_event(struct pb_writer *w, const struct mt_event *e, bool begin, bool first)
{
	unsigned p = pb_begin_nested(w, PB_F_Trace_packet);
	pb_put_uint64(w, PB_F_TracePacket_timestamp, (uint64_t)(begin ? e->begin : e->end));
	pb_put_uint32(w, PB_F_TracePacket_trusted_packet_sequence_id, SEQ_ID);
	if (first)
		pb_put_uint32(w, PB_F_TracePacket_sequence_flags,
		              PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED);
	unsigned t = pb_begin_nested(w, PB_F_TracePacket_track_event);
	pb_put_int32(w, PB_F_TrackEvent_type,
	             begin ? PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN
	                   : PB_E_TrackEvent_Type_TYPE_SLICE_END);
	pb_put_uint64(w, PB_F_TrackEvent_track_uuid, track_uuid(e->cat));
	if (begin) {
		pb_put_string(w, PB_F_TrackEvent_name, e->name);
		if (e->sql) {
			unsigned d = pb_begin_nested(w, PB_F_TrackEvent_debug_annotations);
			pb_put_string(w, PB_F_DebugAnnotation_name, "sql");
			pb_put_string(w, PB_F_DebugAnnotation_string_value, e->sql);
			pb_end_nested(w, d);
		}
	}
	pb_end_nested(w, t);
	pb_end_nested(w, p);
}

static int cmp_begin(const void *a, const void *b)
{
	const struct mt_event *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : 0;
}

int tp_shell_metatrace_write(void)
{
	if (!mt.path)
		return 0;
	struct pb_writer w;
	pb_writer_init_growable(&w);
	static const struct {
		unsigned bit;
		const char *name;
	} tracks[] = {{CAT_API_TIMELINE, "API_TIMELINE"}, {CAT_QUERY_TIMELINE, "QUERY_TIMELINE"}};
	for (size_t i = 0; i < sizeof tracks / sizeof tracks[0]; i++) {
		if (!(mt.cats & tracks[i].bit))
			continue;
		unsigned p = pb_begin_nested(&w, PB_F_Trace_packet);
		pb_put_uint32(&w, PB_F_TracePacket_trusted_packet_sequence_id, SEQ_ID);
		unsigned d = pb_begin_nested(&w, PB_F_TracePacket_track_descriptor);
		pb_put_uint64(&w, PB_F_TrackDescriptor_uuid, track_uuid(tracks[i].bit));
		pb_put_string(&w, PB_F_TrackDescriptor_name, tracks[i].name);
		pb_end_nested(&w, d);
		pb_end_nested(&w, p);
	}
	/* The kept events in time order (the ring holds them by end). */
	struct mt_event *sorted = tb_calloc(mt.count ? mt.count : 1, sizeof *sorted);
	size_t start = mt.count < mt.cap ? 0 : mt.next;
	for (size_t i = 0; i < mt.count; i++)
		sorted[i] = mt.ev[(start + i) % mt.cap];
	qsort(sorted, mt.count, sizeof *sorted, cmp_begin);
	/* Slices of one track nest or follow each other (one thread did them
	 * all), so begin/end pairs in begin order are well formed per track
	 * except when one ends after the next begins: those are emitted as
	 * consecutive, clipped to the next begin. */
	for (size_t i = 0; i < mt.count; i++) {
		struct mt_event e = sorted[i];
		for (size_t j = i + 1; j < mt.count; j++)
			if (sorted[j].cat == e.cat) {
				if (e.end > sorted[j].begin)
					e.end = sorted[j].begin;
				break;
			}
		put_event(&w, &e, true, i == 0);
		put_event(&w, &e, false, false);
	}
	tb_free(sorted);
	int rc = 0;
	FILE *f = fopen(mt.path, "wbe");
	if (!f || fwrite(pb_writer_data(&w), 1, pb_writer_size(&w), f) != pb_writer_size(&w)) {
		tp_shell_error("Unable to write metatrace file '%s': %s", mt.path, strerror(errno));
		rc = -1;
	}
	if (f && fclose(f) != 0 && rc == 0) {
		tp_shell_error("Error while writing metatrace file '%s': %s", mt.path,
		               strerror(errno));
		rc = -1;
	}
	pb_writer_release(&w);
	for (size_t i = 0; i < mt.cap; i++)
		tb_free(mt.ev[i].sql);
	tb_free(mt.ev);
	memset(&mt, 0, sizeof mt);
	return rc;
}
