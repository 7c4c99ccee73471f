/*
 * The trace.dat container (trace-cmd's file versions 6 and 7; layouts in
 * README.md): the initial header, the metadata (header page and event
 * formats, kallsyms, printk formats, cmdlines), the options and where each
 * buffer's per-cpu ring-buffer pages lie. v7 metadata sections may be
 * compressed as a whole, and flyrecord data in chunks, with the algorithm
 * the header names (zstd or zlib).
 *
 * The whole file is at td->data; everything here points into it, or into the
 * inflated sections kept in td->owned. Any read past the end fails the load
 * with one line naming what was cut.
 */
#include "trace_dat_int.h"
#include "../../io/io.h"

#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include <stdio.h>
#include <string.h>

/* A bounded reader over one region. */
struct td_rd {
	const uint8_t *p, *e;
	bool bad;
};

static bool rd_need(struct td_rd *r, uint64_t n)
{
	if (r->bad || (uint64_t)(r->e - r->p) < n) {
		r->bad = true;
		return false;
	}
	return true;
}
static uint16_t rd16(struct trace_dat *td, struct td_rd *r)
{
	if (!rd_need(r, 2))
		return 0;
	r->p += 2;
	return td_r16(td, r->p - 2);
}
static uint32_t rd32(struct trace_dat *td, struct td_rd *r)
{
	if (!rd_need(r, 4))
		return 0;
	r->p += 4;
	return td_r32(td, r->p - 4);
}
static uint64_t rd64(struct trace_dat *td, struct td_rd *r)
{
	if (!rd_need(r, 8))
		return 0;
	r->p += 8;
	return td_r64(td, r->p - 8);
}
static const char *rd_bytes(struct td_rd *r, uint64_t n)
{
	if (!rd_need(r, n))
		return NULL;
	r->p += n;
	return (const char *)r->p - n;
}
static const char *rd_str(struct td_rd *r, size_t *len)
{
	if (r->bad)
		return NULL;
	const uint8_t *z = memchr(r->p, 0, (size_t)(r->e - r->p));
	if (!z) {
		r->bad = true;
		return NULL;
	}
	const char *s = (const char *)r->p;
	*len = (size_t)(z - r->p);
	r->p = z + 1;
	return s;
}

static void *zstd_alloc(void *opaque, size_t n)
{
	(void)opaque;
	return tb_malloc(n);
}
static void zstd_free(void *opaque, void *p)
{
	(void)opaque;
	tb_free(p);
}

int tp_td_inflate(struct trace_dat *td, const uint8_t *p, size_t n, size_t out_len, uint8_t **out)
{
	*out = NULL;
	if (td->comp == TD_COMP_ZLIB) {
		size_t got = 0;
		if (tp_zlib_inflate(p, n, out_len, out, &got) < 0 || got != out_len) {
			tb_free(*out);
			*out = NULL;
			return -EINVAL;
		}
		return 0;
	}
	if (td->comp != TD_COMP_ZSTD)
		return -EINVAL;
	if (!td->zstd) {
		ZSTD_customMem mem = {zstd_alloc, zstd_free, NULL};
		td->zstd = ZSTD_createDCtx_advanced(mem);
		if (!td->zstd)
			return -ENOMEM;
	}
	*out = tb_malloc(out_len ? out_len : 1);
	size_t r = ZSTD_decompressDCtx(td->zstd, *out, out_len, p, n);
	if (ZSTD_isError(r) || r != out_len) {
		tb_free(*out);
		*out = NULL;
		return -EINVAL;
	}
	return 0;
}

static int cut(struct trace_dat *td, const char *what)
{
	return tp_fail(td->tp, -EINVAL, "trace.dat: the file is cut short or corrupt (%s)", what);
}

/* ---- the metadata blocks, the same in v6 and inside v7 sections ---------- */

static int header_info(struct trace_dat *td, struct td_rd *r)
{
	const char *s = rd_bytes(r, 12);
	if (!s || memcmp(s, "header_page", 12) != 0)
		return cut(td, "header_page");
	uint64_t n = rd64(td, r);
	const char *hp = rd_bytes(r, n);
	if (!hp)
		return cut(td, "header_page");
	int rc = tp_td_header_page(td, hp, (size_t)n);
	if (rc < 0)
		return rc;
	s = rd_bytes(r, 13);
	if (!s || memcmp(s, "header_event", 13) != 0)
		return cut(td, "header_event");
	n = rd64(td, r);
	if (!rd_bytes(r, n))
		return cut(td, "header_event");
	return 0;
}

