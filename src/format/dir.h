/* Directory blocks (spec section 4): parse with validation, and build. */
#ifndef EK_FORMAT_DIR_H
#define EK_FORMAT_DIR_H

#include <stddef.h>
#include <stdint.h>

#include "format/ondisk.h"

struct fmt_dirent {
	uint64_t nid;
	uint8_t type;              /* enum erofs_ftype */
	uint16_t name_len;
	const uint8_t *name;       /* points into the block */
};

/* Most entries a block of blksz bytes can hold (12-byte dirent + 1-byte
 * name each). */
static inline unsigned int fmt_dirblock_max_entries(uint32_t blksz)
{
	return blksz / (EROFS_DIRENT_SIZE + 1);
}

/*
 * Parse and validate one directory block.  `valid` is the number of bytes
 * of the block that belong to the directory (blksz, or less for the last
 * block).  Fills ents[0..*count) (ents must hold
 * fmt_dirblock_max_entries(blksz)).  Checks: first nameoff within
 * [12, blksz) and inside the valid bytes, strictly increasing name offsets,
 * names 1..255 bytes without '/' or NUL, file type < 8, names strictly
 * increasing in byte order.  Returns 0 or -EUCLEAN.
 */
int fmt_dirblock_parse(const uint8_t *blk, size_t valid, uint32_t blksz,
		       struct fmt_dirent *ents, unsigned int *count,
		       fmt_why *why);

/* memcmp order with the prefix rule: the order the kernel's lookup needs. */
int fmt_name_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* Writer side: one entry to store. */
struct fmt_dirent_in {
	const uint8_t *name;
	uint16_t name_len;
	uint64_t nid;
	uint8_t type;
};

/* Size in bytes of a directory holding these entries (already sorted,
 * "." and ".." included), blocks filled greedily. */
uint64_t fmt_dir_size(const struct fmt_dirent_in *ents, size_t n,
		      uint32_t blksz);

/* Serialize into out[fmt_dir_size(...)]. */
void fmt_dir_encode(const struct fmt_dirent_in *ents, size_t n,
		    uint32_t blksz, uint8_t *out);

#endif
