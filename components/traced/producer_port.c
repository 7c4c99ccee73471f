/*
 * producer_port.c: the ProducerPort service on the producer socket.
 *
 * One struct traced_producer per connection. Its methods, in proto
 * declaration order (the order is the wire method id): InitializeConnection,
 * RegisterDataSource, UnregisterDataSource, CommitData, GetAsyncCommand,
 * RegisterTraceWriter, UnregisterTraceWriter, NotifyDataSourceStarted,
 * NotifyDataSourceStopped, ActivateTriggers, Sync, UpdateDataSource.
 * Commands to the producer (SetupTracing with the SMB fd, SetupDataSource,
 * StartDataSource, StopDataSource, Flush) are has_more replies on its
 * pending GetAsyncCommand call, queued until that call arrives. The SMB is
 * hostile memory: CommitData validates every page, chunk and state through
 * tracing_smb_read_chunk and counts what fails.
 */
#include "traced_int.h"
#include "pb_fields.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define UNPACK(type, fn, args, len) ((type *)fn##__unpack(protos_allocator(), (len), (args)))
#define FREE_MSG(m) protobuf_c_message_free_unpacked(&(m)->base, protos_allocator())

static struct traced_producer *producer_of(struct traced *t, struct ipc_call *call)
{
	return hmap_get_ptr(&t->producers, ipc_call_peer(call)->client_id);
}

static void reply_empty(struct ipc_call *call)
{
	ipc_call_reply(call, NULL, 0, false, -1);
}

/* Pack any message into a tb_malloc'd buffer. */
static uint8_t *pack_msg(const ProtobufCMessage *m, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = tb_malloc(*len ? *len : 1);
	protobuf_c_message_pack(m, buf);
	return buf;
}

void traced_producer_on_connect(struct traced *t, const struct ipc_peer *peer)
{
	struct traced_producer *p = tb_calloc(1, sizeof *p);
	p->svc = t;
	p->client_id = peer->client_id;
	p->uid = peer->uid;
	p->pid = peer->pid;
	do {
		if (++t->last_producer_id == 0)
			t->last_producer_id = 1;
	} while (traced_producer_by_id(t, t->last_producer_id));
	p->id = t->last_producer_id;
	hmap_put_ptr(&t->producers, peer->client_id, p);
	t->stats.producers_connected++;
	t->stats.producers_seen++;
}

void traced_producer_free(struct traced_producer *p)
{
	if (p->async_call)
		ipc_call_drop(p->async_call);
	for (size_t i = 0; i < p->queued.len; i++) {
		tb_free(p->queued.data[i].buf);
		tb_close(&p->queued.data[i].fd);
	}
	vec_release(&p->queued);
	for (size_t i = 0; i < p->sources.len; i++)
		tb_free(p->sources.data[i].name);
	vec_release(&p->sources);
	vec_release(&p->writers);
	tracing_smb_free(p->smb);
	tb_free(p->scratch);
	tb_free(p->name);
	tb_free(p->sdk_version);
	tb_free(p);
}

void traced_producer_on_disconnect(struct traced *t, const struct ipc_peer *peer)
{
	struct traced_producer *p = NULL;
	uint64_t v;
	if (!hmap_del(&t->producers, peer->client_id, &v))
		return;
	p = (void *)(uintptr_t)v;
	log_info(TRACED_LOG, "producer %u '%s' disconnected", p->id, p->name ? p->name : "");
	t->stats.producers_connected--;
	/* Its data sources count as stopped; flushes stop waiting for it. */
	for (size_t i = 0; i < t->sessions.len; i++) {
		struct traced_session *s = t->sessions.data[i];
		for (size_t j = 0; j < s->instances.len; j++)
			if (s->instances.data[j].producer_id == p->id)
				s->instances.data[j].stopped = true;
	}
	{
		uint16_t id = p->id;
		traced_producer_free(p);
		traced_flush_ack(t, id, UINT64_MAX);
	}
	for (size_t i = 0; i < t->sessions.len; i++)
		traced_session_instance_stopped(t->sessions.data[i], 0);
}

