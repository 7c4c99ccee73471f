/*
 * /proc readers of the linux.process_stats data source: one process (status,
 * cmdline, stat, task/) into ProcessTree entries, every process of a /proc
 * root, and a process's memory counters into a ProcessStats entry. Fields
 * are written with pb as they are parsed. The files read:
 *
 *   PID/status    "Key:\tvalue\n" lines: PPid, Uid (real uid first), NSpid,
 *                 Name, Tgid, VmSize/VmRSS/RssAnon/RssFile/RssShmem/VmSwap/
 *                 VmLck/VmHWM ("  1234 kB")
 *   PID/cmdline   argv, each NUL-terminated; empty for kernel threads
 *   PID/stat      "pid (comm) state ppid ... flags(9) ... starttime(22)";
 *                 comm may hold spaces and ')' so fields count from the
 *                 last ')'
 *   PID/task/TID/comm   thread name + "\n"
 *   PID/oom_score_adj   decimal
 */
#include "procfs.h"
#include "pb_fields.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define PF_KTHREAD_FLAG 0x00200000u /* PF_KTHREAD in /proc/PID/stat flags */
#define STATUS_MAX ((size_t)64 << 10)
#define CMDLINE_MAX ((size_t)128 << 10)
#define SMALL_MAX ((size_t)4 << 10)

static int read_pid_file(const char *root, int32_t pid, const char *name, char **buf, size_t *len,
                         size_t max)
{
	char path[512];
	int n = snprintf(path, sizeof path, "%s/%d/%s", root, (int)pid, name);
	if (n < 0 || (size_t)n >= sizeof path)
		return -ENAMETOOLONG;
	return tb_read_file(path, buf, len, max, NULL);
}

/* The value of "key:" in a status-style buffer (NUL-terminated), with leading
 * blanks skipped, or NULL. */
