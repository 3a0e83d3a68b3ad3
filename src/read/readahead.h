/*
 * Readahead: a reader that asks for the bytes right after its previous
 * read is sequential; the extents after its request are then decoded in
 * the background into the cache, one window ahead.  Around a random read
 * of small extents, the rest of its aligned window is decoded too.
 */
#ifndef EK_READ_READAHEAD_H
#define EK_READ_READAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

struct ek_readahead;

int readahead_create(ek_image *img, struct ek_readahead **out, ek_error *err);
/* Wait for background work, then free. */
void readahead_destroy(struct ek_readahead *ra);
/* A read of [off, off+len) of inode is starting; true when it continues
 * the previous one (sequential: readahead is under way). */
bool readahead_note(struct ek_readahead *ra, ek_inode *inode, uint64_t off,
		    size_t len);
/* A random read at off has been served: decode what is around it, if its
 * extents are small. */
void readahead_around(struct ek_readahead *ra, ek_inode *inode, uint64_t off);

/* zcache.c: decode the compressed extents of [off, end) into the cache,
 * reading each batch's pclusters while the previous batch decodes, and
 * skipping what lies before *reader (where the reader has got to; NULL:
 * nothing to skip); no error is reported (the reader meets it again). */
void zcache_fill_ahead(ek_inode *inode, uint64_t off, uint64_t end,
		       const _Atomic uint64_t *reader);
/* zcache.c: ask the I/O back end to start reading the pclusters of
 * [off, end) (those of one file usually lie in one run). */
void zcache_prefetch(ek_inode *inode, uint64_t off, uint64_t end);

#endif
