/* File data of every layout (data.c). */
#ifndef EK_READ_DATA_H
#define EK_READ_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

/* Read file data of any layout into buf; [off, off + len) within i_size. */
int data_read(ek_inode *inode, void *buf, size_t len, uint64_t off,
	      ek_error *err);

#endif
