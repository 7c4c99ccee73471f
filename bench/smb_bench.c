/*
 * SMB benchmark (DESIGN.md §6: producer write path <= 60 ns per small track
 * event; Perfetto's SDK takes 150-260 ns). Prints figures only.
 *
 * 1. Producer write cost: TrackEvent slices (tracing_te_begin/end, interned
 *    names) and raw small packets through the real trace writer into a real
 *    SMB (memfd, 256 KiB of 4 KiB pages, Perfetto's defaults). Committed
 *    chunks are handed straight back (acquire for reading + release, what
 *    the service does around its copy), so the SMB never fills.
 * 2. Service throughput, SMB to file: gated captures of out/tools/
 *    test_producer (1 and 4 producers, 1M slices in all, at full speed)
 *    through a private traced with write_into_file; MB/s = trace file bytes
 *    / (capture time - the time of the same capture with nothing written).
 *
 * Run with ./build.sh bench smb (it builds out/tracebox and out/tools/).
 * `out/bench/smb_bench producer [EVENTS]` measures the producer side only
 * (for perf stat / valgrind --tool=callgrind: instructions per event).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base.h"
#include "pb.h"
#include "tracing.h"

#define DEFAULT_EVENTS 4000000
#define TOTAL_SLICES 1000000

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The service's side of a commit, minus the copy: take the chunk and free
 * it. */
static void release_chunk(void *ctx, const struct tracing_commit *c)
{
	struct tracing_smb *smb = ctx;
	struct tracing_chunk ch;
	if (c->has_chunk && tracing_chunk_acquire_for_reading(smb, c->page, c->chunk, &ch) == 0)
		tracing_chunk_release(smb, c->page, c->chunk, false);
}

static const char *const names[16] = {
    "slice0", "slice1", "slice2",  "slice3",  "slice4",  "slice5",  "slice6",  "slice7",
    "slice8", "slice9", "slice10", "slice11", "slice12", "slice13", "slice14", "slice15",
};

static uint64_t events = DEFAULT_EVENTS;

/* ns per event of `events` events written by fn (best of three). */

static double time_events(struct tracing_smb *smb, int raw)
{
	double best = 1e9;
	for (int rep = 0; rep < 3; rep++) {
		struct tracing_writer *w = tracing_writer_new(smb, 1, 1, release_chunk, smb);
		struct tracing_te *te = tracing_te_new(w, 1234, "bench", 1, 1);
		double t0 = now_s(), t;
		for (uint64_t i = 0; i < events; i += 2) {
			if (raw) {
				for (int k = 0; k < 2; k++) {
					struct pb_writer *pw = tracing_writer_begin_packet(w);
					unsigned m;
					pb_put_uint64(pw, 8, 1000 + i + (uint64_t)k);
					pb_put_uint32(pw, 13, 2);
					m = pb_begin_nested(pw, 11);
					pb_put_int32(pw, 9, 1 + k);
					pb_put_uint64(pw, 11, 1234);
					pb_put_uint64(pw, 10, (i & 15) + 1);
					pb_end_nested(pw, m);
					tracing_writer_end_packet(w);
				}
			} else {
				tracing_te_begin(te, 1000 + i, names[(i >> 1) & 15]);
				tracing_te_end(te, 1001 + i);
			}
		}
		t = now_s() - t0;
		if (t < best)
			best = t;
		if (tracing_writer_stats(w)->packets_dropped)
			printf("  (%" PRIu64 " packets dropped: SMB exhausted)\n",
			       tracing_writer_stats(w)->packets_dropped);
		tracing_te_free(te);
		tracing_writer_free(w);
	}
	return best * 1e9 / (double)events;
}

/* One gated capture of n producers writing slices each; its wall time, the
 * trace size and packets_lost from the status line. 0 or -1. */
