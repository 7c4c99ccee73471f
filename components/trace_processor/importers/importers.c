/*
 * The importer registry: every trace format the trace processor reads, in
 * the order their sniffers are tried on the first bytes of a trace. The
 * ninja log's magic comes first, then
 * perf.data's ("PERFILE2") and trace.dat's; pprof before proto (both are protobuf, and
 * a pprof's first field has the number of a trace's packets); a .cpuprofile
 * before json (both are JSON objects); collapsed stacks, the loosest text,
 * last.
 */
#include "../tp_int.h"
#include "importer.h"

const struct tp_importer_ops *const tp_importers[] = {
    &tp_ninja_log_importer,
    &tp_perf_data_importer,
    &tp_trace_dat_importer,
    &tp_ftrace_text_importer,
    &tp_pprof_importer,
    &tp_proto_importer,
    &tp_cpuprofile_importer,
    &tp_json_importer,
    &tp_perf_text_importer,
    &tp_collapsed_stack_importer,
    NULL,
};
