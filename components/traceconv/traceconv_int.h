/*
 * Private declarations shared by traceconv's files: one function per mode.
 * Each reads its input from in_fd, writes to out (a stdio stream the applet
 * owns) and returns 0, or -1 after printing one error line to stderr.
 */
#ifndef TB_TRACECONV_INT_H
#define TB_TRACECONV_INT_H

#include <stdbool.h>
#include <stdio.h>

/* stackcollapse-perf.pl's options. */
struct traceconv_folded_opts {
	bool pid;    /* --pid: "comm-PID" */
	bool tid;    /* --tid: "comm-PID/TID" */
	bool kernel; /* --kernel: kernel frames get "_[k]" */
	bool jit;    /* --jit: JIT frames (/tmp/perf-PID.map) get "_[j]" */
};

int traceconv_folded(int in_fd, const char *in_name, FILE *out,
                     const struct traceconv_folded_opts *o);
int traceconv_binary(const char *in_path, const char *in_name, FILE *out);
/* symbolize: the ModuleSymbols packets for the trace's unsymbolized frames. */
int traceconv_symbolize(int in_fd, const char *in_name, FILE *out);

#endif /* TB_TRACECONV_INT_H */
