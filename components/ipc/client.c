/*
 * The IPC client: one connection to a host, services bound by name, methods
 * invoked by name. Method ids always come from the host's BindServiceReply,
 * never from a table compiled in here. Request ids come from one counter per
 * connection starting at 1 (BindService and InvokeMethod alike, as Perfetto's
 * client does). A request stays pending until its final reply (has_more =
 * false, or success = false); when the connection closes every pending
 * request gets a failure callback, then the owner's on_disconnect.
 */
#include <errno.h>
#include <stdlib.h>

#include "ipc_int.h"

#define LOG_TAG "ipc"

struct svc_method {
	char *name;
	uint32_t id;
};

struct ipc_svc {
	struct ipc_client *client;
	struct ipc_svc *next;
	char *name;
	uint32_t id; /* 0 until bound */
	bool bound;
	VEC(struct svc_method) methods;
};

struct pending {
	uint64_t id;
	struct ipc_svc *bind; /* set for BindService */
	ipc_bind_fn bind_cb;
	ipc_reply_fn reply_cb;
	void *ctx;
};

struct ipc_client {
	struct loop *loop;
	struct ipc_conn conn;
	struct ipc_client_ops ops;
	void *ctx;
	uint64_t next_request_id;
	struct hmap pending; /* request id -> struct pending * */
	struct ipc_svc *svcs;
	uint64_t protocol_errors;
	uid_t peer_uid;
	bool disconnected;
};

static void cl_on_frame(void *owner, const uint8_t *p, size_t n);
static void cl_on_error(void *owner, int code);
static void cl_destroy(void *owner);

static const struct ipc_conn_ops cl_conn_ops = {cl_on_frame, cl_on_error, cl_destroy, NULL};

struct ipc_client *ipc_client_adopt_fd(struct loop *l, int fd, const struct ipc_client_ops *ops,
                                       void *ctx, struct tb_err *err)
{
	struct ipc_client *c = tb_calloc(1, sizeof *c);
	c->loop = l;
	if (ops)
		c->ops = *ops;
	c->ctx = ctx;
	c->next_request_id = 1;
	hmap_init(&c->pending);
	pid_t pid;
	if (ipc_sock_peercred(fd, &c->peer_uid, &pid) < 0)
		c->peer_uid = (uid_t)-1;
	int r = ipc_conn_init(&c->conn, l, fd, &cl_conn_ops, c);
	if (r < 0) {
		tb_err_errno(err, r, "cannot watch the ipc socket");
		tb_free(c);
		return NULL;
	}
	return c;
}

struct ipc_client *ipc_client_new(struct loop *l, const char *name,
                                  const struct ipc_client_ops *ops, void *ctx, struct tb_err *err)
{
	int fd = ipc_sock_connect(name, err);
	if (fd < 0)
		return NULL;
	return ipc_client_adopt_fd(l, fd, ops, ctx, err);
}

static void free_pending_map(struct ipc_client *c)
{
	for (size_t i = hmap_next(&c->pending, 0); i != HMAP_END; i = hmap_next(&c->pending, i + 1))
		tb_free((void *)(uintptr_t)c->pending.slots[i].val);
	hmap_release(&c->pending);
}

static void cl_destroy(void *owner)
{
	struct ipc_client *c = owner;
	free_pending_map(c);
	while (c->svcs) {
		struct ipc_svc *s = c->svcs;
		c->svcs = s->next;
		for (size_t i = 0; i < s->methods.len; i++)
			tb_free(s->methods.data[i].name);
		vec_release(&s->methods);
		tb_free(s->name);
		tb_free(s);
	}
	tb_free(c);
}

void ipc_client_free(struct ipc_client *c)
{
	if (!c)
		return;
	ipc_conn_close(&c->conn);
	c->disconnected = true;
	/* Forget pending requests now: no callbacks after free. */
	free_pending_map(c);
	hmap_init(&c->pending);
	ipc_conn_free_owner(&c->conn);
}

bool ipc_client_connected(const struct ipc_client *c)
{
	return !c->disconnected && !c->conn.closed && !c->conn.failing;
}

uid_t ipc_client_peer_uid(const struct ipc_client *c)
{
	return c->peer_uid;
}

uint64_t ipc_client_protocol_errors(const struct ipc_client *c)
{
	return c->protocol_errors + c->conn.protocol_errors;
}