void traced_producer_send(struct traced_producer *p, uint8_t *buf, size_t len, int fd)
{
	if (p->async_call && ipc_call_alive(p->async_call)) {
		ipc_call_reply(p->async_call, buf, len, true, fd);
		tb_free(buf);
		return;
	}
	vec_push(&p->queued, ((struct traced_cmd){buf, len, fd}));
}

static void send_cmd(struct traced_producer *p, Perfetto__Protos__GetAsyncCommandResponse *cmd,
                     int fd)
{
	size_t len;
	uint8_t *buf = pack_msg(&cmd->base, &len);
	traced_producer_send(p, buf, len, fd);
}

static bool page_size_ok(size_t ps)
{
	return ps >= TRACING_MIN_PAGE_SIZE && ps <= TRACING_MAX_PAGE_SIZE && ps % 4096 == 0 &&
	       ((ps / 4096) & (ps / 4096 - 1)) == 0;
}

int traced_producer_setup_smb(struct traced_producer *p, const Perfetto__Protos__TraceConfig *cfg)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__SetupTracing st =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__SETUP_TRACING__INIT;
	size_t page = p->page_hint, size = p->size_hint;
	struct tb_err err = {0};
	int fd = -1, rc;

	if (p->setup_sent)
		return 0;
	if (!p->smb) {
		for (size_t i = 0; cfg && i < cfg->n_producers; i++) {
			const Perfetto__Protos__TraceConfig__ProducerConfig *pc = cfg->producers[i];
			if (!pc->producer_name || !p->name || strcmp(pc->producer_name, p->name))
				continue;
			if (pc->shm_size_kb)
				size = (size_t)pc->shm_size_kb * 1024;
			if (pc->page_size_kb)
				page = (size_t)pc->page_size_kb * 1024;
		}
		if (!page_size_ok(page))
			page = TRACING_DEFAULT_PAGE_SIZE;
		if (size == 0)
			size = TRACING_DEFAULT_SMB_SIZE;
		if (size > TRACING_MAX_SMB_SIZE)
			size = TRACING_MAX_SMB_SIZE;
		if (size % page || size < page) {
			size = TRACING_DEFAULT_SMB_SIZE;
			page = TRACING_DEFAULT_PAGE_SIZE;
		}
		if ((rc = tracing_smb_create(size, page, &p->smb, &err))) {
			log_error(TRACED_LOG, "producer %u: %s", p->id, err.msg);
			return rc;
		}
	}
	p->scratch = tb_malloc(tracing_smb_page_size(p->smb));
	if (!p->provided_shmem && (fd = dup(tracing_smb_fd(p->smb))) < 0)
		return -errno;
	st.has_shared_buffer_page_size_kb = true;
	st.shared_buffer_page_size_kb = (uint32_t)(tracing_smb_page_size(p->smb) / 1024);
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING;
	cmd.setup_tracing = &st;
	send_cmd(p, &cmd, fd);
	p->setup_sent = true;
	log_info(TRACED_LOG, "producer %u: SMB %zu KiB, pages of %zu KiB", p->id,
	         tracing_smb_size(p->smb) / 1024, tracing_smb_page_size(p->smb) / 1024);
	return 0;
}

void traced_producer_send_setup_start(struct traced_producer *p, uint64_t instance_id,
                                      const Perfetto__Protos__DataSourceConfig *cfg)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__SetupDataSource setup =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__SETUP_DATA_SOURCE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__StartDataSource start =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__START_DATA_SOURCE__INIT;
	setup.has_new_instance_id = true;
	setup.new_instance_id = instance_id;
	setup.config = (Perfetto__Protos__DataSourceConfig *)cfg;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_DATA_SOURCE;
	cmd.setup_data_source = &setup;
	send_cmd(p, &cmd, -1);
	start.has_new_instance_id = true;
	start.new_instance_id = instance_id;
	start.config = (Perfetto__Protos__DataSourceConfig *)cfg;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE;
	cmd.start_data_source = &start;
	send_cmd(p, &cmd, -1);
	log_info(TRACED_LOG, "producer %u: start '%s' as instance %" PRIu64, p->id, cfg->name,
	         instance_id);
}

