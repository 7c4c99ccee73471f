/*
 * A shared fixture for tests that need a running tracing service: traced
 * in-process on its own loop with abstract sockets named after the test pid,
 * and a test consumer (ipc client on ConsumerPort) that enables tracing for
 * one data source, disables it and reads the packets back. Used by
 * traced_test.c and tracing_producer_test.c.
 */
#ifndef TB_TRACED_FIXTURE_H
#define TB_TRACED_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"
#include "ipc.h"
#include "traced.h"

struct tfx {
	struct loop *l;
	struct traced *t;
	char pname[64], cname[64]; /* producer / consumer socket names */
	/* the consumer */
	struct ipc_client *c;
	struct ipc_svc *svc;
	bool bound, disabled, read_done;
	bool read_failed; /* the last ReadBuffers ended with an error reply */
	VEC(uint8_t) partial;
	VEC(uint8_t *) packets; /* whole packets read back, tb_malloc'd */
	VEC(size_t) lens;
	/* set before tfx_enable for a write_into_file session: out_fd goes with
	 * EnableTracing (ownership passes) */
	bool write_into_file;
	int out_fd;
	uint64_t max_file_bytes;
	uint32_t file_write_period_ms;
	/* set before tfx_enable: incremental_state_config.clear_period_ms and
	 * builtin_data_sources.snapshot_interval_ms (0: unset) */
	uint32_t clear_period_ms, snapshot_interval_ms;
	bool deferred_start; /* set before tfx_enable */
	/* set before tfx_enable: a STOP_TRACING trigger_config with one trigger
	 * of this name (NULL: none) */
	const char *stop_trigger;
	uint32_t trigger_timeout_ms, stop_delay_ms;
	uint32_t trigger_max_per_24h;    /* 0: unset */
	double trigger_skip_probability; /* 0: unset */
};

/* Loop + service on fresh socket names. 0 or -1. */
int tfx_init(struct tfx *e);
/* Free the consumer, the packets, the service and the loop. */
void tfx_release(struct tfx *e);
/* Run the loop until *flag (at most ~4 s). Returns *flag. */
bool tfx_pump(struct tfx *e, bool *flag);
/* Run the loop n times for up to ms each. */
void tfx_spin(struct tfx *e, int n, int ms);

/* Connect the consumer (once) and EnableTracing with one buffer of size_kb (ring
 * or discard) and one data source ds_name, with legacy_config (may be NULL)
 * and duration_ms (0: none). 0 or -1. */
int tfx_enable(struct tfx *e, const char *ds_name, const char *legacy_config, uint32_t size_kb,
               bool discard, uint32_t duration_ms);
/* Parse a trace file's bytes (Trace.packet records) into e->packets.
 * Returns the number of records, or -1 on a malformed record. */
int tfx_parse_file(struct tfx *e, const uint8_t *data, size_t len);

/* Send StartTracing (for a deferred_start session). */
void tfx_start(struct tfx *e);
/* Send DisableTracing and wait for the session to end. Returns e->disabled. */
bool tfx_disable(struct tfx *e);
/* Send ReadBuffers (packets go into e->packets) without waiting. */
void tfx_read_begin(struct tfx *e);
/* ReadBuffers into e->packets. True when the read completed. */
bool tfx_read(struct tfx *e);
/* Producer packets seen (sequence id >= 2, timestamp field 8 in ts[]);
 * service packets (sequence 1) counted in *service. Checks trusted_uid.
 * Returns the count, or -1 on a packet without trusted fields. */
int tfx_collect(struct tfx *e, uint64_t *ts, int max, int *service);

#endif /* TB_TRACED_FIXTURE_H */
