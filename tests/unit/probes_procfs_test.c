/*
 * Tests for traced_probes' /proc readers (components/probes/procfs,
 * sysstats, system_info.c): fixture /proc- and /sys-like trees in a temp
 * directory are parsed into protobuf fields, which are decoded back with pb.
 */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pb.h"
#include "pb_fields.h"
#include "probes_int.h"
#include "procfs/procfs.h"
#include "protos.h"
#include "sysstats/sysstats.h"
#include "test.h"

/* ---- fixtures ------------------------------------------------------------- */

static char fx_root[64];

static void fx_write(const char *rel, const void *data, size_t n)
{
	char path[256];
	FILE *f;
	snprintf(path, sizeof path, "%s/%s", fx_root, rel);
	for (char *p = path + strlen(fx_root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0755);
		*p = '/';
	}
	f = fopen(path, "wb");
	if (!f)
		return;
	fwrite(data, 1, n, f);
	fclose(f);
}

static void fx_puts(const char *rel, const char *s)
{
	fx_write(rel, s, strlen(s));
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static bool fx_init(void)
{
	snprintf(fx_root, sizeof fx_root, "/tmp/tb_probes_test_XXXXXX");
	return mkdtemp(fx_root) != NULL;
}

static void fx_release(void)
{
	nftw(fx_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* A user process 42 (threads 42, 43) in a pid namespace and kthreadd. */
static void fx_processes(void)
{
	static const char cmdline[] = "/bin/prog\0-x\0\0arg\0";
	fx_puts("42/status", "Name:\tprog\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t42\n"
	                     "Pid:\t42\nPPid:\t1\nUid:\t1000\t1000\t1000\t1000\n"
	                     "NSpid:\t42\t7\nVmPeak:\t  9000 kB\nVmSize:\t  8000 kB\n"
	                     "VmLck:\t       0 kB\nVmHWM:\t    700 kB\nVmRSS:\t     600 kB\n"
	                     "RssAnon:\t     100 kB\nRssFile:\t     400 kB\n"
	                     "RssShmem:\t     100 kB\nVmSwap:\t      5 kB\nThreads:\t2\n");
	fx_write("42/cmdline", cmdline, sizeof cmdline - 1);
	/* comm with a space and a ')' to check fields count from the last ')'. */
	fx_puts("42/stat", "42 (my) prog) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 2 0 "
	                   "12345 8192000 150 18446744073709551615\n");
	fx_puts("42/oom_score_adj", "-100\n");
	fx_puts("42/task/42/comm", "prog\n");
	fx_puts("42/task/43/comm", "worker 1\n");
	fx_puts("42/task/43/status", "Name:\tworker 1\nTgid:\t42\nPid:\t43\n");
	fx_puts("2/status", "Name:\tkthreadd\nTgid:\t2\nPid:\t2\nPPid:\t0\nUid:\t0\t0\t0\t0\n");
	fx_write("2/cmdline", "", 0);
	fx_puts("2/stat", "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20 0 1 0 2 0 0\n");
	fx_puts("2/task/2/comm", "kthreadd\n");
	fx_puts("self", "not a pid\n");
}

/* ---- decoding helpers ----------------------------------------------------- */

struct proc_rec {
	int64_t pid, ppid, uid, nspid;
	uint64_t start;
	bool kthread, is_comm, has_start;
	int nargs;
	char args[4][32];
};

static void decode_process(const struct pb_field *pf, struct proc_rec *p)
{
	struct pb_reader r;
	struct pb_field f = {0};
	memset(p, 0, sizeof *p);
	p->nspid = -1;
	pb_reader_init_field(&r, pf);
	while (pb_next(&r, &f)) {
		switch (f.id) {
		case PB_F_ProcessTree_Process_pid:
			p->pid = (int32_t)f.val;
			break;
		case PB_F_ProcessTree_Process_ppid:
			p->ppid = (int32_t)f.val;
			break;
		case PB_F_ProcessTree_Process_uid:
			p->uid = (int32_t)f.val;
			break;
		case PB_F_ProcessTree_Process_nspid:
			p->nspid = (int32_t)f.val;
			break;
		case PB_F_ProcessTree_Process_process_start_from_boot:
			p->start = f.val;
			p->has_start = true;
			break;
		case PB_F_ProcessTree_Process_is_kthread:
			p->kthread = f.val != 0;
			break;
		case PB_F_ProcessTree_Process_cmdline_is_comm:
			p->is_comm = f.val != 0;
			break;
		case PB_F_ProcessTree_Process_cmdline:
			if (p->nargs < 4 && f.len < 32) {
				memcpy(p->args[p->nargs], f.data, f.len);
				p->args[p->nargs][f.len] = '\0';
			}
			p->nargs++;
			break;
		}
	}
}

/* The value of varint field id in the message of field pf (or -1). */
static int64_t sub_varint(const struct pb_field *pf, uint32_t id)
{
	struct pb_field f = {0};
	return pb_find_field(pf->data, pf->len, id, &f) == 1 ? (int64_t)f.val : -1;
}

static void sub_string(const struct pb_field *pf, uint32_t id, char *out, size_t n)
{
	struct pb_field f = {0};
	out[0] = '\0';
	if (pb_find_field(pf->data, pf->len, id, &f) == 1 && f.len < n) {
		memcpy(out, f.data, f.len);
		out[f.len] = '\0';
	}
}

/* ---- process tree --------------------------------------------------------- */

TEST(probes_procfs_process_tree)
{
	struct probes_procfs_config cfg = {0};
	struct pb_writer w;
	struct pb_reader r;
	struct pb_field f = {0};
	struct proc_rec procs[4];
	struct hmap seen;
	int np = 0, nt = 0;
	int64_t tids[4] = {0}, tgids[4] = {0};
	char names[4][16] = {{0}};
	const uint8_t *buf;
	size_t len;

	CHECK(fx_init());
	fx_processes();
	cfg.record_thread_names = true;
	cfg.record_process_age = true;
	hmap_init(&seen);
	pb_writer_init_growable(&w);
	CHECK_EQ(probes_procfs_write_all(&w, fx_root, &cfg, &seen), 2);
	buf = pb_writer_data(&w);
	len = pb_writer_size(&w);
	pb_reader_init(&r, buf, len);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ProcessTree_processes && np < 4)
			decode_process(&f, &procs[np++]);
		if (f.id == PB_F_ProcessTree_threads && nt < 4) {
			tids[nt] = sub_varint(&f, PB_F_ProcessTree_Thread_tid);
			tgids[nt] = sub_varint(&f, PB_F_ProcessTree_Thread_tgid);
			sub_string(&f, PB_F_ProcessTree_Thread_name, names[nt], sizeof names[nt]);
			nt++;
		}
	}
	CHECK_EQ(r.error, 0);
	CHECK_EQ(np, 2);
	CHECK_EQ(nt, 3);
	/* kthreadd first (ascending pids), with its comm as cmdline. */
	CHECK_EQ(procs[0].pid, 2);
	CHECK_EQ(procs[0].ppid, 0);
	CHECK(procs[0].kthread);
	CHECK(procs[0].is_comm);
	CHECK_EQ(procs[0].nargs, 1);
	CHECK_STR_EQ(procs[0].args[0], "kthreadd");
	CHECK_EQ(procs[1].pid, 42);
	CHECK_EQ(procs[1].ppid, 1);
	CHECK_EQ(procs[1].uid, 1000);
	CHECK_EQ(procs[1].nspid, 7);
	CHECK(!procs[1].kthread);
	CHECK(!procs[1].is_comm);
	CHECK_EQ(procs[1].nargs, 4);
	CHECK_STR_EQ(procs[1].args[0], "/bin/prog");
	CHECK_STR_EQ(procs[1].args[1], "-x");
	CHECK_STR_EQ(procs[1].args[2], "");
	CHECK_STR_EQ(procs[1].args[3], "arg");
	CHECK(procs[1].has_start);
	CHECK_UEQ(procs[1].start, 12345ull * (1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK)));
	/* Threads: 2's main thread, then 42's main thread before 43. */
	CHECK_EQ(tids[0], 2);
	CHECK_EQ(tids[1], 42);
	CHECK_EQ(tgids[1], 42);
	CHECK_STR_EQ(names[1], "prog");
	CHECK_EQ(tids[2], 43);
	CHECK_EQ(tgids[2], 42);
	CHECK_STR_EQ(names[2], "worker 1");
	CHECK(hmap_get(&seen, 43, NULL));
	CHECK(hmap_get(&seen, 2, NULL));
	CHECK_EQ(seen.len, 3);

	/* Without names and the main thread: only 43, nameless; a vanished pid
	 * writes nothing. */
	pb_writer_reset(&w);
	memset(&cfg, 0, sizeof cfg);
	cfg.skip_main_thread_message = true;
	CHECK_EQ(probes_procfs_write_process(&w, fx_root, 9999, &cfg, NULL), -ENOENT);
	CHECK_EQ(pb_writer_size(&w), 0);
	CHECK_EQ(probes_procfs_write_process(&w, fx_root, 42, &cfg, NULL), 0);
	pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
	nt = 0;
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ProcessTree_processes) {
			decode_process(&f, &procs[0]);
			CHECK(!procs[0].has_start);
		} else if (f.id == PB_F_ProcessTree_threads) {
			CHECK_EQ(sub_varint(&f, PB_F_ProcessTree_Thread_tid), 43);
			sub_string(&f, PB_F_ProcessTree_Thread_name, names[0], sizeof names[0]);
			CHECK_STR_EQ(names[0], "");
			nt++;
		}
	}
	CHECK_EQ(nt, 1);
	pb_writer_release(&w);
	hmap_release(&seen);
	fx_release();
}

