/*
 * One framed IPC connection on the event loop, shared by the host (one per
 * accepted client) and the client: reads into an ipc_rxbuf and hands whole
 * frames to the owner, keeps the single received-fd slot, and sends through
 * a bounded queue when the socket is full. A peer that lets the queue
 * overflow, or does not drain it for timeout_ms, fails the connection.
 *
 * Failures found while the owner is calling in (a send on a full queue) are
 * reported later from a zero-delay timer, so owners never see on_error
 * re-entrantly; failures found while reading are reported at once, inside
 * the busy section, and the owner's memory is freed only when that section
 * ends (ipc_conn_free_owner / ipc_conn_leave).
 */
#include <errno.h>
#include <unistd.h>

#include "ipc_int.h"

/* Reads per readiness event, so one chatty peer cannot starve the rest. */
#define CONN_READS_PER_EVENT 16
/* A receive buffer bigger than this is freed when it has nothing in it: an
 * idle connection that once got a big frame holds no 128 KiB for ever. */
#define CONN_RXBUF_KEEP ((size_t)16 * 1024)

static void conn_io(struct loop *l, int fd, uint32_t events, void *ctx);

int ipc_conn_init(struct ipc_conn *c, struct loop *l, int fd, const struct ipc_conn_ops *ops,
                  void *owner)
{
	memset(c, 0, sizeof *c);
	c->loop = l;
	c->ops = ops;
	c->owner = owner;
	c->fd = fd;
	c->rx_fd = -1;
	c->max_queue = IPC_SEND_QUEUE_MAX;
	c->timeout_ms = IPC_SEND_TIMEOUT_MS;
	int r = tb_set_nonblock(fd, true);
	if (r == 0)
		r = loop_add_fd(l, fd, LOOP_IN, conn_io, c);
	if (r < 0) {
		c->closed = true;
		tb_close(&c->fd);
	}
	return r;
}

static void drop_queue(struct ipc_conn *c)
{
	for (size_t i = 0; i < c->tx_fds.len; i++)
		close(c->tx_fds.data[i].fd);
	vec_release(&c->tx_fds);
	vec_release(&c->txq);
	vec_release(&c->frame);
	c->tx_head = 0;
}

void ipc_conn_close(struct ipc_conn *c)
{
	if (c->closed)
		return;
	c->closed = true;
	if (c->fd >= 0)
		loop_del_fd(c->loop, c->fd);
	tb_close(&c->fd);
	tb_close(&c->rx_fd);
	if (c->stall_timer)
		loop_cancel_timer(c->loop, c->stall_timer);
	if (c->fail_timer)
		loop_cancel_timer(c->loop, c->fail_timer);
	c->stall_timer = c->fail_timer = 0;
	drop_queue(c);
	ipc_rxbuf_release(&c->rx);
}

bool ipc_conn_free_owner(struct ipc_conn *c)
{
	if (c->busy > 0) {
		c->free_pending = true;
		return false;
	}
	c->ops->destroy(c->owner);
	return true;
}

bool ipc_conn_leave(struct ipc_conn *c)
{
	TB_CHECK(c->busy > 0);
	if (--c->busy == 0 && c->free_pending) {
		c->ops->destroy(c->owner);
		return true;
	}
	return false;
}

int ipc_conn_take_fd(struct ipc_conn *c)
{
	int fd = c->rx_fd;
	c->rx_fd = -1;
	return fd;
}

static void fail_fire(struct loop *l, uint64_t id, void *ctx)
{
	struct ipc_conn *c = ctx;
	(void)l;
	(void)id;
	c->fail_timer = 0;
	c->ops->on_error(c->owner, c->fail_code); /* may free c */
}

/* Report code to the owner from the loop, not from the current call. */
static void fail_later(struct ipc_conn *c, int code)
{
	if (c->failing || c->closed)
		return;
	c->failing = true;
	c->fail_code = code;
	c->fail_timer = loop_add_timer(c->loop, 0, 0, fail_fire, c);
	TB_CHECK(c->fail_timer != 0);
}

