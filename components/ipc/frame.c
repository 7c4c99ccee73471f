/*
 * Framing for Perfetto's IPC: a 4-byte little-endian payload length followed
 * by a protobuf IPCFrame. The receive buffer turns a stream chopped up in
 * any way into whole frames and enforces kIPCBufferSize (128 KiB, length
 * prefix included); the codec packs and unpacks IPCFrame with protobuf-c
 * through the tb_malloc funnel. Sockets and dispatch live in conn.c,
 * host.c and client.c; nothing here does I/O.
 */
#include <errno.h>

#include "ipc.h"

size_t ipc_frame_size(const Perfetto__Protos__IPCFrame *f)
{
	return perfetto__protos__ipcframe__get_packed_size(f);
}

void ipc_frame_pack(const Perfetto__Protos__IPCFrame *f, uint8_t *out, size_t n)
{
	out[0] = (uint8_t)n;
	out[1] = (uint8_t)(n >> 8);
	out[2] = (uint8_t)(n >> 16);
	out[3] = (uint8_t)(n >> 24);
	size_t packed = perfetto__protos__ipcframe__pack(f, out + 4);
	TB_CHECK(packed == n);
}

int ipc_frame_encode(const Perfetto__Protos__IPCFrame *f, uint8_t **out, size_t *len)
{
	size_t n = ipc_frame_size(f);
	*out = NULL;
	*len = 0;
	if (n > IPC_MAX_PAYLOAD)
		return -EMSGSIZE;
	uint8_t *buf = tb_malloc(n + 4);
	ipc_frame_pack(f, buf, n);
	*out = buf;
	*len = n + 4;
	return 0;
}

Perfetto__Protos__IPCFrame *ipc_frame_decode(const uint8_t *p, size_t n)
{
	return perfetto__protos__ipcframe__unpack(protos_allocator(), n, p);
}

void ipc_frame_free(Perfetto__Protos__IPCFrame *f)
{
	if (f)
		perfetto__protos__ipcframe__free_unpacked(f, protos_allocator());
}

/* ---- receive buffer -------------------------------------------------------- */

void ipc_rxbuf_init(struct ipc_rxbuf *rb)
{
	memset(rb, 0, sizeof *rb);
}

void ipc_rxbuf_release(struct ipc_rxbuf *rb)
{
	tb_free(rb->data);
	memset(rb, 0, sizeof *rb);
}

uint8_t *ipc_rxbuf_space(struct ipc_rxbuf *rb, size_t *avail)
{
	if (rb->head > 0) {
		/* Views handed out by ipc_rxbuf_next die here, as documented. */
		memmove(rb->data, rb->data + rb->head, rb->len - rb->head);
		rb->len -= rb->head;
		rb->head = 0;
	}
	if (rb->len == rb->cap && rb->cap < IPC_BUFFER_SIZE) {
		size_t cap = rb->cap ? rb->cap * 2 : 4096;
		if (cap > IPC_BUFFER_SIZE)
			cap = IPC_BUFFER_SIZE;
		rb->data = tb_realloc(rb->data, cap);
		rb->cap = cap;
	}
	*avail = rb->cap - rb->len;
	return rb->data + rb->len;
}

void ipc_rxbuf_commit(struct ipc_rxbuf *rb, size_t n)
{
	TB_CHECK(n <= rb->cap - rb->len);
	rb->len += n;
}

size_t ipc_rxbuf_write(struct ipc_rxbuf *rb, const void *p, size_t n)
{
	size_t avail;
	uint8_t *dst = ipc_rxbuf_space(rb, &avail);
	if (n > avail)
		n = avail;
	if (n)
		memcpy(dst, p, n);
	rb->len += n;
	return n;
}

int ipc_rxbuf_next(struct ipc_rxbuf *rb, const uint8_t **payload, size_t *len)
{
	size_t have = rb->len - rb->head;
	if (have < 4)
		return 0;
	const uint8_t *h = rb->data + rb->head;
	uint32_t n =
	    (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
	if ((uint64_t)n + 4 > IPC_BUFFER_SIZE)
		return -EMSGSIZE;
	if (have - 4 < n)
		return 0;
	*payload = h + 4;
	*len = n;
	rb->head += 4 + (size_t)n;
	if (rb->head == rb->len)
		rb->head = rb->len = 0; /* the view stays valid: no bytes move */
	return 1;
}
