/*
 * convert, util and bundle: the shell's faces of traceconv. Each checks its
 * arguments as Perfetto's shell does, then runs the traceconv mode that does
 * the work (components/traceconv, through its applet entry point), so
 * `trace_processor_shell convert json a b` and `traceconv json a b` are one
 * code path.
 *
 *   convert json|systrace|ctrace|text|profile|firefox [in] [out]
 *   util symbolize|decompress_packets|text_to_binary [in] [out]
 *   util merge -o OUT [--manifest M] TRACE...
 *   bundle IN OUT
 */
#include "shell.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "traceconv.h"

/* Run traceconv with args (NULL-terminated, without argv[0]). */
static int traceconv(const char *const *args)
{
	const char *argv[32] = {"traceconv"};
	int argc = 1;
	for (; *args && argc < 31; args++)
		argv[argc++] = *args;
	argv[argc] = NULL;
	return traceconv_main(argc, (char **)argv);
}

static bool all_digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

int tp_shell_run_convert(struct shell_opts *o)
{
	if (tp_shell_reject_extra(o, "convert", 3, NULL) < 0)
		return 1;
	if (o->pos.len == 0) {
		tp_shell_error("convert: a format must be specified.");
		return 1;
	}
	const char *fmt = o->pos.data[0];
	const char *in = o->pos.len > 1 ? o->pos.data[1] : "-";
	const char *out = o->pos.len > 2 ? o->pos.data[2] : "-";
	if (o->truncate && strcmp(o->truncate, "start") != 0 && strcmp(o->truncate, "end") != 0) {
		tp_shell_error(
		    "--truncate must specify whether to keep the 'end' or the 'start' of the "
		    "trace.");
		return 1;
	}
	if (o->pid && !all_digits(o->pid)) {
		tp_shell_error("--pid must be a decimal integer.");
		return 1;
	}
	if (o->timestamps) {
		for (const char *p = o->timestamps; *p;) {
			size_t n = strcspn(p, ",");
			if (n == 0 || strspn(p, "0123456789") != n) {
				tp_shell_error("--timestamps must be decimal integers.");
				return 1;
			}
			p += n + (p[n] == ',');
		}
	}
	bool profile = strcmp(fmt, "profile") == 0;
	if (!profile && ((o->pid && strtoull(o->pid, NULL, 10) != 0) || o->timestamps)) {
		tp_shell_error(
		    "--pid and --timestamps are supported only for the 'profile' format.");
		return 1;
	}
	if (!profile && o->output_dir) {
		tp_shell_error("--output-dir is supported only for the 'profile' format.");
		return 1;
	}
	bool full_sort = o->convert_full_sort || o->full_sort;
	const char *args[24];
	int n = 0;
	if (strcmp(fmt, "json") == 0 || strcmp(fmt, "systrace") == 0 ||
	    strcmp(fmt, "ctrace") == 0) {
		args[n++] = fmt;
		if (o->truncate) {
			args[n++] = "--truncate";
			args[n++] = o->truncate;
		}
		if (full_sort)
			args[n++] = "--full-sort";
	} else if (strcmp(fmt, "text") == 0 || profile || strcmp(fmt, "firefox") == 0) {
		if (o->truncate) {
			tp_shell_error("--truncate is unsupported for the '%s' format.", fmt);
			return 1;
		}
		if (full_sort) {
			tp_shell_error("--full-sort is unsupported for the '%s' format.", fmt);
			return 1;
		}
		if (strcmp(fmt, "firefox") == 0) {
			tp_shell_error(
			    "convert firefox: the Firefox profiler format is not implemented in "
			    "tracebox (use 'convert profile' for pprof or traceconv report)");
			return 1;
		}
		args[n++] = fmt;
		if (strcmp(fmt, "text") == 0 && o->skip_unknown)
			args[n++] = "--skip-unknown";
		if (profile) {
			if (o->pos.len > 2) {
				tp_shell_error(
				    "output file is not supported for 'profile', use --output-dir "
				    "instead.");
				return 1;
			}
			if (o->alloc)
				args[n++] = "--alloc";
			if (o->perf)
				args[n++] = "--perf";
			if (o->java_heap)
				args[n++] = "--java-heap";
			if (o->no_annotations)
				args[n++] = "--no-annotations";
			if (o->pid) {
				args[n++] = "--pid";
				args[n++] = o->pid;
			}
			if (o->timestamps) {
				args[n++] = "--timestamps";
				args[n++] = o->timestamps;
			}
			if (o->output_dir) {
				args[n++] = "--output-dir";
				args[n++] = o->output_dir;
			}
			args[n++] = in;
			args[n] = NULL;
			return traceconv(args);
		}
	} else {
		tp_shell_error("convert: unknown format '%s'.", fmt);
		return 1;
	}
	args[n++] = in;
	args[n++] = out;
	args[n] = NULL;
	return traceconv(args);
}

