/*
 * One ftrace text line -> struct tp_ft_line, pushed to the sorter.
 *
 * The line layouts (the task name may hold any character, '-' included, so
 * the line is matched from each '-' in turn and the first match wins; what
 * precedes it is the task):
 *
 *   TASK-PID [CPU] TS: EVENT: PAYLOAD                  trace-cmd report
 *   INSTANCE: TASK-PID [CPU] TS: EVENT: PAYLOAD        ... of an instance buffer
 *   TASK-PID [CPU] FLAGS TS: EVENT: PAYLOAD            tracefs trace, trace_pipe
 *   TASK-PID (TGID) [CPU] FLAGS TS: EVENT: PAYLOAD     ... with record-tgid
 *   TASK-PID (-----) [CPU] FLAGS TS: EVENT: PAYLOAD    ... tgid unknown
 *   TASK-PID CPUFLAGS TS: EVENT: PAYLOAD               trace-cmd report -l
 *
 * FLAGS is irqs-off, need-resched, hardirq/softirq, preempt-depth and
 * optionally migrate-disable ("d..2", "dNs1.", "...."), possibly glued to
 * the timestamp. This follows Perfetto's systrace line pattern
 *
 *   -(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):
 *
 * with its backtracking order, so that ambiguous lines split the same way.
 * The timestamp is seconds; like Perfetto it becomes ns as a double times
 * 1e9, truncated. EVENT is the first non-space run up to its last ':'.
 */
#include "ftrace_text_int.h"
#include "../../sorter/sorter.h"

#include <stdlib.h>
#include <string.h>

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
}
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}
static bool is_alpha_dot(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.';
}
static bool is_hex_dot(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || c == '.';
}

static const char *skip_space(const char *q, const char *e)
{
	while (q < e && is_space(*q))
		q++;
	return q;
}

/* Digits [p, q) as an integer, capped at 18 digits. */
static bool digits(const char *p, const char *q, int64_t *v)
{
	if (p == q || q - p > 18)
		return false;
	int64_t x = 0;
	for (; p < q; p++)
		x = x * 10 + (*p - '0');
	*v = x;
	return true;
}

/* "S.F" (digits [t, dot), digits (dot, e)) as a double, exactly as strtod
 * rounds it: with at most 15 digits the decimal is an integer below 2^53
 * over an exact power of ten, and IEEE division rounds that quotient
 * correctly, which is strtod's result. Longer ones go to strtod. */
static bool seconds(const char *t, const char *dot, const char *e, double *out)
{
	static const double pow10[] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
	                               1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
	size_t nd = (size_t)(dot - t) + (size_t)(e - dot - 1);
	double secs;
	if (nd <= 15) {
		uint64_t x = 0;
		for (const char *q = t; q < e; q++)
			if (q != dot)
				x = x * 10 + (uint64_t)(*q - '0');
		secs = (double)x / pow10[e - dot - 1];
	} else {
		char buf[64];
		size_t tl = (size_t)(e - t);
		if (tl >= sizeof buf)
			return false;
		memcpy(buf, t, tl);
		buf[tl] = 0;
		secs = strtod(buf, NULL);
	}
	if (!(secs >= 0 && secs < 9.2e9))
		return false;
	*out = secs;
	return true;
}

/* `(\d+\.\d+):\s+(\S+):` at q. */
static bool match_ts_event(const char *q, const char *e, struct tp_ft_line *l)
{
	const char *t = q;
	while (q < e && is_digit(*q))
		q++;
	if (q == t || q == e || *q != '.')
		return false;
	const char *f = ++q;
	while (q < e && is_digit(*q))
		q++;
	if (q == f || q == e || *q != ':')
		return false;
	const char *tend = q++;
	if (q == e || !is_space(*q))
		return false;
	q = skip_space(q, e);
	const char *ev = q;
	while (q < e && !is_space(*q))
		q++;
	const char *colon = q;
	while (colon > ev && colon[-1] != ':')
		colon--;
	if (colon - ev < 2) /* no ':' or an empty name */
		return false;
	double secs;
	if (!seconds(t, f - 1, tend, &secs))
		return false;
	l->ts = (int64_t)(secs * 1e9);
	l->event = ev;
	l->event_len = (size_t)(colon - 1 - ev);
	const char *pl = skip_space(colon, e);
	const char *pe = e;
	while (pe > pl && is_space(pe[-1]))
		pe--;
	l->payload = pl;
	l->payload_len = (size_t)(pe - pl);
	return true;
}

/* After "]": `\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?` then the timestamp, the
 * optional group tried greedily first as a regex engine would. */
static bool match_after_cpu(const char *q, const char *e, struct tp_ft_line *l)
{
	q = skip_space(q, e);
	if (e - q >= 4 && is_alpha_dot(q[0]) && is_alpha_dot(q[1]) && is_alpha_dot(q[2])) {
		for (int k = 2; k >= 1; k--) {
			if (e - q < 3 + k)
				continue;
			bool ok = true;
			for (int j = 0; j < k; j++)
				ok &= is_hex_dot(q[3 + j]);
			if (ok && match_ts_event(skip_space(q + 3 + k, e), e, l))
				return true;
		}
	}
	return match_ts_event(q, e, l);
}

/* The digits at q as *v: the end of them, or NULL when there are none. */
static const char *number(const char *q, const char *e, int64_t *v)
{
	const char *d = q;
	while (q < e && is_digit(*q))
		q++;
	return digits(d, q, v) ? q : NULL;
}

/* "-PID" and whitespace, from the '-' at q: what follows, or NULL. */
static const char *match_pid(const char *q, const char *e, struct tp_ft_line *l)
{
	q = number(q + 1, e, &l->pid);
	if (!q || q == e || !is_space(*q))
		return NULL;
	return skip_space(q, e);
}