static int ftrace_formats(struct trace_dat *td, struct td_rd *r)
{
	uint32_t count = rd32(td, r);
	for (uint32_t i = 0; i < count && !r->bad; i++) {
		uint64_t n = rd64(td, r);
		const char *f = rd_bytes(r, n);
		if (f && !tp_td_event_format(td, f, (size_t)n))
			tp_stat_inc(td->tp, TP_STAT_trace_dat_bad_format);
	}
	return r->bad ? cut(td, "ftrace event formats") : 0;
}

static int event_formats(struct trace_dat *td, struct td_rd *r)
{
	uint32_t systems = rd32(td, r);
	for (uint32_t i = 0; i < systems && !r->bad; i++) {
		size_t sl;
		rd_str(r, &sl);
		uint32_t count = rd32(td, r);
		for (uint32_t j = 0; j < count && !r->bad; j++) {
			uint64_t n = rd64(td, r);
			const char *f = rd_bytes(r, n);
			if (f && !tp_td_event_format(td, f, (size_t)n))
				tp_stat_inc(td->tp, TP_STAT_trace_dat_bad_format);
		}
	}
	return r->bad ? cut(td, "event formats") : 0;
}

/* kallsyms and printk: a 32-bit size; cmdlines: a 64-bit one. */
static int text_block(struct trace_dat *td, struct td_rd *r, int which)
{
	uint64_t n = which == 2 ? rd64(td, r) : rd32(td, r);
	const char *s = rd_bytes(r, n);
	if (!s)
		return cut(td, which == 0   ? "kallsyms"
		               : which == 1 ? "printk formats"
		                            : "cmdlines");
	if (which == 0)
		tp_td_kallsyms(td, s, (size_t)n);
	else if (which == 1)
		tp_td_printk(td, s, (size_t)n);
	else
		tp_td_cmdlines(td, s, (size_t)n);
	return 0;
}

/* ---- cpus and options ------------------------------------------------------ */

static int add_cpu(struct trace_dat *td, uint32_t cpu, uint64_t off, uint64_t size, bool compressed)
{
	if (!size)
		return 0;
	if (compressed && size < UINT64_MAX - 4)
		size += 4; /* the chunk count is not in the size */
	if (off > td->len || size > td->len - off) {
		/* The data of a cpu runs past the end: keep what is there. */
		tp_stat_inc(td->tp, TP_STAT_trace_dat_truncated);
		if (off > td->len)
			return 0;
		size = td->len - off;
	}
	if (cpu >= TD_MAX_CPUS)
		return cut(td, "cpu number");
	struct td_cpu *c = vec_push_zeroed(&td->cpus);
	c->cpu = cpu;
	c->data = td->data + off;
	c->end = c->data + size;
	c->compressed = compressed;
	if (compressed) {
		if (size < 4) {
			c->end = c->data;
		} else {
			c->chunks_left = td_r32(td, c->data);
			c->data += 4;
		}
	}
	c->pg = c->pg_end = c->data;
	if (!compressed)
		c->pg_end = c->end;
	return 0;
}

static void set_clock(struct trace_dat *td, const char *s, size_t n)
{
	/* The offsets and TSC conversion are applied whatever the clock;
	 * it is recorded as metadata only. */
	(void)td;
	(void)s;
	(void)n;
}

/* A CPUSTAT option: a cpu's per_cpu/cpuN/stats when the data was taken
 * ("CPU: 1\nentries: 0\noverrun: 0\ncommit overrun: 0\n..."). Perfetto's
 * ftrace_cpu_*_end stats, summed over the buffers (each has its own). */
