/*
 * rel_producer: a hand-driven producer for the reliability tests
 * (tests/rel), built into out/tools/. It speaks ProducerPort through the ipc
 * client directly, without the producer library, so it can do what no
 * well-behaved producer does:
 *
 *   rel_producer --chunks N --order forward|reverse|zigzag
 *       register "rel.ds"; once the service starts it, fill N chunk slots
 *       of the SMB (4 KiB pages cut in 14) with one small packet each,
 *       chunk_id in the given order (zigzag: 0, N-1, 1, N-2, ...: every
 *       commit lands in the middle of what is there), CommitData them in
 *       frames of up to 4096 moves, wait for the service in between (Sync)
 *       so the SMB never fills, print `committed=N` and exit 0.
 *   rel_producer --sources N
 *       register N data sources with 100-byte names, Sync, print
 *       `registered=N`, then stay connected until killed (QueryServiceState
 *       grows past one IPC frame).
 *
 * The socket is PERFETTO_PRODUCER_SOCK_NAME, as for every producer.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base.h"
#include "ipc.h"
#include "pb.h"
#include "protos.h"
#include "tracing.h"

#define SMB_BYTES (32u << 20)
#define PAGE_BYTES 4096u
#define MOVES_PER_FRAME 4096u

enum order { FORWARD, REVERSE, ZIGZAG };

struct rp {
	struct loop *l;
	struct ipc_client *c;
	struct ipc_svc *svc;
	bool bound, bind_failed, started, synced, lost;
	struct tracing_smb *smb;
	uint32_t target_buffer;
};

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	struct rp *p = ctx;
	p->bound = ok;
	p->bind_failed = !ok;
}

static void on_async(void *ctx, const struct ipc_reply *r)
{
	struct rp *p = ctx;
	Perfetto__Protos__GetAsyncCommandResponse *cmd;
	if (!r->success) {
		p->lost = true;
		return;
	}
	cmd = perfetto__protos__get_async_command_response__unpack(protos_allocator(), r->len,
	                                                           r->data);
	if (!cmd)
		return;
	if (cmd->cmd_case == PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_SETUP_TRACING) {
		int fd = ipc_client_take_fd(p->c);
		if (fd >= 0 &&
		    tracing_smb_adopt(fd, cmd->setup_tracing->shared_buffer_page_size_kb * 1024,
		                      true, &p->smb, NULL))
			close(fd);
	} else if (cmd->cmd_case ==
	           PERFETTO__PROTOS__GET_ASYNC_COMMAND_RESPONSE__CMD_START_DATA_SOURCE) {
		p->target_buffer = cmd->start_data_source->config->target_buffer;
		p->started = true;
	}
	protobuf_c_message_free_unpacked(&cmd->base, protos_allocator());
}

static void on_sync(void *ctx, const struct ipc_reply *r)
{
	struct rp *p = ctx;
	p->synced = true;
	p->lost |= !r->success;
}

static void on_disconnect(void *ctx, struct ipc_client *c)
{
	((struct rp *)ctx)->lost = true;
}

/* Run the loop until *flag or the connection is lost (30 s at most). */
static bool pump(struct rp *p, bool *flag)
{
	for (int i = 0; i < 3000 && !*flag && !p->lost; i++)
		loop_run_once(p->l, 10);
	return *flag && !p->lost;
}

static bool sync_service(struct rp *p)
{
	p->synced = false;
	if (ipc_client_invoke(p->c, p->svc, "Sync", NULL, 0, -1, false, on_sync, p) < 0)
		return false;
	return pump(p, &p->synced);
}

static void register_source(struct rp *p, const char *name)
{
	Perfetto__Protos__RegisterDataSourceRequest req =
	    PERFETTO__PROTOS__REGISTER_DATA_SOURCE_REQUEST__INIT;
	Perfetto__Protos__DataSourceDescriptor d = PERFETTO__PROTOS__DATA_SOURCE_DESCRIPTOR__INIT;
	uint8_t buf[512];
	size_t n;
	d.name = (char *)name;
	req.data_source_descriptor = &d;
	n = perfetto__protos__register_data_source_request__pack(&req, buf);
	ipc_client_invoke(p->c, p->svc, "RegisterDataSource", buf, n, -1, false, NULL, NULL);
}

