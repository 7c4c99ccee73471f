/*
 * producer.c: the producer client library, what traced_probes, traced_perf
 * and tests use to be a Perfetto producer.
 *
 * It follows the sequence real traced_probes puts on the wire (compat §1.5,
 * golden *-producer.frames.txt): BindService("ProducerPort"), then
 * InitializeConnection and GetAsyncCommand pipelined; GetAsyncCommand stays
 * pending and every service command arrives as a has_more reply on it;
 * RegisterDataSource goes out once InitializeConnection has been answered.
 * SetupTracing carries the SMB fd, adopted with seals required. Commands that
 * need the SMB (Setup/StartDataSource) and everything after them are held
 * back until SetupTracing arrives, then replayed in order, so callers always
 * see setup before start and have an SMB to write to in both.
 *
 * Writers report completed chunks and patches to one commit batch; a
 * zero-delay one-shot timer sends it as a single CommitData at the next loop
 * iteration (a timer rather than loop_post because it can be cancelled when
 * the producer is freed first). Notifications, writer (un)registration and
 * flush acknowledgements go with drop_reply as Perfetto's client sends them.
 *
 * Callbacks may free the producer: `busy` counts the callback frames on the
 * stack and the free is deferred to the outermost one.
 */
#include "tracing_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ipc.h"
#include "version.h"
#include "pb_fields.h"

#define PRODUCER_LOG "producer"

struct ds_reg {
	char *name;
	bool notify_start, notify_stop, clear_incremental, sent;
};

/* A data source instance that has been set up and not stopped. */
struct ds_instance {
	uint64_t id;
	bool notify_start, notify_stop;
};

/* A raw GetAsyncCommandResponse held until the SMB exists. */
struct held_cmd {
	uint8_t *buf;
	size_t len;
};

struct tracing_producer {
	struct loop *loop;
	struct tracing_producer_opts opts; /* strings point at the copies below */
	char *name, *socket_name, *sdk_version;
	struct ipc_client *client;
	struct ipc_svc *svc;
	bool connected, disconnected;
	struct tracing_smb *smb;
	VEC(struct ds_reg) sources;
	VEC(struct ds_instance) instances;
	VEC(struct held_cmd) held;
	VEC(struct tracing_writer *) writers;
	uint16_t last_writer_id;
	struct tracing_commit_batch batch;
	uint64_t commit_timer;
	tracing_sync_fn sync_done; /* a pending tracing_producer_sync */
	void *sync_ctx;
	unsigned busy;
	bool free_pending;
	struct tb_err err;
};

static void destroy(struct tracing_producer *p);

static void enter(struct tracing_producer *p)
{
	p->busy++;
}

/* Leave a callback frame; false when the producer is gone. */
static bool leave(struct tracing_producer *p)
{
	if (--p->busy == 0 && p->free_pending) {
		destroy(p);
		return false;
	}
	return true;
}

static bool alive(const struct tracing_producer *p)
{
	return !p->free_pending && !p->disconnected;
}

/* The connection is gone or must go: close it and tell the owner once. */
static void lost(struct tracing_producer *p, const char *why)
{
	if (p->disconnected)
		return;
	p->disconnected = true;
	p->connected = false;
	tb_err_set(&p->err, -ENOTCONN, "producer '%s': %s", p->name, why);
	log_warn(PRODUCER_LOG, "%s", p->err.msg);
	ipc_client_free(p->client); /* allowed from its own callbacks */
	p->client = NULL;
	p->svc = NULL;
	if (p->commit_timer)
		loop_cancel_timer(p->loop, p->commit_timer);
	p->commit_timer = 0;
	tracing_commit_batch_clear(&p->batch);
	if (p->opts.on_disconnect && !p->free_pending)
		p->opts.on_disconnect(p->opts.ctx, p);
}

static int invoke(struct tracing_producer *p, const char *method, const void *args, size_t len,
                  bool drop_reply, ipc_reply_fn cb)
{
	int64_t r;
	if (!p->client || p->disconnected)
		return -ENOTCONN;
	r = ipc_client_invoke(p->client, p->svc, method, args, len, -1, drop_reply, cb, p);
	return r < 0 ? (int)r : 0;
}

