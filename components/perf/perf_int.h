/*
 * Private declarations of components/perf, shared by its files and its
 * tests (perf.h holds the one entry point other components use, the
 * applet). Layers, bottom up (one file each):
 *   events.c   perf_event_attr setup, per-CPU fds, mmap rings, enable/disable
 *   ring.c     ring buffer reader and record parser (pure; fuzzed)
 *   maps.c     /proc/PID/maps parser, rel_pc math, per-process cache
 *   buildid.c  build id and load bias (base/elf.c reads the ELF)
 *   unwind.c   DWARF unwinding of copied user stacks (libunwind, remote API)
 *   emit.c     interning and PerfSample packet encoding into a pb_writer
 *   scope.c    which processes' samples are kept (PerfEventConfig.Scope)
 *   tasks.c, jit.c, symbolize.c   task names, JIT names, end-of-capture names
 *
 * Nothing here is thread-safe; traced_perf drives it from its one loop.
 * Errors: fallible functions return 0 or a negative errno-style code and
 * record a message in the struct tb_err they are given (which may be NULL).
 *
 * The second half spells out the kernel's perf_event ABI values we use,
 * because the release build (musl) has no kernel headers. Values are from
 * include/uapi/linux/perf_event.h; the unit test checks them against the
 * host's <linux/perf_event.h>.
 */
#ifndef TB_PERF_INT_H
#define TB_PERF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base.h"
#include "pb.h"
#include "perf.h"

/* ---- limits --------------------------------------------------------------- */

#define PERF_MAX_CPUS 1024             /* CPUs we open events on */
#define PERF_MAX_FRAMES 256            /* callchain entries kept per section */
#define PERF_MAX_RECORD 65536          /* largest record (header.size is u16) */
#define PERF_MAX_RING_PAGES (1u << 16) /* ring_buffer_pages cap (256 MiB at 4K) */
#define PERF_DEFAULT_RING_PAGES 256    /* 1 MiB per CPU at 4 KiB pages */
#define PERF_MIN_RING_PAGES 8          /* smallest ring opts.degrade goes to */
/* With user stacks (DWARF) a sample is ~64 KiB: 1000 Hz for a 100 ms read
 * period needs ~6.4 MB per CPU ring. */
#define PERF_DWARF_RING_PAGES 2048      /* 8 MiB per CPU at 4 KiB pages */
#define PERF_BUILD_ID_MAX 64            /* bytes; GNU build ids are 16 or 20 */
#define PERF_MAX_MAPS 65536             /* mappings kept from one maps file */
#define PERF_MAPS_MAX_BYTES (16u << 20) /* /proc/PID/maps read cap */

/* Name of the mapping kernel frames belong to, as traced_perf names it. */
#define PERF_KERNEL_MAPPING_NAME "kernel"

/* Perfetto enum values we use (PerfEvents.Counter, PerfClock, CpuMode). */
enum {
	PERF_COUNTER_SW_CPU_CLOCK = 1,
	PERF_COUNTER_SW_TASK_CLOCK = 3,
	PERF_COUNTER_HW_CPU_CYCLES = 10,
	PERF_COUNTER_HW_INSTRUCTIONS = 11,
};
enum {
	PERF_CLOCK_UNSPECIFIED = 0, /* -> MONOTONIC_RAW, as Perfetto */
	PERF_CLOCK_REALTIME = 1,
	PERF_CLOCK_MONOTONIC = 2,
	PERF_CLOCK_MONOTONIC_RAW = 3,
	PERF_CLOCK_BOOTTIME = 4,
};

/* ---- events.c: opening and owning the per-CPU events ---------------------- */

