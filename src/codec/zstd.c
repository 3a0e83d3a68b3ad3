/* Zstandard: one frame per physical cluster. */
#include <errno.h>
#include <stdlib.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader: parse the window size */
#include <zstd.h>
#include <zstd_errors.h>

#include "codec/codec.h"
#include "codec/ctxpool.h"

void *zstd_ctx_new(void)
{
	return ZSTD_createDCtx();
}

void zstd_ctx_free(void *c)
{
	ZSTD_freeDCtx(c);
}

/* The kernel sizes its window from the configuration record, 1 MiB at
 * most: a frame that needs more is unreadable there. */
static int check_window(const struct ek_dparams *p, struct ek_dreq *r)
{
	ZSTD_frameHeader h;
	size_t ret = ZSTD_getFrameHeader(&h, r->in, r->in_len);
	unsigned int limit = p->zstd_window_log_max ? p->zstd_window_log_max : 20;

	if (ret != 0 || h.frameType != ZSTD_frame)
		return dreq_fail(r, -EUCLEAN, "zstd: bad frame header");
	if (h.windowSize > (1ull << limit))
		return dreq_fail(r, -EUCLEAN, "zstd: frame window %llu exceeds %llu",
				 (unsigned long long)h.windowSize, 1ull << limit);
	return 0;
}

int zstd_decode(struct ctxpool *pool, const struct ek_dparams *p,
		struct ek_dreq *r)
{
	ZSTD_DCtx *d;
	int code = check_window(p, r);

	if (code)
		return code;
	d = ctxpool_get(pool);
	if (!d)
		return dreq_fail(r, -ENOMEM, "zstd: out of memory");
	if (!r->partial) {
		size_t n = ZSTD_decompressDCtx(d, r->out, r->out_len, r->in, r->in_len);

		if (ZSTD_isError(n))
			code = dreq_fail(r, -EUCLEAN, "zstd: %s", ZSTD_getErrorName(n));
		else if (n != r->out_len)
			code = dreq_fail(r, -EUCLEAN, "zstd: frame decodes to %zu bytes, expected %zu",
					 n, r->out_len);
	} else {
		ZSTD_inBuffer in = { r->in, r->in_len, 0 };
		ZSTD_outBuffer out = { r->out, r->out_len, 0 };

		ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
		while (out.pos < out.size) {
			size_t n = ZSTD_decompressStream(d, &out, &in);

			if (ZSTD_isError(n)) {
				code = dreq_fail(r, -EUCLEAN, "zstd: %s", ZSTD_getErrorName(n));
				break;
			}
			if (n == 0 || (in.pos == in.size && out.pos < out.size)) {
				if (out.pos < out.size)
					code = dreq_fail(r, -EUCLEAN,
							 "zstd: frame ends after %zu of %zu bytes",
							 out.pos, out.size);
				break;
			}
		}
	}
	ctxpool_put(pool, d);
	return code;
}

struct zstd_encoder {
	ZSTD_CCtx *c;
};

struct zstd_encoder *zstd_encoder_new(int level, unsigned int window_log)
{
	struct zstd_encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->c = ZSTD_createCCtx();
	if (!e->c ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(e->c, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(e->c, ZSTD_c_windowLog, (int)window_log)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(e->c, ZSTD_c_checksumFlag, 0))) {
		ZSTD_freeCCtx(e->c);
		free(e);
		return NULL;
	}
	return e;
}

void zstd_encoder_free(struct zstd_encoder *e)
{
	if (e) {
		ZSTD_freeCCtx(e->c);
		free(e);
	}
}

int zstd_encoder_compress(void *ctx, const uint8_t *in, size_t in_len,
			  uint8_t *out, size_t out_cap, size_t *out_len)
{
	struct zstd_encoder *e = ctx;
	size_t n = ZSTD_compress2(e->c, out, out_cap, in, in_len);

	if (ZSTD_isError(n))
		return ZSTD_getErrorCode(n) == ZSTD_error_dstSize_tooSmall ? -ENOSPC : -ENOMEM;
	*out_len = n;
	return 0;
}
