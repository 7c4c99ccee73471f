/*
 * Fuzz target for the zip/tar reader (components/trace_processor/io/
 * archive.c) and the archive path of tp.c. The input is read twice:
 *  - as a zip and as a tar, fed in pieces whose sizes come from its first
 *    byte (so boundaries land inside headers, names, deflate streams and
 *    data descriptors), then finished; every member it yields must hold a
 *    name and no more bytes than its buffer;
 *  - whole, by a trace processor, which sniffs it and, if it is an archive,
 *    imports its members.
 * Built with -fsanitize=fuzzer for campaigns, or linked with replay.c to
 * re-run tests/fuzz/corpus/tp_archive/ in every CI build.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../components/trace_processor/tp_int.h"
#include "io/io.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void read_as(enum tp_archive_kind kind, const uint8_t *data, size_t size)
{
	struct tp_archive *a = tp_archive_new(kind);
	struct tb_err err;
	size_t step = size ? (size_t)data[0] % 61 + 1 : 1;
	int rc = 0;
	tb_err_clear(&err);
	for (size_t off = 0; off < size && rc == 0; off += step)
		rc = tp_archive_feed(a, data + off, size - off < step ? size - off : step, &err);
	if (rc == 0)
		rc = tp_archive_finish(a, &err);
	if (rc != 0 && !err.msg[0])
		abort();
	for (size_t i = 0; i < tp_archive_count(a); i++) {
		const struct tp_archive_member *m = tp_archive_member(a, i);
		if (!m->name || m->len > m->cap || (m->len && !m->data))
			abort();
	}
	tp_archive_free(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	read_as(TP_ARCHIVE_ZIP, data, size);
	read_as(TP_ARCHIVE_TAR, data, size);
	struct tp *tp = tp_new(NULL);
	tp_parse(tp, data, size);
	tp_end_of_file(tp);
	tp_free(tp);
	return 0;
}