int ipc_client_take_fd(struct ipc_client *c)
{
	return ipc_conn_take_fd(&c->conn);
}

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = *(struct pending *const *)a, *y = *(struct pending *const *)b;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Fail a finished pending request's callback (bind or reply). */
static void fail_pending(struct ipc_client *c, struct pending *pd)
{
	if (pd->bind) {
		if (pd->bind_cb)
			pd->bind_cb(pd->ctx, pd->bind, false);
	} else if (pd->reply_cb) {
		struct ipc_reply r = {c, pd->id, false, false, (const uint8_t *)"", 0};
		pd->reply_cb(pd->ctx, &r);
	}
}

static void cl_on_error(void *owner, int code)
{
	struct ipc_client *c = owner;
	if (code == -EPROTO)
		c->protocol_errors++;
	log_debug(LOG_TAG, "connection closed (%s)", code ? strerror(-code) : "eof");
	ipc_conn_close(&c->conn);
	c->disconnected = true;
	ipc_conn_enter(&c->conn);
	/* Fail every pending request in request order. ipc_client_free from
	 * a callback empties the map; the list taken here is then unused. */
	VEC(struct pending *) list = VEC_INIT;
	for (size_t i = hmap_next(&c->pending, 0); i != HMAP_END; i = hmap_next(&c->pending, i + 1))
		vec_push(&list, (struct pending *)(uintptr_t)c->pending.slots[i].val);
	hmap_clear(&c->pending);
	if (list.len)
		qsort(list.data, list.len, sizeof *list.data, cmp_pending);
	for (size_t i = 0; i < list.len; i++) {
		if (!c->conn.free_pending)
			fail_pending(c, list.data[i]);
		tb_free(list.data[i]);
	}
	vec_release(&list);
	if (!c->conn.free_pending && c->ops.on_disconnect)
		c->ops.on_disconnect(c->ctx, c);
	ipc_conn_leave(&c->conn);
}

static int64_t send_request(struct ipc_client *c, Perfetto__Protos__IPCFrame *f, int fd,
                            struct pending *pd)
{
	uint64_t id = c->next_request_id;
	f->has_request_id = true;
	f->request_id = id;
	int r = ipc_conn_send_frame(&c->conn, f, fd);
	if (r < 0) {
		tb_free(pd);
		return r == -ENOBUFS || r == -EMSGSIZE ? r : -ENOTCONN;
	}
	c->next_request_id++;
	if (pd) {
		pd->id = id;
		hmap_put_ptr(&c->pending, id, pd);
	}
	return (int64_t)id;
}

struct ipc_svc *ipc_client_bind(struct ipc_client *c, const char *name, ipc_bind_fn cb, void *ctx)
{
	if (!ipc_client_connected(c) || strlen(name) > IPC_NAME_MAX)
		return NULL;
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__BindService b = PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE__INIT;
	b.service_name = (char *)name;
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE;
	f.msg_bind_service = &b;
	struct ipc_svc *s = tb_calloc(1, sizeof *s);
	s->client = c;
	s->name = tb_strdup(name);
	s->next = c->svcs;
	c->svcs = s;
	struct pending *pd = tb_calloc(1, sizeof *pd);
	pd->bind = s;
	pd->bind_cb = cb;
	pd->ctx = ctx;
	/* A send failure closes the connection from the loop later, which
	 * fails the bind through cb; the handle stays valid either way. */
	if (send_request(c, &f, -1, pd) < 0)
		return NULL;
	return s;
}

uint32_t ipc_svc_id(const struct ipc_svc *svc)
{
	return svc->id;
}

const char *ipc_svc_name(const struct ipc_svc *svc)
{
	return svc->name;
}

uint32_t ipc_svc_method_id(const struct ipc_svc *svc, const char *method)
{
	for (size_t i = 0; i < svc->methods.len; i++)
		if (strcmp(svc->methods.data[i].name, method) == 0)
			return svc->methods.data[i].id;
	return 0;
}

