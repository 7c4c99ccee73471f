/*
 * The journal folders, followed: what sd_journal_open(LOCAL_ONLY) plus
 * seek_tail and inotify give libsystemd's users, for files read by file.c.
 *
 *   start    every *.journal / *.journal~ file in the folders is opened and
 *            its cursor put at its tail; archived files are closed at once
 *            (nothing is appended to them), but remembered by (dev, inode)
 *   news     inotify on each folder: a created or moved-in name makes a
 *            rescan; a write (journald truncates a file to its own size
 *            after writing, which inotify reports) makes a read. Every
 *            JOURNAL_RESCAN_MS the caller also asks for a rescan, for
 *            folders that appear later (/var/log/journal once journald
 *            flushes) and file systems without inotify.
 *   deleted  a file read to its end that is offline and has no name left
 *            (journald's runtime journal after its flush to /var) is closed
 *   rotation journald renames system.journal to system@...journal (same
 *            inode: the cursor goes on; once archived and read to its end
 *            the file is closed) and creates a new system.journal, which is
 *            read from its first entry. Entries in a new file that are older
 *            than the start (journald's /run -> /var flush copies old
 *            entries) are skipped: they were not written during the capture.
 */
#include "journald.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_LOG "journald"

/* 32 hex digits into 16 bytes (a machine or boot id with or without
 * dashes, as /etc/machine-id and /proc/sys/kernel/random/boot_id hold
 * them). */
static bool parse_id128(const char *s, size_t n, uint8_t out[16])
{
	size_t k = 0;
	for (size_t i = 0; i < n && k < 32; i++) {
		int v;
		if (s[i] == '-')
			continue;
		if ((v = tb_hex_digit(s[i])) < 0)
			break;
		if (k % 2 == 0)
			out[k / 2] = (uint8_t)(v << 4);
		else
			out[k / 2] |= (uint8_t)v;
		k++;
	}
	return k == 32;
}

static bool read_id128(const char *path, uint8_t out[16])
{
	char *buf = NULL;
	size_t len = 0;
	bool ok = tb_read_file(path, &buf, &len, 128, NULL) == 0 && parse_id128(buf, len, out);
	tb_free(buf);
	return ok;
}

