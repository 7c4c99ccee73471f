/*
 * RPC server benchmark (components/trace_processor/rpc/): what answering
 * the Perfetto UI costs on top of the trace processor itself.
 *   - query results: CPU time to step a 1 M-row query (int, double, string)
 *     through SQLite reading every cell, and to encode the same rows into
 *     QueryResult / CellsBatch responses (tp_result_next); ns per row for
 *     each, MB of responses, batches;
 *   - trace upload: a synthetic JSON trace (~TB_BENCH_MB MB, default 64)
 *     loaded by tp_parse in 32 MiB slices (the UI's slice size) and through
 *     tp_rpc_feed as APPEND_TRACE_DATA requests arriving in 64 KiB pieces
 *     (a stream transport: every request buffered whole first); CPU MB/s.
 * Prints figures; asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base.h"
#include "pb.h"
#include "rpc/rpc.h"
#include "sqlite3.h"
#include "trace_processor.h"

#define ROWS 1000000
#define SLICE ((size_t)32 << 20)

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char query[] =
    "with recursive r(i) as (select 0 union all select i + 1 from r "
    "where i < 999999) select i, i * 0.5 as d, 'name' || (i % 100) as s from r";

static void bench_query(void)
{
	struct tp *tp = tp_new(NULL);
	sqlite3_stmt *st = NULL;
	uint64_t sink = 0;
	double t0 = cpu_s();
	sqlite3_prepare_v2(tp_db(tp), query, -1, &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW)
		sink += (uint64_t)sqlite3_column_int64(st, 0) +
		        (uint64_t)sqlite3_column_double(st, 1) +
		        (uint64_t)sqlite3_column_bytes(st, 2);
	sqlite3_finalize(st);
	double sql_s = cpu_s() - t0;

	struct pb_writer w;
	size_t bytes = 0;
	unsigned batches = 0;
	pb_writer_init_growable(&w);
	t0 = cpu_s();
	struct tp_result *r = tp_result_new(tp, query, strlen(query));
	for (bool more = true; more; batches++) {
		pb_writer_reset(&w);
		more = tp_result_next(r, &w);
		bytes += pb_writer_size(&w);
	}
	tp_result_free(r);
	double enc_s = cpu_s() - t0;
	printf("query %d rows x 3 cells: sqlite alone %.0f ns/row, with QueryResult encoding %.0f "
	       "ns/row (+%.0f%%); %.1f MB in %u batches (sink %llu)\n",
	       ROWS, sql_s * 1e9 / ROWS, enc_s * 1e9 / ROWS, (enc_s / sql_s - 1) * 100, bytes / 1e6,
	       batches, (unsigned long long)sink % 10);
	pb_writer_release(&w);
	tp_free(tp);
}

static void discard(void *ctx, const uint8_t *p, size_t n)
{
	(void)ctx, (void)p, (void)n;
}

/* A JSON trace of about mb MB: X events on 8 threads. */
static char *make_json(size_t mb, size_t *len)
{
	size_t cap = mb << 20, n = 0;
	char *s = tb_malloc(cap + 256);
	n += (size_t)snprintf(s, cap, "{\"traceEvents\":[\n");
	for (unsigned long i = 0; n < cap - 200; i++)
		n += (size_t)snprintf(
		    s + n, cap + 256 - n,
		    "{\"ph\":\"X\",\"name\":\"slice%lu\",\"cat\":\"c\",\"ts\":%lu,\"dur\":5,"
		    "\"pid\":1,\"tid\":%lu},\n",
		    i % 1000, i * 10, i % 8);
	n += (size_t)snprintf(s + n, cap + 256 - n,
	                      "{\"ph\":\"i\",\"name\":\"end\",\"ts\":0,\"pid\":1,\"tid\":1}]}\n");
	*len = n;
	return s;
}

static void bench_upload(void)
{
	const char *env = getenv("TB_BENCH_MB");
	size_t mb = env ? (size_t)strtoul(env, NULL, 10) : 64, len;
	char *json = make_json(mb ? mb : 64, &len);
	const uint8_t *p = (const uint8_t *)json;

	double t0 = cpu_s();
	struct tp *tp = tp_new(NULL);
	for (size_t off = 0; off < len; off += SLICE)
		tp_parse(tp, p + off, len - off < SLICE ? len - off : SLICE);
	tp_end_of_file(tp);
	tp_free(tp);
	double direct_s = cpu_s() - t0;

	/* The same slices as APPEND_TRACE_DATA requests, then FINALIZE. */
	struct pb_writer w;
	pb_writer_init_growable(&w);
	int64_t seq = 1;
	for (size_t off = 0; off < len; off += SLICE) {
		unsigned h = pb_begin_nested(&w, 1);
		pb_put_int64(&w, 1, seq++);
		pb_put_int32(&w, 2, 1);
		pb_put_bytes(&w, 101, p + off, len - off < SLICE ? len - off : SLICE);
		pb_end_nested(&w, h);
	}
	unsigned h = pb_begin_nested(&w, 1);
	pb_put_int64(&w, 1, seq++);
	pb_put_int32(&w, 2, 2);
	pb_end_nested(&w, h);
	size_t slen;
	uint8_t *stream = pb_writer_take(&w, &slen);
	t0 = cpu_s();
	struct tp_rpc *rpc = tp_rpc_new(NULL, NULL, NULL);
	for (size_t off = 0; off < slen; off += 65536)
		tp_rpc_feed(rpc, stream + off, slen - off < 65536 ? slen - off : 65536, discard,
		            NULL);
	tp_rpc_free(rpc);
	double rpc_s = cpu_s() - t0;
	printf("upload %.1f MB JSON: tp_parse %.0f MB/s CPU, through the RPC stream %.0f MB/s CPU "
	       "(+%.0f%%)\n",
	       len / 1e6, len / 1e6 / direct_s, len / 1e6 / rpc_s, (rpc_s / direct_s - 1) * 100);
	tb_free(stream);
	tb_free(json);
}

int main(void)
{
	bench_query();
	bench_upload();
	return 0;
}