/* A message of one varint field 1 (Notify*, UnregisterTraceWriter) or two
 * (field 2 too, RegisterTraceWriter) or of field 3 alone (a flush ack). */
static int invoke_varints(struct tracing_producer *p, const char *method, uint32_t field,
                          uint64_t v1, bool has_v2, uint64_t v2)
{
	uint8_t buf[24], *q = buf;
	*q++ = (uint8_t)(field << 3);
	q = pb_encode_varint(q, v1);
	if (has_v2) {
		*q++ = (uint8_t)(2 << 3);
		q = pb_encode_varint(q, v2);
	}
	return invoke(p, method, buf, (size_t)(q - buf), true, NULL);
}

/* ---- commits -------------------------------------------------------------- */

static int send_batch(struct tracing_producer *p)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc;
	if (tracing_commit_batch_empty(&p->batch))
		return p->connected ? 0 : -ENOTCONN;
	if (!p->connected) {
		tracing_commit_batch_clear(&p->batch);
		return -ENOTCONN;
	}
	rc = tracing_commit_batch_encode(&p->batch, 0, &buf, &len);
	tracing_commit_batch_clear(&p->batch);
	if (rc == 0)
		rc = invoke(p, "CommitData", buf, len, false, NULL);
	tb_free(buf);
	return rc;
}

static void commit_fire(struct loop *l, uint64_t timer_id, void *ctx)
{
	struct tracing_producer *p = ctx;
	p->commit_timer = 0;
	enter(p);
	send_batch(p);
	leave(p);
}

/* The writers' commit callback: batch, and send once per loop iteration. */
static void on_writer_commit(void *ctx, const struct tracing_commit *c)
{
	struct tracing_producer *p = ctx;
	tracing_commit_batch_add(&p->batch, c);
	if (p->commit_timer || !p->connected)
		return;
	p->commit_timer = loop_add_timer(p->loop, 0, 0, commit_fire, p);
	if (!p->commit_timer)
		send_batch(p); /* no timer: send now rather than never */
}

int tracing_producer_commit_completed(struct tracing_producer *p)
{
	if (p->commit_timer)
		loop_cancel_timer(p->loop, p->commit_timer);
	p->commit_timer = 0;
	return send_batch(p);
}

int tracing_producer_commit(struct tracing_producer *p)
{
	for (size_t i = 0; i < p->writers.len; i++)
		tracing_writer_flush(p->writers.data[i]);
	return tracing_producer_commit_completed(p);
}

int tracing_producer_flush_done(struct tracing_producer *p, uint64_t request_id)
{
	int rc = tracing_producer_commit(p);
	if (rc)
		return rc;
	return invoke_varints(p, "CommitData", 3, request_id, false, 0);
}

static void on_sync_reply(void *ctx, const struct ipc_reply *r)
{
	struct tracing_producer *p = ctx;
	tracing_sync_fn done = p->sync_done;
	p->sync_done = NULL;
	if (!done)
		return;
	enter(p);
	done(p->sync_ctx, r->success);
	leave(p);
}

int tracing_producer_sync(struct tracing_producer *p, tracing_sync_fn done, void *ctx)
{
	int rc;
	if (p->sync_done)
		return -EBUSY;
	if ((rc = tracing_producer_commit(p)) ||
	    (rc = invoke(p, "Sync", NULL, 0, false, on_sync_reply)))
		return rc;
	p->sync_done = done;
	p->sync_ctx = ctx;
	return 0;
}

int tracing_producer_notify_started(struct tracing_producer *p, uint64_t instance_id)
{
	return invoke_varints(p, "NotifyDataSourceStarted", 1, instance_id, false, 0);
}

int tracing_producer_notify_stopped(struct tracing_producer *p, uint64_t instance_id)
{
	return invoke_varints(p, "NotifyDataSourceStopped", 1, instance_id, false, 0);
}

