/*
 * traced_probes: the producer "perfetto.traced_probes". It connects to the
 * service's producer socket with the tracing library, registers its data
 * sources, and for each data source instance the service sets up owns one
 * trace writer and the object that fills it:
 *
 *   linux.process_stats  procfs/process_stats.c  ProcessTree, ProcessStats
 *   linux.sys_stats      sysstats/sysstats.c     SysStats
 *   linux.system_info    system_info.c           CpuInfo, once at start
 *   linux.ftrace         ftrace/data_source.c    FtraceEventBundle, FtraceStats
 *   linux.systemd_journald  journald/data_source.c  SystemdJournaldEvent
 *
 * Every data source is registered will_notify_on_start/_stop, as Perfetto's
 * are; start and stop are acknowledged once the instance has written its
 * first packet or freed its writer. A Flush commits every writer and acks.
 * The connection is a tracing_daemon (components/tracing/daemon.c): when it
 * drops (traced restarted) the instances are dropped and it reconnects every
 * PROBES_RECONNECT_MS, as Perfetto's traced_probes does, registering the
 * data sources again. Single-threaded on one loop; SIGINT/SIGTERM exit 0.
 */
#include "probes.h"
#include "probes_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "procfs/procfs.h"
#include "sysstats/sysstats.h"
#include "tracing.h"
#include "version.h"
#include "pb_fields.h"

#define PROBES_LOG "probes"
#define PROBES_PRODUCER_NAME "perfetto.traced_probes"
#define PROBES_RECONNECT_MS 1000
/* Perfetto's traced_probes asks for a 2 MiB SMB of 32 KiB pages: a drain
 * of a context-switch storm writes ~250 KiB of bundles before its commit
 * goes out, which would fill the service's 256 KiB default and drop
 * packets. */
#define PROBES_SMB_SIZE_HINT (2u << 20)
#define PROBES_SMB_PAGE_HINT (32u << 10)

enum ds_kind { DS_PROCESS_STATS, DS_SYS_STATS, DS_SYSTEM_INFO, DS_FTRACE, DS_JOURNALD };

/* Registered will_notify_on_start/_stop, as Perfetto's are. */
static const struct tracing_ds_desc data_sources[] = {
    {"linux.process_stats", true, true, false},    {"linux.sys_stats", true, true, false},
    {"linux.system_info", true, true, false},      {"linux.ftrace", true, true, false},
    {"linux.systemd_journald", true, true, false},
};
static const enum ds_kind data_source_kinds[] = {DS_PROCESS_STATS, DS_SYS_STATS, DS_SYSTEM_INFO,
                                                 DS_FTRACE, DS_JOURNALD};

struct probes;

struct instance {
	struct probes *pr;
	uint64_t id;
	uint64_t session; /* DataSourceConfig.tracing_session_id; 0 unknown */
	enum ds_kind kind;
	uint8_t *config; /* the serialized DataSourceConfig from setup */
	size_t config_len;
	struct tracing_writer *w;
	struct probes_process_stats *ps;
	struct probes_sys_stats *ss;
	struct probes_ftrace *ft;
	struct probes_journald *jd;
};

struct probes {
	struct loop *loop;
	struct tracing_daemon *d;
	VEC(struct instance *) instances;
	/* $TRACEBOX_JOURNAL_DIRS (folders separated by ':'): journal folders
	 * to follow instead of journald's own; n_journal_dirs 0: those. */
	char *journal_dirs_buf;
	const char *journal_dirs[8];
	size_t n_journal_dirs;
	bool reset_ftrace; /* --reset-ftrace */
};

static struct instance *find(struct probes *pr, uint64_t id, size_t *index)
{
	for (size_t i = 0; i < pr->instances.len; i++) {
		if (pr->instances.data[i]->id == id) {
			if (index)
				*index = i;
			return pr->instances.data[i];
		}
	}
	return NULL;
}

/* p: the producer in->w belongs to (NULL: it is gone, and the writer with
 * it). */
static void instance_free(struct tracing_producer *p, struct instance *in)
{
	probes_process_stats_free(in->ps);
	probes_sys_stats_free(in->ss);
	probes_ftrace_free(in->ft);   /* last drain into in->w, tracefs restored */
	probes_journald_free(in->jd); /* entries appended since the last flush */
	if (p && in->w)
		tracing_producer_free_writer(p, in->w);
	tb_free(in->config);
	tb_free(in);
}

static void drop_all(struct probes *pr, struct tracing_producer *p)
{
	/* Out of the list before it is freed: ftrace's last drain looks the
	 * session's process_stats up in it. */
	while (pr->instances.len) {
		struct instance *in = *vec_last(&pr->instances);
		pr->instances.len--;
		instance_free(p, in);
	}
}

/* The ftrace instance ctx's events mentioned these tasks: the
 * process_stats instances of its session describe those they have not yet
 * (Perfetto's ProbesProducer::OnFtraceDataWrittenIntoDataSourceBuffers). */