int tp_shell_run_util(struct shell_opts *o)
{
	if (o->pos.len == 0) {
		tp_shell_error("util: a utility ('symbolize' or 'deobfuscate') must be specified.");
		return 1;
	}
	const char *u = o->pos.data[0];
	if (strcmp(u, "merge") == 0)
		return tp_shell_util_merge(o);
	if (tp_shell_reject_extra(o, "util", 3, NULL) < 0)
		return 1;
	const char *in = o->pos.len > 1 ? o->pos.data[1] : "-";
	const char *out = o->pos.len > 2 ? o->pos.data[2] : "-";
	const char *mode;
	if (strcmp(u, "symbolize") == 0)
		mode = "symbolize";
	else if (strcmp(u, "decompress_packets") == 0)
		mode = "decompress_packets";
	else if (strcmp(u, "text_to_binary") == 0)
		mode = "binary";
	else if (strcmp(u, "deobfuscate") == 0) {
		tp_shell_error("util deobfuscate: Java deobfuscation (ProGuard/R8 maps) is not "
		               "implemented in tracebox");
		return 1;
	} else {
		tp_shell_error("util: unknown utility '%s' (expected 'merge', 'symbolize', "
		               "'deobfuscate', 'decompress_packets' or 'text_to_binary').",
		               u);
		return 1;
	}
	const char *args[] = {mode, in, out, NULL};
	return traceconv(args);
}

/* The problem with symlink path, if it is one that does not resolve. */
static const char *symlink_problem(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
		return NULL;
	if (stat(path, &st) == 0)
		return NULL;
	return errno == ELOOP ? "symbolic link loop (the link ultimately points to itself)"
	                      : "broken symbolic link (its target does not exist)";
}

int tp_shell_run_bundle(struct shell_opts *o)
{
	if (o->pos.len < 2) {
		tp_shell_error("bundle requires both an input and an output file path, got %zu "
		               "argument(s).",
		               o->pos.len);
		return 1;
	}
	if (tp_shell_reject_extra(
	        o, "bundle", 2,
	        "Note: --symbol-paths takes a single comma-separated list of paths, "
	        "e.g. --symbol-paths path1,path2,path3; do not pass each path as a "
	        "separate argument.") < 0)
		return 1;
	const char *in = o->pos.data[0], *out = o->pos.data[1];
	struct stat st;
	const char *sp;
	if (strcmp(in, "-") == 0) {
		tp_shell_error("bundle does not support stdin input; provide a file path.");
		return 1;
	}
	if (strcmp(out, "-") == 0) {
		tp_shell_error("bundle does not support stdout output; provide a file path.");
		return 1;
	}
	if (stat(in, &st) != 0) {
		if ((sp = symlink_problem(in)))
			tp_shell_error(
			    "bundle: input file '%s' is a %s. Fix the symlink and try again.", in,
			    sp);
		else
			tp_shell_error(
			    "bundle: input file '%s' does not exist. Check the path and try "
			    "again.",
			    in);
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		tp_shell_error("bundle: input path '%s' is a directory, expected a trace file.",
		               in);
		return 1;
	}
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode)) {
		tp_shell_error(
		    "bundle: output path '%s' is a directory, expected a file path for the "
		    "bundle (e.g. %s.bundle.tar).",
		    out, in);
		return 1;
	}
	if ((sp = symlink_problem(out))) {
		tp_shell_error("bundle: output path '%s' is a %s. Fix the symlink and try again.",
		               out, sp);
		return 1;
	}
	if (o->proguard_maps.len) {
		tp_shell_error("bundle: --proguard-map: Java deobfuscation is not implemented in "
		               "tracebox");
		return 1;
	}
	const char *args[12];
	int n = 0;
	args[n++] = "bundle";
	if (o->symbol_paths) {
		args[n++] = "--symbol-paths";
		args[n++] = o->symbol_paths;
	}
	if (o->no_auto_symbol_paths)
		args[n++] = "--no-auto-symbol-paths";
	if (o->verbose)
		args[n++] = "--verbose";
	args[n++] = in;
	args[n++] = out;
	args[n] = NULL;
	int rc = traceconv(args);
	if (rc == 0) {
		printf("Wrote %s.\n", out);
		fflush(stdout);
	}
	return rc;
}