/* What to sample. Zero-initialise, then set what differs from the defaults. */
struct perf_event_opts {
	int32_t pid;                 /* 0 or -1: every process; > 0: only this one */
	int32_t cpu;                 /* -1 or 0..: with all_cpus false, only this CPU */
	bool all_cpus;               /* true: every online CPU (traced_perf's mode) */
	const uint32_t *target_cpus; /* with all_cpus: only these of the online CPUs */
	size_t n_target_cpus;        /* 0: no restriction */
	uint32_t counter;            /* PerfEvents.Counter; 0 = SW_CPU_CLOCK */
	uint64_t frequency;          /* samples per second (used when period == 0) */
	uint64_t period;             /* events per sample; wins over frequency */
	uint32_t clock;              /* PERF_CLOCK_*; 0 = MONOTONIC_RAW */
	bool kernel_frames;          /* keep kernel callchains (else exclude them) */
	bool exclude_kernel;         /* count only user mode (exclude_kernel=1) */
	bool no_callchain;           /* sample without PERF_SAMPLE_CALLCHAIN */
	/* UNWIND_DWARF: copy user registers and stack into each sample
	 * (PERF_SAMPLE_REGS_USER | STACK_USER); the kernel's callchain then
	 * carries kernel frames only. */
	bool user_stacks;
	bool skip_user_frames; /* UNWIND_SKIP: no user frames at all */
	/* Ask for MMAP2 records of executable mappings (attr.mmap, mmap2): the
	 * maps of processes that are gone before their samples are read. */
	bool mmap_records;
	uint32_t ring_buffer_pages; /* data pages per CPU, power of two; 0 = 256 */
	/* With a pid: follow the tasks it creates from now on (attr.inherit);
	 * their samples and records arrive in the same per-CPU rings. */
	bool inherit;
	/* Ask for COMM (names, exec) and FORK/EXIT records, with the sample's
	 * TID/TIME/CPU appended to them (sample_id_all). */
	bool task_records;
	/* When the kernel refuses kernel-mode counting (perf_event_paranoid >= 2
	 * for a user without CAP_PERFMON), count user mode only instead of
	 * failing; perf_events.kernel_excluded says so. And when the rings do
	 * not fit the locked-memory allowance (perf_event_mlock_kb,
	 * RLIMIT_MEMLOCK), halve them down to PERF_MIN_RING_PAGES. For a
	 * process' own workload, which an unprivileged user may profile. */
	bool degrade;
};

/* One ring reader: the mmap'd control page and data area of one event, or
 * (in tests) any memory laid out the same way. data_size is a power of two. */
struct perf_ring {
	volatile uint64_t *head; /* data_head, written by the kernel */
	volatile uint64_t *tail; /* data_tail, written by us */
	const uint8_t *data;
	uint64_t data_size;
	uint64_t sample_type; /* attr.sample_type the records were made with */
	uint8_t *scratch;     /* PERF_MAX_RECORD bytes, 8-aligned, owned */
};

/* Counters of one CPU's stream (also what goes into the trace). */
struct perf_ring_stats {
	uint64_t samples;      /* PERF_RECORD_SAMPLE parsed */
	uint64_t lost_records; /* sum of PERF_RECORD_LOST.lost */
	uint64_t lost_events;  /* PERF_RECORD_LOST records seen */
	uint64_t bad_records;  /* records skipped as malformed */
	uint64_t tasks;        /* COMM, FORK, EXIT and MMAP records */
	uint64_t other;        /* other record types, skipped */
};

struct perf_cpu_stream {
	int cpu;
	int fd;
	void *map; /* control page + data pages */
	size_t map_len;
	struct perf_ring ring;
	struct perf_ring_stats stats;
};

/* The open events of one data source instance. */
struct perf_events {
	struct perf_cpu_stream *streams;
	size_t n_streams;
	uint64_t sample_type;
	uint32_t clock_id; /* BuiltinClock of sample timestamps (5 or 6, ...) */
	uint32_t counter;  /* resolved PerfEvents.Counter */
	uint64_t frequency, period;
	uint32_t ring_pages;  /* data pages per stream, as mapped */
	bool kernel_excluded; /* degraded to user-mode counting (opts.degrade) */
};

/* Open one event per CPU (every online CPU with all_cpus, else opts->cpu, or
 * for a pid with all_cpus false: that pid on any CPU, one stream), mmap each
 * ring and leave them disabled. On failure nothing stays open and err says
 * which setting to change: perf_event_paranoid for EACCES/EPERM, ptrace
 * scope when a target pid belongs to someone else, kptr_restrict for kernel
 * frames. Call from the producer's loop thread. */
int perf_events_open(struct perf_events *ev, const struct perf_event_opts *opts,
                     struct tb_err *err);

/* Keep the cpus (online cpu numbers, n of them) that are in targets
 * (PerfEventConfig.target_cpu), in order; no targets keeps all. Returns how
 * many are kept at the front of cpus. */
size_t perf_filter_cpus(int *cpus, size_t n, const uint32_t *targets, size_t n_targets);

/* Start / stop counting on every stream. Return 0 or -errno (err set). */
int perf_events_enable(struct perf_events *ev, struct tb_err *err);
int perf_events_disable(struct perf_events *ev, struct tb_err *err);

/* Unmap and close everything; ev may be zeroed or half-open. */
void perf_events_close(struct perf_events *ev);

/* ---- ring.c: parsing records ---------------------------------------------- */

enum perf_rec_kind {
	PERF_REC_SAMPLE = 1,
	PERF_REC_LOST = 2,
	PERF_REC_OTHER = 3, /* any other type: skipped */
	PERF_REC_COMM = 4,  /* a task's name was set (prctl, or exec: comm_exec) */
	PERF_REC_FORK = 5,  /* a task was created (a process when pid == tid) */
	PERF_REC_EXIT = 6,  /* a task exited */
	PERF_REC_MMAP = 7,  /* executable memory was mapped (MMAP2, or MMAP) */
};

