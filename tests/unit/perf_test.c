/*
 * Unit tests for components/perf: the ABI constants against the host's
 * <linux/perf_event.h>, ring reading (wraparound, truncated and corrupt
 * records), maps parsing, build ids from ELF images written here, rel_pc
 * math, kallsyms, the emitted packets decoded back with pb, and a live
 * perf_event_open sampling run when this process is allowed to do it.
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "test.h"

#include "base.h"
#include "pb.h"
#include "pb_fields.h"
#include "perf_int.h"
#include "trace_processor.h"

TEST(perf_abi_matches_kernel_headers)
{
	struct perf_event_attr a;
	CHECK_EQ(PERF_ATTR_SIZE, PERF_ATTR_SIZE_VER5);
	CHECK_EQ(offsetof(struct perf_attr, clockid), offsetof(struct perf_event_attr, clockid));
	CHECK_EQ(offsetof(struct perf_attr, sample_max_stack),
	         offsetof(struct perf_event_attr, sample_max_stack));
	CHECK_EQ(offsetof(struct perf_attr, flags),
	         offsetof(struct perf_event_attr, read_format) + 8);
	CHECK_EQ(PERF_MMAP_DATA_HEAD_OFF, offsetof(struct perf_event_mmap_page, data_head));
	CHECK_EQ(PERF_MMAP_DATA_TAIL_OFF, offsetof(struct perf_event_mmap_page, data_tail));
	CHECK_UEQ(PERF_CTX_KERNEL, (uint64_t)PERF_CONTEXT_KERNEL);
	CHECK_UEQ(PERF_CTX_USER, (uint64_t)PERF_CONTEXT_USER);
	CHECK_UEQ(PERF_CTX_MAX, (uint64_t)PERF_CONTEXT_MAX);
	CHECK_EQ(PERF_RECORD_TYPE_SAMPLE, PERF_RECORD_SAMPLE);
	CHECK_EQ(PERF_RECORD_TYPE_LOST, PERF_RECORD_LOST);
	CHECK_EQ(PERF_SAMPLE_TYPE_DEFAULT,
	         PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN);
	CHECK_EQ(PERF_IOC_ENABLE, PERF_EVENT_IOC_ENABLE);
	CHECK_EQ(PERF_IOC_DISABLE, PERF_EVENT_IOC_DISABLE);
	/* flag bit positions */
	memset(&a, 0, sizeof a);
	a.disabled = 1, a.exclude_kernel = 1, a.freq = 1, a.exclude_callchain_kernel = 1;
	a.use_clockid = 1, a.exclude_hv = 1;
	uint64_t flags;
	memcpy(&flags, (const uint8_t *)&a + offsetof(struct perf_attr, flags), 8);
	CHECK_UEQ(flags, 1ull << PERF_FLAG_BIT_DISABLED | 1ull << PERF_FLAG_BIT_EXCLUDE_KERNEL |
	                     1ull << PERF_FLAG_BIT_FREQ |
	                     1ull << PERF_FLAG_BIT_EXCLUDE_CALLCHAIN_KERNEL |
	                     1ull << PERF_FLAG_BIT_USE_CLOCKID | 1ull << PERF_FLAG_BIT_EXCLUDE_HV);
}

/* ---- synthetic rings ----------------------------------------------------- */

/* Build a sample record (TID|TIME|CPU|CALLCHAIN) in out; returns its size. */
static size_t make_sample(uint8_t *out, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
                          const uint64_t *chain, size_t nr)
{
	size_t size = 8 + 8 + 8 + 8 + 8 + nr * 8;
	uint32_t type = PERF_RECORD_TYPE_SAMPLE, misc_size = (uint32_t)size << 16 | 2;
	uint64_t n = nr;
	uint32_t res = 0;
	memcpy(out, &type, 4);
	memcpy(out + 4, &misc_size, 4);
	memcpy(out + 8, &pid, 4);
	memcpy(out + 12, &tid, 4);
	memcpy(out + 16, &time, 8);
	memcpy(out + 24, &cpu, 4);
	memcpy(out + 28, &res, 4);
	memcpy(out + 32, &n, 8);
	memcpy(out + 40, chain, nr * 8);
	return size;
}

static size_t make_lost(uint8_t *out, uint64_t lost)
{
	uint32_t type = PERF_RECORD_TYPE_LOST, misc_size = 24u << 16;
	uint64_t id = 1;
	memcpy(out, &type, 4);
	memcpy(out + 4, &misc_size, 4);
	memcpy(out + 8, &id, 8);
	memcpy(out + 16, &lost, 8);
	return 24;
}

struct collected {
	int samples, lost_recs;
	uint64_t lost;
	uint32_t pid[8], tid[8];
	uint64_t time[8];
	uint64_t kern[8][4], user[8][4];
	size_t n_kern[8], n_user[8];
	bool has_user[8];
};

static void collect(void *ctx, const struct perf_record *r)
{
	struct collected *c = ctx;
	if (r->kind == PERF_REC_LOST) {
		c->lost_recs++;
		c->lost += r->lost;
		return;
	}
	int i = c->samples++;
	if (i >= 8)
		return;
	c->pid[i] = r->pid, c->tid[i] = r->tid, c->time[i] = r->time;
	c->n_kern[i] = r->n_kernel, c->n_user[i] = r->n_user;
	c->has_user[i] = r->has_user_section;
	for (size_t k = 0; k < r->n_kernel && k < 4; k++)
		c->kern[i][k] = r->kernel_ips[k];
	for (size_t k = 0; k < r->n_user && k < 4; k++)
		c->user[i][k] = r->user_ips[k];
}

/* Write bytes into a ring of size sz at counter pos, wrapping. */
static void ring_put(uint8_t *data, uint64_t sz, uint64_t pos, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		data[(pos + i) & (sz - 1)] = p[i];
}

TEST(perf_ring_reads_samples_across_wrap)
{
	uint8_t data[256], rec[256];
	volatile uint64_t head, tail;
	struct perf_ring r;
	struct perf_ring_stats st;
	struct collected c;
	const uint64_t chain1[] = {PERF_CTX_KERNEL,
	                           0xffffffff81000010ull,
	                           0xffffffff81000020ull,
	                           PERF_CTX_USER,
	                           0x401000,
	                           0x401100,
	                           0x401200};
	const uint64_t chain2[] = {PERF_CTX_USER, 0x7f0000001000ull};
	const uint64_t chain3[] = {PERF_CTX_KERNEL, 0xffffffff81000030ull}; /* a kthread */
	uint64_t pos = 1000 * 256 + 200; /* 56 bytes before the end of the data */
	size_t n;

	memset(data, 0xee, sizeof data);
	memset(&st, 0, sizeof st);
	memset(&c, 0, sizeof c);
	tail = pos;
	n = make_sample(rec, 10, 11, 123456789, 1, chain1, TB_ARRAY_SIZE(chain1)); /* 96 bytes */
	ring_put(data, 256, pos, rec, n), pos += n;
	n = make_lost(rec, 7);
	ring_put(data, 256, pos, rec, n), pos += n;
	n = make_sample(rec, 20, 21, 987654321, 0, chain2, TB_ARRAY_SIZE(chain2));
	ring_put(data, 256, pos, rec, n), pos += n;
	n = make_sample(rec, 2, 2, 987654322, 0, chain3, TB_ARRAY_SIZE(chain3));
	ring_put(data, 256, pos, rec, n), pos += n;
	head = pos;
	perf_ring_init_raw(&r, &head, &tail, data, 256, PERF_SAMPLE_TYPE_DEFAULT);
	CHECK_UEQ(perf_ring_read(&r, 0, collect, &c, &st), pos - 1000 * 256 - 200);
	perf_ring_release(&r);
	CHECK_UEQ(tail, head);
	CHECK_EQ(c.samples, 3);
	CHECK_EQ(c.lost_recs, 1);
	CHECK_EQ(c.lost, 7);
	CHECK_EQ(st.samples, 3);
	CHECK_EQ(st.lost_records, 7);
	CHECK_EQ(st.bad_records, 0);
	CHECK_EQ(c.pid[0], 10);
	CHECK_EQ(c.tid[0], 11);
	CHECK_UEQ(c.time[0], 123456789);
	CHECK_EQ(c.n_kern[0], 2);
	CHECK_EQ(c.n_user[0], 3);
	CHECK_UEQ(c.kern[0][1], 0xffffffff81000020ull);
	CHECK_UEQ(c.user[0][0], 0x401000);
	CHECK_UEQ(c.user[0][2], 0x401200);
	CHECK_EQ(c.pid[1], 20);
	CHECK_EQ(c.n_kern[1], 0);
	CHECK_EQ(c.n_user[1], 1);
	CHECK_UEQ(c.user[1][0], 0x7f0000001000ull);
	CHECK(c.has_user[0] && c.has_user[1]);
	CHECK(!c.has_user[2]); /* no user section: a kernel thread */
	CHECK_EQ(c.n_kern[2], 1);
}

