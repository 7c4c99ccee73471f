/*
 * The IPC host: accepts clients on listening sockets (or adopts connected
 * ones), answers BindService from the table of exposed services and
 * dispatches InvokeMethod to method handlers, which reply through a
 * deferred-reply handle (struct ipc_call) now or later, once or streaming.
 *
 * Lifetimes: a client lives from accept to disconnect; its calls are owned
 * by the handlers and outlive it, detached (client = NULL), so a reply after
 * a disconnect is a harmless no-op. Peer identity (SO_PEERCRED) is copied
 * into each call. Every malformed frame disconnects its client and counts as
 * a protocol error; the host keeps serving everyone else.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ipc_int.h"

#define LOG_TAG "ipc"

struct host_service {
	const struct ipc_service_desc *desc;
	void *ctx;
};

struct host_client {
	struct ipc_host *host;
	struct ipc_conn conn;
	struct ipc_peer peer;
	int64_t accepted_ns;
	bool bound;               /* sent a BindService */
	struct ipc_call *calls;   /* open calls, doubly linked */
	struct ipc_call *current; /* the call whose handler is running */
	/* ipc_call_on_drained's one-shot hook, and the call it is for. */
	struct ipc_call *drain_call;
	void (*drain_fn)(void *ctx);
	void *drain_ctx;
};

struct ipc_call {
	struct host_client *client; /* NULL once detached */
	struct ipc_call *prev, *next;
	struct ipc_peer peer;
	uint64_t request_id;
	bool drop_reply;
};

/* A warning that can repeat for every connection: logged at most once per
 * IPC_LOG_INTERVAL_MS, with the number of occurrences it stands for. */
struct ratelog {
	int64_t last_ns;
	uint64_t count;
};

struct ipc_host {
	struct loop *loop;
	struct ipc_host_ops ops;
	void *ctx;
	VEC(struct host_service) services;
	VEC(int) listeners;
	struct hmap clients; /* client id -> struct host_client * */
	uint64_t next_client_id;
	size_t max_queue;
	uint32_t timeout_ms;
	uid_t allowed_uid; /* (uid_t)-1: any */
	unsigned max_per_uid;
	struct hmap per_uid;  /* uid -> connected clients */
	int reserve_fd;       /* /dev/null, given up to shed a connection at EMFILE */
	int fd_limit;         /* RLIMIT_NOFILE at creation */
	bool paused;          /* not accepting (no fd even for shedding) */
	uint64_t pause_timer; /* resumes accepting */
	uint64_t sweep_timer; /* drops stalled clients, while there are clients */
	struct ratelog log_rejected, log_accept, log_timeout;
	struct ipc_host_stats stats;
	struct tb_err err;
};

static void client_on_frame(void *owner, const uint8_t *p, size_t n);
static void client_on_error(void *owner, int code);
static void resume(struct ipc_host *h);
static void client_destroy(void *owner);
static void client_on_drained(void *owner);

static const struct ipc_conn_ops client_conn_ops = {client_on_frame, client_on_error,
                                                    client_destroy, client_on_drained};

struct ipc_host *ipc_host_new(struct loop *l, const struct ipc_host_ops *ops, void *ctx)
{
	struct rlimit rl;
	struct ipc_host *h = tb_calloc(1, sizeof *h);
	h->loop = l;
	if (ops)
		h->ops = *ops;
	h->ctx = ctx;
	hmap_init(&h->clients);
	h->next_client_id = 1;
	h->max_queue = IPC_SEND_QUEUE_MAX;
	h->timeout_ms = IPC_SEND_TIMEOUT_MS;
	h->allowed_uid = (uid_t)-1;
	h->max_per_uid = IPC_MAX_CLIENTS_PER_UID;
	hmap_init(&h->per_uid);
	h->reserve_fd = -1;
	h->fd_limit = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)INT_MAX
	                  ? (int)rl.rlim_cur
	                  : INT_MAX;
	return h;
}

/* Count one occurrence; true (with the count since the last log in *n)
 * when it is time to log. */
static bool ratelog_due(struct ratelog *r, uint64_t *n)
{
	int64_t now = tb_mono_ns();
	r->count++;
	if (r->last_ns && now - r->last_ns < (int64_t)IPC_LOG_INTERVAL_MS * 1000000)
		return false;
	r->last_ns = now;
	*n = r->count;
	r->count = 0;
	return true;
}

