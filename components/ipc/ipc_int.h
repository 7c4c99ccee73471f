/*
 * Private declarations shared by the files of components/ipc: the socket
 * send/receive primitives (sock.c) and struct ipc_conn (conn.c), one framed
 * connection on the event loop with a receive buffer, a received-fd slot and
 * a bounded send queue. The host's clients and the client embed one each.
 */
#ifndef TB_IPC_INT_H
#define TB_IPC_INT_H

#include "ipc.h"

/* sendmsg of n bytes with send_fd (>= 0) as SCM_RIGHTS; never blocks, no
 * SIGPIPE. Returns bytes sent, -EAGAIN, or -errno. Does not close send_fd. */
ssize_t ipc_sock_send(int fd, const void *p, size_t n, int send_fd);
/* recvmsg into p; *recv_fd gets an fd that came along (close-on-exec) or -1.
 * Returns bytes read (0 = EOF), -EAGAIN, -EPROTO (truncated control data or
 * more than one fd: every fd received is closed), or -errno. */
ssize_t ipc_sock_recv(int fd, void *p, size_t n, int *recv_fd);

/* What a connection tells its owner. */
struct ipc_conn_ops {
	/* One whole frame (IPCFrame bytes, valid during the call). */
	void (*on_frame)(void *owner, const uint8_t *p, size_t n);
	/* The connection failed: code is 0 for EOF, else -errno (-EPROTO for
	 * a protocol error, -ENOBUFS for queue overflow, -ETIMEDOUT for a
	 * stall). The owner must call ipc_conn_close (and may free itself through
	 * ipc_conn_free_owner). */
	void (*on_error)(void *owner, int code);
	/* Free the owner; called once when ipc_conn_free_owner was requested
	 * while the connection was busy dispatching. */
	void (*destroy)(void *owner);
	/* Optional: the send queue emptied, written out from the loop once the
	 * socket took it (never from inside ipc_conn_send). */
	void (*on_drained)(void *owner);
};

VEC_DEFINE(ipc_byte_vec, uint8_t);
struct ipc_tx_fd {
	size_t off; /* queue offset of the first byte of the frame it rides on */
	int fd;
};
VEC_DEFINE(ipc_tx_fd_vec, struct ipc_tx_fd);

struct ipc_conn {
	struct loop *loop;
	const struct ipc_conn_ops *ops;
	void *owner;
	int fd;
	struct ipc_rxbuf rx;
	int rx_fd; /* the received-fd slot, -1 when empty */
	struct ipc_byte_vec txq;
	size_t tx_head;            /* bytes of txq already sent */
	struct ipc_byte_vec frame; /* ipc_conn_send_frame's encoding, reused */
	struct ipc_tx_fd_vec tx_fds;
	size_t max_queue;
	uint32_t timeout_ms;
	uint64_t stall_timer; /* armed while txq is not empty */
	uint64_t fail_timer;  /* a deferred on_error */
	int fail_code;
	int64_t last_progress_ns;
	int64_t partial_since_ns; /* the frame now half-received began (0: none) */
	int busy;                 /* > 0 while callbacks into the owner run */
	bool free_pending;        /* destroy the owner when busy drops to 0 */
	bool closed;
	bool failing;
	uint64_t frames_in, frames_out, protocol_errors;
};

/* Serve fd (owned from now on, closed by ipc_conn_close). Returns 0 or -errno
 * (then fd is closed). */
int ipc_conn_init(struct ipc_conn *c, struct loop *l, int fd, const struct ipc_conn_ops *ops,
                  void *owner);
/* Stop watching, close the socket and the slot, drop the send queue. Safe
 * to call twice and from inside the owner's callbacks. */
void ipc_conn_close(struct ipc_conn *c);
/* Free the owner now (returns true) or, while busy, once the dispatch in
 * progress ends (returns false). Call after ipc_conn_close. */
bool ipc_conn_free_owner(struct ipc_conn *c);
/* Queue one encoded frame (4-byte prefix included) with fd (owned: closed
 * once sent or on failure). Returns 0, or -ENOTCONN (closed or failing),
 * -ENOBUFS (queue cap: the connection then fails from the loop, never from
 * inside this call). */
int ipc_conn_send(struct ipc_conn *c, const uint8_t *p, size_t n, int fd);
/* Encode f and ipc_conn_send it. Also -EMSGSIZE (fd closed, nothing sent). */
int ipc_conn_send_frame(struct ipc_conn *c, const Perfetto__Protos__IPCFrame *f, int fd);
/* Enter / leave a section that calls into the owner. ipc_conn_leave returns
 * true if the owner was freed (touch nothing afterwards). */
static inline void ipc_conn_enter(struct ipc_conn *c)
{
	c->busy++;
}
bool ipc_conn_leave(struct ipc_conn *c);
/* Take the received-fd slot (-1 if empty). */
int ipc_conn_take_fd(struct ipc_conn *c);

#endif /* TB_IPC_INT_H */
