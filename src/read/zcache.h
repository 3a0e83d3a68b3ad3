/*
 * Filling the decoded-extent cache, a batch at a time (zcache.c): for a
 * reader, for readahead, and the I/O hint before either.
 */
#ifndef EK_READ_ZCACHE_H
#define EK_READ_ZCACHE_H

#include <stdatomic.h>
#include <stdint.h>

#include "read/internal.h"

/* The image's pool of batches (img->batches) makes and frees them. */
void *zcache_batch_new(void);
void zcache_batch_free(void *batch);

/* Make sure the compressed extents of [off, end) are cached, or being
 * decoded by another thread (cache_wait() for those). */
int zcache_fill(ek_inode *inode, uint64_t off, uint64_t end, ek_error *err);

/* Decode the compressed extents of [off, end) into the cache, reading each
 * batch's pclusters while the previous batch decodes, and skipping what
 * lies before *reader (where the reader has got to; NULL: nothing to
 * skip); no error is reported (the reader meets it again). */
void zcache_fill_ahead(ek_inode *inode, uint64_t off, uint64_t end,
		       const _Atomic uint64_t *reader);

/* Ask the I/O back end to start reading the pclusters of [off, end)
 * (those of one file usually lie in one run). */
void zcache_prefetch(ek_inode *inode, uint64_t off, uint64_t end);

#endif
