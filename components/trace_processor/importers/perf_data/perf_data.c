/*
 * The perf.data importer ("perf"): the binary file `perf record` writes,
 * in file mode (header, attr section, data section, feature sections) and
 * pipe mode (`perf record -o -`: a 16-byte header, then attrs, features and
 * build ids as records in the stream), with zstd-compressed records
 * (`perf record -z`). Samples become profiler samples of source
 * "linux.perf" (the perf_sample view), one profiler session per file, their
 * callchains stack_profile_* rows resolved through the MMAP/MMAP2 records;
 * COMM and FORK name and link threads. Layouts: README.md.
 *
 * The input is held whole (the feature sections of a file follow its
 * data); at end of file the records of interest are ordered by time (perf
 * writes per-cpu buffers in rounds) and applied in that order, so a
 * sample sees the mappings and names of its moment.
 */
#include "../../tp_int.h"
#include "../../model/model.h"
#include "../../tp_stats.h"
#include "../importer.h"
#include "perf_data.h"

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDStream_advanced: our allocator */
#include <zstd.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PD_FILE_HEADER_SIZE 104
#define PD_PIPE_HEADER_SIZE 16
#define PD_ATTR_SIZE_VER0 64
#define PD_MAX_ATTRS 4096
#define PD_MAX_FRAMES 1024
/* Decompressed bytes may reach 64 MiB plus 256 times the compressed ones. */
#define PD_DECOMP_BASE (64ull << 20)
#define PD_DECOMP_RATIO 256

enum pd_record_type {
	PD_RECORD_MMAP = 1,
	PD_RECORD_LOST = 2,
	PD_RECORD_COMM = 3,
	PD_RECORD_EXIT = 4,
	PD_RECORD_THROTTLE = 5,
	PD_RECORD_UNTHROTTLE = 6,
	PD_RECORD_FORK = 7,
	PD_RECORD_READ = 8,
	PD_RECORD_SAMPLE = 9,
	PD_RECORD_MMAP2 = 10,
	PD_RECORD_LOST_SAMPLES = 13,
	PD_RECORD_KERNEL_MAX = 21, /* types below are the kernel's (AUX_OUTPUT_HW_ID) */
	PD_RECORD_HEADER_ATTR = 64,
	PD_RECORD_HEADER_EVENT_TYPE = 65,
	PD_RECORD_HEADER_TRACING_DATA = 66,
	PD_RECORD_HEADER_BUILD_ID = 67,
	PD_RECORD_FINISHED_ROUND = 68,
	PD_RECORD_AUXTRACE = 71,
	PD_RECORD_EVENT_UPDATE = 78,
	PD_RECORD_HEADER_FEATURE = 80,
	PD_RECORD_COMPRESSED = 81,
	PD_RECORD_FINISHED_INIT = 82,
	PD_RECORD_COMPRESSED2 = 83,
	PD_RECORD_USER_MAX = 84,
};

enum pd_feature {
	PD_FEAT_TRACING_DATA = 1,
	PD_FEAT_BUILD_ID = 2,
	PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4,
	PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12,
	PD_FEAT_CLOCKID = 23,
	PD_FEAT_CLOCK_DATA = 29,
};

#define PD_MISC_CPUMODE_MASK 7u
#define PD_MISC_KERNEL 1u
#define PD_MISC_USER 2u
#define PD_MISC_COMM_EXEC (1u << 13)
#define PD_MISC_MMAP_BUILD_ID (1u << 14)
#define PD_MISC_BUILD_ID_SIZE (1u << 15)

#define PD_FORMAT_TOTAL_TIME_ENABLED 1u
#define PD_FORMAT_TOTAL_TIME_RUNNING 2u
#define PD_FORMAT_ID 4u
#define PD_FORMAT_GROUP 8u
#define PD_FORMAT_LOST 16u

#define PD_DEC_BIT (1ull << 63) /* a record offset into the decompressed bytes */

struct pd_rec { /* a record applied at end of file, in ts order */
	int64_t ts;
	uint64_t off; /* into in, or dec with PD_DEC_BIT */
	uint32_t attr;
};

struct pd_mm { /* one executable mapping of a process */
	uint64_t start, end, pgoff;
	uint32_t mapping;
};

struct pd_proc { /* a process's mappings, newest last, and its caches */
	VEC(struct pd_mm) maps;
	struct hmap frames; /* ip -> frame row */
	struct hmap chains; /* callchain (tb_hash_bytes) -> struct pd_chain index */
	uint32_t dummy;     /* its mapping for unmapped ips, TP_NULL_U32 until used */
};

struct pd_chain {   /* a callchain seen before and its leaf callsite */
	size_t off; /* of its bytes in chain_bytes */
	uint32_t n; /* bytes */
	uint32_t callsite;
	uint32_t mode; /* the sample's cpumode (frames before any marker) */
};

struct pd_counter { /* an event's counter track on one cpu (or none) */
	uint32_t track;
	double value; /* its last row's value */
};

VEC_DEFINE(pd_bytes, uint8_t);

struct tp_importer {
	struct tp *tp;
	struct tp_stack_profile sp;
	struct pd_bytes in, dec;
	/* The file read at end of file: in's bytes, or the caller's whole
	 * input (tp_parse_file), read in place. */
	const uint8_t *data;
	size_t len;
	bool borrowed;
	size_t dec_pos; /* the next record of dec to read */
	ZSTD_DStream *zs;
	uint64_t compressed;
	bool failed;
	VEC(struct tp_perf_data_attr) attrs;
	struct hmap ids; /* sample id -> attr index */
	VEC(struct pd_rec) recs;
	struct hmap build_ids; /* file name pool id -> build id pool id */
	uint32_t kernel_build_id;
	struct hmap procs; /* pid -> struct pd_proc * */
	struct pd_proc kernel;
	VEC(uint32_t) frames; /* of the current sample, leaf first */
	VEC(struct pd_chain) chains;
	VEC(uint8_t) chain_bytes;
	/* The last sample's thread and cpu, and what they resolved to. */
	uint32_t last_pid, last_tid, last_utid, last_task;
	uint32_t last_cpu, last_mode, last_exec;
	bool last_exec_valid;
	struct ksyms ksyms;
	bool have_ksyms;
	int64_t last_ts;
	/* Counter tracks: attr index << 32 | cpu (UINT32_MAX: the sample has
	 * none) -> index into ctrs; the last one looked up. */
	struct hmap counters;
	VEC(struct pd_counter) ctrs;
	VEC(uint32_t) set; /* scratch: a sample's counter rows */
	uint64_t last_ckey;
	uint32_t last_c;
	bool last_c_valid;
	uint32_t session, cmdline;
	uint32_t str_source, str_kernel_dso, str_empty;
	uint32_t modes[6];
};

static void istat_add(struct tp *tp, enum tp_istat s, int64_t idx, int64_t n)
{
	int64_t v = 0;
	tp_istat_get(tp, s, idx, &v);
	tp_istat_set(tp, s, idx, v + n);
}

/* ---- attrs and samples ---------------------------------------------------- */

static uint32_t builtin_clock(bool use_clockid, int32_t clockid)
{
	if (!use_clockid)
		return 10; /* BUILTIN_CLOCK_PERF */
	switch (clockid) {
	case 0: /* CLOCK_REALTIME */
		return 1;
	case 1: /* CLOCK_MONOTONIC */
		return TP_CLOCK_MONOTONIC;
	case 4: /* CLOCK_MONOTONIC_RAW */
		return 5;
	case 5: /* CLOCK_REALTIME_COARSE */
		return 2;
	case 6: /* CLOCK_MONOTONIC_COARSE */
		return 4;
	case 7: /* CLOCK_BOOTTIME */
		return 6;
	default:
		return 0;
	}
}

