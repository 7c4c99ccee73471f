/*
 * symfind.c: which file on this machine holds the symbols of a mapping.
 *
 * A candidate counts only when its GNU build id is the mapping's (or, for a
 * .gnu_debuglink target without one, when its CRC-32 is the link's). In
 * order, the first candidate with a .symtab wins; one with only .dynsym is
 * kept in case nothing better turns up:
 *
 *   PERFETTO_BINARY_PATH roots (colon-separated), as Perfetto's symbolizer:
 *     index mode (default): every ELF file under each root, by build id
 *     find mode (PERFETTO_SYMBOLIZER_MODE=find): ROOT/<mapping path>,
 *       ROOT/<basename>, ROOT/.build-id/xx/yyyy.debug
 *   this machine (unless no_system):
 *     the mapping's own path
 *     /usr/lib/debug/.build-id/xx/yyyy.debug
 *     the mapping file's .gnu_debuglink: DIR/LINK, DIR/.debug/LINK,
 *       /usr/lib/debug/DIR/LINK
 *
 *   .gnu_debuglink section: file name, NUL, pad to 4, u32 CRC-32 of the file
 */
#include "base.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define FIND_MAX_DEPTH 16
#define FIND_MAX_INDEXED 200000 /* files opened while indexing roots */
#define FIND_MAX_PATH 4096
#define SYM_DEBUGINFOD_TIMEOUT_MS 5000               /* per file, unless told */
#define SYM_DEBUGINFOD_MAX_BYTES ((uint64_t)1 << 31) /* one debug file */

struct index_entry {
	uint64_t hash; /* of the build id */
	char *path;
};

void sym_finder_init(struct sym_finder *f, const char *binary_path, bool find_mode, bool no_system)
{
	memset(f, 0, sizeof *f);
	f->find_mode = find_mode;
	f->no_system = no_system;
	f->debug_root = "/usr/lib/debug";
	for (const char *p = binary_path; p && *p;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n) {
			f->roots = tb_realloc(f->roots, (f->n_roots + 1) * sizeof *f->roots);
			f->roots[f->n_roots++] = tb_strndup(p, n);
		}
		p += n + (c != NULL);
	}
}

void sym_finder_release(struct sym_finder *f)
{
	for (size_t i = 0; i < f->n_roots; i++)
		tb_free(f->roots[i]);
	tb_free(f->roots);
	for (size_t i = 0; i < f->n_entries; i++)
		tb_free(f->entries[i].path);
	tb_free(f->entries);
	for (size_t i = 0; i < f->n_dbgd_urls; i++)
		tb_free(f->dbgd_urls[i]);
	tb_free(f->dbgd_urls);
	tb_free(f->dbgd_cache);
	memset(f, 0, sizeof *f);
}

void sym_found_release(struct sym_found *s)
{
	tb_free(s->path);
	sym_table_release(&s->syms);
	memset(s, 0, sizeof *s);
}

static void load_file(struct elf_file *e, const char *path, struct sym_found *out)
{
	struct elf_phdr ph;
	memset(out, 0, sizeof *out);
	sym_table_load(&out->syms, e);
	out->path = tb_strdup(path);
	if (elf_first_exec_load(e, &ph) == 0) {
		out->has_load = true;
		out->p_vaddr = ph.vaddr;
		out->p_align = ph.align;
	}
}

bool sym_try_file(const char *path, const uint8_t *id, size_t len, struct sym_found *out)
{
	struct elf_file e;
	uint8_t got[SYM_BUILD_ID_MAX];
	bool ok = false;
	if (elf_open_path(&e, path, NULL) < 0)
		return false;
	if (elf_build_id(&e, got, sizeof got) == len && memcmp(got, id, len) == 0) {
		load_file(&e, path, out);
		ok = out->syms.n > 0;
		if (!ok)
			sym_found_release(out);
	}
	elf_close(&e);
	return ok;
}

