/*
 * Unit tests for components/probes (ftrace core): format and header_page
 * parsing, ring-buffer pages built here record by record (time extends,
 * absolute timestamps, padding, missed events, every truncation), encoding
 * into FtraceEventBundle / FtraceStats decoded back with protobuf-c, the
 * saved-state logic of tracefs on a fake directory, and, when run as root
 * with tracefs available, a live capture of sched_switch.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#include <sqlite3.h>

#include "base.h"
#include "pb.h"
#include "probes_int.h"
#include "pb_fields.h"
#include "protos.h"
#include "trace_processor.h"
#include "tracing.h"

static void *tb_pb_alloc(void *data, size_t size)
{
	(void)data;
	return tb_malloc(size ? size : 1);
}

static void tb_pb_free(void *data, void *p)
{
	(void)data;
	tb_free(p);
}

static ProtobufCAllocator pb_alloc = {tb_pb_alloc, tb_pb_free, NULL};

/* As a 6.x x86-64 kernel prints them. */
static const char k_header_page[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                                    "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
                                    "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                                    "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

#define COMMON_FIELDS                                                                  \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"         \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"         \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

static const char k_sched_switch[] =
    "name: sched_switch\nID: 372\nformat:\n" COMMON_FIELDS
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"prev_comm=%s ...\", REC->prev_comm\n";

static const char k_sched_waking[] = "name: sched_waking\nID: 375\nformat:\n" COMMON_FIELDS
                                     "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
                                     "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
                                     "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
                                     "\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n";

static const char k_print[] = "name: print\nID: 5\nformat:\n" COMMON_FIELDS
                              "\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n"
                              "\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n";

/* An event without a typed message: every field kind. */
static const char k_generic[] = "name: tb_test\nID: 900\nformat:\n" COMMON_FIELDS
                                "\tfield:int delta;\toffset:8;\tsize:4;\tsigned:1;\n"
                                "\tfield:unsigned long addr;\toffset:16;\tsize:8;\tsigned:0;\n"
                                "\tfield:char tag[8];\toffset:24;\tsize:8;\tsigned:0;\n"
                                "\tfield:__data_loc char[] path;\toffset:32;\tsize:4;\tsigned:0;\n"
                                "\tfield:u8 mac[4];\toffset:36;\tsize:4;\tsigned:0;\n"
                                "\tfield:const char * fmt;\toffset:40;\tsize:8;\tsigned:0;\n"
                                "\tfield:__rel_loc char[] rel;\toffset:48;\tsize:4;\tsigned:0;\n"
                                "\tfield:struct foo blob;\toffset:52;\tsize:12;\tsigned:0;\n";

/* ---- a page builder ----------------------------------------------------- */

struct pgb {
	uint8_t page[4096];
	size_t pos; /* bytes of records after the 16-byte header */
};

static void pg_init(struct pgb *b, uint64_t ts)
{
	memset(b->page, 0, sizeof b->page);
	memcpy(b->page, &ts, 8);
	b->pos = 0;
}

static void pg_bytes(struct pgb *b, const void *p, size_t n)
{
	TB_CHECK(16 + b->pos + n <= sizeof b->page);
	memcpy(b->page + 16 + b->pos, p, n);
	b->pos += n;
}

static void pg_u32(struct pgb *b, uint32_t v)
{
	pg_bytes(b, &v, 4);
}

static void pg_hdr(struct pgb *b, uint32_t type_len, uint32_t delta)
{
	pg_u32(b, type_len | delta << 5);
}

/* A data record; long ones (or force_len) use the length word. */
static void pg_event(struct pgb *b, uint32_t delta, const void *payload, size_t n, bool force_len)
{
	size_t padded = (n + 3) & ~(size_t)3;
	uint8_t zero[4] = {0};
	if (!force_len && padded <= 28 * 4) {
		pg_hdr(b, (uint32_t)(padded / 4), delta);
	} else {
		pg_hdr(b, 0, delta);
		pg_u32(b, (uint32_t)padded + 4);
	}
	pg_bytes(b, payload, n);
	pg_bytes(b, zero, padded - n);
}

static void pg_finish(struct pgb *b, uint64_t flags)
{
	uint64_t commit = b->pos | flags;
	memcpy(b->page + 8, &commit, 8);
}

/* A sched_switch payload (the k_sched_switch layout). */
static size_t make_switch(uint8_t *p, int32_t pid, const char *prev, int32_t prev_pid,
                          int64_t state, const char *next, int32_t next_pid)
{
	uint16_t type = 372;
	int32_t prio = 120;
	memset(p, 0, 64);
	memcpy(p, &type, 2);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, prev, strlen(prev));
	memcpy(p + 24, &prev_pid, 4);
	memcpy(p + 28, &prio, 4);
	memcpy(p + 32, &state, 8);
	memcpy(p + 40, next, strlen(next));
	memcpy(p + 56, &next_pid, 4);
	memcpy(p + 60, &prio, 4);
	return 64;
}

static size_t make_print(uint8_t *p, int32_t pid, const char *text)
{
	uint16_t type = 5;
	uint64_t ip = 0xffffffff81000000ull;
	size_t n = strlen(text) + 1;
	memset(p, 0, 16);
	memcpy(p, &type, 2);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, &ip, 8);
	memcpy(p + 16, text, n);
	return 16 + n;
}

static size_t make_generic(uint8_t *p)
{
	uint16_t type = 900;
	int32_t pid = 77, delta = -5;
	uint64_t addr = 0xdeadbeef, fmt = 0x1000;
	uint32_t loc = (uint32_t)6 << 16 | 64, rel = (uint32_t)3 << 16 | (72 - 52);
	memset(p, 0, 80);
	memcpy(p, &type, 2);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, &delta, 4);
	memcpy(p + 16, &addr, 8);
	memcpy(p + 24, "abc", 3);
	memcpy(p + 32, &loc, 4);
	memcpy(p + 36, "\x01\x02\x03\xff", 4);
	memcpy(p + 40, &fmt, 8);
	memcpy(p + 48, &rel, 4);
	memcpy(p + 64, "/bin/", 6);
	memcpy(p + 72, "xy", 3);
	return 76;
}

static int load_table(struct ftrace_table *t)
{
	struct tb_err err = {0};
	probes_ftrace_table_init(t);
	if (probes_ftrace_parse_header_page(k_header_page, strlen(k_header_page), &t->layout,
	                                    &err) < 0 ||
	    probes_ftrace_table_add_format(t, "sched", k_sched_switch, strlen(k_sched_switch),
	                                   &err) < 0 ||
	    probes_ftrace_table_add_format(t, "ftrace", k_print, strlen(k_print), &err) < 0 ||
	    probes_ftrace_table_add_format(t, "tb", k_generic, strlen(k_generic), &err) < 0) {
		test_report(__FILE__, __LINE__, "%s", err.msg);
		return -1;
	}
	return 0;
}

/* ---- formats ------------------------------------------------------------ */

TEST(probes_format_sched_switch)
{
	struct ftrace_event_format f;
	struct tb_err err = {0};
	const struct ftrace_field *fd;
	CHECK_EQ(
	    probes_ftrace_format_parse("sched", k_sched_switch, strlen(k_sched_switch), &f, &err),
	    0);
	CHECK_STR_EQ(f.name, "sched_switch");
	CHECK_STR_EQ(f.group, "sched");
	CHECK_EQ(f.id, 372);
	CHECK_EQ(f.n_fields, 11);
	CHECK_EQ(f.common_pid, 3);
	CHECK_EQ(f.common_type, 0);
	fd = probes_ftrace_format_field(&f, "prev_comm");
	CHECK(fd);
	CHECK_EQ(fd->kind, FTRACE_FIELD_CHAR_ARRAY);
	CHECK_EQ(fd->offset, 8);
	CHECK_EQ(fd->size, 16);
	CHECK_STR_EQ(fd->type, "char");
	fd = probes_ftrace_format_field(&f, "prev_state");
	CHECK(fd && fd->kind == FTRACE_FIELD_INT && fd->is_signed && fd->size == 8);
	CHECK_STR_EQ(fd->type, "long");
	CHECK(!probes_ftrace_format_field(&f, "nope"));
	probes_ftrace_format_release(&f);
}

TEST(probes_format_field_kinds)
{
	struct ftrace_event_format f;
	struct tb_err err = {0};
	const struct ftrace_field *fd;
	CHECK_EQ(probes_ftrace_format_parse("tb", k_generic, strlen(k_generic), &f, &err), 0);
	CHECK_EQ(f.n_fields, 12);
	CHECK((fd = probes_ftrace_format_field(&f, "path")) && fd->kind == FTRACE_FIELD_DATA_LOC &&
	      fd->is_char);
	CHECK((fd = probes_ftrace_format_field(&f, "rel")) && fd->kind == FTRACE_FIELD_REL_LOC);
	CHECK((fd = probes_ftrace_format_field(&f, "mac")) && fd->kind == FTRACE_FIELD_ARRAY &&
	      fd->elem_size == 1);
	CHECK((fd = probes_ftrace_format_field(&f, "fmt")) && fd->kind == FTRACE_FIELD_INT &&
	      !fd->is_signed);
	CHECK_STR_EQ(fd->type, "const char *");
	CHECK((fd = probes_ftrace_format_field(&f, "blob")) && fd->kind == FTRACE_FIELD_OTHER);
	probes_ftrace_format_release(&f);

	CHECK_EQ(probes_ftrace_format_parse("ftrace", k_print, strlen(k_print), &f, &err), 0);
	CHECK((fd = probes_ftrace_format_field(&f, "buf")) && fd->kind == FTRACE_FIELD_STR_TAIL);
	probes_ftrace_format_release(&f);

	/* No ID, no fields, garbage: errors, nothing leaked. */
	CHECK_EQ(probes_ftrace_format_parse("x", "name: a\nformat:\n", 16, &f, &err), -EINVAL);
	tb_err_clear(&err);
	CHECK_EQ(probes_ftrace_format_parse("x", "name: a\nID: 3\n\tfield:int;\n", 26, &f, &err),
	         -EINVAL);
	CHECK_EQ(probes_ftrace_format_parse("x", "", 0, &f, &err), -EINVAL);
}

TEST(probes_header_page)
{
	struct ftrace_page_layout l = {0};
	struct tb_err err = {0};
	CHECK_EQ(probes_ftrace_parse_header_page(k_header_page, strlen(k_header_page), &l, &err),
	         0);
	CHECK_EQ(l.ts_off, 0);
	CHECK_EQ(l.commit_off, 8);
	CHECK_EQ(l.commit_size, 8);
	CHECK_EQ(l.data_off, 16);
	CHECK_EQ(l.page_size, 4096);
	CHECK_EQ(probes_ftrace_parse_header_page("field: u64 timestamp;\toffset:0;\tsize:8;", 38,
	                                         &l, &err),
	         -EINVAL);
}

/* ---- pages -------------------------------------------------------------- */

