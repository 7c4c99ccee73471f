/*
 * Kernel addresses in ftrace events, as Perfetto records them: a field the
 * kernel declares as a code address (sched_blocked_reason's caller) is
 * written as a small index, not the address, so a trace does not give away
 * the kernel's KASLR layout; with FtraceConfig.symbolize_ksyms the packet
 * that first uses an index also carries its symbol name from /proc/kallsyms
 * (base/kallsyms.c), as TracePacket.interned_data.kernel_symbols {iid, str}.
 * The trace processor resolves the index there (thread_state's
 * blocked_function).
 *
 * Indexes restart at 1 after every drain (probes_ftrace_kaddrs_clear), so interned
 * names never refer to packets a ring buffer may have overwritten; the first
 * packet naming symbols after a restart says
 * PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED, so the reader forgets the previous
 * ones. Addresses with no symbol get no name, and then the watermark stays (the next packet with a
 * name still clears).
 */
#include "ftrace_int.h"
#include "pb_fields.h"

uint32_t probes_ftrace_kaddrs_add(struct ftrace_kaddrs *k, uint64_t addr)
{
	uint64_t idx;
	if (hmap_get(&k->index, addr, &idx))
		return (uint32_t)idx;
	vec_push(&k->addrs, addr);
	hmap_put(&k->index, addr, k->addrs.len);
	return (uint32_t)k->addrs.len;
}

void probes_ftrace_kaddrs_clear(struct ftrace_kaddrs *k)
{
	hmap_clear(&k->index);
	vec_clear(&k->addrs);
	k->written = 0;
}

void probes_ftrace_kaddrs_release(struct ftrace_kaddrs *k)
{
	hmap_release(&k->index);
	vec_release(&k->addrs);
	k->written = 0;
}

void probes_ftrace_kaddrs_write_names(struct pb_writer *w, struct ftrace_kaddrs *k,
                                      const struct ksyms *syms)
{
	bool any = false;
	unsigned h = 0;

	for (size_t i = k->written; i < k->addrs.len; i++) {
		const char *name = ksyms_lookup(syms, k->addrs.data[i]);
		unsigned e;
		if (!name)
			continue;
		if (!any) {
			if (k->written == 0)
				pb_put_varint(
				    w, PB_F_TracePacket_sequence_flags,
				    PB_E_TracePacket_SequenceFlags_SEQ_INCREMENTAL_STATE_CLEARED);
			h = pb_begin_nested(w, PB_F_TracePacket_interned_data);
			any = true;
		}
		e = pb_begin_nested(w, PB_F_InternedData_kernel_symbols);
		pb_put_varint(w, PB_F_InternedString_iid, i + 1);
		pb_put_string(w, PB_F_InternedString_str, name);
		pb_end_nested(w, e);
	}
	if (any) {
		pb_end_nested(w, h);
		k->written = k->addrs.len;
	}
}
