/* mkfs --block-list-file: which blocks of the image hold each file's data. */
#ifndef EK_TOOLS_BLOCKLIST_H
#define EK_TOOLS_BLOCKLIST_H

#include "erofskit/erofskit.h"

/*
 * Write the block list of the image at `image` to `out`, as Android's
 * build reads one (mkfs.erofs --block-list-file): a line per regular file
 * with data in blocks of its own, "/MOUNT_POINT/PATH RANGE...", each
 * RANGE a block number or "FIRST-LAST", ascending.  Data inline after an
 * inode or in the packed inode shares its block with other files and is
 * not listed.  The file appears whole or not at all; block numbers count
 * from the image's start, `offset` bytes into its file.  0, or -errno
 * with err filled.
 */
int write_block_list(const char *image, uint64_t offset, const char *mount_point,
		     const char *out, ek_error *err);

#endif