/* The bracketed-cpu layouts, from the '-' at q. */
static bool match_at(const char *q, const char *e, struct tp_ft_line *l)
{
	if (!(q = match_pid(q, e, l)))
		return false;
	if (q < e && *q == '(')
		q++;
	q = skip_space(q, e);
	l->tgid = -1;
	if (q < e && is_digit(*q)) {
		if (!(q = number(q, e, &l->tgid)))
			return false;
	} else {
		while (q < e && *q == '-')
			q++;
	}
	if (q < e && *q == ')')
		q++;
	if (q < e && is_space(*q) && q + 1 < e && q[1] == '[')
		q++;
	if (q == e || *q != '[')
		return false;
	int64_t cpu;
	if (!(q = number(q + 1, e, &cpu)) || q == e || *q != ']' || cpu >= FT_MAX_CPU)
		return false;
	l->cpu = (uint32_t)cpu;
	return match_after_cpu(q + 1, e, l);
}

/* trace-cmd report -l: "TASK-PID CPUFLAGS TS: EVENT:", from the '-' at q. */
static bool match_latency_at(const char *q, const char *e, struct tp_ft_line *l)
{
	int64_t cpu;
	if (!(q = match_pid(q, e, l)) || !(q = number(q, e, &cpu)) || cpu >= FT_MAX_CPU || q == e ||
	    !is_alpha_dot(*q))
		return false;
	while (q < e && (is_alpha_dot(*q) || is_digit(*q)))
		q++;
	if (q == e || !is_space(*q))
		return false;
	l->cpu = (uint32_t)cpu;
	l->tgid = -1;
	return match_ts_event(skip_space(q, e), e, l);
}

/* trace-cmd report puts the name of an instance buffer before each of its
 * events ("tbX:   bash-1 [001] ..."). A task is right-aligned in 16
 * columns and a comm has at most 15 bytes, so a task never starts in the
 * first column: a first token there that ends in ':' is that prefix. */
static size_t instance_prefix(const char *s, const char *t)
{
	const char *q = s;
	if (s == t || is_space(*s))
		return 0;
	while (q < t && !is_space(*q))
		q++;
	return q < t && q[-1] == ':' ? (size_t)(q - s) : 0;
}

static void set_task(const char *p, const char *dash, struct tp_ft_line *l)
{
	const char *s = p + instance_prefix(p, dash), *t = dash;
	while (s < t && is_space(*s))
		s++;
	while (t > s && is_space(t[-1]))
		t--;
	l->task = s;
	l->task_len = (size_t)(t - s);
}

bool tp_ft_line_tokenize(const char *p, size_t n, struct tp_ft_line *l)
{
	const char *e = p + n;
	for (int pass = 0; pass < 2; pass++) {
		for (const char *q = p; (q = memchr(q, '-', (size_t)(e - q))) != NULL; q++) {
			if (pass == 0 ? match_at(q, e, l) : match_latency_at(q, e, l)) {
				set_task(p, q, l);
				return true;
			}
		}
	}
	return false;
}

/* Header lines of tracefs and trace-cmd that carry no event. */
static bool is_header(const char *p, size_t n)
{
	static const char *const prefixes[] = {"cpus=", "version = ", "CPU ", "TRACE:"};
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t k = strlen(prefixes[i]);
		if (n >= k && memcmp(p, prefixes[i], k) == 0)
			return true;
	}
	return false;
}

void tp_ft_line(struct ftrace_text *ft, const char *p, size_t n)
{
	struct tp *tp = ft->tp;
	while (n && is_space(p[n - 1]))
		n--;
	/* Lines of a JS string literal (legacy systrace HTML, and text saved
	 * from it) end in an escaped newline ("...\n\"), the last one in the
	 * closing quote ("...\n";). */
	if (n >= 3 && memcmp(p + n - 3, "\\n\\", 3) == 0)
		n -= 3;
	else if (ft->legacy_js && n >= 4 && memcmp(p + n - 4, "\\n\";", 4) == 0)
		n -= 4;
	size_t i = 0;
	while (i < n && is_space(p[i]))
		i++;
	if (i == n || p[i] == '#')
		return;
	struct tp_ft_line l;
	if (!tp_ft_line_tokenize(p, n, &l)) {
		if (!is_header(p + i, n - i))
			tp_stat_inc(tp, TP_STAT_systrace_parse_failure);
		return;
	}
	/* An escaped newline inside a print payload ("B|1|x\n"). */
	if (l.payload_len >= 2 && l.payload[l.payload_len - 2] == '\\' &&
	    l.payload[l.payload_len - 1] == 'n')
		l.payload_len -= 2;
	struct ft_rec r = {
	    .pid = l.pid,
	    .tgid = l.tgid,
	    .cpu = l.cpu,
	    .task_len = (uint32_t)l.task_len,
	    .event_len = (uint32_t)l.event_len,
	    .payload_len = (uint32_t)l.payload_len,
	};
	size_t len = sizeof r + l.task_len + l.event_len + l.payload_len;
	/* Text traces are MONOTONIC, as in Perfetto: in an archive, the
	 * protobuf trace's clocks convert them. */
	char *dst =
	    tp_sorter_push(ft->sorter, tp_trace_time(tp, TP_CLOCK_MONOTONIC, l.ts), NULL, len);
	if (!dst) /* late after a streaming extract: the sorter counted it */
		return;
	memcpy(dst, &r, sizeof r);
	dst += sizeof r;
	memcpy(dst, l.task, l.task_len);
	dst += l.task_len;
	memcpy(dst, l.event, l.event_len);
	dst += l.event_len;
	memcpy(dst, l.payload, l.payload_len);
}
