/*
 * ftrace benchmark: traced_probes' per-event cost of turning ring-buffer
 * pages into an FtraceEventBundle (page walk, field decoding, protobuf
 * writes), the budget of DESIGN.md §6 (<= 30 ns per event; Perfetto's
 * traced_probes spends about 37). Pages are built in the kernel's ring
 * buffer format and filled with sched_switch records, using this machine's
 * events/header_page and sched_switch format when tracefs is readable
 * (synthesized copies of x86-64's otherwise). Both encodings are timed:
 * individual FtraceEvents and compact_sched. Prints figures only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "pb.h"
#include "probes.h"

#define NPAGES 2048
#define REPS 20

static const char k_header_page[] =
	"\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	"\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
	"\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	"\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

static const char k_sched_switch[] =
	"name: sched_switch\nID: 372\nformat:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
	"\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
	"\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
	"\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n";

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	if (!f)
		return NULL;
	buf = tb_malloc(65536);
	*len = fread(buf, 1, 65535, f);
	fclose(f);
	buf[*len] = 0;
	if (*len == 0) {
		tb_free(buf);
		return NULL;
	}
	return buf;
}

/* Header page and sched_switch format: the kernel's, else ours. */
static const char *load_table(struct ftrace_table *t)
{
	struct tb_err err = {0};
	size_t hl = 0, fl = 0;
	char *hp = slurp("/sys/kernel/tracing/events/header_page", &hl);
	char *fmt = slurp("/sys/kernel/tracing/events/sched/sched_switch/format", &fl);
	const char *src = "this kernel's tracefs";

	ftrace_table_init(t);
	if (!hp || !fmt || ftrace_parse_header_page(hp, hl, &t->layout, &err) < 0 ||
	    ftrace_table_add_format(t, "sched", fmt, fl, &err) < 0) {
		ftrace_table_release(t);
		ftrace_table_init(t);
		src = "synthesized x86-64 formats";
		if (ftrace_parse_header_page(k_header_page, sizeof k_header_page - 1, &t->layout,
					     &err) < 0 ||
		    ftrace_table_add_format(t, "sched", k_sched_switch, sizeof k_sched_switch - 1,
					    &err) < 0) {
			fprintf(stderr, "ftrace_bench: %s\n", err.msg);
			exit(1);
		}
	}
	tb_free(hp);
	tb_free(fmt);
	return src;
}

static void put_field(uint8_t *rec, const struct ftrace_event_format *f, const char *name,
		      const void *v, size_t n)
{
	const struct ftrace_field *fd = ftrace_format_field(f, name);
	if (fd && n <= fd->size)
		memcpy(rec + fd->offset, v, n);
}

/* NPAGES pages of sched_switch records among 8 threads; returns events. */
static size_t build_pages(const struct ftrace_table *t, uint8_t *buf)
{
	const struct ftrace_event_format *f = t->events.data[0];
	const struct ftrace_page_layout *l = &t->layout;
	size_t rec_len = 0, events = 0;
	uint64_t ts = 1000000000ull;

	for (size_t i = 0; i < f->n_fields; i++)
		if ((size_t)f->fields[i].offset + f->fields[i].size > rec_len)
			rec_len = (size_t)f->fields[i].offset + f->fields[i].size;
	rec_len = (rec_len + 3) & ~(size_t)3;
	for (size_t pg = 0; pg < NPAGES; pg++) {
		uint8_t *page = buf + pg * l->page_size, *p = page + l->data_off;
		uint64_t commit;
		memset(page, 0, l->page_size);
		memcpy(page + l->ts_off, &ts, 8);
		while ((size_t)(p - page) + 4 + rec_len <= l->page_size) {
			uint8_t rec[256] = {0};
			char prev[16], next[16];
			int32_t prev_pid = 1000 + (int32_t)(events % 8);
			int32_t next_pid = 1000 + (int32_t)((events + 1) % 8), prio = 120;
			int64_t state = (int64_t)(events & 1);
			uint16_t id = (uint16_t)f->id;
			uint32_t delta = 700 + (uint32_t)(events % 300), hdr;

			snprintf(prev, sizeof prev, "tb-spin-%d", (int)(events % 8));
			snprintf(next, sizeof next, "tb-spin-%d", (int)((events + 1) % 8));
			put_field(rec, f, "common_type", &id, 2);
			put_field(rec, f, "common_pid", &prev_pid, 4);
			put_field(rec, f, "prev_comm", prev, strlen(prev));
			put_field(rec, f, "prev_pid", &prev_pid, 4);
			put_field(rec, f, "prev_prio", &prio, 4);
			put_field(rec, f, "prev_state", &state, 8);
			put_field(rec, f, "next_comm", next, strlen(next));
			put_field(rec, f, "next_pid", &next_pid, 4);
			put_field(rec, f, "next_prio", &prio, 4);
			hdr = (uint32_t)(rec_len / 4) | delta << 5;
			memcpy(p, &hdr, 4);
			memcpy(p + 4, rec, rec_len);
			p += 4 + rec_len;
			ts += delta;
			events++;
		}
		commit = (uint64_t)(p - page - l->data_off);
		memcpy(page + l->commit_off, &commit, l->commit_size);
	}
	return events;
}

