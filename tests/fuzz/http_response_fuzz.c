/*
 * Fuzz target for the HTTP response parser (components/trace_processor/io/
 * http.c): the input is a server's response, fed in pieces whose sizes come
 * from its first byte (so boundaries land inside status lines, headers,
 * chunk-size lines and chunk data), continuing past the headers the way the
 * client does, then the end of the connection. Built with -fsanitize=fuzzer
 * for campaigns, or linked with replay.c to re-run
 * tests/fuzz/corpus/http_response/ in every CI build.
 */
#include <stdint.h>
#include <string.h>

#include "base.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int discard(void *ctx, const uint8_t *p, size_t n)
{
	uint64_t *total = ctx;
	if (n)
		*total += p[0] + p[n - 1]; /* touch both ends of every piece */
	return 0;
}

static struct http_parser parser;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t step = size ? (size_t)data[0] % 17 + 1 : 1;
	uint64_t total = 0;
	struct tb_err err = {0};
	http_parser_init(&parser);
	size_t off = 0;
	while (off < size && !parser.done) {
		size_t n = size - off < step ? size - off : step, used = 0;
		if (http_parser_feed(&parser, data + off, n, &used, discard, &total, &err) < 0)
			return 0;
		if (used == 0 && !parser.done)
			__builtin_trap(); /* no progress: the client would spin */
		off += used;
	}
	http_parser_eof(&parser, &err);
	return 0;
}