TEST(perf_ring_max_bytes_and_empty)
{
	uint8_t data[512] = {0}, rec[128];
	volatile uint64_t head = 0, tail = 0;
	struct perf_ring r;
	struct perf_ring_stats st = {0};
	struct collected c = {0};
	const uint64_t chain[] = {PERF_CTX_USER, 0x1000};
	uint64_t pos = 0;
	for (int i = 0; i < 3; i++) {
		size_t n = make_sample(rec, 1, 1, (uint64_t)i, 0, chain, 2);
		ring_put(data, 512, pos, rec, n), pos += n;
	}
	perf_ring_init_raw(&r, &head, &tail, data, 512, PERF_SAMPLE_TYPE_DEFAULT);
	CHECK_UEQ(perf_ring_read(&r, 0, collect, &c, &st), 0); /* head not published yet */
	head = pos;
	CHECK_UEQ(perf_ring_read(&r, 1, collect, &c, &st), pos / 3);
	CHECK_EQ(c.samples, 1);
	CHECK_UEQ(perf_ring_read(&r, 0, collect, &c, &st), 2 * pos / 3);
	CHECK_EQ(c.samples, 3);
	CHECK_UEQ(c.time[2], 2);
	perf_ring_release(&r);
}

/* On a 32-bit kernel data_head wraps at 4 GiB (the kernel's counters are
 * longs) while the tail we stored has not: the record across the wrap is
 * read, not thrown away as corrupt counters. */
TEST(perf_ring_32bit_kernel_head_wraps)
{
	uint8_t data[256] = {0}, rec[128];
	volatile uint64_t head, tail = 0xfffffff0ull;
	struct perf_ring r;
	struct perf_ring_stats st = {0};
	struct collected c = {0};
	uint64_t chain[] = {PERF_CTX_USER, 0x401000};
	size_t n = make_sample(rec, 3, 4, 77, 0, chain, TB_ARRAY_SIZE(chain));

	ring_put(data, 256, tail, rec, n);
	head = (uint32_t)(tail + n);
	perf_ring_init_raw(&r, &head, &tail, data, 256, PERF_SAMPLE_TYPE_DEFAULT);
	CHECK_UEQ(perf_ring_read(&r, 0, collect, &c, &st), n);
	perf_ring_release(&r);
	CHECK_EQ(st.bad_records, 0);
	CHECK_EQ(c.samples, 1);
	CHECK_UEQ(c.time[0], 77);
	CHECK_UEQ(c.user[0][0], 0x401000);
	CHECK_UEQ(tail, head); /* the kernel's counter from now on */
}

TEST(perf_ring_rejects_bad_records)
{
	uint8_t data[256] = {0}, rec[128];
	volatile uint64_t head, tail = 0;
	struct perf_ring r;
	struct perf_ring_stats st = {0};
	struct collected c = {0};
	const uint64_t chain[] = {PERF_CTX_USER, 0x1000, 0x2000};
	size_t n = make_sample(rec, 1, 2, 3, 0, chain, 3);
	uint64_t big = 1000;

	/* a callchain count larger than the record: skipped, reading goes on */
	memcpy(rec + 32, &big, 8);
	ring_put(data, 256, 0, rec, n);
	n = make_sample(rec + n, 5, 6, 7, 0, chain, 3), ring_put(data, 256, 64, rec + 64, n);
	head = 64 + n;
	perf_ring_init_raw(&r, &head, &tail, data, 256, PERF_SAMPLE_TYPE_DEFAULT);
	perf_ring_read(&r, 0, collect, &c, &st);
	CHECK_EQ(st.bad_records, 1);
	CHECK_EQ(c.samples, 1);
	CHECK_EQ(c.pid[0], 5);

	/* a header whose size runs past data_head: the rest is dropped */
	uint32_t ms = 200u << 16;
	memcpy(data + (tail & 255) + 4, &ms, 4);
	data[tail & 255] = PERF_RECORD_TYPE_SAMPLE;
	head = tail + 64;
	perf_ring_read(&r, 0, collect, &c, &st);
	CHECK_EQ(st.bad_records, 2);
	CHECK_UEQ(tail, head);

	/* size 0 and an odd size */
	memset(data, 0, sizeof data);
	head = tail + 16;
	perf_ring_read(&r, 0, collect, &c, &st);
	CHECK_EQ(st.bad_records, 3);
	/* head further than the ring from tail */
	head = tail + 4096;
	perf_ring_read(&r, 0, collect, &c, &st);
	CHECK_EQ(st.bad_records, 4);
	CHECK_UEQ(tail, head);
	perf_ring_release(&r);

	/* the parser alone: truncated fixed fields, unsupported sample bits */
	struct perf_record pr;
	uint64_t ips[2 * PERF_MAX_FRAMES];
	n = make_sample(rec, 1, 2, 3, 0, chain, 3);
	CHECK_EQ(perf_record_parse(rec, n, PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), 0);
	CHECK_EQ(perf_record_parse(rec, n - 8, PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), -EINVAL);
	CHECK_EQ(perf_record_parse(rec, n, PERF_SAMPLE_TYPE_DEFAULT | PERF_ST_READ, &pr, ips),
	         -EINVAL);
	CHECK_EQ(perf_record_parse(rec, 4, PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), -EINVAL);
}

/* ---- maps, ELF, rel_pc ------------------------------------------------------ */