/* ---- writers -------------------------------------------------------------- */

static bool writer_id_used(const struct tracing_producer *p, uint16_t id)
{
	for (size_t i = 0; i < p->writers.len; i++)
		if (tracing_writer_id(p->writers.data[i]) == id)
			return true;
	return false;
}

struct tracing_writer *tracing_producer_new_writer(struct tracing_producer *p,
                                                   uint32_t target_buffer)
{
	struct tracing_writer *w;
	uint16_t id = p->last_writer_id;
	if (!p->smb || p->disconnected || p->writers.len >= TRACING_MAX_WRITER_ID)
		return NULL;
	do
		id = id >= TRACING_MAX_WRITER_ID ? 1 : (uint16_t)(id + 1);
	while (writer_id_used(p, id));
	p->last_writer_id = id;
	w = tracing_writer_new(p->smb, id, target_buffer, on_writer_commit, p);
	vec_push(&p->writers, w);
	invoke_varints(p, "RegisterTraceWriter", 1, id, true, target_buffer);
	return w;
}

void tracing_producer_free_writer(struct tracing_producer *p, struct tracing_writer *w)
{
	uint16_t id;
	size_t i;
	if (!w)
		return;
	for (i = 0; i < p->writers.len && p->writers.data[i] != w; i++)
		;
	TB_CHECK(i < p->writers.len);
	p->writers.data[i] = p->writers.data[--p->writers.len];
	id = tracing_writer_id(w);
	tracing_writer_free(w); /* its last chunk joins the batch */
	send_batch(p);          /* before the writer is unregistered */
	invoke_varints(p, "UnregisterTraceWriter", 1, id, false, 0);
}

/* ---- data sources --------------------------------------------------------- */

static void on_register_reply(void *ctx, const struct ipc_reply *r)
{
	struct tracing_producer *p = ctx;
	struct pb_field f = {0};
	if (r->success &&
	    pb_find_field(r->data, r->len, PB_F_RegisterDataSourceResponse_error, &f) == 1 &&
	    f.wire == PB_WIRE_LEN && f.len)
		log_warn(PRODUCER_LOG, "producer '%s': data source rejected: %.*s", p->name,
		         (int)f.len, (const char *)f.data);
}

static int send_registration(struct tracing_producer *p, struct ds_reg *r)
{
	Perfetto__Protos__RegisterDataSourceRequest req =
	    PERFETTO__PROTOS__REGISTER_DATA_SOURCE_REQUEST__INIT;
	Perfetto__Protos__DataSourceDescriptor d = PERFETTO__PROTOS__DATA_SOURCE_DESCRIPTOR__INIT;
	uint8_t *buf;
	size_t len;
	int rc;
	d.name = r->name;
	/* Only true flags go on the wire, as Perfetto's client sends them. */
	d.has_will_notify_on_stop = d.will_notify_on_stop = r->notify_stop;
	d.has_will_notify_on_start = d.will_notify_on_start = r->notify_start;
	d.has_handles_incremental_state_clear = d.handles_incremental_state_clear =
	    r->clear_incremental;
	req.data_source_descriptor = &d;
	len = perfetto__protos__register_data_source_request__get_packed_size(&req);
	buf = tb_malloc(len ? len : 1);
	perfetto__protos__register_data_source_request__pack(&req, buf);
	r->sent = true;
	rc = invoke(p, "RegisterDataSource", buf, len, false, on_register_reply);
	tb_free(buf);
	return rc;
}

int tracing_producer_register_data_source(struct tracing_producer *p, const char *name,
                                          bool will_notify_on_start, bool will_notify_on_stop,
                                          bool handles_incremental_state_clear)
{
	struct ds_reg r = {0};
	if (!name || !name[0])
		return -EINVAL;
	if (p->disconnected)
		return -ENOTCONN;
	r.name = tb_strdup(name);
	r.notify_start = will_notify_on_start;
	r.notify_stop = will_notify_on_stop;
	r.clear_incremental = handles_incremental_state_clear;
	vec_push(&p->sources, r);
	if (p->connected)
		return send_registration(p, vec_last(&p->sources));
	return 0;
}

