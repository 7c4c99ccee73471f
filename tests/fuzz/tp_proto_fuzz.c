/*
 * Fuzz target for the Perfetto protobuf importer: the input is fed to a
 * trace processor in three chunks (split points taken from the first byte)
 * so the tokenizer's carry-over between chunks is exercised, then the
 * sorted events are parsed at end of file. An odd first byte also turns on
 * --analyze-trace-proto-content (importers/proto/content.c).
 */
#include <stddef.h>
#include <stdint.h>

#include "../../components/trace_processor/tp_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_config cfg = {.analyze_trace_proto_content = size && (data[0] & 1)};
	struct tp *tp = tp_new(&cfg);
	size_t a = size ? (data[0] * size) / 256 : 0;
	size_t b = a + (size - a) / 2;
	/* Always look like a proto trace so the importer is the one tested. */
	static const uint8_t lead[] = {0x0a, 0x00};
	tp_parse(tp, lead, sizeof lead);
	tp_parse(tp, data, a);
	tp_parse(tp, data + a, b - a);
	tp_parse(tp, data + b, size - b);
	tp_end_of_file(tp);
	tp_free(tp);
	return 0;
}