static void cpustat(struct trace_dat *td, const char *s, size_t n)
{
	static const struct {
		const char *key;
		enum tp_istat stat;
	} keys[] = {
	    {"entries: ", TP_ISTAT_ftrace_cpu_entries_end},
	    {"overrun: ", TP_ISTAT_ftrace_cpu_overrun_end},
	    {"commit overrun: ", TP_ISTAT_ftrace_cpu_commit_overrun_end},
	    {"bytes: ", TP_ISTAT_ftrace_cpu_bytes_end},
	    {"dropped events: ", TP_ISTAT_ftrace_cpu_dropped_events_end},
	    {"read events: ", TP_ISTAT_ftrace_cpu_read_events_end},
	};
	const char *e = s + n, *l = s;
	uint64_t cpu = UINT64_MAX;
	while (l < e) {
		const char *nl = memchr(l, '\n', (size_t)(e - l));
		size_t ln = (size_t)((nl ? nl : e) - l);
		uint64_t v;
		if (ln > 5 && memcmp(l, "CPU: ", 5) == 0) {
			if (tb_dec_prefix(l + 5, ln - 5, &cpu) == 0 || cpu >= TD_MAX_CPUS)
				return;
		} else if (cpu != UINT64_MAX) {
			for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
				size_t k = strlen(keys[i].key);
				int64_t old = 0;
				if (ln <= k || memcmp(l, keys[i].key, k) != 0 ||
				    tb_dec_prefix(l + k, ln - k, &v) == 0 || v > INT64_MAX)
					continue;
				tp_istat_get(td->tp, keys[i].stat, (int64_t)cpu, &old);
				tp_istat_set(td->tp, keys[i].stat, (int64_t)cpu, old + (int64_t)v);
			}
		}
		l = nl ? nl + 1 : e;
	}
}

/* One option; sections is where v7 keeps the offsets of the metadata. */
static int option(struct trace_dat *td, uint16_t id, const uint8_t *p, uint32_t n,
                  uint64_t *sections)
{
	struct td_rd r = {p, p + n, false};
	switch (id) {
	case 3: { /* BUFFER */
		uint64_t off = rd64(td, &r);
		size_t l;
		rd_str(&r, &l); /* instance name */
		if (td->version == 6) {
			/* v6: at off, "flyrecord\0" and (offset, size) per cpu of
			 * the file's cpu count (sections[0]). */
			if (off > td->len || td->len - off < 10)
				return cut(td, "buffer");
			struct td_rd b = {td->data + off + 10, td->data + td->len, false};
			for (uint32_t i = 0; i < sections[0] && !b.bad; i++) {
				uint64_t o = rd64(td, &b), s = rd64(td, &b);
				if (!b.bad && add_cpu(td, i, o, s, false) < 0)
					return -EINVAL;
			}
			return b.bad ? cut(td, "buffer") : 0;
		}
		const char *clk = rd_str(&r, &l);
		if (clk)
			set_clock(td, clk, l);
		rd32(td, &r); /* page size */
		uint32_t cpus = rd32(td, &r);
		if (r.bad)
			return cut(td, "buffer option");
		/* The section header at off says whether the data is
		 * compressed. */
		bool comp = false;
		if (off <= td->len && td->len - off >= 16)
			comp = (td_r16(td, td->data + off + 2) & 1) != 0;
		for (uint32_t i = 0; i < cpus && !r.bad; i++) {
			uint32_t cpu = rd32(td, &r);
			uint64_t o = rd64(td, &r), s = rd64(td, &r);
			if (!r.bad && add_cpu(td, cpu, o, s, comp) < 0)
				return -EINVAL;
		}
		return r.bad ? cut(td, "buffer option") : 0;
	}
	case 2: /* CPUSTAT */
		cpustat(td, (const char *)p, n);
		return 0;
	case 7: { /* OFFSET: "%lld" added to every ts */
		char buf[32];
		size_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
		memcpy(buf, p, k);
		buf[k] = 0;
		long long v = 0;
		if (sscanf(buf, "%lld", &v) == 1)
			td->ts_offset = v;
		return 0;
	}
	case 14: /* TSC2NSEC */
		td->tsc_mult = rd32(td, &r);
		td->tsc_shift = rd32(td, &r);
		td->tsc_off = (int64_t)rd64(td, &r);
		td->tsc2nsec = !r.bad && td->tsc_shift < 64;
		return 0;
	case 16: /* HEADER_INFO */
	case 17: /* FTRACE_EVENTS */
	case 18: /* EVENT_FORMATS */
	case 19: /* KALLSYMS */
	case 20: /* PRINTK */
	case 21: /* CMDLINES */
		if (td->version == 7 && n == 8)
			sections[id] = td_r64(td, p);
		return 0;
	default:
		return 0;
	}
}

/* ---- v7 sections ----------------------------------------------------------- */

/* The section at off, checked to be id, its (inflated) body in *r. With
 * lazy, a compressed body is not inflated: r holds it as stored (its
 * sizes first) and the return is 1. */
