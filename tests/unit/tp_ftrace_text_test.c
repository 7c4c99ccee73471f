/*
 * Tests of the ftrace text importer (components/trace_processor/importers/
 * ftrace_text) and the shared ftrace model (model/ftrace.c): line layouts
 * (tgid columns, irq flags, trace-cmd -l / -R), wrappers (HTML sections with
 * JSON blocks, legacy HTML, zlib TRACE:), chunking, end-state letters, the
 * parser API for embedded text, sniffing and bad input. Whole-table answers
 * in SQL are in tests/tp/ftrace_text_*.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "importers/ftrace_text/ftrace_text.h"
#include "importers/ftrace_text/ftrace_text_int.h"
#include "test.h"
#include "tp_int.h"
#include "importers/importer.h"

static struct tp *load_chunked(const char *s, size_t len, size_t chunk)
{
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
	return load_chunked(s, strlen(s), strlen(s) + 1);
}

static const char *str(const struct tp *tp, uint32_t id)
{
	return id ? tp_str(tp, id) : NULL;
}

/* Whether the trace has a slice of this name, ts and dur. */
static bool has_slice(const struct tp *tp, const char *name, int64_t ts, int64_t dur)
{
	const struct tp_slice_table *s = &tp->t.slice;
	for (uint32_t i = 0; i < s->n; i++)
		if (strcmp(str(tp, s->name[i]), name) == 0 && s->ts[i] == ts && s->dur[i] == dur)
			return true;
	return false;
}

static const char atrace[] =
    "# tracer: nop\n"
    "     RenderThread-20    (   19) [001] ...1    50.000000: tracing_mark_write: B|19|Draw\n"
    "     RenderThread-20    (   19) [001] ...1    50.000010: tracing_mark_write: B|19|inner\n"
    "     RenderThread-20    (   19) [001] ...1    50.000020: tracing_mark_write: E|19\n"
    "     RenderThread-20    (   19) [001] ...1    50.000030: tracing_mark_write: E|19\n"
    "     RenderThread-20    (   19) [001] ...1    50.000040: tracing_mark_write: C|19|q|5\n";

TEST(tp_ftrace_text_atrace_slices)
{
	struct tp *tp = load(atrace);
	CHECK_STR_EQ(tp_trace_type(tp), "systrace");
	const struct tp_slice_table *s = &tp->t.slice;
	CHECK_EQ(s->n, 2);
	CHECK_EQ(s->ts[0], 50000000000ll);
	CHECK_EQ(s->dur[0], 30000);
	CHECK_EQ(s->depth[1], 1);
	CHECK_STR_EQ(str(tp, s->name[1]), "inner");
	CHECK_EQ(tp->t.counter.n, 1);
	CHECK_DBL_EQ(tp->t.counter.value[0], 5.0);
	CHECK_EQ(tp->t.ftrace_event.n, 5);
	tp_free(tp);
}

/* Any chunking gives the same tables. */
TEST(tp_ftrace_text_chunked_same_tables)
{
	static const size_t chunks[] = {1, 3, 7, 64, 511};
	for (size_t i = 0; i < sizeof chunks / sizeof chunks[0]; i++) {
		struct tp *tp = load_chunked(atrace, strlen(atrace), chunks[i]);
		CHECK_EQ(tp->t.slice.n, 2);
		CHECK_EQ(tp->t.slice.dur[1], 10000);
		CHECK_EQ(tp->t.counter.n, 1);
		CHECK_EQ(tp->t.ftrace_event.n, 5);
		CHECK_EQ(tp->stats[TP_STAT_systrace_parse_failure], 0);
		tp_free(tp);
	}
}

