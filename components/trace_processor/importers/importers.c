/*
 * The importer registry: every trace format the trace processor reads, in
 * the order their sniffers are tried on the first bytes of a trace.
 */
#include "../tp_int.h"
#include "importer.h"

const struct tp_importer_ops *const tp_importers[] = {
	&tp_ftrace_text_importer,
	&tp_proto_importer,
	&tp_json_importer,
	&tp_perf_text_importer,
	NULL,
};