static int section_at(struct trace_dat *td, uint64_t off, uint16_t id, struct td_rd *r, bool lazy)
{
	if (off > td->len || td->len - off < 16)
		return cut(td, "section header");
	const uint8_t *h = td->data + off;
	uint16_t sid = td_r16(td, h), flags = td_r16(td, h + 2);
	uint64_t size = td_r64(td, h + 8);
	if (sid != id)
		return tp_fail(td->tp, -EINVAL, "trace.dat: section %u found where %u was expected",
		               sid, id);
	if (size > td->len - off - 16)
		return cut(td, "section");
	r->p = h + 16;
	r->e = r->p + size;
	r->bad = false;
	if (!(flags & 1))
		return 0;
	if (size < 8)
		return cut(td, "compressed section");
	uint32_t csize = td_r32(td, r->p), usize = td_r32(td, r->p + 4);
	if (csize > size - 8 || usize > TD_MAX_SECTION)
		return cut(td, "compressed section");
	if (lazy)
		return 1;
	uint8_t *out;
	if (tp_td_inflate(td, r->p + 8, csize, usize, &out) < 0)
		return tp_fail(td->tp, -EINVAL, "trace.dat: a compressed section does not inflate");
	vec_push(&td->owned, out);
	r->p = out;
	r->e = out + usize;
	return 0;
}

static int section(struct trace_dat *td, uint64_t off, uint16_t id, struct td_rd *r)
{
	return section_at(td, off, id, r, false);
}

/* The kallsyms section: most traces never look a symbol up, so a
 * compressed one is inflated on the first lookup (tp_td_kallsyms_inflate). */
static int kallsyms_section(struct trace_dat *td, uint64_t off)
{
	struct td_rd r;
	int rc = section_at(td, off, 19, &r, true);
	if (rc == 1) {
		td->ksyms_z = r.p;
		return 0;
	}
	return rc < 0 ? rc : text_block(td, &r, 0);
}

void tp_td_kallsyms_inflate(struct trace_dat *td)
{
	const uint8_t *z = td->ksyms_z;
	uint8_t *out;
	td->ksyms_z = NULL;
	if (!z)
		return;
	uint32_t csize = td_r32(td, z), usize = td_r32(td, z + 4);
	if (tp_td_inflate(td, z + 8, csize, usize, &out) < 0) {
		tp_stat_inc(td->tp, TP_STAT_trace_dat_decompress_failure);
		return;
	}
	vec_push(&td->owned, out);
	struct td_rd r = {out, out + usize, false};
	uint32_t n = rd32(td, &r);
	const char *text = rd_bytes(&r, n);
	if (text)
		tp_td_kallsyms(td, text, n);
	else
		tp_stat_inc(td->tp, TP_STAT_trace_dat_truncated);
}

/* Walk the chain of v7 options sections from off (linked by their DONE
 * option, at most 64) and apply either the BUFFER options (buffers) or all
 * the others. Each option is bounds-checked here, once, for both passes. */
static int options_walk(struct trace_dat *td, uint64_t off, bool buffers, uint64_t *sections)
{
	for (int chain = 0; off && chain < 64; chain++) {
		struct td_rd o;
		int rc = section(td, off, 0, &o);
		if (rc < 0)
			return rc;
		off = 0;
		while (!o.bad && o.p < o.e) {
			uint16_t id = rd16(td, &o);
			uint32_t n = rd32(td, &o);
			const uint8_t *d = (const uint8_t *)rd_bytes(&o, n);
			if (!d)
				break;
			if (id == 0) {
				off = n == 8 ? td_r64(td, d) : 0;
				break;
			}
			if ((id == 3) == buffers && option(td, id, d, n, sections) < 0)
				return -EINVAL;
		}
		if (o.bad)
			return cut(td, "options");
	}
	return 0;
}

static int parse_v7(struct trace_dat *td, struct td_rd *r)
{
	size_t l;
	const char *name = rd_str(r, &l);
	rd_str(r, &l); /* compression version */
	uint64_t opt = rd64(td, r);
	if (r->bad)
		return cut(td, "initial header");
	if (strcmp(name, "zstd") == 0)
		td->comp = TD_COMP_ZSTD;
	else if (strcmp(name, "zlib") == 0)
		td->comp = TD_COMP_ZLIB;
	else if (strcmp(name, "none") != 0)
		return tp_fail(td->tp, -EINVAL, "trace.dat: unsupported compression '%.32s'", name);
	uint64_t sections[22] = {0};
	int rc = options_walk(td, opt, false, sections);
	if (rc < 0)
		return rc;
	struct td_rd s;
	if (!sections[16])
		return tp_fail(td->tp, -EINVAL, "trace.dat: no header info section");
	if ((rc = section(td, sections[16], 16, &s)) < 0 || (rc = header_info(td, &s)) < 0)
		return rc;
	if (sections[17] &&
	    ((rc = section(td, sections[17], 17, &s)) < 0 || (rc = ftrace_formats(td, &s)) < 0))
		return rc;
	if (sections[18] &&
	    ((rc = section(td, sections[18], 18, &s)) < 0 || (rc = event_formats(td, &s)) < 0))
		return rc;
	if (sections[19] && (rc = kallsyms_section(td, sections[19])) < 0)
		return rc;
	if (sections[20] &&
	    ((rc = section(td, sections[20], 20, &s)) < 0 || (rc = text_block(td, &s, 1)) < 0))
		return rc;
	if (sections[21] &&
	    ((rc = section(td, sections[21], 21, &s)) < 0 || (rc = text_block(td, &s, 2)) < 0))
		return rc;
	/* The buffers last: their data needs the header page layout. */
	return options_walk(td, opt, true, sections);
}