/* Keep cand as the result if it beats *best; true when the search is over. */
static bool consider(struct sym_found *best, struct sym_found *cand)
{
	if (!best->path || (cand->syms.has_symtab && !best->syms.has_symtab)) {
		sym_found_release(best);
		*best = *cand;
		memset(cand, 0, sizeof *cand);
	} else {
		sym_found_release(cand);
	}
	return best->syms.has_symtab;
}

static bool try_path(struct sym_found *best, const char *path, const uint8_t *id, size_t len)
{
	struct sym_found cand;
	if (!sym_try_file(path, id, len, &cand))
		return false;
	return consider(best, &cand);
}

/* "xx/yyyy.debug" for a build id. */
static void build_id_rel(char *out, size_t cap, const uint8_t *id, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	for (size_t i = 0; i < len && o + 8 < cap; i++) {
		out[o++] = hex[id[i] >> 4];
		out[o++] = hex[id[i] & 15];
		if (i == 0)
			out[o++] = '/';
	}
	memcpy(out + o, ".debug", 7);
}

/* Format a path; false when it does not fit (then it is not tried). */
static bool TB_PRINTF(3, 4) path_fmt(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < cap;
}

static bool join(char *out, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a);
	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	return path_fmt(out, cap, "%.*s/%s", (int)la, a, b);
}

/* ---- index mode ---------------------------------------------------------- */

static void index_file(struct sym_finder *f, const char *path)
{
	struct elf_file e;
	uint8_t id[SYM_BUILD_ID_MAX];
	size_t len;
	if (elf_open_path(&e, path, NULL) < 0)
		return;
	len = elf_build_id(&e, id, sizeof id);
	elf_close(&e);
	if (!len)
		return;
	if (f->n_entries == f->cap_entries) {
		f->cap_entries = f->cap_entries ? f->cap_entries * 2 : 64;
		f->entries = tb_realloc(f->entries, f->cap_entries * sizeof *f->entries);
	}
	f->entries[f->n_entries].hash = tb_hash_bytes(id, len, 0x1d);
	f->entries[f->n_entries++].path = tb_strdup(path);
}

static void index_dir(struct sym_finder *f, const char *dir, int depth, size_t *budget)
{
	DIR *d;
	struct dirent *de;
	char path[FIND_MAX_PATH];
	struct stat st;
	if (depth > FIND_MAX_DEPTH || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)) && *budget) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (!path_fmt(path, sizeof path, "%s/%s", dir, de->d_name))
			continue;
		if (lstat(path, &st) < 0)
			continue;
		/* Symlinked files count (.build-id trees are made of them); symlinked
		 * folders are not followed, so a loop cannot trap the walk. */
		if (S_ISLNK(st.st_mode) && (stat(path, &st) < 0 || !S_ISREG(st.st_mode)))
			continue;
		if (S_ISDIR(st.st_mode)) {
			index_dir(f, path, depth + 1, budget);
		} else if (S_ISREG(st.st_mode) && st.st_size >= 52) {
			(*budget)--;
			index_file(f, path);
		}
	}
	closedir(d);
}

static void find_in_roots(struct sym_finder *f, struct sym_found *best, const char *name,
                          const uint8_t *id, size_t len)
{
	char path[FIND_MAX_PATH], rel[2 * SYM_BUILD_ID_MAX + 16];
	build_id_rel(rel, sizeof rel, id, len);
	if (!f->find_mode) {
		if (!f->indexed) {
			size_t budget = FIND_MAX_INDEXED;
			for (size_t i = 0; i < f->n_roots; i++)
				index_dir(f, f->roots[i], 0, &budget);
			f->indexed = true;
		}
		/* Every file with this id (a stripped one and its .debug copy
		 * share it), in directory order, until one has a .symtab. */
		uint64_t h = tb_hash_bytes(id, len, 0x1d);
		for (size_t i = 0; i < f->n_entries; i++)
			if (f->entries[i].hash == h && try_path(best, f->entries[i].path, id, len))
				return;
		return;
	}
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (size_t i = 0; i < f->n_roots; i++) {
		char sub[sizeof rel + 16];
		if (*name && join(path, sizeof path, f->roots[i], name) &&
		    try_path(best, path, id, len))
			return;
		if (*base && join(path, sizeof path, f->roots[i], base) &&
		    try_path(best, path, id, len))
			return;
		if (path_fmt(sub, sizeof sub, ".build-id/%s", rel) &&
		    join(path, sizeof path, f->roots[i], sub) && try_path(best, path, id, len))
			return;
	}
}

