/*
 * write_into_file.c: streaming a session's trace into a file instead of
 * handing it to the consumer with ReadBuffers (TraceConfig.write_into_file).
 *
 * The file is the consumer's fd passed with EnableTracing, or output_path.
 * Every file_write_period_ms, and once more when the session ends, the
 * buffers are drained into it as Trace records, service packets first as
 * ReadBuffers does:
 *
 *   record = 0x0A | varint(len) | producer bytes | trusted trailer
 *
 * Each drain ends like a read does: the lifecycle events recorded meanwhile
 * and, once per snapshot period and at the end, trace_stats. The final drain
 * (with the tracing_disabled event) closes the file. With
 * max_file_size_bytes the file never grows past the cap: the first record
 * that would cross it is dropped, the file is closed and the session is
 * stopped, as Perfetto does.
 *
 * The output never blocks the service loop (Perfetto's traced writes it
 * blocking; a reader that stops reading would freeze every client):
 *
 *   drain step ──records──▶ queue (<= TRACED_WIF_QUEUE_MAX) ──write()──▶ fd
 *        ▲                      │ the fd is full (EAGAIN)
 *        └── fd writable ◀──────┘ watched for LOOP_OUT; the rest of the data
 *                                 waits in the session's buffers meanwhile
 *
 * A pipe, FIFO or terminal is reopened through /proc/self/fd with
 * O_NONBLOCK, so the consumer's own file description keeps its flags (a
 * socket, which cannot be reopened, gets O_NONBLOCK itself). Regular files
 * are written straight through: they do not wait for a reader. An output
 * that takes no byte for TRACED_WIF_STALL_MS, or a write that fails (a full
 * disk), stops the session with the reason in its EnableTracing reply; the
 * file keeps every whole record written before.
 */
#include "traced_int.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void wif_pump(struct traced_session *s);

static size_t queued(const struct traced_wif *w)
{
	return w->q.len - w->head;
}

static void on_writable(struct loop *l, int fd, uint32_t events, void *ctx)
{
	wif_pump(ctx);
}

/* Make fd non-blocking on a file description of its own where it can
 * block (pipes, FIFOs, terminals, sockets) and check that the loop can
 * watch it. Returns the fd to use (fd itself or a reopened one). */
static int make_pollable(struct traced_session *s, int fd, bool *pollable)
{
	struct stat st;
	char path[32];
	int nfd, fl;

	*pollable = false;
	if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		return fd;
	if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		nfd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (nfd >= 0) {
			close(fd);
			fd = nfd;
		}
	}
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0))
		return fd;
	if (loop_add_fd(s->svc->loop, fd, LOOP_OUT, on_writable, s) == 0) {
		loop_del_fd(s->svc->loop, fd);
		*pollable = true;
	} else {
		/* Not pollable (/dev/null, say): such a file does not block. */
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	}
	return fd;
}

void traced_wif_init(struct traced_session *s, int fd)
{
	struct traced_wif *w = &s->wif;
	memset(w, 0, sizeof *w);
	w->fd = fd >= 0 ? make_pollable(s, fd, &w->pollable) : -1;
}

static void stop_waiting(struct traced_session *s)
{
	struct traced_wif *w = &s->wif;
	if (w->watching)
		loop_del_fd(s->svc->loop, w->fd);
	w->watching = false;
	if (w->stall_timer)
		loop_cancel_timer(s->svc->loop, w->stall_timer);
	w->stall_timer = 0;
}

void traced_wif_release(struct traced_session *s)
{
	struct traced_wif *w = &s->wif;
	stop_waiting(s);
	tb_close(&w->fd);
	vec_release(&w->q);
	w->head = 0;
}

/* The file is complete (or cut short): close it, and tell whoever waits. */
static void wif_close(struct traced_session *s)
{
	struct traced_wif *w = &s->wif;
	if (w->fd < 0)
		return;
	log_info(TRACED_LOG, "session %" PRIu64 ": %" PRIu64 " bytes written into the file%s",
	         s->id, s->file_bytes, s->file_full ? " (max_file_size_bytes reached)" : "");
	traced_wif_release(s);
	if (s->state == TRACED_STARTED) {
		traced_session_disable(s); /* cap reached or output failed */
	} else if (w->notify_when_done) {
		w->notify_when_done = false;
		traced_session_notify_disabled(s, w->error[0] ? w->error : NULL);
	}
}

static void wif_fail(struct traced_session *s, const char *fmt, ...) TB_PRINTF(2, 3);
static void wif_fail(struct traced_session *s, const char *fmt, ...)
{
	struct traced_wif *w = &s->wif;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->error, sizeof w->error, fmt, ap);
	va_end(ap);
	log_warn(TRACED_LOG, "session %" PRIu64 ": %s", s->id, w->error);
	wif_close(s);
}