int tp_perf_data_parse_attr(const uint8_t *p, size_t n, struct tp_perf_data_attr *a)
{
	memset(a, 0, sizeof(*a));
	if (n < PD_ATTR_SIZE_VER0)
		return -EINVAL;
	a->type = tb_ld32(p);
	a->config = tb_ld64(p + 8);
	a->sample_period = tb_ld64(p + 16);
	a->sample_type = tb_ld64(p + 24);
	a->read_format = tb_ld64(p + 32);
	uint64_t flags = tb_ld64(p + 40);
	a->freq = flags >> 10 & 1;
	a->sample_id_all = flags >> 18 & 1;
	bool use_clockid = flags >> 25 & 1;
	if (n >= 80) {
		a->branch_sample_type = tb_ld64(p + 72);
		a->branch_hw_index = a->branch_sample_type >> 17 & 1;
	}
	if (n >= 88)
		a->regs_user = tb_ld64(p + 80);
	int32_t clockid = n >= 96 ? (int32_t)tb_ld32(p + 92) : 0;
	if (n >= 104)
		a->regs_intr = tb_ld64(p + 96);
	a->clock = builtin_clock(use_clockid && n >= 96, clockid);
	return 0;
}

/* Take k bytes at *off of [0, n): false when they are not there. */
static bool take(size_t n, size_t *off, uint64_t k)
{
	if (k > n - *off)
		return false;
	*off += (size_t)k;
	return true;
}

/* Skip a register dump: abi, then one u64 per mask bit unless abi is 0. */
static bool skip_regs(const uint8_t *p, size_t n, size_t *off, uint64_t mask)
{
	if (n - *off < 8)
		return false;
	uint64_t abi = tb_ld64(p + *off);
	*off += 8;
	return !abi || take(n, off, 8ull * (uint64_t)__builtin_popcountll(mask));
}

int tp_perf_data_parse_sample(const struct tp_perf_data_attr *a, const uint8_t *p, size_t n,
                              struct tp_perf_data_sample *s)
{
	uint64_t st = a->sample_type;
	size_t off = 0;
	memset(s, 0, sizeof(*s));
#define U64(dst)                        \
	do {                            \
		if (n - off < 8)        \
			return -EINVAL; \
		dst = tb_ld64(p + off); \
		off += 8;               \
	} while (0)
	if (st & PD_SAMPLE_IDENTIFIER) {
		U64(s->id);
		s->has_id = true;
	}
	if (st & PD_SAMPLE_IP) {
		U64(s->ip);
		s->has_ip = true;
	}
	if (st & PD_SAMPLE_TID) {
		if (n - off < 8)
			return -EINVAL;
		s->pid = tb_ld32(p + off);
		s->tid = tb_ld32(p + off + 4);
		s->has_tid = true;
		off += 8;
	}
	if (st & PD_SAMPLE_TIME) {
		U64(s->time);
		s->has_time = true;
	}
	if (st & PD_SAMPLE_ADDR)
		U64(s->addr);
	if (st & PD_SAMPLE_ID) {
		U64(s->id);
		s->has_id = true;
	}
	if (st & PD_SAMPLE_STREAM_ID)
		U64(s->stream_id);
	if (st & PD_SAMPLE_CPU) {
		if (n - off < 8)
			return -EINVAL;
		s->cpu = tb_ld32(p + off);
		s->has_cpu = true;
		off += 8;
	}
	if (st & PD_SAMPLE_PERIOD) {
		U64(s->period);
		s->has_period = true;
	}
	if (st & PD_SAMPLE_READ) {
		size_t start = off;
		uint64_t rf = a->read_format;
		uint64_t times = ((rf & PD_FORMAT_TOTAL_TIME_ENABLED) ? 8 : 0) +
		                 ((rf & PD_FORMAT_TOTAL_TIME_RUNNING) ? 8 : 0);
		uint64_t per = 8 + ((rf & PD_FORMAT_ID) ? 8 : 0) + ((rf & PD_FORMAT_LOST) ? 8 : 0);
		if (rf & PD_FORMAT_GROUP) {
			uint64_t nr;
			U64(nr);
			if (!take(n, &off, times) || nr > (n - off) / per)
				return -EINVAL;
			off += (size_t)(nr * per);
		} else if (!take(n, &off, times + per)) {
			return -EINVAL;
		}
		s->read = p + start;
		s->read_len = off - start;
	}
	if (st & PD_SAMPLE_CALLCHAIN) {
		uint64_t nr;
		U64(nr);
		if (nr > (n - off) / 8)
			return -EINVAL;
		s->chain = p + off;
		s->nchain = nr;
		off += (size_t)nr * 8;
	}
	if (st & PD_SAMPLE_RAW) {
		if (n - off < 4)
			return -EINVAL;
		uint32_t sz = tb_ld32(p + off);
		off += 4;
		if (!take(n, &off, sz))
			return -EINVAL;
	}
	if (st & PD_SAMPLE_BRANCH_STACK) {
		uint64_t nr;
		U64(nr);
		if (a->branch_hw_index && !take(n, &off, 8))
			return -EINVAL;
		if (nr > (n - off) / 24)
			return -EINVAL;
		off += (size_t)nr * 24;
	}
	if ((st & PD_SAMPLE_REGS_USER) && !skip_regs(p, n, &off, a->regs_user))
		return -EINVAL;
	if (st & PD_SAMPLE_STACK_USER) {
		uint64_t sz;
		U64(sz);
		if (sz && (!take(n, &off, sz) || !take(n, &off, 8)))
			return -EINVAL;
	}
	if ((st & (PD_SAMPLE_WEIGHT | PD_SAMPLE_WEIGHT_STRUCT)) && !take(n, &off, 8))
		return -EINVAL;
	if ((st & PD_SAMPLE_DATA_SRC) && !take(n, &off, 8))
		return -EINVAL;
	if ((st & PD_SAMPLE_TRANSACTION) && !take(n, &off, 8))
		return -EINVAL;
	if ((st & PD_SAMPLE_REGS_INTR) && !skip_regs(p, n, &off, a->regs_intr))
		return -EINVAL;
	if ((st & PD_SAMPLE_PHYS_ADDR) && !take(n, &off, 8))
		return -EINVAL;
	if ((st & PD_SAMPLE_CGROUP) && !take(n, &off, 8))
		return -EINVAL;
	if ((st & PD_SAMPLE_DATA_PAGE_SIZE) && !take(n, &off, 8))
		return -EINVAL;
	if ((st & PD_SAMPLE_CODE_PAGE_SIZE) && !take(n, &off, 8))
		return -EINVAL;
	if (st & PD_SAMPLE_AUX) {
		uint64_t sz;
		U64(sz);
		if (!take(n, &off, sz))
			return -EINVAL;
	}
#undef U64
	return 0;
}

/* The 8-byte words of the sample_id trailer of non-sample records. */
static unsigned trailer_words(uint64_t st)
{
	return (unsigned)__builtin_popcountll(st & (PD_SAMPLE_TID | PD_SAMPLE_TIME | PD_SAMPLE_ID |
	                                            PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU |
	                                            PD_SAMPLE_IDENTIFIER));
}

/* The attr index of a record (body p[0, n) after its header); 0 with one
 * attr or when the id is unknown. */
static uint32_t record_attr(struct tp_importer *imp, uint32_t type, const uint8_t *p, size_t n)
{
	if (imp->attrs.len <= 1)
		return 0;
	uint64_t st = imp->attrs.data[0].sample_type, v;
	size_t pos;
	if (type == PD_RECORD_SAMPLE) {
		if (st & PD_SAMPLE_IDENTIFIER)
			pos = 0;
		else if (st & PD_SAMPLE_ID)
			pos = 8 *
			      (size_t)__builtin_popcountll(st & (PD_SAMPLE_IP | PD_SAMPLE_TID |
			                                         PD_SAMPLE_TIME | PD_SAMPLE_ADDR));
		else
			return 0;
	} else {
		if (!imp->attrs.data[0].sample_id_all)
			return 0;
		if (st & PD_SAMPLE_IDENTIFIER)
			pos = 8;
		else if (st & PD_SAMPLE_ID)
			pos = 8 * (1 + (size_t)__builtin_popcountll(
			                   st & (PD_SAMPLE_STREAM_ID | PD_SAMPLE_CPU)));
		else
			return 0;
		if (pos > n)
			return 0;
		pos = n - pos;
	}
	if (pos + 8 > n || !hmap_get(&imp->ids, tb_ld64(p + pos), &v))
		return 0;
	return (uint32_t)v;
}

