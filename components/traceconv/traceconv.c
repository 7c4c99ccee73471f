/*
 * The traceconv applet: argument parsing, input and output files, and the
 * dispatch to one function per mode (folded.c, binary.c, profile.c,
 * report.c, symbolize.c, json.c, systrace.c, text.c, tar.c). Perfetto's
 * other modes (firefox, deobfuscate, ...) are refused with the list of the
 * ones we have, so nothing half-done is offered.
 */
#include "traceconv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base.h"
#include "traceconv_int.h"

#define TRACECONV_MODES                                                                          \
	"json, systrace, ctrace, text, profile, folded, report, symbolize, decompress_packets, " \
	"binary, bundle, merge, inspect"

static void traceconv_usage(FILE *f)
{
	fprintf(f,
	        "usage: traceconv MODE [OPTIONS] [input [output]]\n"
	        "Convert a trace; input and output default to stdin and stdout ('-').\n"
	        "\n"
	        "modes:\n"
	        "  folded   perf samples as collapsed stacks 'a;b;c count', for flamegraph.pl\n"
	        "           and speedscope (as FlameGraph's stackcollapse-perf.pl prints them)\n"
	        "    --pid      name stacks comm-PID\n"
	        "    --tid      name stacks comm-PID/TID\n"
	        "    --kernel   annotate kernel frames with _[k]\n"
	        "    --jit      annotate JIT frames with _[j]\n"
	        "    --all      --kernel and --jit\n"
	        "  binary   a text-format Trace (.textproto) to binary protobuf\n"
	        "  profile  perf samples as gzip'd pprof files, one per process:\n"
	        "           OUTDIR/profile.N.pid.PID.pb (OUTDIR: the second operand,\n"
	        "           --output-dir, or a new $TMPDIR/perf_profile-* directory)\n"
	        "    --perf                perf samples (the default and only profile kind)\n"
	        "    --pid PID             only this process\n"
	        "    --output-dir DIR      where the files go\n"
	        "    --timestamps T1,...   heap dump times (heap profiles only; accepted)\n"
	        "    --no-annotations      accepted (no frame annotations are added)\n"
	        "  report   perf samples as one self-contained HTML page: the capture's health,\n"
	        "           a ranked table of functions (self and inclusive, per thread) and\n"
	        "           flame graphs (top-down, bottom-up, search, zoom, thread and time)\n"
	        "    --json     write the report model (JSON) instead, for scripts and inspect\n"
	        "  inspect MODEL.json [--function ID] [--depth N] [--sort self|inclusive]\n"
	        "           [--limit N] [--interactive]   walk a report model in the terminal\n"
	        "  symbolize  ModuleSymbols packets for the trace's unsymbolized frames, from\n"
	        "           the ELF files on this machine and $PERFETTO_BINARY_PATH (append\n"
	        "           them to the trace: cat trace symbols > symbolized)\n"
	        "  json     Chrome JSON (chrome://tracing): slices, flows, metadata, and the\n"
	        "           ftrace events as systemTraceEvents text\n"
	        "  systrace the ftrace events as the kernel's text trace (to_ftrace())\n"
	        "  ctrace   systrace, zlib-compressed after a \"TRACE:\" line\n"
	        "    --truncate start|end  keep the first or last 1129235 ftrace events\n"
	        "    --full-sort           sort the whole trace before converting\n"
	        "  text     the trace's packets in protobuf text format\n"
	        "    --skip-unknown        leave out fields our protos do not name\n"
	        "  decompress_packets  the trace with compressed_packets inflated\n"
	        "  bundle IN OUT  a TAR of the trace and the symbols its profiles need\n"
	        "    --symbol-paths P1,P2  more symbol roots  --no-auto-symbol-paths  --verbose\n"
	        "  merge -o OUT [--manifest M] TRACE...  traces in one TAR that opens as one\n"
	        "    [--trace-time CLOCK [--trace-time-file F]] [--attribute K=V]\n"
	        "    per TRACE, before it: [--machine NAME] [--sync-to FILE [--clock CLOCK]\n"
	        "    [--offset NS] [--sync-clock CLOCK] [--sync-machine NAME]]: a manifest\n");
}