/* One parsed record. ips point into the ring's scratch copy (borrowed until
 * the callback returns). kernel_ips / user_ips are leaf first, markers
 * removed; pcs from other contexts (hypervisor, guest) are dropped. */
struct perf_record {
	int kind;      /* enum perf_rec_kind */
	uint16_t misc; /* header.misc; cpu mode = misc & 7 */
	uint32_t pid, tid, cpu;
	uint64_t time;
	uint64_t ip, period;
	uint64_t lost; /* PERF_REC_LOST: records the kernel dropped */
	const uint64_t *kernel_ips;
	size_t n_kernel;
	const uint64_t *user_ips;
	size_t n_user;
	bool has_user_section; /* the callchain had a PERF_CONTEXT_USER marker */
	size_t n_truncated;    /* callchain entries dropped over PERF_MAX_FRAMES */
	/* PERF_SAMPLE_REGS_USER / STACK_USER (DWARF unwinding): regs_abi 0
	 * means no user registers (a kernel thread); regs (n_regs u64s, the
	 * arch's PERF_REGS_MASK order, unaligned) and stack (stack_len valid
	 * bytes from the user sp) point into the record, borrowed like ips;
	 * stack_maxed: the copy was cut at its size, the stack goes on. */
	uint64_t regs_abi;
	const uint8_t *regs;
	size_t n_regs;
	const uint8_t *stack;
	size_t stack_len;
	bool stack_maxed;
	/* Task records (attr.comm / attr.task): FORK and EXIT carry the parent
	 * (ppid, ptid) and time; COMM the new name (borrowed, not terminated)
	 * and, with sample_id_all, a time (else 0). comm_exec: the COMM record
	 * of an exec(2). */
	uint32_t ppid, ptid;
	const char *comm;
	size_t comm_len;
	bool comm_exec;
	/* PERF_REC_MMAP: [map_addr, map_addr + map_len) at file offset
	 * map_pgoff of filename (borrowed, not terminated); pid/tid set, and
	 * with sample_id_all the time (else 0). */
	uint64_t map_addr, map_len, map_pgoff;
	const char *filename;
	size_t filename_len;
};

/* Parse one whole record rec[0, len) (header included, as laid out in the
 * ring) made with sample_type. The record's ips are copied to ips_out
 * (2 * PERF_MAX_FRAMES entries), which the result points into. Returns 0 or
 * -EINVAL for a malformed record (sizes, counts or an unsupported
 * sample_type bit); never reads outside rec. Pure. */
int perf_record_parse(const uint8_t *rec, size_t len, uint64_t sample_type, struct perf_record *out,
                      uint64_t *ips_out);

typedef void (*perf_record_fn)(void *ctx, const struct perf_record *rec);

/* Set up r over an mmap'd event (control page at map, data pages after it).
 * Allocates the scratch buffer; release with perf_ring_release. */
void perf_ring_init(struct perf_ring *r, void *map, uint64_t data_size, uint64_t sample_type);

/* The same over caller-supplied head/tail words and data (tests, fuzzing). */
void perf_ring_init_raw(struct perf_ring *r, volatile uint64_t *head, volatile uint64_t *tail,
                        const uint8_t *data, uint64_t data_size, uint64_t sample_type);
void perf_ring_release(struct perf_ring *r);

/* Read the records between data_tail and data_head (acquire), up to
 * max_bytes of them (0 = all), calling fn for each parsed sample or lost
 * record, then publish the new data_tail (release). Records that wrap the
 * end of the ring are reassembled in scratch. A malformed header (size < 8,
 * not a multiple of 8, larger than what is available) is counted in
 * stats->bad_records and the rest of the region is dropped, since record
 * boundaries are lost. Returns the bytes consumed. */
uint64_t perf_ring_read(struct perf_ring *r, uint64_t max_bytes, perf_record_fn fn, void *ctx,
                        struct perf_ring_stats *stats);

/* ---- buildid.c: ELF build ids and load bias -------------------------------- */

struct perf_elf_info {
	uint8_t build_id[PERF_BUILD_ID_MAX];
	size_t build_id_len; /* 0 when the file has none */
	uint64_t load_bias;  /* p_vaddr - p_offset of the first executable PT_LOAD */
	bool is_elf;
};

/* Read build id and load bias of ELF image buf[0, len) (32/64-bit, either
 * byte order): the NT_GNU_BUILD_ID note from PT_NOTE segments, else from
 * SHT_NOTE sections. Returns 0, or -EINVAL when buf is not an ELF file.
 * Bounds-checked against len; pure. */
int perf_elf_info_mem(const uint8_t *buf, size_t len, struct perf_elf_info *out);

