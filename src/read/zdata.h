/* Bytes of compressed files (zdata.c). */
#ifndef EK_READ_ZDATA_H
#define EK_READ_ZDATA_H

#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

/*
 * Read [off, off + len) of a compressed file into buf, within i_size.  It
 * stops before an extent that lives in the packed inode (a fragment),
 * which is not its to read: *done is the bytes read, less than len only
 * then, with the fragment at off + *done.
 */
int zdata_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	       size_t *done, ek_error *err);

#endif
