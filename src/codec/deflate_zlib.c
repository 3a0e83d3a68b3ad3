/* DEFLATE with zlib's inflate: the reference, and the streaming decoder
 * for prefixes (partial references). */
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>

#include "codec/codec.h"
#include "codec/ctxpool.h"

void *deflate_zlib_ctx_new(void)
{
	z_stream *z = calloc(1, sizeof(*z));

	if (z && inflateInit2(z, -15) != Z_OK) {
		free(z);
		z = NULL;
	}
	return z;
}

void deflate_zlib_ctx_free(void *c)
{
	if (c) {
		inflateEnd(c);
		free(c);
	}
}

int deflate_decode_zlib(struct ctxpool *pool, struct ek_dreq *r)
{
	z_stream *z = pool ? ctxpool_get(pool) : deflate_zlib_ctx_new();
	int ret, code = 0;

	if (!z)
		return dreq_fail(r, -ENOMEM, "deflate (zlib): out of memory");
	inflateReset(z);
	z->next_in = (Bytef *)r->in;
	z->avail_in = (uInt)r->in_len;
	z->next_out = r->out;
	z->avail_out = (uInt)r->out_len;
	ret = inflate(z, Z_FINISH);
	if (ret == Z_STREAM_END) {
		if (z->avail_out)
			code = dreq_fail(r, -EUCLEAN, "deflate (zlib): stream decodes to %zu bytes, expected %zu",
					 r->out_len - z->avail_out, r->out_len);
	} else if (ret == Z_BUF_ERROR && z->avail_out == 0) {
		if (!r->partial)
			code = dreq_fail(r, -EUCLEAN, "deflate (zlib): stream continues past %zu bytes",
					 r->out_len);
	} else {
		code = dreq_fail(r, -EUCLEAN, "deflate (zlib): malformed stream (%d%s%s)", ret,
				 z->msg ? ": " : "", z->msg ? z->msg : "");
	}
	if (pool)
		ctxpool_put(pool, z);
	else
		deflate_zlib_ctx_free(z);
	return code;
}
