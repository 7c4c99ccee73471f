/*
 * Streaming gzip decoding for tp_parse(): the trace processor accepts gzip'd
 * traces of any size without a temporary copy. Multi-member streams (several
 * gzip files concatenated, as `cat a.gz b.gz` or pigz make) are decoded
 * member after member; a truncated or corrupt stream is a fatal error.
 *
 * A stream made by tp_gunzip_new_async() inflates on a helper thread while
 * the caller's thread parses what came out before (a second core takes
 * the inflating off the load's critical path). The caller's thread alone
 * calls the sink, in stream order, with the same bytes; input is copied
 * (the caller's buffer is free again when feed returns) and both queues
 * are bounded, so the memory stays a few MiB whatever the trace's size.
 */
#include "io.h"

#include <pthread.h>
#include <unistd.h>
#include <zlib.h>

#define OUT_CHUNK (256 * 1024)
#define ASYNC_MAX_IN (4u << 20)   /* compressed bytes queued for the helper */
#define ASYNC_MAX_OUT 16          /* inflated chunks queued for the caller */
#define ASYNC_IN_PIECE (1u << 20) /* input is queued in pieces of this */

struct chunk {
	struct chunk *next;
	size_t len;
	uint8_t data[]; /* OUT_CHUNK or ASYNC_IN_PIECE bytes */
};

struct queue {
	struct chunk *head, *tail;
	size_t bytes, n;
};

struct tp_gunzip {
	z_stream zs;
	bool in_member; /* inside a member (not between members) */
	uint8_t *out;
	/* Async (helper thread) state; mu guards all of it but th. */
	bool async, started;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* any change: input queued, output queued, done */
	struct queue in, outq;
	/* Spent chunks kept for reuse (a fresh 1 MiB or 256 KiB block is a
	 * mmap and its page faults each time). */
	struct queue spare_in, spare_out;
	bool closed; /* no more input */
	bool stop;   /* the caller gave up: the helper ends */
	bool done;   /* the helper ended (input exhausted, error or stop) */
	int rc;      /* the helper's result: 0 or negative (herr set) */
	struct tb_err herr;
};

struct tp_gunzip *tp_gunzip_new(void)
{
	struct tp_gunzip *g = tb_calloc(1, sizeof *g);
	g->out = tb_malloc(OUT_CHUNK);
	/* 16 + MAX_WBITS: gzip wrapper only. */
	if (inflateInit2(&g->zs, 16 + MAX_WBITS) != Z_OK)
		TB_CHECK(!"inflateInit2");
	return g;
}

struct tp_gunzip *tp_gunzip_new_async(void)
{
	struct tp_gunzip *g = tp_gunzip_new();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	g->async = cpus > 1;
	if (g->async) {
		pthread_mutex_init(&g->mu, NULL);
		pthread_cond_init(&g->cv, NULL);
	}
	return g;
}

static void queue_push(struct queue *q, struct chunk *c)
{
	c->next = NULL;
	if (q->tail)
		q->tail->next = c;
	else
		q->head = c;
	q->tail = c;
	q->bytes += c->len;
	q->n++;
}

static struct chunk *queue_pop(struct queue *q)
{
	struct chunk *c = q->head;
	if (c) {
		q->head = c->next;
		if (!q->head)
			q->tail = NULL;
		q->bytes -= c->len;
		q->n--;
	}
	return c;
}

static void queue_free(struct queue *q)
{
	struct chunk *c;
	while ((c = queue_pop(q)))
		tb_free(c);
}

/* End the helper (if it runs) and wait for it. */
static void async_join(struct tp_gunzip *g)
{
	if (!g->started)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	pthread_join(g->th, NULL);
	g->started = false;
}

void tp_gunzip_free(struct tp_gunzip *g)
{
	if (!g)
		return;
	if (g->async) {
		async_join(g);
		queue_free(&g->in);
		queue_free(&g->outq);
		queue_free(&g->spare_in);
		queue_free(&g->spare_out);
		pthread_cond_destroy(&g->cv);
		pthread_mutex_destroy(&g->mu);
	}
	inflateEnd(&g->zs);
	tb_free(g->out);
	tb_free(g);
}