void ipc_host_set_allowed_uid(struct ipc_host *h, uid_t uid)
{
	h->allowed_uid = uid;
}

void ipc_host_set_max_clients_per_uid(struct ipc_host *h, unsigned n)
{
	h->max_per_uid = n;
}

static void uid_count(struct ipc_host *h, uid_t uid, int delta)
{
	bool is_new;
	uint64_t *n = hmap_upsert(&h->per_uid, (uint64_t)uid, &is_new);
	if (is_new)
		*n = 0;
	*n += (uint64_t)(int64_t)delta;
	if (*n == 0)
		hmap_del(&h->per_uid, (uint64_t)uid, NULL);
}

static void detach_calls(struct host_client *hc)
{
	for (struct ipc_call *call = hc->calls; call; call = call->next)
		call->client = NULL;
	hc->calls = NULL;
	hc->drain_call = NULL;
}

static void client_destroy(void *owner)
{
	tb_free(owner);
}

/* Tear a client down: detach its calls, forget it, tell the owner. */
static void client_drop(struct host_client *hc, bool notify)
{
	struct ipc_host *h = hc->host;
	ipc_conn_close(&hc->conn);
	detach_calls(hc);
	hmap_del(&h->clients, hc->peer.client_id, NULL);
	uid_count(h, hc->peer.uid, -1);
	h->stats.clients_disconnected++;
	if (h->paused)
		resume(h); /* an fd is free again */
	if (notify && h->ops.on_disconnect) {
		ipc_conn_enter(&hc->conn);
		h->ops.on_disconnect(h->ctx, &hc->peer);
		hc->conn.busy--; /* the free below decides */
	}
	ipc_conn_free_owner(&hc->conn);
}

void ipc_host_free(struct ipc_host *h)
{
	if (!h)
		return;
	size_t i;
	while ((i = hmap_next(&h->clients, 0)) != HMAP_END)
		client_drop((struct host_client *)(uintptr_t)h->clients.slots[i].val, false);
	for (size_t k = 0; k < h->listeners.len; k++) {
		loop_del_fd(h->loop, h->listeners.data[k]);
		close(h->listeners.data[k]);
	}
	vec_release(&h->listeners);
	vec_release(&h->services);
	hmap_release(&h->clients);
	hmap_release(&h->per_uid);
	if (h->pause_timer)
		loop_cancel_timer(h->loop, h->pause_timer);
	if (h->sweep_timer)
		loop_cancel_timer(h->loop, h->sweep_timer);
	tb_close(&h->reserve_fd);
	tb_free(h);
}

int ipc_host_add_service(struct ipc_host *h, const struct ipc_service_desc *desc, void *svc_ctx)
{
	if (!desc->name || !*desc->name || desc->n_methods == 0)
		return -EINVAL;
	for (size_t i = 0; i < h->services.len; i++)
		if (strcmp(h->services.data[i].desc->name, desc->name) == 0)
			return -EEXIST;
	struct host_service s = {desc, svc_ctx};
	vec_push(&h->services, s);
	return (int)h->services.len;
}

void ipc_host_set_limits(struct ipc_host *h, size_t max_queue_bytes, uint32_t timeout_ms)
{
	if (max_queue_bytes)
		h->max_queue = max_queue_bytes;
	if (timeout_ms)
		h->timeout_ms = timeout_ms;
}

const struct ipc_host_stats *ipc_host_stats(const struct ipc_host *h)
{
	return &h->stats;
}

struct tb_err *ipc_host_err(struct ipc_host *h)
{
	return &h->err;
}

size_t ipc_host_num_clients(const struct ipc_host *h)
{
	return h->clients.len;
}

/* ---- accepting ------------------------------------------------------------- */

/* Every IPC_SWEEP_MS while there are clients: drop those with a frame
 * half-received for IPC_FRAME_TIMEOUT_MS (a slowloris holds a buffer of up
 * to 128 KiB each) or without a BindService IPC_BIND_TIMEOUT_MS after
 * connecting. */
