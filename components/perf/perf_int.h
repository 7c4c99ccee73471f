/*
 * Private declarations of components/perf: the kernel's perf_event ABI
 * values we use, spelled out here because the release build (musl) has no
 * kernel headers. Values are from include/uapi/linux/perf_event.h; the unit
 * test checks them against the host's <linux/perf_event.h>.
 */
#ifndef TB_PERF_INT_H
#define TB_PERF_INT_H

#include <stdint.h>

/* perf_event_attr.type and .config */
#define PERF_ATTR_TYPE_HARDWARE 0
#define PERF_ATTR_TYPE_SOFTWARE 1
#define PERF_ATTR_HW_CPU_CYCLES 0
#define PERF_ATTR_HW_INSTRUCTIONS 1
#define PERF_ATTR_SW_CPU_CLOCK 0
#define PERF_ATTR_SW_TASK_CLOCK 1

/* perf_event_attr.sample_type bits */
#define PERF_ST_IP (1u << 0)
#define PERF_ST_TID (1u << 1)
#define PERF_ST_TIME (1u << 2)
#define PERF_ST_ADDR (1u << 3)
#define PERF_ST_READ (1u << 4)
#define PERF_ST_CALLCHAIN (1u << 5)
#define PERF_ST_ID (1u << 6)
#define PERF_ST_CPU (1u << 7)
#define PERF_ST_PERIOD (1u << 8)
#define PERF_ST_STREAM_ID (1u << 9)
#define PERF_ST_RAW (1u << 10)
#define PERF_ST_IDENTIFIER (1u << 16)

/* perf_event_attr flag bits (the u64 after read_format) */
#define PERF_FLAG_BIT_DISABLED 0
#define PERF_FLAG_BIT_INHERIT 1
#define PERF_FLAG_BIT_EXCLUDE_KERNEL 5
#define PERF_FLAG_BIT_EXCLUDE_HV 6
#define PERF_FLAG_BIT_COMM 9
#define PERF_FLAG_BIT_FREQ 10
#define PERF_FLAG_BIT_ENABLE_ON_EXEC 12
#define PERF_FLAG_BIT_TASK 13
#define PERF_FLAG_BIT_SAMPLE_ID_ALL 18
#define PERF_FLAG_BIT_EXCLUDE_CALLCHAIN_KERNEL 21
#define PERF_FLAG_BIT_COMM_EXEC 24
#define PERF_FLAG_BIT_USE_CLOCKID 25

/* perf_event_header.type */
#define PERF_RECORD_TYPE_LOST 2
#define PERF_RECORD_TYPE_COMM 3
#define PERF_RECORD_TYPE_EXIT 4
#define PERF_RECORD_TYPE_FORK 7
#define PERF_RECORD_TYPE_SAMPLE 9

/* perf_event_header.misc of a COMM record made by exec(2) */
#define PERF_RECORD_MISC_COMM_EXEC_BIT (1u << 13)

/* Callchain context markers (u64 values >= PERF_CTX_MAX are markers). */
#define PERF_CTX_HV ((uint64_t)-32)
#define PERF_CTX_KERNEL ((uint64_t)-128)
#define PERF_CTX_USER ((uint64_t)-512)
#define PERF_CTX_GUEST ((uint64_t)-2048)
#define PERF_CTX_GUEST_KERNEL ((uint64_t)-2176)
#define PERF_CTX_GUEST_USER ((uint64_t)-2560)
#define PERF_CTX_MAX ((uint64_t)-4095)

/* ioctls: _IO('$', 0) and _IO('$', 1) */
#define PERF_IOC_ENABLE 0x2400
#define PERF_IOC_DISABLE 0x2401

/* struct perf_event_mmap_page: offsets of the ring control words */
#define PERF_MMAP_DATA_HEAD_OFF 1024
#define PERF_MMAP_DATA_TAIL_OFF 1032

/* struct perf_event_attr up to sample_max_stack (PERF_ATTR_SIZE_VER5). */
struct perf_attr {
	uint32_t type;
	uint32_t size;
	uint64_t config;
	uint64_t sample_period_or_freq;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;
	uint32_t wakeup_events;
	uint32_t bp_type;
	uint64_t config1;
	uint64_t config2;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	int32_t clockid;
	uint64_t sample_regs_intr;
	uint32_t aux_watermark;
	uint16_t sample_max_stack;
	uint16_t reserved2;
};
#define PERF_ATTR_SIZE 112

/* The sample_type every stream uses. */
#define PERF_SAMPLE_TYPE_DEFAULT (PERF_ST_TID | PERF_ST_TIME | PERF_ST_CPU | PERF_ST_CALLCHAIN)

#endif /* TB_PERF_INT_H */
