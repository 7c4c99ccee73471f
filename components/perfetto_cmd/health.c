/*
 * health.c: what a finished trace file holds, for the status line of a
 * gated capture: how many perf samples were recorded, skipped, recorded
 * without a callstack, and how many records the kernel dropped. The file is
 * read once, in blocks, as the Trace it is:
 *
 *   Trace       = { 0x0A varint(len) TracePacket }*
 *   TracePacket : 66 perf_sample (LEN) { 2 pid, 3 tid, 4 callstack_iid,
 *                                         17 kernel_records_lost,
 *                                         18 sample_skipped_reason }
 *
 * A PerfSample with kernel_records_lost is a loss report, not a sample; one
 * with sample_skipped_reason NOT_IN_SCOPE (4) is another process' CPU time
 * (Perfetto's system-wide scoping), counted nowhere; any other reason is a
 * skipped sample. Packets are read whole only when they may hold a
 * PerfSample (up to PERFETTO_CMD_SCAN_MAX_PACKET); others are skipped over.
 * Compressed packets (compressed_packets) are not opened: the recorder
 * never asks the service to compress.
 */
#include "perfetto_cmd_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "pb.h"
#include "pb_fields.h"

#define PERFETTO_CMD_SCAN_BLOCK ((size_t)1 << 20)
#define PERFETTO_CMD_SCAN_MAX_PACKET ((size_t)16 << 20)

static void count_perf_sample(const uint8_t *p, size_t n, struct perfetto_cmd_trace_counts *c)
{
	struct pb_reader r;
	struct pb_field f = {0};
	bool has_task = false, has_cs = false, has_lost = false, skipped = false;
	uint64_t reason = 0;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.wire != PB_WIRE_VARINT)
			continue;
		if (f.id == PB_F_PerfSample_pid || f.id == PB_F_PerfSample_tid)
			has_task = true;
		else if (f.id == PB_F_PerfSample_callstack_iid)
			has_cs = f.val != 0;
		else if (f.id == PB_F_PerfSample_kernel_records_lost)
			has_lost = true, c->lost_records += f.val;
		else if (f.id == PB_F_PerfSample_sample_skipped_reason)
			skipped = true, reason = f.val;
	}
	if (pb_reader_error(&r) || (has_lost && !has_task))
		return;
	if (skipped) {
		if (reason != PB_E_PerfSample_SampleSkipReason_PROFILER_SKIP_NOT_IN_SCOPE)
			c->samples_skipped++;
		return;
	}
	c->samples++;
	if (!has_cs)
		c->samples_without_callsite++;
}

static void count_packet(const uint8_t *p, size_t n, struct perfetto_cmd_trace_counts *c)
{
	struct pb_reader r;
	struct pb_field f = {0};
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_TracePacket_perf_sample && f.wire == PB_WIRE_LEN)
			count_perf_sample(f.data, f.len, c);
}

void perfetto_cmd_trace_counts_mem(const uint8_t *p, size_t n, struct perfetto_cmd_trace_counts *c)
{
	struct pb_reader r;
	struct pb_field f = {0};
	memset(c, 0, sizeof *c);
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f))
		if (f.id == PB_F_Trace_packet && f.wire == PB_WIRE_LEN)
			count_packet(f.data, f.len, c);
}

/* A varint at p[0, n): its value and length, 0 when incomplete or bad. */
static size_t varint(const uint8_t *p, size_t n, uint64_t *v)
{
	*v = 0;
	for (size_t i = 0; i < n && i < 10; i++) {
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			return i + 1;
	}
	return 0;
}

int perfetto_cmd_trace_counts(const char *path, struct perfetto_cmd_trace_counts *c,
                              struct tb_err *err)
{
	const size_t cap = PERFETTO_CMD_SCAN_MAX_PACKET + 16;
	uint8_t *buf = NULL;
	size_t have = 0;
	uint64_t skip = 0;
	bool eof = false, bad = false;
	int fd, rc = 0;

	memset(c, 0, sizeof *c);
	if ((fd = tb_open_regular(path, 0, NULL, err)) < 0)
		return fd;
	buf = tb_malloc(cap);
	while (!eof && !bad) {
		ssize_t n = tb_read_all(fd, buf + have, cap - have);
		if (n < 0) {
			rc = tb_err_errno(err, (int)n, "cannot read '%s'", path);
			break;
		}
		eof = (size_t)n < cap - have;
		have += (size_t)n;
		size_t off = 0;
		for (;;) {
			uint64_t len;
			size_t h;
			if (skip) { /* the rest of a packet too large to hold */
				size_t k = skip < have - off ? (size_t)skip : have - off;
				off += k, skip -= k;
				if (skip)
					break;
				continue;
			}
			if (have - off < 2)
				break;
			if (buf[off] != 0x0a) {
				bad = true; /* not a Trace any more */
				break;
			}
			if (!(h = varint(buf + off + 1, have - off - 1, &len))) {
				bad = have - off - 1 >= 10;
				break;
			}
			if (len > PERFETTO_CMD_SCAN_MAX_PACKET) {
				off += 1 + h;
				skip = len;
				continue;
			}
			if (1 + h + len > have - off)
				break; /* the rest comes with the next read */
			count_packet(buf + off + 1 + h, (size_t)len, c);
			off += 1 + h + (size_t)len;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
	}
	tb_free(buf);
	tb_close(&fd);
	return rc;
}
