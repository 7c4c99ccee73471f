/*
 * Fuzz target for the collapsed stacks (flamegraph.pl input) importer (importers/): the input is
 * fed to the importer of a fresh trace processor directly (no sniffing, so every input reaches it)
 * in three chunks at positions derived from its first and last bytes, then the trace is finished
 * and freed. Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to re-run
 * tests/fuzz/corpus/tp_collapsed_stack/ in every CI build.
 */
#include <stdint.h>
#include <string.h>

#include "importers/importer.h"
#include "tp_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct tp_importer_ops *ops = &tp_collapsed_stack_importer;
	size_t cut1 = 0, cut2 = 0;
	if (size > 2) {
		cut1 = (data[0] | (size_t)data[1] << 8) % size;
		cut2 = cut1 + (data[size - 1] * 131u) % (size - cut1 + 1);
	}
	struct tp *tp = tp_new(NULL);
	struct tp_importer *imp = ops->create(tp);
	if (ops->parse(imp, data, cut1) == 0 && ops->parse(imp, data + cut1, cut2 - cut1) == 0 &&
	    ops->parse(imp, data + cut2, size - cut2) == 0)
		ops->eof(imp);
	ops->destroy(imp);
	tp_free(tp);
	return 0;
}
