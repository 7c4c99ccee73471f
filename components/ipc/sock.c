/*
 * AF_UNIX stream sockets for the IPC: Perfetto's socket names (environment
 * overrides, /run/perfetto or /tmp defaults, "@name" for the Linux abstract
 * namespace), listen and connect, SO_PEERCRED, and the sendmsg/recvmsg pair
 * that carries at most one fd per frame as SCM_RIGHTS. Every fd made here is
 * close-on-exec and non-blocking; the event loop does the waiting.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ipc.h"
#include "ipc_int.h"

static const char *default_name(const char *env, const char *run_path, const char *tmp_path)
{
	const char *name = getenv(env);
	if (name && *name)
		return name;
	return access("/run/perfetto/", X_OK) == 0 ? run_path : tmp_path;
}

const char *ipc_producer_socket_name(void)
{
	return default_name("PERFETTO_PRODUCER_SOCK_NAME", "/run/perfetto/traced-producer.sock",
	                    "/tmp/perfetto-producer");
}

const char *ipc_consumer_socket_name(void)
{
	return default_name("PERFETTO_CONSUMER_SOCK_NAME", "/run/perfetto/traced-consumer.sock",
	                    "/tmp/perfetto-consumer");
}

/* Fill *sa for name; returns the address length or -ENAMETOOLONG/-EINVAL. */
static int make_addr(const char *name, struct sockaddr_un *sa)
{
	size_t n = strlen(name);
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	if (n == 0)
		return -EINVAL;
	if (name[0] == '@') {
		/* Abstract: a leading NUL, then the name, no terminator. */
		if (n > sizeof sa->sun_path)
			return -ENAMETOOLONG;
		memcpy(sa->sun_path + 1, name + 1, n - 1);
		return (int)(offsetof(struct sockaddr_un, sun_path) + n);
	}
	if (n >= sizeof sa->sun_path)
		return -ENAMETOOLONG;
	memcpy(sa->sun_path, name, n);
	return (int)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static int new_socket(struct tb_err *err)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return tb_err_errno(err, -errno, "cannot create a unix socket");
	return fd;
}

int ipc_sock_listen(const char *name, struct tb_err *err)
{
	struct sockaddr_un sa;
	int fd = -1, ret;
	int alen = make_addr(name, &sa);
	if (alen < 0)
		return tb_err_errno(err, alen, "bad socket name '%s'", name);
	fd = ret = new_socket(err);
	if (fd < 0)
		goto out;
	if (name[0] != '@')
		unlink(name);
	if (bind(fd, (struct sockaddr *)&sa, (socklen_t)alen) < 0) {
		ret = tb_err_errno(err, -errno, "cannot bind '%s'", name);
		goto out;
	}
	if (listen(fd, SOMAXCONN) < 0) {
		ret = tb_err_errno(err, -errno, "cannot listen on '%s'", name);
		goto out;
	}
	return fd;
out:
	tb_close(&fd);
	return ret;
}

int ipc_sock_connect(const char *name, struct tb_err *err)
{
	struct sockaddr_un sa;
	int fd = -1, ret;
	int alen = make_addr(name, &sa);
	if (alen < 0)
		return tb_err_errno(err, alen, "bad socket name '%s'", name);
	fd = ret = new_socket(err);
	if (fd < 0)
		goto out;
	/* AF_UNIX connect completes at once (or fails with EAGAIN when the
	 * backlog is full, which we report like any other failure). */
	if (connect(fd, (struct sockaddr *)&sa, (socklen_t)alen) < 0) {
		ret = tb_err_errno(err, -errno, "cannot connect to '%s'", name);
		goto out;
	}
	return fd;
out:
	tb_close(&fd);
	return ret;
}

int ipc_sock_peercred(int fd, uid_t *uid, pid_t *pid)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return -errno;
	*uid = cr.uid;
	*pid = cr.pid;
	return 0;
}

ssize_t ipc_sock_send(int fd, const void *p, size_t n, int send_fd)
{
	struct iovec iov = {(void *)p, n};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	if (send_fd >= 0) {
		memset(&ctl, 0, sizeof ctl);
		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof ctl.buf;
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &send_fd, sizeof(int));
	}
	for (;;) {
		ssize_t r = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r >= 0)
			return r;
		if (errno == EINTR)
			continue;
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

ssize_t ipc_sock_recv(int fd, void *p, size_t n, int *recv_fd)
{
	struct iovec iov = {p, n};
	/* Room for a few fds so a misbehaving peer's extras are seen and
	 * closed rather than silently truncated. */
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = {.msg_iov = &iov,
	                     .msg_iovlen = 1,
	                     .msg_control = ctl.buf,
	                     .msg_controllen = sizeof ctl.buf};
	ssize_t r;
	*recv_fd = -1;
	do
		r = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	int extra = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfds; i++) {
			int got;
			memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
			if (*recv_fd < 0) {
				*recv_fd = got;
			} else {
				close(got);
				extra = 1;
			}
		}
	}
	if (msg.msg_flags & MSG_CTRUNC || extra) {
		tb_close(recv_fd);
		return -EPROTO;
	}
	if (*recv_fd >= 0)
		tb_set_cloexec(*recv_fd, true); /* MSG_CMSG_CLOEXEC did it; belt and braces */
	return r;
}