TEST(tp_ftrace_text_line_layouts)
{
	struct tp_ft_line l;
	/* tracefs with tgid and irq flags, task with spaces and '-'. */
	static const char a[] =
	    "  my-task 2-123   ( 120) [003] dNs2. 12.500001: sched_waking: comm=x pid=5";
	CHECK(tp_ft_line_tokenize(a, strlen(a), &l));
	CHECK_EQ(l.task_len, 9);
	CHECK(memcmp(l.task, "my-task 2", 9) == 0);
	CHECK_EQ(l.pid, 123);
	CHECK_EQ(l.tgid, 120);
	CHECK_EQ(l.cpu, 3);
	CHECK_EQ(l.ts, 12500001000ll);
	CHECK_EQ(l.event_len, 12);
	CHECK(memcmp(l.payload, "comm=x pid=5", l.payload_len) == 0);
	/* Unknown tgid, no flags. */
	static const char b[] = "<idle>-0 (-----) [000] 1.000000: cpu_idle: state=1 cpu_id=0";
	CHECK(tp_ft_line_tokenize(b, strlen(b), &l));
	CHECK_EQ(l.tgid, -1);
	CHECK_EQ(l.pid, 0);
	/* trace-cmd report -l: cpu and flags in one column. */
	static const char c[] = "trace-cm-6973    2d..4. 259445.106949: bprint:    f: x=1";
	CHECK(tp_ft_line_tokenize(c, strlen(c), &l));
	CHECK_EQ(l.cpu, 2);
	CHECK_EQ(l.pid, 6973);
	CHECK_EQ(l.ts, 259445106949000ll);
	CHECK(memcmp(l.event, "bprint", 6) == 0 && l.event_len == 6);
	/* Flags glued to the timestamp split as Perfetto's pattern does. */
	static const char d[] =
	    "kworker/u16:1-77 (77) [004] ....316.196720: tracing_mark_write: B|77|x";
	CHECK(tp_ft_line_tokenize(d, strlen(d), &l));
	CHECK_EQ(l.ts, 16196720000ll);
	/* Not event lines. */
	static const char e[] = "CPU 3 is empty";
	CHECK(!tp_ft_line_tokenize(e, strlen(e), &l));
	static const char f[] = "foo-12 [000] 1.0 x: y";
	CHECK(!tp_ft_line_tokenize(f, strlen(f), &l));
}

TEST(tp_ftrace_text_end_states)
{
	struct tp *tp = tp_new(NULL);
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_text(tp, "R", 1)), "R");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_text(tp, "R+", 2)), "R+");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_text(tp, "D|K", 3)), "DK");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_text(tp, "KD", 2)), "DK");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_text(tp, "D|N", 3)), "I");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_text(tp, "x", 1)), "x");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_text(tp, "Q", 1)), "?");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_text(tp, "S+", 2)), "?");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_raw(tp, 0x100)), "R+");
	CHECK_STR_EQ(tp_str(tp, tp_ftrace_end_state_raw(tp, 2)), "D");
	tp_free(tp);
}

TEST(tp_ftrace_text_trace_cmd_raw_and_latency)
{
	struct tp *tp = load(
	    "cpus=2\n"
	    "  bash-5   [000] 1.000000: print: ip=0xffff buf=B|5|x\\n\n"
	    "  bash-5   [000] 1.000100: print: ip=0xffff buf=E|5\\n\n"
	    "bash-5    1d..2. 1.000200: sched_switch: prev_comm=bash prev_pid=5 "
	    "prev_prio=120 prev_state=1 ==> next_comm=cat next_pid=6 next_prio=110\n"
	    "cat-6    1d..2. 1.000300: sched_switch: prev_comm=cat prev_pid=6 "
	    "prev_prio=110 prev_state=1024 ==> next_comm=swapper/1 next_pid=0 next_prio=120\n");
	CHECK_EQ(tp->t.slice.n, 1);
	CHECK_STR_EQ(str(tp, tp->t.slice.name[0]), "x");
	CHECK_EQ(tp->t.slice.dur[0], 100000);
	const struct tp_sched_table *s = &tp->t.sched;
	CHECK_EQ(s->n, 2);
	uint32_t cpu;
	tp_sched_computed_cpu(tp, 0, &cpu);
	CHECK_EQ(cpu, 1);
	CHECK_EQ(tp_sched_dur(tp, 0), 100000);
	CHECK_EQ(tp_sched_priority(tp, 0), 110);
	CHECK_STR_EQ(str(tp, s->end_state[0]), "R"); /* numeric: TASK_REPORT bits */
	CHECK_EQ(tp->stats[TP_STAT_systrace_parse_failure], 0);
	tp_free(tp);
}

