/* What every fuzz target does with an image: touch everything, bounded. */
#ifndef EK_FUZZ_WALK_H
#define EK_FUZZ_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

/* Walk the tree: stat, xattrs, links, directory blocks, extent maps and
 * data of every inode, within fixed budgets so that no input makes a run
 * slow (sizes and counts in images are attacker-chosen). */
void fuzz_walk_image(ek_image *img);

/* Open bytes as an image with the given deflate engine and walk it. */
void fuzz_open_and_walk(const uint8_t *data, size_t size, const char *engine,
			size_t cache_bytes);

/* An image with extra devices (up to 4): open it again with the same
 * bytes given as each device's own file, so that its slots and chunk
 * device ids steer the routed reads, and walk it. */
void fuzz_open_with_devices(const uint8_t *data, size_t size);

#endif