static void on_stall_check(struct loop *l, uint64_t id, void *ctx)
{
	struct traced_session *s = ctx;
	struct traced_wif *w = &s->wif;
	int64_t idle_ms = (tb_mono_ns() - w->progress_ns) / 1000000;
	w->stall_timer = 0;
	if (idle_ms >= (int64_t)TRACED_WIF_STALL_MS) {
		wif_fail(s,
		         "the trace file's reader has not taken any data for %u s: stopping the "
		         "session (write_into_file)",
		         TRACED_WIF_STALL_MS / 1000);
		return;
	}
	w->stall_timer =
	    loop_add_timer(l, TRACED_WIF_STALL_MS - (uint64_t)idle_ms, 0, on_stall_check, s);
}

/* The output is full: come back when it is writable. */
static void wait_writable(struct traced_session *s)
{
	struct traced_wif *w = &s->wif;
	if (!w->pollable) {
		wif_fail(s, "cannot write the trace file: %s", strerror(EAGAIN));
		return;
	}
	if (!w->watching) {
		if (loop_add_fd(s->svc->loop, w->fd, LOOP_OUT, on_writable, s) != 0) {
			wif_fail(s, "cannot watch the trace file: %s", loop_err(s->svc->loop)->msg);
			return;
		}
		w->watching = true;
	}
	if (!w->stall_timer)
		w->stall_timer =
		    loop_add_timer(s->svc->loop, TRACED_WIF_STALL_MS, 0, on_stall_check, s);
}

/* Write what the output takes. 0 when the queue is empty, -EAGAIN when the
 * output is full, else -errno. */
static int wif_flush(struct traced_wif *w)
{
	while (w->head < w->q.len) {
		ssize_t r = write(w->fd, w->q.data + w->head, w->q.len - w->head);
		if (r > 0) {
			w->head += (size_t)r;
			w->progress_ns = tb_mono_ns();
		} else if (r < 0 && errno == EINTR) {
			continue;
		} else {
			return r < 0 ? -errno : -EIO;
		}
	}
	vec_clear(&w->q);
	w->head = 0;
	return 0;
}

static void put(struct traced_wif *w, const void *p, size_t n)
{
	vec_reserve(&w->q, n);
	memcpy(w->q.data + w->q.len, p, n);
	w->q.len += n;
}

static int wif_packet(void *ctx, const uint8_t *data, size_t len, const uint8_t *trailer,
                      size_t trailer_len)
{
	struct traced_session *s = ctx;
	struct traced_wif *w = &s->wif;
	size_t body = len + trailer_len;
	uint8_t hdr[11], *end;
	uint64_t rec;

	if (s->file_full)
		return 1;
	hdr[0] = 0x0A; /* Trace.packet, length-delimited */
	end = pb_encode_varint(hdr + 1, body);
	rec = (uint64_t)(end - hdr) + body;
	if (s->max_file_bytes && s->file_bytes + rec > s->max_file_bytes) {
		s->file_full = true;
		return 1;
	}
	put(w, hdr, (size_t)(end - hdr));
	put(w, data, len);
	if (trailer_len)
		put(w, trailer, trailer_len);
	s->file_bytes += rec;
	return 0;
}

/* One step of a drain: the service packets at its start, then buffer data
 * until the queue is full, the trailer packets once every buffer is read. */
static void drain_step(struct traced_session *s)
{
	struct traced_wif *w = &s->wif;
	if (!w->draining) {
		w->draining = true;
		w->buf = 0;
		traced_emit_header_packets(s, wif_packet, s);
	}
	while (w->buf < s->buffers.len && !s->file_full && queued(w) < TRACED_WIF_QUEUE_MAX) {
		bool more = false;
		traced_buffer_read_some(s->buffers.data[w->buf], wif_packet, s,
		                        &s->svc->stats.invalid_packets,
		                        TRACED_WIF_QUEUE_MAX - queued(w), &more);
		if (!more)
			w->buf++;
	}
	if (w->buf >= s->buffers.len || s->file_full) {
		traced_emit_trailer_packets(s, wif_packet, s);
		w->draining = false;
	}
}

/* Write and drain for as long as the output takes the bytes. */
static void wif_pump(struct traced_session *s)
{
	struct traced_wif *w = &s->wif;
	for (;;) {
		int rc = w->fd >= 0 ? wif_flush(w) : -EBADF;
		if (rc == -EAGAIN) {
			wait_writable(s);
			return;
		}
		if (rc < 0) {
			wif_fail(s, "cannot write the trace file: %s", strerror(-rc));
			return;
		}
		if (w->draining && !s->file_full) {
			drain_step(s);
		} else if (w->final && !w->final_drained && !s->file_full) {
			w->final_drained = true;
			drain_step(s);
		} else {
			break;
		}
	}
	stop_waiting(s);
	w->draining = false;
	if (s->file_full || w->final_drained)
		wif_close(s);
}

void traced_session_write_file(struct traced_session *s, bool final)
{
	struct traced_wif *w = &s->wif;
	if (w->fd < 0)
		return;
	if (traced_session_waiting_for_trigger(s)) {
		if (final) {
			w->final = w->final_drained = true; /* no trigger: the file stays empty */
			wif_close(s);
		}
		return;
	}
	if (!w->watching && !queued(w))
		w->progress_ns = tb_mono_ns(); /* the stall clock starts with new data */
	if (final)
		w->final = true;
	else if (!w->draining && !queued(w))
		drain_step(s);
	if (!w->watching)
		wif_pump(s);
}
