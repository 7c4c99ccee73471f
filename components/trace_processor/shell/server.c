/*
 * `server http | stdio | unix | kill` and the client side of a warm
 * session, `query --remote ADDR`.
 *
 * A `server unix` session listens on an AF_UNIX socket named after the
 * session, $XDG_RUNTIME_DIR/perfetto/NAME.sock (else /tmp/perfetto/,
 * kept 0700), or --path; it writes its pid beside the socket (NAME.sock.pid)
 * for `server kill`, and prints one machine-readable line first:
 *
 *   perfetto-session pid=PID session=NAME socket-path=PATH idle-timeout=30000ms
 *
 * `query --remote ADDR` sends each statement of its SQL as a
 * QUERY_STREAMING request (sequence number 0: no ordering check across
 * clients) to the session (a name or a socket path) or to a `server http`
 * (host:port, POST /query), and prints the results as `query` does.
 */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "pb.h"
#include "pb_fields.h"
#include "../rpc/rpc.h"
#include "sqlite3.h"

#define SESSION_NAME_MAX 64
#define UNIX_DEFAULT_IDLE_MS (30u * 60 * 1000)
#define REMOTE_TIMEOUT_MS 600000 /* a remote query may run this long */

/* ---- durations and session names -------------------------------------------- */

/* --idle-timeout: "never", "off", "0", or N with an optional s/m/h suffix
 * (seconds by default). Returns 0 with *ms set, or -1 after printing. */
static int parse_duration_ms(const char *s, uint32_t auto_ms, uint32_t *ms)
{
	if (!s || strcmp(s, "auto") == 0) {
		*ms = auto_ms;
		return 0;
	}
	if (strcmp(s, "never") == 0 || strcmp(s, "off") == 0 || strcmp(s, "0") == 0) {
		*ms = 0;
		return 0;
	}
	uint64_t mult = 1000;
	size_t n = strlen(s);
	char num[32];
	if (n && (s[n - 1] == 's' || s[n - 1] == 'm' || s[n - 1] == 'h')) {
		mult = s[n - 1] == 's' ? 1000 : s[n - 1] == 'm' ? 60000 : 3600000;
		n--;
	}
	char *end;
	if (n == 0 || n >= sizeof num)
		goto bad;
	memcpy(num, s, n);
	num[n] = '\0';
	errno = 0;
	long long v = strtoll(num, &end, 10);
	if (errno || *end || v < 0 || (uint64_t)v * mult > UINT32_MAX)
		goto bad;
	*ms = (uint32_t)((uint64_t)v * mult);
	return 0;
bad:
	tp_shell_error("Invalid duration '%s' (expected e.g. 30s, 5m, 2h, or 'never')", s);
	return -1;
}

static int parse_idle_start(const char *s, enum tp_idle_start *out)
{
	if (!s || strcmp(s, "auto") == 0)
		*out = TP_IDLE_AUTO;
	else if (strcmp(s, "orphaned") == 0)
		*out = TP_IDLE_ORPHANED;
	else if (strcmp(s, "last-query") == 0)
		*out = TP_IDLE_LAST_QUERY;
	else {
		tp_shell_error("Invalid --idle-start '%s' (expected auto, orphaned or last-query)",
		               s);
		return -1;
	}
	return 0;
}

static bool valid_session_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > SESSION_NAME_MAX ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* Three small word lists: 4096 names, easy to type. */
static void generate_session_name(char *out, size_t n)
{
	static const char *const adj[] = {"calm",  "brave", "lucky", "happy", "swift", "quiet",
	                                  "bold",  "eager", "merry", "kind",  "neat",  "proud",
	                                  "witty", "warm",  "shiny", "gentle"};
	static const char *const col[] = {"amber", "azure", "blue",  "coral", "green", "ivory",
	                                  "jade",  "lilac", "olive", "peach", "plum",  "ruby",
	                                  "rust",  "teal",  "gold",  "violet"};
	static const char *const ani[] = {"otter", "falcon", "lynx",   "panda",  "tapir", "heron",
	                                  "ibex",  "koala",  "marten", "quokka", "raven", "shrew",
	                                  "stork", "viper",  "wren",   "yak"};
	uint64_t seed = (uint64_t)tp_shell_now_ns() ^ ((uint64_t)getpid() << 32);
	seed = tb_hash_u64(seed);
	snprintf(out, n, "%s-%s-%s", adj[seed & 15], col[(seed >> 4) & 15], ani[(seed >> 8) & 15]);
}