TEST(probes_procfs_mem_counters)
{
	struct pb_writer w;
	struct pb_field f = {0};
	static const int64_t want[] = {0, 42, 8000, 600, 100, 400, 100, 5, 0, 700, -100};

	CHECK(fx_init());
	fx_processes();
	pb_writer_init_growable(&w);
	CHECK_EQ(probes_procfs_write_mem_counters(&w, fx_root, 2), -ENODATA);
	CHECK_EQ(probes_procfs_write_mem_counters(&w, fx_root, 9999), -ENOENT);
	CHECK_EQ(pb_writer_size(&w), 0);
	CHECK_EQ(probes_procfs_write_mem_counters(&w, fx_root, 42), 0);
	CHECK_EQ(
	    pb_find_field(pb_writer_data(&w), pb_writer_size(&w), PB_F_ProcessStats_processes, &f),
	    1);
	for (uint32_t id = 1; id <= 10; id++)
		CHECK_EQ(sub_varint(&f, id), want[id]);
	pb_writer_release(&w);
	fx_release();
}

TEST(probes_procfs_config)
{
	struct pb_writer w;
	struct probes_procfs_config c;
	unsigned h;

	pb_writer_init_growable(&w);
	pb_put_string(&w, PB_F_DataSourceConfig_name, "linux.process_stats");
	h = pb_begin_nested(&w, PB_F_DataSourceConfig_process_stats_config);
	pb_put_bool(&w, PB_F_ProcessStatsConfig_scan_all_processes_on_start, true);
	pb_put_bool(&w, PB_F_ProcessStatsConfig_record_thread_names, true);
	pb_put_uint32(&w, PB_F_ProcessStatsConfig_proc_stats_poll_ms, 20);
	pb_put_bool(&w, PB_F_ProcessStatsConfig_skip_main_thread_message, true);
	pb_end_nested(&w, h);
	probes_procfs_config_parse(pb_writer_data(&w), pb_writer_size(&w), &c);
	CHECK(c.scan_all_processes_on_start);
	CHECK(c.record_thread_names);
	CHECK(c.skip_main_thread_message);
	CHECK(!c.record_process_age);
	CHECK_EQ(c.proc_stats_poll_ms, PROBES_PROC_MIN_POLL_MS); /* clamped */
	probes_procfs_config_parse(NULL, 0, &c);
	CHECK(!c.scan_all_processes_on_start);
	CHECK_EQ(c.proc_stats_poll_ms, 0);
	pb_writer_release(&w);
}