/* The time of a record from its sample fields or sample_id trailer; the
 * previous record's when it has none. */
static int64_t record_ts(struct tp_importer *imp, const struct tp_perf_data_attr *a, uint32_t type,
                         const uint8_t *p, size_t n)
{
	uint64_t st = a->sample_type;
	if (!(st & PD_SAMPLE_TIME))
		return imp->last_ts;
	size_t pos;
	if (type == PD_RECORD_SAMPLE) {
		pos = 8 * (size_t)__builtin_popcountll(
		              st & (PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID));
	} else {
		if (!a->sample_id_all)
			return imp->last_ts;
		size_t after =
		    (size_t)__builtin_popcountll(st & (PD_SAMPLE_ID | PD_SAMPLE_STREAM_ID |
		                                       PD_SAMPLE_CPU | PD_SAMPLE_IDENTIFIER));
		if (8 * (after + 1) > n)
			return imp->last_ts;
		pos = n - 8 * (after + 1);
	}
	if (pos + 8 > n)
		return imp->last_ts;
	int64_t ts = (int64_t)tb_ld64(p + pos);
	if (ts < 0)
		return imp->last_ts;
	imp->last_ts = ts;
	return ts;
}

/* The cpu of a non-sample record's trailer, or -1. */
static int64_t trailer_cpu(const struct tp_perf_data_attr *a, const uint8_t *p, size_t n)
{
	uint64_t st = a->sample_type;
	if (!a->sample_id_all || !(st & PD_SAMPLE_CPU))
		return -1;
	size_t after = (st & PD_SAMPLE_IDENTIFIER) ? 1 : 0;
	if (8 * (after + 1) > n || trailer_words(st) * 8 > n)
		return -1;
	uint32_t cpu = tb_ld32(p + n - 8 * (after + 1));
	return cpu < TP_MAX_CPUS ? (int64_t)cpu : -1;
}

static void add_attr(struct tp_importer *imp, const uint8_t *p, size_t n, const uint8_t *ids,
                     size_t nids)
{
	struct tp_perf_data_attr a;
	if (imp->attrs.len >= PD_MAX_ATTRS || tp_perf_data_parse_attr(p, n, &a) != 0) {
		istat_add(imp->tp, TP_ISTAT_perf_record_skipped, PD_RECORD_HEADER_ATTR, 1);
		return;
	}
	uint32_t idx = (uint32_t)imp->attrs.len;
	vec_push(&imp->attrs, a);
	for (size_t i = 0; i < nids; i++)
		hmap_put(&imp->ids, tb_ld64(ids + 8 * i), idx);
}

/* ---- features --------------------------------------------------------------- */

/* A perf_header_string at *off of [0, n): u32 len, then len bytes
 * (NUL-padded). Its text (up to the first NUL) as a pool id; false when
 * cut. */
static bool header_string(struct tp_importer *imp, const uint8_t *p, size_t n, size_t *off,
                          uint32_t *id)
{
	if (n - *off < 4)
		return false;
	uint32_t len = tb_ld32(p + *off);
	*off += 4;
	if (len > n - *off)
		return false;
	const char *s = (const char *)p + *off;
	const char *z = memchr(s, 0, len);
	*id = tp_intern(imp->tp, s, z ? (size_t)(z - s) : len);
	*off += len;
	return true;
}

static void hex_id(char *out, const uint8_t *id, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[id[i] >> 4];
		out[2 * i + 1] = hex[id[i] & 15];
	}
	out[2 * n] = 0;
}

/* "[kernel.kallsyms]_text" and "[kernel.kallsyms]" name the kernel. */
static bool is_kernel_name(const char *s, size_t n)
{
	return n >= 17 && memcmp(s, "[kernel.kallsyms]", 17) == 0;
}

/* One build_id_event (header, s32 pid, 24 id bytes, file name). */
static void build_id_event(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	if (n < 8 + 4 + 24) {
		istat_add(imp->tp, TP_ISTAT_perf_record_skipped, PD_RECORD_HEADER_BUILD_ID, 1);
		return;
	}
	uint16_t misc = tb_ld16(p + 4);
	size_t idn = 20;
	if ((misc & PD_MISC_BUILD_ID_SIZE) && p[12 + 20] <= 20)
		idn = p[12 + 20];
	char hex[41];
	hex_id(hex, p + 12, idn);
	const char *name = (const char *)p + 36;
	const char *z = memchr(name, 0, n - 36);
	size_t len = z ? (size_t)(z - name) : n - 36;
	struct tp *tp = imp->tp;
	uint32_t bid = tp_intern_cstr(tp, hex);
	if (is_kernel_name(name, len)) {
		imp->kernel_build_id = bid;
		len = 17;
	}
	hmap_put(&imp->build_ids, tp_intern(tp, name, len), bid);
}

static void feature_build_ids(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	size_t off = 0;
	while (n - off >= 8) {
		uint16_t sz = tb_ld16(p + off + 6);
		if (sz < 8 || sz > n - off)
			break;
		build_id_event(imp, p + off, sz);
		off += sz;
	}
}

static void feature_cmdline(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	if (n < 4)
		return;
	uint32_t nr = tb_ld32(p);
	size_t off = 4;
	VEC(char) s = VEC_INIT;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t id;
		if (!header_string(imp, p, n, &off, &id))
			break;
		const char *a = tp_str(imp->tp, id);
		size_t al = strlen(a);
		vec_reserve(&s, al + 1);
		if (s.len)
			s.data[s.len++] = ' ';
		memcpy(s.data + s.len, a, al);
		s.len += al;
	}
	if (s.len)
		imp->cmdline = tp_intern(imp->tp, s.data, s.len);
	vec_release(&s);
}

/* Event names: u32 nr, u32 attr size, then per event its attr, u32 nr_ids,
 * its name, its ids. */
static void feature_event_desc(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	if (n < 8)
		return;
	uint32_t nr = tb_ld32(p), asz = tb_ld32(p + 4);
	size_t off = 8;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t name;
		if (!take(n, &off, asz) || n - off < 4)
			return;
		uint32_t nids = tb_ld32(p + off);
		off += 4;
		if (!header_string(imp, p, n, &off, &name) || nids > (n - off) / 8)
			return;
		uint64_t v = i;
		if (nids)
			hmap_get(&imp->ids, tb_ld64(p + off), &v);
		if (v < imp->attrs.len)
			imp->attrs.data[v].name = name;
		off += (size_t)nids * 8;
	}
}

static void feature(struct tp_importer *imp, uint64_t id, const uint8_t *p, size_t n)
{
	struct tp *tp = imp->tp;
	uint32_t s;
	size_t off = 0;
	switch (id) {
	case PD_FEAT_BUILD_ID:
		feature_build_ids(imp, p, n);
		break;
	case PD_FEAT_OSRELEASE:
		if (header_string(imp, p, n, &off, &s) && s)
			tp_metadata_set_str(tp, "system_release", s);
		break;
	case PD_FEAT_HOSTNAME:
		break; /* Perfetto keeps no host name for perf files */
	case PD_FEAT_CMDLINE:
		feature_cmdline(imp, p, n);
		break;
	case PD_FEAT_EVENT_DESC:
		feature_event_desc(imp, p, n);
		break;
	case PD_FEAT_CLOCKID:
	case PD_FEAT_CLOCK_DATA:
		/* The clock of each event is in its attr (use_clockid). */
		break;
	default:
		istat_add(tp, TP_ISTAT_perf_features_skipped, (int64_t)id, 1);
		break;
	}
}

/* ---- records ------------------------------------------------------------------ */

static int decompress(struct tp_importer *imp, const uint8_t *p, size_t n);

static void queue(struct tp_importer *imp, uint32_t type, const uint8_t *p, size_t n, uint64_t off)
{
	const uint8_t *body = p + 8;
	size_t bn = n - 8;
	uint32_t attr = record_attr(imp, type, body, bn);
	int64_t ts =
	    imp->attrs.len ? record_ts(imp, &imp->attrs.data[attr], type, body, bn) : imp->last_ts;
	struct pd_rec r = {ts, off, attr};
	vec_push(&imp->recs, r);
}

