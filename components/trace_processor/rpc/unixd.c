/*
 * `trace_processor_shell server unix`: the RPC of rpc.c on an AF_UNIX
 * stream socket, for `query --remote` clients of a warm session. Each
 * connection sends TraceProcessorRpcStream messages; each whole message is
 * run on the one shared RPC (clients send seq 0, so they do not trip the
 * ordering check) and its responses go back on that connection.
 *
 * Nothing blocks the loop: output is queued per connection, and a streaming
 * query whose client holds OUT_HIGH_WATER bytes unread pauses (rpc.c flow
 * control) until the client drains it; other clients' requests wait their
 * turn meanwhile (one RPC, one query at a time). A client that reads
 * nothing for STALL_MS while its query is paused is dropped.
 *
 * The socket is created mode 0600 and a peer of another uid (root apart)
 * is refused: the session exposes the whole trace.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "rpc.h"

#define MAX_CONNS 32
#define READ_CHUNK ((size_t)256 << 10)
#define OUT_HIGH_WATER ((size_t)1 << 20)
#define STALL_MS 30000
#define TICK_MS 1000

struct unixd;

struct uconn {
	struct unixd *u;
	int fd;
	VEC(uint8_t) rx;
	VEC(uint8_t) out;
	size_t out_off;
	bool dead, closing;
	int64_t last_write_ns;
};

struct unixd {
	struct loop *loop;
	struct tp_rpc *rpc;
	int lfd;
	struct uconn *conns[MAX_CONNS];
	struct uconn *owner; /* whose query is paused */
	struct tp_idle_clock idle;
	uint64_t tick;
};

static void conn_close(struct unixd *u, struct uconn *c)
{
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (u->conns[i] == c)
			u->conns[i] = NULL;
	if (u->owner == c) {
		tp_rpc_abort(u->rpc);
		u->owner = NULL;
	}
	loop_del_fd(u->loop, c->fd);
	close(c->fd);
	vec_release(&c->rx);
	vec_release(&c->out);
	tb_free(c);
}

static void flush_some(struct uconn *c)
{
	while (c->out_off < c->out.len) {
		ssize_t n = send(c->fd, c->out.data + c->out_off, c->out.len - c->out_off,
		                 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0) {
			c->dead = true;
			return;
		}
		c->out_off += (size_t)n;
		c->last_write_ns = tb_mono_ns();
	}
	if (c->out_off == c->out.len) {
		vec_clear(&c->out);
		c->out_off = 0;
	}
}

static void conn_send(void *ctx, const uint8_t *p, size_t n)
{
	struct uconn *c = ctx;
	if (!p) { /* a fatal RPC error: its message is queued, then we close */
		c->closing = true;
		return;
	}
	if (c->dead)
		return;
	vec_reserve(&c->out, n);
	memcpy(c->out.data + c->out.len, p, n);
	c->out.len += n;
	flush_some(c);
}

static bool conn_full(void *ctx)
{
	struct uconn *c = ctx;
	return c->dead || c->out.len - c->out_off > OUT_HIGH_WATER;
}

/* The size of the whole stream message at the start of c->rx (0: not yet
 * complete), or -1 for a framing error. */
static long whole_message(const struct uconn *c)
{
	uint64_t tag, size;
	const uint8_t *p = c->rx.data, *end = p + c->rx.len;
	const uint8_t *q = c->rx.len ? pb_read_varint(p, end, &tag) : NULL;
	if (!q)
		return c->rx.len >= PB_VARINT_MAX_LEN ? -1 : 0;
	if ((tag & 7) != PB_WIRE_LEN)
		return -1;
	const uint8_t *b = pb_read_varint(q, end, &size);
	if (!b)
		return (size_t)(end - q) >= PB_VARINT_MAX_LEN ? -1 : 0;
	if (size > TP_RPC_MAX_MSG)
		return -1;
	return (size_t)(end - b) >= size ? (long)((size_t)(b - p) + size) : 0;
}

static void update_events(struct unixd *u, struct uconn *c)
{
	uint32_t ev = (c->closing ? 0 : LOOP_IN) | (c->out.len ? LOOP_OUT : 0);
	loop_mod_fd(u->loop, c->fd, ev);
}

