/*
 * Fuzz target for components/protos/textproto.c: parses the input as a
 * TraceConfig in text format, strict and lossy. Whatever parses must decode
 * with protobuf-c (the parser only writes what the descriptors allow), and
 * the strict parse succeeding implies the lossy one succeeds with the same
 * bytes. A failed parse must leave one message and no output.
 *
 * The other direction (textproto_print.c): the input as a binary
 * TraceConfig, and each parse's output, are rendered back to text, which
 * must be a NUL-terminated string of the returned length.
 *
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/textproto/ in every CI build.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base.h"
#include "protos.h"

static void *fuzz_alloc(void *data, size_t size)
{
	(void)data;
	return tb_malloc(size ? size : 1);
}

static void fuzz_free(void *data, void *p)
{
	(void)data;
	tb_free(p);
}

static ProtobufCAllocator alloc = {fuzz_alloc, fuzz_free, NULL};

static int parse(const uint8_t *data, size_t size, bool lossy, uint8_t **out, size_t *len)
{
	const ProtobufCMessageDescriptor *d = &perfetto__protos__trace_config__descriptor;
	struct tb_err err;
	int ret;

	tb_err_clear(&err);
	ret = protos_text_to_binary(d, "fuzz", (const char *)data, size, lossy, out, len, &err);
	if (ret != 0 && (ret != -EINVAL || *out || *len || !err.msg[0]))
		abort();
	if (ret == 0 && *out) {
		ProtobufCMessage *m = protobuf_c_message_unpack(d, &alloc, *len, *out);
		if (!m)
			abort();
		protobuf_c_message_free_unpacked(m, &alloc);
	}
	return ret;
}

static void render(const uint8_t *p, size_t n)
{
	size_t len;
	char *text = protos_binary_to_text(&perfetto__protos__trace_config__descriptor, p, n, &len);
	if (strlen(text) != len || text[len] != '\0')
		abort();
	tb_free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *strict = NULL, *lossy = NULL;
	size_t strict_len = 0, lossy_len = 0;
	int rs = parse(data, size, false, &strict, &strict_len);
	int rl = parse(data, size, true, &lossy, &lossy_len);

	if (rs == 0 && (rl != 0 || strict_len != lossy_len ||
	                (strict_len && memcmp(strict, lossy, strict_len) != 0)))
		abort();
	render(data, size);
	if (rs == 0)
		render(strict, strict_len);
	tb_free(strict);
	tb_free(lossy);
	return 0;
}