static uint32_t chunk_id_at(enum order o, uint32_t i, uint32_t n)
{
	switch (o) {
	case FORWARD:
		return i;
	case REVERSE:
		return n - 1 - i;
	case ZIGZAG:
		return i % 2 ? n - 1 - i / 2 : i / 2;
	}
	return i;
}

/* Slot k of the SMB: page k / 14, chunk k % 14, one packet {timestamp: id}. */
static int write_chunk(struct rp *p, uint32_t k, uint32_t chunk_id)
{
	struct tracing_chunk_header h = {.chunk_id = chunk_id, .writer_id = 1, .packet_count = 1};
	struct tracing_chunk ch;
	uint32_t page = k / TRACING_MAX_CHUNKS_PER_PAGE, idx = k % TRACING_MAX_CHUNKS_PER_PAGE;
	uint8_t pkt[16], *q;
	size_t n;
	if (idx == 0 && tracing_page_partition(p->smb, page, TRACING_LAYOUT_DIV14) != 0)
		return -1;
	if (tracing_chunk_acquire_for_writing(p->smb, page, idx, &h, &ch) != 0)
		return -1;
	q = pkt;
	*q++ = 8 << 3; /* timestamp */
	q = pb_encode_varint(q, (uint64_t)chunk_id + 1);
	n = (size_t)(q - pkt);
	q = tracing_chunk_payload(&ch);
	/* The fragment size as a 4-byte redundant varint, then the packet. */
	q[0] = (uint8_t)(n | 0x80);
	q[1] = 0x80;
	q[2] = 0x80;
	q[3] = 0;
	memcpy(q + 4, pkt, n);
	return tracing_chunk_complete(p->smb, page, idx);
}

static int commit_range(struct rp *p, uint32_t from, uint32_t to)
{
	Perfetto__Protos__CommitDataRequest req = PERFETTO__PROTOS__COMMIT_DATA_REQUEST__INIT;
	Perfetto__Protos__CommitDataRequest__ChunksToMove *moves, **ptrs;
	uint32_t n = to - from;
	size_t len;
	uint8_t *buf;
	int64_t rc;
	moves = tb_calloc(n, sizeof *moves);
	ptrs = tb_calloc(n, sizeof *ptrs);
	for (uint32_t i = 0; i < n; i++) {
		Perfetto__Protos__CommitDataRequest__ChunksToMove m =
		    PERFETTO__PROTOS__COMMIT_DATA_REQUEST__CHUNKS_TO_MOVE__INIT;
		uint32_t k = from + i;
		m.has_page = m.has_chunk = m.has_target_buffer = true;
		m.page = k / TRACING_MAX_CHUNKS_PER_PAGE;
		m.chunk = k % TRACING_MAX_CHUNKS_PER_PAGE;
		m.target_buffer = p->target_buffer;
		moves[i] = m;
		ptrs[i] = &moves[i];
	}
	req.n_chunks_to_move = n;
	req.chunks_to_move = ptrs;
	len = perfetto__protos__commit_data_request__get_packed_size(&req);
	buf = tb_malloc(len);
	perfetto__protos__commit_data_request__pack(&req, buf);
	rc = ipc_client_invoke(p->c, p->svc, "CommitData", buf, len, -1, false, NULL, NULL);
	tb_free(buf);
	tb_free(moves);
	tb_free(ptrs);
	return rc < 0 ? -1 : 0;
}