/* The directory of named sessions, created 0700 (the socket exposes the
 * trace). Returns 0 or -1 after printing. */
static int session_dir(char *out, size_t n)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(out, n, "%s/perfetto", base);
	if (mkdir(out, 0700) < 0 && errno != EEXIST) {
		tp_shell_error("Failed to create session directory %s: %s", out, strerror(errno));
		return -1;
	}
	return 0;
}

static int session_socket_path(const char *name, char *out, size_t n)
{
	char dir[2048];
	if (!valid_session_name(name)) {
		tp_shell_error(
		    "Invalid session name '%s' (must match [A-Za-z0-9][A-Za-z0-9_-]* and be "
		    "at most %d chars)",
		    name, SESSION_NAME_MAX);
		return -1;
	}
	if (session_dir(dir, sizeof dir) < 0)
		return -1;
	snprintf(out, n, "%s/%s.sock", dir, name);
	return 0;
}

static int check_sun_path(const char *path)
{
	if (strlen(path) + 1 > sizeof(((struct sockaddr_un *)0)->sun_path)) {
		tp_shell_error(
		    "Socket path is too long (%zu bytes, limit %zu): %s. Use --path with a "
		    "shorter directory.",
		    strlen(path), sizeof(((struct sockaddr_un *)0)->sun_path) - 1, path);
		return -1;
	}
	return 0;
}

enum addr_kind { ADDR_UNIX_PATH, ADDR_HTTP, ADDR_SESSION };

/* As Perfetto: *.sock or an absolute path is a socket, a URL or host:port
 * is HTTP, a valid name is a session. */
static enum addr_kind classify_addr(const char *a)
{
	size_t n = strlen(a);
	if ((n > 5 && strcmp(a + n - 5, ".sock") == 0) || a[0] == '/')
		return ADDR_UNIX_PATH;
	const char *colon = strrchr(a, ':');
	bool port = colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1);
	if (strstr(a, "://") || port)
		return ADDR_HTTP;
	return valid_session_name(a) ? ADDR_SESSION : ADDR_HTTP;
}

/* ---- server kill ------------------------------------------------------------------- */

static int server_kill(const char *addr)
{
	char sock[4096], pidpath[4200];
	switch (classify_addr(addr)) {
	case ADDR_HTTP:
		tp_shell_error("server kill over HTTP (%s) is not supported; stop the server with "
		               "Ctrl-C or run it with --idle-timeout.",
		               addr);
		return 1;
	case ADDR_UNIX_PATH:
		snprintf(sock, sizeof sock, "%s", addr);
		break;
	case ADDR_SESSION:
		if (session_socket_path(addr, sock, sizeof sock) < 0)
			return 1;
		break;
	}
	snprintf(pidpath, sizeof pidpath, "%s.pid", sock);
	char *s = tp_shell_read_file(pidpath, NULL);
	long pid = 0;
	if (s) {
		char *end;
		pid = strtol(s, &end, 10);
		if (end == s || pid <= 1)
			pid = 0;
		tb_free(s);
	}
	if (!pid || kill((pid_t)pid, 0) != 0) {
		unlink(pidpath); /* stale, from a server that died */
		tp_shell_error("No live session at '%s'", addr);
		return 1;
	}
	if (kill((pid_t)pid, SIGTERM) != 0) {
		tp_shell_error("Failed to signal pid %ld: %s", pid, strerror(errno));
		return 1;
	}
	/* The server removes both on SIGTERM; do it too should it be slow. */
	for (int i = 0; i < 50 && kill((pid_t)pid, 0) == 0; i++)
		usleep(20000);
	printf("Stopped session '%s' (pid %ld)\n", addr, pid);
	return 0;
}

/* ---- server -------------------------------------------------------------------------- */

