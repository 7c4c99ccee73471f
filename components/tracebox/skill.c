/*
 * `tracebox skill`: the agent skill that ships inside the binary. SKILL.md
 * beside this file (Agent Skills format: YAML front matter with name and
 * description, then the instructions) teaches a coding agent which capture
 * answers which question, the exact commands, the queries and how to keep
 * their output small. build.sh embeds it gzip'd as
 * out/gen/tracebox_SKILL_md_gz.h (12 KB of text in 5 KB), so the one file an
 * agent is given carries its own instructions:
 *
 *   tracebox skill                 print SKILL.md
 *   tracebox skill --install DIR   write DIR/tracebox/SKILL.md (the layout
 *                                  agents load skills from, e.g.
 *                                  ~/.claude/skills), then print its path
 *
 * tests/root/t3200-skill.sh runs every command and query of the text on a
 * capture it makes, so the skill cannot drift from the binary.
 */
#include "tracebox.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "tracebox_SKILL_md_gz.h"

/* The skill's text, inflated (tb_malloc'd; tracebox_SKILL_md_len bytes). */
static char *skill_text(void)
{
	char *out = tb_malloc(tracebox_SKILL_md_len);
	tb_embed_inflate(tracebox_SKILL_md_gz, sizeof tracebox_SKILL_md_gz, out,
	                 tracebox_SKILL_md_len);
	return out;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: tracebox skill [--install DIR]\n"
	           "Print the agent skill (SKILL.md, Agent Skills format) that teaches coding\n"
	           "agents to record and query traces with tracebox; --install DIR writes it as\n"
	           "DIR/tracebox/SKILL.md.\n");
}

/* mkdir -p path (mode 0755 for what it makes). */
static int make_dirs(char *path, struct tb_err *err)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;
		*p = '\0';
		int r = mkdir(path, 0755);
		*p = c;
		if (r != 0 && errno != EEXIST)
			return tb_err_errno(err, -errno, "cannot create '%.*s'", (int)(p - path),
			                    path);
		if (c == '\0')
			return 0;
	}
}

/* Write the skill to DIR/tracebox/SKILL.md through a temporary file renamed
 * into place, so an agent never loads half a skill. */
static int install(const char *dir, struct tb_err *err)
{
	char path[4096], tmp[4200], *text = NULL;
	int fd = -1, rc = -1;
	if (snprintf(path, sizeof path, "%s/tracebox", dir) >= (int)sizeof path)
		return tb_err_set(err, -ENAMETOOLONG, "folder name too long");
	if (make_dirs(path, err) < 0)
		return -1;
	size_t n = strlen(path);
	snprintf(path + n, sizeof path - n, "/SKILL.md");
	snprintf(tmp, sizeof tmp, "%s.tmp-%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		tb_err_errno(err, -errno, "cannot create '%s'", tmp);
		goto out;
	}
	text = skill_text();
	if (tb_write_all(fd, text, tracebox_SKILL_md_len) < 0 || fsync(fd) != 0) {
		tb_err_errno(err, -errno, "cannot write '%s'", tmp);
		goto out;
	}
	if (close(fd) != 0) {
		fd = -1;
		tb_err_errno(err, -errno, "cannot write '%s'", tmp);
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		tb_err_errno(err, -errno, "cannot rename '%s' to '%s'", tmp, path);
		goto out;
	}
	printf("%s\n", path);
	rc = 0;
out:
	tb_free(text);
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	return rc;
}

int tracebox_skill_main(int argc, char **argv)
{
	struct tb_err err = {0};
	if (argc == 1) {
		char *text = skill_text();
		size_t n = fwrite(text, 1, tracebox_SKILL_md_len, stdout);
		tb_free(text);
		return n == tracebox_SKILL_md_len && fflush(stdout) == 0 ? 0 : 1;
	}
	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "--install") == 0) {
		if (install(argv[2], &err) == 0)
			return 0;
		fprintf(stderr, "tracebox skill: %s\n", err.msg);
		return 1;
	}
	fprintf(stderr, "tracebox skill: unknown arguments (try --help)\n");
	usage(stderr);
	return 2;
}