TEST(perf_maps_parse_and_find)
{
	static const char text[] =
	    "7f0000002000-7f0000004000 r-xp 00001000 fd:01 42      /usr/lib/libfoo.so\n"
	    "00400000-00401000 r--p 00000000 fd:01 7 /bin/my prog\n"
	    "00401000-00402000 r-xp 00001000 fd:01 7 /bin/my prog\n"
	    "garbage line\n"
	    "7ffd0000-7ffd1000 rw-p 00000000 00:00 0                  [stack]\n"
	    "7fff0000-7fff1000 rw-p 00000000 00:00 0\n";
	struct perf_maps m = {0};
	const struct perf_mapping *p;
	CHECK_EQ(perf_maps_parse(&m, text, sizeof text - 1), 0);
	CHECK_EQ(m.n, 5);
	CHECK_EQ(m.bad_lines, 1);
	CHECK_UEQ(m.v[0].start, 0x400000);
	CHECK_STR_EQ(m.v[1].path, "/bin/my prog");
	CHECK(m.v[1].exec);
	CHECK(!m.v[0].exec);
	p = perf_maps_find(&m, 0x7f0000003abcull);
	CHECK(p != NULL);
	CHECK_STR_EQ(p->path, "/usr/lib/libfoo.so");
	CHECK_UEQ(p->offset, 0x1000);
	CHECK(perf_maps_find(&m, 0x7f0000004000ull) == NULL);
	CHECK(perf_maps_find(&m, 0x3fffff) == NULL);
	p = perf_maps_find(&m, 0x7fff0000);
	CHECK(p != NULL);
	CHECK_STR_EQ(p->path, "");
	CHECK_STR_EQ(perf_maps_find(&m, 0x7ffd0010)->path, "[stack]");
	perf_maps_release(&m);

	/* our own maps contain this function's code */
	struct tb_err err = {0};
	CHECK_EQ(perf_maps_load(&m, getpid(), &err), 0);
	p = perf_maps_find(&m, (uint64_t)(uintptr_t)&perf_maps_find);
	CHECK(p != NULL);
	CHECK(p->exec);
	perf_maps_release(&m);
}

TEST(perf_resolve_frames_of_this_process)
{
	struct perf_maps m = {0};
	struct perf_record rec;
	struct perf_frame fr[2 * PERF_MAX_FRAMES];
	uint64_t kips[1] = {0xffffffff81000123ull};
	uint64_t uips[2] = {(uint64_t)(uintptr_t)&perf_maps_find, 16};
	const struct perf_mapping *p;
	size_t n;

	CHECK_EQ(perf_maps_load(&m, getpid(), NULL), 0);
	perf_maps_load_elf(&m);
	p = perf_maps_find(&m, uips[0]);
	CHECK(p != NULL);
	CHECK(p->elf.is_elf);
	memset(&rec, 0, sizeof rec);
	rec.kernel_ips = kips, rec.n_kernel = 1;
	rec.user_ips = uips, rec.n_user = 2;
	n = perf_resolve_frames(&rec, &m, NULL, fr);
	CHECK_EQ(n, 3);
	CHECK_STR_EQ(fr[0].mapping_path, PERF_KERNEL_MAPPING_NAME);
	CHECK_UEQ(fr[0].rel_pc, kips[0]);
	CHECK_STR_EQ(fr[1].mapping_path, p->path);
	CHECK_UEQ(fr[1].rel_pc, perf_rel_pc(uips[0], p->start, p->offset, p->elf.load_bias));
	CHECK_EQ(fr[1].build_id_len, p->elf.build_id_len);
	CHECK_STR_EQ(fr[2].mapping_path, ""); /* pc 16 is in no mapping */
	CHECK_UEQ(fr[2].rel_pc, 16);
	perf_maps_release(&m);
}

TEST(perf_rel_pc_math)
{
	/* PIE text mapped at 0x5555...1000 from file offset 0x1000, bias 0 */
	CHECK_UEQ(perf_rel_pc(0x555555556234ull, 0x555555555000ull, 0x1000, 0), 0x2234);
	/* non-PIE: first exec PT_LOAD vaddr 0x401000 at offset 0x1000 */
	CHECK_UEQ(perf_rel_pc(0x401234, 0x401000, 0x1000, 0x400000), 0x401234);
}

/* A minimal ELF image: header, PT_LOAD (R), PT_LOAD (R+X), PT_NOTE with a
 * build id, and a section table with one SHT_NOTE. */
static size_t make_elf(uint8_t *buf, bool is64, bool with_phdr_note, const uint8_t *id,
                       uint32_t id_len)
{
	size_t ehsize = is64 ? 64 : 52, phent = is64 ? 56 : 32, shent = is64 ? 64 : 40;
	size_t phoff = ehsize, noteoff = 0x200, shoff = 0x300;
	uint16_t phnum = with_phdr_note ? 3 : 2;
	memset(buf, 0, 0x400);
	memcpy(buf, "\177ELF", 4);
	buf[4] = is64 ? 2 : 1;
	buf[5] = 1;
	buf[6] = 1;
	/* note: namesz 4, descsz, type 3, "GNU\0", desc */
	uint32_t nh[3] = {4, id_len, 3};
	memcpy(buf + noteoff, nh, 12);
	memcpy(buf + noteoff + 12, "GNU", 4);
	memcpy(buf + noteoff + 16, id, id_len);
	uint64_t notesz = 16 + ((id_len + 3) & ~3u);
	struct {
		uint32_t type, flags;
		uint64_t off, vaddr, filesz;
	} ph[3] = {{1, 4, 0, 0x400000, 0x1000},
	           {1, 5, 0x1000, 0x401000, 0x1000},
	           {4, 4, noteoff, 0x400200, notesz}};
	for (uint16_t i = 0; i < phnum; i++) {
		uint8_t *p = buf + phoff + i * phent;
		memcpy(p, &ph[i].type, 4);
		if (is64) {
			memcpy(p + 4, &ph[i].flags, 4);
			memcpy(p + 8, &ph[i].off, 8);
			memcpy(p + 16, &ph[i].vaddr, 8);
			memcpy(p + 32, &ph[i].filesz, 8);
		} else {
			uint32_t o = (uint32_t)ph[i].off, v = (uint32_t)ph[i].vaddr,
			         f = (uint32_t)ph[i].filesz;
			memcpy(p + 4, &o, 4);
			memcpy(p + 8, &v, 4);
			memcpy(p + 16, &f, 4);
			memcpy(p + 24, &ph[i].flags, 4);
		}
	}
	/* sections: [0] null, [1] SHT_NOTE over the note */
	uint32_t shtype = 7;
	uint8_t *s1 = buf + shoff + shent;
	memcpy(s1 + 4, &shtype, 4);
	if (is64) {
		uint64_t o = noteoff;
		memcpy(s1 + 24, &o, 8);
		memcpy(s1 + 32, &notesz, 8);
	} else {
		uint32_t o = (uint32_t)noteoff, z = (uint32_t)notesz;
		memcpy(s1 + 16, &o, 4);
		memcpy(s1 + 20, &z, 4);
	}
	uint16_t phentsize = (uint16_t)phent, shentsize = (uint16_t)shent, shnum = 2;
	if (is64) {
		uint64_t po = phoff, so = shoff;
		memcpy(buf + 32, &po, 8), memcpy(buf + 40, &so, 8);
		memcpy(buf + 54, &phentsize, 2), memcpy(buf + 56, &phnum, 2);
		memcpy(buf + 58, &shentsize, 2), memcpy(buf + 60, &shnum, 2);
	} else {
		uint32_t po = (uint32_t)phoff, so = (uint32_t)shoff;
		memcpy(buf + 28, &po, 4), memcpy(buf + 32, &so, 4);
		memcpy(buf + 42, &phentsize, 2), memcpy(buf + 44, &phnum, 2);
		memcpy(buf + 46, &shentsize, 2), memcpy(buf + 48, &shnum, 2);
	}
	return 0x400;
}

