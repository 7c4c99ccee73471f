/*
 * Tests of components/probes/journald/, the journal file reader: hashes,
 * LZ4 blocks, the header, the filters, the folder follower on real journal
 * files (the fuzz seeds). tests/cli/t2500-journald.sh sets the reader and
 * captures against journalctl on files systemd writes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "journald/journald.h"
#include "test.h"

/* Published values: lookup3's driver5 for hashlittle2 with both seeds 0,
 * SipHash-2-4's paper (key 00..0f, message 00..0e). */
TEST(journal_hash_vectors)
{
	CHECK_UEQ(probes_journal_jenkins64("", 0), 0xdeadbeefdeadbeefull);
	CHECK_UEQ(probes_journal_jenkins64("Four score and seven years ago", 30),
	          0x17770551ce7226e6ull);
	uint8_t key[16], msg[64];
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	CHECK_UEQ(probes_journal_siphash24(msg, 15, key), 0xa129ca6149be45e5ull);
	CHECK_UEQ(probes_journal_siphash24(msg, 0, key), 0x726fdb47dd0e0e31ull);
	CHECK_UEQ(probes_journal_siphash24(msg, 8, key), 0x93f5f5799a932462ull);
}

TEST(journal_lz4_blocks)
{
	/* "abcd", then a match 4 back of 8 bytes (overlapping itself), then
	 * the last literals "xyz". */
	static const uint8_t block[] = {0x44, 'a', 'b', 'c', 'd', 4, 0, 0x30, 'x', 'y', 'z'};
	uint8_t out[64];
	bool trunc;
	ssize_t n = probes_journal_lz4_block(block, sizeof block, out, sizeof out, &trunc);
	CHECK_EQ(n, 15);
	CHECK(!trunc);
	CHECK_MEM_EQ(out, "abcdabcdabcdxyz", 15);
	/* Cut at the output limit, inside the match. */
	n = probes_journal_lz4_block(block, sizeof block, out, 6, &trunc);
	CHECK_EQ(n, 6);
	CHECK(trunc);
	CHECK_MEM_EQ(out, "abcdab", 6);
	/* A 15+ literal run with its extra length byte. */
	uint8_t lit[1 + 1 + 20];
	lit[0] = 0xf0;
	lit[1] = 5;
	memset(lit + 2, 'q', 20);
	CHECK_EQ(probes_journal_lz4_block(lit, sizeof lit, out, sizeof out, &trunc), 20);
	/* Malformed: offset 0, offset before the start, literals past the end,
	 * a match with no room for its offset, empty input. */
	static const uint8_t off0[] = {0x10, 'a', 0, 0, 0x10, 'b'};
	static const uint8_t far[] = {0x10, 'a', 9, 0, 0x10, 'b'};
	static const uint8_t longlit[] = {0x50, 'a', 'b'};
	static const uint8_t nooff[] = {0x10, 'a', 1};
	CHECK_EQ(probes_journal_lz4_block(off0, sizeof off0, out, sizeof out, &trunc), -EINVAL);
	CHECK_EQ(probes_journal_lz4_block(far, sizeof far, out, sizeof out, &trunc), -EINVAL);
	CHECK_EQ(probes_journal_lz4_block(longlit, sizeof longlit, out, sizeof out, &trunc),
	         -EINVAL);
	CHECK_EQ(probes_journal_lz4_block(nooff, sizeof nooff, out, sizeof out, &trunc), -EINVAL);
	CHECK_EQ(probes_journal_lz4_block(block, 0, out, sizeof out, &trunc), -EINVAL);
}

TEST(journal_header_checks)
{
	uint8_t h[272] = "LPKSHHRH";
	struct journal_header jh;
	struct tb_err err = {0};
	h[88] = 0x08, h[89] = 0x01; /* header_size 264 */
	CHECK_EQ(probes_journal_header_parse(h, sizeof h, &jh, &err), 0);
	CHECK_UEQ(jh.header_size, 264);
	h[12] = 0x20; /* an incompatible flag this reader does not know */
	CHECK_EQ(probes_journal_header_parse(h, sizeof h, &jh, &err), -EPROTONOSUPPORT);
	h[12] = JOURNAL_INCOMPAT_COMPACT | JOURNAL_INCOMPAT_ZSTD;
	CHECK_EQ(probes_journal_header_parse(h, sizeof h, &jh, &err), 0);
	CHECK_EQ(probes_journal_header_parse(h, 100, &jh, &err), -EINVAL); /* too short */
	h[88] = 0x09;                                                      /* not a multiple of 8 */
	CHECK_EQ(probes_journal_header_parse(h, sizeof h, &jh, &err), -EINVAL);
	h[88] = 0x08;
	h[0] = 'X';
	CHECK_EQ(probes_journal_header_parse(h, sizeof h, &jh, &err), -EINVAL);
}

