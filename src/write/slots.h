/* Where inode records go in a metadata area. */
#ifndef EK_WRITE_SLOTS_H
#define EK_WRITE_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Offsets within an area, from `start` (a slot boundary), for `count`
 * records of the given sizes in bytes, given in the order the area is
 * read: each on a 32-byte slot, none of a block or less crossing a block
 * boundary.  A plain area packs tight, moving some records ahead into
 * the end of a block the next one does not fit; a compressed one (the
 * metabox) keeps neighbours together.  *end: the end of the last.  The
 * same on every run.  0 or -ENOMEM.
 */
int slots_place(const uint32_t *sizes, size_t count, uint32_t blksz, uint64_t start,
		bool compressed, uint64_t *offsets, uint64_t *end);

#endif
