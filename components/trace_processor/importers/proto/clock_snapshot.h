/*
 * One ClockSnapshot message decoded (clocks.c): the clocks it lists and its
 * primary trace clock. Shared by the protobuf importer's clock graph and the
 * manifest importer's alignment across archive members.
 */
#ifndef TB_TP_PROTO_CLOCK_SNAPSHOT_H
#define TB_TP_PROTO_CLOCK_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One ClockSnapshot.Clock: raw timestamp in its units, the units in ns. */
struct tp_clock_reading {
	uint64_t id;
	uint64_t ts;
	uint64_t mult;
	bool incremental;
};

/* Decodes the snapshot p[0..n): at most cap clocks into out (in message
 * order; later ones are dropped), returns how many. *primary gets
 * primary_trace_clock when the message sets it (untouched otherwise);
 * primary may be NULL. */
size_t tp_clock_snapshot_read(const uint8_t *p, size_t n, struct tp_clock_reading *out, size_t cap,
                              uint32_t *primary);

#endif
