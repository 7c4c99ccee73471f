/*
 * `trace_processor_shell server stdio` (classic `--stdiod`): the RPC stream
 * of rpc.c on stdin (requests) and stdout (responses), for tools that run
 * the trace processor as a child process. Serves until stdin ends.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rpc.h"

#define STDIO_CHUNK ((size_t)64 << 10)

struct stdio_out {
	int error; /* first write error, -errno */
};

static void stdout_send(void *ctx, const uint8_t *p, size_t n)
{
	struct stdio_out *o = ctx;
	if (!p || o->error)
		return;
	int rc = tb_write_all(1, p, n);
	if (rc < 0)
		o->error = rc;
}

int tp_stdiod_run(struct tp_rpc *rpc)
{
	struct stdio_out o = {0};
	uint8_t *buf = tb_malloc(STDIO_CHUNK);
	int status = 0;
	for (;;) {
		ssize_t n = read(0, buf, STDIO_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "trace_processor_shell: cannot read stdin: %s\n",
			        strerror(errno));
			status = 1;
			break;
		}
		if (n == 0)
			break;
		if (tp_rpc_feed(rpc, buf, (size_t)n, stdout_send, &o) < 0) {
			fprintf(stderr, "trace_processor_shell: fatal RPC error: stopping\n");
			status = 1;
			break;
		}
		if (o.error) {
			fprintf(stderr, "trace_processor_shell: cannot write stdout: %s\n",
			        strerror(-o.error));
			status = 1;
			break;
		}
	}
	tb_free(buf);
	return status;
}
