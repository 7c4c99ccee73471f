/*
 * The trace processor's RPC: what the Perfetto UI and Perfetto's Python API
 * speak to `trace_processor_shell server http` (compat §5.4), as layers a
 * test or fuzzer can drive one at a time:
 *
 *   http.c     HTTP/1.1 request parser (pure: bytes in, one request out)
 *   ws.c       WebSocket (RFC 6455) frame codec and handshake key (pure)
 *   result.c   QueryResult / CellsBatch encoder over a statement series
 *   rpc.c      TraceProcessorRpcStream framing, seq checks, the methods
 *   httpd.c    the server: TCP listeners and connections on the base loop,
 *              endpoints, CORS
 *   stdiod.c   the same RPC stream on stdin/stdout
 *
 * Private to the trace_processor component (the shell and the tests include
 * it). Everything runs on the one thread that runs the server's loop.
 */
#ifndef TB_TP_RPC_H
#define TB_TP_RPC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "pb.h"
#include "../trace_processor.h"

/* TRACE_PROCESSOR_CURRENT_API_VERSION of trace_processor.proto: the UI warns
 * when a server reports an older one. */
#define TP_RPC_API_VERSION 14

/* As Perfetto's: one RPC message or HTTP body / WebSocket payload may be up
 * to 64 MiB (the UI sends traces in slices of up to 32 MiB). */
#define TP_RPC_MAX_MSG ((size_t)64 << 20)
#define TP_HTTP_MAX_HEADER_BYTES ((size_t)64 << 10) /* request line + headers */
#define TP_HTTP_MAX_HEADERS 64
#define TP_HTTP_MAX_BODY TP_RPC_MAX_MSG

/* ---- HTTP request parser (http.c) ------------------------------------------ */

struct tp_http_header {
	const char *name, *value; /* into the parsed buffer, not NUL-terminated */
	size_t name_len, value_len;
};

struct tp_http_request {
	const char *method, *uri;
	size_t method_len, uri_len;
	int minor_version; /* HTTP/1.<minor> */
	struct tp_http_header headers[TP_HTTP_MAX_HEADERS];
	unsigned num_headers;
	const uint8_t *body;
	size_t body_len;
	bool keep_alive; /* HTTP/1.1 unless "Connection: close"; 1.0 only with keep-alive */
	bool upgrade;    /* "Connection: upgrade" */
	size_t size;     /* bytes of the buffer this request took (headers + body) */
	/* Also set when 0 is returned: the headers are all in (only the body
	 * is missing) and the client sent "Expect: 100-continue". */
	bool expect_continue;
};

/* Parse one request from buf[0, len). Returns 1 with *req filled (pointing
 * into buf) when the request and its whole body are there, 0 when more bytes
 * are needed, or -1 for a request that cannot be served, with the response
 * status line in *status ("400 Bad Request", "413 Payload Too Large",
 * "411 Length Required", "417 Expectation Failed", "431 Request Header
 * Fields Too Large", "505 HTTP Version Not Supported"). Bodies are
 * Content-Length only (no chunked requests). Pure. */
int tp_http_parse_request(const uint8_t *buf, size_t len, struct tp_http_request *req,
                          const char **status);

/* The value of header name (case-insensitive) and its length, or NULL. */
const char *tp_http_header(const struct tp_http_request *req, const char *name, size_t *len);

/* Case-insensitive comparison of s[0, n) with the NUL-terminated t. */
bool tp_http_token_eq(const char *s, size_t n, const char *t);

/* ---- WebSocket codec (ws.c) ----------------------------------------------- */

enum tp_ws_opcode {
	TP_WS_CONT = 0x0,
	TP_WS_TEXT = 0x1,
	TP_WS_BINARY = 0x2,
	TP_WS_CLOSE = 0x8,
	TP_WS_PING = 0x9,
	TP_WS_PONG = 0xa,
};

struct tp_ws_frame {
	bool fin;
	uint8_t opcode;
	uint8_t *payload; /* into the decoded buffer, unmasked in place */
	size_t len;
};

/* Decode one client frame at buf[0, len): masked, no RSV bits, a known
 * opcode, control frames unfragmented and at most 125 bytes, payload at most
 * max_payload. The payload is unmasked in place. Returns the bytes the frame
 * took (> 0), 0 when more bytes are needed, or -EPROTO (a protocol error:
 * close with 1002) / -EMSGSIZE (too big: close with 1009). Pure. */
long tp_ws_decode(uint8_t *buf, size_t len, size_t max_payload, struct tp_ws_frame *f);