/* Count ProcessTree processes / threads entries in w; the first process's
 * pid and the last thread's (tid, tgid). */
static void count_tree(struct pb_writer *w, int *np, int *nt, int64_t *pid, int64_t *tid,
                       int64_t *tgid)
{
	struct pb_reader r;
	struct pb_field f = {0};
	*np = *nt = 0;
	*pid = *tid = *tgid = -1;
	pb_reader_init(&r, pb_writer_data(w), pb_writer_size(w));
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ProcessTree_processes && (*np)++ == 0)
			*pid = sub_varint(&f, PB_F_ProcessTree_Process_pid);
		if (f.id == PB_F_ProcessTree_threads) {
			(*nt)++;
			*tid = sub_varint(&f, PB_F_ProcessTree_Thread_tid);
			*tgid = sub_varint(&f, PB_F_ProcessTree_Thread_tgid);
		}
	}
}

/* Tasks first seen in ftrace: a thread brings its whole process; known
 * tasks, the idle task and vanished ones write nothing; a forgotten thread
 * (renamed) of a known process comes back as a lone thread entry. */
TEST(probes_procfs_write_pids)
{
	static const int32_t first[] = {43, 0, 9999, 43};
	static const int32_t again[] = {42, 43, 2};
	struct probes_procfs_config cfg = {0};
	struct pb_writer w;
	struct hmap seen;
	int np, nt;
	int64_t pid, tid, tgid;

	CHECK(fx_init());
	fx_processes();
	/* /proc/TID of a thread exists, though readdir does not list it. */
	fx_puts("43/status", "Name:\tworker 1\nTgid:\t42\nPid:\t43\n");
	hmap_init(&seen);
	pb_writer_init_growable(&w);
	CHECK_EQ(probes_procfs_write_pids(&w, fx_root, first, TB_ARRAY_SIZE(first), &cfg, &seen),
	         1);
	count_tree(&w, &np, &nt, &pid, &tid, &tgid);
	CHECK_EQ(np, 1);
	CHECK_EQ(pid, 42);
	CHECK_EQ(nt, 2); /* 42's main thread and 43 */
	CHECK_EQ(tid, 43);
	CHECK(hmap_get(&seen, 42, NULL));
	CHECK(hmap_get(&seen, 9999, NULL)); /* not asked about again */

	pb_writer_reset(&w);
	CHECK_EQ(probes_procfs_write_pids(&w, fx_root, again, 2, &cfg, &seen), 0);
	CHECK_EQ(pb_writer_size(&w), 0);

	hmap_del(&seen, 43, NULL);
	CHECK_EQ(probes_procfs_write_pids(&w, fx_root, again, TB_ARRAY_SIZE(again), &cfg, &seen),
	         2);
	count_tree(&w, &np, &nt, &pid, &tid, &tgid);
	CHECK_EQ(np, 1); /* kthreadd, new */
	CHECK_EQ(pid, 2);
	CHECK_EQ(nt, 2); /* 43 alone, then kthreadd's main thread */
	CHECK_EQ(tid, 2);
	pb_writer_reset(&w);
	hmap_del(&seen, 43, NULL);
	CHECK_EQ(probes_procfs_write_pids(&w, fx_root, again + 1, 1, &cfg, &seen), 1);
	count_tree(&w, &np, &nt, &pid, &tid, &tgid);
	CHECK_EQ(np, 0);
	CHECK_EQ(nt, 1);
	CHECK_EQ(tid, 43);
	CHECK_EQ(tgid, 42);
	pb_writer_release(&w);
	hmap_release(&seen);
	fx_release();
}