TEST(probes_page_records)
{
	struct ftrace_table t;
	struct pgb b;
	struct ftrace_page_iter it;
	struct ftrace_record r;
	uint8_t ev[128];
	size_t n;
	uint32_t pad_len = 12;

	CHECK_EQ(load_table(&t), 0);
	pg_init(&b, 1000);
	n = make_switch(ev, 10, "a", 10, 1, "b", 11);
	pg_event(&b, 5, ev, n, false); /* ts 1005 */
	pg_hdr(&b, 30, 3);             /* time extend: +3 + (2 << 27) */
	pg_u32(&b, 2);
	pg_event(&b, 1, ev, n, true); /* length word */
	pg_hdr(&b, 29, 7);            /* discarded event: padding */
	pg_u32(&b, pad_len);
	pg_bytes(&b, "\0\0\0\0\0\0\0\0", pad_len - 4);
	pg_hdr(&b, 31, 0x123); /* absolute timestamp */
	pg_u32(&b, 1);
	n = make_print(ev, 12, "B|12|hello\n");
	pg_event(&b, 0, ev, n, false);
	pg_finish(&b, 0);

	CHECK_EQ(probes_ftrace_page_begin(&it, &t.layout, b.page, sizeof b.page), FTRACE_STATUS_OK);
	CHECK(!it.missed_events);
	CHECK(probes_ftrace_page_next(&it, &r));
	CHECK_UEQ(r.ts, 1005);
	CHECK_EQ(r.event_id, 372);
	CHECK_EQ(r.len, 64);
	CHECK(probes_ftrace_page_next(&it, &r));
	CHECK_UEQ(r.ts, 1005 + 3 + (2ull << 27) + 1);
	CHECK_EQ(r.event_id, 372);
	CHECK_EQ(r.len, 64);
	CHECK(probes_ftrace_page_next(&it, &r));
	CHECK_UEQ(r.ts, (1ull << 27) + 0x123);
	CHECK_EQ(r.event_id, 5);
	CHECK(!probes_ftrace_page_next(&it, &r));
	CHECK_EQ(it.status, FTRACE_STATUS_OK);
	probes_ftrace_table_release(&t);
}

TEST(probes_page_missed_events_and_null_padding)
{
	struct ftrace_table t;
	struct pgb b;
	struct ftrace_page_iter it;
	struct ftrace_record r;
	uint8_t ev[128];
	/* The count is the kernel's long (local_t, as commit): 8 bytes here,
	 * whatever our own long is (a 32-bit tracebox on a 64-bit kernel). */
	uint64_t missed = 0x100000002ull;

	CHECK_EQ(load_table(&t), 0);
	pg_init(&b, 50);
	pg_event(&b, 1, ev, make_switch(ev, 1, "x", 1, 0, "y", 2), false);
	pg_finish(&b, (1u << 31) | (1u << 30));
	memcpy(b.page + 16 + b.pos, &missed, sizeof missed);
	CHECK_EQ(probes_ftrace_page_begin(&it, &t.layout, b.page, sizeof b.page), FTRACE_STATUS_OK);
	CHECK(it.missed_events);
	CHECK_UEQ(it.missed_count, 0x100000002ull);
	CHECK(probes_ftrace_page_next(&it, &r));
	CHECK(!probes_ftrace_page_next(&it, &r));
	CHECK_EQ(it.status, FTRACE_STATUS_OK);

	/* Null padding ends the page early; commit past the page is rejected. */
	pg_init(&b, 50);
	pg_event(&b, 1, ev, make_switch(ev, 1, "x", 1, 0, "y", 2), false);
	pg_hdr(&b, 29, 0);
	pg_event(&b, 1, ev, 64, false);
	pg_finish(&b, 0);
	CHECK_EQ(probes_ftrace_page_begin(&it, &t.layout, b.page, sizeof b.page), FTRACE_STATUS_OK);
	CHECK(probes_ftrace_page_next(&it, &r));
	CHECK(!probes_ftrace_page_next(&it, &r));
	CHECK_EQ(it.status, FTRACE_STATUS_OK);
	pg_finish(&b, 4081);
	CHECK_EQ(probes_ftrace_page_begin(&it, &t.layout, b.page, sizeof b.page),
	         FTRACE_STATUS_ABI_INVALID_PAGE_HEADER);
	CHECK(!probes_ftrace_page_next(&it, &r));
	probes_ftrace_table_release(&t);
}

/* A 32-bit kernel's pages: 4-byte commit and missed count, data at 12. */
TEST(probes_page_32bit_kernel_header)
{
	static const char hp32[] = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
	                           "\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n"
	                           "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
	                           "\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n";
	struct ftrace_page_layout l = {0};
	struct tb_err err = {0};
	struct ftrace_page_iter it;
	struct ftrace_record r;
	uint8_t page[4096] = {0};
	uint64_t ts = 7;
	uint32_t commit = 8 | (1u << 31) | (1u << 30), hdr = 1 | 3u << 5, missed = 5;
	uint8_t payload[4] = {1, 0, 0, 0};

	CHECK_EQ(probes_ftrace_parse_header_page(hp32, strlen(hp32), &l, &err), 0);
	CHECK_EQ(l.commit_size, 4);
	CHECK_EQ(l.data_off, 12);
	l.type_size = 2; /* common_type: from the events' formats */
	memcpy(page, &ts, 8);
	memcpy(page + 8, &commit, 4);
	memcpy(page + 12, &hdr, 4); /* one record of 4 bytes (type_len 1), delta 3... */
	memcpy(page + 16, payload, 4);
	memcpy(page + 20, &missed, 4); /* ...then the count, right after commit */
	page[24] = 0xff;               /* not part of a 4-byte count */
	CHECK_EQ(probes_ftrace_page_begin(&it, &l, page, sizeof page), FTRACE_STATUS_OK);
	CHECK(it.missed_events);
	CHECK_UEQ(it.missed_count, 5);
	CHECK(probes_ftrace_page_next(&it, &r));
	CHECK_UEQ(r.ts, 10);
	CHECK_EQ(r.event_id, 1);
	CHECK_EQ(r.len, 4);
	CHECK(!probes_ftrace_page_next(&it, &r));
	CHECK_EQ(it.status, FTRACE_STATUS_OK);
}

TEST(probes_page_malformed)
{
	struct ftrace_table t;
	struct pgb b;
	struct ftrace_page_iter it;
	struct ftrace_record r;
	static const struct {
		uint32_t words[3];
		size_t n;
		int status;
	} cases[] = {
	    {{0 | 1 << 5, 0}, 2, FTRACE_STATUS_ABI_ZERO_DATA_LENGTH},
	    {{0 | 1 << 5, 2}, 2, FTRACE_STATUS_ABI_INVALID_DATA_LENGTH},
	    {{0 | 1 << 5, 400}, 2, FTRACE_STATUS_ABI_END_OVERFLOW},
	    {{29 | 1 << 5, 2}, 2, FTRACE_STATUS_ABI_INVALID_PADDING_LENGTH},
	    {{29 | 1 << 5}, 1, FTRACE_STATUS_ABI_SHORT_PADDING_LENGTH},
	    {{30 | 1 << 5}, 1, FTRACE_STATUS_ABI_SHORT_TIME_EXTEND},
	    {{31 | 1 << 5}, 1, FTRACE_STATUS_ABI_SHORT_TIME_STAMP},
	    {{1 | 1 << 5, 0}, 1, FTRACE_STATUS_ABI_END_OVERFLOW},
	};
	CHECK_EQ(load_table(&t), 0);
	for (size_t i = 0; i < TB_ARRAY_SIZE(cases); i++) {
		pg_init(&b, 1);
		for (size_t k = 0; k < cases[i].n; k++)
			pg_u32(&b, cases[i].words[k]);
		pg_finish(&b, 0);
		CHECK_EQ(probes_ftrace_page_begin(&it, &t.layout, b.page, sizeof b.page),
		         FTRACE_STATUS_OK);
		CHECK(!probes_ftrace_page_next(&it, &r));
		CHECK_EQ(it.status, cases[i].status);
	}
	/* A 2-byte commit tail: too short for a record header. */
	pg_init(&b, 1);
	pg_bytes(&b, "\1\0", 2);
	pg_finish(&b, 0);
	CHECK_EQ(probes_ftrace_page_begin(&it, &t.layout, b.page, sizeof b.page), FTRACE_STATUS_OK);
	CHECK(!probes_ftrace_page_next(&it, &r));
	CHECK_EQ(it.status, FTRACE_STATUS_ABI_SHORT_EVENT_HEADER);
	probes_ftrace_table_release(&t);
}

/* Every prefix of a good page: no reads past it (ASan watches a heap copy
 * of exactly that size), and a clean status only when nothing was cut. */
TEST(probes_page_truncated)
{
	struct ftrace_table t;
	struct pgb b;
	uint8_t ev[128];
	CHECK_EQ(load_table(&t), 0);
	pg_init(&b, 7);
	pg_event(&b, 1, ev, make_switch(ev, 1, "x", 1, 0, "y", 2), false);
	pg_hdr(&b, 30, 3);
	pg_u32(&b, 2);
	pg_event(&b, 1, ev, make_print(ev, 3, "hello"), true);
	pg_finish(&b, 0);
	for (size_t len = 0; len <= 16 + b.pos; len++) {
		struct ftrace_page_iter it;
		struct ftrace_record r;
		uint8_t *copy = tb_memdup(b.page, len ? len : 1);
		int st = probes_ftrace_page_begin(&it, &t.layout, copy, len), count = 0;
		while (probes_ftrace_page_next(&it, &r))
			count++;
		tb_free(copy);
		if (len < 16) {
			CHECK_EQ(st, FTRACE_STATUS_ABI_INVALID_PAGE_HEADER);
		} else if (len == 16 + b.pos) {
			CHECK_EQ(it.status, FTRACE_STATUS_OK);
			CHECK_EQ(count, 2);
		} else {
			CHECK_EQ(it.status, FTRACE_STATUS_PARTIAL_PAGE_READ);
			CHECK(count <= 1);
		}
	}
	probes_ftrace_table_release(&t);
}

/* ---- encoding ----------------------------------------------------------- */

static const Perfetto__Protos__GenericFtraceEvent__Field *
gfield(const Perfetto__Protos__GenericFtraceEvent *g, const char *name)
{
	for (size_t i = 0; i < g->n_field; i++)
		if (strcmp(g->field[i]->name, name) == 0)
			return g->field[i];
	return NULL;
}