/* Inflate p[0, n) through sink, member after member. */
static int inflate_feed(struct tp_gunzip *g, const uint8_t *p, size_t n, tp_gunzip_sink sink,
                        void *ctx, struct tb_err *err)
{
	g->zs.next_in = (Bytef *)p;
	g->zs.avail_in = 0;
	while (n > 0 || g->zs.avail_in > 0) {
		if (g->zs.avail_in == 0) {
			size_t take = n > UINT32_MAX ? UINT32_MAX : n;
			g->zs.next_in = (Bytef *)p;
			g->zs.avail_in = (uInt)take;
			p += take;
			n -= take;
		}
		if (!g->in_member) {
			/* Bytes after a finished member: another member, or padding. */
			if (g->zs.next_in[0] != 0x1f) {
				if (g->zs.next_in[0] == 0) {
					g->zs.next_in++;
					g->zs.avail_in--;
					continue;
				}
				return tb_err_set(err, -EINVAL, "trailing garbage after gzip data");
			}
			g->in_member = true;
		}
		g->zs.next_out = g->out;
		g->zs.avail_out = OUT_CHUNK;
		int rc = inflate(&g->zs, Z_NO_FLUSH);
		size_t produced = OUT_CHUNK - g->zs.avail_out;
		if (produced) {
			int r = sink(ctx, g->out, produced);
			if (r < 0)
				return r;
		}
		if (rc == Z_STREAM_END) {
			g->in_member = false;
			inflateReset(&g->zs);
		} else if (rc == Z_BUF_ERROR && g->zs.avail_in == 0) {
			break;
		} else if (rc != Z_OK) {
			return tb_err_set(err, -EINVAL, "corrupt gzip data: %s",
			                  g->zs.msg ? g->zs.msg : "inflate failed");
		}
	}
	return 0;
}

/* The helper's sink: queue a copy for the caller, waiting while the queue
 * is full; -ECANCELED once the caller stops. */
static int helper_sink(void *ctx, const uint8_t *p, size_t n)
{
	struct tp_gunzip *g = ctx;
	struct chunk *c;

	pthread_mutex_lock(&g->mu);
	c = queue_pop(&g->spare_out);
	pthread_mutex_unlock(&g->mu);
	if (!c && !(c = tb_try_malloc(sizeof *c + OUT_CHUNK)))
		return -ENOMEM;
	c->len = n;
	memcpy(c->data, p, n);
	pthread_mutex_lock(&g->mu);
	while (g->outq.n >= ASYNC_MAX_OUT && !g->stop)
		pthread_cond_wait(&g->cv, &g->mu);
	if (g->stop) {
		pthread_mutex_unlock(&g->mu);
		tb_free(c);
		return -ECANCELED;
	}
	queue_push(&g->outq, c);
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return 0;
}

static void *helper(void *arg)
{
	struct tp_gunzip *g = arg;
	struct tb_err err = {0};
	int rc = 0;

	pthread_mutex_lock(&g->mu);
	for (;;) {
		while (!g->in.head && !g->closed && !g->stop)
			pthread_cond_wait(&g->cv, &g->mu);
		if (g->stop || !g->in.head)
			break;
		struct chunk *c = queue_pop(&g->in);
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		rc = inflate_feed(g, c->data, c->len, helper_sink, g, &err);
		if (rc == -ENOMEM)
			rc = tb_err_set(&err, -ENOMEM, "out of memory inflating the trace");
		pthread_mutex_lock(&g->mu);
		c->len = 0;
		queue_push(&g->spare_in, c);
		if (rc < 0)
			break;
	}
	if (rc == 0 && !g->stop && g->in_member)
		rc = tb_err_set(&err, -EINVAL, "truncated gzip data");
	g->rc = rc == -ECANCELED ? 0 : rc;
	g->herr = err;
	g->done = true;
	pthread_cond_broadcast(&g->cv);
	pthread_mutex_unlock(&g->mu);
	return NULL;
}