/* ProcessStatsConfig.quirks DISABLE_ON_DEMAND (2), packed or not. */
TEST(probes_procfs_config_quirks)
{
	static const uint8_t packed[] = {1, 2};
	struct probes_procfs_config c;
	for (int form = 0; form < 3; form++) {
		struct pb_writer w;
		unsigned h;
		pb_writer_init_growable(&w);
		h = pb_begin_nested(&w, PB_F_DataSourceConfig_process_stats_config);
		if (form == 0)
			pb_put_varint(&w, PB_F_ProcessStatsConfig_quirks,
			              PB_E_ProcessStatsConfig_Quirks_DISABLE_ON_DEMAND);
		else if (form == 1)
			pb_put_bytes(&w, PB_F_ProcessStatsConfig_quirks, packed, sizeof packed);
		else
			pb_put_varint(
			    &w, PB_F_ProcessStatsConfig_quirks,
			    PB_E_ProcessStatsConfig_Quirks_DISABLE_INITIAL_DUMP); /* ignored */
		pb_end_nested(&w, h);
		probes_procfs_config_parse(pb_writer_data(&w), pb_writer_size(&w), &c);
		CHECK_EQ(c.disable_on_demand, form < 2);
		pb_writer_release(&w);
	}
}

/* ---- sys_stats ------------------------------------------------------------ */

