/*
 * pb benchmark: the streaming writer encoding a small track event (the
 * producer write path's budget is <= 60 ns per event, DESIGN.md §6), and
 * the zero-copy reader walking the same bytes. Prints figures only.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "pb.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One TracePacket{timestamp, sequence flags, track_event{type, track_uuid,
 * category_iids, name_iid}} as an SDK writes it. */
static void write_event(struct pb_writer *w, uint64_t ts, int i)
{
	unsigned pkt = pb_begin_nested(w, 1); /* Trace.packet */
	pb_put_uint64(w, 8, ts);
	pb_put_uint32(w, 13, 2);
	unsigned te = pb_begin_nested(w, 11);
	pb_put_int32(w, 9, 1 + (i & 1));
	pb_put_uint64(w, 11, 1234);
	pb_put_uint64(w, 3, 1);
	pb_put_uint64(w, 10, (uint64_t)(i & 15) + 1);
	pb_end_nested(w, te);
	pb_end_nested(w, pkt);
}

static uint64_t walk(const uint8_t *p, size_t n, int depth)
{
	struct pb_reader r;
	struct pb_field f = {0};
	uint64_t sum = 0;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		sum += f.id;
		if (f.wire == PB_WIRE_LEN && depth < 2)
			sum += walk(f.data, f.len, depth + 1);
		else
			sum += f.val;
	}
	return sum;
}

int main(void)
{
	const int n = 2000000;
	static uint8_t buf[64 << 20];
	struct pb_writer w;
	double best = 1e9;
	for (int rep = 0; rep < 3; rep++) {
		pb_writer_init_fixed(&w, buf, sizeof buf);
		double t0 = now_s();
		for (int i = 0; i < n; i++)
			write_event(&w, 1000 + (uint64_t)i * 10, i);
		double t = now_s() - t0;
		if (t < best)
			best = t;
	}
	size_t bytes = pb_writer_size(&w);
	if (pb_writer_error(&w))
		printf("pb writer: buffer too small (%d)\n", pb_writer_error(&w));
	printf("pb writer: %.1f ns per small track event (%d events, %.1f bytes each)\n",
	       best * 1e9 / n, n, (double)bytes / n);
	double t0 = now_s();
	uint64_t sum = walk(buf, bytes, 0);
	double t = now_s() - t0;
	printf("pb reader: %.0f MB/s walking those packets (checksum %llu)\n",
	       (double)bytes / 1e6 / t, (unsigned long long)sum);
	return 0;
}