static void lost(struct tp_importer *imp, uint32_t type, const uint8_t *p, size_t n)
{
	/* LOST: u64 id, u64 lost; LOST_SAMPLES: u64 lost. */
	size_t at = type == PD_RECORD_LOST ? 16 : 8;
	if (n < at + 8)
		return;
	uint64_t count = tb_ld64(p + at);
	int64_t cpu = -1;
	if (imp->attrs.len) {
		uint32_t a = record_attr(imp, type, p + 8, n - 8);
		cpu = trailer_cpu(&imp->attrs.data[a], p + 8, n - 8);
	}
	istat_add(imp->tp, TP_ISTAT_perf_cpu_lost_records, cpu < 0 ? 0 : cpu, (int64_t)count);
}

/* One record p[0, n) (its header included) at off; returns the bytes
 * that follow it outside its size (tracing data, aux data). */
static uint64_t record(struct tp_importer *imp, const uint8_t *p, size_t n, uint64_t off)
{
	struct tp *tp = imp->tp;
	uint32_t type = tb_ld32(p);
	switch (type) {
	case PD_RECORD_SAMPLE:
	case PD_RECORD_MMAP:
	case PD_RECORD_MMAP2:
	case PD_RECORD_COMM:
	case PD_RECORD_FORK:
		queue(imp, type, p, n, off);
		break;
	case PD_RECORD_LOST:
	case PD_RECORD_LOST_SAMPLES:
		lost(imp, type, p, n);
		break;
	case PD_RECORD_HEADER_ATTR: {
		if (n < 8 + PD_ATTR_SIZE_VER0) {
			istat_add(tp, TP_ISTAT_perf_record_skipped, type, 1);
			break;
		}
		uint32_t asz = tb_ld32(p + 12);
		if (asz < PD_ATTR_SIZE_VER0 || asz > n - 8) {
			istat_add(tp, TP_ISTAT_perf_record_skipped, type, 1);
			break;
		}
		add_attr(imp, p + 8, asz, p + 8 + asz, (n - 8 - asz) / 8);
		break;
	}
	case PD_RECORD_HEADER_FEATURE:
		if (n >= 16)
			feature(imp, tb_ld64(p + 8), p + 16, n - 16);
		break;
	case PD_RECORD_HEADER_BUILD_ID:
		build_id_event(imp, p, n);
		break;
	case PD_RECORD_EVENT_UPDATE: {
		/* u64 type (2: name; 0 unit, 1 scale, 3 cpus), u64 id, then the
		 * name. */
		uint64_t v;
		if (n > 24 && tb_ld64(p + 8) == 2 && hmap_get(&imp->ids, tb_ld64(p + 16), &v)) {
			const char *s = (const char *)p + 24;
			const char *z = memchr(s, 0, n - 24);
			imp->attrs.data[v].name = tp_intern(tp, s, z ? (size_t)(z - s) : n - 24);
		}
		break;
	}
	case PD_RECORD_HEADER_TRACING_DATA:
		return n >= 12 ? ((uint64_t)tb_ld32(p + 8) + 7) & ~7ull : 0;
	case PD_RECORD_AUXTRACE:
		return n >= 16 ? tb_ld64(p + 8) : 0;
	case PD_RECORD_COMPRESSED:
		if (decompress(imp, p + 8, n - 8) != 0)
			return UINT64_MAX;
		break;
	case PD_RECORD_COMPRESSED2: {
		if (n < 16)
			break;
		uint64_t sz = tb_ld64(p + 8);
		if (decompress(imp, p + 16, sz < n - 16 ? (size_t)sz : n - 16) != 0)
			return UINT64_MAX;
		break;
	}
	default:
		if (type == 0 || (type > PD_RECORD_KERNEL_MAX && type < PD_RECORD_HEADER_ATTR) ||
		    type >= PD_RECORD_USER_MAX)
			istat_add(tp, TP_ISTAT_perf_unknown_record_type, type, 1);
		break;
	}
	return 0;
}

/* Records of buf[*pos, end) (base: the offset flag of buf). Stops at an
 * incomplete record when partial is allowed (decompressed streams);
 * returns -1 on a corrupt or cut record, else 0. */
static int records(struct tp_importer *imp, bool dec, size_t *pos, size_t end, bool partial)
{
	while (end - *pos >= 8) {
		const uint8_t *buf = dec ? imp->dec.data : imp->data;
		const uint8_t *p = buf + *pos;
		uint16_t sz = tb_ld16(p + 6);
		if (sz < 8) {
			istat_add(imp->tp, TP_ISTAT_perf_record_skipped, tb_ld32(p), 1);
			return -1;
		}
		if (sz > end - *pos) {
			if (partial)
				return 0;
			istat_add(imp->tp, TP_ISTAT_perf_record_skipped, tb_ld32(p), 1);
			return -1;
		}
		size_t at = *pos;
		uint64_t extra = record(imp, p, sz, dec ? PD_DEC_BIT | at : at);
		if (extra == UINT64_MAX)
			return -1;
		*pos += sz;
		if (extra > end - *pos) {
			istat_add(imp->tp, TP_ISTAT_perf_record_skipped, tb_ld32(p), 1);
			return -1;
		}
		*pos += (size_t)extra;
	}
	if (*pos != end && !partial) {
		istat_add(imp->tp, TP_ISTAT_perf_record_skipped, 0, 1);
		return -1;
	}
	return 0;
}

static void *zstd_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return tb_try_malloc(n);
}

static void zstd_free(void *opaque, void *p)
{
	(void)opaque;
	tb_free(p);
}

/* Append the records of one compressed record's zstd bytes to dec and
 * read the complete ones; a record cut at the end of this record's
 * output waits for the next one. */
static int decompress(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	struct tp *tp = imp->tp;
	if (!imp->zs) {
		ZSTD_customMem mem = {zstd_alloc, zstd_free, NULL};
		imp->zs = ZSTD_createDStream_advanced(mem);
		if (!imp->zs)
			return tp_fail(tp, -ENOMEM, "perf.data: cannot allocate a zstd stream");
		ZSTD_DCtx_setParameter(imp->zs, ZSTD_d_windowLogMax, 27);
	}
	imp->compressed += n;
	ZSTD_inBuffer in = {p, n, 0};
	while (in.pos < in.size) {
		if (imp->dec.len > PD_DECOMP_BASE + PD_DECOMP_RATIO * imp->compressed)
			return tp_fail(tp, -EFBIG,
			               "perf.data: compressed records inflate too much");
		if (imp->dec.cap - imp->dec.len < (64u << 10) &&
		    vec_try_reserve(&imp->dec, 256u << 10) != 0)
			return tp_fail(tp, -ENOMEM, "perf.data: out of memory decompressing");
		ZSTD_outBuffer out = {imp->dec.data + imp->dec.len, imp->dec.cap - imp->dec.len, 0};
		size_t before = in.pos;
		size_t r = ZSTD_decompressStream(imp->zs, &out, &in);
		imp->dec.len += out.pos;
		if (ZSTD_isError(r)) {
			istat_add(tp, TP_ISTAT_perf_record_skipped, PD_RECORD_COMPRESSED, 1);
			ZSTD_DCtx_reset(imp->zs, ZSTD_reset_session_only);
			break;
		}
		if (in.pos == before && out.pos == 0)
			break;
	}
	/* Nested compressed records are not a thing perf writes. */
	size_t pos = imp->dec_pos;
	while (imp->dec.len - pos >= 8) {
		const uint8_t *q = imp->dec.data + pos;
		uint32_t t = tb_ld32(q);
		if (t == PD_RECORD_COMPRESSED || t == PD_RECORD_COMPRESSED2) {
			istat_add(tp, TP_ISTAT_perf_record_skipped, t, 1);
			imp->dec_pos = imp->dec.len;
			return 0;
		}
		uint16_t sz = tb_ld16(q + 6);
		if (sz < 8) {
			istat_add(tp, TP_ISTAT_perf_record_skipped, t, 1);
			imp->dec_pos = imp->dec.len;
			return 0;
		}
		if (sz > imp->dec.len - pos)
			break;
		pos += sz;
	}
	size_t end = pos;
	pos = imp->dec_pos;
	if (records(imp, true, &pos, end, false) != 0)
		pos = end;
	imp->dec_pos = pos;
	return 0;
}