TEST(probes_sysstats_keys)
{
	CHECK_EQ(probes_sysstats_meminfo_key("MemTotal", 8), 1);
	CHECK_EQ(probes_sysstats_meminfo_key("Active(anon)", 12), 9);
	CHECK_EQ(probes_sysstats_meminfo_key("Committed_AS", 12), 28);
	CHECK_EQ(probes_sysstats_meminfo_key("CmaFree", 7), 33);
	CHECK_EQ(probes_sysstats_meminfo_key("MemTotalX", 9), 0);
	CHECK_EQ(probes_sysstats_meminfo_key("Hugepagesize", 12), 0);
	CHECK_EQ(probes_sysstats_vmstat_key("nr_free_pages", 13), 1);
	CHECK_EQ(probes_sysstats_vmstat_key("pgfault", 7),
	         PERFETTO__PROTOS__VMSTAT_COUNTERS__VMSTAT_PGFAULT);
	CHECK_EQ(probes_sysstats_vmstat_key("workingset_restore", 18),
	         PERFETTO__PROTOS__VMSTAT_COUNTERS__VMSTAT_WORKINGSET_RESTORE);
	CHECK_EQ(probes_sysstats_vmstat_key("unspecified", 11), 0);
	CHECK_EQ(probes_sysstats_vmstat_key("NR_FREE_PAGES", 13), 0);
	CHECK_EQ(probes_sysstats_vmstat_key("no_such_counter", 15), 0);
	CHECK_EQ(probes_sysstats_vmstat_key("", 0), 0);
}

static const char meminfo_fx[] = "MemTotal:       24684092 kB\nMemFree:        22653464 kB\n"
                                 "MemAvailable:   24228912 kB\nCached:          1689028 kB\n"
                                 "Active(anon):      12345 kB\nHugePages_Total:       0\n"
                                 "garbage line\nSwapTotal: x kB\n";
static const char vmstat_fx[] = "nr_free_pages 5663366\nnr_zone_inactive_anon 17\n"
                                "some_new_counter 5\npgfault 99\nbroken\n";
static const char stat_fx[] = "cpu  100 0 50 1000 3 0 2 1 0 0\n"
                              "cpu0 60 0 30 500 1 0 1 1 0 0\n"
                              "cpu1 40 1 20 500 2 0 1 0 0 0\n"
                              "intr 1000 5 0 7\nctxt 123\nbtime 1700000000\n"
                              "processes 63308\nprocs_running 1\nsoftirq 50 10 40\n";

static void put_sys_config(struct pb_writer *w, bool lists)
{
	unsigned h = pb_begin_nested(w, PB_F_DataSourceConfig_sys_stats_config);
	pb_put_uint32(w, PB_F_SysStatsConfig_meminfo_period_ms, 100);
	if (lists) {
		uint64_t packed[] = {PB_E_MeminfoCounters_MEMINFO_MEM_TOTAL,
		                     PB_E_MeminfoCounters_MEMINFO_CACHED};
		pb_put_packed_varint(w, PB_F_SysStatsConfig_meminfo_counters, packed, 2);
		pb_put_uint32(w, PB_F_SysStatsConfig_stat_counters, PROBES_STAT_CPU_TIMES);
		pb_put_uint32(w, PB_F_SysStatsConfig_stat_counters, PROBES_STAT_FORK_COUNT);
	}
	pb_put_uint32(w, PB_F_SysStatsConfig_vmstat_period_ms, 200);
	pb_put_uint32(w, PB_F_SysStatsConfig_stat_period_ms, 100);
	pb_end_nested(w, h);
}