/* The header of a server frame (FIN set, unmasked) for a payload of len
 * bytes: writes 2, 4 or 10 bytes to out and returns how many. */
size_t tp_ws_header(uint8_t out[10], enum tp_ws_opcode opcode, uint64_t len);

/* Sec-WebSocket-Accept for the client's Sec-WebSocket-Key: base64(SHA-1(key
 * + RFC 6455 GUID)), 28 characters and a NUL into out. Returns 0, or -EINVAL
 * when key is not 24 characters (a base64'd 16-byte nonce). */
int tp_ws_accept_key(const char *key, size_t key_len, char out[29]);

/* ---- query results (result.c) ---------------------------------------------- */

/* Perfetto's batch limits: a batch closes at 50000 cells or once about
 * 128 KiB of cells are in it (checked between rows, so a batch always holds
 * whole rows). */
#define TP_RESULT_CELLS_PER_BATCH 50000u
#define TP_RESULT_BATCH_BYTES (128u * 1024)

struct tp_result;

/* Start running sql (one or more statements, as Perfetto's ExecuteQuery):
 * every statement but the last runs to completion, the last one's rows are
 * the result. Errors are kept for the first tp_result_next. */
struct tp_result *tp_result_new(struct tp *tp, const char *sql, size_t len);
void tp_result_free(struct tp_result *r);
/* Test hook: smaller batches. */
void tp_result_set_batch_limits(struct tp_result *r, uint32_t cells, uint32_t bytes);

/* Append the fields of the next QueryResult message (column names and
 * statement counts in the first; then one CellsBatch, the error if any and
 * elapsed_time_ms) to w, which is inside an open QueryResult. Returns true
 * while more batches follow. Call until it returns false. */
bool tp_result_next(struct tp_result *r, struct pb_writer *w);
/* The query's error once tp_result_next returned false (or before, for an
 * error while preparing), NULL if it ran fine. Owned by r. */
const char *tp_result_error(const struct tp_result *r);

/* ---- the RPC (rpc.c) -------------------------------------------------------- */

struct tp_rpc;

/* Where responses go: a whole number of TraceProcessorRpcStream messages
 * per call. p == NULL asks the transport to disconnect (after a fatal
 * error); the bytes stay valid only during the call. */
typedef void (*tp_rpc_send_fn)(void *ctx, const uint8_t *p, size_t n);

/* A new RPC with trace processor config cfg (copied; NULL for defaults).
 * preloaded, if not NULL, is a trace processor that has loaded a trace file
 * (through tp_end_of_file) before serving: the RPC owns it, and trace_name
 * (copied; the path as given) is what status calls it, as Perfetto's
 * loaded_trace_name. Otherwise it starts with an empty trace processor. */
struct tp_rpc *tp_rpc_new(const struct tp_config *cfg, struct tp *preloaded,
                          const char *trace_name);
void tp_rpc_free(struct tp_rpc *rpc);

/* Feed n bytes of a TraceProcessorRpcStream; each complete message is run
 * and its responses passed to send. Returns 0, TP_RPC_PAUSED when a
 * streaming query stopped because the transport is full (see
 * tp_rpc_set_flow: the rest of the bytes wait inside the RPC until
 * tp_rpc_resume), or -EPROTO after a fatal error (framing, seq gap) whose
 * fatal_error response was sent, followed by a send(NULL) asking to
 * disconnect. While paused, fed bytes are only queued. */
#define TP_RPC_PAUSED 1
int tp_rpc_feed(struct tp_rpc *rpc, const uint8_t *p, size_t n, tp_rpc_send_fn send, void *ctx);
/* A new transport connection: drop any partial message of the last one
 * (sequence numbers carry on, as Perfetto's). */
void tp_rpc_reset_stream(struct tp_rpc *rpc);

/* Flow control: full(ctx) (ctx: the send context) says the transport holds
 * all the output it should for now. A QUERY_STREAMING checks it after each
 * response and, when full, pauses: nothing more runs until tp_rpc_resume
 * (the transport drained) or tp_rpc_abort (the client is gone). NULL (the
 * default): never pause. */
void tp_rpc_set_flow(struct tp_rpc *rpc, bool (*full)(void *ctx));
/* Is a streaming query paused? */
bool tp_rpc_paused(const struct tp_rpc *rpc);
/* Carry on after a pause, with the transport of the paused request: the
 * rest of the query, then the queued requests. Returns as tp_rpc_feed. */