/* ---- applying records in time order ---------------------------------------------- */

static struct pd_proc *proc_get(struct tp_importer *imp, uint32_t pid)
{
	struct pd_proc *pr = hmap_get_ptr(&imp->procs, pid);
	if (!pr) {
		pr = tb_calloc(1, sizeof(*pr));
		pr->dummy = TP_NULL_U32;
		hmap_put_ptr(&imp->procs, pid, pr);
	}
	return pr;
}

static void proc_release(struct pd_proc *pr)
{
	vec_release(&pr->maps);
	hmap_release(&pr->frames);
	hmap_release(&pr->chains);
}

/* The mappings of pr changed: forget what was resolved through them (the
 * kernel's are in every process's chains). */
static void proc_changed(struct tp_importer *imp, struct pd_proc *pr)
{
	hmap_clear(&pr->frames);
	hmap_clear(&pr->chains);
	if (pr != &imp->kernel)
		return;
	for (size_t i = hmap_next(&imp->procs, 0); i != HMAP_END; i = hmap_next(&imp->procs, i + 1))
		hmap_clear(&((struct pd_proc *)(uintptr_t)imp->procs.slots[i].val)->chains);
}

static uint32_t mapping_for(struct tp_importer *imp, uint32_t name, uint32_t build_id,
                            uint64_t start, uint64_t end, uint64_t pgoff)
{
	struct tp *tp = imp->tp;
	struct tp_stack_profile_mapping_table *t = &tp->t.stack_profile_mapping;
	uint32_t n0 = (uint32_t)t->n;
	uint32_t row = tp_stack_profile_mapping(tp, &imp->sp, name, build_id);
	if (row >= n0) {
		t->start[row] = (int64_t)start;
		t->end[row] = (int64_t)end;
		t->exact_offset[row] = (int64_t)pgoff;
		t->start_offset[row] = 0;
		t->load_bias[row] = 0;
	}
	return row;
}

/* A file perf saved no build id for (`-z`, `--no-buildid`): as perf
 * script reads the file at its path, so do we when symbolization will run
 * (PERFETTO_BINARY_PATH set), so the symbolizer can match it. Remembered,
 * found or not. */
static uint32_t local_build_id(struct tp_importer *imp, uint32_t name_id)
{
	const char *bp = getenv("PERFETTO_BINARY_PATH");
	const char *path = tp_str(imp->tp, name_id);
	uint32_t bid = 0;
	if (bp && *bp && path[0] == '/') {
		struct elf_file e;
		uint8_t id[20];
		size_t n;
		if (elf_open_path(&e, path, NULL) == 0) {
			n = elf_build_id(&e, id, sizeof id);
			elf_close(&e);
			if (n) {
				char hex[41];
				hex_id(hex, id, n);
				bid = tp_intern_cstr(imp->tp, hex);
			}
		}
	}
	hmap_put(&imp->build_ids, name_id, bid);
	return bid;
}

/* MMAP: u32 pid, tid; u64 start, len, pgoff; name. MMAP2 adds 24 bytes
 * (device and inode, or a build id) and u32 prot, flags before the name. */
static void apply_mmap(struct tp_importer *imp, uint32_t type, const uint8_t *p, size_t n)
{
	struct tp *tp = imp->tp;
	size_t name_at = type == PD_RECORD_MMAP ? 40 : 72;
	if (n <= name_at) {
		istat_add(tp, TP_ISTAT_perf_record_skipped, type, 1);
		return;
	}
	uint16_t misc = tb_ld16(p + 4);
	uint32_t pid = tb_ld32(p + 8);
	uint64_t start = tb_ld64(p + 16), len = tb_ld64(p + 24), pgoff = tb_ld64(p + 32);
	const char *name = (const char *)p + name_at;
	const char *z = memchr(name, 0, n - name_at);
	size_t nl = z ? (size_t)(z - name) : n - name_at;
	bool kernel = (misc & PD_MISC_CPUMODE_MASK) == PD_MISC_KERNEL;
	uint32_t name_id, build_id = 0;
	uint64_t v;
	if (kernel && is_kernel_name(name, nl)) {
		name_id = imp->str_kernel_dso;
		build_id = imp->kernel_build_id;
	} else {
		name_id = tp_intern(tp, name, nl);
		if (hmap_get(&imp->build_ids, name_id, &v))
			build_id = (uint32_t)v;
		else if (!kernel)
			build_id = local_build_id(imp, name_id);
	}
	if (type == PD_RECORD_MMAP2 && (misc & PD_MISC_MMAP_BUILD_ID) && p[40] <= 20 && p[40]) {
		char hex[41];
		hex_id(hex, p + 44, p[40]);
		build_id = tp_intern_cstr(tp, hex);
	}
	if (start + len < start)
		len = UINT64_MAX - start;
	struct pd_proc *pr = kernel ? &imp->kernel : proc_get(imp, pid);
	struct pd_mm mm = {start, start + len, pgoff,
	                   mapping_for(imp, name_id, build_id, start, start + len, pgoff)};
	vec_push(&pr->maps, mm);
	proc_changed(imp, pr);
}

static void apply_comm(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	struct tp *tp = imp->tp;
	if (n <= 16) {
		istat_add(tp, TP_ISTAT_perf_record_skipped, PD_RECORD_COMM, 1);
		return;
	}
	uint32_t pid = tb_ld32(p + 8), tid = tb_ld32(p + 12);
	const char *s = (const char *)p + 16;
	imp->last_task = TP_NULL_U32;
	const char *z = memchr(s, 0, n - 16);
	uint32_t name = tp_intern(tp, s, z ? (size_t)(z - s) : n - 16);
	uint32_t utid = tp_thread_for_tid(tp, tid, pid);
	tp_thread_set_name(tp, utid, name);
	if (pid == tid) {
		uint32_t upid = tp_process_for_pid(tp, pid);
		if (!tp->t.process.name[upid] || (tb_ld16(p + 4) & PD_MISC_COMM_EXEC))
			tp_process_set_name(tp, upid, name);
	}
}

/* FORK: u32 pid, ppid, tid, ptid; u64 time. A new process starts with
 * its parent's mappings. */
static void apply_fork(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	struct tp *tp = imp->tp;
	if (n < 24) {
		istat_add(tp, TP_ISTAT_perf_record_skipped, PD_RECORD_FORK, 1);
		return;
	}
	uint32_t pid = tb_ld32(p + 8), ppid = tb_ld32(p + 12), tid = tb_ld32(p + 16);
	imp->last_task = TP_NULL_U32;
	tp_thread_for_tid(tp, tid, pid);
	struct pd_proc *parent = hmap_get_ptr(&imp->procs, ppid);
	if (!parent || pid == ppid)
		return;
	struct pd_proc *child = proc_get(imp, pid);
	if (child == parent)
		return;
	vec_clear(&child->maps);
	vec_reserve(&child->maps, parent->maps.len);
	memcpy(child->maps.data, parent->maps.data, parent->maps.len * sizeof(struct pd_mm));
	child->maps.len = parent->maps.len;
	proc_changed(imp, child);
}

static uint32_t frame_for(struct tp_importer *imp, struct pd_proc *pr, bool kernel, uint64_t ip)
{
	struct tp *tp = imp->tp;
	uint64_t v;
	if (hmap_get(&pr->frames, ip, &v))
		return (uint32_t)v;
	const struct pd_mm *mm = NULL;
	for (size_t i = pr->maps.len; i-- > 0;) {
		const struct pd_mm *m = &pr->maps.data[i];
		if (ip >= m->start && ip < m->end) {
			mm = m;
			break;
		}
	}
	uint32_t mapping;
	int64_t rel_pc;
	if (mm) {
		mapping = mm->mapping;
		rel_pc = (int64_t)(ip - mm->start + mm->pgoff);
	} else {
		tp_stat_inc(tp, TP_STAT_perf_dummy_mapping_used);
		if (pr->dummy == TP_NULL_U32)
			pr->dummy = mapping_for(imp, imp->str_empty, 0, 0, 0, 0);
		mapping = pr->dummy;
		rel_pc = (int64_t)ip;
	}
	uint32_t name = 0;
	if (kernel && imp->have_ksyms) {
		const char *s = ksyms_lookup(&imp->ksyms, ip);
		if (s)
			name = tp_intern_cstr(tp, s);
	}
	uint32_t frame = tp_stack_profile_frame(tp, &imp->sp, mapping, rel_pc, name);
	hmap_put(&pr->frames, ip, frame);
	return frame;
}

