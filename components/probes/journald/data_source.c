/*
 * The linux.systemd_journald data source (Perfetto v57's): journal entries
 * appended while the capture runs, one TracePacket each on the instance's
 * own sequence:
 *
 *   TracePacket{ timestamp=8: BOOTTIME ns,
 *     journald_event=132{ pid=1 (_PID), tid=2 (_TID), uid=3 (_UID), gid=4 (_GID),
 *       prio=5 (PRIORITY), tag=6 (SYSLOG_IDENTIFIER), message=7 (MESSAGE),
 *       comm=8 (_COMM), exe=9 (_EXE), systemd_unit=10 (_SYSTEMD_UNIT),
 *       hostname=11 (_HOSTNAME), transport=12 (_TRANSPORT) } }
 *
 * and on every flush a counters packet
 *
 *   TracePacket{ timestamp=8: BOOTTIME now, journald_event=132{ num_total=20, num_failed=21 } }
 *
 * Perfetto reads the journal through libsystemd and stamps entries with
 * their CLOCK_MONOTONIC time (timestamp_clock_id 3); we read the files
 * (journald/follow.c) and convert the entry's monotonic time to BOOTTIME
 * with the offset between the two clocks now (the realtime stamp for an
 * entry of another boot), so packets need no clock conversion.
 *
 * Filters, applied before anything is encoded, are journalctl's matches:
 * min_prio N in 1..6 keeps entries with a PRIORITY field of 0..N (0, unset
 * and 7 keep everything, as `journalctl -p 7` does, entries without
 * PRIORITY included); filter_identifiers keeps entries with one of those
 * SYSLOG_IDENTIFIERs, filter_units one of those _SYSTEMD_UNITs; the three
 * must all hold. num_total counts the entries written; num_failed the
 * entries that could not be read whole (a bad object: skipped; an item
 * skipped or undecodable: written without it). Everything on the
 * producer's loop.
 */
#include "probes_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "journald.h"
#include "tracing.h"
#include "pb_fields.h"

#define JD_LOG "journald"
/* Entries read per loop iteration; more are read at the next one, so a
 * backlog neither stalls the loop nor fills the SMB before a commit. */
#define JD_BATCH 1024
#define JD_SOCKET "/run/systemd/journal/socket"

/* The journal fields written, and their SystemdJournaldEvent fields. */
#define JD_KEYS(X)                                                      \
	X(MESSAGE, PB_F_SystemdJournaldEvent_message, false)            \
	X(PRIORITY, PB_F_SystemdJournaldEvent_prio, true)               \
	X(SYSLOG_IDENTIFIER, PB_F_SystemdJournaldEvent_tag, false)      \
	X(_PID, PB_F_SystemdJournaldEvent_pid, true)                    \
	X(_TID, PB_F_SystemdJournaldEvent_tid, true)                    \
	X(_UID, PB_F_SystemdJournaldEvent_uid, true)                    \
	X(_GID, PB_F_SystemdJournaldEvent_gid, true)                    \
	X(_COMM, PB_F_SystemdJournaldEvent_comm, false)                 \
	X(_EXE, PB_F_SystemdJournaldEvent_exe, false)                   \
	X(_SYSTEMD_UNIT, PB_F_SystemdJournaldEvent_systemd_unit, false) \
	X(_HOSTNAME, PB_F_SystemdJournaldEvent_hostname, false)         \
	X(_TRANSPORT, PB_F_SystemdJournaldEvent_transport, false)

enum jd_key {
#define JD_KEY_ENUM_(name, field, is_uint) JD_##name,
	JD_KEYS(JD_KEY_ENUM_)
#undef JD_KEY_ENUM_
	    JD_N_KEYS
};

static const struct {
	const char *name;
	uint8_t len, field;
	bool is_uint;
} jd_keys[JD_N_KEYS] = {
#define JD_KEY_INFO_(name, field, is_uint) {#name, sizeof #name - 1, field, is_uint},
    JD_KEYS(JD_KEY_INFO_)
#undef JD_KEY_INFO_
};

#define JD_UNDECODED_MESSAGE "[journal field not decoded: XZ-compressed or corrupt]"