int64_t ipc_client_invoke(struct ipc_client *c, struct ipc_svc *svc, const char *method,
                          const void *args, size_t len, int fd, bool drop_reply, ipc_reply_fn cb,
                          void *ctx)
{
	int64_t ret;
	if (!ipc_client_connected(c) || !svc->bound) {
		ret = -ENOTCONN;
		goto fail;
	}
	uint32_t mid = ipc_svc_method_id(svc, method);
	if (mid == 0) {
		ret = -ENOENT;
		goto fail;
	}
	Perfetto__Protos__IPCFrame f = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__InvokeMethod im =
	    PERFETTO__PROTOS__IPCFRAME__INVOKE_METHOD__INIT;
	im.has_service_id = im.has_method_id = im.has_args_proto = true;
	im.service_id = svc->id;
	im.method_id = mid;
	im.args_proto.data = (uint8_t *)(args ? args : "");
	im.args_proto.len = len;
	if (drop_reply) {
		im.has_drop_reply = true;
		im.drop_reply = true;
	}
	f.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD;
	f.msg_invoke_method = &im;
	struct pending *pd = NULL;
	if (!drop_reply) {
		pd = tb_calloc(1, sizeof *pd);
		pd->reply_cb = cb;
		pd->ctx = ctx;
	}
	return send_request(c, &f, fd, pd);
fail:
	tb_close(&fd);
	return ret;
}

/* ---- replies ---------------------------------------------------------------- */

static void on_bind_reply(struct ipc_client *c, struct pending *pd,
                          const Perfetto__Protos__IPCFrame__BindServiceReply *rep)
{
	struct ipc_svc *s = pd->bind;
	bool ok =
	    rep && rep->has_success && rep->success && rep->has_service_id && rep->service_id != 0;
	for (size_t i = 0; ok && i < rep->n_methods; i++) {
		const Perfetto__Protos__IPCFrame__BindServiceReply__MethodInfo *mi =
		    rep->methods[i];
		if (!mi->name || !mi->has_id || mi->id == 0 || strlen(mi->name) > IPC_NAME_MAX)
			continue;
		struct svc_method m = {tb_strdup(mi->name), mi->id};
		vec_push(&s->methods, m);
	}
	if (ok) {
		s->id = rep->service_id;
		s->bound = true;
	}
	(void)c;
	if (pd->bind_cb)
		pd->bind_cb(pd->ctx, s, ok);
}

static void cl_on_frame(void *owner, const uint8_t *p, size_t n)
{
	struct ipc_client *c = owner;
	Perfetto__Protos__IPCFrame *f = ipc_frame_decode(p, n);
	if (!f) {
		/* Like any failure: pending requests fail, the owner is told. */
		cl_on_error(c, -EPROTO);
		return;
	}
	uint64_t rid = f->has_request_id ? f->request_id : 0;
	struct pending *pd = hmap_get_ptr(&c->pending, rid);
	if (!pd) {
		c->protocol_errors++; /* a reply to nothing we asked: drop it */
		goto out;
	}
	switch (f->msg_case) {
	case PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE_REPLY:
		if (!pd->bind)
			break;
		hmap_del(&c->pending, rid, NULL);
		on_bind_reply(c, pd, f->msg_bind_service_reply);
		tb_free(pd);
		break;
	case PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY: {
		if (pd->bind)
			break;
		const Perfetto__Protos__IPCFrame__InvokeMethodReply *rep =
		    f->msg_invoke_method_reply;
		struct ipc_reply r = {c,
		                      rid,
		                      rep->has_success && rep->success,
		                      rep->has_has_more && rep->has_more,
		                      rep->reply_proto.data,
		                      rep->has_reply_proto ? rep->reply_proto.len : 0};
		if (!r.success)
			r.has_more = false;
		if (!r.data)
			r.data = (const uint8_t *)"";
		if (!r.has_more) {
			hmap_del(&c->pending, rid, NULL);
			if (pd->reply_cb)
				pd->reply_cb(pd->ctx, &r);
			tb_free(pd);
		} else if (pd->reply_cb) {
			/* pd stays in the map; a free from the callback
			 * releases it with the map. */
			pd->reply_cb(pd->ctx, &r);
		}
		break;
	}
	case PERFETTO__PROTOS__IPCFRAME__MSG_MSG_REQUEST_ERROR:
		hmap_del(&c->pending, rid, NULL);
		fail_pending(c, pd);
		tb_free(pd);
		break;
	default:
		c->protocol_errors++;
		break;
	}
out:
	ipc_frame_free(f);
}
