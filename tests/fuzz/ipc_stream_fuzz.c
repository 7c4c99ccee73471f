/*
 * Fuzz target for the IPC stream: the input is a raw byte stream as a peer
 * would write it on the socket. It goes, over a real socketpair and the
 * event loop, into an ipc_host that exposes a ProducerPort-shaped service
 * (12 methods that reply, stream, fail, hold or drop), and, on a second
 * socketpair, into an ipc_client that has a BindService pending, so both
 * dispatch paths see arbitrary framing, oversized lengths and undecodable
 * frames. Everything is torn down per input; leaks show up under ASan.
 * Corpus: tests/fuzz/corpus/ipc_stream/ (golden transcripts, per direction).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base.h"
#include "ipc.h"

#define FZ_MAX_HELD 64

struct fz {
	struct ipc_call *held[FZ_MAX_HELD];
	int nheld;
};

static void m_reply(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	(void)ctx;
	ipc_call_reply(call, a, n, false, -1);
}

static void m_stream(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	int count = n ? a[0] % 5 : 0;
	(void)ctx;
	for (int i = 0; i < count; i++)
		ipc_call_reply(call, a, n, true, -1);
	ipc_call_reply(call, NULL, 0, false, -1);
}

static void m_fail(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	(void)ctx;
	(void)a;
	(void)n;
	ipc_call_fail(call);
}

static void m_drop(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	(void)ctx;
	(void)a;
	(void)n;
	int fd = ipc_call_take_fd(call);
	if (fd >= 0)
		close(fd);
	ipc_call_drop(call);
}

static void m_hold(void *ctx, struct ipc_call *call, const uint8_t *a, size_t n)
{
	struct fz *z = ctx;
	(void)a;
	(void)n;
	ipc_call_reply(call, "cmd", 3, true, -1);
	if (z->nheld < FZ_MAX_HELD)
		z->held[z->nheld++] = call;
	else
		ipc_call_drop(call);
}

static const struct ipc_method methods[] = {
    {"InitializeConnection", m_reply},
    {"RegisterDataSource", m_reply},
    {"UnregisterDataSource", m_fail},
    {"CommitData", m_drop},
    {"GetAsyncCommand", m_hold},
    {"RegisterTraceWriter", m_stream},
    {"UnregisterTraceWriter", m_reply},
    {"NotifyDataSourceStarted", m_reply},
    {"NotifyDataSourceStopped", m_reply},
    {"ActivateTriggers", m_reply},
    {"Sync", m_reply},
    {"UpdateDataSource", m_reply},
};
static const struct ipc_service_desc service = {"ProducerPort", methods, 12};

static void on_bind(void *ctx, struct ipc_svc *svc, bool ok)
{
	(void)ctx;
	(void)svc;
	(void)ok;
}

/* Write data to fd while running the loop and discarding what comes back
 * on fd, then close the write side and let the peer see EOF. */
static void pump(struct loop *l, int fd, const uint8_t *data, size_t size)
{
	char sink[8192];
	size_t pos = 0;
	for (int i = 0; i < 10000; i++) {
		if (pos < size) {
			ssize_t w = send(fd, data + pos, size - pos > 4096 ? 4096 : size - pos,
			                 MSG_DONTWAIT | MSG_NOSIGNAL);
			if (w > 0)
				pos += (size_t)w;
			else if (w < 0 && errno != EAGAIN)
				pos = size; /* peer gone */
			if (pos == size)
				shutdown(fd, SHUT_WR);
		}
		loop_run_once(l, 0);
		ssize_t r = recv(fd, sink, sizeof sink, MSG_DONTWAIT);
		if (r == 0 && pos == size)
			return; /* peer closed and everything was written */
		if (r < 0 && errno != EAGAIN && pos == size)
			return;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tb_err err = {0};
	struct fz z = {{0}, 0};
	struct loop *l = loop_new(&err);
	int hs[2] = {-1, -1}, cs[2] = {-1, -1};
	if (!l)
		return 0;

	/* The receive buffer alone, in odd chunks. */
	struct ipc_rxbuf rb;
	ipc_rxbuf_init(&rb);
	for (size_t pos = 0; pos < size;) {
		size_t want = 1 + (pos % 13);
		size_t k = ipc_rxbuf_write(&rb, data + pos, want < size - pos ? want : size - pos);
		pos += k;
		const uint8_t *p;
		size_t n;
		int r;
		while ((r = ipc_rxbuf_next(&rb, &p, &n)) == 1)
			ipc_frame_free(ipc_frame_decode(p, n));
		if (r < 0)
			break;
	}
	ipc_rxbuf_release(&rb);

	/* The host. */
	struct ipc_host *h = ipc_host_new(l, NULL, NULL);
	ipc_host_add_service(h, &service, &z);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, hs) == 0) {
		ipc_host_adopt_fd(h, hs[0]);
		pump(l, hs[1], data, size);
		close(hs[1]);
		loop_run_once(l, 0);
	}

	/* The client, with request 1 = BindService pending. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cs) == 0) {
		struct ipc_client *c = ipc_client_adopt_fd(l, cs[0], NULL, NULL, &err);
		if (c) {
			ipc_client_bind(c, "ProducerPort", on_bind, NULL);
			pump(l, cs[1], data, size);
			int fd = ipc_client_take_fd(c);
			if (fd >= 0)
				close(fd);
			ipc_client_free(c);
		}
		close(cs[1]);
	}

	for (int i = 0; i < z.nheld; i++) {
		ipc_call_reply(z.held[i], "late", 4, true, -1);
		ipc_call_drop(z.held[i]);
	}
	ipc_host_free(h);
	loop_free(l);
	return 0;
}
