/*
 * control.c: `--control fifo:CTL[,ACK]`, a start gate the workload holds,
 * as `perf record --control fifo:CTL,ACK --delay=-1` gives: perf sampling
 * starts disabled, and the workload (or anyone) writes command words into
 * the CTL fifo; each is acknowledged with "ack\n" on the ACK fifo once done:
 *
 *   enable    start sampling; acknowledged once every data source has
 *             started and every linux.perf instance has enabled its events
 *   disable   stop sampling (the samples taken so far are kept)
 *   ping      nothing; acknowledged at once
 *   stop      end the capture now (as the workload's exit would); the
 *             workload goes on, the status line comes when it exits
 *
 * Words end at '\n' or NUL; anything else is answered "err\n". The fifos
 * are made (0600) when they do not exist, and then removed at the end; the
 * workload finds them in $TRACEBOX_CONTROL ("fifo:CTL,ACK", absolute paths).
 *
 * The recorder passes each command on to traced_perf over a private unix
 * socket (a 0711 folder of its own, socket path in the linux.perf sources'
 * legacy_config "control=PATH"): each instance connects when it starts,
 * says "hello\n", opens its events disabled, and answers "enable\n" and
 * "disable\n" with "ack\n" once its events are. Only connections from root
 * or the recorder's own user are accepted.
 *
 *   workload ──CTL fifo──▶ recorder ──"enable\n"──▶ traced_perf (each instance)
 *   workload ◀──ACK fifo── recorder ◀───"ack\n"──── traced_perf
 */
#include "perfetto_cmd_int.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define CTL_LINE_MAX 128
#define CTL_PEER_WAIT_MS 10000 /* for every linux.perf instance to connect */

enum { CMD_NONE, CMD_ENABLE, CMD_DISABLE, CMD_PING, CMD_STOP, CMD_BAD };

struct ctl_peer {
	int fd;
	bool hello;
	char buf[64];
	size_t len;
};

struct perfetto_cmd_control {
	char ctl_path[PATH_MAX], ack_path[PATH_MAX];
	bool made_ctl, made_ack;
	int ctl_fd, ack_fd;
	char dir[PATH_MAX - 16], sock_path[PATH_MAX];
	int listen_fd;
	VEC(struct ctl_peer) peers;
	size_t expected; /* linux.perf instances told to connect */
	bool started;    /* every data source started */
	bool stopped;    /* the session is over: commands are just acknowledged */
	char line[CTL_LINE_MAX];
	size_t line_len;
	bool line_too_long;
	VEC(int) queue; /* commands not carried out yet */
	int pending;    /* the command waiting for peer acks */
	size_t acks;
	struct loop *l;
	uint64_t wait_timer; /* waiting for peers to connect */
	bool wait_over;
	void (*on_stop)(void *ctx);
	void *ctx;
};

static void ctl_process(struct perfetto_cmd_control *c);

/* Resolve path to an absolute one (its folder must exist). */
static int absolute(const char *path, char *out, size_t cap, struct tb_err *err)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int n = snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1,
	                 slash ? (slash == path ? "/" : path) : ".");
	if (n < 0 || (size_t)n >= sizeof dir || !realpath(dir, real))
		return tb_err_errno(err, -errno, "--control: cannot find the folder of '%s'", path);
	if (!*base ||
	    (size_t)snprintf(out, cap, "%s/%s", strcmp(real, "/") ? real : "", base) >= cap)
		return tb_err_set(err, -EINVAL, "--control: bad fifo path '%s'", path);
	return 0;
}

/* Open (making it when missing) one fifo, read-write so it never sees EOF
 * and never blocks the open. */
static int open_fifo(const char *path, bool *made, struct tb_err *err)
{
	struct stat st;
	int fd;
	*made = false;
	if (lstat(path, &st) < 0) {
		if (errno != ENOENT || mkfifo(path, 0600) < 0)
			return tb_err_errno(err, -errno, "--control: cannot make the fifo '%s'",
			                    path);
		*made = true;
	} else if (!S_ISFIFO(st.st_mode)) {
		return tb_err_set(err, -EINVAL, "--control: '%s' exists and is not a fifo", path);
	}
	fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return tb_err_errno(err, -errno, "--control: cannot open '%s'", path);
	return fd;
}