static bool matches(const struct journal_filter *flt, const char *const *fields, size_t n)
{
	struct journal_match m;
	probes_journal_match_begin(flt, &m);
	for (size_t i = 0; i < n; i++)
		probes_journal_match_field(flt, &m, (const uint8_t *)fields[i], strlen(fields[i]));
	return journal_match_ok(&m);
}

/* journalctl's semantics: whole payloads, alternatives within a field,
 * all fields, any of several values. */
TEST(journal_filter_semantics)
{
	char *idents[] = {"sshd", "cron"}, *units[] = {"ssh.service"};
	struct journal_filter all = {.min_prio = 7};
	struct journal_filter p3 = {.min_prio = 3};
	struct journal_filter id = {.min_prio = 7, .idents = idents, .n_idents = 2};
	struct journal_filter both = {
	    .min_prio = 5, .idents = idents, .n_idents = 2, .units = units, .n_units = 1};
	const char *no_prio[] = {"MESSAGE=x"};
	const char *p2[] = {"MESSAGE=x", "PRIORITY=2"};
	const char *p4[] = {"PRIORITY=4"};
	const char *p03[] = {"PRIORITY=03"};
	const char *two[] = {"SYSLOG_IDENTIFIER=app", "SYSLOG_IDENTIFIER=cron"};
	const char *prefix[] = {"SYSLOG_IDENTIFIER=sshd2"};
	const char *ok[] = {"PRIORITY=5", "_SYSTEMD_UNIT=ssh.service", "SYSLOG_IDENTIFIER=sshd"};
	const char *no_unit[] = {"PRIORITY=5", "SYSLOG_IDENTIFIER=sshd"};
	CHECK(matches(&all, no_prio, 1));
	CHECK(!matches(&p3, no_prio, 1));
	CHECK(matches(&p3, p2, 2));
	CHECK(!matches(&p3, p4, 1));
	CHECK(!matches(&p3, p03, 1));
	CHECK(matches(&id, two, 2));
	CHECK(!matches(&id, prefix, 1));
	CHECK(matches(&both, ok, 3));
	CHECK(!matches(&both, no_unit, 2));
}

/* tests/fuzz/corpus/journal_file/<name> copied into dir (a real file that
 * systemd-journal-remote wrote, cut after its last object). */
static bool copy_seed(const char *name, const char *dir, const char *as)
{
	char src[512], dst[512], *buf = NULL;
	size_t len = 0;
	const char *root = getenv("TB_TEST_ROOT");
	snprintf(src, sizeof src, "%s/tests/fuzz/corpus/journal_file/%s", root ? root : ".", name);
	snprintf(dst, sizeof dst, "%s/%s", dir, as);
	if (tb_read_file(src, &buf, &len, 1 << 20, NULL) != 0)
		return false;
	int fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	bool ok = fd >= 0 && tb_write_all(fd, buf, len) == 0;
	if (fd >= 0)
		close(fd);
	tb_free(buf);
	return ok;
}

static int count_entry(void *ctx, struct journal_file *f, const struct journal_entry *e)
{
	(*(size_t *)ctx)++;
	return 0;
}

/* The follower: files there at the start are read from their tail; a file
 * that appears later is read whole, but its entries from before the start
 * (these seeds' are from 2023, of another boot) are skipped; a file that
 * is done with and deleted is closed. */
TEST(probes_journal_follow_tail_and_new_files)
{
	char dir[] = "/tmp/tb-journald-XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	CHECK(copy_seed("compact_keyed_zstd.journal", dir, "system.journal"));
	struct journal_follow fl;
	memset(&fl, 0, sizeof fl);
	const char *dirs[] = {dir};
	probes_journal_follow_open(&fl, dirs, 1);
	size_t n = 0;
	CHECK_EQ(fl.files.len, 1);
	CHECK_EQ(probes_journal_follow_poll(&fl, true, 0, count_entry, &n), 0);
	CHECK_EQ(fl.files.data[0]->jf.consumed, 24); /* at the tail */
	CHECK(copy_seed("regular_jenkins.journal", dir, "user-1000.journal"));
	CHECK_EQ(probes_journal_follow_poll(&fl, false, 0, count_entry, &n), 0); /* inotify */
	CHECK_EQ(fl.files.len, 2);
	CHECK_EQ(fl.old_entries_skipped, 24);
	struct journal_stats st;
	probes_journal_follow_stats(&fl, &st);
	CHECK_EQ(st.bad_entries + st.bad_items + st.bad_chain, 0);
	/* An offline file read to its end that loses its name is closed. */
	char path[600];
	snprintf(path, sizeof path, "%s/system.journal", dir);
	unlink(path);
	CHECK_EQ(probes_journal_follow_poll(&fl, false, 0, count_entry, &n), 0);
	CHECK_EQ(fl.files.len, 1);
	CHECK_EQ(n, 0);
	probes_journal_follow_close(&fl);
	snprintf(path, sizeof path, "%s/user-1000.journal", dir);
	unlink(path);
	rmdir(dir);
}