/* ---- this machine ---------------------------------------------------------- */

static uint32_t file_crc32(const char *path, bool *ok)
{
	uint8_t buf[65536];
	uLong crc = crc32(0L, Z_NULL, 0);
	ssize_t n;
	int fd = tb_open_regular(path, 0, NULL, NULL);
	*ok = fd >= 0;
	if (fd < 0)
		return 0;
	while ((n = read(fd, buf, sizeof buf)) > 0)
		crc = crc32(crc, buf, (uInt)n);
	*ok = n == 0;
	tb_close(&fd);
	return (uint32_t)crc;
}

/* A debuglink target: the build id must match, or (no build id) the CRC. */
static bool try_debuglink(struct sym_found *best, const char *path, uint32_t crc, const uint8_t *id,
                          size_t len)
{
	struct elf_file e;
	uint8_t got[SYM_BUILD_ID_MAX];
	bool match, ok;
	struct sym_found cand;
	if (elf_open_path(&e, path, NULL) < 0)
		return false;
	size_t glen = elf_build_id(&e, got, sizeof got);
	match =
	    glen ? glen == len && memcmp(got, id, len) == 0 : file_crc32(path, &ok) == crc && ok;
	if (match) {
		load_file(&e, path, &cand);
		elf_close(&e);
		if (cand.syms.n == 0) {
			sym_found_release(&cand);
			return false;
		}
		return consider(best, &cand);
	}
	elf_close(&e);
	return false;
}

static void find_debuglink(struct sym_finder *f, struct sym_found *best, const char *name,
                           const uint8_t *id, size_t len)
{
	struct elf_file e;
	struct elf_shdr sh;
	char link[256], path[FIND_MAX_PATH], dir[FIND_MAX_PATH];
	uint8_t crcb[4];
	uint8_t got[SYM_BUILD_ID_MAX];
	if (elf_open_path(&e, name, NULL) < 0)
		return;
	bool same = elf_build_id(&e, got, sizeof got) == len && memcmp(got, id, len) == 0;
	bool have = same && elf_section_by_name(&e, ".gnu_debuglink", &sh) == 0 && sh.size > 5 &&
	            sh.size <= sizeof link + 8 &&
	            elf_read(&e, sh.offset, link,
	                     (size_t)(sh.size < sizeof link ? sh.size : sizeof link)) == 0;
	size_t nlen = have ? strnlen(link, sizeof link) : 0;
	size_t crc_off = (nlen + 4) & ~(size_t)3;
	have = have && nlen > 0 && nlen < sizeof link && !memchr(link, '/', nlen) &&
	       crc_off + 4 <= sh.size && elf_read(&e, sh.offset + crc_off, crcb, 4) == 0;
	uint32_t crc = have ? elf_u32(&e, crcb) : 0;
	elf_close(&e);
	if (!have)
		return;
	const char *slash = strrchr(name, '/');
	if (!path_fmt(dir, sizeof dir, "%.*s", slash ? (int)(slash - name) : 0, name))
		return;
	if (path_fmt(path, sizeof path, "%s/%s", dir, link) && strcmp(path, name) != 0 &&
	    try_debuglink(best, path, crc, id, len))
		return;
	if (path_fmt(path, sizeof path, "%s/.debug/%s", dir, link) &&
	    try_debuglink(best, path, crc, id, len))
		return;
	if (path_fmt(path, sizeof path, "%s%s/%s", f->debug_root, dir, link))
		try_debuglink(best, path, crc, id, len);
}

