/* Decompressed-cluster cache (filled in by the read-path work). */
#ifndef EK_READ_CACHE_H
#define EK_READ_CACHE_H

#include <stddef.h>

#include "erofskit/erofskit.h"

struct ek_cache;

int ek_cache_create(size_t bytes, struct ek_cache **out, ek_error *err);
void ek_cache_destroy(struct ek_cache *c);

#endif