/* The options of json, systrace, ctrace, text and bundle at argv[*i]. */
static int traceconv_text_opt(const char *mode, struct traceconv_text_opts *to,
                              struct traceconv_bundle_opts *bo, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	bool text = strcmp(mode, "text") == 0, bundle = strcmp(mode, "bundle") == 0;
	bool conv = !text && !bundle;
	if (conv && strcmp(a, "--full-sort") == 0) {
		to->full_sort = true;
	} else if (conv && (strcmp(a, "--truncate") == 0 || strcmp(a, "-t") == 0)) {
		const char *v = *i + 1 < argc ? argv[++*i] : "";
		if (strcmp(v, "start") != 0 && strcmp(v, "end") != 0) {
			fprintf(stderr,
			        "traceconv: --truncate must specify whether to keep the 'end' or "
			        "the 'start' of the trace\n");
			return -1;
		}
		to->keep = v[0] == 's' ? 1 : -1;
	} else if (text && strcmp(a, "--skip-unknown") == 0) {
		to->skip_unknown = true;
	} else if (bundle && strcmp(a, "--symbol-paths") == 0 && *i + 1 < argc) {
		bo->symbol_paths = argv[++*i];
	} else if (bundle && strcmp(a, "--no-auto-symbol-paths") == 0) {
		bo->no_auto_symbol_paths = true;
	} else if (bundle && strcmp(a, "--verbose") == 0) {
		bo->verbose = true;
	} else {
		fprintf(stderr, "traceconv: unknown option '%s'\n", a);
		return -1;
	}
	return 0;
}

/* One `profile` option at argv[*i] (advancing *i past its value). Returns 0,
 * or -1 after printing why. */
static int traceconv_profile_opt(struct traceconv_profile_opts *po, int argc, char **argv, int *i)
{
	const char *a = argv[*i];
	bool has_value = strcmp(a, "--pid") == 0 || strcmp(a, "--timestamps") == 0 ||
	                 strcmp(a, "--output-dir") == 0;
	if (has_value && *i + 1 >= argc) {
		fprintf(stderr, "traceconv: %s needs a value\n", a);
		return -1;
	}
	const char *v = has_value ? argv[++*i] : NULL;
	char *end = NULL;
	if (strcmp(a, "--perf") == 0 || strcmp(a, "--no-annotations") == 0)
		return 0;
	if (strcmp(a, "--alloc") == 0 || strcmp(a, "--java-heap") == 0) {
		po->heap = a[2] == 'a' ? "allocator" : "java heap";
		return 0;
	}
	if (strcmp(a, "--output-dir") == 0) {
		po->outdir = v;
		return 0;
	}
	errno = 0;
	if (strcmp(a, "--pid") == 0) {
		unsigned long long pid = strtoull(v, &end, 10);
		if (errno || end == v || *end || v[0] == '-') {
			fprintf(stderr, "traceconv: invalid --pid '%s'\n", v);
			return -1;
		}
		po->pid = pid;
		return 0;
	}
	if (strcmp(a, "--timestamps") == 0) {
		/* Heap dump times: checked like Perfetto does, unused for perf. */
		for (const char *p = v; *p; p = *end ? end + 1 : end) {
			(void)strtoull(p, &end, 10);
			if (errno || end == p || (*end && *end != ',') || *p == '-') {
				fprintf(stderr, "traceconv: invalid --timestamps '%s'\n", v);
				return -1;
			}
		}
		return 0;
	}
	fprintf(stderr, "traceconv: unknown option '%s'\n", a);
	return -1;
}

/* Open the output of a text mode. A regular file (or a new name) is written
 * beside its final place dest (the temp name goes to tmp) and renamed over it
 * only on success, so the input may be the output and a failure keeps an
 * older file. A device or FIFO (/dev/null, a pipe) is written in place. */
