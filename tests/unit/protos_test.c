/*
 * Wire-compatibility tests for components/protos: real frames recorded
 * between Perfetto v58.2 binaries (../shared/reference/golden/ipc) and a
 * TraceConfig encoded by stock protoc (tests/data/protos) must decode with
 * the protobuf-c code generated from our .proto files, with the expected
 * field values. Everything is unpacked through a tb_malloc allocator so the
 * runner's leak check covers the generated code too.
 */
#include "test.h"

#include <stdlib.h>

#include "base.h"
#include "protos.h"

static void *tb_pb_alloc(void *data, size_t size)
{
	(void)data;
	return tb_malloc(size ? size : 1);
}

static void tb_pb_free(void *data, void *p)
{
	(void)data;
	tb_free(p);
}

static ProtobufCAllocator pb_alloc = {tb_pb_alloc, tb_pb_free, NULL};

#define MAX_FRAMES 4096

/* One transcript: frames with the 4-byte length prefix already checked and
 * stripped. `buf` holds all payloads back to back. */
struct transcript {
	size_t n;
	char dir[MAX_FRAMES]; /* 'C' = client to traced, 'S' = traced to client */
	int fd[MAX_FRAMES];   /* fd count the proxy saw on the frame */
	size_t off[MAX_FRAMES];
	size_t len[MAX_FRAMES];
	uint8_t *buf;
	size_t cap;
};

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* Loads ../shared/reference/golden/ipc/<name>. Returns 0, 1 if the shared
 * folder is absent (skip), -1 on a malformed file. */
static int transcript_load(struct transcript *t, const char *name)
{
	const char *shared = test_shared_dir();
	char path[4096];
	char *line = NULL;
	size_t linecap = 0, used = 0;
	ssize_t r;
	FILE *f;
	int ret = -1;

	memset(t, 0, sizeof *t);
	if (!shared) {
		test_skip("../shared not found");
		return 1;
	}
	snprintf(path, sizeof path, "%s/reference/golden/ipc/%s", shared, name);
	f = fopen(path, "r");
	if (!f) {
		test_skip("cannot open '%s'", path);
		return 1;
	}
	while ((r = getline(&line, &linecap, f)) > 0) {
		char dir[4];
		unsigned idx, fd;
		int pos = 0;
		if (sscanf(line, "%3s %u fd=%u %n", dir, &idx, &fd, &pos) != 3 || pos == 0)
			goto out;
		if (t->n >= MAX_FRAMES || idx != t->n)
			goto out;
		const char *hex = line + pos;
		size_t hl = strcspn(hex, "\r\n");
		if (hl % 2 || hl < 8)
			goto out;
		if (used + hl / 2 > t->cap) {
			t->cap = (used + hl / 2) * 2;
			t->buf = tb_realloc(t->buf, t->cap);
		}
		uint8_t *dst = t->buf + used;
		for (size_t i = 0; i < hl; i += 2) {
			int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);
			if (hi < 0 || lo < 0)
				goto out;
			dst[i / 2] = (uint8_t)(hi << 4 | lo);
		}
		uint32_t plen = (uint32_t)dst[0] | (uint32_t)dst[1] << 8 | (uint32_t)dst[2] << 16 |
		                (uint32_t)dst[3] << 24;
		if (plen != hl / 2 - 4)
			goto out;
		t->dir[t->n] = dir[0];
		t->fd[t->n] = (int)fd;
		t->off[t->n] = used + 4;
		t->len[t->n] = plen;
		used += hl / 2;
		t->n++;
	}
	ret = 0;
out:
	free(line);
	fclose(f);
	if (ret)
		fprintf(stderr, "  malformed transcript '%s' near frame %zu\n", path, t->n);
	return ret;
}

static void transcript_release(struct transcript *t)
{
	tb_free(t->buf);
	t->buf = NULL;
}

static Perfetto__Protos__IPCFrame *frame_unpack(const struct transcript *t, size_t i)
{
	return perfetto__protos__ipcframe__unpack(&pb_alloc, t->len[i], t->buf + t->off[i]);
}

static void free_msg(void *m)
{
	if (m)
		protobuf_c_message_free_unpacked(m, &pb_alloc);
}

/* The BindServiceReply (frame 1) must list the methods of `svc` with ids
 * 1..N in our declaration order. Returns 0 if it does. */