TEST(probes_encode_bundle_roundtrip)
{
	struct ftrace_table t;
	struct probes_ftrace_encode_stats st = {0};
	struct pb_writer w;
	struct pgb b;
	uint8_t ev[128], pages[4096 * 2];
	Perfetto__Protos__TracePacket *pkt = NULL;
	const Perfetto__Protos__FtraceEventBundle *bun;
	const Perfetto__Protos__GenericFtraceEvent__Field *gf;
	unsigned h;
	size_t n;

	CHECK_EQ(load_table(&t), 0);
	pg_init(&b, 1000);
	pg_event(&b, 1, ev, make_switch(ev, 10, "swapper/0", 0, 0, "tb-spin-1", 4242), false);
	pg_event(&b, 1, ev, make_print(ev, 4242, "C|4242|n|7"), false);
	pg_event(&b, 1, ev, make_generic(ev), false);
	n = make_switch(ev, 10, "x", 1, 0, "y", 2);
	((uint16_t *)(void *)ev)[0] = 999; /* an id the table does not know */
	pg_event(&b, 1, ev, n, false);
	pg_finish(&b, 1u << 31);
	memcpy(pages, b.page, 4096);
	/* The second page is cut after its first record's header. */
	pg_init(&b, 5000);
	pg_event(&b, 1, ev, make_switch(ev, 1, "x", 1, 0, "y", 2), false);
	pg_finish(&b, 0);
	memcpy(pages + 4096, b.page, 4096);

	pb_writer_init_growable(&w);
	h = pb_begin_nested(&w, PB_F_TracePacket_ftrace_events);
	CHECK_EQ(probes_ftrace_encode_bundle(&w, &t, 3, pages, 4096 + 16 + 8, &st), 3);
	pb_end_nested(&w, h);
	CHECK_EQ(pb_writer_error(&w), 0);
	CHECK_EQ(st.events, 3);
	CHECK_EQ(st.generic_events, 1);
	CHECK_EQ(st.unknown_events, 1);
	CHECK_EQ(st.lost_pages, 1);
	CHECK_EQ(st.parse_errors, 1);
	pkt = perfetto__protos__trace_packet__unpack(&pb_alloc, pb_writer_size(&w),
	                                             pb_writer_data(&w));
	pb_writer_release(&w);
	CHECK(pkt);
	CHECK_EQ(pkt->data_case, PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_EVENTS);
	bun = pkt->ftrace_events;
	CHECK_EQ(bun->cpu, 3);
	CHECK(bun->has_lost_events && bun->lost_events);
	CHECK_EQ(bun->n_error, 1);
	CHECK_EQ(bun->error[0]->status,
	         PERFETTO__PROTOS__FTRACE_PARSE_STATUS__FTRACE_STATUS_PARTIAL_PAGE_READ);
	CHECK_EQ(bun->n_event, 3);

	CHECK_UEQ(bun->event[0]->timestamp, 1001);
	CHECK_EQ(bun->event[0]->pid, 10);
	CHECK_EQ(bun->event[0]->event_case, PERFETTO__PROTOS__FTRACE_EVENT__EVENT_SCHED_SWITCH);
	CHECK_STR_EQ(bun->event[0]->sched_switch->prev_comm, "swapper/0");
	CHECK_EQ(bun->event[0]->sched_switch->prev_pid, 0);
	CHECK(bun->event[0]->sched_switch->has_prev_state);
	CHECK_STR_EQ(bun->event[0]->sched_switch->next_comm, "tb-spin-1");
	CHECK_EQ(bun->event[0]->sched_switch->next_pid, 4242);
	CHECK_EQ(bun->event[0]->sched_switch->next_prio, 120);

	CHECK_EQ(bun->event[1]->event_case, PERFETTO__PROTOS__FTRACE_EVENT__EVENT_PRINT);
	CHECK_STR_EQ(bun->event[1]->print->buf, "C|4242|n|7");
	CHECK_UEQ(bun->event[1]->print->ip, 0xffffffff81000000ull);

	CHECK_EQ(bun->event[2]->event_case, PERFETTO__PROTOS__FTRACE_EVENT__EVENT_GENERIC);
	CHECK_STR_EQ(bun->event[2]->generic->event_name, "tb_test");
	CHECK_EQ(bun->event[2]->generic->n_field, 7); /* blob (a struct) is skipped */
	CHECK((gf = gfield(bun->event[2]->generic, "delta")));
	CHECK_EQ(gf->int_value, -5);
	CHECK((gf = gfield(bun->event[2]->generic, "addr")));
	CHECK_UEQ(gf->uint_value, 0xdeadbeef);
	CHECK((gf = gfield(bun->event[2]->generic, "tag")));
	CHECK_STR_EQ(gf->str_value, "abc");
	CHECK((gf = gfield(bun->event[2]->generic, "path")));
	CHECK_STR_EQ(gf->str_value, "/bin/");
	CHECK((gf = gfield(bun->event[2]->generic, "rel")));
	CHECK_STR_EQ(gf->str_value, "xy");
	CHECK((gf = gfield(bun->event[2]->generic, "mac")));
	CHECK_STR_EQ(gf->str_value, "[1, 2, 3, 255]");
	protobuf_c_message_free_unpacked(&pkt->base, &pb_alloc);
	probes_ftrace_table_release(&t);
}

/* ---- compact_sched ------------------------------------------------------ */

static size_t make_waking(uint8_t *p, int32_t pid, uint8_t flags, const char *comm, int32_t wakee,
                          int32_t target_cpu)
{
	uint16_t type = 375;
	int32_t prio = 120;
	memset(p, 0, 36);
	memcpy(p, &type, 2);
	p[2] = flags;
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, comm, strlen(comm));
	memcpy(p + 24, &wakee, 4);
	memcpy(p + 28, &prio, 4);
	memcpy(p + 32, &target_cpu, 4);
	return 36;
}

/* Pages of NPG pages per cpu for 2 cpus: each cpu runs its own 4 threads
 * (tid 100 * (cpu + 1) + k, "tb-spin-<tid>"), switching between them in a
 * pseudo-random order with every prev_state kind and waking the next one
 * first most of the time (from the running thread, as the kernel does). */
#define CS_NPG 3
static void make_sched_pages(uint8_t pages[2][CS_NPG * 4096])
{
	uint32_t rnd = 12345;
	for (int cpu = 0; cpu < 2; cpu++) {
		int32_t running = 0, base = 100 * (cpu + 1);
		char running_comm[16] = "swapper/0";
		for (int pg = 0; pg < CS_NPG; pg++) {
			struct pgb b;
			uint8_t ev[128];
			pg_init(&b, 1000000ull * (uint64_t)(pg + 1) + (uint64_t)cpu * 333);
			while (b.pos + 2 * (64 + 4) + 40 < 4080) {
				static const int64_t states[] = {0, 1, 2, 0x100, 0x80, 1};
				int32_t next;
				char comm[16];
				rnd = rnd * 1103515245u + 12345u;
				next = base + (int32_t)(rnd >> 16) % 4;
				if (next == running)
					next = base + (next - base + 1) % 4;
				snprintf(comm, sizeof comm, "tb-spin-%d", next);
				if ((rnd >> 8) % 4 != 0)
					pg_event(&b, 300, ev,
					         make_waking(ev, running, (uint8_t)(rnd >> 4), comm,
					                     next, cpu),
					         false);
				pg_event(&b, 700, ev,
				         make_switch(ev, running, running_comm, running,
				                     states[(rnd >> 12) % 6], comm, next),
				         false);
				running = next;
				memcpy(running_comm, comm, sizeof comm);
			}
			pg_finish(&b, 0);
			memcpy(pages[cpu] + pg * 4096, b.page, 4096);
		}
	}
}

/* A trace of one FtraceEventBundle per cpu, encoded compact or not. */
static uint8_t *sched_trace(const struct ftrace_table *t, uint8_t pages[2][CS_NPG * 4096],
                            bool compact, size_t *len, struct probes_ftrace_encode_stats *st)
{
	struct ftrace_encode_opts o = {.compact_sched = compact};
	struct pb_writer w;
	pb_writer_init_growable(&w);
	for (uint32_t cpu = 0; cpu < 2; cpu++) {
		unsigned pkt = pb_begin_nested(&w, PB_F_Trace_packet), h;
		pb_put_uint32(&w, PB_F_TracePacket_trusted_packet_sequence_id, 1);
		h = pb_begin_nested(&w, PB_F_TracePacket_ftrace_events);
		probes_ftrace_encode_bundle_opts(&w, t, &o, cpu, pages[cpu], CS_NPG * 4096, st);
		pb_end_nested(&w, h);
		pb_end_nested(&w, pkt);
	}
	probes_ftrace_encode_opts_release(&o);
	return pb_writer_take(&w, len);
}

/* Append s to the NUL-terminated text in *v. */
VEC_DEFINE(text_vec, char);

static void text_add(struct text_vec *v, const char *s)
{
	size_t n = strlen(s);
	vec_reserve(v, n + 1);
	memcpy(v->data + v->len, s, n + 1);
	v->len += n;
}

/* Every row of sql as text, ";a|b;c|d" (tb_malloc'd). */
static char *rows_text(struct tp *tp, const char *sql)
{
	struct text_vec out = VEC_INIT;
	sqlite3_stmt *st = NULL;
	char err[256];
	text_add(&out, "");
	if (tp_prepare(tp, sql, &st, NULL, err, sizeof err) != SQLITE_OK || !st) {
		text_add(&out, "error: ");
		text_add(&out, err);
		return out.data;
	}
	while (sqlite3_step(st) == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *v = sqlite3_column_text(st, i);
			text_add(&out, i ? "|" : ";");
			text_add(&out, v ? (const char *)v : "NULL");
		}
	}
	sqlite3_finalize(st);
	return out.data;
}

static struct tp *load_trace(const uint8_t *p, size_t n)
{
	struct tp *tp = tp_new(NULL);
	if (tp_parse(tp, p, n) != 0 || tp_end_of_file(tp) != 0)
		test_report(__FILE__, __LINE__, "trace does not load: %s", tp_error(tp));
	return tp;
}

/* The same pages recorded with and without compact_sched import into the
 * same scheduling answers. Compact switches do not name the previous task,
 * so each cpu's first switch only tells who runs next: rows that start
 * before the last cpu's first switch are left out of the comparison. */
TEST(probes_compact_sched_same_answers)
{
	static uint8_t pages[2][CS_NPG * 4096];
	struct ftrace_table t;
	struct tb_err err = {0};
	struct probes_ftrace_encode_stats s1 = {0}, s2 = {0};
	static const char *const queries[] = {
	    "select ts, dur, cpu, t.tid, end_state, priority from sched join thread t using (utid) "
	    "where ts > %s order by ts, cpu",
	    "select ts, dur, cpu, t.tid, state, w.tid from thread_state s join thread t "
	    "using (utid) left join thread w on w.utid = s.waker_utid where ts > %s "
	    "order by ts, t.tid, state",
	    "select tid, name from thread order by tid",
	};
	uint8_t *plain, *compact;
	size_t n_plain, n_compact;
	struct tp *a, *b;

	CHECK_EQ(load_table(&t), 0);
	CHECK_EQ(probes_ftrace_table_add_format(&t, "sched", k_sched_waking, strlen(k_sched_waking),
	                                        &err),
	         0);
	make_sched_pages(pages);
	plain = sched_trace(&t, pages, false, &n_plain, &s1);
	compact = sched_trace(&t, pages, true, &n_compact, &s2);
	CHECK(plain && compact);
	CHECK_UEQ(s1.events, s2.events);
	CHECK_UEQ(s1.compact_events, 0);
	CHECK_UEQ(s2.compact_events, s2.events);
	CHECK(s1.events > 300);
	CHECK(n_compact * 4 < n_plain); /* the point of it */
	a = load_trace(plain, n_plain);
	b = load_trace(compact, n_compact);
	{
		/* The first switch of cpu 1 (the later one): its ts. */
		char *t0 = rows_text(a, "select max(ts) from (select min(ts) as ts from sched "
		                        "group by cpu)");
		for (size_t i = 0; i < TB_ARRAY_SIZE(queries); i++) {
			char sql[512], *ra, *rb;
			snprintf(sql, sizeof sql, queries[i], t0 + 1);
			ra = rows_text(a, sql);
			rb = rows_text(b, sql);
			CHECK(strlen(ra) > 1000 || i == 2);
			if (i == 1) /* runnable with a waker */
				CHECK(strstr(ra, "|R|1"));
			CHECK_STR_EQ(ra, rb);
			tb_free(ra);
			tb_free(rb);
		}
		tb_free(t0);
	}
	{
		/* Bounds come from imported rows: in the compact trace, the events
		 * before each cpu's first switch (dropped) do not count. */
		char *r = rows_text(b, "select trace_start() = (select min(ts) from ftrace_event), "
		                       "trace_start() > 1000000");
		CHECK_STR_EQ(r, ";1|1");
		tb_free(r);
	}
	tp_free(a);
	tp_free(b);
	tb_free(plain);
	tb_free(compact);
	probes_ftrace_table_release(&t);
}

/* A span writer over one buffer, `step` bytes at a time (so the encoder
 * never has room for its one-byte-size path), output contiguous. */
struct steps {
	uint8_t buf[16384];
	size_t step;
};

static int steps_next(struct pb_writer *w, size_t need)
{
	struct steps *st = w->ctx;
	size_t used = w->cur ? (size_t)(w->cur - st->buf) : 0;
	size_t n = st->step > need ? st->step : need;
	if (used + n > sizeof st->buf)
		return -ENOSPC;
	w->cur = st->buf + used;
	w->end = w->cur + n;
	return 0;
}

/* The direct one-byte-size path (room in the writer) and the nested-message
 * path (no room) encode the same values, extremes included. */
