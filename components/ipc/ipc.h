/*
 * ipc: Perfetto's IPC layer, wire-compatible with Perfetto's src/ipc.
 *
 * Frames are a 4-byte little-endian length followed by a protobuf IPCFrame
 * (components/protos perfetto/ipc/wire_protocol.proto) over AF_UNIX stream
 * sockets; at most one fd rides on a frame as SCM_RIGHTS. A host exposes
 * services ({name, method table}) and answers BindService / InvokeMethod; a
 * client binds services by name and invokes methods by name. Both run on one
 * base event loop (struct loop) and every function here must be called on the
 * thread that runs that loop. See README.md for the frame layout, the
 * method-id rule, fd passing, limits and lifecycles.
 *
 * Layers, bottom up: the receive buffer and frame codec (frame.c), sockets
 * and name resolution (sock.c), a connection with a send queue (conn.c), the
 * host (host.c) and the client (client.c).
 */
#ifndef TB_IPC_H
#define TB_IPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "protos.h"

/* ---- limits ---------------------------------------------------------------- */

/* Perfetto's kIPCBufferSize: a frame whose length + 4 exceeds it is a
 * protocol error, and senders keep their frames below it. */
#define IPC_BUFFER_SIZE ((size_t)128 * 1024)
#define IPC_MAX_PAYLOAD (IPC_BUFFER_SIZE - 4)
/* A peer whose send queue makes no progress for this long is disconnected
 * (Perfetto's 10 s socket send timeout). */
#define IPC_SEND_TIMEOUT_MS 10000u
/* Default cap on bytes queued for one peer that does not read. */
#define IPC_SEND_QUEUE_MAX ((size_t)32 * 1024 * 1024)
/* Longest service or method name accepted. */
#define IPC_NAME_MAX 256
/* A condition that can repeat for every connection (a refused uid, no fds
 * left) is logged at most once per this interval, with the count since. */
#define IPC_LOG_INTERVAL_MS 10000u
/* Connections one uid may hold on a host; more are closed at accept. */
#define IPC_MAX_CLIENTS_PER_UID 256u
/* Out of fds even for shedding connections: the host stops accepting for
 * this long instead of spinning on a readable listener. */
#define IPC_ACCEPT_PAUSE_MS 1000u
/* A host drops a client whose frame has been half-received this long, or
 * that has not sent BindService this long after connecting (Perfetto's
 * clients bind at once); checked every IPC_SWEEP_MS. */
#define IPC_FRAME_TIMEOUT_MS 10000u
#define IPC_BIND_TIMEOUT_MS 10000u
#define IPC_SWEEP_MS 1000u
/* File descriptors below RLIMIT_NOFILE a host leaves for the service's own
 * needs (the loop's timers, files, shared memory): a connection that would
 * take one of them is closed at accept. */
#define IPC_FD_HEADROOM 32u

/* ---- frames (frame.c) ---------------------------------------------------- */

/* Serialize f as one framed message (4-byte LE length + IPCFrame bytes) into
 * a new tb_malloc'd buffer at *out (caller frees) of *len bytes. Returns 0,
 * or -EMSGSIZE (nothing allocated) when the frame would exceed
 * IPC_BUFFER_SIZE. Any thread. */
int ipc_frame_encode(const Perfetto__Protos__IPCFrame *f, uint8_t **out, size_t *len);
/* The same into the caller's buffer: out must hold ipc_frame_size(f) + 4
 * bytes, where ipc_frame_size gives the IPCFrame's size without the length
 * prefix (check it against IPC_MAX_PAYLOAD first). */
size_t ipc_frame_size(const Perfetto__Protos__IPCFrame *f);
void ipc_frame_pack(const Perfetto__Protos__IPCFrame *f, uint8_t *out, size_t n);

/* Decode one IPCFrame payload (without the length prefix). Returns a frame
 * to release with ipc_frame_free, or NULL when the bytes are not a valid
 * IPCFrame. Any thread. */
Perfetto__Protos__IPCFrame *ipc_frame_decode(const uint8_t *p, size_t n);
void ipc_frame_free(Perfetto__Protos__IPCFrame *f);

/* A receive buffer that turns a byte stream, split or coalesced in any way,
 * into frames. It holds at most IPC_BUFFER_SIZE bytes (grown on demand).
 * Zero-initialise or ipc_rxbuf_init before use. */
struct ipc_rxbuf {
	uint8_t *data;
	size_t head; /* first unconsumed byte */
	size_t len;  /* bytes held, from data[0] */
	size_t cap;
};