static void on_sweep(struct loop *l, uint64_t id, void *ctx)
{
	struct ipc_host *h = ctx;
	int64_t now = tb_mono_ns();
	VEC(struct host_client *) late = VEC_INIT;
	if (h->clients.len == 0) {
		loop_cancel_timer(l, h->sweep_timer);
		h->sweep_timer = 0;
		return;
	}
	for (size_t i = hmap_next(&h->clients, 0); i != HMAP_END;
	     i = hmap_next(&h->clients, i + 1)) {
		struct host_client *hc = (void *)(uintptr_t)h->clients.slots[i].val;
		int64_t since = hc->conn.partial_since_ns;
		if ((since && now - since >= (int64_t)IPC_FRAME_TIMEOUT_MS * 1000000) ||
		    (!hc->bound && now - hc->accepted_ns >= (int64_t)IPC_BIND_TIMEOUT_MS * 1000000))
			vec_push(&late, hc);
	}
	for (size_t i = 0; i < late.len; i++) {
		struct host_client *hc = late.data[i];
		uint64_t n;
		h->stats.clients_timed_out++;
		if (ratelog_due(&h->log_timeout, &n))
			log_warn(LOG_TAG,
			         "dropped client %" PRIu64 " (uid %d pid %d): %s (%" PRIu64
			         " dropped since the last report)",
			         hc->peer.client_id, (int)hc->peer.uid, (int)hc->peer.pid,
			         hc->bound ? "a half-sent frame for 10 s"
			                   : "it did not bind a service within 10 s",
			         n);
		client_drop(hc, true);
	}
	vec_release(&late);
}

int64_t ipc_host_adopt_fd(struct ipc_host *h, int fd)
{
	struct host_client *hc = tb_calloc(1, sizeof *hc);
	hc->host = h;
	hc->peer.client_id = h->next_client_id++;
	hc->peer.uid = (uid_t)-1;
	hc->peer.pid = -1;
	ipc_sock_peercred(fd, &hc->peer.uid, &hc->peer.pid);
	if (h->allowed_uid != (uid_t)-1 && hc->peer.uid != h->allowed_uid) {
		uint64_t n;
		h->stats.clients_rejected++;
		if (ratelog_due(&h->log_rejected, &n))
			log_warn(LOG_TAG,
			         "refused a connection from uid %d pid %d: only uid %d may connect "
			         "(%" PRIu64 " refused since the last report)",
			         (int)hc->peer.uid, (int)hc->peer.pid, (int)h->allowed_uid, n);
		close(fd);
		tb_free(hc);
		return -EPERM;
	}
	{
		uint64_t have = 0, n;
		hmap_get(&h->per_uid, (uint64_t)hc->peer.uid, &have);
		if (h->max_per_uid && have >= h->max_per_uid) {
			h->stats.clients_rejected++;
			if (ratelog_due(&h->log_rejected, &n))
				log_warn(
				    LOG_TAG,
				    "refused a connection from pid %d: uid %d already has %" PRIu64
				    " connections (%" PRIu64 " refused since the last report)",
				    (int)hc->peer.pid, (int)hc->peer.uid, have, n);
			close(fd);
			tb_free(hc);
			return -EUSERS;
		}
	}
	int r = ipc_conn_init(&hc->conn, h->loop, fd, &client_conn_ops, hc);
	if (r < 0) {
		tb_free(hc);
		return tb_err_errno(&h->err, r, "cannot watch client socket");
	}
	hc->conn.max_queue = h->max_queue;
	hc->conn.timeout_ms = h->timeout_ms;
	hmap_put_ptr(&h->clients, hc->peer.client_id, hc);
	uid_count(h, hc->peer.uid, 1);
	hc->accepted_ns = tb_mono_ns();
	if (!h->sweep_timer)
		h->sweep_timer = loop_add_timer(h->loop, IPC_SWEEP_MS, IPC_SWEEP_MS, on_sweep, h);
	h->stats.clients_accepted++;
	log_debug(LOG_TAG, "client %llu connected (uid %d pid %d)",
	          (unsigned long long)hc->peer.client_id, (int)hc->peer.uid, (int)hc->peer.pid);
	if (h->ops.on_connect)
		h->ops.on_connect(h->ctx, &hc->peer);
	return (int64_t)hc->peer.client_id;
}

static void set_accepting(struct ipc_host *h, bool on)
{
	h->paused = !on;
	for (size_t k = 0; k < h->listeners.len; k++)
		loop_mod_fd(h->loop, h->listeners.data[k], on ? LOOP_IN : 0);
}

static void resume(struct ipc_host *h)
{
	if (h->pause_timer)
		loop_cancel_timer(h->loop, h->pause_timer);
	h->pause_timer = 0;
	if (h->reserve_fd < 0)
		h->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	set_accepting(h, true);
}

