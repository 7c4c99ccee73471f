/*
 * Fuzz target for the protobuf-c code generated from components/protos: the
 * input is decoded as an IPCFrame (payload without the 4-byte length
 * prefix), a TracePacket and a TraceConfig, and, when it is an IPCFrame
 * carrying method args or a reply, those bytes are decoded again as the
 * messages they usually hold. Everything decoded is freed through the
 * tb_malloc funnel, so leaks and overreads show up under ASan.
 * Corpus: tests/fuzz/corpus/ipc_frame/ (frames from the golden transcripts).
 */
#include <stddef.h>
#include <stdint.h>

#include "base.h"
#include "protos.h"

static void *fz_alloc(void *data, size_t size)
{
	(void)data;
	return tb_malloc(size ? size : 1);
}

static void fz_free(void *data, void *p)
{
	(void)data;
	tb_free(p);
}

static ProtobufCAllocator fz_allocator = {fz_alloc, fz_free, NULL};

static void try_unpack(const ProtobufCMessageDescriptor *desc, size_t len, const uint8_t *data)
{
	ProtobufCMessage *m = protobuf_c_message_unpack(desc, &fz_allocator, len, data);
	if (!m)
		return;
	/* Re-encoding must not overrun the size it reports. */
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *out = tb_malloc(n ? n : 1);
	TB_CHECK(protobuf_c_message_pack(m, out) == n);
	tb_free(out);
	protobuf_c_message_free_unpacked(m, &fz_allocator);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Perfetto__Protos__IPCFrame *fr =
	    perfetto__protos__ipcframe__unpack(&fz_allocator, size, data);
	if (fr) {
		ProtobufCBinaryData *b = NULL;
		if (fr->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD)
			b = &fr->msg_invoke_method->args_proto;
		else if (fr->msg_case == PERFETTO__PROTOS__IPCFRAME__MSG_MSG_INVOKE_METHOD_REPLY)
			b = &fr->msg_invoke_method_reply->reply_proto;
		if (b) {
			try_unpack(&perfetto__protos__get_async_command_response__descriptor,
			           b->len, b->data);
			try_unpack(&perfetto__protos__commit_data_request__descriptor, b->len,
			           b->data);
			try_unpack(&perfetto__protos__enable_tracing_request__descriptor, b->len,
			           b->data);
			try_unpack(&perfetto__protos__read_buffers_response__descriptor, b->len,
			           b->data);
		}
		protobuf_c_message_free_unpacked(&fr->base, &fz_allocator);
	}
	try_unpack(&perfetto__protos__ipcframe__descriptor, size, data);
	try_unpack(&perfetto__protos__trace_packet__descriptor, size, data);
	try_unpack(&perfetto__protos__trace_config__descriptor, size, data);
	return 0;
}
