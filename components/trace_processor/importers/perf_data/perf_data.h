/*
 * The perf.data importer's parser pieces (importers/perf_data/): the
 * on-disk layouts of `perf record`'s output that the unit tests reach
 * directly with synthetic bytes. The importer itself is
 * tp_perf_data_importer (importers/importer.h); README.md has the layouts.
 */
#ifndef TB_TP_PERF_DATA_H
#define TB_TP_PERF_DATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* perf_event_attr.sample_type bits (linux/perf_event.h). */
#define PD_SAMPLE_IP (1ull << 0)
#define PD_SAMPLE_TID (1ull << 1)
#define PD_SAMPLE_TIME (1ull << 2)
#define PD_SAMPLE_ADDR (1ull << 3)
#define PD_SAMPLE_READ (1ull << 4)
#define PD_SAMPLE_CALLCHAIN (1ull << 5)
#define PD_SAMPLE_ID (1ull << 6)
#define PD_SAMPLE_CPU (1ull << 7)
#define PD_SAMPLE_PERIOD (1ull << 8)
#define PD_SAMPLE_STREAM_ID (1ull << 9)
#define PD_SAMPLE_RAW (1ull << 10)
#define PD_SAMPLE_BRANCH_STACK (1ull << 11)
#define PD_SAMPLE_REGS_USER (1ull << 12)
#define PD_SAMPLE_STACK_USER (1ull << 13)
#define PD_SAMPLE_WEIGHT (1ull << 14)
#define PD_SAMPLE_DATA_SRC (1ull << 15)
#define PD_SAMPLE_IDENTIFIER (1ull << 16)
#define PD_SAMPLE_TRANSACTION (1ull << 17)
#define PD_SAMPLE_REGS_INTR (1ull << 18)
#define PD_SAMPLE_PHYS_ADDR (1ull << 19)
#define PD_SAMPLE_AUX (1ull << 20)
#define PD_SAMPLE_CGROUP (1ull << 21)
#define PD_SAMPLE_DATA_PAGE_SIZE (1ull << 22)
#define PD_SAMPLE_CODE_PAGE_SIZE (1ull << 23)
#define PD_SAMPLE_WEIGHT_STRUCT (1ull << 24)

/* Callchain context markers: entries at or above PD_CONTEXT_MAX. */
#define PD_CONTEXT_HV ((uint64_t)-32)
#define PD_CONTEXT_KERNEL ((uint64_t)-128)
#define PD_CONTEXT_USER ((uint64_t)-512)
#define PD_CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define PD_CONTEXT_GUEST_USER ((uint64_t)-2560)
#define PD_CONTEXT_MAX ((uint64_t)-4095)

/* What a record layout needs of its event's perf_event_attr. */
struct tp_perf_data_attr {
	uint64_t sample_type, read_format, branch_sample_type;
	uint64_t regs_user, regs_intr; /* register masks */
	uint64_t config;
	uint32_t type;
	uint32_t clock;         /* Perfetto builtin clock id of the timestamps */
	uint32_t name;          /* pool id, 0 until an event description names it */
	uint64_t sample_period; /* sample_freq when freq */
	bool freq;
	bool sample_id_all; /* non-sample records end with a sample_id */
	bool branch_hw_index;
};

/* One PERF_RECORD_SAMPLE, decoded. chain points into the record (nchain
 * unaligned little-endian u64s). */
struct tp_perf_data_sample {
	uint64_t id, ip, time, addr, stream_id, period;
	uint32_t pid, tid, cpu;
	bool has_id, has_ip, has_tid, has_time, has_cpu, has_period;
	const uint8_t *chain;
	uint64_t nchain;
	const uint8_t *read; /* PERF_SAMPLE_READ's bytes (per read_format), or NULL */
	size_t read_len;
};

/* Decode the body of a sample record (after its 8-byte header, n bytes)
 * laid out per a->sample_type. Returns 0, or -EINVAL when a field runs
 * past the record. */
int tp_perf_data_parse_sample(const struct tp_perf_data_attr *a, const uint8_t *p, size_t n,
                              struct tp_perf_data_sample *s);

/* Fill a from the raw perf_event_attr bytes p[0, n) (any version size).
 * Returns 0, or -EINVAL when n is below the first version's 64 bytes. */
int tp_perf_data_parse_attr(const uint8_t *p, size_t n, struct tp_perf_data_attr *a);

#endif /* TB_TP_PERF_DATA_H */