TEST(perf_elf_build_id_and_load_bias)
{
	static const uint8_t id[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
	                               7,    8,    9,    10,   11, 12, 13, 14, 15, 16};
	uint8_t buf[0x400];
	struct perf_elf_info info;
	for (int v = 0; v < 4; v++) {
		bool is64 = v & 1, phdr_note = v & 2;
		size_t n = make_elf(buf, is64, phdr_note, id, 20);
		CHECK_EQ(perf_elf_info_mem(buf, n, &info), 0);
		CHECK(info.is_elf);
		CHECK_EQ(info.build_id_len, 20);
		CHECK_MEM_EQ(info.build_id, id, 20);
		CHECK_UEQ(info.load_bias, 0x400000);
		/* every truncation is handled without reading past the end */
		for (size_t cut = 0; cut < n; cut += 7)
			perf_elf_info_mem(buf, cut, &info);
	}
	/* odd-length id (padding) from a file written here */
	char path[] = "/tmp/perf_test_elf_XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	size_t n = make_elf(buf, true, true, id, 9);
	CHECK_EQ(tb_write_all(fd, buf, n), 0);
	close(fd);
	struct tb_err err = {0};
	int rc = perf_elf_info_file(path, &info, &err);
	unlink(path);
	CHECK_EQ(rc, 0);
	CHECK_EQ(info.build_id_len, 9);
	CHECK_MEM_EQ(info.build_id, id, 9);
	CHECK_EQ(perf_elf_info_mem((const uint8_t *)"not an elf", 10, &info), -EINVAL);
	CHECK(perf_elf_info_file("/nonexistent/x", &info, &err) < 0);

	/* the test binary itself (glibc builds carry a build id) */
	CHECK_EQ(perf_elf_info_file("/proc/self/exe", &info, NULL), 0);
	CHECK(info.is_elf);
	if (info.build_id_len == 0)
		printf("note: /proc/self/exe has no build id (linked with --build-id=none)\n");
	else
		CHECK(info.build_id_len == 20 || info.build_id_len == 16 || info.build_id_len == 8);
}

TEST(ksyms_parse_and_lookup)
{
	static const char text[] = "ffffffff81000000 T _stext\n"
	                           "ffffffff81000100 t do_thing\n"
	                           "ffffffff81000080 D some_data\n"
	                           "ffffffff81000200 T other_fn\t[mod]\n"
	                           "bad line\n";
	static const char hidden[] = "0000000000000000 T _stext\n0000000000000000 t x\n";
	struct ksyms k;
	CHECK_EQ(ksyms_parse(&k, text, sizeof text - 1), 0);
	CHECK_EQ(k.n, 3);
	CHECK_STR_EQ(ksyms_lookup(&k, 0xffffffff81000050ull), "_stext");
	CHECK_STR_EQ(ksyms_lookup(&k, 0xffffffff81000100ull), "do_thing");
	CHECK_STR_EQ(ksyms_lookup(&k, 0xffffffff81000300ull), "other_fn");
	CHECK(ksyms_lookup(&k, 0x1000) == NULL);
	ksyms_release(&k);
	CHECK_EQ(ksyms_parse(&k, hidden, sizeof hidden - 1), -EPERM);
	CHECK_EQ(k.n, 0);
}

/* ---- emitted packets ------------------------------------------------------ */

struct decoded {
	int packets, samples, cleared, strings[3], mappings, frames, callstacks, packed;
	uint64_t last_callstack, sample_callstack[4];
	uint64_t cs_frames[4][8];
	size_t cs_n[4];
	uint64_t defaults_clock, timebase_freq;
	char func_names[8][32];
};

static void decode_interned(const uint8_t *p, size_t n, struct decoded *d)
{
	struct pb_reader r, s;
	struct pb_field f, g;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_InternedData_function_names ||
		    f.id == PB_F_InternedData_build_ids ||
		    f.id == PB_F_InternedData_mapping_paths) {
			int t = f.id == PB_F_InternedData_build_ids       ? 0
			        : f.id == PB_F_InternedData_mapping_paths ? 1
			                                                  : 2;
			uint64_t iid = 0;
			const uint8_t *str = NULL;
			size_t len = 0;
			pb_reader_init_field(&s, &f);
			while (pb_next(&s, &g)) {
				if (g.id == PB_F_InternedString_iid)
					iid = g.val;
				if (g.id == PB_F_InternedString_str)
					str = g.data, len = g.len;
			}
			d->strings[t]++;
			if (t == 2 && iid < 8 && len < 32 && str)
				memcpy(d->func_names[iid], str, len);
		} else if (f.id == PB_F_InternedData_mappings) {
			d->mappings++;
			/* Mapping.path_string_ids: proto2 repeated, not [packed] */
			pb_reader_init_field(&s, &f);
			while (pb_next(&s, &g))
				d->packed += g.id == PB_F_Mapping_path_string_ids &&
				             g.wire != PB_WIRE_VARINT;
		} else if (f.id == PB_F_InternedData_frames) {
			d->frames++;
		} else if (f.id == PB_F_InternedData_callstacks) {
			int i = d->callstacks++;
			pb_reader_init_field(&s, &f);
			while (pb_next(&s, &g)) {
				/* Callstack.frame_ids: proto2 repeated, not [packed]:
				 * one varint each (Perfetto's decoders read no other) */
				if (g.id == PB_F_Callstack_frame_ids && g.wire != PB_WIRE_VARINT)
					d->packed++;
				else if (g.id == PB_F_Callstack_frame_ids && i < 4 &&
				         d->cs_n[i] < 8)
					d->cs_frames[i][d->cs_n[i]++] = g.val;
			}
		}
	}
}

static void decode_trace(const uint8_t *p, size_t n, struct decoded *d)
{
	struct pb_reader r, pk, s;
	struct pb_field f, g, h;
	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		d->packets++;
		pb_reader_init_field(&pk, &f);
		while (pb_next(&pk, &g)) {
			if (g.id == PB_F_TracePacket_sequence_flags &&
			    g.val == PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED)
				d->cleared++;
			if (g.id == PB_F_TracePacket_interned_data)
				decode_interned(g.data, g.len, d);
			if (g.id == PB_F_TracePacket_trace_packet_defaults &&
			    pb_find_field(g.data, g.len,
			                  PB_F_TracePacketDefaults_timestamp_clock_id, &h) == 1)
				d->defaults_clock = h.val;
			if (g.id == PB_F_TracePacket_trace_packet_defaults &&
			    pb_find_field(g.data, g.len,
			                  PB_F_TracePacketDefaults_perf_sample_defaults, &h) == 1) {
				struct pb_field tb, fq;
				if (pb_find_field(h.data, h.len, PB_F_PerfSampleDefaults_timebase,
				                  &tb) == 1 &&
				    pb_find_field(tb.data, tb.len,
				                  PB_F_PerfEvents_Timebase_frequency, &fq) == 1)
					d->timebase_freq = fq.val;
			}
			if (g.id == PB_F_TracePacket_perf_sample) {
				pb_reader_init_field(&s, &g);
				while (pb_next(&s, &h))
					if (h.id == PB_F_PerfSample_callstack_iid && d->samples < 4)
						d->sample_callstack[d->samples] = h.val;
				d->samples++;
			}
		}
		CHECK(pb_reader_error(&pk) == PB_OK);
	}
}

