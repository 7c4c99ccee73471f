/*
 * Tests of the perf script text importer (components/trace_processor/
 * importers/perf_text) and the stack profile tracker (model/stack_profile.c):
 * header variants (pid/tid, cpu, time, period, tabs, comms with spaces),
 * callsite interning, streaming, perf's '#' header and sniffing.
 */
#include <string.h>

#include "test.h"
#include "tp_int.h"
#include "model/model.h"

static struct tp *load_chunked(const char *s, size_t chunk)
{
	size_t len = strlen(s);
	struct tp *tp = tp_new(NULL);
	for (size_t off = 0; off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;
		if (tp_parse(tp, (const uint8_t *)s + off, n) != 0)
			break;
	}
	tp_end_of_file(tp);
	return tp;
}

static struct tp *load(const char *s)
{
	return load_chunked(s, strlen(s) + 1);
}

static bool str_is(const struct tp *tp, uint32_t id, const char *want)
{
	return id && strcmp(tp_str(tp, id), want) == 0;
}

/* Sample i as the perf_sample view shows it. */
#define PS(tp, i) tp_profiler_sample_row(tp, i)

/* The frame name of callsite cs. */
static uint32_t cs_name(const struct tp *tp, int64_t cs)
{
	return tp->t.stack_profile_frame.name[tp->t.stack_profile_callsite.frame_id[cs]];
}

static const char two_samples[] = "sh  6587/6588 [003]   882.012106:    1003009 cpu-clock: \n"
                                  "\tffffffff821f464d __pi_memset+0xd ([kernel.kallsyms])\n"
                                  "\t           d4ad7 __GI___execve+0x7 (/usr/lib/libc.so.6)\n"
                                  "\t    55f178d5fc30 [unknown] ([unknown])\n"
                                  "\n"
                                  "sh  6587/6588 [001]   882.013106:    1003009 cpu-clock: \n"
                                  "\t           d4ad8 main (/usr/bin/sh)\n"
                                  "\t    55f178d5fc30 [unknown] ([unknown])\n"
                                  "\n";

TEST(tp_perf_text_default_output)
{
	struct tp *tp = load(two_samples);
	CHECK(strcmp(tp_trace_type(tp), "perf_text") == 0);
	CHECK_EQ(tp->t.profiler_sample.n, 2);
	CHECK_EQ(PS(tp, 0).ts, 882012106000ll);
	CHECK_EQ(PS(tp, 1).ts, 882013106000ll);
	CHECK_EQ(PS(tp, 0).cpu, 3);
	CHECK_EQ(PS(tp, 0).period, 1003009);
	CHECK(str_is(tp, PS(tp, 0).cpu_mode, "kernel"));
	CHECK(str_is(tp, PS(tp, 1).cpu_mode, "user"));
	CHECK(str_is(tp, PS(tp, 0).event_name, "cpu-clock"));
	CHECK_EQ(PS(tp, 0).session, 0);
	CHECK_EQ(tp->t.profiler_session.n, 1);
	/* Leaf callsite at depth 2, offset dropped from the name. */
	const struct tp_stack_profile_callsite_table *c = &tp->t.stack_profile_callsite;
	int64_t leaf = PS(tp, 0).callsite;
	CHECK_EQ(c->depth[leaf], 2);
	CHECK(str_is(tp, cs_name(tp, leaf), "__pi_memset"));
	int64_t mid = c->parent_id[leaf];
	CHECK(str_is(tp, cs_name(tp, mid), "__GI___execve"));
	int64_t root = c->parent_id[mid];
	CHECK_EQ(c->depth[root], 0);
	CHECK_EQ(c->parent_id[root], TP_NULL_I64);
	CHECK(str_is(tp, cs_name(tp, root), "[unknown]"));
	/* The second sample shares the root callsite. */
	CHECK_EQ(c->parent_id[PS(tp, 1).callsite], root);
	CHECK_EQ(c->n, 4);
	uint32_t fr = c->frame_id[leaf];
	CHECK_EQ(tp->t.stack_profile_frame.rel_pc[fr], (int64_t)0xffffffff821f464dull);
	uint32_t m = tp->t.stack_profile_frame.mapping[fr];
	CHECK(str_is(tp, tp->t.stack_profile_mapping.name[m], "[kernel.kallsyms]"));
	CHECK_EQ(tp->t.stack_profile_mapping.n, 4);
	/* Thread 6588 of process 6587, named by comm. */
	int64_t utid = PS(tp, 0).utid;
	CHECK_EQ(tp->t.thread.tid[utid], 6588);
	CHECK(str_is(tp, tp->t.thread.name[utid], "sh"));
	CHECK_EQ(tp->t.process.pid[tp->t.thread.upid[utid]], 6587);
	tp_free(tp);
}