int tp_rpc_resume(struct tp_rpc *rpc, tp_rpc_send_fn send, void *ctx);
/* Drop the paused query and the queued bytes (its client went away). */
void tp_rpc_abort(struct tp_rpc *rpc);
/* fn(ctx) runs before the RPC replaces its trace processor (a new trace,
 * RESET_TRACE_PROCESSOR): results the transport holds from
 * tp_rpc_query_start must be freed then, and a paused stream is aborted. */
void tp_rpc_set_reset_hook(struct tp_rpc *rpc, void (*fn)(void *ctx), void *ctx);

/* The REST endpoints' operations (httpd.c): each appends a serialized
 * message to w. */
void tp_rpc_status(struct tp_rpc *rpc, struct pb_writer *w); /* StatusResult */
void tp_rpc_parse(struct tp_rpc *rpc, const uint8_t *p, size_t n, struct pb_writer *w);
/* AppendTraceDataResult */
void tp_rpc_notify_eof(struct tp_rpc *rpc);
void tp_rpc_restore_initial_tables(struct tp_rpc *rpc);
/* The schema's tables, views, indexes and triggers now (hashes of their
 * type and name, into initial), and dropping every one made since (what
 * user modules made too: their next INCLUDE runs them again): the RPC's
 * RESTORE_INITIAL_TABLES and the interactive shell's .reset. */
void tp_schema_snapshot(struct tp *tp, struct hmap *initial);
void tp_schema_restore(struct tp *tp, const struct hmap *initial);
/* /query: QueryArgs in, one QueryResult per batch to send (chunk = one
 * serialized QueryResult). */
void tp_rpc_query(struct tp_rpc *rpc, const uint8_t *args, size_t n, tp_rpc_send_fn send,
                  void *ctx);
/* /query, pulled: the result of QueryArgs args, whose QueryResult messages
 * the caller makes with tp_result_next as its client takes them. Free it
 * before the trace processor goes (tp_rpc_set_reset_hook). */
struct tp_result *tp_rpc_query_start(struct tp_rpc *rpc, const uint8_t *args, size_t n);

/* ---- servers (httpd.c, stdiod.c) -------------------------------------------- */

/* --idle-timeout / --idle-start: stop serving after timeout_ms without a
 * request (0: never). With TP_IDLE_AUTO the clock runs only once the process
 * that started the server is gone (ORPHANED) if it had one, else from the
 * start (LAST_QUERY). */
enum tp_idle_start { TP_IDLE_AUTO, TP_IDLE_ORPHANED, TP_IDLE_LAST_QUERY };
struct tp_idle {
	uint32_t timeout_ms;
	enum tp_idle_start start;
};

/* The idle clock of a server: tp_idle_init at start (records the parent),
 * tp_idle_activity at each request, tp_idle_expired on a timer. */
struct tp_idle_clock {
	struct tp_idle cfg;
	bool orphaned_mode; /* the clock waits for the parent to go */
	int parent;
	int64_t last_ms;
};
void tp_idle_init(struct tp_idle_clock *c, const struct tp_idle *cfg);
void tp_idle_activity(struct tp_idle_clock *c);
bool tp_idle_expired(struct tp_idle_clock *c);
/* How often to look, in ms (0: never). */
uint32_t tp_idle_tick_ms(const struct tp_idle_clock *c);

struct tp_httpd_opts {
	const char *ip;                      /* NULL or "localhost": 127.0.0.1 and ::1 */
	const char *port;                    /* NULL: 9001 */
	const char *additional_cors_origins; /* comma-separated, or NULL */
	struct tp_idle idle;                 /* {0}: never stop */
};

/* Serve rpc over HTTP until SIGINT or SIGTERM (or the idle timeout).
 * Returns 0 then, or 1 after printing one line (port in use, bad address). */
int tp_httpd_run(struct tp_rpc *rpc, const struct tp_httpd_opts *o);

struct tp_unixd_opts {
	const char *socket_path;  /* absolute */
	const char *session_name; /* for the startup line */
	struct tp_idle idle;
	bool daemonize;
};

/* `server unix`: serve rpc on an AF_UNIX socket (mode 0600, peers of our
 * uid only) until SIGINT/SIGTERM or the idle timeout, with the pid file
 * beside it; prints the startup line on stdout. Returns 0, or 1 after
 * printing (a live session holds the path, cannot bind). */
int tp_unixd_run(struct tp_rpc *rpc, const struct tp_unixd_opts *o);

/* Serve rpc on stdin/stdout until stdin ends. Returns 0, or 1 after a fatal
 * RPC error or an I/O error (one line on stderr). */
int tp_stdiod_run(struct tp_rpc *rpc);

#endif /* TB_TP_RPC_H */