static bool mode_is_kernel(unsigned mode)
{
	return mode == PD_MISC_KERNEL || mode == 4; /* GUEST_KERNEL */
}

struct pd_chain_key {
	const struct tp_importer *imp;
	const uint8_t *p;
	uint32_t n, mode;
};

static bool chain_eq(const void *ctx, uint64_t idx)
{
	const struct pd_chain_key *k = ctx;
	const struct pd_chain *c = &k->imp->chains.data[idx];
	if (c->n != k->n || c->mode != k->mode)
		return false;
	/* Callchains are u64 arrays: compared 8 bytes a step (libc's memcmp
	 * may go a byte at a time, and this runs once per sample). */
	const uint8_t *a = k->imp->chain_bytes.data + c->off;
	for (uint32_t i = 0; i + 8 <= k->n; i += 8)
		if (tb_ld64(a + i) != tb_ld64(k->p + i))
			return false;
	return true;
}

static uint32_t resolve(struct tp_importer *imp, const struct tp_perf_data_sample *sp,
                        struct pd_proc *user, unsigned mode);

/* Event a's counter track on cpu (has_cpu false: perf_global_counter), as
 * Perfetto's: named after the event ("" before a description names it),
 * dimension args cpu, perf_session_id, name; source arg is_timebase (an
 * event that samples: its period or frequency below 2^62). */
static uint32_t counter_track(struct tp_importer *imp, const struct tp_perf_data_attr *a,
                              bool has_cpu, uint32_t cpu)
{
	struct tp *tp = imp->tp;
	uint32_t name = a->name ? a->name : imp->str_empty;
	struct tp_track_key key = {.type = has_cpu ? "perf_cpu_counter" : "perf_global_counter",
	                           .event_type = "counter",
	                           .utid = -1,
	                           .upid = -1,
	                           .cpu = has_cpu ? (int64_t)cpu : -1,
	                           .extra_dim = imp->session,
	                           .name = name};
	uint32_t track = tp_track_get(tp, &key);
	struct tp_track_table *t = &tp->t.track;
	if (t->dimension_arg_set_id[track] != TP_NULL_U32)
		return track;
	struct tp_args_builder *b = &tp->args_scratch;
	uint32_t k;
	tp_args_begin(b);
	if (has_cpu) {
		k = tp_intern_cstr(tp, "cpu");
		tp_args_add_int(b, k, k, cpu);
	}
	k = tp_intern_cstr(tp, "perf_session_id");
	tp_args_add_int(b, k, k, imp->session);
	k = tp_intern_cstr(tp, "name");
	tp_args_add_string(b, k, k, name);
	t->dimension_arg_set_id[track] = tp_args_commit(tp, b);
	tp_args_begin(b);
	k = tp_intern_cstr(tp, "is_timebase");
	tp_args_add_bool(b, k, k, a->sample_period < (1ull << 62));
	t->source_arg_set_id[track] = tp_args_commit(tp, b);
	return track;
}

/* The counter of (attr, cpu) looked up and made (counter_of: the last one
 * without a lookup, as most samples repeat their predecessor's). */
static uint32_t counter_find(struct tp_importer *imp, uint64_t key, uint32_t attr, bool has_cpu,
                             uint32_t cpu)
{
	uint64_t v;
	if (!hmap_get(&imp->counters, key, &v)) {
		v = imp->ctrs.len;
		struct pd_counter c = {counter_track(imp, &imp->attrs.data[attr], has_cpu, cpu), 0};
		vec_push(&imp->ctrs, c);
		hmap_put(&imp->counters, key, v);
	}
	imp->last_ckey = key;
	imp->last_c = (uint32_t)v;
	imp->last_c_valid = true;
	return (uint32_t)v;
}

static inline struct pd_counter *counter_of(struct tp_importer *imp, uint32_t attr, bool has_cpu,
                                            uint32_t cpu)
{
	uint64_t key = (uint64_t)attr << 32 | (has_cpu ? cpu : UINT32_MAX);
	if (imp->last_c_valid && imp->last_ckey == key)
		return &imp->ctrs.data[imp->last_c];
	uint32_t i = counter_find(imp, key, attr, has_cpu, cpu); /* may move ctrs */
	return &imp->ctrs.data[i];
}

/* The counter rows of a sample of event attr at ts, as Perfetto's: the
 * values it read (PERF_SAMPLE_READ, each on its own event's track), else
 * its period (or its event's fixed one) added to its event's running
 * total. *set is their counter set. False when it has neither, or reads an
 * event without an id or of an unknown one: the sample is skipped. */
static bool sample_counters(struct tp_importer *imp, uint32_t attr,
                            const struct tp_perf_data_sample *s, int64_t ts, uint32_t *set)
{
	struct tp *tp = imp->tp;
	const struct tp_perf_data_attr *a = &imp->attrs.data[attr];
	if (s->read) {
		vec_clear(&imp->set);
		uint64_t rf = a->read_format, v;
		size_t times = ((rf & PD_FORMAT_TOTAL_TIME_ENABLED) ? 8 : 0) +
		               ((rf & PD_FORMAT_TOTAL_TIME_RUNNING) ? 8 : 0);
		bool group = rf & PD_FORMAT_GROUP;
		uint64_t nr = group ? tb_ld64(s->read) : 1;
		size_t off = 8 + times;
		if (!(rf & PD_FORMAT_ID) || nr == 0)
			return false;
		/* Every id known before any row is written: a sample skipped
		 * for an unknown one leaves no counter rows behind. */
		for (int pass = 0; pass < 2; pass++) {
			size_t at = off;
			for (uint64_t i = 0; i < nr; i++) {
				uint64_t value = group ? tb_ld64(s->read + at) : tb_ld64(s->read);
				at += group ? 8 : 0;
				uint64_t id = tb_ld64(s->read + at);
				at += 8 + ((rf & PD_FORMAT_LOST) ? 8 : 0);
				if (!hmap_get(&imp->ids, id, &v))
					return false;
				if (pass == 0)
					continue;
				struct pd_counter *c =
				    counter_of(imp, (uint32_t)v, s->has_cpu, s->cpu);
				c->value = (double)value;
				vec_push(&imp->set,
				         tp_counter_add(tp, c->track, ts, c->value, TP_NULL_U32));
			}
		}
		*set = tp_profiler_counter_set(tp, imp->set.data, imp->set.len);
		return true;
	}
	if (!s->has_period && a->freq)
		return false;
	struct pd_counter *c = counter_of(imp, attr, s->has_cpu, s->cpu);
	c->value += (double)(s->has_period ? s->period : a->sample_period);
	uint32_t id = tp_counter_add(tp, c->track, ts, c->value, TP_NULL_U32);
	*set = tp_profiler_counter_set(tp, &id, 1);
	return true;
}