TEST(perf_emit_packets_decode_with_interning)
{
	struct perf_emitter e;
	struct pb_writer w;
	struct decoded d;
	static const uint8_t bid[4] = {1, 2, 3, 4};
	struct perf_frame fr[3] = {
	    {.mapping_path = "kernel",
	     .rel_pc = 0xffffffff81000010ull,
	     .function_name = "schedule"},
	    {.mapping_path = "/usr/lib/libfoo.so",
	     .build_id = bid,
	     .build_id_len = 4,
	     .map_start = 0x1000,
	     .map_end = 0x2000,
	     .rel_pc = 0x10,
	     .function_name = NULL},
	    {.mapping_path = "/usr/lib/libfoo.so",
	     .build_id = bid,
	     .build_id_len = 4,
	     .map_start = 0x1000,
	     .map_end = 0x2000,
	     .rel_pc = 0x20,
	     .function_name = "main"},
	};
	memset(&d, 0, sizeof d);
	perf_emitter_init(&e, 5, PERF_COUNTER_SW_CPU_CLOCK, 1000, 0);
	pb_writer_init_growable(&w);
	perf_emit_start(&e, &w, 100);
	perf_emit_sample(&e, &w, 200, 0, 10, 11, 1, fr, 3);
	perf_emit_sample(&e, &w, 300, 1, 10, 11, 2, fr + 1, 2); /* all frames known */
	perf_emit_sample(&e, &w, 400, 1, 10, 11, 2, fr, 3);     /* same stack again */
	perf_emit_lost(&e, &w, 500, 1, 3);
	CHECK_EQ(pb_writer_error(&w), 0);
	decode_trace(pb_writer_data(&w), pb_writer_size(&w), &d);
	pb_writer_release(&w);
	perf_emitter_release(&e);
	CHECK_EQ(d.packets, 6);
	CHECK_EQ(d.cleared, 1);
	CHECK_EQ(d.defaults_clock, 5);
	CHECK_EQ(d.timebase_freq, 1000);
	CHECK_EQ(d.samples, 4);
	/* iid-0 entries + 1 build id; paths "kernel","usr","lib","libfoo.so";
	 * functions "schedule","main" */
	CHECK_EQ(d.strings[0], 2);
	CHECK_EQ(d.strings[1], 5);
	CHECK_EQ(d.strings[2], 3);
	/* interned root first, as the callstack is walked */
	CHECK_STR_EQ(d.func_names[1], "main");
	CHECK_STR_EQ(d.func_names[2], "schedule");
	CHECK_EQ(d.mappings, 2);
	CHECK_EQ(d.frames, 3);
	CHECK_EQ(d.callstacks, 2);
	CHECK_EQ(d.packed, 0);
	CHECK_EQ(d.sample_callstack[0], 1);
	CHECK_EQ(d.sample_callstack[1], 2);
	CHECK_EQ(d.sample_callstack[2], 1);
	/* root first: main (frame 1), libfoo+0x10 (2), schedule (3) */
	CHECK_EQ(d.cs_n[0], 3);
	CHECK_EQ(d.cs_frames[0][0], 1);
	CHECK_EQ(d.cs_frames[0][1], 2);
	CHECK_EQ(d.cs_frames[0][2], 3);
	CHECK_EQ(d.cs_n[1], 2);
	CHECK_EQ(d.cs_frames[1][0], 1);
	CHECK_EQ(d.cs_frames[1][1], 2);
}

/* ---- live sampling -------------------------------------------------------- */

static volatile uint64_t spin_sink;

/* The known hot function; kept out of line and big enough to be sampled.
 * Spins until this thread has used cpu_ns of CPU time (cpu-clock samples
 * follow CPU time, so a loaded machine does not starve the test of samples)
 * or wall_ns of wall time have passed. */
__attribute__((noinline)) static void perf_test_spin(int64_t cpu_ns, int64_t wall_ns)
{
	int64_t cpu_end = tb_now_ns(CLOCK_THREAD_CPUTIME_ID) + cpu_ns;
	int64_t wall_end = tb_now_ns(CLOCK_MONOTONIC) + wall_ns;
	while (tb_now_ns(CLOCK_THREAD_CPUTIME_ID) < cpu_end &&
	       tb_now_ns(CLOCK_MONOTONIC) < wall_end)
		for (int i = 0; i < 20000; i++)
			spin_sink = spin_sink * 6364136223846793005ull + 1442695040888963407ull;
}
static void perf_test_spin_end(void) {}

struct live {
	int pid, tid, samples, ours, in_spin, with_user;
	uint64_t lo, hi;
};

static void live_cb(void *ctx, const struct perf_record *r)
{
	struct live *l = ctx;
	if (r->kind != PERF_REC_SAMPLE)
		return;
	l->samples++;
	if ((int)r->pid != l->pid || (int)r->tid != l->tid)
		return;
	l->ours++;
	if (r->n_user)
		l->with_user++;
	for (size_t i = 0; i < r->n_user; i++)
		if (r->user_ips[i] >= l->lo && r->user_ips[i] < l->hi) {
			l->in_spin++;
			break;
		}
}

TEST(perf_live_sampling_finds_hot_function)
{
	struct perf_event_opts o = {0};
	struct perf_events ev;
	struct tb_err err = {0};
	struct live l = {0};
	uint64_t lost = 0;
	int rc;

	if (geteuid() != 0)
		TEST_SKIP("not root");
	o.pid = getpid();
	o.all_cpus = true;
	o.frequency = 1000;
	o.kernel_frames = true;
	rc = perf_events_open(&ev, &o, &err);
	if (rc < 0)
		TEST_SKIP("%s", err.msg);
	l.pid = getpid();
	l.tid = (int)gettid();
	l.lo = (uint64_t)(uintptr_t)&perf_test_spin;
	l.hi = (uint64_t)(uintptr_t)&perf_test_spin_end;
	if (l.hi <= l.lo || l.hi - l.lo > 4096)
		l.hi = l.lo + 512; /* the size bound when the layout is unexpected */
	CHECK_EQ(perf_events_enable(&ev, &err), 0);
	perf_test_spin(300 * 1000000ll, 10 * 1000000000ll);
	CHECK_EQ(perf_events_disable(&ev, &err), 0);
	for (size_t i = 0; i < ev.n_streams; i++) {
		perf_ring_read(&ev.streams[i].ring, 0, live_cb, &l, &ev.streams[i].stats);
		lost += ev.streams[i].stats.lost_records;
	}
	CHECK_EQ(ev.clock_id, 5);
	perf_events_close(&ev);
	printf("note: live: %d samples, %d ours, %d with user frames, %d in the spin function\n",
	       l.samples, l.ours, l.with_user, l.in_spin);
	CHECK_EQ(lost, 0);
	CHECK(l.ours >= 100); /* ~300 expected at 1000 Hz over 300 ms of CPU */
	CHECK(l.in_spin * 2 >= l.ours);
}

TEST(perf_events_reject_bad_options)
{
	struct perf_event_opts o = {0};
	struct perf_events ev;
	struct tb_err err = {0};
	o.ring_buffer_pages = 3;
	CHECK_EQ(perf_events_open(&ev, &o, &err), -EINVAL);
	CHECK(strstr(err.msg, "power of two") != NULL);
	tb_err_clear(&err);
	o.ring_buffer_pages = 0;
	o.counter = 99;
	CHECK_EQ(perf_events_open(&ev, &o, &err), -EINVAL);
	CHECK(strstr(err.msg, "unsupported perf counter") != NULL);
}