/* Run c's whole messages while the RPC is not paused. */
static void process(struct unixd *u, struct uconn *c)
{
	while (!u->owner && !c->dead && !c->closing) {
		long n = whole_message(c);
		if (n == 0)
			break;
		if (n < 0) {
			/* Not a stream: answer as the RPC does, then close. */
			tp_rpc_reset_stream(u->rpc);
			tp_rpc_feed(u->rpc, c->rx.data, c->rx.len, conn_send, c);
			tp_rpc_reset_stream(u->rpc);
			c->closing = true;
			vec_clear(&c->rx);
			break;
		}
		tp_idle_activity(&u->idle);
		tp_rpc_reset_stream(u->rpc);
		int rc = tp_rpc_feed(u->rpc, c->rx.data, (size_t)n, conn_send, c);
		memmove(c->rx.data, c->rx.data + n, c->rx.len - (size_t)n);
		c->rx.len -= (size_t)n;
		if (rc == TP_RPC_PAUSED)
			u->owner = c;
		else if (rc < 0)
			tp_rpc_reset_stream(u->rpc); /* that client's stream only */
	}
}

static void process_all(struct unixd *u)
{
	for (unsigned i = 0; i < MAX_CONNS && !u->owner; i++) {
		struct uconn *c = u->conns[i];
		if (c && c->rx.len) {
			process(u, c);
			update_events(u, c);
		}
	}
}

static void on_conn(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct uconn *c = ctx;
	struct unixd *u = c->u;
	bool eof = false;
	(void)l;
	(void)fd;
	if (events & LOOP_OUT) {
		flush_some(c);
		if (u->owner == c && !conn_full(c)) {
			int rc = tp_rpc_resume(u->rpc, conn_send, c);
			if (rc != TP_RPC_PAUSED)
				u->owner = NULL;
		}
	}
	if (events & (LOOP_IN | LOOP_HUP | LOOP_ERR)) {
		size_t cap = TP_RPC_MAX_MSG + 16;
		while (!c->dead && c->rx.len < cap) {
			size_t want = cap - c->rx.len < READ_CHUNK ? cap - c->rx.len : READ_CHUNK;
			vec_reserve(&c->rx, want);
			ssize_t n = recv(c->fd, c->rx.data + c->rx.len, want, MSG_DONTWAIT);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				break;
			if (n <= 0) {
				eof = true;
				break;
			}
			c->rx.len += (size_t)n;
		}
		process(u, c);
	}
	if (c->dead || (eof && !c->out.len) || (c->closing && !c->out.len)) {
		conn_close(u, c);
		process_all(u);
		return;
	}
	if (eof)
		c->closing = true;
	update_events(u, c);
	if (!u->owner)
		process_all(u);
}

/* Only our own uid (or root) may talk to the session. */
static bool peer_allowed(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return false;
	return cred.uid == geteuid() || cred.uid == 0;
}

static void on_accept(struct loop *l, int lfd, uint32_t events, void *ctx)
{
	struct unixd *u = ctx;
	(void)events;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		unsigned slot = MAX_CONNS;
		for (unsigned i = 0; i < MAX_CONNS && slot == MAX_CONNS; i++)
			if (!u->conns[i])
				slot = i;
		if (slot == MAX_CONNS || !peer_allowed(fd)) {
			log_warn("unixd", "%s: refusing a connection",
			         slot == MAX_CONNS ? "too many connections"
			                           : "peer of another user");
			close(fd);
			continue;
		}
		struct uconn *c = tb_calloc(1, sizeof *c);
		c->u = u;
		c->fd = fd;
		c->last_write_ns = tb_mono_ns();
		if (loop_add_fd(l, fd, LOOP_IN, on_conn, c) < 0) {
			close(fd);
			tb_free(c);
			continue;
		}
		u->conns[slot] = c;
	}
}

static void on_tick(struct loop *l, uint64_t id, void *ctx)
{
	struct unixd *u = ctx;
	(void)id;
	struct uconn *o = u->owner;
	if (o && o->out.len && tb_mono_ns() - o->last_write_ns > (int64_t)STALL_MS * 1000000) {
		log_warn("unixd", "a client read nothing for %d s: dropping it", STALL_MS / 1000);
		conn_close(u, o);
		process_all(u);
	}
	if (!u->owner && tp_idle_expired(&u->idle)) {
		log_info("unixd", "idle for %u ms: stopping", u->idle.cfg.timeout_ms);
		loop_quit(l, 0);
	}
}

static void on_signal(struct loop *l, int signo, void *ctx)
{
	(void)signo;
	(void)ctx;
	loop_quit(l, 0);
}

/* Print the startup line: the session's pid, name, socket and idle timeout,
 * shell-quoted where needed so it stays cut-and-pasteable. */