/* The same for a file, reading only its headers and notes with pread.
 * Returns 0, -errno when it cannot be read, -EINVAL if not ELF. */
int perf_elf_info_file(const char *path, struct perf_elf_info *out, struct tb_err *err);

/* Find NT_GNU_BUILD_ID in a block of ELF notes notes[0, len) (4-byte aligned
 * name/desc as in SHT_NOTE/PT_NOTE). Returns its length (copied to id,
 * truncated to PERF_BUILD_ID_MAX) or 0. big_endian selects the header order. */
size_t perf_elf_notes_build_id(const uint8_t *notes, size_t len, bool big_endian,
                               uint8_t id[PERF_BUILD_ID_MAX]);

/* ---- maps.c: /proc/PID/maps ------------------------------------------------ */

struct perf_mapping {
	uint64_t start, end, offset;
	bool exec;
	char *path;               /* tb_strdup'd; "" for anonymous mappings */
	struct perf_elf_info elf; /* filled by perf_maps_load_elf */
	bool elf_loaded;
};

/* The mappings of one process, sorted by start. */
struct perf_maps {
	struct perf_mapping *v;
	size_t n, cap;
	uint64_t bad_lines; /* lines that did not parse */
};

/* Parse the text of a maps file text[0, len) into m (initially zeroed).
 * Bad lines are counted and skipped. Returns 0 (or -E2BIG past
 * PERF_MAX_MAPS mappings, keeping the first ones). */
int perf_maps_parse(struct perf_maps *m, const char *text, size_t len);

/* Read /proc/<pid>/maps into m. Returns 0 or -errno (err says which file). */
int perf_maps_load(struct perf_maps *m, int pid, struct tb_err *err);

/* Read build id and load bias of every executable file-backed mapping
 * (mappings of one file share one read). Files that cannot be read keep
 * elf.is_elf false. */
void perf_maps_load_elf(struct perf_maps *m);

/* The mapping containing pc, or NULL. Borrowed from m. */
const struct perf_mapping *perf_maps_find(const struct perf_maps *m, uint64_t pc);

/* A mapping learnt from a PERF_RECORD_MMAP2 (path[0, path_len), not
 * terminated): what it covers is removed from the mappings it overlaps
 * (cut at its ends; one containing it whole keeps its lower part), then it
 * is inserted in order, its ELF info not loaded yet. */
void perf_maps_add(struct perf_maps *m, uint64_t start, uint64_t end, uint64_t offset, bool exec,
                   const char *path, size_t path_len);
/* dst (released first) becomes a deep copy of src: a forked child's maps. */
void perf_maps_copy(struct perf_maps *dst, const struct perf_maps *src);

/* Free the paths and the array; m is empty afterwards. */
void perf_maps_release(struct perf_maps *m);

/* Perfetto's (libunwindstack's) relative pc: the address in the ELF's own
 * virtual address space, pc - start + offset + load_bias. Pure. */
static inline uint64_t perf_rel_pc(uint64_t pc, uint64_t map_start, uint64_t map_offset,
                                   uint64_t load_bias)
{
	return pc - map_start + map_offset + load_bias;
}

/* ---- jit.c: perf map files of JIT compilers ----------------------------- */

#define PERF_JIT_MAX_BYTES ((size_t)64 << 20) /* one /tmp/perf-PID.map read */
#define PERF_JIT_MAX_SYMS (1u << 22)
#define PERF_JIT_MAX_NAME 1024

struct perf_jit_sym {
	uint64_t start, size;
	uint32_t name; /* offset into names */
	uint32_t seq;  /* line number, for the sort */
};

/* The functions of one /tmp/perf-PID.map, sorted by start. */
struct perf_jitmap {
	struct perf_jit_sym *v;
	size_t n, cap;
	char *names;
	size_t names_len, names_cap;
	size_t bytes;       /* bytes of the file parsed (complete lines) */
	uint64_t bad_lines; /* lines that did not parse, over every load */
};

/* Parse perf map text[0, len) ("START SIZE NAME" lines, hex) into m,
 * replacing what it held; a last line without its newline is left for the
 * next read. Bad lines are counted. Pure. */
void perf_jitmap_parse(struct perf_jitmap *m, const char *text, size_t len);
/* (Re)load /tmp/perf-PID.map when it has grown since the last load. Only a
 * regular file owned by the process' user or root, not through a symlink.
 * Returns 0 or -errno (-ENOENT: no such file, -EPERM: someone else's). */
int perf_jitmap_load(struct perf_jitmap *m, int32_t pid);
/* The name of the function covering pc, or NULL. Borrowed from m. */
const char *perf_jitmap_lookup(const struct perf_jitmap *m, uint64_t pc);
void perf_jitmap_release(struct perf_jitmap *m);