TEST(tp_ftrace_text_html_sections)
{
	struct tp *tp = load("<!DOCTYPE html>\n<html><body>\n"
	                     "<script class=\"trace-data\" type=\"application/text\">\n"
	                     "# tracer: nop\n"
	                     "  Binder_1-340   [000] 50.000000: tracing_mark_write: B|124|Status\n"
	                     "  Binder_1-340   [000] 50.000100: tracing_mark_write: E|124\n"
	                     "</script>\n"
	                     "<script class=\"trace-data\" type=\"application/text\">\n"
	                     "{\"traceEvents\": [{\"name\": \"j\", \"ph\": \"X\", \"ts\": 1, "
	                     "\"dur\": 2, \"pid\": 1, "
	                     "\"tid\": 1}]}\n"
	                     "</script>\n"
	                     "<script class=\"trace-data\" type=\"application/text\">\n"
	                     "PROCESS DUMP\n"
	                     "  bogus-1 [000] 9.0: tracing_mark_write: B|1|skipped\n"
	                     "</script>\n</body></html>\n");
	CHECK_STR_EQ(tp_trace_type(tp), "systrace");
	CHECK_EQ(tp->t.slice.n, 2);
	CHECK(has_slice(tp, "j", 1000, 2000));
	CHECK(has_slice(tp, "Status", 50000000000, 100000));
	tp_free(tp);
}

TEST(tp_ftrace_text_legacy_html)
{
	struct tp *tp = load("<html><body><script>\n"
	                     "  var linuxPerfData = \"\\\n"
	                     "# tracer: nop\\n\\\n"
	                     "  hwc-336   [000] 5.000000: 0: C|124|VSYNC|1\\n\\\n"
	                     "  hwc-336   [000] 5.000001: 0: C|124|VSYNC|0\\n\";\n"
	                     "  hwc-336   [000] 6.000000: 0: C|124|VSYNC|1\n"
	                     "</script></body></html>\n");
	CHECK_EQ(tp->t.counter.n, 2);
	CHECK_DBL_EQ(tp->t.counter.value[1], 0.0);
	CHECK_EQ(tp->stats[TP_STAT_systrace_parse_failure], 0);
	tp_free(tp);
}

TEST(tp_ftrace_text_compressed_trace)
{
	static const char body[] = "# tracer: nop\n"
	                           "  a-7 [000] 2.000000: tracing_mark_write: B|7|zipped\n"
	                           "  a-7 [000] 2.000500: tracing_mark_write: E|7\n";
	uint8_t buf[512];
	memcpy(buf, "TRACE:\n", 7);
	uLongf zn = sizeof buf - 7;
	CHECK_EQ(compress(buf + 7, &zn, (const Bytef *)body, sizeof body - 1), Z_OK);
	struct tp *tp = load_chunked((const char *)buf, 7 + zn, 5);
	CHECK_EQ(tp->t.slice.n, 1);
	CHECK_STR_EQ(str(tp, tp->t.slice.name[0]), "zipped");
	CHECK_EQ(tp->t.slice.dur[0], 500000);
	tp_free(tp);
	/* A corrupt body is one stat, not a crash. */
	buf[20] ^= 0xff;
	buf[21] ^= 0xff;
	tp = load_chunked((const char *)buf, 7 + zn, 5);
	CHECK_EQ(tp->t.slice.n, 0);
	CHECK_EQ(tp->stats[TP_STAT_compressed_packets_failure], 1);
	tp_free(tp);
}

/* A TRACE: body whose text is itself a compressed TRACE: body is not read
 * twice: it is counted in compressed_packets_failure, not dropped silently. */
