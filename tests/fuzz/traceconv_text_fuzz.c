/*
 * Fuzz target for traceconv's converters of untrusted traces: the input, as
 * a file, through `text` and `decompress_packets` (text.c: the packet
 * tokenizer, zlib inflate of compressed_packets, the text printer) and
 * through `json` and `systrace` (json.c and systrace.c over whatever the
 * trace processor made of it: args trees, async merging, to_ftrace()).
 * Output goes to /dev/null; only crashes, leaks and hangs matter.
 *
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/traceconv_text/ in every CI build.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base.h"
#include "traceconv_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int input_fd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("traceconv_fuzz", MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (tb_write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null;
	if (!null)
		null = fopen("/dev/null", "we");
	struct traceconv_text_opts o = {.skip_unknown = size & 1};
	int fd;
	if ((fd = input_fd(data, size)) >= 0) {
		traceconv_text(fd, "fuzz", null, &o);
		close(fd);
	}
	if ((fd = input_fd(data, size)) >= 0) {
		traceconv_decompress_packets(fd, "fuzz", null);
		close(fd);
	}
	if ((fd = input_fd(data, size)) >= 0) {
		traceconv_json(fd, "fuzz", null, &o);
		close(fd);
	}
	o.keep = size & 2 ? 1 : -1;
	if ((fd = input_fd(data, size)) >= 0) {
		traceconv_systrace(fd, "fuzz", null, &o, size & 4);
		close(fd);
	}
	return 0;
}
