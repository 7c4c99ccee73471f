/*
 * Fuzz target for the ftrace text importer (tracefs trace, trace-cmd report,
 * systrace text and HTML, the zlib "TRACE:" form): the input goes through
 * the parser API (importers/ftrace_text/ftrace_text.h), so every wrapper is
 * reached whatever the sniffer would say, in three chunks at positions
 * derived from its first and last bytes (chunk boundaries land inside
 * lines), then the events are parsed and everything is freed. Built with
 * -fsanitize=fuzzer for campaigns, or linked with replay.c to re-run
 * tests/fuzz/corpus/tp_ftrace_text/ in every CI build.
 */
#include <stdint.h>
#include <string.h>

#include "importers/ftrace_text/ftrace_text.h"
#include "tp_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut1 = 0, cut2 = 0;
	if (size > 2) {
		cut1 = (data[0] | (size_t)data[1] << 8) % size;
		cut2 = cut1 + (data[size - 1] * 131u) % (size - cut1 + 1);
	}
	const char *p = (const char *)data;
	struct tp *tp = tp_new(NULL);
	struct ftrace_text *ft = tp_ftrace_text_new(tp);
	tp_ftrace_text_parse_chunk(ft, p, cut1);
	tp_ftrace_text_parse_chunk(ft, p + cut1, cut2 - cut1);
	tp_ftrace_text_parse_chunk(ft, p + cut2, size - cut2);
	tp_ftrace_text_end(ft);
	tp_ftrace_text_free(ft);
	tp_free(tp);
	return 0;
}
