/* DEFLATE with libdeflate: the fastest decoder here, and the encoder. */
#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "codec/ctxpool.h"

void *deflate_libdeflate_ctx_new(void)
{
	return libdeflate_alloc_decompressor();
}

void deflate_libdeflate_ctx_free(void *c)
{
	libdeflate_free_decompressor(c);
}

int deflate_decode_libdeflate(struct ctxpool *pool, struct ek_dreq *r)
{
	struct libdeflate_decompressor *d;
	enum libdeflate_result res;
	size_t got = 0;

	/* libdeflate cannot stop early: prefixes go to a streaming decoder. */
	if (r->partial)
		return deflate_decode_zlib(NULL, r);
	d = ctxpool_get(pool);
	if (!d)
		return dreq_fail(r, -ENOMEM, "deflate (libdeflate): out of memory");
	res = libdeflate_deflate_decompress(d, r->in, r->in_len, r->out,
					    r->out_len, &got);
	ctxpool_put(pool, d);
	if (res == LIBDEFLATE_INSUFFICIENT_SPACE)
		return dreq_fail(r, -EUCLEAN, "deflate (libdeflate): stream decodes to more than %zu bytes",
				 r->out_len);
	if (res != LIBDEFLATE_SUCCESS)
		return dreq_fail(r, -EUCLEAN, "deflate (libdeflate): malformed stream (%d)",
				 (int)res);
	if (got != r->out_len)
		return dreq_fail(r, -EUCLEAN, "deflate (libdeflate): stream decodes to %zu bytes, expected %zu",
				 got, r->out_len);
	return 0;
}

struct deflate_encoder {
	struct libdeflate_compressor *c;
};

struct deflate_encoder *deflate_encoder_new(int level)
{
	struct deflate_encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->c = libdeflate_alloc_compressor(level);
	if (!e->c) {
		free(e);
		return NULL;
	}
	return e;
}

void deflate_encoder_free(struct deflate_encoder *e)
{
	if (e) {
		libdeflate_free_compressor(e->c);
		free(e);
	}
}

int deflate_encoder_compress(void *ctx, const uint8_t *in, size_t in_len,
			     uint8_t *out, size_t out_cap, size_t *out_len)
{
	struct deflate_encoder *e = ctx;
	size_t n = libdeflate_deflate_compress(e->c, in, in_len, out, out_cap);

	if (!n)
		return -ENOSPC;
	/* A non-final stored block starts with a zero byte, which 0padding
	 * would take for padding; its five unused bits may be anything. */
	if (out[0] == 0)
		out[0] = 0x08;
	*out_len = n;
	return 0;
}