/* ---- skipped samples and losses, emitted then imported ---------------------- */

/* The emitted Trace.packet fields again, each given trusted_packet_sequence_id
 * 1 as the service would, loaded by the trace processor. */
static struct tp *import_packets(const struct pb_writer *w)
{
	struct pb_writer t;
	struct pb_reader r;
	struct pb_field f = {0};
	struct tp *tp = tp_new(NULL);

	pb_writer_init_growable(&t);
	pb_reader_init(&r, pb_writer_data(w), pb_writer_size(w));
	while (pb_next(&r, &f)) {
		unsigned p = pb_begin_nested(&t, PB_F_Trace_packet);
		pb_put_raw(&t, f.data, f.len);
		pb_put_uint32(&t, PB_F_TracePacket_trusted_packet_sequence_id, 1);
		pb_end_nested(&t, p);
	}
	if (tp_parse(tp, pb_writer_data(&t), pb_writer_size(&t)) != 0 || tp_end_of_file(tp) != 0)
		test_report(__FILE__, __LINE__, "trace does not load: %s", tp_error(tp));
	pb_writer_release(&t);
	return tp;
}

/* The rows of sql, "a|b;c|d", into out. */
static const char *query_rows(struct tp *tp, const char *sql, char *out, size_t cap)
{
	struct sqlite3_stmt *st = NULL;
	char err[256];
	size_t n = 0;

	out[0] = 0;
	if (tp_prepare(tp, sql, &st, NULL, err, sizeof err) != SQLITE_OK || !st) {
		snprintf(out, cap, "error: %s", err);
		return out;
	}
	while (sqlite3_step(st) == SQLITE_ROW)
		for (int i = 0; i < sqlite3_column_count(st); i++) {
			const unsigned char *v = sqlite3_column_text(st, i);
			n += (size_t)snprintf(out + n, n < cap ? cap - n : 0, "%s%s",
			                      i   ? "|"
			                      : n ? ";"
			                          : "",
			                      v ? (const char *)v : "NULL");
		}
	sqlite3_finalize(st);
	return out;
}

/* What traced_perf writes for samples it does not unwind and for ring
 * losses, and what Perfetto's importer makes of it: lost records per cpu in
 * stats (BOOTTIME packets), skipped samples as rows without a callsite,
 * counted by reason; the process sharding of the defaults. */
TEST(perf_emit_skips_and_losses_import)
{
	struct perf_emitter e;
	struct pb_writer w;
	struct perf_frame fr = {.mapping_path = "/bin/x", .rel_pc = 0x10, .function_name = "f"};
	char out[512];
	struct tp *tp;

	perf_emitter_init(&e, 6, PERF_COUNTER_SW_CPU_CLOCK, 1000, 0);
	e.shard_count = 8;
	e.chosen_shard = 5;
	pb_writer_init_growable(&w);
	perf_emit_start(&e, &w, 100);
	perf_emit_sample(&e, &w, 200, 0, 10, 11, 2, &fr, 1);
	perf_emit_skipped(&e, &w, 210, 1, 20, 21, 2, PERF_SKIP_NOT_IN_SCOPE);
	perf_emit_skipped(&e, &w, 220, 1, 10, 12, 1, PERF_SKIP_UNWIND_ENQUEUE);
	perf_emit_skipped(&e, &w, 230, 0, 10, 11, 2, PERF_SKIP_READ_STAGE);
	perf_emit_lost(&e, &w, 240, 3, 17);
	perf_emit_lost(&e, &w, 250, 3, 4);
	perf_emit_lost(&e, &w, 260, 2, 1);
	CHECK_EQ(pb_writer_error(&w), 0);
	tp = import_packets(&w);
	pb_writer_release(&w);
	perf_emitter_release(&e);
	CHECK_STR_EQ(
	    query_rows(tp,
	               "select ts, cpu, t.tid, cpu_mode, callsite_id is null from perf_sample "
	               "join thread t using (utid) order by ts",
	               out, sizeof out),
	    "200|0|11|user|0;210|1|21|user|1;220|1|12|kernel|1;230|0|11|user|1");
	CHECK_STR_EQ(query_rows(tp,
	                        "select name, idx, value from stats where name in "
	                        "('perf_cpu_lost_records', 'perf_samples_skipped', "
	                        "'perf_samples_skipped_dataloss', 'perf_process_shard_count', "
	                        "'perf_chosen_process_shard') and value > 0 order by name, idx",
	                        out, sizeof out),
	             "perf_chosen_process_shard|0|5;perf_cpu_lost_records|2|1;"
	             "perf_cpu_lost_records|3|21;perf_process_shard_count|0|8;"
	             "perf_samples_skipped|NULL|1;perf_samples_skipped_dataloss|NULL|1");
	tp_free(tp);
}

/* A stack cut short by the unwinder, as traced_perf writes it: the frames
 * found, then the marker frame "ERROR <REASON>" without a mapping as the
 * root, and PerfSample.unwind_error; the importer names the error. */
TEST(perf_emit_unwind_error_import)
{
	struct perf_emitter e;
	struct pb_writer w;
	struct perf_frame fr[3] = {
	    {.mapping_path = "/bin/x", .rel_pc = 0x10, .function_name = "leaf"},
	    {.mapping_path = "/bin/x", .rel_pc = 0x20, .function_name = "mid"},
	    {.mapping_path = "", .function_name = "ERROR MEMORY_INVALID"},
	};
	char out[512];
	struct tp *tp;

	perf_emitter_init(&e, 6, PERF_COUNTER_SW_CPU_CLOCK, 1000, 0);
	pb_writer_init_growable(&w);
	perf_emit_start(&e, &w, 100);
	perf_emit_sample_unwound(&e, &w, 200, 0, 10, 11, 2, fr, 3,
	                         PERF_UNWIND_ERROR_MEMORY_INVALID);
	perf_emit_sample_unwound(&e, &w, 300, 0, 10, 11, 2, fr, 2, 0);
	CHECK_EQ(pb_writer_error(&w), 0);
	tp = import_packets(&w);
	pb_writer_release(&w);
	perf_emitter_release(&e);
	CHECK_STR_EQ(
	    query_rows(tp,
	               "select s.ts, coalesce(s.unwind_error, 'NULL'), f.name, c.depth "
	               "from perf_sample s join stack_profile_callsite c on c.id = s.callsite_id "
	               "join stack_profile_frame f on f.id = c.frame_id order by s.ts",
	               out, sizeof out),
	    "200|memory_invalid|leaf|2;300|NULL|leaf|1");
	CHECK_STR_EQ(
	    query_rows(tp,
	               "select f.name from stack_profile_callsite c join stack_profile_frame f "
	               "on f.id = c.frame_id where c.depth = 0 order by c.id",
	               out, sizeof out),
	    "ERROR MEMORY_INVALID;mid");
	CHECK_STR_EQ(perf_unwind_error_name(PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED),
	             "MAX_FRAME_EXCEEDED");
	tp_free(tp);
}

