/*
 * TracePacket.journald_event (132, SystemdJournaldEvent): systemd journal
 * entries from linux.systemd_journald, into the unified logs table as
 * Perfetto v57 imports them (its LinuxProbesParser):
 *
 *   logs.ts          the packet's timestamp (sorted like any event)
 *   logs.utid        the thread tid (tid absent: pid) of process pid; NULL
 *                    when pid is absent or 0
 *   logs.prio        prio as written (journald's 0 EMERG .. 7 DEBUG); 0 when
 *                    absent
 *   logs.log_source  'systemd_journald'
 *   logs.tag, msg    tag, message (NULL when absent, as Perfetto's empty
 *                    string interns)
 *   args             uid (int), comm, systemd_unit, hostname, transport
 *                    (strings), each only when present
 *
 * A packet with num_total or num_failed is the data source's counters, not
 * an entry: they set the stats systemd_journal_num_total / _num_failed (the
 * last packet wins) and no row is added. The module
 * linux.systemd_journald's view linux_systemd_journald_logs reads these
 * rows back with their args.
 */
#include "proto_int.h"

enum {
	JE_PID = 1,
	JE_TID = 2,
	JE_UID = 3,
	JE_PRIO = 5,
	JE_TAG = 6,
	JE_MESSAGE = 7,
	JE_COMM = 8,
	JE_SYSTEMD_UNIT = 10,
	JE_HOSTNAME = 11,
	JE_TRANSPORT = 12,
	JE_NUM_TOTAL = 20,
	JE_NUM_FAILED = 21,
};

/* The string args, in Perfetto's order. */
static const struct {
	uint32_t field;
	const char *key;
} journald_str_args[] = {
    {JE_COMM, "comm"},
    {JE_SYSTEMD_UNIT, "systemd_unit"},
    {JE_HOSTNAME, "hostname"},
    {JE_TRANSPORT, "transport"},
};

void tp_proto_journald_parse(struct proto_importer *im, int64_t ts, const uint8_t *p, size_t n)
{
	struct tp *tp = im->tp;
	struct pb_reader r;
	struct pb_field f = {0};
	/* Last occurrence of each field wins, as for any proto2 scalar. */
	struct pb_field str[13] = {{0}};
	bool has[22] = {false};
	uint64_t v[22] = {0};

	pb_reader_init(&r, p, n);
	while (pb_next(&r, &f)) {
		if (f.id >= TB_ARRAY_SIZE(has))
			continue;
		if (f.wire == PB_WIRE_LEN) {
			if (f.id < TB_ARRAY_SIZE(str)) {
				str[f.id] = f;
				has[f.id] = true;
			}
		} else if (f.wire == PB_WIRE_VARINT) {
			v[f.id] = f.val;
			has[f.id] = true;
		}
	}
	if (pb_reader_error(&r)) {
		tp_stat_inc(tp, TP_STAT_invalid_trace_packet);
		return;
	}
	if (has[JE_NUM_TOTAL] || has[JE_NUM_FAILED]) {
		if (has[JE_NUM_FAILED])
			tp_stat_set(tp, TP_STAT_systemd_journal_num_failed,
			            (int64_t)v[JE_NUM_FAILED]);
		if (has[JE_NUM_TOTAL])
			tp_stat_set(tp, TP_STAT_systemd_journal_num_total,
			            (int64_t)v[JE_NUM_TOTAL]);
		return;
	}

	uint32_t pid = has[JE_PID] ? (uint32_t)v[JE_PID] : 0;
	uint32_t tid = has[JE_TID] ? (uint32_t)v[JE_TID] : pid;
	uint32_t utid = pid ? tp_thread_for_tid(tp, tid, pid) : TP_NULL_U32;
	uint32_t tag = 0, msg;
	if (has[JE_TAG] && str[JE_TAG].wire == PB_WIRE_LEN)
		tag = tp_intern(tp, (const char *)str[JE_TAG].data, str[JE_TAG].len);
	if (has[JE_MESSAGE] && str[JE_MESSAGE].wire == PB_WIRE_LEN)
		msg = tp_intern(tp, (const char *)str[JE_MESSAGE].data, str[JE_MESSAGE].len);
	else
		msg = tp_intern(tp, "", 0);

	struct tp_args_builder *b = &im->args;
	tp_args_begin(b);
	if (has[JE_UID] && str[JE_UID].wire != PB_WIRE_LEN) {
		uint32_t k = tp_intern_cstr(tp, "uid");
		tp_args_add_int(b, k, k, (int64_t)(uint32_t)v[JE_UID]);
	}
	for (size_t i = 0; i < TB_ARRAY_SIZE(journald_str_args); i++) {
		const struct pb_field *sf = &str[journald_str_args[i].field];
		if (!has[journald_str_args[i].field] || sf->wire != PB_WIRE_LEN)
			continue;
		uint32_t k = tp_intern_cstr(tp, journald_str_args[i].key);
		tp_args_add_string(b, k, k, tp_intern(tp, (const char *)sf->data, sf->len));
	}

	struct tp_logs_table *t = &tp->t.logs;
	uint32_t row = tp_logs_append(t);
	t->ts[row] = ts;
	t->utid[row] = utid;
	t->prio[row] = has[JE_PRIO] ? (int64_t)(uint32_t)v[JE_PRIO] : 0;
	t->log_source[row] = tp_intern_cstr(tp, "systemd_journald");
	t->tag[row] = tag;
	t->msg[row] = msg;
	t->arg_set_id[row] = tp_args_commit(tp, b);
}