struct perfetto_cmd_control *perfetto_cmd_control_new(const char *spec, struct tb_err *err)
{
	struct perfetto_cmd_control *c = tb_calloc(1, sizeof *c);
	char ctl[PATH_MAX], ack[PATH_MAX] = "";
	const char *tmp = getenv("TMPDIR");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *comma;
	size_t n;

	c->ctl_fd = c->ack_fd = c->listen_fd = -1;
	if (strncmp(spec, "fifo:", 5) != 0) {
		tb_err_set(err, -EINVAL, "--control: expected fifo:CTL[,ACK], not '%s'", spec);
		goto fail;
	}
	spec += 5;
	comma = strchr(spec, ',');
	n = comma ? (size_t)(comma - spec) : strlen(spec);
	if (!n || n >= sizeof ctl || (comma && (!comma[1] || strlen(comma + 1) >= sizeof ack))) {
		tb_err_set(err, -EINVAL, "--control: expected fifo:CTL[,ACK]");
		goto fail;
	}
	memcpy(ctl, spec, n);
	ctl[n] = 0;
	if (comma)
		snprintf(ack, sizeof ack, "%s", comma + 1);
	if (absolute(ctl, c->ctl_path, sizeof c->ctl_path, err) < 0 ||
	    (ack[0] && absolute(ack, c->ack_path, sizeof c->ack_path, err) < 0))
		goto fail;
	if ((c->ctl_fd = open_fifo(c->ctl_path, &c->made_ctl, err)) < 0 ||
	    (c->ack_path[0] && (c->ack_fd = open_fifo(c->ack_path, &c->made_ack, err)) < 0))
		goto fail;
	if ((size_t)snprintf(c->dir, sizeof c->dir, "%s/tracebox-ctl-XXXXXX",
	                     tmp && *tmp ? tmp : "/tmp") >= sizeof c->dir) {
		tb_err_set(err, -ENAMETOOLONG, "--control: $TMPDIR is too long");
		c->dir[0] = 0;
		goto fail;
	}
	if (!mkdtemp(c->dir)) {
		tb_err_errno(err, -errno, "--control: cannot make a folder in '%s'",
		             tmp && *tmp ? tmp : "/tmp");
		c->dir[0] = 0;
		goto fail;
	}
	chmod(c->dir, 0711); /* a system traced_perf may run as another user */
	snprintf(c->sock_path, sizeof c->sock_path, "%s/perf.sock", c->dir);
	if (strlen(c->sock_path) >= sizeof sa.sun_path) {
		tb_err_set(err, -ENAMETOOLONG, "--control: '%s' is too long for a socket",
		           c->sock_path);
		goto fail;
	}
	memcpy(sa.sun_path, c->sock_path, strlen(c->sock_path) + 1);
	if ((c->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
	    bind(c->listen_fd, (struct sockaddr *)&sa, sizeof sa) < 0 ||
	    chmod(c->sock_path, 0666) < 0 || listen(c->listen_fd, 16) < 0) {
		tb_err_errno(err, -errno, "--control: cannot listen on '%s'", c->sock_path);
		goto fail;
	}
	return c;
fail:
	perfetto_cmd_control_free(c);
	return NULL;
}

void perfetto_cmd_control_free(struct perfetto_cmd_control *c)
{
	if (!c)
		return;
	perfetto_cmd_control_detach(c);
	for (size_t i = 0; i < c->peers.len; i++)
		tb_close(&c->peers.data[i].fd);
	vec_release(&c->peers);
	vec_release(&c->queue);
	tb_close(&c->ctl_fd);
	tb_close(&c->ack_fd);
	tb_close(&c->listen_fd);
	if (c->sock_path[0])
		unlink(c->sock_path);
	if (c->dir[0])
		rmdir(c->dir);
	if (c->made_ctl)
		unlink(c->ctl_path);
	if (c->made_ack)
		unlink(c->ack_path);
	tb_free(c);
}

const char *perfetto_cmd_control_socket(const struct perfetto_cmd_control *c)
{
	return c->sock_path;
}

void perfetto_cmd_control_env(const struct perfetto_cmd_control *c, char *out, size_t cap)
{
	snprintf(out, cap, "fifo:%s%s%s", c->ctl_path, c->ack_path[0] ? "," : "", c->ack_path);
}

static void reply(struct perfetto_cmd_control *c, const char *what)
{
	if (c->ack_fd >= 0 && tb_write_all(c->ack_fd, what, strlen(what)) < 0)
		log_warn(PERFETTO_CMD_TAG, "--control: cannot write to '%s': %s", c->ack_path,
		         strerror(errno));
}

static int parse_cmd(const char *s)
{
	static const struct {
		const char *word;
		int cmd;
	} words[] = {{"enable", CMD_ENABLE},
	             {"disable", CMD_DISABLE},
	             {"ping", CMD_PING},
	             {"stop", CMD_STOP}};
	for (size_t i = 0; i < TB_ARRAY_SIZE(words); i++)
		if (strcmp(s, words[i].word) == 0)
			return words[i].cmd;
	return CMD_BAD;
}

static size_t hello_peers(const struct perfetto_cmd_control *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->peers.len; i++)
		n += c->peers.data[i].hello;
	return n;
}

