/*
 * `util merge -o OUT [--manifest M] TRACE...`: pack traces into one TAR
 * that the trace processor opens as one trace, each member named after its
 * input's base name, the manifest first as perfetto_manifest.json (the
 * archive is traceconv's, components/traceconv/tar.c). Then, unless
 * --no-validate, the archive is loaded once and the events its members
 * could not place on the shared timeline are counted (clock sync
 * failures, negative timestamps): a warning, or with --strict an error.
 */
#include "shell.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sqlite3.h"
#include "traceconv.h"

/* Load the archive and count the events that could not be placed. */
static int validate(const char *path, bool strict)
{
	const struct shell_opts none = {0};
	struct shell_config sc;
	int status = 1;
	if (tp_shell_config_build(&none, &sc) < 0)
		goto out;
	struct tp *tp = tp_shell_load(&none, &sc, path, NULL);
	if (!tp) {
		tp_shell_error("merge: the archive does not load");
		goto out;
	}
	sqlite3_stmt *st = NULL;
	long long dropped = 0;
	if (sqlite3_prepare_v2(
	        tp_db(tp),
	        "SELECT COALESCE(SUM(value), 0) FROM stats WHERE name IN "
	        "('clock_sync_unrelatable_clock_domains', 'clock_sync_failure_no_path', "
	        "'clock_sync_failure', 'trace_sorter_negative_timestamp_dropped')",
	        -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		dropped = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	tp_free(tp);
	if (dropped == 0) {
		printf("Validation: all traces line up on the shared timeline.\n");
		status = 0;
	} else if (strict) {
		tp_shell_error(
		    "merge: %lld events would be dropped when this archive is opened: they "
		    "cannot be placed on the shared timeline. Adjust the clocks in the "
		    "manifest.",
		    dropped);
	} else {
		fprintf(
		    stderr,
		    "Warning: %lld events would be dropped when this archive is opened: they "
		    "cannot be placed on the shared timeline. Adjust the clocks in the manifest.\n",
		    dropped);
		status = 0;
	}
out:
	tp_shell_config_release(&sc);
	return status;
}

int tp_shell_util_merge(struct shell_opts *o)
{
	size_t n = o->pos.len - 1;
	const char *const *inputs = o->pos.data + 1;
	if (n == 0) {
		tp_shell_error("merge: at least one input trace file is required.");
		return 1;
	}
	if (!o->output) {
		tp_shell_error("merge: an output path is required (-o FILE).");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *bi = strrchr(inputs[i], '/') ? strrchr(inputs[i], '/') + 1 : inputs[i];
		for (size_t j = 0; j < i; j++) {
			const char *bj =
			    strrchr(inputs[j], '/') ? strrchr(inputs[j], '/') + 1 : inputs[j];
			if (strcmp(bi, bj) == 0) {
				tp_shell_error(
				    "merge: two input files share the name '%s'; archive members "
				    "must be unique. Rename one of the files.",
				    bi);
				return 1;
			}
		}
		if (strlen(bi) >= 100) {
			tp_shell_error("merge: the name '%s' is too long for an archive member",
			               bi);
			return 1;
		}
	}
	char *manifest = NULL;
	size_t mlen = 0;
	if (o->manifest) {
		if (!(manifest = tp_shell_read_file(o->manifest, &mlen))) {
			tp_shell_error("merge: cannot read manifest file '%s'.", o->manifest);
			return 1;
		}
		if (!strstr(manifest, "\"perfetto_manifest\"")) {
			tp_shell_error("merge: the manifest must be a JSON object with a top-level "
			               "perfetto_manifest key.");
			tb_free(manifest);
			return 1;
		}
	}
	tb_free(manifest);
	const char **args = tb_calloc(n + 8, sizeof *args);
	int k = 0;
	args[k++] = "traceconv";
	args[k++] = "merge";
	args[k++] = "-o";
	args[k++] = o->output;
	if (o->manifest) {
		args[k++] = "--manifest";
		args[k++] = o->manifest;
	}
	for (size_t i = 0; i < n; i++)
		args[k++] = inputs[i];
	int rc = traceconv_main(k, (char **)args);
	tb_free(args);
	if (rc != 0)
		return 1;
	printf("Wrote %s (%zu trace%s%s).\n", o->output, n, n == 1 ? "" : "s",
	       o->manifest ? " plus manifest" : "");
	fflush(stdout);
	return o->no_validate ? 0 : validate(o->output, o->strict);
}
