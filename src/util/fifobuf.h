/*
 * One buffer cut into pieces that are given back in the order they were
 * taken, as a ring: for data that queues in order, read into memory and
 * freed as it leaves the queue.  The pieces reuse the same memory, where
 * a fresh allocation for each (a small file read whole) cost page faults
 * as the allocator gave memory back and took it again: 110 MB of faults
 * on the small-files tree.  Not for sharing between threads.
 */
#ifndef EK_UTIL_FIFOBUF_H
#define EK_UTIL_FIFOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fifobuf {
	uint8_t *base;
	size_t cap;
	size_t head;             /* where the next piece goes */
	size_t tail;             /* where the oldest piece starts */
	size_t end;              /* wrapped: where the pieces before 0 end */
	bool wrapped;            /* pieces out at [tail, end) and [0, head) */
	size_t live;             /* pieces out */
};

/* 0 or -ENOMEM. */
int fifobuf_init(struct fifobuf *f, size_t cap);
/* A piece of len bytes, or NULL when len is 0 or does not fit now. */
uint8_t *fifobuf_take(struct fifobuf *f, size_t len);
/* Give back a piece of len bytes: the oldest out, or the newest (taken,
 * then not queued after all). */
void fifobuf_give(struct fifobuf *f, const uint8_t *piece, size_t len);
/* Its memory goes; take then gives NULL, and fini may come again. */
void fifobuf_fini(struct fifobuf *f);

#endif