static int check_bind_reply(const char *file, const char *svc_name,
                            const ProtobufCServiceDescriptor *svc)
{
	struct transcript t;
	Perfetto__Protos__IPCFrame *fr = NULL;
	int rc = transcript_load(&t, file), ret = -1;
	if (rc)
		return rc > 0 ? 0 : -1;
	if (t.n < 2)
		goto out;
	fr = frame_unpack(&t, 0);
	if (!fr || fr->msg_case != PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE ||
	    strcmp(fr->msg_bind_service->service_name, svc_name) != 0)
		goto out;
	free_msg(fr);
	fr = frame_unpack(&t, 1);
	if (!fr || fr->msg_case != PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE_REPLY)
		goto out;
	Perfetto__Protos__IPCFrame__BindServiceReply *rep = fr->msg_bind_service_reply;
	if (!fr->has_request_id || fr->request_id != 1 || !rep->success || rep->service_id != 1)
		goto out;
	if (rep->n_methods != svc->n_methods) {
		fprintf(stderr, "  %s: traced lists %zu methods, we declare %u\n", svc_name,
		        rep->n_methods, svc->n_methods);
		goto out;
	}
	for (size_t i = 0; i < rep->n_methods; i++) {
		if (rep->methods[i]->id != i + 1 ||
		    strcmp(rep->methods[i]->name, svc->methods[i].name) != 0) {
			fprintf(stderr, "  %s: method %zu is %u '%s', we declare '%s'\n", svc_name,
			        i + 1, rep->methods[i]->id, rep->methods[i]->name,
			        svc->methods[i].name);
			goto out;
		}
	}
	ret = 0;
out:
	free_msg(fr);
	transcript_release(&t);
	return ret;
}

TEST(protos_ipc_producer_port_method_ids)
{
	CHECK_EQ(perfetto__protos__producer_port__descriptor.n_methods, 12);
	CHECK_EQ(check_bind_reply("wif-producer.frames.hex", "ProducerPort",
	                          &perfetto__protos__producer_port__descriptor),
	         0);
}

TEST(protos_ipc_consumer_port_method_ids)
{
	CHECK_EQ(perfetto__protos__consumer_port__descriptor.n_methods, 15);
	CHECK_STR_EQ(perfetto__protos__consumer_port__descriptor.methods[14].name, "CloneSession");
	CHECK_EQ(check_bind_reply("wif-consumer.frames.hex", "ConsumerPort",
	                          &perfetto__protos__consumer_port__descriptor),
	         0);
}

TEST(protos_ipc_initialize_connection)
{
	struct transcript t;
	Perfetto__Protos__IPCFrame *fr = NULL;
	Perfetto__Protos__InitializeConnectionRequest *req = NULL;
	Perfetto__Protos__InitializeConnectionResponse *resp = NULL;
	int rc = transcript_load(&t, "wif-producer.frames.hex");
	CHECK(rc >= 0);
	if (rc)
		return;
	fr = frame_unpack(&t, 2);
	CHECK(fr);
	CHECK_EQ(fr->msg_case, PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD);
	CHECK_EQ(fr->msg_invoke_method->service_id, 1);
	CHECK_EQ(fr->msg_invoke_method->method_id, 1); /* InitializeConnection */
	req = perfetto__protos__initialize_connection_request__unpack(
	    &pb_alloc, fr->msg_invoke_method->args_proto.len,
	    fr->msg_invoke_method->args_proto.data);
	CHECK(req);
	CHECK_STR_EQ(req->producer_name, "perfetto.traced_probes");
	CHECK(req->has_shared_memory_page_size_hint_bytes);
	CHECK_EQ(req->shared_memory_page_size_hint_bytes, 32768);
	CHECK_EQ(req->shared_memory_size_hint_bytes, 2097152);
	CHECK(req->has_smb_scraping_mode);
	CHECK_EQ(
	    req->smb_scraping_mode,
	    PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__PRODUCER_SMBSCRAPING_MODE__SMB_SCRAPING_DISABLED);
	CHECK_STR_EQ(req->sdk_version, "Perfetto v58.2 (N/A)");
	free_msg(fr);
	fr = frame_unpack(&t, 4); /* its reply */
	CHECK(fr);
	CHECK_EQ(fr->request_id, 2);
	CHECK_EQ(fr->msg_case, PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY);
	CHECK(fr->msg_invoke_method_reply->success);
	resp = perfetto__protos__initialize_connection_response__unpack(
	    &pb_alloc, fr->msg_invoke_method_reply->reply_proto.len,
	    fr->msg_invoke_method_reply->reply_proto.data);
	CHECK(resp);
	CHECK(resp->has_direct_smb_patching_supported && resp->direct_smb_patching_supported);
	CHECK(!resp->using_shmem_provided_by_producer);
	free_msg(resp);
	free_msg(req);
	free_msg(fr);
	transcript_release(&t);
}