static void on_ftrace_pids(void *ctx, const int32_t *renamed, size_t n_renamed, const int32_t *pids,
                           size_t n_pids)
{
	struct instance *ft = ctx;
	struct probes *pr = ft->pr;
	for (size_t i = 0; i < pr->instances.len; i++) {
		struct instance *in = pr->instances.data[i];
		if (!in->ps || in->session != ft->session)
			continue;
		probes_process_stats_on_rename_pids(in->ps, renamed, n_renamed);
		probes_process_stats_on_pids(in->ps, pids, n_pids);
	}
}

/* A batch of ftrace pages went into ctx's writer: send the chunks it
 * completed now, not after the whole drain (see PROBES_SMB_SIZE_HINT). */
static void on_ftrace_commit(void *ctx)
{
	struct instance *in = ctx;
	struct tracing_producer *p = tracing_daemon_producer(in->pr->d);
	if (p)
		tracing_producer_commit_completed(p);
}

static void on_setup(void *ctx, struct tracing_producer *p, uint64_t id, const char *ds_name,
                     const uint8_t *config, size_t config_len)
{
	struct probes *pr = ctx;
	struct instance *in;
	struct pb_field f = {0};
	size_t k;

	for (k = 0; k < TB_ARRAY_SIZE(data_sources); k++)
		if (strcmp(data_sources[k].name, ds_name) == 0)
			break;
	if (k == TB_ARRAY_SIZE(data_sources) || find(pr, id, NULL)) {
		log_warn(PROBES_LOG, "ignoring setup of '%s' (instance %llu)", ds_name,
		         (unsigned long long)id);
		return;
	}
	in = tb_calloc(1, sizeof *in);
	in->pr = pr;
	in->id = id;
	if (pb_find_field(config, config_len, PB_F_DataSourceConfig_tracing_session_id, &f) == 1 &&
	    f.wire == PB_WIRE_VARINT)
		in->session = f.val;
	in->kind = data_source_kinds[k];
	in->config = config_len ? tb_memdup(config, config_len) : NULL;
	in->config_len = config_len;
	vec_push(&pr->instances, in);
	log_debug(PROBES_LOG, "setup %s instance %llu", ds_name, (unsigned long long)id);
}

static void on_start(void *ctx, struct tracing_producer *p, uint64_t id, const uint8_t *config,
                     size_t config_len, uint32_t target_buffer)
{
	struct probes *pr = ctx;
	struct instance *in = find(pr, id, NULL);

	if (!in) {
		tracing_producer_notify_started(p, id);
		return;
	}
	if (!in->w && !(in->w = tracing_producer_new_writer(p, target_buffer))) {
		log_warn(PROBES_LOG, "no trace writer for instance %llu", (unsigned long long)id);
		tracing_producer_notify_started(p, id);
		return;
	}
	switch (in->kind) {
	case DS_PROCESS_STATS:
		if (!in->ps) {
			in->ps = probes_process_stats_new(pr->loop, in->w, in->config,
			                                  in->config_len, NULL);
			probes_process_stats_start(in->ps);
		}
		break;
	case DS_SYS_STATS:
		if (!in->ss) {
			in->ss =
			    probes_sys_stats_new(pr->loop, in->w, in->config, in->config_len, NULL);
			probes_sys_stats_start(in->ss);
		}
		break;
	case DS_FTRACE:
		if (!in->ft) {
			in->ft =
			    probes_ftrace_new(pr->loop, in->w, in->config, in->config_len, NULL);
			probes_ftrace_set_pids_cb(in->ft, on_ftrace_pids, in);
			probes_ftrace_set_commit_cb(in->ft, on_ftrace_commit, in);
			probes_ftrace_set_smb(in->ft, tracing_producer_smb(p));
			probes_ftrace_start(in->ft); /* failures are logged */
		}
		break;
	case DS_JOURNALD:
		if (!in->jd) {
			in->jd = probes_journald_new(pr->loop, in->w, in->config, in->config_len,
			                             pr->n_journal_dirs ? pr->journal_dirs : NULL,
			                             pr->n_journal_dirs);
			probes_journald_start(in->jd);
		}
		break;
	case DS_SYSTEM_INFO: {
		struct pb_writer *pw = tracing_writer_begin_packet(in->w);
		pb_put_uint64(pw, PB_F_TracePacket_timestamp, (uint64_t)tb_boot_ns());
		probes_system_info_write_cpu_info(pw, NULL, NULL);
		tracing_writer_end_packet(in->w);
		tracing_writer_flush(in->w);
		break;
	}
	}
	tracing_producer_notify_started(p, id);
}

static void on_stop(void *ctx, struct tracing_producer *p, uint64_t id)
{
	struct probes *pr = ctx;
	size_t i;
	struct instance *in = find(pr, id, &i);

	if (in) {
		pr->instances.data[i] = *vec_last(&pr->instances);
		pr->instances.len--;
		instance_free(p, in);
	}
	tracing_producer_notify_stopped(p, id);
}