static int open_output(const char *path, char *dest, char *tmp, size_t n, FILE **out)
{
	struct stat st;
	struct tb_err err = {0};
	char *real = NULL;
	int fd;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (!(*out = fopen(path, "we"))) {
			fprintf(stderr, "traceconv: cannot open '%s': %s\n", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	/* Through a symlink, replace the file it names, not the link. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		real = realpath(path, NULL);
	snprintf(dest, n, "%s", real ? real : path);
	free(real);
	fd = tb_create_beside(dest, 0666, tmp, n, &err);
	if (fd < 0) {
		fprintf(stderr, "traceconv: %s\n", err.msg);
		tmp[0] = 0;
		return -1;
	}
	if (!(*out = fdopen(fd, "wb"))) {
		fprintf(stderr, "traceconv: cannot create '%s': %s\n", path, strerror(errno));
		close(fd);
		unlink(tmp);
		tmp[0] = 0;
		return -1;
	}
	return 0;
}

int traceconv_main(int argc, char **argv)
{
	struct traceconv_folded_opts fo = {0};
	struct traceconv_profile_opts po = {0};
	struct traceconv_text_opts to = {0};
	struct traceconv_bundle_opts bo = {0};
	struct traceconv_report_opts ro = {0};
	const char *mode = NULL, *in = NULL, *outp = NULL;
	int in_fd = -1, rc = 1;
	FILE *out = NULL;
	char tmp[PATH_MAX] = "", dest[PATH_MAX] = "";

	if (argc > 1 && strcmp(argv[1], "inspect") == 0)
		return traceconv_inspect_main(argc - 1, argv + 1);
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			traceconv_usage(stdout);
			return 0;
		} else if (a[0] == '-' && a[1] == '-' && mode && strcmp(mode, "folded") == 0) {
			if (strcmp(a, "--pid") == 0)
				fo.pid = true;
			else if (strcmp(a, "--tid") == 0)
				fo.tid = true;
			else if (strcmp(a, "--kernel") == 0)
				fo.kernel = true;
			else if (strcmp(a, "--jit") == 0)
				fo.jit = true;
			else if (strcmp(a, "--all") == 0)
				fo.kernel = fo.jit = true;
			else
				goto bad_opt;
		} else if (mode && strcmp(mode, "report") == 0 && strcmp(a, "--json") == 0) {
			ro.json = true;
		} else if (a[0] == '-' && a[1] == '-' && mode && strcmp(mode, "profile") == 0) {
			if (traceconv_profile_opt(&po, argc, argv, &i) < 0)
				return 1;
		} else if (a[0] == '-' && a[1] && mode &&
		           (strcmp(mode, "json") == 0 || strcmp(mode, "systrace") == 0 ||
		            strcmp(mode, "ctrace") == 0 || strcmp(mode, "text") == 0 ||
		            strcmp(mode, "bundle") == 0)) {
			if (traceconv_text_opt(mode, &to, &bo, argc, argv, &i) < 0)
				return 1;
		} else if (!mode && strcmp(a, "merge") == 0) {
			return traceconv_merge_main(argc, argv, i + 1);
		} else if (a[0] == '-' && a[1] != '\0') {
			goto bad_opt;
		} else if (!mode) {
			mode = a;
		} else if (!in) {
			in = a;
		} else if (!outp) {
			outp = a;
		} else {
			fprintf(stderr, "traceconv: too many arguments: '%s'\n", a);
			return 1;
		}
		continue;
	bad_opt:
		fprintf(stderr, "traceconv: unknown option '%s'\n", a);
		return 1;
	}
	if (!mode) {
		traceconv_usage(stderr);
		return 1;
	}
	static const char *const modes[] = {
	    "folded", "binary",   "profile", "report", "symbolize",
	    "json",   "systrace", "ctrace",  "text",   "decompress_packets",
	    "bundle"};
	bool known = false;
	for (size_t m = 0; m < TB_ARRAY_SIZE(modes); m++)
		known |= strcmp(mode, modes[m]) == 0;
	if (!known) {
		fprintf(stderr, "traceconv: unknown mode '%s' (modes: " TRACECONV_MODES ")\n",
		        mode);
		return 1;
	}
	if (strcmp(mode, "bundle") == 0) {
		if (!in || !outp || strcmp(in, "-") == 0 || strcmp(outp, "-") == 0) {
			fprintf(stderr,
			        "traceconv: bundle needs an input and an output file path\n");
			return 1;
		}
		return traceconv_bundle(in, outp, &bo) < 0 ? 1 : 0;
	}
	if (!in || strcmp(in, "-") == 0) {
		in = NULL;
		in_fd = STDIN_FILENO;
	} else if ((in_fd = open(in, O_RDONLY | O_CLOEXEC)) < 0) {
		fprintf(stderr, "traceconv: cannot open '%s': %s\n", in, strerror(errno));
		return 1;
	}
	if (strcmp(mode, "profile") == 0) {
		if (outp && po.outdir) {
			fprintf(stderr,
			        "traceconv: both --output-dir and an output directory given\n");
			goto out;
		}
		if (!po.outdir)
			po.outdir = outp;
		outp = NULL;
		rc = traceconv_profile(in_fd, in ? in : "stdin", &po) ? 1 : 0;
		goto out;
	}
	if (!outp || strcmp(outp, "-") == 0) {
		out = stdout;
	} else if (open_output(outp, dest, tmp, sizeof tmp, &out) < 0) {
		goto out;
	}

	if (strcmp(mode, "folded") == 0)
		rc = traceconv_folded(in_fd, in ? in : "stdin", out, &fo) ? 1 : 0;
	else if (strcmp(mode, "report") == 0)
		rc = traceconv_report(in_fd, in ? in : "stdin", out, &ro) ? 1 : 0;
	else if (strcmp(mode, "symbolize") == 0)
		rc = traceconv_symbolize(in_fd, in ? in : "stdin", out) ? 1 : 0;
	else if (strcmp(mode, "json") == 0)
		rc = traceconv_json(in_fd, in ? in : "stdin", out, &to) ? 1 : 0;
	else if (strcmp(mode, "systrace") == 0 || strcmp(mode, "ctrace") == 0)
		rc = traceconv_systrace(in_fd, in ? in : "stdin", out, &to, mode[0] == 'c') ? 1 : 0;
	else if (strcmp(mode, "text") == 0)
		rc = traceconv_text(in_fd, in ? in : "stdin", out, &to) ? 1 : 0;
	else if (strcmp(mode, "decompress_packets") == 0)
		rc = traceconv_decompress_packets(in_fd, in ? in : "stdin", out) ? 1 : 0;
	else
		rc = traceconv_binary(in ? in : "/dev/stdin", in ? in : "stdin", out) ? 1 : 0;

out:
	if (out && fflush(out) != 0 && rc == 0) {
		fprintf(stderr, "traceconv: cannot write '%s': %s\n", outp ? outp : "stdout",
		        strerror(errno));
		rc = 1;
	}
	if (out && out != stdout && fclose(out) != 0 && rc == 0) {
		fprintf(stderr, "traceconv: cannot write '%s': %s\n", outp, strerror(errno));
		rc = 1;
	}
	if (tmp[0] && rc == 0 && rename(tmp, dest) != 0) {
		fprintf(stderr, "traceconv: cannot create '%s': %s\n", outp, strerror(errno));
		rc = 1;
	}
	if (tmp[0] && rc != 0)
		unlink(tmp); /* no half-written output; an older file stays */
	if (in_fd > STDERR_FILENO)
		close(in_fd);
	return rc;
}

int traceconv_write_report(const char *trace_path, const char *html_path, struct tb_err *err)
{
	struct traceconv_report_opts ro = {0};
	char tmp[PATH_MAX] = "", dest[PATH_MAX] = "";
	FILE *out = NULL;
	int in_fd, rc = -1;

	if ((in_fd = open(trace_path, O_RDONLY | O_CLOEXEC)) < 0)
		return tb_err_errno(err, -errno, "cannot open '%s'", trace_path);
	if (open_output(html_path, dest, tmp, sizeof tmp, &out) < 0) {
		tb_err_set(err, -EIO, "cannot create '%s'", html_path);
		goto out;
	}
	if (traceconv_report(in_fd, trace_path, out, &ro) < 0) {
		tb_err_set(err, -EINVAL, "the trace has nothing to report (see above)");
		goto out;
	}
	if (fflush(out) != 0 || ferror(out)) {
		tb_err_errno(err, -errno, "cannot write '%s'", html_path);
		goto out;
	}
	rc = 0;
out:
	if (out && out != stdout && fclose(out) != 0 && rc == 0)
		rc = tb_err_errno(err, -errno, "cannot write '%s'", html_path);
	if (tmp[0] && rc == 0 && rename(tmp, dest) != 0)
		rc = tb_err_errno(err, -errno, "cannot create '%s'", html_path);
	if (tmp[0] && rc != 0)
		unlink(tmp);
	close(in_fd);
	return rc;
}