/* ---- emit.c: interning and PerfSample packets ----------------------------- */

/* One resolved frame, as emit.c interns it. Strings and bytes are borrowed
 * for the duration of the call. */
struct perf_frame {
	const char *mapping_path; /* "kernel" for kernel frames; "" unknown */
	const uint8_t *build_id;  /* raw bytes, may be NULL */
	size_t build_id_len;
	uint64_t map_start, map_end, map_offset, load_bias;
	uint64_t rel_pc;
	const char *function_name; /* NULL or "" when unknown */
};

/* Interning state of one sequence (one data source instance's writer). */
struct perf_emitter {
	struct hmap strs[3];        /* build ids, mapping paths, function names */
	VEC(uint8_t *) str_vals[3]; /* iid - 1 -> [u32 len][bytes], owned */
	struct hmap tuples[3];      /* mappings, frames, callstacks: key = offset in keys */
	VEC(uint64_t) keys;         /* [kind, n, values...] records of the tuples */
	uint64_t next_iid[3];       /* last iid handed out per tuple kind */
	uint32_t clock_id;          /* BuiltinClock of sample timestamps */
	uint32_t counter;           /* PerfEvents.Counter of the timebase */
	uint64_t frequency, period;
	uint32_t shard_count, chosen_shard; /* process sharding, for the defaults */
	bool started;
	struct pb_writer scratch; /* interned_data of the packet being built */
};

/* Start a sequence: zero the state and remember the timebase for the
 * defaults packet. clock_id is a BuiltinClock (5 MONOTONIC_RAW, 6 BOOTTIME). */
void perf_emitter_init(struct perf_emitter *e, uint32_t clock_id, uint32_t counter,
                       uint64_t frequency, uint64_t period);
void perf_emitter_release(struct perf_emitter *e);

/* Write the sequence's first packets into w, each as a Trace.packet field
 * (0x0a len TracePacket): the SEQ_INCREMENTAL_STATE_CLEARED packet with
 * TracePacketDefaults, then the interned iid-0 "" strings. boot_ts is the
 * BOOTTIME timestamp of the first packet. Called once, before any sample. */
void perf_emit_start(struct perf_emitter *e, struct pb_writer *w, uint64_t boot_ts);

/* One sample: frames are leaf first (kernel frames, then user frames); the
 * callstack is interned root first as Perfetto does. New strings, mappings,
 * frames and the callstack go into the packet's interned_data. */
void perf_emit_sample(struct perf_emitter *e, struct pb_writer *w, uint64_t ts, uint32_t cpu,
                      uint32_t pid, uint32_t tid, uint32_t cpu_mode,
                      const struct perf_frame *frames, size_t n_frames);

/* The same for a stack unwound in the daemon (DWARF): unwind_error is
 * Profiling.StackUnwindError (PERF_UNWIND_ERROR_*), written when nonzero;
 * a partial stack's last (root-most) frame is then the error marker frame
 * ("ERROR <NAME>", no mapping), as Perfetto's traced_perf writes it. */
void perf_emit_sample_unwound(struct perf_emitter *e, struct pb_writer *w, uint64_t ts,
                              uint32_t cpu, uint32_t pid, uint32_t tid, uint32_t cpu_mode,
                              const struct perf_frame *frames, size_t n_frames,
                              uint32_t unwind_error);

/* A PerfSample that only reports kernel_records_lost for cpu. boot_ts is a
 * BOOTTIME timestamp (the packet says so with timestamp_clock_id 6, as
 * Perfetto's: the loss has no time of its own in the sample clock). */
void perf_emit_lost(struct perf_emitter *e, struct pb_writer *w, uint64_t boot_ts, uint32_t cpu,
                    uint64_t lost);

/* Profiling's PerfSample.SampleSkipReason values. */
enum {
	PERF_SKIP_UNKNOWN = 0,
	PERF_SKIP_READ_STAGE = 1,
	PERF_SKIP_UNWIND_STAGE = 2,
	PERF_SKIP_UNWIND_ENQUEUE = 3,
	PERF_SKIP_NOT_IN_SCOPE = 4,
};

/* A sample written without its callstack, with sample_skipped_reason
 * (PERF_SKIP_*): its cpu, pid, tid and cpu mode still count. */
void perf_emit_skipped(struct perf_emitter *e, struct pb_writer *w, uint64_t ts, uint32_t cpu,
                       uint32_t pid, uint32_t tid, uint32_t cpu_mode, uint32_t reason);

/* Resolve one parsed sample to frames using maps (of rec->pid; may be NULL)
 * and ksyms (may be NULL). frames_out has room for 2 * PERF_MAX_FRAMES.
 * Returns the frame count. Borrowed pointers stay valid while maps/ksyms do. */
