/* Decompressed-cluster cache: placeholder until the read path lands. */
#include <errno.h>
#include <stdlib.h>

#include "read/cache.h"
#include "util/error.h"

struct ek_cache {
	size_t budget;
};

int ek_cache_create(size_t bytes, struct ek_cache **out, ek_error *err)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return ek_fail(err, -ENOMEM, "out of memory");
	(*out)->budget = bytes;
	return 0;
}

void ek_cache_destroy(struct ek_cache *c)
{
	free(c);
}