static const struct ds_reg *source_named(const struct tracing_producer *p, const uint8_t *name,
                                         size_t len)
{
	for (size_t i = 0; i < p->sources.len; i++)
		if (strlen(p->sources.data[i].name) == len &&
		    memcmp(p->sources.data[i].name, name, len) == 0)
			return &p->sources.data[i];
	return NULL;
}

static struct ds_instance *instance_by_id(struct tracing_producer *p, uint64_t id)
{
	for (size_t i = 0; i < p->instances.len; i++)
		if (p->instances.data[i].id == id)
			return &p->instances.data[i];
	return NULL;
}

/* ---- async commands ------------------------------------------------------- */

/* The fields of a Setup/Start/Stop/Flush/Clear command we use. */
struct cmd_args {
	uint64_t id;           /* new_instance_id / instance_id */
	const uint8_t *config; /* DataSourceConfig bytes (borrowed) */
	size_t config_len;
	uint64_t request_id; /* Flush */
	uint32_t page_kb;    /* SetupTracing */
	VEC(uint64_t) ids;   /* Flush / ClearIncrementalState */
};

/* The commands share their field numbers: field 1 is every command's
 * instance id(s) and SetupTracing's page size, field 2 a data source's
 * config or Flush's request id. */
#define CMD_ID PB_F_GetAsyncCommandResponse_StartDataSource_new_instance_id
#define CMD_CONFIG PB_F_GetAsyncCommandResponse_StartDataSource_config
_Static_assert(CMD_ID == PB_F_GetAsyncCommandResponse_SetupDataSource_new_instance_id &&
                   CMD_ID == PB_F_GetAsyncCommandResponse_StopDataSource_instance_id &&
                   CMD_ID == PB_F_GetAsyncCommandResponse_Flush_data_source_ids &&
                   CMD_ID == PB_F_GetAsyncCommandResponse_ClearIncrementalState_data_source_ids &&
                   CMD_ID == PB_F_GetAsyncCommandResponse_SetupTracing_shared_buffer_page_size_kb &&
                   CMD_CONFIG == PB_F_GetAsyncCommandResponse_SetupDataSource_config &&
                   CMD_CONFIG == PB_F_GetAsyncCommandResponse_Flush_request_id,
               "parse_args reads every command with one field layout");

static void parse_args(const uint8_t *data, size_t len, struct cmd_args *a)
{
	struct pb_reader rd;
	struct pb_field f = {0};
	pb_reader_init(&rd, data, len);
	while (pb_next(&rd, &f)) {
		if (f.id == CMD_ID && f.wire == PB_WIRE_VARINT) {
			a->id = f.val;
			vec_push(&a->ids, f.val);
			a->page_kb = (uint32_t)f.val;
		} else if (f.id == CMD_ID && f.wire == PB_WIRE_LEN) {
			struct pb_packed it;
			uint64_t v;
			pb_packed_init(&it, f.data, f.len, PB_WIRE_VARINT);
			while (pb_packed_next(&it, &v))
				vec_push(&a->ids, v);
		} else if (f.id == CMD_CONFIG && f.wire == PB_WIRE_LEN) {
			a->config = f.data;
			a->config_len = f.len;
		} else if (f.id == CMD_CONFIG && f.wire == PB_WIRE_VARINT) {
			a->request_id = f.val;
		}
	}
}

static void do_setup(struct tracing_producer *p, const struct cmd_args *a)
{
	struct ds_instance in = {.id = a->id};
	struct pb_field f = {0};
	char name[256] = "";
	const struct ds_reg *r = NULL;
	if (pb_find_field(a->config, a->config_len, PB_F_DataSourceConfig_name, &f) == 1 &&
	    f.wire == PB_WIRE_LEN) {
		size_t n = f.len < sizeof name - 1 ? f.len : sizeof name - 1;
		memcpy(name, f.data, n);
		name[n] = '\0';
		r = source_named(p, f.data, f.len);
	}
	if (r) {
		in.notify_start = r->notify_start;
		in.notify_stop = r->notify_stop;
	}
	if (!instance_by_id(p, a->id))
		vec_push(&p->instances, in);
	if (p->opts.setup)
		p->opts.setup(p->opts.ctx, p, a->id, name, a->config, a->config_len);
}

