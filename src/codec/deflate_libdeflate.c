/* DEFLATE with libdeflate: the fastest decoder here. */
#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>

#include "codec/codec.h"

#define WHO "deflate (libdeflate)"

static void *libdeflate_ctx_new(void)
{
	return libdeflate_alloc_decompressor();
}

static void libdeflate_ctx_free(void *c)
{
	libdeflate_free_decompressor(c);
}

static int libdeflate_decode(void *ctx, const struct dparams *p, struct dreq *r)
{
	enum libdeflate_result res;
	size_t got = 0;

	(void)p;
	/* libdeflate cannot stop early: prefixes go to a streaming decoder. */
	if (r->partial)
		return zlib_decode_once(r);
	res = libdeflate_deflate_decompress(ctx, r->in, r->in_len, r->out,
					    r->out_len, &got);
	if (res == LIBDEFLATE_INSUFFICIENT_SPACE)
		return dreq_fail(r, -EUCLEAN, WHO ": stream decodes to more than %zu bytes",
				 r->out_len);
	if (res != LIBDEFLATE_SUCCESS)
		return dreq_fail(r, -EUCLEAN, WHO ": malformed stream (%d)", (int)res);
	if (got != r->out_len)
		return dreq_fail(r, -EUCLEAN, WHO ": stream decodes to %zu bytes, expected %zu",
				 got, r->out_len);
	return 0;
}

const struct decoder libdeflate_decoder = {
	.name = "libdeflate",
	.who = WHO,
	.ctx_new = libdeflate_ctx_new,
	.ctx_free = libdeflate_ctx_free,
	.decode = libdeflate_decode,
};
