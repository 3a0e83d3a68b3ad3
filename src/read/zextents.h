/* 48-bit encoded extents (spec 6.14): an alternative compressed index. */
#ifndef EK_READ_ZEXTENTS_H
#define EK_READ_ZEXTENTS_H

#include "format/zindex.h"
#include "read/internal.h"

int zextents_init(ek_inode *inode, const struct fmt_zmap_header *h,
		  ek_error *err);
int zextents_map(ek_inode *inode, uint64_t la, ek_extent *out, ek_error *err);
void zextents_fini(ek_inode *inode);

#endif
