/*
 * One buffer cut into pieces that are given back in the order they were
 * taken, as a ring: for data that queues in order, read into memory and
 * freed as it leaves the queue.  The pieces reuse the same memory, where
 * a fresh allocation for each (a small file read whole) cost page faults
 * as the allocator gave memory back and took it again: 110 MB of faults
 * on the small-files tree.  Not for sharing between threads.
 *
 * The buffer starts small and grows to its limit the first time a piece
 * does not fit: a build of a few files (every fuzzing run) never pays for
 * the whole ring, which under AddressSanitizer costs its size in shadow
 * memory written at each allocation and each free.  Pieces still out of
 * the buffer it outgrew are only counted; it goes when the last comes
 * back.
 */
#ifndef EK_UTIL_FIFOBUF_H
#define EK_UTIL_FIFOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fifobuf {
	uint8_t *base;
	size_t cap;
	size_t max;              /* the most cap grows to */
	size_t head;             /* where the next piece goes */
	size_t tail;             /* where the oldest piece starts */
	size_t end;              /* wrapped: where the pieces before 0 end */
	bool wrapped;            /* pieces out at [tail, end) and [0, head) */
	size_t live;             /* pieces out */
	uint8_t *outgrown;       /* the first buffer, once grown out of */
	size_t outgrown_cap;
	size_t outgrown_live;    /* its pieces still out */
};

/* A buffer of first bytes, that may grow to max (>= first); 0 or
 * -ENOMEM. */
int fifobuf_init(struct fifobuf *f, size_t first, size_t max);
/* A piece of len bytes, or NULL when len is 0 or does not fit now. */
uint8_t *fifobuf_take(struct fifobuf *f, size_t len);
/* Give back a piece of len bytes: the oldest out, or the newest (taken,
 * then not queued after all). */
void fifobuf_give(struct fifobuf *f, const uint8_t *piece, size_t len);
/* Its memory goes; take then gives NULL, and fini may come again. */
void fifobuf_fini(struct fifobuf *f);

#endif
