/*
 * Tests of the perf.data importer (components/trace_processor/importers/
 * perf_data) on synthetic byte buffers: the sample layouts of every
 * sample_type field, callchain context markers, file mode with records out
 * of time order, pipe mode, zstd-compressed records split across frames,
 * and every truncation of a file.
 */
#include <string.h>

#include "test.h"
#include "tp_int.h"
#include "tp_stats.h"
#include "model/model.h"
#include "importers/perf_data/perf_data.h"

/* ---- a byte buffer builder ------------------------------------------------- */

struct buf {
	uint8_t d[8192];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->d + b->n, p, n);
	b->n += n;
}
static void p16(struct buf *b, uint16_t v)
{
	put(b, &v, 2);
}
static void p32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}
static void p64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}
static void pset64(struct buf *b, size_t at, uint64_t v)
{
	memcpy(b->d + at, &v, 8);
}
/* Start a record; end_rec fills in its size. */
static size_t rec(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->n;
	p32(b, type);
	p16(b, misc);
	p16(b, 0);
	return at;
}
static void pad(struct buf *b, size_t at)
{
	while ((b->n - at) % 8)
		b->d[b->n++] = 0;
}
static void end_rec(struct buf *b, size_t at)
{
	pad(b, at);
	uint16_t sz = (uint16_t)(b->n - at);
	memcpy(b->d + at + 6, &sz, 2);
}
static void pstr(struct buf *b, const char *s)
{
	put(b, s, strlen(s) + 1);
}

#define ST_LAYOUT                                                                               \
	(PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_CPU | \
	 PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN)

/* A perf_event_attr of 112 bytes: cpu-clock, sample_id_all, clock
 * MONOTONIC, read_format rf. */
static void attr_rf(struct buf *b, uint64_t sample_type, uint64_t rf)
{
	uint8_t a[112] = {0};
	uint32_t type = 1, size = 112;
	uint64_t config = 0, period = 4000, flags = 1ull << 18 | 1ull << 25;
	int32_t clockid = 1;
	memcpy(a, &type, 4);
	memcpy(a + 4, &size, 4);
	memcpy(a + 8, &config, 8);
	memcpy(a + 16, &period, 8);
	memcpy(a + 24, &sample_type, 8);
	memcpy(a + 32, &rf, 8);
	memcpy(a + 40, &flags, 8);
	memcpy(a + 92, &clockid, 4);
	put(b, a, sizeof a);
}

static void attr(struct buf *b, uint64_t sample_type)
{
	attr_rf(b, sample_type, 0);
}

static struct tp *load(const uint8_t *p, size_t n)
{
	struct tp *tp = tp_new(NULL);
	tp_parse(tp, p, n);
	tp_end_of_file(tp);
	return tp;
}

static bool str_is(const struct tp *tp, uint32_t id, const char *want)
{
	return id && strcmp(tp_str(tp, id), want) == 0;
}

/* ---- sample layouts -------------------------------------------------------------- */

