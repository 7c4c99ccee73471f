/*
 * The protobuf-c allocator of every component that unpacks generated
 * messages (IPC frames, configs, service replies): protobuf-c's allocations
 * go through the tb_malloc funnel, so they are counted and test builds can
 * fail them like any other.
 */
#include "base.h"
#include "protos.h"

static void *protos_alloc(void *data, size_t size)
{
	(void)data;
	return tb_malloc(size ? size : 1);
}

static void protos_free(void *data, void *p)
{
	(void)data;
	tb_free(p);
}

static ProtobufCAllocator protos_allocator_funnel = {protos_alloc, protos_free, NULL};

ProtobufCAllocator *protos_allocator(void)
{
	return &protos_allocator_funnel;
}
