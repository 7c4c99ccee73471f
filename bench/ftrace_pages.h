/*
 * Ring-buffer pages of sched events for the benchmarks (ftrace_bench: the
 * encoder; tp_bench: a compact_sched trace to import). Formats are this
 * machine's tracefs ones when readable, else synthesized copies of x86-64's.
 * Pages are filled in the kernel's format: 8 threads per cpu switching
 * round-robin, and, when wakings are asked for, each switch preceded by a
 * sched_waking of the next thread from the running one.
 */
#ifndef TB_BENCH_FTRACE_PAGES_H
#define TB_BENCH_FTRACE_PAGES_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "probes_int.h"

static const char k_header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
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

static const char k_sched_waking[] =
    "name: sched_waking\nID: 375\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n";

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

/* Header page, sched_switch and sched_waking formats: the kernel's, else
 * ours. Returns where they came from. */
static const char *bench_load_table(struct ftrace_table *t)
{
	static const char *const paths[] = {"/sys/kernel/tracing/events/header_page",
	                                    "/sys/kernel/tracing/events/sched/sched_switch/format",
	                                    "/sys/kernel/tracing/events/sched/sched_waking/format"};
	struct tb_err err = {0};
	char *text[3];
	size_t len[3] = {0, 0, 0};
	bool ok = true;

	for (int i = 0; i < 3; i++)
		ok = (text[i] = slurp(paths[i], &len[i])) != NULL && ok;
	probes_ftrace_table_init(t);
	ok = ok && probes_ftrace_parse_header_page(text[0], len[0], &t->layout, &err) == 0 &&
	     probes_ftrace_table_add_format(t, "sched", text[1], len[1], &err) == 0 &&
	     probes_ftrace_table_add_format(t, "sched", text[2], len[2], &err) == 0;
	for (int i = 0; i < 3; i++)
		tb_free(text[i]);
	if (ok)
		return "this kernel's tracefs";
	probes_ftrace_table_release(t);
	probes_ftrace_table_init(t);
	if (probes_ftrace_parse_header_page(k_header_page, sizeof k_header_page - 1, &t->layout,
	                                    &err) < 0 ||
	    probes_ftrace_table_add_format(t, "sched", k_sched_switch, sizeof k_sched_switch - 1,
	                                   &err) < 0 ||
	    probes_ftrace_table_add_format(t, "sched", k_sched_waking, sizeof k_sched_waking - 1,
	                                   &err) < 0) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
	return "synthesized x86-64 formats";
}

static const struct ftrace_event_format *bench_event(const struct ftrace_table *t, const char *name)
{
	for (size_t i = 0; i < t->events.len; i++)
		if (strcmp(t->events.data[i]->name, name) == 0)
			return t->events.data[i];
	fprintf(stderr, "bench: no %s format\n", name);
	exit(1);
}

static void put_field(uint8_t *rec, const struct ftrace_event_format *f, const char *name,
                      const void *v, size_t n)
{
	const struct ftrace_field *fd = probes_ftrace_format_field(f, name);
	if (fd && n <= fd->size)
		memcpy(rec + fd->offset, v, n);
}

/* Bytes of f's records (its last field's end, 4-byte aligned). */
static size_t rec_len(const struct ftrace_event_format *f)
{
	size_t n = 0;
	for (size_t i = 0; i < f->n_fields; i++)
		if ((size_t)f->fields[i].offset + f->fields[i].size > n)
			n = (size_t)f->fields[i].offset + f->fields[i].size;
	return (n + 3) & ~(size_t)3;
}

/* A data record (header with type_len = len / 4, then the payload) at p;
 * returns where the next one goes. */
static uint8_t *put_record(uint8_t *p, const uint8_t *rec, size_t len, uint32_t delta)
{
	uint32_t hdr = (uint32_t)(len / 4) | delta << 5;
	memcpy(p, &hdr, 4);
	memcpy(p + 4, rec, len);
	return p + 4 + len;
}

/* Where page building is: the running thread of the cpu and the clock. */
struct bench_cpu {
	int32_t tid_base; /* threads tid_base .. tid_base + 7 */
	uint64_t n;       /* switches so far */
	uint64_t ts;
};

/* Fill npages pages at buf for one cpu; returns the records written. */
static size_t bench_build_pages(const struct ftrace_table *t, struct bench_cpu *c, bool wakings,
                                uint8_t *buf, size_t npages)
{
	const struct ftrace_event_format *sw = bench_event(t, "sched_switch");
	const struct ftrace_event_format *wk = bench_event(t, "sched_waking");
	const struct ftrace_page_layout *l = &t->layout;
	size_t sw_len = rec_len(sw), wk_len = rec_len(wk), events = 0;
	size_t need = 4 + sw_len + (wakings ? 4 + wk_len : 0);

	for (size_t pg = 0; pg < npages; pg++) {
		uint8_t *page = buf + pg * l->page_size, *p = page + l->data_off;
		uint64_t commit;
		memset(page, 0, l->page_size);
		memcpy(page + l->ts_off, &c->ts, 8);
		while ((size_t)(p - page) + need <= l->page_size) {
			uint8_t rec[256] = {0};
			char prev[16], next[16];
			int32_t prev_pid = c->tid_base + (int32_t)(c->n % 8);
			int32_t next_pid = c->tid_base + (int32_t)((c->n + 1) % 8), prio = 120;
			int32_t cpu = 0;
			int64_t state = (int64_t)(c->n & 1);
			uint16_t id;
			uint32_t delta = 700 + (uint32_t)(c->n % 300);

			snprintf(prev, sizeof prev, "tb-spin-%d", prev_pid);
			snprintf(next, sizeof next, "tb-spin-%d", next_pid);
			if (wakings) {
				id = (uint16_t)wk->id;
				put_field(rec, wk, "common_type", &id, 2);
				put_field(rec, wk, "common_pid", &prev_pid, 4);
				put_field(rec, wk, "comm", next, strlen(next));
				put_field(rec, wk, "pid", &next_pid, 4);
				put_field(rec, wk, "prio", &prio, 4);
				put_field(rec, wk, "target_cpu", &cpu, 4);
				p = put_record(p, rec, wk_len, 100);
				c->ts += 100;
				events++;
				memset(rec, 0, sizeof rec);
			}
			id = (uint16_t)sw->id;
			put_field(rec, sw, "common_type", &id, 2);
			put_field(rec, sw, "common_pid", &prev_pid, 4);
			put_field(rec, sw, "prev_comm", prev, strlen(prev));
			put_field(rec, sw, "prev_pid", &prev_pid, 4);
			put_field(rec, sw, "prev_prio", &prio, 4);
			put_field(rec, sw, "prev_state", &state, 8);
			put_field(rec, sw, "next_comm", next, strlen(next));
			put_field(rec, sw, "next_pid", &next_pid, 4);
			put_field(rec, sw, "next_prio", &prio, 4);
			p = put_record(p, rec, sw_len, delta);
			c->ts += delta;
			c->n++;
			events++;
		}
		commit = (uint64_t)(p - page - l->data_off);
		memcpy(page + l->commit_off, &commit, l->commit_size);
	}
	return events;
}

#endif /* TB_BENCH_FTRACE_PAGES_H */