/* ---- debuginfod ------------------------------------------------------------ */

void sym_finder_use_debuginfod(struct sym_finder *f, const char *cache, const char *urls,
                               int timeout_ms, int64_t budget_ms)
{
	char dir[FIND_MAX_PATH];
	const char *env;
	if (!cache || !*cache) {
		if ((env = getenv("DEBUGINFOD_CACHE_PATH")) && *env)
			path_fmt(dir, sizeof dir, "%s", env);
		else if ((env = getenv("XDG_CACHE_HOME")) && *env)
			path_fmt(dir, sizeof dir, "%s/debuginfod_client", env);
		else if ((env = getenv("HOME")) && *env)
			path_fmt(dir, sizeof dir, "%s/.cache/debuginfod_client", env);
		else
			dir[0] = 0;
		cache = dir;
	}
	tb_free(f->dbgd_cache);
	f->dbgd_cache = *cache ? tb_strdup(cache) : NULL;
	for (const char *p = urls; p && *p;) {
		size_t n = strcspn(p, " \t\n");
		if (n && n < FIND_MAX_PATH) {
			f->dbgd_urls =
			    tb_realloc(f->dbgd_urls, (f->n_dbgd_urls + 1) * sizeof(char *));
			f->dbgd_urls[f->n_dbgd_urls++] = tb_strndup(p, n);
		}
		p += n;
		p += strspn(p, " \t\n");
	}
	f->dbgd_timeout_ms = timeout_ms > 0 ? timeout_ms : SYM_DEBUGINFOD_TIMEOUT_MS;
	f->dbgd_deadline_ns = budget_ms > 0 ? tb_mono_ns() + budget_ms * 1000000 : 0;
}

struct fetch {
	int fd;
	uint64_t bytes;
	int64_t deadline_ns;
};

static int fetch_sink(void *ctx, const uint8_t *p, size_t n)
{
	struct fetch *x = ctx;
	if (tb_mono_ns() > x->deadline_ns)
		return -ETIMEDOUT;
	if ((x->bytes += n) > SYM_DEBUGINFOD_MAX_BYTES)
		return -EFBIG;
	return tb_write_all(x->fd, p, n);
}

/* mkdir -p of the cache folder for one build id. */
static bool make_dirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		bool ok = mkdir(path, 0755) == 0 || errno == EEXIST;
		*p = '/';
		if (!ok)
			return false;
	}
	return mkdir(path, 0755) == 0 || errno == EEXIST;
}

/* GET URL/buildid/HEX/debuginfo from each server into CACHE/HEX/debuginfo
 * (written beside it, renamed into place when complete). True when one
 * server had it. */