TEST(tp_perf_text_header_variants)
{
	struct tp *tp = load(
	    "java 19983 cycles:\n"
	    "ffffffff8103d0ca native_write_msr_safe ([kernel.kallsyms])\n"
	    "7f00 Interpreter (/tmp/perf-19983.map)\n"
	    "\n"
	    "FS Broker 5906  7564/7598  2574592.949428:          1 cycles:ppp: \n"
	    "\t     dd0 _start (/usr/lib64/ld-2.25.so)\n"
	    "\n"
	    "Gecko\t25122 [007] 115539.936601:\t\t1000000 task-clock:u:\n"
	    "        b3cea6c4\tLock::unlock() (/system/lib/libc.so)\n"
	    "\n"
	    "sh  6725 [000]   894.417293: sched:sched_process_exec: filename=/bin/sh pid=6725\n"
	    "\tffffffff81399e59 __traceiter_sched_process_exec+0x39 ([kernel.kallsyms])\n");
	CHECK_EQ(tp->t.profiler_sample.n, 4);
	/* No time, no cpu; unindented frames. */
	CHECK_EQ(PS(tp, 0).ts, 0);
	CHECK_EQ(PS(tp, 0).cpu, TP_NULL_U32);
	CHECK_EQ(tp->t.stack_profile_callsite.depth[PS(tp, 0).callsite], 1);
	CHECK(str_is(tp, PS(tp, 0).comm, "java"));
	CHECK_EQ(tp->t.thread.tid[PS(tp, 0).utid], 19983);
	/* A comm with spaces and digits. */
	CHECK(str_is(tp, PS(tp, 1).comm, "FS Broker 5906"));
	CHECK_EQ(tp->t.thread.tid[PS(tp, 1).utid], 7598);
	CHECK_EQ(PS(tp, 1).period, 1);
	CHECK(str_is(tp, PS(tp, 1).event_name, "cycles:ppp"));
	/* simpleperf: tabs. */
	CHECK(str_is(tp, PS(tp, 2).comm, "Gecko"));
	CHECK_EQ(PS(tp, 2).cpu, 7);
	CHECK(str_is(tp, cs_name(tp, PS(tp, 2).callsite), "Lock::unlock()"));
	/* A tracepoint with arguments; last sample without a blank line. */
	CHECK(str_is(tp, PS(tp, 3).event_name, "sched:sched_process_exec"));
	CHECK(str_is(tp, cs_name(tp, PS(tp, 3).callsite), "__traceiter_sched_process_exec"));
	CHECK_EQ(tp->stats[TP_STAT_perf_text_importer_sample_line_error], 0);
	tp_free(tp);
}

TEST(tp_perf_text_chunked_same_tables)
{
	struct tp *a = load(two_samples);
	struct tp *b = load_chunked(two_samples, 1);
	CHECK_EQ(a->t.profiler_sample.n, b->t.profiler_sample.n);
	CHECK_EQ(a->t.stack_profile_callsite.n, b->t.stack_profile_callsite.n);
	CHECK_EQ(a->t.stack_profile_frame.n, b->t.stack_profile_frame.n);
	for (uint32_t i = 0; i < a->t.profiler_sample.n; i++) {
		CHECK_EQ(a->t.profiler_sample.ts[i], b->t.profiler_sample.ts[i]);
		CHECK_EQ(a->t.profiler_sample.callsite_id[i], b->t.profiler_sample.callsite_id[i]);
	}
	tp_free(a);
	tp_free(b);
}

TEST(tp_perf_text_perf_header_and_bad_lines)
{
	struct tp *tp = load("# ========\n"
	                     "# captured on    : Thu Jul  9 17:14:37 2015\n"
	                     "# cmdline : /usr/bin/perf record -F 99 -a -g\n"
	                     "# ========\n"
	                     "#\n"
	                     "perf   977/977   [000] 7628263.042515: cycles: \n"
	                     "\tffffffff8104f45a native_write_msr_safe ([kernel.kallsyms])\n"
	                     "this is not a frame\n"
	                     "\n");
	CHECK(strcmp(tp_trace_type(tp), "perf_text") == 0);
	CHECK_EQ(tp->t.profiler_sample.n, 1);
	CHECK(str_is(tp, tp->t.profiler_session.cmdline[0], "/usr/bin/perf record -F 99 -a -g"));
	CHECK_EQ(tp->stats[TP_STAT_perf_text_importer_sample_line_error], 1);
	tp_free(tp);
}

TEST(tp_perf_text_sniff_is_strict)
{
	/* Text that is not perf script output is not taken. */
	static const char *const others[] = {
	    "hello world 12 foo: bar\nnext line\n",
	    "# tracer: nop\n#\n          <idle>-0     [000] d..2  123.456789: sched_switch: x\n",
	    "[{\"ph\":\"X\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1,\"name\":\"a\"}]",
	    "java 123 cycles:\nnot a frame line\n",
	};
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		struct tp *tp = load(others[i]);
		const char *type = tp_trace_type(tp);
		bool is_perf = type && strcmp(type, "perf_text") == 0;
		tp_free(tp);
		CHECK(!is_perf);
	}
}
