/*
 * Perfetto's trace manifest (perfetto_manifest): a JSON member of a zip or
 * tar that names the machines of the other members and relates their
 * clocks, so that they merge onto one timeline.
 *
 *   json.c      a small JSON reader into a tree (the manifest is tiny)
 *   manifest.c  the document into struct tp_manifest, with Perfetto's
 *               one-line errors; the importer of a manifest member, which
 *               records trace_time_clock_id and the attributes in metadata
 *   align.c     the archive's plan: every member's machine and the shift
 *               that puts its timestamps on the merged timeline, from a
 *               scan of the protobuf members' clock snapshots
 *
 * tp.c asks the plan for each member before importing it; the proto
 * importer asks it for the machine row of an embedded machine id and the
 * shift of that machine's clock (tp_manifest_machine, tp_manifest_shift).
 */
#ifndef TB_TP_MANIFEST_H
#define TB_TP_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp;

/* ---- the JSON tree (json.c) ------------------------------------------------ */

enum tp_mjson_type {
	TP_MJSON_NULL,
	TP_MJSON_BOOL,
	TP_MJSON_INT,    /* an integer that fits int64 */
	TP_MJSON_NUMBER, /* any other number */
	TP_MJSON_STRING,
	TP_MJSON_ARRAY,
	TP_MJSON_OBJECT,
};

struct tp_mjson {
	enum tp_mjson_type type;
	int64_t i;                     /* INT, BOOL */
	double d;                      /* NUMBER (and INT) */
	char *s;                       /* STRING: decoded, NUL-terminated */
	char *key;                     /* the member's key when the parent is an object */
	struct tp_mjson *child, *next; /* ARRAY/OBJECT: first element; siblings */
};

/* Parse n bytes of JSON (one value, whitespace around it) into a tree
 * allocated from *arena; NULL with a message in err when it is not JSON.
 * Nesting deeper than 64 is refused. */
struct arena;
struct tp_mjson *tp_mjson_parse(struct arena *arena, const uint8_t *p, size_t n, char *err,
                                size_t errlen);
/* The member of object o named key, or NULL. */
const struct tp_mjson *tp_mjson_get(const struct tp_mjson *o, const char *key);

/* ---- the manifest (manifest.c) --------------------------------------------- */

struct tp_mf_machine_id {
	int64_t id;       /* embedded machine id, 0 .. 2^32 - 1 */
	const char *name; /* the machine's name */
};

struct tp_mf_file {
	const char *path;
	const char *machine;               /* machine.name, or NULL */
	struct tp_mf_machine_id *machines; /* the machines block */
	size_t nmachines;
	bool has_machines;
	bool has_clocks;
	uint32_t clock;            /* clocks.clock, 0 when omitted (pin) */
	const char *clock_machine; /* clocks.machine */
	const char *sync_file, *sync_machine;
	uint32_t sync_clock; /* 0: the reference file's private timeline */
	int64_t offset_ns;
};

struct tp_mf_attr {
	const char *key;
	bool is_int;
	int64_t i;
	const char *s;
};

struct tp_manifest {
	uint32_t trace_clock; /* trace_time.clock, 0 none */
	const char *tt_file, *tt_machine;
	struct tp_mf_file *files;
	size_t nfiles;
	struct tp_mf_attr *attrs;
	size_t nattrs;
	struct arena *arena; /* owns everything above */
};

/* Does this prefix look like a manifest (`{"perfetto_manifest"` after
 * whitespace)? */
bool tp_manifest_sniff(const uint8_t *p, size_t n);
/* Parse and validate a manifest document. 0 and *out (free with
 * tp_manifest_free), or -EINVAL with Perfetto's one-line message in err
 * ("perfetto_manifest: ..."). Checks that need the traces themselves are
 * in align.c. */
int tp_manifest_parse(const uint8_t *p, size_t n, struct tp_manifest **out, char *err,
                      size_t errlen);
void tp_manifest_free(struct tp_manifest *m);
/* The entry of files[] whose path is name, or NULL. */
const struct tp_mf_file *tp_manifest_file(const struct tp_manifest *m, const char *name);
/* Builtin clock id of a manifest clock name (REALTIME ... BOOTTIME), 0 if
 * unknown. */
uint32_t tp_manifest_clock_id(const char *name);
/* The name of builtin clock id 1 ... 6, NULL for any other. */
const char *tp_manifest_clock_name(uint32_t id);

/* The importer of a manifest file (trace_type "perfetto_manifest"); tp.c
 * sniffs for it before the formats of importers/importers.c. */
struct tp_importer_ops;
extern const struct tp_importer_ops tp_manifest_importer;

/* ---- the plan of an archive (align.c) -------------------------------------- */

/* A member as tp.c sees it before importing anything. */
struct tp_mf_member {
	const char *name;
	const uint8_t *data;
	size_t len;
	bool is_proto, is_manifest, is_container;
};

/* Build the plan of the archive's members (in processing order) under the
 * manifest tp->manifest (which it takes over): machines get their rows
 * (named, raw ids from 2^32), the protobuf members are scanned for machine
 * ids and clock snapshots, and every (member, machine) gets its shift onto
 * the merged timeline. 0, or a negative code after tp_fail(). */
int tp_manifest_plan(struct tp *tp, const struct tp_mf_member *ms, size_t n);
/* Before member i (index into the array given to tp_manifest_plan) is
 * imported: make its machine current, set what the proto importer asks. */
void tp_manifest_begin_member(struct tp *tp, size_t i);
/* The shift the sorter adds to a non-protobuf member's timestamps. */
int64_t tp_manifest_member_shift(struct tp *tp, size_t i);
/* The machine row for an embedded machine id of the member being imported:
 * true and *row when the manifest decides it; false to use the default.
 * Sets an error (and returns true with *row 0) for an undeclared id. */
bool tp_manifest_machine(struct tp *tp, uint64_t raw, uint32_t *row);
/* How many clock_snapshot snapshot ids the manifest's `clocks` entries
 * took (0 .. n - 1): the members' own snapshots are numbered after them. */
int64_t tp_manifest_snapshot_ids(struct tp *tp);
/* The shift of the current member's timestamps on embedded machine raw
 * (after its own clock conversion); *drop when its clock cannot be placed
 * on the merged timeline (its events are dropped). */
int64_t tp_manifest_shift(struct tp *tp, uint64_t raw, bool *drop);
/* The trace clock the current member converts to (0: its own choice). */
uint32_t tp_manifest_trace_clock(struct tp *tp);
void tp_manifest_plan_free(struct tp *tp);

#endif /* TB_TP_MANIFEST_H */