static int run_chunks(struct rp *p, uint32_t n, enum order o)
{
	uint32_t slots;
	if (!pump(p, &p->started) || !p->smb) {
		fprintf(stderr, "rel_producer: the service never started rel.ds\n");
		return 1;
	}
	slots = (uint32_t)(tracing_smb_num_pages(p->smb) * TRACING_MAX_CHUNKS_PER_PAGE);
	/* Rounds of up to half the slots, so a round never reuses a slot the
	 * service has not released yet (each round ends with a Sync). */
	for (uint32_t done = 0; done < n;) {
		uint32_t round = n - done < slots / 2 ? n - done : slots / 2;
		for (uint32_t i = 0; i < round; i++)
			if (write_chunk(p, i, chunk_id_at(o, done + i, n))) {
				fprintf(stderr, "rel_producer: cannot write chunk slot %u\n", i);
				return 1;
			}
		for (uint32_t i = 0; i < round; i += MOVES_PER_FRAME)
			if (commit_range(p, i,
			                 i + MOVES_PER_FRAME < round ? i + MOVES_PER_FRAME : round))
				return 1;
		if (!sync_service(p)) {
			fprintf(stderr, "rel_producer: lost the service\n");
			return 1;
		}
		done += round;
	}
	printf("committed=%u\n", n);
	return 0;
}

static int run_sources(struct rp *p, uint32_t n)
{
	char name[128];
	for (uint32_t i = 0; i < n; i++) {
		snprintf(
		    name, sizeof name, "rel.source.%06u.%s", i,
		    "padding-padding-padding-padding-padding-padding-padding-padding-padding-pad");
		register_source(p, name);
		if (i % 256 == 255 && !sync_service(p))
			return 1;
	}
	if (!sync_service(p))
		return 1;
	printf("registered=%u\n", n);
	fflush(stdout);
	while (!p->lost)
		loop_run_once(p->l, 1000);
	return 0;
}

static uint32_t arg_u32(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*s == '\0' || *end || v > UINT32_MAX) {
		fprintf(stderr, "rel_producer: bad number '%s'\n", s);
		exit(2);
	}
	return (uint32_t)v;
}

int main(int argc, char **argv)
{
	struct rp p = {0};
	struct tb_err err = {0};
	struct ipc_client_ops ops = {.on_disconnect = on_disconnect};
	uint32_t chunks = 0, sources = 0;
	enum order o = FORWARD;
	Perfetto__Protos__InitializeConnectionRequest init =
	    PERFETTO__PROTOS__INITIALIZE_CONNECTION_REQUEST__INIT;
	uint8_t buf[128];
	size_t n;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--chunks") == 0) {
			chunks = arg_u32(argv[i + 1]);
		} else if (strcmp(argv[i], "--sources") == 0) {
			sources = arg_u32(argv[i + 1]);
		} else if (strcmp(argv[i], "--order") == 0) {
			if (strcmp(argv[i + 1], "reverse") == 0)
				o = REVERSE;
			else if (strcmp(argv[i + 1], "zigzag") == 0)
				o = ZIGZAG;
			else if (strcmp(argv[i + 1], "forward") != 0)
				goto usage;
		} else {
			goto usage;
		}
	}
	if (!chunks == !sources)
		goto usage;
	if (!(p.l = loop_new(&err)) ||
	    !(p.c = ipc_client_new(p.l, ipc_producer_socket_name(), &ops, &p, &err))) {
		fprintf(stderr, "rel_producer: %s\n", err.msg);
		return 1;
	}
	p.svc = ipc_client_bind(p.c, "ProducerPort", on_bind, &p);
	if (!p.svc || !pump(&p, &p.bound)) {
		fprintf(stderr, "rel_producer: cannot bind ProducerPort\n");
		return 1;
	}
	init.has_shared_memory_page_size_hint_bytes = init.has_shared_memory_size_hint_bytes = true;
	init.shared_memory_page_size_hint_bytes = PAGE_BYTES;
	init.shared_memory_size_hint_bytes = SMB_BYTES;
	init.producer_name = (char *)"rel_producer";
	n = perfetto__protos__initialize_connection_request__pack(&init, buf);
	ipc_client_invoke(p.c, p.svc, "InitializeConnection", buf, n, -1, false, NULL, NULL);
	ipc_client_invoke(p.c, p.svc, "GetAsyncCommand", NULL, 0, -1, false, on_async, &p);
	if (chunks) {
		register_source(&p, "rel.ds");
		return run_chunks(&p, chunks, o);
	}
	return run_sources(&p, sources);
usage:
	fprintf(stderr, "usage: rel_producer --chunks N [--order forward|reverse|zigzag]\n"
	                "       rel_producer --sources N\n");
	return 2;
}
