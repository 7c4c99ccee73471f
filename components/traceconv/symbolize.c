/*
 * symbolize: Perfetto's `traceconv symbolize TRACE [OUT]`. Loads the trace,
 * resolves its unsymbolized frames against ELF files on this machine
 * (trace_processor's symbolizer: the mapped files themselves,
 * /usr/lib/debug/.build-id, .gnu_debuglink, and the PERFETTO_BINARY_PATH
 * roots searched as PERFETTO_SYMBOLIZER_MODE says) and writes only the
 * resulting ModuleSymbols packets, to be appended to the trace:
 *
 *   traceconv symbolize trace.pftrace symbols && cat trace.pftrace symbols > sym.pftrace
 *
 * Frames that could not be resolved are summed up on stderr, as Perfetto
 * does; they are not an error.
 */
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "trace_processor.h"
#include "traceconv_int.h"

#define SYMBOLIZE_CHUNK (1u << 20)

int traceconv_symbolize(int in_fd, const char *in_name, FILE *out)
{
	struct tp *tp = tp_new(NULL);
	uint8_t *buf = tb_malloc(SYMBOLIZE_CHUNK);
	struct tp_symbolize_result res = {0};
	const char *mode = getenv("PERFETTO_SYMBOLIZER_MODE");
	struct tp_symbolize_opts o = {
	    .binary_path = getenv("PERFETTO_BINARY_PATH"),
	    .find_mode = mode && strcmp(mode, "find") == 0,
	};
	const char *what = "load";
	int rc = -1;
	ssize_t n;

	while ((n = tb_read_all(in_fd, buf, SYMBOLIZE_CHUNK)) > 0)
		if (tp_parse(tp, buf, (size_t)n) < 0)
			goto fail;
	if (n < 0) {
		fprintf(stderr, "traceconv: cannot read '%s': %s\n", in_name, strerror((int)-n));
		goto out;
	}
	if (tp_end_of_file(tp) < 0)
		goto fail;
	what = "symbolize";
	if (strcmp(tp_trace_type(tp), "proto") != 0) {
		fprintf(stderr,
		        "traceconv: cannot symbolize '%s': symbols can only be appended to a "
		        "Perfetto protobuf trace (this one is %s)\n",
		        in_name, tp_trace_type(tp));
		goto out;
	}
	if (tp_symbolize(tp, &o, &res) < 0) {
		fprintf(stderr, "traceconv: cannot symbolize '%s': too many symbols\n", in_name);
		goto out;
	}
	if (res.len && fwrite(res.packets, 1, res.len, out) != res.len)
		goto out;
	if (res.frames_failed)
		fprintf(stderr,
		        "traceconv: %u frames from %u mappings could not be symbolized (no file "
		        "with a matching build id and symbols on this machine; set "
		        "PERFETTO_BINARY_PATH to directories holding the unstripped binaries)\n",
		        res.frames_failed, res.mappings_failed);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "traceconv: cannot %s '%s': %s\n", what, in_name, tp_error(tp));
out:
	tp_symbolize_result_release(&res);
	tb_free(buf);
	tp_free(tp);
	return rc;
}