TEST(tp_perf_data_sample_layout_all_fields)
{
	struct tp_perf_data_attr a = {0};
	a.sample_type = PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME |
	                PD_SAMPLE_ADDR | PD_SAMPLE_ID | PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU |
	                PD_SAMPLE_PERIOD | PD_SAMPLE_READ | PD_SAMPLE_CALLCHAIN | PD_SAMPLE_RAW |
	                PD_SAMPLE_BRANCH_STACK | PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER |
	                PD_SAMPLE_WEIGHT | PD_SAMPLE_DATA_SRC;
	a.read_format = 1 | 2 | 4 | 8; /* enabled, running, id, group */
	a.regs_user = 0x7;             /* three registers */
	a.branch_hw_index = true;
	struct buf b = {.n = 0};
	p64(&b, 77);                 /* identifier */
	p64(&b, 0x401000);           /* ip */
	p32(&b, 10), p32(&b, 11);    /* pid, tid */
	p64(&b, 123456789);          /* time */
	p64(&b, 0xdead);             /* addr */
	p64(&b, 77);                 /* id */
	p64(&b, 5);                  /* stream id */
	p32(&b, 3), p32(&b, 0);      /* cpu */
	p64(&b, 4000);               /* period */
	p64(&b, 2);                  /* read: nr */
	p64(&b, 1), p64(&b, 1);      /* enabled, running */
	p64(&b, 9), p64(&b, 77);     /* value, id */
	p64(&b, 8), p64(&b, 78);     /* value, id */
	p64(&b, 3);                  /* callchain nr */
	p64(&b, PD_CONTEXT_USER);    /* marker */
	p64(&b, 0x401000);           /* leaf */
	p64(&b, 0x402000);           /* caller */
	p32(&b, 12);                 /* raw size */
	put(&b, "abcdefghijkl", 12); /* raw data */
	p64(&b, 1);                  /* branch nr */
	p64(&b, 0);                  /* hw_idx */
	p64(&b, 1), p64(&b, 2), p64(&b, 3);
	p64(&b, 1); /* regs abi */
	p64(&b, 1), p64(&b, 2), p64(&b, 3);
	p64(&b, 16);                     /* stack size */
	put(&b, "0123456789abcdef", 16); /* stack */
	p64(&b, 16);                     /* dyn size */
	p64(&b, 100);                    /* weight */
	p64(&b, 200);                    /* data src */
	struct tp_perf_data_sample s;
	CHECK_EQ(tp_perf_data_parse_sample(&a, b.d, b.n, &s), 0);
	CHECK_UEQ(s.id, 77);
	CHECK_UEQ(s.ip, 0x401000);
	CHECK_EQ(s.pid, 10);
	CHECK_EQ(s.tid, 11);
	CHECK_UEQ(s.time, 123456789);
	CHECK_UEQ(s.addr, 0xdead);
	CHECK_UEQ(s.stream_id, 5);
	CHECK_EQ(s.cpu, 3);
	CHECK_UEQ(s.period, 4000);
	CHECK_UEQ(s.nchain, 3);
	uint64_t leaf;
	memcpy(&leaf, s.chain + 8, 8);
	CHECK_UEQ(leaf, 0x401000);
	/* Every shorter body is refused, none read past its end. */
	for (size_t n = 0; n < b.n; n++) {
		uint8_t *copy = tb_malloc(n ? n : 1);
		memcpy(copy, b.d, n);
		CHECK_EQ(tp_perf_data_parse_sample(&a, copy, n, &s), -EINVAL);
		tb_free(copy);
	}
	/* A user register dump with abi 0 (no registers) and an empty user
	 * stack have no payload. */
	a.sample_type = PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER | PD_SAMPLE_PERIOD;
	b.n = 0;
	p64(&b, 42), p64(&b, 0), p64(&b, 0); /* period, abi, stack size */
	CHECK_EQ(tp_perf_data_parse_sample(&a, b.d, b.n, &s), 0);
	CHECK_UEQ(s.period, 42);
	/* A callchain count that overflows the record. */
	a.sample_type = PD_SAMPLE_CALLCHAIN;
	b.n = 0;
	p64(&b, UINT64_MAX / 4);
	CHECK_EQ(tp_perf_data_parse_sample(&a, b.d, b.n, &s), -EINVAL);
}

TEST(tp_perf_data_attr_versions)
{
	struct buf b = {.n = 0};
	attr(&b, ST_LAYOUT);
	struct tp_perf_data_attr a;
	CHECK_EQ(tp_perf_data_parse_attr(b.d, 112, &a), 0);
	CHECK_UEQ(a.sample_type, ST_LAYOUT);
	CHECK(a.sample_id_all);
	CHECK_EQ(a.clock, TP_CLOCK_MONOTONIC);
	/* The first version (64 bytes) has no clockid: perf's own clock. */
	CHECK_EQ(tp_perf_data_parse_attr(b.d, 64, &a), 0);
	CHECK_EQ(a.clock, 10);
	CHECK_EQ(tp_perf_data_parse_attr(b.d, 63, &a), -EINVAL);
}

/* ---- whole files --------------------------------------------------------------- */

/* The data records both modes share: a kernel and a user mapping, a comm,
 * three samples (the second earlier than the first, in a later round). */
