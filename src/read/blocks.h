/* Raw image bytes and metadata, bounds-checked (blocks.c). */
#ifndef EK_READ_BLOCKS_H
#define EK_READ_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "erofskit/erofskit.h"

/* What the metadata cache (img->metacache, 4 KiB blocks) may hold. */
#define BLOCKS_METACACHE_BYTES (16u << 20)

/* Read raw image bytes (data area). */
int image_read(ek_image *img, uint64_t off, void *buf, size_t len,
	       ek_error *err);

/* Read len bytes of image metadata at offset in the main address space
 * (in_metabox false, through the metadata cache) or inside the metabox. */
int meta_read(ek_image *img, bool in_metabox, uint64_t off, void *buf,
	      size_t len, ek_error *err);

#endif