static void do_start(struct tracing_producer *p, const struct cmd_args *a)
{
	struct ds_instance *in;
	struct pb_field f = {0};
	uint32_t target_buffer = 0;
	if (!instance_by_id(p, a->id)) {
		do_setup(p, a); /* a service that skipped SetupDataSource */
		if (!alive(p))
			return;
	}
	if (pb_find_field(a->config, a->config_len, PB_F_DataSourceConfig_target_buffer, &f) == 1 &&
	    f.wire == PB_WIRE_VARINT)
		target_buffer = (uint32_t)f.val;
	if (p->opts.start) {
		p->opts.start(p->opts.ctx, p, a->id, a->config, a->config_len, target_buffer);
	} else if ((in = instance_by_id(p, a->id)) && in->notify_start) {
		tracing_producer_notify_started(p, a->id);
	}
}

static void do_stop(struct tracing_producer *p, const struct cmd_args *a)
{
	struct ds_instance *in = instance_by_id(p, a->id);
	bool notify = in && in->notify_stop;
	if (in)
		*in = p->instances.data[--p->instances.len];
	if (p->opts.stop)
		p->opts.stop(p->opts.ctx, p, a->id);
	else if (notify)
		tracing_producer_notify_stopped(p, a->id);
}

static void dispatch(struct tracing_producer *p, uint32_t cmd, const uint8_t *data, size_t len)
{
	struct cmd_args a = {0};
	parse_args(data, len, &a);
	switch (cmd) {
	case PB_F_GetAsyncCommandResponse_setup_data_source:
		do_setup(p, &a);
		break;
	case PB_F_GetAsyncCommandResponse_start_data_source:
		do_start(p, &a);
		break;
	case PB_F_GetAsyncCommandResponse_stop_data_source:
		do_stop(p, &a);
		break;
	case PB_F_GetAsyncCommandResponse_flush:
		if (p->opts.flush)
			p->opts.flush(p->opts.ctx, p, a.ids.data, a.ids.len, a.request_id);
		else
			tracing_producer_flush_done(p, a.request_id);
		break;
	case PB_F_GetAsyncCommandResponse_clear_incremental_state:
		if (p->opts.clear_incremental_state)
			p->opts.clear_incremental_state(p->opts.ctx, p, a.ids.data, a.ids.len);
		break;
	default:
		break; /* unknown commands are ignored, as by Perfetto's client */
	}
	vec_release(&a.ids);
}

/* The oneof case of a GetAsyncCommandResponse and its sub-message. */
static uint32_t command_of(const uint8_t *data, size_t len, const uint8_t **sub, size_t *sub_len)
{
	struct pb_reader rd;
	struct pb_field f = {0};
	uint32_t cmd = 0;
	pb_reader_init(&rd, data, len);
	while (pb_next(&rd, &f)) {
		if (f.wire != PB_WIRE_LEN)
			continue;
		cmd = f.id;
		*sub = f.data;
		*sub_len = f.len;
	}
	return pb_reader_error(&rd) ? 0 : cmd;
}