TEST(probes_sysstats_config)
{
	struct pb_writer w;
	struct probes_sysstats_config c;

	pb_writer_init_growable(&w);
	put_sys_config(&w, true);
	probes_sysstats_config_parse(pb_writer_data(&w), pb_writer_size(&w), &c);
	CHECK_EQ(c.tick_ms, 100);
	CHECK_EQ(c.meminfo_ticks, 1);
	CHECK_EQ(c.vmstat_ticks, 2);
	CHECK_EQ(c.stat_ticks, 1);
	CHECK_UEQ(c.meminfo_mask, (1ull << 1) | (1ull << 5));
	CHECK_UEQ(c.vmstat_mask[0], ~0ull); /* no list: everything */
	CHECK_UEQ(c.stat_mask, (1u << PROBES_STAT_CPU_TIMES) | (1u << PROBES_STAT_FORK_COUNT));

	/* Periods that are not multiples of the smallest: nothing is polled. */
	pb_writer_reset(&w);
	{
		unsigned h = pb_begin_nested(&w, PB_F_DataSourceConfig_sys_stats_config);
		pb_put_uint32(&w, PB_F_SysStatsConfig_meminfo_period_ms, 300);
		pb_put_uint32(&w, PB_F_SysStatsConfig_vmstat_period_ms, 200);
		pb_end_nested(&w, h);
	}
	probes_sysstats_config_parse(pb_writer_data(&w), pb_writer_size(&w), &c);
	CHECK_EQ(c.tick_ms, 0);
	CHECK_EQ(c.meminfo_ticks, 0);
	pb_writer_release(&w);
}

TEST(probes_sysstats_collect)
{
	struct pb_writer w, cw;
	struct probes_sysstats_config c;
	struct pb_reader r;
	struct pb_field f = {0};
	int nmem = 0, nvm = 0, ncpu = 0, forks = 0, irqs = 0, end = 0;
	uint64_t ns = 1000000000ull / (uint64_t)sysconf(_SC_CLK_TCK);

	CHECK(fx_init());
	fx_puts("meminfo", meminfo_fx);
	fx_puts("vmstat", vmstat_fx);
	fx_puts("stat", stat_fx);
	pb_writer_init_growable(&cw);
	put_sys_config(&cw, true);
	probes_sysstats_config_parse(pb_writer_data(&cw), pb_writer_size(&cw), &c);
	pb_writer_init_growable(&w);
	probes_sysstats_collect(&w, fx_root, &c, 0);
	pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_SysStats_meminfo) {
			int64_t k = sub_varint(&f, PB_F_SysStats_MeminfoValue_key),
			        v = sub_varint(&f, PB_F_SysStats_MeminfoValue_value);
			CHECK(k == 1 || k == 5);
			CHECK_EQ(v, k == 1 ? 24684092 : 1689028);
			nmem++;
		} else if (f.id == PB_F_SysStats_vmstat) {
			int64_t k = sub_varint(&f, PB_F_SysStats_VmstatValue_key),
			        v = sub_varint(&f, PB_F_SysStats_VmstatValue_value);
			if (k == 1)
				CHECK_EQ(v, 5663366);
			nvm++;
		} else if (f.id == PB_F_SysStats_cpu_stat) {
			int64_t cpu = sub_varint(&f, PB_F_SysStats_CpuTimes_cpu_id);
			CHECK_EQ(cpu, ncpu);
			CHECK_UEQ((uint64_t)sub_varint(&f, PB_F_SysStats_CpuTimes_user_ns),
			          (cpu ? 40 : 60) * ns);
			CHECK_UEQ((uint64_t)sub_varint(&f, PB_F_SysStats_CpuTimes_user_nice_ns),
			          (cpu ? 1 : 0) * ns);
			CHECK_UEQ((uint64_t)sub_varint(&f, PB_F_SysStats_CpuTimes_idle_ns),
			          500 * ns);
			CHECK_UEQ((uint64_t)sub_varint(&f, PB_F_SysStats_CpuTimes_steal_ns),
			          (cpu ? 0 : 1) * ns);
			ncpu++;
		} else if (f.id == PB_F_SysStats_num_forks) {
			CHECK_UEQ(f.val, 63308);
			forks++;
		} else if (f.id == PB_F_SysStats_num_irq_total || f.id == PB_F_SysStats_num_irq) {
			irqs++;
		} else if (f.id == PB_F_SysStats_collection_end_timestamp) {
			end++;
		}
	}
	CHECK_EQ(r.error, 0);
	CHECK_EQ(nmem, 2);
	CHECK_EQ(nvm, 3);  /* nr_free_pages, nr_zone_inactive_anon, pgfault */
	CHECK_EQ(ncpu, 2); /* the "cpu" total line is not a CPU */
	CHECK_EQ(forks, 1);
	CHECK_EQ(irqs, 0); /* IRQ_COUNTS not in the list */
	CHECK_EQ(end, 1);

	/* Tick 1: vmstat (every 2nd tick) is not due. */
	pb_writer_reset(&w);
	probes_sysstats_collect(&w, fx_root, &c, 1);
	nvm = nmem = 0;
	pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
	while (pb_next(&r, &f)) {
		nvm += f.id == PB_F_SysStats_vmstat;
		nmem += f.id == PB_F_SysStats_meminfo;
	}
	CHECK_EQ(nvm, 0);
	CHECK_EQ(nmem, 2);
	pb_writer_release(&w);
	pb_writer_release(&cw);
	fx_release();
}

