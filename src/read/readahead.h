/*
 * Readahead: a reader that asks for the bytes right after its previous
 * read is sequential; the extents after its request are then decoded in
 * the background into the cache, one window ahead.  Around a random read
 * of extents up to 256 KiB, the rest of its aligned 1 MiB is decoded too.
 */
#ifndef EK_READ_READAHEAD_H
#define EK_READ_READAHEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

struct readahead;

int readahead_create(ek_image *img, struct readahead **out, ek_error *err);
/* Wait for background work, then free. */
void readahead_destroy(struct readahead *ra);
/* What readahead makes of a read that is starting. */
struct ra_plan {
	bool drop_behind;    /* extents it finishes will not be read again */
	bool around;         /* random: [from, to) is decoded after it */
	uint64_t from, to;
};

/* A read of [off, off+len) of inode is starting: readahead is issued for a
 * sequential reader; a random read's window has its pclusters fetched
 * with the read's own. */
void readahead_note(struct readahead *ra, ek_inode *inode, uint64_t off,
		    size_t len, struct ra_plan *plan);
/* The read has been served: decode the rest of its window, if planned. */
void readahead_around(struct readahead *ra, ek_inode *inode,
		      const struct ra_plan *plan);

#endif
