/*
 * test_producer: a Perfetto producer for the recording tests, built by
 * build.sh into out/tools/ (not an applet). It connects to the producer
 * socket (PERFETTO_PRODUCER_SOCK_NAME, as every producer), registers the
 * data source "tb.test" (handles_incremental_state_clear) and, once the
 * service starts it, writes a known sequence at full speed through the
 * producer library's TrackEvent writer:
 *
 *   slice i (0 <= i < N): begin at base + 2i ns, end at base + 2i + 1 ns,
 *                         named "slice<i % 16>", on the thread track
 *
 * in batches; between batches it commits and goes back to its loop, where
 * it waits while fewer than half of the SMB's pages are free (a stall
 * policy, so that a big enough DISCARD buffer loses nothing). At the end it
 * syncs with the service (every commit processed), prints
 * `written=N dropped=M` (writer packets lost to SMB exhaustion) and exits 0.
 *
 *   test_producer [--slices N] [--batch N] [--pause-ms N] [--kill-after N]
 *
 * --pause-ms N: after each batch, run the loop for N ms (a paced producer,
 * so that a ring buffer's window spans several ClearIncrementalState
 * periods).
 * --kill-after N: after N slices, start a packet, write part of it and
 * SIGKILL itself (a producer dying mid-write).
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "tracing.h"
#include "pb_fields.h"

#define TRACK_UUID 0x7b
#define SMB_BYTES (8u << 20)
#define SMB_PAGE (32u << 10)

struct tp {
	struct loop *l;
	struct tracing_producer *p;
	struct tracing_writer *w;
	struct tracing_te *te;
	uint64_t slices, batch, kill_after, pause_ms, done_slices;
	uint64_t base;
	bool started, finished;
	int rc;
};

static const char *const names[16] = {
    "slice0", "slice1", "slice2",  "slice3",  "slice4",  "slice5",  "slice6",  "slice7",
    "slice8", "slice9", "slice10", "slice11", "slice12", "slice13", "slice14", "slice15",
};

static void on_start(void *ctx, struct tracing_producer *p, uint64_t id, const uint8_t *cfg,
                     size_t len, uint32_t target_buffer)
{
	struct tp *t = ctx;
	if (t->w)
		return;
	t->w = tracing_producer_new_writer(p, target_buffer);
	t->te = t->w ? tracing_te_new(t->w, TRACK_UUID, "test_producer", getpid(), gettid()) : NULL;
	t->started = t->te != NULL;
	t->base = (uint64_t)tb_boot_ns();
}

static void on_clear(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n)
{
	struct tp *t = ctx;
	if (t->te)
		tracing_te_clear(t->te);
}

static void on_disconnect(void *ctx, struct tracing_producer *p)
{
	struct tp *t = ctx;
	fprintf(stderr, "test_producer: %s\n", tracing_producer_err(p)->msg);
	t->rc = 1;
	loop_quit(t->l, 1);
}

static void on_synced(void *ctx, bool ok)
{
	struct tp *t = ctx;
	t->finished = true;
	loop_quit(t->l, ok ? 0 : 1);
}

/* Half of the SMB's pages free (a page all of whose chunks are free goes
 * back to "not partitioned", bitmap 0). */
static bool smb_has_room(struct tracing_producer *p)
{
	struct tracing_smb *smb = tracing_producer_smb(p);
	size_t n = tracing_smb_num_pages(smb), free_pages = 0;
	for (size_t i = 0; i < n; i++)
		free_pages += tracing_page_bitmap(smb, (uint32_t)i) == 0;
	return free_pages * 2 >= n;
}

static void die_mid_packet(struct tp *t)
{
	struct pb_writer *w;
	tracing_producer_commit(t->p);
	w = tracing_writer_begin_packet(t->w);
	pb_put_uint64(w, PB_F_TracePacket_timestamp, t->base);
	pb_begin_nested(w, PB_F_TracePacket_track_event); /* never closed */
	pb_put_uint32(w, PB_F_TrackEvent_type, PB_E_TrackEvent_Type_TYPE_SLICE_BEGIN);
	raise(SIGKILL);
}

static void write_batch(struct tp *t)
{
	uint64_t end = t->done_slices + t->batch;
	if (end > t->slices)
		end = t->slices;
	for (uint64_t i = t->done_slices; i < end; i++) {
		if (t->kill_after && i == t->kill_after)
			die_mid_packet(t);
		tracing_te_begin(t->te, t->base + 2 * i, names[i & 15]);
		tracing_te_end(t->te, t->base + 2 * i + 1);
	}
	t->done_slices = end;
	tracing_producer_commit(t->p);
	if (t->pause_ms) {
		int64_t until = tb_mono_ns() + (int64_t)t->pause_ms * 1000000;
		while (!t->rc && tb_mono_ns() < until)
			loop_run_once(t->l, 1);
	}
}

static uint64_t arg_u64(const char *s)
{
	char *end;
	unsigned long long v = strtoull(s, &end, 10);
	if (*s == '\0' || *end) {
		fprintf(stderr, "test_producer: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	struct tp t = {.slices = 1000, .batch = 1000};
	struct tracing_producer_opts o = {0};
	struct tb_err err = {0};

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--slices") == 0)
			t.slices = arg_u64(argv[i + 1]);
		else if (strcmp(argv[i], "--batch") == 0)
			t.batch = arg_u64(argv[i + 1]);
		else if (strcmp(argv[i], "--pause-ms") == 0)
			t.pause_ms = arg_u64(argv[i + 1]);
		else if (strcmp(argv[i], "--kill-after") == 0)
			t.kill_after = arg_u64(argv[i + 1]);
		else {
			fprintf(stderr, "usage: test_producer [--slices N] [--batch N] "
			                "[--pause-ms N] [--kill-after N]\n");
			return 2;
		}
	}
	if (t.batch == 0)
		t.batch = 1;
	if (!(t.l = loop_new(&err))) {
		fprintf(stderr, "test_producer: %s\n", err.msg);
		return 1;
	}
	o.name = "tb.test_producer";
	o.smb_size_hint = SMB_BYTES;
	o.smb_page_hint = SMB_PAGE;
	o.ctx = &t;
	o.start = on_start;
	o.clear_incremental_state = on_clear;
	o.on_disconnect = on_disconnect;
	if (!(t.p = tracing_producer_new(t.l, &o, &err)) ||
	    tracing_producer_register_data_source(t.p, "tb.test", false, false, true)) {
		fprintf(stderr, "test_producer: %s\n", t.p ? "cannot register" : err.msg);
		return 1;
	}
	while (!t.rc && !t.finished) {
		loop_run_once(t.l, t.started ? 0 : 100);
		if (!t.started || t.finished || t.rc)
			continue;
		if (t.done_slices < t.slices) {
			if (smb_has_room(t.p))
				write_batch(&t);
			else
				loop_run_once(t.l, 1);
		} else if (tracing_producer_sync(t.p, on_synced, &t) == 0) {
			t.rc = loop_run(t.l);
			break;
		} else {
			t.rc = 1;
		}
	}
	if (t.w)
		printf("written=%" PRIu64 " dropped=%" PRIu64 "\n", t.done_slices,
		       tracing_writer_stats(t.w)->packets_dropped);
	tracing_te_free(t.te);
	tracing_producer_free(t.p);
	loop_free(t.l);
	return t.rc;
}
