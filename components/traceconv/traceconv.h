/*
 * traceconv: convert traces to other formats, Perfetto's `traceconv`.
 *
 * `traceconv MODE [OPTIONS] [input] [output]`; input and output default to
 * stdin and stdout (`-` names them explicitly). Modes that work:
 *   folded  perf samples as Brendan Gregg's collapsed stacks (flamegraph.pl,
 *           speedscope), the output of FlameGraph's stackcollapse-perf.pl
 *   binary  a text-format Trace to the binary protobuf
 *   profile perf samples as gzip'd pprof files, one per process
 *   report  perf samples as one self-contained HTML report (ranked functions,
 *           flame graphs), or its model as JSON
 *   inspect walk a report model (JSON) in the terminal
 */
#ifndef TB_TRACECONV_H
#define TB_TRACECONV_H

#include "base.h"

/* The traceconv applet. Returns the process exit status (0 ok, 1 error). */
int traceconv_main(int argc, char **argv);

/* Write the HTML report of the trace at trace_path to html_path (replaced
 * only once complete), as `traceconv report` does; for the recorder's
 * --report. Returns 0, or a negative code with a message in err (the
 * detail may also be on stderr). */
int traceconv_write_report(const char *trace_path, const char *html_path, struct tb_err *err);

#endif /* TB_TRACECONV_H */
