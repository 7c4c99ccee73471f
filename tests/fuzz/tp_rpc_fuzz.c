/*
 * Fuzz target for the RPC server's input parsers (components/trace_processor/
 * rpc/): the first byte picks one, the rest is its input.
 *   0  HTTP requests (http.c), pipelined: parsed one after another
 *   1  WebSocket client frames (ws.c), decoded one after another
 *   2  a TraceProcessorRpcStream (rpc.c framing and request decoding), fed
 *      in pieces whose size comes from the second byte, into one RPC over
 *      an empty trace processor
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/tp_rpc/ in every CI build.
 */
#include <stdint.h>
#include <string.h>

#include "rpc/rpc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tp_rpc *rpc;

static void sink(void *ctx, const uint8_t *p, size_t n)
{
	uint64_t *total = ctx;
	if (p && n)
		*total += p[0] + p[n - 1];
}

static void fuzz_http(const uint8_t *p, size_t n)
{
	struct tp_http_request req;
	const char *status;
	while (n > 0 && tp_http_parse_request(p, n, &req, &status) == 1) {
		if (req.size == 0 || req.size > n)
			__builtin_trap(); /* no progress, or past the input */
		size_t len = 0;
		const char *o = tp_http_header(&req, "origin", &len);
		if (o && len > n)
			__builtin_trap();
		p += req.size;
		n -= req.size;
	}
}

static void fuzz_ws(const uint8_t *data, size_t n)
{
	uint8_t *buf = tb_malloc(n ? n : 1); /* decoded in place: a copy */
	if (n)
		memcpy(buf, data, n);
	size_t off = 0;
	struct tp_ws_frame f;
	long rc;
	while (off < n && (rc = tp_ws_decode(buf + off, n - off, 1 << 20, &f)) > 0) {
		if ((size_t)rc > n - off || f.payload + f.len > buf + n)
			__builtin_trap();
		off += (size_t)rc;
	}
	tb_free(buf);
}

static void fuzz_rpc(const uint8_t *p, size_t n)
{
	uint64_t total = 0;
	size_t step = n ? (size_t)p[0] % 64 + 1 : 1;
	if (!rpc)
		rpc = tp_rpc_new(NULL, NULL, NULL);
	tp_rpc_reset_stream(rpc);
	while (n > 0) {
		size_t k = n < step ? n : step;
		if (tp_rpc_feed(rpc, p, k, sink, &total) < 0)
			break;
		p += k;
		n -= k;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	switch (data[0] % 3) {
	case 0:
		fuzz_http(data + 1, size - 1);
		break;
	case 1:
		fuzz_ws(data + 1, size - 1);
		break;
	default:
		fuzz_rpc(data + 1, size - 1);
	}
	return 0;
}