int tp_shell_run_server(struct shell_opts *o)
{
	if (tp_shell_reject_extra(o, "server", 2, NULL) < 0)
		return 1;
	if (o->pos.len == 0) {
		tp_shell_error("server: must specify mode (expected http, stdio, unix or kill)");
		return 1;
	}
	const char *mode = o->pos.data[0];
	if (strcmp(mode, "kill") == 0) {
		if (o->pos.len < 2) {
			tp_shell_error("server kill: a session name or socket path is required");
			return 1;
		}
		return server_kill(o->pos.data[1]);
	}
	bool http = strcmp(mode, "http") == 0, stdio = strcmp(mode, "stdio") == 0;
	bool unix_mode = strcmp(mode, "unix") == 0;
	if (!http && !stdio && !unix_mode) {
		tp_shell_error("server: unknown mode '%s' (expected http, stdio, unix or kill)",
		               mode);
		return 1;
	}
	if (o->remote) {
		tp_shell_error("server: --remote cannot be combined with a server");
		return 1;
	}
	struct tp_idle idle = {0};
	if (parse_duration_ms(o->idle_timeout, unix_mode ? UNIX_DEFAULT_IDLE_MS : 0,
	                      &idle.timeout_ms) < 0 ||
	    parse_idle_start(o->idle_start, &idle.start) < 0)
		return 1;
	char sock[4096] = "", name[SESSION_NAME_MAX + 1] = "";
	if (unix_mode) {
		if (o->path && o->name) {
			tp_shell_error("server unix: --path and --name are mutually exclusive");
			return 1;
		}
		if (o->path) {
			/* Absolute before binding: --daemonize changes to /. */
			if (o->path[0] != '/') {
				char cwd[2048];
				if (!getcwd(cwd, sizeof cwd)) {
					tp_shell_error(
					    "server unix: cannot get the current directory: %s",
					    strerror(errno));
					return 1;
				}
				snprintf(sock, sizeof sock, "%s/%s", cwd, o->path);
			} else {
				snprintf(sock, sizeof sock, "%s", o->path);
			}
			if (check_sun_path(sock) < 0)
				return 1;
		} else {
			if (o->name)
				snprintf(name, sizeof name, "%s", o->name);
			else
				generate_session_name(name, sizeof name);
			if (session_socket_path(name, sock, sizeof sock) < 0 ||
			    check_sun_path(sock) < 0)
				return 1;
		}
	}

	struct shell_config sc;
	struct tp *tp = NULL;
	const char *trace = o->pos.len > 1 ? o->pos.data[1] : NULL;
	int status = 1;
	if (tp_shell_config_build(o, &sc) < 0)
		goto out;
	if (trace && !(tp = tp_shell_load(o, &sc, trace, NULL)))
		goto out;
	struct tp_rpc *rpc = tp_rpc_new(&sc.cfg, tp, trace);
	tp = NULL; /* the RPC owns it */
	if (http) {
		struct tp_httpd_opts ho = {
		    .ip = o->ip, .port = o->port, .additional_cors_origins = o->cors, .idle = idle};
		status = tp_httpd_run(rpc, &ho);
	} else if (stdio) {
		status = tp_stdiod_run(rpc);
	} else {
		struct tp_unixd_opts uo = {.socket_path = sock,
		                           .session_name = o->path ? sock : name,
		                           .idle = idle,
		                           .daemonize = o->daemonize};
		status = tp_unixd_run(rpc, &uo);
	}
	tp_rpc_free(rpc);
out:
	tp_free(tp);
	tp_shell_config_release(&sc);
	return status;
}

/* ---- query --remote ---------------------------------------------------------------- */

struct remote {
	int fd;
	bool http;
	const char *host; /* http: for the Host header */
	VEC(uint8_t) rx;
};