static void apply_sample(struct tp_importer *imp, const struct pd_rec *r, const uint8_t *p,
                         size_t n)
{
	struct tp *tp = imp->tp;
	struct tp_perf_data_sample s;
	const struct tp_perf_data_attr *a = &imp->attrs.data[r->attr];
	if (tp_perf_data_parse_sample(a, p + 8, n - 8, &s) != 0) {
		istat_add(tp, TP_ISTAT_perf_record_skipped, PD_RECORD_SAMPLE, 1);
		return;
	}
	unsigned mode = tb_ld16(p + 4) & PD_MISC_CPUMODE_MASK;
	if (mode == 0)
		tp_stat_inc(tp, TP_STAT_perf_samples_cpu_mode_unknown);
	struct pd_proc *user = proc_get(imp, s.has_tid ? s.pid : UINT32_MAX - 1);
	uint32_t cs = TP_NULL_U32;
	struct pd_chain_key key = {imp, s.chain, (uint32_t)(s.nchain * 8), mode};
	uint64_t h = 0;
	size_t slot = HMAP_END;
	if (s.chain && s.nchain <= PD_MAX_FRAMES) {
		h = tb_hash_bytes(s.chain, key.n, mode);
		slot = hmap_lookup(&user->chains, h, chain_eq, &key);
		if (slot != HMAP_END)
			cs = imp->chains.data[user->chains.slots[slot].val].callsite;
	}
	if (slot == HMAP_END)
		cs = resolve(imp, &s, user, mode);
	if (slot == HMAP_END && s.chain && s.nchain <= PD_MAX_FRAMES) {
		struct pd_chain c = {imp->chain_bytes.len, key.n, cs, mode};
		vec_reserve(&imp->chain_bytes, key.n);
		memcpy(imp->chain_bytes.data + imp->chain_bytes.len, s.chain, key.n);
		imp->chain_bytes.len += key.n;
		hmap_insert(&user->chains, h, imp->chains.len, imp->chains.len);
		vec_push(&imp->chains, c);
	}
	if (!s.has_tid || s.pid != imp->last_pid || s.tid != imp->last_tid ||
	    imp->last_task == TP_NULL_U32) {
		uint32_t utid = TP_NULL_U32, upid = TP_NULL_U32;
		if (s.has_tid) {
			utid = tp_thread_for_tid(tp, s.tid, s.pid);
			upid = tp_process_for_pid(tp, s.pid);
		}
		imp->last_pid = s.has_tid ? s.pid : UINT32_MAX;
		imp->last_tid = s.has_tid ? s.tid : UINT32_MAX;
		imp->last_task = tp_profiler_task_context(tp, upid, utid, TP_NULL_U32);
	}
	uint32_t cpu = s.has_cpu ? s.cpu : UINT32_MAX;
	if (cpu != imp->last_cpu || mode != imp->last_mode || !imp->last_exec_valid) {
		uint32_t ucpu = cpu < TP_MAX_CPUS ? tp_cpu_for(tp, cpu) : TP_NULL_U32;
		uint32_t mode_id = mode < TB_ARRAY_SIZE(imp->modes) && mode ? imp->modes[mode] : 0;
		imp->last_cpu = cpu;
		imp->last_mode = mode;
		imp->last_exec_valid = true;
		imp->last_exec = ucpu != TP_NULL_U32 || mode_id
		                     ? tp_profiler_execution_context(tp, ucpu, mode_id)
		                     : TP_NULL_U32;
	}
	int64_t ts = tp_trace_time(tp, a->clock, r->ts);
	uint32_t counter_set;
	if (!sample_counters(imp, r->attr, &s, ts, &counter_set)) {
		istat_add(tp, TP_ISTAT_perf_record_skipped, PD_RECORD_SAMPLE, 1);
		return;
	}
	struct tp_profiler_sample row = {
	    .ts = ts,
	    .source = imp->str_source,
	    .task_context = imp->last_task,
	    .execution_context = imp->last_exec,
	    .callsite = cs,
	    .session = imp->session,
	    .counter_set = counter_set,
	};
	uint32_t id = tp_profiler_sample_add(tp, &row);
	struct tp_profiler_sample_table *t = &tp->t.profiler_sample;
	if (a->name)
		tp_set_profiler_sample_event_name(t, id, a->name);
	if (s.has_period)
		tp_set_profiler_sample_period(t, id, (int64_t)s.period);
}

/* The leaf callsite of a sample's callchain (or of its ip without one),
 * its frames resolved through the mappings of user and the kernel. */
static uint32_t resolve(struct tp_importer *imp, const struct tp_perf_data_sample *sp,
                        struct pd_proc *user, unsigned mode)
{
	struct tp *tp = imp->tp;
	struct tp_perf_data_sample s = *sp;
	vec_clear(&imp->frames);
	bool kernel = mode_is_kernel(mode);
	if (s.chain) {
		for (uint64_t i = 0; i < s.nchain && imp->frames.len < PD_MAX_FRAMES; i++) {
			uint64_t ip = tb_ld64(s.chain + 8 * i);
			if (ip >= PD_CONTEXT_MAX) {
				kernel = ip == PD_CONTEXT_KERNEL || ip == PD_CONTEXT_GUEST_KERNEL;
				continue;
			}
			struct pd_proc *pr = kernel ? &imp->kernel : user;
			vec_push(&imp->frames, frame_for(imp, pr, kernel, ip));
		}
	} else if (s.has_ip) {
		struct pd_proc *pr = kernel ? &imp->kernel : user;
		vec_push(&imp->frames, frame_for(imp, pr, kernel, s.ip));
	}
	uint32_t cs = TP_NULL_U32;
	for (size_t i = imp->frames.len; i-- > 0;)
		cs = tp_stack_profile_callsite(tp, &imp->sp, cs, imp->frames.data[i]);
	return cs;
}

/* Stable sort of r[0, n) by ts: a natural merge sort, since perf's
 * records come as sorted runs (one per cpu buffer and round): O(n log runs),
 * one pass when they are already in order. */
static void sort_recs(struct pd_rec *r, size_t n)
{
	VEC(size_t) runs = VEC_INIT, next = VEC_INIT;
	vec_push(&runs, (size_t)0);
	for (size_t i = 1; i < n; i++)
		if (r[i].ts < r[i - 1].ts)
			vec_push(&runs, i);
	vec_push(&runs, n);
	if (runs.len > 2) {
		struct pd_rec *tmp = tb_malloc(n * sizeof(*tmp));
		struct pd_rec *src = r, *dst = tmp;
		while (runs.len > 2) {
			vec_clear(&next);
			size_t k = 0;
			for (; k + 2 < runs.len; k += 2) {
				size_t a = runs.data[k], m = runs.data[k + 1], b = runs.data[k + 2];
				size_t i = a, j = m, o = a;
				while (i < m && j < b)
					dst[o++] = src[j].ts < src[i].ts ? src[j++] : src[i++];
				while (i < m)
					dst[o++] = src[i++];
				while (j < b)
					dst[o++] = src[j++];
				vec_push(&next, a);
			}
			if (k + 1 < runs.len) { /* an odd run left */
				size_t a = runs.data[k];
				memcpy(dst + a, src + a, (n - a) * sizeof(*src));
				vec_push(&next, a);
			}
			vec_push(&next, n);
			size_t *d = runs.data, c = runs.cap;
			runs.data = next.data, runs.len = next.len, runs.cap = next.cap;
			next.data = d, next.len = 0, next.cap = c;
			struct pd_rec *t = src;
			src = dst;
			dst = t;
		}
		if (src != r)
			memcpy(r, src, n * sizeof(*r));
		tb_free(tmp);
	}
	vec_release(&runs);
	vec_release(&next);
}

/* Kernel symbols from perf's build-id cache: the kallsyms `perf record`
 * saved beside the kernel's build id ($HOME/.debug). */
static void load_ksyms(struct tp_importer *imp)
{
	const char *home = getenv("HOME");
	if (!imp->kernel_build_id || !home || !*home)
		return;
	char path[4096];
	int n = snprintf(path, sizeof path, "%s/.debug/[kernel.kallsyms]/%s/kallsyms", home,
	                 tp_str(imp->tp, imp->kernel_build_id));
	if (n <= 0 || (size_t)n >= sizeof path)
		return;
	struct tb_err err;
	tb_err_clear(&err);
	if (ksyms_load(&imp->ksyms, path, &err) == 0 && imp->ksyms.n > 0)
		imp->have_ksyms = true;
	else
		ksyms_release(&imp->ksyms);
}