static void setup_tracing(struct tracing_producer *p, const uint8_t *sub, size_t len, int fd)
{
	struct cmd_args a = {0};
	struct tb_err err = {0};
	VEC(struct held_cmd) held = VEC_INIT;
	size_t page;
	char why[TB_ERR_MSG_MAX + 32];

	if (p->smb) { /* Perfetto's client ignores a second one too */
		tb_close(&fd);
		return;
	}
	parse_args(sub, len, &a);
	vec_release(&a.ids);
	page = a.page_kb ? (size_t)a.page_kb * 1024 : TRACING_DEFAULT_PAGE_SIZE;
	if (fd < 0) {
		lost(p, "SetupTracing came without a shared memory fd");
		return;
	}
	if (tracing_smb_adopt(fd, page, true, &p->smb, &err)) {
		tb_close(&fd);
		snprintf(why, sizeof why, "cannot adopt the SMB: %s", err.msg);
		lost(p, why);
		return;
	}
	log_debug(PRODUCER_LOG, "producer '%s': SMB %zu KiB, pages of %zu KiB", p->name,
	          tracing_smb_size(p->smb) / 1024, page / 1024);
	/* Replay what was held back, in arrival order. */
	held.data = p->held.data;
	held.len = p->held.len;
	held.cap = p->held.cap;
	memset(&p->held, 0, sizeof p->held);
	for (size_t i = 0; i < held.len; i++) {
		const uint8_t *s = NULL;
		size_t n = 0;
		uint32_t cmd = command_of(held.data[i].buf, held.data[i].len, &s, &n);
		if (alive(p))
			dispatch(p, cmd, s, n);
		tb_free(held.data[i].buf);
	}
	vec_release(&held);
}

static void on_async(void *ctx, const struct ipc_reply *r)
{
	struct tracing_producer *p = ctx;
	const uint8_t *sub = NULL;
	size_t len = 0;
	uint32_t cmd;
	int fd;
	if (!r->success) {
		if (!p->disconnected)
			log_warn(PRODUCER_LOG, "producer '%s': GetAsyncCommand ended", p->name);
		return;
	}
	enter(p);
	cmd = command_of(r->data, r->len, &sub, &len);
	if (cmd == PB_F_GetAsyncCommandResponse_setup_tracing) {
		/* Only now: the fd may have been received with earlier frames. */
		fd = ipc_client_take_fd(p->client);
		setup_tracing(p, sub, len, fd);
	} else {
		if (!p->smb &&
		    (cmd == PB_F_GetAsyncCommandResponse_setup_data_source ||
		     cmd == PB_F_GetAsyncCommandResponse_start_data_source || p->held.len)) {
			struct held_cmd h = {tb_memdup(r->data, r->len ? r->len : 1), r->len};
			vec_push(&p->held, h);
		} else if (cmd) {
			dispatch(p, cmd, sub, len);
		}
	}
	leave(p);
}

/* ---- connection ----------------------------------------------------------- */

static void on_init_reply(void *ctx, const struct ipc_reply *r)
{
	struct tracing_producer *p = ctx;
	struct pb_field f = {0};
	if (p->disconnected)
		return;
	enter(p);
	if (!r->success) {
		lost(p, "the service refused InitializeConnection");
	} else if (pb_find_field(r->data, r->len,
	                         PB_F_InitializeConnectionResponse_use_shmem_emulation, &f) == 1 &&
	           f.val) {
		lost(p, "the service asks for shmem emulation, which is not supported");
	} else {
		p->connected = true;
		for (size_t i = 0; i < p->sources.len && alive(p); i++)
			if (!p->sources.data[i].sent)
				send_registration(p, &p->sources.data[i]);
		if (alive(p) && p->opts.on_connect)
			p->opts.on_connect(p->opts.ctx, p);
	}
	leave(p);
}

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	struct tracing_producer *p = ctx;
	Perfetto__Protos__InitializeConnectionRequest req =
	    PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__INIT;
	uint8_t *buf;
	size_t len;
	if (p->disconnected)
		return;
	enter(p);
	if (!ok) {
		lost(p, "cannot bind ProducerPort");
		leave(p);
		return;
	}
	req.has_shared_memory_page_size_hint_bytes = p->opts.smb_page_hint != 0;
	req.shared_memory_page_size_hint_bytes = p->opts.smb_page_hint;
	req.has_shared_memory_size_hint_bytes = p->opts.smb_size_hint != 0;
	req.shared_memory_size_hint_bytes = p->opts.smb_size_hint;
	req.producer_name = p->name;
	/* Our service never scrapes; say so as traced_probes does. */
	req.has_smb_scraping_mode = true;
	req.smb_scraping_mode =
	    PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__PRODUCER_SMBSCRAPING_MODE__SMB_SCRAPING_DISABLED;
	req.sdk_version = p->sdk_version;
	len = perfetto__protos__initialize_connection_request__get_packed_size(&req);
	buf = tb_malloc(len ? len : 1);
	perfetto__protos__initialize_connection_request__pack(&req, buf);
	if (invoke(p, "InitializeConnection", buf, len, false, on_init_reply) ||
	    invoke(p, "GetAsyncCommand", NULL, 0, false, on_async))
		lost(p, "cannot send InitializeConnection");
	tb_free(buf);
	leave(p);
}

