/*
 * Fuzz target for components/probes/ftrace/page.c and encode.c: the input
 * is a run of ring-buffer pages (4096 bytes each, the last one short) parsed
 * with a fixed synthetic event set (sched_switch, print, and a generic event
 * with every field kind, as a 6.x x86-64 kernel describes them), encoded
 * into an FtraceEventBundle and walked again with the pb reader. Any read
 * outside the input is a bug: the pages come from the kernel, but a
 * truncated or corrupted one must never crash traced_probes.
 *
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/ftrace_page/ in every CI build.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "pb.h"
#include "probes_int.h"

static const char k_header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

#define COMMON_FIELDS                                                                  \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char *const k_formats[][2] = {
    {"sched", "name: sched_switch\nID: 1\nformat:\n" COMMON_FIELDS
              "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
              "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
              "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
              "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
              "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
              "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
              "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"},
    {"ftrace", "name: print\nID: 2\nformat:\n" COMMON_FIELDS
               "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
               "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n"},
    {"sched", "name: sched_process_exec\nID: 3\nformat:\n" COMMON_FIELDS
              "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
              "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
              "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"},
    {"sched", "name: sched_waking\nID: 5\nformat:\n" COMMON_FIELDS
              "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
              "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
              "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
              "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"},
    {"tb", "name: tb_test\nID: 4\nformat:\n" COMMON_FIELDS
           "\tfield:int delta;\toffset:8;\tsize:4;\tsigned:1;\n"
           "\tfield:unsigned long addr;\toffset:16;\tsize:8;\tsigned:0;\n"
           "\tfield:char tag[8];\toffset:24;\tsize:8;\tsigned:0;\n"
           "\tfield:__data_loc char[] path;\toffset:32;\tsize:4;\tsigned:0;\n"
           "\tfield:u8 mac[4];\toffset:36;\tsize:4;\tsigned:0;\n"
           "\tfield:__data_loc u8[] raw;\toffset:40;\tsize:4;\tsigned:0;\n"
           "\tfield:__rel_loc char[] rel;\toffset:44;\tsize:4;\tsigned:0;\n"
           "\tfield:s16 arr[3];\toffset:48;\tsize:6;\tsigned:1;\n"},
};

static struct ftrace_table g_table;
static bool g_ready;

static void setup(void)
{
	struct tb_err err = {0};
	probes_ftrace_table_init(&g_table);
	if (probes_ftrace_parse_header_page(k_header_page, strlen(k_header_page), &g_table.layout,
	                                    &err) < 0)
		abort();
	for (size_t i = 0; i < TB_ARRAY_SIZE(k_formats); i++)
		if (probes_ftrace_table_add_format(&g_table, k_formats[i][0], k_formats[i][1],
		                                   strlen(k_formats[i][1]), &err) < 0)
			abort();
	g_ready = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct probes_ftrace_encode_stats st = {0};
	struct pb_writer w;
	struct pb_reader r;
	struct pb_field f;
	uint8_t *copy;

	if (!g_ready)
		setup();
	/* An exact-size heap copy, so ASan sees any read past the input. */
	copy = tb_memdup(data, size ? size : 1);
	pb_writer_init_growable(&w);
	/* Both encodings: plain events, then compact_sched collecting the
	 * pids events mention (each > 0, once). */
	for (int compact = 0; compact < 2; compact++) {
		static struct ftrace_pids pids;
		struct ftrace_encode_opts o = {.compact_sched = compact != 0,
		                               .pids = compact ? &pids : NULL};
		pb_writer_init_growable(&w);
		probes_ftrace_encode_bundle_opts(&w, &g_table, &o, 0, copy, size, &st);
		probes_ftrace_encode_opts_release(&o);
		for (size_t i = 0; i < pids.pids.len; i++)
			for (size_t j = 0; j <= i; j++)
				if (pids.pids.data[i] <= 0 ||
				    (j < i && pids.pids.data[j] == pids.pids.data[i]))
					abort();
		probes_ftrace_pids_clear(&pids);
		if (pb_writer_error(&w) != 0)
			abort();
		pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
		while (pb_next(&r, &f))
			;
		if (pb_reader_error(&r) != PB_OK)
			abort();
		pb_writer_release(&w);
	}
	tb_free(copy);
	return 0;
}