static bool dbgd_fetch(struct sym_finder *f, const char *hex, const char *dest)
{
	char dir[FIND_MAX_PATH], url[FIND_MAX_PATH + 128], tmp[FIND_MAX_PATH + 16];
	struct http_opts o = {f->dbgd_timeout_ms, f->dbgd_timeout_ms};
	bool not_found = true, timed_out = false;

	if (!f->dbgd_cache || !path_fmt(dir, sizeof dir, "%s/%s", f->dbgd_cache, hex) ||
	    !make_dirs(dir)) {
		f->dbgd.failed++;
		snprintf(f->dbgd_error, sizeof f->dbgd_error,
		         "cannot create the cache folder '%.400s'",
		         f->dbgd_cache ? f->dbgd_cache : "(none)");
		return false;
	}
	for (size_t i = 0; i < f->n_dbgd_urls; i++) {
		struct tb_err err = {0};
		const char *u = f->dbgd_urls[i];
		size_t ul = strlen(u);
		while (ul && u[ul - 1] == '/')
			ul--;
		if (!path_fmt(url, sizeof url, "%.*s/buildid/%s/debuginfo", (int)ul, u, hex))
			continue;
		struct fetch x = {.fd = tb_create_beside(dest, 0644, tmp, sizeof tmp, &err),
		                  .deadline_ns =
		                      tb_mono_ns() + (int64_t)f->dbgd_timeout_ms * 1000000};
		if (x.fd < 0) {
			not_found = false;
			snprintf(f->dbgd_error, sizeof f->dbgd_error, "%s", err.msg);
			break;
		}
		int rc = http_get(url, &o, fetch_sink, &x, &err);
		tb_close(&x.fd);
		if (rc == 0 && rename(tmp, dest) == 0) {
			f->dbgd.fetched++;
			return true;
		}
		unlink(tmp);
		if (rc != -ENOENT)
			not_found = false;
		if (rc == -ETIMEDOUT)
			timed_out = true;
		if (rc == -ETIMEDOUT && !tb_err_is_set(&err))
			snprintf(f->dbgd_error, sizeof f->dbgd_error,
			         "'%.400s' sent nothing within %d ms", url, f->dbgd_timeout_ms);
		else if (tb_err_is_set(&err))
			snprintf(f->dbgd_error, sizeof f->dbgd_error, "%s", err.msg);
	}
	if (not_found)
		f->dbgd.not_found++;
	else if (timed_out)
		f->dbgd.timed_out++;
	else
		f->dbgd.failed++;
	return false;
}

/* The debuginfod client cache, then the servers. */
static void find_debuginfod(struct sym_finder *f, struct sym_found *best, const uint8_t *id,
                            size_t len)
{
	static const char hexd[] = "0123456789abcdef";
	char hex[2 * SYM_BUILD_ID_MAX + 1], path[FIND_MAX_PATH];
	for (size_t i = 0; i < len; i++)
		hex[2 * i] = hexd[id[i] >> 4], hex[2 * i + 1] = hexd[id[i] & 15];
	hex[2 * len] = 0;
	if (!f->dbgd_cache)
		return;
	if (path_fmt(path, sizeof path, "%s/%s/debuginfo", f->dbgd_cache, hex) &&
	    try_path(best, path, id, len)) {
		f->dbgd.cached++;
		return;
	}
	if (!best->syms.has_symtab &&
	    path_fmt(path, sizeof path, "%s/%s/executable", f->dbgd_cache, hex) &&
	    try_path(best, path, id, len)) {
		f->dbgd.cached++;
		return;
	}
	if (best->syms.has_symtab || !f->n_dbgd_urls)
		return;
	if (f->dbgd_deadline_ns && tb_mono_ns() > f->dbgd_deadline_ns) {
		f->dbgd.skipped++;
		return;
	}
	if (path_fmt(path, sizeof path, "%s/%s/debuginfo", f->dbgd_cache, hex) &&
	    dbgd_fetch(f, hex, path))
		try_path(best, path, id, len);
}

int sym_finder_find(struct sym_finder *f, const char *name, const uint8_t *id, size_t len,
                    struct sym_found *out)
{
	char path[FIND_MAX_PATH], rel[2 * SYM_BUILD_ID_MAX + 16];
	memset(out, 0, sizeof *out);
	if (len == 0 || len > SYM_BUILD_ID_MAX)
		return -ENOENT;
	if (f->n_roots)
		find_in_roots(f, out, name, id, len);
	if (!f->no_system && !out->syms.has_symtab) {
		bool done = name[0] == '/' && try_path(out, name, id, len);
		build_id_rel(rel, sizeof rel, id, len);
		done =
		    done || (path_fmt(path, sizeof path, "%s/.build-id/%s", f->debug_root, rel) &&
		             try_path(out, path, id, len));
		if (!done && name[0] == '/')
			find_debuglink(f, out, name, id, len);
	}
	if (!out->syms.has_symtab && (f->dbgd_cache || f->n_dbgd_urls))
		find_debuginfod(f, out, id, len);
	return out->path ? 0 : -ENOENT;
}
