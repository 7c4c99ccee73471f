/*
 * Fuzz target for the trace-cmd trace.dat importer
 * (importers/trace_dat/): the input goes through the importer's ops in two
 * chunks split at a position derived from its last byte, whatever the
 * sniffer would say, then the end of file parses and merges everything
 * and all is freed. Built with -fsanitize=fuzzer for campaigns, or linked
 * with replay.c to re-run tests/fuzz/corpus/tp_trace_dat/ in every CI
 * build (the seeds are small v6 / v7, zstd and uncompressed recordings cut
 * down by tests/tools/trace_dat_shrink.py).
 */
#include <stdint.h>
#include <string.h>

#include "importers/importer.h"
#include "tp_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut = size > 1 ? (data[size - 1] * 257u) % size : 0;
	struct tp *tp = tp_new(NULL);
	struct tp_importer *imp = tp_trace_dat_importer.create(tp);
	if (tp_trace_dat_importer.parse(imp, data, cut) == 0 &&
	    tp_trace_dat_importer.parse(imp, data + cut, size - cut) == 0)
		tp_trace_dat_importer.eof(imp);
	tp_trace_dat_importer.destroy(imp);
	tp_free(tp);
	return 0;
}