TEST(probes_sysstats_irqs)
{
	struct pb_writer w;
	struct probes_sysstats_config c;
	struct pb_reader r;
	struct pb_field f = {0};
	int64_t irq_total = -1, softirq_total = -1;
	int64_t irq[4], irq_n[4], soft[4];
	int ni = 0, ns = 0;

	probes_sysstats_config_parse(NULL, 0, &c); /* no list: every stat counter */
	pb_writer_init_growable(&w);
	probes_sysstats_write_stat(&w, stat_fx, &c, 10);
	pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_SysStats_num_irq_total)
			irq_total = (int64_t)f.val;
		else if (f.id == PB_F_SysStats_num_softirq_total)
			softirq_total = (int64_t)f.val;
		else if (f.id == PB_F_SysStats_num_irq && ni < 4) {
			irq_n[ni] = sub_varint(&f, PB_F_SysStats_InterruptCount_irq);
			irq[ni++] = sub_varint(&f, PB_F_SysStats_InterruptCount_count);
		} else if (f.id == PB_F_SysStats_num_softirq && ns < 4) {
			soft[ns++] = sub_varint(&f, PB_F_SysStats_InterruptCount_count);
		}
	}
	CHECK_EQ(irq_total, 1000);
	CHECK_EQ(ni, 3);
	CHECK_EQ(irq_n[0], 0);
	CHECK_EQ(irq_n[2], 2);
	CHECK_EQ(irq[0], 5);
	CHECK_EQ(irq[2], 7);
	CHECK_EQ(softirq_total, 50);
	CHECK_EQ(ns, 2);
	CHECK_EQ(soft[1], 40);
	pb_writer_release(&w);

	/* Meminfo with an empty key list in the config is the default: all. */
	pb_writer_init_growable(&w);
	probes_sysstats_write_meminfo(&w, meminfo_fx, &c);
	ni = 0;
	pb_reader_init(&r, pb_writer_data(&w), pb_writer_size(&w));
	while (pb_next(&r, &f))
		ni++;
	CHECK_EQ(ni, 5); /* MemTotal MemFree MemAvailable Cached Active(anon) */
	pb_writer_release(&w);
}

/* ---- system_info ---------------------------------------------------------- */

