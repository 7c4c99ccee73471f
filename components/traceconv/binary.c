/*
 * traceconv binary: a Trace in protobuf text format (the .textproto files of
 * Perfetto's diff tests) to the binary wire format, through the generic
 * text-format encoder of protos (textproto.c) and the Trace descriptor.
 * The bytes are a valid Trace but not byte-identical to protoc's: nested
 * lengths are written as fixed 4-byte varints.
 */
#include <errno.h>
#include <stdio.h>

#include "base.h"
#include "protos.h"
#include "traceconv_int.h"

/* Largest text trace read into memory. */
#define TRACECONV_TEXT_MAX ((size_t)1 << 30)

int traceconv_binary(const char *in_path, const char *in_name, FILE *out)
{
	struct tb_err err = {0};
	char *text = NULL;
	uint8_t *bin = NULL;
	size_t len = 0, bin_len = 0;
	int rc = -1;

	if (tb_read_file(in_path, &text, &len, TRACECONV_TEXT_MAX, &err) < 0) {
		fprintf(stderr, "traceconv: %s\n", err.msg);
		goto out;
	}
	if (protos_text_to_binary(&perfetto__protos__trace__descriptor, in_name, text, len, false,
	                          &bin, &bin_len, &err) < 0) {
		fprintf(stderr, "traceconv: %s\n", err.msg);
		goto out;
	}
	if (bin_len && fwrite(bin, 1, bin_len, out) != bin_len) {
		fprintf(stderr, "traceconv: cannot write output\n");
		goto out;
	}
	rc = 0;
out:
	tb_free(bin);
	tb_free(text);
	return rc;
}
