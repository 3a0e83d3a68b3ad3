/*
 * The direct path's readahead (used by uring.c): ranges of the image the
 * read layer will want soon, read asynchronously into a pool of aligned
 * chunks, from which later reads copy.  The kernel keeps such a
 * window for buffered files; O_DIRECT files get only what we ask for.
 */
#ifndef EK_IO_STAGE_H
#define EK_IO_STAGE_H

#include <stddef.h>
#include <stdint.h>

struct stage;

/* For fd (opened O_DIRECT) of size bytes; NULL when it cannot be set up
 * (no memory, no io_uring, no thread): reads then go to the file.  Its
 * 16 MiB may grow by up to lend bytes (the caller's memory), no further
 * than the image: *taken is set to what it took. */
struct stage *stage_create(int fd, uint64_t size, uint64_t lend, uint64_t *taken);
/* Start reading [off, off + len) (clipped to the pool and the file)
 * without waiting. */
void stage_fetch(struct stage *s, uint64_t off, uint64_t len);
/* A read of [off, off + len) is coming: start what readahead it calls
 * for (see stage.c), without waiting.  Call it before stage_copy. */
void stage_prepare(struct stage *s, uint64_t off, size_t len);
/* Copy [off, off + len) into dst from chunks that hold it or are reading
 * it (waiting for those): 0, or -ENOENT when not all of it is staged. */
int stage_copy(struct stage *s, void *dst, size_t len, uint64_t off);
/* Waits for the reads in flight; NULL is fine. */
void stage_destroy(struct stage *s);

#endif
