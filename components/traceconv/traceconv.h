/*
 * traceconv: convert traces to other formats, Perfetto's `traceconv`.
 *
 * `traceconv MODE [OPTIONS] [input] [output]`; input and output default to
 * stdin and stdout (`-` names them explicitly). Modes that work:
 *   folded  perf samples as Brendan Gregg's collapsed stacks (flamegraph.pl,
 *           speedscope), the output of FlameGraph's stackcollapse-perf.pl
 *   binary  a text-format Trace to the binary protobuf
 *   profile perf samples as gzip'd pprof files, one per process
 *   report  perf samples as one self-contained HTML flame graph
 */
#ifndef TB_TRACECONV_H
#define TB_TRACECONV_H

/* The traceconv applet. Returns the process exit status (0 ok, 1 error). */
int traceconv_main(int argc, char **argv);

#endif /* TB_TRACECONV_H */