void ipc_rxbuf_init(struct ipc_rxbuf *rb);
void ipc_rxbuf_release(struct ipc_rxbuf *rb);
/* Free space to receive into: compacts, grows towards IPC_BUFFER_SIZE and
 * returns a pointer to *avail writable bytes (0 when full: then
 * ipc_rxbuf_next has a frame or an error). Follow with ipc_rxbuf_commit. */
uint8_t *ipc_rxbuf_space(struct ipc_rxbuf *rb, size_t *avail);
/* Mark n bytes written into the space as received. */
void ipc_rxbuf_commit(struct ipc_rxbuf *rb, size_t n);
/* Copy as many of the n bytes at p as fit and return how many were taken;
 * drain frames with ipc_rxbuf_next and call again for the rest. */
size_t ipc_rxbuf_write(struct ipc_rxbuf *rb, const void *p, size_t n);
/* The next complete frame: returns 1 with *payload / *len pointing at its
 * IPCFrame bytes (valid until the next space/write/release call), 0 when
 * more bytes are needed, or -EMSGSIZE when the announced frame exceeds
 * IPC_BUFFER_SIZE (a protocol error; the stream cannot be resynchronised). */
int ipc_rxbuf_next(struct ipc_rxbuf *rb, const uint8_t **payload, size_t *len);

/* ---- sockets (sock.c) ---------------------------------------------------- */

/* Socket names as Perfetto resolves them (compat §1.4): the environment
 * variable PERFETTO_PRODUCER_SOCK_NAME / PERFETTO_CONSUMER_SOCK_NAME if set,
 * else /run/perfetto/traced-{producer,consumer}.sock when /run/perfetto/ is
 * searchable, else /tmp/perfetto-{producer,consumer}. The producer name may
 * be a comma-separated list (ipc_host_listen accepts it). The returned string
 * is static or the environment's; do not free it. */
const char *ipc_producer_socket_name(void);
const char *ipc_consumer_socket_name(void);

/* A new listening AF_UNIX stream socket on name ("@x" = abstract socket x;
 * a path is unlink()ed first), non-blocking and close-on-exec. Returns the
 * fd (caller owns it), or -errno with a message in err. */
int ipc_sock_listen(const char *name, struct tb_err *err);
/* A connected AF_UNIX stream socket to name, non-blocking and
 * close-on-exec. Returns the fd (caller owns it), or -errno with a message
 * in err (-ENOENT / -ECONNREFUSED when nobody listens). */
int ipc_sock_connect(const char *name, struct tb_err *err);
/* The peer's uid and pid (SO_PEERCRED). Returns 0 or -errno. */
int ipc_sock_peercred(int fd, uid_t *uid, pid_t *pid);

/* ---- host (host.c) ------------------------------------------------------- */

struct ipc_host;
/* One InvokeMethod being served: a deferred-reply handle. */
struct ipc_call;

/* Who is calling. client_id is unique per host and never reused (from 1). */
struct ipc_peer {
	uint64_t client_id;
	uid_t uid;
	pid_t pid;
};

/* A method handler. args/len is the raw args_proto (valid during the call
 * only); decode it and answer through call (now or later). The handler owns
 * call and must finish it exactly once: ipc_call_reply with has_more=false,
 * ipc_call_fail, or ipc_call_drop. svc_ctx is the ctx given to
 * ipc_host_add_service. */
typedef void (*ipc_method_fn)(void *svc_ctx, struct ipc_call *call, const uint8_t *args,
                              size_t len);

struct ipc_method {
	const char *name; /* e.g. "InitializeConnection" */
	ipc_method_fn fn;
};

/* A service: its unqualified proto name and its methods in proto
 * declaration order (method id = index + 1). The host keeps the pointer:
 * the descriptor and its table must outlive the host (static data). */
struct ipc_service_desc {
	const char *name;
	const struct ipc_method *methods;
	size_t n_methods;
};

struct ipc_host_ops {
	/* A client connected (optional). */
	void (*on_connect)(void *ctx, const struct ipc_peer *peer);
	/* A client went away (EOF, error, protocol error, stall). Its calls
	 * still held by handlers are detached: finishing them sends nothing.
	 * Optional. */
	void (*on_disconnect)(void *ctx, const struct ipc_peer *peer);
};

struct ipc_host_stats {
	uint64_t clients_accepted;
	uint64_t clients_disconnected;
	uint64_t frames_received;
	uint64_t frames_sent;
	uint64_t protocol_errors;   /* malformed / oversized frames, bad fds */
	uint64_t send_overflows;    /* disconnects for a full queue or a stall */
	uint64_t clients_timed_out; /* a half-sent frame, or no BindService, too long */
	uint64_t clients_rejected;  /* closed at accept: a uid not allowed or over its
	                             * cap, or no fd left to serve it */
};