void traced_producer_send_stop(struct traced_producer *p, uint64_t instance_id)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__StopDataSource stop =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__STOP_DATA_SOURCE__INIT;
	stop.has_instance_id = true;
	stop.instance_id = instance_id;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_STOP_DATA_SOURCE;
	cmd.stop_data_source = &stop;
	send_cmd(p, &cmd, -1);
}

void traced_producer_send_flush(struct traced_producer *p, const uint64_t *ids, size_t n,
                                uint64_t flush_id, uint64_t flags)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__Flush fl =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__FLUSH__INIT;
	fl.n_data_source_ids = n;
	fl.data_source_ids = (uint64_t *)ids;
	fl.has_request_id = true;
	fl.request_id = flush_id;
	fl.has_flags = true;
	fl.flags = flags;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_FLUSH;
	cmd.flush = &fl;
	send_cmd(p, &cmd, -1);
}

void traced_producer_send_clear_incremental_state(struct traced_producer *p, const uint64_t *ids,
                                                  size_t n)
{
	Perfetto__Protos__GetAsyncCommandResponse cmd =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__INIT;
	Perfetto__Protos__GetAsyncCommandResponse__ClearIncrementalState cl =
	    PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CLEAR_INCREMENTAL_STATE__INIT;
	cl.n_data_source_ids = n;
	cl.data_source_ids = (uint64_t *)ids;
	cmd.cmd_case = PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_CLEAR_INCREMENTAL_STATE;
	cmd.clear_incremental_state = &cl;
	send_cmd(p, &cmd, -1);
}

/* ---- methods, in declaration order ---------------------------------------- */

static void m_initialize_connection(void *ctx, struct ipc_call *call, const uint8_t *args,
                                    size_t len)
{
	struct traced *t = ctx;
	struct traced_producer *p = producer_of(t, call);
	Perfetto__Protos__InitializeConnectionRequest *req;
	Perfetto__Protos__InitializeConnectionResponse resp =
	    PERFETTO__PROTOS__INITIALIZE_CONNECTION_RESPONSE__INIT;
	uint8_t buf[16];
	int fd = ipc_call_take_fd(call);

	req = UNPACK(Perfetto__Protos__InitializeConnectionRequest,
	             perfetto__protos__initialize_connection_request, args, len);
	if (!p || !req || p->initialized) {
		tb_close(&fd);
		if (req)
			FREE_MSG(req);
		ipc_call_fail(call);
		return;
	}
	if (t->lockdown && p->uid != t->uid) {
		log_info(TRACED_LOG, "lockdown mode: refusing producer '%s' of uid %d",
		         req->producer_name ? req->producer_name : "", (int)p->uid);
		tb_close(&fd);
		FREE_MSG(req);
		ipc_call_fail(call);
		return;
	}
	p->initialized = true;
	p->name = tb_strdup(req->producer_name ? req->producer_name : "");
	p->sdk_version = tb_strdup(req->sdk_version ? req->sdk_version : "");
	p->page_hint = req->shared_memory_page_size_hint_bytes;
	p->size_hint = req->shared_memory_size_hint_bytes;
	if (req->producer_provided_shmem && fd >= 0) {
		size_t page = page_size_ok(p->page_hint) ? p->page_hint : TRACING_DEFAULT_PAGE_SIZE;
		struct tb_err err = {0};
		if (tracing_smb_adopt(fd, page, true, &p->smb, &err) == 0) {
			fd = -1;
			p->provided_shmem = true;
		} else {
			log_warn(TRACED_LOG, "producer %u: rejecting its SMB: %s", p->id, err.msg);
		}
	}
	tb_close(&fd);
	FREE_MSG(req);
	resp.has_using_shmem_provided_by_producer = true;
	resp.using_shmem_provided_by_producer = p->provided_shmem;
	resp.has_direct_smb_patching_supported = true;
	resp.direct_smb_patching_supported = true;
	resp.has_use_shmem_emulation = true;
	resp.use_shmem_emulation = false;
	log_info(TRACED_LOG, "producer %u '%s' (pid %d) connected", p->id, p->name, (int)p->pid);
	ipc_call_reply(call, buf,
	               perfetto__protos__initialize_connection_response__pack(&resp, buf), false,
	               -1);
}