static void apply_all(struct tp_importer *imp)
{
	struct tp *tp = imp->tp;
	struct pd_rec *r = imp->recs.data;
	size_t n = imp->recs.len;
	sort_recs(r, n);
	load_ksyms(imp);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *p = r[i].off & PD_DEC_BIT ? imp->dec.data + (r[i].off & ~PD_DEC_BIT)
		                                         : imp->data + r[i].off;
		uint32_t type = tb_ld32(p);
		size_t sz = tb_ld16(p + 6);
		switch (type) {
		case PD_RECORD_SAMPLE:
			if (imp->attrs.len)
				apply_sample(imp, &r[i], p, sz);
			break;
		case PD_RECORD_MMAP:
		case PD_RECORD_MMAP2:
			apply_mmap(imp, type, p, sz);
			break;
		case PD_RECORD_COMM:
			apply_comm(imp, p, sz);
			break;
		case PD_RECORD_FORK:
			apply_fork(imp, p, sz);
			break;
		default:
			break;
		}
	}
	if (imp->cmdline)
		tp->t.profiler_session.cmdline[imp->session] = imp->cmdline;
}

/* ---- file and pipe layouts ------------------------------------------------------- */

/* In file mode: a section {u64 offset, u64 size} at p, checked against the
 * file; false when it lies outside. */
static bool section(const struct tp_importer *imp, const uint8_t *p, uint64_t *off, uint64_t *size)
{
	*off = tb_ld64(p);
	*size = tb_ld64(p + 8);
	return *off <= imp->len && *size <= imp->len - *off;
}

static int parse_file(struct tp_importer *imp)
{
	struct tp *tp = imp->tp;
	const uint8_t *h = imp->data;
	size_t len = imp->len;
	if (len < PD_FILE_HEADER_SIZE)
		return tp_fail(tp, -EINVAL, "perf.data: truncated file header (%zu bytes)", len);
	uint64_t attr_size = tb_ld64(h + 16), aoff, asz, doff, dsz;
	if (!section(imp, h + 24, &aoff, &asz) || attr_size < PD_ATTR_SIZE_VER0 + 16 ||
	    attr_size > 4096)
		return tp_fail(tp, -EINVAL, "perf.data: bad attr section");
	for (uint64_t i = 0; i < asz / attr_size; i++) {
		const uint8_t *e = h + aoff + i * attr_size;
		uint64_t ioff, isz;
		if (!section(imp, e + attr_size - 16, &ioff, &isz))
			ioff = isz = 0;
		add_attr(imp, e, (size_t)(attr_size - 16), h + ioff, (size_t)(isz / 8));
	}
	if (!imp->attrs.len)
		return tp_fail(tp, -EINVAL, "perf.data: no event attributes");
	doff = tb_ld64(h + 40);
	dsz = tb_ld64(h + 48);
	bool cut = doff > len || dsz > len - doff;
	if (doff > len)
		doff = len;
	if (cut)
		dsz = len - doff;
	/* Feature sections: one {offset, size} per set bit, after the data. */
	if (!cut) {
		const uint8_t *bits = h + 72;
		uint64_t at = doff + dsz;
		for (unsigned f = 0; f < 256; f++) {
			if (!(bits[f / 8] >> (f % 8) & 1))
				continue;
			uint64_t fo, fs;
			if (at > len || len - at < 16 || !section(imp, h + at, &fo, &fs)) {
				istat_add(tp, TP_ISTAT_perf_features_skipped, f, 1);
				break;
			}
			feature(imp, f, h + fo, (size_t)fs);
			at += 16;
		}
	}
	size_t pos = (size_t)doff;
	if (records(imp, false, &pos, (size_t)(doff + dsz), false) != 0 || cut)
		tp_stat_inc(tp, TP_STAT_perf_data_truncated);
	return 0;
}

static int parse_pipe(struct tp_importer *imp)
{
	size_t pos = PD_PIPE_HEADER_SIZE;
	if (records(imp, false, &pos, imp->len, false) != 0)
		tp_stat_inc(imp->tp, TP_STAT_perf_data_truncated);
	return 0;
}

/* ---- importer ops -------------------------------------------------------------------- */

static bool perf_data_sniff(const uint8_t *p, size_t n)
{
	return n >= 8 && memcmp(p, "PERFILE2", 8) == 0;
}

static struct tp_importer *perf_data_create(struct tp *tp)
{
	static const char *const modes[] = {"unknown",    "kernel",       "user",
	                                    "hypervisor", "guest_kernel", "guest_user"};
	struct tp_importer *imp = tb_calloc(1, sizeof(*imp));
	imp->tp = tp;
	tp_stack_profile_init(&imp->sp);
	hmap_init(&imp->ids);
	hmap_init(&imp->build_ids);
	hmap_init(&imp->procs);
	hmap_init(&imp->counters);
	imp->kernel.dummy = TP_NULL_U32;
	imp->last_task = TP_NULL_U32;
	imp->str_source = tp_intern_cstr(tp, "linux.perf");
	imp->str_kernel_dso = tp_intern_cstr(tp, "[kernel.kallsyms]");
	imp->str_empty = tp_intern_cstr(tp, "");
	for (size_t i = 0; i < TB_ARRAY_SIZE(modes); i++)
		imp->modes[i] = tp_intern_cstr(tp, modes[i]);
	imp->session = tp_profiler_session_new(tp, imp->str_source, 0);
	return imp;
}

static int perf_data_parse(struct tp_importer *imp, const uint8_t *p, size_t n)
{
	imp->tp->bytes_parsed += n;
	if (imp->failed || n == 0)
		return 0;
	if (!imp->borrowed && imp->in.len == 0) {
		size_t wl;
		const uint8_t *w = tp_whole_input(imp->tp, &wl);
		if (w) {
			imp->borrowed = true;
			imp->data = w;
			imp->len = wl;
		}
	}
	if (imp->borrowed)
		return 0; /* all of it is in imp->data already */
	if (vec_try_reserve(&imp->in, n) != 0) {
		imp->failed = true;
		return tp_fail(imp->tp, -ENOMEM, "perf.data: out of memory holding the file");
	}
	if (n >= (1u << 20))
		tb_populate(imp->in.data + imp->in.len, n); /* one call, not a fault a page */
	memcpy(imp->in.data + imp->in.len, p, n);
	imp->in.len += n;
	return 0;
}

static int perf_data_eof(struct tp_importer *imp)
{
	struct tp *tp = imp->tp;
	if (imp->failed)
		return 0;
	if (!imp->borrowed) {
		imp->data = imp->in.data;
		imp->len = imp->in.len;
	}
	if (imp->len < 16)
		return tp_fail(tp, -EINVAL, "perf.data: truncated header");
	uint64_t hsz = tb_ld64(imp->data + 8);
	int rc;
	if (hsz == PD_PIPE_HEADER_SIZE)
		rc = parse_pipe(imp);
	else if (hsz == PD_FILE_HEADER_SIZE)
		rc = parse_file(imp);
	else
		return tp_fail(tp, -EINVAL, "perf.data: unknown header size %llu",
		               (unsigned long long)hsz);
	if (rc == 0)
		apply_all(imp);
	return rc;
}

static void perf_data_destroy(struct tp_importer *imp)
{
	for (size_t i = hmap_next(&imp->procs, 0); i != HMAP_END;
	     i = hmap_next(&imp->procs, i + 1)) {
		struct pd_proc *pr = (struct pd_proc *)(uintptr_t)imp->procs.slots[i].val;
		proc_release(pr);
		tb_free(pr);
	}
	proc_release(&imp->kernel);
	hmap_release(&imp->procs);
	hmap_release(&imp->ids);
	hmap_release(&imp->build_ids);
	hmap_release(&imp->counters);
	vec_release(&imp->ctrs);
	vec_release(&imp->set);
	tp_stack_profile_release(&imp->sp);
	if (imp->have_ksyms)
		ksyms_release(&imp->ksyms);
	if (imp->zs)
		ZSTD_freeDStream(imp->zs);
	vec_release(&imp->in);
	vec_release(&imp->dec);
	vec_release(&imp->attrs);
	vec_release(&imp->recs);
	vec_release(&imp->frames);
	vec_release(&imp->chains);
	vec_release(&imp->chain_bytes);
	tb_free(imp);
}

const struct tp_importer_ops tp_perf_data_importer = {
    .name = "perf",
    .sniff = perf_data_sniff,
    .create = perf_data_create,
    .parse = perf_data_parse,
    .eof = perf_data_eof,
    .destroy = perf_data_destroy,
};