static void on_client_disconnect(void *ctx, struct ipc_client *c)
{
	struct tracing_producer *p = ctx;
	enter(p);
	lost(p, "connection to the service closed");
	leave(p);
}

bool tracing_producer_connected(const struct tracing_producer *p)
{
	return p->connected;
}

struct tracing_smb *tracing_producer_smb(const struct tracing_producer *p)
{
	return p->smb;
}

const struct tb_err *tracing_producer_err(const struct tracing_producer *p)
{
	return &p->err;
}

struct tracing_producer *
tracing_producer_new(struct loop *l, const struct tracing_producer_opts *opts, struct tb_err *err)
{
	struct tracing_producer *p = tb_calloc(1, sizeof *p);
	struct ipc_client_ops ops = {.on_disconnect = on_client_disconnect};
	p->loop = l;
	p->opts = *opts;
	p->name = tb_strdup(opts->name ? opts->name : "");
	p->socket_name =
	    tb_strdup(opts->socket_name ? opts->socket_name : ipc_producer_socket_name());
	p->sdk_version = tb_strdup(opts->sdk_version ? opts->sdk_version : "tracebox " TB_VERSION);
	p->opts.name = p->name;
	p->opts.socket_name = p->socket_name;
	p->opts.sdk_version = p->sdk_version;
	tracing_commit_batch_init(&p->batch);
	p->client = ipc_client_new(l, p->socket_name, &ops, p, err);
	if (!p->client) {
		destroy(p);
		return NULL;
	}
	if (opts->same_uid_service && ipc_client_peer_uid(p->client) != geteuid()) {
		tb_err_set(err, -EPERM,
		           "the service on '%s' runs as uid %d, not as ours (%d): refusing it",
		           p->socket_name, (int)ipc_client_peer_uid(p->client), (int)geteuid());
		destroy(p);
		return NULL;
	}
	p->svc = ipc_client_bind(p->client, "ProducerPort", on_bind, p);
	if (!p->svc) {
		tb_err_set(err, -ENOTCONN, "cannot bind ProducerPort on '%s'", p->socket_name);
		destroy(p);
		return NULL;
	}
	return p;
}

static void destroy(struct tracing_producer *p)
{
	if (p->commit_timer)
		loop_cancel_timer(p->loop, p->commit_timer);
	for (size_t i = 0; i < p->writers.len; i++)
		tracing_writer_free(p->writers.data[i]);
	vec_release(&p->writers);
	if (p->connected)
		send_batch(p); /* best effort: what the writers held */
	tracing_commit_batch_release(&p->batch);
	ipc_client_free(p->client);
	tracing_smb_free(p->smb);
	for (size_t i = 0; i < p->sources.len; i++)
		tb_free(p->sources.data[i].name);
	vec_release(&p->sources);
	vec_release(&p->instances);
	for (size_t i = 0; i < p->held.len; i++)
		tb_free(p->held.data[i].buf);
	vec_release(&p->held);
	tb_free(p->name);
	tb_free(p->socket_name);
	tb_free(p->sdk_version);
	tb_free(p);
}

void tracing_producer_free(struct tracing_producer *p)
{
	if (!p)
		return;
	if (p->busy) {
		p->free_pending = true;
		return;
	}
	destroy(p);
}