struct probes_journald {
	struct loop *loop;
	struct tracing_writer *w;
	/* config */
	uint32_t min_prio; /* 7: no priority filter */
	VEC(char *) idents;
	VEC(char *) units;
	char **dirs;
	size_t n_dirs;
	bool default_dirs;
	/* running */
	bool started;
	struct journal_follow fl;
	bool fd_watched;
	uint64_t timer, more_timer;
	uint64_t num_total, num_failed;
	bool stats_dirty;
	int64_t mono_to_boot, real_to_boot;
	bool have_offsets;
	/* the entry being read */
	VEC(uint8_t) scratch;
	struct {
		uint32_t off, len;
		bool set;
	} val[JD_N_KEYS];
	struct journal_filter flt;
	struct journal_match match;
	bool undecoded;
};

/* ---- config ------------------------------------------------------------- */

static void parse_config(struct probes_journald *jd, const uint8_t *cfg, size_t len)
{
	struct pb_field f = {0}, c = {0};
	struct pb_reader r;
	jd->min_prio = 7;
	if (pb_find_field(cfg, len, PB_F_DataSourceConfig_journald_config, &f) != 1 ||
	    f.wire != PB_WIRE_LEN)
		return;
	pb_reader_init_field(&r, &f);
	while (pb_next(&r, &c)) {
		if (c.id == PB_F_SystemdJournaldConfig_min_prio && c.wire == PB_WIRE_VARINT) {
			/* 0 (unset) keeps everything, as the config documents. */
			jd->min_prio = c.val == 0 || c.val > 7 ? 7 : (uint32_t)c.val;
		} else if (c.id == PB_F_SystemdJournaldConfig_filter_identifiers &&
		           c.wire == PB_WIRE_LEN) {
			vec_push(&jd->idents, tb_strndup((const char *)c.data, c.len));
		} else if (c.id == PB_F_SystemdJournaldConfig_filter_units &&
		           c.wire == PB_WIRE_LEN) {
			vec_push(&jd->units, tb_strndup((const char *)c.data, c.len));
		}
	}
	if (pb_reader_error(&r))
		log_warn(JD_LOG, "malformed journald_config: %s", pb_strerror(pb_reader_error(&r)));
}

static void set_filter(struct probes_journald *jd)
{
	jd->flt.min_prio = jd->min_prio;
	jd->flt.idents = jd->idents.data;
	jd->flt.n_idents = jd->idents.len;
	jd->flt.units = jd->units.data;
	jd->flt.n_units = jd->units.len;
}

struct probes_journald *probes_journald_new(struct loop *l, struct tracing_writer *w,
                                            const uint8_t *cfg, size_t len, const char *const *dirs,
                                            size_t n_dirs)
{
	struct probes_journald *jd = tb_calloc(1, sizeof *jd);
	jd->loop = l;
	jd->w = w;
	jd->fl.inotify_fd = -1;
	parse_config(jd, cfg, len);
	set_filter(jd);
	jd->dirs = tb_calloc(JOURNAL_MAX_DIRS, sizeof *jd->dirs);
	if (dirs) {
		for (size_t i = 0; i < n_dirs && jd->n_dirs < JOURNAL_MAX_DIRS; i++)
			jd->dirs[jd->n_dirs++] = tb_strdup(dirs[i]);
	} else {
		jd->default_dirs = true;
		jd->n_dirs = probes_journal_default_dirs(jd->dirs, JOURNAL_MAX_DIRS);
	}
	return jd;
}

/* ---- one entry ---------------------------------------------------------- */

static int on_field(void *ctx, const uint8_t *d, size_t n, unsigned flags)
{
	struct probes_journald *jd = ctx;
	if (flags & JOURNAL_FIELD_UNDECODED) {
		jd->undecoded = true;
		return 0;
	}
	probes_journal_match_field(&jd->flt, &jd->match, d, n);
	const uint8_t *eq = memchr(d, '=', n < 64 ? n : 64);
	if (!eq)
		return 0;
	size_t klen = (size_t)(eq - d), vlen = n - klen - 1;
	const uint8_t *v = eq + 1;
	for (int k = 0; k < JD_N_KEYS; k++) {
		if (jd_keys[k].len != klen || memcmp(jd_keys[k].name, d, klen) != 0)
			continue;
		if (!jd->val[k].set) { /* a field given twice: its first value */
			jd->val[k].set = true;
			jd->val[k].off = (uint32_t)jd->scratch.len;
			jd->val[k].len = (uint32_t)vlen;
			vec_reserve(&jd->scratch, vlen);
			memcpy(jd->scratch.data + jd->scratch.len, v, vlen);
			jd->scratch.len += vlen;
		}
		break;
	}
	return 0;
}

