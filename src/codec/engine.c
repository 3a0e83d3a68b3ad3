/* Decompression engines: placeholder until compressed layouts land. */
#include <errno.h>
#include <stdlib.h>

#include "codec/engine.h"
#include "util/error.h"

struct ek_codecs {
	int unused;
};

int ek_codecs_create(const char *deflate_engine, struct ek_codecs **out,
		     ek_error *err)
{
	(void)deflate_engine;
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : ek_fail(err, -ENOMEM, "out of memory");
}

void ek_codecs_destroy(struct ek_codecs *c)
{
	free(c);
}