static void on_wait_timer(struct loop *l, uint64_t id, void *ctx)
{
	struct perfetto_cmd_control *c = ctx;
	c->wait_timer = 0;
	c->wait_over = true;
	log_warn(PERFETTO_CMD_TAG,
	         "--control: %zu of %zu linux.perf instances connected within %d ms (is the "
	         "perf data source tracebox's traced_perf?); going on with those",
	         hello_peers(c), c->expected, CTL_PEER_WAIT_MS);
	ctl_process(c);
}

/* The pending command is done when every connected instance answered. */
static void check_pending(struct perfetto_cmd_control *c)
{
	if (c->pending == CMD_NONE || c->acks < hello_peers(c))
		return;
	c->pending = CMD_NONE;
	reply(c, "ack\n");
	ctl_process(c);
}

static void send_peers(struct perfetto_cmd_control *c, const char *word)
{
	for (size_t i = 0; i < c->peers.len; i++)
		if (c->peers.data[i].hello &&
		    tb_write_all(c->peers.data[i].fd, word, strlen(word)) < 0)
			log_warn(PERFETTO_CMD_TAG, "--control: a linux.perf instance went away");
}

/* Carry out queued commands until one has to wait. */
static void ctl_process(struct perfetto_cmd_control *c)
{
	while (c->pending == CMD_NONE && c->queue.len) {
		int cmd = c->queue.data[0];
		if (!c->stopped && cmd == CMD_ENABLE) {
			if (!c->started)
				return; /* once every data source has started */
			if (hello_peers(c) < c->expected && !c->wait_over) {
				if (!c->wait_timer && c->l)
					c->wait_timer = loop_add_timer(c->l, CTL_PEER_WAIT_MS, 0,
					                               on_wait_timer, c);
				return;
			}
		}
		memmove(c->queue.data, c->queue.data + 1, (c->queue.len - 1) * sizeof(int));
		c->queue.len--;
		switch (cmd) {
		case CMD_ENABLE:
		case CMD_DISABLE:
			if (c->stopped || !hello_peers(c)) {
				reply(c, "ack\n");
				break;
			}
			c->pending = cmd;
			c->acks = 0;
			send_peers(c, cmd == CMD_ENABLE ? "enable\n" : "disable\n");
			break;
		case CMD_PING:
			reply(c, "ack\n");
			break;
		case CMD_STOP:
			reply(c, "ack\n");
			if (!c->stopped && c->on_stop) {
				c->stopped = true;
				c->on_stop(c->ctx);
			}
			break;
		default:
			reply(c, "err\n");
			break;
		}
	}
}

static void add_cmd(struct perfetto_cmd_control *c, const char *word)
{
	int cmd = parse_cmd(word);
	if (cmd == CMD_BAD)
		log_warn(PERFETTO_CMD_TAG, "--control: unknown command '%s'", word);
	vec_push(&c->queue, cmd);
}