static int remote_connect(struct remote *r, const char *addr)
{
	memset(r, 0, sizeof *r);
	r->fd = -1;
	enum addr_kind k = classify_addr(addr);
	if (k != ADDR_HTTP) {
		char path[4096];
		if (k == ADDR_SESSION) {
			if (session_socket_path(addr, path, sizeof path) < 0)
				return -1;
		} else {
			snprintf(path, sizeof path, "%s", addr);
		}
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		if (strlen(path) >= sizeof sa.sun_path) {
			tp_shell_error("--remote: socket path too long: %s", path);
			return -1;
		}
		memcpy(sa.sun_path, path, strlen(path) + 1);
		r->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (r->fd < 0 || connect(r->fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
			tp_shell_error("--remote: cannot connect to session '%s' (%s): %s", addr,
			               path, strerror(errno));
			return -1;
		}
		return 0;
	}
	/* host:port, optionally as http://host:port[/] */
	const char *h = strstr(addr, "://") ? strstr(addr, "://") + 3 : addr;
	char host[512];
	snprintf(host, sizeof host, "%s", h);
	char *slash = strchr(host, '/');
	if (slash)
		*slash = '\0';
	char *colon = strrchr(host, ':');
	const char *port = "9001";
	if (colon && !strchr(colon, ']')) {
		*colon = '\0';
		port = colon + 1;
	}
	char *hn = host;
	if (hn[0] == '[') {
		hn++;
		char *rb = strchr(hn, ']');
		if (rb)
			*rb = '\0';
	}
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res = NULL;
	int rc = getaddrinfo(hn, port, &hints, &res);
	if (rc != 0) {
		tp_shell_error("--remote: cannot resolve '%s': %s", hn, gai_strerror(rc));
		return -1;
	}
	for (struct addrinfo *a = res; a && r->fd < 0; a = a->ai_next) {
		int fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			r->fd = fd;
		else if (fd >= 0)
			close(fd);
	}
	freeaddrinfo(res);
	if (r->fd < 0) {
		tp_shell_error("--remote: cannot connect to '%s': %s", addr, strerror(errno));
		return -1;
	}
	r->http = true;
	r->host = addr;
	return 0;
}

/* Read at least one more byte into r->rx. 0, or -1 at EOF / on error. */
static int remote_fill(struct remote *r)
{
	vec_reserve(&r->rx, 65536);
	ssize_t n;
	do
		n = read(r->fd, r->rx.data + r->rx.len, 65536);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	r->rx.len += (size_t)n;
	return 0;
}

static void remote_consume(struct remote *r, size_t n)
{
	memmove(r->rx.data, r->rx.data + n, r->rx.len - n);
	r->rx.len -= n;
}

/* One whole length-delimited field 1 (TraceProcessorRpcStream.msg) from the
 * session, into *msg (tb_malloc'd). 0, or -1. */
static int remote_next_rpc(struct remote *r, uint8_t **msg, size_t *len)
{
	for (;;) {
		uint64_t tag, size;
		const uint8_t *p = r->rx.data, *end = p + r->rx.len;
		const uint8_t *q = r->rx.len ? pb_read_varint(p, end, &tag) : NULL;
		const uint8_t *b = q ? pb_read_varint(q, end, &size) : NULL;
		if (b && (size_t)(end - b) >= size) {
			*len = (size_t)size;
			*msg = tb_malloc(*len ? *len : 1);
			memcpy(*msg, b, *len);
			remote_consume(r, (size_t)(b - p) + *len);
			if (tag != (1 << 3 | PB_WIRE_LEN)) {
				tb_free(*msg);
				continue;
			}
			return 0;
		}
		if (remote_fill(r) < 0)
			return -1;
	}
}

/* The next chunk of a chunked HTTP body (after the headers were read). */
static int remote_next_chunk(struct remote *r, uint8_t **msg, size_t *len)
{
	for (;;) {
		char *nl = r->rx.len ? memchr(r->rx.data, '\n', r->rx.len) : NULL;
		if (nl) {
			unsigned long long n = strtoull((char *)r->rx.data, NULL, 16);
			size_t hdr = (size_t)((uint8_t *)nl - r->rx.data) + 1;
			if (n > TP_RPC_MAX_MSG)
				return -1;
			if (r->rx.len >= hdr + n + 2) {
				*len = (size_t)n;
				*msg = tb_malloc(*len ? *len : 1);
				memcpy(*msg, r->rx.data + hdr, *len);
				remote_consume(r, hdr + (size_t)n + 2);
				return 0;
			}
		}
		if (remote_fill(r) < 0)
			return -1;
	}
}

static void print_cell(FILE *out, int type, const struct pb_field *f, double d)
{
	switch (type) {
	case 2:
		fprintf(out, "%lld", (long long)f->val);
		break;
	case 3:
		fprintf(out, "%f", d);
		break;
	case 4:
		fprintf(out, "\"%.*s\"", (int)f->len, (const char *)f->data);
		break;
	case 5:
		fputs("\"<raw bytes>\"", out);
		break;
	default:
		fputs("\"[NULL]\"", out);
	}
}

/* Print the rows of one QueryResult's batches; collect columns and error. */
struct remote_result {
	VEC(char *) cols;
	char *error;
	bool last, header_done, suppress;
	size_t cell; /* cells printed in the current row */
};

static void print_batch(FILE *out, struct remote_result *rr, const uint8_t *b, size_t n)
{
	struct pb_reader rd;
	struct pb_field f, types = {0}, ints = {0}, dbls = {0}, strs = {0};
	VEC(struct pb_field) blobs = VEC_INIT;
	pb_reader_init(&rd, b, n);
	while (pb_next(&rd, &f)) {
		if (f.id == PB_F_QueryResult_CellsBatch_cells && f.wire == PB_WIRE_LEN)
			types = f;
		else if (f.id == PB_F_QueryResult_CellsBatch_varint_cells && f.wire == PB_WIRE_LEN)
			ints = f;
		else if (f.id == PB_F_QueryResult_CellsBatch_float64_cells && f.wire == PB_WIRE_LEN)
			dbls = f;
		else if (f.id == PB_F_QueryResult_CellsBatch_blob_cells && f.wire == PB_WIRE_LEN)
			vec_push(&blobs, f);
		else if (f.id == PB_F_QueryResult_CellsBatch_string_cells && f.wire == PB_WIRE_LEN)
			strs = f;
		else if (f.id == PB_F_QueryResult_CellsBatch_is_last_batch)
			rr->last = f.val != 0;
	}
	struct pb_packed it;
	pb_packed_init(&it, ints.data, ints.len, PB_WIRE_VARINT);
	size_t di = 0, bi = 0, so = 0;
	size_t ncol = rr->cols.len ? rr->cols.len : 1;
	for (size_t i = 0; i < types.len; i++) {
		int t = types.data[i];
		struct pb_field cell = {0};
		double d = 0;
		if (t == 2) {
			pb_packed_next(&it, &cell.val);
		} else if (t == 3 && (di + 1) * 8 <= dbls.len) {
			uint64_t bits = tb_ld64(dbls.data + di++ * 8);
			memcpy(&d, &bits, sizeof d);
		} else if (t == 4 && so < strs.len) {
			cell.data = strs.data + so;
			cell.len = strnlen((const char *)cell.data, strs.len - so);
			so += cell.len + 1;
		} else if (t == 5 && bi < blobs.len) {
			bi++;
		}
		if (rr->suppress)
			continue;
		if (rr->cell)
			fputc(',', out);
		print_cell(out, t, &cell, d);
		if (++rr->cell == ncol) {
			fputc('\n', out);
			rr->cell = 0;
		}
	}
	vec_release(&blobs);
}

/* Run one statement remotely and print it. Returns 0, 1 (an SQL error,
 * printed) or -1 (transport failure, printed). */
/* The server's traceback of sql, a piece of the query text starting at
 * line line0 (0-based) and column col0 of it, with its "stdin" line and
 * column counted in the whole text again (as tp_sql_traceback counts
 * them when the query runs here). tb_malloc'd. */
static char *whole_text_traceback(const char *err, unsigned line0, unsigned col0)
{
	static const char frame[] = "Traceback (most recent call last):\n  File \"stdin\" line ";
	unsigned line, col;
	int used = 0;
	if (strncmp(err, frame, sizeof frame - 1) != 0 ||
	    sscanf(err + sizeof frame - 1, "%u col %u%n", &line, &col, &used) != 2 || used <= 0)
		return tb_strdup(err);
	if (line == 1)
		col += col0;
	line += line0;
	size_t n = strlen(err) + 64;
	char *out = tb_malloc(n);
	snprintf(out, n, "%s%u col %u%s", frame, line, col, err + sizeof frame - 1 + used);
	return out;
}

static int remote_statement(struct remote *r, const char *sql, size_t len, bool *printed_any,
                            unsigned line0, unsigned col0)
{
	struct pb_writer w;
	pb_writer_init_growable(&w);
	if (r->http) {
		pb_put_bytes(&w, PB_F_QueryArgs_sql_query, sql, len);
	} else {
		unsigned m = pb_begin_nested(&w, PB_F_TraceProcessorRpcStream_msg);
		pb_put_int64(&w, PB_F_TraceProcessorRpc_seq, 0); /* no ordering check */
		pb_put_int32(&w, PB_F_TraceProcessorRpc_request,
		             PB_E_TraceProcessorRpc_TraceProcessorMethod_TPM_QUERY_STREAMING);
		unsigned a = pb_begin_nested(&w, PB_F_TraceProcessorRpc_query_args);
		pb_put_bytes(&w, PB_F_QueryArgs_sql_query, sql, len);
		pb_end_nested(&w, a);
		pb_end_nested(&w, m);
	}
	int rc = 0;
	if (r->http) {
		char hdr[512];
		int n = snprintf(hdr, sizeof hdr,
		                 "POST /query HTTP/1.1\r\nHost: %s\r\nContent-Length: %zu\r\n\r\n",
		                 r->host, pb_writer_size(&w));
		rc = tb_write_all(r->fd, hdr, (size_t)n);
	}
	if (rc == 0)
		rc = tb_write_all(r->fd, pb_writer_data(&w), pb_writer_size(&w));
	pb_writer_release(&w);
	if (rc < 0) {
		tp_shell_error("--remote: cannot send: %s", strerror(-rc));
		return -1;
	}
	if (r->http) { /* skip the response headers */
		for (;;) {
			uint8_t *e = NULL;
			for (size_t i = 3; i < r->rx.len && !e; i++)
				if (memcmp(r->rx.data + i - 3, "\r\n\r\n", 4) == 0)
					e = r->rx.data + i + 1;
			if (e) {
				bool ok = r->rx.len > 12 && memcmp(r->rx.data + 9, "200", 3) == 0;
				remote_consume(r, (size_t)(e - r->rx.data));
				if (!ok) {
					tp_shell_error("--remote: the server refused the query");
					return -1;
				}
				break;
			}
			if (remote_fill(r) < 0) {
				tp_shell_error("--remote: connection closed");
				return -1;
			}
		}
	}
	struct remote_result rr = {0};
	int status = 0;
	while (!rr.last) {
		uint8_t *msg = NULL;
		size_t n = 0;
		if ((r->http ? remote_next_chunk(r, &msg, &n) : remote_next_rpc(r, &msg, &n)) < 0) {
			tp_shell_error("--remote: connection closed before the query ended");
			status = -1;
			break;
		}
		struct pb_field qr = {.data = msg, .len = n};
		if (!r->http) {
			struct pb_field f;
			if (pb_find_field(msg, n, PB_F_TraceProcessorRpc_fatal_error, &f) >= 1) {
				tp_shell_error("--remote: session: %.*s", (int)f.len,
				               (const char *)f.data);
				tb_free(msg);
				status = -1;
				break;
			}
			if (pb_find_field(msg, n, PB_F_TraceProcessorRpc_query_result, &qr) < 1) {
				tb_free(msg);
				continue;
			}
		}
		struct pb_reader rd;
		struct pb_field f;
		pb_reader_init(&rd, qr.data, qr.len);
		while (pb_next(&rd, &f)) {
			if (f.id == PB_F_QueryResult_column_names && f.wire == PB_WIRE_LEN) {
				vec_push(&rr.cols, tb_strndup((const char *)f.data, f.len));
			} else if (f.id == PB_F_QueryResult_error && f.wire == PB_WIRE_LEN &&
			           f.len) {
				tb_free(rr.error);
				rr.error = tb_strndup((const char *)f.data, f.len);
			} else if (f.id == PB_F_QueryResult_batch && f.wire == PB_WIRE_LEN) {
				if (!rr.header_done) {
					rr.header_done = true;
					rr.suppress =
					    rr.cols.len == 0 ||
					    (rr.cols.len == 1 &&
					     strcmp(rr.cols.data[0], "suppress_query_output") == 0);
					if (!rr.suppress) {
						if (*printed_any)
							fputc('\n', stdout);
						*printed_any = true;
						for (size_t i = 0; i < rr.cols.len; i++)
							printf("%s\"%s\"", i ? "," : "",
							       rr.cols.data[i]);
						fputc('\n', stdout);
					}
				}
				print_batch(stdout, &rr, f.data, f.len);
			}
		}
		tb_free(msg);
		if (rr.error)
			break;
	}
	if (status == 0 && rr.error) {
		char *report = whole_text_traceback(rr.error, line0, col0);
		fprintf(stderr, "%s\n", report); /* the server's traceback */
		tb_free(report);
		status = 1;
	}
	for (size_t i = 0; i < rr.cols.len; i++)
		tb_free(rr.cols.data[i]);
	vec_release(&rr.cols);
	tb_free(rr.error);
	return status;
}

int tp_shell_remote_query(struct shell_opts *o, const char *sql)
{
	const char *bad = o->full_sort                     ? "--full-sort"
	                  : o->no_ftrace_raw               ? "--no-ftrace-raw"
	                  : o->analyze_trace_proto_content ? "--analyze-trace-proto-content"
	                  : o->crop_track_events           ? "--crop-track-events"
	                  : o->allow_sql_file_access       ? "--allow-sql-file-access"
	                  : o->dev                         ? "--dev"
	                  : o->dev_flags.len               ? "--dev-flag"
	                  : o->extra_checks                ? "--extra-checks"
	                  : o->add_packages.len            ? "--add-sql-package"
	                  : o->override_packages.len       ? "--override-sql-package"
	                  : o->override_stdlib             ? "--override-stdlib"
	                  : o->register_files_dir          ? "--register-files-dir"
	                                                   : NULL;
	if (bad) {
		tp_shell_error(
		    "%s cannot be combined with --remote: the trace is already loaded and "
		    "configured by the session. Pass this flag to `tp server unix` when "
		    "starting the session instead.",
		    bad);
		return 1;
	}
	struct remote r;
	if (remote_connect(&r, o->remote) < 0) {
		if (r.fd >= 0)
			close(r.fd);
		return 1;
	}
	/* One request per statement, split where SQLite sees one end. */
	int status = 0;
	bool printed_any = false, any = false;
	const char *p = sql, *counted = sql;
	unsigned line0 = 0, col0 = 0;
	size_t n = strlen(sql);
	char *buf = tb_malloc(n + 2);
	int64_t t0 = tp_shell_now_ns();
	while (*p && status == 0) {
		size_t len = 0;
		const char *end = p;
		for (;;) {
			const char *semi = strchr(end, ';');
			end = semi ? semi + 1 : p + strlen(p);
			len = (size_t)(end - p);
			memcpy(buf, p, len);
			buf[len] = '\0';
			if (!semi || sqlite3_complete(buf))
				break;
		}
		size_t ws = strspn(buf, " \t\r\n;");
		if (buf[ws]) {
			for (; counted < p; counted++) /* where buf starts in sql */
				if (*counted == '\n')
					line0++, col0 = 0;
				else
					col0++;
			any = true;
			int rc = remote_statement(&r, buf, len, &printed_any, line0, col0);
			status = rc < 0 ? 1 : rc;
		}
		p = end;
	}
	if (status == 0 && !any) {
		tp_shell_error("No valid SQL to run");
		status = 1;
	}
	if (status == 0)
		fprintf(stderr, "Query execution time: %lld ms\n",
		        (long long)((tp_shell_now_ns() - t0) / 1000000));
	fflush(stdout);
	tb_free(buf);
	vec_release(&r.rx);
	close(r.fd);
	return status;
}