TEST(probes_system_info_cpu_info)
{
	char proc[96], sys[96], name[64];
	struct pb_writer w;
	struct pb_field pkt = {0}, f = {0};
	struct pb_reader r;
	int n = 0;
	uint32_t freqs[2][4] = {{0}};
	int nf[2] = {0};
	int64_t cap[2] = {-1, -1};

	CHECK(fx_init());
	fx_puts("proc/cpuinfo", "processor\t: 0\nvendor_id\t: GenuineIntel\n"
	                        "model name\t: Some CPU\n\nprocessor\t: 1\n"
	                        "model name\t: Some CPU\n\n");
	fx_puts("sys/devices/system/cpu/cpu0/cpufreq/scaling_available_frequencies",
	        "300000 600000 \n");
	fx_puts("sys/devices/system/cpu/cpu0/cpu_capacity", "1024\n");
	fx_puts("sys/devices/system/cpu/cpu1/cpufreq/stats/time_in_state", "100000 5\n200000 7\n");
	snprintf(proc, sizeof proc, "%s/proc", fx_root);
	snprintf(sys, sizeof sys, "%s/sys", fx_root);
	pb_writer_init_growable(&w);
	probes_system_info_write_cpu_info(&w, proc, sys);
	CHECK_EQ(
	    pb_find_field(pb_writer_data(&w), pb_writer_size(&w), PB_F_TracePacket_cpu_info, &pkt),
	    1);
	pb_reader_init_field(&r, &pkt);
	while (pb_next(&r, &f)) {
		struct pb_reader cr;
		struct pb_field g = {0};
		CHECK_EQ(f.id, PB_F_CpuInfo_cpus);
		if (n >= 2)
			break;
		sub_string(&f, PB_F_CpuInfo_Cpu_processor, name, sizeof name);
		CHECK_STR_EQ(name, "unknown");
		cap[n] = sub_varint(&f, PB_F_CpuInfo_Cpu_capacity);
		pb_reader_init_field(&cr, &f);
		while (pb_next(&cr, &g))
			if (g.id == PB_F_CpuInfo_Cpu_frequencies && nf[n] < 4)
				freqs[n][nf[n]++] = (uint32_t)g.val;
		CHECK_EQ(pb_find_field(f.data, f.len, PB_F_CpuInfo_Cpu_arm_identifier, &g), 0);
		n++;
	}
	CHECK_EQ(n, 2);
	CHECK_EQ(cap[0], 1024);
	CHECK_EQ(cap[1], -1);
	CHECK_EQ(nf[0], 2);
	CHECK_UEQ(freqs[0][1], 600000);
	CHECK_EQ(nf[1], 2);
	CHECK_UEQ(freqs[1][0], 100000);
	CHECK_UEQ(freqs[1][1], 200000);

	/* arm: the global "Processor" name and the five identifier keys. */
	fx_puts("proc/cpuinfo", "Processor\t: AArch64 Processor rev 13 (aarch64)\n"
	                        "processor\t: 0\nCPU implementer\t: 0x41\n"
	                        "CPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd05\n"
	                        "CPU revision\t: 0\n\n");
	pb_writer_reset(&w);
	probes_system_info_write_cpu_info(&w, proc, sys);
	CHECK_EQ(
	    pb_find_field(pb_writer_data(&w), pb_writer_size(&w), PB_F_TracePacket_cpu_info, &pkt),
	    1);
	CHECK_EQ(pb_find_field(pkt.data, pkt.len, PB_F_CpuInfo_cpus, &f), 1);
	sub_string(&f, PB_F_CpuInfo_Cpu_processor, name, sizeof name);
	CHECK_STR_EQ(name, "AArch64 Processor rev 13 (aarch64)");
	{
		struct pb_field id = {0};
		CHECK_EQ(pb_find_field(f.data, f.len, PB_F_CpuInfo_Cpu_arm_identifier, &id), 1);
		CHECK_EQ(sub_varint(&id, PB_F_CpuInfo_ArmCpuIdentifier_implementer), 0x41);
		CHECK_EQ(sub_varint(&id, PB_F_CpuInfo_ArmCpuIdentifier_architecture), 8);
		CHECK_EQ(sub_varint(&id, PB_F_CpuInfo_ArmCpuIdentifier_part), 0xd05);
		CHECK_EQ(sub_varint(&id, PB_F_CpuInfo_ArmCpuIdentifier_revision), 0);
	}
	pb_writer_release(&w);
	fx_release();
}