static void on_flush(void *ctx, struct tracing_producer *p, const uint64_t *ids, size_t n,
                     uint64_t request_id)
{
	/* ftrace reads what the kernel holds now; the others write
	 * synchronously. Then committing every writer's chunk is the flush. */
	struct probes *pr = ctx;
	for (size_t i = 0; i < n; i++) {
		struct instance *in = find(pr, ids[i], NULL);
		if (in && in->ft)
			probes_ftrace_drain(in->ft);
		if (in && in->jd)
			probes_journald_flush(in->jd);
	}
	tracing_producer_flush_done(p, request_id);
}

/* The connection is gone: so are the writers; stop every instance (ftrace
 * restores tracefs). The daemon reconnects. */
static void on_disconnect(void *ctx, struct tracing_producer *p)
{
	drop_all(ctx, p);
}

/* $TRACEBOX_JOURNAL_DIRS into pr->journal_dirs. */
static void journal_dirs(struct probes *pr)
{
	const char *env = getenv("TRACEBOX_JOURNAL_DIRS");
	char *save = NULL;
	if (!env || !*env)
		return;
	pr->journal_dirs_buf = tb_strdup(env);
	for (char *s = pr->journal_dirs_buf;
	     s && pr->n_journal_dirs < TB_ARRAY_SIZE(pr->journal_dirs); s = save) {
		save = strchr(s, ':');
		if (save)
			*save++ = '\0';
		if (*s)
			pr->journal_dirs[pr->n_journal_dirs++] = s;
	}
}

static const char probes_usage[] =
    "usage: traced_probes [--background] [--reset-ftrace] [--cleanup-after-crash]\n"
    "                     [--version]\n"
    "The producer of Linux data sources (linux.process_stats, linux.sys_stats,\n"
    "linux.system_info, linux.ftrace, linux.systemd_journald).\n"
    "Socket: $PERFETTO_PRODUCER_SOCK_NAME. $TRACEBOX_JOURNAL_DIRS: journal\n"
    "folders to follow (':' between them) instead of journald's own.\n";

static enum tb_daemon_flag probes_flag(void *ctx, int argc, char **argv, int *i)
{
	struct probes *pr = ctx;
	struct tb_err err = {0};
	if (strcmp(argv[*i], "--reset-ftrace") == 0) {
		pr->reset_ftrace = true;
		return TB_DAEMON_FLAG_TAKEN;
	} else if (strcmp(argv[*i], "--cleanup-after-crash") == 0) {
		/* As Perfetto: reset what a dead traced_probes left, exit. */
		if (probes_ftrace_cleanup(NULL, true, &err) < 0)
			fprintf(stderr, "traced_probes: %s\n", err.msg);
		return TB_DAEMON_EXIT_OK;
	}
	return TB_DAEMON_FLAG_UNKNOWN;
}

static int probes_start(void *ctx, struct loop *l, struct tb_err *err)
{
	struct probes *pr = ctx;
	struct tracing_daemon_opts o = {0};

	journal_dirs(pr);
	if (pr->reset_ftrace && probes_ftrace_cleanup(NULL, false, err) < 0) {
		bool perm = err->code == -EACCES || err->code == -EPERM;
		log_error(PROBES_LOG, "%s%s", err->msg,
		          perm ? "; run as root or chown -R $USER /sys/kernel/tracing" : "");
		tb_err_clear(err);
	}
	pr->loop = l;
	o.producer.name = PROBES_PRODUCER_NAME;
	o.producer.smb_size_hint = PROBES_SMB_SIZE_HINT;
	o.producer.smb_page_hint = PROBES_SMB_PAGE_HINT;
	o.producer.ctx = pr;
	o.producer.on_disconnect = on_disconnect;
	o.producer.setup = on_setup;
	o.producer.start = on_start;
	o.producer.stop = on_stop;
	o.producer.flush = on_flush;
	o.data_sources = data_sources;
	o.n_data_sources = TB_ARRAY_SIZE(data_sources);
	/* tracebox autostart waits for "1" here (compat §5.2). */
	o.ready_fd_env = "TRACED_PROBES_NOTIFY_FD";
	o.retry_ms = PROBES_RECONNECT_MS;
	pr->d = tracing_daemon_new(l, &o);
	return 0;
}

static void probes_stop(void *ctx)
{
	struct probes *pr = ctx;
	drop_all(pr, pr->d ? tracing_daemon_producer(pr->d) : NULL);
	vec_release(&pr->instances);
	tb_free(pr->journal_dirs_buf);
	tracing_daemon_free(pr->d);
}

int traced_probes_main(int argc, char **argv)
{
	struct probes pr = {0};
	const struct tb_daemon d = {
	    .name = "traced_probes",
	    .log_tag = PROBES_LOG,
	    .usage = probes_usage,
	    .flag = probes_flag,
	    .start = probes_start,
	    .stop = probes_stop,
	    .ctx = &pr,
	};
	return tb_daemon_main(&d, argc, argv);
}
