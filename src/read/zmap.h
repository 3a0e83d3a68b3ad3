/* The extent map of compressed files: full and compact indexes, big
 * pclusters, tail packing, fragments (zmap.c; 48-bit extents: zextents.c). */
#ifndef EK_READ_ZMAP_H
#define EK_READ_ZMAP_H

#include <stdint.h>

#include "read/internal.h"

/* Read and validate the map header; called when the inode is loaded. */
int zmap_init(ek_inode *inode, ek_error *err);
void zmap_fini(ek_inode *inode);
/* The extent holding file byte `offset` (< i_size). */
int zmap_map(ek_inode *inode, uint64_t offset, ek_extent *out, ek_error *err);

#endif
