/*
 * Large buffers backed by transparent huge pages where the kernel allows
 * them (madvise mode, as Debian ships it): a 16 MiB buffer first written
 * costs 8 page faults instead of 4,096, and in a VM a fault costs some
 * 4 us.  For buffers that live long or are reused; freed with free().
 */
#ifndef EK_UTIL_HUGEBUF_H
#define EK_UTIL_HUGEBUF_H

#include <stddef.h>

/* size bytes, 2 MiB-aligned when size is at least that; NULL when out of
 * memory. */
void *hugebuf_alloc(size_t size);

#endif
