/*
 * Input stages of the trace processor that sit before format sniffing:
 * gzip unwrapping (gunzip.c), and zlib inflation of in-trace payloads such as
 * compressed_packets (inflate.c).
 */
#ifndef TB_TP_IO_H
#define TB_TP_IO_H

#include <stddef.h>
#include <stdint.h>

#include "base.h"

struct tp_gunzip;
typedef int (*tp_gunzip_sink)(void *ctx, const uint8_t *p, size_t n);

struct tp_gunzip *tp_gunzip_new(void);
void tp_gunzip_free(struct tp_gunzip *g);
/* Inflate n more bytes of a gzip stream, passing decoded bytes to sink as
 * they come. Returns 0, a sink's negative code, or -EINVAL (err set) on
 * corrupt data. */
int tp_gunzip_feed(struct tp_gunzip *g, const uint8_t *p, size_t n, tp_gunzip_sink sink, void *ctx,
		   struct tb_err *err);
/* End of input: -EINVAL (err set) if a member was cut short. */
int tp_gunzip_finish(struct tp_gunzip *g, struct tb_err *err);

/* Inflate a zlib (RFC 1950) buffer of at most max_out bytes into *out
 * (tb_malloc'd, caller frees). Returns 0 or -EINVAL / -EFBIG. */
int tp_zlib_inflate(const uint8_t *p, size_t n, size_t max_out, uint8_t **out, size_t *out_len);

#endif /* TB_TP_IO_H */