/* A host on loop l with no sockets and no services. ops (copied) and ctx
 * are for the connection callbacks. Free with ipc_host_free. */
struct ipc_host *ipc_host_new(struct loop *l, const struct ipc_host_ops *ops, void *ctx);
/* Disconnect every client (without on_disconnect callbacks), close the
 * listening sockets and free the host. Calls still held by handlers are
 * detached and must still be finished. Not from inside an ipc callback. */
void ipc_host_free(struct ipc_host *h);
/* Expose a service. Returns its service id (> 0, in order of addition), or
 * -EEXIST if the name is taken / -EINVAL for an empty table. */
int ipc_host_add_service(struct ipc_host *h, const struct ipc_service_desc *desc, void *svc_ctx);
/* Listen on name, or on each name of a comma-separated list (Perfetto's
 * PERFETTO_PRODUCER_SOCK_NAME form). Returns 0 or -errno with a message in
 * the host's error slot (ipc_host_err). */
int ipc_host_listen(struct ipc_host *h, const char *names);
/* Accept connections on an already listening socket (e.g. passed by init);
 * the host takes ownership of fd. Returns 0 or -errno. */
int ipc_host_listen_fd(struct ipc_host *h, int fd);
/* Serve an already connected stream socket (e.g. one end of a socketpair);
 * the host takes ownership of fd, even on failure. Returns the new
 * client id (> 0) or -errno. */
int64_t ipc_host_adopt_fd(struct ipc_host *h, int fd);
/* Disconnect a client (on_disconnect is called). Safe from any callback,
 * including that client's own handlers. Returns 0 or -ENOENT. */
int ipc_host_disconnect(struct ipc_host *h, uint64_t client_id);
/* Accept only peers whose uid (SO_PEERCRED) is uid: every other one is
 * closed at accept, counted in clients_rejected and logged (at most once per
 * IPC_LOG_INTERVAL_MS). (uid_t)-1, the default, accepts any uid. For
 * sockets without file permissions (tracebox's private abstract sockets). */
void ipc_host_set_allowed_uid(struct ipc_host *h, uid_t uid);
/* Connections one uid may hold (default IPC_MAX_CLIENTS_PER_UID; 0: no
 * cap). Beyond it a new one is closed at accept, counted in
 * clients_rejected and logged at most once per IPC_LOG_INTERVAL_MS. */
void ipc_host_set_max_clients_per_uid(struct ipc_host *h, unsigned n);
/* Change the send-queue cap and the no-progress timeout (tests shorten
 * them). 0 keeps the current value. */
void ipc_host_set_limits(struct ipc_host *h, size_t max_queue_bytes, uint32_t timeout_ms);
const struct ipc_host_stats *ipc_host_stats(const struct ipc_host *h);
struct tb_err *ipc_host_err(struct ipc_host *h);
/* Number of connected clients. */
size_t ipc_host_num_clients(const struct ipc_host *h);

/* Send one reply. has_more=true streams (the call stays open); false is the
 * final reply and frees call. fd >= 0 is attached to this frame (the host
 * dups nothing: it takes ownership of fd and closes it after sending, also
 * on failure). Returns 0; -ENOTCONN when the client is gone or asked for
 * drop_reply (nothing sent, still not an error to ignore); -EMSGSIZE when
 * the reply would exceed the frame cap (then a success=false reply is sent
 * instead, and, if has_more was false, call is freed all the same). */
int ipc_call_reply(struct ipc_call *call, const void *data, size_t len, bool has_more, int fd);
/* Final reply with success=false; frees call. Returns as ipc_call_reply. */
int ipc_call_fail(struct ipc_call *call);
/* Finish call without sending anything (the client's request stays
 * pending until it disconnects); frees call. */
void ipc_call_drop(struct ipc_call *call);
/* Who called; valid until the call is finished, even after a disconnect. */
const struct ipc_peer *ipc_call_peer(const struct ipc_call *call);
/* The request id the client used. */
uint64_t ipc_call_request_id(const struct ipc_call *call);
/* True while the client is connected and wants replies. */
bool ipc_call_alive(const struct ipc_call *call);
/* Bytes of replies (to any call of this client) still waiting in its send
 * queue: a streaming reply paces itself on this instead of growing the
 * queue past IPC_SEND_QUEUE_MAX. 0 once the client is gone. */