TEST(probes_encode_fast_path_matches)
{
	static struct steps sp = {.step = 24};
	struct ftrace_table t;
	struct tb_err err = {0};
	struct probes_ftrace_encode_stats s1 = {0}, s2 = {0};
	struct pb_writer fast, slow;
	struct pgb b;
	uint8_t ev[128];
	Perfetto__Protos__FtraceEventBundle *x, *y;
	uint8_t *px, *py;
	size_t nx, ny;

	CHECK_EQ(load_table(&t), 0);
	CHECK_EQ(probes_ftrace_table_add_format(&t, "sched", k_sched_waking, strlen(k_sched_waking),
	                                        &err),
	         0);
	pg_init(&b, 1000);
	pg_event(&b, 1, ev,
	         make_switch(ev, 7, "fifteen-chars-x", -1, (int64_t)0x7fffffffffffffffll,
	                     "sixteen-chars-xy", INT32_MIN),
	         false);
	pg_event(&b, 1, ev, make_switch(ev, 0, "", 0, -1, "a", 2147483647), false);
	pg_event(&b, 1, ev, make_waking(ev, -3, 0xff, "w", -42, -1), false);
	pg_event(&b, 1, ev, make_print(ev, 9, "not on the fast path"), false);
	pg_finish(&b, 0);

	pb_writer_init_growable(&fast);
	pb_writer_init_spans(&slow, steps_next, &sp);
	CHECK_EQ(probes_ftrace_encode_bundle(&fast, &t, 1, b.page, 4096, &s1), 4);
	CHECK_EQ(probes_ftrace_encode_bundle(&slow, &t, 1, b.page, 4096, &s2), 4);
	CHECK_EQ(pb_writer_error(&slow), 0);
	CHECK(pb_writer_size(&fast) < pb_writer_size(&slow)); /* one-byte sizes */
	x = perfetto__protos__ftrace_event_bundle__unpack(&pb_alloc, pb_writer_size(&fast),
	                                                  pb_writer_data(&fast));
	y = perfetto__protos__ftrace_event_bundle__unpack(&pb_alloc, pb_writer_size(&slow), sp.buf);
	CHECK(x && y);
	CHECK_EQ(x->n_event, 4);
	CHECK_EQ(x->event[0]->sched_switch->next_pid, INT32_MIN);
	CHECK_EQ(x->event[0]->sched_switch->prev_pid, -1);
	CHECK_STR_EQ(x->event[0]->sched_switch->next_comm, "sixteen-chars-xy");
	CHECK_EQ(x->event[1]->sched_switch->prev_state, -1);
	CHECK_EQ(x->event[2]->sched_waking->target_cpu, -1);
	CHECK_EQ(x->event[2]->pid, (uint32_t)-3);
	nx = perfetto__protos__ftrace_event_bundle__get_packed_size(x);
	ny = perfetto__protos__ftrace_event_bundle__get_packed_size(y);
	CHECK_EQ(nx, ny);
	px = tb_malloc(nx);
	py = tb_malloc(ny);
	perfetto__protos__ftrace_event_bundle__pack(x, px);
	perfetto__protos__ftrace_event_bundle__pack(y, py);
	CHECK_MEM_EQ(px, py, nx);
	tb_free(px);
	tb_free(py);
	perfetto__protos__ftrace_event_bundle__free_unpacked(x, &pb_alloc);
	perfetto__protos__ftrace_event_bundle__free_unpacked(y, &pb_alloc);
	pb_writer_release(&fast);
	pb_writer_release(&slow);
	probes_ftrace_table_release(&t);
}

TEST(probes_encode_stats)
{
	static const char text[] = "entries: 12\noverrun: 3\ncommit overrun: 1\nbytes: 4096\n"
	                           "oldest event ts:  5311.500000\nnow ts:  5311.737388\n"
	                           "dropped events: 2\nread events: 9\n";
	struct ftrace_cpu_stats cpus[2] = {{.cpu = 0}, {.cpu = 1}};
	struct pb_writer w;
	Perfetto__Protos__FtraceStats *fs;
	unsigned h;

	probes_ftrace_parse_cpu_stats(text, strlen(text), &cpus[1]);
	CHECK_EQ(cpus[1].cpu, 1);
	CHECK_EQ(cpus[1].entries, 12);
	CHECK_EQ(cpus[1].overrun, 3);
	CHECK_EQ(cpus[1].commit_overrun, 1);
	CHECK_EQ(cpus[1].bytes_read, 4096);
	CHECK_EQ(cpus[1].dropped_events, 2);
	CHECK_EQ(cpus[1].read_events, 9);
	CHECK(cpus[1].has_read_events);
	CHECK_DBL_EQ(cpus[1].now_ts, 5311.737388);
	probes_ftrace_parse_cpu_stats(text, 20, &cpus[0]); /* up to "overrun: 3" */
	CHECK(!cpus[0].has_read_events);

	pb_writer_init_growable(&w);
	h = pb_begin_nested(&w, PB_F_TracePacket_ftrace_stats);
	probes_ftrace_encode_stats(&w, FTRACE_STATS_END_OF_TRACE, cpus, 2);
	pb_end_nested(&w, h);
	{
		Perfetto__Protos__TracePacket *pkt = perfetto__protos__trace_packet__unpack(
		    &pb_alloc, pb_writer_size(&w), pb_writer_data(&w));
		pb_writer_release(&w);
		CHECK(pkt);
		CHECK_EQ(pkt->data_case, PERFETTO__PROTOS__TRACE_PACKET__DATA_FTRACE_STATS);
		fs = pkt->ftrace_stats;
		CHECK_EQ(fs->phase, PERFETTO__PROTOS__FTRACE_STATS__PHASE__END_OF_TRACE);
		CHECK_EQ(fs->n_cpu_stats, 2);
		CHECK_EQ(fs->cpu_stats[1]->cpu, 1);
		CHECK_EQ(fs->cpu_stats[1]->overrun, 3);
		CHECK_EQ(fs->cpu_stats[1]->entries, 12);
		CHECK_EQ(fs->cpu_stats[1]->dropped_events, 2);
		protobuf_c_message_free_unpacked(&pkt->base, &pb_alloc);
	}
}

/* ---- tasks mentioned (pids.c) -------------------------------------------- */

static const char k_task_rename[] =
    "name: task_rename\nID: 800\nformat:\n" COMMON_FIELDS
    "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:char oldcomm[16];\toffset:12;\tsize:16;\tsigned:0;\n"
    "\tfield:char newcomm[16];\toffset:28;\tsize:16;\tsigned:0;\n"
    "\tfield:short oom_score_adj;\toffset:44;\tsize:2;\tsigned:1;\n";

/* A sched_waking payload (the k_sched_waking layout) by pid, of wakee. */
static size_t make_waking_of(uint8_t *p, int32_t pid, int32_t wakee)
{
	uint16_t type = 375;
	memset(p, 0, 36);
	memcpy(p, &type, 2);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, "w", 1);
	memcpy(p + 24, &wakee, 4);
	return 36;
}

static size_t make_rename(uint8_t *p, int32_t pid)
{
	uint16_t type = 800;
	memset(p, 0, 48);
	memcpy(p, &type, 2);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 12, "old", 3);
	memcpy(p + 28, "new", 3);
	return 48;
}

/* A page: 10 switches to 20, 20 to the idle task, 20 wakes 40000 twice,
 * 30 renames itself. */
static void pids_page(struct pgb *b)
{
	uint8_t ev[96];
	pg_init(b, 1000);
	pg_event(b, 1, ev, make_switch(ev, 10, "a", 10, 1, "b", 20), false);
	pg_event(b, 1, ev, make_switch(ev, 20, "b", 20, 1, "swapper/0", 0), false);
	pg_event(b, 1, ev, make_waking_of(ev, 20, 40000), false);
	pg_event(b, 1, ev, make_waking_of(ev, 20, 40000), false);
	pg_event(b, 1, ev, make_rename(ev, 30), false);
	pg_finish(b, 0);
}

/* Every event's common_pid and pid_t fields, compact or not, once each and
 * in order of appearance; the idle task never; task_rename's task as
 * renamed; a cleared set collects again. */
TEST(probes_encode_collects_pids)
{
	static const int32_t want[] = {10, 20, 40000, 30};
	struct tb_err err = {0};
	struct ftrace_table t;
	struct ftrace_pids pids;
	struct probes_ftrace_encode_stats st = {0};
	struct pb_writer w;
	struct pgb b;

	CHECK_EQ(load_table(&t), 0);
	CHECK_EQ(probes_ftrace_table_add_format(&t, "sched", k_sched_waking, strlen(k_sched_waking),
	                                        &err),
	         0);
	CHECK_EQ(
	    probes_ftrace_table_add_format(&t, "task", k_task_rename, strlen(k_task_rename), &err),
	    0);
	CHECK_EQ(probes_ftrace_table_find(&t, 372)->n_pid_offs, 3);
	CHECK_EQ(probes_ftrace_table_find(&t, 800)->n_pid_offs, 2);
	CHECK(probes_ftrace_table_find(&t, 800)->is_rename);
	CHECK_EQ(probes_ftrace_table_find(&t, 5)->n_pid_offs, 1);
	pids_page(&b);
	memset(&pids, 0, sizeof pids);
	for (int compact = 0; compact < 2; compact++) {
		struct ftrace_encode_opts o = {.compact_sched = compact, .pids = &pids};
		pb_writer_init_growable(&w);
		CHECK_EQ(
		    probes_ftrace_encode_bundle_opts(&w, &t, &o, 0, b.page, sizeof b.page, &st), 5);
		CHECK_EQ(pids.pids.len, TB_ARRAY_SIZE(want));
		for (size_t i = 0; i < pids.pids.len && i < TB_ARRAY_SIZE(want); i++)
			CHECK_EQ(pids.pids.data[i], want[i]);
		CHECK_EQ(pids.renamed.len, 1);
		CHECK_EQ(pids.renamed.data[0], 30);
		probes_ftrace_pids_clear(&pids);
		CHECK_EQ(pids.pids.len, 0);
		CHECK_EQ(pids.renamed.len, 0);
		probes_ftrace_encode_opts_release(&o);
		pb_writer_release(&w);
	}
	probes_ftrace_pids_release(&pids);
	probes_ftrace_table_release(&t);
}

/* A record too short for all its pids still gives the ones it holds (and
 * not the one cut off), and a record whose pids are all seen but one adds
 * that one: the encoder's one-branch "all seen" path must not skip either. */
TEST(probes_encode_collects_pids_short_record)
{
	static const int32_t want[] = {50, 70, 60};
	struct ftrace_table t;
	struct ftrace_pids pids;
	struct probes_ftrace_encode_stats st = {0};
	struct ftrace_encode_opts o = {.pids = &pids};
	struct pb_writer w;
	struct pgb b;
	uint8_t ev[96];

	CHECK_EQ(load_table(&t), 0);
	CHECK_EQ(probes_ftrace_table_find(&t, 372)->pid_end, 60);
	pg_init(&b, 1000);
	make_switch(ev, 50, "c", 50, 1, "d", 60);
	pg_event(&b, 1, ev, 56, false); /* next_pid (offset 56) cut off */
	pg_event(&b, 1, ev, make_switch(ev, 50, "c", 50, 1, "e", 70), false);
	pg_event(&b, 1, ev, make_switch(ev, 70, "e", 70, 1, "d", 60), false);
	pg_finish(&b, 0);
	memset(&pids, 0, sizeof pids);
	pb_writer_init_growable(&w);
	CHECK_EQ(probes_ftrace_encode_bundle_opts(&w, &t, &o, 0, b.page, sizeof b.page, &st), 3);
	CHECK_EQ(pids.pids.len, TB_ARRAY_SIZE(want));
	for (size_t i = 0; i < pids.pids.len && i < TB_ARRAY_SIZE(want); i++)
		CHECK_EQ(pids.pids.data[i], want[i]);
	probes_ftrace_encode_opts_release(&o);
	pb_writer_release(&w);
	probes_ftrace_pids_release(&pids);
	probes_ftrace_table_release(&t);
}

/* ---- tracefs state on a fake tree --------------------------------------- */

