/* The packed inode's data, where fragments live (fragment.c). */
#ifndef EK_READ_FRAGMENT_H
#define EK_READ_FRAGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

/* Once img->packed is loaded (and the image's cache made, if any): where
 * its decoded extents are kept. */
int fragment_setup(ek_image *img, ek_error *err);
/* Before img->packed is released. */
void fragment_teardown(ek_image *img);
/* Read bytes [off, off+len) of the packed inode's data. */
int fragment_read(ek_image *img, uint64_t off, void *buf, size_t len,
		  ek_error *err);

#endif