static void stall_fire(struct loop *l, uint64_t id, void *ctx)
{
	struct ipc_conn *c = ctx;
	(void)id;
	c->stall_timer = 0;
	int64_t idle_ms = (tb_mono_ns() - c->last_progress_ns) / 1000000;
	if (idle_ms >= (int64_t)c->timeout_ms) {
		c->ops->on_error(c->owner, -ETIMEDOUT); /* may free c */
		return;
	}
	c->stall_timer = loop_add_timer(l, c->timeout_ms - (uint64_t)idle_ms, 0, stall_fire, c);
}

/* Send what the socket takes. Returns 0 (queue empty or socket full) or
 * -errno for a dead socket. */
static int flush(struct ipc_conn *c)
{
	while (c->tx_head < c->txq.len) {
		size_t end = c->txq.len;
		int fd = -1;
		if (c->tx_fds.len) {
			struct ipc_tx_fd *t = &c->tx_fds.data[0];
			if (t->off == c->tx_head) {
				fd = t->fd;
				if (c->tx_fds.len > 1)
					end = c->tx_fds.data[1].off;
			} else {
				end = t->off; /* stop so the fd starts its own sendmsg */
			}
		}
		ssize_t r = ipc_sock_send(c->fd, c->txq.data + c->tx_head, end - c->tx_head, fd);
		if (r == -EAGAIN)
			break;
		if (r < 0)
			return (int)r;
		if (fd >= 0) {
			close(fd);
			memmove(c->tx_fds.data, c->tx_fds.data + 1,
			        (c->tx_fds.len - 1) * sizeof *c->tx_fds.data);
			c->tx_fds.len--;
		}
		c->tx_head += (size_t)r;
		c->last_progress_ns = tb_mono_ns();
	}
	if (c->tx_head == c->txq.len) {
		vec_clear(&c->txq);
		c->tx_head = 0;
		loop_mod_fd(c->loop, c->fd, LOOP_IN);
		if (c->stall_timer)
			loop_cancel_timer(c->loop, c->stall_timer);
		c->stall_timer = 0;
	} else if (c->tx_head > c->txq.len / 2) {
		size_t left = c->txq.len - c->tx_head;
		memmove(c->txq.data, c->txq.data + c->tx_head, left);
		for (size_t i = 0; i < c->tx_fds.len; i++)
			c->tx_fds.data[i].off -= c->tx_head;
		c->txq.len = left;
		c->tx_head = 0;
	}
	return 0;
}

int ipc_conn_send(struct ipc_conn *c, const uint8_t *p, size_t n, int fd)
{
	int ret = 0;
	if (c->closed || c->failing) {
		ret = -ENOTCONN;
		goto out;
	}
	if (c->tx_head == c->txq.len) {
		ssize_t r = ipc_sock_send(c->fd, p, n, fd);
		if (r < 0 && r != -EAGAIN) {
			fail_later(c, (int)r);
			ret = -ENOTCONN;
			goto out;
		}
		if (r > 0) {
			tb_close(&fd); /* the kernel holds its own reference now */
			p += r;
			n -= (size_t)r;
		}
		if (n == 0)
			goto out;
	}
	if (c->txq.len - c->tx_head + n > c->max_queue) {
		fail_later(c, -ENOBUFS);
		ret = -ENOBUFS;
		goto out;
	}
	if (c->tx_head == c->txq.len) {
		loop_mod_fd(c->loop, c->fd, LOOP_IN | LOOP_OUT);
		c->last_progress_ns = tb_mono_ns();
		c->stall_timer = loop_add_timer(c->loop, c->timeout_ms, 0, stall_fire, c);
	}
	if (fd >= 0) {
		struct ipc_tx_fd t = {c->txq.len, fd};
		vec_push(&c->tx_fds, t);
		fd = -1;
	}
	vec_reserve(&c->txq, n);
	memcpy(c->txq.data + c->txq.len, p, n);
	c->txq.len += n;
out:
	if (ret == 0)
		c->frames_out++;
	tb_close(&fd);
	return ret;
}

