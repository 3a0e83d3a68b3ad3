/* File data of the uncompressed layouts (plain.c). */
#ifndef EK_READ_PLAIN_H
#define EK_READ_PLAIN_H

#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

/* Read [off, off + len), within i_size, of a flat or chunk-based file. */
int plain_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	       ek_error *err);
/* The extent of such a file holding byte `offset` (< i_size). */
int plain_map(ek_inode *inode, uint64_t offset, ek_extent *out, ek_error *err);

#endif