static int capture(int n, uint64_t slices, double *secs, uint64_t *bytes, uint64_t *lost)
{
	char cmd[1024], line[512];
	struct stat st;
	FILE *f;
	double t0;
	int rc;
	snprintf(
	    cmd, sizeof cmd,
	    "TRACEBOX_LOG=error out/tracebox --txt -c out/bench/smb.pbtx -o out/bench/smb.pftrace "
	    "-- sh -c 'i=0; while [ $i -lt %d ]; do out/tools/test_producer --slices %" PRIu64
	    " >/dev/null & i=$((i+1)); done; wait' 2>out/bench/smb.status",
	    n, slices);
	t0 = now_s();
	rc = system(cmd);
	*secs = now_s() - t0;
	if (rc != 0 || stat("out/bench/smb.pftrace", &st) != 0)
		return -1;
	*bytes = (uint64_t)st.st_size;
	*lost = 0;
	if ((f = fopen("out/bench/smb.status", "r"))) {
		while (fgets(line, sizeof line, f)) {
			const char *p = strstr(line, "packets_lost=");
			if (strncmp(line, "workload_status=", 16) == 0 && p)
				*lost = strtoull(p + 13, NULL, 10);
		}
		fclose(f);
	}
	remove("out/bench/smb.pftrace");
	return 0;
}

static void service_throughput(void)
{
	static const char cfg[] = "buffers { size_kb: 131072 fill_policy: DISCARD }\n"
	                          "write_into_file: true\n"
	                          "file_write_period_ms: 100\n"
	                          "data_sources { config { name: \"tb.test\" } }\n";
	FILE *f = fopen("out/bench/smb.pbtx", "w");
	double base = 1e9, secs;
	uint64_t bytes, lost;
	static const int producers[] = {1, 4};

	if (!f || fputs(cfg, f) < 0 || fclose(f) != 0) {
		printf("service: cannot write out/bench/smb.pbtx\n");
		return;
	}
	for (int rep = 0; rep < 3; rep++)
		if (capture(1, 0, &secs, &bytes, &lost) == 0 && secs < base)
			base = secs;
	if (base == 1e9) {
		printf("service: the capture failed (are out/tracebox and out/tools/test_producer "
		       "built?)\n");
		return;
	}
	printf("service: an empty gated capture takes %.0f ms (subtracted below)\n", base * 1e3);
	for (size_t i = 0; i < TB_ARRAY_SIZE(producers); i++) {
		double best = 1e9;
		uint64_t best_bytes = 0, best_lost = 0;
		for (int rep = 0; rep < 3; rep++) {
			if (capture(producers[i], TOTAL_SLICES / (uint64_t)producers[i], &secs,
			            &bytes, &lost) == 0 &&
			    secs < best) {
				best = secs;
				best_bytes = bytes;
				best_lost = lost;
			}
		}
		if (best == 1e9 || best <= base) {
			printf("service: %d producer(s): capture failed\n", producers[i]);
			continue;
		}
		printf("service: %d producer(s), %d slices: %.1f MB to file in %.0f ms: %.0f MB/s "
		       "SMB to file (%" PRIu64 " chunks lost)\n",
		       producers[i], TOTAL_SLICES, (double)best_bytes / 1e6, (best - base) * 1e3,
		       (double)best_bytes / 1e6 / (best - base), best_lost);
	}
}

int main(int argc, char **argv)
{
	struct tracing_smb *smb = NULL;
	struct tb_err err = {0};
	bool producer_only = argc > 1 && strcmp(argv[1], "producer") == 0;

	if (producer_only && argc > 2 && strtoull(argv[2], NULL, 10) >= 2)
		events = strtoull(argv[2], NULL, 10);

	if (tracing_smb_create(256 << 10, 4096, &smb, &err)) {
		printf("cannot create the SMB: %s\n", err.msg);
		return 1;
	}
	printf("producer: %.1f ns per small track event (TrackEvent begin/end, interned names, "
	       "%" PRIu64 " events)\n",
	       time_events(smb, 0), events);
	printf("producer: %.1f ns per small packet (raw writer, the same fields pre-interned)\n",
	       time_events(smb, 1));
	tracing_smb_free(smb);
	if (!producer_only)
		service_throughput();
	return 0;
}
