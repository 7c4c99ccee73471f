/*
 * Fuzz target for the perf.data importer: the input is fed to a fresh
 * trace processor in two chunks at a position derived from its first
 * bytes, then the trace is finished and freed. An input that does not
 * start with perf's magic gets a pipe-mode header in front, so its bytes
 * are read as a stream of records. Built with -fsanitize=fuzzer for
 * campaigns, or linked with replay.c to re-run
 * tests/fuzz/corpus/tp_perf_data/ in every CI build.
 */
#include <stdint.h>
#include <string.h>

#include "tp_int.h"
#include "importers/importer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t pipe_header[16] = {'P', 'E', 'R', 'F', 'I', 'L', 'E', '2', 16};
	size_t cut = 0;
	if (size > 2)
		cut = (data[0] | (size_t)data[1] << 8) % size;
	struct tp *tp = tp_new(NULL);
	if (!tp_perf_data_importer.sniff(data, size))
		tp_parse(tp, pipe_header, sizeof pipe_header);
	if (tp_parse(tp, data, cut) == 0)
		tp_parse(tp, data + cut, size - cut);
	tp_end_of_file(tp);
	tp_free(tp);
	return 0;
}