static int put_file(const char *dir, const char *rel, const char *text)
{
	char p[512];
	int fd;
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	tb_write_all(fd, text, strlen(text));
	close(fd);
	return 0;
}

static char *get_file(const char *dir, const char *rel)
{
	char p[512], *buf = NULL;
	size_t len;
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return tb_read_file(p, &buf, &len, 4096, NULL) == 0 ? buf : NULL;
}

static void rm_tree(const char *dir)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "  cannot remove %s\n", dir);
}

TEST(probes_tracefs_restore_fake)
{
	char dir[] = "/tmp/tb-probes-XXXXXX", p[256], *v;
	struct ftrace_tracefs fs;
	CHECK(mkdtemp(dir));
	snprintf(p, sizeof p, "%s/events/sched/sched_switch", dir);
	{
		char cmd[1024];
		snprintf(cmd, sizeof cmd, "mkdir -p '%s' '%s/per_cpu/cpu0' '%s/per_cpu/cpu1'", p,
		         dir, dir);
		CHECK(system(cmd) == 0);
	}
	CHECK(put_file(dir, "tracing_on", "1\n") == 0);
	CHECK(put_file(dir, "trace_clock", "[local] global boot\n") == 0);
	CHECK(put_file(dir, "buffer_size_kb", "7 (expanded: 1408)\n") == 0);
	CHECK(put_file(dir, "events/sched/sched_switch/enable", "0*\n") == 0);
	CHECK(put_file(dir, "available_events", "sched:sched_switch\nftrace:print\n") == 0);

	CHECK_EQ(probes_ftrace_tracefs_open(&fs, "/nonexistent-tb", false), -ENOENT);
	CHECK_EQ(probes_ftrace_tracefs_open(&fs, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_num_cpus(&fs), 2);
	CHECK_EQ(probes_ftrace_tracefs_set_tracing_on(&fs, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_set_tracing_on(&fs, true), 0); /* saved once */
	CHECK_EQ(probes_ftrace_tracefs_set_clock(&fs, "boot"), 0);
	CHECK_EQ(probes_ftrace_tracefs_set_clock(&fs, "nope"), -EINVAL);
	CHECK_EQ(probes_ftrace_tracefs_set_buffer_size_kb(&fs, 4096), 0);
	CHECK_EQ(probes_ftrace_tracefs_enable_event(&fs, "sched", "sched_switch", true), 0);
	CHECK_EQ(probes_ftrace_tracefs_enable_event(&fs, "..", "x", true), -EINVAL);
	/* ftrace/print has no enable file: always on while tracing. */
	CHECK_EQ(probes_ftrace_tracefs_enable_event(&fs, "ftrace", "print", true), 0);
	CHECK_EQ(probes_ftrace_tracefs_enable_event(&fs, "sched", "nope", true), -ENOENT);
	CHECK_EQ(fs.saved.len, 4);
	CHECK((v = get_file(dir, "buffer_size_kb")));
	CHECK_STR_EQ(v, "4096");
	tb_free(v);
	CHECK_EQ(probes_ftrace_tracefs_restore(&fs), 0);
	CHECK((v = get_file(dir, "tracing_on")));
	CHECK_STR_EQ(v, "1");
	tb_free(v);
	CHECK((v = get_file(dir, "trace_clock")));
	CHECK_STR_EQ(v, "local");
	tb_free(v);
	CHECK((v = get_file(dir, "buffer_size_kb")));
	CHECK_STR_EQ(v, "1408");
	tb_free(v);
	CHECK((v = get_file(dir, "events/sched/sched_switch/enable")));
	CHECK_STR_EQ(v, "0");
	tb_free(v);
	probes_ftrace_tracefs_close(&fs);
	rm_tree(dir);
}

/* A fake tracefs with header_page, sched_switch and sched_waking (disabled),
 * one cpu with an empty trace_pipe_raw, and the control files. */
static int make_fake_tracefs(char *dir)
{
	char cmd[1024];
	if (!mkdtemp(dir))
		return -1;
	snprintf(cmd, sizeof cmd,
	         "mkdir -p '%s/events/sched/sched_switch' '%s/events/sched/sched_waking' "
	         "'%s/per_cpu/cpu0'",
	         dir, dir, dir);
	if (system(cmd) != 0)
		return -1;
	return put_file(dir, "tracing_on", "1\n") | put_file(dir, "trace_clock", "[local] boot\n") |
	       put_file(dir, "buffer_size_kb", "1408\n") |
	       put_file(dir, "current_tracer", "nop\n") | put_file(dir, "trace", "") |
	       put_file(dir, "events/enable", "X\n") |
	       put_file(dir, "events/header_page", k_header_page) |
	       put_file(dir, "events/sched/sched_switch/format", k_sched_switch) |
	       put_file(dir, "events/sched/sched_switch/enable", "0\n") |
	       put_file(dir, "events/sched/sched_waking/format", k_sched_waking) |
	       put_file(dir, "events/sched/sched_waking/enable", "0\n") |
	       put_file(dir, "per_cpu/cpu0/trace_pipe_raw", "") |
	       put_file(dir, "per_cpu/cpu0/stats", "entries: 0\noverrun: 0\n");
}

/* A serialized DataSourceConfig{ftrace_config{ftrace_events...,
 * buffer_size_kb, [drain_period_ms]}} (drain_ms 0: unset). */
static uint8_t *ftrace_cfg_drain(const char *const *events, size_t n, uint32_t kb,
                                 uint32_t drain_ms, size_t *len)
{
	struct pb_writer w;
	unsigned h;
	pb_writer_init_growable(&w);
	h = pb_begin_nested(&w, PB_F_DataSourceConfig_ftrace_config);
	for (size_t i = 0; i < n; i++)
		pb_put_string(&w, PB_F_FtraceConfig_ftrace_events, events[i]);
	pb_put_uint32(&w, PB_F_FtraceConfig_buffer_size_kb, kb);
	if (drain_ms)
		pb_put_uint32(&w, PB_F_FtraceConfig_drain_period_ms, drain_ms);
	pb_end_nested(&w, h);
	return pb_writer_take(&w, len);
}

static uint8_t *ftrace_cfg(const char *const *events, size_t n, uint32_t kb, size_t *len)
{
	return ftrace_cfg_drain(events, n, kb, 0, len);
}

static void ignore_commit(void *ctx, const struct tracing_commit *c)
{
	(void)ctx, (void)c;
}

static bool file_is(const char *dir, const char *rel, const char *want)
{
	char *v = get_file(dir, rel);
	bool ok = v && strcmp(v, want) == 0;
	if (!ok)
		printf("  %s is '%s', want '%s'\n", rel, v ? v : "(none)", want);
	tb_free(v);
	return ok;
}

/* Two overlapping linux.ftrace instances: the second keeps the first one's
 * buffer size; an event both use stays enabled until the last of them
 * stops; when the last stops, every setting is back. */
TEST(probes_ftrace_overlapping_sessions)
{
	static const char *const ev_a[] = {"sched/sched_switch", "sched/sched_waking"};
	static const char *const ev_b[] = {"sched/sched_switch"};
	char dir[] = "/tmp/tb-probes-XXXXXX";
	struct tb_err err = {0};
	struct tracing_smb *smb = NULL;
	struct tracing_writer *wa, *wb;
	struct probes_ftrace *a, *b;
	struct loop *l;
	uint8_t *ca, *cb;
	size_t la, lb;

	CHECK_EQ(make_fake_tracefs(dir), 0);
	CHECK((l = loop_new(&err)));
	CHECK_EQ(tracing_smb_create(64 * 4096, 4096, &smb, &err), 0);
	wa = tracing_writer_new(smb, 1, 0, ignore_commit, NULL);
	wb = tracing_writer_new(smb, 2, 0, ignore_commit, NULL);
	ca = ftrace_cfg(ev_a, 2, 4096, &la);
	cb = ftrace_cfg(ev_b, 1, 512, &lb);
	a = probes_ftrace_new(l, wa, ca, la, dir);
	b = probes_ftrace_new(l, wb, cb, lb, dir);

	CHECK_EQ(probes_ftrace_start(a), 0);
	CHECK(file_is(dir, "events/sched/sched_switch/enable", "1"));
	CHECK(file_is(dir, "events/sched/sched_waking/enable", "1"));
	CHECK(file_is(dir, "buffer_size_kb", "4096"));
	CHECK(file_is(dir, "tracing_on", "1"));
	CHECK_EQ(probes_ftrace_start(b), 0);
	CHECK(file_is(dir, "buffer_size_kb", "4096")); /* the first one's */
	probes_ftrace_stop(a);
	CHECK(file_is(dir, "events/sched/sched_switch/enable", "1")); /* b still uses it */
	CHECK(file_is(dir, "events/sched/sched_waking/enable", "0"));
	CHECK(file_is(dir, "tracing_on", "1"));
	/* a restarts while b runs: it takes its references again. */
	CHECK_EQ(probes_ftrace_start(a), 0);
	CHECK(file_is(dir, "events/sched/sched_waking/enable", "1"));
	probes_ftrace_stop(b);
	CHECK(file_is(dir, "events/sched/sched_switch/enable", "1"));
	probes_ftrace_free(a);
	CHECK(file_is(dir, "events/sched/sched_switch/enable", "0"));
	CHECK(file_is(dir, "events/sched/sched_waking/enable", "0"));
	CHECK(file_is(dir, "buffer_size_kb", "1408"));
	CHECK(file_is(dir, "trace_clock", "local"));
	CHECK(file_is(dir, "tracing_on", "1"));
	/* Another tracefs cannot be used while one is. */
	{
		char other[] = "/tmp/tb-probes-XXXXXX";
		struct probes_ftrace *c;
		CHECK_EQ(make_fake_tracefs(other), 0);
		c = probes_ftrace_new(l, wa, ca, la, other);
		CHECK_EQ(probes_ftrace_start(b), 0);
		CHECK_EQ(probes_ftrace_start(c), -EBUSY);
		CHECK(file_is(other, "events/sched/sched_switch/enable", "0\n")); /* untouched */
		probes_ftrace_free(c);
		rm_tree(other);
	}
	probes_ftrace_free(b);
	CHECK(file_is(dir, "events/sched/sched_switch/enable", "0"));
	tracing_writer_free(wa);
	tracing_writer_free(wb);
	tracing_smb_free(smb);
	loop_free(l);
	tb_free(ca);
	tb_free(cb);
	rm_tree(dir);
}

/* Two traced_probes on one tracefs (overlapping captures): the first claim
 * keeps the top level, the second gets a private instance and writes there
 * only; once the first closes, the top level can be claimed again. (A fake
 * instance folder stands in for the kernel's mkdir.) */
TEST(probes_tracefs_claim_private_instance)
{
	char dir[] = "/tmp/tb-probes-XXXXXX";
	char inst[256], cmd[1024], lock[300];
	struct ftrace_tracefs a, b;
	CHECK_EQ(make_fake_tracefs(dir), 0);
	snprintf(inst, sizeof inst, "%s/instances/tracebox-%d", dir, (int)getpid());
	snprintf(cmd, sizeof cmd,
	         "mkdir -p '%s' && cp -r '%s/events' '%s/per_cpu' '%s/tracing_on' "
	         "'%s/buffer_size_kb' '%s/trace_clock' '%s/'",
	         inst, dir, dir, dir, dir, dir, inst);
	CHECK_EQ(system(cmd), 0);
	snprintf(lock, sizeof lock, "%s.tb-saved.lock", dir);
	CHECK_EQ(probes_ftrace_tracefs_open(&a, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_claim(&a), 0);
	CHECK_EQ(probes_ftrace_tracefs_open(&b, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_claim(&b), 1);
	CHECK(strstr(b.root, "/instances/tracebox-") != NULL);
	CHECK_EQ(probes_ftrace_tracefs_set_buffer_size_kb(&b, 4096), 0);
	CHECK(file_is(dir, "buffer_size_kb", "1408\n")); /* the top level: untouched */
	CHECK_EQ(probes_ftrace_tracefs_set_buffer_size_kb(&a, 2048), 0);
	CHECK(file_is(dir, "buffer_size_kb", "2048"));
	probes_ftrace_tracefs_close(&b);
	probes_ftrace_tracefs_close(&a);
	CHECK(file_is(dir, "buffer_size_kb", "1408"));
	CHECK_EQ(probes_ftrace_tracefs_open(&a, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_claim(&a), 0); /* released with the first */
	probes_ftrace_tracefs_close(&a);
	unlink(lock);
	rm_tree(dir);
}

/* A config asking for more than 64 MiB per CPU gets 64 MiB (a consumer of a
 * root traced_probes cannot pin unbounded kernel memory). */
TEST(probes_ftrace_buffer_size_capped)
{
	static const char *const ev[] = {"sched/sched_switch"};
	char dir[] = "/tmp/tb-probes-XXXXXX";
	struct tb_err err = {0};
	struct tracing_smb *smb = NULL;
	struct tracing_writer *w;
	struct probes_ftrace *f;
	struct loop *l;
	uint8_t *cfg;
	size_t len;

	CHECK_EQ(make_fake_tracefs(dir), 0);
	CHECK((l = loop_new(&err)));
	CHECK_EQ(tracing_smb_create(64 * 4096, 4096, &smb, &err), 0);
	w = tracing_writer_new(smb, 1, 0, ignore_commit, NULL);
	cfg = ftrace_cfg(ev, 1, 4u << 20, &len); /* 4 GiB per CPU */
	f = probes_ftrace_new(l, w, cfg, len, dir);
	CHECK_EQ(probes_ftrace_start(f), 0);
	CHECK(file_is(dir, "buffer_size_kb", "65536"));
	probes_ftrace_free(f);
	CHECK(file_is(dir, "buffer_size_kb", "1408"));
	tracing_writer_free(w);
	tracing_smb_free(smb);
	loop_free(l);
	tb_free(cfg);
	rm_tree(dir);
}

/* --reset-ftrace / --cleanup-after-crash: Perfetto's HardResetFtraceState. */
struct seen_pids {
	int calls;
	int32_t pids[8];
	size_t n;
	size_t n_renamed;
};

static void on_pids(void *ctx, const int32_t *renamed, size_t n_renamed, const int32_t *pids,
                    size_t n_pids)
{
	struct seen_pids *s = ctx;
	s->calls++;
	s->n_renamed += n_renamed;
	for (size_t i = 0; i < n_pids && s->n < TB_ARRAY_SIZE(s->pids); i++)
		s->pids[s->n++] = pids[i];
}

/* A drain hands the tasks of the events it wrote to the pids callback
 * (for the session's process_stats), once per batch; nothing read, no
 * call. */
TEST(probes_ftrace_pids_callback)
{
	static const char *const ev[] = {"sched/sched_switch"};
	char dir[] = "/tmp/tb-probes-XXXXXX";
	char path[256];
	struct tb_err err = {0};
	struct tracing_smb *smb = NULL;
	struct tracing_writer *w;
	struct probes_ftrace *ft;
	struct seen_pids seen = {0};
	struct loop *l;
	struct pgb b;
	uint8_t *cfg;
	size_t len;
	FILE *f;

	CHECK_EQ(make_fake_tracefs(dir), 0);
	CHECK((l = loop_new(&err)));
	CHECK_EQ(tracing_smb_create(64 * 4096, 4096, &smb, &err), 0);
	w = tracing_writer_new(smb, 1, 0, ignore_commit, NULL);
	cfg = ftrace_cfg(ev, 1, 512, &len);
	ft = probes_ftrace_new(l, w, cfg, len, dir);
	probes_ftrace_set_pids_cb(ft, on_pids, &seen);
	CHECK_EQ(probes_ftrace_start(ft), 0);
	probes_ftrace_drain(ft);
	CHECK_EQ(seen.calls, 0);
	/* The kernel fills cpu0's buffer with a page (waking and rename are
	 * not enabled: unknown here, so not counted). */
	pids_page(&b);
	snprintf(path, sizeof path, "%s/per_cpu/cpu0/trace_pipe_raw", dir);
	CHECK((f = fopen(path, "wb")));
	if (f) {
		fwrite(b.page, 1, sizeof b.page, f);
		fclose(f);
	}
	probes_ftrace_drain(ft);
	CHECK_EQ(seen.calls, 1);
	CHECK_EQ(seen.n, 2);
	CHECK_EQ(seen.pids[0], 10);
	CHECK_EQ(seen.pids[1], 20);
	CHECK_EQ(seen.n_renamed, 0);
	probes_ftrace_drain(ft); /* nothing new */
	CHECK_EQ(seen.calls, 1);
	probes_ftrace_free(ft);
	tracing_writer_free(w);
	tracing_smb_free(smb);
	loop_free(l);
	tb_free(cfg);
	rm_tree(dir);
}

/* Append n copies of page to cpu0's trace_pipe_raw in the fake tree. */
static void append_pages(const char *dir, const struct pgb *b, int n)
{
	char path[256];
	FILE *f;
	snprintf(path, sizeof path, "%s/per_cpu/cpu0/trace_pipe_raw", dir);
	if (!(f = fopen(path, "ab")))
		return;
	for (int i = 0; i < n; i++)
		fwrite(b->page, 1, sizeof b->page, f);
	fclose(f);
}

/* A fake tracefs and one linux.ftrace instance on sched/sched_switch
 * (started), its writer in an SMB of smb_pages 4 KiB pages nobody reads. */
struct ds_fixture {
	char dir[32];
	struct loop *l;
	struct tracing_smb *smb;
	struct tracing_writer *w;
	struct probes_ftrace *ft;
	const struct probes_ftrace_encode_stats *st;
	uint8_t *cfg;
};

static int ds_fixture_init(struct ds_fixture *f, size_t smb_pages, uint32_t drain_ms)
{
	static const char *const ev[] = {"sched/sched_switch"};
	struct tb_err err = {0};
	size_t len;

	memset(f, 0, sizeof *f);
	snprintf(f->dir, sizeof f->dir, "/tmp/tb-probes-XXXXXX");
	if (make_fake_tracefs(f->dir) != 0 || !(f->l = loop_new(&err)) ||
	    tracing_smb_create(smb_pages * 4096, 4096, &f->smb, &err) != 0)
		return -1;
	f->w = tracing_writer_new(f->smb, 1, 0, ignore_commit, NULL);
	f->cfg = ftrace_cfg_drain(ev, 1, 4096, drain_ms, &len);
	f->ft = probes_ftrace_new(f->l, f->w, f->cfg, len, f->dir);
	f->st = probes_ftrace_stats(f->ft);
	return probes_ftrace_start(f->ft);
}

static void ds_fixture_release(struct ds_fixture *f)
{
	probes_ftrace_free(f->ft);
	tracing_writer_free(f->w);
	tracing_smb_free(f->smb);
	loop_free(f->l);
	tb_free(f->cfg);
	rm_tree(f->dir);
}

/* A periodic drain stops at FTRACE_DS_MAX_PAGES a CPU and goes on at the
 * next loop iteration, not a drain period later (a CPU writing more than
 * that a period would otherwise overrun its kernel buffer: a context-switch
 * storm did); a flush reads past it, up to the buffer size. */
TEST(probes_ftrace_drain_continues)
{
	struct ds_fixture f;
	struct pgb b;

	CHECK_EQ(ds_fixture_init(&f, 64, 50), 0);
	pids_page(&b); /* two sched_switch events a page */
	append_pages(f.dir, &b, 2 * FTRACE_DS_MAX_PAGES + 10);
	CHECK_EQ(f.st->pages, 0);
	CHECK(loop_run_once(f.l, 5000) > 0); /* the drain period */
	CHECK_EQ(f.st->pages, FTRACE_DS_MAX_PAGES);
	CHECK(loop_run_once(f.l, 0) > 0); /* no wait: the continuation */
	CHECK_EQ(f.st->pages, 2 * FTRACE_DS_MAX_PAGES);
	CHECK(loop_run_once(f.l, 0) > 0);
	CHECK_EQ(f.st->pages, 2 * FTRACE_DS_MAX_PAGES + 10);
	CHECK_EQ(f.st->events, 2 * f.st->pages);
	CHECK_EQ(loop_run_once(f.l, 0), 0); /* emptied: nothing posted */
	/* A flush takes all there is at once. */
	append_pages(f.dir, &b, FTRACE_DS_MAX_PAGES + 100);
	probes_ftrace_drain(f.ft);
	CHECK_EQ(f.st->pages, 3 * FTRACE_DS_MAX_PAGES + 110);
	CHECK_EQ(f.st->events, 2 * f.st->pages);
	ds_fixture_release(&f);
}

/* Every record the kernel hands out is walked, wanted or not: at stop the
 * records match the kernel's "read events" growth over the run (the check
 * that showed the context-switch storm's missing switches were never
 * written by the kernel), and without that line there is no check. */
TEST(probes_ftrace_kernel_accounting)
{
	struct ds_fixture f;
	struct pgb b;

	CHECK_EQ(ds_fixture_init(&f, 64, 0), 0);
	probes_ftrace_stop(f.ft);
	CHECK_EQ(put_file(f.dir, "per_cpu/cpu0/stats", "entries: 0\nread events: 100\n"), 0);
	CHECK_EQ(probes_ftrace_start(f.ft), 0);
	pids_page(&b); /* 5 records: 2 switches, 2 wakings, a rename */
	append_pages(f.dir, &b, 3);
	CHECK_EQ(put_file(f.dir, "per_cpu/cpu0/stats", "entries: 0\nread events: 115\n"), 0);
	probes_ftrace_stop(f.ft);
	CHECK_EQ(f.st->events, 6);
	CHECK_EQ(f.st->records, 15);
	CHECK(f.st->kernel_read_known);
	CHECK_EQ(f.st->kernel_read_events, 15);
	/* A second run counts from its own start. */
	CHECK_EQ(probes_ftrace_start(f.ft), 0);
	append_pages(f.dir, &b, 1);
	CHECK_EQ(put_file(f.dir, "per_cpu/cpu0/stats", "entries: 0\nread events: 120\n"), 0);
	probes_ftrace_stop(f.ft);
	CHECK(f.st->kernel_read_known);
	CHECK_EQ(f.st->kernel_read_events, 5);
	CHECK_EQ(f.st->records, 20);
	/* No "read events" line (kernels before 3.x): nothing to compare. */
	CHECK_EQ(put_file(f.dir, "per_cpu/cpu0/stats", "entries: 0\noverrun: 0\n"), 0);
	CHECK_EQ(probes_ftrace_start(f.ft), 0);
	probes_ftrace_stop(f.ft);
	CHECK(!f.st->kernel_read_known);
	ds_fixture_release(&f);
}

/* A drain waits for the service to make room in the SMB before a batch
 * (Perfetto's writers stall; ours would drop the bundle), and gives up
 * after FTRACE_DS_STALL_MS so that a service that stopped reading cannot
 * stop the loop. No service here: the chunks a big packet filled stay
 * taken. */
TEST(probes_ftrace_smb_stall)
{
	static uint8_t filler[20 * 1024];
	struct ds_fixture f;
	struct pgb b;
	int64_t t0, ms;

	CHECK_EQ(ds_fixture_init(&f, 8, 0), 0);
	/* The start's FtraceStats packet holds one chunk. */
	CHECK_EQ(tracing_smb_free_bytes(f.smb), 7 * 4096);
	probes_ftrace_set_smb(f.ft, f.smb);
	pids_page(&b);
	/* Room (all 32 KiB free, half is needed): no wait. */
	append_pages(f.dir, &b, 1);
	t0 = tb_mono_ns();
	probes_ftrace_drain(f.ft);
	ms = (tb_mono_ns() - t0) / 1000000;
	CHECK(ms < FTRACE_DS_STALL_MS / 2);
	CHECK_EQ(f.st->events, 2);
	/* 20 KiB more in chunks nobody takes: less than half is free. */
	pb_put_bytes(tracing_writer_begin_packet(f.w), PB_F_TracePacket_ftrace_events, filler,
	             sizeof filler);
	tracing_writer_end_packet(f.w);
	CHECK(tracing_smb_free_bytes(f.smb) < 4 * 4096);
	append_pages(f.dir, &b, 1);
	t0 = tb_mono_ns();
	probes_ftrace_drain(f.ft);
	ms = (tb_mono_ns() - t0) / 1000000;
	CHECK(ms >= FTRACE_DS_STALL_MS - 50);
	CHECK(ms < 4 * FTRACE_DS_STALL_MS);
	CHECK_EQ(f.st->events, 4); /* then written all the same */
	ds_fixture_release(&f);
}

/* ---- symbolize_ksyms -------------------------------------------------------- */

static const char k_blocked_reason[] =
    "name: sched_blocked_reason\nID: 380\nformat:\n" COMMON_FIELDS
    "\tfield:pid_t pid;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:void* caller;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:bool io_wait;\toffset:24;\tsize:1;\tsigned:0;\n";

static const char k_kallsyms[] = "ffffffff81000000 T _stext\n"
                                 "ffffffff81234000 T io_schedule\n"
                                 "ffffffff81300000 t rwsem_down_read_slowpath\n"
                                 "ffffffff81400000 d some_data\n"
                                 "ffffffffc0001000 t ext4_sync_file\t[ext4]\n";

static size_t make_blocked(uint8_t *p, int32_t pid, uint64_t caller)
{
	uint16_t type = 380;
	memset(p, 0, 28);
	memcpy(p, &type, 2);
	memcpy(p + 4, &pid, 4);
	memcpy(p + 8, &pid, 4);
	memcpy(p + 16, &caller, 8);
	p[24] = 1;
	return 28;
}

/* What a writer committed, read out of the SMB as traced would (patches
 * applied), then reassembled into a Trace. */
struct sink {
	struct tracing_smb *smb;
	struct tracing_chunk_header hdr[64];
	uint8_t *payload[64];
	size_t len[64];
	struct pb_writer trace;
};

static void sink_commit(void *ctx, const struct tracing_commit *c)
{
	struct sink *s = ctx;
	if (c->has_chunk) {
		struct tracing_chunk_header h;
		uint8_t buf[TRACING_MAX_PAGE_SIZE];
		size_t len;
		if (tracing_smb_read_chunk(s->smb, c->page, c->chunk, &h, buf, sizeof buf, &len) ==
		        0 &&
		    h.chunk_id < 64) {
			tb_free(s->payload[h.chunk_id]);
			s->hdr[h.chunk_id] = h;
			s->payload[h.chunk_id] = tb_memdup(buf, len);
			s->len[h.chunk_id] = len;
		}
	}
	for (size_t i = 0; i < c->n_patches; i++) {
		const struct tracing_patch *p = &c->patches[i];
		if (p->chunk_id < 64 && s->payload[p->chunk_id])
			tracing_chunk_apply_patch(s->payload[p->chunk_id], s->len[p->chunk_id],
			                          p->offset, p->data, 4);
	}
}

static int sink_packet(void *ctx, const uint8_t *data, size_t len, bool dropped)
{
	struct sink *s = ctx;
	(void)dropped;
	pb_put_bytes(&s->trace, PB_F_Trace_packet, data, len);
	return 0;
}

static uint8_t *sink_take(struct sink *s, size_t *len)
{
	struct tracing_reassembler r;
	tracing_reassembler_init(&r);
	for (int i = 0; i < 64; i++) {
		if (s->payload[i])
			tracing_reassembler_push(&r, &s->hdr[i], s->payload[i], s->len[i],
			                         sink_packet, s);
		tb_free(s->payload[i]);
		s->payload[i] = NULL;
	}
	tracing_reassembler_release(&r);
	return pb_writer_take(&s->trace, len);
}

/* Record a page of two tasks blocking in D state (sched_switch, then
 * sched_blocked_reason with a caller inside io_schedule) through the
 * linux.ftrace data source on a fake tracefs, with symbolize_ksyms as
 * given; the trace as the service would have it. */
static uint8_t *record_blocked(bool symbolize, size_t *len)
{
	static const char *const ev[] = {"sched/sched_switch", "sched/sched_blocked_reason"};
	char dir[] = "/tmp/tb-probes-XXXXXX", path[256];
	struct tb_err err = {0};
	struct sink s = {0};
	struct tracing_writer *w;
	struct probes_ftrace *ft;
	struct pb_writer cw;
	struct loop *l;
	struct pgb b;
	uint8_t ev_buf[96], *cfg, *out;
	size_t cfg_len;
	unsigned h;

	if (make_fake_tracefs(dir) != 0)
		return NULL;
	snprintf(path, sizeof path, "mkdir -p '%s/events/sched/sched_blocked_reason'", dir);
	if (system(path) != 0 ||
	    put_file(dir, "events/sched/sched_blocked_reason/format", k_blocked_reason) ||
	    put_file(dir, "events/sched/sched_blocked_reason/enable", "0\n") ||
	    put_file(dir, "kallsyms", k_kallsyms))
		return NULL;
	l = loop_new(&err);
	tracing_smb_create(64 * 4096, 4096, &s.smb, &err);
	pb_writer_init_growable(&s.trace);
	w = tracing_writer_new(s.smb, 1, 0, sink_commit, &s);
	pb_writer_init_growable(&cw);
	h = pb_begin_nested(&cw, PB_F_DataSourceConfig_ftrace_config);
	pb_put_string(&cw, PB_F_FtraceConfig_ftrace_events, ev[0]);
	pb_put_string(&cw, PB_F_FtraceConfig_ftrace_events, ev[1]);
	pb_put_uint32(&cw, PB_F_FtraceConfig_buffer_size_kb, 512);
	if (symbolize)
		pb_put_bool(&cw, PB_F_FtraceConfig_symbolize_ksyms, true);
	pb_end_nested(&cw, h);
	cfg = pb_writer_take(&cw, &cfg_len);
	ft = probes_ftrace_new(l, w, cfg, cfg_len, dir);
	snprintf(path, sizeof path, "%s/kallsyms", dir);
	probes_ftrace_set_kallsyms(ft, path);
	probes_ftrace_start(ft);

	pg_init(&b, 1000);
	pg_event(&b, 10, ev_buf, make_switch(ev_buf, 5, "z", 5, 0, "a", 10), false);
	pg_event(&b, 10, ev_buf, make_switch(ev_buf, 10, "a", 10, 2, "b", 20), false);
	pg_event(&b, 1, ev_buf, make_blocked(ev_buf, 10, 0xffffffff81234567ull), false);
	pg_event(&b, 10, ev_buf, make_switch(ev_buf, 20, "b", 20, 2, "c", 30), false);
	pg_event(&b, 1, ev_buf, make_blocked(ev_buf, 20, 0xffffffff81234567ull), false);
	pg_event(&b, 10, ev_buf, make_switch(ev_buf, 30, "c", 30, 2, "a", 10), false);
	pg_event(&b, 1, ev_buf, make_blocked(ev_buf, 30, 0x1000), false); /* no symbol */
	pg_finish(&b, 0);
	append_pages(dir, &b, 1);
	probes_ftrace_drain(ft);
	probes_ftrace_free(ft);
	tracing_writer_flush(w);
	out = sink_take(&s, len);
	tracing_writer_free(w);
	tracing_smb_free(s.smb);
	loop_free(l);
	tb_free(cfg);
	rm_tree(dir);
	return out;
}

/* symbolize_ksyms: sched_blocked_reason's caller is written as an index
 * (never the address), named in the packet's interned kernel_symbols, and
 * the trace processor shows the function in thread_state; without it, the
 * index alone (no function), as Perfetto. */
TEST(probes_ftrace_symbolize_ksyms)
{
	uint8_t addr[10], *trace;
	size_t n, alen = (size_t)(pb_encode_varint(addr, 0xffffffff81234567ull) - addr);
	struct tp *tp;
	char *r;

	trace = record_blocked(true, &n);
	CHECK(trace != NULL);
	if (!trace)
		return;
	CHECK(memmem(trace, n, addr, alen) == NULL); /* KASLR stays private */
	CHECK(memmem(trace, n, "io_schedule", 11) != NULL);
	tp = load_trace(trace, n);
	r = rows_text(tp,
	              "select t.tid, s.state, s.io_wait, s.blocked_function from thread_state s "
	              "join thread t using (utid) where s.state = 'D' order by t.tid");
	CHECK_STR_EQ(r, ";10|D|1|io_schedule;20|D|1|io_schedule;30|D|1|NULL");
	tb_free(r);
	tp_free(tp);
	tb_free(trace);

	trace = record_blocked(false, &n);
	CHECK(trace != NULL);
	if (!trace)
		return;
	CHECK(memmem(trace, n, addr, alen) == NULL);
	CHECK(memmem(trace, n, "io_schedule", 11) == NULL);
	tp = load_trace(trace, n);
	r = rows_text(tp, "select t.tid, s.io_wait, s.blocked_function from thread_state s "
	                  "join thread t using (utid) where s.state = 'D' order by t.tid");
	CHECK_STR_EQ(r, ";10|1|NULL;20|1|NULL;30|1|NULL");
	tb_free(r);
	tp_free(tp);
	tb_free(trace);
}

TEST(probes_tracefs_hard_reset_fake)
{
	char dir[] = "/tmp/tb-probes-XXXXXX";
	struct ftrace_tracefs fs;
	CHECK_EQ(make_fake_tracefs(dir), 0);
	CHECK(put_file(dir, "current_tracer", "function\n") == 0);
	CHECK(put_file(dir, "trace", "old data\n") == 0);
	CHECK_EQ(probes_ftrace_tracefs_open(&fs, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_reset(&fs), 0);
	CHECK_EQ(fs.saved.len, 0); /* nothing to restore: this is the restore */
	CHECK(file_is(dir, "tracing_on", "0"));
	CHECK(file_is(dir, "buffer_size_kb", "4"));
	CHECK(file_is(dir, "events/enable", "0"));
	CHECK(file_is(dir, "current_tracer", "nop"));
	CHECK(file_is(dir, "trace", ""));
	probes_ftrace_tracefs_close(&fs);
	rm_tree(dir);
}

/* A dead pid: a child that has exited and been reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/* The record of saved settings outlives a crash: the next traced_probes
 * (--reset-ftrace / --cleanup-after-crash) writes them back, and leaves a
 * live owner's record alone. */
TEST(probes_tracefs_crash_record)
{
	char dir[] = "/tmp/tb-probes-XXXXXX", rec[FTRACE_PATH_MAX], text[256];
	struct ftrace_tracefs fs;
	struct tb_err err = {0};
	size_t n = 9;
	char *v;

	CHECK_EQ(make_fake_tracefs(dir), 0);
	probes_ftrace_tracefs_record_path(dir, rec, sizeof rec);
	CHECK_EQ(probes_ftrace_tracefs_open(&fs, dir, false), 0);
	CHECK_STR_EQ(fs.record, rec);
	CHECK_EQ(probes_ftrace_tracefs_set_buffer_size_kb(&fs, 4096), 0);
	CHECK_EQ(probes_ftrace_tracefs_enable_event(&fs, "sched", "sched_switch", true), 0);
	CHECK(tb_read_file(rec, &v, &n, 4096, NULL) == 0);
	snprintf(text, sizeof text,
	         "pid %ld\nbuffer_size_kb\t1408\nevents/sched/sched_switch/enable\t0\n",
	         (long)getpid());
	CHECK_STR_EQ(v, text);
	tb_free(v);
	probes_ftrace_tracefs_close(&fs); /* a clean stop removes it */
	CHECK(access(rec, F_OK) != 0);

	/* A crashed owner: its changes are still in tracefs, its record too. */
	CHECK(put_file(dir, "buffer_size_kb", "4096\n") == 0);
	CHECK(put_file(dir, "events/sched/sched_switch/enable", "1\n") == 0);
	snprintf(text, sizeof text,
	         "pid %ld\nbuffer_size_kb\t1408\nevents/sched/sched_switch/enable\t0\n",
	         (long)getppid());
	CHECK(put_file("/", rec, text) == 0);
	CHECK_EQ(probes_ftrace_cleanup(dir, true, &err), -EBUSY); /* the owner lives */
	CHECK(access(rec, F_OK) == 0);
	CHECK(file_is(dir, "buffer_size_kb", "4096\n"));
	snprintf(text, sizeof text,
	         "pid %ld\nbuffer_size_kb\t1408\nevents/sched/sched_switch/enable\t0\n",
	         (long)dead_pid());
	CHECK(put_file("/", rec, text) == 0);
	CHECK_EQ(probes_ftrace_tracefs_open(&fs, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_recover(&fs, &n), 0);
	CHECK_EQ(n, 2);
	probes_ftrace_tracefs_close(&fs);
	CHECK(access(rec, F_OK) != 0);
	CHECK(file_is(dir, "buffer_size_kb", "1408"));
	CHECK(file_is(dir, "events/sched/sched_switch/enable", "0"));

	/* No record: --reset-ftrace leaves tracefs alone, --cleanup-after-crash
	 * hard resets it. */
	CHECK_EQ(probes_ftrace_cleanup(dir, false, &err), 0);
	CHECK(file_is(dir, "tracing_on", "1\n"));
	CHECK_EQ(probes_ftrace_cleanup(dir, true, &err), 0);
	CHECK(file_is(dir, "tracing_on", "0"));
	CHECK(file_is(dir, "buffer_size_kb", "4"));
	rm_tree(dir);
}

/* The record may live in /tmp: writing it never follows a planted symlink,
 * and recovery obeys only our own, private, regular record and only the
 * keys we save. */
TEST(probes_tracefs_record_untrusted)
{
	char dir[] = "/tmp/tb-probes-XXXXXX", rec[FTRACE_PATH_MAX], tmp[FTRACE_PATH_MAX + 8];
	char victim[FTRACE_PATH_MAX + 8], text[256];
	struct ftrace_tracefs fs;
	struct stat st;
	size_t n = 9;

	CHECK_EQ(make_fake_tracefs(dir), 0);
	probes_ftrace_tracefs_record_path(dir, rec, sizeof rec);
	snprintf(tmp, sizeof tmp, "%s.tmp", rec);
	snprintf(victim, sizeof victim, "%s.victim", rec);
	CHECK(put_file("/", victim, "precious\n") == 0);
	CHECK_EQ(symlink(victim, tmp), 0);
	CHECK_EQ(probes_ftrace_tracefs_open(&fs, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_set_buffer_size_kb(&fs, 4096), 0);
	CHECK(file_is("/", victim, "precious\n"));
	CHECK_EQ(lstat(rec, &st), 0);
	CHECK(S_ISREG(st.st_mode));
	CHECK_EQ(st.st_mode & 0777, 0600);
	probes_ftrace_tracefs_close(&fs);
	unlink(tmp);

	/* Someone else's kind of record: writable by others, or a symlink. */
	snprintf(text, sizeof text, "pid %ld\nbuffer_size_kb\t1408\n", (long)dead_pid());
	CHECK(put_file(dir, "buffer_size_kb", "4096\n") == 0);
	CHECK(put_file("/", rec, text) == 0);
	CHECK_EQ(chmod(rec, 0666), 0);
	CHECK_EQ(probes_ftrace_tracefs_open(&fs, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_recover(&fs, &n), -EPERM);
	CHECK_EQ(n, 0);
	probes_ftrace_tracefs_close(&fs);
	CHECK(file_is(dir, "buffer_size_kb", "4096\n"));
	unlink(rec);
	CHECK(put_file("/", victim, text) == 0);
	CHECK_EQ(symlink(victim, rec), 0);
	CHECK_EQ(probes_ftrace_tracefs_open(&fs, dir, false), 0);
	CHECK(probes_ftrace_tracefs_recover(&fs, &n) < 0);
	CHECK_EQ(n, 0);
	probes_ftrace_tracefs_close(&fs);
	CHECK(file_is(dir, "buffer_size_kb", "4096\n"));
	unlink(rec);

	/* Keys we never save are skipped; the ones we do are restored. */
	snprintf(text, sizeof text,
	         "pid %ld\ncurrent_tracer\tfunction\nevents/sched/filter\tx\n"
	         "buffer_size_kb\t1408\n",
	         (long)dead_pid());
	CHECK(put_file("/", rec, text) == 0);
	CHECK_EQ(probes_ftrace_tracefs_open(&fs, dir, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_recover(&fs, &n), 0);
	CHECK_EQ(n, 1);
	probes_ftrace_tracefs_close(&fs);
	CHECK(file_is(dir, "buffer_size_kb", "1408"));
	CHECK(file_is(dir, "current_tracer", "nop\n"));
	unlink(victim);
	rm_tree(dir);
}

/* ---- live capture (root and tracefs only) ------------------------------- */

struct snapshot {
	char *on, *clock, *size, *enable;
};

static void snap_take(struct ftrace_tracefs *fs, struct snapshot *s)
{
	size_t len;
	probes_ftrace_tracefs_read(fs, "tracing_on", &s->on, &len);
	probes_ftrace_tracefs_read(fs, "trace_clock", &s->clock, &len);
	probes_ftrace_tracefs_read(fs, "buffer_size_kb", &s->size, &len);
	probes_ftrace_tracefs_read(fs, "events/sched/sched_switch/enable", &s->enable, &len);
}

static void snap_free(struct snapshot *s)
{
	tb_free(s->on), tb_free(s->clock), tb_free(s->size), tb_free(s->enable);
}

/* The effective per-CPU size: "7 (expanded: 1408)" is 1408. */
static unsigned long snap_size(const char *s)
{
	const char *e = strstr(s, "expanded: ");
	return strtoul(e ? e + 10 : s, NULL, 10);
}

/* Same settings; sizes may differ by the kernel's rounding to pages (an
 * unexpanded buffer comes back expanded: it cannot be un-expanded). */
static bool snap_same(const struct snapshot *a, const struct snapshot *b)
{
	unsigned long sa, sb;
	if (!a->on || !b->on || !a->clock || !b->clock || !a->enable || !b->enable || !a->size ||
	    !b->size)
		return false;
	sa = snap_size(a->size), sb = snap_size(b->size);
	return strcmp(a->on, b->on) == 0 && strcmp(a->clock, b->clock) == 0 &&
	       a->enable[0] == b->enable[0] && (sa > sb ? sa - sb : sb - sa) <= 16;
}

/* Read every available page of every CPU; count sched_switch records and
 * those where our own pid switched out or in. */
static int drain(struct ftrace_tracefs *fs, const struct ftrace_table *t, int ncpu, int *events,
                 int *ours, int *bad, size_t *encoded)
{
	const struct ftrace_event_format *f = NULL;
	uint8_t *page = tb_malloc(t->layout.page_size);
	int32_t me = (int32_t)getpid();
	for (size_t i = 0; i < t->events.len; i++)
		if (strcmp(t->events.data[i]->name, "sched_switch") == 0)
			f = t->events.data[i];
	for (int cpu = 0; cpu < ncpu && f; cpu++) {
		int fd = probes_ftrace_tracefs_open_pipe_raw(fs, cpu);
		if (fd < 0)
			continue;
		for (int pages = 0; pages < 4096; pages++) {
			ssize_t n = read(fd, page, t->layout.page_size);
			struct ftrace_page_iter it;
			struct ftrace_record r;
			struct pb_writer w;
			struct probes_ftrace_encode_stats st = {0};
			if (n <= 0)
				break;
			probes_ftrace_page_begin(&it, &t->layout, page, (size_t)n);
			while (probes_ftrace_page_next(&it, &r)) {
				uint64_t prev = 0, next = 0;
				if (r.event_id != f->id)
					continue;
				(*events)++;
				if (!probes_ftrace_field_int(
				        probes_ftrace_format_field(f, "prev_pid"), r.data, r.len,
				        &prev) ||
				    !probes_ftrace_field_int(
				        probes_ftrace_format_field(f, "next_pid"), r.data, r.len,
				        &next) ||
				    (int64_t)prev < 0 || (int64_t)next < 0 || prev > 4194304 ||
				    next > 4194304)
					(*bad)++;
				if ((int32_t)prev == me || (int32_t)next == me)
					(*ours)++;
			}
			pb_writer_init_growable(&w);
			*encoded +=
			    probes_ftrace_encode_bundle(&w, t, (uint32_t)cpu, page, (size_t)n, &st);
			pb_writer_release(&w);
		}
		close(fd);
	}
	tb_free(page);
	return 0;
}

/* The capture itself; the caller restores and frees whatever happens. */
static void live_capture(struct ftrace_tracefs *fs, struct ftrace_table *t)
{
	int events = 0, ours = 0, bad = 0, ncpu = probes_ftrace_tracefs_num_cpus(fs);
	size_t encoded = 0;

	CHECK(ncpu > 0);
	CHECK_EQ(probes_ftrace_tracefs_set_tracing_on(fs, false), 0);
	CHECK_EQ(probes_ftrace_tracefs_set_buffer_size_kb(fs, 1024),
	         0); /* also empties the buffers */
	CHECK_EQ(probes_ftrace_tracefs_enable_event(fs, "sched", "sched_switch", true), 0);
	CHECK_EQ(probes_ftrace_tracefs_set_tracing_on(fs, true), 0);
	for (int i = 0; i < 20; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(probes_ftrace_tracefs_write(fs, "tracing_on", "0"), 0);
	drain(fs, t, ncpu, &events, &ours, &bad, &encoded);
	CHECK(events > 0);
	CHECK(ours >= 2);
	CHECK_EQ(bad, 0);
	CHECK(encoded >= (size_t)events);
}

TEST(probes_live_sched_switch)
{
	struct ftrace_tracefs fs;
	struct ftrace_table t;
	struct snapshot before = {0}, after = {0};
	int rc, lock;

	if (geteuid() != 0)
		TEST_SKIP("not root");
	if (probes_ftrace_tracefs_open(&fs, NULL, true) < 0) {
		test_skip("%s", fs.err.msg);
		probes_ftrace_tracefs_close(&fs);
		return;
	}
	/* Test suites of other checkouts may run this at the same time. */
	lock = open("/tmp/tb-ftrace-live.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (lock >= 0)
		(void)flock(lock, LOCK_EX);
	probes_ftrace_table_init(&t);
	snap_take(&fs, &before);
	rc = probes_ftrace_table_load_header(&t, &fs);
	if (rc == 0)
		rc = probes_ftrace_table_load_event(&t, &fs, "sched", "sched_switch");
	if (rc < 0) {
		test_skip("%s", fs.err.msg);
	} else {
		live_capture(&fs, &t);
		if (probes_ftrace_tracefs_restore(&fs) < 0)
			test_report(__FILE__, __LINE__, "restore failed: %s", fs.err.msg);
		snap_take(&fs, &after);
		if (!snap_same(&before, &after))
			test_report(__FILE__, __LINE__, "tracefs not restored: on %s/%s size %s/%s",
			            before.on, after.on, before.size, after.size);
	}
	snap_free(&before);
	snap_free(&after);
	probes_ftrace_table_release(&t);
	probes_ftrace_tracefs_close(&fs);
	if (lock >= 0)
		close(lock);
}
