/*
 * Fuzz target for the recorder's trace scan (components/perfetto_cmd/
 * health.c): the status line's sample counts come from reading the trace
 * file back, so any bytes must be read without a crash or an overread.
 * The input is scanned from memory and, through a temporary file, by the
 * block reader that handles packets split across reads.
 *
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/perfetto_cmd_counts/ in every CI build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base.h"
#include "perfetto_cmd_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfetto_cmd_trace_counts c;
	struct tb_err err = {0};
	char path[64];
	perfetto_cmd_trace_counts_mem(data, size, &c);
	snprintf(path, sizeof path, "/tmp/tb-counts-fuzz-%d", (int)getpid());
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(data, 1, size, f);
		fclose(f);
		perfetto_cmd_trace_counts(path, &c, &err);
		unlink(path);
	}
	return 0;
}
