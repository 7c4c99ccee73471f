/*
 * Private declarations shared by the files of components/probes/ftrace/.
 */
#ifndef TB_PROBES_FTRACE_INT_H
#define TB_PROBES_FTRACE_INT_H

#include "probes.h"

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
bool ftrace_parse_field_line(const char *line, size_t n, struct ftrace_field_line *fl);

/* Attach the typed FtraceEvent message (encode.c's table) to f, resolving
 * its fields; leaves f->proto NULL for events encoded as generic. */
void ftrace_proto_resolve(struct ftrace_event_format *f);

/* Typed field value kinds of the FtraceEvent messages we write. */
enum ftrace_proto_type {
	FTRACE_PT_STRING,
	FTRACE_PT_INT32,
	FTRACE_PT_INT64,
	FTRACE_PT_UINT32,
	FTRACE_PT_UINT64,
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

#endif /* TB_PROBES_FTRACE_INT_H */
