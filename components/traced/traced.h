/*
 * traced: the tracing service, wire-compatible with Perfetto's traced.
 *
 * It listens on the producer and consumer sockets (ipc), hands each producer
 * a shared memory buffer (tracing), routes the data sources a consumer's
 * TraceConfig asks for to the producers that registered them, copies the
 * chunks producers commit into per-session trace buffers and streams whole
 * packets back to the consumer with ReadBuffers. Everything runs on one event
 * loop; see README.md for the session lifecycle, the buffer layout and the
 * invariants.
 *
 * traced_main is the applet. Tests run the service in-process with
 * traced_new on their own loop and abstract socket names.
 */
#ifndef TB_TRACED_H
#define TB_TRACED_H

#include <stdint.h>

#include "base.h"

struct traced;

struct traced_opts {
	/* Socket names (ipc_sock_listen syntax; the producer one may be a
	 * comma-separated list). NULL: ipc_producer_socket_name() /
	 * ipc_consumer_socket_name(). */
	const char *producer_socket;
	const char *consumer_socket;
	/* Accept connections only from this process's uid: the sockets are
	 * tracebox's private autostart ones (abstract, so without file
	 * permissions). The applet sets it when TRACEBOX_PRIVATE_SOCKETS=1. */
	bool private_sockets;
	/* --set-socket-permissions: chgrp and chmod the filesystem sockets
	 * once they listen (NULL: leave them as the umask made them). */
	const char *producer_group, *producer_mode, *consumer_group, *consumer_mode;
};

/* Service-wide counters (also reported in TraceStats). */
struct traced_stats {
	uint64_t producers_connected, producers_seen;
	uint64_t data_sources_registered, data_sources_seen;
	uint64_t tracing_sessions;
	uint64_t bad_commits;      /* chunks_to_move that failed validation */
	uint64_t chunks_discarded; /* chunks for a buffer the producer may not use */
	uint64_t patches_discarded;
	uint64_t invalid_packets; /* reserved fields or malformed, dropped on read */
	uint64_t flushes_requested, flushes_succeeded, flushes_failed;
};

/* Create the service on loop l and start listening on the sockets of opts
 * (NULL opts: the defaults). Returns the service, or NULL with a message in
 * err. Free with traced_free. Loop thread only. */
struct traced *traced_new(struct loop *l, const struct traced_opts *opts, struct tb_err *err);

/* Disconnect everybody, free every session and buffer, close the sockets.
 * NULL is a no-op. Not from inside a callback of the service. */
void traced_free(struct traced *t);

/* The service's counters (borrowed, live). */
const struct traced_stats *traced_get_stats(const struct traced *t);

/* Number of tracing sessions that exist (any state). */
size_t traced_num_sessions(const struct traced *t);

/* The applet: `traced [--background] [--version]
 * [--set-socket-permissions G:MODE:G:MODE]`. Runs until SIGINT or SIGTERM;
 * returns the process exit status. */
int traced_main(int argc, char **argv);

#endif /* TB_TRACED_H */
