/*
 * Replays a fuzz target's corpus without libFuzzer, so every CI run (gcc,
 * ASan+UBSan) re-checks every input a campaign ever kept. Arguments are files
 * or folders of files; each is passed whole to LLVMFuzzerTestOneInput.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open '%s'\n", path);
		return 1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	size_t n;
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf)
		return 1;
	/* An exact-size copy so ASan catches reads past the end. */
	uint8_t *exact = malloc(len ? len : 1);
	memcpy(exact, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0, bad = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: cannot stat '%s'\n", argv[i]);
			bad++;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad += run_file(argv[i]);
			count++;
			continue;
		}
		struct dirent **names;
		int n = scandir(argv[i], &names, NULL, alphasort);
		for (int j = 0; j < n; j++) {
			if (names[j]->d_name[0] != '.') {
				char path[4096];
				snprintf(path, sizeof path, "%s/%s", argv[i], names[j]->d_name);
				bad += run_file(path);
				count++;
			}
			free(names[j]);
		}
		free(names);
	}
	fprintf(stderr, "replay: %d inputs\n", count);
	return bad ? 1 : 0;
}
