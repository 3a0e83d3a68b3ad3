/* DEFLATE with libdeflate: the fastest decoder here, and the encoder. */
#include <errno.h>
#include <libdeflate.h>
#include <stdlib.h>

#include "codec/codec.h"
#include "codec/fixed_output.h"

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

struct deflate_encoder {
	struct libdeflate_compressor *c;
	struct fixed_output fit;
	uint32_t granule;
};

static void deflate_configure(struct encoder_params *p, uint32_t pcluster,
			      struct fmt_zconfig *cfg)
{
	(void)p;
	(void)pcluster;
	cfg->deflate_windowbits = 15;
}

static void *deflate_create(const struct encoder_params *p)
{
	struct deflate_encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->c = libdeflate_alloc_compressor(p->level);
	if (!e->c) {
		free(e);
		return NULL;
	}
	e->granule = p->block_size / 8;
	return e;
}

static void deflate_destroy(void *state)
{
	struct deflate_encoder *e = state;

	if (e) {
		libdeflate_free_compressor(e->c);
		fixed_output_free(&e->fit);
		free(e);
	}
}

static int deflate_whole(void *ctx, const uint8_t *in, size_t in_len,
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

static int deflate_fill(void *state, const uint8_t *in, size_t in_len,
			uint8_t *out, size_t out_cap, size_t *consumed,
			size_t *out_len, size_t *hint)
{
	struct deflate_encoder *e = state;

	return fixed_output_fill(&e->fit, deflate_whole, e,
				 libdeflate_deflate_compress_bound(NULL, in_len),
				 in, in_len, out, out_cap, e->granule, consumed,
				 out_len, hint);
}

const struct encoder_ops deflate_encoder_ops = {
	.configure = deflate_configure,
	.create = deflate_create,
	.destroy = deflate_destroy,
	.fill = deflate_fill,
};