static void m_register_data_source(void *ctx, struct ipc_call *call, const uint8_t *args,
                                   size_t len)
{
	struct traced *t = ctx;
	struct traced_producer *p = producer_of(t, call);
	Perfetto__Protos__RegisterDataSourceRequest *req;
	Perfetto__Protos__RegisterDataSourceResponse resp =
	    PERFETTO__PROTOS__REGISTER_DATA_SOURCE_RESPONSE__INIT;
	const Perfetto__Protos__DataSourceDescriptor *d;
	struct traced_ds_reg reg = {0};
	uint8_t buf[128];
	char msg[96];

	req = UNPACK(Perfetto__Protos__RegisterDataSourceRequest,
	             perfetto__protos__register_data_source_request, args, len);
	if (!p || !req) {
		if (req)
			FREE_MSG(req);
		ipc_call_fail(call);
		return;
	}
	d = req->data_source_descriptor;
	if (!d || !d->name || !d->name[0]) {
		snprintf(msg, sizeof msg, "data source without a name");
		resp.error = msg;
	} else {
		reg.name = tb_strdup(d->name);
		reg.id = d->id;
		reg.notify_on_start = d->will_notify_on_start;
		reg.notify_on_stop = d->will_notify_on_stop;
		reg.no_flush = d->no_flush;
		reg.clear_incremental = d->handles_incremental_state_clear;
		vec_push(&p->sources, reg);
		t->stats.data_sources_registered++;
		t->stats.data_sources_seen++;
		log_info(TRACED_LOG, "producer %u: registered '%s'", p->id, reg.name);
	}
	FREE_MSG(req);
	ipc_call_reply(call, buf, perfetto__protos__register_data_source_response__pack(&resp, buf),
	               false, -1);
	if (reg.name)
		traced_sessions_on_new_source(t, p, &p->sources.data[p->sources.len - 1]);
}

static void m_unregister_data_source(void *ctx, struct ipc_call *call, const uint8_t *args,
                                     size_t len)
{
	struct traced *t = ctx;
	struct traced_producer *p = producer_of(t, call);
	Perfetto__Protos__UnregisterDataSourceRequest *req;
	req = UNPACK(Perfetto__Protos__UnregisterDataSourceRequest,
	             perfetto__protos__unregister_data_source_request, args, len);
	if (p && req && req->data_source_name) {
		for (size_t i = 0; i < p->sources.len; i++) {
			if (strcmp(p->sources.data[i].name, req->data_source_name) == 0) {
				tb_free(p->sources.data[i].name);
				p->sources.data[i] = p->sources.data[--p->sources.len];
				t->stats.data_sources_registered--;
				break;
			}
		}
	}
	if (req)
		FREE_MSG(req);
	reply_empty(call);
}

/* Move one chunk out of the SMB into its buffer. */
static void commit_chunk(struct traced *t, struct traced_producer *p,
                         const Perfetto__Protos__CommitDataRequest__ChunksToMove *m)
{
	struct tracing_chunk_header h;
	struct traced_buffer *b;
	size_t n;
	int rc;
	if (!p->smb || !p->scratch || m->has_data) {
		t->stats.bad_commits++;
		return;
	}
	rc = tracing_smb_read_chunk(p->smb, m->page, m->chunk, &h, p->scratch,
	                            tracing_smb_page_size(p->smb), &n);
	if (rc) {
		t->stats.bad_commits++;
		log_debug(TRACED_LOG, "producer %u: bad commit page %u chunk %u: %d", p->id,
		          m->page, m->chunk, rc);
		return;
	}
	if (!(b = traced_buffer_for_producer(t, p, m->target_buffer))) {
		t->stats.chunks_discarded++;
		return;
	}
	traced_buffer_copy_chunk(b, p->id, p->uid, p->pid, &h, p->scratch, n);
}