TEST(tp_ftrace_text_doubly_compressed_counted)
{
	static const char body[] = "# tracer: nop\n"
	                           "  a-7 [000] 2.000000: tracing_mark_write: B|7|zipped\n"
	                           "  a-7 [000] 2.000500: tracing_mark_write: E|7\n";
	uint8_t inner[512], outer[512];
	memcpy(inner, "TRACE:\n", 7);
	uLongf in = sizeof inner - 7, on = sizeof outer - 7;
	CHECK_EQ(compress(inner + 7, &in, (const Bytef *)body, sizeof body - 1), Z_OK);
	memcpy(outer, "TRACE:\n", 7);
	CHECK_EQ(compress(outer + 7, &on, inner, 7 + in), Z_OK);
	struct tp *tp = load_chunked((const char *)outer, 7 + on, 5);
	CHECK_EQ(tp->t.slice.n, 0);
	CHECK_EQ(tp->stats[TP_STAT_compressed_packets_failure], 1);
	tp_free(tp);
}

/* A trace-data section opened and closed on one line keeps its data. */
TEST(tp_ftrace_text_html_one_line_sections)
{
	struct tp *tp = load("<!DOCTYPE html>\n<html><body>\n"
	                     "<script class=\"trace-data\" type=\"application/text\">"
	                     "{\"traceEvents\": [{\"name\": \"j\", \"ph\": \"X\", \"ts\": 1, "
	                     "\"dur\": 2, \"pid\": 1, \"tid\": 1}]}</script>\n"
	                     "<script class=\"trace-data\" type=\"application/text\">"
	                     "  Binder_1-340   [000] 50.000000: tracing_mark_write: I|124|mark"
	                     "</script>\n</body></html>\n");
	CHECK_EQ(tp->t.slice.n, 2);
	CHECK(has_slice(tp, "j", 1000, 2000));
	CHECK(has_slice(tp, "mark", 50000000000, 0));
	CHECK_EQ(tp->stats[TP_STAT_systrace_parse_failure], 0);
	tp_free(tp);
}

/* The API the JSON importer uses for systemTraceEvents. */
TEST(tp_ftrace_text_embedded_api)
{
	struct tp *tp = tp_new(NULL);
	struct ftrace_text *ft = tp_ftrace_text_new(tp);
	static const char text[] =
	    "  a-7 [000] 2.000000: sched_switch: prev_comm=a prev_pid=7 "
	    "prev_prio=120 prev_state=S ==> next_comm=b next_pid=8 next_prio=120\n"
	    "  b-8 [000] 2.000001: sched_switch: prev_comm=b prev_pid=8 "
	    "prev_prio=120 prev_state=R+ ==> next_comm=a next_pid=7 next_prio=120";
	for (size_t i = 0; i < sizeof text - 1; i += 10)
		tp_ftrace_text_parse_chunk(ft, text + i,
		                           sizeof text - 1 - i < 10 ? sizeof text - 1 - i : 10);
	tp_ftrace_text_end(ft);
	tp_ftrace_text_free(ft);
	CHECK_EQ(tp->t.sched.n, 2);
	CHECK_EQ(tp_sched_dur(tp, 0), 1000);
	CHECK_STR_EQ(str(tp, tp->t.sched.end_state[0]), "R+");
	CHECK_EQ(tp->t.thread_state.n, 4);
	tp_free(tp);
}

TEST(tp_ftrace_text_bad_input_counted)
{
	char *big = tb_malloc(FT_MAX_LINE + 64);
	memcpy(big, "cpus=1\n", 7);
	memset(big + 7, 'x', FT_MAX_LINE + 10);
	memcpy(big + FT_MAX_LINE + 17, "\nnot an event\n", 15);
	struct tp *tp = load_chunked(big, strlen(big), 4096);
	CHECK_EQ(tp->stats[TP_STAT_systrace_parse_failure], 2);
	CHECK_EQ(tp->t.ftrace_event.n, 0);
	tp_free(tp);
	tb_free(big);
	/* Known events with bad fields keep their ftrace_event row. */
	tp = load("cpus=1\n  a-1 [000] 1.0: sched_switch: prev_pid=x\n"
	          "  a-1 [000] 1.1: ext4_sync: dev 8,1 ino 5\n");
	CHECK_EQ(tp->t.ftrace_event.n, 2);
	CHECK_EQ(tp->t.sched.n, 0);
	CHECK_EQ(tp->stats[TP_STAT_systrace_parse_failure], 1);
	CHECK_EQ(tp->stats[TP_STAT_ftrace_text_payload_unparsed], 1);
	tp_free(tp);
}