static void data_records(struct buf *b)
{
	size_t r = rec(b, 1 /* MMAP */, 1 /* kernel */);
	p32(b, UINT32_MAX), p32(b, 0);
	p64(b, 0xffffffff81000000ull), p64(b, 0x1000000), p64(b, 0xffffffff81000000ull);
	pstr(b, "[kernel.kallsyms]_text");
	pad(b, r);
	p32(b, 0), p32(b, 0), p64(b, 0), p32(b, 0), p32(b, 0), p64(b, 42); /* tid time cpu id */
	end_rec(b, r);
	r = rec(b, 10 /* MMAP2 */, 2);
	p32(b, 100), p32(b, 100);
	p64(b, 0x400000), p64(b, 0x10000), p64(b, 0x1000);
	p32(b, 8), p32(b, 1), p64(b, 1234), p64(b, 0); /* maj, min, ino, gen */
	p32(b, 5), p32(b, 2);                          /* prot, flags */
	pstr(b, "/usr/bin/burn");
	pad(b, r);
	p32(b, 100), p32(b, 100), p64(b, 1), p32(b, 0), p32(b, 0), p64(b, 42);
	end_rec(b, r);
	r = rec(b, 3 /* COMM */, 1u << 13);
	p32(b, 100), p32(b, 100);
	pstr(b, "burn");
	pad(b, r);
	p32(b, 100), p32(b, 100), p64(b, 2), p32(b, 0), p32(b, 0), p64(b, 42);
	end_rec(b, r);
	/* Sample at t=2000: kernel leaf then user frames. */
	r = rec(b, 9, 1);
	p64(b, 42), p64(b, 0xffffffff81000010ull), p32(b, 100), p32(b, 101), p64(b, 2000);
	p32(b, 1), p32(b, 0), p64(b, 4000);
	p64(b, 5);
	p64(b, PD_CONTEXT_KERNEL), p64(b, 0xffffffff81000010ull);
	p64(b, PD_CONTEXT_USER), p64(b, 0x400500), p64(b, 0x400600);
	end_rec(b, r);
	r = rec(b, 68 /* FINISHED_ROUND */, 0);
	end_rec(b, r);
	/* Sample at t=1000, user only. */
	r = rec(b, 9, 2);
	p64(b, 42), p64(b, 0x400500), p32(b, 100), p32(b, 100), p64(b, 1000);
	p32(b, 0), p32(b, 0), p64(b, 4000);
	p64(b, 3);
	p64(b, PD_CONTEXT_USER), p64(b, 0x400500), p64(b, 0x400600);
	end_rec(b, r);
	/* Sample at t=3000 in an unmapped address, no cpu mode. */
	r = rec(b, 9, 0);
	p64(b, 42), p64(b, 0x9000), p32(b, 100), p32(b, 100), p64(b, 3000);
	p32(b, 0), p32(b, 0), p64(b, 4000);
	p64(b, 1), p64(b, 0x9000);
	end_rec(b, r);
	/* A record type nobody knows. */
	r = rec(b, 60, 0);
	p64(b, 0);
	end_rec(b, r);
}

/* A cmdline feature's body. */
static void cmdline_feature(struct buf *b)
{
	p32(b, 2);
	p32(b, 8), put(b, "perf\0\0\0\0", 8);
	p32(b, 8), put(b, "record\0\0", 8);
}

static void build_file(struct buf *b)
{
	b->n = 0;
	put(b, "PERFILE2", 8);
	p64(b, 104); /* header size */
	p64(b, 128); /* attr entry size: attr + ids section */
	size_t sec = b->n;
	for (int i = 0; i < 6; i++)
		p64(b, 0); /* attrs, data, event_types */
	uint64_t bits[4] = {1ull << 11, 0, 0, 0};
	put(b, bits, sizeof bits);
	size_t attrs = b->n;
	attr(b, ST_LAYOUT);
	p64(b, 0), p64(b, 0); /* ids section, filled below */
	size_t ids = b->n;
	p64(b, 42);
	pset64(b, attrs + 112, ids);
	pset64(b, attrs + 120, 8);
	pset64(b, sec, attrs);
	pset64(b, sec + 8, 128);
	size_t data = b->n;
	data_records(b);
	pset64(b, sec + 16, data);
	pset64(b, sec + 24, b->n - data);
	size_t fsec = b->n;
	p64(b, 0), p64(b, 0);
	size_t feat = b->n;
	cmdline_feature(b);
	pset64(b, fsec, feat);
	pset64(b, fsec + 8, b->n - feat);
}