TEST(protos_ipc_enable_tracing_config)
{
	struct transcript t;
	Perfetto__Protos__IPCFrame *fr = NULL;
	Perfetto__Protos__EnableTracingRequest *req = NULL;
	int rc = transcript_load(&t, "wif-consumer.frames.hex");
	CHECK(rc >= 0);
	if (rc)
		return;
	CHECK_EQ(t.n, 4);
	CHECK_EQ(t.fd[2], 1); /* the output file travels with EnableTracing */
	fr = frame_unpack(&t, 2);
	CHECK(fr);
	CHECK_EQ(fr->msg_invoke_method->method_id, 1); /* EnableTracing */
	req = perfetto__protos__enable_tracing_request__unpack(
	    &pb_alloc, fr->msg_invoke_method->args_proto.len,
	    fr->msg_invoke_method->args_proto.data);
	CHECK(req && req->trace_config);
	Perfetto__Protos__TraceConfig *tc = req->trace_config;
	CHECK_EQ(tc->n_buffers, 1);
	CHECK_EQ(tc->buffers[0]->size_kb, 4096);
	CHECK_EQ(tc->buffers[0]->fill_policy,
	         PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__RING_BUFFER);
	CHECK_EQ(tc->n_data_sources, 2);
	Perfetto__Protos__DataSourceConfig *ds0 = tc->data_sources[0]->config;
	CHECK_STR_EQ(ds0->name, "linux.ftrace");
	CHECK(ds0->ftrace_config);
	CHECK_EQ(ds0->ftrace_config->n_ftrace_events, 1);
	CHECK_STR_EQ(ds0->ftrace_config->ftrace_events[0], "sched/sched_switch");
	Perfetto__Protos__DataSourceConfig *ds1 = tc->data_sources[1]->config;
	CHECK_STR_EQ(ds1->name, "linux.process_stats");
	CHECK(ds1->process_stats_config);
	CHECK(ds1->process_stats_config->scan_all_processes_on_start);
	CHECK_EQ(tc->duration_ms, 1000);
	CHECK(tc->has_write_into_file && tc->write_into_file);
	CHECK(tc->has_trace_uuid_msb); /* perfetto_cmd still fills these */
	free_msg(req);
	req = NULL;
	free_msg(fr);
	fr = frame_unpack(&t, 3); /* deferred reply: session over */
	CHECK(fr);
	CHECK_EQ(fr->request_id, 2);
	Perfetto__Protos__EnableTracingResponse *resp =
	    perfetto__protos__enable_tracing_response__unpack(
	        &pb_alloc, fr->msg_invoke_method_reply->reply_proto.len,
	        fr->msg_invoke_method_reply->reply_proto.data);
	CHECK(resp);
	CHECK_EQ(resp->state_case, PERFETTO__PROTOS__ENABLE_TRACING_RESPONSE__STATE_DISABLED);
	CHECK(resp->disabled);
	free_msg(resp);
	free_msg(fr);
	transcript_release(&t);
}

/* Every frame of every transcript decodes; producer commands and
 * CommitData decode with their request/response types; ReadBuffers slices
 * reassemble into TracePackets. */