static void on_resume(struct loop *l, uint64_t id, void *ctx)
{
	struct ipc_host *h = ctx;
	h->pause_timer = 0;
	resume(h);
}

/* The fd of a new connection is so close to the fd limit that what the
 * service itself needs (timers, files, shared memory) would fail: shed it. */
static bool too_few_fds_left(const struct ipc_host *h, int fd)
{
	return h->fd_limit != INT_MAX && fd >= h->fd_limit - (int)IPC_FD_HEADROOM;
}

/* accept(2) failed with err: log (at most once per interval) and, out of
 * fds, shed the pending connection with the reserve fd (the client gets
 * EOF instead of waiting in the backlog, and the listener stops being
 * readable). Returns true to try accepting again. */
static bool accept_failed(struct ipc_host *h, int lfd, int err)
{
	uint64_t n;
	bool shed = false;
	if ((err == EMFILE || err == ENFILE) && h->reserve_fd >= 0) {
		tb_close(&h->reserve_fd);
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			close(fd);
			shed = true;
		}
		h->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (shed)
			h->stats.clients_rejected++;
	}
	if (ratelog_due(&h->log_accept, &n))
		log_warn(LOG_TAG,
		         "cannot accept a connection: %s (%" PRIu64
		         " times since the last report%s)",
		         strerror(err), n, shed ? "; closing what cannot be served" : "");
	if (shed && h->reserve_fd >= 0)
		return true;
	if (err != ENFILE && err != EMFILE && err != ENOBUFS && err != ENOMEM)
		return false; /* a client that left in between, say: try at the next event */
	/* No fd even to shed with: stop watching the listeners for a while
	 * rather than spin on a readable listener (until the timer, whose fd
	 * the reserve gives up, or until a client leaves). */
	set_accepting(h, false);
	if (!h->pause_timer) {
		tb_close(&h->reserve_fd);
		h->pause_timer = loop_add_timer(h->loop, IPC_ACCEPT_PAUSE_MS, 0, on_resume, h);
	}
	return false;
}

static void on_accept(struct loop *l, int lfd, uint32_t events, void *ctx)
{
	struct ipc_host *h = ctx;
	(void)l;
	(void)events;
	for (int i = 0; i < 16; i++) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    !accept_failed(h, lfd, errno))
				return;
			continue;
		}
		if (too_few_fds_left(h, fd)) {
			uint64_t n;
			close(fd);
			h->stats.clients_rejected++;
			if (ratelog_due(&h->log_accept, &n))
				log_warn(
				    LOG_TAG,
				    "cannot accept a connection: fewer than %u file descriptors "
				    "left (limit %d; %" PRIu64 " closed since the last report)",
				    IPC_FD_HEADROOM, h->fd_limit, n);
			continue;
		}
		ipc_host_adopt_fd(h, fd);
	}
}

int ipc_host_listen_fd(struct ipc_host *h, int fd)
{
	if (h->reserve_fd < 0)
		h->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int r = tb_set_nonblock(fd, true);
	if (r == 0)
		r = loop_add_fd(h->loop, fd, LOOP_IN, on_accept, h);
	if (r < 0) {
		close(fd);
		return tb_err_errno(&h->err, r, "cannot watch listening socket");
	}
	vec_push(&h->listeners, fd);
	return 0;
}

int ipc_host_listen(struct ipc_host *h, const char *names)
{
	const char *p = names;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);
		if (n > 0) {
			char *name = tb_strndup(p, n);
			int fd = ipc_sock_listen(name, &h->err);
			tb_free(name);
			if (fd < 0)
				return fd;
			int r = ipc_host_listen_fd(h, fd);
			if (r < 0)
				return r;
		}
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

int ipc_host_disconnect(struct ipc_host *h, uint64_t client_id)
{
	struct host_client *hc = hmap_get_ptr(&h->clients, client_id);
	if (!hc)
		return -ENOENT;
	client_drop(hc, true);
	return 0;
}

/* ---- dispatch -------------------------------------------------------------- */

static void client_on_error(void *owner, int code)
{
	struct host_client *hc = owner;
	struct ipc_host *h = hc->host;
	if (code == -ENOBUFS || code == -ETIMEDOUT)
		h->stats.send_overflows++;
	if (code == -EPROTO)
		h->stats.protocol_errors++;
	log_debug(LOG_TAG, "client %llu disconnected (%s)", (unsigned long long)hc->peer.client_id,
	          code ? strerror(-code) : "eof");
	client_drop(hc, true);
}

