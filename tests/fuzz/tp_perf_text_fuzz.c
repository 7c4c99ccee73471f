/*
 * Fuzz target for the perf script text importer: the input is fed to a
 * fresh trace processor in three chunks at positions derived from its first
 * and last bytes (so chunk boundaries land inside lines), then the trace is
 * finished and freed. Inputs that do not sniff as perf script text get a
 * valid header line in front, so every input reaches the line parser.
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/tp_perf_text/ in every CI build.
 */
#include <stdint.h>
#include <string.h>

#include "tp_int.h"
#include "importers/importer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char prefix[] = "fuzz 1/1 [000] 1.000000: 1 cycles:\n"
	                             "\t1 f (/bin/fuzz)\n";
	size_t cut1 = 0, cut2 = 0;
	if (size > 2) {
		cut1 = (data[0] | (size_t)data[1] << 8) % size;
		cut2 = cut1 + (data[size - 1] * 131u) % (size - cut1 + 1);
	}
	struct tp *tp = tp_new(NULL);
	if (!tp_perf_text_importer.sniff(data, size))
		tp_parse(tp, (const uint8_t *)prefix, sizeof(prefix) - 1);
	if (tp_parse(tp, data, cut1) == 0 && tp_parse(tp, data + cut1, cut2 - cut1) == 0)
		tp_parse(tp, data + cut2, size - cut2);
	tp_end_of_file(tp);
	tp_free(tp);
	return 0;
}
