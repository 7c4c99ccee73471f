/*
 * The sorter (sorter/sorter.c): the one place events are put in timestamp
 * order, between an importer's tokenizer and its parser.
 */
#ifndef TB_TP_SORTER_H
#define TB_TP_SORTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp;
struct tp_sorter;

/* Importers push events with their trace-clock timestamp; the sorter hands
 * them back to the importer's parse callback in ts order (ties: see
 * sorter.c, Perfetto's queue order, else push order). The
 * payload is copied into sorter-owned memory that lives until the event was
 * parsed. Events are kept in one run per source (e.g. a packet sequence),
 * merged at dispatch. All of these run on the caller's (parsing) thread. */
typedef void (*tp_sorted_fn)(struct tp *tp, int64_t ts, const void *payload, size_t len, void *ctx);
struct tp_sorter *tp_sorter_new(void);
void tp_sorter_free(struct tp_sorter *s);
/* Copy len bytes of payload (or reserve them when payload is NULL) into run
 * src (a small dense index chosen by the importer); returns a pointer to the
 * copy (valid until it has been dispatched) so the caller may fill it in
 * place. Returns NULL when ts is older than an event already dispatched by
 * tp_sorter_extract: the event is dropped and counted as
 * sorter_push_event_out_of_order. */
void *tp_sorter_push_src(struct tp_sorter *s, uint32_t src, int64_t ts, const void *payload,
                         size_t len);
/* tp_sorter_push_src into run 0; never NULL unless tp_sorter_extract ran. */
void *tp_sorter_push(struct tp_sorter *s, int64_t ts, const void *payload, size_t len);
/* n events into run src at once, as n tp_sorter_push_src calls would push
 * them: event i has timestamp ts[i] and the size bytes at recs + i * size
 * (size <= 256). For importers that decode arrays of fixed records (e.g.
 * compact_sched); the per-event bookkeeping is done once for the batch.
 * Returns how many were kept (late ones are dropped and counted). */
size_t tp_sorter_push_many(struct tp_sorter *s, uint32_t src, const int64_t *ts, const void *recs,
                           size_t size, size_t n);
/* Run src is a queue of its own, not part of the shared one, for the tie
 * order at equal timestamps (see sorter.c): an ftrace cpu's run, as
 * Perfetto's per-cpu queues. Call before its first push. */
void tp_sorter_own_queue(struct tp_sorter *s, uint32_t src);
/* Streaming: true once the buffered events pass the window (32 MiB by
 * default); then tp_sorter_extract dispatches, in order, every event no run
 * can still precede (ts <= the smallest latest ts of the runs with pending
 * events) and releases their memory. Late events after that are dropped. */
bool tp_sorter_want_extract(const struct tp_sorter *s);
void tp_sorter_extract(struct tp_sorter *s, struct tp *tp, tp_sorted_fn fn, void *ctx);
void tp_sorter_set_window(struct tp_sorter *s, size_t bytes);
/* Run src is expected to bring events (on) although it has pushed none yet
 * (a cpu whose ftrace data comes after other cpus' of the same drain):
 * streaming extracts nothing until it pushes, is set off, or has been idle
 * while 64 MiB of other events arrived. No effect on a run that pushed. */
void tp_sorter_expect(struct tp_sorter *s, uint32_t src, bool on);
/* Events buffered, not yet dispatched. */
size_t tp_sorter_pending(const struct tp_sorter *s);
/* Dispatch every pushed event in order and forget them. */
void tp_sorter_flush(struct tp_sorter *s, struct tp *tp, tp_sorted_fn fn, void *ctx);

#endif /* TB_TP_SORTER_H */