static int walk_transcript(const char *name, size_t *n_packets, size_t *n_cmds)
{
	struct transcript t;
	Perfetto__Protos__IPCFrame *fr = NULL;
	uint8_t *pkt = NULL;
	size_t pkt_len = 0;
	int rc = transcript_load(&t, name), ret = -1;
	if (rc)
		return rc > 0 ? 1 : -1;
	for (size_t i = 0; i < t.n; i++) {
		fr = frame_unpack(&t, i);
		if (!fr) {
			fprintf(stderr, "  %s frame %zu does not decode\n", name, i);
			goto out;
		}
		if (fr->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY &&
		    strstr(name, "producer") && fr->request_id == 3) {
			/* request 3 is the producer's GetAsyncCommand */
			Perfetto__Protos__GetAsyncCommandResponse *c =
			    perfetto__protos__get_async_command_response__unpack(
			        &pb_alloc, fr->msg_invoke_method_reply->reply_proto.len,
			        fr->msg_invoke_method_reply->reply_proto.data);
			if (!c ||
			    c->cmd_case ==
			        PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD__NOT_SET ||
			    !fr->msg_invoke_method_reply->has_more) {
				fprintf(stderr, "  %s frame %zu: bad async command\n", name, i);
				free_msg(c);
				goto out;
			}
			if (c->cmd_case ==
			        PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING &&
			    (c->setup_tracing->shared_buffer_page_size_kb != 32 || t.fd[i] != 1)) {
				free_msg(c);
				goto out;
			}
			if (c->cmd_case ==
			        PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE &&
			    (!c->start_data_source->config ||
			     !c->start_data_source->config->name)) {
				free_msg(c);
				goto out;
			}
			(*n_cmds)++;
			free_msg(c);
		}
		if (fr->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD &&
		    strstr(name, "producer") && fr->msg_invoke_method->method_id == 4) {
			Perfetto__Protos__CommitDataRequest *cd =
			    perfetto__protos__commit_data_request__unpack(
			        &pb_alloc, fr->msg_invoke_method->args_proto.len,
			        fr->msg_invoke_method->args_proto.data);
			if (!cd)
				goto out;
			free_msg(cd);
		}
		if (fr->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY &&
		    strstr(name, "consumer") && fr->request_id > 2) {
			Perfetto__Protos__ReadBuffersResponse *rb =
			    perfetto__protos__read_buffers_response__unpack(
			        &pb_alloc, fr->msg_invoke_method_reply->reply_proto.len,
			        fr->msg_invoke_method_reply->reply_proto.data);
			if (!rb)
				goto out;
			for (size_t s = 0; s < rb->n_slices; s++) {
				ProtobufCBinaryData *d = &rb->slices[s]->data;
				pkt = tb_realloc(pkt, pkt_len + d->len + 1);
				memcpy(pkt + pkt_len, d->data, d->len);
				pkt_len += d->len;
				if (!rb->slices[s]->last_slice_for_packet)
					continue;
				Perfetto__Protos__TracePacket *p =
				    perfetto__protos__trace_packet__unpack(&pb_alloc, pkt_len, pkt);
				if (!p) {
					free_msg(rb);
					goto out;
				}
				(*n_packets)++;
				free_msg(p);
				pkt_len = 0;
			}
			free_msg(rb);
		}
		free_msg(fr);
		fr = NULL;
	}
	ret = 0;
out:
	free_msg(fr);
	tb_free(pkt);
	transcript_release(&t);
	return ret;
}

static uint8_t *read_file(const char *path, size_t *len);

/* Packets in golden/ipc/<session>.trace.pftrace, decoded as a Trace. */
static long trace_packet_count(const char *session)
{
	char path[4096];
	size_t len = 0;
	long n = -1;
	snprintf(path, sizeof path, "%s/reference/golden/ipc/%s.trace.pftrace", test_shared_dir(),
	         session);
	uint8_t *bin = read_file(path, &len);
	if (!bin)
		return -1;
	Perfetto__Protos__Trace *tr = perfetto__protos__trace__unpack(&pb_alloc, len, bin);
	if (tr)
		n = (long)tr->n_packet;
	free_msg(tr);
	tb_free(bin);
	return n;
}

TEST(protos_ipc_all_frames_decode)
{
	static const char *const sessions[] = {"wif", "readbuffers", "readbuffers_large"};
	char name[64];
	for (size_t i = 0; i < TB_ARRAY_SIZE(sessions); i++) {
		size_t packets = 0, cmds = 0;
		snprintf(name, sizeof name, "%s-producer.frames.hex", sessions[i]);
		int rc = walk_transcript(name, &packets, &cmds);
		CHECK(rc >= 0);
		if (rc > 0)
			return;
		/* setup tracing + setup/start/stop for 2 DSs + flush(es) */
		CHECK(cmds >= 8);
		snprintf(name, sizeof name, "%s-consumer.frames.hex", sessions[i]);
		CHECK_EQ(walk_transcript(name, &packets, &cmds), 0);
		/* ReadBuffers slices reassemble into exactly the packets that
		 * perfetto wrote to the trace file (wif has no ReadBuffers). */
		if (i > 0)
			CHECK_EQ(packets, trace_packet_count(sessions[i]));
		else
			CHECK_EQ(packets, 0);
	}
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t cap = 0, n = 0, r;
	if (!f)
		return NULL;
	do {
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = tb_realloc(buf, cap);
		}
		r = fread(buf + n, 1, cap - n, f);
		n += r;
	} while (r > 0);
	fclose(f);
	*len = n;
	return buf;
}