static const char *status_value(const char *buf, const char *key)
{
	size_t kl = strlen(key);
	for (const char *line = buf; line && *line;) {
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			const char *v = line + kl + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			return v;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

static bool status_int(const char *buf, const char *key, int64_t *out)
{
	const char *v = status_value(buf, key);
	char *end;
	if (!v)
		return false;
	errno = 0;
	*out = strtoll(v, &end, 10);
	return end != v && !errno;
}

/* ProcessStatsConfig.quirks (repeated enum, packed or not). */
static void quirks(const struct pb_field *f, struct probes_procfs_config *out)
{
	const uint8_t *p = f->data, *end = f->data + f->len;
	uint64_t v;

	if (f->wire == PB_WIRE_VARINT) {
		out->disable_on_demand |=
		    f->val == PB_E_ProcessStatsConfig_Quirks_DISABLE_ON_DEMAND;
		return;
	}
	if (f->wire != PB_WIRE_LEN)
		return;
	while (p < end && (p = pb_read_varint(p, end, &v)))
		out->disable_on_demand |= v == PB_E_ProcessStatsConfig_Quirks_DISABLE_ON_DEMAND;
}

void probes_procfs_config_parse(const uint8_t *ds_config, size_t len,
                                struct probes_procfs_config *out)
{
	struct pb_field f = {0};
	struct pb_reader r;

	memset(out, 0, sizeof *out);
	if (pb_find_field(ds_config, len, PB_F_DataSourceConfig_process_stats_config, &f) != 1 ||
	    f.wire != PB_WIRE_LEN)
		return;
	pb_reader_init_field(&r, &f);
	while (pb_next(&r, &f)) {
		if (f.id == PB_F_ProcessStatsConfig_quirks) {
			quirks(&f, out);
			continue;
		}
		if (f.wire != PB_WIRE_VARINT)
			continue;
		switch (f.id) {
		case PB_F_ProcessStatsConfig_scan_all_processes_on_start:
			out->scan_all_processes_on_start = f.val != 0;
			break;
		case PB_F_ProcessStatsConfig_record_thread_names:
			out->record_thread_names = f.val != 0;
			break;
		case PB_F_ProcessStatsConfig_proc_stats_poll_ms:
			out->proc_stats_poll_ms = (uint32_t)f.val;
			break;
		case PB_F_ProcessStatsConfig_record_process_age:
			out->record_process_age = f.val != 0;
			break;
		case PB_F_ProcessStatsConfig_skip_main_thread_message:
			out->skip_main_thread_message = f.val != 0;
			break;
		}
	}
	if (out->proc_stats_poll_ms && out->proc_stats_poll_ms < PROBES_PROC_MIN_POLL_MS)
		out->proc_stats_poll_ms = PROBES_PROC_MIN_POLL_MS;
}

VEC_DEFINE(pid_vec, int32_t);

/* Numeric entries of dir (unordered) appended to *out (caller releases). */
static void list_numeric(const char *dir, struct pid_vec *out)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long v;
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		v = strtol(e->d_name, &end, 10);
		if (*end || v <= 0 || v > INT32_MAX)
			continue;
		vec_push(out, (int32_t)v);
	}
	closedir(d);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

/* Fields after "(comm)" in /proc/PID/stat: index 0 is the state (field 3).
 * Returns the value of stat field `field` (1-based, as in proc(5)). */
static bool stat_field(const char *stat, int field, uint64_t *out)
{
	const char *p = strrchr(stat, ')');
	if (!p || field < 3)
		return false;
	p++;
	for (int i = 3; i <= field; i++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return false;
		if (i == field) {
			char *end;
			*out = strtoull(p, &end, 10);
			return end != p;
		}
		while (*p && *p != ' ')
			p++;
	}
	return false;
}

static void write_threads(struct pb_writer *w, const char *root, int32_t pid,
                          const struct probes_procfs_config *cfg, struct hmap *seen)
{
	struct pid_vec tids = VEC_INIT;
	char dir[512];
	int n = snprintf(dir, sizeof dir, "%s/%d/task", root, (int)pid);

	if (n > 0 && (size_t)n < sizeof dir)
		list_numeric(dir, &tids);
	if (tids.len > 1)
		qsort(tids.data, tids.len, sizeof *tids.data, cmp_i32);
	/* The main thread first, as Perfetto writes it. */
	for (size_t i = 0; i < tids.len; i++) {
		if (tids.data[i] == pid && i > 0) {
			memmove(tids.data + 1, tids.data, i * sizeof *tids.data);
			tids.data[0] = pid;
		}
	}
	if (!tids.len) /* no task/ (fixtures, very old kernels): just the main thread */
		vec_push(&tids, pid);
	for (size_t i = 0; i < tids.len; i++) {
		int32_t tid = tids.data[i];
		unsigned h;
		if (seen)
			hmap_put(seen, (uint64_t)(uint32_t)tid, 1);
		if (tid == pid && cfg->skip_main_thread_message)
			continue;
		h = pb_begin_nested(w, PB_F_ProcessTree_threads);
		pb_put_int32(w, PB_F_ProcessTree_Thread_tid, tid);
		if (cfg->record_thread_names) {
			char rel[64], *name = NULL;
			size_t len = 0;
			snprintf(rel, sizeof rel, "task/%d/comm", (int)tid);
			if (read_pid_file(root, pid, rel, &name, &len, SMALL_MAX) == 0) {
				while (len && (name[len - 1] == '\n' || name[len - 1] == '\0'))
					len--;
				pb_put_bytes(w, PB_F_ProcessTree_Thread_name, name, len);
			}
			tb_free(name);
		}
		pb_put_int32(w, PB_F_ProcessTree_Thread_tgid, pid);
		pb_end_nested(w, h);
	}
	vec_release(&tids);
}

int probes_procfs_write_process(struct pb_writer *w, const char *root, int32_t pid,
                                const struct probes_procfs_config *cfg, struct hmap *seen)
{
	char *status = NULL, *cmdline = NULL, *stat = NULL;
	size_t status_len = 0, cmd_len = 0, stat_len = 0;
	int64_t ppid = 0, uid = 0;
	uint64_t flags = 0;
	bool kthread;
	unsigned h;

	if (read_pid_file(root, pid, "status", &status, &status_len, STATUS_MAX) != 0)
		return -ENOENT;
	read_pid_file(root, pid, "cmdline", &cmdline, &cmd_len, CMDLINE_MAX);
	read_pid_file(root, pid, "stat", &stat, &stat_len, SMALL_MAX);
	status_int(status, "PPid", &ppid);
	status_int(status, "Uid", &uid);
	if (stat && stat_field(stat, 9, &flags))
		kthread = (flags & PF_KTHREAD_FLAG) != 0;
	else
		kthread = pid == 2 || ppid == 2;

	h = pb_begin_nested(w, PB_F_ProcessTree_processes);
	pb_put_int32(w, PB_F_ProcessTree_Process_pid, pid);
	pb_put_int32(w, PB_F_ProcessTree_Process_ppid, (int32_t)ppid);
	pb_put_int32(w, PB_F_ProcessTree_Process_uid, (int32_t)uid);
	while (cmd_len && cmdline[cmd_len - 1] == '\0')
		cmd_len--;
	if (cmd_len) {
		/* argv[i] are NUL-separated; an arg may be empty. */
		for (size_t s = 0, i = 0; i <= cmd_len; i++) {
			if (i == cmd_len || cmdline[i] == '\0') {
				pb_put_bytes(w, PB_F_ProcessTree_Process_cmdline, cmdline + s,
				             i - s);
				s = i + 1;
			}
		}
	} else {
		const char *name = status_value(status, "Name");
		if (name) {
			size_t n = strcspn(name, "\n");
			pb_put_bytes(w, PB_F_ProcessTree_Process_cmdline, name, n);
			pb_put_bool(w, PB_F_ProcessTree_Process_cmdline_is_comm, true);
		}
	}
	pb_put_bool(w, PB_F_ProcessTree_Process_is_kthread, kthread);
	{
		/* NSpid: the pid in each nested namespace, outermost first. */
		const char *v = status_value(status, "NSpid");
		if (v) {
			char *end;
			strtol(v, &end, 10);
			for (v = end; *v == '\t' || *v == ' ';) {
				long ns = strtol(v, &end, 10);
				if (end == v)
					break;
				pb_put_int32(w, PB_F_ProcessTree_Process_nspid, (int32_t)ns);
				v = end;
			}
		}
	}
	if (cfg->record_process_age && stat) {
		uint64_t start_ticks;
		long hz = sysconf(_SC_CLK_TCK);
		if (hz > 0 && stat_field(stat, 22, &start_ticks))
			pb_put_uint64(w, PB_F_ProcessTree_Process_process_start_from_boot,
			              start_ticks * (1000000000ull / (uint64_t)hz));
	}
	pb_end_nested(w, h);
	write_threads(w, root, pid, cfg, seen);
	tb_free(status);
	tb_free(cmdline);
	tb_free(stat);
	return 0;
}

size_t probes_procfs_write_all(struct pb_writer *w, const char *root,
                               const struct probes_procfs_config *cfg, struct hmap *seen)
{
	struct pid_vec pids = VEC_INIT;
	size_t n = 0;

	list_numeric(root, &pids);
	if (pids.len > 1)
		qsort(pids.data, pids.len, sizeof *pids.data, cmp_i32);
	for (size_t i = 0; i < pids.len; i++)
		if (probes_procfs_write_process(w, root, pids.data[i], cfg, seen) == 0)
			n++;
	vec_release(&pids);
	return n;
}

/* The thread group of tid from /proc/TID/status, or 0 if it is gone. */
static int32_t tgid_of(const char *root, int32_t tid)
{
	char *buf = NULL;
	size_t len = 0;
	int32_t tgid = 0;
	if (read_pid_file(root, tid, "status", &buf, &len, STATUS_MAX) == 0) {
		const char *v = status_value(buf, "Tgid");
		if (v)
			tgid = (int32_t)strtol(v, NULL, 10);
	}
	tb_free(buf);
	return tgid;
}

size_t probes_procfs_write_pids(struct pb_writer *w, const char *root, const int32_t *tids,
                                size_t n, const struct probes_procfs_config *cfg, struct hmap *seen)
{
	size_t written = 0;
	for (size_t i = 0; i < n; i++) {
		int32_t tid = tids[i], tgid;
		if (tid <= 0 || hmap_get(seen, (uint64_t)(uint32_t)tid, NULL))
			continue;
		hmap_put(seen, (uint64_t)(uint32_t)tid, 1);
		if ((tgid = tgid_of(root, tid)) <= 0)
			continue;
		if (tgid != tid && hmap_get(seen, (uint64_t)(uint32_t)tgid, NULL)) {
			unsigned t = pb_begin_nested(w, PB_F_ProcessTree_threads);
			pb_put_int32(w, PB_F_ProcessTree_Thread_tid, tid);
			pb_put_int32(w, PB_F_ProcessTree_Thread_tgid, tgid);
			pb_end_nested(w, t);
			written++;
		} else if (probes_procfs_write_process(w, root, tgid, cfg, seen) == 0) {
			written++;
		}
	}
	return written;
}

int probes_procfs_write_mem_counters(struct pb_writer *w, const char *root, int32_t pid)
{
	static const struct {
		const char *key;
		uint32_t field;
	} keys[] = {
	    {"VmSize", PB_F_ProcessStats_Process_vm_size_kb},
	    {"VmRSS", PB_F_ProcessStats_Process_vm_rss_kb},
	    {"RssAnon", PB_F_ProcessStats_Process_rss_anon_kb},
	    {"RssFile", PB_F_ProcessStats_Process_rss_file_kb},
	    {"RssShmem", PB_F_ProcessStats_Process_rss_shmem_kb},
	    {"VmSwap", PB_F_ProcessStats_Process_vm_swap_kb},
	    {"VmLck", PB_F_ProcessStats_Process_vm_locked_kb},
	    {"VmHWM", PB_F_ProcessStats_Process_vm_hwm_kb},
	};
	char *status = NULL, *oom = NULL;
	size_t len = 0;
	int64_t v;
	unsigned h;

	if (read_pid_file(root, pid, "status", &status, &len, STATUS_MAX) != 0)
		return -ENOENT;
	if (!status_int(status, "VmSize", &v)) {
		tb_free(status);
		return -ENODATA;
	}
	h = pb_begin_nested(w, PB_F_ProcessStats_processes);
	pb_put_int32(w, PB_F_ProcessStats_Process_pid, pid);
	for (size_t i = 0; i < TB_ARRAY_SIZE(keys); i++)
		if (status_int(status, keys[i].key, &v))
			pb_put_uint64(w, keys[i].field, (uint64_t)v);
	if (read_pid_file(root, pid, "oom_score_adj", &oom, &len, SMALL_MAX) == 0) {
		char *end;
		long adj = strtol(oom, &end, 10);
		if (end != oom)
			pb_put_int64(w, PB_F_ProcessStats_Process_oom_score_adj, adj);
	}
	pb_end_nested(w, h);
	tb_free(oom);
	tb_free(status);
	return 0;
}
