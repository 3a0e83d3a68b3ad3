/* The packed inode's data, where fragments live (fragment.c). */
#ifndef EK_READ_FRAGMENT_H
#define EK_READ_FRAGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "read/internal.h"

struct fragment_cache;

int fragment_cache_create(ek_image *img, ek_error *err);
void fragment_cache_free(struct fragment_cache *fc);
/* Read bytes [off, off+len) of the packed inode's data. */
int fragment_read(ek_image *img, uint64_t off, void *buf, size_t len,
		  ek_error *err);

#endif