int ipc_conn_send_frame(struct ipc_conn *c, const Perfetto__Protos__IPCFrame *f, int fd)
{
	/* Encoded into the connection's own buffer, kept for the next frame:
	 * a fresh block per frame of up to 128 KiB is a map and an unmap per
	 * frame in musl's allocator (ReadBuffers replies, 32 a 4 MB trace). */
	size_t n = ipc_frame_size(f);
	if (n > IPC_MAX_PAYLOAD) {
		tb_close(&fd);
		return -EMSGSIZE;
	}
	if (c->closed || c->failing) /* nothing to keep the buffer for */
		return ipc_conn_send(c, NULL, 0, fd);
	vec_clear(&c->frame);
	vec_reserve(&c->frame, n + 4);
	ipc_frame_pack(f, c->frame.data, n);
	return ipc_conn_send(c, c->frame.data, n + 4, fd);
}

/* Read what is there and dispatch whole frames. Returns 1 to keep going
 * (socket drained, or the owner closed the connection), 0 at EOF, or the
 * -errno to fail the connection with. */
static int read_some(struct ipc_conn *c)
{
	for (int i = 0; i < CONN_READS_PER_EVENT; i++) {
		size_t avail;
		uint8_t *space = ipc_rxbuf_space(&c->rx, &avail);
		int got_fd;
		if (avail == 0) {
			c->protocol_errors++; /* unreachable: full means next() failed */
			return -EPROTO;
		}
		ssize_t r = ipc_sock_recv(c->fd, space, avail, &got_fd);
		if (r == -EAGAIN)
			return 1;
		if (r == -EPROTO)
			c->protocol_errors++;
		if (r <= 0)
			return (int)r;
		if (got_fd >= 0) {
			/* One slot, as in Perfetto: a newer fd replaces an
			 * unclaimed older one. */
			tb_close(&c->rx_fd);
			c->rx_fd = got_fd;
		}
		ipc_rxbuf_commit(&c->rx, (size_t)r);
		const uint8_t *p;
		size_t n;
		int k;
		bool framed = false;
		while ((k = ipc_rxbuf_next(&c->rx, &p, &n)) == 1) {
			c->frames_in++;
			framed = true;
			c->ops->on_frame(c->owner, p, n);
			if (c->closed || c->failing)
				return 1;
		}
		if (k < 0) {
			c->protocol_errors++;
			return -EPROTO;
		}
		/* The clock of a half-received frame starts when the frame does. */
		if (c->rx.len == c->rx.head) {
			c->partial_since_ns = 0;
			if (c->rx.cap > CONN_RXBUF_KEEP)
				ipc_rxbuf_release(&c->rx);
		} else if (framed || !c->partial_since_ns) {
			c->partial_since_ns = tb_mono_ns();
		}
	}
	return 1;
}

static void conn_io(struct loop *l, int fd, uint32_t events, void *ctx)
{
	struct ipc_conn *c = ctx;
	int code = 1;
	(void)l;
	(void)fd;
	ipc_conn_enter(c);
	if (events & LOOP_OUT) {
		int r = flush(c);
		if (r < 0)
			code = r;
	}
	if (code == 1 && (events & LOOP_OUT) && !c->closed && !c->failing &&
	    c->tx_head == c->txq.len && c->ops->on_drained)
		c->ops->on_drained(c->owner);
	if (code == 1 && !c->closed && (events & (LOOP_IN | LOOP_ERR | LOOP_HUP)))
		code = read_some(c);
	if (code != 1 && !c->closed && !c->failing)
		c->ops->on_error(c->owner, code);
	ipc_conn_leave(c);
}
