/*
 * Logging. Each message has a tag (the component: "ipc", "traced", "ftrace")
 * and a level; TRACEBOX_LOG sets a default threshold and per-tag overrides.
 * The configuration is read once, on first use, and is a small table scanned
 * linearly: there are a handful of overrides at most, and log_enabled first
 * compares against the most verbose level configured, so disabled debug
 * logging costs one comparison.
 *
 * A line is formatted into a stack buffer and written with a single
 * write(2), so lines from several threads or processes sharing stderr (the
 * autostart children) do not interleave.
 */
#include "base.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_TAGS 32
#define TAG_MAX 32

struct tag_level {
	char tag[TAG_MAX];
	enum log_level level;
};

struct log_config {
	enum log_level def;
	enum log_level max; /* most verbose of def and every override */
	size_t ntags;
	struct tag_level tags[MAX_TAGS];
};

static struct log_config cfg = {LOG_LEVEL_INFO, LOG_LEVEL_INFO, 0, {{"", 0}}};
static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static char prog_name[32];
static log_sink_fn sink;
static void *sink_ctx;

static const char level_names[][6] = {"error", "warn", "info", "debug"};
static const char level_letters[] = "EWID";

int log_level_parse(const char *s, size_t n, enum log_level *out)
{
	for (size_t i = 0; i < TB_ARRAY_SIZE(level_names); i++) {
		if (strlen(level_names[i]) == n && memcmp(level_names[i], s, n) == 0) {
			*out = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

static int parse_spec(const char *spec, struct log_config *c, struct tb_err *err)
{
	c->def = LOG_LEVEL_INFO;
	c->ntags = 0;
	const char *p = spec;
	while (*p) {
		size_t n = strcspn(p, ",");
		const char *eq = memchr(p, '=', n);
		enum log_level lvl;
		if (n == 0) {
			/* empty item (",,"): ignore */
		} else if (!eq) {
			if (log_level_parse(p, n, &lvl) < 0)
				return tb_err_set(
				    err, -EINVAL,
				    "bad log level '%.*s' (want error, warn, info or debug)",
				    (int)n, p);
			c->def = lvl;
		} else {
			size_t tlen = (size_t)(eq - p);
			if (tlen == 0 || tlen >= TAG_MAX)
				return tb_err_set(err, -EINVAL, "bad log tag in '%.*s'", (int)n, p);
			if (log_level_parse(eq + 1, n - tlen - 1, &lvl) < 0)
				return tb_err_set(
				    err, -EINVAL,
				    "bad log level in '%.*s' (want error, warn, info or debug)",
				    (int)n, p);
			if (c->ntags == MAX_TAGS)
				return tb_err_set(err, -EINVAL,
				                  "too many log tags in '%s' (at most %d)", spec,
				                  MAX_TAGS);
			memcpy(c->tags[c->ntags].tag, p, tlen);
			c->tags[c->ntags].tag[tlen] = '\0';
			c->tags[c->ntags].level = lvl;
			c->ntags++;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	c->max = c->def;
	for (size_t i = 0; i < c->ntags; i++) {
		if (c->tags[i].level > c->max)
			c->max = c->tags[i].level;
	}
	return 0;
}

static void read_env(void)
{
	const char *spec = getenv("TRACEBOX_LOG");
	if (!spec || !*spec)
		return;
	struct log_config c;
	struct tb_err err;
	tb_err_clear(&err);
	if (parse_spec(spec, &c, &err) < 0) {
		char buf[TB_ERR_MSG_MAX + 64];
		int n = snprintf(buf, sizeof buf, "tracebox: ignoring TRACEBOX_LOG: %s\n", err.msg);
		if (n > 0 &&
		    write(2, buf, (size_t)n < sizeof buf ? (size_t)n : sizeof buf - 1) < 0) {
			/* stderr is gone; nothing to do */
		}
		return;
	}
	cfg = c;
}

int log_set_spec(const char *spec, struct tb_err *err)
{
	struct log_config c;
	pthread_once(&env_once, read_env);
	int r = parse_spec(spec, &c, err);
	if (r == 0)
		cfg = c;
	return r;
}

void log_set_name(const char *name)
{
	size_t n = name ? strnlen(name, sizeof prog_name - 1) : 0;
	memcpy(prog_name, name ? name : "", n);
	prog_name[n] = '\0';
}

void log_set_sink(log_sink_fn fn, void *ctx)
{
	sink = fn;
	sink_ctx = ctx;
}

bool log_enabled(const char *tag, enum log_level level)
{
	pthread_once(&env_once, read_env);
	if (level > cfg.max)
		return false;
	for (size_t i = 0; i < cfg.ntags; i++) {
		if (strcmp(cfg.tags[i].tag, tag) == 0)
			return level <= cfg.tags[i].level;
	}
	return level <= cfg.def;
}

void log_vwrite(enum log_level level, const char *tag, const char *fmt, va_list ap)
{
	if (!log_enabled(tag, level))
		return;
	char line[LOG_LINE_MAX];
	size_t off = 0;
	int n;

	if (!sink) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		n = snprintf(line, sizeof line, "[%6lld.%06ld%s%s] %c %s: ", (long long)ts.tv_sec,
		             ts.tv_nsec / 1000, prog_name[0] ? " " : "", prog_name,
		             level_letters[level], tag);
		off = n > 0 ? (size_t)n : 0;
	}
	/* Leave room for the newline. */
	if (off < sizeof line - 1) {
		n = vsnprintf(line + off, sizeof line - 1 - off, fmt, ap);
		if (n > 0)
			off +=
			    (size_t)n < sizeof line - 1 - off ? (size_t)n : sizeof line - 2 - off;
	} else {
		off = sizeof line - 2;
	}
	if (sink) {
		line[off] = '\0';
		sink(sink_ctx, level, tag, line);
		return;
	}
	line[off++] = '\n';
	if (write(2, line, off) < 0) {
		/* stderr is gone; nothing to do */
	}
}

void log_write(enum log_level level, const char *tag, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vwrite(level, tag, fmt, ap);
	va_end(ap);
}