TEST(protos_trace_config_from_protoc)
{
	size_t len = 0;
	uint8_t *bin = read_file(test_data_path("protos/trace_config.bin"), &len);
	CHECK(bin);
	Perfetto__Protos__TraceConfig *tc =
	    perfetto__protos__trace_config__unpack(&pb_alloc, len, bin);
	tb_free(bin);
	CHECK(tc);
	CHECK_EQ(tc->n_buffers, 2);
	CHECK_EQ(tc->buffers[1]->size_kb, 1024);
	CHECK_EQ(tc->buffers[1]->fill_policy,
	         PERFETTO__PROTOS__TRACE_CONFIG__BUFFER_CONFIG__FILL_POLICY__DISCARD);
	CHECK_EQ(tc->n_data_sources, 3);
	Perfetto__Protos__DataSourceConfig *ft = tc->data_sources[0]->config;
	CHECK_STR_EQ(ft->name, "linux.ftrace");
	CHECK(ft->has_target_buffer && ft->target_buffer == 0);
	CHECK_EQ(ft->ftrace_config->n_ftrace_events, 2);
	CHECK_STR_EQ(ft->ftrace_config->ftrace_events[1], "sched/sched_waking");
	CHECK_EQ(ft->ftrace_config->buffer_size_kb, 8192);
	CHECK(ft->ftrace_config->compact_sched && ft->ftrace_config->compact_sched->has_enabled);
	Perfetto__Protos__DataSourceConfig *ss = tc->data_sources[1]->config;
	CHECK_EQ(ss->target_buffer, 1);
	CHECK_EQ(ss->sys_stats_config->n_meminfo_counters, 2);
	CHECK_EQ(ss->sys_stats_config->meminfo_counters[0],
	         PERFETTO__PROTOS__MEMINFO_COUNTERS__MEMINFO_MEM_TOTAL);
	CHECK_EQ(ss->sys_stats_config->meminfo_counters[1], 5); /* MEMINFO_CACHED */
	CHECK_EQ(ss->sys_stats_config->stat_counters[0],
	         PERFETTO__PROTOS__SYS_STATS_CONFIG__STAT_COUNTERS__STAT_CPU_TIMES);
	CHECK_EQ(tc->data_sources[1]->n_producer_name_filter, 1);
	CHECK_STR_EQ(tc->data_sources[1]->producer_name_filter[0], "perfetto.traced_probes");
	Perfetto__Protos__PerfEventConfig *pe = tc->data_sources[2]->config->perf_event_config;
	CHECK(pe && pe->timebase);
	CHECK_EQ(pe->timebase->interval_case,
	         PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__INTERVAL_FREQUENCY);
	CHECK_EQ(pe->timebase->frequency, 100);
	CHECK_EQ(pe->timebase->event_case, PERFETTO__PROTOS__PERF_EVENTS__TIMEBASE__EVENT_COUNTER);
	CHECK_EQ(pe->timebase->counter, PERFETTO__PROTOS__PERF_EVENTS__COUNTER__SW_CPU_CLOCK);
	CHECK_EQ(pe->timebase->timestamp_clock,
	         PERFETTO__PROTOS__PERF_EVENTS__PERF_CLOCK__PERF_CLOCK_MONOTONIC_RAW);
	CHECK_EQ(pe->callstack_sampling->user_frames,
	         PERFETTO__PROTOS__PERF_EVENT_CONFIG__UNWIND_MODE__UNWIND_DWARF);
	CHECK(pe->callstack_sampling->kernel_frames);
	CHECK_EQ(tc->duration_ms, 10000);
	CHECK(tc->write_into_file);
	CHECK_EQ(tc->file_write_period_ms, 2500);
	CHECK_UEQ(tc->max_file_size_bytes, 104857600ull);
	CHECK_EQ(tc->flush_period_ms, 30000);
	CHECK_STR_EQ(tc->unique_session_name, "tb-test");
	CHECK_EQ(tc->trace_uuid_msb, -1234567890123ll);
	CHECK_EQ(tc->trace_uuid_lsb, 42);
	CHECK_EQ(tc->builtin_data_sources->primary_trace_clock,
	         PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_MONOTONIC);
	CHECK_EQ(tc->builtin_data_sources->snapshot_interval_ms, 5000);
	CHECK_EQ(tc->incremental_state_config->clear_period_ms, 2000);
	CHECK(tc->compression && tc->compression->zstd && !tc->compression->deflate);
	CHECK_EQ(tc->compression->zstd->level, 3);
	/* Re-encoding gives back protoc's bytes (same field order). */
	size_t n = protobuf_c_message_get_packed_size(&tc->base);
	CHECK_EQ(n, len);
	free_msg(tc);
}

