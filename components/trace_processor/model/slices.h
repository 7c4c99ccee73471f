/*
 * Slice stacks (slices.c): the open slices of each track, kept so that
 * begin/end pairs and complete events nest the way Perfetto nests them.
 */
#ifndef TB_TP_SLICES_H
#define TB_TP_SLICES_H

struct tp;
void tp_slices_init(struct tp *tp);
/* End of trace: slices still open keep dur = -1, as in Perfetto. */
void tp_slices_finish(struct tp *tp);
void tp_slices_release(struct tp *tp);

#endif /* TB_TP_SLICES_H */