static void run(const char *what, const struct ftrace_table *t, const uint8_t *pages,
		size_t events, bool compact)
{
	size_t cap = NPAGES * (size_t)t->layout.page_size * 2;
	uint8_t *out = tb_malloc(cap);
	struct ftrace_encode_opts o = {.compact_sched = compact};
	double best = 1e9;
	size_t bytes = 0;

	for (int rep = 0; rep < REPS; rep++) {
		struct ftrace_encode_stats st = {0};
		struct pb_writer w;
		double t0;
		pb_writer_init_fixed(&w, out, cap);
		t0 = now_s();
		/* One bundle per 64 pages, as a drain of a busy CPU writes. */
		for (size_t pg = 0; pg < NPAGES; pg += 64) {
			unsigned h = pb_begin_nested(&w, 1);
			ftrace_encode_bundle_opts(&w, t, &o, 0, pages + pg * t->layout.page_size,
						  64 * (size_t)t->layout.page_size, &st);
			pb_end_nested(&w, h);
		}
		t0 = now_s() - t0;
		if (pb_writer_error(&w) || st.events != events) {
			fprintf(stderr, "ftrace_bench: encode failed (%llu of %zu events)\n",
				(unsigned long long)st.events, events);
			exit(1);
		}
		if (t0 < best)
			best = t0;
		bytes = pb_writer_size(&w);
	}
	printf("%-34s %6.1f ns/event  %5.1f bytes/event  (%zu events, best of %d)\n", what,
	       best * 1e9 / (double)events, (double)bytes / (double)events, events, REPS);
	ftrace_encode_opts_release(&o);
	tb_free(out);
}

/* The floor: walking the records without decoding them. */
static void run_walk(const struct ftrace_table *t, const uint8_t *pages, size_t events)
{
	double best = 1e9;
	uint64_t sum = 0;
	for (int rep = 0; rep < REPS; rep++) {
		double t0 = now_s();
		for (size_t pg = 0; pg < NPAGES; pg++) {
			struct ftrace_page_iter it;
			struct ftrace_record rec;
			ftrace_page_begin(&it, &t->layout, pages + pg * t->layout.page_size,
					  t->layout.page_size);
			while (ftrace_page_next(&it, &rec))
				sum += rec.ts;
		}
		t0 = now_s() - t0;
		if (t0 < best)
			best = t0;
	}
	printf("%-34s %6.1f ns/event  (checksum %llu)\n", "page walk only", best * 1e9 / (double)events,
	       (unsigned long long)(sum & 0xff));
}

int main(void)
{
	struct ftrace_table t;
	const char *src = load_table(&t);
	uint8_t *pages = tb_malloc(NPAGES * (size_t)t.layout.page_size);
	size_t events = build_pages(&t, pages);

	printf("pages of sched_switch built from %s (%u-byte pages)\n", src, t.layout.page_size);
	run_walk(&t, pages, events);
	run("sched_switch -> FtraceEvent", &t, pages, events, false);
	run("sched_switch -> compact_sched", &t, pages, events, true);
	tb_free(pages);
	ftrace_table_release(&t);
	return 0;
}