static void m_commit_data(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced *t = ctx;
	struct traced_producer *p = producer_of(t, call);
	Perfetto__Protos__CommitDataRequest *req;
	req = UNPACK(Perfetto__Protos__CommitDataRequest, perfetto__protos__commit_data_request,
	             args, len);
	if (!p || !req) {
		if (req)
			FREE_MSG(req);
		ipc_call_fail(call);
		return;
	}
	for (size_t i = 0; i < req->n_chunks_to_move; i++)
		commit_chunk(t, p, req->chunks_to_move[i]);
	for (size_t i = 0; i < req->n_chunks_to_patch; i++) {
		const Perfetto__Protos__CommitDataRequest__ChunkToPatch *cp =
		    req->chunks_to_patch[i];
		struct traced_buffer *b = traced_buffer_for_producer(t, p, cp->target_buffer);
		if (!b || cp->writer_id == 0 || cp->writer_id > TRACING_MAX_WRITER_ID) {
			t->stats.patches_discarded++;
			continue;
		}
		for (size_t j = 0; j < cp->n_patches; j++)
			traced_buffer_patch(b, p->id, (uint16_t)cp->writer_id, cp->chunk_id,
			                    cp->patches[j]->offset, cp->patches[j]->data.data,
			                    cp->patches[j]->data.len);
		if (!cp->has_more_patches)
			traced_buffer_patch_done(b, p->id, (uint16_t)cp->writer_id, cp->chunk_id);
	}
	{
		uint64_t flush_id = req->flush_request_id;
		FREE_MSG(req);
		reply_empty(call);
		if (flush_id)
			traced_flush_ack(t, p->id, flush_id);
	}
}

static void m_get_async_command(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced *t = ctx;
	struct traced_producer *p = producer_of(t, call);
	if (!p) {
		ipc_call_fail(call);
		return;
	}
	if (p->async_call)
		ipc_call_drop(p->async_call);
	p->async_call = call;
	for (size_t i = 0; i < p->queued.len; i++) {
		struct traced_cmd *c = &p->queued.data[i];
		ipc_call_reply(call, c->buf, c->len, true, c->fd);
		tb_free(c->buf);
	}
	vec_clear(&p->queued);
}

static void m_register_trace_writer(void *ctx, struct ipc_call *call, const uint8_t *args,
                                    size_t len)
{
	struct traced_producer *p = producer_of(ctx, call);
	Perfetto__Protos__RegisterTraceWriterRequest *req;
	req = UNPACK(Perfetto__Protos__RegisterTraceWriterRequest,
	             perfetto__protos__register_trace_writer_request, args, len);
	if (p && req && p->writers.len < TRACING_MAX_WRITER_ID)
		vec_push(&p->writers, req->trace_writer_id);
	if (req)
		FREE_MSG(req);
	reply_empty(call);
}

static void m_unregister_trace_writer(void *ctx, struct ipc_call *call, const uint8_t *args,
                                      size_t len)
{
	struct traced_producer *p = producer_of(ctx, call);
	Perfetto__Protos__UnregisterTraceWriterRequest *req;
	req = UNPACK(Perfetto__Protos__UnregisterTraceWriterRequest,
	             perfetto__protos__unregister_trace_writer_request, args, len);
	for (size_t i = 0; p && req && i < p->writers.len; i++)
		if (p->writers.data[i] == req->trace_writer_id) {
			p->writers.data[i] = p->writers.data[--p->writers.len];
			break;
		}
	if (req)
		FREE_MSG(req);
	reply_empty(call);
}