size_t ipc_call_queued_bytes(const struct ipc_call *call);
/* Call fn(ctx) once, from the loop, when this client's send queue has
 * emptied into its socket: a streaming reply's cue to send the next part,
 * so the queue never holds more than one part. One hook per client (a later
 * call replaces it); dropped when call finishes or the client goes. False
 * (and no hook) when the queue is already empty or the client is gone. */
bool ipc_call_on_drained(struct ipc_call *call, void (*fn)(void *ctx), void *ctx);
/* The fd received from this client (the latest one, at most one is kept),
 * or -1. The caller owns it. Only during the method handler itself: later
 * calls return -1 (Perfetto scopes the received fd to the invocation). */
int ipc_call_take_fd(struct ipc_call *call);

/* ---- client (client.c) --------------------------------------------------- */

struct ipc_client;
/* A service bound (or being bound) through a client; owned by the client. */
struct ipc_svc;

struct ipc_client_ops {
	/* The connection closed (peer EOF, error, protocol error, stall),
	 * after every pending request got its failure callback. The client
	 * is inert afterwards; free it (also allowed from here). Optional. */
	void (*on_disconnect)(void *ctx, struct ipc_client *c);
};

/* Called once when the BindServiceReply arrives (ok = success and a method
 * table), or with ok=false on failure or disconnect. */
typedef void (*ipc_bind_fn)(void *ctx, struct ipc_svc *svc, bool ok);

/* One reply to an InvokeMethod. data/len is reply_proto, valid during the
 * callback only. */
struct ipc_reply {
	struct ipc_client *client;
	uint64_t request_id;
	bool success;
	bool has_more; /* more replies follow for this request */
	const uint8_t *data;
	size_t len;
};
/* Called once per reply until has_more=false or success=false; on
 * disconnect it gets a final success=false reply. */
typedef void (*ipc_reply_fn)(void *ctx, const struct ipc_reply *r);

/* Connect to name (see ipc_sock_connect) and serve the connection on l.
 * ops is copied. Returns a client, or NULL with a message in err. */
struct ipc_client *ipc_client_new(struct loop *l, const char *name,
                                  const struct ipc_client_ops *ops, void *ctx, struct tb_err *err);
/* The same on an already connected socket; the client owns fd (closed on
 * failure too). */
struct ipc_client *ipc_client_adopt_fd(struct loop *l, int fd, const struct ipc_client_ops *ops,
                                       void *ctx, struct tb_err *err);
/* Close the connection and free the client and its services. Pending
 * requests are forgotten without callbacks. Allowed from the client's own
 * callbacks (the memory is freed when the callback returns). */
void ipc_client_free(struct ipc_client *c);
/* True until the connection has closed. */
bool ipc_client_connected(const struct ipc_client *c);
/* The uid of the process that listens on the other end (SO_PEERCRED, taken
 * at connect), or (uid_t)-1 if unknown. */
uid_t ipc_client_peer_uid(const struct ipc_client *c);

/* Send BindService(name). Returns a service handle owned by the client
 * (cb fires later, never from inside this call), or NULL if the client is
 * disconnected or the name is too long. */
struct ipc_svc *ipc_client_bind(struct ipc_client *c, const char *name, ipc_bind_fn cb, void *ctx);
/* After a successful bind: the service id, and the id of a method (0 if the
 * host does not have it). */
uint32_t ipc_svc_id(const struct ipc_svc *svc);
uint32_t ipc_svc_method_id(const struct ipc_svc *svc, const char *method);
const char *ipc_svc_name(const struct ipc_svc *svc);

/* InvokeMethod on a bound service by method name, with args (the
 * serialized request), fd >= 0 attached to the frame (ownership passes to
 * the client, closed after sending or on failure), and drop_reply (then
 * the host sends nothing and cb is never called; cb may be NULL).
 * Returns the request id (> 0), or -ENOTCONN (disconnected or not bound),
 * -ENOENT (unknown method), -EMSGSIZE (frame too big), -ENOBUFS (send
 * queue full: the connection is then closed). Errors call no callback. */
int64_t ipc_client_invoke(struct ipc_client *c, struct ipc_svc *svc, const char *method,
                          const void *args, size_t len, int fd, bool drop_reply, ipc_reply_fn cb,
                          void *ctx);
/* The fd that came with the latest frame from the host, or -1; the caller
 * owns it. Call it from the reply callback of the frame that carries it
 * (e.g. GetAsyncCommand's setup_tracing). */
int ipc_client_take_fd(struct ipc_client *c);
/* Frames that could not be decoded or were oversized (the connection is
 * closed on the first), and replies to unknown requests. */
uint64_t ipc_client_protocol_errors(const struct ipc_client *c);

#endif /* TB_IPC_H */