/* A COMM record (with a TID|TIME|CPU sample_id) or a FORK record. */
static size_t make_comm(uint8_t *out, uint32_t pid, uint32_t tid, const char *comm, bool exec,
                        uint64_t time)
{
	size_t body = 8 + ((strlen(comm) + 1 + 7) & ~(size_t)7);
	size_t size = 8 + body + 24;
	uint32_t type = PERF_RECORD_TYPE_COMM;
	uint32_t misc_size = (uint32_t)size << 16 | (exec ? PERF_RECORD_MISC_COMM_EXEC_BIT : 0);
	uint32_t cpu = 1;
	memset(out, 0, size);
	memcpy(out, &type, 4);
	memcpy(out + 4, &misc_size, 4);
	memcpy(out + 8, &pid, 4);
	memcpy(out + 12, &tid, 4);
	memcpy(out + 16, comm, strlen(comm));
	memcpy(out + 8 + body, &pid, 4);
	memcpy(out + 8 + body + 4, &tid, 4);
	memcpy(out + 8 + body + 8, &time, 8);
	memcpy(out + 8 + body + 16, &cpu, 4);
	return size;
}

static size_t make_fork(uint8_t *out, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid,
                        uint64_t time)
{
	size_t size = 8 + 24 + 24;
	uint32_t type = PERF_RECORD_TYPE_FORK, misc_size = (uint32_t)size << 16;
	memset(out, 0, size);
	memcpy(out, &type, 4);
	memcpy(out + 4, &misc_size, 4);
	memcpy(out + 8, &pid, 4);
	memcpy(out + 12, &ppid, 4);
	memcpy(out + 16, &tid, 4);
	memcpy(out + 20, &ptid, 4);
	memcpy(out + 24, &time, 8);
	memcpy(out + 32, &pid, 4);
	memcpy(out + 36, &tid, 4);
	memcpy(out + 40, &time, 8);
	return size;
}

TEST(perf_task_records_parse)
{
	uint8_t rec[128];
	uint64_t ips[2 * PERF_MAX_FRAMES];
	struct perf_record pr;
	size_t n = make_comm(rec, 7, 8, "workload", true, 555);
	CHECK_EQ(perf_record_parse(rec, n, PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), 0);
	CHECK_EQ(pr.kind, PERF_REC_COMM);
	CHECK_EQ(pr.pid, 7);
	CHECK_EQ(pr.tid, 8);
	CHECK_EQ(pr.comm_len, 8);
	CHECK(memcmp(pr.comm, "workload", 8) == 0);
	CHECK(pr.comm_exec);
	CHECK_UEQ(pr.time, 555);
	CHECK_EQ(pr.cpu, 1);
	/* without the sample_id (no sample_id_all) the body alone is read */
	n = make_comm(rec, 7, 8, "w", false, 555) - 24;
	uint32_t ms = (uint32_t)n << 16;
	memcpy(rec + 4, &ms, 4);
	CHECK_EQ(perf_record_parse(rec, n, PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), 0);
	CHECK_UEQ(pr.time, 0);
	CHECK(!pr.comm_exec);
	/* a name that is not terminated inside the record */
	memset(rec + 16, 'x', n - 16);
	CHECK_EQ(perf_record_parse(rec, n, PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), -EINVAL);
	n = make_fork(rec, 20, 7, 20, 8, 777);
	CHECK_EQ(perf_record_parse(rec, n, PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), 0);
	CHECK_EQ(pr.kind, PERF_REC_FORK);
	CHECK_EQ(pr.pid, 20);
	CHECK_EQ(pr.ppid, 7);
	CHECK_EQ(pr.ptid, 8);
	CHECK_UEQ(pr.time, 777);
	CHECK_EQ(perf_record_parse(rec, 24, PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), -EINVAL);
}

/* Names from records alone (the pids are not on this machine, so /proc has
 * nothing): the exec's name, a forked child that inherits it, a rename. */
TEST(perf_tasks_name_the_sampled_tasks)
{
	const uint32_t P = 0x3ffffff0, C = 0x3ffffff1;
	struct perf_emitter e;
	struct perf_tasks t;
	struct pb_writer w;
	struct perf_record pr;
	uint64_t ips[2 * PERF_MAX_FRAMES];
	uint8_t rec[128];
	struct perf_frame fr = {.mapping_path = "/bin/x", .rel_pc = 0x10, .function_name = "f"};
	char out[512];
	struct tp *tp;

	perf_emitter_init(&e, 6, PERF_COUNTER_SW_CPU_CLOCK, 1000, 0);
	perf_tasks_init(&t);
	pb_writer_init_growable(&w);
	perf_emit_start(&e, &w, 100);
#define FEED(n)                                                                               \
	do {                                                                                  \
		CHECK_EQ(perf_record_parse(rec, (n), PERF_SAMPLE_TYPE_DEFAULT, &pr, ips), 0); \
		perf_tasks_record(&t, &e, &w, &pr);                                           \
	} while (0)
	FEED(make_comm(rec, P, P, "workload", true, 150));
	perf_tasks_sample(&t, &e, &w, 200, P, P);
	perf_emit_sample(&e, &w, 200, 0, P, P, 2, &fr, 1);
	FEED(make_fork(rec, C, P, C, P, 250));
	perf_tasks_sample(&t, &e, &w, 300, C, C);
	perf_emit_sample(&e, &w, 300, 0, C, C, 2, &fr, 1);
	FEED(make_comm(rec, C, C, "child-two", false, 350));
	perf_emit_sample(&e, &w, 400, 0, C, C, 2, &fr, 1);
#undef FEED
	CHECK_EQ(pb_writer_error(&w), 0);
	tp = import_packets(&w);
	pb_writer_release(&w);
	perf_tasks_release(&t);
	perf_emitter_release(&e);
	CHECK_STR_EQ(query_rows(tp,
	                        "select t.tid - 1073741808, t.name, p.pid - 1073741808, p.name, "
	                        "pp.pid, count(*) from perf_sample "
	                        "join thread t using (utid) join process p using (upid) "
	                        "left join process pp on pp.upid = p.parent_upid "
	                        "group by 1 order by 1",
	                        out, sizeof out),
	             "0|workload|0|workload|0|1;1|child-two|1|workload|1073741808|2");
	tp_free(tp);
}

/* ---- JIT perf maps and end-of-capture symbolization ------------------------ */

TEST(perf_jitmap_parse_and_lookup)
{
	static const char text[] = "7f0000001000 40 JS:~hot /x.js:1:1\n"
	                           "0x7f0000002000 0x10 LazyCompile:*run\n"
	                           "garbage line\n"
	                           "7f0000001000 40 JS:*hot (optimized)\n"
	                           "7f0000003000 8 partial"; /* no newline yet */
	struct perf_jitmap m = {0};
	perf_jitmap_parse(&m, text, sizeof text - 1);
	CHECK_EQ(m.n, 2);
	CHECK_EQ(m.bad_lines, 1);
	CHECK_EQ(m.bytes, sizeof text - 1 - strlen("7f0000003000 8 partial"));
	CHECK_STR_EQ(perf_jitmap_lookup(&m, 0x7f0000001000), "JS:*hot (optimized)"); /* last wins */
	CHECK_STR_EQ(perf_jitmap_lookup(&m, 0x7f000000103f), "JS:*hot (optimized)");
	CHECK(perf_jitmap_lookup(&m, 0x7f0000001040) == NULL);
	CHECK_STR_EQ(perf_jitmap_lookup(&m, 0x7f000000200f), "LazyCompile:*run");
	CHECK(perf_jitmap_lookup(&m, 0x7f0000003000) == NULL);
	CHECK(perf_jitmap_lookup(&m, 0x1000) == NULL);
	perf_jitmap_release(&m);
}

/* The user frames of this test binary, written unnamed, get their names
 * from ModuleSymbols at the end, found through the binary's build id; a
 * mapping without a build id is counted, not symbolized. */