static bool is_machine_id(const char *name)
{
	size_t n = strlen(name);
	if (n != 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return false;
	return true;
}

size_t probes_journal_default_dirs(char **dirs, size_t max)
{
	static const char *const roots[] = {"/run/log/journal", "/var/log/journal"};
	uint8_t id[16];
	char buf[320];
	size_t n = 0;

	if (read_id128("/etc/machine-id", id)) {
		for (size_t r = 0; r < TB_ARRAY_SIZE(roots) && n < max; r++) {
			int len = snprintf(buf, sizeof buf, "%s/", roots[r]);
			for (int i = 0; i < 16; i++)
				len += snprintf(buf + len, sizeof buf - (size_t)len, "%02x", id[i]);
			dirs[n++] = tb_strdup(buf);
		}
		return n;
	}
	for (size_t r = 0; r < TB_ARRAY_SIZE(roots); r++) {
		DIR *d = opendir(roots[r]);
		struct dirent *de;
		while (d && (de = readdir(d)) && n < max) {
			if (!is_machine_id(de->d_name))
				continue;
			snprintf(buf, sizeof buf, "%s/%s", roots[r], de->d_name);
			dirs[n++] = tb_strdup(buf);
		}
		if (d)
			closedir(d);
	}
	return n;
}

static bool journal_name(const char *name)
{
	size_t n = strlen(name);
	return (n > 8 && strcmp(name + n - 8, ".journal") == 0) ||
	       (n > 9 && strcmp(name + n - 9, ".journal~") == 0);
}

static uint64_t file_key(uint64_t dev, uint64_t ino)
{
	return tb_hash_u64(dev * 0x9e3779b97f4a7c15ull ^ ino);
}

/* What `seen` holds for a file: FOLLOWED while it is open here (its inode
 * cannot be reused then), else a fingerprint of its size and times when it
 * was put aside: an archived file never changes, so a different
 * fingerprint means the inode now holds another file. */
#define FOLLOWED 1
#define UNREADABLE 2 /* permission denied: not tried again */
static uint64_t fingerprint(const struct stat *st)
{
	uint64_t h = tb_hash_u64((uint64_t)st->st_size ^
	                         tb_hash_u64((uint64_t)st->st_mtim.tv_sec * 1000000000ull +
	                                     (uint64_t)st->st_mtim.tv_nsec) ^
	                         tb_hash_u64((uint64_t)st->st_ctim.tv_sec * 1000000000ull +
	                                     (uint64_t)st->st_ctim.tv_nsec + 1));
	return h <= UNREADABLE ? h + UNREADABLE : h;
}

/* Put a closed file aside in `seen`. */
static void set_aside(struct journal_follow *f, struct journal_file *jf)
{
	struct stat st;
	if (jf->fd >= 0 && fstat(jf->fd, &st) == 0)
		hmap_put(&f->seen, file_key(jf->dev, jf->ino), fingerprint(&st));
	else
		hmap_del(&f->seen, file_key(jf->dev, jf->ino), NULL);
}

static void add_watch(struct journal_follow *f, size_t i)
{
	if (f->inotify_fd < 0 || f->wd[i] >= 0)
		return;
	f->wd[i] = inotify_add_watch(f->inotify_fd, f->dirs[i],
	                             IN_CREATE | IN_MOVED_TO | IN_MODIFY | IN_DELETE_SELF |
	                                 IN_MOVE_SELF | IN_ONLYDIR);
	if (f->wd[i] < 0 && errno != ENOENT && errno != ENOTDIR)
		log_warn(JOURNAL_LOG, "cannot watch '%s': %s", f->dirs[i], strerror(errno));
}

/* Look at one name in folder i: a journal file not seen before is opened
 * and followed (at its tail at the start, else from its first entry). */
static void consider(struct journal_follow *f, size_t i, int dfd, const char *name, bool at_start)
{
	struct stat st;
	char path[4096];
	if (!journal_name(name) || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
	    !S_ISREG(st.st_mode))
		return;
	uint64_t key = file_key((uint64_t)st.st_dev, (uint64_t)st.st_ino), val;
	if (hmap_get(&f->seen, key, &val) &&
	    (val == FOLLOWED || val == UNREADABLE || val == fingerprint(&st)))
		return;
	if (f->files.len >= JOURNAL_MAX_FILES) {
		if (!f->skipped_files_logged)
			log_warn(JOURNAL_LOG,
			         "more than %d journal files open; '%s' and others are skipped",
			         JOURNAL_MAX_FILES, name);
		f->skipped_files_logged = true;
		return;
	}
	if (snprintf(path, sizeof path, "%s/%s", f->dirs[i], name) >= (int)sizeof path)
		return;
	struct probes_journal_follow_file *ff = tb_calloc(1, sizeof *ff);
	if (probes_journal_file_open(&ff->jf, path) < 0) {
		/* A file being created has no header yet: look again later.
		 * Anything else is not a journal we can read: once. */
		if (ff->jf.err.code == -EACCES || ff->jf.err.code == -EPERM) {
			hmap_put(&f->seen, key, UNREADABLE);
			log_warn(JOURNAL_LOG,
			         "%s (journal files are readable by root and the "
			         "systemd-journal group)",
			         ff->jf.err.msg);
		} else if (st.st_size >= 4096) {
			hmap_put(&f->seen, key, fingerprint(&st));
			log_warn(JOURNAL_LOG, "%s", ff->jf.err.msg);
		}
		probes_journal_file_close(&ff->jf);
		tb_free(ff);
		return;
	}
	hmap_put(&f->seen, key, FOLLOWED);
	if (at_start) {
		if (ff->jf.h.state == JOURNAL_ARCHIVED) {
			set_aside(f, &ff->jf); /* nothing new will be written to it */
			probes_journal_file_close(&ff->jf);
			tb_free(ff);
			return;
		}
		if (probes_journal_file_seek_tail(&ff->jf) < 0)
			log_warn(JOURNAL_LOG, "%s", ff->jf.err.msg);
	} else {
		ff->from_start = true;
		log_debug(JOURNAL_LOG, "following new journal file '%s'", path);
	}
	vec_push(&f->files, ff);
}

static void scan(struct journal_follow *f, bool at_start)
{
	for (size_t i = 0; i < f->n_dirs; i++) {
		add_watch(f, i);
		int dfd = open(f->dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		DIR *d = fdopendir(dfd);
		if (!d) {
			close(dfd);
			continue;
		}
		struct dirent *de;
		while ((de = readdir(d)))
			consider(f, i, dirfd(d), de->d_name, at_start);
		closedir(d);
	}
}

void probes_journal_follow_open(struct journal_follow *f, const char *const *dirs, size_t n)
{
	for (size_t i = 0; i < n && f->n_dirs < JOURNAL_MAX_DIRS; i++) {
		f->wd[f->n_dirs] = -1;
		f->dirs[f->n_dirs++] = tb_strdup(dirs[i]);
	}
	hmap_init(&f->seen);
	f->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (f->inotify_fd < 0)
		log_warn(JOURNAL_LOG, "no inotify (%s): journal files are read every %d ms",
		         strerror(errno), JOURNAL_RESCAN_MS);
	if (!read_id128("/proc/sys/kernel/random/boot_id", f->boot_id))
		memset(f->boot_id, 0, sizeof f->boot_id);
	f->start_mono_us = tb_mono_ns() / 1000;
	f->start_real_us = tb_realtime_ns() / 1000;
	scan(f, true);
}

int probes_journal_follow_fd(const struct journal_follow *f)
{
	return f->inotify_fd;
}

/* Read pending inotify events. True when a folder may hold a new file. */
static bool drain_inotify(struct journal_follow *f)
{
	bool rescan = false;
	union {
		struct inotify_event ev;
		char buf[4096];
	} u;
	if (f->inotify_fd < 0)
		return false;
	for (;;) {
		ssize_t n = read(f->inotify_fd, u.buf, sizeof u.buf);
		if (n <= 0)
			break;
		for (ssize_t off = 0; off + (ssize_t)sizeof(struct inotify_event) <= n;) {
			struct inotify_event ev;
			memcpy(&ev, u.buf + off, sizeof ev);
			if (ev.mask & (IN_CREATE | IN_MOVED_TO | IN_Q_OVERFLOW))
				rescan = true;
			if (ev.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
				for (size_t i = 0; i < f->n_dirs; i++)
					if (f->wd[i] == ev.wd)
						f->wd[i] = -1;
				rescan = true;
			}
			off += (ssize_t)sizeof ev + (ssize_t)ev.len;
		}
	}
	return rescan;
}

static void add_stats(struct journal_stats *to, const struct journal_stats *s)
{
	to->entries += s->entries;
	to->bad_entries += s->bad_entries;
	to->bad_items += s->bad_items;
	to->undecoded += s->undecoded;
	to->truncated += s->truncated;
	to->bad_chain += s->bad_chain;
}

static bool before_start(const struct journal_follow *f, const struct journal_entry *e)
{
	if (memcmp(e->boot_id, f->boot_id, 16) == 0)
		return (int64_t)e->monotonic_us < f->start_mono_us;
	return (int64_t)e->realtime_us < f->start_real_us;
}

/* Read file ff's new entries (at most max, 0: all). Returns how many were
 * given to fn; *finished when the file is done with. */
static size_t read_file(struct journal_follow *f, struct probes_journal_follow_file *ff, size_t max,
                        journal_entry_fn fn, void *ctx, bool *finished)
{
	struct journal_file *jf = &ff->jf;
	size_t count = 0;
	uint64_t off;
	int r = 0;
	*finished = false;
	if (probes_journal_file_refresh(jf) < 0) {
		log_warn(JOURNAL_LOG, "%s", jf->err.msg);
		*finished = true;
		return 0;
	}
	while (max == 0 || count < max) {
		struct journal_entry e;
		if ((r = probes_journal_file_next(jf, &off)) <= 0)
			break;
		if (probes_journal_file_read_entry(jf, off, &e, NULL, NULL) < 0)
			continue;
		if (ff->from_start && before_start(f, &e)) {
			f->old_entries_skipped++;
			continue;
		}
		jf->stats.entries++;
		count++;
		if (fn(ctx, jf, &e) != 0)
			break;
	}
	if (r < 0) {
		log_warn(JOURNAL_LOG, "%s", jf->err.msg);
		*finished = true;
	} else if (jf->consumed >= jf->h.n_entries && jf->h.state != JOURNAL_ONLINE) {
		/* Archived, or closed and deleted (journald removes the runtime
		 * journal once it flushed it to /var): nothing more will come. */
		struct stat st;
		*finished = jf->h.state == JOURNAL_ARCHIVED ||
		            (fstat(jf->fd, &st) == 0 && st.st_nlink == 0);
	}
	return count;
}

size_t probes_journal_follow_poll(struct journal_follow *f, bool rescan, size_t max,
                                  journal_entry_fn fn, void *ctx)
{
	size_t count = 0;
	if (drain_inotify(f) || rescan)
		scan(f, false);
	for (size_t i = 0; i < f->files.len && (max == 0 || count < max);) {
		struct probes_journal_follow_file *ff = f->files.data[i];
		bool finished;
		count += read_file(f, ff, max ? max - count : 0, fn, ctx, &finished);
		if (!finished) {
			i++;
			continue;
		}
		add_stats(&f->closed_stats, &ff->jf.stats);
		set_aside(f, &ff->jf);
		probes_journal_file_close(&ff->jf);
		tb_free(ff);
		f->files.data[i] = *vec_last(&f->files);
		f->files.len--;
	}
	return count;
}

void probes_journal_follow_stats(const struct journal_follow *f, struct journal_stats *out)
{
	*out = f->closed_stats;
	for (size_t i = 0; i < f->files.len; i++)
		add_stats(out, &f->files.data[i]->jf.stats);
}

void probes_journal_follow_close(struct journal_follow *f)
{
	for (size_t i = 0; i < f->files.len; i++) {
		probes_journal_file_close(&f->files.data[i]->jf);
		tb_free(f->files.data[i]);
	}
	vec_release(&f->files);
	for (size_t i = 0; i < f->n_dirs; i++)
		tb_free(f->dirs[i]);
	if (f->inotify_fd >= 0)
		close(f->inotify_fd);
	hmap_release(&f->seen);
	memset(f, 0, sizeof *f);
	f->inotify_fd = -1;
}