static void print_record(FILE *f, int pid, const struct tp_unixd_opts *o)
{
	const char *vals[2] = {o->session_name, o->socket_path};
	fprintf(f, "perfetto-session pid=%d", pid);
	for (int k = 0; k < 2; k++) {
		const char *v = vals[k];
		bool quote = !*v;
		for (const char *p = v; *p && !quote; p++)
			quote = !((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			          (*p >= '0' && *p <= '9') || strchr("/._-\\:", *p));
		fputs(k == 0 ? " session=" : " socket-path=", f);
		if (!quote) {
			fputs(v, f);
			continue;
		}
		fputc('\'', f);
		for (const char *p = v; *p; p++)
			fputs(*p == '\'' ? "'\\''" : (char[2]){*p, 0}, f);
		fputc('\'', f);
	}
	if (o->idle.timeout_ms)
		fprintf(f, " idle-timeout=%ums\n", o->idle.timeout_ms);
	else
		fputs(" idle-timeout=never\n", f);
	fflush(f);
}

int tp_unixd_run(struct tp_rpc *rpc, const struct tp_unixd_opts *o)
{
	struct unixd u = {.rpc = rpc, .lfd = -1};
	struct tb_err err = {0};
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	char pid_path[sizeof sa.sun_path + 8];
	bool bound = false, pid_written = false;
	int status = 1;
	if (strlen(o->socket_path) >= sizeof sa.sun_path) {
		fprintf(stderr, "trace_processor_shell: socket path too long: %s\n",
		        o->socket_path);
		return 1;
	}
	memcpy(sa.sun_path, o->socket_path, strlen(o->socket_path) + 1);
	snprintf(pid_path, sizeof pid_path, "%s.pid", o->socket_path);

	/* A socket left by a server that died goes; a live one stays. */
	struct stat st;
	if (lstat(o->socket_path, &st) == 0) {
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		bool live = probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof sa) == 0;
		if (probe >= 0)
			close(probe);
		if (live) {
			fprintf(
			    stderr,
			    "trace_processor_shell: A live session already holds %s. Pick another "
			    "--name/--path or stop the existing server.\n",
			    o->socket_path);
			return 1;
		}
		if (!S_ISSOCK(st.st_mode)) {
			fprintf(stderr, "trace_processor_shell: %s exists and is not a socket\n",
			        o->socket_path);
			return 1;
		}
		unlink(o->socket_path);
	}
	u.lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	mode_t old = umask(077);
	int brc = u.lfd < 0 ? -1 : bind(u.lfd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (brc < 0 || listen(u.lfd, SOMAXCONN) < 0) {
		fprintf(stderr, "trace_processor_shell: Failed to bind session socket at %s: %s\n",
		        o->socket_path, strerror(errno));
		goto out;
	}
	bound = true;
	chmod(o->socket_path, 0600);
	if (o->daemonize) {
		fflush(stdout);
		fflush(stderr);
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "trace_processor_shell: cannot fork: %s\n",
			        strerror(errno));
			goto out;
		}
		if (pid > 0) {
			print_record(stdout, (int)pid, o);
			_exit(0); /* the child owns the socket now */
		}
		setsid();
		if (chdir("/") < 0) { /* (cannot fail for /) */
		}
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			dup2(nul, 2);
			if (nul > 2)
				close(nul);
		}
	} else {
		print_record(stdout, (int)getpid(), o);
		fprintf(stderr,
		        "[unix] Serving warm session '%s'. Query it with:\n"
		        "  trace_processor_shell query --remote %s \"SELECT ...\"\n"
		        "Stop it with Ctrl-C, or: trace_processor_shell server kill %s\n",
		        o->session_name, o->session_name, o->session_name);
	}
	FILE *pf = fopen(pid_path, "we");
	if (pf) {
		fprintf(pf, "%d", (int)getpid());
		fclose(pf);
		pid_written = true;
	}
	if (!(u.loop = loop_new(&err)))
		goto out;
	tp_idle_init(&u.idle, &o->idle);
	tp_rpc_set_flow(rpc, conn_full);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	if (loop_add_fd(u.loop, u.lfd, LOOP_IN, on_accept, &u) < 0 ||
	    loop_add_signal(u.loop, SIGINT, on_signal, NULL) < 0 ||
	    loop_add_signal(u.loop, SIGTERM, on_signal, NULL) < 0 ||
	    !(u.tick = loop_add_timer(u.loop, TICK_MS, TICK_MS, on_tick, &u))) {
		fprintf(stderr, "trace_processor_shell: cannot start the session loop\n");
		goto out;
	}
	status = loop_run(u.loop) < 0 ? 1 : 0;
out:
	if (tb_err_is_set(&err))
		fprintf(stderr, "trace_processor_shell: %s\n", err.msg);
	for (unsigned i = 0; i < MAX_CONNS; i++)
		if (u.conns[i])
			conn_close(&u, u.conns[i]);
	tp_rpc_set_flow(rpc, NULL);
	if (u.lfd >= 0) {
		if (u.loop)
			loop_del_fd(u.loop, u.lfd);
		close(u.lfd);
	}
	if (bound)
		unlink(o->socket_path);
	if (pid_written)
		unlink(pid_path);
	if (u.loop)
		loop_free(u.loop);
	return status;
}