TEST(perf_symq_names_frames_of_this_binary)
{
	struct perf_maps maps = {0};
	const struct perf_mapping *m = NULL;
	struct perf_emitter e;
	struct perf_symq q;
	struct perf_symq_result res;
	struct sym_finder finder;
	struct pb_writer w;
	char out[512];
	uint64_t pc = (uint64_t)(uintptr_t)&test_perf_symq_names_frames_of_this_binary;

	CHECK_EQ(perf_maps_load(&maps, (int)getpid(), NULL), 0);
	perf_maps_load_elf(&maps);
	m = perf_maps_find(&maps, pc);
	CHECK(m != NULL);
	if (!m->elf.build_id_len) {
		printf("note: this unit test binary has no build id; nothing to symbolize\n");
		perf_maps_release(&maps);
		return;
	}
	struct perf_frame f = {.mapping_path = m->path,
	                       .build_id = m->elf.build_id,
	                       .build_id_len = m->elf.build_id_len,
	                       .map_start = m->start,
	                       .map_end = m->end,
	                       .map_offset = m->offset,
	                       .load_bias = m->elf.load_bias};
	f.rel_pc = perf_rel_pc(pc, m->start, m->offset, m->elf.load_bias);
	struct perf_frame anon = {.mapping_path = "/no/build/id", .rel_pc = 0x10, .map_end = 1};

	perf_emitter_init(&e, 6, PERF_COUNTER_SW_CPU_CLOCK, 1000, 0);
	pb_writer_init_growable(&w);
	perf_emit_start(&e, &w, 100);
	perf_emit_sample(&e, &w, 200, 0, 10, 11, 2, &f, 1);
	perf_symq_init(&q);
	perf_symq_add(&q, &f);
	perf_symq_add(&q, &f);
	perf_symq_add(&q, &anon);
	sym_finder_init(&finder, NULL, false, false);
	perf_symq_emit(&q, &finder, &w, 300, NULL, NULL, &res);
	sym_finder_release(&finder);
	CHECK_EQ(res.modules, 2);
	CHECK_EQ(res.modules_named, 1);
	CHECK_EQ(res.no_build_id, 1);
	CHECK_EQ(res.frames_no_build_id, 1);
	CHECK_EQ(res.addresses, 1);
	CHECK_EQ(res.addresses_named, 1);
	CHECK_STR_EQ(res.examples[0], "/no/build/id (no build id)");
	struct tp *tp = import_packets(&w);
	CHECK_STR_EQ(query_rows(tp,
	                        "select s.name from stack_profile_frame f "
	                        "join stack_profile_symbol s on s.symbol_set_id = f.symbol_set_id",
	                        out, sizeof out),
	             "test_perf_symq_names_frames_of_this_binary");
	tp_free(tp);
	pb_writer_release(&w);
	perf_symq_release(&q);
	perf_emitter_release(&e);
	perf_maps_release(&maps);
}

/* ---- scope --------------------------------------------------------------- */

/* Fake /proc/PID/cmdline: pid 1..9 run "/usr/bin/app<pid % 3>" with an
 * argument, pid 100 is a kernel thread (empty), others are gone. */
static ssize_t fake_cmdline(int32_t pid, char *buf, size_t cap)
{
	char tmp[64];
	int n;
	if (pid == 100)
		return 0;
	if (pid < 1 || pid > 9)
		return -1;
	n = snprintf(tmp, sizeof tmp, "/usr/bin/app%d%c--x=%d", pid % 3, 0, pid);
	if ((size_t)n > cap)
		n = (int)cap;
	memcpy(buf, tmp, (size_t)n);
	return n;
}

static struct perf_scope *fake_scope(struct perf_scope *s)
{
	perf_scope_init(s);
	s->read_cmdline = fake_cmdline;
	return s;
}

/* The kept pids of 1..9 and 100 as a string, e.g. "1,4,7". */
static const char *kept(struct perf_scope *s, char *out)
{
	static const int32_t pids[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 100};
	size_t n = 0;
	out[0] = 0;
	for (size_t i = 0; i < TB_ARRAY_SIZE(pids); i++)
		if (perf_scope_keep(s, pids[i]))
			n += (size_t)snprintf(out + n, 64 - n, "%s%d", n ? "," : "", (int)pids[i]);
	return out;
}

/* One scope: a target pid and cmdline, an excluded pid and cmdline (0 /
 * NULL: none), the niche counts, and the pids of 1..9, 100 it keeps. */
struct scope_case {
	const char *what;
	int32_t target_pid;
	char *target_cmd;
	int32_t exclude_pid;
	char *exclude_cmd;
	uint32_t additional, shards, chosen;
	const char *want;
};

TEST(perf_scope_rules_as_perfetto)
{
	static const struct scope_case cases[] = {
	    {"no rule: everything", 0, NULL, 0, NULL, 0, 0, 0, "1,2,3,4,5,6,7,8,9,100"},
	    {"cmdline matches argv[0]'s basename; pid adds", 5, "app1", 0, NULL, 0, 0, 0,
	     "1,4,5,7"},
	    {"a pattern starting with '/' matches argv[0]", 0, "/usr/bin/app2", 0, NULL, 0, 0, 0,
	     "2,5,8"},
	    {"... and only argv[0]", 0, "/app2", 0, NULL, 0, 0, 0, ""},
	    {"exclusions win; kernel threads match by pid only", 4, "app*", 100, "app1", 0, 0, 0,
	     "2,3,5,6,8,9"},
	    {"the first 2 distinct whole cmdlines besides the targets", 5, NULL, 0, NULL, 2, 0, 0,
	     "1,2,5"},
	    {"process sharding after the targets: pid % 4 == 1", 4, NULL, 0, NULL, 0, 4, 1,
	     "1,4,5,9"},
	};
	char out[64];

	for (size_t i = 0; i < TB_ARRAY_SIZE(cases); i++) {
		const struct scope_case *c = &cases[i];
		struct perf_scope s;
		fake_scope(&s);
		perf_scope_add(&s, &c->target_pid, c->target_pid != 0, &c->target_cmd,
		               c->target_cmd != NULL, &c->exclude_pid, c->exclude_pid != 0,
		               &c->exclude_cmd, c->exclude_cmd != NULL);
		s.additional_cmdline_count = c->additional;
		s.shard_count = c->shards;
		s.chosen_shard = c->chosen;
		CHECK_EQ(perf_scope_is_everything(&s), i == 0);
		if (strcmp(kept(&s, out), c->want) != 0)
			test_report(__FILE__, __LINE__, "%s: kept %s, want %s", c->what, out,
			            c->want);
		hmap_clear(&s.cache); /* decided again: remembered cmdlines stay */
		CHECK_STR_EQ(kept(&s, out), c->want);
		perf_scope_release(&s);
	}
}

TEST(perf_filter_cpus_keeps_online_targets)
{
	int cpus[] = {0, 1, 2, 3, 6, 7};
	uint32_t targets[] = {7, 2, 5};
	CHECK_EQ(perf_filter_cpus(cpus, 6, NULL, 0), 6);
	CHECK_EQ(perf_filter_cpus(cpus, 6, targets, 3), 2);
	CHECK_EQ(cpus[0], 2);
	CHECK_EQ(cpus[1], 7);
	CHECK_EQ(perf_filter_cpus(cpus, 2, targets + 2, 1), 0);
}