static int send_frame(struct host_client *hc, Perfetto__Protos__IPCFrame *f, int fd)
{
	int r = ipc_conn_send_frame(&hc->conn, f, fd);
	if (r == 0)
		hc->host->stats.frames_sent++;
	return r;
}

static void reply_request_error(struct host_client *hc, uint64_t request_id)
{
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__RequestError e =
	    PERFETTO__PROTOS__IPCFRAME__REQUEST_ERROR__INIT;
	f.has_request_id = true;
	f.request_id = request_id;
	e.error = (char *)"unknown request";
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_REQUEST_ERROR;
	f.msg_request_error = &e;
	send_frame(hc, &f, -1);
}

static void on_bind(struct host_client *hc, uint64_t request_id, const char *name)
{
	struct ipc_host *h = hc->host;
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__BindServiceReply rep =
	    PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE_REPLY__INIT;
	Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo *infos = NULL;
	Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo **ptrs = NULL;
	f.has_request_id = true;
	f.request_id = request_id;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE_REPLY;
	f.msg_bind_service_reply = &rep;
	rep.has_success = true;
	for (size_t i = 0; name && i < h->services.len; i++) {
		const struct ipc_service_desc *d = h->services.data[i].desc;
		if (strcmp(d->name, name) != 0)
			continue;
		size_t n = d->n_methods;
		infos = tb_calloc(n, sizeof *infos);
		ptrs = tb_calloc(n, sizeof *ptrs);
		for (size_t m = 0; m < n; m++) {
			Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo mi =
			    PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE_REPLY__METHOD_INFO__INIT;
			mi.has_id = true;
			mi.id = (uint32_t)(m + 1);
			mi.name = (char *)d->methods[m].name;
			infos[m] = mi;
			ptrs[m] = &infos[m];
		}
		rep.success = true;
		rep.has_service_id = true;
		rep.service_id = (uint32_t)(i + 1);
		rep.n_methods = n;
		rep.methods = ptrs;
		break;
	}
	send_frame(hc, &f, -1);
	tb_free(infos);
	tb_free(ptrs);
}

static void reply_invoke_failure(struct host_client *hc, uint64_t request_id)
{
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__InvokeMethodReply rep =
	    PERFETTO__PROTOS__IPCFRAME__INVOKE_METHOD_REPLY__INIT;
	f.has_request_id = true;
	f.request_id = request_id;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY;
	f.msg_invoke_method_reply = &rep;
	rep.has_success = true;
	rep.success = false;
	send_frame(hc, &f, -1);
}

static void on_invoke(struct host_client *hc, uint64_t request_id,
                      const Perfetto__Protos__IPCFrame__InvokeMethod *im)
{
	struct ipc_host *h = hc->host;
	uint32_t sid = im->has_service_id ? im->service_id : 0;
	uint32_t mid = im->has_method_id ? im->method_id : 0;
	if (sid == 0 || sid > h->services.len) {
		reply_invoke_failure(hc, request_id);
		return;
	}
	struct host_service *svc = &h->services.data[sid - 1];
	if (mid == 0 || mid > svc->desc->n_methods || !svc->desc->methods[mid - 1].fn) {
		reply_invoke_failure(hc, request_id);
		return;
	}
	struct ipc_call *call = tb_calloc(1, sizeof *call);
	call->client = hc;
	call->peer = hc->peer;
	call->request_id = request_id;
	call->drop_reply = im->has_drop_reply && im->drop_reply;
	call->next = hc->calls;
	if (hc->calls)
		hc->calls->prev = call;
	hc->calls = call;
	const uint8_t *args = im->has_args_proto ? im->args_proto.data : NULL;
	size_t alen = im->has_args_proto ? im->args_proto.len : 0;
	/* The handler may finish (free) call; hc stays valid because the
	 * connection is busy dispatching. */
	hc->current = call;
	svc->desc->methods[mid - 1].fn(svc->ctx, call, args ? args : (const uint8_t *)"", alen);
	hc->current = NULL;
}