/* A decimal uint32 ("42"), nothing else. */
static bool parse_u32(const uint8_t *s, size_t n, uint32_t *out)
{
	uint64_t v;
	if (n == 0 || n > 10 || tb_dec_prefix((const char *)s, n, &v) != n || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

static int64_t boot_ts(const struct probes_journald *jd, const struct journal_entry *e)
{
	int64_t ts;
	if (memcmp(e->boot_id, jd->fl.boot_id, 16) == 0 && e->monotonic_us <= INT64_MAX / 1000)
		ts = (int64_t)e->monotonic_us * 1000 + jd->mono_to_boot;
	else if (e->realtime_us <= INT64_MAX / 1000)
		ts = (int64_t)e->realtime_us * 1000 + jd->real_to_boot;
	else
		ts = 0;
	return ts < 0 ? 0 : ts;
}

static int on_entry(void *ctx, struct journal_file *jf, const struct journal_entry *e)
{
	struct probes_journald *jd = ctx;
	uint64_t bad_before = jf->stats.bad_items + jf->stats.undecoded;
	struct journal_entry full;

	vec_clear(&jd->scratch);
	memset(jd->val, 0, sizeof jd->val);
	probes_journal_match_begin(&jd->flt, &jd->match);
	jd->undecoded = false;
	if (probes_journal_file_read_entry(jf, e->offset, &full, on_field, jd) < 0) {
		jd->num_failed++;
		jd->stats_dirty = true;
		return 0;
	}
	if (!journal_match_ok(&jd->match))
		return 0;

	struct pb_writer *pw = tracing_writer_begin_packet(jd->w);
	pb_put_uint64(pw, PB_F_TracePacket_timestamp, (uint64_t)boot_ts(jd, &full));
	unsigned h = pb_begin_nested(pw, PB_F_TracePacket_journald_event);
	for (int k = 0; k < JD_N_KEYS; k++) {
		const uint8_t *v = jd->scratch.data + jd->val[k].off;
		uint32_t u;
		if (!jd->val[k].set || jd->val[k].len == 0)
			continue;
		if (!jd_keys[k].is_uint)
			pb_put_bytes(pw, jd_keys[k].field, v, jd->val[k].len);
		else if (parse_u32(v, jd->val[k].len, &u))
			pb_put_uint32(pw, jd_keys[k].field, u);
	}
	if (jd->undecoded && !jd->val[JD_MESSAGE].set)
		pb_put_string(pw, PB_F_SystemdJournaldEvent_message, JD_UNDECODED_MESSAGE);
	pb_end_nested(pw, h);
	tracing_writer_end_packet(jd->w);
	jd->num_total++;
	if (jf->stats.bad_items + jf->stats.undecoded != bad_before)
		jd->num_failed++;
	jd->stats_dirty = true;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

static void more_tick(struct loop *l, uint64_t id, void *ctx);

/* Read what is new (at most JD_BATCH entries unless all): the rest is read
 * from a timer that fires at once. */
/* The offsets from CLOCK_MONOTONIC and CLOCK_REALTIME to CLOCK_BOOTTIME.
 * Two clock reads are some ns apart, so an offset is kept until it is off
 * by more than JD_CLOCK_STEP_NS (a suspend, a realtime step): entries then
 * keep their spacing exactly. */
#define JD_CLOCK_STEP_NS 1000000
static void clock_offsets(struct probes_journald *jd)
{
	int64_t boot = tb_boot_ns();
	int64_t m = boot - tb_mono_ns(), r = boot - tb_realtime_ns();
	if (!jd->have_offsets || llabs(m - jd->mono_to_boot) > JD_CLOCK_STEP_NS)
		jd->mono_to_boot = m;
	if (!jd->have_offsets || llabs(r - jd->real_to_boot) > JD_CLOCK_STEP_NS)
		jd->real_to_boot = r;
	jd->have_offsets = true;
}

static void read_new(struct probes_journald *jd, bool rescan, bool all)
{
	clock_offsets(jd);
	size_t n = probes_journal_follow_poll(&jd->fl, rescan, all ? 0 : JD_BATCH, on_entry, jd);
	if (!all && n >= JD_BATCH && !jd->more_timer)
		jd->more_timer = loop_add_timer(jd->loop, 0, 0, more_tick, jd);
}

static void more_tick(struct loop *l, uint64_t id, void *ctx)
{
	struct probes_journald *jd = ctx;
	jd->more_timer = 0;
	read_new(jd, false, false);
}

static void on_readable(struct loop *l, int fd, uint32_t events, void *ctx)
{
	read_new(ctx, false, false);
}

static void on_rescan(struct loop *l, uint64_t id, void *ctx)
{
	read_new(ctx, true, false);
}

void probes_journald_start(struct probes_journald *jd)
{
	if (jd->started)
		return;
	jd->started = true;
	if (jd->n_dirs == 0)
		log_warn(JD_LOG,
		         "no journal folder (/run/log/journal/<machine-id>, "
		         "/var/log/journal/<machine-id>): no journal entries will be recorded");
	else if (jd->default_dirs && access(JD_SOCKET, F_OK) != 0)
		log_info(JD_LOG,
		         "systemd-journald is not running (no %s): recording what other "
		         "writers append to the journal files",
		         JD_SOCKET);
	probes_journal_follow_open(&jd->fl, (const char *const *)jd->dirs, jd->n_dirs);
	int fd = probes_journal_follow_fd(&jd->fl);
	if (fd >= 0 && loop_add_fd(jd->loop, fd, LOOP_IN, on_readable, jd) == 0)
		jd->fd_watched = true;
	jd->timer = loop_add_timer(jd->loop, JOURNAL_RESCAN_MS, JOURNAL_RESCAN_MS, on_rescan, jd);
	if (!jd->timer)
		log_warn(JD_LOG, "%s", loop_err(jd->loop)->msg);
}

static void write_counts(struct probes_journald *jd)
{
	struct journal_stats st;
	probes_journal_follow_stats(&jd->fl, &st);
	struct pb_writer *pw = tracing_writer_begin_packet(jd->w);
	pb_put_uint64(pw, PB_F_TracePacket_timestamp, (uint64_t)tb_boot_ns());
	unsigned h = pb_begin_nested(pw, PB_F_TracePacket_journald_event);
	pb_put_uint64(pw, PB_F_SystemdJournaldEvent_num_total, jd->num_total);
	pb_put_uint64(pw, PB_F_SystemdJournaldEvent_num_failed,
	              jd->num_failed + st.bad_entries + st.bad_chain);
	pb_end_nested(pw, h);
	tracing_writer_end_packet(jd->w);
	jd->stats_dirty = false;
}

void probes_journald_flush(struct probes_journald *jd)
{
	if (!jd->started)
		return;
	read_new(jd, true, true);
	write_counts(jd);
}

void probes_journald_counts(const struct probes_journald *jd, uint64_t *total, uint64_t *failed)
{
	struct journal_stats st;
	probes_journal_follow_stats(&jd->fl, &st);
	*total = jd->num_total;
	*failed = jd->num_failed + st.bad_entries + st.bad_chain;
}

void probes_journald_free(struct probes_journald *jd)
{
	if (!jd)
		return;
	if (jd->started) {
		/* What was appended since the last flush, and its counts. */
		read_new(jd, true, true);
		if (jd->stats_dirty)
			write_counts(jd);
		uint64_t total, failed;
		probes_journald_counts(jd, &total, &failed);
		log_debug(JD_LOG, "stopped: %llu entries written, %llu failed",
		          (unsigned long long)total, (unsigned long long)failed);
	}
	if (jd->fd_watched)
		loop_del_fd(jd->loop, probes_journal_follow_fd(&jd->fl));
	if (jd->timer)
		loop_cancel_timer(jd->loop, jd->timer);
	if (jd->more_timer)
		loop_cancel_timer(jd->loop, jd->more_timer);
	probes_journal_follow_close(&jd->fl);
	for (size_t i = 0; i < jd->idents.len; i++)
		tb_free(jd->idents.data[i]);
	for (size_t i = 0; i < jd->units.len; i++)
		tb_free(jd->units.data[i]);
	vec_release(&jd->idents);
	vec_release(&jd->units);
	for (size_t i = 0; i < jd->n_dirs; i++)
		tb_free(jd->dirs[i]);
	tb_free(jd->dirs);
	vec_release(&jd->scratch);
	tb_free(jd);
}