static void check_common(struct tp *tp)
{
	CHECK_EQ(tp->t.profiler_sample.n, 3);
	if (tp->t.profiler_sample.n != 3)
		return;
	struct tp_profiler_sample_row s0 = tp_profiler_sample_row(tp, 0);
	struct tp_profiler_sample_row s1 = tp_profiler_sample_row(tp, 1);
	struct tp_profiler_sample_row s2 = tp_profiler_sample_row(tp, 2);
	/* In time order. */
	CHECK_EQ(s0.ts, 1000);
	CHECK_EQ(s1.ts, 2000);
	CHECK_EQ(s2.ts, 3000);
	CHECK(str_is(tp, s0.source, "linux.perf"));
	CHECK(str_is(tp, s0.cpu_mode, "user"));
	CHECK(str_is(tp, s1.cpu_mode, "kernel"));
	CHECK_EQ(s2.cpu_mode, 0);
	CHECK_EQ(s1.cpu, 1);
	CHECK_EQ(s0.period, 4000);
	const struct tp_stack_profile_callsite_table *c = &tp->t.stack_profile_callsite;
	const struct tp_stack_profile_frame_table *f = &tp->t.stack_profile_frame;
	const struct tp_stack_profile_mapping_table *m = &tp->t.stack_profile_mapping;
	/* Sample 1: kernel leaf at depth 2 over the user callsite of sample 0. */
	CHECK_EQ(c->depth[s1.callsite], 2);
	CHECK_EQ(c->parent_id[s1.callsite], s0.callsite);
	uint32_t kf = c->frame_id[s1.callsite];
	CHECK(str_is(tp, m->name[f->mapping[kf]], "[kernel.kallsyms]"));
	CHECK_EQ(f->rel_pc[kf], (int64_t)0xffffffff81000010ull);
	uint32_t uf = c->frame_id[s0.callsite];
	CHECK(str_is(tp, m->name[f->mapping[uf]], "/usr/bin/burn"));
	CHECK_EQ(f->rel_pc[uf], 0x1500); /* ip - start + pgoff */
	/* Sample 2: unmapped, a dummy mapping. */
	uint32_t df = c->frame_id[s2.callsite];
	CHECK(f->mapping[df] != f->mapping[uf] && m->build_id[f->mapping[df]] == 0);
	CHECK_EQ(f->rel_pc[df], 0x9000);
	CHECK_EQ(tp->stats[TP_STAT_perf_dummy_mapping_used], 1);
	CHECK_EQ(tp->stats[TP_STAT_perf_samples_cpu_mode_unknown], 1);
	/* Threads: 101 in process 100 named by the comm. */
	CHECK_EQ(tp->t.thread.tid[s1.utid], 101);
	CHECK_EQ(tp->t.process.pid[s1.upid], 100);
	CHECK(str_is(tp, tp->t.thread.name[s0.utid], "burn"));
	CHECK(str_is(tp, tp->t.process.name[s0.upid], "burn"));
	CHECK(str_is(tp, tp->t.profiler_session.cmdline[s0.session], "perf record"));
	int64_t v = 0;
	CHECK(tp_istat_get(tp, TP_ISTAT_perf_unknown_record_type, 60, &v));
	CHECK_EQ(v, 1);
}

TEST(tp_perf_data_file_mode)
{
	static struct buf b;
	build_file(&b);
	struct tp *tp = load(b.d, b.n);
	CHECK_STR_EQ(tp_trace_type(tp), "perf");
	check_common(tp);
	CHECK_EQ(tp->stats[TP_STAT_perf_data_truncated], 0);
	tp_free(tp);
}

TEST(tp_perf_data_pipe_mode)
{
	static struct buf b;
	b.n = 0;
	put(&b, "PERFILE2", 8);
	p64(&b, 16);
	size_t r = rec(&b, 64 /* HEADER_ATTR */, 0);
	attr(&b, ST_LAYOUT);
	p64(&b, 42);
	end_rec(&b, r);
	r = rec(&b, 80 /* HEADER_FEATURE */, 0);
	p64(&b, 11);
	cmdline_feature(&b);
	end_rec(&b, r);
	r = rec(&b, 82 /* FINISHED_INIT */, 0);
	end_rec(&b, r);
	data_records(&b);
	struct tp *tp = load(b.d, b.n);
	CHECK_STR_EQ(tp_trace_type(tp), "perf");
	check_common(tp);
	tp_free(tp);
}

/* A zstd frame of one raw block (window 1 KiB, no checksum). */
static void zstd_raw_frame(struct buf *b, const uint8_t *p, size_t n)
{
	static const uint8_t magic[] = {0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00};
	put(b, magic, sizeof magic);
	uint32_t bh = (uint32_t)n << 3 | 1; /* raw, last block */
	uint8_t h[3] = {(uint8_t)bh, (uint8_t)(bh >> 8), (uint8_t)(bh >> 16)};
	put(b, h, 3);
	put(b, p, n);
}

