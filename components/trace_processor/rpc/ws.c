/*
 * WebSocket (RFC 6455) frames for the RPC server's /websocket: decoding the
 * client's masked frames, the header of our unmasked ones, and the
 * handshake's Sec-WebSocket-Accept (SHA-1 and base64 from mbedtls).
 *
 *    0               1               2               3
 *   +-+-+-+-+-------+-+-------------+-------------------------------+
 *   |F|R|R|R|opcode |M| length 0-125| extended length: 16 bits when |
 *   |I|S|S|S|  (4)  |A| 126: 16 bit | length is 126, 64 bits when   |
 *   |N|V|V|V|       |S| 127: 64 bit | it is 127 (network order)     |
 *   +-+-+-+-+-------+-+-------------+-------------------------------+
 *   | masking key (4 bytes, client frames only)                     |
 *   +---------------------------------------------------------------+
 *   | payload (XORed with the key, byte i with key[i % 4])          |
 *   +---------------------------------------------------------------+
 */
#include <errno.h>
#include <string.h>

#include "mbedtls/base64.h"
#include "mbedtls/sha1.h"
#include "rpc.h"

static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

long tp_ws_decode(uint8_t *buf, size_t len, size_t max_payload, struct tp_ws_frame *f)
{
	size_t off = 2;
	uint64_t plen;
	if (len < 2)
		return 0;
	uint8_t h0 = buf[0], h1 = buf[1];
	if (h0 & 0x70)
		return -EPROTO; /* RSV bits without a negotiated extension */
	if (!(h1 & 0x80))
		return -EPROTO; /* client frames must be masked */
	f->fin = h0 & 0x80;
	f->opcode = h0 & 0x0f;
	switch (f->opcode) {
	case TP_WS_CONT:
	case TP_WS_TEXT:
	case TP_WS_BINARY:
		break;
	case TP_WS_CLOSE:
	case TP_WS_PING:
	case TP_WS_PONG:
		if (!f->fin || (h1 & 0x7f) > 125)
			return -EPROTO;
		break;
	default:
		return -EPROTO;
	}
	plen = h1 & 0x7f;
	if (plen >= 126) {
		size_t ext = plen == 126 ? 2 : 8;
		if (len < off + ext)
			return 0;
		plen = 0;
		for (size_t i = 0; i < ext; i++)
			plen = plen << 8 | buf[off + i];
		off += ext;
		/* The minimal length encoding is required, and the top bit is 0. */
		if ((ext == 2 && plen < 126) || (ext == 8 && (plen <= 0xffff || plen >> 63)))
			return -EPROTO;
	}
	if (plen > max_payload)
		return -EMSGSIZE;
	if (len < off + 4)
		return 0;
	uint8_t mask[4];
	memcpy(mask, buf + off, 4);
	off += 4;
	if (len - off < plen)
		return 0;
	f->payload = buf + off;
	f->len = (size_t)plen;
	for (size_t i = 0; i < f->len; i++)
		f->payload[i] ^= mask[i & 3];
	return (long)(off + f->len);
}

size_t tp_ws_header(uint8_t out[10], enum tp_ws_opcode opcode, uint64_t len)
{
	out[0] = (uint8_t)(0x80 | opcode);
	if (len < 126) {
		out[1] = (uint8_t)len;
		return 2;
	}
	if (len <= 0xffff) {
		out[1] = 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		return 4;
	}
	out[1] = 127;
	for (int i = 0; i < 8; i++)
		out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
	return 10;
}

int tp_ws_accept_key(const char *key, size_t key_len, char out[29])
{
	char buf[24 + sizeof ws_guid];
	unsigned char digest[20];
	size_t olen = 0;
	if (key_len != 24)
		return -EINVAL;
	memcpy(buf, key, 24);
	memcpy(buf + 24, ws_guid, sizeof ws_guid - 1);
	if (mbedtls_sha1_ret((const unsigned char *)buf, 24 + sizeof ws_guid - 1, digest) != 0 ||
	    mbedtls_base64_encode((unsigned char *)out, 29, &olen, digest, sizeof digest) != 0 ||
	    olen != 28)
		return -EINVAL;
	out[28] = '\0';
	return 0;
}