/* Started/Stopped notifications carry the instance id. */
_Static_assert(PB_F_NotifyDataSourceStartedRequest_data_source_id ==
                   PB_F_NotifyDataSourceStoppedRequest_data_source_id,
               "notify_ds reads both requests");
static void notify_ds(struct traced *t, struct ipc_call *call, const uint8_t *args, size_t len,
                      bool stopped)
{
	struct traced_producer *p = producer_of(t, call);
	struct pb_field f;
	uint64_t id = 0;
	if (pb_find_field(args, len, PB_F_NotifyDataSourceStartedRequest_data_source_id, &f) == 1 &&
	    f.wire == PB_WIRE_VARINT)
		id = f.val;
	reply_empty(call);
	if (!p || !id)
		return;
	for (size_t i = 0; i < t->sessions.len; i++) {
		struct traced_session *s = t->sessions.data[i];
		for (size_t j = 0; j < s->instances.len; j++) {
			struct traced_instance *in = &s->instances.data[j];
			if (in->id != id || in->producer_id != p->id)
				continue;
			if (stopped)
				traced_session_instance_stopped(s, id);
			else
				traced_session_instance_started(s, id);
			return;
		}
	}
}

static void m_notify_started(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	notify_ds(ctx, call, args, len, false);
}

static void m_notify_stopped(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	notify_ds(ctx, call, args, len, true);
}

static void m_activate_triggers(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced *t = ctx;
	struct traced_producer *p = producer_of(t, call);
	Perfetto__Protos__ActivateTriggersRequest *req =
	    UNPACK(Perfetto__Protos__ActivateTriggersRequest,
	           perfetto__protos__activate_triggers_request, args, len);
	if (p && req)
		traced_activate_triggers(t, p, req->trigger_names, req->n_trigger_names);
	if (req)
		FREE_MSG(req);
	reply_empty(call);
}

static void m_sync(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	/* Requests are handled in order on one loop: everything before is done. */
	reply_empty(call);
}

static void m_update_data_source(void *ctx, struct ipc_call *call, const uint8_t *args, size_t len)
{
	struct traced_producer *p = producer_of(ctx, call);
	Perfetto__Protos__UpdateDataSourceRequest *req;
	req = UNPACK(Perfetto__Protos__UpdateDataSourceRequest,
	             perfetto__protos__update_data_source_request, args, len);
	if (p && req && req->data_source_descriptor && req->data_source_descriptor->name) {
		const Perfetto__Protos__DataSourceDescriptor *d = req->data_source_descriptor;
		for (size_t i = 0; i < p->sources.len; i++)
			if (strcmp(p->sources.data[i].name, d->name) == 0) {
				p->sources.data[i].notify_on_start = d->will_notify_on_start;
				p->sources.data[i].notify_on_stop = d->will_notify_on_stop;
				p->sources.data[i].no_flush = d->no_flush;
				p->sources.data[i].clear_incremental =
				    d->handles_incremental_state_clear;
			}
	}
	if (req)
		FREE_MSG(req);
	reply_empty(call);
}

static const struct ipc_method producer_methods[] = {
    {"InitializeConnection", m_initialize_connection},
    {"RegisterDataSource", m_register_data_source},
    {"UnregisterDataSource", m_unregister_data_source},
    {"CommitData", m_commit_data},
    {"GetAsyncCommand", m_get_async_command},
    {"RegisterTraceWriter", m_register_trace_writer},
    {"UnregisterTraceWriter", m_unregister_trace_writer},
    {"NotifyDataSourceStarted", m_notify_started},
    {"NotifyDataSourceStopped", m_notify_stopped},
    {"ActivateTriggers", m_activate_triggers},
    {"Sync", m_sync},
    {"UpdateDataSource", m_update_data_source},
};

const struct ipc_service_desc traced_producer_port = {"ProducerPort", producer_methods,
                                                      TB_ARRAY_SIZE(producer_methods)};
