/*
 * Unit tests for components/traceconv's report model and its readers: the
 * JSON reader (escapes, errors, depth), the model of a small trace written
 * with traced_perf's own emitter (ranks, self/inclusive, threads, ids), and
 * the inspector's answers over that model, including the end marker of its
 * interactive mode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test.h"

#include "base.h"
#include "pb.h"
#include "pb_fields.h"
#include "perf_int.h"
#include "traceconv_int.h"

TEST(traceconv_json_reader)
{
	struct arena a;
	struct tb_err err = {0};
	struct traceconv_jv v;
	static const char text[] = " {\"a\": [1, -2.5e1, true, null], \"s\": "
	                           "\"x\\n\\u00e9\\ud83d\\ude00\\\"\", \"o\": {}} ";
	arena_init(&a, 0);
	CHECK_EQ(traceconv_jv_parse(text, strlen(text), &a, &v, &err), 0);
	const struct traceconv_jv *arr = traceconv_jv_get(&v, "a");
	CHECK(arr && arr->type == TRACECONV_JV_ARR && arr->n == 4);
	CHECK_DBL_EQ(traceconv_jv_num(&arr->items[1], 0), -25.0);
	CHECK_DBL_EQ(traceconv_jv_num(&arr->items[2], 0), 1.0);
	CHECK_EQ(arr->items[3].type, TRACECONV_JV_NULL);
	CHECK_STR_EQ(traceconv_jv_text(traceconv_jv_get(&v, "s"), NULL),
	             "x\n\xc3\xa9\xf0\x9f\x98\x80\"");
	CHECK_EQ(traceconv_jv_get(&v, "o")->type, TRACECONV_JV_OBJ);
	CHECK(traceconv_jv_get(&v, "missing") == NULL);
	static const char *const bad[] = {
	    "",          "[1,",    "{\"a\" 1}", "\"\\x\"", "[1] 2", "\"\\u0000\"",
	    "\"a\x01\"", "{1: 2}", "tru",       "-"};
	for (size_t i = 0; i < TB_ARRAY_SIZE(bad); i++) {
		tb_err_clear(&err);
		CHECK_EQ(traceconv_jv_parse(bad[i], strlen(bad[i]), &a, &v, &err), -EINVAL);
		CHECK(strstr(err.msg, "bad JSON at byte") != NULL);
	}
	char deep[200];
	memset(deep, '[', 100);
	memset(deep + 100, ']', 100);
	tb_err_clear(&err);
	CHECK_EQ(traceconv_jv_parse(deep, sizeof deep, &a, &v, &err), -EINVAL);
	CHECK(strstr(err.msg, "nested too deep") != NULL);
	arena_release(&a);
}

/* A trace as traced_perf writes it: thread 11 of process 10 samples
 * main;a three times and main;b once, thread 12 main;a;a (recursion) once. */
static char *write_trace(char *path, size_t cap)
{
	struct perf_emitter e;
	struct pb_writer w, t;
	struct pb_reader r;
	struct pb_field f = {0};
	struct perf_frame fa[3] = {
	    {.mapping_path = "/bin/x", .rel_pc = 0x30, .function_name = "a"},
	    {.mapping_path = "/bin/x", .rel_pc = 0x20, .function_name = "a"},
	    {.mapping_path = "/bin/x", .rel_pc = 0x10, .function_name = "main"}};
	struct perf_frame fb[2] = {
	    {.mapping_path = "/bin/x", .rel_pc = 0x40, .function_name = "b"},
	    {.mapping_path = "/bin/x", .rel_pc = 0x10, .function_name = "main"}};
	struct perf_pt_process proc = {10, 1, "x\0--y", 5, false};
	struct perf_pt_thread t11 = {11, 10, "worker"}, t12 = {12, 10, ""};

	perf_emitter_init(&e, 6, PERF_COUNTER_SW_CPU_CLOCK, 1000, 0);
	pb_writer_init_growable(&w);
	perf_emit_start(&e, &w, 100);
	perf_emit_process_tree(&e, &w, 150, &proc, &t11);
	perf_emit_process_tree(&e, &w, 150, NULL, &t12);
	for (int i = 0; i < 3; i++)
		perf_emit_sample(&e, &w, 200 + (uint64_t)i, (uint32_t)i % 2, 10, 11, 2, fa + 1, 2);
	perf_emit_sample(&e, &w, 300, 0, 10, 11, 2, fb, 2);
	perf_emit_sample(&e, &w, 400, 1, 10, 12, 2, fa, 3);
	/* as the service writes it: each packet with a sequence id */
	pb_writer_init_growable(&t);
	pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
	while (pb_next(&r, &f)) {
		unsigned p = pb_begin_nested(&t, PB_F_Trace_packet);
		pb_put_raw(&t, f.data, f.len);
		pb_put_uint32(&t, PB_F_TracePacket_trusted_packet_sequence_id, 1);
		pb_end_nested(&t, p);
	}
	snprintf(path, cap, "%s/tb-traceconv-test-%d.pftrace",
	         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || tb_write_all(fd, pb_writer_data(&t), pb_writer_size(&t)) < 0)
		test_report(__FILE__, __LINE__, "cannot write '%s'", path);
	if (fd >= 0)
		close(fd);
	pb_writer_release(&t);
	pb_writer_release(&w);
	perf_emitter_release(&e);
	return path;
}