TEST(tp_perf_data_compressed_split_records)
{
	static struct buf plain, b;
	plain.n = 0;
	data_records(&plain);
	b.n = 0;
	put(&b, "PERFILE2", 8);
	p64(&b, 16);
	size_t r = rec(&b, 64, 0);
	attr(&b, ST_LAYOUT);
	p64(&b, 42);
	end_rec(&b, r);
	/* Three compressed records cutting the stream at odd places (inside
	 * records), each its own frame: a COMPRESSED (no padding), then two
	 * COMPRESSED2 (u64 data size, padded). */
	size_t cuts[] = {0, 37, 301, plain.n};
	r = rec(&b, 81 /* COMPRESSED */, 0);
	zstd_raw_frame(&b, plain.d, cuts[1]);
	uint16_t sz = (uint16_t)(b.n - r);
	memcpy(b.d + r + 6, &sz, 2);
	for (int i = 1; i < 3; i++) {
		r = rec(&b, 83 /* COMPRESSED2 */, 0);
		size_t at = b.n;
		p64(&b, 0);
		zstd_raw_frame(&b, plain.d + cuts[i], cuts[i + 1] - cuts[i]);
		pset64(&b, at, b.n - at - 8);
		end_rec(&b, r);
	}
	struct tp *tp = load(b.d, b.n);
	CHECK_EQ(tp->t.profiler_sample.n, 3);
	CHECK_EQ(tp_profiler_sample_row(tp, 0).ts, 1000);
	tp_free(tp);
}

TEST(tp_perf_data_truncated_never_crash)
{
	static struct buf b;
	build_file(&b);
	for (size_t n = 8; n < b.n; n++) {
		uint8_t *copy = tb_malloc(n);
		memcpy(copy, b.d, n);
		struct tp *tp = tp_new(NULL);
		tp_parse(tp, copy, n);
		int rc = tp_end_of_file(tp);
		if (n < 104)
			CHECK(rc != 0 && strstr(tp_error(tp), "perf.data") != NULL);
		CHECK(tp->t.profiler_sample.n <= 3);
		tp_free(tp);
		tb_free(copy);
	}
	/* Cut inside the data: a partial load, counted. */
	struct tp *tp = load(b.d, 104 + 128 + 8 + 100);
	CHECK(tp_error(tp) == NULL || !*tp_error(tp));
	CHECK_EQ(tp->stats[TP_STAT_perf_data_truncated], 1);
	tp_free(tp);
}

TEST(tp_perf_data_chunked_same_tables)
{
	static struct buf b;
	build_file(&b);
	for (size_t chunk = 1; chunk < 64; chunk += 13) {
		struct tp *tp = tp_new(NULL);
		for (size_t off = 0; off < b.n; off += chunk)
			tp_parse(tp, b.d + off, b.n - off < chunk ? b.n - off : chunk);
		tp_end_of_file(tp);
		check_common(tp);
		tp_free(tp);
	}
}

/* The whole file through tp_parse_file: read in place, the same tables; a
 * tp_parse after it is refused. */
TEST(tp_perf_data_whole_file_in_place)
{
	static struct buf b;
	build_file(&b);
	struct tp *tp = tp_new(NULL);
	CHECK_EQ(tp_parse_file(tp, b.d, b.n), 0);
	CHECK(tp_parse(tp, b.d, 8) < 0);
	tp_free(tp);
	tp = tp_new(NULL);
	CHECK_EQ(tp_parse_file(tp, b.d, b.n), 0);
	CHECK_EQ(tp_end_of_file(tp), 0);
	check_common(tp);
	tp_free(tp);
}

/* A group read (PERF_SAMPLE_READ, PERF_FORMAT_ID | PERF_FORMAT_GROUP) that
 * names an id no attr has: the sample is skipped and leaves no counter
 * rows; the sample before it, of two known ids, has one row each. */
TEST(tp_perf_data_group_read_unknown_id)
{
	static struct buf b;
	b.n = 0;
	put(&b, "PERFILE2", 8);
	p64(&b, 16);
	size_t r = rec(&b, 64 /* HEADER_ATTR */, 0);
	attr_rf(&b, PD_SAMPLE_IDENTIFIER | PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_READ,
	        4 | 8 /* id, group */);
	p64(&b, 42), p64(&b, 43);
	end_rec(&b, r);
	r = rec(&b, 82 /* FINISHED_INIT */, 0);
	end_rec(&b, r);
	r = rec(&b, 9, 2);
	p64(&b, 42), p32(&b, 100), p32(&b, 100), p64(&b, 1000);
	p64(&b, 2), p64(&b, 100), p64(&b, 42), p64(&b, 200), p64(&b, 43);
	end_rec(&b, r);
	r = rec(&b, 9, 2);
	p64(&b, 42), p32(&b, 100), p32(&b, 100), p64(&b, 2000);
	p64(&b, 2), p64(&b, 150), p64(&b, 42), p64(&b, 250), p64(&b, 99);
	end_rec(&b, r);
	struct tp *tp = load(b.d, b.n);
	CHECK_EQ(tp->t.profiler_sample.n, 1);
	CHECK_EQ(tp->t.counter.n, 2);
	tp_free(tp);
}
