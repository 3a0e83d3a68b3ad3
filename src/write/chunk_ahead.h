/*
 * Chunks made ahead, on a thread of their own (chunk_ahead.c): a producer
 * fills buffers in order (a compressed archive decoded, on another core
 * than the one parsing it), and the consumer takes them in that order,
 * each valid until it takes the next, as libarchive's read callback hands
 * out its blocks.
 */
#ifndef EK_WRITE_CHUNK_AHEAD_H
#define EK_WRITE_CHUNK_AHEAD_H

#include <stddef.h>
#include <sys/types.h>

struct chunk_ahead;

/* Fill buf (size bytes): how many it holds, 0 at the end, -1 on an error.
 * Called on the producer's thread, one call at a time; after 0 or -1,
 * never again. */
typedef ssize_t (*chunk_fill_fn)(void *ctx, void *buf, size_t size);

/* Start the producer: fill(ctx, ...) into buffers of size bytes.
 * -errno when it cannot start (the caller then fills on its own). */
int chunk_ahead_start(chunk_fill_fn fill, void *ctx, size_t size, struct chunk_ahead **out);
/* The next chunk: *out and its length, until the next call; 0 at the
 * end, -1 after an error (and so again on every later call). */
ssize_t chunk_ahead_next(struct chunk_ahead *c, const void **out);
/* Stop the producer once the fill under way returns, and free what it
 * made: afterwards the caller may touch ctx again.  Safe with NULL. */
void chunk_ahead_stop(struct chunk_ahead *c);

#endif