/* The report model as JSON text (tb_free). */
static char *model_of(const char *path, size_t *len)
{
	struct traceconv_report_opts o = {.json = true};
	char *buf = NULL;
	size_t n = 0;
	FILE *out = open_memstream(&buf, &n);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || traceconv_report(fd, path, out, &o) != 0)
		test_report(__FILE__, __LINE__, "no report model of '%s'", path);
	if (fd >= 0)
		close(fd);
	fclose(out);
	char *copy = tb_memdup(buf, n + 1);
	free(buf);
	*len = n;
	return copy;
}

TEST(traceconv_model_ranks_functions)
{
	char path[256];
	size_t len;
	struct arena a;
	struct traceconv_jv v;
	struct tb_err err = {0};
	char *json = model_of(write_trace(path, sizeof path), &len);
	unlink(path);
	arena_init(&a, 0);
	CHECK_EQ(traceconv_jv_parse(json, len, &a, &v, &err), 0);
	CHECK_DBL_EQ(traceconv_jv_num(traceconv_jv_get(&v, "tracebox_report_model"), 0), 1.0);
	const struct traceconv_jv *fns = traceconv_jv_get(&v, "functions");
	CHECK(fns && fns->n == 3);
	/* ids are ranks: main (5 inclusive), a (4, recursion once), b (1) */
	static const char *const names[] = {"main", "a", "b"};
	static const double self[] = {0, 4, 1}, incl[] = {5, 4, 1};
	for (size_t i = 0; i < 3 && fns->n == 3; i++) {
		const struct traceconv_jv *f = &fns->items[i];
		CHECK_DBL_EQ(traceconv_jv_num(traceconv_jv_get(f, "id"), -1), (double)i);
		CHECK_STR_EQ(traceconv_jv_text(traceconv_jv_get(f, "name"), ""), names[i]);
		CHECK_STR_EQ(traceconv_jv_text(traceconv_jv_get(f, "module"), ""), "x");
		CHECK_DBL_EQ(traceconv_jv_num(traceconv_jv_get(f, "self"), -1), self[i]);
		CHECK_DBL_EQ(traceconv_jv_num(traceconv_jv_get(f, "inclusive"), -1), incl[i]);
	}
	const struct traceconv_jv *ths = traceconv_jv_get(&v, "threads");
	CHECK(ths && ths->n == 2);
	CHECK_STR_EQ(traceconv_jv_text(traceconv_jv_get(&ths->items[0], "name"), ""), "worker");
	CHECK_STR_EQ(traceconv_jv_text(traceconv_jv_get(&ths->items[0], "process"), ""), "x");
	CHECK_DBL_EQ(traceconv_jv_num(traceconv_jv_get(&ths->items[1], "tid"), 0), 12.0);
	const struct traceconv_jv *cap = traceconv_jv_get(&v, "capture");
	CHECK_DBL_EQ(traceconv_jv_num(traceconv_jv_get(cap, "samples"), 0), 5.0);
	CHECK_DBL_EQ(traceconv_jv_num(traceconv_jv_get(cap, "healthy"), 0), 1.0);
	CHECK_EQ(traceconv_jv_get(cap, "cpus")->n, 2);
	/* stacks: root first, per thread */
	const struct traceconv_jv *sts = traceconv_jv_get(&v, "stacks");
	CHECK(sts && sts->n == 3);
	arena_release(&a);
	tb_free(json);
}

TEST(traceconv_inspect_answers)
{
	char path[256], *buf = NULL;
	size_t len, n = 0;
	char *json = model_of(write_trace(path, sizeof path), &len);
	unlink(path);
	FILE *out = open_memstream(&buf, &n);
	CHECK_EQ(traceconv_inspect_text(json, len,
	                                "top 2 self\ncallers 1 2\ncallees 0 1\nfunction 9\nbogus\n"
	                                "quit\nsummary\n",
	                                out),
	         0);
	fclose(out);
	CHECK_STR_EQ(buf, "functions by self samples (of 5):\n"
	                  "    id      self   self% inclusive   incl%  function\n"
	                  "     1         4  80.00%         4  80.00%  a  (x)\n"
	                  "     2         1  20.00%         1  20.00%  b  (x)\n"
	                  "(1 more)\n"
	                  "--- end ---\n"
	                  "callers (bottom-up) of [1] a, 2 levels:\n"
	                  "  [1] a  4 (100.00%)\n"
	                  "    [0] main  3 (75.00%)\n"
	                  "    [1] a  1 (25.00%)\n"
	                  "      [0] main  1 (25.00%)\n"
	                  "--- end ---\n"
	                  "callees (top-down) of [0] main, 1 levels:\n"
	                  "  [0] main  5 (100.00%)\n"
	                  "    [1] a  4 (80.00%)\n"
	                  "    [2] b  1 (20.00%)\n"
	                  "--- end ---\n"
	                  "error: no function '9' (ids 0..2)\n"
	                  "--- end ---\n"
	                  "error: unknown command 'bogus' (try help)\n"
	                  "--- end ---\n");
	free(buf);
	/* not a model */
	buf = NULL, n = 0;
	out = open_memstream(&buf, &n);
	CHECK_EQ(traceconv_inspect_text("{\"x\":1}", 7, "summary\n", out), -1);
	fclose(out);
	CHECK(strstr(buf, "is not a report model") != NULL);
	free(buf);
	tb_free(json);
}