size_t perf_resolve_frames(const struct perf_record *rec, const struct perf_maps *maps,
                           const struct ksyms *ksyms, struct perf_frame *frames_out);

/* A ProcessTree entry, as perf_emit_process_tree writes it. Strings are
 * borrowed for the call. */
struct perf_pt_process {
	uint32_t pid, ppid;
	const char *cmdline; /* argv, NUL-separated (as /proc/PID/cmdline) */
	size_t cmdline_len;
	bool cmdline_is_comm; /* cmdline is the process' name, not its argv */
};
struct perf_pt_thread {
	uint32_t tid, tgid;
	const char *name; /* NUL-terminated; "" or NULL: none */
};

/* A ProcessTree packet at ts (the sequence's sample clock) describing proc
 * and/or thr (either may be NULL):
 *   {timestamp process_tree{processes{pid ppid cmdline* cmdline_is_comm}
 *                           threads{tid name tgid}}} */
void perf_emit_process_tree(struct perf_emitter *e, struct pb_writer *w, uint64_t ts,
                            const struct perf_pt_process *proc, const struct perf_pt_thread *thr);

/* ---- tasks.c: names of the sampled tasks ---------------------------------- */

#define PERF_COMM_MAX 16 /* TASK_COMM_LEN */

/* What is known of the tasks an instance saw: names and parents from COMM
 * and FORK records, which tasks and processes were written out. */
struct perf_tasks {
	struct hmap by_tid;         /* tid -> struct perf_task * (tasks.c) */
	struct hmap described_pids; /* pid -> 1: its process entry was written */
};

void perf_tasks_init(struct perf_tasks *t);
void perf_tasks_release(struct perf_tasks *t);
/* A sample of (pid, tid) at ts is about to be written: describe the task
 * (and its process, once) the first time it is seen. */
void perf_tasks_sample(struct perf_tasks *t, struct perf_emitter *e, struct pb_writer *w,
                       uint64_t ts, uint32_t pid, uint32_t tid);
/* A COMM, FORK or EXIT record: remember names and parents; a rename of a
 * task already described (an exec, prctl(PR_SET_NAME)) is written at once. */
void perf_tasks_record(struct perf_tasks *t, struct perf_emitter *e, struct pb_writer *w,
                       const struct perf_record *rec);

/* ---- symbolize.c: naming user frames at the end of the capture ---------- */

#define PERF_SYMQ_EXAMPLES 8

struct perf_symq_module;
/* The user frames written without a name, by mapping. */
struct perf_symq {
	struct hmap by_key; /* hash of the mapping -> index in mods */
	VEC(struct perf_symq_module *) mods;
	uint64_t dropped; /* frames past PERF_SYMQ_MAX_MODULES */
};

/* What the end-of-capture symbolization did. */
struct perf_symq_result {
	uint32_t modules, modules_named;
	uint32_t no_build_id, no_symbols;               /* modules left unnamed, why */
	uint64_t frames_no_build_id, frames_no_symbols; /* their frames (with repeats) */
	uint64_t addresses, addresses_named;
	uint64_t dropped;
	char examples[PERF_SYMQ_EXAMPLES][160]; /* "PATH (why)" of unnamed ones */
	size_t n_examples;
};

typedef void (*perf_symq_flush_fn)(void *ctx);

void perf_symq_init(struct perf_symq *q);
void perf_symq_release(struct perf_symq *q);
/* Remember a user frame as written (no-op for named or pathless frames). */
void perf_symq_add(struct perf_symq *q, const struct perf_frame *f);
/* Find each remembered mapping's file with finder and write its
 * ModuleSymbols packets (as Trace.packet fields) into w, stamped boot_ts
 * (BOOTTIME); flush(ctx) runs after each mapping's packets, so the caller
 * can move them out of w. Counts go to res. */
void perf_symq_emit(struct perf_symq *q, struct sym_finder *finder, struct pb_writer *w,
                    uint64_t boot_ts, perf_symq_flush_fn flush, void *ctx,
                    struct perf_symq_result *res);

/* ---- scope.c: which processes are sampled -------------------------------- */

struct perf_scope_cmd {
	char *bytes; /* owned; a cmdline, not NUL-terminated */
	size_t len;
};

/* PerfEventConfig.Scope plus the state its rules need. perf_scope_init,
 * then fill the vectors (perf_scope_add) and the counts. */
struct perf_scope {
	VEC(int32_t) target_pids, exclude_pids;
	VEC(char *) target_cmds, exclude_cmds; /* owned glob patterns */
	uint32_t additional_cmdline_count;
	VEC(struct perf_scope_cmd) additional; /* first cmdlines seen, kept */
	uint32_t shard_count, chosen_shard;    /* shard_count 0: no sharding */
	struct hmap cache;                     /* pid -> decision */
	/* Up to cap bytes of pid's /proc/PID/cmdline into buf; returns the
	 * byte count or -1. Set by perf_scope_init; tests replace it. */
	ssize_t (*read_cmdline)(int32_t pid, char *buf, size_t cap);
};