static void client_on_frame(void *owner, const uint8_t *p, size_t n)
{
	struct host_client *hc = owner;
	struct ipc_host *h = hc->host;
	Perfetto__Protos__IPCFrame *f = ipc_frame_decode(p, n);
	h->stats.frames_received++;
	if (!f) {
		h->stats.protocol_errors++;
		log_debug(LOG_TAG, "client %llu sent an undecodable frame",
		          (unsigned long long)hc->peer.client_id);
		client_drop(hc, true);
		return;
	}
	uint64_t rid = f->has_request_id ? f->request_id : 0;
	switch (f->msg_case) {
	case PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE:
		hc->bound = true;
		on_bind(hc, rid, f->msg_bind_service->service_name);
		break;
	case PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD:
		on_invoke(hc, rid, f->msg_invoke_method);
		break;
	case PERFETTO__PROTOS__IPCFRAME__MSG_SET_PEER_IDENTITY:
		/* Honoured by Perfetto only on non-AF_UNIX sockets; we only
		 * have AF_UNIX, where SO_PEERCRED is the truth. */
		break;
	default:
		reply_request_error(hc, rid);
		break;
	}
	ipc_frame_free(f);
}

/* ---- calls ----------------------------------------------------------------- */

static void call_finish(struct ipc_call *call)
{
	struct host_client *hc = call->client;
	if (hc) {
		if (hc->current == call)
			hc->current = NULL;
		if (hc->drain_call == call)
			hc->drain_call = NULL;
		if (call->prev)
			call->prev->next = call->next;
		else
			hc->calls = call->next;
		if (call->next)
			call->next->prev = call->prev;
	}
	tb_free(call);
}

static int call_send(struct ipc_call *call, bool success, const void *data, size_t len,
                     bool has_more, int fd)
{
	struct host_client *hc = call->client;
	if (!hc || call->drop_reply) {
		tb_close(&fd);
		return -ENOTCONN;
	}
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__InvokeMethodReply rep =
	    PERFETTO__PROTOS__IPCFRAME__INVOKE_METHOD_REPLY__INIT;
	f.has_request_id = true;
	f.request_id = call->request_id;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY;
	f.msg_invoke_method_reply = &rep;
	rep.has_success = true;
	rep.success = success;
	rep.has_has_more = true;
	rep.has_more = has_more;
	if (success) {
		rep.has_reply_proto = true;
		rep.reply_proto.data = (uint8_t *)(data ? data : "");
		rep.reply_proto.len = len;
	}
	int r = send_frame(hc, &f, fd);
	if (r == -EMSGSIZE) {
		rep.success = false;
		rep.has_reply_proto = false;
		send_frame(hc, &f, -1);
	}
	return r;
}

int ipc_call_reply(struct ipc_call *call, const void *data, size_t len, bool has_more, int fd)
{
	int r = call_send(call, true, data, len, has_more, fd);
	if (!has_more)
		call_finish(call);
	return r;
}

int ipc_call_fail(struct ipc_call *call)
{
	int r = call_send(call, false, NULL, 0, false, -1);
	call_finish(call);
	return r;
}

void ipc_call_drop(struct ipc_call *call)
{
	call_finish(call);
}

const struct ipc_peer *ipc_call_peer(const struct ipc_call *call)
{
	return &call->peer;
}

uint64_t ipc_call_request_id(const struct ipc_call *call)
{
	return call->request_id;
}

bool ipc_call_alive(const struct ipc_call *call)
{
	return call->client && !call->drop_reply && !call->client->conn.closed &&
	       !call->client->conn.failing;
}

size_t ipc_call_queued_bytes(const struct ipc_call *call)
{
	if (!call->client)
		return 0;
	return call->client->conn.txq.len - call->client->conn.tx_head;
}

bool ipc_call_on_drained(struct ipc_call *call, void (*fn)(void *ctx), void *ctx)
{
	struct host_client *hc = call->client;
	if (!hc || hc->conn.closed || hc->conn.failing || hc->conn.tx_head == hc->conn.txq.len)
		return false;
	hc->drain_call = call;
	hc->drain_fn = fn;
	hc->drain_ctx = ctx;
	return true;
}

static void client_on_drained(void *owner)
{
	struct host_client *hc = owner;
	if (!hc->drain_call)
		return;
	hc->drain_call = NULL;
	hc->drain_fn(hc->drain_ctx); /* may set the hook again */
}

int ipc_call_take_fd(struct ipc_call *call)
{
	if (!call->client || call->client->current != call)
		return -1;
	return ipc_conn_take_fd(&call->client->conn);
}