static void on_ctl(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct perfetto_cmd_control *c = ctx;
	char buf[512];
	ssize_t n;
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			char ch = buf[i];
			if (ch == '\n' || ch == '\0') {
				c->line[c->line_len] = 0;
				/* trailing spaces and CRs are not part of the word */
				while (c->line_len && (c->line[c->line_len - 1] == ' ' ||
				                       c->line[c->line_len - 1] == '\r'))
					c->line[--c->line_len] = 0;
				if (c->line_too_long)
					vec_push(&c->queue, CMD_BAD);
				else if (c->line_len)
					add_cmd(c, c->line);
				c->line_len = 0;
				c->line_too_long = false;
			} else if (c->line_len + 1 < sizeof c->line) {
				c->line[c->line_len++] = ch;
			} else {
				c->line_too_long = true;
			}
		}
	}
	ctl_process(c);
}

static void drop_peer(struct perfetto_cmd_control *c, size_t i)
{
	loop_del_fd(c->l, c->peers.data[i].fd);
	tb_close(&c->peers.data[i].fd);
	c->peers.data[i] = *vec_last(&c->peers);
	c->peers.len--;
}

static void on_peer(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct perfetto_cmd_control *c = ctx;
	size_t i = 0;
	while (i < c->peers.len && c->peers.data[i].fd != fd)
		i++;
	if (i == c->peers.len)
		return;
	struct ctl_peer *p = &c->peers.data[i];
	ssize_t n = read(fd, p->buf + p->len, sizeof p->buf - 1 - p->len);
	if (n <= 0) {
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		drop_peer(c, i);
		check_pending(c);
		return;
	}
	p->len += (size_t)n;
	char *nl;
	while ((nl = memchr(p->buf, '\n', p->len))) {
		*nl = 0;
		if (strcmp(p->buf, "hello") == 0 && !p->hello) {
			p->hello = true;
			if (hello_peers(c) >= c->expected && c->wait_timer) {
				loop_cancel_timer(c->l, c->wait_timer);
				c->wait_timer = 0;
			}
		} else if (strcmp(p->buf, "ack") == 0) {
			c->acks++;
		}
		size_t used = (size_t)(nl - p->buf) + 1;
		memmove(p->buf, p->buf + used, p->len - used);
		p->len -= used;
	}
	if (p->len == sizeof p->buf - 1)
		p->len = 0; /* a line too long: not a peer's */
	check_pending(c);
	ctl_process(c);
}

static void on_accept(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct perfetto_cmd_control *c = ctx;
	int s;
	while ((s = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct ucred cr;
		socklen_t len = sizeof cr;
		if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0 ||
		    (cr.uid != 0 && cr.uid != geteuid()) ||
		    loop_add_fd(l, s, LOOP_IN, on_peer, c) < 0) {
			close(s);
			continue;
		}
		vec_push(&c->peers, ((struct ctl_peer){.fd = s}));
	}
}

int perfetto_cmd_control_attach(struct perfetto_cmd_control *c, struct loop *l, size_t expected,
                                void (*on_stop)(void *ctx), void *ctx)
{
	c->l = l;
	c->expected = expected;
	c->on_stop = on_stop;
	c->ctx = ctx;
	if (loop_add_fd(l, c->ctl_fd, LOOP_IN, on_ctl, c) < 0 ||
	    loop_add_fd(l, c->listen_fd, LOOP_IN, on_accept, c) < 0)
		return -EIO;
	on_ctl(l, c->ctl_fd, LOOP_IN, c); /* commands written before we listened */
	return 0;
}

void perfetto_cmd_control_detach(struct perfetto_cmd_control *c)
{
	if (!c->l)
		return;
	if (c->wait_timer)
		loop_cancel_timer(c->l, c->wait_timer);
	c->wait_timer = 0;
	for (size_t i = 0; i < c->peers.len; i++)
		loop_del_fd(c->l, c->peers.data[i].fd);
	loop_del_fd(c->l, c->ctl_fd);
	loop_del_fd(c->l, c->listen_fd);
	c->l = NULL;
}

void perfetto_cmd_control_started(struct perfetto_cmd_control *c)
{
	c->started = true;
	ctl_process(c);
}

void perfetto_cmd_control_stopped(struct perfetto_cmd_control *c)
{
	c->stopped = true;
	c->pending = CMD_NONE;
	ctl_process(c);
}
