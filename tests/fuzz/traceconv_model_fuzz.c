/*
 * Fuzz target for traceconv's report model readers: the JSON reader and
 * `traceconv inspect` over whatever model it yields, with every kind of
 * command (summary, ranking, trees at depth, threads, search). A model is
 * input from a file someone gave us; nothing in it may crash the inspector.
 *
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/traceconv_model/ in every CI build.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base.h"
#include "traceconv_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct arena a;
	struct traceconv_jv v;
	struct tb_err err = {0};

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	arena_init(&a, 0);
	traceconv_jv_parse((const char *)data, size, &a, &v, &err);
	arena_release(&a);
	traceconv_inspect_text(
	    (const char *)data, size,
	    "summary\ntop 0 self\ntop 3\nfunction 0 8\nfunction 1\ncallers 2 64\n"
	    "callees 0 64\nthreads\nfind a\nhelp\n",
	    devnull);
	return 0;
}