void perf_scope_init(struct perf_scope *s);
void perf_scope_release(struct perf_scope *s);

/* Append pids and (copied) patterns to the scope's lists. */
void perf_scope_add(struct perf_scope *s, const int32_t *tp, size_t ntp, char *const *tc,
                    size_t ntc, const int32_t *ep, size_t nep, char *const *ec, size_t nec);

/* True when no rule restricts anything (every sample is kept). */
bool perf_scope_is_everything(const struct perf_scope *s);

/* Whether samples of pid are kept, by Perfetto's rules (see scope.c); the
 * answer is cached per pid. */
bool perf_scope_keep(struct perf_scope *s, int32_t pid);

/* ---- unwind.c: DWARF unwinding of copied user stacks --------------------- */

#define PERF_UNWIND_MAX_FRAMES 128                  /* frames per stack, as Perfetto */
#define PERF_UNWIND_CACHE_BYTES ((size_t)256 << 20) /* cached CFI, then cleared */

/* Profiling.StackUnwindError values we write (PerfSample.unwind_error). */
enum {
	PERF_UNWIND_ERROR_UNKNOWN = 0,
	PERF_UNWIND_ERROR_NONE = 1,
	PERF_UNWIND_ERROR_MEMORY_INVALID = 2,
	PERF_UNWIND_ERROR_UNWIND_INFO = 3,
	PERF_UNWIND_ERROR_UNSUPPORTED = 4,
	PERF_UNWIND_ERROR_INVALID_MAP = 5,
	PERF_UNWIND_ERROR_MAX_FRAMES_EXCEEDED = 6,
	PERF_UNWIND_ERROR_REPEATED_FRAME = 7,
	PERF_UNWIND_ERROR_INVALID_ELF = 8,
	PERF_UNWIND_ERROR_INVALID_PARAMETER = 14,
};

struct perf_unwind_stats {
	uint64_t samples, frames, errors;  /* stacks unwound, frames found, stacks cut short */
	uint64_t files, files_without_cfi; /* ELF files whose tables were read */
};

struct unw_elf;
/* One unwinder: libunwind's address space and the unwind tables of the ELF
 * files seen, by path and build id (shared across processes). The fields
 * after stats are the state of the perf_unwind call in progress. */
struct perf_unwinder {
	void *as; /* unw_addr_space_t */
	VEC(struct unw_elf *) elves;
	size_t bytes; /* cached table bytes */
	int32_t last_pid;
	struct perf_unwind_stats stats;
	const struct perf_maps *maps;
	const uint8_t *regs;
	size_t n_regs;
	uint64_t sp;
	const uint8_t *stack;
	size_t stack_len;
	struct unw_elf *cur;
	uint64_t cur_bias;
	bool mem_error;
	uint32_t why;
};

/* A caller's pc is its return address less this: an address inside the
 * call instruction, so it names the caller even when the call is the last
 * instruction of its function (a call to a noreturn one), as Perfetto's
 * traced_perf writes rel_pc (libunwindstack's pc adjustment: 1 on x86, 4
 * on arm64). arm and riscv: 2, inside any call, compressed or not. */
#if defined(__x86_64__) || defined(__i386__)
#define PERF_CALLER_PC_ADJUST 1
#elif defined(__aarch64__)
#define PERF_CALLER_PC_ADJUST 4
#else
#define PERF_CALLER_PC_ADJUST 2
#endif

/* Whether this build can unwind DWARF (libunwind built for the target). */
bool perf_unwind_supported(void);
void perf_unwinder_init(struct perf_unwinder *u);
void perf_unwinder_release(struct perf_unwinder *u);
/* Drop the cached tables (unwind_state_clear_period_ms, or past
 * PERF_UNWIND_CACHE_BYTES). */
void perf_unwinder_clear(struct perf_unwinder *u);
/* Unwind one sample of pid: regs are the n_regs sampled user registers
 * (PERF_REGS_MASK order, u64 each, unaligned), stack the stack_len bytes
 * copied from the user sp; maps the process' mappings (with build ids). The
 * pcs, leaf first (the sampled pc, then each caller's return address less
 * PERF_CALLER_PC_ADJUST), go to pcs (room for max), each frame's sp to sps
 * (when not NULL: the caller's sp is the callee's CFA), their count to
 * *n_out. Returns a PERF_UNWIND_ERROR_* value: NONE when the walk reached
 * the outermost frame, else why it stopped (the pcs found so far are
 * kept). Never reads outside regs, stack and the files' copied tables; any
 * bytes are safe input. */
