/* LZ4: raw blocks (no frame).  lz4 and lz4hc share the decoder. */
#include <errno.h>
#include <limits.h>
#include <lz4.h>
#include <lz4hc.h>
#include <stdlib.h>

#include "codec/codec.h"

int lz4_decode(struct ek_dreq *r)
{
	int n;

	if (r->in_len > INT_MAX || r->out_len > INT_MAX)
		return dreq_fail(r, -EUCLEAN, "lz4: lengths out of range");
	if (r->partial)
		n = LZ4_decompress_safe_partial((const char *)r->in, (char *)r->out,
						(int)r->in_len, (int)r->out_len,
						(int)r->out_len);
	else
		n = LZ4_decompress_safe((const char *)r->in, (char *)r->out,
					(int)r->in_len, (int)r->out_len);
	if (n < 0)
		return dreq_fail(r, -EUCLEAN, "lz4: malformed stream (error %d)", n);
	if ((size_t)n != r->out_len)
		return dreq_fail(r, -EUCLEAN, "lz4: stream decodes to %d bytes, expected %zu",
				 n, r->out_len);
	return 0;
}

/*
 * lz4hc keeps one stream per encoder and starts each extent with a fast
 * reset: the previous extent's table entries fall below the new window
 * and are never matched, so the output is that of a fresh state, without
 * clearing 256 KiB of tables for every (often 4 KiB) extent.
 */
struct lz4_encoder {
	bool hc;
	int level;
	LZ4_streamHC_t *stream;
};

struct lz4_encoder *lz4_encoder_new(bool hc, int level)
{
	struct lz4_encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->hc = hc;
	e->level = level;
	if (hc) {
		e->stream = LZ4_createStreamHC();
		if (!e->stream) {
			free(e);
			return NULL;
		}
	}
	return e;
}

void lz4_encoder_free(struct lz4_encoder *e)
{
	if (e) {
		if (e->stream)
			LZ4_freeStreamHC(e->stream);
		free(e);
	}
}

int lz4_encoder_fill(struct lz4_encoder *e, const uint8_t *in, size_t in_len,
		     uint8_t *out, size_t out_cap, size_t *consumed,
		     size_t *out_len)
{
	int src = in_len > LZ4_MAX_INPUT_SIZE ? LZ4_MAX_INPUT_SIZE : (int)in_len;
	int cap = out_cap > INT_MAX ? INT_MAX : (int)out_cap;
	int n;

	if (e->hc) {
		LZ4_resetStreamHC_fast(e->stream, e->level);
		n = LZ4_compress_HC_continue_destSize(e->stream, (const char *)in,
						      (char *)out, &src, cap);
	} else
		n = LZ4_compress_destSize((const char *)in, (char *)out, &src, cap);
	if (n <= 0 || src <= 0)
		return -ENOSPC;
	*consumed = (size_t)src;
	*out_len = (size_t)n;
	return 0;
}
