/*
 * Fuzz target for the Chrome JSON importer: the input is fed to a fresh
 * trace processor in two or three chunks at positions derived from its
 * first bytes (so chunk boundaries land everywhere, including inside
 * events, strings and escapes), then the trace is finished and freed.
 * The same input and cuts then go to a bare tokenizer with a sink on the
 * systemTraceEvents string, so the streamed unescaping is fuzzed too.
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/tp_json/ in every CI build.
 */
#include <stdint.h>
#include <string.h>

#include "importers/json/json_int.h"
#include "tp_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void count_piece(void *ctx, const char *s, size_t n)
{
	size_t *total = ctx;
	for (size_t i = 0; i < n; i++) /* touch every byte for the sanitizers */
		*total += (unsigned char)s[i] != 0;
}

static void count_end(void *ctx)
{
	(void)ctx;
}

static void feed_tokenizer(const uint8_t *data, size_t size, size_t cut1, size_t cut2)
{
	struct tp *tp = tp_new(NULL);
	struct json_tokenizer *t = tp_json_tokenizer_new(tp);
	size_t total = 0;
	struct json_text_sink sink = {count_piece, count_end, &total};
	tp_json_tokenizer_set_system_trace_sink(t, &sink);
	if (tp_json_tokenizer_feed(t, data, cut1) == 0 &&
	    tp_json_tokenizer_feed(t, data + cut1, cut2 - cut1) == 0)
		tp_json_tokenizer_feed(t, data + cut2, size - cut2);
	tp_json_tokenizer_free(t);
	tp_free(tp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cut1 = 0, cut2 = 0;
	if (size > 2) {
		cut1 = (data[0] | (size_t)data[1] << 8) % size;
		cut2 = cut1 + (data[size - 1] * 131u) % (size - cut1 + 1);
	}
	struct tp *tp = tp_new(NULL);
	/* Force the JSON importer: prefix '[' unless the input starts a
	 * container itself, so every input reaches the tokenizer. */
	if (!(size && (data[0] == '[' || data[0] == '{')))
		tp_parse(tp, (const uint8_t *)"[", 1);
	if (tp_parse(tp, data, cut1) == 0 && tp_parse(tp, data + cut1, cut2 - cut1) == 0)
		tp_parse(tp, data + cut2, size - cut2);
	tp_end_of_file(tp);
	tp_free(tp);
	feed_tokenizer(data, size, cut1, cut2);
	return 0;
}
