/*
 * Tests for components/protos/textproto_print.c: binary messages rendered
 * in the text format Perfetto's trace processor stores as
 * trace_config_pbtxt. Inputs are hand-encoded bytes, so the cases cover what
 * the text parser cannot produce: unknown fields of every wire type, packed
 * fields, enum values without a name, and bytes that are not fields.
 */
#include "test.h"

#include <string.h>

#include "base.h"
#include "pb.h"
#include "protos.h"

#define TC_DESC (&perfetto__protos__trace_config__descriptor)

static bool renders(const uint8_t *p, size_t n, const char *want)
{
	size_t len;
	char *got = protos_binary_to_text(TC_DESC, p, n, &len);
	bool ok = len == strlen(want) && strcmp(got, want) == 0;
	if (!ok)
		fprintf(stderr, "got:\n%s\nwant:\n%s\n", got, want);
	tb_free(got);
	return ok;
}

TEST(protos_text_print_nested_and_scalars)
{
	/* buffers { size_kb: 1024 fill_policy: DISCARD } buffers { }
	 * duration_ms: 3000 write_into_file: true */
	static const uint8_t p[] = {0x0a, 0x05, 0x08, 0x80, 0x08, 0x20, 0x02,
	                            0x0a, 0x00, 0x18, 0xb8, 0x17, 0x40, 0x01};
	CHECK(renders(p, sizeof p,
	              "buffers {\n  size_kb: 1024\n  fill_policy: DISCARD\n}\n"
	              "buffers {\n}\nduration_ms: 3000\nwrite_into_file: true"));
}

TEST(protos_text_print_strings_escaped)
{
	/* unique_session_name (22): a"b\n\x01' */
	static const uint8_t p[] = {0xb2, 0x01, 0x06, 'a', '"', 'b', '\n', 0x01, '\''};
	CHECK(renders(p, sizeof p, "unique_session_name: \"a\\\"b\\n\\001\\'\""));
}

TEST(protos_text_print_unknown_fields)
{
	/* 1000: varint -1, 1001: fixed32, 1002: fixed64, 1003: bytes "x",
	 * fill_policy-less buffer with an unnamed enum value 9 */
	static const uint8_t p[] = {
	    0xc0, 0x3e, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
	    0xcd, 0x3e, 0x2a, 0x00, 0x00, 0x00, 0xd1, 0x3e, 0x01, 0x00, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x80, 0xda, 0x3e, 0x01, 'x',  0x0a, 0x02, 0x20, 0x09,
	};
	CHECK(renders(p, sizeof p,
	              "1000: -1\n1001: 0x0000002a\n1002: 0x8000000000000001\n"
	              "1003: \"x\"\nbuffers {\n  4: 9\n}"));
}

TEST(protos_text_print_wrong_wire_type_and_garbage)
{
	/* duration_ms (3, uint32) as a length-delimited field reads as packed;
	 * unique_session_name (22, string) as a varint prints raw; then a
	 * truncated varint */
	static const uint8_t p[] = {0x1a, 0x02, 0x7a, 0x01, 0xb0, 0x01, 0x05, 0x18, 0x80};
	CHECK(renders(p, sizeof p,
	              "duration_ms: 122\nduration_ms: 1\n22: 5\n"
	              "# Extra bytes: \"\\030\\200\"\n"));
	CHECK(renders(NULL, 0, ""));
}
