/*
 * Fuzz target for components/probes/journald/ (file.c, hash.c, lz4.c,
 * filter.c): the input is a journal file. It is put in a memfd and read
 * the ways traced_probes and the tests read journals: every entry from the
 * first with all its fields (ZSTD and LZ4 payloads decoded, hashes
 * checked) through the linux.systemd_journald filters; the tail position;
 * a DATA lookup through the hash table with the entries that hold it; the
 * values of a field through the field hash table. Also each input as a raw
 * LZ4 block. Any read outside the file's bytes, any loop that does not end,
 * any crash is a bug: journal files are written by other processes and may
 * be cut off, half written or corrupt.
 *
 * Seeds (tests/fuzz/corpus/journal_file/) are real journal files that
 * systemd-journal-remote wrote (compact and regular, keyed and Jenkins
 * hashes, ZSTD payloads, LZ4 payloads as journald writes them), cut after
 * their last object, and damaged copies. Built with -fsanitize=fuzzer for
 * campaigns, or with replay.c to re-run the corpus in every CI run.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base.h"
#include "journald/journald.h"

struct ctx {
	struct journal_filter flt;
	struct journal_match m;
	size_t bytes;
};

static int on_field(void *p, const uint8_t *d, size_t n, unsigned flags)
{
	struct ctx *c = p;
	if (d) {
		probes_journal_match_field(&c->flt, &c->m, d, n);
		for (size_t i = 0; i < n; i++) /* every byte handed out is readable */
			c->bytes += d[i];
	}
	return 0;
}

static int on_entry_off(void *p, uint64_t off)
{
	(void)p;
	(void)off;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char *idents[] = {"app", "sshd"};
	static char *units[] = {"app.service"};
	struct ctx c = {
	    .flt = {.min_prio = 5, .idents = idents, .n_idents = 2, .units = units, .n_units = 1}};
	uint8_t out[4096];
	bool trunc;
	probes_journal_lz4_block(data, size, out, sizeof out, &trunc);

	int fd = memfd_create("journal", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	struct journal_file f;
	memset(&f, 0, sizeof f);
	if (probes_journal_file_open_fd(&f, fd, "fuzz.journal") == 0) {
		uint64_t off;
		int r;
		for (int guard = 0; guard < 100000 && (r = probes_journal_file_next(&f, &off)) == 1;
		     guard++) {
			struct journal_entry e;
			probes_journal_match_begin(&c.flt, &c.m);
			probes_journal_file_read_entry(&f, off, &e, on_field, &c);
		}
		static const char match[] = "SYSLOG_IDENTIFIER=app";
		if (probes_journal_file_find_data(&f, match, sizeof match - 1, &off) == 1)
			probes_journal_file_data_entries(&f, off, on_entry_off, NULL);
		probes_journal_file_field_values(&f, "MESSAGE", 7, on_field, &c);
		if (probes_journal_file_refresh(&f) == 0 && probes_journal_file_seek_tail(&f) == 0)
			probes_journal_file_next(&f, &off);
	}
	probes_journal_file_close(&f); /* closes fd */
	return 0;
}
