/*
 * The importer interface: one struct tp_importer_ops per input format,
 * chosen by sniffing the first bytes (tp.c), and the list of them in
 * sniffing order (importers/importers.c).
 */
#ifndef TB_TP_IMPORTER_H
#define TB_TP_IMPORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp;
struct tp_importer;

/* One per input format. parse gets the (un-gzipped) bytes in chunks; eof
 * flushes. Both return 0 or a negative code after tp_fail(). */
struct tp_importer_ops {
	const char *name; /* trace_type: "proto", "json", ... */
	/* Does this prefix (>= 1 byte, usually a few KB) look like the format? */
	bool (*sniff)(const uint8_t *p, size_t n);
	struct tp_importer *(*create)(struct tp *tp);
	int (*parse)(struct tp_importer *imp, const uint8_t *p, size_t n);
	int (*eof)(struct tp_importer *imp);
	void (*destroy)(struct tp_importer *imp);
};
extern const struct tp_importer_ops tp_json_importer;
extern const struct tp_importer_ops tp_proto_importer;
extern const struct tp_importer_ops tp_perf_text_importer;
/* perf record's binary perf.data (importers/perf_data/). */
extern const struct tp_importer_ops tp_perf_data_importer;
extern const struct tp_importer_ops tp_ftrace_text_importer;
extern const struct tp_importer_ops tp_trace_dat_importer; /* trace-cmd trace.dat */
/* Profiles and build logs (importers/profiles/, importers/ninja/). */
extern const struct tp_importer_ops tp_collapsed_stack_importer;
extern const struct tp_importer_ops tp_pprof_importer;
extern const struct tp_importer_ops tp_cpuprofile_importer;
extern const struct tp_importer_ops tp_ninja_log_importer;
/* Every importer, in sniffing order, NULL-terminated (importers/importers.c). */
extern const struct tp_importer_ops *const tp_importers[];

#endif /* TB_TP_IMPORTER_H */
