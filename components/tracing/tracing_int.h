/*
 * Private declarations shared by the files of components/tracing.
 */
#ifndef TB_TRACING_INT_H
#define TB_TRACING_INT_H

#include "tracing.h"

struct tracing_smb {
	uint8_t *base;
	size_t size, page_size, num_pages;
	int fd;          /* -1 for wrapped memory */
	bool mapped;     /* base came from mmap and is unmapped on free */
	unsigned layout; /* default layout for new partitions */
	size_t cursor;   /* page to start the next free-chunk search at */
};

#endif /* TB_TRACING_INT_H */