TEST(tp_ftrace_text_sniff)
{
	static const char *const yes[] = {
	    "# tracer: nop\n",
	    "TRACE:\n# tracer: nop\n",
	    "cpus=8\n",
	    "<!DOCTYPE html>\n<html>",
	    "\n\n<html>",
	    "          <idle>-0     [000] d..2  1136.097253: cpu_idle: state=0 cpu_id=0\n",
	};
	static const char *const no[] = {
	    "{\"traceEvents\": []}",
	    "sh  6587/6588 [003]   882.012106:    1003009 cpu-clock: \n\tffff f (x)\n",
	    "hello world\nmore text\n",
	    "\x0a\x02\x08\x01",
	};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		CHECK(tp_ftrace_text_importer.sniff((const uint8_t *)yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		CHECK(!tp_ftrace_text_importer.sniff((const uint8_t *)no[i], strlen(no[i])));
}

/* Timestamps become ns exactly as Perfetto computes them (strtod, * 1e9,
 * truncated), whatever the digits. */
TEST(tp_ftrace_text_timestamps_match_strtod)
{
	uint64_t r = 88172645463325252ull;
	for (int i = 0; i < 20000; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		char line[128], num[48];
		int fd = 1 + (int)(r % 9);
		unsigned long long sec = (r >> 8) % (i % 2 ? 10000000ull : 1000ull);
		unsigned long long frac = (r >> 32) % 1000000000ull;
		snprintf(num, sizeof num, "%llu.%09llu", sec, frac);
		num[strlen(num) - (size_t)(9 - fd)] = 0;
		snprintf(line, sizeof line, "a-1 [000] %s: e: x=1", num);
		struct tp_ft_line l;
		CHECK(tp_ft_line_tokenize(line, strlen(line), &l));
		CHECK_EQ(l.ts, (int64_t)(strtod(num, NULL) * 1e9));
	}
}

/* A JSON trace's "systemTraceEvents" string is ftrace text: its escaped
 * lines land in the same tables as a text trace, beside the JSON events,
 * however the bytes are split. */
static const char json_with_systrace[] =
    "{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"js\",\"pid\":19,\"tid\":19,\"ts\":50000000,\"dur\":"
    "5}],"
    "\"systemTraceEvents\":\"# tracer: nop\\n"
    "  RenderThread-20    (   19) [001] ...1    50.000000: tracing_mark_write: B|19|Draw\\n"
    "  RenderThread-20    (   19) [001] ...1    50.000030: tracing_mark_write: E|19\\n"
    "  <idle>-0     (-----) [000] d..3    50.000040: sched_switch: prev_comm=swapper/0 prev_pid=0 "
    "prev_prio=120 prev_state=R ==> next_comm=Render\\\\Thread next_pid=20 next_prio=110\\n"
    "\"}";

TEST(tp_ftrace_text_json_system_trace_events)
{
	size_t chunks[] = {1, 7, 64, sizeof json_with_systrace};
	for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
		struct tp *tp =
		    load_chunked(json_with_systrace, strlen(json_with_systrace), chunks[c]);
		const struct tp_slice_table *s = &tp->t.slice;
		CHECK_EQ(s->n, 2);
		int draw = -1, js = -1;
		for (uint32_t i = 0; i < s->n; i++) {
			if (strcmp(str(tp, s->name[i]), "Draw") == 0)
				draw = (int)i;
			if (strcmp(str(tp, s->name[i]), "js") == 0)
				js = (int)i;
		}
		CHECK(draw >= 0 && js >= 0);
		CHECK_EQ(s->ts[draw], 50000000000ll);
		CHECK_EQ(s->dur[draw], 30000);
		CHECK_EQ(s->ts[js], 50000000000ll);
		CHECK_EQ(tp->t.sched.n, 1);
		CHECK_EQ(tp->t.sched.ts[0], 50000040000ll);
		CHECK_EQ(tp_sched_priority(tp, 0), 110);
		CHECK_STR_EQ(str(tp, tp->t.thread.name[tp->t.sched.utid[0]]), "Render\\Thread");
		tp_free(tp);
	}
}