/* The trace file that traced wrote through the passed fd, read as a Trace:
 * the service packets must decode with the expected fields. */
TEST(protos_trace_file_service_packets)
{
	const char *shared = test_shared_dir();
	char path[4096];
	size_t len = 0;
	if (!shared)
		TEST_SKIP("../shared not found");
	snprintf(path, sizeof path, "%s/reference/golden/ipc/wif.trace.pftrace", shared);
	uint8_t *bin = read_file(path, &len);
	CHECK(bin);
	Perfetto__Protos__Trace *tr = perfetto__protos__trace__unpack(&pb_alloc, len, bin);
	tb_free(bin);
	CHECK(tr);
	int seen_clock = 0, seen_cfg = 0, seen_sysinfo = 0, seen_uuid = 0, seen_tree = 0;
	for (size_t i = 0; i < tr->n_packet; i++) {
		Perfetto__Protos__TracePacket *p = tr->packet[i];
		switch (p->data_case) {
		case PERFETTO__PROTOS__TRACE_PACKET__DATA_CLOCK_SNAPSHOT:
			if (!seen_clock++) {
				CHECK(p->clock_snapshot->n_clocks >= 6);
				CHECK_EQ(p->clock_snapshot->clocks[0]->clock_id,
				         PERFETTO__PROTOS__BUILTIN_CLOCK__BUILTIN_CLOCK_BOOTTIME);
				CHECK_EQ(p->trusted_packet_sequence_id, 1);
			}
			break;
		case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_CONFIG:
			seen_cfg++;
			CHECK_EQ(p->trace_config->duration_ms, 1000);
			break;
		case PERFETTO__PROTOS__TRACE_PACKET__DATA_SYSTEM_INFO:
			seen_sysinfo++;
			CHECK(p->system_info->utsname);
			CHECK_STR_EQ(p->system_info->utsname->sysname, "Linux");
			CHECK_STR_EQ(p->system_info->tracing_service_version,
			             "Perfetto v58.2 (N/A)");
			break;
		case PERFETTO__PROTOS__TRACE_PACKET__DATA_TRACE_UUID:
			seen_uuid++;
			CHECK(p->trace_uuid->msb != 0 || p->trace_uuid->lsb != 0);
			break;
		case PERFETTO__PROTOS__TRACE_PACKET__DATA_PROCESS_TREE:
			seen_tree++;
			CHECK(p->process_tree->n_processes > 0);
			CHECK(p->trusted_packet_sequence_id > 1);
			break;
		default:
			break;
		}
	}
	CHECK(seen_clock && seen_cfg == 1 && seen_sysinfo == 1 && seen_uuid == 1 && seen_tree);
	free_msg(tr);
}

/* Encoding matches the hand-computed BindService frame of the compat doc. */
TEST(protos_ipc_bind_service_encode)
{
	static const uint8_t want[] = {0x10, 0x01, 0x1a, 0x0e, 0x0a, 0x0c, 'P', 'r', 'o',
	                               'd',  'u',  'c',  'e',  'r',  'P',  'o', 'r', 't'};
	Perfetto__Protos__IPCFrame fr = PERFETTO__PROTOS__IPCFRAME__INIT;
	Perfetto__Protos__IPCFrame__BindService bs = PERFETTO__PROTOS__IPCFRAME__BIND_SERVICE__INIT;
	uint8_t out[64];
	bs.service_name = (char *)"ProducerPort";
	fr.has_request_id = 1;
	fr.request_id = 1;
	fr.msg_case = PERFETTO__PROTOS__IPCFRAME__MSG_MSG_BIND_SERVICE;
	fr.msg_bind_service = &bs;
	CHECK_EQ(perfetto__protos__ipcframe__get_packed_size(&fr), sizeof want);
	CHECK_EQ(perfetto__protos__ipcframe__pack(&fr, out), sizeof want);
	CHECK_MEM_EQ(out, want, sizeof want);
}