static int parse_v6(struct trace_dat *td, struct td_rd *r)
{
	int rc;
	if ((rc = header_info(td, r)) < 0 || (rc = ftrace_formats(td, r)) < 0 ||
	    (rc = event_formats(td, r)) < 0 || (rc = text_block(td, r, 0)) < 0 ||
	    (rc = text_block(td, r, 1)) < 0 || (rc = text_block(td, r, 2)) < 0)
		return rc;
	uint32_t cpus = rd32(td, r);
	if (cpus > TD_MAX_CPUS)
		return cut(td, "cpu count");
	uint64_t sections[22] = {cpus};
	for (;;) {
		const char *tag = rd_bytes(r, 10);
		if (!tag)
			return cut(td, "flyrecord");
		if (memcmp(tag, "options  ", 10) == 0) {
			for (;;) {
				uint16_t id = rd16(td, r);
				if (id == 0 || r->bad)
					break;
				uint32_t n = rd32(td, r);
				const uint8_t *d = (const uint8_t *)rd_bytes(r, n);
				if (d && option(td, id, d, n, sections) < 0)
					return -EINVAL;
			}
			if (r->bad)
				return cut(td, "options");
			continue;
		}
		if (memcmp(tag, "latency  ", 10) == 0)
			return 0; /* latency text: no flyrecord data */
		if (memcmp(tag, "flyrecord", 10) != 0)
			return cut(td, "flyrecord");
		break;
	}
	for (uint32_t i = 0; i < cpus; i++) {
		uint64_t o = rd64(td, r), s = rd64(td, r);
		if (r->bad)
			return cut(td, "flyrecord");
		if ((rc = add_cpu(td, i, o, s, false)) < 0)
			return rc;
	}
	return 0;
}

int tp_td_file_parse(struct trace_dat *td)
{
	struct td_rd r = {td->data, td->data + td->len, false};
	const char *magic = rd_bytes(&r, 10);
	if (!magic || memcmp(magic, "\x17\x08\x44tracing", 10) != 0)
		return cut(td, "magic");
	size_t vl;
	const char *v = rd_str(&r, &vl);
	if (v && (vl != 1 || (v[0] != '6' && v[0] != '7')))
		return tp_fail(td->tp, -EINVAL, "trace.dat: unsupported file version '%.8s'", v);
	const uint8_t *hdr = (const uint8_t *)rd_bytes(&r, 6);
	if (!v || !hdr)
		return cut(td, "initial header");
	td->version = (uint32_t)(v[0] - '0');
	td->be = hdr[0] != 0;
	td->long_size = hdr[1];
	if (td->long_size != 4 && td->long_size != 8)
		return tp_fail(td->tp, -EINVAL, "trace.dat: bad long size %u", td->long_size);
	td->page_size = td_r32(td, hdr + 2);
	if (td->page_size < 64 || td->page_size > (1u << 24) ||
	    (td->page_size & (td->page_size - 1)))
		return tp_fail(td->tp, -EINVAL, "trace.dat: bad page size %u", td->page_size);
	return td->version == 7 ? parse_v7(td, &r) : parse_v6(td, &r);
}

void tp_td_file_release(struct trace_dat *td)
{
	for (size_t i = 0; i < td->owned.len; i++)
		tb_free(td->owned.data[i]);
	vec_release(&td->owned);
	for (size_t i = 0; i < td->cpus.len; i++)
		tp_td_cpu_release(&td->cpus.data[i]);
	vec_release(&td->cpus);
	ZSTD_freeDCtx(td->zstd);
	td->zstd = NULL;
}