/* Hand the queued output to sink on this thread. With wait, until the
 * helper is done; else what is there now. Returns 0, the sink's negative
 * code, or the helper's error (err set). */
static int deliver(struct tp_gunzip *g, bool wait, tp_gunzip_sink sink, void *ctx,
                   struct tb_err *err)
{
	pthread_mutex_lock(&g->mu);
	for (;;) {
		struct chunk *c = queue_pop(&g->outq);
		if (c) {
			pthread_cond_broadcast(&g->cv);
			pthread_mutex_unlock(&g->mu);
			int r = sink(ctx, c->data, c->len);
			pthread_mutex_lock(&g->mu);
			c->len = 0;
			queue_push(&g->spare_out, c);
			if (r < 0) {
				pthread_mutex_unlock(&g->mu);
				return r;
			}
			continue;
		}
		if (g->done || !wait)
			break;
		pthread_cond_wait(&g->cv, &g->mu);
	}
	int rc = g->done ? g->rc : 0;
	if (rc < 0 && !tb_err_is_set(err))
		*err = g->herr;
	pthread_mutex_unlock(&g->mu);
	return rc;
}

static int async_feed(struct tp_gunzip *g, const uint8_t *p, size_t n, tp_gunzip_sink sink,
                      void *ctx, struct tb_err *err)
{
	if (!g->started && !g->done) {
		if (pthread_create(&g->th, NULL, helper, g) != 0) {
			g->async = false; /* no thread: inflate here */
			pthread_cond_destroy(&g->cv);
			pthread_mutex_destroy(&g->mu);
			return inflate_feed(g, p, n, sink, ctx, err);
		}
		g->started = true;
	}
	while (n > 0) {
		size_t take = n < ASYNC_IN_PIECE ? n : ASYNC_IN_PIECE;
		struct chunk *c;
		pthread_mutex_lock(&g->mu);
		c = queue_pop(&g->spare_in);
		pthread_mutex_unlock(&g->mu);
		if (!c && !(c = tb_try_malloc(sizeof *c + ASYNC_IN_PIECE)))
			return tb_err_set(err, -ENOMEM, "out of memory queueing the trace");
		memcpy(c->data, p, take);
		p += take;
		n -= take;
		pthread_mutex_lock(&g->mu);
		c->len = take;
		queue_push(&g->in, c);
		pthread_cond_broadcast(&g->cv);
		/* Bounded input: hand output on until the helper has room. */
		while (g->in.bytes > ASYNC_MAX_IN && !g->done) {
			if (g->outq.head) {
				pthread_mutex_unlock(&g->mu);
				int r = deliver(g, false, sink, ctx, err);
				if (r < 0)
					return r;
				pthread_mutex_lock(&g->mu);
			} else {
				pthread_cond_wait(&g->cv, &g->mu);
			}
		}
		pthread_mutex_unlock(&g->mu);
	}
	return deliver(g, false, sink, ctx, err);
}

int tp_gunzip_feed(struct tp_gunzip *g, const uint8_t *p, size_t n, tp_gunzip_sink sink, void *ctx,
                   struct tb_err *err)
{
	int rc =
	    g->async ? async_feed(g, p, n, sink, ctx, err) : inflate_feed(g, p, n, sink, ctx, err);
	if (rc < 0 && g->async)
		async_join(g);
	return rc;
}

int tp_gunzip_finish(struct tp_gunzip *g, tp_gunzip_sink sink, void *ctx, struct tb_err *err)
{
	if (g->async && g->started) {
		pthread_mutex_lock(&g->mu);
		g->closed = true;
		pthread_cond_broadcast(&g->cv);
		pthread_mutex_unlock(&g->mu);
		int rc = deliver(g, true, sink, ctx, err);
		async_join(g);
		return rc;
	}
	if (g->in_member)
		return tb_err_set(err, -EINVAL, "truncated gzip data");
	return 0;
}