uint32_t perf_unwind(struct perf_unwinder *u, int32_t pid, const struct perf_maps *maps,
                     const uint8_t *regs, size_t n_regs, const uint8_t *stack, size_t stack_len,
                     uint64_t *pcs, uint64_t *sps, size_t max, size_t *n_out);
/* Profiling.StackUnwindError's name without its prefix ("MEMORY_INVALID"). */
const char *perf_unwind_error_name(uint32_t e);

/* ---- the kernel's perf_event ABI ----------------------------------------- */

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
#define PERF_ST_REGS_USER (1u << 12)
#define PERF_ST_STACK_USER (1u << 13)
#define PERF_ST_IDENTIFIER (1u << 16)

/* perf_event_attr flag bits (the u64 after read_format) */
#define PERF_FLAG_BIT_DISABLED 0
#define PERF_FLAG_BIT_INHERIT 1
#define PERF_FLAG_BIT_EXCLUDE_KERNEL 5
#define PERF_FLAG_BIT_EXCLUDE_HV 6
#define PERF_FLAG_BIT_MMAP 8
#define PERF_FLAG_BIT_COMM 9
#define PERF_FLAG_BIT_FREQ 10
#define PERF_FLAG_BIT_ENABLE_ON_EXEC 12
#define PERF_FLAG_BIT_TASK 13
#define PERF_FLAG_BIT_SAMPLE_ID_ALL 18
#define PERF_FLAG_BIT_EXCLUDE_CALLCHAIN_KERNEL 21
#define PERF_FLAG_BIT_EXCLUDE_CALLCHAIN_USER 22
#define PERF_FLAG_BIT_MMAP2 23
#define PERF_FLAG_BIT_COMM_EXEC 24
#define PERF_FLAG_BIT_USE_CLOCKID 25

/* perf_event_header.type */
#define PERF_RECORD_TYPE_MMAP 1
#define PERF_RECORD_TYPE_LOST 2
#define PERF_RECORD_TYPE_COMM 3
#define PERF_RECORD_TYPE_EXIT 4
#define PERF_RECORD_TYPE_FORK 7
#define PERF_RECORD_TYPE_SAMPLE 9
#define PERF_RECORD_TYPE_MMAP2 10

/* perf_event_header.misc of an MMAP2 record carrying a build id instead of
 * the device and inode (kernel 5.12+, attr.build_id) */
#define PERF_RECORD_MISC_MMAP_BUILD_ID_BIT (1u << 14)

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

/* PERF_SAMPLE_REGS_USER: the user registers sampled for DWARF unwinding,
 * as Perfetto's traced_perf asks for them (asm/perf_regs.h of each arch),
 * and the places of the stack pointer and pc among the values a sample
 * carries (one u64 per set bit of the mask, lowest bit first).
 *   x86-64   AX BX CX DX SI DI BP SP IP FLAGS CS SS | R8..R15 (no DS ES FS GS)
 *   arm64    X0..X30 SP PC
 *   arm      R0..R15 (SP = R13, PC = R15)
 *   riscv64  PC RA SP GP TP T0-T2 S0 S1 A0-A7 S2-S11 T3-T6 */
#if defined(__x86_64__)
#define PERF_REGS_MASK 0xff0fffull
#define PERF_REGS_N 20
#define PERF_REGS_SP 7
#define PERF_REGS_PC 8
#elif defined(__aarch64__)
#define PERF_REGS_MASK ((1ull << 33) - 1)
#define PERF_REGS_N 33
#define PERF_REGS_SP 31
#define PERF_REGS_PC 32
#elif defined(__arm__)
#define PERF_REGS_MASK 0xffffull
#define PERF_REGS_N 16
#define PERF_REGS_SP 13
#define PERF_REGS_PC 15
#elif defined(__riscv) && __riscv_xlen == 64
#define PERF_REGS_MASK 0xffffffffull
#define PERF_REGS_N 32
#define PERF_REGS_SP 2
#define PERF_REGS_PC 0
#else
#define PERF_REGS_MASK 0ull
#define PERF_REGS_N 0
#define PERF_REGS_SP 0
#define PERF_REGS_PC 0
#endif
/* PERF_SAMPLE_STACK_USER: bytes of user stack copied per sample, as
 * Perfetto's (below 64 KiB with the low 8 bits clear; the kernel trims it
 * further so the whole record fits its u16 size). */
#define PERF_STACK_USER_SIZE (65536u - 256u)

/* The sample_type every stream uses. */
#define PERF_SAMPLE_TYPE_DEFAULT (PERF_ST_TID | PERF_ST_TIME | PERF_ST_CPU | PERF_ST_CALLCHAIN)

#endif /* TB_PERF_INT_H */
