/* DEFLATE with zlib's inflate: the reference, and the streaming decoder
 * for prefixes (partial references). */
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "codec/codec.h"

#define WHO "deflate (zlib)"

static void *zlib_ctx_new(void)
{
	z_stream *z = calloc(1, sizeof(*z));

	if (z && inflateInit2(z, -15) != Z_OK) {
		free(z);
		z = NULL;
	}
	return z;
}

static void zlib_ctx_free(void *c)
{
	if (c) {
		inflateEnd(c);
		free(c);
	}
}

static int zlib_decode(void *ctx, const struct dparams *p, struct dreq *r)
{
	z_stream *z = ctx;
	int ret;

	(void)p;
	inflateReset(z);
	z->next_in = (Bytef *)r->in;
	z->avail_in = (uInt)r->in_len;
	z->next_out = r->out;
	z->avail_out = (uInt)r->out_len;
	ret = inflate(z, Z_FINISH);
	if (ret == Z_STREAM_END) {
		if (z->avail_out)
			return dreq_fail(r, -EUCLEAN, WHO ": stream decodes to %zu bytes, expected %zu",
					 r->out_len - z->avail_out, r->out_len);
	} else if (ret == Z_BUF_ERROR && z->avail_out == 0) {
		if (!r->partial)
			return dreq_fail(r, -EUCLEAN, WHO ": stream continues past %zu bytes",
					 r->out_len);
	} else {
		return dreq_fail(r, -EUCLEAN, WHO ": malformed stream (%d%s%s)", ret,
				 z->msg ? ": " : "", z->msg ? z->msg : "");
	}
	return 0;
}

const struct decoder zlib_decoder = {
	.name = "zlib",
	.who = WHO,
	.ctx_new = zlib_ctx_new,
	.ctx_free = zlib_ctx_free,
	.decode = zlib_decode,
};

int zlib_decode_once(struct dreq *r)
{
	z_stream *z = zlib_ctx_new();
	int ret;

	if (!z)
		return dreq_fail(r, -ENOMEM, WHO ": out of memory");
	ret = zlib_decode(z, NULL, r);
	zlib_ctx_free(z);
	return ret;
}
